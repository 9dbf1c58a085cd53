/* schedule.c - the scheduling calls: loop-domain transforms, parallel
 * types, memory types, inlining, caching, transform propagation.  Every
 * misuse returns a status with a message naming the tensor, the axis and
 * the reason (see tc_fusion_error). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/fusion.h"
#include "abstract_tensor.h"
#include "sched.h"

/* Resolves and checks an axis argument of a scheduling call. */
static int axis_arg(const tc_tensor *t, const char *call, int axis, tc_status *st) {
  int a = tc_norm_axis(axis, t->nloop);
  if (a < 0) *st = tc_tensor_fail(t, TC_ERR_ARGUMENT, call, "%s has no loop axis %d; it has %d", t->name, axis, t->nloop);
  return a;
}

/* Replaces loop positions [pos, pos + nold) by the axes in repl. */
static void splice_loop(tc_tensor *t, int pos, int nold, const int *repl, int nnew) {
  int n = t->nloop - nold + nnew;
  int *loop = tc_xmalloc((size_t)n * sizeof(int)), k = 0;
  for (int i = 0; i < pos; i++) loop[k++] = t->loop[i];
  for (int i = 0; i < nnew; i++) loop[k++] = repl[i];
  for (int i = pos + nold; i < t->nloop; i++) loop[k++] = t->loop[i];
  free(t->loop);
  t->loop = loop, t->nloop = n;
  if (t->ca_pos > n) t->ca_pos = n;
}

tc_status tc_split(tc_tensor *t, int axis, int64_t factor, int inner_split) {
  tc_status st = tc_tensor_check_computed(t, "tc_split");
  if (st) return st;
  int a = axis_arg(t, "tc_split", axis, &st);
  if (a < 0) return st;
  TC_STR_LOCAL(err);
  int o, i;
  if (factor < 1)
    return tc_tensor_fail(t, TC_ERR_ARGUMENT, "tc_split", "%s axis %d: split factor must be at least 1, got %lld",
                           t->name, a, (long long)factor);
  if (tc_dg_split(&t->f->g, t->loop[a], factor, inner_split, &o, &i, &err))
    return tc_tensor_fail(t, TC_ERR_ARGUMENT, "tc_split", "%s axis %d: %s", t->name, a, tc_str_cstr(&err));
  int repl[2] = {o, i};
  splice_loop(t, a, 1, repl, 2);
  return TC_OK;
}

tc_status tc_merge(tc_tensor *t, int a, int b) {
  tc_status st = tc_tensor_check_computed(t, "tc_merge");
  if (st) return st;
  int x = axis_arg(t, "tc_merge", a, &st);
  if (x < 0) return st;
  int y = axis_arg(t, "tc_merge", b, &st);
  if (y < 0) return st;
  if (y != x + 1)
    return tc_tensor_fail(t, TC_ERR_SCHEDULE, "tc_merge",
                           "%s axes %d and %d are not adjacent; merge needs the second axis right after the "
                           "first (reorder first)", t->name, x, y);
  tc_ptype px = t->f->g.axes[t->loop[x]].ptype, py = t->f->g.axes[t->loop[y]].ptype;
  if (px != TC_SERIAL || py != TC_SERIAL)
    return tc_tensor_fail(t, TC_ERR_SCHEDULE, "tc_merge",
                           "%s axes %d and %d are parallelized (%s, %s); merge before parallelizing", t->name,
                           x, y, tc_ptype_name(px), tc_ptype_name(py));
  TC_STR_LOCAL(err);
  int out;
  if (tc_dg_merge(&t->f->g, t->loop[x], t->loop[y], &out, &err))
    return tc_tensor_fail(t, TC_ERR_ARGUMENT, "tc_merge", "%s axis %d: %s", t->name, x, tc_str_cstr(&err));
  splice_loop(t, x, 2, &out, 1);
  return TC_OK;
}

tc_status tc_reorder(tc_tensor *t, int n, const int *old_pos, const int *new_pos) {
  tc_status st = tc_tensor_check_computed(t, "tc_reorder");
  if (st) return st;
  if (n < 0 || (n > 0 && (!old_pos || !new_pos)))
    return tc_tensor_fail(t, TC_ERR_ARGUMENT, "tc_reorder", "bad arguments: %d pairs", n);
  int bad = 0, rc = tc_reorder_list(t->loop, t->nloop, n, old_pos, new_pos, &bad);
  if (rc == -1)
    return tc_tensor_fail(t, TC_ERR_ARGUMENT, "tc_reorder", "%s has no loop axis %d; it has %d", t->name, bad,
                           t->nloop);
  if (rc == -2)
    return tc_tensor_fail(t, TC_ERR_ARGUMENT, "tc_reorder", "%s axis %d is named twice in the reorder",
                           t->name, bad);
  return TC_OK;
}

tc_status tc_swizzle(tc_tensor *t, tc_swizzle_type type, int x, int y) {
  tc_status st = tc_tensor_check_computed(t, "tc_swizzle");
  if (st) return st;
  if (type != TC_SWIZZLE_XOR)
    return tc_tensor_fail(t, TC_ERR_ARGUMENT, "tc_swizzle", "unknown swizzle type %d", (int)type);
  int a = axis_arg(t, "tc_swizzle", x, &st);
  if (a < 0) return st;
  int b = axis_arg(t, "tc_swizzle", y, &st);
  if (b < 0) return st;
  if (a == b) return tc_tensor_fail(t, TC_ERR_ARGUMENT, "tc_swizzle", "%s axis %d swizzled with itself", t->name, a);
  TC_STR_LOCAL(err);
  int ox, oy;
  if (tc_dg_xor(&t->f->g, t->loop[a], t->loop[b], &ox, &oy, &err))
    return tc_tensor_fail(t, TC_ERR_SCHEDULE, "tc_swizzle", "%s axes %d, %d: %s", t->name, a, b, tc_str_cstr(&err));
  t->loop[a] = ox, t->loop[b] = oy;
  return TC_OK;
}

tc_status tc_swizzle_cute(tc_tensor *t, int axis, int b, int m, int s) {
  tc_status st = tc_tensor_check_computed(t, "tc_swizzle_cute");
  if (st) return st;
  int a = axis_arg(t, "tc_swizzle_cute", axis, &st);
  if (a < 0) return st;
  TC_STR_LOCAL(err);
  int out;
  if (tc_dg_cute(&t->f->g, t->loop[a], b, m, s, &out, &err))
    return tc_tensor_fail(t, TC_ERR_SCHEDULE, "tc_swizzle_cute", "%s axis %d: %s", t->name, a, tc_str_cstr(&err));
  t->loop[a] = out;
  return TC_OK;
}

tc_status tc_resize(tc_tensor *t, int axis, int64_t left, int64_t right) {
  tc_status st = tc_tensor_check_computed(t, "tc_resize");
  if (st) return st;
  int a = axis_arg(t, "tc_resize", axis, &st);
  if (a < 0) return st;
  TC_STR_LOCAL(err);
  int out;
  if (tc_dg_resize(&t->f->g, t->loop[a], left, right, &out, &err))
    return tc_tensor_fail(t, TC_ERR_ARGUMENT, "tc_resize", "%s axis %d: %s", t->name, a, tc_str_cstr(&err));
  t->loop[a] = out;
  return TC_OK;
}

bool tc_ptype_is_thread(tc_ptype p) { return p >= TC_TIDX && p <= TC_TIDZ; }
bool tc_ptype_is_block(tc_ptype p) { return p >= TC_BIDX && p <= TC_BIDZ; }
bool tc_ptype_is_device(tc_ptype p) { return p >= TC_DIDX && p <= TC_DIDZ; }

const char *tc_sched_extent_text(const tc_fusion *f, int ax, int64_t n, char *buf, size_t cap) {
  if (ax < 0 || !f->nsym || !tc_dg_is_symbolic(&f->g, ax)) {
    snprintf(buf, cap, "%lld", (long long)n);
    return buf;
  }
  const char *names[TC_MAX_SIZE_VARS];
  char sym[160];
  for (int i = 0; i < f->nsym; i++) names[i] = f->sym[i]->label;
  snprintf(buf, cap, "%s (at most %lld)", tc_dg_sym_text(&f->g, ax, names, sym, sizeof sym), (long long)n);
  return buf;
}

tc_status tc_check_vector_width(const tc_tensor *t, int axis, int64_t extent) {
  int64_t bytes = extent * (int64_t)tc_dtype_size(t->dtype);
  /* a tensor-memory store or load (tcgen05.st/ld .x1 ... .x128) moves up
   * to 128 32-bit words per thread */
  bool tmem = t->mem == TC_MEM_TENSOR ||
              (t->def && t->def->nin == 1 && t->def->in[0]->mem == TC_MEM_TENSOR);
  /* in registers a vector is an unrolled loop over the thread's own
   * elements: 16 lanes of any dtype (an f32 intermediate of a vector of
   * 8 halves in global memory); in memory, one 16-byte access */
  bool regs = !tmem && t->mem == TC_MEM_LOCAL;
  int64_t max = tmem ? 512 : regs ? 64 : 16;
  if (extent < 1 || (extent & (extent - 1)) != 0 || extent > (regs ? 16 : max) || bytes > max)
    return tc_tensor_fail(t, TC_ERR_SCHEDULE, "tc_parallelize",
                           "%s axis %d has extent %lld: a vectorized axis needs a power-of-two extent with "
                           "at most %lld bytes per vector%s (%lld bytes of %s here)",
                           t->name, axis, (long long)extent, (long long)max,
                           tmem ? " (128 32-bit words: tcgen05 .x128)" : regs ? " and 16 lanes in registers" : "",
                           (long long)bytes,
                           tc_dtype_name(t->dtype));
  return TC_OK;
}

tc_status tc_parallelize(tc_tensor *t, int axis, tc_ptype p) {
  tc_status st = tc_tensor_check_computed(t, "tc_parallelize");
  if (st) return st;
  int a = axis_arg(t, "tc_parallelize", axis, &st);
  if (a < 0) return st;
  if ((int)p < TC_SERIAL || p > TC_UNROLL)
    return tc_tensor_fail(t, TC_ERR_ARGUMENT, "tc_parallelize", "unknown parallel type %d", (int)p);
  tc_dgraph *g = &t->f->g;
  if (p != TC_SERIAL && p != TC_UNROLL)
    for (int i = 0; i < t->nloop; i++)
      if (i != a && g->axes[t->loop[i]].ptype == p)
        return tc_tensor_fail(t, TC_ERR_SCHEDULE, "tc_parallelize", "%s axes %d and %d would both be %s",
                               t->name, i, a, tc_ptype_name(p));
  if (p == TC_VECTORIZE) {
    st = tc_check_vector_width(t, a, g->axes[t->loop[a]].extent);
    if (st) return st;
  }
  g->axes[t->loop[a]].ptype = p;
  return TC_OK;
}

tc_status tc_set_memory_type(tc_tensor *t, tc_memtype m) {
  tc_clear_error(t->f);
  if ((int)m < TC_MEM_GLOBAL || m > TC_MEM_TENSOR)
    return tc_tensor_fail(t, TC_ERR_ARGUMENT, "tc_set_memory_type", "unknown memory type %d", (int)m);
  if ((t->is_input || t->is_output) && m != TC_MEM_GLOBAL)
    return tc_tensor_fail(t, TC_ERR_SCHEDULE, "tc_set_memory_type",
                           "%s is a fusion %s and lives in global memory; cache it (tc_cache_after / "
                           "tc_cache_before) and place the cache in %s memory",
                           t->name, t->is_input ? "input" : "output", tc_memtype_name(m));
  t->mem = m;
  return TC_OK;
}

tc_status tc_circular_buffer(tc_tensor *t, int stages) {
  tc_clear_error(t->f);
  if (stages < 1 || stages > TC_CIRCULAR_MAX_STAGES)
    return tc_tensor_fail(t, TC_ERR_ARGUMENT, "tc_circular_buffer",
                           "stages must be between 1 and %d, got %d (1: a single buffer)",
                           TC_CIRCULAR_MAX_STAGES, stages);
  t->circular_stages = stages;
  return TC_OK;
}

tc_status tc_set_ldst_type(tc_tensor *t, tc_ldst_type op) {
  tc_clear_error(t->f);
  if (!t->def || t->def->kind != TC_OP_SET)
    return tc_tensor_fail(t, TC_ERR_SCHEDULE, "tc_set_ldst_type",
                           "%s is not made by a set (load/store) op, so it has no load/store instruction to choose",
                           t->name);
  if ((int)op < TC_LDST_DEFAULT || op > TC_LDST_STMATRIX_TRANS)
    return tc_tensor_fail(t, TC_ERR_ARGUMENT, "tc_set_ldst_type", "unknown load/store type %d", (int)op);
  t->def->ldst = op;
  return TC_OK;
}

/* Why no loop axis of t at position i can serve all its consumers: one
 * whose axis i is made from other axes of t than c's is (as when one
 * reads t permuted); writes "" when there is none. */
static void conflicting_reader(const tc_tensor *t, const tc_tensor *c, const uint64_t *csig, int i,
                               char *buf, size_t cap) {
  buf[0] = 0;
  tc_op *cons[64];
  int nc = tc_consumers(t->f, t, cons, 64);
  for (int k = 0; k < nc && k < 64 && !buf[0]; k++) {
    const tc_tensor *d = cons[k]->out;
    if (d == c || i >= d->nloop) continue;
    uint64_t *psig, *dsig;
    tc_edge_sigs(t, d, &psig, &dsig);
    if (!tc_axes_match(&t->f->g, csig, c->loop[i], dsig, d->loop[i]))
      snprintf(buf, cap,
               "; %s is also read by %s, whose loop axis %d is made from other axes of %s (as when "
               "one of them reads %s permuted), so no loop order of %s serves both there",
               t->name, d->name, i, t->name, t->name, t->name);
    free(psig), free(dsig);
  }
}

/* Checks that t's loop axes [0, pos) map to consumer c's; on failure writes
 * the message and returns non-OK. */
tc_status tc_check_inline(const tc_tensor *t, const tc_tensor *c, int pos, const char *call) {
  const tc_dgraph *g = &t->f->g;
  char b1[64], b2[64];
  if (pos > c->nloop)
    return tc_tensor_fail(t, TC_ERR_SCHEDULE, call,
                           "cannot inline %s at position %d: its consumer %s has only %d loop axes", t->name,
                           pos, c->name, c->nloop);
  uint64_t *psig, *csig;
  tc_edge_sigs(t, c, &psig, &csig);
  tc_status st = TC_OK;
  for (int i = 0; i < pos && !st; i++) {
    const tc_axis *pa = &g->axes[t->loop[i]], *ca = &g->axes[c->loop[i]];
    bool pp = pa->ptype != TC_SERIAL && pa->ptype != TC_UNROLL;
    bool cp = ca->ptype != TC_SERIAL && ca->ptype != TC_UNROLL;
    if (pa->reduction) {
      st = tc_tensor_fail(t, TC_ERR_SCHEDULE, call,
                          "cannot inline %s at position %d: its loop axis %d (%s) is a reduction "
                          "axis, and %s is complete only after the loop over it, so its consumer %s "
                          "cannot share that loop; inline %s at position %d or less",
                          t->name, pos, i, tc_axis_describe(g, t->loop[i], b1, sizeof b1), t->name,
                          c->name, t->name, i);
    } else if (!tc_axes_match(g, psig, t->loop[i], csig, c->loop[i])) {
      char why[400];
      conflicting_reader(t, c, csig, i, why, sizeof why);
      st = tc_tensor_fail(t, TC_ERR_SCHEDULE, call,
                          "cannot inline %s at position %d: its loop axis %d (%s) does not map to "
                          "axis %d (%s) of its consumer %s, which reads %s%s%s; %sinline %s at position "
                          "%d or less",
                          t->name, pos, i, tc_axis_describe(g, t->loop[i], b1, sizeof b1), i,
                          tc_axis_describe(g, c->loop[i], b2, sizeof b2), c->name, t->name,
                          c->def && c->def->kind == TC_OP_PERMUTE ? " permuted" : "", why,
                          why[0] ? "" : "give it the consumer's loop domain (tc_compute_at replays it) or ",
                          t->name, i);
    } else if ((pp || cp) && pa->ptype != ca->ptype) {
      st = tc_tensor_fail(t, TC_ERR_SCHEDULE, call,
                          "cannot inline %s at position %d: its loop axis %d is %s but the mapped axis of "
                          "its consumer %s is %s; parallelize both alike (tc_parallelize_all_like) or "
                          "inline %s at position %d or less",
                          t->name, pos, i, tc_ptype_name(pa->ptype), c->name, tc_ptype_name(ca->ptype),
                          t->name, i);
    } else if (pa->ptype == TC_VECTORIZE) {
      st = tc_tensor_fail(t, TC_ERR_SCHEDULE, call,
                          "cannot inline %s at position %d: loop axis %d is vectorized and a vectorized "
                          "axis must stay inside its own op", t->name, pos, i);
    }
  }
  free(psig), free(csig);
  return st;
}

static tc_status inline_at(tc_tensor *t, int pos, const char *call) {
  tc_status st = tc_tensor_check_computed(t, call);
  if (st) return st;
  int p = tc_norm_pos(pos, t->nloop);
  if (p < 0)
    return tc_tensor_fail(t, TC_ERR_ARGUMENT, call, "position %d is outside 0..%d for %s", pos,
                           t->nloop, t->name);
  tc_op *cons[64];
  int nc = tc_consumers(t->f, t, cons, 64);
  if (nc == 0 && p > 0)
    return tc_tensor_fail(t, TC_ERR_SCHEDULE, call, "%s has no consumer to inline into", t->name);
  for (int i = 0; i < nc && i < 64; i++) {
    st = tc_check_inline(t, cons[i]->out, p, call);
    if (st) return st;
  }
  t->ca_pos = p;
  return TC_OK;
}

tc_status tc_inline_at(tc_tensor *t, int pos) { return inline_at(t, pos, "tc_inline_at"); }

/* Gives dst the loop transforms of src.  dst's logical axis j stands for
 * src's logical axis src_of[j] (NULL: j), as the ops between them say (a
 * permute reorders them); every logical axis of src needs one. */
/* A copy, or an op of a matmul operand's prologue (src/ir/matmul.c):
 * elementwise, of one tensor operand. */
static bool feeds_through(const tc_op *d) {
  return d->kind == TC_OP_SET || d->kind == TC_OP_CAST || d->kind == TC_OP_UNARY ||
         (d->kind == TC_OP_BINARY && d->has_scalar && !d->scalar_in);
}

/* Whether t is a matmul's operand, or copied (tc_cache_after) into one,
 * or the input of a prologue op on the way to one. */
static bool feeds_matmul(const tc_tensor *t, int depth) {
  tc_op *rd[64];
  int nrd = tc_consumers(t->f, t, rd, 64);
  bool r = false;
  for (int k = 0; k < nrd && k < 64 && !r; k++)
    r = rd[k]->kind == TC_OP_MATMUL ||
        (feeds_through(rd[k]) && depth < 16 && feeds_matmul(rd[k]->out, depth + 1));
  return r;
}

/* Whether t's logical axis j is one a broadcast made (a new axis of a
 * TC_OP_BROADCAST, through copies and elementwise ops of one operand):
 * such an axis stands for no data, whatever its extent. */
static bool broadcast_axis(const tc_tensor *t, int j) {
  for (int depth = 0; t && t->def && depth < 16; depth++) {
    const tc_op *d = t->def;
    if (d->kind == TC_OP_BROADCAST) return j < d->out->nlogical && d->perm[j] < 0;
    if (!feeds_through(d) || d->in[0]->nlogical != t->nlogical) return false;
    t = d->in[0];
  }
  return false;
}

tc_status tc_replay_like(tc_tensor *dst, const tc_tensor *src, const int *src_of, const char *call) {
  tc_fusion *f = dst->f;
  tc_dgraph *g = &f->g;
  if (dst->nlogical != src->nlogical)
    return tc_tensor_fail(dst, TC_ERR_SCHEDULE, call, "%s has rank %d but %s has rank %d", dst->name,
                           dst->nlogical, src->name, src->nlogical);
  int counterpart[16], bcast[16];
  for (int i = 0; i < src->nlogical; i++) {
    counterpart[i] = bcast[i] = -1;
    const tc_axis *sa = &g->axes[src->logical[i]];
    for (int j = 0; j < dst->nlogical && counterpart[i] < 0 && bcast[i] < 0; j++) {
      const tc_axis *da = &g->axes[dst->logical[j]];
      int from = src_of ? src_of[j] : j;
      /* (-1: an axis no op relates to src's, such as a gathered one: it can
       * only stand for src's axis where it has extent 1) */
      if (from != i && !(from < 0 && tc_logical_extent(dst, j) == 1 && j == i)) continue;
      /* (an axis a broadcast made is broadcast, also where src's axis, a
       * real one, has extent 1 too: it takes none of src's splits, which
       * would make its tiles as large as src's) */
      if (from == i && da->extent == sa->extent &&
          !(sa->extent == 1 && broadcast_axis(dst, j) && !broadcast_axis(src, i)))
        counterpart[i] = dst->logical[j];
      else if (tc_logical_extent(dst, j) == 1) bcast[i] = dst->logical[j];
    }
    if (counterpart[i] < 0 && bcast[i] < 0)
      return tc_tensor_fail(dst, TC_ERR_SCHEDULE, call,
                             "%s's logical axis %d (extent %lld) has no counterpart in %s", src->name, i,
                             (long long)sa->extent, dst->name);
  }
  /* A matmul's operand (extent 1 along N or M; or a copy of it) takes all of src's
   * transforms: its axis of extent 1 is broadcast to src's extent first
   * (tc_dg_broadcast; the operand ignores its value), so that it can be
   * computed inside the accumulator's loops over M, N and K alike. */
  bool has_matmul = false;
  for (int i = 0; i < f->nops && !has_matmul; i++) has_matmul = f->ops[i]->kind == TC_OP_MATMUL;
  bool bview = false; /* a broadcast view, such as a bias of the matmul's epilogue */
  for (int j = 0; j < dst->nlogical && !bview; j++) bview = broadcast_axis(dst, j);
  bool expand = has_matmul && (feeds_matmul(dst, 0) || bview);
  for (int i = 0; expand && i < src->nlogical; i++) {
    if (counterpart[i] < 0 && bcast[i] >= 0 && g->axes[bcast[i]].extent == 1 &&
        !tc_dg_broadcast(g, bcast[i], g->axes[src->logical[i]].extent, &counterpart[i], NULL))
      bcast[i] = -1;
  }
  int *hist = tc_xmalloc((size_t)(g->nxf + 1) * sizeof(int));
  int nh = tc_dg_history(g, src->logical, src->nlogical, src->loop, src->nloop, hist);
  /* An axis along which dst broadcasts (extent 1 where src has n) takes
   * none of src's transforms of it: dst keeps it whole, in the loop
   * position of the first of src's loop axes made from it.  bm[a] (for
   * src's axes): the broadcast axes (bit i: src's logical axis i) that
   * src's axis a is made from.  A transform of broadcast axes only makes
   * broadcast axes; a merge of a broadcast axis with another axis stands,
   * in dst, for that other axis (merged with extent 1); the other
   * transforms are replayed on dst's counterparts, one at a time. */
  int nsrc = g->naxes;
  uint32_t *bm = tc_xcalloc((size_t)nsrc + 1, sizeof *bm);
  for (int i = 0; i < src->nlogical; i++)
    if (bcast[i] >= 0) bm[src->logical[i]] = 1u << i;
  int *map = tc_xmalloc((size_t)g->naxes * sizeof(int));
  for (int i = 0; i < g->naxes; i++) map[i] = -1;
  for (int i = 0; i < src->nlogical; i++)
    if (counterpart[i] >= 0) map[src->logical[i]] = counterpart[i];
  TC_STR_LOCAL(err);
  tc_status st = TC_OK;
  for (int h = 0; h < nh && !st; h++) {
    tc_xform x = g->xf[hist[h]]; /* copy: replaying may move the array */
    uint32_t m = 0;
    int mapped = -1, nmapped = 0;
    for (int k = 0; k < x.nin; k++) {
      m |= bm[x.in[k]];
      if (map[x.in[k]] >= 0) mapped = x.in[k], nmapped++;
    }
    if (nmapped == x.nin) {
      if (tc_dg_replay(g, &hist[h], 1, &map, &err))
        st = tc_tensor_fail(dst, TC_ERR_SCHEDULE, call, "cannot replay %s's transforms on %s: %s", src->name,
                             dst->name, tc_str_cstr(&err));
    } else if (x.kind == TC_XF_MERGE && nmapped == 1) {
      map[x.out[0]] = map[mapped];
    }
    for (int k = 0; k < x.nout; k++) bm[x.out[k]] |= m;
  }
  if (!st) {
    int *loop = tc_xmalloc((size_t)(src->nloop + src->nlogical) * sizeof(int)), nl = 0;
    uint32_t placed = 0;
    for (int i = 0; i < src->nloop && !st; i++) {
      int a = src->loop[i];
      for (int b = 0; b < src->nlogical; b++)
        if ((bm[a] & ~placed) >> b & 1) loop[nl++] = bcast[b], placed |= 1u << b;
      if (map[a] >= 0) loop[nl++] = map[a];
      else if (!bm[a])
        st = tc_tensor_fail(dst, TC_ERR_SCHEDULE, call, "%s's loop axis %d does not derive from its logical domain",
                             src->name, i);
    }
    if (st) {
      free(loop);
    } else {
      free(dst->loop);
      dst->loop = loop, dst->nloop = nl;
      if (dst->ca_pos > dst->nloop) dst->ca_pos = dst->nloop;
    }
  }
  free(hist), free(map), free(bm);
  return st;
}

tc_status tc_compute_at(tc_tensor *producer, tc_tensor *consumer, int pos) {
  tc_status st = tc_tensor_check_computed(producer, "tc_compute_at");
  if (st) return st;
  bool reads = false;
  for (int k = 0; consumer->def && k < consumer->def->nin; k++) reads |= consumer->def->in[k] == producer;
  if (!reads)
    return tc_tensor_fail(producer, TC_ERR_SCHEDULE, "tc_compute_at", "%s does not read %s",
                           consumer->name, producer->name);
  int p = tc_norm_pos(pos, consumer->nloop);
  if (p < 0)
    return tc_tensor_fail(consumer, TC_ERR_ARGUMENT, "tc_compute_at", "position %d is outside 0..%d for %s",
                           pos, consumer->nloop, consumer->name);
  /* on failure the producer keeps its old loop domain */
  int *old = tc_xmalloc((size_t)producer->nloop * sizeof(int)), nold = producer->nloop;
  memcpy(old, producer->loop, (size_t)nold * sizeof(int));
  int old_ca = producer->ca_pos;
  int pos_in[16], cons_of[16];
  tc_edge_positions(producer, consumer, pos_in);
  for (int j = 0; j < consumer->nlogical; j++) cons_of[pos_in[j]] = j;
  st = tc_replay_like(producer, consumer, cons_of, "tc_compute_at");
  /* and its old parallel types: the replay may keep axes of the old loop
   * domain (those no transform made), whose types change below */
  tc_dgraph *g = &producer->f->g;
  int n = !st && p < producer->nloop ? p : !st ? producer->nloop : 0;
  tc_ptype *old_pt = tc_xmalloc(((size_t)n + 1) * sizeof *old_pt);
  for (int i = 0; i < n; i++) old_pt[i] = g->axes[producer->loop[i]].ptype;
  if (!st) {
    /* the shared loops are the consumer's: they run with its parallel types */
    for (int i = 0; i < n; i++)
      if (g->axes[consumer->loop[i]].ptype != TC_VECTORIZE)
        g->axes[producer->loop[i]].ptype = g->axes[consumer->loop[i]].ptype;
    st = inline_at(producer, p, "tc_compute_at");
    if (st)
      for (int i = n - 1; i >= 0; i--) g->axes[producer->loop[i]].ptype = old_pt[i];
  }
  free(old_pt);
  if (st) {
    free(producer->loop);
    producer->loop = old, producer->nloop = nold, producer->ca_pos = old_ca;
  } else {
    free(old);
  }
  return st;
}

/* The deepest position t can be inlined at into all its consumers. */
static int max_inline_pos(const tc_tensor *t) {
  tc_op *cons[64];
  int nc = tc_consumers(t->f, t, cons, 64);
  if (nc == 0 || nc > 64) return 0;
  const tc_dgraph *g = &t->f->g;
  int p = t->nloop;
  for (int i = 0; i < p; i++)
    if (g->axes[t->loop[i]].ptype == TC_VECTORIZE) p = i;
  for (int k = 0; k < nc; k++) {
    const tc_tensor *c = cons[k]->out;
    uint64_t *psig, *csig;
    tc_edge_sigs(t, c, &psig, &csig);
    for (int i = 0; i < p; i++) {
      const tc_axis *pa = &g->axes[t->loop[i]], *ca;
      bool ok = i < c->nloop;
      if (ok) {
        ca = &g->axes[c->loop[i]];
        bool pp = pa->ptype != TC_SERIAL && pa->ptype != TC_UNROLL;
        bool cp = ca->ptype != TC_SERIAL && ca->ptype != TC_UNROLL;
        ok = tc_axes_match(g, psig, t->loop[i], csig, c->loop[i]) && !((pp || cp) && pa->ptype != ca->ptype);
      }
      if (!ok) p = i;
    }
    free(psig), free(csig);
  }
  return p;
}

/* reach[a * n + b] = 1 where tensor b is computed from tensor a (n =
 * f->ntensors): a search from each tensor along the ops' edges. */
static void reachability(const tc_fusion *f, char *reach) {
  int n = f->ntensors, ne = 0;
  int *from = tc_xmalloc((size_t)(2 * f->nops + 1) * sizeof(int)), *to = tc_xmalloc((size_t)(2 * f->nops + 1) * sizeof(int));
  for (int o = 0; o < f->nops; o++)
    for (int k = 0; k < f->ops[o]->nin && k < 2; k++) from[ne] = f->ops[o]->in[k]->id, to[ne++] = f->ops[o]->out->id;
  int *stack = tc_xmalloc(((size_t)n + 1) * sizeof(int));
  for (int a = 0; a < n; a++) {
    char *r = reach + (size_t)a * (size_t)n;
    int sp = 0;
    stack[sp++] = a;
    while (sp) {
      int t = stack[--sp];
      for (int e = 0; e < ne; e++)
        if (from[e] == t && !r[to[e]]) r[to[e]] = 1, stack[sp++] = to[e];
    }
  }
  free(from), free(to), free(stack);
}

static bool is_loop_axis(const tc_dgraph *g, const tc_tensor *t, int p) {
  tc_ptype pt = g->axes[t->loop[p]].ptype;
  return !tc_ptype_is_block(pt) && !tc_ptype_is_thread(pt);
}

/* Whether the statements of the tensors with a loop axis in loop class
 * id (in[]) can be ordered: no tensor outside the loop both reads from a
 * tensor in it and is read by one (it would have to run after the loop
 * and before it), and no reduction whose reduction loop it is feeds a
 * tensor in it (that one needs the finished result).  reach[a * n + b]:
 * b is computed from a. */
static bool loop_orderable(const tc_fusion *f, const char *reach, const char *in, int id, int *uf,
                           const int *base) {
  const tc_dgraph *g = &f->g;
  int n = f->ntensors;
  for (int y = 0; y < n; y++) {
    const tc_tensor *t = f->tensors[y];
    bool before = false, after = false, red_loop = false;
    for (int q = 0; tc_op_reduces(t->def) && q < t->nloop; q++)
      red_loop |= g->axes[t->loop[q]].reduction && is_loop_axis(g, t, q) && tc_uf_find(uf, base[y] + q) == id;
    if (in[y] && !red_loop) continue;
    for (int a = 0; a < n && !red_loop; a++) before |= in[a] && reach[a * n + y];
    for (int d = 0; d < n; d++) after |= in[d] && reach[y * n + d];
    if (after && (before || red_loop)) return false;
  }
  return true;
}

/* One pass of keep_loops_orderable; whether it lowered a position. */
static bool keep_loops_orderable_once(tc_fusion *f) {
  const tc_dgraph *g = &f->g;
  int n = f->ntensors, *base = tc_xmalloc(((size_t)n + 1) * sizeof(int));
  base[0] = 0;
  for (int i = 0; i < n; i++) base[i + 1] = base[i] + f->tensors[i]->nloop;
  int *uf = tc_xmalloc(((size_t)base[n] + 1) * sizeof(int));
  for (int i = 0; i < base[n]; i++) uf[i] = i;
  /* loop identities as the lowering makes them: a tensor inlined at p
   * shares its loop axes [0, p) with each consumer's */
  for (int i = 0; i < n; i++) {
    const tc_tensor *t = f->tensors[i];
    tc_op *cons[64];
    int nc = t->ca_pos ? tc_consumers(f, t, cons, 64) : 0;
    for (int k = 0; k < nc && k < 64; k++)
      for (int p = 0; p < t->ca_pos && p < cons[k]->out->nloop; p++)
        tc_uf_union(uf, base[t->id] + p, base[cons[k]->out->id] + p);
  }
  char *reach = tc_xcalloc((size_t)n * (size_t)n + 1, 1), *in = tc_xmalloc((size_t)n + 1);
  reachability(f, reach);
  bool lowered = false;
  for (int k = 0; k < base[n] && !lowered; k++) {
    int id = tc_uf_find(uf, k);
    if (id != k) continue; /* each loop once, at its representative */
    memset(in, 0, (size_t)n + 1);
    int members = 0;
    for (int t = 0; t < n; t++)
      for (int p = 0; p < f->tensors[t]->nloop; p++)
        if (is_loop_axis(g, f->tensors[t], p) && tc_uf_find(uf, base[t] + p) == id) in[t] = 1, members++;
    if (members < 2 || loop_orderable(f, reach, in, id, uf, base)) continue;
    /* keep the tensors read on two sides out of that loop */
    for (int t = 0; t < n; t++) {
      tc_tensor *x = f->tensors[t];
      if (tc_consumers(f, x, NULL, 0) < 2) continue;
      for (int p = 0; p < x->ca_pos; p++)
        if (tc_uf_find(uf, base[t] + p) == id) {
          x->ca_pos = p;
          lowered = true;
          break;
        }
    }
  }
  free(base), free(uf), free(reach), free(in);
  return lowered;
}

/* Inlining joins loops: a tensor inlined at p runs in the loops [0, p)
 * of each consumer.  With broadcasts and reductions that can join a loop
 * that no order of the statements runs: a tensor outside it between two
 * inside it (a reduction's result read back, broadcast, where its
 * operand is computed), or a reduction's own reduction loop shared with
 * an op computed from the result.  The tensors that join such a loop are
 * read on two sides (one path of consumers to each): inline them only
 * up to that loop, as nvFuser keeps a normalization's persistent input
 * out of its reduction loop. */
static void keep_loops_orderable(tc_fusion *f) {
  while (keep_loops_orderable_once(f)) {
  }
}

tc_status tc_inline_most(tc_fusion *f) {
  tc_clear_error(f);
  for (int i = 0; i < f->ntensors; i++) {
    tc_tensor *t = f->tensors[i];
    if (t->is_input) continue;
    t->ca_pos = max_inline_pos(t);
  }
  keep_loops_orderable(f);
  return TC_OK;
}

tc_status tc_inline_all_at(tc_fusion *f, int pos) {
  tc_clear_error(f);
  for (int i = 0; i < f->ntensors; i++) {
    tc_tensor *t = f->tensors[i];
    if (t->is_input || tc_consumers(f, t, NULL, 0) == 0) continue;
    tc_status st = tc_inline_at(t, pos < 0 ? pos : (pos < t->nloop ? pos : t->nloop));
    if (st) return st;
  }
  return TC_OK;
}

tc_status tc_set_tmem_dimsep(tc_tensor *t, int pos) {
  tc_status st = tc_tensor_check_computed(t, "tc_set_tmem_dimsep");
  if (st) return st;
  if (t->mem != TC_MEM_TENSOR)
    return tc_tensor_fail(t, TC_ERR_SCHEDULE, "tc_set_tmem_dimsep",
                           "%s is in %s memory; the dim-sep position applies to tensor memory only "
                           "(tc_set_memory_type(t, TC_MEM_TENSOR) first)", t->name, tc_memtype_name(t->mem));
  int n = t->alloc_set ? t->nalloc : t->nloop;
  int p = tc_norm_pos(pos, n);
  if (p < 0)
    return tc_tensor_fail(t, TC_ERR_ARGUMENT, "tc_set_tmem_dimsep",
                           "position %d is outside 0..%d for %s's allocation domain", pos, n, t->name);
  t->tmem_dimsep = p;
  return TC_OK;
}

tc_status tc_set_alloc_to_loop(tc_tensor *t) {
  tc_status st = tc_tensor_check_computed(t, "tc_set_alloc_to_loop");
  if (st) return st;
  if (t->mem == TC_MEM_GLOBAL)
    return tc_tensor_fail(t, TC_ERR_SCHEDULE, "tc_set_alloc_to_loop",
                           "%s is in global memory, which is laid out row-major by its logical domain", t->name);
  tc_tensor_set_alloc(t, t->loop, t->nloop);
  return TC_OK;
}

/* A Welford state's three values are read only by the ops tc_welford
 * made; a copy of it would carry the mean alone.  Refused with a message
 * (true) for such a tensor and for a scalar input. */
static bool refuse_welford(tc_tensor *t, const char *call) {
  if (t->is_scalar) { /* nor is a scalar input (its readers take it by value) */
    tc_tensor_fail(t, TC_ERR_SCHEDULE, call, "%s is the scalar input %s, a kernel parameter passed "
                   "by value; there is nothing to cache", t->name, t->label);
    return true;
  }
  if (!tc_tensor_is_welford(t)) return false;
  tc_tensor_fail(t, TC_ERR_SCHEDULE, call, "%s is a Welford state (mean, M2 and count in registers) "
                 "and cannot be copied; cache the mean or the variance tc_welford returned", t->name);
  return true;
}

tc_tensor *tc_cache_after(tc_tensor *t) {
  tc_fusion *f = t->f;
  tc_clear_error(f);
  if (refuse_welford(t, "tc_cache_after")) return NULL;
  tc_tensor *c = tc_tensor_like(f, t, NULL, t->dtype);
  for (int i = 0; i < f->nops; i++) {
    tc_op *op = f->ops[i];
    for (int k = 0; k < op->nin; k++)
      if (op->in[k] == t) op->in[k] = c;
  }
  tc_op_new(f, TC_OP_SET, 0, t, NULL, c);
  if (!t->is_input && tc_replay_like(c, t, NULL, "tc_cache_after")) return NULL;
  return c;
}

/* tc_cache_before of a reduction's result t: the reduction moves to the
 * new tensor c (with t's reduction axes), and t becomes a copy of c with
 * the shape its consumers see (extent 1 where c reduces).  Before any
 * schedule of t, whose loop axes would not exist on c. */
static tc_tensor *cache_before_reduction(tc_tensor *t) {
  tc_fusion *f = t->f;
  bool plain = t->nloop == t->nlogical && t->ca_pos == 0 && !t->alloc_set;
  for (int i = 0; plain && i < t->nloop; i++) plain = t->loop[i] == t->logical[i];
  if (!plain) {
    tc_tensor_fail(t, TC_ERR_SCHEDULE, "tc_cache_before",
                   "%s is a reduction's result and is already scheduled; call tc_cache_before on "
                   "it before scheduling it", t->name);
    return NULL;
  }
  int64_t shape[16];
  for (int i = 0; i < t->nlogical; i++) shape[i] = f->g.axes[t->logical[i]].extent;
  tc_tensor *c = tc_tensor_new(f, t->dtype, t->nlogical, shape);
  for (int i = 0; i < t->nlogical; i++)
    if (f->g.axes[t->logical[i]].reduction) {
      c->logical[i] = c->loop[i] = tc_dg_root_reduction(&f->g, shape[i], i);
      t->logical[i] = t->loop[i] = tc_dg_root(&f->g, 1, i);
    }
  tc_op *def = t->def;
  def->out = c;
  c->def = def;
  tc_op_new(f, TC_OP_SET, 0, c, NULL, t);
  return c;
}

tc_tensor *tc_cache_before(tc_tensor *t) {
  tc_fusion *f = t->f;
  tc_clear_error(f);
  if (t->is_input || !t->def) {
    tc_tensor_fail(t, TC_ERR_SCHEDULE, "tc_cache_before", "%s is a fusion input and has no definition to cache", t->name);
    return NULL;
  }
  if (refuse_welford(t, "tc_cache_before")) return NULL;
  if (tc_tensor_is_reduction(t)) return cache_before_reduction(t);
  tc_tensor *c = tc_tensor_like(f, t, NULL, t->dtype);
  tc_op *def = t->def;
  def->out = c;
  c->def = def;
  tc_op_new(f, TC_OP_SET, 0, c, NULL, t);
  if (tc_replay_like(c, t, NULL, "tc_cache_before")) return NULL;
  return c;
}

tc_status tc_propagate_transforms(tc_tensor *ref) {
  tc_status st = tc_tensor_check_computed(ref, "tc_propagate_transforms");
  if (st) return st;
  tc_fusion *f = ref->f;
  int *pos = tc_ref_positions(f, ref);
  for (int i = 0; i < f->ntensors && !st; i++) {
    tc_tensor *t = f->tensors[i];
    if (t == ref || t->is_input) continue;
    st = tc_replay_like(t, ref, pos + t->id * 16, "tc_propagate_transforms");
  }
  free(pos);
  return st;
}

tc_status tc_parallelize_all_like(tc_tensor *ref) {
  tc_status st = tc_tensor_check_computed(ref, "tc_parallelize_all_like");
  if (st) return st;
  tc_fusion *f = ref->f;
  tc_dgraph *g = &f->g;
  int *pos = tc_ref_positions(f, ref);
  uint64_t *rsig = tc_tensor_sigs(ref, NULL);
  for (int i = 0; i < f->ntensors; i++) {
    tc_tensor *t = f->tensors[i];
    if (t == ref || t->is_input || pos[t->id * 16] < 0) continue;
    uint64_t *tsig = tc_tensor_sigs(t, pos + t->id * 16);
    for (int a = 0; a < t->nloop; a++)
      for (int r = 0; r < ref->nloop; r++)
        if (tc_axes_match(g, rsig, ref->loop[r], tsig, t->loop[a]))
          g->axes[t->loop[a]].ptype = g->axes[ref->loop[r]].ptype;
    free(tsig);
  }
  free(pos), free(rsig);
  return TC_OK;
}

/* ---- loop and allocation domains from axes of the tensor's graph ------- */

int tc_tensor_loop_axis(const tc_tensor *t, int pos) {
  int a = tc_norm_axis(pos, t->nloop);
  return a < 0 ? -1 : t->loop[a];
}

int tc_tensor_nalloc(const tc_tensor *t) { return t->alloc_set ? t->nalloc : t->nloop; }

int tc_tensor_alloc_axis(const tc_tensor *t, int pos) {
  const int *ax = t->alloc_set ? t->alloc : t->loop;
  int a = tc_norm_axis(pos, tc_tensor_nalloc(t));
  return a < 0 ? -1 : ax[a];
}

/* Checks that axes[0..n) can be a domain of t: axes of t's own graph (made
 * from its logical domain), each once, that together determine every
 * logical axis (so the walk from them reaches the logical domain) and none
 * of which is determined by the others (which would visit or store an
 * element more than once).  With from_logical, each axis must also be
 * computable forward from the logical domain (an allocation domain is
 * indexed that way). */
static tc_status check_domain(const tc_tensor *t, int n, const int *axes, bool from_logical,
                              const char *call) {
  const tc_dgraph *g = &t->f->g;
  if (n < 1 || n > 64 || !axes)
    return tc_tensor_fail(t, TC_ERR_ARGUMENT, call, "a domain needs 1 to 64 axes, got %d%s", n,
                           n >= 1 && !axes ? " and no array" : "");
  char *is_of = tc_xcalloc((size_t)g->naxes + 1, 1);
  tc_axes_derived_from(g, t->logical, t->nlogical, is_of);
  tc_status st = TC_OK;
  for (int i = 0; i < n && !st; i++) {
    if (axes[i] < 0 || axes[i] >= g->naxes)
      st = tc_tensor_fail(t, TC_ERR_ARGUMENT, call, "entry %d: %d is not an axis of the fusion", i, axes[i]);
    else if (!is_of[axes[i]])
      st = tc_tensor_fail(t, TC_ERR_SCHEDULE, call,
                           "entry %d (axis %d) is not an axis of %s: it does not derive from %s's logical "
                           "domain (schedule an abstract tensor made from %s)",
                           i, axes[i], t->name, t->name, t->name);
    for (int j = 0; j < i && !st; j++)
      if (axes[j] == axes[i])
        st = tc_tensor_fail(t, TC_ERR_ARGUMENT, call, "entries %d and %d are the same axis", j, i);
  }
  free(is_of);
  if (st) return st;
  char b[64];
  if (!tc_axes_determine(g, axes, n, -1, t->logical, t->nlogical))
    return tc_tensor_fail(t, TC_ERR_SCHEDULE, call,
                           "the %d axes do not determine all of %s's logical axes (an axis of the domain is "
                           "missing, e.g. one output of a split)", n, t->name);
  for (int i = 0; i < n; i++) {
    if (from_logical && !tc_axes_determine(g, t->logical, t->nlogical, -1, &axes[i], 1))
      return tc_tensor_fail(t, TC_ERR_SCHEDULE, call,
                             "entry %d (%s) cannot be computed from %s's logical domain", i,
                             tc_axis_describe(g, axes[i], b, sizeof b), t->name);
    if (tc_axes_determine(g, axes, n, i, &axes[i], 1))
      return tc_tensor_fail(t, TC_ERR_SCHEDULE, call,
                             "entry %d (%s) is determined by the other entries, so the domain would cover "
                             "elements more than once", i, tc_axis_describe(g, axes[i], b, sizeof b));
  }
  return TC_OK;
}

tc_status tc_set_loop_domain(tc_tensor *t, int n, const int *axes) {
  tc_status st = tc_tensor_check_computed(t, "tc_set_loop_domain");
  if (st) return st;
  st = check_domain(t, n, axes, false, "tc_set_loop_domain");
  if (st) return st;
  free(t->loop);
  t->loop = tc_xmalloc((size_t)n * sizeof(int));
  memcpy(t->loop, axes, (size_t)n * sizeof(int));
  t->nloop = n;
  if (t->ca_pos > n) t->ca_pos = n;
  return TC_OK;
}

tc_status tc_set_alloc_domain(tc_tensor *t, int n, const int *axes) {
  tc_status st = tc_tensor_check_computed(t, "tc_set_alloc_domain");
  if (st) return st;
  if (t->mem == TC_MEM_GLOBAL)
    return tc_tensor_fail(t, TC_ERR_SCHEDULE, "tc_set_alloc_domain",
                           "%s is in global memory, which is laid out row-major by its logical domain", t->name);
  st = check_domain(t, n, axes, true, "tc_set_alloc_domain");
  if (st) return st;
  tc_tensor_set_alloc(t, axes, n);
  return TC_OK;
}
