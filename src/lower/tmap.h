/* tmap.h - the tensor map a kernel with bulk tensor copies (TMA) takes per
 * global tensor they touch: what the lowering decides (box, swizzle) and
 * codegen describes (tc_cu_tma_maps), and what the CUDA runtime encodes
 * (runtime.h, tmap.c). */
#ifndef TC_TMAP_H
#define TC_TMAP_H

#include <stdint.h>

#include "tilec/tilec.h"

/* One CUtensorMap kernel argument of a kernel that uses bulk tensor
 * copies (TMA, sm_90+): the CUDA runtime encodes it with
 * cuTensorMapEncodeTiled over the device copy of buffer `buffer` and
 * passes it by value (128 bytes) after the buffers, in the order of the
 * launch's tmaps[].  Dimension 0 is the innermost (contiguous) one.
 * Interleave none, L2 promotion 128B, out-of-bounds elements read as zero
 * (and are not written by stores).  OpenCL ignores tensor maps: its
 * emulation reads the buffers directly. */
typedef struct tc_rt_tmap {
  int buffer;          /* index into the launch's buffers */
  tc_dtype dtype;      /* element type (f32, f16, bf16, i32, i8) */
  int rank;            /* 1 .. 5 */
  uint64_t dims[5];    /* tensor extents, innermost first */
  uint64_t strides[5]; /* byte strides of dims 1 .. rank-1 (strides[0] unused) */
  uint32_t box[5];     /* box extents, innermost first */
  int swizzle;         /* 0 (none), 32, 64 or 128 bytes */
} tc_rt_tmap;

#endif
