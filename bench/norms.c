/* norms.c - bytes per second of the normalizations (softmax, RMSNorm,
 * LayerNorm, and the backward of softmax and RMSNorm) as tc_schedule_auto
 * schedules them, over row lengths N = 256
 * .. 262144 at rows x N = a fixed total, each verified against
 * tc_reference_run on its first run (the largest error over the largest
 * |y|, "max_rel", printed) and then
 * timed (median of -i runs; the time tc_kernel_run reports).  Bytes moved:
 * each input read once and the result written once, the least any kernel
 * can move.
 *
 *   build/bench/norms [--target opencl|cuda] [-t f32|f16|bf16]
 *                     [--total LOG2] [-i N] [--only NAME]
 *
 * Defaults: OpenCL (PoCL: a check that it runs, not a GPU figure), f32,
 * 2^20 elements, 3 runs.  On an H100: --target cuda -t bf16 --total 27.
 * Exit status: 0 all verified, 1 a kernel failed or differed, 2 bad
 * option, 3 no device for the target. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo/norms.h"

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int usage(const char *why) {
  fprintf(stderr, "norms: %s\nusage: norms [--target opencl|cuda] [-t f32|f16|bf16] [--total LOG2] "
          "[-i N] [--only NAME]\n", why);
  return 2;
}

int main(int argc, char **argv) {
  tc_target target = TC_TARGET_OPENCL;
  tc_dtype dt = TC_F32;
  int total_log2 = 20, runs = 3;
  const char *only = NULL;
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(argv[i], "--target") && v) {
      if (!strcmp(v, "cuda")) target = TC_TARGET_CUDA;
      else if (strcmp(v, "opencl")) return usage("--target takes opencl or cuda");
    } else if (!strcmp(argv[i], "-t") && v) {
      if (!strcmp(v, "f16")) dt = TC_F16;
      else if (!strcmp(v, "bf16")) dt = TC_BF16;
      else if (strcmp(v, "f32")) return usage("-t takes f32, f16 or bf16");
    } else if (!strcmp(argv[i], "--total") && v) {
      total_log2 = atoi(v);
      if (total_log2 < 18 || total_log2 > 30) return usage("--total takes 18..30");
    } else if (!strcmp(argv[i], "-i") && v) {
      runs = atoi(v);
      if (runs < 1 || runs > 1000) return usage("-i takes 1..1000");
    } else if (!strcmp(argv[i], "--only") && v) {
      only = v;
    } else {
      return usage("unknown option or missing value");
    }
    i++;
  }
  size_t esz = dt == TC_F32 ? 4 : 2;
  int64_t total = (int64_t)1 << total_log2;
  printf("%-10s %8s %8s %10s %10s %10s  %s\n", "kernel", "rows", "N", "ms", "GB/s", "max_rel", "schedule");
  int failed = 0, ran = 0;
  double *t = malloc(sizeof(double) * (size_t)runs);
  for (int kind = 0; kind < TC_NORM_COUNT; kind++) {
    if (only && strcmp(only, tc_norm_name((tc_norm_kind)kind))) continue;
    for (int64_t n = 256; n <= 262144; n *= 4) {
      int64_t rows = total / n;
      tc_fusion *f = tc_fusion_new();
      tc_tensor *y = tc_norm_build(f, (tc_norm_kind)kind, dt, rows, n);
      tc_status st = y ? tc_add_output(f, y) : TC_ERR_ARGUMENT;
      if (!st) st = tc_schedule_auto(f, target, NULL);
      tc_compile_options o = {target, NULL, tc_norm_name((tc_norm_kind)kind)};
      tc_kernel *k = st ? NULL : tc_compile(f, &o, &st);
      if (!k) {
        fprintf(stderr, "%s N=%lld: %s\n", o.kernel_name, (long long)n, tc_fusion_error(f));
        failed++;
        tc_fusion_free(f);
        continue;
      }
      float *x = malloc((size_t)total * 4), *ref = malloc((size_t)total * 4);
      void *xin = malloc((size_t)total * esz), *yout = malloc((size_t)total * esz), *yref = malloc((size_t)total * esz);
      for (int64_t i = 0; i < total; i++) x[i] = (float)((i * 7919) % 2003) / 250.0f - 4.0f;
      for (int64_t i = 0; i < total; i++) {
        if (dt == TC_F32) ((float *)xin)[i] = x[i];
        else ((unsigned short *)xin)[i] = dt == TC_F16 ? tc_f32_to_f16(x[i]) : tc_f32_to_bf16(x[i]);
      }
      /* the backward kernels read their two inputs from the same buffer;
       * xent's labels are rows x 1 i32 */
      int nin = tc_norm_inputs((tc_norm_kind)kind);
      int32_t *label = calloc((size_t)rows, sizeof(int32_t));
      for (int64_t i = 0; i < rows; i++) label[i] = (int32_t)((i * 40503) % n);
      void *second = kind == TC_NORM_XENT ? (void *)label : xin;
      /* the tensor inputs, eps (a scalar input) where the kind reads it, y */
      float eps = TC_NORM_EPS;
      void *args[4] = {xin}, *rargs[4] = {xin};
      int np = 1;
      if (nin > 1) args[np] = rargs[np] = second, np++;
      if (tc_norm_has_eps((tc_norm_kind)kind)) args[np] = rargs[np] = &eps, np++;
      args[np] = yout, rargs[np] = yref;
      int64_t nout = rows * tc_norm_out_cols((tc_norm_kind)kind, n);
      double ms = 0;
      st = tc_kernel_run(k, args, NULL, &ms);
      if (st == TC_ERR_NO_DEVICE) {
        fprintf(stderr, "norms: no device for %s: %s\n", tc_target_name(target), tc_kernel_error(k));
        free(x), free(ref), free(xin), free(yout), free(yref), free(label), free(t);
        tc_kernel_free(k);
        tc_fusion_free(f);
        return 3;
      }
      double maxrel = 0, maxerr = 0, maxref = 0;
      if (!st && !tc_reference_run(f, rargs)) {
        for (int64_t i = 0; i < nout; i++) {
          double a, b;
          if (dt == TC_F32) a = ((float *)yout)[i], b = ((float *)yref)[i];
          else if (dt == TC_F16) a = tc_f16_to_f32(((unsigned short *)yout)[i]), b = tc_f16_to_f32(((unsigned short *)yref)[i]);
          else a = tc_bf16_to_f32(((unsigned short *)yout)[i]), b = tc_bf16_to_f32(((unsigned short *)yref)[i]);
          if (!(fabs(a - b) <= maxerr)) maxerr = fabs(a - b); /* NaN stays */
          if (fabs(b) > maxref) maxref = fabs(b);
        }
        maxrel = maxerr / (maxref > 0 ? maxref : 1);
      }
      double tol = dt == TC_F32 ? 1e-4 : dt == TC_F16 ? 2e-3 : 1.6e-2;
      int bad = st != TC_OK || !(maxrel <= tol);
      for (int r = 0; r < runs && !st; r++) st = tc_kernel_run(k, args, NULL, &t[r]);
      if (!st) qsort(t, (size_t)runs, sizeof *t, cmp), ms = t[runs / 2];
      double bytes = kind == TC_NORM_XENT ? (double)total * (double)esz + (double)rows * (4.0 + (double)esz)
                                          : (double)(nin + 1) * (double)total * (double)esz;
      double gbs = ms > 0 ? bytes / (ms * 1e6) : 0;
      printf("%-10s %8lld %8lld %10.4f %10.2f %10.2e  %s%s\n", o.kernel_name, (long long)rows, (long long)n,
             ms, gbs, maxrel, tc_fusion_schedule_note(f) + strlen("tc_schedule_auto: "),
             bad ? (st ? "  RUN FAILED" : "  DIFFERS") : "");
      if (st) fprintf(stderr, "%s N=%lld: %s\n", o.kernel_name, (long long)n, tc_kernel_error(k));
      failed += bad, ran++;
      free(x), free(ref), free(xin), free(yout), free(yref), free(label);
      tc_kernel_free(k);
      tc_fusion_free(f);
    }
  }
  free(t);
  printf("norms: %d kernels ran, %d failed or differed\n", ran, failed);
  return failed ? 1 : 0;
}
