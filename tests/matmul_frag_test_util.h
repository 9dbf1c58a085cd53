/* matmul_frag_test_util.h - shared by the tests of the matmul's op types
 * that are warp- or wavefront-wide instructions (test_matmul_mma.c,
 * test_matmul_mfma.c): 16-bit operands, the fusion A @ B (+ bias, relu),
 * its run on OpenCL against a plain C loop, and a refusal's message. */
#ifndef MATMUL_FRAG_TEST_UTIL_H
#define MATMUL_FRAG_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tilec/tilec.h"
#include "matmul_test_util.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

typedef struct mcase {
  int64_t m, n, k;
  tc_dtype t;
  int epilogue; /* 1: relu(A @ B + bias) */
  tc_matmul_tiles tiles;
} mcase;

/* y = A @ B (+ bias, relu); bias_out the bias input or NULL */
static tc_tensor *build(tc_fusion *f, const mcase *c, tc_tensor **a, tc_tensor **b,
                        tc_tensor **bias) {
  int64_t sa[2] = {c->m, c->k}, sb[2] = {c->k, c->n};
  *a = tc_input(f, c->t, 2, sa), *b = tc_input(f, c->t, 2, sb);
  tc_tensor *y = tc_matmul(f, *a, *b);
  *bias = NULL;
  if (c->epilogue && y) {
    bool is_new[2] = {true, false};
    *bias = tc_input(f, TC_F32, 1, &c->n);
    y = tc_unary(f, TC_RELU, tc_binary(f, TC_ADD, y, tc_broadcast(f, *bias, 2, is_new)));
  }
  return y;
}

/* Runs k (the case's kernel for OpenCL) against the plain C loop and
 * returns the mismatches (up to 4; -1: not run); they are failures unless
 * fault_wanted (an injected fault that must show). */
static int frag_run(tc_kernel *k, const mcase *c, int fault_wanted, const char *desc) {
  int64_t m = c->m, n = c->n, kk = c->k;
  double *va = malloc((size_t)(m * kk) * sizeof(double)), *vb = malloc((size_t)(kk * n) * sizeof(double));
  double bias[512];
  uint16_t *a = values(c->t, m * kk, va), *b = values(c->t, kk * n, vb);
  float fbias[512];
  for (int64_t j = 0; j < n && c->epilogue; j++)
    fbias[j] = (float)((int64_t)(rnd() % 41) - 20) / 8.0f, bias[j] = fbias[j];
  float *out = malloc((size_t)(m * n) * sizeof(float));
  memset(out, 0xff, (size_t)(m * n) * sizeof(float)); /* NaNs: an element never written shows */
  void *args[4] = {a, b, c->epilogue ? (void *)fbias : (void *)out, out};
  tc_status st = tc_kernel_run(k, args, NULL, NULL);
  int bad = -1;
  if (st == TC_ERR_NO_DEVICE) {
    printf("  skip run: %s\n", tc_kernel_error(k));
  } else {
    TC_CHECK(st == TC_OK, "%s: run: %s", desc, tc_kernel_error(k));
    bad = matmul_mismatches(desc, out, va, vb, c->epilogue ? bias : NULL, m, n, kk, fault_wanted);
  }
  free(va), free(vb), free(a), free(b), free(out);
  return bad;
}

static void expect_refusal(tc_dtype t, int64_t m, int64_t n, int64_t k, tc_matmul_tiles tl,
                           tc_target target, const char *words) {
  tc_fusion *f = tc_fusion_new();
  mcase c = {m, n, k, t, 0, tl};
  tc_tensor *a, *b, *bias;
  tc_tensor *y = build(f, &c, &a, &b, &bias);
  OK(f, tc_add_output(f, y));
  tc_status st = tc_schedule_matmul(f, target, NULL, &tl);
  TC_CHECK(st != TC_OK, "accepted; wanted \"%s\"", words);
  TC_CHECK(strstr(tc_fusion_error(f), words) != NULL, "message \"%s\" lacks \"%s\"",
           tc_fusion_error(f), words);
  tc_fusion_free(f);
}

/* The case in words, into desc (n bytes). */
static void frag_desc(const mcase *c, char *desc, size_t n) {
  static const char *const macro[4] = {"fma", "mma", "mfma 32x32x8", "mfma 16x16x16"};
  snprintf(desc, n, "%lldx%lldx%lld %s%s tiles %lldx%lldx%lld/%lldx%lld %s", (long long)c->m,
           (long long)c->n, (long long)c->k, tc_dtype_name(c->t), c->epilogue ? " bias,relu" : "",
           (long long)c->tiles.bm, (long long)c->tiles.bn, (long long)c->tiles.bk,
           (long long)c->tiles.tm, (long long)c->tiles.tn,
           c->tiles.bm ? macro[c->tiles.macro & 3] : "(the scheduler's)");
}

/* The case's fusion (*fp) scheduled with its tiles (tiles.bm 0: by
 * tc_schedule_auto for HIP gfx90a, the same schedule) and compiled for
 * OpenCL under the kernel name `name` (its own cache key under a test
 * hook); checks that the schedule note holds `note`.  NULL after a failed
 * check (desc names the case). */
static tc_kernel *frag_cl_kernel(const mcase *c, const char *name, const char *note,
                                 const char *desc, tc_fusion **fp) {
  tc_fusion *f = *fp = tc_fusion_new();
  tc_tensor *ta, *tb, *tbias;
  tc_tensor *y = build(f, c, &ta, &tb, &tbias);
  if (!y) {
    TC_CHECK(0, "%s: %s", desc, tc_fusion_error(f));
    return NULL;
  }
  OK(f, tc_add_output(f, y));
  if (c->tiles.bm) OK(f, tc_schedule_matmul(f, TC_TARGET_OPENCL, NULL, &c->tiles));
  else OK(f, tc_schedule_auto(f, TC_TARGET_HIP, "gfx90a"));
  TC_CHECK(strstr(tc_fusion_schedule_note(f), note) != NULL, "%s: note %s", desc,
           tc_fusion_schedule_note(f));
  tc_compile_options opt = {TC_TARGET_OPENCL, NULL, name};
  tc_status st;
  tc_kernel *k = tc_compile(f, &opt, &st);
  TC_CHECK(k != NULL, "%s: %s", desc, tc_fusion_error(f));
  return k;
}

/* The case's fusion (*fp) scheduled for target and arch with its tiles,
 * and compiled for them (NULL: the message on *fp). */
static tc_kernel *frag_kernel(const mcase *c, tc_target target, const char *arch, tc_fusion **fp) {
  tc_fusion *f = *fp = tc_fusion_new();
  tc_tensor *a, *b, *bias;
  OK(f, tc_add_output(f, build(f, c, &a, &b, &bias)));
  OK(f, tc_schedule_matmul(f, target, arch, &c->tiles));
  tc_compile_options o = {target, arch, "mm"};
  tc_status st;
  return tc_compile(f, &o, &st);
}

#endif
