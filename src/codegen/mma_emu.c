/* mma_emu.c - the OpenCL dialect's emulation of NVIDIA's
 * mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32.
 *
 * The emulation models what the tensor cores do with the registers of one
 * warp of 32 lanes, so that the CUDA kernels' data movement (which lane
 * loads which element into which fragment register half, and where each
 * accumulator is stored) runs, and is checked, on any OpenCL device:
 *
 *   1. every lane publishes its A (4 registers, 8 elements) and B (2
 *      registers, 4 elements) fragments to the warp's scratch in shared
 *      memory, as f32 (element 2*r of register r is its low half, 2*r + 1
 *      its high half);
 *   2. barrier;
 *   3. every lane computes each of its 4 C values as an f32 dot product
 *      over K = 16 of the published values, adding it to the accumulator;
 *   4. barrier (the scratch is reused by the next mma).
 *
 * Step 3 finds the operands with the PTX ISA's register layouts ("Matrix
 * Fragments for mma.m16n8k16 with floating point type"; docs/mma.md),
 * written here in their own direction, from matrix element to register,
 * with groupID = lane / 4 and threadID_in_group = lane % 4:
 *
 *   A[i][k] (16 x 16) is element 2 * (i / 8 + 2 * (k / 8)) + k % 2 of
 *       lane 4 * (i % 8) + (k % 8) / 2;
 *   B[k][j] (16 x 8)  is element 2 * (k / 8) + k % 2 of lane 4 * j + (k % 8) / 2;
 *   D[i][j] (16 x 8)  is value 2 * (i / 8) + j % 2 of lane 4 * (i % 8) + j / 2.
 *
 * The generator (src/ops/gemm_mma.c) derives its fragment loads and C
 * stores from its own copy of the layouts (register -> element); a kernel
 * whose layouts differ from these computes wrong results here
 * (tests/test_mma.c injects such faults).  All of a block's warps call the
 * emulation in uniform control flow (the barriers are the work-group's). */
#include "dialect.h"

const char tc_cl_mma_prelude[] =
    "/* mma.sync m16n8k16 emulation (tilec mma_emu.c): one warp's D = A * B + C */\n"
    "static float tc_mma_in(uint r, int hi, int bf16) {\n"
    "  ushort v = (ushort)(hi ? r >> 16 : r & 0xffffu);\n"
    "  return bf16 ? tc_bf16_to_f32(v) : vload_half(0, (const half *)&v);\n"
    "}\n"
    "/* the scratch slot of A[i][k]: element 2*(i/8 + 2*(k/8)) + k%2 of lane 4*(i%8) + (k%8)/2 */\n"
    "static int tc_mma_a_slot(int i, int k) {\n"
    "  return (4 * (i % 8) + (k % 8) / 2) * 8 + 2 * (i / 8 + 2 * (k / 8)) + k % 2;\n"
    "}\n"
    "/* the scratch slot of B[k][j]: element 2*(k/8) + k%2 of lane 4*j + (k%8)/2 */\n"
    "static int tc_mma_b_slot(int k, int j) {\n"
    "  return 256 + (4 * j + (k % 8) / 2) * 4 + 2 * (k / 8) + k % 2;\n"
    "}\n"
    "static void tc_mma_emu(__local float *scr, int lane, int bf16, const uint *a, const uint *b,\n"
    "                       float *c) {\n"
    "  for (int e = 0; e < 8; e++) scr[lane * 8 + e] = tc_mma_in(a[e / 2], e % 2, bf16);\n"
    "  for (int e = 0; e < 4; e++) scr[256 + lane * 4 + e] = tc_mma_in(b[e / 2], e % 2, bf16);\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (int v = 0; v < 4; v++) {\n"
    "    /* the inverse of D[i][j] -> lane 4*(i%8) + j/2, value 2*(i/8) + j%2 */\n"
    "    const int i = lane / 4 + 8 * (v / 2), j = 2 * (lane % 4) + v % 2;\n"
    "    float s = 0.0f;\n"
    "    for (int k = 0; k < 16; k++) s += scr[tc_mma_a_slot(i, k)] * scr[tc_mma_b_slot(k, j)];\n"
    "    c[v] += s;\n"
    "  }\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "}\n"
    "/* CUDA's cp.async global -> shared (the mma GEMM's blockwise copies), as a\n"
    " * plain copy of n 16-bit elements; src_bytes 0 copies zeros */\n"
    "static void tc_cp_async_emu(__local ushort *dst, __global const ushort *src, int n,\n"
    "                            int src_bytes) {\n"
    "  for (int i = 0; i < n; i++) dst[i] = 2 * i < src_bytes ? src[i] : (ushort)0;\n"
    "}\n"
    "#define tc_cp_async4(d, s, b) tc_cp_async_emu(d, s, 2, b)\n"
    "#define tc_cp_async8(d, s, b) tc_cp_async_emu(d, s, 4, b)\n"
    "#define tc_cp_async16(d, s, b) tc_cp_async_emu(d, s, 8, b)\n"
    "#define tc_cp_async_commit()\n"
    "#define tc_cp_async_wait_all()\n";

/* scratch: 32 lanes x (8 A + 4 B) values, f32, per warp */
#define SCRATCH_FLOATS 384

void tc_cl_mma_decls(tc_str *o, int warps, int depth) {
  tc_str_indent(o, depth);
  tc_str_printf(o, "__local float tc_mma_scratch[%d];  /* mma emulation: %d warps */\n",
                warps * SCRATCH_FLOATS, warps);
}

int64_t tc_cl_mma_smem(int warps) { return (int64_t)warps * SCRATCH_FLOATS * 4; }

void tc_cl_mma(tc_str *o, tc_dtype in, const char *a, const char *b, const char *acc, int depth) {
  tc_str_indent(o, depth);
  tc_str_printf(o, "tc_mma_emu(tc_mma_scratch + tc_warp * %d, tc_lane, %d, %s, %s, %s);\n",
                SCRATCH_FLOATS, in == TC_BF16, a, b, acc);
}
