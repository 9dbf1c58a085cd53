/* norms.c - softmax, RMSNorm and LayerNorm as fusions (norms.h). */
#include "norms.h"

const char *tc_norm_name(tc_norm_kind kind) {
  static const char *names[TC_NORM_COUNT] = {"softmax", "rmsnorm", "layernorm", "softmax_bwd",
                                             "rmsnorm_bwd", "xent"};
  return kind >= 0 && kind < TC_NORM_COUNT ? names[kind] : "?";
}

/* 1 / sqrt(v + eps), eps the scalar input (made on first use) */
static tc_tensor *rsqrt_eps(tc_fusion *f, tc_tensor *v, tc_tensor **eps) {
  if (!*eps) *eps = tc_scalar_input(f, "eps", TC_F32);
  return tc_unary(f, TC_RECIPROCAL, tc_unary(f, TC_SQRT, tc_binary(f, TC_ADD, v, *eps)));
}

bool tc_norm_has_eps(tc_norm_kind kind) {
  return kind == TC_NORM_RMSNORM || kind == TC_NORM_LAYERNORM || kind == TC_NORM_RMSNORM_BWD;
}

int tc_norm_inputs(tc_norm_kind kind) {
  return kind == TC_NORM_SOFTMAX_BWD || kind == TC_NORM_RMSNORM_BWD || kind == TC_NORM_XENT ? 2 : 1;
}

int64_t tc_norm_out_cols(tc_norm_kind kind, int64_t cols) { return kind == TC_NORM_XENT ? 1 : cols; }

/* An input of dtype t and shape [rows, cols]; rows -d (d >= 1): the size
 * variable M, a multiple of d; cols -d: N likewise.  M alone takes the
 * largest bound that keeps the input under 2^31 elements (tc_input_sym's
 * -1); with N the first input (again false) bounds each variable by 2^31
 * over the fixed extent beside it, or 46340 beside the other variable,
 * later ones name them again with -1. */
static tc_tensor *input(tc_fusion *f, tc_dtype t, const int64_t *shape, bool again) {
  if (shape[0] > 0 && shape[1] > 0) return tc_input(f, t, 2, shape);
  if (shape[1] > 0) {
    int64_t sym[2] = {-1, shape[1]};
    return tc_input_sym(f, t, 2, sym, "M", -shape[0]);
  }
  const char *names[2] = {shape[0] < 0 ? "M" : NULL, "N"};
  int64_t div[2] = {shape[0] < 0 ? -shape[0] : 1, -shape[1]}, ext[2];
  for (int i = 0; i < 2; i++) {
    int64_t other = shape[1 - i];
    int64_t bound = other < 0 ? 46340 : ((int64_t)1 << 31) / other;
    ext[i] = shape[i] > 0 ? shape[i] : again ? -1 : bound - bound % div[i];
  }
  return tc_input_syms(f, t, 2, ext, names, div);
}

/* sum / cols: the mean over a row; over N (cols < 0) divided by N's
 * value at launch */
static tc_tensor *row_mean(tc_fusion *f, tc_tensor *sum, int64_t cols) {
  if (cols > 0) return tc_binary_scalar(f, TC_MUL, sum, 1.0 / (double)cols);
  return tc_binary(f, TC_DIV, sum, tc_size_var_value(f, "N"));
}

/* An input of dtype t, as f32. */
static tc_tensor *input_f32(tc_fusion *f, tc_dtype t, const int64_t *shape) {
  tc_tensor *in = input(f, t, shape, true);
  return !in || t == TC_F32 ? in : tc_cast(f, in, TC_F32);
}

tc_tensor *tc_norm_build(tc_fusion *f, tc_norm_kind kind, tc_dtype t, int64_t rows, int64_t cols) {
  int64_t shape[2] = {rows, cols};
  tc_tensor *in = input(f, t, shape, false);
  if (!in) return NULL;
  tc_tensor *x = t == TC_F32 ? in : tc_cast(f, in, TC_F32);
  int last = 1;
  tc_tensor *y = NULL, *eps = NULL;
  switch (kind) {
    case TC_NORM_SOFTMAX: {
      tc_tensor *e = tc_unary(f, TC_EXP, tc_binary(f, TC_SUB, x, tc_reduce(f, TC_REDUCE_MAX, x, 1, &last)));
      y = tc_binary(f, TC_DIV, e, tc_reduce(f, TC_REDUCE_SUM, e, 1, &last));
      break;
    }
    case TC_NORM_RMSNORM: {
      tc_tensor *ss = tc_reduce(f, TC_REDUCE_SUM, tc_binary(f, TC_MUL, x, x), 1, &last);
      y = tc_binary(f, TC_MUL, x, rsqrt_eps(f, row_mean(f, ss, cols), &eps));
      break;
    }
    case TC_NORM_LAYERNORM: { /* mean and variance in one pass (Welford) */
      tc_tensor *mean, *var;
      if (!tc_welford(f, x, 1, &last, &mean, &var)) return NULL;
      y = tc_binary(f, TC_MUL, tc_binary(f, TC_SUB, x, mean), rsqrt_eps(f, var, &eps));
      break;
    }
    case TC_NORM_SOFTMAX_BWD: { /* x is y here */
      tc_tensor *dy = input_f32(f, t, shape);
      tc_tensor *s = tc_reduce(f, TC_REDUCE_SUM, tc_binary(f, TC_MUL, dy, x), 1, &last);
      y = tc_binary(f, TC_MUL, x, tc_binary(f, TC_SUB, dy, s));
      break;
    }
    case TC_NORM_RMSNORM_BWD: {
      tc_tensor *dy = input_f32(f, t, shape);
      tc_tensor *ss = tc_reduce(f, TC_REDUCE_SUM, tc_binary(f, TC_MUL, x, x), 1, &last);
      tc_tensor *r = rsqrt_eps(f, row_mean(f, ss, cols), &eps);
      tc_tensor *m = row_mean(f, tc_reduce(f, TC_REDUCE_SUM, tc_binary(f, TC_MUL, dy, x), 1, &last), cols);
      tc_tensor *r3m = tc_binary(f, TC_MUL, tc_binary(f, TC_MUL, tc_binary(f, TC_MUL, r, r), r), m);
      y = tc_binary(f, TC_SUB, tc_binary(f, TC_MUL, r, dy), tc_binary(f, TC_MUL, x, r3m));
      break;
    }
    case TC_NORM_XENT: {
      /* over M: x's bound, so that both name one variable alike */
      int64_t lshape[2] = {rows < 0 ? -1 : rows, 1};
      tc_tensor *label = rows < 0 ? tc_input_sym(f, TC_I32, 2, lshape, "M", -rows) : tc_input(f, TC_I32, 2, lshape);
      tc_tensor *mx = tc_reduce(f, TC_REDUCE_MAX, x, 1, &last);
      tc_tensor *s = tc_reduce(f, TC_REDUCE_SUM, tc_unary(f, TC_EXP, tc_binary(f, TC_SUB, x, mx)), 1, &last);
      tc_tensor *lse = tc_binary(f, TC_ADD, tc_unary(f, TC_LOG, s), mx);
      tc_tensor *g = tc_gather(f, in, 1, label); /* the label's logit, from global memory */
      y = tc_binary(f, TC_SUB, lse, t == TC_F32 ? g : tc_cast(f, g, TC_F32));
      break;
    }
    default: return NULL;
  }
  return y && t != TC_F32 ? tc_cast(f, y, t) : y;
}
