/* abstract_tensor.c - nvFuser's AbstractTensor for tilec: split / merge /
 * reorder on a free-standing list of axes of a tensor's axis graph.  The
 * transforms go into the fusion's graph like any other; only the tensor's
 * loop domain is left alone until tc_set_loop_domain installs the result. */
#include "abstract_tensor.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tc_status at_fail(const tc_abstract_tensor *at, tc_status s, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The message names the call, the abstract tensor's origin and its axes. */
static tc_status at_fail(const tc_abstract_tensor *at, tc_status s, const char *call, const char *fmt, ...) {
  tc_str d;
  tc_str_init(&d);
  tc_str_printf(&d, "abstract %s[", at->origin);
  for (int i = 0; i < at->n; i++) {
    char b[64];
    tc_str_printf(&d, "%s%s", i ? ", " : "", tc_axis_describe(&at->f->g, at->axes[i], b, sizeof b));
  }
  tc_str_cat(&d, "]");
  va_list ap;
  va_start(ap, fmt);
  tc_status r = tc_vfail_call(at->f, s, call, tc_str_cstr(&d), fmt, ap);
  va_end(ap);
  tc_str_free(&d);
  return r;
}

tc_abstract_tensor *tc_abstract_tensor_new(const tc_tensor *t) {
  if (!t) return NULL;
  tc_abstract_tensor *at = tc_xcalloc(1, sizeof *at);
  at->f = t->f;
  snprintf(at->origin, sizeof at->origin, "%s", t->name);
  at->cap = t->nloop > 8 ? t->nloop : 8;
  at->axes = tc_xmalloc((size_t)at->cap * sizeof(int));
  memcpy(at->axes, t->loop, (size_t)t->nloop * sizeof(int));
  at->n = t->nloop;
  return at;
}

tc_abstract_tensor *tc_abstract_tensor_copy(const tc_abstract_tensor *src) {
  if (!src) return NULL;
  tc_abstract_tensor *at = tc_xcalloc(1, sizeof *at);
  *at = *src;
  at->axes = tc_xmalloc((size_t)at->cap * sizeof(int));
  memcpy(at->axes, src->axes, (size_t)src->n * sizeof(int));
  return at;
}

void tc_abstract_tensor_free(tc_abstract_tensor *at) {
  if (!at) return;
  free(at->axes);
  free(at);
}

int tc_abstract_tensor_rank(const tc_abstract_tensor *at) { return at ? at->n : 0; }

const int *tc_abstract_tensor_axes(const tc_abstract_tensor *at) { return at ? at->axes : NULL; }

int tc_abstract_tensor_axis(const tc_abstract_tensor *at, int pos) {
  int a = at ? tc_norm_axis(pos, at->n) : -1;
  return a < 0 ? -1 : at->axes[a];
}

int64_t tc_abstract_tensor_extent(const tc_abstract_tensor *at, int pos) {
  int a = at ? tc_norm_axis(pos, at->n) : -1;
  return a < 0 ? -1 : at->f->g.axes[at->axes[a]].extent;
}

/* Replaces positions [pos, pos + nold) by repl. */
static void splice(tc_abstract_tensor *at, int pos, int nold, const int *repl, int nnew) {
  int n = at->n - nold + nnew;
  if (n > at->cap) {
    at->cap = 2 * n;
    at->axes = tc_xrealloc(at->axes, (size_t)at->cap * sizeof(int));
  }
  memmove(at->axes + pos + nnew, at->axes + pos + nold, (size_t)(at->n - pos - nold) * sizeof(int));
  if (nnew) memcpy(at->axes + pos, repl, (size_t)nnew * sizeof(int));
  at->n = n;
}

tc_status tc_abstract_split(tc_abstract_tensor *at, int axis, int64_t factor, int inner_split) {
  if (!at) return TC_ERR_ARGUMENT;
  tc_clear_error(at->f);
  int a = tc_norm_axis(axis, at->n);
  if (a < 0) return at_fail(at, TC_ERR_ARGUMENT, "tc_abstract_split", "no axis %d; it has %d", axis, at->n);
  if (factor < 1)
    return at_fail(at, TC_ERR_ARGUMENT, "tc_abstract_split", "axis %d: split factor must be at least 1, got %lld",
                   a, (long long)factor);
  TC_STR_LOCAL(err);
  int o, i;
  if (tc_dg_split(&at->f->g, at->axes[a], factor, inner_split, &o, &i, &err))
    return at_fail(at, TC_ERR_ARGUMENT, "tc_abstract_split", "axis %d: %s", a, tc_str_cstr(&err));
  int repl[2] = {o, i};
  splice(at, a, 1, repl, 2);
  return TC_OK;
}

tc_status tc_abstract_merge(tc_abstract_tensor *at, int outer, int inner) {
  if (!at) return TC_ERR_ARGUMENT;
  tc_clear_error(at->f);
  int x = tc_norm_axis(outer, at->n), y = tc_norm_axis(inner, at->n);
  if (x < 0 || y < 0)
    return at_fail(at, TC_ERR_ARGUMENT, "tc_abstract_merge", "no axis %d; it has %d", x < 0 ? outer : inner,
                   at->n);
  if (x == y) return at_fail(at, TC_ERR_ARGUMENT, "tc_abstract_merge", "axis %d merged with itself", x);
  tc_dgraph *g = &at->f->g;
  tc_ptype px = g->axes[at->axes[x]].ptype, py = g->axes[at->axes[y]].ptype;
  if (px != TC_SERIAL || py != TC_SERIAL)
    return at_fail(at, TC_ERR_SCHEDULE, "tc_abstract_merge",
                   "axes %d and %d are parallelized (%s, %s); merge before parallelizing", x, y,
                   tc_ptype_name(px), tc_ptype_name(py));
  TC_STR_LOCAL(err);
  int out;
  if (tc_dg_merge(g, at->axes[x], at->axes[y], &out, &err))
    return at_fail(at, TC_ERR_ARGUMENT, "tc_abstract_merge", "axes %d, %d: %s", x, y, tc_str_cstr(&err));
  /* as nvFuser: the result takes the place of whichever input comes first */
  int lo = x < y ? x : y, hi = x < y ? y : x;
  splice(at, hi, 1, NULL, 0);
  at->axes[lo] = out;
  return TC_OK;
}

int tc_reorder_list(int *items, int m, int n, const int *old_pos, const int *new_pos, int *bad) {
  int *dst = tc_xmalloc((size_t)(m + 1) * sizeof(int));
  char *taken = tc_xcalloc((size_t)m + 1, 1);
  int rc = 0;
  for (int i = 0; i < m; i++) dst[i] = -1;
  for (int i = 0; i < n && !rc; i++) {
    int o = tc_norm_axis(old_pos[i], m), p = tc_norm_axis(new_pos[i], m);
    if (o < 0 || p < 0) {
      *bad = o < 0 ? old_pos[i] : new_pos[i];
      rc = -1;
    } else if (dst[o] >= 0 || taken[p]) {
      *bad = dst[o] >= 0 ? o : p;
      rc = -2;
    } else {
      dst[o] = p, taken[p] = 1;
    }
  }
  if (!rc) {
    int *out = tc_xmalloc((size_t)(m + 1) * sizeof(int));
    for (int i = 0; i < m; i++)
      if (dst[i] >= 0) out[dst[i]] = items[i];
    int k = 0;
    for (int i = 0; i < m; i++) {
      if (dst[i] >= 0) continue;
      while (taken[k]) k++;
      out[k] = items[i], taken[k] = 1;
    }
    memcpy(items, out, (size_t)m * sizeof(int));
    free(out);
  }
  free(dst), free(taken);
  return rc;
}

tc_status tc_abstract_reorder(tc_abstract_tensor *at, int n, const int *old_pos, const int *new_pos) {
  if (!at) return TC_ERR_ARGUMENT;
  tc_clear_error(at->f);
  if (n < 0 || (n > 0 && (!old_pos || !new_pos)))
    return at_fail(at, TC_ERR_ARGUMENT, "tc_abstract_reorder", "bad arguments: %d pairs", n);
  int bad = 0, rc = tc_reorder_list(at->axes, at->n, n, old_pos, new_pos, &bad);
  if (rc == -1) return at_fail(at, TC_ERR_ARGUMENT, "tc_abstract_reorder", "no axis %d; it has %d", bad, at->n);
  if (rc == -2) return at_fail(at, TC_ERR_ARGUMENT, "tc_abstract_reorder", "axis %d is named twice", bad);
  return TC_OK;
}

/* ---- domain checks shared with schedule.c ------------------------------ */

void tc_axes_derived_from(const tc_dgraph *g, const int *logical, int nlogical, char *is_of) {
  for (int i = 0; i < nlogical; i++) is_of[logical[i]] = 1;
  /* transforms are created after their inputs: one pass in order suffices */
  for (int i = 0; i < g->nxf; i++) {
    const tc_xform *x = &g->xf[i];
    bool all = x->nin > 0;
    for (int k = 0; k < x->nin; k++) all &= is_of[x->in[k]] != 0;
    if (all)
      for (int k = 0; k < x->nout; k++) is_of[x->out[k]] = 1;
  }
}

bool tc_axes_determine(const tc_dgraph *g, const int *known, int nknown, int skip,
                       const int *want, int nwant) {
  char *k = tc_xcalloc((size_t)g->naxes + 1, 1);
  for (int i = 0; i < nknown; i++)
    if (i != skip) k[known[i]] = 1;
  bool changed = true;
  while (changed) {
    changed = false;
    for (int i = 0; i < g->nxf; i++) {
      const tc_xform *x = &g->xf[i];
      bool ins = true, outs = true;
      for (int j = 0; j < x->nin; j++) ins &= k[x->in[j]] != 0;
      for (int j = 0; j < x->nout; j++) outs &= k[x->out[j]] != 0;
      if (ins && !outs && tc_xf_has_forward(x->kind)) {
        for (int j = 0; j < x->nout; j++) k[x->out[j]] = 1;
        changed = true;
      } else if (outs && !ins) {
        for (int j = 0; j < x->nin; j++) k[x->in[j]] = 1;
        changed = true;
      }
    }
  }
  bool all = true;
  for (int i = 0; i < nwant; i++) all &= k[want[i]] != 0;
  free(k);
  return all;
}
