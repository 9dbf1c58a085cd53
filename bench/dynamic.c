/* dynamic.c - one kernel for a whole sweep of M against one per M: the
 * compile count and the total time (tc_compile, the device compiler's
 * build at the first launch, and the runs) of a sweep of 50 values of M
 * through an RMSNorm over rows of 1024 and a GEMM + bias + ReLU with
 * N = 256, K = 128, in three ways:
 *   static    a fusion with M fixed per value: one compile each;
 *   symbolic  one kernel with M a size variable (tc_input_sym, divisor 1);
 *   family    a kernel family (tc_kernel_family): the kernel for "M a
 *             multiple of 16" where it holds, else the general one.
 * The kernel cache is a fresh directory, so every compile is a real one.
 * Each symbolic and family output is compared bitwise with the static
 * kernel's at the same M.  Usage: dynamic [--sweep N] [--target opencl];
 * exits 3 without an OpenCL device.  See docs/dynamic.md. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tilec/tilec.h"
#include "demo/norms.h"

#define COLS 1024
#define GN 256
#define GK 128

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* the problem: 0 the RMSNorm, 1 the GEMM + bias + ReLU; m -1: symbolic */
static tc_fusion *make(int prob, int64_t m, int64_t divisor) {
  tc_fusion *f = tc_fusion_new();
  tc_tensor *y;
  if (prob == 0) {
    y = tc_norm_build(f, TC_NORM_RMSNORM, TC_F32, m < 0 ? -divisor : m, COLS);
  } else {
    int64_t sa[2] = {m < 0 ? 2147483647 / GN / divisor * divisor : m, GK}, sb[2] = {GK, GN}, n = GN;
    tc_tensor *a = m < 0 ? tc_input_sym(f, TC_F32, 2, sa, "M", divisor) : tc_input(f, TC_F32, 2, sa);
    tc_tensor *b = tc_input(f, TC_F32, 2, sb), *bias = tc_input(f, TC_F32, 1, &n);
    bool is_new[2] = {true, false};
    y = tc_unary(f, TC_RELU, tc_binary(f, TC_ADD, tc_matmul(f, a, b), tc_broadcast(f, bias, 2, is_new)));
  }
  if (!y || tc_add_output(f, y) || tc_schedule_auto(f, TC_TARGET_OPENCL, NULL)) {
    fprintf(stderr, "dynamic: %s\n", tc_fusion_error(f));
    exit(1);
  }
  return f;
}

static tc_fusion *make_norm(int64_t divisor, void *ctx) { (void)ctx; return make(0, -1, divisor); }
static tc_fusion *make_gemm(int64_t divisor, void *ctx) { (void)ctx; return make(1, -1, divisor); }


/* the sweep: 50 values from 1 to about 2000, a few multiples of 16 */
static int64_t sweep_m(int i) { return i % 5 == 4 ? 48 * (i + 1) : 1 + 41 * i; }

typedef struct bufs {
  float *x, *b, *bias, *y, *want;
  float eps;
} bufs;

/* args for the problem (sym: M's slot first) into a[] */
static void args_of(int prob, bufs *d, float *out, int sym, void **a) {
  int i = 0;
  if (sym) a[i++] = NULL;
  a[i++] = d->x;
  if (prob == 0) a[i++] = &d->eps;
  else a[i++] = d->b, a[i++] = d->bias;
  a[i] = out;
}

int main(int argc, char **argv) {
  int nsweep = 50;
  for (int i = 1; i < argc; i++) {
    char *end = NULL;
    if (!strcmp(argv[i], "--sweep") && i + 1 < argc) {
      nsweep = (int)strtol(argv[++i], &end, 10);
      if (*end || nsweep < 1 || nsweep > 1000) {
        fprintf(stderr, "dynamic: --sweep takes 1..1000, got '%s'\n", argv[i]);
        return 2;
      }
    } else if (!strcmp(argv[i], "--target") && i + 1 < argc && !strcmp(argv[i + 1], "opencl")) {
      i++;
    } else {
      fprintf(stderr, "usage: dynamic [--sweep N] [--target opencl]\n");
      return 2;
    }
  }
  char dir[] = "/tmp/tilec-bench-dynamic.XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("TILEC_CACHE_DIR", dir, 1);
  /* PoCL keeps built programs too: off, so that every new kernel is built */
  setenv("POCL_KERNEL_CACHE", "0", 0);
  int64_t maxm = 0;
  for (int i = 0; i < nsweep; i++) maxm = sweep_m(i) > maxm ? sweep_m(i) : maxm;
  bufs d;
  size_t xn = (size_t)maxm * (COLS > GK ? COLS : GK), yn = (size_t)maxm * (COLS > GN ? COLS : GN);
  d.x = malloc(xn * 4), d.b = malloc((size_t)GK * GN * 4), d.bias = malloc(GN * 4);
  d.y = malloc(yn * 4), d.want = malloc(yn * 4), d.eps = 1e-5f;
  for (size_t i = 0; i < xn; i++) d.x[i] = (float)((i * 2654435761u) % 1013) / 1013.0f - 0.5f;
  for (size_t i = 0; i < (size_t)GK * GN; i++) d.b[i] = (float)((i * 40503u) % 997) / 997.0f - 0.5f;
  for (int i = 0; i < GN; i++) d.bias[i] = (float)i / GN - 0.5f;
  static const char *const probs[2] = {"rmsnorm 1024", "gemm+bias+relu 256x128"};
  static const char *const ways[3] = {"static", "symbolic", "family"};
  printf("sweep of %d values of M (1 .. %lld) on OpenCL\n", nsweep, (long long)maxm);
  printf("%-24s %-9s %9s %10s %10s %10s %8s\n", "problem", "way", "compiles", "compile_s", "runs_s",
         "total_s", "bitwise");
  float **keep = calloc((size_t)nsweep, sizeof *keep);
  int rc = 0;
  for (int prob = 0; prob < 2 && !rc; prob++) {
    /* static first: its outputs are what the others must match */
    for (int way = 0; way < 3 && !rc; way++) {
      tc_cache_clear(NULL);
      tc_compile_options o = {TC_TARGET_OPENCL, NULL, prob ? "dyn_gemm" : "dyn_norm"};
      double t_compile = 0, t_runs = 0;
      int compiles = 0, same = 1;
      tc_kernel *one = NULL;
      tc_fusion *onef = NULL;
      tc_kernel_family *fam = way == 2 ? tc_family_new(prob ? make_gemm : make_norm, NULL, &o) : NULL;
      for (int i = 0; i < nsweep && !rc; i++) {
        int64_t m = sweep_m(i);
        size_t n = (size_t)m * (prob ? GN : COLS);
        void *a[6];
        args_of(prob, &d, d.y, way != 0, a);
        tc_status st = TC_OK;
        tc_kernel *k = NULL;
        tc_fusion *f = NULL;
        double c0 = now_s();
        if (way == 0) {
          f = make(prob, m, 1);
          k = tc_compile(f, &o, &st);
          compiles++;
        } else if (way == 1) {
          if (!one) onef = make(prob, -1, 1), one = tc_compile(onef, &o, &st), compiles++;
          k = one;
        } else {
          k = tc_family_kernel(fam, &m, 1, &st);
          tc_family_counts(fam, NULL, &compiles, NULL);
        }
        t_compile += now_s() - c0;
        if (!k) {
          fprintf(stderr, "dynamic: %s\n", f ? tc_fusion_error(f) : onef ? tc_fusion_error(onef) : tc_family_error(fam));
          rc = 1;
          break;
        }
        /* (the first launch of a kernel builds it with the device compiler) */
        double r0 = now_s();
        st = way == 0 ? tc_kernel_run(k, a, NULL, NULL) : tc_kernel_run_sizes(k, a, &m, 1, NULL, NULL);
        t_runs += now_s() - r0;
        if (st == TC_ERR_NO_DEVICE) {
          printf("no OpenCL device: %s\n", tc_kernel_error(k));
          rc = 3;
        } else if (st) {
          fprintf(stderr, "dynamic: M = %lld: %s\n", (long long)m, tc_kernel_error(k));
          rc = 1;
        } else if (way == 0) {
          free(keep[i]);
          keep[i] = malloc(n * 4);
          memcpy(keep[i], d.y, n * 4);
        } else {
          same &= memcmp(d.y, keep[i], n * 4) == 0;
        }
        if (way == 0) tc_kernel_free(k), tc_fusion_free(f);
      }
      if (!rc)
        printf("%-24s %-9s %9d %10.3f %10.3f %10.3f %8s\n", probs[prob], ways[way], compiles, t_compile,
               t_runs, t_compile + t_runs, way == 0 ? "-" : same ? "yes" : "NO");
      if (!rc && way && !same) rc = 1;
      tc_kernel_free(one), tc_fusion_free(onef), tc_family_free(fam);
    }
  }
  for (int i = 0; i < nsweep; i++) free(keep[i]);
  free(keep);
  tc_cache_clear(NULL);
  rmdir(dir);
  free(d.x), free(d.b), free(d.bias), free(d.y), free(d.want);
  return rc;
}
