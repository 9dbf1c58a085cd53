/* matmul_mfma.c - AMD's MFMA as op types of the matmul
 * (TC_MACRO_MFMA_32X32X8, TC_MACRO_MFMA_16X16X16: v_mfma_f32_32x32x8
 * {f16,bf16_1k} and v_mfma_f32_16x16x16{f16,bf16_1k}, f32 accumulators,
 * one wavefront of 64 lanes; docs/amd.md, docs/matmul.md).
 *
 * The schedule is matmul_mma.c's, given the instruction's shape: the
 * accumulator layout of the CDNA ISA guides as splits of the tile.
 *   32x32x8:  D[i][j] is item 4 (i / 8) + i % 4 of lane j + 32 ((i / 4) % 2),
 *     so with i = 8 ihi + 4 imid + ilo the lane is merge(imid, j) and its
 *     16 items are [ihi 4, ilo 4]: M32 = [m_pre 4, m_lane 2, m_post 4],
 *     N32 = [n_lane 32];
 *   16x16x16: D[i][j] is item i % 4 of lane j + 16 (i / 4): with
 *     i = 4 ihi + ilo the lane is merge(ihi, j), its 4 items [ilo]:
 *     M16 = [m_lane 4, m_post 4], N16 = [n_lane 16].
 * The A and B layouts (A[i][k] item k % 4 of lane i + m (k / 4), B[k][j]
 * item k % 4 of lane j + n (k / 4)) are the lowering's (src/lower/mfma.c). */
#include "sched.h"
#include "../target/target.h"

static const tc_frag_shape mfma_32x32x8 = {TC_MACRO_MFMA_32X32X8, "MFMA 32x32x8", "wavefront",
                                           TC_ARCH_GFX, 64, 32, 32, 8, 4, 2, 4, 32, 1};
static const tc_frag_shape mfma_16x16x16 = {TC_MACRO_MFMA_16X16X16, "MFMA 16x16x16", "wavefront",
                                            TC_ARCH_GFX, 64, 16, 16, 16, 1, 4, 4, 16, 1};

const tc_frag_shape *tc_mfma_frag_shape(int macro) {
  return macro == TC_MACRO_MFMA_32X32X8 ? &mfma_32x32x8
         : macro == TC_MACRO_MFMA_16X16X16 ? &mfma_16x16x16 : NULL;
}

bool tc_mfma_auto_tiles(tc_target target, const char *arch, tc_dtype t, int64_t m, int64_t n,
                        tc_matmul_tiles *tl, const char **why) {
  tc_target_info ti;
  if (tc_target_info_of(target).family != TC_ARCH_GFX) return *why = NULL, false;
  if (t != TC_F16 && t != TC_BF16) return *why = "MFMA takes f16 or bf16 operands", false;
  if (tc_target_info_make(target, arch, &ti, NULL) != TC_OK || !(ti.features & TC_FEAT_MFMA) ||
      (t == TC_BF16 && !(ti.features & TC_FEAT_MFMA_BF16_1K)))
    return *why = "the arch has no MFMA for these operands", false;
  if (m < 16 || n < 16) return *why = "the result is smaller than one 16 x 16 MFMA tile", false;
  /* 32x32x8 where a 32 x 32 tile is filled, in blocks of up to 2 x 2
   * wavefronts; else 16x16x16 in blocks of up to 2 x 2 */
  int64_t s = m >= 32 && n >= 32 ? 32 : 16;
  *tl = (tc_matmul_tiles){m >= 2 * s ? 2 * s : s, n >= 2 * s ? 2 * s : s, 16, s, s,
                          s == 32 ? TC_MACRO_MFMA_32X32X8 : TC_MACRO_MFMA_16X16X16};
  *why = NULL;
  return true;
}
