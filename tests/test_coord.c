/* test_coord.c - coordinate-transform views (src/layout/coord.c).
 *
 * Reference: a plain-C model of a view stack (model_*) that records every
 * transform the test applies and maps an upper point to memory by undoing
 * the transforms one by one with integer arithmetic (floor div/mod for a
 * merge, row-major recombination for an unmerge, sum of coefficient * value
 * for an embed, ...), marking the point invalid when a pad or embed leaves
 * its range.  The view's tc_view_index expressions, evaluated at every
 * upper point, must give the model's offset wherever the model says valid,
 * and exactly the model's validity.
 *
 *   - unit tests of every transform, error messages, copy, describe;
 *   - conv2d forward views built exactly as rocMLIR's MIOpen dialect builds
 *     them (pad, embed (y,ho), (x,wo), merge gemmK = {c,y,x}, gemmN =
 *     {n,ho,wo}), checked point by point against the plain conv index formula
 *     and by running the whole convolution as a GEMM over the views;
 *     asymmetric padding, stride, dilation; backward data with the
 *     negative-coefficient embeds of the CK/rocMLIR v4r1 formulation (stride
 *     1, and any stride/dilation with one GEMM per (iYTilda, iXTilda),
 *     const_dim fixing the tilda dims);
 *   - merge collapse: the div/mod count of the offset as a function of the
 *     GEMM K coordinate (method in test_conv_divmod_counts), and the forms
 *     unmerge-of-merge, merge-of-unmerge, embed 1, l0, l0*l1, strides;
 *   - vector widths: the PR #772 case (a 4-wide row padded to 6 under a
 *     2-wide filter), simple contiguous cases (maximal widths), and random
 *     stacks where every returned width passes a brute-force check;
 *   - random stacks of every transform against the model. */
#include "test.h"

#include <stdbool.h>
#include <stdint.h>

#include "layout/coord.h"

/* ------------------------------------------------------------ helpers */

static uint64_t rng_state;

static uint64_t rnd64(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static int rnd(int n) { return n <= 1 ? 0 : (int)(rnd64() % (uint64_t)n); }

static int64_t fdiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

static int64_t fmod_(int64_t a, int64_t b) { return a - fdiv(a, b) * b; }

/* ------------------------------------------------------------ the model */

enum { MK_PAD, MK_SLICE, MK_EMBED, MK_MERGE, MK_UNMERGE, MK_BCAST, MK_ADD, MK_CONST, MK_REORDER };

typedef struct mop {
  int kind, dim, n;
  int64_t a, b;
  int64_t ext[TC_VIEW_MAX_DIMS], coef[TC_VIEW_MAX_DIMS];
  int dims[TC_VIEW_MAX_DIMS];
} mop;

enum { MAXOPS = 24 };

typedef struct model {
  int nlower;
  int64_t stride[TC_VIEW_MAX_DIMS];
  int nops;
  mop ops[MAXOPS];
  int n[MAXOPS + 1];                        /* upper dims after i ops */
  int64_t ext[MAXOPS + 1][TC_VIEW_MAX_DIMS]; /* their extents */
} model;

/* A view and its model, built side by side. */
typedef struct vm {
  tc_view *v;
  model m;
} vm;

static void vm_new(vm *x, int n, const int64_t *ext, const int64_t *strides, const char *const *names) {
  x->v = tc_view_new(n, ext, strides, names);
  memset(&x->m, 0, sizeof x->m);
  x->m.nlower = n;
  int64_t s = 1;
  for (int i = n - 1; i >= 0; i--) {
    x->m.stride[i] = strides ? strides[i] : s;
    s *= ext[i];
  }
  x->m.n[0] = n;
  for (int i = 0; i < n; i++) x->m.ext[0][i] = ext[i];
}

static int64_t *cur_ext(model *m) { return m->ext[m->nops]; }
static int cur_n(const model *m) { return m->n[m->nops]; }

/* Records op (already applied to the view) and the new upper extents. */
static void model_push(model *m, mop o) {
  int n = m->n[m->nops];
  const int64_t *e = m->ext[m->nops];
  int64_t ne[TC_VIEW_MAX_DIMS];
  int nn = 0;
  switch (o.kind) {
    case MK_PAD:
    case MK_SLICE:
    case MK_BCAST:
      for (int i = 0; i < n; i++) ne[nn++] = e[i];
      ne[o.dim] = o.kind == MK_PAD ? e[o.dim] + o.a + o.b : o.kind == MK_SLICE ? o.b - o.a : o.a;
      break;
    case MK_EMBED:
    case MK_UNMERGE:
      for (int i = 0; i < n; i++) {
        if (i == o.dim)
          for (int k = 0; k < o.n; k++) ne[nn++] = o.ext[k];
        else
          ne[nn++] = e[i];
      }
      break;
    case MK_MERGE: {
      int64_t prod = 1;
      for (int k = 0; k < o.n; k++) prod *= e[o.dims[k]];
      for (int i = 0; i < n; i++) {
        bool gone = false;
        for (int k = 1; k < o.n; k++) gone |= o.dims[k] == i;
        if (gone) continue;
        ne[nn++] = i == o.dims[0] ? prod : e[i];
      }
      break;
    }
    case MK_ADD:
      for (int i = 0; i <= n; i++) {
        if (i == o.dim) ne[nn++] = o.a;
        if (i < n) ne[nn++] = e[i];
      }
      break;
    case MK_CONST:
      for (int i = 0; i < n; i++)
        if (i != o.dim) ne[nn++] = e[i];
      break;
    case MK_REORDER:
      for (int i = 0; i < n; i++) ne[nn++] = e[o.dims[i]];
      break;
  }
  m->ops[m->nops++] = o;
  m->n[m->nops] = nn;
  memcpy(m->ext[m->nops], ne, sizeof ne);
}

/* Maps an upper point to memory; returns validity. */
static bool model_eval(const model *m, const int64_t *upper, int64_t *offset) {
  int64_t cur[TC_VIEW_MAX_DIMS + 1], prev[TC_VIEW_MAX_DIMS + 1];
  bool ok = true;
  memcpy(cur, upper, sizeof(int64_t) * (size_t)m->n[m->nops]);
  for (int s = m->nops - 1; s >= 0; s--) {
    const mop *o = &m->ops[s];
    int pn = m->n[s], cn = m->n[s + 1];
    const int64_t *pe = m->ext[s];
    switch (o->kind) {
      case MK_PAD:
      case MK_SLICE:
      case MK_BCAST:
        memcpy(prev, cur, sizeof(int64_t) * (size_t)pn);
        if (o->kind == MK_PAD) prev[o->dim] = cur[o->dim] - o->a;
        else if (o->kind == MK_SLICE) prev[o->dim] = cur[o->dim] + o->a;
        else prev[o->dim] = fmod_(cur[o->dim], pe[o->dim]);
        ok &= prev[o->dim] >= 0 && prev[o->dim] < pe[o->dim];
        break;
      case MK_EMBED:
      case MK_UNMERGE: {
        int c = 0;
        for (int i = 0; i < pn; i++) {
          if (i != o->dim) {
            prev[i] = cur[c++];
            continue;
          }
          int64_t v = 0;
          for (int k = 0; k < o->n; k++) {
            if (o->kind == MK_EMBED) v += o->coef[k] * cur[c + k];
            else v = v * o->ext[k] + cur[c + k];
          }
          c += o->n;
          prev[i] = v;
          ok &= v >= 0 && v < pe[i];
        }
        break;
      }
      case MK_MERGE: {
        int c = 0;
        int64_t mv = 0;
        for (int i = 0; i < pn; i++) {
          bool gone = false;
          for (int k = 1; k < o->n; k++) gone |= o->dims[k] == i;
          if (gone) continue;
          if (i == o->dims[0]) mv = cur[c];
          else prev[i] = cur[c];
          c++;
        }
        for (int k = o->n - 1; k >= 0; k--) {
          int64_t e = pe[o->dims[k]];
          prev[o->dims[k]] = k ? fmod_(mv, e) : mv;
          mv = fdiv(mv, e);
        }
        ok &= prev[o->dims[0]] >= 0 && prev[o->dims[0]] < pe[o->dims[0]];
        break;
      }
      case MK_ADD:
        for (int i = 0, c = 0; i < cn; i++)
          if (i != o->dim) prev[c++] = cur[i];
        break;
      case MK_CONST:
        for (int i = 0, c = 0; i < pn; i++) prev[i] = i == o->dim ? o->a : cur[c++];
        break;
      case MK_REORDER:
        for (int i = 0; i < cn; i++) prev[o->dims[i]] = cur[i];
        break;
    }
    memcpy(cur, prev, sizeof(int64_t) * (size_t)pn);
  }
  int64_t off = 0;
  for (int i = 0; i < m->nlower; i++) off += m->stride[i] * cur[i];
  *offset = off;
  return ok;
}

/* The view calls, mirrored into the model; each must succeed. */
static int vm_pad(vm *x, int dim, int64_t l, int64_t r) {
  int rc = tc_view_pad(x->v, dim, l, r);
  TC_CHECK(rc == 0, "pad: %s", x->v->err);
  if (!rc) model_push(&x->m, (mop){.kind = MK_PAD, .dim = dim, .a = l, .b = r});
  return rc;
}

static int vm_slice(vm *x, int dim, int64_t b, int64_t e) {
  int rc = tc_view_slice(x->v, dim, b, e);
  TC_CHECK(rc == 0, "slice: %s", x->v->err);
  if (!rc) model_push(&x->m, (mop){.kind = MK_SLICE, .dim = dim, .a = b, .b = e});
  return rc;
}

static int vm_embed(vm *x, int dim, int n, const int64_t *ext, const int64_t *coef, const char *const *names) {
  int rc = tc_view_embed(x->v, dim, n, ext, coef, names);
  TC_CHECK(rc == 0, "embed: %s", x->v->err);
  if (rc) return rc;
  mop o = {.kind = MK_EMBED, .dim = dim, .n = n};
  for (int i = 0; i < n; i++) o.ext[i] = ext[i], o.coef[i] = coef[i];
  model_push(&x->m, o);
  return 0;
}

static int vm_merge(vm *x, int n, const int *dims, const char *name) {
  int rc = tc_view_merge(x->v, n, dims, name);
  TC_CHECK(rc == 0, "merge: %s", x->v->err);
  if (rc) return rc;
  mop o = {.kind = MK_MERGE, .n = n};
  for (int i = 0; i < n; i++) o.dims[i] = dims[i];
  model_push(&x->m, o);
  return 0;
}

static int vm_unmerge(vm *x, int dim, int n, const int64_t *ext, const char *const *names) {
  int rc = tc_view_unmerge(x->v, dim, n, ext, names);
  TC_CHECK(rc == 0, "unmerge: %s", x->v->err);
  if (rc) return rc;
  mop o = {.kind = MK_UNMERGE, .dim = dim, .n = n};
  for (int i = 0; i < n; i++) o.ext[i] = ext[i];
  model_push(&x->m, o);
  return 0;
}

static int vm_bcast(vm *x, int dim, int64_t e) {
  int rc = tc_view_broadcast(x->v, dim, e);
  TC_CHECK(rc == 0, "broadcast: %s", x->v->err);
  if (!rc) model_push(&x->m, (mop){.kind = MK_BCAST, .dim = dim, .a = e});
  return rc;
}

static int vm_add(vm *x, int pos, int64_t e, const char *name) {
  int rc = tc_view_add_dim(x->v, pos, e, name);
  TC_CHECK(rc == 0, "add_dim: %s", x->v->err);
  if (!rc) model_push(&x->m, (mop){.kind = MK_ADD, .dim = pos, .a = e});
  return rc;
}

static int vm_const(vm *x, int dim, int64_t val) {
  int rc = tc_view_const_dim(x->v, dim, val);
  TC_CHECK(rc == 0, "const_dim: %s", x->v->err);
  if (!rc) model_push(&x->m, (mop){.kind = MK_CONST, .dim = dim, .a = val});
  return rc;
}

static int vm_reorder(vm *x, const int *perm) {
  int rc = tc_view_reorder(x->v, perm);
  TC_CHECK(rc == 0, "reorder: %s", x->v->err);
  if (rc) return rc;
  mop o = {.kind = MK_REORDER};
  for (int i = 0; i < cur_n(&x->m); i++) o.dims[i] = perm[i];
  model_push(&x->m, o);
  return 0;
}

static void vm_free(vm *x) { tc_view_free(x->v); }

/* ------------------------------------------------- checking against it */

/* The view's index expressions over one variable per upper dim. */
typedef struct vindex {
  tc_epool *p;
  const tc_expr *vars[TC_VIEW_MAX_DIMS];
  const tc_expr *off, *valid;
} vindex;

static void vindex_build(vindex *ix, const tc_view *v) {
  ix->p = tc_epool_new();
  for (int i = 0; i < v->nupper; i++)
    ix->vars[i] = tc_e_var(ix->p, v->names[i], 0, tc_view_extent(v, i) - 1);
  tc_view_index(v, ix->p, ix->vars, &ix->off, &ix->valid);
}

static void vindex_free(vindex *ix) { tc_epool_free(ix->p); }

static void print_view(const tc_view *v) {
  tc_str s;
  tc_str_init(&s);
  tc_view_describe(v, &s);
  fprintf(stderr, "%s", tc_str_cstr(&s));
  tc_str_free(&s);
}

static long long points_checked;

/* Every upper point: offset and validity against the model.  Returns the
 * number of mismatches (reports the first few). */
static int check_all_points(const vm *x, const char *what) {
  const tc_view *v = x->v;
  int n = v->nupper;
  TC_CHECK(n == cur_n(&x->m), "%s: %d upper dims, model %d", what, n, cur_n(&x->m));
  if (n != cur_n(&x->m)) return 1;
  for (int i = 0; i < n; i++)
    TC_CHECK(tc_view_extent(v, i) == x->m.ext[x->m.nops][i], "%s: dim %d extent %lld, model %lld", what, i,
             (long long)tc_view_extent(v, i), (long long)x->m.ext[x->m.nops][i]);
  vindex ix;
  vindex_build(&ix, v);
  int64_t u[TC_VIEW_MAX_DIMS] = {0};
  int bad = 0;
  for (;;) {
    int64_t moff;
    bool mval = model_eval(&x->m, u, &moff);
    int64_t voff = tc_e_eval(ix.off, u), vval = tc_e_eval(ix.valid, u);
    points_checked++;
    if ((vval != 0) != mval || (mval && voff != moff)) {
      if (bad++ < 3) {
        fprintf(stderr, "%s: point", what);
        for (int i = 0; i < n; i++) fprintf(stderr, " %lld", (long long)u[i]);
        fprintf(stderr, ": view offset %lld valid %lld, model offset %lld valid %d\n", (long long)voff,
                (long long)vval, (long long)moff, mval);
        if (bad == 1) print_view(v);
      }
    }
    int d = n - 1;
    while (d >= 0 && ++u[d] == x->m.ext[x->m.nops][d]) u[d--] = 0;
    if (d < 0) break;
  }
  TC_CHECK(bad == 0, "%s: %d points differ from the model", what, bad);
  vindex_free(&ix);
  return bad;
}

/* Brute force: is w a legal vector width along dim?  For every upper point
 * whose coordinate in dim is a multiple of w, the w points along dim must
 * all be valid or all invalid; if valid, their offsets must be consecutive
 * and the first a multiple of w (an aligned vector access). */
static bool brute_vector_ok(const model *m, int dim, int w) {
  int n = m->n[m->nops];
  const int64_t *e = m->ext[m->nops];
  if (e[dim] % w) return false;
  int64_t u[TC_VIEW_MAX_DIMS] = {0};
  for (;;) {
    int64_t off0;
    bool v0 = model_eval(m, u, &off0);
    if (v0 && fmod_(off0, w) != 0) return false;
    for (int j = 1; j < w; j++) {
      int64_t uj[TC_VIEW_MAX_DIMS], off;
      memcpy(uj, u, sizeof uj);
      uj[dim] += j;
      bool vj = model_eval(m, uj, &off);
      if (vj != v0) return false;
      if (v0 && off != off0 + j) return false;
    }
    int d = n - 1;
    for (; d >= 0; d--) {
      u[d] += d == dim ? w : 1;
      if (u[d] < e[d]) break;
      u[d] = 0;
    }
    if (d < 0) break;
  }
  return true;
}

static int brute_max_width(const model *m, int dim, int cap) {
  int best = 1;
  for (int w = 2; w <= cap; w *= 2)
    if (brute_vector_ok(m, dim, w)) best = w;
  return best;
}

/* ------------------------------------------------------------ unit tests */

static void test_new_and_basics(void) {
  int64_t ext[3] = {2, 3, 4};
  const char *names[3] = {"a", "b", "c"};
  tc_view *v = tc_view_new(3, ext, NULL, names);
  TC_REQUIRE(v, "tc_view_new failed");
  TC_CHECK_EQ_INT(v->nupper, 3);
  TC_CHECK_EQ_INT(v->nlower, 3);
  TC_CHECK_EQ_INT(v->lower_stride[0], 12);
  TC_CHECK_EQ_INT(v->lower_stride[1], 4);
  TC_CHECK_EQ_INT(v->lower_stride[2], 1);
  TC_CHECK_EQ_INT(v->lower_const[0], -1);
  TC_CHECK_EQ_INT(tc_view_find(v, "b"), 1);
  TC_CHECK_EQ_INT(tc_view_find(v, "zz"), -1);
  TC_CHECK_EQ_INT(tc_view_extent(v, 2), 4);
  TC_CHECK_EQ_INT(tc_view_extent(v, 3), -1);
  TC_CHECK(tc_view_rename(v, 1, "bee") == 0, "%s", v->err);
  TC_CHECK_EQ_INT(tc_view_find(v, "bee"), 1);
  int perm[3] = {2, 0, 1};
  TC_CHECK(tc_view_reorder(v, perm) == 0, "%s", v->err);
  TC_CHECK_STR(v->names[0], "c");
  TC_CHECK_STR(v->names[1], "a");
  TC_CHECK_EQ_INT(tc_view_extent(v, 0), 4);
  tc_epool *p = tc_epool_new();
  const tc_expr *u[3] = {tc_e_const(p, 3), tc_e_const(p, 1), tc_e_const(p, 2)};
  const tc_expr *off, *val;
  tc_view_index(v, p, u, &off, &val);
  TC_CHECK(tc_e_is_const(off, 1 * 12 + 2 * 4 + 3), "offset of (c=3, a=1, b=2)");
  TC_CHECK(tc_e_is_const(val, 1), "always valid");
  /* copy is independent */
  tc_view *c = tc_view_copy(v);
  TC_CHECK(tc_view_pad(c, 0, 1, 1) == 0, "%s", c->err);
  TC_CHECK_EQ_INT(tc_view_extent(c, 0), 6);
  TC_CHECK_EQ_INT(tc_view_extent(v, 0), 4);
  TC_CHECK_EQ_INT(c->g.nxf, 1);
  TC_CHECK_EQ_INT(v->g.nxf, 0);
  tc_view_free(c);
  tc_view_free(v);
  /* explicit strides */
  int64_t e2[2] = {3, 5}, s2[2] = {1, 7};
  v = tc_view_new(2, e2, s2, NULL);
  TC_REQUIRE(v, "strided view");
  TC_CHECK_STR(v->names[0], "d0");
  const tc_expr *u2[2] = {tc_e_const(p, 2), tc_e_const(p, 4)};
  tc_view_index(v, p, u2, &off, &val);
  TC_CHECK(tc_e_is_const(off, 2 + 28), "strided offset");
  tc_view_free(v);
  TC_CHECK(tc_view_new(2, (int64_t[]){3, 0}, NULL, NULL) == NULL, "zero extent accepted");
  TC_CHECK(tc_view_new(TC_VIEW_MAX_DIMS + 1, ext, NULL, NULL) == NULL, "too many dims accepted");
  tc_epool_free(p);
}

static void test_pad_slice(void) {
  vm x;
  int64_t ext[2] = {3, 4};
  vm_new(&x, 2, ext, NULL, NULL);
  vm_pad(&x, 1, 2, 1);
  TC_CHECK_EQ_INT(tc_view_extent(x.v, 1), 7);
  check_all_points(&x, "pad");
  vindex ix;
  vindex_build(&ix, x.v);
  TC_CHECK(!tc_e_is_const(ix.valid, 1), "a pad must give a predicate");
  vindex_free(&ix);
  vm_slice(&x, 1, 1, 6);
  TC_CHECK_EQ_INT(tc_view_extent(x.v, 1), 5);
  check_all_points(&x, "pad+slice");
  vm_slice(&x, 0, 1, 3);
  check_all_points(&x, "pad+slice+slice");
  vm_free(&x);
  /* a slice alone is always valid: the predicate simplifies away */
  vm_new(&x, 2, ext, NULL, NULL);
  vm_slice(&x, 1, 1, 3);
  vindex_build(&ix, x.v);
  TC_CHECK(tc_e_is_const(ix.valid, 1), "slice predicate must vanish");
  vindex_free(&ix);
  check_all_points(&x, "slice");
  vm_free(&x);
}

static void test_embed(void) {
  /* conv-style embed: (y: 3, ho: 4) coefficients (1, 1) onto hi = 6: all
   * valid, no predicate */
  vm x;
  int64_t ext[1] = {6};
  vm_new(&x, 1, ext, NULL, NULL);
  vm_embed(&x, 0, 2, (int64_t[]){3, 4}, (int64_t[]){1, 1}, (const char *[]){"y", "ho"});
  TC_CHECK_STR(x.v->names[0], "y");
  TC_CHECK_STR(x.v->names[1], "ho");
  vindex ix;
  vindex_build(&ix, x.v);
  TC_CHECK(tc_e_is_const(ix.valid, 1), "in-range embed must have no predicate");
  vindex_free(&ix);
  check_all_points(&x, "embed (1,1)");
  TC_CHECK(!tc_dg_is_padded(&x.v->g, x.v->upper[0]), "in-range embed is not padded");
  vm_free(&x);
  /* negative coefficients: lower = 2*a - b + 0*c */
  vm_new(&x, 1, (int64_t[]){7}, NULL, NULL);
  vm_embed(&x, 0, 3, (int64_t[]){4, 3, 2}, (int64_t[]){2, -1, 0}, NULL);
  TC_CHECK_STR(x.v->names[1], "d0.1");
  vindex_build(&ix, x.v);
  TC_CHECK(!tc_e_is_const(ix.valid, 1), "negative embed must give a predicate");
  vindex_free(&ix);
  check_all_points(&x, "embed (2,-1,0)");
  TC_CHECK(tc_dg_is_padded(&x.v->g, x.v->upper[0]), "out-of-range embed is padded");
  vm_free(&x);
  /* reach past the upper bound */
  vm_new(&x, 2, (int64_t[]){2, 5}, NULL, NULL);
  vm_embed(&x, 1, 2, (int64_t[]){3, 3}, (int64_t[]){2, 1}, NULL);
  check_all_points(&x, "embed (2,1) past the bound");
  vm_free(&x);
}

static void test_merge_unmerge(void) {
  vm x;
  vm_new(&x, 4, (int64_t[]){2, 3, 4, 5}, NULL, (const char *[]){"n", "c", "h", "w"});
  vm_merge(&x, 3, (int[]){1, 3, 2}, "cwh"); /* out of order: c outer, then w, then h */
  TC_CHECK_EQ_INT(x.v->nupper, 2);
  TC_CHECK_STR(x.v->names[1], "cwh");
  TC_CHECK_EQ_INT(tc_view_extent(x.v, 1), 60);
  check_all_points(&x, "merge c,w,h");
  vm_unmerge(&x, 1, 3, (int64_t[]){6, 2, 5}, (const char *[]){"p", "q", "r"});
  TC_CHECK_EQ_INT(x.v->nupper, 4);
  check_all_points(&x, "merge + unmerge");
  vm_merge(&x, 2, (int[]){3, 0}, NULL); /* r outer, n inner; lands at r's place */
  TC_CHECK_STR(x.v->names[2], "r");
  check_all_points(&x, "merge + unmerge + merge");
  vm_free(&x);
  /* merge of one dim is a rename */
  vm_new(&x, 2, (int64_t[]){3, 4}, NULL, NULL);
  TC_CHECK(tc_view_merge(x.v, 1, (int[]){1}, "z") == 0, "%s", x.v->err);
  model_push(&x.m, (mop){.kind = MK_MERGE, .n = 1, .dims = {1}});
  TC_CHECK_STR(x.v->names[1], "z");
  check_all_points(&x, "merge of one");
  vm_free(&x);
}

static void test_broadcast_add_const(void) {
  vm x;
  vm_new(&x, 3, (int64_t[]){1, 3, 4}, NULL, NULL);
  vm_bcast(&x, 0, 5); /* extent 1 -> 5: always index 0 */
  vm_bcast(&x, 2, 8); /* 4 -> 8: modulo */
  vm_add(&x, 1, 3, "z");
  TC_CHECK_STR(x.v->names[1], "z");
  TC_CHECK_EQ_INT(x.v->nupper, 4);
  check_all_points(&x, "broadcast + add_dim");
  vindex ix;
  vindex_build(&ix, x.v);
  TC_CHECK(tc_e_is_const(ix.valid, 1), "broadcast/add_dim need no predicate");
  vindex_free(&ix);
  vm_const(&x, 2, 2); /* fix the (lower) dim of extent 3 to 2 */
  TC_CHECK_EQ_INT(x.v->nupper, 3);
  TC_CHECK_EQ_INT(x.v->lower_const[1], 2);
  check_all_points(&x, "broadcast + add_dim + const_dim");
  vm_free(&x);
  /* const dim above a pad: may be invalid */
  vm_new(&x, 2, (int64_t[]){3, 4}, NULL, NULL);
  vm_pad(&x, 0, 2, 0);
  vm_const(&x, 0, 1);
  TC_CHECK_EQ_INT(x.v->lower_const[0], -1);
  vindex_build(&ix, x.v);
  TC_CHECK(tc_e_is_const(ix.valid, 0), "const in the padding: never valid");
  vindex_free(&ix);
  check_all_points(&x, "const in padding");
  vm_free(&x);
}

/* div + mod nodes of a view's offset over exact-range variables */
static int view_divmod(const tc_view *v) {
  vindex ix;
  vindex_build(&ix, v);
  int n = tc_e_count_op(ix.off, TC_E_DIV) + tc_e_count_op(ix.off, TC_E_MOD);
  vindex_free(&ix);
  return n;
}

/* Merge collapse in the forms the index simplifier must catch: an unmerge of
 * a merge, a merge of an unmerge, an embed with coefficients 1, l0, l0*l1
 * merged back, the final row-major linearization with strides (also
 * column-major merged in reverse); and merges that cannot collapse keep their
 * div (still exact). */
static void test_merge_collapse(void) {
  vm x;
  vm_new(&x, 3, (int64_t[]){4, 6, 5}, NULL, NULL);
  vm_merge(&x, 2, (int[]){0, 1}, "m");
  vm_unmerge(&x, 0, 3, (int64_t[]){2, 3, 4}, NULL);
  TC_CHECK_EQ_INT(view_divmod(x.v), 0);
  check_all_points(&x, "unmerge of merge");
  vm_free(&x);

  vm_new(&x, 2, (int64_t[]){24, 5}, NULL, NULL);
  vm_unmerge(&x, 0, 3, (int64_t[]){2, 3, 4}, NULL);
  vm_merge(&x, 2, (int[]){1, 2}, "m"); /* d0.0 m{12} d1 */
  vm_merge(&x, 2, (int[]){0, 1}, "mm");
  TC_CHECK_EQ_INT(view_divmod(x.v), 0);
  check_all_points(&x, "merge of unmerge");
  vm_free(&x);

  vm_new(&x, 1, (int64_t[]){48}, NULL, NULL);
  vm_embed(&x, 0, 3, (int64_t[]){3, 4, 4}, (int64_t[]){4, 1, 12}, NULL); /* q r p */
  vm_merge(&x, 3, (int[]){2, 0, 1}, "m");                                 /* p q r */
  TC_CHECK_EQ_INT(view_divmod(x.v), 0);
  check_all_points(&x, "embed 1, l0, l0*l1 merged");
  vm_free(&x);

  vm_new(&x, 3, (int64_t[]){2, 3, 4}, (int64_t[]){12, 4, 1}, NULL);
  vm_merge(&x, 3, (int[]){0, 1, 2}, "m");
  TC_CHECK_EQ_INT(view_divmod(x.v), 0);
  check_all_points(&x, "row-major");
  vm_free(&x);

  vm_new(&x, 3, (int64_t[]){2, 3, 4}, (int64_t[]){1, 2, 6}, NULL);
  vm_merge(&x, 3, (int[]){2, 1, 0}, "m");
  TC_CHECK_EQ_INT(view_divmod(x.v), 0);
  check_all_points(&x, "column-major merged in reverse");
  vm_free(&x);

  /* (n, ho, wo) of a 1x1 conv in NCHW: (ho, wo) contiguous, n apart: one
   * division, no modulo */
  vm_new(&x, 4, (int64_t[]){2, 3, 4, 5}, NULL, NULL);
  vm_merge(&x, 3, (int[]){0, 2, 3}, "gemmN");
  TC_CHECK_EQ_INT(view_divmod(x.v), 1);
  check_all_points(&x, "n, h, w");
  vm_free(&x);

  /* out of order: the digits stay (regrouping by quotients would need a
   * negative coefficient and blur the offset's range); the range is exact */
  vm_new(&x, 3, (int64_t[]){2, 3, 4}, NULL, NULL);
  vm_merge(&x, 3, (int[]){0, 2, 1}, "m");
  TC_CHECK_EQ_INT(view_divmod(x.v), 4); /* m / 12, m / 3 % 4, m % 3 */
  vindex ix;
  vindex_build(&ix, x.v);
  TC_CHECK(ix.off->lo == 0 && ix.off->hi == 23, "offset range [%lld, %lld]", (long long)ix.off->lo,
           (long long)ix.off->hi);
  vindex_free(&ix);
  check_all_points(&x, "out of order");
  vm_free(&x);
  /* in order with a gap: regrouped, and the range stays exact */
  vm_new(&x, 3, (int64_t[]){2, 3, 4}, (int64_t[]){15, 5, 1}, NULL); /* rows of 4 in 5 */
  vm_merge(&x, 3, (int[]){0, 1, 2}, "m");
  TC_CHECK_EQ_INT(view_divmod(x.v), 1); /* m + (m / 4) */
  vindex_build(&ix, x.v);
  TC_CHECK(ix.off->lo == 0 && ix.off->hi == 15 + 10 + 3, "offset range [%lld, %lld]", (long long)ix.off->lo,
           (long long)ix.off->hi);
  vindex_free(&ix);
  check_all_points(&x, "gapped rows");
  vm_free(&x);
}

/* Upper coordinates that can leave their extents (a GEMM edge tile) are
 * invalid there. */
static void test_out_of_range_upper(void) {
  tc_view *v = tc_view_new(2, (int64_t[]){4, 6}, NULL, NULL);
  TC_REQUIRE(v, "view");
  TC_CHECK(tc_view_merge(v, 2, (int[]){0, 1}, "m") == 0, "%s", v->err);
  TC_CHECK(tc_view_unmerge(v, 0, 2, (int64_t[]){3, 8}, NULL) == 0, "%s", v->err);
  tc_epool *p = tc_epool_new();
  const tc_expr *t = tc_e_var(p, "t", 0, 1), *i = tc_e_var(p, "i", 0, 3);
  const tc_expr *q = tc_e_var(p, "q", -1, 9);
  const tc_expr *u[2] = {tc_e_add(p, tc_e_mulc(p, t, 4), i), q}; /* 0..7 and -1..9 */
  const tc_expr *off, *val;
  tc_view_index(v, p, u, &off, &val);
  int bad = 0;
  for (int64_t tv = 0; tv <= 1; tv++)
    for (int64_t iv = 0; iv <= 3; iv++)
      for (int64_t qv = -1; qv <= 9; qv++) {
        int64_t vars[3] = {tv, iv, qv}, a = tv * 4 + iv;
        bool want = a < 3 && qv >= 0 && qv < 8;
        bad += (tc_e_eval(val, vars) != 0) != want;
        if (want) bad += tc_e_eval(off, vars) != a * 8 + qv;
      }
  TC_CHECK(bad == 0, "%d points wrong", bad);
  /* exact ranges: no predicate at all */
  const tc_expr *u2[2] = {tc_e_var(p, "a", 0, 2), tc_e_var(p, "b", 0, 7)};
  tc_view_index(v, p, u2, &off, &val);
  TC_CHECK(tc_e_is_const(val, 1), "in-range coordinates need no predicate");
  tc_epool_free(p);
  tc_view_free(v);
}

static void test_errors(void) {
  tc_view *v = tc_view_new(2, (int64_t[]){4, 6}, NULL, NULL);
  TC_REQUIRE(v, "view");
  int nx = v->g.nxf, na = v->g.naxes;
#define EXPECT_ERR(call, text)                                                       \
  do {                                                                             \
    v->err[0] = 0;                                                                 \
    TC_CHECK((call) == -1, "%s accepted", #call);                                  \
    TC_CHECK(strstr(v->err, text) != NULL, "%s: err \"%s\", wanted \"%s\"", #call, v->err, text); \
    TC_CHECK(v->g.nxf == nx && v->g.naxes == na && v->nupper == 2, "%s changed the view", #call); \
  } while (0)
  EXPECT_ERR(tc_view_pad(v, 2, 1, 1), "no upper dimension 2");
  EXPECT_ERR(tc_view_pad(v, 0, -1, 1), "non-negative");
  EXPECT_ERR(tc_view_slice(v, 1, 3, 3), "not a non-empty range");
  EXPECT_ERR(tc_view_slice(v, 1, 0, 7), "inside [0, 6)");
  EXPECT_ERR(tc_view_embed(v, 0, 0, (int64_t[]){1}, (int64_t[]){1}, NULL), "do not fit");
  EXPECT_ERR(tc_view_embed(v, 0, 1, (int64_t[]){0}, (int64_t[]){1}, NULL), "extent 0 must lie");
  EXPECT_ERR(tc_view_embed(v, 0, 1, NULL, NULL, NULL), "required");
  EXPECT_ERR(tc_view_merge(v, 2, (int[]){1, 1}, "m"), "appears twice");
  EXPECT_ERR(tc_view_merge(v, 2, (int[]){0, 5}, "m"), "no upper dimension 5");
  EXPECT_ERR(tc_view_merge(v, 3, (int[]){0, 1, 0}, "m"), "needs 1 to 2");
  EXPECT_ERR(tc_view_unmerge(v, 1, 2, (int64_t[]){4, 2}, NULL), "do not multiply to the dimension's extent 6");
  EXPECT_ERR(tc_view_unmerge(v, 1, 2, (int64_t[]){0, 2}, NULL), "at least 1");
  EXPECT_ERR(tc_view_broadcast(v, 0, 0), "at least 1");
  EXPECT_ERR(tc_view_add_dim(v, 3, 2, "x"), "position 3 outside 0..2");
  EXPECT_ERR(tc_view_add_dim(v, 0, 0, "x"), "at least 1");
  EXPECT_ERR(tc_view_const_dim(v, 0, 4), "outside the dimension's range [0, 4)");
  EXPECT_ERR(tc_view_const_dim(v, 0, -1), "outside");
  EXPECT_ERR(tc_view_reorder(v, (int[]){0, 0}), "not a permutation");
  EXPECT_ERR(tc_view_reorder(v, (int[]){0, 2}), "not a permutation");
  EXPECT_ERR(tc_view_rename(v, 9, "q"), "no upper dimension 9");
  /* a merge whose extent overflows is rolled back */
  tc_view *big = tc_view_new(3, (int64_t[]){(int64_t)1 << 40, (int64_t)1 << 40, 2}, NULL, NULL);
  TC_REQUIRE(big, "big view");
  int bx = big->g.nxf;
  TC_CHECK(tc_view_merge(big, 3, (int[]){2, 0, 1}, "m") == -1, "overflowing merge accepted");
  TC_CHECK(strstr(big->err, "overflows") != NULL, "err: %s", big->err);
  TC_CHECK(big->g.nxf == bx && big->nupper == 3, "overflowing merge changed the view");
  tc_view_free(big);
  /* too many dims */
  tc_view *w = tc_view_new(TC_VIEW_MAX_DIMS, (int64_t[TC_VIEW_MAX_DIMS]){1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2}, NULL, NULL);
  TC_REQUIRE(w, "16-dim view");
  TC_CHECK(tc_view_add_dim(w, 0, 2, "x") == -1, "17th dim accepted");
  TC_CHECK(strstr(w->err, "the most allowed") != NULL, "err: %s", w->err);
  TC_CHECK(tc_view_unmerge(w, 15, 2, (int64_t[]){1, 2}, NULL) == -1, "17 dims by unmerge accepted");
  TC_CHECK(strstr(w->err, "do not fit") != NULL, "err: %s", w->err);
  tc_view_free(w);
#undef EXPECT_ERR
  tc_view_free(v);
}

/* Extreme extents and coefficients: nothing may overflow (UBSan). */
static void test_big_values(void) {
  const int64_t B = (int64_t)1 << 40;
  tc_view *v = tc_view_new(2, (int64_t[]){B, B}, NULL, NULL);
  TC_REQUIRE(v, "view");
  TC_CHECK(tc_view_embed(v, 1, 3, (int64_t[]){B, B, 2}, (int64_t[]){B, -B, 1}, NULL) == 0, "%s", v->err);
  TC_CHECK(tc_view_pad(v, 0, B, B) == 0, "%s", v->err);
  TC_CHECK(tc_dg_is_padded(&v->g, v->upper[1]), "huge embed is padded");
  for (int d = 0; d < v->nupper; d++) {
    int w = tc_view_vector_width(v, d, 1, 16);
    TC_CHECK(w >= 1 && w <= 16, "width %d", w);
  }
  tc_epool *p = tc_epool_new();
  const tc_expr *u[4];
  for (int d = 0; d < v->nupper; d++) u[d] = tc_e_var(p, "u", 0, tc_view_extent(v, d) - 1);
  const tc_expr *off, *val;
  tc_view_index(v, p, u, &off, &val);
  int64_t pt[4] = {B + 3, 5, 7, 1};
  int64_t want_off = 3 * B + (5 * B - 7 * B + 1);
  TC_CHECK(tc_e_eval(val, pt) == 0, "negative embed value is invalid");
  int64_t pt2[4] = {B + 3, 5, 5, 1};
  want_off = 3 * B + 1;
  TC_CHECK(tc_e_eval(val, pt2) == 1 && tc_e_eval(off, pt2) == want_off, "huge offset");
  tc_epool_free(p);
  /* merging huge extents overflows and is refused; the merge chain of
   * three 2^20 dims is fine */
  tc_view *m = tc_view_new(3, (int64_t[]){1 << 20, 1 << 20, 1 << 20}, NULL, NULL);
  TC_REQUIRE(m, "view");
  TC_CHECK(tc_view_merge(m, 3, (int[]){0, 1, 2}, "all") == 0, "%s", m->err);
  TC_CHECK_EQ_INT(tc_view_vector_width(m, 0, 4, 16), 4);
  TC_CHECK(tc_view_unmerge(m, 0, 2, (int64_t[]){(int64_t)1 << 30, (int64_t)1 << 30}, NULL) == 0, "%s", m->err);
  TC_CHECK_EQ_INT(tc_view_vector_width(m, 1, 4, 16), 4);
  tc_view_free(m);
  tc_view_free(v);
}

static void test_describe(void) {
  vm x;
  vm_new(&x, 2, (int64_t[]){4, 6}, NULL, (const char *[]){"h", "w"});
  vm_pad(&x, 1, 1, 1);
  vm_embed(&x, 1, 2, (int64_t[]){3, 6}, (int64_t[]){1, 1}, (const char *[]){"x", "wo"});
  vm_merge(&x, 2, (int[]){0, 2}, "gn");
  vm_slice(&x, 0, 0, 20);
  vm_const(&x, 1, 1);
  vm_add(&x, 0, 2, "b");
  vm_bcast(&x, 0, 4);
  tc_str s;
  tc_str_init(&s);
  tc_view_describe(x.v, &s);
  const char *t = tc_str_cstr(&s);
  const char *want[] = {"memory: a0{4}*6 a1{6}*1", "pad a1{6} -> a2{8} left 1 right 1",
                        "embed a2{8} -> a3{3} a4{6} coefficients 1 1", "merge a0{4} a4{6} -> a5{24}",
                        "slice a5{24} -> a6{20} [0, 20)", "const_dim a3{3} -> = 1", "add_dim -> a7{2}",
                        "broadcast a7{2} -> a8{4}", "view: b=a8{4} gn=a6{20}"};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++)
    TC_CHECK(strstr(t, want[i]) != NULL, "describe lacks \"%s\":\n%s", want[i], t);
  tc_str_free(&s);
  check_all_points(&x, "describe stack");
  /* the axis graph side: history and replay of a view's transforms */
  int hist[64];
  int nh = tc_dg_history(&x.v->g, x.v->lower, x.v->nlower, x.v->upper, x.v->nupper, hist);
  TC_CHECK(nh >= 5, "history of the view has %d transforms", nh);
  char buf[32];
  TC_CHECK_STR(tc_axis_describe(&x.v->g, x.v->upper[0], buf, sizeof buf), "iS{4}");
  vm_free(&x);
}

/* history + replay of the view kinds on a second root domain */
static void test_replay_view_kinds(void) {
  tc_view *v = tc_view_new(2, (int64_t[]){5, 6}, NULL, NULL);
  TC_REQUIRE(v, "view");
  TC_CHECK(tc_view_pad(v, 1, 1, 2) == 0, "%s", v->err);
  TC_CHECK(tc_view_embed(v, 1, 2, (int64_t[]){2, 8}, (int64_t[]){-1, 1}, NULL) == 0, "%s", v->err);
  TC_CHECK(tc_view_add_dim(v, 0, 3, "z") == 0, "%s", v->err);
  TC_CHECK(tc_view_broadcast(v, 0, 6) == 0, "%s", v->err);
  TC_CHECK(tc_view_const_dim(v, 2, 1) == 0, "%s", v->err);
  tc_dgraph *g = &v->g;
  int hist[64];
  int nh = tc_dg_history(g, v->lower, v->nlower, v->upper, v->nupper, hist);
  /* pad, embed, add_dim, broadcast (const_dim makes nothing wanted) */
  TC_CHECK_EQ_INT(nh, 4);
  int r0 = tc_dg_root(g, 5, 0), r1 = tc_dg_root(g, 6, 1);
  int *map = tc_xmalloc((size_t)g->naxes * sizeof(int));
  for (int a = 0; a < g->naxes; a++) map[a] = -1;
  map[v->lower[0]] = r0, map[v->lower[1]] = r1;
  TC_STR_LOCAL(err);
  int nxf = g->nxf;
  TC_CHECK(tc_dg_replay(g, hist, nh, &map, &err) == 0, "replay: %s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(g->nxf, nxf + 4);
  for (int i = 0; i < v->nupper; i++) {
    int a = v->upper[i], b = map[a];
    TC_REQUIRE(b >= 0, "upper %d has no counterpart", i);
    TC_CHECK_EQ_INT(g->axes[b].extent, g->axes[a].extent);
    TC_CHECK(g->axes[b].sig == g->axes[a].sig, "signature of upper %d", i);
  }
  /* the replayed embed keeps its coefficients */
  const tc_xform *e = &g->xf[g->axes[map[v->upper[2]]].def];
  TC_CHECK(e->kind == TC_XF_EMBED && e->coeff[0] == -1 && e->coeff[1] == 1, "replayed embed");
  /* walk: forward never applies a view kind */
  tc_epool *p = tc_epool_new();
  const tc_expr **vals = tc_xcalloc((size_t)g->naxes, sizeof *vals);
  vals[r0] = tc_e_var(p, "a", 0, 4);
  vals[r1] = tc_e_var(p, "b", 0, 5);
  tc_dg_walk(p, g, vals, NULL);
  TC_CHECK(vals[map[v->upper[0]]] == NULL, "broadcast applied forward");
  TC_CHECK(vals[map[v->upper[2]]] == NULL, "embed applied forward");
  TC_CHECK(vals[g->xf[g->axes[map[v->upper[2]]].def].in[0]] != NULL, "pad forward");
  free(vals);
  tc_epool_free(p);
  free(map);
  tc_view_free(v);
}

/* ------------------------------------------------------------ conv */

typedef struct conv {
  int64_t N, C, H, W, K, Y, X;
  int64_t sh, sw, dh, dw, plh, prh, plw, prw;
  int64_t HO, WO;
} conv;

static void conv_finish(conv *c) {
  c->HO = (c->H + c->plh + c->prh - c->dh * (c->Y - 1) - 1) / c->sh + 1;
  c->WO = (c->W + c->plw + c->prw - c->dw * (c->X - 1) - 1) / c->sw + 1;
}

/* The three forward views of rocMLIR's conv2d lowering; each ends as [gemmK,
 * gemmN], [gemmK, gemmM] and [gemmM, gemmN]. */
static void conv_fwd_views(const conv *c, vm *in, vm *fil, vm *out) {
  vm_new(in, 4, (int64_t[]){c->N, c->C, c->H, c->W}, NULL, (const char *[]){"n", "c", "hi", "wi"});
  vm_pad(in, 2, c->plh, c->prh);
  vm_pad(in, 3, c->plw, c->prw);
  vm_embed(in, 2, 2, (int64_t[]){c->Y, c->HO}, (int64_t[]){c->dh, c->sh}, (const char *[]){"y", "ho"});
  vm_embed(in, 4, 2, (int64_t[]){c->X, c->WO}, (int64_t[]){c->dw, c->sw}, (const char *[]){"x", "wo"});
  /* n c y ho x wo */
  vm_merge(in, 3, (int[]){1, 2, 4}, "gemmK"); /* n gemmK ho wo */
  vm_merge(in, 3, (int[]){0, 2, 3}, "gemmN"); /* gemmN gemmK */
  vm_reorder(in, (int[]){1, 0});

  vm_new(fil, 4, (int64_t[]){c->K, c->C, c->Y, c->X}, NULL, (const char *[]){"k", "c", "y", "x"});
  vm_merge(fil, 3, (int[]){1, 2, 3}, "gemmK"); /* k gemmK */
  vm_reorder(fil, (int[]){1, 0});
  TC_CHECK(tc_view_rename(fil->v, 1, "gemmM") == 0, "rename");

  vm_new(out, 4, (int64_t[]){c->N, c->K, c->HO, c->WO}, NULL, (const char *[]){"n", "k", "ho", "wo"});
  vm_merge(out, 3, (int[]){0, 2, 3}, "gemmN"); /* gemmN k */
  vm_reorder(out, (int[]){1, 0});
  TC_CHECK(tc_view_rename(out->v, 0, "gemmM") == 0, "rename");
}

/* Plain conv index: input element of (gemmK, gemmN). */
static bool conv_in_ref(const conv *c, int64_t gk, int64_t gn, int64_t *off) {
  int64_t ci = gk / (c->Y * c->X), y = gk / c->X % c->Y, x = gk % c->X;
  int64_t n = gn / (c->HO * c->WO), ho = gn / c->WO % c->HO, wo = gn % c->WO;
  int64_t hi = ho * c->sh + y * c->dh - c->plh, wi = wo * c->sw + x * c->dw - c->plw;
  *off = ((n * c->C + ci) * c->H + hi) * c->W + wi;
  return hi >= 0 && hi < c->H && wi >= 0 && wi < c->W;
}

/* Is variable id `var` anywhere in e? */
static bool uses_var(const tc_expr *e, int var) {
  if (!e) return false;
  if (e->op == TC_E_VAR) return e->val == var;
  return uses_var(e->a, var) || uses_var(e->b, var) || uses_var(e->c, var);
}

/* DIV and MOD nodes of e whose operands depend on variable `var` (counting
 * shared subtrees once per use, like tc_e_count_op). */
static int count_divmod_on(const tc_expr *e, int var) {
  if (!e || e->op == TC_E_CONST || e->op == TC_E_VAR) return 0;
  int n = (e->op == TC_E_DIV || e->op == TC_E_MOD) && uses_var(e, var);
  return n + count_divmod_on(e->a, var) + count_divmod_on(e->b, var) + count_divmod_on(e->c, var);
}

static void run_conv_fwd(const conv *c0, const char *what) {
  conv c = *c0;
  conv_finish(&c);
  vm in, fil, out;
  conv_fwd_views(&c, &in, &fil, &out);
  char buf[160];
  snprintf(buf, sizeof buf, "%s input", what);
  check_all_points(&in, buf);
  snprintf(buf, sizeof buf, "%s filter", what);
  check_all_points(&fil, buf);
  snprintf(buf, sizeof buf, "%s output", what);
  check_all_points(&out, buf);
  /* vector widths of every GEMM dim of the three views: legal, and here
   * also maximal */
  const vm *views[3] = {&in, &fil, &out};
  for (int t = 0; t < 3; t++)
    for (int d = 0; d < 2; d++)
      for (int eb = 1; eb <= 4; eb *= 2) {
        int w = tc_view_vector_width(views[t]->v, d, eb, 16);
        int best = brute_max_width(&views[t]->m, d, 16 / eb);
        TC_CHECK(brute_vector_ok(&views[t]->m, d, w), "%s view %d dim %d elem %d: width %d illegal", what, t, d,
                 eb, w);
        TC_CHECK(w == best, "%s view %d dim %d elem %d: width %d, brute force %d", what, t, d, eb, w, best);
      }
  /* the input view against the plain conv formula, point by point */
  vindex ix;
  vindex_build(&ix, in.v);
  int64_t GK = c.C * c.Y * c.X, GN = c.N * c.HO * c.WO;
  TC_CHECK_EQ_INT(tc_view_extent(in.v, 0), GK);
  TC_CHECK_EQ_INT(tc_view_extent(in.v, 1), GN);
  int bad = 0;
  for (int64_t gk = 0; gk < GK; gk++)
    for (int64_t gn = 0; gn < GN; gn++) {
      int64_t ref, u[2] = {gk, gn};
      bool rv = conv_in_ref(&c, gk, gn, &ref);
      bool vv = tc_e_eval(ix.valid, u) != 0;
      if (vv != rv || (rv && tc_e_eval(ix.off, u) != ref)) bad++;
    }
  TC_CHECK(bad == 0, "%s: %d input points differ from the conv formula", what, bad);
  /* the whole convolution as a GEMM over the three views */
  int64_t nin = c.N * c.C * c.H * c.W, nf = c.K * c.C * c.Y * c.X, no = c.N * c.K * c.HO * c.WO;
  double *I = malloc(sizeof(double) * (size_t)nin), *F = malloc(sizeof(double) * (size_t)nf);
  double *O = calloc((size_t)no, sizeof(double)), *R = calloc((size_t)no, sizeof(double));
  for (int64_t i = 0; i < nin; i++) I[i] = (double)rnd(17) - 8;
  for (int64_t i = 0; i < nf; i++) F[i] = (double)rnd(9) - 4;
  for (int64_t n = 0; n < c.N; n++)
    for (int64_t k = 0; k < c.K; k++)
      for (int64_t ho = 0; ho < c.HO; ho++)
        for (int64_t wo = 0; wo < c.WO; wo++) {
          double s = 0;
          for (int64_t ci = 0; ci < c.C; ci++)
            for (int64_t y = 0; y < c.Y; y++)
              for (int64_t x = 0; x < c.X; x++) {
                int64_t hi = ho * c.sh + y * c.dh - c.plh, wi = wo * c.sw + x * c.dw - c.plw;
                if (hi < 0 || hi >= c.H || wi < 0 || wi >= c.W) continue;
                s += I[((n * c.C + ci) * c.H + hi) * c.W + wi] * F[((k * c.C + ci) * c.Y + y) * c.X + x];
              }
          R[((n * c.K + k) * c.HO + ho) * c.WO + wo] = s;
        }
  vindex fx, ox;
  vindex_build(&fx, fil.v);
  vindex_build(&ox, out.v);
  for (int64_t m = 0; m < c.K; m++)
    for (int64_t gn = 0; gn < GN; gn++) {
      double s = 0;
      for (int64_t gk = 0; gk < GK; gk++) {
        int64_t ui[2] = {gk, gn}, uf[2] = {gk, m};
        if (!tc_e_eval(ix.valid, ui) || !tc_e_eval(fx.valid, uf)) continue;
        s += I[tc_e_eval(ix.off, ui)] * F[tc_e_eval(fx.off, uf)];
      }
      int64_t uo[2] = {m, gn};
      TC_CHECK(tc_e_eval(ox.valid, uo) != 0, "output always valid");
      O[tc_e_eval(ox.off, uo)] = s;
    }
  int wrong = 0;
  for (int64_t i = 0; i < no; i++) wrong += O[i] != R[i];
  TC_CHECK(wrong == 0, "%s: GEMM over the views differs from the direct conv at %d of %lld outputs", what,
           wrong, (long long)no);
  free(I), free(F), free(O), free(R);
  vindex_free(&ix), vindex_free(&fx), vindex_free(&ox);
  vm_free(&in), vm_free(&fil), vm_free(&out);
}

static void test_conv_fwd(void) {
  conv cs[] = {
      /* N C H W K Y X  sh sw dh dw  plh prh plw prw */
      {2, 3, 5, 5, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 2, 7, 6, 3, 3, 2, 2, 1, 1, 2, 1, 0, 2, 1}, /* stride, dilation, asymmetric pad */
      {2, 2, 6, 7, 2, 2, 3, 2, 3, 2, 1, 0, 2, 3, 0},
      {1, 4, 4, 4, 2, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, /* 1x1 */
      {2, 3, 5, 4, 2, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0}, /* 1x1 stride 2 */
      {1, 2, 3, 3, 2, 3, 3, 1, 1, 1, 1, 2, 2, 2, 2}, /* padding larger than needed */
  };
  for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
    char what[32];
    snprintf(what, sizeof what, "conv fwd #%zu", i);
    run_conv_fwd(&cs[i], what);
  }
}

/* Backward data, stride 1 and dilation 1, in the CK/rocMLIR v4r1 form:
 * dout [N, K, HO, WO] seen through embed(HO -> (ydot: Y, htilda: HO+Y-1),
 * coefficients (-1, 1)), the same for W, slice htilda to [plh, plh+H) and
 * wtilda to [plw, plw+W), merge gemmK = {k, ydot, xdot}, gemmN = {n, htilda,
 * wtilda}; filter: gemmK = {k, y, x}, gemmM = c; din: gemmM = c, gemmN =
 * {n, h, w}.  din = filter^T x dout over the views must equal the direct
 * transposed convolution. */
static void run_conv_bwd_data(const conv *c0, const char *what) {
  conv c = *c0;
  conv_finish(&c);
  int64_t HT = c.HO + c.Y - 1, WT = c.WO + c.X - 1;
  vm dout, fil, din;
  vm_new(&dout, 4, (int64_t[]){c.N, c.K, c.HO, c.WO}, NULL, (const char *[]){"n", "k", "ho", "wo"});
  vm_embed(&dout, 2, 2, (int64_t[]){c.Y, HT}, (int64_t[]){-1, 1}, (const char *[]){"ydot", "htilda"});
  vm_embed(&dout, 4, 2, (int64_t[]){c.X, WT}, (int64_t[]){-1, 1}, (const char *[]){"xdot", "wtilda"});
  vm_slice(&dout, 3, c.plh, c.plh + c.H);
  vm_slice(&dout, 5, c.plw, c.plw + c.W);
  vm_merge(&dout, 3, (int[]){1, 2, 4}, "gemmK"); /* n gemmK htilda wtilda */
  vm_merge(&dout, 3, (int[]){0, 2, 3}, "gemmN");
  vm_reorder(&dout, (int[]){1, 0});
  vm_new(&fil, 4, (int64_t[]){c.K, c.C, c.Y, c.X}, NULL, (const char *[]){"k", "c", "y", "x"});
  vm_merge(&fil, 3, (int[]){0, 2, 3}, "gemmK"); /* gemmK c */
  vm_new(&din, 4, (int64_t[]){c.N, c.C, c.H, c.W}, NULL, (const char *[]){"n", "c", "h", "w"});
  vm_merge(&din, 3, (int[]){0, 2, 3}, "gemmN"); /* gemmN c */
  vm_reorder(&din, (int[]){1, 0});
  char buf[160];
  snprintf(buf, sizeof buf, "%s dout", what);
  check_all_points(&dout, buf);
  snprintf(buf, sizeof buf, "%s din", what);
  check_all_points(&din, buf);
  vindex dx, fx, ix;
  vindex_build(&dx, dout.v);
  vindex_build(&fx, fil.v);
  vindex_build(&ix, din.v);
  if (c.Y > 1 || c.X > 1) /* with a 1x1 filter the embeds stay in range */
    TC_CHECK(!tc_e_is_const(dx.valid, 1), "%s: the negative embed needs a predicate", what);
  else
    TC_CHECK(tc_e_is_const(dx.valid, 1), "%s: 1x1 needs no predicate", what);
  int64_t nd = c.N * c.K * c.HO * c.WO, nf = c.K * c.C * c.Y * c.X, ni = c.N * c.C * c.H * c.W;
  double *D = malloc(sizeof(double) * (size_t)nd), *F = malloc(sizeof(double) * (size_t)nf);
  double *G = calloc((size_t)ni, sizeof(double)), *R = calloc((size_t)ni, sizeof(double));
  for (int64_t i = 0; i < nd; i++) D[i] = (double)rnd(17) - 8;
  for (int64_t i = 0; i < nf; i++) F[i] = (double)rnd(9) - 4;
  for (int64_t n = 0; n < c.N; n++)
    for (int64_t k = 0; k < c.K; k++)
      for (int64_t ho = 0; ho < c.HO; ho++)
        for (int64_t wo = 0; wo < c.WO; wo++)
          for (int64_t ci = 0; ci < c.C; ci++)
            for (int64_t y = 0; y < c.Y; y++)
              for (int64_t x = 0; x < c.X; x++) {
                int64_t hi = ho + y - c.plh, wi = wo + x - c.plw;
                if (hi < 0 || hi >= c.H || wi < 0 || wi >= c.W) continue;
                R[((n * c.C + ci) * c.H + hi) * c.W + wi] +=
                    D[((n * c.K + k) * c.HO + ho) * c.WO + wo] * F[((k * c.C + ci) * c.Y + y) * c.X + x];
              }
  int64_t GK = c.K * c.Y * c.X, GN = c.N * c.H * c.W;
  TC_CHECK_EQ_INT(tc_view_extent(dout.v, 0), GK);
  TC_CHECK_EQ_INT(tc_view_extent(dout.v, 1), GN);
  for (int64_t m = 0; m < c.C; m++)
    for (int64_t gn = 0; gn < GN; gn++) {
      double s = 0;
      for (int64_t gk = 0; gk < GK; gk++) {
        int64_t ud[2] = {gk, gn}, uf[2] = {gk, m};
        if (!tc_e_eval(dx.valid, ud)) continue;
        s += D[tc_e_eval(dx.off, ud)] * F[tc_e_eval(fx.off, uf)];
      }
      int64_t ui[2] = {m, gn};
      G[tc_e_eval(ix.off, ui)] = s;
    }
  int wrong = 0;
  for (int64_t i = 0; i < ni; i++) wrong += G[i] != R[i];
  TC_CHECK(wrong == 0, "%s: backward data over the views differs at %d of %lld", what, wrong, (long long)ni);
  free(D), free(F), free(G), free(R);
  vindex_free(&dx), vindex_free(&fx), vindex_free(&ix);
  vm_free(&dout), vm_free(&fil), vm_free(&din);
}

static int64_t gcd_(int64_t a, int64_t b) { return b ? gcd_(b, a % b) : a; }
static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Backward data with any stride and dilation, the CK/rocMLIR v4r1
 * decomposition: one GEMM per (iYTilda, iXTilda); dout through
 * embed(HO -> (ydot, htilda), (-dh/gcd(sh,dh), 1)), the filter through
 * embed(Y -> (ydot, ytilda), (sh/gcd, 1)) with ytilda fixed by const_dim,
 * din through pad + embed(Hip -> (ytilda, htilda), (dh, sh)) with ytilda
 * fixed; htilda sliced to [iHTildaLeft, iHTildaRight). */
static void run_conv_bwd_data_general(const conv *c0, const char *what) {
  conv c = *c0;
  conv_finish(&c);
  int64_t gh = gcd_(c.sh, c.dh), gw = gcd_(c.sw, c.dw);
  int64_t YT = c.sh / gh, XT = c.sw / gw, YD = cdiv(c.Y, YT), XD = cdiv(c.X, XT);
  int64_t HT = c.HO + cdiv(c.dh * (c.Y - 1), c.sh), WT = c.WO + cdiv(c.dw * (c.X - 1), c.sw);
  int64_t lh = c.plh - c.dh * (YT - 1), lw = c.plw - c.dw * (XT - 1);
  int64_t HL = (lh > 0 ? lh : 0) / c.sh, WL = (lw > 0 ? lw : 0) / c.sw;
  int64_t HR = cdiv(c.plh + c.H - 1, c.sh) + 1, WR = cdiv(c.plw + c.W - 1, c.sw) + 1;
  if (HR > HT) HR = HT;
  if (WR > WT) WR = WT;
  int64_t nd = c.N * c.K * c.HO * c.WO, nf = c.K * c.C * c.Y * c.X, ni = c.N * c.C * c.H * c.W;
  double *D = malloc(sizeof(double) * (size_t)nd), *F = malloc(sizeof(double) * (size_t)nf);
  double *G = calloc((size_t)ni, sizeof(double)), *R = calloc((size_t)ni, sizeof(double));
  int *hits = calloc((size_t)ni, sizeof(int));
  for (int64_t i = 0; i < nd; i++) D[i] = (double)rnd(17) - 8;
  for (int64_t i = 0; i < nf; i++) F[i] = (double)rnd(9) - 4;
  for (int64_t n = 0; n < c.N; n++)
    for (int64_t k = 0; k < c.K; k++)
      for (int64_t ho = 0; ho < c.HO; ho++)
        for (int64_t wo = 0; wo < c.WO; wo++)
          for (int64_t ci = 0; ci < c.C; ci++)
            for (int64_t y = 0; y < c.Y; y++)
              for (int64_t x = 0; x < c.X; x++) {
                int64_t hi = ho * c.sh + y * c.dh - c.plh, wi = wo * c.sw + x * c.dw - c.plw;
                if (hi < 0 || hi >= c.H || wi < 0 || wi >= c.W) continue;
                R[((n * c.C + ci) * c.H + hi) * c.W + wi] +=
                    D[((n * c.K + k) * c.HO + ho) * c.WO + wo] * F[((k * c.C + ci) * c.Y + y) * c.X + x];
              }
  int gemms = 0;
  for (int64_t iy = 0; iy < YT; iy++)
    for (int64_t ix = 0; ix < XT; ix++) {
      int64_t YDS = cdiv(c.Y - iy, YT), XDS = cdiv(c.X - ix, XT);
      if (YDS < 1 || XDS < 1 || HR <= HL || WR <= WL) continue;
      gemms++;
      vm dout, fil, din;
      vm_new(&dout, 4, (int64_t[]){c.N, c.K, c.HO, c.WO}, NULL, (const char *[]){"n", "k", "ho", "wo"});
      vm_embed(&dout, 2, 2, (int64_t[]){YD, HT}, (int64_t[]){-c.dh / gh, 1}, (const char *[]){"ydot", "htilda"});
      vm_embed(&dout, 4, 2, (int64_t[]){XD, WT}, (int64_t[]){-c.dw / gw, 1}, (const char *[]){"xdot", "wtilda"});
      vm_slice(&dout, 2, 0, YDS);
      vm_slice(&dout, 3, HL, HR);
      vm_slice(&dout, 4, 0, XDS);
      vm_slice(&dout, 5, WL, WR);
      vm_merge(&dout, 3, (int[]){1, 2, 4}, "gemmK");
      vm_merge(&dout, 3, (int[]){0, 2, 3}, "gemmN");
      vm_reorder(&dout, (int[]){1, 0});

      vm_new(&fil, 4, (int64_t[]){c.K, c.C, c.Y, c.X}, NULL, (const char *[]){"k", "c", "y", "x"});
      vm_embed(&fil, 2, 2, (int64_t[]){YD, YT}, (int64_t[]){c.sh / gh, 1}, (const char *[]){"ydot", "ytilda"});
      vm_embed(&fil, 4, 2, (int64_t[]){XD, XT}, (int64_t[]){c.sw / gw, 1}, (const char *[]){"xdot", "xtilda"});
      vm_const(&fil, 3, iy); /* k c ydot xdot xtilda */
      vm_const(&fil, 4, ix); /* k c ydot xdot */
      vm_slice(&fil, 2, 0, YDS);
      vm_slice(&fil, 3, 0, XDS);
      vm_merge(&fil, 3, (int[]){0, 2, 3}, "gemmK"); /* gemmK c */

      vm_new(&din, 4, (int64_t[]){c.N, c.C, c.H, c.W}, NULL, (const char *[]){"n", "c", "h", "w"});
      vm_pad(&din, 2, c.plh, c.prh);
      vm_pad(&din, 3, c.plw, c.prw);
      vm_embed(&din, 2, 2, (int64_t[]){YT, HT}, (int64_t[]){c.dh, c.sh}, (const char *[]){"ytilda", "htilda"});
      vm_embed(&din, 4, 2, (int64_t[]){XT, WT}, (int64_t[]){c.dw, c.sw}, (const char *[]){"xtilda", "wtilda"});
      vm_const(&din, 2, iy); /* n c htilda xtilda wtilda */
      vm_const(&din, 3, ix); /* n c htilda wtilda */
      vm_slice(&din, 2, HL, HR);
      vm_slice(&din, 3, WL, WR);
      vm_merge(&din, 3, (int[]){0, 2, 3}, "gemmN"); /* gemmN c */
      vm_reorder(&din, (int[]){1, 0});

      char buf[160];
      snprintf(buf, sizeof buf, "%s (%lld,%lld) dout", what, (long long)iy, (long long)ix);
      check_all_points(&dout, buf);
      snprintf(buf, sizeof buf, "%s (%lld,%lld) filter", what, (long long)iy, (long long)ix);
      check_all_points(&fil, buf);
      snprintf(buf, sizeof buf, "%s (%lld,%lld) din", what, (long long)iy, (long long)ix);
      check_all_points(&din, buf);
      vindex dx, fx, ix_;
      vindex_build(&dx, dout.v);
      vindex_build(&fx, fil.v);
      vindex_build(&ix_, din.v);
      int64_t GK = tc_view_extent(dout.v, 0), GN = tc_view_extent(dout.v, 1);
      TC_CHECK_EQ_INT(tc_view_extent(fil.v, 0), GK);
      TC_CHECK_EQ_INT(tc_view_extent(din.v, 1), GN);
      for (int64_t m = 0; m < c.C; m++)
        for (int64_t gn = 0; gn < GN; gn++) {
          int64_t ui[2] = {m, gn};
          if (!tc_e_eval(ix_.valid, ui)) continue;
          double s = 0;
          for (int64_t gk = 0; gk < GK; gk++) {
            int64_t ud[2] = {gk, gn}, uf[2] = {gk, m};
            if (!tc_e_eval(dx.valid, ud) || !tc_e_eval(fx.valid, uf)) continue;
            s += D[tc_e_eval(dx.off, ud)] * F[tc_e_eval(fx.off, uf)];
          }
          int64_t o = tc_e_eval(ix_.off, ui);
          G[o] += s;
          hits[o]++;
        }
      vindex_free(&dx), vindex_free(&fx), vindex_free(&ix_);
      vm_free(&dout), vm_free(&fil), vm_free(&din);
    }
  int wrong = 0, twice = 0;
  for (int64_t i = 0; i < ni; i++) {
    wrong += G[i] != R[i];
    twice += hits[i] > 1;
  }
  TC_CHECK(gemms > 0, "%s: no GEMM", what);
  TC_CHECK(twice == 0, "%s: %d din elements written by two GEMMs", what, twice);
  TC_CHECK(wrong == 0, "%s: backward data over %d GEMMs differs at %d of %lld", what, gemms, wrong, (long long)ni);
  free(D), free(F), free(G), free(R), free(hits);
}

static void test_conv_bwd_data(void) {
  conv cs[] = {
      {2, 3, 5, 5, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 2, 6, 5, 3, 3, 2, 1, 1, 1, 1, 2, 0, 0, 1}, /* asymmetric */
      {2, 2, 4, 4, 2, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
  };
  for (size_t i = 0; i < sizeof cs / sizeof *cs; i++) {
    char what[32];
    snprintf(what, sizeof what, "conv bwd-data #%zu", i);
    run_conv_bwd_data(&cs[i], what);
  }
  conv gs[] = {
      /* N C H W K Y X  sh sw dh dw  plh prh plw prw */
      {1, 2, 7, 6, 2, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0},
      {2, 2, 8, 7, 2, 3, 2, 2, 3, 2, 1, 2, 1, 0, 1},
      {1, 3, 9, 9, 2, 2, 3, 3, 2, 2, 2, 0, 2, 1, 1},
      {1, 2, 6, 6, 3, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2},
      {1, 2, 5, 5, 2, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0},
  };
  for (size_t i = 0; i < sizeof gs / sizeof *gs; i++) {
    char what[48];
    snprintf(what, sizeof what, "conv bwd-data v4r1 #%zu", i);
    run_conv_bwd_data_general(&gs[i], what);
  }
}

/* Merge collapse, measured.  Method: the GEMM operands' index expressions
 * are built over two variables, k (gemmK, range [0, K)) and the other GEMM
 * coordinate (n or m, range its extent), kept symbolic; the count is the
 * number of DIV and MOD nodes of the simplified expression whose operand
 * depends on k (count_divmod_on: per use, like tc_e_count_op; the n/m-only
 * div/mod are loop-invariant in the K loop and not counted).  The totals
 * with tc_e_count_op are printed too. */
static int conv_divmod(const conv *c0, int which, int *total, int *pred_k, bool print) {
  conv c = *c0;
  conv_finish(&c);
  vm in, fil, out;
  conv_fwd_views(&c, &in, &fil, &out);
  const tc_view *v = which == 0 ? in.v : fil.v;
  tc_epool *p = tc_epool_new();
  const tc_expr *k = tc_e_var(p, "k", 0, tc_view_extent(v, 0) - 1);
  const tc_expr *o = tc_e_var(p, which == 0 ? "n" : "m", 0, tc_view_extent(v, 1) - 1);
  const tc_expr *u[2] = {k, o}, *off, *val;
  tc_view_index(v, p, u, &off, &val);
  int n = count_divmod_on(off, (int)k->val);
  *total = tc_e_count_op(off, TC_E_DIV) + tc_e_count_op(off, TC_E_MOD);
  *pred_k = count_divmod_on(val, (int)k->val);
  if (print) {
    tc_str s;
    tc_str_init(&s);
    tc_e_print_c(&s, p, off);
    printf("    %s offset: %s\n", which == 0 ? "input " : "filter", tc_str_cstr(&s));
    tc_str_clear(&s);
    tc_e_print_c(&s, p, val);
    printf("    %s valid:  %s\n", which == 0 ? "input " : "filter", tc_str_cstr(&s));
    tc_str_free(&s);
  }
  tc_epool_free(p);
  vm_free(&in), vm_free(&fil), vm_free(&out);
  return n;
}

static void test_conv_divmod_counts(void) {
  conv c1 = {2, 8, 7, 7, 4, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0};
  conv c3 = {2, 8, 7, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
  int tot, pk;
  int i1 = conv_divmod(&c1, 0, &tot, &pk, true);
  printf("  1x1 stride 1: input  div/mod on k: %d (total %d, predicate on k %d)\n", i1, tot, pk);
  TC_CHECK_EQ_INT(i1, 0);
  TC_CHECK_EQ_INT(pk, 0);
  int f1 = conv_divmod(&c1, 1, &tot, &pk, true);
  printf("  1x1 stride 1: filter div/mod on k: %d (total %d)\n", f1, tot);
  TC_CHECK_EQ_INT(f1, 0);
  TC_CHECK_EQ_INT(tot, 0);
  int i3 = conv_divmod(&c3, 0, &tot, &pk, true);
  printf("  3x3 pad 1:    input  div/mod on k: %d (total %d, predicate on k %d)\n", i3, tot, pk);
  int f3 = conv_divmod(&c3, 1, &tot, &pk, true);
  printf("  3x3 pad 1:    filter div/mod on k: %d (total %d)\n", f3, tot);
  /* c = k / 9, y = k / 3 % 3, x = k % 3 for the input; the filter's
   * {c, y, x} is contiguous in KCYX: no div/mod at all */
  TC_CHECK(i3 <= 3, "3x3 input: %d div/mod on k", i3);
  TC_CHECK_EQ_INT(f3, 0);
}

/* ------------------------------------------------------------ vectors */

static void test_vector_pr772(void) {
  /* rocMLIR PR #772: a width-4 row padded to 6 on the right (and also
   * 1 + 4 + 1) under a 2-wide filter: wpad = x + wo, x in [0, 2), wo in
   * [0, 5).  At x = 1 a 2-vector along wo starting at wo = 2 would read
   * (I[3], I[4]) with I[4] in the next row.  Reading along wo, the merged
   * (h, wo) or (h, wpad) must not give a vector that straddles two rows or
   * mixes padding and data: the width must equal the brute-force maximum
   * (which is 1 or 2 here). */
  for (int variant = 0; variant < 8; variant++) {
    vm x;
    vm_new(&x, 2, (int64_t[]){2, 4}, NULL, (const char *[]){"h", "w"});
    if (variant < 4) vm_pad(&x, 1, 1, 1); /* h wpad{6} */
    else vm_pad(&x, 1, 0, 2);
    int dim = 0;
    if (variant % 4 == 0) { /* vector along the padded row itself */
      dim = 1;
    } else if (variant % 4 == 1) { /* (h, wpad) merged: rows of 6 */
      vm_merge(&x, 2, (int[]){0, 1}, "hw");
      dim = 0;
    } else {
      vm_embed(&x, 1, 2, (int64_t[]){2, 5}, (int64_t[]){1, 1}, (const char *[]){"x", "wo"});
      if (variant % 4 == 2) { /* h x wo: vector along wo */
        dim = 2;
      } else { /* gemmN = (h, wo) merged, gemmK = x */
        vm_merge(&x, 2, (int[]){0, 2}, "gemmN");
        dim = 0;
      }
    }
    for (int eb = 1; eb <= 4; eb *= 2) {
      int cap = 16 / eb;
      int w = tc_view_vector_width(x.v, dim, eb, 16);
      int best = brute_max_width(&x.m, dim, cap);
      TC_CHECK(brute_vector_ok(&x.m, dim, w), "PR772 variant %d elem %d: width %d is illegal", variant, eb, w);
      TC_CHECK(w <= 2, "PR772 variant %d: width %d", variant, w);
      TC_CHECK(w == best, "PR772 variant %d elem %d: width %d, brute force best %d", variant, eb, w, best);
    }
    if (variant == 7) { /* the PR's case: gemmN = (h, wo), x the filter tap */
      TC_CHECK(!brute_vector_ok(&x.m, 0, 2), "2-vectors along gemmN should be illegal");
      TC_CHECK_EQ_INT(tc_view_vector_width(x.v, 0, 4, 16), 1);
    }
    check_all_points(&x, "pr772");
    vm_free(&x);
  }
}

static void test_vector_simple(void) {
  vm x;
  vm_new(&x, 2, (int64_t[]){8, 16}, NULL, NULL);
  TC_CHECK_EQ_INT(tc_view_vector_width(x.v, 1, 4, 16), 4);
  TC_CHECK_EQ_INT(tc_view_vector_width(x.v, 1, 2, 16), 8);
  TC_CHECK_EQ_INT(tc_view_vector_width(x.v, 1, 1, 16), 16);
  TC_CHECK_EQ_INT(tc_view_vector_width(x.v, 1, 8, 16), 2);
  TC_CHECK_EQ_INT(tc_view_vector_width(x.v, 1, 4, 8), 2);
  TC_CHECK_EQ_INT(tc_view_vector_width(x.v, 0, 4, 16), 1); /* stride 16 */
  TC_CHECK_EQ_INT(tc_view_vector_width(x.v, 1, 32, 16), 1);
  /* merged rows are contiguous: [8*16] */
  vm_merge(&x, 2, (int[]){0, 1}, "all");
  TC_CHECK_EQ_INT(tc_view_vector_width(x.v, 0, 4, 16), 4);
  TC_CHECK_EQ_INT(tc_view_vector_width(x.v, 0, 1, 16), 16);
  vm_unmerge(&x, 0, 3, (int64_t[]){4, 16, 2}, NULL);
  TC_CHECK_EQ_INT(tc_view_vector_width(x.v, 2, 4, 16), 2);
  TC_CHECK_EQ_INT(tc_view_vector_width(x.v, 1, 4, 16), 1);
  vm_free(&x);
  /* a row of 6: at most 2 (6 % 4 != 0); stride-10 rows: alignment 2 */
  vm_new(&x, 2, (int64_t[]){4, 6}, NULL, NULL);
  TC_CHECK_EQ_INT(tc_view_vector_width(x.v, 1, 4, 16), 2);
  vm_free(&x);
  vm_new(&x, 2, (int64_t[]){4, 8}, (int64_t[]){10, 1}, NULL);
  TC_CHECK_EQ_INT(tc_view_vector_width(x.v, 1, 4, 16), 2);
  TC_CHECK_EQ_INT(brute_max_width(&x.m, 1, 4), 2);
  vm_free(&x);
  /* transposed: the contiguous dim is the outer one */
  vm_new(&x, 2, (int64_t[]){8, 4}, (int64_t[]){1, 8}, NULL);
  TC_CHECK_EQ_INT(tc_view_vector_width(x.v, 0, 4, 16), 4);
  TC_CHECK_EQ_INT(tc_view_vector_width(x.v, 1, 4, 16), 1);
  vm_free(&x);
  /* pad by 4 on each side of a row of 8 keeps float4 vectors */
  vm_new(&x, 2, (int64_t[]){3, 8}, NULL, NULL);
  vm_pad(&x, 1, 4, 4);
  TC_CHECK_EQ_INT(tc_view_vector_width(x.v, 1, 4, 16), 4);
  TC_CHECK_EQ_INT(brute_max_width(&x.m, 1, 4), 4);
  vm_free(&x);
  /* pad by 2 each side: vectors of 2 only */
  vm_new(&x, 2, (int64_t[]){3, 8}, NULL, NULL);
  vm_pad(&x, 1, 2, 2);
  TC_CHECK_EQ_INT(tc_view_vector_width(x.v, 1, 4, 16), 2);
  TC_CHECK_EQ_INT(brute_max_width(&x.m, 1, 4), 2);
  vm_merge(&x, 2, (int[]){0, 1}, "hw"); /* rows of 12 */
  TC_CHECK_EQ_INT(tc_view_vector_width(x.v, 0, 4, 16), 2);
  TC_CHECK_EQ_INT(brute_max_width(&x.m, 0, 4), 2);
  vm_free(&x);
  /* broadcast dim: never contiguous */
  vm_new(&x, 2, (int64_t[]){1, 8}, NULL, NULL);
  vm_bcast(&x, 0, 8);
  TC_CHECK_EQ_INT(tc_view_vector_width(x.v, 0, 4, 16), 1);
  TC_CHECK_EQ_INT(tc_view_vector_width(x.v, 1, 4, 16), 4);
  vm_free(&x);
  /* the conv input along gemmN for a 1x1 stride-1 conv: rows of H*W = 16 */
  conv c = {2, 3, 4, 4, 2, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0};
  conv_finish(&c);
  vm in, fil, out;
  conv_fwd_views(&c, &in, &fil, &out);
  TC_CHECK_EQ_INT(tc_view_vector_width(in.v, 1, 4, 16), 4);
  TC_CHECK_EQ_INT(tc_view_vector_width(out.v, 1, 4, 16), 4);
  TC_CHECK_EQ_INT(tc_view_vector_width(fil.v, 0, 4, 16), 1); /* C*Y*X = 3 */
  TC_CHECK_EQ_INT(tc_view_vector_width(in.v, 0, 4, 16), 1);
  vm_free(&in), vm_free(&fil), vm_free(&out);
}

/* ------------------------------------------------------------ random */

static int64_t upper_points(const model *m) {
  int64_t p = 1;
  for (int i = 0; i < cur_n(m); i++) p *= m->ext[m->nops][i];
  return p;
}

/* One random transform; returns false when nothing applied. */
static bool random_op(vm *x, int64_t cap) {
  model *m = &x->m;
  int n = cur_n(m);
  int64_t *e = cur_ext(m);
  int64_t pts = upper_points(m);
  int kind = rnd(100);
  int d = rnd(n);
  if (n == 0) kind = 90; /* only add_dim */
  if (kind < 14) { /* pad */
    int64_t l = rnd(4), r = rnd(4);
    if (pts / e[d] * (e[d] + l + r) > cap) return false;
    return vm_pad(x, d, l, r) == 0;
  } else if (kind < 24) { /* slice */
    if (e[d] < 2) return false;
    int64_t b = rnd((int)e[d]), en = b + 1 + rnd((int)(e[d] - b));
    return vm_slice(x, d, b, en) == 0;
  } else if (kind < 40) { /* embed */
    if (n >= TC_VIEW_MAX_DIMS - 3) return false;
    int k = 1 + rnd(3);
    int64_t ext[3], coef[3], prod = 1;
    for (int i = 0; i < k; i++) {
      ext[i] = 1 + rnd(4);
      coef[i] = rnd(7) - 2; /* -2..4 */
      prod *= ext[i];
    }
    if (pts / e[d] * prod > cap) return false;
    return vm_embed(x, d, k, ext, coef, NULL) == 0;
  } else if (kind < 58) { /* merge */
    if (n < 2) return false;
    int k = 2 + rnd(n - 1 < 3 ? n - 1 : 3);
    int dims[TC_VIEW_MAX_DIMS], pool[TC_VIEW_MAX_DIMS];
    for (int i = 0; i < n; i++) pool[i] = i;
    for (int i = 0; i < k; i++) {
      int j = i + rnd(n - i);
      int t = pool[i];
      pool[i] = pool[j], pool[j] = t;
      dims[i] = pool[i];
    }
    if (rnd(2)) /* often in order, like conv merges */
      for (int i = 0; i < k; i++)
        for (int j = i + 1; j < k; j++)
          if (dims[j] < dims[i]) {
            int t = dims[i];
            dims[i] = dims[j], dims[j] = t;
          }
    return vm_merge(x, k, dims, NULL) == 0;
  } else if (kind < 72) { /* unmerge */
    if (n >= TC_VIEW_MAX_DIMS - 3) return false;
    int64_t ex[3], rest = e[d];
    int k = 0;
    while (k < 2 && rest > 1) {
      int64_t divs[64];
      int nd = 0;
      for (int64_t f = 1; f <= rest && nd < 64; f++)
        if (rest % f == 0) divs[nd++] = f;
      ex[k] = divs[rnd(nd)];
      rest /= ex[k++];
    }
    ex[k++] = rest;
    return vm_unmerge(x, d, k, ex, NULL) == 0;
  } else if (kind < 78) { /* broadcast */
    int64_t ne = e[d] == 1 ? 1 + rnd(4) : e[d] * (1 + rnd(2));
    if (pts / e[d] * ne > cap) return false;
    return vm_bcast(x, d, ne) == 0;
  } else if (kind < 84) { /* const_dim */
    if (n < 2) return false;
    return vm_const(x, d, rnd((int)e[d])) == 0;
  } else if (kind < 92) { /* add_dim */
    if (n >= TC_VIEW_MAX_DIMS) return false;
    int64_t ne = 1 + rnd(3);
    if (pts * ne > cap) return false;
    return vm_add(x, rnd(n + 1), ne, NULL) == 0;
  } else { /* reorder */
    int perm[TC_VIEW_MAX_DIMS];
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
      int j = rnd(i + 1), t = perm[i];
      perm[i] = perm[j], perm[j] = t;
    }
    return vm_reorder(x, perm) == 0;
  }
}

static void random_lower(vm *x) {
  int n = 1 + rnd(3);
  int64_t ext[3], strides[3];
  for (int i = 0; i < n; i++) ext[i] = 1 + rnd(6);
  int mode = rnd(3);
  if (mode == 0) {
    vm_new(x, n, ext, NULL, NULL);
    return;
  }
  /* permuted or gapped strides */
  int order[3] = {0, 1, 2};
  if (mode == 1)
    for (int i = n - 1; i > 0; i--) {
      int j = rnd(i + 1), t = order[i];
      order[i] = order[j], order[j] = t;
    }
  int64_t s = 1 + (mode == 2 ? rnd(2) : 0);
  for (int i = n - 1; i >= 0; i--) {
    strides[order[i]] = s;
    s *= ext[order[i]] + (mode == 2 ? rnd(3) : 0);
  }
  vm_new(x, n, ext, strides, NULL);
}

static void test_random_stacks(void) {
  rng_state = 0xC00Dull;
  int stacks = 0, vec_checks = 0, vec_maximal = 0, vec_wide = 0;
  for (int t = 0; t < 400; t++) {
    vm x;
    random_lower(&x);
    int nops = 1 + rnd(6);
    int tries = 0;
    for (int k = 0; k < nops && tries < 40; tries++)
      if (random_op(&x, 1500)) k++;
    char what[48];
    snprintf(what, sizeof what, "random stack %d", t);
    if (check_all_points(&x, what)) {
      vm_free(&x);
      break;
    }
    stacks++;
    /* vector widths: legal always; maximal counted */
    for (int d = 0; d < x.v->nupper; d++) {
      int eb = 1 << rnd(3);
      int w = tc_view_vector_width(x.v, d, eb, 16);
      bool ok = brute_vector_ok(&x.m, d, w);
      TC_CHECK(ok, "%s: width %d along dim %d (elem %d) fails the brute-force check", what, w, d, eb);
      if (!ok) print_view(x.v);
      int best = brute_max_width(&x.m, d, 16 / eb);
      vec_checks++;
      vec_maximal += w == best;
      vec_wide += w > 1;
    }
    vm_free(&x);
  }
  printf("  %d random stacks, %lld points checked; %d vector widths legal, %d maximal, %d wider than 1\n",
         stacks, points_checked, vec_checks, vec_maximal, vec_wide);
}

/* Random stacks built to vectorize: contiguous memory, pads and slices by
 * multiples of small powers of two, merges and unmerges; the analysis must
 * be legal and is expected to be maximal in most cases. */
static void test_random_vector_stacks(void) {
  rng_state = 0xFACEull;
  int checks = 0, maximal = 0, wide = 0;
  for (int t = 0; t < 300; t++) {
    vm x;
    int n = 1 + rnd(3);
    int64_t ext[3];
    for (int i = 0; i < n; i++) ext[i] = (int64_t)1 << rnd(4);
    ext[n - 1] *= 1 + rnd(3);
    vm_new(&x, n, ext, NULL, NULL);
    int nops = rnd(4);
    for (int k = 0, tries = 0; k < nops && tries < 30; tries++) {
      int d = rnd(cur_n(&x.m));
      int64_t e = cur_ext(&x.m)[d], pts = upper_points(&x.m);
      int kind = rnd(5);
      bool done = false;
      if (kind == 0) {
        int64_t l = rnd(3), r = rnd(3); /* separate calls: operand order is unspecified */
        l <<= rnd(3);
        r <<= rnd(3);
        if (pts / e * (e + l + r) <= 2000) done = vm_pad(&x, d, l, r) == 0;
      } else if (kind == 1 && e >= 2) {
        int64_t b = rnd(2);
        b <<= rnd(3);
        if (b < e) done = vm_slice(&x, d, b, e) == 0;
      } else if (kind == 2 && cur_n(&x.m) >= 2) {
        int d2 = rnd(cur_n(&x.m) - 1);
        done = vm_merge(&x, 2, (int[]){d2, d2 + 1}, NULL) == 0;
      } else if (kind == 3 && e % 2 == 0 && cur_n(&x.m) < 8) {
        done = vm_unmerge(&x, d, 2, (int64_t[]){e / 2, 2}, NULL) == 0;
      } else if (kind == 4 && cur_n(&x.m) < 8) {
        int64_t f = 1 + rnd(3);
        if (pts / e * f * e <= 2000) done = vm_embed(&x, d, 2, (int64_t[]){f, e}, (int64_t[]){0, 1}, NULL) == 0;
      }
      k += done;
    }
    char what[48];
    snprintf(what, sizeof what, "vector stack %d", t);
    check_all_points(&x, what);
    for (int d = 0; d < x.v->nupper; d++) {
      int eb = 1 << rnd(3);
      int w = tc_view_vector_width(x.v, d, eb, 16);
      bool ok = brute_vector_ok(&x.m, d, w);
      TC_CHECK(ok, "%s: width %d along dim %d fails the brute-force check", what, w, d);
      if (!ok) print_view(x.v);
      int best = brute_max_width(&x.m, d, 16 / eb);
      checks++;
      maximal += w == best;
      wide += w > 1;
    }
    vm_free(&x);
  }
  printf("  vector stacks: %d widths legal, %d maximal, %d wider than 1\n", checks, maximal, wide);
  TC_CHECK(maximal * 10 >= checks * 9, "only %d of %d widths maximal", maximal, checks);
}

int main(void) {
  rng_state = 1;
  TC_RUN(test_new_and_basics);
  TC_RUN(test_pad_slice);
  TC_RUN(test_embed);
  TC_RUN(test_merge_unmerge);
  TC_RUN(test_broadcast_add_const);
  TC_RUN(test_merge_collapse);
  TC_RUN(test_out_of_range_upper);
  TC_RUN(test_errors);
  TC_RUN(test_big_values);
  TC_RUN(test_describe);
  TC_RUN(test_replay_view_kinds);
  TC_RUN(test_conv_fwd);
  TC_RUN(test_conv_bwd_data);
  TC_RUN(test_conv_divmod_counts);
  TC_RUN(test_vector_pr772);
  TC_RUN(test_vector_simple);
  TC_RUN(test_random_stacks);
  TC_RUN(test_random_vector_stacks);
  TC_MAIN_END();
}
