/* device_test_util.h - what the tests that run or compile kernels ask of
 * the machine: an OpenCL device (PoCL here) and NVRTC; each says why not
 * when it is missing, so the tests can check the text only. */
#ifndef TC_DEVICE_TEST_UTIL_H
#define TC_DEVICE_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>

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

#endif
