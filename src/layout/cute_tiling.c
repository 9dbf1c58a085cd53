/* cute_tiling.c - CuTe's tiling conveniences on top of logical_divide and
 * logical_product (cute.c): the zipped, tiled and flat regroupings of their
 * modes, and the rank-sensitive blocked and raked products.  Each result is
 * the logical one with its modes moved, so that a divide or product has
 * one definition and the conveniences only rearrange it. */
#include <stdlib.h>
#include <string.h>

#include "cute.h"

#define errf(err, ...) (tc_err_set((err), __VA_ARGS__), -1)

/* Modes of l (l itself for a leaf) copied into m[*n ...]. */
static void push_modes(const tc_cute *l, tc_cute *m, int *n) {
  for (int i = 0; i < tc_cute_rank(l); i++) m[(*n)++] = tc_cute_copy(tc_cute_mode(l, i));
}

/* CuTe's zip2_by: l is a logical divide or product by `guide`, so where
 * the guide is a layout l is a pair (tile, rest), and where it is a tiler
 * <G0, G1, ...> l's mode i is the result for G_i and l's modes past the
 * tiler are kept.  Gathers the tiles into *first and the rests, then l's
 * remaining modes, into *second (copies). */
static int unzip(const tc_cute *l, const tc_cute *guide, tc_cute *first, tc_cute *second, tc_str *err) {
  if (!(guide->n > 0 && guide->tiler)) {
    if (l->n != 2) return errf(err, "internal: a divide or product that is not a pair");
    *first = tc_cute_copy(&l->m[0]);
    *second = tc_cute_copy(&l->m[1]);
    return 0;
  }
  int g = guide->n, r = tc_cute_rank(l);
  if (r < g) return errf(err, "internal: the tiler has more modes than the result");
  tc_cute *f = tc_xcalloc((size_t)g, sizeof *f), *s = tc_xcalloc((size_t)r, sizeof *s);
  int i = 0;
  for (; i < g; i++)
    if (unzip(tc_cute_mode(l, i), &guide->m[i], &f[i], &s[i], err)) break;
  if (i < g) {
    for (int j = 0; j < i; j++) tc_cute_free(&f[j]), tc_cute_free(&s[j]);
    free(f), free(s);
    return -1;
  }
  for (; i < r; i++) s[i] = tc_cute_copy(tc_cute_mode(l, i));
  *first = tc_cute_tuple(g, f);
  *second = tc_cute_tuple(r, s);
  free(f), free(s);
  return 0;
}

/* Takes over the logical result *l and writes it grouped by g to *out. */
static int regroup(tc_cute_grouping g, tc_cute *l, const tc_cute *tiler, tc_cute *out, tc_str *err) {
  if (g == TC_CUTE_LOGICAL) {
    *out = *l;
    return 0;
  }
  tc_cute first, second;
  int rc = unzip(l, tiler, &first, &second, err);
  tc_cute_free(l);
  if (rc) return -1;
  if (g == TC_CUTE_ZIPPED) {
    tc_cute two[2] = {first, second};
    *out = tc_cute_tuple(2, two);
    return 0;
  }
  /* tiled: (first, second's modes); flat: (first's modes, second's modes) */
  tc_cute *m = tc_xmalloc((size_t)(tc_cute_rank(&first) + tc_cute_rank(&second)) * sizeof *m);
  int n = 0;
  if (g == TC_CUTE_TILED) m[n++] = tc_cute_copy(&first);
  else push_modes(&first, m, &n);
  push_modes(&second, m, &n);
  *out = tc_cute_tuple(n, m);
  free(m);
  tc_cute_free(&first), tc_cute_free(&second);
  return 0;
}

/* The divide (or product) of a by b grouped by g. */
static int tiling(bool divide, tc_cute_grouping g, const tc_cute *a, const tc_cute *b, tc_cute *out, tc_str *err) {
  static const char *const prefix[] = {"logical", "zipped", "tiled", "flat"};
  memset(out, 0, sizeof *out);
  if ((unsigned)g > TC_CUTE_FLAT) return errf(err, "unknown grouping %d", (int)g);
  /* said here so that the message names the function asked for */
  if (b->n > 0 && b->tiler && b->n > tc_cute_rank(a))
    return errf(err, "%s_%s: the tiler has %d modes but the layout only %d", prefix[g],
                divide ? "divide" : "product", b->n, tc_cute_rank(a));
  tc_cute l;
  if (divide ? tc_cute_logical_divide(a, b, &l, err) : tc_cute_logical_product(a, b, &l, err)) return -1;
  return regroup(g, &l, b, out, err);
}

int tc_cute_divide(tc_cute_grouping g, const tc_cute *a, const tc_cute *b, tc_cute *out, tc_str *err) {
  return tiling(true, g, a, b, out, err);
}

int tc_cute_product(tc_cute_grouping g, const tc_cute *a, const tc_cute *b, tc_cute *out, tc_str *err) {
  return tiling(false, g, a, b, out, err);
}

/* l with 1:0 modes appended up to rank r (CuTe's append<R>). */
static tc_cute pad_rank(const tc_cute *l, int r) {
  tc_cute *m = tc_xmalloc((size_t)r * sizeof *m);
  int n = 0;
  push_modes(l, m, &n);
  while (n < r) m[n++] = tc_cute_leaf(1, 0);
  tc_cute t = tc_cute_tuple(r, m);
  free(m);
  return t;
}

/* blocked_product (raked == false) and raked_product. */
static int rank_product(const char *name, bool raked, const tc_cute *a, const tc_cute *b, tc_cute *out, tc_str *err) {
  memset(out, 0, sizeof *out);
  if ((a->n > 0 && a->tiler) || (b->n > 0 && b->tiler))
    return errf(err, "%s needs two layouts, not a tuple of layouts", name);
  int r = tc_cute_rank(a) > tc_cute_rank(b) ? tc_cute_rank(a) : tc_cute_rank(b);
  tc_cute pa = pad_rank(a, r), pb = pad_rank(b, r), p;
  int rc = tc_cute_logical_product(&pa, &pb, &p, err);
  tc_cute_free(&pa), tc_cute_free(&pb);
  if (rc) return -1;
  /* p = (A', C o B'), each of rank r: pair up their modes i */
  tc_cute *m = tc_xmalloc((size_t)r * sizeof *m);
  for (int i = 0; i < r; i++) {
    const tc_cute *x = r == 1 ? &p.m[0] : &p.m[0].m[i], *y = r == 1 ? &p.m[1] : &p.m[1].m[i];
    tc_cute two = raked ? tc_cute_pair(y, x) : tc_cute_pair(x, y);
    m[i] = tc_cute_coalesce(&two);
    tc_cute_free(&two);
  }
  *out = tc_cute_tuple(r, m);
  free(m);
  tc_cute_free(&p);
  return 0;
}

int tc_cute_blocked_product(const tc_cute *a, const tc_cute *b, tc_cute *out, tc_str *err) {
  return rank_product("blocked_product", false, a, b, out, err);
}

int tc_cute_raked_product(const tc_cute *a, const tc_cute *b, tc_cute *out, tc_str *err) {
  return rank_product("raked_product", true, a, b, out, err);
}
