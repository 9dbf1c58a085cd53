/* ldst.h - lowering of the warp-collective shared-memory matrix copies
 * ldmatrix.x4 (TC_LDST_LDMATRIX: shared -> registers) and stmatrix.x4
 * (TC_LDST_STMATRIX: registers -> shared), m8n8, 16-bit elements.
 *
 * A set whose load/store type is one of these, with an innermost
 * Vectorize(8) loop of 16-bit elements, becomes ONE instruction per
 * vector.  The register side is the statement as lowering indexed it: the
 * shared index of (thread t, loops i, vector lane v).  The address side -
 * the row address every lane supplies - is derived from it by the PTX
 * fragment rule (docs/ldmatrix.md): register (t, i, v) of lane l of warp
 * w holds the 2 bytes at A(32w + 8(v/2) + l/4, i) + 4(l%4) + 2(v%2), so
 *
 *   A(32w + 8j + r, i) = alloc(R(32w + 4r, i, 2j)),
 *
 * i.e. the statement's shared index with tidx replaced by
 * tidx/32*32 + 4*(tidx%8) and v by 2*((tidx%32)/8).  Lowering then checks
 * by evaluation, for every thread, vector lane and (a sample of) the
 * loops, that the rule reproduces the register side exactly and that
 * every row address is 16-byte aligned; a schedule whose registers are
 * not an ldmatrix fragment is rejected with the first counterexample. */
#ifndef TC_LDST_H
#define TC_LDST_H

#include "kernel.h"

/* tc_knode.ldsm */
enum { TC_LDSM_NONE = 0, TC_LDSM_LD = 1, TC_LDSM_ST = 2 };

/* After indexing and barriers: lowers every statement whose op has load/
 * store type TC_LDST_LDMATRIX or TC_LDST_STMATRIX (sets tc_knode.ldsm,
 * ldsm_vec, ldsm_addr and tc_kir.nldsm), or fails with the message on
 * k->f.  CUDA needs sm_75+ for ldmatrix and sm_90+ for stmatrix (arch
 * NULL means sm_80); OpenCL emulates both; HIP has neither. */
tc_status tc_ldst_lower(tc_kir *k, tc_target target, const char *arch);

#endif
