/* test_circular.c - circular buffering of shared tensors
 * (tc_circular_buffer, tc_matmul_tiles.stages; src/lower/circular.c):
 *
 * - a protocol model run on the lowered kernel IR (not on printed text):
 *   it executes the ring loops' nodes in order (as thread 0 of block 0 and
 *   as the last thread of the last block) and keeps, per slot, the
 *   tile its last copy fetched, that copy's commit group, whether the
 *   group was waited for and a barrier passed since, and the barrier epoch
 *   of the slot's last read; it checks that every read of iteration k
 *   finds tile k in its slot, waited for and published by a barrier, and
 *   that no copy goes into a slot before a barrier has passed since its
 *   last read (a wgmma reads the slot its descriptors' start addresses
 *   name); four faults injected into the lowering (a wait for one
 *   group fewer, no barrier, the prologue's commit dropped, a wgmma's
 *   descriptors left at slot 0) must fail it;
 * - the same model for wgmma rings of wait depth 1 (a wgmma left running
 *   is an asynchronous reader of its slot until a later wait_group 1 or
 *   the loop's wait_group 0 finishes its group, and nothing may touch its
 *   accumulators meanwhile): rings of 3, 4 and 5 stages over 1, 2, S - 1,
 *   S and 7 K tiles pass, every read asynchronous and finding its tile;
 *   depth 1 with the copies S - 1 tiles ahead (a fifth fault) fails it;
 * - the same model with mbarrier phases for rings of bulk tensor copies
 *   (a copy arms its slot's mbarrier, a wait of parity p returns at once
 *   where the phase of that parity is the last completed, else when the
 *   next completes): wgmma rings of 2 to 5 stages over 1, 2, S - 1, S,
 *   S + 1 and 7 K tiles pass; the other parity (a sixth fault), the
 *   dropped barrier and depth 1 with the copies S - 1 ahead fail it;
 * - matmuls with rings of 1 to 4 stages at ragged shapes (extents of 1,
 *   primes, K shorter than stages x bk), FMA in f32 / f16 / bf16,
 *   mma.sync and wgmma in f16 / bf16, run on OpenCL (PoCL) against a
 *   plain C loop, and a ring outside a matmul (a serial loop of a
 *   pointwise fusion);
 * - the CUDA kernels for sm_80 (wgmma: sm_90a) hold cp.async (16-byte
 *   copies where the runs are aligned, none where they are not or where
 *   a wgmma tile's edge is zero-filled), commit_group and
 *   wait_group(stages - 2) (stages - 3 in wgmma rings of wait depth 1),
 *   and build with NVRTC;
 * - tc_schedule_auto's choices: mma.sync rings on sm_80, wgmma rings on
 *   sm_90a (mma.sync where wgmma does not apply, saying why);
 * - the refusals: stages outside 1 .. 8, a tensor in registers, one
 *   computed at a parallel axis or outside any loop, shared memory over
 *   the arch's limit once multiplied by the stages. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/test_hooks.h"
#include "lower/kernel.h"
#include "matmul_test_util.h"
#include "test.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

/* relu(A @ B + bias), A [m, k], B [k, n] (tb: given as [n, k]) of dtype
 * t, bias f32 [n] */
static tc_fusion *matmul_fusion_tb(tc_dtype t, int64_t m, int64_t n, int64_t k, bool tb) {
  tc_fusion *f = tc_fusion_new();
  int64_t sa[2] = {m, k}, sb[2] = {k, n}, sbt[2] = {n, k};
  tc_tensor *a = tc_input(f, t, 2, sa), *b = tc_input(f, t, 2, tb ? sbt : sb), *bias = tc_input(f, TC_F32, 1, &n);
  if (tb) b = tc_permute(f, b, (int[]){1, 0});
  bool is_new[2] = {true, false};
  tc_tensor *y = tc_unary(f, TC_RELU, tc_binary(f, TC_ADD, tc_matmul(f, a, b), tc_broadcast(f, bias, 2, is_new)));
  tc_add_output(f, y);
  return f;
}

static tc_fusion *matmul_fusion(tc_dtype t, int64_t m, int64_t n, int64_t k) {
  return matmul_fusion_tb(t, m, n, k, false);
}

/* ---- the protocol model ---------------------------------------------- */

#define MAX_SLOTS 8
#define MAX_COPIES 4096
#define MAX_BARS 64

typedef struct model {
  const tc_kir *k;
  int64_t *vars;
  /* the ring: its tensors (allocation indices), loop variable */
  const tc_kalloc *ring[4];
  int nring;
  const tc_expr *loopvar;
  int in_ring_loop;
  /* per ring tensor and slot */
  int64_t tile[4][MAX_SLOTS];
  int group[4][MAX_SLOTS];      /* the copy's commit group (-1: none yet) */
  int visible[4][MAX_SLOTS];    /* waited for, then a barrier */
  int64_t read_epoch[4][MAX_SLOTS];
  int done[4][MAX_SLOTS];       /* the group was waited for */
  int ngroups, completed;       /* groups committed; groups < completed waited for */
  int64_t epoch;                /* barriers passed */
  int64_t reads, copies;
  /* wgmma groups left running (tc_kmma.wait1): the slots' asynchronous
   * readers finish only at a later wgmma.wait_group; wg_group: the group
   * of the slot's last such read (-1: none running) */
  int wg_group[4][MAX_SLOTS];
  int wg_groups, wg_done;       /* wgmma groups committed; groups < wg_done finished */
  const tc_tensor *acc[4];      /* the accumulators of wait-1 wgmmas */
  int nacc;
  int64_t async_reads;
  /* rings of bulk tensor copies: per slot, the mbarrier its copy arms
   * and the phase it completes (-1: not a bulk copy); per mbarrier, the
   * arrivals in the phase being armed, the phases fully armed, those
   * completed as this thread saw them (a wait), and those it waited for */
  int bar_of[4][MAX_SLOTS];
  int64_t phase[4][MAX_SLOTS];
  int64_t arrivals[MAX_BARS], armed[MAX_BARS], seen[MAX_BARS], waited[MAX_BARS];
  int64_t mbar_waits, bulk_copies;
  char err[256];
} model;

static int ring_of(const model *m, const tc_tensor *t) {
  for (int i = 0; i < m->nring; i++)
    if (m->ring[i]->t == t) return i;
  return -1;
}

static void fail(model *m, const char *msg) {
  if (!m->err[0]) snprintf(m->err, sizeof m->err, "%s", msg);
}

/* wgmma groups below `upto` are finished: their reads of the slots end
 * now (a copy into such a slot needs a barrier after this point). */
static void wgmma_finish(model *m, int upto) {
  if (upto <= m->wg_done) return;
  m->wg_done = upto;
  for (int r = 0; r < m->nring; r++)
    for (int s = 0; s < m->ring[r]->stages; s++)
      if (m->wg_group[r][s] >= 0 && m->wg_group[r][s] < upto) m->wg_group[r][s] = -1, m->read_epoch[r][s] = m->epoch;
}

static void barrier(model *m) {
  m->epoch++;
  for (int r = 0; r < m->nring; r++)
    for (int s = 0; s < m->ring[r]->stages; s++)
      if (m->group[r][s] >= 0 && m->group[r][s] < m->completed) m->visible[r][s] = 1;
}

/* The slot a ring copy fills: where the first element of its tile goes
 * (the store's index with every variable but the tile's at 0: thread 0,
 * the copy's first iteration), so that the slot is the block's, whether
 * or not this thread has elements of the tile. */
static int64_t copy_slot(model *m, const tc_kstmt *s, int w) {
  int nv = tc_e_num_vars(m->k->pool);
  int64_t *v = calloc((size_t)nv + 1, sizeof *v);
  for (int i = 0; i < nv; i++)
    if (tc_e_uses(s->ring_tile, i)) v[i] = m->vars[i];
  int64_t slot = tc_e_eval(s->out_index, v) / m->ring[w]->slot_elems;
  free(v);
  return slot;
}

/* The arrivals that complete a phase of mbarrier b, per issuing row: one
 * per copy statement of its ring (tc_kir.ring_arrivals); 0: no ring's. */
static int64_t ring_arrivals(const model *m, int b) {
  for (int r = 0; r < m->k->nrings_bulk; r++)
    if (b >= m->k->ring_bar[r] && b < m->k->ring_bar[r] + m->k->ring_stages[r]) return m->k->ring_arrivals[r];
  return 0;
}

/* A bulk copy of ring tensor w into `slot`: it arms its slot's mbarrier
 * with its bytes, and the tile lands when the phase being armed
 * completes.  The mbarrier must be the slot's, and this thread must have
 * waited for every earlier phase of it: a phase armed while the one
 * before is still unobserved leaves two phases of one parity in flight. */
static void bulk_copy(model *m, const tc_kstmt *s, int w, int64_t slot) {
  char b[200];
  int bar = s->tma.bar + (int)tc_e_eval(s->tma.bar_slot, m->vars);
  int64_t want = ring_arrivals(m, bar);
  if (bar < 0 || bar >= MAX_BARS || want <= 0 || tc_e_eval(s->tma.bar_slot, m->vars) != slot) {
    snprintf(b, sizeof b, "%s: a bulk copy into slot %lld arms mbarrier %d, not its slot's", s->op->out->name,
             (long long)slot, bar);
    return fail(m, b);
  }
  if (m->waited[bar] < m->armed[bar]) {
    snprintf(b, sizeof b, "%s: a bulk copy arms phase %lld of mbarrier %d before phase %lld was waited for",
             s->op->out->name, (long long)m->armed[bar], bar, (long long)m->waited[bar]);
    return fail(m, b);
  }
  m->bar_of[w][slot] = bar;
  m->phase[w][slot] = m->armed[bar];
  m->bulk_copies++;
  if (++m->arrivals[bar] == want) m->arrivals[bar] = 0, m->armed[bar]++;
}

/* mbarrier.try_wait.parity on mbarrier bar with `parity`, retried: with
 * c phases completed, it returns at once where c % 2 != parity (the
 * phase of that parity is the one just completed), else once phase c
 * completes, which needs it fully armed (else the wait never returns).
 * The tiles of the phases completed are then this thread's to read. */
static void mbar_wait(model *m, int bar, int64_t parity) {
  char b[160];
  if (bar < 0 || bar >= MAX_BARS || ring_arrivals(m, bar) <= 0) {
    snprintf(b, sizeof b, "a wait on mbarrier %d, which is no ring slot's", bar);
    return fail(m, b);
  }
  int64_t c = m->seen[bar];
  if (c % 2 == parity) {
    if (m->armed[bar] <= c) {
      snprintf(b, sizeof b, "a wait for phase %lld of mbarrier %d, which no copy completes", (long long)c, bar);
      return fail(m, b);
    }
    m->seen[bar] = c + 1;
  }
  m->waited[bar] = m->seen[bar];
  m->mbar_waits++;
  for (int r = 0; r < m->nring; r++)
    for (int s = 0; s < m->ring[r]->stages; s++)
      if (m->bar_of[r][s] == bar && m->phase[r][s] < m->seen[bar]) m->visible[r][s] = 1;
}

static void stmt(model *m, const tc_knode *n) {
  const tc_kstmt *s = &n->stmt;
  int w = ring_of(m, s->op->out);
  /* a copy into a slot, by the block's threads that have elements of the
   * tile: every one of them goes through the same nodes */
  if (w >= 0 && !s->ring_tile) return fail(m, "a ring copy without its tile");
  if (w >= 0 && tc_e_eval(s->ring_tile, m->vars) < m->ring[w]->ring_loop->loop.extent) {
    int64_t slot = copy_slot(m, s, w);
    if (slot < 0 || slot >= m->ring[w]->stages) return fail(m, "a copy outside the ring");
    if (m->wg_group[w][slot] >= 0) {
      char b[160];
      snprintf(b, sizeof b, "%s: a copy into slot %lld while a wgmma still reads it", s->op->out->name,
               (long long)slot);
      return fail(m, b);
    }
    if (m->read_epoch[w][slot] >= m->epoch) {
      char b[160];
      snprintf(b, sizeof b, "%s: a copy into slot %lld with no barrier since its last read",
               s->op->out->name, (long long)slot);
      return fail(m, b);
    }
    m->tile[w][slot] = tc_e_eval(s->ring_tile, m->vars);
    m->group[w][slot] = m->ngroups;
    m->visible[w][slot] = 0;
    m->bar_of[w][slot] = -1;
    m->copies++;
    if (s->tma.kind && s->tma.bar_slot) bulk_copy(m, s, w, slot);
  }
  /* no other statement touches the accumulators of a running wgmma */
  bool async = s->mma.kind == TC_MACRO_WGMMA && s->mma.wait1;
  for (int i = 0; i < m->nacc && !async && m->wg_done < m->wg_groups; i++) {
    bool uses = s->op->out == m->acc[i];
    for (int q = 0; q < s->op->nin; q++) uses = uses || s->op->in[q] == m->acc[i];
    if (uses) {
      char b[160];
      snprintf(b, sizeof b, "%s uses %s while a wgmma group on it is still running", s->op->out->name, m->acc[i]->name);
      return fail(m, b);
    }
  }
  /* reads by this thread */
  if (!tc_e_eval(s->pred, m->vars) || s->red.kind == TC_RED_INIT || s->red.kind == TC_RED_ALL) return;
  for (int q = 0; q < s->op->nin; q++) {
    int r = ring_of(m, s->op->in[q]);
    if (r < 0) continue;
    if (!m->in_ring_loop) return fail(m, "a read outside the ring loop");
    /* a wgmma reads through its descriptors, from their start addresses */
    const tc_expr *at = s->mma.kind == TC_MACRO_WGMMA && q < 2 ? (q ? s->mma.start_b : s->mma.start_a)
                                                              : s->in_index[q];
    int64_t slot = tc_e_eval(at, m->vars) / m->ring[r]->slot_elems;
    int64_t want = tc_e_eval(m->loopvar, m->vars);
    char b[200];
    if (slot < 0 || slot >= m->ring[r]->stages || m->group[r][slot] < 0 || m->tile[r][slot] != want) {
      snprintf(b, sizeof b, "%s: iteration %lld reads slot %lld, which holds tile %lld", s->op->in[q]->name,
               (long long)want, (long long)slot, slot >= 0 && slot < MAX_SLOTS ? (long long)m->tile[r][slot] : -1LL);
      return fail(m, b);
    }
    if (!m->visible[r][slot] && m->bar_of[r][slot] >= 0) {
      snprintf(b, sizeof b, "%s: iteration %lld reads slot %lld before this thread saw phase %lld of its "
               "mbarrier complete", s->op->in[q]->name, (long long)want, (long long)slot,
               (long long)m->phase[r][slot]);
      return fail(m, b);
    }
    if (!m->visible[r][slot]) {
      snprintf(b, sizeof b, "%s: iteration %lld reads slot %lld before its copy was waited for and a "
               "barrier passed", s->op->in[q]->name, (long long)want, (long long)slot);
      return fail(m, b);
    }
    if (async) { /* read by the group the statement commits, until a wait finishes it */
      m->wg_group[r][slot] = m->wg_groups;
      m->async_reads++;
    } else {
      m->read_epoch[r][slot] = m->epoch;
    }
    m->reads++;
  }
  /* the statement's group is committed and left running: wgmma.wait_group
   * 1 finishes every earlier one.  (The printer commits a K tile's K
   * steps as one group; a group per step finishes the earlier steps
   * sooner, but no copy or barrier comes between the steps, so the
   * copies see the same.) */
  if (async) {
    int i = 0;
    while (i < m->nacc && m->acc[i] != s->op->out) i++;
    if (i == m->nacc && m->nacc < 4) m->acc[m->nacc++] = s->op->out;
    m->wg_groups++;
    wgmma_finish(m, m->wg_groups - 1);
  }
}

static void node(model *m, const tc_knode *n) {
  if (m->err[0]) return;
  if (n->cp_wait) {
    int pending = n->cp_wait - 1;
    if (m->ngroups - pending > m->completed) m->completed = m->ngroups - pending;
  }
  if (n->mbar_slot)
    mbar_wait(m, n->mbar_base + (int)tc_e_eval(n->mbar_slot, m->vars), tc_e_eval(n->mbar_parity, m->vars));
  if (n->sync_before) barrier(m);
  if (n->kind == TC_K_STMT) {
    stmt(m, n);
  } else if (n->loop.tma_stmt) {
    stmt(m, n->loop.tma_stmt); /* one issue of the boxes (its loops' variables at 0) */
  } else {
    bool ring = n->loop.var == m->loopvar;
    for (int64_t i = 0; i < n->loop.extent && !m->err[0]; i++) {
      m->vars[n->loop.var->val] = i;
      m->in_ring_loop += ring;
      for (int j = 0; j < n->nbody; j++) node(m, n->body[j]);
      m->in_ring_loop -= ring;
      if (n->sync_end) barrier(m);
    }
    m->vars[n->loop.var->val] = 0;
    if (n->loop.wgmma_drain) wgmma_finish(m, m->wg_groups); /* wgmma.wait_group 0 */
  }
  if (n->cp_commit) m->ngroups++;
}

/* The mbarrier waits and bulk copies thread 0 saw in the last run_model. */
static int64_t model_mbar_waits, model_bulk_copies;

/* Runs the model on f's kernel for target, as block 0's thread 0 and as
 * the last thread of the last block; returns the first error ("": none)
 * in err and the reads and copies thread 0 saw. */
static void run_model_async(tc_fusion *f, tc_target target, const char *arch, char *err, size_t size,
                            int64_t *reads, int64_t *copies, int64_t *async_reads) {
  tc_kir *k = NULL;
  tc_status st = tc_lower(f, target, arch, &k);
  snprintf(err, size, "lowering failed: %s", tc_fusion_error(f));
  if (st) return;
  err[0] = 0;
  for (int pass = 0; pass < 2 && !err[0]; pass++) {
    model m;
    memset(&m, 0, sizeof m);
    m.k = k;
    m.vars = calloc((size_t)tc_e_num_vars(k->pool) + 1, sizeof *m.vars);
    for (int p = 0; p < 6 && pass; p++) {
      int64_t lo, hi;
      tc_e_var_range(k->pool, (int)k->pvar[p]->val, &lo, &hi);
      m.vars[k->pvar[p]->val] = hi;
    }
    for (int i = 0; i < k->nallocs && m.nring < 4; i++)
      if (k->allocs[i].stages > 1) {
        m.ring[m.nring++] = &k->allocs[i];
        m.loopvar = k->allocs[i].ring_loop->loop.var;
      }
    for (int r = 0; r < 4; r++)
      for (int s = 0; s < MAX_SLOTS; s++)
        m.group[r][s] = -1, m.read_epoch[r][s] = -1, m.wg_group[r][s] = -1, m.bar_of[r][s] = -1;
    for (int i = 0; i < k->root->nbody; i++) node(&m, k->root->body[i]);
    if (!m.err[0] && m.wg_done < m.wg_groups) fail(&m, "the kernel ends with a wgmma group running");
    for (int b = 0; b < MAX_BARS && !m.err[0]; b++) {
      char e[160];
      if (m.arrivals[b] || m.armed[b] != m.waited[b]) {
        snprintf(e, sizeof e, "the kernel ends with mbarrier %d %s", b,
                 m.arrivals[b] ? "in a phase armed by fewer copies than it counts" : "in a phase no thread waited for");
        fail(&m, e);
      }
    }
    if (!pass) model_mbar_waits = m.mbar_waits, model_bulk_copies = m.bulk_copies;
    snprintf(err, size, "%s", m.nring ? m.err : "no ring in the kernel");
    if (!pass) *reads = m.reads, *copies = m.copies;
    if (!pass && async_reads) *async_reads = m.async_reads;
    free(m.vars);
  }
  tc_kir_free(k);
}

static void run_model(tc_fusion *f, tc_target target, const char *arch, char *err, size_t size,
                      int64_t *reads, int64_t *copies) {
  run_model_async(f, target, arch, err, size, reads, copies, NULL);
}

static tc_fusion *scheduled(tc_dtype t, int64_t mm, int64_t n, int64_t k, tc_matmul_tiles tl) {
  tc_fusion *f = matmul_fusion(t, mm, n, k);
  OK(f, tc_schedule_matmul(f, TC_TARGET_OPENCL, NULL, &tl));
  return f;
}

/* The model accepts the lowering's rings (FMA and mma, 2 to 4 stages,
 * K tiles fewer than the stages) and sees every tile read. */
static void test_protocol(void) {
  static const struct {
    tc_dtype t;
    int64_t m, n, k;
    tc_matmul_tiles tl;
  } cs[] = {
      {TC_F32, 67, 97, 33, {32, 32, 8, 4, 4, TC_MACRO_FMA, 2}},
      {TC_F32, 64, 64, 64, {32, 32, 8, 4, 4, TC_MACRO_FMA, 3}},
      {TC_BF16, 13, 7, 5, {16, 8, 8, 4, 4, TC_MACRO_FMA, 4}},
      {TC_F16, 64, 64, 96, {32, 32, 16, 16, 16, TC_MACRO_MMA_M16N8K16, 3}},
      {TC_BF16, 33, 20, 24, {32, 16, 16, 16, 8, TC_MACRO_MMA_M16N8K16, 4}},
      /* wgmma: the descriptors' starts at slot k % S; without and with
       * the 128B swizzle, edges, K shorter than the ring */
      {TC_BF16, 67, 97, 133, {128, 96, 32, 64, 48, TC_MACRO_WGMMA, 3}},
      {TC_F16, 128, 128, 320, {128, 128, 64, 64, 64, TC_MACRO_WGMMA, 4}},
      {TC_F16, 70, 72, 20, {64, 72, 16, 64, 72, TC_MACRO_WGMMA, 4}},
      {TC_BF16, 64, 64, 128, {64, 64, 64, 64, 64, TC_MACRO_WGMMA, 2}},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    static const tc_target tgs[2] = {TC_TARGET_OPENCL, TC_TARGET_CUDA};
    for (int ti = 0; ti < 2; ti++) {
      tc_target tg = tgs[ti];
      tc_fusion *f = scheduled(cs[i].t, cs[i].m, cs[i].n, cs[i].k, cs[i].tl);
      char err[256];
      int64_t reads = 0, copies = 0;
      const char *arch = cs[i].tl.macro == TC_MACRO_WGMMA ? "sm_90a" : "sm_80";
      run_model(f, tg, tg == TC_TARGET_CUDA ? arch : NULL, err, sizeof err, &reads, &copies);
      TC_CHECK(err[0] == 0, "case %zu (%s): %s", i, tg == TC_TARGET_CUDA ? "cuda" : "opencl", err);
      /* A and B: a copy of each tile's element per thread 0, and reads */
      int64_t ktiles = (cs[i].k + cs[i].tl.bk - 1) / cs[i].tl.bk;
      TC_CHECK(copies >= 2 * ktiles && reads >= 2 * ktiles, "case %zu: %lld copies, %lld reads for %lld K tiles",
               i, (long long)copies, (long long)reads, (long long)ktiles);
      tc_fusion_free(f);
    }
  }
}

/* Each injected fault fails the model, with the reason the fault makes
 * (4, a wgmma's descriptors left at slot 0, only where a wgmma reads). */
static void test_protocol_faults(void) {
  static const char *const want[5] = {NULL, "before its copy was waited for", "no barrier since its last read",
                                      "before its copy was waited for", "which holds tile"};
  for (int fault = 1; fault <= 4; fault++) {
    for (int mma = fault == 4 ? 2 : 0; mma < 4; mma++) {
      tc_test_hooks h = {0};
      h.circular_fault = fault;
      tc_test_hooks_set(&h);
      /* (2: wgmma without swizzle, 3: with the 128B swizzle) */
      tc_matmul_tiles tl = mma == 3   ? (tc_matmul_tiles){64, 64, 64, 64, 64, TC_MACRO_WGMMA, 3}
                           : mma == 2 ? (tc_matmul_tiles){64, 64, 16, 64, 32, TC_MACRO_WGMMA, 3}
                           : mma      ? (tc_matmul_tiles){32, 32, 16, 16, 16, TC_MACRO_MMA_M16N8K16, 3}
                                      : (tc_matmul_tiles){32, 32, 8, 4, 4, TC_MACRO_FMA, 3};
      tc_fusion *f = scheduled(mma ? TC_F16 : TC_F32, 64, 64, mma == 3 ? 256 : 64, tl);
      char err[256];
      int64_t reads, copies;
      run_model(f, TC_TARGET_CUDA, mma >= 2 ? "sm_90a" : "sm_80", err, sizeof err, &reads, &copies);
      tc_test_hooks_set(NULL);
      /* a missing barrier shows first at the copy after the reads that
       * it no longer separates, or at a read before publication */
      TC_CHECK(strstr(err, want[fault]) != NULL || (fault == 2 && strstr(err, "waited for and a barrier")),
               "fault %d (%s): the model says \"%s\"", fault, mma >= 2 ? "wgmma" : mma ? "mma" : "fma", err);
      tc_fusion_free(f);
    }
  }
}

/* The wgmma ring of S stages over E K tiles (64 x 64 x 16 E, one warp
 * group of 64 x 64, K tiles of 16; swz: K tiles of 64, the 128B swizzle),
 * run through the model for target: err, and the wgmma reads that were
 * asynchronous (left running past their iteration) and all reads. */
static void wgmma_ring_model(int S, int64_t E, bool swz, tc_target tg, char *err, size_t size, int64_t *async_reads,
                             int64_t *reads) {
  int64_t bk = swz ? 64 : 16;
  tc_fusion *f = scheduled(TC_BF16, 64, 64, E * bk, (tc_matmul_tiles){64, 64, bk, 64, 64, TC_MACRO_WGMMA, S});
  int64_t copies = 0;
  *async_reads = 0;
  run_model_async(f, tg, tg == TC_TARGET_CUDA ? "sm_90a" : NULL, err, size, reads, &copies, async_reads);
  tc_fusion_free(f);
}

/* Wait depth 1 (circular.c): in wgmma rings of 3 to 5 stages, every
 * wgmma read is left running into the next iteration, and still no slot
 * is overwritten before the wgmma that read it has finished (and a
 * barrier passed since), every read finds its own tile, and nothing
 * touches the accumulators before the last group is waited for; at K
 * tile counts of 1, 2, S - 1, S and 7.  A ring of 2 stages keeps depth 0
 * (no asynchronous read).  The wrong variant, depth 1 with the copies
 * S - 1 tiles ahead (fault 5), overwrites the slot of the group that
 * wait_group 1 leaves running: the model must say so. */
static void test_protocol_depth1(void) {
  for (int S = 2; S <= 5; S++) {
    int64_t extents[5] = {1, 2, S - 1, S, 7};
    for (int e = 0; e < 5; e++) {
      for (int tg = 0; tg < 2; tg++) {
        bool swz = (S + e) % 2 == 0; /* both layouts at every stage count */
        char err[256];
        int64_t async_reads, reads;
        wgmma_ring_model(S, extents[e], swz, tg ? TC_TARGET_CUDA : TC_TARGET_OPENCL, err, sizeof err, &async_reads,
                         &reads);
        TC_CHECK(err[0] == 0, "S %d, %lld K tiles (%s): %s", S, (long long)extents[e], tg ? "cuda" : "opencl", err);
        /* thread 0 reads A and B once per K step: 2 E (bk / 16) */
        int64_t want = 2 * extents[e] * (swz ? 4 : 1);
        TC_CHECK(reads == want && async_reads == (S >= 3 ? want : 0),
                 "S %d, %lld K tiles: %lld reads (%lld asynchronous), want %lld (%s)", S,
                 (long long)extents[e], (long long)reads, (long long)async_reads, (long long)want,
                 S >= 3 ? "all asynchronous" : "none asynchronous");
      }
    }
  }
  for (int S = 3; S <= 5; S++) {
    tc_test_hooks h = {0};
    h.circular_fault = 5;
    tc_test_hooks_set(&h);
    char err[256];
    int64_t async_reads, reads;
    wgmma_ring_model(S, 7, S == 4, TC_TARGET_CUDA, err, sizeof err, &async_reads, &reads);
    tc_test_hooks_set(NULL);
    TC_CHECK(strstr(err, "while a wgmma still reads it") != NULL, "S %d, copies S - 1 ahead at depth 1: the model says \"%s\"",
             S, err);
  }
}

/* The wgmma ring of S stages over E K tiles by bulk tensor copies: 128 x
 * 128 x 64 E, A [M, K] and B [N, K] (K-major), K tiles of 64 (the 128B
 * swizzle, whole boxes), two warp groups (each issuing its rows of A and
 * B), scheduled and lowered for CUDA sm_90a, through the model: err and
 * the reads thread 0 saw. */
static void bulk_ring_model(int S, int64_t E, char *err, size_t size, int64_t *reads) {
  tc_fusion *f = matmul_fusion_tb(TC_BF16, 128, 128, E * 64, true);
  tc_matmul_tiles tl = {128, 128, 64, 64, 128, TC_MACRO_WGMMA, S};
  OK(f, tc_schedule_matmul(f, TC_TARGET_CUDA, "sm_90a", &tl));
  TC_CHECK(strstr(tc_fusion_schedule_note(f), "by bulk tensor copies on CUDA sm_90+, one thread arming each slot") != NULL,
           "S %d: note %s", S, tc_fusion_schedule_note(f));
  int64_t copies = 0;
  run_model(f, TC_TARGET_CUDA, "sm_90a", err, size, reads, &copies);
  tc_fusion_free(f);
}

/* Rings of bulk tensor copies (circular.c): each slot's tile lands on
 * the slot's mbarrier, armed by the copies of one row's issuing thread
 * (A's and B's: two arrivals a phase), and iteration k waits on slot k %
 * S for the phase of parity (k / S) % 2.  For S = 2 to 5 over 1, 2, S -
 * 1, S, S + 1 and 7 K tiles, the model (with mbarrier phases: a wait of
 * parity p returns at once where the phase of parity p is the last one
 * completed, else when the next completes, which needs it armed) finds
 * every read after the phase of its own tile, no phase armed before the
 * thread waited for the one before, no copy into a slot a wgmma may
 * still read or without a barrier since its last read, and at the end
 * no phase half armed or unwaited; thread 0 arms 2 E times and waits E
 * times.  The faults: the other parity (6), no barrier at the top of the
 * loop (2), depth 1 with the copies S - 1 tiles ahead (5). */
static void test_protocol_bulk(void) {
  for (int S = 2; S <= 5; S++) {
    int64_t extents[6] = {1, 2, S - 1, S, S + 1, 7};
    for (int e = 0; e < 6; e++) {
      char err[256];
      int64_t reads = 0;
      bulk_ring_model(S, extents[e], err, sizeof err, &reads);
      TC_CHECK(err[0] == 0, "S %d, %lld K tiles: %s", S, (long long)extents[e], err);
      /* 4 K steps of A and B per tile */
      TC_CHECK(model_bulk_copies == 2 * extents[e] && model_mbar_waits == extents[e] && reads == 8 * extents[e],
               "S %d, %lld K tiles: %lld bulk copies, %lld mbarrier waits, %lld reads", S, (long long)extents[e],
               (long long)model_bulk_copies, (long long)model_mbar_waits, (long long)reads);
    }
  }
  static const struct {
    int fault;
    const char *want, *also;
  } faults[] = {{6, "before this thread saw phase", "which no copy completes"},
                {2, "no barrier since its last read", "while a wgmma still reads it"},
                {5, "while a wgmma still reads it", "while a wgmma still reads it"}};
  for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
    for (int S = faults[i].fault == 5 ? 3 : 2; S <= 5; S++) {
      tc_test_hooks h = {0};
      h.circular_fault = faults[i].fault;
      tc_test_hooks_set(&h);
      char err[256];
      int64_t reads = 0;
      bulk_ring_model(S, 7, err, sizeof err, &reads);
      tc_test_hooks_set(NULL);
      TC_CHECK(strstr(err, faults[i].want) != NULL || strstr(err, faults[i].also) != NULL,
               "fault %d, S %d: the model says \"%s\"", faults[i].fault, S, err);
    }
}

/* A wgmma ring whose B tile is taken out of the ring (tc_circular_buffer
 * 1 on it after the schedule: one buffer, rewritten every iteration)
 * keeps wait depth 0 and says why on the statement: on PoCL against the
 * plain C loop, through the model (no asynchronous read), and in the
 * CUDA text (no wgmma.wait_group 1, the reason in a comment). */
static int run_scheduled(tc_fusion *f, const char *desc, tc_dtype t, int64_t m, int64_t n, int64_t kk);
static tc_fusion *b_out_of_ring(tc_target tg) {
  tc_matmul_tiles tl = {64, 64, 16, 64, 64, TC_MACRO_WGMMA, 3};
  tc_fusion *f = matmul_fusion(TC_BF16, 64, 64, 112);
  OK(f, tc_schedule_matmul(f, tg, tg == TC_TARGET_CUDA ? "sm_90a" : NULL, &tl));
  tc_tensor *last = NULL;
  for (int i = 0; i < f->ntensors; i++)
    if (f->tensors[i]->circular_stages == 3) last = f->tensors[i];
  TC_CHECK(last != NULL, "no ring tile");
  if (last) OK(f, tc_circular_buffer(last, 1));
  return f;
}

static void test_depth0_kept(void) {
  const char *why = "wait depth 0: an operand tile is not in this loop's ring";
  char err[256];
  int64_t reads = 0, copies = 0, async_reads = -1;
  tc_fusion *f = b_out_of_ring(TC_TARGET_OPENCL);
  run_model_async(f, TC_TARGET_OPENCL, NULL, err, sizeof err, &reads, &copies, &async_reads);
  TC_CHECK(err[0] == 0 && reads == 7 && async_reads == 0, "%s: %lld reads of the ring, %lld asynchronous", err,
           (long long)reads, (long long)async_reads);
  run_scheduled(f, "wgmma, B out of the ring", TC_BF16, 64, 64, 112);
  f = b_out_of_ring(TC_TARGET_CUDA);
  tc_compile_options opt = {TC_TARGET_CUDA, "sm_90a", "ring_b1"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &opt, &st);
  TC_CHECK(k != NULL, "%s", tc_fusion_error(f));
  if (k) {
    const char *src = tc_kernel_source(k);
    TC_CHECK(strstr(src, why) && !strstr(src, "wgmma.wait_group.sync.aligned 1;") &&
                 strstr(src, "wgmma.wait_group.sync.aligned 0;") && strstr(src, "tc_fc["),
             "not the depth-0 form with its reason in\n%s", src);
  }
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* ---- PoCL runs ----------------------------------------------------------- */

static int run_scheduled(tc_fusion *f, const char *desc, tc_dtype t, int64_t m, int64_t n, int64_t kk);
static int run_scheduled_tb(tc_fusion *f, const char *desc, tc_dtype t, int64_t m, int64_t n, int64_t kk, bool tb);

/* relu(A @ B + bias) on OpenCL against the plain C loop; -1 not run */
static int run_case(tc_dtype t, int64_t m, int64_t n, int64_t kk, tc_matmul_tiles tl) {
  char desc[160];
  snprintf(desc, sizeof desc, "%lldx%lldx%lld %s %s tiles %lld,%lld,%lld,%lld,%lld stages %d", (long long)m,
           (long long)n, (long long)kk, tc_dtype_name(t), tl.macro ? "mma" : "fma", (long long)tl.bm,
           (long long)tl.bn, (long long)tl.bk, (long long)tl.tm, (long long)tl.tn, tl.stages);
  tc_fusion *f = scheduled(t, m, n, kk, tl);
  if (tl.stages > 1)
    TC_CHECK(strstr(tc_fusion_schedule_note(f), "rings of") != NULL, "%s: note %s", desc, tc_fusion_schedule_note(f));
  return run_scheduled(f, desc, t, m, n, kk);
}

static int run_scheduled(tc_fusion *f, const char *desc, tc_dtype t, int64_t m, int64_t n, int64_t kk) {
  return run_scheduled_tb(f, desc, t, m, n, kk, false);
}

/* f (relu(A @ B + bias), scheduled; tb: B given as [n, k]) on OpenCL
 * against the plain C loop; frees f */
static int run_scheduled_tb(tc_fusion *f, const char *desc, tc_dtype t, int64_t m, int64_t n, int64_t kk, bool tb) {
  tc_compile_options opt = {TC_TARGET_OPENCL, NULL, "ring"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &opt, &st);
  TC_CHECK(k != NULL, "%s: %s", desc, tc_fusion_error(f));
  if (!k) return tc_fusion_free(f), -1;
  TC_CHECK(strstr(tc_kernel_source(k), "tc_cpa") == NULL, "%s: cp.async in an OpenCL kernel", desc);
  double *va = malloc((size_t)(m * kk) * sizeof(double)), *vb = malloc((size_t)(kk * n) * sizeof(double));
  void *a = values(t, m * kk, va), *b = values(t, kk * n, vb);
  if (tb) { /* the same values, stored [n, k] (vb stays [k, n]) */
    size_t es = t == TC_F32 ? 4 : 2;
    unsigned char *bt = malloc((size_t)(kk * n) * es + 1);
    for (int64_t q = 0; q < kk; q++)
      for (int64_t j = 0; j < n; j++) memcpy(bt + (size_t)(j * kk + q) * es, (unsigned char *)b + (size_t)(q * n + j) * es, es);
    free(b);
    b = bt;
  }
  float *bias = malloc((size_t)n * sizeof(float)), *out = malloc((size_t)(m * n) * sizeof(float));
  for (int64_t j = 0; j < n; j++) bias[j] = (float)((int64_t)(rnd() % 41) - 20) / 8.0f;
  memset(out, 0xff, (size_t)(m * n) * sizeof(float));
  void *args[4] = {a, b, bias, out};
  st = tc_kernel_run(k, args, NULL, NULL);
  int bad = -1;
  if (st == TC_ERR_NO_DEVICE) {
    printf("  skip run: %s\n", tc_kernel_error(k));
  } else {
    TC_CHECK(st == TC_OK, "%s: run: %s", desc, tc_kernel_error(k));
    double dbias[512];
    for (int64_t j = 0; j < n && j < 512; j++) dbias[j] = bias[j];
    bad = matmul_mismatches(desc, out, va, vb, dbias, m, n, kk, 0);
  }
  free(va), free(vb), free(a), free(b), free(bias), free(out);
  tc_kernel_free(k);
  tc_fusion_free(f);
  return bad;
}

static void test_fma_runs(void) {
  static const int64_t shapes[][3] = {{1, 1, 1}, {67, 97, 33}, {13, 7, 5}, {31, 17, 131}};
  static const tc_dtype ts[3] = {TC_F32, TC_F16, TC_BF16};
  for (int ti = 0; ti < 3; ti++)
    for (int stages = 1; stages <= 4; stages++)
      for (int s = 0; s < 4; s++) {
        /* the second shape with tiles whose copies run in aligned vectors */
        tc_matmul_tiles tl = {s == 1 ? 32 : 16, s == 1 ? 32 : 16, 8, 4, 4, TC_MACRO_FMA, stages};
        if ((ti + stages) % 4 != s) continue; /* each dtype meets every shape and stage count */
        run_case(ts[ti], shapes[s][0], shapes[s][1], shapes[s][2], tl);
      }
  /* aligned extents: the copies are 16-byte runs */
  run_case(TC_F32, 64, 64, 64, (tc_matmul_tiles){32, 32, 16, 4, 4, TC_MACRO_FMA, 3});
  run_case(TC_F16, 64, 64, 64, (tc_matmul_tiles){32, 32, 16, 4, 4, TC_MACRO_FMA, 2});
}

static void test_mma_runs(void) {
  static const int64_t shapes[][3] = {{1, 1, 1}, {67, 97, 131}, {33, 20, 24}, {64, 64, 96}};
  for (int ti = 0; ti < 2; ti++)
    for (int stages = 1; stages <= 4; stages++)
      for (int s = 0; s < 4; s++) {
        if ((ti + stages) % 4 != s) continue;
        tc_matmul_tiles tl = {32, 32, 16, 16, 16, TC_MACRO_MMA_M16N8K16, stages};
        run_case(ti ? TC_BF16 : TC_F16, shapes[s][0], shapes[s][1], shapes[s][2], tl);
      }
}

/* wgmma tiles in rings of 1 to 4 stages, f16 / bf16, both shared
 * layouts (K tiles of 16 or 32: core matrices; 64: the 128B swizzle),
 * B as [K, N] and as [N, K], at ragged shapes (edges zero-filled in
 * every slot, K shorter than the ring) */
static void test_wgmma_runs(void) {
  static const struct {
    int64_t m, n, k, bm, bn, bk, tn;
  } cs[] = {
      {1, 1, 1, 64, 8, 16, 8},        {67, 97, 133, 128, 96, 32, 48}, {70, 72, 20, 64, 72, 16, 72},
      {128, 128, 320, 128, 128, 64, 64}, {100, 40, 200, 64, 48, 64, 48}, {131, 13, 7, 192, 16, 16, 16},
  };
  int n = 0;
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
    for (int stages = 1; stages <= 4; stages++) {
      int tb = (int)(i + (size_t)stages) % 2;
      if ((i + (size_t)stages) % 3 == 0 && stages != 3) continue; /* about two thirds of the pairs */
      tc_dtype t = (i + (size_t)stages / 2) % 2 ? TC_BF16 : TC_F16;
      tc_matmul_tiles tl = {cs[i].bm, cs[i].bn, cs[i].bk, 64, cs[i].tn, TC_MACRO_WGMMA, stages};
      char desc[160];
      snprintf(desc, sizeof desc, "wgmma %lldx%lldx%lld %s tiles %lld,%lld,%lld,64,%lld stages %d%s",
               (long long)cs[i].m, (long long)cs[i].n, (long long)cs[i].k, tc_dtype_name(t), (long long)cs[i].bm,
               (long long)cs[i].bn, (long long)cs[i].bk, (long long)cs[i].tn, stages, tb ? " B [N, K]" : "");
      tc_fusion *f = matmul_fusion_tb(t, cs[i].m, cs[i].n, cs[i].k, tb);
      OK(f, tc_schedule_matmul(f, TC_TARGET_OPENCL, NULL, &tl));
      const char *note = tc_fusion_schedule_note(f);
      TC_CHECK(stages == 1 ? !strstr(note, "rings of") : strstr(note, "rings of") != NULL, "%s: note %s", desc, note);
      run_scheduled_tb(f, desc, t, cs[i].m, cs[i].n, cs[i].k, tb);
      n++;
    }
  TC_CHECK(n >= 16, "%d wgmma cases", n);
}

/* A ring outside a matmul: y[i][j] = 2 x[i][j] over a serial loop of i,
 * x's row staged in shared memory (a cache computed at that loop) and
 * read by another thread than the one that copied it (reversed). */
static tc_fusion *row_fusion(int stages, tc_memtype mem, int at, tc_tensor **cache, tc_tensor **out) {
  tc_fusion *f = tc_fusion_new();
  int64_t s[2] = {9, 64};
  tc_tensor *x = tc_input(f, TC_F32, 2, s);
  tc_tensor *y = tc_binary_scalar(f, TC_MUL, x, 2.0);
  tc_add_output(f, y);
  tc_tensor *c = tc_cache_after(x);
  OK(f, tc_parallelize(y, 1, TC_TIDX));
  if (at == 1) {
    OK(f, tc_compute_at(c, y, 1));
  } else {
    OK(f, tc_parallelize(y, 0, TC_BIDX));
    OK(f, tc_compute_at(c, y, 1));
  }
  OK(f, tc_set_memory_type(c, mem));
  OK(f, tc_parallelize(c, 1, TC_TIDX));
  OK(f, tc_circular_buffer(c, stages));
  *cache = c;
  if (out) *out = y;
  return f;
}

static void test_row_ring(void) {
  for (int stages = 1; stages <= 4; stages++) {
    tc_tensor *c;
    tc_fusion *f = row_fusion(stages, TC_MEM_SHARED, 1, &c, NULL);
    char err[256];
    int64_t reads = 0, copies = 0;
    if (stages > 1) {
      run_model(f, TC_TARGET_OPENCL, NULL, err, sizeof err, &reads, &copies);
      TC_CHECK(err[0] == 0 && reads == 9 && copies == 9, "row ring, %d stages: %s (%lld reads, %lld copies)",
               stages, err, (long long)reads, (long long)copies);
    }
    tc_compile_options opt = {TC_TARGET_OPENCL, NULL, "row_ring"};
    tc_status st;
    tc_kernel *k = tc_compile(f, &opt, &st);
    TC_CHECK(k != NULL, "%s", tc_fusion_error(f));
    float x[9 * 64], y[9 * 64];
    for (int i = 0; i < 9 * 64; i++) x[i] = (float)(i % 97) - 40.0f, y[i] = NAN;
    void *args[2] = {x, y};
    st = k ? tc_kernel_run(k, args, NULL, NULL) : TC_ERR_ARGUMENT;
    if (st == TC_ERR_NO_DEVICE) {
      printf("  skip run: %s\n", tc_kernel_error(k));
    } else if (k) {
      TC_CHECK(st == TC_OK, "run: %s", tc_kernel_error(k));
      for (int i = 0; i < 9 * 64; i++)
        if (y[i] != 2.0f * x[i]) {
          TC_CHECK(0, "%d stages: y[%d] = %g, want %g", stages, i, y[i], 2.0 * x[i]);
          break;
        }
    }
    tc_kernel_free(k);
    tc_fusion_free(f);
  }
}

/* ---- CUDA ------------------------------------------------------------------ */

static tc_kernel *cuda_kernel(tc_dtype t, int64_t m, int64_t n, int64_t k, tc_matmul_tiles tl, tc_fusion **fo) {
  tc_fusion *f = matmul_fusion_tb(t, m, n, k, tl.macro == TC_MACRO_WGMMA);
  const char *arch = tl.macro == TC_MACRO_WGMMA ? "sm_90a" : "sm_80";
  OK(f, tc_schedule_matmul(f, TC_TARGET_CUDA, arch, &tl));
  tc_compile_options opt = {TC_TARGET_CUDA, arch, "ring_cu"};
  tc_status st;
  *fo = f;
  return tc_compile(f, &opt, &st);
}

static void test_cuda(void) {
  static const struct {
    tc_dtype t;
    int64_t m, n, k;
    tc_matmul_tiles tl;
    const char *copy; /* the cp.async the copies become (NULL: none; "bulk":
                         bulk tensor copies on the slots' mbarriers) */
  } cs[] = {
      {TC_F32, 128, 128, 64, {64, 64, 16, 4, 4, TC_MACRO_FMA, 3}, "tc_cpa16(&"},
      {TC_F16, 128, 128, 64, {64, 64, 16, 32, 32, TC_MACRO_MMA_M16N8K16, 3}, "tc_cpa16(&"},
      {TC_BF16, 64, 64, 64, {32, 32, 16, 16, 16, TC_MACRO_MMA_M16N8K16, 4}, "tc_cpa16(&"},
      /* ragged: K and N odd, no aligned runs; f32 copies 4 bytes each */
      {TC_F32, 67, 97, 33, {32, 32, 8, 4, 4, TC_MACRO_FMA, 2}, "tc_cpa4(&"},
      {TC_F16, 67, 97, 33, {32, 32, 16, 16, 16, TC_MACRO_MMA_M16N8K16, 3}, NULL},
      /* wgmma (sm_90a, B [N, K]): whole swizzled tiles by bulk tensor
       * copies (TMA); where M is ragged, 16-byte runs (the rows past M
       * zero-filled), and without the swizzle 16-byte runs of whole
       * tiles; at a K edge inside a 16-byte run the tiles are
       * zero-filled by plain copies */
      {TC_BF16, 256, 256, 512, {128, 128, 64, 64, 128, TC_MACRO_WGMMA, 4}, "bulk"},
      {TC_BF16, 250, 256, 512, {128, 128, 64, 64, 128, TC_MACRO_WGMMA, 4}, "tc_cpa16z(&"},
      {TC_F16, 128, 64, 96, {64, 64, 32, 64, 64, TC_MACRO_WGMMA, 3}, "tc_cpa16(&"},
      {TC_F16, 67, 97, 133, {128, 96, 32, 64, 48, TC_MACRO_WGMMA, 3}, NULL},
      /* K whole tiles, M and N ragged: the rows past them are zero-filled
       * by the cp.async itself (a source size of 0) */
      {TC_BF16, 67, 97, 128, {128, 96, 32, 64, 48, TC_MACRO_WGMMA, 3}, "tc_cpa16z(&"},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    tc_fusion *f;
    tc_kernel *k = cuda_kernel(cs[i].t, cs[i].m, cs[i].n, cs[i].k, cs[i].tl, &f);
    TC_CHECK(k != NULL, "case %zu: %s", i, tc_fusion_error(f));
    if (k) {
      const char *src = tc_kernel_source(k);
      /* the copies go S - 1 tiles ahead, S - 2 in a wgmma ring of 3
       * stages or more (wait depth 1), so at the top of iteration k the
       * groups after k's that may still be pending are S - 2, or S - 3 */
      int S = cs[i].tl.stages, pending = cs[i].tl.macro == TC_MACRO_WGMMA && S >= 3 ? S - 3 : S - 2;
      char wait[64];
      snprintf(wait, sizeof wait, "cp.async.wait_group %d;", pending);
      bool bulk = cs[i].copy && strcmp(cs[i].copy, "bulk") == 0;
      if (bulk) {
        /* one mbarrier per slot, armed by the copies, waited on by
         * parity; no cp.async, no commit groups */
        TC_CHECK(strstr(src, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier") &&
                     strstr(src, "mbarrier.try_wait.parity") && !strstr(src, "tc_cpa") &&
                     !strstr(src, "cp.async.commit_group") && !strstr(src, "cp.async.wait_group"),
                 "case %zu: not a ring of bulk tensor copies in\n%s", i, src);
      } else {
        TC_CHECK(strstr(src, "cp.async.commit_group;") && strstr(src, wait), "case %zu: no %s / commit", i, wait);
      }
      if (bulk) {
      } else if (cs[i].copy) {
        TC_CHECK(strstr(src, cs[i].copy) != NULL, "case %zu: no %s in\n%s", i, cs[i].copy, src);
        /* (whole tiles: no copy zero-fills, the ring's last tiles are skipped) */
        if (!strchr(cs[i].copy, 'z'))
          TC_CHECK(strstr(src, "tc_cpa16z(&") == NULL && strstr(src, "tc_cpa8z(&") == NULL, "case %zu: a zero-filling copy", i);
        TC_CHECK(strstr(src, cs[i].copy[7] == '1' ? "cp.async.cg.shared.global" : "cp.async.ca.shared.global"),
                 "case %zu: no instruction", i);
      } else {
        TC_CHECK(strstr(src, "tc_cpa") == NULL, "case %zu: cp.async on unaligned runs", i);
      }
      tc_status st = tc_kernel_build(k, NULL);
      if (st == TC_ERR_UNSUPPORTED) printf("  skip NVRTC build: %s\n", tc_kernel_error(k));
      else TC_CHECK(st == TC_OK, "case %zu does not build: %s", i, tc_kernel_error(k));
    }
    tc_kernel_free(k);
    tc_fusion_free(f);
  }
}

/* a problem for tc_schedule_auto and what its note must hold */
typedef struct auto_case {
  tc_dtype t;
  int64_t m, n, k;
  const char *want; /* in the note */
  int stages;
} auto_case;

/* A @ B (m x k times k x n) and its row sums, scheduled by
 * tc_schedule_auto for CUDA arch: the note holds want */
static void reduction_note(tc_dtype t, int64_t m, int64_t n, int64_t k, const char *arch, const char *want) {
  tc_fusion *f = tc_fusion_new();
  int64_t sa[2] = {m, k}, sb[2] = {k, n};
  tc_tensor *y = tc_matmul(f, tc_input(f, t, 2, sa), tc_input(f, t, 2, sb));
  int last = -1;
  tc_add_output(f, y);
  tc_add_output(f, tc_reduce(f, TC_REDUCE_SUM, y, 1, &last));
  OK(f, tc_schedule_auto(f, TC_TARGET_CUDA, arch));
  TC_CHECK(strstr(tc_fusion_schedule_note(f), want), "%s: %s", arch, tc_fusion_schedule_note(f));
  tc_fusion_free(f);
}

/* f, scheduled by tc_schedule_auto for CUDA arch: its kernel holds instr
 * and a cp.async ring, and builds with NVRTC */
static void auto_kernel(tc_fusion *f, const char *arch, const char *instr, size_t i) {
  tc_compile_options opt = {TC_TARGET_CUDA, arch, "ring_auto"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &opt, &st);
  TC_CHECK(k && strstr(tc_kernel_source(k), instr) && strstr(tc_kernel_source(k), "cp.async.commit_group;"),
           "case %zu (%s): %s", i, arch, k ? "no instruction / cp.async" : tc_fusion_error(f));
  if (k) {
    st = tc_kernel_build(k, NULL);
    if (st == TC_ERR_UNSUPPORTED) printf("  skip NVRTC build: %s\n", tc_kernel_error(k));
    else TC_CHECK(st == TC_OK, "case %zu (%s) does not build: %s", i, arch, tc_kernel_error(k));
  }
  tc_kernel_free(k);
}

/* tc_schedule_auto: mma.sync in rings of 2 or 3 stages for f16 / bf16 on
 * CUDA sm_80+, FMA otherwise (OpenCL, sm_75, f32, a reduction of the
 * result); the schedule it makes for CUDA, compiled for OpenCL (the mma
 * emulated), computes the plain C loop's values at ragged shapes, and the
 * CUDA kernel holds cp.async and builds with NVRTC. */
static void test_auto(void) {
  static const auto_case cs[] = {
      {TC_BF16, 67, 97, 131, "128x128 tiles", 3}, /* 5 K tiles of 32 */
      {TC_F16, 1, 1, 1, "16x8 tiles", 2},
      {TC_F16, 20, 9, 40, "32x16 tiles", 2},    /* 2 K tiles of 32 */
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    tc_fusion *f = matmul_fusion(cs[i].t, cs[i].m, cs[i].n, cs[i].k);
    OK(f, tc_schedule_auto(f, TC_TARGET_CUDA, "sm_80"));
    const char *note = tc_fusion_schedule_note(f);
    char ring[32];
    snprintf(ring, sizeof ring, "rings of %d stages", cs[i].stages);
    TC_CHECK(strstr(note, "as mma.sync m16n8k16") && strstr(note, cs[i].want) && strstr(note, ring) &&
                 strstr(note, "the scheduler's op type"), "case %zu: note %s", i, note);
    auto_kernel(f, "sm_80", "tc_mma_", i);
    run_scheduled(f, note, cs[i].t, cs[i].m, cs[i].n, cs[i].k);
  }
  /* FMA where mma.sync does not apply */
  static const struct {
    tc_target target;
    const char *arch;
    tc_dtype t;
  } fma[] = {{TC_TARGET_OPENCL, NULL, TC_F16}, {TC_TARGET_CUDA, "sm_75", TC_BF16}, {TC_TARGET_CUDA, "sm_80", TC_F32}};
  for (size_t i = 0; i < sizeof fma / sizeof fma[0]; i++) {
    tc_fusion *f = matmul_fusion(fma[i].t, 64, 64, 64);
    OK(f, tc_schedule_auto(f, fma[i].target, fma[i].arch));
    TC_CHECK(strstr(tc_fusion_schedule_note(f), "(FMA outer products)") && !strstr(tc_fusion_schedule_note(f), "rings"),
             "fma case %zu: %s", i, tc_fusion_schedule_note(f));
    tc_fusion_free(f);
  }
  /* a row reduction of the result: FMA, and the note says why */
  reduction_note(TC_F16, 32, 24, 16, "sm_80", "FMA, not mma.sync: the mma.sync op type takes no reduction");
}

/* tc_schedule_auto on CUDA sm_90a: wgmma in rings of 2 or 3 stages where
 * M and N are at least 64 (the tiles, stages and shared memory derived
 * by hand from the rule in docs/matmul.md), built with NVRTC for sm_90a,
 * and the same schedule run on OpenCL (the wgmma emulated) against the
 * plain C loop; mma.sync where the result is smaller than 64 x 64 or the
 * arch is sm_90 (the note says why not wgmma); FMA for a reduction. */
static void test_auto_wgmma(void) {
  static const auto_case cs[] = {
      /* 128 x 256 tiles, K tiles of 64: 3 x 48 KiB of rings */
      {TC_BF16, 130, 200, 300, "128x256 tiles on BIDy x BIDx, 2 warp groups (TIDy) of 128 threads (TIDx) with "
                              "64x256 tiles each as wgmma m64n256k16", 3},
      /* 3 K tiles of 64 */
      {TC_F16, 64, 100, 130, "64x128 tiles on BIDy x BIDx, 1 warp group (TIDy) of 128 threads (TIDx) with "
                             "64x128 tiles each as wgmma m64n128k16", 3},
      /* K 20: one K tile of 32 */
      {TC_F16, 67, 64, 20, "64x64 tiles on BIDy x BIDx, 1 warp group (TIDy) of 128 threads (TIDx) with "
                           "64x64 tiles each as wgmma m64n64k16 (f16, f32 accumulators), K in tiles of 32", 2},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    tc_fusion *f = matmul_fusion(cs[i].t, cs[i].m, cs[i].n, cs[i].k);
    OK(f, tc_schedule_auto(f, TC_TARGET_CUDA, "sm_90a"));
    const char *note = tc_fusion_schedule_note(f);
    char ring[32];
    snprintf(ring, sizeof ring, "rings of %d stages", cs[i].stages);
    TC_CHECK(strstr(note, cs[i].want) && strstr(note, ring) &&
                 strstr(note, "wgmma m64nNk16: the scheduler's op type for f16/bf16 on CUDA sm_90a"),
             "case %zu: note %s", i, note);
    auto_kernel(f, "sm_90a", "wgmma.mma_async", i);
    run_scheduled(f, note, cs[i].t, cs[i].m, cs[i].n, cs[i].k);
  }
  /* 128 x 256 x 64 bf16 tiles are 48 KiB a stage, so the 8192^3 GEMM's
   * 3 stages take 144 KiB (of sm_90a's 227 KiB) */
  tc_fusion *f = matmul_fusion(TC_BF16, 8192, 8192, 8192);
  OK(f, tc_schedule_auto(f, TC_TARGET_CUDA, "sm_90a"));
  TC_CHECK(strstr(tc_fusion_schedule_note(f), "m64n256k16") && strstr(tc_fusion_schedule_note(f), "(147456 bytes)") &&
               strstr(tc_fusion_schedule_note(f), "rings of 3 stages"), "8192: %s", tc_fusion_schedule_note(f));
  tc_fusion_free(f);
  /* mma.sync, and why not wgmma */
  static const struct {
    const char *arch;
    int64_t m, n;
    const char *why;
  } mma[] = {{"sm_90a", 128, 48, "(not wgmma: the result is smaller than one 64 x 64 wgmma tile)"},
             {"sm_90a", 63, 128, "(not wgmma: the result is smaller than one 64 x 64 wgmma tile)"},
             {"sm_90", 256, 256, "(not wgmma: wgmma needs sm_90a, the arch is sm_90)"},
             {"sm_89", 256, 256, NULL}};
  for (size_t i = 0; i < sizeof mma / sizeof mma[0]; i++) {
    f = matmul_fusion(TC_F16, mma[i].m, mma[i].n, 64);
    OK(f, tc_schedule_auto(f, TC_TARGET_CUDA, mma[i].arch));
    const char *note = tc_fusion_schedule_note(f);
    TC_CHECK(strstr(note, "as mma.sync m16n8k16") && (mma[i].why ? strstr(note, mma[i].why) != NULL : !strstr(note, "wgmma")),
             "mma case %zu: %s", i, note);
    tc_fusion_free(f);
  }
  /* a reduction of the result: FMA on sm_90a, saying why */
  reduction_note(TC_BF16, 128, 128, 64, "sm_90a", "FMA, not wgmma or mma.sync: their op types take no reduction");
}

/* ---- refusals ---------------------------------------------------------------- */

static void expect_compile_error(tc_fusion *f, tc_target t, const char *arch, const char *want) {
  tc_compile_options opt = {t, arch, "ring_bad"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &opt, &st);
  TC_CHECK(k == NULL && strstr(tc_fusion_error(f), want) != NULL, "want \"%s\", got \"%s\"", want,
           tc_fusion_error(f));
  tc_kernel_free(k);
}

static void test_refusals(void) {
  tc_tensor *c;
  tc_fusion *f = row_fusion(1, TC_MEM_SHARED, 1, &c, NULL);
  TC_CHECK(tc_circular_buffer(c, 0) == TC_ERR_ARGUMENT && strstr(tc_fusion_error(f), "between 1 and 8"),
           "%s", tc_fusion_error(f));
  TC_CHECK(tc_circular_buffer(c, 9) == TC_ERR_ARGUMENT, "9 stages");
  tc_fusion_free(f);
  f = row_fusion(2, TC_MEM_LOCAL, 1, &c, NULL);
  expect_compile_error(f, TC_TARGET_OPENCL, NULL, "lives in local memory");
  tc_fusion_free(f);
  tc_tensor *y;
  f = row_fusion(1, TC_MEM_SHARED, 1, &c, &y); /* the output, in global memory */
  OK(f, tc_circular_buffer(y, 2));
  expect_compile_error(f, TC_TARGET_OPENCL, NULL, "lives in global memory");
  tc_fusion_free(f);
  f = row_fusion(2, TC_MEM_SHARED, 0, &c, NULL); /* computed at BIDx */
  expect_compile_error(f, TC_TARGET_OPENCL, NULL, "a parallel axis");
  tc_fusion_free(f);
  /* a ring of bulk tensor copies whose copy is spread over TIDx: each
   * copy is one thread's */
  f = row_fusion(2, TC_MEM_SHARED, 1, &c, NULL);
  OK(f, tc_set_ldst_type(c, TC_LDST_BULK_TENSOR));
  expect_compile_error(f, TC_TARGET_CUDA, "sm_90a", "a bulk copy is issued by one thread");
  tc_fusion_free(f);
  /* a wgmma ring whose A tiles are bulk tensor copies and B's are not:
   * one way to complete per ring */
  f = matmul_fusion_tb(TC_BF16, 128, 128, 256, true);
  tc_matmul_tiles wt = {128, 128, 64, 64, 128, TC_MACRO_WGMMA, 3};
  OK(f, tc_schedule_matmul(f, TC_TARGET_CUDA, "sm_90a", &wt));
  {
    tc_tensor *bulk = NULL;
    for (int i = 0; i < f->ntensors; i++)
      if (f->tensors[i]->circular_stages == 3 && f->tensors[i]->def->ldst == TC_LDST_BULK_TENSOR) bulk = f->tensors[i];
    TC_CHECK(bulk != NULL, "no bulk tensor copy in the ring");
    /* (an operand view is no set op, so tc_set_ldst_type does not take
     * it; a schedule of tc_cache_after copies can mix the two) */
    if (bulk) bulk->def->ldst = TC_LDST_DEFAULT;
  }
  expect_compile_error(f, TC_TARGET_CUDA, "sm_90a", "give them all TC_LDST_BULK_TENSOR or none");
  tc_fusion_free(f);
  /* outside any loop */
  f = tc_fusion_new();
  int64_t s[1] = {64};
  tc_tensor *x = tc_input(f, TC_F32, 1, s);
  y = tc_binary_scalar(f, TC_MUL, x, 2.0);
  tc_add_output(f, y);
  c = tc_cache_after(x);
  OK(f, tc_parallelize(y, 0, TC_TIDX));
  OK(f, tc_set_memory_type(c, TC_MEM_SHARED));
  OK(f, tc_parallelize(c, 0, TC_TIDX));
  OK(f, tc_circular_buffer(c, 3));
  expect_compile_error(f, TC_TARGET_OPENCL, NULL, "outside any loop");
  tc_fusion_free(f);
  /* 4 stages of 128x128x64 f32 tiles: 256 KiB, over sm_80's limit; one
   * buffer (64 KiB) fits */
  tc_matmul_tiles big = {128, 128, 64, 8, 8, TC_MACRO_FMA, 4};
  f = matmul_fusion(TC_F32, 256, 256, 256);
  OK(f, tc_schedule_matmul(f, TC_TARGET_CUDA, "sm_80", &big));
  expect_compile_error(f, TC_TARGET_CUDA, "sm_80", "a ring of 4 stages");
  TC_CHECK(strstr(tc_fusion_error(f), "262144 bytes") != NULL, "%s", tc_fusion_error(f));
  tc_fusion_free(f);
  big.stages = 1;
  f = matmul_fusion(TC_F32, 256, 256, 256);
  OK(f, tc_schedule_matmul(f, TC_TARGET_CUDA, "sm_80", &big));
  tc_compile_options opt = {TC_TARGET_CUDA, "sm_80", "ring_one"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &opt, &st);
  TC_CHECK(k != NULL, "one buffer: %s", tc_fusion_error(f));
  tc_kernel_free(k);
  tc_fusion_free(f);
  big.stages = 9;
  f = matmul_fusion(TC_F32, 256, 256, 256);
  TC_CHECK(tc_schedule_matmul(f, TC_TARGET_CUDA, "sm_80", &big) == TC_ERR_ARGUMENT &&
               strstr(tc_fusion_error(f), "stages must be between 1 and 8"),
           "%s", tc_fusion_error(f));
  tc_fusion_free(f);
}

int main(void) {
  TC_RUN(test_protocol);
  TC_RUN(test_protocol_faults);
  TC_RUN(test_protocol_depth1);
  TC_RUN(test_protocol_bulk);
  TC_RUN(test_depth0_kept);
  TC_RUN(test_row_ring);
  TC_RUN(test_fma_runs);
  TC_RUN(test_mma_runs);
  TC_RUN(test_wgmma_runs);
  TC_RUN(test_cuda);
  TC_RUN(test_auto);
  TC_RUN(test_auto_wgmma);
  TC_RUN(test_refusals);
  TC_MAIN_END();
}
