/* test_schedule_auto.c - the automatic scheduler (tc_schedule_auto) on
 * random cases: a template (softmax, RMSNorm, LayerNorm (Welford), the
 * backward of softmax and of RMSNorm, the cross-entropy loss (a gather of
 * the label's logit), a row sum as output, a column max,
 * a pointwise a * b + c) at a random
 * shape (extents of 1, primes, rows from 1 to 65537 elements), scheduled
 * by tc_schedule_auto alone, compiled for OpenCL and run on PoCL; each
 * output compared with a plain C loop written here (in double) and with
 * tc_reference_run, within the rounding of f32 sums of the row's length.
 * Also: the schedule note, that a user's schedule wins, and the
 * refusals; a vector of a float result stored as one access; the outer
 * schedule's ops before the reduction computed inside its loop.
 *
 *   test_schedule_auto [--cases N] [--seed S]   (default 10 cases, seed 1) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo/norms.h"
#include "test.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

/* the first six are norms.h's, in its order */
enum {
  K_SOFTMAX = TC_NORM_SOFTMAX, K_RMSNORM = TC_NORM_RMSNORM, K_LAYERNORM = TC_NORM_LAYERNORM,
  K_SOFTMAX_BWD = TC_NORM_SOFTMAX_BWD, K_RMSNORM_BWD = TC_NORM_RMSNORM_BWD, K_XENT = TC_NORM_XENT,
  K_ROWSUM = TC_NORM_COUNT, K_COLMAX, K_POINTWISE, K_NUM
};
static const char *kname[K_NUM] = {"softmax", "rmsnorm", "layernorm", "softmax_bwd", "rmsnorm_bwd",
                                   "xent", "rowsum", "colmax", "pointwise"};

static uint64_t rng_state;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return rng_state;
}

static void fill(float *p, int64_t n) {
  for (int64_t i = 0; i < n; i++) p[i] = (float)((double)(rnd() % 20001) / 2500.0 - 4.0);
}

/* Builds template kind on x[rows, cols] (b, c: extra inputs of the
 * pointwise template); returns the output. */
static tc_tensor *build(tc_fusion *f, int kind, int64_t rows, int64_t cols) {
  if (kind < TC_NORM_COUNT) return tc_norm_build(f, (tc_norm_kind)kind, TC_F32, rows, cols);
  int64_t shape[2] = {rows, cols};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape);
  int last = 1, first = 0;
  switch (kind) {
    case K_ROWSUM: return tc_reduce(f, TC_REDUCE_SUM, tc_unary(f, TC_ABS, x), 1, &last);
    case K_COLMAX: return tc_reduce(f, TC_REDUCE_MAX, x, 1, &first);
    default: {
      tc_tensor *b = tc_input(f, TC_F32, 2, shape), *c = tc_input(f, TC_F32, 2, shape);
      return tc_binary(f, TC_ADD, tc_binary(f, TC_MUL, x, b), c);
    }
  }
}

/* The plain C value of every output element, and its tolerance. */
static void expect(int kind, int64_t rows, int64_t cols, float *const *in, double *want, double *tol) {
  const float *x = in[0];
  double u = ldexp(1.0, -24);
  for (int64_t r = 0; r < rows && kind != K_COLMAX; r++) {
    const float *row = x + r * cols;
    double mx = -INFINITY, s = 0, a = 0, q = 0;
    for (int64_t c = 0; c < cols; c++) mx = fmax(mx, row[c]), s += row[c], a += fabs(row[c]), q += (double)row[c] * row[c];
    double mean = s / (double)cols, var = 0, z = 0;
    for (int64_t c = 0; c < cols; c++) var += (row[c] - mean) * (row[c] - mean), z += exp(row[c] - mx);
    var /= (double)cols;
    double rel = (double)(cols + 16) * u * 4; /* an f32 sum of cols terms, then a few ops */
    for (int64_t c = 0; c < cols; c++) {
      double *w = want + r * cols + c, *t = tol + r * cols + c;
      switch (kind) {
        case K_SOFTMAX: *w = exp(row[c] - mx) / z, *t = *w * (rel + 1e-6); break;
        case K_RMSNORM: *w = row[c] / sqrt(q / (double)cols + 1e-5), *t = fabs(*w) * (rel + 1e-6); break;
        case K_LAYERNORM: {
          double sd = sqrt(var + 1e-5);
          *w = (row[c] - mean) / sd;
          /* mean's error (a / n * rel) is amplified by 1 / sd */
          *t = fabs(*w) * (rel + 1e-6) + (a / (double)cols) * rel / sd * 2;
          break;
        }
        case K_SOFTMAX_BWD: { /* x is y; in[1] is dy */
          double sy = 0, sa = 0;
          for (int64_t j = 0; j < cols; j++) sy += (double)in[1][r * cols + j] * row[j], sa += fabs((double)in[1][r * cols + j] * row[j]);
          double dy = in[1][r * cols + c];
          *w = row[c] * (dy - sy), *t = fabs(row[c]) * (fabs(dy) + sa) * (rel + 1e-6);
          break;
        }
        case K_RMSNORM_BWD: {
          double md = 0, ma = 0;
          for (int64_t j = 0; j < cols; j++) md += (double)in[1][r * cols + j] * row[j], ma += fabs((double)in[1][r * cols + j] * row[j]);
          md /= (double)cols, ma /= (double)cols;
          double rr = 1.0 / sqrt(q / (double)cols + 1e-5), dy = in[1][r * cols + c];
          *w = rr * dy - row[c] * rr * rr * rr * md;
          *t = (fabs(rr * dy) + fabs(row[c]) * rr * rr * rr * ma) * (rel + 1e-6) * 4;
          break;
        }
        case K_POINTWISE: {
          double v = (double)row[c] * in[1][r * cols + c] + in[2][r * cols + c];
          *w = v, *t = (fabs((double)row[c] * in[1][r * cols + c]) + fabs(v)) * u * 2;
          break;
        }
        default: break;
      }
    }
    if (kind == K_ROWSUM) want[r] = a, tol[r] = a * rel;
    if (kind == K_XENT) { /* in[1] holds the labels as i32 */
      int32_t lab = ((const int32_t *)in[1])[r];
      want[r] = log(z) + mx - row[lab];
      tol[r] = (fabs(log(z)) + fabs(mx) + fabs(row[lab])) * (rel + 1e-6);
    }
  }
  if (kind == K_COLMAX)
    for (int64_t c = 0; c < cols; c++) {
      double m = -INFINITY;
      for (int64_t r = 0; r < rows; r++) m = fmax(m, x[r * cols + c]);
      want[c] = m, tol[c] = 0;
    }
}

static void run_case(int kind, int64_t rows, int64_t cols, int idx) {
  tc_fusion *f = tc_fusion_new();
  tc_tensor *y = build(f, kind, rows, cols);
  TC_REQUIRE(y, "%s: %s", kname[kind], tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  const char *note = tc_fusion_schedule_note(f);
  const char *cls = kind == K_POINTWISE ? "pointwise" : kind == K_COLMAX ? "outer reduction" : "inner reduction";
  TC_CHECK(strstr(note, cls) != NULL, "case %d %s %lldx%lld: note '%s'", idx, kname[kind],
           (long long)rows, (long long)cols, note);
  char name[64];
  snprintf(name, sizeof name, "auto_%s", kname[kind]);
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, name};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_CHECK(k != NULL, "case %d %s %lldx%lld: compile: %s", idx, kname[kind], (long long)rows,
           (long long)cols, tc_fusion_error(f));
  if (!k) {
    tc_fusion_free(f);
    return;
  }
  TC_CHECK(strstr(tc_kernel_source(k), note) != NULL, "the kernel does not print its schedule note");
  int nin = kind < TC_NORM_COUNT ? tc_norm_inputs((tc_norm_kind)kind) : kind == K_POINTWISE ? 3 : 1;
  int64_t n = rows * cols, nout = kind == K_ROWSUM || kind == K_XENT ? rows : kind == K_COLMAX ? cols : n;
  float *in[3], *out = malloc((size_t)nout * sizeof(float)), *ref = malloc((size_t)nout * sizeof(float));
  for (int i = 0; i < nin; i++) in[i] = malloc((size_t)n * sizeof(float)), fill(in[i], n);
  if (kind == K_XENT) /* the labels, i32 [rows, 1], in [0, cols) */
    for (int64_t r = 0; r < rows; r++) ((int32_t *)in[1])[r] = (int32_t)(rnd() % (uint64_t)cols);
  double *want = malloc((size_t)n * sizeof(double)), *tol = malloc((size_t)n * sizeof(double));
  expect(kind, rows, cols, in, want, tol);
  void *args[5], *rargs[5];
  float eps = TC_NORM_EPS; /* the scalar input after the tensors (norms.h) */
  int np = nin;
  for (int i = 0; i < nin; i++) args[i] = rargs[i] = in[i];
  if (kind < TC_NORM_COUNT && tc_norm_has_eps((tc_norm_kind)kind)) args[np] = rargs[np] = &eps, np++;
  args[np] = out, rargs[np] = ref;
  for (int64_t i = 0; i < nout; i++) out[i] = -12345.0f;
  st = tc_kernel_run(k, args, NULL, NULL);
  if (st != TC_ERR_NO_DEVICE) {
    TC_CHECK(st == TC_OK, "case %d: run: %s", idx, tc_kernel_error(k));
    OK(f, tc_reference_run(f, rargs));
    int bad = 0;
    for (int64_t i = 0; i < nout && st == TC_OK && bad < 3; i++) {
      if (!(fabs(out[i] - want[i]) <= tol[i])) {
        bad++;
        TC_CHECK(0, "case %d %s %lldx%lld [%s]: element %lld = %.9g, want %.9g (+-%.3g)", idx,
                        kname[kind], (long long)rows, (long long)cols, note, (long long)i, out[i],
                        want[i], tol[i]);
      }
      if (!(fabs(ref[i] - want[i]) <= tol[i])) {
        bad++;
        TC_CHECK(0, "case %d %s: reference element %lld = %.9g, want %.9g", idx, kname[kind],
                 (long long)i, ref[i], want[i]);
      }
    }
  }
  for (int i = 0; i < nin; i++) free(in[i]);
  free(out), free(ref), free(want), free(tol);
  tc_kernel_free(k);
  tc_fusion_free(f);
}

static long g_cases = 10;

static void test_random_cases(void) {
  static const int64_t rows[] = {1, 2, 3, 7, 33, 128};
  static const int64_t cols[] = {1, 5, 31, 100, 257, 1000, 4099, 65537};
  for (long i = 0; i < g_cases; i++) {
    int kind = (int)(rnd() % K_NUM);
    int64_t r = rows[rnd() % 6], c = cols[rnd() % 8];
    if (r * c > (int64_t)1 << 18) r = 2; /* keeps a case under a second on PoCL */
    run_case(kind, r, c, (int)i);
  }
}

/* The shapes the issue lists, each template at each. */
static void test_listed_shapes(void) {
  static const int64_t shapes[][2] = {{3, 1}, {7, 1000}, {33, 4099}, {2, 65537}};
  for (int s = 0; s < 4; s++)
    for (int kind = 0; kind < K_NUM; kind++) run_case(kind, shapes[s][0], shapes[s][1], -1);
}

static void test_user_schedule_wins_and_refusals(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {4, 64};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape);
  tc_tensor *y = tc_unary(f, TC_EXP, x);
  OK(f, tc_add_output(f, y));
  OK(f, tc_parallelize(y, 1, TC_TIDX));
  OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  TC_CHECK(strstr(tc_fusion_schedule_note(f), "kept the user's schedule") != NULL, "note: %s",
           tc_fusion_schedule_note(f));
  TC_CHECK_EQ_INT(tc_tensor_loop_ptype(y, 0), TC_SERIAL);
  TC_CHECK_EQ_INT(tc_tensor_loop_ptype(y, 1), TC_TIDX);
  tc_fusion_free(f);
  /* reductions over different axes */
  f = tc_fusion_new();
  x = tc_input(f, TC_F32, 2, shape);
  int a0 = 0, a1 = 1;
  tc_tensor *s = tc_binary(f, TC_ADD, tc_reduce(f, TC_REDUCE_SUM, x, 1, &a0), tc_reduce(f, TC_REDUCE_SUM, x, 1, &a1));
  OK(f, tc_add_output(f, s));
  TC_CHECK(tc_schedule_auto(f, TC_TARGET_OPENCL, NULL) == TC_ERR_UNSUPPORTED &&
               strstr(tc_fusion_error(f), "reduce different axes"), "%s", tc_fusion_error(f));
  tc_fusion_free(f);
  f = tc_fusion_new(); /* no outputs */
  TC_CHECK_EQ_INT(tc_schedule_auto(f, TC_TARGET_OPENCL, NULL), TC_ERR_ARGUMENT);
  tc_fusion_free(f);
}

/* Every norm kernel, as tc_schedule_auto schedules it, builds with NVRTC
 * (CUDA, sm_90a) and hipcc (HIP, gfx90a): no GPU is needed to compile. */
static void test_device_compilers_build_every_norm(void) {
  for (int t = TC_TARGET_CUDA; t <= TC_TARGET_HIP; t++)
    for (int kind = 0; kind < TC_NORM_COUNT; kind++) {
      tc_fusion *f = tc_fusion_new();
      tc_tensor *y = tc_norm_build(f, (tc_norm_kind)kind, TC_BF16, 33, 4099);
      TC_REQUIRE(y, "%s", tc_fusion_error(f));
      OK(f, tc_add_output(f, y));
      OK(f, tc_schedule_auto(f, (tc_target)t, NULL));
      tc_compile_options o = {(tc_target)t, NULL, tc_norm_name((tc_norm_kind)kind)};
      tc_status st;
      tc_kernel *k = tc_compile(f, &o, &st);
      TC_CHECK(k != NULL, "%s %s: %s", tc_target_name((tc_target)t), o.kernel_name, tc_fusion_error(f));
      if (k) {
        st = tc_kernel_build(k, NULL);
        if (st == TC_ERR_UNSUPPORTED) { /* no NVRTC / hipcc on this machine */
          tc_kernel_free(k), tc_fusion_free(f);
          TC_SKIP("%s compiler missing: %s", tc_target_name((tc_target)t), tc_kernel_error(k));
        }
        TC_CHECK(st == TC_OK, "%s %s does not build: %s", tc_target_name((tc_target)t), o.kernel_name,
                 tc_kernel_error(k));
      }
      tc_kernel_free(k);
      tc_fusion_free(f);
    }
}

/* The pointwise schedule's vectors: y = x * b + x (then cast) over
 * x, b [rows, cols] of small integers (exact in every dtype), at shapes
 * whose element count allows 16-byte vectors, narrower ones or none; the
 * note names the width, which is 16 bytes of the widest dtype halved
 * until it divides the count; every element is checked against plain C
 * on PoCL, and the CUDA and HIP kernels build. */
static void put(tc_dtype t, void *p, int64_t i, double v) {
  switch (t) {
    case TC_F32: ((float *)p)[i] = (float)v; break;
    case TC_F16: ((uint16_t *)p)[i] = tc_f32_to_f16((float)v); break;
    case TC_BF16: ((uint16_t *)p)[i] = tc_f32_to_bf16((float)v); break;
    case TC_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case TC_I8: ((int8_t *)p)[i] = (int8_t)v; break;
  }
}

static double get(tc_dtype t, const void *p, int64_t i) {
  switch (t) {
    case TC_F32: return ((const float *)p)[i];
    case TC_F16: return tc_f16_to_f32(((const uint16_t *)p)[i]);
    case TC_BF16: return tc_bf16_to_f32(((const uint16_t *)p)[i]);
    case TC_I32: return ((const int32_t *)p)[i];
    default: return ((const int8_t *)p)[i];
  }
}

static void test_pointwise_vectors(void) {
  static const struct {
    tc_dtype in, out;
    int64_t rows, cols, lanes;
  } cases[] = {
      {TC_F32, TC_F32, 7, 1000, 4},   /* 7000 = 4 * 1750 */
      {TC_F32, TC_F32, 3, 4099, 1},   /* 12297 is odd */
      {TC_F32, TC_F32, 2, 65537, 2},  /* 131074 = 2 * 65537 */
      {TC_F16, TC_F16, 4, 1024, 8},   /* 8 halves in 16 bytes */
      {TC_F16, TC_F32, 6, 2, 4},      /* the f32 result is the widest: 4 */
      {TC_BF16, TC_BF16, 3, 1, 1},    /* 3 elements */
      {TC_I8, TC_I8, 3, 32, 16},      /* 16 bytes of i8 */
      {TC_I8, TC_I32, 1, 12, 4},      /* 12 = 4 * 3 */
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    int64_t rows = cases[c].rows, cols = cases[c].cols, n = rows * cols, shape[2] = {rows, cols};
    tc_dtype din = cases[c].in, dout = cases[c].out;
    char what[96];
    snprintf(what, sizeof what, "%s -> %s %lldx%lld", tc_dtype_name(din), tc_dtype_name(dout), (long long)rows,
             (long long)cols);
    for (int t = TC_TARGET_OPENCL; t <= TC_TARGET_HIP; t++) {
      tc_fusion *f = tc_fusion_new();
      tc_tensor *x = tc_input(f, din, 2, shape), *b = tc_input(f, din, 2, shape);
      tc_tensor *y = tc_binary(f, TC_ADD, tc_binary(f, TC_MUL, x, b), x);
      if (dout != din) y = tc_cast(f, y, dout);
      TC_REQUIRE(y, "%s", tc_fusion_error(f));
      OK(f, tc_add_output(f, y));
      OK(f, tc_schedule_auto(f, (tc_target)t, NULL));
      char want[96];
      if (cases[c].lanes > 1) snprintf(want, sizeof want, "vectors of %lld elements", (long long)cases[c].lanes);
      else snprintf(want, sizeof want, "one element per thread");
      TC_CHECK(strstr(tc_fusion_schedule_note(f), want) != NULL, "%s: note '%s', want '%s'", what,
               tc_fusion_schedule_note(f), want);
      tc_compile_options o = {(tc_target)t, NULL, "auto_vec"};
      tc_status st;
      tc_kernel *k = tc_compile(f, &o, &st);
      TC_CHECK(k != NULL, "%s %s: compile: %s", what, tc_target_name((tc_target)t), tc_fusion_error(f));
      /* a float result's vector is one store where no vector straddles
       * a row (the runs below check its values) */
      if (k && cases[c].lanes > 1 && cols % cases[c].lanes == 0 && (dout == TC_F32 || dout == TC_F16 || dout == TC_BF16))
        TC_CHECK(strstr(tc_kernel_source(k), t == TC_TARGET_OPENCL ? "vstore" : "*reinterpret_cast<") != NULL,
                 "%s %s: the result's vector is not one store", what, tc_target_name((tc_target)t));
      if (k && t != TC_TARGET_OPENCL) { /* NVRTC / hipcc, when here */
        st = tc_kernel_build(k, NULL);
        TC_CHECK(st == TC_OK || st == TC_ERR_UNSUPPORTED, "%s %s does not build: %s", what,
                 tc_target_name((tc_target)t), tc_kernel_error(k));
      } else if (k) {
        size_t is = tc_dtype_size(din), os = tc_dtype_size(dout);
        void *X = malloc((size_t)n * is), *B = malloc((size_t)n * is), *Y = malloc((size_t)n * os);
        for (int64_t i = 0; i < n; i++) put(din, X, i, (double)(i % 9) - 4), put(din, B, i, (double)(i % 5) - 2);
        memset(Y, 0x7f, (size_t)n * os);
        void *args[3] = {X, B, Y};
        st = tc_kernel_run(k, args, NULL, NULL);
        if (st != TC_ERR_NO_DEVICE) {
          TC_CHECK(st == TC_OK, "%s: run: %s", what, tc_kernel_error(k));
          int bad = 0;
          for (int64_t i = 0; i < n && st == TC_OK; i++) {
            double xv = (double)(i % 9) - 4, w = xv * ((double)(i % 5) - 2) + xv;
            if (get(dout, Y, i) != w && bad++ < 3)
              TC_CHECK(0, "%s: element %lld = %g, want %g", what, (long long)i, get(dout, Y, i), w);
          }
        }
        free(X), free(B), free(Y);
      }
      tc_kernel_free(k);
      tc_fusion_free(f);
    }
  }
}

/* The outer schedule computes the ops before the reduction inside its
 * loop over the rows: tanh(x) summed over 2048 rows holds one element per
 * thread, not 2048 (the column's values), and the sums match plain C. */
static void test_outer_inlines(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t sh[2] = {2048, 100};
  tc_tensor *x = tc_input(f, TC_F32, 2, sh);
  tc_tensor *t = tc_unary(f, TC_TANH, x);
  int ax = 0;
  tc_tensor *y = tc_reduce(f, TC_REDUCE_SUM, t, 1, &ax);
  OK(f, tc_add_output(f, y));
  OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "auto_outer"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_REQUIRE(k, "%s", tc_fusion_error(f));
  tc_allocation al;
  TC_CHECK(tc_kernel_tensor_allocation(k, t, &al) == TC_OK && al.memory == TC_MEM_LOCAL && al.elements == 1,
           "tanh(x) holds %lld elements per thread", (long long)al.elements);
  float *xs = malloc(2048 * 100 * sizeof *xs), out[100];
  for (int i = 0; i < 2048 * 100; i++) xs[i] = (float)((i * 37) % 101) / 25.0f - 2.0f;
  void *args[2] = {xs, out};
  st = tc_kernel_run(k, args, NULL, NULL);
  if (st != TC_ERR_NO_DEVICE) {
    TC_CHECK(st == TC_OK, "%s", tc_kernel_error(k));
    for (int j = 0; j < 100 && st == TC_OK; j++) {
      double s = 0;
      for (int i = 0; i < 2048; i++) s += tanh((double)xs[i * 100 + j]);
      TC_CHECK(fabs(out[j] - s) <= 1e-3, "column %d: %g, want %g", j, out[j], s);
    }
  }
  free(xs);
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* A copy of 16-bit floats moves their bits, vector by vector: a NaN's
 * payload, -0, a subnormal and infinities come out as they went in (no
 * round trip through f32), and the stores are one vector each. */
static void test_raw_copies(void) {
  static const uint16_t special[8] = {0x7e01, 0x8000, 0x0001, 0x7c00, 0xfc00, 0x3c00, 0x7fff, 0xffff};
  for (int bf = 0; bf < 2; bf++)
    for (int t = TC_TARGET_OPENCL; t <= TC_TARGET_CUDA; t++) {
      tc_fusion *f = tc_fusion_new();
      int64_t sh[2] = {64, 64};
      tc_tensor *a = tc_input(f, bf ? TC_BF16 : TC_F16, 2, sh), *b = tc_set(f, a);
      OK(f, tc_add_output(f, b));
      OK(f, tc_schedule_auto(f, (tc_target)t, NULL));
      tc_compile_options o = {(tc_target)t, NULL, "raw_copy"};
      tc_status st;
      tc_kernel *k = tc_compile(f, &o, &st);
      TC_REQUIRE(k, "%s", tc_fusion_error(f));
      const char *src = tc_kernel_source(k);
      TC_CHECK(!strstr(src, "_to_f32(T0") && (t == TC_TARGET_OPENCL ? strstr(src, "vstore8((ushort8)") != NULL
                                                                     : strstr(src, "*reinterpret_cast<uint4*>") != NULL),
               "%s %s: the copy converts or is not one vector store:\n%s", bf ? "bf16" : "f16",
               tc_target_name((tc_target)t), src);
      if (t == TC_TARGET_OPENCL) {
        uint16_t x[64 * 64], y[64 * 64];
        for (int i = 0; i < 64 * 64; i++) x[i] = i < 8 ? special[i] : (uint16_t)(i * 2654435761u >> 16);
        memset(y, 0, sizeof y);
        void *args[2] = {x, y};
        st = tc_kernel_run(k, args, NULL, NULL);
        if (st != TC_ERR_NO_DEVICE) {
          TC_CHECK(st == TC_OK, "%s", tc_kernel_error(k));
          TC_CHECK(memcmp(x, y, sizeof x) == 0, "%s: the copy changed bits (element 0: 0x%04x -> 0x%04x)",
                   bf ? "bf16" : "f16", x[0], y[0]);
        }
      }
      tc_kernel_free(k);
      tc_fusion_free(f);
    }
}

int main(int argc, char **argv) {
  uint64_t seed = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--cases")) g_cases = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--seed")) seed = strtoull(argv[i + 1], NULL, 10);
  }
  rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
  TC_RUN(test_user_schedule_wins_and_refusals);
  TC_RUN(test_pointwise_vectors);
  TC_RUN(test_outer_inlines);
  TC_RUN(test_raw_copies);
  TC_RUN(test_device_compilers_build_every_norm);
  TC_RUN(test_listed_shapes);
  TC_RUN(test_random_cases);
  TC_MAIN_END();
}
