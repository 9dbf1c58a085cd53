/* conv_bias.h - `tilec driver -b 1`: MIOpenDriver's per-output-channel
 * bias, added to a convolution's result by a second kernel, a pointwise
 * fusion built through the public API (y + broadcast(bias)), and its
 * gradient (the sum of dy over everything but the channel), a reduction
 * fusion. */
#ifndef TILEC_CONV_BIAS_H
#define TILEC_CONV_BIAS_H

#include <stddef.h>
#include <stdint.h>

#include "tilec/tilec.h"
#include "../src/base/base.h"

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
                        conv_bias_shape s, void *y, const void *bias, double *ms, tc_str *err);

/* The same on the host, in double rounded to the dtype once (the
 * reference that MIOpenDriver's dump of the CPU result carries). */
void conv_bias_add_host(tc_dtype dtype, conv_bias_shape s, void *y, const void *bias);

/* db[k] = the sum of dy[o, k, i] over o and i (K elements of the dtype;
 * f16 sums accumulate in f32) through one compiled fusion (a permute and
 * a reduction of its two last axes).  As conv_bias_add. */
tc_status conv_bias_grad(tc_target target, const char *device, const char *arch, tc_dtype dtype,
                         conv_bias_shape s, const void *dy, void *db, double *ms, tc_str *err);

/* Checks db against the sums in double: each within the worst case of
 * an f32 summation of its outer * inner terms in any order (gamma_{M+1}
 * times the sum of their magnitudes, M the term count), plus the final
 * rounding to f16 for f16.  Returns the elements out of bound; *worst
 * gets the largest error as a fraction of its bound; msg a summary. */
int64_t conv_bias_grad_verify(tc_dtype dtype, conv_bias_shape s, const void *dy, const void *db,
                              double *worst, tc_str *msg);

#endif
