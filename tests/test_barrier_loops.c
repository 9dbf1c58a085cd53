/* test_barrier_loops.c - kernels with a barrier and predicated loops run
 * right on PoCL.  PoCL (3.1, the default device) adds barriers of its own
 * to loops whose trip count is the same in every work-item, in kernels
 * that have a barrier, and then ran the loop around such a loop a wrong
 * number of times when the inner loop's body was predicated on the outer
 * loop's index (as splits that do not divide make it): these schedules
 * never finished.  The OpenCL dialect now bounds the loops that have no
 * barrier by a value PoCL cannot prove uniform (tc_wi_zero).  Every run is
 * under the watchdog (TILEC_RUN_TIMEOUT_MS), so a kernel that hangs again
 * fails its test instead of blocking the suite, and every output is
 * checked against the reference evaluator and against values derived by
 * hand. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tilec/tilec.h"

enum { MAXN = 64 };

/* Compiles and runs f (one input, one output of n f32 elements) on x;
 * checks the output against tc_reference_run and against want[]. */
static void run_and_check(tc_fusion *f, const char *what, int64_t n, const float *x,
                          const float *want) {
  tc_status st;
  tc_kernel *k = tc_compile(f, NULL, &st);
  TC_REQUIRE(k, "%s: compile: %s", what, tc_fusion_error(f));
  float y[MAXN], ref[MAXN];
  for (int64_t i = 0; i < n; i++) y[i] = -99.0f;
  void *args[2] = {(void *)x, y};
  st = tc_kernel_run(k, args, NULL, NULL);
  if (st == TC_ERR_NO_DEVICE) {
    printf("  (%s)\n", tc_kernel_error(k));
    tc_kernel_free(k);
    TC_SKIP("no OpenCL device");
  }
  TC_CHECK(st == TC_OK, "%s: run: %s: %s", what, tc_status_name(st), tc_kernel_error(k));
  void *rargs[2] = {(void *)x, ref};
  TC_CHECK(tc_reference_run(f, rargs) == TC_OK, "%s: reference: %s", what, tc_fusion_error(f));
  int bad = 0;
  for (int64_t i = 0; st == TC_OK && i < n && bad < 3; i++)
    if (!(y[i] == want[i] && ref[i] == want[i])) {
      bad++;
      TC_CHECK(0, "%s: element %lld: kernel %g, reference %g, want %g", what, (long long)i,
               (double)y[i], (double)ref[i], (double)want[i]);
    }
  tc_kernel_free(k);
}

/* A split of loop axis `axis` by `factor` (inner when `inner`). */
typedef struct {
  int axis;
  int64_t factor;
  int inner;
} split_t;

/* T0 [n] f32; T1 = set(T0) in shared memory; T2 = T1 - T1 (sub) or -T1
 * in registers; T3 = last(T2), the output.  Every tensor gets the splits,
 * then loop axis `tidy` is TIDy for T1 and T3 and stays serial for T2. */
static tc_fusion *staged(int64_t n, int sub, tc_unary_op last, const split_t *splits, int nsplits,
                         int tidy, tc_tensor *ts[3]) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[1] = {n};
  tc_tensor *t1 = tc_set(f, tc_input(f, TC_F32, 1, shape));
  tc_tensor *t2 = sub ? tc_binary(f, TC_SUB, t1, t1) : tc_unary(f, TC_NEG, t1);
  tc_tensor *t3 = tc_unary(f, last, t2);
  tc_add_output(f, t3);
  TC_CHECK(tc_set_memory_type(t1, TC_MEM_SHARED) == TC_OK, "%s", tc_fusion_error(f));
  TC_CHECK(tc_set_memory_type(t2, TC_MEM_LOCAL) == TC_OK, "%s", tc_fusion_error(f));
  ts[0] = t1, ts[1] = t2, ts[2] = t3;
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < nsplits; j++)
      TC_CHECK(tc_split(ts[i], splits[j].axis, splits[j].factor, splits[j].inner) == TC_OK, "%s",
               tc_fusion_error(f));
    if (i != 1) TC_CHECK(tc_parallelize(ts[i], tidy, TC_TIDY) == TC_OK, "%s", tc_fusion_error(f));
  }
  return f;
}

/* [15] f32, T2 = T1 - T1, T3 = sigmoid(T2).  Every tensor split [15] ->
 * [4, 4] -> [4, 1, 16] -> [4, 1, 7, 16] (none divides), the last axis
 * TIDy{16} for T1 and T3 and serial for T2, then inlined at pos.  Inlined
 * at 1 or 2, the loops of T2 sit in the loop that holds the barrier,
 * predicated on its index: the kernel never finished on PoCL 3.1.
 * x - x = 0 for finite x and sigmoid(0) = 1 / (1 + e^0) = 0.5 exactly. */
static void sub_sigmoid_case(int pos) {
  static const split_t splits[3] = {{0, 4, 0}, {1, 16, 1}, {1, 7, 1}};
  tc_tensor *ts[3];
  tc_fusion *f = staged(15, 1, TC_SIGMOID, splits, 3, 3, ts);
  TC_CHECK(tc_inline_all_at(f, pos) == TC_OK, "%s", tc_fusion_error(f));
  static const int64_t ext[4] = {4, 1, 7, 16};
  for (int i = 0; i < 3; i++)
    for (int a = 0; a < 4; a++) TC_CHECK_EQ_INT(tc_tensor_loop_extent(ts[i], a), ext[a]);
  float x[15], want[15];
  for (int i = 0; i < 15; i++) x[i] = (float)i * 0.75f - 5.0f, want[i] = 0.5f;
  char what[64];
  snprintf(what, sizeof what, "sub-sigmoid inlined at %d", pos);
  run_and_check(f, what, 15, x, want);
  tc_fusion_free(f);
}

static void test_sub_sigmoid_inline_0(void) { sub_sigmoid_case(0); }
static void test_sub_sigmoid_inline_1(void) { sub_sigmoid_case(1); }
static void test_sub_sigmoid_inline_2(void) { sub_sigmoid_case(2); }
static void test_sub_sigmoid_inline_3(void) { sub_sigmoid_case(3); }

/* [22] f32, T2 = -T1, T3 = |T2|.  Split [22] -> [16, 2] -> [4, 5, 2],
 * axis 0 TIDy{4} for T1 and T3, serial for T2, nothing inlined: one
 * barrier after T1, and T2's three loops predicated on the outer two
 * (4 * 5 * 2 = 40 positions for 22 elements).  It never finished on PoCL
 * 3.1.  |-x| = |x|. */
static void test_neg_abs_not_inlined(void) {
  static const split_t splits[2] = {{0, 16, 0}, {0, 5, 1}};
  tc_tensor *ts[3];
  tc_fusion *f = staged(22, 0, TC_ABS, splits, 2, 0, ts);
  float x[22], want[22];
  for (int i = 0; i < 22; i++) x[i] = (float)(i - 11) * 1.25f, want[i] = fabsf(x[i]);
  run_and_check(f, "neg-abs", 22, x, want);
  tc_fusion_free(f);
}

int main(void) {
  /* a kernel that hangs fails its test (unless the caller set a limit) */
  setenv("TILEC_RUN_TIMEOUT_MS", "30000", 0);
  TC_RUN(test_sub_sigmoid_inline_0);
  TC_RUN(test_sub_sigmoid_inline_1);
  TC_RUN(test_sub_sigmoid_inline_2);
  TC_RUN(test_sub_sigmoid_inline_3);
  TC_RUN(test_neg_abs_not_inlined);
  TC_MAIN_END();
}
