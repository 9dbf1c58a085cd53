/* ldst_set.c - nvFuser's LdStMatrixSet fusion through the public API
 * (see ldst_set.h).  Every call is checked; the first failure ends the
 * build with its status and a message naming the call. */
#include "ldst_set.h"

#include <stdio.h>

typedef struct builder {
  tc_fusion *f;
  tc_status st;
  tc_str *msg;
} builder;

/* Records the failure of the call `what` (status st); 1 when it is ok. */
static int ok(builder *b, tc_status st, const char *what) {
  if (st == TC_OK) return 1;
  b->st = st;
  tc_err_set(b->msg, "LdStMatrixSet: %s failed (%s): %s", what, tc_status_name(st),
             b->f ? tc_fusion_error(b->f) : "");
  return 0;
}
/* skipped after the first failure */
#define OK(b, call) (void)((b)->st == TC_OK && ok((b), (call), #call))

/* A tensor-returning call: NULL is a failure with the fusion's message. */
static tc_tensor *tensor(builder *b, tc_tensor *t, const char *what) {
  if (!t) ok(b, TC_ERR_ARGUMENT, what);
  return t;
}
#define TENSOR(b, call) ((b)->st == TC_OK ? tensor((b), (call), #call) : NULL)

static void reorder2(builder *b, tc_abstract_tensor *at, int x, int y) {
  int old[2] = {x, y}, new_[2] = {y, x};
  OK(b, tc_abstract_reorder(at, 2, old, new_));
}

/* The register side of an ldmatrix/stmatrix.x4 over the warp-group tile
 * (.., m(64), n(W)): (.., (no*nio), (mo*mii*niiio)(128) TIDx,
 * (niio*mio*niiii)(8) Vectorize) - the tutorial's scheduleLdStMatrix.  NULL
 * (with the failure recorded) when a step fails. */
static tc_abstract_tensor *register_side(builder *b, tc_tensor *tv) {
  tc_abstract_tensor *at = tc_abstract_tensor_new(tv);
  if (!at) {
    ok(b, TC_ERR_ARGUMENT, "tc_abstract_tensor_new(tv)");
    return NULL;
  }
  OK(b, tc_abstract_split(at, -1, 64, 1));
  reorder2(b, at, -2, -3); /* no, m, ni */
  OK(b, tc_abstract_split(at, -2, 16, 1));
  OK(b, tc_abstract_split(at, -1, 16, 1));
  reorder2(b, at, -2, -3); /* no, mo, nio, mi, nii */
  OK(b, tc_abstract_split(at, -2, 8, 1));
  OK(b, tc_abstract_split(at, -1, 8, 1));
  OK(b, tc_abstract_split(at, -1, 2, 1)); /* no, mo, nio, mio, mii, niio, niiio, niiii */
  int old[3] = {-5, -4, -2}, new_[3] = {-2, -5, -4};
  OK(b, tc_abstract_reorder(at, 3, old, new_)); /* no, mo, nio, mii, niiio, niio, mio, niiii */
  OK(b, tc_abstract_merge(at, -2, -1));
  OK(b, tc_abstract_merge(at, -2, -1));
  reorder2(b, at, -5, -4); /* no, nio, mo, mii, niiio, (niio*mio*niiii) */
  OK(b, tc_abstract_merge(at, -4, -3));
  OK(b, tc_abstract_merge(at, -3, -2));
  OK(b, tc_abstract_merge(at, -4, -3));
  if (b->st != TC_OK) {
    tc_abstract_tensor_free(at);
    return NULL;
  }
  return at;
}

/* Installs the register side as t's loop domain: TIDx and Vectorize on
 * its last two axes; alloc_to_loop for the register tensor, the swizzled
 * boxes as the allocation for the shared one. */
static void schedule_ldst(builder *b, tc_tensor *t, tc_tma_swizzle sw, int is_reg) {
  if (b->st != TC_OK) return;
  tc_abstract_tensor *at = register_side(b, t);
  if (!at) return;
  if (!is_reg) OK(b, tc_schedule_tma_swizzle(t, sw));
  OK(b, tc_set_loop_domain(t, tc_abstract_tensor_rank(at), tc_abstract_tensor_axes(at)));
  if (is_reg) OK(b, tc_set_alloc_to_loop(t));
  OK(b, tc_parallelize(t, -2, TC_TIDX));
  OK(b, tc_parallelize(t, -1, TC_VECTORIZE));
  tc_abstract_tensor_free(at);
}

tc_status tc_ldst_set_build(tc_ldst_set *s, tc_tma_swizzle sw, int64_t cta_m, int64_t cta_n,
                             int64_t M, int64_t N, tc_ldst_type ld, tc_ldst_type st, tc_str *msg) {
  if (msg) tc_str_clear(msg);
  if (!s) return TC_ERR_ARGUMENT;
  *s = (tc_ldst_set){0};
  if (sw != TC_TMA_SWIZZLE_32B && sw != TC_TMA_SWIZZLE_64B && sw != TC_TMA_SWIZZLE_128B) {
    tc_err_set(msg, "LdStMatrixSet: swizzle %d is not 32, 64 or 128 bytes", (int)sw);
    return TC_ERR_ARGUMENT;
  }
  if (cta_m < 64 || cta_m % 64 || cta_n < 256 || cta_n % 256 || M < 1 || N < 1 || M % cta_m ||
      N % cta_n) {
    tc_err_set(msg,
               "LdStMatrixSet: bad sizes: the CTA tile %lld x %lld must be multiples of 64 x 256 "
               "and divide the tensor %lld x %lld",
               (long long)cta_m, (long long)cta_n, (long long)M, (long long)N);
    return TC_ERR_ARGUMENT;
  }
  builder bb = {tc_fusion_new(), TC_OK, msg}, *b = &bb;
  tc_fusion *f = s->f = b->f;
  s->tv0 = TENSOR(b, tc_input(f, TC_BF16, 2, (int64_t[]){M, N}));
  s->tv1 = TENSOR(b, tc_set(f, s->tv0));
  OK(b, tc_add_output(f, s->tv1));
  s->tv0_smem = TENSOR(b, tc_cache_after(s->tv0));
  OK(b, tc_set_ldst_type(s->tv0_smem, TC_LDST_BULK_TENSOR));
  OK(b, tc_set_memory_type(s->tv0_smem, TC_MEM_SHARED));
  s->tv0_reg = TENSOR(b, tc_cache_after(s->tv0_smem));
  OK(b, tc_set_ldst_type(s->tv0_reg, ld));
  s->tv1_smem = TENSOR(b, tc_cache_before(s->tv1));
  if (b->st != TC_OK) return b->st;
  tc_tensor *tv1 = s->tv1;
  OK(b, tc_set_ldst_type(s->tv1_smem, st));
  OK(b, tc_set_memory_type(s->tv1_smem, TC_MEM_SHARED));
  OK(b, tc_set_ldst_type(tv1, TC_LDST_BULK_TENSOR));
  OK(b, tc_split(tv1, 0, cta_m, 1));
  OK(b, tc_split(tv1, -1, cta_n, 1));
  OK(b, tc_reorder(tv1, 2, (int[]){-2, -3}, (int[]){-3, -2}));
  OK(b, tc_split(tv1, -2, 64, 1));
  OK(b, tc_split(tv1, -1, 256, 1));
  OK(b, tc_reorder(tv1, 2, (int[]){-2, -3}, (int[]){-3, -2}));
  /* (GM, GN, cta_m/64, cta_n/256, 64, 256) */
  OK(b, tc_propagate_transforms(tv1));
  OK(b, tc_parallelize(tv1, 0, TC_BIDX));
  OK(b, tc_parallelize(tv1, 1, TC_BIDY));
  OK(b, tc_parallelize(tv1, 2, TC_TIDY));
  OK(b, tc_parallelize_all_like(tv1));
  OK(b, tc_schedule_tma_swizzle(s->tv0_smem, sw));
  OK(b, tc_schedule_tma_swizzle(tv1, sw));
  schedule_ldst(b, s->tv1_smem, sw, 0);
  schedule_ldst(b, s->tv0_reg, sw, 1);
  OK(b, tc_inline_most(f));
  return b->st;
}
