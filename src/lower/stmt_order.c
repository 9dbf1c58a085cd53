/* stmt_order.c - the order of a kernel's statements.
 *
 * Ops whose tensors share a loop (a compute-at position joins the outer
 * loop axes of a producer with those of its consumers) print inside one
 * loop node, so their statements must be adjacent at every depth of the
 * loop nest, and every op must come after the ops it reads.  The order
 * that the outputs were added in gives neither, so it is built here one
 * loop level at a time, the way nvFuser's expression sort merges the
 * expressions that share a loop nest prefix: the ops inside one loop (at
 * the root, all of them) fall into groups, one per next inner loop and
 * one per op with no further loop; the groups are sorted topologically by
 * the reads between their ops, ties going to the group that comes first
 * in the given order (so a given order that works is kept as it is); then
 * the ops of each inner loop are ordered the same way inside it.  A cycle
 * among the groups means an op outside a loop reads from an op inside it
 * and feeds another op inside it: no order runs that schedule. */
#include <stdlib.h>
#include <string.h>

#include "stmt_order.h"

typedef struct octx {
  tc_fusion *f;
  tc_op **ops;                /* as given */
  const tc_stmt_loops *loops; /* per op of ops */
  int *index_of;              /* tensor id -> index of the op making it, or -1 */
  int *level_pos;             /* op index -> position in the current level's set, or -1 */
  tc_op **out;
  int nout;
} octx;

/* The groups of one level: the ops set[0..m) inside a loop at depth d. */
typedef struct level {
  const int *set;
  int m, ng, depth;
  int *group;     /* per set position: its group */
  int *key;       /* per group: its loop's id, or -1 for a lone statement */
  char *edge;     /* ng x ng: group a must come before group b */
  int *from, *to; /* ng x ng: an op of a (index) that an op of b reads */
  int *indeg;     /* per group: edges from groups not yet placed */
  char *placed;
} level;

static void level_free(level *L) {
  free(L->group), free(L->key), free(L->edge), free(L->from), free(L->to), free(L->indeg),
      free(L->placed);
}

static void level_build(octx *c, level *L) {
  int m = L->m;
  L->group = tc_xmalloc((size_t)m * sizeof(int));
  L->key = tc_xmalloc((size_t)m * sizeof(int));
  L->ng = 0;
  for (int q = 0; q < m; q++) {
    const tc_stmt_loops *lp = &c->loops[L->set[q]];
    int key = lp->n > L->depth ? lp->id[L->depth] : -1, g = -1;
    for (int h = 0; h < L->ng && key >= 0 && g < 0; h++)
      if (L->key[h] == key) g = h;
    if (g < 0) L->key[g = L->ng++] = key;
    L->group[q] = g;
  }
  size_t ng = (size_t)L->ng;
  L->edge = tc_xcalloc(ng * ng, 1);
  L->from = tc_xmalloc(ng * ng * sizeof(int));
  L->to = tc_xmalloc(ng * ng * sizeof(int));
  L->indeg = tc_xcalloc(ng, sizeof(int));
  L->placed = tc_xcalloc(ng, 1);
  for (int q = 0; q < m; q++) c->level_pos[L->set[q]] = q;
  for (int q = 0; q < m; q++) {
    const tc_op *op = c->ops[L->set[q]];
    for (int k = 0; k < op->nin; k++) {
      int i = c->index_of[op->in[k]->id];
      if (i < 0 || c->level_pos[i] < 0) continue;
      int a = L->group[c->level_pos[i]], b = L->group[q];
      size_t e = (size_t)a * ng + (size_t)b;
      if (a == b || L->edge[e]) continue;
      L->edge[e] = 1, L->from[e] = i, L->to[e] = L->set[q];
      L->indeg[b]++;
    }
  }
  for (int q = 0; q < m; q++) c->level_pos[L->set[q]] = -1;
}

static const char *tname(const octx *c, int i) { return c->ops[i]->out->name; }

/* The error for a level whose unplaced groups all wait on each other.
 * Following an unplaced predecessor from group to group must come back to
 * a group: a cycle.  On it, some group is entered at an op (c) other than
 * the one it is left from (a) (else the ops alone would form a cycle), so
 * it holds two ops and is a loop: c reads x, outside the loop, which
 * must come after y (a read or a shared loop), outside it too, which
 * reads a. */
static tc_status cycle_error(octx *c, const level *L) {
  int ng = L->ng, *seen = tc_xmalloc((size_t)ng * sizeof(int)), *trail = tc_xmalloc((size_t)ng * sizeof(int));
  for (int h = 0; h < ng; h++) seen[h] = -1;
  int g = 0, steps = 0;
  while (L->placed[g]) g++;
  while (seen[g] < 0) {
    seen[g] = steps, trail[steps++] = g;
    int h = 0;
    while (L->placed[h] || !L->edge[(size_t)h * ng + g]) h++;
    g = h;
  }
  /* trail[k + 1] -> trail[k], and trail[seen[g]] -> trail[steps - 1] */
  int len = steps - seen[g], in = -1, out = -1, grp = -1;
  for (int j = 0; j < len && grp < 0; j++) {
    int cur = trail[seen[g] + j];
    int next = trail[seen[g] + (j == 0 ? len - 1 : j - 1)]; /* cur -> next */
    int prev = trail[seen[g] + (j == len - 1 ? 0 : j + 1)]; /* prev -> cur */
    size_t ei = (size_t)prev * ng + cur, eo = (size_t)cur * ng + next;
    if (L->to[ei] != L->from[eo]) grp = cur, in = (int)ei, out = (int)eo;
  }
  free(seen), free(trail);
  if (grp < 0) /* unreachable: the fusion's ops form no cycle */
    return tc_fail(c->f, TC_ERR_LOWER, "compile: internal error: the statements have no order");
  int ci = L->to[in], xi = L->from[in], ai = L->from[out], yi = L->to[out];
  int d = L->depth, p = c->loops[ci].pos[d];
  const tc_tensor *ct = c->ops[ci]->out;
  char ax[64];
  tc_str s;
  tc_str_init(&s);
  tc_str_printf(&s, "compile: %s and %s run in one loop (%s's loop axis %d, %s)", tname(c, ai),
                tname(c, ci), ct->name, p, tc_axis_describe(&c->f->g, ct->loop[p], ax, sizeof ax));
  if (xi == yi)
    tc_str_printf(&s, ", but %s, outside that loop, reads %s and is read by %s", tname(c, xi),
                  tname(c, ai), tname(c, ci));
  else
    tc_str_printf(&s, ", but %s, outside that loop, reads %s, and %s reads %s, which is outside "
                  "it too and must come after %s", tname(c, yi), tname(c, ai), tname(c, ci),
                  tname(c, xi), tname(c, yi));
  tc_str_printf(&s, ", so no order of the statements computes every tensor before it is read; "
                "compute %s inside that loop as well (tc_compute_at(%s, %s, %d))", tname(c, xi),
                tname(c, xi), ct->name, p + 1);
  if (xi != yi)
    tc_str_printf(&s, ", and where that is not enough the tensors from %s to it likewise", tname(c, yi));
  /* the tensors whose compute-at positions make the loop shared (the
   * first eight named) */
  const tc_tensor *join[8];
  int jpos[8], njoin = 0;
  for (int q = 0; q < L->m; q++) {
    int i = L->set[q];
    const tc_tensor *t = c->ops[i]->out;
    if (L->group[q] != grp || t->ca_pos <= c->loops[i].pos[d]) continue;
    if (njoin < 8) join[njoin] = t, jpos[njoin] = c->loops[i].pos[d];
    njoin++;
  }
  if (njoin) {
    int shown = njoin < 8 ? njoin : 8;
    tc_str_cat(&s, ", or inline ");
    for (int q = 0; q < shown; q++)
      tc_str_printf(&s, "%s%s", q == 0 ? "" : q == njoin - 1 ? " and " : ", ", join[q]->name);
    tc_str_cat(&s, njoin > 8 ? ", ... less deep (" : " less deep (");
    for (int q = 0; q < shown; q++)
      tc_str_printf(&s, "%stc_inline_at(%s, %d)", q ? ", " : "", join[q]->name, jpos[q]);
    tc_str_cat(&s, njoin > 8 ? ", ...) so that the loop is not shared" : ") so that the loop is not shared");
  }
  tc_status st = tc_fail(c->f, TC_ERR_SCHEDULE, "%s", tc_str_cstr(&s));
  tc_str_free(&s);
  return st;
}

/* Appends the ops set[0..m) (inside one loop at depth d; ascending
 * indices) to c->out in a legal order. */
static tc_status order_level(octx *c, const int *set, int m, int depth) {
  level L = {set, m, 0, depth, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  level_build(c, &L);
  tc_status st = TC_OK;
  int *sub = tc_xmalloc((size_t)m * sizeof(int));
  for (int placed = 0; placed < L.ng && !st; placed++) {
    int g = 0;
    while (g < L.ng && (L.placed[g] || L.indeg[g])) g++;
    if (g == L.ng) {
      st = cycle_error(c, &L);
      break;
    }
    L.placed[g] = 1;
    for (int h = 0; h < L.ng; h++)
      if (L.edge[(size_t)g * L.ng + h]) L.indeg[h]--;
    int ns = 0;
    for (int q = 0; q < m; q++)
      if (L.group[q] == g) sub[ns++] = set[q];
    if (L.key[g] < 0) c->out[c->nout++] = c->ops[sub[0]];
    else st = order_level(c, sub, ns, depth + 1);
  }
  free(sub);
  level_free(&L);
  return st;
}

tc_status tc_stmt_order(tc_fusion *f, tc_op **ops, const tc_stmt_loops *loops, int n) {
  octx c = {f, ops, loops, NULL, NULL, NULL, 0};
  c.index_of = tc_xmalloc((size_t)(f->ntensors + 1) * sizeof(int));
  for (int i = 0; i < f->ntensors; i++) c.index_of[i] = -1;
  for (int i = 0; i < n; i++) c.index_of[ops[i]->out->id] = i;
  c.level_pos = tc_xmalloc((size_t)(n + 1) * sizeof(int));
  int *all = tc_xmalloc((size_t)(n + 1) * sizeof(int));
  for (int i = 0; i < n; i++) c.level_pos[i] = -1, all[i] = i;
  c.out = tc_xmalloc((size_t)(n + 1) * sizeof *c.out);
  tc_status st = order_level(&c, all, n, 0);
  if (!st) memcpy(ops, c.out, (size_t)n * sizeof *ops);
  free(c.index_of), free(c.level_pos), free(all), free(c.out);
  return st;
}
