/* test_mma.c - the mma.sync GEMM (NVIDIA tensor cores, m16n8k16, f16/bf16
 * inputs, f32 accumulation; docs/mma.md).
 *
 *   - the generator's lane layouts against the PTX ISA's fragment layouts
 *     for mma.m16n8k16 (written here independently; all bijections);
 *   - mma parameters: perf-config strings, derivation, the rules' errors,
 *     targets (HIP refuses mma, CUDA still refuses xdlops);
 *   - mma GEMMs on OpenCL, where the dialect emulates each mma.sync from
 *     the lanes' fragments, vs a plain C reference: f16 and bf16, several
 *     warp tilings, M/N/K not multiples of the tile, G > 1, transposed
 *     operands, f16/bf16 C, accumulate and alpha;
 *   - wrong lane layouts (injected into the generator) give wrong results;
 *   - the CUDA sources hold the mma.sync instruction and compile with
 *     NVRTC for sm_80 and sm_90a (skipped where NVRTC cannot be loaded),
 *     and not for sm_75. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/gemm.h"
#include "ops/gemm_gen.h"
#include "runtime/runtime.h"
#include "test.h"

#define GEMM_TEST_SEED 4242
#include "gemm_test_util.h"
#include "base/test_hooks.h"

static tc_cl *cl;

static int has(const char *s, const char *part) { return s && strstr(s, part) != NULL; }

/* ---- lane layouts ------------------------------------------------------ */

static void test_mma_layouts(void) {
  int seen_a[16 * 16] = {0}, seen_b[16 * 8] = {0}, seen_c[16 * 8] = {0};
  for (int lane = 0; lane < 32; lane++) {
    int gid = lane >> 2, tig = lane % 4; /* PTX: groupID, threadID_in_group */
    for (int e = 0; e < 8; e++) {
      int ar, ak, bk, bc, cr, cc;
      tc_mma_layout(lane, e, &ar, &ak, &bk, &bc, &cr, &cc);
      /* PTX A (.f16x2 a0..a3 holding a0..a7): row = groupID for ai with
       * i < 2 || 4 <= i < 6, else groupID + 8; col = threadID_in_group*2 +
       * (i & 1), + 8 for i >= 4 */
      int want_r = (e < 2 || (e >= 4 && e < 6)) ? gid : gid + 8;
      int want_c = tig * 2 + (e & 1) + (e >= 4 ? 8 : 0);
      TC_CHECK(ar == want_r && ak == want_c, "A lane %d a%d: [%d][%d], PTX [%d][%d]", lane, e, ar,
               ak, want_r, want_c);
      if (ar >= 0 && ar < 16 && ak >= 0 && ak < 16) seen_a[ar * 16 + ak]++;
      if (e >= 4) continue;
      /* PTX B (b0, b1 holding b0..b3): row = threadID_in_group*2 + (i & 1),
       * + 8 for i >= 2; col = groupID */
      int want_bk = tig * 2 + (e & 1) + (e >= 2 ? 8 : 0);
      TC_CHECK(bk == want_bk && bc == gid, "B lane %d b%d: [%d][%d], PTX [%d][%d]", lane, e, bk,
               bc, want_bk, gid);
      if (bk >= 0 && bk < 16 && bc >= 0 && bc < 8) seen_b[bk * 8 + bc]++;
      /* PTX C/D (c0..c3): row = groupID for i < 2, else + 8; col =
       * threadID_in_group*2 + (i & 1) */
      int want_cr = e < 2 ? gid : gid + 8, want_cc = tig * 2 + (e & 1);
      TC_CHECK(cr == want_cr && cc == want_cc, "C lane %d c%d: [%d][%d], PTX [%d][%d]", lane, e,
               cr, cc, want_cr, want_cc);
      if (cr >= 0 && cr < 16 && cc >= 0 && cc < 8) seen_c[cr * 8 + cc]++;
    }
  }
  for (int i = 0; i < 256; i++) TC_CHECK(seen_a[i] == 1, "A element %d held %d times", i, seen_a[i]);
  for (int i = 0; i < 128; i++) TC_CHECK(seen_b[i] == 1, "B element %d held %d times", i, seen_b[i]);
  for (int i = 0; i < 128; i++) TC_CHECK(seen_c[i] == 1, "C element %d held %d times", i, seen_c[i]);
}

/* ---- parameters -------------------------------------------------------- */

static tc_gemm_shape shape16(int64_t m, int64_t n, int64_t k, tc_dtype t) {
  tc_gemm_shape s;
  memset(&s, 0, sizeof s);
  s.g = 1, s.m = m, s.n = n, s.k = k, s.dtype = t;
  s.a_vec_k = s.a_vec_m = s.b_vec_k = s.b_vec_n = s.c_vec_n = 1;
  return s;
}

static int bad_cfg(const char *cfg, tc_dtype t, const char *part) {
  TC_STR_LOCAL(err);
  tc_gemm_params p;
  tc_gemm_shape s = shape16(128, 128, 64, t);
  int r = tc_gemm_params_parse(cfg, &p, &err);
  if (r == 0) r = tc_gemm_params_derive(&p, &s, &err);
  TC_CHECK(r == -1 && has(tc_str_cstr(&err), part), "%s: %s (wanted \"%s\")", cfg, tc_str_cstr(&err), part);
  return r == -1;
}

static void test_mma_params(void) {
  char buf[64];
  TC_STR_LOCAL(err);
  tc_gemm_params p;
  tc_gemm_shape s = shape16(128, 128, 64, TC_BF16);
  TC_REQUIRE(tc_gemm_params_parse("mma:128,64,32,64,32", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(tc_gemm_params_is_mma(&p) && tc_gemm_params_is_xdlops(&p), "not mma");
  TC_REQUIRE(tc_gemm_params_derive(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(p.mma, TC_MMA_M16N8K16);
  TC_CHECK_EQ_INT(p.mfma, 0);
  TC_CHECK_EQ_INT(p.waves_m, 2);
  TC_CHECK_EQ_INT(p.waves_n, 2);
  TC_CHECK_EQ_INT(p.block_size, 128);
  TC_CHECK_EQ_INT(p.c_per_write, 1);
  TC_CHECK(tc_gemm_params_check(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(tc_gemm_lds_bytes(&p), 2 * 32 * (128 + 64) * 2);
  tc_gemm_params_format(&p, buf, sizeof buf);
  TC_CHECK(strcmp(buf, "mma:128,64,32,64,32") == 0, "format: %s", buf);
  /* the other forms are unchanged */
  TC_REQUIRE(tc_gemm_params_parse("xdlops:64,64,16,32,32", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(!tc_gemm_params_is_mma(&p), "xdlops is not mma");
  TC_REQUIRE(tc_gemm_params_parse("256,128,128,8,4,4", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(!tc_gemm_params_is_mma(&p) && !tc_gemm_params_is_xdlops(&p), "FMA");
  /* the rules, by name */
  bad_cfg("mma:64,64,16,24,32", TC_F16, "m_per_warp must be a multiple of the mma tile's M (16");
  bad_cfg("mma:64,60,16,32,12", TC_F16, "n_per_warp must be a multiple of the mma tile's N (8");
  bad_cfg("mma:64,64,8,32,32", TC_F16, "k_per_block must be a multiple of the mma tile's K (16");
  bad_cfg("mma:96,64,16,64,32", TC_F16, "m_per_block 96 is not a multiple of m_per_warp 64");
  bad_cfg("mma:64,96,16,32,64", TC_F16, "n_per_block 96 is not a multiple of n_per_warp 64");
  bad_cfg("mma:256,128,16,16,8", TC_F16, "block_size must be at most 1024 (16*16*32 = 8192)");
  bad_cfg("mma:256,256,16,256,256", TC_F16, "accumulators per lane must be at most 256");
  bad_cfg("mma:64,64,16,32,32", TC_F32, "mma.sync kernels need f16 or bf16 A and B (got f32)");
  bad_cfg("mma:256,256,64,64,64", TC_BF16, "shared memory");
  bad_cfg("mma:64,64,16,32", TC_F16, "expected 5 comma-separated fields after mma:");
  bad_cfg("mma:64,64,16,32,32,16", TC_F16, "too many fields, expected 5 after mma:");
  bad_cfg("mma:64,x,16,32,32", TC_F16, "field 2 (n_per_block) is not a positive integer");
  bad_cfg("mma:64,64,16,0,32", TC_F16, "field 4 (m_per_warp) must be between 1 and");
  /* a fully specified set that breaks a derived rule */
  TC_REQUIRE(tc_gemm_params_parse("mma:64,64,16,32,32", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_gemm_params_derive(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));
  tc_gemm_params q = p;
  q.block_size = 256;
  TC_CHECK(tc_gemm_params_check(&q, &s, &err) == -1 &&
               has(tc_str_cstr(&err), "block_size must equal warps along M * warps along N * warp size"),
           "%s", tc_str_cstr(&err));
  q = p, q.waves_m = 1;
  TC_CHECK(tc_gemm_params_check(&q, &s, &err) == -1 && has(tc_str_cstr(&err), "warps along M and N"),
           "%s", tc_str_cstr(&err));
  q = p, q.mfma = TC_MFMA_16X16X16;
  TC_CHECK(tc_gemm_params_check(&q, &s, &err) == -1 && has(tc_str_cstr(&err), "no MFMA"), "%s", tc_str_cstr(&err));
}

/* ---- GEMMs on OpenCL (emulated mma.sync) and CUDA sources ------------- */

static const gemm_harness mma_harness = {"gemm_mma", NULL, 0};

static void check_mma_cl(const tc_gemm_kernel *k, const tc_gemm_params *p, const char *cfg) {
  TC_CHECK(has(k->source, "tc_mma_emu("), "%s: no emulated mma in the source", cfg);
  TC_CHECK(has(k->source, "(mma.sync)"), "%s: header", cfg);
  TC_CHECK_EQ_INT(k->block[0], p->waves_m * p->waves_n * 32);
  TC_CHECK_EQ_INT(k->smem_bytes, 2 * p->k_per_block * (p->m_per_block + p->n_per_block) * 2 +
                                     p->waves_m * p->waves_n * 384 * 4);
}

/* Runs a case on OpenCL; the number of wrong elements of C (or written
 * outside C), -1 when it could not run (a check failed). */
static int64_t run_mma(const mcase *tc, int report) {
  return gemm_run_cl(cl, &mma_harness, tc, report, check_mma_cl);
}
static const mcase gemm_cases[] = {
    /* bf16, 2 x 2 warps of 32 x 32 (2 x 4 mma tiles each), K = 4 tiles (even tail) */
    {"mma:64,64,16,32,32", 1, 64, 64, 64, 0, 0, TC_BF16, TC_F32, 0, 1.0f},
    /* f16, one warp of 16 x 8 (one mma tile), K = 3 tiles (odd tail) */
    {"mma:16,8,16,16,8", 1, 16, 8, 48, 0, 0, TC_F16, TC_F32, 0, 1.0f},
    /* ragged M, N, K; G = 2; A transposed; bf16 C; C += 0.5 * A * B; KPB 32 */
    {"mma:64,32,32,32,16", 2, 50, 70, 40, 1, 0, TC_BF16, TC_BF16, 1, 0.5f},
    /* f16, 4 x 1 warps of 16 x 64 (1 x 8 tiles), B transposed, f16 C */
    {"mma:64,64,16,16,64", 1, 100, 64, 36, 0, 1, TC_F16, TC_F16, 0, 1.0f},
    /* bf16, 1 x 4 warps of 64 x 8 (4 x 1 tiles); K < one tile; both transposed */
    {"mma:64,32,16,64,8", 1, 40, 24, 10, 1, 1, TC_BF16, TC_F32, 0, 1.0f},
    /* f16, 2 x 2 warps of 64 x 32, 128 threads, ragged everything */
    {"mma:128,64,32,64,32", 1, 130, 66, 70, 0, 0, TC_F16, TC_F32, 0, 1.0f},
};

static void test_mma_gemm_opencl(void) {
  if (!cl) TC_SKIP("no OpenCL device");
  for (size_t i = 0; i < sizeof gemm_cases / sizeof *gemm_cases; i++) {
    int64_t bad = run_mma(&gemm_cases[i], 1);
    TC_CHECK(bad == 0, "case %zu (%s): %lld wrong elements", i, gemm_cases[i].cfg, (long long)bad);
  }
}

/* A wrong lane layout computes wrong results on the emulation. */
static void test_mma_wrong_layouts(void) {
  if (!cl) TC_SKIP("no OpenCL device");
  static const mcase c1 = {"mma:32,16,16,16,8", 1, 32, 16, 32, 0, 0, TC_BF16, TC_F32, 0, 1};
  static const mcase c2 = {"mma:32,32,32,32,16", 1, 32, 32, 32, 0, 0, TC_F16, TC_F32, 0, 1};
  for (int fault = 1; fault <= 3; fault++)
    for (int which = 0; which < 2; which++) {
      tc_test_hooks_set(&(tc_test_hooks){.mma_fault = fault});
      int64_t bad = run_mma(which ? &c2 : &c1, 0);
      tc_test_hooks_set(NULL);
      TC_CHECK(bad > 0, "fault %d (%s): the wrong layout verified (%lld wrong)", fault,
               which ? c2.cfg : c1.cfg, (long long)bad);
    }
  TC_CHECK(run_mma(&c1, 1) == 0, "%s", c1.cfg);
  TC_CHECK(run_mma(&c2, 1) == 0, "%s", c2.cfg);
}

/* Targets: mma is CUDA's (and OpenCL's emulation), not HIP's; xdlops
 * stays AMD's. */
static void test_mma_targets(void) {
  problem P;
  problem_make(&gemm_cases[0], &P);
  tc_gemm_params p;
  TC_STR_LOCAL(err);
  tc_gemm_shape s = tc_gemm_problem_shape(&P.pb);
  TC_REQUIRE(tc_gemm_params_parse("mma:64,64,16,32,32", &p, &err) == 0 &&
                 tc_gemm_params_derive(&p, &s, &err) == 0,
             "%s", tc_str_cstr(&err));
  tc_gemm_kernel k;
  tc_status st = tc_gemm_generate(&P.pb, &p, TC_TARGET_HIP, "g", &k, &err);
  TC_CHECK(st == TC_ERR_UNSUPPORTED && has(tc_str_cstr(&err), "mma.sync kernels are for NVIDIA GPUs"), "%s",
           tc_str_cstr(&err));
  TC_REQUIRE(tc_gemm_params_parse("xdlops:64,64,16,32,32", &p, &err) == 0 &&
                 tc_gemm_params_derive(&p, &s, &err) == 0,
             "%s", tc_str_cstr(&err));
  st = tc_gemm_generate(&P.pb, &p, TC_TARGET_CUDA, "g", &k, &err);
  TC_CHECK(st == TC_ERR_UNSUPPORTED && has(tc_str_cstr(&err), "XDLOPS (MFMA) kernels are for AMD GPUs"), "%s",
           tc_str_cstr(&err));
  problem_free(&P);
}

/* The CUDA sources: the instruction, the fragments from LDS; NVRTC. */
static void test_mma_cuda(void) {
  tc_str why;
  tc_str_init(&why);
  int nvrtc = nvrtc_loads(&why);
  if (!nvrtc) printf("  (%s)\n", tc_str_cstr(&why));
  tc_str_free(&why);
  for (size_t i = 0; i < sizeof gemm_cases / sizeof *gemm_cases; i++) {
    const mcase *tc = &gemm_cases[i];
    problem P;
    problem_make(tc, &P);
    tc_gemm_params p;
    tc_gemm_kernel k;
    memset(&k, 0, sizeof k);
    char cfg[64];
    if (generate(&mma_harness, tc, &P, TC_TARGET_CUDA, &p, &k, cfg, sizeof cfg)) {
      const char *want = tc->ab == TC_BF16 ? "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
                                           : "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32";
      TC_CHECK(has(k.source, want), "%s: no %s", cfg, want);
      TC_CHECK(has(k.source, tc->ab == TC_BF16 ? "tc_mma_bf16(c_acc[" : "tc_mma_f16(c_acc["),
               "%s: no mma call", cfg);
      TC_CHECK(!has(k.source, "tc_mma_emu"), "%s: emulation in CUDA", cfg);
      TC_CHECK_EQ_INT(k.block[0], p.waves_m * p.waves_n * 32);
      TC_CHECK_EQ_INT(k.smem_bytes, 2 * p.k_per_block * (p.m_per_block + p.n_per_block) * 2);
      static const char *const archs[] = {"sm_80", "sm_90a"};
      for (int a = 0; a < 2 && nvrtc; a++) {
        char *ptx = NULL;
        tc_str err;
        tc_str_init(&err);
        tc_status st = tc_cuda_compile(k.source, archs[a], &ptx, &err);
        TC_CHECK(st == TC_OK, "%s %s: %.3000s", cfg, archs[a], tc_str_cstr(&err));
        if (st == TC_OK)
          TC_CHECK(has(ptx, "mma.sync.aligned.m16n8k16.row.col.f32"), "%s %s: no mma in the PTX",
                   cfg, archs[a]);
        free(ptx);
        tc_str_free(&err);
      }
      if (nvrtc && i == 0) { /* before sm_80: a clear error */
        char *ptx = NULL;
        tc_str err;
        tc_str_init(&err);
        tc_status st = tc_cuda_compile(k.source, "sm_75", &ptx, &err);
        TC_CHECK(st != TC_OK && has(tc_str_cstr(&err), "needs sm_80 or newer"), "sm_75: %s: %.500s",
                 tc_status_name(st), tc_str_cstr(&err));
        free(ptx);
        tc_str_free(&err);
      }
    }
    tc_gemm_kernel_free(&k);
    problem_free(&P);
  }
  if (!nvrtc) TC_SKIP("NVRTC cannot be loaded (the CUDA sources were generated)");
}

/* cp.async: the global -> LDS copies of contiguous, aligned 16-bit vectors
 * (read along M or N) go straight to LDS, cp.async.ca.shared.global on CUDA
 * and a plain copy with the same indices on OpenCL; the others stay on the
 * register path.  Rows padded by 8 elements: widths 8, 4 and 2 (16, 8 and
 * 4 bytes) as the row length allows; NaN after the rows and ragged M, N, K
 * exercise the zero-filled (src-size 0) copies. */
static const mcase async_cases[] = {
    /* 16-byte copies of A and B, even tail */
    {"mma:64,64,16,32,32", 1, 64, 64, 64, 0, 0, TC_BF16, TC_F32, 0, 1.0f},
    /* A transposed (read along K: registers); B rows of 78: 4-byte copies */
    {"mma:64,32,32,32,16", 2, 50, 70, 40, 1, 0, TC_BF16, TC_BF16, 1, 0.5f},
    /* rows of 108 (A, 8-byte copies) and 74 (B, 4-byte), odd tail */
    {"mma:128,64,32,64,32", 1, 100, 66, 70, 0, 0, TC_F16, TC_F32, 0, 1.0f},
    /* one warp, K < one tile (every copy past K zero-filled) */
    {"mma:16,8,16,16,8", 1, 16, 8, 10, 0, 0, TC_F16, TC_F16, 0, 1.0f},
};

/* The copy lines of a kernel ("tc_cp_async<n>(&..." statements). */
static void copy_lines(const char *src, tc_str *out) {
  for (const char *c = src; c && *c;) {
    const char *e = strchr(c, '\n');
    size_t len = e ? (size_t)(e - c) : strlen(c);
    const char *t = c;
    while (t < c + len && *t == ' ') t++;
    if (!strncmp(t, "tc_cp_async", 11) && memchr(t, '&', (size_t)(c + len - t))) {
      tc_str_printf(out, "%.*s\n", (int)(c + len - t), t);
    }
    c += len + (e != NULL);
  }
}

static void test_mma_cp_async(void) {
  tc_str why;
  tc_str_init(&why);
  int nvrtc = nvrtc_loads(&why);
  tc_str_free(&why);
  gemm_ab_extra = 8;
  for (size_t i = 0; i < sizeof async_cases / sizeof *async_cases; i++) {
    const mcase *tc = &async_cases[i];
    problem P;
    problem_make(tc, &P);
    tc_gemm_params p;
    tc_gemm_kernel kc, ko;
    memset(&kc, 0, sizeof kc);
    memset(&ko, 0, sizeof ko);
    char cfg[64];
    if (generate(&mma_harness, tc, &P, TC_TARGET_CUDA, &p, &kc, cfg, sizeof cfg) &&
        generate(&mma_harness, tc, &P, TC_TARGET_OPENCL, &p, &ko, cfg, sizeof cfg)) {
      TC_CHECK(has(kc.source, "cp.async.ca.shared.global [%0], [%1], 16, %2;") &&
                   has(kc.source, "cp.async.commit_group;") &&
                   has(kc.source, "cp.async.wait_group 0;"),
               "%s: no cp.async in the CUDA source", cfg);
      TC_CHECK(has(kc.source, "tc_cp_async_commit();") && has(kc.source, "tc_cp_async_wait_all();"),
               "%s: no commit / wait", cfg);
      TC_CHECK(has(kc.source, "asynchronous (cp.async)"), "%s: header", cfg);
      /* the emulation copies with the same indices */
      tc_str lc, lo;
      tc_str_init(&lc);
      tc_str_init(&lo);
      copy_lines(kc.source, &lc);
      copy_lines(ko.source, &lo);
      TC_CHECK(lc.len > 0 && !strcmp(tc_str_cstr(&lc), tc_str_cstr(&lo)),
               "%s: the CUDA and OpenCL copies differ", cfg);
      /* the widths; case 3's copies past K are predicated (src-size 0) */
      static const char *const widths[] = {"tc_cp_async16(&", "tc_cp_async4(&b", "tc_cp_async8(&a",
                                           " : 0);"};
      TC_CHECK(has(tc_str_cstr(&lc), widths[i]), "%s: no %s", cfg, widths[i]);
      if (i == 1) /* no cp.async into A's tile; its loads go through a_copy */
        TC_CHECK(!has(tc_str_cstr(&lc), "(&a") && has(kc.source, "a_copy["),
                 "%s: A read along K must stay on the register path", cfg);
      if (i == 2) TC_CHECK(has(tc_str_cstr(&lc), "tc_cp_async4(&b"), "%s: B copies", cfg);
      tc_str_free(&lc);
      tc_str_free(&lo);
      static const char *const archs[] = {"sm_80", "sm_90a"};
      for (int a = 0; a < 2 && nvrtc; a++) {
        char *ptx = NULL;
        tc_str err;
        tc_str_init(&err);
        tc_status st = tc_cuda_compile(kc.source, archs[a], &ptx, &err);
        TC_CHECK(st == TC_OK, "%s %s: %.3000s", cfg, archs[a], tc_str_cstr(&err));
        if (st == TC_OK)
          TC_CHECK(has(ptx, "cp.async.ca.shared.global") && has(ptx, "cp.async.wait_group") &&
                       has(ptx, "mma.sync.aligned.m16n8k16"),
                   "%s %s: no cp.async in the PTX", cfg, archs[a]);
        free(ptx);
        tc_str_free(&err);
      }
    }
    tc_gemm_kernel_free(&kc);
    tc_gemm_kernel_free(&ko);
    problem_free(&P);
    if (cl) {
      int64_t bad = run_mma(tc, 1);
      TC_CHECK(bad == 0, "cp.async case %zu (%s): %lld wrong elements", i, tc->cfg,
               (long long)bad);
    }
  }
  gemm_ab_extra = GEMM_EXTRA;
  if (!cl) TC_SKIP("no OpenCL device (the sources were checked)");
  if (!nvrtc) TC_SKIP("NVRTC cannot be loaded (the CUDA sources were generated)");
}

/* The mma heuristic: candidates for f16/bf16 only, each a valid mma set. */
static void test_mma_candidates(void) {
  tc_gemm_shape s = shape16(100, 70, 50, TC_BF16), f = shape16(100, 70, 50, TC_F32);
  tc_gemm_params *c = NULL, p;
  TC_STR_LOCAL(err);
  int n = tc_gemm_mma_candidates(&s, &c);
  TC_CHECK(n > 0, "no mma candidates");
  for (int i = 0; i < n; i++)
    TC_CHECK(tc_gemm_params_is_mma(&c[i]) && tc_gemm_params_check(&c[i], &s, &err) == 0,
             "candidate %d: %s", i, tc_str_cstr(&err));
  TC_CHECK(tc_gemm_mma_default(&s, &p, &err) == 0 && n > 0 &&
               !memcmp(&p, &c[0], sizeof p),
           "default: %s", tc_str_cstr(&err));
  free(c);
  TC_CHECK(tc_gemm_mma_candidates(&f, &c) == 0 && !c, "f32 candidates");
  TC_CHECK(tc_gemm_mma_default(&f, &p, &err) != 0 && has(tc_str_cstr(&err), "f16 or bf16"), "%s",
           tc_str_cstr(&err));
}

int main(void) {
  cl = open_cl_or_null();
  TC_RUN(test_mma_layouts);
  TC_RUN(test_mma_params);
  TC_RUN(test_mma_targets);
  TC_RUN(test_mma_gemm_opencl);
  TC_RUN(test_mma_wrong_layouts);
  TC_RUN(test_mma_cuda);
  TC_RUN(test_mma_cp_async);
  TC_RUN(test_mma_candidates);
  if (cl) tc_cl_close(cl);
  TC_MAIN_END();
}
