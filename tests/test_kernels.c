/* test_kernels.c - scheduled kernels run on the OpenCL device (PoCL by
 * default) and checked against plain C loops written here, never against
 * tc_reference_run: pointwise fusions tiled over BIDx/TIDx on shapes the
 * tiles do not divide, 16-bit float casts checked bit for bit against an
 * independent round-to-nearest-even conversion, integer and i8 inputs, a
 * tiled transpose through shared memory (plain and XOR-swizzled), an outer
 * split, tc_compute_at, tc_cache_after / tc_cache_before, vectorized and
 * unrolled axes, and a resized (padded) loop domain.  Output buffers start
 * filled with a sentinel so that an element no thread writes is caught.
 * Inputs come from a fixed seed; TILEC_TEST_SEED=n tries others. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tilec/tilec.h"

/* ---- helpers -------------------------------------------------------------- */

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

static uint32_t rng = 0x12345678u;

static uint32_t next_u32(void) { /* xorshift32 */
  rng ^= rng << 13;
  rng ^= rng >> 17;
  rng ^= rng << 5;
  return rng;
}

static float frand(float lo, float hi) {
  return lo + (hi - lo) * (float)(next_u32() >> 8) / 16777216.0f;
}

static void fill_f32(float *p, size_t n, float lo, float hi) {
  for (size_t i = 0; i < n; i++) p[i] = frand(lo, hi);
}

static float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* Sentinels an output starts with: NaN for floats, values the tests never
 * produce for integers. */
static void sentinel(void *p, tc_dtype t, size_t n) {
  for (size_t i = 0; i < n; i++) switch (t) {
      case TC_F32: ((uint32_t *)p)[i] = 0x7fa5a5a5u; break;
      case TC_F16: case TC_BF16: ((uint16_t *)p)[i] = 0x7fffu; break;
      case TC_I32: ((int32_t *)p)[i] = 0x5a5a5a5a; break;
      case TC_I8: ((int8_t *)p)[i] = 127; break;
    }
}

static void *out_buf(tc_dtype t, size_t n) {
  void *p = malloc(n * tc_dtype_size(t) + 1);
  sentinel(p, t, n);
  return p;
}

static tc_kernel *compile_cl(tc_fusion *f, const char *name) {
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, name};
  tc_status st = TC_OK;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_CHECK(k != NULL && st == TC_OK, "compile %s: %s: %s", name, tc_status_name(st),
           tc_fusion_error(f));
  return k;
}

/* Compiles and runs; returns 1 when both worked. */
static int compile_run(tc_fusion *f, const char *name, void **args, tc_kernel **kout) {
  tc_kernel *k = compile_cl(f, name);
  if (kout) *kout = k;
  if (!k) return 0;
  tc_status st = tc_kernel_run(k, args, NULL, NULL);
  TC_CHECK(st == TC_OK, "run %s: %s: %s\n%s", name, tc_status_name(st), tc_kernel_error(k),
           tc_kernel_source(k));
  if (!kout) tc_kernel_free(k);
  return st == TC_OK;
}

/* Counts mismatches, reporting the first few. */
static int nbad;

static void bad(const char *what, size_t i, double got, double want) {
  if (nbad++ < 5) TC_CHECK(0, "%s element %zu: got %.9g, want %.9g", what, i, got, want);
}

static void finish(const char *what) {
  if (nbad > 5) TC_CHECK(0, "%s: %d mismatching elements in all", what, nbad);
  nbad = 0;
}

/* |got - want| <= rtol * scale, where scale is the magnitude of the terms
 * that made want (so that a contracted a*b+c is judged fairly). */
static void close_f32(const char *what, const float *got, const float *want, const float *scale,
                      size_t n, double rtol) {
  for (size_t i = 0; i < n; i++) {
    double s = scale ? scale[i] : fabs(want[i]);
    if (isnan(got[i]) || isnan(want[i]) || fabs((double)got[i] - want[i]) > rtol * s + 1e-30)
      bad(what, i, got[i], want[i]);
  }
  finish(what);
}

static void exact_f32(const char *what, const float *got, const float *want, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!(got[i] == want[i])) bad(what, i, got[i], want[i]);
  finish(what);
}

static void exact_i32(const char *what, const int32_t *got, const int32_t *want, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (got[i] != want[i]) bad(what, i, got[i], want[i]);
  finish(what);
}

/* The 2-D tile: [Y, X] -> [Yo*Xo (BIDx), Yi, Xi (TIDx)], propagated to the
 * whole fusion and inlined as deep as possible. */
static void tile2d(tc_fusion *f, tc_tensor *out, int64_t ty, int64_t tx) {
  int from[2] = {1, 2}, to[2] = {2, 1};
  OK(f, tc_split(out, 0, ty, 1));
  OK(f, tc_split(out, 2, tx, 1));
  OK(f, tc_reorder(out, 2, from, to));
  OK(f, tc_merge(out, 0, 1));
  OK(f, tc_parallelize(out, 0, TC_BIDX));
  OK(f, tc_parallelize(out, 2, TC_TIDX));
  OK(f, tc_propagate_transforms(out));
  OK(f, tc_parallelize_all_like(out));
  OK(f, tc_inline_most(f));
}

static void check_launch(tc_kernel *k, int64_t gx, int64_t bx) {
  int64_t grid[3], block[3];
  tc_kernel_launch_dims(k, grid, block);
  TC_CHECK(grid[0] == gx && grid[1] == 1 && grid[2] == 1, "grid %lld x %lld x %lld, want %lld",
           (long long)grid[0], (long long)grid[1], (long long)grid[2], (long long)gx);
  TC_CHECK(block[0] == bx && block[1] == 1 && block[2] == 1, "block %lld x %lld x %lld, want %lld",
           (long long)block[0], (long long)block[1], (long long)block[2], (long long)bx);
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* ---- a*b + c --------------------------------------------------------------- */

static void fma_case(int64_t ny, int64_t nx, int64_t ty, int64_t tx, const char *name) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {ny, nx};
  tc_tensor *a = tc_input(f, TC_F32, 2, shape);
  tc_tensor *b = tc_input(f, TC_F32, 2, shape);
  tc_tensor *c = tc_input(f, TC_F32, 2, shape);
  tc_tensor *out = tc_binary(f, TC_ADD, tc_binary(f, TC_MUL, a, b), c);
  OK(f, tc_add_output(f, out));
  tile2d(f, out, ty, tx);
  TC_CHECK_EQ_INT(tc_tensor_nloop(out), 3);
  TC_CHECK_EQ_INT(tc_tensor_loop_extent(out, 0), cdiv(ny, ty) * cdiv(nx, tx));
  TC_CHECK_EQ_INT(tc_tensor_loop_extent(out, 1), ty);
  TC_CHECK_EQ_INT(tc_tensor_loop_extent(out, 2), tx);
  TC_CHECK(tc_tensor_loop_ptype(out, 0) == TC_BIDX && tc_tensor_loop_ptype(out, 2) == TC_TIDX,
           "ptypes");
  size_t n = (size_t)(ny * nx);
  float *A = malloc(n * 4), *B = malloc(n * 4), *C = malloc(n * 4), *O = out_buf(TC_F32, n);
  float *W = malloc(n * 4), *S = malloc(n * 4);
  fill_f32(A, n, -2, 2), fill_f32(B, n, -2, 2), fill_f32(C, n, -2, 2);
  for (size_t i = 0; i < n; i++) {
    W[i] = A[i] * B[i] + C[i];
    S[i] = fabsf(A[i] * B[i]) + fabsf(C[i]);
  }
  void *args[4] = {A, B, C, O};
  tc_kernel *k = NULL;
  if (compile_run(f, name, args, &k)) {
    check_launch(k, cdiv(ny, ty) * cdiv(nx, tx), tx);
    close_f32(name, O, W, S, n, 1e-5);
  }
  tc_kernel_free(k);
  free(A), free(B), free(C), free(O), free(W), free(S);
  tc_fusion_free(f);
}

static void test_fma_100x75_8x32(void) { fma_case(100, 75, 8, 32, "fma_100x75"); }
static void test_fma_1x1_8x32(void) { fma_case(1, 1, 8, 32, "fma_1x1"); }
static void test_fma_33x17_16x16(void) { fma_case(33, 17, 16, 16, "fma_33x17"); }

/* ---- one-input and two-input pointwise ops on a tile ----------------------- */

/* a - b on [5, 7, 9]: all axes merged, then split by 32 (315 = 9*32 + 27). */
static void test_sub_3d_merged(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[3] = {5, 7, 9};
  tc_tensor *a = tc_input(f, TC_F32, 3, shape);
  tc_tensor *b = tc_input(f, TC_F32, 3, shape);
  tc_tensor *out = tc_binary(f, TC_SUB, a, b);
  OK(f, tc_add_output(f, out));
  OK(f, tc_merge(out, 1, 2)); /* [5, 63] */
  OK(f, tc_merge(out, 0, -1)); /* [315] */
  TC_CHECK_EQ_INT(tc_tensor_loop_extent(out, 0), 315);
  OK(f, tc_split(out, 0, 32, 1)); /* [10, 32] */
  TC_CHECK_EQ_INT(tc_tensor_loop_extent(out, 0), 10);
  OK(f, tc_parallelize(out, 0, TC_BIDX));
  OK(f, tc_parallelize(out, -1, TC_TIDX));
  size_t n = 315;
  float A[315], B[315], W[315], *O = out_buf(TC_F32, n);
  fill_f32(A, n, -3, 3), fill_f32(B, n, -3, 3);
  for (size_t i = 0; i < n; i++) W[i] = A[i] - B[i];
  void *args[3] = {A, B, O};
  tc_kernel *k = NULL;
  if (compile_run(f, "sub_3d", args, &k)) {
    check_launch(k, 10, 32);
    exact_f32("a-b", O, W, n);
  }
  tc_kernel_free(k);
  free(O);
  tc_fusion_free(f);
}

static void test_relu_37x130(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {37, 130};
  tc_tensor *a = tc_input(f, TC_F32, 2, shape);
  tc_tensor *out = tc_unary(f, TC_RELU, a);
  OK(f, tc_add_output(f, out));
  tile2d(f, out, 4, 64);
  size_t n = 37 * 130;
  float *A = malloc(n * 4), *W = malloc(n * 4), *O = out_buf(TC_F32, n);
  fill_f32(A, n, -1, 1);
  for (size_t i = 0; i < n; i++) W[i] = A[i] > 0 ? A[i] : 0.0f;
  void *args[2] = {A, O};
  if (compile_run(f, "relu", args, NULL)) exact_f32("relu", O, W, n);
  free(A), free(W), free(O);
  tc_fusion_free(f);
}

/* Two outputs of one fusion: max(a, b) and min(a, b). */
static void test_max_min_33x17(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {33, 17};
  tc_tensor *a = tc_input(f, TC_F32, 2, shape);
  tc_tensor *b = tc_input(f, TC_F32, 2, shape);
  tc_tensor *mx = tc_binary(f, TC_MAX, a, b);
  tc_tensor *mn = tc_binary(f, TC_MIN, a, b);
  OK(f, tc_add_output(f, mx));
  OK(f, tc_add_output(f, mn));
  tile2d(f, mx, 16, 16);
  size_t n = 33 * 17;
  float A[33 * 17], B[33 * 17], WX[33 * 17], WN[33 * 17];
  float *OX = out_buf(TC_F32, n), *ON = out_buf(TC_F32, n);
  fill_f32(A, n, -1, 1), fill_f32(B, n, -1, 1);
  B[5] = A[5]; /* equal operands */
  for (size_t i = 0; i < n; i++) WX[i] = A[i] > B[i] ? A[i] : B[i], WN[i] = A[i] < B[i] ? A[i] : B[i];
  void *args[4] = {A, B, OX, ON};
  if (compile_run(f, "max_min", args, NULL)) exact_f32("max", OX, WX, n), exact_f32("min", ON, WN, n);
  free(OX), free(ON);
  tc_fusion_free(f);
}

static void test_neg_abs_100x75(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {100, 75};
  tc_tensor *a = tc_input(f, TC_F32, 2, shape);
  tc_tensor *ng = tc_unary(f, TC_NEG, a);
  tc_tensor *ab = tc_unary(f, TC_ABS, a);
  OK(f, tc_add_output(f, ng));
  OK(f, tc_add_output(f, ab));
  tile2d(f, ab, 8, 32);
  size_t n = 7500;
  float *A = malloc(n * 4), *WN = malloc(n * 4), *WA = malloc(n * 4);
  float *ON = out_buf(TC_F32, n), *OA = out_buf(TC_F32, n);
  fill_f32(A, n, -5, 5);
  A[0] = 0.0f, A[1] = -0.0f, A[2] = INFINITY, A[3] = -INFINITY;
  for (size_t i = 0; i < n; i++) WN[i] = -A[i], WA[i] = fabsf(A[i]);
  void *args[3] = {A, ON, OA};
  if (compile_run(f, "neg_abs", args, NULL)) {
    exact_f32("neg", ON, WN, n), exact_f32("abs", OA, WA, n);
    TC_CHECK(f32_bits(ON[0]) == 0x80000000u, "neg(0) = 0x%08x", f32_bits(ON[0]));
    TC_CHECK(f32_bits(OA[1]) == 0u, "abs(-0) = 0x%08x", f32_bits(OA[1]));
  }
  free(A), free(WN), free(WA), free(ON), free(OA);
  tc_fusion_free(f);
}

static void test_exp_sigmoid_33x17(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {33, 17};
  tc_tensor *a = tc_input(f, TC_F32, 2, shape);
  tc_tensor *e = tc_unary(f, TC_EXP, a);
  tc_tensor *s = tc_unary(f, TC_SIGMOID, a);
  OK(f, tc_add_output(f, e));
  OK(f, tc_add_output(f, s));
  tile2d(f, e, 16, 16);
  size_t n = 33 * 17;
  float A[33 * 17], WE[33 * 17], WS[33 * 17], *OE = out_buf(TC_F32, n), *OS = out_buf(TC_F32, n);
  fill_f32(A, n, -8, 8);
  A[0] = 0, A[1] = -30, A[2] = 30, A[3] = 80;
  for (size_t i = 0; i < n; i++) WE[i] = (float)exp(A[i]), WS[i] = (float)(1.0 / (1.0 + exp(-A[i])));
  void *args[3] = {A, OE, OS};
  if (compile_run(f, "exp_sigmoid", args, NULL)) {
    close_f32("exp", OE, WE, NULL, n, 1e-5);
    close_f32("sigmoid", OS, WS, NULL, n, 1e-5);
  }
  free(OE), free(OS);
  tc_fusion_free(f);
}

/* ---- 16-bit floats: an independent round-to-nearest-even ---------------------
 * A finite nonzero float is sig * 2^e2 with an integer sig < 2^24.  The
 * 16-bit format with `mbits` mantissa bits and bias `bias` represents
 * q * 2^k where k = max(lead - mbits, 1 - bias - mbits) (lead: the exponent
 * of the leading bit), so we shift sig right to that unit, round half to
 * even, renormalize, and assemble; a result whose exponent field would be
 * all ones is infinity. */
static uint16_t rne16(float f, int mbits, int bias) {
  uint32_t x = f32_bits(f);
  uint16_t sign = (uint16_t)((x >> 31) << 15);
  int ebits = 15 - mbits;
  uint16_t expmask = (uint16_t)(((1u << ebits) - 1) << mbits);
  int e = (int)((x >> 23) & 0xff);
  uint32_t m = x & 0x7fffffu;
  if (e == 255) return sign | expmask | (m ? (uint16_t)(1u << (mbits - 1)) : 0); /* inf / NaN */
  if (e == 0 && m == 0) return sign;
  uint64_t sig = e ? (m | 0x800000u) : m;
  int e2 = e ? e - 150 : -149;
  int lead = 63 - __builtin_clzll(sig) + e2;
  int kmin = 1 - bias - mbits, k = lead - mbits;
  if (k < kmin) k = kmin;
  int sh = k - e2; /* >= 0: a float has at most 24 significant bits */
  uint64_t q, rem, half;
  if (sh >= 40) {
    q = 0, rem = sig, half = (uint64_t)1 << 39; /* sig < 2^24 < half */
  } else if (sh == 0) {
    q = sig, rem = 0, half = 1;
  } else {
    q = sig >> sh, rem = sig & (((uint64_t)1 << sh) - 1), half = (uint64_t)1 << (sh - 1);
  }
  if (rem > half || (rem == half && (q & 1))) q++;
  if (q == (uint64_t)2 << mbits) q >>= 1, k++;
  if (q < ((uint64_t)1 << mbits)) return sign | (uint16_t)q; /* subnormal (or zero) */
  int biased = k + mbits + bias;
  if (biased >= (1 << ebits) - 1) return sign | expmask; /* overflow */
  return sign | (uint16_t)((uint32_t)biased << mbits) | (uint16_t)(q - ((uint64_t)1 << mbits));
}

static uint16_t my_f16(float f) { return rne16(f, 10, 15); }
static uint16_t my_bf16(float f) { return rne16(f, 7, 127); }

/* f16 bits -> f32 bits by assembling the float. */
static float my_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ffu;
  if (e == 31) return bits_f32(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    if (m == 0) return bits_f32(sign);
    int s = 0;
    while (!(m & 0x400u)) m <<= 1, s++; /* normalize: value = 1.m * 2^(-14 - s) */
    return bits_f32(sign | (uint32_t)(127 - 14 - s) << 23 | (m & 0x3ffu) << 13);
  }
  return bits_f32(sign | (e - 15 + 127) << 23 | m << 13);
}

static int is_nan16(uint16_t h, int mbits) {
  uint16_t expmask = (uint16_t)(((1u << (15 - mbits)) - 1) << mbits);
  return (h & expmask) == expmask && (h & ((1u << mbits) - 1)) != 0;
}

/* Self-check of the conversions above on hand-worked values. */
static void test_rne_reference_self_check(void) {
  struct { float f; uint16_t h; } f16[] = {
      {1.0f, 0x3c00}, {1.0f + 0x1p-11f, 0x3c00}, {1.0f + 3 * 0x1p-11f, 0x3c02},
      {1.0f + 0x1p-10f, 0x3c01}, {65504.0f, 0x7bff}, {65519.0f, 0x7bff}, {65520.0f, 0x7c00},
      {-0.0f, 0x8000}, {0x1p-24f, 0x0001}, {0x1p-25f, 0x0000}, {0x1.8p-25f, 0x0001},
      {0x1.8p-24f, 0x0002}, {0x1p-14f, 0x0400}, {0x1.ff8p-15f, 0x03ff}, {0x1.ffcp-15f, 0x0400}, {-2.0f, 0xc000},
      {INFINITY, 0x7c00}, {1e-40f, 0x0000}, {-1e30f, 0xfc00}, {0.1f, 0x2e66}};
  for (size_t i = 0; i < sizeof f16 / sizeof *f16; i++)
    TC_CHECK(my_f16(f16[i].f) == f16[i].h, "f16(%a) = 0x%04x, want 0x%04x", f16[i].f,
             my_f16(f16[i].f), f16[i].h);
  struct { float f; uint16_t h; } bf[] = {
      {1.0f, 0x3f80}, {1.0f + 0x1p-8f, 0x3f80}, {1.0f + 3 * 0x1p-8f, 0x3f82}, {-0.0f, 0x8000},
      {0x1p-133f, 0x0001}, {0x1p-134f, 0x0000}, {0x1.8p-134f, 0x0001}, {3.3895314e38f, 0x7f7f},
      {0x1.ffp127f, 0x7f80}, {0x1.fep127f, 0x7f7f}, {0.1f, 0x3dcd}};
  for (size_t i = 0; i < sizeof bf / sizeof *bf; i++)
    TC_CHECK(my_bf16(bf[i].f) == bf[i].h, "bf16(%a) = 0x%04x, want 0x%04x", bf[i].f,
             my_bf16(bf[i].f), bf[i].h);
  TC_CHECK(is_nan16(my_f16(NAN), 10) && is_nan16(my_bf16(NAN), 7), "NaN");
  TC_CHECK(f32_bits(my_f16_to_f32(0x0001)) == f32_bits(0x1p-24f), "f16 subnormal");
  TC_CHECK(my_f16_to_f32(0x03ff) == 0x1.ff8p-15f, "f16 largest subnormal");
  TC_CHECK(my_f16_to_f32(0x7bff) == 65504.0f && my_f16_to_f32(0xc000) == -2.0f, "f16 normal");
}

/* The hard cases every 16-bit cast test starts with. */
static size_t hard_cases(float *v) {
  const float h[] = {
      1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, -(1.0f + 0x1p-11f), 1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f,
      1.0f + 0x1p-8f + 0x1p-20f, 65504.0f, 65519.0f, 65520.0f, 70000.0f, -65520.0f, 0.0f, -0.0f,
      0x1p-24f, 0x1p-25f, 0x1.8p-25f, 0x1.000002p-25f, 0x1.8p-24f, 0x1.4p-24f, 0x1.ff8p-15f,
      0x1.ffcp-15f, 0x1p-14f, 0x1p-30f, 1e-40f /* f32 subnormal */, -1e-42f, INFINITY, -INFINITY,
      NAN, -NAN, bits_f32(0x7f800001u), bits_f32(0xffc00123u), 3.3895314e38f, 0x1.ffp127f,
      0x1.fep127f, 0x1p-133f, 0x1p-134f, 0x1.8p-134f, 0.1f, -0.3f, 2048.5f, 4097.0f};
  memcpy(v, h, sizeof h);
  return sizeof h / sizeof *h;
}

static void cast_16(tc_dtype to) {
  int mbits = to == TC_F16 ? 10 : 7;
  const char *name = to == TC_F16 ? "cast_f32_f16" : "cast_f32_bf16";
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {50, 33};
  tc_tensor *a = tc_input(f, TC_F32, 2, shape);
  tc_tensor *out = tc_cast(f, a, to);
  OK(f, tc_add_output(f, out));
  TC_CHECK(tc_tensor_dtype(out) == to, "dtype");
  tile2d(f, out, 3, 16);
  size_t n = 50 * 33;
  float A[50 * 33];
  uint16_t *O = out_buf(to, n);
  size_t nh = hard_cases(A);
  for (size_t i = nh; i < n; i++) {
    uint32_t r = next_u32();
    if (i % 3 == 0) {
      A[i] = bits_f32(r); /* anything, NaNs and subnormals included */
    } else { /* exponents around the 16-bit range, mantissas with tie bits */
      uint32_t e = to == TC_F16 ? 100 + r % 46 : 1 + r % 254;
      A[i] = bits_f32((r & 0x80000000u) | e << 23 | ((r >> 5) & 0x7fe000u) | (i % 5 == 0 ? 0x1000u : 0));
    }
  }
  void *args[2] = {A, O};
  if (compile_run(f, name, args, NULL)) {
    for (size_t i = 0; i < n; i++) {
      uint16_t want = mbits == 10 ? my_f16(A[i]) : my_bf16(A[i]);
      if (is_nan16(want, mbits) ? !is_nan16(O[i], mbits) : O[i] != want)
        if (nbad++ < 8)
          TC_CHECK(0, "%s element %zu: %a (0x%08x) -> 0x%04x, want 0x%04x", name, i, A[i],
                   f32_bits(A[i]), O[i], want);
    }
    finish(name);
  }
  free(O);
  tc_fusion_free(f);
}

static void test_cast_f32_to_f16_bits(void) { cast_16(TC_F16); }
static void test_cast_f32_to_bf16_bits(void) { cast_16(TC_BF16); }

/* Every f16 bit pattern (and 256 more) through f16 -> f32. */
static void test_cast_f16_to_f32_all(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {257, 256};
  tc_tensor *a = tc_input(f, TC_F16, 2, shape);
  tc_tensor *out = tc_cast(f, a, TC_F32);
  OK(f, tc_add_output(f, out));
  tile2d(f, out, 8, 32);
  size_t n = 257 * 256;
  uint16_t *A = malloc(n * 2);
  float *O = out_buf(TC_F32, n);
  for (size_t i = 0; i < n; i++) A[i] = (uint16_t)(i * 0x9e37u + (i >> 16));
  for (size_t i = 0; i < 65536; i++) A[i] = (uint16_t)i;
  void *args[2] = {A, O};
  if (compile_run(f, "cast_f16_f32", args, NULL)) {
    for (size_t i = 0; i < n; i++) {
      float w = my_f16_to_f32(A[i]);
      if (isnan(w) ? !isnan(O[i]) : f32_bits(O[i]) != f32_bits(w))
        if (nbad++ < 8)
          TC_CHECK(0, "f16 0x%04x -> 0x%08x, want 0x%08x", A[i], f32_bits(O[i]), f32_bits(w));
    }
    finish("f16->f32");
  }
  free(A), free(O);
  tc_fusion_free(f);
}

/* ---- integers -------------------------------------------------------------- */

/* s = a + b (i32) and cast(s, f32), both outputs. */
static void test_i32_add_and_cast(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {33, 17};
  tc_tensor *a = tc_input(f, TC_I32, 2, shape);
  tc_tensor *b = tc_input(f, TC_I32, 2, shape);
  tc_tensor *s = tc_binary(f, TC_ADD, a, b);
  tc_tensor *c = tc_cast(f, s, TC_F32);
  OK(f, tc_add_output(f, s));
  OK(f, tc_add_output(f, c));
  tile2d(f, c, 16, 16);
  size_t n = 33 * 17;
  int32_t A[33 * 17], B[33 * 17], WS[33 * 17];
  float WC[33 * 17];
  int32_t *OS = out_buf(TC_I32, n);
  float *OC = out_buf(TC_F32, n);
  for (size_t i = 0; i < n; i++)
    A[i] = (int32_t)(next_u32() % (1u << 30)) - (1 << 29), B[i] = (int32_t)(next_u32() % 2001) - 1000;
  A[0] = 16777216, B[0] = 1;  /* 2^24 + 1 -> 2^24 */
  A[1] = 16777216, B[1] = 3;  /* 2^24 + 3 -> 2^24 + 4 (tie to even) */
  A[2] = -16777216, B[2] = -5; /* -(2^24 + 5) -> -(2^24 + 4) */
  A[3] = 2147483000, B[3] = 647; /* INT32_MAX */
  A[4] = -2147483000, B[4] = -648; /* INT32_MIN */
  for (size_t i = 0; i < n; i++) WS[i] = A[i] + B[i], WC[i] = (float)WS[i];
  void *args[4] = {A, B, OS, OC};
  if (compile_run(f, "i32_add_cast", args, NULL)) {
    exact_i32("i32 add", OS, WS, n);
    exact_f32("i32->f32", OC, WC, n);
  }
  free(OS), free(OC);
  tc_fusion_free(f);
}

/* A tile taller than the tensor: [1, 6] split by 8 rows gives register
 * arrays of 8 elements of which only element 0 is written (under the
 * predicate row < 1) and read.  LLVM 15's loop vectorizer (PoCL 3.1's)
 * took the f32 -> i32 copy loop for an "any-of" reduction that starts
 * from the array's undefined contents and folded the whole kernel away:
 * every output stayed unwritten.  T3 = set(cast(set(T0), i32)). */
static void test_tile_taller_than_tensor(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {1, 6};
  tc_tensor *a = tc_input(f, TC_F32, 2, shape);
  tc_tensor *out = tc_set(f, tc_cast(f, tc_set(f, a), TC_I32));
  OK(f, tc_add_output(f, out));
  OK(f, tc_split(out, 0, 8, 1)); /* [1, 8, 6] */
  OK(f, tc_propagate_transforms(out));
  OK(f, tc_parallelize(out, 2, TC_TIDX));
  OK(f, tc_parallelize_all_like(out));
  float A[6] = {1.5f, 2.5f, -3.5f, 4.25f, -5.75f, 6};
  int32_t want[6] = {1, 2, -3, 4, -5, 6}; /* truncated toward zero */
  int32_t *O = out_buf(TC_I32, 6);
  void *args[2] = {A, O};
  if (compile_run(f, "tile_taller_than_tensor", args, NULL)) exact_i32("cast rows", O, want, 6);
  free(O);
  tc_fusion_free(f);
}

/* i8 inputs: max(a, b) stays i8, cast(a) + cast(b) in i32, cast(a) * cast(b)
 * in f32. */
static void test_i8_inputs(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {37, 130};
  tc_tensor *a = tc_input(f, TC_I8, 2, shape);
  tc_tensor *b = tc_input(f, TC_I8, 2, shape);
  tc_tensor *mx = tc_binary(f, TC_MAX, a, b);
  tc_tensor *si = tc_binary(f, TC_ADD, tc_cast(f, a, TC_I32), tc_cast(f, b, TC_I32));
  tc_tensor *pf = tc_binary(f, TC_MUL, tc_cast(f, a, TC_F32), tc_cast(f, b, TC_F32));
  OK(f, tc_add_output(f, mx));
  OK(f, tc_add_output(f, si));
  OK(f, tc_add_output(f, pf));
  tile2d(f, si, 4, 64);
  size_t n = 37 * 130;
  int8_t *A = malloc(n), *B = malloc(n), *OM = out_buf(TC_I8, n);
  int32_t *OS = out_buf(TC_I32, n), *WS = malloc(n * 4);
  float *OP = out_buf(TC_F32, n), *WP = malloc(n * 4);
  for (size_t i = 0; i < n; i++) {
    A[i] = (int8_t)((int)(next_u32() % 256) - 128), B[i] = (int8_t)((int)(next_u32() % 256) - 128);
    if (A[i] == 127) A[i] = 126; /* 127 is the sentinel */
    if (B[i] == 127) B[i] = -127;
  }
  A[0] = -128, B[0] = -128;
  int bad_max = 0;
  for (size_t i = 0; i < n; i++) WS[i] = A[i] + B[i], WP[i] = (float)A[i] * (float)B[i];
  void *args[5] = {A, B, OM, OS, OP};
  if (compile_run(f, "i8_inputs", args, NULL)) {
    for (size_t i = 0; i < n; i++)
      if (OM[i] != (A[i] > B[i] ? A[i] : B[i]) && bad_max++ < 5)
        TC_CHECK(0, "max element %zu: max(%d, %d) = %d", i, A[i], B[i], OM[i]);
    TC_CHECK(bad_max == 0, "%d bad max elements", bad_max);
    exact_i32("i8 add in i32", OS, WS, n);
    exact_f32("i8 mul in f32", OP, WP, n);
  }
  free(A), free(B), free(OM), free(OS), free(WS), free(OP), free(WP);
  tc_fusion_free(f);
}

/* ---- transpose through shared memory --------------------------------------- */

/* Does some T1[...] index (not the declaration) contain '^'? Returns -1 when
 * there is no such index at all. */
static int shared_index_has_xor(const char *src, const char *tname) {
  char pat[32];
  snprintf(pat, sizeof pat, "%s[", tname);
  int found = -1;
  for (const char *p = strstr(src, pat); p; p = strstr(p + 1, pat)) {
    if (p > src && (p[-1] == '_' || (p[-1] >= '0' && p[-1] <= '9') || (p[-1] >= 'A' && p[-1] <= 'Z') ||
                    (p[-1] >= 'a' && p[-1] <= 'z')))
      continue; /* part of a longer name */
    const char *q = p + strlen(pat);
    int depth = 1, has = 0, digits_only = 1;
    for (; *q && depth; q++) {
      if (*q == '[') depth++;
      else if (*q == ']') depth--;
      if (depth && *q == '^') has = 1;
      if (depth && !(*q >= '0' && *q <= '9')) digits_only = 0;
    }
    if (digits_only) continue; /* the declaration T1[256] */
    if (found < 0) found = 0;
    if (has) found = 1;
  }
  return found;
}

static void transpose_case(int swizzle) {
  const char *name = swizzle ? "transpose_xor" : "transpose";
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {67, 45};
  int perm[2] = {1, 0};
  tc_tensor *t0 = tc_input(f, TC_F32, 2, shape);
  tc_tensor *t1 = tc_set(f, t0);
  tc_tensor *t2 = tc_permute(f, t1, perm);
  TC_REQUIRE(t2, "permute: %s", tc_fusion_error(f));
  TC_CHECK(tc_tensor_extent(t2, 0) == 45 && tc_tensor_extent(t2, 1) == 67, "permuted shape");
  OK(f, tc_add_output(f, t2));
  OK(f, tc_set_memory_type(t1, TC_MEM_SHARED));
  int from[2] = {1, 2}, to[2] = {2, 1};
  OK(f, tc_split(t2, 0, 16, 1));
  OK(f, tc_split(t2, 2, 16, 1));
  OK(f, tc_reorder(t2, 2, from, to)); /* [Mo, No, Mi, Ni] */
  OK(f, tc_propagate_transforms(t2));
  int sf[2] = {2, 3}, st2[2] = {3, 2};
  OK(f, tc_reorder(t1, 2, sf, st2)); /* T1: [Mo, No, Ni, Mi]: loads along T0's rows */
  if (swizzle) OK(f, tc_swizzle(t1, TC_SWIZZLE_XOR, 2, 3));
  tc_ptype p[4] = {TC_BIDY, TC_BIDX, TC_TIDY, TC_TIDX};
  for (int i = 0; i < 4; i++) {
    OK(f, tc_parallelize(t2, i, p[i]));
    OK(f, tc_parallelize(t1, i, p[i]));
  }
  OK(f, tc_inline_at(t1, 2));
  size_t n = 67 * 45;
  float A[67 * 45], W[67 * 45], *O = out_buf(TC_F32, n);
  fill_f32(A, n, -100, 100);
  for (int i = 0; i < 67; i++)
    for (int j = 0; j < 45; j++) W[j * 67 + i] = A[i * 45 + j];
  void *args[2] = {A, O};
  tc_kernel *k = NULL;
  if (compile_run(f, name, args, &k)) {
    exact_f32(name, O, W, n);
    TC_CHECK_EQ_INT(tc_kernel_smem_bytes(k), 16 * 16 * 4);
    int64_t grid[3], block[3];
    tc_kernel_launch_dims(k, grid, block);
    TC_CHECK(grid[0] == 5 && grid[1] == 3 && block[0] == 16 && block[1] == 16,
             "launch %lldx%lld / %lldx%lld", (long long)grid[0], (long long)grid[1],
             (long long)block[0], (long long)block[1]);
    int x = shared_index_has_xor(tc_kernel_source(k), tc_tensor_name(t1));
    TC_CHECK(x == (swizzle ? 1 : 0), "%s: shared index has '^': %d\n%s", name, x, tc_kernel_source(k));
  }
  tc_kernel_free(k);
  free(O);
  tc_fusion_free(f);
}

static void test_transpose_shared(void) { transpose_case(0); }
static void test_transpose_shared_xor(void) { transpose_case(1); }

/* The same transpose with the N tiles walked by a serial loop inside each
 * block (only Mo is BIDx): the shared tile is rewritten every iteration, so
 * a barrier must follow the load (RAW) and end the loop body (WAR). */
static void test_transpose_serial_tiles(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {67, 45};
  int perm[2] = {1, 0};
  tc_tensor *t0 = tc_input(f, TC_F32, 2, shape);
  tc_tensor *t1 = tc_set(f, t0);
  tc_tensor *t2 = tc_permute(f, t1, perm);
  OK(f, tc_add_output(f, t2));
  OK(f, tc_set_memory_type(t1, TC_MEM_SHARED));
  int from[2] = {1, 2}, to[2] = {2, 1}, sf[2] = {2, 3}, st2[2] = {3, 2};
  OK(f, tc_split(t2, 0, 16, 1));
  OK(f, tc_split(t2, 2, 16, 1));
  OK(f, tc_reorder(t2, 2, from, to)); /* [Mo (BIDx), No (serial), Mi, Ni] */
  OK(f, tc_propagate_transforms(t2));
  OK(f, tc_reorder(t1, 2, sf, st2));
  tc_ptype p[4] = {TC_BIDX, TC_SERIAL, TC_TIDY, TC_TIDX};
  for (int i = 0; i < 4; i++) {
    OK(f, tc_parallelize(t2, i, p[i]));
    OK(f, tc_parallelize(t1, i, p[i]));
  }
  OK(f, tc_inline_at(t1, 2));
  size_t n = 67 * 45;
  float A[67 * 45], W[67 * 45], *O = out_buf(TC_F32, n);
  fill_f32(A, n, -100, 100);
  for (int i = 0; i < 67; i++)
    for (int j = 0; j < 45; j++) W[j * 67 + i] = A[i * 45 + j];
  void *args[2] = {A, O};
  tc_kernel *k = NULL;
  if (compile_run(f, "transpose_serial", args, &k)) {
    exact_f32("transpose_serial", O, W, n);
    TC_CHECK_EQ_INT(tc_kernel_smem_bytes(k), 16 * 16 * 4);
    int nbar = 0;
    for (const char *q = strstr(tc_kernel_source(k), "barrier("); q; q = strstr(q + 1, "barrier(")) nbar++;
    TC_CHECK(nbar == 2, "%d barriers, want 2 (after the load, at the end of the loop):\n%s", nbar,
             tc_kernel_source(k));
  }
  tc_kernel_free(k);
  free(O);
  tc_fusion_free(f);
}

/* ---- more schedules ---------------------------------------------------------- */

/* Transforms of already padded axes: [33, 17] -> split 17 by 8 (24) ->
 * merge -> split by 5 (25) -> merge with 33 -> outer split into 7:
 * [7 (BIDx), 24, 5 (TIDx)] over 33 x 17, through two unary ops. */
static void test_split_of_padded_merge(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {33, 17};
  tc_tensor *a = tc_input(f, TC_F32, 2, shape);
  tc_tensor *out = tc_unary(f, TC_ABS, tc_unary(f, TC_NEG, a));
  OK(f, tc_add_output(f, out));
  OK(f, tc_split(out, 1, 8, 1));
  OK(f, tc_merge(out, 1, 2));
  OK(f, tc_split(out, 1, 5, 1));
  OK(f, tc_merge(out, 0, 1));
  OK(f, tc_split(out, 0, 7, 0));
  TC_CHECK(tc_tensor_loop_extent(out, 0) == 7 && tc_tensor_loop_extent(out, 1) == 24 &&
               tc_tensor_loop_extent(out, 2) == 5, "extents");
  OK(f, tc_parallelize(out, 0, TC_BIDX));
  OK(f, tc_parallelize(out, 2, TC_TIDX));
  OK(f, tc_propagate_transforms(out));
  OK(f, tc_parallelize_all_like(out));
  OK(f, tc_inline_most(f));
  size_t n = 33 * 17;
  float A[33 * 17], W[33 * 17], *O = out_buf(TC_F32, n);
  fill_f32(A, n, -4, 4);
  for (size_t i = 0; i < n; i++) W[i] = fabsf(A[i]);
  void *args[2] = {A, O};
  if (compile_run(f, "padded_merge", args, NULL)) exact_f32("padded merge", O, W, n);
  free(O);
  tc_fusion_free(f);
}


/* Outer split (inner_split = 0): [100, 75] merged to 7500, split into 7
 * outer parts of 1072 (7504: padded), the rest split by 128 -> [7, 9, 128]. */
static void test_outer_split(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {100, 75};
  tc_tensor *a = tc_input(f, TC_F32, 2, shape);
  tc_tensor *b = tc_input(f, TC_F32, 2, shape);
  tc_tensor *out = tc_binary(f, TC_MUL, a, b);
  OK(f, tc_add_output(f, out));
  OK(f, tc_merge(out, 0, 1));
  OK(f, tc_split(out, 0, 7, 0));
  TC_CHECK(tc_tensor_loop_extent(out, 0) == 7 && tc_tensor_loop_extent(out, 1) == 1072,
           "outer split extents %lld, %lld", (long long)tc_tensor_loop_extent(out, 0),
           (long long)tc_tensor_loop_extent(out, 1));
  OK(f, tc_split(out, 1, 128, 1));
  TC_CHECK(tc_tensor_loop_extent(out, 1) == 9 && tc_tensor_loop_extent(out, 2) == 128, "inner split");
  OK(f, tc_parallelize(out, 0, TC_BIDX));
  OK(f, tc_parallelize(out, 2, TC_TIDX));
  size_t n = 7500;
  float *A = malloc(n * 4), *B = malloc(n * 4), *W = malloc(n * 4), *O = out_buf(TC_F32, n);
  fill_f32(A, n, -2, 2), fill_f32(B, n, -2, 2);
  for (size_t i = 0; i < n; i++) W[i] = A[i] * B[i];
  void *args[3] = {A, B, O};
  tc_kernel *k = NULL;
  if (compile_run(f, "outer_split", args, &k)) {
    check_launch(k, 7, 128);
    exact_f32("outer split", O, W, n);
  }
  tc_kernel_free(k);
  free(A), free(B), free(W), free(O);
  tc_fusion_free(f);
}

/* out = exp(a * b) + c with tc_compute_at: t4 = exp(t3) at the innermost
 * position of out, t3 = a*b at position 1 of t4 (so t3 keeps its Yi axis). */
static void test_compute_at(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {33, 17};
  tc_tensor *a = tc_input(f, TC_F32, 2, shape);
  tc_tensor *b = tc_input(f, TC_F32, 2, shape);
  tc_tensor *c = tc_input(f, TC_F32, 2, shape);
  tc_tensor *t3 = tc_binary(f, TC_MUL, a, b);
  tc_tensor *t4 = tc_unary(f, TC_EXP, t3);
  tc_tensor *out = tc_binary(f, TC_ADD, t4, c);
  OK(f, tc_add_output(f, out));
  int from[2] = {1, 2}, to[2] = {2, 1};
  OK(f, tc_split(out, 0, 4, 1));
  OK(f, tc_split(out, 2, 8, 1));
  OK(f, tc_reorder(out, 2, from, to));
  OK(f, tc_merge(out, 0, 1)); /* [9*3, 4, 8] */
  TC_CHECK_EQ_INT(tc_tensor_nloop(t4), 2);
  OK(f, tc_compute_at(t4, out, -1));
  TC_CHECK_EQ_INT(tc_tensor_nloop(t4), 3);
  OK(f, tc_compute_at(t3, t4, 1));
  TC_CHECK_EQ_INT(tc_tensor_nloop(t3), 3);
  char d[256];
  tc_tensor_describe(t3, d, sizeof d);
  TC_CHECK(strstr(d, "(CA)") != NULL, "t3: %s", d);
  OK(f, tc_parallelize(out, 0, TC_BIDX));
  OK(f, tc_parallelize(out, 2, TC_TIDX));
  OK(f, tc_parallelize_all_like(out));
  size_t n = 33 * 17;
  float A[33 * 17], B[33 * 17], C[33 * 17], W[33 * 17], S[33 * 17], *O = out_buf(TC_F32, n);
  fill_f32(A, n, -1, 1), fill_f32(B, n, -1, 1), fill_f32(C, n, -1, 1);
  for (size_t i = 0; i < n; i++) {
    float e = (float)exp((double)(A[i] * B[i]));
    W[i] = e + C[i], S[i] = e + fabsf(C[i]); /* judged against the terms: e + c may cancel */
  }
  void *args[4] = {A, B, C, O};
  tc_kernel *k = NULL;
  if (compile_run(f, "compute_at", args, &k)) {
    check_launch(k, 27, 8);
    close_f32("compute_at", O, W, S, n, 1e-5);
    char decl[64];
    /* t3 is not inlined past Yi: it keeps the 4 Yi elements per thread; t4
     * is inlined all the way: one element. */
    snprintf(decl, sizeof decl, "float %s[4]", tc_tensor_name(t3));
    TC_CHECK(strstr(tc_kernel_source(k), decl) != NULL, "no \"%s\" in\n%s", decl, tc_kernel_source(k));
    snprintf(decl, sizeof decl, "float %s[1]", tc_tensor_name(t4));
    TC_CHECK(strstr(tc_kernel_source(k), decl) != NULL, "no \"%s\" in\n%s", decl, tc_kernel_source(k));
  }
  tc_kernel_free(k);
  free(O);
  tc_fusion_free(f);
}

/* out = relu(a) + b with a cached in shared memory (tc_cache_after) and the
 * add cached before the output store (tc_cache_before), 2-D tiles, TIDx. */
static void test_cache_after_before_shared(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {67, 45};
  tc_tensor *a = tc_input(f, TC_F32, 2, shape);
  tc_tensor *b = tc_input(f, TC_F32, 2, shape);
  tc_tensor *out = tc_binary(f, TC_ADD, tc_unary(f, TC_RELU, a), b);
  OK(f, tc_add_output(f, out));
  tc_tensor *ca = tc_cache_after(a);
  TC_REQUIRE(ca, "cache_after: %s", tc_fusion_error(f));
  tc_tensor *cb = tc_cache_before(out);
  TC_REQUIRE(cb, "cache_before: %s", tc_fusion_error(f));
  TC_CHECK(ca != a && cb != out, "caches are new tensors");
  OK(f, tc_set_memory_type(ca, TC_MEM_SHARED));
  tile2d(f, out, 4, 16);
  size_t n = 67 * 45;
  float A[67 * 45], B[67 * 45], W[67 * 45], *O = out_buf(TC_F32, n);
  fill_f32(A, n, -1, 1), fill_f32(B, n, -1, 1);
  for (size_t i = 0; i < n; i++) W[i] = (A[i] > 0 ? A[i] : 0.0f) + B[i];
  void *args[3] = {A, B, O};
  tc_kernel *k = NULL;
  if (compile_run(f, "cache_after_before", args, &k)) {
    check_launch(k, 17 * 3, 16);
    exact_f32("cache_after_before", O, W, n);
    /* the shared cache is inlined at its innermost position: TIDx only */
    TC_CHECK_EQ_INT(tc_kernel_smem_bytes(k), 16 * 4);
    TC_CHECK(strstr(tc_kernel_source(k), "__local float") != NULL, "%s", tc_kernel_source(k));
  }
  tc_kernel_free(k);
  free(O);
  tc_fusion_free(f);
}

/* a*b + c on [37, 68]: [37 (BIDx), 17 (TIDx), 4 (Vectorize)]. */
static void test_vectorize_4(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {37, 68};
  tc_tensor *a = tc_input(f, TC_F32, 2, shape);
  tc_tensor *b = tc_input(f, TC_F32, 2, shape);
  tc_tensor *c = tc_input(f, TC_F32, 2, shape);
  tc_tensor *out = tc_binary(f, TC_ADD, tc_binary(f, TC_MUL, a, b), c);
  OK(f, tc_add_output(f, out));
  OK(f, tc_split(out, 1, 4, 1));
  OK(f, tc_parallelize(out, 0, TC_BIDX));
  OK(f, tc_parallelize(out, 1, TC_TIDX));
  OK(f, tc_parallelize(out, 2, TC_VECTORIZE));
  TC_CHECK(tc_tensor_loop_ptype(out, -1) == TC_VECTORIZE, "vectorized");
  OK(f, tc_propagate_transforms(out));
  OK(f, tc_parallelize_all_like(out));
  OK(f, tc_inline_most(f));
  size_t n = 37 * 68;
  float A[37 * 68], B[37 * 68], C[37 * 68], W[37 * 68], S[37 * 68], *O = out_buf(TC_F32, n);
  fill_f32(A, n, -2, 2), fill_f32(B, n, -2, 2), fill_f32(C, n, -2, 2);
  for (size_t i = 0; i < n; i++) W[i] = A[i] * B[i] + C[i], S[i] = fabsf(A[i] * B[i]) + fabsf(C[i]);
  void *args[4] = {A, B, C, O};
  tc_kernel *k = NULL;
  if (compile_run(f, "vectorize4", args, &k)) {
    check_launch(k, 37, 17);
    close_f32("vectorize", O, W, S, n, 1e-5);
  }
  tc_kernel_free(k);
  free(O);
  tc_fusion_free(f);
}

/* relu(a) - b on [50, 75]: [50 (BIDx), 5 (Unroll), 16 (TIDx)], 80 > 75. */
static void test_unroll(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {50, 75};
  tc_tensor *a = tc_input(f, TC_F32, 2, shape);
  tc_tensor *b = tc_input(f, TC_F32, 2, shape);
  tc_tensor *out = tc_binary(f, TC_SUB, tc_unary(f, TC_RELU, a), b);
  OK(f, tc_add_output(f, out));
  OK(f, tc_split(out, 1, 16, 1));
  OK(f, tc_reorder(out, 1, (int[]){2}, (int[]){1})); /* [50, 16, 5] */
  OK(f, tc_parallelize(out, 0, TC_BIDX));
  OK(f, tc_parallelize(out, 1, TC_TIDX));
  OK(f, tc_parallelize(out, 2, TC_UNROLL));
  TC_CHECK(tc_tensor_loop_extent(out, 1) == 16 && tc_tensor_loop_extent(out, 2) == 5, "extents");
  OK(f, tc_propagate_transforms(out));
  OK(f, tc_parallelize_all_like(out));
  OK(f, tc_inline_most(f));
  size_t n = 50 * 75;
  float *A = malloc(n * 4), *B = malloc(n * 4), *W = malloc(n * 4), *O = out_buf(TC_F32, n);
  fill_f32(A, n, -1, 1), fill_f32(B, n, -1, 1);
  for (size_t i = 0; i < n; i++) W[i] = (A[i] > 0 ? A[i] : 0.0f) - B[i];
  void *args[3] = {A, B, O};
  tc_kernel *k = NULL;
  if (compile_run(f, "unroll", args, &k)) {
    check_launch(k, 50, 16);
    exact_f32("unroll", O, W, n);
    TC_CHECK(strstr(tc_kernel_source(k), "#pragma unroll") != NULL, "no unroll pragma:\n%s",
             tc_kernel_source(k));
  }
  tc_kernel_free(k);
  free(A), free(B), free(W), free(O);
  tc_fusion_free(f);
}

/* a*b + c on [33, 17] with both loop axes padded by tc_resize: axis 0 by
 * (1, 4) -> 38, split by 8 -> [5, 8]; axis 1 by (2, 3) -> 22 (TIDx).  The
 * padded positions must be predicated off. */
static void test_resize_pad(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {33, 17};
  tc_tensor *a = tc_input(f, TC_F32, 2, shape);
  tc_tensor *b = tc_input(f, TC_F32, 2, shape);
  tc_tensor *c = tc_input(f, TC_F32, 2, shape);
  tc_tensor *out = tc_binary(f, TC_ADD, tc_binary(f, TC_MUL, a, b), c);
  OK(f, tc_add_output(f, out));
  OK(f, tc_resize(out, 0, 1, 4));
  OK(f, tc_resize(out, 1, 2, 3));
  TC_CHECK(tc_tensor_loop_extent(out, 0) == 38 && tc_tensor_loop_extent(out, 1) == 22, "resized");
  OK(f, tc_split(out, 0, 8, 1)); /* [5, 8, 22] */
  OK(f, tc_parallelize(out, 0, TC_BIDX));
  OK(f, tc_parallelize(out, 2, TC_TIDX));
  OK(f, tc_propagate_transforms(out));
  OK(f, tc_parallelize_all_like(out));
  OK(f, tc_inline_most(f));
  size_t n = 33 * 17;
  float A[33 * 17], B[33 * 17], C[33 * 17], W[33 * 17], S[33 * 17], *O = out_buf(TC_F32, n);
  fill_f32(A, n, -2, 2), fill_f32(B, n, -2, 2), fill_f32(C, n, -2, 2);
  for (size_t i = 0; i < n; i++) W[i] = A[i] * B[i] + C[i], S[i] = fabsf(A[i] * B[i]) + fabsf(C[i]);
  void *args[4] = {A, B, C, O};
  tc_kernel *k = NULL;
  if (compile_run(f, "resize_pad", args, &k)) {
    check_launch(k, 5, 22);
    close_f32("resize", O, W, S, n, 1e-5);
  }
  tc_kernel_free(k);
  free(O);
  tc_fusion_free(f);
}

/* DIDx axes would need one kernel per device; a single kernel refuses
 * them (running them as serial loops would under-allocate intermediates,
 * which the allocation rules leave unallocated across DID*). */
static void test_didx_rejected(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {4, 5};
  tc_tensor *a = tc_input(f, TC_F32, 2, shape);
  tc_tensor *b = tc_input(f, TC_F32, 2, shape);
  tc_tensor *m = tc_binary(f, TC_MUL, a, b);
  tc_tensor *out = tc_unary(f, TC_NEG, m);
  OK(f, tc_add_output(f, out));
  OK(f, tc_parallelize(m, 0, TC_DIDX));
  OK(f, tc_parallelize(out, 0, TC_DIDX));
  tc_status st = TC_OK;
  tc_kernel *k = tc_compile(f, NULL, &st);
  TC_CHECK(k == NULL && st == TC_ERR_UNSUPPORTED, "a DIDx schedule compiled (status %d)", st);
  TC_CHECK(strstr(tc_fusion_error(f), "DIDx") && strstr(tc_fusion_error(f), "axis 0"), "%s",
           tc_fusion_error(f));
  tc_kernel_free(k);
  tc_fusion_free(f);
}

int main(void) {
  const char *seed = getenv("TILEC_TEST_SEED"); /* to try other inputs */
  if (seed && strtoul(seed, NULL, 0)) rng = (uint32_t)strtoul(seed, NULL, 0);
  TC_RUN(test_rne_reference_self_check);
  TC_RUN(test_fma_100x75_8x32);
  TC_RUN(test_fma_1x1_8x32);
  TC_RUN(test_fma_33x17_16x16);
  TC_RUN(test_sub_3d_merged);
  TC_RUN(test_relu_37x130);
  TC_RUN(test_max_min_33x17);
  TC_RUN(test_neg_abs_100x75);
  TC_RUN(test_exp_sigmoid_33x17);
  TC_RUN(test_cast_f32_to_f16_bits);
  TC_RUN(test_cast_f32_to_bf16_bits);
  TC_RUN(test_cast_f16_to_f32_all);
  TC_RUN(test_i32_add_and_cast);
  TC_RUN(test_tile_taller_than_tensor);
  TC_RUN(test_i8_inputs);
  TC_RUN(test_transpose_shared);
  TC_RUN(test_transpose_shared_xor);
  TC_RUN(test_transpose_serial_tiles);
  TC_RUN(test_outer_split);
  TC_RUN(test_split_of_padded_merge);
  TC_RUN(test_compute_at);
  TC_RUN(test_cache_after_before_shared);
  TC_RUN(test_vectorize_4);
  TC_RUN(test_unroll);
  TC_RUN(test_resize_pad);
  TC_RUN(test_didx_rejected);
  TC_MAIN_END();
}
