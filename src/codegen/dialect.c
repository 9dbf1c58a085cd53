/* dialect.c - the dialect each target is printed in (tc_dialect_for). */
#include "dialect.h"

const tc_dialect *tc_dialect_for(tc_target target) {
  switch (target) {
    case TC_TARGET_OPENCL: return &tc_dialect_opencl;
    case TC_TARGET_CUDA: return &tc_dialect_cuda;
    case TC_TARGET_HIP: return &tc_dialect_hip;
  }
  return NULL;
}
