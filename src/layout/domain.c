/* domain.c - the axis graph: creating transforms, mapping index expressions
 * through them both ways, walking the graph, and replaying histories. */
#include "domain.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tc_dg_init(tc_dgraph *g) { memset(g, 0, sizeof *g); }

void tc_dg_free(tc_dgraph *g) {
  free(g->axes);
  free(g->xf);
  tc_dg_init(g);
}

static int new_axis(tc_dgraph *g, int64_t extent, int def, uint64_t sig) {
  tc_axis a = {extent, def, TC_SERIAL, sig, false, 0, 0};
  TC_PUSH(g->axes, g->naxes, g->caxes, a);
  return g->naxes - 1;
}

static int new_xform(tc_dgraph *g, tc_xform x) {
  TC_PUSH(g->xf, g->nxf, g->cxf, x);
  return g->nxf - 1;
}

static bool valid_axis(const tc_dgraph *g, int a) { return a >= 0 && a < g->naxes; }

static bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

uint64_t tc_dg_root_sig(int64_t extent, int position) {
  return tc_hash_mix(tc_hash_mix(1, (uint64_t)position), (uint64_t)extent);
}

uint64_t tc_dg_root_rsig(int64_t extent, int position) {
  return tc_hash_mix(tc_dg_root_sig(extent, position), 0x7265647563ull); /* "reduc" */
}

/* The signature of output k of x (extent: that output's) from the
 * signatures of its inputs: the one definition of an axis's structure. */
static uint64_t xf_sig(const tc_xform *x, int k, int64_t extent, const uint64_t *in) {
  uint64_t s;
  switch (x->kind) {
    case TC_XF_SPLIT:
      s = tc_hash_mix(tc_hash_mix(tc_hash_mix(2, in[0]), (uint64_t)x->factor), (uint64_t)x->inner_split);
      return tc_hash_mix(s, (uint64_t)k);
    case TC_XF_MERGE: return tc_hash_mix(tc_hash_mix(3, in[0]), in[1]);
    case TC_XF_XOR: return tc_hash_mix(tc_hash_mix(tc_hash_mix(4, in[0]), in[1]), (uint64_t)k);
    case TC_XF_CUTE: return tc_hash_mix(tc_hash_mix(5, in[0]), (uint64_t)(x->b * 10000 + x->m * 100 + x->s));
    case TC_XF_RESIZE:
      return tc_hash_mix(tc_hash_mix(tc_hash_mix(6, in[0]), (uint64_t)x->left), (uint64_t)x->right);
    case TC_XF_EMBED:
      s = tc_hash_mix(tc_hash_mix(tc_hash_mix(7, in[0]), (uint64_t)x->coeff[k]), (uint64_t)extent);
      return tc_hash_mix(s, (uint64_t)k);
    case TC_XF_BROADCAST: return tc_hash_mix(tc_hash_mix(8, in[0]), (uint64_t)extent);
    case TC_XF_ADDDIM: return tc_hash_mix(9, (uint64_t)extent);
    default: return 0;
  }
}

/* Adds x to g with fresh output axes of the given extents, signed by
 * xf_sig from the signatures of its inputs; returns its index. */
static int add_xform(tc_dgraph *g, tc_xform x, const int64_t *extents) {
  int xi = new_xform(g, x);
  uint64_t in[2] = {0, 0};
  bool red = false;
  for (int k = 0; k < x.nin; k++) in[k] = g->axes[x.in[k]].sig, red |= g->axes[x.in[k]].reduction;
  for (int k = 0; k < x.nout; k++) {
    int a = new_axis(g, extents[k], xi, xf_sig(&x, k, extents[k], in));
    g->axes[a].reduction = red;
    g->xf[xi].out[k] = a;
  }
  return xi;
}

int tc_dg_root(tc_dgraph *g, int64_t extent, int position) {
  return new_axis(g, extent, -1, tc_dg_root_sig(extent, position));
}

int tc_dg_root_reduction(tc_dgraph *g, int64_t extent, int position) {
  int a = new_axis(g, extent, -1, tc_dg_root_rsig(extent, position));
  g->axes[a].reduction = true;
  return a;
}

void tc_dg_sigs_from(const tc_dgraph *g, const int *roots, const uint64_t *root_sigs, int n,
                     uint64_t *sig) {
  for (int a = 0; a < g->naxes; a++) sig[a] = 0;
  for (int i = 0; i < n; i++) sig[roots[i]] = root_sigs[i];
  for (int i = 0; i < g->nxf; i++) {
    const tc_xform *x = &g->xf[i];
    uint64_t in[2] = {0, 0};
    bool all = x->nin > 0;
    for (int k = 0; k < x->nin; k++) all &= (in[k] = sig[x->in[k]]) != 0;
    for (int k = 0; all && k < x->nout; k++)
      if (!sig[x->out[k]]) /* (an axis given as a root keeps its signature) */
        sig[x->out[k]] = xf_sig(x, k, g->axes[x->out[k]].extent, in);
  }
}

int tc_dg_split(tc_dgraph *g, int in, int64_t factor, int inner_split,
                int *outer, int *inner, tc_str *err) {
  if (!valid_axis(g, in)) return tc_err_set(err, "no such axis"), -1;
  if (factor < 1) {
    tc_err_set(err, "split factor must be at least 1, got %lld", (long long)factor);
    return -1;
  }
  int64_t e = g->axes[in].extent;
  int64_t rest = e / factor + (e % factor != 0); /* ceil, without overflowing */
  tc_xform x = {0};
  x.kind = TC_XF_SPLIT;
  x.in[0] = in, x.nin = 1, x.nout = 2;
  x.factor = factor, x.inner_split = inner_split != 0;
  int64_t ext[2] = {inner_split ? rest : factor, inner_split ? factor : rest};
  int xi = add_xform(g, x, ext);
  *outer = g->xf[xi].out[0], *inner = g->xf[xi].out[1];
  return 0;
}

int tc_dg_merge(tc_dgraph *g, int outer, int inner, int *out, tc_str *err) {
  if (!valid_axis(g, outer) || !valid_axis(g, inner) || outer == inner)
    return tc_err_set(err, "merge needs two distinct axes"), -1;
  if (g->axes[outer].reduction != g->axes[inner].reduction)
    return tc_err_set(err, "cannot merge a reduction axis with an iteration axis"), -1;
  int64_t oe = g->axes[outer].extent, ie = g->axes[inner].extent;
  if (oe > 0 && ie > INT64_MAX / oe) {
    tc_err_set(err, "merging extents %lld and %lld overflows 64 bits", (long long)oe, (long long)ie);
    return -1;
  }
  int64_t e = oe * ie;
  tc_xform x = {0};
  x.kind = TC_XF_MERGE;
  x.in[0] = outer, x.in[1] = inner, x.nin = 2, x.nout = 1;
  int xi = add_xform(g, x, &e);
  *out = g->xf[xi].out[0];
  return 0;
}

int tc_dg_xor(tc_dgraph *g, int xa, int ya, int *ox, int *oy, tc_str *err) {
  if (!valid_axis(g, xa) || !valid_axis(g, ya) || xa == ya)
    return tc_err_set(err, "a swizzle needs two distinct axes"), -1;
  int64_t xe = g->axes[xa].extent, ye = g->axes[ya].extent;
  if (!is_pow2(ye) || xe > ye) {
    tc_err_set(err,
             "XOR swizzle needs the second axis extent to be a power of two no smaller "
             "than the first (got %lld and %lld)", (long long)xe, (long long)ye);
    return -1;
  }
  tc_xform x = {0};
  x.kind = TC_XF_XOR;
  x.in[0] = xa, x.in[1] = ya, x.nin = 2, x.nout = 2;
  int64_t ext[2] = {xe, ye};
  int xi = add_xform(g, x, ext);
  *ox = g->xf[xi].out[0], *oy = g->xf[xi].out[1];
  return 0;
}

int tc_dg_cute(tc_dgraph *g, int in, int b, int m, int s, int *out, tc_str *err) {
  if (!valid_axis(g, in)) return tc_err_set(err, "no such axis"), -1;
  if (b < 0 || m < 0 || s < b || b > 40 || m > 40 || s > 40 || b + m + s > 40) {
    tc_err_set(err, "Swizzle<%d,%d,%d> needs 0 <= B <= S and B+M+S <= 40", b, m, s);
    return -1;
  }
  int64_t e = g->axes[in].extent, period = (int64_t)1 << (b + m + s);
  if (e % period != 0) {
    tc_err_set(err, "Swizzle<%d,%d,%d> needs an extent that is a multiple of %lld (got %lld)",
             b, m, s, (long long)period, (long long)e);
    return -1;
  }
  tc_xform x = {0};
  x.kind = TC_XF_CUTE;
  x.in[0] = in, x.nin = 1, x.nout = 1;
  x.b = b, x.m = m, x.s = s;
  int xi = add_xform(g, x, &e);
  *out = g->xf[xi].out[0];
  return 0;
}

int tc_dg_resize(tc_dgraph *g, int in, int64_t left, int64_t right, int *out,
                 tc_str *err) {
  if (!valid_axis(g, in)) return tc_err_set(err, "no such axis"), -1;
  const int64_t lim = (int64_t)1 << 62;
  if (left > lim || left < -lim || right > lim || right < -lim) {
    tc_err_set(err, "resize amounts must lie within +-2^62 (got %lld, %lld)", (long long)left,
             (long long)right);
    return -1;
  }
  int64_t e;
  if (__builtin_add_overflow(g->axes[in].extent, left, &e) || __builtin_add_overflow(e, right, &e)) {
    tc_err_set(err, "resize by %lld/%lld overflows the extent %lld", (long long)left,
             (long long)right, (long long)g->axes[in].extent);
    return -1;
  }
  if (e < 1) {
    tc_err_set(err, "resize by %lld/%lld leaves extent %lld; it must stay at least 1",
             (long long)left, (long long)right, (long long)e);
    return -1;
  }
  tc_xform x = {0};
  x.kind = TC_XF_RESIZE;
  x.in[0] = in, x.nin = 1, x.nout = 1;
  x.left = left, x.right = right;
  int xi = add_xform(g, x, &e);
  *out = g->xf[xi].out[0];
  return 0;
}

int tc_dg_embed(tc_dgraph *g, int in, int n, const int64_t *extents, const int64_t *coeffs,
                int *outs, tc_str *err) {
  if (!valid_axis(g, in)) return tc_err_set(err, "no such axis"), -1;
  if (n < 1 || n > TC_XF_MAX_OUT) {
    tc_err_set(err, "embed needs 1 to %d upper dimensions, got %d", TC_XF_MAX_OUT, n);
    return -1;
  }
  const int64_t lim = (int64_t)1 << 40;
  for (int i = 0; i < n; i++) {
    if (extents[i] < 1 || extents[i] > lim) {
      tc_err_set(err, "embed extent %d must lie in 1..2^40, got %lld", i, (long long)extents[i]);
      return -1;
    }
    if (coeffs[i] > lim || coeffs[i] < -lim) {
      tc_err_set(err, "embed coefficient %d must lie within +-2^40, got %lld", i,
               (long long)coeffs[i]);
      return -1;
    }
  }
  tc_xform x = {0};
  x.kind = TC_XF_EMBED;
  x.in[0] = in, x.nin = 1, x.nout = n;
  for (int i = 0; i < n; i++) x.coeff[i] = coeffs[i];
  int xi = add_xform(g, x, extents);
  for (int i = 0; i < n; i++) outs[i] = g->xf[xi].out[i];
  return 0;
}

int tc_dg_broadcast(tc_dgraph *g, int in, int64_t extent, int *out, tc_str *err) {
  if (!valid_axis(g, in)) return tc_err_set(err, "no such axis"), -1;
  if (extent < 1) {
    tc_err_set(err, "broadcast extent must be at least 1, got %lld", (long long)extent);
    return -1;
  }
  tc_xform x = {0};
  x.kind = TC_XF_BROADCAST;
  x.in[0] = in, x.nin = 1, x.nout = 1;
  int xi = add_xform(g, x, &extent);
  *out = g->xf[xi].out[0];
  return 0;
}

int tc_dg_add_dim(tc_dgraph *g, int64_t extent, int *out, tc_str *err) {
  if (extent < 1) {
    tc_err_set(err, "a new dimension needs an extent of at least 1, got %lld", (long long)extent);
    return -1;
  }
  tc_xform x = {0};
  x.kind = TC_XF_ADDDIM;
  x.nin = 0, x.nout = 1;
  int xi = add_xform(g, x, &extent);
  *out = g->xf[xi].out[0];
  return 0;
}

int tc_dg_const_dim(tc_dgraph *g, int in, int64_t value, tc_str *err) {
  if (!valid_axis(g, in)) return tc_err_set(err, "no such axis"), -1;
  if (value < 0 || value >= g->axes[in].extent) {
    tc_err_set(err, "constant %lld lies outside the dimension's range [0, %lld)",
             (long long)value, (long long)g->axes[in].extent);
    return -1;
  }
  tc_xform x = {0};
  x.kind = TC_XF_CONSTDIM;
  x.in[0] = in, x.nin = 1, x.nout = 0;
  x.factor = value;
  new_xform(g, x);
  return 0;
}

bool tc_xf_has_forward(tc_xform_kind kind) {
  return (int)kind >= (int)TC_XF_SPLIT && (int)kind <= (int)TC_XF_RESIZE;
}

char *tc_dg_forward_marks(const tc_dgraph *g, const int *axes, int n) {
  char *from = tc_xcalloc((size_t)g->naxes + 1, 1);
  for (int i = 0; i < n; i++) from[axes[i]] = 1;
  for (int i = 0; i < g->nxf; i++) {
    const tc_xform *x = &g->xf[i];
    bool all = tc_xf_has_forward(x->kind);
    for (int k = 0; k < x->nin && all; k++) all = from[x->in[k]] != 0;
    if (all)
      for (int k = 0; k < x->nout; k++) from[x->out[k]] = 1;
  }
  return from;
}

bool tc_dg_determines(tc_epool *p, const tc_dgraph *g, const int *known, int nknown, int skip,
                      const int *targets, int ntargets) {
  const tc_expr **vals = tc_xcalloc((size_t)g->naxes + 1, sizeof *vals);
  for (int i = 0; i < nknown; i++)
    if (i != skip) vals[known[i]] = tc_e_var(p, NULL, 0, g->axes[known[i]].extent - 1);
  tc_dg_walk(p, g, vals, NULL);
  bool all = true;
  for (int i = 0; i < ntargets; i++) all &= vals[targets[i]] != NULL;
  free(vals);
  return all;
}

/* x ^ ((x & (((1 << B) - 1) << (M + S))) >> S) */
static const tc_expr *cute_apply(tc_epool *p, const tc_xform *x, const tc_expr *v) {
  int64_t mask = (((int64_t)1 << x->b) - 1) << (x->m + x->s);
  const tc_expr *hi = tc_e_bin(p, TC_E_SHR, tc_e_and(p, v, tc_e_const(p, mask)),
                               tc_e_const(p, x->s));
  return tc_e_xor(p, v, hi);
}

void tc_xf_forward(tc_epool *p, const tc_dgraph *g, const tc_xform *x,
                   const tc_expr *const *in, const tc_expr **out) {
  switch ((int)x->kind) {
    case TC_XF_SPLIT: {
      int64_t ie = g->axes[x->out[1]].extent;
      out[0] = tc_e_divc(p, in[0], ie);
      out[1] = tc_e_modc(p, in[0], ie);
      break;
    }
    case TC_XF_MERGE:
      out[0] = tc_e_add(p, tc_e_mulc(p, in[0], g->axes[x->in[1]].extent), in[1]);
      break;
    case TC_XF_XOR:
      out[0] = in[0];
      out[1] = tc_e_xor(p, in[0], in[1]);
      break;
    case TC_XF_CUTE:
      out[0] = cute_apply(p, x, in[0]);
      break;
    case TC_XF_RESIZE:
      out[0] = tc_e_addc(p, in[0], x->left);
      break;
    default: /* the view kinds: not defined forward */
      for (int k = 0; k < x->nout; k++) out[k] = NULL;
      break;
  }
}

void tc_xf_backward(tc_epool *p, const tc_dgraph *g, const tc_xform *x,
                    const tc_expr *const *out, const tc_expr **in) {
  switch ((int)x->kind) {
    case TC_XF_SPLIT: {
      int64_t ie = g->axes[x->out[1]].extent;
      in[0] = tc_e_add(p, tc_e_mulc(p, out[0], ie), out[1]);
      break;
    }
    case TC_XF_MERGE: {
      int64_t ie = g->axes[x->in[1]].extent;
      in[0] = tc_e_divc(p, out[0], ie);
      in[1] = tc_e_modc(p, out[0], ie);
      break;
    }
    case TC_XF_XOR: /* an involution */
      in[0] = out[0];
      in[1] = tc_e_xor(p, out[0], out[1]);
      break;
    case TC_XF_CUTE: /* an involution when S >= B */
      in[0] = cute_apply(p, x, out[0]);
      break;
    case TC_XF_RESIZE:
      in[0] = tc_e_addc(p, out[0], -x->left);
      break;
    case TC_XF_EMBED: {
      const tc_expr *sum = tc_e_const(p, 0);
      for (int k = 0; k < x->nout; k++) sum = tc_e_add(p, sum, tc_e_mulc(p, out[k], x->coeff[k]));
      in[0] = sum;
      break;
    }
    case TC_XF_BROADCAST: {
      int64_t le = g->axes[x->in[0]].extent;
      in[0] = le == 1 ? tc_e_const(p, 0) : tc_e_modc(p, out[0], le);
      break;
    }
    case TC_XF_ADDDIM: break; /* no inputs */
    case TC_XF_CONSTDIM: in[0] = tc_e_const(p, x->factor); break;
  }
}

static void add_range_pred(tc_epool *p, const tc_expr **preds, const tc_expr *v, int64_t extent) {
  const tc_expr *c = tc_e_land(p, tc_e_le(p, tc_e_const(p, 0), v),
                               tc_e_lt(p, v, tc_e_const(p, extent)));
  c = tc_simplify(p, c);
  if (tc_e_is_const(c, 1)) return;
  *preds = tc_e_land(p, *preds, c);
}

/* The extent of axis a over the size variables' expressions vars, or
 * NULL where a is not symbolic, vars is NULL or the extent is no chain. */
static const tc_expr *sym_extent(tc_epool *p, const tc_dgraph *g, int a, const tc_expr *const *vars) {
  int64_t steps[TC_SYM_MAX_STEPS];
  int n;
  if (!vars || !tc_dg_is_symbolic(g, a) || (n = tc_dg_sym_steps(g, a, steps, NULL)) < 0) return NULL;
  return tc_sym_expr(p, steps, n, tc_dg_sym_var(g, a), vars);
}

/* The range condition of axis a's value v: its extent over the size
 * variables where a is symbolic. */
static void axis_range_pred(tc_epool *p, const tc_dgraph *g, int a, const tc_expr **preds,
                            const tc_expr *v, const tc_expr *const *vars) {
  const tc_expr *ext = sym_extent(p, g, a, vars);
  if (!ext) {
    add_range_pred(p, preds, v, g->axes[a].extent);
    return;
  }
  const tc_expr *c = tc_e_land(p, tc_e_le(p, tc_e_const(p, 0), v), tc_e_lt(p, v, ext));
  c = tc_simplify(p, c);
  if (!tc_e_is_const(c, 1)) *preds = tc_e_land(p, *preds, c);
}

/* A split or merge whose inner extent is symbolic (vars given), through
 * that extent's expression: forward (split: in / e, in % e; merge:
 * outer * e + inner) or backward.  False for any other transform, which
 * tc_xf_forward / tc_xf_backward map with the extents as numbers. */
static bool sym_xform(tc_epool *p, const tc_dgraph *g, const tc_xform *x, const tc_expr *const *vars,
                      bool forward, const tc_expr *const *from, const tc_expr **to) {
  int inner = x->kind == TC_XF_SPLIT ? x->out[1] : x->kind == TC_XF_MERGE ? x->in[1] : -1;
  const tc_expr *e = inner >= 0 ? sym_extent(p, g, inner, vars) : NULL;
  if (!e) return false;
  if (forward == (x->kind == TC_XF_SPLIT))
    to[0] = tc_e_div(p, from[0], e), to[1] = tc_e_mod(p, from[0], e);
  else
    to[0] = tc_e_add(p, tc_e_mul(p, from[0], e), from[1]);
  return true;
}

int tc_dg_walk(tc_epool *p, const tc_dgraph *g, const tc_expr **vals, const tc_expr **preds) {
  return tc_dg_walk_sym(p, g, vals, preds, NULL);
}

int tc_dg_walk_sym(tc_epool *p, const tc_dgraph *g, const tc_expr **vals, const tc_expr **preds,
                   const tc_expr *const *vars) {
  int given = 0;
  bool changed = true;
  while (changed) {
    changed = false;
    for (int i = 0; i < g->nxf; i++) {
      const tc_xform *x = &g->xf[i];
      bool ins = true, outs = true, any_in = false, any_out = false;
      for (int k = 0; k < x->nin; k++) {
        ins &= vals[x->in[k]] != NULL;
        any_in |= vals[x->in[k]] != NULL;
      }
      for (int k = 0; k < x->nout; k++) {
        outs &= vals[x->out[k]] != NULL;
        any_out |= vals[x->out[k]] != NULL;
      }
      const tc_expr *tmp[TC_XF_MAX_OUT] = {NULL};
      if (ins && !outs && tc_xf_has_forward(x->kind)) {
        const tc_expr *iv[2] = {vals[x->in[0]], x->nin > 1 ? vals[x->in[1]] : NULL};
        if (!sym_xform(p, g, x, vars, true, iv, tmp)) tc_xf_forward(p, g, x, iv, tmp);
        for (int k = 0; k < x->nout; k++)
          if (!vals[x->out[k]]) vals[x->out[k]] = tc_simplify(p, tmp[k]), given++;
        changed = true;
      } else if (outs && !ins) {
        const tc_expr *ov[TC_XF_MAX_OUT] = {NULL};
        for (int k = 0; k < x->nout; k++) ov[k] = vals[x->out[k]];
        if (!sym_xform(p, g, x, vars, false, ov, tmp)) tc_xf_backward(p, g, x, ov, tmp);
        for (int k = 0; k < x->nin; k++) {
          if (vals[x->in[k]]) continue;
          const tc_expr *v = tc_simplify(p, tmp[k]);
          vals[x->in[k]] = v;
          given++;
          /* swizzles are bijections on their extents: no range to check;
           * nor has a split of a symbolic size that its divisor says the
           * factor divides: the range of the outer part (checked where
           * it is given, or implied so) implies the input's
           * (docs/dynamic.md) */
          bool bijective = x->kind == TC_XF_XOR || x->kind == TC_XF_CUTE;
          bool exact = vars && x->kind == TC_XF_SPLIT && tc_dg_is_symbolic(g, x->in[0]) &&
                       tc_dg_sym_divisor(g, x->in[0]) % x->factor == 0;
          /* (likewise the parts of a merge of a symbolic size with fixed
           * axes: in range when the merged value is) */
          exact |= vars && x->kind == TC_XF_MERGE && tc_dg_is_symbolic(g, x->out[0]);
          if (preds && !bijective && !exact) axis_range_pred(p, g, x->in[k], preds, v, vars);
        }
        changed = true;
      }
      (void)any_in, (void)any_out;
    }
  }
  return given;
}

static const char *ptype_tag(tc_ptype t) {
  switch (t) {
    case TC_SERIAL: return "S";
    case TC_VECTORIZE: return "V";
    case TC_UNROLL: return "U";
    default: return tc_ptype_name(t);
  }
}

const char *tc_axis_describe(const tc_dgraph *g, int a, char *buf, size_t cap) {
  if (!valid_axis(g, a)) {
    snprintf(buf, cap, "?");
    return buf;
  }
  snprintf(buf, cap, "%c%s{%lld}", g->axes[a].reduction ? 'r' : 'i', ptype_tag(g->axes[a].ptype),
           (long long)g->axes[a].extent);
  return buf;
}

bool tc_dg_is_padded(const tc_dgraph *g, int axis) {
  int d = g->axes[axis].def;
  if (d < 0) return false;
  const tc_xform *x = &g->xf[d];
  if (x->kind == TC_XF_RESIZE) return true;
  if (x->kind == TC_XF_SPLIT &&
      g->axes[x->out[0]].extent * g->axes[x->out[1]].extent != g->axes[x->in[0]].extent)
    return true;
  if (x->kind == TC_XF_SPLIT && tc_dg_is_symbolic(g, x->in[0]) &&
      tc_dg_sym_divisor(g, x->in[0]) % x->factor != 0)
    return true; /* a size the factor need not divide */
  if (x->kind == TC_XF_EMBED) { /* can the sum leave [0, extent)? */
    int64_t lo = 0, hi = 0, span;
    for (int k = 0; k < x->nout; k++) {
      if (__builtin_mul_overflow(x->coeff[k], g->axes[x->out[k]].extent - 1, &span) ||
          __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi))
        return true; /* beyond 64 bits: certainly out of range */
    }
    if (lo < 0 || hi >= g->axes[x->in[0]].extent) return true;
  }
  for (int k = 0; k < x->nin; k++)
    if (tc_dg_is_padded(g, x->in[k])) return true;
  return false;
}

bool tc_dg_is_broadcast_axis(const tc_dgraph *g, int axis) {
  int d = g->axes[axis].def;
  if (d < 0) return false;
  const tc_xform *x = &g->xf[d];
  if (x->kind == TC_XF_BROADCAST) return g->axes[x->in[0]].extent == 1;
  if (x->nin == 0) return false;
  for (int k = 0; k < x->nin; k++)
    if (!tc_dg_is_broadcast_axis(g, x->in[k])) return false;
  return true;
}

int tc_dg_history(const tc_dgraph *g, const int *sources, int nsrc,
                  const int *targets, int ntgt, int *out) {
  char *reach = tc_xcalloc((size_t)g->naxes, 1), *need = tc_xcalloc((size_t)g->naxes, 1);
  char *src = tc_xcalloc((size_t)g->naxes, 1), *use = tc_xcalloc((size_t)g->nxf + 1, 1);
  for (int i = 0; i < nsrc; i++) reach[sources[i]] = src[sources[i]] = 1;
  for (int i = 0; i < g->nxf; i++) {
    const tc_xform *x = &g->xf[i];
    bool all = true;
    for (int k = 0; k < x->nin; k++) all &= reach[x->in[k]] != 0;
    if (all)
      for (int k = 0; k < x->nout; k++) reach[x->out[k]] = 1;
  }
  for (int i = 0; i < ntgt; i++) need[targets[i]] = 1;
  for (int i = g->nxf - 1; i >= 0; i--) {
    const tc_xform *x = &g->xf[i];
    bool needed = false;
    for (int k = 0; k < x->nout; k++) needed |= need[x->out[k]] && !src[x->out[k]];
    bool reachable = true;
    for (int k = 0; k < x->nin; k++) reachable &= reach[x->in[k]] != 0;
    if (!needed || !reachable) continue;
    use[i] = 1;
    for (int k = 0; k < x->nin; k++) need[x->in[k]] = 1;
  }
  int n = 0;
  for (int i = 0; i < g->nxf; i++)
    if (use[i]) out[n++] = i;
  free(reach), free(need), free(src), free(use);
  return n;
}

int tc_dg_replay(tc_dgraph *g, const int *hist, int nhist, int **mapp, tc_str *err) {
  for (int h = 0; h < nhist; h++) {
    tc_xform x = g->xf[hist[h]]; /* copy: the array may move */
    int in[2] = {-1, -1};
    int out[TC_XF_MAX_OUT];
    for (int k = 0; k < TC_XF_MAX_OUT; k++) out[k] = -1;
    for (int k = 0; k < x.nin; k++) {
      in[k] = (*mapp)[x.in[k]];
      if (in[k] < 0) return tc_err_set(err, "an input axis of a replayed transform has no counterpart"), -1;
    }
    int rc = 0;
    int before = g->naxes;
    switch ((int)x.kind) {
      case TC_XF_SPLIT: rc = tc_dg_split(g, in[0], x.factor, x.inner_split, &out[0], &out[1], err); break;
      case TC_XF_MERGE: rc = tc_dg_merge(g, in[0], in[1], &out[0], err); break;
      case TC_XF_XOR: rc = tc_dg_xor(g, in[0], in[1], &out[0], &out[1], err); break;
      case TC_XF_CUTE: rc = tc_dg_cute(g, in[0], x.b, x.m, x.s, &out[0], err); break;
      case TC_XF_RESIZE: rc = tc_dg_resize(g, in[0], x.left, x.right, &out[0], err); break;
      case TC_XF_EMBED: {
        int64_t ext[TC_XF_MAX_OUT];
        for (int k = 0; k < x.nout; k++) ext[k] = g->axes[x.out[k]].extent;
        rc = tc_dg_embed(g, in[0], x.nout, ext, x.coeff, out, err);
        break;
      }
      case TC_XF_BROADCAST:
        rc = tc_dg_broadcast(g, in[0], g->axes[x.out[0]].extent, &out[0], err);
        break;
      case TC_XF_ADDDIM: rc = tc_dg_add_dim(g, g->axes[x.out[0]].extent, &out[0], err); break;
      case TC_XF_CONSTDIM: rc = tc_dg_const_dim(g, in[0], x.factor, err); break;
      default: return tc_err_set(err, "unknown transform kind %d", (int)x.kind), -1;
    }
    if (rc) return -1;
    *mapp = tc_xrealloc(*mapp, (size_t)g->naxes * sizeof(int));
    for (int a = before; a < g->naxes; a++) (*mapp)[a] = -1;
    for (int k = 0; k < x.nout; k++) (*mapp)[x.out[k]] = out[k];
  }
  return 0;
}

/* ---- symbolic extents --------------------------------------------------- */

int tc_sym_step_var(int64_t step) {
  return step >= TC_SYM_VAR_STEP && step < TC_SYM_VAR_STEP + TC_MAX_SIZE_VARS
             ? (int)(step - TC_SYM_VAR_STEP) : -1;
}

bool tc_dg_is_symbolic(const tc_dgraph *g, int axis) {
  const tc_axis *a = &g->axes[axis];
  if (a->def < 0) return a->sym_div > 0;
  const tc_xform *x = &g->xf[a->def];
  /* a split's factor side is the number it names */
  if (x->kind == TC_XF_SPLIT && axis == x->out[x->inner_split ? 1 : 0]) return false;
  for (int k = 0; k < x->nin; k++)
    if (tc_dg_is_symbolic(g, x->in[k])) return true;
  return false;
}

/* Which input of x a symbolic output's chain continues from; *var_in is
 * the other input where that one is a size variable itself (a merge of
 * two symbolic axes: the chain multiplies by it), else -1.  -1 where
 * neither side of such a merge is a size variable. */
static int chain_input(const tc_dgraph *g, const tc_xform *x, int *var_in) {
  *var_in = -1;
  bool s0 = tc_dg_is_symbolic(g, x->in[0]), s1 = x->nin > 1 && tc_dg_is_symbolic(g, x->in[1]);
  if (!(s0 && s1)) return s1 ? 1 : 0;
  if (g->axes[x->in[1]].def < 0) return *var_in = 1, 0;
  if (g->axes[x->in[0]].def < 0) return *var_in = 0, 1;
  return -1;
}

int tc_dg_sym_steps(const tc_dgraph *g, int axis, int64_t *steps, tc_str *err) {
  const tc_axis *a = &g->axes[axis];
  if (a->def < 0) return 0;
  const tc_xform *x = &g->xf[a->def];
  int n, var_in, k = chain_input(g, x, &var_in);
  if (k < 0) {
    tc_err_set(err, "a merge of two axes of symbolic sizes neither of which is a size variable "
                    "itself (merge the variables before splitting them)");
    return -1;
  }
  if (x->kind != TC_XF_SPLIT && x->kind != TC_XF_MERGE) {
    tc_err_set(err, "a swizzle, resize or view of an axis of the symbolic size");
    return -1;
  }
  if ((n = tc_dg_sym_steps(g, x->in[k], steps, err)) < 0) return -1;
  if (n == TC_SYM_MAX_STEPS) {
    tc_err_set(err, "more than %d splits and merges of the symbolic size", TC_SYM_MAX_STEPS);
    return -1;
  }
  steps[n++] = x->kind == TC_XF_SPLIT ? -x->factor
               : var_in >= 0         ? TC_SYM_VAR_STEP + g->axes[x->in[var_in]].sym_var
                                     : g->axes[x->in[1 - k]].extent;
  return n;
}

int64_t tc_sym_eval(const int64_t *steps, int n, int var, const int64_t *values) {
  int64_t value = values[var];
  for (int i = 0; i < n; i++) {
    int v = tc_sym_step_var(steps[i]);
    value = v >= 0 ? value * values[v] : steps[i] > 0 ? value * steps[i] : (value - steps[i] - 1) / -steps[i];
  }
  return value;
}

const tc_expr *tc_sym_expr(tc_epool *p, const int64_t *steps, int n, int var,
                           const tc_expr *const *vars) {
  const tc_expr *e = vars[var];
  for (int i = 0; i < n; i++) {
    int v = tc_sym_step_var(steps[i]);
    e = v >= 0        ? tc_e_mul(p, e, vars[v])
        : steps[i] > 0 ? tc_e_mulc(p, e, steps[i])
                       : tc_e_divc(p, tc_e_addc(p, e, -steps[i] - 1), -steps[i]);
  }
  return e;
}

const char *tc_dg_sym_text(const tc_dgraph *g, int axis, const char *const *names, char *buf,
                           size_t cap) {
  int64_t steps[TC_SYM_MAX_STEPS];
  int n = tc_dg_sym_steps(g, axis, steps, NULL);
  char tmp[160];
  snprintf(buf, cap, "%s", n < 0 ? "?" : names[tc_dg_sym_var(g, axis)]);
  for (int i = 0; i < n; i++) {
    int v = tc_sym_step_var(steps[i]);
    if (v >= 0) snprintf(tmp, sizeof tmp, "%s x %s", buf, names[v]);
    else if (steps[i] > 0) snprintf(tmp, sizeof tmp, "%s x %lld", buf, (long long)steps[i]);
    else snprintf(tmp, sizeof tmp, "ceil(%s / %lld)", buf, (long long)-steps[i]);
    snprintf(buf, cap, "%s", tmp);
  }
  return buf;
}

/* The root a symbolic axis's chain starts from. */
static int sym_root(const tc_dgraph *g, int a) {
  while (g->axes[a].def >= 0) { /* the input each step's chain continues from */
    const tc_xform *x = &g->xf[g->axes[a].def];
    int var_in, k = chain_input(g, x, &var_in);
    a = x->in[k < 0 ? 0 : k];
  }
  return a;
}

int tc_dg_sym_var(const tc_dgraph *g, int axis) { return g->axes[sym_root(g, axis)].sym_var; }

int64_t tc_dg_sym_divisor(const tc_dgraph *g, int axis) {
  const tc_axis *a = &g->axes[axis];
  if (!tc_dg_is_symbolic(g, axis)) return a->extent;
  if (a->def < 0) return a->sym_div > 0 ? a->sym_div : 1;
  const tc_xform *x = &g->xf[a->def];
  if (x->kind == TC_XF_MERGE) return tc_dg_sym_divisor(g, x->in[0]) * tc_dg_sym_divisor(g, x->in[1]);
  if (x->kind != TC_XF_SPLIT) return 1;
  int64_t d = tc_dg_sym_divisor(g, x->in[0]);
  return d % x->factor == 0 ? d / x->factor : 1;
}
