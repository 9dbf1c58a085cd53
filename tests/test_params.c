/* test_params.c - the gridwise GEMM's tunable parameters: derivation rules
 * (hand-derived values, rocMLIR's example included), every rule's error
 * message, perf-config strings, the padded-FLOP count and the heuristic's
 * candidate order on hand-computed examples. */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tune/params.h"

#define CHECK_BUF(buf, want) \
  TC_CHECK(strcmp((buf), (want)) == 0, "got \"%s\", expected \"%s\"", (buf), (want))

static int has(const char *s, const char *part) { return s && strstr(s, part) != NULL; }

static tc_gemm_shape shape(int64_t g, int64_t m, int64_t n, int64_t k) {
  tc_gemm_shape s;
  memset(&s, 0, sizeof s);
  s.g = g, s.m = m, s.n = n, s.k = k;
  s.dtype = TC_F32;
  s.a_vec_k = s.a_vec_m = s.b_vec_k = s.b_vec_n = s.c_vec_n = 1;
  return s;
}

static tc_gemm_params parsed(const char *cfg) {
  tc_gemm_params p;
  TC_STR_LOCAL(err);
  memset(&p, 0, sizeof p);
  if (tc_gemm_params_parse(cfg, &p, &err)) fprintf(stderr, "parse %s: %s\n", cfg, tc_str_cstr(&err));
  return p;
}

/* rocMLIR's example: 256,128,128,16,4,4 gives levels 4/4/4/4 (4*4*4*2 ==
 * 128) and A/B copy clusters K=2 x M=128 with one element per access,
 * exactly the values rocMLIR's tuning rules list. */
static void test_rocmlir_example(void) {
  tc_gemm_shape s = shape(1, 1024, 1024, 1024);
  tc_gemm_params p = parsed("256,128,128,16,4,4");
  TC_STR_LOCAL(err);
  TC_REQUIRE(tc_gemm_params_derive(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(p.m_level0, 4);
  TC_CHECK_EQ_INT(p.m_level1, 4);
  TC_CHECK_EQ_INT(p.n_level0, 4);
  TC_CHECK_EQ_INT(p.n_level1, 4);
  TC_CHECK_EQ_INT(p.m_per_thread * p.m_level0 * p.m_level1 * 2, 128);
  TC_CHECK_EQ_INT(p.m_level0 * p.m_level1 * p.n_level0 * p.n_level1, 256);
  TC_CHECK_EQ_INT(p.a_cluster_k, 2);
  TC_CHECK_EQ_INT(p.a_cluster_m, 128);
  TC_CHECK_EQ_INT(p.b_cluster_k, 2);
  TC_CHECK_EQ_INT(p.b_cluster_n, 128);
  TC_CHECK_EQ_INT(p.a_src_per_read, 1);
  TC_CHECK_EQ_INT(p.a_dst_per_write, 1);
  TC_CHECK_EQ_INT(p.b_src_per_read, 1);
  TC_CHECK_EQ_INT(p.b_dst_per_write, 1);
  TC_CHECK_EQ_INT(p.c_per_write, 1);
  TC_CHECK_EQ_INT(p.a_read_dim, TC_GEMM_READ_MN);
  TC_CHECK_EQ_INT(tc_gemm_lds_bytes(&p), 2 * 16 * (128 + 128) * 4);
  TC_CHECK(tc_gemm_params_check(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));
}

/* Vector widths steer the copies: A row-major [K][M] (M contiguous, 4
 * floats), B stored [N][K] (K contiguous), C with N contiguous. */
static void test_vector_widths(void) {
  tc_gemm_shape s = shape(1, 1024, 1024, 1024);
  s.a_vec_m = 4, s.a_vec_k = 1;
  s.b_vec_k = 4, s.b_vec_n = 1;
  s.c_vec_n = 4;
  tc_gemm_params p = parsed("256,128,128,16,4,4");
  TC_STR_LOCAL(err);
  TC_REQUIRE(tc_gemm_params_derive(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));
  /* A: 16*128/256 = 8 per thread; 4 along M, 2 along K */
  TC_CHECK_EQ_INT(p.a_read_dim, TC_GEMM_READ_MN);
  TC_CHECK_EQ_INT(p.a_cluster_k, 8);
  TC_CHECK_EQ_INT(p.a_cluster_m, 32);
  TC_CHECK_EQ_INT(p.a_src_per_read, 4);
  TC_CHECK_EQ_INT(p.a_dst_per_write, 4);
  /* B: 4 along K, 2 along N */
  TC_CHECK_EQ_INT(p.b_read_dim, TC_GEMM_READ_K);
  TC_CHECK_EQ_INT(p.b_cluster_k, 4);
  TC_CHECK_EQ_INT(p.b_cluster_n, 64);
  TC_CHECK_EQ_INT(p.b_src_per_read, 4);
  TC_CHECK_EQ_INT(p.b_dst_per_write, 2);
  TC_CHECK_EQ_INT(p.c_per_write, 4);
  /* the same set against narrower views breaks the read-width rule */
  tc_gemm_shape narrow = s;
  narrow.a_vec_m = 2;
  TC_CHECK(tc_gemm_params_check(&p, &narrow, &err) == -1, "accepted");
  TC_CHECK(has(tc_str_cstr(&err), "a_src_per_read 4 exceeds the widest legal vector read of A along M (2)"),
           "%s", tc_str_cstr(&err));
}

/* Smaller sets: 64,64,64,8,4,4 -> 8 clusters per dim = 4 x 2; and a set
 * where one element along M per thread cannot work (8 per thread, KPB 4):
 * the slice becomes 4 along K x 2 along M. */
static void test_other_sets(void) {
  tc_gemm_shape s = shape(1, 64, 64, 64);
  tc_gemm_params p = parsed("64,64,64,8,4,4");
  TC_STR_LOCAL(err);
  TC_REQUIRE(tc_gemm_params_derive(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(p.m_level0, 4);
  TC_CHECK_EQ_INT(p.m_level1, 2);
  TC_CHECK_EQ_INT(p.n_level0, 4);
  TC_CHECK_EQ_INT(p.n_level1, 2);
  TC_CHECK_EQ_INT(p.a_cluster_k, 1);
  TC_CHECK_EQ_INT(p.a_cluster_m, 64);

  p = parsed("64,128,32,4,4,4");
  TC_REQUIRE(tc_gemm_params_derive(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(p.m_level0, 4);
  TC_CHECK_EQ_INT(p.m_level1, 4);
  TC_CHECK_EQ_INT(p.n_level0, 4);
  TC_CHECK_EQ_INT(p.n_level1, 1);
  TC_CHECK_EQ_INT(p.a_cluster_k, 1);
  TC_CHECK_EQ_INT(p.a_cluster_m, 64);
  TC_CHECK_EQ_INT(p.a_src_per_read, 1);
  TC_CHECK_EQ_INT(p.a_dst_per_write, 2);
  TC_CHECK_EQ_INT(p.b_cluster_k, 2);
  TC_CHECK_EQ_INT(p.b_cluster_n, 32);

  /* 2 clusters per dim: level0 2, level1 1 */
  p = parsed("64,32,128,8,8,2");
  /* m: 32/(2*8) = 2 -> 2 x 1; n: 128/4 = 32 -> 4 x 8; 2*32 = 64 threads */
  TC_REQUIRE(tc_gemm_params_derive(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(p.m_level0, 2);
  TC_CHECK_EQ_INT(p.m_level1, 1);
  TC_CHECK_EQ_INT(p.n_level0, 4);
  TC_CHECK_EQ_INT(p.n_level1, 8);
  /* derivation overwrites stale derived fields */
  p.m_level0 = 99, p.a_cluster_k = 7;
  TC_REQUIRE(tc_gemm_params_derive(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(p.m_level0, 2);
  TC_CHECK_EQ_INT(p.a_cluster_k * p.a_cluster_m, 64);
}

static void expect_derive_error(const char *cfg, const char *msg) {
  tc_gemm_shape s = shape(1, 256, 256, 256);
  tc_gemm_params p = parsed(cfg), before;
  TC_STR_LOCAL(err);
  before = p;
  TC_CHECK(tc_gemm_params_derive(&p, &s, &err) == -1, "%s accepted", cfg);
  TC_CHECK(has(tc_str_cstr(&err), msg), "%s: message \"%s\" lacks \"%s\"", cfg, tc_str_cstr(&err), msg);
  TC_CHECK(memcmp(&p, &before, sizeof p) == 0, "%s: params changed on failure", cfg);
}

static void test_derive_errors(void) {
  expect_derive_error("64,100,64,8,4,4",
                      "m_per_thread * m_level0 * m_level1 * 2 must equal m_per_block: m_per_block "
                      "100 is not a multiple of m_per_thread*2 = 8");
  expect_derive_error("64,64,60,8,4,4",
                      "n_per_thread * n_level0 * n_level1 * 2 must equal n_per_block: n_per_block "
                      "60 is not a multiple of n_per_thread*2 = 8");
  expect_derive_error("128,64,64,8,4,4",
                      "block_size must equal m_level0 * m_level1 * n_level0 * n_level1 = "
                      "(m_per_block / (2*m_per_thread)) * (n_per_block / (2*n_per_thread)) = 8*8 "
                      "= 64 (got 128)");
  expect_derive_error("256,128,128,1,4,4",
                      "k_per_block * m_per_block must be a multiple of block_size for the A copy");
  expect_derive_error("256,128,128,64,4,4",
                      "shared memory 2 * k_per_block * (m_per_block + n_per_block) * 4 = 131072 "
                      "bytes exceeds 65536");
  expect_derive_error("64,256,128,8,16,8",
                      "4 * m_per_thread * n_per_thread accumulators per thread must be at most 256 "
                      "(got 512)");
  expect_derive_error("2048,512,512,8,4,4", "block_size must be at most 1024 threads (got 2048)");
  expect_derive_error("64,64,64,512,4,4", "each thread would copy 512 elements of A per tile");
  tc_gemm_params p;
  memset(&p, 0, sizeof p);
  TC_STR_LOCAL(err);
  TC_CHECK(tc_gemm_params_derive(&p, NULL, &err) == -1, "zero params accepted");
  TC_CHECK(has(tc_str_cstr(&err), "block_size must be between 1 and 65536 (got 0)"), "%s", tc_str_cstr(&err));
  /* a shape given (M set) but not a GEMM's: every kind refuses it before
   * its rules divide by it (found by fuzz_gemm_config: G = 0 passed) */
  static const char *const kinds[] = {"64,64,64,8,4,4", "tmaws:128,128,4", "mma:64,64,32,32,32"};
  tc_gemm_shape bad = shape(0, 64, 64, 64);
  for (int i = 0; i < 3; i++) {
    TC_REQUIRE(tc_gemm_params_parse(kinds[i], &p, &err) == 0, "%s", tc_str_cstr(&err));
    TC_CHECK(tc_gemm_params_derive(&p, &bad, &err) == -1 &&
                 has(tc_str_cstr(&err), "GEMM shape must have G, M, N, K >= 1 (got G=0 M=64 N=64 K=64)"),
             "%s with G = 0: %s", kinds[i], tc_str_cstr(&err));
    TC_CHECK(tc_gemm_params_check(&p, &bad, &err) == -1 &&
                 has(tc_str_cstr(&err), "GEMM shape must have G, M, N, K >= 1"),
             "%s check with G = 0: %s", kinds[i], tc_str_cstr(&err));
  }
}

/* tc_gemm_params_check on hand-made full sets, one rule broken each. */
static void test_check_rules(void) {
  tc_gemm_shape s = shape(1, 256, 256, 256);
  tc_gemm_params good = parsed("256,128,128,16,4,4"), p;
  TC_STR_LOCAL(err);
  TC_REQUIRE(tc_gemm_params_derive(&good, &s, &err) == 0, "%s", tc_str_cstr(&err));

  /* the header's example: MPB 64 with MPT 4 and levels 4 x 4 */
  p = good;
  p.m_per_block = 64;
  TC_CHECK(tc_gemm_params_check(&p, &s, &err) == -1, "accepted");
  TC_CHECK(has(tc_str_cstr(&err), "m_per_thread * m_level0 * m_level1 * 2 must equal m_per_block (4*4*4*2 != 64)"),
           "%s", tc_str_cstr(&err));
  p = good;
  p.n_level1 = 2;
  TC_CHECK(tc_gemm_params_check(&p, &s, &err) == -1, "accepted");
  TC_CHECK(has(tc_str_cstr(&err), "n_per_thread * n_level0 * n_level1 * 2 must equal n_per_block (4*4*2*2 != 128)"),
           "%s", tc_str_cstr(&err));
  /* levels that satisfy the M/N rules but not the thread count */
  p = good;
  p.m_level0 = 2, p.m_level1 = 8;
  TC_CHECK(tc_gemm_params_check(&p, &s, &err) == 0, "2x8 levels rejected: %s", tc_str_cstr(&err));
  p.block_size = 128;
  TC_CHECK(tc_gemm_params_check(&p, &s, &err) == -1, "accepted");
  TC_CHECK(has(tc_str_cstr(&err), "block_size must equal m_level0 * m_level1 * n_level0 * n_level1 "
                    "(2*8*4*4 = 256 != 128)"),
           "%s", tc_str_cstr(&err));
  p = good;
  p.m_level0 = 0;
  TC_CHECK(tc_gemm_params_check(&p, &s, &err) == -1, "accepted");
  TC_CHECK(has(tc_str_cstr(&err), "must be positive"), "%s", tc_str_cstr(&err));

  p = good;
  p.a_cluster_k = 4;
  TC_CHECK(tc_gemm_params_check(&p, &s, &err) == -1, "accepted");
  TC_CHECK(has(tc_str_cstr(&err), "a_cluster_k * a_cluster_m must equal block_size (4*128 = 512 != 256)"), "%s",
           tc_str_cstr(&err));
  p = good;
  p.a_cluster_k = 32, p.a_cluster_m = 8;
  TC_CHECK(tc_gemm_params_check(&p, &s, &err) == -1, "accepted");
  TC_CHECK(has(tc_str_cstr(&err), "k_per_block must be a multiple of a_cluster_k (16 % 32 != 0)"), "%s", tc_str_cstr(&err));
  p = good;
  p.b_cluster_k = 1, p.b_cluster_n = 256;
  TC_CHECK(tc_gemm_params_check(&p, &s, &err) == -1, "accepted");
  TC_CHECK(has(tc_str_cstr(&err), "n_per_block must be a multiple of b_cluster_n (128 % 256 != 0)"), "%s", tc_str_cstr(&err));
  p = good;
  p.a_src_per_read = 2; /* the A slice is 8 along K x 1 along M, read along M */
  TC_CHECK(tc_gemm_params_check(&p, &s, &err) == -1, "accepted");
  TC_CHECK(has(tc_str_cstr(&err), "a_src_per_read must divide the thread's A slice along M (slice 1, got 2)"),
           "%s", tc_str_cstr(&err));
  p = good;
  p.a_read_dim = TC_GEMM_READ_K, p.a_src_per_read = 2; /* 8 along K: divides, but vec is 1 */
  TC_CHECK(tc_gemm_params_check(&p, &s, &err) == -1, "accepted");
  TC_CHECK(has(tc_str_cstr(&err), "a_src_per_read 2 exceeds the widest legal vector read of A along K (1)"), "%s",
           tc_str_cstr(&err));
  p = good;
  p.b_dst_per_write = 2;
  TC_CHECK(tc_gemm_params_check(&p, &s, &err) == -1, "accepted");
  TC_CHECK(has(tc_str_cstr(&err), "b_dst_per_write must divide the thread's B slice along N (slice 1)"), "%s",
           tc_str_cstr(&err));
  p = good;
  p.b_read_dim = 0;
  TC_CHECK(tc_gemm_params_check(&p, &s, &err) == -1, "accepted");
  TC_CHECK(has(tc_str_cstr(&err), "b_read_dim must be TC_GEMM_READ_K or TC_GEMM_READ_MN (got 0)"), "%s", tc_str_cstr(&err));
  p = good;
  p.c_per_write = 2;
  TC_CHECK(tc_gemm_params_check(&p, &s, &err) == -1, "accepted");
  TC_CHECK(has(tc_str_cstr(&err), "c_per_write must divide n_per_thread (4) and be at most the widest legal "
                    "vector write of C along N (1) (got 2)"),
           "%s", tc_str_cstr(&err));
  /* a shape of NULL means unknown widths (1) */
  TC_CHECK(tc_gemm_params_check(&good, NULL, &err) == 0, "%s", tc_str_cstr(&err));
}

static void test_perf_config(void) {
  tc_gemm_params p;
  char buf[64];
  TC_STR_LOCAL(err);
  TC_REQUIRE(tc_gemm_params_parse("256,128,128,16,4,4", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(p.block_size, 256);
  TC_CHECK_EQ_INT(p.m_per_block, 128);
  TC_CHECK_EQ_INT(p.n_per_block, 128);
  TC_CHECK_EQ_INT(p.k_per_block, 16);
  TC_CHECK_EQ_INT(p.m_per_thread, 4);
  TC_CHECK_EQ_INT(p.n_per_thread, 4);
  TC_CHECK_EQ_INT(p.m_level0, 0); /* derived fields cleared */
  tc_gemm_params_format(&p, buf, sizeof buf);
  CHECK_BUF(buf, "256,128,128,16,4,4");
  /* round trip of a derived set, and spaces tolerated */
  TC_REQUIRE(tc_gemm_params_parse(" 64, 32,32 ,8,2,2", &p, &err) == 0, "%s", tc_str_cstr(&err));
  tc_gemm_params_format(&p, buf, sizeof buf);
  CHECK_BUF(buf, "64,32,32,8,2,2");
  tc_gemm_params q;
  TC_REQUIRE(tc_gemm_params_parse(buf, &q, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(memcmp(&p, &q, sizeof p) == 0, "round trip differs");
  /* truncation never overflows */
  char small[8];
  tc_gemm_params_format(&p, small, sizeof small);
  CHECK_BUF(small, "64,32,3");

  struct {
    const char *text, *msg;
  } bad[] = {
      {"256,128,128,16,4", "expected 6 comma-separated fields (BS,MPB,NPB,KPB,MPT,NPT), got 5"},
      {"256,128,x,16,4,4", "field 3 (n_per_block) is not a positive integer: \"x\""},
      {"256,128,128,16,4,4,1", "too many fields, expected 6"},
      {"0,128,128,16,4,4", "field 1 (block_size) must be between 1 and 65536: \"0\""},
      {"256,128,128,99999999999,4,4",
       "field 4 (k_per_block) must be between 1 and 65536: \"99999999999\""},
      {"", "field 1 (block_size) is not a positive integer: \"\""},
      {"256,-4,128,16,4,4", "field 2 (m_per_block) is not a positive integer: \"-4\""},
      {"256,128,128,16,4.5,4", "field 5 (m_per_thread) is not a positive integer: \"4.5\""},
      {"256,128,128,16,4,", "field 6 (n_per_thread) is not a positive integer: \"\""},
      {"256 128,128,16,4,4", "field 1 (block_size) is not a positive integer: \"256 128\""},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    tc_str_clear(&err);
    TC_CHECK(tc_gemm_params_parse(bad[i].text, &p, &err) == -1, "\"%s\" accepted",
             bad[i].text);
    TC_CHECK(has(tc_str_cstr(&err), bad[i].msg), "\"%s\": message \"%s\" lacks \"%s\"", bad[i].text, tc_str_cstr(&err),
             bad[i].msg);
  }
  TC_CHECK(tc_gemm_params_parse(NULL, &p, &err) == -1, "NULL accepted");
}

static void test_padded_flops(void) {
  tc_gemm_shape s = shape(1, 100, 100, 20);
  tc_gemm_params p = parsed("64,64,64,8,4,4");
  /* Mp = Np = 128, Kp = 24: 2*(128*128*24 - 100*100*20) = 2*(393216 - 200000) */
  TC_CHECK_EQ_INT(tc_gemm_padded_flops(&s, &p), 386432);
  s.g = 2;
  TC_CHECK_EQ_INT(tc_gemm_padded_flops(&s, &p), 772864);
  p = parsed("64,64,32,8,4,2");
  TC_CHECK_EQ_INT(tc_gemm_num_blocks(&s, &p), 2 * 2 * 4);
  s = shape(1, 128, 64, 16);
  p = parsed("64,64,64,8,4,4");
  TC_CHECK_EQ_INT(tc_gemm_padded_flops(&s, &p), 0);
  /* saturation instead of overflow */
  s = shape(1 << 22, 1 << 22, 1 << 22, 1 << 22);
  TC_CHECK(tc_gemm_padded_flops(&s, &p) == INT64_MAX, "no saturation");
}

static int find_cfg(const tc_gemm_params *c, int n, const char *cfg) {
  char buf[64];
  for (int i = 0; i < n; i++) {
    tc_gemm_params_format(&c[i], buf, sizeof buf);
    if (strcmp(buf, cfg) == 0) return i;
  }
  return -1;
}

/* 96 x 96 x 24 by hand: only MPB = NPB = 32 (MPT = NPT = 2, 64 threads)
 * with KPB 4 or 8 pads nothing; KPB 8 first (fewer K iterations).  Next,
 * wasting 2*(96*96*32 - 96*96*24) = 2*(96*128*24 - 96*96*24) = 147456:
 * 32x32 with KPB 16 (9 blocks) before the 32x64 / 64x32 tiles (6 blocks,
 * the problem being small), and among those KPB 8, 4x2 / 2x4 threads (64
 * threads), MPB 64 first, MPT 4 first. */
static void test_candidates_small(void) {
  tc_gemm_shape s = shape(1, 96, 96, 24);
  tc_gemm_params *c = NULL;
  int n = tc_gemm_candidates(&s, &c);
  TC_REQUIRE(n > 8, "only %d candidates", n);
  const char *want[] = {"64,32,32,8,2,2",  "64,32,32,4,2,2",  "64,32,32,16,2,2", "64,64,32,8,4,2",
                        "64,64,32,8,2,4",  "64,32,64,8,4,2",  "64,32,64,8,2,4",  "128,64,32,8,2,2",
                        "128,32,64,8,2,2"};
  int64_t waste[] = {0, 0, 147456, 147456, 147456, 147456, 147456, 147456, 147456};
  for (int i = 0; i < 9; i++) {
    char buf[64];
    tc_gemm_params_format(&c[i], buf, sizeof buf);
    TC_CHECK(strcmp(buf, want[i]) == 0, "candidate %d is %s, expected %s", i, buf, want[i]);
    TC_CHECK_EQ_INT(tc_gemm_padded_flops(&s, &c[i]), waste[i]);
  }
  TC_STR_LOCAL(err);
  for (int i = 0; i < n; i++) {
    TC_CHECK(tc_gemm_params_check(&c[i], &s, &err) == 0, "candidate %d: %s", i, tc_str_cstr(&err));
    TC_CHECK(c[i].block_size >= 64 && c[i].block_size <= 256, "block size %d", c[i].block_size);
    if (i)
      TC_CHECK(tc_gemm_padded_flops(&s, &c[i - 1]) <= tc_gemm_padded_flops(&s, &c[i]),
               "order broken at %d", i);
  }
  /* the largest waste: 128x128 tiles with KPB 16: 2*(128*128*32 - 221184) */
  TC_CHECK_EQ_INT(tc_gemm_padded_flops(&s, &c[n - 1]), 2 * (128 * 128 * 32 - 96 * 96 * 24));
  /* sets that violate a rule never appear: 32x32 tiles with 4x4 threads
   * have 16 threads */
  TC_CHECK(find_cfg(c, n, "16,32,32,8,4,4") < 0, "invalid set listed");
  free(c);
  tc_gemm_params d;
  TC_REQUIRE(tc_gemm_params_default(&s, &d, &err) == 0, "%s", tc_str_cstr(&err));
  char buf[64];
  tc_gemm_params_format(&d, buf, sizeof buf);
  CHECK_BUF(buf, "64,32,32,8,2,2");
  TC_CHECK_EQ_INT(d.m_level0 * d.m_level1, 8); /* derived */
}

/* 1024^3: nothing pads; 128x128 tiles give 64 blocks, enough, so the
 * largest tiles win: rocMLIR's example 256,128,128,16,4,4.  Deterministic. */
static void test_candidates_big(void) {
  tc_gemm_shape s = shape(1, 1024, 1024, 1024);
  tc_gemm_params d;
  char buf[64];
  TC_STR_LOCAL(err);
  TC_REQUIRE(tc_gemm_params_default(&s, &d, &err) == 0, "%s", tc_str_cstr(&err));
  tc_gemm_params_format(&d, buf, sizeof buf);
  CHECK_BUF(buf, "256,128,128,16,4,4");
  tc_gemm_params *c1 = NULL, *c2 = NULL;
  int n1 = tc_gemm_candidates(&s, &c1), n2 = tc_gemm_candidates(&s, &c2);
  TC_CHECK(n1 == n2 && memcmp(c1, c2, (size_t)n1 * sizeof *c1) == 0, "not deterministic");
  free(c1);
  free(c2);
  /* a bad shape: no candidates, a clear error */
  s.k = 0;
  TC_CHECK_EQ_INT(tc_gemm_candidates(&s, &c1), 0);
  free(c1);
  TC_CHECK(tc_gemm_params_default(&s, &d, &err) == -1, "accepted");
  TC_CHECK(has(tc_str_cstr(&err), "GEMM shape must have G, M, N, K >= 1 (got G=1 M=1024 N=1024 K=0)"), "%s", tc_str_cstr(&err));
}

int main(void) {
  TC_RUN(test_rocmlir_example);
  TC_RUN(test_vector_widths);
  TC_RUN(test_other_sets);
  TC_RUN(test_derive_errors);
  TC_RUN(test_check_rules);
  TC_RUN(test_perf_config);
  TC_RUN(test_padded_flops);
  TC_RUN(test_candidates_small);
  TC_RUN(test_candidates_big);
  TC_MAIN_END();
}
