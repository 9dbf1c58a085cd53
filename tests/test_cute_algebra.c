/* test_cute_algebra.c - the rest of CuTe's layout algebra: filter, the
 * zipped / tiled / flat divides and products, the blocked and raked
 * products, make_layout / append / prepend, and L(coord) with 1-D, per-mode
 * and natural coordinates; in the C library (cute.h), in the expression
 * language, and through the public API (tc_cute_layout_* in tilec.h).
 *
 * - each operation checked as a function against its definition, over the
 *   whole domain of seeded random layouts: the value at every coordinate of
 *   the result equals what the definition composes from the pieces (the
 *   layouts, their complements, their modes), evaluated here by hand;
 * - the worked examples of CuTe's layout documentation, their results
 *   derived by hand from the definitions;
 * - errors: the mode at fault named, syntax versus undefined. */
#include "test.h"

#include "cute_test_util.h"
#include "tilec/tilec.h"

/* ------------------------------------------------------------ helpers */

/* A random layout of rank 1 to 3 whose modes are random (injective when
 * asked) trees. */
static tc_cute rand_ranked(int rank, bool injective, bool pow2) {
  if (rank <= 1) return injective ? rand_injective(pow2) : rand_any(1, pow2);
  tc_cute m[3];
  for (int i = 0; i < rank; i++) m[i] = rand_any(1, pow2);
  tc_cute l = tc_cute_tuple(rank, m);
  if (injective) assign_injective(&l, pow2);
  return l;
}

/* The offset of index x of l, computed here: x split colexicographically
 * over the leaves (the last one takes the rest), times the strides. */
static int64_t ref_eval(const tc_cute *l, int64_t x) {
  enum { N = 64 };
  int64_t s[N], d[N];
  int n = tc_cute_flatten(l, s, d, N);
  int64_t r = 0;
  for (int k = 0; k < n; k++) {
    int64_t c = k == n - 1 ? x : x % s[k];
    r += c * d[k];
    x = k == n - 1 ? 0 : x / s[k];
  }
  return r;
}

/* The same layout with 1:0 modes added up to rank r, built here. */
static tc_cute ref_pad(const tc_cute *l, int r) {
  tc_cute m[8];
  int k = tc_cute_rank(l);
  for (int i = 0; i < r; i++) m[i] = i < k ? tc_cute_copy(tc_cute_mode(l, i)) : tc_cute_leaf(1, 0);
  return tc_cute_tuple(r, m);
}

static tc_cute tiler_of(int n, tc_cute *m) {
  tc_cute t = tc_cute_tuple(n, m);
  t.tiler = n > 1;
  return t;
}

/* A random tile of at most 64 elements (injective, or any strides). */
static tc_cute rand_tile(bool injective) {
  for (;;) {
    tc_cute l = injective ? rand_injective(true) : rand_any(1, true);
    if (tc_cute_size(&l) <= 64) return l;
    tc_cute_free(&l);
  }
}

/* A random tiler for a: one layout, or a tuple of layouts for some of its
 * leading modes (nested where a mode is a tuple itself). */
static tc_cute rand_tiler(const tc_cute *a, bool injective_tiles, int depth) {
  int ra = tc_cute_rank(a);
  if (ra < 2 || rnd(3) == 0) return rand_tile(injective_tiles);
  int k = 2 + rnd(ra - 1);
  tc_cute m[3];
  for (int i = 0; i < k; i++) {
    const tc_cute *ai = tc_cute_mode(a, i);
    if (depth == 0 && ai->n >= 2 && rnd(3) == 0) m[i] = rand_tiler(ai, injective_tiles, 1);
    else m[i] = rand_tile(injective_tiles || rnd(2));
  }
  return tiler_of(k, m);
}

static bool is_tiler(const tc_cute *l) { return l->n > 0 && l->tiler; }

/* Does the tiler b reach every mode of a (so that composition(a, b) keeps
 * none of a's modes as they are)? */
static bool covers(const tc_cute *a, const tc_cute *b) {
  if (!is_tiler(b)) return true;
  if (b->n != tc_cute_rank(a)) return false;
  for (int i = 0; i < b->n; i++)
    if (!covers(tc_cute_mode(a, i), &b->m[i])) return false;
  return true;
}

typedef struct {
  const char *what; /* "zipped_divide(A, B)" for messages */
  int64_t points;   /* coordinates compared */
  int kinds[3];     /* defined cases with a layout, a tuple, a nested tiler */
} ctx;

/* 0: b is a layout; 1: a tuple of layouts; 2: a tuple with a tuple in it. */
static int tiler_kind(const tc_cute *b) {
  if (!is_tiler(b)) return 0;
  for (int i = 0; i < b->n; i++)
    if (is_tiler(&b->m[i])) return 2;
  return 1;
}

/* ------------------------------------------------------------- filter */

static void test_filter_random(void) {
  rng_state = 1801;
  int64_t points = 0;
  for (int it = 0; it < 800; it++) {
    tc_cute l = rand_ranked(1 + rnd(3), false, rnd(2));
    if (tc_cute_size(&l) > 4096) {
      tc_cute_free(&l);
      continue;
    }
    tc_cute f = tc_cute_filter(&l);
    char *sl = str(&l), *sf = str(&f);
    int64_t s[64], d[64];
    int n = tc_cute_flatten(&l, s, d, 64);
    int64_t want_size = 1;
    for (int k = 0; k < n; k++)
      if (d[k] != 0) want_size *= s[k];
    TC_CHECK(tc_cute_size(&f) == want_size, "filter(%s) = %s: size %lld, want %lld", sl, sf,
             (long long)tc_cute_size(&f), (long long)want_size);
    TC_CHECK(tc_cute_depth(&f) <= 1, "filter(%s) = %s: depth", sl, sf);
    int64_t fs[64], fd[64];
    int fn = tc_cute_flatten(&f, fs, fd, 64);
    for (int k = 0; k < fn && !(fn == 1 && fs[0] == 1); k++)
      TC_CHECK(fd[k] != 0 && fs[k] != 1, "filter(%s) = %s keeps a mode %lld:%lld", sl, sf, (long long)fs[k],
               (long long)fd[k]);
    /* every coordinate whose stride-0 entries are 0, in colex order over
     * the other leaves, has the same offset in the filtered layout */
    for (int64_t i = 0; i < tc_cute_size(&l); i++) {
      int64_t x = i, j = 0, jw = 1, want = 0;
      bool keep = true;
      for (int k = 0; k < n; k++) {
        int64_t c = x % s[k];
        x /= s[k];
        if (d[k] == 0) {
          keep = keep && c == 0;
          continue;
        }
        j += c * jw, jw *= s[k], want += c * d[k];
      }
      if (!keep) continue;
      points++;
      TC_CHECK(tc_cute_eval(&f, j) == want, "filter(%s) = %s: at %lld %lld, want %lld", sl, sf, (long long)j,
               (long long)tc_cute_eval(&f, j), (long long)want);
    }
    free(sl), free(sf);
    tc_cute_free(&l), tc_cute_free(&f);
  }
  TC_CHECK(points > 20000, "%lld points", (long long)points);
  printf("  filter: 800 random layouts, %lld points checked\n", (long long)points);
}

/* ------------------------------------------------------------- divides */

/* a divided by the layout g gave the tile `first` and the rest `second`:
 * first(t) + second(r) == a(g(t) + g*(r)) with g* = complement(g,
 * size(a)), for every t < size(g), r < size(g*) that stays in a's
 * domain. */
static void check_divided(const tc_cute *a, const tc_cute *g, const tc_cute *first, const tc_cute *second, ctx *c) {
  TC_STR_LOCAL(err);
  tc_cute gc;
  TC_REQUIRE(tc_cute_complement(g, tc_cute_size(a), &gc, &err) == 0, "%s: %s", c->what, tc_str_cstr(&err));
  TC_CHECK(tc_cute_size(first) == tc_cute_size(g) && tc_cute_size(second) == tc_cute_size(&gc),
           "%s: tile size %lld rest %lld", c->what, (long long)tc_cute_size(first), (long long)tc_cute_size(second));
  int bad = 0;
  for (int64_t t = 0; t < tc_cute_size(g) && bad < 3; t++)
    for (int64_t r = 0; r < tc_cute_size(&gc) && bad < 3; r++) {
      int64_t x = ref_eval(g, t) + ref_eval(&gc, r);
      if (x >= tc_cute_size(a)) continue;
      c->points++;
      int64_t want = ref_eval(a, x), got = ref_eval(first, t) + ref_eval(second, r);
      if (got != want) bad++;
      TC_CHECK(got == want, "%s: tile %lld rest %lld: %lld, want %lld", c->what, (long long)t, (long long)r,
               (long long)got, (long long)want);
    }
  tc_cute_free(&gc);
}

/* tiled and flat are zipped with one or both modes unpacked: the same
 * function of the 1-D index, with the ranks that the unpacking gives. */
static void check_unpacked(const tc_cute *z, const tc_cute *t, const tc_cute *f, ctx *c) {
  const tc_cute *z0 = tc_cute_mode(z, 0), *z1 = tc_cute_mode(z, 1);
  int64_t n = tc_cute_size(z), m = n < 8192 ? n : 8192; /* rests past a small A can be large */
  TC_CHECK(tc_cute_size(t) == n && same_function(z, t, m), "%s: tiled is another function", c->what);
  TC_CHECK(tc_cute_size(f) == n && same_function(z, f, m), "%s: flat is another function", c->what);
  TC_CHECK(tc_cute_rank(t) == 1 + tc_cute_rank(z1) && tc_cute_equal(tc_cute_mode(t, 0), z0),
           "%s: tiled has rank %d, mode 0 kept %d", c->what, tc_cute_rank(t), tc_cute_equal(tc_cute_mode(t, 0), z0));
  TC_CHECK(tc_cute_rank(f) == tc_cute_rank(z0) + tc_cute_rank(z1), "%s: flat has rank %d", c->what, tc_cute_rank(f));
}

/* ------------------------------------------------------------ products */

/* (a o g)(y) by CuTe's definition of a composition with a multi-mode g,
 * the concatenation of a o g_j over g's leaves s_j:d_j: the sum of
 * a(d_j y_j) over the natural coordinate y_j of y.  *inside is cleared
 * when some d_j y_j is past a's domain. */
static int64_t composed(const tc_cute *a, const tc_cute *g, int64_t y, bool *inside) {
  int64_t s[64], d[64], r = 0;
  int n = tc_cute_flatten(g, s, d, 64);
  for (int k = 0; k < n; k++) {
    int64_t yk = k == n - 1 ? y : y % s[k];
    y = k == n - 1 ? 0 : y / s[k];
    if (d[k] * yk >= tc_cute_size(a)) *inside = false;
    else r += ref_eval(a, d[k] * yk);
  }
  return r;
}

/* a multiplied by the layout g gave the block `first` and the tiles
 * `second`: first(x) + second(y) == a(x) + (a* o g)(y) with a* =
 * complement(a, size(a) * cosize(g)). */
static void check_multiplied(const tc_cute *a, const tc_cute *g, const tc_cute *first, const tc_cute *second,
                             ctx *c) {
  TC_STR_LOCAL(err);
  tc_cute ac;
  TC_REQUIRE(tc_cute_complement(a, tc_cute_size(a) * tc_cute_cosize(g), &ac, &err) == 0, "%s: %s",
             c->what, tc_str_cstr(&err));
  TC_CHECK(tc_cute_size(first) == tc_cute_size(a) && tc_cute_size(second) == tc_cute_size(g),
           "%s: block size %lld tiles %lld", c->what, (long long)tc_cute_size(first), (long long)tc_cute_size(second));
  int bad = 0;
  for (int64_t y = 0; y < tc_cute_size(g) && bad < 3; y++) {
    bool inside = true;
    int64_t agy = composed(&ac, g, y, &inside);
    if (!inside) continue;
    for (int64_t x = 0; x < tc_cute_size(a) && bad < 3; x++) {
      c->points++;
      int64_t want = ref_eval(a, x) + agy, got = ref_eval(first, x) + ref_eval(second, y);
      if (got != want) bad++;
      TC_CHECK(got == want, "%s: block %lld tile %lld: %lld, want %lld", c->what, (long long)x, (long long)y,
               (long long)got, (long long)want);
    }
  }
  tc_cute_free(&ac);
}

/* Mode by mode: a's part `a` divided (multiplied) by the tiler part g gave
 * the part `first` of a zipped result's mode 0 and the part `second` of
 * its mode 1.  A layout g is checked by check_divided or
 * check_multiplied; a tiler by mode, and a's modes past the tiler must be
 * second's last modes unchanged. */
static void check_zipped(bool divide, const tc_cute *a, const tc_cute *g, const tc_cute *first, const tc_cute *second,
                         ctx *c) {
  if (!is_tiler(g)) {
    if (divide) check_divided(a, g, first, second, c);
    else check_multiplied(a, g, first, second, c);
    return;
  }
  int k = g->n, ra = tc_cute_rank(a);
  TC_REQUIRE(tc_cute_rank(first) == k && tc_cute_rank(second) == ra, "%s: ranks %d and %d, want %d and %d", c->what,
             tc_cute_rank(first), tc_cute_rank(second), k, ra);
  for (int i = 0; i < k; i++)
    check_zipped(divide, tc_cute_mode(a, i), &g->m[i], tc_cute_mode(first, i), tc_cute_mode(second, i), c);
  for (int i = k; i < ra; i++)
    TC_CHECK(tc_cute_equal(tc_cute_mode(a, i), tc_cute_mode(second, i)), "%s: mode %d of the layout is not kept",
             c->what, i);
}

/* Random divides (or products) in the four groupings, checked against
 * their definitions: the same cases defined, the logical grouping is
 * logical_divide, the zipped one mode by mode (check_divided,
 * check_multiplied), tiled and flat its unpackings, and for divides whose
 * tiler reaches every mode the tile is composition(A, B). */
static void check_tilings(bool divide, uint64_t seed, int total) {
  rng_state = seed;
  int defined = 0;
  ctx c = {0};
  const char *name = divide ? "divide" : "product";
  for (int it = 0; it < total; it++) {
    /* a product needs an A whose complement exists */
    tc_cute a = rand_ranked(1 + rnd(3), divide ? rnd(3) != 0 : true, divide ? true : rnd(4) != 0);
    tc_cute b = rand_tiler(&a, divide, 0);
    if (tc_cute_size(&a) * (divide ? 1 : tc_cute_size(&b)) > 8192) {
      tc_cute_free(&a), tc_cute_free(&b);
      continue;
    }
    char *sa = str(&a), *sb = str(&b), what[600];
    TC_STR_LOCAL(lerr);
    tc_str err[4] = {{0}};
    tc_cute r[4], ld;
    int rc[4];
    for (int g = 0; g < 4; g++)
      rc[g] = divide ? tc_cute_divide((tc_cute_grouping)g, &a, &b, &r[g], &err[g])
                     : tc_cute_product((tc_cute_grouping)g, &a, &b, &r[g], &err[g]);
    snprintf(what, sizeof what, "zipped_%s(%s, %s)", name, sa, sb);
    c.what = what;
    TC_CHECK(rc[0] == rc[1] && rc[1] == rc[2] && rc[2] == rc[3], "%s: defined as logical %d zipped %d tiled %d flat %d",
             what, rc[0], rc[1], rc[2], rc[3]);
    if (rc[0] == 0 && rc[1] == 0 && rc[2] == 0 && rc[3] == 0) {
      defined++;
      c.kinds[tiler_kind(&b)]++;
      int lrc = divide ? tc_cute_logical_divide(&a, &b, &ld, &lerr)
                       : tc_cute_logical_product(&a, &b, &ld, &lerr);
      TC_CHECK(lrc == 0 && tc_cute_equal(&ld, &r[0]), "%s: the LOGICAL grouping is not logical_%s", what, name);
      if (lrc == 0) tc_cute_free(&ld);
      TC_CHECK(tc_cute_rank(&r[1]) == 2, "%s: rank %d", what, tc_cute_rank(&r[1]));
      if (tc_cute_rank(&r[1]) == 2) {
        check_zipped(divide, &a, &b, &r[1].m[0], &r[1].m[1], &c);
        check_unpacked(&r[1], &r[2], &r[3], &c);
        /* CuTe: layout<0>(zipped_divide(a, b)) == composition(a, b) */
        tc_cute comp;
        if (divide && covers(&a, &b) && tc_cute_composition(&a, &b, &comp, &lerr) == 0) {
          TC_CHECK(tc_cute_size(&comp) == tc_cute_size(&r[1].m[0]) &&
                       same_function(&comp, &r[1].m[0], tc_cute_size(&comp)),
                   "%s: the tile is not composition(A, B)", what);
          tc_cute_free(&comp);
        }
      }
    } else {
      TC_CHECK(strstr(tc_str_cstr(&err[0]), "not defined") || strstr(tc_str_cstr(&err[0]), "overflows"),
               "%s fails with '%s'", what, tc_str_cstr(&err[0]));
    }
    for (int g = 0; g < 4; g++) {
      if (rc[g] == 0) tc_cute_free(&r[g]);
      tc_str_free(&err[g]);
    }
    free(sa), free(sb);
    tc_cute_free(&a), tc_cute_free(&b);
  }
  TC_CHECK(defined >= total / 2 && c.points >= 60000 && c.kinds[0] >= 100 && c.kinds[1] >= 100 && c.kinds[2] >= 30,
           "%d of %d defined (tilers: %d layouts, %d tuples, %d nested), %lld points", defined, total, c.kinds[0],
           c.kinds[1], c.kinds[2], (long long)c.points);
  printf("  %ss: %d of %d random pairs defined (tilers: %d layouts, %d tuples, %d nested), %lld points checked\n",
         name, defined, total, c.kinds[0], c.kinds[1], c.kinds[2], (long long)c.points);
}

static void test_divides_random(void) { check_tilings(true, 1802, 1500); }

static void test_products_random(void) { check_tilings(false, 1803, 1500); }

/* blocked_product (raked false) and raked_product of a and b over their
 * whole domain: with R = max(rank a, rank b), both padded to R modes, and
 * a* = complement(a, size(a) * cosize(b)), the coordinate (x_0, ...,
 * x_{R-1}) of the result splits each x_i into a_i and b_i (blocked: a_i =
 * x_i % size(a_i); raked: b_i = x_i % size(b_i)) and maps to a(a_0, ...)
 * + (a* o b)(b_0, ...). */
static void check_rank_product(const tc_cute *a, const tc_cute *b, bool raked, const tc_cute *res, ctx *c) {
  TC_STR_LOCAL(err);
  int ra = tc_cute_rank(a), rb = tc_cute_rank(b), r = ra > rb ? ra : rb;
  tc_cute pa = ref_pad(a, r), pb = ref_pad(b, r), ac;
  TC_REQUIRE(tc_cute_complement(a, tc_cute_size(a) * tc_cute_cosize(b), &ac, &err) == 0, "%s", tc_str_cstr(&err));
  /* a rank-1 result is one mode, whatever its own modes */
  int rr = r == 1 ? 1 : tc_cute_rank(res);
  TC_CHECK(rr == r, "%s: rank %d, want %d", c->what, rr, r);
  int64_t ext[8], sa[8], sb[8], total = 1;
  for (int i = 0; i < r && rr == r; i++) {
    const tc_cute *mi = r == 1 ? res : tc_cute_mode(res, i);
    sa[i] = tc_cute_size(tc_cute_mode(&pa, i)), sb[i] = tc_cute_size(tc_cute_mode(&pb, i));
    ext[i] = tc_cute_size(mi);
    total *= ext[i];
    TC_CHECK(ext[i] == sa[i] * sb[i], "%s: mode %d has size %lld, want %lld", c->what, i, (long long)ext[i],
             (long long)(sa[i] * sb[i]));
    TC_CHECK(tc_cute_depth(mi) <= 1, "%s: mode %d is not coalesced", c->what, i);
  }
  if (rr == r && total == tc_cute_size(a) * tc_cute_size(b)) {
    int bad = 0;
    for (int64_t k = 0; k < total && bad < 3; k++) {
      int64_t q = k, want = 0, got = 0;
      bool inside = true;
      for (int i = 0; i < r; i++) {
        int64_t x = q % ext[i];
        q /= ext[i];
        int64_t ai = raked ? x / sb[i] : x % sa[i], bi = raked ? x % sb[i] : x / sa[i];
        want += ref_eval(tc_cute_mode(&pa, i), ai) + composed(&ac, tc_cute_mode(&pb, i), bi, &inside);
        got += ref_eval(r == 1 ? res : tc_cute_mode(res, i), x);
      }
      if (!inside) continue;
      c->points++;
      if (got != want) bad++;
      TC_CHECK(got == want, "%s: at %lld: %lld, want %lld", c->what, (long long)k, (long long)got, (long long)want);
    }
  }
  tc_cute_free(&pa), tc_cute_free(&pb), tc_cute_free(&ac);
}

static void test_blocked_raked_random(void) {
  rng_state = 1804;
  int defined = 0, total = 500;
  ctx c = {0};
  for (int it = 0; it < total; it++) {
    tc_cute a = rand_ranked(1 + rnd(3), true, rnd(4) != 0), b = rand_ranked(1 + rnd(3), rnd(2), true);
    if (tc_cute_size(&a) * tc_cute_size(&b) > 8192) {
      tc_cute_free(&a), tc_cute_free(&b);
      continue;
    }
    char *sa = str(&a), *sb = str(&b), what[600];
    TC_STR_LOCAL(err);
    for (int raked = 0; raked < 2; raked++) {
      tc_cute res;
      int rc = raked ? tc_cute_raked_product(&a, &b, &res, &err)
                     : tc_cute_blocked_product(&a, &b, &res, &err);
      snprintf(what, sizeof what, "%s(%s, %s)", raked ? "raked_product" : "blocked_product", sa, sb);
      c.what = what;
      if (rc) {
        TC_CHECK(strstr(tc_str_cstr(&err), "not defined") || strstr(tc_str_cstr(&err), "overflows"), "%s fails with '%s'",
                 what, tc_str_cstr(&err));
        continue;
      }
      defined++;
      check_rank_product(&a, &b, raked, &res, &c);
      tc_cute_free(&res);
    }
    free(sa), free(sb);
    tc_cute_free(&a), tc_cute_free(&b);
  }
  TC_CHECK(defined >= total / 2 && c.points >= 50000, "%d defined, %lld points", defined, (long long)c.points);
  printf("  blocked and raked products: %d random pairs defined, %lld points checked\n", defined, (long long)c.points);
}

/* --------------------------------------------------------- concatenation */

static void test_concatenation_random(void) {
  rng_state = 1805;
  for (int it = 0; it < 300; it++) {
    tc_cute a = rand_ranked(1 + rnd(3), false, rnd(2)), x = rand_any(0, rnd(2));
    char *sa = str(&a), *sx = str(&x);
    /* make_layout(A, X)(i + size(A) j) == A(i) + X(j) */
    tc_cute p = tc_cute_pair(&a, &x);
    for (int64_t j = 0; j < tc_cute_size(&x); j++)
      for (int64_t i = 0; i < tc_cute_size(&a); i++)
        TC_CHECK(ref_eval(&p, i + tc_cute_size(&a) * j) == ref_eval(&a, i) + ref_eval(&x, j),
                 "make_layout(%s, %s) at (%lld, %lld)", sa, sx, (long long)i, (long long)j);
    /* append / prepend: A's modes and X, in order */
    tc_cute ap = tc_cute_append(&a, &x), pp = tc_cute_prepend(&a, &x);
    int ra = tc_cute_rank(&a);
    TC_CHECK(tc_cute_rank(&ap) == ra + 1 && tc_cute_rank(&pp) == ra + 1, "append/prepend(%s, %s): ranks", sa, sx);
    for (int i = 0; i < ra && tc_cute_rank(&ap) == ra + 1; i++)
      TC_CHECK(tc_cute_equal(tc_cute_mode(&ap, i), tc_cute_mode(&a, i)) &&
                   tc_cute_equal(tc_cute_mode(&pp, i + 1), tc_cute_mode(&a, i)),
               "append/prepend(%s, %s): mode %d", sa, sx, i);
    TC_CHECK(tc_cute_equal(tc_cute_mode(&ap, ra), &x) && tc_cute_equal(tc_cute_mode(&pp, 0), &x),
             "append/prepend(%s, %s): the new mode", sa, sx);
    free(sa), free(sx);
    tc_cute_free(&a), tc_cute_free(&x), tc_cute_free(&p), tc_cute_free(&ap), tc_cute_free(&pp);
  }
}

/* ---------------------------------------------------------- coordinates */

/* The coordinate of index x of l: an integer where `how` stops (0: at the
 * top, a 1-D index; 1: one per top-level mode; 2: at the leaves, the
 * natural coordinate; 3: at random levels), else a tuple split
 * colexicographically over the modes. */
static tc_cute_value coord_of(const tc_cute *l, int64_t x, int how, int depth) {
  tc_cute_value v;
  memset(&v, 0, sizeof v);
  bool stop = l->n == 0 || how == 0 || (how == 1 && depth == 1) || (how == 3 && rnd(3) == 0);
  if (stop) {
    v.kind = TC_CV_INT, v.i = x;
    return v;
  }
  v.kind = TC_CV_TUPLE, v.n = l->n;
  v.elems = calloc((size_t)l->n, sizeof *v.elems);
  for (int k = 0; k < l->n; k++) {
    int64_t s = tc_cute_size(&l->m[k]);
    int64_t xk = k == l->n - 1 ? x : x % s;
    x = k == l->n - 1 ? 0 : x / s;
    v.elems[k] = coord_of(&l->m[k], xk, how, depth + 1);
  }
  return v;
}

static void test_coordinates_random(void) {
  rng_state = 1806;
  int64_t points = 0, texts = 0;
  for (int it = 0; it < 400; it++) {
    tc_cute l = rand_ranked(1 + rnd(3), false, rnd(2));
    if (tc_cute_size(&l) > 4096) {
      tc_cute_free(&l);
      continue;
    }
    char *sl = str(&l);
    TC_STR_LOCAL(err);
    for (int64_t i = 0; i < tc_cute_size(&l); i++) {
      int64_t want = ref_eval(&l, i);
      for (int how = 0; how < 4; how++) {
        tc_cute_value c = coord_of(&l, i, how, 0);
        const tc_cute_value *bad = NULL;
        int64_t got = -1;
        int rc = tc_cute_eval_coord(&l, &c, &got, &bad, &err);
        tc_str cs;
        tc_str_init(&cs);
        tc_cute_value_print(&cs, &c);
        points++;
        TC_CHECK(rc == TC_CUTE_OK && got == want, "%s(%s) = %lld (%s), want %lld", sl, tc_str_cstr(&cs),
                 (long long)got, rc ? tc_str_cstr(&err) : "ok", (long long)want);
        if (how == 3 && rnd(8) == 0) { /* the same through the expression language */
          char text[700];
          snprintf(text, sizeof text, "%s(%s)", sl, tc_str_cstr(&cs));
          tc_cute_error e;
          const char *r = eval_str(text, &e);
          char ws[32];
          snprintf(ws, sizeof ws, "%lld", (long long)want);
          TC_CHECK(r && !strcmp(r, ws), "%s = %s, want %s", text, r ? r : e.msg, ws);
          texts++;
        }
        tc_str_free(&cs);
        tc_cute_value_free(&c);
      }
    }
    free(sl);
    tc_cute_free(&l);
  }
  TC_CHECK(points > 20000 && texts > 100, "%lld points, %lld texts", (long long)points, (long long)texts);
  printf("  coordinates: %lld coordinates checked (%lld as expressions)\n", (long long)points, (long long)texts);
}

/* ---------------------------------------------- the documentation's examples */

static void test_known_pairs(void) {
  /* results derived by hand from the definitions (docs/layout.md) */
  static const char *const cases[][2] = {
      /* the 2-D divide of CuTe's layout-algebra documentation: A =
       * (9,(4,8)):(59,(13,1)) by <3:3, (2,4):(1,8)>, whose logical divide
       * is ((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1))) */
      {"zipped_divide((9,(4,8)):(59,(13,1)), (3:3, (2,4):(1,8)))", "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))"},
      {"tiled_divide((9,(4,8)):(59,(13,1)), (3:3, (2,4):(1,8)))", "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))"},
      {"flat_divide((9,(4,8)):(59,(13,1)), (3:3, (2,4):(1,8)))", "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))"},
      /* "the offset to the 3rd tile is zd(0,3)", the 7th zd(0,7), the
       * (1,2)th zd(0,(1,2)): the rest mode (3,(2,2)):(59,(26,1)) at 3 is
       * (0,(1,0)) -> 26, at 7 (1,(0,1)) -> 59 + 1 */
      {"zipped_divide((9,(4,8)):(59,(13,1)), (3:3, (2,4):(1,8)))(0,3)", "26"},
      {"zipped_divide((9,(4,8)):(59,(13,1)), (3:3, (2,4):(1,8)))(0,7)", "60"},
      {"zipped_divide((9,(4,8)):(59,(13,1)), (3:3, (2,4):(1,8)))(0,(1,2))", "60"},
      /* and the tile is composition(A, B) */
      {"composition((9,(4,8)):(59,(13,1)), (3:3, (2,4):(1,8)))", "(3,(2,4)):(177,(13,2))"},
      /* 1-D divides: a layout tiler divides the whole layout */
      {"zipped_divide(24:1, 4:2)", "(4,(2,3)):(2,(1,8))"},
      {"tiled_divide(24:1, 4:2)", "(4,2,3):(2,1,8)"},
      {"flat_divide(24:1, 4:2)", "(4,2,3):(2,1,8)"},
      {"zipped_divide((4,2,3):(2,1,8), 4:2)", "((2,2),(2,3)):((4,1),(2,8))"},
      {"tiled_divide((4,2,3):(2,1,8), 4:2)", "((2,2),2,3):((4,1),2,8)"},
      {"flat_divide((4,2,3):(2,1,8), 4:2)", "(2,2,2,3):(4,1,2,8)"},
      /* the modes past the tiler go to the rest */
      {"zipped_divide((8,6,5):(1,8,48), (2,3))", "((2,3),(4,2,5)):((1,8),(2,24,48))"},
      {"tiled_divide((8,6,5):(1,8,48), (2,3))", "((2,3),4,2,5):((1,8),2,24,48)"},
      {"flat_divide((8,6,5):(1,8,48), (2,3))", "(2,3,4,2,5):(1,8,2,24,48)"},
      /* products: the 1-D example (2,2):(4,1) x 6:1 and (4,2):(2,1) */
      {"zipped_product((2,2):(4,1), 6:1)", "((2,2),(2,3)):((4,1),(2,8))"},
      {"tiled_product((2,2):(4,1), 6:1)", "((2,2),2,3):((4,1),2,8)"},
      {"flat_product((2,2):(4,1), 6:1)", "(2,2,2,3):(4,1,2,8)"},
      {"tiled_product((2,2):(4,1), (4,2):(2,1))", "((2,2),4,2):((4,1),8,2)"},
      /* by mode: 2:5 x 3:1 has complement(2:5, 6) = 5:1, 5:1 x 4:1 has 4:5 */
      {"zipped_product((2,5):(5,1), (3,4))", "((2,5),(3,4)):((5,1),(1,5))"},
      {"tiled_product((2,5):(5,1), (3,4))", "((2,5),3,4):((5,1),1,5)"},
      {"flat_product((2,5):(5,1), (3,4))", "(2,5,3,4):(5,1,1,5)"},
      /* the 2x5 row-major block in a 3x4 column-major arrangement:
       * complement((2,5):(5,1), 120) = 12:10, o (3,4):(1,3) = (3,4):(10,30);
       * blocked mode 0 (2,3):(5,10) coalesces to 6:5 */
      {"blocked_product((2,5):(5,1), (3,4):(1,3))", "(6,(5,4)):(5,(1,30))"},
      {"raked_product((2,5):(5,1), (3,4):(1,3))", "((3,2),(4,5)):((10,5),(30,1))"},
      /* ranks differ: 4:1 is padded to (4,1):(1,0); complement 6:4 */
      {"blocked_product(4:1, (2,3):(1,2))", "(8,3):(1,8)"},
      {"raked_product(4:1, (2,3):(1,2))", "((2,4),3):((4,1),8)"},
      /* filter */
      {"filter((4,(1,3),2):(1,(7,0),4))", "8:1"},
      {"filter((2,2):(0,1))", "2:1"},
      {"filter((3,2):(0,0))", "1:0"},
      {"filter((2,3):(3,1))", "(2,3):(3,1)"},
      /* coordinates: (3,(2,3)):(3,(12,1)) takes the 1-D index 16, the 2-D
       * (1,5) and the natural (1,(1,2)), all 1*3 + 1*12 + 2 */
      {"(3,(2,3)):(3,(12,1))(16)", "17"},
      {"(3,(2,3)):(3,(12,1))(1,5)", "17"},
      {"(3,(2,3)):(3,(12,1))(1,(1,2))", "17"},
      {"(3,(2,3)):(3,(12,1))((1,(1,2)))", "17"},
      {"(3,(2,3)):(3,(12,1))(9)", "13"},
      {"(3,(2,3)):(3,(12,1))(0,3)", "13"},
      {"(3,(2,3)):(3,(12,1))(2,4)", "8"},
      {"(2,(2,2)):(4,(2,1))(1,2)", "5"},
      {"(Swizzle<1,0,1> o (2,2):(2,1))(1,1)", "2"},
      /* concatenation */
      {"make_layout(3:1, 4:3)", "(3,4):(1,3)"},
      {"make_layout(4:3, 3:1)", "(4,3):(3,1)"},
      {"make_layout(make_layout(3:1, 4:3), make_layout(4:3, 3:1))", "((3,4),(4,3)):((1,3),(3,1))"},
      {"make_layout(3:1)", "3:1"},
      {"make_layout(3:1, make_layout(3:1), 3:1)", "(3,3,3):(1,1,1)"},
      {"append(3:1, 4:3)", "(3,4):(1,3)"},
      {"prepend(3:1, 4:3)", "(4,3):(3,1)"},
      {"append(append(3:1, 4:3), append(3:1, 4:3))", "(3,4,(3,4)):(1,3,(1,3))"},
      {"prepend((3,4):(1,3), 5:12)", "(5,3,4):(12,1,3)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tc_cute_error e;
    const char *got = eval_str(cases[i][0], &e);
    TC_CHECK(got && strcmp(got, cases[i][1]) == 0, "%s = %s, expected %s%s%s", cases[i][0], got ? got : "(error)",
             cases[i][1], got ? "" : ": ", got ? "" : e.msg);
  }
}

/* ------------------------------------------------------------------ errors */

static void test_errors(void) {
  static const struct {
    const char *text;
    int code, column;
    const char *msg;
  } cases[] = {
      /* coordinates: the structure (syntax) or an entry (undefined) */
      {"(3,(2,3)):(3,(12,1))(1,2,3)", TC_CUTE_ESYNTAX, 22, "3 entries where the layout has rank 2"},
      {"(3,(2,3)):(3,(12,1))(1,(1,2,0))", TC_CUTE_ESYNTAX, 24, "3 entries where mode 1 has rank 2"},
      {"(3,(2,3)):(3,(12,1))((1,2),1)", TC_CUTE_ESYNTAX, 22, "mode 0 is a single mode (shape 3)"},
      {"(3,(2,3)):(3,(12,1))(3,0)", TC_CUTE_EUNDEF, 22, "coordinate 3 is outside mode 0 (shape 3: 0..2)"},
      {"(3,(2,3)):(3,(12,1))(0,(2,0))", TC_CUTE_EUNDEF, 25, "outside mode 1.0 (shape 2: 0..1)"},
      {"(3,(2,3)):(3,(12,1))(0,6)", TC_CUTE_EUNDEF, 24, "outside mode 1 (shape (2,3): 0..5)"},
      {"(3,(2,3)):(3,(12,1))(18)", TC_CUTE_EUNDEF, 22, "outside the layout's domain"},
      {"(4,2):(1,4)(1,(4,2):(1,4))", TC_CUTE_ESYNTAX, 13, "tuple of integers"},
      {"(4,2):(1,4)(Swizzle<1,1,1>)", TC_CUTE_ESYNTAX, 13, "integer or a coordinate, got a swizzle"},
      {"Swizzle<1,1,1>(1,2)", TC_CUTE_ESYNTAX, 16, "can only apply a swizzle to an integer"},
      {"(4,2):(1,4)(1,", TC_CUTE_ESYNTAX, 15, "expected an integer"},
      /* divides and products */
      {"zipped_divide((4,2):(1,4), (2,2,2))", TC_CUTE_EUNDEF, 1, "zipped_divide: the tiler has 3 modes but the layout only 2"},
      {"flat_product((4,2):(1,4), (2,2,2))", TC_CUTE_EUNDEF, 1, "flat_product: the tiler has 3 modes"},
      {"tiled_divide((4,(4,4)):(1,(4,1)), (2:1, 6:1))", TC_CUTE_EUNDEF, 1, "mode 1: composition is not defined: shape divisibility"},
      {"zipped_divide((4,((4,4),2)):(1,((4,1),32)), (2:1, (6:1, 2:1)))", TC_CUTE_EUNDEF, 1, "mode 1.0: composition is not defined"},
      {"zipped_product((2,2):(1,1), 2:1)", TC_CUTE_EUNDEF, 1, "not injective"},
      {"blocked_product((2,2):(1,1), 2:1)", TC_CUTE_EUNDEF, 1, "not injective"},
      {"blocked_product((2,5):(5,1), (3,4))", TC_CUTE_ESYNTAX, 30, "argument 2 must be a layout"},
      {"raked_product((2,5), 3:1)", TC_CUTE_ESYNTAX, 15, "argument 1 must be a layout"},
      {"zipped_divide((2,3), 2)", TC_CUTE_ESYNTAX, 15, "argument 1 must be a layout"},
      {"zipped_product(Swizzle<1,1,1> o 8:1, 2)", TC_CUTE_ESYNTAX, 16, "got a swizzled layout"},
      {"tiled_divide(24:1)", TC_CUTE_ESYNTAX, 1, "tiled_divide takes 2 arguments, got 1"},
      {"filter((2,3))", TC_CUTE_ESYNTAX, 8, "must be a layout"},
      {"append(3:1)", TC_CUTE_ESYNTAX, 1, "append takes 2 arguments"},
      {"prepend(3:1, (2,2))", TC_CUTE_ESYNTAX, 14, "argument 2 must be a layout"},
      {"zipped_division(24:1, 4:2)", TC_CUTE_ESYNTAX, 1, "unknown function 'zipped_division'"},
      /* concatenations past 2^62 elements */
      {"append((1048576,1048576):(1,1048576), (1048576,1048576):(1,1048576))", TC_CUTE_EUNDEF, 1,
       "append overflows"},
      {"size(make_layout((1048576,1048576):(1,1048576), (1048576,1048576):(1,1048576)))", TC_CUTE_EUNDEF, 6,
       "make_layout overflows"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tc_cute_error e;
    const char *got = eval_str(cases[i].text, &e);
    TC_CHECK(!got, "'%s' gave %s", cases[i].text, got);
    if (got) continue;
    TC_CHECK(e.code == cases[i].code && e.column == cases[i].column && strstr(e.msg, cases[i].msg),
             "'%s': code %d column %d '%s', expected code %d column %d '%s'", cases[i].text, e.code, e.column, e.msg,
             cases[i].code, cases[i].column, cases[i].msg);
  }
  /* the unknown-function message lists the new names */
  tc_cute_error e;
  TC_CHECK(!eval_str("frob(1)", &e) && strstr(e.msg, "zipped_divide") && strstr(e.msg, "raked_product") &&
               strstr(e.msg, "filter") && strstr(e.msg, "prepend"),
           "%s", e.msg);
  /* a swizzled layout keeps its swizzle through a divide */
  const char *r = eval_str("zipped_divide(Swizzle<3,4,3> o (8,64):(64,1), (2,8))", &e);
  TC_CHECK(r && !strcmp(r, "Swizzle<3,4,3> o ((2,8),(4,8)):((64,1),(128,8))"), "%s", r ? r : e.msg);
}

/* ------------------------------------------------------------ public API */

static tc_cute_layout *P(const char *text) {
  tc_cute_layout *l = NULL;
  char err[300];
  if (tc_cute_layout_parse(text, &l, err, sizeof err) != TC_OK) fprintf(stderr, "parse %s: %s\n", text, err);
  return l;
}

/* Checks the printed form of l and frees it. */
#define CHECK_LAYOUT(l, want)                                     \
  do {                                                            \
    char *s_ = tc_cute_layout_str(l);                             \
    TC_CHECK(s_ && !strcmp(s_, want), "got %s, want %s", s_, want); \
    free(s_);                                                     \
    tc_cute_layout_free(l);                                       \
  } while (0)

static void test_public_api(void) {
  char err[400];
  tc_cute_layout *a = P("(9,(4,8)):(59,(13,1))"), *t0 = P("3:3"), *t1 = P("(2,4):(1,8)"), *r = NULL, *tile = NULL;
  TC_REQUIRE(a && t0 && t1, "parse");
  TC_CHECK_EQ_INT(tc_cute_layout_size(a), 288);
  TC_CHECK_EQ_INT(tc_cute_layout_rank(a), 2);
  TC_CHECK_EQ_INT(tc_cute_layout_cosize(a), 8 * 59 + 3 * 13 + 7 + 1);
  const tc_cute_layout *tm[2] = {t0, t1};
  TC_REQUIRE(tc_cute_layout_tile(2, tm, &tile, err, sizeof err) == TC_OK, "%s", err);
  static const char *const div_want[4] = {
      "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))", "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))",
      "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))", "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))"};
  for (int g = 0; g < 4; g++) {
    TC_CHECK(tc_cute_layout_divide((tc_cute_grouping)g, a, tile, &r, err, sizeof err) == TC_OK, "divide %d: %s", g,
             err);
    CHECK_LAYOUT(r, div_want[g]);
  }
  /* zd(0,3) per mode, zd(0,(1,2)) as a natural coordinate */
  TC_REQUIRE(tc_cute_layout_divide(TC_CUTE_ZIPPED, a, tile, &r, err, sizeof err) == TC_OK, "%s", err);
  int64_t off = -1, c2[2] = {0, 3}, nat[6] = {0, 0, 0, 1, 0, 1};
  TC_CHECK(tc_cute_layout_at(r, 2, c2, &off, err, sizeof err) == TC_OK && off == 26, "zd(0,3) = %lld", (long long)off);
  TC_CHECK(tc_cute_layout_at(r, 6, nat, &off, err, sizeof err) == TC_OK && off == 60, "zd natural = %lld",
           (long long)off);
  int64_t one = 3 * 8 * 3; /* the 1-D index of zd(0, 3) */
  TC_CHECK(tc_cute_layout_at(r, 1, &one, &off, err, sizeof err) == TC_OK && off == 26, "zd(72) = %lld", (long long)off);
  int64_t c3[3] = {0, 0, 0};
  TC_CHECK(tc_cute_layout_at(r, 3, c3, &off, err, sizeof err) == TC_ERR_ARGUMENT && strstr(err, "1 (an index), 2"),
           "%s", err);
  c2[1] = 12;
  TC_CHECK(tc_cute_layout_at(r, 2, c2, &off, err, sizeof err) == TC_ERR_ARGUMENT && strstr(err, "outside mode 1"), "%s",
           err);
  tc_cute_layout *m0 = NULL, *comp = NULL;
  TC_REQUIRE(tc_cute_layout_mode(r, 0, &m0, err, sizeof err) == TC_OK, "%s", err);
  TC_REQUIRE(tc_cute_layout_composition(a, tile, &comp, err, sizeof err) == TC_OK, "%s", err);
  char *s0 = tc_cute_layout_str(m0), *sc = tc_cute_layout_str(comp);
  TC_CHECK(!strcmp(s0, sc), "layout<0>(zd) = %s, composition = %s", s0, sc);
  free(s0), free(sc);
  tc_cute_layout_free(m0), tc_cute_layout_free(comp), tc_cute_layout_free(r);
  TC_CHECK(tc_cute_layout_mode(a, 2, &m0, err, sizeof err) == TC_ERR_ARGUMENT && !m0 && strstr(err, "rank 2"), "%s",
           err);

  /* products */
  tc_cute_layout *blk = P("(2,5):(5,1)"), *arr = P("(3,4):(1,3)");
  TC_REQUIRE(blk && arr, "parse");
  TC_CHECK(tc_cute_layout_blocked_product(blk, arr, &r, err, sizeof err) == TC_OK, "%s", err);
  CHECK_LAYOUT(r, "(6,(5,4)):(5,(1,30))");
  TC_CHECK(tc_cute_layout_raked_product(blk, arr, &r, err, sizeof err) == TC_OK, "%s", err);
  CHECK_LAYOUT(r, "((3,2),(4,5)):((10,5),(30,1))");
  TC_CHECK(tc_cute_layout_product(TC_CUTE_TILED, blk, arr, &r, err, sizeof err) == TC_OK, "%s", err);
  char *sr = tc_cute_layout_str(r);
  TC_CHECK(tc_cute_layout_rank(r) == 3, "tiled_product = %s", sr);
  free(sr);
  tc_cute_layout_free(r);
  TC_CHECK(tc_cute_layout_blocked_product(blk, tile, &r, err, sizeof err) == TC_ERR_ARGUMENT && !r &&
               strstr(err, "not a tuple of layouts"),
           "%s", err);
  /* concatenation, filter, coalesce, complement */
  const tc_cute_layout *two[2] = {blk, arr};
  TC_CHECK(tc_cute_layout_make(2, two, &r, err, sizeof err) == TC_OK, "%s", err);
  CHECK_LAYOUT(r, "((2,5),(3,4)):((5,1),(1,3))");
  TC_CHECK(tc_cute_layout_append(blk, arr, &r, err, sizeof err) == TC_OK, "%s", err);
  CHECK_LAYOUT(r, "(2,5,(3,4)):(5,1,(1,3))");
  TC_CHECK(tc_cute_layout_prepend(blk, arr, &r, err, sizeof err) == TC_OK, "%s", err);
  CHECK_LAYOUT(r, "((3,4),2,5):((1,3),5,1)");
  tc_cute_layout *z = P("(4,(1,3),2):(1,(7,0),4)");
  TC_CHECK(tc_cute_layout_filter(z, &r, err, sizeof err) == TC_OK, "%s", err);
  CHECK_LAYOUT(r, "8:1");
  TC_CHECK(tc_cute_layout_coalesce(z, &r, err, sizeof err) == TC_OK, "%s", err);
  CHECK_LAYOUT(r, "(4,3,2):(1,0,4)");
  TC_CHECK(tc_cute_layout_complement(t0, 24, &r, err, sizeof err) == TC_OK, "%s", err);
  CHECK_LAYOUT(r, "(3,3):(1,9)");
  tc_cute_layout_free(z);
  /* errors */
  TC_CHECK(tc_cute_layout_parse("(2,3)", &r, err, sizeof err) == TC_ERR_ARGUMENT && !r &&
               strstr(err, "tc_cute_layout_tile"),
           "%s", err);
  TC_CHECK(tc_cute_layout_parse("(2,3", &r, err, sizeof err) == TC_ERR_ARGUMENT && strstr(err, "column 5"), "%s", err);
  TC_CHECK(tc_cute_layout_parse("(2,3", &r, NULL, 0) == TC_ERR_ARGUMENT && !r, "NULL err");
  TC_CHECK(tc_cute_layout_tile(1, tm, &r, err, sizeof err) == TC_ERR_ARGUMENT && strstr(err, "at least 2"), "%s", err);
  TC_CHECK(tc_cute_layout_filter(tile, &r, err, sizeof err) == TC_ERR_ARGUMENT && strstr(err, "not a tiler"), "%s", err);
  tc_cute_layout *bad = P("(4,(4,4)):(1,(4,1))"), *tb = NULL, *u0 = P("2:1"), *u1 = P("6:1");
  const tc_cute_layout *um[2] = {u0, u1};
  TC_REQUIRE(bad && u0 && u1 && tc_cute_layout_tile(2, um, &tb, err, sizeof err) == TC_OK, "%s", err);
  TC_CHECK(tc_cute_layout_divide(TC_CUTE_ZIPPED, bad, tb, &r, err, sizeof err) == TC_ERR_ARGUMENT && !r &&
               strstr(err, "mode 1: composition is not defined"),
           "%s", err);
  TC_CHECK(tc_cute_layout_divide((tc_cute_grouping)7, bad, tb, &r, err, sizeof err) == TC_ERR_ARGUMENT, "grouping 7");
  tc_cute_layout_free(bad), tc_cute_layout_free(tb), tc_cute_layout_free(u0), tc_cute_layout_free(u1);
  tc_cute_layout *big = P("(1048576,1048576):(1,1048576)");
  TC_CHECK(big && tc_cute_layout_append(big, big, &r, err, sizeof err) == TC_ERR_ARGUMENT && !r &&
               strstr(err, "append overflows"),
           "%s", err);
  tc_cute_layout_free(big);
  tc_cute_layout_free(blk), tc_cute_layout_free(arr);
  tc_cute_layout_free(a), tc_cute_layout_free(t0), tc_cute_layout_free(t1), tc_cute_layout_free(tile);
  tc_cute_layout_free(NULL);
}

int main(void) {
  TC_RUN(test_filter_random);
  TC_RUN(test_divides_random);
  TC_RUN(test_products_random);
  TC_RUN(test_blocked_raked_random);
  TC_RUN(test_concatenation_random);
  TC_RUN(test_coordinates_random);
  TC_RUN(test_known_pairs);
  TC_RUN(test_errors);
  TC_RUN(test_public_api);
  TC_MAIN_END();
}
