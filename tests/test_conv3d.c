/* test_conv3d.c - 3-D convolution (NCDHW / NDHWC): the checks and the
 * problem string, the plain-C reference against the 2-D reference summed
 * over the depth taps (an independent decomposition: a 3-D convolution is
 * a sum of 2-D ones, one per pair of depth positions), across layouts,
 * the lowering's views interpreted on the host at ragged shapes in every
 * direction, and the kernels run on the OpenCL device (PoCL) through the
 * public tc_conv3d_ API and verified, in every direction. */
#include <math.h>
#include <stdint.h>

#include "test.h"
#include "conv_test_util.h"
#include "ops/conv_internal.h"
#include "tilec/tilec.h"

/* A 3-D problem: sizes (d, h, w), filter (z, y, x), padding (front/back,
 * top/bottom, left/right), strides, dilations. */
typedef struct c3 {
  const char *name;
  int64_t n, c, k, g;
  int64_t in[3], fil[3], pl[3], pr[3], st[3], dil[3];
  tc_dtype dt;
  int nhwc; /* NDHWC / KZYXC / NDHWK */
} c3;

static void c3_problem(const c3 *c, tc_conv_dir dir, tc_conv_problem *p) {
  tc_conv_problem_init(p);
  tc_conv_problem_make_3d(p);
  p->dir = dir;
  p->n = c->n, p->c = c->c, p->k = c->k, p->groups = c->g, p->dtype = c->dt;
  p->d = c->in[0], p->h = c->in[1], p->w = c->in[2];
  p->z = c->fil[0], p->y = c->fil[1], p->x = c->fil[2];
  p->pad_d_l = c->pl[0], p->pad_h_l = c->pl[1], p->pad_w_l = c->pl[2];
  p->pad_d_r = c->pr[0], p->pad_h_r = c->pr[1], p->pad_w_r = c->pr[2];
  p->stride_d = c->st[0], p->stride_h = c->st[1], p->stride_w = c->st[2];
  p->dil_d = c->dil[0], p->dil_h = c->dil[1], p->dil_w = c->dil[2];
  if (c->nhwc) {
    strcpy(p->in_layout, "NDHWC");
    strcpy(p->fil_layout, "KZYXC");
    strcpy(p->out_layout, "NDHWK");
  }
}

/* Ragged shapes: odd sizes, stride 2, dilation 2, padding (asymmetric
 * too), groups, NDHWC, f16. */
static const c3 cases[] = {
    {"odd 3x3x3 s2 p1", 2, 3, 4, 1, {5, 7, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {2, 2, 2},
     {1, 1, 1}, TC_F32, 0},
    {"dilation 2 NDHWC", 1, 4, 6, 1, {7, 5, 6}, {2, 3, 2}, {1, 0, 2}, {1, 0, 2}, {1, 1, 1},
     {2, 2, 2}, TC_F32, 1},
    {"s2 d2 asym pad g2", 2, 4, 6, 2, {7, 6, 5}, {3, 2, 3}, {2, 1, 0}, {0, 1, 1}, {2, 2, 1},
     {2, 1, 2}, TC_F32, 0},
    {"f16 NDHWC s(2,1,2)", 1, 6, 4, 1, {5, 5, 7}, {3, 3, 1}, {1, 1, 0}, {1, 1, 0}, {2, 1, 2},
     {1, 1, 1}, TC_F16, 1},
    {"depth stride 3 > filter", 1, 2, 3, 1, {8, 3, 4}, {1, 2, 2}, {0, 0, 1}, {0, 0, 1},
     {3, 1, 1}, {1, 1, 1}, TC_F32, 0},
};
static const int ncases = (int)(sizeof cases / sizeof cases[0]);

/* ---- checks and strings ------------------------------------------------- */

static void test_problem_string_and_checks(void) {
  tc_conv_problem p;
  c3_problem(&cases[2], TC_CONV_BWD_DATA, &p);
  tc_str s;
  tc_str_init(&s);
  tc_conv_problem_string(&p, &s);
  TC_CHECK_STR(tc_str_cstr(&s),
               "conv3d -F 2 -n 2 -c 4 --in_d 7 -H 6 -W 5 -k 6 --fil_d 3 -y 2 -x 3 --pad_d_l 2 "
               "--pad_d_r 0 --pad_h_l 1 --pad_h_r 1 --pad_w_l 0 --pad_w_r 1 --conv_stride_d 2 "
               "-u 2 -v 1 --dilation_d 2 -l 1 -j 2 -g 2 -t f32 --in_layout NCDHW --fil_layout "
               "KCZYX --out_layout NKDHW");
  tc_str_clear(&s);
  c3_problem(&cases[1], TC_CONV_FWD, &p);
  strcpy(p.fil_layout, "NDHWC"); /* MIOpenDriver's spelling of KZYXC */
  tc_conv_problem_string(&p, &s);
  TC_CHECK_STR(tc_str_cstr(&s),
               "conv3d -F 1 -n 1 -c 4 --in_d 7 -H 5 -W 6 -k 6 --fil_d 2 -y 3 -x 2 --pad_d 1 -p 0 "
               "-q 2 --conv_stride_d 1 -u 1 -v 1 --dilation_d 2 -l 2 -j 2 -g 1 -t f32 "
               "--in_layout NDHWC --fil_layout KZYXC --out_layout NDHWK");
  tc_str_free(&s);

  /* output sizes derived by hand: (in + pads - dil*(fil-1) - 1) / st + 1 */
  int64_t dout = 0, ho = 0, wo = 0;
  TC_STR_LOCAL(err);
  c3_problem(&cases[2], TC_CONV_FWD, &p);
  TC_REQUIRE(tc_conv_check3(&p, &dout, &ho, &wo, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(dout, 3); /* (7 + 2 - 5) / 2 + 1 */
  TC_CHECK_EQ_INT(ho, 4);   /* (6 + 2 - 2) / 2 + 1 */
  TC_CHECK_EQ_INT(wo, 2);   /* (5 + 1 - 5) / 1 + 1 */
  TC_CHECK_EQ_INT(tc_conv_input_elems(&p), 2 * 4 * 7 * 6 * 5);
  TC_CHECK_EQ_INT(tc_conv_filter_elems(&p), 6 * 2 * 3 * 2 * 3);
  TC_CHECK_EQ_INT(tc_conv_output_elems(&p), 2 * 6 * 3 * 4 * 2);

  struct { const char *want; int what; } bad[] = {
      {"bad input layout 'NCHW': expected a permutation of the letters N, C, D, H, W (e.g. "
       "NCDHW or NDHWC)", 0},
      {"output depth would be -1: the padded input depth 2 (2 + 0 + 0) is smaller than the "
       "dilated filter depth 5", 1},
      {"depth stride (--conv_stride_d) must be positive, got 0", 2},
      {"front padding (--pad_d_l) must be in [0, 2147483647], got -1", 3},
      {"bad filter layout 'KCYXQ': expected a permutation of the letters K, C, Z, Y, X (e.g. "
       "KCZYX or KZYXC)", 4},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    c3_problem(&cases[0], TC_CONV_FWD, &p);
    switch (bad[i].what) {
      case 0: strcpy(p.in_layout, "NCHW"); break;
      case 1: p.d = 2, p.pad_d_l = p.pad_d_r = 0, p.z = 3, p.dil_d = 2; break;
      case 2: p.stride_d = 0; break;
      case 3: p.pad_d_l = -1; break;
      case 4: strcpy(p.fil_layout, "KCYXQ"); break;
    }
    tc_str_clear(&err);
    TC_CHECK(tc_conv_check(&p, NULL, NULL, &err) != 0, "case %zu accepted", i);
    const char *got = tc_str_cstr(&err);
    TC_CHECK_STR(got, bad[i].want);
  }
  /* the 2-D problem is untouched by the depth fields */
  tc_conv_problem_init(&p);
  p.n = 1, p.c = 1, p.h = 3, p.w = 3, p.k = 1, p.y = 3, p.x = 3;
  p.d = -5, p.stride_d = 0;
  TC_CHECK(tc_conv_check(&p, &ho, &wo, &err) == 0, "%s", tc_str_cstr(&err));
}

/* ---- the reference: 3-D as a sum of 2-D -------------------------------- */

/* NCDHW offsets, computed here by hand. */
static int64_t off5(const int64_t e[5], int64_t a, int64_t b, int64_t c, int64_t d, int64_t f) {
  return (((a * e[1] + b) * e[2] + c) * e[3] + d) * e[4] + f;
}

/* The 3-D reference (NCDHW) of case c in direction dir against the 2-D
 * reference (NCHW) of each (depth position, depth tap) pair: the
 * depth-slice 2-D problem has the same H, W, Y, X parameters. */
static void check_by_slices(const c3 *c, tc_conv_dir dir) {
  tc_conv_problem p3, p2;
  c3_problem(c, dir, &p3);
  strcpy(p3.in_layout, "NCDHW"), strcpy(p3.fil_layout, "KCZYX"), strcpy(p3.out_layout, "NKDHW");
  p3.dtype = TC_F32;
  int64_t D, HO, WO;
  TC_STR_LOCAL(err);
  TC_REQUIRE(tc_conv_check3(&p3, &D, &HO, &WO, &err) == 0, "%s", tc_str_cstr(&err));
  conv_problem(&p2, dir, p3.n, p3.c, p3.h, p3.w, p3.k, p3.y, p3.x, p3.pad_h_l, p3.pad_h_r,
               p3.pad_w_l, p3.pad_w_r, p3.stride_h, p3.stride_w, p3.dil_h, p3.dil_w, p3.groups);
  int64_t ho2, wo2;
  TC_REQUIRE(tc_conv_check(&p2, &ho2, &wo2, &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(ho2 == HO && wo2 == WO, "2-D slice sizes differ");
  int64_t ie[5] = {p3.n, p3.c, p3.d, p3.h, p3.w}, fe[5] = {p3.k, p3.c / p3.groups, p3.z, p3.y, p3.x};
  int64_t oe[5] = {p3.n, p3.k, D, HO, WO};
  conv_bufs b;
  conv_bufs_alloc(&p3, &b, 7);
  int64_t nw;
  conv_written(&p3, &b, &nw);
  double *want = calloc((size_t)nw, sizeof *want), *got = calloc((size_t)nw, sizeof *got);
  TC_REQUIRE(tc_conv_reference_f64(&p3, b.in, b.fil, b.out, got, NULL, &err) == 0,
             "%s", tc_str_cstr(&err));
  int64_t n2i = tc_conv_input_elems(&p2), n2f = tc_conv_filter_elems(&p2);
  int64_t n2o = tc_conv_output_elems(&p2);
  float *si = calloc((size_t)n2i, 4), *sf = calloc((size_t)n2f, 4), *so = calloc((size_t)n2o, 4);
  int64_t n2w = dir == TC_CONV_FWD ? n2o : dir == TC_CONV_BWD_DATA ? n2i : n2f;
  double *part = calloc((size_t)n2w, sizeof *part);
  const float *I = b.in, *F = b.fil, *O = b.out;
  for (int64_t od = 0; od < D; od++)
    for (int64_t z = 0; z < p3.z; z++) {
      int64_t id = od * p3.stride_d + z * p3.dil_d - p3.pad_d_l;
      if (id < 0 || id >= p3.d) continue;
      /* the 2-D slices at input depth id, filter tap z, output depth od */
      for (int64_t n = 0; n < p3.n; n++)
        for (int64_t ch = 0; ch < p3.c; ch++)
          for (int64_t h = 0; h < p3.h; h++)
            for (int64_t w = 0; w < p3.w; w++)
              si[((n * p3.c + ch) * p3.h + h) * p3.w + w] = I[off5(ie, n, ch, id, h, w)];
      for (int64_t k = 0; k < fe[0]; k++)
        for (int64_t ch = 0; ch < fe[1]; ch++)
          for (int64_t y = 0; y < p3.y; y++)
            for (int64_t x = 0; x < p3.x; x++)
              sf[((k * fe[1] + ch) * p3.y + y) * p3.x + x] = F[off5(fe, k, ch, z, y, x)];
      for (int64_t n = 0; n < p3.n; n++)
        for (int64_t k = 0; k < p3.k; k++)
          for (int64_t h = 0; h < HO; h++)
            for (int64_t w = 0; w < WO; w++)
              so[((n * p3.k + k) * HO + h) * WO + w] = O[off5(oe, n, k, od, h, w)];
      TC_REQUIRE(tc_conv_reference_f64(&p2, si, sf, so, part, NULL, &err) == 0, "%s", tc_str_cstr(&err));
      /* add the slice's result at its depth */
      const int64_t *e = dir == TC_CONV_FWD ? oe : dir == TC_CONV_BWD_DATA ? ie : fe;
      int64_t dpos = dir == TC_CONV_FWD ? od : dir == TC_CONV_BWD_DATA ? id : z;
      for (int64_t a = 0; a < e[0]; a++)
        for (int64_t bb = 0; bb < e[1]; bb++)
          for (int64_t h = 0; h < e[3]; h++)
            for (int64_t w = 0; w < e[4]; w++)
              want[off5(e, a, bb, dpos, h, w)] += part[((a * e[1] + bb) * e[3] + h) * e[4] + w];
    }
  int64_t bad = 0;
  for (int64_t i = 0; i < nw; i++)
    if (!(fabs(got[i] - want[i]) <= 1e-12 * (1 + fabs(want[i])))) {
      if (!bad) TC_CHECK(0, "%s %s: element %lld: got %.17g, want %.17g", c->name,
                         tc_conv_dir_name(dir), (long long)i, got[i], want[i]);
      bad++;
    }
  free(si), free(sf), free(so), free(part), free(want), free(got);
  conv_bufs_free(&b);
}

static void test_reference_by_slices(void) {
  for (int i = 0; i < ncases; i++)
    for (int dir = 1; dir <= 4; dir *= 2) check_by_slices(&cases[i], (tc_conv_dir)dir);
}

/* The same values in NDHWC / KZYXC / NDHWK give the same results (moved
 * by hand). */
static void test_reference_layouts(void) {
  const c3 *c = &cases[0];
  for (int dir = 1; dir <= 4; dir *= 2) {
    tc_conv_problem a, b;
    c3_problem(c, (tc_conv_dir)dir, &a);
    c3_problem(c, (tc_conv_dir)dir, &b);
    strcpy(b.in_layout, "NDHWC"), strcpy(b.fil_layout, "KZYXC"), strcpy(b.out_layout, "NDHWK");
    int64_t D, HO, WO;
    TC_STR_LOCAL(err);
    TC_REQUIRE(tc_conv_check3(&a, &D, &HO, &WO, &err) == 0, "%s", tc_str_cstr(&err));
    conv_bufs ba, bb;
    conv_bufs_alloc(&a, &ba, 3);
    conv_bufs_alloc(&b, &bb, 4);
    int64_t e[3][5] = {{a.n, a.c, a.d, a.h, a.w}, {a.k, a.c, a.z, a.y, a.x}, {a.n, a.k, D, HO, WO}};
    float *src[3] = {ba.in, ba.fil, ba.out}, *dst[3] = {bb.in, bb.fil, bb.out};
    for (int t = 0; t < 3; t++) {
      const int64_t *x = e[t];
      for (int64_t i0 = 0; i0 < x[0]; i0++)
        for (int64_t i1 = 0; i1 < x[1]; i1++)
          for (int64_t i2 = 0; i2 < x[2]; i2++)
            for (int64_t i3 = 0; i3 < x[3]; i3++)
              for (int64_t i4 = 0; i4 < x[4]; i4++)
                dst[t][(((i0 * x[2] + i2) * x[3] + i3) * x[4] + i4) * x[1] + i1] =
                    src[t][off5(x, i0, i1, i2, i3, i4)];
    }
    tc_conv_reference(&a, ba.in, ba.fil, ba.out);
    tc_conv_reference(&b, bb.in, bb.fil, bb.out);
    int t = dir == 1 ? 2 : dir == 2 ? 0 : 1;
    const int64_t *x = e[t];
    int same = 1;
    for (int64_t i0 = 0; i0 < x[0]; i0++)
      for (int64_t i1 = 0; i1 < x[1]; i1++)
        for (int64_t i2 = 0; i2 < x[2]; i2++)
          for (int64_t i3 = 0; i3 < x[3]; i3++)
            for (int64_t i4 = 0; i4 < x[4]; i4++)
              same &= dst[t][(((i0 * x[2] + i2) * x[3] + i3) * x[4] + i4) * x[1] + i1] ==
                      src[t][off5(x, i0, i1, i2, i3, i4)];
    TC_CHECK(same, "%s: NDHWC and NCDHW references differ", tc_conv_dir_name((tc_conv_dir)dir));
    conv_bufs_free(&ba);
    conv_bufs_free(&bb);
  }
}

/* ---- the lowering ------------------------------------------------------- */

static void test_bwd_data_phases(void) {
  /* stride 2 in every dim, 3x3x3 filter: 2 x 2 x 2 phases, each with taps
   * and rows; the names carry the three phases */
  tc_conv_problem p;
  c3_problem(&cases[0], TC_CONV_BWD_DATA, &p);
  tc_conv_gemm *g;
  int ng, zero;
  TC_STR_LOCAL(err);
  TC_REQUIRE(tc_conv_lower(&p, &g, &ng, &zero, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(ng, 8);
  TC_CHECK_STR(g[0].name, "bwd_data_z0_y0_x0");
  TC_CHECK_STR(g[7].name, "bwd_data_z1_y1_x1");
  /* phase (0, 0, 0): K/G * 2 * 2 * 2 taps; D = 5, pad 1, stride 2: the
   * depths 1 and 3 (dtilda 1, 2), H = 7: rows 1, 3, 5, W = 6: 1, 3, 5 */
  TC_CHECK_EQ_INT(g[0].k, 4 * 8);
  TC_CHECK_EQ_INT(g[0].m, 3);
  TC_CHECK_EQ_INT(g[0].n, 2 * 2 * 3 * 3);
  TC_CHECK_EQ_INT(zero, 0);
  tc_conv_gemms_free(g, ng);
  /* depth stride 3 with a 1-deep filter: depths 1, 2, 4, 5, 7 get nothing */
  c3_problem(&cases[4], TC_CONV_BWD_DATA, &p);
  TC_REQUIRE(tc_conv_lower(&p, &g, &ng, &zero, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(zero, 1);
  tc_conv_gemms_free(g, ng);
  /* 10^5 phases in each dim: refused, the count (10^15) exact in the
   * message, without overflow */
  c3_problem(&cases[0], TC_CONV_BWD_DATA, &p);
  p.n = p.c = p.k = 1;
  p.d = p.h = p.w = p.z = p.y = p.x = 100000;
  p.stride_d = p.stride_h = p.stride_w = 100000;
  p.pad_d_l = p.pad_d_r = p.pad_h_l = p.pad_h_r = p.pad_w_l = p.pad_w_r = 0;
  p.dil_d = p.dil_h = p.dil_w = 1;
  tc_str_clear(&err);
  TC_CHECK(tc_conv_lower(&p, &g, &ng, &zero, &err) != 0, "10^15 GEMMs accepted");
  const char *e = tc_str_cstr(&err);
  TC_CHECK_STR(e, "backward data with stride 100000x100000x100000 and a 100000x100000x100000 "
                  "filter would need 1000000000000000 GEMMs (at most 4096)");
}

static void test_views_interpreted(void) {
  for (int i = 0; i < ncases; i++)
    for (int dir = 1; dir <= 4; dir *= 2) {
      tc_conv_problem p;
      c3_problem(&cases[i], (tc_conv_dir)dir, &p);
      TC_STR_LOCAL(msg);
      int64_t bad = conv_interpret_and_verify(&p, &msg);
      TC_CHECK(bad == 0, "%s %s: %s", cases[i].name, tc_conv_dir_name(p.dir), tc_str_cstr(&msg));
    }
}

/* ---- on the device, through the public API ------------------------------ */

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

static void test_device_api(void) {
  if (!have_device()) TC_SKIP("no OpenCL device");
  for (int i = 0; i < ncases; i++)
    for (int dir = 1; dir <= 4; dir *= 2) {
      const c3 *c = &cases[i];
      tc_conv3d_desc d;
      tc_conv3d_desc_init(&d);
      d.direction = (tc_conv2d_direction)dir;
      d.n = c->n, d.c = c->c, d.k = c->k, d.groups = c->g, d.dtype = c->dt;
      d.d = c->in[0], d.h = c->in[1], d.w = c->in[2];
      d.z = c->fil[0], d.y = c->fil[1], d.x = c->fil[2];
      d.pad_front = c->pl[0], d.pad_top = c->pl[1], d.pad_left = c->pl[2];
      d.pad_back = c->pr[0], d.pad_bottom = c->pr[1], d.pad_right = c->pr[2];
      d.stride_d = c->st[0], d.stride_h = c->st[1], d.stride_w = c->st[2];
      d.dilation_d = c->dil[0], d.dilation_h = c->dil[1], d.dilation_w = c->dil[2];
      if (c->nhwc) d.in_layout = "NDHWC", d.fil_layout = "KZYXC", d.out_layout = "NDHWK";
      tc_op_options opt = {TC_TARGET_OPENCL, NULL, NULL, ""};
      tc_conv2d *cv = tc_conv3d_new(&d, &opt);
      tc_conv_problem p;
      c3_problem(c, (tc_conv_dir)dir, &p);
      conv_bufs b;
      conv_bufs_alloc(&p, &b, 5 + (uint64_t)i);
      TC_CHECK_EQ_INT(tc_conv2d_elems(cv, TC_CONV2D_INPUT), b.nin);
      TC_CHECK_EQ_INT(tc_conv2d_elems(cv, TC_CONV2D_OUTPUT), b.nout);
      int64_t nw = 0;
      void *wbuf = conv_written(&p, &b, &nw);
      conv_poison(p.dtype, wbuf, nw);
      tc_status st = tc_conv2d_run(cv, b.in, b.fil, b.out, NULL);
      TC_CHECK(st == TC_OK, "%s %s: %s", c->name, tc_conv_dir_name(p.dir), tc_conv2d_error(cv));
      if (st == TC_OK) {
        double worst = -1;
        int64_t bad = tc_conv2d_verify(cv, b.in, b.fil, b.out, &worst);
        TC_CHECK(bad == 0, "%s %s: %s", c->name, tc_conv_dir_name(p.dir), tc_conv2d_error(cv));
        /* and against the library-independent check: the internal
         * verifier on the problem built here */
        TC_STR_LOCAL(msg);
        TC_CHECK(tc_conv_verify(&p, b.in, b.fil, b.out, NULL, &msg) == 0, "%s %s: %s",
                 c->name, tc_conv_dir_name(p.dir), tc_str_cstr(&msg));
      }
      conv_bufs_free(&b);
      tc_conv2d_free(cv);
    }
}

static void test_api_output_size(void) {
  tc_conv3d_desc d;
  tc_conv3d_desc_init(&d);
  d.d = 9, d.h = 8, d.w = 7, d.z = 3, d.y = 2, d.x = 1, d.stride_d = 2, d.pad_front = 1;
  tc_conv2d *c = tc_conv3d_new(&d, NULL);
  int64_t dd = 0, ho = 0, wo = 0;
  TC_CHECK(tc_conv3d_output_size(c, &dd, &ho, &wo) == TC_OK, "%s", tc_conv2d_error(c));
  TC_CHECK_EQ_INT(dd, 4); /* (9 + 1 - 3) / 2 + 1 */
  TC_CHECK_EQ_INT(ho, 7);
  TC_CHECK_EQ_INT(wo, 7);
  TC_CHECK(strncmp(tc_conv2d_problem_string(c), "conv3d -F 1 -n 1 -c 1 --in_d 9 ", 31) == 0,
           "%s", tc_conv2d_problem_string(c));
  tc_conv2d_free(c);
  d.in_layout = "NCHW";
  c = tc_conv3d_new(&d, NULL);
  TC_CHECK(tc_conv3d_output_size(c, &dd, &ho, &wo) == TC_ERR_ARGUMENT, "a 2-D layout accepted");
  TC_CHECK(strstr(tc_conv2d_error(c), "N, C, D, H, W") != NULL, "%s", tc_conv2d_error(c));
  tc_conv2d_free(c);
  /* NULL: the defaults (one 1 x 1 x 1 element); a NULL object; a layout
   * string too long for any tensor */
  c = tc_conv3d_new(NULL, NULL);
  TC_CHECK(tc_conv3d_output_size(c, &dd, &ho, &wo) == TC_OK && dd == 1 && ho == 1 && wo == 1,
           "defaults: %s", tc_conv2d_error(c));
  TC_CHECK(strstr(tc_conv2d_problem_string(c), "--in_layout NCDHW --fil_layout KCZYX "
                                               "--out_layout NKDHW") != NULL,
           "%s", tc_conv2d_problem_string(c));
  tc_conv2d_free(c);
  TC_CHECK(tc_conv3d_output_size(NULL, &dd, &ho, &wo) == TC_ERR_ARGUMENT, "NULL accepted");
  tc_conv3d_desc_init(&d);
  d.out_layout = "NKDHWNKDHW";
  c = tc_conv3d_new(&d, NULL);
  TC_CHECK(tc_conv3d_output_size(c, NULL, NULL, NULL) == TC_ERR_ARGUMENT, "a long layout accepted");
  TC_CHECK(strstr(tc_conv2d_error(c), "expected 5 letters such as NKDHW") != NULL, "%s",
           tc_conv2d_error(c));
  tc_conv2d_free(c);
  /* a 2-D convolution has depth 1 */
  tc_conv2d_desc d2;
  tc_conv2d_desc_init(&d2);
  d2.h = 5, d2.w = 4;
  c = tc_conv2d_new(&d2, NULL);
  TC_CHECK(tc_conv3d_output_size(c, &dd, &ho, &wo) == TC_OK, "%s", tc_conv2d_error(c));
  TC_CHECK(dd == 1 && ho == 5 && wo == 4, "2-D sizes %lld %lld %lld", (long long)dd,
           (long long)ho, (long long)wo);
  tc_conv2d_free(c);
}

int main(void) {
  TC_RUN(test_problem_string_and_checks);
  TC_RUN(test_reference_by_slices);
  TC_RUN(test_reference_layouts);
  TC_RUN(test_bwd_data_phases);
  TC_RUN(test_views_interpreted);
  TC_RUN(test_api_output_size);
  TC_RUN(test_device_api);
  TC_MAIN_END();
}
