/* wgmma_emu.c - the OpenCL dialect's emulation of NVIDIA's sm_90a
 * wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16} with A
 * and B in shared memory (docs/wgmma.md).
 *
 * Each thread of the warp group (128 threads, t = tid % 128) computes its
 * own N/2 accumulators, reading A and B from the shared tiles through the
 * matrix descriptors as the hardware addresses them, so a kernel whose
 * shared-memory layout and descriptors disagree computes wrong results:
 *
 *   descriptor d: start = (d & 0x3fff) << 4, LBO = ((d >> 16) & 0x3fff) << 4,
 *   SBO = ((d >> 32) & 0x3fff) << 4, swizzle mode d >> 62 (0 none and 1
 *   128B are modelled, 64B and 32B give NaN);
 *   K-major, no swizzle (PTX ISA canonical layout ((8,m),(T,2k)) :
 *   ((1T,SBO),(1,LBO)), T = 8 16-bit elements): element (row r, k) of the
 *   64 x 16 A (N x 16 B) is at byte start + (r / 8) * SBO + (r % 8) * 16 +
 *   (k / 8) * LBO + (k % 8) * 2;
 *   M/N-major (trans), no swizzle: ((T,1,m),(8,k)) : ((1,T,SBO),(1T,LBO)),
 *   i.e. start + (r / 8) * SBO + (r % 8) * 2 + (k / 8) * LBO + (k % 8) * 16;
 *   128B swizzle (the PTX ISA's canonical layouts composed with
 *   Swizzle<3,4,3> on the byte address, which needs 1024-byte aligned
 *   tiles): K-major ((8,m),(T,2k)) : ((8T,SBO),(1,T)), i.e. start + (r / 8)
 *   * SBO + (r % 8) * 128 + k * 2 (LBO unused); M/N-major ((T,8,m),(8,k)) :
 *   ((1,T,LBO),(8T,SBO)), i.e. start + (r / 64) * LBO + (r % 64) * 2 + (k /
 *   8) * SBO + (k % 8) * 128; then bits 4-6 ^= bits 7-9;
 *   D fragment (PTX ISA "WGMMA .m64nNk16 register fragment layout for
 *   accumulator matrix D"; CUTLASS CLayout_64xN): value j of thread t is
 *   D[16 (t / 32) + g + 8 ((j / 2) % 2)][8 (j / 4) + 2 tq + j % 2], g = (t %
 *   32) / 4, tq = t % 4.
 *
 * The descriptors' addresses are byte offsets from the start of the shared
 * array passed with them (the generator's wgmma_addr hook).  Nothing is
 * shared between threads, so no barrier is needed.
 *
 * The helpers are always_inline: PoCL (pthread device) miscompiles a static
 * helper that it leaves out of line when it takes the kernel's two __local
 * tiles: called twice (even and odd buffers), tc_wgmma_emu was not inlined
 * and added nothing (f16 gave zeros; a printf inside it crashed the kernel),
 * although the same code inlined, or with external linkage, verifies. */
#include "dialect.h"

const char tc_cl_wgmma_prelude[] =
    "/* wgmma m64nNk16 emulation (tilec wgmma_emu.c): one warp group's D += A * B */\n"
    "static __attribute__((always_inline)) ulong tc_wgmma_desc(uint addr, uint lbo, uint sbo, uint mode) {\n"
    "  return (ulong)((addr & 0x3FFFFu) >> 4) | ((ulong)((lbo >> 4) & 0x3FFFu) << 16) |\n"
    "         ((ulong)((sbo >> 4) & 0x3FFFu) << 32) | ((ulong)(mode & 3u) << 62);\n"
    "}\n"
    "/* element (r, k) of the operand (r: row of A / column of B; k < 16) */\n"
    "static __attribute__((always_inline)) float tc_wgmma_in(__local const ushort *s, ulong d, int r, int k,\n"
    "                                                     int bf16, int trans) {\n"
    "  const uint start = (uint)(d & 0x3fff) << 4, lbo = (uint)((d >> 16) & 0x3fff) << 4;\n"
    "  const uint sbo = (uint)((d >> 32) & 0x3fff) << 4, mode = (uint)(d >> 62);\n"
    "  uint byte;\n"
    "  if (mode == 0 && !trans) /* K-major, no swizzle: 8 x 16-byte core matrices */\n"
    "    byte = start + (uint)(r / 8) * sbo + (uint)(r % 8) * 16 + (uint)(k / 8) * lbo + (uint)(k % 8) * 2;\n"
    "  else if (mode == 0) /* MN-major, no swizzle */\n"
    "    byte = start + (uint)(r / 8) * sbo + (uint)(r % 8) * 2 + (uint)(k / 8) * lbo + (uint)(k % 8) * 16;\n"
    "  else if (mode == 1 && !trans) /* K-major, 128B swizzle: 128-byte rows, 8-row groups SBO apart */\n"
    "    byte = start + (uint)(r / 8) * sbo + (uint)(r % 8) * 128 + (uint)k * 2;\n"
    "  else if (mode == 1) /* MN-major, 128B swizzle: 64-element blocks LBO apart, 8 K rows SBO apart */\n"
    "    byte = start + (uint)(r / 64) * lbo + (uint)(r % 64) * 2 + (uint)(k / 8) * sbo + (uint)(k % 8) * 128;\n"
    "  else\n"
    "    return NAN; /* 64B / 32B swizzles are not modelled */\n"
    "  if (mode == 1) byte ^= ((byte >> 7) & 7u) << 4; /* Swizzle<3,4,3> on the address */\n"
    "  ushort v = s[byte / 2];\n"
    "  return bf16 ? tc_bf16_to_f32(v) : vload_half(0, (const half *)&v);\n"
    "}\n"
    "static __attribute__((always_inline)) void tc_wgmma_emu(__local const ushort *sa, ulong da,\n"
    "                                                      __local const ushort *sb, ulong db,\n"
    "                                                      int bf16, int n, int ta, int tb, int t,\n"
    "                                                      float *d) {\n"
    "  const int w = t / 32, g = (t % 32) / 4, tq = t % 4;\n"
    "  for (int j = 0; j < n / 2; j++) {\n"
    "    const int row = 16 * w + g + 8 * ((j / 2) % 2), col = 8 * (j / 4) + 2 * tq + j % 2;\n"
    "    float s = 0.0f;\n"
    "    for (int k = 0; k < 16; k++)\n"
    "      s += tc_wgmma_in(sa, da, row, k, bf16, ta) * tc_wgmma_in(sb, db, col, k, bf16, tb);\n"
    "    d[j] += s;\n"
    "  }\n"
    "}\n";

void tc_cl_wgmma_addr(tc_str *o, const char *lds, const char *off) {
  (void)lds;
  tc_str_printf(o, "(uint)((%s) * 2)", off);
}

void tc_cl_wgmma(tc_str *o, tc_dtype in, int n, const char *lds_a, const char *da,
                 const char *lds_b, const char *db, int trans_a, int trans_b, const char *acc,
                 int depth) {
  tc_str_indent(o, depth);
  tc_str_printf(o, "tc_wgmma_emu(%s, %s, %s, %s, %d, %d, %d, %d, tid %% 128, %s);\n", lds_a, da,
                lds_b, db, in == TC_BF16, n, trans_a != 0, trans_b != 0, acc);
}
