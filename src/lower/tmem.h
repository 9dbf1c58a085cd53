/* tmem.h - Blackwell tensor memory in lowering: which targets have it, and
 * the lowering of every statement that reads or writes it.
 *
 * Tensor memory is 128 lanes x 512 columns of 32-bit words per CTA.
 * lower.c sizes each allocation (the allocation rules, split at the tensor's
 * dim-sep position into lanes and columns); tmem.c then places the
 * allocations, and turns each statement that touches tensor memory into
 * one warp-collective tcgen05.st (registers -> tensor memory) or
 * tcgen05.ld (tensor memory -> registers) of shape 32x32b covering the
 * whole vectorized loop the statement sits in, after checking that the
 * access pattern is one the hardware has (docs/tmem.md). */
#ifndef TC_TMEM_H
#define TC_TMEM_H

#include <stdbool.h>

#include "kernel.h"

#define TC_TMEM_LANES 128
#define TC_TMEM_COLUMNS 512

/* tc_ktmem.kind (tc_knode.stmt.tmem) */
enum { TC_TMEM_NONE = 0, TC_TMEM_ST = 1, TC_TMEM_LD = 2 };

/* TC_ERR_UNSUPPORTED (message on f) when a tensor of f is in tensor memory
 * and the target cannot have it: CUDA needs a tcgen05 arch, OpenCL
 * emulates tensor memory, other targets have none. */
tc_status tc_tmem_check_target(tc_fusion *f, tc_target target, const char *arch);

/* After allocation and indexing: gives each tensor-memory allocation its
 * place (tc_kalloc.tmem_col, .tmem_slot) and lowers every statement that
 * reads or writes tensor memory (tc_knode.stmt.tmem), checking that
 *   - it is a set/permute between registers and tensor memory,
 *   - its vector is a whole number of 32-bit words, at most 128,
 *   - it is warp-collective (whole warps, or none, execute it),
 *   - thread i of a warp accesses lane base + i (lanes stride 1),
 *   - warp w accesses only lanes 32 * (w % 4) .. 32 * (w % 4) + 31,
 *   - the threads of a warp access the same, consecutive columns.
 * On failure returns non-OK with the message on k->f. */
tc_status tc_tmem_lower(tc_kir *k);

#endif
