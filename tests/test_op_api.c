/* test_op_api.c - the public convolution and GEMM API of tilec.h
 * (tc_conv2d_*, tc_gemm_*, src/ops/api.c), through the header only:
 * descriptions and their errors, planning with the heuristic, a given perf
 * config and one that breaks a rule, running and verifying all three
 * directions (with asymmetric padding, stride, dilation, groups and NHWC),
 * each kernel's GEMM and shared memory, the timed run and the full
 * verify result, tuning with the progress callback, the perf DB found
 * again by a new object (and shared with `tilec conv2d`'s keys), the
 * kernel accessors, and the same for GEMM.  Every perf DB lives in a temporary directory. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "tilec/tilec.h"

static char tmpdir[256];
static char dbpath[512];
static int have_device = -1;

static int device_ok(void) {
  if (have_device < 0) {
    /* a tiny GEMM run tells whether an OpenCL device is there */
    tc_gemm_desc d;
    tc_gemm_desc_init(&d);
    tc_op_options o = {TC_TARGET_OPENCL, NULL, NULL, ""};
    tc_gemm *g = tc_gemm_new(&d, &o);
    float a = 2, b = 3, c = 0;
    have_device = tc_gemm_run(g, &a, &b, &c, NULL) == TC_OK && c == 6;
    if (!have_device) printf("  (no OpenCL device: %s)\n", tc_gemm_error(g));
    tc_gemm_free(g);
  }
  return have_device;
}

static void fill(float *v, int64_t n, uint64_t seed) {
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    v[i] = (float)((double)(seed >> 40) / (double)(1 << 24) * 2.0 - 1.0);
  }
}

static tc_op_options opts(const char *db) {
  tc_op_options o;
  memset(&o, 0, sizeof o);
  o.perfdb = db;
  return o;
}

/* ---- descriptions ------------------------------------------------------------ */

static void test_desc_errors(void) {
  tc_conv2d_desc d;
  tc_conv2d_desc_init(&d);
  TC_CHECK_EQ_INT(d.direction, TC_CONV2D_FORWARD);
  TC_CHECK_EQ_INT(d.n * d.c * d.h * d.w * d.k * d.y * d.x, 1);
  TC_CHECK(d.in_layout == NULL && d.dtype == TC_F32, "defaults");
  d.c = 6, d.groups = 4;
  tc_op_options o = opts("");
  tc_conv2d *c = tc_conv2d_new(&d, &o);
  TC_REQUIRE(c != NULL, "tc_conv2d_new never fails");
  TC_CHECK_STR(tc_conv2d_error(c), "");
  TC_CHECK_EQ_INT(tc_conv2d_plan(c, NULL), TC_ERR_ARGUMENT);
  TC_CHECK(strstr(tc_conv2d_error(c), "tc_conv2d_plan: input channels (-c 6) are not divisible") != NULL,
           "%s", tc_conv2d_error(c));
  TC_CHECK_EQ_INT(tc_conv2d_elems(c, TC_CONV2D_INPUT), -1);
  float x = 0;
  TC_CHECK_EQ_INT(tc_conv2d_run(c, &x, &x, &x, NULL), TC_ERR_ARGUMENT);
  TC_CHECK_EQ_INT(tc_conv2d_num_kernels(c), 0);
  TC_CHECK(tc_conv2d_kernel_source(c, 0) == NULL, "no kernel before a plan");
  TC_CHECK_STR(tc_conv2d_perf_config(c), "");
  TC_CHECK_STR(tc_conv2d_perf_config_source(c), "");
  tc_conv2d_free(c);

  /* too large a padded filter; a bad layout; a bad direction */
  tc_conv2d_desc_init(&d);
  d.h = d.w = 2, d.y = d.x = 5;
  c = tc_conv2d_new(&d, &o);
  int64_t ho = 0, wo = 0;
  TC_CHECK_EQ_INT(tc_conv2d_output_size(c, &ho, &wo), TC_ERR_ARGUMENT);
  TC_CHECK(strstr(tc_conv2d_error(c), "smaller than the dilated filter") != NULL, "%s",
           tc_conv2d_error(c));
  tc_conv2d_free(c);
  tc_conv2d_desc_init(&d);
  d.in_layout = "NCWX";
  c = tc_conv2d_new(&d, &o);
  TC_CHECK_EQ_INT(tc_conv2d_plan(c, NULL), TC_ERR_ARGUMENT);
  TC_CHECK(strstr(tc_conv2d_error(c), "bad input layout 'NCWX'") != NULL, "%s", tc_conv2d_error(c));
  tc_conv2d_free(c);
  d.in_layout = "NCHW_TOO_LONG";
  c = tc_conv2d_new(&d, &o);
  TC_CHECK_EQ_INT(tc_conv2d_plan(c, NULL), TC_ERR_ARGUMENT);
  TC_CHECK(strstr(tc_conv2d_error(c), "bad input layout") != NULL, "%s", tc_conv2d_error(c));
  tc_conv2d_free(c);
  tc_conv2d_desc_init(&d);
  d.direction = (tc_conv2d_direction)3;
  c = tc_conv2d_new(&d, NULL);
  TC_CHECK_EQ_INT(tc_conv2d_plan(c, NULL), TC_ERR_ARGUMENT);
  TC_CHECK(strstr(tc_conv2d_error(c), "bad convolution direction 3") != NULL, "%s", tc_conv2d_error(c));
  tc_conv2d_free(c);
  tc_conv2d_free(NULL);
  TC_CHECK_STR(tc_conv2d_error(NULL), "");
}

static void test_problem_string_and_sizes(void) {
  tc_conv2d_desc d;
  tc_conv2d_desc_init(&d);
  d.n = 2, d.c = 8, d.h = 9, d.w = 7, d.k = 4, d.y = 3, d.x = 2;
  d.pad_top = 1, d.pad_bottom = 0, d.pad_left = 2, d.pad_right = 1;
  d.stride_h = 2, d.dilation_w = 2, d.groups = 2;
  d.in_layout = "NHWC", d.fil_layout = "KYXC", d.out_layout = "NHWK";
  d.dtype = TC_F16;
  tc_conv2d *c = tc_conv2d_new(&d, NULL);
  TC_CHECK_STR(tc_conv2d_problem_string(c),
               "conv2d -F 1 -n 2 -c 8 -H 9 -W 7 -k 4 -y 3 -x 2 --pad_h_l 1 --pad_h_r 0 "
               "--pad_w_l 2 --pad_w_r 1 -u 2 -v 1 -l 1 -j 2 -g 2 -t f16 --in_layout NHWC "
               "--fil_layout KYXC --out_layout NHWK");
  int64_t ho = 0, wo = 0;
  TC_CHECK_EQ_INT(tc_conv2d_output_size(c, &ho, &wo), TC_OK);
  TC_CHECK_EQ_INT(ho, 4); /* (9 + 1 - 3) / 2 + 1 */
  TC_CHECK_EQ_INT(wo, 8); /* (7 + 3 - 3) / 1 + 1 */
  TC_CHECK_EQ_INT(tc_conv2d_elems(c, TC_CONV2D_INPUT), 2 * 8 * 9 * 7);
  TC_CHECK_EQ_INT(tc_conv2d_elems(c, TC_CONV2D_FILTER), 4 * 4 * 3 * 2);
  TC_CHECK_EQ_INT(tc_conv2d_elems(c, TC_CONV2D_OUTPUT), 2 * 4 * 4 * 8);
  TC_CHECK_EQ_INT(tc_conv2d_elems(c, (tc_conv2d_tensor)7), -1);
  tc_conv2d_free(c);
}

/* ---- planning, running, verifying ------------------------------------------------ */

static void test_plan_heuristic_and_option(void) {
  tc_conv2d_desc d;
  tc_conv2d_desc_init(&d);
  d.n = 1, d.c = 8, d.h = d.w = 8, d.k = 16, d.y = d.x = 3, d.pad_top = d.pad_bottom = 1;
  d.pad_left = d.pad_right = 1;
  tc_op_options o = opts("");
  tc_conv2d *c = tc_conv2d_new(&d, &o);
  TC_REQUIRE(tc_conv2d_plan(c, NULL) == TC_OK, "%s", tc_conv2d_error(c));
  TC_CHECK_STR(tc_conv2d_perf_config_source(c), "heuristic");
  TC_CHECK(strlen(tc_conv2d_perf_config(c)) > 0, "a perf config");
  TC_CHECK_EQ_INT(tc_conv2d_num_kernels(c), 1);
  const char *src = tc_conv2d_kernel_source(c, 0);
  TC_CHECK(src && strstr(src, "__kernel") != NULL, "OpenCL source");
  TC_CHECK_STR(tc_conv2d_kernel_name(c, 0), "tilec_conv_fwd");
  TC_CHECK(tc_conv2d_kernel_name(c, 1) == NULL && tc_conv2d_kernel_name(c, -1) == NULL, "range");
  int64_t grid[3], block[3];
  tc_conv2d_tensor args[3];
  TC_CHECK_EQ_INT(tc_conv2d_kernel_launch(c, 0, grid, block, args), 3);
  TC_CHECK(grid[0] >= 1 && block[0] >= 64 && grid[1] == 1 && block[1] == 1, "launch");
  /* forward: A = filter, B = input, C = output */
  TC_CHECK(args[0] == TC_CONV2D_FILTER && args[1] == TC_CONV2D_INPUT && args[2] == TC_CONV2D_OUTPUT,
           "args %d %d %d", args[0], args[1], args[2]);
  TC_CHECK_EQ_INT(tc_conv2d_kernel_launch(c, 1, grid, block, args), 0);

  TC_CHECK_EQ_INT(tc_conv2d_plan(c, "64,32,32,4,2,2"), TC_OK);
  TC_CHECK_STR(tc_conv2d_perf_config(c), "64,32,32,4,2,2");
  TC_CHECK_STR(tc_conv2d_perf_config_source(c), "option");
  /* a broken rule keeps the plan */
  TC_CHECK_EQ_INT(tc_conv2d_plan(c, "64,100,32,4,2,2"), TC_ERR_ARGUMENT);
  TC_CHECK(strstr(tc_conv2d_error(c), "does not fit") != NULL, "%s", tc_conv2d_error(c));
  TC_CHECK_EQ_INT(tc_conv2d_plan(c, "1,2,3"), TC_ERR_ARGUMENT);
  TC_CHECK(strstr(tc_conv2d_error(c), "bad perf config '1,2,3'") != NULL, "%s", tc_conv2d_error(c));
  TC_CHECK_STR(tc_conv2d_perf_config(c), "64,32,32,4,2,2");
  TC_CHECK_EQ_INT(tc_conv2d_num_kernels(c), 1);

  /* CUDA source without a device */
  tc_op_options oc = opts("");
  oc.target = TC_TARGET_CUDA;
  tc_conv2d *cc = tc_conv2d_new(&d, &oc);
  TC_CHECK_EQ_INT(tc_conv2d_plan(cc, NULL), TC_OK);
  TC_CHECK(tc_conv2d_kernel_source(cc, 0) && strstr(tc_conv2d_kernel_source(cc, 0), "__global__"),
           "CUDA source");
  tc_conv2d_free(cc);
  tc_conv2d_free(c);
}

/* Runs one problem (planning implicitly), verifies it, and compares it with
 * tc_conv2d_reference; a deliberately broken result must fail. */
static void run_and_verify(const tc_conv2d_desc *d, const char *what) {
  tc_op_options o = opts("");
  tc_conv2d *c = tc_conv2d_new(d, &o);
  int64_t n[3];
  float *buf[3], *ref[3];
  for (int t = 0; t < 3; t++) {
    n[t] = tc_conv2d_elems(c, (tc_conv2d_tensor)t);
    TC_REQUIRE(n[t] > 0, "%s: elems: %s", what, tc_conv2d_error(c));
    buf[t] = calloc((size_t)n[t], sizeof(float));
    ref[t] = calloc((size_t)n[t], sizeof(float));
    fill(buf[t], n[t], 17 + (uint64_t)t);
    memcpy(ref[t], buf[t], (size_t)n[t] * sizeof(float));
  }
  int w = d->direction == TC_CONV2D_FORWARD ? 2 : d->direction == TC_CONV2D_BACKWARD_DATA ? 0 : 1;
  double ms = -1, worst = -1;
  tc_status st = tc_conv2d_run(c, buf[0], buf[1], buf[2], &ms);
  TC_CHECK(st == TC_OK, "%s: run: %s", what, tc_conv2d_error(c));
  if (st == TC_OK) {
    TC_CHECK(ms >= 0, "%s: time", what);
    TC_CHECK_STR(tc_conv2d_perf_config_source(c), "heuristic");
    int64_t bad = tc_conv2d_verify(c, buf[0], buf[1], buf[2], &worst);
    TC_CHECK(bad == 0, "%s: verify: %lld bad: %s", what, (long long)bad, tc_conv2d_error(c));
    TC_CHECK(worst >= 0 && worst <= 1, "%s: worst %g", what, worst);
    TC_CHECK_EQ_INT(tc_conv2d_reference(c, ref[0], ref[1], ref[2]), TC_OK);
    double maxdiff = 0;
    for (int64_t i = 0; i < n[w]; i++) maxdiff = fmax(maxdiff, fabs(ref[w][i] - buf[w][i]));
    TC_CHECK(maxdiff < 1e-3, "%s: max difference to tc_conv2d_reference %g", what, maxdiff);
    buf[w][n[w] / 2] += 1.0f;
    TC_CHECK_EQ_INT(tc_conv2d_verify(c, buf[0], buf[1], buf[2], NULL), 1);
    TC_CHECK(strstr(tc_conv2d_error(c), "1 of") != NULL, "%s", tc_conv2d_error(c));
  }
  for (int t = 0; t < 3; t++) free(buf[t]), free(ref[t]);
  tc_conv2d_free(c);
}

static void test_run_three_directions(void) {
  if (!device_ok()) TC_SKIP("no OpenCL device");
  tc_conv2d_desc d;
  tc_conv2d_desc_init(&d);
  d.n = 2, d.c = 4, d.h = 7, d.w = 6, d.k = 6, d.y = 3, d.x = 2;
  d.pad_top = 1, d.pad_bottom = 0, d.pad_left = 0, d.pad_right = 1;
  d.stride_h = 2, d.dilation_w = 2, d.groups = 2;
  const tc_conv2d_direction dirs[3] = {TC_CONV2D_FORWARD, TC_CONV2D_BACKWARD_DATA,
                                       TC_CONV2D_BACKWARD_WEIGHT};
  for (int i = 0; i < 3; i++) {
    d.direction = dirs[i];
    d.in_layout = i == 1 ? "NHWC" : NULL;
    d.fil_layout = i == 1 ? "KYXC" : NULL;
    d.out_layout = i == 1 ? "NHWK" : NULL;
    char what[32];
    snprintf(what, sizeof what, "direction %d", (int)dirs[i]);
    run_and_verify(&d, what);
  }
}

/* Each kernel's GEMM and shared memory, and the timed run with the full
 * verify result. */
static void test_kernel_gemms_and_timed_run(void) {
  /* backward data, 3 x 3 filter, stride 2, 8 x 8 input, no padding: one
   * GEMM per phase (y % 2, x % 2) of the input, M = C = 4, N = N * 4 * 4
   * = 16 input pixels of the phase, K = K_out 8 * the filter taps of the
   * phase: y and x even 2 * 2 = 4 taps (K 32), one odd 2 * 1 (K 16), both
   * odd 1 (K 8); every input pixel is written, so no zeroing kernel */
  tc_conv2d_desc d;
  tc_conv2d_desc_init(&d);
  d.direction = TC_CONV2D_BACKWARD_DATA;
  d.n = 1, d.c = 4, d.h = d.w = 8, d.k = 8, d.y = d.x = 3, d.stride_h = d.stride_w = 2;
  tc_op_options o = opts("");
  tc_conv2d *c = tc_conv2d_new(&d, &o);
  int64_t gm[4];
  char pc[64] = "x";
  TC_CHECK_EQ_INT(tc_conv2d_kernel_gemm(c, 0, gm, pc, sizeof pc), 0); /* before a plan */
  TC_CHECK(strcmp(pc, "") == 0, "perf config '%s'", pc);
  TC_REQUIRE(tc_conv2d_plan(c, NULL) == TC_OK, "%s", tc_conv2d_error(c));
  TC_REQUIRE(tc_conv2d_num_kernels(c) == 4, "%d kernels", tc_conv2d_num_kernels(c));
  const int64_t want_k[4] = {32, 16, 16, 8};
  for (int i = 0; i < 4; i++) {
    TC_CHECK_EQ_INT(tc_conv2d_kernel_gemm(c, i, gm, pc, sizeof pc), 1);
    TC_CHECK(gm[0] == 1 && gm[1] == 4 && gm[2] == 16 && gm[3] == want_k[i],
             "kernel %d: GEMM G %lld M %lld N %lld K %lld", i, (long long)gm[0], (long long)gm[1],
             (long long)gm[2], (long long)gm[3]);
    TC_CHECK(strchr(pc, ',') != NULL, "kernel %d: perf config '%s'", i, pc);
    int64_t smem = tc_conv2d_kernel_smem_bytes(c, i);
    TC_CHECK(smem > 0 && smem <= 65536, "kernel %d: shared memory %lld", i, (long long)smem);
  }
  /* the first GEMM's perf config is the plan's */
  TC_CHECK_EQ_INT(tc_conv2d_kernel_gemm(c, 0, NULL, pc, sizeof pc), 1);
  TC_CHECK(strcmp(pc, tc_conv2d_perf_config(c)) == 0, "perf config '%s'", pc);
  TC_CHECK_EQ_INT(tc_conv2d_kernel_gemm(c, 4, gm, NULL, 0), 0);
  TC_CHECK_EQ_INT(tc_conv2d_kernel_smem_bytes(c, 4), 0);
  TC_CHECK_EQ_INT(tc_conv2d_kernel_smem_bytes(c, -1), 0);

  /* a given perf config is each GEMM's */
  TC_REQUIRE(tc_conv2d_plan(c, "64,32,32,4,2,2") == TC_OK, "%s", tc_conv2d_error(c));
  TC_CHECK_EQ_INT(tc_conv2d_kernel_gemm(c, 3, gm, pc, sizeof pc), 1);
  TC_CHECK(strcmp(pc, "64,32,32,4,2,2") == 0, "perf config '%s'", pc);

  /* a 1 x 1 filter with stride 2 leaves 3 of the 4 phases unwritten: a
   * zeroing kernel first, then one GEMM, K = K_out 8 * 1 tap */
  d.y = d.x = 1;
  tc_conv2d *z = tc_conv2d_new(&d, &o);
  TC_REQUIRE(tc_conv2d_plan(z, NULL) == TC_OK, "%s", tc_conv2d_error(z));
  TC_REQUIRE(tc_conv2d_num_kernels(z) == 2, "%d kernels", tc_conv2d_num_kernels(z));
  TC_CHECK_EQ_INT(tc_conv2d_kernel_gemm(z, 0, gm, pc, sizeof pc), 0);
  TC_CHECK(strcmp(pc, "") == 0, "perf config '%s'", pc);
  TC_CHECK_EQ_INT(tc_conv2d_kernel_smem_bytes(z, 0), 0);
  TC_CHECK_EQ_INT(tc_conv2d_kernel_gemm(z, 1, gm, NULL, 0), 1);
  TC_CHECK(gm[1] == 4 && gm[2] == 16 && gm[3] == 8, "GEMM M %lld N %lld K %lld",
           (long long)gm[1], (long long)gm[2], (long long)gm[3]);
  tc_conv2d_free(z);

  if (!device_ok()) {
    tc_conv2d_free(c);
    TC_SKIP("no OpenCL device");
  }
  int64_t n[3];
  float *buf[3];
  for (int t = 0; t < 3; t++) {
    n[t] = tc_conv2d_elems(c, (tc_conv2d_tensor)t);
    buf[t] = calloc((size_t)n[t], sizeof(float));
    fill(buf[t], n[t], 5 + (uint64_t)t);
  }
  double first = -1, times[3] = {-1, -1, -1};
  TC_CHECK_EQ_INT(tc_conv2d_run_timed(c, buf[0], buf[1], buf[2], &first, -1, times),
                  TC_ERR_ARGUMENT);
  TC_CHECK(strstr(tc_conv2d_error(c), "iters") != NULL, "%s", tc_conv2d_error(c));
  TC_CHECK_EQ_INT(tc_conv2d_run_timed(c, buf[0], buf[1], buf[2], &first, 2, NULL),
                  TC_ERR_ARGUMENT);
  tc_status st = tc_conv2d_run_timed(c, buf[0], buf[1], buf[2], &first, 3, times);
  TC_REQUIRE(st == TC_OK, "run_timed: %s", tc_conv2d_error(c));
  TC_CHECK(first >= 0, "first run %g ms", first);
  for (int r = 0; r < 3; r++) TC_CHECK(times[r] > 0, "timed launch %d: %g ms", r, times[r]);
  /* the written tensor is the input: N * C * H * W = 1 * 4 * 8 * 8 */
  tc_op_verify_result v;
  TC_CHECK_EQ_INT(tc_conv2d_verify_result(c, buf[0], buf[1], buf[2], &v), 0);
  TC_CHECK(v.bad == 0 && v.checked == 256 && v.cell == 0, "bad %lld checked %lld cell %lld",
           (long long)v.bad, (long long)v.checked, (long long)v.cell);
  TC_CHECK(v.worst >= 0 && v.worst <= 1, "worst %g", v.worst);
  buf[0][17] += 1.0f;
  TC_CHECK_EQ_INT(tc_conv2d_verify_result(c, buf[0], buf[1], buf[2], &v), 1);
  TC_CHECK(v.bad == 1 && v.worst > 1 && strlen(v.message) > 0, "bad %lld worst %g '%s'",
           (long long)v.bad, v.worst, v.message);
  TC_CHECK(strstr(tc_conv2d_error(c), v.message) != NULL, "%s", tc_conv2d_error(c));
  TC_CHECK_EQ_INT(tc_conv2d_verify_result(c, NULL, buf[1], buf[2], &v), -1);
  TC_CHECK_EQ_INT(v.bad, -1);
  for (int t = 0; t < 3; t++) free(buf[t]);
  tc_conv2d_free(c);
}

/* ---- tuning and the perf DB --------------------------------------------------------- */

typedef struct progress_log {
  int calls, ok, last_total;
  char first[64];
} progress_log;

static void on_progress(void *ctx, const tc_op_tune_event *ev) {
  progress_log *l = ctx;
  l->calls++;
  l->ok += ev->ok;
  l->last_total = ev->total;
  if (l->calls == 1) snprintf(l->first, sizeof l->first, "%s", ev->perf_config);
  if (!ev->ok && !*ev->note) l->ok = -1000; /* a skip always says why */
}

static void test_tune_and_perfdb(void) {
  if (!device_ok()) TC_SKIP("no OpenCL device");
  tc_conv2d_desc d;
  tc_conv2d_desc_init(&d);
  d.n = 1, d.c = 8, d.h = d.w = 6, d.k = 8, d.y = d.x = 3, d.pad_top = d.pad_bottom = 1;
  d.pad_left = d.pad_right = 1;
  tc_op_options o = opts(dbpath);
  unlink(dbpath);

  /* nothing in the DB yet (it does not even exist): the heuristic */
  tc_conv2d *c = tc_conv2d_new(&d, &o);
  TC_REQUIRE(tc_conv2d_plan(c, NULL) == TC_OK, "%s", tc_conv2d_error(c));
  TC_CHECK_STR(tc_conv2d_perf_config_source(c), "heuristic");
  char heur[64];
  snprintf(heur, sizeof heur, "%s", tc_conv2d_perf_config(c));

  progress_log log = {0, 0, 0, ""};
  tc_op_tune_options t = {2, 1, 0, on_progress, &log};
  tc_op_tune_result r;
  tc_status st = tc_conv2d_tune(c, &t, &r);
  TC_REQUIRE(st == TC_OK, "tune: %s", tc_conv2d_error(c));
  TC_CHECK_EQ_INT(log.calls, 2);
  TC_CHECK_EQ_INT(log.last_total, 2);
  TC_CHECK(log.ok >= 1, "at least one candidate ran (%d)", log.ok);
  TC_CHECK_STR(log.first, heur); /* the heuristic's choice goes first */
  TC_CHECK_EQ_INT(r.tried, 2);
  TC_CHECK(r.candidates >= 2, "candidates %d", r.candidates);
  TC_CHECK(r.ms > 0, "ms %g", r.ms);
  TC_CHECK_EQ_INT(r.stored, 1);
  TC_CHECK_STR(r.perfdb, dbpath);
  TC_CHECK_STR(tc_conv2d_perf_config_source(c), "tuned");
  TC_CHECK_STR(tc_conv2d_perf_config(c), r.perf_config);
  TC_CHECK(strstr(tc_conv2d_perf_config_detail(c), "stored in the perf DB") != NULL, "%s",
           tc_conv2d_perf_config_detail(c));
  TC_CHECK_EQ_INT(tc_conv2d_num_kernels(c), 1);
  tc_conv2d_free(c);

  /* a new object finds it */
  c = tc_conv2d_new(&d, &o);
  TC_REQUIRE(tc_conv2d_plan(c, NULL) == TC_OK, "%s", tc_conv2d_error(c));
  TC_CHECK_STR(tc_conv2d_perf_config_source(c), "perfdb");
  TC_CHECK_STR(tc_conv2d_perf_config(c), r.perf_config);
  TC_CHECK(strstr(tc_conv2d_perf_config_detail(c), dbpath) != NULL, "%s",
           tc_conv2d_perf_config_detail(c));
  tc_conv2d_free(c);

  /* without a DB ("") it is the heuristic again, and tuning stores nothing */
  tc_op_options none = opts("");
  c = tc_conv2d_new(&d, &none);
  TC_CHECK_EQ_INT(tc_conv2d_plan(c, NULL), TC_OK);
  TC_CHECK_STR(tc_conv2d_perf_config_source(c), "heuristic");
  tc_op_tune_options t1 = {1, 1, 0, NULL, NULL};
  TC_CHECK_EQ_INT(tc_conv2d_tune(c, &t1, &r), TC_OK);
  TC_CHECK_EQ_INT(r.stored, 0);
  TC_CHECK_EQ_INT(r.tried, 1);
  TC_CHECK_STR(r.perf_config, heur);
  tc_conv2d_free(c);

  /* a perf DB that cannot be opened: tuning works, the result is not stored */
  char badpath[600];
  snprintf(badpath, sizeof badpath, "%s", tmpdir); /* a directory */
  tc_op_options bad = opts(badpath);
  c = tc_conv2d_new(&d, &bad);
  TC_CHECK_EQ_INT(tc_conv2d_tune(c, &t1, &r), TC_OK);
  TC_CHECK_EQ_INT(r.stored, 0);
  TC_CHECK(strstr(tc_conv2d_perf_config_detail(c), "it is a directory") != NULL, "%s",
           tc_conv2d_perf_config_detail(c));
  /* and planning from it falls back to the heuristic, saying why */
  TC_CHECK_EQ_INT(tc_conv2d_plan(c, NULL), TC_OK);
  TC_CHECK_STR(tc_conv2d_perf_config_source(c), "heuristic");
  TC_CHECK(strstr(tc_conv2d_perf_config_detail(c), "the perf DB was not used") != NULL, "%s",
           tc_conv2d_perf_config_detail(c));
  tc_conv2d_free(c);

  tc_op_tune_options neg = {-1, 0, 0, NULL, NULL};
  c = tc_conv2d_new(&d, &none);
  TC_CHECK_EQ_INT(tc_conv2d_tune(c, &neg, NULL), TC_ERR_ARGUMENT);
  tc_conv2d_free(c);
}

/* ---- GEMM ----------------------------------------------------------------------------- */

static void test_gemm(void) {
  tc_gemm_desc d;
  tc_gemm_desc_init(&d);
  TC_CHECK(d.m == 1 && d.n == 1 && d.k == 1 && d.batch == 1 && d.dtype == TC_F32, "defaults");
  d.m = 20, d.n = 12, d.k = 9, d.batch = 2, d.trans_a = 1;
  tc_op_options o = opts(dbpath);
  tc_gemm *g = tc_gemm_new(&d, &o);
  TC_CHECK_STR(tc_gemm_problem_string(g), "gemm -g 2 -M 20 -N 12 -K 9 --transA 1 --transB 0 -t f32");
  TC_CHECK(tc_gemm_kernel_source(g) == NULL && tc_gemm_kernel_launch(g, NULL, NULL) == 0, "no plan");
  TC_REQUIRE(tc_gemm_plan(g, NULL) == TC_OK, "%s", tc_gemm_error(g));
  TC_CHECK_STR(tc_gemm_kernel_name(g), "tilec_gemm");
  int64_t grid[3], block[3];
  TC_CHECK_EQ_INT(tc_gemm_kernel_launch(g, grid, block), 1);
  TC_CHECK(block[0] >= 64, "block %lld", (long long)block[0]);
  TC_CHECK_EQ_INT(tc_gemm_plan(g, "64,100,32,4,2,2"), TC_ERR_ARGUMENT);
  TC_CHECK(strstr(tc_gemm_error(g), "breaks a rule") != NULL, "%s", tc_gemm_error(g));

  if (device_ok()) {
    float *a = calloc(2 * 20 * 9, sizeof(float)), *b = calloc(2 * 9 * 12, sizeof(float));
    float *c = calloc(2 * 20 * 12, sizeof(float));
    fill(a, 2 * 20 * 9, 1);
    fill(b, 2 * 9 * 12, 2);
    TC_CHECK(tc_gemm_run(g, a, b, c, NULL) == TC_OK, "%s", tc_gemm_error(g));
    double worst = -1;
    TC_CHECK_EQ_INT(tc_gemm_verify(g, a, b, c, &worst), 0);
    TC_CHECK(worst >= 0 && worst <= 1, "worst %g", worst);
    /* row 0 of C, by hand: A is stored [K][M] */
    double want = 0;
    for (int l = 0; l < 9; l++) want += (double)a[l * 20 + 0] * b[l * 12 + 0];
    TC_CHECK(fabs(want - c[0]) < 1e-4, "c[0] %g, want %g", c[0], want);
    c[5] = 100;
    TC_CHECK_EQ_INT(tc_gemm_verify(g, a, b, c, NULL), 1);

    tc_op_tune_result r;
    tc_op_tune_options t = {2, 1, 0, NULL, NULL};
    TC_REQUIRE(tc_gemm_tune(g, &t, &r) == TC_OK, "%s", tc_gemm_error(g));
    TC_CHECK_EQ_INT(r.stored, 1);
    TC_CHECK_STR(tc_gemm_perf_config_source(g), "tuned");
    TC_CHECK(tc_gemm_run(g, a, b, c, NULL) == TC_OK, "%s", tc_gemm_error(g));
    TC_CHECK_EQ_INT(tc_gemm_verify(g, a, b, c, NULL), 0);
    tc_gemm *g2 = tc_gemm_new(&d, &o);
    TC_CHECK_EQ_INT(tc_gemm_plan(g2, NULL), TC_OK);
    TC_CHECK_STR(tc_gemm_perf_config_source(g2), "perfdb");
    TC_CHECK_STR(tc_gemm_perf_config(g2), r.perf_config);
    tc_gemm_free(g2);
    free(a), free(b), free(c);
  }
  tc_gemm_free(g);

  tc_gemm_desc bad = d;
  bad.k = 0;
  g = tc_gemm_new(&bad, NULL);
  TC_CHECK_EQ_INT(tc_gemm_plan(g, NULL), TC_ERR_ARGUMENT);
  TC_CHECK(strstr(tc_gemm_error(g), "tc_gemm_plan: k must be in [1,") != NULL, "%s", tc_gemm_error(g));
  tc_gemm_free(g);
  bad = d;
  bad.dtype = TC_I8;
  g = tc_gemm_new(&bad, NULL);
  TC_CHECK_EQ_INT(tc_gemm_plan(g, NULL), TC_ERR_ARGUMENT);
  TC_CHECK(strstr(tc_gemm_error(g), "unsupported data type i8") != NULL, "%s", tc_gemm_error(g));
  float x = 0;
  TC_CHECK_EQ_INT(tc_gemm_run(g, &x, NULL, &x, NULL), TC_ERR_ARGUMENT);
  tc_gemm_free(g);
  tc_gemm_free(NULL);
}

int main(void) {
  snprintf(tmpdir, sizeof tmpdir, "%s/tilec-op-api.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  snprintf(dbpath, sizeof dbpath, "%s/perfdb.sqlite", tmpdir);
  TC_RUN(test_desc_errors);
  TC_RUN(test_problem_string_and_sizes);
  TC_RUN(test_plan_heuristic_and_option);
  TC_RUN(test_run_three_directions);
  TC_RUN(test_kernel_gemms_and_timed_run);
  TC_RUN(test_tune_and_perfdb);
  TC_RUN(test_gemm);
  unlink(dbpath);
  rmdir(tmpdir);
  TC_MAIN_END();
}
