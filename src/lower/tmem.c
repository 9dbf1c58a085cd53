/* tmem.c - tensor memory after allocation and indexing (see tmem.h and
 * docs/tmem.md).
 *
 * A statement that stores into or loads from tensor memory becomes one
 * tcgen05.st / tcgen05.ld .32x32b.x<N>: every thread of a warp moves N
 * 32-bit words between N of its registers and N consecutive columns of
 * one lane, thread i of the warp on lane base + i, with one address
 * (base lane << 16 | first column) for the whole warp, and warp w may only
 * touch lanes 32 * (w % 4) .. + 31.  The statement's tensor-memory index
 * (from lowering: lane * columns + column element over the allocated
 * axes) is split into its lane and column parts, and the access pattern
 * is checked by evaluating them for every thread of the block (warps of
 * 32 consecutive linear thread ids, x fastest), every element of the
 * vector and every iteration of the loops around the statement that the
 * index or predicate depends on (a sample of them past a budget). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sched/sched.h"
#include "../target/target.h"
#include "tmem.h"

#define PREFIX "Invalid data access pattern in TMem load/store: "


tc_status tc_tmem_check_target(tc_fusion *f, tc_target target, const char *arch) {
  const tc_tensor *t = NULL;
  for (int i = 0; i < f->ntensors && !t; i++)
    if (f->tensors[i]->mem == TC_MEM_TENSOR) t = f->tensors[i];
  tc_target_info ti;
  tc_target_info_make(target, arch, &ti, NULL); /* a bad arch has no tcgen05 */
  if (!t || (ti.features & TC_FEAT_TCGEN05)) return TC_OK;
  if (ti.family == TC_ARCH_SM)
    return tc_fail(f, TC_ERR_UNSUPPORTED,
                   "compile: %s is in tensor memory, which CUDA has only with tcgen05 (arch "
                   "sm_100a, sm_100f, sm_103a, sm_110a ...); arch %s%s is not supported for it",
                   t->name, ti.arch, ti.arch_given ? "" : " (the default)");
  return tc_fail(f, TC_ERR_UNSUPPORTED,
                 "compile: %s is in tensor memory, which target %s does not have (tensor memory "
                 "is NVIDIA Blackwell's; the OpenCL target emulates it): not supported",
                 t->name, ti.name);
}

/* ---- expressions ------------------------------------------------------- */

/* e with variable id replaced by val. */
static const tc_expr *subst(tc_epool *p, const tc_expr *e, int64_t id, const tc_expr *val) {
  return tc_e_subst(p, e, 1, &id, &val);
}

/* ---- placement of the allocations ------------------------------------ */

/* Allocations in order of decreasing size (as tcgen05.alloc gets them, so
 * that power-of-two blocks that fit in 512 columns in all always fit);
 * the emulation gives them consecutive columns in that order. */
static void place(tc_kir *k) {
  int n = 0;
  int64_t col = 0;
  for (;;) {
    int best = -1;
    for (int i = 0; i < k->nallocs; i++) {
      tc_kalloc *a = &k->allocs[i];
      if (a->t->mem != TC_MEM_TENSOR || a->tmem_slot >= 0) continue;
      if (best < 0 || a->columns > k->allocs[best].columns) best = i;
    }
    if (best < 0) break;
    k->allocs[best].tmem_slot = n++;
    k->allocs[best].tmem_col = col;
    col += k->allocs[best].columns;
  }
}

/* ---- the access-pattern check ------------------------------------------ */

typedef struct access {
  tc_kir *k;
  tc_knode *s;
  const char *what;       /* "tcgen05.st of T2" */
  const tc_expr *lane, *col, *pred;
  int64_t vec_var;        /* -1 when not vectorized */
  int elems;              /* vector width */
  int size;               /* element bytes */
  int64_t *vars;          /* values of every variable of the pool */
  int64_t threads, block[3];
  const char *at;         /* loop values of the current iteration, for messages */
} access;

static void set_thread(access *x, int64_t tid) {
  const tc_kir *k = x->k;
  x->vars[k->pvar[3]->val] = tid % x->block[0];
  x->vars[k->pvar[4]->val] = tid / x->block[0] % x->block[1];
  x->vars[k->pvar[5]->val] = tid / (x->block[0] * x->block[1]);
}

static bool active(access *x, int64_t tid) {
  if (tid < 0 || tid >= x->threads) return false;
  set_thread(x, tid);
  if (x->vec_var >= 0) x->vars[x->vec_var] = 0;
  return tc_e_eval(x->pred, x->vars) != 0;
}

static tc_status fail(access *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static tc_status fail(access *x, const char *fmt, ...) {
  char msg[700];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return tc_fail(x->k->f, TC_ERR_LOWER, "%s%s%s", msg, x->at[0] ? " " : "", x->at);
}

/* Checks the warps of one iteration (the loop variables are set). */
static tc_status check_iteration(access *x) {
  int64_t nwarps = (x->threads + 31) / 32;
  for (int64_t w = 0; w < nwarps; w++) {
    int n = 0;
    bool act[32];
    for (int i = 0; i < 32; i++) n += act[i] = active(x, 32 * w + i);
    if (n == 0) continue;
    if (n < 32) {
      int64_t first = 32 * w;
      while (!act[first - 32 * w]) first++;
      int64_t lo = first, hi = first;
      while (active(x, lo - 1)) lo--;
      while (active(x, hi + 1)) hi++;
      return fail(x,
                  PREFIX "TMem load/store must be warp-collective, but the innermost extent is not "
                  "a multiple of 32: the %s runs on %lld consecutive threads (linear thread ids "
                  "%lld..%lld of a %lld x %lld x %lld block), so warp %lld would execute it with "
                  "%d of its 32 threads; make the threads that access tensor memory whole warps",
                  x->what, (long long)(hi - lo + 1), (long long)lo, (long long)hi,
                  (long long)x->block[0], (long long)x->block[1], (long long)x->block[2],
                  (long long)w, n);
    }
    int64_t lane[32];
    for (int i = 0; i < 32; i++) {
      set_thread(x, 32 * w + i);
      if (x->vec_var >= 0) x->vars[x->vec_var] = 0;
      lane[i] = tc_e_eval(x->lane, x->vars);
    }
    for (int i = 1; i < 32; i++)
      if (lane[i] != lane[0] + i)
        return fail(x,
                    PREFIX "lanes are not stride 1 across the threads of a warp: in the %s, thread "
                    "%d of warp %lld accesses lane %lld and thread 0 lane %lld, but a 32x32b "
                    "access puts thread i of a warp on lane base + i; the lane axes must be the "
                    "warp's linear thread index (TIDx fastest)",
                    x->what, i, (long long)w, (long long)lane[i], (long long)lane[0]);
    int64_t base = 32 * (w % 4);
    if (lane[0] != base)
      return fail(x,
                  PREFIX "warp %lld accesses lanes %lld..%lld in the %s, but warp i may only "
                  "access the lanes of its sub-partition, 32 * (i %% 4) .. 32 * (i %% 4) + 31 "
                  "(here %lld..%lld); lane = linear thread id %% 128 is the layout that works",
                  (long long)w, (long long)lane[0], (long long)lane[31], x->what, (long long)base,
                  (long long)base + 31);
    set_thread(x, 32 * w);
    if (x->vec_var >= 0) x->vars[x->vec_var] = 0;
    int64_t c0 = tc_e_eval(x->col, x->vars);
    if (c0 * x->size % 4 != 0)
      return fail(x,
                  PREFIX "in the %s, warp %lld's access starts at element %lld of a lane, %lld "
                  "bytes in, which is not on a 32-bit column boundary",
                  x->what, (long long)w, (long long)c0, (long long)(c0 * x->size));
    for (int i = 0; i < 32; i++) {
      set_thread(x, 32 * w + i);
      for (int v = 0; v < x->elems; v++) {
        if (x->vec_var >= 0) x->vars[x->vec_var] = v;
        if (v > 0 && tc_e_eval(x->pred, x->vars) == 0)
          return fail(x,
                      PREFIX "in the %s, thread %d of warp %lld accesses only part of its vector "
                      "(element %d is predicated off); a vector access is all or nothing",
                      x->what, i, (long long)w, v);
        int64_t l = v > 0 ? tc_e_eval(x->lane, x->vars) : lane[i];
        int64_t c = tc_e_eval(x->col, x->vars);
        if (l != lane[i])
          return fail(x,
                      PREFIX "in the %s, the vector of thread %d of warp %lld spans lanes %lld "
                      "and %lld; the vectorized axis must be a column axis",
                      x->what, i, (long long)w, (long long)lane[i], (long long)l);
        if (c != c0 + v) {
          if (v == 0)
            return fail(x,
                        PREFIX "the threads of warp %lld access different columns in the %s "
                        "(thread 0 column element %lld, thread %d %lld), but a warp's tcgen05 "
                        "access has one column address: the column axes must not depend on the "
                        "thread within a warp",
                        (long long)w, x->what, (long long)c0, i, (long long)c);
          return fail(x,
                      PREFIX "in the %s, the vector of thread %d of warp %lld is not in "
                      "consecutive columns: element %d is at column element %lld, expected %lld",
                      x->what, i, (long long)w, v, (long long)c, (long long)(c0 + v));
        }
      }
    }
  }
  return TC_OK;
}

typedef struct itvar {
  int64_t id;
  int64_t *vals;
  int n;
  const char *name;
} itvar;

/* Runs check_iteration over every combination of the loop (and block)
 * variables the access depends on; samples each variable at its ends and
 * middle when all combinations would be too many to evaluate. */
static tc_status check_access(access *x) {
  tc_kir *k = x->k;
  itvar iv[40];
  int niv = 0;
  for (tc_knode *n = x->s->parent; n && niv < 36; n = n->parent) {
    if (n->kind != TC_K_LOOP || n == x->s->stmt.tmem.vec) continue;
    int64_t id = n->loop.var->val;
    if (!tc_e_uses(x->lane, id) && !tc_e_uses(x->col, id) && !tc_e_uses(x->pred, id)) continue;
    iv[niv].id = id, iv[niv].n = (int)n->loop.extent, iv[niv].vals = NULL;
    iv[niv].name = tc_e_var_name(k->pool, (int)id);
    niv++;
  }
  static const char *bnames[3] = {"bidx", "bidy", "bidz"};
  for (int d = 0; d < 3; d++) {
    int64_t id = k->pvar[d]->val;
    if (k->grid[d] <= 1 || !(tc_e_uses(x->lane, id) || tc_e_uses(x->col, id) || tc_e_uses(x->pred, id)))
      continue;
    iv[niv].id = id, iv[niv].n = 2, iv[niv].name = bnames[d];
    iv[niv].vals = tc_xmalloc(2 * sizeof(int64_t));
    iv[niv].vals[0] = 0, iv[niv].vals[1] = k->grid[d] - 1;
    niv++;
  }
  double work = (double)x->threads * x->elems;
  for (int i = 0; i < niv; i++) work *= iv[i].n;
  if (work > (double)(1 << 20)) {
    for (int i = 0; i < niv; i++) {
      if (iv[i].vals) continue;
      int64_t e = iv[i].n, cand[4] = {0, 1, e / 2, e - 1};
      iv[i].vals = tc_xmalloc(4 * sizeof(int64_t));
      int m = 0;
      for (int c = 0; c < 4; c++) {
        bool dup = cand[c] >= e;
        for (int j = 0; j < m; j++) dup |= iv[i].vals[j] == cand[c];
        if (!dup) iv[i].vals[m++] = cand[c];
      }
      iv[i].n = m;
    }
  }
  int idx[40] = {0};
  char at[256];
  tc_status st = TC_OK;
  for (;;) {
    at[0] = 0;
    size_t len = 0;
    for (int i = 0; i < niv; i++) {
      int64_t v = iv[i].vals ? iv[i].vals[idx[i]] : idx[i];
      x->vars[iv[i].id] = v;
      if (len < sizeof at)
        len += (size_t)snprintf(at + len, sizeof at - len, "%s%s = %lld", i ? ", " : "(at ",
                                iv[i].name, (long long)v);
    }
    if (niv && len < sizeof at) snprintf(at + len, sizeof at - len, ")");
    x->at = at;
    st = check_iteration(x);
    if (st) break;
    int i = 0;
    while (i < niv && ++idx[i] == iv[i].n) idx[i++] = 0;
    if (i == niv) break;
  }
  x->at = "";
  for (int i = 0; i < niv; i++) free(iv[i].vals);
  return st;
}

/* ---- one statement ----------------------------------------------------- */

static tc_status lower_stmt(tc_kir *k, tc_knode *s) {
  tc_fusion *f = k->f;
  tc_op *op = s->stmt.op;
  tc_tensor *out = op->out, *in = op->in[0];
  bool store = out->mem == TC_MEM_TENSOR;
  tc_tensor *tm = out;
  for (int i = op->nin - 1; i >= 0 && !store; i--)
    if (op->in[i]->mem == TC_MEM_TENSOR) tm = op->in[i];
  static const char *only =
      "; tensor memory is written only from registers (tcgen05.st) and read only into registers "
      "(tcgen05.ld), by a set or permute: put a tensor in local memory in between (tc_set, "
      "tc_cache_after / tc_cache_before)";
  if (op->kind != TC_OP_SET && op->kind != TC_OP_PERMUTE) {
    if (store)
      return tc_fail(f, TC_ERR_SCHEDULE,
                     "compile: %s (in tensor memory) is computed by an op that is not a set or "
                     "permute%s", out->name, only);
    return tc_fail(f, TC_ERR_SCHEDULE,
                   "compile: %s is computed from %s (in tensor memory) by an op that is not a set "
                   "or permute%s", out->name, tm->name, only);
  }
  if ((store ? in : out)->mem != TC_MEM_LOCAL) {
    if (store)
      return tc_fail(f, TC_ERR_SCHEDULE, "compile: %s (in tensor memory) is copied from %s in %s memory%s",
                     out->name, in->name, tc_memtype_name(in->mem), only);
    return tc_fail(f, TC_ERR_SCHEDULE, "compile: %s in %s memory is copied from %s (in tensor memory)%s",
                   out->name, tc_memtype_name(out->mem), in->name, only);
  }
  if (op->ldst != TC_LDST_DEFAULT && op->ldst != (store ? TC_LDST_TMEM_STORE : TC_LDST_TMEM_LOAD))
    return tc_fail(f, TC_ERR_SCHEDULE,
                   "compile: %s's load/store type (%d) is not %s, but it %s tensor memory (%s)",
                   out->name, (int)op->ldst, store ? "TC_LDST_TMEM_STORE" : "TC_LDST_TMEM_LOAD",
                   store ? "stores to" : "loads from", tm->name);
  char what[96];
  snprintf(what, sizeof what, "tcgen05.%s of %s (%s = %s)", store ? "st" : "ld", tm->name,
           out->name, in->name);
  tc_knode *vec = s->parent && s->parent->kind == TC_K_LOOP && s->parent->loop.ptype == TC_VECTORIZE
                      ? s->parent : NULL;
  if (vec && vec->nbody != 1)
    return tc_fail(f, TC_ERR_SCHEDULE,
                   "compile: the vectorized loop of the %s holds other statements", what);
  int64_t elems = vec ? vec->loop.extent : 1;
  int size = (int)tc_dtype_size(tm->dtype);
  int64_t bytes = elems * size;
  if (bytes % 4 != 0)
    return tc_fail(f, TC_ERR_LOWER,
                   "Vectorize size is not a multiple of 4 bytes: the %s moves %lld x %s = %lld "
                   "bytes per thread, but tensor memory is accessed in whole 32-bit columns; "
                   "vectorize %s's innermost axis to a multiple of %d elements",
                   what, (long long)elems, tc_dtype_name(tm->dtype), (long long)bytes, out->name,
                   4 / size);
  if (bytes / 4 > 128)
    return tc_fail(f, TC_ERR_LOWER,
                   "compile: the %s moves %lld 32-bit words per thread, but tcgen05 moves at most "
                   "128 (.x128)", what, (long long)(bytes / 4));
  int ai = -1;
  for (int i = 0; i < k->nallocs; i++)
    if (k->allocs[i].t == tm) ai = i;
  if (ai < 0) return tc_fail(f, TC_ERR_LOWER, "compile: %s has no allocation", tm->name);
  const tc_kalloc *a = &k->allocs[ai];
  int64_t threads = k->block[0] * k->block[1] * k->block[2];
  tc_epool *p = k->pool;
  int64_t colelems = a->elems / (a->lanes > 0 ? a->lanes : 1);
  const tc_expr *idx = store ? s->stmt.out_index : s->stmt.in_index[0];
  access x = {0};
  x.k = k, x.s = s, x.what = what, x.at = "";
  x.lane = tc_simplify(p, tc_e_divc(p, idx, colelems));
  x.col = tc_simplify(p, tc_e_modc(p, idx, colelems));
  x.pred = s->stmt.pred;
  x.vec_var = vec ? vec->loop.var->val : -1;
  x.elems = (int)elems, x.size = size;
  x.threads = threads;
  memcpy(x.block, k->block, sizeof x.block);
  x.vars = tc_xcalloc((size_t)tc_e_num_vars(p) + 1, sizeof(int64_t));
  s->stmt.tmem.vec = vec;
  tc_status st = check_access(&x);
  free(x.vars);
  if (st) return st;
  if (threads < 32) /* no thread accesses; warp 0 still allocates (a whole warp) */
    return tc_fail(f, TC_ERR_LOWER,
                   PREFIX "TMem load/store must be warp-collective, but the innermost extent is not "
                   "a multiple of 32: the block has only %lld threads (%lld x %lld x %lld), less "
                   "than the warp that allocates tensor memory, for the %s",
                   (long long)threads, (long long)k->block[0], (long long)k->block[1],
                   (long long)k->block[2], what);
  const tc_expr *lane0 = x.lane, *col0 = x.col;
  if (vec) {
    lane0 = tc_simplify(p, subst(p, lane0, vec->loop.var->val, tc_e_const(p, 0)));
    col0 = tc_simplify(p, subst(p, col0, vec->loop.var->val, tc_e_const(p, 0)));
  }
  /* the warp's first lane (lane - lane id, as lane = base + lane id) in
   * the high half, the first 32-bit column in the low half */
  const tc_expr *base_lane = tc_e_mulc(p, tc_e_divc(p, lane0, 32), 32);
  const tc_expr *word = tc_e_divc(p, tc_e_mulc(p, col0, size), 4);
  s->stmt.tmem.addr = tc_simplify(p, tc_e_add(p, tc_e_mulc(p, base_lane, 65536), word));
  s->stmt.tmem.kind = store ? TC_TMEM_ST : TC_TMEM_LD;
  s->stmt.tmem.words = (int)(bytes / 4);
  s->stmt.tmem.elems = (int)elems;
  s->stmt.tmem.alloc = ai;
  return TC_OK;
}

static int lower_each(tc_knode *n, void *ctx) {
  tc_kir *k = ctx;
  tc_op *op = n->stmt.op;
  bool touches = op->out->mem == TC_MEM_TENSOR;
  for (int i = 0; i < op->nin; i++) touches |= op->in[i]->mem == TC_MEM_TENSOR;
  if (touches) return lower_stmt(k, n);
  if (op->ldst == TC_LDST_TMEM_LOAD || op->ldst == TC_LDST_TMEM_STORE)
    return tc_fail(k->f, TC_ERR_SCHEDULE,
                   "compile: %s's load/store type is TC_LDST_TMEM_%s, but %s does not %s tensor "
                   "memory",
                   op->out->name, op->ldst == TC_LDST_TMEM_LOAD ? "LOAD" : "STORE",
                   op->out->name, op->ldst == TC_LDST_TMEM_LOAD ? "read from" : "write to");
  return TC_OK;
}

tc_status tc_tmem_lower(tc_kir *k) {
  for (int i = 0; i < k->nallocs; i++) k->allocs[i].tmem_slot = -1;
  place(k);
  return tc_knode_each_stmt(k->root, lower_each, k);
}
