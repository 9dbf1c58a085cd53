/* swizzle_amd.c - the AMD shared-memory (LDS) swizzles as scheduling calls
 * on a tensor's loop axes: tc_swizzle_amd and tc_swizzle_matrix_core.  The
 * swizzle itself, a transform of the axis graph, is src/layout/amd_swizzle.c. */
#include <stdio.h>

#include "../ir/fusion.h"
#include "../layout/amd_swizzle.h"

static tc_status swizzle_axes(tc_tensor *t, int row, int col, const tc_amd_swizzle_params *p,
                              const char *call) {
  int r = tc_norm_axis(row, t->nloop), c = tc_norm_axis(col, t->nloop);
  if (r < 0 || c < 0)
    return tc_tensor_fail(t, TC_ERR_ARGUMENT, call, "%s has no loop axis %d; it has %d", t->name,
                          r < 0 ? row : col, t->nloop);
  if (r == c)
    return tc_tensor_fail(t, TC_ERR_ARGUMENT, call, "%s axis %d is both the row and the column", t->name, r);
  TC_STR_LOCAL(err);
  int ro, co;
  if (tc_dg_amd_swizzle(&t->f->g, t->loop[r], t->loop[c], p, &ro, &co, &err))
    return tc_tensor_fail(t, TC_ERR_SCHEDULE, call, "%s axes %d (rows), %d (columns): %s", t->name, r, c, tc_str_cstr(&err));
  t->loop[r] = ro, t->loop[c] = co;
  return TC_OK;
}

tc_status tc_swizzle_amd(tc_tensor *t, int row, int col, int vec, int per_phase, int max_phase) {
  tc_status st = tc_tensor_check_computed(t, "tc_swizzle_amd");
  if (st) return st;
  tc_amd_swizzle_params p = {vec, per_phase, max_phase};
  return swizzle_axes(t, row, col, &p, "tc_swizzle_amd");
}

tc_status tc_swizzle_matrix_core(tc_tensor *t, int row, int col, int vec) {
  tc_status st = tc_tensor_check_computed(t, "tc_swizzle_matrix_core");
  if (st) return st;
  int c = tc_norm_axis(col, t->nloop);
  if (c < 0)
    return tc_tensor_fail(t, TC_ERR_ARGUMENT, "tc_swizzle_matrix_core", "%s has no loop axis %d; it has %d",
                          t->name, col, t->nloop);
  TC_STR_LOCAL(err);
  tc_amd_swizzle_params p;
  int bits = (int)tc_dtype_size(t->dtype) * 8;
  if (tc_amd_matrix_core_params(bits, t->f->g.axes[t->loop[c]].extent, vec, &p, &err))
    return tc_tensor_fail(t, TC_ERR_SCHEDULE, "tc_swizzle_matrix_core", "%s (%s): %s", t->name,
                          tc_dtype_name(t->dtype), tc_str_cstr(&err));
  return swizzle_axes(t, row, col, &p, "tc_swizzle_matrix_core");
}
