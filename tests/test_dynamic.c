/* test_dynamic.c - one kernel for a whole family of leading extents
 * (tc_input_sym, tc_kernel_run_sizes; docs/dynamic.md).
 *
 * A pointwise fusion and a softmax (tc_schedule_auto's inner reduction)
 * over [M, N] with M a size variable are compiled once each and run on
 * PoCL at a dozen values of M (1, primes, multiples of the block, a large
 * one), each checked against a plain C loop; the second compile of the
 * same fusion is a cache hit and its source holds no value of M;
 * misuse: a value that breaks the divisor or the bound, a missing size,
 * tc_kernel_run without sizes, tc_reference_run (fixed shapes only), the variable moved by a
 * permute, a matmul, an unrolled loop over M; the unscheduled fusion (a serial loop over M) runs.  CUDA (NVRTC) and HIP (hipcc)
 * build the kernels where they exist. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "device_test_util.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

static const int64_t Ms[] = {1, 2, 3, 7, 13, 31, 32, 64, 127, 128, 129, 257, 1000, 4099};
#define NM ((int)(sizeof Ms / sizeof Ms[0]))
#define MAXM 4099

/* y = relu(a * b + a) over [M, n], M the size variable "M" */
static tc_fusion *pointwise(int64_t n, int64_t divisor) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {-1, n};
  tc_tensor *a = tc_input_sym(f, TC_F32, 2, shape, "M", divisor);
  tc_tensor *b = tc_input_sym(f, TC_F32, 2, shape, "M", divisor);
  TC_CHECK(a && b, "%s", tc_fusion_error(f));
  tc_tensor *y = tc_unary(f, TC_RELU, tc_binary(f, TC_ADD, tc_binary(f, TC_MUL, a, b), a));
  TC_CHECK(y, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  return f;
}

/* softmax over the rows of x [M, n] */
static tc_fusion *softmax(int64_t n) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {-1, n};
  tc_tensor *x = tc_input_sym(f, TC_F32, 2, shape, "M", 1);
  TC_CHECK(x, "%s", tc_fusion_error(f));
  int ax = 1;
  tc_tensor *mx = tc_reduce(f, TC_REDUCE_MAX, x, 1, &ax);
  tc_tensor *e = tc_unary(f, TC_EXP, tc_binary(f, TC_SUB, x, mx));
  tc_tensor *s = tc_reduce(f, TC_REDUCE_SUM, e, 1, &ax);
  tc_tensor *y = tc_binary(f, TC_DIV, e, s);
  TC_CHECK(y, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  return f;
}

static float value(int64_t i) { return (float)((i * 7919) % 1013) / 1013.0f * 4.0f - 2.0f; }

/* Runs k at every M of Ms on [M, n] inputs (nin of them) against want();
 * returns 0 when there is no OpenCL device. */
static int sweep(tc_kernel *k, int nin, int64_t n, void (*want)(const float *a, const float *b, int64_t m, int64_t n, double *w)) {
  size_t cap = (size_t)MAXM * (size_t)n;
  float *a = malloc(cap * sizeof(float)), *b = malloc(cap * sizeof(float)), *y = malloc(cap * sizeof(float));
  double *w = malloc(cap * sizeof(double));
  for (size_t i = 0; i < cap; i++) a[i] = value((int64_t)i), b[i] = value((int64_t)i * 3 + 1);
  int ran = 1;
  for (int r = 0; r < NM; r++) {
    int64_t m = Ms[r];
    /* one row past the end of y stays as it was: the kernel writes M rows */
    for (size_t i = 0; i < cap; i++) y[i] = -77.0f;
    void *args[4] = {NULL, a, nin > 1 ? (void *)b : (void *)y, y};
    tc_status st = tc_kernel_run_sizes(k, args, &m, 1, NULL, NULL);
    if (st == TC_ERR_NO_DEVICE) {
      ran = 0;
      break;
    }
    TC_CHECK(st == TC_OK, "M = %lld: %s", (long long)m, tc_kernel_error(k));
    want(a, b, m, n, w);
    int bad = 0;
    for (int64_t i = 0; i < m * n && bad < 3; i++)
      if (fabs(y[i] - w[i]) > 1e-5 + 1e-4 * fabs(w[i])) {
        TC_CHECK(0, "M = %lld: y[%lld] = %g, want %g", (long long)m, (long long)i, y[i], w[i]);
        bad++;
      }
    if ((size_t)(m * n) < cap) TC_CHECK(y[m * n] == -77.0f, "M = %lld: wrote past M rows", (long long)m);
  }
  free(a), free(b), free(y), free(w);
  return ran;
}

static void want_pointwise(const float *a, const float *b, int64_t m, int64_t n, double *w) {
  for (int64_t i = 0; i < m * n; i++) {
    double v = (double)a[i] * b[i] + a[i];
    w[i] = v > 0 ? v : 0;
  }
}

static void want_softmax(const float *x, const float *unused, int64_t m, int64_t n, double *w) {
  (void)unused;
  for (int64_t r = 0; r < m; r++) {
    double mx = -INFINITY, s = 0;
    for (int64_t c = 0; c < n; c++) mx = fmax(mx, x[r * n + c]);
    for (int64_t c = 0; c < n; c++) s += exp(x[r * n + c] - mx);
    for (int64_t c = 0; c < n; c++) w[r * n + c] = exp(x[r * n + c] - mx) / s;
  }
}

static void one_kernel(tc_fusion *(*make)(int64_t), int64_t n, int nin, const char *name,
                       void (*want)(const float *, const float *, int64_t, int64_t, double *)) {
  char dir[] = "/tmp/tilec-dyn-cache.XXXXXX";
  TC_REQUIRE(mkdtemp(dir), "mkdtemp");
  setenv("TILEC_CACHE_DIR", dir, 1);
  tc_fusion *f = make(n);
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, name};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_REQUIRE(k, "%s", tc_fusion_error(f));
  TC_CHECK(tc_kernel_from_cache(k) == 0, "the first compile was a hit");
  int64_t div = 0, bound = 0;
  const char *var = tc_kernel_size_var(k, &div, &bound);
  TC_CHECK(var && strcmp(var, "M") == 0 && div == 1 && bound == 2147483647 / n,
           "size variable %s, divisor %lld, bound %lld", var ? var : "(none)", (long long)div,
           (long long)bound);
  TC_CHECK_EQ_INT(tc_kernel_nparams(k), nin + 2);
  if (!sweep(k, nin, n, want)) printf("  skip runs: no OpenCL device\n");
  /* the same fusion again: one cache entry for every M */
  tc_fusion *f2 = make(n);
  tc_kernel *k2 = tc_compile(f2, &o, &st);
  TC_CHECK(k2 && tc_kernel_from_cache(k2) == 1, "the second compile was not a cache hit");
  TC_CHECK(k2 && strcmp(tc_kernel_source(k), tc_kernel_source(k2)) == 0, "the sources differ");
  if (k2 && !sweep(k2, nin, n, want)) printf("  skip cached runs: no OpenCL device\n");
  tc_cache_stats cs;
  tc_cache_get_stats(&cs);
  TC_CHECK(cs.entries == 1, "%lld cache entries for one fusion", (long long)cs.entries);
  tc_kernel_free(k2), tc_fusion_free(f2);
  tc_cache_clear(NULL);
  rmdir(dir);
  unsetenv("TILEC_CACHE_DIR");
  builds_on_cuda_and_hip(f, name);
  tc_kernel_free(k);
  tc_fusion_free(f);
}

static tc_fusion *pointwise37(int64_t n) { return pointwise(n, 1); }

static void test_pointwise(void) { one_kernel(pointwise37, 37, 2, "dyn_pointwise", want_pointwise); }
static void test_softmax(void) { one_kernel(softmax, 1000, 1, "dyn_softmax", want_softmax); }

/* A divisor lets the pointwise kernel use vectors: M a multiple of 4 over
 * rows of 6 floats is a multiple of 4 elements; 6 alone is not. */
static void test_divisor(void) {
  tc_fusion *f = pointwise(6, 4);
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "dyn_div"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_REQUIRE(k, "%s", tc_fusion_error(f));
  TC_CHECK(strstr(tc_fusion_schedule_note(f), "vectors of 4") != NULL, "%s", tc_fusion_schedule_note(f));
  float a[48 * 6], b[48 * 6], y[48 * 6];
  for (int i = 0; i < 48 * 6; i++) a[i] = value(i), b[i] = value(2 * i + 5);
  void *args[4] = {NULL, a, b, y};
  int64_t m = 6; /* not a multiple of 4 */
  TC_CHECK(tc_kernel_run_sizes(k, args, &m, 1, NULL, NULL) == TC_ERR_ARGUMENT &&
               strstr(tc_kernel_error(k), "M is 6") && strstr(tc_kernel_error(k), "multiple of 4"),
           "%s", tc_kernel_error(k));
  m = 44;
  st = tc_kernel_run_sizes(k, args, &m, 1, NULL, NULL);
  if (st != TC_ERR_NO_DEVICE) {
    TC_CHECK(st == TC_OK, "%s", tc_kernel_error(k));
    double w[48 * 6];
    want_pointwise(a, b, m, 6, w);
    for (int i = 0; i < 44 * 6; i++)
      if (fabs(y[i] - w[i]) > 1e-5 + 1e-4 * fabs(w[i])) {
        TC_CHECK(0, "y[%d] = %g, want %g", i, y[i], w[i]);
        break;
      }
  }
  /* static fusions and symbolic ones differ in the key: another divisor, another kernel */
  tc_kernel_free(k);
  tc_fusion_free(f);
}

static void test_misuse(void) {
  tc_fusion *f = pointwise(37, 1);
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "dyn_misuse"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_REQUIRE(k, "%s", tc_fusion_error(f));
  float a[37], y[37];
  void *args[4] = {NULL, a, a, y};
  TC_CHECK(tc_kernel_run(k, args, NULL, NULL) == TC_ERR_ARGUMENT &&
               strstr(tc_kernel_error(k), "size variable M"), "%s", tc_kernel_error(k));
  TC_CHECK(tc_kernel_run_sizes(k, args, NULL, 0, NULL, NULL) == TC_ERR_ARGUMENT &&
               strstr(tc_kernel_error(k), "one size variable, M"), "%s", tc_kernel_error(k));
  int64_t m = 0;
  TC_CHECK(tc_kernel_run_sizes(k, args, &m, 1, NULL, NULL) == TC_ERR_ARGUMENT &&
               strstr(tc_kernel_error(k), "M is 0"), "%s", tc_kernel_error(k));
  TC_CHECK(tc_reference_run(f, args) == TC_ERR_UNSUPPORTED && strstr(tc_fusion_error(f), "size variable M"),
           "%s", tc_fusion_error(f));
  m = (int64_t)1 << 40;
  TC_CHECK(tc_kernel_run_sizes(k, args, &m, 1, NULL, NULL) == TC_ERR_ARGUMENT &&
               strstr(tc_kernel_error(k), "in 1.."), "%s", tc_kernel_error(k));
  tc_kernel_free(k);
  tc_fusion_free(f);

  /* a variable named again with another divisor, a fifth variable, a bad divisor or bound */
  f = tc_fusion_new();
  int64_t shape[2] = {-1, 8};
  TC_CHECK(tc_input_sym(f, TC_F32, 2, shape, "M", 1) != NULL, "%s", tc_fusion_error(f));
  TC_CHECK(tc_input_sym(f, TC_F32, 2, shape, "M", 4) == NULL &&
               strstr(tc_fusion_error(f), "the size variable M is a multiple of 1"), "%s", tc_fusion_error(f));
  int64_t small[2] = {64, 8};
  TC_CHECK(tc_input_sym(f, TC_F32, 2, small, "B", 1) != NULL && tc_input_sym(f, TC_F32, 2, small, "C", 1) &&
               tc_input_sym(f, TC_F32, 2, small, "D", 1), "%s", tc_fusion_error(f));
  TC_CHECK(tc_input_sym(f, TC_F32, 2, small, "E", 1) == NULL && strstr(tc_fusion_error(f), "at most 4"),
           "%s", tc_fusion_error(f));
  TC_CHECK(tc_input_sym(f, TC_F32, 2, shape, "M", 0) == NULL && strstr(tc_fusion_error(f), "divisor"),
           "%s", tc_fusion_error(f));
  int64_t bad[2] = {10, 8};
  TC_CHECK(tc_input_sym(f, TC_F32, 2, bad, "K", 4) == NULL && strstr(tc_fusion_error(f), "bound"),
           "%s", tc_fusion_error(f));
  tc_fusion_free(f);

  /* (reductions over the variable: tests/test_dynamic_reduce.c) */
  tc_tensor *x;
  /* a permute moves it off the leading axis */
  f = tc_fusion_new();
  x = tc_input_sym(f, TC_F32, 2, shape, "M", 1);
  int perm[2] = {1, 0};
  tc_tensor *p = tc_permute(f, x, perm);
  OK(f, tc_add_output(f, p));
  TC_CHECK(tc_compile(f, &o, &st) == NULL && strstr(tc_fusion_error(f), "only the leading axis"),
           "%s", tc_fusion_error(f));
  tc_fusion_free(f);

  /* unscheduled: M is a serial loop to M's parameter (one thread does
   * all); unrolled: refused */
  for (int unroll = 0; unroll < 2; unroll++) {
    f = tc_fusion_new();
    x = tc_input_sym(f, TC_F32, 2, shape, "M", 1);
    tc_tensor *ny = tc_unary(f, TC_NEG, x);
    OK(f, tc_add_output(f, ny));
    if (unroll) OK(f, tc_parallelize(ny, 0, TC_UNROLL));
    k = tc_compile(f, &o, &st);
    if (unroll) {
      TC_CHECK(!k && strstr(tc_fusion_error(f), "keep such axes serial or bind them to BIDx"), "%s",
               tc_fusion_error(f));
    } else {
      TC_CHECK(k != NULL, "%s", tc_fusion_error(f));
      float xs[9 * 8], ys[9 * 8 + 1];
      for (int i = 0; i < 9 * 8; i++) xs[i] = (float)i - 20.0f;
      for (int64_t mm = 1; k && mm <= 9; mm += 8) {
        for (int i = 0; i <= 9 * 8; i++) ys[i] = 99.0f;
        void *a2[3] = {NULL, xs, ys};
        st = tc_kernel_run_sizes(k, a2, &mm, 1, NULL, NULL);
        if (st == TC_ERR_NO_DEVICE) break;
        TC_CHECK(st == TC_OK, "%s", tc_kernel_error(k));
        for (int i = 0; i < mm * 8 && st == TC_OK; i++) TC_CHECK(ys[i] == -xs[i], "M %lld: y[%d] = %g", (long long)mm, i, ys[i]);
        TC_CHECK(ys[mm * 8] == 99.0f, "M %lld: wrote past M rows", (long long)mm);
      }
    }
    tc_kernel_free(k);
    tc_fusion_free(f);
  }
}

/* y = relu(A @ B + bias) with A [M, K] (M the size variable), B [K, N],
 * bias [N]: the FMA matmul schedule (given tiles, or the scheduler's) */
static tc_fusion *gemm_bias_relu(int64_t n, int64_t k, const tc_matmul_tiles *tl) {
  tc_fusion *f = tc_fusion_new();
  /* (the bound keeps C under 2^31 elements too) */
  int64_t sa[2] = {1 << 20, k}, sb[2] = {k, n};
  tc_tensor *a = tc_input_sym(f, TC_F32, 2, sa, "M", 1);
  tc_tensor *b = tc_input(f, TC_F32, 2, sb);
  tc_tensor *bias = tc_input(f, TC_F32, 1, &n);
  bool is_new[2] = {true, false};
  tc_tensor *y = tc_unary(f, TC_RELU, tc_binary(f, TC_ADD, tc_matmul(f, a, b), tc_broadcast(f, bias, 2, is_new)));
  TC_CHECK(y, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  OK(f, tl ? tc_schedule_matmul(f, TC_TARGET_OPENCL, NULL, tl) : tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  return f;
}

static void want_gemm(const float *a, const float *b, const float *bias, int64_t m, int64_t n,
                      int64_t k, double *w) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = bias[j];
      for (int64_t q = 0; q < k; q++) s += (double)a[i * k + q] * b[q * n + j];
      w[i * n + j] = s > 0 ? s : 0;
    }
}

/* One GEMM kernel for every M: run at 14 values of M (1, primes,
 * multiples of the block tile, 4099) against plain C; nothing is written
 * past M rows of C; the grid's x extent is the blocks of M rows. */
static void gemm_sweep(const tc_matmul_tiles *tl, int64_t n, int64_t k, int64_t bm) {
  tc_fusion *f = gemm_bias_relu(n, k, tl);
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "dyn_gemm"};
  tc_status st;
  tc_kernel *kern = tc_compile(f, &o, &st);
  TC_REQUIRE(kern, "%s", tc_fusion_error(f));
  TC_CHECK(strstr(tc_fusion_schedule_note(f), "matmul: M (at most") != NULL, "%s", tc_fusion_schedule_note(f));
  TC_CHECK(tc_kernel_size_var(kern, NULL, NULL) != NULL, "no size variable");
  size_t cap = (size_t)MAXM;
  float *a = malloc(cap * (size_t)k * sizeof(float)), *b = malloc((size_t)(k * n) * sizeof(float));
  float *bias = malloc((size_t)n * sizeof(float)), *y = malloc((cap + 1) * (size_t)n * sizeof(float));
  double *w = malloc(cap * (size_t)n * sizeof(double));
  for (size_t i = 0; i < cap * (size_t)k; i++) a[i] = value((int64_t)i);
  for (int64_t i = 0; i < k * n; i++) b[i] = value(i * 5 + 2);
  for (int64_t i = 0; i < n; i++) bias[i] = value(i * 11 + 3);
  for (int r = 0; r < NM; r++) {
    int64_t m = Ms[r];
    for (size_t i = 0; i < (cap + 1) * (size_t)n; i++) y[i] = -77.0f;
    void *args[5] = {NULL, a, b, bias, y};
    st = tc_kernel_run_sizes(kern, args, &m, 1, NULL, NULL);
    if (st == TC_ERR_NO_DEVICE) {
      printf("  skip runs: no OpenCL device\n");
      break;
    }
    TC_CHECK(st == TC_OK, "M = %lld: %s", (long long)m, tc_kernel_error(kern));
    want_gemm(a, b, bias, m, n, k, w);
    for (int64_t i = 0; i < m * n; i++)
      if (fabs(y[i] - w[i]) > 1e-4 + 1e-5 * (double)k * fabs(w[i])) {
        TC_CHECK(0, "M = %lld: y[%lld] = %g, want %g", (long long)m, (long long)i, y[i], w[i]);
        break;
      }
    TC_CHECK(y[m * n] == -77.0f, "M = %lld: wrote past M rows", (long long)m);
  }
  int64_t grid[3], block[3];
  tc_kernel_launch_dims(kern, grid, block);
  TC_CHECK(grid[1] == (n + (tl ? tl->bn : 64) - 1) / (tl ? tl->bn : 64), "grid y %lld", (long long)grid[1]);
  (void)bm;
  builds_on_cuda_and_hip(f, "dyn_gemm");
  free(a), free(b), free(bias), free(y), free(w);
  tc_kernel_free(kern);
  tc_fusion_free(f);
}

static void test_gemm(void) {
  gemm_sweep(NULL, 48, 40, 64);
  tc_matmul_tiles tl = {32, 32, 8, 4, 4, TC_MACRO_FMA};
  gemm_sweep(&tl, 72, 19, 32);
}

/* y = A @ B + bias with both M (A [M, K]) and N (B [K, N], bias [N])
 * size variables, N a multiple of ndiv */
static tc_fusion *gemm_mn(int64_t k, int64_t ndiv) {
  tc_fusion *f = tc_fusion_new();
  int64_t sa[2] = {1 << 12, k}, sb[2] = {k, 2048}, sbias = -1;
  const char *bn[2] = {NULL, "N"};
  int64_t bd[2] = {1, ndiv};
  tc_tensor *a = tc_input_sym(f, TC_F32, 2, sa, "M", 1);
  tc_tensor *b = tc_input_syms(f, TC_F32, 2, sb, bn, bd);
  tc_tensor *bias = tc_input_sym(f, TC_F32, 1, &sbias, "N", ndiv);
  TC_CHECK(a && b && bias, "%s", tc_fusion_error(f));
  bool is_new[2] = {true, false};
  tc_tensor *y = tc_binary(f, TC_ADD, tc_matmul(f, a, b), tc_broadcast(f, bias, 2, is_new));
  TC_CHECK(y, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  return f;
}

/* Two size variables: one GEMM kernel for every (M, N), each checked
 * against plain C; the grid's y extent follows N; misuse names the
 * variable. */
static void test_two_vars(void) {
  const int64_t k = 21;
  tc_fusion *f = gemm_mn(k, 1);
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "dyn_gemm_mn"};
  tc_status st;
  tc_kernel *kern = tc_compile(f, &o, &st);
  TC_REQUIRE(kern, "%s", tc_fusion_error(f));
  TC_CHECK(strstr(tc_fusion_schedule_note(f), "matmul: M (at most 4096) x N (at most 2048) x 21") != NULL,
           "%s", tc_fusion_schedule_note(f));
  int64_t div = 0, bound = 0;
  TC_CHECK_EQ_INT(tc_kernel_size_var_count(kern), 2);
  const char *v1 = tc_kernel_size_var_at(kern, 1, &div, &bound);
  TC_CHECK(v1 && strcmp(v1, "N") == 0 && div == 1 && bound == 2048, "second variable %s", v1 ? v1 : "(none)");
  TC_CHECK_EQ_INT(tc_kernel_nparams(kern), 6); /* M, A, N, B, bias, C */
  static const int64_t mn[][2] = {{1, 1}, {7, 13}, {64, 64}, {67, 130}, {129, 33}, {1000, 200}, {3, 2048}};
  size_t cap = 1000 * 2048 + 1;
  float *a = malloc(1000 * (size_t)k * sizeof(float)), *b = malloc((size_t)k * 2048 * sizeof(float));
  float *bias = malloc(2048 * sizeof(float)), *y = malloc(cap * sizeof(float));
  double *w = malloc(cap * sizeof(double));
  for (int64_t i = 0; i < 1000 * k; i++) a[i] = value(i);
  for (int64_t i = 0; i < 2048; i++) bias[i] = value(i * 11 + 3);
  for (size_t r = 0; r < sizeof mn / sizeof mn[0]; r++) {
    int64_t m = mn[r][0], n = mn[r][1], sizes[2] = {m, n};
    /* B is [K, N] at this N: its row stride is N */
    for (int64_t i = 0; i < k * n; i++) b[i] = value(i * 5 + 2);
    for (size_t i = 0; i < cap; i++) y[i] = -77.0f;
    void *args[6] = {NULL, a, NULL, b, bias, y};
    st = tc_kernel_run_sizes(kern, args, sizes, 2, NULL, NULL);
    if (st == TC_ERR_NO_DEVICE) {
      printf("  skip runs: no OpenCL device\n");
      break;
    }
    TC_CHECK(st == TC_OK, "M = %lld, N = %lld: %s", (long long)m, (long long)n, tc_kernel_error(kern));
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = bias[j];
        for (int64_t q = 0; q < k; q++) s += (double)a[i * k + q] * b[q * n + j];
        w[i * n + j] = s;
      }
    for (int64_t i = 0; i < m * n; i++)
      if (fabs(y[i] - w[i]) > 1e-4 + 1e-5 * (double)k * fabs(w[i])) {
        TC_CHECK(0, "M = %lld, N = %lld: y[%lld] = %g, want %g", (long long)m, (long long)n, (long long)i, y[i], w[i]);
        break;
      }
    TC_CHECK(y[m * n] == -77.0f, "M = %lld, N = %lld: wrote past M x N", (long long)m, (long long)n);
  }
  void *args[6] = {NULL, a, NULL, b, bias, y};
  int64_t one[1] = {4}, big[2] = {4, 4096};
  TC_CHECK(tc_kernel_run_sizes(kern, args, one, 1, NULL, NULL) == TC_ERR_ARGUMENT &&
               strstr(tc_kernel_error(kern), "two size variables, M and N"), "%s", tc_kernel_error(kern));
  TC_CHECK(tc_kernel_run_sizes(kern, args, big, 2, NULL, NULL) == TC_ERR_ARGUMENT &&
               strstr(tc_kernel_error(kern), "N is 4096, but the kernel was compiled for N in 1..2048"),
           "%s", tc_kernel_error(kern));
  builds_on_cuda_and_hip(f, "dyn_gemm_mn");
  tc_kernel_free(kern);
  tc_fusion_free(f);
  /* through the kernel cache: the entry keeps both variables and both grid
   * chains (the second compile reads it back and runs at M = 67, N = 130) */
  char dir[] = "/tmp/tilec-dyn-mn.XXXXXX";
  TC_REQUIRE(mkdtemp(dir), "mkdtemp");
  setenv("TILEC_CACHE_DIR", dir, 1);
  for (int round = 0; round < 2; round++) {
    f = gemm_mn(k, 1);
    kern = tc_compile(f, &o, &st);
    TC_REQUIRE(kern, "%s", tc_fusion_error(f));
    TC_CHECK(tc_kernel_from_cache(kern) == round, "round %d: from the cache %d", round, tc_kernel_from_cache(kern));
    TC_CHECK(tc_kernel_size_var_count(kern) == 2 && strcmp(tc_kernel_size_var_at(kern, 1, NULL, NULL), "N") == 0,
             "round %d: %d size variables", round, tc_kernel_size_var_count(kern));
    int64_t m = 67, n = 130, sizes[2] = {67, 130};
    for (int64_t i = 0; i < k * n; i++) b[i] = value(i * 5 + 2);
    for (size_t i = 0; i < cap; i++) y[i] = -77.0f;
    void *cargs[6] = {NULL, a, NULL, b, bias, y};
    st = tc_kernel_run_sizes(kern, cargs, sizes, 2, NULL, NULL);
    if (st != TC_ERR_NO_DEVICE) {
      TC_CHECK(st == TC_OK, "round %d: %s", round, tc_kernel_error(kern));
      int bad = 0;
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
          double s = bias[j];
          for (int64_t q = 0; q < k; q++) s += (double)a[i * k + q] * b[q * n + j];
          bad += fabs(y[i * n + j] - s) > 1e-4 + 1e-5 * (double)k * fabs(s);
        }
      TC_CHECK(bad == 0 && y[m * n] == -77.0f, "round %d: %d elements differ", round, bad);
    }
    tc_kernel_free(kern);
    tc_fusion_free(f);
  }
  tc_cache_clear(NULL);
  rmdir(dir);
  unsetenv("TILEC_CACHE_DIR");
  /* N a multiple of 8: N = 12 breaks it, by name */
  f = gemm_mn(k, 8);
  kern = tc_compile(f, &o, &st);
  TC_REQUIRE(kern, "%s", tc_fusion_error(f));
  int64_t bad[2] = {5, 12};
  TC_CHECK(tc_kernel_run_sizes(kern, args, bad, 2, NULL, NULL) == TC_ERR_ARGUMENT &&
               strstr(tc_kernel_error(kern), "N is 12, but the kernel was compiled for N a multiple of 8"),
           "%s", tc_kernel_error(kern));
  tc_kernel_free(kern);
  tc_fusion_free(f);
  free(a), free(b), free(bias), free(y), free(w);
}

/* A stored transposed, [K, M] with M its second axis (tc_input_syms):
 * the matmul reads it through a permute, its row stride is M */
static void test_gemm_a_transposed(void) {
  const int64_t k = 19, n = 33;
  tc_fusion *f = tc_fusion_new();
  int64_t sa[2] = {k, 1 << 14}, sb[2] = {k, n};
  const char *an[2] = {NULL, "M"};
  tc_tensor *a = tc_input_syms(f, TC_F32, 2, sa, an, NULL), *b = tc_input(f, TC_F32, 2, sb);
  int perm[2] = {1, 0};
  tc_tensor *y = tc_matmul(f, tc_permute(f, a, perm), b);
  TC_REQUIRE(y, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "dyn_gemm_at"};
  tc_status st;
  tc_kernel *kern = tc_compile(f, &o, &st);
  TC_REQUIRE(kern, "%s", tc_fusion_error(f));
  static const int64_t ms[] = {1, 7, 64, 70, 300};
  for (size_t r = 0; r < sizeof ms / sizeof ms[0]; r++) {
    int64_t m = ms[r];
    float *A = malloc((size_t)(k * m) * 4), *B = malloc((size_t)(k * n) * 4), *Y = malloc((size_t)(m * n) * 4);
    for (int64_t i = 0; i < k * m; i++) A[i] = value(i);
    for (int64_t i = 0; i < k * n; i++) B[i] = value(i * 3 + 1);
    void *args[4] = {NULL, A, B, Y};
    st = tc_kernel_run_sizes(kern, args, &m, 1, NULL, NULL);
    if (st != TC_ERR_NO_DEVICE) {
      TC_CHECK(st == TC_OK, "M = %lld: %s", (long long)m, tc_kernel_error(kern));
      int bad = 0;
      for (int64_t i = 0; i < m && st == TC_OK; i++)
        for (int64_t j = 0; j < n; j++) {
          double s = 0;
          for (int64_t q = 0; q < k; q++) s += (double)A[q * m + i] * B[q * n + j];
          bad += fabs(s - Y[i * n + j]) > 1e-4 + 1e-5 * (double)k * fabs(s);
        }
      TC_CHECK(bad == 0, "M = %lld: %d elements differ", (long long)m, bad);
    }
    free(A), free(B), free(Y);
    if (st == TC_ERR_NO_DEVICE) break;
  }
  tc_kernel_free(kern);
  tc_fusion_free(f);
}

/* The family's builder: the pointwise fusion over rows of 6 */
static tc_fusion *build_pointwise6(int64_t divisor, void *ctx) {
  (void)ctx;
  return pointwise(6, divisor);
}

/* Cache picking by divisibility: M = 64 wants "M a multiple of 16", and
 * the family lowers that while the code stays the same: rows of 6 take
 * vectors of 4 once 4 divides M (24 elements), so 16 and 8 buy nothing
 * more and M = 64 and M = 1000 (a multiple of 8) get the kernel for "M a
 * multiple of 4"; M = 67 the general one (vectors of 2).  A sweep of 12
 * sizes holds two kernels, made by four compiles (16, 8, 4 and 1, the
 * first two found to give the code of 4); a second family over the same
 * kernel cache compiles nothing (four entries read back). */
static void test_family(void) {
  char dir[] = "/tmp/tilec-dyn-family.XXXXXX";
  TC_REQUIRE(mkdtemp(dir), "mkdtemp");
  setenv("TILEC_CACHE_DIR", dir, 1);
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "dyn_family"};
  static const int64_t sizes[] = {64, 67, 1, 16, 4096, 7, 160, 127, 128, 31, 1000, 4099};
  enum { NS = sizeof sizes / sizeof sizes[0] };
  size_t cap = 4099 * 6;
  float *a = malloc(cap * sizeof(float)), *b = malloc(cap * sizeof(float)), *y = malloc(cap * sizeof(float));
  double *w = malloc(cap * sizeof(double));
  for (size_t i = 0; i < cap; i++) a[i] = value((int64_t)i), b[i] = value((int64_t)i * 3 + 1);
  for (int round = 0; round < 2; round++) {
    tc_kernel_family *fam = tc_family_new(build_pointwise6, NULL, &o);
    TC_REQUIRE(fam, "tc_family_new");
    tc_status st;
    int64_t m = 64, div = 0;
    tc_kernel *k16 = tc_family_kernel(fam, &m, 1, &st);
    TC_REQUIRE(k16, "%s", tc_family_error(fam));
    TC_CHECK(tc_kernel_size_var(k16, &div, NULL) && div == 4, "M = 64: divisor %lld", (long long)div);
    m = 1000;
    TC_CHECK(tc_family_kernel(fam, &m, 1, &st) == k16, "M = 1000: not the kernel of M = 64");
    m = 67;
    tc_kernel *k1 = tc_family_kernel(fam, &m, 1, &st);
    TC_REQUIRE(k1, "%s", tc_family_error(fam));
    TC_CHECK(tc_kernel_size_var(k1, &div, NULL) && div == 1, "M = 67: divisor %lld", (long long)div);
    /* the specialised kernel takes vectors of 4 (16 rows of 6 are 24
     * vectors), the general one of 2 (a row of 6 is 3) */
    TC_CHECK(strstr(tc_kernel_source(k16), "tidx * 4 + i0]") != NULL &&
                 strstr(tc_kernel_source(k1), "tidx * 2 + i0]") != NULL,
             "vector widths: %s\n%s", tc_kernel_source(k16), tc_kernel_source(k1));
    int ran = 1;
    for (int r = 0; r < NS && ran; r++) {
      m = sizes[r];
      for (size_t i = 0; i < cap; i++) y[i] = -77.0f;
      void *args[4] = {NULL, a, b, y};
      st = tc_family_run(fam, args, &m, 1, NULL, NULL);
      if (st == TC_ERR_NO_DEVICE) {
        printf("  skip runs: no OpenCL device\n");
        ran = 0;
        break;
      }
      TC_CHECK(st == TC_OK, "M = %lld: %s", (long long)m, tc_family_error(fam));
      want_pointwise(a, b, m, 6, w);
      for (int64_t i = 0; i < m * 6; i++)
        if (fabs(y[i] - w[i]) > 1e-5 + 1e-4 * fabs(w[i])) {
          TC_CHECK(0, "M = %lld: y[%lld] = %g, want %g", (long long)m, (long long)i, y[i], w[i]);
          break;
        }
      if ((size_t)(m * 6) < cap) TC_CHECK(y[m * 6] == -77.0f, "M = %lld: wrote past M rows", (long long)m);
    }
    int kernels, compiled, loaded;
    tc_family_counts(fam, &kernels, &compiled, &loaded);
    TC_CHECK(kernels == 2 && compiled == (round == 0 ? 4 : 0) && loaded == (round == 0 ? 0 : 4),
             "round %d: %d kernels, %d compiled, %d loaded", round, kernels, compiled, loaded);
    /* misuse: no size, a size of 0 */
    TC_CHECK(tc_family_kernel(fam, NULL, 0, &st) == NULL && st == TC_ERR_ARGUMENT &&
                 strstr(tc_family_error(fam), "one size variable"), "%s", tc_family_error(fam));
    m = 0;
    TC_CHECK(tc_family_kernel(fam, &m, 1, &st) == NULL && st == TC_ERR_ARGUMENT &&
                 strstr(tc_family_error(fam), "at least 1"), "%s", tc_family_error(fam));
    tc_family_free(fam);
  }
  tc_cache_stats cs;
  tc_cache_get_stats(&cs);
  TC_CHECK(cs.entries == 4, "%lld cache entries for four assumption sets", (long long)cs.entries);
  free(a), free(b), free(y), free(w);
  tc_cache_clear(NULL);
  rmdir(dir);
  unsetenv("TILEC_CACHE_DIR");
}

int main(void) {
  TC_RUN(test_misuse);
  TC_RUN(test_divisor);
  TC_RUN(test_pointwise);
  TC_RUN(test_softmax);
  TC_RUN(test_gemm);
  TC_RUN(test_family);
  TC_RUN(test_two_vars);
  TC_RUN(test_gemm_a_transposed);
  TC_MAIN_END();
}
