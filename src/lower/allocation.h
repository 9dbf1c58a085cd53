/* allocation.h - what a compiled kernel tells about each tensor's
 * allocation (tc_kernel_tensor_allocation in tilec.h): a table made from
 * the kernel IR at tc_compile, kept with the kernel and in its cache entry
 * (the fusion may change or be freed after the compile), and the lookup
 * by tensor. */
#ifndef TC_ALLOCATION_H
#define TC_ALLOCATION_H

#include "tilec/tilec.h"

struct tc_kir;

typedef struct tc_tensor_alloc {
  int tensor;              /* the tensor's id in its fusion */
  tc_allocation a;
} tc_tensor_alloc;

/* One entry per kernel parameter and per allocated tensor of k; returns
 * their number, *out (tc_xmalloc'd) the entries. */
int tc_kir_tensor_allocs(const struct tc_kir *k, tc_tensor_alloc **out);

/* Fills *out with t's entry of the n in tab, for kernel `kernel` (its name,
 * for the message); TC_ERR_ARGUMENT with a message on t's fusion when
 * there is none. */
tc_status tc_tensor_alloc_find(const tc_tensor_alloc *tab, int n, const char *kernel,
                               const tc_tensor *t, tc_allocation *out);

#endif
