/* ldst.c - ldmatrix / stmatrix (.x1/.x2/.x4, plain or .trans) after
 * allocation and indexing (see ldst.h and docs/ldmatrix.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sched/sched.h"
#include "../target/target.h"
#include "ldst.h"
#include "../base/test_hooks.h"

void tc_ldsm_fragment(int trans, int64_t lane, int v, int64_t *row, int64_t *col) {
  int64_t l = lane % 32;
  if (trans)
    *row = 2 * (l % 4) + v % 2, *col = l / 4;
  else
    *row = l / 4, *col = 2 * (l % 4) + v % 2;
}

typedef struct itv {
  int64_t id;
  int64_t vals[4];
  int n;          /* values: 0..n-1 when !sampled, else vals[0..n) */
  int sampled;
} itv;

/* The first counterexample check() finds (kind 0: none). */
typedef struct ldsm_bad {
  int kind;       /* 1: a register the rule does not reproduce; 2: a misaligned row */
  int64_t t;      /* the thread */
  int v;          /* its vector element (kind 1) */
  int64_t want;   /* the register side's shared element (kind 1), the row address (kind 2) */
  int64_t got;    /* the element by the fragment rule (kind 1) */
} ldsm_bad;

/* Checks, by evaluation, that the row addresses `addr` reproduce the
 * register side `sh` (the statement's shared index, vector variable vid)
 * through the fragment rule of the variant (num matrices, trans), and that
 * rows are 16-byte aligned. */
static ldsm_bad check(tc_kir *k, tc_knode *s, const tc_expr *sh, const tc_expr *addr, int64_t vid,
                      int num, int trans) {
  tc_epool *p = k->pool;
  itv iv[40];
  int niv = 0;
  for (tc_knode *n = s->parent; n && niv < 36; n = n->parent) {
    if (n->kind != TC_K_LOOP || n == s->stmt.ldsm.vec || !tc_e_uses(sh, n->loop.var->val)) continue;
    iv[niv].id = n->loop.var->val, iv[niv].n = (int)n->loop.extent, iv[niv].sampled = 0;
    niv++;
  }
  for (int d = 0; d < 3; d++) {
    int64_t id = k->pvar[d]->val;
    if (k->grid[d] <= 1 || !tc_e_uses(sh, id)) continue;
    iv[niv].id = id, iv[niv].n = 2, iv[niv].sampled = 1;
    iv[niv].vals[0] = 0, iv[niv].vals[1] = k->grid[d] - 1;
    niv++;
  }
  int64_t threads = k->block[0] * k->block[1] * k->block[2];
  double work = (double)threads * 2 * num;
  for (int i = 0; i < niv; i++) work *= iv[i].n;
  if (work > (double)(1 << 21))
    for (int i = 0; i < niv; i++) {
      if (iv[i].sampled) continue;
      int64_t e = iv[i].n, cand[4] = {0, 1, e / 2, e - 1};
      int m = 0;
      for (int c = 0; c < 4; c++) {
        bool dup = cand[c] >= e;
        for (int j = 0; j < m; j++) dup |= iv[i].vals[j] == cand[c];
        if (!dup) iv[i].vals[m++] = cand[c];
      }
      iv[i].n = m, iv[i].sampled = 1;
    }
  int64_t *vars = tc_xcalloc((size_t)tc_e_num_vars(p) + 1, sizeof(int64_t));
  int64_t *rows = tc_xmalloc((size_t)threads * sizeof(int64_t));
  int idx[40] = {0};
  ldsm_bad bad = {0};
  for (;;) {
    for (int i = 0; i < niv; i++) vars[iv[i].id] = iv[i].sampled ? iv[i].vals[idx[i]] : idx[i];
    for (int64_t t = 0; t < threads; t++) {
      vars[k->pvar[3]->val] = t % k->block[0];
      vars[k->pvar[4]->val] = t / k->block[0] % k->block[1];
      vars[k->pvar[5]->val] = t / (k->block[0] * k->block[1]);
      vars[vid] = 0;
      rows[t] = tc_e_eval(addr, vars);
    }
    for (int64_t t = 0; t < threads && !bad.kind; t++) {
      vars[k->pvar[3]->val] = t % k->block[0];
      vars[k->pvar[4]->val] = t / k->block[0] % k->block[1];
      vars[k->pvar[5]->val] = t / (k->block[0] * k->block[1]);
      for (int v = 0; v < 2 * num && !bad.kind; v++) {
        vars[vid] = v;
        int64_t want = tc_e_eval(sh, vars), row, col;
        tc_ldsm_fragment(trans, t, v, &row, &col);
        int64_t got = rows[t - t % 32 + 8 * (v / 2) + row] + col;
        if (want != got) bad = (ldsm_bad){1, t, v, want, got};
      }
    }
    for (int64_t t = 0; t < threads && !bad.kind; t++)
      if (rows[t] * 2 % 16 != 0) bad = (ldsm_bad){2, t, 0, rows[t], 0};
    if (bad.kind) break;
    int i = 0;
    while (i < niv && ++idx[i] == iv[i].n) idx[i++] = 0;
    if (i == niv) break;
  }
  free(vars), free(rows);
  return bad;
}

/* The row addresses of the variant (num, trans), derived from the register
 * side sh by inverting the fragment rule: row r of matrix j is supplied by
 * lane 8j + r and is (row r, column 0) of matrix j, which register
 * (lane 4r, element 2j) holds, or with .trans register (lane r/2, element
 * 2j + r%2).  Lanes 8num..31 (ignored by .x1/.x2) repeat matrix j % num. */
static const tc_expr *derive_addr(tc_kir *k, const tc_expr *sh, int64_t vid, int num, int trans) {
  tc_epool *p = k->pool;
  const tc_expr *tidx = k->pvar[3];
  const tc_expr *r = tc_e_modc(p, tidx, 8);
  if (tc_test_hooks_get()->ldsm_fault == 2) r = tc_e_sub(p, tc_e_const(p, 7), r); /* rows reversed */
  const tc_expr *j = tc_e_divc(p, tc_e_modc(p, tidx, 32), 8);
  if (num < 4) j = tc_e_modc(p, j, num);
  const tc_expr *warp = tc_e_mulc(p, tc_e_divc(p, tidx, 32), 32);
  const tc_expr *lane, *v;
  if (trans) {
    lane = tc_e_divc(p, r, 2);
    v = tc_e_add(p, tc_e_mulc(p, j, 2), tc_e_modc(p, r, 2));
  } else {
    lane = tc_e_mulc(p, r, 4);
    v = tc_e_mulc(p, j, 2);
  }
  int64_t ids[2] = {tidx->val, vid};
  const tc_expr *vals[2] = {tc_e_add(p, warp, lane), v};
  return tc_simplify(p, tc_e_subst(p, sh, 2, ids, vals));
}

static const char *type_name(bool ld, int trans) {
  return ld ? (trans ? "TC_LDST_LDMATRIX_TRANS" : "TC_LDST_LDMATRIX")
            : (trans ? "TC_LDST_STMATRIX_TRANS" : "TC_LDST_STMATRIX");
}

static tc_status lower_stmt(tc_kir *k, tc_knode *s, tc_target target, const char *arch) {
  tc_fusion *f = k->f;
  tc_op *op = s->stmt.op;
  bool ld = op->ldst == TC_LDST_LDMATRIX || op->ldst == TC_LDST_LDMATRIX_TRANS;
  int trans = op->ldst == TC_LDST_LDMATRIX_TRANS || op->ldst == TC_LDST_STMATRIX_TRANS;
  const char *ins = ld ? "ldmatrix" : "stmatrix";
  tc_tensor *out = op->out, *in = op->nin > 0 ? op->in[0] : NULL;
  char what[160];
  if (op->kind != TC_OP_SET || op->nin != 1)
    return tc_fail(f, TC_ERR_SCHEDULE,
                   "compile: %s's load/store type is %s, but it is not computed by a set (a copy)",
                   out->name, type_name(ld, trans));
  tc_knode *vec = s->parent && s->parent->kind == TC_K_LOOP && s->parent->loop.ptype == TC_VECTORIZE
                      ? s->parent : NULL;
  int64_t vext = vec ? vec->loop.extent : 0;
  int num = vext == 2 || vext == 4 || vext == 8 ? (int)vext / 2 : 0;
  if (num)
    snprintf(what, sizeof what, "%s.x%d%s of %s = %s", ins, num, trans ? ".trans" : "", out->name,
             in->name);
  else
    snprintf(what, sizeof what, "%s%s of %s = %s", ins, trans ? ".trans" : "", out->name, in->name);
  tc_tensor *sm = ld ? in : out, *reg = ld ? out : in;
  if (sm->mem != TC_MEM_SHARED || reg->mem != TC_MEM_LOCAL)
    return tc_fail(f, TC_ERR_SCHEDULE,
                   "compile: the %s copies %s memory to %s memory, but %s copies %s",
                   what, tc_memtype_name(in->mem), tc_memtype_name(out->mem), ins,
                   ld ? "shared memory to registers (local memory)"
                      : "registers (local memory) to shared memory");
  if (tc_dtype_size(sm->dtype) != 2 || tc_dtype_size(reg->dtype) != 2 || sm->dtype != reg->dtype)
    return tc_fail(f, TC_ERR_SCHEDULE,
                   "compile: the %s moves %s -> %s, but m8n8 .b16 %s moves 16-bit elements (f16 or "
                   "bf16) of one type",
                   what, tc_dtype_name(in->dtype), tc_dtype_name(out->dtype), ins);
  tc_target_info ti;
  tc_target_info_make(target, arch, &ti, NULL); /* a bad arch has no ldmatrix */
  if (!(ti.features & (ld ? TC_FEAT_LDMATRIX : TC_FEAT_STMATRIX))) {
    if (ti.family != TC_ARCH_SM)
      return tc_fail(f, TC_ERR_UNSUPPORTED,
                     "compile: the %s: target %s has no %s (an NVIDIA instruction; the OpenCL "
                     "target emulates it): use TC_LDST_DEFAULT", what, ti.name, ins);
    return tc_fail(f, TC_ERR_UNSUPPORTED,
                   "compile: the %s needs arch sm_%d or later, but the arch is %s%s", what,
                   ld ? 75 : 90, ti.arch, ti.arch_given ? "" : " (the default)");
  }
  if (!num)
    return tc_fail(f, TC_ERR_SCHEDULE,
                   "compile: the %s needs an innermost Vectorize axis of 2, 4 or 8 elements (one "
                   "thread's share of one, two or four 8x8 matrices: .x1, .x2 or .x4, one 32-bit "
                   "register of two 16-bit elements per matrix), but %s's innermost loop is %s%lld",
                   what, out->name, vec ? "Vectorize of " : "not vectorized, extent ",
                   (long long)(vec ? vext
                                   : (s->parent && s->parent->kind == TC_K_LOOP ? s->parent->loop.extent : 1)));
  if (vec->nbody != 1)
    return tc_fail(f, TC_ERR_SCHEDULE, "compile: the vectorized loop of the %s holds other statements",
                   what);
  if (k->block[0] % 32 != 0)
    return tc_fail(f, TC_ERR_SCHEDULE,
                   "compile: the %s is warp-collective, but the TIDx extent %lld is not a multiple "
                   "of 32, so a warp would span several TIDy rows or be partial",
                   what, (long long)k->block[0]);
  if (!tc_e_is_const(s->stmt.pred, 1))
    return tc_fail(f, TC_ERR_SCHEDULE,
                   "compile: the %s is predicated (a split that does not divide, or a thread "
                   "extent below the block's); %s is warp-collective and moves whole matrices: "
                   "make the tile divide the tensor", what, ins);
  const tc_expr *sh = ld ? s->stmt.in_index[0] : s->stmt.out_index;
  int64_t vid = vec->loop.var->val;
  s->stmt.ldsm.vec = vec;
  /* fault 1 (tests): the other transposition's addresses, unchecked */
  const tc_expr *addr = derive_addr(k, sh, vid, num, tc_test_hooks_get()->ldsm_fault == 1 ? !trans : trans);
  ldsm_bad bad = tc_test_hooks_get()->ldsm_fault ? (ldsm_bad){0} : check(k, s, sh, addr, vid, num, trans);
  if (bad.kind == 1) {
    /* would the other transposition serve? then say so */
    ldsm_bad other = check(k, s, sh, derive_addr(k, sh, vid, num, !trans), vid, num, !trans);
    char hint[160] = "";
    if (!other.kind)
      snprintf(hint, sizeof hint, " (they are the %s fragment: use %s)",
               trans ? "plain (not .trans)" : ".trans", type_name(ld, !trans));
    int64_t l = bad.t % 32, row, col;
    tc_ldsm_fragment(trans, l, bad.v, &row, &col);
    return tc_fail(f, TC_ERR_LOWER,
                   "compile: the %s: the registers are not an m8n8.x%d%s fragment%s: thread %lld "
                   "(lane %lld) vector element %d is element %lld of shared memory, but by the "
                   "fragment rule it would be element %lld (row %lld, column %lld of matrix %d, "
                   "whose row addresses come from lanes %d..%d); schedule the register side as "
                   "nvFuser's scheduleLdStMatrix does (docs/ldmatrix.md), or use TC_LDST_DEFAULT",
                   what, num, trans ? ".trans" : "", hint, (long long)bad.t, (long long)l, bad.v,
                   (long long)bad.want, (long long)bad.got, (long long)row, (long long)col,
                   bad.v / 2, 8 * (bad.v / 2), 8 * (bad.v / 2) + 7);
  }
  if (bad.kind == 2)
    return tc_fail(f, TC_ERR_LOWER,
                   "compile: the %s: thread %lld supplies the row address of element %lld, "
                   "which is not 16-byte aligned; every 8x8 matrix row must be 16 contiguous, "
                   "aligned bytes of shared memory",
                   what, (long long)bad.t, (long long)bad.want);
  s->stmt.ldsm.kind = ld ? TC_LDSM_LD : TC_LDSM_ST;
  s->stmt.ldsm.num = num;
  s->stmt.ldsm.trans = trans;
  s->stmt.ldsm.addr = addr;
  k->nldsm++;
  return TC_OK;
}

typedef struct ldst_ctx {
  tc_kir *k;
  tc_target target;
  const char *arch;
} ldst_ctx;

static int lower_each(tc_knode *n, void *ctx) {
  ldst_ctx *c = ctx;
  if (n->stmt.op->ldst == TC_LDST_LDMATRIX || n->stmt.op->ldst == TC_LDST_LDMATRIX_TRANS ||
      n->stmt.op->ldst == TC_LDST_STMATRIX || n->stmt.op->ldst == TC_LDST_STMATRIX_TRANS)
    return lower_stmt(c->k, n, c->target, c->arch);
  return TC_OK;
}

tc_status tc_ldst_lower(tc_kir *k, tc_target target, const char *arch) {
  ldst_ctx c = {k, target, arch};
  return tc_knode_each_stmt(k->root, lower_each, &c);
}
