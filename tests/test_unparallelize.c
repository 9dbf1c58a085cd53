/* test_unparallelize.c - tc_parallelize(t, axis, TC_SERIAL) undoes a
 * binding: after binding axes to BIDx and TIDx and compiling, unbinding
 * them gives back serial loops; the launch loses those dimensions
 * (tc_kernel_launch_dims), the kernel still runs on the default OpenCL
 * device and matches the reference evaluator exactly, and unbinding only
 * the consumer of a register tensor is refused with a message whose
 * remedies each work. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

/* The parallel types of t's three loop axes are p0, p1, p2. */
static void check_ptypes(const tc_tensor *t, tc_ptype p0, tc_ptype p1, tc_ptype p2) {
  tc_ptype want[3] = {p0, p1, p2};
  for (int i = 0; i < 3; i++)
    TC_CHECK(tc_tensor_loop_ptype(t, i) == want[i], "%s axis %d is %s, expected %s",
             tc_tensor_name(t), i, tc_ptype_name(tc_tensor_loop_ptype(t, i)),
             tc_ptype_name(want[i]));
}

/* T0, T1 [6, 40] f32; T2 = max(T0, T1) in registers; T3 = neg(T2), the
 * output, scheduled [BIDx{6}, 5, TIDx{8}] and propagated to T2, inlined as
 * deep as possible. */
typedef struct {
  tc_fusion *f;
  tc_tensor *t0, *t1, *t2, *t3;
} fx;

static fx make(void) {
  fx x;
  x.f = tc_fusion_new();
  int64_t shape[2] = {6, 40};
  x.t0 = tc_input(x.f, TC_F32, 2, shape);
  x.t1 = tc_input(x.f, TC_F32, 2, shape);
  x.t2 = tc_binary(x.f, TC_MAX, x.t0, x.t1);
  x.t3 = tc_unary(x.f, TC_NEG, x.t2);
  OK(x.f, tc_add_output(x.f, x.t3));
  OK(x.f, tc_split(x.t3, 1, 8, 1));
  OK(x.f, tc_parallelize(x.t3, 0, TC_BIDX));
  OK(x.f, tc_parallelize(x.t3, 2, TC_TIDX));
  OK(x.f, tc_propagate_transforms(x.t3));
  OK(x.f, tc_parallelize_all_like(x.t3));
  OK(x.f, tc_inline_most(x.f));
  return x;
}

/* Compiles, checks the launch, runs on pseudo-random inputs and compares
 * with the reference bit for bit (max and neg are exact). */
static void compile_run(fx *x, const int64_t grid[3], const int64_t block[3], const char *label) {
  tc_status st;
  tc_kernel *k = tc_compile(x->f, NULL, &st);
  TC_REQUIRE(k != NULL, "%s: compile: %s", label, tc_fusion_error(x->f));
  int64_t g[3], b[3];
  tc_kernel_launch_dims(k, g, b);
  for (int d = 0; d < 3; d++)
    TC_CHECK(g[d] == grid[d] && b[d] == block[d],
             "%s: launch grid %lld x %lld x %lld block %lld x %lld x %lld, expected grid %lld x "
             "%lld x %lld block %lld x %lld x %lld", label, (long long)g[0], (long long)g[1],
             (long long)g[2], (long long)b[0], (long long)b[1], (long long)b[2],
             (long long)grid[0], (long long)grid[1], (long long)grid[2], (long long)block[0],
             (long long)block[1], (long long)block[2]);
  enum { N = 6 * 40 };
  float a[N], c[N], out[N], ref[N];
  uint32_t r = 777u;
  for (int i = 0; i < N; i++) {
    r = r * 1664525u + 1013904223u, a[i] = (float)((int)(r >> 8) % 1000 - 500) / 8.0f;
    r = r * 1664525u + 1013904223u, c[i] = (float)((int)(r >> 8) % 1000 - 500) / 8.0f;
    out[i] = ref[i] = 12345.0f;
  }
  void *args[3] = {a, c, out}, *rargs[3] = {a, c, ref};
  TC_CHECK(tc_kernel_run(k, args, NULL, NULL) == TC_OK, "%s: run: %s", label, tc_kernel_error(k));
  TC_CHECK(tc_reference_run(x->f, rargs) == TC_OK, "%s: reference: %s", label, tc_fusion_error(x->f));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += memcmp(&out[i], &ref[i], sizeof(float)) != 0;
  TC_CHECK(bad == 0, "%s: %d of %d elements differ from the reference", label, bad, N);
  tc_kernel_free(k);
}

/* Unbinding TIDx on the output and copying the bindings to T2
 * (tc_parallelize_all_like copies TC_SERIAL too) leaves one thread per
 * block; unbinding BIDx as well leaves one block. */
static void test_unbind_thread_then_block(void) {
  fx x = make();
  static const int64_t g6[3] = {6, 1, 1}, one[3] = {1, 1, 1}, b8[3] = {8, 1, 1};
  check_ptypes(x.t2, TC_BIDX, TC_SERIAL, TC_TIDX);
  compile_run(&x, g6, b8, "bound");
  OK(x.f, tc_parallelize(x.t3, 2, TC_SERIAL));
  OK(x.f, tc_parallelize_all_like(x.t3));
  check_ptypes(x.t3, TC_BIDX, TC_SERIAL, TC_SERIAL);
  check_ptypes(x.t2, TC_BIDX, TC_SERIAL, TC_SERIAL);
  compile_run(&x, g6, one, "TIDx unbound");
  OK(x.f, tc_parallelize(x.t3, -3, TC_SERIAL)); /* negative positions count from the end */
  OK(x.f, tc_parallelize_all_like(x.t3));
  check_ptypes(x.t2, TC_SERIAL, TC_SERIAL, TC_SERIAL);
  compile_run(&x, one, one, "all unbound");
  /* and bound again */
  OK(x.f, tc_parallelize(x.t3, 1, TC_TIDX));
  OK(x.f, tc_parallelize_all_like(x.t3));
  static const int64_t b5[3] = {5, 1, 1};
  compile_run(&x, one, b5, "TIDx on axis 1");
  tc_fusion_free(x.f);
}

/* Unbinding only the output leaves T2 (registers) with TIDx{8} and a
 * consumer that has none: refused, naming the remedies, and each remedy
 * gives a kernel that runs right.  T2 is inlined past the axis first
 * (tc_inline_most put it at 3), so the inline check refuses it; inlined
 * left of the axis (at 2), the registers would be read across threads. */
static void test_unbind_consumer_only(void) {
  static const int64_t g6[3] = {6, 1, 1}, one[3] = {1, 1, 1}, b8[3] = {8, 1, 1};
  for (int remedy = 0; remedy < 2; remedy++) {
    fx x = make();
    OK(x.f, tc_parallelize(x.t3, 2, TC_SERIAL));
    tc_status st;
    tc_kernel *k = tc_compile(x.f, NULL, &st);
    TC_CHECK(k == NULL && st == TC_ERR_SCHEDULE, "compile: status %s", tc_status_name(st));
    TC_CHECK_STR(tc_fusion_error(x.f),
                 "compile: cannot inline T2 at position 3: its loop axis 2 is TIDx but the mapped "
                 "axis of its consumer T3 is Serial; parallelize both alike "
                 "(tc_parallelize_all_like) or inline T2 at position 2 or less "
                 "(T2[iBIDx{6}, iS{5}, iTIDx{8}, (CA)])");
    tc_kernel_free(k);
    if (remedy == 0) {
      OK(x.f, tc_parallelize_all_like(x.t3));
      compile_run(&x, g6, one, "remedy: parallelize alike");
      tc_fusion_free(x.f);
      continue;
    }
    OK(x.f, tc_inline_at(x.t2, 2));
    k = tc_compile(x.f, NULL, &st);
    TC_CHECK(k == NULL && st == TC_ERR_SCHEDULE, "compile: status %s", tc_status_name(st));
    TC_CHECK_STR(tc_fusion_error(x.f),
                 "compile: T2 is in local memory with axis 2 bound to TIDx, but its consumer T3 "
                 "has no matching TIDx axis, so it would read elements another thread wrote; "
                 "schedule and parallelize T2 and T3 alike (tc_propagate_transforms, "
                 "tc_parallelize_all_like), or place T2 in shared memory (tc_set_memory_type), "
                 "which all threads of a block see");
    tc_kernel_free(k);
    /* in shared memory, T2's 8 threads each write their element of the
     * block's row and T3 reads the row after a barrier */
    OK(x.f, tc_set_memory_type(x.t2, TC_MEM_SHARED));
    compile_run(&x, g6, b8, "remedy: shared memory");
    tc_fusion_free(x.f);
  }
}

int main(void) {
  TC_RUN(test_unbind_thread_then_block);
  TC_RUN(test_unbind_consumer_only);
  TC_MAIN_END();
}
