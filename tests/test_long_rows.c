/* test_long_rows.c - rows of any length and reductions across blocks.
 *
 * tc_schedule_auto on softmax, RMSNorm and a plain row sum at 2 x 65537,
 * 1 x 262144, 4 x 100003 and 3 x 1 (f32), run on PoCL and compared with a
 * plain C loop in double: rows past the persistent threshold take the
 * two-pass form (no register array of more than 16 floats per thread),
 * sums of few long rows a grid reduction (a reduction axis on BIDx, the
 * blocks' partials combined in a fixed order by the last block).  Two runs
 * give bitwise equal results.  A grid reduction scheduled by hand (max,
 * rows on BIDy, a thread axis off the reduction) and ten random ones.
 * The shared-memory form.  The refusals, each naming tensor, axis and
 * reason.  NVRTC and hipcc compile the new kernels (no GPU needed). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo/norms.h"
#include "test.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

enum { K_SOFTMAX, K_RMSNORM, K_SUM };
static const char *kname[] = {"softmax", "rmsnorm", "sum"};

static tc_tensor *build(tc_fusion *f, int kind, int64_t rows, int64_t cols) {
  if (kind == K_SOFTMAX) return tc_norm_build(f, TC_NORM_SOFTMAX, TC_F32, rows, cols);
  if (kind == K_RMSNORM) return tc_norm_build(f, TC_NORM_RMSNORM, TC_F32, rows, cols);
  int64_t shape[2] = {rows, cols};
  int last = 1;
  return tc_reduce(f, TC_REDUCE_SUM, tc_input(f, TC_F32, 2, shape), 1, &last);
}

/* Deterministic values in [-4, 4). */
static void fill(float *p, int64_t n, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < n; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    p[i] = (float)((double)(s % 20001) / 2500.0 - 4.0);
  }
}

/* The largest register array a kernel declares ("T<n>[<count>] = {0}"). */
static long max_register_array(const char *src) {
  long best = 0;
  for (const char *p = strstr(src, "] = {0};"); p; p = strstr(p + 1, "] = {0};")) {
    const char *q = p;
    while (q > src && q[-1] >= '0' && q[-1] <= '9') q--;
    long v = strtol(q, NULL, 10);
    if (v > best) best = v;
  }
  return best;
}

/* Compiles f (scheduled) for OpenCL and runs it twice on x; checks both
 * runs against want within tol and against each other bit for bit. */
static void run_and_check(tc_fusion *f, const char *what, const float *x, int64_t nout,
                          const double *want, const double *tol) {
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "long_rows"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_CHECK(k != NULL, "%s: compile: %s", what, tc_fusion_error(f));
  if (!k) return;
  float *out[2];
  for (int r = 0; r < 2; r++) {
    out[r] = malloc((size_t)nout * sizeof(float));
    for (int64_t i = 0; i < nout; i++) out[r][i] = -12345.0f;
    /* x, then eps where the fusion reads it (rmsnorm: a scalar input,
     * norms.h), then the output */
    float eps = TC_NORM_EPS;
    void *args[3] = {(void *)x, out[r]};
    if (tc_kernel_nparams(k) == 3) args[1] = &eps, args[2] = out[r];
    st = tc_kernel_run(k, args, NULL, NULL);
    if (st == TC_ERR_NO_DEVICE) break;
    TC_CHECK(st == TC_OK, "%s: run: %s", what, tc_kernel_error(k));
  }
  if (st == TC_OK) {
    int bad = 0;
    for (int64_t i = 0; i < nout && bad < 3; i++)
      if (!(fabs(out[0][i] - want[i]) <= tol[i])) {
        bad++;
        TC_CHECK(0, "%s: element %lld = %.9g, want %.9g (+-%.3g)", what, (long long)i, out[0][i],
                 want[i], tol[i]);
      }
    TC_CHECK(memcmp(out[0], out[1], (size_t)nout * sizeof(float)) == 0,
             "%s: two runs differ (not deterministic)", what);
  }
  free(out[0]), free(out[1]);
  tc_kernel_free(k);
}

static void run_case(int kind, int64_t rows, int64_t cols) {
  char what[96];
  snprintf(what, sizeof what, "%s %lldx%lld", kname[kind], (long long)rows, (long long)cols);
  tc_fusion *f = tc_fusion_new();
  tc_tensor *y = build(f, kind, rows, cols);
  TC_REQUIRE(y, "%s: %s", what, tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  const char *note = tc_fusion_schedule_note(f);
  /* the form the scheduler states: f32 rows past 1024 x 16 do not stay
   * in registers; sums of fewer than 64 such rows reduce over a grid */
  bool long_row = cols > 16384;
  if (kind == K_SUM)
    TC_CHECK((strstr(note, "grid reduction") != NULL) == long_row, "%s: note '%s'", what, note);
  else
    TC_CHECK((strstr(note, "two-pass") != NULL) == long_row, "%s: note '%s'", what, note);
  int64_t n = rows * cols, nout = kind == K_SUM ? rows : n;
  float *x = malloc((size_t)n * sizeof(float));
  fill(x, n, (uint64_t)(rows * 31 + cols));
  double *want = malloc((size_t)nout * sizeof(double)), *tol = malloc((size_t)nout * sizeof(double));
  double rel = (double)(cols + 16) * ldexp(1.0, -24) * 4; /* an f32 sum of cols terms, a few ops */
  for (int64_t r = 0; r < rows; r++) {
    const float *row = x + r * cols;
    double mx = -INFINITY, z = 0, q = 0, s = 0, a = 0;
    for (int64_t c = 0; c < cols; c++) mx = fmax(mx, row[c]), q += (double)row[c] * row[c], s += row[c], a += fabs(row[c]);
    for (int64_t c = 0; c < cols; c++) z += exp(row[c] - mx);
    if (kind == K_SUM) want[r] = s, tol[r] = a * rel;
    for (int64_t c = 0; c < cols && kind != K_SUM; c++) {
      double w = kind == K_SOFTMAX ? exp(row[c] - mx) / z : row[c] / sqrt(q / (double)cols + 1e-5);
      want[r * cols + c] = w, tol[r * cols + c] = fabs(w) * (rel + 1e-6);
    }
  }
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "long_rows"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  if (k) {
    long regs = max_register_array(tc_kernel_source(k));
    TC_CHECK(regs <= 16, "%s: a register array of %ld elements per thread [%s]", what, regs, note);
    tc_kernel_free(k);
  }
  run_and_check(f, what, x, nout, want, tol);
  free(x), free(want), free(tol);
  tc_fusion_free(f);
}

static void test_long_rows_auto(void) {
  static const int64_t shapes[][2] = {{2, 65537}, {1, 262144}, {4, 100003}, {3, 1}};
  for (int s = 0; s < 4; s++)
    for (int kind = 0; kind < 3; kind++) run_case(kind, shapes[s][0], shapes[s][1]);
}

/* A softmax row of 20000 floats: 20 per thread of 1024 is over the
 * registers' 64 bytes; its exp(x - max) (20 x 1024 x 4 = 81920 bytes)
 * fits the 227 KiB the target model gives sm_90a, so scheduled for CUDA
 * the row is held in shared memory; OpenCL's 32 KiB and gfx90a's 64 KiB
 * do not hold it (two-pass).  The CUDA schedule runs on PoCL (2 MiB of
 * local memory) and NVRTC compiles it. */
static void test_shared_form(void) {
  static const struct { tc_target t; const char *arch, *form; } cases[] = {
      {TC_TARGET_CUDA, "sm_90a", "held in shared memory"},
      {TC_TARGET_OPENCL, NULL, "two-pass"},
      {TC_TARGET_HIP, "gfx90a", "two-pass"}};
  for (int c = 0; c < 3; c++) {
    tc_fusion *f = tc_fusion_new();
    tc_tensor *y = tc_norm_build(f, TC_NORM_SOFTMAX, TC_F32, 2, 20000);
    TC_REQUIRE(y, "%s", tc_fusion_error(f));
    OK(f, tc_add_output(f, y));
    OK(f, tc_schedule_auto(f, cases[c].t, cases[c].arch));
    const char *note = tc_fusion_schedule_note(f);
    TC_CHECK(strstr(note, cases[c].form) != NULL, "%s: note '%s'", tc_target_name(cases[c].t), note);
    if (c > 0) {
      tc_fusion_free(f);
      continue;
    }
    tc_compile_options o = {TC_TARGET_CUDA, "sm_90a", "softmax_shared"};
    tc_status st;
    tc_kernel *k = tc_compile(f, &o, &st);
    TC_CHECK(k != NULL, "cuda: %s", tc_fusion_error(f));
    if (k) {
      TC_CHECK(tc_kernel_smem_bytes(k) >= 20 * 1024 * 4, "shared memory %lld",
               (long long)tc_kernel_smem_bytes(k));
      st = tc_kernel_build(k, NULL);
      TC_CHECK(st == TC_OK || st == TC_ERR_UNSUPPORTED, "NVRTC: %s", tc_kernel_error(k));
      tc_kernel_free(k);
    }
    float *x = malloc(2 * 20000 * sizeof(float));
    fill(x, 2 * 20000, 3);
    double *want = malloc(2 * 20000 * sizeof(double)), *tol = malloc(2 * 20000 * sizeof(double));
    double rel = (20000.0 + 16) * ldexp(1.0, -24) * 4;
    for (int r = 0; r < 2; r++) {
      double mx = -INFINITY, z = 0;
      for (int i = 0; i < 20000; i++) mx = fmax(mx, x[r * 20000 + i]);
      for (int i = 0; i < 20000; i++) z += exp(x[r * 20000 + i] - mx);
      for (int i = 0; i < 20000; i++) {
        want[r * 20000 + i] = exp(x[r * 20000 + i] - mx) / z;
        tol[r * 20000 + i] = want[r * 20000 + i] * (rel + 1e-6);
      }
    }
    run_and_check(f, "softmax 2x20000 held in shared memory", x, 2 * 20000, want, tol);
    free(x), free(want), free(tol);
    tc_fusion_free(f);
  }
}

/* One row of a million: 245 blocks over BIDx. */
static void test_grid_sum_million(void) { run_case(K_SUM, 1, 1000000); }

/* A max over a grid scheduled by hand: x [3, 5, 20000] reduced over the
 * last axis, rows on BIDy, the middle axis on TIDy (each thread row its
 * own partial), the row [rBIDx(10), rS, rTIDx(64)]. */
static void test_grid_max_by_hand(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[3] = {3, 5, 20000};
  tc_tensor *x = tc_input(f, TC_F32, 3, shape);
  int last = 2;
  tc_tensor *m = tc_reduce(f, TC_REDUCE_MAX, x, 1, &last);
  OK(f, tc_add_output(f, m));
  tc_tensor *acc = tc_cache_before(m);
  TC_REQUIRE(acc, "%s", tc_fusion_error(f));
  OK(f, tc_split(acc, 2, 64, 1));   /* [3, 5, r313, r64] */
  OK(f, tc_split(acc, 2, 32, 1));   /* [3, 5, r10, r32, r64] */
  OK(f, tc_parallelize(acc, 0, TC_BIDY));
  OK(f, tc_parallelize(acc, 1, TC_TIDY));
  OK(f, tc_parallelize(acc, 2, TC_BIDX));
  OK(f, tc_parallelize(acc, 4, TC_TIDX));
  OK(f, tc_propagate_transforms(acc));
  OK(f, tc_parallelize_all_like(acc));
  int64_t n = 3 * 5 * 20000;
  float *xs = malloc((size_t)n * sizeof(float));
  fill(xs, n, 7);
  double want[15], tol[15] = {0};
  for (int r = 0; r < 15; r++) {
    want[r] = -INFINITY;
    for (int c = 0; c < 20000; c++) want[r] = fmax(want[r], xs[r * 20000 + c]);
  }
  run_and_check(f, "grid max by hand", xs, 15, want, tol);
  free(xs);
  tc_fusion_free(f);
}

/* Random grid reductions scheduled by hand: x [rows, cols] (f32 or i32)
 * reduced (sum, max or min) over the last axis, the row split [rBIDx(G),
 * rS(steps), T] with T on TIDx (a block step, then the grid step) or
 * serial with the rows on TIDx (the grid step alone, a partial per
 * thread), the rows on BIDy or TIDx; checked against a plain C loop, two
 * runs bitwise equal. */
static void test_grid_random(void) {
  uint64_t s = 12345;
  for (int c = 0; c < 10; c++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    int64_t rows = 1 + (int64_t)(s % 4), cols = 1 + (int64_t)((s >> 8) % 150000);
    int op = (int)((s >> 32) % 3), integer = (int)((s >> 36) & 1), thread_red = (int)((s >> 37) & 1);
    int64_t t = (int64_t)32 << ((s >> 40) % 4), steps = 1 + (int64_t)((s >> 44) % 24);
    tc_fusion *f = tc_fusion_new();
    int64_t shape[2] = {rows, cols};
    tc_tensor *x = tc_input(f, integer ? TC_I32 : TC_F32, 2, shape);
    int last = 1;
    tc_tensor *y = tc_reduce(f, (tc_reduce_op)op, x, 1, &last);
    OK(f, tc_add_output(f, y));
    tc_tensor *acc = tc_cache_before(y);
    TC_REQUIRE(acc, "%s", tc_fusion_error(f));
    OK(f, tc_split(acc, 1, t, 1));     /* [rows, r(cols / t), r t] */
    OK(f, tc_split(acc, 1, steps, 1)); /* [rows, rG, r steps, r t] */
    OK(f, tc_parallelize(acc, 0, thread_red ? TC_BIDY : TC_TIDX));
    OK(f, tc_parallelize(acc, 1, TC_BIDX));
    if (thread_red) OK(f, tc_parallelize(acc, 3, TC_TIDX));
    OK(f, tc_propagate_transforms(acc));
    OK(f, tc_parallelize_all_like(acc));
    int64_t n = rows * cols;
    void *xs = malloc((size_t)n * 4);
    float *xf = xs;
    int32_t *xi = xs;
    fill(xf, n, (uint64_t)c + 100);
    for (int64_t i = 0; integer && i < n; i++) xi[i] = (int32_t)(xf[i] * 1000.0f);
    double want[4], tol[4];
    for (int64_t r = 0; r < rows; r++) {
      double v = op == TC_REDUCE_SUM ? 0 : op == TC_REDUCE_MAX ? -INFINITY : INFINITY, a = 0;
      for (int64_t i = 0; i < cols; i++) {
        double e = integer ? (double)xi[r * cols + i] : (double)xf[r * cols + i];
        v = op == TC_REDUCE_SUM ? v + e : op == TC_REDUCE_MAX ? fmax(v, e) : fmin(v, e);
        a += fabs(e);
      }
      want[r] = v;
      tol[r] = op == TC_REDUCE_SUM && !integer ? a * (double)(cols + 16) * ldexp(1.0, -24) * 2 : 0;
    }
    char what[160];
    snprintf(what, sizeof what, "grid %s %s %lldx%lld, t %lld (%s), %lld steps",
             op == TC_REDUCE_SUM ? "sum" : op == TC_REDUCE_MAX ? "max" : "min", integer ? "i32" : "f32",
             (long long)rows, (long long)cols, (long long)t, thread_red ? "TIDx" : "serial",
             (long long)steps);
    if (integer) { /* run_and_check compares floats: compare the i32 result here */
      tc_compile_options o = {TC_TARGET_OPENCL, NULL, "grid_i32"};
      tc_status st;
      tc_kernel *k = tc_compile(f, &o, &st);
      TC_CHECK(k != NULL, "%s: %s", what, tc_fusion_error(f));
      int32_t out[4] = {0};
      void *args[2] = {xs, out};
      if (k && (st = tc_kernel_run(k, args, NULL, NULL)) != TC_ERR_NO_DEVICE) {
        TC_CHECK(st == TC_OK, "%s: %s", what, tc_kernel_error(k));
        for (int64_t r = 0; r < rows; r++)
          TC_CHECK(out[r] == (int32_t)want[r], "%s: row %lld = %d, want %.0f", what, (long long)r,
                   out[r], want[r]);
      }
      tc_kernel_free(k);
    } else {
      run_and_check(f, what, xf, rows, want, tol);
    }
    free(xs);
    tc_fusion_free(f);
  }
}

/* Schedules y = sum over the last axis of x [rows, cols] (copied out of
 * registers) with the row [rBIDx(cols / 256), rTIDx(256)]; returns the
 * register tensor. */
static tc_tensor *grid_sum(tc_fusion *f, int64_t rows, int64_t cols, tc_tensor **x, tc_tensor **y) {
  int64_t shape[2] = {rows, cols};
  *x = tc_input(f, TC_F32, 2, shape);
  int last = 1;
  *y = tc_reduce(f, TC_REDUCE_SUM, *x, 1, &last);
  tc_add_output(f, *y);
  tc_tensor *acc = tc_cache_before(*y);
  tc_split(acc, 1, 256, 1);
  tc_parallelize(acc, 1, TC_BIDX);
  tc_parallelize(acc, 2, TC_TIDX);
  return acc;
}

/* Propagates ref's schedule to every tensor of f, then expects
 * tc_compile to refuse f with a message holding every one of words. */
static void expect_refusal(tc_fusion *f, tc_tensor *ref, const char *what, const char *const *words) {
  OK(f, tc_propagate_transforms(ref));
  OK(f, tc_parallelize_all_like(ref));
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "refused"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_CHECK(k == NULL, "%s: compiled, want a refusal", what);
  tc_kernel_free(k);
  for (int i = 0; words[i]; i++)
    TC_CHECK(strstr(tc_fusion_error(f), words[i]) != NULL, "%s: '%s' not in: %s", what, words[i],
             tc_fusion_error(f));
}

static void test_refusals(void) {
  tc_tensor *x, *y;
  /* a reduction axis on BIDy: grid reductions are over BIDx */
  tc_fusion *f = tc_fusion_new();
  tc_tensor *acc = grid_sum(f, 4, 4096, &x, &y);
  OK(f, tc_parallelize(acc, 1, TC_BIDY));
  const char *bidy[] = {tc_tensor_name(acc), "reduction axis 1", "BIDy", "over BIDx only", NULL};
  expect_refusal(f, acc, "reduction on BIDy", bidy);
  tc_fusion_free(f);
  /* a grid reduction with a serial iteration loop (the rows) */
  f = tc_fusion_new();
  acc = grid_sum(f, 4, 4096, &x, &y);
  const char *serial[] = {tc_tensor_name(acc), "axis 0", "serial loop", "grid reduction", NULL};
  expect_refusal(f, acc, "grid reduction with a serial row loop", serial);
  tc_fusion_free(f);
  /* a grid reduction into shared memory */
  f = tc_fusion_new();
  acc = grid_sum(f, 4, 4096, &x, &y);
  OK(f, tc_parallelize(acc, 0, TC_BIDY));
  OK(f, tc_set_memory_type(acc, TC_MEM_SHARED));
  const char *shared[] = {tc_tensor_name(acc), "BIDx", "shared memory", "tc_cache_before", NULL};
  expect_refusal(f, acc, "grid reduction in shared memory", shared);
  tc_fusion_free(f);
  /* a normalization after a grid reduction: its row spans the blocks */
  f = tc_fusion_new();
  int64_t shape[2] = {2, 4096};
  x = tc_input(f, TC_F32, 2, shape);
  int last = 1;
  tc_tensor *s = tc_reduce(f, TC_REDUCE_SUM, x, 1, &last);
  y = tc_binary(f, TC_DIV, x, s);
  OK(f, tc_add_output(f, y));
  OK(f, tc_split(s, 1, 256, 1));
  OK(f, tc_parallelize(s, 0, TC_BIDY));
  OK(f, tc_parallelize(s, 1, TC_BIDX));
  OK(f, tc_parallelize(s, 2, TC_TIDX));
  const char *norm[] = {tc_tensor_name(y), tc_tensor_name(s), "BIDx", "last block", NULL};
  expect_refusal(f, s, "normalization after a grid reduction", norm);
  tc_fusion_free(f);
  /* a persistent row in shared memory larger than the arch's (sm_90:
   * 227 KiB; 65537 floats are 256 KiB) */
  f = tc_fusion_new();
  shape[1] = 65537;
  x = tc_input(f, TC_F32, 2, shape);
  tc_tensor *e = tc_unary(f, TC_EXP, x);
  s = tc_reduce(f, TC_REDUCE_SUM, e, 1, &last);
  y = tc_binary(f, TC_DIV, e, s);
  OK(f, tc_add_output(f, y));
  OK(f, tc_split(y, 1, 1024, 1));
  OK(f, tc_parallelize(y, 0, TC_BIDX));
  OK(f, tc_parallelize(y, 2, TC_TIDX));
  OK(f, tc_propagate_transforms(y));
  OK(f, tc_parallelize_all_like(y));
  OK(f, tc_set_memory_type(e, TC_MEM_SHARED));
  tc_compile_options o = {TC_TARGET_CUDA, "sm_90a", "persistent"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_CHECK(k == NULL, "a 256 KiB row in shared memory compiled for sm_90a");
  tc_kernel_free(k);
  char bytes[32]; /* 65 steps of 1024 threads, 4 bytes each */
  snprintf(bytes, sizeof bytes, "%d bytes", 65 * 1024 * 4);
  const char *words[] = {tc_tensor_name(e), bytes, "allocation axis iTIDx{1024}", "allows at most", NULL};
  for (int i = 0; words[i]; i++)
    TC_CHECK(strstr(tc_fusion_error(f), words[i]) != NULL, "'%s' not in: %s", words[i],
             tc_fusion_error(f));
  tc_fusion_free(f);
}

/* NVRTC (CUDA, sm_90a) and hipcc (HIP, gfx90a) compile the two-pass
 * softmax and RMSNorm and the grid sum. */
static void test_device_compilers(void) {
  for (int t = TC_TARGET_CUDA; t <= TC_TARGET_HIP; t++)
    for (int kind = 0; kind < 3; kind++) {
      tc_fusion *f = tc_fusion_new();
      tc_tensor *y = build(f, kind, 2, 65537);
      TC_REQUIRE(y, "%s", tc_fusion_error(f));
      OK(f, tc_add_output(f, y));
      OK(f, tc_schedule_auto(f, (tc_target)t, NULL));
      tc_compile_options o = {(tc_target)t, NULL, kname[kind]};
      tc_status st;
      tc_kernel *k = tc_compile(f, &o, &st);
      TC_CHECK(k != NULL, "%s %s: %s", tc_target_name((tc_target)t), kname[kind], tc_fusion_error(f));
      if (k) {
        if (kind == K_SUM)
          TC_CHECK(strstr(tc_kernel_source(k), t == TC_TARGET_CUDA || t == TC_TARGET_HIP
                                                   ? "atomicAdd(&tc_ws[" : "atomic_inc(") != NULL,
                   "the grid sum has no atomic count");
        st = tc_kernel_build(k, NULL);
        if (st == TC_ERR_UNSUPPORTED) { /* no NVRTC / hipcc on this machine */
          tc_kernel_free(k), tc_fusion_free(f);
          TC_SKIP("%s compiler missing", tc_target_name((tc_target)t));
        }
        TC_CHECK(st == TC_OK, "%s %s does not build: %s", tc_target_name((tc_target)t), kname[kind],
                 tc_kernel_error(k));
      }
      tc_kernel_free(k);
      tc_fusion_free(f);
    }
}

int main(void) {
  TC_RUN(test_refusals);
  TC_RUN(test_device_compilers);
  TC_RUN(test_grid_max_by_hand);
  TC_RUN(test_shared_form);
  TC_RUN(test_grid_random);
  TC_RUN(test_grid_sum_million);
  TC_RUN(test_long_rows_auto);
  TC_MAIN_END();
}
