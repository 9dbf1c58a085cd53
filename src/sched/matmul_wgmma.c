/* matmul_wgmma.c - the matmul schedule whose products are NVIDIA's
 * warp-group wgmma.mma_async m64nNk16 (tc_matmul_tiles.macro ==
 * TC_MACRO_WGMMA), A and B read from shared memory.
 *
 * The PTX ISA's accumulator layout of one 64 x N tile (D fragment:
 * value j of thread t of the warp group at row 16 (t / 32) + g + 8 ((j /
 * 2) % 2), column 8 (j / 4) + 2 tq + j % 2, g = (t % 32) / 4, tq = t % 4)
 * is a plain split of M and N: M64 = [w 4, ihi 2, ilo 8], N = [jb N/8,
 * jhi 4, jlo 2], the thread is merge(w, ilo, jhi) on TIDx and its N / 2
 * values are [jb, ihi, jlo] (j = 4 jb + 2 ihi + jlo).  With P the
 * accumulator [M, N, rK]:
 *   P [Mo:BIDy, No:BIDx, Ko, W:TIDy, Ki, jb:U, ihi:U, lane:TIDx, jlo:U, k16]
 *     W the warp groups (merge of those along M and N), k16 the macro's
 *     K: the lowering turns the statement inside [jb, ihi, jlo, k16] into
 *     one wgmma over descriptors of the shared tiles (src/lower/wgmma.c);
 *   A', B' in shared memory, computed at Ko, in a canonical K-major
 *     layout of the PTX ISA (the rows of A are M, those of B are N),
 *     merged and spread over all the threads: with K tiles of 64 (or a
 *     multiple), the 128B swizzle, rows of 64 16-bit elements (128
 *     bytes) whose 16-byte chunks are XORed with row % 8, built by the
 *     bulk-copy swizzle schedule (tc_schedule_tma_swizzle), so SBO (the
 *     next 8 rows) is 1024 bytes; else no swizzle, 8 rows x 16 bytes
 *     core matrices, the allocation [Ki, k16 / 8, rows / 8, rows % 8, k16
 *     % 8], SBO 128 bytes and LBO (the next 8 K) 16 x the tile's rows;
 *     on CUDA the swizzled tiles come by bulk tensor copies (TMA, whose
 *     box is that layout) where whole boxes cover the operands and A is
 *     [M, K], B [N, K] in global memory: their loops stay serial, one
 *     thread of each warp group issues them and all wait on an mbarrier
 *     (src/lower/tma.c), in a ring the mbarrier of the tile's slot
 *     (src/lower/circular.c); elsewhere a ring's copies are cp.async;
 *   O and the epilogue: [Mo, No, W, jb, ihi, lane, jlo], so each thread
 *     applies the epilogue to its accumulators and stores them at their
 *     (row, column) of the layout.
 * A batch axis goes first, on BIDz. */
#include <stdio.h>

#include "../base/test_hooks.h"
#include "sched.h"

/* Splits M (axis o) and N (axis o + 1) of t into
 * [Mo, Wm, w, ihi, ilo, No, Wn, jb, jhi, jlo] at o. */
static tc_status split_mn(tc_tensor *t, int o, const tc_matmul_tiles *tl) {
  tc_status st = tc_split(t, o + 1, tl->bn, 1);
  if (!st) st = tc_split(t, o + 2, tl->tn, 1);
  if (!st) st = tc_split(t, o + 3, 8, 1);
  if (!st) st = tc_split(t, o + 4, 2, 1);
  if (!st) st = tc_split(t, o, tl->bm, 1);
  if (!st) st = tc_split(t, o + 1, 64, 1);
  if (!st) st = tc_split(t, o + 2, 16, 1);
  if (!st) st = tc_split(t, o + 3, 8, 1);
  return st;
}

/* [Mo, No, W, jb, ihi, lane, jlo] at o + rel[]: Mo on BIDy and No on
 * BIDx, or with M a size variable (msym) Mo on BIDx and No on BIDy, so
 * that the grid's x extent, computed at launch, may pass BIDy's 65535 */
static tc_status bind7(tc_tensor *t, int o, const int *rel, bool msym, tc_ptype last) {
  const tc_ptype p[7] = {TC_BIDY, TC_BIDX, TC_TIDY, TC_UNROLL, TC_UNROLL, TC_TIDX, last};
  tc_status st = TC_OK;
  for (int i = 0; i < 7 && !st; i++)
    st = tc_parallelize(t, o + rel[i], msym && i < 2 ? (i ? TC_BIDY : TC_BIDX) : p[i]);
  return st;
}

/* The 128B swizzled K-major layout of operand tile x (i 0: A, 1: B),
 * its ten axes past base as P's [Wm, Wn, Ki, jb, ihi, w, ilo, jhi, jlo,
 * k16]: the axes it broadcasts along first, then [rows, K] (rows the
 * merge of its M or N axes, K of Ki and k16) laid out by the bulk-copy
 * swizzle (tc_schedule_tma_swizzle: rows of 64 16-bit elements, 128
 * bytes, whose 16-byte chunks are XORed with the row % 8), which becomes
 * the allocation; then the layout's axes are merged and spread over the
 * threads, so each thread stores at consecutive positions of the layout. */
static tc_status swizzle_tile(tc_tensor *x, int base, int i, int64_t groups, bool tma, int64_t v,
                              bool mn) {
  static const int a_sw[10] = {4, 0, 8, 1, 6, 5, 7, 2, 3, 9};
  static const int b_sw[10] = {0, 4, 8, 5, 1, 2, 3, 6, 7, 9};
  int old[10], nw[10];
  for (int j = 0; j < 10; j++) old[j] = base + j, nw[j] = base + (i ? b_sw : a_sw)[j];
  tc_status st = tc_reorder(x, 10, old, nw);
  for (int j = 0; j < 3 && !st; j++) st = tc_merge(x, base + 4, base + 5); /* rows */
  if (!st) st = tc_merge(x, base + 5, base + 6);                             /* K */
  if (mn && !st) { /* M- / N-major: [K, rows], so the rows are the swizzled 128-byte runs */
    int rk[2] = {base + 4, base + 5}, kr[2] = {base + 5, base + 4};
    st = tc_reorder(x, 2, rk, kr);
  }
  if (!st) st = tc_schedule_tma_swizzle(x, TC_TMA_SWIZZLE_128B);
  if (tma) { /* the layout's loops stay serial: the boxes of a bulk copy */
    /* [bcast 4, K boxes, rows / 8, ...]: each warp group (TIDy) copies
     * its share of the rows where they split into whole 8-row groups */
    int64_t groups8 = tc_tensor_loop_extent(x, base + 5);
    if (!st && groups > 1 && groups8 % groups == 0) {
      st = tc_split(x, base + 5, groups, 0);
      if (!st) st = tc_parallelize(x, base + 5, TC_TIDY);
    }
    if (!st) x->def->ldst = TC_LDST_BULK_TENSOR;
    return st;
  }
  static const int same[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  if (!st) st = tc_matmul_spread(x, base, 10, 6, same, v > 1, v, groups, 128);
  return st;
}

/* Whether view v reads a 2-D fusion input as it is laid out, its rows
 * (A: M, B: N) outermost and K innermost: A [M, K], B given as [N, K]. */
static bool k_major_input(const tc_tensor *v, int i) {
  const tc_op *d = v->def;
  if (!d || d->kind != TC_OP_BROADCAST || !d->in[0]->is_input || d->in[0]->nlogical != 2) return false;
  return i ? d->perm[0] < 0 && d->perm[1] == 0 && d->perm[2] == 1
           : d->perm[0] == 0 && d->perm[1] < 0 && d->perm[2] == 1;
}

/* Whether view v reads a 2-D fusion input with its rows (A: M, B: N)
 * innermost: A given as [K, M], B as [K, N].  Such a tile is staged M- /
 * N-major (wgmma's imm-trans-a / imm-trans-b), so its copies run along
 * the rows of global memory as they do along those of the tile.  Not an
 * input read through a coordinate-transform view (a convolution's),
 * whose logical axes say nothing of its memory order: K-major (the
 * channels, innermost in NHWC, are part of a convolution's K). */
static bool mn_major_input(const tc_tensor *v, int i) {
  const tc_op *d = v->def;
  if (!d || d->kind != TC_OP_BROADCAST || !d->in[0]->is_input || d->in[0]->nlogical != 2 ||
      d->in[0]->view)
    return false;
  return i ? d->perm[0] < 0 && d->perm[1] == 1 && d->perm[2] == 0
           : d->perm[0] == 1 && d->perm[1] < 0 && d->perm[2] == 0;
}

tc_status tc_schedule_matmul_wgmma(tc_fusion *f, tc_target target, tc_op *mm, tc_tensor *out,
                                   const tc_matmul_tiles *tl, int nepi) {
  const char *call = "tc_schedule_matmul";
  tc_tensor *acc = mm->out, *av = mm->in[0], *bv = mm->in[1];
  int r = acc->nlogical - 1, o = r - 2;
  int64_t m = tc_logical_extent(acc, o), n = tc_logical_extent(acc, o + 1);
  int64_t k = f->g.axes[acc->logical[r]].extent;
  /* M, N or K a size variable (docs/dynamic.md): m, n, k are the bounds,
   * only Mo, No and Ko depend on the variable, the tiles' edges read 0 */
  bool msym = tc_dg_is_symbolic(&f->g, acc->logical[o]), sym = msym ||
              tc_dg_is_symbolic(&f->g, acc->logical[o + 1]) || tc_dg_is_symbolic(&f->g, acc->logical[r]);
  tc_arch_family fam = tc_target_info_of(target).family;
  if (fam == TC_ARCH_GFX)
    return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: wgmma m64nNk16 is an NVIDIA sm_90a instruction; hip "
                   "has no wgmma: use the FMA macro", call);
  if (av->dtype != TC_F16 && av->dtype != TC_BF16)
    return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: wgmma m64nNk16 here multiplies f16 or bf16 "
                   "operands, not %s; use the FMA macro (TC_MACRO_FMA)", call,
                   tc_dtype_name(av->dtype));
  if (tl->tm != 64 || tl->tn % 8 || tl->tn > 256 || tl->bk % 16)
    return tc_fail(f, TC_ERR_ARGUMENT, "%s: with wgmma m64nNk16 a warp group's tile (tm x tn = "
                   "%lld x %lld) must be 64 x N with N a multiple of 8 up to 256, and the K tile "
                   "(bk = %lld) a multiple of 16", call, (long long)tl->tm, (long long)tl->tn,
                   (long long)tl->bk);
  int64_t groups = (tl->bm / 64) * (tl->bn / tl->tn);
  if (groups * 128 > 1024)
    return tc_fail(f, TC_ERR_ARGUMENT, "%s: %lld warp groups of 128 threads exceed 1024 threads "
                   "per block", call, (long long)groups);
  /* the output: [Mo, Wm, w, ihi, ilo, No, Wn, jb, jhi, jlo] ->
   * [Mo, No, W, jb, ihi, lane, jlo] */
  tc_status st = split_mn(out, o, tl);
  int old[13], out_new[10] = {0, 2, 6, 5, 7, 1, 3, 4, 8, 9};
  for (int i = 0; i < 10; i++) old[i] = o + i, out_new[i] += o;
  if (!st) st = tc_reorder(out, 10, old, out_new);
  if (!st) st = tc_merge(out, o + 2, o + 3); /* W */
  if (!st) st = tc_merge(out, o + 5, o + 6); /* lane = (w, ilo, jhi) */
  if (!st) st = tc_merge(out, o + 5, o + 6);
  if (o && !st) st = tc_parallelize(out, 0, TC_BIDZ);
  static const int out_rel[7] = {0, 1, 2, 3, 4, 5, 6};
  /* (a lane's two adjacent columns: the epilogue loads and stores them
   * as one vector of 2 where the block tiles divide N, so no vector
   * straddles its end) */
  int nax = acc->logical[o + 1];
  bool vec2 = (tc_dg_is_symbolic(&f->g, nax) ? tc_dg_sym_divisor(&f->g, nax) : n) % tl->bn == 0;
  if (!st) st = bind7(out, o, out_rel, msym, vec2 ? TC_VECTORIZE : TC_UNROLL);
  /* the accumulator: [Mo, Wm, w, ihi, ilo, No, Wn, jb, jhi, jlo, Ko, Ki, k16] ->
   * [Mo, No, Ko, Wm, Wn, Ki, jb, ihi, w, ilo, jhi, jlo, k16] */
  if (!st) st = tc_split(acc, o + 2, tl->bk, 1);
  if (!st) st = tc_split(acc, o + 3, 16, 1);
  if (!st) st = split_mn(acc, o, tl);
  int acc_new[13] = {0, 3, 8, 7, 9, 1, 4, 6, 10, 11, 2, 5, 12};
  for (int i = 0; i < 13; i++) old[i] = o + i, acc_new[i] += o;
  if (!st) st = tc_reorder(acc, 13, old, acc_new);
  tc_tensor *skip[3] = {acc, av, bv};
  if (!st) st = tc_matmul_epilogue_like_out(f, out, skip, 3, false);
  /* the operand tiles, computed at Ko before P's group and thread axes
   * are merged: [Wm, Wn, Ki, jb, ihi, w, ilo, jhi, jlo, k16h, k16l] in
   * the canonical order (above), the broadcast axes first */
  int a_to[11] = {6, 0, 4, 1, 8, 7, 9, 2, 3, 5, 10};
  static const int b_to[11] = {0, 6, 4, 7, 1, 2, 3, 8, 9, 5, 10};
  switch (tc_test_hooks_get()->wgmma_layout_fault) { /* tests only */
    case 1: a_to[6] = 10, a_to[10] = 9; break; /* A's rows innermost in its core matrices */
    case 2: a_to[9] = 10, a_to[10] = 5; break; /* K / 8 innermost */
    default: break;
  }
  bool swizzle = tl->bk % 64 == 0;
  /* CUDA: the swizzled tiles by bulk tensor copies (TMA) where whole
   * boxes cover the operands of fixed shapes, each read as laid out; in
   * a ring too, each slot's tile completing on its own mbarrier
   * (src/lower/circular.c) */
  bool ring = tl->stages > 1;
  bool tma = !sym && (fam == TC_ARCH_SM || tc_test_hooks_get()->wgmma_tma_anywhere) && swizzle && !o && m % tl->bm == 0 && n % tl->bn == 0 &&
             k % tl->bk == 0 && tl->bm <= 256 && tl->bn <= 256 &&
             (k_major_input(av, 0) || mn_major_input(av, 0)) && /* (A's rows: 64 per warp group) */
             (k_major_input(bv, 1) || (tl->tn % 64 == 0 && mn_major_input(bv, 1)));
  /* in a ring of element copies, each thread copies runs of 8 elements
   * (16 bytes: one core matrix row, or one swizzled chunk): cp.async
   * where they are aligned plain loads (src/lower/circular.c) */
  int64_t v = ring ? 8 : 1;
  tc_tensor *ops[2] = {av, bv};
  int mn_tiles = 0; /* bit i: operand i staged M- / N-major */
  for (int i = 0; i < 2 && !st; i++) {
    st = tc_set_memory_type(ops[i], TC_MEM_SHARED);
    if (!st) st = tc_compute_at(ops[i], acc, o + 3);
    /* M- / N-major where the operand's rows are innermost in global
     * memory and each warp group's rows are whole 64-element runs */
    bool mn = swizzle && (i ? tl->tn : 64) % 64 == 0 && mn_major_input(ops[i], i);
    if (mn) mn_tiles |= 1 << i;
    if (!st && swizzle) st = swizzle_tile(ops[i], o + 3, i, groups, tma, v, mn);
    if (!st && !swizzle) st = tc_split(ops[i], o + 3 + 9, 8, 1);
    if (!st && !swizzle) st = tc_matmul_spread(ops[i], o + 3, 11, 7, i ? b_to : a_to, v > 1, v, groups, 128);
    if (!st && ring) st = tc_circular_buffer(ops[i], tl->stages);
  }
  /* [Mo, No, Ko, W, Ki, jb, ihi, lane, jlo, k16] */
  if (!st) st = tc_merge(acc, o + 3, o + 4);
  if (!st) st = tc_merge(acc, o + 7, o + 8);
  if (!st) st = tc_merge(acc, o + 7, o + 8);
  if (o && !st) st = tc_parallelize(acc, 0, TC_BIDZ);
  static const int acc_rel[7] = {0, 1, 3, 5, 6, 7, 8};
  if (!st) st = bind7(acc, o, acc_rel, msym, TC_UNROLL);
  if (!st) st = tc_inline_at(acc, o + 2);
  if (st) return st;
  acc->macro = TC_MACRO_WGMMA;
  int64_t smem = (tl->bm + tl->bn) * tl->bk * 2 * (ring ? tl->stages : 1);
  char rtext[320] = "";
  tc_matmul_ring_note(rtext, sizeof rtext, tl->stages, false, true, tma);
  char batch[48] = "", mtext[200], ntext[200], ktext[200];
  if (o) snprintf(batch, sizeof batch, " (%lld batches on BIDz)", (long long)tc_logical_extent(acc, 0));
  tc_sched_extent_text(f, acc->logical[o], m, mtext, sizeof mtext);
  tc_sched_extent_text(f, acc->logical[o + 1], n, ntext, sizeof ntext);
  tc_sched_extent_text(f, acc->logical[r], k, ktext, sizeof ktext);
  tc_set_schedule_note(f,
           "matmul: %s x %s x %s%s, %lldx%lld tiles on %s, %lld warp group%s (TIDy) "
           "of 128 threads (TIDx) with 64x%lld tiles each as wgmma m64n%lldk16 (%s, f32 "
           "accumulators), K in tiles of %lld with A and B staged %s%s in shared memory "
           "(%lld bytes)%s, %d epilogue op%s before the store", mtext, ntext, ktext, batch,
           (long long)tl->bm, (long long)tl->bn, msym ? "BIDx x BIDy" : "BIDy x BIDx", (long long)groups,
           groups == 1 ? "" : "s",
           (long long)tl->tn, (long long)tl->tn, tc_dtype_name(av->dtype), (long long)tl->bk,
           mn_tiles == 3 ? "M- and N-major" : mn_tiles == 2 ? "K- and N-major" : mn_tiles ? "M- and K-major" : "K-major",
           !swizzle ? "" : tma ? " (128B swizzle, by bulk tensor copies)" : " (128B swizzle)",
           (long long)smem, rtext, nepi, nepi == 1 ? "" : "s");
  return TC_OK;
}
