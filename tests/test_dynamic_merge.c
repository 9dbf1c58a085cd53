/* test_dynamic_merge.c - inputs [B, S, H] with two size variables, B and
 * S (tc_input_syms), under the automatic schedules, which merge the
 * leading axes: the merged extent is the product B * S over the two
 * parameters, its split rounds up with a predicate, and indexing takes
 * the merged value apart by division and remainder by S's parameter
 * (docs/dynamic.md).  A pointwise fusion, a softmax over H and a row sum
 * with ops after it are each compiled once and run on PoCL at 12 (B, S)
 * pairs (1, primes, multiples of the block, one large), each compared
 * with tc_reference_run of the same recipe built with B and S fixed; the
 * second compile of each is a cache hit.  A kernel family of the two
 * variables (tc_family_new_vars) over the same pairs, with its kernel and
 * compile counts.  Refused with its message: a merge of two symbolic
 * axes that are both splits (the product of two rounded-up quotients is
 * no chain of steps over one variable). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "device_test_util.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

static const int64_t BS[][2] = {{1, 1}, {1, 7}, {2, 3}, {3, 1}, {5, 13}, {4, 32}, {7, 31},
                                {1, 128}, {16, 8}, {3, 129}, {13, 100}, {64, 65}};
#define NBS ((int)(sizeof BS / sizeof BS[0]))
#define MAXBS 4160 /* the largest B * S above */

enum { POINTWISE, SOFTMAX, ROWSUM };

/* The fusion of kind `kind` over [B, S, h]: B and S size variables
 * (b < 0) or the fixed extents b, s (the reference's recipe). */
static tc_fusion *build(int kind, int64_t b, int64_t s, int64_t h, int *nin) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[3] = {b < 0 ? 1024 : b, b < 0 ? 4096 : s, h}, again[3] = {-1, -1, h};
  const char *names[3] = {"B", "S", NULL};
  tc_tensor *x = b < 0 ? tc_input_syms(f, TC_F32, 3, shape, names, NULL) : tc_input(f, TC_F32, 3, shape);
  TC_CHECK(x, "%s", tc_fusion_error(f));
  tc_tensor *y = NULL;
  int ax = 2;
  *nin = 1;
  if (kind == POINTWISE) {
    tc_tensor *w = b < 0 ? tc_input_syms(f, TC_F32, 3, again, names, NULL) : tc_input(f, TC_F32, 3, shape);
    TC_CHECK(w, "%s", tc_fusion_error(f));
    y = tc_unary(f, TC_RELU, tc_binary(f, TC_ADD, tc_binary(f, TC_MUL, x, w), x));
    *nin = 2;
  } else if (kind == SOFTMAX) {
    tc_tensor *mx = tc_reduce(f, TC_REDUCE_MAX, x, 1, &ax);
    tc_tensor *e = tc_unary(f, TC_EXP, tc_binary(f, TC_SUB, x, mx));
    y = tc_binary(f, TC_DIV, e, tc_reduce(f, TC_REDUCE_SUM, e, 1, &ax));
  } else {
    y = tc_unary(f, TC_TANH, tc_reduce(f, TC_REDUCE_SUM, x, 1, &ax));
  }
  TC_CHECK(y, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  return f;
}

static float value(int64_t i) { return (float)((i * 7919) % 1013) / 1013.0f * 4.0f - 2.0f; }

/* Runs k at every (B, S) pair against tc_reference_run; returns 0 when
 * there is no OpenCL device. */
static int sweep(tc_kernel *k, int kind, int64_t h) {
  size_t cap = (size_t)MAXBS * (size_t)h;
  float *in[2] = {malloc(cap * sizeof(float)), malloc(cap * sizeof(float))};
  float *want = malloc(cap * sizeof(float)), *got = malloc((cap + 1) * sizeof(float));
  for (size_t i = 0; i < cap; i++) in[0][i] = value((int64_t)i), in[1][i] = value((int64_t)i * 3 + 1);
  int ran = 1;
  for (int r = 0; r < NBS && ran; r++) {
    int64_t b = BS[r][0], s = BS[r][1], sizes[2] = {b, s};
    int nin;
    tc_fusion *ref = build(kind, b, s, h, &nin);
    size_t n = (size_t)(b * s) * (size_t)(kind == ROWSUM ? 1 : h);
    void *rargs[3] = {in[0], nin > 1 ? (void *)in[1] : (void *)want, want};
    TC_CHECK(tc_reference_run(ref, rargs) == TC_OK, "%s", tc_fusion_error(ref));
    /* kernel parameters: B, S, the inputs, the output */
    void *kargs[5] = {NULL, NULL, in[0], nin > 1 ? (void *)in[1] : (void *)got, got};
    for (size_t i = 0; i <= cap; i++) got[i] = -77.0f;
    tc_status st = tc_kernel_run_sizes(k, kargs, sizes, 2, NULL, NULL);
    if (st == TC_ERR_NO_DEVICE) ran = 0;
    else {
      TC_CHECK(st == TC_OK, "kind %d, B %lld, S %lld: %s", kind, (long long)b, (long long)s, tc_kernel_error(k));
      int bad = 0;
      for (size_t e = 0; e < n && bad < 3; e++)
        if (!(fabs(got[e] - want[e]) <= 1e-5 + 1e-4 * fabs(want[e]) * (kind == ROWSUM ? (double)h : 1.0))) {
          TC_CHECK(0, "kind %d, B %lld, S %lld: y[%zu] = %g, want %g", kind, (long long)b, (long long)s, e, got[e], want[e]);
          bad++;
        }
      TC_CHECK(got[n] == -77.0f, "kind %d, B %lld, S %lld: wrote past B * S rows", kind, (long long)b, (long long)s);
    }
    tc_fusion_free(ref);
  }
  free(in[0]), free(in[1]), free(want), free(got);
  return ran;
}

static void one(int kind, int64_t h, const char *name) {
  char dir[] = "/tmp/tilec-dynmerge.XXXXXX";
  TC_REQUIRE(scratch_cache_begin(dir), "mkdtemp");
  int nin;
  tc_fusion *f = build(kind, -1, -1, h, &nin);
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, name};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_REQUIRE(k, "%s: %s", name, tc_fusion_error(f));
  TC_CHECK_EQ_INT(tc_kernel_size_var_count(k), 2);
  TC_CHECK_EQ_INT(tc_kernel_from_cache(k), 0);
  if (!sweep(k, kind, h)) printf("  skip runs: no OpenCL device\n");
  tc_fusion *f2 = build(kind, -1, -1, h, &nin);
  tc_kernel *k2 = tc_compile(f2, &o, &st);
  TC_CHECK(k2 && tc_kernel_from_cache(k2) == 1, "%s: the second compile was not a cache hit", name);
  if (k2 && !sweep(k2, kind, h)) printf("  skip cached runs: no OpenCL device\n");
  builds_on_cuda_and_hip(f, name); /* where NVRTC / hipcc exist */
  tc_kernel_free(k2), tc_fusion_free(f2);
  tc_kernel_free(k), tc_fusion_free(f);
  scratch_cache_end(dir);
}

static void test_pointwise(void) { one(POINTWISE, 37, "dynm_pointwise"); }
static void test_softmax(void) { one(SOFTMAX, 100, "dynm_softmax"); }
static void test_rowsum(void) { one(ROWSUM, 64, "dynm_rowsum"); }

/* split(B, 2) and split(S, 2), their outer parts merged: refused at compile */
static void test_merge_of_splits(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[3] = {64, 64, 8};
  const char *names[3] = {"B", "S", NULL};
  tc_tensor *x = tc_input_syms(f, TC_F32, 3, shape, names, NULL);
  tc_tensor *y = tc_unary(f, TC_NEG, x);
  OK(f, tc_add_output(f, y));
  OK(f, tc_split(y, 1, 2, 1)); /* [B, So, 2, 8] */
  OK(f, tc_split(y, 0, 2, 1)); /* [Bo, 2, So, 2, 8] */
  int from[1] = {2}, to[1] = {1};
  OK(f, tc_reorder(y, 1, from, to)); /* [Bo, So, 2, 2, 8] */
  OK(f, tc_merge(y, 0, 1));    /* [Bo x So, 2, 2, 8] */
  OK(f, tc_parallelize(y, 0, TC_BIDX));
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "dynm_bad"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_CHECK(!k && st == TC_ERR_UNSUPPORTED, "compiled a merge of two split size variables");
  TC_CHECK(strstr(tc_fusion_error(f), "a merge of two axes of symbolic sizes neither of which is a size variable"),
           "message: %s", tc_fusion_error(f));
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* The two-variable family's builder: y = -x over [B, S, 6], B a multiple
 * of d[0], S of d[1] */
static tc_fusion *build_neg6(const int64_t *d, void *ctx) {
  (void)ctx;
  tc_fusion *f = tc_fusion_new();
  int64_t shape[3] = {1024, 4096, 6};
  const char *names[3] = {"B", "S", NULL};
  int64_t divs[3] = {d[0], d[1], 1};
  tc_tensor *y = tc_unary(f, TC_NEG, tc_input_syms(f, TC_F32, 3, shape, names, divs));
  if (!y || tc_add_output(f, y) || tc_schedule_auto(f, TC_TARGET_OPENCL, NULL)) {
    TC_CHECK(0, "%s", tc_fusion_error(f));
    tc_fusion_free(f);
    return NULL;
  }
  return f;
}

/* A family of two size variables (tc_family_new_vars) over the 12 pairs:
 * each variable wants the largest of 16, 8, 4, 1 dividing it, and the
 * family lowers those while the code stays the same.  The pointwise
 * schedule of rows of 6 takes vectors of 4 where 4 divides B x S x 6's
 * known divisor (one of B, S a multiple of 4 or more), else of 2, and
 * nothing else depends on the divisors, so every pair gets the kernel
 * for (1, 1), (4, 1) or (1, 4), lowering B first (to 1 where S is a
 * multiple of 4): three kernels.  The
 * compiles, in the order of the pairs: (1,1); (4,16) -> (1,16), (1,8),
 * (1,4); (16,8) -> (8,8), (4,8); (16,1) -> (8,1), (4,1): 11, each a
 * divisor pair tried once.  A second family over the same cache reads
 * the 11 back and compiles nothing. */
static void test_family_two_vars(void) {
  char dir[] = "/tmp/tilec-dynmerge-fam.XXXXXX";
  TC_REQUIRE(scratch_cache_begin(dir), "mkdtemp");
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "dynm_family"};
  size_t cap = (size_t)MAXBS * 6;
  float *x = malloc(cap * sizeof(float)), *y = malloc((cap + 1) * sizeof(float));
  for (size_t i = 0; i < cap; i++) x[i] = value((int64_t)i);
  for (int round = 0; round < 2; round++) {
    tc_kernel_family *fam = tc_family_new_vars(2, build_neg6, NULL, &o);
    TC_REQUIRE(fam, "tc_family_new_vars");
    int ran = 1;
    for (int r = 0; r < NBS; r++) {
      int64_t sizes[2] = {BS[r][0], BS[r][1]};
      tc_status st;
      tc_kernel *k = tc_family_kernel(fam, sizes, 2, &st);
      TC_REQUIRE(k, "%s", tc_family_error(fam));
      int64_t db = 0, ds = 0;
      tc_kernel_size_var_at(k, 0, &db, NULL), tc_kernel_size_var_at(k, 1, &ds, NULL);
      /* B lowered first: to 1 where S's 4 keeps the vectors, else to 4 */
      int64_t ws = sizes[1] % 4 == 0 ? 4 : 1, wb = ws == 1 && sizes[0] % 4 == 0 ? 4 : 1;
      TC_CHECK(db == wb && ds == ws, "B %lld, S %lld: the kernel for (%lld, %lld), want (%lld, %lld)",
               (long long)sizes[0], (long long)sizes[1], (long long)db, (long long)ds, (long long)wb,
               (long long)ws);
      if (!ran) continue;
      for (size_t i = 0; i <= cap; i++) y[i] = -77.0f;
      void *args[4] = {NULL, NULL, x, y};
      st = tc_family_run(fam, args, sizes, 2, NULL, NULL);
      if (st == TC_ERR_NO_DEVICE) {
        printf("  skip runs: no OpenCL device\n");
        ran = 0;
        continue;
      }
      TC_CHECK(st == TC_OK, "%s", tc_family_error(fam));
      size_t n = (size_t)(sizes[0] * sizes[1] * 6);
      for (size_t e = 0; e < n; e++)
        if (y[e] != -x[e]) {
          TC_CHECK(0, "B %lld, S %lld: y[%zu] = %g, want %g", (long long)sizes[0], (long long)sizes[1], e, y[e], -x[e]);
          break;
        }
      TC_CHECK(y[n] == -77.0f, "B %lld, S %lld: wrote past the end", (long long)sizes[0], (long long)sizes[1]);
    }
    int kernels, compiled, loaded;
    tc_family_counts(fam, &kernels, &compiled, &loaded);
    TC_CHECK(kernels == 3 && compiled == (round == 0 ? 11 : 0) && loaded == (round == 0 ? 0 : 11),
             "round %d: %d kernels, %d compiled, %d loaded", round, kernels, compiled, loaded);
    /* misuse: one value for two variables */
    tc_status st;
    int64_t one = 4;
    TC_CHECK(tc_family_kernel(fam, &one, 1, &st) == NULL && st == TC_ERR_ARGUMENT &&
                 strstr(tc_family_error(fam), "has 2 size variables"), "%s", tc_family_error(fam));
    tc_family_free(fam);
  }
  free(x), free(y);
  scratch_cache_end(dir);
}

int main(void) {
  TC_RUN(test_family_two_vars);
  TC_RUN(test_merge_of_splits);
  TC_RUN(test_pointwise);
  TC_RUN(test_softmax);
  TC_RUN(test_rowsum);
  TC_MAIN_END();
}
