/* ldst_test_util.h - the LdStMatrixSet fusion (nvFuser's ldmatrix/stmatrix
 * tutorial, docs/ldmatrix.md), shared by
 * tests/test_ldst.c (lowering, printing, the shmoo) and tests/test_tmap.c
 * (the tensor maps of its bulk copies).  The builder itself is
 * tc_ldst_set_build (src/demo/ldst_set.c, also used by
 * bench/ldst_bandwidth.c); a failure to build is a failed check here. */
#ifndef TC_LDST_TEST_UTIL_H
#define TC_LDST_TEST_UTIL_H

#include "demo/ldst_set.h"
#include "test.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

typedef tc_ldst_set ldst_set;

/* LdStMatrixSet: tv0 -> tv0_smem (bulk, shared, swizzle sw) -> tv0_reg
 * (ldmatrix) -> tv1_smem (stmatrix, shared, sw) -> tv1 (bulk), CTA tile
 * cta_m x cta_n of 64 x 256 warp-group tiles (TIDy over cta_m / 64). */
static inline ldst_set build2(tc_tma_swizzle sw, int64_t cta_m, int64_t cta_n, int64_t M, int64_t N,
                          tc_ldst_type ld, tc_ldst_type stm) {
  ldst_set s;
  TC_STR_LOCAL(msg);
  tc_status st = tc_ldst_set_build(&s, sw, cta_m, cta_n, M, N, ld, stm, &msg);
  TC_CHECK(st == TC_OK, "building LdStMatrixSet (swizzle %dB, cta %lldx%lld, %lldx%lld): %s",
           (int)sw, (long long)cta_m, (long long)cta_n, (long long)M, (long long)N, tc_str_cstr(&msg));
  return s;
}

static inline ldst_set build(tc_tma_swizzle sw, int64_t cta_m, int64_t cta_n, int64_t M, int64_t N) {
  return build2(sw, cta_m, cta_n, M, N, TC_LDST_LDMATRIX, TC_LDST_STMATRIX);
}

#endif
