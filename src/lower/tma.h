/* tma.h - bulk tensor (TMA) tile copies in lowering (CUDA sm_90+ only).
 *
 * A set with load/store type TC_LDST_BULK_TENSOR between a 2-D global
 * tensor and a shared one becomes, on CUDA for sm_90 and later, one
 * cp.async.bulk.tensor.2d per box instead of an element copy.  The box is
 * found by evaluation, not by pattern: the innermost L of the statement's
 * own loops (tried from the most down) must visit exactly an R x C block
 * of the global tensor, C = S / element bytes for a swizzle S of 32, 64
 * or 128 bytes, at the shared positions the TMA writes it (row-major rows
 * of S bytes, 16-byte chunk c of row r at c ^ x(r), on a shared address
 * aligned to the pattern); the loops outside the box issue one copy each.
 * The copy must not depend on tidx (thread tidx == 0 of each TIDy/TIDz
 * row issues it).  A copy into a ring's slot (src/lower/circular.c ran
 * first and set tc_ktma.bar and bar_slot) keeps its slot's mbarrier,
 * its loops stop at the ring loop's child that holds it, and its
 * predicate (the tile inside the ring loop) becomes the guard of the
 * whole copy; it does not wait (the ring loop does).  On OpenCL, and for
 * older archs, the element copy stays (it moves the same elements).  See
 * docs/ldmatrix.md. */
#ifndef TC_TMA_H
#define TC_TMA_H

#include "kernel.h"

/* tc_ktma.kind (tc_knode.stmt.tma) */
enum { TC_TMA_NONE = 0, TC_TMA_LOAD = 1, TC_TMA_STORE = 2 };

tc_status tc_tma_lower(tc_kir *k, tc_target target, const char *arch);

#endif
