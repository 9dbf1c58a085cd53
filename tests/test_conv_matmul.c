/* test_conv_matmul.c - convolutions through the fusion path: each GEMM of
 * the lowering as a fusion whose matmul reads the tensors through
 * coordinate-transform views (tc_input_view) and stores through one
 * (tc_output_view), scheduled by tc_schedule_auto and run on OpenCL
 * (PoCL), compared with the plain-C reference of conv_ref.c (double
 * accumulation, tc_conv_verify's bound): forward, backward-weight and
 * backward-data, 2-D and 3-D, NCHW and NHWC, padding, stride, dilation,
 * groups, ragged sizes, f32 / f16 / bf16; forward with a fused bias and
 * ReLU / GELU / SiLU in one kernel; mma.sync and wgmma tiles by hand
 * (wgmma: the emulation on PoCL, the sm_90a build with NVRTC); the public
 * entry points (2-D and 3-D); a view input and a view output of a
 * pointwise fusion (no matmul); the reference evaluator on a view;
 * the structural hash of a view; the refusals; the CUDA (sm_90a) and HIP
 * (gfx90a) builds of a forward kernel. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tilec/tilec.h"
#include "ir/fusion.h"
#include "ops/conv.h"
#include "runtime/host.h"

static uint64_t g_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
  g_state ^= g_state << 13, g_state ^= g_state >> 7, g_state ^= g_state << 17;
  return g_state;
}

/* n values of t in [-1, 1] */
static void *values(tc_dtype t, int64_t n) {
  void *p = malloc((size_t)(n > 0 ? n : 1) * tc_dtype_size(t));
  for (int64_t i = 0; i < n; i++)
    tc_host_write(t, p, (size_t)i, (double)((int64_t)(rnd() % 2001) - 1000) / 1000.0);
  return p;
}

static void problem(tc_conv_problem *p, tc_conv_dir dir, int64_t n, int64_t c, int64_t h, int64_t w,
                    int64_t k, int64_t y, int64_t x, int64_t pad, int64_t stride, int64_t dil,
                    int64_t g, tc_dtype t, int nhwc) {
  tc_conv_problem_init(p);
  p->dir = dir;
  p->n = n, p->c = c, p->h = h, p->w = w, p->k = k, p->y = y, p->x = x;
  p->pad_h_l = p->pad_h_r = p->pad_w_l = pad;
  p->pad_w_r = pad + (pad > 0); /* asymmetric where padded */
  p->stride_h = p->stride_w = stride, p->dil_h = p->dil_w = dil, p->groups = g;
  p->dtype = t;
  if (nhwc) {
    strcpy(p->in_layout, "NHWC"), strcpy(p->fil_layout, "KYXC"), strcpy(p->out_layout, "NHWK");
  }
}

/* Runs p through the fusion path on OpenCL and verifies the written
 * tensor against the reference; returns the kernels made (-1: failed). */
static int run_and_verify(const char *what, const tc_conv_problem *p, const tc_conv_epi *ep) {
  void *in = values(p->dtype, tc_conv_input_elems(p));
  void *fil = values(p->dtype, tc_conv_filter_elems(p));
  void *out = values(p->dtype, tc_conv_output_elems(p));
  void *bias = ep && ep->bias ? values(p->dtype, p->k) : NULL;
  TC_STR_LOCAL(err);
  tc_conv_fusion_info info;
  tc_status st = tc_conv_fusion_run(p, ep, TC_TARGET_OPENCL, NULL, NULL, NULL, in, fil, out, bias, NULL,
                                    0, NULL, &info, &err);
  int made = -1;
  if (st == TC_ERR_NO_DEVICE) {
    printf("  skip %s: no OpenCL device\n", what);
    made = 0;
  } else {
    TC_CHECK(st == TC_OK, "%s: %s", what, tc_str_cstr(&err));
    if (st == TC_OK) {
      double worst = 0;
      TC_STR_LOCAL(msg);
      int64_t bad = tc_conv_verify_epilogue(p, in, fil, out, bias, ep ? ep->act : -1, &worst, &msg);
      TC_CHECK(bad == 0, "%s (%s %s): %s", what, tc_conv_dir_name(p->dir), tc_dtype_name(p->dtype),
               tc_str_cstr(&msg));
      made = info.total_kernels;
    }
  }
  free(in), free(fil), free(out), free(bias);
  return made;
}

/* The fusions of p (ep may be NULL), *n of them; NULL after a failed
 * check. */
static tc_conv_fusion *fusions(const tc_conv_problem *p, const tc_conv_epi *ep, int *n, int *zero) {
  tc_conv_fusion *fs = NULL;
  TC_STR_LOCAL(err);
  TC_CHECK(tc_conv_fusions(p, ep, &fs, n, zero, &err) == 0, "%s", tc_str_cstr(&err));
  return fs;
}

static const tc_dtype dts[3] = {TC_F32, TC_F16, TC_BF16};

/* Forward, backward-weight and backward-data of the features, each
 * direction in each dtype over the cases. */
static void test_directions_2d(void) {
  struct {
    const char *name;
    int64_t n, c, h, w, k, y, x, pad, stride, dil, g;
    int nhwc;
  } cs[] = {
      {"3x3 pad 1 NCHW", 2, 5, 7, 6, 6, 3, 3, 1, 1, 1, 1, 0},
      {"3x3 stride 2 pad 1 NHWC", 2, 4, 9, 8, 5, 3, 3, 1, 2, 1, 1, 1},
      {"dilation 2 groups 2 NCHW", 1, 6, 8, 9, 4, 3, 2, 1, 1, 2, 2, 0},
      {"1x1 ragged groups 3 NHWC", 3, 9, 5, 7, 6, 1, 1, 0, 1, 1, 3, 1},
  };
  tc_conv_dir dirs[3] = {TC_CONV_FWD, TC_CONV_BWD_WEIGHT, TC_CONV_BWD_DATA};
  for (size_t i = 0; i < sizeof cs / sizeof *cs; i++)
    for (int d = 0; d < 3; d++) {
      /* every dtype on the first two cases, then one per direction */
      int t0 = i < 2 ? 0 : (int)((i + (size_t)d) % 3), t1 = i < 2 ? 3 : t0 + 1;
      for (int t = t0; t < t1; t++) {
        tc_conv_problem p;
        problem(&p, dirs[d], cs[i].n, cs[i].c, cs[i].h, cs[i].w, cs[i].k, cs[i].y, cs[i].x,
                cs[i].pad, cs[i].stride, cs[i].dil, cs[i].g, dts[t], cs[i].nhwc);
        int made = run_and_verify(cs[i].name, &p, NULL);
        /* backward data with stride 2: 2 x 2 filter phases, each its own GEMM */
        if (made > 0 && dirs[d] == TC_CONV_BWD_DATA && cs[i].stride == 2) TC_CHECK_EQ_INT(made, 4);
        if (made > 0 && dirs[d] != TC_CONV_BWD_DATA) TC_CHECK_EQ_INT(made, 1);
      }
    }
}

/* A 3-D convolution (depth as one more spatial dim) in each direction. */
static void test_directions_3d(void) {
  tc_conv_dir dirs[3] = {TC_CONV_FWD, TC_CONV_BWD_WEIGHT, TC_CONV_BWD_DATA};
  for (int d = 0; d < 3; d++) {
    tc_conv_problem p;
    problem(&p, dirs[d], 1, 3, 5, 4, 4, 2, 3, 1, 1, 1, 1, TC_F32, 0);
    tc_conv_problem_make_3d(&p);
    p.d = 4, p.z = 2, p.pad_d_l = 1, p.pad_d_r = 0, p.stride_d = 2, p.dil_d = 1;
    run_and_verify("3-D z2 stride_d 2", &p, NULL);
  }
}

/* Forward with a bias per output channel and an activation after it,
 * in the one kernel of the GEMM. */
static void test_forward_epilogue(void) {
  int acts[3] = {TC_RELU, TC_GELU, TC_SILU};
  for (int a = 0; a < 3; a++)
    for (int t = 0; t < 3; t++) {
      if (a && t != a) continue; /* ReLU in every dtype, GELU in f16, SiLU in bf16 */
      tc_conv_problem p;
      problem(&p, TC_CONV_FWD, 2, 4, 7, 7, 6, 3, 3, 1, 2, 1, a == 1 ? 2 : 1, dts[t], t == 1);
      tc_conv_epi ep = {1, acts[a]};
      int made = run_and_verify("bias + activation", &p, &ep);
      if (made > 0) TC_CHECK_EQ_INT(made, 1);
    }
}

/* The forward fusion with bias + ReLU is one matmul fusion, compiled to
 * one kernel whose source holds the matmul, the bias and the ReLU; its
 * output is stored through the output's view. */
static void test_one_kernel(void) {
  tc_conv_problem p;
  problem(&p, TC_CONV_FWD, 2, 4, 7, 7, 6, 3, 3, 1, 1, 1, 1, TC_F32, 0);
  tc_conv_epi ep = {1, TC_RELU};
  tc_conv_fusion *fs;
  int n, zero;
  TC_REQUIRE((fs = fusions(&p, &ep, &n, &zero)) != NULL, "no fusions");
  TC_CHECK_EQ_INT(n, 1);
  TC_CHECK_EQ_INT(zero, 0);
  tc_fusion *f = fs[0].f;
  TC_CHECK_EQ_INT(f->ninputs, 3); /* filter view, input view, bias */
  TC_CHECK_EQ_INT(f->noutputs, 1);
  TC_CHECK(f->inputs[0]->view && f->inputs[1]->view && !f->inputs[2]->view && f->outputs[0]->view,
           "views on the operands and the output");
  /* buffers of the conv tensors' sizes: filter 6*4*3*3, input 2*4*7*7 */
  TC_CHECK_EQ_INT(tc_tensor_bytes(f->inputs[0]), 6 * 4 * 3 * 3 * 4);
  TC_CHECK_EQ_INT(tc_tensor_bytes(f->inputs[1]), 2 * 4 * 7 * 7 * 4);
  TC_CHECK_EQ_INT(tc_tensor_bytes(f->outputs[0]), 2 * 6 * 7 * 8 * 4); /* pad_w_r 2: Wo 8 */
  int nmat = 0;
  for (int i = 0; i < f->nops; i++) nmat += f->ops[i]->kind == TC_OP_MATMUL;
  TC_CHECK_EQ_INT(nmat, 1);
  TC_CHECK(tc_schedule_auto(f, TC_TARGET_OPENCL, NULL) == TC_OK, "%s", tc_fusion_error(f));
  TC_CHECK(strstr(tc_fusion_schedule_note(f), "matmul") != NULL, "note: %s", tc_fusion_schedule_note(f));
  tc_status st;
  tc_kernel *k = tc_compile(f, NULL, &st);
  TC_CHECK(k != NULL, "%s", tc_fusion_error(f));
  if (k) {
    const char *src = tc_kernel_source(k);
    /* one kernel function; the padding's predicate guards the input load */
    int kernels = 0;
    for (const char *s = src; (s = strstr(s, "__kernel")) != NULL; s++) kernels++;
    TC_CHECK_EQ_INT(kernels, 1);
    TC_CHECK(strstr(src, "fmax") != NULL, "the ReLU is in the kernel");
    TC_CHECK(strstr(src, " : 0.0f)") != NULL, "a padded read yields 0");
    /* only the input (T1) has padding: the filter's view (T0) has no
     * predicate left once the tile edges' checks (the statement's own)
     * and the digit checks they imply are taken out */
    TC_CHECK(strstr(src, ") ? T1[") != NULL && strstr(src, ") ? T0[") == NULL, "%s", src);
  }
  tc_kernel_free(k);
  tc_conv_fusions_free(fs, n);
}

/* The reference evaluator reads and writes through the views: its result
 * for a padded, strided NHWC forward is conv_ref's. */
static void test_reference_evaluator(void) {
  for (int dir = 0; dir < 2; dir++) {
    tc_conv_problem p;
    problem(&p, dir ? TC_CONV_BWD_DATA : TC_CONV_FWD, 2, 3, 6, 5, 4, 3, 2, 1, 2, 1, 1, TC_F32, 1);
    tc_conv_fusion *fs;
    int n, zero;
    TC_REQUIRE((fs = fusions(&p, NULL, &n, &zero)) != NULL, "no fusions");
    float *in = values(TC_F32, tc_conv_input_elems(&p)), *fil = values(TC_F32, tc_conv_filter_elems(&p));
    float *out = values(TC_F32, tc_conv_output_elems(&p));
    void *bufs[3] = {in, fil, out};
    tc_conv_buf w = tc_conv_written_buf(p.dir);
    if (zero) memset(bufs[w], 0, (size_t)(w == TC_BUF_INPUT ? tc_conv_input_elems(&p) : tc_conv_output_elems(&p)) * 4);
    for (int i = 0; i < n; i++) {
      void *args[4];
      for (int a = 0; a < fs[i].nargs; a++) args[a] = bufs[fs[i].args[a]];
      TC_CHECK(tc_reference_run(fs[i].f, args) == TC_OK, "%s", tc_fusion_error(fs[i].f));
    }
    double worst;
    TC_STR_LOCAL(msg);
    TC_CHECK(tc_conv_verify(&p, in, fil, out, &worst, &msg) == 0, "%s: %s", tc_conv_dir_name(p.dir),
             tc_str_cstr(&msg));
    free(in), free(fil), free(out);
    tc_conv_fusions_free(fs, n);
  }
}

/* Two problems with the same GEMM shapes but other layouts read other
 * views: their fusions hash differently. */
static void test_hash_covers_view(void) {
  char h[2][33];
  for (int l = 0; l < 2; l++) {
    tc_conv_problem p;
    problem(&p, TC_CONV_FWD, 2, 4, 6, 6, 4, 3, 3, 1, 1, 1, 1, TC_F32, l);
    tc_conv_fusion *fs;
    int n, zero;
    TC_REQUIRE((fs = fusions(&p, NULL, &n, &zero)) != NULL, "no fusions");
    tc_fusion_hash(fs[0].f, TC_TARGET_OPENCL, NULL, "k", h[l]);
    tc_conv_fusions_free(fs, n);
  }
  TC_CHECK(strcmp(h[0], h[1]) != 0, "NCHW and NHWC hash alike: %s", h[0]);
}

/* An epilogue applies to forward only; an activation must be one of three. */
static void test_refusals(void) {
  tc_conv_problem p;
  problem(&p, TC_CONV_BWD_DATA, 1, 2, 4, 4, 2, 3, 3, 1, 1, 1, 1, TC_F32, 0);
  tc_conv_epi ep = {1, TC_RELU};
  tc_conv_fusion *fs;
  int n, zero;
  TC_STR_LOCAL(err);
  TC_CHECK(tc_conv_fusions(&p, &ep, &fs, &n, &zero, &err) == -1, "accepted");
  TC_CHECK(strstr(tc_str_cstr(&err), "forward convolutions only, not bwd-data") != NULL, "%s",
           tc_str_cstr(&err));
  p.dir = TC_CONV_FWD;
  ep.act = TC_EXP;
  TC_CHECK(tc_conv_fusions(&p, &ep, &fs, &n, &zero, &err) == -1, "accepted");
  TC_CHECK(strstr(tc_str_cstr(&err), "relu, gelu or silu") != NULL, "%s", tc_str_cstr(&err));
  /* an output view of another shape */
  tc_fusion *f = tc_fusion_new();
  int64_t s2[2] = {3, 4};
  tc_tensor *a = tc_input(f, TC_F32, 2, s2);
  tc_tensor *y = tc_unary(f, TC_RELU, a);
  TC_CHECK(tc_add_output(f, y) == TC_OK, "%s", tc_fusion_error(f));
  int64_t e[2] = {4, 3};
  tc_view *v = tc_view_new(2, e, NULL, NULL);
  TC_CHECK(tc_output_view(y, v, 12) == TC_ERR_ARGUMENT, "accepted");
  TC_CHECK(strstr(tc_fusion_error(f), "the view's dim 0 has extent 4 but T1's axis 0 has 3") != NULL,
           "%s", tc_fusion_error(f));
  tc_view_free(v);
  tc_fusion_free(f);
}

/* The forward kernel with bias + ReLU builds with NVRTC for sm_90a and
 * with hipcc for gfx90a (skipped where the compiler is missing). */
static void test_device_builds(void) {
  for (int t = TC_TARGET_CUDA; t <= TC_TARGET_HIP; t++) {
    tc_conv_problem p;
    problem(&p, TC_CONV_FWD, 2, 8, 9, 9, 16, 3, 3, 1, 1, 1, 1, TC_F16, 1);
    tc_conv_epi ep = {1, TC_RELU};
    tc_conv_fusion *fs;
    int n, zero;
    TC_REQUIRE((fs = fusions(&p, &ep, &n, &zero)) != NULL, "no fusions");
    tc_fusion *f = fs[0].f;
    const char *arch = t == TC_TARGET_CUDA ? "sm_90a" : "gfx90a";
    TC_CHECK(tc_schedule_auto(f, (tc_target)t, arch) == TC_OK, "%s", tc_fusion_error(f));
    tc_compile_options o = {(tc_target)t, arch, "conv_fwd"};
    tc_status st;
    tc_kernel *k = tc_compile(f, &o, &st);
    TC_CHECK(k != NULL, "%s: %s", tc_target_name((tc_target)t), tc_fusion_error(f));
    if (k) {
      st = tc_kernel_build(k, NULL);
      if (st == TC_ERR_UNSUPPORTED)
        printf("  skip %s build: %s\n", tc_target_name((tc_target)t), tc_kernel_error(k));
      else
        TC_CHECK(st == TC_OK, "%s does not build: %s", tc_target_name((tc_target)t), tc_kernel_error(k));
    }
    tc_kernel_free(k);
    tc_conv_fusions_free(fs, n);
  }
}

/* The public entry points: tc_conv2d_fusion's count and buffers,
 * tc_conv2d_run_fusion + tc_conv2d_verify_fusion (which catches one
 * wrong element), a GEMM index out of range. */
static void test_public_api(void) {
  tc_conv2d_desc d;
  tc_conv2d_desc_init(&d);
  d.direction = TC_CONV2D_BACKWARD_DATA;
  d.n = 2, d.c = 4, d.h = 9, d.w = 8, d.k = 6, d.y = 3, d.x = 3;
  d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
  d.stride_h = d.stride_w = 2;
  d.dtype = TC_BF16;
  tc_conv2d *c = tc_conv2d_new(&d, NULL);
  tc_conv2d_tensor args[4];
  int nargs = 0, count = 0;
  tc_fusion *f = tc_conv2d_fusion(c, NULL, 3, args, &nargs, &count);
  TC_CHECK(f != NULL, "%s", tc_conv2d_error(c));
  TC_CHECK_EQ_INT(count, 4); /* 2 x 2 filter phases */
  TC_CHECK_EQ_INT(nargs, 3);
  TC_CHECK(args[0] == TC_CONV2D_FILTER && args[1] == TC_CONV2D_OUTPUT && args[2] == TC_CONV2D_INPUT,
           "args %d %d %d", args[0], args[1], args[2]);
  tc_fusion_free(f);
  TC_CHECK(tc_conv2d_fusion(c, NULL, 4, args, &nargs, NULL) == NULL, "GEMM 4 exists");
  TC_CHECK(strstr(tc_conv2d_error(c), "GEMM 4 does not exist; the convolution has 4") != NULL, "%s",
           tc_conv2d_error(c));
  tc_conv2d_free(c);

  d.direction = TC_CONV2D_FORWARD;
  c = tc_conv2d_new(&d, NULL);
  void *in = values(TC_BF16, tc_conv2d_elems(c, TC_CONV2D_INPUT));
  void *fil = values(TC_BF16, tc_conv2d_elems(c, TC_CONV2D_FILTER));
  void *out = values(TC_BF16, tc_conv2d_elems(c, TC_CONV2D_OUTPUT));
  void *bias = values(TC_BF16, d.k);
  tc_conv2d_epilogue ep = {bias, true, TC_SILU};
  tc_status st = tc_conv2d_run_fusion(c, &ep, in, fil, out, NULL);
  if (st == TC_ERR_NO_DEVICE) {
    printf("  skip the run: no OpenCL device\n");
  } else {
    TC_CHECK(st == TC_OK, "%s", tc_conv2d_error(c));
    TC_CHECK_EQ_INT(tc_conv2d_verify_fusion(c, &ep, in, fil, out, NULL), 0);
    TC_CHECK(tc_conv2d_verify_fusion(c, NULL, in, fil, out, NULL) > 0, "no epilogue passes too");
    tc_host_write(TC_BF16, out, 5, tc_host_read(TC_BF16, out, 5) + 0.25);
    TC_CHECK_EQ_INT(tc_conv2d_verify_fusion(c, &ep, in, fil, out, NULL), 1);
  }
  /* tiles by hand (tc_conv2d_set_fusion_tiles): mma.sync in a ring of 2;
   * tiles with an extent of 0 refused; NULL: the scheduler's again */
  tc_matmul_tiles tl = {16, 32, 16, 16, 8, TC_MACRO_MMA_M16N8K16, 2}, bad = {16, 0, 16, 16, 8};
  TC_CHECK(tc_conv2d_set_fusion_tiles(c, &bad) == TC_ERR_ARGUMENT &&
               strstr(tc_conv2d_error(c), "every extent must be at least 1"), "%s", tc_conv2d_error(c));
  TC_CHECK(tc_conv2d_set_fusion_tiles(c, &tl) == TC_OK, "%s", tc_conv2d_error(c));
  memset(out, 0, (size_t)tc_conv2d_elems(c, TC_CONV2D_OUTPUT) * 2);
  st = tc_conv2d_run_fusion(c, &ep, in, fil, out, NULL);
  if (st != TC_ERR_NO_DEVICE) {
    TC_CHECK(st == TC_OK, "%s", tc_conv2d_error(c));
    TC_CHECK_EQ_INT(tc_conv2d_verify_fusion(c, &ep, in, fil, out, NULL), 0);
  }
  TC_CHECK(tc_conv2d_set_fusion_tiles(c, NULL) == TC_OK, "%s", tc_conv2d_error(c));
  free(in), free(fil), free(out), free(bias);
  tc_conv2d_free(c);

  /* a 3-D convolution (tc_conv3d_new) through the same calls: NDHWC
   * forward with bias + GELU in f16 */
  tc_conv3d_desc d3;
  tc_conv3d_desc_init(&d3);
  d3.n = 1, d3.c = 4, d3.d = 4, d3.h = 5, d3.w = 5, d3.k = 6, d3.z = 2, d3.y = 3, d3.x = 3;
  d3.pad_front = 1, d3.pad_top = d3.pad_bottom = d3.pad_left = d3.pad_right = 1;
  d3.stride_d = 2;
  d3.dtype = TC_F16;
  d3.in_layout = "NDHWC", d3.fil_layout = "KZYXC", d3.out_layout = "NDHWK";
  c = tc_conv3d_new(&d3, NULL);
  in = values(TC_F16, tc_conv2d_elems(c, TC_CONV2D_INPUT));
  fil = values(TC_F16, tc_conv2d_elems(c, TC_CONV2D_FILTER));
  out = values(TC_F16, tc_conv2d_elems(c, TC_CONV2D_OUTPUT));
  bias = values(TC_F16, tc_conv2d_elems(c, TC_CONV2D_BIAS));
  tc_conv2d_epilogue e3 = {bias, true, TC_GELU};
  st = tc_conv2d_run_fusion(c, &e3, in, fil, out, NULL);
  if (st != TC_ERR_NO_DEVICE) {
    TC_CHECK(st == TC_OK, "%s", tc_conv2d_error(c));
    TC_CHECK_EQ_INT(tc_conv2d_verify_fusion(c, &e3, in, fil, out, NULL), 0);
  }
  free(in), free(fil), free(out), free(bias);
  tc_conv2d_free(c);
}

/* Runs k, the forward convolution p's fusion fs (with a bias and ReLU),
 * on random values and checks it against the plain reference. */
static void run_relu(const tc_conv_problem *p, tc_kernel *k, const tc_conv_fusion *fs, const char *what) {
  void *bufs[4] = {values(p->dtype, tc_conv_input_elems(p)), values(p->dtype, tc_conv_filter_elems(p)),
                   values(p->dtype, tc_conv_output_elems(p)), values(p->dtype, p->k)};
  void *args[4];
  for (int a = 0; a < fs->nargs; a++) args[a] = bufs[fs->args[a]];
  tc_status st = tc_kernel_run(k, args, NULL, NULL);
  if (st == TC_ERR_NO_DEVICE) {
    printf("  skip the run: no OpenCL device\n");
  } else {
    TC_CHECK(st == TC_OK, "%s: %s", what, tc_kernel_error(k));
    TC_STR_LOCAL(msg);
    TC_CHECK(tc_conv_verify_epilogue(p, bufs[0], bufs[1], bufs[2], bufs[3], TC_RELU, NULL, &msg) == 0,
             "%s %s: %s", what, tc_dtype_name(p->dtype), tc_str_cstr(&msg));
  }
  for (int b = 0; b < 4; b++) free(bufs[b]);
}

/* The fusion of a forward f16 / bf16 convolution takes the matmul's
 * mma.sync op type too (tiles by hand: tc_schedule_matmul; OpenCL runs
 * the instruction's emulation), with bias + ReLU, NHWC and padding, with
 * the operand tiles in one buffer or in rings of 3 (K = 8 x 3 x 3 = 72:
 * 5 K tiles of 16), the padded input's copies reading 0 in every slot;
 * and the CUDA kernel tc_schedule_auto makes (mma.sync with rings) builds.
 * The image, whose channels (part of K) are innermost, is staged K-major:
 * ldmatrix without .trans, and zero-filling 16-byte cp.async in rings. */
static void mma_case(int t, int stages) {
  {
    tc_conv_problem p;
    problem(&p, TC_CONV_FWD, 2, 8, 7, 6, 16, 3, 3, 1, 1, 1, 1, dts[t], 1);
    tc_conv_epi ep = {1, TC_RELU};
    tc_conv_fusion *fs;
    int n, zero;
    TC_REQUIRE((fs = fusions(&p, &ep, &n, &zero)) != NULL, "no fusions");
    tc_fusion *f = fs[0].f;
    tc_matmul_tiles tl = {32, 32, 16, 16, 8, TC_MACRO_MMA_M16N8K16, stages};
    TC_CHECK(tc_schedule_matmul(f, TC_TARGET_OPENCL, NULL, &tl) == TC_OK, "%s", tc_fusion_error(f));
    tc_status st;
    tc_kernel *k = tc_compile(f, NULL, &st);
    TC_CHECK(k != NULL, "%s", tc_fusion_error(f));
    if (k) {
      TC_CHECK(strstr(tc_kernel_source(k), "mma") != NULL, "the mma.sync emulation is in the kernel");
      run_relu(&p, k, &fs[0], "mma.sync");
    }
    tc_kernel_free(k);
    tc_conv_fusions_free(fs, n);
    /* the same for CUDA sm_80: mma.sync itself, built by NVRTC */
    TC_REQUIRE((fs = fusions(&p, &ep, &n, &zero)) != NULL, "no fusions");
    f = fs[0].f;
    TC_CHECK(tc_schedule_matmul(f, TC_TARGET_CUDA, "sm_80", &tl) == TC_OK, "%s", tc_fusion_error(f));
    tc_compile_options o = {TC_TARGET_CUDA, "sm_80", "conv_mma"};
    k = tc_compile(f, &o, &st);
    TC_CHECK(k != NULL, "%s", tc_fusion_error(f));
    if (k) {
      TC_CHECK(strstr(tc_kernel_source(k), "mma.sync.aligned.m16n8k16") != NULL, "mma.sync in the CUDA kernel");
      /* NHWC: the image's K (its channels) is innermost, so its tile is
       * staged [N, K], read by ldmatrix.x2 without .trans, and copied by
       * 16-byte cp.async that zero-fill the padding (one buffer: plain) */
      TC_CHECK(strstr(tc_kernel_source(k), "B fragment: ldmatrix.x2 */") != NULL, "B by ldmatrix.x2");
      TC_CHECK(stages == 1 || strstr(tc_kernel_source(k), "tc_cpa16z(") != NULL,
               "the image's copies are not zero-filling cp.async (%d stages)", stages);
      st = tc_kernel_build(k, NULL);
      if (st == TC_ERR_UNSUPPORTED) printf("  skip the NVRTC build: %s\n", tc_kernel_error(k));
      else TC_CHECK(st == TC_OK, "does not build: %s", tc_kernel_error(k));
    }
    tc_kernel_free(k);
    tc_conv_fusions_free(fs, n);
    /* the scheduler's CUDA kernel: mma.sync with rings of cp.async */
    TC_REQUIRE((fs = fusions(&p, &ep, &n, &zero)) != NULL, "no fusions");
    f = fs[0].f;
    TC_CHECK(tc_schedule_auto(f, TC_TARGET_CUDA, "sm_80") == TC_OK, "%s", tc_fusion_error(f));
    TC_CHECK(strstr(tc_fusion_schedule_note(f), "in rings of"), "%s", tc_fusion_schedule_note(f));
    k = tc_compile(f, &o, &st);
    TC_CHECK(k != NULL, "%s", tc_fusion_error(f));
    if (k) {
      st = tc_kernel_build(k, NULL);
      if (st == TC_ERR_UNSUPPORTED) printf("  skip the NVRTC build: %s\n", tc_kernel_error(k));
      else TC_CHECK(st == TC_OK, "the scheduler's kernel does not build: %s", tc_kernel_error(k));
    }
    tc_kernel_free(k);
    tc_conv_fusions_free(fs, n);
  }
}

/* The fusion of a forward NHWC f16 / bf16 convolution takes the wgmma op
 * type by hand (tc_schedule_matmul with wgmma tiles; OpenCL runs the
 * instruction's emulation, which reads the tiles through the descriptors
 * the lowering derived): K tiles of 64 with the 128B swizzle, both
 * operands K-major (the channels innermost), one buffer or rings of 2
 * and 3, padding reading 0, bias + ReLU, against the plain reference; the
 * same schedule for CUDA sm_90a builds with NVRTC.  tc_schedule_auto
 * keeps mma.sync for views and says why not wgmma. */
static void wgmma_case(int t, int stages, int64_t c, int64_t kout) {
  tc_conv_problem p;
  problem(&p, TC_CONV_FWD, 2, c, 7, 6, kout, 3, 3, 1, 1, 1, 1, dts[t], 1);
  tc_conv_epi ep = {1, TC_RELU};
  tc_matmul_tiles tl = {64, 64, 64, 64, 64, TC_MACRO_WGMMA, stages};
  for (int cuda = 0; cuda < 2; cuda++) {
    tc_conv_fusion *fs;
    int n, zero;
    TC_REQUIRE((fs = fusions(&p, &ep, &n, &zero)) != NULL, "no fusions");
    tc_fusion *f = fs[0].f;
    tc_target target = cuda ? TC_TARGET_CUDA : TC_TARGET_OPENCL;
    TC_CHECK(tc_schedule_matmul(f, target, cuda ? "sm_90a" : NULL, &tl) == TC_OK, "%s", tc_fusion_error(f));
    TC_CHECK(strstr(tc_fusion_schedule_note(f), "wgmma m64n64k16") &&
                 strstr(tc_fusion_schedule_note(f), "staged K-major (128B swizzle)"),
             "%s", tc_fusion_schedule_note(f));
    tc_compile_options o = {target, cuda ? "sm_90a" : NULL, "conv_wgmma"};
    tc_status st;
    tc_kernel *k = tc_compile(f, &o, &st);
    TC_CHECK(k != NULL, "%s", tc_fusion_error(f));
    if (k && cuda) {
      TC_CHECK(strstr(tc_kernel_source(k), "wgmma.mma_async.sync.aligned.m64n64k16") != NULL, "no wgmma");
      st = tc_kernel_build(k, NULL);
      if (st == TC_ERR_UNSUPPORTED) printf("  skip the NVRTC build: %s\n", tc_kernel_error(k));
      else TC_CHECK(st == TC_OK, "does not build: %s", tc_kernel_error(k));
    } else if (k) {
      char what[64];
      snprintf(what, sizeof what, "wgmma, C %lld K %lld, %d stages", (long long)c, (long long)kout, stages);
      run_relu(&p, k, &fs[0], what);
    }
    tc_kernel_free(k);
    tc_conv_fusions_free(fs, n);
  }
}

static void test_wgmma_tiles(void) {
  wgmma_case(1, 1, 16, 16);
  wgmma_case(2, 3, 32, 24);
  wgmma_case(1, 2, 8, 64);
  /* the scheduler keeps mma.sync for views on sm_90a, and says why */
  tc_conv_problem p;
  problem(&p, TC_CONV_FWD, 2, 64, 7, 6, 64, 3, 3, 1, 1, 1, 1, TC_F16, 1);
  tc_conv_fusion *fs;
  int n, zero;
  TC_REQUIRE((fs = fusions(&p, NULL, &n, &zero)) != NULL, "no fusions");
  TC_CHECK(tc_schedule_auto(fs[0].f, TC_TARGET_CUDA, "sm_90a") == TC_OK, "%s", tc_fusion_error(fs[0].f));
  TC_CHECK(strstr(tc_fusion_schedule_note(fs[0].f), "mma.sync m16n8k16") &&
               strstr(tc_fusion_schedule_note(fs[0].f), "(not wgmma: through a convolution's views wgmma "
                                                        "has not been measured"),
           "%s", tc_fusion_schedule_note(fs[0].f));
  tc_conv_fusions_free(fs, n);
}

static void test_mma_tiles(void) {
  for (int t = 1; t < 3; t++)
    for (int stages = 1; stages <= 3; stages += 2) mma_case(t, stages);
}

/* A view input outside any matmul: a padded, transposed view of a 4 x 5
 * buffer, a ReLU of it (tc_schedule_auto's pointwise schedule), stored
 * through a view that writes it transposed ([4][8] in memory); against a plain
 * C loop, and tc_reference_run against the same loop. */
static void test_view_pointwise(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t e[2] = {4, 5};
  tc_view *v = tc_view_new(2, e, NULL, NULL);
  int perm[2] = {1, 0};
  TC_REQUIRE(tc_view_pad(v, 1, 1, 2) == 0 && tc_view_reorder(v, perm) == 0, "%s", v->err); /* [8, 4] */
  tc_tensor *a = tc_input_view(f, TC_F32, v, 20);
  TC_REQUIRE(a != NULL, "%s", tc_fusion_error(f));
  tc_tensor *y = tc_unary(f, TC_RELU, a);
  TC_CHECK(tc_add_output(f, y) == TC_OK, "%s", tc_fusion_error(f));
  /* out[r][c] stored at c * 8 + r: the buffer [4][8] seen as [8, 4] */
  int64_t oe[2] = {4, 8};
  tc_view *ov = tc_view_new(2, oe, NULL, NULL);
  TC_REQUIRE(tc_view_reorder(ov, perm) == 0, "%s", ov->err);
  tc_view_free(v);
  TC_CHECK(tc_output_view(y, ov, 32) == TC_OK, "%s", tc_fusion_error(f));
  tc_view_free(ov);
  float in[20], got[32], ref[32], want[32];
  for (int i = 0; i < 20; i++) in[i] = (float)(i % 7) - 3.0f;
  for (int r = 0; r < 8; r++)
    for (int c = 0; c < 4; c++) {
      int col = r - 1; /* the padded dim: 1 before, 2 after */
      float x = col >= 0 && col < 5 ? in[c * 5 + col] : 0.0f;
      want[c * 8 + r] = x > 0 ? x : 0;
    }
  void *args[2] = {in, ref};
  TC_CHECK(tc_reference_run(f, args) == TC_OK, "%s", tc_fusion_error(f));
  TC_CHECK(memcmp(ref, want, sizeof want) == 0, "reference");
  TC_CHECK(tc_schedule_auto(f, TC_TARGET_OPENCL, NULL) == TC_OK, "%s", tc_fusion_error(f));
  tc_status st;
  tc_kernel *k = tc_compile(f, NULL, &st);
  TC_REQUIRE(k != NULL, "%s", tc_fusion_error(f));
  args[1] = got;
  st = tc_kernel_run(k, args, NULL, NULL);
  if (st != TC_ERR_NO_DEVICE) {
    TC_CHECK(st == TC_OK, "%s", tc_kernel_error(k));
    TC_CHECK(memcmp(got, want, sizeof want) == 0, "kernel: got[0..3] %g %g %g %g", got[0], got[1], got[2], got[3]);
  }
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* Pseudo-random problems (a fixed seed): sizes 1..9 (ragged), asymmetric
 * padding, stride 1..3, dilation 1..2, groups, either layout, each
 * direction and dtype; the ones with an empty output are skipped. */
static void test_random_problems(void) {
  uint64_t keep = g_state;
  g_state = 0x51ed2701a3c4b5d6ull;
  int ran = 0;
  for (int i = 0; i < 40 && ran < 14; i++) {
    tc_conv_problem p;
    int64_t g = 1 + (int64_t)(rnd() % 3);
    tc_conv_dir dirs[3] = {TC_CONV_FWD, TC_CONV_BWD_WEIGHT, TC_CONV_BWD_DATA};
    problem(&p, dirs[rnd() % 3], 1 + (int64_t)(rnd() % 3), g * (1 + (int64_t)(rnd() % 3)),
            1 + (int64_t)(rnd() % 9), 1 + (int64_t)(rnd() % 9), g * (1 + (int64_t)(rnd() % 3)),
            1 + (int64_t)(rnd() % 3), 1 + (int64_t)(rnd() % 3), 0, 1 + (int64_t)(rnd() % 3),
            1 + (int64_t)(rnd() % 2), g, dts[rnd() % 3], (int)(rnd() % 2));
    p.pad_h_l = (int64_t)(rnd() % 3), p.pad_h_r = (int64_t)(rnd() % 3);
    p.pad_w_l = (int64_t)(rnd() % 3), p.pad_w_r = (int64_t)(rnd() % 3);
    p.stride_w = 1 + (int64_t)(rnd() % 3), p.dil_h = 1 + (int64_t)(rnd() % 2);
    int64_t ho, wo;
    tc_conv_problem q = p;
    if (q.dtype == TC_BF16) q.dtype = TC_F16;
    if (tc_conv_check(&q, &ho, &wo, NULL) != 0 || ho < 1 || wo < 1) continue;
    char what[200];
    snprintf(what, sizeof what, "random %d: %s n%lld c%lld %lldx%lld k%lld %lldx%lld pad %lld,%lld,%lld,%lld "
             "stride %lld,%lld dil %lld,%lld g%lld %s", i, p.in_layout, (long long)p.n, (long long)p.c,
             (long long)p.h, (long long)p.w, (long long)p.k, (long long)p.y, (long long)p.x,
             (long long)p.pad_h_l, (long long)p.pad_h_r, (long long)p.pad_w_l, (long long)p.pad_w_r,
             (long long)p.stride_h, (long long)p.stride_w, (long long)p.dil_h, (long long)p.dil_w,
             (long long)p.groups, tc_dtype_name(p.dtype));
    tc_conv_epi ep = {p.dir == TC_CONV_FWD, p.dir == TC_CONV_FWD ? TC_RELU : -1};
    run_and_verify(what, &p, &ep);
    ran++;
  }
  TC_CHECK(ran >= 10, "only %d problems had an output", ran);
  g_state = keep;
}

int main(void) {
  TC_RUN(test_random_problems);
  TC_RUN(test_view_pointwise);
  TC_RUN(test_mma_tiles);
  TC_RUN(test_wgmma_tiles);
  TC_RUN(test_public_api);
  TC_RUN(test_refusals);
  TC_RUN(test_hash_covers_view);
  TC_RUN(test_reference_evaluator);
  TC_RUN(test_one_kernel);
  TC_RUN(test_device_builds);
  TC_RUN(test_forward_epilogue);
  TC_RUN(test_directions_3d);
  TC_RUN(test_directions_2d);
  TC_MAIN_END();
}
