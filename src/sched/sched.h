/* sched.h - scheduling helpers shared with the lowering (the public calls
 * are in tilec.h). */
#ifndef TC_SCHED_H
#define TC_SCHED_H

#include <stdbool.h>
#include <stdint.h>

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

/* Gives dst the loop transforms of src (tc_propagate_transforms for one
 * tensor): dst's logical axis j stands for src's axis src_of[j] (NULL: j);
 * the ranks must agree.  Errors name call. */
tc_status tc_replay_like(tc_tensor *dst, const tc_tensor *src, const int *src_of, const char *call);

/* ---- the matmul schedules (matmul_sched.c, matmul_mma.c) -------------- */

/* Gives every tensor but out and skip[0..nskip) (the matmul's accumulator,
 * operands and their copies) the loop domain of the output out and
 * inlines each as deep into its consumers as it goes, so the epilogue
 * runs on the accumulators' registers; inline_out: out too (it is no
 * output, only the operand of the reduction that is). */
tc_status tc_matmul_epilogue_like_out(tc_fusion *f, tc_tensor *out, tc_tensor *const *skip, int nskip,
                                      bool inline_out);
/* tc_schedule_matmul with tiles->macro == TC_MACRO_MMA_M16N8K16, after
 * its checks of the fusion: warps of mma.sync m16n8k16 (matmul_mma.c);
 * nepi epilogue ops for the note. */
tc_status tc_schedule_matmul_mma(tc_fusion *f, tc_target target, tc_op *mm, tc_tensor *out,
                                 const tc_matmul_tiles *tl, int nepi);

/* An operand tile in shared memory, computed at the accumulator's Ko:
 * its n axes past base (n <= 16) are reordered by to[] (to[i] the new
 * place of axis base + i) so that those it broadcasts along come first
 * (left serial: they run once) and its nown own axes follow in the order
 * of the tile's layout; those are merged and spread over the block's
 * groups (TIDy) of lanes (TIDx) threads, so the merged order is the
 * shared layout (matmul_mma.c). */
tc_status tc_matmul_spread(tc_tensor *x, int base, int n, int nown, const int *to, int64_t groups,
                           int64_t lanes);
/* tc_schedule_matmul with tiles->macro == TC_MACRO_WGMMA: warp groups of
 * wgmma m64nNk16 over K-major shared tiles (matmul_wgmma.c). */
tc_status tc_schedule_matmul_wgmma(tc_fusion *f, tc_target target, tc_op *mm, tc_tensor *out,
                                   const tc_matmul_tiles *tl, int nepi);

/* ---- axes across tensors (axis_map.c) ---------------------------------- */

/* The signatures of the axes made from t's logical axes when logical axis
 * i stands for reference position pos[i] (NULL: i); a tc_xmalloc'd array
 * over the fusion's axes, 0 where an axis is not made from t's.  Axes of
 * two tensors whose signatures, taken with positions that the ops relate,
 * are equal iterate the same way. */
uint64_t *tc_tensor_sigs(const tc_tensor *t, const int *pos);
/* For each logical axis j of consumer, the logical axis of producer that
 * it reads (the op's axis map; the identity if consumer does not read
 * producer). */
void tc_edge_positions(const tc_tensor *producer, const tc_tensor *consumer, int *pos);
/* The signatures of producer's and consumer's axes in common terms, through
 * the op that makes consumer; the caller frees both. */
void tc_edge_sigs(const tc_tensor *producer, const tc_tensor *consumer, uint64_t **psig,
                  uint64_t **csig);
/* Whether axis a (signatures sa) and axis b (signatures sb) match: made
 * the same way from related logical axes, with equal extents. */
bool tc_axes_match(const tc_dgraph *g, const uint64_t *sa, int a, const uint64_t *sb, int b);
/* For every tensor t of f, the logical axis of ref that each of t's
 * logical axes corresponds to: entry t->id * 16 + i, -1 where none.  The
 * correspondence follows the ops, breadth-first from ref through computed
 * tensors before fusion inputs, so each tensor takes the map of its
 * nearest path; a part of the fusion no op connects to ref corresponds by
 * position where the rank and extents agree.  The caller frees it. */
int *tc_ref_positions(const tc_fusion *f, const tc_tensor *ref);

/* ---- the swizzle swap (swizzle_swap.c; the public call is tc_swizzle_swap) */

/* Whether tc_swizzle_swap would rewrite t's copy; when not, why says why. */
bool tc_swizzle_swap_legal(const tc_tensor *t, tc_str *why);
/* False when TILEC_SWIZZLE_SWAP is 0, off, no or false. */
bool tc_swizzle_swap_env_enabled(void);
/* Swaps every copy of f where it is legal and needed (tc_compile does this
 * where the target asks for it, tc_target_info.swizzle_swap: HIP),
 * recording in *undo how to put the schedule back; returns the number of
 * copies swapped.  tc_swizzle_swap_restore undoes the swaps (the graph
 * drops the axes they made) and frees undo. */
typedef struct tc_swap_undo tc_swap_undo;
int tc_swizzle_swap_auto(tc_fusion *f, tc_swap_undo **undo);
void tc_swizzle_swap_restore(tc_fusion *f, tc_swap_undo *undo);

/* ---- recomputation (recompute.c) --------------------------------------- */

/* Gives every intermediate of f that is neither a reduction nor an output
 * one copy of its op per consumer (consumers first, so a copy's own
 * operands are split in turn): inlined, each copy is computed inside its
 * consumer's loops, and nothing but the reductions' results is held
 * between the passes over a row.  Returns the number of copies made. */
int tc_recompute_intermediates(tc_fusion *f);

#endif
