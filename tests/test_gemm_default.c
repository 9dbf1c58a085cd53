/* test_gemm_default.c - the one place that picks the GEMM kernel per
 * target (src/tune/params.c: tc_gemm_default_for, tc_gemm_candidates_for)
 * and its users.
 *
 *   - the candidate lists: CUDA f16/bf16 (sm_80+) = every mma.sync set,
 *     then every FMA set; HIP f16/bf16 = XDLOPS, then FMA; OpenCL, f32 and
 *     CUDA before sm_80 = exactly tc_gemm_candidates; never wgmma; every
 *     candidate derives valid for the shape;
 *   - the defaults and their kind phrase ("mma.sync", "XDLOPS (MFMA)",
 *     "FMA") are the first candidate;
 *   - the C API's tc_gemm_plan and tc_conv2d_plan on CUDA f16: an mma
 *     perf config, "heuristic, mma.sync", NVRTC compiles it for sm_80; on
 *     OpenCL the FMA kernel as before;
 *   - conv plans on CUDA f16 (forward, backward data with several GEMMs,
 *     backward weight, NHWC with groups): every GEMM step is an mma.sync
 *     kernel that NVRTC compiles for sm_80, and each step's perf config,
 *     given to an OpenCL plan (the mma.sync emulation), verifies against
 *     the reference.
 * NVRTC parts are skipped where NVRTC cannot be loaded; OpenCL runs where
 * there is a device. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/conv.h"
#include "runtime/runtime.h"
#include "tune/params.h"
#include "test.h"
#include "conv_test_util.h"
#include "device_test_util.h"

static int has(const char *s, const char *part) { return s && strstr(s, part) != NULL; }

static tc_gemm_shape shape(int64_t m, int64_t n, int64_t k, tc_dtype t) {
  tc_gemm_shape s;
  memset(&s, 0, sizeof s);
  s.g = 1, s.m = m, s.n = n, s.k = k, s.dtype = t;
  s.a_vec_k = s.a_vec_m = s.b_vec_k = s.b_vec_n = s.c_vec_n = 1;
  return s;
}

/* 1 when NVRTC can be loaded (why says why not). */
/* Compiles CUDA source with NVRTC for sm_80; the PTX must hold mma.sync. */
static void compile_sm80(const char *what, const char *src) {
  char *ptx = NULL;
  tc_str err;
  tc_str_init(&err);
  tc_status st = tc_cuda_compile(src, "sm_80", &ptx, &err);
  TC_CHECK(st == TC_OK, "%s: %.3000s", what, tc_str_cstr(&err));
  if (st == TC_OK)
    TC_CHECK(has(ptx, "mma.sync.aligned.m16n8k16.row.col.f32"), "%s: no mma.sync in the PTX", what);
  free(ptx);
  tc_str_free(&err);
}

/* ---- the candidate lists -------------------------------------------------- */

/* Does list (n) equal first (nf) followed by rest (nr)? */
static int is_concat(const tc_gemm_params *list, int n, const tc_gemm_params *first, int nf,
                     const tc_gemm_params *rest, int nr) {
  if (n != nf + nr) return 0;
  if (nf && memcmp(list, first, (size_t)nf * sizeof *list)) return 0;
  return !nr || !memcmp(list + nf, rest, (size_t)nr * sizeof *list);
}

static void test_candidates_for(void) {
  static const tc_dtype x16[] = {TC_F16, TC_BF16};
  TC_STR_LOCAL(err);
  for (int d = 0; d < 2; d++) {
    tc_gemm_shape s = shape(100, 70, 50, x16[d]);
    tc_gemm_params *mma = NULL, *xdl = NULL, *fma = NULL, *c = NULL;
    int nm = tc_gemm_mma_candidates(&s, &mma), nx = tc_gemm_xdlops_candidates(&s, &xdl);
    int nf = tc_gemm_candidates(&s, &fma);
    TC_REQUIRE(nm > 0 && nx > 0 && nf > 0, "mma %d, xdlops %d, fma %d", nm, nx, nf);
    /* CUDA (the default arch, sm_80, sm_90a): mma.sync first, then FMA */
    static const char *const archs[] = {NULL, "sm_80", "sm_90a", "compute_86"};
    for (int a = 0; a < 4; a++) {
      int n = tc_gemm_candidates_for(&s, TC_TARGET_CUDA, archs[a], &c);
      TC_CHECK(is_concat(c, n, mma, nm, fma, nf), "cuda %s %s: %d candidates, want %d mma + %d FMA",
               archs[a] ? archs[a] : "(default)", tc_dtype_name(x16[d]), n, nm, nf);
      TC_CHECK(n > 0 && tc_gemm_params_is_mma(&c[0]), "cuda: the first is not an mma set");
      for (int i = 0; i < n; i++) {
        tc_gemm_params q = c[i];
        TC_CHECK(!tc_gemm_params_is_wgmma(&q), "candidate %d is wgmma", i);
        TC_CHECK(tc_gemm_params_derive(&q, &s, &err) == 0 && !memcmp(&q, &c[i], sizeof q),
                 "cuda candidate %d does not derive to itself: %s", i, tc_str_cstr(&err));
      }
      free(c);
    }
    /* before sm_80 there is no m16n8k16 mma.sync: FMA only */
    int n = tc_gemm_candidates_for(&s, TC_TARGET_CUDA, "sm_75", &c);
    TC_CHECK(is_concat(c, n, fma, nf, NULL, 0), "cuda sm_75: %d candidates", n);
    free(c);
    /* HIP: XDLOPS, then FMA */
    n = tc_gemm_candidates_for(&s, TC_TARGET_HIP, "gfx90a", &c);
    TC_CHECK(is_concat(c, n, xdl, nx, fma, nf), "hip: %d candidates", n);
    free(c);
    /* OpenCL: unchanged (FMA only; the tensor cores are only emulated) */
    n = tc_gemm_candidates_for(&s, TC_TARGET_OPENCL, NULL, &c);
    TC_CHECK(is_concat(c, n, fma, nf, NULL, 0), "opencl: %d candidates", n);
    free(c);
    free(mma), free(xdl), free(fma);
  }
  /* f32: FMA on every target */
  tc_gemm_shape f = shape(64, 64, 64, TC_F32);
  tc_gemm_params *fma = NULL, *c = NULL;
  int nf = tc_gemm_candidates(&f, &fma);
  static const tc_target targets[] = {TC_TARGET_OPENCL, TC_TARGET_CUDA, TC_TARGET_HIP};
  for (int t = 0; t < 3; t++) {
    int n = tc_gemm_candidates_for(&f, targets[t], NULL, &c);
    TC_CHECK(is_concat(c, n, fma, nf, NULL, 0), "f32 %s: %d candidates", tc_target_name(targets[t]),
             n);
    free(c);
  }
  free(fma);
  /* a bad shape: none */
  f.m = 0;
  TC_CHECK(tc_gemm_candidates_for(&f, TC_TARGET_CUDA, NULL, &c) == 0 && !c, "bad shape");
}

static void test_default_for(void) {
  TC_STR_LOCAL(err);
  const char *kind = NULL;
  tc_gemm_params p, want;
  tc_gemm_shape s = shape(256, 128, 64, TC_F16);
  TC_REQUIRE(tc_gemm_default_for(&s, TC_TARGET_CUDA, NULL, &p, &kind, &err) == 0, "%s",
             tc_str_cstr(&err));
  TC_CHECK_STR(kind, "mma.sync");
  TC_CHECK(tc_gemm_mma_default(&s, &want, &err) == 0 && !memcmp(&p, &want, sizeof p),
           "cuda f16: not the mma default");
  char cfg[64];
  tc_gemm_params_format(&p, cfg, sizeof cfg);
  TC_CHECK(!strncmp(cfg, "mma:", 4), "cuda f16: %s", cfg);

  TC_REQUIRE(tc_gemm_default_for(&s, TC_TARGET_HIP, "gfx940", &p, &kind, &err) == 0,
             "%s", tc_str_cstr(&err));
  TC_CHECK_STR(kind, "XDLOPS (MFMA)");
  TC_CHECK(tc_gemm_xdlops_default(&s, &want, &err) == 0 && !memcmp(&p, &want, sizeof p),
           "hip f16: not the XDLOPS default");

  TC_CHECK(tc_gemm_params_default(&s, &want, &err) == 0, "%s", tc_str_cstr(&err));
  static const struct { tc_target t; const char *arch; tc_dtype d; } fma[] = {
      {TC_TARGET_OPENCL, NULL, TC_F16}, {TC_TARGET_CUDA, "sm_70", TC_F16},
      {TC_TARGET_CUDA, NULL, TC_F32}, {TC_TARGET_HIP, NULL, TC_F32}};
  for (size_t i = 0; i < sizeof fma / sizeof *fma; i++) {
    s.dtype = fma[i].d;
    TC_CHECK(tc_gemm_params_default(&s, &want, &err) == 0, "%s", tc_str_cstr(&err));
    TC_CHECK(tc_gemm_default_for(&s, fma[i].t, fma[i].arch, &p, &kind, &err) == 0 &&
                 !strcmp(kind, "FMA") && !memcmp(&p, &want, sizeof p),
             "%s %s: kind %s (%s)", tc_target_name(fma[i].t), tc_dtype_name(fma[i].d), kind, tc_str_cstr(&err));
  }
  s.k = 0;
  TC_CHECK(tc_gemm_default_for(&s, TC_TARGET_CUDA, NULL, &p, &kind, &err) == -1 &&
               has(tc_str_cstr(&err), "G, M, N, K >= 1") && !strcmp(kind, ""),
           "bad shape: %s", tc_str_cstr(&err));
}

/* ---- the C API ------------------------------------------------------------ */

static tc_op_options cuda_opts(void) {
  tc_op_options o;
  memset(&o, 0, sizeof o);
  o.target = TC_TARGET_CUDA;
  o.perfdb = ""; /* none */
  return o;
}

static void test_api_gemm(int nvrtc) {
  tc_gemm_desc d;
  tc_gemm_desc_init(&d);
  d.m = 96, d.n = 80, d.k = 40, d.dtype = TC_F16;
  tc_op_options o = cuda_opts();
  tc_gemm *g = tc_gemm_new(&d, &o);
  TC_REQUIRE(tc_gemm_plan(g, NULL) == TC_OK, "%s", tc_gemm_error(g));
  TC_CHECK(!strncmp(tc_gemm_perf_config(g), "mma:", 4), "cuda f16: %s", tc_gemm_perf_config(g));
  TC_CHECK_STR(tc_gemm_perf_config_source(g), "heuristic");
  TC_CHECK_STR(tc_gemm_perf_config_detail(g), "heuristic, mma.sync");
  if (nvrtc) compile_sm80("tc_gemm_plan cuda f16", tc_gemm_kernel_source(g));
  tc_gemm_free(g);
  /* OpenCL: the FMA kernel, as before */
  o.target = TC_TARGET_OPENCL;
  g = tc_gemm_new(&d, &o);
  TC_REQUIRE(tc_gemm_plan(g, NULL) == TC_OK, "%s", tc_gemm_error(g));
  TC_CHECK(strchr(tc_gemm_perf_config(g), ':') == NULL, "opencl f16: %s", tc_gemm_perf_config(g));
  TC_CHECK_STR(tc_gemm_perf_config_detail(g), "heuristic, FMA");
  tc_gemm_free(g);
}

static void test_api_conv(int nvrtc) {
  tc_conv2d_desc d;
  tc_conv2d_desc_init(&d);
  d.n = 2, d.c = 16, d.h = d.w = 8, d.k = 32, d.y = d.x = 3;
  d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
  d.dtype = TC_F16;
  tc_op_options o = cuda_opts();
  tc_conv2d *c = tc_conv2d_new(&d, &o);
  TC_REQUIRE(tc_conv2d_plan(c, NULL) == TC_OK, "%s", tc_conv2d_error(c));
  TC_CHECK(!strncmp(tc_conv2d_perf_config(c), "mma:", 4), "cuda f16: %s", tc_conv2d_perf_config(c));
  TC_CHECK_STR(tc_conv2d_perf_config_detail(c), "heuristic, mma.sync");
  if (nvrtc) compile_sm80("tc_conv2d_plan cuda f16", tc_conv2d_kernel_source(c, 0));
  tc_conv2d_free(c);
  /* f32 on CUDA: the FMA kernel */
  d.dtype = TC_F32;
  c = tc_conv2d_new(&d, &o);
  TC_REQUIRE(tc_conv2d_plan(c, NULL) == TC_OK, "%s", tc_conv2d_error(c));
  TC_CHECK_STR(tc_conv2d_perf_config_detail(c), "heuristic, FMA");
  tc_conv2d_free(c);
}

static void test_api(void) {
  tc_str why;
  tc_str_init(&why);
  int nvrtc = nvrtc_loads(&why);
  if (!nvrtc) printf("  (%s)\n", tc_str_cstr(&why));
  tc_str_free(&why);
  test_api_gemm(nvrtc);
  test_api_conv(nvrtc);
  if (!nvrtc) TC_SKIP("NVRTC cannot be loaded (the CUDA sources were generated)");
}

/* ---- conv plans on CUDA f16, verified in the OpenCL emulation --------------- */

static void test_conv_cuda_mma(void) {
  tc_str why;
  tc_str_init(&why);
  int nvrtc = nvrtc_loads(&why);
  tc_cl *cl = NULL;
  int have_cl = tc_cl_open(NULL, &cl, &why) == TC_OK;
  if (have_cl) tc_cl_close(cl);
  tc_str_free(&why);
  tc_conv_problem cases[4];
  /* forward 3x3 pad 1; backward data stride 2 (several GEMMs and a zero
   * kernel); backward weight; NHWC with groups and stride 2 */
  conv_problem(&cases[0], TC_CONV_FWD, 2, 8, 7, 7, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1);
  conv_problem(&cases[1], TC_CONV_BWD_DATA, 2, 8, 9, 9, 12, 3, 3, 1, 1, 1, 1, 2, 2, 1, 1, 1);
  conv_problem(&cases[2], TC_CONV_BWD_WEIGHT, 2, 8, 7, 7, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1);
  conv_problem(&cases[3], TC_CONV_FWD, 2, 8, 8, 7, 8, 3, 2, 1, 0, 0, 1, 2, 2, 1, 1, 2);
  strcpy(cases[3].in_layout, "NHWC"), strcpy(cases[3].fil_layout, "KYXC");
  strcpy(cases[3].out_layout, "NHWK");
  for (int i = 0; i < 4; i++) {
    tc_conv_problem *p = &cases[i];
    p->dtype = TC_F16;
    char name[64];
    TC_STR_LOCAL(err);
    snprintf(name, sizeof name, "case %d (%s %s)", i, tc_conv_dir_name(p->dir),
             tc_dtype_name(p->dtype));
    tc_conv_plan *plan = NULL;
    tc_status st = tc_conv_plan_make_for(p, NULL, TC_TARGET_CUDA, "sm_80", &plan, &err);
    TC_CHECK(st == TC_OK, "%s: %s", name, tc_str_cstr(&err));
    if (st != TC_OK) continue;
    int gemms = 0;
    char verified[8][64]; /* the configs verified on OpenCL already */
    int nverified = 0;
    for (int s = 0; s < plan->nsteps; s++) {
      const tc_conv_step *step = &plan->steps[s];
      if (step->gemm_m == 0) continue;
      gemms++;
      char cfg[64];
      tc_gemm_params_format(&step->params, cfg, sizeof cfg);
      TC_CHECK(tc_gemm_params_is_mma(&step->params) && !tc_gemm_params_is_wgmma(&step->params),
               "%s step %d: %s is not an mma.sync config", name, s, cfg);
      TC_CHECK(has(step->kernel.source, "mma.sync.aligned.m16n8k16"), "%s step %d: no mma.sync",
               name, s);
      if (nvrtc) compile_sm80(name, step->kernel.source);
      /* the same perf config on OpenCL (the mma.sync emulation) */
      int seen = 0;
      for (int v = 0; v < nverified; v++) seen |= !strcmp(verified[v], cfg);
      if (have_cl && !seen && nverified < 8) {
        snprintf(verified[nverified++], sizeof verified[0], "%s", cfg);
        int64_t bad = conv_run_and_verify(p, &step->params, &err, NULL);
        TC_CHECK(bad == 0, "%s step %d %s on OpenCL: %s", name, s, cfg, tc_str_cstr(&err));
      }
    }
    TC_CHECK(gemms >= (i == 1 ? 2 : 1), "%s: %d GEMMs", name, gemms);
    tc_conv_plan_free(plan);
    /* on OpenCL the default stays the FMA kernel */
    st = tc_conv_plan_make(p, NULL, TC_TARGET_OPENCL, &plan, &err);
    TC_CHECK(st == TC_OK && !tc_gemm_params_is_xdlops(&plan->params), "%s opencl: %s", name, tc_str_cstr(&err));
    tc_conv_plan_free(plan);
    /* before sm_80: the FMA kernel */
    st = tc_conv_plan_make_for(p, NULL, TC_TARGET_CUDA, "sm_75", &plan, &err);
    TC_CHECK(st == TC_OK && !tc_gemm_params_is_xdlops(&plan->params), "%s sm_75: %s", name, tc_str_cstr(&err));
    tc_conv_plan_free(plan);
  }
  if (!have_cl) TC_SKIP("no OpenCL device (the CUDA plans were checked)");
  if (!nvrtc) TC_SKIP("NVRTC cannot be loaded (the CUDA sources were generated)");
}

int main(void) {
  TC_RUN(test_candidates_for);
  TC_RUN(test_default_for);
  TC_RUN(test_api);
  TC_RUN(test_conv_cuda_mma);
  TC_MAIN_END();
}
