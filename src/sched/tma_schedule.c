/* tma_schedule.c - scheduling a tensor as bulk tensor copy (TMA) boxes with
 * a swizzled shared-memory layout: nvFuser's tmaSwizzleSharedMemory,
 * scheduleTMALoadForMma and scheduleTMAStoreForMmaOutput for tilec.  The
 * layout itself is the transforms of src/layout/tma_swizzle.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/fusion.h"
#include "../layout/tma_swizzle.h"

static tc_status tma_fail(const tc_tensor *t, tc_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static tc_status tma_fail(const tc_tensor *t, tc_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tc_status r = tc_tensor_vfail(t, s, "tc_schedule_tma_swizzle", fmt, ap);
  va_end(ap);
  return r;
}

tc_tma_swizzle tc_tma_swizzle_for(const tc_tensor *t) {
  if (!t || t->nloop < 1) return TC_TMA_SWIZZLE_NONE;
  int64_t bytes = t->f->g.axes[t->loop[t->nloop - 1]].extent * (int64_t)tc_dtype_size(t->dtype);
  if (bytes % 128 == 0) return TC_TMA_SWIZZLE_128B;
  if (bytes % 64 == 0) return TC_TMA_SWIZZLE_64B;
  if (bytes % 32 == 0) return TC_TMA_SWIZZLE_32B;
  return TC_TMA_SWIZZLE_NONE;
}

tc_status tc_schedule_tma_swizzle(tc_tensor *t, tc_tma_swizzle sw) {
  tc_clear_error(t->f);
  if (t->is_input)
    return tma_fail(t, TC_ERR_SCHEDULE, "%s is a fusion input and has no loop domain to schedule",
                    t->name);
  if (sw != TC_TMA_SWIZZLE_NONE && sw != TC_TMA_SWIZZLE_32B && sw != TC_TMA_SWIZZLE_64B &&
      sw != TC_TMA_SWIZZLE_128B)
    return tma_fail(t, TC_ERR_ARGUMENT, "unknown swizzle %d (0, 32, 64 or 128 bytes)", (int)sw);
  if (t->nloop < 2)
    return tma_fail(t, TC_ERR_SCHEDULE, "%s needs at least two loop axes [rows, columns] for a box",
                    t->name);
  tc_dgraph *g = &t->f->g;
  int n = t->nloop, rows = t->loop[n - 2], cols = t->loop[n - 1];
  if (sw != TC_TMA_SWIZZLE_NONE) {
    TC_STR_LOCAL(err);
    int64_t esz = (int64_t)tc_dtype_size(t->dtype), row_elems = (int64_t)sw / esz;
    for (int k = 0; k < 2; k++) {
      int a = k ? cols : rows;
      if (g->axes[a].ptype != TC_SERIAL)
        return tma_fail(t, TC_ERR_SCHEDULE, "%s loop axis %d is %s; a box axis must be serial",
                        t->name, n - 2 + k, tc_ptype_name(g->axes[a].ptype));
    }
    if (g->axes[cols].extent % row_elems != 0)
      return tma_fail(t, TC_ERR_SCHEDULE,
                      "%s's inner loop extent %lld is not a multiple of the %lld %s elements of a "
                      "%d-byte swizzled row (tc_tma_swizzle_for picks one that fits)",
                      t->name, (long long)g->axes[cols].extent, (long long)row_elems,
                      tc_dtype_name(t->dtype), (int)sw);
    if (g->axes[rows].extent % 8 != 0)
      return tma_fail(t, TC_ERR_SCHEDULE,
                      "%s's box has %lld rows; a swizzled box needs a multiple of 8",
                      t->name, (long long)g->axes[rows].extent);
    /* [.., rows, cols] -> [.., boxes, rows, row_elems] -> the swizzled box */
    int nbox, inner, box[TC_TMA_BOX_NAXES];
    if (tc_dg_split(g, cols, row_elems, 1, &nbox, &inner, &err) ||
        tc_tma_swizzle_box(g, rows, inner, (int)sw, (int)esz, box, &err))
      return tma_fail(t, TC_ERR_SCHEDULE, "%s", tc_str_cstr(&err));
    int *loop = tc_xmalloc((size_t)(n + 4) * sizeof(int));
    memcpy(loop, t->loop, (size_t)(n - 2) * sizeof(int));
    loop[n - 2] = nbox;
    memcpy(loop + n - 1, box, sizeof box);
    free(t->loop);
    t->loop = loop, t->nloop = n + 4;
  }
  if (t->mem != TC_MEM_GLOBAL) {
    tc_tensor_set_alloc(t, t->loop, t->nloop);
  }
  return TC_OK;
}
