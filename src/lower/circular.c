/* circular.c - circular buffering of shared tensors (tc_circular_buffer,
 * nvFuser's circularBuffer) as a transformation of the kernel IR.
 *
 * A ring tensor t of S stages is computed at the serial loop L (var k,
 * extent E): its copy is the nodes of L's body that hold t's statement and
 * the statements in L computing what that statement reads in registers
 * (a prologue's cast).  Lowering made them for one buffer:
 *
 *   for k: copy(k) -> t; barrier; compute(t); barrier
 *
 * and this pass makes them
 *
 *   for p < S - 1: copy(p) -> slot p (if p < E); commit
 *   for k: wait(S - 2); barrier;
 *          copy(k + S - 1) -> slot (k + S - 1) % S (if k + S - 1 < E); commit;
 *          compute(slot k % S)
 *
 * Ordering: iteration k's tile was committed in group k (the prologue's
 * S - 1 groups, then one per iteration, empty past the end), so at the
 * top of iteration k at most S - 2 later groups may still be pending:
 * wait_group(S - 2), and the barrier after it makes every thread's copies
 * of tile k visible.  The copy issued after that barrier writes slot
 * (k - 1) % S, which only iteration k - 1 read, before the same barrier:
 * no slot is written while a thread may still read it, and no barrier is
 * needed at the end of the body.  Synchronous copies (targets without
 * cp.async, copies that compute) follow the same order, and are visible
 * after the barrier of the S - 1th iteration after their issue.
 *
 * Wait depth 1 (choose_depth below): where the compute is wgmma
 * statements and S >= 3, each K tile's wgmma group is committed and
 * followed by wgmma.wait_group 1 instead of 0, so iteration k's products
 * still run while iteration k + 1 waits, passes its barrier and issues
 * its copies; wgmma.wait_group 0 after the loop, before the epilogue
 * reads the accumulators.  The slot of tile k - 1 is then still read
 * during iteration k, so the prefetch distance drops to D = S - 2:
 *
 *   for p < D: copy(p) -> slot p (if p < E); commit
 *   for k: wait(D - 1); barrier;
 *          copy(k + D) -> slot (k + D) % S (if k + D < E); commit;
 *          fence; wgmma(slot k % S); wgmma commit; wgmma wait(1)
 *   wgmma wait(0); a compiler barrier on the accumulators (printer.c)
 *
 * The slot written at iteration k is (k + S - 2) % S == (k - 2) % S,
 * last read by the wgmma of iteration k - 2.  Each thread's wait_group 1
 * at the end of iteration k - 1 leaves only group k - 1 pending, so its
 * warp group's wgmma of k - 2 is done; every thread passes that point
 * before iteration k's barrier, and the copy is issued after it: no slot
 * is overwritten while any warp group's wgmma may read it.  (With D = S -
 * 1 the copy of iteration k would go into slot (k - 1) % S, whose wgmma
 * is exactly the group wait_group 1 leaves running.)  The cp.async
 * count: the prologue commits D groups, iterations 0 .. k - 1 one each,
 * so k + D groups are committed at the top of iteration k, tile k is in
 * group k and the k + D - (k + 1) = D - 1 = S - 3 groups after it may
 * still be pending: wait_group(S - 3).  Tile k was copied at iteration
 * k - D (or in the prologue), after a barrier, and is read after the
 * barrier of iteration k, D >= 1 iterations later, so synchronous copies
 * stay ordered too.  S = 2 keeps depth 0 (D would be 0: no copy could be
 * in flight).  The accumulators are not touched by any other instruction
 * inside the loop: the wgmma names them in place (constant indices after
 * unrolling), no copy in or out (a form that cannot, e.g. accumulators
 * indexed by a loop that is not unrolled, keeps depth 0 and says why in
 * a comment on the statement).  Every K tile still begins with
 * wgmma.fence (required before the first wgmma and after any register
 * write; between wgmmas of one shape on the same accumulators the order
 * is kept by the hardware).
 *
 * Rings of bulk tensor copies (choose_completion): where every copy of
 * the ring is a bulk tensor copy (TC_LDST_BULK_TENSOR) on a target that
 * has them (CUDA sm_90+), the protocol above stays as it is (the same
 * prologue, prefetch distance D, copy placement after the barrier and
 * wait depth) and only how a copy completes changes: instead of cp.async
 * commit groups, slot s has an mbarrier (the kernel's mbarriers bar ..
 * bar + S - 1, initialized once by one thread, then a fence and a block
 * barrier, before the prologue); each copy statement's issuing thread
 * (one per TIDy / TIDz row) arms it with the bytes of its boxes
 * (mbarrier.arrive.expect_tx: one arrival each, so a phase completes
 * after A's and B's arrivals of every row and all their bytes), then
 * issues the boxes into the slot (src/lower/tma.c, tc_ktma.bar_slot); the
 * wait at the top of iteration k is on slot k % S's mbarrier for the
 * phase of parity (k / S) % 2 (tc_knode.mbar_slot, mbar_parity):
 *
 *   for p < D: arm and copy tile p -> slot p (if p < E)
 *   for k: wait(mbarrier k % S, parity (k / S) % 2); barrier;
 *          arm and copy tile k + D -> slot (k + D) % S (if k + D < E);
 *          compute(slot k % S)
 *
 * Phases: tile t is the (t / S)th copy into slot t % S (tiles t % S,
 * t % S + S, ... in order), so it completes that slot's phase t / S, and
 * the wait for tile k asks for parity (k / S) % 2.  try_wait.parity
 * returns at once where the phase of that parity is the last one
 * completed, so the parity names the right phase only if every waiting
 * thread observed the slot's previous phase before the next is armed:
 * tile k + D goes into slot (k + D) % S, whose previous tile k + D - S (<
 * k, as D < S) every thread waited for at iteration k + D - S, before
 * that iteration's barrier, and the copy is issued after iteration k's
 * barrier; so at most one phase of a slot is pending at a time, and no
 * wait can mistake a phase two ahead.  Tiles past the end are not armed
 * and only tiles < E are waited for: every phase armed is waited for
 * once.  Slot reuse is the derivation above unchanged, with the bulk copy
 * as the writer: the barrier at the top of iteration k is one every
 * reader of the overwritten slot passed after its last read (depth 0:
 * iteration k - 1's reads; depth 1: the wgmma of k - 2, finished by each
 * thread's wgmma.wait_group 1 at the end of k - 1), and the copy is
 * issued by one thread after it, so no thread can still read the slot.
 * That barrier is what makes the reuse safe (no consumer-release
 * mbarriers; test_circular.c's model drops it and sees a copy land in a
 * slot still read).  The data need no barrier to be visible: each
 * thread's own wait observes the phase complete, which covers the bytes
 * the copies wrote.  Elsewhere (OpenCL, sm_80) the same statements are
 * plain synchronous copies in the ring of element copies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/test_hooks.h"
#include "../sched/sched.h"
#include "circular.h"
#include "ldst.h"

/* the ring at one loop */
typedef struct ring {
  tc_knode *loop;
  int stages;
  tc_kalloc *allocs[16];
  int nallocs;
  char *moved; /* per node of the loop's body: part of a copy */
  const tc_tensor *misaligned; /* a tile a wgmma reads swizzled whose slot
                                  is not a whole number of 1024 bytes */
  int ahead;     /* the prefetch distance D (tc_ring_ahead): the prologue
                    copies D tiles, iteration k copies tile k + D and waits
                    with D - 1 groups pending */
  bool bulk;     /* the copies are bulk tensor copies completing on the
                    slots' mbarriers (bar + slot) */
  int bar;
} ring;

static bool is_ring_tensor(const ring *r, const tc_tensor *t, int64_t *slot) {
  for (int i = 0; i < r->nallocs; i++)
    if (r->allocs[i]->t == t) {
      if (slot) *slot = r->allocs[i]->slot_elems;
      return true;
    }
  return false;
}

/* The child of loop holding node n (NULL: n is not under loop). */
static int child_index(const tc_knode *loop, const tc_knode *n) {
  for (; n && n->parent != loop; n = n->parent) {}
  if (!n) return -1;
  for (int i = 0; i < loop->nbody; i++)
    if (loop->body[i] == n) return i;
  return -1;
}

/* The statement under n writing x (NULL: none). */
static tc_knode *writer_under(tc_knode *n, const tc_tensor *x) {
  if (n->kind == TC_K_STMT) return n->stmt.op->out == x ? n : NULL;
  for (int i = 0; i < n->nbody; i++) {
    tc_knode *w = writer_under(n->body[i], x);
    if (w) return w;
  }
  return NULL;
}

static bool holds_barrier(const tc_knode *n) {
  if (n->sync_before || n->sync_end || n->cp_wait || n->cp_commit) return true;
  if (n->kind == TC_K_STMT)
    return n->stmt.red.kind != TC_RED_NONE || n->stmt.mma.kind || n->stmt.ldsm.kind ||
           n->stmt.tmem.kind || n->stmt.tma.kind;
  for (int i = 0; i < n->nbody; i++)
    if (holds_barrier(n->body[i])) return true;
  return false;
}

/* Checks the statements under n, part of a ring's copy at loop L: they
 * read global memory and registers only, and are plain statements or
 * bulk tensor copies (no matrix load); marks the children of L that
 * compute the registers they read (*more when one was new). */
static tc_status check_copy(tc_kir *k, ring *r, tc_knode *n, bool *more) {
  for (int i = 0; i < n->nbody; i++) {
    tc_status st = check_copy(k, r, n->body[i], more);
    if (st) return st;
  }
  if (n->kind != TC_K_STMT) return TC_OK;
  const tc_op *op = n->stmt.op;
  if (op->kind == TC_OP_SET && op->ldst != TC_LDST_DEFAULT && op->ldst != TC_LDST_CP_ASYNC &&
      op->ldst != TC_LDST_BULK_TENSOR)
    return tc_fail(k->f, TC_ERR_UNSUPPORTED,
                   "compile: the copy into the circular buffer %s is a collective load; a ring's "
                   "copy is a plain copy (cp.async on CUDA sm_80+) or a bulk tensor copy "
                   "(TC_LDST_BULK_TENSOR)", op->out->name);
  for (int q = 0; q < op->nin; q++) {
    const tc_tensor *x = op->in[q];
    if (x->mem == TC_MEM_GLOBAL) continue;
    if (x->mem != TC_MEM_LOCAL)
      return tc_fail(k->f, TC_ERR_UNSUPPORTED,
                     "compile: the copy into the circular buffer %s reads %s in %s memory; a "
                     "ring's copy reads global memory (and registers)", op->out->name, x->name,
                     tc_memtype_name(x->mem));
    tc_knode *w = writer_under(r->loop, x);
    int wc = w ? child_index(r->loop, w) : -1;
    if (wc >= 0 && !r->moved[wc]) r->moved[wc] = 1, *more = true;
  }
  return TC_OK;
}

/* Marks the children of the loop that copy: those of the ring tensors'
 * statements and of the register values they read (to a fixpoint). */
static tc_status mark_copies(tc_kir *k, ring *r) {
  tc_knode *L = r->loop;
  for (int i = 0; i < r->nallocs; i++) r->moved[child_index(L, r->allocs[i]->writer)] = 1;
  for (bool more = true; more;) {
    more = false;
    for (int c = 0; c < L->nbody; c++) {
      if (!r->moved[c]) continue;
      if (holds_barrier(L->body[c]))
        return tc_fail(k->f, TC_ERR_UNSUPPORTED,
                       "compile: the copy into the circular buffer %s at loop %s holds a barrier, "
                       "a reduction or a collective instruction; a ring's copy is a plain copy "
                       "(with elementwise ops on the way)", r->allocs[0]->t->name,
                       tc_e_var_name(k->pool, (int)L->loop.var->val));
      tc_status st = check_copy(k, r, L->body[c], &more);
      if (st) return st;
    }
  }
  return TC_OK;
}

/* Every statement that reads a ring tensor is in the loop, after its
 * copies. */
typedef struct reader_ctx {
  tc_kir *k;
  ring *r;
} reader_ctx;

/* Whether statement s reads its op's operands (a reduction's
 * initialization and block step do not). */
static bool reads_inputs(const tc_knode *s) {
  return s->stmt.red.kind != TC_RED_INIT && s->stmt.red.kind != TC_RED_ALL;
}

static int check_reader(tc_knode *s, void *ctx) {
  reader_ctx *c = ctx;
  if (!reads_inputs(s)) return 0;
  for (int q = 0; q < s->stmt.op->nin; q++) {
    if (!is_ring_tensor(c->r, s->stmt.op->in[q], NULL)) continue;
    int ci = child_index(c->r->loop, s);
    if (ci < 0 || c->r->moved[ci])
      return tc_fail(c->k->f, TC_ERR_SCHEDULE,
                     "compile: %s reads the circular buffer %s %s; a ring's tiles are read in the "
                     "loop it is computed at (%s), after its copy", s->stmt.op->out->name,
                     s->stmt.op->in[q]->name, ci < 0 ? "outside its loop" : "inside its copy",
                     tc_e_var_name(c->k->pool, (int)c->r->loop->loop.var->val));
  }
  return 0;
}

/* cp.async for a ring's copy statement s on CUDA sm_80+: a copy of one
 * global operand of the same dtype read without a view's predicate, 4
 * bytes per element (f32), or a whole
 * VECTORIZE or UNROLL loop of v elements (4, 8 or 16 bytes) around it whose global
 * and shared runs are contiguous, start at multiples of v and share one
 * predicate (proven by simplification; the slots are whole 16-byte units
 * and shared allocations start at 16 bytes).  0: a plain copy. */
static int cp_async_bytes(tc_kir *k, tc_knode *s) {
  const tc_op *op = s->stmt.op;
  if (op->nin != 1 || op->in[0]->mem != TC_MEM_GLOBAL || op->in[0]->dtype != op->out->dtype ||
      (op->kind != TC_OP_SET && op->kind != TC_OP_BROADCAST && op->kind != TC_OP_PERMUTE))
    return 0;
  /* a load through a coordinate-transform view reads 0 where the view
   * does not hold (padding): a skipped cp.async would leave the slot's
   * previous tile, so it is a cp.async that zero-fills (a source size of
   * 0) where the view fails, when the view's predicate holds for the
   * whole run, else a plain copy (which writes that 0) */
  const tc_expr *valid = s->stmt.in_valid[0];
  /* a tile a wgmma reads whole holds 0 past the edges (zfill): likewise a
   * cp.async that zero-fills where its edge predicate fails, when it
   * holds for the whole run */
  bool zfill = s->stmt.zfill && !tc_e_is_const(s->stmt.pred, 1);
  int es = (int)tc_dtype_size(op->out->dtype);
  tc_knode *v = s->parent;
  if (v && v->kind == TC_K_LOOP && (v->loop.ptype == TC_VECTORIZE || v->loop.ptype == TC_UNROLL) &&
      v->nbody == 1) {
    tc_epool *p = k->pool;
    int64_t n = v->loop.extent, id = v->loop.var->val;
    const tc_expr *zero = tc_e_const(p, 0), *j = v->loop.var;
    const tc_expr *in0 = tc_simplify(p, tc_e_subst(p, s->stmt.in_index[0], 1, &id, &zero));
    const tc_expr *out0 = tc_simplify(p, tc_e_subst(p, s->stmt.out_index, 1, &id, &zero));
    bool ok = (n * es == 8 || n * es == 16) && tc_e_run_uniform(p, s->stmt.pred, j, n) &&
              (!zfill || tc_e_run_uniform(p, s->stmt.inner_pred, j, n)) && tc_e_run_uniform(p, valid, j, n) &&
              tc_e_is_const(tc_simplify(p, tc_e_sub(p, s->stmt.in_index[0], tc_e_add(p, in0, j))), 0) &&
              tc_e_is_const(tc_simplify(p, tc_e_sub(p, s->stmt.out_index, tc_e_add(p, out0, j))), 0) &&
              tc_e_is_const(tc_simplify(p, tc_e_modc(p, in0, n)), 0) &&
              tc_e_is_const(tc_simplify(p, tc_e_modc(p, out0, n)), 0);
    if (ok) {
      /* (the conditions at the run's first element: the same at all) */
      s->stmt.pred = tc_simplify(p, tc_e_subst(p, s->stmt.pred, 1, &id, &zero));
      if (s->stmt.inner_pred) s->stmt.inner_pred = tc_simplify(p, tc_e_subst(p, s->stmt.inner_pred, 1, &id, &zero));
      if (valid) valid = tc_simplify(p, tc_e_subst(p, valid, 1, &id, &zero));
      s->stmt.in_index[0] = in0, s->stmt.out_index = out0, s->stmt.cp_vec = v, s->stmt.cp_zero = zfill;
      if (valid) { /* issued where the edges allow, bytes 0 where the view fails */
        s->stmt.inner_pred = zfill ? s->stmt.inner_pred : s->stmt.pred;
        s->stmt.pred = tc_simplify(p, tc_e_land(p, s->stmt.pred, valid));
        s->stmt.in_valid[0] = NULL, s->stmt.cp_zero = 1;
      }
      return (int)(n * es);
    }
  }
  return es == 4 && !zfill && !valid ? 4 : 0;
}

static const tc_expr *subst1(tc_epool *p, const tc_expr *e, int64_t id, const tc_expr *v) {
  return e ? tc_simplify(p, tc_e_subst(p, e, 1, &id, &v)) : NULL;
}

/* n's statements (under top, a child of the ring loop or the prologue)
 * issue the copy of tile `tile` (an expression of the ring loop's
 * variable or the prologue's) into slot `slot`: the loop variable
 * replaced by the tile, the tile predicated inside the loop's extent, the
 * ring tensors' stores moved to their slot. */
static void retarget(tc_kir *k, const ring *r, tc_knode *n, tc_knode *top, const tc_expr *tile,
                     const tc_expr *slot) {
  tc_epool *p = k->pool;
  if (n->kind == TC_K_LOOP) {
    for (int i = 0; i < n->nbody; i++) retarget(k, r, n->body[i], top, tile, slot);
    return;
  }
  n->stmt.ring_copy = top;
  tc_kstmt *s = &n->stmt;
  int64_t id = r->loop->loop.var->val, se;
  const tc_expr *inside = tc_e_lt(p, tile, tc_kloop_extent(p, &r->loop->loop));
  s->pred = tc_simplify(p, tc_e_land(p, subst1(p, s->pred, id, tile), inside));
  /* (a zfill store: stores 0 where pred fails and inner_pred holds) */
  if (s->inner_pred) s->inner_pred = tc_simplify(p, tc_e_land(p, subst1(p, s->inner_pred, id, tile), inside));
  s->out_index = subst1(p, s->out_index, id, tile);
  for (int q = 0; q < s->op->nin; q++) {
    s->in_index[q] = subst1(p, s->in_index[q], id, tile);
    s->in_valid[q] = subst1(p, s->in_valid[q], id, tile); /* a view's predicate (NULL: none) */
  }
  s->ring_tile = tile;
  if (is_ring_tensor(r, s->op->out, &se)) {
    s->out_index = tc_simplify(p, tc_e_add(p, s->out_index, tc_e_mulc(p, slot, se)));
    /* a bulk copy arms its slot's mbarrier (tma.c keeps bar) */
    if (r->bulk) s->tma.bar = r->bar, s->tma.bar_slot = tc_simplify(p, slot);
  }
}

static tc_knode *clone(const tc_knode *n, tc_knode *parent) {
  tc_knode *c = tc_xcalloc(1, sizeof *c);
  *c = *n;
  c->parent = parent;
  c->body = NULL, c->nbody = c->cbody = 0;
  for (int i = 0; i < n->nbody; i++) {
    tc_knode *b = clone(n->body[i], c);
    TC_PUSH(c->body, c->nbody, c->cbody, b);
    if (b->kind == TC_K_STMT && n->body[i]->stmt.cp_vec == n) b->stmt.cp_vec = c;
  }
  return c;
}

/* The readers of the ring's tensors under n read slot k % S (a wgmma
 * through its descriptors' start addresses). */
static void read_slot(tc_kir *k, ring *r, tc_knode *n, const tc_expr *slot) {
  tc_epool *p = k->pool;
  for (int i = 0; i < n->nbody; i++) read_slot(k, r, n->body[i], slot);
  if (n->kind != TC_K_STMT || !reads_inputs(n)) return;
  tc_kstmt *s = &n->stmt;
  for (int q = 0; q < s->op->nin; q++) {
    int64_t se;
    if (!is_ring_tensor(r, s->op->in[q], &se)) continue;
    const tc_expr *off = tc_e_mulc(p, slot, se);
#define SHIFT(e) ((e) = (e) ? tc_simplify(p, tc_e_add(p, (e), off)) : NULL)
    SHIFT(s->in_index[q]);
    if (s->mma.kind && q < 2) {
      for (int e = 0; e < (q ? 4 : 8); e++) SHIFT((q ? s->mma.b : s->mma.a)[e]);
      if (s->mma.ldsm) SHIFT(*(q ? &s->mma.addr_b : &s->mma.addr_a));
    }
    if (s->mma.kind == TC_MACRO_WGMMA && q < 2) {
      if (tc_test_hooks_get()->circular_fault != 4) SHIFT(*(q ? &s->mma.start_b : &s->mma.start_a));
      /* the 128B swizzle repeats every 1024 bytes: a slot keeps it */
      if ((q ? s->mma.swz_b : s->mma.swz_a) && se * (int64_t)tc_dtype_size(s->op->in[q]->dtype) % 1024)
        r->misaligned = s->op->in[q];
    }
    if (s->ldsm.kind == TC_LDSM_LD && q == 0) SHIFT(s->ldsm.addr);
#undef SHIFT
  }
}

/* The wgmma statements of a ring loop's compute (the children of the loop
 * that are not its copy). */
typedef struct wgmmas {
  tc_knode **s;
  int n, cap;
} wgmmas;

static int collect_wgmma(tc_knode *s, void *ctx) {
  wgmmas *w = ctx;
  if (s->stmt.mma.kind == TC_MACRO_WGMMA) TC_PUSH(w->s, w->n, w->cap, s);
  return 0;
}

static int touches_acc(tc_knode *s, void *ctx) {
  wgmmas *w = ctx;
  if (s->stmt.mma.kind == TC_MACRO_WGMMA) return 0;
  for (int i = 0; i < w->n; i++) {
    const tc_tensor *acc = w->s[i]->stmt.op->out;
    bool uses = s->stmt.op->out == acc;
    for (int q = 0; q < s->stmt.op->nin; q++) uses = uses || s->stmt.op->in[q] == acc;
    if (uses) return 1;
  }
  return 0;
}

/* Whether every variable of e is that of an unrolled loop between s and
 * the ring loop L (so e is a constant once the loops are unrolled). */
static bool constant_after_unroll(const tc_kir *k, const tc_expr *e, const tc_knode *s, const tc_knode *L) {
  for (int id = 0; id < tc_e_num_vars(k->pool); id++) {
    if (!tc_e_uses(e, id)) continue;
    const tc_knode *n = s->parent;
    while (n && n != L && !(n->kind == TC_K_LOOP && n->loop.var->val == id)) n = n->parent;
    if (!n || n == L || (n->loop.ptype != TC_UNROLL && n->loop.ptype != TC_VECTORIZE)) return false;
  }
  return true;
}

/* Wait depth 1 for the ring's wgmma readers: where the loop's compute
 * holds wgmma statements, the ring has 3 stages or more, both operands
 * of each are tiles of this ring, their accumulators are indexed by
 * constants once unrolled and no other statement in the loop uses them,
 * each statement's group is left running into the next iteration
 * (tc_kmma.wait1), the loop drains them (wgmma_drain) and the copies go
 * S - 2 tiles ahead (r->ahead); else S - 1, and a ring of 3 stages or
 * more says on each wgmma why it keeps wait_group 0. */
static void choose_depth(tc_kir *k, ring *r) {
  tc_knode *L = r->loop;
  wgmmas w = {NULL, 0, 0};
  for (int c = 0; c < L->nbody; c++)
    if (!r->moved[c]) tc_knode_each_stmt(L->body[c], collect_wgmma, &w);
  const char *why = NULL;
  for (int i = 0; i < w.n && !why; i++) {
    const tc_kstmt *s = &w.s[i]->stmt;
    if (!is_ring_tensor(r, s->op->in[0], NULL) || !is_ring_tensor(r, s->op->in[1], NULL))
      why = "an operand tile is not in this loop's ring, so it may change while the wgmma runs";
    else if (!constant_after_unroll(k, s->mma.c0, w.s[i], L))
      why = "its accumulators are indexed by a loop that is not unrolled, so the instruction cannot "
            "name them in registers";
  }
  if (!why && w.n && tc_knode_each_stmt(L, touches_acc, &w))
    why = "another statement in the K loop uses its accumulators";
  bool async = w.n > 0 && r->stages >= 3 && !why;
  for (int i = 0; i < w.n; i++) {
    w.s[i]->stmt.mma.wait1 = async;
    w.s[i]->stmt.mma.depth0_why = r->stages >= 3 ? why : NULL;
  }
  L->loop.wgmma_drain = async;
  /* (fault 5: depth 1 with the copies S - 1 tiles ahead, which the
   * protocol model must catch: a slot overwritten while a wgmma reads it) */
  r->ahead = tc_ring_ahead(r->stages, async && tc_test_hooks_get()->circular_fault != 5);
  free(w.s);
}

/* How the ring's tiles complete: where its copies are bulk tensor copies
 * (every tensor's: one way per ring) on a target that has them, on an
 * mbarrier per slot (r->bulk, r->bar: the kernel's mbarriers bar .. bar +
 * S - 1, each phase completed by one arrival per copy statement and
 * issuing row); else as cp.async groups (plain copies elsewhere). */
static tc_status choose_completion(tc_kir *k, ring *r, const tc_target_info *ti) {
  int nbulk = 0;
  for (int i = 0; i < r->nallocs; i++) nbulk += r->allocs[i]->writer->stmt.op->ldst == TC_LDST_BULK_TENSOR;
  if (nbulk && nbulk < r->nallocs)
    return tc_fail(k->f, TC_ERR_SCHEDULE,
                   "compile: %d of the %d circular buffers at loop %s are copied by bulk tensor "
                   "copies and the others are not; a ring's tiles complete one way (mbarrier "
                   "phases or cp.async groups): give them all TC_LDST_BULK_TENSOR or none "
                   "(tc_set_ldst_type)", nbulk, r->nallocs,
                   tc_e_var_name(k->pool, (int)r->loop->loop.var->val));
  r->bulk = nbulk > 0 && (ti->features & TC_FEAT_TMA);
  if (!r->bulk) return TC_OK;
  if (k->nrings_bulk == TC_MAX_BULK_RINGS)
    return tc_fail(k->f, TC_ERR_UNSUPPORTED, "compile: more than %d rings of bulk tensor copies in "
                   "one kernel; give the others TC_LDST_DEFAULT", TC_MAX_BULK_RINGS);
  r->bar = k->ntma_bars;
  k->ntma_bars += r->stages;
  k->ring_bar[k->nrings_bulk] = r->bar, k->ring_stages[k->nrings_bulk] = r->stages;
  k->ring_arrivals[k->nrings_bulk++] = r->nallocs;
  return TC_OK;
}

static tc_status build_ring(tc_kir *k, ring *r, const tc_target_info *ti) {
  tc_epool *p = k->pool;
  tc_knode *L = r->loop;
  int S = r->stages;
  r->moved = tc_xcalloc((size_t)L->nbody + 1, 1);
  tc_status st = mark_copies(k, r);
  reader_ctx rc = {k, r};
  if (!st) st = (tc_status)tc_knode_each_stmt(k->root, check_reader, &rc);
  if (!st) st = choose_completion(k, r, ti);
  if (st) return st;
  choose_depth(k, r);
  int D = r->ahead;
  /* cp.async where the copy is a plain one (before the copies are cloned) */
  bool cp = ti->family == TC_ARCH_SM && (ti->features & TC_FEAT_CP_ASYNC) && !r->bulk;
  for (int i = 0; i < r->nallocs && cp; i++) {
    tc_kstmt *s = &r->allocs[i]->writer->stmt;
    s->cp_bytes = cp_async_bytes(k, r->allocs[i]->writer);
    if (s->cp_bytes) k->ncp_async++;
  }
  /* the prologue: tiles 0 .. D - 1 into slots 0 .. D - 1 */
  char name[24];
  snprintf(name, sizeof name, "%s_p", tc_e_var_name(p, (int)L->loop.var->val));
  tc_knode *pro = tc_xcalloc(1, sizeof *pro);
  pro->kind = TC_K_LOOP;
  pro->loop.var = tc_e_var(p, name, 0, D - 1);
  pro->loop.extent = D;
  pro->loop.ptype = TC_SERIAL;
  pro->loop.id = -1;
  tc_knode *last = NULL;
  for (int c = 0; c < L->nbody; c++) {
    if (!r->moved[c]) continue;
    tc_knode *cl = clone(L->body[c], pro);
    retarget(k, r, cl, cl, pro->loop.var, pro->loop.var);
    TC_PUSH(pro->body, pro->nbody, pro->cbody, cl);
    last = cl;
  }
  last->cp_commit = !r->bulk && tc_test_hooks_get()->circular_fault != 3;
  tc_knode *par = L->parent;
  int at = 0;
  while (par->body[at] != L) at++;
  TC_PUSH(par->body, par->nbody, par->cbody, pro);
  memmove(&par->body[at + 1], &par->body[at], (size_t)(par->nbody - 1 - at) * sizeof *par->body);
  par->body[at] = pro;
  pro->parent = par;
  /* the steady state: wait, barrier, the copies D tiles ahead, the rest */
  const tc_expr *ahead = tc_e_addc(p, L->loop.var, D);
  tc_knode **body = tc_xmalloc((size_t)L->nbody * sizeof *body);
  int nb = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int c = 0; c < L->nbody; c++)
      if (r->moved[c] == !pass) body[nb++] = L->body[c];
  int nmoved = 0;
  for (int c = 0; c < L->nbody; c++) nmoved += r->moved[c];
  memcpy(L->body, body, (size_t)nb * sizeof *body);
  free(body);
  for (int c = 0; c < nmoved; c++)
    retarget(k, r, L->body[c], L->body[c], tc_simplify(p, ahead), tc_simplify(p, tc_e_modc(p, ahead, S)));
  for (int c = nmoved; c < L->nbody; c++) read_slot(k, r, L->body[c], tc_e_modc(p, L->loop.var, S));
  if (r->misaligned)
    return tc_fail(k->f, TC_ERR_SCHEDULE, "compile: the circular buffer %s is read by a wgmma with "
                   "the 128B swizzle, but its slots are not whole multiples of 1024 bytes",
                   r->misaligned->name);
  /* how iteration k's tile completes: its cp.async group (the copies
   * commit one group per tile), or the phase its bulk copies complete
   * on slot k % S's mbarrier, the (k / S)th of that slot: parity (k / S)
   * % 2 (fault 6: the other parity) */
  int fault = tc_test_hooks_get()->circular_fault;
  if (r->bulk) {
    const tc_expr *kv = L->loop.var;
    L->body[0]->mbar_base = r->bar;
    L->body[0]->mbar_slot = tc_simplify(p, tc_e_modc(p, kv, S));
    L->body[0]->mbar_parity = tc_simplify(p, tc_e_modc(p, tc_e_addc(p, tc_e_divc(p, kv, S), fault == 6), 2));
  } else {
    L->body[0]->cp_wait = 1 + (fault == 1 ? D : D - 1);
    L->body[nmoved - 1]->cp_commit = 1;
  }
  L->body[0]->sync_before = fault != 2;
  return TC_OK;
}

tc_status tc_circular_lower(tc_kir *k, const tc_target_info *ti) {
  ring rings[16];
  int nr = 0;
  for (int i = 0; i < k->nallocs; i++) {
    tc_kalloc *a = &k->allocs[i];
    if (a->stages <= 1) continue;
    int j = 0;
    while (j < nr && rings[j].loop != a->ring_loop) j++;
    if (j == nr) {
      if (nr == 16) return tc_fail(k->f, TC_ERR_UNSUPPORTED, "compile: more than 16 ring loops");
      rings[nr++] = (ring){.loop = a->ring_loop, .stages = a->stages};
    }
    ring *r = &rings[j];
    if (r->stages != a->stages)
      return tc_fail(k->f, TC_ERR_SCHEDULE,
                     "compile: the circular buffers %s (%d stages) and %s (%d) turn over one loop "
                     "(%s); give them the same number of stages", r->allocs[0]->t->name, r->stages,
                     a->t->name, a->stages, tc_e_var_name(k->pool, (int)r->loop->loop.var->val));
    if (r->nallocs == 16) return tc_fail(k->f, TC_ERR_UNSUPPORTED, "compile: more than 16 rings at one loop");
    r->allocs[r->nallocs++] = a;
  }
  tc_status st = TC_OK;
  for (int j = 0; j < nr && !st; j++) st = build_ring(k, &rings[j], ti);
  for (int j = 0; j < nr; j++) free(rings[j].moved);
  return st;
}
