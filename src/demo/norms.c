/* norms.c - softmax, RMSNorm and LayerNorm as fusions (norms.h). */
#include "norms.h"

const char *tc_norm_name(tc_norm_kind kind) {
  static const char *names[TC_NORM_COUNT] = {"softmax", "rmsnorm", "layernorm"};
  return kind >= 0 && kind < TC_NORM_COUNT ? names[kind] : "?";
}

/* 1 / sqrt(v + eps) */
static tc_tensor *rsqrt_eps(tc_fusion *f, tc_tensor *v) {
  return tc_unary(f, TC_RECIPROCAL, tc_unary(f, TC_SQRT, tc_binary_scalar(f, TC_ADD, v, 1e-5)));
}

tc_tensor *tc_norm_build(tc_fusion *f, tc_norm_kind kind, tc_dtype t, int64_t rows, int64_t cols) {
  int64_t shape[2] = {rows, cols};
  tc_tensor *in = tc_input(f, t, 2, shape);
  if (!in) return NULL;
  tc_tensor *x = t == TC_F32 ? in : tc_cast(f, in, TC_F32);
  int last = 1;
  double inv = 1.0 / (double)cols;
  tc_tensor *y = NULL;
  switch (kind) {
    case TC_NORM_SOFTMAX: {
      tc_tensor *e = tc_unary(f, TC_EXP, tc_binary(f, TC_SUB, x, tc_reduce(f, TC_REDUCE_MAX, x, 1, &last)));
      y = tc_binary(f, TC_DIV, e, tc_reduce(f, TC_REDUCE_SUM, e, 1, &last));
      break;
    }
    case TC_NORM_RMSNORM: {
      tc_tensor *ss = tc_reduce(f, TC_REDUCE_SUM, tc_binary(f, TC_MUL, x, x), 1, &last);
      y = tc_binary(f, TC_MUL, x, rsqrt_eps(f, tc_binary_scalar(f, TC_MUL, ss, inv)));
      break;
    }
    case TC_NORM_LAYERNORM: {
      tc_tensor *mean = tc_binary_scalar(f, TC_MUL, tc_reduce(f, TC_REDUCE_SUM, x, 1, &last), inv);
      tc_tensor *xc = tc_binary(f, TC_SUB, x, mean);
      tc_tensor *ss = tc_reduce(f, TC_REDUCE_SUM, tc_binary(f, TC_MUL, xc, xc), 1, &last);
      y = tc_binary(f, TC_MUL, xc, rsqrt_eps(f, tc_binary_scalar(f, TC_MUL, ss, inv)));
      break;
    }
    default: return NULL;
  }
  return y && t != TC_F32 ? tc_cast(f, y, t) : y;
}
