/* gemm_gen.h - internal: the state of one gridwise GEMM kernel being
 * generated, shared by gemm.c (the kernel, the blockwise copies, the FMA
 * blockwise GEMM) and gemm_mfma.c (the MFMA blockwise GEMM of XDLOPS
 * kernels).  Not installed. */
#ifndef TC_GEMM_GEN_H
#define TC_GEMM_GEN_H

#include "../codegen/dialect.h"
#include "gemm.h"

typedef struct tc_gemm_gen {
  const tc_dialect *d;
  const tc_gemm_problem *pb;
  const tc_gemm_params *p;
  tc_gemm_shape s;
  int64_t nm, nn, nk;
  tc_view *a, *b, *c; /* padded copies */
  tc_epool *pool;
  const tc_expr *g_id, *m_blk, *n_blk, *k_tile, *a_k0, *a_m0, *b_k0, *b_n0, *m_thr, *n_thr;
  tc_str *o;
  tc_str *err;
  /* additions (HIP) */
  int xdl;                  /* the MFMA blockwise GEMM (tc_gemm_params_is_xdlops) */
  int64_t a_bytes, b_bytes; /* > 0: A / B read with the dialect's buffer loads, the
                               resource covering that many bytes */
  /* additions (CUDA mma.sync) */
  int mma; /* the mma.sync blockwise GEMM (tc_gemm_params_is_mma; xdl is set too) */
  /* additions (sm_90a wgmma) */
  int wgmma; /* the wgmma blockwise GEMM (tc_gemm_params_is_wgmma; mma and xdl are set too) */
} tc_gemm_gen;

/* The offset and validity of upper coordinates (g_id, x, y) of view v
 * (gemm.c's index_of); fails with a message when offsets may overflow int. */
tc_status tc_gemm_gen_index(tc_gemm_gen *G, const tc_view *v, const char *what, const tc_expr *x,
                            const tc_expr *y, const tc_expr **off, const tc_expr **valid);

/* One line of the kernel at indentation depth (a newline appended). */
void tc_gemm_gen_line(tc_gemm_gen *G, int depth, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The dialect's unroll pragma on its own line, where it has one. */
void tc_gemm_gen_unroll(tc_gemm_gen *G, int depth);
/* The store of accumulator `acc` (e.g. "c_acc[3]") to C at upper
 * coordinates (g_id, m, n): scaled by alpha, plus C's old value where the
 * problem accumulates, under an if where not every thread's element is
 * valid; nothing where none is. */
tc_status tc_gemm_gen_store_c(tc_gemm_gen *G, const tc_expr *m, const tc_expr *n, const char *acc,
                              int depth);

/* ---- gemm_mfma.c ---- */

/* The generator's MFMA lane layouts (kind TC_MFMA_*): item `item` of lane
 * `lane` of an A fragment is A[ab_row][ab_k] (of a B fragment
 * B[ab_k][ab_row]); accumulator item `item` is C[c_row][c_col]. */
void tc_mfma_layout(int kind, int lane, int item, int *ab_row, int *ab_k, int *c_row, int *c_col);

/* Bytes of shared memory the dialect's MFMA support adds (the OpenCL
 * emulation's scratch). */
int64_t tc_mfma_extra_smem(const tc_dialect *d, const tc_gemm_params *p);
/* Prints the dialect's MFMA prelude (guarded by TC_MFMA_PRELUDE). */
void tc_mfma_emit_prelude(tc_gemm_gen *G);
/* Defines tc_wave, tc_lane, the wave's position and the lane-layout
 * variables; declares fragments and accumulators and zeroes these. */
void tc_mfma_emit_setup(tc_gemm_gen *G, int depth);
/* The blockwise GEMM on shared buffer `odd` (0 even, 1 odd). */
void tc_mfma_emit_block_gemm(tc_gemm_gen *G, int odd, int depth);
/* The threadwise copy of the accumulators to C. */
tc_status tc_mfma_emit_c_store(tc_gemm_gen *G, int depth);

/* ---- gemm_mma.c (mma.sync m16n8k16, NVIDIA; docs/mma.md) ---- */

/* The generator's mma.sync m16n8k16 lane layouts: element e (0..7) of
 * lane `lane`'s A fragment is A[*a_row][*a_k] (register e / 2, half e % 2);
 * element e (0..3) of its B fragment is B[*b_k][*b_col]; accumulator v
 * (0..3) is C[*c_row][*c_col]. */
void tc_mma_layout(int lane, int e, int *a_row, int *a_k, int *b_k, int *b_col, int *c_row,
                   int *c_col);
int64_t tc_mma_extra_smem(const tc_dialect *d, const tc_gemm_params *p);
void tc_mma_emit_prelude(tc_gemm_gen *G);
void tc_mma_emit_setup(tc_gemm_gen *G, int depth);
void tc_mma_emit_block_gemm(tc_gemm_gen *G, int odd, int depth);
tc_status tc_mma_emit_c_store(tc_gemm_gen *G, int depth);

/* ---- gemm_wgmma.c (wgmma m64nNk16, sm_90a; docs/wgmma.md) ---- */

/* The generator's wgmma accumulator layout: value j of thread t (0..127)
 * of a warp group is D[*row][*col] of its 64 x N tile. */
void tc_wgmma_d_layout(int t, int j, int *row, int *col);
void tc_wgmma_emit_prelude(tc_gemm_gen *G);
void tc_wgmma_emit_setup(tc_gemm_gen *G, int depth);
void tc_wgmma_emit_store(tc_gemm_gen *G, int odd, int depth);
void tc_wgmma_emit_block_gemm(tc_gemm_gen *G, int odd, int depth);
tc_status tc_wgmma_emit_c_store(tc_gemm_gen *G, int depth);

#endif
