/* test_ldst.c - ldmatrix.x4 / stmatrix.x4 lowering (src/lower/ldst.c) and
 * printing (src/codegen/ldst_*.c):
 *
 *   1. Seed 000's LdStMatrixSet (tests/test_ldmatrix_index.c builds the
 *      same fusion and checks its indices) with the real instruction types
 *      lowers each ldmatrix / stmatrix statement to one instruction per
 *      Vectorize(8) vector: the CUDA source holds exactly one
 *      ldmatrix.sync.aligned.m8n8.x4.shared.b16 and one stmatrix, and no
 *      element copy for them; the OpenCL source the emulation.
 *   2. The shmoo: bulk-copy swizzle 32B / 64B / 128B x cta_m 64 / 128 x
 *      cta_n 256 / 512 (12 variants), each run on PoCL (one CTA tile, two
 *      along N) with output == input, and built with NVRTC for sm_90a
 *      (skipped where NVRTC is missing).  For CUDA sm_90a the bulk tensor
 *      copies are real (src/lower/tma.c: cp.async.bulk.tensor.2d with an
 *      mbarrier for the load, a bulk group for the store, one CUtensorMap
 *      parameter per global tensor, which the CUDA runtime encodes:
 *      tests/test_tmap.c checks the maps); on PoCL they are element
 *      copies, which move the same elements.
 *   3. The errors: a register side that is not an m8n8 fragment, a vector
 *      of 4, TIDx not a multiple of 32, 32-bit elements, the wrong memory
 *      types, stmatrix below sm_90, HIP; a bulk copy bound to TIDx.
 * TILEC_TEST_VERBOSE=1 prints the seed's CUDA and OpenCL sources. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldst_test_util.h"
#include "test.h"
#include "tilec/tilec.h"

static int verbose(void) {
  const char *v = getenv("TILEC_TEST_VERBOSE");
  return v && *v && strcmp(v, "0") != 0;
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
  return n;
}

/* Runs f (bf16 M x N copy) on PoCL; 1 passed, 0 failed, -1 no device. */
static int run_copy(tc_fusion *f, int64_t M, int64_t N, const char *label, const char *must) {
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "ldst"};
  tc_status st = TC_OK;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_CHECK(k != NULL, "%s: OpenCL compile: %s", label, tc_fusion_error(f));
  if (!k) return 0;
  if (must)
    TC_CHECK(strstr(tc_kernel_source(k), must) != NULL, "%s: OpenCL source lacks %s", label, must);
  uint16_t *in = malloc((size_t)(M * N) * 2), *out = malloc((size_t)(M * N) * 2);
  uint32_t x = 777u;
  for (int64_t e = 0; e < M * N; e++) {
    x = x * 1664525u + 1013904223u;
    in[e] = (uint16_t)((x >> 16) & 0x7f7f);
    out[e] = 0xffff;
  }
  void *args[2] = {in, out};
  st = tc_kernel_run(k, args, NULL, NULL);
  int r = -1;
  if (st != TC_ERR_NO_DEVICE) {
    TC_CHECK(st == TC_OK, "%s: run: %s", label, tc_kernel_error(k));
    int64_t bad = 0, first = -1;
    for (int64_t e = 0; e < M * N; e++)
      if (in[e] != out[e] && bad++ == 0) first = e;
    TC_CHECK(bad == 0, "%s: %lld of %lld elements differ, the first at (%lld, %lld)", label,
             (long long)bad, (long long)(M * N), (long long)(first / N), (long long)(first % N));
    r = st == TC_OK && bad == 0;
  }
  free(in), free(out);
  tc_kernel_free(k);
  return r;
}

/* CUDA for sm_90a: the source has one ldmatrix.x4 and one stmatrix.x4;
 * built with NVRTC.  Returns a skip reason (NVRTC missing) or NULL. */
static const char *cuda_build(tc_fusion *f, const char *label, char *why, size_t cap) {
  tc_compile_options o = {TC_TARGET_CUDA, "sm_90a", "ldst"};
  tc_status st = TC_OK;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_CHECK(k != NULL, "%s: CUDA compile: %s", label, tc_fusion_error(f));
  if (!k) return NULL;
  const char *src = tc_kernel_source(k);
  TC_CHECK_EQ_INT(count(src, "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"), 1);
  TC_CHECK_EQ_INT(count(src, "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"), 1);
  /* the bulk copies: one load (mbarrier) and one store (bulk group) */
  TC_CHECK_EQ_INT(count(src, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"), 1);
  TC_CHECK_EQ_INT(count(src, "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"), 1);
  TC_CHECK_EQ_INT(count(src, "const __grid_constant__ tc_tmap tc_tmap_T"), 2);
  TC_CHECK(strstr(src, "mbarrier.try_wait.parity") && strstr(src, "fence.proxy.async.shared::cta"),
           "%s: no mbarrier wait or proxy fence", label);
  if (verbose()) printf("---- %s (CUDA) ----\n%s\n", label, src);
  const char *skip = NULL;
  st = tc_kernel_build(k, NULL);
  if (st == TC_ERR_UNSUPPORTED || st == TC_ERR_NO_DEVICE) {
    snprintf(why, cap, "%s", tc_kernel_error(k));
    skip = why;
  } else {
    TC_CHECK(st == TC_OK, "%s: NVRTC for sm_90a failed (%s):\n%s", label, tc_status_name(st),
             tc_kernel_error(k));
  }
  /* its tensor maps and a launch of it: tests/test_tmap.c */
  tc_kernel_free(k);
  return skip;
}

/* ---- 1. the seed ---------------------------------------------------------- */

static void test_seed_sources(void) {
  seed s = build(TC_TMA_SWIZZLE_128B, 128, 256, 256, 512);
  TC_REQUIRE(tc_test_failed_checks == 0, "building the fusion failed");
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "ldst_matrix_set"};
  tc_status st = TC_OK;
  tc_kernel *k = tc_compile(s.f, &o, &st);
  TC_REQUIRE(k != NULL, "compile: %s", tc_fusion_error(s.f));
  const char *src = tc_kernel_source(k);
  if (verbose()) printf("---- seed 000 (OpenCL) ----\n%s\n", src);
  TC_CHECK(count(src, "tc_ldsm_ld(T") == 1 && count(src, "tc_ldsm_st(T") == 1,
           "the OpenCL source does not emulate one ldmatrix and one stmatrix:\n%s", src);
  TC_CHECK(strstr(src, "__local int tc_ldsm_rows[256];") != NULL, "no scratch for 256 threads");
  tc_kernel_free(k);
  char why[512];
  cuda_build(s.f, "seed 000", why, sizeof why);
  tc_fusion_free(s.f);
}

static void test_seed_run_pocl(void) {
  seed s = build(TC_TMA_SWIZZLE_128B, 128, 256, 256, 512);
  TC_REQUIRE(tc_test_failed_checks == 0, "building the fusion failed");
  int r = run_copy(s.f, 256, 512, "seed 000 at 256x512", "tc_ldsm_ld(");
  tc_fusion_free(s.f);
  if (r < 0) TC_SKIP("no OpenCL device");
}

/* Each instruction alone, the other side an element copy: a round trip
 * through both could hide a permutation that one applies and the other
 * undoes; alone, the registers must hold what the element copy expects. */
static void test_each_alone(void) {
  int skipped = 0;
  for (int which = 0; which < 2; which++) {
    seed s = build2(TC_TMA_SWIZZLE_128B, 128, 256, 128, 512,
                    which == 0 ? TC_LDST_LDMATRIX : TC_LDST_DEFAULT,
                    which == 0 ? TC_LDST_DEFAULT : TC_LDST_STMATRIX);
    TC_REQUIRE(tc_test_failed_checks == 0, "building the fusion failed");
    int r = run_copy(s.f, 128, 512, which == 0 ? "ldmatrix alone" : "stmatrix alone",
                     which == 0 ? "tc_ldsm_ld(" : "tc_ldsm_st(");
    skipped |= r < 0;
    tc_fusion_free(s.f);
  }
  if (skipped) TC_SKIP("no OpenCL device");
}

/* ---- 2. the shmoo --------------------------------------------------------- */

static void test_shmoo(void) {
  static const tc_tma_swizzle sws[3] = {TC_TMA_SWIZZLE_32B, TC_TMA_SWIZZLE_64B, TC_TMA_SWIZZLE_128B};
  int ran = 0, built = 0;
  char why[512] = "";
  const char *skip = NULL;
  for (int a = 0; a < 3; a++)
    for (int64_t cta_m = 64; cta_m <= 128; cta_m *= 2)
      for (int64_t cta_n = 256; cta_n <= 512; cta_n *= 2) {
        char label[96];
        snprintf(label, sizeof label, "swizzle %dB, cta %lldx%lld", (int)sws[a], (long long)cta_m,
                 (long long)cta_n);
        int failed = tc_test_failed_checks;
        seed s = build(sws[a], cta_m, cta_n, cta_m, 2 * cta_n);
        if (tc_test_failed_checks != failed) {
          tc_fusion_free(s.f);
          continue;
        }
        if (run_copy(s.f, cta_m, 2 * cta_n, label, "tc_ldsm_st(") >= 0) ran++;
        const char *sk = skip ? skip : cuda_build(s.f, label, why, sizeof why);
        if (!sk) built++;
        skip = sk;
        tc_fusion_free(s.f);
      }
  if (verbose()) printf("shmoo: %d of 12 ran on PoCL, %d built with NVRTC\n", ran, built);
  if (ran == 0 || skip)
    TC_SKIP("%s%s%s", ran == 0 ? "no OpenCL device" : "", ran == 0 && skip ? "; " : "",
            skip ? why : "");
}

/* ---- 3. errors ------------------------------------------------------------ */

/* in [rows, cols] (dtype) -> smem (shared) -> reg (ldst) -> out, every
 * tensor [rows TIDx, (cols / vec) serial, vec Vectorize]. */
static tc_fusion *simple(tc_dtype dt, int64_t rows, int64_t cols, int64_t vec, tc_ldst_type ldst,
                         int ldst_on_smem) {
  tc_fusion *f = tc_fusion_new();
  tc_tensor *in = tc_input(f, dt, 2, (int64_t[]){rows, cols});
  tc_tensor *out = tc_set(f, in);
  OK(f, tc_add_output(f, out));
  tc_tensor *sm = tc_cache_after(in);
  OK(f, tc_set_memory_type(sm, TC_MEM_SHARED));
  tc_tensor *reg = tc_cache_after(sm);
  OK(f, tc_set_ldst_type(ldst_on_smem ? sm : reg, ldst));
  OK(f, tc_split(out, 1, vec, 1));
  OK(f, tc_propagate_transforms(out));
  OK(f, tc_parallelize(out, 0, TC_TIDX));
  OK(f, tc_parallelize(out, 2, TC_VECTORIZE));
  OK(f, tc_parallelize_all_like(out));
  return f;
}

static void expect_error(tc_fusion *f, tc_target target, const char *arch, tc_status want,
                         const char *needle, const char *label) {
  tc_compile_options o = {target, arch, "ldst_err"};
  tc_status st = TC_OK;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_CHECK(k == NULL && st == want && strstr(tc_fusion_error(f), needle) != NULL,
           "%s: expected %s with \"%s\", got %s: %s", label, tc_status_name(want), needle,
           tc_status_name(st), k ? "(compiled)" : tc_fusion_error(f));
  if (verbose() && !k) printf("%s: %s\n", label, tc_fusion_error(f));
  tc_kernel_free(k);
  tc_fusion_free(f);
}

static void test_errors(void) {
  expect_error(simple(TC_BF16, 64, 8, 8, TC_LDST_LDMATRIX, 0), TC_TARGET_OPENCL, NULL,
               TC_ERR_LOWER, "are not an m8n8.x4 fragment", "row-major registers");
  expect_error(simple(TC_BF16, 64, 8, 4, TC_LDST_LDMATRIX, 0), TC_TARGET_OPENCL, NULL,
               TC_ERR_SCHEDULE, "Vectorize axis of 8 elements", "vector of 4");
  expect_error(simple(TC_BF16, 48, 8, 8, TC_LDST_LDMATRIX, 0), TC_TARGET_OPENCL, NULL,
               TC_ERR_SCHEDULE, "TIDx extent 48 is not a multiple of 32", "TIDx 48");
  expect_error(simple(TC_F32, 64, 8, 4, TC_LDST_LDMATRIX, 0), TC_TARGET_OPENCL, NULL,
               TC_ERR_SCHEDULE, "moves 16-bit elements", "f32");
  expect_error(simple(TC_BF16, 64, 8, 8, TC_LDST_LDMATRIX, 1), TC_TARGET_OPENCL, NULL,
               TC_ERR_SCHEDULE, "copies shared memory to registers", "global -> shared");
  expect_error(simple(TC_BF16, 64, 8, 8, TC_LDST_STMATRIX, 0), TC_TARGET_OPENCL, NULL,
               TC_ERR_SCHEDULE, "copies registers (local memory) to shared memory",
               "stmatrix shared -> registers");
  seed s = build(TC_TMA_SWIZZLE_128B, 128, 256, 256, 512);
  expect_error(s.f, TC_TARGET_CUDA, NULL, TC_ERR_UNSUPPORTED, "needs arch sm_90 or later",
               "stmatrix on sm_80");
  /* a bulk copy whose loops are bound to TIDx (sm_90: bulk copies are real) */
  expect_error(simple(TC_BF16, 64, 8, 8, TC_LDST_BULK_TENSOR, 1), TC_TARGET_CUDA, "sm_90a",
               TC_ERR_SCHEDULE, "depends on TIDx", "bulk copy over TIDx");
  s = build(TC_TMA_SWIZZLE_128B, 128, 256, 256, 512);
  expect_error(s.f, TC_TARGET_HIP, "gfx942", TC_ERR_UNSUPPORTED, "has no ldmatrix", "HIP");
}

int main(void) {
  TC_RUN(test_seed_sources);
  TC_RUN(test_seed_run_pocl);
  TC_RUN(test_each_alone);
  TC_RUN(test_shmoo);
  TC_RUN(test_errors);
  TC_MAIN_END();
}
