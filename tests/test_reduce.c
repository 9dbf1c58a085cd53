/* test_reduce.c - reductions (sum, max, min over axes) and broadcasting.
 *
 * Each fusion is compiled for OpenCL, run on the default device (PoCL)
 * and compared with values computed here in plain C (in double) and with
 * tc_reference_run; sums are compared within a bound of the rounding an
 * f32 sum of n terms can make (n * 2^-24 * sum |x|).  The schedules cover
 * a serial reduction written straight to global memory, an outer
 * (column) reduction with the columns on threads, and block reductions
 * (the reduced axis on TIDx) as softmax and RMSNorm need them, at ragged
 * shapes; misuse gets a message naming the tensor, axis and reason.  The
 * schedules the differential tests (test_diff.c) found lowered wrongly
 * are kept here: producers inlined into a reduction loop, iteration loops
 * inside a reduction's thread axis, splits that do not divide an
 * iteration axis of a result in registers, a block reduction over one
 * thread. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

static void fill(float *p, int64_t n, int salt) {
  for (int64_t i = 0; i < n; i++) p[i] = (float)((i * 37 + salt * 11) % 101) / 17.0f - 3.0f;
}

/* Compiles f for OpenCL, runs it (args: inputs then one f32 output of n
 * elements) and compares the output with want within tol[i] (NULL: 0),
 * and tc_reference_run's output with want too.  Returns 0 when there is
 * no device (the caller skips). */
static int run_check(tc_fusion *f, const char *name, void **args, int nargs, const double *want,
                     const double *tol, int64_t n) {
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, name};
  tc_status st = TC_OK;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_CHECK(k != NULL, "compile %s: %s: %s", name, tc_status_name(st), tc_fusion_error(f));
  if (!k) return 1;
  float *out = args[nargs - 1];
  for (int64_t i = 0; i < n; i++) out[i] = -12345.0f;
  st = tc_kernel_run(k, args, NULL, NULL);
  if (st == TC_ERR_NO_DEVICE) {
    tc_kernel_free(k);
    return 0;
  }
  TC_CHECK(st == TC_OK, "run %s: %s", name, tc_kernel_error(k));
  float *rout = malloc((size_t)n * sizeof(float));
  void *ref[8];
  for (int i = 0; i < nargs - 1; i++) ref[i] = args[i];
  ref[nargs - 1] = rout;
  OK(f, tc_reference_run(f, ref));
  int bad = 0, rbad = 0;
  for (int64_t i = 0; i < n && st == TC_OK; i++) {
    double t = tol ? tol[i] : 0;
    if (!(fabs(out[i] - want[i]) <= t) && bad++ < 5)
      TC_CHECK(0, "%s element %lld: kernel %.9g, want %.9g (tolerance %.3g)\n%s", name,
               (long long)i, out[i], want[i], t, bad == 1 ? tc_kernel_source(k) : "");
    if (!(fabs(rout[i] - want[i]) <= t) && rbad++ < 3)
      TC_CHECK(0, "%s: reference element %lld is %.9g, want %.9g", name, (long long)i, rout[i],
               want[i]);
  }
  free(rout);
  tc_kernel_free(k);
  return 1;
}

/* The f32 rounding bound of a sum of n terms of absolute sum abs. */
static double sum_tol(int64_t n, double abs) { return (double)(n + 2) * ldexp(1.0, -24) * abs + 1e-30; }

/* A fusion computing y = x - m, m = reduce(x) over axis ax, of an f32
 * input of the given shape, y its output. */
static tc_fusion *x_minus_reduced(int rank, const int64_t *shape, tc_reduce_op op, int ax, tc_tensor **m,
                                  tc_tensor **y) {
  tc_fusion *f = tc_fusion_new();
  tc_tensor *x = tc_input(f, TC_F32, rank, shape);
  *m = tc_reduce(f, op, x, 1, &ax);
  *y = tc_binary(f, TC_SUB, x, *m);
  TC_CHECK(*y != NULL, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, *y));
  return f;
}

/* A fusion computing y = scale * m, m = reduce(x) over axis ax, of an f32
 * input of [rows, cols], y its output. */
static tc_fusion *scaled_reduction(int64_t rows, int64_t cols, tc_reduce_op op, int ax, double scale, tc_tensor **m,
                                   tc_tensor **y) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {rows, cols};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape);
  *m = tc_reduce(f, op, x, 1, &ax);
  *y = tc_binary_scalar(f, TC_MUL, *m, scale);
  TC_CHECK(*y != NULL, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, *y));
  return f;
}

/* y = x - m (m a reduction over x's rows) for [rows, cols] floats: the
 * element's tolerance, 2 ulp of the result and of m's rounding. */
static void want_x_minus(const float *X, const double *m, int64_t rows, int64_t cols, double *want,
                         double *tol) {
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) {
      want[r * cols + c] = X[r * cols + c] - m[r];
      tol[r * cols + c] = 2.5e-7 * (fabs(want[r * cols + c]) + fabs(m[r]));
    }
}

/* sum over the last axis of [rows, cols], serial, written to global
 * memory by the reduction itself. */
static void check_row_sum(int64_t rows, int64_t cols) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {rows, cols};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape);
  int ax = 1;
  tc_tensor *s = tc_reduce(f, TC_REDUCE_SUM, x, 1, &ax);
  TC_REQUIRE(s, "tc_reduce: %s", tc_fusion_error(f));
  TC_CHECK_EQ_INT(tc_tensor_extent(s, 0), rows);
  TC_CHECK_EQ_INT(tc_tensor_extent(s, 1), 1);
  OK(f, tc_add_output(f, s));
  OK(f, tc_parallelize(s, 0, TC_BIDX));
  float *X = malloc((size_t)(rows * cols) * sizeof(float)), *O = malloc((size_t)rows * sizeof(float));
  double *want = malloc((size_t)rows * sizeof(double)), *tol = malloc((size_t)rows * sizeof(double));
  fill(X, rows * cols, 1);
  for (int64_t r = 0; r < rows; r++) {
    double a = 0, m = 0;
    for (int64_t c = 0; c < cols; c++) a += X[r * cols + c], m += fabs(X[r * cols + c]);
    want[r] = a, tol[r] = sum_tol(cols, m);
  }
  void *args[2] = {X, O};
  char name[64];
  snprintf(name, sizeof name, "row_sum_%lldx%lld", (long long)rows, (long long)cols);
  if (!run_check(f, name, args, 2, want, tol, rows)) TC_SKIP("no OpenCL device");
  free(X), free(O), free(want), free(tol);
  tc_fusion_free(f);
}

static void test_row_sum_serial(void) {
  check_row_sum(7, 1000);
  check_row_sum(3, 1);
  check_row_sum(1, 4099);
}

/* max over axis 0 of [33, 65] (an outer reduction): the columns on TIDx,
 * the rows a serial reduction loop in each thread. */
static void test_column_max_threads(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {33, 65};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape);
  int ax = 0;
  tc_tensor *m = tc_reduce(f, TC_REDUCE_MAX, x, 1, &ax);
  TC_REQUIRE(m, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, m));
  OK(f, tc_parallelize(m, 1, TC_TIDX));
  char d[128];
  TC_CHECK(strstr(tc_tensor_describe(m, d, sizeof d), "rS{33}") != NULL, "describe: %s", d);
  float X[33 * 65], O[65];
  double want[65];
  fill(X, 33 * 65, 2);
  X[5 * 65 + 3] = NAN; /* ignored, as fmax ignores it */
  for (int c = 0; c < 65; c++) {
    double v = -INFINITY;
    for (int r = 0; r < 33; r++) v = isnan(X[r * 65 + c]) ? v : fmax(v, X[r * 65 + c]);
    want[c] = v;
  }
  void *args[2] = {X, O};
  if (!run_check(f, "col_max", args, 2, want, NULL, 65)) TC_SKIP("no OpenCL device");
  tc_fusion_free(f);
}

/* softmax over the rows of [rows, cols]: y = exp(x - max) / sum(exp(x -
 * max)), one block per row, the columns split by `threads` with the inner
 * part on TIDx, so max and sum are block reductions; every tensor is
 * scheduled like y (tc_propagate_transforms, tc_parallelize_all_like).
 * inline_most: then tc_inline_most, which computes x - max into exp and
 * exp(x - max), read by the sum and by y, outside the sum's loop (its
 * row kept in registers). */
static void check_softmax(int64_t rows, int64_t cols, int64_t threads, int inline_most) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {rows, cols};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape);
  int ax = 1;
  tc_tensor *mx = tc_reduce(f, TC_REDUCE_MAX, x, 1, &ax);
  tc_tensor *e = tc_unary(f, TC_EXP, tc_binary(f, TC_SUB, x, mx));
  tc_tensor *s = tc_reduce(f, TC_REDUCE_SUM, e, 1, &ax);
  tc_tensor *y = tc_binary(f, TC_DIV, e, s);
  TC_REQUIRE(y, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  OK(f, tc_split(y, 1, threads, 1));
  OK(f, tc_parallelize(y, 0, TC_BIDX));
  OK(f, tc_parallelize(y, 2, TC_TIDX));
  OK(f, tc_propagate_transforms(y));
  OK(f, tc_parallelize_all_like(y));
  char d[160];
  TC_CHECK(strstr(tc_tensor_describe(s, d, sizeof d), "rTIDx") != NULL, "sum's schedule: %s", d);
  if (inline_most) {
    OK(f, tc_inline_most(f));
    TC_CHECK(strstr(tc_tensor_describe(e, d, sizeof d), "iBIDx{") == d + 3 && strstr(d, "}, (CA), iS{"),
             "exp(x - max) inlined only past the rows: %s", d);
  }
  int64_t n = rows * cols;
  float *X = malloc((size_t)n * sizeof(float)), *O = malloc((size_t)n * sizeof(float));
  double *want = malloc((size_t)n * sizeof(double)), *tol = malloc((size_t)n * sizeof(double));
  fill(X, n, 3);
  for (int64_t r = 0; r < rows; r++) {
    double m = -INFINITY, z = 0;
    for (int64_t c = 0; c < cols; c++) m = fmax(m, X[r * cols + c]);
    for (int64_t c = 0; c < cols; c++) z += exp((double)X[r * cols + c] - m);
    for (int64_t c = 0; c < cols; c++) {
      want[r * cols + c] = exp((double)X[r * cols + c] - m) / z;
      /* exp's 3 ulp and the sum's rounding, relative */
      tol[r * cols + c] = want[r * cols + c] * (8e-7 + (double)(cols + 8) * 1.2e-7);
    }
  }
  void *args[2] = {X, O};
  char name[64];
  snprintf(name, sizeof name, "softmax_%lldx%lld%s", (long long)rows, (long long)cols, inline_most ? "_inl" : "");
  if (!run_check(f, name, args, 2, want, tol, n)) TC_SKIP("no OpenCL device");
  free(X), free(O), free(want), free(tol);
  tc_fusion_free(f);
}

static void test_softmax_block(void) {
  check_softmax(7, 1000, 128, 0);
  check_softmax(3, 1, 32, 0);
  check_softmax(33, 4099, 256, 0);
  check_softmax(2, 100, 64, 0); /* threads beyond the row's end hold the identity */
}

/* tc_inline_most on softmax: exp(x - max) is read by the sum and by the
 * division, so it stays out of the sum's reduction loop (inlined deeper,
 * the loop would be the division's too, which reads the sum: refused
 * with "T4 and its consumer T5 share a loop (T4's axis 1 rS{8}, T5's axis
 * 1 iS{8}) through T2, which is inlined into the loops of both"). */
static void test_softmax_inline_most(void) {
  check_softmax(7, 1000, 128, 1);
  check_softmax(2, 100, 64, 1);
}

/* RMSNorm: y = x / sqrt(mean(x^2) + eps), eps and 1/n as scalars, the
 * sum a block reduction. */
static void test_rmsnorm_block(void) {
  int64_t rows = 5, cols = 777;
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {rows, cols};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape);
  int ax = -1;
  tc_tensor *ss = tc_reduce(f, TC_REDUCE_SUM, tc_binary(f, TC_MUL, x, x), 1, &ax);
  tc_tensor *ms = tc_binary_scalar(f, TC_MUL, ss, 1.0 / (double)cols);
  tc_tensor *inv = tc_unary(f, TC_RECIPROCAL, tc_unary(f, TC_SQRT, tc_binary_scalar(f, TC_ADD, ms, 1e-5)));
  tc_tensor *y = tc_binary(f, TC_MUL, x, inv);
  TC_REQUIRE(y, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  OK(f, tc_split(y, 1, 128, 1));
  OK(f, tc_parallelize(y, 0, TC_BIDX));
  OK(f, tc_parallelize(y, 2, TC_TIDX));
  OK(f, tc_propagate_transforms(y));
  OK(f, tc_parallelize_all_like(y));
  int64_t n = rows * cols;
  float *X = malloc((size_t)n * sizeof(float)), *O = malloc((size_t)n * sizeof(float));
  double *want = malloc((size_t)n * sizeof(double)), *tol = malloc((size_t)n * sizeof(double));
  fill(X, n, 4);
  for (int64_t r = 0; r < rows; r++) {
    double q = 0;
    for (int64_t c = 0; c < cols; c++) q += (double)X[r * cols + c] * X[r * cols + c];
    double sc = 1.0 / sqrt(q / (double)cols + 1e-5);
    for (int64_t c = 0; c < cols; c++) {
      want[r * cols + c] = X[r * cols + c] * sc;
      tol[r * cols + c] = fabs(want[r * cols + c]) * (1e-6 + (double)cols * 1.2e-7);
    }
  }
  void *args[2] = {X, O};
  if (!run_check(f, "rmsnorm", args, 2, want, tol, n)) TC_SKIP("no OpenCL device");
  free(X), free(O), free(want), free(tol);
  tc_fusion_free(f);
}

/* tc_inline_most where the shared loop is not the reduction's: a column
 * maximum of 2 exp(x) with its columns outermost ([iS{8}, rS{6}]), and
 * exp(x) read by it (through 2 exp(x)) and by the quotient.  Inlined
 * into both, exp(x) would join the row loop of 2 exp(x) with the
 * quotient's, which needs the finished maximum: refused with "T2 and T4
 * run in one loop (T4's loop axis 0, iS{6}), but T3, outside that loop,
 * reads T2 and is read by T4".  exp(x) is computed whole instead. */
static void test_inline_most_outside_reduction(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {6, 8};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape);
  tc_tensor *a = tc_unary(f, TC_EXP, x);
  tc_tensor *b = tc_binary_scalar(f, TC_MUL, a, 2.0);
  int ax = 0;
  tc_tensor *m = tc_reduce(f, TC_REDUCE_MAX, b, 1, &ax);
  tc_tensor *y = tc_binary(f, TC_DIV, a, m);
  TC_REQUIRE(y, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  int from[2] = {0, 1}, to[2] = {1, 0};
  OK(f, tc_reorder(m, 2, from, to));
  OK(f, tc_inline_most(f));
  char d[128];
  TC_CHECK(strstr(tc_tensor_describe(a, d, sizeof d), "(CA)") == NULL, "exp(x) not inlined: %s", d);
  float X[48], Y[48];
  double want[48], tol[48];
  fill(X, 48, 13);
  for (int c = 0; c < 8; c++) {
    double mx = 0;
    for (int r = 0; r < 6; r++) mx = fmax(mx, 2 * exp((double)X[r * 8 + c]));
    for (int r = 0; r < 6; r++) {
      want[r * 8 + c] = exp((double)X[r * 8 + c]) / mx;
      tol[r * 8 + c] = 2e-6 * want[r * 8 + c]; /* exp twice (3 ulp), the quotient */
    }
  }
  void *args[2] = {X, Y};
  if (!run_check(f, "inline_most_column_max", args, 2, want, tol, 48)) TC_SKIP("no OpenCL device");
  tc_fusion_free(f);
}

/* Integer sums wrap in 32 bits; i8 accumulates in i32. */
static void test_int_sum_wraps(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {2, 3};
  tc_tensor *x = tc_input(f, TC_I32, 2, shape);
  int ax = 1;
  tc_tensor *s = tc_reduce(f, TC_REDUCE_SUM, x, 1, &ax);
  OK(f, tc_add_output(f, s));
  TC_CHECK_EQ_INT(tc_tensor_dtype(s), TC_I32);
  int32_t X[6] = {2147483647, 1, 5, -7, 3, 4}, O[2] = {0, 0};
  void *args[2] = {X, O};
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "isum"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_REQUIRE(k, "%s", tc_fusion_error(f));
  st = tc_kernel_run(k, args, NULL, NULL);
  if (st == TC_ERR_NO_DEVICE) {
    tc_kernel_free(k), tc_fusion_free(f);
    TC_SKIP("no OpenCL device");
  }
  TC_CHECK(st == TC_OK, "%s", tc_kernel_error(k));
  TC_CHECK_EQ_INT(O[0], -2147483648 + 5); /* INT_MAX + 1 + 5 wraps */
  TC_CHECK_EQ_INT(O[1], 0);
  int32_t R[2];
  void *ref[2] = {X, R};
  OK(f, tc_reference_run(f, ref));
  TC_CHECK_EQ_INT(R[0], O[0]);
  TC_CHECK_EQ_INT(R[1], O[1]);
  tc_kernel_free(k);
  tc_fusion_free(f);
  f = tc_fusion_new();
  tc_tensor *b = tc_input(f, TC_BF16, 2, shape);
  tc_tensor *bs = tc_reduce(f, TC_REDUCE_MAX, b, 1, &ax);
  TC_CHECK_EQ_INT(tc_tensor_dtype(bs), TC_F32);
  tc_fusion_free(f);
}

/* What is refused, with a message naming the tensor, the axis and why. */
static void test_misuse(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {4, 64}, other[2] = {4, 3};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape), *z = tc_input(f, TC_F32, 2, other);
  int ax = 1, bad[2] = {1, -1};
  TC_CHECK(tc_reduce(f, TC_REDUCE_SUM, x, 2, bad) == NULL &&
               strstr(tc_fusion_error(f), "listed twice"), "twice: %s", tc_fusion_error(f));
  TC_CHECK(tc_reduce(f, TC_REDUCE_SUM, x, 1, (int[]){2}) == NULL &&
               strstr(tc_fusion_error(f), "out of range"), "range: %s", tc_fusion_error(f));
  TC_CHECK(tc_binary(f, TC_ADD, x, z) == NULL && strstr(tc_fusion_error(f), "its extent is 1"),
           "mismatch: %s", tc_fusion_error(f));
  tc_tensor *s = tc_reduce(f, TC_REDUCE_SUM, x, 1, &ax);
  OK(f, tc_add_output(f, s));
  /* the reduced axis on a block: a grid reduction */
  OK(f, tc_parallelize(s, 1, TC_BIDX));
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "m"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_CHECK(!k && st == TC_ERR_UNSUPPORTED && strstr(tc_fusion_error(f), "grid reduction") &&
               strstr(tc_fusion_error(f), "T2's reduction axis 1"), "grid: %s", tc_fusion_error(f));
  tc_kernel_free(k);
  /* on a thread axis while in global memory */
  OK(f, tc_parallelize(s, 1, TC_TIDX));
  k = tc_compile(f, &o, &st);
  TC_CHECK(!k && strstr(tc_fusion_error(f), "tc_cache_before"), "global: %s", tc_fusion_error(f));
  tc_kernel_free(k);
  /* an iteration loop inside the reduction loop */
  OK(f, tc_parallelize(s, 1, TC_SERIAL));
  int from[2] = {0, 1}, to[2] = {1, 0};
  OK(f, tc_reorder(s, 2, from, to));
  k = tc_compile(f, &o, &st);
  TC_CHECK(!k && strstr(tc_fusion_error(f), "reorder the reduction axes innermost"), "order: %s",
           tc_fusion_error(f));
  tc_kernel_free(k);
  /* inlining a reduction's result past its reduction axis */
  {
    tc_fusion *g = tc_fusion_new();
    int64_t sh[2] = {4, 8};
    tc_tensor *a = tc_input(g, TC_F32, 2, sh);
    int one = 1;
    tc_tensor *m = tc_reduce(g, TC_REDUCE_MAX, a, 1, &one);
    OK(g, tc_add_output(g, tc_binary(g, TC_SUB, a, m)));
    TC_CHECK(tc_inline_at(m, 2) == TC_ERR_SCHEDULE &&
                 strstr(tc_fusion_error(g), "loop axis 1 (rS{8}) is a reduction axis") &&
                 strstr(tc_fusion_error(g), "inline T1 at position 1 or less"),
             "inline past: %s", tc_fusion_error(g));
    OK(g, tc_inline_at(m, 1));
    tc_fusion_free(g);
  }
  /* merging a reduction axis with an iteration axis */
  TC_CHECK(tc_merge(s, 0, 1) != TC_OK && strstr(tc_fusion_error(f), "reduction axis"), "merge: %s",
           tc_fusion_error(f));
  tc_fusion_free(f);
}

/* Propagation and parallel types reach a reduction through the axes it
 * reduces, not through its reader: y = x - max(transpose(x)) over all
 * axes of [2, 6], scheduled like y with its 6 on TIDx.  The maximum's
 * reduction axes are [6, 2] (transpose(x)'s); its reader y, where it is
 * [1, 1], placed them as y's [2, 6] and the tensors before it from
 * there, so that the propagation was refused ("T4's logical axis 0
 * (extent 2) has no counterpart in T1") or, with x's copy in other
 * places, the maximum kept [rS{6}, rS{2}] serial while transpose(x) ran
 * on TIDx ("T3 is in local memory with axis 1 bound to TIDx, but its
 * consumer T4 has no matching TIDx axis"). */
static void test_schedule_reaches_reduction_through_operand(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {2, 6};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape);
  int perm[2] = {1, 0}, axes[2] = {0, 1};
  tc_tensor *p = tc_permute(f, tc_set(f, x), perm);
  tc_tensor *m = tc_reduce(f, TC_REDUCE_MAX, p, 2, axes);
  tc_tensor *y = tc_binary(f, TC_SUB, x, m);
  TC_REQUIRE(y, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  OK(f, tc_parallelize(y, 1, TC_TIDX));
  OK(f, tc_propagate_transforms(y));
  OK(f, tc_parallelize_all_like(y));
  char d[128];
  TC_CHECK(strstr(tc_tensor_describe(m, d, sizeof d), "[rS{2}, rTIDx{6}]") != NULL, "max: %s", d);
  float X[12], Y[12];
  double mx = -INFINITY, want[12], tol[12];
  fill(X, 12, 15);
  for (int i = 0; i < 12; i++) mx = fmax(mx, X[i]);
  for (int i = 0; i < 12; i++) want[i] = X[i] - mx, tol[i] = 2.5e-7 * (fabs(want[i]) + fabs(mx));
  void *args[2] = {X, Y};
  if (!run_check(f, "reduction_through_operand", args, 2, want, tol, 12)) TC_SKIP("no OpenCL device");
  tc_fusion_free(f);
}

/* A refused tc_compute_at leaves the producer as it was: computing a
 * maximum at position 2 of its reader is refused (its reduction axis maps
 * to no axis of the reader), and the maximum's reduction axis stays on
 * TIDy.  The call gave the replayed axes the reader's parallel types
 * before it checked the position, and a refusal kept them: the axis came
 * back serial, and a block reduction's producer on TIDy no longer
 * matched it. */
static void test_refused_compute_at_keeps_schedule(void) {
  tc_tensor *m, *y;
  tc_fusion *f = scaled_reduction(3, 3, TC_REDUCE_MAX, 1, 2.0, &m, &y);
  OK(f, tc_parallelize(m, 1, TC_TIDY));
  TC_CHECK(tc_compute_at(m, y, 2) != TC_OK && strstr(tc_fusion_error(f), "cannot inline"), "compute_at: %s",
           tc_fusion_error(f));
  TC_CHECK_EQ_INT(tc_tensor_loop_ptype(m, 1), TC_TIDY);
  TC_CHECK_EQ_INT(tc_tensor_loop_ptype(m, 0), TC_SERIAL);
  tc_fusion_free(f);
}

/* The reduction into registers, copied out (tc_cache_before), with the
 * block reduction on TIDx; CUDA and HIP print it too. */
static void test_cache_before_and_targets(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {3, 300};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape);
  int ax = 1;
  tc_tensor *s = tc_reduce(f, TC_REDUCE_MIN, x, 1, &ax);
  OK(f, tc_add_output(f, s));
  tc_tensor *acc = tc_cache_before(s);
  TC_REQUIRE(acc, "%s", tc_fusion_error(f));
  OK(f, tc_split(acc, 1, 64, 1));
  OK(f, tc_parallelize(acc, 0, TC_BIDX));
  OK(f, tc_parallelize(acc, 2, TC_TIDX));
  OK(f, tc_parallelize(s, 0, TC_BIDX));
  float X[900], O[3];
  double want[3];
  fill(X, 900, 5);
  for (int r = 0; r < 3; r++) {
    double v = INFINITY;
    for (int c = 0; c < 300; c++) v = fmin(v, X[r * 300 + c]);
    want[r] = v;
  }
  void *args[2] = {X, O};
  if (!run_check(f, "min_cached", args, 2, want, NULL, 3)) TC_SKIP("no OpenCL device");
  for (int t = TC_TARGET_CUDA; t <= TC_TARGET_HIP; t++) {
    tc_compile_options o = {(tc_target)t, NULL, "min_cached"};
    tc_status st;
    tc_kernel *k = tc_compile(f, &o, &st);
    TC_CHECK(k != NULL, "%s: %s", tc_target_name((tc_target)t), tc_fusion_error(f));
    if (k) TC_CHECK(strstr(tc_kernel_source(k), "tc_red_f") != NULL, "no block reduction printed");
    /* 64 threads on TIDx: whole warps (32 lanes) and a whole wavefront (64) */
    if (k) TC_CHECK(strstr(tc_kernel_source(k), t == TC_TARGET_CUDA ? "__shfl_xor_sync(0xffffffffu, tc_v, tc_o)"
                                                                    : "__shfl_xor(tc_v, tc_o)") != NULL,
                    "%s: no warp shuffle", tc_target_name((tc_target)t));
    tc_kernel_free(k);
  }
  tc_fusion_free(f);
}

/* tc_gather along axis 1 of [3, 5] with indices in and out of range
 * (outside [0, 5) reads 0), and along axis 0 with two rows gathered. */
static void test_gather(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t xs[2] = {3, 5}, is[2] = {3, 2};
  tc_tensor *x = tc_input(f, TC_F32, 2, xs), *idx = tc_input(f, TC_I32, 2, is);
  tc_tensor *g = tc_gather(f, x, -1, idx);
  TC_REQUIRE(g, "%s", tc_fusion_error(f));
  TC_CHECK_EQ_INT(tc_tensor_extent(g, 1), 2);
  OK(f, tc_add_output(f, g));
  float X[15];
  for (int i = 0; i < 15; i++) X[i] = (float)(10 * (i / 5) + i % 5) + 0.5f;
  int32_t I[6] = {4, 0, -1, 2, 5, 3}, IB[6];
  memcpy(IB, I, sizeof I);
  float O[6];
  double want[6] = {4.5, 0.5, 0, 12.5, 0, 23.5};
  void *args[3] = {X, I, O};
  if (!run_check(f, "gather", args, 3, want, NULL, 6)) TC_SKIP("no OpenCL device");
  TC_CHECK(memcmp(I, IB, sizeof I) == 0, "the index changed");
  tc_fusion_free(f);
  /* misuse */
  f = tc_fusion_new();
  x = tc_input(f, TC_F32, 2, xs);
  tc_tensor *fi = tc_input(f, TC_F32, 2, is);
  TC_CHECK(!tc_gather(f, x, 1, fi) && strstr(tc_fusion_error(f), "must be i32"), "%s", tc_fusion_error(f));
  int64_t bad[2] = {2, 2};
  tc_tensor *bi = tc_input(f, TC_I32, 2, bad);
  TC_CHECK(!tc_gather(f, x, 1, bi) && strstr(tc_fusion_error(f), "only along the gathered axis"), "%s",
           tc_fusion_error(f));
  tc_tensor *ii = tc_input(f, TC_I32, 2, is);
  tc_tensor *gl = tc_gather(f, tc_unary(f, TC_NEG, x), 1, ii); /* from a local tensor */
  OK(f, tc_add_output(f, gl));
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "g"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_CHECK(!k && strstr(tc_fusion_error(f), "global memory"), "%s", tc_fusion_error(f));
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* LayerNorm with affine weights: y = (x - mean) / sqrt(var + eps) * w + b,
 * w and b of shape [cols] broadcast to [1, cols] (tc_broadcast), scheduled
 * by tc_schedule_auto; and tc_expand of a column to a matrix. */
static void test_broadcast_affine_layernorm(void) {
  int64_t rows = 6, cols = 130;
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {rows, cols}, ws[1] = {cols};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape), *w = tc_input(f, TC_F32, 1, ws), *b = tc_input(f, TC_F32, 1, ws);
  int ax = 1;
  bool nw[2] = {true, false};
  tc_tensor *mean = tc_binary_scalar(f, TC_MUL, tc_reduce(f, TC_REDUCE_SUM, x, 1, &ax), 1.0 / (double)cols);
  tc_tensor *xc = tc_binary(f, TC_SUB, x, mean);
  tc_tensor *var = tc_binary_scalar(f, TC_MUL, tc_reduce(f, TC_REDUCE_SUM, tc_binary(f, TC_MUL, xc, xc), 1, &ax), 1.0 / (double)cols);
  tc_tensor *r = tc_unary(f, TC_RECIPROCAL, tc_unary(f, TC_SQRT, tc_binary_scalar(f, TC_ADD, var, 1e-5)));
  tc_tensor *wb = tc_broadcast(f, w, 2, nw), *bb = tc_broadcast(f, b, 2, nw);
  TC_REQUIRE(wb && tc_tensor_extent(wb, 0) == 1 && tc_tensor_extent(wb, 1) == cols, "%s", tc_fusion_error(f));
  tc_tensor *y = tc_binary(f, TC_ADD, tc_binary(f, TC_MUL, tc_binary(f, TC_MUL, xc, r), wb), bb);
  OK(f, tc_add_output(f, y));
  OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  float X[6 * 130], W[130], B[130], O[6 * 130];
  double want[6 * 130], tol[6 * 130];
  fill(X, rows * cols, 6), fill(W, cols, 7), fill(B, cols, 8);
  for (int64_t i = 0; i < rows; i++) {
    double m = 0, v = 0;
    for (int64_t c = 0; c < cols; c++) m += X[i * cols + c];
    m /= (double)cols;
    for (int64_t c = 0; c < cols; c++) v += (X[i * cols + c] - m) * (X[i * cols + c] - m);
    v /= (double)cols;
    for (int64_t c = 0; c < cols; c++) {
      double n = (X[i * cols + c] - m) / sqrt(v + 1e-5);
      want[i * cols + c] = n * W[c] + B[c];
      tol[i * cols + c] = (fabs(n * W[c]) + fabs(B[c])) * 4e-6 + 1e-6;
    }
  }
  void *args[4] = {X, W, B, O};
  if (!run_check(f, "layernorm_affine", args, 4, want, tol, rows * cols)) TC_SKIP("no OpenCL device");
  tc_fusion_free(f);
  /* expand [3, 1] to [3, 4]; misuse */
  f = tc_fusion_new();
  int64_t cs[2] = {3, 1}, es[2] = {3, 4}, bad[2] = {2, 4};
  tc_tensor *c = tc_input(f, TC_F32, 2, cs);
  TC_CHECK(!tc_expand(f, c, 2, bad) && strstr(tc_fusion_error(f), "cannot expand"), "%s", tc_fusion_error(f));
  bool two[2] = {true, true};
  TC_CHECK(!tc_broadcast(f, c, 2, two) && strstr(tc_fusion_error(f), "must be equal"), "%s", tc_fusion_error(f));
  tc_tensor *e = tc_expand(f, c, 2, es);
  OK(f, tc_add_output(f, e));
  OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  float C[3] = {1.5f, -2, 7}, E[12];
  double ew[12];
  for (int i = 0; i < 12; i++) ew[i] = C[i / 4];
  void *eargs[2] = {C, E};
  if (!run_check(f, "expand", eargs, 2, ew, NULL, 12)) TC_SKIP("no OpenCL device");
  tc_fusion_free(f);
}

/* tc_compare (IEEE: NaN compares false but NE) and tc_where, broadcasting
 * a [1, 4] threshold over [3, 4]: y = where(x > t, x, t * 2), and the
 * masks of all six comparisons against plain C. */
static void test_compare_where(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t xs[2] = {3, 4}, ts[2] = {1, 4};
  tc_tensor *x = tc_input(f, TC_F32, 2, xs), *t = tc_input(f, TC_F32, 2, ts);
  tc_tensor *y = tc_where(f, tc_compare(f, TC_GT, x, t), x, tc_binary_scalar(f, TC_MUL, t, 2.0));
  TC_REQUIRE(y && tc_tensor_extent(y, 0) == 3 && tc_tensor_extent(y, 1) == 4, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  float X[12] = {1, -2, 3, NAN, 0.5f, 7, -0.0f, 2, 9, -9, 4, 1}, T[4] = {0, 0, 3, 1}, O[12];
  double want[12];
  for (int i = 0; i < 12; i++) want[i] = X[i] > T[i % 4] ? X[i] : 2.0 * T[i % 4];
  void *args[3] = {X, T, O};
  if (!run_check(f, "where", args, 3, want, NULL, 12)) TC_SKIP("no OpenCL device");
  tc_fusion_free(f);
  for (int op = TC_LT; op <= TC_NE; op++) {
    f = tc_fusion_new();
    x = tc_input(f, TC_F32, 2, xs), t = tc_input(f, TC_F32, 2, ts);
    tc_tensor *m = tc_compare(f, (tc_compare_op)op, x, t);
    TC_CHECK_EQ_INT(tc_tensor_dtype(m), TC_I8);
    OK(f, tc_add_output(f, tc_cast(f, m, TC_F32)));
    OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
    for (int i = 0; i < 12; i++) {
      float a = X[i], b = T[i % 4];
      int r = op == TC_LT ? a < b : op == TC_LE ? a <= b : op == TC_GT ? a > b : op == TC_GE ? a >= b
              : op == TC_EQ ? a == b : a != b;
      want[i] = r;
    }
    char name[32];
    snprintf(name, sizeof name, "compare_%d", op);
    if (!run_check(f, name, args, 3, want, NULL, 12)) TC_SKIP("no OpenCL device");
    tc_fusion_free(f);
  }
  f = tc_fusion_new();
  x = tc_input(f, TC_F32, 2, xs);
  tc_tensor *xi = tc_input(f, TC_I32, 2, xs);
  TC_CHECK(!tc_compare(f, TC_LT, x, xi) && strstr(tc_fusion_error(f), "cast one first"), "%s", tc_fusion_error(f));
  TC_CHECK(!tc_where(f, xi, x, xi) && strstr(tc_fusion_error(f), "cast one first"), "%s", tc_fusion_error(f));
  int64_t bad[2] = {2, 4};
  TC_CHECK(!tc_where(f, tc_input(f, TC_I8, 2, bad), x, x) && strstr(tc_fusion_error(f), "differ in extent"),
           "%s", tc_fusion_error(f));
  tc_fusion_free(f);
}

/* A block reduction over TIDy (the shared-memory tree; the warp shuffles
 * take TIDx only) and one over a TIDx extent that is no power of two (the
 * tree too): column sums of [48, 5] with the rows on TIDy, row maxima of
 * [3, 100] with 100 threads on TIDx. */
static void test_tree_forms(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {48, 5};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape);
  int ax = 0;
  tc_tensor *s = tc_reduce(f, TC_REDUCE_SUM, x, 1, &ax);
  OK(f, tc_add_output(f, s));
  tc_tensor *acc = tc_cache_before(s);
  TC_REQUIRE(acc, "%s", tc_fusion_error(f));
  OK(f, tc_parallelize(acc, 0, TC_TIDY));
  float X[48 * 5], O[5];
  double want[5], tol[5];
  fill(X, 48 * 5, 9);
  for (int c = 0; c < 5; c++) {
    double a = 0, m = 0;
    for (int r = 0; r < 48; r++) a += X[r * 5 + c], m += fabs(X[r * 5 + c]);
    want[c] = a, tol[c] = sum_tol(48, m);
  }
  void *args[2] = {X, O};
  if (!run_check(f, "tidy_tree", args, 2, want, tol, 5)) TC_SKIP("no OpenCL device");
  tc_fusion_free(f);
  f = tc_fusion_new();
  int64_t s2[2] = {3, 100};
  x = tc_input(f, TC_F32, 2, s2);
  ax = 1;
  s = tc_reduce(f, TC_REDUCE_MAX, x, 1, &ax);
  OK(f, tc_add_output(f, s));
  acc = tc_cache_before(s);
  OK(f, tc_parallelize(acc, 0, TC_BIDX));
  OK(f, tc_parallelize(acc, 1, TC_TIDX));
  OK(f, tc_parallelize(s, 0, TC_BIDX));
  float Y[300], P[3];
  double pw[3];
  fill(Y, 300, 10);
  for (int r = 0; r < 3; r++) {
    pw[r] = -INFINITY;
    for (int c = 0; c < 100; c++) pw[r] = fmax(pw[r], Y[r * 100 + c]);
  }
  void *a2[2] = {Y, P};
  if (!run_check(f, "tidx_100_tree", a2, 2, pw, NULL, 3)) TC_SKIP("no OpenCL device");
  tc_compile_options o = {TC_TARGET_CUDA, NULL, "t100"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_CHECK(k && !strstr(tc_kernel_source(k), "__shfl") && strstr(tc_kernel_source(k), "tc_red_f"),
           "100 threads: the tree, no shuffle");
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* A producer inlined into a reduction's loop (tc_inline_most puts x -
 * 1.5 inside max's reduction loop) and read there by another op too (z
 * shares that loop): the maximum starts at its identity before the loop
 * that the producer's statement opened.  Was refused with "internal
 * error: T2's loop axis 1 (rS{33}) is shared with a loop that other
 * statements were placed after". */
static void test_producer_inlined_into_reduction_loop(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {7, 33};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape);
  tc_tensor *p = tc_binary_scalar(f, TC_ADD, x, -1.5);
  int ax = 1;
  tc_tensor *m = tc_reduce(f, TC_REDUCE_MAX, p, 1, &ax);
  tc_tensor *z = tc_binary_scalar(f, TC_MUL, p, 2.0);
  tc_tensor *y = tc_binary(f, TC_SUB, x, m);
  TC_REQUIRE(y && z, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, z));
  OK(f, tc_add_output(f, y));
  OK(f, tc_inline_most(f));
  char d[128];
  TC_CHECK(strstr(tc_tensor_describe(p, d, sizeof d), "iS{33}, (CA)") != NULL, "inlined: %s", d);
  float X[231], Z[231], Y[231];
  double mx[7], want[231], tol[231];
  fill(X, 231, 6);
  for (int r = 0; r < 7; r++) {
    mx[r] = -INFINITY;
    for (int c = 0; c < 33; c++) mx[r] = fmax(mx[r], (float)(X[r * 33 + c] - 1.5f));
  }
  want_x_minus(X, mx, 7, 33, want, tol);
  void *args[3] = {X, Z, Y};
  if (!run_check(f, "inlined_into_max", args, 3, want, tol, 231)) TC_SKIP("no OpenCL device");
  for (int i = 0; i < 231; i++)
    if (Z[i] != (X[i] - 1.5f) * 2.0f) {
      TC_CHECK(0, "z element %d: %.9g, want %.9g", i, Z[i], (X[i] - 1.5f) * 2.0f);
      break;
    }
  tc_fusion_free(f);
}

/* The same in a block reduction: exp(x) computed inside the sum's serial
 * reduction loop (split by 64, the inner part on TIDx) and stored from
 * there by z too; the block reduction follows that loop, after z's
 * statement. */
static void test_producer_inlined_into_block_reduction(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {4, 300};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape);
  tc_tensor *e = tc_unary(f, TC_EXP, x);
  int ax = 1;
  tc_tensor *s = tc_reduce(f, TC_REDUCE_SUM, e, 1, &ax);
  tc_tensor *z = tc_binary_scalar(f, TC_MUL, e, 2.0);
  tc_tensor *y = tc_binary(f, TC_DIV, x, s);
  TC_REQUIRE(y && z, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, z));
  OK(f, tc_add_output(f, y));
  OK(f, tc_split(y, 1, 64, 1));
  OK(f, tc_parallelize(y, 0, TC_BIDX));
  OK(f, tc_parallelize(y, 2, TC_TIDX));
  OK(f, tc_propagate_transforms(y));
  OK(f, tc_parallelize_all_like(y));
  OK(f, tc_inline_most(f));
  char d[128];
  TC_CHECK(strstr(tc_tensor_describe(e, d, sizeof d), "iTIDx{64}, (CA)") != NULL, "inlined: %s", d);
  float X[1200], Z[1200], Y[1200];
  double want[1200], tol[1200];
  fill(X, 1200, 7);
  for (int r = 0; r < 4; r++) {
    double sum = 0;
    for (int c = 0; c < 300; c++) sum += exp((double)X[r * 300 + c]);
    for (int c = 0; c < 300; c++) {
      want[r * 300 + c] = X[r * 300 + c] / sum;
      /* exp's 3 ulp and the f32 sum's rounding, relative */
      tol[r * 300 + c] = fabs(want[r * 300 + c]) * (8e-7 + 308 * 1.2e-7);
    }
  }
  void *args[3] = {X, Z, Y};
  if (!run_check(f, "inlined_into_block_sum", args, 3, want, tol, 1200)) TC_SKIP("no OpenCL device");
  for (int i = 0; i < 1200; i++)
    if (!(fabs(Z[i] - 2 * exp((double)X[i])) <= 1e-6 * 2 * exp((double)X[i]))) {
      TC_CHECK(0, "z element %d: %.9g, want %.9g", i, Z[i], 2 * exp((double)X[i]));
      break;
    }
  tc_fusion_free(f);
}

/* A column sum of [12, 2] with the reduced axis on TIDx and the columns
 * a serial loop inside it ([rTIDx{12}, iS{2}]): each column starts at 0
 * and is combined by the block inside the column loop.  The start was
 * printed before that loop, with its variable undeclared, and the device
 * compiler rejected the kernel. */
static void test_iteration_loop_inside_thread_reduction(void) {
  tc_tensor *s, *y;
  tc_fusion *f = scaled_reduction(12, 2, TC_REDUCE_SUM, 0, 0.5, &s, &y);
  OK(f, tc_parallelize(s, 0, TC_TIDX));
  float X[24], Y[2];
  double want[2], tol[2];
  fill(X, 24, 8);
  for (int c = 0; c < 2; c++) {
    double a = 0, m = 0;
    for (int r = 0; r < 12; r++) a += X[r * 2 + c], m += fabs(X[r * 2 + c]);
    want[c] = 0.5 * a, tol[c] = 0.5 * sum_tol(12, m);
  }
  void *args[2] = {X, Y};
  if (!run_check(f, "thread_reduction_outside_loop", args, 2, want, tol, 2)) TC_SKIP("no OpenCL device");
  tc_fusion_free(f);
}

/* Splits that do not divide an iteration axis of a reduction kept in
 * registers: the iterations past the end start (and, in a block
 * reduction, store) nothing.  Their indices fell on other rows' registers
 * (serial: a finished minimum reset to +inf) or past the register array
 * (block: -inf and garbage came out). */
static void test_partial_tiles_of_register_result(void) {
  /* serial: min over the 36 of [3, 36, 2], the result's loop [iS{2},
   * iTIDz{1}, iS{2}, iS{3}, rS{36}] from splits by 4 and 3 of the
   * extent 3 */
  int64_t shape[3] = {3, 36, 2};
  tc_tensor *m, *y;
  tc_fusion *f = x_minus_reduced(3, shape, TC_REDUCE_MIN, 1, &m, &y);
  int from[5] = {0, 1, 2, 3, 4}, to3[3] = {2, 0, 1}, to5[5] = {4, 0, 1, 2, 3};
  OK(f, tc_reorder(m, 3, from, to3));
  OK(f, tc_split(m, 2, 4, 1));
  OK(f, tc_split(m, 3, 3, 1));
  OK(f, tc_propagate_transforms(m));
  OK(f, tc_parallelize(m, 2, TC_TIDZ));
  OK(f, tc_parallelize_all_like(m));
  OK(f, tc_reorder(m, 5, from, to5));
  float X[216], Y[216];
  double mn[6], want[216], tol[216];
  fill(X, 216, 9);
  for (int a = 0; a < 3; a++)
    for (int c = 0; c < 2; c++) {
      mn[a * 2 + c] = INFINITY;
      for (int r = 0; r < 36; r++) mn[a * 2 + c] = fmin(mn[a * 2 + c], X[(a * 36 + r) * 2 + c]);
    }
  for (int a = 0; a < 3; a++)
    for (int r = 0; r < 36; r++)
      for (int c = 0; c < 2; c++) {
        int i = (a * 36 + r) * 2 + c;
        want[i] = X[i] - mn[a * 2 + c];
        tol[i] = 2.5e-7 * (fabs(want[i]) + fabs(mn[a * 2 + c]));
      }
  void *args[2] = {X, Y};
  if (!run_check(f, "partial_tiles_serial", args, 2, want, tol, 216)) TC_SKIP("no OpenCL device");
  tc_fusion_free(f);
  /* block: max over the 31 of [3, 31] on TIDz, the rows split by 3 and 8 */
  int64_t shape2[2] = {3, 31};
  f = x_minus_reduced(2, shape2, TC_REDUCE_MAX, 1, &m, &y);
  OK(f, tc_split(y, 0, 3, 1));
  OK(f, tc_split(y, 1, 8, 1));
  OK(f, tc_propagate_transforms(y));
  OK(f, tc_parallelize(y, 3, TC_TIDZ));
  OK(f, tc_parallelize_all_like(y));
  double mx[3];
  fill(X, 93, 10);
  for (int r = 0; r < 3; r++) {
    mx[r] = -INFINITY;
    for (int c = 0; c < 31; c++) mx[r] = fmax(mx[r], X[r * 31 + c]);
  }
  want_x_minus(X, mx, 3, 31, want, tol);
  if (!run_check(f, "partial_tiles_block", args, 2, want, tol, 93)) TC_SKIP("no OpenCL device");
  tc_fusion_free(f);
}

/* A block reduction over a thread axis of extent 1 (the sum over axes 0
 * and 2 of [3, 2, 1], the extent-1 axis on TIDy): one thread holds the
 * total, nothing to combine.  The tree loop of no iterations around a
 * barrier made PoCL 3.1 abort the process. */
static void test_block_reduction_of_one_thread(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[3] = {3, 2, 1};
  tc_tensor *x = tc_input(f, TC_I32, 3, shape);
  int axes[2] = {0, 2};
  tc_tensor *s = tc_reduce(f, TC_REDUCE_SUM, x, 2, axes);
  TC_REQUIRE(s, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, s));
  tc_tensor *acc = tc_cache_before(s);
  TC_REQUIRE(acc, "%s", tc_fusion_error(f));
  int from[3] = {0, 1, 2}, to[3] = {1, 0, 2};
  OK(f, tc_reorder(acc, 3, from, to));
  OK(f, tc_parallelize(acc, 2, TC_TIDY));
  int32_t X[6] = {5, -7, 11, 2, -3, 40}, O[2] = {0, 0};
  void *args[2] = {X, O};
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "one_thread"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_REQUIRE(k, "%s", tc_fusion_error(f));
  st = tc_kernel_run(k, args, NULL, NULL);
  if (st == TC_ERR_NO_DEVICE) {
    tc_kernel_free(k), tc_fusion_free(f);
    TC_SKIP("no OpenCL device");
  }
  TC_CHECK(st == TC_OK, "%s", tc_kernel_error(k));
  TC_CHECK_EQ_INT(O[0], 5 + 11 - 3);
  TC_CHECK_EQ_INT(O[1], -7 + 2 + 40);
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* A block reduction inside a serial iteration loop, after a serial
 * reduction loop that is the same in every thread (it reads registers):
 * y = x - sum of x over axes 0 and 2 of [2, 2, 2], x copied to registers
 * first, the sum's loop [iS{2}, rS{2}, rTIDz{2}].  PoCL 3.1 aborted the
 * process on that loop inside the loop with the block's barriers
 * ("ParallelRegion.cc: Assertion `exit != NULL' failed") unless a
 * barrier starts the outer loop's body, which the OpenCL kernel now
 * prints there. */
static void test_block_reduction_in_serial_loop(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[3] = {2, 2, 2};
  tc_tensor *x = tc_input(f, TC_F32, 3, shape);
  tc_tensor *c = tc_set(f, x);
  int axes[2] = {0, 2};
  tc_tensor *s = tc_reduce(f, TC_REDUCE_SUM, c, 2, axes);
  tc_tensor *y = tc_binary(f, TC_SUB, c, s);
  TC_REQUIRE(y, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  int from[3] = {0, 1, 2}, to1[3] = {1, 0, 2}, to2[3] = {1, 2, 0};
  OK(f, tc_reorder(y, 3, from, to1));
  OK(f, tc_reorder(y, 3, from, to2));
  OK(f, tc_propagate_transforms(y));
  OK(f, tc_parallelize(y, 2, TC_TIDZ));
  OK(f, tc_parallelize_all_like(y));
  OK(f, tc_reorder(s, 3, from, to1));
  char d[128];
  TC_CHECK(strstr(tc_tensor_describe(s, d, sizeof d), "[iS{2}, rS{2}, rTIDz{2}]") != NULL, "sum: %s", d);
  float X[8], Y[8];
  double want[8], tol[8];
  fill(X, 8, 14);
  for (int b = 0; b < 2; b++) {
    double t = 0, m = 0;
    for (int a = 0; a < 2; a++)
      for (int k = 0; k < 2; k++) t += X[a * 4 + b * 2 + k], m += fabs(X[a * 4 + b * 2 + k]);
    for (int a = 0; a < 2; a++)
      for (int k = 0; k < 2; k++) {
        int i = a * 4 + b * 2 + k;
        want[i] = X[i] - t, tol[i] = sum_tol(4, m) + 2.5e-7 * fabs(want[i]);
      }
  }
  void *args[2] = {X, Y};
  if (!run_check(f, "block_reduction_in_loop", args, 2, want, tol, 8)) TC_SKIP("no OpenCL device");
  tc_fusion_free(f);
}

/* A reduction accumulated in place (shared or global memory) by a block
 * with threads it does not bind: one thread of them adds, not all.  The
 * sums of a shared cache of a bf16 sum came out 2x (the block 2 threads
 * deep in TIDz for another tensor, the reduction loop with barriers in
 * it).  A row sum into global memory in a block 8 threads wide (TIDx, for
 * another output) raced the same way; PoCL, which runs the work-items of
 * a stretch without barriers one after the other, happened to get it
 * right.  In blocks it does not bind, a global one is refused: each block
 * would add into it. */
static void test_reduction_in_place_one_writer(void) {
  /* shared: s = sum over axis 1 of bf16(x), x [2, 4, 6], computed into a
   * shared cache; the copy's loop [iS{1}, iTIDz{2}, iS{3}, iS{2}, iS{1},
   * iTIDx{6}] */
  tc_fusion *f = tc_fusion_new();
  int64_t shape[3] = {2, 4, 6};
  tc_tensor *x = tc_input(f, TC_F32, 3, shape);
  tc_tensor *b = tc_cast(f, x, TC_BF16);
  int ax = 1;
  tc_tensor *s = tc_reduce(f, TC_REDUCE_SUM, b, 1, &ax);
  TC_REQUIRE(s, "%s", tc_fusion_error(f));
  OK(f, tc_add_output(f, b));
  OK(f, tc_add_output(f, s));
  tc_tensor *acc = tc_cache_before(s);
  TC_REQUIRE(acc, "%s", tc_fusion_error(f));
  OK(f, tc_set_memory_type(acc, TC_MEM_SHARED));
  OK(f, tc_split(s, 1, 5, 1));
  OK(f, tc_split(s, 0, 8, 1));
  OK(f, tc_split(s, 3, 3, 0));
  OK(f, tc_parallelize(s, 5, TC_TIDX));
  OK(f, tc_parallelize(s, 1, TC_TIDZ));
  OK(f, tc_parallelize_all_like(s));
  OK(f, tc_inline_most(f));
  float X[48], S[12];
  uint16_t B[48];
  double want[12], tol[12];
  fill(X, 48, 16);
  for (int a = 0; a < 2; a++)
    for (int c = 0; c < 6; c++) {
      double t = 0, m = 0;
      for (int r = 0; r < 4; r++) {
        double v = tc_bf16_to_f32(tc_f32_to_bf16(X[(a * 4 + r) * 6 + c]));
        t += v, m += fabs(v);
      }
      want[a * 6 + c] = t, tol[a * 6 + c] = sum_tol(4, m);
    }
  void *args[3] = {X, B, S};
  if (!run_check(f, "shared_sum_one_writer", args, 3, want, tol, 12)) TC_SKIP("no OpenCL device");
  tc_fusion_free(f);
  /* global: s = sum over the rows of x [4, 8], y = 2 x on 8 threads */
  for (int blocks = 0; blocks < 2; blocks++) {
    f = tc_fusion_new();
    int64_t shape2[2] = {4, 8};
    x = tc_input(f, TC_F32, 2, shape2);
    s = tc_reduce(f, TC_REDUCE_SUM, x, 1, &ax);
    tc_tensor *y = tc_binary_scalar(f, TC_MUL, x, 2.0);
    TC_REQUIRE(s && y, "%s", tc_fusion_error(f));
    OK(f, tc_add_output(f, y));
    OK(f, tc_add_output(f, s));
    OK(f, tc_parallelize(y, 1, TC_TIDX));
    if (blocks) { /* and its rows on blocks, which s does not bind */
      OK(f, tc_parallelize(y, 0, TC_BIDX));
      tc_compile_options o = {TC_TARGET_OPENCL, NULL, "global_sum_blocks"};
      tc_status st;
      tc_kernel *k = tc_compile(f, &o, &st);
      TC_CHECK(!k && strstr(tc_fusion_error(f), "accumulated in place in global memory") &&
                   strstr(tc_fusion_error(f), "4 blocks along BIDx") && strstr(tc_fusion_error(f), "tc_cache_before(T1)"),
               "blocks: %s", tc_fusion_error(f));
      tc_kernel_free(k);
      tc_fusion_free(f);
      continue;
    }
    float X2[32], Y2[32], S2[4];
    double want2[4], tol2[4];
    fill(X2, 32, 17);
    for (int r = 0; r < 4; r++) {
      double t = 0, m = 0;
      for (int c = 0; c < 8; c++) t += X2[r * 8 + c], m += fabs(X2[r * 8 + c]);
      want2[r] = t, tol2[r] = sum_tol(8, m);
    }
    void *args2[3] = {X2, Y2, S2};
    if (!run_check(f, "global_sum_one_writer", args2, 3, want2, tol2, 4)) TC_SKIP("no OpenCL device");
    tc_fusion_free(f);
  }
}

/* tc_propagate_transforms onto a tensor that broadcasts along merged
 * axes: it keeps each axis of extent 1 whole.  The merge of two such
 * axes (the total of [6, 5], scaled) kept one of them, the merge of one
 * with an axis of the full extent (exp of a [1, 5] input) kept neither:
 * "T2's logical axis 0 cannot be computed from its loop domain". */
static void test_propagate_to_broadcast_operands(void) {
  float X[30], A[5], Y[30];
  double want[30], tol[30];
  fill(X, 30, 11);
  fill(A, 5, 12);
  for (int v = 0; v < 2; v++) {
    tc_fusion *f = tc_fusion_new();
    int64_t sx[2] = {6, 5}, sa[2] = {1, 5};
    tc_tensor *x = tc_input(f, TC_F32, 2, sx), *z, *y;
    double total = 0, abs = 0;
    for (int i = 0; i < 30; i++) total += X[i], abs += fabs(X[i]);
    if (v == 0) { /* y = x - 2 * sum(x), the schedule propagated from the sum */
      int axes[2] = {0, 1};
      tc_tensor *s = tc_reduce(f, TC_REDUCE_SUM, x, 2, axes);
      z = tc_binary_scalar(f, TC_MUL, s, 2.0);
      y = tc_binary(f, TC_SUB, x, z);
      TC_REQUIRE(y, "%s", tc_fusion_error(f));
      OK(f, tc_add_output(f, y));
      OK(f, tc_merge(s, 0, 1));
      OK(f, tc_propagate_transforms(s));
      for (int i = 0; i < 30; i++)
        want[i] = X[i] - 2 * total, tol[i] = 2 * sum_tol(30, abs) + 2.5e-7 * fabs(want[i]);
    } else { /* y = x + exp(a), a of [1, 5], the schedule propagated from y */
      tc_tensor *a = tc_input(f, TC_F32, 2, sa);
      z = tc_unary(f, TC_EXP, a);
      y = tc_binary(f, TC_ADD, x, z);
      TC_REQUIRE(y, "%s", tc_fusion_error(f));
      OK(f, tc_add_output(f, y));
      OK(f, tc_merge(y, 0, 1));
      OK(f, tc_split(y, 0, 4, 1));
      OK(f, tc_propagate_transforms(y));
      for (int i = 0; i < 30; i++)
        want[i] = X[i] + exp((double)A[i % 5]), tol[i] = 1e-6 * (fabs(want[i]) + exp((double)A[i % 5]));
    }
    char d[128];
    TC_CHECK_EQ_INT(tc_tensor_nloop(z), v == 0 ? 2 : 3);
    TC_CHECK(strstr(tc_tensor_describe(z, d, sizeof d), v == 0 ? "[iS{1}, iS{1}]" : "[iS{1}, iS{2}, iS{4}]") != NULL,
             "z's loop: %s", d);
    void *args[3] = {X, A, Y};
    if (v == 1) args[1] = A, args[2] = Y;
    else args[1] = Y;
    if (!run_check(f, v == 0 ? "bcast_merged_both" : "bcast_merged_one", args, v == 0 ? 2 : 3, want, tol, 30))
      TC_SKIP("no OpenCL device");
    tc_fusion_free(f);
  }
}

int main(void) {
  TC_RUN(test_row_sum_serial);
  TC_RUN(test_column_max_threads);
  TC_RUN(test_softmax_block);
  TC_RUN(test_softmax_inline_most);
  TC_RUN(test_inline_most_outside_reduction);
  TC_RUN(test_rmsnorm_block);
  TC_RUN(test_int_sum_wraps);
  TC_RUN(test_misuse);
  TC_RUN(test_cache_before_and_targets);
  TC_RUN(test_gather);
  TC_RUN(test_broadcast_affine_layernorm);
  TC_RUN(test_compare_where);
  TC_RUN(test_tree_forms);
  TC_RUN(test_refused_compute_at_keeps_schedule);
  TC_RUN(test_schedule_reaches_reduction_through_operand);
  TC_RUN(test_producer_inlined_into_reduction_loop);
  TC_RUN(test_producer_inlined_into_block_reduction);
  TC_RUN(test_iteration_loop_inside_thread_reduction);
  TC_RUN(test_partial_tiles_of_register_result);
  TC_RUN(test_block_reduction_of_one_thread);
  TC_RUN(test_block_reduction_in_serial_loop);
  TC_RUN(test_reduction_in_place_one_writer);
  TC_RUN(test_propagate_to_broadcast_operands);
  TC_MAIN_END();
}
