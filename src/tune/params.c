/* params.c - the tunable parameters of the gridwise GEMM (rocMLIR's
 * MIOpen-dialect rules for non-XDLOPS kernels): deriving the dependent
 * parameters from the six tuned ones, checking every rule, perf-config
 * strings, and the heuristic's ordered candidate list.  The XDLOPS (MFMA)
 * rules are at the end of the file (derive_xdlops, check_xdlops;
 * docs/amd.md).
 *
 * Derivation (tc_gemm_params_derive), for the tuned BS, MPB, NPB, KPB,
 * MPT, NPT:
 *
 *   Thread clusters of the blockwise GEMM.  Each thread owns a 2x2 grid of
 *   MPT x NPT sub-tiles of C (the 2x2 pipeline), so along M the block
 *   needs MPB / (2 * MPT) threads = m_level0 * m_level1.  We split that
 *   count as level0 = gcd(count, 4) (4 where possible, the inner cluster of
 *   4x4 = 16 neighbouring threads) and level1 = count / level0.  Same for N.
 *   Rule: MPT * m_level0 * m_level1 * 2 == MPB, NPT * ... == NPB, and
 *   BS == m_level0 * m_level1 * n_level0 * n_level1.
 *
 *   Blockwise copies.  The A tile is KPB x MPB elements copied by BS
 *   threads, every thread the same slice_k x slice_m sub-block, so
 *   KPB * MPB must be a multiple of BS; cluster lengths a_cluster_k =
 *   KPB / slice_k, a_cluster_m = MPB / slice_m (their product is BS).  The
 *   read dimension is M when the view allows reads along M at least as wide
 *   as along K (ties, e.g. unknown widths, go to M), else K.  The slice
 *   length along the read dimension is the largest divisor of the
 *   per-thread count that is at most the vector width there (and gives a
 *   valid slice); failing that the smallest valid one above it, and
 *   failing that the other dimension is tried.  src_per_read is the
 *   largest power of two dividing both that slice length and the vector
 *   width; dst_per_write (the LDS write along M, LDS being [K][M]) is the
 *   largest power of two dividing slice_m, at most 4.  Same for B with N.
 *   rocMLIR's example 256,128,128,16,4,4 with unknown vector widths gives
 *   levels 4/4/4/4 and A/B clusters K=2 x M=128 with 1-element reads,
 *   exactly rocMLIR's values.
 *
 *   c_per_write is the largest power of two dividing NPT that the view of
 *   C allows along N. */
#include "params.h"

#include "../base/base.h"
#include "../target/target.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TUNED 65536   /* bound on every tuned value (keeps products in int) */
#define MAX_BLOCK 1024    /* threads per block on every target */
#define MAX_LDS 65536     /* bytes of shared memory per block */
#define MAX_DST_WRITE 4   /* widest LDS write (f32 elements, 16 bytes) */
#define MAX_REGS 256      /* accumulators per thread, and elements per thread per copy */

/* Fills err and gives -1. */
#define fail(err, ...) (tc_err_set((err), __VA_ARGS__), -1)

static int gcd(int a, int b) {
  while (b) {
    int t = a % b;
    a = b, b = t;
  }
  return a;
}

/* Largest power of two dividing v (v > 0). */
static int pow2_part(int v) { return v & -v; }

/* Largest power of two dividing both a and b, b <= 0 meaning "unknown"
 * (treated as 1). */
static int common_pow2(int a, int b) {
  if (b < 1) b = 1;
  int x = pow2_part(a), y = pow2_part(b);
  return x < y ? x : y;
}

static const char *const tuned_names[6] = {"block_size",  "m_per_block",  "n_per_block",
                                           "k_per_block", "m_per_thread", "n_per_thread"};

static int tuned_value(const tc_gemm_params *p, int i) {
  switch (i) {
    case 0: return p->block_size;
    case 1: return p->m_per_block;
    case 2: return p->n_per_block;
    case 3: return p->k_per_block;
    case 4: return p->m_per_thread;
    default: return p->n_per_thread;
  }
}

static int check_tuned(const tc_gemm_params *p, tc_str *err) {
  for (int i = 0; i < 6; i++) {
    int v = tuned_value(p, i);
    if (v < 1 || v > MAX_TUNED)
      return fail(err, "%s must be between 1 and %d (got %d)", tuned_names[i], MAX_TUNED, v);
  }
  if (p->block_size > MAX_BLOCK)
    return fail(err, "block_size must be at most %d threads (got %d)", MAX_BLOCK,
                p->block_size);
  return 0;
}

int tc_gemm_params_is_xdlops(const tc_gemm_params *p) {
  return p && (p->m_per_wave > 0 || p->n_per_wave > 0);
}

int tc_gemm_params_is_mma(const tc_gemm_params *p) { return p && p->mma > 0; }

int64_t tc_gemm_lds_bytes(const tc_gemm_params *p) {
  if (tc_gemm_params_is_tma(p)) return tc_gemm_tma_smem_bytes(p);
  int64_t elem = tc_gemm_params_is_xdlops(p) ? 2 : 4;
  return 2 * (int64_t)p->k_per_block * ((int64_t)p->m_per_block + p->n_per_block) * elem;
}

static int vec_of(const tc_gemm_shape *s, int which) {
  if (!s) return 1;
  int v = 1;
  switch (which) {
    case 0: v = s->a_vec_k; break;
    case 1: v = s->a_vec_m; break;
    case 2: v = s->b_vec_k; break;
    case 3: v = s->b_vec_n; break;
    default: v = s->c_vec_n; break;
  }
  return v < 1 ? 1 : v;
}

/* Checks one blockwise copy (A: mn = "m", B: mn = "n").  ext_mn is M or N
 * per block; vk, vmn the shape's vector widths along K and M/N. */
static int check_copy(char op, const char *mn, int bs, int kpb, int ext_mn, int ck, int cmn,
                      int read_dim, int per_read, int per_write, int vk, int vmn, tc_str *err) {
  char lo = op == 'A' ? 'a' : 'b';
  if (ck < 1 || cmn < 1)
    return fail(err, "%c_cluster_k and %c_cluster_%s must be positive (got %d, %d)", lo,
                lo, mn, ck, cmn);
  if ((int64_t)ck * cmn != bs)
    return fail(err, "%c_cluster_k * %c_cluster_%s must equal block_size (%d*%d = %lld != %d)",
                lo, lo, mn, ck, cmn, (long long)ck * cmn, bs);
  if (kpb % ck)
    return fail(err, "k_per_block must be a multiple of %c_cluster_k (%d %% %d != 0)", lo,
                kpb, ck);
  if (ext_mn % cmn)
    return fail(err, "%s_per_block must be a multiple of %c_cluster_%s (%d %% %d != 0)", mn,
                lo, mn, ext_mn, cmn);
  int slice_k = kpb / ck, slice_mn = ext_mn / cmn;
  if ((int64_t)slice_k * slice_mn > MAX_REGS)
    return fail(err,
                "each thread would copy %lld elements of %c per tile (k_per_block * %s_per_block / "
                "block_size); at most %d",
                (long long)slice_k * slice_mn, op, mn, MAX_REGS);
  if (read_dim != TC_GEMM_READ_K && read_dim != TC_GEMM_READ_MN)
    return fail(err, "%c_read_dim must be TC_GEMM_READ_K or TC_GEMM_READ_MN (got %d)",
                lo, read_dim);
  int along = read_dim == TC_GEMM_READ_K ? slice_k : slice_mn;
  int vec = read_dim == TC_GEMM_READ_K ? vk : vmn;
  const char *dname = read_dim == TC_GEMM_READ_K ? "K" : (op == 'A' ? "M" : "N");
  if (per_read < 1 || along % per_read)
    return fail(err,
                "%c_src_per_read must divide the thread's %c slice along %s (slice %d, got %d)",
                lo, op, dname, along, per_read);
  if (per_read > vec)
    return fail(err,
                "%c_src_per_read %d exceeds the widest legal vector read of %c along %s (%d)",
                lo, per_read, op, dname, vec);
  if (per_write < 1 || slice_mn % per_write || per_write > MAX_DST_WRITE)
    return fail(err,
                "%c_dst_per_write must divide the thread's %c slice along %s (slice %d) and be at "
                "most %d (got %d)",
                lo, op, op == 'A' ? "M" : "N", slice_mn, MAX_DST_WRITE, per_write);
  return 0;
}

static int check_xdlops(const tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err);
static int check_copies(const tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err);
static int tc_wgmma_params_check(const tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err);
static int tc_wgmma_params_derive(tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err);
static int tc_wgmma_params_parse(const char *text, tc_gemm_params *p, tc_str *err);
static int check_mma(const tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err);
static int tma_check(const tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err);
static int tma_derive(tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err);
static int tma_parse(const char *text, tc_gemm_params *p, tc_str *err);

static int check_shape(const tc_gemm_shape *s, tc_str *err);

/* A thread's 2 x 2 sub-tiles of MPT x NPT accumulators: at most MAX_REGS. */
static int check_acc(const tc_gemm_params *p, tc_str *err) {
  int64_t acc = 4 * (int64_t)p->m_per_thread * p->n_per_thread;
  if (acc > MAX_REGS)
    return fail(err,
                "4 * m_per_thread * n_per_thread accumulators per thread must be at most %d (got "
                "%lld)",
                MAX_REGS, (long long)acc);
  return 0;
}

int tc_gemm_params_check(const tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err) {
  /* a shape given (M set) must be one: the rules below divide by it */
  if (s && s->m && check_shape(s, err)) return -1;
  if (tc_gemm_params_is_tma(p)) return tma_check(p, s, err);
  if (tc_gemm_params_is_wgmma(p)) return tc_wgmma_params_check(p, s, err);
  if (tc_gemm_params_is_mma(p)) return check_mma(p, s, err);
  if (tc_gemm_params_is_xdlops(p)) return check_xdlops(p, s, err);
  if (check_tuned(p, err)) return -1;
  if (p->m_level0 < 1 || p->m_level1 < 1 || p->n_level0 < 1 || p->n_level1 < 1)
    return fail(err,
                "m_level0, m_level1, n_level0 and n_level1 must be positive (got %d, %d, %d, %d)",
                p->m_level0, p->m_level1, p->n_level0, p->n_level1);
  if ((int64_t)p->m_per_thread * p->m_level0 * p->m_level1 * 2 != p->m_per_block)
    return fail(err,
                "m_per_thread * m_level0 * m_level1 * 2 must equal m_per_block (%d*%d*%d*2 != %d)",
                p->m_per_thread, p->m_level0, p->m_level1, p->m_per_block);
  if ((int64_t)p->n_per_thread * p->n_level0 * p->n_level1 * 2 != p->n_per_block)
    return fail(err,
                "n_per_thread * n_level0 * n_level1 * 2 must equal n_per_block (%d*%d*%d*2 != %d)",
                p->n_per_thread, p->n_level0, p->n_level1, p->n_per_block);
  if (check_acc(p, err)) return -1;
  int64_t threads = (int64_t)p->m_level0 * p->m_level1 * p->n_level0 * p->n_level1;
  if (threads != p->block_size)
    return fail(err,
                "block_size must equal m_level0 * m_level1 * n_level0 * n_level1 (%d*%d*%d*%d = "
                "%lld != %d)",
                p->m_level0, p->m_level1, p->n_level0, p->n_level1, (long long)threads,
                p->block_size);
  if (check_copies(p, s, err)) return -1;
  if (p->c_per_write < 1 || p->n_per_thread % p->c_per_write || p->c_per_write > vec_of(s, 4))
    return fail(err,
                "c_per_write must divide n_per_thread (%d) and be at most the widest legal vector "
                "write of C along N (%d) (got %d)",
                p->n_per_thread, vec_of(s, 4), p->c_per_write);
  int64_t lds = tc_gemm_lds_bytes(p);
  if (lds > MAX_LDS)
    return fail(err,
                "shared memory 2 * k_per_block * (m_per_block + n_per_block) * 4 = %lld bytes "
                "exceeds %d",
                (long long)lds, MAX_LDS);
  return 0;
}

/* Splits a cluster count into level0 * level1 (see the top of the file). */
static void split_levels(int count, int *l0, int *l1) {
  *l0 = gcd(count, 4);
  *l1 = count / *l0;
}

/* Chooses the slice of one blockwise copy along read dimension `dim`
 * (extent ext_d per block, vector width vec; the other dimension has
 * extent ext_o).  Returns the slice length along dim, or 0 if none. */
static int pick_slice(int per_thread, int ext_d, int ext_o, int vec) {
  int best_below = 0, best_above = 0;
  for (int w = 1; w <= per_thread; w++) {
    if (per_thread % w || ext_d % w || ext_o % (per_thread / w)) continue;
    if (w <= vec) best_below = w;                        /* largest at most vec */
    else if (!best_above) best_above = w;                /* smallest above vec */
  }
  return best_below ? best_below : best_above;
}

/* Derives one blockwise copy; op 'A' or 'B'.  Returns 0 or -1 + err. */
static int derive_copy(char op, int bs, int kpb, int ext_mn, int vk, int vmn, int *ck, int *cmn,
                       int *read_dim, int *per_read, int *per_write, tc_str *err) {
  const char *mn = op == 'A' ? "m" : "n";
  int64_t elems = (int64_t)kpb * ext_mn;
  if (elems % bs)
    return fail(err,
                "k_per_block * %s_per_block must be a multiple of block_size for the %c copy (every "
                "thread copies the same slice): %d*%d = %lld is not a multiple of %d",
                mn, op, kpb, ext_mn, (long long)elems, bs);
  if (elems / bs > MAX_REGS)
    return fail(err,
                "each thread would copy %lld elements of %c per tile (k_per_block * %s_per_block / "
                "block_size); at most %d",
                (long long)(elems / bs), op, mn, MAX_REGS);
  int per_thread = (int)(elems / bs);
  int first = vmn >= vk ? TC_GEMM_READ_MN : TC_GEMM_READ_K;
  for (int t = 0; t < 2; t++) {
    int dim = t == 0 ? first : (first == TC_GEMM_READ_MN ? TC_GEMM_READ_K : TC_GEMM_READ_MN);
    int ext_d = dim == TC_GEMM_READ_K ? kpb : ext_mn, ext_o = dim == TC_GEMM_READ_K ? ext_mn : kpb;
    int vec = dim == TC_GEMM_READ_K ? vk : vmn;
    int w = pick_slice(per_thread, ext_d, ext_o, vec);
    if (!w) continue;
    int slice_k = dim == TC_GEMM_READ_K ? w : per_thread / w;
    int slice_mn = per_thread / slice_k;
    *ck = kpb / slice_k;
    *cmn = ext_mn / slice_mn;
    *read_dim = dim;
    *per_read = common_pow2(w, vec);
    *per_write = pow2_part(slice_mn) < MAX_DST_WRITE ? pow2_part(slice_mn) : MAX_DST_WRITE;
    return 0;
  }
  return fail(err,
              "no %c copy cluster: the %d elements per thread (k_per_block * %s_per_block / "
              "block_size) cannot form a slice_k x slice_%s block with slice_k dividing "
              "k_per_block %d and slice_%s dividing %s_per_block %d",
              op, per_thread, mn, mn, kpb, mn, mn, ext_mn);
}

/* The wave-based kernels (xdlops:, mma:, wgmma:): the block is waves_m *
 * waves_n waves of `lanes` threads; the A and B copies are derived from it
 * and C is written one element at a time. */
static int derive_wave_copies(tc_gemm_params *q, const tc_gemm_shape *s, int lanes, tc_str *err) {
  q->block_size = q->waves_m * q->waves_n * lanes;
  if (derive_copy('A', q->block_size, q->k_per_block, q->m_per_block, vec_of(s, 0), vec_of(s, 1),
                  &q->a_cluster_k, &q->a_cluster_m, &q->a_read_dim, &q->a_src_per_read,
                  &q->a_dst_per_write, err))
    return -1;
  if (derive_copy('B', q->block_size, q->k_per_block, q->n_per_block, vec_of(s, 2), vec_of(s, 3),
                  &q->b_cluster_k, &q->b_cluster_n, &q->b_read_dim, &q->b_src_per_read,
                  &q->b_dst_per_write, err))
    return -1;
  q->c_per_write = 1;
  return 0;
}

/* The non-XDLOPS kernel's thread tiling from the tuned fields of q: the
 * rules on them, MPB and NPB multiples of 2 MPT and 2 NPT, the levels
 * (split_levels), and BS their product.  0, or -1 with err. */
static int derive_levels(tc_gemm_params *q, tc_str *err) {
  if (check_tuned(q, err)) return -1;
  if (q->m_per_block % (2 * q->m_per_thread))
    return fail(err,
                "m_per_thread * m_level0 * m_level1 * 2 must equal m_per_block: m_per_block %d is "
                "not a multiple of m_per_thread*2 = %d",
                q->m_per_block, 2 * q->m_per_thread);
  if (q->n_per_block % (2 * q->n_per_thread))
    return fail(err,
                "n_per_thread * n_level0 * n_level1 * 2 must equal n_per_block: n_per_block %d is "
                "not a multiple of n_per_thread*2 = %d",
                q->n_per_block, 2 * q->n_per_thread);
  int mc = q->m_per_block / (2 * q->m_per_thread), nc = q->n_per_block / (2 * q->n_per_thread);
  split_levels(mc, &q->m_level0, &q->m_level1);
  split_levels(nc, &q->n_level0, &q->n_level1);
  if ((int64_t)mc * nc != q->block_size)
    return fail(err,
                "block_size must equal m_level0 * m_level1 * n_level0 * n_level1 = (m_per_block / "
                "(2*m_per_thread)) * (n_per_block / (2*n_per_thread)) = %d*%d = %lld (got %d)",
                mc, nc, (long long)mc * nc, q->block_size);
  return 0;
}

static int derive_xdlops(tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err);
static int derive_mma(tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err);

int tc_gemm_params_derive(tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err) {
  if (s && s->m && check_shape(s, err)) return -1;
  if (tc_gemm_params_is_tma(p)) return tma_derive(p, s, err);
  if (tc_gemm_params_is_wgmma(p)) return tc_wgmma_params_derive(p, s, err);
  if (tc_gemm_params_is_mma(p)) return derive_mma(p, s, err);
  if (tc_gemm_params_is_xdlops(p)) return derive_xdlops(p, s, err);
  tc_gemm_params q = *p;
  if (derive_levels(&q, err)) return -1;
  if (derive_copy('A', q.block_size, q.k_per_block, q.m_per_block, vec_of(s, 0), vec_of(s, 1),
                  &q.a_cluster_k, &q.a_cluster_m, &q.a_read_dim, &q.a_src_per_read,
                  &q.a_dst_per_write, err))
    return -1;
  if (derive_copy('B', q.block_size, q.k_per_block, q.n_per_block, vec_of(s, 2), vec_of(s, 3),
                  &q.b_cluster_k, &q.b_cluster_n, &q.b_read_dim, &q.b_src_per_read,
                  &q.b_dst_per_write, err))
    return -1;
  q.c_per_write = common_pow2(q.n_per_thread, vec_of(s, 4));
  if (tc_gemm_params_check(&q, s, err)) return -1;
  *p = q;
  return 0;
}

static int check_mma_tuned(const tc_gemm_params *p, tc_str *err);

int tc_gemm_params_check_tiling(const tc_gemm_params *p, tc_str *err) {
  if (tc_gemm_params_is_tma(p) || tc_gemm_params_is_wgmma(p) ||
      (tc_gemm_params_is_xdlops(p) && !tc_gemm_params_is_mma(p)))
    return fail(err, "only the non-accelerated and mma: forms have a thread tiling here");
  if (tc_gemm_params_is_mma(p)) return check_mma_tuned(p, err);
  tc_gemm_params q = *p;
  if (derive_levels(&q, err)) return -1;
  return check_acc(&q, err);
}

/* ---- perf-config strings ---------------------------------------------- */

static int parse_xdlops(const char *text, tc_gemm_params *p, tc_str *err);
static int parse_mma(const char *text, tc_gemm_params *p, tc_str *err);

/* Reads up to maxn comma-separated positive integers from body (a
 * perf-config string `text`, after its "form:" prefix) into vals; names
 * name the fields in messages and `expect` says what was expected ("6
 * (BS,MPB,NPB,KPB,MPT,NPT)").  Returns the number read, or -1 with err. */
static int parse_fields(const char *text, const char *body, const char *const *names, int maxn,
                        const char *expect, int *vals, tc_str *err) {
  const char *c = body;
  int n = 0;
  for (;;) {
    const char *start = c;
    while (*c == ' ' || *c == '\t') c++;
    const char *digits = c;
    long long v = 0;
    int nd = 0;
    while (*c >= '0' && *c <= '9') {
      if (v <= MAX_TUNED) v = v * 10 + (*c - '0');
      c++, nd++;
    }
    while (*c == ' ' || *c == '\t') c++;
    if (n == maxn) return fail(err, "perf-config \"%s\": too many fields, expected %s", text, expect);
    if (nd == 0 || (*c != ',' && *c != 0)) {
      const char *end = start;
      while (*end && *end != ',') end++;
      return fail(err,
                  "perf-config \"%s\": field %d (%s) is not a positive integer: \"%.*s\"", text,
                  n + 1, names[n], (int)(end - start), start);
    }
    if (v < 1 || v > MAX_TUNED)
      return fail(err, "perf-config \"%s\": field %d (%s) must be between 1 and %d: \"%.*s\"",
                  text, n + 1, names[n], MAX_TUNED, nd, digits);
    vals[n++] = (int)v;
    if (*c == 0) return n;
    c++; /* the comma */
  }
}

int tc_gemm_params_parse(const char *text, tc_gemm_params *p, tc_str *err) {
  if (!text) return fail(err, "perf-config: no text");
  if (strncmp(text, "xdlops:", 7) == 0) return parse_xdlops(text, p, err);
  if (strncmp(text, "mma:", 4) == 0) return parse_mma(text, p, err);
  if (strncmp(text, "wgmma:", 6) == 0) return tc_wgmma_params_parse(text, p, err);
  if (strncmp(text, "tma:", 4) == 0 || strncmp(text, "tmaws:", 6) == 0)
    return tma_parse(text, p, err);
  int vals[6];
  int n = parse_fields(text, text, tuned_names, 6, "6 (BS,MPB,NPB,KPB,MPT,NPT)", vals, err);
  if (n < 0) return -1;
  if (n != 6)
    return fail(err,
                "perf-config \"%s\": expected 6 comma-separated fields (BS,MPB,NPB,KPB,MPT,NPT), "
                "got %d",
                text, n);
  memset(p, 0, sizeof *p);
  p->block_size = vals[0];
  p->m_per_block = vals[1];
  p->n_per_block = vals[2];
  p->k_per_block = vals[3];
  p->m_per_thread = vals[4];
  p->n_per_thread = vals[5];
  return 0;
}

void tc_gemm_params_format(const tc_gemm_params *p, char *buf, size_t cap) {
  if (!buf || !cap) return;
  if (tc_gemm_params_is_tma(p)) {
    snprintf(buf, cap, "%s:%d,%d,%d", p->tma_ws ? "tmaws" : "tma", p->m_per_block,
             p->n_per_block, p->tma_stages);
    size_t len = strlen(buf);
    if (p->tma_persist && len < cap)
      snprintf(buf + len, cap - len, ",%d,%d", p->tma_cluster ? p->tma_cluster : 1, p->tma_persist);
    else if (p->tma_cluster == 2 && len < cap)
      snprintf(buf + len, cap - len, ",2");
    return;
  }
  if (tc_gemm_params_is_wgmma(p)) {
    snprintf(buf, cap, "wgmma:%d,%d,%d", p->m_per_block, p->n_per_block, p->k_per_block);
    return;
  }
  if (tc_gemm_params_is_mma(p)) {
    snprintf(buf, cap, "mma:%d,%d,%d,%d,%d", p->m_per_block, p->n_per_block, p->k_per_block,
             p->m_per_wave, p->n_per_wave);
    return;
  }
  if (tc_gemm_params_is_xdlops(p)) {
    int mfma = p->mfma == TC_MFMA_32X32X8 ? 32 : p->mfma == TC_MFMA_16X16X16 ? 16 : 0;
    if (mfma)
      snprintf(buf, cap, "xdlops:%d,%d,%d,%d,%d,%d", p->m_per_block, p->n_per_block,
               p->k_per_block, p->m_per_wave, p->n_per_wave, mfma);
    else /* not derived yet */
      snprintf(buf, cap, "xdlops:%d,%d,%d,%d,%d", p->m_per_block, p->n_per_block, p->k_per_block,
               p->m_per_wave, p->n_per_wave);
    return;
  }
  snprintf(buf, cap, "%d,%d,%d,%d,%d,%d", p->block_size, p->m_per_block, p->n_per_block,
           p->k_per_block, p->m_per_thread, p->n_per_thread);
}

/* ---- candidates and the heuristic ------------------------------------- */

static int64_t ceil_to(int64_t v, int64_t f) { return (v + f - 1) / f * f; }

int64_t tc_gemm_padded_flops(const tc_gemm_shape *s, const tc_gemm_params *p) {
  int64_t mp = ceil_to(s->m, p->m_per_block), np = ceil_to(s->n, p->n_per_block),
          kp = ceil_to(s->k, p->k_per_block);
  int64_t padded = tc_sat_mul(tc_sat_mul(mp, np), kp), real = tc_sat_mul(tc_sat_mul(s->m, s->n), s->k);
  if (padded == INT64_MAX) return INT64_MAX;
  return tc_sat_mul(tc_sat_mul(2, s->g), padded - real);
}

int64_t tc_gemm_num_blocks(const tc_gemm_shape *s, const tc_gemm_params *p) {
  int64_t bm = (s->m + p->m_per_block - 1) / p->m_per_block;
  int64_t bn = (s->n + p->n_per_block - 1) / p->n_per_block;
  return tc_sat_mul(tc_sat_mul(s->g, bm), bn);
}

/* Blocks that count as "enough" to fill a device (about two per compute
 * unit of a large GPU); below it the heuristic prefers more blocks. */
#define TC_GEMM_ENOUGH_BLOCKS 64

typedef struct cand {
  tc_gemm_params p;
  int64_t waste, blocks;
} cand;

/* Appends p (valid for s) to the candidates c[0 .. *n). */
static void cand_add(cand *c, int *n, const tc_gemm_shape *s, const tc_gemm_params *p) {
  c[*n].p = *p;
  c[*n].waste = tc_gemm_padded_flops(s, p);
  c[*n].blocks = tc_gemm_num_blocks(s, p);
  (*n)++;
}

/* Sorts the n candidates by cmp into *out (allocated, at least one
 * element), frees c and returns n. */
static int cand_finish(cand *c, int n, int (*cmp)(const void *, const void *),
                       tc_gemm_params **out) {
  qsort(c, (size_t)n, sizeof *c, cmp);
  tc_gemm_params *r = tc_xmalloc((size_t)(n ? n : 1) * sizeof *r);
  for (int i = 0; i < n; i++) r[i] = c[i].p;
  free(c);
  *out = r;
  return n;
}

#define CMP(a, b) \
  if ((a) != (b)) return (a) < (b) ? -1 : 1

/* The heuristic's order (see params.h and tc_gemm_candidates). */
static int cand_cmp(const void *x, const void *y) {
  const cand *a = x, *b = y;
  CMP(a->waste, b->waste);                                    /* 1: least padding */
  int ea = a->blocks >= TC_GEMM_ENOUGH_BLOCKS, eb = b->blocks >= TC_GEMM_ENOUGH_BLOCKS;
  CMP(eb, ea);                                                /* 2: enough blocks first */
  if (ea) {                                                   /* 3a: big: larger tiles */
    CMP((int64_t)b->p.m_per_block * b->p.n_per_block, (int64_t)a->p.m_per_block * a->p.n_per_block);
  } else {                                                    /* 3b: small: more blocks */
    CMP(b->blocks, a->blocks);
  }
  CMP(b->p.k_per_block, a->p.k_per_block);                    /* 4: fewer K iterations */
  CMP(b->p.m_per_thread * b->p.n_per_thread,                  /* 5: more work per thread */
      a->p.m_per_thread * a->p.n_per_thread);
  CMP(b->p.block_size, a->p.block_size);                      /* 6: determinism */
  CMP(b->p.m_per_block, a->p.m_per_block);
  CMP(b->p.n_per_block, a->p.n_per_block);
  CMP(b->p.m_per_thread, a->p.m_per_thread);
  CMP(b->p.n_per_thread, a->p.n_per_thread);
  return 0;
}

static int shape_ok(const tc_gemm_shape *s) {
  return s && s->g >= 1 && s->m >= 1 && s->n >= 1 && s->k >= 1;
}

/* 0 for a shape with G, M, N, K >= 1, else -1 with err. */
static int check_shape(const tc_gemm_shape *s, tc_str *err) {
  if (shape_ok(s)) return 0;
  return fail(err, "GEMM shape must have G, M, N, K >= 1 (got G=%lld M=%lld N=%lld K=%lld)",
              s ? (long long)s->g : 0LL, s ? (long long)s->m : 0LL, s ? (long long)s->n : 0LL,
              s ? (long long)s->k : 0LL);
}

/* The first of the n candidates c (freed) into *p, or -1 with "no valid
 * <what> parameter set for ..." when there is none. */
static int take_first(const tc_gemm_shape *s, tc_gemm_params *c, int n, const char *what,
                      tc_gemm_params *p, tc_str *err) {
  if (n > 0) *p = c[0];
  free(c);
  if (n > 0) return 0;
  return fail(err, "no valid %s parameter set for G=%lld M=%lld N=%lld K=%lld", what,
              (long long)s->g, (long long)s->m, (long long)s->n, (long long)s->k);
}

int tc_gemm_candidates(const tc_gemm_shape *s, tc_gemm_params **out) {
  static const int mnpb[] = {32, 64, 128}, kpb[] = {4, 8, 16}, pt[] = {2, 4};
  *out = NULL;
  if (!shape_ok(s)) return 0;
  cand *c = tc_xmalloc(3 * 3 * 3 * 2 * 2 * sizeof *c);
  int n = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 3; k++)
        for (int a = 0; a < 2; a++)
          for (int b = 0; b < 2; b++) {
            tc_gemm_params p;
            memset(&p, 0, sizeof p);
            p.m_per_block = mnpb[i], p.n_per_block = mnpb[j], p.k_per_block = kpb[k];
            p.m_per_thread = pt[a], p.n_per_thread = pt[b];
            p.block_size = (p.m_per_block / (2 * p.m_per_thread)) *
                           (p.n_per_block / (2 * p.n_per_thread));
            if (p.block_size < 64 || p.block_size > 256) continue;
            if (tc_gemm_params_derive(&p, s, NULL)) continue;
            cand_add(c, &n, s, &p);
          }
  return cand_finish(c, n, cand_cmp, out);
}

int tc_gemm_params_default(const tc_gemm_shape *s, tc_gemm_params *p, tc_str *err) {
  if (check_shape(s, err)) return -1;
  tc_gemm_params *c = NULL;
  int n = tc_gemm_candidates(s, &c);
  return take_first(s, c, n, "GEMM", p, err);
}

/* ---- XDLOPS (MFMA) kernels -------------------------------------------- */

/* The MFMA tile of an instruction: m x n x k (0 for an unknown one). */
static void mfma_tile(int mfma, int *m, int *n, int *k) {
  *m = *n = *k = 0;
  if (mfma == TC_MFMA_32X32X8) *m = *n = 32, *k = 8;
  else if (mfma == TC_MFMA_16X16X16) *m = *n = 16, *k = 16;
}

static const char *const xdl_names[5] = {"m_per_block", "n_per_block", "k_per_block",
                                         "m_per_wave", "n_per_wave"};

/* The block as waves (XDLOPS, 64 lanes) or warps (mma.sync, 32 lanes):
 * m/n_per_block multiples of m/n_per_wave, and at most MAX_BLOCK threads.
 * prefix starts each message, unit names the wave ("wave" / "warp") and
 * what ("wavefront" / "warp") its size. */
static int check_wave_tiling(const tc_gemm_params *p, const char *prefix, const char *unit,
                             const char *what, int size, tc_str *err) {
  if (p->m_per_block % p->m_per_wave)
    return fail(err,
                "%sm_per_block / m_per_%s is the number of %ss along M: m_per_block %d is not a "
                "multiple of m_per_%s %d",
                prefix, unit, unit, p->m_per_block, unit, p->m_per_wave);
  if (p->n_per_block % p->n_per_wave)
    return fail(err,
                "%sn_per_block / n_per_%s is the number of %ss along N: n_per_block %d is not a "
                "multiple of n_per_%s %d",
                prefix, unit, unit, p->n_per_block, unit, p->n_per_wave);
  int64_t n = (int64_t)(p->m_per_block / p->m_per_wave) * (p->n_per_block / p->n_per_wave);
  if (n * size > MAX_BLOCK)
    return fail(err,
                "%s%ss along M * %ss along N * %s size (%d) = block_size must be at most %d "
                "(%d*%d*%d = %lld)",
                prefix, unit, unit, what, size, MAX_BLOCK, p->m_per_block / p->m_per_wave,
                p->n_per_block / p->n_per_wave, size, (long long)n * size);
  return 0;
}

static int check_xdl_tuned(const tc_gemm_params *p, tc_str *err) {
  int v[5] = {p->m_per_block, p->n_per_block, p->k_per_block, p->m_per_wave, p->n_per_wave};
  for (int i = 0; i < 5; i++)
    if (v[i] < 1 || v[i] > MAX_TUNED)
      return fail(err, "%s must be between 1 and %d (got %d)", xdl_names[i], MAX_TUNED, v[i]);
  return check_wave_tiling(p, "", "wave", "wavefront", TC_WAVE_SIZE, err);
}

/* The blockwise copies of A and B (every kernel but the TMA one stages
 * its tiles through them). */
static int check_copies(const tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err) {
  if (check_copy('A', "m", p->block_size, p->k_per_block, p->m_per_block, p->a_cluster_k,
                 p->a_cluster_m, p->a_read_dim, p->a_src_per_read, p->a_dst_per_write,
                 vec_of(s, 0), vec_of(s, 1), err))
    return -1;
  return check_copy('B', "n", p->block_size, p->k_per_block, p->n_per_block, p->b_cluster_k,
                    p->b_cluster_n, p->b_read_dim, p->b_src_per_read, p->b_dst_per_write,
                    vec_of(s, 2), vec_of(s, 3), err);
}

/* What the matrix-core kernels (XDLOPS, mma.sync, wgmma: 16-bit tiles in
 * LDS) share: the copies, c_per_write fixed at 1, the LDS budget; `kind`
 * names the kernel ("an mma"), `prefix` starts the budget's message. */
static int check_lds_copies(const tc_gemm_params *p, const tc_gemm_shape *s, const char *kind,
                            const char *prefix, tc_str *err) {
  if (check_copies(p, s, err)) return -1;
  if (p->c_per_write != 1)
    return fail(err, "c_per_write of %s kernel is fixed at 1 (got %d)", kind,
                p->c_per_write);
  int64_t lds = tc_gemm_lds_bytes(p);
  if (lds > MAX_LDS)
    return fail(err,
                "%sshared memory 2 * k_per_block * (m_per_block + n_per_block) * 2 = %lld bytes "
                "exceeds %d",
                prefix, (long long)lds, MAX_LDS);
  return 0;
}

static int check_xdlops(const tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err) {
  if (check_xdl_tuned(p, err)) return -1;
  if (s && s->dtype != TC_F16 && s->dtype != TC_BF16)
    return fail(err, "XDLOPS (MFMA) kernels need f16 or bf16 A and B (got %s)",
                tc_dtype_name(s->dtype));
  int mm, mn, mk;
  mfma_tile(p->mfma, &mm, &mn, &mk);
  if (!mm)
    return fail(err, "mfma must be TC_MFMA_32X32X8 or TC_MFMA_16X16X16 (got %d)", p->mfma);
  if (p->m_per_wave % mm || p->n_per_wave % mn)
    return fail(err,
                "m_per_wave and n_per_wave must be multiples of the MFMA tile %dx%d (got %d, %d)",
                mm, mn, p->m_per_wave, p->n_per_wave);
  if (p->k_per_block % mk)
    return fail(err, "k_per_block must be a multiple of the MFMA's K %d (got %d)", mk,
                p->k_per_block);
  if (p->waves_m != p->m_per_block / p->m_per_wave || p->waves_n != p->n_per_block / p->n_per_wave)
    return fail(err,
                "waves_m and waves_n must be m_per_block / m_per_wave and n_per_block / n_per_wave "
                "(%d, %d; got %d, %d)",
                p->m_per_block / p->m_per_wave, p->n_per_block / p->n_per_wave, p->waves_m,
                p->waves_n);
  if (p->block_size != p->waves_m * p->waves_n * TC_WAVE_SIZE)
    return fail(err,
                "block_size must equal waves along M * waves along N * wavefront size (%d*%d*64 = "
                "%d != %d)",
                p->waves_m, p->waves_n, p->waves_m * p->waves_n * TC_WAVE_SIZE, p->block_size);
  int64_t acc = (int64_t)p->m_per_wave * p->n_per_wave / TC_WAVE_SIZE;
  if (acc > MAX_REGS)
    return fail(err,
                "m_per_wave * n_per_wave / 64 accumulators per lane must be at most %d (got %lld)",
                MAX_REGS, (long long)acc);
  return check_lds_copies(p, s, "an XDLOPS", "", err);
}

int tc_gemm_xdlops_mfma(const tc_gemm_params *p) {
  if (p->mfma) return p->mfma;
  if (p->m_per_wave % 32 == 0 && p->n_per_wave % 32 == 0 && p->k_per_block % 8 == 0)
    return TC_MFMA_32X32X8;
  if (p->m_per_wave % 16 == 0 && p->n_per_wave % 16 == 0 && p->k_per_block % 16 == 0)
    return TC_MFMA_16X16X16;
  return 0;
}

static int derive_xdlops(tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err) {
  if (check_xdl_tuned(p, err)) return -1;
  tc_gemm_params q;
  memset(&q, 0, sizeof q);
  q.m_per_block = p->m_per_block, q.n_per_block = p->n_per_block, q.k_per_block = p->k_per_block;
  q.m_per_wave = p->m_per_wave, q.n_per_wave = p->n_per_wave, q.mfma = p->mfma;
  if (!q.mfma) {
    q.mfma = tc_gemm_xdlops_mfma(&q);
    if (!q.mfma)
      return fail(err,
                  "no MFMA instruction fits: 32x32x8 needs m_per_wave and n_per_wave multiples of "
                  "32 and k_per_block of 8, 16x16x16 multiples of 16 and k_per_block of 16 (got "
                  "%d, %d, %d)",
                  q.m_per_wave, q.n_per_wave, q.k_per_block);
  }
  q.waves_m = q.m_per_block / q.m_per_wave;
  q.waves_n = q.n_per_block / q.n_per_wave;
  if (derive_wave_copies(&q, s, TC_WAVE_SIZE, err)) return -1;
  if (check_xdlops(&q, s, err)) return -1;
  *p = q;
  return 0;
}

static int parse_xdlops(const char *text, tc_gemm_params *p, tc_str *err) {
  static const char *const names[6] = {"m_per_block", "n_per_block", "k_per_block",
                                       "m_per_wave",  "n_per_wave",  "mfma"};
  int vals[6] = {0};
  int n = parse_fields(text, text + 7, names, 6, "5 or 6 after xdlops: (MPB,NPB,KPB,MPW,NPW[,MFMA])",
                       vals, err);
  if (n < 0) return -1;
  if (n < 5)
    return fail(err,
                "perf-config \"%s\": expected 5 or 6 comma-separated fields after xdlops: "
                "(MPB,NPB,KPB,MPW,NPW[,MFMA]), got %d", text, n);
  if (n == 6 && vals[5] != 32 && vals[5] != 16)
    return fail(err,
                "perf-config \"%s\": field 6 (mfma) must be 32 (32x32x8) or 16 (16x16x16), got %d",
                text, vals[5]);
  memset(p, 0, sizeof *p);
  p->m_per_block = vals[0];
  p->n_per_block = vals[1];
  p->k_per_block = vals[2];
  p->m_per_wave = vals[3];
  p->n_per_wave = vals[4];
  p->mfma = n == 6 ? (vals[5] == 32 ? TC_MFMA_32X32X8 : TC_MFMA_16X16X16) : 0;
  return 0;
}

/* The XDLOPS candidates' order: rules 1-4 of cand_cmp, then larger
 * m_per_wave * n_per_wave (fewer waves, more reuse per wave), 32x32x8
 * before 16x16x16, then MPB, NPB, MPW, NPW larger first. */
/* Less padding first; then, with enough blocks for the device, larger
 * tiles, else more blocks. */
static int size_cmp(const cand *a, const cand *b) {
  CMP(a->waste, b->waste);
  int ea = a->blocks >= TC_GEMM_ENOUGH_BLOCKS, eb = b->blocks >= TC_GEMM_ENOUGH_BLOCKS;
  CMP(eb, ea);
  if (ea) {
    CMP((int64_t)b->p.m_per_block * b->p.n_per_block, (int64_t)a->p.m_per_block * a->p.n_per_block);
  } else {
    CMP(b->blocks, a->blocks);
  }
  return 0;
}

static int xdl_cmp(const void *x, const void *y) {
  const cand *a = x, *b = y;
  int c = size_cmp(a, b);
  if (c) return c;
  CMP(b->p.k_per_block, a->p.k_per_block);
  CMP(b->p.m_per_wave * b->p.n_per_wave, a->p.m_per_wave * a->p.n_per_wave);
  CMP(a->p.mfma, b->p.mfma);
  CMP(b->p.m_per_block, a->p.m_per_block);
  CMP(b->p.n_per_block, a->p.n_per_block);
  CMP(b->p.m_per_wave, a->p.m_per_wave);
  CMP(b->p.n_per_wave, a->p.n_per_wave);
  return 0;
}

int tc_gemm_xdlops_candidates(const tc_gemm_shape *s, tc_gemm_params **out) {
  static const int mnpb[] = {32, 64, 128}, kpb[] = {16, 32}, pw[] = {16, 32, 64};
  static const int kinds[] = {TC_MFMA_32X32X8, TC_MFMA_16X16X16};
  *out = NULL;
  if (!shape_ok(s) || (s->dtype != TC_F16 && s->dtype != TC_BF16)) return 0;
  cand *c = tc_xmalloc(3 * 3 * 2 * 3 * 3 * 2 * sizeof *c);
  int n = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 2; k++)
        for (int a = 0; a < 3; a++)
          for (int b = 0; b < 3; b++)
            for (int t = 0; t < 2; t++) {
              tc_gemm_params p;
              memset(&p, 0, sizeof p);
              p.m_per_block = mnpb[i], p.n_per_block = mnpb[j], p.k_per_block = kpb[k];
              p.m_per_wave = pw[a], p.n_per_wave = pw[b], p.mfma = kinds[t];
              if (p.m_per_block % p.m_per_wave || p.n_per_block % p.n_per_wave) continue;
              int waves = (p.m_per_block / p.m_per_wave) * (p.n_per_block / p.n_per_wave);
              if (waves > 4) continue;
              if (tc_gemm_params_derive(&p, s, NULL)) continue;
              cand_add(c, &n, s, &p);
            }
  return cand_finish(c, n, xdl_cmp, out);
}

int tc_gemm_xdlops_default(const tc_gemm_shape *s, tc_gemm_params *p, tc_str *err) {
  if (!shape_ok(s))
    return fail(err, "GEMM shape must have G, M, N, K >= 1");
  if (s->dtype != TC_F16 && s->dtype != TC_BF16)
    return fail(err, "XDLOPS (MFMA) kernels need f16 or bf16 A and B (got %s)",
                tc_dtype_name(s->dtype));
  tc_gemm_params *c = NULL;
  int n = tc_gemm_xdlops_candidates(s, &c);
  return take_first(s, c, n, "XDLOPS", p, err);
}

/* ---- mma.sync kernels (NVIDIA tensor cores; docs/mma.md) --------------- */

#define MMA_M 16
#define MMA_N 8
#define MMA_K 16

static const char *const mma_names[5] = {"m_per_block", "n_per_block", "k_per_block",
                                         "m_per_warp", "n_per_warp"};

/* The rules on the tuned fields (named in the messages as the perf
 * config's MPB, NPB, KPB, MPW, NPW). */
static int check_mma_tuned(const tc_gemm_params *p, tc_str *err) {
  int v[5] = {p->m_per_block, p->n_per_block, p->k_per_block, p->m_per_wave, p->n_per_wave};
  for (int i = 0; i < 5; i++)
    if (v[i] < 1 || v[i] > MAX_TUNED)
      return fail(err, "mma: %s must be between 1 and %d (got %d)", mma_names[i], MAX_TUNED,
                  v[i]);
  if (p->m_per_wave % MMA_M)
    return fail(err,
                "mma: m_per_warp must be a multiple of the mma tile's M (16: m16n8k16), got %d",
                p->m_per_wave);
  if (p->n_per_wave % MMA_N)
    return fail(err,
                "mma: n_per_warp must be a multiple of the mma tile's N (8: m16n8k16), got %d",
                p->n_per_wave);
  if (p->k_per_block % MMA_K)
    return fail(err,
                "mma: k_per_block must be a multiple of the mma tile's K (16: m16n8k16), got %d",
                p->k_per_block);
  if (check_wave_tiling(p, "mma: ", "warp", "warp", TC_WARP_SIZE, err)) return -1;
  int64_t acc = (int64_t)p->m_per_wave * p->n_per_wave / TC_WARP_SIZE;
  if (acc > MAX_REGS)
    return fail(err,
                "mma: m_per_warp * n_per_warp / 32 accumulators per lane must be at most %d (got "
                "%lld)",
                MAX_REGS, (long long)acc);
  return 0;
}

static int check_mma(const tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err) {
  if (p->mma != TC_MMA_M16N8K16)
    return fail(err, "mma must be TC_MMA_M16N8K16 (got %d)", p->mma);
  if (p->mfma)
    return fail(err, "an mma kernel has no MFMA instruction (mfma %d)", p->mfma);
  if (check_mma_tuned(p, err)) return -1;
  if (s && s->dtype != TC_F16 && s->dtype != TC_BF16)
    return fail(err, "mma.sync kernels need f16 or bf16 A and B (got %s)",
                tc_dtype_name(s->dtype));
  if (p->waves_m != p->m_per_block / p->m_per_wave || p->waves_n != p->n_per_block / p->n_per_wave)
    return fail(err,
                "mma: warps along M and N (waves_m, waves_n) must be m_per_block / m_per_warp and "
                "n_per_block / n_per_warp (%d, %d; got %d, %d)",
                p->m_per_block / p->m_per_wave, p->n_per_block / p->n_per_wave, p->waves_m,
                p->waves_n);
  if (p->block_size != p->waves_m * p->waves_n * TC_WARP_SIZE)
    return fail(err,
                "mma: block_size must equal warps along M * warps along N * warp size (%d*%d*32 "
                "= %d != %d)",
                p->waves_m, p->waves_n, p->waves_m * p->waves_n * TC_WARP_SIZE, p->block_size);
  return check_lds_copies(p, s, "an mma", "mma: ", err);
}

static int derive_mma(tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err) {
  if (check_mma_tuned(p, err)) return -1;
  tc_gemm_params q;
  memset(&q, 0, sizeof q);
  q.m_per_block = p->m_per_block, q.n_per_block = p->n_per_block, q.k_per_block = p->k_per_block;
  q.m_per_wave = p->m_per_wave, q.n_per_wave = p->n_per_wave, q.mma = TC_MMA_M16N8K16;
  q.waves_m = q.m_per_block / q.m_per_wave;
  q.waves_n = q.n_per_block / q.n_per_wave;
  if (derive_wave_copies(&q, s, TC_WARP_SIZE, err)) return -1;
  if (check_mma(&q, s, err)) return -1;
  *p = q;
  return 0;
}

static int parse_mma(const char *text, tc_gemm_params *p, tc_str *err) {
  int vals[5] = {0};
  int n = parse_fields(text, text + 4, mma_names, 5, "5 after mma: (MPB,NPB,KPB,MPW,NPW)", vals, err);
  if (n < 0) return -1;
  if (n != 5)
    return fail(err,
                "perf-config \"%s\": expected 5 comma-separated fields after mma: "
                "(MPB,NPB,KPB,MPW,NPW), got %d", text, n);
  memset(p, 0, sizeof *p);
  p->m_per_block = vals[0];
  p->n_per_block = vals[1];
  p->k_per_block = vals[2];
  p->m_per_wave = vals[3];
  p->n_per_wave = vals[4];
  p->mma = TC_MMA_M16N8K16;
  return 0;
}

/* ---- wgmma kernels (sm_90a warp groups; docs/wgmma.md) ----------------- */

int tc_gemm_params_is_wgmma(const tc_gemm_params *p) {
  return p && p->mma == TC_MMA_WGMMA_M64NNK16;
}

static const char *const wgmma_names[3] = {"m_per_block", "n_per_block", "k_per_block"};

static int check_wgmma_tuned(const tc_gemm_params *p, tc_str *err) {
  int v[3] = {p->m_per_block, p->n_per_block, p->k_per_block};
  for (int i = 0; i < 3; i++)
    if (v[i] < 1 || v[i] > MAX_TUNED)
      return fail(err, "wgmma: %s must be between 1 and %d (got %d)", wgmma_names[i],
                  MAX_TUNED, v[i]);
  if (p->m_per_block % 64)
    return fail(err,
                "wgmma: m_per_block must be a multiple of 64 (one warp group per 64 rows: "
                "m64nNk16), got %d", p->m_per_block);
  if (p->m_per_block / 64 * 128 > MAX_BLOCK)
    return fail(err, "wgmma: m_per_block / 64 warp groups of 128 threads must be at most %d "
                "threads (got %d)", MAX_BLOCK, p->m_per_block / 64 * 128);
  if (p->n_per_block % 8 || p->n_per_block > 256)
    return fail(err, "wgmma: n_per_block is the instruction's N: a multiple of 8 up to 256 "
                "(got %d)", p->n_per_block);
  if (p->k_per_block % 16)
    return fail(err, "wgmma: k_per_block must be a multiple of the instruction's K (16), "
                "got %d", p->k_per_block);
  return 0;
}

static int tc_wgmma_params_check(const tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err) {
  if (p->mfma) return fail(err, "a wgmma kernel has no MFMA instruction (mfma %d)", p->mfma);
  if (check_wgmma_tuned(p, err)) return -1;
  if (s && s->dtype != TC_F16 && s->dtype != TC_BF16)
    return fail(err, "wgmma kernels need f16 or bf16 A and B (got %s)",
                tc_dtype_name(s->dtype));
  if (p->m_per_wave != 64 || p->n_per_wave != p->n_per_block || p->waves_m != p->m_per_block / 64 ||
      p->waves_n != 1)
    return fail(err, "wgmma: m_per_wave, n_per_wave, waves_m, waves_n must be 64, "
                "n_per_block, m_per_block / 64, 1 (got %d, %d, %d, %d)", p->m_per_wave,
                p->n_per_wave, p->waves_m, p->waves_n);
  if (p->block_size != p->waves_m * 128)
    return fail(err, "wgmma: block_size must be warp groups * 128 (%d != %d)",
                p->waves_m * 128, p->block_size);
  return check_lds_copies(p, s, "a wgmma", "wgmma: ", err);
}

static int tc_wgmma_params_derive(tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err) {
  if (check_wgmma_tuned(p, err)) return -1;
  tc_gemm_params q;
  memset(&q, 0, sizeof q);
  q.m_per_block = p->m_per_block, q.n_per_block = p->n_per_block, q.k_per_block = p->k_per_block;
  q.mma = TC_MMA_WGMMA_M64NNK16;
  q.m_per_wave = 64, q.n_per_wave = q.n_per_block;
  q.waves_m = q.m_per_block / 64, q.waves_n = 1; /* warp groups of 128 threads */
  if (derive_wave_copies(&q, s, 128, err)) return -1;
  if (tc_wgmma_params_check(&q, s, err)) return -1;
  *p = q;
  return 0;
}

static int tc_wgmma_params_parse(const char *text, tc_gemm_params *p, tc_str *err) {
  /* The wgmma path compiles for sm_90a and verifies in the OpenCL emulation,
   * but its async-proxy ordering (fences, wgmma.fence/commit/wait) is not
   * something the emulation can check and no sm_90a GPU has run it yet
   * (docs/wgmma.md): it is only generated on request. */
  const char *on = getenv("TILEC_EXPERIMENTAL_WGMMA");
  if (!on || strcmp(on, "1") != 0)
    return fail(err,
                "wgmma: kernels are experimental (verified only in the OpenCL emulation, never run "
                "on an sm_90a GPU); set TILEC_EXPERIMENTAL_WGMMA=1 to generate them anyway");
  int vals[3] = {0};
  int n = parse_fields(text, text + 6, wgmma_names, 3, "3 after wgmma: (MPB,NPB,KPB)", vals, err);
  if (n < 0) return -1;
  if (n != 3)
    return fail(err, "perf-config \"%s\": expected 3 comma-separated fields after wgmma: "
                "(MPB,NPB,KPB), got %d", text, n);
  memset(p, 0, sizeof *p);
  p->m_per_block = vals[0];
  p->n_per_block = vals[1];
  p->k_per_block = vals[2];
  p->m_per_wave = 64;
  p->n_per_wave = vals[1];
  p->mma = TC_MMA_WGMMA_M64NNK16;
  return 0;
}

/* mma candidates: the XDLOPS space's order (xdl_cmp; mfma is 0 for all)
 * over MPB, NPB in {32, 64, 128}, KPB in {16, 32}, MPW in {16, 32, 64},
 * NPW in {8, 16, 32, 64} dividing them, 1 to 4 warps. */
int tc_gemm_mma_candidates(const tc_gemm_shape *s, tc_gemm_params **out) {
  static const int mnpb[] = {32, 64, 128}, kpb[] = {16, 32}, mpw[] = {16, 32, 64},
                   npw[] = {8, 16, 32, 64};
  *out = NULL;
  if (!shape_ok(s) || (s->dtype != TC_F16 && s->dtype != TC_BF16)) return 0;
  cand *c = tc_xmalloc(3 * 3 * 2 * 3 * 4 * sizeof *c);
  int n = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      for (int k = 0; k < 2; k++)
        for (int a = 0; a < 3; a++)
          for (int b = 0; b < 4; b++) {
            tc_gemm_params p;
            memset(&p, 0, sizeof p);
            p.m_per_block = mnpb[i], p.n_per_block = mnpb[j], p.k_per_block = kpb[k];
            p.m_per_wave = mpw[a], p.n_per_wave = npw[b], p.mma = TC_MMA_M16N8K16;
            if (p.m_per_block % p.m_per_wave || p.n_per_block % p.n_per_wave) continue;
            if ((p.m_per_block / p.m_per_wave) * (p.n_per_block / p.n_per_wave) > 4) continue;
            if (tc_gemm_params_derive(&p, s, NULL)) continue;
            cand_add(c, &n, s, &p);
          }
  return cand_finish(c, n, xdl_cmp, out);
}

int tc_gemm_mma_default(const tc_gemm_shape *s, tc_gemm_params *p, tc_str *err) {
  if (!shape_ok(s)) return fail(err, "GEMM shape must have G, M, N, K >= 1");
  if (s->dtype != TC_F16 && s->dtype != TC_BF16)
    return fail(err, "mma.sync kernels need f16 or bf16 A and B (got %s)",
                tc_dtype_name(s->dtype));
  tc_gemm_params *c = NULL;
  int n = tc_gemm_mma_candidates(s, &c);
  return take_first(s, c, n, "mma", p, err);
}

/* ---- the default and the candidates per target (params.h) ------------- */

/* A kernel kind the defaults pick from: its candidate list, best first. */
typedef int (*cands_fn)(const tc_gemm_shape *s, tc_gemm_params **out);

#define MAX_KINDS 4

/* The kernel kinds for the shape on target, preferred first (the table in
 * params.h); every chain ends with the FMA kernel, which fits any dtype.
 * A new kind (e.g. another sm_90a kernel) goes into this chain.  Returns
 * the count. */
static int kinds_for(const tc_gemm_shape *s, tc_target target, const char *arch,
                     cands_fn kinds[MAX_KINDS]) {
  int n = 0, x16 = s->dtype == TC_F16 || s->dtype == TC_BF16;
  tc_target_info ti;
  tc_target_info_make(target, arch, &ti, NULL); /* a bad arch: no tensor cores */
  /* OpenCL: no tensor cores (mma.sync and MFMA are only emulated), so
   * only the FMA kernel */
  if (ti.family != TC_ARCH_NONE && x16) {
    /* the TMA + wgmma kernel: only for an arch known to be sm_90a (wgmma
     * needs the "a" features; NULL does not say) and plain matrices */
    if (ti.arch_given && (ti.features & TC_FEAT_WGMMA) && tc_gemm_tma_supported(s, NULL) == 0)
      kinds[n++] = tc_gemm_tma_candidates;
    if (ti.features & TC_FEAT_MMA_SYNC) kinds[n++] = tc_gemm_mma_candidates;
    if (ti.features & TC_FEAT_MFMA) kinds[n++] = tc_gemm_xdlops_candidates;
  }
  kinds[n++] = tc_gemm_candidates;
  return n;
}

int tc_gemm_candidates_for(const tc_gemm_shape *s, tc_target target, const char *arch,
                           tc_gemm_params **out) {
  *out = NULL;
  if (!shape_ok(s)) return 0;
  cands_fn kinds[MAX_KINDS];
  int nk = kinds_for(s, target, arch, kinds), n = 0;
  tc_gemm_params *all = NULL;
  for (int i = 0; i < nk; i++) {
    tc_gemm_params *c = NULL;
    int m = kinds[i](s, &c);
    if (m > 0) {
      all = tc_xrealloc(all, (size_t)(n + m) * sizeof *all);
      memcpy(all + n, c, (size_t)m * sizeof *c);
      n += m;
    }
    free(c);
  }
  *out = all;
  return n;
}

const char *tc_gemm_params_kind(const tc_gemm_params *p) {
  return tc_gemm_params_is_tma(p)      ? "TMA + wgmma"
         : tc_gemm_params_is_wgmma(p)  ? "wgmma"
         : tc_gemm_params_is_mma(p)    ? "mma.sync"
         : tc_gemm_params_is_xdlops(p) ? "XDLOPS (MFMA)"
                                       : "FMA";
}

int tc_gemm_default_for(const tc_gemm_shape *s, tc_target target, const char *arch,
                        tc_gemm_params *p, const char **kind, tc_str *err) {
  if (kind) *kind = "";
  if (check_shape(s, err)) return -1;
  tc_gemm_params *c = NULL;
  int n = tc_gemm_candidates_for(s, target, arch, &c);
  if (take_first(s, c, n, "GEMM", p, err)) return -1;
  if (kind) *kind = tc_gemm_params_kind(p);
  return 0;
}

/* ---- TMA + wgmma kernels (sm_90a; src/ops/gemm_tma.c, docs/hopper_gemm.md) ---- */

int tc_gemm_params_is_tma(const tc_gemm_params *p) { return p && p->tma_stages > 0; }

int tc_gemm_tma_c_buffers(int npb) { return npb >= 128 ? 2 : 1; }

int64_t tc_gemm_tma_smem_bytes(const tc_gemm_params *p) {
  int64_t c_bufs =
      p->tma_persist ? (int64_t)tc_gemm_tma_c_buffers(p->n_per_block) * p->m_per_block * 128 : 0;
  return (int64_t)p->tma_stages * ((int64_t)p->m_per_block + p->n_per_block) * 128 + c_bufs + 1024;
}

static const char *const tma_names[5] = {"m_per_block", "n_per_block", "stages", "cluster",
                                         "blocks"};

int tc_gemm_tma_consumer_regs(int consumers) {
  if (consumers < 1) return 0;
  int threads = (consumers + 1) * 128;
  int launch = (65536 / threads < 255 ? 65536 / threads : 255) / 8 * 8;
  int regs = (launch + (launch - TC_TMA_PRODUCER_REGS) / consumers) / 8 * 8;
  return regs < 240 ? regs : 240;
}

/* The rules of the tuned fields (MPB, NPB, stages, the pipeline, a
 * persistent kernel's own C tile). */
static int tma_check_tuned(int mpb, int npb, int stages, int ws, int persist, tc_str *err) {
  if (mpb < 64 || mpb > 256 || mpb % 64)
    return fail(err, "tma: m_per_block must be 64, 128, 192 or 256 (one consumer warp group "
                "of 128 threads per 64 rows, wgmma m64nNk16), got %d", mpb);
  if (npb < 64 || npb > 256 || npb % 64)
    return fail(err, "tma: n_per_block must be a multiple of 64 up to 256 (the wgmma N, and "
                "64-column boxes of the 128-byte swizzle), got %d", npb);
  if (stages < 2 || stages > 8)
    return fail(err, "tma: stages must be between 2 and 8, got %d", stages);
  tc_gemm_params q;
  memset(&q, 0, sizeof q);
  q.m_per_block = mpb, q.n_per_block = npb, q.tma_stages = stages, q.tma_persist = persist;
  int64_t smem = tc_gemm_tma_smem_bytes(&q);
  if (smem > TC_TMA_MAX_SMEM)
    return fail(err, "tma: shared memory stages * (m_per_block + n_per_block) * 128%s + 1024 = "
                "%lld bytes exceeds the %d bytes of an sm_90 block",
                !persist ? ""
                : tc_gemm_tma_c_buffers(npb) == 2
                    ? " + 2 * m_per_block * 128 (the persistent kernel's two C buffers)"
                    : " + m_per_block * 128 (the persistent kernel's C buffer)",
                (long long)smem, TC_TMA_MAX_SMEM);
  /* the accumulators (NPB / 2 per thread) and about 48 other registers
   * must fit what a consumer thread may have */
  int consumers = mpb / 64;
  if (ws) {
    int regs = tc_gemm_tma_consumer_regs(consumers);
    if (npb / 2 + 48 > regs)
      return fail(err, "tmaws: n_per_block / 2 = %d accumulators + 48 registers per thread "
                  "exceed the %d registers a consumer thread of %d consumer warp groups gets "
                  "(setmaxnreg; the producer keeps %d)", npb / 2, regs, consumers,
                  TC_TMA_PRODUCER_REGS);
    return 0;
  }
  int threads = consumers * 128, regs = 65536 / threads < 255 ? 65536 / threads : 255;
  if (npb / 2 + 48 > regs)
    return fail(err, "tma: n_per_block / 2 = %d accumulators + 48 registers per thread exceed "
                "the %d registers a thread of a %d-thread block has", npb / 2, regs, threads);
  return 0;
}

int tc_gemm_tma_supported(const tc_gemm_shape *s, tc_str *err) {
  if (!s) return fail(err, "tma: no shape");
  if (s->dtype != TC_F16 && s->dtype != TC_BF16)
    return fail(err, "tma kernels need f16 or bf16 A and B (got %s)", tc_dtype_name(s->dtype));
  if (s->c_dtype != s->dtype)
    return fail(err, "tma kernels store C as A's type with stmatrix (C %s, A %s)",
                tc_dtype_name(s->c_dtype), tc_dtype_name(s->dtype));
  if (s->accumulate) return fail(err, "tma kernels do not read C (C += A * B)");
  if (!s->plain)
    return fail(err, "tma kernels need plain matrices (no padding, slicing or merged "
                "coordinates: a tensor map describes a strided box)");
  const int64_t *st[3] = {s->a_stride, s->b_stride, s->c_stride};
  const char *nm[3] = {"A", "B", "C"};
  for (int t = 0; t < 3; t++) {
    /* one unit-stride dimension (the box's inner one), the others multiples
     * of 16 bytes (8 elements) as tensor maps require */
    int inner = t < 2 ? (st[t][1] == 1 ? 1 : st[t][2] == 1 ? 2 : -1) : (st[t][2] == 1 ? 2 : -1);
    if (inner < 0)
      return fail(err, "tma: %s must be contiguous along %s (strides %lld, %lld, %lld)", nm[t],
                  t < 2 ? "K or its M/N dimension" : "N", (long long)st[t][0], (long long)st[t][1],
                  (long long)st[t][2]);
    for (int d = 0; d < 3; d++) {
      int64_t ext = d == 0 ? s->g : t == 2 ? (d == 1 ? s->m : s->n) : d == 1 ? s->k
                                                                  : t == 0 ? s->m : s->n;
      if (d == inner || ext == 1) continue;
      if (st[t][d] % 8)
        return fail(err, "tma: the row stride of %s must be a multiple of 16 bytes (8 "
                    "elements), got %lld elements", nm[t], (long long)st[t][d]);
    }
  }
  return 0;
}

static int tma_check(const tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err) {
  if (p->tma_ws != 0 && p->tma_ws != 1)
    return fail(err, "tma: tma_ws must be 0 or 1, got %d", p->tma_ws);
  if (p->tma_cluster != 0 && p->tma_cluster != 2)
    return fail(err, "tmaws: the cluster must be 1 or 2 blocks, got %d", p->tma_cluster);
  if (p->tma_cluster && !p->tma_ws)
    return fail(err, "tma: clusters need the warp-specialised pipeline (tmaws:)");
  if (p->tma_persist < 0 || p->tma_persist > MAX_TUNED)
    return fail(err, "tmaws: the persistent grid must be 1 to %d blocks, got %d", MAX_TUNED,
                p->tma_persist);
  if (p->tma_persist && !p->tma_ws)
    return fail(err, "tma: a persistent kernel needs the warp-specialised pipeline (tmaws:)");
  if (p->tma_persist && p->tma_cluster && p->tma_persist % p->tma_cluster)
    return fail(err, "tmaws: the persistent grid of %d blocks is not a multiple of the "
                "cluster of %d", p->tma_persist, p->tma_cluster);
  /* B stored N-major is NPB / 64 boxes: each block of a cluster loads half */
  if (p->tma_cluster && s && s->m && s->b_stride[1] != 1 && p->n_per_block % 128)
    return fail(err, "tmaws: with a cluster of 2 and B contiguous along N, n_per_block must "
                "be a multiple of 128 (each block loads half of its 64-column boxes), got %d",
                p->n_per_block);
  if (tma_check_tuned(p->m_per_block, p->n_per_block, p->tma_stages, p->tma_ws, p->tma_persist,
                      err))
    return -1;
  if (p->k_per_block != 64 || p->waves_m != p->m_per_block / 64 ||
      p->block_size != (p->waves_m + p->tma_ws) * 128)
    return fail(err, "tma: k_per_block, waves_m, block_size must be 64, m_per_block / 64, "
                "(waves_m + %d) * 128 (got %d, %d, %d)", p->tma_ws, p->k_per_block, p->waves_m,
                p->block_size);
  if (p->m_per_thread || p->n_per_thread || p->m_per_wave || p->n_per_wave || p->mfma || p->mma)
    return fail(err, "tma: the FMA, XDLOPS and mma fields must be 0");
  if (s && s->m && tc_gemm_tma_supported(s, err)) return -1;
  return 0;
}

static int tma_derive(tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err) {
  tc_gemm_params q;
  memset(&q, 0, sizeof q);
  q.m_per_block = p->m_per_block, q.n_per_block = p->n_per_block, q.tma_stages = p->tma_stages;
  q.tma_ws = p->tma_ws;
  q.tma_cluster = p->tma_cluster;
  q.tma_persist = p->tma_persist;
  q.k_per_block = 64;
  q.waves_m = q.m_per_block / 64;
  q.block_size = (q.waves_m + (q.tma_ws == 1)) * 128;
  if (tma_check(&q, s, err)) return -1;
  *p = q;
  return 0;
}

static int tma_parse(const char *text, tc_gemm_params *p, tc_str *err) {
  int ws = strncmp(text, "tmaws:", 6) == 0;
  const char *pre = ws ? "tmaws:" : "tma:";
  char expect[64];
  const char *opt = ws ? "[,CLUSTER[,BLOCKS]]" : "";
  snprintf(expect, sizeof expect, "3 after %s (MPB,NPB,STAGES%s)", pre, opt);
  int vals[5] = {0};
  int n = parse_fields(text, text + strlen(pre), tma_names, ws ? 5 : 3, expect, vals, err);
  if (n < 0) return -1;
  if (n < 3)
    return fail(err, "perf-config \"%s\": expected 3 comma-separated fields after %s "
                "(MPB,NPB,STAGES%s), got %d", text, pre, opt, n);
  memset(p, 0, sizeof *p);
  p->m_per_block = vals[0], p->n_per_block = vals[1], p->tma_stages = vals[2];
  p->tma_ws = ws;
  p->tma_cluster = n >= 4 && vals[3] != 1 ? vals[3] : 0;
  p->tma_persist = n == 5 ? vals[4] : 0;
  p->k_per_block = 64;
  return 0;
}

/* A TMA kernel's block fills an SM (up to 227 KiB of shared memory), so
 * its time is about (waves of TC_TMA_SMS blocks) x (one tile's time), and
 * a tile's time grows more slowly than its area (a larger tile reads less
 * shared memory per multiply-add): the relative cost of a tile of area
 * MPB * NPB is area / efficiency, efficiency 1 from 128 x 256 up, 0.9 for
 * 128 x 128, 0.75 for 64 x 128, 0.6 for 64 x 64.  Measured on an H100
 * (bench/RESULTS.md, 2026-11-26): a 128 x 256 tile ran 5.35 TFLOP/s per
 * SM (8192^3, 16 waves) and a 128 x 128 tile 4.88 (256 x 8192 x 8192,
 * one wave): 0.91, as estimated.  The two smaller values stay estimates:
 * the shapes that pick those tiles (M <= 128, N = K = 8192) ran at the
 * memory bound (B read once at 97% of the copy rate, as cuBLAS), where a
 * tile's compute efficiency does not show; --tune measures. */
#define TC_TMA_SMS 132 /* H100 / H200 SXM */
static double tma_cost(const cand *c) {
  int64_t area = (int64_t)c->p.m_per_block * c->p.n_per_block;
  double eff = area >= 32768 ? 1.0 : area >= 16384 ? 0.9 : area >= 8192 ? 0.75 : 0.6;
  int64_t waves = (c->blocks + TC_TMA_SMS - 1) / TC_TMA_SMS;
  return (double)waves * (double)area / eff;
}

/* TMA candidates: MPB in {64, 128, 256}, NPB in {64, 128, 256}, both
 * pipelines, the most stages that fit (at most 6, and at most the number
 * of K tiles) and two fewer; ordered by tma_cost, then the
 * warp-specialised pipeline first (the copies of the next stages and the
 * wgmmas of this one overlap: docs/hopper_gemm.md), then two consumer
 * warp groups rather than one (one computes while the other waits), then
 * the wider wgmma (N: fewer shared-memory bytes per multiply-add), then
 * the XDLOPS order, then more stages first. */
static int tma_cmp(const void *x, const void *y) {
  const cand *a = x, *b = y;
  double ca = tma_cost(a), cb = tma_cost(b);
  CMP(ca, cb);
  int c = 0;
  CMP(b->p.tma_ws, a->p.tma_ws);
  CMP(b->p.m_per_block >= 128, a->p.m_per_block >= 128);
  CMP(b->p.n_per_block, a->p.n_per_block);
  c = xdl_cmp(x, y);
  if (c) return c;
  CMP(b->p.tma_stages, a->p.tma_stages);
  return 0;
}

int tc_gemm_tma_candidates(const tc_gemm_shape *s, tc_gemm_params **out) {
  static const int mpb[] = {64, 128, 256}, npb[] = {64, 128, 256};
  *out = NULL;
  if (!shape_ok(s) || tc_gemm_tma_supported(s, NULL)) return 0;
  cand *c = tc_xmalloc(2 * 3 * 3 * 2 * sizeof *c);
  int n = 0;
  for (int ws = 0; ws < 2; ws++)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        /* stages past the number of K tiles buy nothing */
        int64_t ktiles = (s->k + 63) / 64;
        int most = ktiles < 6 ? (ktiles < 2 ? 2 : (int)ktiles) : 6;
        while (most >= 2 && tma_check_tuned(mpb[i], npb[j], most, ws, 0, NULL)) most--;
        for (int st = most; st >= 2 && st >= most - 2; st -= 2) {
          tc_gemm_params q;
          memset(&q, 0, sizeof q);
          q.m_per_block = mpb[i], q.n_per_block = npb[j], q.tma_stages = st, q.tma_ws = ws;
          if (tma_derive(&q, s, NULL)) continue;
          cand_add(c, &n, s, &q);
        }
      }
  return cand_finish(c, n, tma_cmp, out);
}

int tc_gemm_tma_default(const tc_gemm_shape *s, tc_gemm_params *p, tc_str *err) {
  if (tc_gemm_tma_supported(s, err)) return -1;
  tc_gemm_params *c = NULL;
  int n = tc_gemm_tma_candidates(s, &c);
  if (n < 1) {
    free(c);
    return fail(err, "tma: no valid parameter set for this shape");
  }
  *p = c[0];
  free(c);
  return 0;
}
