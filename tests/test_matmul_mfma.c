/* test_matmul_mfma.c - the matmul whose products are AMD's MFMA
 * (tc_matmul_tiles.macro = TC_MACRO_MFMA_32X32X8 or TC_MACRO_MFMA_16X16X16):
 * f16 and bf16 operands, with and without a fused epilogue (bias, ReLU),
 * several wavefront tilings, run on OpenCL (PoCL, through the emulation
 * of the instruction, whose lane layouts are written independently of the
 * lowering's) against a plain C loop; edges the tiles do not fill (zeros
 * in the fragments); wrong layouts injected into the lowering fail there;
 * the HIP kernel calls the builtin and builds with hipcc for gfx90a and
 * gfx940; the refusals (f32 operands, CUDA, tiles that are not multiples
 * of the instruction, an arch without MFMA); tc_schedule_auto's choice of
 * MFMA for HIP. */
#include "base/test_hooks.h"
#include "matmul_frag_test_util.h"

/* Runs the case on OpenCL against the plain C loop and returns the
 * mismatches (up to 4; -1: not run); they are failures unless
 * fault_wanted, the injected fault (test_faults) that must show. */
static int run_case_fault(const mcase *c, int fault_wanted, const char *name);

static void run_case(const mcase *c) { run_case_fault(c, 0, "mfma"); }

/* name: the kernel's, so that a kernel made under a test hook has its own
 * cache key */
static int run_case_fault(const mcase *c, int fault_wanted, const char *name) {
  char desc[160];
  frag_desc(c, desc, sizeof desc);
  const char *want = !c->tiles.bm ? "as MFMA " : c->tiles.macro == TC_MACRO_MFMA_32X32X8
                                                     ? "as MFMA 32x32x8" : "as MFMA 16x16x16";
  tc_fusion *f;
  tc_kernel *k = frag_cl_kernel(c, name, want, desc, &f);
  if (!k) {
    tc_fusion_free(f);
    return -1;
  }
  /* the emulated instruction, no scalar products */
  const char *src = tc_kernel_source(k);
  TC_CHECK(strstr(src, "tc_mfma_emu(") != NULL, "%s: no MFMA in\n%s", desc, src);
  int bad = frag_run(k, c, fault_wanted, desc);
  tc_kernel_free(k);
  tc_fusion_free(f);
  return bad;
}

#define M32(bm, bn, bk, tm, tn) {bm, bn, bk, tm, tn, TC_MACRO_MFMA_32X32X8}
#define M16(bm, bn, bk, tm, tn) {bm, bn, bk, tm, tn, TC_MACRO_MFMA_16X16X16}

/* One wavefront of one instruction tile, the smallest kernels: each
 * lane's accumulators land at the ISA's (row, column) or the plain C loop
 * disagrees. */
static void test_one_tile(void) {
  for (int dt = 0; dt < 2; dt++) {
    tc_dtype t = dt ? TC_BF16 : TC_F16;
    mcase c32 = {32, 32, 8, t, 0, M32(32, 32, 8, 32, 32)};
    mcase c16 = {16, 16, 16, t, 0, M16(16, 16, 16, 16, 16)};
    run_case(&c32);
    run_case(&c16);
  }
}

/* Several wavefronts, several instruction tiles per wavefront, several K
 * tiles and K steps, more than one block; f16 and bf16, with and without
 * the epilogue.  Then edges the tiles do not fill: the fragment loads
 * past M, N or K give 0 (the instruction is never predicated), the store
 * skips the rows and columns past the result; extents of 1 and primes. */
static void test_shapes(void) {
  static const mcase cs[] = {
      {64, 64, 32, TC_F16, 0, M32(64, 64, 16, 32, 32)},
      {64, 64, 32, TC_BF16, 1, M32(64, 64, 16, 32, 32)},
      {128, 64, 16, TC_F16, 1, M32(64, 64, 8, 64, 32)},
      {64, 96, 24, TC_BF16, 0, M32(32, 96, 8, 32, 96)},
      {64, 64, 64, TC_F16, 1, M16(32, 32, 32, 16, 16)},
      {64, 32, 48, TC_BF16, 0, M16(64, 32, 16, 32, 16)},
      {32, 64, 32, TC_F16, 0, M16(32, 64, 32, 32, 32)},
      /* edges */
      {1, 1, 1, TC_F16, 0, M32(32, 32, 8, 32, 32)},
      {1, 1, 1, TC_BF16, 1, M16(16, 16, 16, 16, 16)},
      {67, 97, 131, TC_F16, 1, M32(64, 64, 16, 32, 32)},
      {67, 97, 131, TC_BF16, 1, M16(32, 32, 32, 16, 16)},
      {33, 20, 13, TC_BF16, 1, M32(64, 32, 8, 32, 32)},
      {5, 130, 17, TC_F16, 0, M16(16, 64, 16, 16, 32)},
      {100, 3, 40, TC_BF16, 1, M16(64, 16, 32, 32, 16)},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) run_case(&cs[i]);
}

static void test_refusals(void) {
  tc_matmul_tiles t32 = M32(64, 64, 8, 32, 32), t16 = M16(32, 32, 16, 16, 16);
  expect_refusal(TC_F32, 64, 64, 8, t32, TC_TARGET_OPENCL, "MFMA 32x32x8 multiplies f16 or bf16 operands, not f32");
  expect_refusal(TC_F32, 32, 32, 16, t16, TC_TARGET_HIP, "MFMA 16x16x16 multiplies f16 or bf16 operands, not f32");
  expect_refusal(TC_F16, 64, 64, 8, t32, TC_TARGET_CUDA, "MFMA 32x32x8 is an AMD instruction");
  expect_refusal(TC_BF16, 32, 32, 16, t16, TC_TARGET_CUDA, "MFMA 16x16x16 is an AMD instruction");
  tc_matmul_tiles odd = M32(64, 48, 8, 32, 16);
  expect_refusal(TC_F16, 64, 48, 8, odd, TC_TARGET_HIP,
                 "a wavefront's tile (tm x tn = 32 x 16) must be a multiple of 32 x 32");
  tc_matmul_tiles kodd = M16(32, 32, 8, 16, 16);
  expect_refusal(TC_F16, 32, 32, 8, kodd, TC_TARGET_OPENCL, "the K tile (bk = 8) of 16");
  tc_matmul_tiles many = M16(256, 256, 16, 32, 32); /* 64 wavefronts of 64 lanes */
  expect_refusal(TC_F16, 256, 256, 16, many, TC_TARGET_HIP, "64 wavefronts of 64 lanes exceed 1024");
  /* the other way round: mma.sync is NVIDIA's */
  tc_matmul_tiles mma = {32, 32, 16, 16, 8, TC_MACRO_MMA_M16N8K16};
  expect_refusal(TC_F16, 32, 32, 16, mma, TC_TARGET_HIP, "use the FMA macro or MFMA");
}

/* Each wrong layout injected into the lowering (A items 1 and 2 swapped,
 * B items 0 and 1 and 2 and 3 swapped, a lane's accumulator items swapped)
 * gives wrong results on the OpenCL emulation, whose layouts are its own:
 * the right results above are not an accident of symmetric data or of two
 * wrongs cancelling. */
static void test_faults(void) {
  for (int s = 0; s < 2; s++) {
    mcase c = {64, 64, 16, TC_F16, 0, M32(64, 64, 8, 32, 32)};
    if (s) c = (mcase){32, 32, 32, TC_BF16, 0, M16(32, 32, 16, 16, 16)};
    for (int fault = 1; fault <= 3; fault++) {
      tc_test_hooks h = {0};
      h.mma_lower_fault = fault;
      tc_test_hooks_set(&h);
      char name[64];
      snprintf(name, sizeof name, "mfma_fault%d_%d", fault, s); /* its own cache key */
      int bad = run_case_fault(&c, fault, name);
      tc_test_hooks_set(NULL);
      TC_CHECK(bad != 0, "%s fault %d: the results still match the plain C loop",
               s ? "16x16x16" : "32x32x8", fault); /* -1: no device */
    }
  }
}

/* An AMD arch without MFMA (RDNA's gfx1100) or without the bf16 _1k form
 * (gfx908) is refused when compiling, with the arch. */
static void test_arch(void) {
  static const struct { tc_dtype t; const char *arch, *words; } cs[] = {
      {TC_F16, "gfx1100", "needs an AMD arch with MFMA"},
      {TC_BF16, "gfx908", "with bf16 operands (the _1k form) needs gfx90a or later"},
  };
  for (int i = 0; i < 2; i++) {
    mcase c = {32, 32, 16, cs[i].t, 0, M16(32, 32, 16, 16, 16)};
    tc_fusion *f;
    tc_kernel *k = frag_kernel(&c, TC_TARGET_HIP, cs[i].arch, &f);
    TC_CHECK(k == NULL, "compiled for %s", cs[i].arch);
    TC_CHECK(strstr(tc_fusion_error(f), cs[i].words) != NULL, "%s", tc_fusion_error(f));
    tc_kernel_free(k);
    tc_fusion_free(f);
  }
}

/* The HIP kernel calls the builtin (no emulation) and builds with hipcc
 * for gfx90a and gfx940: both shapes, f16 on whole tiles and bf16 with
 * edges and the epilogue (no GPU needed; skipped where hipcc is absent). */
static void test_hip_build(void) {
  static const char *const arches[2] = {"gfx90a", "gfx940"};
  for (int i = 0; i < 4; i++) {
    mcase c = {64, 64, 32, TC_F16, 0, M32(64, 64, 16, 32, 32)};
    if (i == 1) c = (mcase){67, 97, 33, TC_BF16, 1, M32(64, 64, 16, 32, 32)};
    if (i == 2) c = (mcase){64, 64, 32, TC_F16, 1, M16(32, 32, 16, 16, 16)};
    if (i == 3) c = (mcase){67, 97, 33, TC_BF16, 0, M16(32, 64, 32, 16, 32)};
    static const char *const want[4] = {
        "__builtin_amdgcn_mfma_f32_32x32x8f16(", "__builtin_amdgcn_mfma_f32_32x32x8bf16_1k(",
        "__builtin_amdgcn_mfma_f32_16x16x16f16(", "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k("};
    for (int a = 0; a < 2; a++) {
      tc_fusion *f;
      tc_kernel *k = frag_kernel(&c, TC_TARGET_HIP, arches[a], &f);
      TC_CHECK(k != NULL, "%s: %s", arches[a], tc_fusion_error(f));
      if (k) {
        const char *src = tc_kernel_source(k);
        TC_CHECK(strstr(src, want[i]) != NULL, "no %s in\n%s", want[i], src);
        TC_CHECK(strstr(src, "tc_mfma_emu") == NULL, "the emulation in a HIP kernel");
        tc_status st = tc_kernel_build(k, NULL);
        if (st == TC_ERR_UNSUPPORTED) {
          printf("  skip hipcc build: %s\n", tc_kernel_error(k));
        } else {
          TC_CHECK(st == TC_OK, "%s does not build for %s: %s", want[i], arches[a],
                   tc_kernel_error(k));
        }
      }
      tc_kernel_free(k);
      tc_fusion_free(f);
    }
  }
}

/* tc_schedule_auto picks MFMA for HIP's f16 / bf16 matmuls where a
 * 16 x 16 tile fits (32x32x8 where a 32 x 32 one does), FMA otherwise,
 * saying why in the note; the chosen kernels run right (scheduled for
 * HIP, compiled for OpenCL: the schedule is the same) and build with
 * hipcc. */
static void test_auto(void) {
  static const struct { int64_t m, n, k; tc_dtype t; tc_target target; int red; const char *note; } cs[] = {
      {67, 97, 33, TC_F16, TC_TARGET_HIP, 0, "64x64 tiles on BIDy x BIDx, 4 wavefronts (TIDy) of 64 lanes (TIDx) with 32x32 tiles each as MFMA 32x32x8 (f16"},
      {40, 31, 9, TC_BF16, TC_TARGET_HIP, 0, "32x16 tiles on BIDy x BIDx, 2 wavefronts (TIDy) of 64 lanes (TIDx) with 16x16 tiles each as MFMA 16x16x16 (bf16"},
      {8, 100, 16, TC_F16, TC_TARGET_HIP, 0, "(FMA outer products)" /* then */},
      {64, 64, 16, TC_F32, TC_TARGET_HIP, 0, "FMA, not MFMA: MFMA takes f16 or bf16 operands"},
      {64, 64, 16, TC_F16, TC_TARGET_HIP, 1, "FMA, not MFMA: the MFMA op type takes no reduction of the result"},
      /* CUDA's 16-bit operands get mma.sync, never MFMA */
      {64, 64, 16, TC_F16, TC_TARGET_CUDA, 0, "as mma.sync m16n8k16 (f16"},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    tc_fusion *f = tc_fusion_new();
    int64_t sa[2] = {cs[i].m, cs[i].k}, sb[2] = {cs[i].k, cs[i].n};
    tc_tensor *a = tc_input(f, cs[i].t, 2, sa), *b = tc_input(f, cs[i].t, 2, sb);
    tc_tensor *y = tc_matmul(f, a, b);
    OK(f, tc_add_output(f, y));
    int last = -1;
    if (cs[i].red) OK(f, tc_add_output(f, tc_reduce(f, TC_REDUCE_SUM, y, 1, &last)));
    OK(f, tc_schedule_auto(f, cs[i].target, NULL));
    const char *note = tc_fusion_schedule_note(f);
    TC_CHECK(strstr(note, cs[i].note) != NULL, "%lldx%lld: note %s", (long long)cs[i].m,
             (long long)cs[i].n, note);
    if (i == 2)
      TC_CHECK(strstr(note, "FMA, not MFMA: the result is smaller than one 16 x 16 MFMA tile"),
               "%s", note);
    if (cs[i].target == TC_TARGET_CUDA) TC_CHECK(strstr(note, "MFMA") == NULL, "%s", note);
    tc_fusion_free(f);
  }
  /* the scheduler's MFMA kernels run right (PoCL) */
  static const mcase runs[] = {
      {67, 97, 33, TC_F16, 1, {0}}, {40, 31, 9, TC_BF16, 0, {0}}, {128, 16, 64, TC_BF16, 1, {0}}};
  for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) run_case_fault(&runs[i], 0, "mfma_auto");
  /* and the HIP kernel builds */
  tc_fusion *f = tc_fusion_new();
  mcase c = {67, 97, 33, TC_BF16, 1, {0}};
  tc_tensor *a, *b, *bias;
  OK(f, tc_add_output(f, build(f, &c, &a, &b, &bias)));
  OK(f, tc_schedule_auto(f, TC_TARGET_HIP, NULL));
  tc_compile_options o = {TC_TARGET_HIP, NULL, "mm"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_CHECK(k && strstr(tc_kernel_source(k), "__builtin_amdgcn_mfma_f32_32x32x8bf16_1k("), "%s",
           k ? tc_kernel_source(k) : tc_fusion_error(f));
  if (k) {
    st = tc_kernel_build(k, NULL);
    if (st == TC_ERR_UNSUPPORTED) printf("  skip hipcc build: %s\n", tc_kernel_error(k));
    else TC_CHECK(st == TC_OK, "does not build: %s", tc_kernel_error(k));
  }
  tc_kernel_free(k);
  tc_fusion_free(f);
}

int main(void) {
  TC_RUN(test_refusals);
  TC_RUN(test_one_tile);
  TC_RUN(test_shapes);
  TC_RUN(test_faults);
  TC_RUN(test_arch);
  TC_RUN(test_hip_build);
  TC_RUN(test_auto);
  TC_MAIN_END();
}
