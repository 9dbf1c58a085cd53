/* test_matmul_wgmma.c - the matmul whose products are warp-group wgmma
 * m64nNk16 (tc_matmul_tiles.macro = TC_MACRO_WGMMA): f16 and bf16
 * operands, with and without a fused epilogue (bias, ReLU), one and
 * several warp groups along M and N, several K tiles and blocks, edges
 * (extents of 1, primes), K-major tiles without swizzle and (K tiles of
 * 64) with the 128B swizzle, run on OpenCL (PoCL) through the emulation of
 * the instruction, which reads the shared tiles through the matrix
 * descriptors as the hardware does, against a plain C loop; the
 * descriptors' LBO / SBO against the canonical layout's, derived here by
 * hand; a wrong LBO or SBO injected after the lowering's check fails on
 * PoCL; M- and N-major tiles (A given [K, M], B [K, N]) with their
 * descriptors and transpose flags; a layout no descriptor expresses is
 * refused; the CUDA kernel holds the instruction and its fences, not the
 * emulation, and builds with NVRTC for sm_90a; the refusals (not sm_90a,
 * f32 operands, HIP, an N the instruction does not have); rings of 3
 * and 4 stages (wait depth 1) over 1, 2, 3 and 7 K tiles on PoCL, their
 * CUDA text with one wgmma.wait_group 1 in the K loop and wait_group 0
 * right after it; on CUDA the
 * swizzled tiles by bulk tensor copies with mbarrier waits where whole
 * boxes cover the operands, in one buffer and in rings of 2 to 4 stages
 * (an mbarrier per slot; the rings' bulk-copy form also runs on PoCL). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/test_hooks.h"
#include "matmul_test_util.h"
#include "test.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

typedef struct wcase {
  int64_t m, n, k;
  tc_dtype t;
  int epilogue; /* 1: relu(A @ B + bias) */
  tc_matmul_tiles tiles;
  int tb; /* 1: B is given as [N, K] (read through a permute) */
  int ta; /* 1: A is given as [K, M] */
} wcase;

#define WG(bm, bn, bk, tn) {bm, bn, bk, 64, tn, TC_MACRO_WGMMA}

/* The fusion of case c on f: y = A @ B, or relu(A @ B + bias). */
static tc_tensor *build(tc_fusion *f, const wcase *c) {
  int64_t sa[2] = {c->m, c->k}, sat[2] = {c->k, c->m}, sb[2] = {c->k, c->n}, sbt[2] = {c->n, c->k};
  tc_tensor *a = tc_input(f, c->t, 2, c->ta ? sat : sa), *b = tc_input(f, c->t, 2, c->tb ? sbt : sb);
  tc_tensor *y = tc_matmul(f, c->ta ? tc_permute(f, a, (int[]){1, 0}) : a,
                           c->tb ? tc_permute(f, b, (int[]){1, 0}) : b);
  if (c->epilogue && y) {
    bool is_new[2] = {true, false};
    tc_tensor *bias = tc_input(f, TC_F32, 1, &c->n);
    y = tc_unary(f, TC_RELU, tc_binary(f, TC_ADD, y, tc_broadcast(f, bias, 2, is_new)));
  }
  return y;
}

static tc_kernel *compile(const wcase *c, tc_target target, const char *arch, const char *name,
                          tc_fusion **fp) {
  tc_fusion *f = *fp = tc_fusion_new();
  tc_tensor *y = build(f, c);
  TC_CHECK(y != NULL, "%s", tc_fusion_error(f));
  if (!y) return NULL;
  OK(f, tc_add_output(f, y));
  OK(f, tc_schedule_matmul(f, target, arch, &c->tiles));
  tc_compile_options opt = {target, arch, name};
  tc_status st;
  return tc_compile(f, &opt, &st);
}

/* Runs c on OpenCL and compares with the plain C loop; returns the
 * mismatches seen (up to 4), -1 when not run.  They are failures unless
 * fault_wanted (an injected fault that must show). */
static int run(const wcase *c, int fault_wanted, const char *name) {
  char desc[128];
  snprintf(desc, sizeof desc, "%lldx%lldx%lld %s%s tiles %lldx%lldx%lld/64x%lld", (long long)c->m,
           (long long)c->n, (long long)c->k, tc_dtype_name(c->t), c->epilogue ? " bias,relu" : "",
           (long long)c->tiles.bm, (long long)c->tiles.bn, (long long)c->tiles.bk,
           (long long)c->tiles.tn);
  tc_fusion *f;
  tc_kernel *k = compile(c, TC_TARGET_OPENCL, NULL, name, &f);
  TC_CHECK(k != NULL, "%s: %s", desc, tc_fusion_error(f));
  if (!k) {
    tc_fusion_free(f);
    return -1;
  }
  char inst[32];
  snprintf(inst, sizeof inst, "wgmma m64n%lldk16", (long long)c->tiles.tn);
  TC_CHECK(strstr(tc_fusion_schedule_note(f), inst) != NULL, "%s: note %s", desc,
           tc_fusion_schedule_note(f));
  const char *src = tc_kernel_source(k);
  TC_CHECK(strstr(src, "tc_wgmma_emu(") != NULL, "%s: no wgmma in\n%s", desc, src);
  int64_t m = c->m, n = c->n, kk = c->k;
  double *va = malloc((size_t)(m * kk) * sizeof(double)), *vb = malloc((size_t)(kk * n) * sizeof(double));
  uint16_t *a = values(c->t, m * kk, va), *b = values(c->t, kk * n, vb);
  float *bias = malloc((size_t)n * sizeof(float));
  for (int64_t j = 0; j < n; j++) bias[j] = (float)((int64_t)(rnd() % 41) - 20) / 8.0f;
  float *out = malloc((size_t)(m * n) * sizeof(float));
  memset(out, 0xff, (size_t)(m * n) * sizeof(float)); /* NaNs: an element never written shows */
  void *args[4] = {a, b, c->epilogue ? (void *)bias : (void *)out, out};
  tc_status st = tc_kernel_run(k, args, NULL, NULL);
  int bad = -1;
  if (st == TC_ERR_NO_DEVICE) {
    printf("  skip run: %s\n", tc_kernel_error(k));
  } else {
    TC_CHECK(st == TC_OK, "%s: run: %s", desc, tc_kernel_error(k));
    /* A [M, K] and B [K, N] for the plain C loop (given [K, M] with ta,
     * [N, K] with tb) */
    double *mk = malloc((size_t)(m * kk) * sizeof(double)), *kn = malloc((size_t)(kk * n) * sizeof(double));
    double *dbias = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < m; i++)
      for (int64_t q = 0; q < kk; q++) mk[i * kk + q] = va[c->ta ? q * m + i : i * kk + q];
    for (int64_t q = 0; q < kk; q++)
      for (int64_t j = 0; j < n; j++) kn[q * n + j] = vb[c->tb ? j * kk + q : q * n + j];
    for (int64_t j = 0; j < n; j++) dbias[j] = bias[j];
    bad = matmul_mismatches(desc, out, mk, kn, c->epilogue ? dbias : NULL, m, n, kk, fault_wanted);
    free(mk), free(kn), free(dbias);
  }
  free(va), free(vb), free(a), free(b), free(bias), free(out);
  tc_kernel_free(k);
  tc_fusion_free(f);
  return bad;
}

/* One warp group, one 64 x N tile and one K step: every thread's N / 2
 * accumulators land at the PTX ISA's (row, column) or the loop disagrees. */
static void test_one_tile(void) {
  wcase c = {64, 8, 16, TC_F16, 0, WG(64, 8, 16, 8)};
  run(&c, 0, "mm");
  c.t = TC_BF16;
  run(&c, 0, "mm");
  c = (wcase){64, 64, 16, TC_BF16, 1, WG(64, 64, 16, 64)};
  run(&c, 0, "mm");
}

/* Warp groups along M (2 of 64 rows) and along N (2, 3, 4), several K
 * steps per K tile and several K tiles, several blocks, N up to 256; then
 * edges: the shared tiles hold 0 past M, N and K (a K tile past K, rows
 * and columns past the result), the store skips them; 1 and primes. */
static void test_shapes(void) {
  static const wcase cs[] = {
      {128, 64, 64, TC_F16, 0, WG(128, 64, 32, 64)},
      {64, 128, 32, TC_BF16, 1, WG(64, 128, 16, 64)},
      {128, 96, 48, TC_F16, 1, WG(128, 96, 16, 48)},
      {64, 24, 80, TC_BF16, 1, WG(64, 24, 16, 8)},
      {192, 256, 32, TC_BF16, 0, WG(64, 256, 32, 256)},
      {128, 128, 64, TC_F16, 1, WG(64, 128, 64, 128)},
      /* edges */
      {1, 1, 1, TC_F16, 0, WG(64, 8, 16, 8)},
      {1, 1, 1, TC_BF16, 1, WG(64, 8, 16, 8)},
      {67, 97, 33, TC_BF16, 1, WG(128, 96, 32, 48)},
      {5, 130, 17, TC_F16, 1, WG(64, 64, 16, 32)},
      {100, 3, 40, TC_BF16, 0, WG(64, 8, 32, 8)},
      {131, 13, 7, TC_F16, 1, WG(128, 16, 16, 16)},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) run(&cs[i], 0, "mm");
}

/* K tiles of 64 and 128: the tiles in the 128B swizzled layout (rows of
 * 64 elements, chunks XORed with the row), one and several warp groups,
 * N up to 256, edges in M, N and K. */
static void test_swizzled(void) {
  static const wcase cs[] = {
      {64, 64, 64, TC_F16, 0, WG(64, 64, 64, 64)},
      {128, 64, 128, TC_BF16, 1, WG(128, 64, 64, 64)},
      {67, 97, 131, TC_BF16, 1, WG(128, 96, 64, 48)},
      {100, 40, 200, TC_F16, 1, WG(64, 40, 128, 8)},
      {130, 256, 64, TC_BF16, 0, WG(64, 256, 64, 256)},
      {1, 1, 1, TC_F16, 1, WG(64, 8, 64, 8)},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    run(&cs[i], 0, "mm");
    tc_fusion *f;
    tc_kernel *k = compile(&cs[i], TC_TARGET_OPENCL, NULL, "mm", &f);
    /* swizzle mode 1, SBO 8 rows of 128 bytes (LBO unused: 1 unit) */
    TC_CHECK(k && strstr(tc_kernel_source(k), "), 16u, 1024u, 1u)") != NULL, "no 128B descriptor");
    TC_CHECK(strstr(tc_fusion_schedule_note(f), "(128B swizzle)") != NULL, "%s", tc_fusion_schedule_note(f));
    tc_kernel_free(k);
    tc_fusion_free(f);
  }
}

/* Random cases: M, N, K among extents of 1, small primes and tile
 * multiples; 1 or 2 warp groups along M, 1 to 4 along N with N of 8 to
 * 64 each, K tiles of 16 to 128 (so both layouts); f16 or bf16; with or
 * without the epilogue. */
static void test_random(void) {
  static const int64_t ext[] = {1, 2, 3, 7, 13, 17, 31, 64, 67, 97, 130};
  static const int64_t bks[] = {16, 32, 64, 128};
  for (int i = 0; i < 16; i++) {
    int64_t wm = 1 + (int64_t)(rnd() % 2), wn = 1 + (int64_t)(rnd() % 4), tn = 8 * (1 + (int64_t)(rnd() % 8));
    wcase c = {ext[rnd() % 11], ext[rnd() % 11], ext[rnd() % 11], rnd() % 2 ? TC_F16 : TC_BF16,
               (int)(rnd() % 2), WG(64 * wm, wn * tn, bks[rnd() % 4], tn)};
    run(&c, 0, "mm");
  }
}

/* The descriptors carry the canonical K-major layout's offsets, worked
 * out here from the PTX ISA's definition rather than from the kernel:
 * core matrices of 8 rows x 16 bytes, the next 8 rows (SBO) 128 bytes on,
 * the next 8 K (LBO) a whole K-slice of the tile on, bm x 8 (A) or bn x 8
 * (B) 16-bit elements = 16 bm (16 bn) bytes; no swizzle.  (With N = 8
 * a warp group's B has one group of 8 rows and SBO is unused.) */
static void test_descriptors(void) {
  static const wcase cs[] = {
      {67, 97, 33, TC_BF16, 1, WG(128, 96, 32, 48)},
      {64, 48, 80, TC_F16, 0, WG(64, 48, 16, 16)},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    tc_fusion *f;
    tc_kernel *k = compile(&cs[i], TC_TARGET_OPENCL, NULL, "mm", &f);
    TC_CHECK(k != NULL, "%s", tc_fusion_error(f));
    if (k) {
      char da[64], db[64];
      snprintf(da, sizeof da, "), %lldu, 128u, 0u)", (long long)(16 * cs[i].tiles.bm));
      snprintf(db, sizeof db, "), %lldu, 128u, 0u)", (long long)(16 * cs[i].tiles.bn));
      const char *src = tc_kernel_source(k), *pa = strstr(src, da), *pb = pa ? strstr(pa + 1, db) : NULL;
      TC_CHECK(pa && pb, "descriptors (A LBO %s, B LBO %s) not in\n%s", da, db, src);
    }
    tc_kernel_free(k);
    tc_fusion_free(f);
  }
}

/* A descriptor off by 16 bytes in A's LBO (its SBO when swizzled) or B's
 * SBO, or with A's swizzle mode flipped, injected after the lowering
 * checked the layout, gives wrong results on the emulation,
 * which addresses the tiles through the descriptors: the right results
 * above come from the descriptors the lowering derived. */
static void test_faults(void) {
  for (int sw = 0; sw < 2; sw++) {
    wcase c = {64, 32, 32, TC_F16, 0, WG(64, 32, 32, 32)};
    if (sw) c = (wcase){64, 32, 64, TC_BF16, 0, WG(64, 32, 64, 32)}; /* 128B swizzle */
    for (int fault = 1; fault <= 3; fault++) {
      tc_test_hooks h = {0};
      h.wgmma_lower_fault = fault;
      tc_test_hooks_set(&h);
      char name[48];
      snprintf(name, sizeof name, "wgmma_fault%d_%d", fault, sw); /* its own cache key */
      int bad = run(&c, fault, name);
      tc_test_hooks_set(NULL);
      TC_CHECK(bad != 0, "fault %d (swizzle %d): the results still match the plain C loop", fault, sw);
    }
  }
}

/* M- and N-major tiles (imm-trans-a / imm-trans-b): with the 128B swizzle
 * where A is given [K, M] or B [K, N] and a warp group's rows are whole
 * runs of 64, the tile is [rows / 64][K][64] swizzled, so (PTX ISA, the
 * MN-major 128B canonical layout ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)))
 * SBO is 8 K rows of 128 bytes, 1024, and LBO the next 64 rows, bk rows
 * of 128 bytes: 8192 for B with bk 64 (A's 64 rows have no next block:
 * 0).  Each runs on PoCL against the plain C loop (edges too), the CUDA
 * kernel sets the instruction's transpose flags and builds; B's flag
 * flipped after the check fails on PoCL.  Without swizzle, A's core
 * matrices transposed by a schedule hook are the M-major layout the
 * lowering finds. */
static void test_mn_major(void) {
  static const struct {
    wcase c;
    const char *note, *desc_a, *desc_b, *flags;
  } cs[] = {
      {{128, 256, 128, TC_BF16, 1, WG(128, 256, 64, 256), 0, 1}, "M- and N-major", "), 0u, 1024u, 1u)",
       "), 8192u, 1024u, 1u)", "p, 1, 1, 1, 1;"},
      {{67, 130, 97, TC_F16, 0, WG(64, 128, 64, 128), 0, 0}, "K- and N-major", "), 16u, 1024u, 1u)",
       "), 8192u, 1024u, 1u)", "p, 1, 1, 0, 1;"},
      {{100, 64, 200, TC_BF16, 1, WG(128, 64, 128, 64), 1, 1}, "M- and K-major", "), 0u, 1024u, 1u)",
       "), 16u, 1024u, 1u)", "p, 1, 1, 1, 0;"},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    run(&cs[i].c, 0, "mm");
    tc_fusion *f;
    tc_kernel *k = compile(&cs[i].c, TC_TARGET_OPENCL, NULL, "mm", &f);
    TC_CHECK(k && strstr(tc_fusion_schedule_note(f), cs[i].note) != NULL, "case %zu: %s", i,
             tc_fusion_schedule_note(f));
    const char *src = k ? tc_kernel_source(k) : "", *pa = strstr(src, cs[i].desc_a);
    TC_CHECK(pa && strstr(pa + 1, cs[i].desc_b), "case %zu: descriptors %s, %s not in\n%s", i,
             cs[i].desc_a, cs[i].desc_b, src);
    tc_kernel_free(k);
    tc_fusion_free(f);
    k = compile(&cs[i].c, TC_TARGET_CUDA, "sm_90a", "mm", &f);
    TC_CHECK(k && strstr(tc_kernel_source(k), cs[i].flags) != NULL, "case %zu: no \"%s\"", i, cs[i].flags);
    tc_status st = k ? tc_kernel_build(k, NULL) : TC_ERR_ARGUMENT;
    if (st == TC_ERR_UNSUPPORTED) printf("  skip NVRTC build: %s\n", tc_kernel_error(k));
    else TC_CHECK(st == TC_OK, "case %zu does not build: %s", i, k ? tc_kernel_error(k) : "");
    tc_kernel_free(k);
    tc_fusion_free(f);
  }
  tc_test_hooks h = {0};
  h.wgmma_lower_fault = 4;
  tc_test_hooks_set(&h);
  TC_CHECK(run(&cs[1].c, 1, "wgmma_fault4") != 0, "B's transpose flag flipped: still matches");
  tc_test_hooks_set(NULL);
  h = (tc_test_hooks){0};
  h.wgmma_layout_fault = 1;
  tc_test_hooks_set(&h);
  wcase c = {64, 32, 32, TC_F16, 0, WG(64, 32, 32, 32)};
  run(&c, 0, "wgmma_layout1");
  tc_fusion *f;
  tc_kernel *k = compile(&c, TC_TARGET_OPENCL, NULL, "wgmma_layout1", &f);
  tc_test_hooks_set(NULL);
  /* f16, N 32, imm-trans-a 1, imm-trans-b 0 */
  TC_CHECK(k && strstr(tc_kernel_source(k), ", 0, 32, 1, 0, tid % 128") != NULL, "not M-major");
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* A shared layout no descriptor expresses (K / 8 innermost in A's tile,
 * by a schedule hook) is refused when compiling, naming the operand. */
static void test_layout_refused(void) {
  tc_test_hooks h = {0};
  h.wgmma_layout_fault = 2;
  tc_test_hooks_set(&h);
  wcase c = {64, 32, 32, TC_F16, 0, WG(64, 32, 32, 32)};
  tc_fusion *f;
  tc_kernel *k = compile(&c, TC_TARGET_OPENCL, NULL, "wgmma_layout", &f);
  tc_test_hooks_set(NULL);
  TC_CHECK(k == NULL, "compiled a layout no descriptor expresses");
  TC_CHECK(strstr(tc_fusion_error(f), "reads its A operand from") != NULL &&
               strstr(tc_fusion_error(f), "not one a wgmma matrix descriptor expresses") != NULL,
           "%s", tc_fusion_error(f));
  tc_kernel_free(k);
  tc_fusion_free(f);
}

static void expect_refusal(tc_dtype t, tc_matmul_tiles tl, tc_target target, const char *words) {
  tc_fusion *f = tc_fusion_new();
  wcase c = {64, 64, 32, t, 0, tl};
  OK(f, tc_add_output(f, build(f, &c)));
  tc_status st = tc_schedule_matmul(f, target, NULL, &tl);
  TC_CHECK(st != TC_OK, "accepted; wanted \"%s\"", words);
  TC_CHECK(strstr(tc_fusion_error(f), words) != NULL, "message \"%s\" lacks \"%s\"",
           tc_fusion_error(f), words);
  tc_fusion_free(f);
}

static void test_refusals(void) {
  tc_matmul_tiles tl = WG(64, 64, 16, 64);
  expect_refusal(TC_F32, tl, TC_TARGET_OPENCL, "multiplies f16 or bf16 operands, not f32");
  expect_refusal(TC_F16, tl, TC_TARGET_HIP, "wgmma m64nNk16 is an NVIDIA sm_90a instruction");
  static const tc_matmul_tiles bad[] = {WG(64, 12, 16, 12), WG(64, 264, 16, 264), WG(64, 64, 8, 64),
                                       {64, 64, 16, 32, 64, TC_MACRO_WGMMA}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    expect_refusal(TC_BF16, bad[i], TC_TARGET_OPENCL, "must be 64 x N with N a multiple of 8 up to 256");
  expect_refusal(TC_F16, (tc_matmul_tiles)WG(576, 64, 16, 64), TC_TARGET_OPENCL,
                 "9 warp groups of 128 threads exceed 1024 threads");
  /* CUDA before sm_90a: refused when compiling, with the arch */
  tc_fusion *f;
  wcase c = {64, 64, 32, TC_F16, 0, tl};
  tc_kernel *k = compile(&c, TC_TARGET_CUDA, "sm_80", "mm", &f);
  TC_CHECK(k == NULL, "compiled for sm_80");
  TC_CHECK(strstr(tc_fusion_error(f), "needs arch sm_90a, but the arch is sm_80") != NULL, "%s",
           tc_fusion_error(f));
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* The CUDA kernel holds the instruction between its fences, the shared
 * stores fenced for the async proxy, no emulation; it builds with NVRTC
 * for sm_90a (no GPU needed; skipped where NVRTC cannot be loaded). */
static void test_cuda_build(void) {
  static const wcase cs[] = {
      {128, 128, 64, TC_F16, 1, WG(128, 128, 32, 128)},
      {67, 97, 131, TC_BF16, 1, WG(128, 96, 64, 48)}, /* 128B swizzle */
  };
  static const char *inst[] = {"wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16",
                               "wgmma.mma_async.sync.aligned.m64n48k16.f32.bf16.bf16"};
  for (int i = 0; i < 2; i++) {
    tc_fusion *f;
    tc_kernel *k = compile(&cs[i], TC_TARGET_CUDA, "sm_90a", "mm", &f);
    TC_CHECK(k != NULL, "%s", tc_fusion_error(f));
    if (k) {
      const char *src = tc_kernel_source(k);
      TC_CHECK(strstr(src, inst[i]) != NULL, "no %s in\n%s", inst[i], src);
      TC_CHECK(strstr(src, "wgmma.fence.sync.aligned") != NULL &&
                   strstr(src, "wgmma.commit_group.sync.aligned") != NULL &&
                   strstr(src, "wgmma.wait_group.sync.aligned 0") != NULL,
               "the fences are missing");
      TC_CHECK(strstr(src, "fence.proxy.async.shared::cta") != NULL, "no proxy fence");
      TC_CHECK(strstr(src, "tc_wgmma_emu") == NULL, "the emulation in a CUDA kernel");
      TC_CHECK(strstr(src, i ? "), 16u, 1024u, 1u))" : "), 2048u, 128u, 0u))") != NULL,
               "descriptor of A (%s)", i ? "128B swizzle" : "no swizzle");
      tc_status st = tc_kernel_build(k, NULL);
      if (st == TC_ERR_UNSUPPORTED) printf("  skip NVRTC build: %s\n", tc_kernel_error(k));
      else TC_CHECK(st == TC_OK, "does not build: %s", tc_kernel_error(k));
    }
    tc_kernel_free(k);
    tc_fusion_free(f);
  }
}

static int count_of(const char *s, const char *w) {
  int n = 0;
  for (const char *p = strstr(s, w); p; p = strstr(p + 1, w)) n++;
  return n;
}

/* Wait depth 1 in rings (src/lower/circular.c): rings of 3 and 4 stages
 * over 1, 2, 3 and 7 K tiles, ragged (M, N primes, a partial last K
 * tile; 4 warp groups of 64 x 48, no swizzle) and whole (K tiles of 64,
 * the 128B swizzle), B as [K, N] and [N, K], run on PoCL against the
 * plain C loop (the emulation is synchronous, so this checks the copies
 * S - 2 tiles ahead, the slots and the accumulators named in place);
 * then the same schedule's CUDA kernel: exactly one wgmma.wait_group 1,
 * the end of the K tile's wgmmas, no copy of the accumulators (tc_fc),
 * and one wait_group 0, right after the K loop (the two closing braces
 * of the wgmma block and the loop between them), followed by a compiler
 * barrier on the accumulators, and it builds with NVRTC.  A ring of 2 stages keeps wait_group 0 in the loop. */
static void test_depth1_rings(void) {
  static const int ktiles[4] = {1, 2, 3, 7};
  for (int S = 2; S <= 4; S++)
    for (int i = 0; i < 4; i++)
      for (int swz = 0; swz < 2; swz++) {
        if (S == 2 && i != 3) continue; /* depth 0: one case of each layout */
        int64_t bk = swz ? 64 : 32, t = ktiles[i];
        wcase c = swz ? (wcase){128, 64, t * bk, TC_BF16, 1, {128, 64, bk, 64, 64, TC_MACRO_WGMMA, S}, i % 2}
                      : (wcase){67, 97, (t - 1) * bk + 17, i % 2 ? TC_F16 : TC_BF16, 1,
                                {128, 96, bk, 64, 48, TC_MACRO_WGMMA, S}, (i + S) % 2};
        char name[32];
        snprintf(name, sizeof name, "ring%d_%lld", S, (long long)t);
        TC_CHECK(run(&c, 0, name) != 1 && (c.k + bk - 1) / bk == t, "S %d, %lld K tiles", S, (long long)t);
        tc_fusion *f;
        tc_kernel *k = compile(&c, TC_TARGET_CUDA, "sm_90a", name, &f);
        TC_CHECK(k != NULL, "%s", tc_fusion_error(f));
        if (k) {
          const char *src = tc_kernel_source(k);
          const char *w1 = "wgmma.wait_group.sync.aligned 1;", *w0 = "wgmma.wait_group.sync.aligned 0;";
          if (S == 2) {
            TC_CHECK(count_of(src, w1) == 0 && count_of(src, w0) == 1 && strstr(src, "tc_fc[") != NULL,
                     "S 2: not the depth-0 form in\n%s", src);
          } else {
            TC_CHECK(count_of(src, w1) == 1 && count_of(src, w0) == 1 && strstr(src, "tc_fc") == NULL,
                     "S %d, %lld K tiles: %d wait_group 1, %d wait_group 0, %s in\n%s", S, (long long)t,
                     count_of(src, w1), count_of(src, w0), strstr(src, "tc_fc") ? "a copy of the accumulators" : "", src);
            const char *p = strstr(src, w1);
            p = p ? strchr(p, '\n') : NULL;
            int braces = 0;
            while (p && (*p == '\n' || *p == ' ' || *p == '}' || *p == '"' || *p == ':' || *p == ')' || *p == ';' ||
                         strncmp(p, "\"memory\"", 8) == 0)) {
              if (*p == '}') braces++;
              p += strncmp(p, "\"memory\"", 8) == 0 ? 8 : 1;
            }
            TC_CHECK(p && braces == 2 && strncmp(p, "asm volatile(\"wgmma.wait_group.sync.aligned 0;\"", 47) == 0,
                     "S %d: the wait_group 0 is not right after the K loop (%d braces) in\n%s", S, braces, src);
            /* then the compiler barrier on the accumulators (the epilogue's reads stay after the wait) */
            const char *q = p ? strchr(p, '\n') : NULL;
            while (q && (*q == '\n' || *q == ' ')) q++;
            TC_CHECK(q && strncmp(q, "asm volatile(\"\"\n", 16) == 0 && strstr(q, "\"+f\"(T"),
                     "S %d: no barrier on the accumulators after the wait_group 0", S);
          }
          tc_status st = tc_kernel_build(k, NULL);
          if (st == TC_ERR_UNSUPPORTED) printf("  skip NVRTC build: %s\n", tc_kernel_error(k));
          else TC_CHECK(st == TC_OK, "S %d does not build: %s", S, tc_kernel_error(k));
        }
        tc_kernel_free(k);
        tc_fusion_free(f);
      }
}

/* On CUDA, with K tiles of 64, whole tiles and A [M, K], B [N, K] in
 * global memory, the swizzled tiles come by bulk tensor copies: per
 * operand and K tile one box per warp group, its 32 of the block's 128
 * rows, at (K tile * 64, block row * 128 + warp group * 32), armed and
 * waited on through an mbarrier, then the same
 * swizzled descriptors; the kernel builds with NVRTC for sm_90a.  B
 * given [K, N] comes by N-major boxes (the MN-major layout is the
 * bulk-copy swizzle on [K, N]).  Not where an edge would need a partial
 * box (the element copies stay). */
static void test_tma(void) {
  for (int v = 0; v < 3; v++) {
    int64_t m = v == 1 ? 250 : 256, n = 384, kk = 128, sa[2] = {m, kk}, sb[2] = {n, kk};
    if (v == 2) sb[0] = kk, sb[1] = n;
    tc_matmul_tiles tl = WG(128, 128, 64, 64);
    tc_fusion *f = tc_fusion_new();
    tc_tensor *a = tc_input(f, TC_BF16, 2, sa), *b = tc_input(f, TC_BF16, 2, sb);
    tc_tensor *bv = v == 2 ? b : tc_permute(f, b, (int[]){1, 0});
    OK(f, tc_add_output(f, tc_unary(f, TC_RELU, tc_matmul(f, a, bv))));
    OK(f, tc_schedule_matmul(f, TC_TARGET_CUDA, "sm_90a", &tl));
    tc_compile_options o = {TC_TARGET_CUDA, "sm_90a", "mm"};
    tc_status st;
    tc_kernel *k = tc_compile(f, &o, &st);
    TC_CHECK(k != NULL, "%s", tc_fusion_error(f));
    if (k) {
      const char *src = tc_kernel_source(k);
      bool bulk = strstr(src, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier") != NULL;
      TC_CHECK(bulk == (v != 1), "case %d: bulk copies %s", v, bulk ? "where they cannot be" : "missing");
      TC_CHECK((strstr(tc_fusion_schedule_note(f), "by bulk tensor copies") != NULL) == (v != 1), "%s",
               tc_fusion_schedule_note(f));
      /* B [K, N]: N-major boxes, each of the 4 warp groups 16 of the 64
       * K rows by 64 columns (128 bytes: the 128B swizzle's rows), 2 for
       * the tile's 128 columns */
      if (v == 2)
        TC_CHECK(strstr(src, "2 boxes of 16 x 64, 128B swizzle") != NULL, "B's N-major boxes in\n%s", src);
      if (v == 0) {
        /* 4 warp groups: each loads 32 of the 128 rows of each tile */
        TC_CHECK(strstr(src, "\"r\"(i0 * 64), \"r\"(bidy * 128 + tidy * 32)") != NULL &&
                     strstr(src, "\"r\"(i0 * 64), \"r\"(bidx * 128 + tidy * 32)") != NULL &&
                     strstr(src, "1 box of 32 x 64, 128B swizzle") != NULL,
                 "box coordinates in\n%s", src);
        TC_CHECK(strstr(src, "mbarrier.try_wait.parity") != NULL &&
                     strstr(src, "mbarrier.arrive.expect_tx") != NULL, "no mbarrier");
      }
      TC_CHECK(strstr(src, "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16") != NULL &&
                   strstr(src, "), 16u, 1024u, 1u))") != NULL, "no swizzled wgmma");
      st = tc_kernel_build(k, NULL);
      if (st == TC_ERR_UNSUPPORTED) printf("  skip NVRTC build: %s\n", tc_kernel_error(k));
      else TC_CHECK(st == TC_OK, "does not build: %s", tc_kernel_error(k));
    }
    tc_kernel_free(k);
    tc_fusion_free(f);
  }
}

/* The schedule of the bulk-copy form (serial box loops, the same
 * swizzled layout), made on OpenCL by a test hook, where every thread
 * copies the whole tile element by element: it verifies on PoCL, so the
 * layout and the descriptors the CUDA kernel of test_tma uses are right. */
static void test_tma_form_on_pocl(void) {
  tc_test_hooks h = {0};
  h.wgmma_tma_anywhere = 1;
  tc_test_hooks_set(&h);
  wcase c = {256, 384, 128, TC_BF16, 1, WG(128, 128, 64, 64), 1};
  run(&c, 0, "wgmma_tma_form");
  tc_fusion *f;
  tc_kernel *k = compile(&c, TC_TARGET_OPENCL, NULL, "wgmma_tma_form", &f);
  tc_test_hooks_set(NULL);
  TC_CHECK(strstr(tc_fusion_schedule_note(f), "by bulk tensor copies") != NULL, "%s",
           tc_fusion_schedule_note(f));
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* Rings of bulk tensor copies (src/lower/circular.c, tma.c): A [M, K]
 * and B [N, K], whole 64-wide K tiles with the 128B swizzle, in rings of
 * 2, 3 and 4 stages over 1, 2, 3 and 7 K tiles (128x256x448 among them;
 * 2 or 4 warp groups; one and two blocks along M).  On PoCL the bulk-copy
 * form of the schedule (a test hook: serial box loops, every thread
 * copying the whole tile, so the slots, the copies S - 1 or S - 2 tiles
 * ahead and the descriptors' slot offsets are the ring's) runs against
 * the plain C loop; the note says the ring is by bulk tensor copies.  On
 * CUDA sm_90a the scheduler's own choice: one mbarrier per slot, A's and
 * B's copies twice each (prologue and loop) arming it with expect_tx and
 * issuing their box, one try_wait.parity in the loop, no cp.async, no
 * commit groups, one wgmma.wait_group 1 where S >= 3; it builds with
 * NVRTC. */
static void test_tma_rings(void) {
  static const int ktiles[4] = {1, 2, 3, 7};
  for (int tb = 1; tb >= 0; tb--) /* B [N, K], then [K, N] (N-major boxes) */
  for (int S = 2; S <= 4; S++)
    for (int i = 0; i < 4; i++) {
      int64_t t = ktiles[i], tn = (S + i) % 2 ? 128 : 256;
      wcase c = {i == 2 ? 256 : 128, 256, t * 64, i % 2 ? TC_F16 : TC_BF16, 1,
                 {128, 256, 64, 64, tn, TC_MACRO_WGMMA, S}, tb};
      char name[32];
      snprintf(name, sizeof name, "tma_ring%d_%lld_%d", S, (long long)t, tb);
      tc_test_hooks h = {0};
      h.wgmma_tma_anywhere = 1;
      tc_test_hooks_set(&h);
      TC_CHECK(run(&c, 0, name) != 1, "S %d, %lld K tiles on PoCL", S, (long long)t);
      tc_fusion *f;
      tc_kernel *k = compile(&c, TC_TARGET_OPENCL, NULL, name, &f);
      tc_test_hooks_set(NULL);
      TC_CHECK(strstr(tc_fusion_schedule_note(f), "by bulk tensor copies on CUDA sm_90+, one thread arming each slot") &&
                   strstr(tc_fusion_schedule_note(f), "(128B swizzle, by bulk tensor copies)"),
               "S %d: note %s", S, tc_fusion_schedule_note(f));
      TC_CHECK(!k || (!strstr(tc_kernel_source(k), "mbarrier.") && !strstr(tc_kernel_source(k), "tc_tma_bar")),
               "an mbarrier in an OpenCL kernel");
      tc_kernel_free(k);
      tc_fusion_free(f);
      k = compile(&c, TC_TARGET_CUDA, "sm_90a", name, &f);
      TC_CHECK(k != NULL, "%s", tc_fusion_error(f));
      if (k) {
        const char *src = tc_kernel_source(k);
        int copies = count_of(src, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier"),
            arms = count_of(src, "mbarrier.arrive.expect_tx"), inits = count_of(src, "mbarrier.init.shared::cta.b64"),
            waits = count_of(src, "mbarrier.try_wait.parity"), w1 = count_of(src, "wgmma.wait_group.sync.aligned 1;");
        TC_CHECK(copies == 4 && arms == 4 && inits == S && waits == 1 && w1 == (S >= 3) &&
                     !strstr(src, "tc_cpa") && !strstr(src, "cp.async.commit_group") && !strstr(src, "tc_tma_phase"),
                 "S %d, %lld K tiles: %d bulk copies, %d arms, %d mbarriers, %d waits, %d wait_group 1 in\n%s", S,
                 (long long)t, copies, arms, inits, waits, w1, src);
        /* each slot counts two arrivals (A's copy and B's) per warp group */
        char init[96];
        snprintf(init, sizeof init, "\"r\"(%lld) : \"memory\");  /* a ring slot", (long long)(2 * (256 / tn) * 2));
        TC_CHECK(strstr(src, init) != NULL, "S %d: no mbarrier counting %s", S, init);
        tc_status st = tc_kernel_build(k, NULL);
        if (st == TC_ERR_UNSUPPORTED) printf("  skip NVRTC build: %s\n", tc_kernel_error(k));
        else TC_CHECK(st == TC_OK, "S %d does not build: %s", S, tc_kernel_error(k));
      }
      tc_kernel_free(k);
      tc_fusion_free(f);
    }
}

int main(void) {
  TC_RUN(test_refusals);
  TC_RUN(test_one_tile);
  TC_RUN(test_shapes);
  TC_RUN(test_descriptors);
  TC_RUN(test_swizzled);
  TC_RUN(test_random);
  TC_RUN(test_faults);
  TC_RUN(test_mn_major);
  TC_RUN(test_layout_refused);
  TC_RUN(test_cuda_build);
  TC_RUN(test_depth1_rings);
  TC_RUN(test_tma);
  TC_RUN(test_tma_form_on_pocl);
  TC_RUN(test_tma_rings);
  TC_MAIN_END();
}
