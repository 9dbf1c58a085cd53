/* device_test_util.h - what the tests that run or compile kernels ask of
 * the machine: an OpenCL device (PoCL here) and NVRTC; each says why not
 * when it is missing, so the tests can check the text only. */
#ifndef TC_DEVICE_TEST_UTIL_H
#define TC_DEVICE_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtime/runtime.h"

/* 1 if tc_cuda_compile can run (why gets the reason when not). */
static inline int nvrtc_loads(tc_str *why) {
  char *ptx = NULL;
  tc_status st = tc_cuda_compile("extern \"C\" __global__ void k() {}", "sm_80", &ptx, why);
  free(ptx);
  return st != TC_ERR_UNSUPPORTED;
}

/* The default OpenCL device, or NULL after printing why there is none. */
static inline tc_cl *open_cl_or_null(void) {
  tc_cl *cl = NULL;
  tc_str e;
  tc_str_init(&e);
  if (tc_cl_open(NULL, &cl, &e) != TC_OK) {
    printf("  (no OpenCL device: %s)\n", tc_str_cstr(&e));
    cl = NULL;
  }
  tc_str_free(&e);
  return cl;
}

/* f compiled for CUDA and HIP (default arches) builds where NVRTC /
 * hipcc exist (a skip line where they do not); include test.h first. */
static inline void builds_on_cuda_and_hip(tc_fusion *f, const char *name) {
  for (int t = TC_TARGET_CUDA; t <= TC_TARGET_HIP; t++) {
    tc_compile_options co = {(tc_target)t, NULL, name};
    tc_status st;
    tc_kernel *dk = tc_compile(f, &co, &st);
    TC_CHECK(dk != NULL, "%s: %s", tc_target_name((tc_target)t), tc_fusion_error(f));
    if (!dk) continue;
    st = tc_kernel_build(dk, NULL);
    if (st == TC_ERR_UNSUPPORTED) printf("  skip %s build: %s\n", tc_target_name((tc_target)t), tc_kernel_error(dk));
    else TC_CHECK(st == TC_OK, "%s does not build: %s", tc_target_name((tc_target)t), tc_kernel_error(dk));
    tc_kernel_free(dk);
  }
}

/* A kernel cache of its own for a test: dir (a mkdtemp template such as
 * "/tmp/tilec-x.XXXXXX") made and named in TILEC_CACHE_DIR; the end
 * clears and removes it. */
static inline int scratch_cache_begin(char *dir) {
  if (!mkdtemp(dir)) return 0;
  setenv("TILEC_CACHE_DIR", dir, 1);
  return 1;
}
static inline void scratch_cache_end(const char *dir) {
  tc_cache_clear(NULL);
  rmdir(dir);
  unsetenv("TILEC_CACHE_DIR");
}

#endif
