/* amd_swizzle.c - Triton's (vec, perPhase, maxPhase) shared-memory swizzle
 * and AMD's matrix-core swizzle built from split / xor / merge (the
 * scheduling calls on a tensor are src/sched/swizzle_amd.c). */
#include "amd_swizzle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int64_t pow2_ceil(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

int tc_amd_matrix_core_params(int bits, int64_t continuous, int64_t vec,
                              tc_amd_swizzle_params *out, tc_str *err) {
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64) {
    tc_err_set(err, "the matrix-core swizzle needs 8-, 16-, 32- or 64-bit elements, got %d bits", bits);
    return -1;
  }
  if (vec == 0) vec = 64 / bits;
  if (vec < 1 || vec > ((int64_t)1 << 30)) {
    tc_err_set(err, "vec must lie in 1..2^30, got %lld", (long long)vec);
    return -1;
  }
  if (continuous < vec) {
    tc_err_set(err,
             "the matrix-core swizzle needs at least vec = %lld contiguous elements, got %lld",
             (long long)vec, (long long)continuous);
    return -1;
  }
  int64_t elems_per_bank_row = 32 * 32 / bits;
  int64_t per_phase = elems_per_bank_row / continuous;
  if (per_phase < 1) per_phase = 1;
  int64_t max_phase = 16 / per_phase;
  if (continuous / vec < max_phase) max_phase = continuous / vec;
  if (max_phase < 1) max_phase = 1;
  out->vec = vec, out->per_phase = per_phase, out->max_phase = max_phase;
  return 0;
}

int64_t tc_amd_swizzle_col(const tc_amd_swizzle_params *p, int64_t row, int64_t col) {
  int64_t phase = (row / p->per_phase) % p->max_phase;
  return ((col / p->vec) ^ phase) * p->vec + col % p->vec;
}

/* Every condition is checked before the first transform is made, so a
 * refused swizzle leaves the graph as it was. */
int tc_dg_amd_swizzle(tc_dgraph *g, int row, int col, const tc_amd_swizzle_params *p,
                      int *row_out, int *col_out, tc_str *err) {
  if (row < 0 || row >= g->naxes || col < 0 || col >= g->naxes || row == col)
    return tc_err_set(err, "the swizzle needs two distinct axes"), -1;
  const int64_t lim = (int64_t)1 << 30;
  if (p->vec < 1 || p->per_phase < 1 || p->max_phase < 1 || p->vec > lim || p->per_phase > lim ||
      p->max_phase > lim) {
    tc_err_set(err, "vec, perPhase and maxPhase must lie in 1..2^30 (got %lld, %lld, %lld)",
             (long long)p->vec, (long long)p->per_phase, (long long)p->max_phase);
    return -1;
  }
  int64_t rows = g->axes[row].extent, cols = g->axes[col].extent;
  if (cols % p->vec != 0) {
    tc_err_set(err, "the column extent %lld is not a multiple of vec = %lld", (long long)cols,
             (long long)p->vec);
    return -1;
  }
  *row_out = row, *col_out = col;
  if (p->max_phase == 1 || rows <= p->per_phase) return 0; /* one phase: the identity */
  if (rows % p->per_phase != 0) {
    tc_err_set(err, "the row extent %lld is not a multiple of perPhase = %lld", (long long)rows,
             (long long)p->per_phase);
    return -1;
  }
  int64_t groups = rows / p->per_phase; /* row / perPhase takes this many values */
  if (groups > p->max_phase && groups % p->max_phase != 0) {
    tc_err_set(err,
             "rows / perPhase = %lld is neither at most nor a multiple of maxPhase = %lld",
             (long long)groups, (long long)p->max_phase);
    return -1;
  }
  int64_t phases = groups < p->max_phase ? groups : p->max_phase; /* values the phase takes */
  int64_t span = pow2_ceil(phases), chunks = cols / p->vec;
  if (chunks % span != 0) {
    tc_err_set(err,
             "the %lld chunks of vec = %lld columns are not a multiple of %lld, the power of two "
             "that %lld phases span, so the XOR would leave the row",
             (long long)chunks, (long long)p->vec, (long long)span, (long long)phases);
    return -1;
  }
  /* rows: row -> (group, in-group) by perPhase, group -> (.., phase) */
  int rq = row, rp = -1, rqq = -1, x = -1;
  if (p->per_phase > 1 && tc_dg_split(g, row, p->per_phase, 1, &rq, &rp, err)) return -1;
  x = rq;
  if (groups > p->max_phase && tc_dg_split(g, rq, p->max_phase, 1, &rqq, &x, err)) return -1;
  /* columns: col -> (chunk, in-chunk) by vec, chunk -> (.., low chunk bits) */
  int cv = col, ci = -1, cvo = -1, y = -1;
  if (p->vec > 1 && tc_dg_split(g, col, p->vec, 1, &cv, &ci, err)) return -1;
  y = cv;
  if (chunks > span && tc_dg_split(g, cv, span, 1, &cvo, &y, err)) return -1;
  int x2, y2;
  if (tc_dg_xor(g, x, y, &x2, &y2, err)) return -1;
  int r = x2, c = y2;
  if (rqq >= 0 && tc_dg_merge(g, rqq, r, &r, err)) return -1;
  if (rp >= 0 && tc_dg_merge(g, r, rp, &r, err)) return -1;
  if (cvo >= 0 && tc_dg_merge(g, cvo, c, &c, err)) return -1;
  if (ci >= 0 && tc_dg_merge(g, c, ci, &c, err)) return -1;
  *row_out = r, *col_out = c;
  return 0;
}
