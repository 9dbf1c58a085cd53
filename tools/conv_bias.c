/* conv_bias.c - the bias pass of `tilec driver -b 1` (conv_bias.h): a
 * fusion of two inputs, y viewed as [outer, K, inner] and the bias [K]
 * broadcast to [1, K, 1], and their sum as the output, scheduled by
 * tc_schedule_auto and compiled for the convolution's target. */
#include "conv_bias.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/base/base.h"
#include "../src/runtime/host.h"

tc_status conv_bias_add(tc_target target, const char *device, const char *arch, tc_dtype dtype,
                        conv_bias_shape s, void *y, const void *bias, double *ms, char *err,
                        size_t cap) {
  if (ms) *ms = 0;
  tc_fusion *f = tc_fusion_new();
  int64_t shape[3] = {s.outer, s.channels, s.inner}, kshape[1] = {s.channels};
  const bool is_new[3] = {true, false, true};
  tc_tensor *ty = tc_input(f, dtype, 3, shape);
  tc_tensor *tb = tc_input(f, dtype, 1, kshape);
  tc_tensor *sum = tc_binary(f, TC_ADD, ty, tc_broadcast(f, tb, 3, is_new));
  tc_status st = TC_ERR_ARGUMENT;
  tc_kernel *k = NULL;
  size_t bytes = (size_t)(s.outer * s.channels * s.inner) * tc_dtype_size(dtype);
  void *out = NULL;
  if (!sum) {
    snprintf(err, cap, "the bias fusion: %s", tc_fusion_error(f));
    goto done;
  }
  tc_add_output(f, sum);
  if ((st = tc_schedule_auto(f, target, arch)) != TC_OK) {
    snprintf(err, cap, "scheduling the bias kernel (%s): %s", tc_status_name(st),
             tc_fusion_error(f));
    goto done;
  }
  tc_compile_options opt = {target, arch, "tilec_conv_bias"};
  if (!(k = tc_compile(f, &opt, &st))) {
    snprintf(err, cap, "compiling the bias kernel (%s): %s", tc_status_name(st),
             tc_fusion_error(f));
    goto done;
  }
  /* the sum into its own buffer, then back into y */
  out = tc_xmalloc(bytes ? bytes : 1);
  void *args[3] = {y, (void *)bias, out};
  if ((st = tc_kernel_run(k, args, device, ms)) != TC_OK) {
    snprintf(err, cap, "the bias kernel failed (%s): %s", tc_status_name(st), tc_kernel_error(k));
    goto done;
  }
  memcpy(y, out, bytes);
done:
  free(out);
  tc_kernel_free(k);
  tc_fusion_free(f);
  return st;
}

void conv_bias_add_host(tc_dtype dtype, conv_bias_shape s, void *y, const void *bias) {
  for (int64_t o = 0; o < s.outer; o++)
    for (int64_t c = 0; c < s.channels; c++)
      for (int64_t i = 0; i < s.inner; i++) {
        size_t at = (size_t)((o * s.channels + c) * s.inner + i);
        tc_host_write(dtype, y, at,
                      tc_host_read(dtype, y, at) + tc_host_read(dtype, bias, (size_t)c));
      }
}
