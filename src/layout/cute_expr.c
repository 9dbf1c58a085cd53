/* cute_expr.c - the expression language of cute.h: a recursive-descent
 * parser that evaluates as it goes, with column-accurate errors.
 *
 *   expr    := term ('o' term)*
 *   term    := primary [':' stride] ('(' expr ')')*
 *   primary := INT | '(' expr (',' expr)* ')' | 'Swizzle' '<' INT ',' INT ',' INT '>'
 *            | NAME '(' [expr (',' expr)*] ')'
 *   stride  := INT | '(' stride (',' stride)* ')'
 *   INT     := [0-9]+ | '_' [0-9]+
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cute.h"

typedef struct parser {
  const char *s;
  size_t pos;
  tc_cute_error *e;
  int depth;
} parser;

enum { MAX_DEPTH = 64, MAX_MODES = 4096 };

static int col_of(const parser *p, size_t pos) { (void)p; return (int)pos + 1; }

static int fail_at(parser *p, int col, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail_at(parser *p, int col, int code, const char *fmt, ...) {
  if (p->e->code == TC_CUTE_OK) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->e->msg, sizeof p->e->msg, fmt, ap);
    va_end(ap);
    p->e->code = code;
    p->e->column = col;
  }
  return -1;
}

/* fail_at with the message of an algebra call, which it frees. */
static int fail_err(parser *p, int col, int code, tc_str *err) {
  fail_at(p, col, code, "%s", tc_str_cstr(err));
  tc_str_free(err);
  return -1;
}

static void skip_ws(parser *p) {
  while (p->s[p->pos] && isspace((unsigned char)p->s[p->pos])) p->pos++;
}

static char peek(parser *p) {
  skip_ws(p);
  return p->s[p->pos];
}

/* What the parser found at the current position, for messages. */
static const char *found(parser *p, char *buf, size_t cap) {
  skip_ws(p);
  char c = p->s[p->pos];
  if (!c) return "the end of the expression";
  if (isalpha((unsigned char)c) || c == '_') {
    size_t n = 0;
    while (isalnum((unsigned char)p->s[p->pos + n]) || p->s[p->pos + n] == '_') n++;
    snprintf(buf, cap, "'%.*s'", (int)(n > 40 ? 40 : n), p->s + p->pos);
  } else {
    snprintf(buf, cap, "'%c'", c);
  }
  return buf;
}

static int expect(parser *p, char c, const char *context) {
  if (peek(p) == c) {
    p->pos++;
    return 0;
  }
  char buf[64];
  return fail_at(p, col_of(p, p->pos), TC_CUTE_ESYNTAX, "expected '%c'%s%s, found %s", c,
                 context ? " " : "", context ? context : "", found(p, buf, sizeof buf));
}

static bool is_ident_start(char c) { return isalpha((unsigned char)c) || c == '_'; }

/* An integer at the current position (after whitespace): digits or _digits. */
static bool at_int(parser *p) {
  char c = peek(p);
  return isdigit((unsigned char)c) || (c == '_' && isdigit((unsigned char)p->s[p->pos + 1]));
}

static int parse_int(parser *p, int64_t *v, int allow_negative) {
  skip_ws(p);
  size_t start = p->pos;
  int neg = 0;
  if (allow_negative && p->s[p->pos] == '-') neg = 1, p->pos++;
  if (p->s[p->pos] == '_') p->pos++;
  if (!isdigit((unsigned char)p->s[p->pos])) {
    char buf[64];
    p->pos = start;
    return fail_at(p, col_of(p, start), TC_CUTE_ESYNTAX, "expected an integer, found %s",
                   found(p, buf, sizeof buf));
  }
  int64_t x = 0;
  while (isdigit((unsigned char)p->s[p->pos])) {
    x = x * 10 + (p->s[p->pos] - '0');
    p->pos++;
    if (x > TC_CUTE_MAX_INT)
      return fail_at(p, col_of(p, start), TC_CUTE_ESYNTAX, "integer too large (at most 2^40)");
  }
  *v = neg ? -x : x;
  return 0;
}

/* ---- values ---------------------------------------------------------------------- */

void tc_cute_value_free(tc_cute_value *v) {
  if (v->kind == TC_CV_LAYOUT || v->kind == TC_CV_SWLAYOUT) tc_cute_free(&v->l);
  if (v->kind == TC_CV_TUPLE) {
    for (int i = 0; i < v->n; i++) tc_cute_value_free(&v->elems[i]);
    free(v->elems);
  }
  memset(v, 0, sizeof *v);
}

const char *tc_cute_kind_name(tc_cute_kind k) {
  switch (k) {
    case TC_CV_INT: return "integer";
    case TC_CV_TUPLE: return "tuple";
    case TC_CV_LAYOUT: return "layout";
    case TC_CV_SWIZZLE: return "swizzle";
    case TC_CV_SWLAYOUT: return "swizzled layout";
  }
  return "?";
}

void tc_cute_value_print(tc_str *out, const tc_cute_value *v) {
  switch (v->kind) {
    case TC_CV_INT: tc_str_printf(out, "%lld", (long long)v->i); break;
    case TC_CV_TUPLE:
      tc_str_cat(out, "(");
      for (int i = 0; i < v->n; i++) {
        if (i) tc_str_cat(out, ",");
        tc_cute_value_print(out, &v->elems[i]);
      }
      tc_str_cat(out, ")");
      break;
    case TC_CV_LAYOUT: tc_cute_print(out, &v->l); break;
    case TC_CV_SWIZZLE: tc_str_printf(out, "Swizzle<%d,%d,%d>", v->b, v->m, v->s); break;
    case TC_CV_SWLAYOUT:
      tc_str_printf(out, "Swizzle<%d,%d,%d> o ", v->b, v->m, v->s);
      tc_cute_print(out, &v->l);
      break;
  }
}

static tc_cute_value make_layout_value(tc_cute l, int col) {
  tc_cute_value v;
  memset(&v, 0, sizeof v);
  v.kind = TC_CV_LAYOUT, v.l = l, v.col = col;
  return v;
}

static tc_cute_value make_int(int64_t i, int col) {
  tc_cute_value v;
  memset(&v, 0, sizeof v);
  v.kind = TC_CV_INT, v.i = i, v.col = col;
  return v;
}

static bool is_int_tuple(const tc_cute_value *v) {
  if (v->kind == TC_CV_INT) return true;
  if (v->kind != TC_CV_TUPLE) return false;
  for (int i = 0; i < v->n; i++)
    if (!is_int_tuple(&v->elems[i])) return false;
  return true;
}

/* The value as a layout argument: an integer n is n:1; a tuple becomes a
 * tiler when allowed.  Returns 0 with *l set (a copy), or -1. */
static int as_layout(parser *p, const tc_cute_value *v, bool tiler_ok, const char *fn, int argno,
                     tc_cute *l) {
  switch (v->kind) {
    case TC_CV_INT:
      if (v->i < 1) return fail_at(p, v->col, TC_CUTE_ESYNTAX, "%s: a shape must be at least 1, got %lld", fn, (long long)v->i);
      *l = tc_cute_leaf(v->i, 1);
      return 0;
    case TC_CV_LAYOUT:
      if (v->l.tiler && !tiler_ok)
        return fail_at(p, v->col, TC_CUTE_ESYNTAX, "%s: argument %d must be a layout, not a tuple of layouts", fn, argno);
      *l = tc_cute_copy(&v->l);
      return 0;
    case TC_CV_TUPLE: {
      if (!tiler_ok)
        return fail_at(p, v->col, TC_CUTE_ESYNTAX,
                       "%s: argument %d must be a layout; a tuple without ':STRIDE' is only a tiler "
                       "(the second argument of composition and of the logical, zipped, tiled and flat "
                       "divides and products)",
                       fn, argno);
      tc_cute *m = tc_xcalloc((size_t)v->n, sizeof *m);
      for (int i = 0; i < v->n; i++) {
        if (as_layout(p, &v->elems[i], true, fn, argno, &m[i])) {
          for (int j = 0; j < i; j++) tc_cute_free(&m[j]);
          free(m);
          return -1;
        }
      }
      *l = tc_cute_tuple(v->n, m);
      l->tiler = v->n > 1;
      free(m);
      return 0;
    }
    case TC_CV_SWIZZLE:
    case TC_CV_SWLAYOUT:
      return fail_at(p, v->col, TC_CUTE_ESYNTAX, "%s: argument %d must be a layout, got a %s", fn, argno,
                     tc_cute_kind_name(v->kind));
  }
  return -1;
}

/* ---- evaluation of operations -------------------------------------------------------- */

/* composition(a, b) for the value kinds that have one. */
static int compose_values(parser *p, tc_cute_value *a, tc_cute_value *b, int col, const char *fn,
                          tc_cute_value *out) {
  tc_str err = {0};
  tc_cute lb, r;
  if (a->kind == TC_CV_SWIZZLE) {
    if (as_layout(p, b, false, fn, 2, &lb)) return -1;
    memset(out, 0, sizeof *out);
    out->kind = TC_CV_SWLAYOUT, out->col = a->col, out->l = lb;
    out->b = a->b, out->m = a->m, out->s = a->s;
    return 0;
  }
  if (a->kind != TC_CV_LAYOUT && a->kind != TC_CV_SWLAYOUT && a->kind != TC_CV_INT)
    return fail_at(p, a->col, TC_CUTE_ESYNTAX, "%s: argument 1 must be a layout, got a %s", fn,
                   tc_cute_kind_name(a->kind));
  if (b->kind == TC_CV_SWIZZLE || b->kind == TC_CV_SWLAYOUT)
    return fail_at(p, b->col, TC_CUTE_ESYNTAX,
                   "%s: a swizzle can only be on the left (Swizzle<B,M,S> o LAYOUT)", fn);
  tc_cute la;
  if (a->kind == TC_CV_SWLAYOUT) la = tc_cute_copy(&a->l);
  else if (as_layout(p, a, false, fn, 1, &la)) return -1;
  if (as_layout(p, b, true, fn, 2, &lb)) {
    tc_cute_free(&la);
    return -1;
  }
  int rc = tc_cute_composition(&la, &lb, &r, &err);
  tc_cute_free(&la), tc_cute_free(&lb);
  if (rc) return fail_err(p, col, TC_CUTE_EUNDEF, &err);
  *out = make_layout_value(r, a->col);
  if (a->kind == TC_CV_SWLAYOUT) out->kind = TC_CV_SWLAYOUT, out->b = a->b, out->m = a->m, out->s = a->s;
  return 0;
}

/* v(c) for a layout or swizzled layout and a tuple coordinate c. */
static int apply_coord(parser *p, tc_cute_value *v, tc_cute_value *c, int col, tc_cute_value *out) {
  if (v->kind != TC_CV_LAYOUT && v->kind != TC_CV_SWLAYOUT)
    return fail_at(p, c->col, TC_CUTE_ESYNTAX, "can only apply a %s to an integer, got a %s",
                   tc_cute_kind_name(v->kind), tc_cute_kind_name(c->kind));
  if (!is_int_tuple(c))
    return fail_at(p, c->col, TC_CUTE_ESYNTAX, "a coordinate is a tuple of integers (or of such tuples)");
  tc_str err = {0};
  const tc_cute_value *bad = NULL;
  int64_t r;
  int rc = tc_cute_eval_coord(&v->l, c, &r, &bad, &err);
  if (rc) return fail_err(p, bad ? bad->col : col, rc, &err);
  if (v->kind == TC_CV_SWLAYOUT) r = tc_cute_swizzle(v->b, v->m, v->s, r);
  *out = make_int(r, v->col);
  return 0;
}

/* v(i) for a layout, swizzle or swizzled layout; v(c) for a coordinate. */
static int apply_value(parser *p, tc_cute_value *v, tc_cute_value *arg, int col, tc_cute_value *out) {
  if (arg->kind == TC_CV_TUPLE) return apply_coord(p, v, arg, col, out);
  if (arg->kind != TC_CV_INT)
    return fail_at(p, arg->col, TC_CUTE_ESYNTAX, "can only apply a %s to an integer or a coordinate, got a %s",
                   tc_cute_kind_name(v->kind), tc_cute_kind_name(arg->kind));
  int64_t x = arg->i, r;
  switch (v->kind) {
    case TC_CV_SWIZZLE: r = tc_cute_swizzle(v->b, v->m, v->s, x); break;
    case TC_CV_LAYOUT:
    case TC_CV_SWLAYOUT:
      if (v->l.tiler)
        return fail_at(p, col, TC_CUTE_ESYNTAX, "cannot apply a tuple of layouts to an integer");
      if (x >= tc_cute_size(&v->l))
        return fail_at(p, arg->col, TC_CUTE_EUNDEF, "index %lld is outside the layout's domain [0, %lld)",
                       (long long)x, (long long)tc_cute_size(&v->l));
      r = tc_cute_eval(&v->l, x);
      if (v->kind == TC_CV_SWLAYOUT) r = tc_cute_swizzle(v->b, v->m, v->s, r);
      break;
    default:
      return fail_at(p, col, TC_CUTE_ESYNTAX, "cannot apply a %s to an argument", tc_cute_kind_name(v->kind));
  }
  *out = make_int(r, v->col);
  return 0;
}

typedef struct fn_info {
  const char *name;
  int min_args, max_args;
} fn_info;

static const fn_info FNS[] = {
    {"coalesce", 1, 1},        {"filter", 1, 1},          {"composition", 2, 2},
    {"complement", 1, 2},      {"logical_divide", 2, 2},  {"zipped_divide", 2, 2},
    {"tiled_divide", 2, 2},    {"flat_divide", 2, 2},     {"logical_product", 2, 2},
    {"zipped_product", 2, 2},  {"tiled_product", 2, 2},   {"flat_product", 2, 2},
    {"blocked_product", 2, 2}, {"raked_product", 2, 2},   {"left_inverse", 1, 1},
    {"right_inverse", 1, 1},   {"make_layout", 1, 64},    {"append", 2, 2},
    {"prepend", 2, 2},         {"size", 1, 1},            {"cosize", 1, 1},
    {"rank", 1, 1},            {"depth", 1, 1},
};

/* The divides and products: the grouping their name gives (the prefix). */
static bool tiling_fn(const char *name, bool *divide, tc_cute_grouping *g) {
  static const struct {
    const char *prefix;
    tc_cute_grouping g;
  } G[] = {{"logical_", TC_CUTE_LOGICAL}, {"zipped_", TC_CUTE_ZIPPED}, {"tiled_", TC_CUTE_TILED}, {"flat_", TC_CUTE_FLAT}};
  for (size_t i = 0; i < sizeof G / sizeof G[0]; i++) {
    size_t n = strlen(G[i].prefix);
    if (strncmp(name, G[i].prefix, n)) continue;
    if (!strcmp(name + n, "divide") || !strcmp(name + n, "product")) {
      *divide = name[n] == 'd';
      *g = G[i].g;
      return true;
    }
  }
  return false;
}

static int64_t swizzled_cosize(const tc_cute_value *v, bool *ok) {
  int64_t n = tc_cute_size(&v->l), mx = -1;
  *ok = n <= ((int64_t)1 << 24);
  if (!*ok) return 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t o = tc_cute_swizzle(v->b, v->m, v->s, tc_cute_eval(&v->l, i));
    if (o > mx) mx = o;
  }
  return mx + 1;
}

/* A concatenation r as the value *out, unless it is too large. */
static int concat_value(parser *p, tc_cute r, const char *name, int col, tc_cute_value *out) {
  tc_str err = {0};
  if (tc_cute_check_range(&r, name, &err)) {
    tc_cute_free(&r);
    return fail_err(p, col, TC_CUTE_EUNDEF, &err);
  }
  *out = make_layout_value(r, col);
  return 0;
}

static int call_fn(parser *p, const char *name, int col, tc_cute_value *args, int nargs, tc_cute_value *out) {
  tc_str err = {0};
  tc_cute a, b, r;
  int rc;
  memset(out, 0, sizeof *out);
  if (!strcmp(name, "composition")) return compose_values(p, &args[0], &args[1], col, name, out);
  if (!strcmp(name, "size") || !strcmp(name, "cosize") || !strcmp(name, "rank") || !strcmp(name, "depth")) {
    tc_cute_value *v = &args[0];
    if (v->kind == TC_CV_SWLAYOUT) {
      if (!strcmp(name, "cosize")) {
        bool ok;
        int64_t c = swizzled_cosize(v, &ok);
        if (!ok) return fail_at(p, col, TC_CUTE_EUNDEF, "cosize of a swizzled layout is computed for at most 2^24 elements");
        *out = make_int(c, col);
        return 0;
      }
      a = tc_cute_copy(&v->l);
    } else if (as_layout(p, v, false, name, 1, &a)) {
      return -1;
    }
    int64_t x = !strcmp(name, "size")     ? tc_cute_size(&a)
                : !strcmp(name, "cosize") ? tc_cute_cosize(&a)
                : !strcmp(name, "rank")   ? tc_cute_rank(&a)
                                          : tc_cute_depth(&a);
    tc_cute_free(&a);
    *out = make_int(x, col);
    return 0;
  }
  if (!strcmp(name, "make_layout")) {
    tc_cute *m = tc_xcalloc((size_t)nargs, sizeof *m);
    for (int i = 0; i < nargs; i++) {
      if (as_layout(p, &args[i], false, name, i + 1, &m[i])) {
        for (int j = 0; j < i; j++) tc_cute_free(&m[j]);
        free(m);
        return -1;
      }
    }
    r = tc_cute_tuple(nargs, m);
    free(m);
    return concat_value(p, r, name, col, out);
  }
  if (!strcmp(name, "append") || !strcmp(name, "prepend")) {
    if (as_layout(p, &args[0], false, name, 1, &a)) return -1;
    if (as_layout(p, &args[1], false, name, 2, &b)) {
      tc_cute_free(&a);
      return -1;
    }
    r = name[0] == 'a' ? tc_cute_append(&a, &b) : tc_cute_prepend(&a, &b);
    tc_cute_free(&a), tc_cute_free(&b);
    return concat_value(p, r, name, col, out);
  }
  if (!strcmp(name, "filter")) {
    if (as_layout(p, &args[0], false, name, 1, &a)) return -1;
    r = tc_cute_filter(&a);
    tc_cute_free(&a);
    *out = make_layout_value(r, col);
    return 0;
  }
  if (!strcmp(name, "blocked_product") || !strcmp(name, "raked_product")) {
    if (as_layout(p, &args[0], false, name, 1, &a)) return -1;
    if (as_layout(p, &args[1], false, name, 2, &b)) {
      tc_cute_free(&a);
      return -1;
    }
    rc = name[0] == 'b' ? tc_cute_blocked_product(&a, &b, &r, &err)
                        : tc_cute_raked_product(&a, &b, &r, &err);
    tc_cute_free(&a), tc_cute_free(&b);
    if (rc) return fail_err(p, col, TC_CUTE_EUNDEF, &err);
    *out = make_layout_value(r, col);
    return 0;
  }
  if (!strcmp(name, "coalesce")) {
    if (args[0].kind == TC_CV_SWLAYOUT) {
      *out = make_layout_value(tc_cute_coalesce(&args[0].l), col);
      out->kind = TC_CV_SWLAYOUT, out->b = args[0].b, out->m = args[0].m, out->s = args[0].s;
      return 0;
    }
    if (as_layout(p, &args[0], false, name, 1, &a)) return -1;
    r = tc_cute_coalesce(&a);
    tc_cute_free(&a);
    *out = make_layout_value(r, col);
    return 0;
  }
  if (!strcmp(name, "complement")) {
    int64_t target = 1;
    if (nargs > 1) {
      if (args[1].kind != TC_CV_INT)
        return fail_at(p, args[1].col, TC_CUTE_ESYNTAX, "complement: argument 2 must be an integer, got a %s",
                       tc_cute_kind_name(args[1].kind));
      target = args[1].i;
    }
    if (as_layout(p, &args[0], false, name, 1, &a)) return -1;
    rc = tc_cute_complement(&a, target, &r, &err);
    tc_cute_free(&a);
    if (rc) return fail_err(p, col, TC_CUTE_EUNDEF, &err);
    *out = make_layout_value(r, col);
    return 0;
  }
  if (!strcmp(name, "left_inverse") || !strcmp(name, "right_inverse")) {
    if (as_layout(p, &args[0], false, name, 1, &a)) return -1;
    rc = name[0] == 'l' ? tc_cute_left_inverse(&a, &r, &err)
                        : tc_cute_right_inverse(&a, &r, &err);
    tc_cute_free(&a);
    if (rc) return fail_err(p, col, TC_CUTE_EUNDEF, &err);
    *out = make_layout_value(r, col);
    return 0;
  }
  /* the divides and products */
  bool divide = false;
  tc_cute_grouping g = TC_CUTE_LOGICAL;
  if (!tiling_fn(name, &divide, &g)) return fail_at(p, col, TC_CUTE_ESYNTAX, "unknown function '%s'", name);
  bool sw = divide && args[0].kind == TC_CV_SWLAYOUT; /* a divide is a composition on the right */
  if (sw) a = tc_cute_copy(&args[0].l);
  else if (as_layout(p, &args[0], false, name, 1, &a)) return -1;
  if (as_layout(p, &args[1], true, name, 2, &b)) {
    tc_cute_free(&a);
    return -1;
  }
  rc = divide ? tc_cute_divide(g, &a, &b, &r, &err) : tc_cute_product(g, &a, &b, &r, &err);
  tc_cute_free(&a), tc_cute_free(&b);
  if (rc) return fail_err(p, col, TC_CUTE_EUNDEF, &err);
  *out = make_layout_value(r, col);
  if (sw) out->kind = TC_CV_SWLAYOUT, out->b = args[0].b, out->m = args[0].m, out->s = args[0].s;
  return 0;
}

/* ---- the parser ------------------------------------------------------------------------ */

static int parse_expr(parser *p, tc_cute_value *v);
static int parse_expr_body(parser *p, tc_cute_value *v);

/* A stride congruent with `shape` (an int tuple value); builds the layout. */
static int parse_stride(parser *p, const tc_cute_value *shape, tc_cute *l) {
  skip_ws(p);
  size_t start = p->pos;
  if (shape->kind == TC_CV_INT) {
    if (peek(p) == '(' && !(isdigit((unsigned char)p->s[p->pos + 1]) || p->s[p->pos + 1] == '_' ||
                            isspace((unsigned char)p->s[p->pos + 1])))
      return fail_at(p, col_of(p, start), TC_CUTE_ESYNTAX,
                     "the stride must have the shape's structure: an integer for shape %lld",
                     (long long)shape->i);
    if (peek(p) == '(') { /* "(2)" is "2", as "(4)" is 4 */
      p->pos++;
      if (p->depth >= MAX_DEPTH)
        return fail_at(p, col_of(p, start), TC_CUTE_ESYNTAX, "nested too deeply (at most %d levels)", MAX_DEPTH);
      p->depth++;
      int rc = parse_stride(p, shape, l);
      p->depth--;
      if (rc) return -1;
      if (peek(p) == ',') {
        tc_cute_free(l);
        return fail_at(p, col_of(p, start), TC_CUTE_ESYNTAX,
                       "the stride must have the shape's structure: an integer for shape %lld",
                       (long long)shape->i);
      }
      if (expect(p, ')', "to close the stride")) {
        tc_cute_free(l);
        return -1;
      }
      return 0;
    }
    int64_t d;
    if (p->s[p->pos] == '-')
      return fail_at(p, col_of(p, start), TC_CUTE_ESYNTAX, "negative strides are not supported");
    if (parse_int(p, &d, 0)) return -1;
    if (shape->i < 1)
      return fail_at(p, shape->col, TC_CUTE_ESYNTAX, "a shape must be at least 1, got %lld", (long long)shape->i);
    *l = tc_cute_leaf(shape->i, d);
    return 0;
  }
  if (peek(p) != '(')
    return fail_at(p, col_of(p, start), TC_CUTE_ESYNTAX,
                   "the stride must have the shape's structure: a tuple of %d entries", shape->n);
  p->pos++;
  tc_cute *m = tc_xcalloc((size_t)shape->n, sizeof *m);
  int rc = 0, i = 0;
  for (; i < shape->n; i++) {
    if (i && (rc = expect(p, ',', shape->n > 1 ? "(the stride needs as many entries as the shape)" : NULL)))
      break;
    if (i && peek(p) == ')') {
      rc = fail_at(p, col_of(p, p->pos), TC_CUTE_ESYNTAX, "the stride has %d entries where the shape has %d", i,
                   shape->n);
      break;
    }
    if ((rc = parse_stride(p, &shape->elems[i], &m[i]))) break;
  }
  if (rc == 0 && peek(p) == ',')
    rc = fail_at(p, col_of(p, p->pos), TC_CUTE_ESYNTAX, "expected ')': the stride has more entries than the shape (%d)",
                 shape->n);
  if (rc == 0) rc = expect(p, ')', "to close the stride tuple");
  if (rc) {
    for (int j = 0; j < i && j < shape->n; j++) tc_cute_free(&m[j]);
    free(m);
    return -1;
  }
  *l = tc_cute_tuple(shape->n, m);
  free(m);
  return 0;
}

static int parse_swizzle(parser *p, int col, tc_cute_value *v) {
  int64_t x[3];
  if (expect(p, '<', "after Swizzle")) return -1;
  for (int i = 0; i < 3; i++) {
    if (i && expect(p, ',', "between the swizzle's parameters B, M, S")) return -1;
    if (parse_int(p, &x[i], i == 2)) return -1;
    if (x[i] > 64 || x[i] < -64) return fail_at(p, col, TC_CUTE_ESYNTAX, "swizzle parameter out of range");
  }
  if (expect(p, '>', "after Swizzle<B,M,S")) return -1;
  tc_str err = {0};
  if (tc_cute_swizzle_check((int)x[0], (int)x[1], (int)x[2], &err))
    return fail_err(p, col, TC_CUTE_ESYNTAX, &err);
  memset(v, 0, sizeof *v);
  v->kind = TC_CV_SWIZZLE, v->col = col, v->b = (int)x[0], v->m = (int)x[1], v->s = (int)x[2];
  return 0;
}

static int parse_call(parser *p, const char *name, int col, tc_cute_value *v) {
  const fn_info *fi = NULL;
  for (size_t i = 0; i < sizeof FNS / sizeof FNS[0]; i++)
    if (!strcmp(FNS[i].name, name)) fi = &FNS[i];
  if (!fi)
    return fail_at(p, col, TC_CUTE_ESYNTAX,
                   "unknown function '%s' (known: coalesce, filter, composition, complement, "
                   "logical_divide, zipped_divide, tiled_divide, flat_divide, logical_product, "
                   "zipped_product, tiled_product, flat_product, blocked_product, raked_product, "
                   "left_inverse, right_inverse, make_layout, append, prepend, size, cosize, rank, "
                   "depth, Swizzle<B,M,S>)",
                   name);
  if (peek(p) != '(') {
    char buf[64];
    return fail_at(p, col_of(p, p->pos), TC_CUTE_ESYNTAX, "expected '(' after %s, found %s", name,
                   found(p, buf, sizeof buf));
  }
  p->pos++;
  tc_cute_value *args = NULL;
  int n = 0, cap = 0, rc = 0;
  if (peek(p) != ')') {
    for (;;) {
      tc_cute_value a;
      if ((rc = parse_expr(p, &a))) break;
      TC_PUSH(args, n, cap, a);
      if (peek(p) == ',') {
        p->pos++;
        continue;
      }
      rc = expect(p, ')', n == 1 ? "or ',' after the argument" : "or ',' after the argument");
      break;
    }
  } else {
    p->pos++;
  }
  if (rc == 0 && (n < fi->min_args || n > fi->max_args)) {
    if (fi->min_args == fi->max_args)
      rc = fail_at(p, col, TC_CUTE_ESYNTAX, "%s takes %d argument%s, got %d", name, fi->min_args,
                   fi->min_args == 1 ? "" : "s", n);
    else
      rc = fail_at(p, col, TC_CUTE_ESYNTAX, "%s takes %d to %d arguments, got %d", name, fi->min_args,
                   fi->max_args, n);
  }
  if (rc == 0) rc = call_fn(p, name, col, args, n, v);
  for (int i = 0; i < n; i++) tc_cute_value_free(&args[i]);
  free(args);
  return rc;
}

/* Expressions separated by ',' up to and including the closing ')': the
 * one value, or a tuple of them (what names it in messages; close_ctx
 * completes "expected ')'"). */
static int parse_list(parser *p, int col, const char *what, const char *close_ctx, tc_cute_value *v) {
  tc_cute_value *el = NULL;
  int n = 0, cap = 0, rc = 0;
  memset(v, 0, sizeof *v);
  for (;;) {
    tc_cute_value e;
    if ((rc = parse_expr(p, &e))) break;
    TC_PUSH(el, n, cap, e);
    if (n > MAX_MODES) {
      rc = fail_at(p, col, TC_CUTE_ESYNTAX, "too many entries in a %s (at most %d)", what, MAX_MODES);
      break;
    }
    if (peek(p) != ',') {
      rc = expect(p, ')', close_ctx);
      break;
    }
    p->pos++;
  }
  if (rc) {
    for (int i = 0; i < n; i++) tc_cute_value_free(&el[i]);
    free(el);
    return -1;
  }
  if (n == 1) {
    *v = el[0];
    free(el);
    return 0;
  }
  v->kind = TC_CV_TUPLE, v->col = col, v->n = n, v->elems = el;
  return 0;
}

static int parse_primary(parser *p, tc_cute_value *v) {
  memset(v, 0, sizeof *v);
  char c = peek(p);
  int col = col_of(p, p->pos);
  if (at_int(p)) {
    int64_t x;
    if (parse_int(p, &x, 0)) return -1;
    *v = make_int(x, col);
    return 0;
  }
  if (c == '-')
    return fail_at(p, col, TC_CUTE_ESYNTAX, "negative numbers are not supported (shapes are >= 1, strides >= 0)");
  if (c == '(') {
    p->pos++;
    if (peek(p) == ')') return fail_at(p, col_of(p, p->pos), TC_CUTE_ESYNTAX, "empty tuples are not supported");
    if (parse_list(p, col, "tuple", "or ','", v)) return -1;
    if (v->kind == TC_CV_TUPLE) v->col = col;
    return 0;
  }
  if (is_ident_start(c)) {
    size_t start = p->pos, len = 0;
    while (isalnum((unsigned char)p->s[start + len]) || p->s[start + len] == '_') len++;
    char name[48];
    if (len >= sizeof name) return fail_at(p, col, TC_CUTE_ESYNTAX, "name too long");
    memcpy(name, p->s + start, len);
    name[len] = 0;
    p->pos += len;
    if (!strcmp(name, "Swizzle") || !strcmp(name, "Sw")) return parse_swizzle(p, col, v);
    if (!strcmp(name, "o"))
      return fail_at(p, col, TC_CUTE_ESYNTAX, "'o' (composition) needs a left operand");
    return parse_call(p, name, col, v);
  }
  char buf[64];
  return fail_at(p, col, TC_CUTE_ESYNTAX, "expected an integer, a layout, '(' or a function name, found %s",
                 found(p, buf, sizeof buf));
}

/* The arguments of an application F(...) after its '(': one value, or
 * several as a tuple (the coordinate of L(1,5)), which starts where its
 * first entry does. */
static int parse_args(parser *p, int col, tc_cute_value *v) {
  if (parse_list(p, col, "coordinate", "after the index or coordinate", v)) return -1;
  if (v->kind == TC_CV_TUPLE) v->col = v->elems[0].col;
  return 0;
}

/* A parsed layout literal must stay within the algebra's range. */
static int check_shapes(parser *p, const tc_cute *l, int col) {
  if (tc_cute_size(l) >= TC_CUTE_MAX_SIZE || tc_cute_cosize(l) >= TC_CUTE_MAX_SIZE)
    return fail_at(p, col, TC_CUTE_ESYNTAX, "the layout's size or offsets do not fit in 62 bits");
  return 0;
}

static int parse_term(parser *p, tc_cute_value *v) {
  if (parse_primary(p, v)) return -1;
  if (peek(p) == ':') {
    int colon = col_of(p, p->pos);
    if (!is_int_tuple(v)) {
      int rc = fail_at(p, colon, TC_CUTE_ESYNTAX,
                       "the shape before ':' must be an integer or a tuple of integers, not a %s",
                       tc_cute_kind_name(v->kind));
      tc_cute_value_free(v);
      return rc;
    }
    p->pos++;
    tc_cute l;
    int rc = parse_stride(p, v, &l);
    int col = v->col;
    tc_cute_value_free(v);
    if (rc) return -1;
    *v = make_layout_value(l, col);
    if (check_shapes(p, &v->l, col)) {
      tc_cute_value_free(v);
      return -1;
    }
  }
  while (peek(p) == '(' && (v->kind == TC_CV_LAYOUT || v->kind == TC_CV_SWIZZLE || v->kind == TC_CV_SWLAYOUT)) {
    int col = col_of(p, p->pos);
    p->pos++;
    tc_cute_value arg, r;
    int rc = parse_args(p, col, &arg);
    if (rc == 0) rc = apply_value(p, v, &arg, col, &r);
    tc_cute_value_free(&arg);
    tc_cute_value_free(v);
    if (rc) return -1;
    *v = r;
  }
  return 0;
}

static bool at_o(parser *p) {
  if (peek(p) != 'o') return false;
  char n = p->s[p->pos + 1];
  return !(isalnum((unsigned char)n) || n == '_');
}

static int parse_expr(parser *p, tc_cute_value *v) {
  memset(v, 0, sizeof *v);
  if (p->depth >= MAX_DEPTH) return fail_at(p, col_of(p, p->pos), TC_CUTE_ESYNTAX, "nested too deeply (at most %d levels)", MAX_DEPTH);
  p->depth++;
  int rc = parse_expr_body(p, v);
  p->depth--;
  return rc;
}

static int parse_expr_body(parser *p, tc_cute_value *v) {
  if (parse_term(p, v)) return -1;
  while (at_o(p)) {
    int col = col_of(p, p->pos);
    p->pos++;
    tc_cute_value rhs, r;
    if (parse_term(p, &rhs)) {
      tc_cute_value_free(v);
      return -1;
    }
    int rc = compose_values(p, v, &rhs, col, "composition", &r);
    tc_cute_value_free(&rhs);
    tc_cute_value_free(v);
    if (rc) return -1;
    *v = r;
  }
  return 0;
}

int tc_cute_eval_expr(const char *text, tc_cute_value *out, tc_cute_error *e) {
  parser p = {text, 0, e, 0};
  memset(e, 0, sizeof *e);
  memset(out, 0, sizeof *out);
  if (parse_expr(&p, out)) {
    if (e->code == TC_CUTE_OK) e->code = TC_CUTE_ESYNTAX, e->column = (int)p.pos + 1, snprintf(e->msg, sizeof e->msg, "invalid expression");
    return e->code;
  }
  if (peek(&p) != 0) {
    char buf[64];
    fail_at(&p, col_of(&p, p.pos), TC_CUTE_ESYNTAX, "unexpected %s after the expression", found(&p, buf, sizeof buf));
    tc_cute_value_free(out);
    return e->code;
  }
  return TC_CUTE_OK;
}

void tc_cute_error_format(tc_str *out, const char *text, const tc_cute_error *e) {
  tc_str_printf(out, "column %d: %s\n  ", e->column, e->msg);
  /* the text on one line: tabs and newlines as spaces, so the caret lines up */
  for (const char *c = text; *c; c++) tc_str_catn(out, isspace((unsigned char)*c) ? " " : c, 1);
  tc_str_cat(out, "\n  ");
  for (int i = 1; i < e->column; i++) tc_str_cat(out, " ");
  tc_str_cat(out, "^");
}
