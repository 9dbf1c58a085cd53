/* allocation.c - the per-tensor allocation table of a compiled kernel (see
 * allocation.h): kernel parameters as their global buffers, on-chip
 * tensors as lowering allocated them (lower.c's allocate(), by nvFuser's
 * allocation rules). */
#include "allocation.h"

#include <string.h>

#include "kernel.h"

_Static_assert(TC_KALLOC_LISTED == sizeof(((tc_allocation *)0)->positions) / sizeof(int),
               "tc_kalloc lists as many allocated axes as tc_allocation holds");

/* A kernel parameter: the caller's row-major buffer of t's logical shape. */
static tc_allocation param(const tc_fusion *f, const tc_tensor *t) {
  tc_allocation a;
  memset(&a, 0, sizeof a);
  a.memory = TC_MEM_GLOBAL;
  a.naxes = t->nlogical;
  a.elements = 1;
  for (int j = 0; j < t->nlogical; j++) {
    int64_t e = tc_logical_extent(t, j);
    if (j < TC_KALLOC_LISTED) a.positions[j] = j, a.extents[j] = e;
    a.elements = tc_sat_mul(a.elements, e);
  }
  a.bytes = tc_sat_mul(a.elements, (int64_t)tc_dtype_size(t->dtype));
  return a;
}

static tc_allocation on_chip(const tc_fusion *f, const tc_kalloc *ka) {
  const tc_tensor *t = ka->t;
  const int *ax = t->alloc_set ? t->alloc : t->loop;
  tc_allocation a;
  memset(&a, 0, sizeof a);
  a.memory = t->mem;
  a.naxes = ka->naxes;
  for (int j = 0; j < ka->naxes && j < TC_KALLOC_LISTED; j++) {
    a.positions[j] = ka->axis_pos[j];
    a.extents[j] = f->g.axes[ax[ka->axis_pos[j]]].extent;
  }
  a.elements = ka->elems;
  a.bytes = tc_sat_mul(ka->elems, (int64_t)tc_dtype_size(t->dtype));
  if (t->mem == TC_MEM_SHARED) a.offset = ka->offset;
  if (t->mem == TC_MEM_TENSOR)
    a.lanes = ka->lanes, a.columns = ka->used_columns, a.columns_allocated = ka->columns;
  return a;
}

int tc_kir_tensor_allocs(const tc_kir *k, tc_tensor_alloc **out) {
  int n = k->nparams + k->nallocs;
  tc_tensor_alloc *tab = tc_xcalloc((size_t)n + 1, sizeof *tab);
  for (int i = 0; i < k->nparams; i++)
    tab[i].tensor = k->params[i]->id, tab[i].a = param(k->f, k->params[i]);
  for (int i = 0; i < k->nallocs; i++) {
    tab[k->nparams + i].tensor = k->allocs[i].t->id;
    tab[k->nparams + i].a = on_chip(k->f, &k->allocs[i]);
  }
  *out = tab;
  return n;
}

tc_status tc_tensor_alloc_find(const tc_tensor_alloc *tab, int n, const char *kernel,
                               const tc_tensor *t, tc_allocation *out) {
  for (int i = 0; i < n; i++)
    if (tab[i].tensor == t->id) {
      *out = tab[i].a;
      return TC_OK;
    }
  return tc_fail(t->f, TC_ERR_ARGUMENT,
                 "tc_kernel_tensor_allocation: kernel %s has no tensor %s: it is neither a "
                 "parameter (an input or output) nor computed on the way to an output of the "
                 "fusion as it was at tc_compile; ask about a tensor that the kernel reads, writes "
                 "or computes", kernel, t->name);
}
