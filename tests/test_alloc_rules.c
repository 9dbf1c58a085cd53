/* test_alloc_rules.c - the allocation rules of nvFuser's tensor memory
 * tutorial (docs/concepts.md) end to end: the six gmem -> shared -> gmem
 * copies of a [2, 4] float tensor scheduled as the tutorial does (each must
 * run on PoCL, copy exactly, and report the tutorial's shared-memory
 * size), and the two tensor-memory allocation errors. */
#include "test.h"
#include "tilec/tilec.h"

enum { INL = 1, BIDX1 = 2, TIDX0 = 4 };

/* Builds tv0 -> tv1 (shared) -> tv2 with the given schedule, runs it and
 * returns the kernel's shared-memory bytes (-1 on failure). */
static long long gsg_copy(int sched) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {2, 4};
  tc_tensor *tv0 = tc_input(f, TC_F32, 2, shape);
  tc_tensor *tv1 = tc_set(f, tv0);
  tc_tensor *tv2 = tc_set(f, tv1);
  tc_add_output(f, tv2);
  TC_CHECK(tc_set_memory_type(tv1, TC_MEM_SHARED) == TC_OK, "%s", tc_fusion_error(f));
  if (sched & INL) TC_CHECK(tc_inline_at(tv1, 1) == TC_OK, "%s", tc_fusion_error(f));
  if (sched & TIDX0) {
    TC_CHECK(tc_parallelize(tv1, 0, TC_TIDX) == TC_OK, "%s", tc_fusion_error(f));
    TC_CHECK(tc_parallelize(tv2, 0, TC_TIDX) == TC_OK, "%s", tc_fusion_error(f));
  }
  if (sched & BIDX1) {
    TC_CHECK(tc_parallelize(tv1, 1, TC_BIDX) == TC_OK, "%s", tc_fusion_error(f));
    TC_CHECK(tc_parallelize(tv2, 1, TC_BIDX) == TC_OK, "%s", tc_fusion_error(f));
  }
  tc_status st;
  tc_kernel *k = tc_compile(f, NULL, &st);
  long long smem = -1;
  if (!k) {
    TC_CHECK(k != NULL, "compile failed: %s", tc_fusion_error(f));
  } else {
    float in[8], out[8];
    for (int i = 0; i < 8; i++) in[i] = (float)i * 1.5f + 0.25f, out[i] = -1.0f;
    void *args[2] = {in, out};
    st = tc_kernel_run(k, args, NULL, NULL);
    TC_CHECK(st == TC_OK, "run failed: %s", tc_kernel_error(k));
    for (int i = 0; i < 8; i++) TC_CHECK(out[i] == in[i], "element %d: %g != %g", i, out[i], in[i]);
    smem = (long long)tc_kernel_smem_bytes(k);
    tc_kernel_free(k);
  }
  tc_fusion_free(f);
  return smem;
}

static void test_gsg_copy_no_inline(void) { TC_CHECK_EQ_INT(gsg_copy(0), 8 * 4); }
static void test_gsg_copy_bidx(void) { TC_CHECK_EQ_INT(gsg_copy(BIDX1), 2 * 4); }
static void test_gsg_copy_inline(void) { TC_CHECK_EQ_INT(gsg_copy(INL), 4 * 4); }
static void test_gsg_copy_inline_bidx(void) { TC_CHECK_EQ_INT(gsg_copy(INL | BIDX1), 1 * 4); }
static void test_gsg_copy_inline_tidx(void) { TC_CHECK_EQ_INT(gsg_copy(INL | TIDX0), 8 * 4); }
static void test_gsg_copy_inline_tidx_bidx(void) { TC_CHECK_EQ_INT(gsg_copy(INL | TIDX0 | BIDX1), 2 * 4); }

/* gmem -> reg -> tmem -> reg -> gmem of the given shape; tv2 in tensor
 * memory. */
typedef struct { tc_fusion *f; tc_tensor *tv[5]; } chain;

static chain tmem_chain(const int64_t *shape, int n) {
  chain c;
  c.f = tc_fusion_new();
  c.tv[0] = tc_input(c.f, TC_F32, n, shape);
  for (int i = 1; i < 5; i++) c.tv[i] = tc_set(c.f, c.tv[i - 1]);
  tc_add_output(c.f, c.tv[4]);
  tc_set_memory_type(c.tv[2], TC_MEM_TENSOR);
  return c;
}

static void test_tmem_too_many_lanes(void) {
  int64_t shape[7] = {2, 3, 5, 7, 11, 13, 17};
  chain c = tmem_chain(shape, 7);
  tc_tensor *tv4 = c.tv[4];
  TC_CHECK(tc_parallelize(tv4, 0, TC_BIDX) == TC_OK, "%s", tc_fusion_error(c.f));
  TC_CHECK(tc_parallelize(tv4, 1, TC_TIDX) == TC_OK, "%s", tc_fusion_error(c.f));
  TC_CHECK(tc_parallelize(tv4, 3, TC_BIDY) == TC_OK, "%s", tc_fusion_error(c.f));
  TC_CHECK(tc_parallelize(tv4, 4, TC_TIDY) == TC_OK, "%s", tc_fusion_error(c.f));
  TC_CHECK(tc_parallelize_all_like(tv4) == TC_OK, "%s", tc_fusion_error(c.f));
  TC_CHECK(tc_inline_all_at(c.f, 3) == TC_OK, "%s", tc_fusion_error(c.f));
  TC_CHECK(tc_set_tmem_dimsep(c.tv[2], -2) == TC_OK, "%s", tc_fusion_error(c.f));
  tc_status st;
  tc_kernel *k = tc_compile(c.f, NULL, &st);
  TC_CHECK(k == NULL && st == TC_ERR_LOWER, "expected a lowering error, got status %d", st);
  TC_CHECK_STR(tc_fusion_error(c.f),
               "Not enough tensor memory lanes: tried to allocate 429, but only 128 available.");
  tc_kernel_free(k);
  tc_fusion_free(c.f);
}

/* As the tutorial's prose schedules it (its TooManyCols code repeats the
 * lanes case by mistake): [TIDx{32}, (DimSep), BIDx{3}, TIDy{5},
 * 7, (CA), BIDy{11}, TIDz{13}, 17] -> 5 * 13 * 17 = 1105 columns. */
static void test_tmem_too_many_cols(void) {
  int64_t shape[7] = {32, 3, 5, 7, 11, 13, 17};
  chain c = tmem_chain(shape, 7);
  tc_tensor *tv4 = c.tv[4];
  tc_ptype p[7] = {TC_TIDX, TC_BIDX, TC_TIDY, TC_SERIAL, TC_BIDY, TC_TIDZ, TC_SERIAL};
  for (int i = 0; i < 7; i++) TC_CHECK(tc_parallelize(tv4, i, p[i]) == TC_OK, "%s", tc_fusion_error(c.f));
  TC_CHECK(tc_parallelize_all_like(tv4) == TC_OK, "%s", tc_fusion_error(c.f));
  TC_CHECK(tc_inline_all_at(c.f, 4) == TC_OK, "%s", tc_fusion_error(c.f));
  TC_CHECK(tc_set_tmem_dimsep(c.tv[2], 1) == TC_OK, "%s", tc_fusion_error(c.f));
  tc_status st;
  tc_kernel *k = tc_compile(c.f, NULL, &st);
  TC_CHECK(k == NULL && st == TC_ERR_LOWER, "expected a lowering error, got status %d", st);
  TC_CHECK_STR(tc_fusion_error(c.f),
               "Not enough tensor memory columns: tried to allocate 1105, but only 512 available.");
  tc_kernel_free(k);
  tc_fusion_free(c.f);
}

int main(void) {
  TC_RUN(test_gsg_copy_no_inline);
  TC_RUN(test_gsg_copy_bidx);
  TC_RUN(test_gsg_copy_inline);
  TC_RUN(test_gsg_copy_inline_bidx);
  TC_RUN(test_gsg_copy_inline_tidx);
  TC_RUN(test_gsg_copy_inline_tidx_bidx);
  TC_RUN(test_tmem_too_many_lanes);
  TC_RUN(test_tmem_too_many_cols);
  TC_MAIN_END();
}
