/* tma.c - bulk tensor (TMA) tile copies after indexing (see tma.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sched/sched.h"
#include "../target/target.h"
#include "tma.h"

static bool uses(const tc_expr *e, int64_t id) {
  if (!e) return false;
  if (e->op == TC_E_VAR) return e->val == id;
  if (e->op == TC_E_CONST) return false;
  return uses(e->a, id) || uses(e->b, id) || uses(e->c, id);
}

static const tc_expr *zero_vars(tc_epool *p, const tc_expr *e, int n, tc_knode *const *loops) {
  switch (e->op) {
    case TC_E_CONST: return e;
    case TC_E_VAR:
      for (int i = 0; i < n; i++)
        if (e->val == loops[i]->loop.var->val) return tc_e_const(p, 0);
      return e;
    case TC_E_NOT: return tc_e_not(p, zero_vars(p, e->a, n, loops));
    case TC_E_SELECT:
      return tc_e_select(p, zero_vars(p, e->a, n, loops), zero_vars(p, e->b, n, loops),
                         zero_vars(p, e->c, n, loops));
    default: return tc_e_bin(p, e->op, zero_vars(p, e->a, n, loops), zero_vars(p, e->b, n, loops));
  }
}

/* The byte offset a TMA copy with an S-byte swizzle gives byte b of the
 * row-major box (CuTe's Swizzle<log2(S/16), 4, 3>). */
static int64_t swz(int64_t b, int S) {
  int64_t m = S / 16 - 1;
  return b ^ (((b >> 7) & m) << 4);
}

typedef struct var_set {
  int64_t id[48];
  int64_t vals[48][4];
  int n[48];
  int nv;
} var_set;

static void add_var(var_set *v, int64_t id, int64_t extent) {
  if (v->nv >= 48) return;
  int64_t cand[4] = {0, 1, extent / 2, extent - 1};
  int m = 0;
  for (int c = 0; c < 4; c++) {
    bool dup = cand[c] >= extent;
    for (int j = 0; j < m; j++) dup |= v->vals[v->nv][j] == cand[c];
    if (!dup) v->vals[v->nv][m++] = cand[c];
  }
  v->id[v->nv] = id, v->n[v->nv] = m;
  v->nv++;
}

/* Whether the innermost L own loops of s form one R x C box with swizzle
 * S for every sampled value of everything else; 0 when they do. */
static int try_box(tc_kir *k, tc_knode *s, tc_knode *const *chain, int n, int L, int S,
                   const tc_expr *gidx, const tc_expr *sidx, int64_t N, int elem, int64_t off,
                   int64_t *rows_out) {
  int64_t C = S / elem, count = 1;
  for (int i = 0; i < L; i++) count *= chain[i]->loop.extent;
  if (count % C != 0 || count / C > 256 || count / C < 1) return 1;
  int64_t R = count / C;
  var_set vs = {0};
  for (int i = L; i < n; i++) add_var(&vs, chain[i]->loop.var->val, chain[i]->loop.extent);
  for (tc_knode *x = n ? chain[n - 1]->parent : s->parent; x; x = x->parent)
    if (x->kind == TC_K_LOOP) add_var(&vs, x->loop.var->val, x->loop.extent);
  for (int d = 0; d < 6; d++)
    if (d != 3) add_var(&vs, k->pvar[d]->val, d < 3 ? k->grid[d] : k->block[d - 3]);
  int64_t *vars = tc_xcalloc((size_t)tc_e_num_vars(k->pool) + 1, sizeof(int64_t));
  int idx[48] = {0};
  int bad = 0;
  while (!bad) {
    for (int i = 0; i < vs.nv; i++) vars[vs.id[i]] = vs.vals[i][idx[i]];
    vars[k->pvar[3]->val] = 0;
    for (int i = 0; i < L; i++) vars[chain[i]->loop.var->val] = 0;
    int64_t g0 = tc_e_eval(gidx, vars), s0 = tc_e_eval(sidx, vars);
    int64_t r0 = g0 / N, c0 = g0 % N;
    if ((off + s0 * elem) % (8 * S) != 0) bad = 1;
    int64_t bi[16] = {0};
    for (int64_t e = 0; e < count && !bad; e++) {
      int64_t rem = e;
      for (int i = 0; i < L; i++) {
        bi[i] = rem % chain[i]->loop.extent, rem /= chain[i]->loop.extent;
        vars[chain[i]->loop.var->val] = bi[i];
      }
      int64_t g = tc_e_eval(gidx, vars), sh = tc_e_eval(sidx, vars);
      int64_t r = g / N - r0, c = g % N - c0;
      if (r < 0 || r >= R || c < 0 || c >= C) bad = 1;
      else if (sh != s0 + swz((r * C + c) * elem, S) / elem) bad = 1;
    }
    int i = 0;
    while (i < vs.nv && ++idx[i] == vs.n[i]) idx[i++] = 0;
    if (i == vs.nv) break;
  }
  free(vars);
  *rows_out = R;
  return bad;
}

static tc_status lower_stmt(tc_kir *k, tc_knode *s) {
  tc_fusion *f = k->f;
  tc_op *op = s->stmt.op;
  tc_tensor *out = op->out, *in = op->nin == 1 ? op->in[0] : NULL;
  char what[128];
  snprintf(what, sizeof what, "bulk tensor copy %s = %s", out->name, in ? in->name : "?");
  bool load = in && in->mem == TC_MEM_GLOBAL && out->mem == TC_MEM_SHARED;
  bool store = in && in->mem == TC_MEM_SHARED && out->mem == TC_MEM_GLOBAL;
  /* (a matmul's operand view of an input is a copy too: its broadcast
   * axis is never allocated) */
  bool view = op->kind == TC_OP_BROADCAST && load;
  if ((op->kind != TC_OP_SET && !view) || !(load || store))
    return tc_fail(f, TC_ERR_SCHEDULE,
                   "compile: the %s: a bulk tensor copy (TC_LDST_BULK_TENSOR) is a set from global "
                   "to shared memory or from shared to global memory", what);
  tc_tensor *g = load ? in : out, *sm = load ? out : in;
  if (g->nlogical != 2)
    return tc_fail(f, TC_ERR_UNSUPPORTED,
                   "compile: the %s: only 2-D global tensors have bulk tensor copies here (%s has %d "
                   "dimensions); use TC_LDST_DEFAULT", what, g->name, g->nlogical);
  const tc_expr *gidx = load ? s->stmt.in_index[0] : s->stmt.out_index;
  const tc_expr *sidx = load ? s->stmt.out_index : s->stmt.in_index[0];
  if (uses(gidx, k->pvar[3]->val) || uses(sidx, k->pvar[3]->val))
    return tc_fail(f, TC_ERR_SCHEDULE,
                   "compile: the %s depends on TIDx; a bulk copy is issued by one thread, so its "
                   "loops must not be bound to TIDx", what);
  /* a ring's copy (circular.c): its loops stop at the ring loop (or the
   * prologue's), and are all the copy's own (the child of that loop that
   * holds it), so that it is issued once per tile */
  const tc_knode *top = s->stmt.tma.bar_slot ? s->stmt.ring_copy : NULL;
  tc_knode *chain[16];
  int n = 0;
  for (tc_knode *x = s->parent; x && x->kind == TC_K_LOOP && x->nbody == 1 && n < 16 &&
                                !(top && x == top->parent);
       x = x->parent)
    chain[n++] = x;
  if (top && (n ? chain[n - 1] : s) != top)
    return tc_fail(f, TC_ERR_SCHEDULE,
                   "compile: the %s fills a slot of a ring but shares a loop inside the ring loop "
                   "with other statements (it would arm the slot's mbarrier more than once per "
                   "tile); compute %s at the ring loop with its own loops alone, or use "
                   "TC_LDST_DEFAULT", what, sm->name);
  /* a ring's copy is guarded by its tile being inside the ring loop: a
   * condition on the whole copy (no variable of its own loops) */
  bool whole = top != NULL;
  for (int i = 0; i < n && whole; i++) whole = !tc_e_uses(s->stmt.pred, chain[i]->loop.var->val);
  if (!tc_e_is_const(s->stmt.pred, 1) && !whole)
    return tc_fail(f, TC_ERR_SCHEDULE,
                   "compile: the %s is predicated; bulk copies of partial tiles are not supported",
                   what);
  int64_t N = f->g.axes[g->logical[1]].extent;
  int elem = (int)tc_dtype_size(g->dtype);
  int64_t off = 0;
  for (int i = 0; i < k->nallocs; i++)
    if (k->allocs[i].t == sm) off = k->allocs[i].offset;
  static const int sws[3] = {128, 64, 32};
  for (int L = n; L >= 1; L--) {
    if (n - L > 8) break;
    for (int w = 0; w < 3; w++) {
      int64_t R = 0;
      if (try_box(k, s, chain, n, L, sws[w], gidx, sidx, N, elem, off, &R)) continue;
      tc_epool *p = k->pool;
      const tc_expr *g0 = tc_simplify(p, zero_vars(p, gidx, L, chain));
      s->stmt.tma.kind = load ? TC_TMA_LOAD : TC_TMA_STORE;
      s->stmt.tma.top = chain[n - 1];
      chain[n - 1]->loop.tma_stmt = s;
      s->stmt.tma.nissue = n - L;
      for (int i = 0; i < n - L; i++) s->stmt.tma.issue[i] = chain[n - 1 - i];
      s->stmt.tma.rows = R, s->stmt.tma.cols = sws[w] / elem, s->stmt.tma.swizzle = sws[w];
      s->stmt.tma.row = tc_simplify(p, tc_e_divc(p, g0, N));
      s->stmt.tma.col = tc_simplify(p, tc_e_modc(p, g0, N));
      s->stmt.tma.smem = tc_simplify(p, zero_vars(p, sidx, L, chain));
      if (!s->stmt.tma.bar_slot) s->stmt.tma.bar = load ? k->ntma_bars++ : -1;
      s->stmt.tma.guard = tc_e_is_const(s->stmt.pred, 1) ? NULL : s->stmt.pred;
      k->ntma++;
      return TC_OK;
    }
  }
  return tc_fail(f, TC_ERR_SCHEDULE,
                 "compile: the %s: its loops do not copy whole boxes as a bulk tensor copy lays "
                 "them out (rows of 32, 64 or 128 bytes, 16-byte chunks XOR-swizzled, at most 256 "
                 "rows, on a shared address aligned to the swizzle pattern); schedule %s with "
                 "tc_schedule_tma_swizzle, or use TC_LDST_DEFAULT",
                 what, sm->name);
}

static int lower_each(tc_knode *n, void *ctx) {
  return n->stmt.op->ldst == TC_LDST_BULK_TENSOR ? lower_stmt(ctx, n) : TC_OK;
}

tc_status tc_tma_lower(tc_kir *k, tc_target target, const char *arch) {
  tc_target_info ti;
  tc_target_info_make(target, arch, &ti, NULL);
  if (!(ti.features & TC_FEAT_TMA)) return TC_OK;
  return tc_knode_each_stmt(k->root, lower_each, k);
}
