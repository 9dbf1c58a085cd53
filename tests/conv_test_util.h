/* conv_test_util.h - what tests/test_conv.c and tests/test_conv_full.c
 * share: problem builders, the case lists (small feature cases, the
 * n64 c64 k64 bwd-data case, ResNet-50 layers), deterministic buffers, the
 * host interpreter of a lowering's views, and plan + run + verify. */
#ifndef TC_CONV_TEST_UTIL_H
#define TC_CONV_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/conv.h"
#include "runtime/host.h"
#include "runtime/runtime.h"

#define CONV_U __attribute__((unused))

static inline void conv_problem(tc_conv_problem *p, tc_conv_dir dir, int64_t n, int64_t c, int64_t h,
                         int64_t w, int64_t k, int64_t y, int64_t x, int64_t phl, int64_t phr,
                         int64_t pwl, int64_t pwr, int64_t sh, int64_t sw, int64_t dh, int64_t dw,
                         int64_t g) {
  tc_conv_problem_init(p);
  p->dir = dir;
  p->n = n, p->c = c, p->h = h, p->w = w, p->k = k, p->y = y, p->x = x;
  p->pad_h_l = phl, p->pad_h_r = phr, p->pad_w_l = pwl, p->pad_w_r = pwr;
  p->stride_h = sh, p->stride_w = sw, p->dil_h = dh, p->dil_w = dw, p->groups = g;
}

/* ---- case lists ---------------------------------------------------------- */

typedef struct conv_case {
  const char *name;
  tc_conv_problem p;
  int dirs; /* 0: all three directions, else a mask of tc_conv_dir */
  int fast; /* run on the device by the fast test (test_conv.c) too */
} conv_case;

/* (the layouts may come as one CONV_NCHW / CONV_NHWC argument) */
#define CONV_P(...) CONV_P_(__VA_ARGS__)
#define CONV_P_(N, C, H, W, K, Y, X, PHL, PHR, PWL, PWR, SH, SW, DH, DW, G, DT, IL, FL, OL)     \
  {.dir = TC_CONV_FWD, .n = N, .c = C, .h = H, .w = W, .k = K, .y = Y, .x = X, .pad_h_l = PHL, \
   .pad_h_r = PHR, .pad_w_l = PWL, .pad_w_r = PWR, .stride_h = SH, .stride_w = SW,             \
   .dil_h = DH, .dil_w = DW, .groups = G, .dtype = DT, .in_layout = IL, .fil_layout = FL,      \
   .out_layout = OL}
#define CONV_NCHW "NCHW", "KCYX", "NKHW"
#define CONV_NHWC "NHWC", "KYXC", "NHWK"

/* Small cases of every feature.  All are interpreted on the host by the
 * fast test and run on the device by the full one; those marked fast (the
 * convolution features: padding, stride, dilation, groups, depthwise,
 * NHWC, f16) run on the device in the fast test too (every
 * kernel costs a PoCL compile of ~1 s there). */
static const conv_case CONV_U conv_small[] = {
  {"1x1 pad 1", CONV_P(2, 8, 5, 5, 8, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, TC_F32, CONV_NCHW), 0, 1},
  {"3x3 stride 2 pad 1", CONV_P(2, 8, 9, 9, 12, 3, 3, 1, 1, 1, 1, 2, 2, 1, 1, 1, TC_F32, CONV_NCHW), 0, 1},
  {"dilation 2", CONV_P(2, 6, 9, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 2, 2, 1, TC_F32, CONV_NCHW), 0, 1},
  {"groups 2", CONV_P(2, 8, 6, 6, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, TC_F32, CONV_NCHW), 0, 1},
  {"depthwise s2", CONV_P(2, 8, 7, 7, 8, 3, 3, 1, 1, 1, 1, 2, 2, 1, 1, 8, TC_F32, CONV_NCHW), 0, 1},
  {"NHWC 3x3 s2", CONV_P(2, 8, 7, 6, 12, 3, 3, 1, 1, 1, 1, 2, 2, 1, 1, 1, TC_F32, CONV_NHWC), 0, 1},
  {"f16 3x3", CONV_P(2, 8, 7, 7, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, TC_F16, CONV_NCHW), 0, 1},
  {"depthwise x2 NHWC", CONV_P(2, 6, 6, 7, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6, TC_F32, CONV_NHWC), 0, 0},
  {"f16 NHWC g2 s2", CONV_P(2, 8, 8, 7, 8, 3, 2, 1, 0, 0, 1, 2, 2, 1, 1, 2, TC_F16, CONV_NHWC), 0, 0},
  {"asym pad s3/2 d2/3", CONV_P(1, 4, 11, 10, 4, 3, 2, 2, 0, 0, 3, 3, 2, 2, 3, 1, TC_F32, CONV_NCHW), 0, 0},
  {"stride 3 > 1x1 filter", CONV_P(2, 4, 8, 8, 4, 1, 1, 0, 0, 0, 0, 3, 3, 1, 1, 1, TC_F32, CONV_NCHW), 0, 0},
  {"stride 4 > 2x2 span, pad 3", CONV_P(1, 3, 9, 10, 5, 2, 2, 3, 1, 2, 3, 4, 4, 1, 1, 1, TC_F32, CONV_NCHW), 0, 0},
  {"s2 d2 (gcd 2)", CONV_P(1, 4, 9, 9, 4, 3, 3, 1, 0, 0, 1, 2, 2, 2, 2, 1, TC_F32, CONV_NCHW), 0, 0},
  {"s4 d6 (gcd 2)", CONV_P(1, 2, 17, 15, 3, 3, 2, 2, 2, 1, 0, 4, 4, 6, 6, 1, TC_F32, CONV_NCHW), 0, 0},
  {"odd layouts", CONV_P(2, 6, 5, 6, 4, 2, 3, 1, 0, 1, 1, 1, 2, 1, 1, 2, TC_F32, "HWNC", "YKXC", "KNHW"), 0, 0},
  {"medium 3x3", CONV_P(4, 32, 14, 14, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, TC_F32, CONV_NCHW), 0, 0},
};
static const size_t CONV_U conv_small_count = sizeof conv_small / sizeof conv_small[0];

/* The asymmetric-padding backward-data case: n64 c64 k64, 4x4 input, 2x2 filter,
 * stride 2, pad h 2/1, w 2/0 (backward data in the fast test, all three
 * directions in the full one). */
static const conv_case CONV_U conv_spec[] = {
  {"n64 c64 k64 4x4 2x2 s2 pad h2/1 w2/0",
   CONV_P(64, 64, 4, 4, 64, 2, 2, 2, 1, 2, 0, 2, 2, 1, 1, 1, TC_F32, CONV_NCHW), 0, 0},
};
static const size_t CONV_U conv_spec_count = sizeof conv_spec / sizeof conv_spec[0];

/* ResNet-50 layers (C H=W K, filter, stride, pad) with N = 2. */
#define CONV_R(C, HW, K, F, S, P)                                                              \
  CONV_P(2, C, HW, HW, K, F, F, P, P, P, P, S, S, 1, 1, 1, TC_F32, CONV_NCHW)
static const conv_case CONV_U conv_resnet_all[] = {
  {"resnet 1024x14 -> 2048 1x1 s2", CONV_R(1024, 14, 2048, 1, 2, 0), 0, 0},
  {"resnet 1024x14 -> 256 1x1", CONV_R(1024, 14, 256, 1, 1, 0), 0, 0},
  {"resnet 128x28 -> 128 3x3 p1", CONV_R(128, 28, 128, 3, 1, 1), 0, 0},
  {"resnet 128x58 -> 128 3x3 s2", CONV_R(128, 58, 128, 3, 2, 0), 0, 0},
  {"resnet 2048x7 -> 512 1x1", CONV_R(2048, 7, 512, 1, 1, 0), 0, 0},
  {"resnet 256x14 -> 256 3x3 p1", CONV_R(256, 14, 256, 3, 1, 1), 0, 0},
  {"resnet 256x30 -> 256 3x3 s2", CONV_R(256, 30, 256, 3, 2, 0), 0, 0},
  {"resnet 256x56 -> 512 1x1 s2", CONV_R(256, 56, 512, 1, 2, 0), 0, 0},
  {"resnet 512x16 -> 512 3x3 s2", CONV_R(512, 16, 512, 3, 2, 0), 0, 0},
  {"resnet 512x28 -> 1024 1x1 s2", CONV_R(512, 28, 1024, 1, 2, 0), 0, 0},
  {"resnet 512x7 -> 512 3x3 p1", CONV_R(512, 7, 512, 3, 1, 1), 0, 0},
  {"resnet 64x56 -> 64 3x3 p1", CONV_R(64, 56, 64, 3, 1, 1), 0, 0},
  {"resnet 64x56 -> 256 1x1", CONV_R(64, 56, 256, 1, 1, 0), 0, 0},
  {"resnet 3x230 -> 64 7x7 s2", CONV_R(3, 230, 64, 7, 2, 0), 0, 0},
};
static const size_t CONV_U conv_resnet_all_count = sizeof conv_resnet_all / sizeof conv_resnet_all[0];

/* The fast subset (tests/test_conv.c): the cheapest layers that still
 * cover a 1x1 stride-2 (zero-init bwd-data), a 3x3 stride-2 without
 * padding and the 7x7 stem; one direction each. */
static const conv_case CONV_U conv_resnet_fast[] = {
  {"resnet 1024x14 -> 2048 1x1 s2", CONV_R(1024, 14, 2048, 1, 2, 0), TC_CONV_BWD_DATA, 1},
  {"resnet 256x30 -> 256 3x3 s2", CONV_R(256, 30, 256, 3, 2, 0), TC_CONV_FWD, 1},
  {"resnet 3x230 -> 64 7x7 s2", CONV_R(3, 230, 64, 7, 2, 0), TC_CONV_BWD_WEIGHT, 1},
};
static const size_t CONV_U conv_resnet_fast_count = sizeof conv_resnet_fast / sizeof conv_resnet_fast[0];

/* ---- problem mutators for the check tests ------------------------------- */

static inline void conv_set_c0(tc_conv_problem *p) { p->c = 0; }
static inline void conv_set_kneg(tc_conv_problem *p) { p->k = -3; }
static inline void conv_set_stride0(tc_conv_problem *p) { p->stride_h = 0; }
static inline void conv_set_groups3(tc_conv_problem *p) { p->groups = 3; }
static inline void conv_set_kgroups(tc_conv_problem *p) { p->groups = 4, p->k = 30; }
static inline void conv_set_bad_layout(tc_conv_problem *p) { strcpy(p->in_layout, "NCHX"); }
static inline void conv_set_bad_fil_layout(tc_conv_problem *p) { strcpy(p->fil_layout, "KCY"); }
static inline void conv_set_neg_out(tc_conv_problem *p) { p->h = 4, p->y = 4, p->dil_h = 2; }
static inline void conv_set_neg_pad(tc_conv_problem *p) { p->pad_w_l = -1; }
static inline void conv_set_bad_dtype(tc_conv_problem *p) { p->dtype = TC_I32; }
static inline void conv_set_bad_dir(tc_conv_problem *p) { p->dir = (tc_conv_dir)3; }

/* ---- buffers ------------------------------------------------------------- */

typedef struct conv_bufs {
  void *in, *fil, *out;
  int64_t nin, nfil, nout;
} conv_bufs;

static inline uint64_t conv_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* Deterministic values in [-1, 1) with 24 significant bits (f16: then
 * rounded to f16). */
static inline void conv_fill(tc_dtype t, void *buf, int64_t n, uint64_t seed) {
  for (int64_t i = 0; i < n; i++) {
    double v = (double)(conv_mix(seed * 0x100000001b3ull + (uint64_t)i) >> 40) / 8388608.0 - 1.0;
    tc_host_write(t, buf, (size_t)i, v);
  }
}

/* NaN in every element: an element nothing writes fails verification. */
static inline void conv_poison(tc_dtype t, void *buf, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    if (t == TC_F16) ((uint16_t *)buf)[i] = 0x7e00;
    else ((float *)buf)[i] = NAN;
  }
}

static inline void conv_bufs_alloc(const tc_conv_problem *p, conv_bufs *b, uint64_t seed) {
  size_t es = tc_dtype_size(p->dtype);
  b->nin = tc_conv_input_elems(p);
  b->nfil = tc_conv_filter_elems(p);
  b->nout = tc_conv_output_elems(p);
  b->in = calloc((size_t)b->nin + 1, es);
  b->fil = calloc((size_t)b->nfil + 1, es);
  b->out = calloc((size_t)b->nout + 1, es);
  conv_fill(p->dtype, b->in, b->nin, seed * 3 + 1);
  conv_fill(p->dtype, b->fil, b->nfil, seed * 3 + 2);
  conv_fill(p->dtype, b->out, b->nout, seed * 3 + 3);
}

static inline void conv_bufs_free(conv_bufs *b) {
  free(b->in);
  free(b->fil);
  free(b->out);
}

static inline void *conv_written(const tc_conv_problem *p, const conv_bufs *b, int64_t *n) {
  *n = 0;
  switch (p->dir) {
    case TC_CONV_BWD_DATA: *n = b->nin; return b->in;
    case TC_CONV_BWD_WEIGHT: *n = b->nfil; return b->fil;
    default: *n = b->nout; return b->out;
  }
}

/* Strides of a tensor from its layout string, computed here
 * independently of the library: logical dims (N|K, C, H|Y, W|X). */
static inline void conv_strides(const char *layout, const char *letters, const int64_t ext[4],
                         int64_t st[4]) {
  int64_t s = 1;
  for (int i = 3; i >= 0; i--) {
    int d = (int)(strchr(letters, layout[i]) - letters);
    st[d] = s;
    s *= ext[d];
  }
}

/* Copies a's tensors into b's layouts (same logical values). */
static inline void conv_bufs_transpose(const tc_conv_problem *pa, conv_bufs *a, const tc_conv_problem *pb,
                                conv_bufs *b) {
  int64_t ho, wo;
  tc_conv_check(pa, &ho, &wo, NULL);
  int64_t ext[3][4] = {{pa->n, pa->c, pa->h, pa->w},
                       {pa->k, pa->c / pa->groups, pa->y, pa->x},
                       {pa->n, pa->k, ho, wo}};
  const char *la[3] = {pa->in_layout, pa->fil_layout, pa->out_layout};
  const char *lb[3] = {pb->in_layout, pb->fil_layout, pb->out_layout};
  const char *letters[3] = {"NCHW", "KCYX", "NKHW"};
  void *ba[3] = {a->in, a->fil, a->out}, *bb[3] = {b->in, b->fil, b->out};
  for (int t = 0; t < 3; t++) {
    int64_t sa[4], sb[4];
    conv_strides(la[t], letters[t], ext[t], sa);
    conv_strides(lb[t], letters[t], ext[t], sb);
    const int64_t *e = ext[t];
    for (int64_t i0 = 0; i0 < e[0]; i0++)
      for (int64_t i1 = 0; i1 < e[1]; i1++)
        for (int64_t i2 = 0; i2 < e[2]; i2++)
          for (int64_t i3 = 0; i3 < e[3]; i3++) {
            int64_t oa = i0 * sa[0] + i1 * sa[1] + i2 * sa[2] + i3 * sa[3];
            int64_t ob = i0 * sb[0] + i1 * sb[1] + i2 * sb[2] + i3 * sb[3];
            tc_host_write(pb->dtype, bb[t], (size_t)ob, tc_host_read(pa->dtype, ba[t], (size_t)oa));
          }
  }
}

/* Are the written tensors of a and b equal element by element? */
static inline int conv_bufs_same_written(const tc_conv_problem *pa, conv_bufs *a,
                                  const tc_conv_problem *pb, conv_bufs *b) {
  conv_bufs t;
  conv_bufs_alloc(pa, &t, 99);
  conv_bufs_transpose(pb, b, pa, &t); /* b's values in a's layouts */
  int64_t n;
  void *wa = conv_written(pa, a, &n), *wt = conv_written(pa, &t, &n);
  int same = 1;
  for (int64_t i = 0; i < n; i++)
    if (tc_host_read(pa->dtype, wa, (size_t)i) != tc_host_read(pa->dtype, wt, (size_t)i)) same = 0;
  conv_bufs_free(&t);
  return same;
}

/* ---- the lowering interpreted on the host -------------------------------- */

/* Runs every GEMM of tc_conv_lower on the host through tc_view_index
 * (exactly the offsets and predicates the kernel generator gets), checks
 * that every offset a valid element uses is inside its buffer and that no
 * element is written twice, then verifies against the reference.
 * Returns the number of bad elements (or 1 + message on other errors). */
static inline int64_t conv_interpret_and_verify(const tc_conv_problem *p, tc_str *msg) {
  tc_conv_gemm *gemms;
  int ng, zero;
  if (tc_conv_lower(p, &gemms, &ng, &zero, msg)) return 1;
  conv_bufs b;
  conv_bufs_alloc(p, &b, 11);
  void *bufs[3] = {b.in, b.fil, b.out};
  int64_t sizes[3] = {b.nin, b.nfil, b.nout};
  int64_t nw = 0;
  void *wbuf = conv_written(p, &b, &nw);
  conv_poison(p->dtype, wbuf, nw);
  if (zero)
    for (int64_t i = 0; i < nw; i++) tc_host_write(p->dtype, wbuf, (size_t)i, 0.0);
  unsigned char *count = calloc((size_t)nw, 1);
  int64_t problems = 0;
  for (int gi = 0; gi < ng && !problems; gi++) {
    tc_conv_gemm *gm = &gemms[gi];
    tc_epool *pool = tc_epool_new();
    const tc_expr *vg = tc_e_var(pool, "g", 0, gm->g - 1), *vk = tc_e_var(pool, "k", 0, gm->k - 1);
    const tc_expr *vm = tc_e_var(pool, "m", 0, gm->m - 1), *vn = tc_e_var(pool, "n", 0, gm->n - 1);
    const tc_expr *ua[3] = {vg, vk, vm}, *ub[3] = {vg, vk, vn}, *uc[3] = {vg, vm, vn};
    const tc_expr *oa, *va, *ob, *vb, *oc, *vc;
    tc_view_index(gm->a, pool, ua, &oa, &va);
    tc_view_index(gm->b, pool, ub, &ob, &vb);
    tc_view_index(gm->c, pool, uc, &oc, &vc);
    size_t na = (size_t)(gm->g * gm->k * gm->m), nb = (size_t)(gm->g * gm->k * gm->n);
    double *A = calloc(na, sizeof *A), *B = calloc(nb, sizeof *B);
    int64_t vars[4];
    for (vars[0] = 0; vars[0] < gm->g; vars[0]++)
      for (vars[1] = 0; vars[1] < gm->k; vars[1]++) {
        for (vars[2] = 0; vars[2] < gm->m; vars[2]++) {
          if (!tc_e_eval(va, vars)) continue;
          int64_t o = tc_e_eval(oa, vars);
          if (o < 0 || o >= sizes[gm->abuf]) {
            if (!problems++) tc_err_set(msg, "%s: A offset %lld out of range", gm->name, (long long)o);
            continue;
          }
          A[(vars[0] * gm->k + vars[1]) * gm->m + vars[2]] =
              tc_host_read(p->dtype, bufs[gm->abuf], (size_t)o);
        }
        vars[2] = 0;
        for (vars[3] = 0; vars[3] < gm->n; vars[3]++) {
          if (!tc_e_eval(vb, vars)) continue;
          int64_t o = tc_e_eval(ob, vars);
          if (o < 0 || o >= sizes[gm->bbuf]) {
            if (!problems++) tc_err_set(msg, "%s: B offset %lld out of range", gm->name, (long long)o);
            continue;
          }
          B[(vars[0] * gm->k + vars[1]) * gm->n + vars[3]] =
              tc_host_read(p->dtype, bufs[gm->bbuf], (size_t)o);
        }
      }
    for (vars[0] = 0; vars[0] < gm->g && !problems; vars[0]++)
      for (vars[2] = 0; vars[2] < gm->m; vars[2]++)
        for (vars[3] = 0; vars[3] < gm->n; vars[3]++) {
          vars[1] = 0;
          if (!tc_e_eval(vc, vars)) continue;
          int64_t o = tc_e_eval(oc, vars);
          if (o < 0 || o >= nw) {
            if (!problems++) tc_err_set(msg, "%s: C offset %lld out of range", gm->name, (long long)o);
            continue;
          }
          if (count[o]++) {
            if (!problems++) tc_err_set(msg, "%s: C element %lld written twice", gm->name, (long long)o);
            continue;
          }
          double s = 0;
          for (int64_t k = 0; k < gm->k; k++)
            s += A[(vars[0] * gm->k + k) * gm->m + vars[2]] * B[(vars[0] * gm->k + k) * gm->n + vars[3]];
          tc_host_write(p->dtype, wbuf, (size_t)o, s);
        }
    free(A);
    free(B);
    tc_epool_free(pool);
  }
  /* without a zero-init, every element must be written exactly once */
  if (!problems && !zero)
    for (int64_t i = 0; i < nw; i++)
      if (!count[i]) {
        if (!problems++) tc_err_set(msg, "element %lld is written by no GEMM and there is no zero-init", (long long)i);
      }
  if (!problems) problems = tc_conv_verify(p, b.in, b.fil, b.out, NULL, msg);
  free(count);
  conv_bufs_free(&b);
  tc_conv_gemms_free(gemms, ng);
  return problems;
}

/* ---- plan, run on the device, verify ------------------------------------ */

static inline int64_t conv_run_and_verify(const tc_conv_problem *p, const tc_gemm_params *params,
                                   tc_str *msg, double *ms) {
  tc_conv_plan *plan = NULL;
  tc_status st = tc_conv_plan_make(p, params, TC_TARGET_OPENCL, &plan, msg);
  if (st != TC_OK) return 1;
  conv_bufs b;
  conv_bufs_alloc(p, &b, 5);
  int64_t nw = 0;
  conv_poison(p->dtype, conv_written(p, &b, &nw), nw);
  st = tc_conv_run(plan, NULL, b.in, b.fil, b.out, ms, 0, NULL, msg);
  int64_t bad = 1;
  if (st == TC_OK) bad = tc_conv_verify(p, b.in, b.fil, b.out, NULL, msg);
  conv_bufs_free(&b);
  tc_conv_plan_free(plan);
  return bad;
}

#endif
