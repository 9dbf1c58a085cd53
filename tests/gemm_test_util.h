/* gemm_test_util.h - what tests/test_hip.c, tests/test_mma.c and
 * tests/test_wgmma.c share: the GEMM case, deterministic values, operands
 * padded with NaN sentinels, C padded with a sentinel, parameters +
 * generation, a launch on OpenCL and the plain C reference with its
 * comparison.
 *
 * Per file: define GEMM_TEST_SEED (the first state of the value generator)
 * before including this; describe the kernels with a gemm_harness (the
 * generated kernel's name, how a case without a cfg gets its params, how
 * the cases are named); set gemm_ab_extra for tests that need other row
 * padding of A and B. */
#ifndef TC_GEMM_TEST_UTIL_H
#define TC_GEMM_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/gemm.h"
#include "ops/gemm_gen.h"
#include "runtime/runtime.h"
#include "test.h"
#include "device_test_util.h"

#ifndef GEMM_TEST_SEED
#error "define GEMM_TEST_SEED before including gemm_test_util.h"
#endif

#define GEMM_U __attribute__((unused))

typedef struct mcase {
  const char *cfg; /* a perf-config string, or NULL: the harness's default params */
  int64_t g, m, n, k;
  int a_trans, b_trans; /* A stored [G][M][K], B stored [G][N][K] */
  tc_dtype ab, c;
  int accumulate;
  float alpha;
} mcase;

/* ---- values ------------------------------------------------------------- */

static uint32_t gemm_rng = GEMM_TEST_SEED;
static GEMM_U float frand(void) {
  gemm_rng = gemm_rng * 1664525u + 1013904223u;
  return (float)((gemm_rng >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static GEMM_U void put(void *buf, tc_dtype t, int64_t i, float v) {
  if (t == TC_F32) ((float *)buf)[i] = v;
  else if (t == TC_F16) ((uint16_t *)buf)[i] = tc_f32_to_f16(v);
  else ((uint16_t *)buf)[i] = tc_f32_to_bf16(v);
}

static GEMM_U float get(const void *buf, tc_dtype t, int64_t i) {
  if (t == TC_F32) return ((const float *)buf)[i];
  if (t == TC_F16) return tc_f16_to_f32(((const uint16_t *)buf)[i]);
  return tc_bf16_to_f32(((const uint16_t *)buf)[i]);
}

/* ---- problems ----------------------------------------------------------- */

#define GEMM_EXTRA 3 /* NaN after every row of A and B, a sentinel after C's */
/* elements after every row of A and B (NaN): GEMM_EXTRA, or 8 in test_mma's
 * cp.async tests, which need rows whose starts are aligned vectors */
static int64_t gemm_ab_extra = GEMM_EXTRA;
/* elements after every row of C (the sentinel): GEMM_EXTRA, or 8 in
 * test_gemm_tma's tests, whose tensor maps need 16-byte row strides */
static int64_t gemm_c_extra = GEMM_EXTRA;

/* An operand [G][K][X]: stored [G][K][X + gemm_ab_extra] or (trans)
 * [G][X][K + gemm_ab_extra], NaN outside the tensor. */
static GEMM_U tc_view *operand(int64_t g, int64_t k, int64_t x, int trans, tc_dtype t, void **buf,
                               int64_t *elems, int64_t st[3]) {
  int64_t ext[3] = {g, k, x};
  int64_t rows = trans ? x : k, ld = (trans ? k : x) + gemm_ab_extra;
  st[0] = rows * ld;
  st[1] = trans ? 1 : ld;
  st[2] = trans ? ld : 1;
  *elems = g * rows * ld;
  *buf = malloc((size_t)*elems * tc_dtype_size(t));
  for (int64_t i = 0; i < *elems; i++) put(*buf, t, i, NAN);
  for (int64_t a = 0; a < g; a++)
    for (int64_t b = 0; b < k; b++)
      for (int64_t c = 0; c < x; c++) put(*buf, t, a * st[0] + b * st[1] + c * st[2], frand());
  return tc_view_new(3, ext, st, NULL);
}

typedef struct problem {
  tc_gemm_problem pb;
  void *buf[3], *c0; /* A, B, C; C as it was before the run */
  int64_t n[3], sa[3], sb[3];
} problem;

/* A case's problem: A and B from operand(), C [G][M][N + GEMM_EXTRA] with
 * random values and a sentinel in the padding. */
static GEMM_U void problem_make(const mcase *tc, problem *P) {
  tc_view *va = operand(tc->g, tc->k, tc->m, tc->a_trans, tc->ab, &P->buf[0], &P->n[0], P->sa);
  tc_view *vb = operand(tc->g, tc->k, tc->n, tc->b_trans, tc->ab, &P->buf[1], &P->n[1], P->sb);
  int64_t ldc = tc->n + gemm_c_extra;
  int64_t cext[3] = {tc->g, tc->m, tc->n}, cst[3] = {tc->m * ldc, ldc, 1};
  tc_view *vc = tc_view_new(3, cext, cst, NULL);
  P->n[2] = tc->g * tc->m * ldc;
  size_t cb = (size_t)P->n[2] * tc_dtype_size(tc->c);
  P->buf[2] = malloc(cb);
  for (int64_t i = 0; i < P->n[2]; i++) put(P->buf[2], tc->c, i, 1234.5f);
  for (int64_t g = 0; g < tc->g; g++)
    for (int64_t m = 0; m < tc->m; m++)
      for (int64_t x = 0; x < tc->n; x++) put(P->buf[2], tc->c, g * cst[0] + m * ldc + x, frand());
  P->c0 = malloc(cb);
  memcpy(P->c0, P->buf[2], cb);
  tc_gemm_problem p = {va, vb, vc, tc->ab, tc->ab, tc->c, tc->accumulate, tc->alpha};
  P->pb = p;
}

static GEMM_U void problem_free(problem *P) {
  for (int i = 0; i < 3; i++) free(P->buf[i]);
  free(P->c0);
  tc_view_free((tc_view *)P->pb.a);
  tc_view_free((tc_view *)P->pb.b);
  tc_view_free((tc_view *)P->pb.c);
}

/* ---- parameters and kernels --------------------------------------------- */

typedef struct gemm_harness {
  const char *kernel; /* the generated kernel's name */
  /* the params of a case whose cfg is NULL (NULL: every case has a cfg) */
  int (*default_params)(const tc_gemm_shape *s, tc_gemm_params *p, tc_str *err);
  int format_cfg; /* name a case by its formatted params, not by its cfg */
} gemm_harness;

/* Parses and derives the case's parameters (or takes the harness's
 * default) and generates its kernel for target; cfg gets the case's name;
 * 1 on success. */
static GEMM_U int generate(const gemm_harness *h, const mcase *tc, const problem *P,
                           tc_target target, tc_gemm_params *p, tc_gemm_kernel *k, char *cfg,
                           size_t cap) {
  TC_STR_LOCAL(err);
  tc_gemm_shape s = tc_gemm_problem_shape(&P->pb);
  snprintf(cfg, cap, "%s", h->format_cfg || !tc->cfg ? "?" : tc->cfg);
  int ok = tc->cfg ? tc_gemm_params_parse(tc->cfg, p, &err) == 0 &&
                         tc_gemm_params_derive(p, &s, &err) == 0
                   : h->default_params && h->default_params(&s, p, &err) == 0;
  TC_CHECK(ok, "%s: %s", tc->cfg ? tc->cfg : "default", tc_str_cstr(&err));
  if (!ok) return 0;
  if (h->format_cfg) tc_gemm_params_format(p, cfg, cap);
  tc_status st = tc_gemm_generate(&P->pb, p, target, h->kernel, k, &err);
  TC_CHECK(st == TC_OK, "%s: generate: %s", cfg, tc_str_cstr(&err));
  return st == TC_OK;
}

/* Makes the case's problem (free it with problem_free, and k with
 * tc_gemm_kernel_free, whatever this returns) and generates its kernel for
 * target, as generate does; 1 on success. */
static GEMM_U int gemm_make(const gemm_harness *h, const mcase *tc, tc_target target, problem *P,
                            tc_gemm_params *p, tc_gemm_kernel *k, char *cfg, size_t cap) {
  problem_make(tc, P);
  memset(k, 0, sizeof *k);
  return generate(h, tc, P, target, p, k, cfg, cap);
}

/* Runs a generated kernel on OpenCL over the problem's buffers; 1 on
 * success. */
static GEMM_U int gemm_launch_cl(tc_cl *cl, const mcase *tc, problem *P, const tc_gemm_kernel *k,
                                 const char *cfg) {
  size_t esz = tc_dtype_size(tc->ab);
  tc_rt_buffer bufs[3] = {{P->buf[0], (size_t)P->n[0] * esz, 0},
                          {P->buf[1], (size_t)P->n[1] * esz, 0},
                          {P->buf[2], (size_t)P->n[2] * tc_dtype_size(tc->c), 1}};
  tc_launch L;
  tc_gemm_kernel_launch_config(k, &L);
  tc_str e;
  tc_str_init(&e);
  tc_status st = tc_cl_run(cl, k->source, k->name, bufs, 3, &L, NULL, &e);
  TC_CHECK(st == TC_OK, "%s: run: %s", cfg, tc_str_cstr(&e));
  tc_str_free(&e);
  return st == TC_OK;
}

/* ---- reference ---------------------------------------------------------- */

/* The problem's C against a plain C GEMM over A, B and the C before the
 * run; the number of wrong elements of C (or written outside C); the first
 * few fail a check when report. */
static GEMM_U int64_t gemm_verify(const mcase *tc, const problem *P, const char *cfg, int report) {
  int64_t bad = 0;
  int64_t ldc = tc->n + gemm_c_extra;
  for (int64_t g = 0; g < tc->g; g++)
    for (int64_t m = 0; m < tc->m; m++) {
      for (int64_t x = 0; x < tc->n; x++) {
        double acc = 0, mag = 0;
        for (int64_t kk = 0; kk < tc->k; kk++) {
          double a = get(P->buf[0], tc->ab, g * P->sa[0] + kk * P->sa[1] + m * P->sa[2]);
          double b = get(P->buf[1], tc->ab, g * P->sb[0] + kk * P->sb[1] + x * P->sb[2]);
          acc += a * b, mag += fabs(a * b);
        }
        int64_t ic = g * tc->m * ldc + m * ldc + x;
        double want = tc->alpha * acc + (tc->accumulate ? get(P->c0, tc->c, ic) : 0.0);
        double got = get(P->buf[2], tc->c, ic);
        double rel = tc->c == TC_F32 ? 1e-6 : tc->c == TC_F16 ? 1e-3 : 8e-3;
        double tol = 1e-5 * (1 + mag) + rel * fabs(want) + 1e-6;
        if (!(fabs(got - want) <= tol)) {
          if (report && bad < 4)
            TC_CHECK(0, "%s G%lld M%lld N%lld K%lld: C[%lld][%lld][%lld] = %g, expected %g", cfg,
                     (long long)tc->g, (long long)tc->m, (long long)tc->n, (long long)tc->k,
                     (long long)g, (long long)m, (long long)x, got, want);
          bad++;
        }
      }
      for (int64_t x = tc->n; x < ldc; x++) {
        int64_t ic = g * tc->m * ldc + m * ldc + x;
        if (get(P->buf[2], tc->c, ic) != get(P->c0, tc->c, ic)) {
          if (report && bad < 4) TC_CHECK(0, "%s: store outside C at %lld", cfg, (long long)ic);
          bad++;
        }
      }
    }
  return bad;
}

/* Generates a case's kernel for OpenCL, lets check() look at it (the
 * file's own checks of the source, block and shared memory), runs it and
 * verifies C; the number of wrong elements of C (or written outside C), -1
 * when it could not run (a check failed). */
static GEMM_U int64_t gemm_run_cl(tc_cl *cl, const gemm_harness *h, const mcase *tc, int report,
                                  void (*check)(const tc_gemm_kernel *k, const tc_gemm_params *p,
                                                const char *cfg)) {
  problem P;
  tc_gemm_params p;
  tc_gemm_kernel k;
  char cfg[64];
  int64_t bad = -1;
  int ok = gemm_make(h, tc, TC_TARGET_OPENCL, &P, &p, &k, cfg, sizeof cfg);
  if (ok) {
    if (check) check(&k, &p, cfg);
    ok = gemm_launch_cl(cl, tc, &P, &k, cfg);
  }
  if (ok) bad = gemm_verify(tc, &P, cfg, report);
  tc_gemm_kernel_free(&k);
  problem_free(&P);
  return bad;
}

#endif
