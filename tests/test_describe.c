/* test_describe.c - tc_tensor_describe's text, which is the contract here
 * (users read it, and messages quote it): the loop domain, the compute-at
 * mark "(CA)" at every position including after the last axis, the
 * tensor-memory dim-sep mark "(DS)", and the allocation domain when a
 * tensor has one of its own.  Compared as exact strings. */
#include <stdint.h>
#include <string.h>

#include "test.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))
#define DESC(t, want)                                                         \
  do {                                                                        \
    char d_[256];                                                             \
    TC_CHECK_STR(tc_tensor_describe(t, d_, sizeof d_), want);                 \
  } while (0)

/* T0 [4, 6] -> T1 = set -> T2 = set (output). */
static tc_fusion *copy2(tc_tensor **t1, tc_tensor **t2) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {4, 6};
  tc_tensor *t0 = tc_input(f, TC_F32, 2, shape);
  *t1 = tc_set(f, t0);
  *t2 = tc_set(f, *t1);
  tc_add_output(f, *t2);
  return f;
}

/* The compute-at mark stands before the first axis not shared with the
 * consumer; at full rank, after the last axis. */
static void test_compute_at_positions(void) {
  tc_tensor *t1, *t2;
  tc_fusion *f = copy2(&t1, &t2);
  DESC(t1, "T1[iS{4}, iS{6}]");
  OK(f, tc_inline_at(t1, 1));
  DESC(t1, "T1[iS{4}, (CA), iS{6}]");
  OK(f, tc_inline_at(t1, 2));
  DESC(t1, "T1[iS{4}, iS{6}, (CA)]");
  OK(f, tc_inline_at(t1, 0));
  DESC(t1, "T1[iS{4}, iS{6}]");
  OK(f, tc_parallelize(t2, 0, TC_BIDX));
  OK(f, tc_parallelize(t2, 1, TC_TIDX));
  OK(f, tc_parallelize_all_like(t2));
  OK(f, tc_inline_most(f));
  DESC(t1, "T1[iBIDx{4}, iTIDx{6}, (CA)]");
  DESC(t2, "T2[iBIDx{4}, iTIDx{6}]");
  tc_fusion_free(f);
}

/* tv0 -> tv1 (local) -> tv2 (tensor) -> tv3 (local) -> tv4 (output). */
static tc_fusion *tmem_chain(tc_tensor **tv, int n, const int64_t *shape) {
  tc_fusion *f = tc_fusion_new();
  tv[0] = tc_input(f, TC_F32, n, shape);
  for (int i = 1; i < 5; i++) tv[i] = tc_set(f, tv[i - 1]);
  tc_add_output(f, tv[4]);
  tc_set_memory_type(tv[2], TC_MEM_TENSOR);
  return f;
}

/* The dim-sep mark, at each position of a loop domain that is the
 * allocation domain, and next to the compute-at mark. */
static void test_tmem_dimsep(void) {
  tc_tensor *tv[5];
  int64_t shape[3] = {128, 2, 6};
  tc_fusion *f = tmem_chain(tv, 3, shape);
  DESC(tv[2], "T2[iS{128}, iS{2}, iS{6}]"); /* no dim-sep yet */
  OK(f, tc_parallelize(tv[2], 0, TC_TIDX));
  OK(f, tc_set_tmem_dimsep(tv[2], 1));
  DESC(tv[2], "T2[iTIDx{128}, (DS), iS{2}, iS{6}]");
  OK(f, tc_set_tmem_dimsep(tv[2], 0));
  DESC(tv[2], "T2[(DS), iTIDx{128}, iS{2}, iS{6}]");
  OK(f, tc_set_tmem_dimsep(tv[2], 3));
  DESC(tv[2], "T2[iTIDx{128}, iS{2}, iS{6}, (DS)]");
  OK(f, tc_set_tmem_dimsep(tv[2], 1));
  for (int i = 3; i < 5; i++) OK(f, tc_parallelize(tv[i], 0, TC_TIDX));
  OK(f, tc_inline_at(tv[2], 2));
  DESC(tv[2], "T2[iTIDx{128}, (DS), iS{2}, (CA), iS{6}]");
  OK(f, tc_inline_at(tv[2], 1));
  DESC(tv[2], "T2[iTIDx{128}, (CA), (DS), iS{2}, iS{6}]");
  OK(f, tc_inline_at(tv[2], 3));
  OK(f, tc_set_tmem_dimsep(tv[2], 3));
  DESC(tv[2], "T2[iTIDx{128}, iS{2}, iS{6}, (CA), (DS)]");
  /* a dim-sep left on a tensor moved out of tensor memory means nothing */
  OK(f, tc_set_memory_type(tv[2], TC_MEM_LOCAL));
  DESC(tv[2], "T2[iTIDx{128}, iS{2}, iS{6}, (CA)]");
  tc_fusion_free(f);
}

/* An allocation domain of its own that differs from the loop domain is
 * shown after it, with the dim-sep where it is: in the allocation domain. */
static void test_own_alloc_domain(void) {
  tc_tensor *tv[5];
  int64_t shape[2] = {128, 6};
  tc_fusion *f = tmem_chain(tv, 2, shape);
  OK(f, tc_parallelize(tv[2], 0, TC_TIDX));
  OK(f, tc_set_alloc_to_loop(tv[2]));
  OK(f, tc_set_tmem_dimsep(tv[2], 1));
  /* the same axes: one domain */
  DESC(tv[2], "T2[iTIDx{128}, (DS), iS{6}]");
  OK(f, tc_split(tv[2], 1, 2, 1));
  DESC(tv[2], "T2[iTIDx{128}, iS{3}, iS{2}] alloc[iTIDx{128}, (DS), iS{6}]");
  OK(f, tc_split(tv[3], 1, 2, 1));
  OK(f, tc_parallelize(tv[3], 0, TC_TIDX));
  OK(f, tc_inline_at(tv[2], 3));
  DESC(tv[2], "T2[iTIDx{128}, iS{3}, iS{2}, (CA)] alloc[iTIDx{128}, (DS), iS{6}]");
  /* shared memory: the allocation domain, no dim-sep */
  OK(f, tc_set_memory_type(tv[1], TC_MEM_SHARED));
  OK(f, tc_set_alloc_to_loop(tv[1]));
  OK(f, tc_merge(tv[1], 0, 1));
  DESC(tv[1], "T1[iS{768}] alloc[iS{128}, iS{6}]");
  tc_fusion_free(f);
}

int main(void) {
  TC_RUN(test_compute_at_positions);
  TC_RUN(test_tmem_dimsep);
  TC_RUN(test_own_alloc_domain);
  TC_MAIN_END();
}
