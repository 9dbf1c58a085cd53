/* conv_bias.c - the bias passes of `tilec driver -b 1` (conv_bias.h):
 * forward, a fusion of two inputs, y viewed as [outer, K, inner] and the
 * bias [K] broadcast to [1, K, 1], and their sum as the output; backward,
 * dy permuted to [K, outer, inner] and summed over its two last axes.
 * Both scheduled by tc_schedule_auto and compiled for the convolution's
 * target. */
#include "conv_bias.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/base/base.h"
#include "../src/runtime/host.h"

/* Schedules, compiles and runs fusion f (its output `out`, bytes long):
 * args are the inputs then the output; name the kernel's.  TC_OK or a status with err. */
static tc_status run_fusion(tc_fusion *f, const char *what, const char *name, tc_target target,
                            const char *device, const char *arch, void *const *args, double *ms,
                            tc_str *err) {
  tc_status st = tc_schedule_auto(f, target, arch);
  if (st != TC_OK) {
    tc_err_set(err, "scheduling the %s kernel (%s): %s", what, tc_status_name(st),
             tc_fusion_error(f));
    return st;
  }
  tc_compile_options opt = {target, arch, name};
  tc_kernel *k = tc_compile(f, &opt, &st);
  if (!k) {
    tc_err_set(err, "compiling the %s kernel (%s): %s", what, tc_status_name(st),
             tc_fusion_error(f));
    return st;
  }
  if ((st = tc_kernel_run(k, args, device, ms)) != TC_OK)
    tc_err_set(err, "the %s kernel failed (%s): %s", what, tc_status_name(st),
             tc_kernel_error(k));
  tc_kernel_free(k);
  return st;
}

tc_status conv_bias_add(tc_target target, const char *device, const char *arch, tc_dtype dtype,
                        conv_bias_shape s, void *y, const void *bias, double *ms, tc_str *err) {
  if (ms) *ms = 0;
  tc_fusion *f = tc_fusion_new();
  int64_t shape[3] = {s.outer, s.channels, s.inner}, kshape[1] = {s.channels};
  const bool is_new[3] = {true, false, true};
  tc_tensor *ty = tc_input(f, dtype, 3, shape);
  tc_tensor *tb = tc_input(f, dtype, 1, kshape);
  tc_tensor *sum = tc_binary(f, TC_ADD, ty, tc_broadcast(f, tb, 3, is_new));
  tc_status st = TC_ERR_ARGUMENT;
  size_t bytes = (size_t)(s.outer * s.channels * s.inner) * tc_dtype_size(dtype);
  void *out = NULL;
  if (!sum || tc_add_output(f, sum) != TC_OK) {
    tc_err_set(err, "the bias fusion: %s", tc_fusion_error(f));
  } else {
    /* the sum into its own buffer, then back into y */
    out = tc_xmalloc(bytes ? bytes : 1);
    void *args[3] = {y, (void *)bias, out};
    st = run_fusion(f, "bias", "tilec_conv_bias", target, device, arch, args, ms, err);
    if (st == TC_OK) memcpy(y, out, bytes);
  }
  free(out);
  tc_fusion_free(f);
  return st;
}

tc_status conv_bias_grad(tc_target target, const char *device, const char *arch, tc_dtype dtype,
                         conv_bias_shape s, const void *dy, void *db, double *ms, tc_str *err) {
  if (ms) *ms = 0;
  tc_fusion *f = tc_fusion_new();
  int64_t shape[3] = {s.outer, s.channels, s.inner};
  const int perm[3] = {1, 0, 2}, axes[2] = {1, 2};
  tc_tensor *t = tc_reduce(f, TC_REDUCE_SUM, tc_permute(f, tc_input(f, dtype, 3, shape), perm), 2,
                           axes);
  if (t && dtype != TC_F32) t = tc_cast(f, t, dtype); /* 16-bit sums come back as f32 */
  tc_status st = TC_ERR_ARGUMENT;
  if (!t || tc_add_output(f, t) != TC_OK) {
    tc_err_set(err, "the bias-gradient fusion: %s", tc_fusion_error(f));
  } else {
    void *args[2] = {(void *)dy, db};
    st = run_fusion(f, "bias-gradient", "tilec_conv_bias_grad", target, device, arch, args, ms, err);
  }
  tc_fusion_free(f);
  return st;
}

int64_t conv_bias_grad_verify(tc_dtype dtype, conv_bias_shape s, const void *dy, const void *db,
                              double *worst, tc_str *msg) {
  const double u = ldexp(1.0, -24);
  double m = (double)(s.outer * s.inner) + 1;
  double gamma = m * u < 0.5 ? m * u / (1 - m * u) : INFINITY;
  int64_t bad = 0, first = -1;
  double wr = 0, fgot = 0, fwant = 0, fbound = 0;
  for (int64_t c = 0; c < s.channels; c++) {
    double sum = 0, mag = 0;
    for (int64_t o = 0; o < s.outer; o++)
      for (int64_t i = 0; i < s.inner; i++) {
        double v = tc_host_read(dtype, dy, (size_t)((o * s.channels + c) * s.inner + i));
        sum += v;
        mag += fabs(v);
      }
    /* an f32 sum of representable terms: no underflow below 2^-149
     * beyond what the terms have; one rounding to f16 at the end */
    double bound = gamma * mag;
    if (dtype == TC_F16) bound += ldexp(1.0, -11) * (fabs(sum) + bound) + ldexp(1.0, -25);
    double got = tc_host_read(dtype, db, (size_t)c), e = fabs(got - sum);
    if (!(e <= bound)) {
      if (first < 0) first = c, fgot = got, fwant = sum, fbound = bound;
      bad++;
    }
    double r = bound > 0 ? e / bound : (e == 0 ? 0 : INFINITY);
    if (r > wr || r != r) wr = r;
  }
  if (worst) *worst = wr;
  if (bad)
    tc_err_set(msg, "%lld of %lld elements out of bound; first at k %lld: got %.9g, want "
             "%.9g, bound %.3g", (long long)bad, (long long)s.channels, (long long)first, fgot,
             fwant, fbound);
  else
    tc_err_set(msg, "%lld elements within bound", (long long)s.channels);
  return bad;
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
