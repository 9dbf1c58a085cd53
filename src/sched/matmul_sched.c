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

#include "../target/target.h"
#include "sched.h"

/* The longest axis a reduction of the result may reduce: one block
 * covers it (64 threads of 16 accumulators each at most). */
#define TC_MATMUL_MAX_REDUCED 1024
/* The most ops between a fusion input and a matmul operand. */
#define TC_MATMUL_MAX_PROLOGUE 8

static int64_t pow2_at_least(int64_t v, int64_t cap) {
  int64_t p = 1;
  while (p < v && p < cap) p *= 2;
  return p;
}

/* (sched.h) With a reduction the block tile covers the reduced axis (up
 * to TC_MATMUL_MAX_REDUCED), with 16 to 64 threads along it. */
tc_matmul_tiles tc_matmul_auto_tiles(int64_t m, int64_t n, int64_t k, int size, int rax) {
  tc_matmul_tiles t = {0};
  t.bm = pow2_at_least(m, rax == 0 ? TC_MATMUL_MAX_REDUCED : 64);
  t.bn = pow2_at_least(n, rax == 1 ? TC_MATMUL_MAX_REDUCED : 64);
  t.tm = t.bm < 4 ? t.bm : t.bm > 256 ? t.bm / 64 : 4;
  t.tn = t.bn < 4 ? t.bn : t.bn > 256 ? t.bn / 64 : 4;
  t.bk = pow2_at_least(k, size == 4 ? 8 : 16);
  return t;
}

/* The mma.sync tiles the scheduler chooses (CUDA sm_80+, f16 / bf16, no
 * reduction of the result or prologue): block tiles of the smallest power
 * of two at least M (N), from 16 (8) to 128; 2 x 2 warps of half of them
 * each (one warp along an axis of 16 (8)); K tiles of 32 (16 for K up to
 * 16); rings of 3 stages where there are 3 K tiles or more and they fit
 * in smem_max (0: unknown), else 2. */
static tc_matmul_tiles pick_mma_tiles(int64_t m, int64_t n, int64_t k, int64_t smem_max) {
  tc_matmul_tiles t = {0};
  t.macro = TC_MACRO_MMA_M16N8K16;
  t.bm = pow2_at_least(m, 128), t.bn = pow2_at_least(n, 128);
  if (t.bm < 16) t.bm = 16;
  if (t.bn < 8) t.bn = 8;
  t.tm = t.bm >= 32 ? t.bm / 2 : t.bm;
  t.tn = t.bn >= 16 ? t.bn / 2 : t.bn;
  t.bk = k > 16 ? 32 : 16;
  t.stages = (k + t.bk - 1) / t.bk >= 3 ? 3 : 2;
  if (smem_max && (t.bm + t.bn) * t.bk * 2 * t.stages > smem_max) t.stages = 2;
  return t;
}

/* The wgmma tiles the scheduler chooses (CUDA sm_90a, f16 / bf16, M and N
 * at least 64, no reduction of the result or prologue): warp groups of 64
 * x tn with tn the smallest power of two at least N, from 64 to 256; two
 * along M (bm 128) where M is at least 128; K tiles of 64 (the 128B
 * swizzle) where K is over 32, else 32 or 16; rings of 3 stages, or 2
 * where fewer K tiles or smem_max (0: unknown) say so.  (3, not 4: on an
 * H100 at 8192^3 bf16 the 128x256 tiles took 2.25 ms in a ring of 3 and
 * 2.56 ms in a ring of 4, bench/RESULTS.md; while each K tile's wgmma
 * waits for its group to finish, copies further ahead only cost shared
 * memory.) */
static tc_matmul_tiles pick_wgmma_tiles(int64_t m, int64_t n, int64_t k, int64_t smem_max) {
  tc_matmul_tiles t = {0};
  t.macro = TC_MACRO_WGMMA;
  t.tm = 64, t.bm = m >= 128 ? 128 : 64;
  t.tn = t.bn = n > 128 ? 256 : n > 64 ? 128 : 64;
  t.bk = k > 32 ? 64 : k > 16 ? 32 : 16;
  int64_t ktiles = (k + t.bk - 1) / t.bk;
  t.stages = ktiles >= 3 ? 3 : 2;
  while (t.stages > 2 && smem_max && (t.bm + t.bn) * t.bk * 2 * t.stages > smem_max) t.stages--;
  return t;
}

/* (sched.h) */
bool tc_matmul_operand_k_inner(const tc_tensor *v, int i) {
  const tc_op *d = v->def;
  if (!d || d->kind != TC_OP_BROADCAST || !d->in[0]->is_input || d->in[0]->nlogical != 2) return false;
  const tc_tensor *x = d->in[0];
  int rows = d->perm[i ? 1 : 0], kax = d->perm[2]; /* x's axes of the operand's rows and K */
  if (rows < 0 || kax < 0) return false;
  if (!x->view) return kax == 1;
  /* the view: the offsets of the elements at K = 0 and K = 1 (row 0) */
  tc_epool *p = tc_epool_new();
  const tc_expr *lv[2], *at[2], *valid;
  for (int q = 0; q < 2; q++) {
    lv[rows] = tc_e_const(p, 0), lv[kax] = tc_e_const(p, q);
    tc_tensor_view_index(x, p, lv, &at[q], &valid);
  }
  int64_t none = 0;
  bool inner = tc_e_eval(at[1], &none) - tc_e_eval(at[0], &none) == 1;
  tc_epool_free(p);
  return inner;
}

/* (sched.h) The op type: mma.sync with rings for CUDA sm_80+ and MFMA for
 * HIP, for 16-bit operands where nothing but elementwise ops follows the
 * matmul (*not_what and *why say which one it is not, and why, where it
 * does not serve), else FMA. */
tc_matmul_tiles tc_matmul_auto_choice(tc_target target, const char *arch, tc_dtype t, int64_t m,
                                      int64_t n, int64_t k, int rax, bool prologue,
                                      const char **not_what, const char **why) {
  tc_matmul_tiles tl = tc_matmul_auto_tiles(m, n, k, (int)tc_dtype_size(t), rax);
  *why = *not_what = NULL;
  bool int16 = t == TC_F16 || t == TC_BF16;
  tc_arch_family fam = tc_target_info_of(target).family;
  if (fam == TC_ARCH_SM && int16) {
    tc_target_info ti;
    tc_target_info_make(target, arch, &ti, NULL);
    if (!(ti.features & TC_FEAT_MMA_SYNC)) return tl;
    bool wg = ti.features & TC_FEAT_WGMMA;
    *not_what = wg ? "wgmma or mma.sync" : "mma.sync";
    if (rax >= 0)
      *why = wg ? "their op types take no reduction of the result"
                : "the mma.sync op type takes no reduction of the result";
    else if (prologue)
      *why = wg ? "their op types take no ops before the matmul"
                : "the mma.sync op type takes no ops before the matmul";
    else if (wg && m >= 64 && n >= 64) tl = pick_wgmma_tiles(m, n, k, ti.smem_max);
    else tl = pick_mma_tiles(m, n, k, ti.smem_max); /* (symbolic: m, n, k are the bounds) */
    /* (mma.sync on sm_90a: the note says why not wgmma) */
    if (wg && !*why && tl.macro != TC_MACRO_WGMMA)
      *not_what = "wgmma", *why = "the result is smaller than one 64 x 64 wgmma tile";
    else if (!wg && !*why && arch && strcmp(arch, "sm_90") == 0)
      *not_what = "wgmma", *why = "wgmma needs sm_90a, the arch is sm_90";
  } else if (rax >= 0 || prologue) {
    if (fam == TC_ARCH_GFX && int16)
      *not_what = "MFMA", *why = rax >= 0 ? "the MFMA op type takes no reduction of the result"
                                          : "the MFMA op type takes no ops before the matmul";
  } else {
    tc_matmul_tiles mt;
    *not_what = "MFMA";
    if (tc_mfma_auto_tiles(target, arch, t, m, n, &mt, why)) tl = mt;
  }
  return tl;
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

/* Binds t's block tile axes at o and o + 1: Mo on BIDy and No on BIDx
 * (msym: M is a size variable, docs/dynamic.md: Mo on BIDx, whose grid
 * extent is computed at launch and may exceed BIDy's 65535, No on BIDy);
 * with a reduction (rax o: of the columns, o + 1: of the rows) the block
 * axis of the other one on its block index at o, and the reduced one's
 * (of extent 1: one block covers the reduced axis, so the reduction
 * needs no combination across blocks) a serial loop at o + 1. */
static tc_status bind_blocks(tc_tensor *t, int o, int rax, bool msym) {
  tc_status st = TC_OK;
  if (o) st = tc_parallelize(t, 0, TC_BIDZ);
  if (!st) st = tc_parallelize(t, o, rax == o || msym ? TC_BIDX : TC_BIDY);
  if (!st) st = tc_parallelize(t, o + 1, rax >= 0 ? TC_SERIAL : msym ? TC_BIDY : TC_BIDX);
  return st;
}

/* An operand tile (in shared memory, computed at P's Ko): its own loops
 * [a0, a1, a2, a3, a4] from position base are reordered by to[] so that
 * the last three are the tile's (rows and columns in memory order, one
 * of them in two parts: the first of those at position first), merged
 * and spread over ty x tx threads, with runs of v consecutive columns per
 * thread (an unrolled loop, innermost) when v > 1. */
static tc_status spread(tc_tensor *x, int base, const int *to, int first, int64_t v, int64_t ty,
                        int64_t tx) {
  int old[5] = {base, base + 1, base + 2, base + 3, base + 4}, nw[5];
  for (int i = 0; i < 5; i++) nw[i] = base + to[i];
  tc_status st = tc_reorder(x, 5, old, nw);
  if (!st) st = tc_merge(x, base + first, base + first + 1);
  if (!st && v > 1) st = tc_split(x, base + 3, v, 1);
  if (!st) st = tc_merge(x, base + 2, base + 3);
  if (!st) st = tc_split(x, base + 2, ty * tx, 1);
  if (!st) st = tc_split(x, base + 3, tx, 1);
  for (int i = 0; i < 3 && !st; i++) st = tc_parallelize(x, base + i, TC_SERIAL);
  if (!st) st = tc_parallelize(x, base + 3, TC_TIDY);
  if (!st) st = tc_parallelize(x, base + 4, TC_TIDX);
  if (!st && v > 1) st = tc_parallelize(x, base + 5, TC_UNROLL);
  return st;
}

void tc_matmul_ring_note(char *buf, size_t size, int stages, bool prologue, bool async_reader, bool bulk) {
  buf[0] = 0;
  int ahead = tc_ring_ahead(stages, async_reader);
  if (stages > 1)
    snprintf(buf, size, ", in rings of %d stages (%d K tile%s copied ahead%s; %s%s)", stages, ahead,
             ahead == 1 ? "" : "s",
             ahead < stages - 1 ? " while the previous K tile's wgmma runs: wgmma.wait_group 1" : "",
             bulk ? "by bulk tensor copies on CUDA sm_90+, one thread arming each slot's mbarrier "
                    "and all waiting on its phase"
                  : "cp.async on CUDA sm_80+ where a copy is a plain aligned load",
             prologue ? ", not the prologue's, which compute" : "");
}

/* Inlines t as deep into its consumers as it goes. */
static void inline_deepest(tc_tensor *t) {
  for (int p = t->nloop; p > 0; p--)
    if (tc_inline_at(t, p) == TC_OK) return;
  tc_clear_error(t->f);
}

/* A reduction after the matmul: one of the result's two axes (rows: N,
 * columns: M) reduced, an output that nothing reads, alone or beside one
 * other output.  *out gets that other output (alone: the reduction's
 * operand, *inner set), *rout the reduction, *rax the reduced axis. */
static tc_status check_reduction(tc_fusion *f, const tc_op *red, int r, int o, tc_tensor **out,
                                 tc_tensor **rout, int *rax, bool *inner) {
  const char *call = "tc_schedule_matmul";
  tc_tensor *t = red->out;
  int n = 0;
  for (int a = 0; a < r; a++)
    if (f->g.axes[t->logical[a]].reduction) n++, *rax = a;
  if (n != 1 || *rax < o)
    return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: %s reduces %d axes; the matmul schedule takes a "
                   "reduction of the result's rows (its last axis) or columns (the one before)",
                   call, t->name, n == 1 ? 1 : n);
  bool is_out = false;
  for (int i = 0; i < f->noutputs; i++) is_out |= f->outputs[i] == t;
  for (int i = 0; i < f->nops; i++)
    for (int k = 0; k < f->ops[i]->nin; k++)
      if (f->ops[i]->in[k] == t)
        return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: %s reads the reduction %s; the matmul schedule "
                       "stores a reduction of the result as an output, with nothing after it",
                       call, f->ops[i]->out->name, t->name);
  if (!is_out || f->noutputs > 2)
    return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: the matmul schedule stores a reduction of the "
                   "result as an output, alone or beside one other (the result or ops after it); "
                   "%s is %s, of %d outputs", call, t->name, is_out ? "one" : "not one",
                   f->noutputs);
  *rout = t;
  *inner = f->noutputs == 1;
  *out = *inner ? red->in[0] : f->outputs[f->outputs[0] == t];
  if ((*out)->def->kind == TC_OP_REDUCE)
    return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: both outputs are reductions", call);
  return TC_OK;
}

/* The matmul's operand v's prologue: the elementwise ops of one operand
 * (a cast, a unary op, an op with a constant scalar) that tc_matmul made
 * on the view of a fusion input (src/ir/matmul.c), and that view, into
 * pro[] from v's side; each is computed inside v's loops as v's tile is
 * staged into shared memory.  Refused: an operand computed otherwise. */
static tc_status check_prologue(tc_fusion *f, tc_tensor *v, tc_tensor **pro, int *n) {
  tc_tensor *x = v;
  for (; x->def->kind != TC_OP_BROADCAST && *n < TC_MATMUL_MAX_PROLOGUE; x = x->def->in[0])
    if (x != v) pro[(*n)++] = x;
  tc_tensor *in = x->def->in[0];
  if (x->def->kind != TC_OP_BROADCAST || !in->is_input)
    return tc_fail(f, TC_ERR_UNSUPPORTED,
                   "tc_schedule_matmul: the matmul's operand %s is computed in the fusion; "
                   "the matmul schedule reads its operands from fusion inputs, through a tc_permute "
                   "and elementwise ops of one operand (casts, unary ops, ops with a constant "
                   "scalar), which it computes as it stages the tile", in->name);
  if (x != v) pro[(*n)++] = x;
  return TC_OK;
}

/* The prologue pro[0..n) of the operand tile x (in shared memory, its
 * loops scheduled), computed per element inside x's loops as the tile is
 * staged: x's loops over the axis it broadcasts along (which it ignores)
 * moved last, and each tensor of the prologue given x's loops and
 * inlined into its consumer up to them, so that they run once. */
static tc_status stage_prologue(tc_fusion *f, tc_tensor *x, tc_tensor **pro, int n) {
  int old[16], nw[16], nb = 0, nk = 0;
  for (int l = x->ca_pos; l < x->nloop && l < 16; l++)
    if (tc_dg_is_broadcast_axis(&f->g, x->loop[l])) old[nb++] = l;
  int keep = x->nloop - nb;
  for (int i = 0; i < nb; i++) nw[i] = keep + i;
  (void)nk;
  tc_status st = nb ? tc_reorder(x, nb, old, nw) : TC_OK;
  for (int i = 0; i < n && !st; i++) {
    tc_tensor *p = pro[i];
    st = tc_replay_like(p, x, NULL, "tc_schedule_matmul");
    for (int l = 0; l < p->nloop && l < x->nloop && !st; l++)
      st = tc_parallelize(p, l, f->g.axes[x->loop[l]].ptype);
    if (!st) st = tc_inline_at(p, keep);
  }
  return st;
}

static bool in_prologue(tc_tensor *const pro[2][TC_MATMUL_MAX_PROLOGUE], const int *npro,
                        const tc_tensor *t) {
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < npro[k]; i++)
      if (pro[k][i] == t) return true;
  return false;
}

tc_status tc_matmul_epilogue_like_out(tc_fusion *f, tc_tensor *out, tc_tensor *const *skip, int nskip,
                                      bool inline_out) {
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
  for (int i = n - 1; i >= 0 && !st; i--) {
    tc_tensor *t = order[i]->out;
    if (!operand[t->id] || (t == out && inline_out)) inline_deepest(t);
  }
  free(operand);
  free(order);
  return st;
}

tc_status tc_schedule_matmul(tc_fusion *f, tc_target target, const char *arch,
                             const tc_matmul_tiles *tiles) {
  tc_clear_error(f);
  const char *call = "tc_schedule_matmul";
  tc_op *mm = NULL, *red = NULL;
  for (int i = 0; i < f->nops; i++) {
    tc_op *op = f->ops[i];
    if (op->kind == TC_OP_REDUCE) {
      if (red)
        return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: %s and %s are two reductions; the matmul "
                       "schedule takes one row or column reduction of the result", call,
                       red->out->name, op->out->name);
      red = op;
      continue;
    }
    if (op->kind != TC_OP_MATMUL) continue;
    if (mm)
      return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: %s and %s are two matmuls; the matmul schedule "
                     "takes one per fusion", call, mm->out->name, op->out->name);
    mm = op;
  }
  if (!mm) return tc_fail(f, TC_ERR_ARGUMENT, "%s: the fusion has no matmul (tc_matmul)", call);
  tc_tensor *acc = mm->out, *av = mm->in[0], *bv = mm->in[1], *out = f->outputs[0], *frag[2];
  tc_tensor *rout = NULL;
  int r = acc->nlogical - 1, o = r - 2, rax = -1;
  bool inner = false; /* out is the reduction's operand, no output */
  if (red) {
    tc_status rs = check_reduction(f, red, r, o, &out, &rout, &rax, &inner);
    if (rs) return rs;
  } else if (f->noutputs != 1) {
    return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: the fusion has %d outputs; the matmul schedule "
                   "stores one (and a row or column reduction of it)", call, f->noutputs);
  }
  if (out == acc || out == av || out == bv)
    return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: the output %s is the matmul's %s; output the tensor "
                   "tc_matmul returns (or ops after it)", call, out->name,
                   out == acc ? "accumulator" : "operand view");
  tc_tensor *pro[2][TC_MATMUL_MAX_PROLOGUE];
  int npro[2] = {0, 0};
  for (int k = 0; k < 2; k++) {
    tc_status ps = check_prologue(f, mm->in[k], pro[k], &npro[k]);
    if (ps) return ps;
  }
  int n;
  tc_op **order = tc_topo_order(f, &n);
  tc_status st = TC_OK;
  int nepi = 0; /* the ops after the matmul, broadcasts of their operands aside */
  for (int i = 0; i < n && !st; i++) {
    tc_tensor *t = order[i]->out;
    if (t == acc || t == av || t == bv || in_prologue(pro, npro, t)) continue;
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
  /* M a size variable (docs/dynamic.md): m is its bound */
  tc_fusion_mark_symbolic(f);
  bool msym = tc_dg_is_symbolic(&f->g, acc->logical[o]);
  bool nsym = tc_dg_is_symbolic(&f->g, acc->logical[o + 1]);
  /* (the names of M's and N's variables, for the messages and the note) */
  const char *mvar = msym ? f->sym[tc_dg_sym_var(&f->g, acc->logical[o])]->label : "M";
  const char *nvar = nsym ? f->sym[tc_dg_sym_var(&f->g, acc->logical[o + 1])]->label : "N";
  /* (K a size variable: its tiles' loop runs to ceil(K / bk) over the
   * parameter, the tiles past K read as 0) */
  int64_t kk = f->g.axes[acc->logical[r]].extent;
  if ((msym && rax == o) || (nsym && rax == o + 1))
    return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: %s reduces each %s of the result over the size "
                   "variable %s; the matmul schedule reduces a %s of the result within one block, and "
                   "the blocks along %s are a number known only at launch (give it a fixed extent, "
                   "or store the result and reduce it in a fusion of its own)", call, rout->name, rax == o ? "column" : "row", rax == o ? mvar : nvar,
                   rax == o ? "column" : "row", rax == o ? mvar : nvar);
  int64_t rlen = rax < 0 ? 0 : rax == o ? m : nn;
  if (!tiles && rlen > TC_MATMUL_MAX_REDUCED)
    return tc_fail(f, TC_ERR_UNSUPPORTED,
                   "%s: %s reduces each %s of the result, of %lld elements; the matmul schedule "
                   "reduces one in one block, of at most %d (a combination across blocks is not "
                   "part of it: store the result and reduce it in a fusion of its own)", call,
                   rout->name, rax == o ? "column" : "row", (long long)rlen, TC_MATMUL_MAX_REDUCED);
  const char *not_what = NULL, *why_fma = NULL;
  tc_matmul_tiles tl = tiles ? *tiles
                             : tc_matmul_auto_choice(target, arch, av->dtype, m, nn, kk,
                                                     rax < 0 ? -1 : rax - o, npro[0] || npro[1],
                                                     &not_what, &why_fma);
  bool viewed = false; /* an operand read through a coordinate-transform view (a convolution's) */
  for (int q = 0; q < 2; q++) {
    const tc_tensor *x = mm->in[q];
    while (!x->is_input && x->def && x->def->nin) x = x->def->in[0];
    viewed |= x->view != NULL;
  }
  if (!tiles && tl.macro == TC_MACRO_WGMMA && viewed) { /* (not run through views yet) */
    tc_target_info ti;
    tc_target_info_make(target, arch, &ti, NULL);
    tl = pick_mma_tiles(m, nn, kk, ti.smem_max);
    not_what = "wgmma", why_fma = "through a convolution's views wgmma has not been measured "
                                  "against mma.sync on a GPU yet; tc_schedule_matmul takes wgmma "
                                  "tiles by hand";
  }
  if (tl.bm < 1 || tl.bn < 1 || tl.bk < 1 || tl.tm < 1 || tl.tn < 1 || tl.bm % tl.tm ||
      tl.bn % tl.tn)
    return tc_fail(f, TC_ERR_ARGUMENT,
                   "%s: tiles %lldx%lldx%lld with %lldx%lld per thread do not nest; give extents "
                   ">= 1 with tm dividing bm and tn dividing bn", call, (long long)tl.bm,
                   (long long)tl.bn, (long long)tl.bk, (long long)tl.tm, (long long)tl.tn);
  if (tl.stages < 0 || tl.stages > TC_CIRCULAR_MAX_STAGES)
    return tc_fail(f, TC_ERR_ARGUMENT, "%s: stages must be between 1 and %d (0: 1), got %d", call,
                   TC_CIRCULAR_MAX_STAGES, tl.stages);
  const tc_frag_shape *sh = tc_frag_shape_of(tl.macro);
  bool wg = tl.macro == TC_MACRO_WGMMA;
  if (sh || wg) {
    const char *name = wg ? "wgmma m64nNk16" : sh->name;
    if (rout || npro[0] || npro[1])
      return tc_fail(f, TC_ERR_UNSUPPORTED,
                     "%s: the %s op type takes a matmul and elementwise ops after it; %s "
                     "(schedule this fusion with the FMA op type)", call,
                     wg ? "wgmma" : tl.macro == TC_MACRO_MMA_M16N8K16 ? "mma.sync" : "MFMA",
                     rout ? "a reduction of the result is not part of it"
                          : "ops before the matmul on an operand are not part of it");
    tc_status ms = wg ? tc_schedule_matmul_wgmma(f, target, mm, out, &tl, nepi)
                      : tc_schedule_matmul_frag(f, target, mm, out, &tl, nepi, sh);
    if (!ms && !tiles) { /* say that the scheduler chose it (and why not wgmma) */
      char whynot[192] = "";
      if (why_fma) snprintf(whynot, sizeof whynot, " (not %s: %s)", not_what, why_fma);
      tc_set_schedule_note(f, "%s; %s: the scheduler's op type for f16/bf16 on %s%s",
                           tc_fusion_schedule_note(f), name,
                           wg ? "CUDA sm_90a" : sh->family == TC_ARCH_SM ? "CUDA sm_80+" : "HIP with MFMA",
                           whynot);
    }
    return ms;
  }
  if (tl.macro != TC_MACRO_FMA)
    return tc_fail(f, TC_ERR_ARGUMENT, "%s: unknown macro %d; give TC_MACRO_FMA, "
                   "TC_MACRO_MMA_M16N8K16, TC_MACRO_MFMA_32X32X8, TC_MACRO_MFMA_16X16X16 or "
                   "TC_MACRO_WGMMA", call, tl.macro);
  int64_t rtile = rax < 0 ? 0 : rax == o ? tl.bm : tl.bn;
  if (rtile && rtile < rlen)
    return tc_fail(f, TC_ERR_UNSUPPORTED,
                   "%s: %s reduces each %s of the result, of %lld elements, but the block tile "
                   "covers %lld (%s %lld); the matmul schedule reduces one in one block: give %s "
                   ">= %lld", call, rout->name, rax == o ? "column" : "row", (long long)rlen,
                   (long long)rtile, rax == o ? "bm" : "bn", (long long)rtile,
                   rax == o ? "bm" : "bn", (long long)rlen);
  /* (nothing is changed before this point) each thread's fragments of the
   * operands, in registers */
  if (!(frag[0] = tc_cache_after(av)) || !(frag[1] = tc_cache_after(bv))) return TC_ERR_SCHEDULE;
  /* a reduction of the result reduces in registers and is copied out */
  tc_tensor *racc = rout ? tc_cache_before(rout) : NULL;
  if (rout && !racc) return TC_ERR_SCHEDULE;
  int64_t ty = tl.bm / tl.tm, tx = tl.bn / tl.tn;
  /* the output: [Mo, No, Mt, Nt, TM, TN] */
  st = tile_mn(out, o, &tl);
  /* (from [Mo, Mt, TM, No, Nt, TN]; with a reduction of the rows
   * [Mo, Mt, Nt, TM, No, TN], of the columns [No, Mt, Nt, TN, Mo, TM]:
   * the reduced axis's block loop, of one iteration, just outside its
   * thread tile, so that the reduction's loops are its iteration loops
   * and then its reduction loops, as the lowering wants) */
  static const int mn_to[3][6] = {{0, 2, 4, 1, 3, 5}, {4, 1, 5, 0, 2, 3}, {0, 1, 3, 4, 2, 5}};
  int mn_old[6], mn_new[6], form = rax < 0 ? 0 : rax - o + 1;
  for (int i = 0; i < 6; i++) mn_old[i] = o + i, mn_new[i] = mn_to[form][i] + o;
  if (!st) st = tc_reorder(out, 6, mn_old, mn_new);
  if (!st && rax < 0) st = bind_blocks(out, o, rax, msym);
  if (!st && rax >= 0) st = o ? tc_parallelize(out, 0, TC_BIDZ) : TC_OK;
  if (!st && rax >= 0) st = tc_parallelize(out, o, rax == o || msym ? TC_BIDX : TC_BIDY);
  int tid0 = o + (rax < 0 ? 2 : 1);
  if (!st) st = tc_parallelize(out, tid0, TC_TIDY);
  if (!st) st = tc_parallelize(out, tid0 + 1, TC_TIDX);
  if (!st) st = tc_parallelize(out, tid0 + 2, TC_UNROLL);
  if (!st) st = tc_parallelize(out, o + 5, TC_UNROLL);
  /* the accumulator: [Mo, No, Ko, Mt, Nt, Ki, TM, TN] */
  if (!st) st = tc_split(acc, o + 2, tl.bk, 1);
  if (!st) st = tile_mn(acc, o, &tl);
  int acc_old[8], acc_new[8] = {0, 3, 6, 1, 4, 7, 2, 5};
  if (rax == o) acc_new[0] = 1, acc_new[3] = 0; /* No first: it is the block axis */
  for (int i = 0; i < 8; i++) acc_old[i] = o + i, acc_new[i] += o;
  if (!st) st = tc_reorder(acc, 8, acc_old, acc_new);
  if (!st) st = bind_blocks(acc, o, rax, msym);
  if (!st) st = tc_parallelize(acc, o + 3, TC_TIDY);
  if (!st) st = tc_parallelize(acc, o + 4, TC_TIDX);
  if (!st) st = tc_parallelize(acc, o + 6, TC_UNROLL);
  if (!st) st = tc_parallelize(acc, o + 7, TC_UNROLL);
  /* the epilogue, like the output (which, when only its reduction is
   * stored, is inlined into that too) */
  tc_tensor *skip[5 + 2 * TC_MATMUL_MAX_PROLOGUE] = {acc, av, bv, frag[0], frag[1]};
  int nskip = 5;
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < npro[k]; i++) skip[nskip++] = pro[k][i];
  if (!st) st = tc_matmul_epilogue_like_out(f, out, skip, nskip, inner);
  if (!st) st = tc_inline_at(acc, o + (rax < 0 ? 2 : 1));
  /* the operand tiles */
  static const int a_to[5] = {2, 0, 4, 3, 1}, b_to[5] = {0, 3, 2, 1, 4};
  tc_tensor *ops[2] = {av, bv};
  for (int k = 0; k < 2 && !st; k++) {
    /* the fragment: tm (tn) values per K step, read by the outer product */
    st = tc_compute_at(frag[k], acc, o + 6);
    for (int i = o + 6; i < tc_tensor_nloop(frag[k]) && !st; i++) st = tc_parallelize(frag[k], i, TC_UNROLL);
    if (!st) st = tc_set_memory_type(ops[k], TC_MEM_SHARED);
    if (!st) st = tc_compute_at(ops[k], frag[k], o + 3);
    /* in a ring without a prologue, each thread copies runs of 16 bytes
     * along the tile's columns (K for A, N for B) where they divide them:
     * cp.async */
    int64_t cols = k ? tl.bn : tl.bk, v = tl.stages > 1 && !npro[k] ? 16 / (int64_t)tc_dtype_size(av->dtype) : 1;
    while (v > 1 && cols % v) v /= 2;
    if (!st) st = spread(ops[k], o + 3, k ? b_to : a_to, k ? 3 : 2, v, ty, tx);
    if (!st && npro[k]) st = stage_prologue(f, ops[k], pro[k], npro[k]);
    if (!st && tl.stages > 1) st = tc_circular_buffer(ops[k], tl.stages);
  }
  if (st) return st;
  int64_t smem = (tl.bm + tl.bn) * tl.bk * (int64_t)tc_dtype_size(av->dtype) * (tl.stages > 1 ? tl.stages : 1);
  char ring[160] = "";
  tc_matmul_ring_note(ring, sizeof ring, tl.stages, npro[0] + npro[1] > 0, false, false);
  char batch[48] = "";
  if (o) snprintf(batch, sizeof batch, " (%lld batches on BIDz)", (long long)tc_logical_extent(acc, 0));
  char redtext[160] = "";
  if (rout) {
    static const char *const opname[3] = {"sum", "max", "min"};
    nepi--; /* (the reduction was counted) */
    snprintf(redtext, sizeof redtext, ", then %s, %s: the %s of each %s, reduced in its block "
             "(%lld threads on %s, %lld values each)", rout->name, inner ? "the only output" : "a second output",
             opname[racc->def->sub], rax == o ? "column" : "row",
             (long long)(rax == o ? ty : tx), rax == o ? "TIDy" : "TIDx",
             (long long)(rax == o ? tl.tm : tl.tn));
  }
  char protext[96] = "";
  if (npro[0] + npro[1])
    snprintf(protext, sizeof protext, " (computing %d op%s on A and %d on B as they are staged)",
             npro[0], npro[0] == 1 ? "" : "s", npro[1]);
  char fmatext[128] = "";
  if (why_fma) snprintf(fmatext, sizeof fmatext, "; FMA, not %s: %s", not_what, why_fma);
  char mtext[200], ntext[200], ktext[200];
  tc_sched_extent_text(f, acc->logical[o], m, mtext, sizeof mtext);
  tc_sched_extent_text(f, acc->logical[o + 1], nn, ntext, sizeof ntext);
  tc_sched_extent_text(f, acc->logical[r], kk, ktext, sizeof ktext);
  tc_set_schedule_note(f,
           "matmul: %s x %s x %s%s, %lldx%lld tiles on %s, %lld x %lld threads "
           "(TIDy x TIDx) with %lldx%lld f32 accumulators each (FMA outer products), K in tiles "
           "of %lld with A and B staged in shared memory (%lld bytes)%s%s, %d epilogue op%s before "
           "the store%s%s", mtext, ntext, ktext, batch, (long long)tl.bm,
           (long long)tl.bn, rax < 0 ? (msym ? "BIDx x BIDy" : "BIDy x BIDx") : rax == o ? "1 x BIDx" : msym ? "BIDx x 1" : "BIDy x 1",
           (long long)ty, (long long)tx, (long long)tl.tm, (long long)tl.tn,
           (long long)tl.bk, (long long)smem, protext, ring, nepi, nepi == 1 ? "" : "s", redtext,
           fmatext);
  return TC_OK;
}
