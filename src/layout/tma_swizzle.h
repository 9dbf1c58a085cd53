/* tma_swizzle.h - the shared-memory layouts of a bulk tensor copy (TMA)
 * with a 32, 64 or 128 byte swizzle, built as transforms on the axis graph
 * rather than typed into an emitter as formulas.
 *
 * A box of [rows, S / elem] elements (S = swizzle bytes: each row of the
 * box is S bytes) is laid out as
 *
 *   split(rows, 8)         -> row_o, row_i(8)        the pattern repeats every 8 rows
 *   split(row_i, 128 / S)  -> m_io(S / 16), m_ii(128 / S)
 *                                                    rows that share one XOR value
 *   split(cols, 16 / elem) -> chunk(S / 16), elem(16 / elem)   16-byte chunks
 *   xor(m_io, chunk)       -> m_io, chunk ^ m_io
 *
 * in the allocation order [row_o, m_io, m_ii, chunk ^ m_io, elem]: the
 * 16-byte chunk of row r is XORed with (r % 8) / (128 / S), that is with
 * r % 8 for 128B, (r / 2) % 4 for 64B and (r / 4) % 2 for 32B.  On byte
 * offsets this is CuTe's Swizzle<3,4,3>, Swizzle<2,4,3> and Swizzle<1,4,3>
 * (tests/test_abstract_tensor.c checks it by enumeration).  nvFuser builds
 * the same layout in scheduleTMALoadForMma with MmaInputSmemSwizzle. */
#ifndef TC_TMA_SWIZZLE_H
#define TC_TMA_SWIZZLE_H

#include "domain.h"

/* Axes of the swizzled box layout, in allocation order. */
enum { TC_TMA_BOX_ROW_O, TC_TMA_BOX_M_IO, TC_TMA_BOX_M_II, TC_TMA_BOX_CHUNK, TC_TMA_BOX_ELEM,
       TC_TMA_BOX_NAXES };

/* Applies the swizzle of `swizzle_bytes` (32, 64 or 128) to the box
 * [rows, cols] of axes of g, for elements of elem_bytes (1, 2, 4 or 8):
 * cols must have extent swizzle_bytes / elem_bytes and rows a multiple of
 * 8.  Writes the TC_TMA_BOX_NAXES result axes to out.  Returns 0, or -1
 * with a reason in err (and the graph unchanged). */
int tc_tma_swizzle_box(tc_dgraph *g, int rows, int cols, int swizzle_bytes, int elem_bytes,
                       int *out, tc_str *err);

/* The element offset, inside a box of [rows, swizzle_bytes / elem_bytes]
 * elements laid out by tc_tma_swizzle_box, of box element (r, c): the
 * graph built and walked from (r, c), the result axes read row-major in
 * allocation order (simplified; r and c expressions in pool p).  NULL,
 * with a reason in err, when the box breaks a rule of tc_tma_swizzle_box. */
const tc_expr *tc_tma_swizzle_offset(tc_epool *p, int64_t rows, int swizzle_bytes, int elem_bytes,
                                     const tc_expr *r, const tc_expr *c, tc_str *err);

#endif
