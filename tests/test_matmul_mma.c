/* test_matmul_mma.c - the matmul whose products are mma.sync m16n8k16
 * (tc_matmul_tiles.macro = TC_MACRO_MMA_M16N8K16): f16 and bf16 operands,
 * with and without a fused epilogue (bias, ReLU), several warp tilings,
 * run on OpenCL (PoCL, through the emulation of the instruction, whose
 * lane layouts are written independently of the lowering's) against a
 * plain C loop, with the fragments loaded by ldmatrix and by scalar
 * loads; the CUDA kernel holds the instruction and builds with
 * NVRTC for sm_80; edges the tiles do not fill (zeros in the fragments);
 * the refusals (f32 operands, HIP, CUDA before sm_80, tiles that are not
 * multiples of the macro). */
#include "base/test_hooks.h"
#include "matmul_frag_test_util.h"

/* Runs the case on OpenCL against the plain C loop and returns the
 * mismatches (up to 4; -1: not run); they are failures unless
 * fault_wanted, the injected fault (test_faults) that must show. */
static int run_case_fault(const mcase *c, int fault_wanted, const char *name);

static void run_case(const mcase *c) { run_case_fault(c, 0, "mm"); }

/* name: the kernel's, so that a kernel made under a test hook has its own
 * cache key */
static int run_case_fault(const mcase *c, int fault_wanted, const char *name) {
  char desc[160];
  frag_desc(c, desc, sizeof desc);
  tc_fusion *f;
  tc_kernel *k = frag_cl_kernel(c, name, "mma.sync m16n8k16", desc, &f);
  if (!k) {
    tc_fusion_free(f);
    return -1;
  }
  /* one emulated instruction per 16 x 8 tile, no scalar products */
  const char *src = tc_kernel_source(k);
  TC_CHECK(strstr(src, "tc_mma_emu(") != NULL, "%s: no mma in\n%s", desc, src);
  /* the fragments by ldmatrix (the tiles' rows are contiguous K / N), or
   * by scalar loads under the hook or where an extent of 1 makes a tile
   * one element read by every lane */
  bool scalar = tc_test_hooks_get()->mma_scalar_fragments || c->m == 1 || c->n == 1 || c->k == 1;
  if (!fault_wanted)
    TC_CHECK((strstr(src, "ldmatrix.x4 */") != NULL) == !scalar, "%s: %s ldmatrix", desc,
             scalar ? "with" : "without");
  int bad = frag_run(k, c, fault_wanted, desc);
  tc_kernel_free(k);
  tc_fusion_free(f);
  return bad;
}

#define MMA(bm, bn, bk, tm, tn) {bm, bn, bk, tm, tn, TC_MACRO_MMA_M16N8K16}

/* One warp of one 16 x 8 tile, the smallest kernel: each lane's four
 * accumulators land at the PTX ISA's (row, column) or the plain C loop
 * disagrees. */
static void test_one_tile(void) {
  mcase c = {16, 8, 16, TC_F16, 0, MMA(16, 8, 16, 16, 8)};
  run_case(&c);
  c.t = TC_BF16;
  run_case(&c);
}

/* Several warps, several 16 x 8 tiles per warp, several K tiles and K
 * steps, more than one block; f16 and bf16, with and without the
 * epilogue.  Then edges the tiles do not fill: the fragment loads past
 * M, N or K give 0 (the instruction itself is never predicated; a K tile
 * past K still holds the previous tile's values in shared memory), and
 * the store skips the rows and columns past the result; extents of 1 and
 * primes. */
static void test_shapes(void) {
  static const mcase cs[] = {
      {64, 64, 64, TC_F16, 0, MMA(32, 32, 32, 16, 16)},
      {64, 64, 64, TC_BF16, 1, MMA(32, 32, 32, 16, 16)},
      {32, 48, 48, TC_F16, 1, MMA(32, 16, 16, 32, 8)},
      {128, 64, 32, TC_BF16, 0, MMA(64, 32, 32, 32, 16)},
      {96, 40, 80, TC_F16, 1, MMA(32, 8, 16, 16, 8)},
      /* edges */
      {1, 1, 1, TC_F16, 0, MMA(16, 8, 16, 16, 8)},
      {33, 20, 24, TC_BF16, 1, MMA(32, 16, 16, 16, 8)},
      {67, 97, 131, TC_F16, 1, MMA(32, 32, 32, 16, 16)},
      {5, 130, 17, TC_BF16, 0, MMA(16, 64, 16, 16, 32)},
      {100, 3, 40, TC_F16, 1, MMA(64, 8, 32, 32, 8)},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) run_case(&cs[i]);
}

static void test_refusals(void) {
  tc_matmul_tiles tl = MMA(32, 32, 16, 16, 8);
  expect_refusal(TC_F32, 32, 32, 16, tl, TC_TARGET_OPENCL, "multiplies f16 or bf16 operands, not f32");
  expect_refusal(TC_F16, 32, 32, 16, tl, TC_TARGET_HIP, "mma.sync m16n8k16 is an NVIDIA instruction");
  tc_matmul_tiles odd = MMA(32, 24, 16, 16, 12);
  expect_refusal(TC_F16, 32, 24, 16, odd, TC_TARGET_OPENCL, "multiple of 16 x 8");
  tc_matmul_tiles bad = tl;
  bad.macro = 7;
  expect_refusal(TC_F16, 32, 32, 16, bad, TC_TARGET_OPENCL, "unknown macro 7");
}

/* The scalar 16-bit fragment loads (the form for shared layouts that
 * ldmatrix cannot read) on the same shapes, edges included. */
static void test_scalar_fragments(void) {
  static const mcase cs[] = {
      {64, 64, 64, TC_BF16, 1, MMA(32, 32, 32, 16, 16)},
      {67, 97, 131, TC_F16, 1, MMA(32, 32, 32, 16, 16)},
      {5, 130, 17, TC_BF16, 0, MMA(16, 64, 16, 16, 32)},
  };
  tc_test_hooks h = {0};
  h.mma_scalar_fragments = 1;
  tc_test_hooks_set(&h);
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) run_case_fault(&cs[i], 0, "mma_scalar");
  tc_test_hooks_set(NULL);
}

/* Each wrong layout injected into the lowering (A registers 1 and 2
 * swapped, B register halves swapped, a lane's accumulator columns
 * swapped) gives wrong results on the OpenCL emulation, whose layouts are
 * its own: the right results above are not an accident of symmetric
 * data or of two wrongs cancelling. */
static void test_faults(void) {
  mcase c = {32, 16, 32, TC_F16, 0, MMA(32, 16, 32, 16, 8)};
  for (int fault = 1; fault <= 3; fault++) {
    tc_test_hooks h = {0};
    h.mma_lower_fault = fault;
    tc_test_hooks_set(&h);
    char name[32];
    snprintf(name, sizeof name, "mma_fault%d", fault); /* its own cache key */
    int bad = run_case_fault(&c, fault, name);
    tc_test_hooks_set(NULL);
    TC_CHECK(bad != 0, "fault %d: the results still match the plain C loop", fault); /* -1: no device */
  }
}

/* B given transposed, [N, K] (K innermost in memory): the B tile is
 * staged [N, K] too, its copies run along K (16-byte cp.async in a ring)
 * and the fragment comes by ldmatrix.x2 without .trans.  Run on OpenCL
 * against the plain C loop (one buffer and a ring of 3, edges included),
 * and the CUDA kernel holds those instructions and builds (cp.async where
 * K keeps the rows 16-byte aligned). */
static void test_b_k_inner(void) {
  static const int64_t shapes[][3] = {{64, 64, 64}, {67, 97, 131}};
  for (int si = 0; si < 2; si++)
    for (int stages = 1; stages <= 3; stages += 2) {
      int64_t m = shapes[si][0], n = shapes[si][1], kk = shapes[si][2];
      char desc[96];
      snprintf(desc, sizeof desc, "B [N, K] %lldx%lldx%lld, %d stage%s", (long long)m, (long long)n,
               (long long)kk, stages, stages > 1 ? "s" : "");
      tc_kernel *ks[2] = {NULL, NULL};
      for (int cuda = 0; cuda < 2; cuda++) {
        tc_fusion *f = tc_fusion_new();
        int64_t sa[2] = {m, kk}, sbt[2] = {n, kk};
        int perm[2] = {1, 0};
        tc_tensor *a = tc_input(f, TC_F16, 2, sa), *bt = tc_input(f, TC_F16, 2, sbt);
        OK(f, tc_add_output(f, tc_matmul(f, a, tc_permute(f, bt, perm))));
        tc_matmul_tiles tl = {32, 32, 32, 16, 16, TC_MACRO_MMA_M16N8K16, stages};
        OK(f, tc_schedule_matmul(f, cuda ? TC_TARGET_CUDA : TC_TARGET_OPENCL, cuda ? "sm_80" : NULL, &tl));
        tc_compile_options o = {cuda ? TC_TARGET_CUDA : TC_TARGET_OPENCL, cuda ? "sm_80" : NULL, "mma_bt"};
        tc_status st;
        ks[cuda] = tc_compile(f, &o, &st);
        TC_CHECK(ks[cuda] != NULL, "%s: %s", desc, tc_fusion_error(f));
        tc_fusion_free(f);
      }
      if (ks[1]) {
        const char *src = tc_kernel_source(ks[1]);
        TC_CHECK(strstr(src, "B fragment: ldmatrix.x2 */") && strstr(src, "ldmatrix.sync.aligned.m8n8.x2.shared.b16"),
                 "%s: B not by ldmatrix.x2 without .trans", desc);
        /* (K 131: rows of 131 elements are not 16-byte aligned, A's copies plain too) */
        TC_CHECK(stages == 1 || kk % 8 || strstr(src, "tc_cpa16(&T4["), "%s: B's ring copies are not 16-byte cp.async", desc);
        tc_status st = tc_kernel_build(ks[1], NULL);
        if (st != TC_ERR_UNSUPPORTED) TC_CHECK(st == TC_OK, "%s: build: %s", desc, tc_kernel_error(ks[1]));
      }
      if (ks[0]) {
        double *va = malloc((size_t)(m * kk) * sizeof(double)), *vbt = malloc((size_t)(n * kk) * sizeof(double));
        double *vb = malloc((size_t)(kk * n) * sizeof(double));
        uint16_t *ha = values(TC_F16, m * kk, va), *hbt = values(TC_F16, n * kk, vbt);
        for (int64_t q = 0; q < kk; q++)
          for (int64_t j = 0; j < n; j++) vb[q * n + j] = vbt[j * kk + q];
        float *out = malloc((size_t)(m * n) * sizeof(float));
        memset(out, 0xff, (size_t)(m * n) * sizeof(float));
        void *args[3] = {ha, hbt, out};
        tc_status st = tc_kernel_run(ks[0], args, NULL, NULL);
        if (st != TC_ERR_NO_DEVICE) {
          TC_CHECK(st == TC_OK, "%s: %s", desc, tc_kernel_error(ks[0]));
          matmul_mismatches(desc, out, va, vb, NULL, m, n, kk, 0);
        }
        free(va), free(vbt), free(vb), free(ha), free(hbt), free(out);
      }
      tc_kernel_free(ks[0]), tc_kernel_free(ks[1]);
    }
}

/* CUDA before sm_80 has no mma.sync m16n8k16 for f16/bf16: refused when
 * compiling, with the arch. */
static void test_arch(void) {
  mcase c = {32, 32, 16, TC_F16, 0, MMA(32, 32, 16, 16, 8)};
  tc_fusion *f;
  tc_kernel *k = frag_kernel(&c, TC_TARGET_CUDA, "sm_75", &f);
  TC_CHECK(k == NULL, "compiled for sm_75");
  TC_CHECK(strstr(tc_fusion_error(f), "needs arch sm_80 or later, but the arch is sm_75") != NULL,
           "%s", tc_fusion_error(f));
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* The CUDA kernel calls the instruction (no emulation) and builds with
 * NVRTC for sm_80, f16 on whole tiles and bf16 with edges (no GPU needed;
 * skipped where NVRTC cannot be loaded). */
static void test_cuda_build(void) {
  for (int dt = 0; dt < 2; dt++) {
    mcase c = {64, 64, 32, TC_F16, 1, MMA(32, 32, 16, 16, 16)};
    if (dt) c = (mcase){67, 97, 33, TC_BF16, 1, MMA(32, 32, 16, 16, 16)}; /* edges */
    tc_fusion *f;
    tc_kernel *k = frag_kernel(&c, TC_TARGET_CUDA, "sm_80", &f);
    TC_CHECK(k != NULL, "%s", tc_fusion_error(f));
    if (k) {
      const char *src = tc_kernel_source(k);
      TC_CHECK(strstr(src, dt ? "tc_mma_bf16(" : "tc_mma_f16(") != NULL, "no call in\n%s", src);
      TC_CHECK(strstr(src, "mma.sync.aligned.m16n8k16.row.col.f32") != NULL, "no instruction");
      TC_CHECK(strstr(src, "tc_mma_emu") == NULL, "the emulation in a CUDA kernel");
      TC_CHECK(strstr(src, "ldmatrix.sync.aligned.m8n8.x4.shared.b16") != NULL &&
                   strstr(src, "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16") != NULL,
               "the fragments are not loaded by ldmatrix");
      tc_status st = tc_kernel_build(k, NULL);
      if (st == TC_ERR_UNSUPPORTED) {
        printf("  skip NVRTC build: %s\n", tc_kernel_error(k));
      } else {
        TC_CHECK(st == TC_OK, "does not build: %s", tc_kernel_error(k));
      }
    }
    tc_kernel_free(k);
    tc_fusion_free(f);
  }
}

int main(void) {
  TC_RUN(test_refusals);
  TC_RUN(test_one_tile);
  TC_RUN(test_shapes);
  TC_RUN(test_scalar_fragments);
  TC_RUN(test_faults);
  TC_RUN(test_arch);
  TC_RUN(test_cuda_build);
  TC_RUN(test_b_k_inner);
  TC_MAIN_END();
}
