/* layout_eval.c - a tensor's layout split into its reshape and swizzle
 * parts and evaluated at a coordinate: tc_layout_split and tc_layout_eval.
 * The split itself, on the axis graph, is src/layout/reshape_swizzle.c. */
#include <stdlib.h>
#include <string.h>

#include "../ir/fusion.h"
#include "../layout/reshape_swizzle.h"

static int layout_of(const tc_tensor *t, const int **alloc) {
  if (t->alloc_set) {
    *alloc = t->alloc;
    return t->nalloc;
  }
  if (t->mem == TC_MEM_GLOBAL || t->is_input) {
    *alloc = t->logical;
    return t->nlogical;
  }
  *alloc = t->loop;
  return t->nloop;
}

tc_status tc_layout_split(const tc_tensor *t, tc_layout_parts *parts) {
  tc_fusion *f = t->f;
  tc_clear_error(f);
  if (!parts) return tc_fail(f, TC_ERR_ARGUMENT, "tc_layout_split: parts is NULL");
  if (t->is_scalar)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_layout_split: %s is the scalar input %s: it has no layout",
                   t->name, t->label);
  memset(parts, 0, sizeof *parts);
  const int *alloc;
  int na = layout_of(t, &alloc);
  tc_rs_split s;
  TC_STR_LOCAL(err);
  if (tc_rs_split_layout(&f->g, t->logical, t->nlogical, alloc, na, &s, &err))
    return tc_fail(f, TC_ERR_SCHEDULE, "tc_layout_split: %s's layout: %s", t->name, tc_str_cstr(&err));
  parts->nalloc = na;
  for (int i = 0; i < na && i < 16; i++) parts->extents[i] = f->g.axes[alloc[i]].extent;
  parts->rows = 1;
  for (int i = 0; i + 1 < t->nlogical; i++) parts->rows *= f->g.axes[t->logical[i]].extent;
  parts->cols = f->g.axes[t->logical[t->nlogical - 1]].extent;
  parts->nswizzles = s.nswizzles;
  parts->grain = s.grain;
  parts->padded = s.padded;
  return TC_OK;
}

tc_status tc_layout_eval(const tc_tensor *t, const int64_t *coords, int64_t *alloc_coords,
                         int64_t *reshape_coords, int64_t *swizzled_col) {
  tc_fusion *f = t->f;
  tc_clear_error(f);
  if (!coords) return tc_fail(f, TC_ERR_ARGUMENT, "tc_layout_eval: coords is NULL");
  if (t->is_scalar)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_layout_eval: %s is the scalar input %s: it has no layout",
                   t->name, t->label);
  for (int i = 0; i < t->nlogical; i++) {
    int64_t e = f->g.axes[t->logical[i]].extent;
    if (coords[i] < 0 || coords[i] >= e)
      return tc_fail(f, TC_ERR_ARGUMENT, "tc_layout_eval: coordinate %d of %s is %lld, outside [0, %lld)",
                     i, t->name, (long long)coords[i], (long long)e);
  }
  const int *alloc;
  int na = layout_of(t, &alloc);
  tc_rs_split s;
  TC_STR_LOCAL(err);
  if (tc_rs_split_layout(&f->g, t->logical, t->nlogical, alloc, na, &s, &err))
    return tc_fail(f, TC_ERR_SCHEDULE, "tc_layout_eval: %s's layout: %s", t->name, tc_str_cstr(&err));
  tc_epool *p = tc_epool_new();
  const tc_expr **lv = tc_xcalloc((size_t)t->nlogical + 1, sizeof *lv);
  const tc_expr **fv = tc_xcalloc((size_t)na + 1, sizeof *fv), **rv = tc_xcalloc((size_t)na + 1, sizeof *rv);
  for (int i = 0; i < t->nlogical; i++) lv[i] = tc_e_const(p, coords[i]);
  tc_rs_forward(p, &f->g, t->logical, t->nlogical, alloc, na, lv, true, fv);
  tc_rs_forward(p, &f->g, t->logical, t->nlogical, alloc, na, lv, false, rv);
  int64_t none = 0;
  for (int k = 0; k < na; k++) {
    if (alloc_coords) alloc_coords[k] = tc_e_eval(fv[k], &none);
    if (reshape_coords) reshape_coords[k] = tc_e_eval(rv[k], &none);
  }
  tc_status st = TC_OK;
  if (swizzled_col) {
    /* s_row(col) = R^-1(F(row, col)).col, walked back through the reshape
     * part in a copy of the graph */
    tc_dgraph g2;
    tc_rs_graph_copy(&g2, &f->g);
    int *rax = tc_xmalloc(((size_t)na + 1) * sizeof(int));
    if (tc_rs_reshape_axes(&g2, t->logical, t->nlogical, alloc, na, rax, &err)) {
      st = tc_fail(f, TC_ERR_SCHEDULE, "tc_layout_eval: %s's reshape part: %s", t->name, tc_str_cstr(&err));
    } else {
      const tc_expr **vals = tc_xcalloc((size_t)g2.naxes + 1, sizeof *vals);
      for (int k = 0; k < na; k++) vals[rax[k]] = tc_e_const(p, tc_e_eval(fv[k], &none));
      tc_dg_walk(p, &g2, vals, NULL);
      const tc_expr *c = vals[t->logical[t->nlogical - 1]];
      if (c) *swizzled_col = tc_e_eval(c, &none);
      else st = tc_fail(f, TC_ERR_SCHEDULE, "tc_layout_eval: %s's reshape part does not give the column back", t->name);
      free(vals);
    }
    free(rax);
    tc_dg_free(&g2);
  }
  free(lv), free(fv), free(rv);
  tc_epool_free(p);
  return st;
}
