/* test_scalar_input.c - scalars passed at launch (tc_scalar_input).
 *
 * One compiled LayerNorm kernel with eps and a scale as scalar inputs
 * runs on PoCL with two different eps and scales and gives both results,
 * each checked against plain C in double; the kernel's source and its
 * cache key do not hold the values (the second compile of the same
 * fusion is a cache hit).  A scalar on the left of a non-commutative op,
 * an i32 scalar with an i8 tensor, tc_reference_run with scalars, a
 * missing scalar at run (a message naming it), misuse of scalars in
 * other ops, and the CUDA (NVRTC) and HIP (hipcc) builds of the kernel. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "test.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

/* y = (x - mean) / sqrt(var + eps) * scale over the rows of x [rows, cols] */
static tc_fusion *layernorm(int64_t rows, int64_t cols, tc_tensor **eps, tc_tensor **scale) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {rows, cols};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape);
  *eps = tc_scalar_input(f, "eps", TC_F32);
  *scale = tc_scalar_input(f, "scale", TC_F32);
  TC_CHECK(*eps && *scale, "%s", tc_fusion_error(f));
  tc_tensor *mean, *var;
  int ax = 1;
  tc_welford(f, x, 1, &ax, &mean, &var);
  tc_tensor *r = tc_unary(f, TC_RECIPROCAL, tc_unary(f, TC_SQRT, tc_binary(f, TC_ADD, var, *eps)));
  tc_tensor *y = tc_binary(f, TC_MUL, *scale, tc_binary(f, TC_MUL, tc_binary(f, TC_SUB, x, mean), r));
  TC_CHECK(y != NULL, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  return f;
}

static void want_layernorm(const float *x, int64_t rows, int64_t cols, double eps, double scale, double *want) {
  for (int64_t r = 0; r < rows; r++) {
    double m = 0, v = 0;
    for (int64_t c = 0; c < cols; c++) m += x[r * cols + c];
    m /= (double)cols;
    for (int64_t c = 0; c < cols; c++) v += (x[r * cols + c] - m) * (x[r * cols + c] - m);
    v /= (double)cols;
    for (int64_t c = 0; c < cols; c++) want[r * cols + c] = (x[r * cols + c] - m) / sqrt(v + eps) * scale;
  }
}

static void test_one_kernel_two_eps(void) {
  char dir[] = "/tmp/tilec-scalar-cache.XXXXXX";
  TC_REQUIRE(mkdtemp(dir), "mkdtemp");
  setenv("TILEC_CACHE_DIR", dir, 1);
  int64_t rows = 7, cols = 1000, n = rows * cols;
  tc_tensor *eps, *scale;
  tc_fusion *f = layernorm(rows, cols, &eps, &scale);
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "layernorm_eps"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_REQUIRE(k, "%s", tc_fusion_error(f));
  TC_CHECK_EQ_INT(tc_kernel_nparams(k), 4);
  TC_CHECK_EQ_INT(tc_kernel_param_bytes(k, 1), 4);
  TC_CHECK(strstr(tc_kernel_source(k), "const float T1") && strstr(tc_kernel_source(k), "const float T2"),
           "the scalars are not parameters by value:\n%s", tc_kernel_source(k));
  float *x = malloc((size_t)n * sizeof(float)), *y = malloc((size_t)n * sizeof(float));
  double *want = malloc((size_t)n * sizeof(double));
  for (int64_t i = 0; i < n; i++) x[i] = (float)((i * 7919) % 1013) / 1013.0f * 0.02f + (float)(i / cols);
  /* the variance is about 3e-5: eps 1e-5 and eps 0.5 give very different y */
  const float epss[2] = {1e-5f, 0.5f}, scales[2] = {1.0f, -2.5f};
  float first = 0;
  for (int run = 0; run < 2; run++) {
    void *args[4] = {x, (void *)&epss[run], (void *)&scales[run], y};
    st = tc_kernel_run(k, args, NULL, NULL);
    if (st == TC_ERR_NO_DEVICE) break;
    TC_CHECK(st == TC_OK, "run %d: %s", run, tc_kernel_error(k));
    want_layernorm(x, rows, cols, epss[run], scales[run], want);
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
      if (!(fabs(y[i] - want[i]) <= 2e-3 * fabs(want[i]) + 1e-4) && bad++ < 4)
        TC_CHECK(0, "eps %g scale %g element %lld: %.9g, want %.9g", epss[run], scales[run], (long long)i,
                 y[i], want[i]);
    if (run == 0) first = y[1];
    else TC_CHECK(fabs(first - y[1]) > 0.5, "the two runs gave %g and %g", first, y[1]);
    /* the reference evaluator reads the scalars too */
    float *ry = malloc((size_t)n * sizeof(float));
    void *rargs[4] = {x, (void *)&epss[run], (void *)&scales[run], ry};
    OK(f, tc_reference_run(f, rargs));
    for (int64_t i = 0; i < n; i += 97)
      TC_CHECK(fabs(ry[i] - want[i]) <= 2e-3 * fabs(want[i]) + 1e-4, "reference element %lld: %g, want %g",
               (long long)i, ry[i], want[i]);
    free(ry);
  }
  if (st != TC_ERR_NO_DEVICE) {
    /* a missing scalar is named */
    void *args[4] = {x, NULL, (void *)&scales[0], y};
    TC_CHECK(tc_kernel_run(k, args, NULL, NULL) == TC_ERR_ARGUMENT && strstr(tc_kernel_error(k), "eps"),
             "%s", tc_kernel_error(k));
    TC_CHECK(tc_reference_run(f, args) == TC_ERR_ARGUMENT && strstr(tc_fusion_error(f), "scalar input eps"),
             "%s", tc_fusion_error(f));
  }
  /* the same fusion again: the same cache entry (no value in the key) */
  tc_tensor *eps2, *scale2;
  tc_fusion *f2 = layernorm(rows, cols, &eps2, &scale2);
  tc_kernel *k2 = tc_compile(f2, &o, &st);
  TC_CHECK(k2 && tc_kernel_from_cache(k2) == 1, "the second compile was not a cache hit");
  TC_CHECK(k2 && strcmp(tc_kernel_source(k), tc_kernel_source(k2)) == 0, "the sources differ");
  tc_kernel_free(k2), tc_fusion_free(f2);
  tc_cache_clear(NULL);
  rmdir(dir);
  unsetenv("TILEC_CACHE_DIR");
  free(x), free(y), free(want);
  for (int t = TC_TARGET_CUDA; t <= TC_TARGET_HIP; t++) {
    tc_compile_options co = {(tc_target)t, NULL, "layernorm_eps"};
    tc_kernel *dk = tc_compile(f, &co, &st);
    TC_CHECK(dk != NULL, "%s: %s", tc_target_name((tc_target)t), tc_fusion_error(f));
    if (!dk) continue;
    TC_CHECK(strstr(tc_kernel_source(dk), "const float T1") != NULL, "%s", tc_kernel_source(dk));
    if (t == TC_TARGET_HIP) { /* the HIP launch packs eps by value where the kernel reads it */
      tc_hip_signature *sig = calloc(1, sizeof *sig);
      tc_str e;
      tc_str_init(&e);
      TC_CHECK(tc_hip_signature_parse(tc_kernel_source(dk), "layernorm_eps", sig, &e) == TC_OK, "%s", tc_str_cstr(&e));
      float ev = 0.25f, sv = 3.0f;
      tc_rt_buffer bufs[4] = {{NULL, 28000, 0, 0}, {&ev, 4, 0, 1}, {&sv, 4, 0, 1}, {NULL, 28000, 1, 0}};
      uint64_t dev[4] = {0x1000, 0, 0, 0x2000};
      unsigned char out[64];
      TC_CHECK(sig->nparams == 4 && !sig->params[1].pointer && sig->params[1].size == 4 &&
                   tc_hip_args_pack(sig, bufs, 4, dev, out, sizeof out, &e) == TC_OK,
               "HIP signature: %d parameters: %s", sig->nparams, tc_str_cstr(&e));
      float got = 0;
      memcpy(&got, out + sig->params[1].offset, 4);
      TC_CHECK(got == 0.25f, "eps packed as %g", got);
      tc_str_free(&e);
      free(sig);
    }
    st = tc_kernel_build(dk, NULL);
    if (st == TC_ERR_UNSUPPORTED) printf("  skip %s build: %s\n", tc_target_name((tc_target)t), tc_kernel_error(dk));
    else TC_CHECK(st == TC_OK, "%s does not build: %s", tc_target_name((tc_target)t), tc_kernel_error(dk));
    tc_kernel_free(dk);
  }
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* s - x with the scalar on the left (f32), and b * x + c on an i8 tensor
 * with i32 scalars (wrapping to 8 bits in the store). */
static void test_left_and_integer(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {3, 37};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape), *q = tc_input(f, TC_I8, 2, shape);
  tc_tensor *s = tc_scalar_input(f, "s", TC_F32);
  tc_tensor *b = tc_scalar_input(f, "b", TC_I32), *c = tc_scalar_input(f, "c", TC_I32);
  tc_tensor *y = tc_binary(f, TC_SUB, s, x);
  tc_tensor *z = tc_binary(f, TC_ADD, tc_binary(f, TC_MUL, b, q), c);
  TC_REQUIRE(y && z, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  OK(f, tc_add_output(f, z));
  OK(f, tc_parallelize(y, 1, TC_TIDX));
  OK(f, tc_parallelize(z, 1, TC_TIDX));
  OK(f, tc_inline_most(f));
  tc_status st;
  tc_kernel *k = tc_compile(f, NULL, &st);
  TC_REQUIRE(k, "%s", tc_fusion_error(f));
  float X[111], Y[111], sv = 2.5f;
  int8_t Q[111], Z[111];
  int32_t bv = 3, cv = -7;
  for (int i = 0; i < 111; i++) X[i] = (float)i * 0.25f, Q[i] = (int8_t)(i - 55);
  void *args[7] = {X, Q, &sv, &bv, &cv, Y, Z};
  st = tc_kernel_run(k, args, NULL, NULL);
  if (st == TC_ERR_NO_DEVICE) {
    tc_kernel_free(k), tc_fusion_free(f);
    TC_SKIP("no OpenCL device");
  }
  TC_CHECK(st == TC_OK, "%s", tc_kernel_error(k));
  int bad = 0;
  for (int i = 0; i < 111; i++) {
    int8_t wz = (int8_t)(uint8_t)((3 * (Q[i]) - 7) & 0xff);
    if ((Y[i] != 2.5f - X[i] || Z[i] != wz) && bad++ < 4)
      TC_CHECK(0, "element %d: %g %d, want %g %d", i, Y[i], Z[i], 2.5f - X[i], wz);
  }
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* The two-pass form of a normalization (a row too long for registers)
 * copies each intermediate op per consumer (tc_recompute_intermediates):
 * the copies must read the scalar inputs too, on the same side.  y = u -
 * max(u), u = (eps - x) * scale, over rows of 65537. */
static void test_two_pass_copies_scalars(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t rows = 2, cols = 65537, n = rows * cols, shape[2] = {rows, cols};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape);
  tc_tensor *eps = tc_scalar_input(f, "eps", TC_F32), *scale = tc_scalar_input(f, "scale", TC_F32);
  tc_tensor *u = tc_binary(f, TC_MUL, tc_binary(f, TC_SUB, eps, x), scale);
  int ax = 1;
  tc_tensor *y = tc_binary(f, TC_SUB, u, tc_reduce(f, TC_REDUCE_MAX, u, 1, &ax));
  TC_REQUIRE(y != NULL, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  TC_CHECK(strstr(tc_fusion_schedule_note(f), "two-pass") != NULL, "note: %s", tc_fusion_schedule_note(f));
  tc_status st;
  tc_kernel *k = tc_compile(f, NULL, &st);
  TC_REQUIRE(k, "%s", tc_fusion_error(f));
  float *X = malloc((size_t)n * sizeof *X), *Y = malloc((size_t)n * sizeof *Y);
  for (int64_t i = 0; i < n; i++) X[i] = (float)((i * 37) % 101) * 0.125f - 6;
  static const float vals[2][2] = {{0.5f, 2}, {-3, -0.25f}};
  for (int run = 0; run < 2; run++) {
    float ev = vals[run][0], sv = vals[run][1];
    void *args[4] = {X, &ev, &sv, Y};
    st = tc_kernel_run(k, args, NULL, NULL);
    if (st == TC_ERR_NO_DEVICE) break;
    TC_CHECK(st == TC_OK, "%s", tc_kernel_error(k));
    int bad = 0;
    for (int64_t r = 0; r < rows && st == TC_OK; r++) {
      /* (eps - x) * scale is exact here (multiples of 1/8 times 2 or 1/4) */
      float m = -INFINITY;
      for (int64_t c = 0; c < cols; c++) m = fmaxf(m, (ev - X[r * cols + c]) * sv);
      for (int64_t c = 0; c < cols; c++) {
        float w = (ev - X[r * cols + c]) * sv - m;
        if (Y[r * cols + c] != w && bad++ < 4)
          TC_CHECK(0, "launch %d, element [%lld, %lld] = %g, want %g", run, (long long)r, (long long)c,
                   Y[r * cols + c], w);
      }
    }
  }
  free(X), free(Y);
  tc_kernel_free(k);
  tc_fusion_free(f);
}

static void test_misuse(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {2, 3};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape), *xi = tc_input(f, TC_I32, 2, shape);
  TC_CHECK(tc_scalar_input(f, "2eps", TC_F32) == NULL && strstr(tc_fusion_error(f), "name"), "%s", tc_fusion_error(f));
  TC_CHECK(tc_scalar_input(f, "", TC_F32) == NULL, "empty name accepted");
  TC_CHECK(tc_scalar_input(f, NULL, TC_F32) == NULL, "NULL name accepted");
  TC_CHECK(tc_scalar_input(f, "h", TC_F16) == NULL && strstr(tc_fusion_error(f), "f16"), "%s", tc_fusion_error(f));
  tc_tensor *e = tc_scalar_input(f, "eps", TC_F32);
  TC_REQUIRE(e, "%s", tc_fusion_error(f));
  TC_CHECK_EQ_INT(tc_tensor_ndims(e), 0);
  TC_CHECK(tc_scalar_input(f, "eps", TC_F32) == NULL && strstr(tc_fusion_error(f), "already"), "%s", tc_fusion_error(f));
  tc_tensor *e2 = tc_scalar_input(f, "e2", TC_F32);
  TC_CHECK(tc_unary(f, TC_EXP, e) == NULL && strstr(tc_fusion_error(f), "scalar input eps"), "%s", tc_fusion_error(f));
  TC_CHECK(tc_binary(f, TC_ADD, e, e2) == NULL && strstr(tc_fusion_error(f), "both scalar"), "%s", tc_fusion_error(f));
  TC_CHECK(tc_binary(f, TC_ADD, xi, e) == NULL && strstr(tc_fusion_error(f), "i32 scalar"), "%s", tc_fusion_error(f));
  int ax = 0;
  TC_CHECK(tc_reduce(f, TC_REDUCE_SUM, e, 1, &ax) == NULL, "a scalar reduced");
  TC_CHECK(tc_add_output(f, e) == TC_ERR_ARGUMENT && strstr(tc_fusion_error(f), "scalar input"), "%s", tc_fusion_error(f));
  tc_layout_parts parts;
  int64_t at[1] = {0}, ac[16], rc[16], col;
  TC_CHECK(tc_layout_split(e, &parts) == TC_ERR_ARGUMENT && strstr(tc_fusion_error(f), "no layout"), "%s",
           tc_fusion_error(f));
  TC_CHECK(tc_layout_eval(e, at, ac, rc, &col) == TC_ERR_ARGUMENT, "%s", tc_fusion_error(f));
  TC_CHECK(tc_cache_after(e) == NULL && strstr(tc_fusion_error(f), "nothing to cache"), "%s", tc_fusion_error(f));
  TC_CHECK(tc_cache_before(e) == NULL, "a scalar input cached");
  TC_CHECK(tc_split(e, 0, 2, 1) != TC_OK, "a scalar input split");
  TC_CHECK(tc_binary(f, TC_ADD, x, e) != NULL, "%s", tc_fusion_error(f));
  tc_fusion_free(f);
}

int main(void) {
  TC_RUN(test_misuse);
  TC_RUN(test_two_pass_copies_scalars);
  TC_RUN(test_left_and_integer);
  TC_RUN(test_one_kernel_two_eps);
  TC_MAIN_END();
}
