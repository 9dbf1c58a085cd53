/* test_dynamic_mma.c - the mma.sync m16n8k16 matmul schedule with M a
 * size variable (tc_input_sym; docs/dynamic.md): M's block tiles on BIDx,
 * the warp tiles, fragments and shared tiles fixed by the tiles, the
 * loads of A's tile and the stores of C guarded by row < M.  One kernel,
 * compiled once for OpenCL (the instruction emulated), runs at 12 values
 * of M (1, primes, multiples of the block tile, a large one) against the
 * plain C loop, with and without bias + ReLU, with one buffer and with a
 * ring of 2 stages; nothing is written past M rows.  The CUDA kernel
 * (sm_80) builds where NVRTC exists.  N a size variable too, and the
 * wgmma op type with M, N or K open (sm_90a's choice for M open). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tilec/tilec.h"
#include "matmul_test_util.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

/* n f16 values in [-2, 2] (exact in f16) from seed, and the same as doubles */
static uint16_t *f16_values(int64_t n, uint64_t seed, double *v) {
  uint16_t *p = malloc((size_t)n * 2);
  for (int64_t i = 0; i < n; i++) {
    float x = (float)((int64_t)(((uint64_t)i * 2654435761u + seed) % 4001) - 2000) / 1000.0f;
    p[i] = tc_f32_to_f16(x);
    v[i] = tc_f16_to_f32(p[i]);
  }
  return p;
}

static const int64_t Ms[] = {1, 2, 7, 16, 31, 63, 64, 65, 128, 129, 257, 1000};
#define NM ((int)(sizeof Ms / sizeof Ms[0]))
#define MAXM 1000

/* y = A @ B (+ bias, relu), A [M, k] with M the size variable (and B
 * [k, N], bias [N] with N one: nsym), scheduled for target */
static tc_fusion *sym_gemm_arch(int64_t n, int64_t k, int epilogue, const tc_matmul_tiles *tl,
                                bool nsym, tc_target target, const char *arch) {
  tc_fusion *f = tc_fusion_new();
  int64_t sa[2] = {1 << 16, k}, sb[2] = {k, nsym ? 256 : n}, sn = -1;
  const char *bn[2] = {NULL, "N"};
  tc_tensor *a = tc_input_sym(f, TC_F16, 2, sa, "M", 1);
  tc_tensor *b = nsym ? tc_input_syms(f, TC_F16, 2, sb, bn, NULL) : tc_input(f, TC_F16, 2, sb);
  tc_tensor *y = tc_matmul(f, a, b);
  if (epilogue && y) {
    bool is_new[2] = {true, false};
    tc_tensor *bias = nsym ? tc_input_sym(f, TC_F32, 1, &sn, "N", 1) : tc_input(f, TC_F32, 1, &n);
    y = tc_unary(f, TC_RELU, tc_binary(f, TC_ADD, y, tc_broadcast(f, bias, 2, is_new)));
  }
  TC_CHECK(y, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  OK(f, tc_schedule_matmul(f, target, arch, tl));
  return f;
}

static tc_fusion *sym_gemm_for(int64_t n, int64_t k, int epilogue, const tc_matmul_tiles *tl, bool nsym,
                               tc_target target) {
  return sym_gemm_arch(n, k, epilogue, tl, nsym, target, target == TC_TARGET_CUDA ? "sm_80" : NULL);
}

static tc_fusion *sym_gemm(int64_t n, int64_t k, int epilogue, const tc_matmul_tiles *tl, bool nsym) {
  return sym_gemm_for(n, k, epilogue, tl, nsym, TC_TARGET_OPENCL);
}

/* Runs kern (y = A @ B (+ bias, relu), M the size variable) at every M of
 * Ms against the plain C loop; nothing may be written past M rows. */
static void runs(tc_kernel *kern, int64_t n, int64_t k, int epilogue, const char *desc) {
  double *va = malloc((size_t)(MAXM * k) * sizeof(double)), *vb = malloc((size_t)(k * n) * sizeof(double));
  uint16_t *a = f16_values(MAXM * k, 17, va), *b = f16_values(k * n, 91, vb);
  float fbias[512];
  double bias[512];
  for (int64_t j = 0; j < n; j++) fbias[j] = (float)((j * 7) % 41 - 20) / 8.0f, bias[j] = fbias[j];
  float *out = malloc((size_t)((MAXM + 1) * n) * sizeof(float));
  for (int r = 0; r < NM; r++) {
    int64_t m = Ms[r];
    memset(out, 0xff, (size_t)((MAXM + 1) * n) * sizeof(float)); /* NaNs: an element never written shows */
    out[m * n] = -77.0f;
    void *args[5] = {NULL, a, b, epilogue ? (void *)fbias : (void *)out, out};
    tc_status st = tc_kernel_run_sizes(kern, args, &m, 1, NULL, NULL);
    if (st == TC_ERR_NO_DEVICE) {
      printf("  skip runs: %s\n", tc_kernel_error(kern));
      break;
    }
    TC_CHECK(st == TC_OK, "%s, M = %lld: %s", desc, (long long)m, tc_kernel_error(kern));
    char d2[160];
    snprintf(d2, sizeof d2, "%s, M = %lld", desc, (long long)m);
    matmul_mismatches(d2, out, va, vb, epilogue ? bias : NULL, m, n, k, 0);
    TC_CHECK(out[m * n] == -77.0f, "%s: wrote past M rows", d2);
  }
  free(va), free(vb), free(a), free(b), free(out);
}

static void sweep(int64_t n, int64_t k, int epilogue, int stages) {
  tc_matmul_tiles tl = {64, 32, 32, 32, 16, TC_MACRO_MMA_M16N8K16, stages};
  tc_fusion *f = sym_gemm(n, k, epilogue, &tl, false);
  char desc[128];
  snprintf(desc, sizeof desc, "M x %lld x %lld%s, %d stage%s", (long long)n, (long long)k,
           epilogue ? " bias,relu" : "", stages, stages == 1 ? "" : "s");
  TC_CHECK(strstr(tc_fusion_schedule_note(f), "matmul: M (at most 65536) x") != NULL &&
               strstr(tc_fusion_schedule_note(f), "mma.sync m16n8k16") != NULL &&
               strstr(tc_fusion_schedule_note(f), "on BIDx x BIDy") != NULL,
           "%s: note %s", desc, tc_fusion_schedule_note(f));
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "dyn_mma"};
  tc_status st;
  tc_kernel *kern = tc_compile(f, &o, &st);
  TC_REQUIRE(kern, "%s: %s", desc, tc_fusion_error(f));
  TC_CHECK(strstr(tc_kernel_source(kern), "tc_mma_emu(") != NULL, "%s: no mma", desc);
  runs(kern, n, k, epilogue, desc);
  /* the CUDA kernel (sm_80, the real instruction) builds where NVRTC exists */
  tc_fusion *fc = tc_fusion_new();
  tc_fusion_free(fc);
  fc = sym_gemm_for(n, k, epilogue, &tl, false, TC_TARGET_CUDA);
  tc_compile_options co = {TC_TARGET_CUDA, "sm_80", "dyn_mma"};
  tc_kernel *ck = tc_compile(fc, &co, &st);
  TC_CHECK(ck != NULL, "%s: CUDA: %s", desc, tc_fusion_error(fc));
  if (ck) {
    TC_CHECK(strstr(tc_kernel_source(ck), "mma.sync.aligned.m16n8k16") != NULL, "%s: no mma.sync", desc);
    st = tc_kernel_build(ck, NULL);
    if (st == TC_ERR_UNSUPPORTED) printf("  skip CUDA build: %s\n", tc_kernel_error(ck));
    else TC_CHECK(st == TC_OK, "%s: CUDA build: %s", desc, tc_kernel_error(ck));
  }
  tc_kernel_free(ck);
  tc_fusion_free(fc);
  tc_kernel_free(kern);
  tc_fusion_free(f);
}

/* M and N both size variables: (M, N) pairs against the plain C loop */
static void test_mma_mn(void) {
  tc_matmul_tiles tl = {32, 64, 32, 16, 32, TC_MACRO_MMA_M16N8K16, 1};
  int64_t k = 32;
  tc_fusion *f = sym_gemm(0, k, 1, &tl, true);
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "dyn_mma_mn"};
  tc_status st;
  tc_kernel *kern = tc_compile(f, &o, &st);
  TC_REQUIRE(kern, "%s", tc_fusion_error(f));
  TC_CHECK_EQ_INT(tc_kernel_size_var_count(kern), 2);
  static const int64_t mn[][2] = {{1, 1}, {7, 8}, {33, 64}, {64, 65}, {100, 200}, {129, 256}};
  double *va = malloc((size_t)(129 * k) * sizeof(double)), *vb = malloc((size_t)(k * 256) * sizeof(double));
  uint16_t *a = f16_values(129 * k, 5, va), *b0 = f16_values(k * 256, 23, vb);
  uint16_t *b = malloc((size_t)(k * 256) * 2);
  double *vbn = malloc((size_t)(k * 256) * sizeof(double));
  float fbias[256];
  double bias[256];
  for (int j = 0; j < 256; j++) fbias[j] = (float)((j * 5) % 33 - 16) / 8.0f, bias[j] = fbias[j];
  float *out = malloc((size_t)(129 * 256 + 1) * sizeof(float));
  for (size_t r = 0; r < sizeof mn / sizeof mn[0]; r++) {
    int64_t m = mn[r][0], n = mn[r][1], sizes[2] = {m, n};
    for (int64_t q = 0; q < k * n; q++) b[q] = b0[q], vbn[q] = vb[q]; /* B [k, n], row-major */
    memset(out, 0xff, (size_t)(129 * 256 + 1) * sizeof(float));
    out[m * n] = -77.0f;
    void *args[6] = {NULL, a, NULL, b, fbias, out};
    st = tc_kernel_run_sizes(kern, args, sizes, 2, NULL, NULL);
    if (st == TC_ERR_NO_DEVICE) {
      printf("  skip runs: %s\n", tc_kernel_error(kern));
      break;
    }
    TC_CHECK(st == TC_OK, "M %lld, N %lld: %s", (long long)m, (long long)n, tc_kernel_error(kern));
    char d[64];
    snprintf(d, sizeof d, "M %lld, N %lld", (long long)m, (long long)n);
    matmul_mismatches(d, out, va, vbn, bias, m, n, k, 0);
    TC_CHECK(out[m * n] == -77.0f, "%s: wrote past M x N", d);
  }
  free(va), free(vb), free(vbn), free(a), free(b0), free(b), free(out);
  tc_kernel_free(kern);
  tc_fusion_free(f);
}

/* y = A @ B + bias, relu with wgmma m64nNk16 tiles (64 x 64 blocks, K
 * tiles of 32 or 64 with the 128B swizzle) where M, N or K is a size
 * variable (which: 0, 1, 2), one buffer or a ring: compiled once for
 * OpenCL (the instruction emulated through its descriptors) and run at 6
 * values of the variable against the plain C loop; nothing is written
 * past C; the sm_90a kernel builds where NVRTC exists.  The tiles' edges
 * read zeros: rows past M or columns past N are never stored, and the K
 * tile past K adds nothing (zero-filled as it is staged). */
static void wgmma_open(int which, int64_t bk, int stages) {
  static const int64_t vals[] = {1, 7, 64, 65, 130, 257};
  const int64_t M = 130, N = 72, K = 96, BOUND = 4096;
  tc_fusion *f = tc_fusion_new();
  int64_t sa[2] = {which == 0 ? BOUND : M, which == 2 ? BOUND : K}, sb[2] = {which == 2 ? -1 : K, which == 1 ? BOUND : N};
  int64_t sbias = which == 1 ? -1 : N;
  const char *an[2] = {which == 0 ? "M" : NULL, which == 2 ? "K" : NULL};
  const char *bn[2] = {which == 2 ? "K" : NULL, which == 1 ? "N" : NULL};
  tc_tensor *a = which != 1 ? tc_input_syms(f, TC_F16, 2, sa, an, NULL) : tc_input(f, TC_F16, 2, sa);
  tc_tensor *b = which != 0 ? tc_input_syms(f, TC_F16, 2, sb, bn, NULL) : tc_input(f, TC_F16, 2, sb);
  tc_tensor *bias = which == 1 ? tc_input_sym(f, TC_F32, 1, &sbias, "N", 1) : tc_input(f, TC_F32, 1, &sbias);
  bool is_new[2] = {true, false};
  tc_tensor *y = tc_unary(f, TC_RELU, tc_binary(f, TC_ADD, tc_matmul(f, a, b), tc_broadcast(f, bias, 2, is_new)));
  TC_REQUIRE(y, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  tc_matmul_tiles tl = {64, 64, bk, 64, 64, TC_MACRO_WGMMA, stages};
  char desc[96];
  snprintf(desc, sizeof desc, "wgmma with %c open, bk %lld, %d stage%s", "MNK"[which], (long long)bk, stages,
           stages > 1 ? "s" : "");
  OK(f, tc_schedule_matmul(f, TC_TARGET_CUDA, "sm_90a", &tl));
  const char *want[3] = {"matmul: M (at most 4096) x 72 x 96, 64x64 tiles on BIDx x BIDy",
                         "matmul: 130 x N (at most 4096) x 96, 64x64 tiles on BIDy x BIDx",
                         "matmul: 130 x 72 x K (at most 4096), 64x64 tiles on BIDy x BIDx"};
  TC_CHECK(strstr(tc_fusion_schedule_note(f), want[which]) && strstr(tc_fusion_schedule_note(f), "as wgmma m64n64k16"),
           "%s: note %s", desc, tc_fusion_schedule_note(f));
  tc_compile_options co = {TC_TARGET_CUDA, "sm_90a", "dyn_wgmma"}, o = {TC_TARGET_OPENCL, NULL, "dyn_wgmma"};
  tc_status st;
  tc_kernel *ck = tc_compile(f, &co, &st);
  TC_CHECK(ck && strstr(tc_kernel_source(ck), "wgmma.mma_async"), "%s: CUDA: %s", desc, tc_fusion_error(f));
  if (ck && (st = tc_kernel_build(ck, NULL)) != TC_ERR_UNSUPPORTED)
    TC_CHECK(st == TC_OK, "%s: CUDA build: %s", desc, tc_kernel_error(ck));
  tc_kernel_free(ck);
  tc_kernel *kern = tc_compile(f, &o, &st);
  TC_REQUIRE(kern, "%s: %s", desc, tc_fusion_error(f));
  int64_t maxm = which == 0 ? 257 : M, maxn = which == 1 ? 257 : N, maxk = which == 2 ? 257 : K;
  double *va = malloc((size_t)(maxm * maxk) * sizeof(double)), *vb = malloc((size_t)(maxk * maxn) * sizeof(double));
  uint16_t *ha = f16_values(maxm * maxk, 3, va), *hb = f16_values(maxk * maxn, 41, vb);
  float fbias[257];
  double dbias[257];
  for (int j = 0; j < 257; j++) fbias[j] = (float)((j * 3) % 17 - 8) / 4.0f, dbias[j] = fbias[j];
  float *out = malloc((size_t)(maxm * maxn + 1) * sizeof(float));
  for (int r = 0; r < 6; r++) {
    int64_t v = vals[r], m = which == 0 ? v : M, n = which == 1 ? v : N, k = which == 2 ? v : K;
    memset(out, 0xff, (size_t)(maxm * maxn + 1) * sizeof(float));
    out[m * n] = -77.0f;
    /* (the variable's parameter before the first input naming it) */
    void *args[5] = {NULL, ha, hb, fbias, out}, *args_n[5] = {ha, NULL, hb, fbias, out};
    st = tc_kernel_run_sizes(kern, which == 1 ? args_n : args, &v, 1, NULL, NULL);
    if (st == TC_ERR_NO_DEVICE) {
      printf("  skip runs: %s\n", tc_kernel_error(kern));
      break;
    }
    TC_CHECK(st == TC_OK, "%s at %lld: %s", desc, (long long)v, tc_kernel_error(kern));
    char d2[160];
    snprintf(d2, sizeof d2, "%s at %lld", desc, (long long)v);
    matmul_mismatches(d2, out, va, vb, dbias, m, n, k, 0);
    TC_CHECK(out[m * n] == -77.0f, "%s: wrote past C", d2);
  }
  free(va), free(vb), free(ha), free(hb), free(out);
  tc_kernel_free(kern);
  tc_fusion_free(f);
}

static void test_wgmma(void) {
  for (int which = 0; which < 3; which++) {
    wgmma_open(which, 64, 1);
    wgmma_open(which, 32, 3);
  }
}

/* tc_schedule_auto's choice where M is a size variable: mma.sync with
 * rings on CUDA sm_80, its tiles from M's bound (65536: 128 x 128 blocks
 * of 64 x 64 warp tiles, K tiles of 32, 3 stages for K 96); wgmma on
 * sm_90a (128 x 128 blocks of two 64 x 128 warp-group tiles, K tiles of
 * 64, 2 stages for the 2 K tiles of 96); MFMA on HIP; each run on OpenCL
 * (the instructions emulated) at every M. */
static void test_auto_choice(void) {
  static const struct {
    tc_target target;
    const char *arch, *want;
  } cs[] = {
      {TC_TARGET_CUDA, "sm_80", "128x128 tiles on BIDx x BIDy, 4 warps (TIDy) of 32 lanes (TIDx) with 64x64 "
                                "tiles each as mma.sync m16n8k16"},
      {TC_TARGET_CUDA, "sm_90a", "128x128 tiles on BIDx x BIDy, 2 warp groups (TIDy) of 128 threads (TIDx) "
                                 "with 64x128 tiles each as wgmma m64n128k16"},
      {TC_TARGET_HIP, "gfx90a", "as MFMA 32x32x8"},
  };
  for (int i = 0; i < 3; i++) {
    tc_fusion *f = sym_gemm_arch(128, 96, 1, NULL, false, cs[i].target, cs[i].arch);
    const char *note = tc_fusion_schedule_note(f);
    TC_CHECK(strstr(note, "matmul: M (at most 65536) x 128 x 96") && strstr(note, cs[i].want) &&
                 (i == 2 || strstr(note, i ? "in rings of 2 stages" : "in rings of 3 stages")),
             "%s: note %s", cs[i].arch, note);
    tc_compile_options o = {TC_TARGET_OPENCL, NULL, "dyn_auto"};
    tc_status st;
    tc_kernel *kern = tc_compile(f, &o, &st);
    TC_REQUIRE(kern, "%s: %s", cs[i].arch, tc_fusion_error(f));
    runs(kern, 128, 96, 1, cs[i].arch);
    tc_kernel_free(kern);
    tc_fusion_free(f);
  }
}

static void test_mma_m(void) {
  sweep(64, 48, 0, 1);
  sweep(96, 64, 1, 1);
  sweep(64, 96, 1, 2);
}

int main(void) {
  TC_RUN(test_mma_m);
  TC_RUN(test_mma_mn);
  TC_RUN(test_wgmma);
  TC_RUN(test_auto_choice);
  TC_MAIN_END();
}
