/* coord.c - coordinate-transform views (coord.h) on the axis graph.
 *
 * Each view transform is a transform of the view's tc_dgraph:
 *   Pad, Slice  RESIZE (pad: +left/+right, slice: -begin / end - extent)
 *   Merge       a chain of binary MERGEs, left-associated:
 *               merge(merge(d0, d1), d2) ...; backward is div/mod
 *   Unmerge     a chain of SPLITs with the inner extent as the factor;
 *               backward is the row-major recombination
 *   Embed, Broadcast, AddDim, ConstDim
 *               the view kinds of domain.h (TC_XF_EMBED ...)
 * so indexing is tc_dg_walk from the upper axes to the memory (root) axes,
 * which also yields the range predicates.
 *
 * Merge collapse.  The offset is not read off the walk's root values (those
 * hold a div and a mod per merged dim).  It is computed by a linear
 * propagation from the roots upward: offset = sum coef[a] * value(a) over a
 * cut of the graph, starting with the roots and their strides.  Linear
 * transforms (split, resize, embed, const) move the cut exactly; a merge
 * (flattened to its n leaves: nested binary merges are one n-ary merge)
 * sees its leaves' coefficients: consecutive leaves with coef[i] ==
 * coef[i+1] * extent[i+1] form a "run" whose combined value is one digit of
 * the merged value, so a merge that is one run contributes coef * merged
 * with no div/mod at all; otherwise the digits (m / below_r) % ext_r are
 * regrouped by the quotients Q_r = m / below_r (one division per run
 * boundary, no modulo; see tc_view_index).  Non-linear transforms
 * (broadcast's modulo) add the walk's value as a residual term.  The walk
 * itself still gives the predicates (and the values they need).
 *
 * Vectorization.  tc_view_vector_width models the w consecutive upper
 * values u = B + j (B a multiple of w, j < w) and pushes them through every
 * backward step: per axis, value(j) = floor((B_a + k_a * j) / d_a) with B_a
 * a known multiple of g_a (g_a = 0: B_a == 0), or "opaque" where a merge's
 * digit wraps inside the vector, plus an interval of the values.  Every
 * range check the walk makes must not separate the w values (no boundary
 * the interval can reach lies inside them; an opaque value must never reach
 * a boundary).  Then the offset must move by exactly one element per step
 * and start at a multiple of w: read off the memory axes, or, where merges
 * carry inside the vector, off the collapsed linear form above (a vector
 * may cross the rows of a merge whose rows are contiguous in memory). */
#include "coord.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

static int fail(tc_view *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(tc_view *v, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(v->err, sizeof v->err, fmt, ap);
  va_end(ap);
  return -1;
}

/* fail with "WHAT: " and the message of a domain call, which it frees. */
static int fail_err(tc_view *v, const char *what, tc_str *err) {
  fail(v, "%s: %s", what, tc_str_cstr(err));
  tc_str_free(err);
  return -1;
}

static void set_name(char *dst, const char *name) {
  snprintf(dst, 16, "%s", name ? name : "");
}

static bool valid_dim(const tc_view *v, int dim) { return dim >= 0 && dim < v->nupper; }

/* A snapshot of what a transform may change, for rolling back on error. */
typedef struct snap {
  int naxes, nxf, nupper;
  int upper[TC_VIEW_MAX_DIMS];
  char names[TC_VIEW_MAX_DIMS][16];
} snap;

static void take_snap(const tc_view *v, snap *s) {
  s->naxes = v->g.naxes, s->nxf = v->g.nxf, s->nupper = v->nupper;
  memcpy(s->upper, v->upper, sizeof s->upper);
  memcpy(s->names, v->names, sizeof s->names);
}

static int roll_back(tc_view *v, const snap *s, const char *err) {
  v->g.naxes = s->naxes, v->g.nxf = s->nxf, v->nupper = s->nupper;
  memcpy(v->upper, s->upper, sizeof s->upper);
  memcpy(v->names, s->names, sizeof s->names);
  return fail(v, "%s", err);
}

/* Replaces upper dim `dim` by n new dims (axes[], names[]). */
static void replace_dim(tc_view *v, int dim, int n, const int *axes, char names[][16]) {
  int up[TC_VIEW_MAX_DIMS];
  char nm[TC_VIEW_MAX_DIMS][16];
  int m = 0;
  for (int i = 0; i < v->nupper; i++) {
    if (i == dim) {
      for (int k = 0; k < n; k++) {
        up[m] = axes[k];
        memcpy(nm[m], names[k], 16);
        m++;
      }
    } else {
      up[m] = v->upper[i];
      memcpy(nm[m], v->names[i], 16);
      m++;
    }
  }
  v->nupper = m;
  memcpy(v->upper, up, sizeof up);
  memcpy(v->names, nm, sizeof nm);
}

static int64_t wmul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static int64_t wadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }

/* ------------------------------------------------------------ building */

tc_view *tc_view_new(int ndims, const int64_t *extents, const int64_t *strides,
                     const char *const *names) {
  if (ndims < 0 || ndims > TC_VIEW_MAX_DIMS || (ndims > 0 && !extents)) return NULL;
  for (int i = 0; i < ndims; i++)
    if (extents[i] < 1 || extents[i] > ((int64_t)1 << 40)) return NULL;
  tc_view *v = tc_xcalloc(1, sizeof *v);
  tc_dg_init(&v->g);
  v->nlower = v->nupper = ndims;
  int64_t st = 1;
  for (int i = ndims - 1; i >= 0; i--) {
    v->lower_stride[i] = strides ? strides[i] : st;
    st = wmul(st, extents[i]);
  }
  for (int i = 0; i < ndims; i++) {
    v->lower[i] = v->upper[i] = tc_dg_root(&v->g, extents[i], i);
    v->lower_const[i] = -1;
    if (names && names[i]) set_name(v->names[i], names[i]);
    else snprintf(v->names[i], 16, "d%d", i & 15);
  }
  return v;
}

tc_view *tc_view_copy(const tc_view *v) {
  tc_view *c = tc_xmalloc(sizeof *c);
  *c = *v;
  c->g.axes = NULL, c->g.xf = NULL;
  c->g.caxes = v->g.naxes, c->g.cxf = v->g.nxf;
  if (v->g.naxes) {
    c->g.axes = tc_xmalloc((size_t)v->g.naxes * sizeof *c->g.axes);
    memcpy(c->g.axes, v->g.axes, (size_t)v->g.naxes * sizeof *c->g.axes);
  }
  if (v->g.nxf) {
    c->g.xf = tc_xmalloc((size_t)v->g.nxf * sizeof *c->g.xf);
    memcpy(c->g.xf, v->g.xf, (size_t)v->g.nxf * sizeof *c->g.xf);
  }
  return c;
}

void tc_view_free(tc_view *v) {
  if (!v) return;
  tc_dg_free(&v->g);
  free(v);
}

int tc_view_pad(tc_view *v, int dim, int64_t left, int64_t right) {
  if (!valid_dim(v, dim)) return fail(v, "pad: no upper dimension %d (the view has %d)", dim, v->nupper);
  if (left < 0 || right < 0)
    return fail(v, "pad: amounts must be non-negative, got %lld and %lld (use slice to crop)",
                (long long)left, (long long)right);
  int out;
  tc_str err = {0};
  if (tc_dg_resize(&v->g, v->upper[dim], left, right, &out, &err))
    return fail_err(v, "pad", &err);
  v->upper[dim] = out;
  return 0;
}

int tc_view_slice(tc_view *v, int dim, int64_t begin, int64_t end) {
  if (!valid_dim(v, dim)) return fail(v, "slice: no upper dimension %d (the view has %d)", dim, v->nupper);
  int64_t e = v->g.axes[v->upper[dim]].extent;
  if (begin < 0 || end > e || begin >= end)
    return fail(v, "slice: [%lld, %lld) is not a non-empty range inside [0, %lld)", (long long)begin,
                (long long)end, (long long)e);
  int out;
  tc_str err = {0};
  if (tc_dg_resize(&v->g, v->upper[dim], -begin, end - e, &out, &err))
    return fail_err(v, "slice", &err);
  v->upper[dim] = out;
  return 0;
}

int tc_view_embed(tc_view *v, int dim, int n, const int64_t *upper_extents,
                  const int64_t *coeffs, const char *const *names) {
  if (!valid_dim(v, dim)) return fail(v, "embed: no upper dimension %d (the view has %d)", dim, v->nupper);
  if (n < 1 || v->nupper - 1 + n > TC_VIEW_MAX_DIMS)
    return fail(v, "embed: %d upper dimensions do not fit (1 to %d here)", n,
                TC_VIEW_MAX_DIMS - v->nupper + 1);
  if (!upper_extents || !coeffs) return fail(v, "embed: extents and coefficients are required");
  int outs[TC_XF_MAX_OUT];
  tc_str err = {0};
  if (tc_dg_embed(&v->g, v->upper[dim], n, upper_extents, coeffs, outs, &err))
    return fail_err(v, "embed", &err);
  char nm[TC_VIEW_MAX_DIMS][16];
  for (int i = 0; i < n; i++) {
    if (names && names[i]) set_name(nm[i], names[i]);
    else snprintf(nm[i], 16, "%.10s.%d", v->names[dim], i & 15);
  }
  replace_dim(v, dim, n, outs, nm);
  return 0;
}

int tc_view_merge(tc_view *v, int n, const int *dims, const char *name) {
  if (n < 1 || n > v->nupper || !dims)
    return fail(v, "merge: needs 1 to %d distinct upper dimensions, got %d", v->nupper, n);
  for (int i = 0; i < n; i++) {
    if (!valid_dim(v, dims[i]))
      return fail(v, "merge: no upper dimension %d (the view has %d)", dims[i], v->nupper);
    for (int k = 0; k < i; k++)
      if (dims[k] == dims[i]) return fail(v, "merge: dimension %d appears twice", dims[i]);
  }
  snap s;
  take_snap(v, &s);
  int acc = v->upper[dims[0]];
  tc_str err = {0};
  for (int i = 1; i < n; i++)
    if (tc_dg_merge(&v->g, acc, v->upper[dims[i]], &acc, &err)) {
      tc_err_prefix(&err, "merge: ");
      int rc = roll_back(v, &s, tc_str_cstr(&err));
      tc_str_free(&err);
      return rc;
    }
  /* the new dim takes dims[0]'s place; the others go */
  int up[TC_VIEW_MAX_DIMS];
  char nm[TC_VIEW_MAX_DIMS][16];
  int m = 0;
  for (int i = 0; i < v->nupper; i++) {
    bool gone = false;
    for (int k = 1; k < n; k++) gone |= dims[k] == i;
    if (gone) continue;
    if (i == dims[0]) {
      up[m] = acc;
      if (name) set_name(nm[m], name);
      else memcpy(nm[m], v->names[i], 16);
    } else {
      up[m] = v->upper[i];
      memcpy(nm[m], v->names[i], 16);
    }
    m++;
  }
  v->nupper = m;
  memcpy(v->upper, up, sizeof up);
  memcpy(v->names, nm, sizeof nm);
  return 0;
}

int tc_view_unmerge(tc_view *v, int dim, int n, const int64_t *extents,
                    const char *const *names) {
  if (!valid_dim(v, dim)) return fail(v, "unmerge: no upper dimension %d (the view has %d)", dim, v->nupper);
  if (n < 1 || v->nupper - 1 + n > TC_VIEW_MAX_DIMS)
    return fail(v, "unmerge: %d upper dimensions do not fit (1 to %d here)", n,
                TC_VIEW_MAX_DIMS - v->nupper + 1);
  if (!extents) return fail(v, "unmerge: extents are required");
  int64_t e = v->g.axes[v->upper[dim]].extent, prod = 1;
  for (int i = 0; i < n; i++) {
    if (extents[i] < 1) return fail(v, "unmerge: extent %d must be at least 1, got %lld", i, (long long)extents[i]);
    if (__builtin_mul_overflow(prod, extents[i], &prod)) prod = -1;
    if (prod < 0) break;
  }
  if (prod != e) {
    tc_str t;
    tc_str_init(&t);
    for (int i = 0; i < n; i++) tc_str_printf(&t, "%s%lld", i ? "x" : "", (long long)extents[i]);
    fail(v, "unmerge: the extents %s do not multiply to the dimension's extent %lld", tc_str_cstr(&t),
         (long long)e);
    tc_str_free(&t);
    return -1;
  }
  snap s;
  take_snap(v, &s);
  int outs[TC_VIEW_MAX_DIMS];
  int cur = v->upper[dim];
  tc_str err = {0};
  for (int i = 0; i + 1 < n; i++) {
    int64_t inner = 1;
    for (int k = i + 1; k < n; k++) inner *= extents[k];
    int o, in;
    if (tc_dg_split(&v->g, cur, inner, 1, &o, &in, &err)) {
      tc_err_prefix(&err, "unmerge: ");
      int rc = roll_back(v, &s, tc_str_cstr(&err));
      tc_str_free(&err);
      return rc;
    }
    outs[i] = o;
    cur = in;
  }
  outs[n - 1] = cur;
  char nm[TC_VIEW_MAX_DIMS][16];
  for (int i = 0; i < n; i++) {
    if (names && names[i]) set_name(nm[i], names[i]);
    else snprintf(nm[i], 16, "%.10s.%d", v->names[dim], i & 15);
  }
  replace_dim(v, dim, n, outs, nm);
  return 0;
}

int tc_view_broadcast(tc_view *v, int dim, int64_t extent) {
  if (!valid_dim(v, dim)) return fail(v, "broadcast: no upper dimension %d (the view has %d)", dim, v->nupper);
  int out;
  tc_str err = {0};
  if (tc_dg_broadcast(&v->g, v->upper[dim], extent, &out, &err))
    return fail_err(v, "broadcast", &err);
  v->upper[dim] = out;
  return 0;
}

int tc_view_add_dim(tc_view *v, int pos, int64_t extent, const char *name) {
  if (pos < 0 || pos > v->nupper)
    return fail(v, "add_dim: position %d outside 0..%d", pos, v->nupper);
  if (v->nupper >= TC_VIEW_MAX_DIMS)
    return fail(v, "add_dim: the view already has %d dimensions, the most allowed", v->nupper);
  int out;
  tc_str err = {0};
  if (tc_dg_add_dim(&v->g, extent, &out, &err)) return fail_err(v, "add_dim", &err);
  for (int i = v->nupper; i > pos; i--) {
    v->upper[i] = v->upper[i - 1];
    memcpy(v->names[i], v->names[i - 1], 16);
  }
  v->upper[pos] = out;
  if (name) set_name(v->names[pos], name);
  else snprintf(v->names[pos], 16, "new%d", pos & 15);
  v->nupper++;
  return 0;
}

int tc_view_const_dim(tc_view *v, int dim, int64_t value) {
  if (!valid_dim(v, dim)) return fail(v, "const_dim: no upper dimension %d (the view has %d)", dim, v->nupper);
  int a = v->upper[dim];
  tc_str err = {0};
  if (tc_dg_const_dim(&v->g, a, value, &err)) return fail_err(v, "const_dim", &err);
  for (int i = 0; i < v->nlower; i++)
    if (v->lower[i] == a) v->lower_const[i] = value;
  replace_dim(v, dim, 0, NULL, NULL);
  return 0;
}

int tc_view_reorder(tc_view *v, const int *perm) {
  if (!perm) return fail(v, "reorder: no permutation");
  bool seen[TC_VIEW_MAX_DIMS] = {false};
  for (int i = 0; i < v->nupper; i++) {
    if (perm[i] < 0 || perm[i] >= v->nupper || seen[perm[i]])
      return fail(v, "reorder: not a permutation of 0..%d (entry %d is %d)", v->nupper - 1, i, perm[i]);
    seen[perm[i]] = true;
  }
  int up[TC_VIEW_MAX_DIMS];
  char nm[TC_VIEW_MAX_DIMS][16];
  for (int i = 0; i < v->nupper; i++) {
    up[i] = v->upper[perm[i]];
    memcpy(nm[i], v->names[perm[i]], 16);
  }
  memcpy(v->upper, up, sizeof up);
  memcpy(v->names, nm, sizeof nm);
  return 0;
}

int tc_view_rename(tc_view *v, int dim, const char *name) {
  if (!valid_dim(v, dim)) return fail(v, "rename: no upper dimension %d (the view has %d)", dim, v->nupper);
  if (!name) return fail(v, "rename: no name");
  set_name(v->names[dim], name);
  return 0;
}

int tc_view_find(const tc_view *v, const char *name) {
  if (!name) return -1;
  for (int i = 0; i < v->nupper; i++)
    if (strncmp(v->names[i], name, 15) == 0 && strlen(name) <= 15) return i;
  return -1;
}

int64_t tc_view_extent(const tc_view *v, int dim) {
  return valid_dim(v, dim) ? v->g.axes[v->upper[dim]].extent : -1;
}

/* ------------------------------------------------- the linear offset form */

/* A term of the offset that is not a coefficient on an axis:
 *   merge:  sum over the runs r (innermost first) of c[r] * digit_r, with
 *           digit_r = (m / below_r) % ext[r] (the outermost: no modulo) and
 *           m the value of the merge's top axis;
 *   value:  c[0] * the walk's value of the axis. */
typedef struct oterm {
  bool merge;
  int axis;
  int nr;
  int at; /* c[r] = buf[at + r], ext[r] = buf[at + nr + r] (linform.buf) */
} oterm;

/* offset = sum coef[a] * value(a) over axes that are not consumed (the upper
 * axes) + cst + the terms. */
typedef struct linform {
  int64_t *coef;
  char *consumed;
  int64_t cst;
  oterm *t;
  int nt, ct;
  int64_t *buf; /* run storage: 2 * naxes + 2 entries per term at most */
  int nbuf, cbuf;
} linform;

/* Reserves n entries of buf; returns the index of the first. */
static int lf_alloc(linform *L, int n) {
  if (L->nbuf + n > L->cbuf) {
    L->cbuf = (L->nbuf + n) * 2 + 16;
    L->buf = tc_xrealloc(L->buf, (size_t)L->cbuf * sizeof *L->buf);
  }
  L->nbuf += n;
  return L->nbuf - n;
}

static int64_t t_c(const linform *L, const oterm *t, int r) { return L->buf[t->at + r]; }
static int64_t t_ext(const linform *L, const oterm *t, int r) { return L->buf[t->at + t->nr + r]; }

static void lf_value(linform *L, int axis, int64_t c) {
  int at = lf_alloc(L, 1);
  L->buf[at] = c;
  oterm t = {false, axis, 1, at};
  TC_PUSH(L->t, L->nt, L->ct, t);
}

static void lf_free(linform *L) {
  free(L->coef);
  free(L->consumed);
  free(L->t);
  free(L->buf);
}

/* True when axis a is an input of a MERGE. */
static bool merge_consumed(const tc_dgraph *g, int a) {
  for (int i = 0; i < g->nxf; i++) {
    const tc_xform *x = &g->xf[i];
    for (int k = 0; k < x->nin; k++)
      if (x->in[k] == a) return x->kind == TC_XF_MERGE;
  }
  return false;
}

/* The leaves of the merge tree under axis a (outermost first). */
static void merge_leaves(const tc_dgraph *g, int a, int *leaves, int *n) {
  int d = g->axes[a].def;
  if (d >= 0 && g->xf[d].kind == TC_XF_MERGE) {
    merge_leaves(g, g->xf[d].in[0], leaves, n);
    merge_leaves(g, g->xf[d].in[1], leaves, n);
    return;
  }
  leaves[(*n)++] = a;
}

/* Propagates the offset from the memory axes up through the transforms in
 * creation order (see the file comment). */
static void linform_build(const tc_view *v, linform *L) {
  const tc_dgraph *g = &v->g;
  int na = g->naxes;
  memset(L, 0, sizeof *L);
  L->coef = tc_xcalloc((size_t)na + 1, sizeof *L->coef);
  L->consumed = tc_xcalloc((size_t)na + 1, 1);
  int64_t *coef = L->coef;
  for (int i = 0; i < v->nlower; i++) coef[v->lower[i]] = wadd(coef[v->lower[i]], v->lower_stride[i]);
  int *leaves = tc_xmalloc(((size_t)na + 1) * sizeof *leaves);
  int *lv = tc_xmalloc(((size_t)na + 1) * sizeof *lv);
  for (int i = 0; i < g->nxf; i++) {
    const tc_xform *x = &g->xf[i];
    for (int k = 0; k < x->nin; k++) L->consumed[x->in[k]] = 1;
    switch ((int)x->kind) {
      case TC_XF_SPLIT: {
        int64_t c = coef[x->in[0]];
        coef[x->out[0]] = wadd(coef[x->out[0]], wmul(c, g->axes[x->out[1]].extent));
        coef[x->out[1]] = wadd(coef[x->out[1]], c);
        break;
      }
      case TC_XF_RESIZE: {
        int64_t c = coef[x->in[0]];
        coef[x->out[0]] = wadd(coef[x->out[0]], c);
        L->cst = wadd(L->cst, -wmul(c, x->left));
        break;
      }
      case TC_XF_EMBED: {
        int64_t c = coef[x->in[0]];
        for (int k = 0; k < x->nout; k++) coef[x->out[k]] = wadd(coef[x->out[k]], wmul(c, x->coeff[k]));
        break;
      }
      case TC_XF_CONSTDIM: L->cst = wadd(L->cst, wmul(coef[x->in[0]], x->factor)); break;
      case TC_XF_ADDDIM: break;
      case TC_XF_BROADCAST:
        if (coef[x->in[0]] != 0 && g->axes[x->in[0]].extent != 1) lf_value(L, x->in[0], coef[x->in[0]]);
        break;
      case TC_XF_MERGE: {
        int top = x->out[0];
        if (merge_consumed(g, top)) break; /* the top merge of the tree does it */
        int nl = 0, m = 0;
        merge_leaves(g, top, leaves, &nl);
        for (int k = 0; k < nl; k++) /* extent-1 leaves are always 0 */
          if (g->axes[leaves[k]].extent != 1) lv[m++] = leaves[k];
        if (m == 0) break;
        /* runs from the innermost leaf outward: coef[i] == coef[i+1] * ext[i+1] */
        int at = lf_alloc(L, 2 * m);
        int64_t *rc = L->buf + at, *re = rc + m;
        int nr = 0;
        for (int hi = m - 1; hi >= 0;) {
          int lo = hi;
          int64_t ext = g->axes[lv[hi]].extent;
          while (lo > 0 && coef[lv[lo - 1]] == wmul(coef[lv[lo]], g->axes[lv[lo]].extent)) {
            lo--;
            ext = wmul(ext, g->axes[lv[lo]].extent);
          }
          rc[nr] = coef[lv[hi]], re[nr] = ext, nr++;
          hi = lo - 1;
        }
        if (nr == 1) {
          coef[top] = wadd(coef[top], rc[0]); /* collapsed: no div/mod */
          L->nbuf -= 2 * m;
          break;
        }
        /* re-pack the runs next to each other */
        memmove(rc + nr, re, (size_t)nr * sizeof *re);
        L->nbuf -= 2 * m - 2 * nr;
        oterm t = {true, top, nr, at};
        TC_PUSH(L->t, L->nt, L->ct, t);
        break;
      }
      default: /* XOR, CUTE: not linear */
        for (int k = 0; k < x->nin; k++)
          if (coef[x->in[k]] != 0) lf_value(L, x->in[k], coef[x->in[k]]);
        break;
    }
  }
  free(leaves);
  free(lv);
}

void tc_view_index(const tc_view *v, tc_epool *p, const tc_expr *const *upper,
                   const tc_expr **offset, const tc_expr **valid) {
  const tc_dgraph *g = &v->g;
  int na = g->naxes;
  const tc_expr **vals = tc_xcalloc((size_t)na + 1, sizeof *vals);
  for (int i = 0; i < v->nupper; i++) vals[v->upper[i]] = upper[i];
  /* an upper coordinate outside its extent is invalid too (this vanishes
   * when the expression's range proves it inside) */
  const tc_expr *pred = tc_e_const(p, 1);
  for (int i = 0; i < v->nupper; i++) {
    int64_t e = g->axes[v->upper[i]].extent;
    const tc_expr *c = tc_simplify(p, tc_e_land(p, tc_e_le(p, tc_e_const(p, 0), upper[i]),
                                                tc_e_lt(p, upper[i], tc_e_const(p, e))));
    if (!tc_e_is_const(c, 1)) pred = tc_e_land(p, pred, c);
  }
  tc_dg_walk(p, g, vals, &pred);
  linform L;
  linform_build(v, &L);
#define VAL(a) (vals[a] ? vals[a] : tc_e_const(p, 0))
  const tc_expr *off = tc_e_const(p, L.cst);
  for (int a = 0; a < na; a++)
    if (!L.consumed[a] && L.coef[a] != 0) off = tc_e_add(p, off, tc_e_mulc(p, VAL(a), L.coef[a]));
  for (int i = 0; i < L.nt; i++) {
    const oterm *t = &L.t[i];
    const tc_expr *mv = VAL(t->axis);
    if (!t->merge) {
      off = tc_e_add(p, off, tc_e_mulc(p, mv, t_c(&L, t, 0)));
      continue;
    }
    /* sum_r c_r * digit_r with digit_r = Q_r - ext_r * Q_{r+1} (Q_r = m /
     * below_r; the outermost digit is Q_r itself) regrouped by Q:
     * c_0 * Q_0 + sum_{r >= 1} (c_r - c_{r-1} * ext_{r-1}) * Q_r.  One
     * division per run boundary and no modulo; exact for every m.  When a
     * regrouped coefficient is negative (dims merged against their memory
     * order) the digits are kept instead: the same value, but interval
     * analysis would see a much wider range in the regrouped sum. */
    bool regroup = true;
    for (int r = 0; r < t->nr; r++) {
      int64_t q = r == 0 ? t_c(&L, t, 0) : wadd(t_c(&L, t, r), -wmul(t_c(&L, t, r - 1), t_ext(&L, t, r - 1)));
      if (q < 0) regroup = false;
    }
    int64_t below = 1;
    for (int r = 0; r < t->nr; r++) {
      if (r > 0) below = wmul(below, t_ext(&L, t, r - 1));
      const tc_expr *qv = below == 1 ? mv : tc_e_divc(p, mv, below);
      if (regroup) {
        int64_t q = r == 0 ? t_c(&L, t, 0) : wadd(t_c(&L, t, r), -wmul(t_c(&L, t, r - 1), t_ext(&L, t, r - 1)));
        if (q != 0) off = tc_e_add(p, off, tc_e_mulc(p, qv, q));
      } else if (t_c(&L, t, r) != 0) {
        const tc_expr *dg = r + 1 < t->nr ? tc_e_modc(p, qv, t_ext(&L, t, r)) : qv;
        off = tc_e_add(p, off, tc_e_mulc(p, dg, t_c(&L, t, r)));
      }
    }
  }
#undef VAL
  *offset = tc_simplify(p, off);
  *valid = tc_simplify(p, pred);
  lf_free(&L);
  free(vals);
}

/* ------------------------------------------------------------ vectors */

static int64_t gcd64(int64_t a, int64_t b) {
  uint64_t x = a < 0 ? -(uint64_t)a : (uint64_t)a, y = b < 0 ? -(uint64_t)b : (uint64_t)b;
  while (y) {
    uint64_t t = x % y;
    x = y, y = t;
  }
  return x > (uint64_t)INT64_MAX ? 1 : (int64_t)x;
}

static int64_t fdiv64(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

/* g * c as an alignment: a divisor of the true product is always sound,
 * so an overflow gives 1. */
static int64_t gmul(int64_t g, int64_t c) {
  int64_t r;
  if (__builtin_mul_overflow(g, c, &r) || r == INT64_MIN) return 1;
  return r < 0 ? -r : r;
}

/* Is there a multiple of g (g == 0: just 0) in [lo, hi]? */
static bool multiple_in(int64_t g, int64_t lo, int64_t hi) {
  if (lo > hi) return false;
  if (g == 0) return lo <= 0 && 0 <= hi;
  return fdiv64(hi, g) * g >= lo;
}

/* Saturating arithmetic for the intervals (a wider interval stays sound). */
static int64_t sadd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return a > 0 ? INT64_MAX : INT64_MIN;
  return r;
}
static int64_t smul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
  return r;
}
/* Checked arithmetic for the per-step coefficients: overflow gives up. */
static int64_t cadd(int64_t a, int64_t b, bool *ok) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) *ok = false, r = 0;
  return r;
}
static int64_t cmul(int64_t a, int64_t b, bool *ok) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) *ok = false, r = 0;
  return r;
}

/* How an axis moves over the w points of a vector: value(j) =
 * floor((B + k*j) / d), B a multiple of g (g == 0: B == 0), d >= 1 (d == 1:
 * affine; d > 1: the quotient of an affine value, e.g. the outer digit of
 * a merge the vector carries through), or `opaque` (none of that).  lo..hi
 * bounds every value the axis takes at a valid point. */
typedef struct vstate {
  int64_t k, g, d, lo, hi;
  bool opaque;
} vstate;

static vstate vs_norm(vstate s, int w) {
  if (s.lo == s.hi) { /* a known constant */
    s.k = 0, s.d = 1, s.g = s.lo < 0 ? -s.lo : s.lo, s.opaque = false;
    return s;
  }
  if (s.opaque || s.d == 1) return s;
  if (s.k % s.d == 0 && s.g % s.d == 0) { /* exact division */
    s.k /= s.d, s.g /= s.d, s.d = 1;
  } else if (s.k == 0 || (s.k > 0 && s.k <= INT64_MAX / w && s.k * (int64_t)(w - 1) < gcd64(s.g, s.d))) {
    /* B mod d + k*(w-1) < d: no carry, the quotient is constant */
    s.g = s.g % s.d == 0 ? s.g / s.d : 1;
    s.k = 0, s.d = 1;
  }
  return s;
}

static vstate vs_make(int64_t k, int64_t g, int64_t lo, int64_t hi, int w) {
  vstate s = {k, g, 1, lo, hi, false};
  return vs_norm(s, w);
}

static vstate vs_opaque(int64_t lo, int64_t hi) {
  vstate s = {0, 1, 1, lo, hi, true};
  if (lo == hi) s.opaque = false, s.g = lo < 0 ? -lo : lo;
  return s;
}

/* Can the w values lie on both sides of the boundary t (some < t, some >= t)? */
static bool straddles(const vstate *s, int w, int64_t t) {
  if (!(s->lo < t && t <= s->hi)) return false; /* never on both sides */
  if (s->opaque) return true;
  if (s->k == 0 || w <= 1) return false;
  /* floor(V / d) < t  <=>  V < t * d */
  int64_t td = smul(t, s->d);
  int64_t span = smul(s->k < 0 ? -s->k : s->k, (int64_t)(w - 1));
  if (s->k > 0) return multiple_in(s->g, sadd(td, -span), td - 1);
  return multiple_in(s->g, td, sadd(td, span - 1));
}

/* value / D, D >= 1. */
static vstate vs_div(vstate q, int64_t D, int w) {
  int64_t lo = fdiv64(q.lo, D), hi = fdiv64(q.hi, D), nd;
  if (q.opaque || __builtin_mul_overflow(q.d, D, &nd)) return vs_opaque(lo, hi);
  vstate r = {q.k, q.g, nd, lo, hi, false};
  return vs_norm(r, w);
}

/* value % D, D >= 1. */
static vstate vs_mod(vstate q, int64_t D, int w) {
  int64_t lo = 0, hi = D - 1;
  if (fdiv64(q.lo, D) == fdiv64(q.hi, D)) lo = q.lo - fdiv64(q.lo, D) * D, hi = q.hi - fdiv64(q.lo, D) * D;
  if (q.opaque || q.d != 1) return vs_opaque(lo, hi);
  int64_t G = gcd64(q.g, D);
  if (q.k == 0 || q.k % D == 0) return vs_make(0, G, lo, hi, w);
  if (q.k > 0 && q.k <= INT64_MAX / w && q.k * (int64_t)(w - 1) < G) return vs_make(q.k, G, lo, hi, w);
  return vs_opaque(lo, hi); /* wraps around inside the vector */
}

/* sum c[i] * s[i] (the backward step of SPLIT and EMBED). */
static vstate vs_sum(const vstate *s, const int64_t *c, int n, int w) {
  int64_t lo = 0, hi = 0;
  for (int i = 0; i < n; i++) {
    lo = sadd(lo, smul(c[i], c[i] >= 0 ? s[i].lo : s[i].hi));
    hi = sadd(hi, smul(c[i], c[i] >= 0 ? s[i].hi : s[i].lo));
  }
  int scaled = -1, nscaled = 0, moving = 0;
  for (int i = 0; i < n; i++) {
    if (s[i].opaque && c[i] != 0) return vs_opaque(lo, hi);
    if (c[i] == 0) continue;
    if (s[i].d != 1) scaled = i, nscaled++;
    if (s[i].k != 0) moving++;
  }
  bool ok = true;
  if (nscaled == 0) {
    int64_t k = 0, g = 0;
    for (int i = 0; i < n; i++) {
      k = cadd(k, cmul(c[i], s[i].k, &ok), &ok);
      g = gcd64(g, gmul(s[i].g, c[i]));
    }
    return ok ? vs_make(k, g, lo, hi, w) : vs_opaque(lo, hi);
  }
  /* one quotient with coefficient 1 plus constants:
   * floor(V / d) + C == floor((V + C*d) / d) */
  if (nscaled == 1 && moving == 1 && c[scaled] == 1) {
    const vstate *q = &s[scaled];
    int64_t g = 0;
    for (int i = 0; i < n; i++)
      if (i != scaled) g = gcd64(g, gmul(s[i].g, c[i]));
    vstate r = {q->k, gcd64(q->g, gmul(g, q->d)), q->d, lo, hi, false};
    return vs_norm(r, w);
  }
  return vs_opaque(lo, hi);
}

static bool vector_ok(const tc_view *v, int dim, int w) {
  const tc_dgraph *g = &v->g;
  int na = g->naxes;
  vstate *st = tc_xcalloc((size_t)na + 1, sizeof *st);
  char *known = tc_xcalloc((size_t)na + 1, 1);
  bool ok = true;
  for (int i = 0; i < v->nupper; i++) {
    int a = v->upper[i];
    int64_t e = g->axes[a].extent;
    /* the vector starts at a multiple of w (at 0 when the dim is w long) */
    st[a] = vs_make(i == dim, i == dim ? (e == w ? 0 : w) : 1, 0, e - 1, w);
    known[a] = 1;
  }
  /* 1. every axis, from the upper ones down; no range check the walk makes
   * may split a vector */
  for (int i = g->nxf - 1; i >= 0 && ok; i--) {
    const tc_xform *x = &g->xf[i];
    vstate o[TC_XF_MAX_OUT], r[2];
    for (int k = 0; k < x->nout; k++)
      o[k] = known[x->out[k]] ? st[x->out[k]] : vs_make(0, 1, 0, g->axes[x->out[k]].extent - 1, w);
    switch ((int)x->kind) {
      case TC_XF_SPLIT: {
        int64_t c[2] = {g->axes[x->out[1]].extent, 1};
        r[0] = vs_sum(o, c, 2, w);
        break;
      }
      case TC_XF_RESIZE: {
        vstate s = o[0];
        s.g = gcd64(s.g, gmul(x->left, s.d));
        s.lo = sadd(s.lo, -x->left), s.hi = sadd(s.hi, -x->left);
        r[0] = s.opaque ? vs_opaque(s.lo, s.hi) : vs_norm(s, w);
        break;
      }
      case TC_XF_EMBED: r[0] = vs_sum(o, x->coeff, x->nout, w); break;
      case TC_XF_MERGE: {
        int64_t ie = g->axes[x->in[1]].extent;
        r[0] = vs_div(o[0], ie, w);
        r[1] = vs_mod(o[0], ie, w);
        break;
      }
      case TC_XF_BROADCAST: r[0] = vs_mod(o[0], g->axes[x->in[0]].extent, w); break;
      case TC_XF_CONSTDIM: r[0] = vs_make(0, 0, x->factor, x->factor, w); break;
      case TC_XF_ADDDIM: break;
      default: { /* swizzles: only when nothing moves */
        bool still = true;
        for (int k = 0; k < x->nout; k++) still &= !o[k].opaque && o[k].k == 0 && o[k].d == 1;
        for (int k = 0; k < x->nin; k++) {
          int64_t e = g->axes[x->in[k]].extent;
          r[k] = still ? vs_make(0, 1, 0, e - 1, w) : vs_opaque(0, e - 1);
        }
        break;
      }
    }
    bool bijective = x->kind == TC_XF_XOR || x->kind == TC_XF_CUTE;
    for (int k = 0; k < x->nin; k++) {
      int64_t e = g->axes[x->in[k]].extent;
      if (!bijective && (straddles(&r[k], w, 0) || straddles(&r[k], w, e))) ok = false;
      /* outside [0, e) the whole vector is invalid and never read: at the
       * points that matter the value lies in [0, e) */
      if (r[k].lo < 0) r[k].lo = 0;
      if (r[k].hi > e - 1) r[k].hi = e - 1;
      if (r[k].lo > r[k].hi) r[k].lo = r[k].hi = 0;
      r[k] = r[k].opaque ? vs_opaque(r[k].lo, r[k].hi) : vs_norm(r[k], w);
      st[x->in[k]] = r[k];
      known[x->in[k]] = 1;
    }
  }
  if (!ok) {
    free(st), free(known);
    return false;
  }
  /* 2. the offset must move one element per step from a multiple of w:
   * either read off the memory axes ... */
  bool by_roots = true;
  int64_t k = 0, al = 0;
  for (int i = 0; i < v->nlower && by_roots; i++) {
    int a = v->lower[i];
    vstate s = known[a] ? st[a] : vs_make(0, 0, 0, 0, w);
    if (s.opaque || s.d != 1) by_roots = false;
    k = cadd(k, cmul(v->lower_stride[i], s.k, &by_roots), &by_roots);
    al = gcd64(al, gmul(s.g, v->lower_stride[i]));
  }
  by_roots = by_roots && k == 1 && (al == 0 || al % w == 0);
  /* ... or off the collapsed linear form (merges recombined in order) */
  bool by_form = !by_roots;
  if (by_form) {
    linform L;
    linform_build(v, &L);
    k = 0, al = gcd64(0, L.cst);
    for (int a = 0; a < na && by_form; a++) {
      if (L.consumed[a] || L.coef[a] == 0) continue;
      vstate s = known[a] ? st[a] : vs_make(0, 0, 0, 0, w);
      if (s.opaque || s.d != 1) by_form = false;
      k = cadd(k, cmul(L.coef[a], s.k, &by_form), &by_form);
      al = gcd64(al, gmul(s.g, L.coef[a]));
    }
    for (int i = 0; i < L.nt && by_form; i++) {
      const oterm *t = &L.t[i];
      vstate m = known[t->axis] ? st[t->axis] : vs_make(0, 0, 0, 0, w);
      int64_t below = 1;
      for (int r = 0; r < (t->merge ? t->nr : 1) && by_form; r++) {
        vstate dg = below == 1 ? m : vs_div(m, below, w);
        if (t->merge && r + 1 < t->nr) dg = vs_mod(dg, t_ext(&L, t, r), w);
        if (dg.opaque || dg.d != 1) by_form = false;
        k = cadd(k, cmul(t_c(&L, t, r), dg.k, &by_form), &by_form);
        al = gcd64(al, gmul(dg.g, t_c(&L, t, r)));
        if (t->merge) below = smul(below, t_ext(&L, t, r));
      }
    }
    by_form = by_form && k == 1 && (al == 0 || al % w == 0);
    lf_free(&L);
  }
  free(st), free(known);
  return by_roots || by_form;
}

int tc_view_vector_width(const tc_view *v, int dim, int elem_bytes, int max_bytes) {
  if (!valid_dim(v, dim) || elem_bytes < 1) return 1;
  if (max_bytes < 1) max_bytes = 16;
  int cap = max_bytes / elem_bytes;
  if (cap < 1) return 1;
  int w = 1;
  while (w * 2 <= cap) w *= 2;
  int64_t e = tc_view_extent(v, dim);
  for (; w > 1; w /= 2)
    if (e % w == 0 && vector_ok(v, dim, w)) return w;
  return 1;
}


/* ------------------------------------------------------------ text */

static const char *kind_name(const tc_xform *x) {
  switch ((int)x->kind) {
    case TC_XF_SPLIT: return "unmerge";
    case TC_XF_MERGE: return "merge";
    case TC_XF_XOR: return "xor";
    case TC_XF_CUTE: return "swizzle";
    case TC_XF_RESIZE: return x->left <= 0 && x->right <= 0 ? "slice" : "pad";
    case TC_XF_EMBED: return "embed";
    case TC_XF_BROADCAST: return "broadcast";
    case TC_XF_ADDDIM: return "add_dim";
    case TC_XF_CONSTDIM: return "const_dim";
    default: return "?";
  }
}

void tc_view_describe(const tc_view *v, tc_str *out) {
  const tc_dgraph *g = &v->g;
  tc_str_printf(out, "memory:");
  for (int i = 0; i < v->nlower; i++)
    tc_str_printf(out, " a%d{%lld}*%lld", v->lower[i], (long long)g->axes[v->lower[i]].extent,
                  (long long)v->lower_stride[i]);
  tc_str_printf(out, "\n");
  for (int i = 0; i < g->nxf; i++) {
    const tc_xform *x = &g->xf[i];
    tc_str_printf(out, "%s", kind_name(x));
    for (int k = 0; k < x->nin; k++)
      tc_str_printf(out, " a%d{%lld}", x->in[k], (long long)g->axes[x->in[k]].extent);
    tc_str_printf(out, " ->");
    for (int k = 0; k < x->nout; k++)
      tc_str_printf(out, " a%d{%lld}", x->out[k], (long long)g->axes[x->out[k]].extent);
    switch ((int)x->kind) {
      case TC_XF_RESIZE:
        if (x->left <= 0 && x->right <= 0)
          tc_str_printf(out, " [%lld, %lld)", (long long)-x->left,
                        (long long)(g->axes[x->in[0]].extent + x->right));
        else
          tc_str_printf(out, " left %lld right %lld", (long long)x->left, (long long)x->right);
        break;
      case TC_XF_EMBED:
        tc_str_printf(out, " coefficients");
        for (int k = 0; k < x->nout; k++) tc_str_printf(out, " %lld", (long long)x->coeff[k]);
        break;
      case TC_XF_CONSTDIM: tc_str_printf(out, " = %lld", (long long)x->factor); break;
      default: break;
    }
    tc_str_printf(out, "\n");
  }
  tc_str_printf(out, "view:");
  for (int i = 0; i < v->nupper; i++)
    tc_str_printf(out, " %s=a%d{%lld}", v->names[i], v->upper[i], (long long)g->axes[v->upper[i]].extent);
  tc_str_printf(out, "\n");
}
