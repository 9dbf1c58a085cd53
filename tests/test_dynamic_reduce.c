/* test_dynamic_reduce.c - reductions over a size variable: the serial
 * loop over an axis whose extent depends on a variable runs to that
 * extent over the kernel's parameters (docs/dynamic.md).  Each kernel is
 * compiled once by tc_schedule_auto and run on PoCL at a dozen sizes
 * against a plain C loop:
 *   - column sums of [M, 100] (the outer schedule: M reduced serially);
 *   - row sums of [5, N] (the inner schedule with a symbolic row: the
 *     row over 1024 threads and ceil(N / 1024) steps), N with no known
 *     divisor and N a multiple of 4 (vectors of 4);
 *   - softmax over [M, N], both open (two-pass: each pass reads x);
 * the second compile is a cache hit; the CUDA and HIP kernels build
 * where NVRTC / hipcc exist.  A gather along N checks its index against
 * N's value (out of range reads 0).  Refused with their messages: a grid
 * reduction over a symbolic axis, and an unrolled loop over one. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "device_test_util.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

enum { COLSUM, ROWSUM, SOFTMAX };

#define COLS 100 /* the column sums' fixed row length */
#define ROWS 5   /* the row sums' fixed row count */

static const int64_t SIZES[] = {1, 2, 3, 7, 31, 128, 129, 1000, 1023, 1024, 1025, 4099, 5000};
#define NSIZES ((int)(sizeof SIZES / sizeof SIZES[0]))
static const int64_t SOFTMAX_MN[][2] = {{1, 1}, {1, 7}, {3, 1}, {5, 129}, {7, 1024}, {2, 1025},
                                        {64, 31}, {13, 3000}, {100, 100}, {1, 5000}};
#define NSOFTMAX ((int)(sizeof SOFTMAX_MN / sizeof SOFTMAX_MN[0]))

static tc_fusion *build(int kind, int64_t divisor) {
  tc_fusion *f = tc_fusion_new();
  tc_tensor *x, *y;
  int ax;
  if (kind == COLSUM) {
    int64_t shape[2] = {100000, COLS};
    x = tc_input_sym(f, TC_F32, 2, shape, "M", divisor);
    ax = 0;
    y = tc_reduce(f, TC_REDUCE_SUM, x, 1, &ax);
  } else {
    int64_t shape[2] = {kind == ROWSUM ? ROWS : 4096, 8192}, div[2] = {1, divisor};
    const char *names[2] = {kind == ROWSUM ? NULL : "M", "N"};
    x = tc_input_syms(f, TC_F32, 2, shape, names, div);
    ax = 1;
    if (kind == ROWSUM) {
      y = tc_reduce(f, TC_REDUCE_SUM, x, 1, &ax);
    } else {
      tc_tensor *mx = tc_reduce(f, TC_REDUCE_MAX, x, 1, &ax);
      tc_tensor *e = tc_unary(f, TC_EXP, tc_binary(f, TC_SUB, x, mx));
      y = tc_binary(f, TC_DIV, e, tc_reduce(f, TC_REDUCE_SUM, e, 1, &ax));
    }
  }
  TC_CHECK(x && y, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  return f;
}

static float value(int64_t i) { return (float)((i * 7919) % 1013) / 1013.0f * 4.0f - 2.0f; }

/* The plain C result of kind over an m x n input into w. */
static void want(int kind, const float *x, int64_t m, int64_t n, double *w) {
  if (kind == COLSUM) {
    for (int64_t j = 0; j < n; j++) {
      double s = 0;
      for (int64_t i = 0; i < m; i++) s += x[i * n + j];
      w[j] = s;
    }
    return;
  }
  for (int64_t i = 0; i < m; i++) {
    const float *r = x + i * n;
    double mx = -INFINITY, s = 0;
    for (int64_t j = 0; j < n; j++) mx = fmax(mx, r[j]), s += kind == ROWSUM ? r[j] : 0;
    if (kind == ROWSUM) {
      w[i] = s;
      continue;
    }
    for (int64_t j = 0; j < n; j++) s += exp((double)r[j] - mx);
    for (int64_t j = 0; j < n; j++) w[i * n + j] = exp((double)r[j] - mx) / s;
  }
}

/* Runs k at (m, n) (the variables' values in sizes[0..nsizes)) against
 * plain C; 0 when there is no OpenCL device. */
static int run_one(tc_kernel *k, int kind, int64_t m, int64_t n, const int64_t *sizes, int nsizes) {
  size_t elems = (size_t)(m * n), nout = kind == COLSUM ? (size_t)n : kind == ROWSUM ? (size_t)m : elems;
  float *x = malloc(elems * sizeof *x), *got = malloc((nout + 1) * sizeof *got);
  double *w = malloc(nout * sizeof *w);
  for (size_t i = 0; i < elems; i++) x[i] = value((int64_t)i);
  for (size_t i = 0; i <= nout; i++) got[i] = -77.0f;
  want(kind, x, m, n, w);
  void *args[4] = {NULL, NULL, NULL, NULL};
  args[nsizes] = x, args[nsizes + 1] = got;
  tc_status st = tc_kernel_run_sizes(k, args, sizes, nsizes, NULL, NULL);
  int ran = st != TC_ERR_NO_DEVICE;
  if (ran) {
    TC_CHECK(st == TC_OK, "kind %d at %lld x %lld: %s", kind, (long long)m, (long long)n, tc_kernel_error(k));
    double len = kind == COLSUM ? (double)m : (double)n;
    int bad = 0;
    for (size_t e = 0; e < nout && bad < 3 && st == TC_OK; e++)
      if (!(fabs(got[e] - w[e]) <= 1e-5 + 1e-6 * len * (1 + fabs(w[e])))) {
        TC_CHECK(0, "kind %d at %lld x %lld: y[%zu] = %.9g, want %.9g", kind, (long long)m, (long long)n,
                 e, got[e], w[e]);
        bad++;
      }
    TC_CHECK(got[nout] == -77.0f, "kind %d at %lld x %lld: wrote past the output", kind, (long long)m,
             (long long)n);
  }
  free(x), free(got), free(w);
  return ran;
}

/* Every size of kind's sweep; 0 when there is no OpenCL device. */
static int sweep(tc_kernel *k, int kind, int64_t divisor) {
  if (kind == SOFTMAX) {
    for (int r = 0; r < NSOFTMAX; r++)
      if (!run_one(k, kind, SOFTMAX_MN[r][0], SOFTMAX_MN[r][1], SOFTMAX_MN[r], 2)) return 0;
    return 1;
  }
  for (int r = 0; r < NSIZES; r++) {
    int64_t v = (SIZES[r] + divisor - 1) / divisor * divisor; /* (a multiple of the divisor) */
    if (!run_one(k, kind, kind == COLSUM ? v : ROWS, kind == COLSUM ? COLS : v, &v, 1)) return 0;
  }
  return 1;
}

static void one(int kind, int64_t divisor, const char *name, const char *note_part) {
  char dir[] = "/tmp/tilec-dynred.XXXXXX";
  TC_REQUIRE(scratch_cache_begin(dir), "mkdtemp");
  tc_fusion *f = build(kind, divisor);
  TC_CHECK(strstr(tc_fusion_schedule_note(f), note_part), "%s: note %s", name, tc_fusion_schedule_note(f));
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, name};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_REQUIRE(k && !tc_kernel_from_cache(k), "%s: %s", name, k ? "read from the cache" : tc_fusion_error(f));
  if (!sweep(k, kind, divisor)) printf("  skip runs: no OpenCL device\n");
  /* the same fusion built again is the cache's kernel */
  tc_fusion *f2 = build(kind, divisor);
  tc_kernel *k2 = tc_compile(f2, &o, &st);
  TC_CHECK(k2 && tc_kernel_from_cache(k2), "%s: the second compile was not a cache hit", name);
  builds_on_cuda_and_hip(f, name); /* where NVRTC / hipcc exist */
  tc_kernel_free(k2), tc_fusion_free(f2);
  tc_kernel_free(k), tc_fusion_free(f);
  scratch_cache_end(dir);
}

static void test_colsum(void) {
  one(COLSUM, 1, "dynr_colsum", "each thread reducing 100000 elements serially");
}
static void test_rowsum(void) {
  one(ROWSUM, 1, "dynr_rowsum", "5 rows of N (at most 8192), 1 row per block on BIDx, 512 threads "
      "per row on TIDx, ceil(N / 512) (at most 16) serial steps each");
}
static void test_rowsum_div4(void) {
  one(ROWSUM, 4, "dynr_rowsum4", "vectors of 4 elements");
}
static void test_softmax(void) {
  one(SOFTMAX, 1, "dynr_softmax", "two-pass: the row's length depends on a size variable");
}

/* A gather along N, a size variable: the index's range check is against
 * N's value at launch (an index of N or more, or negative, reads 0), and
 * the data's row stride is N; cross-entropy reads its labels' logits so. */
static void test_gather_over_n(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {6, 4096}, ishape[2] = {6, 1};
  const char *names[2] = {NULL, "N"};
  tc_tensor *x = tc_input_syms(f, TC_F32, 2, shape, names, NULL);
  tc_tensor *idx = tc_input(f, TC_I32, 2, ishape);
  tc_tensor *y = tc_gather(f, x, 1, idx);
  TC_REQUIRE(y, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "dynr_gather"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_REQUIRE(k, "%s", tc_fusion_error(f));
  for (int64_t n = 1; n <= 1000; n = n * 7 + 2) {
    float *xs = malloc((size_t)(6 * n) * sizeof *xs), got[7];
    for (int64_t i = 0; i < 6 * n; i++) xs[i] = (float)(i + 1);
    /* in range: 0, n - 1, n / 2; out: n, -1, n + 5 */
    int32_t ix[6] = {0, (int32_t)(n - 1), (int32_t)(n / 2), (int32_t)n, -1, (int32_t)(n + 5)};
    for (int i = 0; i < 7; i++) got[i] = -77.0f;
    void *args[4] = {NULL, xs, ix, got};
    st = tc_kernel_run_sizes(k, args, &n, 1, NULL, NULL);
    if (st == TC_ERR_NO_DEVICE) {
      free(xs);
      break;
    }
    TC_CHECK(st == TC_OK, "N %lld: %s", (long long)n, tc_kernel_error(k));
    for (int r = 0; r < 6 && st == TC_OK; r++) {
      float want = ix[r] >= 0 && ix[r] < n ? xs[r * n + ix[r]] : 0.0f;
      TC_CHECK(got[r] == want, "N %lld, row %d, index %d: got %g, want %g", (long long)n, r, ix[r], got[r], want);
    }
    TC_CHECK(got[6] == -77.0f, "N %lld: wrote past the 6 rows", (long long)n);
    free(xs);
  }
  tc_kernel_free(k), tc_fusion_free(f);
}

/* The forms that stay refused, with their messages. */
static void test_refused(void) {
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "dynr_bad"};
  tc_status st;
  /* a grid reduction: the row's outer part on BIDx */
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {5, 8192};
  const char *names[2] = {NULL, "N"};
  tc_tensor *x = tc_input_syms(f, TC_F32, 2, shape, names, NULL);
  int ax = 1;
  tc_tensor *s = tc_reduce(f, TC_REDUCE_SUM, x, 1, &ax);
  OK(f, tc_add_output(f, s));
  tc_tensor *acc = tc_cache_before(s);
  TC_REQUIRE(acc, "%s", tc_fusion_error(f));
  OK(f, tc_split(acc, 1, 128, 1)); /* [5, ceil(N / 128), 128] */
  OK(f, tc_parallelize(acc, 0, TC_BIDY));
  OK(f, tc_parallelize(acc, 1, TC_BIDX));
  OK(f, tc_parallelize(acc, 2, TC_TIDX));
  OK(f, tc_parallelize(s, 0, TC_BIDY));
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_CHECK(!k && st == TC_ERR_UNSUPPORTED &&
               strstr(tc_fusion_error(f), "a grid reduction combines a number of blocks fixed at compile time"),
           "grid reduction over N: %s", tc_fusion_error(f));
  tc_kernel_free(k), tc_fusion_free(f);
  /* an unrolled loop over N */
  f = tc_fusion_new();
  x = tc_input_syms(f, TC_F32, 2, shape, names, NULL);
  tc_tensor *y = tc_unary(f, TC_NEG, x);
  OK(f, tc_add_output(f, y));
  OK(f, tc_parallelize(y, 0, TC_BIDX));
  OK(f, tc_parallelize(y, 1, TC_UNROLL));
  k = tc_compile(f, &o, &st);
  TC_CHECK(!k && st == TC_ERR_UNSUPPORTED && strstr(tc_fusion_error(f), "keep such axes serial or bind them to BIDx"),
           "unrolled N: %s", tc_fusion_error(f));
  tc_kernel_free(k), tc_fusion_free(f);
}

int main(void) {
  TC_RUN(test_colsum);
  TC_RUN(test_rowsum);
  TC_RUN(test_rowsum_div4);
  TC_RUN(test_softmax);
  TC_RUN(test_gather_over_n);
  TC_RUN(test_refused);
  TC_MAIN_END();
}
