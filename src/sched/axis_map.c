/* axis_map.c - which axes of two tensors iterate the same way.
 *
 * An op says how its output's logical axes read its inputs' (pointwise
 * ops: the same position; a permute: its permutation, tc_op_in_axis).
 * Comparing loop axes across tensors signs each tensor's axes from its
 * logical axes in common terms: the roots of both get the signature of
 * the same reference position (tc_dg_sigs_from), so two axes match only
 * when they are made the same way from logical axes the ops connect.
 * Extents and axis signatures alone cannot say this: in x + transpose(x)
 * with equal extents both axes of x look alike. */
#include <stdlib.h>

#include "sched.h"

/* salt: sign t's reduction axes apart from iteration axes, as its
 * consumers see them (a reduction axis never iterates as the axis a
 * consumer reads); its producers and tensors scheduled alike see the
 * reduction axis as the axis it reduces. */
static uint64_t *sigs(const tc_tensor *t, const int *pos, bool salt) {
  const tc_dgraph *g = &t->f->g;
  uint64_t roots[64];
  for (int i = 0; i < t->nlogical; i++) {
    const tc_axis *a = &g->axes[t->logical[i]];
    roots[i] = (salt && a->reduction ? tc_dg_root_rsig : tc_dg_root_sig)(a->extent, pos ? pos[i] : i);
  }
  /* an axis of extent 1 broadcast to n in t's loop domain (a matmul's
   * operand) iterates as an axis of n at its position does */
  int rax[64], nr = t->nlogical;
  for (int i = 0; i < t->nlogical; i++) rax[i] = t->logical[i];
  for (int x = 0; x < g->nxf && nr < 64; x++) {
    const tc_xform *xf = &g->xf[x];
    if (xf->kind != TC_XF_BROADCAST) continue;
    for (int i = 0; i < t->nlogical && nr < 64; i++)
      if (xf->in[0] == t->logical[i] && g->axes[t->logical[i]].extent == 1) {
        rax[nr] = xf->out[0];
        roots[nr++] = tc_dg_root_sig(g->axes[xf->out[0]].extent, pos ? pos[i] : i);
      }
  }
  uint64_t *sig = tc_xmalloc(((size_t)g->naxes + 1) * sizeof *sig);
  tc_dg_sigs_from(g, rax, roots, nr, sig);
  return sig;
}

uint64_t *tc_tensor_sigs(const tc_tensor *t, const int *pos) { return sigs(t, pos, false); }

void tc_edge_positions(const tc_tensor *producer, const tc_tensor *consumer, int *pos) {
  const tc_op *op = consumer->def;
  bool reads = false;
  for (int k = 0; op && k < op->nin; k++) reads |= op->in[k] == producer;
  int k = 0;
  while (op && k < op->nin && op->in[k] != producer) k++;
  for (int j = 0; j < consumer->nlogical; j++) {
    pos[j] = reads ? tc_op_in_axis(op, j) : j;
    /* a gathered axis reads the producer at data-decided positions: a
     * position no axis of the producer has, so nothing matches it */
    if (reads && (tc_op_axis_gathered(op, k, j) || pos[j] < 0)) pos[j] = 16 + j;
  }
}

void tc_edge_sigs(const tc_tensor *producer, const tc_tensor *consumer, uint64_t **psig,
                  uint64_t **csig) {
  int pos[16];
  tc_edge_positions(producer, consumer, pos);
  *psig = sigs(producer, NULL, true);
  *csig = sigs(consumer, pos, false);
}

bool tc_axes_match(const tc_dgraph *g, const uint64_t *sa, int a, const uint64_t *sb, int b) {
  return sa[a] != 0 && sa[a] == sb[b] && g->axes[a].extent == g->axes[b].extent;
}

/* Gives tensor id `to` the reference positions through op from tensor
 * `from` (the op's output or one of its inputs). */
static void through_op(const tc_op *op, int from, int to, int *pos) {
  const int *pf = pos + from * 16;
  int *pt = pos + to * 16;
  const tc_tensor *out = op->out;
  int k = 0;
  while (k < op->nin && op->in[k]->id != (from == out->id ? to : from)) k++;
  for (int j = 0; j < out->nlogical; j++) {
    int in_axis = tc_op_in_axis(op, j);
    if (tc_op_axis_gathered(op, k, j) || in_axis < 0) continue; /* no axis iterates with it */
    if (from == out->id) pt[in_axis] = pf[j];
    else pt[j] = pf[in_axis];
  }
}

/* Reference positions by position: where t has ref's rank and extents. */
static bool seed(const tc_fusion *f, const tc_tensor *ref, const tc_tensor *t, int *pt) {
  if (t->nlogical != ref->nlogical) return false;
  for (int i = 0; i < t->nlogical; i++)
    if (tc_logical_extent(t, i) != tc_logical_extent(ref, i)) return false;
  for (int i = 0; i < t->nlogical; i++) pt[i] = i;
  return true;
}


int *tc_ref_positions(const tc_fusion *f, const tc_tensor *ref) {
  int n = f->ntensors;
  int *pos = tc_xmalloc(((size_t)n * 16 + 1) * sizeof *pos);
  for (int i = 0; i < n * 16; i++) pos[i] = -1;
  char *seen = tc_xcalloc((size_t)n + 1, 1);
  /* three queues: computed tensors first, fusion inputs (which have no
   * loops to agree with) only when no computed tensor is left, and last
   * a reduction's result reached from an op that reads it: there its
   * reduced axes have extent 1 and the op says nothing of where they
   * are, while the reduction's own operand does (the axes it reduces) */
  int *q = tc_xmalloc(((size_t)n + 1) * sizeof *q), *qin = tc_xmalloc(((size_t)n + 1) * sizeof *qin);
  int qh = 0, qt = 0, ih = 0, it = 0, wh = 0, wt = 0;
  struct weak { const tc_op *op; int from, to; } *qw = tc_xmalloc(((size_t)f->nops * 2 + 1) * sizeof *qw);
  seed(f, ref, ref, pos + ref->id * 16);
  seen[ref->id] = 1;
  q[qt++] = ref->id;
  for (;;) {
    int t;
    if (qh < qt) t = q[qh++];
    else if (ih < it) t = qin[ih++];
    else if (wh < wt) {
      struct weak w = qw[wh++];
      if (seen[w.to]) continue;
      seen[w.to] = 1;
      through_op(w.op, w.from, w.to, pos);
      t = w.to;
    } else {
      /* a part of the fusion that no op connects to ref: by position */
      t = -1;
      for (int i = 0; i < n && t < 0; i++)
        if (!seen[i]) t = i;
      if (t < 0) break;
      seen[t] = 1;
      if (!seed(f, ref, f->tensors[t], pos + t * 16)) continue;
    }
    for (int o = 0; o < f->nops; o++) {
      const tc_op *op = f->ops[o];
      bool reads = false;
      for (int k = 0; k < op->nin; k++) reads |= op->in[k]->id == t;
      int next[3], nn = 0;
      if (op->out->id == t)
        for (int k = 0; k < op->nin; k++) next[nn++] = op->in[k]->id;
      if (reads) next[nn++] = op->out->id;
      for (int k = 0; k < nn; k++) {
        int u = next[k];
        if (seen[u]) continue;
        if (op->out->id == t && tc_tensor_is_reduction(f->tensors[u])) {
          if (wt < f->nops * 2) qw[wt++] = (struct weak){op, t, u};
          continue;
        }
        seen[u] = 1;
        through_op(op, t, u, pos);
        if (f->tensors[u]->is_input) qin[it++] = u;
        else q[qt++] = u;
      }
    }
  }
  free(seen), free(q), free(qin), free(qw);
  return pos;
}
