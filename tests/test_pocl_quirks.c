/* test_pocl_quirks.c - valid kernels that PoCL 3.1's compiler (LLVM 15,
 * in the caller's process) used to abort on.  PoCL lets LLVM's loop
 * vectorizer predicate short loops with masked vector loads and stores, and
 * the x86 instruction selector could not select what it made of a
 * predicated loop whose values reach another loop through shared memory
 * ("LLVM ERROR: Cannot select", or a crash), ending the whole process in
 * tc_kernel_run.  The OpenCL dialect keeps the vectorizer off the kernel's
 * own loops (tc_dialect.loop_pragma).  Each case runs in a child process so
 * that an abort fails its test instead of the whole program; outputs are
 * compared with values computed here in plain C. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "tilec/tilec.h"

enum { CHILD_OK = 0, CHILD_WRONG = 1, CHILD_NO_DEVICE = 3 };

/* Compiles f and runs it on args (inputs first, then outputs); returns a
 * CHILD_* code.  Runs in the child. */
static int compile_and_run(tc_fusion *f, void **args) {
  tc_status st;
  tc_kernel *k = tc_compile(f, NULL, &st);
  if (!k) {
    printf("    compile: %s\n", tc_fusion_error(f));
    return CHILD_WRONG;
  }
  st = tc_kernel_run(k, args, NULL, NULL);
  if (st == TC_ERR_NO_DEVICE) return CHILD_NO_DEVICE;
  if (st != TC_OK) {
    printf("    run: %s: %s\n", tc_status_name(st), tc_kernel_error(k));
    return CHILD_WRONG;
  }
  tc_kernel_free(k);
  return CHILD_OK;
}

/* Runs fn in a child process and checks how it ended. */
static void in_child(int (*fn)(void), const char *what) {
  fflush(stdout);
  pid_t pid = fork();
  TC_REQUIRE(pid >= 0, "%s: fork failed", what);
  if (pid == 0) {
    int rc = fn();
    fflush(stdout);
    _exit(rc);
  }
  int ws = 0;
  TC_REQUIRE(waitpid(pid, &ws, 0) == pid, "%s: waitpid failed", what);
  if (WIFEXITED(ws) && WEXITSTATUS(ws) == CHILD_NO_DEVICE) TC_SKIP("no OpenCL device");
  if (WIFSIGNALED(ws))
    TC_CHECK(0, "%s: the process died of signal %d (%s) compiling or running the kernel", what,
             WTERMSIG(ws), strsignal(WTERMSIG(ws)));
  else
    TC_CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == CHILD_OK, "%s: wrong results (exit status %d)", what,
             WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
}

/* Compares n floats with want (relative tolerance tol); prints mismatches. */
static int same(const char *name, const float *got, const float *want, int n, double tol) {
  int bad = 0;
  for (int i = 0; i < n; i++)
    if (!(fabs((double)got[i] - want[i]) <= tol * (1 + fabs((double)want[i])))) {
      if (bad++ < 3) printf("    %s[%d]: kernel %.9g, want %.9g\n", name, i, (double)got[i], (double)want[i]);
    }
  return bad ? CHILD_WRONG : CHILD_OK;
}

/* fabs written to shared memory in a predicated loop: T0 [17] f32,
 * T1 = T0 + T0 in registers, T2 = |T1| in shared memory, T3 = T1 + T2,
 * split [17] -> [3, 1, 1, 8] with the 8 on blockIdx.x (8 * 3 = 24 > 17:
 * every loop is predicated). */
static int fabs_to_shared(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[1] = {17};
  tc_tensor *t0 = tc_input(f, TC_F32, 1, shape);
  tc_tensor *t1 = tc_binary(f, TC_ADD, t0, t0);
  tc_tensor *t2 = tc_unary(f, TC_ABS, t1);
  tc_tensor *t3 = tc_binary(f, TC_ADD, t1, t2);
  tc_add_output(f, t3);
  tc_set_memory_type(t2, TC_MEM_SHARED);
  tc_split(t3, 0, 8, 1);
  tc_split(t3, 0, 3, 1);
  tc_split(t3, 1, 1, 1);
  tc_split(t3, 1, 1, 0);
  tc_propagate_transforms(t3);
  tc_parallelize(t3, 4, TC_BIDX);
  tc_parallelize_all_like(t3);
  float x[17], y[17], want[17];
  for (int i = 0; i < 17; i++) {
    x[i] = (float)(i % 5) - 2.5f; /* exact in f32, so are 2x and 2x + |2x| */
    want[i] = 2 * x[i] + fabsf(2 * x[i]);
    y[i] = -99.0f;
  }
  void *args[2] = {x, y};
  int rc = compile_and_run(f, args);
  tc_fusion_free(f);
  return rc ? rc : same("T3", y, want, 17, 0);
}

/* fmax (relu) written to shared memory in a predicated loop: T0 [2] f32,
 * T1 = relu(T0) in shared memory, T2 = tanh(T1), out = T2, split
 * [2] -> [1, 6]. */
static int fmax_to_shared(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[1] = {2};
  tc_tensor *t0 = tc_input(f, TC_F32, 1, shape);
  tc_tensor *t1 = tc_unary(f, TC_RELU, t0);
  tc_tensor *t2 = tc_unary(f, TC_TANH, t1);
  tc_tensor *t3 = tc_set(f, t2);
  tc_add_output(f, t3);
  tc_set_memory_type(t1, TC_MEM_SHARED);
  tc_split(t3, 0, 6, 1);
  tc_propagate_transforms(t3);
  float x[2] = {-1.5f, 0.75f}, y[2] = {-99.0f, -99.0f};
  float want[2] = {0.0f, tanhf(0.75f)}; /* relu(-1.5) = 0, tanh(0) = 0 */
  void *args[2] = {x, y};
  int rc = compile_and_run(f, args);
  tc_fusion_free(f);
  return rc ? rc : same("T3", y, want, 2, 1e-6);
}

/* A predicated saturating f32 -> i8 cast: T0 [3, 2] f32, outputs tanh(T0)
 * and bf16(f16(i8(T0))), the first split [3, 2] -> merged [6] -> [2, 4]
 * (non-dividing) on blockIdx.x, everything else inlined. */
static int cast_to_i8(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {3, 2};
  tc_tensor *t0 = tc_input(f, TC_F32, 2, shape);
  tc_tensor *t1 = tc_cast(f, t0, TC_I8);
  tc_tensor *t3 = tc_unary(f, TC_TANH, t0);
  tc_tensor *t4 = tc_cast(f, t1, TC_F16);
  tc_tensor *t7 = tc_cast(f, t4, TC_BF16);
  tc_add_output(f, t3);
  tc_add_output(f, t7);
  tc_split(t3, 1, 3, 1);
  tc_merge(t3, 0, 1);
  int from[2] = {0, 1}, to[2] = {1, 0};
  tc_reorder(t3, 2, from, to);
  tc_split(t3, 0, 4, 1);
  tc_propagate_transforms(t3);
  tc_parallelize(t3, 2, TC_BIDX);
  tc_parallelize_all_like(t3);
  tc_inline_most(f);
  /* the cast saturates and truncates toward zero: 300 -> 127,
   * -1000 -> -128, 2.7 -> 2, -3.9 -> -3; small integers are exact in f16
   * and bf16 */
  float x[6] = {300.0f, -1000.0f, 2.7f, -3.9f, 0.25f, 100.0f};
  float sat[6] = {127.0f, -128.0f, 2.0f, -3.0f, 0.0f, 100.0f};
  float th[6], want_th[6], conv[6];
  uint16_t bf[6];
  for (int i = 0; i < 6; i++) want_th[i] = tanhf(x[i]), th[i] = -99.0f, bf[i] = 0xffff;
  void *args[3] = {x, th, bf};
  int rc = compile_and_run(f, args);
  tc_fusion_free(f);
  if (rc) return rc;
  for (int i = 0; i < 6; i++) conv[i] = tc_bf16_to_f32(bf[i]);
  return same("tanh", th, want_th, 6, 1e-6) | same("bf16(f16(i8))", conv, sat, 6, 0);
}

static void test_fabs_to_shared(void) { in_child(fabs_to_shared, "fabs to shared memory"); }
static void test_fmax_to_shared(void) { in_child(fmax_to_shared, "fmax to shared memory"); }
static void test_cast_to_i8(void) { in_child(cast_to_i8, "predicated cast to i8"); }

int main(void) {
  TC_RUN(test_fabs_to_shared);
  TC_RUN(test_fmax_to_shared);
  TC_RUN(test_cast_to_i8);
  TC_MAIN_END();
}
