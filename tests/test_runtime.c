/* test_runtime.c - tests of the runtime module: OpenCL device listing and
 * selection, building and running kernels on PoCL (results, the program
 * cache, zero-byte buffers, 2-D launches, and the error messages for
 * compile errors, bad selectors, bad kernel names and oversized
 * work-groups), and CUDA: NVRTC compilation to PTX (skipped where NVRTC is
 * missing) and the "no CUDA device: ..." path where there is no driver
 * (or a real run where there is one); the timed device-to-device copy
 * (tc_cuda_time_d2d): its argument errors, "no CUDA device" without one,
 * positive times with one; timed repeats (tc_launch's repeat): the host
 * gets one launch's result of a kernel that accumulates, a positive time
 * per repeat, and the argument errors on every runtime. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "test.h"
#include "device_test_util.h"

static int has(const tc_str *s, const char *needle) {
  return strstr(tc_str_cstr(s), needle) != NULL;
}

static int starts_with(const tc_str *s, const char *prefix) {
  return strncmp(tc_str_cstr(s), prefix, strlen(prefix)) == 0;
}

/* Opens the default device (ignoring $TILEC_OPENCL_DEVICE). */
static tc_cl *open_default(tc_str *err) {
  unsetenv("TILEC_OPENCL_DEVICE");
  tc_cl *cl = NULL;
  if (tc_cl_open(NULL, &cl, err) != TC_OK) return NULL;
  return cl;
}

/* ---- OpenCL ------------------------------------------------------------- */

static void test_cl_list_devices(void) {
  tc_str out;
  tc_str_init(&out);
  int n = tc_cl_list_devices(&out);
  TC_CHECK(n >= 1, "expected at least one OpenCL device, got %d: %s", n,
           tc_str_cstr(&out));
  TC_CHECK(has(&out, "0:0  "), "listing: %s", tc_str_cstr(&out));
  TC_CHECK(has(&out, "compute units"), "listing: %s", tc_str_cstr(&out));
  TC_CHECK(has(&out, "KiB local mem"), "listing: %s", tc_str_cstr(&out));
  tc_str_free(&out);
}

static void test_cl_open_default_is_pocl(void) {
  tc_str err;
  tc_str_init(&err);
  tc_cl *cl = open_default(&err);
  TC_REQUIRE(cl, "open failed: %s", tc_str_cstr(&err));
  const char *name = tc_cl_device_name(cl);
  TC_CHECK(strstr(name, "Portable Computing Language") != NULL,
           "default device is not PoCL: %s", name);
  TC_CHECK(strstr(name, " / ") != NULL, "name: %s", name);
  TC_CHECK(strstr(name, "pthread") || strstr(name, "cpu") ||
               strstr(name, "basic"),
           "PoCL device name: %s", name);
  TC_CHECK(tc_cl_max_work_group_size(cl) >= 64, "max wg %zu",
           tc_cl_max_work_group_size(cl));
  tc_cl_close(cl);
  tc_str_free(&err);
}

static void test_cl_selectors(void) {
  /* the last selector is a piece of the default device's own name (PoCL
   * calls its CPU device "pthread-..." up to 3.x and "cpu-..." from 4.0) */
  char piece[16] = "pthread";
  tc_cl *def = NULL;
  tc_str e0;
  tc_str_init(&e0);
  if (tc_cl_open(NULL, &def, &e0) == TC_OK) {
    const char *dev = strstr(tc_cl_device_name(def), " / ");
    if (dev) snprintf(piece, sizeof piece, "%.*s", (int)strcspn(dev + 3, "-"), dev + 3);
    tc_cl_close(def);
  }
  tc_str_free(&e0);
  const char *good[] = {"0:0", "pocl", "POCL", "portable computing", piece};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    tc_str err;
    tc_str_init(&err);
    tc_cl *cl = NULL;
    tc_status st = tc_cl_open(good[i], &cl, &err);
    TC_CHECK(st == TC_OK && cl, "selector '%s': %s", good[i], tc_str_cstr(&err));
    tc_cl_close(cl);
    tc_str_free(&err);
  }
  /* $TILEC_OPENCL_DEVICE is used when the selector is NULL. */
  setenv("TILEC_OPENCL_DEVICE", "0:0", 1);
  tc_str err;
  tc_str_init(&err);
  tc_cl *cl = NULL;
  TC_CHECK(tc_cl_open(NULL, &cl, &err) == TC_OK, "env 0:0: %s", tc_str_cstr(&err));
  tc_cl_close(cl);
  cl = NULL;
  setenv("TILEC_OPENCL_DEVICE", "nosuchdevice", 1);
  tc_str_clear(&err);
  TC_CHECK(tc_cl_open(NULL, &cl, &err) == TC_ERR_NO_DEVICE, "env bad selector");
  TC_CHECK(cl == NULL, "cl set on failure");
  TC_CHECK(has(&err, "'nosuchdevice'") && has(&err, "TILEC_OPENCL_DEVICE"),
           "message: %s", tc_str_cstr(&err));
  unsetenv("TILEC_OPENCL_DEVICE");
  tc_str_free(&err);
}

static void test_cl_bad_selector(void) {
  const char *bad[] = {"xyz", "9:9", "0:7"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    tc_str err;
    tc_str_init(&err);
    tc_cl *cl = NULL;
    tc_status st = tc_cl_open(bad[i], &cl, &err);
    TC_CHECK_EQ_INT(st, TC_ERR_NO_DEVICE);
    TC_CHECK(cl == NULL, "cl set on failure");
    char want[64];
    snprintf(want, sizeof want, "no OpenCL device matches '%s'", bad[i]);
    TC_CHECK(has(&err, want), "message: %s", tc_str_cstr(&err));
    TC_CHECK(has(&err, "tilec devices"), "message: %s", tc_str_cstr(&err));
    tc_str_free(&err);
  }
}

static const char *saxpy_src =
    "__kernel void saxpy(__global const float *x, __global float *y,\n"
    "                    __global const float *a, __global const int *n) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i < n[0]) y[i] = a[0] * x[i] + y[i];\n"
    "}\n";

static void test_cl_saxpy(void) {
  tc_str err;
  tc_str_init(&err);
  tc_cl *cl = open_default(&err);
  TC_REQUIRE(cl, "open failed: %s", tc_str_cstr(&err));
  enum { N = 1000 };
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y),
        *ref = malloc(N * sizeof *ref);
  float a = 2.5f;
  int n = N;
  for (int rep = 0; rep < 2; rep++) {
    for (int i = 0; i < N; i++) {
      x[i] = (float)i * 0.5f - 17.0f;
      y[i] = (float)(i % 13) + (float)rep;
      ref[i] = a * x[i] + y[i];
    }
    tc_rt_buffer bufs[4] = {{x, N * sizeof(float), 0},
                            {y, N * sizeof(float), 1},
                            {&a, sizeof a, 0},
                            {&n, sizeof n, 0}};
    tc_launch l = {{16, 1, 1}, {64, 1, 1}, 0}; /* 1024 work-items for 1000 */
    double ms = -1;
    tc_status st = tc_cl_run(cl, saxpy_src, "saxpy", bufs, 4, &l, &ms, &err);
    TC_REQUIRE(st == TC_OK, "run: status %d: %s", (int)st, tc_str_cstr(&err));
    int bad = 0;
    for (int i = 0; i < N; i++)
      if (fabsf(y[i] - ref[i]) > 1e-5f * (1.0f + fabsf(ref[i]))) bad++;
    TC_CHECK(bad == 0, "%d of %d results differ", bad, N);
    TC_CHECK(ms >= 0, "ms = %g", ms);
    /* the second run reuses the built program */
    TC_CHECK_EQ_INT(tc_cl_cached_programs(cl), 1);
  }
  /* NULL ms is allowed */
  tc_rt_buffer bufs[4] = {{x, N * sizeof(float), 0},
                          {y, N * sizeof(float), 0},
                          {&a, sizeof a, 0},
                          {&n, sizeof n, 0}};
  tc_launch l = {{16, 1, 1}, {64, 1, 1}, 0};
  TC_CHECK(tc_cl_run(cl, saxpy_src, "saxpy", bufs, 4, &l, NULL, &err) == TC_OK,
           "%s", tc_str_cstr(&err));
  free(x);
  free(y);
  free(ref);
  tc_cl_close(cl);
  tc_str_free(&err);
}

/* grid 3x2, block 4x8: out[gy * W + gx] = gx * 1000 + gy, W = 12, H = 16. */
static void test_cl_2d_launch_and_empty_buffer(void) {
  tc_str err;
  tc_str_init(&err);
  tc_cl *cl = open_default(&err);
  TC_REQUIRE(cl, "open failed: %s", tc_str_cstr(&err));
  const char *src =
      "__kernel void idx2d(__global int *out, __global float *unused) {\n"
      "  int gx = get_global_id(0), gy = get_global_id(1);\n"
      "  if (get_local_size(0) != 4 || get_local_size(1) != 8) { out[0] = -1; return; }\n"
      "  out[gy * get_global_size(0) + gx] = gx * 1000 + gy;\n"
      "}\n";
  enum { W = 12, H = 16 };
  int out[W * H];
  memset(out, 0xff, sizeof out);
  tc_rt_buffer bufs[2] = {{out, sizeof out, 1}, {NULL, 0, 1}};
  tc_launch l = {{3, 2, 1}, {4, 8, 1}, 0};
  tc_status st = tc_cl_run(cl, src, "idx2d", bufs, 2, &l, NULL, &err);
  TC_REQUIRE(st == TC_OK, "run: %s", tc_str_cstr(&err));
  int bad = 0;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      if (out[y * W + x] != x * 1000 + y) bad++;
  TC_CHECK(bad == 0, "%d wrong entries (out[0] = %d)", bad, out[0]);
  tc_cl_close(cl);
  tc_str_free(&err);
}

static void test_cl_compile_error(void) {
  tc_str err;
  tc_str_init(&err);
  tc_cl *cl = open_default(&err);
  TC_REQUIRE(cl, "open failed: %s", tc_str_cstr(&err));
  const char *src =
      "__kernel void broken(__global float *x) {\n"
      "  x[get_global_id(0)] = undefined_thing_42 +;\n"
      "}\n";
  float x[4] = {0};
  tc_rt_buffer bufs[1] = {{x, sizeof x, 1}};
  tc_launch l = {{1, 1, 1}, {4, 1, 1}, 0};
  tc_status st = tc_cl_run(cl, src, "broken", bufs, 1, &l, NULL, &err);
  TC_CHECK_EQ_INT(st, TC_ERR_COMPILE);
  TC_CHECK(has(&err, "clBuildProgram failed: CL_BUILD_PROGRAM_FAILURE (-11)"),
           "message: %s", tc_str_cstr(&err));
  TC_CHECK(has(&err, "build log"), "message: %s", tc_str_cstr(&err));
  TC_CHECK(has(&err, "undefined_thing_42"), "log lacks the bad identifier: %s",
           tc_str_cstr(&err));
  TC_CHECK_EQ_INT(tc_cl_cached_programs(cl), 0);
  tc_cl_close(cl);
  tc_str_free(&err);
}

static void test_cl_bad_kernel_name_and_args(void) {
  tc_str err;
  tc_str_init(&err);
  tc_cl *cl = open_default(&err);
  TC_REQUIRE(cl, "open failed: %s", tc_str_cstr(&err));
  float x[4] = {0};
  tc_rt_buffer bufs[1] = {{x, sizeof x, 1}};
  tc_launch l = {{1, 1, 1}, {4, 1, 1}, 0};
  tc_status st = tc_cl_run(cl, saxpy_src, "nosuchkernel", bufs, 1, &l, NULL, &err);
  TC_CHECK(st != TC_OK, "ran a missing kernel");
  TC_CHECK(has(&err, "CL_INVALID_KERNEL_NAME (-46)") && has(&err, "'nosuchkernel'"),
           "message: %s", tc_str_cstr(&err));
  tc_str_clear(&err);
  st = tc_cl_run(cl, saxpy_src, "saxpy", bufs, 1, &l, NULL, &err);
  TC_CHECK_EQ_INT(st, TC_ERR_ARGUMENT);
  TC_CHECK(has(&err, "takes 4 arguments but 1 buffers"), "message: %s",
           tc_str_cstr(&err));
  tc_str_clear(&err);
  tc_launch zero = {{0, 1, 1}, {4, 1, 1}, 0};
  st = tc_cl_run(cl, saxpy_src, "saxpy", bufs, 1, &zero, NULL, &err);
  TC_CHECK_EQ_INT(st, TC_ERR_ARGUMENT);
  tc_cl_close(cl);
  tc_str_free(&err);
}

static void test_cl_work_group_too_large(void) {
  tc_str err;
  tc_str_init(&err);
  tc_cl *cl = open_default(&err);
  TC_REQUIRE(cl, "open failed: %s", tc_str_cstr(&err));
  size_t max = tc_cl_max_work_group_size(cl);
  TC_REQUIRE(max > 0, "unknown max work-group size");
  float x[4] = {0};
  int n = 4;
  float a = 1;
  tc_rt_buffer bufs[4] = {{x, sizeof x, 0}, {x, sizeof x, 1}, {&a, sizeof a, 0},
                          {&n, sizeof n, 0}};
  /* per-dimension extents fit, the product does not */
  tc_launch l = {{1, 1, 1}, {max, 2, 1}, 0};
  tc_status st = tc_cl_run(cl, saxpy_src, "saxpy", bufs, 4, &l, NULL, &err);
  TC_CHECK_EQ_INT(st, TC_ERR_RUNTIME);
  char want[96];
  snprintf(want, sizeof want, "exceeds the max work-group size %zu", max);
  TC_CHECK(has(&err, want) && has(&err, "work-items"), "message: %s",
           tc_str_cstr(&err));
  tc_cl_close(cl);
  tc_str_free(&err);
}

/* out[i] += in[i]: a kernel whose result depends on how often it ran. */
static const char *acc_src =
    "__kernel void acc(__global float *out, __global const float *in) {\n"
    "  int i = get_global_id(0);\n"
    "  out[i] += in[i];\n"
    "}\n";

/* Timed repeats (tc_launch's repeat): out holds exactly one launch's
 * result (init + in, not init + (1 + repeat) * in), each repeat gets a
 * positive time; 40 crosses the runtime's batch of 32 launches; repeat 0
 * (a zero-initialised launch) is one launch as before. */
static void test_cl_repeat(void) {
  tc_str err;
  tc_str_init(&err);
  tc_cl *cl = open_default(&err);
  TC_REQUIRE(cl, "open failed: %s", tc_str_cstr(&err));
  enum { N = 4096 };
  float *out = malloc(N * sizeof *out), *in = malloc(N * sizeof *in),
        *want = malloc(N * sizeof *want);
  for (int i = 0; i < N; i++) {
    out[i] = (float)(i % 97) * 0.125f - 3.0f;
    in[i] = (float)(i % 31) + 0.5f;
  }
  const int repeats[3] = {3, 40, 0};
  for (int c = 0; c < 3; c++) {
    int rep = repeats[c];
    for (int i = 0; i < N; i++) want[i] = out[i] + in[i]; /* one launch, in float as the kernel */
    tc_rt_buffer bufs[2] = {{out, N * sizeof(float), 1}, {in, N * sizeof(float), 0}};
    double times[40];
    for (int i = 0; i < 40; i++) times[i] = -1;
    tc_launch l = {.grid = {N / 64, 1, 1}, .block = {64, 1, 1}, .repeat = rep,
                   .repeat_ms = rep ? times : NULL};
    double ms = -1;
    tc_str_clear(&err);
    tc_status st = tc_cl_run(cl, acc_src, "acc", bufs, 2, &l, &ms, &err);
    TC_REQUIRE(st == TC_OK, "repeat %d: %s: %s", rep, tc_status_name(st), tc_str_cstr(&err));
    int bad = 0, first = -1;
    for (int i = 0; i < N; i++)
      if (out[i] != want[i] && bad++ == 0) first = i;
    TC_CHECK(bad == 0, "repeat %d: %d of %d elements differ from one launch's result (out[%d] "
             "= %g, want %g)", rep, bad, N, first, first >= 0 ? out[first] : 0.0,
             first >= 0 ? want[first] : 0.0);
    TC_CHECK(ms > 0, "repeat %d: first launch ms = %g", rep, ms);
    for (int i = 0; i < rep; i++)
      TC_CHECK(times[i] > 0 && times[i] < 10000, "repeat %d: repeat_ms[%d] = %g", rep, i,
               times[i]);
    for (int i = rep; i < 40; i++)
      TC_CHECK(times[i] == -1, "repeat %d: repeat_ms[%d] written (%g)", rep, i, times[i]);
  }
  free(out);
  free(in);
  free(want);
  tc_cl_close(cl);
  tc_str_free(&err);
}

/* repeat < 0, or repeat > 0 without repeat_ms: TC_ERR_ARGUMENT before
 * anything runs, on OpenCL, CUDA (no device needed) and HIP. */
static void test_repeat_errors(void) {
  tc_str err;
  tc_str_init(&err);
  tc_cl *cl = open_default(&err);
  TC_REQUIRE(cl, "open failed: %s", tc_str_cstr(&err));
  float out[64], in[64];
  for (int i = 0; i < 64; i++) out[i] = 7, in[i] = 1;
  tc_rt_buffer bufs[2] = {{out, sizeof out, 1}, {in, sizeof in, 0}};
  double times[2] = {-1, -1};
  tc_launch neg = {.grid = {1, 1, 1}, .block = {64, 1, 1}, .repeat = -1, .repeat_ms = times};
  tc_launch nul = {.grid = {1, 1, 1}, .block = {64, 1, 1}, .repeat = 2};
  const char *neg_msg = "launch of 'acc': repeat is -1; it is the number of timed launches after "
                        "the first and must be 0 or more";
  const char *nul_msg = "launch of 'acc': repeat is 2 but repeat_ms is NULL; pass an array of 2 "
                        "doubles for the times of the timed launches";
  for (int rt = 0; rt < 3; rt++) {
    const char *name = rt == 0 ? "OpenCL" : rt == 1 ? "CUDA" : "HIP";
    for (int c = 0; c < 2; c++) {
      const tc_launch *l = c ? &nul : &neg;
      tc_str_clear(&err);
      tc_status st;
      if (rt == 0)
        st = tc_cl_run(cl, acc_src, "acc", bufs, 2, l, NULL, &err);
      else if (rt == 1)
        st = tc_cuda_run("not compiled", "acc", "sm_90a", bufs, 2, l, NULL, &err);
      else
        st = tc_hip_run("not compiled", "acc", NULL, bufs, 2, l, NULL, &err);
      TC_CHECK(st == TC_ERR_ARGUMENT, "%s, repeat %d: %s: %s", name, l->repeat,
               tc_status_name(st), tc_str_cstr(&err));
      TC_CHECK_STR(tc_str_cstr(&err), c ? nul_msg : neg_msg);
    }
  }
  for (int i = 0; i < 64; i++) TC_CHECK(out[i] == 7, "out[%d] = %g: a launch ran", i, out[i]);
  TC_CHECK(times[0] == -1 && times[1] == -1, "repeat -1 wrote repeat_ms");
  tc_cl_close(cl);
  tc_str_free(&err);
}

static void test_cl_error_names(void) {
  TC_CHECK_STR(tc_cl_error_name(-54), "CL_INVALID_WORK_GROUP_SIZE");
  TC_CHECK_STR(tc_cl_error_name(-11), "CL_BUILD_PROGRAM_FAILURE");
  TC_CHECK_STR(tc_cl_error_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
  TC_CHECK_STR(tc_cl_error_name(-12345), "unknown OpenCL error");
}

/* ---- CUDA ---------------------------------------------------------------- */

static const char *cuda_axpy_src =
    "extern \"C\" __global__ void axpy(const float *x, float *y, const float *a,\n"
    "                                  const int *n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n[0]) y[i] = a[0] * x[i] + y[i];\n"
    "}\n";

/* Returns 1 when NVRTC loads; otherwise sets *why. */
static void test_cuda_compile(void) {
  tc_str err;
  tc_str_init(&err);
  if (!nvrtc_loads(&err)) {
    printf("  (%s)\n", tc_str_cstr(&err));
    tc_str_free(&err);
    TC_SKIP("NVRTC cannot be loaded");
  }
  const char *archs[] = {"sm_80", "sm_90a", "compute_80"};
  const char *targets[] = {".target sm_80", ".target sm_90a", ".target sm_80"};
  for (int i = 0; i < 3; i++) {
    char *ptx = NULL;
    tc_str_clear(&err);
    tc_status st = tc_cuda_compile(cuda_axpy_src, archs[i], &ptx, &err);
    TC_CHECK(st == TC_OK && ptx, "%s: %s", archs[i], tc_str_cstr(&err));
    if (ptx) {
      TC_CHECK(strstr(ptx, targets[i]) != NULL, "%s: PTX lacks %s", archs[i],
               targets[i]);
      TC_CHECK(strstr(ptx, ".entry axpy") != NULL, "%s: PTX lacks the entry",
               archs[i]);
    }
    free(ptx);
  }
  tc_str_free(&err);
}

static void test_cuda_compile_errors(void) {
  tc_str err;
  tc_str_init(&err);
  char *ptx = NULL;
  tc_status st = tc_cuda_compile(cuda_axpy_src, "sm80", &ptx, &err);
  TC_CHECK_EQ_INT(st, TC_ERR_ARGUMENT);
  TC_CHECK(has(&err, "'sm80'"), "message: %s", tc_str_cstr(&err));
  TC_CHECK(ptx == NULL, "ptx set on failure");
  tc_str_clear(&err);
  if (!nvrtc_loads(&err)) {
    tc_str_free(&err);
    TC_SKIP("NVRTC cannot be loaded");
  }
  tc_str_clear(&err);
  st = tc_cuda_compile("extern \"C\" __global__ void k(float *x) {\n"
                       "  x[0] = undefined_thing_42 +;\n}\n",
                       "sm_90a", &ptx, &err);
  TC_CHECK_EQ_INT(st, TC_ERR_COMPILE);
  TC_CHECK(ptx == NULL, "ptx set on failure");
  TC_CHECK(has(&err, "NVRTC compilation for sm_90a failed"), "message: %s",
           tc_str_cstr(&err));
  TC_CHECK(has(&err, "undefined_thing_42"), "log lacks the identifier: %s",
           tc_str_cstr(&err));
  tc_str_free(&err);
}

static void test_cuda_describe(void) {
  tc_str out;
  tc_str_init(&out);
  tc_cuda_describe(&out);
  TC_CHECK(has(&out, "CUDA compiler: "), "%s", tc_str_cstr(&out));
  TC_CHECK(has(&out, "CUDA driver: "), "%s", tc_str_cstr(&out));
  tc_str_free(&out);
}

static void test_cuda_run(void) {
  tc_str msg, err;
  tc_str_init(&msg);
  tc_str_init(&err);
  int avail = tc_cuda_available(&msg);
  enum { N = 1000 };
  float x[N], y[N], ref[N], a = 1.5f;
  int n = N;
  for (int i = 0; i < N; i++) {
    x[i] = (float)i;
    y[i] = (float)(N - i);
    ref[i] = a * x[i] + y[i];
  }
  tc_rt_buffer bufs[4] = {{x, sizeof x, 0}, {y, sizeof y, 1}, {&a, sizeof a, 0},
                          {&n, sizeof n, 0}};
  /* y = a * x + y reads what it writes: with 3 timed repeats (40 crosses
   * the batch of 32 launches) y must still be one launch's result */
  double times[40];
  const int repeats[3] = {0, 3, 40};
  for (int c = 0; c < 3; c++) {
    int rep = repeats[c];
    for (int i = 0; i < N; i++) y[i] = (float)(N - i);
    for (int i = 0; i < 40; i++) times[i] = -1;
    tc_launch l = {.grid = {16, 1, 1}, .block = {64, 1, 1}, .repeat = rep,
                   .repeat_ms = rep ? times : NULL};
    double ms = -1;
    tc_str_clear(&err);
    tc_status st = tc_cuda_run(cuda_axpy_src, "axpy", NULL, bufs, 4, &l, &ms, &err);
    if (!avail) {
      TC_CHECK(starts_with(&msg, "no CUDA device: "), "message: %s",
               tc_str_cstr(&msg));
      TC_CHECK_EQ_INT(st, TC_ERR_NO_DEVICE);
      TC_CHECK(starts_with(&err, "no CUDA device: "), "message: %s",
               tc_str_cstr(&err));
      TC_CHECK_STR(tc_str_cstr(&err), tc_str_cstr(&msg));
      for (int i = 0; i < rep; i++)
        TC_CHECK(times[i] == 0, "repeat_ms[%d] = %g without a device", i, times[i]);
    } else {
      TC_CHECK(st == TC_OK, "repeat %d: run: %s", rep, tc_str_cstr(&err));
      int bad = 0;
      for (int i = 0; i < N; i++)
        if (fabsf(y[i] - ref[i]) > 1e-4f) bad++;
      TC_CHECK(bad == 0, "repeat %d: %d results differ from one launch's", rep, bad);
      TC_CHECK(ms >= 0, "ms = %g", ms);
      for (int i = 0; i < rep; i++)
        TC_CHECK(times[i] > 0 && times[i] < 1000, "repeat %d: repeat_ms[%d] = %g", rep, i,
                 times[i]);
    }
  }
  tc_str_free(&msg);
  tc_str_free(&err);
}

static void test_cuda_time_d2d(void) {
  tc_str msg, err;
  tc_str_init(&msg);
  tc_str_init(&err);
  double ms[3] = {-1, -1, -1};
  tc_status st = tc_cuda_time_d2d(0, 3, ms, &err);
  TC_CHECK(st == TC_ERR_ARGUMENT && has(&err, "need bytes > 0, runs >= 1 and ms (got 0 bytes, 3 runs)"),
           "0 bytes: %s: %s", tc_status_name(st), tc_str_cstr(&err));
  tc_str_clear(&err);
  st = tc_cuda_time_d2d(4096, 0, ms, &err);
  TC_CHECK(st == TC_ERR_ARGUMENT && has(&err, "(got 4096 bytes, 0 runs)"), "0 runs: %s: %s",
           tc_status_name(st), tc_str_cstr(&err));
  tc_str_clear(&err);
  st = tc_cuda_time_d2d(4096, 1, NULL, &err);
  TC_CHECK_EQ_INT(st, TC_ERR_ARGUMENT);
  tc_str_clear(&err);
  int avail = tc_cuda_available(&msg);
  st = tc_cuda_time_d2d((size_t)1 << 20, 3, ms, &err);
  if (!avail) {
    TC_CHECK_EQ_INT(st, TC_ERR_NO_DEVICE);
    TC_CHECK_STR(tc_str_cstr(&err), tc_str_cstr(&msg));
    TC_CHECK(starts_with(&err, "no CUDA device: "), "message: %s", tc_str_cstr(&err));
    for (int i = 0; i < 3; i++) TC_CHECK(ms[i] == 0, "ms[%d] = %g without a device", i, ms[i]);
  } else {
    TC_CHECK(st == TC_OK, "d2d: %s", tc_str_cstr(&err));
    for (int i = 0; i < 3; i++) TC_CHECK(ms[i] > 0 && ms[i] < 1000, "ms[%d] = %g", i, ms[i]);
  }
  tc_str_free(&msg);
  tc_str_free(&err);
}

/* The grid of a persistent launch, by hand: at most one block per SM, in
 * whole clusters (at least one), the kernel's own grid when smaller or
 * when the SM count is unknown. */
static void test_persistent_grid(void) {
  static const struct { size_t grid; int sms, multiple; size_t want; } c[] = {
      {2048, 132, 1, 132}, {2048, 114, 2, 114}, {2048, 113, 2, 112}, {10, 132, 2, 10},
      {2048, 0, 2, 2048},  {2048, 1, 2, 2},     {5, 132, 0, 5},      {132, 132, 1, 132},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
    TC_CHECK(tc_launch_persistent_grid(c[i].grid, c[i].sms, c[i].multiple) == c[i].want,
             "grid %zu, %d SMs, multiple %d: %zu, want %zu", c[i].grid, c[i].sms, c[i].multiple,
             tc_launch_persistent_grid(c[i].grid, c[i].sms, c[i].multiple), c[i].want);
}

int main(void) {
  TC_RUN(test_cl_list_devices);
  TC_RUN(test_cl_open_default_is_pocl);
  TC_RUN(test_cl_selectors);
  TC_RUN(test_cl_bad_selector);
  TC_RUN(test_cl_saxpy);
  TC_RUN(test_cl_2d_launch_and_empty_buffer);
  TC_RUN(test_cl_compile_error);
  TC_RUN(test_cl_bad_kernel_name_and_args);
  TC_RUN(test_cl_work_group_too_large);
  TC_RUN(test_cl_repeat);
  TC_RUN(test_repeat_errors);
  TC_RUN(test_persistent_grid);
  TC_RUN(test_cl_error_names);
  TC_RUN(test_cuda_compile);
  TC_RUN(test_cuda_compile_errors);
  TC_RUN(test_cuda_describe);
  TC_RUN(test_cuda_run);
  TC_RUN(test_cuda_time_d2d);
  TC_MAIN_END();
}
