/* gemm_mfma.c - the MFMA blockwise GEMM of XDLOPS kernels (rocMLIR's
 * XDLOPS kernels), printed once for every dialect that has MFMA: HIP
 * (AMD's builtins) and OpenCL (the emulation in src/codegen/mfma_emu.c).
 *
 * The rest of the kernel is gemm.c's: the grid, the blockwise copies
 * global -> registers -> LDS (for XDLOPS kernels the stored 16-bit values,
 * unconverted, in LDS [K][M] and [K][N]), the double-buffered K loop.
 *
 * Waves.  The block's waves_m x waves_n waves of 64 lanes tile the
 * MPB x NPB block tile; wave w = tid / 64 owns rows wave_m0 = (w /
 * waves_n) * MPW .. + MPW and columns wave_n0 = (w % waves_n) * NPW ..
 * + NPW, as RM x RN MFMA tiles of m x n (RM = MPW / m, RN = NPW / n).
 *
 * Per K step ks of the LDS tile (KPB / K steps of the instruction's K),
 * every lane l loads its fragments from LDS in the instruction's register
 * layout (AMD's; docs/amd.md gives the sources):
 *
 *   A fragment of tile r, item i (0..3): A[row][k] with
 *       row = wave_m0 + r*m + l % m,   k = ks*K + 4*(l / m) + i;
 *   B fragment of tile s, item i:       B[k][col] with
 *       col = wave_n0 + s*n + l % n,   k = ks*K + 4*(l / n) + i;
 *
 * then issues RM * RN MFMAs c_acc[r*RN + s] += A_r * B_s.  Accumulator
 * item v of lane l of tile (r, s) is C[row][col] with
 *
 *   row = wave_m0 + r*m + 4*(l / n) + 4*(64/n)*(v / 4) + v % 4,
 *   col = wave_n0 + s*n + l % n
 *
 * (32x32x8: 16 items, row = 8*(v/4) + 4*(l/32) + v%4; 16x16x16: 4
 * items, row = 4*(l/16) + v), which the threadwise copy writes to C. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gemm_gen.h"
#include "../base/test_hooks.h"

/* the printing helpers of gemm_gen.h, by their short names */
#define line tc_gemm_gen_line
#define unroll tc_gemm_gen_unroll

typedef struct shape {
  int m, n, k, acc; /* the instruction's tile and f32 accumulators per lane */
} shape;

static shape shape_of(int kind) {
  shape s = {32, 32, 8, 16};
  if (kind == TC_MFMA_16X16X16) s.m = s.n = 16, s.k = 16, s.acc = 4;
  return s;
}

void tc_mfma_layout(int kind, int lane, int item, int *ab_row, int *ab_k, int *c_row, int *c_col) {
  shape s = shape_of(kind);
  *ab_row = lane % s.m;
  *ab_k = 4 * (lane / s.m) + item % 4;
  *c_row = 4 * (lane / s.n) + 4 * (64 / s.n) * (item / 4) + item % 4;
  *c_col = lane % s.n;
}

int64_t tc_mfma_extra_smem(const tc_dialect *d, const tc_gemm_params *p) {
  return d->mfma_smem ? d->mfma_smem(p->waves_m * p->waves_n) : 0;
}

void tc_mfma_emit_prelude(tc_gemm_gen *G) {
  tc_str_cat(G->o, "#ifndef TC_MFMA_PRELUDE\n#define TC_MFMA_PRELUDE\n");
  tc_str_cat(G->o, G->d->mfma_prelude ? G->d->mfma_prelude : "");
  tc_str_cat(G->o, "#endif\n\n");
}

void tc_mfma_emit_setup(tc_gemm_gen *G, int depth) {
  const tc_gemm_params *p = G->p;
  shape s = shape_of(p->mfma);
  int rm = p->m_per_wave / s.m, rn = p->n_per_wave / s.n;
  int f = tc_test_hooks_get()->mfma_fault;
  line(G, depth, "/* MFMA %dx%dx%d: waves %d x %d of %d x %d, %d x %d MFMA tiles each */", s.m,
       s.n, s.k, p->waves_m, p->waves_n, p->m_per_wave, p->n_per_wave, rm, rn);
  line(G, depth, "const int tc_wave = tid / %d, tc_lane = tid %% %d;", TC_WAVE_SIZE, TC_WAVE_SIZE);
  line(G, depth, "const int wave_m0 = (tc_wave / %d) * %d, wave_n0 = (tc_wave %% %d) * %d;",
       p->waves_n, p->m_per_wave, p->waves_n, p->n_per_wave);
  line(G, depth, "/* lane layouts: fragments A[a_row][a_k4 + i], B[b_k4 + i][b_col]; C item v at "
                 "[c_row + %d*(v/4) + v%%4][c_col] */", 4 * (64 / s.n));
  /* tc_test_hooks_get()->mfma_fault 1 swaps A's K groups, 3 shifts B's columns */
  line(G, depth, f == 1 ? "const int a_row = tc_lane %% %d, a_k4 = 4 * ((tc_lane / %d) ^ 1);"
                         : "const int a_row = tc_lane %% %d, a_k4 = 4 * (tc_lane / %d);",
       s.m, s.m);
  line(G, depth, f == 3 ? "const int b_col = (tc_lane + 1) %% %d, b_k4 = 4 * (tc_lane / %d);"
                         : "const int b_col = tc_lane %% %d, b_k4 = 4 * (tc_lane / %d);",
       s.n, s.n);
  line(G, depth, "const int c_row = 4 * (tc_lane / %d), c_col = tc_lane %% %d;", s.n, s.n);
  G->d->mfma_decls(G->o, p->mfma, rm, rn, rm * rn, p->waves_m * p->waves_n, depth);
  unroll(G, depth);
  line(G, depth, "for (int t = 0; t < %d; ++t) {", rm * rn);
  unroll(G, depth + 1);
  line(G, depth + 1, "for (int v = 0; v < %d; ++v) c_acc[t][v] = 0.0f;", s.acc);
  line(G, depth, "}");
}

void tc_mfma_emit_block_gemm(tc_gemm_gen *G, int odd, int depth) {
  const tc_gemm_params *p = G->p;
  shape s = shape_of(p->mfma);
  int kpb = p->k_per_block, mpb = p->m_per_block, npb = p->n_per_block;
  int rm = p->m_per_wave / s.m, rn = p->n_per_wave / s.n;
  int abase = odd ? kpb * mpb : 0, bbase = odd ? kpb * npb : 0;
  line(G, depth, "{ /* blockwise GEMM (MFMA %dx%dx%d) on the %s buffers */", s.m, s.n, s.k,
       odd ? "odd" : "even");
  int d1 = depth + 1, d2 = depth + 2, d3 = depth + 3;
  unroll(G, d1);
  line(G, d1, "for (int ks = 0; ks < %d; ++ks) {", kpb / s.k);
  unroll(G, d2);
  line(G, d2, "for (int r = 0; r < %d; ++r) {", rm);
  unroll(G, d3);
  line(G, d3,
       "for (int i = 0; i < 4; ++i) a_frag[r][i] = a_lds[%d + (ks * %d + a_k4 + i) * %d + wave_m0 + "
       "r * %d + a_row];",
       abase, s.k, mpb, s.m);
  line(G, d2, "}");
  unroll(G, d2);
  line(G, d2, "for (int r = 0; r < %d; ++r) {", rn);
  unroll(G, d3);
  line(G, d3,
       "for (int i = 0; i < 4; ++i) b_frag[r][i] = b_lds[%d + (ks * %d + b_k4 + i) * %d + wave_n0 + "
       "r * %d + b_col];",
       bbase, s.k, npb, s.n);
  line(G, d2, "}");
  char a[32], b[32], c[32];
  for (int r = 0; r < rm; r++)
    for (int t = 0; t < rn; t++) {
      snprintf(a, sizeof a, "a_frag[%d]", r);
      snprintf(b, sizeof b, "b_frag[%d]", t);
      snprintf(c, sizeof c, "c_acc[%d]", r * rn + t);
      G->d->mfma(G->o, p->mfma, G->pb->a_dtype, a, b, c, d2);
    }
  line(G, d1, "}");
  line(G, depth, "}");
}

tc_status tc_mfma_emit_c_store(tc_gemm_gen *G, int depth) {
  const tc_gemm_params *p = G->p;
  tc_epool *P = G->pool;
  shape s = shape_of(p->mfma);
  int rm = p->m_per_wave / s.m, rn = p->n_per_wave / s.n;
  const tc_expr *wm0 = tc_e_var(P, "wave_m0", 0, p->m_per_block - p->m_per_wave);
  const tc_expr *wn0 = tc_e_var(P, "wave_n0", 0, p->n_per_block - p->n_per_wave);
  const tc_expr *crow = tc_e_var(P, "c_row", 0, 4 * (64 / s.n - 1));
  const tc_expr *ccol = tc_e_var(P, "c_col", 0, s.n - 1);
  char acc[48];
  tc_status st = TC_OK;
  line(G, depth, "/* threadwise copy: accumulators -> C (MFMA %dx%d C layout) */", s.m, s.n);
  for (int r = 0; r < rm && st == TC_OK; r++)
    for (int t = 0; t < rn && st == TC_OK; t++)
      for (int v = 0; v < s.acc && st == TC_OK; v++) {
        int within = 4 * (64 / s.n) * (v / 4) + (tc_test_hooks_get()->mfma_fault == 2 ? 3 - v % 4 : v % 4);
        const tc_expr *m = tc_e_addc(
            P, tc_e_add(P, tc_e_add(P, tc_e_mulc(P, G->m_blk, p->m_per_block), wm0), crow),
            r * s.m + within);
        const tc_expr *n = tc_e_addc(
            P, tc_e_add(P, tc_e_add(P, tc_e_mulc(P, G->n_blk, p->n_per_block), wn0), ccol),
            t * s.n);
        snprintf(acc, sizeof acc, "c_acc[%d][%d]", r * rn + t, v);
        st = tc_gemm_gen_store_c(G, m, n, acc, depth);
      }
  return st;
}
