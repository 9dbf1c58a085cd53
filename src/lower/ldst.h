/* ldst.h - lowering of the warp-collective shared-memory matrix copies
 * ldmatrix (TC_LDST_LDMATRIX, _TRANS: shared -> registers) and stmatrix
 * (TC_LDST_STMATRIX, _TRANS: registers -> shared), m8n8, 16-bit
 * elements, .x1 / .x2 / .x4, plain or .trans.
 *
 * A set whose load/store type is one of these, with an innermost
 * Vectorize(2 num) loop of 16-bit elements (num = 1, 2, 4: the .x<num>),
 * becomes ONE instruction per vector.  The register side is the statement
 * as lowering indexed it: the shared index R of (thread t, loops i, vector
 * lane v).  The address side - the row address every lane supplies - is
 * derived from it by inverting the PTX fragment rule (tc_ldsm_fragment,
 * docs/ldmatrix.md): register (t, i, v) of lane l of warp w holds the
 * element at A(32w + 8(v/2) + row, i) + col, (row, col) = (l/4,
 * 2(l%4) + v%2), or (2(l%4) + v%2, l/4) with .trans, so
 *
 *   A(32w + 8j + r, i) = R(32w + 4r, i, 2j)             (plain)
 *   A(32w + 8j + r, i) = R(32w + r/2, i, 2j + r%2)      (.trans)
 *
 * i.e. the statement's shared index with tidx and v replaced accordingly
 * (r = tidx%8, j = tidx%32/8, taken mod num for .x1/.x2, whose lanes 8num
 * and up are ignored by the hardware).  Lowering then checks by evaluation,
 * for every thread, vector lane and (a sample of) the loops, that the rule
 * reproduces the register side exactly and that every row address is
 * 16-byte aligned; a schedule whose registers are not the fragment is
 * rejected with the first counterexample (and a hint when the other
 * transposition would serve). */
#ifndef TC_LDST_H
#define TC_LDST_H

#include "kernel.h"

/* tc_kldsm.kind (tc_knode.stmt.ldsm) */
enum { TC_LDSM_NONE = 0, TC_LDSM_LD = 1, TC_LDSM_ST = 2 };

/* After indexing and barriers: lowers every statement whose op has load/
 * store type TC_LDST_LDMATRIX(_TRANS) or TC_LDST_STMATRIX(_TRANS) (sets
 * tc_knode.stmt.ldsm (tc_kldsm: kind, num, trans, vec, addr) and
 * tc_kir.nldsm), or fails with the message on
 * k->f.  CUDA needs sm_75+ for ldmatrix and sm_90+ for stmatrix (arch
 * NULL means sm_80); OpenCL emulates both; HIP has neither. */
tc_status tc_ldst_lower(tc_kir *k, tc_target target, const char *arch);

/* The PTX ISA's m8n8 fragment: element v (0 .. 2num-1) of lane `lane`'s
 * registers (word v/2, half v%2, low half first) is element (*row, *col)
 * of matrix v/2 - whose row r is at the address lane 8(v/2) + r supplies -
 * plain: (lane%32/4, 2(lane%4) + v%2); .trans: (2(lane%4) + v%2,
 * lane%32/4).  The lowering's check uses it; the emulation
 * (ldst_opencl.c) implements the same rule and tests/test_ldst.c checks
 * both against the ISA's table. */
void tc_ldsm_fragment(int trans, int64_t lane, int v, int64_t *row, int64_t *col);


#endif
