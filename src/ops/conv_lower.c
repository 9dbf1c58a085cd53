/* conv_lower.c - convolutions as GEMMs over coordinate-transform views
 * (rocMLIR's ConvToGemm, MIOpen's implicit-GEMM descriptors).
 *
 * Every view starts as the tensor in memory with its logical dims in a
 * fixed order (input n c h w, filter k c y x, output n k ho wo) and the
 * strides the layout string gives; the channel dim is unmerged into
 * (g, c) or (g, k); then pad / embed / slice / merge transforms make the
 * GEMM operand [g, gemmK, gemmM|gemmN] or the result [g, gemmM, gemmN].
 * The order in which a merge lists its dims follows the memory order of
 * a layout, so that the innermost GEMM coordinate walks memory the way
 * the layout stores it (c innermost for NHWC, x/w innermost for NCHW).
 *
 *   forward        A filter [g, (c y x), k]      B input [g, (c y x), (n ho wo)]
 *                  C output [g, k, (n ho wo)]
 *   backward-weight A dy [g, (n ho wo), k]       B input [g, (n ho wo), (c y x)]
 *                  C filter [g, k, (c y x)]
 *   backward-data  one GEMM per filter phase (ytilda, xtilda):
 *                  A filter [g, (k ydot xdot), c]
 *                  B dy [g, (k ydot xdot), (n htilda wtilda)]
 *                  C dx [g, c, (n htilda wtilda)]
 * docs/conv.md derives each transform. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_internal.h"

int64_t tc_conv_floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && (a < 0)) q--;
  return q;
}

int64_t tc_conv_ceil_div(int64_t a, int64_t b) { return -tc_conv_floor_div(-a, b); }

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

void tc_conv_bwd_axis_make(int64_t stride, int64_t dil, int64_t filter, int64_t out,
                           tc_conv_bwd_axis *a) {
  a->gcd = gcd64(stride, dil);
  a->tilda = stride / a->gcd;
  a->dot = tc_conv_ceil_div(filter, a->tilda);
  a->dg = dil / a->gcd;
  a->ht = out + tc_conv_ceil_div(dil * (filter - 1), stride);
}

int64_t tc_conv_bwd_dot_slice(const tc_conv_bwd_axis *a, int64_t filter, int64_t t) {
  return t < filter ? tc_conv_ceil_div(filter - t, a->tilda) : 0;
}

void tc_conv_bwd_range(const tc_conv_bwd_axis *a, int64_t stride, int64_t dil, int64_t pad_l,
                       int64_t in, int64_t t, int64_t *lo, int64_t *hi) {
  int64_t l = tc_conv_ceil_div(pad_l - t * dil, stride);
  int64_t h = tc_conv_floor_div(pad_l + in - 1 - t * dil, stride);
  *lo = l > 0 ? l : 0;
  *hi = h < a->ht - 1 ? h : a->ht - 1;
}

/* ---- view building with error propagation ---------------------------- */

typedef struct vctx {
  tc_str *err;
  int failed;
  const char *what; /* "forward input view" ... for messages */
} vctx;

static void vfail(vctx *c, const tc_view *v, const char *op) {
  if (c->failed) return;
  c->failed = 1;
  tc_err_set(c->err, "internal error building the %s: %s failed: %s", c->what, op,
           v ? v->err : "no view");
}

static int vfind(vctx *c, tc_view *v, const char *name) {
  if (c->failed) return -1;
  int d = tc_view_find(v, name);
  if (d < 0) {
    c->failed = 1;
    tc_err_set(c->err, "internal error building the %s: no dimension '%s'", c->what, name);
  }
  return d;
}

static void vunmerge2(vctx *c, tc_view *v, const char *dim, int64_t outer, int64_t inner,
                      const char *outer_name, const char *inner_name) {
  int d = vfind(c, v, dim);
  if (d < 0) return;
  int64_t ext[2] = {outer, inner};
  const char *names[2] = {outer_name, inner_name};
  if (tc_view_unmerge(v, d, 2, ext, names)) vfail(c, v, "unmerge");
}

static void vpad(vctx *c, tc_view *v, const char *dim, int64_t l, int64_t r, const char *newname) {
  int d = vfind(c, v, dim);
  if (d < 0) return;
  if (tc_view_pad(v, d, l, r)) vfail(c, v, "pad");
  else if (tc_view_rename(v, d, newname)) vfail(c, v, "rename");
}

static void vslice(vctx *c, tc_view *v, const char *dim, int64_t b, int64_t e) {
  int d = vfind(c, v, dim);
  if (d >= 0 && tc_view_slice(v, d, b, e)) vfail(c, v, "slice");
}

static void vembed(vctx *c, tc_view *v, const char *dim, int n, const int64_t *ext,
                   const int64_t *coeff, const char *const *names) {
  int d = vfind(c, v, dim);
  if (d >= 0 && tc_view_embed(v, d, n, ext, coeff, names)) vfail(c, v, "embed");
}

static void vconst(vctx *c, tc_view *v, const char *dim, int64_t value) {
  int d = vfind(c, v, dim);
  if (d >= 0 && tc_view_const_dim(v, d, value)) vfail(c, v, "const_dim");
}

static void vmerge(vctx *c, tc_view *v, int n, const char *const *names, const char *newname) {
  int dims[4];
  for (int i = 0; i < n; i++) {
    dims[i] = vfind(c, v, names[i]);
    if (dims[i] < 0) return;
  }
  if (tc_view_merge(v, n, dims, newname)) vfail(c, v, "merge");
}

/* Reorders a 3-dim view to the named order. */
static void vorder3(vctx *c, tc_view *v, const char *d0, const char *d1, const char *d2) {
  if (c->failed) return;
  if (v->nupper != 3) {
    c->failed = 1;
    tc_err_set(c->err, "internal error building the %s: %d dims left, expected 3",
             c->what, v->nupper);
    return;
  }
  int perm[3] = {vfind(c, v, d0), vfind(c, v, d1), vfind(c, v, d2)};
  if (!c->failed && tc_view_reorder(v, perm)) vfail(c, v, "reorder");
}

static tc_view *vnew(vctx *c, const int64_t ext[4], const int64_t stride[4],
                     const char *const names[4]) {
  if (c->failed) return NULL;
  tc_view *v = tc_view_new(4, ext, stride, names);
  if (!v) vfail(c, NULL, "tc_view_new");
  return v;
}

/* The three logical dims (other than `skip`) of a tensor in the memory
 * order of its layout, written as names. */
static void layout_names(const int order[4], int skip, const char *const names[4],
                         const char *out[3]) {
  int j = 0;
  for (int i = 0; i < 4; i++)
    if (order[i] != skip) out[j++] = names[order[i]];
}

static const char *const in_names[4] = {"n", "c", "h", "w"};
static const char *const fil_names[4] = {"k", "c", "y", "x"};
static const char *const out_names[4] = {"n", "k", "ho", "wo"};

/* The input seen through pad + embed as [n, g, c, y, ho, x, wo], then
 * merged to [g, gemmK, gemmN] with the given merge lists. */
static tc_view *input_im2col(vctx *c, const tc_conv_problem *p, const tc_conv_geom *d,
                             const char *const kmerge[3], const char *const nmerge[3]) {
  tc_view *v = vnew(c, d->in_ext, d->in_stride, in_names);
  if (!v) return NULL;
  vunmerge2(c, v, "c", d->g, d->cg, "g", "c");
  vpad(c, v, "h", p->pad_h_l, p->pad_h_r, "hp");
  vpad(c, v, "w", p->pad_w_l, p->pad_w_r, "wp");
  const char *yh[2] = {"y", "ho"}, *xw[2] = {"x", "wo"};
  int64_t eh[2] = {p->y, d->ho}, ch[2] = {p->dil_h, p->stride_h};
  int64_t ew[2] = {p->x, d->wo}, cw[2] = {p->dil_w, p->stride_w};
  vembed(c, v, "hp", 2, eh, ch, yh);
  vembed(c, v, "wp", 2, ew, cw, xw);
  vmerge(c, v, 3, kmerge, "gemmK");
  vmerge(c, v, 3, nmerge, "gemmN");
  vorder3(c, v, "g", "gemmK", "gemmN");
  return v;
}

/* A filter or output tensor with one merged group of dims:
 * [g, ch, (merge)] reordered as asked. */
static tc_view *plain_view(vctx *c, const int64_t ext[4], const int64_t stride[4],
                           const char *const names[4], const char *chdim, int64_t g,
                           int64_t chg, const char *const merge[3], const char *mname,
                           int ch_last) {
  tc_view *v = vnew(c, ext, stride, names);
  if (!v) return NULL;
  vunmerge2(c, v, chdim, g, chg, "g", chdim);
  vmerge(c, v, 3, merge, mname);
  if (ch_last) vorder3(c, v, "g", mname, chdim);
  else vorder3(c, v, "g", chdim, mname);
  return v;
}

static void gemm_sizes(tc_conv_gemm *gm) {
  gm->g = tc_view_extent(gm->a, 0);
  gm->k = tc_view_extent(gm->a, 1);
  gm->m = tc_view_extent(gm->a, 2);
  gm->n = tc_view_extent(gm->b, 2);
}

void tc_conv_gemms_free(tc_conv_gemm *gemms, int ngemms) {
  if (!gemms) return;
  for (int i = 0; i < ngemms; i++) {
    if (gemms[i].a) tc_view_free(gemms[i].a);
    if (gemms[i].b) tc_view_free(gemms[i].b);
    if (gemms[i].c) tc_view_free(gemms[i].c);
  }
  free(gemms);
}

static int lower_fwd(const tc_conv_problem *p, const tc_conv_geom *d, tc_conv_gemm *gm,
                     vctx *c) {
  const char *kmerge[3], *nmerge[3];
  layout_names(d->fil_order, 0, fil_names, kmerge);       /* c y x */
  layout_names(d->out_order, 1, out_names, nmerge);       /* n ho wo */
  snprintf(gm->name, sizeof gm->name, "fwd");
  c->what = "forward filter view";
  gm->a = plain_view(c, d->fil_ext, d->fil_stride, fil_names, "k", d->g, d->kg, kmerge,
                     "gemmK", 1);
  gm->abuf = TC_BUF_FILTER;
  c->what = "forward input view";
  gm->b = input_im2col(c, p, d, kmerge, nmerge);
  gm->bbuf = TC_BUF_INPUT;
  c->what = "forward output view";
  gm->c = plain_view(c, d->out_ext, d->out_stride, out_names, "k", d->g, d->kg, nmerge,
                     "gemmN", 0);
  gm->cbuf = TC_BUF_OUTPUT;
  return c->failed ? -1 : 0;
}

static int lower_bwd_weight(const tc_conv_problem *p, const tc_conv_geom *d, tc_conv_gemm *gm,
                            vctx *c) {
  const char *kmerge[3], *nmerge[3];
  layout_names(d->out_order, 1, out_names, kmerge);       /* n ho wo */
  layout_names(d->fil_order, 0, fil_names, nmerge);       /* c y x */
  snprintf(gm->name, sizeof gm->name, "bwd_weight");
  c->what = "backward-weight output-gradient view";
  gm->a = plain_view(c, d->out_ext, d->out_stride, out_names, "k", d->g, d->kg, kmerge,
                     "gemmK", 1);
  gm->abuf = TC_BUF_OUTPUT;
  c->what = "backward-weight input view";
  gm->b = input_im2col(c, p, d, kmerge, nmerge);
  gm->bbuf = TC_BUF_INPUT;
  c->what = "backward-weight filter-gradient view";
  gm->c = plain_view(c, d->fil_ext, d->fil_stride, fil_names, "k", d->g, d->kg, nmerge,
                     "gemmN", 0);
  gm->cbuf = TC_BUF_FILTER;
  return c->failed ? -1 : 0;
}

/* One backward-data GEMM: filter phase (ty, tx) with htilda in
 * [hlo, hhi], wtilda in [wlo, whi]. */
static int lower_bwd_data_phase(const tc_conv_problem *p, const tc_conv_geom *d,
                                const tc_conv_bwd_axis *ah, const tc_conv_bwd_axis *aw,
                                int64_t ty, int64_t tx, int64_t hlo, int64_t hhi, int64_t wlo,
                                int64_t whi, tc_conv_gemm *gm, vctx *c) {
  static const char *const dot_names[4] = {"n", "k", "ydot", "xdot"};
  static const char *const tilda_names[4] = {"n", "c", "htilda", "wtilda"};
  const char *kmerge[3], *nmerge[3];
  layout_names(d->out_order, 0, dot_names, kmerge);       /* k ydot xdot */
  layout_names(d->in_order, 1, tilda_names, nmerge);      /* n htilda wtilda */
  int64_t yds = tc_conv_bwd_dot_slice(ah, p->y, ty), xds = tc_conv_bwd_dot_slice(aw, p->x, tx);
  snprintf(gm->name, sizeof gm->name, "bwd_data_y%d_x%d", (int)ty, (int)tx);

  /* A: filter [k, c, y, x]; y = ydot * YTilda + ty for ydot < YDotSlice */
  c->what = "backward-data filter view";
  tc_view *a = gm->a = vnew(c, d->fil_ext, d->fil_stride, fil_names);
  gm->abuf = TC_BUF_FILTER;
  if (!a) return -1;
  vunmerge2(c, a, "k", d->g, d->kg, "g", "k");
  const char *ydot[1] = {"ydot"}, *xdot[1] = {"xdot"};
  int64_t eyd[1] = {yds}, cyd[1] = {ah->tilda}, exd[1] = {xds}, cxd[1] = {aw->tilda};
  vslice(c, a, "y", ty, p->y);
  vembed(c, a, "y", 1, eyd, cyd, ydot);
  vslice(c, a, "x", tx, p->x);
  vembed(c, a, "x", 1, exd, cxd, xdot);
  vmerge(c, a, 3, kmerge, "gemmK");
  vorder3(c, a, "g", "gemmK", "c");

  /* B: dy [n, k, ho, wo]; ho = htilda - ydot * (Dh / gcd) (negative
   * coefficient: out-of-range ho reads 0) */
  c->what = "backward-data output-gradient view";
  tc_view *b = gm->b = vnew(c, d->out_ext, d->out_stride, out_names);
  gm->bbuf = TC_BUF_OUTPUT;
  if (!b) return -1;
  vunmerge2(c, b, "k", d->g, d->kg, "g", "k");
  const char *yh[2] = {"ydot", "htilda"}, *xw[2] = {"xdot", "wtilda"};
  int64_t eh[2] = {yds, ah->ht}, ch[2] = {-ah->dg, 1};
  int64_t ew[2] = {xds, aw->ht}, cw[2] = {-aw->dg, 1};
  vembed(c, b, "ho", 2, eh, ch, yh);
  vembed(c, b, "wo", 2, ew, cw, xw);
  vslice(c, b, "htilda", hlo, hhi + 1);
  vslice(c, b, "wtilda", wlo, whi + 1);
  vmerge(c, b, 3, kmerge, "gemmK");
  vmerge(c, b, 3, nmerge, "gemmN");
  vorder3(c, b, "g", "gemmK", "gemmN");

  /* C: dx [n, c, h, w]; h + Ph = htilda * Sh + ty * Dh */
  c->what = "backward-data input-gradient view";
  tc_view *v = gm->c = vnew(c, d->in_ext, d->in_stride, in_names);
  gm->cbuf = TC_BUF_INPUT;
  if (!v) return -1;
  vunmerge2(c, v, "c", d->g, d->cg, "g", "c");
  vpad(c, v, "h", p->pad_h_l, p->pad_h_r, "hp");
  vpad(c, v, "w", p->pad_w_l, p->pad_w_r, "wp");
  const char *th[2] = {"ytilda", "htilda"}, *tw[2] = {"xtilda", "wtilda"};
  int64_t eth[2] = {ah->tilda, ah->ht}, cth[2] = {p->dil_h, p->stride_h};
  int64_t etw[2] = {aw->tilda, aw->ht}, ctw[2] = {p->dil_w, p->stride_w};
  vembed(c, v, "hp", 2, eth, cth, th);
  vembed(c, v, "wp", 2, etw, ctw, tw);
  vconst(c, v, "ytilda", ty);
  vconst(c, v, "xtilda", tx);
  vslice(c, v, "htilda", hlo, hhi + 1);
  vslice(c, v, "wtilda", wlo, whi + 1);
  vmerge(c, v, 3, nmerge, "gemmN");
  vorder3(c, v, "g", "c", "gemmN");
  return c->failed ? -1 : 0;
}

/* Marks which input rows (or columns) receive a contribution from some
 * phase's GEMM; returns 1 when all do. */
static int bwd_covers(const tc_conv_bwd_axis *a, int64_t stride, int64_t dil, int64_t pad_l,
                      int64_t in, int64_t filter) {
  int64_t covered = 0;
  for (int64_t t = 0; t < a->tilda && t < filter; t++) { /* t >= filter: no taps */
    if (tc_conv_bwd_dot_slice(a, filter, t) <= 0) continue;
    int64_t lo, hi;
    tc_conv_bwd_range(a, stride, dil, pad_l, in, t, &lo, &hi);
    if (lo <= hi) covered += hi - lo + 1; /* rows of distinct phases are distinct */
  }
  return covered == in;
}

/* The most GEMMs a backward-data plan may have (phases with filter taps:
 * min(YTilda, Y) * min(XTilda, X)). */
#define TC_CONV_MAX_PHASES 4096

int tc_conv_lower(const tc_conv_problem *p, tc_conv_gemm **gemms, int *ngemms,
                  int *zero_init, tc_str *err) {
  if (!gemms || !ngemms || !zero_init || !p) {
    tc_err_set(err, "tc_conv_lower: NULL argument");
    return -1;
  }
  *gemms = NULL;
  *ngemms = 0;
  *zero_init = 0;
  tc_conv_geom d;
  if (tc_conv_geom_make(p, &d, err)) return -1;
  vctx c = {err, 0, ""};
  if (p->dir != TC_CONV_BWD_DATA) {
    tc_conv_gemm *gm = tc_xcalloc(1, sizeof *gm);
    int r = p->dir == TC_CONV_FWD ? lower_fwd(p, &d, gm, &c) : lower_bwd_weight(p, &d, gm, &c);
    if (r) {
      tc_conv_gemms_free(gm, 1);
      return -1;
    }
    gemm_sizes(gm);
    *gemms = gm;
    *ngemms = 1;
    return 0;
  }
  tc_conv_bwd_axis ah, aw;
  tc_conv_bwd_axis_make(p->stride_h, p->dil_h, p->y, d.ho, &ah);
  tc_conv_bwd_axis_make(p->stride_w, p->dil_w, p->x, d.wo, &aw);
  int64_t py = ah.tilda < p->y ? ah.tilda : p->y, px = aw.tilda < p->x ? aw.tilda : p->x;
  if (py * px > TC_CONV_MAX_PHASES) {
    tc_err_set(err, "backward data with stride %lldx%lld and a %lldx%lld filter would need "
             "%lld GEMMs (at most %d)", (long long)p->stride_h, (long long)p->stride_w,
             (long long)p->y, (long long)p->x, (long long)(py * px), TC_CONV_MAX_PHASES);
    return -1;
  }
  tc_conv_gemm *gm = tc_xcalloc((size_t)(py * px), sizeof *gm);
  int n = 0;
  for (int64_t ty = 0; ty < py; ty++) {
    int64_t hlo, hhi;
    tc_conv_bwd_range(&ah, p->stride_h, p->dil_h, p->pad_h_l, p->h, ty, &hlo, &hhi);
    if (tc_conv_bwd_dot_slice(&ah, p->y, ty) <= 0 || hlo > hhi) continue;
    for (int64_t tx = 0; tx < px; tx++) {
      int64_t wlo, whi;
      tc_conv_bwd_range(&aw, p->stride_w, p->dil_w, p->pad_w_l, p->w, tx, &wlo, &whi);
      if (tc_conv_bwd_dot_slice(&aw, p->x, tx) <= 0 || wlo > whi) continue;
      if (lower_bwd_data_phase(p, &d, &ah, &aw, ty, tx, hlo, hhi, wlo, whi, &gm[n], &c)) {
        tc_conv_gemms_free(gm, n + 1);
        return -1;
      }
      gemm_sizes(&gm[n]);
      n++;
    }
  }
  *zero_init = !(bwd_covers(&ah, p->stride_h, p->dil_h, p->pad_h_l, p->h, p->y) &&
                 bwd_covers(&aw, p->stride_w, p->dil_w, p->pad_w_l, p->w, p->x));
  if (n == 0) {
    free(gm);
    gm = NULL;
  }
  *gemms = gm;
  *ngemms = n;
  return 0;
}
