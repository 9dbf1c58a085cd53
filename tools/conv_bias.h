/* conv_bias.h - `tilec driver -b 1`: MIOpenDriver's per-output-channel
 * bias, added to a convolution's result by a second kernel, a pointwise
 * fusion built through the public API (y + broadcast(bias)). */
#ifndef TILEC_CONV_BIAS_H
#define TILEC_CONV_BIAS_H

#include <stddef.h>
#include <stdint.h>

#include "tilec/tilec.h"

/* A tensor in memory seen as [outer, channels, inner]: the dims before
 * the channel dim in memory order, the channel dim, the dims after it. */
typedef struct conv_bias_shape {
  int64_t outer, channels, inner;
} conv_bias_shape;

/* y[o, k, i] += bias[k] for every element of y (dtype f32 or f16) through
 * one compiled fusion on target (device: the OpenCL device selector;
 * arch: the CUDA architecture).  *ms gets the kernel time.  TC_OK, or a
 * status with one line in err. */
tc_status conv_bias_add(tc_target target, const char *device, const char *arch, tc_dtype dtype,
                        conv_bias_shape s, void *y, const void *bias, double *ms, char *err,
                        size_t cap);

/* The same on the host, in double rounded to the dtype once (the
 * reference that MIOpenDriver's dump of the CPU result carries). */
void conv_bias_add_host(tc_dtype dtype, conv_bias_shape s, void *y, const void *bias);

#endif
