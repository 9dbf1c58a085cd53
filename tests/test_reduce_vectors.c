/* test_reduce_vectors.c - vectorized loads feeding reductions.
 *
 * tc_schedule_auto's inner (normalization) schedule splits the row as
 * [serial steps, TIDx(T), V]: each thread reads V adjacent elements per
 * step, sums (or Welford-updates) them into its register, then the block
 * tree.  Softmax, RMSNorm, LayerNorm (Welford) and a row sum at 7 x 1000,
 * 33 x 4099 (odd: no vector), 2 x 65536 and 3 x 8, in f32, f16 and bf16,
 * run twice on PoCL and compared with a plain C loop in double (and with
 * each other bit for bit); the note states the width, which is derived
 * here by hand.  A vectorized reduction axis scheduled by hand lowers;
 * one that is not the innermost loop is refused.  NVRTC and hipcc build
 * the vectorized kernels where they are installed. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo/norms.h"
#include "test.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

enum { K_SOFTMAX, K_RMSNORM, K_LAYERNORM, K_SUM, K_NUM };
static const char *kname[K_NUM] = {"softmax", "rmsnorm", "layernorm", "sum"};

static tc_tensor *build(tc_fusion *f, int kind, tc_dtype t, int64_t rows, int64_t cols) {
  if (kind == K_SOFTMAX) return tc_norm_build(f, TC_NORM_SOFTMAX, t, rows, cols);
  if (kind == K_RMSNORM) return tc_norm_build(f, TC_NORM_RMSNORM, t, rows, cols);
  if (kind == K_LAYERNORM) return tc_norm_build(f, TC_NORM_LAYERNORM, t, rows, cols);
  int64_t shape[2] = {rows, cols};
  int last = 1;
  return tc_reduce(f, TC_REDUCE_SUM, tc_input(f, t, 2, shape), 1, &last);
}

static void put(tc_dtype t, void *p, int64_t i, double v) {
  if (t == TC_F32) ((float *)p)[i] = (float)v;
  else if (t == TC_F16) ((uint16_t *)p)[i] = tc_f32_to_f16((float)v);
  else ((uint16_t *)p)[i] = tc_f32_to_bf16((float)v);
}

static double get(tc_dtype t, const void *p, int64_t i) {
  if (t == TC_F32) return ((const float *)p)[i];
  if (t == TC_F16) return tc_f16_to_f32(((const uint16_t *)p)[i]);
  return tc_bf16_to_f32(((const uint16_t *)p)[i]);
}

/* The plain C reference in double over the input as stored (rounded to
 * its dtype): want[] and a bound tol[] for each output element. */
static void reference(int kind, tc_dtype t, const void *x, int64_t rows, int64_t cols, double *want,
                      double *tol) {
  double rel = (double)(cols + 16) * ldexp(1.0, -24) * 4; /* f32 sums of cols terms */
  double out_rel = t == TC_F32 ? 0 : t == TC_F16 ? ldexp(1.0, -10) : ldexp(1.0, -7);
  for (int64_t r = 0; r < rows; r++) {
    double mx = -INFINITY, z = 0, q = 0, s = 0, a = 0, var = 0;
    for (int64_t c = 0; c < cols; c++) {
      double v = get(t, x, r * cols + c);
      mx = fmax(mx, v), q += v * v, s += v, a += fabs(v);
    }
    double mean = s / (double)cols;
    for (int64_t c = 0; c < cols; c++) {
      double v = get(t, x, r * cols + c);
      z += exp(v - mx), var += (v - mean) * (v - mean);
    }
    var /= (double)cols;
    if (kind == K_SUM) {
      want[r] = s, tol[r] = a * rel + 1e-6;
      continue;
    }
    for (int64_t c = 0; c < cols; c++) {
      double v = get(t, x, r * cols + c), w;
      if (kind == K_SOFTMAX) w = exp(v - mx) / z;
      else if (kind == K_RMSNORM) w = v / sqrt(q / (double)cols + 1e-5);
      else w = (v - mean) / sqrt(var + 1e-5);
      /* LayerNorm: the f32 mean's error over the standard deviation */
      double abs_err = kind == K_LAYERNORM ? a / (double)cols * rel / sqrt(var + 1e-5) : 1e-7;
      want[r * cols + c] = w, tol[r * cols + c] = fabs(w) * (rel + 1e-6 + out_rel) + abs_err;
    }
  }
}

/* The width the schedule must state, by hand: 16 bytes of the widest
 * dtype in global memory (the norms read and write t: 4 lanes of f32, 8
 * of f16 / bf16; a row sum writes f32: 4), halved until they divide the
 * row (4099 is odd: none); a row sum of few rows longer than 16384 is a
 * grid reduction, which reads scalars. */
static int64_t expected_width(int kind, tc_dtype t, int64_t rows, int64_t cols) {
  if (kind == K_SUM && rows < 64 && cols > 16384) return 1;
  int64_t v = kind != K_SUM && t != TC_F32 ? 8 : 4;
  while (v > 1 && cols % v) v /= 2;
  return v;
}

static void run_case(int kind, tc_dtype t, int64_t rows, int64_t cols) {
  char what[96];
  snprintf(what, sizeof what, "%s %s %lldx%lld", kname[kind], tc_dtype_name(t), (long long)rows,
           (long long)cols);
  tc_fusion *f = tc_fusion_new();
  tc_tensor *y = build(f, kind, t, rows, cols);
  TC_REQUIRE(y, "%s: %s", what, tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  const char *note = tc_fusion_schedule_note(f);
  int64_t v = expected_width(kind, t, rows, cols);
  char want_note[64];
  if (v > 1) snprintf(want_note, sizeof want_note, "vectors of %lld elements", (long long)v);
  else snprintf(want_note, sizeof want_note, "one element per thread and step");
  TC_CHECK(strstr(note, want_note) != NULL, "%s: note '%s', want '%s'", what, note, want_note);
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "reduce_vectors"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_CHECK(k != NULL, "%s: compile: %s", what, tc_fusion_error(f));
  if (!k) {
    tc_fusion_free(f);
    return;
  }
  TC_CHECK((strstr(tc_kernel_source(k), "/* Vectorize */") != NULL) == (v > 1),
           "%s: the kernel %s a vector loop", what, v > 1 ? "lacks" : "has");
  int64_t n = rows * cols, nout = kind == K_SUM ? rows : n;
  tc_dtype ot = kind == K_SUM ? TC_F32 : t;
  size_t isz = t == TC_F32 ? 4 : 2, osz = ot == TC_F32 ? 4 : 2;
  void *x = malloc((size_t)n * isz);
  uint64_t s = (uint64_t)(rows * 131 + cols) * 0x9E3779B97F4A7C15ull + (uint64_t)kind;
  for (int64_t i = 0; i < n; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    put(t, x, i, (double)(s % 20001) / 2500.0 - 4.0);
  }
  void *out[2] = {malloc((size_t)nout * osz), malloc((size_t)nout * osz)};
  for (int r = 0; r < 2 && st == TC_OK; r++) {
    memset(out[r], 0xff, (size_t)nout * osz);
    float eps = TC_NORM_EPS;
    void *args[3] = {x, out[r]};
    if (tc_kernel_nparams(k) == 3) args[1] = &eps, args[2] = out[r];
    st = tc_kernel_run(k, args, NULL, NULL);
    if (st == TC_ERR_NO_DEVICE) break;
    TC_CHECK(st == TC_OK, "%s: run: %s", what, tc_kernel_error(k));
  }
  if (st == TC_OK) {
    double *want = malloc((size_t)nout * sizeof *want), *tol = malloc((size_t)nout * sizeof *tol);
    reference(kind, t, x, rows, cols, want, tol);
    int bad = 0;
    for (int64_t i = 0; i < nout && bad < 3; i++) {
      double g = get(ot, out[0], i);
      if (!(fabs(g - want[i]) <= tol[i])) {
        bad++;
        TC_CHECK(0, "%s: element %lld = %.9g, want %.9g (+-%.3g)", what, (long long)i, g, want[i],
                 tol[i]);
      }
    }
    TC_CHECK(memcmp(out[0], out[1], (size_t)nout * osz) == 0, "%s: two runs differ", what);
    free(want), free(tol);
  }
  free(x), free(out[0]), free(out[1]);
  tc_kernel_free(k);
  tc_fusion_free(f);
}

static void test_auto_schedules(void) {
  static const int64_t shapes[][2] = {{7, 1000}, {33, 4099}, {2, 65536}, {3, 8}};
  static const tc_dtype types[] = {TC_F32, TC_F16, TC_BF16};
  for (int kind = 0; kind < K_NUM; kind++)
    for (int s = 0; s < 4; s++)
      for (int t = 0; t < 3; t++) run_case(kind, types[t], shapes[s][0], shapes[s][1]);
}

/* A row sum of 5 x 40 scheduled by hand: [BIDx, rS(5), rTIDx(2), rV(4)];
 * each thread sums 4 adjacent elements per step, then the two threads'
 * partials meet.  Before vectors fed reductions this was refused.  The
 * same with the vector outside the serial steps is refused. */
static tc_fusion *hand_sum(float *x, double *want, bool outer) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {5, 40};
  int last = 1;
  tc_tensor *s = tc_reduce(f, TC_REDUCE_SUM, tc_input(f, TC_F32, 2, shape), 1, &last);
  tc_add_output(f, s);
  tc_tensor *acc = tc_cache_before(s);
  OK(f, tc_split(acc, 1, 4, 1));
  OK(f, tc_split(acc, 1, 2, 1));
  int from = 3, to = 1;
  if (outer) OK(f, tc_reorder(acc, 1, &from, &to)); /* [BIDx, rV(4), rS(5), rTIDx(2)] */
  OK(f, tc_parallelize(acc, 0, TC_BIDX));
  OK(f, tc_parallelize(acc, outer ? 3 : 2, TC_TIDX));
  OK(f, tc_parallelize(acc, outer ? 1 : 3, TC_VECTORIZE));
  OK(f, tc_propagate_transforms(acc));
  OK(f, tc_parallelize_all_like(acc));
  for (int r = 0; r < 5; r++) {
    want[r] = 0;
    for (int c = 0; c < 40; c++) x[r * 40 + c] = (float)((r * 7 + c * 3) % 11) - 5, want[r] += x[r * 40 + c];
  }
  return f;
}

static void test_by_hand(void) {
  float x[200], out[5];
  double want[5];
  tc_fusion *f = hand_sum(x, want, false);
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "vec_sum"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_CHECK(k != NULL, "a vectorized innermost reduction axis is refused: %s", tc_fusion_error(f));
  if (k) {
    void *args[2] = {x, out};
    st = tc_kernel_run(k, args, NULL, NULL);
    TC_CHECK(st == TC_OK || st == TC_ERR_NO_DEVICE, "run: %s", tc_kernel_error(k));
    for (int r = 0; r < 5 && st == TC_OK; r++)
      TC_CHECK(out[r] == want[r], "row %d: %g, want %g", r, out[r], want[r]); /* small integers: exact */
  }
  tc_kernel_free(k);
  tc_fusion_free(f);

  /* the vector outside the serial steps: not the innermost loop */
  f = hand_sum(x, want, true);
  k = tc_compile(f, &o, &st);
  TC_CHECK(k == NULL && st == TC_ERR_SCHEDULE, "a vectorized reduction axis outside the serial "
           "steps compiles (status %d)", (int)st);
  const char *e = tc_fusion_error(f);
  TC_CHECK(strstr(e, "is vectorized but is not the innermost loop axis") != NULL, "message: %s", e);
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* A vector in registers is an unrolled loop over the thread's own
 * elements: 16 lanes of f32 (64 bytes) are accepted there, 32 are not;
 * in global memory 16 bytes stay the bound. */
static void test_register_vector_width(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {2, 64};
  int last = 1;
  tc_tensor *s = tc_reduce(f, TC_REDUCE_SUM, tc_input(f, TC_F32, 2, shape), 1, &last);
  tc_add_output(f, s);
  tc_tensor *acc = tc_cache_before(s);
  OK(f, tc_split(acc, 1, 32, 1)); /* [2, 2, 32] */
  OK(f, tc_split(acc, 2, 16, 1)); /* [2, 2, 2, 16] */
  TC_CHECK(tc_parallelize(acc, 3, TC_VECTORIZE) == TC_OK, "16 f32 lanes in registers: %s",
           tc_fusion_error(f));
  OK(f, tc_parallelize(acc, 3, TC_SERIAL));
  OK(f, tc_merge(acc, 2, 3)); /* [2, 2, 32] */
  TC_CHECK(tc_parallelize(acc, 2, TC_VECTORIZE) == TC_ERR_SCHEDULE, "32 lanes accepted");
  TC_CHECK(strstr(tc_fusion_error(f), "16 lanes in registers") != NULL, "message: %s",
           tc_fusion_error(f));
  tc_fusion_free(f);
}

/* NVRTC (CUDA, sm_90a) and hipcc (HIP, gfx90a) build the vectorized
 * softmax, LayerNorm and row sum of 7 x 1000 in bf16. */
static void test_device_compilers(void) {
  for (int t = TC_TARGET_CUDA; t <= TC_TARGET_HIP; t++)
    for (int kind = 0; kind < K_NUM; kind++) {
      if (kind == K_RMSNORM) continue;
      tc_fusion *f = tc_fusion_new();
      tc_tensor *y = build(f, kind, TC_BF16, 7, 1000);
      TC_REQUIRE(y, "%s", tc_fusion_error(f));
      OK(f, tc_add_output(f, y));
      OK(f, tc_schedule_auto(f, (tc_target)t, NULL));
      tc_compile_options o = {(tc_target)t, NULL, kname[kind]};
      tc_status st;
      tc_kernel *k = tc_compile(f, &o, &st);
      TC_CHECK(k != NULL, "%s %s: %s", tc_target_name((tc_target)t), kname[kind], tc_fusion_error(f));
      if (k) {
        TC_CHECK(strstr(tc_kernel_source(k), "Vectorize") != NULL, "%s %s: no vector loop",
                 tc_target_name((tc_target)t), kname[kind]);
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
  TC_RUN(test_by_hand);
  TC_RUN(test_register_vector_width);
  TC_RUN(test_device_compilers);
  TC_RUN(test_auto_schedules);
  TC_MAIN_END();
}
