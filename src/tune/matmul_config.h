/* matmul_config.h - perf-config strings onto the fusion matmul's schedule
 * parameters (tc_matmul_tiles, tc_schedule_matmul), so that a perf config
 * means the same kernel shape for the fused GEMM (`tilec gemm --epilogue`)
 * as for the template GEMM kernels, and tiles back to their perf config
 * (what the fused GEMM's tuner stores in the perf DB). */
#ifndef TC_MATMUL_CONFIG_H
#define TC_MATMUL_CONFIG_H

#include <stddef.h>

#include "tilec/tilec.h"
#include "params.h"

/* The tiles of a parsed perf config (tc_gemm_params_parse), checked by
 * tc_gemm_params_check_tiling:
 *   BS,MPB,NPB,KPB,MPT,NPT -> {MPB, NPB, KPB, 2 MPT, 2 NPT}, TC_MACRO_FMA:
 *     rocMLIR's thread owns 2 x 2 sub-tiles of MPT x NPT, so its
 *     accumulators are 2 MPT x 2 NPT and the block has BS = (MPB / 2 MPT)
 *     * (NPB / 2 NPT) threads, as the schedule's (bm / tm) * (bn / tn);
 *   mma:MPB,NPB,KPB,MPW,NPW -> {MPB, NPB, KPB, MPW, NPW},
 *     TC_MACRO_MMA_M16N8K16 (tm x tn the warp tile);
 *   xdlops:MPB,NPB,KPB,MPW,NPW[,MFMA] -> {MPB, NPB, KPB, MPW, NPW}, the
 *     MFMA op type of tc_gemm_xdlops_mfma (tm x tn the wavefront's tile).
 * The Hopper forms (wgmma:, tma:, tmaws:) are refused with a message
 * naming the forms the fused GEMM takes.  0, or -1 with err. */
int tc_gemm_params_matmul_tiles(const tc_gemm_params *p, tc_matmul_tiles *t, tc_str *err);

/* The perf config of tiles (the inverse: "BS,MPB,NPB,KPB,MPT,NPT" or
 * "mma:MPB,NPB,KPB,MPW,NPW" or "xdlops:MPB,NPB,KPB,MPW,NPW,MFMA") into buf, checked to map back to the same
 * tiles.  0, or -1 (buf "") when they have none: FMA tiles whose tm or tn
 * is odd, or that break a rule. */
int tc_matmul_tiles_perf_config(const tc_matmul_tiles *t, char *buf, size_t cap);

#endif
