/* mfma.c - AMD's MFMA fragment layouts for the lowering of a matmul's
 * statement to one wavefront-wide instruction (the rest is mma.c's).
 *
 * The CDNA 2 / CDNA 3 ISA guides' register layouts (docs/amd.md), for an
 * m x n x K instruction (32x32x8, 16x16x16) and lane L of 64:
 *   A item e of lane L is A[L % m][4 (L / m) + e];
 *   B item e of lane L is B[4 (L / n) + e][L % n];
 * the accumulators are the schedule's split of the tile (matmul_mfma.c):
 * row i = (m_pre index) m_lane m_post + (m_lane index) m_post + (m_post
 * index), the lane = (m_lane index) n + column, item v = (m_pre index)
 * m_post + (m_post index).  So in the statement's indices, where the lane
 * is tidx, for A the row i = L % m gives m_pre := i / (m_lane m_post),
 * m_post := i % m_post and tidx := ((i / m_post) % m_lane) n (A reads
 * tidx only through its m_lane part, tidx / n), K := 4 (L / m) + e; for B
 * tidx := L % n (its column part), K := 4 (L / n) + e, the row's values
 * 0 (B reads no row); for accumulator v m_pre := v / m_post, m_post :=
 * v % m_post, the lane its own.  The OpenCL emulation (codegen's
 * mfma_emu.c) has the layouts in the other direction, element to
 * register, written independently. */
#include "../sched/sched.h"
#include "../target/target.h"
#include "mma.h"

void tc_mfma_vars(tc_epool *p, const tc_frag_shape *sh, const tc_expr *lane, int which, int e,
                  const tc_expr **v) {
  const tc_expr *z = tc_e_const(p, 0);
  v[TC_FR_NPOST] = z; /* MFMA's columns are all lanes */
  v[TC_FR_LANE] = lane, v[TC_FR_K] = z;
  if (which == 0) { /* A[L % m][4 (L / m) + e] */
    const tc_expr *i = tc_e_modc(p, lane, sh->m);
    v[TC_FR_MPRE] = tc_e_divc(p, i, sh->m_lane * sh->m_post);
    v[TC_FR_MPOST] = tc_e_modc(p, i, sh->m_post);
    v[TC_FR_LANE] = tc_e_mulc(p, tc_e_modc(p, tc_e_divc(p, i, sh->m_post), sh->m_lane), sh->n);
    v[TC_FR_K] = tc_e_addc(p, tc_e_mulc(p, tc_e_divc(p, lane, sh->m), 4), e);
  } else if (which == 1) { /* B[4 (L / n) + e][L % n] */
    v[TC_FR_MPRE] = z, v[TC_FR_MPOST] = z;
    v[TC_FR_LANE] = tc_e_modc(p, lane, sh->n);
    v[TC_FR_K] = tc_e_addc(p, tc_e_mulc(p, tc_e_divc(p, lane, sh->n), 4), e);
  } else { /* accumulator item e */
    v[TC_FR_MPRE] = tc_e_const(p, e / sh->m_post);
    v[TC_FR_MPOST] = tc_e_const(p, e % sh->m_post);
  }
}

tc_status tc_mfma_check_target(tc_fusion *f, const tc_op *op, const tc_frag_shape *sh,
                               tc_target target, const tc_target_info *ti) {
  if (ti->family == TC_ARCH_NONE) return TC_OK; /* (OpenCL emulates it) */
  if (ti->family != TC_ARCH_GFX)
    return tc_fail(f, TC_ERR_UNSUPPORTED, "compile: %s is a matmul of %s, an AMD instruction that "
                   "target %s does not have (the OpenCL target emulates it): use the FMA macro",
                   op->out->name, sh->name, ti->name);
  if (!(ti->features & TC_FEAT_MFMA))
    return tc_fail(f, TC_ERR_UNSUPPORTED, "compile: %s needs an AMD arch with MFMA (gfx90a, "
                   "gfx940, gfx942, gfx950), but the arch is %s%s", sh->name, ti->arch,
                   ti->arch_given ? "" : " (the default)");
  if (op->in[0]->dtype == TC_BF16 && !(ti->features & TC_FEAT_MFMA_BF16_1K))
    return tc_fail(f, TC_ERR_UNSUPPORTED, "compile: %s with bf16 operands (the _1k form) needs "
                   "gfx90a or later, but the arch is %s", sh->name, ti->arch);
  return TC_OK;
}
