/* wgmma.c - a matmul's statement as one warp-group wgmma.mma_async
 * m64nNk16 (see mma.h; the layouts are the PTX ISA's "Register Fragments
 * and Shared Memory Matrix Layouts" of wgmma, and "Matrix Descriptor
 * Format").
 *
 * The schedule (src/sched/matmul_wgmma.c) gives the accumulator the D
 * fragment layout as loop axes [jb, ihi, lane:TIDx, jlo, k16] with the
 * lane = 32 w + 4 ilo + jhi, the 64 rows 16 w + 8 ihi + ilo and the N
 * columns 8 jb + 2 jhi + jlo.  So, in the statement's indices:
 *   accumulator j: jb := j / 4, ihi := (j / 2) % 2, jlo := j % 2;
 *   A element (row r < 64, k < 16): ihi := (r / 8) % 2, tidx := 32 (r /
 *     16) + 4 (r % 8), k16 := k (A reads no column);
 *   B element (column c < N, k < 16): jb := c / 8, tidx := (c % 8) / 2,
 *     jlo := c % 2, k16 := k (B reads no row).
 * The descriptors are derived from those indices, that is from the
 * allocation of the shared tiles: start = the element (0, 0), and the
 * byte offsets of every element, evaluated for every value of the other
 * variables (the K step, the warp group), must be those of a canonical
 * K-major or M/N-major layout (point_ok below lists the four; an M/N-major
 * tile sets imm-trans-a / imm-trans-b), without swizzle or with the 128B
 * swizzle (bits 4-6 of the address XORed with bits 7-9, a tile 1024-byte
 * aligned).  Anything else is refused.
 * Edges: the instruction runs on whole tiles, so the statements storing
 * the operand tiles store 0 past M, N and K (zfill) and the accumulator's
 * predicate goes: products past an edge are 0 and land only in
 * accumulators that are never stored. */
#include <stdio.h>
#include <stdlib.h>

#include "../base/test_hooks.h"
#include "../target/target.h"
#include "mma.h"

#define WGMMA_POINTS 4096 /* assignments of the other variables checked at most */

static bool is_wgmma(const tc_knode *s) {
  const tc_op *op = s->stmt.op;
  return s->stmt.red.kind == TC_RED_ACC && op->kind == TC_OP_MATMUL &&
         op->out->macro == TC_MACRO_WGMMA;
}

/* One operand's layout check: idx[r * 16 + k] its elements' indices. */
typedef struct operand {
  int which;               /* 0: A (the op's in[0]), 1: B (in[1]) */
  int rows;                /* 64 (A) or N (B) */
  const tc_expr **idx;
  const tc_expr *start;
  int64_t offset;          /* the tile's byte offset in shared memory */
  int64_t ids[16];         /* the other variables */
  int nids;
  /* derived */
  int64_t lbo, sbo;
  int swz;                 /* -1 not yet known; 0 none; 1 128B */
  int mn;                  /* 0 K-major; 1 M- / N-major (the rows innermost) */
} operand;

static int64_t swizzle128(int64_t b) { return b ^ (((b >> 7) & 7) << 4); }

/* The byte distance from the start to element (r, k), which must come out
 * of the swizzle unchanged (its 128-byte row index a multiple of 8). */
static int64_t step(const operand *x, const int64_t *vars, int r, int k) {
  return 2 * (tc_e_eval(x->idx[r * 16 + k], vars) - tc_e_eval(x->start, vars));
}

/* Whether the byte addresses under the variables in vars fit the
 * canonical layout of mode swz, K-major or M/N-major (x->mn), deriving LBO
 * and SBO at the first call.  The PTX ISA's canonical layouts, T = 8
 * 16-bit elements, r the row of A (M) or of B (N):
 *   K-major  ((8,m),(T,2k)):((1T,SBO),(1,LBO))   (r / 8) SBO + (r % 8) 16 + (k / 8) LBO + (k % 8) 2
 *            128B: ((8,m),(T,2k)):((8T,SBO),(1,T)) (r / 8) SBO + (r % 8) 128 + 2 k
 *   MN-major ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)) (r / 8) SBO + (r % 8) 2 + (k / 8) LBO + (k % 8) 16
 *            128B: ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)) (r / 64) LBO + (r % 64) 2 + (k / 8) SBO
 *            + (k % 8) 128
 * with the 128B swizzle's XOR of address bits 4-6 with bits 7-9. */
static bool point_ok(operand *x, const int64_t *vars, int swz) {
  int64_t base = x->offset + 2 * tc_e_eval(x->start, vars);
  if (base % 16) return false;
  if (x->swz < 0) {
    /* (a single group along an axis: its offset is unused, 0) */
    if (!x->mn) {
      x->sbo = x->rows > 8 ? step(x, vars, 8, 0) : 0;
      x->lbo = swz ? 16 : step(x, vars, 0, 8);
    } else if (swz) {
      x->lbo = x->rows > 64 ? step(x, vars, 64, 0) : 0;
      x->sbo = step(x, vars, 0, 8);
    } else {
      x->sbo = x->rows > 8 ? step(x, vars, 8, 0) : 0;
      x->lbo = step(x, vars, 0, 8);
    }
    if (x->sbo < 0 || x->sbo % 16 || x->sbo >= (1 << 18) || x->lbo < 0 || x->lbo % 16 ||
        x->lbo >= (1 << 18) ||
        (swz && (x->offset % 1024 || x->sbo % 1024 || (x->mn && x->lbo % 1024))))
      return false;
  }
  for (int r = 0; r < x->rows; r++)
    for (int k = 0; k < 16; k++) {
      int64_t got = x->offset + 2 * tc_e_eval(x->idx[r * 16 + k], vars), want;
      if (swz && !x->mn) want = swizzle128(base + (r / 8) * x->sbo + (r % 8) * 128 + 2 * k);
      else if (swz)
        want = swizzle128(base + (r / 64) * x->lbo + (r % 64) * 2 + (k / 8) * x->sbo + (k % 8) * 128);
      else if (!x->mn) want = base + (r / 8) * x->sbo + (r % 8) * 16 + (k / 8) * x->lbo + (k % 8) * 2;
      else want = base + (r / 8) * x->sbo + (r % 8) * 2 + (k / 8) * x->lbo + (k % 8) * 16;
      if (got != want) return false;
    }
  return true;
}

static bool all_ok(operand *x, tc_epool *p, int64_t *vars, int i, int swz) {
  if (i == x->nids) {
    bool ok = point_ok(x, vars, swz);
    if (x->swz < 0) x->swz = ok ? swz : -2;
    return ok;
  }
  int64_t lo, hi;
  tc_e_var_range(p, (int)x->ids[i], &lo, &hi);
  for (int64_t v = lo; v <= hi; v++) {
    vars[x->ids[i]] = v;
    if (!all_ok(x, p, vars, i + 1, swz)) return false;
  }
  return true;
}

/* Derives x's descriptor fields from its elements' indices, or fails. */
static tc_status derive(tc_kir *k, operand *x, const tc_op *op) {
  tc_epool *p = k->pool;
  int64_t points = 1;
  for (int id = 0; id < tc_e_num_vars(p); id++) {
    bool used = tc_e_uses(x->start, id);
    for (int e = 0; e < x->rows * 16 && !used; e++) used = tc_e_uses(x->idx[e], id);
    if (!used) continue;
    int64_t lo, hi;
    tc_e_var_range(p, id, &lo, &hi);
    if (x->nids == 16 || (points *= hi - lo + 1) > WGMMA_POINTS)
      return tc_fail(k->f, TC_ERR_SCHEDULE, "compile: %s's wgmma reads its %s tile %s through "
                     "indices of too many other values to check its layout (schedule it with "
                     "tc_schedule_matmul)", op->out->name, x->which ? "B" : "A", op->in[x->which]->name);
    x->ids[x->nids++] = id;
  }
  int64_t *vars = tc_xcalloc((size_t)tc_e_num_vars(p) + 1, sizeof *vars);
  bool ok = false;
  for (int mode = 0; mode < 4 && !ok; mode++) { /* K-major, then M/N-major; no swizzle, then 128B */
    x->swz = -1, x->mn = mode / 2;
    ok = all_ok(x, p, vars, 0, mode % 2);
  }
  free(vars);
  if (!ok)
    return tc_fail(k->f, TC_ERR_SCHEDULE, "compile: %s's wgmma reads its %s operand from %s, "
                   "whose shared layout is not one a wgmma matrix descriptor expresses (K- or "
                   "M/N-major 8 x 16-byte core matrices, or 128-byte swizzled rows 1024-byte "
                   "aligned, 16-byte aligned starts; schedule it with tc_schedule_matmul)",
                   op->out->name, x->which ? "B" : "A", op->in[x->which]->name);
  return TC_OK;
}

/* Tests only (tc_test_hooks.wgmma_lower_fault): a wrong descriptor,
 * which the OpenCL emulation (reading through it) must catch. */
static void inject_fault(tc_kmma *m) {
  switch (tc_test_hooks_get()->wgmma_lower_fault) {
    case 1: /* (LBO is unused with the 128B swizzle) */
      if (m->swz_a) m->sbo_a += 16;
      else m->lbo_a += 16;
      break;
    case 2: m->sbo_b += 16; break;
    case 3: m->swz_a = !m->swz_a; break;
    case 4: m->trans_b = !m->trans_b; break;
    default: break;
  }
}

typedef struct found {
  tc_knode **s;
  int n, cap;
} found;

static int collect(tc_knode *s, void *ctx) {
  found *fd = ctx;
  if (is_wgmma(s)) TC_PUSH(fd->s, fd->n, fd->cap, s);
  return 0;
}

/* The statements storing the operand tiles store 0 past the edges. */
static int mark_zfill(tc_knode *s, void *ctx) {
  const tc_op *mm = ctx;
  if (s->stmt.red.kind == TC_RED_NONE && s->stmt.inner_pred &&
      (s->stmt.op->out == mm->in[0] || s->stmt.op->out == mm->in[1]))
    s->stmt.zfill = 1;
  return 0;
}

static const tc_expr *subst(tc_epool *p, const tc_expr *e, const int64_t *ids, const tc_expr *const *v) {
  return tc_simplify(p, tc_e_subst(p, e, 5, ids, v));
}

static tc_status lower_stmt(tc_kir *k, tc_knode *s, tc_target target, const char *arch) {
  tc_fusion *f = k->f;
  tc_op *op = s->stmt.op;
  tc_target_info ti;
  tc_target_info_make(target, arch, &ti, NULL);
  tc_status cs = tc_nv_macro_check(f, op, target, &ti, TC_FEAT_WGMMA, "wgmma m64nNk16", "sm_90a ", "",
                                   "sm_90a", " (mma.sync m16n8k16 runs on sm_80 and newer)");
  if (cs) return cs;
  tc_dtype in = op->in[0]->dtype;
  if ((in != TC_F16 && in != TC_BF16) || op->in[1]->dtype != in)
    return tc_fail(f, TC_ERR_UNSUPPORTED, "compile: wgmma m64nNk16 here multiplies f16 or bf16 "
                   "operands, but %s's are %s", op->out->name, tc_dtype_name(in));
  if (k->block[0] != 128 || !s->stmt.in_index[0] || !s->stmt.in_index[1] ||
      op->in[0]->mem != TC_MEM_SHARED || op->in[1]->mem != TC_MEM_SHARED)
    return tc_fail(f, TC_ERR_SCHEDULE, "compile: %s's wgmma needs the 128 threads of a warp group "
                   "on TIDx (the block has %lld) and both operands in shared memory",
                   op->out->name, (long long)k->block[0]);
  tc_knode *lk = tc_mma_only_loop(s, 16), *lj = lk ? tc_mma_only_loop(lk, 2) : NULL;
  tc_knode *li = lj ? tc_mma_only_loop(lj, 2) : NULL;
  tc_knode *lb = li && li->parent->kind == TC_K_LOOP && li->parent->nbody == 1 ? li->parent : NULL;
  int n = lb ? (int)lb->loop.extent * 8 : 0;
  if (!lb || n > 256)
    return tc_fail(f, TC_ERR_SCHEDULE, "compile: %s's statement is not inside the loops of one "
                   "thread's accumulators and the 16 K steps of wgmma m64nNk16 (schedule it with "
                   "tc_schedule_matmul)", op->out->name);
  tc_epool *p = k->pool;
  const tc_expr *z = tc_e_const(p, 0), *lane = k->pvar[3];
  int64_t ids[5] = {lb->loop.var->val, li->loop.var->val, lj->loop.var->val, lk->loop.var->val,
                    lane->val};
  tc_kmma *m = &s->stmt.mma;
  /* the accumulators: out[c0 + j] */
  const tc_expr *cv[5] = {z, z, z, z, lane};
  m->c0 = subst(p, s->stmt.out_index, ids, cv);
  for (int j = 1; j < n / 2; j++) {
    const tc_expr *v[5] = {tc_e_const(p, j / 4), tc_e_const(p, (j / 2) % 2), tc_e_const(p, j % 2), z, lane};
    if (!tc_e_is_const(tc_simplify(p, tc_e_sub(p, subst(p, s->stmt.out_index, ids, v), m->c0)), j))
      return tc_fail(f, TC_ERR_SCHEDULE, "compile: %s's wgmma needs a thread's %d accumulators "
                     "contiguous in the order of the D fragment (schedule it with "
                     "tc_schedule_matmul)", op->out->name, n / 2);
  }
  /* the operands' elements */
  operand x[2] = {{0, 64, NULL, NULL, 0, {0}, 0, 0, 0, -1, 0}, {1, n, NULL, NULL, 0, {0}, 0, 0, 0, -1, 0}};
  tc_status st = TC_OK;
  for (int o = 0; o < 2 && !st; o++) {
    const tc_kalloc *al = tc_kir_alloc_of(k, op->in[o]);
    x[o].offset = al ? al->offset : 0;
    x[o].idx = tc_xcalloc((size_t)x[o].rows * 16, sizeof *x[o].idx);
    for (int r = 0; r < x[o].rows; r++)
      for (int kk = 0; kk < 16; kk++) {
        const tc_expr *va[5] = {z, tc_e_const(p, (r / 8) % 2), z, tc_e_const(p, kk),
                                tc_e_const(p, 32 * (r / 16) + 4 * (r % 8))};
        const tc_expr *vb[5] = {tc_e_const(p, r / 8), z, tc_e_const(p, r % 2), tc_e_const(p, kk),
                                tc_e_const(p, (r % 8) / 2)};
        x[o].idx[r * 16 + kk] = subst(p, s->stmt.in_index[o], ids, o ? vb : va);
      }
    x[o].start = x[o].idx[0];
    st = derive(k, &x[o], op);
  }
  if (!st) {
    m->kind = TC_MACRO_WGMMA, m->in = in, m->n = n;
    m->start_a = x[0].start, m->lbo_a = x[0].lbo, m->sbo_a = x[0].sbo, m->swz_a = x[0].swz;
    m->start_b = x[1].start, m->lbo_b = x[1].lbo, m->sbo_b = x[1].sbo, m->swz_b = x[1].swz;
    m->trans_a = x[0].mn, m->trans_b = x[1].mn;
    inject_fault(m);
    s->stmt.pred = tc_e_const(p, 1); /* whole tiles: the edges are zeros */
    tc_mma_take_loops(s, lb);
    tc_knode_each_stmt(k->root, mark_zfill, op);
    k->nwgmma++;
  }
  free(x[0].idx), free(x[1].idx);
  return st;
}

tc_status tc_wgmma_lower(tc_kir *k, tc_target target, const char *arch) {
  found fd = {0};
  tc_knode_each_stmt(k->root, collect, &fd); /* then changed, not while walking */
  tc_status st = TC_OK;
  for (int i = 0; i < fd.n && !st; i++) st = lower_stmt(k, fd.s[i], target, arch);
  free(fd.s);
  return st;
}
