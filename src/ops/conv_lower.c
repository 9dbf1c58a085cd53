/* conv_lower.c - 2-D and 3-D convolutions as GEMMs over coordinate-transform views
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
 * A 3-D convolution is the same with the depth as one more spatial dim
 * (z do next to y ho, a third filter phase ztilda): every spatial step
 * below is a loop over the spatial dims.  docs/conv.md derives each
 * transform. */
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

static tc_view *vnew(vctx *c, int nd, const int64_t *ext, const int64_t *stride,
                     const char *const *names) {
  if (c->failed) return NULL;
  tc_view *v = tc_view_new(nd, ext, stride, names);
  if (!v) vfail(c, NULL, "tc_view_new");
  return v;
}

/* The logical dims (other than `skip`) of a tensor of nd dims in the
 * memory order of its layout, written as names (nd - 1 of them). */
static void layout_names(int nd, const int *order, int skip, const char *const *names,
                         const char **out) {
  int j = 0;
  for (int i = 0; i < nd; i++)
    if (order[i] != skip) out[j++] = names[order[i]];
}

/* Names of the logical dims: channels first, then the spatial dims
 * (depth, height, width; a 2-D problem uses the last two). */
typedef struct dim_names {
  const char *t[TC_CONV_MAX_ND];
} dim_names;

/* n, ch, then the last nsp of sp3 */
static dim_names names_of(int nsp, const char *n, const char *ch, const char *const sp3[3]) {
  dim_names r = {{n, ch, NULL, NULL, NULL}};
  for (int i = 0; i < nsp; i++) r.t[2 + i] = sp3[3 - nsp + i];
  return r;
}

static const char *const sp_in[3] = {"d", "h", "w"}, *const sp_pad[3] = {"dp", "hp", "wp"};
static const char *const sp_fil[3] = {"z", "y", "x"}, *const sp_out[3] = {"do", "ho", "wo"};
static const char *const sp_dot[3] = {"zdot", "ydot", "xdot"};
static const char *const sp_phase[3] = {"ztilda", "ytilda", "xtilda"};
static const char *const sp_tilda[3] = {"dtilda", "htilda", "wtilda"};

/* spatial dim i's name in a list of three (the last nsp used) */
#define SPN(list, d, i) (list)[3 - (d)->nsp + (i)]

/* The input seen through pad + embed as [n, g, c, (z, do,) y, ho, x, wo],
 * then merged to [g, gemmK, gemmN] with the given merge lists. */
static tc_view *input_im2col(vctx *c, const tc_conv_geom *d, const char *const *kmerge,
                             const char *const *nmerge) {
  dim_names in = names_of(d->nsp, "n", "c", sp_in);
  tc_view *v = vnew(c, d->nd, d->in_ext, d->in_stride, in.t);
  if (!v) return NULL;
  vunmerge2(c, v, "c", d->g, d->cg, "g", "c");
  for (int i = 0; i < d->nsp; i++)
    vpad(c, v, SPN(sp_in, d, i), d->sp_pad_l[i], d->sp_pad_r[i], SPN(sp_pad, d, i));
  for (int i = 0; i < d->nsp; i++) {
    const char *fo[2] = {SPN(sp_fil, d, i), SPN(sp_out, d, i)};
    int64_t e[2] = {d->sp_fil[i], d->sp_out[i]}, co[2] = {d->sp_dil[i], d->sp_stride[i]};
    vembed(c, v, SPN(sp_pad, d, i), 2, e, co, fo);
  }
  vmerge(c, v, d->nd - 1, kmerge, "gemmK");
  vmerge(c, v, d->nd - 1, nmerge, "gemmN");
  vorder3(c, v, "g", "gemmK", "gemmN");
  return v;
}

/* A filter or output tensor with one merged group of dims:
 * [g, ch, (merge)] reordered as asked. */
static tc_view *plain_view(vctx *c, int nd, const int64_t *ext, const int64_t *stride,
                           const char *const *names, const char *chdim, int64_t g,
                           int64_t chg, const char *const *merge, const char *mname,
                           int ch_last) {
  tc_view *v = vnew(c, nd, ext, stride, names);
  if (!v) return NULL;
  vunmerge2(c, v, chdim, g, chg, "g", chdim);
  vmerge(c, v, nd - 1, merge, mname);
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

static int lower_fwd(const tc_conv_geom *d, tc_conv_gemm *gm, vctx *c) {
  dim_names fil = names_of(d->nsp, "k", "c", sp_fil), out = names_of(d->nsp, "n", "k", sp_out);
  const char *kmerge[TC_CONV_MAX_ND], *nmerge[TC_CONV_MAX_ND];
  layout_names(d->nd, d->fil_order, 0, fil.t, kmerge);     /* c (z) y x */
  layout_names(d->nd, d->out_order, 1, out.t, nmerge);     /* n (do) ho wo */
  snprintf(gm->name, sizeof gm->name, "fwd");
  c->what = "forward filter view";
  gm->a = plain_view(c, d->nd, d->fil_ext, d->fil_stride, fil.t, "k", d->g, d->kg, kmerge,
                     "gemmK", 1);
  gm->abuf = TC_BUF_FILTER;
  c->what = "forward input view";
  gm->b = input_im2col(c, d, kmerge, nmerge);
  gm->bbuf = TC_BUF_INPUT;
  c->what = "forward output view";
  gm->c = plain_view(c, d->nd, d->out_ext, d->out_stride, out.t, "k", d->g, d->kg, nmerge,
                     "gemmN", 0);
  gm->cbuf = TC_BUF_OUTPUT;
  return c->failed ? -1 : 0;
}

static int lower_bwd_weight(const tc_conv_geom *d, tc_conv_gemm *gm, vctx *c) {
  dim_names fil = names_of(d->nsp, "k", "c", sp_fil), out = names_of(d->nsp, "n", "k", sp_out);
  const char *kmerge[TC_CONV_MAX_ND], *nmerge[TC_CONV_MAX_ND];
  layout_names(d->nd, d->out_order, 1, out.t, kmerge);     /* n (do) ho wo */
  layout_names(d->nd, d->fil_order, 0, fil.t, nmerge);     /* c (z) y x */
  snprintf(gm->name, sizeof gm->name, "bwd_weight");
  c->what = "backward-weight output-gradient view";
  gm->a = plain_view(c, d->nd, d->out_ext, d->out_stride, out.t, "k", d->g, d->kg, kmerge,
                     "gemmK", 1);
  gm->abuf = TC_BUF_OUTPUT;
  c->what = "backward-weight input view";
  gm->b = input_im2col(c, d, kmerge, nmerge);
  gm->bbuf = TC_BUF_INPUT;
  c->what = "backward-weight filter-gradient view";
  gm->c = plain_view(c, d->nd, d->fil_ext, d->fil_stride, fil.t, "k", d->g, d->kg, nmerge,
                     "gemmN", 0);
  gm->cbuf = TC_BUF_FILTER;
  return c->failed ? -1 : 0;
}

/* One backward-data phase: per spatial dim i, the filter phase t[i] and
 * the tilda range [lo[i], hi[i]]. */
typedef struct bwd_phase {
  int64_t t[3], lo[3], hi[3], dots[3];
} bwd_phase;

/* One backward-data GEMM: the filter phase ph (see docs/conv.md). */
static int lower_bwd_data_phase(const tc_conv_geom *d, const tc_conv_bwd_axis *ax,
                                const bwd_phase *ph, tc_conv_gemm *gm, vctx *c) {
  int nsp = d->nsp, nd = d->nd;
  dim_names dot = names_of(nsp, "n", "k", sp_dot), tilda = names_of(nsp, "n", "c", sp_tilda);
  dim_names fil = names_of(nsp, "k", "c", sp_fil), out = names_of(nsp, "n", "k", sp_out);
  dim_names in = names_of(nsp, "n", "c", sp_in);
  const char *kmerge[TC_CONV_MAX_ND], *nmerge[TC_CONV_MAX_ND];
  layout_names(nd, d->out_order, 0, dot.t, kmerge);       /* k (zdot) ydot xdot */
  layout_names(nd, d->in_order, 1, tilda.t, nmerge);      /* n (dtilda) htilda wtilda */
  if (nsp == 3)
    snprintf(gm->name, sizeof gm->name, "bwd_data_z%d_y%d_x%d", (int)ph->t[0], (int)ph->t[1],
             (int)ph->t[2]);
  else
    snprintf(gm->name, sizeof gm->name, "bwd_data_y%d_x%d", (int)ph->t[0], (int)ph->t[1]);

  /* A: filter [k, c, (z,) y, x]; y = ydot * YTilda + ty for ydot < YDotSlice */
  c->what = "backward-data filter view";
  tc_view *a = gm->a = vnew(c, nd, d->fil_ext, d->fil_stride, fil.t);
  gm->abuf = TC_BUF_FILTER;
  if (!a) return -1;
  vunmerge2(c, a, "k", d->g, d->kg, "g", "k");
  for (int i = 0; i < nsp; i++) {
    const char *dn[1] = {SPN(sp_dot, d, i)};
    int64_t e[1] = {ph->dots[i]}, co[1] = {ax[i].tilda};
    vslice(c, a, SPN(sp_fil, d, i), ph->t[i], d->sp_fil[i]);
    vembed(c, a, SPN(sp_fil, d, i), 1, e, co, dn);
  }
  vmerge(c, a, nd - 1, kmerge, "gemmK");
  vorder3(c, a, "g", "gemmK", "c");

  /* B: dy [n, k, (do,) ho, wo]; ho = htilda - ydot * (Dh / gcd)
   * (negative coefficient: out-of-range ho reads 0) */
  c->what = "backward-data output-gradient view";
  tc_view *b = gm->b = vnew(c, nd, d->out_ext, d->out_stride, out.t);
  gm->bbuf = TC_BUF_OUTPUT;
  if (!b) return -1;
  vunmerge2(c, b, "k", d->g, d->kg, "g", "k");
  for (int i = 0; i < nsp; i++) {
    const char *dt[2] = {SPN(sp_dot, d, i), SPN(sp_tilda, d, i)};
    int64_t e[2] = {ph->dots[i], ax[i].ht}, co[2] = {-ax[i].dg, 1};
    vembed(c, b, SPN(sp_out, d, i), 2, e, co, dt);
  }
  for (int i = 0; i < nsp; i++) vslice(c, b, SPN(sp_tilda, d, i), ph->lo[i], ph->hi[i] + 1);
  vmerge(c, b, nd - 1, kmerge, "gemmK");
  vmerge(c, b, nd - 1, nmerge, "gemmN");
  vorder3(c, b, "g", "gemmK", "gemmN");

  /* C: dx [n, c, (d,) h, w]; h + Ph = htilda * Sh + ty * Dh */
  c->what = "backward-data input-gradient view";
  tc_view *v = gm->c = vnew(c, nd, d->in_ext, d->in_stride, in.t);
  gm->cbuf = TC_BUF_INPUT;
  if (!v) return -1;
  vunmerge2(c, v, "c", d->g, d->cg, "g", "c");
  for (int i = 0; i < nsp; i++)
    vpad(c, v, SPN(sp_in, d, i), d->sp_pad_l[i], d->sp_pad_r[i], SPN(sp_pad, d, i));
  for (int i = 0; i < nsp; i++) {
    const char *tt[2] = {SPN(sp_phase, d, i), SPN(sp_tilda, d, i)};
    int64_t e[2] = {ax[i].tilda, ax[i].ht}, co[2] = {d->sp_dil[i], d->sp_stride[i]};
    vembed(c, v, SPN(sp_pad, d, i), 2, e, co, tt);
  }
  for (int i = 0; i < nsp; i++) vconst(c, v, SPN(sp_phase, d, i), ph->t[i]);
  for (int i = 0; i < nsp; i++) vslice(c, v, SPN(sp_tilda, d, i), ph->lo[i], ph->hi[i] + 1);
  vmerge(c, v, nd - 1, nmerge, "gemmN");
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
 * the product over the spatial dims of min(YTilda, Y)). */
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
  if (tc_conv_geom_make_dt(p, 1, &d, err)) return -1;
  vctx c = {err, 0, ""};
  if (p->dir != TC_CONV_BWD_DATA) {
    tc_conv_gemm *gm = tc_xcalloc(1, sizeof *gm);
    int r = p->dir == TC_CONV_FWD ? lower_fwd(&d, gm, &c) : lower_bwd_weight(&d, gm, &c);
    if (r) {
      tc_conv_gemms_free(gm, 1);
      return -1;
    }
    gemm_sizes(gm);
    *gemms = gm;
    *ngemms = 1;
    return 0;
  }
  tc_conv_bwd_axis ax[3];
  int64_t np[3], total = 1;
  double count = 1; /* the exact product for the message (up to 2^93) */
  for (int i = 0; i < d.nsp; i++) {
    tc_conv_bwd_axis_make(d.sp_stride[i], d.sp_dil[i], d.sp_fil[i], d.sp_out[i], &ax[i]);
    np[i] = ax[i].tilda < d.sp_fil[i] ? ax[i].tilda : d.sp_fil[i];
    count *= (double)np[i];
    /* each <= 2^31 and the product capped before the next factor: fits */
    if (total <= TC_CONV_MAX_PHASES) total *= np[i];
  }
  if (total > TC_CONV_MAX_PHASES) {
    char st[64] = "", fs[64] = "";
    for (int i = 0; i < d.nsp; i++) {
      snprintf(st + strlen(st), sizeof st - strlen(st), "%s%lld", i ? "x" : "",
               (long long)d.sp_stride[i]);
      snprintf(fs + strlen(fs), sizeof fs - strlen(fs), "%s%lld", i ? "x" : "",
               (long long)d.sp_fil[i]);
    }
    tc_err_set(err, "backward data with stride %s and a %s filter would need %.0f GEMMs "
             "(at most %d)", st, fs, count, TC_CONV_MAX_PHASES);
    return -1;
  }
  tc_conv_gemm *gm = tc_xcalloc((size_t)total, sizeof *gm);
  int n = 0;
  /* the phases in row-major order over (tz,) ty, tx; one without taps or
   * without rows in some dim has no GEMM */
  for (int64_t idx = 0; idx < total; idx++) {
    bwd_phase ph;
    int64_t rest = idx;
    int empty = 0;
    for (int i = d.nsp - 1; i >= 0; i--) {
      ph.t[i] = rest % np[i];
      rest /= np[i];
    }
    for (int i = 0; i < d.nsp; i++) {
      tc_conv_bwd_range(&ax[i], d.sp_stride[i], d.sp_dil[i], d.sp_pad_l[i], d.sp_in[i], ph.t[i],
                        &ph.lo[i], &ph.hi[i]);
      ph.dots[i] = tc_conv_bwd_dot_slice(&ax[i], d.sp_fil[i], ph.t[i]);
      if (ph.dots[i] <= 0 || ph.lo[i] > ph.hi[i]) empty = 1;
    }
    if (empty) continue;
    if (lower_bwd_data_phase(&d, ax, &ph, &gm[n], &c)) {
      tc_conv_gemms_free(gm, n + 1);
      return -1;
    }
    gemm_sizes(&gm[n]);
    n++;
  }
  int covers = 1;
  for (int i = 0; i < d.nsp; i++)
    covers = covers && bwd_covers(&ax[i], d.sp_stride[i], d.sp_dil[i], d.sp_pad_l[i],
                                  d.sp_in[i], d.sp_fil[i]);
  *zero_init = !covers;
  if (n == 0) {
    free(gm);
    gm = NULL;
  }
  *gemms = gm;
  *ngemms = n;
  return 0;
}
