/* test_permute_self.c - a tensor combined with a permutation of itself.
 *
 * With equal extents both axes of x look alike, so only the ops can say
 * which axis of x^T (and of the tensors computed from it) corresponds to
 * which axis of x + x^T.  Each fusion is scheduled with the calls that
 * map axes across tensors (tc_propagate_transforms, tc_inline_most,
 * tc_parallelize_all_like, tc_inline_at), compiled for OpenCL, run on the
 * default device and compared with values computed here in plain C and
 * with tc_reference_run.  A schedule no loop order can satisfy must be
 * refused with a message saying why. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

/* out = in permuted: out's logical axis k is in's axis perm[k]. */
static void permute_c(const float *in, const int64_t *shape, int rank, const int *perm, float *out) {
  int64_t n = 1, oshape[8], idx[8], istride[8];
  for (int d = 0; d < rank; d++) n *= shape[d], oshape[d] = shape[perm[d]];
  istride[rank - 1] = 1;
  for (int d = rank - 2; d >= 0; d--) istride[d] = istride[d + 1] * shape[d + 1];
  for (int64_t o = 0; o < n; o++) {
    int64_t r = o, src = 0;
    for (int d = rank - 1; d >= 0; d--) idx[d] = r % oshape[d], r /= oshape[d];
    for (int d = 0; d < rank; d++) src += idx[d] * istride[perm[d]];
    out[o] = in[src];
  }
}

static void fill(float *p, int64_t n, int salt) {
  for (int64_t i = 0; i < n; i++) p[i] = (float)((i * 7 + salt) % 23) - 11.0f;
}

/* Compiles f for OpenCL and runs it on args (inputs, then the one
 * output of n f32 elements); checks the output against want and against
 * tc_reference_run.  Returns 0 when there is no device (the test skips). */
static int run_check(tc_fusion *f, const char *name, void **args, int nargs, const float *want, int64_t n) {
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
  int bad = 0;
  for (int64_t i = 0; i < n && st == TC_OK; i++)
    if (out[i] != want[i] && bad++ < 6)
      TC_CHECK(0, "%s element %lld: kernel %g, want %g\n%s", name, (long long)i, out[i], want[i],
               bad == 1 ? tc_kernel_source(k) : "");
  void *ref[4];
  float *rout = malloc((size_t)n * sizeof(float));
  for (int i = 0; i < nargs - 1; i++) ref[i] = args[i];
  ref[nargs - 1] = rout;
  OK(f, tc_reference_run(f, ref));
  for (int64_t i = 0; i < n; i++)
    if (rout[i] != want[i]) {
      TC_CHECK(0, "%s: reference element %lld is %g, want %g", name, (long long)i, rout[i], want[i]);
      break;
    }
  free(rout);
  tc_kernel_free(k);
  return 1;
}

/* set(x + x^T) on [2, 2], transforms propagated from the output, inlined
 * as far as possible.  x = {1, 2, 3, 4}: out = {1+1, 2+3, 3+2, 4+4}. */
static void test_add_transpose_2x2_inline_most(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {2, 2};
  int perm[2] = {1, 0};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape);
  tc_tensor *out = tc_set(f, tc_binary(f, TC_ADD, x, tc_permute(f, x, perm)));
  OK(f, tc_add_output(f, out));
  OK(f, tc_propagate_transforms(out));
  OK(f, tc_inline_most(f));
  float X[4] = {1, 2, 3, 4}, O[4], W[4] = {2, 5, 5, 8};
  void *args[2] = {X, O};
  if (!run_check(f, "add_transpose_2x2", args, 2, W, 4)) TC_SKIP("no OpenCL device");
  tc_fusion_free(f);
}

/* x + x^T on [4, 4] with the output's axis 1 on TIDx, parallelized alike:
 * x^T's element (i, j) must be computed by the thread that reads it,
 * thread j. */
static void test_add_transpose_4x4_tidx(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {4, 4};
  int perm[2] = {1, 0};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape);
  tc_tensor *out = tc_binary(f, TC_ADD, x, tc_permute(f, x, perm));
  OK(f, tc_add_output(f, out));
  OK(f, tc_parallelize(out, 1, TC_TIDX));
  OK(f, tc_parallelize_all_like(out));
  float X[16], XT[16], O[16], W[16];
  fill(X, 16, 1);
  permute_c(X, shape, 2, perm, XT);
  for (int i = 0; i < 16; i++) W[i] = X[i] + XT[i];
  void *args[2] = {X, O};
  if (!run_check(f, "add_transpose_4x4_tidx", args, 2, W, 16)) TC_SKIP("no OpenCL device");
  tc_fusion_free(f);
}

/* neg(permute(x + permute(permute(x, {2,0,1}), {1,0,2}), {2,0,1})) on
 * [40, 4, 4], the output's axis 2 on TIDy, parallelized alike. */
static void test_double_permute_3d_tidy(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[3] = {40, 4, 4}, s1[3] = {4, 40, 4}, s3[3] = {40, 4, 4};
  int p1[3] = {2, 0, 1}, p2[3] = {1, 0, 2}, p4[3] = {2, 0, 1};
  tc_tensor *t0 = tc_input(f, TC_F32, 3, shape);
  tc_tensor *t1 = tc_permute(f, t0, p1);
  tc_tensor *t2 = tc_permute(f, t1, p2);
  tc_tensor *t3 = tc_binary(f, TC_ADD, t0, t2);
  tc_tensor *t4 = tc_permute(f, t3, p4);
  tc_tensor *out = tc_unary(f, TC_NEG, t4);
  OK(f, tc_add_output(f, out));
  OK(f, tc_parallelize(out, 2, TC_TIDY));
  OK(f, tc_parallelize_all_like(out));
  enum { N = 640 };
  float X[N], A[N], B[N], C[N], O[N], W[N];
  fill(X, N, 3);
  permute_c(X, shape, 3, p1, A);
  permute_c(A, s1, 3, p2, B);
  for (int i = 0; i < N; i++) C[i] = X[i] + B[i];
  permute_c(C, s3, 3, p4, W);
  for (int i = 0; i < N; i++) W[i] = -W[i];
  void *args[2] = {X, O};
  if (!run_check(f, "double_permute_3d", args, 2, W, N)) TC_SKIP("no OpenCL device");
  tc_fusion_free(f);
}

/* a - permute(b, {1, 0, 2}) on [6, 6, 3], the output's axis 0 on TIDx,
 * parallelized alike. */
static void test_sub_permuted_other_tidx(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[3] = {6, 6, 3};
  int perm[3] = {1, 0, 2};
  tc_tensor *a = tc_input(f, TC_F32, 3, shape);
  tc_tensor *b = tc_input(f, TC_F32, 3, shape);
  tc_tensor *out = tc_binary(f, TC_SUB, a, tc_permute(f, b, perm));
  OK(f, tc_add_output(f, out));
  OK(f, tc_parallelize(out, 0, TC_TIDX));
  OK(f, tc_parallelize_all_like(out));
  enum { N = 108 };
  float A[N], B[N], BT[N], O[N], W[N];
  fill(A, N, 5), fill(B, N, 9);
  permute_c(B, shape, 3, perm, BT);
  for (int i = 0; i < N; i++) W[i] = A[i] - BT[i];
  void *args[3] = {A, B, O};
  if (!run_check(f, "sub_permuted_other", args, 3, W, N)) TC_SKIP("no OpenCL device");
  tc_fusion_free(f);
}

/* f32(x + x^T) with x in f16 on [2, 2], propagated and inlined.  The halves
 * of 1, 2, 3, 4 are 0x3c00, 0x4000, 0x4200, 0x4400; out = {2, 5, 5, 8}. */
static void test_add_transpose_f16_cast(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {2, 2};
  int perm[2] = {1, 0};
  tc_tensor *x = tc_input(f, TC_F16, 2, shape);
  tc_tensor *sum = tc_binary(f, TC_ADD, x, tc_permute(f, x, perm));
  tc_tensor *out = tc_cast(f, sum, TC_F32);
  OK(f, tc_add_output(f, out));
  OK(f, tc_propagate_transforms(out));
  OK(f, tc_inline_most(f));
  uint16_t X[4] = {0x3c00, 0x4000, 0x4200, 0x4400};
  float O[4], W[4] = {2, 5, 5, 8};
  void *args[2] = {X, O};
  if (!run_check(f, "add_transpose_f16", args, 2, W, 4)) TC_SKIP("no OpenCL device");
  tc_fusion_free(f);
}

/* y = set(x) read by y^T and by y + y^T: inlined at position 1, y's loop
 * axis 0 would have to be y's axis 0 for the sum and y's axis 1 for the
 * transpose.  No loop order serves both: refused, naming the reader. */
static void test_inline_into_self_and_transpose_refused(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {4, 4};
  int perm[2] = {1, 0};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape);
  tc_tensor *y = tc_set(f, x);
  tc_tensor *yt = tc_permute(f, y, perm);
  tc_tensor *out = tc_binary(f, TC_ADD, y, yt);
  OK(f, tc_add_output(f, out));
  OK(f, tc_propagate_transforms(out));
  tc_status st = tc_inline_at(y, 1);
  const char *msg = tc_fusion_error(f);
  TC_CHECK(st == TC_ERR_SCHEDULE, "inline_at: %s", tc_status_name(st));
  TC_CHECK(strstr(msg, "permuted") && strstr(msg, "position 0 or less"), "message: %s", msg);
  /* inlined where it can be, the fusion computes x + x^T */
  OK(f, tc_inline_most(f));
  float X[16], XT[16], O[16], W[16];
  fill(X, 16, 2);
  permute_c(X, shape, 2, perm, XT);
  for (int i = 0; i < 16; i++) W[i] = X[i] + XT[i];
  void *args[2] = {X, O};
  if (!run_check(f, "self_and_transpose", args, 2, W, 16)) TC_SKIP("no OpenCL device");
  tc_fusion_free(f);
}

/* d = x - x is inlined into e = x + d and into out = d + e^T, which joins
 * the loops of e and out; out reads e transposed, so in that shared loop
 * it would read elements of e not computed yet.  Compiled, the kernel
 * must be right; refused, the message must say why. */
static void test_shared_loop_permuted_reader(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {2, 2};
  int perm[2] = {1, 0};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape);
  tc_tensor *d = tc_binary(f, TC_SUB, x, x);
  tc_tensor *e = tc_binary(f, TC_ADD, x, d);
  tc_tensor *out = tc_binary(f, TC_ADD, d, tc_permute(f, e, perm));
  OK(f, tc_add_output(f, out));
  OK(f, tc_inline_most(f));
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "shared_loop"};
  tc_status st = TC_OK;
  tc_kernel *k = tc_compile(f, &o, &st);
  if (!k) {
    const char *msg = tc_fusion_error(f);
    TC_CHECK(st == TC_ERR_SCHEDULE && strstr(msg, "later iteration") && strstr(msg, "permuted"),
             "%s: %s", tc_status_name(st), msg);
  } else {
    tc_kernel_free(k);
    float X[4] = {1, 2, 3, 4}, O[4], W[4] = {1, 3, 2, 4}; /* out = x^T */
    void *args[2] = {X, O};
    if (!run_check(f, "shared_loop", args, 2, W, 4)) TC_SKIP("no OpenCL device");
  }
  tc_fusion_free(f);
}

int main(void) {
  TC_RUN(test_add_transpose_2x2_inline_most);
  TC_RUN(test_add_transpose_4x4_tidx);
  TC_RUN(test_double_permute_3d_tidy);
  TC_RUN(test_sub_permuted_other_tidx);
  TC_RUN(test_add_transpose_f16_cast);
  TC_RUN(test_inline_into_self_and_transpose_refused);
  TC_RUN(test_shared_loop_permuted_reader);
  TC_MAIN_END();
}
