/* conv_ref.c - the plain C convolution reference (all three directions,
 * any layout, groups, padding, stride, dilation; products accumulated in
 * double) and the verification of a computed result against it with a
 * sound floating-point error bound (derivation in docs/conv.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_internal.h"
#include "../runtime/host.h"

static double *to_f64(tc_dtype t, const void *buf, int64_t n) {
  double *r = tc_xmalloc((size_t)(n > 0 ? n : 1) * sizeof *r);
  for (int64_t i = 0; i < n; i++) r[i] = tc_host_read(t, buf, (size_t)i);
  return r;
}

static inline int64_t off4(const int64_t s[4], int64_t a, int64_t b, int64_t c, int64_t d) {
  return a * s[0] + b * s[1] + c * s[2] + d * s[3];
}

static int64_t elems4(const int64_t e[4]) { return e[0] * e[1] * e[2] * e[3]; }

int tc_conv_reference_f64(const tc_conv_problem *p, const void *in, const void *fil,
                          const void *out, double *val, double *abs_sum, tc_str *err) {
  tc_conv_geom d;
  if (tc_conv_geom_make(p, &d, err)) return -1;
  const int64_t *si = d.in_stride, *sf = d.fil_stride, *so = d.out_stride;
  int64_t ni = elems4(d.in_ext), nf = elems4(d.fil_ext), no = elems4(d.out_ext);
  int64_t nw = p->dir == TC_CONV_FWD ? no : p->dir == TC_CONV_BWD_DATA ? ni : nf;
  const int64_t H = p->h, W = p->w, Y = p->y, X = p->x;
  const int64_t sh = p->stride_h, sw = p->stride_w, dh = p->dil_h, dw = p->dil_w;
  const int64_t ph = p->pad_h_l, pw = p->pad_w_l;
  if (p->dir == TC_CONV_FWD) {
    double *I = to_f64(p->dtype, in, ni), *F = to_f64(p->dtype, fil, nf);
    for (int64_t n = 0; n < p->n; n++)
      for (int64_t g = 0; g < d.g; g++)
        for (int64_t kk = 0; kk < d.kg; kk++)
          for (int64_t ho = 0; ho < d.ho; ho++)
            for (int64_t wo = 0; wo < d.wo; wo++) {
              int64_t k = g * d.kg + kk;
              double s = 0, a = 0;
              for (int64_t cc = 0; cc < d.cg; cc++)
                for (int64_t y = 0; y < Y; y++) {
                  int64_t hi = ho * sh + y * dh - ph;
                  if (hi < 0 || hi >= H) continue;
                  for (int64_t x = 0; x < X; x++) {
                    int64_t wi = wo * sw + x * dw - pw;
                    if (wi < 0 || wi >= W) continue;
                    double t = I[off4(si, n, g * d.cg + cc, hi, wi)] * F[off4(sf, k, cc, y, x)];
                    s += t;
                    a += fabs(t);
                  }
                }
              int64_t o = off4(so, n, k, ho, wo);
              val[o] = s;
              if (abs_sum) abs_sum[o] = a;
            }
    free(I);
    free(F);
    return 0;
  }
  /* Backward directions scatter each output-gradient element's products
   * into the written tensor. */
  memset(val, 0, (size_t)nw * sizeof *val);
  if (abs_sum) memset(abs_sum, 0, (size_t)nw * sizeof *abs_sum);
  int bwd_data = p->dir == TC_CONV_BWD_DATA;
  double *DY = to_f64(p->dtype, out, no);
  double *R = bwd_data ? to_f64(p->dtype, fil, nf) : to_f64(p->dtype, in, ni);
  for (int64_t n = 0; n < p->n; n++)
    for (int64_t g = 0; g < d.g; g++)
      for (int64_t kk = 0; kk < d.kg; kk++)
        for (int64_t ho = 0; ho < d.ho; ho++)
          for (int64_t wo = 0; wo < d.wo; wo++) {
            int64_t k = g * d.kg + kk;
            double dy = DY[off4(so, n, k, ho, wo)];
            for (int64_t cc = 0; cc < d.cg; cc++)
              for (int64_t y = 0; y < Y; y++) {
                int64_t hi = ho * sh + y * dh - ph;
                if (hi < 0 || hi >= H) continue;
                for (int64_t x = 0; x < X; x++) {
                  int64_t wi = wo * sw + x * dw - pw;
                  if (wi < 0 || wi >= W) continue;
                  int64_t oi = off4(si, n, g * d.cg + cc, hi, wi), of = off4(sf, k, cc, y, x);
                  int64_t ow = bwd_data ? oi : of;
                  double t = dy * R[bwd_data ? of : oi];
                  val[ow] += t;
                  if (abs_sum) abs_sum[ow] += fabs(t);
                }
              }
          }
  free(DY);
  free(R);
  return 0;
}

void tc_conv_reference(const tc_conv_problem *p, void *in, void *fil, void *out) {
  tc_conv_geom d;
  if (!in || !fil || !out || tc_conv_geom_make(p, &d, NULL)) return;
  const int64_t *e = p->dir == TC_CONV_FWD ? d.out_ext
                   : p->dir == TC_CONV_BWD_DATA ? d.in_ext : d.fil_ext;
  void *dst = p->dir == TC_CONV_FWD ? out : p->dir == TC_CONV_BWD_DATA ? in : fil;
  int64_t nw = elems4(e);
  double *val = tc_xmalloc((size_t)nw * sizeof *val);
  if (tc_conv_reference_f64(p, in, fil, out, val, NULL, NULL) == 0)
    for (int64_t i = 0; i < nw; i++) tc_host_write(p->dtype, dst, (size_t)i, val[i]);
  free(val);
}

/* The number of products summed into one element of the written tensor
 * (an upper bound: padding and phase terms may be fewer). */
static int64_t terms_per_element(const tc_conv_problem *p, const tc_conv_geom *d) {
  switch (p->dir) {
    case TC_CONV_FWD: return d->cg * p->y * p->x;
    case TC_CONV_BWD_DATA: return d->kg * p->y * p->x;
    default: return p->n * d->ho * d->wo;
  }
}

int64_t tc_conv_verify(const tc_conv_problem *p, const void *in, const void *fil,
                       const void *out, double *worst, tc_str *msg) {
  if (worst) *worst = 0;
  tc_conv_geom d;
  if (tc_conv_geom_make(p, &d, msg)) return -1;
  if (!in || !fil || !out) {
    tc_err_set(msg, "tc_conv_verify: a buffer is NULL");
    return -1;
  }
  const int64_t *e = p->dir == TC_CONV_FWD ? d.out_ext
                   : p->dir == TC_CONV_BWD_DATA ? d.in_ext : d.fil_ext;
  const int64_t *st = p->dir == TC_CONV_FWD ? d.out_stride
                    : p->dir == TC_CONV_BWD_DATA ? d.in_stride : d.fil_stride;
  const char *const *names;
  static const char *const in_n[4] = {"n", "c", "h", "w"}, *const fil_n[4] = {"k", "c", "y", "x"},
                           *const out_n[4] = {"n", "k", "ho", "wo"};
  names = p->dir == TC_CONV_FWD ? out_n : p->dir == TC_CONV_BWD_DATA ? in_n : fil_n;
  const void *got = p->dir == TC_CONV_FWD ? out : p->dir == TC_CONV_BWD_DATA ? in : fil;
  int64_t nw = elems4(e);
  double *val = tc_xmalloc((size_t)nw * sizeof *val), *as = tc_xmalloc((size_t)nw * sizeof *as);
  tc_conv_reference_f64(p, in, fil, out, val, as, msg);
  /* gamma_{K+1} = (K+1)u / (1 - (K+1)u): the worst-case relative error of
   * K products summed in f32 in any order (products rounded, K - 1
   * additions, one spare for the final store), times sum |products|. */
  const double u = ldexp(1.0, -24);
  double kk = (double)terms_per_element(p, &d) + 1;
  double gamma = kk * u < 0.5 ? kk * u / (1 - kk * u) : INFINITY;
  double tiny = kk * ldexp(1.0, -149); /* f32 underflow, per operation */
  int64_t bad = 0, first = -1;
  double wr = 0, fgot = 0, fwant = 0, fbound = 0;
  for (int64_t i = 0; i < nw; i++) {
    double g = tc_host_read(p->dtype, got, (size_t)i), w = val[i];
    double bound = gamma * as[i] + tiny;
    if (p->dtype == TC_F16) bound += ldexp(1.0, -11) * (fabs(w) + bound) + ldexp(1.0, -25);
    double err = fabs(g - w);
    if (!(err <= bound)) {
      if (first < 0) {
        first = i;
        fgot = g;
        fwant = w;
        fbound = bound;
      }
      bad++;
    }
    double r = err / bound;
    if (r > wr || r != r) wr = r;
  }
  if (worst) *worst = wr;
  if (bad) {
    int64_t c[4];
    for (int j = 0; j < 4; j++) c[j] = (first / st[j]) % e[j];
    tc_err_set(msg, "%lld of %lld elements out of bound; first at offset %lld (%s %lld, %s %lld, "
             "%s %lld, %s %lld): got %.9g, want %.9g, bound %.3g", (long long)bad, (long long)nw,
             (long long)first, names[0], (long long)c[0], names[1], (long long)c[1], names[2],
             (long long)c[2], names[3], (long long)c[3], fgot, fwant, fbound);
  } else {
    tc_err_set(msg, "%lld elements within bound (worst error %.3g of the bound)",
             (long long)nw, wr);
  }
  free(val);
  free(as);
  return bad;
}
