/* tma_swizzle.c - the 32/64/128-byte bulk-copy swizzles of shared memory
 * as split and XOR transforms on the axis graph (see tma_swizzle.h). */
#include "tma_swizzle.h"

#include <stdio.h>
#include <stdlib.h>

int tc_tma_swizzle_box(tc_dgraph *g, int rows, int cols, int swizzle_bytes, int elem_bytes,
                       int *out, tc_str *err) {
  if (rows < 0 || rows >= g->naxes || cols < 0 || cols >= g->naxes || rows == cols)
    return tc_err_set(err, "the box needs two distinct axes of the graph"), -1;
  if (swizzle_bytes != 32 && swizzle_bytes != 64 && swizzle_bytes != 128) {
    tc_err_set(err, "a bulk-copy swizzle is 32, 64 or 128 bytes, not %d", swizzle_bytes);
    return -1;
  }
  if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4 && elem_bytes != 8) {
    tc_err_set(err, "elements of %d bytes do not tile a 16-byte chunk", elem_bytes);
    return -1;
  }
  int64_t row_elems = swizzle_bytes / elem_bytes, chunk_elems = 16 / elem_bytes;
  int64_t nrows = g->axes[rows].extent, ncols = g->axes[cols].extent;
  if (ncols != row_elems) {
    tc_err_set(err,
             "the box's inner extent is %lld elements of %d bytes, but a %d-byte swizzle needs rows "
             "of exactly %lld (split the inner axis by %lld first)",
             (long long)ncols, elem_bytes, swizzle_bytes, (long long)row_elems, (long long)row_elems);
    return -1;
  }
  if (nrows % 8 != 0) {
    tc_err_set(err,
             "the box has %lld rows; the swizzle pattern repeats every 8 rows, so it needs a "
             "multiple of 8", (long long)nrows);
    return -1;
  }
  /* every step below is valid by the checks above, so none fails half way */
  int row_o, row_i, m_io, m_ii, chunk, elem, xr, xc;
  tc_dg_split(g, rows, 8, 1, &row_o, &row_i, err);
  tc_dg_split(g, row_i, 128 / swizzle_bytes, 1, &m_io, &m_ii, err);
  tc_dg_split(g, cols, chunk_elems, 1, &chunk, &elem, err);
  tc_dg_xor(g, m_io, chunk, &xr, &xc, err);
  out[TC_TMA_BOX_ROW_O] = row_o;
  out[TC_TMA_BOX_M_IO] = xr;
  out[TC_TMA_BOX_M_II] = m_ii;
  out[TC_TMA_BOX_CHUNK] = xc;
  out[TC_TMA_BOX_ELEM] = elem;
  return 0;
}

const tc_expr *tc_tma_swizzle_offset(tc_epool *p, int64_t rows, int swizzle_bytes, int elem_bytes,
                                     const tc_expr *r, const tc_expr *c, tc_str *err) {
  if (elem_bytes < 1 || swizzle_bytes < elem_bytes) {
    tc_err_set(err, "bad element size %d for a %d-byte swizzle", elem_bytes, swizzle_bytes);
    return NULL;
  }
  tc_dgraph g;
  tc_dg_init(&g);
  int ar = tc_dg_root(&g, rows, 0), ac = tc_dg_root(&g, swizzle_bytes / elem_bytes, 1);
  int box[TC_TMA_BOX_NAXES];
  const tc_expr *off = NULL;
  if (tc_tma_swizzle_box(&g, ar, ac, swizzle_bytes, elem_bytes, box, err) == 0) {
    const tc_expr **v = tc_xcalloc((size_t)g.naxes, sizeof *v);
    v[ar] = r, v[ac] = c;
    tc_dg_walk(p, &g, v, NULL);
    off = tc_e_const(p, 0);
    int64_t stride = 1;
    for (int k = TC_TMA_BOX_NAXES - 1; k >= 0 && off; k--) {
      if (!v[box[k]]) {
        tc_err_set(err, "the swizzled box axes are not reached from (row, column)");
        off = NULL;
        break;
      }
      off = tc_e_add(p, off, tc_e_mulc(p, v[box[k]], stride));
      stride *= g.axes[box[k]].extent;
    }
    free(v);
    if (off) off = tc_simplify(p, off);
  }
  tc_dg_free(&g);
  return off;
}
