/* test_layout.c - the axis graph (src/layout/domain.c).
 *
 * The centre piece is a randomized property test: seeded random chains of
 * split / merge / XOR swizzle / CuTe swizzle / resize transforms on small
 * 1-3 dimensional root domains, with a list of current leaf axes kept like a
 * loop domain.  Every chain is checked against an independent plain-C model
 * of the transforms (extents, forward and backward values of every axis,
 * padding) by enumerating every point of the leaf domain and of the root
 * domain and evaluating the simplified expressions that tc_dg_walk builds
 * from variables:
 *   - leaf -> root (backward) is a bijection onto the root domain for
 *     divisible chains, with a predicate that is always true;
 *   - with non-divisible splits and padding resizes, the walk's predicate
 *     is true exactly where the model says every axis stays in range, and
 *     the points it admits hit every root point exactly once;
 *   - with cropping resizes, the admitted points hit exactly the root points
 *     that survive the crops, once each;
 *   - backward(forward(i)) == i for every (surviving) root point;
 *   - tc_dg_history + tc_dg_replay rebuild the same leaves (extents,
 *     signatures, index expressions) on a second root domain.
 * Then fixed cases: XOR swizzle, CuTe Swizzle<B,M,S> against CuTe's
 * definition, the 128-byte bulk-copy swizzle built from transforms, history
 * and replay on a hand-written schedule, and error messages. */
#include "test.h"

#include <stdbool.h>
#include <stdint.h>

#include "layout/domain.h"

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

static bool pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/* CuTe's Swizzle<B,M,S> (S >= 0): yyy_mask = ((1<<B)-1) << (M+S). */
static int64_t cute_ref(int b, int m, int s, int64_t x) {
  int64_t yyy = (((int64_t)1 << b) - 1) << (m + s);
  return x ^ ((x & yyy) >> s);
}

/* ---------------------------------------------------- the chain model */

enum { MAXA = 64, MAXOPS = 8, MAXLEAF = 16, CAP = 4096 };

typedef struct ref_op {
  tc_xform_kind kind;
  int in[2], nin, out[2], nout;
  int64_t factor;
  int inner;
  int64_t l, r;
  int b, m, s;
  int xf; /* the graph's transform index */
} ref_op;

typedef struct chain {
  tc_dgraph g;
  int mode; /* 0 divisible, 1 + non-divisible splits and pads, 2 + crops */
  int nroots, roots[3];
  int64_t ext[MAXA];
  bool padded[MAXA];
  ref_op ops[MAXOPS];
  int nops;
  int leaves[MAXLEAF], nleaves;
  int64_t leaf_points;
  bool nondiv, resized, cropped;
} chain;

typedef struct stats {
  int chains[3];
  int ops[5];
  int nondiv_chains, resize_chains, crop_chains;
  long long leaf_points, root_points, admitted, rejected;
  int const_true_pred_padded; /* padded chains whose pred simplified to 1 */
  int illegal_attempts;
  int replays;
} stats;

static stats st;

static void set_axis(chain *c, int a, int64_t e, bool padded) {
  if (a >= 0 && a < MAXA) c->ext[a] = e, c->padded[a] = padded;
}

static int64_t leaf_product(const chain *c) {
  int64_t p = 1;
  for (int i = 0; i < c->nleaves; i++) p *= c->ext[c->leaves[i]];
  return p;
}

static void leaf_remove(chain *c, int idx) {
  for (int i = idx; i + 1 < c->nleaves; i++) c->leaves[i] = c->leaves[i + 1];
  c->nleaves--;
}

static void leaf_insert(chain *c, int idx, int a) {
  for (int i = c->nleaves; i > idx; i--) c->leaves[i] = c->leaves[i - 1];
  c->leaves[idx] = a;
  c->nleaves++;
}

static void push_op(chain *c, ref_op o) {
  o.xf = c->g.nxf - 1;
  c->ops[c->nops++] = o;
  st.ops[o.kind]++;
}

/* Calls an illegal XOR or CuTe swizzle and checks that it is refused and
 * leaves the graph alone. */
static void try_illegal(chain *c) {
  TC_STR_LOCAL(err);
  int na = c->g.naxes, nx = c->g.nxf, o1 = -1, o2 = -1;
  if (c->nleaves >= 2 && rnd(2)) {
    int i = rnd(c->nleaves), j = rnd(c->nleaves - 1);
    if (j >= i) j++;
    int x = c->leaves[i], y = c->leaves[j];
    if (pow2(c->ext[y]) && c->ext[x] <= c->ext[y]) return;
    TC_CHECK(tc_dg_xor(&c->g, x, y, &o1, &o2, &err) == -1,
             "xor of extents %lld, %lld accepted", (long long)c->ext[x], (long long)c->ext[y]);
    TC_CHECK(strstr(tc_str_cstr(&err), "power of two") != NULL, "err: %s", tc_str_cstr(&err));
  } else {
    int a = c->leaves[rnd(c->nleaves)];
    int b = 1 + rnd(3), m = rnd(3), s = b + rnd(2);
    if (c->ext[a] % ((int64_t)1 << (b + m + s)) == 0) return;
    TC_CHECK(tc_dg_cute(&c->g, a, b, m, s, &o1, &err) == -1,
             "Swizzle<%d,%d,%d> on extent %lld accepted", b, m, s, (long long)c->ext[a]);
    TC_CHECK(strstr(tc_str_cstr(&err), "multiple of") != NULL, "err: %s", tc_str_cstr(&err));
  }
  TC_CHECK(c->g.naxes == na && c->g.nxf == nx, "a refused transform changed the graph");
  st.illegal_attempts++;
}

/* One random transform on the leaves; returns false if the pick did not
 * apply (the caller tries again). */
static bool random_op(chain *c) {
  TC_STR_LOCAL(err);
  int kind = rnd(100);
  int64_t prod = leaf_product(c);
  if (kind < 35) { /* split */
    int li = rnd(c->nleaves), a = c->leaves[li];
    int64_t e = c->ext[a], f;
    if (c->mode == 0) {
      int64_t divs[128]; /* numbers up to 4096 have at most 60 divisors */
      int nd = 0;
      for (int64_t d = 1; d <= e; d++)
        if (e % d == 0) divs[nd++] = d;
      f = divs[rnd(nd)];
    } else {
      f = 1 + rnd((int)e + 2);
    }
    int inner = rnd(2);
    int64_t rest = (e + f - 1) / f;
    int64_t oe = inner ? rest : f, ie = inner ? f : rest;
    if (prod / e * oe * ie > CAP) return false;
    int o = -1, i = -1;
    int rc = tc_dg_split(&c->g, a, f, inner, &o, &i, &err);
    TC_CHECK(rc == 0, "split: %s", tc_str_cstr(&err));
    if (rc) return false;
    bool pad = c->padded[a] || oe * ie != e;
    if (oe * ie != e) c->nondiv = true;
    set_axis(c, o, oe, pad);
    set_axis(c, i, ie, pad);
    ref_op op = {.kind = TC_XF_SPLIT, .in = {a, -1}, .nin = 1, .out = {o, i}, .nout = 2,
                 .factor = f, .inner = inner};
    push_op(c, op);
    c->leaves[li] = o;
    leaf_insert(c, li + 1, i);
    return true;
  }
  if (kind < 60) { /* merge */
    if (c->nleaves < 2) return false;
    int i = rnd(c->nleaves), j = rnd(c->nleaves - 1);
    if (j >= i) j++;
    int a = c->leaves[i], b = c->leaves[j], out = -1;
    int rc = tc_dg_merge(&c->g, a, b, &out, &err);
    TC_CHECK(rc == 0, "merge: %s", tc_str_cstr(&err));
    if (rc) return false;
    set_axis(c, out, c->ext[a] * c->ext[b], c->padded[a] || c->padded[b]);
    ref_op op = {.kind = TC_XF_MERGE, .in = {a, b}, .nin = 2, .out = {out, -1}, .nout = 1};
    push_op(c, op);
    c->leaves[i] = out;
    leaf_remove(c, j);
    return true;
  }
  if (kind < 75) { /* XOR swizzle */
    int cand[MAXLEAF * MAXLEAF][2], n = 0;
    for (int i = 0; i < c->nleaves; i++)
      for (int j = 0; j < c->nleaves; j++) {
        int64_t xe = c->ext[c->leaves[i]], ye = c->ext[c->leaves[j]];
        if (i != j && pow2(ye) && xe <= ye && ye > 1) cand[n][0] = i, cand[n][1] = j, n++;
      }
    if (n == 0) {
      try_illegal(c);
      return false;
    }
    int k = rnd(n), xi = cand[k][0], yi = cand[k][1];
    int x = c->leaves[xi], y = c->leaves[yi], ox = -1, oy = -1;
    int rc = tc_dg_xor(&c->g, x, y, &ox, &oy, &err);
    TC_CHECK(rc == 0, "xor: %s", tc_str_cstr(&err));
    if (rc) return false;
    bool pad = c->padded[x] || c->padded[y];
    set_axis(c, ox, c->ext[x], pad);
    set_axis(c, oy, c->ext[y], pad);
    ref_op op = {.kind = TC_XF_XOR, .in = {x, y}, .nin = 2, .out = {ox, oy}, .nout = 2};
    push_op(c, op);
    c->leaves[xi] = ox, c->leaves[yi] = oy;
    return true;
  }
  if (kind < 87) { /* CuTe swizzle */
    int cand[512][4], n = 0;
    for (int i = 0; i < c->nleaves; i++)
      for (int b = 1; b <= 3; b++)
        for (int m = 0; m <= 3; m++)
          for (int s = b; s <= 4; s++) {
            int64_t e = c->ext[c->leaves[i]], period = (int64_t)1 << (b + m + s);
            if (e % period == 0 && n < 512) cand[n][0] = i, cand[n][1] = b, cand[n][2] = m, cand[n][3] = s, n++;
          }
    if (n == 0) {
      try_illegal(c);
      return false;
    }
    int k = rnd(n), li = cand[k][0], a = c->leaves[li], out = -1;
    int rc = tc_dg_cute(&c->g, a, cand[k][1], cand[k][2], cand[k][3], &out, &err);
    TC_CHECK(rc == 0, "cute: %s", tc_str_cstr(&err));
    if (rc) return false;
    set_axis(c, out, c->ext[a], c->padded[a]);
    ref_op op = {.kind = TC_XF_CUTE, .in = {a, -1}, .nin = 1, .out = {out, -1}, .nout = 1,
                 .b = cand[k][1], .m = cand[k][2], .s = cand[k][3]};
    push_op(c, op);
    c->leaves[li] = out;
    return true;
  }
  /* resize */
  if (c->mode == 0) return false;
  int li = rnd(c->nleaves), a = c->leaves[li];
  int64_t e = c->ext[a], l, r;
  if (c->mode == 1) l = rnd(3), r = rnd(3);
  else l = rnd(7) - 3, r = rnd(7) - 3;
  int64_t ne = e + l + r;
  if (ne < 1 || prod / e * ne > CAP) return false;
  int out = -1;
  int rc = tc_dg_resize(&c->g, a, l, r, &out, &err);
  TC_CHECK(rc == 0, "resize: %s", tc_str_cstr(&err));
  if (rc) return false;
  set_axis(c, out, ne, true);
  ref_op op = {.kind = TC_XF_RESIZE, .in = {a, -1}, .nin = 1, .out = {out, -1}, .nout = 1,
               .l = l, .r = r};
  push_op(c, op);
  c->leaves[li] = out;
  c->resized = true;
  if (l < 0 || r < 0) c->cropped = true;
  return true;
}

static void build_chain(chain *c, int mode) {
  static const int64_t exts[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 2, 4, 8, 8, 4, 12};
  memset(c, 0, sizeof *c);
  tc_dg_init(&c->g);
  c->mode = mode;
  c->nroots = 1 + rnd(3);
  for (int i = 0; i < c->nroots; i++) {
    int64_t e = exts[rnd((int)(sizeof exts / sizeof exts[0]))];
    int a = tc_dg_root(&c->g, e, i);
    c->roots[i] = a;
    set_axis(c, a, e, false);
    c->leaves[c->nleaves++] = a;
  }
  int want = 1 + rnd(6);
  for (int k = 0; k < want && c->nops < MAXOPS; k++)
    for (int tries = 0; tries < 20; tries++)
      if (random_op(c)) break;
  c->leaf_points = leaf_product(c);
}

/* The model, backward: from leaf values to every axis; returns whether
 * every computed axis stays in [0, extent). */
static bool ref_backward(const chain *c, int64_t *v) {
  bool ok = true;
  for (int k = c->nops - 1; k >= 0; k--) {
    const ref_op *o = &c->ops[k];
    switch ((int)o->kind) {
      case TC_XF_SPLIT: v[o->in[0]] = v[o->out[0]] * c->ext[o->out[1]] + v[o->out[1]]; break;
      case TC_XF_MERGE: {
        int64_t ie = c->ext[o->in[1]];
        v[o->in[0]] = fdiv(v[o->out[0]], ie);
        v[o->in[1]] = fmod_(v[o->out[0]], ie);
        break;
      }
      case TC_XF_XOR:
        v[o->in[0]] = v[o->out[0]];
        v[o->in[1]] = v[o->out[0]] ^ v[o->out[1]];
        break;
      case TC_XF_CUTE: v[o->in[0]] = cute_ref(o->b, o->m, o->s, v[o->out[0]]); break;
      case TC_XF_RESIZE: v[o->in[0]] = v[o->out[0]] - o->l; break;
    }
    for (int i = 0; i < o->nin; i++) ok &= v[o->in[i]] >= 0 && v[o->in[i]] < c->ext[o->in[i]];
  }
  return ok;
}

/* The model, forward: from root values to every axis; returns whether
 * every computed axis stays in range (the root point survives crops). */
static bool ref_forward(const chain *c, int64_t *v) {
  bool ok = true;
  for (int k = 0; k < c->nops; k++) {
    const ref_op *o = &c->ops[k];
    switch ((int)o->kind) {
      case TC_XF_SPLIT: {
        int64_t ie = c->ext[o->out[1]];
        v[o->out[0]] = fdiv(v[o->in[0]], ie);
        v[o->out[1]] = fmod_(v[o->in[0]], ie);
        break;
      }
      case TC_XF_MERGE: v[o->out[0]] = v[o->in[0]] * c->ext[o->in[1]] + v[o->in[1]]; break;
      case TC_XF_XOR:
        v[o->out[0]] = v[o->in[0]];
        v[o->out[1]] = v[o->in[0]] ^ v[o->in[1]];
        break;
      case TC_XF_CUTE: v[o->out[0]] = cute_ref(o->b, o->m, o->s, v[o->in[0]]); break;
      case TC_XF_RESIZE: v[o->out[0]] = v[o->in[0]] + o->l; break;
    }
    for (int i = 0; i < o->nout; i++) ok &= v[o->out[i]] >= 0 && v[o->out[i]] < c->ext[o->out[i]];
  }
  return ok;
}

static int64_t root_linear(const chain *c, const int64_t *v) {
  int64_t lin = 0;
  for (int r = 0; r < c->nroots; r++) lin = lin * c->ext[c->roots[r]] + v[c->roots[r]];
  return lin;
}

static void describe_chain(const chain *c, int idx) {
  fprintf(stderr, "  chain %d (mode %d) roots:", idx, c->mode);
  for (int r = 0; r < c->nroots; r++) fprintf(stderr, " a%d{%lld}", c->roots[r], (long long)c->ext[c->roots[r]]);
  fprintf(stderr, "\n");
  for (int k = 0; k < c->nops; k++) {
    const ref_op *o = &c->ops[k];
    static const char *names[] = {"split", "merge", "xor", "cute", "resize"};
    fprintf(stderr, "    %s(", names[o->kind]);
    for (int i = 0; i < o->nin; i++) fprintf(stderr, "%sa%d", i ? ", " : "", o->in[i]);
    if (o->kind == TC_XF_SPLIT) fprintf(stderr, ", %lld, %s", (long long)o->factor, o->inner ? "inner" : "outer");
    if (o->kind == TC_XF_CUTE) fprintf(stderr, ", <%d,%d,%d>", o->b, o->m, o->s);
    if (o->kind == TC_XF_RESIZE) fprintf(stderr, ", %lld, %lld", (long long)o->l, (long long)o->r);
    fprintf(stderr, ") ->");
    for (int i = 0; i < o->nout; i++) fprintf(stderr, " a%d{%lld}", o->out[i], (long long)c->ext[o->out[i]]);
    fprintf(stderr, "\n");
  }
}

/* Checks one chain; returns the number of failed checks it caused. */
static int check_chain(chain *c, int idx) {
  int before = tc_test_failed_checks;
  tc_dgraph *g = &c->g;
  int na = g->naxes;
  if (na > MAXA) {
    TC_CHECK(na <= MAXA, "chain %d has %d axes", idx, na);
    return 1;
  }

  /* the graph agrees with the model on extents and padding */
  for (int a = 0; a < na; a++) {
    TC_CHECK(g->axes[a].extent == c->ext[a], "chain %d axis %d extent %lld, model %lld", idx, a,
             (long long)g->axes[a].extent, (long long)c->ext[a]);
    TC_CHECK(tc_dg_is_padded(g, a) == c->padded[a], "chain %d axis %d is_padded %d, model %d", idx,
             a, tc_dg_is_padded(g, a), c->padded[a]);
  }

  /* history from the roots to the leaves is the whole chain, in order */
  int *hist = tc_xmalloc(sizeof(int) * (size_t)(g->nxf + 1));
  int nh = tc_dg_history(g, c->roots, c->nroots, c->leaves, c->nleaves, hist);
  TC_CHECK(nh == c->nops, "chain %d history has %d transforms, chain %d", idx, nh, c->nops);
  for (int k = 0; k < nh && k < c->nops; k++)
    TC_CHECK(hist[k] == c->ops[k].xf, "chain %d history[%d] = %d, expected %d", idx, k, hist[k], c->ops[k].xf);

  /* replay onto a second root domain with the same extents and positions */
  int roots2[3];
  for (int r = 0; r < c->nroots; r++) roots2[r] = tc_dg_root(g, c->ext[c->roots[r]], r);
  int *map = tc_xmalloc(sizeof(int) * (size_t)g->naxes);
  for (int a = 0; a < g->naxes; a++) map[a] = -1;
  for (int r = 0; r < c->nroots; r++) map[c->roots[r]] = roots2[r];
  TC_STR_LOCAL(err);
  int rrc = tc_dg_replay(g, hist, nh, &map, &err);
  TC_CHECK(rrc == 0, "chain %d replay: %s", idx, tc_str_cstr(&err));
  int leaves2[MAXLEAF];
  for (int i = 0; i < c->nleaves; i++) {
    int a = c->leaves[i], b = rrc == 0 ? map[a] : -1;
    leaves2[i] = b;
    TC_CHECK(b >= na && b < g->naxes, "chain %d leaf %d has no replayed counterpart (%d)", idx, a, b);
    if (b < na || b >= g->naxes) continue;
    TC_CHECK(g->axes[b].extent == g->axes[a].extent && g->axes[b].sig == g->axes[a].sig,
             "chain %d replayed leaf %d -> %d differs", idx, a, b);
  }
  bool replay_ok = tc_test_failed_checks == before;
  st.replays += replay_ok;
  free(hist);

  tc_epool *p = tc_epool_new();
  const tc_expr **vals = tc_xcalloc((size_t)g->naxes, sizeof *vals);
  const tc_expr **vals2 = tc_xcalloc((size_t)g->naxes, sizeof *vals2);
  const tc_expr **fwd = tc_xcalloc((size_t)g->naxes, sizeof *fwd);
  for (int i = 0; i < c->nleaves; i++) {
    char name[16];
    snprintf(name, sizeof name, "l%d", i);
    vals[c->leaves[i]] = tc_e_var(p, name, 0, c->ext[c->leaves[i]] - 1);
    if (replay_ok) vals2[leaves2[i]] = vals[c->leaves[i]];
  }
  int rvar0 = tc_e_num_vars(p);
  for (int r = 0; r < c->nroots; r++) {
    char name[16];
    snprintf(name, sizeof name, "r%d", r);
    fwd[c->roots[r]] = tc_e_var(p, name, 0, c->ext[c->roots[r]] - 1);
  }
  int nvars = tc_e_num_vars(p);

  /* backward: leaves -> roots with predicates */
  const tc_expr *pred = tc_e_const(p, 1), *pred2 = tc_e_const(p, 1);
  int given = tc_dg_walk(p, g, vals, &pred);
  TC_CHECK(given == na - c->nleaves, "chain %d backward walk gave %d axes, expected %d", idx, given,
           na - c->nleaves);
  for (int a = 0; a < na; a++) TC_CHECK(vals[a] != NULL, "chain %d axis %d has no value", idx, a);
  if (replay_ok) {
    tc_dg_walk(p, g, vals2, &pred2);
    for (int r = 0; r < c->nroots; r++) TC_CHECK(vals2[roots2[r]] != NULL, "chain %d replayed root", idx);
  }

  /* forward: roots -> leaves; no backward step, so no predicate */
  const tc_expr *fpred = tc_e_const(p, 1);
  given = tc_dg_walk(p, g, fwd, &fpred);
  TC_CHECK(given == na - c->nroots, "chain %d forward walk gave %d axes, expected %d", idx, given,
           na - c->nroots);
  TC_CHECK(tc_e_is_const(fpred, 1), "chain %d forward walk added a predicate", idx);
  for (int a = 0; a < na; a++) TC_CHECK(fwd[a] != NULL, "chain %d axis %d has no forward value", idx, a);
  if (tc_test_failed_checks != before) goto done;

  if (c->nondiv || c->resized) st.const_true_pred_padded += tc_e_is_const(pred, 1);

  int64_t root_points = 1;
  for (int r = 0; r < c->nroots; r++) root_points *= c->ext[c->roots[r]];
  int *hits = tc_xcalloc((size_t)root_points, sizeof(int));
  int64_t vars[64] = {0}, ref[MAXA], coord[MAXLEAF];
  int errs = 0;

  /* every leaf point */
  for (int i = 0; i < c->nleaves; i++) coord[i] = 0;
  for (int64_t n = 0; n < c->leaf_points && errs < 5; n++) {
    for (int i = 0; i < c->nleaves; i++) vars[i] = coord[i], ref[c->leaves[i]] = coord[i];
    bool ok = ref_backward(c, ref);
    for (int a = 0; a < na && errs < 5; a++) {
      int64_t got = tc_e_eval(vals[a], vars);
      if (got != ref[a]) {
        errs++;
        TC_CHECK(got == ref[a], "chain %d leaf point %lld: axis %d = %lld, model %lld", idx,
                 (long long)n, a, (long long)got, (long long)ref[a]);
      }
    }
    bool pv = tc_e_eval(pred, vars) != 0;
    if (pv != ok) {
      errs++;
      TC_CHECK(pv == ok, "chain %d leaf point %lld: predicate %d, model says in range %d", idx,
               (long long)n, pv, ok);
    }
    if (c->mode == 0 && !pv) {
      errs++;
      TC_CHECK(pv, "chain %d (divisible) leaf point %lld rejected", idx, (long long)n);
    }
    if (pv) {
      bool inr = true;
      for (int r = 0; r < c->nroots; r++) {
        int64_t v = tc_e_eval(vals[c->roots[r]], vars);
        inr &= v >= 0 && v < c->ext[c->roots[r]];
        ref[c->roots[r]] = v;
      }
      if (!inr) {
        errs++;
        TC_CHECK(inr, "chain %d leaf point %lld admitted but its root is out of range", idx, (long long)n);
      } else {
        hits[root_linear(c, ref)]++;
      }
      st.admitted++;
    } else {
      st.rejected++;
    }
    if (replay_ok) {
      bool pv2 = tc_e_eval(pred2, vars) != 0;
      bool same = pv2 == pv;
      for (int r = 0; r < c->nroots; r++)
        same &= tc_e_eval(vals2[roots2[r]], vars) == tc_e_eval(vals[c->roots[r]], vars);
      if (!same) {
        errs++;
        TC_CHECK(same, "chain %d leaf point %lld: replayed domain indexes differently", idx, (long long)n);
      }
    }
    for (int i = c->nleaves - 1; i >= 0; i--) {
      if (++coord[i] < c->ext[c->leaves[i]]) break;
      coord[i] = 0;
    }
  }
  st.leaf_points += c->leaf_points;

  /* every root point: hit once iff it survives the crops; forward agrees
   * with the model; backward(forward(i)) == i */
  for (int r = 0; r < c->nroots; r++) coord[r] = 0;
  for (int64_t n = 0; n < root_points && errs < 5; n++) {
    for (int k = 0; k < 64; k++) vars[k] = 0;
    for (int r = 0; r < c->nroots; r++) vars[rvar0 + r] = coord[r], ref[c->roots[r]] = coord[r];
    bool covered = ref_forward(c, ref);
    if (c->mode < 2 || !c->cropped) {
      if (!covered) {
        errs++;
        TC_CHECK(covered, "chain %d root point %lld: model drops it without crops", idx, (long long)n);
      }
    }
    int want = covered ? 1 : 0;
    if (hits[n] != want) {
      errs++;
      TC_CHECK(hits[n] == want, "chain %d root point %lld hit %d times, expected %d", idx,
               (long long)n, hits[n], want);
    }
    for (int a = 0; a < na && errs < 5; a++) {
      int64_t got = tc_e_eval(fwd[a], vars);
      if (got != ref[a]) {
        errs++;
        TC_CHECK(got == ref[a], "chain %d root point %lld: forward axis %d = %lld, model %lld", idx,
                 (long long)n, a, (long long)got, (long long)ref[a]);
      }
    }
    if (covered) {
      for (int i = 0; i < c->nleaves; i++) vars[i] = tc_e_eval(fwd[c->leaves[i]], vars);
      bool back = tc_e_eval(pred, vars) != 0;
      for (int r = 0; r < c->nroots; r++) back &= tc_e_eval(vals[c->roots[r]], vars) == coord[r];
      if (!back) {
        errs++;
        TC_CHECK(back, "chain %d root point %lld: backward(forward(i)) != i or rejected", idx, (long long)n);
      }
    }
    for (int r = c->nroots - 1; r >= 0; r--) {
      if (++coord[r] < c->ext[c->roots[r]]) break;
      coord[r] = 0;
    }
  }
  st.root_points += root_points;
  (void)nvars;
  free(hits);

done:
  free(vals), free(vals2), free(fwd), free(map);
  tc_epool_free(p);
  if (tc_test_failed_checks != before) describe_chain(c, idx);
  return tc_test_failed_checks - before;
}

static void run_chains(int mode, int count, uint64_t seed) {
  rng_state = seed;
  int failed = 0;
  for (int n = 0; n < count && failed < 3; n++) {
    chain c;
    build_chain(&c, mode);
    if (c.mode == 1 && n % 2 == 0 && !c.nondiv && !c.resized) { /* bias towards padding */
      tc_dg_free(&c.g);
      n--;
      continue;
    }
    st.chains[mode]++;
    st.nondiv_chains += c.nondiv;
    st.resize_chains += c.resized;
    st.crop_chains += c.cropped;
    failed += check_chain(&c, n) != 0;
    tc_dg_free(&c.g);
  }
}

static void test_random_divisible_chains(void) { run_chains(0, 600, 0x5eed0001u); }
static void test_random_padded_chains(void) { run_chains(1, 600, 0x5eed0002u); }
static void test_random_cropped_chains(void) { run_chains(2, 400, 0x5eed0003u); }

/* ---------------------------------------------------------- fixed cases */

/* Forward expressions of every axis of g from root variables. */
static const tc_expr **forward_from_roots(tc_epool *p, const tc_dgraph *g, const int *roots, int n) {
  const tc_expr **v = tc_xcalloc((size_t)g->naxes, sizeof *v);
  for (int i = 0; i < n; i++) v[roots[i]] = tc_e_var(p, NULL, 0, g->axes[roots[i]].extent - 1);
  tc_dg_walk(p, g, v, NULL);
  return v;
}

static void xor_case(int64_t xe, int64_t ye) {
  tc_dgraph g;
  tc_dg_init(&g);
  TC_STR_LOCAL(err);
  int x = tc_dg_root(&g, xe, 0), y = tc_dg_root(&g, ye, 1), ox, oy, ox2, oy2;
  TC_REQUIRE(tc_dg_xor(&g, x, y, &ox, &oy, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(g.axes[ox].extent == xe && g.axes[oy].extent == ye, "xor extents");
  /* applied twice it is the identity */
  TC_REQUIRE(tc_dg_xor(&g, ox, oy, &ox2, &oy2, &err) == 0, "%s", tc_str_cstr(&err));
  tc_epool *p = tc_epool_new();
  int roots[2] = {x, y};
  const tc_expr **v = forward_from_roots(p, &g, roots, 2);
  /* backward from the first swizzle's outputs */
  const tc_expr **b = tc_xcalloc((size_t)g.naxes, sizeof *b);
  b[ox] = tc_e_var(p, NULL, 0, xe - 1), b[oy] = tc_e_var(p, NULL, 0, ye - 1);
  const tc_expr *pred = tc_e_const(p, 1);
  tc_dg_walk(p, &g, b, &pred);
  TC_CHECK(tc_e_is_const(pred, 1), "an XOR swizzle needs no predicate");
  int *hit = tc_xcalloc((size_t)(xe * ye), sizeof(int));
  for (int64_t i = 0; i < xe; i++)
    for (int64_t j = 0; j < ye; j++) {
      int64_t vv[4] = {i, j, i, j};
      int64_t a0 = tc_e_eval(v[ox], vv), a1 = tc_e_eval(v[oy], vv);
      TC_CHECK(a0 == i && a1 == (i ^ j), "xor(%lld,%lld) = (%lld,%lld)", (long long)i, (long long)j,
               (long long)a0, (long long)a1);
      TC_CHECK(a1 >= 0 && a1 < ye, "xor output out of range");
      if (a1 >= 0 && a1 < ye) hit[i * ye + a1]++;
      TC_CHECK(tc_e_eval(v[ox2], vv) == i && tc_e_eval(v[oy2], vv) == j,
               "xor twice is not the identity at (%lld,%lld)", (long long)i, (long long)j);
      /* backward (vars 2, 3 are ox, oy) equals forward: an involution */
      TC_CHECK(tc_e_eval(b[x], vv) == i && tc_e_eval(b[y], vv) == (i ^ j), "xor backward");
    }
  for (int64_t k = 0; k < xe * ye; k++) TC_CHECK(hit[k] == 1, "xor is not a bijection at %lld", (long long)k);
  free(hit), free(v), free(b);
  tc_epool_free(p);
  tc_dg_free(&g);
}

static void test_xor_swizzle(void) {
  xor_case(8, 8);
  xor_case(4, 8);
  xor_case(5, 8); /* x need not be a power of two */
  xor_case(1, 1);
}

static void cute_case(int b, int m, int s, int64_t e) {
  tc_dgraph g;
  tc_dg_init(&g);
  TC_STR_LOCAL(err);
  int x = tc_dg_root(&g, e, 0), o, o2;
  TC_REQUIRE(tc_dg_cute(&g, x, b, m, s, &o, &err) == 0, "Swizzle<%d,%d,%d>: %s", b, m, s, tc_str_cstr(&err));
  TC_REQUIRE(tc_dg_cute(&g, o, b, m, s, &o2, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(g.axes[o].extent == e, "cute extent");
  tc_epool *p = tc_epool_new();
  const tc_expr **v = forward_from_roots(p, &g, &x, 1);
  const tc_expr **bk = tc_xcalloc((size_t)g.naxes, sizeof *bk);
  bk[o] = tc_e_var(p, NULL, 0, e - 1); /* var 1 */
  const tc_expr *pred = tc_e_const(p, 1);
  tc_dg_walk(p, &g, bk, &pred);
  /* a swizzle never leaves its range; on a power-of-two extent the range
   * analysis sees that and adds no predicate (on others it may keep a
   * redundant one, which must then hold everywhere) */
  if (pow2(e)) TC_CHECK(tc_e_is_const(pred, 1), "Swizzle<%d,%d,%d> needs no predicate", b, m, s);
  int *hit = tc_xcalloc((size_t)e, sizeof(int));
  int bad = 0;
  for (int64_t i = 0; i < e && bad < 5; i++) {
    int64_t vv[2] = {i, i};
    int64_t f = tc_e_eval(v[o], vv), want = cute_ref(b, m, s, i);
    if (f != want) bad++;
    TC_CHECK(f == want, "Swizzle<%d,%d,%d>(%lld) = %lld, CuTe gives %lld", b, m, s, (long long)i,
             (long long)f, (long long)want);
    if (f >= 0 && f < e) hit[f]++;
    else {
      bad++;
      TC_CHECK(0, "Swizzle<%d,%d,%d>(%lld) = %lld out of range", b, m, s, (long long)i, (long long)f);
    }
    /* involution, through the expression itself and through a second swizzle */
    int64_t ff[2] = {f, f};
    TC_CHECK(tc_e_eval(v[o], ff) == i, "Swizzle<%d,%d,%d> is not an involution at %lld", b, m, s, (long long)i);
    TC_CHECK(tc_e_eval(v[o2], vv) == i, "Swizzle<%d,%d,%d> twice at %lld", b, m, s, (long long)i);
    TC_CHECK(tc_e_eval(bk[x], vv) == want, "Swizzle<%d,%d,%d> backward at %lld", b, m, s, (long long)i);
    TC_CHECK(tc_e_eval(pred, vv) != 0, "Swizzle<%d,%d,%d> predicate false at %lld", b, m, s, (long long)i);
  }
  for (int64_t i = 0; i < e && !bad; i++) TC_CHECK(hit[i] == 1, "Swizzle<%d,%d,%d> not a bijection at %lld", b, m, s, (long long)i);
  free(hit), free(v), free(bk);
  tc_epool_free(p);
  tc_dg_free(&g);
}

static void test_cute_swizzle(void) {
  static const int params[][3] = {{3, 4, 3}, {2, 4, 3}, {1, 4, 3}, {3, 3, 3}, {2, 1, 4}, {0, 2, 0}, {2, 0, 2}};
  for (size_t k = 0; k < sizeof params / sizeof params[0]; k++) {
    int b = params[k][0], m = params[k][1], s = params[k][2];
    int64_t period = (int64_t)1 << (b + m + s);
    cute_case(b, m, s, period);
    cute_case(b, m, s, 3 * period);
  }
  /* illegal parameters */
  tc_dgraph g;
  tc_dg_init(&g);
  TC_STR_LOCAL(err);
  int x = tc_dg_root(&g, 1024, 0), o = -7;
  TC_CHECK(tc_dg_cute(&g, x, 3, 4, 2, &o, &err) == -1, "S < B accepted");
  TC_CHECK(strstr(tc_str_cstr(&err), "Swizzle<3,4,2>") && strstr(tc_str_cstr(&err), "B <= S"), "err: %s", tc_str_cstr(&err));
  tc_str_clear(&err);
  TC_CHECK(tc_dg_cute(&g, x, -1, 4, 3, &o, &err) == -1, "B < 0 accepted");
  TC_CHECK(strstr(tc_str_cstr(&err), "0 <= B"), "err: %s", tc_str_cstr(&err));
  tc_str_clear(&err);
  TC_CHECK(tc_dg_cute(&g, x, 1, -1, 3, &o, &err) == -1, "M < 0 accepted");
  TC_CHECK(strstr(tc_str_cstr(&err), "Swizzle<1,-1,3>"), "err: %s", tc_str_cstr(&err));
  tc_str_clear(&err);
  TC_CHECK(tc_dg_cute(&g, x, 20, 1, 20, &o, &err) == -1, "B+M+S > 40 accepted");
  TC_CHECK(strstr(tc_str_cstr(&err), "40"), "err: %s", tc_str_cstr(&err));
  int y = tc_dg_root(&g, 100, 1);
  tc_str_clear(&err);
  TC_CHECK(tc_dg_cute(&g, y, 2, 1, 4, &o, &err) == -1, "extent 100 for period 128 accepted");
  TC_CHECK(strstr(tc_str_cstr(&err), "multiple of 128") && strstr(tc_str_cstr(&err), "100"), "err: %s", tc_str_cstr(&err));
  int z = tc_dg_root(&g, 1536, 2);
  tc_str_clear(&err);
  TC_CHECK(tc_dg_cute(&g, z, 3, 4, 3, &o, &err) == -1, "extent 1536 for period 1024 accepted");
  TC_CHECK(strstr(tc_str_cstr(&err), "multiple of 1024") && strstr(tc_str_cstr(&err), "1536"), "err: %s", tc_str_cstr(&err));
  tc_str_clear(&err);
  TC_CHECK(tc_dg_cute(&g, 99, 1, 1, 1, &o, &err) == -1, "no such axis accepted");
  TC_CHECK(strstr(tc_str_cstr(&err), "no such axis"), "err: %s", tc_str_cstr(&err));
  TC_CHECK(g.naxes == 3 && g.nxf == 0 && o == -7, "a refused swizzle changed the graph");
  tc_dg_free(&g);
}

/* The 128-byte swizzle of a bulk-copy box, built from transforms: rows and
 * 16-byte chunks, chunk' = chunk ^ (row % 8). */
static void test_swizzle_as_transforms(void) {
  TC_STR_LOCAL(err);
  /* chunk granularity: [rows=16, chunks=8] vs Swizzle<3,0,3> on row*8+chunk */
  {
    tc_dgraph g;
    tc_dg_init(&g);
    int row = tc_dg_root(&g, 16, 0), chunk = tc_dg_root(&g, 8, 1), ro, ri, rx, cx, r2, lin;
    TC_REQUIRE(tc_dg_split(&g, row, 8, 1, &ro, &ri, &err) == 0, "%s", tc_str_cstr(&err));
    TC_REQUIRE(tc_dg_xor(&g, ri, chunk, &rx, &cx, &err) == 0, "%s", tc_str_cstr(&err));
    TC_REQUIRE(tc_dg_merge(&g, ro, rx, &r2, &err) == 0, "%s", tc_str_cstr(&err));
    TC_REQUIRE(tc_dg_merge(&g, r2, cx, &lin, &err) == 0, "%s", tc_str_cstr(&err));
    TC_CHECK(g.axes[lin].extent == 128, "extent %lld", (long long)g.axes[lin].extent);
    /* the same swizzle as a CuTe transform on a linear axis */
    int flat = tc_dg_root(&g, 128, 0), sw;
    TC_REQUIRE(tc_dg_cute(&g, flat, 3, 0, 3, &sw, &err) == 0, "%s", tc_str_cstr(&err));
    tc_epool *p = tc_epool_new();
    int roots[3] = {row, chunk, flat};
    const tc_expr **v = forward_from_roots(p, &g, roots, 3);
    for (int64_t r = 0; r < 16; r++)
      for (int64_t c = 0; c < 8; c++) {
        int64_t vv[3] = {r, c, r * 8 + c};
        int64_t t = tc_e_eval(v[lin], vv), want = cute_ref(3, 0, 3, r * 8 + c);
        TC_CHECK(t == want, "row %lld chunk %lld: transforms give %lld, Swizzle<3,0,3> %lld",
                 (long long)r, (long long)c, (long long)t, (long long)want);
        TC_CHECK(t == r * 8 + (c ^ (r % 8)), "row %lld chunk %lld: %lld", (long long)r, (long long)c, (long long)t);
        TC_CHECK(tc_e_eval(v[sw], vv) == want, "tc_dg_cute<3,0,3>(%lld)", (long long)(r * 8 + c));
      }
    free(v);
    tc_epool_free(p);
    tc_dg_free(&g);
  }
  /* byte granularity: [rows=16, bytes=128] vs Swizzle<3,4,3> on row*128+byte */
  {
    tc_dgraph g;
    tc_dg_init(&g);
    int row = tc_dg_root(&g, 16, 0), byte = tc_dg_root(&g, 128, 1);
    int ro, ri, ch, bi, rx, cx, b2, r2, lin;
    TC_REQUIRE(tc_dg_split(&g, byte, 16, 1, &ch, &bi, &err) == 0, "%s", tc_str_cstr(&err));
    TC_REQUIRE(tc_dg_split(&g, row, 8, 1, &ro, &ri, &err) == 0, "%s", tc_str_cstr(&err));
    TC_REQUIRE(tc_dg_xor(&g, ri, ch, &rx, &cx, &err) == 0, "%s", tc_str_cstr(&err));
    TC_REQUIRE(tc_dg_merge(&g, cx, bi, &b2, &err) == 0, "%s", tc_str_cstr(&err));
    TC_REQUIRE(tc_dg_merge(&g, ro, rx, &r2, &err) == 0, "%s", tc_str_cstr(&err));
    TC_REQUIRE(tc_dg_merge(&g, r2, b2, &lin, &err) == 0, "%s", tc_str_cstr(&err));
    TC_CHECK(g.axes[lin].extent == 2048, "extent %lld", (long long)g.axes[lin].extent);
    int flat = tc_dg_root(&g, 2048, 0), sw;
    TC_REQUIRE(tc_dg_cute(&g, flat, 3, 4, 3, &sw, &err) == 0, "%s", tc_str_cstr(&err));
    tc_epool *p = tc_epool_new();
    int roots[3] = {row, byte, flat};
    const tc_expr **v = forward_from_roots(p, &g, roots, 3);
    /* and backward: from the swizzled linear offset back to (row, byte) */
    const tc_expr **bk = tc_xcalloc((size_t)g.naxes, sizeof *bk);
    bk[lin] = tc_e_var(p, NULL, 0, 2047); /* var 3 */
    const tc_expr *pred = tc_e_const(p, 1);
    tc_dg_walk(p, &g, bk, &pred);
    TC_CHECK(tc_e_is_const(pred, 1), "divisible swizzle chain needs no predicate");
    int bad = 0;
    for (int64_t r = 0; r < 16 && bad < 5; r++)
      for (int64_t b = 0; b < 128 && bad < 5; b++) {
        int64_t off = r * 128 + b;
        int64_t vv[4] = {r, b, off, 0};
        int64_t t = tc_e_eval(v[lin], vv), want = cute_ref(3, 4, 3, off);
        int64_t byxor = r * 128 + (((b / 16) ^ (r % 8)) * 16) + b % 16;
        if (t != want || want != byxor || tc_e_eval(v[sw], vv) != want) bad++;
        TC_CHECK(t == want, "row %lld byte %lld: transforms give %lld, Swizzle<3,4,3> %lld",
                 (long long)r, (long long)b, (long long)t, (long long)want);
        TC_CHECK(want == byxor, "Swizzle<3,4,3>(%lld) = %lld, chunk xor gives %lld", (long long)off,
                 (long long)want, (long long)byxor);
        TC_CHECK(tc_e_eval(v[sw], vv) == want, "tc_dg_cute<3,4,3>(%lld)", (long long)off);
        vv[3] = want;
        TC_CHECK(tc_e_eval(bk[row], vv) == r && tc_e_eval(bk[byte], vv) == b,
                 "backward from offset %lld", (long long)want);
      }
    free(v), free(bk);
    tc_epool_free(p);
    tc_dg_free(&g);
  }
}

/* A hand-written schedule on roots (6, 8), replayed on a second domain. */
static void test_history_replay(void) {
  tc_dgraph g;
  tc_dg_init(&g);
  TC_STR_LOCAL(err);
  int a0 = tc_dg_root(&g, 6, 0), a1 = tc_dg_root(&g, 8, 1);
  int p0, p1, m, m0, m1, x0, x1, cu, rz, junk0, junk1;
  TC_REQUIRE(tc_dg_split(&g, a0, 4, 1, &p0, &p1, &err) == 0, "%s", tc_str_cstr(&err)); /* 2, 4 (padded) */
  TC_REQUIRE(tc_dg_merge(&g, p1, a1, &m, &err) == 0, "%s", tc_str_cstr(&err));         /* 32 */
  TC_REQUIRE(tc_dg_split(&g, m, 4, 0, &m0, &m1, &err) == 0, "%s", tc_str_cstr(&err));  /* 4, 8 */
  TC_REQUIRE(tc_dg_xor(&g, m0, m1, &x0, &x1, &err) == 0, "%s", tc_str_cstr(&err));     /* 4, 8 */
  TC_REQUIRE(tc_dg_cute(&g, x1, 1, 1, 1, &cu, &err) == 0, "%s", tc_str_cstr(&err));    /* 8 */
  TC_REQUIRE(tc_dg_resize(&g, p0, 1, 2, &rz, &err) == 0, "%s", tc_str_cstr(&err));     /* 5 */
  /* an unrelated transform on another root must stay out of the history */
  int other = tc_dg_root(&g, 12, 2);
  TC_REQUIRE(tc_dg_split(&g, other, 3, 1, &junk0, &junk1, &err) == 0, "%s", tc_str_cstr(&err));
  int leaves[4] = {rz, x0, cu}, nl = 3;
  int srcs[2] = {a0, a1};
  int hist[16];
  int nh = tc_dg_history(&g, srcs, 2, leaves, nl, hist);
  TC_CHECK_EQ_INT(nh, 6);
  for (int k = 0; k < nh; k++) TC_CHECK_EQ_INT(hist[k], k);
  /* only the transforms the targets need */
  int one[1] = {p0};
  int h1[16];
  TC_CHECK_EQ_INT(tc_dg_history(&g, srcs, 2, one, 1, h1), 1);
  int two[1] = {x0};
  TC_CHECK_EQ_INT(tc_dg_history(&g, srcs, 2, two, 1, h1), 4); /* split, merge, split, xor */
  /* from an intermediate axis: sources stop the walk */
  int mid[1] = {m};
  TC_CHECK_EQ_INT(tc_dg_history(&g, mid, 1, two, 1, h1), 2);
  /* a target that cannot be made from the sources alone needs nothing */
  int only_a0[1] = {a0}, tm[1] = {m};
  TC_CHECK_EQ_INT(tc_dg_history(&g, only_a0, 1, tm, 1, h1), 0);
  /* a source that some transform makes is given, so that transform is not needed */
  int srcs3[3] = {a0, a1, m};
  TC_CHECK_EQ_INT(tc_dg_history(&g, srcs3, 3, two, 1, h1), 2);
  TC_CHECK(h1[0] == 2 && h1[1] == 3, "history %d %d", h1[0], h1[1]);

  /* replay on b0{6}, b1{8} */
  int b0 = tc_dg_root(&g, 6, 0), b1 = tc_dg_root(&g, 8, 1);
  TC_CHECK(g.axes[b0].sig == g.axes[a0].sig && g.axes[b1].sig == g.axes[a1].sig, "root signatures");
  TC_CHECK(g.axes[b0].sig != g.axes[b1].sig, "roots at different positions share a signature");
  int *map = tc_xmalloc(sizeof(int) * (size_t)g.naxes);
  for (int a = 0; a < g.naxes; a++) map[a] = -1;
  map[a0] = b0, map[a1] = b1;
  int before = g.naxes;
  TC_REQUIRE(tc_dg_replay(&g, hist, nh, &map, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(g.naxes, before + 9);
  TC_CHECK_EQ_INT(g.nxf, 7 + 6);
  int rl[3];
  for (int i = 0; i < nl; i++) {
    rl[i] = map[leaves[i]];
    TC_REQUIRE(rl[i] >= before && rl[i] < g.naxes, "leaf %d maps to %d", leaves[i], rl[i]);
    TC_CHECK(g.axes[rl[i]].extent == g.axes[leaves[i]].extent, "replayed extent");
    TC_CHECK(g.axes[rl[i]].sig == g.axes[leaves[i]].sig, "replayed signature");
    TC_CHECK(tc_dg_is_padded(&g, rl[i]) == tc_dg_is_padded(&g, leaves[i]), "replayed padding");
  }
  /* every intermediate axis maps too, with equal signatures */
  int inter[6] = {p0, p1, m, m0, m1, x1};
  for (int i = 0; i < 6; i++)
    TC_CHECK(map[inter[i]] >= before && g.axes[map[inter[i]]].sig == g.axes[inter[i]].sig,
             "intermediate axis %d", inter[i]);
  TC_CHECK(map[other] == -1 && map[junk0] == -1, "unrelated axes got counterparts");
  /* a different-position domain has different signatures */
  int c0 = tc_dg_root(&g, 6, 1), c1 = tc_dg_root(&g, 8, 0);
  map = tc_xrealloc(map, sizeof(int) * (size_t)g.naxes);
  for (int a = 0; a < g.naxes; a++) map[a] = -1;
  map[a0] = c0, map[a1] = c1;
  TC_REQUIRE(tc_dg_replay(&g, hist, nh, &map, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(g.axes[map[cu]].sig != g.axes[cu].sig, "signature ignores root positions");

  /* the index expressions of both domains agree */
  tc_epool *p = tc_epool_new();
  const tc_expr **va = tc_xcalloc((size_t)g.naxes, sizeof *va);
  const tc_expr **vb = tc_xcalloc((size_t)g.naxes, sizeof *vb);
  for (int i = 0; i < nl; i++) {
    const tc_expr *v = tc_e_var(p, NULL, 0, g.axes[leaves[i]].extent - 1);
    va[leaves[i]] = v, vb[rl[i]] = v;
  }
  const tc_expr *pa = tc_e_const(p, 1), *pb = tc_e_const(p, 1);
  tc_dg_walk(p, &g, va, &pa);
  tc_dg_walk(p, &g, vb, &pb);
  TC_REQUIRE(va[a0] && va[a1] && vb[b0] && vb[b1], "walk did not reach the roots");
  TC_CHECK(!tc_e_is_const(pa, 1), "padded schedule has no predicate");
  int hit[48] = {0}, admitted = 0;
  for (int64_t i = 0; i < 5; i++)
    for (int64_t j = 0; j < 4; j++)
      for (int64_t k = 0; k < 8; k++) {
        int64_t vv[3] = {i, j, k};
        int64_t r0 = tc_e_eval(va[a0], vv), r1 = tc_e_eval(va[a1], vv);
        bool ok = tc_e_eval(pa, vv) != 0;
        TC_CHECK(r0 == tc_e_eval(vb[b0], vv) && r1 == tc_e_eval(vb[b1], vv) &&
                     ok == (tc_e_eval(pb, vv) != 0),
                 "replayed domain differs at (%lld,%lld,%lld)", (long long)i, (long long)j, (long long)k);
        if (ok) {
          admitted++;
          TC_CHECK(r0 >= 0 && r0 < 6 && r1 >= 0 && r1 < 8, "admitted point out of range");
          if (r0 >= 0 && r0 < 6 && r1 >= 0 && r1 < 8) hit[r0 * 8 + r1]++;
        }
      }
  TC_CHECK_EQ_INT(admitted, 48);
  for (int i = 0; i < 48; i++) TC_CHECK(hit[i] == 1, "root point %d hit %d times", i, hit[i]);

  /* replay with an input that has no counterpart */
  for (int a = 0; a < g.naxes; a++) map[a] = -1;
  map[a0] = b0;
  tc_str_clear(&err);
  TC_CHECK(tc_dg_replay(&g, hist, nh, &map, &err) == -1, "replay without a counterpart");
  TC_CHECK(strstr(tc_str_cstr(&err), "no counterpart") != NULL, "err: %s", tc_str_cstr(&err));
  free(va), free(vb), free(map);
  tc_epool_free(p);
  tc_dg_free(&g);
}

static void test_errors(void) {
  tc_dgraph g;
  tc_dg_init(&g);
  TC_STR_LOCAL(err);
  int a = tc_dg_root(&g, 12, 0), b = tc_dg_root(&g, 6, 1), c = tc_dg_root(&g, 8, 2);
  int o1 = -5, o2 = -5;
  TC_CHECK(tc_dg_split(&g, a, 0, 1, &o1, &o2, &err) == -1, "factor 0 accepted");
  TC_CHECK(strstr(tc_str_cstr(&err), "split factor must be at least 1") && strstr(tc_str_cstr(&err), "got 0"), "err: %s", tc_str_cstr(&err));
  tc_str_clear(&err);
  TC_CHECK(tc_dg_split(&g, a, -3, 0, &o1, &o2, &err) == -1, "factor -3 accepted");
  TC_CHECK(strstr(tc_str_cstr(&err), "got -3"), "err: %s", tc_str_cstr(&err));
  tc_str_clear(&err);
  TC_CHECK(tc_dg_split(&g, 42, 2, 1, &o1, &o2, &err) == -1, "bad axis accepted");
  TC_CHECK(strstr(tc_str_cstr(&err), "no such axis"), "err: %s", tc_str_cstr(&err));
  tc_str_clear(&err);
  TC_CHECK(tc_dg_xor(&g, a, b, &o1, &o2, &err) == -1, "xor with y extent 6 accepted");
  TC_CHECK(strstr(tc_str_cstr(&err), "power of two") && strstr(tc_str_cstr(&err), "12") && strstr(tc_str_cstr(&err), "6"), "err: %s", tc_str_cstr(&err));
  tc_str_clear(&err);
  TC_CHECK(tc_dg_xor(&g, a, c, &o1, &o2, &err) == -1, "xor 12 onto 8 accepted");
  TC_CHECK(strstr(tc_str_cstr(&err), "power of two"), "err: %s", tc_str_cstr(&err));
  tc_str_clear(&err);
  TC_CHECK(tc_dg_xor(&g, c, c, &o1, &o2, &err) == -1, "xor of an axis with itself");
  TC_CHECK(strstr(tc_str_cstr(&err), "two distinct axes"), "err: %s", tc_str_cstr(&err));
  tc_str_clear(&err);
  TC_CHECK(tc_dg_merge(&g, a, a, &o1, &err) == -1, "merge of an axis with itself");
  TC_CHECK(strstr(tc_str_cstr(&err), "two distinct axes"), "err: %s", tc_str_cstr(&err));
  tc_str_clear(&err);
  TC_CHECK(tc_dg_resize(&g, b, -3, -3, &o1, &err) == -1, "resize to 0 accepted");
  TC_CHECK(strstr(tc_str_cstr(&err), "at least 1") && strstr(tc_str_cstr(&err), "extent 0"), "err: %s", tc_str_cstr(&err));
  tc_str_clear(&err);
  TC_CHECK(tc_dg_resize(&g, b, -10, 1, &o1, &err) == -1, "resize to -3 accepted");
  TC_CHECK(strstr(tc_str_cstr(&err), "at least 1") && strstr(tc_str_cstr(&err), "-3"), "err: %s", tc_str_cstr(&err));
  tc_str_clear(&err);
  TC_CHECK(tc_dg_resize(&g, -1, 1, 1, &o1, &err) == -1, "resize of axis -1");
  TC_CHECK(strstr(tc_str_cstr(&err), "no such axis"), "err: %s", tc_str_cstr(&err));
  TC_CHECK(g.naxes == 3 && g.nxf == 0 && o1 == -5 && o2 == -5, "a refused transform changed the graph");
  /* the boundary cases are accepted */
  TC_CHECK(tc_dg_resize(&g, b, -3, -2, &o1, &err) == 0 && g.axes[o1].extent == 1, "%s", tc_str_cstr(&err));
  TC_CHECK(tc_dg_split(&g, a, 1, 1, &o1, &o2, &err) == 0 && g.axes[o1].extent == 12 &&
               g.axes[o2].extent == 1, "%s", tc_str_cstr(&err));
  TC_CHECK(tc_dg_split(&g, c, 20, 1, &o1, &o2, &err) == 0 && g.axes[o1].extent == 1 &&
               g.axes[o2].extent == 20, "%s", tc_str_cstr(&err));
  /* huge arguments: no overflow in the extent arithmetic */
  int big = tc_dg_root(&g, 12, 3);
  TC_CHECK(tc_dg_split(&g, big, INT64_MAX, 1, &o1, &o2, &err) == 0 &&
               g.axes[o1].extent == 1 && g.axes[o2].extent == INT64_MAX, "split by INT64_MAX: %s", tc_str_cstr(&err));
  TC_CHECK(tc_dg_split(&g, big, INT64_MAX, 0, &o1, &o2, &err) == 0 &&
               g.axes[o1].extent == INT64_MAX && g.axes[o2].extent == 1, "outer split by INT64_MAX: %s", tc_str_cstr(&err));
  int na = g.naxes;
  tc_str_clear(&err);
  TC_CHECK(tc_dg_cute(&g, big, 1, 0, 2147483647, &o1, &err) == -1, "Swizzle<1,0,INT_MAX> accepted");
  TC_CHECK(strstr(tc_str_cstr(&err), "B+M+S <= 40"), "err: %s", tc_str_cstr(&err));
  tc_str_clear(&err);
  TC_CHECK(tc_dg_cute(&g, big, 2147483647, 0, 2147483647, &o1, &err) == -1,
           "Swizzle<INT_MAX,0,INT_MAX> accepted");
  TC_CHECK(g.naxes == na, "a refused swizzle changed the graph");
  tc_dg_free(&g);
}

/* Signatures tell apart axes made differently and agree on axes made the
 * same way. */
static void test_signatures(void) {
  tc_dgraph g;
  tc_dg_init(&g);
  TC_STR_LOCAL(err);
  int a = tc_dg_root(&g, 64, 0), b = tc_dg_root(&g, 64, 1), a2 = tc_dg_root(&g, 64, 0);
  int a3 = tc_dg_root(&g, 32, 0);
  TC_CHECK(g.axes[a].sig == g.axes[a2].sig, "equal roots");
  TC_CHECK(g.axes[a].sig != g.axes[b].sig && g.axes[a].sig != g.axes[a3].sig, "root position/extent");
#define SIG(x) (g.axes[x].sig)
  int o[8], i[8];
  TC_REQUIRE(tc_dg_split(&g, a, 4, 1, &o[0], &i[0], &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_dg_split(&g, a, 4, 0, &o[1], &i[1], &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_dg_split(&g, a, 8, 1, &o[2], &i[2], &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_dg_split(&g, a2, 4, 1, &o[3], &i[3], &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(SIG(o[0]) != SIG(i[0]), "outputs of one split");
  TC_CHECK(SIG(o[0]) != SIG(o[1]) && SIG(i[0]) != SIG(i[1]), "inner vs outer split");
  TC_CHECK(SIG(o[0]) != SIG(o[2]) && SIG(i[0]) != SIG(i[2]), "split factor");
  TC_CHECK(SIG(o[0]) == SIG(o[3]) && SIG(i[0]) == SIG(i[3]), "the same split twice");
  int m1, m2, m3;
  TC_REQUIRE(tc_dg_merge(&g, a, b, &m1, &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_dg_merge(&g, b, a, &m2, &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_dg_merge(&g, a2, b, &m3, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(SIG(m1) != SIG(m2) && SIG(m1) == SIG(m3), "merge order");
  int x1, y1, x2, y2;
  TC_REQUIRE(tc_dg_xor(&g, a, b, &x1, &y1, &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_dg_xor(&g, b, a, &x2, &y2, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(SIG(x1) != SIG(y1) && SIG(x1) != SIG(x2) && SIG(y1) != SIG(y2), "xor");
  TC_CHECK(SIG(x1) != SIG(a) && SIG(y1) != SIG(b), "xor outputs vs inputs");
  int c1, c2, c3, c4;
  TC_REQUIRE(tc_dg_cute(&g, a, 1, 1, 1, &c1, &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_dg_cute(&g, a, 1, 1, 2, &c2, &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_dg_cute(&g, a, 1, 2, 1, &c3, &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_dg_cute(&g, a, 2, 1, 2, &c4, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(SIG(c1) != SIG(c2) && SIG(c1) != SIG(c3) && SIG(c2) != SIG(c4) && SIG(c1) != SIG(a), "cute");
  int r1, r2, r3;
  TC_REQUIRE(tc_dg_resize(&g, a, 1, 2, &r1, &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_dg_resize(&g, a, 2, 1, &r2, &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_dg_resize(&g, a2, 1, 2, &r3, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(SIG(r1) != SIG(r2) && SIG(r1) == SIG(r3), "resize");
#undef SIG
  tc_dg_free(&g);
}

/* Splits: extents of inner and outer splits, divisible and not. */
static void test_split_extents(void) {
  tc_dgraph g;
  tc_dg_init(&g);
  TC_STR_LOCAL(err);
  int a = tc_dg_root(&g, 10, 0), o, i;
  TC_REQUIRE(tc_dg_split(&g, a, 4, 1, &o, &i, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(g.axes[o].extent == 3 && g.axes[i].extent == 4, "inner split 10 by 4");
  TC_CHECK(tc_dg_is_padded(&g, o) && tc_dg_is_padded(&g, i) && !tc_dg_is_padded(&g, a), "padding");
  TC_REQUIRE(tc_dg_split(&g, a, 4, 0, &o, &i, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(g.axes[o].extent == 4 && g.axes[i].extent == 3, "outer split 10 by 4");
  TC_REQUIRE(tc_dg_split(&g, a, 5, 0, &o, &i, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(g.axes[o].extent == 5 && g.axes[i].extent == 2 && !tc_dg_is_padded(&g, i), "outer split 10 by 5");
  char buf[32];
  TC_CHECK_STR(tc_axis_describe(&g, i, buf, sizeof buf), "iS{2}");
  TC_CHECK_STR(tc_axis_describe(&g, 999, buf, sizeof buf), "?");
  tc_dg_free(&g);
}

int main(void) {
  TC_RUN(test_random_divisible_chains);
  TC_RUN(test_random_padded_chains);
  TC_RUN(test_random_cropped_chains);
  printf("  chains: %d divisible, %d padded, %d cropping (%d with non-divisible splits, %d with "
         "resizes, %d with crops); ops: %d split, %d merge, %d xor, %d cute, %d resize; "
         "%d illegal swizzles refused; %d replays\n",
         st.chains[0], st.chains[1], st.chains[2], st.nondiv_chains, st.resize_chains,
         st.crop_chains, st.ops[TC_XF_SPLIT], st.ops[TC_XF_MERGE], st.ops[TC_XF_XOR],
         st.ops[TC_XF_CUTE], st.ops[TC_XF_RESIZE], st.illegal_attempts, st.replays);
  printf("  points: %lld leaf (%lld admitted, %lld rejected), %lld root; %d padded chains with a "
         "constant-true predicate\n",
         st.leaf_points, st.admitted, st.rejected, st.root_points, st.const_true_pred_padded);
  TC_RUN(test_xor_swizzle);
  TC_RUN(test_cute_swizzle);
  TC_RUN(test_swizzle_as_transforms);
  TC_RUN(test_history_replay);
  TC_RUN(test_errors);
  TC_RUN(test_split_extents);
  TC_RUN(test_signatures);
  TC_MAIN_END();
}
