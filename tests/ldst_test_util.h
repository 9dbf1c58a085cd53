/* ldst_test_util.h - seed 000's LdStMatrixSet fusion, shared by
 * tests/test_ldst.c (lowering, printing, the shmoo) and tests/test_tmap.c
 * (the tensor maps of its bulk copies). */
#ifndef TC_LDST_TEST_UTIL_H
#define TC_LDST_TEST_UTIL_H

#include "test.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))
#define AT(call) TC_CHECK((call) == TC_OK, "%s failed", #call)

static inline void reorder2(tc_abstract_tensor *at, int a, int b) {
  int old[2] = {a, b}, new_[2] = {b, a};
  AT(tc_abstract_reorder(at, 2, old, new_));
}

/* The register side of an ldmatrix/stmatrix.x4 over the warp-group tile
 * (.., m(64), n(W)): (.., (no*nio), (mo*mii*niiio)(128) TIDx,
 * (niio*mio*niiii)(8) Vectorize) - seed 000's scheduleLdStMatrix. */
static inline tc_abstract_tensor *register_side(tc_tensor *tv) {
  tc_abstract_tensor *at = tc_abstract_tensor_new(tv);
  AT(tc_abstract_split(at, -1, 64, 1));
  reorder2(at, -2, -3);                         /* no, m, ni */
  AT(tc_abstract_split(at, -2, 16, 1));
  AT(tc_abstract_split(at, -1, 16, 1));
  reorder2(at, -2, -3);                         /* no, mo, nio, mi, nii */
  AT(tc_abstract_split(at, -2, 8, 1));
  AT(tc_abstract_split(at, -1, 8, 1));
  AT(tc_abstract_split(at, -1, 2, 1));          /* no, mo, nio, mio, mii, niio, niiio, niiii */
  int old[3] = {-5, -4, -2}, new_[3] = {-2, -5, -4};
  AT(tc_abstract_reorder(at, 3, old, new_));    /* no, mo, nio, mii, niiio, niio, mio, niiii */
  AT(tc_abstract_merge(at, -2, -1));
  AT(tc_abstract_merge(at, -2, -1));
  reorder2(at, -5, -4);                         /* no, nio, mo, mii, niiio, (niio*mio*niiii) */
  AT(tc_abstract_merge(at, -4, -3));
  AT(tc_abstract_merge(at, -3, -2));
  AT(tc_abstract_merge(at, -4, -3));
  return at;
}

typedef struct seed {
  tc_fusion *f;
  tc_tensor *tv0, *tv0_smem, *tv0_reg, *tv1_smem, *tv1;
} seed;

/* LdStMatrixSet: tv0 -> tv0_smem (bulk, shared, swizzle sw) -> tv0_reg
 * (ldmatrix) -> tv1_smem (stmatrix, shared, sw) -> tv1 (bulk), CTA tile
 * cta_m x cta_n of 64 x 256 warp-group tiles (TIDy over cta_m / 64). */
static inline seed build2(tc_tma_swizzle sw, int64_t cta_m, int64_t cta_n, int64_t M, int64_t N,
                   tc_ldst_type ld, tc_ldst_type stm) {
  seed s = {0};
  tc_fusion *f = s.f = tc_fusion_new();
  s.tv0 = tc_input(f, TC_BF16, 2, (int64_t[]){M, N});
  s.tv1 = tc_set(f, s.tv0);
  OK(f, tc_add_output(f, s.tv1));
  s.tv0_smem = tc_cache_after(s.tv0);
  OK(f, tc_set_ldst_type(s.tv0_smem, TC_LDST_BULK_TENSOR));
  OK(f, tc_set_memory_type(s.tv0_smem, TC_MEM_SHARED));
  s.tv0_reg = tc_cache_after(s.tv0_smem);
  OK(f, tc_set_ldst_type(s.tv0_reg, ld));
  s.tv1_smem = tc_cache_before(s.tv1);
  OK(f, tc_set_ldst_type(s.tv1_smem, stm));
  OK(f, tc_set_memory_type(s.tv1_smem, TC_MEM_SHARED));
  OK(f, tc_set_ldst_type(s.tv1, TC_LDST_BULK_TENSOR));
  OK(f, tc_split(s.tv1, 0, cta_m, 1));
  OK(f, tc_split(s.tv1, -1, cta_n, 1));
  OK(f, tc_reorder(s.tv1, 2, (int[]){-2, -3}, (int[]){-3, -2}));
  OK(f, tc_split(s.tv1, -2, 64, 1));
  OK(f, tc_split(s.tv1, -1, 256, 1));
  OK(f, tc_reorder(s.tv1, 2, (int[]){-2, -3}, (int[]){-3, -2}));
  /* (GM, GN, cta_m/64, cta_n/256, 64, 256) */
  OK(f, tc_propagate_transforms(s.tv1));
  OK(f, tc_parallelize(s.tv1, 0, TC_BIDX));
  OK(f, tc_parallelize(s.tv1, 1, TC_BIDY));
  OK(f, tc_parallelize(s.tv1, 2, TC_TIDY));
  OK(f, tc_parallelize_all_like(s.tv1));
  OK(f, tc_schedule_tma_swizzle(s.tv0_smem, sw));
  OK(f, tc_schedule_tma_swizzle(s.tv1, sw));
  tc_abstract_tensor *at = register_side(s.tv1_smem);
  OK(f, tc_schedule_tma_swizzle(s.tv1_smem, sw));
  OK(f, tc_set_loop_domain(s.tv1_smem, tc_abstract_tensor_rank(at), tc_abstract_tensor_axes(at)));
  OK(f, tc_parallelize(s.tv1_smem, -2, TC_TIDX));
  OK(f, tc_parallelize(s.tv1_smem, -1, TC_VECTORIZE));
  tc_abstract_tensor_free(at);
  at = register_side(s.tv0_reg);
  OK(f, tc_set_loop_domain(s.tv0_reg, tc_abstract_tensor_rank(at), tc_abstract_tensor_axes(at)));
  OK(f, tc_set_alloc_to_loop(s.tv0_reg));
  OK(f, tc_parallelize(s.tv0_reg, -2, TC_TIDX));
  OK(f, tc_parallelize(s.tv0_reg, -1, TC_VECTORIZE));
  tc_abstract_tensor_free(at);
  OK(f, tc_inline_most(f));
  return s;
}

static inline seed build(tc_tma_swizzle sw, int64_t cta_m, int64_t cta_n, int64_t M, int64_t N) {
  return build2(sw, cta_m, cta_n, M, N, TC_LDST_LDMATRIX, TC_LDST_STMATRIX);
}

#endif
