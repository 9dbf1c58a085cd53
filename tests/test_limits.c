/* test_limits.c - kernels over a limit of their target are refused with a
 * status and a message naming both numbers, never run into the device:
 * shared memory over the OpenCL device's local memory (PoCL aborted the
 * whole process from a worker thread), and at the limit the kernel runs;
 * blocks over the OpenCL device's work-group size, before the launch;
 * blocks over 1024 threads and shared memory over the GPU's, at compile
 * time for CUDA and HIP (whose z extent may be 1024, CUDA's 64). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "device_test_util.h"
#include "tilec/tilec.h"

static int has(const char *s, const char *needle) { return s && strstr(s, needle) != NULL; }

/* T0 [n] f32 -> T1 = set(T0) in shared memory -> T2 = set(T1) (output),
 * each split by `threads` with the inner part on TIDx. */
static tc_fusion *shared_copy(int64_t n, int64_t threads) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[1] = {n};
  tc_tensor *in = tc_input(f, TC_F32, 1, shape);
  tc_tensor *sh = tc_set(f, in), *out = tc_set(f, sh);
  tc_add_output(f, out);
  tc_set_memory_type(sh, TC_MEM_SHARED);
  tc_tensor *ts[2] = {sh, out};
  for (int i = 0; i < 2; i++) {
    tc_split(ts[i], 0, threads, 1);
    tc_parallelize(ts[i], 1, TC_TIDX);
  }
  return f;
}

static tc_kernel *compile_for(tc_fusion *f, tc_target target, const char *arch, tc_status *st) {
  tc_compile_options o = {target, arch, NULL};
  return tc_compile(f, &o, st);
}

/* The default OpenCL device's local memory size, max work-group size and
 * name; 0 when there is no device. */
static int device_limits(uint64_t *local_mem, size_t *max_wg, char *name, size_t cap) {
  tc_cl *cl = open_cl_or_null();
  if (!cl) return 0;
  *local_mem = tc_cl_local_mem_size(cl);
  *max_wg = tc_cl_max_work_group_size(cl);
  snprintf(name, cap, "%s", tc_cl_device_name(cl));
  tc_cl_close(cl);
  return 1;
}

/* Compiles shared_copy(n, threads) for OpenCL and runs it: *equal is 1
 * when the output equals the input.  The kernel's message goes to msg. */
static tc_status run_copy(int64_t n, int64_t threads, int *equal, char *msg, size_t cap) {
  tc_fusion *f = shared_copy(n, threads);
  tc_status st;
  tc_kernel *k = compile_for(f, TC_TARGET_OPENCL, NULL, &st);
  *equal = 0;
  if (!k) {
    snprintf(msg, cap, "compile: %s", tc_fusion_error(f));
    tc_fusion_free(f);
    return st;
  }
  float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  for (int64_t i = 0; i < n; i++) x[i] = (float)(i % 1000) - 500.0f, y[i] = -1.0f;
  void *args[2] = {x, y};
  st = tc_kernel_run(k, args, NULL, NULL);
  *equal = st == TC_OK && memcmp(x, y, (size_t)n * sizeof *x) == 0;
  snprintf(msg, cap, "%s", tc_kernel_error(k));
  free(x), free(y);
  tc_kernel_free(k);
  tc_fusion_free(f);
  return st;
}

/* More shared memory than CL_DEVICE_LOCAL_MEM_SIZE: PoCL 3.1 enqueues the
 * kernel and then asserts in a worker thread (its own limit is the
 * device's plus a 128 KiB margin), aborting the caller.  256 KiB over the
 * limit is past that margin. */
static void test_cl_shared_over_device(void) {
  uint64_t lim;
  size_t max_wg;
  char dev[512], msg[4096];
  if (!device_limits(&lim, &max_wg, dev, sizeof dev)) TC_SKIP("no OpenCL device");
  if (lim == 0 || lim > (64u << 20)) TC_SKIP("local memory size %llu", (unsigned long long)lim);
  int64_t n = (int64_t)(lim / 4) + 65536; /* a multiple of the 128 threads */
  int equal;
  tc_status st = run_copy(n, 128, &equal, msg, sizeof msg);
  char need[32], have[32];
  snprintf(need, sizeof need, "%lld bytes", (long long)n * 4);
  snprintf(have, sizeof have, "has %llu", (unsigned long long)lim);
  TC_CHECK(st == TC_ERR_RUNTIME, "status %s: %s", tc_status_name(st), msg);
  TC_CHECK(has(msg, need) && has(msg, have) && has(msg, "CL_DEVICE_LOCAL_MEM_SIZE") &&
               has(msg, dev) && has(msg, "local (shared) memory") && has(msg, "inline"),
           "message: %s", msg);
}

/* Exactly the device's local memory is allowed, and runs right. */
static void test_cl_shared_at_device_limit(void) {
  uint64_t lim;
  size_t max_wg;
  char dev[512], msg[4096];
  if (!device_limits(&lim, &max_wg, dev, sizeof dev)) TC_SKIP("no OpenCL device");
  if (lim == 0 || lim % 512 || lim > (64u << 20)) TC_SKIP("local memory size %llu", (unsigned long long)lim);
  int64_t n = (int64_t)(lim / 4); /* a multiple of the 128 threads */
  int equal;
  tc_status st = run_copy(n, 128, &equal, msg, sizeof msg);
  TC_CHECK(st == TC_OK, "status %s: %s", tc_status_name(st), msg);
  TC_CHECK(equal, "the copy through %lld bytes of shared memory differs", (long long)n * 4);
}

/* A block over the device's work-group size: refused before the launch,
 * naming both sizes. */
static void test_cl_block_over_device(void) {
  uint64_t lim;
  size_t max_wg;
  char dev[512], msg[4096];
  if (!device_limits(&lim, &max_wg, dev, sizeof dev)) TC_SKIP("no OpenCL device");
  if (max_wg == 0 || max_wg > (1u << 20)) TC_SKIP("max work-group size %zu", max_wg);
  int64_t threads = (int64_t)max_wg * 2;
  int equal;
  tc_status st = run_copy(threads, threads, &equal, msg, sizeof msg);
  char items[64], wg[64];
  snprintf(items, sizeof items, "has %lld work-items", (long long)threads);
  snprintf(wg, sizeof wg, "work-group size %zu", max_wg);
  TC_CHECK(st == TC_ERR_RUNTIME, "status %s: %s", tc_status_name(st), msg);
  TC_CHECK(has(msg, items) && has(msg, wg) && has(msg, "fewer threads") && has(msg, dev),
           "message: %s", msg);
}

/* T0 [z, 2, n] -> T1 (output), axes bound to TIDz, TIDy, TIDx. */
static tc_fusion *block3(int64_t z, int64_t n) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[3] = {z, 2, n};
  tc_tensor *out = tc_set(f, tc_input(f, TC_F32, 3, shape));
  tc_add_output(f, out);
  tc_parallelize(out, 0, TC_TIDZ);
  tc_parallelize(out, 1, TC_TIDY);
  tc_parallelize(out, 2, TC_TIDX);
  return f;
}

/* CUDA and HIP: 1024 threads per block, refused at compile time; z up to
 * 64 on CUDA, up to the thread limit on HIP. */
static void test_gpu_block_limits(void) {
  const tc_target targets[2] = {TC_TARGET_CUDA, TC_TARGET_HIP};
  for (int i = 0; i < 2; i++) {
    const char *name = tc_target_name(targets[i]);
    tc_fusion *f = block3(1, 1024); /* 2048 threads */
    tc_status st;
    tc_kernel *k = compile_for(f, targets[i], NULL, &st);
    const char *msg = tc_fusion_error(f);
    TC_CHECK(!k && st == TC_ERR_LOWER, "%s: 2048 threads: %s: %s", name, tc_status_name(st), msg);
    TC_CHECK(has(msg, "2048 threads") && has(msg, "1024 x 2 x 1") && has(msg, "at most 1024") &&
                 has(msg, name),
             "%s: message: %s", name, msg);
    tc_kernel_free(k);
    tc_fusion_free(f);

    f = block3(1, 512); /* exactly 1024 */
    k = compile_for(f, targets[i], NULL, &st);
    TC_CHECK(k && st == TC_OK, "%s: 1024 threads: %s", name, tc_fusion_error(f));
    tc_kernel_free(k);
    tc_fusion_free(f);

    f = block3(128, 4); /* TIDz 128, 1024 threads */
    k = compile_for(f, targets[i], NULL, &st);
    if (targets[i] == TC_TARGET_CUDA)
      TC_CHECK(!k && st == TC_ERR_LOWER && has(tc_fusion_error(f), "TIDz extent 128") &&
                   has(tc_fusion_error(f), "64"),
               "CUDA TIDz 128: %s: %s", tc_status_name(st), tc_fusion_error(f));
    else
      TC_CHECK(k && st == TC_OK, "HIP TIDz 128 (1024 threads): %s", tc_fusion_error(f));
    tc_kernel_free(k);
    tc_fusion_free(f);
  }
}

/* Shared memory per block: CUDA 227 KiB, HIP 64 KiB (160 KiB on gfx950),
 * each named with its own limit. */
static void test_gpu_shared_limits(void) {
  const struct {
    tc_target target;
    const char *arch;
    int64_t limit;
  } cases[] = {{TC_TARGET_CUDA, "sm_90a", 232448}, {TC_TARGET_HIP, "gfx90a", 65536},
               {TC_TARGET_HIP, "gfx950", 163840}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    for (int over = 0; over < 2; over++) {
      /* f32 elements: the limit, or 1024 more (and past CUDA's limit for HIP) */
      int64_t n = cases[i].limit / 4 + (over ? (cases[i].target == TC_TARGET_HIP ? 60000 : 1024) : 0);
      tc_fusion *f = shared_copy(n, 256);
      tc_status st;
      tc_kernel *k = compile_for(f, cases[i].target, cases[i].arch, &st);
      const char *msg = tc_fusion_error(f);
      if (!over) {
        TC_CHECK(k && st == TC_OK, "%s: %lld bytes: %s", cases[i].arch, (long long)n * 4, msg);
      } else {
        char need[32], lim[32];
        /* the split by 256 allocates whole rows of 256 */
        snprintf(need, sizeof need, "%lld bytes", (long long)((n + 255) / 256 * 256 * 4));
        snprintf(lim, sizeof lim, "%lld", (long long)cases[i].limit);
        TC_CHECK(!k && st == TC_ERR_LOWER, "%s: %s: %s", cases[i].arch, tc_status_name(st), msg);
        TC_CHECK(has(msg, need) && has(msg, lim) && has(msg, "shared memory"), "%s: message: %s",
                 cases[i].arch, msg);
      }
      tc_kernel_free(k);
      tc_fusion_free(f);
    }
  }
}

int main(void) {
  TC_RUN(test_cl_shared_over_device);
  TC_RUN(test_cl_shared_at_device_limit);
  TC_RUN(test_cl_block_over_device);
  TC_RUN(test_gpu_block_limits);
  TC_RUN(test_gpu_shared_limits);
  TC_MAIN_END();
}
