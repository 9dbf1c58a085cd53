/* conv_ref.c - the plain C convolution reference (2-D and 3-D, all three directions,
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

/* The geometry seen as 3-D: three spatial dims, a 2-D problem's depth of
 * extent 1 (stride 0, no padding).  st[t][5]: the memory strides of
 * tensor t (input, filter, output) in the order [N, C, D, H, W]. */
typedef struct ref3 {
  int64_t in[3], fil[3], out[3], pad[3], stride[3], dil[3];
  int64_t st[3][5];
} ref3;

static void ref3_make(const tc_conv_geom *d, ref3 *r) {
  int o = 3 - d->nsp;
  memset(r, 0, sizeof *r);
  for (int i = 0; i < 3; i++) {
    r->in[i] = r->fil[i] = r->out[i] = r->stride[i] = r->dil[i] = 1;
  }
  for (int i = 0; i < d->nsp; i++) {
    r->in[o + i] = d->sp_in[i], r->fil[o + i] = d->sp_fil[i], r->out[o + i] = d->sp_out[i];
    r->pad[o + i] = d->sp_pad_l[i], r->stride[o + i] = d->sp_stride[i];
    r->dil[o + i] = d->sp_dil[i];
  }
  const int64_t *s[3] = {d->in_stride, d->fil_stride, d->out_stride};
  for (int t = 0; t < 3; t++) {
    r->st[t][0] = s[t][0], r->st[t][1] = s[t][1];
    for (int i = 0; i < d->nsp; i++) r->st[t][2 + o + i] = s[t][2 + i];
  }
}

static inline int64_t off5(const int64_t s[5], int64_t a, int64_t b, const int64_t sp[3]) {
  return a * s[0] + b * s[1] + sp[0] * s[2] + sp[1] * s[3] + sp[2] * s[4];
}

/* The input position of output position o and filter tap f in spatial
 * dim a; -1 when it falls into the padding. */
static inline int64_t in_pos(const ref3 *r, int a, int64_t o, int64_t f) {
  int64_t i = o * r->stride[a] + f * r->dil[a] - r->pad[a];
  return i >= 0 && i < r->in[a] ? i : -1;
}

int tc_conv_reference_f64(const tc_conv_problem *p, const void *in, const void *fil,
                          const void *out, double *val, double *abs_sum, tc_str *err) {
  tc_conv_geom d;
  if (tc_conv_geom_make_dt(p, 1, &d, err)) return -1;
  ref3 r;
  ref3_make(&d, &r);
  const int64_t *si = r.st[0], *sf = r.st[1], *so = r.st[2];
  int64_t ni = tc_conv_elems_of(d.in_ext, d.nd), nf = tc_conv_elems_of(d.fil_ext, d.nd);
  int64_t no = tc_conv_elems_of(d.out_ext, d.nd);
  int64_t nw = p->dir == TC_CONV_FWD ? no : p->dir == TC_CONV_BWD_DATA ? ni : nf;
  int fwd = p->dir == TC_CONV_FWD, bwd_data = p->dir == TC_CONV_BWD_DATA;
  /* Forward gathers each output element's products; the backward
   * directions scatter each output-gradient element's products into the
   * written tensor. */
  double *DY = to_f64(p->dtype, out, fwd ? 0 : no);
  double *I = to_f64(p->dtype, in, bwd_data ? 0 : ni);
  double *F = to_f64(p->dtype, fil, p->dir == TC_CONV_BWD_WEIGHT ? 0 : nf);
  if (!fwd) {
    memset(val, 0, (size_t)nw * sizeof *val);
    if (abs_sum) memset(abs_sum, 0, (size_t)nw * sizeof *abs_sum);
  }
  int64_t o[3], f[3], i[3];
  for (int64_t n = 0; n < p->n; n++)
    for (int64_t g = 0; g < d.g; g++)
      for (int64_t kk = 0; kk < d.kg; kk++)
        for (o[0] = 0; o[0] < r.out[0]; o[0]++)
          for (o[1] = 0; o[1] < r.out[1]; o[1]++)
            for (o[2] = 0; o[2] < r.out[2]; o[2]++) {
              int64_t k = g * d.kg + kk, oo = off5(so, n, k, o);
              double s = 0, a = 0, dy = fwd ? 0 : DY[oo];
              for (int64_t cc = 0; cc < d.cg; cc++)
                for (f[0] = 0; f[0] < r.fil[0]; f[0]++) {
                  if ((i[0] = in_pos(&r, 0, o[0], f[0])) < 0) continue;
                  for (f[1] = 0; f[1] < r.fil[1]; f[1]++) {
                    if ((i[1] = in_pos(&r, 1, o[1], f[1])) < 0) continue;
                    for (f[2] = 0; f[2] < r.fil[2]; f[2]++) {
                      if ((i[2] = in_pos(&r, 2, o[2], f[2])) < 0) continue;
                      int64_t oi = off5(si, n, g * d.cg + cc, i), of = off5(sf, k, cc, f);
                      if (fwd) {
                        double t = I[oi] * F[of];
                        s += t;
                        a += fabs(t);
                      } else {
                        int64_t ow = bwd_data ? oi : of;
                        double t = dy * (bwd_data ? F[of] : I[oi]);
                        val[ow] += t;
                        if (abs_sum) abs_sum[ow] += fabs(t);
                      }
                    }
                  }
                }
              if (fwd) {
                val[oo] = s;
                if (abs_sum) abs_sum[oo] = a;
              }
            }
  free(DY);
  free(I);
  free(F);
  return 0;
}

void tc_conv_reference(const tc_conv_problem *p, void *in, void *fil, void *out) {
  tc_conv_geom d;
  if (!in || !fil || !out || tc_conv_geom_make_dt(p, 1, &d, NULL)) return;
  const int64_t *e = p->dir == TC_CONV_FWD ? d.out_ext
                   : p->dir == TC_CONV_BWD_DATA ? d.in_ext : d.fil_ext;
  void *dst = p->dir == TC_CONV_FWD ? out : p->dir == TC_CONV_BWD_DATA ? in : fil;
  int64_t nw = tc_conv_elems_of(e, d.nd);
  double *val = tc_xmalloc((size_t)nw * sizeof *val);
  if (tc_conv_reference_f64(p, in, fil, out, val, NULL, NULL) == 0)
    for (int64_t i = 0; i < nw; i++) tc_host_write(p->dtype, dst, (size_t)i, val[i]);
  free(val);
}

/* The number of products summed into one element of the written tensor
 * (an upper bound: padding and phase terms may be fewer). */
static int64_t terms_per_element(const tc_conv_problem *p, const tc_conv_geom *d) {
  int64_t fil = 1, out = 1;
  for (int i = 0; i < d->nsp; i++) fil *= d->sp_fil[i], out *= d->sp_out[i];
  switch (p->dir) {
    case TC_CONV_FWD: return d->cg * fil;
    case TC_CONV_BWD_DATA: return d->kg * fil;
    default: return p->n * out;
  }
}

int64_t tc_conv_verify(const tc_conv_problem *p, const void *in, const void *fil,
                       const void *out, double *worst, tc_str *msg) {
  return tc_conv_verify_bias(p, in, fil, out, NULL, worst, msg);
}

int64_t tc_conv_verify_bias(const tc_conv_problem *p, const void *in, const void *fil,
                            const void *out, const void *bias, double *worst, tc_str *msg) {
  return tc_conv_verify_epilogue(p, in, fil, out, bias, -1, worst, msg);
}

/* The activation in double, as tilec.h states it (GELU's tanh form). */
static double act_of(int act, double x) {
  switch (act) {
    case TC_RELU: return x > 0 ? x : 0;
    case TC_GELU: return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case TC_SILU: return x / (1 + exp(-x));
    default: return x;
  }
}

int64_t tc_conv_verify_epilogue(const tc_conv_problem *p, const void *in, const void *fil,
                                const void *out, const void *bias, int act, double *worst,
                                tc_str *msg) {
  if (worst) *worst = 0;
  tc_conv_geom d;
  if (tc_conv_geom_make_dt(p, 1, &d, msg)) return -1;
  if (!in || !fil || !out) {
    tc_err_set(msg, "tc_conv_verify: a buffer is NULL");
    return -1;
  }
  if (bias && p->dir == TC_CONV_BWD_WEIGHT) {
    tc_err_set(msg, "tc_conv_verify: a bias is per channel of the output or input (forward "
             "or backward data), not of the weights");
    return -1;
  }
  const int64_t *e = p->dir == TC_CONV_FWD ? d.out_ext
                   : p->dir == TC_CONV_BWD_DATA ? d.in_ext : d.fil_ext;
  const int64_t *st = p->dir == TC_CONV_FWD ? d.out_stride
                    : p->dir == TC_CONV_BWD_DATA ? d.in_stride : d.fil_stride;
  static const char *const sp3[3][3] = {{"d", "h", "w"}, {"z", "y", "x"}, {"do", "ho", "wo"}};
  static const char *const lead[3][2] = {{"n", "c"}, {"k", "c"}, {"n", "k"}};
  int t = p->dir == TC_CONV_FWD ? 2 : p->dir == TC_CONV_BWD_DATA ? 0 : 1;
  const char *names[TC_CONV_MAX_ND] = {lead[t][0], lead[t][1]};
  for (int i = 0; i < d.nsp; i++) names[2 + i] = sp3[t][3 - d.nsp + i];
  const void *got = p->dir == TC_CONV_FWD ? out : p->dir == TC_CONV_BWD_DATA ? in : fil;
  int64_t nw = tc_conv_elems_of(e, d.nd);
  double *val = tc_xmalloc((size_t)nw * sizeof *val), *as = tc_xmalloc((size_t)nw * sizeof *as);
  tc_conv_reference_f64(p, in, fil, out, val, as, msg);
  /* gamma_{K+1} = (K+1)u / (1 - (K+1)u): the worst-case relative error of
   * K products summed in f32 in any order (products rounded, K - 1
   * additions, one spare for the final store), times sum |products|. */
  const double u = ldexp(1.0, -24);
  double kk = (double)terms_per_element(p, &d) + 1;
  double gamma = kk * u < 0.5 ? kk * u / (1 - kk * u) : INFINITY;
  double tiny = kk * ldexp(1.0, -149); /* f32 underflow, per operation */
  /* a 16-bit result's final rounding: 2^-11 (f16) or 2^-8 (bf16) */
  int f16 = p->dtype == TC_F16 || p->dtype == TC_BF16;
  double u16 = ldexp(1.0, p->dtype == TC_BF16 ? -8 : -11);
  int64_t bad = 0, first = -1;
  double wr = 0, fgot = 0, fwant = 0, fbound = 0;
  for (int64_t i = 0; i < nw; i++) {
    double g = tc_host_read(p->dtype, got, (size_t)i), w = val[i];
    double bound = gamma * as[i] + tiny;
    if (f16) bound += u16 * (fabs(w) + bound) + ldexp(1.0, -25);
    if (bias) {
      /* y + b rounded once more: in f32 (u), and for f16 then to f16
       * (2^-11, and half its smallest subnormal); an f32 sum that is
       * subnormal is exact */
      w += tc_host_read(p->dtype, bias, (size_t)((i / st[1]) % e[1]));
      bound += (f16 ? u16 + u : u) * (fabs(w) + bound) + (f16 ? ldexp(1.0, -25) : 0);
    }
    if (act >= 0) {
      /* the activation of a value off by at most bound: ReLU is
       * 1-Lipschitz, GELU and SiLU at most 1.13; its own f32 evaluation
       * (tanh, exp, a few operations) within 32 u of |x| + |y|, and the
       * result rounded to 16 bits once more */
      double x = w;
      w = act_of(act, x);
      bound = (act == TC_RELU ? 1.0 : 1.13) * bound + (act == TC_RELU ? 0 : 32 * u * (fabs(x) + fabs(w)));
      if (f16) bound += u16 * (fabs(w) + bound) + ldexp(1.0, -25);
    }
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
    char at[160] = "";
    for (int j = 0; j < d.nd; j++)
      snprintf(at + strlen(at), sizeof at - strlen(at), "%s%s %lld", j ? ", " : "", names[j],
               (long long)((first / st[j]) % e[j]));
    tc_err_set(msg, "%lld of %lld elements out of bound; first at offset %lld (%s): got %.9g, "
             "want %.9g, bound %.3g", (long long)bad, (long long)nw, (long long)first, at, fgot,
             fwant, fbound);
  } else {
    tc_err_set(msg, "%lld elements within bound (worst error %.3g of the bound)",
             (long long)nw, wr);
  }
  free(val);
  free(as);
  return bad;
}
