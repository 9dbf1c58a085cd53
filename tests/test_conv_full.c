/* test_conv_full.c - the slow convolution set (`make check-full`): every
 * ResNet-50 layer shape (N = 2) in all three directions, the n64 c64 k64
 * asymmetric-padding case in all three, and every small feature case of
 * tests/conv_test_util.h, each planned with the heuristic's parameters, run
 * on the OpenCL device and verified against the double-precision reference
 * with the sound bound of tc_conv_verify.  Prints one line per run (kernel
 * time, wall time, worst error as a fraction of the bound).  Runs only with
 * TILEC_CHECK_FULL=1 in the environment (the Makefile's tests/test_*.c
 * wildcard also builds it into `make test`, where it skips). */
#include "test.h"
#include "conv_test_util.h"

static double worst_seen;

static void run_all(const conv_case *cases, size_t n) {
  if (!getenv("TILEC_CHECK_FULL")) TC_SKIP("the full set runs with TILEC_CHECK_FULL=1 (make check-full)");
  tc_str devs;
  tc_str_init(&devs);
  int have = tc_cl_list_devices(&devs) > 0;
  tc_str_free(&devs);
  if (!have) TC_SKIP("no OpenCL device");
  for (size_t i = 0; i < n; i++)
    for (int dir = 1; dir <= 4; dir *= 2) {
      tc_conv_problem p = cases[i].p;
      p.dir = (tc_conv_dir)dir;
      TC_STR_LOCAL(msg);
      double ms = 0, t0 = tc_now_seconds();
      tc_conv_plan *plan = NULL;
      tc_status st = tc_conv_plan_make(&p, NULL, TC_TARGET_OPENCL, &plan, &msg);
      TC_CHECK(st == TC_OK, "%s %s: %s", cases[i].name, tc_conv_dir_name(p.dir), tc_str_cstr(&msg));
      if (st != TC_OK) continue;
      conv_bufs b;
      conv_bufs_alloc(&p, &b, 5);
      int64_t nw = 0;
      conv_poison(p.dtype, conv_written(&p, &b, &nw), nw);
      double t1 = tc_now_seconds();
      st = tc_conv_run(plan, NULL, b.in, b.fil, b.out, &ms, 0, NULL, &msg);
      double t2 = tc_now_seconds();
      TC_CHECK(st == TC_OK, "%s %s: %s", cases[i].name, tc_conv_dir_name(p.dir), tc_str_cstr(&msg));
      double worst = 0;
      if (st == TC_OK) {
        int64_t bad = tc_conv_verify(&p, b.in, b.fil, b.out, &worst, &msg);
        TC_CHECK(bad == 0, "%s %s: %s", cases[i].name, tc_conv_dir_name(p.dir), tc_str_cstr(&msg));
        if (worst > worst_seen) worst_seen = worst;
      }
      printf("  %-38s %-10s %d step%s, kernels %9.1f ms, run %6.2f s, total %6.2f s, "
             "worst %.2g of bound\n", cases[i].name, tc_conv_dir_name(p.dir), plan->nsteps,
             plan->nsteps == 1 ? " " : "s", ms, t2 - t1, tc_now_seconds() - t0, worst);
      fflush(stdout);
      conv_bufs_free(&b);
      tc_conv_plan_free(plan);
    }
}

static void test_full_small(void) { run_all(conv_small, conv_small_count); }
static void test_full_spec(void) { run_all(conv_spec, conv_spec_count); }
static void test_full_resnet50(void) { run_all(conv_resnet_all, conv_resnet_all_count); }

int main(void) {
  double t0 = tc_now_seconds();
  TC_RUN(test_full_small);
  TC_RUN(test_full_spec);
  TC_RUN(test_full_resnet50);
  printf("worst error %.3g of the bound; %.1f s\n", worst_seen, tc_now_seconds() - t0);
  TC_MAIN_END();
}
