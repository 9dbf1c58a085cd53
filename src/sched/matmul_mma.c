/* matmul_mma.c - the matmul schedule whose products are a warp- or
 * wavefront-wide matrix instruction (tc_matmul_tiles.macro other than
 * TC_MACRO_FMA), described by its tc_frag_shape (sched.h); the shape of
 * NVIDIA's mma.sync m16n8k16 is here, AMD's MFMA in matmul_mfma.c.
 *
 * The PTX ISA's accumulator layout of one 16 x 8 tile (C/D fragment:
 * row groupID + 8 * (v / 2), column 2 * threadID_in_group + v % 2 for
 * value v of lane 4 * groupID + threadID_in_group) is a plain split of M
 * and N: M16 = [ihi 2, ilo 8], N8 = [jhi 4, jlo 2], the lane is
 * merge(ilo, jhi) on TIDx and the lane's four values are [ihi, jlo]
 * (m_pre 2, m_lane 8, n_lane 4, n_post 2).  In general, with P the
 * accumulator [M, N, rK] and the instruction's pieces (those of extent 1
 * absent):
 *   P [Mo:BIDy, No:BIDx, Ko, W:TIDy, Ki, RM:U, RN:U, m_pre:U, lane:TIDx,
 *      m_post:U, n_post:U, kk]
 *     W the warps (merge of the warps along M and N), RM x RN the
 *     instruction tiles of a warp, kk the instruction's K: the lowering
 *     turns the statement inside [m_pre, m_post, n_post, kk] into one
 *     warp-wide instruction over fragments it loads from shared memory
 *     (src/lower/mma.c);
 *   A', B' in shared memory, computed at Ko, spread over all the threads;
 *   O and the epilogue: [Mo, No, W, RM, RN, m_pre, lane, m_post, n_post],
 *     so each lane applies the epilogue to its accumulators and stores
 *     them at their (row, column) of the layout.
 * A batch axis goes first, on BIDz. */
#include <stdio.h>

#include "sched.h"

static const tc_frag_shape mma_m16n8k16 = {TC_MACRO_MMA_M16N8K16, "mma.sync m16n8k16", "warp",
                                           TC_ARCH_SM, 32, 16, 8, 16, 2, 8, 1, 4, 2};

const tc_frag_shape *tc_frag_shape_of(int macro) {
  return macro == TC_MACRO_MMA_M16N8K16 ? &mma_m16n8k16 : tc_mfma_frag_shape(macro);
}

/* The labels of the axes the schedule makes. */
enum { MO, WM, RM, MPRE, MLANE, MPOST, NO, WN, RN, NLANE, NPOST, KO, KI, KK, NLAB };

/* Whether the piece of label l exists (the instruction's of extent 1 do not). */
static bool has(const tc_frag_shape *sh, int l) {
  return !((l == MPRE && sh->m_pre == 1) || (l == MPOST && sh->m_post == 1) ||
           (l == NPOST && sh->n_post == 1));
}

/* Appends the existing labels of want[0..n) to lab (*nl). */
static void labels(const tc_frag_shape *sh, const int *want, int n, int *lab, int *nl) {
  for (int i = 0; i < n; i++)
    if (has(sh, want[i])) lab[(*nl)++] = want[i];
}

/* Splits M (axis o) and N (axis o + 1) of t into
 * [Mo, Wm, RM, m_pre, m_lane, m_post, No, Wn, RN, n_lane, n_post] at o
 * (the pieces of extent 1 absent). */
static tc_status split_mn(tc_tensor *t, int o, const tc_matmul_tiles *tl, const tc_frag_shape *sh) {
  tc_status st = tc_split(t, o + 1, tl->bn, 1);
  if (!st) st = tc_split(t, o + 2, tl->tn, 1);
  if (!st) st = tc_split(t, o + 3, sh->n, 1);
  if (!st && sh->n_post > 1) st = tc_split(t, o + 4, sh->n_post, 1);
  if (!st) st = tc_split(t, o, tl->bm, 1);
  if (!st) st = tc_split(t, o + 1, tl->tm, 1);
  if (!st) st = tc_split(t, o + 2, sh->m, 1);
  if (!st && sh->m_post > 1) st = tc_split(t, o + 3, sh->m_post, 1);
  if (!st && sh->m_pre > 1) st = tc_split(t, o + 3, sh->m_lane, 1);
  return st;
}

/* Reorders t's axes from base, labelled from[0..n), into the order of
 * the labels to[0..n). */
static tc_status reorder(tc_tensor *t, int base, const int *from, const int *to, int n) {
  int old[NLAB], nw[NLAB];
  for (int i = 0; i < n; i++) {
    old[i] = base + i;
    for (int j = 0; j < n; j++)
      if (to[j] == from[i]) nw[i] = base + j;
  }
  return tc_reorder(t, n, old, nw);
}

/* Binds t's axes from base, labelled lab[0..n) (W and the lane merged):
 * Mo BIDy, No BIDx, W TIDy, the lane TIDx, the tiles and values unrolled;
 * with M a size variable (msym) Mo BIDx and No BIDy, so that the grid's
 * x extent, which has no 65535 limit, is ceil(M / bm) (as the FMA
 * schedule binds it). */
static tc_status bind(tc_tensor *t, int base, const int *lab, int n, bool msym) {
  tc_status st = TC_OK;
  for (int i = 0; i < n && !st; i++) {
    int l = lab[i];
    tc_ptype p = l == MO ? (msym ? TC_BIDX : TC_BIDY) : l == NO ? (msym ? TC_BIDY : TC_BIDX)
               : l == WM ? TC_TIDY : l == MLANE ? TC_TIDX
               : l == RM || l == RN || l == MPRE || l == MPOST || l == NPOST ? TC_UNROLL : TC_SERIAL;
    if (p != TC_SERIAL) st = tc_parallelize(t, base + i, p);
  }
  return st;
}

/* lab[0..*n) without the labels WN and NLANE (merged into WM and MLANE). */
static void merged(int *lab, int *n) {
  int k = 0;
  for (int i = 0; i < *n; i++)
    if (lab[i] != WN && lab[i] != NLANE) lab[k++] = lab[i];
  *n = k;
}

/* (sched.h) */
tc_status tc_matmul_spread(tc_tensor *x, int base, int n, int nown, const int *to, int ncols, int64_t v,
                           int64_t groups, int64_t lanes) {
  int old[16], nw[16];
  for (int i = 0; i < n; i++) old[i] = base + i, nw[i] = base + to[i];
  tc_status st = tc_reorder(x, n, old, nw);
  int c0 = base + n - nown;
  if (v > 1) {
    int c = c0 + nown - ncols;
    for (int i = 0; i < ncols - 1 && !st; i++) st = tc_merge(x, c, c + 1);
    if (!st) st = tc_split(x, c, v, 1);
    for (int i = 0; i < nown - ncols && !st; i++) st = tc_merge(x, c0, c0 + 1);
  } else {
    for (int i = 0; i < nown - 1 && !st; i++) st = tc_merge(x, c0, c0 + 1);
  }
  if (!st) st = tc_split(x, c0, groups * lanes, 1);
  if (!st) st = tc_split(x, c0 + 1, lanes, 1);
  if (!st) st = tc_parallelize(x, c0 + 1, TC_TIDY);
  if (!st) st = tc_parallelize(x, c0 + 2, TC_TIDX);
  if (!st && v > 1) st = tc_parallelize(x, c0 + 3, TC_UNROLL);
  return st;
}

/* An operand tile in shared memory, computed at P's Ko: its axes past
 * base, labelled from[0..n) as P's, are reordered so that the nb it
 * broadcasts along (bcast) come first (left serial: they run once) and
 * its own (own, in the order of its rows and columns, the last ncols of
 * them its columns) follow, and spread (tc_matmul_spread). */
static tc_status spread(tc_tensor *x, int base, const int *from, int n, const int *bcast, int nb,
                        const int *own, int no, int ncols, int64_t v, int64_t warps, int64_t lanes) {
  int to[NLAB];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < nb + no; j++)
      if ((j < nb ? bcast[j] : own[j - nb]) == from[i]) to[i] = j;
  return tc_matmul_spread(x, base, n, no, to, ncols, v, warps, lanes);
}

tc_status tc_schedule_matmul_frag(tc_fusion *f, tc_target target, tc_op *mm, tc_tensor *out,
                                  const tc_matmul_tiles *tl, int nepi, const tc_frag_shape *sh) {
  const char *call = "tc_schedule_matmul";
  tc_tensor *acc = mm->out, *av = mm->in[0], *bv = mm->in[1];
  int r = acc->nlogical - 1, o = r - 2;
  int64_t m = tc_logical_extent(acc, o), n = tc_logical_extent(acc, o + 1);
  int64_t k = f->g.axes[acc->logical[r]].extent;
  /* M, N or K a size variable (docs/dynamic.md): only Mo (No, Ko)
   * depends on it, the rest of its splits are the tiles' fixed extents */
  bool msym = tc_dg_is_symbolic(&f->g, acc->logical[o]);
  tc_arch_family fam = tc_target_info_of(target).family;
  bool nv = sh->family == TC_ARCH_SM;
  if (fam != TC_ARCH_NONE && fam != sh->family)
    return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: %s is an %s instruction; %s has no %s here (the "
                   "OpenCL target emulates it): use %s", call, sh->name, nv ? "NVIDIA" : "AMD",
                   tc_target_name(target), sh->name, nv
                                 ? "the FMA macro or MFMA (TC_MACRO_MFMA_32X32X8, _16X16X16)"
                                 : "the FMA macro or mma.sync (TC_MACRO_MMA_M16N8K16)");
  if (av->dtype != TC_F16 && av->dtype != TC_BF16)
    return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: %s multiplies f16 or bf16 operands, not %s; use "
                   "the FMA macro (TC_MACRO_FMA)", call, sh->name, tc_dtype_name(av->dtype));
  if (tl->tm % sh->m || tl->tn % sh->n || tl->bk % sh->k)
    return tc_fail(f, TC_ERR_ARGUMENT, "%s: with %s a %s's tile (tm x tn = %lld x %lld) must be "
                   "a multiple of %lld x %lld and the K tile (bk = %lld) of %lld", call, sh->name,
                   sh->unit, (long long)tl->tm, (long long)tl->tn, (long long)sh->m,
                   (long long)sh->n, (long long)tl->bk, (long long)sh->k);
  int64_t warps = (tl->bm / tl->tm) * (tl->bn / tl->tn);
  if (warps * sh->lanes > 1024)
    return tc_fail(f, TC_ERR_ARGUMENT, "%s: %lld %ss of %lld lanes exceed 1024 threads per block",
                   call, (long long)warps, sh->unit, (long long)sh->lanes);
  static const int mn_all[11] = {MO, WM, RM, MPRE, MLANE, MPOST, NO, WN, RN, NLANE, NPOST};
  static const int out_all[11] = {MO, NO, WM, WN, RM, RN, MPRE, MLANE, NLANE, MPOST, NPOST};
  static const int acc_all[14] = {MO, NO, KO, WM, WN, KI, RM, RN, MPRE, MLANE, NLANE, MPOST, NPOST, KK};
  static const int k_all[3] = {KO, KI, KK};
  int mn[NLAB], nmn = 0, ol[NLAB], nol = 0, al[NLAB], nal = 0, ak[NLAB], nak = 0;
  labels(sh, mn_all, 11, mn, &nmn);
  labels(sh, out_all, 11, ol, &nol);
  labels(sh, acc_all, 14, al, &nal);
  labels(sh, mn_all, 11, ak, &nak);
  labels(sh, k_all, 3, ak, &nak);
  /* the output: [Mo, No, W, RM, RN, m_pre, lane, m_post, n_post] */
  tc_status st = split_mn(out, o, tl, sh);
  if (!st) st = reorder(out, o, mn, ol, nol);
  if (!st) st = tc_merge(out, o + 2, o + 3);                   /* W */
  int lane = 5 + has(sh, MPRE);
  if (!st) st = tc_merge(out, o + lane, o + lane + 1);         /* the lane */
  merged(ol, &nol);
  if (o && !st) st = tc_parallelize(out, 0, TC_BIDZ);
  if (!st) st = bind(out, o, ol, nol, msym);
  /* the accumulator: [Mo, No, Ko, Wm, Wn, Ki, RM, RN, m_pre, m_lane, n_lane, m_post, n_post, kk] */
  if (!st) st = tc_split(acc, o + 2, tl->bk, 1);
  if (!st) st = tc_split(acc, o + 3, sh->k, 1);
  if (!st) st = split_mn(acc, o, tl, sh);
  if (!st) st = reorder(acc, o, ak, al, nal);
  tc_tensor *skip[3] = {acc, av, bv};
  if (!st) st = tc_matmul_epilogue_like_out(f, out, skip, 3, false);
  /* the operand tiles, computed at Ko before P's warp and lane axes are
   * merged (so that no axis of theirs mixes M and N) */
  static const int a_b[4] = {WN, RN, NLANE, NPOST}, a_o[7] = {WM, RM, MPRE, MLANE, MPOST, KI, KK};
  static const int b_b[5] = {WM, RM, MPRE, MLANE, MPOST}, b_o[6] = {KI, KK, WN, RN, NLANE, NPOST};
  /* B [N, K] (K innermost) where K is innermost in its memory (B given
   * transposed, NHWC's channels through a convolution's view; mma.sync
   * reads it by ldmatrix without .trans): its copies run along K */
  static const int b_ok[6] = {WN, RN, NLANE, NPOST, KI, KK};
  bool bk_inner = nv && tc_matmul_operand_k_inner(bv, 1);
  int ab[NLAB], nab = 0, ao[NLAB], nao = 0, bb[NLAB], nbb = 0, bo[NLAB], nbo = 0;
  labels(sh, a_b, 4, ab, &nab), labels(sh, a_o, 7, ao, &nao);
  labels(sh, b_b, 5, bb, &nbb), labels(sh, bk_inner ? b_ok : b_o, 6, bo, &nbo);
  tc_tensor *ops[2] = {av, bv};
  for (int i = 0; i < 2 && !st; i++) {
    st = tc_set_memory_type(ops[i], TC_MEM_SHARED);
    if (!st) st = tc_compute_at(ops[i], acc, o + 3);
    /* in a ring, each thread copies runs of 16 bytes along the tile's
     * columns (K for A, N for B) where they divide them: cp.async */
    int64_t cols = i && !bk_inner ? tl->bn : tl->bk, v = tl->stages > 1 ? 8 : 1;
    while (v > 1 && cols % v) v /= 2;
    if (!st) st = i ? spread(ops[i], o + 3, al + 3, nal - 3, bb, nbb, bo, nbo, bk_inner ? 2 : nbo - 2, v, warps, sh->lanes)
                    : spread(ops[i], o + 3, al + 3, nal - 3, ab, nab, ao, nao, 2, v, warps, sh->lanes);
    if (!st && tl->stages > 1) st = tc_circular_buffer(ops[i], tl->stages);
  }
  /* [Mo, No, Ko, W, Ki, RM, RN, m_pre, lane, m_post, n_post, kk] */
  if (!st) st = tc_merge(acc, o + 3, o + 4);
  if (!st) st = tc_merge(acc, o + 2 + lane, o + 3 + lane);
  merged(al, &nal);
  if (o && !st) st = tc_parallelize(acc, 0, TC_BIDZ);
  if (!st) st = bind(acc, o, al, nal, msym);
  if (!st) st = tc_inline_at(acc, o + 2);
  if (st) return st;
  acc->macro = sh->macro;
  int64_t smem = (tl->bm + tl->bn) * tl->bk * 2 * (tl->stages > 1 ? tl->stages : 1);
  char ring[160] = "";
  tc_matmul_ring_note(ring, sizeof ring, tl->stages, false, false, false);
  char batch[48] = "";
  if (o) snprintf(batch, sizeof batch, " (%lld batches on BIDz)", (long long)tc_logical_extent(acc, 0));
  char mtext[200], ntext[200], ktext[200]; /* a size variable: its name and bound */
  tc_sched_extent_text(f, acc->logical[o], m, mtext, sizeof mtext);
  tc_sched_extent_text(f, acc->logical[o + 1], n, ntext, sizeof ntext);
  tc_sched_extent_text(f, acc->logical[r], k, ktext, sizeof ktext);
  tc_set_schedule_note(f,
           "matmul: %s x %s x %s%s, %lldx%lld tiles on %s, %lld %ss (TIDy) of "
           "%lld lanes (TIDx) with %lldx%lld tiles each as %s (%s, f32 "
           "accumulators), K in tiles of %lld with A and B staged in shared memory (%lld bytes)%s, "
           "%d epilogue op%s before the store", mtext, ntext, ktext, batch,
           (long long)tl->bm, (long long)tl->bn, msym ? "BIDx x BIDy" : "BIDy x BIDx", (long long)warps, sh->unit, (long long)sh->lanes,
           (long long)tl->tm, (long long)tl->tn, sh->name, tc_dtype_name(av->dtype),
           (long long)tl->bk, (long long)smem, ring, nepi, nepi == 1 ? "" : "s");
  return TC_OK;
}
