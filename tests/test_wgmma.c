/* test_wgmma.c - the wgmma GEMM (NVIDIA sm_90a warp groups, m64nNk16,
 * f16/bf16 inputs from shared memory through matrix descriptors, f32
 * accumulation; docs/wgmma.md).
 *
 *   - the generator's accumulator layout against CUTLASS's CLayout_64xN
 *     (= the PTX ISA's m64nNk16 D fragment figure), written here
 *     independently; a bijection;
 *   - the wgmma: perf-config form: parse, format, derived fields, errors;
 *   - wgmma GEMMs on OpenCL, where the emulation reads the shared tiles
 *     through the descriptors, vs a plain C reference: f16 and bf16, N 64
 *     and 128, 1 and 2 warp groups, padded M/N/K, transposed operands;
 *   - injected wrong layouts (core matrices transposed, LBO/SBO swapped, C
 *     rows swapped) give wrong results;
 *   - the CUDA sources compile with NVRTC for sm_90a and the PTX holds
 *     wgmma.mma_async; sm_90 (without a) and sm_80 fail with the #error
 *     (skipped where NVRTC cannot be loaded). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/gemm.h"
#include "ops/gemm_gen.h"
#include "runtime/runtime.h"
#include "test.h"

#define GEMM_TEST_SEED 4242
#include "gemm_test_util.h"
#include "base/test_hooks.h"

static tc_cl *cl;

static int has(const char *s, const char *part) { return s && strstr(s, part) != NULL; }

static void test_wgmma_layout(void) {
  int seen[64 * 256];
  for (int n = 8; n <= 256; n += 8) {
    memset(seen, 0, sizeof seen);
    for (int t = 0; t < 128; t++)
      for (int j = 0; j < n / 2; j++) {
        /* CuTe CLayout_64xN: ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512)),
         * a column-major 64 x N offset m + 64 n */
        int t0 = t % 4, t1 = (t / 4) % 8, t2 = t / 32, v0 = j % 2, v1 = (j / 2) % 2, v2 = j / 4;
        int off = 128 * t0 + t1 + 16 * t2 + 64 * v0 + 8 * v1 + 512 * v2;
        int r, c;
        tc_wgmma_d_layout(t, j, &r, &c);
        TC_CHECK(r == off % 64 && c == off / 64, "N%d t%d j%d: [%d][%d], CuTe [%d][%d]", n, t, j,
                 r, c, off % 64, off / 64);
        if (r >= 0 && r < 64 && c >= 0 && c < n) seen[r * 256 + c]++;
      }
    for (int r = 0; r < 64; r++)
      for (int c = 0; c < n; c++) TC_CHECK(seen[r * 256 + c] == 1, "N%d [%d][%d]", n, r, c);
  }
}

static tc_gemm_shape shape16(int64_t m, int64_t n, int64_t k, tc_dtype t) {
  tc_gemm_shape s;
  memset(&s, 0, sizeof s);
  s.g = 1, s.m = m, s.n = n, s.k = k, s.dtype = t;
  s.a_vec_k = s.a_vec_m = s.b_vec_k = s.b_vec_n = s.c_vec_n = 1;
  return s;
}

static void test_wgmma_params(void) {
  tc_gemm_params p;
  char buf[64];
  TC_STR_LOCAL(err);
  tc_gemm_shape s = shape16(256, 256, 256, TC_F16);
  TC_REQUIRE(tc_gemm_params_parse("wgmma:128,128,32", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_gemm_params_derive(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(tc_gemm_params_is_wgmma(&p) && tc_gemm_params_is_mma(&p) && tc_gemm_params_is_xdlops(&p),
           "kind");
  TC_CHECK_EQ_INT(p.block_size, 256);
  TC_CHECK_EQ_INT(p.waves_m, 2);
  TC_CHECK_EQ_INT(p.n_per_wave, 128);
  tc_gemm_params_format(&p, buf, sizeof buf);
  TC_CHECK(strcmp(buf, "wgmma:128,128,32") == 0, "%s", buf);
  static const struct { const char *cfg, *part; } bad[] = {
      {"wgmma:96,64,16", "multiple of 64"},       {"wgmma:64,60,16", "multiple of 8 up to 256"},
      {"wgmma:64,264,16", "multiple of 8 up to 256"}, {"wgmma:64,64,8", "multiple of the instruction's K"},
      {"wgmma:1024,64,16", "at most 1024"},        {"wgmma:64,64", "expected 3"},
      {"wgmma:64,64,16,1", "too many fields"},     {"wgmma:64,x,16", "not a positive integer"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    tc_str_clear(&err);
    int ok = tc_gemm_params_parse(bad[i].cfg, &p, &err) == 0 &&
             tc_gemm_params_derive(&p, &s, &err) == 0;
    TC_CHECK(!ok && has(tc_str_cstr(&err), bad[i].part), "%s: %s", bad[i].cfg, tc_str_cstr(&err));
  }
  s = shape16(256, 256, 256, TC_F32);
  TC_CHECK(tc_gemm_params_parse("wgmma:64,64,16", &p, &err) == 0 &&
               tc_gemm_params_derive(&p, &s, &err) == -1 && has(tc_str_cstr(&err), "f16 or bf16"),
           "%s", tc_str_cstr(&err));
}

static const gemm_harness wgmma_harness = {"gemm_wgmma", NULL, 0};

static void check_wgmma_cl(const tc_gemm_kernel *k, const tc_gemm_params *p, const char *cfg) {
  TC_CHECK(has(k->source, "tc_wgmma_emu("), "%s: no emulated mma in the source", cfg);
  TC_CHECK(has(k->source, "(wgmma, sm_90a)"), "%s: header", cfg);
  TC_CHECK_EQ_INT(k->block[0], p->waves_m * 128);
  TC_CHECK_EQ_INT(k->smem_bytes, 2 * p->k_per_block * (p->m_per_block + p->n_per_block) * 2);
}

/* Runs a case on OpenCL; the number of wrong elements of C (or written
 * outside C), -1 when it could not run (a check failed). */
static int64_t run_wgmma(const mcase *tc, int report) {
  return gemm_run_cl(cl, &wgmma_harness, tc, report, check_wgmma_cl);
}
static const mcase gemm_cases[] = {
    /* f16, one warp group, N 64, K = 4 tiles */
    {"wgmma:64,64,16", 1, 64, 64, 64, 0, 0, TC_F16, TC_F32, 0, 1.0f},
    /* bf16, N 128, ragged M/N/K, KPB 32 (two K steps), odd tail */
    {"wgmma:64,128,32", 1, 70, 100, 40, 0, 0, TC_BF16, TC_F32, 0, 1.0f},
    /* f16, two warp groups, N 64, ragged, A transposed, f16 C, G = 2, C += 0.5 A B */
    {"wgmma:128,64,16", 2, 130, 50, 36, 1, 0, TC_F16, TC_F16, 1, 0.5f},
    /* bf16, two warp groups, N 128, B transposed, K < one tile */
    {"wgmma:128,128,16", 1, 100, 128, 10, 0, 1, TC_BF16, TC_BF16, 0, 1.0f},
};

static void test_wgmma_gemm_opencl(void) {
  if (!cl) TC_SKIP("no OpenCL device");
  for (size_t i = 0; i < sizeof gemm_cases / sizeof *gemm_cases; i++) {
    int64_t bad = run_wgmma(&gemm_cases[i], 1);
    TC_CHECK(bad == 0, "case %zu (%s): %lld wrong elements", i, gemm_cases[i].cfg, (long long)bad);
  }
}

static void test_wgmma_wrong_layouts(void) {
  if (!cl) TC_SKIP("no OpenCL device");
  static const mcase c1 = {"wgmma:64,64,16", 1, 64, 64, 32, 0, 0, TC_F16, TC_F32, 0, 1};
  for (int fault = 1; fault <= 3; fault++) {
    tc_test_hooks_set(&(tc_test_hooks){.wgmma_fault = fault});
    int64_t bad = run_wgmma(&c1, 0);
    tc_test_hooks_set(NULL);
    TC_CHECK(bad > 0, "fault %d: the wrong layout verified (%lld wrong)", fault, (long long)bad);
  }
  TC_CHECK(run_wgmma(&c1, 1) == 0, "%s", c1.cfg);
}

static void test_wgmma_targets(void) {
  problem P;
  problem_make(&gemm_cases[0], &P);
  tc_gemm_params p;
  TC_STR_LOCAL(err);
  tc_gemm_shape s = tc_gemm_problem_shape(&P.pb);
  TC_REQUIRE(tc_gemm_params_parse("wgmma:64,64,16", &p, &err) == 0 &&
                 tc_gemm_params_derive(&p, &s, &err) == 0,
             "%s", tc_str_cstr(&err));
  tc_gemm_kernel k;
  tc_status st = tc_gemm_generate(&P.pb, &p, TC_TARGET_HIP, "g", &k, &err);
  TC_CHECK(st == TC_ERR_UNSUPPORTED && has(tc_str_cstr(&err), "wgmma kernels are for NVIDIA sm_90a"), "%s", tc_str_cstr(&err));
  problem_free(&P);
}

static void test_wgmma_cuda(void) {
  tc_str why;
  tc_str_init(&why);
  int nvrtc = nvrtc_loads(&why);
  if (!nvrtc) printf("  (%s)\n", tc_str_cstr(&why));
  tc_str_free(&why);
  for (size_t i = 0; i < sizeof gemm_cases / sizeof *gemm_cases; i++) {
    const mcase *tc = &gemm_cases[i];
    problem P;
    problem_make(tc, &P);
    tc_gemm_params p;
    tc_gemm_kernel k;
    memset(&k, 0, sizeof k);
    char cfg[64], want[96];
    if (generate(&wgmma_harness, tc, &P, TC_TARGET_CUDA, &p, &k, cfg, sizeof cfg)) {
      const char *t = tc->ab == TC_BF16 ? "bf16" : "f16";
      snprintf(want, sizeof want, "wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s",
               p.n_per_block, t, t);
      TC_CHECK(has(k.source, want), "%s: no %s", cfg, want);
      TC_CHECK(has(k.source, "wgmma.fence.sync.aligned") &&
                   has(k.source, "wgmma.commit_group.sync.aligned") &&
                   has(k.source, "wgmma.wait_group.sync.aligned 0") &&
                   has(k.source, "fence.proxy.async.shared::cta"),
               "%s: fence / commit / wait", cfg);
      TC_CHECK(!has(k.source, "tc_wgmma_emu"), "%s: emulation in CUDA", cfg);
      TC_CHECK_EQ_INT(k.block[0], p.waves_m * 128);
      for (int a = 0; a < 3 && nvrtc; a++) {
        static const char *const archs[] = {"sm_90a", "sm_90", "sm_80"};
        char *ptx = NULL;
        tc_str err;
        tc_str_init(&err);
        tc_status st = tc_cuda_compile(k.source, archs[a], &ptx, &err);
        if (a == 0) {
          TC_CHECK(st == TC_OK, "%s sm_90a: %.3000s", cfg, tc_str_cstr(&err));
          if (st == TC_OK)
            TC_CHECK(has(ptx, "wgmma.mma_async.sync.aligned.m64n"), "%s: no wgmma in the PTX", cfg);
        } else {
          TC_CHECK(st != TC_OK && has(tc_str_cstr(&err), "needs sm_90a"), "%s %s: %s: %.500s", cfg,
                   archs[a], tc_status_name(st), tc_str_cstr(&err));
        }
        free(ptx);
        tc_str_free(&err);
      }
    }
    tc_gemm_kernel_free(&k);
    problem_free(&P);
  }
  if (!nvrtc) TC_SKIP("NVRTC cannot be loaded (the CUDA sources were generated)");
}

/* wgmma: perf configs are refused unless TILEC_EXPERIMENTAL_WGMMA=1. */
static void test_wgmma_gate(void) {
  unsetenv("TILEC_EXPERIMENTAL_WGMMA");
  tc_gemm_params p;
  TC_STR_LOCAL(err);
  TC_CHECK(tc_gemm_params_parse("wgmma:64,64,16", &p, &err) != 0, "parsed without the gate");
  TC_CHECK(strstr(tc_str_cstr(&err), "TILEC_EXPERIMENTAL_WGMMA=1") != NULL, "%s", tc_str_cstr(&err));
  setenv("TILEC_EXPERIMENTAL_WGMMA", "1", 1);
  TC_CHECK(tc_gemm_params_parse("wgmma:64,64,16", &p, &err) == 0, "%s", tc_str_cstr(&err));
}

int main(void) {
  setenv("TILEC_EXPERIMENTAL_WGMMA", "1", 1); /* the rest of this file tests the path itself */
  cl = open_cl_or_null();
  TC_RUN(test_wgmma_gate);
  TC_RUN(test_wgmma_layout);
  TC_RUN(test_wgmma_params);
  TC_RUN(test_wgmma_targets);
  TC_RUN(test_wgmma_gemm_opencl);
  TC_RUN(test_wgmma_wrong_layouts);
  TC_RUN(test_wgmma_cuda);
  if (cl) tc_cl_close(cl);
  TC_MAIN_END();
}
