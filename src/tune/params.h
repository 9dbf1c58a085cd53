/* params.h - the tunable parameters of the gridwise GEMM (rocMLIR's
 * MIOpen-dialect tuning rules: the non-XDLOPS rules, and the XDLOPS rules
 * of the MFMA kernel), their derivation and constraints, the perf-config
 * string, and the candidate lists the heuristic and the tuner walk. */
#ifndef TC_PARAMS_H
#define TC_PARAMS_H

#include <stdint.h>

#include "tilec/tilec.h"
#include "../target/target.h"

typedef struct tc_gemm_params {
  /* tuned */
  int block_size;
  int m_per_block, n_per_block, k_per_block;
  int m_per_thread, n_per_thread;  /* the per-thread sub-C tile (M/N_PER_THREAD_SUB_C) */
  /* derived (tc_gemm_params_derive fills them) */
  int m_level0, n_level0, m_level1, n_level1;
  int a_cluster_k, a_cluster_m;    /* blockwise copy of A: threads along K and M */
  int b_cluster_k, b_cluster_n;
  int a_src_per_read, a_dst_per_write;
  int b_src_per_read, b_dst_per_write;
  int c_per_write;
  /* derived (additions): the dimension the blockwise copies read along,
   * TC_GEMM_READ_K or TC_GEMM_READ_MN (M for A, N for B).  The copy's
   * threads are arranged with this dimension varying fastest, and each
   * thread's slice holds a_src_per_read consecutive elements along it. */
  int a_read_dim, b_read_dim;
  /* XDLOPS (MFMA) kernels: rocMLIR's rules for XDLOPS kernels
   * (additions).  m_per_wave > 0 selects the MFMA blockwise GEMM
   * (src/ops/gemm_mfma.c) for f16/bf16 A and B.  Tuned: m/n/k_per_block,
   * m_per_wave, n_per_wave, and mfma (0: derive).  Derived: waves_m =
   * m_per_block / m_per_wave, waves_n likewise, block_size = waves_m *
   * waves_n * 64 (the wave size), the blockwise copies as for non-XDLOPS
   * kernels, c_per_write = 1 (rocMLIR: "fixed at 1 for now").  The
   * per-thread and cluster fields (m_per_thread .. n_level1) are 0. */
  int m_per_wave, n_per_wave;
  int mfma;                        /* TC_MFMA_32X32X8 or TC_MFMA_16X16X16 */
  int waves_m, waves_n;
  /* mma.sync kernels (NVIDIA tensor cores, additions; docs/mma.md):
   * mma = TC_MMA_M16N8K16 selects the mma.sync blockwise GEMM
   * (src/ops/gemm_mma.c) with m/n_per_wave the warp tile (M/N per warp of
   * 32 lanes), waves_m/n the warps along M/N, block_size = warps * 32;
   * mfma is 0.  Such parameters are also XDLOPS-like
   * (tc_gemm_params_is_xdlops: the same 16-bit LDS copies). */
  int mma;
  /* The TMA + wgmma GEMM for sm_90a (additions; src/ops/gemm_tma.c,
   * docs/hopper_gemm.md): tma_stages > 0 selects it, with that many
   * shared-memory stages in the ring; m/n_per_block the C tile, k_per_block
   * 64 (one 128-byte swizzle row of 16-bit elements), waves_m = m_per_block
   * / 64 consumer warp groups, block_size = waves_m * 128.  Every other
   * field is 0 (such parameters are neither XDLOPS nor mma ones).
   * tma_ws = 1 (perf config "tmaws:"): the warp-specialised pipeline, one
   * more warp group (the producer) issues the copies and the consumers
   * release stages through "empty" barriers (block_size = (waves_m + 1) *
   * 128); 0 ("tma:"): thread 0 of the consumers issues them after a block
   * barrier per K tile. */
  int tma_stages;
  int tma_ws;
  /* tma_cluster = 2 ("tmaws:MPB,NPB,STAGES,2", warp-specialised only): 2 x
   * 1 clusters, the two blocks of a cluster take neighbouring M tiles of
   * one N tile and each loads half of the B tile into both with multicast
   * bulk copies; 0: no cluster.  Opt-in: never a heuristic or tuner
   * candidate until measured on a GPU. */
  int tma_cluster;
  /* tma_persist = B > 0 ("tmaws:MPB,NPB,STAGES,CLUSTER,B", warp-specialised
   * only): a persistent kernel of min(B, the tiles) blocks (a multiple of
   * the cluster), block b computing tiles b, b + grid, b + 2 * grid ...;
   * the K-tile count runs on across tiles, so the producer fills the next
   * tile's stages during the epilogue, and C goes out box by box through
   * its own buffers after the ring (tc_gemm_tma_c_buffers), so the stores
   * overlap the epilogue and the next tile's main loop.  On a device the
   * grid is also at most one block per SM (tc_gemm_kernel_run).  0: one
   * block per tile.  Opt-in, as tma_cluster. */
  int tma_persist;
} tc_gemm_params;

#define TC_GEMM_READ_K 1
#define TC_GEMM_READ_MN 2

/* The MFMA instruction of an XDLOPS kernel: TC_MFMA_32X32X8 or
 * TC_MFMA_16X16X16 (target.h, where codegen reads them too). */
#define TC_WAVE_SIZE 64

/* The mma.sync instruction of an mma kernel: m16n8k16, f16 or bf16
 * inputs, f32 accumulation (sm_80+); warps of 32 lanes. */
#define TC_MMA_M16N8K16 1
#define TC_WARP_SIZE 32

/* Whether p describes an XDLOPS (MFMA) kernel, or an mma.sync one (the
 * matrix-core kernels: m_per_wave > 0). */
int tc_gemm_params_is_xdlops(const tc_gemm_params *p);
/* An XDLOPS config's MFMA instruction: its mfma field, else the one
 * rocMLIR's rule derives (32x32x8 where the wave tile is a multiple of 32
 * x 32 and k_per_block of 8, else 16x16x16 where they are of 16 and 16);
 * 0 where none fits. */
int tc_gemm_xdlops_mfma(const tc_gemm_params *p);
/* Whether p describes an mma.sync kernel (p->mma set). */
int tc_gemm_params_is_mma(const tc_gemm_params *p);
/* wgmma kernels (sm_90a, docs/wgmma.md): mma = TC_MMA_WGMMA_M64NNK16,
 * perf config "wgmma:MPB,NPB,KPB": MPB / 64 warp groups of 128 threads
 * along M, each computing 64 x NPB with wgmma m64n<NPB>k16 (m_per_wave 64,
 * n_per_wave NPB, waves_m = MPB / 64 warp groups, waves_n 1).  They are
 * also mma kernels (tc_gemm_params_is_mma) and XDLOPS-like. */
#define TC_MMA_WGMMA_M64NNK16 2
int tc_gemm_params_is_wgmma(const tc_gemm_params *p);
/* TMA + wgmma kernels (sm_90a; docs/hopper_gemm.md): perf config
 * "tma:MPB,NPB,STAGES" or "tmaws:MPB,NPB,STAGES" (warp-specialised) (C
 * tile MPB x NPB, MPB in {64, 128, 192, 256}, NPB a multiple of 64 up to
 * 256, 2 to 8 stages of A [MPB][64] and B [NPB][64] tiles, at most
 * TC_TMA_MAX_SMEM bytes of shared memory in all). */
int tc_gemm_params_is_tma(const tc_gemm_params *p);
/* The warp-specialised pipeline's registers per thread: the producer warp
 * group keeps TC_TMA_PRODUCER_REGS (setmaxnreg.dec), each consumer warp
 * group of a block with `consumers` of them raises its own to the value
 * returned (setmaxnreg.inc): what the block's register pool holds at
 * launch (65536 / threads per thread, in steps of 8) plus the producer's
 * share, at most 240. */
#define TC_TMA_PRODUCER_REGS 40
int tc_gemm_tma_consumer_regs(int consumers);
#define TC_TMA_MAX_SMEM 232448 /* sm_90's opt-in shared memory per block (227 KiB) */

/* The GEMM a problem needs: C[g][m][n] (+)= sum_k A[g][k][m] * B[g][k][n]. */
typedef struct tc_gemm_shape {
  int64_t g, m, n, k;
  tc_dtype dtype;            /* A and B element type; accumulation is f32 */
  /* widest legal vector reads along K or M for A, K or N for B (from
   * tc_view_vector_width), used to derive data-per-read; 1 if unknown */
  int a_vec_k, a_vec_m, b_vec_k, b_vec_n, c_vec_n;
  /* additions (the TMA kernel): plain = 1 when A, B and C are dense
   * matrices (every element valid, offset linear in the coordinates);
   * then the element strides of A along [G, K, M], B along [G, K, N] and
   * C along [G, M, N].  c_dtype and accumulate as in the problem. */
  int plain;
  int64_t a_stride[3], b_stride[3], c_stride[3];
  tc_dtype c_dtype;
  int accumulate;
} tc_gemm_shape;

/* The C buffers of a persistent TMA kernel, each a box [MPB][64] of C
 * (MPB * 128 bytes): 2 (one is written while the other's copy reads it)
 * where a tile has 2 or more boxes (NPB >= 128), else 1. */
int tc_gemm_tma_c_buffers(int npb);
/* Shared memory of a TMA kernel: the ring, stages * (MPB + NPB) * 128
 * bytes (the C tile reuses it; a persistent kernel's C buffers,
 * tc_gemm_tma_c_buffers(NPB) * MPB * 128 bytes, come after it), plus 1024
 * bytes to align it to the 128-byte swizzle's 1024-byte period. */
int64_t tc_gemm_tma_smem_bytes(const tc_gemm_params *p);
/* Whether the TMA kernel can compute the shape: 0, or -1 with the reason
 * (plain matrices, f16/bf16 A, B and C, no accumulation, rows a multiple
 * of 16 bytes, K or M/N contiguous). */
int tc_gemm_tma_supported(const tc_gemm_shape *s, tc_str *err);
/* The TMA candidates for a shape, best first (fewest padded FLOPs, then
 * enough blocks, then larger tiles, then more stages: the XDLOPS order), and
 * the first of them (0, or -1 + err when the shape is not supported). */
int tc_gemm_tma_candidates(const tc_gemm_shape *s, tc_gemm_params **out);
int tc_gemm_tma_default(const tc_gemm_shape *s, tc_gemm_params *p, tc_str *err);

/* Fills (overwrites) every derived field from the tuned ones and the
 * shape's vector widths (s may be NULL: widths 1), then checks every rule
 * (tc_gemm_params_check); *p is unchanged on failure.
 * Returns 0, or -1 with a message naming the violated rule in err, e.g.
 * "m_per_thread * m_level0 * m_level1 * 2 must equal m_per_block: m_per_block
 * 100 is not a multiple of m_per_thread*2 = 8" (the check's form of it:
 * "... must equal m_per_block (4*4*4*2 != 64)"). */
int tc_gemm_params_derive(tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err);

/* The rules of a parsed non-accelerated or mma: perf config that fix its
 * thread (warp) tiling, without the blockwise copies, vector widths and
 * shared-memory bound of the template kernels (the fused GEMM stages its
 * tiles its own way: src/tune/matmul_config.c): for BS,MPB,NPB,KPB,MPT,
 * NPT every value in range, MPB and NPB multiples of 2 MPT and 2 NPT, BS
 * = (MPB / (2 MPT)) * (NPB / (2 NPT)) and 4 MPT NPT accumulators at most
 * 256; for mma: the m16n8k16 multiples and the warp tiling.  The messages
 * are tc_gemm_params_derive's.  0, or -1 with err. */
int tc_gemm_params_check_tiling(const tc_gemm_params *p, tc_str *err);

/* Checks a fully specified parameter set (tuned and derived fields as
 * given, nothing is derived) against every rule; the shape (may be NULL)
 * bounds the vector widths.  Returns 0, or -1 with the violated rule in
 * err.  tc_gemm_params_derive ends with this check. */
int tc_gemm_params_check(const tc_gemm_params *p, const tc_gemm_shape *s, tc_str *err);

/* The FLOPs spent on padding: 2*G*(Mp*Np*Kp - M*N*K) where Mp, Np, Kp are
 * M, N, K rounded up to multiples of m/n/k_per_block (saturates at
 * INT64_MAX).  The heuristic's first sort key. */
int64_t tc_gemm_padded_flops(const tc_gemm_shape *s, const tc_gemm_params *p);
/* Blocks of the launch: G * ceil(M/MPB) * ceil(N/NPB). */
int64_t tc_gemm_num_blocks(const tc_gemm_shape *s, const tc_gemm_params *p);
/* Shared memory of the kernel: even + odd buffers of A [KPB][MPB] and B
 * [KPB][NPB], held as f32: 2 * KPB * (MPB + NPB) * 4 bytes (XDLOPS: held
 * as the 16-bit inputs, 2 * KPB * (MPB + NPB) * 2 bytes). */
int64_t tc_gemm_lds_bytes(const tc_gemm_params *p);

/* perf-config strings: "BS,MPB,NPB,KPB,MPT,NPT" (block size, M/N/K per
 * block, M/N per thread), as rocMLIR's non-accelerated perf configs.
 * XDLOPS (MFMA) kernels: "xdlops:MPB,NPB,KPB,MPW,NPW[,MFMA]" (M/N/K per
 * block, M/N per wave, MFMA 32 for 32x32x8 or 16 for 16x16x16; without
 * it the instruction is derived); formatted with the MFMA field.
 * mma.sync kernels (CUDA, OpenCL emulated): "mma:MPB,NPB,KPB,MPW,NPW"
 * (M/N/K per block, M/N per warp of 32 lanes). */
int tc_gemm_params_parse(const char *text, tc_gemm_params *p, tc_str *err);
void tc_gemm_params_format(const tc_gemm_params *p, char *buf, size_t cap);

/* Every valid parameter set for the shape, best-first by the heuristic:
 * fewest padded FLOPs first (the work done on padding when M, N, K are not
 * multiples of the tile), then larger tiles.  Returns the count; *out is
 * allocated (caller frees).
 *
 * The space: MPB, NPB in {32, 64, 128}, KPB in {4, 8, 16}, MPT, NPT in
 * {2, 4}, block_size = (MPB/(2*MPT)) * (NPB/(2*NPT)) kept when in
 * [64, 256] and every rule holds (derived fields filled).  The order, a
 * total one (deterministic):
 *   1. tc_gemm_padded_flops ascending;
 *   2. sets giving at least 64 blocks (tc_gemm_num_blocks) before the
 *      others;
 *   3. among sets with enough blocks, larger MPB*NPB first (more work per
 *      block); among the others, more blocks first;
 *   4. larger KPB first (fewer K iterations and barriers);
 *   5. larger MPT*NPT first (more reuse per thread);
 *   6. then block_size, MPB, NPB, MPT, NPT, each larger first. */
int tc_gemm_candidates(const tc_gemm_shape *s, tc_gemm_params **out);

/* The heuristic's choice: the first candidate.  Returns 0 or -1 + err. */
int tc_gemm_params_default(const tc_gemm_shape *s, tc_gemm_params *p, tc_str *err);

/* XDLOPS (MFMA) candidates for an f16/bf16 shape, best-first by the same
 * order (its rules 1-4, then larger m/n_per_wave, then 32x32x8 before
 * 16x16x16).  The space: MPB, NPB in {32, 64, 128}, KPB in {16, 32}, MPW,
 * NPW in {16, 32, 64} dividing them, 1 to 4 waves.  0 (and *out NULL)
 * when the dtype is not f16 or bf16. */
int tc_gemm_xdlops_candidates(const tc_gemm_shape *s, tc_gemm_params **out);
/* The first XDLOPS candidate.  Returns 0 or -1 + err. */
int tc_gemm_xdlops_default(const tc_gemm_shape *s, tc_gemm_params *p, tc_str *err);
/* mma.sync candidates (docs/mma.md) for an f16/bf16 shape, in the XDLOPS
 * order: MPB, NPB in {32, 64, 128}, KPB in {16, 32}, MPW in {16, 32, 64},
 * NPW in {8, 16, 32, 64} dividing them, 1 to 4 warps.  0 (and *out NULL)
 * when the dtype is not f16 or bf16. */
int tc_gemm_mma_candidates(const tc_gemm_shape *s, tc_gemm_params **out);
/* The first mma candidate (the CLI's heuristic for f16/bf16 on CUDA).
 * Returns 0 or -1 + err. */
int tc_gemm_mma_default(const tc_gemm_shape *s, tc_gemm_params *p, tc_str *err);

/* ---- the default and the tuner's candidates per target ---------------
 *
 * The one place that decides which GEMM kernel a problem gets when no perf
 * config is given (the CLI's gemm and conv2d, tc_gemm_plan, the conv plans)
 * and which configs the tuners try (tc_tune_gemm, tc_tune_conv).  The kernel
 * kinds, by target, preferred first:
 *
 *   cuda, f16/bf16 A and B, arch sm_80 or newer (NULL: newer):
 *            mma.sync (tc_gemm_mma_candidates), then FMA;
 *   hip, f16/bf16 A and B:   XDLOPS (tc_gemm_xdlops_candidates), then FMA;
 *   otherwise (opencl, f32, cuda before sm_80): FMA (tc_gemm_candidates).
 *
 * OpenCL keeps the FMA kernel: it has no tensor cores, and its mma.sync and
 * MFMA are emulations for verification, used only with an explicit perf
 * config.  wgmma (experimental, TILEC_EXPERIMENTAL_WGMMA=1) is never
 * picked here.  The shape's dtype is taken as that of both A and B (every
 * caller builds A and B of one dtype; tc_gemm_generate refuses tensor-core
 * kernels for differing ones). */

/* The heuristic's default for the shape on target (arch: the CUDA or AMD
 * architecture, may be NULL): the first candidate of the first kernel kind
 * above that has one.  *kind (may be NULL) is set to a short phrase for
 * messages: "mma.sync", "XDLOPS (MFMA)" or "FMA".  Returns 0, or -1 with
 * err. */
int tc_gemm_default_for(const tc_gemm_shape *s, tc_target target, const char *arch,
                        tc_gemm_params *p, const char **kind, tc_str *err);

/* The kind of kernel p selects, for messages ("heuristic, mma.sync"):
 * "wgmma", "mma.sync", "XDLOPS (MFMA)" or "FMA". */
const char *tc_gemm_params_kind(const tc_gemm_params *p);

/* The tuner's candidates for the shape on target: every kernel kind's
 * candidates in the order above (e.g. CUDA f16: all mma.sync sets, best
 * first, then all FMA sets), each derived for the shape.  Returns the
 * count; *out is allocated (caller frees; NULL when 0). */
int tc_gemm_candidates_for(const tc_gemm_shape *s, tc_target target, const char *arch,
                           tc_gemm_params **out);

#endif
