/* test_watchdog.c - TILEC_RUN_TIMEOUT_MS on OpenCL: a launch that runs
 * longer fails with TC_ERR_TIMEOUT and a message naming the time and the
 * variable instead of blocking; the kernel object stays usable (later runs
 * get a new command queue and verify); a value that is not a number of
 * milliseconds is TC_ERR_ARGUMENT naming it; unset or 0 means no limit;
 * the same for tc_cl_run, which gives up the stuck queue for a new one. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "device_test_util.h"
#include "tilec/tilec.h"

static int has(const char *s, const char *needle) { return s && strstr(s, needle) != NULL; }

/* A legitimately long kernel: one work-item computes sigmoid(exp(x)) of
 * N elements in a serial loop (a few tens of milliseconds on a CPU, over
 * 32 MiB of memory traffic: never done within 1 ms). */
enum { N = 1 << 22 };

/* That kernel (NULL when the compile fails: the message is on *f), or
 * NULL with *f NULL when there is no OpenCL device. */
static tc_kernel *long_serial(tc_fusion **f) {
  *f = NULL;
  tc_cl *cl = open_cl_or_null();
  if (!cl) return NULL;
  tc_cl_close(cl);
  *f = tc_fusion_new();
  int64_t shape[1] = {N};
  tc_tensor *in = tc_input(*f, TC_F32, 1, shape);
  tc_tensor *out = tc_unary(*f, TC_SIGMOID, tc_unary(*f, TC_EXP, in));
  tc_add_output(*f, out);
  tc_inline_most(*f);
  tc_status st;
  return tc_compile(*f, NULL, &st);
}

/* Runs k on x into y with TILEC_RUN_TIMEOUT_MS = value (NULL: unset). */
static tc_status run_with(tc_kernel *k, const char *value, const float *x, float *y) {
  if (value) setenv("TILEC_RUN_TIMEOUT_MS", value, 1);
  else unsetenv("TILEC_RUN_TIMEOUT_MS");
  void *args[2] = {(void *)x, y};
  tc_status st = tc_kernel_run(k, args, NULL, NULL);
  unsetenv("TILEC_RUN_TIMEOUT_MS");
  return st;
}

/* Counts the elements of y that are not sigmoid(exp(x)) computed here in
 * double (within 1e-5 relative: the kernel's exp and division round). */
static int64_t wrong(const float *x, const float *y) {
  int64_t bad = 0;
  for (int64_t i = 0; i < N; i++) {
    double want = 1.0 / (1.0 + exp(-exp((double)x[i])));
    if (!(fabs((double)y[i] - want) <= 1e-5 * want)) bad++;
  }
  return bad;
}

static void test_timeout_then_recover(void) {
  tc_fusion *f;
  tc_kernel *k = long_serial(&f);
  if (!f) TC_SKIP("no OpenCL device");
  TC_REQUIRE(k, "compile: %s", tc_fusion_error(f));
  tc_status st;
  int64_t g[3], b[3];
  tc_kernel_launch_dims(k, g, b);
  TC_CHECK(g[0] * g[1] * g[2] * b[0] * b[1] * b[2] == 1, "not one work-item: grid %lld block %lld",
           (long long)(g[0] * g[1] * g[2]), (long long)(b[0] * b[1] * b[2]));
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  for (int64_t i = 0; i < N; i++) x[i] = (float)(i % 2001 - 1000) / 500.0f;
  /* build first, so that the 1 ms count only the run */
  TC_CHECK(tc_kernel_build(k, NULL) == TC_OK, "build: %s", tc_kernel_error(k));

  st = run_with(k, "1", x, y);
  const char *msg = tc_kernel_error(k);
  TC_CHECK(st == TC_ERR_TIMEOUT, "status %s: %s", tc_status_name(st), msg);
  TC_CHECK(has(msg, "within 1 ms") && has(msg, "TILEC_RUN_TIMEOUT_MS") && has(msg, "tilec_kernel"),
           "message: %s", msg);
  TC_CHECK(strcmp(tc_status_name(TC_ERR_TIMEOUT), "timed out") == 0, "%s",
           tc_status_name(TC_ERR_TIMEOUT));

  /* the same kernel runs again, on a new queue, and verifies */
  for (int i = 0; i < N; i++) y[i] = -1.0f;
  st = run_with(k, "600000", x, y);
  TC_CHECK(st == TC_OK, "after the timeout: %s: %s", tc_status_name(st), tc_kernel_error(k));
  TC_CHECK(st != TC_OK || wrong(x, y) == 0, "after the timeout: %lld wrong elements",
           (long long)wrong(x, y));
  /* unset and 0: no limit */
  const char *none[2] = {NULL, "0"};
  for (int j = 0; j < 2; j++) {
    for (int i = 0; i < N; i++) y[i] = -1.0f;
    st = run_with(k, none[j], x, y);
    TC_CHECK(st == TC_OK && wrong(x, y) == 0, "TILEC_RUN_TIMEOUT_MS %s: %s: %s",
             none[j] ? none[j] : "unset", tc_status_name(st), tc_kernel_error(k));
  }
  free(x), free(y);
  tc_kernel_free(k);
  tc_fusion_free(f);
}

static void test_bad_values(void) {
  tc_fusion *f;
  tc_kernel *k = long_serial(&f);
  if (!f) TC_SKIP("no OpenCL device");
  TC_REQUIRE(k, "compile: %s", tc_fusion_error(f));
  tc_status st;
  float *x = calloc(N, sizeof *x), *y = calloc(N, sizeof *y);
  const char *bad[] = {"abc", "-5", "10ms", "1.5"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    st = run_with(k, bad[i], x, y);
    const char *msg = tc_kernel_error(k);
    char quoted[32];
    snprintf(quoted, sizeof quoted, "\"%s\"", bad[i]);
    TC_CHECK(st == TC_ERR_ARGUMENT, "%s: status %s: %s", bad[i], tc_status_name(st), msg);
    TC_CHECK(has(msg, "TILEC_RUN_TIMEOUT_MS") && has(msg, quoted) && has(msg, "milliseconds"),
             "%s: message: %s", bad[i], msg);
  }
  free(x), free(y);
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* The same through tc_cl_run, on a kernel that spins `n` (its first
 * argument's first element) dependent steps: 2^28 take a good part of a
 * second, 1000 no time.  After the timeout the device has given up one
 * queue, runs the next launch on a new one, and closes cleanly. */
static void test_cl_run_timeout(void) {
  tc_cl *cl = open_cl_or_null();
  if (!cl) TC_SKIP("no OpenCL device");
  const char *src =
      "__kernel void spin(__global int *p) {\n"
      "  float a = 0.0f;\n"
      "  for (int i = 0; i < p[0]; i++) a = a * 0.5f + 1.0f;\n"
      "  p[1] = (int)a;\n"
      "}\n";
  int32_t p[2] = {1 << 28, 0};
  tc_rt_buffer b = {p, sizeof p, 1};
  tc_launch l = {{1, 1, 1}, {1, 1, 1}};
  tc_str err;
  tc_str_init(&err);
  TC_CHECK(tc_cl_build(cl, src, &err) == TC_OK, "build: %s", tc_str_cstr(&err));
  setenv("TILEC_RUN_TIMEOUT_MS", "1", 1);
  tc_status st = tc_cl_run(cl, src, "spin", &b, 1, &l, NULL, &err);
  TC_CHECK(st == TC_ERR_TIMEOUT && has(tc_str_cstr(&err), "'spin' did not finish within 1 ms"),
           "status %s: %s", tc_status_name(st), tc_str_cstr(&err));
  TC_CHECK_EQ_INT(tc_cl_abandoned_queues(cl), 1);
  /* a short run, with one timed repeat, on the new queue: after n steps
   * a = 2 - 2^(1 - n), exact in float up to n = 24; 2 - 2^-24 lies halfway
   * between two floats and rounds to the even one, 2.0f, a fixed point:
   * 1000 steps give 2 */
  tc_str_free(&err);
  tc_str_init(&err);
  p[0] = 1000, p[1] = -1;
  double rep_ms = -1;
  l.repeat = 1, l.repeat_ms = &rep_ms;
  setenv("TILEC_RUN_TIMEOUT_MS", "600000", 1);
  st = tc_cl_run(cl, src, "spin", &b, 1, &l, NULL, &err);
  unsetenv("TILEC_RUN_TIMEOUT_MS");
  TC_CHECK(st == TC_OK && p[1] == 2 && rep_ms >= 0, "after the timeout: %s: %s, p[1] = %d",
           tc_status_name(st), tc_str_cstr(&err), (int)p[1]);
  TC_CHECK_EQ_INT(tc_cl_abandoned_queues(cl), 1);
  tc_str_free(&err);
  tc_cl_close(cl);
}

int main(void) {
  TC_RUN(test_timeout_then_recover);
  TC_RUN(test_bad_values);
  TC_RUN(test_cl_run_timeout);
  TC_MAIN_END();
}
