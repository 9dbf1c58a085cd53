/* cute_api.c - the public C API of CuTe layouts (tc_cute_layout_* in
 * tilec.h): a handle around the layouts of cute.h, each call one of the
 * algebra's functions there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cute.h"

struct tc_cute_layout {
  tc_cute l;
};


/* A handle taking over l. */
static tc_cute_layout *wrap(tc_cute l) {
  tc_cute_layout *h = tc_xmalloc(sizeof *h);
  h->l = l;
  return h;
}

static tc_status fail(tc_cute_layout **out, char *err, size_t cap, const char *msg) {
  if (out) *out = NULL;
  tc_set_err(err, cap, "%s", msg);
  return TC_ERR_ARGUMENT;
}

/* The result of an algebra call (rc 0: l is the result, else msg says why;
 * msg is freed) as a handle. */
static tc_status finish(int rc, tc_cute l, tc_str *msg, tc_cute_layout **out, char *err, size_t cap) {
  tc_status st = TC_OK;
  if (rc) st = fail(out, err, cap, tc_str_cstr(msg));
  else *out = wrap(l);
  tc_str_free(msg);
  return st;
}

/* Refuses a missing argument, and a tiler where a layout is needed. */
static bool bad_layout(const tc_cute_layout *h, const char *fn, tc_cute_layout **out, char *err, size_t cap) {
  char msg[160];
  if (!h) snprintf(msg, sizeof msg, "%s: a layout argument is NULL", fn);
  else if (h->l.n > 0 && h->l.tiler) snprintf(msg, sizeof msg, "%s needs a layout, not a tiler", fn);
  else return false;
  fail(out, err, cap, msg);
  return true;
}

tc_status tc_cute_layout_parse(const char *text, tc_cute_layout **out, char *err, size_t cap) {
  if (!text) return fail(out, err, cap, "tc_cute_layout_parse: text is NULL");
  tc_cute_value v;
  tc_cute_error e;
  if (tc_cute_eval_expr(text, &v, &e) != TC_CUTE_OK) {
    tc_str s;
    tc_str_init(&s);
    tc_cute_error_format(&s, text, &e);
    fail(out, err, cap, tc_str_cstr(&s));
    tc_str_free(&s);
    return TC_ERR_ARGUMENT;
  }
  if (v.kind != TC_CV_LAYOUT) {
    char msg[200];
    snprintf(msg, sizeof msg, "'%.80s' is a %s, not a layout%s", text, tc_cute_kind_name(v.kind),
             v.kind == TC_CV_TUPLE ? " (make a tiler with tc_cute_layout_tile)" : "");
    tc_cute_value_free(&v);
    return fail(out, err, cap, msg);
  }
  *out = wrap(v.l); /* takes over the layout */
  return TC_OK;
}

char *tc_cute_layout_str(const tc_cute_layout *l) { return l ? tc_cute_str(&l->l) : NULL; }

void tc_cute_layout_free(tc_cute_layout *l) {
  if (!l) return;
  tc_cute_free(&l->l);
  free(l);
}

int64_t tc_cute_layout_size(const tc_cute_layout *l) { return l ? tc_cute_size(&l->l) : 0; }

int64_t tc_cute_layout_cosize(const tc_cute_layout *l) { return l ? tc_cute_cosize(&l->l) : 0; }

int tc_cute_layout_rank(const tc_cute_layout *l) { return l ? tc_cute_rank(&l->l) : 0; }

tc_status tc_cute_layout_mode(const tc_cute_layout *l, int i, tc_cute_layout **out, char *err, size_t cap) {
  if (!l) return fail(out, err, cap, "tc_cute_layout_mode: the layout is NULL");
  const tc_cute *m = tc_cute_mode(&l->l, i);
  if (!m) {
    char msg[120];
    snprintf(msg, sizeof msg, "mode %d does not exist: the layout has rank %d", i, tc_cute_rank(&l->l));
    return fail(out, err, cap, msg);
  }
  *out = wrap(tc_cute_copy(m));
  return TC_OK;
}

/* The coordinate value for l from the entries c[*k ...]: one integer per
 * top-level mode, or (per_leaf) one per leaf, nested as l is. */
static tc_cute_value coord_value(const tc_cute *l, const int64_t *c, int *k, bool per_leaf) {
  tc_cute_value v;
  memset(&v, 0, sizeof v);
  if (l->n == 0) {
    v.kind = TC_CV_INT, v.i = c[(*k)++];
    return v;
  }
  v.kind = TC_CV_TUPLE, v.n = l->n;
  v.elems = tc_xcalloc((size_t)l->n, sizeof *v.elems);
  for (int i = 0; i < l->n; i++) {
    if (per_leaf) {
      v.elems[i] = coord_value(&l->m[i], c, k, true);
    } else {
      v.elems[i].kind = TC_CV_INT;
      v.elems[i].i = c[(*k)++];
    }
  }
  return v;
}

tc_status tc_cute_layout_at(const tc_cute_layout *l, int n, const int64_t *coord, int64_t *offset, char *err,
                            size_t cap) {
  if (!l || !coord || !offset) return fail(NULL, err, cap, "tc_cute_layout_at: a NULL argument");
  if (l->l.n > 0 && l->l.tiler) return fail(NULL, err, cap, "tc_cute_layout_at needs a layout, not a tiler");
  int rank = tc_cute_rank(&l->l), leaves = tc_cute_leaves(&l->l), k = 0;
  tc_cute_value c;
  if (n == 1) {
    memset(&c, 0, sizeof c);
    c.kind = TC_CV_INT, c.i = coord[0];
  } else if (n == rank || n == leaves) {
    c = coord_value(&l->l, coord, &k, n != rank);
  } else {
    char msg[200];
    snprintf(msg, sizeof msg,
             "a coordinate of %d entries: the layout takes 1 (an index), %d (one per mode) or %d (one per leaf)",
             n, rank, leaves);
    return fail(NULL, err, cap, msg);
  }
  tc_str msg = {0};
  int rc = tc_cute_eval_coord(&l->l, &c, offset, NULL, &msg);
  tc_cute_value_free(&c);
  tc_status st = rc ? fail(NULL, err, cap, tc_str_cstr(&msg)) : TC_OK;
  tc_str_free(&msg);
  return st;
}

/* A concatenation r as a handle, unless it is too large. */
static tc_status concatenated(tc_cute r, const char *fn, tc_cute_layout **out, char *err, size_t cap) {
  tc_str msg = {0};
  int rc = tc_cute_check_range(&r, fn, &msg);
  if (rc) tc_cute_free(&r);
  return finish(rc, r, &msg, out, err, cap);
}

/* make_layout (tiler false) and make_tile. */
static tc_status make(const char *fn, bool tiler, int n, const tc_cute_layout *const *modes, tc_cute_layout **out,
                      char *err, size_t cap) {
  char msg[160];
  if (n < (tiler ? 2 : 1) || n > 4096 || !modes) {
    snprintf(msg, sizeof msg, "%s: %d modes (it takes 1 to 4096%s)", fn, n, tiler ? ", at least 2 for a tiler" : "");
    return fail(out, err, cap, msg);
  }
  for (int i = 0; i < n; i++)
    if (bad_layout(modes[i], fn, out, err, cap)) return TC_ERR_ARGUMENT;
  tc_cute *m = tc_xmalloc((size_t)n * sizeof *m);
  for (int i = 0; i < n; i++) m[i] = tc_cute_copy(&modes[i]->l);
  tc_cute r = tc_cute_tuple(n, m);
  free(m);
  r.tiler = tiler && n > 1;
  return concatenated(r, fn, out, err, cap);
}

tc_status tc_cute_layout_make(int n, const tc_cute_layout *const *modes, tc_cute_layout **out, char *err,
                              size_t cap) {
  return make("tc_cute_layout_make", false, n, modes, out, err, cap);
}

tc_status tc_cute_layout_tile(int n, const tc_cute_layout *const *modes, tc_cute_layout **out, char *err,
                              size_t cap) {
  return make("tc_cute_layout_tile", true, n, modes, out, err, cap);
}

tc_status tc_cute_layout_append(const tc_cute_layout *l, const tc_cute_layout *x, tc_cute_layout **out, char *err,
                                size_t cap) {
  if (bad_layout(l, "append", out, err, cap) || bad_layout(x, "append", out, err, cap)) return TC_ERR_ARGUMENT;
  return concatenated(tc_cute_append(&l->l, &x->l), "append", out, err, cap);
}

tc_status tc_cute_layout_prepend(const tc_cute_layout *l, const tc_cute_layout *x, tc_cute_layout **out, char *err,
                                 size_t cap) {
  if (bad_layout(l, "prepend", out, err, cap) || bad_layout(x, "prepend", out, err, cap)) return TC_ERR_ARGUMENT;
  return concatenated(tc_cute_prepend(&l->l, &x->l), "prepend", out, err, cap);
}

tc_status tc_cute_layout_coalesce(const tc_cute_layout *l, tc_cute_layout **out, char *err, size_t cap) {
  if (bad_layout(l, "coalesce", out, err, cap)) return TC_ERR_ARGUMENT;
  *out = wrap(tc_cute_coalesce(&l->l));
  return TC_OK;
}

tc_status tc_cute_layout_filter(const tc_cute_layout *l, tc_cute_layout **out, char *err, size_t cap) {
  if (bad_layout(l, "filter", out, err, cap)) return TC_ERR_ARGUMENT;
  *out = wrap(tc_cute_filter(&l->l));
  return TC_OK;
}

/* A function of the algebra on two arguments, the first a layout. */
typedef int (*binary_fn)(const tc_cute *, const tc_cute *, tc_cute *, tc_str *);
static tc_status binary(binary_fn fn, const char *name, const tc_cute_layout *a, const tc_cute_layout *b,
                        tc_cute_layout **out, char *err, size_t cap) {
  if (bad_layout(a, name, out, err, cap)) return TC_ERR_ARGUMENT;
  tc_str msg = {0};
  if (!b) {
    tc_err_set(&msg, "%s: the second argument is NULL", name);
    return finish(-1, (tc_cute){0}, &msg, out, err, cap);
  }
  tc_cute r;
  int rc = fn(&a->l, &b->l, &r, &msg);
  return finish(rc, r, &msg, out, err, cap);
}

tc_status tc_cute_layout_composition(const tc_cute_layout *a, const tc_cute_layout *b, tc_cute_layout **out,
                                     char *err, size_t cap) {
  return binary(tc_cute_composition, "composition", a, b, out, err, cap);
}

tc_status tc_cute_layout_complement(const tc_cute_layout *l, int64_t cotarget, tc_cute_layout **out, char *err,
                                    size_t cap) {
  if (bad_layout(l, "complement", out, err, cap)) return TC_ERR_ARGUMENT;
  tc_str msg = {0};
  tc_cute r;
  int rc = tc_cute_complement(&l->l, cotarget, &r, &msg);
  return finish(rc, r, &msg, out, err, cap);
}

/* A divide or product grouped by g. */
static tc_status tiling(bool divide, tc_cute_grouping g, const tc_cute_layout *a, const tc_cute_layout *b,
                        tc_cute_layout **out, char *err, size_t cap) {
  const char *name = divide ? "divide" : "product";
  if (bad_layout(a, name, out, err, cap)) return TC_ERR_ARGUMENT;
  tc_str msg = {0};
  if (!b) {
    tc_err_set(&msg, "%s: the tiler is NULL", name);
    return finish(-1, (tc_cute){0}, &msg, out, err, cap);
  }
  tc_cute r;
  int rc = divide ? tc_cute_divide(g, &a->l, &b->l, &r, &msg) : tc_cute_product(g, &a->l, &b->l, &r, &msg);
  return finish(rc, r, &msg, out, err, cap);
}

tc_status tc_cute_layout_divide(tc_cute_grouping g, const tc_cute_layout *a, const tc_cute_layout *b,
                                tc_cute_layout **out, char *err, size_t cap) {
  return tiling(true, g, a, b, out, err, cap);
}

tc_status tc_cute_layout_product(tc_cute_grouping g, const tc_cute_layout *a, const tc_cute_layout *b,
                                 tc_cute_layout **out, char *err, size_t cap) {
  return tiling(false, g, a, b, out, err, cap);
}

tc_status tc_cute_layout_blocked_product(const tc_cute_layout *a, const tc_cute_layout *b, tc_cute_layout **out,
                                         char *err, size_t cap) {
  return binary(tc_cute_blocked_product, "blocked_product", a, b, out, err, cap);
}

tc_status tc_cute_layout_raked_product(const tc_cute_layout *a, const tc_cute_layout *b, tc_cute_layout **out,
                                       char *err, size_t cap) {
  return binary(tc_cute_raked_product, "raked_product", a, b, out, err, cap);
}
