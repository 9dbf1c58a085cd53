/* compile_latency.c - how long tilec takes from nothing to kernel source:
 * building the fusion, scheduling it, lowering and printing (no device
 * compiler), for each example kernel and both printers.  Prints the median
 * and the minimum of many runs per kernel.  Goal: under 1 ms per kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "demo/examples.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  setenv("TILEC_CACHE", "0", 1); /* time codegen, not cache hits */
  int runs = argc > 1 ? atoi(argv[1]) : 200;
  if (runs < 1) runs = 1;
  double *t = malloc(sizeof(double) * (size_t)runs);
  int over = 0;
  printf("%-16s %-7s %12s %12s\n", "kernel", "target", "median_us", "min_us");
  for (int i = 0; i < tc_example_count(); i++) {
    const tc_example *e = tc_example_get(i);
    for (int target = 0; target < 2; target++) {
      tc_compile_options opt = {target ? TC_TARGET_CUDA : TC_TARGET_OPENCL, "sm_90a", e->name};
      for (int r = 0; r < runs; r++) {
        double t0 = now_us();
        tc_fusion *f = e->build();
        tc_status st;
        tc_kernel *k = tc_compile(f, &opt, &st);
        t[r] = now_us() - t0;
        if (!k) {
          fprintf(stderr, "%s: %s\n", e->name, tc_fusion_error(f));
          return 1;
        }
        tc_kernel_free(k);
        tc_fusion_free(f);
      }
      qsort(t, (size_t)runs, sizeof *t, cmp);
      double med = t[runs / 2];
      over += med > 1000.0;
      printf("%-16s %-7s %12.1f %12.1f\n", e->name, target ? "cuda" : "opencl", med, t[0]);
    }
  }
  printf("goal: under 1000 us per kernel: %s\n", over ? "MISSED" : "met");
  free(t);
  return 0;
}
