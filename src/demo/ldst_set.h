/* ldst_set.h - the LdStMatrixSet fusion of nvFuser's ldmatrix/stmatrix
 * tutorial (a bf16 copy through a
 * swizzled bulk tensor load, ldmatrix, stmatrix and a bulk tensor store),
 * built and scheduled through the public API.  One builder for the tests
 * (tests/ldst_test_util.h wraps it) and the bandwidth benchmark
 * (bench/ldst_bandwidth.c).  See docs/ldmatrix.md. */
#ifndef TC_LDST_SET_H
#define TC_LDST_SET_H

#include <stddef.h>
#include <stdint.h>

#include "tilec/tilec.h"
#include "../base/base.h"

/* The fusion and its five tensors. */
typedef struct tc_ldst_set {
  tc_fusion *f;
  tc_tensor *tv0, *tv0_smem, *tv0_reg, *tv1_smem, *tv1;
} tc_ldst_set;

/* Builds LdStMatrixSet for a bf16 [M, N] tensor:
 *
 *   tv0 (global) -> tv0_smem (bulk tensor load, shared, swizzle sw)
 *                -> tv0_reg  (load type ld: TC_LDST_LDMATRIX, or
 *                             TC_LDST_DEFAULT for an element copy)
 *                -> tv1_smem (store type st: TC_LDST_STMATRIX or
 *                             TC_LDST_DEFAULT; shared, swizzle sw)
 *                -> tv1      (bulk tensor store, global)
 *
 * scheduled with a CTA tile of cta_m x cta_n elements made of 64 x 256
 * warp-group tiles (BIDx over M / cta_m, BIDy over N / cta_n, TIDy over
 * cta_m / 64; the ldmatrix / stmatrix register side is the tutorial's
 * scheduleLdStMatrix).  cta_m must be a multiple of 64 and cta_n of 256;
 * M and N multiples of cta_m and cta_n.  Returns TC_OK, or the status of
 * the first API call that failed with a message naming it in msg (cap
 * bytes; msg may be NULL).  s->f is set either way (free it with
 * tc_fusion_free), except for TC_ERR_ARGUMENT on a bad swizzle or bad
 * sizes, where it is NULL. */
tc_status tc_ldst_set_build(tc_ldst_set *s, tc_tma_swizzle sw, int64_t cta_m, int64_t cta_n,
                             int64_t M, int64_t N, tc_ldst_type ld, tc_ldst_type st, tc_str *msg);

#endif
