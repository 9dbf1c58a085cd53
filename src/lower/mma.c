/* mma.c - a matmul's statement as one warp-wide matrix instruction: NVIDIA's
 * mma.sync m16n8k16 (see mma.h; the layouts are the PTX ISA's "Matrix
 * Fragments for mma.m16n8k16 with floating point type", docs/mma.md), or
 * AMD's MFMA, whose layouts are mfma.c's; the rest (finding the loops,
 * splitting the edges' predicate by operand, substituting the loop
 * variables, replacing the loops) is one code for both.
 *
 * The loops around the statement are the instruction's values of a lane
 * (m_pre, m_post, n_post of its tc_frag_shape, those of extent > 1) and
 * its K steps; a fragment element is the statement's own index with those
 * variables and the lane replaced by the layout's values.  mma.sync, with
 * g = lane / 4 and t = lane % 4, and the accumulator's 16 x 8 tile split
 * as row = 8 * ihi + ilo, column = 2 * jhi + jlo, lane = 4 * ilo + jhi
 * (so in the statement's indices ilo is tidx / 4 and jhi tidx % 4):
 *   A register r (rows g + 8 (r % 2), K columns 2t + 8 (r / 2) + h, h the
 *     half): ihi := r % 2, k16 := 2t + 8 (r / 2) + h (A reads no column);
 *   B register r (K rows 2t + 8r + h, column g): k16 := 2t + 8r + h, and
 *     the column g = 2 jhi + jlo: tidx := lane / 8 (B reads tidx only
 *     through jhi = tidx % 4), jlo := g % 2 (B reads no row);
 *   accumulator v (row g + 8 (v / 2), column 2t + v % 2): ihi := v / 2,
 *     jlo := v % 2, which is the statement's own output index.
 * Edges: the statement's predicate (rows < M, columns < N, K < K) is
 * split into its terms, those of A (without the column's values) and of
 * B (without the row's) substituted like the indices; an element outside
 * is loaded as 0, so the instruction runs unpredicated on whole tiles and
 * the products past an edge are 0 (and land only in accumulators that
 * are never stored). */
#include <stdio.h>
#include <stdlib.h>

#include "../base/test_hooks.h"
#include "../target/target.h"
#include "../sched/sched.h"
#include "mma.h"

tc_knode *tc_mma_only_loop(tc_knode *n, int64_t extent) {
  tc_knode *p = n->parent;
  return p && p->kind == TC_K_LOOP && p->nbody == 1 && p->loop.extent == extent ? p : NULL;
}

static void free_loops(tc_knode *n, const tc_knode *keep) {
  for (int i = 0; i < n->nbody; i++)
    if (n->body[i] != keep) free_loops(n->body[i], keep);
  free(n->body);
  free(n);
}

void tc_mma_take_loops(tc_knode *s, tc_knode *outer) {
  tc_knode *parent = outer->parent;
  for (int i = 0; i < parent->nbody; i++)
    if (parent->body[i] == outer) parent->body[i] = s;
  s->parent = parent;
  for (tc_knode *n = outer; n != s; n = n->body[0])
    s->sync_before |= n->sync_before;
  free_loops(outer, s);
}

tc_status tc_nv_macro_check(tc_fusion *f, const tc_op *op, tc_target target, const tc_target_info *ti,
                            unsigned feature, const char *name, const char *arch_word, const char *what,
                            const char *needs, const char *hint) {
  if (ti->family == TC_ARCH_NONE || (ti->features & feature)) return TC_OK; /* (OpenCL emulates it) */
  if (ti->family != TC_ARCH_SM)
    return tc_fail(f, TC_ERR_UNSUPPORTED, "compile: %s is a matmul of %s, an NVIDIA %sinstruction "
                   "that target %s does not have (the OpenCL target emulates it): use the FMA macro",
                   op->out->name, name, arch_word, ti->name);
  return tc_fail(f, TC_ERR_UNSUPPORTED, "compile: %s%s needs arch %s, but the arch is %s%s%s", name,
                 what, needs, ti->arch, ti->arch_given ? "" : " (the default)", hint);
}

static bool is_mma(const tc_knode *s) {
  const tc_op *op = s->stmt.op;
  return s->stmt.red.kind == TC_RED_ACC && op->kind == TC_OP_MATMUL &&
         tc_frag_shape_of(op->out->macro) != NULL;
}

static void swap_at(const tc_expr **x, const tc_expr **y, int i, int j) {
  const tc_expr *t = x[i];
  x[i] = x[j], x[j] = t;
  if (y) t = y[i], y[i] = y[j], y[j] = t;
}

/* Tests only (tc_test_hooks.mma_lower_fault): a wrong layout, which the
 * OpenCL emulation's independent layouts must catch. */
static void inject_fault(tc_kmma *m) {
  bool mfma = m->kind != TC_MACRO_MMA_M16N8K16;
  switch (tc_test_hooks_get()->mma_lower_fault) {
    case 1: /* mma: A registers 1 and 2; MFMA: A items 1 and 2 */
      if (mfma) swap_at(m->a, m->pa, 1, 2);
      else swap_at(m->a, m->pa, 2, 4), swap_at(m->a, m->pa, 3, 5);
      break;
    case 2: /* mma: the halves of each B register; MFMA: B items 0 and 1, 2 and 3 */
      swap_at(m->b, m->pb, 0, 1), swap_at(m->b, m->pb, 2, 3);
      break;
    case 3: /* mma: a lane's two accumulator columns; MFMA: accumulator items 0 and 1, 2 and 3 */
      swap_at(m->c, NULL, 0, 1), swap_at(m->c, NULL, 2, 3);
      break;
    default: break;
  }
}

/* ---- ldmatrix for the fragments ---------------------------------------- */

#define LDSM_POINTS 65536 /* assignments checked at most (else scalar loads) */

typedef struct ldsm_check {
  int mode;                  /* 0: A (.x4); 1: B (.x2 .trans); 2: B (.x2) */
  const tc_expr *addr;       /* the row address this lane supplies */
  const tc_expr *const *el;  /* the elements the scalar loads read */
  int nel;
  int64_t *vars, lane_id;
  int64_t ids[16];
  int nids;
  int64_t off; /* the tile's byte offset in shared memory */
} ldsm_check;

/* Whether ldmatrix gives this lane, under the variables in c->vars, the
 * elements the scalar loads read: A (.x4) register r is matrix r, whose
 * row l / 4 lane 8r + l / 4 supplies, at column 2 (l % 4) + h; B (.x2
 * .trans) register r is matrix r transposed, row 2 (l % 4) + h supplied by
 * lane 8r + 2 (l % 4) + h, at column l / 4; B (.x2) as A: row l / 4 of
 * matrix r, at column 2 (l % 4) + h; every row 16-byte aligned. */
static bool ldsm_point_ok(ldsm_check *c) {
  int64_t *v = c->vars, id = c->lane_id, rr[32];
  for (int l = 0; l < 32; l++) {
    v[id] = l;
    rr[l] = tc_e_eval(c->addr, v);
    if ((c->off + 2 * rr[l]) % 16) return false;
  }
  for (int l = 0; l < 32; l++) {
    v[id] = l;
    for (int e = 0; e < c->nel; e++) {
      int64_t want = c->mode == 1 ? rr[8 * (e / 2) + 2 * (l % 4) + e % 2] + l / 4
                                  : rr[8 * (e / 2) + l / 4] + 2 * (l % 4) + e % 2;
      if (tc_e_eval(c->el[e], v) != want) return false;
    }
  }
  return true;
}

/* Every assignment of the variables c->ids[i..) over their ranges. */
static bool ldsm_all_ok(ldsm_check *c, tc_epool *p, int i) {
  if (i == c->nids) return ldsm_point_ok(c);
  int64_t lo, hi;
  tc_e_var_range(p, (int)c->ids[i], &lo, &hi);
  for (int64_t x = lo; x <= hi; x++) {
    c->vars[c->ids[i]] = x;
    if (!ldsm_all_ok(c, p, i + 1)) return false;
  }
  return true;
}

static void add_vars(ldsm_check *c, tc_epool *p, const tc_expr *e, int64_t *points, bool *ok) {
  for (int id = 0; id < tc_e_num_vars(p) && *ok; id++) {
    if (id == c->lane_id || !tc_e_uses(e, id)) continue;
    bool have = false;
    for (int i = 0; i < c->nids; i++) have |= c->ids[i] == id;
    if (have) continue;
    int64_t lo, hi;
    tc_e_var_range(p, id, &lo, &hi);
    if (c->nids == 16 || hi - lo + 1 > LDSM_POINTS || (*points *= hi - lo + 1) > LDSM_POINTS) *ok = false;
    else c->ids[c->nids++] = id;
  }
}

/* Whether ldmatrix in mode `mode` reads, from row address addr, exactly
 * the elements el[0..nel) of a tile at byte offset off (checked by
 * evaluation at every lane and every value of the other variables, up to
 * LDSM_POINTS assignments). */
static bool ldsm_reads(tc_kir *k, int mode, const tc_expr *addr, const tc_expr *const *el, int nel,
                       int64_t off) {
  tc_epool *p = k->pool;
  ldsm_check c = {mode, addr, el, nel, NULL, k->pvar[3]->val, {0}, 0, off};
  int64_t points = 1;
  bool ok = true;
  add_vars(&c, p, addr, &points, &ok);
  for (int e = 0; e < nel && ok; e++) add_vars(&c, p, el[e], &points, &ok);
  if (!ok) return false;
  c.vars = tc_xcalloc((size_t)tc_e_num_vars(p) + 1, sizeof *c.vars);
  ok = ldsm_all_ok(&c, p, 0);
  free(c.vars);
  return ok;
}

/* Sets m->ldsm, addr_a, addr_b and ldsm_trans_b where ldmatrix reads
 * exactly the elements of the scalar loads: A by .x4, B by .x2 .trans
 * from a [K, N] tile or by .x2 from an [N, K] one.  ids are the
 * statement's variables of m_pre, n_post, K and the lane. */
static void try_ldsm(tc_kir *k, tc_knode *s, tc_kmma *m, const int64_t *ids) {
  tc_epool *p = k->pool;
  const tc_expr *lane = k->pvar[3];
  const tc_expr *q = tc_e_divc(p, lane, 8), *z = tc_e_const(p, 0), *r8 = tc_e_modc(p, lane, 8);
  /* A: lane 8q + r supplies row r of matrix q = (rows 8 (q % 2) .., K 8 (q / 2) ..) */
  const tc_expr *va[4] = {tc_e_modc(p, q, 2), z, tc_e_mulc(p, tc_e_divc(p, q, 2), 8),
                          tc_e_mulc(p, r8, 4)};
  /* B .trans: lane l < 16 supplies K row l of the column block (the rest
   * repeat it); B: lane 8q + r supplies column r = 2 n_lane + n_post of
   * the block at K 8 (q % 2) */
  const tc_expr *vb[4] = {z, z, tc_e_modc(p, lane, 16), z};
  const tc_expr *vn[4] = {z, tc_e_modc(p, r8, 2), tc_e_mulc(p, tc_e_modc(p, q, 2), 8), tc_e_divc(p, r8, 2)};
  const tc_kalloc *aa = tc_kir_alloc_of(k, s->stmt.op->in[0]), *ab = tc_kir_alloc_of(k, s->stmt.op->in[1]);
  if (!aa || !ab) return;
  m->addr_a = tc_simplify(p, tc_e_subst(p, s->stmt.in_index[0], 4, ids, va));
  if (!ldsm_reads(k, 0, m->addr_a, m->a, 8, aa->offset)) return;
  for (int trans = 1; trans >= 0 && !m->ldsm; trans--) {
    m->addr_b = tc_simplify(p, tc_e_subst(p, s->stmt.in_index[1], 4, ids, trans ? vb : vn));
    m->ldsm = ldsm_reads(k, trans ? 1 : 2, m->addr_b, m->b, 4, ab->offset);
    m->ldsm_trans_b = trans;
  }
  if (m->ldsm) k->nldsm++;
}

/* The terms of a conjunction e into terms[*n ..]; false past cap. */
static bool split_terms(const tc_expr *e, const tc_expr **terms, int *n, int cap) {
  if (e->op == TC_E_LAND) return split_terms(e->a, terms, n, cap) && split_terms(e->b, terms, n, cap);
  if (tc_e_is_const(e, 1)) return true;
  if (*n == cap) return false;
  terms[(*n)++] = e;
  return true;
}

typedef struct found {
  tc_knode **s;
  int n, cap;
} found;

static int collect(tc_knode *s, void *ctx) {
  found *fd = ctx;
  if (is_mma(s)) TC_PUSH(fd->s, fd->n, fd->cap, s);
  return 0;
}

/* The values of the roles (TC_FR_*) for element e of fragment which (0:
 * A, 1: B, 2: the accumulators) of this lane: the PTX ISA's mma.sync
 * m16n8k16 layouts (above). */
static void mma_vars(tc_epool *p, const tc_frag_shape *sh, const tc_expr *lane, int which, int e,
                     const tc_expr **v) {
  const tc_expr *t = tc_e_modc(p, lane, 4), *g = tc_e_divc(p, lane, 4), *z = tc_e_const(p, 0);
  int r = e / 2, h = e % 2;
  v[TC_FR_MPOST] = z;
  if (which == 0) { /* A register r, half h */
    v[TC_FR_MPRE] = tc_e_const(p, r % 2), v[TC_FR_NPOST] = z;
    v[TC_FR_K] = tc_e_addc(p, tc_e_mulc(p, t, 2), 8 * (r / 2) + h), v[TC_FR_LANE] = lane;
  } else if (which == 1) { /* B register r, half h */
    v[TC_FR_MPRE] = z, v[TC_FR_NPOST] = tc_e_modc(p, g, 2);
    v[TC_FR_K] = tc_e_addc(p, tc_e_mulc(p, t, 2), 8 * r + h), v[TC_FR_LANE] = tc_e_divc(p, lane, 8);
  } else { /* accumulator e */
    v[TC_FR_MPRE] = tc_e_const(p, e / 2), v[TC_FR_NPOST] = tc_e_const(p, e % 2);
    v[TC_FR_K] = z, v[TC_FR_LANE] = lane;
  }
}

/* e with the variables of the roles that have one (rid[r] >= 0)
 * replaced by v[r]. */
static const tc_expr *subst_roles(tc_epool *p, const tc_expr *e, const int64_t *rid,
                                  const tc_expr *const *v) {
  int64_t ids[TC_FR_N];
  const tc_expr *vals[TC_FR_N];
  int n = 0;
  for (int r = 0; r < TC_FR_N; r++)
    if (rid[r] >= 0) ids[n] = rid[r], vals[n++] = v[r];
  return tc_simplify(p, tc_e_subst(p, e, n, ids, vals));
}

static tc_status lower_stmt(tc_kir *k, tc_knode *s, tc_target target, const char *arch) {
  tc_fusion *f = k->f;
  tc_op *op = s->stmt.op;
  const tc_frag_shape *sh = tc_frag_shape_of(op->out->macro);
  bool mfma = sh->macro != TC_MACRO_MMA_M16N8K16;
  tc_target_info ti;
  tc_target_info_make(target, arch, &ti, NULL);
  if (mfma) {
    tc_status st = tc_mfma_check_target(f, op, sh, target, &ti);
    if (st) return st;
  } else {
    tc_status st = tc_nv_macro_check(f, op, target, &ti, TC_FEAT_MMA_SYNC, "mma.sync m16n8k16", "",
                                     " with f16/bf16 operands", "sm_80 or later", "");
    if (st) return st;
  }
  tc_dtype in = op->in[0]->dtype;
  if ((in != TC_F16 && in != TC_BF16) || op->in[1]->dtype != in)
    return tc_fail(f, TC_ERR_UNSUPPORTED, "compile: %s multiplies f16 or bf16 operands, but %s's "
                   "are %s", sh->name, op->out->name, tc_dtype_name(in));
  if (k->block[0] != sh->lanes || !s->stmt.in_index[0] || !s->stmt.in_index[1])
    return tc_fail(f, TC_ERR_SCHEDULE, "compile: %s's %s needs the %lld lanes of a %s on TIDx "
                   "(the block has %lld)", op->out->name, sh->name, (long long)sh->lanes,
                   sh->unit, (long long)k->block[0]);
  /* the loops: the K steps, then a lane's values inside out */
  int nc = (int)(sh->m * sh->n / sh->lanes);
  int64_t rid[TC_FR_N] = {-1, -1, -1, -1, -1};
  static const int roles[3] = {TC_FR_NPOST, TC_FR_MPOST, TC_FR_MPRE};
  int64_t ext[3] = {sh->n_post, sh->m_post, sh->m_pre};
  tc_knode *loops[4], *l = tc_mma_only_loop(s, sh->k);
  int nl = 0;
  if (l) loops[nl++] = l, rid[TC_FR_K] = l->loop.var->val;
  for (int i = 0; i < 3 && l; i++) {
    if (ext[i] == 1) continue;
    if ((l = tc_mma_only_loop(l, ext[i]))) loops[nl++] = l, rid[roles[i]] = l->loop.var->val;
  }
  if (!l)
    return tc_fail(f, TC_ERR_SCHEDULE, "compile: %s's statement is not inside the loops of one "
                   "lane's %d accumulators and the %lld K steps of %s (schedule it with "
                   "tc_schedule_matmul)", op->out->name, nc, (long long)sh->k, sh->name);
  tc_epool *p = k->pool;
  const tc_expr *lane = k->pvar[3];
  rid[TC_FR_LANE] = lane->val;
  /* the predicate's terms (edges of M, N and K) split by operand: A's
   * are those without a column's value (with its rows or K: where the
   * columns have no value loop, as in MFMA, a term with none of them is
   * the columns' through the lane), B's those without a row's value */
  const tc_expr *terms[64], *pa = tc_e_const(p, 1), *pb = pa;
  int nt = 0;
  if (!split_terms(s->stmt.pred, terms, &nt, 64))
    return tc_fail(f, TC_ERR_SCHEDULE, "compile: %s's predicate has too many terms for an %s",
                   op->out->name, sh->name);
  bool ncol = rid[TC_FR_NPOST] >= 0;
  for (int i = 0; i < nt; i++) {
    bool ui = (rid[TC_FR_MPRE] >= 0 && tc_e_uses(terms[i], rid[TC_FR_MPRE])) ||
              (rid[TC_FR_MPOST] >= 0 && tc_e_uses(terms[i], rid[TC_FR_MPOST]));
    bool uj = ncol && tc_e_uses(terms[i], rid[TC_FR_NPOST]), uk = tc_e_uses(terms[i], rid[TC_FR_K]);
    /* a term of block indices and size variables alone (a block axis's
     * extent over a size variable, docs/dynamic.md) holds for the whole
     * warp or not at all: it guards both operands' fragments */
    bool uniform = !ui && !uj && !uk;
    for (int t = 3; t < 6 && uniform; t++) uniform = !tc_e_uses(terms[i], k->pvar[t]->val);
    if (uniform) {
      pa = tc_e_land(p, pa, terms[i]), pb = tc_e_land(p, pb, terms[i]);
      continue;
    }
    if ((ui && uj) || (ncol && !ui && !uj && !uk))
      return tc_fail(f, TC_ERR_SCHEDULE, "compile: %s's %s cannot tell which operand a condition "
                     "of its predicate bounds (M, N or K); schedule it with tc_schedule_matmul",
                     op->out->name, sh->name);
    if (!uj && (ncol || ui || uk)) pa = tc_e_land(p, pa, terms[i]);
    if (!ui) pb = tc_e_land(p, pb, terms[i]);
  }
  tc_kmma *m = &s->stmt.mma;
  m->kind = sh->macro, m->in = in, m->nc = nc;
  const tc_expr *v[TC_FR_N];
  for (int e = 0; e < (mfma ? 4 : 8); e++) { /* A */
    if (mfma) tc_mfma_vars(p, sh, lane, 0, e, v);
    else mma_vars(p, sh, lane, 0, e, v);
    m->a[e] = subst_roles(p, s->stmt.in_index[0], rid, v);
    m->pa[e] = subst_roles(p, pa, rid, v);
  }
  for (int e = 0; e < 4; e++) { /* B */
    if (mfma) tc_mfma_vars(p, sh, lane, 1, e, v);
    else mma_vars(p, sh, lane, 1, e, v);
    m->b[e] = subst_roles(p, s->stmt.in_index[1], rid, v);
    m->pb[e] = subst_roles(p, pb, rid, v);
  }
  s->stmt.pred = tc_e_const(p, 1); /* the whole warp runs the instruction */
  for (int e = 0; e < nc; e++) { /* the accumulators */
    if (mfma) tc_mfma_vars(p, sh, lane, 2, e, v);
    else mma_vars(p, sh, lane, 2, e, v);
    m->c[e] = subst_roles(p, s->stmt.out_index, rid, v);
  }
  inject_fault(m);
  if (!mfma && !tc_test_hooks_get()->mma_scalar_fragments) {
    int64_t ids[4] = {rid[TC_FR_MPRE], rid[TC_FR_NPOST], rid[TC_FR_K], rid[TC_FR_LANE]};
    try_ldsm(k, s, m, ids);
  }
  tc_mma_take_loops(s, loops[nl - 1]); /* the statement takes the place of the loops */
  k->nmma++;
  k->mma_kind = sh->macro;
  k->mma_warps = (int)(k->block[0] * k->block[1] * k->block[2] / sh->lanes);
  return TC_OK;
}

tc_status tc_mma_lower(tc_kir *k, tc_target target, const char *arch) {
  found fd = {0};
  tc_knode_each_stmt(k->root, collect, &fd); /* then changed, not while walking */
  tc_status st = TC_OK;
  for (int i = 0; i < fd.n && !st; i++) st = lower_stmt(k, fd.s[i], target, arch);
  free(fd.s);
  return st;
}
