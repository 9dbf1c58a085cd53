/* mfma_emu.c - the OpenCL dialect's emulation of AMD's MFMA instructions
 * (v_mfma_f32_32x32x8{f16,bf16_1k}, v_mfma_f32_16x16x16{f16,bf16_1k}).
 *
 * The emulation models what the hardware does with the registers of one
 * wavefront of 64 lanes, so that the HIP kernels' data movement (which
 * lane loads which element into which fragment register, and where each
 * accumulator is stored) runs, and is checked, on any OpenCL device:
 *
 *   1. every lane publishes its A and B fragments (4 values each) to
 *      the wave's scratch in shared memory, as f32;
 *   2. barrier;
 *   3. every lane computes each element of its C fragment as an f32 dot
 *      product over K of the published values, adding it to the
 *      accumulator;
 *   4. barrier (the scratch is reused by the next MFMA).
 *
 * Step 3 finds the operands with AMD's register layouts (the AMD Instinct
 * CDNA 2 / CDNA 3 ISA guides, "matrix fused-multiply-add" data layouts,
 * and the AMD Matrix Instruction Calculator; see docs/amd.md), written in
 * their own direction here, from matrix element to register:
 *
 *   A[i][k] (i < m, k < K) is item k % 4 of lane i + m * (k / 4);
 *   B[k][j] is item k % 4 of lane j + n * (k / 4);
 *   32x32x8:  D[i][j] is item 4 * (i / 8) + i % 4 of lane j + 32 * ((i / 4) % 2);
 *   16x16x16: D[i][j] is item i % 4 of lane j + 16 * (i / 4).
 *
 * The generator (src/ops/gemm_mfma.c) derives its fragment loads and C
 * stores from its own copy of the layouts; a kernel whose layouts differ
 * from these computes wrong results here (tests/test_hip.c injects such
 * faults).  All of a block's waves call the emulation in uniform control
 * flow (the barriers are the work-group's). */
#include "dialect.h"

#include "../target/target.h"

const char tc_cl_mfma_prelude[] =
    "/* MFMA emulation (tilec mfma_emu.c): one wave's D = A * B + C */\n"
    "static float tc_mfma_in(ushort v, int bf16) {\n"
    "  return bf16 ? tc_bf16_to_f32(v) : vload_half(0, (const half *)&v);\n"
    "}\n"
    "/* the scratch slot of A[i][k] (or B[k][i]): item k % 4 of lane i + m * (k / 4) */\n"
    "static int tc_mfma_ab_slot(int m, int i, int k) { return (i + m * (k / 4)) * 4 + k % 4; }\n"
    "/* the row i of D held by item v of a lane (its column is lane % n): the\n"
    " * inverse of D[i][j] -> lane j + 32 * ((i / 4) % 2), item 4 * (i / 8) + i % 4\n"
    " * (32x32) and D[i][j] -> lane j + 16 * (i / 4), item i % 4 (16x16) */\n"
    "static int tc_mfma_d_row(int n, int lane, int v) {\n"
    "  return n == 32 ? 8 * (v / 4) + 4 * ((lane / 32) % 2) + v % 4 : 4 * (lane / 16) + v;\n"
    "}\n"
    "static void tc_mfma_emu(__local float *scr, int lane, int n, int kdim, int bf16,\n"
    "                        const ushort *a, const ushort *b, float *c) {\n"
    "  for (int i = 0; i < 4; i++) {\n"
    "    scr[lane * 4 + i] = tc_mfma_in(a[i], bf16);\n"
    "    scr[256 + lane * 4 + i] = tc_mfma_in(b[i], bf16);\n"
    "  }\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  const int j = lane % n;\n"
    "  for (int v = 0; v < n * n / 64; v++) {\n"
    "    const int i = tc_mfma_d_row(n, lane, v);\n"
    "    float s = 0.0f;\n"
    "    for (int k = 0; k < kdim; k++)\n"
    "      s += scr[tc_mfma_ab_slot(n, i, k)] * scr[256 + tc_mfma_ab_slot(n, j, k)];\n"
    "    c[v] += s;\n"
    "  }\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "}\n";

/* scratch: 64 lanes x 4 values of A and of B, f32, per wave */
#define SCRATCH_FLOATS 512

void tc_cl_mfma_decls(tc_str *o, int kind, int na, int nb, int nacc, int waves, int depth) {
  tc_str_indent(o, depth);
  tc_str_printf(o, "ushort a_frag[%d][4], b_frag[%d][4];  /* MFMA operand fragments */\n", na, nb);
  tc_str_indent(o, depth);
  tc_str_printf(o, "float c_acc[%d][%d];  /* MFMA accumulators */\n", nacc,
                kind == TC_MFMA_32X32X8 ? 16 : 4);
  tc_str_indent(o, depth);
  tc_str_printf(o, "__local float tc_mfma_scratch[%d];  /* MFMA emulation: %d waves */\n",
                waves * SCRATCH_FLOATS, waves);
}

int64_t tc_cl_mfma_smem(int waves) { return (int64_t)waves * SCRATCH_FLOATS * 4; }

void tc_cl_mfma(tc_str *o, int kind, tc_dtype in, const char *a, const char *b, const char *acc,
                int depth) {
  int n = kind == TC_MFMA_32X32X8 ? 32 : 16, k = kind == TC_MFMA_32X32X8 ? 8 : 16;
  tc_str_indent(o, depth);
  tc_str_printf(o, "tc_mfma_emu(tc_mfma_scratch + tc_wave * %d, tc_lane, %d, %d, %d, %s, %s, %s);\n",
                SCRATCH_FLOATS, n, k, in == TC_BF16, a, b, acc);
}
