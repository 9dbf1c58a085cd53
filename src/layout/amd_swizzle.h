/* amd_swizzle.h - AMD's shared-memory (LDS) swizzles as transforms of the
 * axis graph.
 *
 * Triton's swizzled shared layout on a [rows, cols] tile, with parameters
 * vec, perPhase and maxPhase, keeps each row and permutes its columns in
 * chunks of vec elements:
 *
 *   phase = (row / perPhase) % maxPhase
 *   col'  = ((col / vec) ^ phase) * vec + col % vec
 *
 * The matrix-core (MFMA) swizzle of TileLang and Composable Kernel
 * (makeMatrixCoreSwizzleLayout) is the same map with the parameters taken
 * from the element width and the contiguous extent:
 *
 *   elemsPerBankRow = 32 banks * 32 bits / bits
 *   perPhase        = max(1, elemsPerBankRow / continuous)
 *   maxPhase        = min(16 / perPhase, continuous / vec)
 *
 * Neither is a formula in the emitter: tc_dg_amd_swizzle builds the map
 * from split, xor and merge (domain.h), so the forward and backward index
 * expressions, the inverse and the predicates come from the graph as for
 * any schedule, and the reshape + swizzle analysis (reshape_swizzle.h)
 * sees an ordinary XOR.  With vec = 8, perPhase = 1 and maxPhase = 8 on
 * 64 columns it is CuTe's Swizzle<3,3,3> on the row-major offset. */
#ifndef TC_AMD_SWIZZLE_H
#define TC_AMD_SWIZZLE_H

#include <stddef.h>
#include <stdint.h>

#include "domain.h"

typedef struct tc_amd_swizzle_params {
  int64_t vec;       /* columns per chunk (the unit the XOR moves) */
  int64_t per_phase; /* consecutive rows that share a phase */
  int64_t max_phase; /* number of phases */
} tc_amd_swizzle_params;

/* The matrix-core parameters for elements of `bits` bits (8, 16, 32 or 64)
 * and `continuous` columns; vec == 0 takes TileLang's default chunk of 64
 * bits (64 / bits elements, kPack = 1).  maxPhase is at least 1.  Returns
 * 0, or -1 with the reason in err. */
int tc_amd_matrix_core_params(int bits, int64_t continuous, int64_t vec,
                              tc_amd_swizzle_params *out, tc_str *err);

/* Applies the swizzle to axes row and col of g: *row_out takes the value of
 * row (an axis made anew when the row had to be split for the phase) and
 * *col_out the swizzled column.  When the swizzle is the identity
 * (maxPhase 1, or all rows in one phase) nothing is added and the axes
 * come back unchanged.  Needs: cols a multiple of vec; rows a multiple of
 * perPhase; rows / perPhase at most maxPhase or a multiple of it; the
 * cols / vec chunks a multiple of the power of two the phases span (so the
 * XOR stays inside the row: the map is a bijection).  Returns 0, or -1
 * with the reason in err (the graph is then unchanged). */
int tc_dg_amd_swizzle(tc_dgraph *g, int row, int col, const tc_amd_swizzle_params *p,
                      int *row_out, int *col_out, tc_str *err);

/* The plain formula, for tests and tools: the swizzled column of (row, col). */
int64_t tc_amd_swizzle_col(const tc_amd_swizzle_params *p, int64_t row, int64_t col);

#endif
