/* test_hip.c - the HIP target (AMD GPUs) and the XDLOPS (MFMA) GEMM.
 *
 *   - the generator's MFMA lane layouts against AMD's definitions
 *     (32x32x8 and 16x16x16; both bijections);
 *   - XDLOPS GEMMs (f16 and bf16 inputs, f32 accumulation) on OpenCL,
 *     where the dialect emulates each MFMA from the lanes' fragments, vs
 *     a plain C reference: both instructions, several waves and MFMA
 *     tiles per wave, M/N/K not multiples of the tile, G > 1, transposed
 *     operands, f16/bf16 C, accumulate and alpha;
 *   - wrong lane layouts (injected into the generator) give wrong
 *     results on the emulation;
 *   - XDLOPS parameters: perf-config strings, derivation, rules;
 *   - the HIP sources (MFMA builtins, buffer loads, LDS, barriers), and
 *     hipcc --genco for gfx90a and gfx940 of: the FMA GEMM, the MFMA GEMMs
 *     (bf16 32x32x8, f16 16x16x16), conv plans' kernels and example
 *     fusions through tc_compile(TC_TARGET_HIP) + tc_kernel_build;
 *     gfx942 is emitted (and compiled where hipcc knows it);
 *   - running without an AMD GPU says "no AMD GPU: ..." (with one, the
 *     transpose runs and matches the reference; the HIP runtime itself is
 *     tests/test_hip_run.c's).
 * The hipcc parts are skipped (TC_SKIP) where hipcc is absent. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "demo/examples.h"
#include "ops/conv.h"
#include "ops/gemm.h"
#include "ops/gemm_gen.h"
#include "runtime/runtime.h"
#include "test.h"

#define GEMM_TEST_SEED 777
#include "gemm_test_util.h"
#include "base/test_hooks.h"

static tc_cl *cl;
static int have_hipcc;
static char hipcc_path[4096];

static int has(const char *s, const char *part) { return s && strstr(s, part) != NULL; }

/* ---- lane layouts --------------------------------------------------------- */

static void check_layout(int kind) {
  int m = kind == TC_MFMA_32X32X8 ? 32 : 16, k = kind == TC_MFMA_32X32X8 ? 8 : 16;
  int nacc = m * m / 64;
  static int seen_ab[32 * 16], seen_c[32 * 32];
  memset(seen_ab, 0, sizeof seen_ab);
  memset(seen_c, 0, sizeof seen_c);
  for (int lane = 0; lane < 64; lane++) {
    for (int i = 0; i < 4; i++) {
      int r, kk, cr, cc;
      tc_mfma_layout(kind, lane, i, &r, &kk, &cr, &cc);
      /* AMD: A[i][k] is item k % 4 of lane i + m * (k / 4) (B[k][j] likewise) */
      TC_CHECK(r >= 0 && r < m && kk >= 0 && kk < k, "%d: lane %d item %d -> A[%d][%d]", m, lane,
               i, r, kk);
      if (r < 0 || r >= m || kk < 0 || kk >= k) continue;
      TC_CHECK(lane == r + m * (kk / 4) && i == kk % 4, "%d: A[%d][%d] in lane %d item %d", m, r,
               kk, lane, i);
      seen_ab[r * k + kk]++;
    }
    for (int v = 0; v < nacc; v++) {
      int r, kk, cr, cc;
      tc_mfma_layout(kind, lane, v, &r, &kk, &cr, &cc);
      TC_CHECK(cr >= 0 && cr < m && cc >= 0 && cc < m, "%d: lane %d item %d -> C[%d][%d]", m,
               lane, v, cr, cc);
      if (cr < 0 || cr >= m || cc < 0 || cc >= m) continue;
      /* AMD: 32x32: D[i][j] is item 4*(i/8) + i%4 of lane j + 32*((i/4)%2);
       *      16x16: D[i][j] is item i%4 of lane j + 16*(i/4) */
      if (m == 32)
        TC_CHECK(lane == cc + 32 * ((cr / 4) % 2) && v == 4 * (cr / 8) + cr % 4,
                 "32: C[%d][%d] in lane %d item %d", cr, cc, lane, v);
      else
        TC_CHECK(lane == cc + 16 * (cr / 4) && v == cr % 4, "16: C[%d][%d] in lane %d item %d", cr,
                 cc, lane, v);
      seen_c[cr * m + cc]++;
    }
  }
  for (int i = 0; i < m * k; i++) TC_CHECK(seen_ab[i] == 1, "%d: A element %d held %d times", m, i, seen_ab[i]);
  for (int i = 0; i < m * m; i++) TC_CHECK(seen_c[i] == 1, "%d: C element %d held %d times", m, i, seen_c[i]);
}

static void test_mfma_layouts(void) {
  check_layout(TC_MFMA_32X32X8);
  check_layout(TC_MFMA_16X16X16);
}

/* ---- XDLOPS GEMMs on OpenCL (emulated MFMA) --------------------------------- */

/* cases with a NULL cfg take tc_gemm_xdlops_default; cases are named by
 * their formatted params */
static const gemm_harness mfma_harness = {"gemm_mfma", tc_gemm_xdlops_default, 1};

static void check_mfma_cl(const tc_gemm_kernel *k, const tc_gemm_params *p, const char *cfg) {
  TC_CHECK(has(k->source, "tc_mfma_emu("), "%s: no emulated MFMA in the source", cfg);
  TC_CHECK_EQ_INT(k->block[0], p->waves_m * p->waves_n * 64);
  /* LDS tiles of 16-bit values, plus the emulation's scratch */
  TC_CHECK_EQ_INT(k->smem_bytes, 2 * p->k_per_block * (p->m_per_block + p->n_per_block) * 2 +
                                     p->waves_m * p->waves_n * 2048);
}

/* Runs a case on OpenCL; returns the number of wrong elements of C (or
 * written outside C), -1 when it could not run (a check failed). */
static int64_t run_mfma(const mcase *tc, int report) {
  return gemm_run_cl(cl, &mfma_harness, tc, report, check_mfma_cl);
}
static void test_mfma_gemm_opencl(void) {
  if (!cl) TC_SKIP("no OpenCL device");
  static const mcase cases[] = {
      /* bf16 32x32x8, 2 x 2 waves, one MFMA tile each, even loop tail */
      {"xdlops:64,64,16,32,32", 1, 64, 64, 64, 0, 0, TC_BF16, TC_F32, 0, 1.0f},
      /* f16 16x16x16, 2 x 2 MFMA tiles per wave, K = 3 tiles (odd tail) */
      {"xdlops:64,64,32,32,32,16", 1, 64, 64, 96, 0, 0, TC_F16, TC_F32, 0, 1.0f},
      /* ragged M, N, K; G = 2; A transposed; bf16 C; C += 0.5 * A * B */
      {"xdlops:64,64,16,32,32", 2, 50, 70, 40, 1, 0, TC_BF16, TC_BF16, 1, 0.5f},
      /* 2 x 1 MFMA tiles per wave of 64 x 32, B transposed, f16 C */
      {"xdlops:128,64,16,64,32", 1, 128, 64, 32, 0, 1, TC_F16, TC_F16, 0, 1.0f},
      /* bf16 16x16x16, one wave; K < one tile */
      {"xdlops:32,32,16,32,32,16", 1, 40, 24, 10, 1, 1, TC_BF16, TC_F32, 0, 1.0f},
      /* the heuristic's XDLOPS choice */
      {NULL, 1, 96, 80, 48, 0, 0, TC_F16, TC_F32, 0, 1.0f},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int64_t bad = run_mfma(&cases[i], 1);
    TC_CHECK(bad == 0, "case %zu: %lld wrong elements", i, (long long)bad);
  }
}

/* A wrong lane layout computes wrong results on the emulation. */
static void test_mfma_wrong_layouts(void) {
  if (!cl) TC_SKIP("no OpenCL device");
  static const mcase c32 = {"xdlops:32,32,8,32,32", 1, 32, 32, 16, 0, 0, TC_BF16, TC_F32, 0, 1};
  static const mcase c16 = {"xdlops:16,16,16,16,16", 1, 16, 16, 16, 0, 0, TC_F16, TC_F32, 0, 1};
  for (int fault = 1; fault <= 3; fault++)
    for (int which = 0; which < 2; which++) {
      tc_test_hooks_set(&(tc_test_hooks){.mfma_fault = fault});
      int64_t bad = run_mfma(which ? &c16 : &c32, 0);
      tc_test_hooks_set(NULL);
      TC_CHECK(bad > 0, "fault %d (%s): the wrong layout verified (%lld wrong)", fault,
               which ? "16x16x16" : "32x32x8", (long long)bad);
    }
  /* and the right ones pass */
  TC_CHECK(run_mfma(&c32, 1) == 0, "32x32x8");
  TC_CHECK(run_mfma(&c16, 1) == 0, "16x16x16");
}

/* ---- XDLOPS parameters ------------------------------------------------------ */

static tc_gemm_shape shape16(int64_t m, int64_t n, int64_t k, tc_dtype t) {
  tc_gemm_shape s;
  memset(&s, 0, sizeof s);
  s.g = 1, s.m = m, s.n = n, s.k = k, s.dtype = t;
  s.a_vec_k = s.a_vec_m = s.b_vec_k = s.b_vec_n = s.c_vec_n = 1;
  return s;
}

static void test_xdlops_params(void) {
  char buf[64];
  TC_STR_LOCAL(err);
  tc_gemm_params p;
  tc_gemm_shape s = shape16(128, 128, 64, TC_F16);
  /* rocMLIR's example: 128,128,16 with 64 x 64 waves: 2 x 2 waves, 256 threads */
  TC_REQUIRE(tc_gemm_params_parse("xdlops:128,128,16,64,64", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(tc_gemm_params_is_xdlops(&p), "not XDLOPS");
  TC_REQUIRE(tc_gemm_params_derive(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(p.block_size, 256);
  TC_CHECK_EQ_INT(p.waves_m, 2);
  TC_CHECK_EQ_INT(p.waves_n, 2);
  TC_CHECK_EQ_INT(p.mfma, TC_MFMA_32X32X8);
  TC_CHECK_EQ_INT(p.a_cluster_k * p.a_cluster_m, 256);
  TC_CHECK_EQ_INT(p.c_per_write, 1);
  TC_CHECK_EQ_INT(tc_gemm_lds_bytes(&p), 2 * 16 * 256 * 2);
  tc_gemm_params_format(&p, buf, sizeof buf);
  TC_CHECK(strcmp(buf, "xdlops:128,128,16,64,64,32") == 0, "formatted %s", buf);
  tc_gemm_params q;
  TC_CHECK(tc_gemm_params_parse(buf, &q, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(q.mfma, TC_MFMA_32X32X8);
  /* 16x16x16 when 32 does not divide the wave tile */
  TC_REQUIRE(tc_gemm_params_parse("xdlops:64,32,16,32,16", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_gemm_params_derive(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(p.mfma, TC_MFMA_16X16X16);
  TC_CHECK_EQ_INT(p.block_size, 256); /* 2 x 2 waves */
  /* rules */
  static const struct {
    const char *cfg;
    tc_dtype t;
    const char *msg;
  } bad[] = {
      {"xdlops:64,64,16,48,32", TC_F16, "is not a multiple of m_per_wave 48"},
      {"xdlops:64,64,4,32,32", TC_F16, "no MFMA instruction fits"},
      {"xdlops:64,64,8,32,32,16", TC_F16, "k_per_block must be a multiple of the MFMA's K 16"},
      {"xdlops:256,256,16,32,32", TC_F16, "block_size must be at most 1024"},
      {"xdlops:64,64,16,32,32", TC_F32, "need f16 or bf16 A and B (got f32)"},
      {"xdlops:128,128,128,64,64", TC_BF16, "exceeds 65536"},
      {"xdlops:256,256,16,256,256", TC_F16, "accumulators per lane must be at most 256"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    tc_gemm_shape t = shape16(256, 256, 256, bad[i].t);
    tc_str_clear(&err);
    int rc = tc_gemm_params_parse(bad[i].cfg, &p, &err);
    if (rc == 0) rc = tc_gemm_params_derive(&p, &t, &err);
    TC_CHECK(rc == -1 && has(tc_str_cstr(&err), bad[i].msg), "%s: \"%s\" lacks \"%s\"", bad[i].cfg, tc_str_cstr(&err),
             bad[i].msg);
  }
  static const struct {
    const char *text, *msg;
  } unparsable[] = {
      {"xdlops:64,64,16,32", "expected 5 or 6"},
      {"xdlops:64,64,16,32,32,8", "must be 32 (32x32x8) or 16 (16x16x16)"},
      {"xdlops:64,64,16,32,32,32,1", "too many fields"},
      {"xdlops:64,x,16,32,32", "field 2 (n_per_block) is not a positive integer"},
  };
  for (size_t i = 0; i < sizeof unparsable / sizeof *unparsable; i++) {
    tc_str_clear(&err);
    TC_CHECK(tc_gemm_params_parse(unparsable[i].text, &p, &err) == -1 &&
                 has(tc_str_cstr(&err), unparsable[i].msg),
             "%s: \"%s\"", unparsable[i].text, tc_str_cstr(&err));
  }
  /* the rule check on a derived set, one field broken */
  TC_REQUIRE(tc_gemm_params_parse("xdlops:64,64,16,32,32", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_gemm_params_derive(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));
  q = p;
  q.block_size = 128;
  TC_CHECK(tc_gemm_params_check(&q, &s, &err) == -1 && has(tc_str_cstr(&err), "block_size must equal"),
           "%s", tc_str_cstr(&err));
  q = p;
  q.c_per_write = 2;
  TC_CHECK(tc_gemm_params_check(&q, &s, &err) == -1 && has(tc_str_cstr(&err), "fixed at 1"), "%s", tc_str_cstr(&err));
  /* candidates: all valid, none for f32 */
  tc_gemm_params *c = NULL;
  int n = tc_gemm_xdlops_candidates(&s, &c);
  TC_CHECK(n > 10, "%d candidates", n);
  for (int i = 0; i < n; i++) {
    TC_CHECK(tc_gemm_params_check(&c[i], &s, &err) == 0, "candidate %d: %s", i, tc_str_cstr(&err));
    TC_CHECK(c[i].block_size >= 64 && c[i].block_size <= 256, "candidate %d: %d threads", i,
             c[i].block_size);
  }
  free(c);
  tc_gemm_shape f32 = shape16(64, 64, 64, TC_F32);
  TC_CHECK(tc_gemm_xdlops_candidates(&f32, &c) == 0, "f32 candidates");
  free(c);
  TC_CHECK(tc_gemm_xdlops_default(&f32, &p, &err) == -1 && has(tc_str_cstr(&err), "f16 or bf16"),
           "%s", tc_str_cstr(&err));
  /* the non-XDLOPS strings are unchanged */
  TC_CHECK(tc_gemm_params_parse("256,128,128,16,4", &p, &err) == -1 &&
               has(tc_str_cstr(&err), "expected 6 comma-separated fields"),
           "%s", tc_str_cstr(&err));
}

/* ---- HIP sources and hipcc ------------------------------------------------- */

/* A row-major GEMM problem (A [M][K], B [K][N], C [M][N]) of dtype t. */
static void gemm_views(int64_t m, int64_t n, int64_t k, tc_view **a, tc_view **b, tc_view **c) {
  int64_t ea[3] = {1, k, m}, sa[3] = {m * k, 1, k};
  int64_t eb[3] = {1, k, n}, sb[3] = {k * n, n, 1};
  int64_t ec[3] = {1, m, n}, sc[3] = {m * n, n, 1};
  *a = tc_view_new(3, ea, sa, NULL);
  *b = tc_view_new(3, eb, sb, NULL);
  *c = tc_view_new(3, ec, sc, NULL);
}

/* The HIP source of a GEMM (caller frees), NULL after a failed check. */
static char *hip_gemm(const char *cfg, tc_dtype t, tc_dtype ct, const char *name) {
  tc_view *a, *b, *c;
  gemm_views(96, 64, 64, &a, &b, &c);
  tc_gemm_problem pb = {a, b, c, t, t, ct, 0, 1.0f};
  tc_gemm_shape s = tc_gemm_problem_shape(&pb);
  tc_gemm_params p;
  TC_STR_LOCAL(err);
  char *src = NULL;
  int ok = tc_gemm_params_parse(cfg, &p, &err) == 0 &&
           tc_gemm_params_derive(&p, &s, &err) == 0;
  TC_CHECK(ok, "%s: %s", cfg, tc_str_cstr(&err));
  tc_gemm_kernel k;
  if (ok) {
    tc_status st = tc_gemm_generate(&pb, &p, TC_TARGET_HIP, name, &k, &err);
    TC_CHECK(st == TC_OK, "%s: %s", cfg, tc_str_cstr(&err));
    if (st == TC_OK) {
      src = k.source;
      k.source = NULL;
      TC_CHECK_EQ_INT(k.smem_bytes, tc_gemm_lds_bytes(&p)); /* no emulation scratch */
    }
  }
  tc_view_free(a);
  tc_view_free(b);
  tc_view_free(c);
  return src;
}

static void test_hip_sources(void) {
  char *fma = hip_gemm("64,32,32,8,2,2", TC_F32, TC_F32, "gemm_fma");
  char *bf = hip_gemm("xdlops:64,64,16,32,32", TC_BF16, TC_F32, "gemm_bf16");
  char *hf = hip_gemm("xdlops:64,64,32,32,32,16", TC_F16, TC_F16, "gemm_f16");
  TC_REQUIRE(fma && bf && hf, "generation failed");
  TC_CHECK(has(fma, "#include <hip/hip_runtime.h>"), "no HIP header");
  TC_CHECK(has(fma, "extern \"C\" __global__ void __launch_bounds__(64) gemm_fma("), "kernel");
  TC_CHECK(has(fma, "__shared__ float a_lds[512] __attribute__((aligned(16)));"), "LDS");
  TC_CHECK(has(fma, "__syncthreads();"), "barrier");
  TC_CHECK(has(fma, "tc_raw_buffer_load_f32(A_rsrc, "), "buffer loads");
  TC_CHECK(has(bf, "__builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a_frag[0], b_frag[0], c_acc[0], 0, 0, 0)"),
           "bf16 MFMA");
  TC_CHECK(has(bf, "__shared__ unsigned short a_lds[2048] __attribute__((aligned(16)));"), "16-bit LDS");
  TC_CHECK(has(bf, "tc_f32x16 c_acc[1];"), "accumulators");
  TC_CHECK(has(bf, "(unsigned short)tc_raw_buffer_load_i16(A_rsrc, "), "raw buffer loads");
  TC_CHECK(!has(bf, "tc_mfma_emu"), "emulation in the HIP source");
  TC_CHECK(has(hf, "__builtin_amdgcn_mfma_f32_16x16x16f16(__builtin_bit_cast(tc_f16x4, a_frag[1]), "
                   "__builtin_bit_cast(tc_f16x4, b_frag[1]), c_acc[3], 0, 0, 0)"),
           "f16 MFMA");
  TC_CHECK(has(hf, "tc_f32x4 c_acc[4];"), "accumulators");
  TC_CHECK(has(hf, "C[") && has(hf, "tc_f32_to_f16(c_acc["), "f16 C store");
  free(fma);
  free(bf);
  free(hf);

  /* XDLOPS is AMD's: not for CUDA; mixed input dtypes are refused */
  tc_view *a, *b, *c;
  gemm_views(64, 64, 64, &a, &b, &c);
  tc_gemm_problem pb = {a, b, c, TC_F16, TC_F16, TC_F32, 0, 1.0f};
  tc_gemm_shape s = tc_gemm_problem_shape(&pb);
  tc_gemm_params p;
  TC_STR_LOCAL(err);
  TC_REQUIRE(tc_gemm_params_parse("xdlops:64,64,16,32,32", &p, &err) == 0 &&
                 tc_gemm_params_derive(&p, &s, &err) == 0,
             "%s", tc_str_cstr(&err));
  tc_gemm_kernel k;
  TC_CHECK(tc_gemm_generate(&pb, &p, TC_TARGET_CUDA, NULL, &k, &err) ==
                   TC_ERR_UNSUPPORTED &&
               has(tc_str_cstr(&err), "XDLOPS (MFMA) kernels are for AMD GPUs"),
           "%s", tc_str_cstr(&err));
  pb.b_dtype = TC_BF16;
  TC_CHECK(tc_gemm_generate(&pb, &p, TC_TARGET_HIP, NULL, &k, &err) ==
                   TC_ERR_UNSUPPORTED &&
               has(tc_str_cstr(&err), "both f16 or both bf16"),
           "%s", tc_str_cstr(&err));
  TC_CHECK(tc_gemm_generate(&pb, &p, (tc_target)42, NULL, &k, &err) ==
                   TC_ERR_UNSUPPORTED &&
               has(tc_str_cstr(&err), "unknown target 42"),
           "%s", tc_str_cstr(&err));
  tc_view_free(a);
  tc_view_free(b);
  tc_view_free(c);
}

/* Does the n bytes at p contain the string s? */
static int contains(const char *p, size_t n, const char *s) {
  size_t len = strlen(s);
  for (size_t i = 0; i + len <= n; i++)
    if (memcmp(p + i, s, len) == 0) return 1;
  return 0;
}

/* hipcc --genco of one translation unit for arch; checks it compiled to
 * a code object for arch (an offload bundle of an amdgcn ELF). */
static void hipcc_ok(const char *what, const char *src, const char *arch) {
  char *co = NULL;
  size_t n = 0;
  tc_str e;
  tc_str_init(&e);
  tc_status st = tc_hip_compile(src, arch, &co, &n, &e);
  TC_CHECK(st == TC_OK, "%s for %s: %s: %.3000s", what, arch, tc_status_name(st), tc_str_cstr(&e));
  if (st == TC_OK) {
    char id[64];
    snprintf(id, sizeof id, "amdgcn-amd-amdhsa--%s", arch);
    TC_CHECK(n > 64 && (memcmp(co, "__CLANG_OFFLOAD_BUNDLE__", 24) == 0 ||
                        memcmp(co, "\177ELF", 4) == 0),
             "%s: %zu bytes, neither an offload bundle nor ELF", what, n);
    TC_CHECK(contains(co, n, id) && contains(co, n, "\177ELF"), "%s: no %s code object", what, id);
  }
  free(co);
  tc_str_free(&e);
}

static void test_hipcc_gemms(void) {
  if (!have_hipcc) TC_SKIP("hipcc not found (apt-get install hipcc libamdhip64-dev rocm-device-libs)");
  char *fma = hip_gemm("64,32,32,8,2,2", TC_F32, TC_F32, "gemm_fma");
  char *fma16 = hip_gemm("64,64,64,8,4,4", TC_F16, TC_F16, "gemm_fma_f16");
  char *bf = hip_gemm("xdlops:64,64,16,32,32", TC_BF16, TC_F32, "gemm_mfma_bf16");
  char *hf = hip_gemm("xdlops:64,64,32,32,32,16", TC_F16, TC_F16, "gemm_mfma_f16");
  char *bf16 = hip_gemm("xdlops:128,64,32,64,32,16", TC_BF16, TC_BF16, "gemm_mfma_bf16_16");
  TC_REQUIRE(fma && fma16 && bf && hf && bf16, "generation failed");
  tc_str tu;
  tc_str_init(&tu);
  tc_str_printf(&tu, "%s\n%s\n%s\n%s\n%s\n", fma, fma16, bf, hf, bf16);
  hipcc_ok("GEMMs (FMA f32, FMA f16, MFMA bf16 32x32x8, f16 16x16x16, bf16 16x16x16)",
           tc_str_cstr(&tu), "gfx90a");
  hipcc_ok("GEMMs", tc_str_cstr(&tu), "gfx940");
  tc_str_free(&tu);
  free(fma);
  free(fma16);
  free(bf);
  free(hf);
  free(bf16);
}

static tc_conv_plan *hip_plan(tc_conv_dir dir, tc_dtype t, const char *cfg, int stride) {
  tc_conv_problem p;
  tc_conv_problem_init(&p);
  p.dir = dir;
  p.n = 2, p.c = 8, p.h = p.w = 10, p.k = 16, p.y = p.x = 3;
  p.pad_h_l = p.pad_h_r = p.pad_w_l = p.pad_w_r = 1;
  p.stride_h = p.stride_w = stride;
  p.dtype = t;
  tc_gemm_params prm;
  TC_STR_LOCAL(err);
  if (cfg) TC_CHECK(tc_gemm_params_parse(cfg, &prm, &err) == 0, "%s", tc_str_cstr(&err));
  tc_conv_plan *plan = NULL;
  tc_status st = tc_conv_plan_make(&p, cfg ? &prm : NULL, TC_TARGET_HIP, &plan, &err);
  TC_CHECK(st == TC_OK, "conv plan: %s", tc_str_cstr(&err));
  return plan;
}

static void compile_plan(const char *what, tc_conv_plan *plan, int both) {
  if (!plan) return;
  tc_str tu;
  tc_str_init(&tu);
  for (int i = 0; i < plan->nsteps; i++) tc_str_printf(&tu, "%s\n", plan->steps[i].kernel.source);
  hipcc_ok(what, tc_str_cstr(&tu), "gfx90a");
  if (both) hipcc_ok(what, tc_str_cstr(&tu), "gfx940");
  tc_str_free(&tu);
}

static void test_hipcc_conv(void) {
  if (!have_hipcc) TC_SKIP("hipcc not found");
  /* forward, f32 (the FMA GEMM) */
  tc_conv_plan *plan = hip_plan(TC_CONV_FWD, TC_F32, NULL, 1);
  if (plan) {
    TC_CHECK(plan->target == TC_TARGET_HIP && plan->nsteps >= 1, "plan");
    TC_CHECK(has(plan->steps[0].kernel.source, "__launch_bounds__"), "not HIP");
  }
  compile_plan("conv fwd f32", plan, 1);
  tc_conv_plan_free(plan);
  /* forward, f16 with XDLOPS (MFMA) parameters */
  plan = hip_plan(TC_CONV_FWD, TC_F16, "xdlops:32,64,16,32,32", 1);
  if (plan) TC_CHECK(has(plan->steps[0].kernel.source, "__builtin_amdgcn_mfma_f32_32x32x8f16"), "MFMA");
  compile_plan("conv fwd f16 XDLOPS", plan, 1);
  tc_conv_plan_free(plan);
  /* backward-data with stride 2: several GEMMs and the zero-init kernel */
  plan = hip_plan(TC_CONV_BWD_DATA, TC_F32, NULL, 2);
  compile_plan("conv bwd-data stride 2", plan, 0);
  tc_conv_plan_free(plan);
}

/* Example fusions through tc_compile(TC_TARGET_HIP): every one prints; a
 * few compile with hipcc (one translation unit per arch). */
static void test_hip_examples(void) {
  static const char *names[] = {"gsg_copy_6", "pointwise_fma", "cast_f16", "cast_bf16",
                                "transpose_xor"};
  tc_str tu;
  tc_str_init(&tu);
  for (int i = 0; i < tc_example_count(); i++) {
    const tc_example *e = tc_example_get(i);
    int pick = 0;
    for (size_t j = 0; j < sizeof names / sizeof *names; j++) pick |= strcmp(e->name, names[j]) == 0;
    tc_fusion *f = e->build();
    tc_compile_options o = {TC_TARGET_HIP, NULL, e->name};
    tc_status st;
    tc_kernel *k = tc_compile(f, &o, &st);
    TC_CHECK(k != NULL, "%s: %s: %s", e->name, tc_status_name(st), tc_fusion_error(f));
    if (k) {
      const char *src = tc_kernel_source(k);
      TC_CHECK(has(src, "for HIP C++") && has(src, "extern \"C\" __global__"), "%s: not HIP",
               e->name);
      if (pick) tc_str_printf(&tu, "%s\n", src);
      tc_kernel_free(k);
    }
    tc_fusion_free(f);
  }
  if (!have_hipcc) {
    tc_str_free(&tu);
    TC_SKIP("hipcc not found (the HIP sources were generated)");
  }
  hipcc_ok("examples", tc_str_cstr(&tu), "gfx90a");
  hipcc_ok("examples", tc_str_cstr(&tu), "gfx940");
  tc_str_free(&tu);
}

/* tc_kernel_build / tc_kernel_run of a HIP kernel; gfx942 is emitted. */
static void test_hip_kernel_api(void) {
  const tc_example *e = tc_example_find("transpose");
  TC_REQUIRE(e != NULL, "no transpose example");
  tc_fusion *f = e->build();
  tc_compile_options o = {TC_TARGET_HIP, NULL, "transpose_hip"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_REQUIRE(k != NULL, "%s", tc_fusion_error(f));
  TC_CHECK(has(tc_kernel_source(k), "reinterpret_cast<float*>(tc_smem + "), "LDS carving");
  if (have_hipcc) {
    st = tc_kernel_build(k, NULL); /* hipcc for the default gfx90a */
    TC_CHECK(st == TC_OK, "build: %s: %.2000s", tc_status_name(st), tc_kernel_error(k));
  } else {
    st = tc_kernel_build(k, NULL);
    TC_CHECK(st == TC_ERR_UNSUPPORTED && has(tc_kernel_error(k), "hipcc not found"), "%s",
             tc_kernel_error(k));
  }
  /* running: "no AMD GPU: ..." here; where there is one, the result of
   * the reference */
  void **bufs = tc_params_alloc(f, 1), **want = tc_params_alloc(f, 1);
  tc_str why;
  tc_str_init(&why);
  int gpu = tc_hip_available(&why);
  st = tc_kernel_run(k, bufs, NULL, NULL);
  if (!gpu) {
    TC_CHECK(st == TC_ERR_NO_DEVICE, "run: %s", tc_status_name(st));
    TC_CHECK(has(tc_kernel_error(k), "no AMD GPU: "), "message: %s", tc_kernel_error(k));
  } else {
    TC_CHECK(st == TC_OK, "run: %s: %s", tc_status_name(st), tc_kernel_error(k));
    double max_err = 0;
    TC_STR_LOCAL(msg);
    tc_reference_run(f, want);
    TC_CHECK(st != TC_OK || tc_outputs_compare(f, bufs, want, &max_err, &msg) == 0,
             "transpose on the AMD GPU: %s", tc_str_cstr(&msg));
  }
  tc_str_free(&why);
  tc_params_free(f, bufs);
  tc_params_free(f, want);
  tc_kernel_free(k);
  /* gfx942 and gfx950: the source is emitted; Debian's ROCm 5.2 cannot
   * compile it, and the message names the first ROCm that can (AMD's
   * release notes: MI300X, gfx942, from ROCm 6.0; MI350X / MI355X, gfx950,
   * from ROCm 7.0) */
  static const struct {
    const char *arch, *rocm;
  } newer[] = {{"gfx942", "ROCm 6.0 or newer"}, {"gfx950", "ROCm 7.0 or newer"}};
  for (int i = 0; i < 2; i++) {
    o.arch = newer[i].arch;
    k = tc_compile(f, &o, &st);
    TC_REQUIRE(k != NULL, "%s: %s", o.arch, tc_fusion_error(f));
    if (have_hipcc) {
      st = tc_kernel_build(k, NULL);
      TC_CHECK(st == TC_OK || (st == TC_ERR_UNSUPPORTED && has(tc_kernel_error(k), o.arch) &&
                               has(tc_kernel_error(k), "does not support") &&
                               has(tc_kernel_error(k), newer[i].rocm)),
               "%s: %s: %s", o.arch, tc_status_name(st), tc_kernel_error(k));
    }
    tc_kernel_free(k);
  }
  /* a bad arch is an argument error, not a hipcc run */
  o.arch = "sm_90a";
  k = tc_compile(f, &o, &st);
  TC_REQUIRE(k != NULL, "%s", tc_fusion_error(f));
  st = tc_kernel_build(k, NULL);
  TC_CHECK(st == TC_ERR_ARGUMENT && has(tc_kernel_error(k), "not an AMD GPU architecture"), "%s: %s",
           tc_status_name(st), tc_kernel_error(k));
  tc_kernel_free(k);
  tc_fusion_free(f);
}

static void test_hip_describe(void) {
  tc_str d;
  tc_str_init(&d);
  tc_hip_describe(&d);
  const char *t = tc_str_cstr(&d);
  TC_CHECK(has(t, "HIP compiler: "), "%s", t);
  TC_CHECK(has(t, "HIP device: "), "%s", t);
  if (have_hipcc) {
    TC_CHECK(has(t, "HIP archs: compiles for gfx90a, gfx940"), "%s", t);
    char ver[64];
    if (tc_hip_hipcc_version(ver, sizeof ver) && strncmp(ver, "5.", 2) == 0)
      TC_CHECK(has(t, "not supported by this hipcc: gfx942, gfx950"), "%s", t);
  }
  tc_str m;
  tc_str_init(&m);
  if (!tc_hip_available(&m)) TC_CHECK(has(tc_str_cstr(&m), "no AMD GPU: "), "%s", tc_str_cstr(&m));
  tc_str_free(&m);
  tc_str_free(&d);
}

int main(void) {
  cl = open_cl_or_null();
  have_hipcc = tc_hip_find_hipcc(hipcc_path, sizeof hipcc_path);
  TC_RUN(test_mfma_layouts);
  TC_RUN(test_xdlops_params);
  TC_RUN(test_mfma_gemm_opencl);
  TC_RUN(test_mfma_wrong_layouts);
  TC_RUN(test_hip_sources);
  TC_RUN(test_hipcc_gemms);
  TC_RUN(test_hipcc_conv);
  TC_RUN(test_hip_examples);
  TC_RUN(test_hip_kernel_api);
  TC_RUN(test_hip_describe);
  if (cl) tc_cl_close(cl);
  TC_MAIN_END();
}
