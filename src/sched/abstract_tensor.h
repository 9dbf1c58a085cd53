/* abstract_tensor.h - nvFuser's AbstractTensor: a list of axes of a
 * tensor's axis graph, scheduled with split / merge / reorder without
 * touching any tensor, whose result can then become the tensor's loop
 * domain (tc_set_loop_domain) or allocation domain (tc_set_alloc_domain).
 *
 * This is how a tensor gets a loop domain on a different branch of its
 * axis graph from its allocation domain: LdStMatrixSet (nvFuser's
 * ldmatrix/stmatrix tutorial, docs/ldmatrix.md) schedules the ldmatrix /
 * stmatrix loop domain from the warp tile while the shared-memory buffer
 * is laid out by the bulk-copy swizzle (src/layout/tma_swizzle.h); indexing
 * walks from the one to the other through the logical domain.
 *
 * The public calls (tc_abstract_tensor_new, tc_abstract_split ...) are in
 * tilec.h; this header adds the pieces schedule.c shares. */
#ifndef TC_ABSTRACT_TENSOR_H
#define TC_ABSTRACT_TENSOR_H

#include "../ir/fusion.h"

struct tc_abstract_tensor {
  tc_fusion *f;
  char origin[16];  /* the name of the tensor it was made from, for messages */
  int *axes, n, cap;
};

/* nvFuser's reorder on a list of m items: old_pos[i] moves to new_pos[i]
 * (negative positions count from the end), the others keep their relative
 * order in the free slots.  Rewrites items in place.  Returns 0, or -1 when
 * a position is out of range (*bad = the argument), or -2 when a position
 * is named twice (*bad = the resolved position). */
int tc_reorder_list(int *items, int m, int n, const int *old_pos, const int *new_pos, int *bad);

/* Marks in is_of (size g->naxes, zeroed by the caller) every axis that
 * derives from the given logical axes alone: the roots themselves and the
 * outputs of transforms whose inputs are all marked. */
void tc_axes_derived_from(const tc_dgraph *g, const int *logical, int nlogical, char *is_of);

/* Whether the axes `known` determine every axis in `want`, by the same
 * fixpoint as tc_dg_walk (forward when all inputs are known, backward when
 * all outputs are).  `skip` (or -1) is left out of `known`. */
bool tc_axes_determine(const tc_dgraph *g, const int *known, int nknown, int skip,
                       const int *want, int nwant);

#endif
