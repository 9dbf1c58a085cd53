/* norms.h - the row-wise normalizations as fusions built through the
 * public API (softmax, RMSNorm, LayerNorm without affine parameters), for
 * the tests, the benchmark bench/norms.c and the examples: each reads x
 * [rows, cols] of dtype t, computes in f32 and writes y of dtype t.  No
 * schedule: call tc_schedule_auto or schedule by hand. */
#ifndef TC_NORMS_H
#define TC_NORMS_H

#include <stdbool.h>

#include "tilec/tilec.h"

typedef enum tc_norm_kind {
  TC_NORM_SOFTMAX, TC_NORM_RMSNORM, TC_NORM_LAYERNORM, TC_NORM_SOFTMAX_BWD, TC_NORM_RMSNORM_BWD,
  TC_NORM_XENT, TC_NORM_COUNT
} tc_norm_kind;

/* "softmax", "rmsnorm", "layernorm", "softmax_bwd", "rmsnorm_bwd", "xent". */
const char *tc_norm_name(tc_norm_kind kind);

/* Adds the input x and the fusion of kind to f and returns its output y
 * (not yet added as an output); NULL with the fusion's error on bad
 * arguments.
 *   softmax    y = exp(x - max(x)) / sum(exp(x - max(x)))
 *   rmsnorm    y = x / sqrt(sum(x^2) / cols + eps)
 *   layernorm  y = (x - mean) / sqrt(var + eps), the mean and the
 *              variance (sum((x - mean)^2) / cols) in one pass: tc_welford
 *   softmax_bwd   inputs y (softmax's output) and dy: dx = y * (dy - sum(dy * y))
 *   rmsnorm_bwd   inputs x and dy, r = 1 / sqrt(mean(x^2) + eps):
 *                 dx = r * dy - x * r^3 * mean(dy * x)
 *   xent          inputs the logits x and the labels [rows, 1] (i32): the
 *                 cross-entropy loss [rows, 1] = log(sum(exp(x - max))) +
 *                 max - x[label] (a label outside [0, cols) reads 0)
 * over the last axis.  tc_norm_inputs gives the number of tensor inputs
 * (1, or 2 for the backward ones and xent, in the order above);
 * tc_norm_out_cols the result's row length (1 for xent, else cols).
 * eps is a scalar input named "eps" (f32, tc_scalar_input), given at
 * each launch, so one kernel (one cache entry) serves every eps: where
 * tc_norm_has_eps, it is the kernel parameter after the tensor inputs
 * (args[tc_norm_inputs(kind)] points at a float), before the output.
 * TC_NORM_EPS is the usual value. */
#define TC_NORM_EPS 1e-5f
int tc_norm_inputs(tc_norm_kind kind);
bool tc_norm_has_eps(tc_norm_kind kind);
int64_t tc_norm_out_cols(tc_norm_kind kind, int64_t cols);
/* rows -d (d >= 1; -1: any value): the rows are the size variable M
 * (tc_input_sym), a multiple of d, given at launch; cols -d likewise the
 * row length, the size variable N (the means divide by its value at
 * launch, tc_size_var_value). */
tc_tensor *tc_norm_build(tc_fusion *f, tc_norm_kind kind, tc_dtype t, int64_t rows, int64_t cols);

#endif
