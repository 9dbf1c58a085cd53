/* test_welford.c - mean and variance in one pass (tc_welford).
 *
 * Each fusion computes the mean and the variance of the rows of x (and
 * LayerNorm on them), is compiled for OpenCL, run on the default device
 * (PoCL) and compared with a plain C two-pass computation in double and
 * with tc_reference_run.  The schedules cover the automatic one at the
 * ragged shapes 3 x 1, 7 x 1000, 33 x 4099 and 2 x 65537 in f32, f16 and
 * bf16, a serial Welford per thread, the block merge over TIDx in warp
 * steps (one warp, several warps) and the shared-memory tree over TIDy
 * and over a TIDx that is not a power of two.  Rows with a large mean and
 * a small variance show what the one pass is for: the sum of squares
 * minus the squared mean, in f32, loses the variance; Welford keeps it.
 * CUDA (NVRTC) and HIP (hipcc) build the kernels where the compilers
 * are installed; misuse gets a message. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

static uint64_t rng = 88172645463325252ull;
static double urand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}

/* x[i] = base + spread * u, u in [-1, 1), rounded to dtype t (stored
 * in buf as t's bits) and returned as floats in xf. */
static void fill(tc_dtype t, void *buf, float *xf, int64_t n, double base, double spread) {
  for (int64_t i = 0; i < n; i++) {
    float v = (float)(base + spread * (2 * urand() - 1));
    if (t == TC_F16) ((uint16_t *)buf)[i] = tc_f32_to_f16(v), v = tc_f16_to_f32(((uint16_t *)buf)[i]);
    else if (t == TC_BF16) ((uint16_t *)buf)[i] = tc_f32_to_bf16(v), v = tc_bf16_to_f32(((uint16_t *)buf)[i]);
    else ((float *)buf)[i] = v;
    xf[i] = v;
  }
}

/* The mean and the population variance of each row, in double, two
 * passes. */
static void row_stats(const float *x, int64_t rows, int64_t cols, double *mean, double *var) {
  for (int64_t r = 0; r < rows; r++) {
    double s = 0, q = 0;
    for (int64_t c = 0; c < cols; c++) s += x[r * cols + c];
    s /= (double)cols;
    for (int64_t c = 0; c < cols; c++) q += (x[r * cols + c] - s) * (x[r * cols + c] - s);
    mean[r] = s, var[r] = q / (double)cols;
  }
}

/* x [rows, cols] of dtype t; outputs the mean and the variance [rows, 1]. */
static tc_fusion *stats_fusion(tc_dtype t, int64_t rows, int64_t cols, tc_tensor **w, tc_tensor **mean,
                               tc_tensor **var) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {rows, cols};
  tc_tensor *x = tc_input(f, t, 2, shape);
  int ax = 1;
  *w = tc_welford(f, x, 1, &ax, mean, var);
  TC_CHECK(*w && *mean && *var, "tc_welford: %s", tc_fusion_error(f));
  if (!*w) return f;
  TC_CHECK_EQ_INT(tc_tensor_extent(*mean, 1), 1);
  TC_CHECK_EQ_INT(tc_tensor_dtype(*var), TC_F32);
  OK(f, tc_add_output(f, *mean));
  OK(f, tc_add_output(f, *var));
  return f;
}

/* Compiles and runs f (inputs: x; outputs: mean, var) and checks both
 * outputs, and tc_reference_run's, against the double statistics of xf:
 * the mean within tol_m * (|mean| + spread), the variance within tol_v *
 * var + abs_v.  Returns 0 when there is no device. */
static int run_stats(tc_fusion *f, const char *name, void *x, const float *xf, int64_t rows, int64_t cols,
                     double tol_m, double spread, double tol_v, double abs_v, double *worst_var) {
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, name};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_CHECK(k != NULL, "compile %s: %s", name, tc_fusion_error(f));
  if (!k) return 1;
  float *m = malloc((size_t)rows * sizeof(float)), *v = malloc((size_t)rows * sizeof(float));
  float *rm = malloc((size_t)rows * sizeof(float)), *rv = malloc((size_t)rows * sizeof(float));
  double *wm = malloc((size_t)rows * sizeof(double)), *wv = malloc((size_t)rows * sizeof(double));
  row_stats(xf, rows, cols, wm, wv);
  void *args[3] = {x, m, v}, *rargs[3] = {x, rm, rv};
  st = tc_kernel_run(k, args, NULL, NULL);
  int ran = st != TC_ERR_NO_DEVICE;
  if (ran) {
    TC_CHECK(st == TC_OK, "run %s: %s", name, tc_kernel_error(k));
    OK(f, tc_reference_run(f, rargs));
    int bad = 0;
    if (worst_var) *worst_var = 0;
    for (int64_t r = 0; r < rows && st == TC_OK; r++) {
      double mt = tol_m * (fabs(wm[r]) + spread), vt = tol_v * wv[r] + abs_v;
      if (worst_var && fabs(v[r] - wv[r]) > *worst_var) *worst_var = fabs(v[r] - wv[r]);
      if ((!(fabs(m[r] - wm[r]) <= mt) || !(fabs(v[r] - wv[r]) <= vt)) && bad++ < 4)
        TC_CHECK(0, "%s row %lld: kernel mean %.9g var %.9g, want %.9g %.9g (tolerances %.3g %.3g)\n%s", name,
                 (long long)r, m[r], v[r], wm[r], wv[r], mt, vt, bad == 1 ? tc_kernel_source(k) : "");
      if ((!(fabs(rm[r] - wm[r]) <= mt) || !(fabs(rv[r] - wv[r]) <= vt)) && bad++ < 4)
        TC_CHECK(0, "%s row %lld: reference mean %.9g var %.9g, want %.9g %.9g", name, (long long)r, rm[r],
                 rv[r], wm[r], wv[r]);
    }
  }
  free(m), free(v), free(rm), free(rv), free(wm), free(wv);
  tc_kernel_free(k);
  return ran;
}

/* The automatic schedule at the ragged shapes, three dtypes.  The kernel
 * adds in f32 in its order: the mean within about cols * 2^-24 relative
 * of the magnitudes, the variance likewise relative to itself (the data
 * spread about a mean of 1.5 keeps it well conditioned). */
static void test_auto_shapes_dtypes(void) {
  static const int64_t shapes[][2] = {{3, 1}, {7, 1000}, {33, 4099}, {2, 65537}};
  static const tc_dtype types[] = {TC_F32, TC_F16, TC_BF16};
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
    for (size_t ti = 0; ti < 3; ti++) {
      int64_t rows = shapes[s][0], cols = shapes[s][1], n = rows * cols;
      tc_tensor *w, *mean, *var;
      tc_fusion *f = stats_fusion(types[ti], rows, cols, &w, &mean, &var);
      OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
      void *x = malloc((size_t)n * 4);
      float *xf = malloc((size_t)n * sizeof(float));
      fill(types[ti], x, xf, n, 1.5, 2.0);
      char name[64];
      snprintf(name, sizeof name, "welford_%s_%lldx%lld", tc_dtype_name(types[ti]), (long long)rows,
               (long long)cols);
      double tol = (double)(cols + 64) * ldexp(1.0, -24) * 8;
      int ran = run_stats(f, name, x, xf, rows, cols, tol, 2.0, tol, 1e-12, NULL);
      free(x), free(xf);
      tc_fusion_free(f);
      if (!ran) TC_SKIP("no OpenCL device");
    }
}

/* Rows around 10000 with values spread by 0.5: the variance (about
 * 0.083) is 10^-9 of the mean's square.  E[x^2] - E[x]^2 in f32 loses it
 * to cancellation (an f32 near 10^8 is a multiple of 8); Welford keeps
 * it to a few parts in 10^4.  Both with the same automatic schedule. */
static void test_large_mean_small_variance(void) {
  int64_t rows = 4, cols = 4099, n = rows * cols;
  rng = 88172645463325252ull; /* the same rows whatever ran before (docs/reductions.md quotes them) */
  float *x = malloc((size_t)n * sizeof(float)), *xf = malloc((size_t)n * sizeof(float));
  fill(TC_F32, x, xf, n, 10000.0, 0.5);
  tc_tensor *w, *mean, *var;
  tc_fusion *f = stats_fusion(TC_F32, rows, cols, &w, &mean, &var);
  OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  double welford_err = 0;
  if (!run_stats(f, "welford_large_mean", x, xf, rows, cols, 1e-6, 0, 1e-3, 0, &welford_err)) {
    free(x), free(xf), tc_fusion_free(f);
    TC_SKIP("no OpenCL device");
  }
  tc_fusion_free(f);
  /* the naive form: sum(x^2) / n - (sum(x) / n)^2 */
  f = tc_fusion_new();
  int64_t shape[2] = {rows, cols};
  tc_tensor *in = tc_input(f, TC_F32, 2, shape);
  int ax = 1;
  tc_tensor *m = tc_binary_scalar(f, TC_MUL, tc_reduce(f, TC_REDUCE_SUM, in, 1, &ax), 1.0 / (double)cols);
  tc_tensor *q = tc_binary_scalar(f, TC_MUL, tc_reduce(f, TC_REDUCE_SUM, tc_binary(f, TC_MUL, in, in), 1, &ax),
                                  1.0 / (double)cols);
  tc_tensor *v = tc_binary(f, TC_SUB, q, tc_binary(f, TC_MUL, m, m));
  OK(f, tc_add_output(f, v));
  OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "naive_variance"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_REQUIRE(k, "%s", tc_fusion_error(f));
  float out[4];
  double wm[4], wv[4], naive_err = 0;
  void *args[2] = {x, out};
  TC_CHECK(tc_kernel_run(k, args, NULL, NULL) == TC_OK, "%s", tc_kernel_error(k));
  row_stats(xf, rows, cols, wm, wv);
  for (int r = 0; r < rows; r++) naive_err = fmax(naive_err, fabs(out[r] - wv[r]));
  TC_CHECK(welford_err < 1e-3 * wv[0], "Welford's variance is off by %.3g (variance %.3g)", welford_err, wv[0]);
  TC_CHECK(naive_err > 100 * welford_err && naive_err > 0.1 * wv[0],
           "the sum of squares was expected to lose the variance: off by %.3g, Welford by %.3g", naive_err,
           welford_err);
  printf("  variance %.4f of rows about 10000: sum of squares off by %.3g, Welford by %.3g\n", wv[0],
         naive_err, welford_err);
  tc_kernel_free(k);
  tc_fusion_free(f);
  free(x), free(xf);
}

/* By hand: the state's schedule as given, the outputs scheduled like it.
 * kind 0: one row per thread (TIDx), Welford serial over the row; 1: the
 * row over TIDx (threads lanes) as block merge; 2: the row over TIDy
 * (the shared-memory tree), 3 rows per block on TIDx. */
static void check_manual(int kind, int64_t rows, int64_t cols, int64_t threads) {
  tc_tensor *w, *mean, *var;
  tc_fusion *f = stats_fusion(TC_F32, rows, cols, &w, &mean, &var);
  if (kind == 0) {
    OK(f, tc_parallelize(w, 0, TC_TIDX));
  } else if (kind == 1) {
    OK(f, tc_split(w, 1, threads, 1));
    OK(f, tc_parallelize(w, 0, TC_BIDX));
    OK(f, tc_parallelize(w, 2, TC_TIDX));
  } else {
    OK(f, tc_split(w, 1, threads, 1));
    OK(f, tc_split(w, 0, 3, 1));
    OK(f, tc_parallelize(w, 0, TC_BIDX));
    OK(f, tc_parallelize(w, 1, TC_TIDX));
    OK(f, tc_parallelize(w, 3, TC_TIDY));
  }
  OK(f, tc_propagate_transforms(w));
  OK(f, tc_parallelize_all_like(w));
  int64_t n = rows * cols;
  float *x = malloc((size_t)n * sizeof(float)), *xf = malloc((size_t)n * sizeof(float));
  fill(TC_F32, x, xf, n, -3.0, 4.0);
  char name[64];
  snprintf(name, sizeof name, "welford_manual%d_%lldx%lld_%lld", kind, (long long)rows, (long long)cols,
           (long long)threads);
  double tol = (double)(cols + 64) * ldexp(1.0, -24) * 8;
  int ran = run_stats(f, name, x, xf, rows, cols, tol, 4.0, tol, 1e-12, NULL);
  free(x), free(xf);
  tc_fusion_free(f);
  if (!ran) TC_SKIP("no OpenCL device");
}

static void test_manual_schedules(void) {
  check_manual(0, 5, 333, 0);
  check_manual(1, 3, 1000, 16);  /* half a warp */
  check_manual(1, 2, 4099, 128); /* four warps, then their states */
  check_manual(1, 7, 100, 24);   /* not a power of two: the tree */
  check_manual(2, 7, 1000, 8);   /* TIDy: the tree with a stride */
}

/* Every thread of a row ends the block merge with the same bits: the
 * mean and the variance expanded over the row (each element from its own
 * thread's registers) are one value per row, for the warp steps within
 * one warp (32 threads, where each lane keeps its own result; the lower
 * lane's state comes first in each step) and over four (128: the warps'
 * totals are combined in order), and the tree (TIDx of 24). */
static void check_same_bits(int64_t threads, int64_t cols) {
  int64_t rows = 16, n = rows * cols;
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {rows, cols};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape), *mean, *var;
  int ax = 1;
  tc_tensor *w = tc_welford(f, x, 1, &ax, &mean, &var);
  TC_REQUIRE(w, "%s", tc_fusion_error(f));
  /* zeros + the mean, zeros + the variance: each thread's own */
  tc_tensor *zero = tc_binary(f, TC_SUB, x, x);
  tc_tensor *z = tc_binary(f, TC_ADD, zero, tc_expand(f, mean, 2, shape));
  tc_tensor *z2 = tc_binary(f, TC_ADD, zero, tc_expand(f, var, 2, shape));
  TC_REQUIRE(z && z2, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, z));
  OK(f, tc_add_output(f, z2));
  OK(f, tc_split(z, 1, threads, 1));
  OK(f, tc_parallelize(z, 0, TC_BIDX));
  OK(f, tc_parallelize(z, 2, TC_TIDX));
  OK(f, tc_propagate_transforms(z));
  OK(f, tc_parallelize_all_like(z));
  float *X = malloc((size_t)n * sizeof(float)), *Z = malloc((size_t)2 * n * sizeof(float));
  fill(TC_F32, X, X, n, 7.0, 3.0);
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "welford_bits"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_REQUIRE(k, "%s", tc_fusion_error(f));
  void *args[3] = {X, Z, Z + n};
  st = tc_kernel_run(k, args, NULL, NULL);
  if (st != TC_ERR_NO_DEVICE) {
    TC_CHECK(st == TC_OK, "%s", tc_kernel_error(k));
    int bad = 0;
    for (int64_t i = 0; i < 2 * n && st == TC_OK; i++)
      if (memcmp(&Z[i], &Z[i / cols * cols], sizeof(float)) != 0 && bad++ < 3)
        TC_CHECK(0, "%lld threads: row %lld column %lld has %.9g, column 0 %.9g", (long long)threads,
                 (long long)(i / cols), (long long)(i % cols), Z[i], Z[i / cols * cols]);
  }
  tc_kernel_free(k);
  free(X), free(Z);
  tc_fusion_free(f);
  if (st == TC_ERR_NO_DEVICE) TC_SKIP("no OpenCL device");
}

static void test_same_bits_in_every_thread(void) {
  check_same_bits(128, 4099);
  check_same_bits(128, 300); /* 44 threads with 3 elements, 84 with 2 */
  check_same_bits(32, 45);
  check_same_bits(24, 1000);
}

/* LayerNorm with affine weights built on the mean and variance, the
 * output of dtype t. */
static void test_layernorm_affine(void) {
  int64_t rows = 33, cols = 4099, n = rows * cols;
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {rows, cols}, wshape[2] = {1, cols};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape);
  tc_tensor *g = tc_input(f, TC_F32, 2, wshape), *b = tc_input(f, TC_F32, 2, wshape);
  tc_tensor *mean, *var;
  int ax = 1;
  TC_REQUIRE(tc_welford(f, x, 1, &ax, &mean, &var), "%s", tc_fusion_error(f));
  tc_tensor *r = tc_unary(f, TC_RECIPROCAL, tc_unary(f, TC_SQRT, tc_binary_scalar(f, TC_ADD, var, 1e-5)));
  tc_tensor *y = tc_binary(f, TC_ADD, tc_binary(f, TC_MUL, tc_binary(f, TC_MUL, tc_binary(f, TC_SUB, x, mean), r), g), b);
  OK(f, tc_add_output(f, y));
  OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  float *X = malloc((size_t)n * sizeof(float)), *Y = malloc((size_t)n * sizeof(float));
  float *G = malloc((size_t)cols * sizeof(float)), *B = malloc((size_t)cols * sizeof(float));
  fill(TC_F32, X, X, n, 0.5, 3.0);
  fill(TC_F32, G, G, cols, 1.0, 0.5);
  fill(TC_F32, B, B, cols, 0.0, 1.0);
  double *wm = malloc((size_t)rows * sizeof(double)), *wv = malloc((size_t)rows * sizeof(double));
  row_stats(X, rows, cols, wm, wv);
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "layernorm_affine"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_REQUIRE(k, "%s", tc_fusion_error(f));
  void *args[4] = {X, G, B, Y};
  st = tc_kernel_run(k, args, NULL, NULL);
  if (st != TC_ERR_NO_DEVICE) {
    TC_CHECK(st == TC_OK, "%s", tc_kernel_error(k));
    int bad = 0;
    for (int64_t i = 0; i < n && st == TC_OK; i++) {
      int64_t rr = i / cols, c = i % cols;
      double want = (X[i] - wm[rr]) / sqrt(wv[rr] + 1e-5) * G[c] + B[c];
      double tol = 1e-4 * (fabs(want) + fabs(B[c]) + 1);
      if (!(fabs(Y[i] - want) <= tol) && bad++ < 4)
        TC_CHECK(0, "layernorm element %lld: %.9g, want %.9g", (long long)i, Y[i], want);
    }
  }
  tc_kernel_free(k);
  free(X), free(Y), free(G), free(B), free(wm), free(wv);
  tc_fusion_free(f);
  if (st == TC_ERR_NO_DEVICE) TC_SKIP("no OpenCL device");
}

/* NVRTC (CUDA) and hipcc (HIP) build the block merge in warp shuffles
 * (64 threads per row: two CUDA warps, one AMD wavefront) and the tree;
 * no GPU is needed to compile. */
static void test_device_compilers(void) {
  for (int t = TC_TARGET_CUDA; t <= TC_TARGET_HIP; t++)
    for (int kind = 1; kind <= 2; kind++) {
      tc_tensor *w, *mean, *var;
      tc_fusion *f = stats_fusion(TC_BF16, 6, 1000, &w, &mean, &var);
      OK(f, tc_split(w, 1, 64, 1));
      OK(f, tc_parallelize(w, 0, TC_BIDX));
      OK(f, tc_parallelize(w, 2, kind == 1 ? TC_TIDX : TC_TIDY));
      OK(f, tc_propagate_transforms(w));
      OK(f, tc_parallelize_all_like(w));
      tc_compile_options o = {(tc_target)t, NULL, "welford_stats"};
      tc_status st;
      tc_kernel *k = tc_compile(f, &o, &st);
      TC_CHECK(k != NULL, "%s: %s", tc_target_name((tc_target)t), tc_fusion_error(f));
      if (k && kind == 1)
        TC_CHECK(strstr(tc_kernel_source(k), t == TC_TARGET_CUDA ? "__shfl_xor_sync(0xffffffffu, tc_q, tc_o)"
                                                                 : "__shfl_xor(tc_q, tc_o)") != NULL,
                 "%s: no warp shuffle of M2:\n%s", tc_target_name((tc_target)t), tc_kernel_source(k));
      if (k) {
        st = tc_kernel_build(k, NULL);
        if (st == TC_ERR_UNSUPPORTED) {
          printf("  skip %s build: %s\n", tc_target_name((tc_target)t), tc_kernel_error(k));
        } else {
          TC_CHECK(st == TC_OK, "%s does not build: %s", tc_target_name((tc_target)t), tc_kernel_error(k));
        }
      }
      tc_kernel_free(k);
      tc_fusion_free(f);
    }
}

static void test_misuse(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {4, 8};
  tc_tensor *xi = tc_input(f, TC_I32, 2, shape), *x = tc_input(f, TC_F32, 2, shape);
  tc_tensor *mean = x, *var = x;
  int ax = 1, bad = 2;
  TC_CHECK(tc_welford(f, xi, 1, &ax, &mean, &var) == NULL && mean == NULL && var == NULL &&
               strstr(tc_fusion_error(f), "floating-point"),
           "%s", tc_fusion_error(f));
  TC_CHECK(tc_welford(f, x, 1, &bad, &mean, &var) == NULL && strstr(tc_fusion_error(f), "tc_welford: axis 2"),
           "%s", tc_fusion_error(f));
  TC_CHECK(tc_welford(f, x, 1, &ax, NULL, &var) == NULL, "NULL mean accepted");
  tc_tensor *w = tc_welford(f, x, 1, &ax, &mean, &var);
  TC_REQUIRE(w, "%s", tc_fusion_error(f));
  TC_CHECK(tc_add_output(f, w) == TC_ERR_ARGUMENT && strstr(tc_fusion_error(f), "Welford state"), "%s",
           tc_fusion_error(f));
  TC_CHECK(tc_cache_before(w) == NULL && strstr(tc_fusion_error(f), "Welford state"), "%s", tc_fusion_error(f));
  TC_CHECK(tc_cache_after(w) == NULL && strstr(tc_fusion_error(f), "Welford state"), "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, var));
  OK(f, tc_set_memory_type(w, TC_MEM_SHARED));
  tc_status st;
  TC_CHECK(tc_compile(f, NULL, &st) == NULL && strstr(tc_fusion_error(f), "Welford state"), "%s",
           tc_fusion_error(f));
  tc_fusion_free(f);

  /* a Welford state's reduction axis over blocks: no grid merge */
  f = tc_fusion_new();
  x = tc_input(f, TC_F32, 2, shape);
  w = tc_welford(f, x, 1, &ax, &mean, &var);
  TC_REQUIRE(w, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, var));
  OK(f, tc_parallelize(w, 1, TC_BIDX));
  st = TC_OK;
  TC_CHECK(tc_compile(f, NULL, &st) == NULL && st == TC_ERR_UNSUPPORTED &&
               strstr(tc_fusion_error(f), "bound to BIDx") && strstr(tc_fusion_error(f), "Welford"),
           "%s", tc_fusion_error(f));
  tc_fusion_free(f);
}

int main(void) {
  TC_RUN(test_misuse);
  TC_RUN(test_manual_schedules);
  TC_RUN(test_same_bits_in_every_thread);
  TC_RUN(test_large_mean_small_variance);
  TC_RUN(test_layernorm_affine);
  TC_RUN(test_auto_shapes_dtypes);
  TC_RUN(test_device_compilers);
  TC_MAIN_END();
}
