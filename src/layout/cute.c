/* cute.c - CuTe layouts: construction, evaluation, the layout algebra,
 * swizzles and the text form.  (The expression parser is cute_expr.c.) */
#include "cute.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- construction --------------------------------------------------------- */

tc_cute tc_cute_leaf(int64_t shape, int64_t stride) {
  tc_cute l;
  memset(&l, 0, sizeof l);
  l.shape = shape, l.stride = stride;
  return l;
}

tc_cute tc_cute_tuple(int n, tc_cute *modes) {
  if (n == 1) return modes[0];
  tc_cute l;
  memset(&l, 0, sizeof l);
  l.n = n;
  l.m = tc_xmalloc((size_t)n * sizeof *l.m);
  memcpy(l.m, modes, (size_t)n * sizeof *l.m);
  return l;
}

tc_cute tc_cute_copy(const tc_cute *l) {
  tc_cute c = *l;
  if (l->n > 0) {
    c.m = tc_xmalloc((size_t)l->n * sizeof *c.m);
    for (int i = 0; i < l->n; i++) c.m[i] = tc_cute_copy(&l->m[i]);
  }
  return c;
}

tc_cute tc_cute_pair(const tc_cute *a, const tc_cute *b) {
  tc_cute two[2] = {tc_cute_copy(a), tc_cute_copy(b)};
  return tc_cute_tuple(2, two);
}

/* The top-level modes of l (l itself for a leaf) and x, copied, with x
 * first or last. */
static tc_cute concat(const tc_cute *l, const tc_cute *x, bool first) {
  int r = tc_cute_rank(l);
  tc_cute *m = tc_xmalloc((size_t)(r + 1) * sizeof *m);
  for (int i = 0; i < r; i++) m[first ? i + 1 : i] = tc_cute_copy(tc_cute_mode(l, i));
  m[first ? 0 : r] = tc_cute_copy(x);
  tc_cute t = tc_cute_tuple(r + 1, m);
  free(m);
  return t;
}

tc_cute tc_cute_append(const tc_cute *l, const tc_cute *x) { return concat(l, x, false); }

tc_cute tc_cute_prepend(const tc_cute *l, const tc_cute *x) { return concat(l, x, true); }

void tc_cute_free(tc_cute *l) {
  for (int i = 0; i < l->n; i++) tc_cute_free(&l->m[i]);
  free(l->m);
  memset(l, 0, sizeof *l);
}

bool tc_cute_equal(const tc_cute *a, const tc_cute *b) {
  if (a->n != b->n || a->tiler != b->tiler) return false;
  if (a->n == 0) return a->shape == b->shape && a->stride == b->stride;
  for (int i = 0; i < a->n; i++)
    if (!tc_cute_equal(&a->m[i], &b->m[i])) return false;
  return true;
}

/* ---- checked arithmetic ---------------------------------------------------- */

static int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r) || r > TC_CUTE_MAX_SIZE) return TC_CUTE_MAX_SIZE;
  return r;
}

static int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r) || r > TC_CUTE_MAX_SIZE) return TC_CUTE_MAX_SIZE;
  return r;
}

static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* Fills err and gives -1. */
#define errf(err, ...) (tc_err_set((err), __VA_ARGS__), -1)

int tc_cute_check_range(const tc_cute *l, const char *what, tc_str *err) {
  if (tc_cute_size(l) >= TC_CUTE_MAX_SIZE || tc_cute_cosize(l) >= TC_CUTE_MAX_SIZE)
    return errf(err, "%s overflows: its size or offsets do not fit in 62 bits", what);
  return 0;
}

/* ---- queries ---------------------------------------------------------------- */

int64_t tc_cute_size(const tc_cute *l) {
  if (l->n == 0) return l->shape;
  int64_t s = 1;
  for (int i = 0; i < l->n; i++) s = sat_mul(s, tc_cute_size(&l->m[i]));
  return s;
}

static int64_t max_offset(const tc_cute *l) {
  if (l->n == 0) return sat_mul(l->shape - 1, l->stride);
  int64_t s = 0;
  for (int i = 0; i < l->n; i++) s = sat_add(s, max_offset(&l->m[i]));
  return s;
}

int64_t tc_cute_cosize(const tc_cute *l) { return sat_add(max_offset(l), 1); }

int tc_cute_rank(const tc_cute *l) { return l->n == 0 ? 1 : l->n; }

int tc_cute_depth(const tc_cute *l) {
  int d = 0;
  for (int i = 0; i < l->n; i++) {
    int k = tc_cute_depth(&l->m[i]);
    if (k > d) d = k;
  }
  return l->n == 0 ? 0 : d + 1;
}

const tc_cute *tc_cute_mode(const tc_cute *l, int i) {
  if (l->n == 0) return i == 0 ? l : NULL;
  return i >= 0 && i < l->n ? &l->m[i] : NULL;
}

int64_t tc_cute_eval(const tc_cute *l, int64_t i) {
  if (l->n == 0) return (int64_t)((uint64_t)i * (uint64_t)l->stride);
  int64_t r = 0;
  for (int k = 0; k < l->n; k++) {
    if (k == l->n - 1) return r + tc_cute_eval(&l->m[k], i);
    int64_t s = tc_cute_size(&l->m[k]);
    r += tc_cute_eval(&l->m[k], i % s);
    i /= s;
  }
  return r;
}

static int flatten_into(const tc_cute *l, int64_t *shape, int64_t *stride, int cap, int k) {
  if (l->n == 0) {
    if (k < cap) shape[k] = l->shape, stride[k] = l->stride;
    return k + 1;
  }
  for (int i = 0; i < l->n; i++) k = flatten_into(&l->m[i], shape, stride, cap, k);
  return k;
}

int tc_cute_flatten(const tc_cute *l, int64_t *shape, int64_t *stride, int cap) {
  return flatten_into(l, shape, stride, cap, 0);
}

int tc_cute_leaves(const tc_cute *l) {
  if (l->n == 0) return 1;
  int k = 0;
  for (int i = 0; i < l->n; i++) k += tc_cute_leaves(&l->m[i]);
  return k;
}

/* The leaves in freshly allocated arrays (the caller frees both). */
static int flat(const tc_cute *l, int64_t **shape, int64_t **stride) {
  int n = tc_cute_leaves(l);
  *shape = tc_xmalloc((size_t)n * sizeof **shape);
  *stride = tc_xmalloc((size_t)n * sizeof **stride);
  tc_cute_flatten(l, *shape, *stride, n);
  return n;
}

/* A layout from flat lists: one leaf, or a tuple of leaves. */
static tc_cute from_flat(int n, const int64_t *shape, const int64_t *stride) {
  if (n == 1) return tc_cute_leaf(shape[0], stride[0]);
  tc_cute *m = tc_xmalloc((size_t)n * sizeof *m);
  for (int i = 0; i < n; i++) m[i] = tc_cute_leaf(shape[i], stride[i]);
  tc_cute l = tc_cute_tuple(n, m);
  free(m);
  return l;
}

/* ---- coalesce ------------------------------------------------------------------ */

static tc_cute coalesce_flat(int n, const int64_t *shape, const int64_t *stride) {
  int64_t *rs = tc_xmalloc((size_t)(n + 1) * sizeof *rs), *rd = tc_xmalloc((size_t)(n + 1) * sizeof *rd);
  int k = 1;
  rs[0] = 1, rd[0] = 0;
  for (int i = 0; i < n; i++) {
    int64_t s = shape[i], d = stride[i];
    if (s == 1) continue;
    if (rs[k - 1] == 1) {
      rs[k - 1] = s, rd[k - 1] = d;
    } else if (sat_mul(rs[k - 1], rd[k - 1]) == d && d < TC_CUTE_MAX_SIZE) {
      rs[k - 1] = sat_mul(rs[k - 1], s);
    } else {
      rs[k] = s, rd[k] = d;
      k++;
    }
  }
  tc_cute r = from_flat(k, rs, rd);
  free(rs), free(rd);
  return r;
}

tc_cute tc_cute_coalesce(const tc_cute *l) {
  int64_t *s, *d;
  int n = flat(l, &s, &d);
  tc_cute r = coalesce_flat(n, s, d);
  free(s), free(d);
  return r;
}

tc_cute tc_cute_filter(const tc_cute *l) {
  int64_t *s, *d;
  int n = flat(l, &s, &d);
  for (int i = 0; i < n; i++)
    if (d[i] == 0) s[i] = 1;
  tc_cute r = coalesce_flat(n, s, d);
  free(s), free(d);
  return r;
}

/* ---- composition ------------------------------------------------------------------ */

/* strict: B's stride must divide the mode it starts in even when B ends
 * inside that mode.  Needed when B is one mode of several: a mode that
 * takes every d-th element of an A mode of shape s with d not dividing s
 * is right on its own, but its sums with the other modes of B would carry
 * across the A mode. */
static int compose_leaf(const tc_cute *a, int64_t bs, int64_t bd, bool strict, tc_cute *out, tc_str *err) {
  if (bd == 0) {
    *out = tc_cute_leaf(bs, 0);
    return 0;
  }
  tc_cute ca = tc_cute_coalesce(a);
  int64_t *as, *ad;
  int n = flat(&ca, &as, &ad);
  tc_cute_free(&ca);
  int64_t *rs = tc_xmalloc((size_t)n * sizeof *rs), *rd = tc_xmalloc((size_t)n * sizeof *rd);
  int k = 0, rc = 0;
  int64_t rest_shape = bs, rest_stride = bd;
  for (int i = 0; i < n - 1; i++) {
    int64_t s = as[i], d = ad[i];
    int64_t next_stride = ceil_div(rest_stride, s);
    if (rest_shape == 1) { /* B is used up; only the stride moves on */
      rest_stride = next_stride;
      continue;
    }
    int64_t s1 = ceil_div(s, rest_stride); /* B's steps that fall into this mode */
    /* Stride divisibility: B's stride either steps over whole modes of A
     * (a multiple of s) or divides s; or B (a single mode) ends inside
     * this mode. */
    if (rest_stride >= s ? rest_stride % s != 0 : (s % rest_stride != 0 && (strict || rest_shape > s1))) {
      rc = errf(err,
                "composition is not defined: stride divisibility fails: the remaining stride %lld "
                "of %lld:%lld and the mode %lld:%lld of the coalesced left layout (neither divides "
                "the other)",
                (long long)rest_stride, (long long)bs, (long long)bd, (long long)s, (long long)d);
      break;
    }
    if (s1 == 1) {
      rest_stride = next_stride;
      continue;
    }
    int64_t new_shape = s1 < rest_shape ? s1 : rest_shape;
    /* Shape divisibility: what is left of B's shape continues in A's next
     * modes only when this mode takes a divisor of it. */
    if (rest_shape % new_shape != 0) {
      rc = errf(err,
                "composition is not defined: shape divisibility fails: the remaining shape %lld of "
                "%lld:%lld does not divide into the %lld steps that fit in the mode %lld:%lld of the "
                "coalesced left layout",
                (long long)rest_shape, (long long)bs, (long long)bd, (long long)new_shape, (long long)s,
                (long long)d);
      break;
    }
    rs[k] = new_shape, rd[k] = sat_mul(rest_stride, d);
    k++;
    rest_shape /= new_shape;
    rest_stride = next_stride;
  }
  if (rc == 0) {
    if (k == 0 || rest_shape != 1) rs[k] = rest_shape, rd[k] = sat_mul(rest_stride, ad[n - 1]), k++;
    *out = from_flat(k, rs, rd);
    rc = tc_cute_check_range(out, "composition", err);
    if (rc) tc_cute_free(out);
  }
  free(as), free(ad), free(rs), free(rd);
  return rc;
}

/* Puts the mode that failed in front of the message in err: "mode 1: ...",
 * and "mode 1.0: ..." when the message already named mode 0 within it. */
static int name_mode(int i, tc_str *err) {
  if (!err) return -1;
  if (!strncmp(tc_str_cstr(err), "mode ", 5)) return errf(err, "mode %d.%s", i, tc_str_cstr(err) + 5);
  tc_err_prefix(err, "mode %d: ", i);
  return -1;
}

/* Applies fn to modes i < rank(b) of a and b, keeping a's other modes. */
typedef int (*binop)(const tc_cute *, const tc_cute *, tc_cute *, tc_str *);
static int by_mode(binop fn, const char *name, const tc_cute *a, const tc_cute *b, tc_cute *out,
                   tc_str *err) {
  int ra = tc_cute_rank(a);
  if (b->n > ra)
    return errf(err, "%s: the tiler has %d modes but the layout only %d", name, b->n, ra);
  tc_cute *m = tc_xcalloc((size_t)ra, sizeof *m);
  for (int i = 0; i < ra; i++) {
    if (i >= b->n) {
      m[i] = tc_cute_copy(tc_cute_mode(a, i));
      continue;
    }
    if (fn(tc_cute_mode(a, i), &b->m[i], &m[i], err)) {
      for (int j = 0; j < i; j++) tc_cute_free(&m[j]);
      free(m);
      return name_mode(i, err);
    }
  }
  *out = tc_cute_tuple(ra, m);
  free(m);
  return 0;
}

static int compose(const tc_cute *a, const tc_cute *b, bool strict, tc_cute *out, tc_str *err) {
  memset(out, 0, sizeof *out);
  if (b->n > 0 && b->tiler) return by_mode(tc_cute_composition, "composition", a, b, out, err);
  if (b->n > 0) {
    tc_cute *m = tc_xcalloc((size_t)b->n, sizeof *m);
    for (int i = 0; i < b->n; i++) {
      if (compose(a, &b->m[i], true, &m[i], err)) {
        for (int j = 0; j < i; j++) tc_cute_free(&m[j]);
        free(m);
        return -1;
      }
    }
    *out = tc_cute_tuple(b->n, m);
    free(m);
    return 0;
  }
  return compose_leaf(a, b->shape, b->stride, strict, out, err);
}

int tc_cute_composition(const tc_cute *a, const tc_cute *b, tc_cute *out, tc_str *err) {
  return compose(a, b, false, out, err);
}

/* ---- complement ---------------------------------------------------------------------- */

typedef struct mode3 {
  int64_t stride, shape, aux;
} mode3;

static int cmp_mode3(const void *x, const void *y) {
  const mode3 *a = x, *b = y;
  if (a->stride != b->stride) return a->stride < b->stride ? -1 : 1;
  if (a->shape != b->shape) return a->shape < b->shape ? -1 : 1;
  if (a->aux != b->aux) return a->aux < b->aux ? -1 : 1;
  return 0;
}

int tc_cute_complement(const tc_cute *l, int64_t cotarget, tc_cute *out, tc_str *err) {
  memset(out, 0, sizeof *out);
  if (l->n > 0 && l->tiler) return errf(err, "complement needs a layout, not a tiler");
  if (cotarget < 1) return errf(err, "complement: the cotarget must be at least 1, got %lld", (long long)cotarget);
  int64_t *s, *d;
  int n = flat(l, &s, &d);
  mode3 *md = tc_xmalloc((size_t)n * sizeof *md);
  int k = 0;
  for (int i = 0; i < n; i++)
    if (d[i] != 0 && s[i] != 1) md[k].stride = d[i], md[k].shape = s[i], md[k].aux = 0, k++;
  qsort(md, (size_t)k, sizeof *md, cmp_mode3);
  int64_t *rs = tc_xmalloc((size_t)(k + 1) * sizeof *rs), *rd = tc_xmalloc((size_t)(k + 1) * sizeof *rd);
  int64_t cur = 1;
  int rc = 0;
  for (int i = 0; i < k; i++) {
    if (md[i].stride < cur) {
      rc = errf(err,
                "complement is not defined: the layout is not injective (its mode %lld:%lld "
                "overlaps the modes of smaller stride, which reach %lld)",
                (long long)md[i].shape, (long long)md[i].stride, (long long)cur);
      break;
    }
    rs[i] = md[i].stride / cur, rd[i] = cur;
    cur = sat_mul(md[i].shape, md[i].stride);
  }
  if (rc == 0) {
    rs[k] = ceil_div(cotarget, cur), rd[k] = cur;
    *out = coalesce_flat(k + 1, rs, rd);
    rc = tc_cute_check_range(out, "complement", err);
    if (rc) tc_cute_free(out);
  }
  free(s), free(d), free(md), free(rs), free(rd);
  return rc;
}

/* ---- divide and product ------------------------------------------------------------------ */

int tc_cute_logical_divide(const tc_cute *a, const tc_cute *b, tc_cute *out, tc_str *err) {
  memset(out, 0, sizeof *out);
  if (b->n > 0 && b->tiler) return by_mode(tc_cute_logical_divide, "logical_divide", a, b, out, err);
  tc_cute c, bc;
  if (tc_cute_complement(b, tc_cute_size(a), &c, err)) return -1;
  bc = tc_cute_pair(b, &c);
  int rc = tc_cute_composition(a, &bc, out, err);
  tc_cute_free(&c), tc_cute_free(&bc);
  return rc;
}

int tc_cute_logical_product(const tc_cute *a, const tc_cute *b, tc_cute *out, tc_str *err) {
  memset(out, 0, sizeof *out);
  if (b->n > 0 && b->tiler) return by_mode(tc_cute_logical_product, "logical_product", a, b, out, err);
  if (a->n > 0 && a->tiler) return errf(err, "logical_product needs a layout, not a tiler");
  int64_t target = sat_mul(tc_cute_size(a), tc_cute_cosize(b));
  if (target >= TC_CUTE_MAX_SIZE) return errf(err, "logical_product overflows: size(A) * cosize(B) does not fit in 62 bits");
  tc_cute c, cb;
  if (tc_cute_complement(a, target, &c, err)) return -1;
  int rc = tc_cute_composition(&c, b, &cb, err);
  if (rc == 0) {
    *out = tc_cute_pair(a, &cb);
    tc_cute_free(&cb);
    rc = tc_cute_check_range(out, "logical_product", err);
    if (rc) tc_cute_free(out);
  }
  tc_cute_free(&c);
  return rc;
}

/* ---- inverses ------------------------------------------------------------------------------- */

int tc_cute_right_inverse(const tc_cute *l, tc_cute *out, tc_str *err) {
  memset(out, 0, sizeof *out);
  if (l->n > 0 && l->tiler) return errf(err, "right_inverse needs a layout, not a tiler");
  int64_t *s, *d;
  int n = flat(l, &s, &d);
  mode3 *md = tc_xmalloc((size_t)n * sizeof *md);
  int64_t pre = 1;
  for (int i = 0; i < n; i++) {
    md[i].stride = d[i], md[i].shape = s[i], md[i].aux = pre;
    pre = sat_mul(pre, s[i]);
  }
  qsort(md, (size_t)n, sizeof *md, cmp_mode3);
  int64_t *rs = tc_xmalloc((size_t)(n + 1) * sizeof *rs), *rd = tc_xmalloc((size_t)(n + 1) * sizeof *rd);
  int k = 0;
  int64_t cur = 1;
  for (int i = 0; i < n; i++) {
    if (md[i].shape == 1 || md[i].stride == 0) continue;
    if (md[i].stride != cur) break;
    rs[k] = md[i].shape, rd[k] = md[i].aux, k++;
    cur = sat_mul(md[i].shape, md[i].stride);
  }
  if (k == 0) rs[0] = 1, rd[0] = 0, k = 1;
  *out = coalesce_flat(k, rs, rd);
  free(s), free(d), free(md), free(rs), free(rd);
  return 0;
}

int tc_cute_left_inverse(const tc_cute *l, tc_cute *out, tc_str *err) {
  memset(out, 0, sizeof *out);
  if (l->n > 0 && l->tiler) return errf(err, "left_inverse needs a layout, not a tiler");
  tc_cute c;
  if (tc_cute_complement(l, 1, &c, err)) {
    /* say which function failed */
    tc_err_prefix(err, "left_inverse is not defined: ");
    return -1;
  }
  tc_cute lc = tc_cute_pair(l, &c);
  int rc = tc_cute_right_inverse(&lc, out, err);
  tc_cute_free(&c), tc_cute_free(&lc);
  return rc;
}

/* ---- swizzles ---------------------------------------------------------------------------------- */

int tc_cute_swizzle_check(int b, int m, int s, tc_str *err) {
  int as = s < 0 ? -s : s;
  if (b < 0 || m < 0 || b > 40 || m > 40 || as > 40 || as < b || b + m + as > 40)
    return errf(err, "Swizzle<%d,%d,%d> needs B >= 0, M >= 0, |S| >= B and B + M + |S| <= 40", b,
                m, s);
  return 0;
}

int64_t tc_cute_swizzle(int b, int m, int s, int64_t x) {
  uint64_t bits = ((uint64_t)1 << b) - 1, ux = (uint64_t)x;
  if (s >= 0) return (int64_t)(ux ^ ((ux & (bits << (m + s))) >> s));
  return (int64_t)(ux ^ ((ux & (bits << m)) << -s));
}

/* ---- text ------------------------------------------------------------------------------------- */

static void print_part(tc_str *out, const tc_cute *l, int stride) {
  if (l->n == 0) {
    tc_str_printf(out, "%lld", (long long)(stride ? l->stride : l->shape));
    return;
  }
  tc_str_cat(out, "(");
  for (int i = 0; i < l->n; i++) {
    if (i) tc_str_cat(out, ",");
    print_part(out, &l->m[i], stride);
  }
  tc_str_cat(out, ")");
}

void tc_cute_print(tc_str *out, const tc_cute *l) {
  if (l->n > 0 && l->tiler) {
    tc_str_cat(out, "(");
    for (int i = 0; i < l->n; i++) {
      if (i) tc_str_cat(out, ",");
      tc_cute_print(out, &l->m[i]);
    }
    tc_str_cat(out, ")");
    return;
  }
  print_part(out, l, 0);
  tc_str_cat(out, ":");
  print_part(out, l, 1);
}

char *tc_cute_str(const tc_cute *l) {
  tc_str s;
  tc_str_init(&s);
  tc_cute_print(&s, l);
  return tc_str_take(&s);
}

/* ---- coordinates ------------------------------------------------------------------------------ */

/* The mode's name for messages: "the layout" at the top, "mode 1.0" below. */
static void mode_name(char *buf, size_t cap, const int *path, int depth) {
  if (depth == 0) {
    snprintf(buf, cap, "the layout");
    return;
  }
  size_t k = (size_t)snprintf(buf, cap, "mode %d", path[0]);
  for (int i = 1; i < depth && k < cap; i++) k += (size_t)snprintf(buf + k, cap - k, ".%d", path[i]);
}

enum { MAX_COORD_DEPTH = 64 };

static int coord_rec(const tc_cute *l, const tc_cute_value *c, int64_t *offset, const tc_cute_value **bad,
                     tc_str *err, int *path, int depth) {
  char name[160];
  if (c->kind == TC_CV_INT) {
    int64_t n = tc_cute_size(l);
    if (c->i < 0 || c->i >= n) {
      mode_name(name, sizeof name, path, depth);
      tc_str sh;
      tc_str_init(&sh);
      print_part(&sh, l, 0);
      tc_err_set(err, "coordinate %lld is outside %s (shape %s: 0..%lld)", (long long)c->i, name,
                 tc_str_cstr(&sh), (long long)n - 1);
      tc_str_free(&sh);
      *bad = c;
      return TC_CUTE_EUNDEF;
    }
    *offset = tc_cute_eval(l, c->i);
    return TC_CUTE_OK;
  }
  mode_name(name, sizeof name, path, depth);
  if (c->kind != TC_CV_TUPLE) {
    tc_err_set(err, "a coordinate is an integer or a tuple of them, got a %s for %s", tc_cute_kind_name(c->kind),
               name);
    *bad = c;
    return TC_CUTE_ESYNTAX;
  }
  if (l->n == 0 || l->n != c->n) {
    tc_str sh;
    tc_str_init(&sh);
    print_part(&sh, l, 0);
    if (l->n == 0)
      tc_err_set(err, "the coordinate has %d entries where %s is a single mode (shape %s): give it one integer",
                 c->n, name, tc_str_cstr(&sh));
    else
      tc_err_set(err, "the coordinate has %d entries where %s has rank %d (shape %s)", c->n, name, l->n,
                 tc_str_cstr(&sh));
    tc_str_free(&sh);
    *bad = c;
    return TC_CUTE_ESYNTAX;
  }
  if (depth >= MAX_COORD_DEPTH) {
    tc_err_set(err, "the coordinate is nested too deeply");
    *bad = c;
    return TC_CUTE_ESYNTAX;
  }
  int64_t sum = 0;
  for (int i = 0; i < l->n; i++) {
    int64_t x;
    path[depth] = i;
    int rc = coord_rec(&l->m[i], &c->elems[i], &x, bad, err, path, depth + 1);
    if (rc) return rc;
    sum += x;
  }
  *offset = sum;
  return TC_CUTE_OK;
}

int tc_cute_eval_coord(const tc_cute *l, const tc_cute_value *c, int64_t *offset, const tc_cute_value **bad,
                       tc_str *err) {
  int path[MAX_COORD_DEPTH];
  const tc_cute_value *b = NULL;
  *offset = 0;
  if (l->n > 0 && l->tiler) {
    tc_err_set(err, "cannot apply a tuple of layouts to a coordinate");
    if (bad) *bad = c;
    return TC_CUTE_ESYNTAX;
  }
  int rc = coord_rec(l, c, offset, &b, err, path, 0);
  if (bad) *bad = b;
  return rc;
}
