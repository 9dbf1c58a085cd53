/* test_matmul_config.c - perf-config strings onto the fusion matmul's
 * tiles (src/tune/matmul_config.c) and back: tiles derived by hand from
 * rocMLIR's rules (a thread's 2 x 2 sub-tiles of MPT x NPT, BS threads),
 * the mma: form, the rules' messages, the refused forms, the inverse and
 * its round trip, and every heuristic candidate of the template GEMM
 * mapping onto tiles with its own block size. */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tune/matmul_config.h"

static int has(const char *s, const char *part) { return s && strstr(s, part) != NULL; }

#define CHECK_BUF(buf, want) \
  TC_CHECK(strcmp((buf), (want)) == 0, "got \"%s\", expected \"%s\"", (buf), (want))

/* Parses cfg and maps it: 0 with *t, or -1 with err. */
static int map(const char *cfg, tc_matmul_tiles *t, tc_str *err) {
  tc_gemm_params p;
  memset(&p, 0, sizeof p);
  if (tc_gemm_params_parse(cfg, &p, err)) return -1;
  return tc_gemm_params_matmul_tiles(&p, t, err);
}

static void check_tiles(const char *cfg, int64_t bm, int64_t bn, int64_t bk, int64_t tm, int64_t tn,
                        tc_matmul_macro macro) {
  tc_matmul_tiles t;
  TC_STR_LOCAL(err);
  TC_REQUIRE(map(cfg, &t, &err) == 0, "%s: %s", cfg, tc_str_cstr(&err));
  TC_CHECK(t.bm == bm && t.bn == bn && t.bk == bk && t.tm == tm && t.tn == tn && t.macro == macro,
           "%s: got {%lld, %lld, %lld, %lld, %lld, %d}, want {%lld, %lld, %lld, %lld, %lld, %d}", cfg,
           (long long)t.bm, (long long)t.bn, (long long)t.bk, (long long)t.tm, (long long)t.tn,
           (int)t.macro, (long long)bm, (long long)bn, (long long)bk, (long long)tm, (long long)tn,
           (int)macro);
}

/* By hand: 64,32,32,4,2,2 is BS 64, MPB 32, NPB 32, KPB 4, MPT 2, NPT 2.
 * rocMLIR's thread owns 2 x 2 sub-tiles of 2 x 2, so 4 x 4 accumulators;
 * the block tile is 32 x 32, K tiles of 4; threads (32 / 4) * (32 / 4) =
 * 64 = BS.  rocMLIR's example 256,128,128,16,4,4: 8 x 8 accumulators,
 * (128 / 8)^2 = 256 threads. */
static void test_fma_form(void) {
  check_tiles("64,32,32,4,2,2", 32, 32, 4, 4, 4, TC_MACRO_FMA);
  check_tiles("256,128,128,16,4,4", 128, 128, 16, 8, 8, TC_MACRO_FMA);
  check_tiles("64,32,64,8,2,4", 32, 64, 8, 4, 8, TC_MACRO_FMA);   /* 8 x 8 = 64 threads */
  check_tiles("1,2,2,1,1,1", 2, 2, 1, 2, 2, TC_MACRO_FMA);
}

static void test_mma_form(void) {
  check_tiles("mma:64,32,16,32,16", 64, 32, 16, 32, 16, TC_MACRO_MMA_M16N8K16);
  check_tiles("mma:32,32,16,16,16", 32, 32, 16, 16, 16, TC_MACRO_MMA_M16N8K16);
}

/* xdlops:MPB,NPB,KPB,MPW,NPW[,MFMA]: MPW x NPW each wavefront's tile;
 * without the sixth field rocMLIR's rule picks 32x32x8 where the wave
 * tile is a multiple of 32 x 32 and KPB of 8, else 16x16x16. */
static void test_xdlops_form(void) {
  check_tiles("xdlops:64,64,16,32,32", 64, 64, 16, 32, 32, TC_MACRO_MFMA_32X32X8);
  check_tiles("xdlops:64,64,16,32,32,16", 64, 64, 16, 32, 32, TC_MACRO_MFMA_16X16X16);
  check_tiles("xdlops:32,32,16,16,16", 32, 32, 16, 16, 16, TC_MACRO_MFMA_16X16X16);
  check_tiles("xdlops:64,32,8,32,32,32", 64, 32, 8, 32, 32, TC_MACRO_MFMA_32X32X8);
}

static void refused(const char *cfg, const char *part) {
  tc_matmul_tiles t;
  TC_STR_LOCAL(err);
  TC_CHECK(map(cfg, &t, &err) == -1, "%s accepted", cfg);
  TC_CHECK(has(tc_str_cstr(&err), part), "%s: %s", cfg, tc_str_cstr(&err));
}

/* The rules, with tc_gemm_params_derive's messages. */
static void test_rules(void) {
  /* BS must be (32 / 4) * (32 / 4) = 64 */
  refused("32,32,32,4,2,2", "block_size must equal m_level0 * m_level1 * n_level0 * n_level1 = "
                            "(m_per_block / (2*m_per_thread)) * (n_per_block / (2*n_per_thread)) = "
                            "8*8 = 64 (got 32)");
  refused("64,32,32,4,2,3", "n_per_block 32 is not a multiple of n_per_thread*2 = 6");
  refused("16,20,32,4,4,4", "m_per_block 20 is not a multiple of m_per_thread*2 = 8");
  refused("1,32,32,4,16,16", "4 * m_per_thread * n_per_thread accumulators per thread must be at most 256");
  refused("2048,128,128,4,1,1", "block_size must be at most 1024 threads (got 2048)");
  refused("mma:64,32,16,24,16", "m_per_warp must be a multiple of the mma tile's M (16: m16n8k16)");
  refused("mma:64,32,8,32,16", "k_per_block must be a multiple of the mma tile's K (16: m16n8k16)");
  refused("mma:64,32,16,48,16", "m_per_block 64 is not a multiple of m_per_warp 48");
  /* the forms the fused GEMM does not take name the ones it does */
  const char *forms = "the fused GEMM takes the perf configs BS,MPB,NPB,KPB,MPT,NPT (FMA), "
                      "mma:MPB,NPB,KPB,MPW,NPW (mma.sync m16n8k16) and "
                      "xdlops:MPB,NPB,KPB,MPW,NPW[,MFMA] (MFMA)";
  /* no MFMA fits a 24 x 24 wave tile (32x32x8 needs multiples of 32, 16x16x16 of 16) */
  refused("xdlops:48,48,16,24,24", "no MFMA instruction fits xdlops tiles 48,48,16,24,24");
  setenv("TILEC_EXPERIMENTAL_WGMMA", "1", 1); /* (else the parser refuses wgmma:) */
  refused("wgmma:128,128,64", forms);
  refused("tma:128,256,4", "the Hopper forms");
  refused("tmaws:128,256,4", forms);
  /* malformed strings: the parser's messages */
  refused("1,2,3", "expected 6 comma-separated fields (BS,MPB,NPB,KPB,MPT,NPT), got 3");
  refused("mma:1,2", "expected 5 comma-separated fields after mma:");
}

/* The inverse, and that each string maps back. */
static void test_inverse(void) {
  char buf[64];
  tc_matmul_tiles t = {32, 32, 4, 4, 4, TC_MACRO_FMA};
  TC_REQUIRE(tc_matmul_tiles_perf_config(&t, buf, sizeof buf) == 0, "no form");
  CHECK_BUF(buf, "64,32,32,4,2,2");
  tc_matmul_tiles big = {64, 128, 16, 8, 4, TC_MACRO_FMA}; /* (64/8)*(128/4) = 256 threads */
  TC_REQUIRE(tc_matmul_tiles_perf_config(&big, buf, sizeof buf) == 0, "no form");
  CHECK_BUF(buf, "256,64,128,16,4,2");
  tc_matmul_tiles mma = {64, 32, 16, 32, 16, TC_MACRO_MMA_M16N8K16};
  TC_REQUIRE(tc_matmul_tiles_perf_config(&mma, buf, sizeof buf) == 0, "no form");
  CHECK_BUF(buf, "mma:64,32,16,32,16");
  tc_matmul_tiles x16 = {32, 32, 16, 16, 16, TC_MACRO_MFMA_16X16X16};
  TC_REQUIRE(tc_matmul_tiles_perf_config(&x16, buf, sizeof buf) == 0, "no form");
  CHECK_BUF(buf, "xdlops:32,32,16,16,16,16");
  /* odd per-thread tiles have no rocMLIR form (its 2 x 2 sub-tiles) */
  tc_matmul_tiles odd = {48, 24, 5, 3, 2, TC_MACRO_FMA};
  TC_CHECK(tc_matmul_tiles_perf_config(&odd, buf, sizeof buf) == -1 && buf[0] == 0, "got %s", buf);
  tc_matmul_tiles one = {1, 1, 1, 1, 1, TC_MACRO_FMA};
  TC_CHECK(tc_matmul_tiles_perf_config(&one, buf, sizeof buf) == -1, "got %s", buf);
  /* 64 x 64 threads: 4096 > 1024 */
  tc_matmul_tiles wide = {128, 128, 8, 2, 2, TC_MACRO_FMA};
  TC_CHECK(tc_matmul_tiles_perf_config(&wide, buf, sizeof buf) == -1, "got %s", buf);
  tc_matmul_tiles bad_mma = {32, 32, 16, 16, 12, TC_MACRO_MMA_M16N8K16};
  TC_CHECK(tc_matmul_tiles_perf_config(&bad_mma, buf, sizeof buf) == -1, "got %s", buf);
}

/* Every candidate of the template GEMM's heuristic (FMA and mma) maps
 * onto tiles whose thread count is the candidate's derived block size,
 * and back onto the same string. */
static void test_candidates_map(void) {
  tc_gemm_shape s;
  memset(&s, 0, sizeof s);
  s.g = 1, s.m = 300, s.n = 200, s.k = 100, s.dtype = TC_F16;
  s.a_vec_k = s.a_vec_m = s.b_vec_k = s.b_vec_n = s.c_vec_n = 1;
  tc_gemm_params *c = NULL;
  int n = tc_gemm_candidates_for(&s, TC_TARGET_CUDA, "sm_80", &c), nmma = 0;
  TC_REQUIRE(n > 0, "no candidates");
  for (int i = 0; i < n; i++) {
    tc_matmul_tiles t;
    char cfg[64], back[64];
    TC_STR_LOCAL(err);
    tc_gemm_params_format(&c[i], cfg, sizeof cfg);
    TC_REQUIRE(tc_gemm_params_matmul_tiles(&c[i], &t, &err) == 0, "%s: %s", cfg, tc_str_cstr(&err));
    int64_t threads = t.macro ? (t.bm / t.tm) * (t.bn / t.tn) * 32 : (t.bm / t.tm) * (t.bn / t.tn);
    TC_CHECK(threads == c[i].block_size, "%s: %lld threads, block size %d", cfg, (long long)threads,
             c[i].block_size);
    TC_CHECK(tc_matmul_tiles_perf_config(&t, back, sizeof back) == 0 && strcmp(back, cfg) == 0,
             "%s came back as %s", cfg, back);
    nmma += t.macro == TC_MACRO_MMA_M16N8K16;
  }
  TC_CHECK(nmma > 0 && nmma < n, "%d mma of %d", nmma, n);
  free(c);
}

int main(void) {
  TC_RUN(test_fma_form);
  TC_RUN(test_mma_form);
  TC_RUN(test_xdlops_form);
  TC_RUN(test_rules);
  TC_RUN(test_inverse);
  TC_RUN(test_candidates_map);
  TC_MAIN_END();
}
