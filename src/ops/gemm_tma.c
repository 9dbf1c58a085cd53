/* gemm_tma.c - the bf16/f16 GEMM for Hopper (sm_90a) built from tilec's
 * data-movement pieces: bulk tensor copies (TMA) into a multi-stage ring
 * of 128-byte-swizzled shared tiles, wgmma reading them through matrix
 * descriptors into f32 accumulators, and an epilogue of stmatrix into a
 * swizzled C tile written back by TMA stores (docs/hopper_gemm.md).
 *
 * Parameters "tmaws:MPB,NPB,STAGES" or "tma:MPB,NPB,STAGES"
 * (src/tune/params.c): a block computes a MPB x NPB tile of C with MPB /
 * 64 consumer warp groups of 128 threads (warp
 * group w owns rows 64w .. 64w + 63 and every column: one wgmma
 * m64n<NPB>k16 per 16-wide K step); K advances 64 elements (128 bytes, one
 * swizzle row) per stage.
 *
 * Shared memory: STAGES stages of [A tile | B tile], A MPB x 64 and B NPB
 * x 64 elements, 128 bytes per tile row.  An operand contiguous along K
 * (K-major) is one box [rows][64 of K]; one contiguous along M / N
 * (M/N-major) is rows / 64 boxes [64 of K][64 of M/N], 8 KiB apart.  Each
 * box is laid out as the bulk copy writes it with the 128-byte swizzle:
 * the layout comes from the transforms of src/layout/tma_swizzle.c
 * (tc_tma_swizzle_offset), which the OpenCL emulation of the copies and
 * the stmatrix addresses print; the CUDA copies get the same layout from
 * the hardware.  wgmma descriptors (PTX ISA canonical layouts, 128B
 * swizzle, mode 1): K-major LBO 16 (unused), SBO 1024 (8 rows of 128
 * bytes), +32 bytes per K step; M/N-major LBO 8192 (the next 64 of M/N),
 * SBO 1024 (8 K rows), +2048 bytes per K step, imm-trans 1.
 *
 * Two pipelines over the ring ("full" barrier per stage, armed with the
 * stage's bytes; K tile kt uses stage kt % STAGES, fill n = kt / STAGES):
 *   tma: (block-synchronous) thread 0 issues the copies of K tiles 0 ..
 *     STAGES-1; for kt: wait for full[stage] (parity n & 1); the warp
 *     groups' 4 wgmmas; commit, wait for them; a block barrier (every warp
 *     group is done with the stage); thread 0 refills the stage with K
 *     tile kt + STAGES.
 *   tmaws: (warp-specialised) one more warp group, the producer, keeps 40
 *     registers (setmaxnreg.dec) and one of its threads issues every copy:
 *     before fill n >= 1 of a stage it waits for that stage's "empty"
 *     barrier (parity (n - 1) & 1), which completes when each of the
 *     consumer warp groups has arrived once.  The consumers raise their
 *     registers (setmaxnreg.inc); for kt: wait for full[stage], the 4
 *     wgmmas, commit, wait until at most this group is pending (wait_group
 *     1: K tile kt - 1's wgmmas are done), then one thread per warp group
 *     arrives on the empty barrier of kt - 1's stage.  So the copies run
 *     STAGES tiles ahead and the tensor cores never wait for a barrier
 *     of the whole block.  The consumers meet at a named barrier (bar.sync
 *     1) before the epilogue reuses the ring.
 * Blocks walk the C tiles in groups of TC_TMA_GROUP_M tile rows (column
 * after column inside a group), so the blocks running at once share
 * their A and B tiles in L2.
 * Epilogue: each warp packs its accumulators (times alpha) to 16 bits and
 * writes them with stmatrix.x4 (the wgmma D fragment is the m8n8 fragment
 * of four matrices) into the C tile - NPB / 64 boxes [MPB][64] in the
 * same swizzled layout, over the ring - then a proxy fence, a barrier and
 * thread 0's TMA stores (the copy engine drops rows and columns past M
 * and N; loads past the edges read zeros, so ragged shapes need no
 * predicates in the kernel).
 *
 * OpenCL (the emulation, to verify on PoCL): the same kernel with each
 * copy done by the whole work-group through the printed layout (zeros
 * outside the matrix, no stores outside), barriers for the mbarrier
 * waits, and the wgmma / stmatrix emulations of wgmma_emu.c and
 * ldst_opencl.c, which address shared memory as the hardware does. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codegen/cxx_common.h"
#include "../codegen/dialect.h"
#include "../target/target.h"
#include "../layout/tma_swizzle.h"
#include "gemm.h"
#include "../base/test_hooks.h"

/* C tile rows per group of the blocks' walk over the tiles. */
#define TC_TMA_GROUP_M 8

typedef struct operand {
  char name;          /* 'A', 'B' or 'C' */
  int kmajor;         /* A, B: contiguous along K (else along M / N); C: 1 (N contiguous) */
  int64_t rows;       /* MPB (A), NPB (B): the tile's extent along M / N */
  int64_t tile_off;   /* byte offset of the tile inside a stage */
  int nboxes;         /* boxes per loading block (of `split`) */
  int split;          /* blocks of a cluster that share the tile, each loading nboxes (B: 2) */
  int64_t box_rows;   /* box = box_rows x 64 elements (64 along the contiguous dim) */
  int64_t box_bytes;
  int64_t dim_in, dim_out;    /* matrix extents along the box's inner / outer dims */
  int64_t str_out, str_g;     /* element strides of the outer dim and of G */
} operand;

typedef struct hgen {
  const tc_dialect *d;
  int cuda;
  tc_str *o;
  tc_epool *P;
  const tc_gemm_problem *pb;
  const tc_gemm_params *p;
  tc_gemm_shape s;
  int64_t nm, nn, nk, stage_bytes;
  int64_t threads;    /* the block (CUDA: consumers + producer) */
  int nc;             /* consumer warp groups: MPB / 64 */
  int ws;             /* the warp-specialised pipeline (CUDA; the emulation runs it lockstep) */
  int cm;             /* blocks per cluster (2: B multicast; the emulation loads both halves) */
  int persist;        /* a persistent kernel: its grid (blocks), else 0 */
  int64_t ntiles;     /* blocks of a one-tile-per-block grid: G * row tiles (whole clusters) * N tiles */
  const char *it;     /* the running K-tile count: "kt" (one tile per block) or "tc_it" */
  int rank; /* tensor-map rank: 3 with a batch, else 2 */
  operand a, b, c;
  tc_str *err;
} hgen;

/* Fills the generator's error buffer and gives st. */
#define hfail(H, st, ...) (tc_err_set((H)->err, __VA_ARGS__), (st))

static void ln(hgen *H, int depth, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void ln(hgen *H, int depth, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tc_str_vline(H->o, depth, fmt, ap);
  va_end(ap);
}

/* The element offset inside a box of rows x 64 of element (r, c), printed. */
static tc_status box_offset(hgen *H, int64_t rows, const tc_expr *r, const tc_expr *c, tc_str *out) {
  TC_STR_LOCAL(why);
  const tc_expr *e = tc_tma_swizzle_offset(H->P, rows, 128, 2, r, c, &why);
  if (!e) return hfail(H, TC_ERR_ARGUMENT, "GEMM (tma): the swizzled box: %s", tc_str_cstr(&why));
  tc_e_print_c(out, H->P, e);
  return TC_OK;
}

/* Operand A or B of the problem (strides of [G, K, X]). */
static void operand_init(hgen *H, operand *op, char name, const int64_t *st, int64_t x_ext,
                         int64_t rows, int64_t tile_off) {
  memset(op, 0, sizeof *op);
  op->name = name;
  op->kmajor = st[1] == 1;
  op->rows = rows;
  op->tile_off = tile_off;
  op->box_rows = op->kmajor ? rows : 64;
  op->nboxes = op->kmajor ? 1 : (int)(rows / 64);
  op->split = 1;
  op->box_bytes = op->box_rows * 128;
  op->dim_in = op->kmajor ? H->s.k : x_ext;
  op->dim_out = op->kmajor ? x_ext : H->s.k;
  op->str_out = op->kmajor ? st[2] : st[1];
  op->str_g = st[0];
}

static void tmap_of(hgen *H, const operand *op, int buffer, tc_rt_tmap *t) {
  memset(t, 0, sizeof *t);
  t->buffer = buffer;
  t->dtype = H->s.dtype;
  t->rank = H->rank;
  t->dims[0] = (uint64_t)op->dim_in, t->dims[1] = (uint64_t)op->dim_out, t->dims[2] = (uint64_t)H->s.g;
  /* an outer dimension of extent 1 is never stepped along, and a view may
   * give it any stride (0 where it was dropped): the map gets the dense
   * one, rounded up to the 16 bytes tensor maps need */
  uint64_t dense = ((uint64_t)op->dim_in * 2 + 15) / 16 * 16;
  t->strides[1] = op->dim_out == 1 ? dense : (uint64_t)op->str_out * 2;
  t->strides[2] = (uint64_t)op->str_g * 2;
  t->box[0] = 64, t->box[1] = (uint32_t)op->box_rows, t->box[2] = 1;
  t->swizzle = 128;
}

/* Splits an operand's tile between the `split` blocks of a cluster: each
 * loads nboxes / split boxes (K-major: one box of rows / split rows). */
static void operand_split(operand *op, int split) {
  op->split = split;
  if (op->kmajor)
    op->box_rows /= split, op->box_bytes = op->box_rows * 128;
  else
    op->nboxes /= split;
}

/* The tile's box number `jj` (a C expression) of box j of the block of
 * cluster rank `rank` (NULL or "0" without a split). */
static void box_index(const operand *op, int j, const char *rank, char *jj, size_t cap) {
  if (op->split > 1 && tc_test_hooks_get()->gemm_tma_fault == 3) /* fault: every rank loads the first share */
    snprintf(jj, cap, "%d", j);
  else if (op->split > 1)
    snprintf(jj, cap, "(%s) * %d + %d", rank, op->nboxes, j);
  else
    snprintf(jj, cap, "%d", j);
}

/* Box jj's coordinates (inner, outer) for K tile `kt` (C expressions). */
static void box_coords(const operand *op, const char *jj, const char *kt, const char *x0,
                       char *in, char *out, size_t cap) {
  if (op->kmajor) {
    snprintf(in, cap, "(%s) * 64", kt);
    if (op->split > 1)
      snprintf(out, cap, "%s + (%s) * %lld", x0, jj, (long long)op->box_rows);
    else
      snprintf(out, cap, "%s", x0);
  } else if (op->split > 1) {
    snprintf(in, cap, "%s + (%s) * 64", x0, jj);
    snprintf(out, cap, "(%s) * 64", kt);
  } else {
    snprintf(in, cap, "%s + 64 * %s", x0, jj);
    snprintf(out, cap, "(%s) * 64", kt);
  }
}

/* The copies of K tile `kt` into stage `stage` (C expressions), at depth;
 * on CUDA issued by the thread for which `who` holds (NULL: the thread
 * running it). */
static tc_status emit_load(hgen *H, const char *stage, const char *kt, const char *who,
                           int depth) {
  const operand *ops[2] = {&H->a, &H->b};
  const char *x0[2] = {"tc_m0", "tc_n0"};
  char in[96], out[96];
  if (H->cuda) {
    if (who) ln(H, depth++, "if (%s) {", who);
    ln(H, depth,
       "asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%%0], %%1;\" :: "
       "\"r\"(tc_tma_u32(&tc_bar[%s])), \"r\"(%lld) : \"memory\");",
       stage, (long long)H->stage_bytes);
    for (int o = 0; o < 2; o++)
      for (int j = 0; j < ops[o]->nboxes; j++) {
        const operand *op = ops[o];
        char jj[64];
        box_index(op, j, "tc_rank", jj, sizeof jj);
        box_coords(op, jj, kt, x0[o], in, out, sizeof in);
        /* a shared operand goes to the same offset of both blocks of the
         * cluster, completing bytes on each block's barrier */
        int mc = op->split > 1;
        ln(H, depth,
           "asm volatile(\"cp.async.bulk.tensor.%dd.shared::cluster.global.mbarrier::complete_tx::"
           "bytes%s [%%0], [%%1, {%%2, %%3%s}], [%%4]%s;\"",
           H->rank, mc ? ".multicast::cluster" : "", H->rank == 3 ? ", %5" : "",
           mc ? (H->rank == 3 ? ", %6" : ", %5") : "");
        ln(H, depth + 2,
           ":: \"r\"(tc_tma_u32(tc_sm + (%s) * %lld + %lld + (%s) * %lld)), "
           "\"l\"((unsigned long long)&tc_tm_%c), \"r\"(%s), \"r\"(%s), "
           "\"r\"(tc_bar_u32(&tc_bar[%s]))%s%s : \"memory\");",
           stage, (long long)H->stage_bytes, (long long)op->tile_off, jj,
           (long long)op->box_bytes, tolower(op->name), in, out, stage,
           H->rank == 3 ? ", \"r\"(tc_g)" : "", mc ? ", \"h\"((unsigned short)3)" : "");
      }
    if (who) ln(H, depth - 1, "}");
    return TC_OK;
  }
  /* OpenCL: the work-group copies each box through the swizzled layout */
  const tc_expr *r = tc_e_var(H->P, "tc_r", 0, 255), *c = tc_e_var(H->P, "tc_c", 0, 63);
  for (int o = 0; o < 2; o++) {
    const operand *op = ops[o];
    tc_str off;
    tc_str_init(&off);
    tc_status st = box_offset(H, op->box_rows, r, c, &off);
    if (st != TC_OK) {
      tc_str_free(&off);
      return st;
    }
    for (int jr = 0; jr < op->nboxes * op->split; jr++) {
      /* every block's share: the emulated block copies them all */
      int j = jr % op->nboxes;
      char rank[16], jj[64];
      snprintf(rank, sizeof rank, "%d", jr / op->nboxes);
      box_index(op, j, rank, jj, sizeof jj);
      box_coords(op, jj, kt, x0[o], in, out, sizeof in);
      ln(H, depth, "for (int tc_e = tid; tc_e < %lld; tc_e += %lld) {  /* %c box %d: TMA emulated */",
         (long long)(op->box_rows * 64), (long long)H->threads, op->name, jr);
      ln(H, depth + 1, "const int tc_r = tc_e / 64, tc_c = tc_e %% 64;");
      ln(H, depth + 1, "const int tc_gi = %s + tc_c, tc_go = %s + tc_r;", in, out);
      ln(H, depth + 1,
         "tc_sm16[((%s) * %lld + %lld) / 2 + %s] = (tc_gi < %lld && tc_go < %lld) ? %c[(long)tc_g * "
         "%lld + (long)tc_go * %lld + tc_gi] : (ushort)0;",
         stage, (long long)H->stage_bytes, (long long)(op->tile_off + jr * op->box_bytes),
         tc_str_cstr(&off), (long long)op->dim_in, (long long)op->dim_out, op->name,
         (long long)op->str_g, (long long)op->str_out);
      ln(H, depth, "}");
    }
    tc_str_free(&off);
  }
  return TC_OK;
}

/* The loading thread fetches the three tensor maps (kernel parameters)
 * into the copy engine's descriptor cache ahead of the first copy. */
static void emit_prefetch(hgen *H, int depth) {
  for (int i = 0; i < 3; i++)
    ln(H, depth, "asm volatile(\"prefetch.tensormap [%%0];\" :: \"l\"((unsigned long long)&tc_tm_%c) : "
                 "\"memory\");", "abc"[i]);
}

/* Waits for the completion of the phase of parity `ph` of barrier
 * bar[stage]: tc_bar, the copies of the stage have landed; tc_empty, the
 * consumers are done with it. */
static void emit_wait(hgen *H, const char *bar, const char *stage, const char *ph, int depth) {
  if (!H->cuda) {
    ln(H, depth, "%s  /* the stage's mbarrier: the copies above are done */", H->d->barrier);
    return;
  }
  ln(H, depth, "for (unsigned tc_done = 0; !tc_done;)");
  ln(H, depth + 1,
     "asm volatile(\"{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%%1], %%2; "
     "selp.u32 %%0, 1, 0, p; }\" : \"=r\"(tc_done) : \"r\"(tc_bar_u32(&%s[%s])), \"r\"(%s) : "
     "\"memory\");",
     bar, stage, ph);
}

/* The warp groups' wgmmas on stage `stage`. */
static void emit_mma(hgen *H, const char *stage, int depth) {
  const tc_dialect *d = H->d;
  int npb = H->p->n_per_block;
  const char *ulong_t = H->cuda ? "unsigned long long" : "ulong";
  ln(H, depth, "{ /* 4 x wgmma m64n%dk16 per warp group on the stage */", npb);
  if (d->wgmma_begin) ln(H, depth + 1, "%s", d->wgmma_begin);
  for (int ks = 0; ks < 4; ks++) {
    const operand *ops[2] = {&H->a, &H->b};
    tc_str addr[2];
    int64_t lbo[2], sbo[2];
    for (int o = 0; o < 2; o++) {
      const operand *op = ops[o];
      tc_str off;
      tc_str_init(&off);
      tc_str_init(&addr[o]);
      /* element offset of the descriptor's start: the warp group's 64 rows
       * (A only) and K step ks */
      int64_t fixed = op->tile_off / 2 + (op->kmajor ? 16 * ks : 16 * 64 * ks);
      if (o == 0)
        tc_str_printf(&off, "(%s) * %lld + %lld + tc_wg * %lld", stage,
                      (long long)(H->stage_bytes / 2), (long long)fixed,
                      (long long)(op->kmajor ? 64 * 64 : op->box_bytes / 2));
      else
        tc_str_printf(&off, "(%s) * %lld + %lld", stage, (long long)(H->stage_bytes / 2),
                      (long long)fixed);
      d->wgmma_addr(&addr[o], "tc_sm16", tc_str_cstr(&off));
      tc_str_free(&off);
      lbo[o] = op->kmajor ? 16 : op->box_bytes;
      sbo[o] = 1024;
    }
    ln(H, depth + 1, "{");
    int mode = tc_test_hooks_get()->gemm_tma_fault == 1 ? 0 : 1; /* 1: 128-byte swizzle */
    ln(H, depth + 2, "const %s tc_da = tc_wgmma_desc(%s, %lldu, %lldu, %du);", ulong_t,
       tc_str_cstr(&addr[0]), (long long)lbo[0], (long long)sbo[0], mode);
    ln(H, depth + 2, "const %s tc_db = tc_wgmma_desc(%s, %lldu, %lldu, %du);", ulong_t,
       tc_str_cstr(&addr[1]), (long long)lbo[1], (long long)sbo[1], mode);
    d->wgmma(H->o, H->s.dtype, npb, "tc_sm16", "tc_da", "tc_sm16", "tc_db", !H->a.kmajor,
             !H->b.kmajor, "c_acc", depth + 2);
    ln(H, depth + 1, "}");
    tc_str_free(&addr[0]);
    tc_str_free(&addr[1]);
  }
  if (H->cuda && H->ws)
    /* K tile kt's group stays in flight; kt - 1's is done */
    ln(H, depth + 1, "asm volatile(\"wgmma.commit_group.sync.aligned;\\n\\twgmma.wait_group.sync.aligned "
                     "1;\" ::: \"memory\");");
  else if (d->wgmma_end)
    ln(H, depth + 1, "%s", d->wgmma_end);
  ln(H, depth, "}");
}

/* One consumer warp group's release of the stage of the K tile before
 * the running count (`it` - 1): its arrival on that stage's empty
 * barrier, and with a cluster on the peer's (whose producer multicasts
 * into this stage too). */
static void emit_release(hgen *H, int depth) {
  int S = H->p->tma_stages;
  ln(H, depth, "const unsigned tc_eb = tc_bar_u32(&tc_empty[(%s + %d) %% %d]);", H->it, S - 1, S);
  ln(H, depth, "asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%%0];\" :: \"r\"(tc_eb) : \"memory\");");
  if (H->cm > 1)
    ln(H, depth, "asm volatile(\"{ .reg .b32 ra; mapa.shared::cluster.u32 ra, %%0, %%1; "
                 "mbarrier.arrive.shared::cluster.b64 _, [ra]; }\" :: \"r\"(tc_eb), "
                 "\"r\"(tc_rank ^ 1u) : \"memory\");");
}

/* A barrier of the consumer threads: the block's one, or, with a
 * producer warp group (which has left), named barrier 1 of the consumers. */
static void consumer_barrier(hgen *H, int depth, const char *why) {
  if (H->cuda && H->ws)
    ln(H, depth, "asm volatile(\"bar.sync 1, %d;\" ::: \"memory\");  /* %s */", H->nc * 128, why);
  else
    ln(H, depth, "%s  /* %s */", H->d->barrier, why);
}

/* The bulk stores of C boxes j0 .. j1 - 1, box j read from C buffer
 * buf0 + (j - j0) (buffers of MPB x 64 at element c0) once the consumers
 * have written them: CUDA, a proxy fence, the consumers' barrier and
 * thread 0's copies in one bulk group (waited for here unless
 * persistent); OpenCL, the barrier and the work-group's copy. */
static tc_status emit_stores(hgen *H, int j0, int j1, int64_t c0, int buf0, int depth) {
  const operand *c = &H->c;
  if (H->cuda) {
    ln(H, depth, "asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");");
    consumer_barrier(H, depth, "the C boxes are written");
    ln(H, depth, "if (tid == 0) {");
    for (int j = j0; j < j1; j++) {
      ln(H, depth + 1,
         "asm volatile(\"cp.async.bulk.tensor.%dd.global.shared::cta.bulk_group [%%0, {%%1, %%2%s}], "
         "[%%3];\"",
         H->rank, H->rank == 3 ? ", %4" : "");
      ln(H, depth + 3,
         ":: \"l\"((unsigned long long)&tc_tm_c), \"r\"(tc_n0 + %d), \"r\"(tc_m0), "
         "\"r\"(tc_tma_u32(tc_sm + %lld))%s : \"memory\");",
         64 * j, (long long)(2 * c0 + (buf0 + j - j0) * c->box_bytes),
         H->rank == 3 ? ", \"r\"(tc_g)" : "");
    }
    ln(H, depth + 1, "asm volatile(\"cp.async.bulk.commit_group;\" ::: \"memory\");");
    /* the block may exit once the copies have read the C tile (persistent:
     * before the buffer is written again, and at the end) */
    if (!H->persist)
      ln(H, depth + 1, "asm volatile(\"cp.async.bulk.wait_group.read 0;\" ::: \"memory\");");
    ln(H, depth, "}");
    return TC_OK;
  }
  consumer_barrier(H, depth, "the C boxes are written");
  tc_str off;
  tc_str_init(&off);
  tc_status st = box_offset(H, H->p->m_per_block, tc_e_var(H->P, "tc_r", 0, 255),
                            tc_e_var(H->P, "tc_c", 0, 63), &off);
  for (int j = j0; j < j1 && st == TC_OK; j++) {
    ln(H, depth, "for (int tc_e = tid; tc_e < %lld; tc_e += %lld) {  /* C box %d: TMA store emulated */",
       (long long)(c->box_rows * 64), (long long)H->threads, j);
    ln(H, depth + 1, "const int tc_r = tc_e / 64, tc_c = tc_e %% 64;");
    ln(H, depth + 1, "const int tc_gi = tc_n0 + %d + tc_c, tc_go = tc_m0 + tc_r;", 64 * j);
    ln(H, depth + 1,
       "if (tc_gi < %lld && tc_go < %lld) C[(long)tc_g * %lld + (long)tc_go * %lld + tc_gi] = "
       "tc_sm16[%lld + %s];",
       (long long)c->dim_in, (long long)c->dim_out, (long long)c->str_g, (long long)c->str_out,
       (long long)(c0 + (buf0 + j - j0) * c->box_bytes / 2), tc_str_cstr(&off));
    ln(H, depth, "}");
  }
  tc_str_free(&off);
  return st;
}

int tc_gemm_tma_c_pending(int j, int nbox, int nbuf) {
  /* the last nbuf - 1 groups read other buffers, unless the previous
   * tile's last box (j == 0) used this one */
  return j > 0 || nbox % nbuf == 0 ? nbuf - 1 : 0;
}

/* Accumulators -> 16-bit C boxes [MPB][64] in shared memory (stmatrix.x4
 * per 16 columns), then the boxes -> global.  One tile per block: the
 * whole C tile over the ring (free after the main loop), stored at the
 * end.  Persistent: box by box through tc_gemm_tma_c_buffers(NPB)
 * buffers after the ring (the producer is filling the ring with the next
 * tile's stages), each stored as soon as it is written; before a buffer
 * is written again thread 0 waits until the copies of all but the other
 * buffer's last box have read it (wait_group.read 1; 0 with one buffer,
 * or where the previous tile's last box used the same buffer). */
static tc_status emit_epilogue(hgen *H, int depth) {
  const tc_dialect *d = H->d;
  int mpb = H->p->m_per_block, npb = H->p->n_per_block;
  int nbox = npb / 64, nbuf = H->persist ? tc_gemm_tma_c_buffers(npb) : nbox;
  tc_epool *P = H->P;
  ln(H, depth, "/* epilogue: stmatrix.x4 of the accumulators into the swizzled C boxes, then TMA "
               "stores */");
  /* the C buffers' element offset: over the ring, or (persistent) after it */
  int64_t c0 = H->persist ? H->p->tma_stages * H->stage_bytes / 2 : 0;
  if (H->cuda && H->ws) {
    ln(H, depth, "asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");");
    if (H->persist) {
      /* the producer is filling the next tile's stages: free the last one */
      ln(H, depth, "if (tid %% 128 == 0) {  /* the tile's last stage is free */");
      emit_release(H, depth + 1);
      ln(H, depth, "}");
    } else {
      consumer_barrier(H, depth, "every warp group's wgmmas are done: the ring is free");
    }
  }
  ln(H, depth, "const int tc_lane = tid %% 32;");
  /* row and column (inside 16 x 16) of the matrix row this lane addresses:
   * lane l gives row l % 8 of matrix l / 8, matrices ordered (rows 0-7,
   * cols 0-7), (rows 8-15, cols 0-7), (rows 0-7, cols 8-15), (rows 8-15,
   * cols 8-15) - the order of the D fragment's register pairs */
  const tc_expr *row = tc_e_add(
      P, tc_e_add(P, tc_e_mulc(P, tc_e_var(P, "tc_wg", 0, mpb / 64 - 1), 64),
                  tc_e_mulc(P, tc_e_var(P, "tc_wgw", 0, 3), 16)),
      tc_e_add(P, tc_e_modc(P, tc_e_var(P, "tc_lane", 0, 31), 8),
               tc_e_mulc(P, tc_e_modc(P, tc_e_divc(P, tc_e_var(P, "tc_lane", 0, 31), 8), 2), 8)));
  tc_status st = TC_OK;
  for (int j = 0; j < nbox && st == TC_OK; j++) {
    int buf = j % nbuf;
    if (H->persist) {
      /* box j's buffer: its last copy (of box j - nbuf, or of the previous
       * tile) has read it */
      int pending = tc_gemm_tma_c_pending(j, nbox, nbuf);
      if (H->cuda)
        ln(H, depth, "if (tid == 0) asm volatile(\"cp.async.bulk.wait_group.read %d;\" ::: \"memory\");",
           pending);
      consumer_barrier(H, depth, "the C buffer may be written");
    }
    for (int jg = 4 * j; jg < 4 * j + 4; jg++) {
      const tc_expr *col = tc_e_addc(
          P, tc_e_mulc(P, tc_e_divc(P, tc_e_var(P, "tc_lane", 0, 31), 16), 8), 16 * (jg % 4));
      tc_str off, addr;
      tc_str_init(&off);
      tc_str_init(&addr);
      st = box_offset(H, mpb, row, col, &off);
      if (st != TC_OK) {
        tc_str_free(&off);
        tc_str_free(&addr);
        return st;
      }
      tc_str_printf(&addr, "%lld + %s", (long long)(c0 + (int64_t)buf * mpb * 64), tc_str_cstr(&off));
      ln(H, depth, "{ /* columns %d .. %d */", 16 * jg, 16 * jg + 15);
      for (int i = 0; i < 4; i++) {
        int src = tc_test_hooks_get()->gemm_tma_fault == 2 && (i == 1 || i == 2) ? 3 - i : i;
        ln(H, depth + 1, "tc_lr[%d] = tc_pack2(c_acc[%d] * tc_alpha, c_acc[%d] * tc_alpha);", i,
           8 * jg + 2 * src, 8 * jg + 2 * src + 1);
      }
      d->ldsm_access(H->o, 0, 4, 0, "tc_sm16", tc_str_cstr(&addr), depth + 1);
      ln(H, depth, "}");
      tc_str_free(&off);
      tc_str_free(&addr);
    }
    if (H->persist) st = emit_stores(H, j, j + 1, c0, buf, depth);
  }
  if (st == TC_OK && !H->persist) st = emit_stores(H, 0, nbox, c0, 0, depth);
  return st;
}

/* The C tile of tile number `tile` (a C expression: the block, or a
 * persistent kernel's loop variable): tc_g, tc_m0, tc_n0.  Tiles go in
 * groups of TC_TMA_GROUP_M tile rows, column by column; with clusters of
 * cm blocks, rows of cm tiles (one per rank, tile % cm; a last partial
 * one's extra blocks load zeros and store nothing). */
static void emit_tile_coords(hgen *H, const char *tile, int depth) {
  int cm = H->cm, mpb = H->p->m_per_block, npb = H->p->n_per_block;
  int64_t nr = (H->nm + cm - 1) / cm, per = TC_TMA_GROUP_M / cm;
  int64_t gm = nr < per ? nr : per;
  ln(H, depth, "const int tc_g = %s / %lld, tc_t = %s / %d %% %lld;", tile,
     (long long)(nr * H->nn * cm), tile, cm, (long long)(nr * H->nn));
  ln(H, depth, "const int tc_fm = tc_t / %lld * %lld, tc_gsz = %lld - tc_fm < %lld ? %lld - tc_fm : %lld;",
     (long long)(gm * H->nn), (long long)gm, (long long)nr, (long long)gm, (long long)nr,
     (long long)gm);
  if (cm > 1)
    ln(H, depth, "const int tc_m0 = ((tc_fm + tc_t %% %lld %% tc_gsz) * %d + (int)tc_rank) * %d, "
                 "tc_n0 = tc_t %% %lld / tc_gsz * %d;",
       (long long)(gm * H->nn), cm, mpb, (long long)(gm * H->nn), npb);
  else
    ln(H, depth, "const int tc_m0 = (tc_fm + tc_t %% %lld %% tc_gsz) * %d, tc_n0 = tc_t %% %lld / "
                 "tc_gsz * %d;",
       (long long)(gm * H->nn), mpb, (long long)(gm * H->nn), npb);
  ln(H, depth, "(void)tc_g;");
}

/* A persistent kernel's loop over its tiles (block b: b, b + grid, ...),
 * opened at depth with the tile's coordinates inside; close with "}". */
static void open_tile_loop(hgen *H, int depth) {
  ln(H, depth, "for (int tc_tile = tc_bid; tc_tile < %lld; tc_tile += %s) {  /* persistent */",
     (long long)H->ntiles, H->cuda ? "(int)gridDim.x" : "(int)get_num_groups(0)");
  emit_tile_coords(H, "tc_tile", depth + 1);
}

static tc_status emit(hgen *H, const char *name) {
  const tc_dialect *d = H->d;
  const tc_gemm_params *p = H->p;
  int mpb = p->m_per_block, npb = p->n_per_block, S = p->tma_stages;
  char cfg[64];
  tc_gemm_params_format(p, cfg, sizeof cfg);
  tc_str_printf(H->o, "/* generated by tilec %s for %s */\n", TILEC_VERSION, d->name);
  tc_str_cat(H->o, "#ifndef TC_PRELUDE\n#define TC_PRELUDE\n");
  tc_str_cat(H->o, d->prelude);
  tc_str_cat(H->o, "#endif\n");
  tc_str_cat(H->o, "#ifndef TC_WGMMA_PRELUDE\n#define TC_WGMMA_PRELUDE\n");
  tc_str_cat(H->o, d->wgmma_prelude);
  tc_str_cat(H->o, "#endif\n");
  tc_str_cat(H->o, d->ldsm_prelude);
  if (H->cuda) {
    tc_str_cat(H->o, tc_cu_tma_prelude);
    tc_str_cat(H->o,
               "TC_DEV unsigned tc_bar_u32(const unsigned long long *b) { return tc_tma_u32(b); }\n");
  }
  /* two floats as the 16-bit pair of one stmatrix register (low half first) */
  ln(H, 0, "%s unsigned tc_pack2(float lo, float hi) {", H->cuda ? "TC_DEV" : "static");
  if (H->s.dtype == TC_BF16 || H->cuda) {
    const char *cv = H->s.dtype == TC_BF16 ? "tc_f32_to_bf16" : "tc_f32_to_f16";
    ln(H, 1, "return (unsigned)%s(lo) | ((unsigned)%s(hi) << 16);", cv, cv);
  } else {
    ln(H, 1, "ushort l, h;");
    ln(H, 1, "vstore_half_rte(lo, 0, (half *)&l);");
    ln(H, 1, "vstore_half_rte(hi, 0, (half *)&h);");
    ln(H, 1, "return (uint)l | ((uint)h << 16);");
  }
  ln(H, 0, "}");
  tc_str_cat(H->o, "\n");
  ln(H, 0, "/* TMA + wgmma GEMM (sm_90a): C[g][m][n] = alpha * sum_k A[g][k][m] * B[g][k][n]");
  ln(H, 0, " * G=%lld M=%lld N=%lld K=%lld, %s, alpha %.9g, f32 accumulation; perf config %s:",
     (long long)H->s.g, (long long)H->s.m, (long long)H->s.n, (long long)H->s.k,
     tc_dtype_name(H->s.dtype), (double)H->pb->alpha, cfg);
  ln(H, 0, " * %d warp groups of 64 x %d, %d stages of A %s and B %s tiles (128B swizzle)%s */",
     mpb / 64, npb, S, H->a.kmajor ? "K-major" : "M-major", H->b.kmajor ? "K-major" : "N-major",
     !H->p->tma_ws ? ""
     : H->cuda     ? ", a producer warp group"
                   : ";\n * warp-specialised on CUDA, run lockstep here");
  if (H->cuda) /* one block per SM (its shared memory); setmaxnreg needs the bound */
    tc_cxx_kernel_begin_blocks(H->o, name, H->threads, 1, H->cm);
  else
    d->kernel_begin(H->o, name, H->threads);
  d->buffer_param(H->o, H->s.dtype, "A", 0, 1);
  d->buffer_param(H->o, H->s.dtype, "B", 0, 0);
  d->buffer_param(H->o, H->s.dtype, "C", 1, 0);
  if (H->cuda)
    tc_str_cat(H->o, ", const __grid_constant__ tc_tmap tc_tm_a, const __grid_constant__ tc_tmap "
                     "tc_tm_b, const __grid_constant__ tc_tmap tc_tm_c");
  tc_str_cat(H->o, ") {\n");
  if (H->cuda) {
    ln(H, 1, "const int tid = (int)threadIdx.x, tc_bid = (int)blockIdx.x;");
    if (H->cm > 1) {
      ln(H, 1, "unsigned tc_rank;  /* this block's rank in its cluster */");
      ln(H, 1, "asm(\"mov.u32 %%0, %%%%cluster_ctarank;\" : \"=r\"(tc_rank));");
    }
    ln(H, 1, "extern __shared__ __align__(1024) unsigned char tc_dsm[];");
    ln(H, 1, "/* the 128-byte swizzle repeats every 1024 bytes: align the ring to that */");
    ln(H, 1, "unsigned char *tc_sm = tc_dsm + ((1024u - (tc_tma_u32(tc_dsm) & 1023u)) & 1023u);");
    ln(H, 1, "unsigned short *tc_sm16 = (unsigned short *)tc_sm;");
    ln(H, 1, "__shared__ __align__(8) unsigned long long tc_bar[%d];  /* full: a stage's copies "
             "landed */", S);
    if (H->ws)
      ln(H, 1, "__shared__ __align__(8) unsigned long long tc_empty[%d];  /* the consumers are "
               "done with a stage */", S);
    ln(H, 1, "unsigned tc_lr[4];");
    ln(H, 1, "if (tid == 0) {");
    ln(H, 2, "for (int s = 0; s < %d; ++s) {", S);
    ln(H, 3, "asm volatile(\"mbarrier.init.shared::cta.b64 [%%0], 1;\" :: "
             "\"r\"(tc_bar_u32(&tc_bar[s])) : \"memory\");");
    if (H->ws)
      ln(H, 3, "asm volatile(\"mbarrier.init.shared::cta.b64 [%%0], %d;\" :: "
               "\"r\"(tc_bar_u32(&tc_empty[s])) : \"memory\");", H->nc * H->cm);
    ln(H, 2, "}");
    ln(H, 2, "asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");");
    ln(H, 1, "}");
    if (H->cm > 1) /* no block copies into its peer before the peer's barriers exist (the
                    * fence above releases the init: the arrive may be relaxed) */
      ln(H, 1, "asm volatile(\"barrier.cluster.arrive.relaxed;\\n\\tbarrier.cluster.wait.acquire;\" ::: "
               "\"memory\");");
    else
      ln(H, 1, "__syncthreads();");
  } else {
    ln(H, 1, "const int tid = (int)get_local_id(0), tc_bid = (int)get_group_id(0);");
    ln(H, 1, "__local ushort tc_sm16[%lld];  /* the ring and the C tile (%s) */",
       (long long)((tc_gemm_tma_smem_bytes(p) - 1024) / 2), H->persist ? "after it" : "over it");
    ln(H, 1, "__local int tc_ldsm_rows[%lld];  /* stmatrix: published row addresses */",
       (long long)H->threads);
    ln(H, 1, "const int tc_ldsm_tid = tid;");
    ln(H, 1, "uint tc_lr[4];");
  }
  if (!H->cuda && H->cm > 1) ln(H, 1, "const int tc_rank = tc_bid %% %d;", H->cm);
  if (!H->persist) emit_tile_coords(H, "tc_bid", 1);
  ln(H, 1, "const int tc_wg = tid / 128, tc_wgw = (tid / 32) %% 4;");
  ln(H, 1, "const float tc_alpha = (float)%.9g;", (double)H->pb->alpha);
  tc_status st = TC_OK;
  /* K tile kt of the block's running count `it` uses stage it % S, fill it / S */
  const char *it = H->it;
  int per = H->persist ? 1 : 0; /* the extra depth of a persistent kernel's tile loop */
  char stage[48], ph[64], next[32];
  snprintf(stage, sizeof stage, "%s %% %d", it, S);
  snprintf(ph, sizeof ph, "(unsigned)((%s / %d) & 1)", it, S);
  snprintf(next, sizeof next, "kt + %d", S);
  if (H->ws) {
    /* the producer warp group: gives its registers back, one thread fills
     * each stage once the consumers have released it */
    ln(H, 1, "if (tc_wg == %d) {  /* the producer warp group */", H->nc);
    ln(H, 2, "asm volatile(\"setmaxnreg.dec.sync.aligned.u32 %d;\" ::: \"memory\");",
       TC_TMA_PRODUCER_REGS);
    ln(H, 2, "if (tid == %d) {", H->nc * 128);
    emit_prefetch(H, 3);
    if (per) {
      ln(H, 3, "int tc_it = 0;  /* K tiles loaded, over the tiles */");
      open_tile_loop(H, 3);
    }
    ln(H, 3 + per, "for (int kt = 0; kt < %lld; ++kt%s) {", (long long)H->nk, per ? ", ++tc_it" : "");
    ln(H, 4 + per, "const int tc_st = %s;", stage);
    ln(H, 4 + per, "if (%s >= %d)  /* fill n = %s / %d waits for release n - 1 */", it, S, it, S);
    char eph[64];
    snprintf(eph, sizeof eph, "(unsigned)((%s / %d + 1) & 1)", it, S);
    emit_wait(H, "tc_empty", "tc_st", eph, 5 + per);
    st = emit_load(H, "tc_st", "kt", NULL, 4 + per);
    ln(H, 3 + per, "}");
    if (per) ln(H, 3, "}");
    ln(H, 2, "}");
    /* in a cluster the peer's consumers still arrive on this block's empty
     * barriers: every thread meets at the cluster barrier at the end */
    ln(H, 2, H->cm > 1 ? "goto tc_end;" : "return;");
    ln(H, 1, "}");
    if (H->cm > 1) ln(H, 1, "{  /* the consumer warp groups */");
    ln(H, 1, "asm volatile(\"setmaxnreg.inc.sync.aligned.u32 %d;\" ::: \"memory\");",
       tc_gemm_tma_consumer_regs(H->nc));
  }
  ln(H, 1, "float c_acc[%d];  /* wgmma D: c_acc[j] is row 16*tc_wgw + g + 8*((j/2)%%2), column "
           "8*(j/4) + 2*(lane%%4) + j%%2 of the warp group's 64 rows */", npb / 2);
  if (per) {
    if (H->ws) ln(H, 1, "int tc_it = 0;  /* K tiles computed, over the tiles */");
    open_tile_loop(H, 1);
  }
  if (d->unroll_pragma) ln(H, 1 + per, "%s", d->unroll_pragma);
  ln(H, 1 + per, "for (int j = 0; j < %d; ++j) c_acc[j] = 0.0f;", npb / 2);
  if (!H->ws) {
    int64_t pro = H->nk < S ? H->nk : S;
    if (H->cuda) {
      ln(H, 1, "if (tid == 0) {");
      emit_prefetch(H, 2);
      ln(H, 1, "}");
    }
    ln(H, 1 + per, "/* prologue: K tiles 0 .. %lld into the stages */", (long long)pro - 1);
    for (int64_t s = 0; s < pro && st == TC_OK; s++) {
      char sv[24];
      snprintf(sv, sizeof sv, "%lld", (long long)s);
      st = emit_load(H, sv, sv, "tid == 0", 1 + per);
    }
  }
  ln(H, 1 + per, "for (int kt = 0; kt < %lld; ++kt%s) {", (long long)H->nk,
     per && H->ws ? ", ++tc_it" : "");
  ln(H, 2 + per, "const int tc_st = %s;", stage);
  emit_wait(H, "tc_bar", "tc_st", ph, 2 + per);
  emit_mma(H, "tc_st", 2 + per);
  if (H->ws) {
    ln(H, 2 + per, "if (kt > 0 && tid %% 128 == 0) {  /* K tile kt - 1's stage is free */");
    emit_release(H, 3 + per);
    ln(H, 2 + per, "}");
  } else {
    ln(H, 2 + per, "%s  /* every warp group is done with the stage */", d->barrier);
    ln(H, 2 + per, "if (kt + %d < %lld) {", S, (long long)H->nk);
    if (st == TC_OK) st = emit_load(H, "tc_st", next, "tid == 0", 3 + per);
    ln(H, 2 + per, "}");
  }
  ln(H, 1 + per, "}");
  if (st == TC_OK) st = emit_epilogue(H, 1 + per);
  if (per) {
    ln(H, 1, "}");
    if (H->cuda) /* the block may exit once the last copies have read the C tile */
      ln(H, 1, "if (tid == 0) asm volatile(\"cp.async.bulk.wait_group.read 0;\" ::: \"memory\");");
  }
  if (H->cuda && H->cm > 1) {
    ln(H, 1, "}");
    ln(H, 0, "tc_end:");
    ln(H, 1, "asm volatile(\"barrier.cluster.arrive.release;\\n\\tbarrier.cluster.wait.acquire;\" ::: "
             "\"memory\");");
  }
  ln(H, 0, "}");
  return st;
}

tc_status tc_gemm_tma_generate(const tc_gemm_problem *pb, const tc_gemm_params *p,
                               tc_target target, const char *name, tc_gemm_kernel *out, tc_str *err) {
  hgen H;
  memset(&H, 0, sizeof H);
  H.err = err;
  H.pb = pb, H.p = p;
  /* the hardware's TMA + wgmma where the copies take tensor maps (CUDA);
   * emulated where only the dialect has wgmma (OpenCL) */
  H.d = tc_dialect_for(target);
  H.cuda = tc_target_info_of(target).tensor_maps;
  if (!H.d || !H.d->wgmma)
    return hfail(&H, TC_ERR_UNSUPPORTED,
                 "GEMM: tma kernels are for NVIDIA sm_90a: target cuda, or opencl (emulated); not %s",
                 tc_target_name(target));
  if (!pb->a || !pb->b || !pb->c || pb->a->nupper != 3 || pb->b->nupper != 3 || pb->c->nupper != 3)
    return hfail(&H, TC_ERR_ARGUMENT, "GEMM: A, B and C must be views with 3 upper dims");
  H.s = tc_gemm_problem_shape(pb);
  TC_STR_LOCAL(why);
  if (pb->a_dtype != pb->b_dtype)
    return hfail(&H, TC_ERR_UNSUPPORTED, "GEMM: tma kernels need A and B of one type (got %s and %s)",
                 tc_dtype_name(pb->a_dtype), tc_dtype_name(pb->b_dtype));
  if (tc_gemm_params_check(p, &H.s, &why))
    return hfail(&H, TC_ERR_ARGUMENT, "GEMM: invalid parameters: %s", tc_str_cstr(&why));
  int mpb = p->m_per_block, npb = p->n_per_block;
  H.nm = (H.s.m + mpb - 1) / mpb, H.nn = (H.s.n + npb - 1) / npb, H.nk = (H.s.k + 63) / 64;
  if (H.s.g * H.nm * H.nn > 0x7fffffff || H.s.k > 0x7fffffff - 64)
    return hfail(&H, TC_ERR_UNSUPPORTED, "GEMM: the problem is too large for one launch");
  H.nc = mpb / 64;
  H.ws = H.cuda && p->tma_ws;
  H.threads = (H.nc + H.ws) * 128;
  H.cm = p->tma_cluster > 1 ? p->tma_cluster : 1;
  H.ntiles = H.s.g * ((H.nm + H.cm - 1) / H.cm) * H.cm * H.nn;
  H.persist = p->tma_persist > H.ntiles ? (int)H.ntiles : p->tma_persist;
  H.it = H.persist && H.ws ? "tc_it" : "kt";
  H.stage_bytes = (int64_t)(mpb + npb) * 128;
  H.rank = H.s.g > 1 ? 3 : 2;
  operand_init(&H, &H.a, 'A', H.s.a_stride, H.s.m, mpb, 0);
  operand_init(&H, &H.b, 'B', H.s.b_stride, H.s.n, npb, (int64_t)mpb * 128);
  if (H.cm > 1) operand_split(&H.b, H.cm);
  memset(&H.c, 0, sizeof H.c);
  H.c.name = 'C', H.c.kmajor = 1, H.c.rows = mpb, H.c.box_rows = mpb, H.c.nboxes = npb / 64;
  H.c.box_bytes = (int64_t)mpb * 128;
  H.c.dim_in = H.s.n, H.c.dim_out = H.s.m, H.c.str_out = H.s.c_stride[1], H.c.str_g = H.s.c_stride[0];
  tc_str src;
  tc_str_init(&src);
  H.o = &src;
  H.P = tc_epool_new();
  tc_status st = emit(&H, name);
  tc_epool_free(H.P);
  if (st != TC_OK) {
    tc_str_free(&src);
    return st;
  }
  out->source = tc_str_take(&src);
  snprintf(out->name, sizeof out->name, "%s", name);
  /* whole clusters: a partial last row of cluster tiles still has cm blocks */
  out->grid[0] = (size_t)(H.persist ? H.persist : H.ntiles);
  out->persistent = H.persist && H.cuda ? H.cm : 0;
  out->grid[1] = out->grid[2] = 1;
  out->block[0] = (size_t)H.threads, out->block[1] = out->block[2] = 1;
  out->smem_bytes = tc_gemm_tma_smem_bytes(p);
  if (H.cuda) {
    out->dyn_smem = 1;
    out->ntmaps = 3;
    tmap_of(&H, &H.a, 0, &out->tmaps[0]);
    tmap_of(&H, &H.b, 1, &out->tmaps[1]);
    tmap_of(&H, &H.c, 2, &out->tmaps[2]);
  } else {
    out->smem_bytes -= 1024; /* no alignment slack in the emulation */
  }
  return TC_OK;
}
