/* test_gemm_tma.c - the TMA + wgmma GEMM for Hopper (src/ops/gemm_tma.c,
 * docs/hopper_gemm.md).
 *
 *   - the tma: / tmaws: perf-config forms: parse, format, derived fields,
 *     each rule's error, the warp-specialised register split; which shapes
 *     the kernel supports (and why not);
 *   - the warp-specialised pipeline's protocol (full / empty barriers,
 *     parities, one wgmma group in flight) run in a model of mbarriers,
 *     copies and wgmmas that finish at random times: no deadlock, no read
 *     of a stage before its copy landed, no copy over a stage still read;
 *     the model's mbarrier follows the PTX ISA's phases (a sequence worked
 *     out by hand); wrong variants of the protocol are caught (wrong
 *     arrival counts, either parity flipped, expect_tx a copy short or
 *     over, a wait_group that leaves two groups in flight, ...);
 *   - the persistent epilogue's bulk store groups in a model, and its
 *     wait_group.read counts against a table worked out by hand;
 *   - GEMMs on OpenCL, where the copies, the wgmma and the stmatrix are
 *     emulated with the hardware's shared-memory addressing, vs a plain C
 *     reference: bf16 and f16, 256x256x128, ragged shapes (the copies'
 *     zero fill and clipped stores), K- and M/N-major operands, a batch,
 *     every tile size and 2 to 4 stages, both pipelines, more tile rows
 *     than one group of the blocks' walk; nothing is written outside C;
 *   - injected wrong layouts (the descriptors without the swizzle, the
 *     stmatrix matrices out of order, cluster blocks that ignore their
 *     rank when loading B's shares) give wrong results;
 *   - the CUDA source for sm_90a: compiled by NVRTC (PTX holds the bulk
 *     tensor copies, mbarrier waits, wgmma with the transpose flags,
 *     stmatrix), its launch (dynamic shared memory, three tensor maps
 *     derived by hand here); the warp-specialised kernel's barrier counts,
 *     releases, register split and named barrier.  What its copies,
 *     descriptors, waits and stores compute is replayed against the PTX
 *     ISA's rules in tests/test_sm90_facts.c. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/gemm.h"
#include "ops/gemm_gen.h"
#include "runtime/runtime.h"
#include "test.h"

#define GEMM_TEST_SEED 9090
#include "gemm_test_util.h"
#include "base/test_hooks.h"

static tc_cl *cl;
static const gemm_harness H = {"tilec_gemm_tma", tc_gemm_tma_default, 1};

static int has(const char *s, const char *part) { return s && strstr(s, part) != NULL; }
static int count_of(const char *s, const char *part) {
  int n = 0;
  for (const char *q = s ? strstr(s, part) : NULL; q; q = strstr(q + 1, part)) n++;
  return n;
}

/* A plain-matrix shape as tc_gemm_problem_shape makes it for a GEMM with
 * A [M][K] (a_kmajor) or [K][M], B [N][K] (b_kmajor) or [K][N], C [M][N],
 * rows padded to ld elements. */
static tc_gemm_shape plain_shape(int64_t g, int64_t m, int64_t n, int64_t k, int a_kmajor,
                                 int b_kmajor, int64_t pad) {
  tc_gemm_shape s;
  memset(&s, 0, sizeof s);
  s.g = g, s.m = m, s.n = n, s.k = k, s.dtype = s.c_dtype = TC_BF16;
  s.a_vec_k = s.a_vec_m = s.b_vec_k = s.b_vec_n = s.c_vec_n = 1;
  s.plain = 1;
  int64_t lda = (a_kmajor ? k : m) + pad, ldb = (b_kmajor ? k : n) + pad, ldc = n + pad;
  s.a_stride[0] = lda * (a_kmajor ? m : k), s.a_stride[1] = a_kmajor ? 1 : lda,
  s.a_stride[2] = a_kmajor ? lda : 1;
  s.b_stride[0] = ldb * (b_kmajor ? n : k), s.b_stride[1] = b_kmajor ? 1 : ldb,
  s.b_stride[2] = b_kmajor ? ldb : 1;
  s.c_stride[0] = ldc * m, s.c_stride[1] = ldc, s.c_stride[2] = 1;
  return s;
}

/* cfg is refused for shape s (by the parser or the rules) with an error
 * that contains `part`. */
static void expect_refused(const char *cfg, const tc_gemm_shape *s, const char *part) {
  tc_gemm_params p;
  TC_STR_LOCAL(err);
  int rc = tc_gemm_params_parse(cfg, &p, &err);
  if (rc == 0) rc = tc_gemm_params_derive(&p, s, &err);
  TC_CHECK(rc != 0 && has(tc_str_cstr(&err), part), "%s: '%s', want '%s'", cfg, tc_str_cstr(&err), part);
}

static void test_params(void) {
  tc_gemm_params p;
  char buf[64];
  TC_STR_LOCAL(err);
  tc_gemm_shape s = plain_shape(1, 512, 512, 512, 1, 0, 0);
  TC_REQUIRE(tc_gemm_params_parse("tma:128,256,4", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_gemm_params_derive(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(tc_gemm_params_is_tma(&p) && !tc_gemm_params_is_xdlops(&p) && !tc_gemm_params_is_mma(&p),
           "kind");
  TC_CHECK_EQ_INT(p.k_per_block, 64);
  TC_CHECK_EQ_INT(p.waves_m, 2);
  TC_CHECK_EQ_INT(p.block_size, 256);
  /* 4 stages of (128 + 256) rows of 128 bytes, + 1024 for the alignment */
  TC_CHECK(tc_gemm_lds_bytes(&p) == 4 * 384 * 128 + 1024, "smem %lld",
           (long long)tc_gemm_lds_bytes(&p));
  tc_gemm_params_format(&p, buf, sizeof buf);
  TC_CHECK(strcmp(buf, "tma:128,256,4") == 0, "%s", buf);
  static const struct { const char *cfg, *part; } bad[] = {
      {"tma:96,128,4", "m_per_block must be 64, 128, 192 or 256"},
      {"tma:320,128,2", "m_per_block must be 64, 128, 192 or 256"},
      {"tma:128,96,4", "n_per_block must be a multiple of 64 up to 256"},
      {"tma:128,320,4", "n_per_block must be a multiple of 64 up to 256"},
      {"tma:128,128,1", "stages must be between 2 and 8"},
      {"tma:128,128,9", "stages must be between 2 and 8"},
      /* 5 * 512 * 128 + 1024 = 328704 > 232448 */
      {"tma:256,256,5", "exceeds the 232448 bytes"},
      {"tma:128,128", "expected 3"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) expect_refused(bad[i].cfg, &s, bad[i].part);
  /* registers: 512 threads have 128 each, too few for 128 accumulators + 48;
   * 256 threads have 255, enough for 128 + 48 */
  TC_REQUIRE(tc_gemm_params_parse("tma:256,256,3", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(tc_gemm_params_derive(&p, &s, &err) != 0 &&
               has(tc_str_cstr(&err), "exceed the 128 registers a thread of a 512-thread block has"),
           "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_gemm_params_parse("tma:128,256,4", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(tc_gemm_params_derive(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));

  /* the warp-specialised form: one more warp group (the producer) */
  TC_REQUIRE(tc_gemm_params_parse("tmaws:128,256,4", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_gemm_params_derive(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(tc_gemm_params_is_tma(&p) && p.tma_ws == 1, "tmaws kind");
  TC_CHECK_EQ_INT(p.waves_m, 2);
  TC_CHECK_EQ_INT(p.block_size, 384);
  TC_CHECK(tc_gemm_lds_bytes(&p) == 4 * 384 * 128 + 1024, "tmaws smem");
  tc_gemm_params_format(&p, buf, sizeof buf);
  TC_CHECK(strcmp(buf, "tmaws:128,256,4") == 0, "%s", buf);
  TC_REQUIRE(tc_gemm_params_parse("tma:128,256,4", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(p.tma_ws == 0, "tma: is the block-synchronous pipeline");
  /* the register split, by hand: (consumers + 1) * 128 threads hold
   * 65536 / threads registers each at launch (steps of 8, at most 255);
   * the producer gives all but 40 to the consumers:
   *   1: 256 threads, 248 + 208 -> capped at 240
   *   2: 384 threads, 168 + 128 / 2 = 232
   *   3: 512 threads, 128 + 88 / 3 = 157 -> 152
   *   4: 640 threads,  96 + 56 / 4 = 110 -> 104 */
  TC_CHECK_EQ_INT(tc_gemm_tma_consumer_regs(1), 240);
  TC_CHECK_EQ_INT(tc_gemm_tma_consumer_regs(2), 232);
  TC_CHECK_EQ_INT(tc_gemm_tma_consumer_regs(3), 152);
  TC_CHECK_EQ_INT(tc_gemm_tma_consumer_regs(4), 104);
  /* 4 consumers of 64 x 128: 64 + 48 > 104; 64 x 64 fits (32 + 48) */
  TC_REQUIRE(tc_gemm_params_parse("tmaws:256,128,4", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(tc_gemm_params_derive(&p, &s, &err) != 0 &&
               has(tc_str_cstr(&err), "exceed the 104 registers a consumer thread of 4 consumer warp groups"),
           "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_gemm_params_parse("tmaws:256,64,4", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(tc_gemm_params_derive(&p, &s, &err) == 0 && p.block_size == 640, "%s", tc_str_cstr(&err));
  TC_CHECK(tc_gemm_params_parse("tmaws:128,128", &p, &err) != 0 &&
               has(tc_str_cstr(&err), "expected 3 comma-separated fields after tmaws:"),
           "%s", tc_str_cstr(&err));

  /* 2-block clusters: a 4th field of tmaws: (1 is none) */
  TC_REQUIRE(tc_gemm_params_parse("tmaws:128,256,4,2", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_gemm_params_derive(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(p.tma_cluster == 2 && p.tma_ws == 1 && p.block_size == 384, "cluster fields");
  tc_gemm_params_format(&p, buf, sizeof buf);
  TC_CHECK(strcmp(buf, "tmaws:128,256,4,2") == 0, "%s", buf);
  TC_REQUIRE(tc_gemm_params_parse("tmaws:128,256,4,1", &p, &err) == 0, "%s", tc_str_cstr(&err));
  tc_gemm_params_format(&p, buf, sizeof buf);
  TC_CHECK(p.tma_cluster == 0 && strcmp(buf, "tmaws:128,256,4") == 0, "cluster 1: %s", buf);
  static const struct { const char *cfg, *part; } badc[] = {
      {"tmaws:128,256,4,3", "the cluster must be 1 or 2 blocks"},
      {"tma:128,256,4,2", "expected 3"},
      /* s has B contiguous along N: half of one 64-column box is no box */
      {"tmaws:128,64,4,2", "n_per_block must be a multiple of 128"},
  };
  for (size_t i = 0; i < sizeof badc / sizeof badc[0]; i++)
    expect_refused(badc[i].cfg, &s, badc[i].part);
  /* with B contiguous along K the half is a box of 32 rows */
  tc_gemm_shape sk = plain_shape(1, 512, 512, 512, 1, 1, 0);
  TC_REQUIRE(tc_gemm_params_parse("tmaws:128,64,4,2", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(tc_gemm_params_derive(&p, &sk, &err) == 0, "%s", tc_str_cstr(&err));

  /* persistent kernels: a 5th field, the grid; C goes out through two
   * buffers of a [128][64] box each after the ring:
   * 4 * (128 + 256) * 128 + 2 * 128 * 128 + 1024 = 230400; one buffer for
   * a single box (NPB 64): 4 * (128 + 64) * 128 + 128 * 128 + 1024 = 115712 */
  TC_CHECK_EQ_INT(tc_gemm_tma_c_buffers(256), 2);
  TC_CHECK_EQ_INT(tc_gemm_tma_c_buffers(128), 2);
  TC_CHECK_EQ_INT(tc_gemm_tma_c_buffers(64), 1);
  TC_REQUIRE(tc_gemm_params_parse("tmaws:128,256,4,1,132", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_gemm_params_derive(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(p.tma_persist == 132 && p.tma_cluster == 0 && p.tma_ws == 1 && p.block_size == 384,
           "persistent fields");
  TC_CHECK(tc_gemm_lds_bytes(&p) == 230400, "persistent smem %lld", (long long)tc_gemm_lds_bytes(&p));
  tc_gemm_params_format(&p, buf, sizeof buf);
  TC_CHECK(strcmp(buf, "tmaws:128,256,4,1,132") == 0, "%s", buf);
  TC_REQUIRE(tc_gemm_params_parse("tmaws:128,64,4,1,132", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_gemm_params_derive(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(tc_gemm_lds_bytes(&p) == 115712, "persistent smem, one buffer %lld",
           (long long)tc_gemm_lds_bytes(&p));
  TC_REQUIRE(tc_gemm_params_parse("tmaws:128,256,4,2,132", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(tc_gemm_params_derive(&p, &s, &err) == 0 && p.tma_cluster == 2, "%s", tc_str_cstr(&err));
  tc_gemm_params_format(&p, buf, sizeof buf);
  TC_CHECK(strcmp(buf, "tmaws:128,256,4,2,132") == 0, "%s", buf);
  static const struct { const char *cfg, *part; } badp[] = {
      /* 5 * 320 * 128 + 2 * 128 * 128 + 1024 = 238592 (232448 without the buffers) */
      {"tmaws:128,192,5,1,132", "(the persistent kernel's two C buffers) + 1024 = 238592 bytes "
                                "exceeds"},
      {"tmaws:128,256,3,2,133", "the persistent grid of 133 blocks is not a multiple of the "
                                "cluster of 2"},
      {"tmaws:128,256,3,1,0", "field 5 (blocks) must be between 1 and"},
      {"tmaws:128,256,3,1,132,1", "too many fields"},
      {"tma:128,256,3,1,132", "too many fields"},
  };
  for (size_t i = 0; i < sizeof badp / sizeof badp[0]; i++)
    expect_refused(badp[i].cfg, &s, badp[i].part);
}

/* ---- the warp-specialised protocol in a model ----------------------------
 * Barriers as the PTX ISA describes mbarriers: a phase completes when its
 * pending arrivals and transaction bytes reach zero; try_wait.parity(P)
 * succeeds once the phase of parity P has completed (the current phase's
 * parity differs from P).  Actors take steps in a random order: the
 * producer thread, each consumer warp group, the copy engine (a copy
 * lands at a random later step) and each warp group's wgmma unit (a
 * committed group finishes at a random later step).  Each stage holds the
 * K tile last written; a wgmma group checks at its finish (when it reads)
 * that its stage holds its K tile, and a copy checks when it lands that no
 * unfinished group reads its stage. */
typedef struct mbar {
  int count, pending, tx, phase; /* phase: completed phases */
} mbar;

static void mbar_init(mbar *b, int count) { b->count = b->pending = count, b->tx = b->phase = 0; }
static void mbar_complete_if(mbar *b) {
  if (b->pending == 0 && b->tx == 0) b->phase++, b->pending = b->count;
}
static int mbar_done(const mbar *b, int parity) { return (b->phase & 1) != parity; }

/* the protocol's knobs (what the generator prints) and injected faults */
typedef struct proto {
  int stages, consumers, ktiles;
  int empty_count;      /* arrivals per phase of an empty barrier */
  int inflight;         /* wgmma groups left pending after each K tile */
  int empty_parity_off; /* fault: added to the producer's parity */
  int release_early;    /* fault: release K tile kt's stage right after issuing it */
  int cluster;          /* blocks per cluster (0 or 1: none); B's halves are multicast */
  int no_remote;        /* fault: consumers release only their own block's stage */
  int own_tx_only;      /* fault: expect_tx counts only the block's own copies */
  int tiles;            /* a persistent block's C tiles (0: one tile, the last stage kept) */
  int no_last_release;  /* fault: persistent, a tile's last stage is never released */
  int last_early;       /* fault: persistent, it is released before wait_group 0 */
  int full_parity_off;  /* fault: added to the consumers' parity on the full barriers */
  int tx_off;           /* fault: copies added to the producer's expect_tx */
} proto;

enum { MAXS = 8, MAXC = 4, MAXK = 64, MAXG = 8, MAXCL = 2, NPART = 1 + MAXCL };

/* A stage of a block holds parts: A (its own copy) and one half of B per
 * block of the cluster (each block's producer multicasts its half into
 * every block). */
typedef struct copy {
  int kt, dst, part;
} copy;

typedef struct sim {
  proto p;
  int cl;                                  /* blocks */
  mbar full[MAXCL][MAXS], empty[MAXCL][MAXS];
  int holds[MAXCL][MAXS][NPART];           /* K tile of each part (-1: none) */
  int readers[MAXCL][MAXS];                /* unfinished wgmma groups reading the stage */
  int prod_kt[MAXCL];
  copy copies[MAXCL * MAXK * NPART * MAXCL];
  int ncopies;
  int cons_kt[MAXCL][MAXC], cons_phase[MAXCL][MAXC]; /* phase 0: wait full, 1: after issue */
  int groups[MAXCL][MAXC][MAXG], ngroups[MAXCL][MAXC];
  int done_tiles[MAXCL][MAXC];
  int errors;
} sim;

static uint32_t sim_rng;
static int sim_rand(int n) {
  sim_rng = sim_rng * 1664525u + 1013904223u;
  return (int)((sim_rng >> 8) % (uint32_t)n);
}

static void sim_release(sim *S, int b, int st) {
  for (int d = 0; d < S->cl; d++) {
    if (d != b && S->p.no_remote) continue;
    S->empty[d][st].pending--;
    mbar_complete_if(&S->empty[d][st]);
  }
}

/* one step of actor a; returns 1 if it did something.  Actors: per block
 * its producer, then the copy engine, then per block its consumer warp
 * groups and their wgmma units. */
static int sim_step(sim *S, int a) {
  proto *p = &S->p;
  int nc = p->consumers;
  /* K tiles over all the block's C tiles: the running count */
  int total = p->ktiles * (p->tiles > 0 ? p->tiles : 1);
  if (a < S->cl) { /* block a's producer thread */
    int b = a, kt = S->prod_kt[b];
    if (kt >= total) return 0;
    int st = kt % p->stages;
    if (kt >= p->stages) {
      int parity = (kt / p->stages + 1 + p->empty_parity_off) & 1;
      if (!mbar_done(&S->empty[b][st], parity)) return 0;
    }
    /* expect_tx for everything landing in this block's stage, its arrival */
    S->full[b][st].tx += (p->own_tx_only ? 2 : 1 + S->cl) + p->tx_off;
    S->full[b][st].pending--;
    mbar_complete_if(&S->full[b][st]);
    S->copies[S->ncopies++] = (copy){kt, b, 0};        /* A, own block */
    for (int d = 0; d < S->cl; d++)                    /* B's half b, every block */
      S->copies[S->ncopies++] = (copy){kt, d, 1 + b};
    S->prod_kt[b]++;
    return 1;
  }
  a -= S->cl;
  if (a == 0) { /* the copy engine: one copy lands */
    if (!S->ncopies) return 0;
    int i = sim_rand(S->ncopies);
    copy c = S->copies[i];
    S->copies[i] = S->copies[--S->ncopies];
    int st = c.kt % p->stages;
    if (S->readers[c.dst][st]) S->errors |= 1; /* overwriting a stage still read */
    S->holds[c.dst][st][c.part] = c.kt;
    S->full[c.dst][st].tx -= 1;
    mbar_complete_if(&S->full[c.dst][st]);
    return 1;
  }
  a -= 1;
  if (a < S->cl * nc) { /* consumer warp group c of block b */
    int b = a / nc, c = a % nc, kt = S->cons_kt[b][c];
    if (kt >= total) return 0; /* (wait_group 0 before the epilogue) */
    int st = kt % p->stages;
    if (S->cons_phase[b][c] == 0) {
      if (!mbar_done(&S->full[b][st], (kt / p->stages + p->full_parity_off) & 1)) return 0;
      /* the wgmmas are issued and committed: group kt reads stage st */
      S->groups[b][c][S->ngroups[b][c]++] = kt;
      S->readers[b][st]++;
      S->cons_phase[b][c] = 1;
      if (p->release_early) sim_release(S, b, st);
      return 1;
    }
    if (S->cons_phase[b][c] == 1) {
      /* wait_group inflight: at most that many groups pending */
      if (S->ngroups[b][c] > p->inflight) return 0;
      /* the previous K tile's stage, inside the C tile */
      if (kt % p->ktiles > 0 && !p->release_early) sim_release(S, b, (kt - 1) % p->stages);
      S->cons_phase[b][c] = p->tiles > 0 && kt % p->ktiles == p->ktiles - 1 ? 2 : 0;
      if (S->cons_phase[b][c] == 0) S->cons_kt[b][c]++;
      return 1;
    }
    /* the epilogue of a persistent block's tile: wait_group 0, then the
     * tile's last stage is free (the producer is filling the next tile's) */
    if (S->ngroups[b][c] > 0 && !p->last_early) return 0;
    if (!p->no_last_release && !p->release_early) sim_release(S, b, st);
    S->cons_kt[b][c]++;
    S->cons_phase[b][c] = 0;
    return 1;
  }
  a -= S->cl * nc;
  /* wgmma unit of consumer c of block b: the oldest group finishes (reads) */
  int b = a / nc, c = a % nc;
  if (!S->ngroups[b][c]) return 0;
  int kt = S->groups[b][c][0], st = kt % p->stages;
  for (int part = 0; part < 1 + S->cl; part++)
    if (S->holds[b][st][part] != kt) S->errors |= 2; /* a part of the tile has not landed */
  S->readers[b][st]--;
  S->done_tiles[b][c]++;
  memmove(&S->groups[b][c][0], &S->groups[b][c][1], (size_t)(S->ngroups[b][c] - 1) * sizeof(int));
  S->ngroups[b][c]--;
  return 1;
}

/* Runs the protocol `runs` times with random schedules; returns the
 * errors seen (1: copy over a stage being read, 2: read before the copy
 * landed, 4: deadlock, 8: a K tile not computed). */
static int sim_run(const proto *p, int runs) {
  int errs = 0;
  for (int r = 0; r < runs; r++) {
    sim S;
    memset(&S, 0, sizeof S);
    S.p = *p;
    S.cl = p->cluster > 1 ? p->cluster : 1;
    for (int b = 0; b < S.cl; b++)
      for (int i = 0; i < p->stages; i++) {
        mbar_init(&S.full[b][i], 1);
        mbar_init(&S.empty[b][i], p->empty_count);
        for (int part = 0; part < NPART; part++) S.holds[b][i][part] = -1;
      }
    int actors = S.cl + 1 + 2 * S.cl * p->consumers;
    for (;;) {
      int start = sim_rand(actors), moved = 0;
      for (int i = 0; i < actors && !moved; i++) moved = sim_step(&S, (start + i) % actors);
      if (!moved) break;
    }
    int finished = S.ncopies == 0, total = p->ktiles * (p->tiles > 0 ? p->tiles : 1);
    for (int b = 0; b < S.cl; b++) {
      finished &= S.prod_kt[b] == total;
      for (int c = 0; c < p->consumers; c++)
        finished &= S.cons_kt[b][c] == total && S.ngroups[b][c] == 0;
    }
    if (!finished) S.errors |= 4;
    for (int b = 0; b < S.cl && finished; b++)
      for (int c = 0; c < p->consumers; c++)
        if (S.done_tiles[b][c] != total) S.errors |= 8;
    errs |= S.errors;
  }
  return errs;
}

static void test_ws_protocol(void) {
  /* the model's mbarrier, by hand from the PTX ISA: an mbarrier of 2
   * arrivals starts in phase 0; try_wait.parity(P) succeeds once the phase
   * of parity P has completed, where the phase before phase 0 counts as
   * completed (parity 1 passes at once); a phase completes when its
   * arrivals and its expected transaction bytes are all done */
  mbar mb;
  mbar_init(&mb, 2);
  TC_CHECK(!mbar_done(&mb, 0) && mbar_done(&mb, 1), "a new barrier: parity 0 waits, 1 passes");
  mb.tx += 256, mb.pending--, mbar_complete_if(&mb); /* arrive.expect_tx 256 */
  mb.pending--, mbar_complete_if(&mb);                /* the second arrival */
  TC_CHECK(!mbar_done(&mb, 0), "phase 0 completed with 256 bytes still expected");
  mb.tx -= 256, mbar_complete_if(&mb); /* the bytes land */
  TC_CHECK(mbar_done(&mb, 0) && !mbar_done(&mb, 1) && mb.pending == 2,
           "after phase 0: parity 0 passes, parity 1 (phase 1) waits, 2 arrivals pending");
  mb.pending -= 2, mbar_complete_if(&mb);
  TC_CHECK(mbar_done(&mb, 1) && !mbar_done(&mb, 0), "after phase 1: parity 1 passes, parity 0 waits");
  sim_rng = 12345;
  /* the generator's protocol for tmaws configs: stages 2..8, consumers
   * 1..4, empty barriers of `consumers` arrivals (times the blocks of a
   * cluster), one group in flight; without and with 2-block clusters */
  for (int blocks = 1; blocks <= 2; blocks++)
    for (int st = 2; st <= 8; st += 2)
      for (int nc = 1; nc <= 4; nc++)
        for (int kt = 1; kt <= 3 * st + 1; kt += st) {
          proto p = {st, nc, kt, nc * blocks, 1, 0, 0, blocks, 0, 0};
          int e = sim_run(&p, 40);
          TC_CHECK(e == 0, "cluster %d stages %d consumers %d K tiles %d: errors %d", blocks, st,
                   nc, kt, e);
        }
  /* persistent blocks: the running count goes on over 1..3 C tiles of K
   * tiles fewer, as many as and more than the stages */
  for (int blocks = 1; blocks <= 2; blocks++)
    for (int st = 2; st <= 6; st += 2)
      for (int nc = 1; nc <= 2; nc++)
        for (int kt = 1; kt <= st + 1; kt += st / 2)
          for (int tiles = 1; tiles <= 3; tiles++) {
            proto p = {st, nc, kt, nc * blocks, 1, 0, 0, blocks, 0, 0, tiles, 0, 0};
            int e = sim_run(&p, 40);
            TC_CHECK(e == 0, "persistent: cluster %d stages %d consumers %d K tiles %d C tiles %d: "
                     "errors %d", blocks, st, nc, kt, tiles, e);
          }
  /* the wrong protocols must be caught */
  static const struct { proto p; const char *what; } bad[] = {
      {{4, 2, 16, 1, 1, 0, 0, 1, 0, 0}, "empty barrier of 1 arrival for 2 consumers"},
      {{4, 2, 16, 2, 1, 1, 0, 1, 0, 0}, "producer waits on the wrong parity"},
      {{4, 2, 16, 2, 1, 0, 1, 1, 0, 0}, "stage released before its wgmmas finish"},
      {{2, 1, 16, 1, 2, 0, 0, 1, 0, 0}, "two groups in flight with two stages"},
      {{4, 2, 16, 3, 1, 0, 0, 1, 0, 0}, "empty barrier of 3 arrivals for 2 consumers"},
      {{4, 2, 16, 2, 1, 0, 0, 2, 0, 0}, "cluster: empty barriers count only the own block"},
      {{4, 2, 16, 4, 1, 0, 0, 2, 1, 0}, "cluster: no release of the peer's stage"},
      {{4, 2, 16, 4, 1, 0, 0, 2, 0, 1}, "cluster: expect_tx without the peer's half of B"},
      {{4, 2, 5, 2, 1, 0, 0, 1, 0, 0, 3, 1, 0}, "persistent: a tile's last stage kept"},
      {{4, 2, 5, 2, 1, 0, 0, 1, 0, 0, 3, 0, 1}, "persistent: last stage freed before wait_group 0"},
      {{4, 2, 5, 4, 1, 0, 0, 2, 0, 0, 3, 1, 0}, "persistent cluster: a tile's last stage kept"},
      /* by hand: the consumers' parity flipped waits for "the phase before"
       * fill n, which has completed (for fill 0, the phase before phase 0
       * counts as completed): they read stages whose copies have not
       * landed */
      {{4, 2, 16, 2, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0}, "consumers wait on the full barrier's other parity"},
      /* one copy fewer in expect_tx: the phase completes when all but one
       * copy has landed, and the wgmmas read the missing one's tile */
      {{4, 2, 16, 2, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, -1}, "expect_tx one copy short"},
      /* one copy more: the phase never completes (a deadlock) */
      {{4, 2, 16, 2, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1}, "expect_tx one copy over"},
      /* wait_group 2 leaves K tile kt - 1's wgmmas running when its stage is
       * released: the producer's refill can land while they read it */
      {{4, 2, 16, 2, 2, 0, 0, 1, 0, 0}, "two groups in flight with four stages"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    TC_CHECK(sim_run(&bad[i].p, 200) != 0, "not caught: %s", bad[i].what);
}

/* ---- the persistent epilogue's C buffers in a model -----------------------
 * Thread 0's bulk store groups, one per C box, each reading its buffer
 * until it completes at a random later step (PTX: wait_group.read N
 * returns once all but the N most recent groups have read their source).
 * Before box j's buffer is written the kernel waits with N =
 * pending(j, nbox, nbuf); a write into a buffer an unfinished group still
 * reads is an error.  Returns the errors over `runs` random schedules of
 * `tiles` tiles. */
static int cbuf_run(int (*pending)(int, int, int), int nbox, int nbuf, int tiles, int runs) {
  int errors = 0;
  for (int r = 0; r < runs; r++) {
    int buf_of[64], done[64], ng = 0;
    for (int t = 0; t < tiles; t++)
      for (int j = 0; j < nbox; j++) {
        int b = j % nbuf, n = pending(j, nbox, nbuf);
        /* groups finish at random while the consumers compute */
        for (int g = 0; g < ng; g++)
          if (!done[g] && sim_rand(3) == 0) done[g] = 1;
        for (int g = 0; g < ng - n; g++) done[g] = 1; /* the wait */
        for (int g = 0; g < ng; g++)
          if (!done[g] && buf_of[g] == b) errors++; /* stmatrix over a buffer being read */
        buf_of[ng] = b, done[ng] = 0, ng++;           /* the box's store */
      }
  }
  return errors;
}
static int pending_always_last(int j, int nbox, int nbuf) { return nbuf - 1; }
static int pending_one_more(int j, int nbox, int nbuf) { return tc_gemm_tma_c_pending(j, nbox, nbuf) + 1; }

static void test_c_buffers(void) {
  /* by hand: box j goes to buffer j % nbuf; before stmatrix writes it, the
   * groups still reading that buffer must be done.  The groups in flight
   * end with box j - 1's, which (two buffers) read the other buffer, so
   * one may stay pending (read 1) - except at a tile's box 0 when the
   * previous tile's last box (nbox - 1) used buffer 0 too, an odd nbox:
   * read 0.  One buffer: always read 0. */
  static const struct { int nbox, nbuf, j, want; } table[] = {
      {4, 2, 0, 1}, {4, 2, 1, 1}, {4, 2, 3, 1}, {3, 2, 0, 0}, {3, 2, 1, 1},
      {3, 2, 2, 1}, {2, 2, 0, 1}, {2, 2, 1, 1}, {1, 1, 0, 0},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    TC_CHECK(tc_gemm_tma_c_pending(table[i].j, table[i].nbox, table[i].nbuf) == table[i].want,
             "%d boxes, %d buffers, box %d: wait_group.read %d, by hand %d", table[i].nbox,
             table[i].nbuf, table[i].j, tc_gemm_tma_c_pending(table[i].j, table[i].nbox, table[i].nbuf),
             table[i].want);
  sim_rng = 777;
  /* the generator's waits: no overwrite for 1 to 4 boxes per tile, one
   * or two buffers, 1 to 3 tiles */
  for (int nbox = 1; nbox <= 4; nbox++)
    for (int tiles = 1; tiles <= 3; tiles++) {
      int nbuf = tc_gemm_tma_c_buffers(64 * nbox);
      TC_CHECK(cbuf_run(tc_gemm_tma_c_pending, nbox, nbuf, tiles, 50) == 0,
               "%d boxes, %d buffers, %d tiles: a buffer rewritten while read", nbox, nbuf, tiles);
    }
  /* leaving the last group pending at a tile's first box is wrong for an
   * odd box count (3: the last box used buffer 0) */
  TC_CHECK(cbuf_run(pending_always_last, 3, 2, 3, 200) > 0, "not caught: read 1 at box 0 of 3");
  TC_CHECK(cbuf_run(pending_always_last, 4, 2, 3, 200) == 0, "an even count may leave one");
  /* one group more left pending lets box j - 2's store, which read this
   * buffer, still run while stmatrix overwrites it */
  TC_CHECK(cbuf_run(pending_one_more, 4, 2, 3, 200) > 0, "not caught: read N + 1 with 4 boxes");
  TC_CHECK(cbuf_run(pending_one_more, 3, 2, 3, 200) > 0, "not caught: read N + 1 with 3 boxes");
}

static void test_supported(void) {
  TC_STR_LOCAL(err);
  tc_gemm_shape s = plain_shape(1, 256, 256, 256, 1, 1, 0);
  TC_CHECK(tc_gemm_tma_supported(&s, &err) == 0, "%s", tc_str_cstr(&err));
  struct { tc_gemm_shape s; const char *part; } bad[8];
  int n = 0;
  bad[n].s = s, bad[n].s.dtype = bad[n].s.c_dtype = TC_F32, bad[n++].part = "f16 or bf16";
  bad[n].s = s, bad[n].s.c_dtype = TC_F32, bad[n++].part = "store C as A's type";
  bad[n].s = s, bad[n].s.accumulate = 1, bad[n++].part = "do not read C";
  bad[n].s = s, bad[n].s.plain = 0, bad[n++].part = "plain matrices";
  bad[n].s = plain_shape(1, 256, 256, 250, 1, 1, 0), bad[n++].part = "multiple of 16 bytes";
  bad[n].s = plain_shape(1, 256, 250, 256, 1, 1, 0), bad[n++].part = "row stride of C";
  bad[n].s = s, bad[n].s.a_stride[1] = 2, bad[n++].part = "A must be contiguous";
  for (int i = 0; i < n; i++) {
    tc_str_clear(&err);
    TC_CHECK(tc_gemm_tma_supported(&bad[i].s, &err) != 0 && has(tc_str_cstr(&err), bad[i].part),
             "case %d: '%s', want '%s'", i, tc_str_cstr(&err), bad[i].part);
    tc_gemm_params p;
    TC_CHECK(tc_gemm_tma_default(&bad[i].s, &p, &err) != 0, "case %d: a default", i);
  }
  /* a K that is a multiple of 8 is fine for K-major rows; M-major A needs M */
  TC_CHECK(tc_gemm_tma_supported(&(tc_gemm_shape){0}, &err) != 0, "empty shape");
  tc_gemm_params p;
  TC_REQUIRE(tc_gemm_tma_default(&s, &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(tc_gemm_params_is_tma(&p), "default kind");
  /* the candidates: each derives valid, sorted by padded FLOPs first */
  tc_gemm_params *c = NULL;
  tc_gemm_shape big = plain_shape(1, 8192, 8192, 8192, 1, 0, 0);
  int nc = tc_gemm_tma_candidates(&big, &c);
  TC_CHECK(nc >= 9, "%d candidates", nc);
  for (int i = 0; i < nc; i++) {
    tc_gemm_params q = c[i];
    TC_CHECK(tc_gemm_params_derive(&q, &big, &err) == 0, "candidate %d: %s", i, tc_str_cstr(&err));
    TC_CHECK(q.tma_cluster == 0 && q.tma_persist == 0,
             "candidate %d has a cluster or is persistent (opt-in only until measured)", i);
    if (i) TC_CHECK(tc_gemm_padded_flops(&big, &c[i - 1]) <= tc_gemm_padded_flops(&big, &c[i]),
                    "order at %d", i);
  }
  /* 8192^3: no padding anywhere, enough blocks for every tile: a largest
   * tile that fits the registers (128 x 256 or 256 x 128) with the most
   * stages that fit (4: 4 * 384 * 128 + 1024 = 197632 bytes) comes first */
  if (nc) {
    TC_CHECK(c[0].m_per_block * c[0].n_per_block == 32768 && c[0].tma_stages == 4,
             "first candidate tma:%d,%d,%d", c[0].m_per_block, c[0].n_per_block, c[0].tma_stages);
  }
  free(c);
  /* the wave model (132 SMs): with N = K = 8192, M = 64 gives 64 x 64
   * tiles (128 blocks, one wave, cost 4096 / 0.6 = 6827; 64 x 128 is 64
   * blocks at 8192 / 0.75 = 10923), M = 256 gives 128 x 128 (128 blocks,
   * 16384 / 0.9 = 18204; 128 x 256 is 64 blocks at 32768; 64 x 256 ties
   * but has one consumer warp group), M = 8192 gives 128 x 256 (16 waves)
   * - all warp-specialised */
  static const struct { int64_t m; int mpb, npb; } skinny[] = {
      {64, 64, 64}, {256, 128, 128}, {8192, 128, 256}};
  for (size_t i = 0; i < sizeof skinny / sizeof skinny[0]; i++) {
    tc_gemm_shape sk = plain_shape(1, skinny[i].m, 8192, 8192, 1, 0, 0);
    tc_gemm_params q;
    TC_REQUIRE(tc_gemm_tma_default(&sk, &q, &err) == 0, "%s", tc_str_cstr(&err));
    TC_CHECK(q.m_per_block == skinny[i].mpb && q.n_per_block == skinny[i].npb && q.tma_ws == 1,
             "M %lld: %s%d,%d,%d", (long long)skinny[i].m, q.tma_ws ? "tmaws:" : "tma:",
             q.m_per_block, q.n_per_block, q.tma_stages);
  }
  /* the kinds per target: sm_90a puts the TMA kernel first, then mma.sync;
   * sm_80, an unknown arch (NULL) and OpenCL have none of it */
  static const struct { tc_target t; const char *arch; int tma_first; } kinds[] = {
      {TC_TARGET_CUDA, "sm_90a", 1}, {TC_TARGET_CUDA, "sm_80", 0}, {TC_TARGET_CUDA, NULL, 0},
      {TC_TARGET_OPENCL, "sm_90a", 0}};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    tc_gemm_params *all = NULL;
    int na = tc_gemm_candidates_for(&big, kinds[i].t, kinds[i].arch, &all);
    int ntma = 0;
    for (int j = 0; j < na; j++) ntma += tc_gemm_params_is_tma(&all[j]);
    TC_CHECK(na > 0 && tc_gemm_params_is_tma(&all[0]) == kinds[i].tma_first &&
                 (kinds[i].tma_first ? ntma == nc : ntma == 0),
             "%s %s: %d candidates, %d tma", tc_target_name(kinds[i].t),
             kinds[i].arch ? kinds[i].arch : "NULL", na, ntma);
    const char *kind = "";
    tc_gemm_params q;
    TC_CHECK(tc_gemm_default_for(&big, kinds[i].t, kinds[i].arch, &q, &kind, &err) == 0 &&
                 (strcmp(kind, "TMA + wgmma") == 0) == kinds[i].tma_first,
             "default kind %s", kind);
    free(all);
  }
}

static void run_case(const mcase *tc, int expect_ok) {
  int64_t bad = gemm_run_cl(cl, &H, tc, expect_ok, NULL);
  if (expect_ok)
    TC_CHECK(bad == 0, "%s G%lld M%lld N%lld K%lld: %lld wrong", tc->cfg ? tc->cfg : "default",
             (long long)tc->g, (long long)tc->m, (long long)tc->n, (long long)tc->k, (long long)bad);
  else
    TC_CHECK(bad > 0, "%s: the injected fault was not seen (%lld wrong)", tc->cfg, (long long)bad);
}

/* a_trans 1: A stored [M][K] (K-major); b_trans 1: B stored [N][K] (K-major) */
static const mcase cases[] = {
    {"tma:128,128,2", 1, 256, 256, 128, 1, 1, TC_BF16, TC_BF16, 0, 1.0f},
    {"tma:128,128,4", 1, 256, 256, 128, 0, 0, TC_BF16, TC_BF16, 0, 1.0f},
    {"tma:64,64,3", 1, 256, 256, 128, 1, 0, TC_F16, TC_F16, 0, 1.0f},
    {"tma:128,64,2", 1, 256, 256, 128, 0, 1, TC_F16, TC_F16, 0, 0.5f},
    /* ragged: the copies' zero fill and the clipped stores */
    {"tma:128,128,3", 1, 200, 136, 200, 1, 1, TC_BF16, TC_BF16, 0, 1.0f},
    {"tma:64,128,2", 1, 72, 200, 72, 0, 0, TC_BF16, TC_BF16, 0, 1.0f},
    {"tma:192,192,2", 1, 200, 200, 64, 1, 0, TC_BF16, TC_BF16, 0, 1.0f},
    {"tma:256,128,2", 1, 264, 264, 136, 0, 1, TC_F16, TC_F16, 0, 1.0f},
    {"tma:128,256,2", 1, 136, 264, 64, 1, 0, TC_BF16, TC_BF16, 0, 1.0f},
    /* a batch: 3-D tensor maps */
    {"tma:64,64,2", 2, 96, 80, 160, 1, 1, TC_BF16, TC_BF16, 0, 1.0f},
    {"tma:64,128,4", 3, 64, 128, 320, 0, 0, TC_F16, TC_F16, 0, 1.0f},
    /* the warp-specialised pipeline (run lockstep in the emulation) */
    {"tmaws:128,256,4", 1, 200, 264, 200, 1, 0, TC_BF16, TC_BF16, 0, 1.0f},
    {"tmaws:64,128,3", 1, 72, 136, 136, 0, 1, TC_F16, TC_F16, 0, 1.0f},
    /* 17 tile rows: groups of 8, 8 and 1 rows in the blocks' walk */
    {"tmaws:64,64,2", 1, 1064, 136, 64, 1, 1, TC_BF16, TC_BF16, 0, 1.0f},
    {"tma:64,64,2", 2, 1064, 72, 64, 0, 0, TC_BF16, TC_BF16, 0, 1.0f},
    /* 2-block clusters: B's halves (N-major boxes, K-major half boxes);
     * an odd number of tile rows leaves the last cluster a block past M */
    {"tmaws:64,128,2,2", 1, 200, 264, 136, 1, 0, TC_BF16, TC_BF16, 0, 1.0f},
    {"tmaws:128,64,3,2", 1, 136, 200, 72, 0, 1, TC_F16, TC_F16, 0, 1.0f},
    {"tmaws:64,64,2,2", 2, 1064, 72, 64, 1, 1, TC_BF16, TC_BF16, 0, 1.0f},
    /* persistent: 51 tiles over 3 blocks, crossing the groups of 8 rows
     * (one C buffer); a batch; a cluster (12 tiles over 4 blocks); a grid
     * larger than the 2 tiles (2 blocks) */
    {"tmaws:64,64,2,1,3", 1, 1064, 136, 64, 1, 1, TC_BF16, TC_BF16, 0, 1.0f},
    {"tmaws:128,128,3,1,5", 2, 200, 264, 136, 0, 0, TC_F16, TC_F16, 0, 1.0f},
    {"tmaws:64,128,2,2,4", 1, 200, 264, 136, 1, 0, TC_BF16, TC_BF16, 0, 1.0f},
    {"tmaws:128,256,4,1,132", 1, 136, 264, 64, 1, 0, TC_BF16, TC_BF16, 0, 1.0f},
    /* 3 C boxes per tile through 2 buffers: the next tile's first box
     * reuses the buffer of the last (9 tiles over 3 blocks) */
    {"tmaws:128,192,3,1,3", 1, 264, 400, 136, 0, 1, TC_F16, TC_F16, 0, 1.0f},
    /* the heuristic's choice */
    {NULL, 1, 128, 192, 256, 1, 0, TC_BF16, TC_BF16, 0, 1.0f},
};

static void test_gemm_opencl(void) {
  if (!cl) TC_SKIP("no OpenCL device");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i], 1);
}

static void test_wrong_layouts(void) {
  if (!cl) TC_SKIP("no OpenCL device");
  for (int f = 1; f <= 2; f++) {
    tc_test_hooks_set(&(tc_test_hooks){.gemm_tma_fault = f});
    run_case(&cases[0], 0);
    run_case(&cases[1], 0);
    tc_test_hooks_set(NULL);
  }
  /* a cluster whose blocks ignore their rank when they load B's shares:
   * half of B never lands (N-major boxes and K-major half boxes) */
  const mcase *clusters[2] = {NULL, NULL};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    if (cases[i].cfg && strcmp(cases[i].cfg, "tmaws:64,128,2,2") == 0) clusters[0] = &cases[i];
    if (cases[i].cfg && strcmp(cases[i].cfg, "tmaws:128,64,3,2") == 0) clusters[1] = &cases[i];
  }
  TC_REQUIRE(clusters[0] && clusters[1], "the cluster cases are in the table");
  tc_test_hooks_set(&(tc_test_hooks){.gemm_tma_fault = 3});
  run_case(clusters[0], 0);
  run_case(clusters[1], 0);
  tc_test_hooks_set(NULL);
}

static void test_cuda(void) {
  tc_str why;
  tc_str_init(&why);
  int nvrtc = nvrtc_loads(&why);
  if (!nvrtc) printf("  (%s)\n", tc_str_cstr(&why));
  tc_str_free(&why);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const mcase *tc = &cases[i];
    problem P;
    problem_make(tc, &P);
    tc_gemm_params p;
    tc_gemm_kernel k;
    memset(&k, 0, sizeof k);
    char cfg[64], want[96];
    if (generate(&H, tc, &P, TC_TARGET_CUDA, &p, &k, cfg, sizeof cfg)) {
      const char *t = tc->ab == TC_BF16 ? "bf16" : "f16";
      snprintf(want, sizeof want, "wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s",
               p.n_per_block, t, t);
      TC_CHECK(has(k.source, want), "%s: no %s", cfg, want);
      /* imm-trans-a/b: 1 for an M-major A / N-major B */
      snprintf(want, sizeof want, "p, 1, 1, %d, %d;", !tc->a_trans, !tc->b_trans);
      TC_CHECK(has(k.source, want), "%s: no '%s'", cfg, want);
      snprintf(want, sizeof want, "cp.async.bulk.tensor.%dd.shared::cluster.global.mbarrier",
               tc->g > 1 ? 3 : 2);
      TC_CHECK(has(k.source, want), "%s: no %s", cfg, want);
      TC_CHECK(has(k.source, "prefetch.tensormap [%0];\" :: \"l\"((unsigned long long)&tc_tm_c)") &&
                   has(k.source, "mbarrier.try_wait.parity") &&
                   has(k.source, "stmatrix.sync.aligned.m8n8.x4.shared.b16") &&
                   has(k.source, ".global.shared::cta.bulk_group") &&
                   !has(k.source, "tc_wgmma_emu") && !has(k.source, "tc_ldsm_st"),
               "%s: the instructions", cfg);
      /* the launch */
      tc_launch L;
      tc_gemm_kernel_launch_config(&k, &L);
      TC_CHECK(L.dyn_smem == (size_t)tc_gemm_tma_smem_bytes(&p) && L.ntmaps == 3 && L.tmaps,
               "%s: launch: dyn smem %zu, %d tensor maps", cfg, L.dyn_smem, L.ntmaps);
      int cmb = p.tma_cluster > 1 ? p.tma_cluster : 1;
      int64_t tiles_m = (tc->m + p.m_per_block - 1) / p.m_per_block;
      int64_t tiles = tc->g * ((tiles_m + cmb - 1) / cmb * cmb) *
                      ((tc->n + p.n_per_block - 1) / p.n_per_block);
      int64_t grid = p.tma_persist && p.tma_persist < tiles ? p.tma_persist : tiles;
      TC_CHECK(L.grid[0] == (size_t)grid &&
                   L.block[0] == (size_t)(p.m_per_block / 64 + p.tma_ws) * 128,
               "%s: grid %zu block %zu", cfg, L.grid[0], L.block[0]);
      /* a persistent launch may be cut to the SMs, in whole clusters */
      TC_CHECK(L.persistent == (p.tma_persist ? cmb : 0) && k.persistent == L.persistent,
               "%s: persistent %d", cfg, L.persistent);
      /* persistent: the tile loop of the producer and the consumers, the
       * running K-tile count, the wait for the stores' reads before the C
       * tile is rewritten and at the end */
      char pw[3][160];
      snprintf(pw[0], sizeof pw[0],
               "for (int tc_tile = tc_bid; tc_tile < %lld; tc_tile += (int)gridDim.x) {",
               (long long)tiles);
      snprintf(pw[1], sizeof pw[1], "for (int kt = 0; kt < %lld; ++kt, ++tc_it) {",
               (long long)((tc->k + 63) / 64));
      snprintf(pw[2], sizeof pw[2], "if (tid == 0) asm volatile(\"cp.async.bulk.wait_group.read 0;\"");
      for (int w = 0; w < 3; w++)
        TC_CHECK(has(k.source, pw[w]) == (p.tma_persist > 0), "%s: '%s' %s", cfg, pw[w],
                 p.tma_persist ? "missing" : "in a kernel of one tile per block");
      /* the consumers' releases of stages (arrivals on the block's empty
       * barriers): the K loop's, and a persistent kernel's epilogue's of
       * the tile's last stage (the producer fills the next tile's); the
       * barriers and parities they name are evaluated by the replay in
       * tests/test_sm90_facts.c */
      int releases = p.tma_ws ? (p.tma_persist ? 2 : 1) : 0;
      TC_CHECK(count_of(k.source, "mbarrier.arrive.shared::cta.b64") == releases,
               "%s: %d releases, want %d", cfg, count_of(k.source, "mbarrier.arrive.shared::cta.b64"),
               releases);
      if (p.tma_persist) {
        const char *loops = strstr(k.source, pw[0]);
        TC_CHECK(loops && strstr(loops + 1, pw[0]), "%s: one tile loop per role", cfg);
        /* C box by box: before box j's buffer is written, all but the
         * other buffer's last copy have read (j > 0, or the previous
         * tile's last box is in the other buffer: an even box count), else
         * all; one more wait for all at the end */
        int nbox = p.n_per_block / 64, two = tc_gemm_tma_c_buffers(p.n_per_block) == 2;
        int want1 = two ? (nbox % 2 ? nbox - 1 : nbox) : 0, want0 = 1 + nbox - want1;
        TC_CHECK(count_of(k.source, "cp.async.bulk.wait_group.read 1;") == want1 &&
                     count_of(k.source, "cp.async.bulk.wait_group.read 0;") == want0 &&
                     count_of(k.source, "cp.async.bulk.commit_group;") == nbox,
                 "%s: waits for the C buffers: %d x read 1, %d x read 0, %d commits", cfg,
                 count_of(k.source, "cp.async.bulk.wait_group.read 1;"),
                 count_of(k.source, "cp.async.bulk.wait_group.read 0;"),
                 count_of(k.source, "cp.async.bulk.commit_group;"));
      }
      /* tensor maps, by hand: A K-major [M][K + 8]: dims {K, M}, box {64,
       * MPB}; M-major [K][M + 8]: dims {M, K}, box {64, 64}; B likewise with
       * N; C [M][N + 8]: dims {N, M}, box {64, MPB}; all 128B swizzle,
       * strides in bytes, buffers 0, 1, 2 */
      const tc_rt_tmap *tm = k.tmaps;
      int64_t lda = (tc->a_trans ? tc->k : tc->m) + 8, ldb = (tc->b_trans ? tc->k : tc->n) + 8;
      int64_t ldc = tc->n + 8;
      int rank = tc->g > 1 ? 3 : 2;
      TC_CHECK(tm[0].buffer == 0 && tm[0].rank == rank && tm[0].swizzle == 128 &&
                   tm[0].dtype == tc->ab &&
                   tm[0].dims[0] == (uint64_t)(tc->a_trans ? tc->k : tc->m) &&
                   tm[0].dims[1] == (uint64_t)(tc->a_trans ? tc->m : tc->k) &&
                   tm[0].strides[1] == (uint64_t)(lda * 2) && tm[0].box[0] == 64 &&
                   tm[0].box[1] == (uint32_t)(tc->a_trans ? p.m_per_block : 64),
               "%s: A's tensor map", cfg);
      TC_CHECK(tm[1].buffer == 1 && tm[1].rank == rank &&
                   tm[1].dims[0] == (uint64_t)(tc->b_trans ? tc->k : tc->n) &&
                   tm[1].dims[1] == (uint64_t)(tc->b_trans ? tc->n : tc->k) &&
                   tm[1].strides[1] == (uint64_t)(ldb * 2) &&
                   tm[1].box[1] == (uint32_t)(tc->b_trans ? p.n_per_block / cmb : 64),
               "%s: B's tensor map", cfg);
      TC_CHECK(tm[2].buffer == 2 && tm[2].dims[0] == (uint64_t)tc->n &&
                   tm[2].dims[1] == (uint64_t)tc->m && tm[2].strides[1] == (uint64_t)(ldc * 2) &&
                   tm[2].box[0] == 64 && tm[2].box[1] == (uint32_t)p.m_per_block,
               "%s: C's tensor map", cfg);
      for (int mi = 0; mi < 3; mi++) { /* every rule of cuTensorMapEncodeTiled holds */
        tc_str terr;
        tc_str_init(&terr);
        TC_CHECK(tc_tmap_check(&tm[mi], 3, &terr) == TC_OK, "%s: tensor map %d: %s", cfg, mi,
                 tc_str_cstr(&terr));
        tc_str_free(&terr);
      }
      if (rank == 3)
        TC_CHECK(tm[0].dims[2] == (uint64_t)tc->g &&
                     tm[0].strides[2] == (uint64_t)(lda * (tc->a_trans ? tc->m : tc->k) * 2) &&
                     tm[2].strides[2] == (uint64_t)(ldc * tc->m * 2),
                 "%s: batch strides", cfg);
      /* the warp-specialised pipeline: the producer warp group's registers,
       * the empty barriers' arrival counts, one wgmma group left in flight,
       * the consumers' named barrier (instruction operands; the waits'
       * parities are evaluated by the replay in tests/test_sm90_facts.c) */
      int nc = p.m_per_block / 64;
      char ws[5][160];
      snprintf(ws[0], sizeof ws[0], "setmaxnreg.dec.sync.aligned.u32 40;");
      snprintf(ws[1], sizeof ws[1], "setmaxnreg.inc.sync.aligned.u32 %d;",
               tc_gemm_tma_consumer_regs(nc));
      snprintf(ws[2], sizeof ws[2], "mbarrier.init.shared::cta.b64 [%%0], %d;\" :: "
               "\"r\"(tc_bar_u32(&tc_empty[s]))", nc * cmb);
      snprintf(ws[3], sizeof ws[3], "wgmma.wait_group.sync.aligned 1;");
      snprintf(ws[4], sizeof ws[4], "bar.sync 1, %d;", nc * 128);
      snprintf(want, sizeof want, "__launch_bounds__(%lld, 1) tilec_gemm_tma(",
               (long long)(nc + p.tma_ws) * 128);
      TC_CHECK(has(k.source, want), "%s: no %s (setmaxnreg needs the register count at entry)",
               cfg, want);
      for (int w = 0; w < 5; w++)
        TC_CHECK(has(k.source, ws[w]) == p.tma_ws, "%s: '%s' %s", cfg, ws[w],
                 p.tma_ws ? "missing" : "in the block-synchronous kernel");
      /* clusters: the attribute, the cluster barriers, B multicast to both
       * blocks, the release of the peer's stage; none of it otherwise */
      static const char *const clw[] = {
          "__cluster_dims__(2, 1, 1)", "barrier.cluster.arrive.release;",
          "complete_tx::bytes.multicast::cluster", "\"h\"((unsigned short)3)",
          "mapa.shared::cluster.u32 ra, %0, %1; mbarrier.arrive.shared::cluster.b64", "goto tc_end;",
          "barrier.cluster.arrive.relaxed;"};
      for (size_t w = 0; w < sizeof clw / sizeof clw[0]; w++)
        TC_CHECK(has(k.source, clw[w]) == (cmb == 2), "%s: '%s' %s", cfg, clw[w],
                 cmb == 2 ? "missing" : "without a cluster");
      if (nvrtc) {
        char *ptx = NULL;
        tc_str err;
        tc_str_init(&err);
        tc_status st = tc_cuda_compile(k.source, "sm_90a", &ptx, &err);
        TC_CHECK(st == TC_OK, "%s sm_90a: %.3000s", cfg, tc_str_cstr(&err));
        if (st == TC_OK)
          TC_CHECK(has(ptx, "wgmma.mma_async") && has(ptx, "cp.async.bulk.tensor") &&
                       has(ptx, "stmatrix"),
                   "%s: the PTX", cfg);
        free(ptx);
        tc_str_free(&err);
      }
    }
    tc_gemm_kernel_free(&k);
    problem_free(&P);
  }
  /* HIP has none of it */
  problem P;
  problem_make(&cases[0], &P);
  tc_gemm_params p;
  tc_gemm_kernel k;
  TC_STR_LOCAL(err);
  TC_REQUIRE(tc_gemm_params_parse("tma:128,128,2", &p, &err) == 0, "%s", tc_str_cstr(&err));
  tc_gemm_shape s = tc_gemm_problem_shape(&P.pb);
  TC_REQUIRE(tc_gemm_params_derive(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(tc_gemm_generate(&P.pb, &p, TC_TARGET_HIP, "k", &k, &err) ==
                   TC_ERR_UNSUPPORTED && has(tc_str_cstr(&err), "sm_90a"),
           "hip: %s", tc_str_cstr(&err));
  problem_free(&P);
}

/* Through the public API: M = 1 (a view may give the extent-1 dimension
 * stride 0) plans a TMA kernel whose tensor maps pass every rule with
 * buffers of exactly the matrices' bytes; the run then fails only for
 * want of a device here, or runs and verifies where there is one. */
static void test_api_extent_one(void) {
  static const int64_t shapes[][3] = {{1, 64, 100}, {1, 8, 64}, {72, 64, 8}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    tc_gemm_desc d;
    tc_gemm_desc_init(&d);
    d.m = shapes[i][0], d.n = shapes[i][1], d.k = shapes[i][2], d.dtype = TC_F16;
    tc_op_options o;
    memset(&o, 0, sizeof o);
    o.target = TC_TARGET_CUDA, o.arch = "sm_90a", o.perfdb = "";
    tc_gemm *g = tc_gemm_new(&d, &o);
    TC_REQUIRE(tc_gemm_plan(g, NULL) == TC_OK, "plan: %s", tc_gemm_error(g));
    TC_CHECK(strncmp(tc_gemm_perf_config(g), "tma", 3) == 0, "M %lld N %lld K %lld: %s",
             (long long)d.m, (long long)d.n, (long long)d.k, tc_gemm_perf_config(g));
    size_t na = (size_t)(d.m * d.k), nb = (size_t)(d.k * d.n), nc = (size_t)(d.m * d.n);
    uint16_t *a = calloc(na, 2), *b = calloc(nb, 2), *c = calloc(nc, 2);
    for (size_t j = 0; j < na; j++) a[j] = 0x3c00; /* 1.0 */
    for (size_t j = 0; j < nb; j++) b[j] = 0x3800; /* 0.5 */
    tc_status st = tc_gemm_run(g, a, b, c, NULL);
    if (st == TC_OK)
      TC_CHECK(tc_gemm_verify(g, a, b, c, NULL) == 0, "verify: %s", tc_gemm_error(g));
    else
      TC_CHECK(st == TC_ERR_NO_DEVICE && !has(tc_gemm_error(g), "tensor map"),
               "M %lld N %lld K %lld: %s: %s", (long long)d.m, (long long)d.n, (long long)d.k,
               tc_status_name(st), tc_gemm_error(g));
    free(a), free(b), free(c);
    tc_gemm_free(g);
  }
}

int main(void) {
  /* rows of 16-byte multiples (tensor maps), NaN / sentinels after them */
  gemm_ab_extra = 8, gemm_c_extra = 8;
  cl = open_cl_or_null();
  TC_RUN(test_params);
  TC_RUN(test_supported);
  TC_RUN(test_ws_protocol);
  TC_RUN(test_c_buffers);
  TC_RUN(test_gemm_opencl);
  TC_RUN(test_wrong_layouts);
  TC_RUN(test_cuda);
  TC_RUN(test_api_extent_one);
  if (cl) tc_cl_close(cl);
  TC_MAIN_END();
}
