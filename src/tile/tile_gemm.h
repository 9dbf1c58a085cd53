/* tile_gemm.h - GEMM kernels in the tile IR (tile.h), written the way
 * Triton's matmul tutorial and vLLM's fused-MoE kernel are, plus their
 * plain C reference and launch helpers.
 *
 * Plain: C[M,N] = A[M,K] * B[K,N], every matrix row-major (A stored
 * [K,M] with trans_a, B stored [N,K] with trans_b; strides are kernel
 * arguments).  One program per BLOCK_M x BLOCK_N tile of C; offs_m wraps
 * modulo M (or, with mask_m, rows >= M are masked: a mask on M).
 *
 * MoE gather (moe): the rows of A ([tokens, K]) are gathered through
 * sorted_token_ids (M ids, one per row of C): offs_token =
 * load(sorted_token_ids + offs_m), token_mask = offs_token <
 * num_valid_tokens, and A's load is masked by token_mask[:, None] with
 * other = 0.  C is [M, N], row p holding the product of row ids[p] of A
 * (zero when ids[p] >= num_valid_tokens).
 *
 * The kernel's arguments: pointers A, B, C (and sorted_token_ids), then
 * the i32 arguments M, N, (K when dynamic_k), (num_valid_tokens),
 * stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn. */
#ifndef TC_TILE_GEMM_H
#define TC_TILE_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "../runtime/runtime.h"
#include "tile.h"
#include "tile_emit.h"

/* How the builder writes A's address (only the first is what the
 * aggregate-load pass accepts). */
typedef enum tc_tile_a_form {
  TC_TILE_A_CANONICAL, /* a_ptr + offs_m[:, None]*stride_am + offs_k[None, :]*stride_ak */
  TC_TILE_A_K_FIRST,   /* a_ptr + offs_k[None, :]*stride_ak + offs_m[:, None]*stride_am */
  TC_TILE_A_COMBINED   /* a_ptr + (offs_m[:, None]*stride_am + offs_k[None, :]*stride_ak) */
} tc_tile_a_form;

typedef struct tc_tile_gemm_desc {
  int64_t m, n, k;      /* C is m x n, the sum runs over k */
  int trans_a, trans_b;
  tc_dtype dtype;       /* A, B and C: f32 or f16 (accumulation in f32) */
  int block_m, block_n, block_k; /* 0: 32, 32, 16 */
  int threads;          /* per program; 0: min(block_m * block_n, 256) */
  int dynamic_k;        /* K is a run-time argument (default: a constant) */
  int mask_k;           /* mask A and B along K (turned on when K % block_k != 0) */
  int mask_m;           /* plain: mask A's rows >= M instead of wrapping offs_m % M */
  tc_tile_a_form a_form;
  int moe;              /* gather A's rows through sorted_token_ids */
  int64_t tokens;       /* moe: rows of A (0: m) */
  int64_t num_valid;    /* moe: num_valid_tokens (-1: tokens) */
} tc_tile_gemm_desc;

/* Defaults: f32, no transposes, blocks 32x32x16, canonical form,
 * num_valid -1. */
void tc_tile_gemm_desc_init(tc_tile_gemm_desc *d, int64_t m, int64_t n, int64_t k);
/* Fills the defaults in and checks the description; 0, or -1 with err. */
int tc_tile_gemm_resolve(tc_tile_gemm_desc *d, tc_str *err);
/* Builds the kernel (d resolved); NULL with err on failure. */
tc_tile_kernel *tc_tile_gemm_build(const tc_tile_gemm_desc *d, const char *name, tc_str *err);

/* Elements of the buffers: 'A', 'B', 'C' and 'I' (sorted_token_ids). */
size_t tc_tile_gemm_elems(const tc_tile_gemm_desc *d, char which);
/* The value of an i32 argument by name; 0, or -1 for an unknown name. */
int tc_tile_gemm_arg(const tc_tile_gemm_desc *d, const char *name, int32_t *v);
/* A token id list for M rows: valid ids, ids in [num_valid, tokens) and
 * padding ids (= tokens), deterministic. */
void tc_tile_gemm_ids(const tc_tile_gemm_desc *d, int32_t *ids);
/* The reference in double: want and bound (tc_tune_bound) per element of
 * C (m x n); ids is used when d->moe. */
void tc_tile_gemm_reference(const tc_tile_gemm_desc *d, const void *a, const void *b,
                            const int32_t *ids, double *want, double *bound);

/* Launches an emitted GEMM kernel on target (tc_rt_launch): on OpenCL
 * through cl, on CUDA or HIP for arch (NULL: tc_tune_arch's: sm_90a on
 * CUDA, the AMD GPU's on HIP);
 * c is copied back.  *ms (may be NULL) gets the kernel time.
 * Then repeat timed launches back to back (0: none), their times in
 * repeat_ms[0 .. repeat) (tc_launch's repeat and repeat_ms: c keeps the
 * first launch's result). */
tc_status tc_tile_gemm_run(tc_target target, tc_cl *cl, const char *arch,
                           const tc_tile_emitted *em, const tc_tile_gemm_desc *d, const void *a,
                           const void *b, void *c, const int32_t *ids, double *ms, int repeat,
                           double *repeat_ms, tc_str *err);

#endif
