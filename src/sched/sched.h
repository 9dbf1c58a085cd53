/* sched.h - scheduling helpers shared with the lowering (the public calls
 * are in tilec.h). */
#ifndef TC_SCHED_H
#define TC_SCHED_H

#include <stdbool.h>

#include "../ir/fusion.h"

bool tc_ptype_is_thread(tc_ptype p);
bool tc_ptype_is_block(tc_ptype p);
bool tc_ptype_is_device(tc_ptype p);
/* Checks that a vectorized axis of `extent` elements of t's dtype fits a
 * vector access (power of two, at most 16 bytes). */
tc_status tc_check_vector_width(const tc_tensor *t, int axis, int64_t extent);
/* Checks that t can be inlined into consumer c at pos (axes map, parallel
 * types agree, no vectorized axis shared). */
tc_status tc_check_inline(const tc_tensor *t, const tc_tensor *c, int pos, const char *call);

/* ---- the swizzle swap (swizzle_swap.c; the public call is tc_swizzle_swap) */

/* Whether tc_swizzle_swap would rewrite t's copy; when not, why says why. */
bool tc_swizzle_swap_legal(const tc_tensor *t, char *why, size_t cap);
/* False when TILEC_SWIZZLE_SWAP is 0, off, no or false. */
bool tc_swizzle_swap_env_enabled(void);
/* Swaps every copy of f where it is legal and needed (tc_compile does this
 * for TC_TARGET_HIP), recording in *undo how to put the schedule back;
 * returns the number of copies swapped.  tc_swizzle_swap_restore undoes
 * the swaps (the graph drops the axes they made) and frees undo. */
typedef struct tc_swap_undo tc_swap_undo;
int tc_swizzle_swap_auto(tc_fusion *f, tc_swap_undo **undo);
void tc_swizzle_swap_restore(tc_fusion *f, tc_swap_undo *undo);

#endif
