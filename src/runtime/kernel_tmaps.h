/* kernel_tmaps.h - internal: the tensor maps of a compiled CUDA kernel
 * with bulk tensor copies (TMA), for the tests.  Not part of tilec.h. */
#ifndef TC_KERNEL_TMAPS_H
#define TC_KERNEL_TMAPS_H

#include "tilec/tilec.h"
#include "runtime.h"

/* The tensor maps tc_kernel_run passes to k's launch after its buffers,
 * in the order of its tc_tmap parameters: returns their number and sets
 * *maps (may be NULL) to them.  0 for kernels without bulk tensor copies
 * and for those whose maps cannot be described, where *why (may be NULL)
 * gets the reason (else ""). */
int tc_kernel_tensor_maps(const tc_kernel *k, const tc_rt_tmap **maps, const char **why);

#endif
