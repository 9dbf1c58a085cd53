/* mma_cuda.c - the CUDA dialect's mma.sync m16n8k16 (NVIDIA tensor cores,
 * sm_80 and newer) for the mma GEMM (src/ops/gemm_mma.c, docs/mma.md):
 *
 *   mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32
 *
 * one warp-wide D = A * B + C on fragments the kernel loaded in the PTX
 * ISA's register layouts: A in four .b32 registers (two 16-bit elements
 * each, the lower-numbered in the low half), B in two, C and D in four
 * f32 registers, D written over C. */
#include "dialect.h"

const char tc_cu_mma_prelude[] =
    "/* mma.sync m16n8k16, f32 accumulation (tilec mma_cuda.c) */\n"
    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800\n"
    "#error \"tilec: mma.sync m16n8k16 with f16/bf16 inputs needs sm_80 or newer\"\n"
    "#endif\n"
    "static __device__ __forceinline__ void tc_mma_f16(float *c, const unsigned int *a,\n"
    "                                                  const unsigned int *b) {\n"
    "  asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 \"\n"
    "               \"{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\\n\"\n"
    "               : \"+f\"(c[0]), \"+f\"(c[1]), \"+f\"(c[2]), \"+f\"(c[3])\n"
    "               : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n"
    "}\n"
    "static __device__ __forceinline__ void tc_mma_bf16(float *c, const unsigned int *a,\n"
    "                                                   const unsigned int *b) {\n"
    "  asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 \"\n"
    "               \"{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\\n\"\n"
    "               : \"+f\"(c[0]), \"+f\"(c[1]), \"+f\"(c[2]), \"+f\"(c[3])\n"
    "               : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n"
    "}\n"
    "/* global -> shared without registers (the mma GEMM's blockwise copies):\n"
    " * cp.async of 4, 8 or 16 bytes; src_bytes (0 or the size) < the size\n"
    " * zero-fills the rest (PTX ISA, cp.async) */\n"
    "static __device__ __forceinline__ unsigned int tc_smem_addr(const void *p) {\n"
    "  unsigned int a;\n"
    "  asm(\"{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }\" : \"=r\"(a) : \"l\"(p));\n"
    "  return a;\n"
    "}\n"
    "static __device__ __forceinline__ void tc_cp_async4(unsigned short *dst,\n"
    "                                                    const unsigned short *src, int src_bytes) {\n"
    "  asm volatile(\"cp.async.ca.shared.global [%0], [%1], 4, %2;\\n\"\n"
    "               :: \"r\"(tc_smem_addr(dst)), \"l\"(src), \"r\"(src_bytes) : \"memory\");\n"
    "}\n"
    "static __device__ __forceinline__ void tc_cp_async8(unsigned short *dst,\n"
    "                                                    const unsigned short *src, int src_bytes) {\n"
    "  asm volatile(\"cp.async.ca.shared.global [%0], [%1], 8, %2;\\n\"\n"
    "               :: \"r\"(tc_smem_addr(dst)), \"l\"(src), \"r\"(src_bytes) : \"memory\");\n"
    "}\n"
    "static __device__ __forceinline__ void tc_cp_async16(unsigned short *dst,\n"
    "                                                     const unsigned short *src, int src_bytes) {\n"
    "  asm volatile(\"cp.async.ca.shared.global [%0], [%1], 16, %2;\\n\"\n"
    "               :: \"r\"(tc_smem_addr(dst)), \"l\"(src), \"r\"(src_bytes) : \"memory\");\n"
    "}\n"
    "static __device__ __forceinline__ void tc_cp_async_commit(void) {\n"
    "  asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");\n"
    "}\n"
    "static __device__ __forceinline__ void tc_cp_async_wait_all(void) {\n"
    "  asm volatile(\"cp.async.wait_group 0;\\n\" ::: \"memory\");\n"
    "}\n";

void tc_cu_mma(tc_str *o, tc_dtype in, const char *a, const char *b, const char *acc, int depth) {
  tc_str_indent(o, depth);
  tc_str_printf(o, "tc_mma_%s(%s, %s, %s);\n", in == TC_BF16 ? "bf16" : "f16", acc, a, b);
}
