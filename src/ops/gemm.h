/* gemm.h - the gridwise GEMM kernel generator (rocMLIR's MIOpen-dialect
 * gridwise GEMM).
 *
 * C[g][m][n] = sum_k A[g][k][m] * B[g][k][n] (or C += ...), where A, B and
 * C are views (coord.h) whose upper dims are [G, K, M], [G, K, N] and
 * [G, M, N]: any tensor reachable through coordinate transforms, such as a
 * convolution's input seen as [G, gemmK, gemmN].  The kernel is the
 * MIOpen dialect's pipeline: blockwise copies global -> registers ->
 * shared memory (LDS), a blockwise GEMM from shared memory into
 * per-thread register tiles arranged by level-0/level-1 thread clusters,
 * the double-buffered K loop with even/odd buffers, barriers and loop
 * tail, and a threadwise copy of C to global memory.  When M, N or K are
 * not multiples of the tile, the views are padded with Pad transforms and
 * the padding reads as zero. */
#ifndef TC_GEMM_H
#define TC_GEMM_H

#include "../base/base.h"
#include "../layout/coord.h"
#include "../runtime/runtime.h"
#include "../tune/params.h"

typedef struct tc_gemm_kernel {
  char *source;             /* the kernel source (owned) */
  char name[64];
  size_t grid[3], block[3];
  int64_t smem_bytes;
  /* parameter order of the kernel: A's buffer, B's buffer, C's buffer.
   * grid is 1-D: G * ceil(M/MPB) * ceil(N/NPB) blocks; block is
   * {block_size, 1, 1}.  smem_bytes is shared memory the kernel declares
   * statically (launch with no dynamic shared memory). */
  /* additions (the TMA kernel, gemm_tma.c): on CUDA, smem_bytes is
   * dynamic shared memory (dyn_smem = 1: pass it at launch) and the
   * kernel takes ntmaps tensor maps after the buffers (tmaps[]). */
  int dyn_smem;
  tc_rt_tmap tmaps[3];
  int ntmaps;
  /* a persistent TMA kernel (tma_persist): its cluster size (1 or 2), the
   * multiple a CUDA launch cuts the grid to (tc_launch.persistent); 0
   * otherwise */
  int persistent;
} tc_gemm_kernel;

/* The launch of kernel k (grid, block, dynamic shared memory, tensor
 * maps): every launch of a generated GEMM goes through this. */
void tc_gemm_kernel_launch_config(const tc_gemm_kernel *k, tc_launch *l);
/* Runs kernel k once over buffers b[0 .. nb) on target with the launch
 * above (tc_rt_launch): OpenCL on cl (opened by the caller), CUDA or HIP
 * for arch (NULL: tc_tune_arch's, sm_90a on CUDA, the AMD GPU's on HIP).  *ms (may
 * be NULL) gets the kernel time.  Then, after the copy back, repeat
 * timed launches back to back (0: none), their times in repeat_ms[0 ..
 * repeat) (tc_launch's repeat and repeat_ms). */
tc_status tc_gemm_kernel_run(const tc_gemm_kernel *k, tc_target target, tc_cl *cl,
                             const char *arch, tc_rt_buffer *b, int nb, double *ms, int repeat,
                             double *repeat_ms, tc_str *e);

typedef struct tc_gemm_problem {
  const tc_view *a, *b, *c; /* upper dims [G,K,M], [G,K,N], [G,M,N] */
  tc_dtype a_dtype, b_dtype, c_dtype; /* accumulation is always f32 */
  int accumulate;           /* 1: C += A*B (C is read), 0: C = A*B */
  float alpha;              /* C = alpha * A*B (+ C) ; 1 normally */
} tc_gemm_problem;

/* Generates the kernel for target (OpenCL, CUDA or HIP) with the given
 * parameters (which must already be derived and valid for the problem's
 * shape).  XDLOPS parameters (tc_gemm_params_is_xdlops) select the MFMA
 * blockwise GEMM (gemm_mfma.c): f16 or bf16 A and B, target HIP (AMD's
 * MFMA builtins) or OpenCL (the MFMA emulated with the same lane
 * layouts); smem_bytes then includes the emulation's scratch.  On HIP, A
 * and B are read with buffer loads.  Returns TC_OK, or an error with err
 * filled. */
tc_status tc_gemm_generate(const tc_gemm_problem *pb, const tc_gemm_params *p, tc_target target,
                           const char *name, tc_gemm_kernel *out, tc_str *err);
void tc_gemm_kernel_free(tc_gemm_kernel *k);

/* gemm_tma.c: the TMA + wgmma kernel (tc_gemm_params_is_tma), called by
 * tc_gemm_generate for such parameters (target CUDA, or OpenCL emulated). */
tc_status tc_gemm_tma_generate(const tc_gemm_problem *pb, const tc_gemm_params *p,
                               tc_target target, const char *name, tc_gemm_kernel *out, tc_str *err);
/* A persistent TMA kernel's epilogue stores C box by box (nbox boxes per
 * tile) through nbuf buffers, box j in buffer j % nbuf: the bulk groups
 * thread 0 may leave pending (cp.async.bulk.wait_group.read N) before
 * box j's buffer is written, so that every earlier copy from that buffer
 * has read it (the previous tile's boxes included). */
int tc_gemm_tma_c_pending(int j, int nbox, int nbuf);

/* The shape of a problem (extents of the views' upper dims, dtype, and
 * vector widths from tc_view_vector_width). */
tc_gemm_shape tc_gemm_problem_shape(const tc_gemm_problem *pb);

#endif
