/* reshape_swizzle.c - splitting a layout into a reshape and a per-row
 * column permutation (see reshape_swizzle.h); the public calls on a
 * tensor, tc_layout_split and tc_layout_eval, are src/sched/layout_eval.c. */
#include "reshape_swizzle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *kind_name(tc_xform_kind k) {
  switch (k) {
    case TC_XF_SPLIT: return "split";
    case TC_XF_MERGE: return "merge";
    case TC_XF_XOR: return "XOR swizzle";
    case TC_XF_CUTE: return "CuTe swizzle";
    case TC_XF_RESIZE: return "resize";
    case TC_XF_EMBED: return "embed";
    case TC_XF_BROADCAST: return "broadcast";
    case TC_XF_ADDDIM: return "add-dim";
    case TC_XF_CONSTDIM: return "const-dim";
    default: return "transform";
  }
}

static bool is_swizzle(tc_xform_kind k) { return k == TC_XF_XOR || k == TC_XF_CUTE; }

static int64_t pow2_ceil(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

void tc_rs_graph_copy(tc_dgraph *dst, const tc_dgraph *src) {
  tc_dg_init(dst);
  dst->naxes = dst->caxes = src->naxes;
  dst->nxf = dst->cxf = src->nxf;
  dst->axes = tc_xmalloc(((size_t)src->naxes + 1) * sizeof *dst->axes);
  dst->xf = tc_xmalloc(((size_t)src->nxf + 1) * sizeof *dst->xf);
  if (src->naxes) memcpy(dst->axes, src->axes, (size_t)src->naxes * sizeof *dst->axes);
  if (src->nxf) memcpy(dst->xf, src->xf, (size_t)src->nxf * sizeof *dst->xf);
}

/* The layout's transforms in creation order (caller frees). */
static int *layout_history(const tc_dgraph *g, const int *logical, int nl, const int *alloc, int na,
                           int *n) {
  int *hist = tc_xmalloc(((size_t)g->nxf + 1) * sizeof(int));
  *n = tc_dg_history(g, logical, nl, alloc, na, hist);
  return hist;
}

/* ---- tracing a change of digits back to the logical roots ----------------- */

typedef struct trace_acc {
  int col;        /* the column root */
  int bad;        /* another root whose value changes, or -1 */
  bool hit, exact;
  int64_t div, mod;
} trace_acc;

/* In the swizzle-free graph, changing the digits (v / d) % m of axis a (all
 * other axes of its level fixed) changes which digits of which roots?
 * Exact while each step maps the digits one to one; otherwise the whole
 * input axis is taken as changed. */
static void trace_change(const tc_dgraph *g, int a, int64_t d, int64_t m, bool exact, trace_acc *acc) {
  int def = g->axes[a].def;
  if (def < 0) {
    if (a != acc->col) {
      if (acc->bad < 0) acc->bad = a;
    } else if (!acc->hit) {
      acc->hit = true, acc->exact = exact, acc->div = d, acc->mod = m;
    } else if (!exact || !acc->exact || acc->div != d || acc->mod != m) {
      acc->exact = false;
    }
    return;
  }
  const tc_xform *x = &g->xf[def];
  int64_t dm, d2;
  bool dm_ok = !__builtin_mul_overflow(d, m, &dm);
  switch ((int)x->kind) {
    case TC_XF_SPLIT: {
      int in = x->in[0];
      int64_t e = g->axes[x->out[1]].extent;
      if (a == x->out[0]) { /* outer = in / e */
        if (!__builtin_mul_overflow(d, e, &d2)) trace_change(g, in, d2, m, exact, acc);
        else trace_change(g, in, 1, g->axes[in].extent, false, acc);
      } else if (dm_ok && e % dm == 0) { /* inner = in % e */
        trace_change(g, in, d, m, exact, acc);
      } else {
        trace_change(g, in, 1, g->axes[in].extent, false, acc);
      }
      break;
    }
    case TC_XF_MERGE: { /* out = o * e + i */
      int o = x->in[0], i = x->in[1];
      int64_t e = g->axes[i].extent;
      if (dm_ok && e % dm == 0) {
        trace_change(g, i, d, m, exact, acc);
      } else if (d % e == 0) {
        trace_change(g, o, d / e, m, exact, acc);
      } else {
        trace_change(g, o, 1, g->axes[o].extent, false, acc);
        trace_change(g, i, 1, g->axes[i].extent, false, acc);
      }
      break;
    }
    case TC_XF_XOR: /* the identity in the swizzle-free graph */
      trace_change(g, a == x->out[0] ? x->in[0] : x->in[1], d, m, exact, acc);
      break;
    case TC_XF_CUTE:
      trace_change(g, x->in[0], d, m, exact, acc);
      break;
    case TC_XF_RESIZE: { /* out = in + left */
      int in = x->in[0];
      if (dm_ok && x->left >= 0 && x->left % dm == 0) trace_change(g, in, d, m, exact, acc);
      else trace_change(g, in, 1, g->axes[in].extent, false, acc);
      break;
    }
    default: /* refused before tracing */
      if (acc->bad < 0) acc->bad = a;
      break;
  }
}

bool tc_rs_contiguous(const tc_dgraph *g, int axis, int64_t n, int root) {
  if (n <= 1) return true;
  for (;;) {
    if (axis == root) return true;
    int def = g->axes[axis].def;
    if (def < 0) return false;
    const tc_xform *x = &g->xf[def];
    switch ((int)x->kind) {
      case TC_XF_SPLIT: /* inner = in % e keeps runs when n divides e */
        if (axis != x->out[1] || g->axes[axis].extent % n != 0) return false;
        axis = x->in[0];
        break;
      case TC_XF_MERGE: /* out = o * e + i */
        if (g->axes[x->in[1]].extent % n != 0) return false;
        axis = x->in[1];
        break;
      case TC_XF_CUTE: /* the low M bits pass unchanged */
        if (x->m > 40 || ((int64_t)1 << x->m) % n != 0) return false;
        axis = x->in[0];
        break;
      case TC_XF_RESIZE:
        if (x->left % n != 0) return false;
        axis = x->in[0];
        break;
      default: /* XOR rewrites low bits; the view kinds have no forward map */
        return false;
    }
  }
}

/* ---- the split ------------------------------------------------------------ */

int tc_rs_split_layout(const tc_dgraph *g, const int *logical, int nl, const int *alloc, int na,
                       tc_rs_split *out, tc_str *err) {
  memset(out, 0, sizeof *out);
  if (nl < 1 || na < 1) return tc_err_set(err, "a layout needs logical and allocation axes"), -1;
  for (int i = 0; i < na; i++)
    if (alloc[i] < 0 || alloc[i] >= g->naxes)
      return tc_err_set(err, "allocation entry %d (%d) is not an axis", i, alloc[i]), -1;
  out->col = logical[nl - 1];
  char b[64];
  /* every allocation axis is computed forward from the logical domain */
  char *from = tc_dg_forward_marks(g, logical, nl);
  int bad = -1;
  for (int i = 0; i < na && bad < 0; i++)
    if (!from[alloc[i]]) bad = i;
  free(from);
  if (bad >= 0) {
    int d = g->axes[alloc[bad]].def;
    if (d >= 0 && !tc_xf_has_forward(g->xf[d].kind))
      tc_err_set(err,
               "not a bijection: allocation axis %d (%s) is made by a %s, a view transform with no "
               "map from the logical coordinates", bad, tc_axis_describe(g, alloc[bad], b, sizeof b),
               kind_name(g->xf[d].kind));
    else
      tc_err_set(err,
               "allocation axis %d (%s) does not derive from the logical domain (an axis of another "
               "tensor, or made by a view transform)", bad, tc_axis_describe(g, alloc[bad], b, sizeof b));
    return -1;
  }
  for (int i = 0; i < na; i++)
    for (int j = 0; j < i; j++)
      if (alloc[i] == alloc[j])
        return tc_err_set(err, "not a bijection: allocation entries %d and %d are the same axis", j, i), -1;
  int nh;
  int *hist = layout_history(g, logical, nl, alloc, na, &nh);
  int rc = 0;
  for (int h = 0; h < nh && !rc; h++) {
    const tc_xform *x = &g->xf[hist[h]];
    if (!tc_xf_has_forward(x->kind)) {
      rc = -1;
      tc_err_set(err, "not a bijection: the layout uses a %s (a view transform)", kind_name(x->kind));
    } else if (x->kind == TC_XF_RESIZE && (x->left < 0 || x->right < 0)) {
      rc = -1;
      tc_err_set(err,
               "not a bijection: the layout crops an axis (resize by %lld/%lld), losing elements",
               (long long)x->left, (long long)x->right);
    } else if (x->kind == TC_XF_RESIZE) {
      out->padded = true;
    } else if (x->kind == TC_XF_SPLIT &&
               g->axes[x->out[0]].extent * g->axes[x->out[1]].extent != g->axes[x->in[0]].extent) {
      out->padded = true;
    }
  }
  tc_epool *p = rc ? NULL : tc_epool_new();
  if (!rc && !tc_dg_determines(p, g, alloc, na, -1, logical, nl)) {
    rc = -1;
    tc_err_set(err,
             "not a bijection: the allocation axes do not determine every logical coordinate, so "
             "elements would share a place");
  }
  for (int i = 0; i < na && !rc; i++)
    if (tc_dg_determines(p, g, alloc, na, i, &alloc[i], 1)) {
      rc = -1;
      tc_err_set(err,
               "not a bijection: allocation axis %d (%s) is determined by the other allocation axes, "
               "so most of its positions would hold no element", i,
               tc_axis_describe(g, alloc[i], b, sizeof b));
    }
  if (p) tc_epool_free(p);
  /* each swizzle must only rewrite column digits */
  for (int h = 0; h < nh && !rc; h++) {
    const tc_xform *x = &g->xf[hist[h]];
    if (!is_swizzle(x->kind)) continue;
    if (out->nswizzles == TC_RS_MAX_SWIZZLES) {
      rc = -1;
      tc_err_set(err, "the layout has more than %d swizzles", TC_RS_MAX_SWIZZLES);
      break;
    }
    trace_acc acc = {out->col, -1, false, false, 0, 0};
    if (x->kind == TC_XF_XOR)
      trace_change(g, x->in[1], 1, pow2_ceil(g->axes[x->in[0]].extent), true, &acc);
    else
      trace_change(g, x->in[0], (int64_t)1 << x->m, (int64_t)1 << x->b, true, &acc);
    if (acc.bad >= 0) {
      int pos = -1;
      for (int i = 0; i < nl; i++)
        if (logical[i] == acc.bad) pos = i;
      rc = -1;
      if (pos >= 0)
        tc_err_set(err,
                 "the %s %d of the layout mixes rows: it rewrites logical axis %d, but a swizzle may "
                 "only permute the columns (logical axis %d) within a row, so the layout has no "
                 "reshape + swizzle split", kind_name(x->kind), out->nswizzles, pos, nl - 1);
      else
        tc_err_set(err, "the %s %d of the layout rewrites an axis outside the logical domain",
                 kind_name(x->kind), out->nswizzles);
      break;
    }
    int k = out->nswizzles++;
    out->swizzle[k] = hist[h];
    out->div[k] = acc.hit && acc.exact ? acc.div : 1;
    out->mod[k] = acc.hit && acc.exact ? acc.mod : 0;
  }
  free(hist);
  if (rc) return rc;
  out->grain = g->axes[out->col].extent;
  for (int k = 0; k < out->nswizzles; k++)
    if (out->div[k] < out->grain) out->grain = out->div[k];
  return 0;
}

void tc_rs_forward(tc_epool *p, const tc_dgraph *g, const int *logical, int nl, const int *alloc,
                   int na, const tc_expr *const *lv, bool swizzled, const tc_expr **alloc_vals) {
  int nh;
  int *hist = layout_history(g, logical, nl, alloc, na, &nh);
  const tc_expr **vals = tc_xcalloc((size_t)g->naxes + 1, sizeof *vals);
  for (int i = 0; i < nl; i++) vals[logical[i]] = lv[i];
  for (int h = 0; h < nh; h++) {
    const tc_xform *x = &g->xf[hist[h]];
    const tc_expr *in[2] = {vals[x->in[0]], x->nin > 1 ? vals[x->in[1]] : NULL};
    const tc_expr *o[TC_XF_MAX_OUT] = {NULL};
    if (!swizzled && is_swizzle(x->kind)) {
      for (int k = 0; k < x->nout; k++) o[k] = in[k];
    } else {
      tc_xf_forward(p, g, x, in, o);
    }
    for (int k = 0; k < x->nout; k++)
      if (o[k]) vals[x->out[k]] = tc_simplify(p, o[k]);
  }
  for (int k = 0; k < na; k++) alloc_vals[k] = vals[alloc[k]];
  free(vals);
  free(hist);
}

int tc_rs_reshape_axes(tc_dgraph *g, const int *logical, int nl, const int *alloc, int na,
                       int *reshape, tc_str *err) {
  int nh;
  int *hist = layout_history(g, logical, nl, alloc, na, &nh);
  int *map = tc_xmalloc(((size_t)g->naxes + 1) * sizeof(int));
  for (int i = 0; i < g->naxes; i++) map[i] = -1;
  for (int i = 0; i < nl; i++) map[logical[i]] = logical[i];
  int rc = 0;
  for (int h = 0; h < nh && !rc; h++) {
    const tc_xform x = g->xf[hist[h]]; /* a copy: replaying moves the array */
    bool same = true;
    for (int k = 0; k < x.nin; k++) same &= map[x.in[k]] == x.in[k];
    if (is_swizzle(x.kind)) {
      for (int k = 0; k < x.nout; k++) map[x.out[k]] = map[x.in[k]];
    } else if (same) {
      for (int k = 0; k < x.nout; k++) map[x.out[k]] = x.out[k];
    } else {
      rc = tc_dg_replay(g, &hist[h], 1, &map, err);
    }
  }
  for (int k = 0; k < na && !rc; k++) {
    reshape[k] = map[alloc[k]];
    if (reshape[k] < 0) rc = -1, tc_err_set(err, "allocation axis %d has no reshape counterpart", k);
  }
  free(map);
  free(hist);
  return rc;
}
