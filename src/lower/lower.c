/* lower.c - from a scheduled fusion to kernel IR.
 *
 * Steps: validate the schedule; order the statements so that the ops
 * sharing a loop are adjacent (stmt_order.c); derive the launch
 * configuration from the parallel types; infer each on-chip tensor's
 * allocation (nvFuser's three rules) and check the shared/tensor memory
 * limits; build the loop tree from loop domains and compute-at positions;
 * derive every statement's indices and predicates by walking the axis
 * graph from the loop domain to the allocation domain; place barriers
 * where on-chip memory written by some threads is read by others. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sched/sched.h"
#include "../target/target.h"
#include "kernel.h"
#include "tmem.h"
#include "ldst.h"
#include "mma.h"
#include "tma.h"
#include "circular.h"
#include "stmt_order.h"

typedef struct lctx {
  tc_fusion *f;
  tc_dgraph *g;
  tc_kir *k;
  tc_target_info ti;    /* the target and arch compiled for */
  int maxloop;          /* max loop rank over tensors: key stride */
  int *uf;              /* union-find over tensor loop positions */
  const tc_expr **loopvar; /* per loop identity (uf root key) */
  tc_knode **loopnode;  /* per loop identity: its node in the tree */
  int nloops;
} lctx;

static int key(const lctx *c, const tc_tensor *t, int pos) { return t->id * c->maxloop + pos; }

static tc_knode *knode_new(tc_knode_kind kind, tc_knode *parent) {
  tc_knode *n = tc_xcalloc(1, sizeof *n);
  n->kind = kind;
  n->parent = parent;
  if (parent) TC_PUSH(parent->body, parent->nbody, parent->cbody, n);
  return n;
}

/* Puts n (made without a parent) into parent's body at index i. */
static void knode_insert(tc_knode *parent, int i, tc_knode *n) {
  n->parent = parent;
  TC_PUSH(parent->body, parent->nbody, parent->cbody, n);
  memmove(&parent->body[i + 1], &parent->body[i], (size_t)(parent->nbody - 1 - i) * sizeof *parent->body);
  parent->body[i] = n;
}

static void knode_free(tc_knode *n) {
  if (!n) return;
  for (int i = 0; i < n->nbody; i++) knode_free(n->body[i]);
  free(n->body);
  free(n);
}

void tc_kir_free(tc_kir *k) {
  if (!k) return;
  knode_free(k->root);
  free(k->allocs);
  free(k->params);
  tc_epool_free(k->pool);
  free(k);
}

const tc_kalloc *tc_kir_alloc_of(const tc_kir *k, const tc_tensor *t) {
  for (int i = 0; i < k->nallocs; i++)
    if (k->allocs[i].t == t) return &k->allocs[i];
  return NULL;
}

static int loop_pos(const tc_tensor *t, int axis) {
  for (int i = 0; i < t->nloop; i++)
    if (t->loop[i] == axis) return i;
  return -1;
}

static int alloc_domain(const tc_tensor *t, const int **axes) {
  if (t->alloc_set) {
    *axes = t->alloc;
    return t->nalloc;
  }
  *axes = t->loop;
  return t->nloop;
}

/* nvFuser's allocation rules (docs/concepts.md): a memory distributed
 * across a parallel type never allocates its axes, a memory shared across
 * one always does, and otherwise axes left of the compute-at position are
 * not allocated. */
static bool axis_allocated(const tc_dgraph *g, const tc_tensor *t, int axis) {
  if (g->axes[axis].reduction) return false; /* a reduction's result has none */
  if (tc_dg_is_broadcast_axis(g, axis)) return false; /* (its value is 0) */
  tc_ptype p = g->axes[axis].ptype;
  bool distributed = tc_ptype_is_block(p) || tc_ptype_is_device(p) ||
                     (t->mem == TC_MEM_LOCAL && tc_ptype_is_thread(p));
  bool shared = (t->mem == TC_MEM_SHARED || t->mem == TC_MEM_TENSOR) && tc_ptype_is_thread(p);
  if (distributed) return false;
  if (shared) return true;
  int pos = loop_pos(t, axis);
  return !(pos >= 0 && pos < t->ca_pos);
}

/* ---- validation ------------------------------------------------------- */

static bool is_loop_ptype_(tc_ptype p) { return !(tc_ptype_is_block(p) || tc_ptype_is_thread(p)); }

/* A reduction's loop domain: its serial reduction loops innermost of its
 * loops (the result is initialized before the outermost one and complete
 * after it), a vectorized reduction axis only innermost, at most one on
 * a thread axis,
 * a reduction axis on a block only on BIDx (a grid reduction) and then
 * no serial iteration loop, and the result in registers, where each
 * thread holds the block's (or the grid's) total. */
static tc_status validate_reduction(lctx *c, tc_tensor *t, const char *desc) {
  tc_dgraph *g = c->g;
  if (!tc_op_reduces(t->def)) return TC_OK;
  int first_loop = -1, thread = -1, grid = -1, iter_loop = -1;
  char b[64];
  for (int i = 0; i < t->nloop; i++) {
    tc_axis *a = &g->axes[t->loop[i]];
    tc_axis_describe(g, t->loop[i], b, sizeof b);
    if (a->reduction && tc_ptype_is_block(a->ptype) && a->ptype != TC_BIDX)
      return tc_fail(c->f, TC_ERR_UNSUPPORTED,
                     "compile: %s's reduction axis %d (%s) is bound to %s: tilec makes grid "
                     "reductions over BIDx only; bind the axis to BIDx, keep it serial or bind it "
                     "to a thread axis (%s)", t->name, i, b, tc_ptype_name(a->ptype), desc);
    if (a->reduction && a->ptype == TC_BIDX && tc_tensor_is_welford(t))
      return tc_fail(c->f, TC_ERR_UNSUPPORTED,
                     "compile: %s's reduction axis %d (%s) is bound to BIDx, but %s is a Welford "
                     "state, which tilec does not merge across blocks (a grid reduction is made "
                     "for sum, max and min); keep the axis serial or bind it to a thread axis (%s)",
                     t->name, i, b, t->name, desc);
    if (a->reduction && a->ptype == TC_BIDX) grid = i;
    if (!a->reduction && is_loop_ptype_(a->ptype) && iter_loop < 0) iter_loop = i;
    /* a vector of the reduction's operand: its lanes update the thread's
     * accumulator one after another (a serial partial sum in registers,
     * Welford's updates in lane order), before the serial steps and the
     * block tree outside it; validate_tensor keeps a vectorized axis the
     * innermost loop, where the lanes are V adjacent elements */
    if (a->reduction && tc_ptype_is_thread(a->ptype)) {
      if (thread >= 0)
        return tc_fail(c->f, TC_ERR_UNSUPPORTED,
                       "compile: %s has reduction axes on two thread axes (%d and %d); merge them "
                       "into one before binding it (%s)", t->name, thread, i, desc);
      thread = i;
    }
    if (!is_loop_ptype_(a->ptype)) continue;
    if (a->reduction && first_loop < 0) first_loop = i;
    /* in registers each thread's iteration loops inside the reduction
     * loops index a tile of accumulators (a matmul's outer products);
     * else the result is complete only after the reduction loop */
    bool tile = t->mem == TC_MEM_LOCAL;
    for (int j = 0; j < t->nloop && tile; j++)
      tile = !(g->axes[t->loop[j]].reduction && tc_ptype_is_thread(g->axes[t->loop[j]].ptype));
    if (!a->reduction && first_loop >= 0 && !tile)
      return tc_fail(c->f, TC_ERR_SCHEDULE,
                     "compile: %s's loop axis %d (%s) iterates inside its reduction loop %d; "
                     "reorder the reduction axes innermost (tc_reorder), or reduce into local "
                     "memory over serial reduction loops only (a tile of accumulators) (%s)",
                     t->name, i, b, first_loop, desc);
  }
  if (tc_tensor_is_welford(t) && t->mem != TC_MEM_LOCAL)
    return tc_fail(c->f, TC_ERR_SCHEDULE,
                   "compile: %s is a Welford state (mean, M2 and count), which lives in registers, "
                   "but it is in %s memory; keep it in local memory (%s)", t->name,
                   tc_memtype_name(t->mem), desc);
  if (grid >= 0 && iter_loop >= 0)
    return tc_fail(c->f, TC_ERR_UNSUPPORTED,
                   "compile: %s's reduction axis %d is bound to BIDx (a grid reduction), but its "
                   "axis %d (%s) is a serial loop: a grid reduction combines the blocks' partials "
                   "once, after all its loops; bind %s's iteration axes to blocks or threads (%s)",
                   t->name, grid, iter_loop, tc_axis_describe(g, t->loop[iter_loop], b, sizeof b),
                   t->name, desc);
  if (grid >= 0 && t->mem != TC_MEM_LOCAL)
    return tc_fail(c->f, TC_ERR_SCHEDULE,
                   "compile: %s's reduction axis %d is bound to BIDx (a grid reduction), so the "
                   "blocks' partials meet in registers of the last block, but %s is in %s memory; "
                   "reduce into a local tensor and copy it out (tc_cache_before(%s)) (%s)",
                   t->name, grid, t->name, tc_memtype_name(t->mem), t->name, desc);
  if (thread >= 0 && t->mem != TC_MEM_LOCAL)
    return tc_fail(c->f, TC_ERR_SCHEDULE,
                   "compile: %s reduces over a thread axis (axis %d, %s), so each thread holds a "
                   "partial result that the block combines in registers, but %s is in %s memory; "
                   "reduce into a local tensor and copy it out (tc_cache_before(%s)) (%s)",
                   t->name, thread, tc_ptype_name(g->axes[t->loop[thread]].ptype), t->name,
                   tc_memtype_name(t->mem), t->name, desc);
  return TC_OK;
}

static tc_status validate_tensor(lctx *c, tc_tensor *t) {
  tc_dgraph *g = c->g;
  char b[64];
  tc_str d;
  tc_str_init(&d);
  tc_tensor_loop_str(t, &d);
  tc_status st = TC_OK;
  for (int i = 0; i < t->nloop && !st; i++) {
    tc_axis *a = &g->axes[t->loop[i]];
    for (int j = 0; j < i; j++)
      if (a->ptype != TC_SERIAL && a->ptype != TC_UNROLL && g->axes[t->loop[j]].ptype == a->ptype)
        st = tc_fail(c->f, TC_ERR_SCHEDULE, "compile: %s axes %d and %d are both %s (%s)", t->name, j,
                     i, tc_ptype_name(a->ptype), tc_str_cstr(&d));
    if (st) break;
    if (a->extent > 2147483647)
      st = tc_fail(c->f, TC_ERR_LOWER,
                   "compile: %s axis %d has extent %lld; loops count with 32-bit integers (%s)",
                   t->name, i, (long long)a->extent, tc_str_cstr(&d));
    else if (tc_ptype_is_device(a->ptype))
      st = tc_fail(c->f, TC_ERR_UNSUPPORTED,
                   "compile: %s axis %d is %s: a kernel runs on one device, and multi-device "
                   "execution is not supported yet (%s)",
                   t->name, i, tc_ptype_name(a->ptype), tc_str_cstr(&d));
    if (st) break;
    if (a->ptype == TC_VECTORIZE) {
      if (i != t->nloop - 1)
        st = tc_fail(c->f, TC_ERR_SCHEDULE,
                     "compile: %s axis %d (%s) is vectorized but is not the innermost loop axis (%s)",
                     t->name, i, tc_axis_describe(g, t->loop[i], b, sizeof b), tc_str_cstr(&d));
      else if (tc_dg_is_padded(g, t->loop[i]))
        st = tc_fail(c->f, TC_ERR_SCHEDULE,
                     "compile: %s axis %d (%s) is vectorized but comes from a split that does not "
                     "divide its extent, so a vector could run past the end (%s)",
                     t->name, i, tc_axis_describe(g, t->loop[i], b, sizeof b), tc_str_cstr(&d));
      else
        st = tc_check_vector_width(t, i, a->extent);
    }
  }
  if (!st && tc_tensor_bytes(t) / tc_dtype_size(t->dtype) > 2147483647u)
    st = tc_fail(c->f, TC_ERR_LOWER,
                 "compile: %s has more than 2^31 - 1 elements%s%s%s; kernels index with 32-bit "
                 "integers", t->name, c->f->nsym ? " at the bounds of the size variables (" : "",
                 c->f->nsym ? c->f->sym[0]->label : "",
                 c->f->nsym ? c->f->nsym > 1 ? ", ...; give tc_input_sym bounds that keep it under 2^31)"
                                             : "; give tc_input_sym a bound that keeps it under 2^31)" : "");
  if (!st && t->mem == TC_MEM_GLOBAL && !t->is_output)
    st = tc_fail(c->f, TC_ERR_SCHEDULE,
                 "compile: %s is an intermediate tensor in global memory; tilec allocates no global "
                 "scratch: place it in shared or local memory", t->name);
  if (!st) st = validate_reduction(c, t, tc_str_cstr(&d));
  if (!st && t->def && t->def->kind == TC_OP_GATHER && t->def->in[0]->mem != TC_MEM_GLOBAL)
    st = tc_fail(c->f, TC_ERR_SCHEDULE,
                 "compile: %s gathers from %s, which is in %s memory; a gather reads its data in "
                 "global memory (a fusion input or output), at positions only the data knows",
                 t->name, t->def->in[0]->name, tc_memtype_name(t->def->in[0]->mem));
  if (!st && t->mem == TC_MEM_TENSOR && t->tmem_dimsep < 0)
    st = tc_fail(c->f, TC_ERR_SCHEDULE,
                 "compile: %s is in tensor memory but has no dim-sep position; call "
                 "tc_set_tmem_dimsep to say which allocation axes are lanes", t->name);
  tc_str_free(&d);
  return st;
}

/* A consumer c of t must compute the elements it reads in a thread (and
 * block) that can see them: registers are per thread, shared memory per
 * block. */
static tc_status validate_visibility(lctx *c, tc_tensor *t, tc_tensor *cons) {
  tc_dgraph *g = c->g;
  uint64_t *tsig, *csig;
  tc_edge_sigs(t, cons, &tsig, &csig);
  tc_status st = TC_OK;
  for (int i = 0; i < t->nloop && !st; i++) {
    tc_axis *a = &g->axes[t->loop[i]];
    if (a->reduction) continue; /* every thread holds the block reduction's total */
    bool must = tc_ptype_is_block(a->ptype) || tc_ptype_is_device(a->ptype) ||
                (t->mem == TC_MEM_LOCAL && tc_ptype_is_thread(a->ptype));
    if (!must) continue;
    bool found = false;
    for (int j = 0; j < cons->nloop && !found; j++) {
      found = tc_axes_match(g, tsig, t->loop[i], csig, cons->loop[j]) &&
              g->axes[cons->loop[j]].ptype == a->ptype;
    }
    if (found) continue;
    /* the remedies that apply: the same binding on the consumer always;
     * for registers read across threads, shared memory too (all threads of
     * a block see it); across blocks no memory helps, since the blocks of
     * a launch neither share on-chip memory nor wait for each other */
    bool thread = tc_ptype_is_thread(a->ptype);
    char move[160] = "";
    if (thread)
      snprintf(move, sizeof move, ", or place %s in shared memory (tc_set_memory_type), which all "
               "threads of a block see", t->name);
    st = tc_fail(c->f, TC_ERR_SCHEDULE,
                 "compile: %s is in %s memory with axis %d bound to %s, but its consumer %s has no "
                 "matching %s axis, so it would read elements another %s wrote; schedule and "
                 "parallelize %s and %s alike (tc_propagate_transforms, tc_parallelize_all_like)%s",
                 t->name, tc_memtype_name(t->mem), i, tc_ptype_name(a->ptype), cons->name,
                 tc_ptype_name(a->ptype), thread ? "thread" : "block", t->name, cons->name,
                 thread ? move : "; the blocks of a launch neither share on-chip memory nor wait "
                 "for each other, so no memory type makes this safe");
  }
  free(tsig), free(csig);
  return st;
}

/* ---- launch configuration -------------------------------------------- */

static tc_status launch_config(lctx *c, tc_op **order, int n) {
  tc_kir *k = c->k;
  const tc_tensor *who[3] = {NULL, NULL, NULL};
  for (int d = 0; d < 3; d++) k->grid[d] = k->block[d] = 1;
  for (int i = 0; i < n; i++) {
    tc_tensor *t = order[i]->out;
    for (int j = 0; j < t->nloop; j++) {
      tc_axis *a = &c->g->axes[t->loop[j]];
      int64_t *slot = NULL;
      if (tc_ptype_is_block(a->ptype)) slot = &k->grid[a->ptype - TC_BIDX];
      if (tc_ptype_is_thread(a->ptype)) slot = &k->block[a->ptype - TC_TIDX];
      if (slot && a->extent > *slot) {
        *slot = a->extent;
        if (tc_ptype_is_thread(a->ptype)) who[a->ptype - TC_TIDX] = t;
      }
    }
  }
  int64_t threads = k->block[0] * k->block[1] * k->block[2];
  if (c->ti.max_threads && threads > c->ti.max_threads) {
    tc_str w;
    tc_str_init(&w);
    for (int d = 0; d < 3; d++)
      if (who[d]) tc_str_printf(&w, "%sTID%c{%lld} from %s", w.len ? ", " : "", 'x' + d,
                                (long long)k->block[d], who[d]->name);
    tc_status st = tc_fail(c->f, TC_ERR_LOWER,
                           "compile: the block has %lld threads (%lld x %lld x %lld: %s) but %s "
                           "allows at most %d; split a thread axis and make its outer part "
                           "serial or a block axis",
                           (long long)threads, (long long)k->block[0], (long long)k->block[1],
                           (long long)k->block[2], tc_str_cstr(&w), c->ti.name, c->ti.max_threads);
    tc_str_free(&w);
    return st;
  }
  /* a block's z extent: at most 64 on NVIDIA GPUs (AMD's is 1024, the
   * thread limit above) */
  if (c->ti.max_block_z && k->block[2] > c->ti.max_block_z)
    return tc_fail(c->f, TC_ERR_LOWER,
                   "compile: TIDz extent %lld exceeds target %s's limit of %d; bind the axis to "
                   "TIDx or TIDy instead", (long long)k->block[2], c->ti.name, c->ti.max_block_z);
  if (k->grid[1] > 65535 || k->grid[2] > 65535 || k->grid[0] > 2147483647)
    return tc_fail(c->f, TC_ERR_LOWER, "compile: grid %lld x %lld x %lld exceeds the launch limits",
                   (long long)k->grid[0], (long long)k->grid[1], (long long)k->grid[2]);
  static const char *names[6] = {"bidx", "bidy", "bidz", "tidx", "tidy", "tidz"};
  for (int d = 0; d < 3; d++) {
    k->pvar[d] = tc_e_var(k->pool, names[d], 0, k->grid[d] - 1);
    k->pvar[3 + d] = tc_e_var(k->pool, names[3 + d], 0, k->block[d] - 1);
  }
  return TC_OK;
}

/* ---- allocation -------------------------------------------------------- */

static int64_t next_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

static tc_status allocate(lctx *c, tc_op **order, int n) {
  tc_kir *k = c->k;
  tc_dgraph *g = c->g;
  int64_t smem = 0, tmem = 0;
  for (int i = 0; i < n; i++) {
    tc_tensor *t = order[i]->out;
    if (t->circular_stages > 1 && t->mem != TC_MEM_SHARED)
      return tc_fail(c->f, TC_ERR_SCHEDULE,
                     "compile: %s is circular-buffered (tc_circular_buffer, %d stages) but lives "
                     "in %s memory; a ring of tiles is a shared-memory tensor "
                     "(tc_set_memory_type(%s, TC_MEM_SHARED)), or give it 1 stage",
                     t->name, t->circular_stages, tc_memtype_name(t->mem), t->name);
    if (t->mem == TC_MEM_GLOBAL) continue;
    const int *ax;
    int na = alloc_domain(t, &ax);
    tc_kalloc a = {.t = t, .elems = 1};
    for (int j = 0; j < na; j++)
      if (axis_allocated(g, t, ax[j])) {
        if (a.naxes < TC_KALLOC_LISTED) a.axis_pos[a.naxes] = j;
        a.naxes++;
        a.elems = tc_sat_mul(a.elems, g->axes[ax[j]].extent);
      }
    if (t->mem == TC_MEM_TENSOR) {
      int sep = t->tmem_dimsep > na ? na : t->tmem_dimsep;
      int64_t lanes = 1, colelems = 1;
      for (int j = 0; j < na; j++)
        if (axis_allocated(g, t, ax[j])) {
          int64_t *d = j < sep ? &lanes : &colelems;
          *d = tc_sat_mul(*d, g->axes[ax[j]].extent);
        }
      if (lanes > TC_TMEM_LANES)
        return tc_fail(c->f, TC_ERR_LOWER,
                       "Not enough tensor memory lanes: tried to allocate %lld, but only %d available.",
                       (long long)lanes, TC_TMEM_LANES);
      int64_t cols = tc_sat_add(tc_sat_mul(colelems, (int64_t)tc_dtype_size(t->dtype)), 3) / 4;
      if (cols > TC_TMEM_COLUMNS)
        return tc_fail(c->f, TC_ERR_LOWER,
                       "Not enough tensor memory columns: tried to allocate %lld, but only %d available.",
                       (long long)cols, TC_TMEM_COLUMNS);
      a.lanes = lanes;
      a.used_columns = cols;
      a.columns = next_pow2(cols < 32 ? 32 : cols);
      tmem += a.columns;
      if (tmem > TC_TMEM_COLUMNS)
        return tc_fail(c->f, TC_ERR_LOWER,
                       "Not enough tensor memory columns: tried to allocate %lld in all, but only %d available.",
                       (long long)tmem, TC_TMEM_COLUMNS);
    } else {
      if (t->circular_stages > 1) { /* slots of whole 16-byte units */
        int64_t per = 16 / (int64_t)tc_dtype_size(t->dtype);
        a.stages = t->circular_stages;
        a.slot_elems = tc_sat_add(a.elems, per - 1) / per * per;
        a.elems = tc_sat_mul(a.slot_elems, a.stages);
      }
      if (t->mem == TC_MEM_SHARED) {
        smem = tc_sat_add(smem, 15) / 16 * 16;
        a.offset = smem;
        smem = tc_sat_add(smem, tc_sat_mul(a.elems, (int64_t)tc_dtype_size(t->dtype)));
      } else if (a.elems > 4096) {
        return tc_fail(c->f, TC_ERR_LOWER,
                       "compile: %s needs %lld registers per thread (limit 4096); inline it deeper "
                       "or parallelize more of it", t->name, (long long)a.elems);
      }
    }
    TC_PUSH(k->allocs, k->nallocs, k->callocs, a);
  }
  k->smem_bytes = smem;
  k->tmem_columns = tmem;
  if (smem > INT32_MAX) /* any target: the declarations count with 32 bits */
    return tc_fail(c->f, TC_ERR_LOWER,
                   "compile: the kernel needs %s bytes of shared memory per block; at most 2^31 - 1 "
                   "can be declared", smem == INT64_MAX ? "more than 2^63" : "more than 2^31");
  return TC_OK;
}

/* The kernel's shared memory against the arch's (LDS on AMD), once the
 * lowering has said what it would refuse first; OpenCL: the device's,
 * checked at launch. */
static tc_status check_smem_limit(lctx *c) {
  const tc_kir *k = c->k;
  /* (AMD's limit depends on the arch: name it) */
  int gfx = c->ti.family == TC_ARCH_GFX;
  if (!c->ti.smem_max || k->smem_bytes <= c->ti.smem_max) return TC_OK;
  /* name the largest shared buffer and its largest allocated axis (a
   * persistent row held in shared memory: the row's axis) */
  const tc_kalloc *big = NULL;
  for (int i = 0; i < k->nallocs; i++)
    if (k->allocs[i].t->mem == TC_MEM_SHARED &&
        (!big || k->allocs[i].elems * (int64_t)tc_dtype_size(k->allocs[i].t->dtype) >
                     big->elems * (int64_t)tc_dtype_size(big->t->dtype)))
      big = &k->allocs[i];
  char which[256] = "";
  if (big) {
    const int *ax;
    int na = alloc_domain(big->t, &ax), best = -1;
    for (int j = 0; j < big->naxes && j < TC_KALLOC_LISTED; j++) {
      int p = big->axis_pos[j];
      if (p < na && (best < 0 || c->g->axes[ax[p]].extent > c->g->axes[ax[best]].extent)) best = p;
    }
    char b[64] = "";
    if (best >= 0) tc_axis_describe(c->g, ax[best], b, sizeof b);
    char ring[64] = "";
    if (big->stages > 1) snprintf(ring, sizeof ring, " (a ring of %d stages: fewer take less)", big->stages);
    snprintf(which, sizeof which, "; the largest is %s, %lld bytes%s%s%s", big->t->name,
             (long long)(big->elems * (int64_t)tc_dtype_size(big->t->dtype)), ring,
             best >= 0 ? ", over its allocation axis " : "", b);
  }
  return tc_fail(c->f, TC_ERR_LOWER,
                 "compile: the kernel needs %lld bytes of shared memory%s per block but %s%s%s "
                 "allows at most %lld (%lld KiB)%s; keep less in shared memory at a time (inline "
                 "the shared tensors deeper, or recompute a row that does not fit instead of "
                 "holding it)", (long long)k->smem_bytes, gfx ? " (LDS)" : "", c->ti.name,
                 c->ti.arch[0] ? " " : "", c->ti.arch, (long long)c->ti.smem_max,
                 (long long)(c->ti.smem_max / 1024), which);
}

/* ---- loop tree --------------------------------------------------------- */

static bool is_loop_ptype(tc_ptype p) {
  return !(tc_ptype_is_block(p) || tc_ptype_is_thread(p));
}

/* Loop identities: a producer inlined at position p shares its loop axes
 * [0, p) with each consumer's; the union-find joins them. */
static void loop_identities(lctx *c, tc_op **order, int n) {
  int nkeys = c->f->ntensors * c->maxloop;
  c->uf = tc_xmalloc((size_t)nkeys * sizeof(int));
  for (int i = 0; i < nkeys; i++) c->uf[i] = i;
  for (int i = 0; i < n; i++) {
    tc_tensor *t = order[i]->out;
    if (t->ca_pos == 0) continue;
    tc_op *cons[64];
    int nc = tc_consumers(c->f, t, cons, 64);
    for (int j = 0; j < nc && j < 64; j++)
      for (int p = 0; p < t->ca_pos; p++) tc_uf_union(c->uf, key(c, t, p), key(c, cons[j]->out, p));
  }
}

/* A consumer that shares a loop with a producer it reads (the two joined
 * through tensors inlined into both) reads, in each iteration, the
 * producer's elements of that iteration only: the loop axis must be made
 * the same way from the axes the op relates on both sides.  Else (as when
 * it reads the producer permuted) it would read elements a later
 * iteration computes. */
static tc_status validate_shared_loops(lctx *c, tc_op **order, int n) {
  tc_dgraph *g = c->g;
  tc_status st = TC_OK;
  for (int i = 0; i < n && !st; i++) {
    tc_tensor *cons = order[i]->out;
    for (int k = 0; k < order[i]->nin && !st; k++) {
      tc_tensor *t = order[i]->in[k];
      if (t->is_input) continue;
      uint64_t *tsig, *csig;
      tc_edge_sigs(t, cons, &tsig, &csig);
      for (int q = 0; q < cons->nloop && !st; q++) {
        if (!is_loop_ptype(g->axes[cons->loop[q]].ptype)) continue;
        int id = tc_uf_find(c->uf, key(c, cons, q));
        for (int p = 0; p < t->nloop && !st; p++) {
          if (tc_uf_find(c->uf, key(c, t, p)) != id ||
              tc_axes_match(g, tsig, t->loop[p], csig, cons->loop[q]))
            continue;
          const char *via = "?";
          for (int x = 0; x < c->f->ntensors && via[0] == '?'; x++) {
            tc_tensor *y = c->f->tensors[x];
            for (int r = 0; r < y->ca_pos && y != t && y != cons; r++)
              if (tc_uf_find(c->uf, key(c, y, r)) == id) via = y->name;
          }
          char b1[64], b2[64];
          st = tc_fail(c->f, TC_ERR_SCHEDULE,
                       "compile: %s and its consumer %s share a loop (%s's axis %d %s, %s's axis %d %s) "
                       "through %s, which is inlined into the loops of both, but %s reads %s%s, so the "
                       "loop's axis of %s is not the one %s reads there: an iteration would read elements "
                       "of %s that a later iteration computes; inline %s at position %d or less",
                       t->name, cons->name, t->name, p, tc_axis_describe(g, t->loop[p], b1, sizeof b1),
                       cons->name, q, tc_axis_describe(g, cons->loop[q], b2, sizeof b2), via, cons->name,
                       t->name, order[i]->kind == TC_OP_PERMUTE ? " permuted" : "", t->name, cons->name,
                       t->name, via, q);
        }
      }
      free(tsig), free(csig);
    }
  }
  return st;
}

/* Puts the statements in an order where the ops sharing a loop are
 * adjacent (stmt_order.c): the loops of each op are its loop axes that
 * are not bound to blocks or threads. */
static tc_status order_statements(lctx *c, tc_op **order, int n) {
  int *ids = tc_xmalloc((size_t)n * (size_t)c->maxloop * sizeof(int));
  int *pos = tc_xmalloc((size_t)n * (size_t)c->maxloop * sizeof(int));
  tc_stmt_loops *loops = tc_xcalloc((size_t)n + 1, sizeof *loops);
  for (int i = 0; i < n; i++) {
    tc_tensor *t = order[i]->out;
    int *id = ids + (size_t)i * c->maxloop, *ps = pos + (size_t)i * c->maxloop, nl = 0;
    for (int p = 0; p < t->nloop; p++)
      if (is_loop_ptype(c->g->axes[t->loop[p]].ptype))
        id[nl] = tc_uf_find(c->uf, key(c, t, p)), ps[nl++] = p;
    loops[i] = (tc_stmt_loops){id, ps, nl};
  }
  tc_status st = tc_stmt_order(c->f, order, loops, n);
  free(ids), free(pos), free(loops);
  return st;
}

const tc_expr *tc_kloop_extent(tc_epool *p, const tc_kloop *l) {
  return l->sym_extent ? l->sym_extent : tc_e_const(p, l->extent);
}

/* A new loop l over axis ax (extent ext, identity id): its variable, and
 * over a symbolic axis (a serial loop, check_symbolic) its extent over
 * the size variables' parameters. */
static void set_loop(lctx *c, tc_knode *l, int ax, int64_t ext, int id) {
  tc_kir *k = c->k;
  char name[24];
  snprintf(name, sizeof name, "i%d", c->nloops++);
  l->loop.var = tc_e_var(k->pool, name, 0, ext - 1);
  l->loop.extent = ext;
  l->loop.ptype = c->g->axes[ax].ptype;
  l->loop.id = id;
  int64_t steps[TC_SYM_MAX_STEPS];
  int ns = k->nsym && ext > 1 && tc_dg_is_symbolic(c->g, ax) ? tc_dg_sym_steps(c->g, ax, steps, NULL) : -1;
  if (ns >= 0) l->loop.sym_extent = tc_sym_expr(k->pool, steps, ns, tc_dg_sym_var(c->g, ax), k->sym);
}

/* The loop tree: each op's statement inside the loops of its loop axes,
 * in statement order; a loop shared with the op before is reused.  A
 * reduction's loops may be shared with the producers inlined into them
 * and with other consumers of those (never with the reduction's own
 * readers: validate_shared_loops), so its TC_RED_INIT statement goes
 * before its outermost reduction loop even when a statement before it
 * opened that loop, and its TC_RED_ALL statement after that loop once
 * every statement is placed (later ones may still join the loop). */
static tc_status build_loops(lctx *c, tc_op **order, int n, tc_knode **stmt_of) {
  tc_kir *k = c->k;
  int nkeys = c->f->ntensors * c->maxloop;
  c->loopvar = tc_xcalloc((size_t)nkeys, sizeof *c->loopvar);
  c->loopnode = tc_xcalloc((size_t)nkeys, sizeof *c->loopnode);
  k->root = knode_new(TC_K_ROOT, NULL);
  /* TC_RED_ALL statements and the node each goes after */
  tc_knode **all = tc_xmalloc((size_t)(2 * n + 1) * sizeof *all);
  int nall = 0;
  for (int i = 0; i < n; i++) {
    tc_op *op = order[i];
    tc_tensor *t = op->out;
    tc_knode *cur = k->root, *init = NULL;
    int red_slot = -1;
    int64_t grid_blocks = 0;
    for (int p = 0; p <= t->nloop; p++) {
      tc_axis *a = p < t->nloop ? &c->g->axes[t->loop[p]] : NULL;
      /* the reduction starts before its outermost reduction loop (the
       * iteration loops all enclose it), or before its statement when
       * it has none: a reduction axis on a thread is no loop, and
       * iteration loops may follow it */
      if (tc_op_reduces(op) && !init && (!a || (a->reduction && is_loop_ptype(a->ptype)))) {
        /* that loop may be open already: a producer computed inside it
         * (inlined past the reduction axis) opened it */
        tc_knode *last = cur->nbody ? cur->body[cur->nbody - 1] : NULL;
        bool opened = a && last && last->kind == TC_K_LOOP && last->loop.id == tc_uf_find(c->uf, key(c, t, p));
        init = knode_new(TC_K_STMT, NULL);
        /* iteration loops inside the reduction loops (a register tile of
         * accumulators, validate_reduction): the initialization runs in
         * loops of its own over them */
        tc_knode *top = init;
        for (int q = t->nloop - 1; a && q > p; q--) {
          tc_axis *qa = &c->g->axes[t->loop[q]];
          if (qa->reduction || !is_loop_ptype(qa->ptype)) continue;
          tc_knode *l = knode_new(TC_K_LOOP, NULL);
          set_loop(c, l, t->loop[q], qa->extent, tc_uf_find(c->uf, key(c, t, q)));
          knode_insert(l, 0, top);
          top = l;
        }
        knode_insert(cur, opened ? cur->nbody - 1 : cur->nbody, top);
        init->stmt.op = op;
        init->stmt.red.kind = TC_RED_INIT;
      }
      if (!a) break;
      if (a->reduction && tc_ptype_is_thread(a->ptype)) red_slot = 3 + (int)(a->ptype - TC_TIDX);
      if (a->reduction && a->ptype == TC_BIDX) grid_blocks = a->extent;
      if (!is_loop_ptype(a->ptype)) continue;
      int id = tc_uf_find(c->uf, key(c, t, p));
      tc_knode *last = cur->nbody ? cur->body[cur->nbody - 1] : NULL;
      if (last && last->kind == TC_K_LOOP && last->loop.id == id) {
        cur = last;
        continue;
      }
      if (c->loopnode[id]) {
        char b[64];
        free(all);
        /* unreachable: order_statements makes the ops of a loop adjacent */
        return tc_fail(c->f, TC_ERR_LOWER,
                       "compile: internal error: %s's loop axis %d (%s) is shared with a loop "
                       "that other statements were placed after",
                       t->name, p, tc_axis_describe(c->g, t->loop[p], b, sizeof b));
      }
      tc_knode *l = knode_new(TC_K_LOOP, cur);
      /* an axis the tensor ignores (tc_dg_is_broadcast_axis) iterates
       * once where no consumer shares its loop */
      int64_t ext = p >= t->ca_pos && tc_dg_is_broadcast_axis(c->g, t->loop[p]) ? 1 : a->extent;
      set_loop(c, l, t->loop[p], ext, id);
      c->loopvar[id] = l->loop.var;
      c->loopnode[id] = l;
      cur = l;
    }
    tc_knode *s = knode_new(TC_K_STMT, cur);
    s->stmt.op = op;
    stmt_of[i] = s;
    if (!init) continue;
    s->stmt.red.kind = TC_RED_ACC;
    if (red_slot >= 0 || grid_blocks > 0) {
      tc_knode *s_all = knode_new(TC_K_STMT, NULL);
      s_all->stmt.op = op;
      s_all->stmt.red.kind = TC_RED_ALL;
      s_all->stmt.red.slot = red_slot;
      s_all->stmt.red.grid = grid_blocks > 0;
      s_all->stmt.red.grid_blocks = grid_blocks;
      /* after the node of init's parent that holds the reduction loops
       * (the last one now) */
      s_all->parent = init->parent;
      all[nall++] = s_all, all[nall++] = init->parent->body[init->parent->nbody - 1];
      bool fl = t->dtype == TC_F32 || t->dtype == TC_F16 || t->dtype == TC_BF16;
      if (tc_tensor_is_welford(t)) k->nred_w++;
      else (fl ? &k->nred_f : &k->nred_i)[0]++;
    }
  }
  /* in reverse, so that two after one node keep their order */
  for (int j = nall - 2; j >= 0; j -= 2) {
    tc_knode *parent = all[j]->parent;
    int at = 0;
    while (parent->body[at] != all[j + 1]) at++;
    knode_insert(parent, at + 1, all[j]);
  }
  free(all);
  return TC_OK;
}

/* ---- indexing ---------------------------------------------------------- */

/* The extent of x's logical axis i: over a size variable its parameter,
 * else the number. */
static const tc_expr *logical_extent(lctx *c, const tc_tensor *x, int i) {
  const tc_axis *a = &c->g->axes[x->logical[i]];
  return c->k->nsym && a->sym_div ? c->k->sym[a->sym_var] : tc_e_const(c->k->pool, a->extent);
}

/* The element index of tensor x for logical coordinates lv; *valid (may
 * be NULL) gets the predicate of a tensor seen through a view (NULL when
 * always valid). */
static tc_status index_of(lctx *c, const tc_tensor *x, const tc_expr **lv, const tc_expr **out,
                          const tc_expr **valid) {
  tc_epool *p = c->k->pool;
  tc_dgraph *g = c->g;
  const tc_expr *idx = tc_e_const(p, 0);
  if (valid) *valid = NULL;
  if (x->mem == TC_MEM_GLOBAL && x->view) {
    const tc_expr *ok;
    tc_tensor_view_index(x, p, lv, out, &ok);
    *out = tc_simplify(p, *out);
    if (valid && ok) *valid = tc_simplify(p, ok);
    return TC_OK;
  }
  if (x->mem == TC_MEM_GLOBAL) {
    for (int i = 0; i < x->nlogical; i++)
      if (!g->axes[x->logical[i]].reduction) idx = tc_e_add(p, tc_e_mul(p, idx, logical_extent(c, x, i)), lv[i]);
    *out = tc_simplify(p, idx);
    return TC_OK;
  }
  const tc_expr **vals = tc_xcalloc((size_t)g->naxes, sizeof *vals);
  for (int i = 0; i < x->nlogical; i++) vals[x->logical[i]] = lv[i];
  tc_dg_walk(p, g, vals, NULL);
  const int *ax;
  int na = alloc_domain(x, &ax);
  tc_status st = TC_OK;
  for (int j = 0; j < na; j++) {
    if (!axis_allocated(g, x, ax[j])) continue;
    if (!vals[ax[j]]) {
      st = tc_fail(c->f, TC_ERR_SCHEDULE,
                   "compile: %s's allocation axis %d does not derive from its logical domain", x->name, j);
      break;
    }
    idx = tc_e_add(p, tc_e_mulc(p, idx, g->axes[ax[j]].extent), vals[ax[j]]);
  }
  free(vals);
  *out = tc_simplify(p, idx);
  return st;
}

/* Whether every loop axis of t is made from t's allocation axes (t
 * iterates its allocation in order, as a copy does after tc_swizzle_swap). */
static bool loop_from_alloc(const tc_dgraph *g, const tc_tensor *t) {
  const int *ax;
  int na = alloc_domain(t, &ax);
  char *from = tc_dg_forward_marks(g, ax, na);
  bool all = true;
  for (int i = 0; i < t->nloop; i++) all &= from[t->loop[i]] != 0;
  free(from);
  return all;
}

/* The element index of t from the values the walk from its loop domain
 * gave its allocation axes; NULL when an allocated axis has none. */
static const tc_expr *index_from_walk(lctx *c, const tc_tensor *t, const tc_expr **vals) {
  tc_epool *p = c->k->pool;
  const int *ax;
  int na = alloc_domain(t, &ax);
  const tc_expr *idx = tc_e_const(p, 0);
  for (int j = 0; j < na; j++) {
    if (!axis_allocated(c->g, t, ax[j])) continue;
    if (!vals[ax[j]]) return NULL;
    idx = tc_e_add(p, tc_e_mulc(p, idx, c->g->axes[ax[j]].extent), vals[ax[j]]);
  }
  return tc_simplify(p, idx);
}

/* Gives vals (g->naxes entries) the values of t's loop axes in its
 * statement (loop variables, block / thread indices) and of every axis
 * the walk of the axis graph derives from them; returns the predicate
 * that keeps the statement in range.  skip_reduction: leaves t's
 * reduction axes out (before their loops). */
static const tc_expr *loop_values(lctx *c, const tc_tensor *t, bool skip_reduction,
                                  const tc_expr **vals) {
  tc_kir *k = c->k;
  tc_epool *p = k->pool;
  tc_dgraph *g = c->g;
  const tc_expr *pred = tc_e_const(p, 1);
  for (int i = 0; i < t->nloop; i++) {
    tc_axis *a = &g->axes[t->loop[i]];
    if (skip_reduction && a->reduction) continue;
    const tc_expr *v;
    if (tc_dg_is_broadcast_axis(g, t->loop[i])) {
      v = tc_e_const(p, 0); /* t does not depend on it */
    } else if (tc_ptype_is_block(a->ptype) || tc_ptype_is_thread(a->ptype)) {
      int slot = tc_ptype_is_block(a->ptype) ? a->ptype - TC_BIDX : 3 + a->ptype - TC_TIDX;
      v = k->pvar[slot];
      int64_t steps[TC_SYM_MAX_STEPS];
      int ns = k->nsym && tc_dg_is_symbolic(g, t->loop[i]) ? tc_dg_sym_steps(g, t->loop[i], steps, NULL) : -1;
      if (ns >= 0) /* the extent over its size variable */
        pred = tc_e_land(p, pred, tc_e_lt(p, v, tc_sym_expr(p, steps, ns, tc_dg_sym_var(g, t->loop[i]), k->sym)));
      else if (v->hi + 1 > a->extent) pred = tc_e_land(p, pred, tc_e_lt(p, v, tc_e_const(p, a->extent)));
    } else {
      v = c->loopvar[tc_uf_find(c->uf, key(c, t, i))];
    }
    vals[t->loop[i]] = v;
  }
  tc_dg_walk_sym(p, g, vals, &pred, k->nsym ? k->sym : NULL);
  return pred;
}

/* The conjuncts of a LAND chain e (nodes are hash-consed: equal terms
 * are one pointer) appended to t[*n..cap). */
static void land_terms(const tc_expr *e, const tc_expr **t, int *n, int cap) {
  if (e->op == TC_E_LAND) {
    land_terms(e->a, t, n, cap);
    land_terms(e->b, t, n, cap);
  } else if (*n < cap) {
    t[(*n)++] = e;
  }
}

/* Whether term t, x / c < d (c, d > 0 constants), follows from k, x <
 * c * d (a merged dim's digit checked against its extent where the
 * whole is checked already; x >= 0 there). */
static bool lt_implied(const tc_expr *t, const tc_expr *k) {
  if (t->op != TC_E_LT || k->op != TC_E_LT || t->a->op != TC_E_DIV) return false;
  const tc_expr *x = t->a->a, *c = t->a->b, *d = t->b;
  if (c->op != TC_E_CONST || d->op != TC_E_CONST || k->b->op != TC_E_CONST || c->val <= 0 || d->val <= 0)
    return false;
  return k->a == x && x->lo >= 0 && k->b->val <= c->val * d->val;
}

/* A view's predicate without the terms the statement's own predicate
 * already makes (the tile edges repeat the view's upper-extent checks)
 * or that repeat within it; NULL when nothing is left.  A chain too
 * long to list is kept as it is. */
static const tc_expr *view_pred_left(tc_epool *p, const tc_expr *valid, const tc_expr *pred) {
  enum { CAP = 64 };
  const tc_expr *known[CAP], *mine[CAP];
  int nk = 0, nm = 0;
  land_terms(pred, known, &nk, CAP);
  land_terms(valid, mine, &nm, CAP);
  if (nm == CAP) return valid;
  const tc_expr *left = NULL;
  for (int i = 0; i < nm; i++) {
    bool dup = tc_e_is_const(mine[i], 1);
    for (int j = 0; j < nk && !dup; j++) dup = mine[i] == known[j] || lt_implied(mine[i], known[j]);
    for (int j = 0; j < i && !dup; j++) dup = mine[i] == mine[j];
    if (!dup) left = left ? tc_e_land(p, left, mine[i]) : mine[i];
  }
  return left;
}

/* The terms of the walk's predicate pred other than the range checks of
 * t's logical axes (whose values are lv), which the walk appended as
 * they are built here (so they are the same nodes). */
static const tc_expr *inner_terms(tc_epool *p, const tc_expr *e, const tc_expr *const *edge, int n) {
  for (int i = 0; i < n; i++)
    if (e == edge[i]) return tc_e_const(p, 1);
  if (e->op == TC_E_LAND) return tc_e_land(p, inner_terms(p, e->a, edge, n), inner_terms(p, e->b, edge, n));
  return e;
}

static const tc_expr *inner_pred(lctx *c, const tc_tensor *t, const tc_expr *pred,
                                 const tc_expr *const *lv) {
  tc_epool *p = c->k->pool;
  const tc_expr *edge[16];
  int n = 0;
  /* (over a size variable the check compares with its parameter) */
  for (int i = 0; i < t->nlogical && i < 16; i++)
    edge[n++] = tc_simplify(p, tc_e_land(p, tc_e_le(p, tc_e_const(p, 0), lv[i]),
                                         tc_e_lt(p, lv[i], logical_extent(c, t, i))));
  return tc_simplify(p, inner_terms(p, pred, edge, n));
}

/* Whether axis a of operand i of op is an axis of a matmul's operand
 * tile that a wgmma reads whole (through a descriptor): indexed by its
 * position in the tile even where the extent is 1, unlike the axis the
 * operand view broadcasts along (A [.., M, 1, K], B [.., 1, N, K]). */
static bool whole_tile_axis(const tc_op *op, int i, int a) {
  if (op->kind != TC_OP_MATMUL || op->out->macro != TC_MACRO_WGMMA || i > 1) return false;
  int r = op->in[i]->nlogical;
  return a >= r - 3 && a != (i ? r - 3 : r - 2);
}

static tc_status stmt_indices(lctx *c, tc_knode *s) {
  tc_kir *k = c->k;
  tc_epool *p = k->pool;
  tc_dgraph *g = c->g;
  tc_tensor *t = s->stmt.op->out;
  const tc_expr **vals = tc_xcalloc((size_t)g->naxes, sizeof *vals);
  const tc_expr *pred = loop_values(c, t, false, vals);
  const tc_expr *lv[16];
  tc_status st = TC_OK;
  for (int i = 0; i < t->nlogical; i++) {
    lv[i] = vals[t->logical[i]];
    if (!lv[i]) {
      st = tc_fail(c->f, TC_ERR_SCHEDULE,
                   "compile: %s's logical axis %d cannot be computed from its loop domain (an axis "
                   "was dropped from the loop domain)", t->name, i);
      break;
    }
  }
  /* A shared tensor that iterates its own allocation (tc_swizzle_swap)
   * stores at the position its loop indices name: index it by the walk's
   * values of the allocation axes, not back through the logical domain,
   * which would run the layout's swizzle backward and forward again. */
  const tc_expr *direct = NULL;
  if (!st && t->mem == TC_MEM_SHARED && t->alloc_set && loop_from_alloc(g, t))
    direct = index_from_walk(c, t, vals);
  free(vals);
  if (st) return st;
  if (t->mem == TC_MEM_SHARED) s->stmt.inner_pred = inner_pred(c, t, pred, lv);
  s->stmt.pred = tc_simplify(p, pred);
  const tc_expr *out_ok = NULL;
  st = index_of(c, t, lv, &s->stmt.out_index, &out_ok);
  if (!st && direct) s->stmt.out_index = direct;
  /* an output stored through a view writes only where the view holds */
  if (!st && out_ok && (out_ok = view_pred_left(p, out_ok, s->stmt.pred)))
    s->stmt.pred = tc_simplify(p, tc_e_land(p, s->stmt.pred, out_ok));
  for (int i = 0; i < s->stmt.op->nin && !st; i++) {
    const tc_expr *in_lv[16];
    const tc_tensor *x = s->stmt.op->in[i];
    /* (an axis no output axis reads has extent 1: a matmul's result
     * drops its accumulator's reduced axis) */
    for (int j = 0; j < x->nlogical; j++) in_lv[j] = tc_e_const(p, 0);
    for (int j = 0; j < t->nlogical; j++) {
      int a = tc_op_in_axis(s->stmt.op, j);
      if (a < 0) continue; /* an axis a broadcast adds */
      /* an operand broadcasts along an axis of extent 1 (a reduced one too);
       * a gather's data is read at 0 plus what the printer adds */
      in_lv[a] = (tc_logical_extent(x, a) == 1 && !whole_tile_axis(s->stmt.op, i, a)) ||
                         tc_op_axis_gathered(s->stmt.op, i, j)
                     ? tc_e_const(p, 0)
                     : lv[j];
    }
    st = index_of(c, x, in_lv, &s->stmt.in_index[i], &s->stmt.in_valid[i]);
    if (!st && i == 0 && s->stmt.op->kind == TC_OP_GATHER) {
      int ax = s->stmt.op->sub;
      const tc_expr *stride = tc_e_const(p, 1);
      for (int j = ax + 1; j < x->nlogical; j++) stride = tc_e_mul(p, stride, logical_extent(c, x, j));
      s->stmt.gather_extent = tc_simplify(p, logical_extent(c, x, ax));
      s->stmt.gather_stride = tc_simplify(p, stride);
    }
    if (!st && s->stmt.in_valid[i])
      s->stmt.in_valid[i] = view_pred_left(p, s->stmt.in_valid[i], s->stmt.pred);
    if (!st && (x->view || t->view) && s->stmt.op->ldst != TC_LDST_DEFAULT)
      st = tc_fail(c->f, TC_ERR_UNSUPPORTED,
                   "compile: %s is copied by a special load / store instruction (ldst type %d), but %s is seen "
                   "through a coordinate-transform view, which only plain loads and stores read; "
                   "leave its ldst type at the default", t->name, (int)s->stmt.op->ldst,
                   x->view ? x->name : t->name);
  }
  return st;
}

/* The predicate of a reduction's TC_RED_INIT and TC_RED_ALL statements:
 * the conditions of the statement's iteration axes, without the
 * reduction axes' (which have no value outside their loops).  So a
 * thread past the end of a reduction axis still starts at the identity
 * (a block reduction combines the partial results of all of them), and
 * an iteration past the end of an iteration axis (a split that does not
 * divide) touches no element: its index can fall on another element's
 * register, or past the register array. */
static const tc_expr *iteration_pred(lctx *c, const tc_tensor *t) {
  tc_kir *k = c->k;
  tc_epool *p = k->pool;
  tc_dgraph *g = c->g;
  const tc_expr **vals = tc_xcalloc((size_t)g->naxes, sizeof *vals);
  const tc_expr *pred = loop_values(c, t, true, vals);
  free(vals);
  return tc_simplify(p, pred);
}

/* The TC_RED_ACC statement of reduction op under n (NULL: none). */
static tc_knode *find_acc(tc_knode *n, const tc_op *op) {
  if (n->kind == TC_K_STMT) return n->stmt.red.kind == TC_RED_ACC && n->stmt.op == op ? n : NULL;
  for (int i = 0; i < n->nbody; i++) {
    tc_knode *r = find_acc(n->body[i], op);
    if (r) return r;
  }
  return NULL;
}

/* The reduction's TC_RED_INIT and TC_RED_ALL statements write the
 * element its TC_RED_ACC statement accumulates into (an index without
 * the reduction axes). */
/* Whether t has a loop axis bound to parallel type p. */
static bool binds(const lctx *c, const tc_tensor *t, tc_ptype p) {
  for (int i = 0; i < t->nloop; i++)
    if (c->g->axes[t->loop[i]].ptype == p) return true;
  return false;
}

/* A reduction accumulated in shared or global memory, in place: the
 * threads of the block along a thread axis that t does not bind would
 * all add into the same element, so one of them does (tid == 0); in
 * registers each thread has its own. */
static const tc_expr *one_writer_pred(lctx *c, const tc_tensor *t) {
  tc_epool *p = c->k->pool;
  const tc_expr *pred = tc_e_const(p, 1);
  if (t->mem == TC_MEM_LOCAL) return pred;
  for (int d = 0; d < 3; d++)
    if (c->k->block[d] > 1 && !binds(c, t, (tc_ptype)(TC_TIDX + d)))
      pred = tc_e_land(p, pred, tc_e_lt(p, c->k->pvar[3 + d], tc_e_const(p, 1)));
  return pred;
}

static int reduction_indices(tc_knode *n, void *ctx) {
  lctx *c = ctx;
  if (n->stmt.red.kind == TC_RED_NONE) return 0;
  const tc_expr *one = one_writer_pred(c, n->stmt.op->out);
  if (n->stmt.red.kind == TC_RED_ACC) {
    n->stmt.pred = tc_simplify(c->k->pool, tc_e_land(c->k->pool, n->stmt.pred, one));
    return 0;
  }
  tc_knode *acc = find_acc(c->k->root, n->stmt.op);
  n->stmt.out_index = acc->stmt.out_index;
  /* an initialization in loops of its own (build_loops) indexes by
   * their variables: they stand in for the loops they copy meanwhile */
  const tc_expr *saved[16];
  tc_knode *own[16];
  int nown = 0;
  for (tc_knode *l = n->parent; l && nown < 16; l = l->parent)
    if (l->kind == TC_K_LOOP && c->loopnode[l->loop.id] != l) {
      own[nown] = l, saved[nown++] = c->loopvar[l->loop.id];
      c->loopvar[l->loop.id] = l->loop.var;
    }
  tc_tensor *t = n->stmt.op->out;
  if (nown) {
    const tc_expr **vals = tc_xcalloc((size_t)c->g->naxes, sizeof *vals);
    loop_values(c, t, true, vals);
    n->stmt.out_index = index_from_walk(c, t, vals);
    free(vals);
  }
  n->stmt.pred = tc_simplify(c->k->pool, tc_e_land(c->k->pool, iteration_pred(c, t), one));
  for (int i = 0; i < nown; i++) c->loopvar[own[i]->loop.id] = saved[i];
  if (!n->stmt.out_index)
    return tc_fail(c->f, TC_ERR_SCHEDULE,
                   "compile: %s's allocation has an axis that its iteration loops give no value, "
                   "so its accumulators cannot be initialized outside its reduction loops; "
                   "allocate it by its loop domain (tc_set_alloc_to_loop)", t->name);
  return 0;
}

/* A reduction in global memory is accumulated in place, once per block
 * that runs it: the blocks along a block axis it does not bind would all
 * add into the same element. */
static tc_status check_reduction_blocks(lctx *c, tc_op **order, int n) {
  for (int i = 0; i < n; i++) {
    const tc_tensor *t = order[i]->out;
    if (!tc_op_reduces(order[i]) || t->mem != TC_MEM_GLOBAL) continue;
    for (int d = 0; d < 3; d++)
      if (c->k->grid[d] > 1 && !binds(c, t, (tc_ptype)(TC_BIDX + d)))
        return tc_fail(c->f, TC_ERR_SCHEDULE,
                       "compile: %s is a reduction accumulated in place in global memory, but the "
                       "kernel runs %lld blocks along %s, which %s does not bind: each would add "
                       "into its elements; bind %s in %s's loop, or reduce into a local tensor and "
                       "copy it out (tc_cache_before(%s))",
                       t->name, (long long)c->k->grid[d], tc_ptype_name((tc_ptype)(TC_BIDX + d)), t->name,
                       tc_ptype_name((tc_ptype)(TC_BIDX + d)), t->name, t->name);
  }
  return TC_OK;
}

/* ---- grid reductions ---------------------------------------------------- */

static bool is_grid_all(const tc_knode *n) {
  return n->kind == TC_K_STMT && n->stmt.red.kind == TC_RED_ALL && n->stmt.red.grid;
}

/* The first grid reduction statement under n (NULL: none). */
static tc_knode *find_grid_all(tc_knode *n) {
  if (is_grid_all(n)) return n;
  for (int i = 0; i < n->nbody; i++) {
    tc_knode *r = find_grid_all(n->body[i]);
    if (r) return r;
  }
  return NULL;
}

/* Every statement under n, which runs after grid reduction r in the last
 * block only, is computed from r and binds no BIDx of more than one
 * block. */
static tc_status check_after_grid(lctx *c, const tc_knode *n, const tc_tensor *r) {
  for (int i = 0; i < n->nbody; i++) {
    tc_status st = check_after_grid(c, n->body[i], r);
    if (st) return st;
  }
  if (n->kind != TC_K_STMT) return TC_OK;
  const tc_tensor *t = n->stmt.op->out;
  if (!tc_tensor_reads(t, r))
    return tc_fail(c->f, TC_ERR_UNSUPPORTED,
                   "compile: %s is computed after the grid reduction %s but does not read its "
                   "result: past a grid reduction only the last block of each row of blocks goes "
                   "on; compute %s before %s or in a kernel of its own", t->name, r->name, t->name,
                   r->name);
  for (int q = 0; q < t->nloop; q++) {
    const tc_axis *a = &c->g->axes[t->loop[q]];
    if (a->ptype == TC_BIDX && a->extent > 1)
      return tc_fail(c->f, TC_ERR_UNSUPPORTED,
                     "compile: %s reads the grid reduction %s, but its axis %d is bound to BIDx "
                     "with %lld blocks: past a grid reduction only the last block of each row of "
                     "blocks goes on; make that axis of %s serial or a thread axis",
                     t->name, r->name, q, (long long)a->extent, t->name);
  }
  return TC_OK;
}

/* The grid reduction of the kernel (TC_RED_ALL with red.grid), if any,
 * where it can run: at the kernel's top level (validate_reduction keeps
 * its iteration axes on blocks and threads; a producer's loop must not
 * enclose it), the only one, and followed only by statements computed
 * from its result that bind no BIDx of more than one block: only the
 * last block of each row of blocks goes on past it (as block 0).  Sizes
 * the workspace: a count per row of blocks (BIDy x BIDz), then
 * grid_blocks partials per row of blocks and thread off the reduction's
 * thread axis. */
static tc_status check_grid_reduction(lctx *c) {
  tc_kir *k = c->k;
  tc_knode *root = k->root, *gs = NULL;
  for (int i = 0; i < root->nbody; i++) {
    tc_knode *n = root->body[i];
    tc_knode *inner = find_grid_all(n);
    if (inner && inner != n)
      return tc_fail(c->f, TC_ERR_UNSUPPORTED,
                     "compile: the grid reduction %s sits inside a loop of another statement; a "
                     "grid reduction runs once per kernel, at its top level: inline %s's producers "
                     "less deep", inner->stmt.op->out->name, inner->stmt.op->out->name);
    if (gs && inner)
      return tc_fail(c->f, TC_ERR_UNSUPPORTED,
                     "compile: %s and %s are both grid reductions (a reduction axis on BIDx); "
                     "tilec makes one per kernel: keep the other's reduction axes on threads and "
                     "serial loops", gs->stmt.op->out->name, n->stmt.op->out->name);
    if (inner) {
      gs = n;
      continue;
    }
    if (gs) {
      tc_status st = check_after_grid(c, n, gs->stmt.op->out);
      if (st) return st;
    }
  }
  if (!gs) return TC_OK;
  /* every block takes part in the count: a block past the reduction's
   * blocks would count itself too */
  if (k->grid[0] != gs->stmt.red.grid_blocks)
    return tc_fail(c->f, TC_ERR_UNSUPPORTED,
                   "compile: the grid reduction %s spans %lld blocks along BIDx, but the kernel "
                   "runs %lld (another tensor binds BIDx to more); bind BIDx alike in every tensor "
                   "(tc_parallelize_all_like)", gs->stmt.op->out->name,
                   (long long)gs->stmt.red.grid_blocks, (long long)k->grid[0]);
  int ax = gs->stmt.red.slot - 3;
  int64_t threads = k->block[0] * k->block[1] * k->block[2];
  int64_t others = ax >= 0 ? threads / k->block[ax] : threads, rows = k->grid[1] * k->grid[2];
  k->ws_words = tc_sat_add(rows, tc_sat_mul(tc_sat_mul(rows, others), gs->stmt.red.grid_blocks));
  if (k->ws_words > ((int64_t)1 << 29))
    return tc_fail(c->f, TC_ERR_LOWER,
                   "compile: the grid reduction %s needs a workspace of %lld words; keep BIDx x "
                   "BIDy x BIDz x threads under 2^29", gs->stmt.op->out->name, (long long)k->ws_words);
  return TC_OK;
}

/* ---- barriers ---------------------------------------------------------- */

static void place_sync(tc_knode *w, tc_knode *r) {
  for (tc_knode *n = r; n->parent; n = n->parent) {
    for (tc_knode *m = w; m; m = m->parent)
      if (m == n->parent) {
        n->sync_before = 1;
        if (m->kind == TC_K_LOOP) m->sync_end = 1;
        return;
      }
  }
}

static void place_barriers(lctx *c, tc_op **order, int n, tc_knode **stmt_of) {
  tc_kir *k = c->k;
  if (k->block[0] * k->block[1] * k->block[2] <= 1) return;
  for (int i = 0; i < n; i++) {
    tc_tensor *t = order[i]->out;
    if (t->mem == TC_MEM_LOCAL) continue;
    if (t->mem == TC_MEM_SHARED && t->circular_stages > 1) continue; /* circular.c places its own */
    for (int j = 0; j < n; j++)
      for (int q = 0; q < order[j]->nin; q++)
        if (order[j]->in[q] == t) place_sync(stmt_of[i], stmt_of[j]);
  }
}

/* ---- circular buffers ---------------------------------------------------- */

/* Each circular buffer's loop (the one it is computed at: serial) and
 * copy statement, for circular.c. */
static tc_status ring_loops(lctx *c, tc_op **order, int n, tc_knode **stmt_of) {
  for (int i = 0; i < c->k->nallocs; i++) {
    tc_kalloc *a = &c->k->allocs[i];
    if (a->stages <= 1) continue;
    tc_tensor *t = a->t;
    int w = 0;
    while (w < n && order[w]->out != t) w++;
    if (w == n || tc_op_reduces(order[w]))
      return tc_fail(c->f, TC_ERR_SCHEDULE, "compile: %s is circular-buffered but is a reduction; "
                     "a ring holds tiles that a copy fills", t->name);
    const tc_axis *ax = t->ca_pos > 0 ? &c->g->axes[t->loop[t->ca_pos - 1]] : NULL;
    if (!ax || ax->ptype != TC_SERIAL) {
      char b[64] = "";
      if (ax) tc_axis_describe(c->g, t->loop[t->ca_pos - 1], b, sizeof b);
      return tc_fail(c->f, TC_ERR_SCHEDULE,
                     "compile: %s is circular-buffered (%d stages) but is computed %s%s%s; a ring "
                     "turns over a serial loop: compute %s at one (tc_compute_at), e.g. a matmul's "
                     "K-tile loop", t->name, a->stages, ax ? "at its loop axis " : "outside any loop",
                     b, ax ? (tc_ptype_is_block(ax->ptype) || tc_ptype_is_thread(ax->ptype)
                                  ? ", a parallel axis" : ", which is not a serial loop") : "", t->name);
    }
    a->ring_loop = c->loopnode[tc_uf_find(c->uf, key(c, t, t->ca_pos - 1))];
    a->writer = stmt_of[w];
  }
  return TC_OK;
}

/* ---- symbolic sizes (docs/dynamic.md) ------------------------------------- */

/* What this slice makes of a fusion with size variables: not moved by
 * a permute (global strides are products over the parameters), their
 * axes serial loops (to the extent over the parameters) or on block
 * indices, one extent chain per grid dimension (the grid is computed at
 * launch; no grid reduction over one), never in an on-chip allocation. */
static tc_status check_symbolic(lctx *c, tc_op **order, int n) {
  tc_fusion *f = c->f;
  tc_dgraph *g = c->g;
  tc_kir *k = c->k;
  char b[64];
  for (int i = 0; i < n; i++) { /* (the tensors the kernel computes) */
    const tc_tensor *t = order[i]->out;
    for (int j = 0; j < t->nlogical; j++) {
      const tc_axis *a = &g->axes[t->logical[j]];
      if (!a->sym_div) continue;
      const char *m = f->sym[a->sym_var]->label;
      if (t->def && t->def->kind == TC_OP_PERMUTE && t->def->perm[j] != j)
        return tc_fail(f, TC_ERR_UNSUPPORTED,
                       "compile: %s has the size variable %s on its logical axis %d, where a permute "
                       "moved it; a symbolic size stays on the axis its input gives it (only the "
                       "leading axis of tc_input_sym, or the axes tc_input_syms names)", t->name, m, j);
    }
  }
  tc_str why;
  tc_str_init(&why);
  tc_status st = TC_OK;
  for (int i = 0; i < n && !st; i++) {
    tc_tensor *t = order[i]->out;
    for (int j = 0; j < t->nloop && !st; j++) {
      int ax = t->loop[j];
      if (!tc_dg_is_symbolic(g, ax)) continue;
      int64_t steps[TC_SYM_MAX_STEPS];
      int ns = tc_dg_sym_steps(g, ax, steps, &why), var = tc_dg_sym_var(g, ax);
      const char *m = f->sym[var]->label;
      tc_ptype pt = g->axes[ax].ptype;
      int d = pt - TC_BIDX;
      tc_axis_describe(g, ax, b, sizeof b);
      if (ns < 0)
        st = tc_fail(f, TC_ERR_UNSUPPORTED, "compile: %s's loop axis %d (%s) comes from %s; this "
                     "slice of symbolic sizes takes splits of %s and merges with fixed axes only",
                     t->name, j, b, tc_str_cstr(&why), m);
      else if (pt == TC_SERIAL)
        continue; /* a loop to the extent over the parameters (set_loop) */
      else if (!tc_ptype_is_block(pt))
        st = tc_fail(f, TC_ERR_UNSUPPORTED, "compile: %s's loop axis %d (%s) has an extent that "
                     "depends on the size variable %s and is %s; keep such axes serial or bind "
                     "them to BIDx (or BIDy, BIDz: an unrolled, thread or vector axis over %s "
                     "would need a size known at compile time; split it and bind the factor side)",
                     t->name, j, b, m, tc_ptype_name(pt), m);
      else if (g->axes[ax].reduction)
        st = tc_fail(f, TC_ERR_UNSUPPORTED, "compile: %s's reduction axis %d (%s) is bound to %s "
                     "and has an extent that depends on the size variable %s; a grid reduction "
                     "combines a number of blocks fixed at compile time: keep the reduction's "
                     "symbolic axes serial (split off a fixed part for the threads)",
                     t->name, j, b, tc_ptype_name(pt), m);
      else if (k->grid_var[d] >= 0 && (var != k->grid_var[d] || ns != k->grid_nsteps[d] ||
                                       memcmp(steps, k->grid_steps[d], (size_t)ns * sizeof *steps)))
        st = tc_fail(f, TC_ERR_UNSUPPORTED, "compile: %s binds %s to an extent over %s that "
                     "differs from another tensor's; bind it alike (tc_parallelize_all_like)",
                     t->name, tc_ptype_name(pt), m);
      else {
        k->grid_var[d] = var, k->grid_nsteps[d] = ns;
        memcpy(k->grid_steps[d], steps, (size_t)ns * sizeof *steps);
      }
    }
    if (st || t->mem == TC_MEM_GLOBAL) continue;
    const int *ax;
    int na = alloc_domain(t, &ax);
    for (int j = 0; j < na && !st; j++)
      if (axis_allocated(g, t, ax[j]) && tc_dg_is_symbolic(g, ax[j])) {
        const char *m = f->sym[tc_dg_sym_var(g, ax[j])]->label;
        st = tc_fail(f, TC_ERR_SCHEDULE, "compile: %s (%s memory) would allocate its axis %d (%s), "
                     "whose extent depends on the size variable %s; shared and register "
                     "allocations must not depend on %s: inline %s past that axis or bind it to "
                     "BIDx", t->name, tc_memtype_name(t->mem), j, tc_axis_describe(g, ax[j], b, sizeof b),
                     m, m, t->name);
      }
  }
  /* a static axis on a block index beside a symbolic one would be cut to
   * its grid (an operand's broadcast axis, of extent 1, runs once in any
   * block) */
  for (int i = 0; i < n && !st; i++) {
    tc_tensor *t = order[i]->out;
    for (int j = 0; j < t->nloop && !st; j++) {
      tc_ptype pt = g->axes[t->loop[j]].ptype;
      if (!tc_ptype_is_block(pt) || k->grid_var[pt - TC_BIDX] < 0) continue;
      if (!tc_dg_is_symbolic(g, t->loop[j]) && !tc_dg_is_broadcast_axis(g, t->loop[j]))
        st = tc_fail(f, TC_ERR_UNSUPPORTED, "compile: %s binds %s to a fixed extent while other "
                     "tensors bind it to one over the size variable %s; bind %s alike "
                     "(tc_parallelize_all_like)", t->name, tc_ptype_name(pt),
                     f->sym[k->grid_var[pt - TC_BIDX]]->label, tc_ptype_name(pt));
    }
  }
  tc_str_free(&why);
  return st;
}

/* ---- driver ------------------------------------------------------------ */

/* Nodes an expression of a statement may print as (tc_e_print_size); far
 * above any scheduled kernel's, far below what exhausts memory. */
#define TC_MAX_PRINTED_NODES (1 << 18)

/* Every expression a statement under n prints stays within
 * TC_MAX_PRINTED_NODES: the expressions are shared graphs but are printed
 * as trees, and transforms that read an axis twice (XOR swizzles) double
 * the printed size each time. */
static int check_printed_size(tc_knode *n, void *ctx) {
  lctx *c = ctx;
  const tc_kstmt *s = &n->stmt;
  const tc_expr *es[] = {s->pred,      s->out_index, s->in_index[0], s->in_index[1], s->in_index[2],
                         s->tmem.addr, s->ldsm.addr, s->tma.row,     s->tma.col,     s->tma.smem};
  for (size_t i = 0; i < sizeof es / sizeof es[0]; i++)
    if (tc_e_print_size(es[i], TC_MAX_PRINTED_NODES) > TC_MAX_PRINTED_NODES)
      return tc_fail(c->f, TC_ERR_LOWER,
                     "compile: an index of the statement computing %s would print as more than %d "
                     "terms: transforms that read an axis twice (each XOR / CuTe swizzle does) "
                     "double it each time; schedule fewer of them on one axis",
                     s->op && s->op->out ? s->op->out->name : "?", TC_MAX_PRINTED_NODES);
  return TC_OK;
}

int tc_knode_each_stmt(tc_knode *n, int (*fn)(tc_knode *s, void *ctx), void *ctx) {
  if (n->kind == TC_K_STMT) return fn(n, ctx);
  for (int i = 0; i < n->nbody; i++) {
    int r = tc_knode_each_stmt(n->body[i], fn, ctx);
    if (r) return r;
  }
  return 0;
}

tc_status tc_lower(tc_fusion *f, tc_target target, const char *arch, tc_kir **out) {
  tc_clear_error(f);
  *out = NULL;
  if (f->noutputs == 0) return tc_fail(f, TC_ERR_ARGUMENT, "compile: the fusion has no outputs (tc_add_output)");
  int n;
  tc_op **order = tc_topo_order(f, &n);
  lctx c = {0};
  c.f = f, c.g = &f->g;
  tc_target_info_make(target, arch, &c.ti, NULL); /* a bad arch fails at build */
  c.k = tc_xcalloc(1, sizeof *c.k);
  c.k->f = f;
  c.k->pool = tc_epool_new();
  c.maxloop = 1;
  tc_fusion_mark_symbolic(f);
  /* (named as the parameter is printed) */
  c.k->nsym = f->nsym;
  for (int v = 0; v < f->nsym; v++) c.k->sym[v] = tc_e_var(c.k->pool, f->sym[v]->name, 1, f->sym_bound[v]);
  for (int d = 0; d < 3; d++) c.k->grid_var[d] = -1;
  for (int i = 0; i < f->ntensors; i++)
    if (f->tensors[i]->nloop > c.maxloop) c.maxloop = f->tensors[i]->nloop;
  tc_status st = TC_OK;
  for (int i = 0; i < f->ninputs && !st; i++)
    if (tc_tensor_bytes(f->inputs[i]) / tc_dtype_size(f->inputs[i]->dtype) > 2147483647u)
      st = tc_fail(f, TC_ERR_LOWER,
                   "compile: input %s has more than 2^31 - 1 elements; kernels index with 32-bit "
                   "integers", f->inputs[i]->name);
  for (int i = 0; i < n && !st; i++) {
    tc_tensor *t = order[i]->out;
    st = validate_tensor(&c, t);
    tc_op *cons[64];
    int nc = tc_consumers(f, t, cons, 64);
    for (int j = 0; j < nc && j < 64 && !st; j++) {
      if (t->ca_pos > 0) st = tc_check_inline(t, cons[j]->out, t->ca_pos, "compile");
      if (!st) st = validate_visibility(&c, t, cons[j]->out);
    }
  }
  tc_knode **stmt_of = tc_xcalloc((size_t)n + 1, sizeof *stmt_of);
  if (!st) loop_identities(&c, order, n);
  if (!st) st = validate_shared_loops(&c, order, n);
  if (!st) st = order_statements(&c, order, n);
  if (!st) st = tc_tmem_check_target(f, target, arch);
  if (!st && f->nsym) st = check_symbolic(&c, order, n);
  if (!st) st = launch_config(&c, order, n);
  if (!st) st = check_reduction_blocks(&c, order, n);
  if (!st) st = allocate(&c, order, n);
  if (!st) st = build_loops(&c, order, n, stmt_of);
  if (!st) st = check_grid_reduction(&c);
  for (int i = 0; i < n && !st; i++) st = stmt_indices(&c, stmt_of[i]);
  if (!st) st = (tc_status)tc_knode_each_stmt(c.k->root, reduction_indices, &c);
  if (!st) st = ring_loops(&c, order, n, stmt_of);
  if (!st) place_barriers(&c, order, n, stmt_of);
  if (!st) st = tc_tmem_lower(c.k);
  if (!st) st = tc_ldst_lower(c.k, target, arch);
  if (!st) st = tc_mma_lower(c.k, target, arch);
  if (!st) st = tc_wgmma_lower(c.k, target, arch);
  if (!st) st = tc_circular_lower(c.k, &c.ti);
  if (!st) st = tc_tma_lower(c.k, target, arch);
  if (!st) st = tc_knode_each_stmt(c.k->root, check_printed_size, &c);
  if (!st) st = check_smem_limit(&c);
  if (!st) {
    c.k->params = tc_xmalloc((size_t)(f->ninputs + f->noutputs + 1) * sizeof(tc_tensor *));
    for (int i = 0; i < f->ninputs; i++) c.k->params[c.k->nparams++] = f->inputs[i];
    for (int i = 0; i < f->noutputs; i++) c.k->params[c.k->nparams++] = f->outputs[i];
  }
  free(stmt_of), free(order), free(c.uf), free(c.loopvar), free(c.loopnode);
  if (st) {
    tc_kir_free(c.k);
    return st;
  }
  *out = c.k;
  return TC_OK;
}
