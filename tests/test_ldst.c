/* test_ldst.c - ldmatrix / stmatrix lowering (src/lower/ldst.c) and
 * printing (src/codegen/ldst_*.c):
 *
 *   1. LdStMatrixSet, the copy of nvFuser's ldmatrix/stmatrix tutorial
 *      (tests/test_ldmatrix_index.c builds the
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
 *   3. The 12 instruction variants - ldmatrix / stmatrix x .x1 / .x2 / .x4
 *      x plain / .trans - each in a copy through registers whose other side
 *      is an element copy (Vectorize(2, 4, 8) choosing the .x<n>, the
 *      _TRANS types .trans, the register side scheduled as that fragment):
 *      the OpenCL source calls the emulation with that variant and the run
 *      on PoCL gives output == input; the CUDA source for sm_90a holds the
 *      variant's instruction text exactly once with its register count, and
 *      NVRTC compiles it.  Injected faults (base/test_hooks.h's ldsm_fault:
 *      the other transposition's row addresses, the rows reversed) make
 *      every variant's PoCL run wrong, so the runs do see the addresses.
 *   4. The fragment layout, unit-tested for every (lane, register, element)
 *      against the PTX ISA's statement of it (written out here): the
 *      lowering's rule (tc_ldsm_fragment) and the OpenCL emulation
 *      (tc_ldsm_ld / tc_ldsm_st of the dialect's prelude, run on PoCL with
 *      scattered row addresses; the addresses of lanes 8n and up must be
 *      ignored and nothing but the fragment written).
 *   5. The errors: a register side that is not an m8n8 fragment (with the
 *      hint when the other transposition is), a vector of 16, TIDx not a
 *      multiple of 32, 32-bit elements, the wrong memory types, stmatrix
 *      (.trans too) below sm_90, HIP; a bulk copy bound to TIDx.
 * TILEC_TEST_VERBOSE=1 prints LdStMatrixSet's CUDA and OpenCL sources. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/dialect.h"
#include "ldst_test_util.h"
#include "lower/ldst.h"
#include "runtime/runtime.h"
#include "test.h"
#include "tilec/tilec.h"
#include "base/test_hooks.h"

static int verbose(void) {
  const char *v = getenv("TILEC_TEST_VERBOSE");
  return v && *v && strcmp(v, "0") != 0;
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
  return n;
}

/* Runs f (bf16 M x N copy) on PoCL under kernel name `name`; -1 without
 * a device, else the number of output elements that differ from the input
 * (*first: the first of them). */
static int64_t run_count(tc_fusion *f, int64_t M, int64_t N, const char *name, const char *label,
                         const char *must, int64_t *first) {
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, name};
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
  int64_t bad = -1;
  *first = -1;
  if (st != TC_ERR_NO_DEVICE) {
    TC_CHECK(st == TC_OK, "%s: run: %s", label, tc_kernel_error(k));
    bad = 0;
    for (int64_t e = 0; e < M * N; e++)
      if (in[e] != out[e] && bad++ == 0) *first = e;
  }
  free(in), free(out);
  tc_kernel_free(k);
  return bad;
}

/* Runs f (bf16 M x N copy) on PoCL; 1 passed, 0 failed, -1 no device. */
static int run_copy(tc_fusion *f, int64_t M, int64_t N, const char *label, const char *must) {
  int64_t first, bad = run_count(f, M, N, "ldst", label, must, &first);
  if (bad < 0) return -1;
  TC_CHECK(bad == 0, "%s: %lld of %lld elements differ, the first at (%lld, %lld)", label,
           (long long)bad, (long long)(M * N), (long long)(first / N), (long long)(first % N));
  return bad == 0;
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
  /* nothing reads the output back: the store waits only for its reads */
  TC_CHECK_EQ_INT(count(src, "cp.async.bulk.wait_group.read 0;"), 1);
  TC_CHECK_EQ_INT(count(src, "cp.async.bulk.wait_group 0;"), 0);
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

/* ---- 1. LdStMatrixSet ----------------------------------------------------- */

static void test_ldst_set_sources(void) {
  ldst_set s = build(TC_TMA_SWIZZLE_128B, 128, 256, 256, 512);
  TC_REQUIRE(tc_test_failed_checks == 0, "building the fusion failed");
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "ldst_matrix_set"};
  tc_status st = TC_OK;
  tc_kernel *k = tc_compile(s.f, &o, &st);
  TC_REQUIRE(k != NULL, "compile: %s", tc_fusion_error(s.f));
  const char *src = tc_kernel_source(k);
  if (verbose()) printf("---- LdStMatrixSet (OpenCL) ----\n%s\n", src);
  TC_CHECK(count(src, "tc_ldsm_ld(T") == 1 && count(src, "tc_ldsm_st(T") == 1,
           "the OpenCL source does not emulate one ldmatrix and one stmatrix:\n%s", src);
  TC_CHECK(strstr(src, "__local int tc_ldsm_rows[256];") != NULL, "no scratch for 256 threads");
  tc_kernel_free(k);
  char why[512];
  cuda_build(s.f, "LdStMatrixSet", why, sizeof why);
  tc_fusion_free(s.f);
}

static void test_ldst_set_run_pocl(void) {
  ldst_set s = build(TC_TMA_SWIZZLE_128B, 128, 256, 256, 512);
  TC_REQUIRE(tc_test_failed_checks == 0, "building the fusion failed");
  int r = run_copy(s.f, 256, 512, "LdStMatrixSet at 256x512", "tc_ldsm_ld(");
  tc_fusion_free(s.f);
  if (r < 0) TC_SKIP("no OpenCL device");
}

/* Each instruction alone, the other side an element copy: a round trip
 * through both could hide a permutation that one applies and the other
 * undoes; alone, the registers must hold what the element copy expects. */
static void test_each_alone(void) {
  int skipped = 0;
  for (int which = 0; which < 2; which++) {
    ldst_set s = build2(TC_TMA_SWIZZLE_128B, 128, 256, 128, 512,
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
        ldst_set s = build(sws[a], cta_m, cta_n, cta_m, 2 * cta_n);
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

/* ---- 3. the 12 variants --------------------------------------------------- */

/* A bf16 [16, 16 num] copy through registers: in -> sm (shared) -> reg
 * (local) -> out for ldmatrix (ld), in -> reg -> sm -> out for stmatrix,
 * the instruction's type on the shared<->register copy (_TRANS when
 * type_trans), every other copy an element copy.  Every tensor has the
 * loop domain [C / (8 num) (2, serial), TIDx (64: two warps),
 * Vectorize(2 num)] over tiles of 8 rows x 8 num columns: num 8x8 matrices
 * side by side, warp w holding rows 8w..8w+7.  The register side is the
 * m8n8 fragment (lane l, element v = 2j + h holds matrix j's row l/4,
 * column 2(l%4) + h), or with sched_trans the .trans fragment (column l/4,
 * row 2(l%4) + h).  sm keeps the row-major (logical) layout. */
static tc_fusion *matrix_copy(int ld, int num, int sched_trans, int type_trans) {
  tc_fusion *f = tc_fusion_new();
  int64_t R = 16, C = 16 * num;
  tc_tensor *in = tc_input(f, TC_BF16, 2, (int64_t[]){R, C});
  tc_tensor *out = tc_set(f, in);
  OK(f, tc_add_output(f, out));
  tc_tensor *first = tc_cache_after(in), *second = tc_cache_after(first);
  tc_tensor *sm = ld ? first : second, *reg = ld ? second : first;
  OK(f, tc_set_memory_type(sm, TC_MEM_SHARED));
  OK(f, tc_set_memory_type(reg, TC_MEM_LOCAL));
  OK(f, tc_set_ldst_type(ld ? reg : sm,
                         ld ? (type_trans ? TC_LDST_LDMATRIX_TRANS : TC_LDST_LDMATRIX)
                            : (type_trans ? TC_LDST_STMATRIX_TRANS : TC_LDST_STMATRIX)));
  int logical[2] = {tc_tensor_loop_axis(sm, 0), tc_tensor_loop_axis(sm, 1)};
  if (!sched_trans) {
    OK(f, tc_split(out, 0, 8, 1));                    /* Ro, r(8), C */
    OK(f, tc_split(out, 2, 8 * num, 1));              /* Ro, r, Co, (8 num) */
    OK(f, tc_split(out, 3, 8, 1));                    /* Ro, r, Co, j(num), 8 */
    OK(f, tc_split(out, 4, 2, 1));                    /* Ro, r, Co, j, q(4), h(2) */
    OK(f, tc_reorder(out, 5, (int[]){2, 0, 1, 4, 3}, (int[]){0, 1, 2, 3, 4})); /* Co, Ro, r, q, j, h */
  } else {
    OK(f, tc_split(out, 0, 8, 1));                    /* Ro, 8, C */
    OK(f, tc_split(out, 1, 2, 1));                    /* Ro, q(4), h(2), C */
    OK(f, tc_split(out, 3, 8 * num, 1));              /* Ro, q, h, Co, (8 num) */
    OK(f, tc_split(out, 4, 8, 1));                    /* Ro, q, h, Co, j, c(8) */
    OK(f, tc_reorder(out, 5, (int[]){3, 0, 5, 1, 4}, (int[]){0, 1, 2, 3, 4})); /* Co, Ro, c, q, j, h */
  }
  OK(f, tc_merge(out, 1, 2));
  OK(f, tc_merge(out, 1, 2));                         /* Co, TIDx(64), j, h */
  OK(f, tc_merge(out, 2, 3));                         /* Co, TIDx, Vectorize(2 num) */
  OK(f, tc_propagate_transforms(out));
  OK(f, tc_parallelize(out, 1, TC_TIDX));
  OK(f, tc_parallelize(out, 2, TC_VECTORIZE));
  OK(f, tc_parallelize_all_like(out));
  OK(f, tc_set_alloc_domain(sm, 2, logical));
  return f;
}

static void variant_label(char *buf, size_t cap, int ld, int num, int trans) {
  snprintf(buf, cap, "%s.x%d%s", ld ? "ldmatrix" : "stmatrix", num, trans ? ".trans" : "");
}

/* The CUDA source for sm_90a holds the variant's instruction once, with
 * num registers; NVRTC compiles it.  Returns 1 built, 0 failed, -1 no
 * NVRTC. */
static int cuda_variant(tc_fusion *f, int ld, int num, int trans, const char *label) {
  tc_compile_options o = {TC_TARGET_CUDA, "sm_90a", "ldsm_variant"};
  tc_status st = TC_OK;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_CHECK(k != NULL, "%s: CUDA compile: %s", label, tc_fusion_error(f));
  if (!k) return 0;
  const char *src = tc_kernel_source(k);
  char want[160], regs[40] = "";
  for (int i = 0; i < num; i++)
    snprintf(regs + strlen(regs), sizeof regs - strlen(regs), "%s%%%d", i ? ", " : "", i + !ld);
  if (ld)
    snprintf(want, sizeof want, "\"ldmatrix.sync.aligned.m8n8.x%d%s.shared.b16 {%s}, [%%%d];\"", num,
             trans ? ".trans" : "", regs, num);
  else
    snprintf(want, sizeof want, "\"stmatrix.sync.aligned.m8n8.x%d%s.shared.b16 [%%0], {%s};\"", num,
             trans ? ".trans" : "", regs);
  TC_CHECK(count(src, want) == 1, "%s: the CUDA source does not hold %s once:\n%s", label, want, src);
  TC_CHECK(count(src, ld ? "ldmatrix" : "stmatrix") == count(src, want) + 1,
           "%s: other instructions of the kind in the CUDA source", label); /* + the comment */
  snprintf(want, sizeof want, "unsigned tc_lr[%d]", num);
  TC_CHECK(count(src, want) == 1, "%s: no %s", label, want);
  if (verbose()) printf("---- %s (CUDA) ----\n%s\n", label, src);
  st = tc_kernel_build(k, NULL);
  int r = -1;
  if (st != TC_ERR_UNSUPPORTED && st != TC_ERR_NO_DEVICE) {
    TC_CHECK(st == TC_OK, "%s: NVRTC for sm_90a failed (%s):\n%s", label, tc_status_name(st),
             tc_kernel_error(k));
    r = st == TC_OK;
  }
  tc_kernel_free(k);
  return r;
}

static void test_variants(void) {
  int ran = 0, built = 0, nvrtc_missing = 0;
  for (int ld = 1; ld >= 0; ld--)
    for (int num = 1; num <= 4; num *= 2)
      for (int trans = 0; trans < 2; trans++) {
        char label[64], must[160];
        variant_label(label, sizeof label, ld, num, trans);
        tc_fusion *f = matrix_copy(ld, num, trans, trans);
        snprintf(must, sizeof must, "tc_ldsm_%s(T", ld ? "ld" : "st");
        int64_t first, bad = run_count(f, 16, 16 * num, "ldsm_variant", label, must, &first);
        TC_CHECK(bad <= 0, "%s on PoCL: %lld of %lld elements differ, the first at (%lld, %lld)",
                 label, (long long)bad, (long long)(16 * 16 * num), (long long)(first / (16 * num)),
                 (long long)(first % (16 * num)));
        /* the emulation is called with this variant */
        tc_compile_options o = {TC_TARGET_OPENCL, NULL, "ldsm_variant"};
        tc_status st;
        tc_kernel *k = tc_compile(f, &o, &st);
        snprintf(must, sizeof must, "tc_ldsm_rows, tc_ldsm_tid, %d, %d, tc_lr);  /* %s */", num,
                 trans, label);
        TC_CHECK(k && count(tc_kernel_source(k), must) == 1, "%s: the OpenCL source lacks %s", label,
                 must);
        tc_kernel_free(k);
        ran += bad == 0;
        int b = cuda_variant(f, ld, num, trans, label);
        built += b == 1;
        nvrtc_missing |= b < 0;
        tc_fusion_free(f);
      }
  if (verbose()) printf("variants: %d of 12 ran on PoCL, %d built with NVRTC\n", ran, built);
  if (ran == 0 || nvrtc_missing)
    TC_SKIP("%s", ran == 0 ? "no OpenCL device" : "NVRTC missing: CUDA sources checked, not built");
}

/* Wrong row addresses (injected) must give wrong copies on PoCL. */
static void test_variant_faults(void) {
  int ran = 0;
  for (int fault = 1; fault <= 2; fault++)
    for (int ld = 1; ld >= 0; ld--)
      for (int num = 1; num <= 4; num *= 2)
        for (int trans = 0; trans < 2; trans++) {
          char label[64], name[32];
          variant_label(label, sizeof label, ld, num, trans);
          snprintf(name, sizeof name, "ldsm_fault%d", fault); /* its own cache key */
          tc_fusion *f = matrix_copy(ld, num, trans, trans);
          tc_test_hooks_set(&(tc_test_hooks){.ldsm_fault = fault});
          int64_t first, bad = run_count(f, 16, 16 * num, name, label, NULL, &first);
          tc_test_hooks_set(NULL);
          TC_CHECK(bad != 0, "%s with fault %d: the copy is still right", label, fault);
          ran += bad > 0;
          tc_fusion_free(f);
        }
  if (ran == 0) TC_SKIP("no OpenCL device");
}

/* ---- 4. the fragment layout ------------------------------------------------- */

/* The PTX ISA's m8n8 .b16 fragment (the ldmatrix figure "fragment of an
 * 8x8 matrix"), written out independently: lane l's 32-bit register for
 * matrix j holds two elements, i = 0 in the low half; without .trans they
 * are row groupID = l >> 2, columns (l % 4) * 2 + i; .trans delivers the
 * transpose, i.e. the stored matrix's column l >> 2, rows (l % 4) * 2 + i. */
static void isa_fragment(int trans, int lane, int i, int *row, int *col) {
  int group = lane >> 2, in_group = lane % 4;
  *row = trans ? in_group * 2 + i : group;
  *col = trans ? group : in_group * 2 + i;
}

static void test_fragment_rule(void) {
  for (int trans = 0; trans < 2; trans++)
    for (int lane = 0; lane < 64; lane++)
      for (int v = 0; v < 8; v++) {
        int64_t row, col;
        int r, c;
        tc_ldsm_fragment(trans, lane, v, &row, &col);
        isa_fragment(trans, lane % 32, v % 2, &r, &c);
        TC_CHECK(row == r && col == c, "trans %d lane %d element %d: (%lld, %lld), the ISA says (%d, %d)",
                 trans, lane, v, (long long)row, (long long)col, r, c);
      }
}

/* The emulation itself (the OpenCL dialect's prelude), one warp on PoCL:
 * shared memory holds its own element numbers; lane m publishes row
 * address 8 * ((37 m + 11) % 128) (scattered, distinct, 16-byte aligned);
 * tc_ldsm_ld must deliver to (lane, register j, half i) the element
 * rows[8j + row] + col of the ISA's fragment, and tc_ldsm_st, from
 * registers numbered 8 lane + 2j + i, write exactly those elements -
 * nothing else (the rows of lanes 8num and up are ignored). */
static void test_emulation_layout(void) {
  tc_cl *cl = NULL;
  tc_str e;
  tc_str_init(&e);
  if (tc_cl_open(NULL, &cl, &e) != TC_OK) {
    tc_str_free(&e);
    TC_SKIP("no OpenCL device");
  }
  tc_str src;
  tc_str_init(&src);
  tc_str_cat(&src, tc_cl_ldsm_prelude);
  tc_str_cat(&src,
             "__kernel void ldsm_unit(__global const int *rows_in, __global const int *mode,\n"
             "                        __global uint *regs, __global ushort *sm_out) {\n"
             "  __local ushort sm[1024];\n"
             "  __local int rows[32];\n"
             "  int tid = get_local_id(0), num = mode[0], trans = mode[1];\n"
             "  for (int e = tid; e < 1024; e += 32) sm[e] = (ushort)e;\n"
             "  rows[tid] = rows_in[tid];\n"
             "  barrier(CLK_LOCAL_MEM_FENCE);\n"
             "  uint r[4] = {0u, 0u, 0u, 0u};\n"
             "  tc_ldsm_ld(sm, rows, tid, num, trans, r);\n"
             "  for (int j = 0; j < 4; j++) regs[4 * tid + j] = r[j];\n"
             "  barrier(CLK_LOCAL_MEM_FENCE);\n"
             "  for (int e = tid; e < 1024; e += 32) sm[e] = (ushort)0xffff;\n"
             "  barrier(CLK_LOCAL_MEM_FENCE);\n"
             "  for (int j = 0; j < 4; j++)\n"
             "    r[j] = (uint)(8 * tid + 2 * j) | ((uint)(8 * tid + 2 * j + 1) << 16);\n"
             "  tc_ldsm_st(sm, rows, tid, num, trans, r);\n"
             "  barrier(CLK_LOCAL_MEM_FENCE);\n"
             "  for (int e = tid; e < 1024; e += 32) sm_out[e] = sm[e];\n"
             "}\n");
  int rows[32];
  for (int m = 0; m < 32; m++) rows[m] = 8 * ((37 * m + 11) % 128);
  for (int num = 1; num <= 4; num *= 2)
    for (int trans = 0; trans < 2; trans++) {
      int mode[2] = {num, trans};
      uint32_t regs[128];
      uint16_t sm[1024];
      tc_rt_buffer b[4] = {{rows, sizeof rows, 0}, {mode, sizeof mode, 0}, {regs, sizeof regs, 1},
                           {sm, sizeof sm, 1}};
      tc_launch L = {{1, 1, 1}, {32, 1, 1}, 0, NULL, 0};
      tc_str_clear(&e);
      tc_status st = tc_cl_run(cl, tc_str_cstr(&src), "ldsm_unit", b, 4, &L, NULL, &e);
      TC_CHECK(st == TC_OK, "run: %s", tc_str_cstr(&e));
      if (st != TC_OK) continue;
      int written[1024] = {0}, bad = 0;
      for (int lane = 0; lane < 32; lane++)
        for (int j = 0; j < 4; j++)
          for (int i = 0; i < 2; i++) {
            unsigned got = (regs[4 * lane + j] >> (16 * i)) & 0xffffu;
            if (j >= num) {
              bad += got != 0;
              continue;
            }
            int row, col;
            isa_fragment(trans, lane, i, &row, &col);
            int at = rows[8 * j + row] + col;
            if (got != (unsigned)at || sm[at] != 8 * lane + 2 * j + i)
              if (bad++ < 4)
                TC_CHECK(0, "x%d%s lane %d register %d element %d: ldmatrix gave %u, want %d; "
                         "stmatrix wrote %u there, want %d",
                         num, trans ? ".trans" : "", lane, j, i, got, at, sm[at], 8 * lane + 2 * j + i);
            written[at]++;
          }
      for (int a = 0; a < 1024; a++)
        if ((written[a] == 0 && sm[a] != 0xffff) || written[a] > 1) bad++;
      TC_CHECK(bad == 0, "x%d%s: %d wrong registers or elements", num, trans ? ".trans" : "", bad);
    }
  tc_str_free(&src), tc_str_free(&e);
  tc_cl_close(cl);
}

/* ---- 5. errors ------------------------------------------------------------ */

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
  expect_error(simple(TC_BF16, 64, 8, 1, TC_LDST_LDMATRIX, 0), TC_TARGET_OPENCL, NULL,
               TC_ERR_SCHEDULE, "Vectorize axis of 2, 4 or 8 elements", "vector of 1");
  expect_error(simple(TC_BF16, 64, 8, 1, TC_LDST_STMATRIX_TRANS, 1), TC_TARGET_OPENCL, NULL,
               TC_ERR_SCHEDULE, "copies global memory to shared memory, but stmatrix copies registers",
               "stmatrix.trans global -> shared");
  expect_error(simple(TC_BF16, 64, 8, 1, TC_LDST_LDMATRIX_TRANS, 0), TC_TARGET_OPENCL, NULL,
               TC_ERR_SCHEDULE, "ldmatrix.trans of T3 = T2 needs an innermost Vectorize axis of 2, 4 or 8",
               "vector of 1, .trans");
  expect_error(simple(TC_BF16, 64, 8, 4, TC_LDST_LDMATRIX, 0), TC_TARGET_OPENCL, NULL,
               TC_ERR_LOWER, "are not an m8n8.x2 fragment", "row-major registers, x2");
  expect_error(simple(TC_BF16, 64, 8, 2, TC_LDST_LDMATRIX_TRANS, 0), TC_TARGET_OPENCL, NULL,
               TC_ERR_LOWER, "are not an m8n8.x1.trans fragment", "row-major registers, x1.trans");
  /* the other transposition's fragment: the message says which type fits */
  expect_error(matrix_copy(1, 2, 1, 0), TC_TARGET_OPENCL, NULL, TC_ERR_LOWER,
               "not an m8n8.x2 fragment (they are the .trans fragment: use TC_LDST_LDMATRIX_TRANS)",
               "transposed registers, plain ldmatrix");
  expect_error(matrix_copy(0, 4, 0, 1), TC_TARGET_OPENCL, NULL, TC_ERR_LOWER,
               "not an m8n8.x4.trans fragment (they are the plain (not .trans) fragment: use "
               "TC_LDST_STMATRIX)",
               "plain registers, stmatrix.trans");
  expect_error(matrix_copy(0, 1, 1, 1), TC_TARGET_CUDA, "sm_89", TC_ERR_UNSUPPORTED,
               "stmatrix.x1.trans of T3 = T2 needs arch sm_90 or later", "stmatrix.trans on sm_89");
  expect_error(matrix_copy(1, 2, 1, 1), TC_TARGET_HIP, "gfx942", TC_ERR_UNSUPPORTED,
               "has no ldmatrix", "ldmatrix.trans on HIP");
  expect_error(simple(TC_BF16, 48, 8, 8, TC_LDST_LDMATRIX, 0), TC_TARGET_OPENCL, NULL,
               TC_ERR_SCHEDULE, "TIDx extent 48 is not a multiple of 32", "TIDx 48");
  expect_error(simple(TC_F32, 64, 8, 4, TC_LDST_LDMATRIX, 0), TC_TARGET_OPENCL, NULL,
               TC_ERR_SCHEDULE, "moves 16-bit elements", "f32");
  expect_error(simple(TC_BF16, 64, 8, 8, TC_LDST_LDMATRIX, 1), TC_TARGET_OPENCL, NULL,
               TC_ERR_SCHEDULE, "copies shared memory to registers", "global -> shared");
  expect_error(simple(TC_BF16, 64, 8, 8, TC_LDST_STMATRIX, 0), TC_TARGET_OPENCL, NULL,
               TC_ERR_SCHEDULE, "copies registers (local memory) to shared memory",
               "stmatrix shared -> registers");
  ldst_set s = build(TC_TMA_SWIZZLE_128B, 128, 256, 256, 512);
  expect_error(s.f, TC_TARGET_CUDA, NULL, TC_ERR_UNSUPPORTED, "needs arch sm_90 or later",
               "stmatrix on sm_80");
  /* a bulk copy whose loops are bound to TIDx (sm_90: bulk copies are real) */
  expect_error(simple(TC_BF16, 64, 8, 8, TC_LDST_BULK_TENSOR, 1), TC_TARGET_CUDA, "sm_90a",
               TC_ERR_SCHEDULE, "depends on TIDx", "bulk copy over TIDx");
  s = build(TC_TMA_SWIZZLE_128B, 128, 256, 256, 512);
  expect_error(s.f, TC_TARGET_HIP, "gfx942", TC_ERR_UNSUPPORTED, "has no ldmatrix", "HIP");
}

int main(void) {
  TC_RUN(test_ldst_set_sources);
  TC_RUN(test_ldst_set_run_pocl);
  TC_RUN(test_each_alone);
  TC_RUN(test_shmoo);
  TC_RUN(test_fragment_rule);
  TC_RUN(test_emulation_layout);
  TC_RUN(test_variants);
  TC_RUN(test_variant_faults);
  TC_RUN(test_errors);
  TC_MAIN_END();
}
