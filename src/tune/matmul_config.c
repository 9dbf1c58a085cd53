/* matmul_config.c - perf-config strings onto the fusion matmul's tiles
 * and back (matmul_config.h). */
#include "matmul_config.h"

#include <stdio.h>
#include <string.h>

#include "../base/base.h"

int tc_gemm_params_matmul_tiles(const tc_gemm_params *p, tc_matmul_tiles *t, tc_str *err) {
  memset(t, 0, sizeof *t);
  const char *forms = "the fused GEMM takes the perf configs BS,MPB,NPB,KPB,MPT,NPT (FMA), "
                      "mma:MPB,NPB,KPB,MPW,NPW (mma.sync m16n8k16) and "
                      "xdlops:MPB,NPB,KPB,MPW,NPW[,MFMA] (MFMA)";
  if (tc_gemm_params_is_tma(p) || tc_gemm_params_is_wgmma(p)) {
    tc_err_set(err, "%s; the Hopper forms (wgmma:, tma:, tmaws:) select template kernels (TMA "
               "rings, warp specialisation) the matmul schedule does not build yet: give --tiles "
               "BM,BN,BK,64,N --macro wgmma for its wgmma op type", forms);
    return -1;
  }
  if (tc_gemm_params_is_xdlops(p) && !tc_gemm_params_is_mma(p)) {
    /* xdlops:MPB,NPB,KPB,MPW,NPW[,MFMA]: the MFMA op type with MPW x NPW
     * wavefront tiles; the instruction as rocMLIR derives it */
    int mfma = tc_gemm_xdlops_mfma(p);
    if (!mfma) {
      tc_err_set(err, "no MFMA instruction fits xdlops tiles %d,%d,%d,%d,%d: 32x32x8 needs "
                 "MPW and NPW multiples of 32 and KPB of 8, 16x16x16 multiples of 16 and 16",
                 p->m_per_block, p->n_per_block, p->k_per_block, p->m_per_wave, p->n_per_wave);
      return -1;
    }
    t->bm = p->m_per_block, t->bn = p->n_per_block, t->bk = p->k_per_block;
    t->tm = p->m_per_wave, t->tn = p->n_per_wave;
    t->macro = mfma == TC_MFMA_32X32X8 ? TC_MACRO_MFMA_32X32X8 : TC_MACRO_MFMA_16X16X16;
    return 0;
  }
  if (tc_gemm_params_check_tiling(p, err)) return -1;
  t->bm = p->m_per_block, t->bn = p->n_per_block, t->bk = p->k_per_block;
  if (tc_gemm_params_is_mma(p)) {
    t->tm = p->m_per_wave, t->tn = p->n_per_wave, t->macro = TC_MACRO_MMA_M16N8K16;
  } else {
    t->tm = 2 * (int64_t)p->m_per_thread, t->tn = 2 * (int64_t)p->n_per_thread;
    t->macro = TC_MACRO_FMA;
  }
  return 0;
}

int tc_matmul_tiles_perf_config(const tc_matmul_tiles *t, char *buf, size_t cap) {
  if (!cap) return -1;
  buf[0] = 0;
  if (t->bm < 1 || t->bn < 1 || t->bk < 1 || t->tm < 1 || t->tn < 1 || t->bm % t->tm ||
      t->bn % t->tn || t->bm > 65536 || t->bn > 65536 || t->bk > 65536)
    return -1;
  if (t->macro == TC_MACRO_MFMA_32X32X8 || t->macro == TC_MACRO_MFMA_16X16X16)
    snprintf(buf, cap, "xdlops:%lld,%lld,%lld,%lld,%lld,%d", (long long)t->bm, (long long)t->bn,
             (long long)t->bk, (long long)t->tm, (long long)t->tn,
             t->macro == TC_MACRO_MFMA_32X32X8 ? 32 : 16);
  else if (t->macro == TC_MACRO_MMA_M16N8K16)
    snprintf(buf, cap, "mma:%lld,%lld,%lld,%lld,%lld", (long long)t->bm, (long long)t->bn,
             (long long)t->bk, (long long)t->tm, (long long)t->tn);
  else if (t->tm % 2 == 0 && t->tn % 2 == 0)
    snprintf(buf, cap, "%lld,%lld,%lld,%lld,%lld,%lld",
             (long long)((t->bm / t->tm) * (t->bn / t->tn)), (long long)t->bm, (long long)t->bn,
             (long long)t->bk, (long long)(t->tm / 2), (long long)(t->tn / 2));
  else
    return -1;
  /* the string must come back as the same tiles */
  tc_gemm_params p;
  tc_matmul_tiles back;
  TC_STR_LOCAL(why);
  if (tc_gemm_params_parse(buf, &p, &why) || tc_gemm_params_matmul_tiles(&p, &back, &why) ||
      back.bm != t->bm || back.bn != t->bn || back.bk != t->bk || back.tm != t->tm ||
      back.tn != t->tn || back.macro != t->macro) {
    buf[0] = 0;
    return -1;
  }
  return 0;
}
