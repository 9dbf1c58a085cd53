/* gemm_mma.c - the mma.sync blockwise GEMM (NVIDIA tensor cores, sm_80+):
 * mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32, printed
 * for every dialect that has it: CUDA (the PTX instruction, mma_cuda.c) and
 * OpenCL (the emulation in src/codegen/mma_emu.c).  docs/mma.md.
 *
 * The rest of the kernel is gemm.c's, as for XDLOPS kernels (the
 * parameters are XDLOPS-like, tc_gemm_params_is_xdlops): the grid, the
 * blockwise copies global -> registers -> LDS of the stored 16-bit values
 * in LDS [K][M] and [K][N], the double-buffered K loop.
 *
 * Warps.  The block's warps_m x warps_n warps of 32 lanes tile the
 * MPB x NPB block tile; warp w = tid / 32 owns rows warp_m0 = (w /
 * warps_n) * MPW .. + MPW and columns warp_n0 = (w % warps_n) * NPW ..
 * + NPW, as RM x RN mma tiles of 16 x 8 (RM = MPW / 16, RN = NPW / 8).
 *
 * Per K step ks (KPB / 16 of them) every lane loads its fragments from
 * LDS with plain 16-bit loads, packing two elements per 32-bit register
 * (the lower-numbered element in the low half), in the PTX ISA's layout
 * ("Matrix Fragments for mma.m16n8k16 with floating point type"), with
 * g = lane / 4 (groupID) and t = lane % 4 (threadID_in_group):
 *
 *   A (16 x 16, 4 registers a0..a3, elements e = 0..7, register e / 2):
 *       row = g + 8 * ((e / 2) % 2),   k = 2t + e % 2 + 8 * (e / 4);
 *   B (16 x 8, 2 registers b0, b1, elements e = 0..3):
 *       k = 2t + e % 2 + 8 * (e / 2),  col = g;
 *   C / D (16 x 8, 4 f32 c0..c3):
 *       row = g + 8 * (v / 2),         col = 2t + v % 2;
 *
 * then issues RM * RN mma.sync c_acc[r*RN + s] += A_r * B_s, and finally
 * the threadwise copy writes each accumulator to C at its row and column. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gemm_gen.h"
#include "../base/test_hooks.h"

#define line tc_gemm_gen_line
#define unroll tc_gemm_gen_unroll

void tc_mma_layout(int lane, int e, int *a_row, int *a_k, int *b_k, int *b_col, int *c_row,
                   int *c_col) {
  int g = lane / 4, t = lane % 4;
  *a_row = g + 8 * ((e / 2) % 2);
  *a_k = 2 * t + e % 2 + 8 * (e / 4);
  *b_k = 2 * t + e % 2 + 8 * ((e / 2) % 2);
  *b_col = g;
  *c_row = g + 8 * ((e / 2) % 2);
  *c_col = 2 * t + e % 2;
}

int64_t tc_mma_extra_smem(const tc_dialect *d, const tc_gemm_params *p) {
  return d->mma_smem ? d->mma_smem(p->waves_m * p->waves_n) : 0;
}

void tc_mma_emit_prelude(tc_gemm_gen *G) {
  tc_str_cat(G->o, "#ifndef TC_MMA_PRELUDE\n#define TC_MMA_PRELUDE\n");
  tc_str_cat(G->o, G->d->mma_prelude ? G->d->mma_prelude : "");
  tc_str_cat(G->o, "#endif\n\n");
}

void tc_mma_emit_setup(tc_gemm_gen *G, int depth) {
  const tc_gemm_params *p = G->p;
  int rm = p->m_per_wave / 16, rn = p->n_per_wave / 8;
  line(G, depth, "/* mma.sync m16n8k16: warps %d x %d of %d x %d, %d x %d mma tiles each */",
       p->waves_m, p->waves_n, p->m_per_wave, p->n_per_wave, rm, rn);
  line(G, depth, "const int tc_warp = tid / %d, tc_lane = tid %% %d;", TC_WARP_SIZE,
       TC_WARP_SIZE);
  line(G, depth, "const int warp_m0 = (tc_warp / %d) * %d, warp_n0 = (tc_warp %% %d) * %d;",
       p->waves_n, p->m_per_wave, p->waves_n, p->n_per_wave);
  line(G, depth, "/* PTX layouts: groupID mma_g, threadID_in_group mma_t */");
  line(G, depth, "const int mma_g = tc_lane / 4, mma_t = tc_lane %% 4;");
  line(G, depth, "unsigned int a_frag[%d][4], b_frag[%d][2];  /* mma operand fragments */", rm,
       rn);
  line(G, depth, "float c_acc[%d][4];  /* mma accumulators */", rm * rn);
  if (G->d->mma_decls) G->d->mma_decls(G->o, p->waves_m * p->waves_n, depth);
  unroll(G, depth);
  line(G, depth, "for (int t = 0; t < %d; ++t) {", rm * rn);
  unroll(G, depth + 1);
  line(G, depth + 1, "for (int v = 0; v < 4; ++v) c_acc[t][v] = 0.0f;");
  line(G, depth, "}");
}

void tc_mma_emit_block_gemm(tc_gemm_gen *G, int odd, int depth) {
  const tc_gemm_params *p = G->p;
  int kpb = p->k_per_block, mpb = p->m_per_block, npb = p->n_per_block;
  int rm = p->m_per_wave / 16, rn = p->n_per_wave / 8;
  int abase = odd ? kpb * mpb : 0, bbase = odd ? kpb * npb : 0;
  int f = tc_test_hooks_get()->mma_fault;
  int d1 = depth + 1, d2 = depth + 2, d3 = depth + 3, d4 = depth + 4;
  line(G, depth, "{ /* blockwise GEMM (mma.sync m16n8k16) on the %s buffers */",
       odd ? "odd" : "even");
  unroll(G, d1);
  line(G, d1, "for (int ks = 0; ks < %d; ++ks) {", kpb / 16);
  /* A register i: row mma_g + 8*(i%2), k 2*mma_t + 8*(i/2) (low half) and
   * + 1 (high half); fault 1 swaps a1 and a2 */
  unroll(G, d2);
  line(G, d2, "for (int r = 0; r < %d; ++r) {", rm);
  unroll(G, d3);
  line(G, d3, "for (int i = 0; i < 4; ++i) {");
  line(G, d4,
       "const int o = %d + (ks * 16 + 2 * mma_t + 8 * (i %s 2)) * %d + warp_m0 + r * 16 + mma_g + "
       "8 * (i %s 2);",
       abase, f == 1 ? "%" : "/", mpb, f == 1 ? "/" : "%");
  line(G, d4, "a_frag[r][i] = (unsigned int)a_lds[o] | ((unsigned int)a_lds[o + %d] << 16);", mpb);
  line(G, d3, "}");
  line(G, d2, "}");
  /* B register i: k 2*mma_t + 8*i (low half) and + 1 (high), column
   * mma_g; fault 3 swaps the halves */
  unroll(G, d2);
  line(G, d2, "for (int s = 0; s < %d; ++s) {", rn);
  unroll(G, d3);
  line(G, d3, "for (int i = 0; i < 2; ++i) {");
  line(G, d4, "const int o = %d + (ks * 16 + 2 * mma_t + 8 * i) * %d + warp_n0 + s * 8 + mma_g;",
       bbase, npb);
  if (f == 3)
    line(G, d4, "b_frag[s][i] = (unsigned int)b_lds[o + %d] | ((unsigned int)b_lds[o] << 16);",
         npb);
  else
    line(G, d4, "b_frag[s][i] = (unsigned int)b_lds[o] | ((unsigned int)b_lds[o + %d] << 16);",
         npb);
  line(G, d3, "}");
  line(G, d2, "}");
  char a[32], b[32], c[32];
  for (int r = 0; r < rm; r++)
    for (int s = 0; s < rn; s++) {
      snprintf(a, sizeof a, "a_frag[%d]", r);
      snprintf(b, sizeof b, "b_frag[%d]", s);
      snprintf(c, sizeof c, "c_acc[%d]", r * rn + s);
      G->d->mma(G->o, G->pb->a_dtype, a, b, c, d2);
    }
  line(G, d1, "}");
  line(G, depth, "}");
}

tc_status tc_mma_emit_c_store(tc_gemm_gen *G, int depth) {
  const tc_gemm_params *p = G->p;
  tc_epool *P = G->pool;
  int rm = p->m_per_wave / 16, rn = p->n_per_wave / 8;
  const tc_expr *wm0 = tc_e_var(P, "warp_m0", 0, p->m_per_block - p->m_per_wave);
  const tc_expr *wn0 = tc_e_var(P, "warp_n0", 0, p->n_per_block - p->n_per_wave);
  const tc_expr *g = tc_e_var(P, "mma_g", 0, 7);
  const tc_expr *t2 = tc_e_mulc(P, tc_e_var(P, "mma_t", 0, 3), 2);
  char acc[48];
  tc_status st = TC_OK;
  line(G, depth, "/* threadwise copy: accumulators -> C (mma m16n8 C layout: c_v at row mma_g + "
                 "8*(v/2), column 2*mma_t + v%%2) */");
  for (int r = 0; r < rm && st == TC_OK; r++)
    for (int s = 0; s < rn && st == TC_OK; s++)
      for (int v = 0; v < 4 && st == TC_OK; v++) {
        int col = tc_test_hooks_get()->mma_fault == 2 ? 1 - v % 2 : v % 2; /* fault 2: columns swapped */
        const tc_expr *m = tc_e_addc(
            P, tc_e_add(P, tc_e_add(P, tc_e_mulc(P, G->m_blk, p->m_per_block), wm0), g),
            r * 16 + 8 * (v / 2));
        const tc_expr *n = tc_e_addc(
            P, tc_e_add(P, tc_e_add(P, tc_e_mulc(P, G->n_blk, p->n_per_block), wn0), t2),
            s * 8 + col);
        snprintf(acc, sizeof acc, "c_acc[%d][%d]", r * rn + s, v);
        st = tc_gemm_gen_store_c(G, m, n, acc, depth);
      }
  return st;
}
