/* nvrtc_test_util.h - whether NVRTC can be loaded here, for the tests that
 * compile CUDA source (they check the text only where it cannot). */
#ifndef TC_NVRTC_TEST_UTIL_H
#define TC_NVRTC_TEST_UTIL_H

#include <stdlib.h>

#include "runtime/runtime.h"

/* 1 if tc_cuda_compile can run (why gets the reason when not). */
static inline int nvrtc_loads(tc_str *why) {
  char *ptx = NULL;
  tc_status st = tc_cuda_compile("extern \"C\" __global__ void k() {}", "sm_80", &ptx, why);
  free(ptx);
  return st != TC_ERR_UNSUPPORTED;
}

#endif
