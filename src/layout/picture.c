/* picture.c - tiles from the CuTe form, the transform form (built on the
 * axis graph of domain.h) and TV layouts; bijectivity; bank conflicts.
 * The SVG writer is picture_svg.c. */
#include "picture.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../expr/expr.h"
#include "domain.h"

void tc_tile_free(tc_tile *t) {
  free(t->off), free(t->canon), free(t->expr), free(t->vars);
  free(t->owner_t), free(t->owner_v);
  memset(t, 0, sizeof *t);
}

static int seterr(tc_cute_error *e, int code, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int seterr(tc_cute_error *e, int code, int col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  e->code = code, e->column = col;
  return code;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* cosize, injective, bijective from the offsets. */
static void finish_offsets(tc_tile *t) {
  int64_t *s = tc_xmalloc((size_t)t->size * sizeof *s);
  memcpy(s, t->off, (size_t)t->size * sizeof *s);
  qsort(s, (size_t)t->size, sizeof *s, cmp_i64);
  t->injective = true;
  for (int64_t i = 1; i < t->size; i++)
    if (s[i] == s[i - 1]) t->injective = false;
  t->cosize = s[t->size - 1] + 1;
  t->bijective = t->injective && s[0] == 0 && t->cosize == t->size;
  free(s);
}

/* ---- CuTe form ------------------------------------------------------------------- */

/* Evaluates text to a layout or swizzled layout (an integer n means n:1). */
static int eval_layout(const char *text, tc_cute_value *v, tc_cute_error *e, const char *what) {
  int rc = tc_cute_eval_expr(text, v, e);
  if (rc) return rc;
  if (v->kind == TC_CV_INT && v->i >= 1) {
    int64_t n = v->i;
    tc_cute_value_free(v);
    v->kind = TC_CV_LAYOUT, v->l = tc_cute_leaf(n, 1), v->col = 1;
  }
  if ((v->kind != TC_CV_LAYOUT && v->kind != TC_CV_SWLAYOUT) || v->l.tiler) {
    const char *k = v->kind == TC_CV_LAYOUT ? "tuple of layouts" : tc_cute_kind_name(v->kind);
    tc_cute_value_free(v);
    return seterr(e, TC_CUTE_ESYNTAX, 1, "%s must be a layout or a swizzled layout, got a %s", what, k);
  }
  if (tc_cute_size(&v->l) > TC_TILE_MAX_ELEMS) {
    int64_t n = tc_cute_size(&v->l);
    tc_cute_value_free(v);
    return seterr(e, TC_CUTE_ESYNTAX, 1, "the layout has %lld elements; at most %lld are analysed", (long long)n,
                  (long long)TC_TILE_MAX_ELEMS);
  }
  return 0;
}

static int parse_cute(const char *text, tc_tile *t, tc_cute_error *e) {
  tc_cute_value v;
  int rc = eval_layout(text, &v, e, "the tile");
  if (rc) return rc;
  t->form = TC_TILE_CUTE;
  t->size = tc_cute_size(&v.l);
  t->rows = v.l.n == 0 ? 1 : tc_cute_size(&v.l.m[0]);
  t->cols = t->size / t->rows;
  t->off = tc_xmalloc((size_t)t->size * sizeof *t->off);
  for (int64_t r = 0; r < t->rows; r++)
    for (int64_t c = 0; c < t->cols; c++) {
      int64_t o = tc_cute_eval(&v.l, r + t->rows * c);
      if (v.kind == TC_CV_SWLAYOUT) o = tc_cute_swizzle(v.b, v.m, v.s, o);
      t->off[r * t->cols + c] = o;
    }
  tc_str s;
  tc_str_init(&s);
  tc_cute_value_print(&s, &v);
  t->canon = tc_str_take(&s);
  tc_cute_value_free(&v);
  finish_offsets(t);
  t->alloc = t->cosize;
  return 0;
}

/* ---- transform form ----------------------------------------------------------------- */

typedef struct xp {
  const char *s;
  size_t pos;
  tc_cute_error *e;
} xp;

static void xws(xp *p) {
  while (p->s[p->pos] && isspace((unsigned char)p->s[p->pos])) p->pos++;
}

static int xfound(xp *p, const char *want) {
  xws(p);
  char c = p->s[p->pos];
  if (!c) return seterr(p->e, TC_CUTE_ESYNTAX, (int)p->pos + 1, "expected %s, found the end of the layout", want);
  return seterr(p->e, TC_CUTE_ESYNTAX, (int)p->pos + 1, "expected %s, found '%c'", want, c);
}

static int xexpect(xp *p, char c) {
  xws(p);
  if (p->s[p->pos] == c) {
    p->pos++;
    return 0;
  }
  char want[8] = {'\'', c, '\'', 0};
  return xfound(p, want);
}

static int xint(xp *p, int64_t *v, int64_t lo, const char *what) {
  xws(p);
  size_t start = p->pos;
  int neg = p->s[p->pos] == '-';
  if (neg) p->pos++;
  if (!isdigit((unsigned char)p->s[p->pos])) {
    p->pos = start;
    return xfound(p, what);
  }
  int64_t x = 0;
  while (isdigit((unsigned char)p->s[p->pos])) {
    x = x * 10 + (p->s[p->pos++] - '0');
    if (x > ((int64_t)1 << 31))
      return seterr(p->e, TC_CUTE_ESYNTAX, (int)start + 1, "%s too large (at most 2^31)", what);
  }
  if (neg) x = -x;
  if (x < lo) return seterr(p->e, TC_CUTE_ESYNTAX, (int)start + 1, "%s must be at least %lld, got %lld", what, (long long)lo, (long long)x);
  *v = x;
  return 0;
}

enum { MAX_RANK = 8, MAX_AXES = 64, MAX_ARGS = 64 };

static const char *const VAR2[] = {"r", "c"};

static int parse_xform(const char *text, tc_tile *t, tc_cute_error *e) {
  xp p = {text, 0, e};
  tc_dgraph g;
  tc_dg_init(&g);
  int cur[MAX_AXES], ncur = 0, rc = 0, nroots = 0;
  int64_t ext[MAX_RANK];
  if ((rc = xexpect(&p, '['))) goto out;
  for (;;) {
    if (nroots == MAX_RANK) {
      rc = seterr(e, TC_CUTE_ESYNTAX, (int)p.pos + 1, "at most %d dimensions", MAX_RANK);
      goto out;
    }
    if ((rc = xint(&p, &ext[nroots], 1, "an extent"))) goto out;
    cur[ncur++] = tc_dg_root(&g, ext[nroots], nroots);
    nroots++;
    xws(&p);
    if (p.s[p.pos] == ',') {
      p.pos++;
      continue;
    }
    if ((rc = xexpect(&p, ']'))) goto out;
    break;
  }
  int64_t size = 1;
  for (int i = 0; i < nroots; i++) {
    size *= ext[i];
    if (size > TC_TILE_MAX_ELEMS) {
      rc = seterr(e, TC_CUTE_ESYNTAX, 1, "the tile has more than %lld elements", (long long)TC_TILE_MAX_ELEMS);
      goto out;
    }
  }
  for (;;) {
    xws(&p);
    if (!p.s[p.pos]) break;
    size_t op_pos = p.pos;
    int op_col = (int)op_pos + 1;
    char name[24];
    size_t n = 0;
    while (isalnum((unsigned char)p.s[p.pos]) || p.s[p.pos] == '_') {
      if (n + 1 < sizeof name) name[n++] = p.s[p.pos];
      p.pos++;
    }
    name[n] = 0;
    if (n == 0) {
      rc = xfound(&p, "a transform (split, split_outer, merge, xor, swizzle, reorder, pad)");
      goto out;
    }
    int64_t a[MAX_ARGS];
    int na = 0;
    if ((rc = xexpect(&p, '('))) goto out;
    for (;;) {
      if (na == MAX_ARGS) {
        rc = seterr(e, TC_CUTE_ESYNTAX, (int)p.pos + 1, "too many arguments");
        goto out;
      }
      if ((rc = xint(&p, &a[na++], -((int64_t)1 << 31), "an integer"))) goto out;
      xws(&p);
      if (p.s[p.pos] == ',') {
        p.pos++;
        continue;
      }
      if ((rc = xexpect(&p, ')'))) goto out;
      break;
    }
    struct {
      const char *name;
      int nargs, naxes; /* how many of the first arguments are axis positions */
    } const ops[] = {{"split", 2, 1}, {"split_outer", 2, 1}, {"merge", 2, 2}, {"xor", 2, 2},
                     {"swizzle", 4, 1}, {"reorder", -1, 0}, {"pad", 3, 1}};
    int k = -1;
    for (int i = 0; i < (int)(sizeof ops / sizeof ops[0]); i++)
      if (!strcmp(ops[i].name, name)) k = i;
    if (k < 0) {
      rc = seterr(e, TC_CUTE_ESYNTAX, op_col,
                  "unknown transform '%s' (known: split, split_outer, merge, xor, swizzle, reorder, pad)", name);
      goto out;
    }
    if (ops[k].nargs >= 0 && na != ops[k].nargs) {
      rc = seterr(e, TC_CUTE_ESYNTAX, op_col, "%s takes %d arguments, got %d", name, ops[k].nargs, na);
      goto out;
    }
    for (int i = 0; i < ops[k].naxes; i++)
      if (a[i] < 0 || a[i] >= ncur) {
        rc = seterr(e, TC_CUTE_ESYNTAX, op_col, "%s: there is no axis %lld; the axes are 0..%d", name,
                    (long long)a[i], ncur - 1);
        goto out;
      }
    tc_str err = {0};
    int o1 = -1, o2 = -1, bad = 0;
    if (k == 0 || k == 1) {
      if (a[1] < 1) {
        rc = seterr(e, TC_CUTE_ESYNTAX, op_col, "%s: the factor must be at least 1", name);
        goto out;
      }
      if (ncur == MAX_AXES) {
        rc = seterr(e, TC_CUTE_ESYNTAX, op_col, "too many axes (at most %d)", MAX_AXES);
        goto out;
      }
      bad = tc_dg_split(&g, cur[a[0]], a[1], k == 0, &o1, &o2, &err);
      if (!bad) {
        memmove(&cur[a[0] + 2], &cur[a[0] + 1], (size_t)(ncur - a[0] - 1) * sizeof cur[0]);
        cur[a[0]] = o1, cur[a[0] + 1] = o2;
        ncur++;
      }
    } else if (k == 2) {
      if (a[0] == a[1]) {
        rc = seterr(e, TC_CUTE_ESYNTAX, op_col, "merge needs two different axes");
        goto out;
      }
      bad = tc_dg_merge(&g, cur[a[0]], cur[a[1]], &o1, &err);
      if (!bad) {
        cur[a[0]] = o1;
        memmove(&cur[a[1]], &cur[a[1] + 1], (size_t)(ncur - a[1] - 1) * sizeof cur[0]);
        ncur--;
      }
    } else if (k == 3) {
      if (a[0] == a[1]) {
        rc = seterr(e, TC_CUTE_ESYNTAX, op_col, "xor needs two different axes");
        goto out;
      }
      bad = tc_dg_xor(&g, cur[a[0]], cur[a[1]], &o1, &o2, &err);
      if (!bad) cur[a[0]] = o1, cur[a[1]] = o2;
    } else if (k == 4) {
      bad = tc_dg_cute(&g, cur[a[0]], (int)a[1], (int)a[2], (int)a[3], &o1, &err);
      if (!bad) cur[a[0]] = o1;
    } else if (k == 5) {
      if (na != ncur) {
        rc = seterr(e, TC_CUTE_ESYNTAX, op_col, "reorder takes a permutation of all %d axes, got %d entries", ncur, na);
        goto out;
      }
      int next[MAX_AXES];
      bool seen[MAX_AXES] = {false};
      for (int i = 0; i < na; i++) {
        if (a[i] < 0 || a[i] >= ncur || seen[a[i]]) {
          rc = seterr(e, TC_CUTE_ESYNTAX, op_col, "reorder takes a permutation of 0..%d", ncur - 1);
          goto out;
        }
        seen[a[i]] = true;
        next[i] = cur[a[i]];
      }
      memcpy(cur, next, (size_t)ncur * sizeof cur[0]);
    } else {
      if (a[1] < 0 || a[2] < 0) {
        rc = seterr(e, TC_CUTE_ESYNTAX, op_col, "pad amounts must be at least 0");
        goto out;
      }
      bad = tc_dg_resize(&g, cur[a[0]], a[1], a[2], &o1, &err);
      if (!bad) cur[a[0]] = o1;
    }
    if (bad) {
      rc = seterr(e, TC_CUTE_EUNDEF, op_col, "%s: %s", name, tc_str_cstr(&err));
      tc_str_free(&err);
      goto out;
    }
  }

  /* Offsets: the final axes' values from the roots, linearized row-major. */
  int64_t alloc = 1;
  for (int i = 0; i < ncur; i++) {
    if (__builtin_mul_overflow(alloc, g.axes[cur[i]].extent, &alloc) || alloc > ((int64_t)1 << 40)) {
      rc = seterr(e, TC_CUTE_EUNDEF, 1, "the allocation is larger than 2^40 elements");
      goto out;
    }
  }
  tc_epool *ep = tc_epool_new();
  const tc_expr **vals = tc_xcalloc((size_t)g.naxes, sizeof *vals);
  tc_str names;
  tc_str_init(&names);
  for (int i = 0; i < nroots; i++) {
    char nm[16];
    if (nroots == 1) snprintf(nm, sizeof nm, "i");
    else if (nroots == 2) snprintf(nm, sizeof nm, "%s", VAR2[i]);
    else snprintf(nm, sizeof nm, "i%d", i);
    vals[i] = tc_e_var(ep, nm, 0, ext[i] - 1); /* roots are axes 0..nroots-1 */
    tc_str_printf(&names, "%s%s", i ? ", " : "", nm);
  }
  tc_dg_walk(ep, &g, vals, NULL);
  const tc_expr *offset = tc_e_const(ep, 0);
  int64_t stride = 1;
  for (int i = 0; i < ncur; i++)
    if (!vals[cur[i]]) { /* cannot happen: every transform maps forward */
      free(vals);
      tc_str_free(&names);
      tc_epool_free(ep);
      rc = seterr(e, TC_CUTE_EUNDEF, 1, "internal error: an axis has no index");
      goto out;
    }
  for (int i = ncur - 1; i >= 0; i--) {
    offset = tc_e_add(ep, offset, tc_e_mulc(ep, vals[cur[i]], stride));
    stride *= g.axes[cur[i]].extent;
  }
  offset = tc_simplify(ep, offset);
  tc_str es;
  tc_str_init(&es);
  tc_e_print_c(&es, ep, offset);
  t->form = TC_TILE_XFORM;
  t->expr = tc_str_take(&es);
  t->vars = tc_str_take(&names);
  t->rows = nroots == 1 ? 1 : ext[0];
  t->size = size;
  t->cols = size / t->rows;
  t->alloc = alloc;
  t->off = tc_xmalloc((size_t)size * sizeof *t->off);
  int64_t iv[MAX_RANK];
  for (int64_t r = 0; r < t->rows; r++)
    for (int64_t c = 0; c < t->cols; c++) {
      if (nroots == 1) {
        iv[0] = c;
      } else {
        iv[0] = r;
        int64_t rest = c;
        for (int i = nroots - 1; i >= 1; i--) iv[i] = rest % ext[i], rest /= ext[i];
      }
      t->off[r * t->cols + c] = tc_e_eval(offset, iv);
    }
  free(vals);
  tc_epool_free(ep);
  finish_offsets(t);
out:
  tc_dg_free(&g);
  return rc;
}

int tc_tile_parse(const char *text, tc_tile *t, tc_cute_error *e) {
  memset(t, 0, sizeof *t);
  memset(e, 0, sizeof *e);
  const char *s = text;
  while (*s && isspace((unsigned char)*s)) s++;
  int rc = *s == '[' ? parse_xform(text, t, e) : parse_cute(text, t, e);
  if (rc) tc_tile_free(t);
  return rc;
}

/* ---- TV layouts ------------------------------------------------------------------------ */

int tc_tile_parse_tv(const char *text, int64_t rows, int64_t cols, tc_tile *t, tc_cute_error *e) {
  memset(t, 0, sizeof *t);
  memset(e, 0, sizeof *e);
  if (rows < 1 || cols < 1 || rows > TC_TILE_MAX_ELEMS / cols)
    return seterr(e, TC_CUTE_ESYNTAX, 1, "the tile must have between 1 and %lld elements", (long long)TC_TILE_MAX_ELEMS);
  tc_cute_value v;
  int rc = eval_layout(text, &v, e, "a TV layout");
  if (rc) return rc;
  if (v.kind != TC_CV_LAYOUT || v.l.n < 2) {
    tc_cute_value_free(&v);
    return seterr(e, TC_CUTE_ESYNTAX, 1, "a TV layout has two modes, (threads, values)");
  }
  t->form = TC_TILE_TV;
  t->rows = rows, t->cols = cols, t->size = rows * cols;
  t->threads = tc_cute_size(&v.l.m[0]);
  t->values = tc_cute_size(&v.l) / t->threads;
  t->owner_t = tc_xmalloc((size_t)t->size * sizeof *t->owner_t);
  t->owner_v = tc_xmalloc((size_t)t->size * sizeof *t->owner_v);
  for (int64_t i = 0; i < t->size; i++) t->owner_t[i] = t->owner_v[i] = -1;
  for (int64_t val = 0; val < t->values; val++)
    for (int64_t th = 0; th < t->threads; th++) {
      int64_t idx = tc_cute_eval(&v.l, th + t->threads * val);
      if (idx >= t->size) {
        t->outside++;
        continue;
      }
      int64_t el = (idx % rows) * cols + idx / rows;
      if (t->owner_t[el] >= 0) {
        t->dup++;
        continue;
      }
      t->owner_t[el] = (int32_t)th, t->owner_v[el] = (int32_t)val;
    }
  for (int64_t i = 0; i < t->size; i++) t->missing += t->owner_t[i] < 0;
  tc_str s;
  tc_str_init(&s);
  tc_cute_value_print(&s, &v);
  t->canon = tc_str_take(&s);
  tc_cute_value_free(&v);
  t->injective = t->dup == 0 && t->outside == 0;
  t->bijective = t->injective && t->missing == 0;
  return 0;
}

/* ---- bank conflicts ----------------------------------------------------------------------- */

enum { WARP = 32, BANKS = 32 };

static int phase_threads(const tc_bank_opts *o) {
  int tb = o->vec * o->elem_bytes;
  if (tb <= 4) return WARP;
  int p = 128 / tb;
  return p < 1 ? 1 : p;
}

/* The element index of thread th's vector in access k, or -1. */
static int64_t vector_start(const tc_tile *t, const tc_bank_opts *o, int64_t k, int th) {
  int64_t vcols = t->cols / o->vec, nvec = t->rows * vcols, j = k * WARP + th;
  if (j >= nvec) return -1;
  int64_t r, vc;
  if (o->access == TC_ACCESS_ROW) r = j / vcols, vc = j % vcols;
  else r = j % t->rows, vc = j / t->rows;
  return r * t->cols + vc * o->vec;
}

typedef struct wordref {
  int64_t word;
  int th;
} wordref;

static int cmp_word(const void *a, const void *b) {
  const wordref *x = a, *y = b;
  if (x->word != y->word) return x->word < y->word ? -1 : 1;
  return x->th - y->th;
}

/* One access: ways (max over phases), wavefronts and phases, conflict
 * flags and element lists when asked for. */
static int access_eval(const tc_tile *t, const tc_bank_opts *o, int64_t k, int64_t *elem, bool *conflict,
                       int64_t *wave, int64_t *phases, int64_t *noncontig) {
  int P = phase_threads(o), E = o->elem_bytes, V = o->vec;
  int wpe = E < 4 ? 1 : E / 4; /* words per element (at most; E < 4 shares words) */
  wordref *w = tc_xmalloc((size_t)P * (size_t)V * (size_t)(wpe + 1) * sizeof *w);
  int ways_max = 0;
  for (int th = 0; th < WARP; th++)
    if (conflict) conflict[th] = false;
  for (int p0 = 0; p0 < WARP; p0 += P) {
    int nw = 0, active = 0;
    for (int th = p0; th < p0 + P && th < WARP; th++) {
      int64_t st = vector_start(t, o, k, th);
      for (int x = 0; x < V; x++) {
        if (elem) elem[th * V + x] = st < 0 ? -1 : st + x;
        if (st < 0) continue;
        int64_t off = t->off[st + x];
        if (x > 0 && noncontig && off != t->off[st + x - 1] + 1) {
          (*noncontig)++;
          noncontig = NULL; /* count each access at most once */
        }
        int64_t a = off * E;
        for (int64_t wd = a / 4; wd <= (a + E - 1) / 4; wd++) w[nw].word = wd, w[nw].th = th, nw++;
      }
      active += st >= 0;
    }
    if (!active) continue;
    qsort(w, (size_t)nw, sizeof *w, cmp_word);
    int count[BANKS] = {0};
    for (int i = 0; i < nw; i++)
      if (i == 0 || w[i].word != w[i - 1].word) count[w[i].word % BANKS]++;
    int ways = 0;
    for (int b = 0; b < BANKS; b++)
      if (count[b] > ways) ways = count[b];
    if (conflict)
      for (int i = 0; i < nw; i++)
        if (count[w[i].word % BANKS] > 1) conflict[w[i].th] = true;
    if (wave) *wave += ways;
    if (phases) (*phases)++;
    if (ways > ways_max) ways_max = ways;
  }
  free(w);
  return ways_max;
}

static int check_opts(const tc_tile *t, const tc_bank_opts *o, tc_str *err) {
  int E = o->elem_bytes;
  if (t->form == TC_TILE_TV) return tc_err_set(err, "bank conflicts need a memory layout, not a TV layout"), -1;
  if (E != 1 && E != 2 && E != 4 && E != 8 && E != 16)
    return tc_err_set(err, "--elem-bytes must be 1, 2, 4, 8 or 16, got %d", E), -1;
  if (o->vec < 1 || o->vec > 64 || t->cols % o->vec != 0)
    return tc_err_set(err, "--vec %d must divide the tile's %lld columns (and be at most 64)", o->vec,
                    (long long)t->cols), -1;
  if (t->cosize > (INT64_MAX / 64)) return tc_err_set(err, "offsets too large"), -1;
  for (int64_t i = 0; i < t->size; i++)
    if (t->off[i] < 0) return tc_err_set(err, "negative offsets are not supported"), -1;
  return 0;
}

int tc_bank_analyze(const tc_tile *t, const tc_bank_opts *o, tc_bank_report *r, tc_str *err) {
  memset(r, 0, sizeof *r);
  if (check_opts(t, o, err)) return -1;
  int64_t nvec = t->size / o->vec;
  r->accesses = (nvec + WARP - 1) / WARP;
  r->ways = tc_xmalloc((size_t)r->accesses * sizeof *r->ways);
  r->worst = 0;
  for (int64_t k = 0; k < r->accesses; k++) {
    int ways = access_eval(t, o, k, NULL, NULL, &r->wavefronts, &r->ideal, &r->noncontig);
    r->ways[k] = ways;
    if (ways > r->max_ways) r->max_ways = ways, r->worst = k;
  }
  r->conflicts = r->wavefronts - r->ideal;
  return 0;
}

void tc_bank_report_free(tc_bank_report *r) {
  free(r->ways);
  memset(r, 0, sizeof *r);
}

int tc_bank_access(const tc_tile *t, const tc_bank_opts *o, int64_t k, int64_t *elem, bool *conflict) {
  return access_eval(t, o, k, elem, conflict, NULL, NULL, NULL);
}
