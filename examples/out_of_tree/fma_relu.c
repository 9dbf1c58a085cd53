/* fma_relu.c - a program outside the tilec tree that uses an installed
 * tilec: it builds out = relu(a * b + c) on [100, 75] floats, schedules it
 * in 8 x 32 tiles (tiles on blocks, columns on threads), compiles it for
 * OpenCL, runs it on the default device (PoCL unless $TILEC_OPENCL_DEVICE
 * says otherwise) and compares every element with tilec's C reference.
 * Exit status 0 only when the kernel ran and every element matched. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <tilec/tilec.h>

enum { M = 100, N = 75 };

static int fail(const char *what, tc_status st, const char *msg) {
  fprintf(stderr, "fma_relu: %s: %s: %s\n", what, tc_status_name(st), msg);
  return 1;
}

int main(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {M, N};
  tc_tensor *a = tc_input(f, TC_F32, 2, shape);
  tc_tensor *b = tc_input(f, TC_F32, 2, shape);
  tc_tensor *c = tc_input(f, TC_F32, 2, shape);
  tc_tensor *out = tc_unary(f, TC_RELU, tc_binary(f, TC_ADD, tc_binary(f, TC_MUL, a, b), c));
  tc_add_output(f, out);

  /* [M, N] -> [Mo, Mi, No, Ni] -> [Mo, No, Mi, Ni] -> [Mo*No, Mi, Ni] */
  int from[2] = {1, 2}, to[2] = {2, 1};
  tc_status st = TC_OK;
  if (!st) st = tc_split(out, 0, 8, 1);
  if (!st) st = tc_split(out, 2, 32, 1);
  if (!st) st = tc_reorder(out, 2, from, to);
  if (!st) st = tc_merge(out, 0, 1);
  if (!st) st = tc_parallelize(out, 0, TC_BIDX);
  if (!st) st = tc_parallelize(out, 2, TC_TIDX);
  if (!st) st = tc_propagate_transforms(out);
  if (!st) st = tc_parallelize_all_like(out);
  if (!st) st = tc_inline_most(f);
  if (st) return fail("schedule", st, tc_fusion_error(f));

  tc_compile_options opt = {TC_TARGET_OPENCL, NULL, "fma_relu"};
  tc_kernel *k = tc_compile(f, &opt, &st);
  if (!k) return fail("compile", st, tc_fusion_error(f));

  float *in_a = malloc(sizeof(float) * M * N), *in_b = malloc(sizeof(float) * M * N);
  float *in_c = malloc(sizeof(float) * M * N), *got = malloc(sizeof(float) * M * N);
  float *want = malloc(sizeof(float) * M * N);
  if (!in_a || !in_b || !in_c || !got || !want) return fail("malloc", TC_ERR_RUNTIME, "out of memory");
  for (int i = 0; i < M * N; i++) {
    in_a[i] = (float)(i % 17) * 0.25f - 2.0f;
    in_b[i] = (float)(i % 5) - 1.5f;
    in_c[i] = (float)(i % 3) * 0.5f;
  }

  void *args[4] = {in_a, in_b, in_c, got}; /* the inputs, then the output */
  double ms = 0;
  st = tc_kernel_run(k, args, NULL, &ms);
  if (st) return fail("run", st, tc_kernel_error(k));
  void *ref[4] = {in_a, in_b, in_c, want};
  st = tc_reference_run(f, ref);
  if (st) return fail("reference", st, tc_fusion_error(f));

  int bad = 0;
  double sum = 0;
  for (int i = 0; i < M * N; i++) {
    sum += got[i];
    if (fabsf(got[i] - want[i]) > 1e-5f * (1.0f + fabsf(want[i]))) {
      if (!bad) fprintf(stderr, "fma_relu: element %d: got %g, expected %g\n", i, got[i], want[i]);
      bad++;
    }
  }
  int64_t grid[3], block[3];
  tc_kernel_launch_dims(k, grid, block);
  printf("fma_relu: tilec %s, %d blocks of %d threads, %.3f ms\n", TILEC_VERSION, (int)grid[0],
         (int)block[0], ms);
  printf("fma_relu: out[1] = %g, sum of out = %g\n", got[1], sum);
  if (bad)
    printf("fma_relu: %d of %d elements differ from the reference\n", bad, M * N);
  else
    printf("fma_relu: all %d elements match the reference\n", M * N);

  free(in_a), free(in_b), free(in_c), free(got), free(want);
  tc_kernel_free(k);
  tc_fusion_free(f);
  return bad ? 1 : 0;
}
