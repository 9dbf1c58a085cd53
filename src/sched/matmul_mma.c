/* matmul_mma.c - the matmul schedule whose products are NVIDIA's warp-level
 * mma.sync m16n8k16 (tc_matmul_tiles.macro == TC_MACRO_MMA_M16N8K16).
 *
 * The PTX ISA's accumulator layout of one 16 x 8 tile (C/D fragment:
 * row groupID + 8 * (v / 2), column 2 * threadID_in_group + v % 2 for
 * value v of lane 4 * groupID + threadID_in_group) is a plain split of M
 * and N: M16 = [ihi 2, ilo 8], N8 = [jhi 4, jlo 2], the lane is
 * merge(ilo, jhi) on TIDx and the lane's four values are [ihi, jlo].  So
 * with P the accumulator [M, N, rK]:
 *   P [Mo:BIDy, No:BIDx, Ko, W:TIDy, Ki, RM:U, RN:U, ihi:U, lane:TIDx, jlo:U, k16]
 *     W the warps (merge of the warps along M and N), RM x RN the 16 x 8
 *     tiles of a warp, k16 the macro's K: the lowering turns the
 *     statement inside [ihi, jlo, k16] into one warp-wide mma over
 *     fragments it loads from shared memory (src/lower/mma.c);
 *   A', B' in shared memory, computed at Ko, spread over all the threads;
 *   O and the epilogue: [Mo, No, W, RM, RN, ihi, lane, jlo], so each lane
 *     applies the epilogue to its accumulators and stores them at their
 *     (row, column) of the layout.
 * A batch axis goes first, on BIDz. */
#include <stdio.h>

#include "sched.h"

/* Splits M (axis o) and N (axis o + 1) of t into
 * [Mo, Wm, RM, ihi, ilo, No, Wn, RN, jhi, jlo] at o. */
static tc_status split_mn(tc_tensor *t, int o, const tc_matmul_tiles *tl) {
  tc_status st = tc_split(t, o + 1, tl->bn, 1);
  if (!st) st = tc_split(t, o + 2, tl->tn, 1);
  if (!st) st = tc_split(t, o + 3, 8, 1);
  if (!st) st = tc_split(t, o + 4, 2, 1);
  if (!st) st = tc_split(t, o, tl->bm, 1);
  if (!st) st = tc_split(t, o + 1, tl->tm, 1);
  if (!st) st = tc_split(t, o + 2, 16, 1);
  if (!st) st = tc_split(t, o + 3, 8, 1);
  return st;
}

static tc_status bind(tc_tensor *t, int n, const int *pos, const tc_ptype *p) {
  tc_status st = TC_OK;
  for (int i = 0; i < n && !st; i++) st = tc_parallelize(t, pos[i], p[i]);
  return st;
}

tc_status tc_matmul_spread(tc_tensor *x, int base, int n, int nown, const int *to, int64_t groups,
                           int64_t lanes) {
  int old[16], nw[16];
  for (int i = 0; i < n; i++) old[i] = base + i, nw[i] = base + to[i];
  tc_status st = tc_reorder(x, n, old, nw);
  int own = base + n - nown;
  for (int i = 0; i < nown - 1 && !st; i++) st = tc_merge(x, own, own + 1);
  if (!st) st = tc_split(x, own, groups * lanes, 1);
  if (!st) st = tc_split(x, own + 1, lanes, 1);
  if (!st) st = tc_parallelize(x, own + 1, TC_TIDY);
  if (!st) st = tc_parallelize(x, own + 2, TC_TIDX);
  return st;
}

tc_status tc_schedule_matmul_mma(tc_fusion *f, tc_target target, tc_op *mm, tc_tensor *out,
                                 const tc_matmul_tiles *tl, int nepi) {
  const char *call = "tc_schedule_matmul";
  tc_tensor *acc = mm->out, *av = mm->in[0], *bv = mm->in[1];
  int r = acc->nlogical - 1, o = r - 2;
  int64_t m = tc_logical_extent(acc, o), n = tc_logical_extent(acc, o + 1);
  int64_t k = f->g.axes[acc->logical[r]].extent;
  if (target == TC_TARGET_HIP)
    return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: mma.sync m16n8k16 is an NVIDIA instruction; hip "
                   "has no mma macro here (MFMA is not an op type of the matmul yet): use the FMA "
                   "macro", call);
  if (av->dtype != TC_F16 && av->dtype != TC_BF16)
    return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: mma.sync m16n8k16 multiplies f16 or bf16 "
                   "operands, not %s; use the FMA macro (TC_MACRO_FMA)", call,
                   tc_dtype_name(av->dtype));
  if (tl->tm % 16 || tl->tn % 8 || tl->bk % 16)
    return tc_fail(f, TC_ERR_ARGUMENT, "%s: with mma.sync m16n8k16 a warp's tile (tm x tn = "
                   "%lld x %lld) must be a multiple of 16 x 8 and the K tile (bk = %lld) of 16",
                   call, (long long)tl->tm, (long long)tl->tn, (long long)tl->bk);
  int64_t warps = (tl->bm / tl->tm) * (tl->bn / tl->tn);
  if (warps * 32 > 1024)
    return tc_fail(f, TC_ERR_ARGUMENT, "%s: %lld warps of 32 lanes exceed 1024 threads per block",
                   call, (long long)warps);
  /* the output: [Mo, Wm, RM, ihi, ilo, No, Wn, RN, jhi, jlo] ->
   * [Mo, No, W, RM, RN, ihi, lane, jlo] */
  tc_status st = split_mn(out, o, tl);
  int old10[10], out_new[10] = {0, 2, 4, 6, 7, 1, 3, 5, 8, 9};
  for (int i = 0; i < 10; i++) old10[i] = o + i, out_new[i] += o;
  if (!st) st = tc_reorder(out, 10, old10, out_new);
  if (!st) st = tc_merge(out, o + 2, o + 3);        /* W */
  if (!st) st = tc_merge(out, o + 6, o + 7);        /* lane = (ilo, jhi) */
  if (o && !st) st = tc_parallelize(out, 0, TC_BIDZ);
  int op_[8] = {o, o + 1, o + 2, o + 3, o + 4, o + 5, o + 6, o + 7};
  static const tc_ptype out_p[8] = {TC_BIDY, TC_BIDX, TC_TIDY, TC_UNROLL, TC_UNROLL, TC_UNROLL,
                                    TC_TIDX, TC_UNROLL};
  if (!st) st = bind(out, 8, op_, out_p);
  /* the accumulator: [Mo, Wm, RM, ihi, ilo, No, Wn, RN, jhi, jlo, Ko, Ki, k16] ->
   * [Mo, No, Ko, Wm, Wn, Ki, RM, RN, ihi, ilo, jhi, jlo, k16] */
  if (!st) st = tc_split(acc, o + 2, tl->bk, 1);
  if (!st) st = tc_split(acc, o + 3, 16, 1);
  if (!st) st = split_mn(acc, o, tl);
  int old13[13], acc_new[13] = {0, 3, 6, 8, 9, 1, 4, 7, 10, 11, 2, 5, 12};
  for (int i = 0; i < 13; i++) old13[i] = o + i, acc_new[i] += o;
  if (!st) st = tc_reorder(acc, 13, old13, acc_new);
  tc_tensor *skip[3] = {acc, av, bv};
  if (!st) st = tc_matmul_epilogue_like_out(f, out, skip, 3, false);
  /* the operand tiles, computed at Ko before P's warp and lane axes are
   * merged (so that no axis of theirs mixes M and N) */
  static const int a_to[10] = {4, 0, 8, 5, 1, 6, 7, 2, 3, 9}, b_to[10] = {0, 6, 4, 1, 7, 2, 3, 8, 9, 5};
  tc_tensor *ops[2] = {av, bv};
  for (int i = 0; i < 2 && !st; i++) {
    st = tc_set_memory_type(ops[i], TC_MEM_SHARED);
    if (!st) st = tc_compute_at(ops[i], acc, o + 3);
    if (!st) st = tc_matmul_spread(ops[i], o + 3, 10, 6, i ? b_to : a_to, warps, 32);
  }
  /* [Mo, No, Ko, W, Ki, RM, RN, ihi, lane, jlo, k16] */
  if (!st) st = tc_merge(acc, o + 3, o + 4);
  if (!st) st = tc_merge(acc, o + 8, o + 9);
  if (o && !st) st = tc_parallelize(acc, 0, TC_BIDZ);
  int ap[8] = {o, o + 1, o + 3, o + 5, o + 6, o + 7, o + 8, o + 9};
  static const tc_ptype acc_p[8] = {TC_BIDY, TC_BIDX, TC_TIDY, TC_UNROLL, TC_UNROLL, TC_UNROLL,
                                    TC_TIDX, TC_UNROLL};
  if (!st) st = bind(acc, 8, ap, acc_p);
  if (!st) st = tc_inline_at(acc, o + 2);
  if (st) return st;
  acc->macro = TC_MACRO_MMA_M16N8K16;
  int64_t smem = (tl->bm + tl->bn) * tl->bk * 2;
  char batch[48] = "";
  if (o) snprintf(batch, sizeof batch, " (%lld batches on BIDz)", (long long)tc_logical_extent(acc, 0));
  tc_set_schedule_note(f,
           "matmul: %lld x %lld x %lld%s, %lldx%lld tiles on BIDy x BIDx, %lld warps (TIDy) of "
           "32 lanes (TIDx) with %lldx%lld tiles each as mma.sync m16n8k16 (%s, f32 "
           "accumulators), K in tiles of %lld with A and B staged in shared memory (%lld bytes), "
           "%d epilogue op%s before the store", (long long)m, (long long)n, (long long)k, batch,
           (long long)tl->bm, (long long)tl->bn, (long long)warps, (long long)tl->tm,
           (long long)tl->tn, tc_dtype_name(av->dtype), (long long)tl->bk, (long long)smem, nepi,
           nepi == 1 ? "" : "s");
  return TC_OK;
}
