/* test_conv.c - convolutions (src/ops/conv*.c): problem checks and
 * strings, the reference against hand-computed values and across
 * layouts, the lowering's views interpreted on the host (every direction
 * and feature, independent of the GEMM kernel), and the generated kernels
 * run on the OpenCL device (PoCL) and verified against the reference:
 * small and medium cases of every direction and feature plus a fast
 * subset of ResNet-50 layers (N = 2).  tests/test_conv_full.c runs every
 * ResNet-50 layer in all three directions. */
#include <math.h>
#include <stdint.h>

#include "test.h"
#include "conv_test_util.h"

/* ---- problem checks and strings --------------------------------------- */

static void test_check_errors(void) {
  TC_STR_LOCAL(err);
  int64_t ho = -1, wo = -1;
  tc_conv_problem p;
  tc_conv_problem_init(&p);
  TC_CHECK(tc_conv_check(&p, &ho, &wo, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(ho, 30);
  TC_CHECK_EQ_INT(wo, 30);

  struct { const char *what; void (*set)(tc_conv_problem *); const char *want; } cases[] = {
    {"c=0", conv_set_c0, "input channels (-c) must be positive, got 0"},
    {"k=-3", conv_set_kneg, "output channels (-k) must be positive, got -3"},
    {"stride 0", conv_set_stride0, "vertical stride (-u) must be positive, got 0"},
    {"groups", conv_set_groups3, "input channels (-c 64) are not divisible by the group count (-g 3)"},
    {"k groups", conv_set_kgroups, "output channels (-k 30) are not divisible by the group count (-g 4)"},
    {"layout", conv_set_bad_layout, "bad input layout 'NCHX': expected a permutation of the letters N, C, H, W (e.g. NCHW or NHWC)"},
    {"fil layout", conv_set_bad_fil_layout, "bad filter layout 'KCY': expected a permutation of the letters K, C, Y, X (e.g. KCYX or KYXC)"},
    {"negative output", conv_set_neg_out, "output height would be -2: the padded input height 4 (4 + 0 + 0) is smaller than the dilated filter height 7"},
    {"negative pad", conv_set_neg_pad, "left padding (--pad_w_l) must be in [0, 2147483647], got -1"},
    {"dtype", conv_set_bad_dtype, "unsupported data type i32 for a convolution: expected f32 or f16"},
    {"dir", conv_set_bad_dir, "bad convolution direction 3: expected 1 (forward), 2 (backward data) or 4 (backward weight)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tc_conv_problem_init(&p);
    p.n = 2, p.c = 64, p.h = 8, p.w = 8, p.k = 64;
    cases[i].set(&p);
    tc_str_clear(&err);
    TC_CHECK(tc_conv_check(&p, NULL, NULL, &err) == -1, "%s accepted", cases[i].what);
    const char *got = tc_str_cstr(&err);
    TC_CHECK_STR(got, cases[i].want);
    TC_CHECK(strchr(tc_str_cstr(&err), '\n') == NULL, "%s: more than one line", cases[i].what);
    /* a bad problem plans to an error, never a crash */
    tc_conv_plan *plan = (tc_conv_plan *)1;
    TC_CHECK(tc_conv_plan_make(&p, NULL, TC_TARGET_OPENCL, &plan, &err) == TC_ERR_ARGUMENT,
             "%s planned", cases[i].what);
    TC_CHECK(plan == NULL, "plan not NULL");
  }
  /* exactly-fitting filter: output 1x1 */
  tc_conv_problem_init(&p);
  p.h = 5, p.w = 3, p.y = 3, p.x = 2, p.dil_h = 2, p.dil_w = 2, p.stride_h = 7;
  TC_CHECK(tc_conv_check(&p, &ho, &wo, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(ho, 1);
  TC_CHECK_EQ_INT(wo, 1);
  /* element counts follow MIOpen's shapes, filter [K, C/G, Y, X] */
  tc_conv_problem_init(&p);
  p.n = 2, p.c = 6, p.h = 9, p.w = 7, p.k = 4, p.y = 3, p.x = 1, p.groups = 2, p.stride_h = 2;
  TC_CHECK_EQ_INT(tc_conv_input_elems(&p), 2 * 6 * 9 * 7);
  TC_CHECK_EQ_INT(tc_conv_filter_elems(&p), 4 * 3 * 3 * 1);
  TC_CHECK_EQ_INT(tc_conv_output_elems(&p), 2 * 4 * 4 * 7);
}

static void test_problem_string(void) {
  tc_conv_problem p;
  tc_conv_problem_init(&p);
  p.n = 2, p.c = 64, p.h = 56, p.w = 56, p.k = 64;
  p.pad_h_l = p.pad_h_r = p.pad_w_l = p.pad_w_r = 1;
  tc_str s;
  tc_str_init(&s);
  tc_conv_problem_string(&p, &s);
  TC_CHECK_STR(tc_str_cstr(&s), "conv2d -F 1 -n 2 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 "
               "-v 1 -l 1 -j 1 -g 1 -t f32 --in_layout NCHW --fil_layout KCYX --out_layout NKHW");
  tc_str_clear(&s);
  p.dir = TC_CONV_BWD_DATA;
  p.dtype = TC_F16;
  p.pad_h_l = 2, p.pad_w_r = 0;
  p.stride_h = 2, p.dil_w = 3, p.groups = 4;
  /* MIOpen's spellings are accepted and printed canonically */
  strcpy(p.in_layout, "nhwc");
  strcpy(p.fil_layout, "NHWC");
  strcpy(p.out_layout, "NHWC");
  tc_conv_problem_string(&p, &s);
  TC_CHECK_STR(tc_str_cstr(&s), "conv2d -F 2 -n 2 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 --pad_h_l 2 "
               "--pad_h_r 1 --pad_w_l 1 --pad_w_r 0 -u 2 -v 1 -l 1 -j 3 -g 4 -t f16 --in_layout "
               "NHWC --fil_layout KYXC --out_layout NHWK");
  tc_str_free(&s);
  TC_CHECK_STR(tc_conv_dir_name(TC_CONV_BWD_WEIGHT), "bwd-weight");
}

/* ---- the reference ------------------------------------------------------ */

/* 1x1x3x3 input, 1 filter 2x2, pad 1, stride 2: worked by hand. */
static void test_reference_by_hand(void) {
  tc_conv_problem p;
  tc_conv_problem_init(&p);
  p.n = 1, p.c = 1, p.h = 3, p.w = 3, p.k = 1, p.y = 2, p.x = 2;
  p.pad_h_l = p.pad_h_r = p.pad_w_l = p.pad_w_r = 1;
  p.stride_h = p.stride_w = 2;
  float in[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, fil[4] = {1, 10, 100, 1000}, out[4];
  /* Ho = (3 + 2 - 2) / 2 + 1 = 2; out[ho][wo] = sum in[2ho+y-1][2wo+x-1] * f[y][x] */
  tc_conv_reference(&p, in, fil, out);
  float want[4] = {1000 * 1, 100 * 2 + 1000 * 3, 10 * 4 + 1000 * 7, 1 * 5 + 10 * 6 + 100 * 8 + 1000 * 9};
  for (int i = 0; i < 4; i++) TC_CHECK(out[i] == want[i], "out[%d] = %g, want %g", i, out[i], want[i]);
  /* backward data: dx[h][w] = sum over (ho, y) with 2ho + y - 1 = h ... */
  float dy[4] = {1, 2, 3, 4}, dx[9];
  p.dir = TC_CONV_BWD_DATA;
  tc_conv_reference(&p, dx, fil, dy);
  float wdx[9] = {1000 * 1, 100 * 2, 1000 * 2, 10 * 3, 1 * 4, 10 * 4, 1000 * 3, 100 * 4, 1000 * 4};
  for (int i = 0; i < 9; i++) TC_CHECK(dx[i] == wdx[i], "dx[%d] = %g, want %g", i, dx[i], wdx[i]);
  /* backward weight: dw[y][x] = sum over ho, wo of dy * in[2ho+y-1][2wo+x-1] */
  float dw[4];
  p.dir = TC_CONV_BWD_WEIGHT;
  tc_conv_reference(&p, in, dw, dy);
  float wdw[4] = {4 * 5, 3 * 4 + 4 * 6, 2 * 2 + 4 * 8, 1 * 1 + 2 * 3 + 3 * 7 + 4 * 9};
  for (int i = 0; i < 4; i++) TC_CHECK(dw[i] == wdw[i], "dw[%d] = %g, want %g", i, dw[i], wdw[i]);
}

/* The same problem in NCHW/KCYX/NKHW and NHWC/KYXC/NHWK (tensors
 * transposed on the host) gives the same values, in every direction. */
static void test_reference_layouts(void) {
  for (int dir = 1; dir <= 4; dir *= 2) {
    tc_conv_problem a;
    tc_conv_problem_init(&a);
    a.dir = (tc_conv_dir)dir;
    a.n = 2, a.c = 6, a.h = 7, a.w = 5, a.k = 4, a.y = 3, a.x = 2, a.groups = 2;
    a.pad_h_l = 1, a.pad_w_r = 1, a.stride_h = 2, a.dil_w = 2;
    tc_conv_problem b = a;
    strcpy(b.in_layout, "NHWC");
    strcpy(b.fil_layout, "KYXC");
    strcpy(b.out_layout, "NHWK");
    conv_bufs x, y;
    conv_bufs_alloc(&a, &x, 7);
    conv_bufs_alloc(&b, &y, 7);
    conv_bufs_transpose(&a, &x, &b, &y); /* same logical values */
    tc_conv_reference(&a, x.in, x.fil, x.out);
    tc_conv_reference(&b, y.in, y.fil, y.out);
    TC_CHECK(conv_bufs_same_written(&a, &x, &b, &y), "dir %d: NCHW and NHWC differ", dir);
    conv_bufs_free(&x);
    conv_bufs_free(&y);
  }
}

/* ---- the lowering, interpreted on the host ------------------------------ */

static void test_bwd_data_decomposition(void) {
  /* n64 c64 k64 4x4 input, 2x2 filter, stride 2, pad h 2/1, w 2/0:
   * Ho = Wo = 3, YTilda = 2, YDot = 1, HTilda = 4; each phase covers the
   * rows of its parity (htilda in [1, 2]): 4 GEMMs of M 64, K 64,
   * N 64*2*2, every input element written, no zero-init. */
  tc_conv_problem p;
  conv_problem(&p, TC_CONV_BWD_DATA, 64, 64, 4, 4, 64, 2, 2, 2, 1, 2, 0, 2, 2, 1, 1, 1);
  tc_conv_gemm *g;
  int n, zero;
  TC_STR_LOCAL(err);
  TC_REQUIRE(tc_conv_lower(&p, &g, &n, &zero, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(n, 4);
  TC_CHECK_EQ_INT(zero, 0);
  for (int i = 0; i < n; i++) {
    TC_CHECK_EQ_INT(g[i].g, 1);
    TC_CHECK_EQ_INT(g[i].m, 64);
    TC_CHECK_EQ_INT(g[i].k, 64);
    TC_CHECK_EQ_INT(g[i].n, 64 * 2 * 2);
  }
  TC_CHECK_STR(g[3].name, "bwd_data_y1_x1");
  tc_conv_gemms_free(g, n);
  /* 3x3 filter stride 2 pad 1 on 7x7: Ho 4; phases y0 (ydot 0,1: y 0, 2)
   * and y1 (y 1); HTilda = 4 + 1 = 5. */
  conv_problem(&p, TC_CONV_BWD_DATA, 2, 8, 7, 7, 4, 3, 3, 1, 1, 1, 1, 2, 2, 1, 1, 1);
  TC_REQUIRE(tc_conv_lower(&p, &g, &n, &zero, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(n, 4);
  TC_CHECK_EQ_INT(zero, 0);
  TC_CHECK_EQ_INT(g[0].k, 4 * 2 * 2);  /* y0 x0: K * 2 * 2 */
  TC_CHECK_EQ_INT(g[1].k, 4 * 2 * 1);  /* y0 x1 */
  TC_CHECK_EQ_INT(g[3].k, 4 * 1 * 1);  /* y1 x1 */
  /* phase 0 writes rows 2*htilda - 1 for htilda 1..3 (rows 1, 3, 5),
   * phase 1 rows 2*htilda for htilda 0..3 (rows 0, 2, 4, 6) */
  TC_CHECK_EQ_INT(g[0].n, 2 * 3 * 3);
  TC_CHECK_EQ_INT(g[1].n, 2 * 3 * 4);
  TC_CHECK_EQ_INT(g[3].n, 2 * 4 * 4);
  tc_conv_gemms_free(g, n);
  /* 1x1 filter, stride 2: only phase 0 has filter taps; odd rows and
   * columns get nothing -> zero-init + 1 GEMM */
  conv_problem(&p, TC_CONV_BWD_DATA, 2, 8, 8, 8, 4, 1, 1, 0, 0, 0, 0, 2, 2, 1, 1, 1);
  TC_REQUIRE(tc_conv_lower(&p, &g, &n, &zero, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(n, 1);
  TC_CHECK_EQ_INT(zero, 1);
  tc_conv_gemms_free(g, n);
  /* stride 2 with dilation 2: gcd 2, YTilda 1: one phase; odd rows
   * (h + pad odd) get nothing */
  conv_problem(&p, TC_CONV_BWD_DATA, 2, 8, 9, 9, 4, 3, 3, 0, 0, 0, 0, 2, 2, 2, 2, 1);
  TC_REQUIRE(tc_conv_lower(&p, &g, &n, &zero, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(n, 1);
  TC_CHECK_EQ_INT(zero, 1);
  TC_CHECK_EQ_INT(g[0].k, 4 * 3 * 3);
  tc_conv_gemms_free(g, n);
  /* 1x1 input, pad 1, stride 2, 1x1 filter: the one input element sits at
   * an odd padded position: no GEMM at all, only the zero-init */
  conv_problem(&p, TC_CONV_BWD_DATA, 1, 2, 1, 1, 2, 1, 1, 1, 1, 1, 1, 2, 2, 1, 1, 1);
  TC_REQUIRE(tc_conv_lower(&p, &g, &n, &zero, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(n, 0);
  TC_CHECK_EQ_INT(zero, 1);
  tc_conv_gemms_free(g, n);
}

/* Every direction and feature through the views alone. */
static void test_views_interpreted(void) {
  for (size_t i = 0; i < conv_small_count; i++) {
    for (int dir = 1; dir <= 4; dir *= 2) {
      tc_conv_problem p = conv_small[i].p;
      p.dir = (tc_conv_dir)dir;
      TC_STR_LOCAL(msg);
      int64_t bad = conv_interpret_and_verify(&p, &msg);
      TC_CHECK(bad == 0, "%s %s: %s", conv_small[i].name, tc_conv_dir_name(p.dir), tc_str_cstr(&msg));
    }
  }
}

/* ---- kernels on the device ---------------------------------------------- */

static int have_device(void) {
  static int have = -1;
  if (have < 0) {
    tc_str out;
    tc_str_init(&out);
    have = tc_cl_list_devices(&out) > 0;
    tc_str_free(&out);
  }
  return have;
}

/* Runs the cases (only those marked fast when fast_only) in their
 * directions (dirs, when not 0, narrows them further). */
static void run_list(const conv_case *cases, size_t n, int fast_only, int dirs) {
  if (!have_device()) TC_SKIP("no OpenCL device");
  for (size_t i = 0; i < n; i++)
    for (int dir = 1; dir <= 4; dir *= 2) {
      if (fast_only && !cases[i].fast) continue;
      if (cases[i].dirs && !(cases[i].dirs & dir)) continue;
      if (dirs && !(dirs & dir)) continue;
      tc_conv_problem p = cases[i].p;
      p.dir = (tc_conv_dir)dir;
      TC_STR_LOCAL(msg);
      double ms = 0, t0 = tc_now_seconds();
      int64_t bad = conv_run_and_verify(&p, NULL, &msg, &ms);
      TC_CHECK(bad == 0, "%s %s: %s", cases[i].name, tc_conv_dir_name(p.dir), tc_str_cstr(&msg));
      if (getenv("TC_CONV_VERBOSE"))
        printf("    %-36s %-10s kernels %8.1f ms, wall %6.2f s\n", cases[i].name,
               tc_conv_dir_name(p.dir), ms, tc_now_seconds() - t0);
    }
}

static void test_device_small(void) { run_list(conv_small, conv_small_count, 1, 0); }
static void test_device_spec_bwd_data(void) { run_list(conv_spec, conv_spec_count, 0, TC_CONV_BWD_DATA); }
static void test_device_resnet_subset(void) { run_list(conv_resnet_fast, conv_resnet_fast_count, 0, 0); }

/* Given parameters: used for every GEMM, or an error naming the rule. */
static void test_given_params(void) {
  if (!have_device()) TC_SKIP("no OpenCL device");
  /* 2x1 filter, stride 2 along h only: two phases, two GEMMs */
  tc_conv_problem p;
  conv_problem(&p, TC_CONV_BWD_DATA, 2, 8, 7, 7, 16, 2, 1, 1, 1, 0, 0, 2, 1, 1, 1, 1);
  tc_gemm_params gp;
  TC_STR_LOCAL(err);
  TC_REQUIRE(tc_gemm_params_parse("64,32,32,4,2,2", &gp, &err) == 0, "%s", tc_str_cstr(&err));
  TC_STR_LOCAL(msg);
  double ms;
  int64_t bad = conv_run_and_verify(&p, &gp, &msg, &ms);
  TC_CHECK(bad == 0, "%s", tc_str_cstr(&msg));
  tc_conv_plan *plan = NULL;
  TC_REQUIRE(tc_conv_plan_make(&p, &gp, TC_TARGET_OPENCL, &plan, &err) == TC_OK, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(plan->nsteps, 2);
  for (int i = 0; i < plan->nsteps; i++) TC_CHECK_EQ_INT(plan->steps[i].params.m_per_block, 32);
  TC_CHECK_EQ_INT(plan->params.block_size, 64);
  tc_conv_plan_free(plan);
  /* a perf config that breaks a rule */
  gp.m_per_block = 48;
  plan = (tc_conv_plan *)1;
  TC_CHECK(tc_conv_plan_make(&p, &gp, TC_TARGET_OPENCL, &plan, &err) == TC_ERR_ARGUMENT,
           "accepted");
  TC_CHECK(plan == NULL, "plan");
  TC_CHECK(strstr(tc_str_cstr(&err), "does not fit the bwd_data_y0_x0 GEMM") != NULL, "%s", tc_str_cstr(&err));
}

/* The zero-init step comes first and the plan writes every element. */
static void test_zero_init_plan(void) {
  tc_conv_problem p;
  conv_problem(&p, TC_CONV_BWD_DATA, 2, 4, 5, 5, 4, 1, 1, 0, 0, 0, 0, 3, 3, 1, 1, 1);
  tc_conv_plan *plan = NULL;
  TC_STR_LOCAL(err);
  TC_REQUIRE(tc_conv_plan_make(&p, NULL, TC_TARGET_OPENCL, &plan, &err) == TC_OK, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(plan->nsteps, 2);
  TC_CHECK_EQ_INT(plan->steps[0].gemm_m, 0);
  TC_CHECK_EQ_INT(plan->steps[0].nargs, 1);
  TC_CHECK_EQ_INT(plan->steps[0].args[0], TC_BUF_INPUT);
  TC_CHECK(strstr(plan->steps[0].kernel.source, "tilec_conv_zero") != NULL, "zero kernel");
  TC_CHECK_EQ_INT(plan->steps[1].args[2], TC_BUF_INPUT);
  tc_conv_plan_free(plan);
  if (!have_device()) TC_SKIP("no OpenCL device");
  TC_STR_LOCAL(msg);
  double ms;
  TC_CHECK(conv_run_and_verify(&p, NULL, &msg, &ms) == 0, "%s", tc_str_cstr(&msg));
  /* and the case with no GEMM at all */
  conv_problem(&p, TC_CONV_BWD_DATA, 1, 2, 1, 1, 2, 1, 1, 1, 1, 1, 1, 2, 2, 1, 1, 1);
  TC_CHECK(conv_run_and_verify(&p, NULL, &msg, &ms) == 0, "%s", tc_str_cstr(&msg));
}

/* Misuse: NULL arguments and absurd sizes give errors, not crashes. */
static void test_misuse(void) {
  TC_STR_LOCAL(err);
  tc_conv_problem p;
  tc_conv_problem_init(&p);
  TC_CHECK(tc_conv_plan_make(&p, NULL, TC_TARGET_OPENCL, NULL, &err) == TC_ERR_ARGUMENT, "NULL out");
  TC_CHECK(tc_conv_check(NULL, NULL, NULL, &err) == -1, "NULL problem");
  TC_CHECK_STR(tc_str_cstr(&err), "no convolution problem (NULL)");
  TC_CHECK(tc_conv_run(NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, &err) ==
               TC_ERR_ARGUMENT, "NULL plan");
  TC_CHECK(tc_conv_verify(&p, NULL, NULL, NULL, NULL, &err) == -1, "NULL buffers");
  tc_conv_plan *plan = NULL;
  p.n = 1, p.c = 2, p.k = 2, p.h = p.w = 4, p.y = p.x = 1;
  TC_REQUIRE(tc_conv_plan_make(&p, NULL, TC_TARGET_OPENCL, &plan, &err) == TC_OK, "%s", tc_str_cstr(&err));
  float buf[64];
  TC_CHECK(tc_conv_run(plan, NULL, buf, NULL, buf, NULL, 0, NULL, &err) ==
               TC_ERR_ARGUMENT, "NULL filter");
  TC_CHECK_STR(tc_str_cstr(&err), "tc_conv_run: the filter buffer is NULL");
  tc_conv_plan_free(plan);
  /* a stride of 10^5 with a 1000x1000 filter: 10^6 phases */
  conv_problem(&p, TC_CONV_BWD_DATA, 1, 1, 1000, 1000, 1, 1000, 1000, 0, 0, 0, 0, 100000, 100000, 1, 1, 1);
  tc_conv_gemm *g = (tc_conv_gemm *)1;
  int n = -1, zero = -1;
  TC_CHECK(tc_conv_lower(&p, &g, &n, &zero, &err) == -1, "accepted");
  TC_CHECK_STR(tc_str_cstr(&err), "backward data with stride 100000x100000 and a 1000x1000 filter would need "
               "1000000 GEMMs (at most 4096)");
  TC_CHECK(g == NULL && n == 0, "outputs not reset");
}

/* The verifier catches a wrong element and names it. */
static void test_verify_catches(void) {
  tc_conv_problem p;
  conv_problem(&p, TC_CONV_FWD, 1, 3, 5, 5, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1);
  conv_bufs b;
  conv_bufs_alloc(&p, &b, 3);
  tc_conv_reference(&p, b.in, b.fil, b.out);
  TC_STR_LOCAL(msg);
  double worst;
  TC_CHECK(tc_conv_verify(&p, b.in, b.fil, b.out, &worst, &msg) == 0, "%s", tc_str_cstr(&msg));
  ((float *)b.out)[2 * 25 - 1] += 1e-3f; /* k 1, ho 4, wo 4 */
  TC_CHECK(tc_conv_verify(&p, b.in, b.fil, b.out, &worst, &msg) == 1, "%s", tc_str_cstr(&msg));
  TC_CHECK(strstr(tc_str_cstr(&msg), "first at offset 49 (n 0, k 1, ho 4, wo 4)") != NULL, "%s", tc_str_cstr(&msg));
  TC_CHECK(worst > 1, "worst %g", worst);
  conv_bufs_free(&b);
}

/* CUDA plans (GEMMs and the zero-init) compile with NVRTC; no GPU needed. */
static void test_cuda_plans_compile(void) {
  tc_conv_problem ps[2];
  /* zero-init + one GEMM, f32; and four f16 NHWC GEMMs */
  conv_problem(&ps[0], TC_CONV_BWD_DATA, 2, 4, 8, 8, 4, 1, 1, 0, 0, 0, 0, 3, 3, 1, 1, 1);
  ps[1] = conv_small[8].p;
  ps[1].dir = TC_CONV_BWD_DATA;
  int compiled = 0;
  for (int i = 0; i < 2; i++) {
    tc_conv_plan *plan = NULL;
    TC_STR_LOCAL(err);
    TC_REQUIRE(tc_conv_plan_make(&ps[i], NULL, TC_TARGET_CUDA, &plan, &err) == TC_OK,
               "%s", tc_str_cstr(&err));
    TC_CHECK_EQ_INT(plan->target, TC_TARGET_CUDA);
    for (int s = 0; s < plan->nsteps; s++) {
      char *ptx = NULL;
      tc_str e;
      tc_str_init(&e);
      tc_status st = tc_cuda_compile(plan->steps[s].kernel.source, "sm_80", &ptx, &e);
      if (st == TC_ERR_UNSUPPORTED) {
        char why[256];
        snprintf(why, sizeof why, "%s", tc_str_cstr(&e));
        tc_str_free(&e);
        tc_conv_plan_free(plan);
        TC_SKIP("%s", why);
      }
      TC_CHECK(st == TC_OK, "%s: %s", plan->steps[s].kernel.name, tc_str_cstr(&e));
      TC_CHECK(ptx && strstr(ptx, plan->steps[s].kernel.name), "no entry %s in the PTX",
               plan->steps[s].kernel.name);
      compiled += st == TC_OK;
      free(ptx);
      tc_str_free(&e);
    }
    tc_conv_plan_free(plan);
  }
  TC_CHECK_EQ_INT(compiled, 2 + 4);
}

int main(void) {
  double t0 = tc_now_seconds();
#define TIMED(fn)                                                                              \
  do {                                                                                         \
    TC_RUN(fn);                                                                                \
    if (getenv("TC_CONV_VERBOSE")) printf("  %-32s %6.2f s\n", #fn, tc_now_seconds() - t0);    \
    t0 = tc_now_seconds();                                                                     \
  } while (0)
  TC_RUN(test_check_errors);
  TIMED(test_problem_string);
  TIMED(test_reference_by_hand);
  TIMED(test_reference_layouts);
  TIMED(test_verify_catches);
  TIMED(test_misuse);
  TIMED(test_bwd_data_decomposition);
  TIMED(test_views_interpreted);
  TIMED(test_zero_init_plan);
  TIMED(test_given_params);
  TIMED(test_cuda_plans_compile);
  TIMED(test_device_small);
  TIMED(test_device_spec_bwd_data);
  TIMED(test_device_resnet_subset);
  TC_MAIN_END();
}
