/* matmul_sched.c - tc_schedule_matmul: the tiled FMA schedule of a fusion
 * with one matmul and its epilogue, made of the ordinary primitives.
 *
 * With P the accumulator [M, N, rK] (tc_matmul_accumulator), A' and B'
 * its operands seen as [M, 1, K] and [1, N, K], and O the output:
 *   P  [Mo:BIDy, No:BIDx, Ko, Mt:TIDy, Nt:TIDx, Ki, TM, TN] in registers:
 *      a TM x TN tile of accumulators per thread, initialized before the
 *      Ko loop, accumulated by outer products inside Ki;
 *   A', B' in shared memory, computed at Ko (tc_compute_at: each block
 *      copies its bm x bk and bk x bn tiles per K tile); the rest of
 *      their loops merged and spread over all the block's threads; the
 *      axes they broadcast along are left serial and run once;
 *   copies of A' and B' in registers (tc_cache_after), computed at Ki:
 *      each thread's TM values of A and TN of B for one K step, which the
 *      TM x TN products read;
 *   O and every op between P and O: [Mo, No, Mt, Nt, TM, TN], inlined
 *      into one another at the thread's tile, so the epilogue works on
 *      registers and O is stored once.
 * A batch axis goes first, on BIDz. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

static int64_t pow2_at_least(int64_t v, int64_t cap) {
  int64_t p = 1;
  while (p < v && p < cap) p *= 2;
  return p;
}

/* The tiles for M x N x K of a dtype of `size` bytes. */
static tc_matmul_tiles pick_tiles(int64_t m, int64_t n, int64_t k, int size) {
  tc_matmul_tiles t;
  t.bm = pow2_at_least(m, 64), t.bn = pow2_at_least(n, 64);
  t.tm = t.bm < 4 ? t.bm : 4, t.tn = t.bn < 4 ? t.bn : 4;
  t.bk = pow2_at_least(k, size == 4 ? 8 : 16);
  return t;
}

/* Splits t's axes o (M) and o + 1 (N) into [Mo, Mt, TM, No, Nt, TN]
 * (after any axes between them and o + 2). */
static tc_status tile_mn(tc_tensor *t, int o, const tc_matmul_tiles *tl) {
  tc_status st = tc_split(t, o + 1, tl->bn, 1);
  if (!st) st = tc_split(t, o + 2, tl->tn, 1);
  if (!st) st = tc_split(t, o, tl->bm, 1);
  if (!st) st = tc_split(t, o + 1, tl->tm, 1);
  return st;
}

static tc_status bind_blocks(tc_tensor *t, int o) {
  tc_status st = TC_OK;
  if (o) st = tc_parallelize(t, 0, TC_BIDZ);
  if (!st) st = tc_parallelize(t, o, TC_BIDY);
  if (!st) st = tc_parallelize(t, o + 1, TC_BIDX);
  return st;
}

/* An operand tile (in shared memory, computed at P's Ko): its own loops
 * [a0, a1, a2, a3, a4] from position base are reordered by to[] so that
 * the last three are the tile's (rows and columns in memory order, one
 * of them in two parts: the first of those at position first), merged
 * and spread over ty x tx threads. */
static tc_status spread(tc_tensor *x, int base, const int *to, int first, int64_t ty, int64_t tx) {
  int old[5] = {base, base + 1, base + 2, base + 3, base + 4}, nw[5];
  for (int i = 0; i < 5; i++) nw[i] = base + to[i];
  tc_status st = tc_reorder(x, 5, old, nw);
  if (!st) st = tc_merge(x, base + first, base + first + 1);
  if (!st) st = tc_merge(x, base + 2, base + 3);
  if (!st) st = tc_split(x, base + 2, ty * tx, 1);
  if (!st) st = tc_split(x, base + 3, tx, 1);
  for (int i = 0; i < 3 && !st; i++) st = tc_parallelize(x, base + i, TC_SERIAL);
  if (!st) st = tc_parallelize(x, base + 3, TC_TIDY);
  if (!st) st = tc_parallelize(x, base + 4, TC_TIDX);
  return st;
}

/* Inlines t as deep into its consumers as it goes. */
static void inline_deepest(tc_tensor *t) {
  for (int p = t->nloop; p > 0; p--)
    if (tc_inline_at(t, p) == TC_OK) return;
  tc_clear_error(t->f);
}

tc_status tc_matmul_epilogue_like_out(tc_fusion *f, tc_tensor *out, tc_tensor *const *skip, int nskip) {
  int n;
  tc_op **order = tc_topo_order(f, &n);
  tc_status st = TC_OK;
  bool *operand = tc_xcalloc((size_t)f->ntensors, sizeof *operand);
  for (int i = 0; i < nskip; i++) operand[skip[i]->id] = true;
  operand[out->id] = true;
  int *pos = tc_ref_positions(f, out);
  for (int i = 0; i < n && !st; i++) {
    tc_tensor *t = order[i]->out;
    if (!operand[t->id]) st = tc_replay_like(t, out, pos + t->id * 16, "tc_schedule_matmul");
  }
  free(pos);
  if (!st) st = tc_parallelize_all_like(out);
  for (int i = n - 1; i >= 0 && !st; i--)
    if (!operand[order[i]->out->id]) inline_deepest(order[i]->out);
  free(operand);
  free(order);
  return st;
}

tc_status tc_schedule_matmul(tc_fusion *f, tc_target target, const char *arch,
                             const tc_matmul_tiles *tiles) {
  tc_clear_error(f);
  (void)arch; /* the arch's limits are checked when compiling */
  const char *call = "tc_schedule_matmul";
  tc_op *mm = NULL;
  for (int i = 0; i < f->nops; i++) {
    tc_op *op = f->ops[i];
    if (op->kind == TC_OP_REDUCE)
      return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: %s is a reduction; the matmul schedule takes "
                     "a matmul and pointwise ops after it", call, op->out->name);
    if (op->kind != TC_OP_MATMUL) continue;
    if (mm)
      return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: %s and %s are two matmuls; the matmul schedule "
                     "takes one per fusion", call, mm->out->name, op->out->name);
    mm = op;
  }
  if (!mm) return tc_fail(f, TC_ERR_ARGUMENT, "%s: the fusion has no matmul (tc_matmul)", call);
  if (f->noutputs != 1)
    return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: the fusion has %d outputs; the matmul schedule "
                   "stores one", call, f->noutputs);
  tc_tensor *acc = mm->out, *av = mm->in[0], *bv = mm->in[1], *out = f->outputs[0], *frag[2];
  int r = acc->nlogical - 1, o = r - 2;
  if (out == acc || out == av || out == bv)
    return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: the output %s is the matmul's %s; output the tensor "
                   "tc_matmul returns (or ops after it)", call, out->name,
                   out == acc ? "accumulator" : "operand view");
  for (int k = 0; k < 2; k++)
    if (!mm->in[k]->def->in[0]->is_input)
      return tc_fail(f, TC_ERR_UNSUPPORTED,
                     "%s: the matmul's operand %s is computed in the fusion (by %s); the matmul "
                     "schedule reads its operands from fusion inputs (a tc_permute of one is read "
                     "in place)", call, mm->in[k]->def->in[0]->name, mm->in[k]->def->in[0]->name);
  int n;
  tc_op **order = tc_topo_order(f, &n);
  tc_status st = TC_OK;
  int nepi = 0; /* the ops after the matmul, broadcasts of their operands aside */
  for (int i = 0; i < n && !st; i++) {
    tc_tensor *t = order[i]->out;
    if (t == acc || t == av || t == bv) continue;
    if (t->nlogical != r)
      st = tc_fail(f, TC_ERR_UNSUPPORTED,
                   "%s: %s has rank %d but the matmul's result has rank %d; an epilogue op maps "
                   "onto the result's elements (broadcast bias vectors to the result's rank with "
                   "tc_broadcast)", call, t->name, t->nlogical, r);
    nepi += t->def->kind != TC_OP_BROADCAST;
  }
  free(order);
  if (st) return st;
  int64_t m = tc_logical_extent(acc, o), nn = tc_logical_extent(acc, o + 1);
  int64_t kk = f->g.axes[acc->logical[r]].extent;
  tc_matmul_tiles tl = tiles ? *tiles : pick_tiles(m, nn, kk, (int)tc_dtype_size(av->dtype));
  if (tl.bm < 1 || tl.bn < 1 || tl.bk < 1 || tl.tm < 1 || tl.tn < 1 || tl.bm % tl.tm ||
      tl.bn % tl.tn)
    return tc_fail(f, TC_ERR_ARGUMENT,
                   "%s: tiles %lldx%lldx%lld with %lldx%lld per thread do not nest; give extents "
                   ">= 1 with tm dividing bm and tn dividing bn", call, (long long)tl.bm,
                   (long long)tl.bn, (long long)tl.bk, (long long)tl.tm, (long long)tl.tn);
  if (tl.macro == TC_MACRO_MMA_M16N8K16) return tc_schedule_matmul_mma(f, target, mm, out, &tl, nepi);
  if (tl.macro != TC_MACRO_FMA)
    return tc_fail(f, TC_ERR_ARGUMENT, "%s: unknown macro %d; give TC_MACRO_FMA or "
                   "TC_MACRO_MMA_M16N8K16", call, tl.macro);
  /* (nothing is changed before this point) each thread's fragments of the
   * operands, in registers */
  if (!(frag[0] = tc_cache_after(av)) || !(frag[1] = tc_cache_after(bv))) return TC_ERR_SCHEDULE;
  int64_t ty = tl.bm / tl.tm, tx = tl.bn / tl.tn;
  /* the output: [Mo, No, Mt, Nt, TM, TN] */
  st = tile_mn(out, o, &tl);
  int mn_old[6], mn_new[6] = {0, 2, 4, 1, 3, 5};
  for (int i = 0; i < 6; i++) mn_old[i] = o + i, mn_new[i] += o;
  if (!st) st = tc_reorder(out, 6, mn_old, mn_new);
  if (!st) st = bind_blocks(out, o);
  if (!st) st = tc_parallelize(out, o + 2, TC_TIDY);
  if (!st) st = tc_parallelize(out, o + 3, TC_TIDX);
  if (!st) st = tc_parallelize(out, o + 4, TC_UNROLL);
  if (!st) st = tc_parallelize(out, o + 5, TC_UNROLL);
  /* the accumulator: [Mo, No, Ko, Mt, Nt, Ki, TM, TN] */
  if (!st) st = tc_split(acc, o + 2, tl.bk, 1);
  if (!st) st = tile_mn(acc, o, &tl);
  int acc_old[8], acc_new[8] = {0, 3, 6, 1, 4, 7, 2, 5};
  for (int i = 0; i < 8; i++) acc_old[i] = o + i, acc_new[i] += o;
  if (!st) st = tc_reorder(acc, 8, acc_old, acc_new);
  if (!st) st = bind_blocks(acc, o);
  if (!st) st = tc_parallelize(acc, o + 3, TC_TIDY);
  if (!st) st = tc_parallelize(acc, o + 4, TC_TIDX);
  if (!st) st = tc_parallelize(acc, o + 6, TC_UNROLL);
  if (!st) st = tc_parallelize(acc, o + 7, TC_UNROLL);
  tc_tensor *skip[5] = {acc, av, bv, frag[0], frag[1]};
  if (!st) st = tc_matmul_epilogue_like_out(f, out, skip, 5);
  if (!st) st = tc_inline_at(acc, o + 2);
  /* the operand tiles */
  static const int a_to[5] = {2, 0, 4, 3, 1}, b_to[5] = {0, 3, 2, 1, 4};
  tc_tensor *ops[2] = {av, bv};
  for (int k = 0; k < 2 && !st; k++) {
    /* the fragment: tm (tn) values per K step, read by the outer product */
    st = tc_compute_at(frag[k], acc, o + 6);
    for (int i = o + 6; i < tc_tensor_nloop(frag[k]) && !st; i++) st = tc_parallelize(frag[k], i, TC_UNROLL);
    if (!st) st = tc_set_memory_type(ops[k], TC_MEM_SHARED);
    if (!st) st = tc_compute_at(ops[k], frag[k], o + 3);
    if (!st) st = spread(ops[k], o + 3, k ? b_to : a_to, k ? 3 : 2, ty, tx);
  }
  if (st) return st;
  int64_t smem = (tl.bm + tl.bn) * tl.bk * (int64_t)tc_dtype_size(av->dtype);
  char batch[48] = "";
  if (o) snprintf(batch, sizeof batch, " (%lld batches on BIDz)", (long long)tc_logical_extent(acc, 0));
  snprintf(f->sched_note, sizeof f->sched_note,
           "matmul: %lld x %lld x %lld%s, %lldx%lld tiles on BIDy x BIDx, %lld x %lld threads "
           "(TIDy x TIDx) with %lldx%lld f32 accumulators each (FMA outer products), K in tiles "
           "of %lld with A and B staged in shared memory (%lld bytes), %d epilogue op%s before "
           "the store", (long long)m, (long long)nn, (long long)kk, batch, (long long)tl.bm,
           (long long)tl.bn, (long long)ty, (long long)tx, (long long)tl.tm, (long long)tl.tn,
           (long long)tl.bk, (long long)smem, nepi, nepi == 1 ? "" : "s");
  return TC_OK;
}
