/* sched.h - scheduling helpers shared with the lowering (the public calls
 * are in tilec.h). */
#ifndef TC_SCHED_H
#define TC_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "../ir/fusion.h"
#include "../target/target.h"

bool tc_ptype_is_thread(tc_ptype p);
bool tc_ptype_is_block(tc_ptype p);
bool tc_ptype_is_device(tc_ptype p);
/* Checks that a vectorized axis of `extent` elements of t's dtype fits a
 * vector access (power of two, at most 16 bytes). */
/* The extent n of axis ax as text for a schedule note: the number, or
 * over the size variables where it depends on one, with n its bound
 * ("N (at most 4096)", "ceil(N / 1024) (at most 4)"); returns buf. */
const char *tc_sched_extent_text(const tc_fusion *f, int ax, int64_t n, char *buf, size_t cap);
tc_status tc_check_vector_width(const tc_tensor *t, int axis, int64_t extent);
/* Checks that t can be inlined into consumer c at pos (axes map, parallel
 * types agree, no vectorized axis shared). */
tc_status tc_check_inline(const tc_tensor *t, const tc_tensor *c, int pos, const char *call);

/* Gives dst the loop transforms of src (tc_propagate_transforms for one
 * tensor): dst's logical axis j stands for src's axis src_of[j] (NULL: j);
 * the ranks must agree.  Errors name call. */
tc_status tc_replay_like(tc_tensor *dst, const tc_tensor *src, const int *src_of, const char *call);

/* ---- the matmul schedules (matmul_sched.c, matmul_mma.c, matmul_mfma.c) - */

/* Gives every tensor but out and skip[0..nskip) (the matmul's accumulator,
 * operands and their copies) the loop domain of the output out and
 * inlines each as deep into its consumers as it goes, so the epilogue
 * runs on the accumulators' registers; inline_out: out too (it is no
 * output, only the operand of the reduction that is). */
tc_status tc_matmul_epilogue_like_out(tc_fusion *f, tc_tensor *out, tc_tensor *const *skip, int nskip,
                                      bool inline_out);
/* The matmul scheduler's tiles (tc_schedule_auto, tc_schedule_matmul
 * without tiles) for M x N x K of operands of `size` bytes, rax 1 with a
 * reduction of the rows, 0 of the columns, -1 without (docs/matmul.md):
 * FMA tiles, what the command line reports as the heuristic's choice. */
tc_matmul_tiles tc_matmul_auto_tiles(int64_t m, int64_t n, int64_t k, int size, int rax);
/* Whether operand i (0: A, 1: B) of a matmul, tensor v, has K innermost
 * in memory: a 2-D fusion input laid out [rows, K] (A [M, K], B given as
 * [N, K]), or one read through a coordinate-transform view whose element
 * at K + 1 is the next one after that at K (NHWC's channels, innermost,
 * are part of a convolution's K). */
bool tc_matmul_operand_k_inner(const tc_tensor *v, int i);
/* The scheduler's whole choice, what tc_schedule_auto uses and the
 * command line reports: tc_matmul_auto_tiles, or for f16 / bf16 operands
 * (dtype t) without a reduction (rax -1) or a prologue on an operand,
 * wgmma tiles on CUDA sm_90a (M and N at least 64), else mma.sync tiles
 * with rings of 2 or 3 stages on CUDA sm_80+ and MFMA tiles
 * (tc_mfma_auto_tiles) on HIP; for a size variable m, n or k is its
 * bound; where those do not serve, *not_what names the op type and *why
 * says why for the note (else both NULL). */
tc_matmul_tiles tc_matmul_auto_choice(tc_target target, const char *arch, tc_dtype t, int64_t m,
                                      int64_t n, int64_t k, int rax, bool prologue,
                                      const char **not_what, const char **why);
/* The prefetch distance of a ring of `stages` slots (src/lower/circular.c):
 * how many iterations ahead its copies are issued.  stages - 1, or
 * stages - 2 where the ring's reader is a wgmma whose commit group is left
 * running into the next iteration (async_reader, wait depth 1; 3 stages or
 * more): the slot it reads is then still busy one iteration longer. */
static inline int tc_ring_ahead(int stages, bool async_reader) {
  return async_reader && stages >= 3 ? stages - 2 : stages - 1;
}
/* The schedule note's words for A and B in rings of `stages` slots ("" for
 * one buffer): the copies in flight (tc_ring_ahead; async_reader: the
 * wgmma op type, whose groups are waited for one K tile late) and how
 * they copy (prologue: an operand's prologue ops make its copies
 * synchronous; bulk: bulk tensor copies on mbarriers, else cp.async). */
void tc_matmul_ring_note(char *buf, size_t size, int stages, bool prologue, bool async_reader, bool bulk);
/* A warp- or wavefront-wide matrix instruction (an op type of the matmul
 * other than FMA) as the schedule and the lowering see it: `lanes` lanes
 * compute an m x n x k product; its accumulators' register layout is a
 * split of the m x n tile, M = [m_pre, m_lane, m_post] (outermost first)
 * and N = [n_lane, n_post], a lane being the merge of the two lane pieces
 * (m_lane index * n_lane + n_lane index) and holding the values
 * [m_pre, m_post, n_post]; a piece of extent 1 is no axis.  family is
 * the arch family of the GPUs that have it (OpenCL emulates it). */
typedef struct tc_frag_shape {
  int macro;                      /* TC_MACRO_* */
  const char *name, *unit;        /* "mma.sync m16n8k16", "warp" */
  tc_arch_family family;          /* the GPUs that have it: TC_ARCH_SM (NVIDIA) or _GFX (AMD) */
  int64_t lanes, m, n, k;
  int64_t m_pre, m_lane, m_post, n_lane, n_post;
} tc_frag_shape;

/* The shape of a macro; NULL for TC_MACRO_FMA and unknown ones
 * (matmul_mma.c; the MFMA shapes are matmul_mfma.c's). */
const tc_frag_shape *tc_frag_shape_of(int macro);
/* The MFMA shapes (matmul_mfma.c); NULL for other macros. */
const tc_frag_shape *tc_mfma_frag_shape(int macro);
/* tc_schedule_auto's op type for a matmul of an m x n result with
 * operands of dtype t on target / arch: true with *tl MFMA tiles (32x32x8
 * where the result holds a 32 x 32 tile, else 16x16x16, in blocks of up
 * to 2 x 2 wavefronts, K tiles of 16) for HIP f16 / bf16 on an arch with
 * MFMA; else false, with *why the reason for the note on HIP (NULL on
 * other targets). */
bool tc_mfma_auto_tiles(tc_target target, const char *arch, tc_dtype t, int64_t m, int64_t n,
                        tc_matmul_tiles *tl, const char **why);
/* tc_schedule_matmul with a macro of shape sh, after its checks of the
 * fusion: warps (wavefronts) of the instruction, each a tm x tn tile, the
 * accumulators' layout as split axes (matmul_mma.c); nepi epilogue ops
 * for the note. */
tc_status tc_schedule_matmul_frag(tc_fusion *f, tc_target target, tc_op *mm, tc_tensor *out,
                                  const tc_matmul_tiles *tl, int nepi, const tc_frag_shape *sh);

/* An operand tile in shared memory, computed at the accumulator's Ko:
 * its n axes past base (n <= 16) are reordered by to[] (to[i] the new
 * place of axis base + i) so that those it broadcasts along come first
 * (left serial: they run once) and its nown own axes follow in the order
 * of the tile's layout; those are merged and spread over the block's
 * groups (TIDy) of lanes (TIDx) threads, so the merged order is the
 * shared layout; with v > 1 each thread takes runs of v consecutive
 * elements of the last ncols own axes (the tile's columns; an unrolled
 * loop, innermost: a ring's cp.async vectors) (matmul_mma.c). */
tc_status tc_matmul_spread(tc_tensor *x, int base, int n, int nown, const int *to, int ncols, int64_t v,
                           int64_t groups, int64_t lanes);
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
