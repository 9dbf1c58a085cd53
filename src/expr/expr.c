/* expr.c - integer index expressions: the hash-consing node pool, interval
 * (range) analysis done when a node is built, the reference evaluator, the
 * smart constructors (constant folding and cheap local identities) and the
 * C printer.  The full rewriting simplifier lives in simplify.c.
 *
 * Ranges are sound under the wrapping semantics: every interval operation
 * checks for int64 overflow and gives up to the full range when a bound
 * would overflow, because the wrapped value could then be anywhere. */
#include "expr.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_NODES 1024

typedef struct tc_evar {
  char *name;
  int64_t lo, hi;
} tc_evar;

struct tc_epool {
  tc_expr **chunks;
  int nchunks, capchunks;
  int chunk_used; /* nodes used in the last chunk */
  const tc_expr **tab;
  size_t tab_cap, tab_n;
  tc_evar *vars;
  int nvars, capvars;
};

/* ---------------------------------------------------------------- values */

int64_t tc_e_floordiv(int64_t x, int64_t y) {
  if (y == 0) return 0;
  if (y == -1) return (int64_t)(0u - (uint64_t)x); /* wraps for INT64_MIN */
  int64_t q = x / y, r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) q--;
  return q;
}

int64_t tc_e_floormod(int64_t x, int64_t y) {
  if (y == 0) return x;
  if (y == -1) return 0;
  int64_t r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}

static int64_t shr_arith(int64_t x, int s) {
  if (x >= 0) return x >> s;
  return ~((~x) >> s); /* ~x is non-negative: no implementation-defined shift */
}

int64_t tc_e_apply(tc_eop op, int64_t x, int64_t y) {
  uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
  switch (op) {
  case TC_E_ADD: return (int64_t)(ux + uy);
  case TC_E_SUB: return (int64_t)(ux - uy);
  case TC_E_MUL: return (int64_t)(ux * uy);
  case TC_E_DIV: return tc_e_floordiv(x, y);
  case TC_E_MOD: return tc_e_floormod(x, y);
  case TC_E_XOR: return (int64_t)(ux ^ uy);
  case TC_E_AND: return (int64_t)(ux & uy);
  case TC_E_OR: return (int64_t)(ux | uy);
  case TC_E_SHL: return (y >= 0 && y <= 62) ? (int64_t)(ux << y) : 0;
  case TC_E_SHR: return (y >= 0 && y <= 62) ? shr_arith(x, (int)y) : 0;
  case TC_E_MIN: return x < y ? x : y;
  case TC_E_MAX: return x > y ? x : y;
  case TC_E_LT: return x < y;
  case TC_E_LE: return x <= y;
  case TC_E_EQ: return x == y;
  case TC_E_NE: return x != y;
  case TC_E_LAND: return x != 0 && y != 0;
  case TC_E_LOR: return x != 0 || y != 0;
  default: return 0;
  }
}

int64_t tc_e_eval(const tc_expr *e, const int64_t *vars) {
  switch (e->op) {
  case TC_E_CONST: return e->val;
  case TC_E_VAR: return vars[e->val];
  case TC_E_NOT: return tc_e_eval(e->a, vars) == 0;
  case TC_E_SELECT:
    return tc_e_eval(e->a, vars) != 0 ? tc_e_eval(e->b, vars) : tc_e_eval(e->c, vars);
  default: return tc_e_apply(e->op, tc_e_eval(e->a, vars), tc_e_eval(e->b, vars));
  }
}

/* ---------------------------------------------------------------- ranges */

typedef struct rng {
  int64_t lo, hi;
  int empty; /* accumulating: nothing included yet */
} rng;

static const rng FULL = {INT64_MIN, INT64_MAX, 0};

static void rng_incl(rng *r, int64_t v) {
  if (r->empty) {
    r->lo = r->hi = v;
    r->empty = 0;
    return;
  }
  if (v < r->lo) r->lo = v;
  if (v > r->hi) r->hi = v;
}

static void rng_incl_range(rng *r, int64_t lo, int64_t hi) {
  rng_incl(r, lo);
  rng_incl(r, hi);
}

static rng rng_mk(int64_t lo, int64_t hi) {
  rng r = {lo, hi, 0};
  return r;
}

static int excludes0(const tc_expr *e) { return e->lo > 0 || e->hi < 0; }
static int is_zero_rng(const tc_expr *e) { return e->lo == 0 && e->hi == 0; }

static rng rng_bitwise(tc_eop op, const tc_expr *a, const tc_expr *b) {
  int64_t alo = a->lo, ahi = a->hi, blo = b->lo, bhi = b->hi;
  /* Generic: both in [-2^k, 2^k-1] implies the result is too. */
  int64_t mx = ahi > bhi ? ahi : bhi, mn = alo < blo ? alo : blo;
  int k1 = tc_nbits(mx > 0 ? mx : 0), k2 = tc_nbits(mn < 0 ? ~mn : 0);
  int k = k1 > k2 ? k1 : k2;
  rng r = k >= 63 ? FULL : rng_mk(-((int64_t)1 << k), ((int64_t)1 << k) - 1);
  int an = alo >= 0, bn = blo >= 0;  /* non-negative */
  int aneg = ahi < 0, bneg = bhi < 0; /* negative */
  switch (op) {
  case TC_E_AND:
    if (an && bn) return rng_mk(0, ahi < bhi ? ahi : bhi);
    if (an) return rng_mk(0, ahi);
    if (bn) return rng_mk(0, bhi);
    if (aneg && bneg) r.hi = ahi < bhi ? ahi : bhi;
    return r;
  case TC_E_OR:
    if (an && bn) {
      r.lo = alo > blo ? alo : blo;
      return r;
    }
    if (aneg && bneg) return rng_mk(alo > blo ? alo : blo, -1);
    if (aneg) return rng_mk(alo, -1);
    if (bneg) return rng_mk(blo, -1);
    return r;
  case TC_E_XOR:
    if (an && bn) {
      int kk = tc_nbits(mx);
      return rng_mk(0, kk >= 63 ? INT64_MAX : ((int64_t)1 << kk) - 1);
    }
    if (aneg && bneg) {
      int64_t m = ~alo > ~blo ? ~alo : ~blo;
      int kk = tc_nbits(m);
      return rng_mk(0, kk >= 63 ? INT64_MAX : ((int64_t)1 << kk) - 1);
    }
    if ((an && bneg) || (aneg && bn)) {
      int64_t m1 = an ? ahi : bhi, m2 = an ? ~blo : ~alo;
      int kk = tc_nbits(m1 > m2 ? m1 : m2);
      return rng_mk(kk >= 63 ? INT64_MIN : -((int64_t)1 << kk), -1);
    }
    return r;
  default: return r;
  }
}

/* Range of floor(x / d) over x in [alo, ahi], d in [d1, d2] with d1..d2 all
 * non-zero and of one sign: the extremes lie at the corners. */
static void rng_div_corners(rng *r, int64_t alo, int64_t ahi, int64_t d1, int64_t d2) {
  rng_incl(r, tc_e_floordiv(alo, d1));
  rng_incl(r, tc_e_floordiv(alo, d2));
  rng_incl(r, tc_e_floordiv(ahi, d1));
  rng_incl(r, tc_e_floordiv(ahi, d2));
}

static rng rng_div(const tc_expr *a, const tc_expr *b) {
  rng r = {0, 0, 1};
  if (b->lo <= 0 && b->hi >= 0) rng_incl(&r, 0);
  if (b->hi >= 1) rng_div_corners(&r, a->lo, a->hi, b->lo > 1 ? b->lo : 1, b->hi);
  if (b->lo <= -1) {
    int64_t n2 = b->hi < -1 ? b->hi : -1;
    if (a->lo == INT64_MIN && n2 == -1) return FULL; /* INT64_MIN / -1 wraps */
    rng_div_corners(&r, a->lo, a->hi, b->lo, n2);
  }
  return r;
}

static rng rng_mod(const tc_expr *a, const tc_expr *b) {
  rng r = {0, 0, 1};
  int64_t alo = a->lo, ahi = a->hi;
  if (b->lo <= 0 && b->hi >= 0) rng_incl_range(&r, alo, ahi);
  if (b->hi >= 1) {
    int64_t p1 = b->lo > 1 ? b->lo : 1, p2 = b->hi;
    if (p1 == p2 && tc_e_floordiv(alo, p1) == tc_e_floordiv(ahi, p1))
      rng_incl_range(&r, tc_e_floormod(alo, p1), tc_e_floormod(ahi, p1));
    else if (alo >= 0 && ahi < p1)
      rng_incl_range(&r, alo, ahi);
    else if (alo >= 0)
      rng_incl_range(&r, 0, ahi < p2 - 1 ? ahi : p2 - 1);
    else
      rng_incl_range(&r, 0, p2 - 1);
  }
  if (b->lo <= -1) {
    int64_t n1 = b->lo, n2 = b->hi < -1 ? b->hi : -1;
    if (n1 == n2 && tc_e_floordiv(alo, n1) == tc_e_floordiv(ahi, n1))
      rng_incl_range(&r, tc_e_floormod(alo, n1), tc_e_floormod(ahi, n1));
    else if (ahi <= 0 && alo > n2)
      rng_incl_range(&r, alo, ahi);
    else if (ahi <= 0)
      rng_incl_range(&r, alo > n1 + 1 ? alo : n1 + 1, 0);
    else
      rng_incl_range(&r, n1 + 1, 0);
  }
  return r;
}

static rng rng_shift(tc_eop op, const tc_expr *a, const tc_expr *b) {
  rng r = {0, 0, 1};
  if (b->lo < 0 || b->hi > 62) rng_incl(&r, 0);
  int64_t s1 = b->lo > 0 ? b->lo : 0, s2 = b->hi < 62 ? b->hi : 62;
  if (s1 > s2) return r;
  int64_t p1 = (int64_t)1 << s1, p2 = (int64_t)1 << s2;
  if (op == TC_E_SHR) {
    rng_div_corners(&r, a->lo, a->hi, p1, p2);
    return r;
  }
  int64_t v;
  if (__builtin_mul_overflow(a->lo, p1, &v)) return FULL;
  rng_incl(&r, v);
  if (__builtin_mul_overflow(a->lo, p2, &v)) return FULL;
  rng_incl(&r, v);
  if (__builtin_mul_overflow(a->hi, p1, &v)) return FULL;
  rng_incl(&r, v);
  if (__builtin_mul_overflow(a->hi, p2, &v)) return FULL;
  rng_incl(&r, v);
  return r;
}

static rng rng_of(const tc_epool *p, tc_eop op, int64_t val, const tc_expr *a,
                  const tc_expr *b, const tc_expr *c) {
  int64_t v1, v2, v3, v4;
  switch (op) {
  case TC_E_CONST: return rng_mk(val, val);
  case TC_E_VAR: return rng_mk(p->vars[val].lo, p->vars[val].hi);
  case TC_E_ADD:
    if (__builtin_add_overflow(a->lo, b->lo, &v1) || __builtin_add_overflow(a->hi, b->hi, &v2))
      return FULL;
    return rng_mk(v1, v2);
  case TC_E_SUB:
    if (__builtin_sub_overflow(a->lo, b->hi, &v1) || __builtin_sub_overflow(a->hi, b->lo, &v2))
      return FULL;
    return rng_mk(v1, v2);
  case TC_E_MUL: {
    if (__builtin_mul_overflow(a->lo, b->lo, &v1) || __builtin_mul_overflow(a->lo, b->hi, &v2) ||
        __builtin_mul_overflow(a->hi, b->lo, &v3) || __builtin_mul_overflow(a->hi, b->hi, &v4))
      return FULL;
    rng r = {0, 0, 1};
    rng_incl(&r, v1), rng_incl(&r, v2), rng_incl(&r, v3), rng_incl(&r, v4);
    return r;
  }
  case TC_E_DIV: return rng_div(a, b);
  case TC_E_MOD: return rng_mod(a, b);
  case TC_E_XOR:
  case TC_E_AND:
  case TC_E_OR: return rng_bitwise(op, a, b);
  case TC_E_SHL:
  case TC_E_SHR: return rng_shift(op, a, b);
  case TC_E_MIN: return rng_mk(a->lo < b->lo ? a->lo : b->lo, a->hi < b->hi ? a->hi : b->hi);
  case TC_E_MAX: return rng_mk(a->lo > b->lo ? a->lo : b->lo, a->hi > b->hi ? a->hi : b->hi);
  case TC_E_LT:
    if (a->hi < b->lo) return rng_mk(1, 1);
    if (a->lo >= b->hi) return rng_mk(0, 0);
    return rng_mk(0, 1);
  case TC_E_LE:
    if (a->hi <= b->lo) return rng_mk(1, 1);
    if (a->lo > b->hi) return rng_mk(0, 0);
    return rng_mk(0, 1);
  case TC_E_EQ:
  case TC_E_NE: {
    int64_t t = op == TC_E_EQ ? 1 : 0;
    if (a->lo == a->hi && b->lo == b->hi && a->lo == b->lo) return rng_mk(t, t);
    if (a->hi < b->lo || b->hi < a->lo) return rng_mk(1 - t, 1 - t);
    return rng_mk(0, 1);
  }
  case TC_E_LAND:
    if (is_zero_rng(a) || is_zero_rng(b)) return rng_mk(0, 0);
    if (excludes0(a) && excludes0(b)) return rng_mk(1, 1);
    return rng_mk(0, 1);
  case TC_E_LOR:
    if (excludes0(a) || excludes0(b)) return rng_mk(1, 1);
    if (is_zero_rng(a) && is_zero_rng(b)) return rng_mk(0, 0);
    return rng_mk(0, 1);
  case TC_E_NOT:
    if (is_zero_rng(a)) return rng_mk(1, 1);
    if (excludes0(a)) return rng_mk(0, 0);
    return rng_mk(0, 1);
  case TC_E_SELECT:
    if (excludes0(a)) return rng_mk(b->lo, b->hi);
    if (is_zero_rng(a)) return rng_mk(c->lo, c->hi);
    return rng_mk(b->lo < c->lo ? b->lo : c->lo, b->hi > c->hi ? b->hi : c->hi);
  default: return FULL;
  }
}

/* ------------------------------------------------------------------ pool */

tc_epool *tc_epool_new(void) {
  tc_epool *p = tc_xcalloc(1, sizeof(*p));
  p->tab_cap = 1024;
  p->tab = tc_xcalloc(p->tab_cap, sizeof(*p->tab));
  return p;
}

void tc_epool_free(tc_epool *p) {
  if (!p) return;
  for (int i = 0; i < p->nchunks; i++) free(p->chunks[i]);
  free(p->chunks);
  free(p->tab);
  for (int i = 0; i < p->nvars; i++) free(p->vars[i].name);
  free(p->vars);
  free(p);
}

static uint64_t node_hash(tc_eop op, int64_t val, const tc_expr *a, const tc_expr *b,
                          const tc_expr *c) {
  uint64_t h = 0xcbf29ce484222325ULL;
  h = tc_hash_mix(h, (uint64_t)op);
  h = tc_hash_mix(h, (uint64_t)val);
  h = tc_hash_mix(h, a ? a->hash : 0);
  h = tc_hash_mix(h, b ? b->hash : 0);
  h = tc_hash_mix(h, c ? c->hash : 0);
  return h;
}

static void tab_grow(tc_epool *p) {
  size_t ncap = p->tab_cap * 2;
  const tc_expr **nt = tc_xcalloc(ncap, sizeof(*nt));
  for (size_t i = 0; i < p->tab_cap; i++) {
    const tc_expr *e = p->tab[i];
    if (!e) continue;
    size_t j = (size_t)e->hash & (ncap - 1);
    while (nt[j]) j = (j + 1) & (ncap - 1);
    nt[j] = e;
  }
  free(p->tab);
  p->tab = nt;
  p->tab_cap = ncap;
}

static tc_expr *node_alloc(tc_epool *p) {
  if (p->nchunks == 0 || p->chunk_used == CHUNK_NODES) {
    TC_PUSH(p->chunks, p->nchunks, p->capchunks, tc_xmalloc(CHUNK_NODES * sizeof(tc_expr)));
    p->chunk_used = 0;
  }
  return &p->chunks[p->nchunks - 1][p->chunk_used++];
}

/* Finds or creates the node (op, val, a, b, c).  No rewriting. */
static const tc_expr *intern(tc_epool *p, tc_eop op, int64_t val, const tc_expr *a,
                             const tc_expr *b, const tc_expr *c) {
  uint64_t h = node_hash(op, val, a, b, c);
  size_t mask = p->tab_cap - 1, i = (size_t)h & mask;
  for (const tc_expr *e; (e = p->tab[i]) != NULL; i = (i + 1) & mask) {
    if (e->hash == h && e->op == op && e->val == val && e->a == a && e->b == b && e->c == c)
      return e;
  }
  rng r = rng_of(p, op, val, a, b, c);
  tc_expr *n = node_alloc(p);
  n->op = op;
  n->val = val;
  n->a = a, n->b = b, n->c = c;
  n->lo = r.lo, n->hi = r.hi;
  n->hash = h;
  p->tab[i] = n;
  if (++p->tab_n * 2 > p->tab_cap) tab_grow(p);
  return n;
}

const tc_expr *tc_e_const(tc_epool *p, int64_t v) { return intern(p, TC_E_CONST, v, NULL, NULL, NULL); }

const tc_expr *tc_e_var(tc_epool *p, const char *name, int64_t lo, int64_t hi) {
  if (lo > hi) {
    int64_t t = lo;
    lo = hi, hi = t;
  }
  char buf[32];
  if (!name) {
    snprintf(buf, sizeof buf, "v%d", p->nvars);
    name = buf;
  }
  tc_evar v = {tc_xstrdup(name), lo, hi};
  TC_PUSH(p->vars, p->nvars, p->capvars, v);
  return intern(p, TC_E_VAR, p->nvars - 1, NULL, NULL, NULL);
}

int tc_e_num_vars(const tc_epool *p) { return p->nvars; }

const char *tc_e_var_name(const tc_epool *p, int var_id) {
  return (var_id >= 0 && var_id < p->nvars) ? p->vars[var_id].name : "?";
}

void tc_e_var_range(const tc_epool *p, int var_id, int64_t *lo, int64_t *hi) {
  if (var_id < 0 || var_id >= p->nvars) {
    *lo = INT64_MIN, *hi = INT64_MAX;
    return;
  }
  *lo = p->vars[var_id].lo;
  *hi = p->vars[var_id].hi;
}

/* ------------------------------------------------------------------- raw */

static int is_binary(tc_eop op) { return op >= TC_E_ADD && op <= TC_E_LOR; }

const tc_expr *tc_e_raw2(tc_epool *p, tc_eop op, const tc_expr *a, const tc_expr *b) {
  if (!is_binary(op)) {
    fprintf(stderr, "tilec: tc_e_raw2 with non-binary op %d\n", (int)op);
    abort();
  }
  return intern(p, op, 0, a, b, NULL);
}

const tc_expr *tc_e_raw_not(tc_epool *p, const tc_expr *a) {
  return intern(p, TC_E_NOT, 0, a, NULL, NULL);
}

const tc_expr *tc_e_raw_select(tc_epool *p, const tc_expr *c, const tc_expr *a, const tc_expr *b) {
  return intern(p, TC_E_SELECT, 0, c, a, b);
}

/* ----------------------------------------------------------------- order */

static int cmp_rec(const tc_expr *x, const tc_expr *y, int depth) {
  if (x == y) return 0;
  if (!x || !y) return x ? 1 : -1;
  if (x->op != y->op) return x->op < y->op ? -1 : 1;
  if (x->op == TC_E_CONST || x->op == TC_E_VAR) return x->val < y->val ? -1 : x->val > y->val;
  if (depth > 8 && x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
  int r = cmp_rec(x->a, y->a, depth + 1);
  if (!r) r = cmp_rec(x->b, y->b, depth + 1);
  if (!r) r = cmp_rec(x->c, y->c, depth + 1);
  if (!r) r = x < y ? -1 : 1; /* distinct pools only */
  return r;
}

int tc_e_compare(const tc_expr *x, const tc_expr *y) { return cmp_rec(x, y, 0); }

/* ---------------------------------------------------------------- smart */

/* Builds a node with rewriting already done: a node whose range is a single
 * value becomes that constant. */
static const tc_expr *mk(tc_epool *p, tc_eop op, const tc_expr *a, const tc_expr *b,
                         const tc_expr *c) {
  rng r = rng_of(p, op, 0, a, b, c);
  if (r.lo == r.hi) return tc_e_const(p, r.lo);
  return intern(p, op, 0, a, b, c);
}

static int is_commutative(tc_eop op) {
  switch (op) {
  case TC_E_ADD: case TC_E_MUL: case TC_E_XOR: case TC_E_AND: case TC_E_OR:
  case TC_E_MIN: case TC_E_MAX: case TC_E_EQ: case TC_E_NE: case TC_E_LAND: case TC_E_LOR:
    return 1;
  default: return 0;
  }
}

static int is_bool_rng(const tc_expr *e) { return e->lo >= 0 && e->hi <= 1; }

/* x != 0 as a 0/1 value. */
static const tc_expr *as_bool(tc_epool *p, const tc_expr *x) {
  if (is_bool_rng(x)) return x;
  return tc_e_bin(p, TC_E_NE, x, tc_e_const(p, 0));
}

static int is_c(const tc_expr *e) { return e->op == TC_E_CONST; }

const tc_expr *tc_e_bin(tc_epool *p, tc_eop op, const tc_expr *a, const tc_expr *b) {
  if (!is_binary(op)) {
    fprintf(stderr, "tilec: tc_e_bin with non-binary op %d\n", (int)op);
    abort();
  }
  if (is_c(a) && is_c(b)) return tc_e_const(p, tc_e_apply(op, a->val, b->val));
  if (is_commutative(op) && is_c(a)) {
    const tc_expr *t = a;
    a = b, b = t;
  }
  int bc = is_c(b);
  int64_t bv = bc ? b->val : 0;
  switch (op) {
  case TC_E_ADD:
    if (bc && bv == 0) return a;
    if (bc && bv < 0 && bv != INT64_MIN) return mk(p, TC_E_SUB, a, tc_e_const(p, -bv), NULL);
    break;
  case TC_E_SUB:
    if (bc && bv == 0) return a;
    if (a == b) return tc_e_const(p, 0);
    if (bc && bv < 0 && bv != INT64_MIN) return mk(p, TC_E_ADD, a, tc_e_const(p, -bv), NULL);
    break;
  case TC_E_MUL:
    if (bc && bv == 0) return b;
    if (bc && bv == 1) return a;
    break;
  case TC_E_DIV:
    if (tc_e_is_const(a, 0)) return a;
    if (bc && bv == 0) return b;
    if (bc && bv == 1) return a;
    if (bc && bv == -1) return tc_e_sub(p, tc_e_const(p, 0), a);
    break;
  case TC_E_MOD:
    if (tc_e_is_const(a, 0)) return a;
    if (bc && bv == 0) return a;
    if (bc && (bv == 1 || bv == -1)) return tc_e_const(p, 0);
    if (a == b) return tc_e_const(p, 0);
    if (b->lo >= 1 && a->lo >= 0 && a->hi < b->lo) return a;
    if (b->hi <= -1 && a->hi <= 0 && a->lo > b->hi) return a;
    break;
  case TC_E_XOR:
    if (bc && bv == 0) return a;
    if (a == b) return tc_e_const(p, 0);
    break;
  case TC_E_AND:
    if (bc && bv == 0) return b;
    if (bc && bv == -1) return a;
    if (a == b) return a;
    break;
  case TC_E_OR:
    if (bc && bv == 0) return a;
    if (bc && bv == -1) return b;
    if (a == b) return a;
    break;
  case TC_E_SHL:
  case TC_E_SHR:
    if (tc_e_is_const(a, 0)) return a;
    if (bc && bv == 0) return a;
    if (bc && (bv < 0 || bv > 62)) return tc_e_const(p, 0);
    break;
  case TC_E_MIN:
    if (a == b || a->hi <= b->lo) return a;
    if (b->hi <= a->lo) return b;
    break;
  case TC_E_MAX:
    if (a == b || a->hi <= b->lo) return b;
    if (b->hi <= a->lo) return a;
    break;
  case TC_E_LT:
  case TC_E_NE:
    if (a == b) return tc_e_const(p, 0);
    break;
  case TC_E_LE:
  case TC_E_EQ:
    if (a == b) return tc_e_const(p, 1);
    break;
  case TC_E_LAND:
    if (is_zero_rng(a) || is_zero_rng(b)) return tc_e_const(p, 0);
    if (excludes0(a)) return as_bool(p, b);
    if (excludes0(b)) return as_bool(p, a);
    if (a == b) return as_bool(p, a);
    break;
  case TC_E_LOR:
    if (excludes0(a) || excludes0(b)) return tc_e_const(p, 1);
    if (is_zero_rng(a)) return as_bool(p, b);
    if (is_zero_rng(b)) return as_bool(p, a);
    if (a == b) return as_bool(p, a);
    break;
  default: break;
  }
  return mk(p, op, a, b, NULL);
}

const tc_expr *tc_e_add(tc_epool *p, const tc_expr *a, const tc_expr *b) { return tc_e_bin(p, TC_E_ADD, a, b); }
const tc_expr *tc_e_sub(tc_epool *p, const tc_expr *a, const tc_expr *b) { return tc_e_bin(p, TC_E_SUB, a, b); }
const tc_expr *tc_e_mul(tc_epool *p, const tc_expr *a, const tc_expr *b) { return tc_e_bin(p, TC_E_MUL, a, b); }
const tc_expr *tc_e_div(tc_epool *p, const tc_expr *a, const tc_expr *b) { return tc_e_bin(p, TC_E_DIV, a, b); }
const tc_expr *tc_e_mod(tc_epool *p, const tc_expr *a, const tc_expr *b) { return tc_e_bin(p, TC_E_MOD, a, b); }
const tc_expr *tc_e_xor(tc_epool *p, const tc_expr *a, const tc_expr *b) { return tc_e_bin(p, TC_E_XOR, a, b); }
const tc_expr *tc_e_and(tc_epool *p, const tc_expr *a, const tc_expr *b) { return tc_e_bin(p, TC_E_AND, a, b); }
const tc_expr *tc_e_lt(tc_epool *p, const tc_expr *a, const tc_expr *b) { return tc_e_bin(p, TC_E_LT, a, b); }
const tc_expr *tc_e_le(tc_epool *p, const tc_expr *a, const tc_expr *b) { return tc_e_bin(p, TC_E_LE, a, b); }
const tc_expr *tc_e_land(tc_epool *p, const tc_expr *a, const tc_expr *b) { return tc_e_bin(p, TC_E_LAND, a, b); }

const tc_expr *tc_e_addc(tc_epool *p, const tc_expr *a, int64_t c) { return tc_e_add(p, a, tc_e_const(p, c)); }
const tc_expr *tc_e_mulc(tc_epool *p, const tc_expr *a, int64_t c) { return tc_e_mul(p, a, tc_e_const(p, c)); }
const tc_expr *tc_e_divc(tc_epool *p, const tc_expr *a, int64_t c) { return tc_e_div(p, a, tc_e_const(p, c)); }
const tc_expr *tc_e_modc(tc_epool *p, const tc_expr *a, int64_t c) { return tc_e_mod(p, a, tc_e_const(p, c)); }

const tc_expr *tc_e_not(tc_epool *p, const tc_expr *a) {
  if (is_c(a)) return tc_e_const(p, a->val == 0);
  switch (a->op) {
  case TC_E_LT: return tc_e_bin(p, TC_E_LE, a->b, a->a);
  case TC_E_LE: return tc_e_bin(p, TC_E_LT, a->b, a->a);
  case TC_E_EQ: return tc_e_bin(p, TC_E_NE, a->a, a->b);
  case TC_E_NE: return tc_e_bin(p, TC_E_EQ, a->a, a->b);
  case TC_E_NOT: return as_bool(p, a->a);
  default: break;
  }
  return mk(p, TC_E_NOT, a, NULL, NULL);
}

const tc_expr *tc_e_select(tc_epool *p, const tc_expr *c, const tc_expr *a, const tc_expr *b) {
  if (excludes0(c)) return a;
  if (is_zero_rng(c)) return b;
  if (a == b) return a;
  if (c->op == TC_E_NOT) return tc_e_select(p, c->a, b, a);
  if (tc_e_is_const(a, 1) && tc_e_is_const(b, 0)) return as_bool(p, c);
  if (tc_e_is_const(a, 0) && tc_e_is_const(b, 1)) return tc_e_not(p, c);
  return mk(p, TC_E_SELECT, c, a, b);
}

/* ------------------------------------------------------------ count/print */

int tc_e_count_op(const tc_expr *e, tc_eop op) {
  if (!e) return 0;
  return (e->op == op) + tc_e_count_op(e->a, op) + tc_e_count_op(e->b, op) +
         tc_e_count_op(e->c, op);
}

/* C precedence levels (higher binds tighter). */
enum {
  P_TERNARY = 3, P_LOR = 4, P_LAND = 5, P_OR = 6, P_XOR = 7, P_AND = 8, P_EQ = 9,
  P_REL = 10, P_SHIFT = 11, P_ADD = 12, P_MUL = 13, P_UNARY = 14, P_ATOM = 15
};

static int nonneg_div(const tc_expr *e) { return e->a->lo >= 0 && e->b->lo > 0; }

static int prec_of(const tc_expr *e) {
  switch (e->op) {
  case TC_E_CONST: case TC_E_VAR: case TC_E_MIN: case TC_E_MAX: case TC_E_SELECT:
    return P_ATOM;
  case TC_E_ADD: case TC_E_SUB: return P_ADD;
  case TC_E_MUL: return P_MUL;
  case TC_E_DIV: case TC_E_MOD: return nonneg_div(e) ? P_MUL : P_ATOM;
  case TC_E_XOR: return P_XOR;
  case TC_E_AND: return P_AND;
  case TC_E_OR: return P_OR;
  case TC_E_SHL: case TC_E_SHR: return P_SHIFT;
  case TC_E_LT: case TC_E_LE: return P_REL;
  case TC_E_EQ: case TC_E_NE: return P_EQ;
  case TC_E_LAND: return P_LAND;
  case TC_E_LOR: return P_LOR;
  case TC_E_NOT: return P_UNARY;
  default: return P_ATOM;
  }
}

static void print_rec(tc_str *out, const tc_epool *p, const tc_expr *e, int need);

/* Operand of a bitwise, shift or logical operator: parenthesized unless it
 * is an atom (or, for the left operand of an associative operator, the same
 * operator) so that generated code compiles cleanly under -Wparentheses. */
static void print_strict(tc_str *out, const tc_epool *p, const tc_expr *e, tc_eop same, int ok_prec) {
  int pr = prec_of(e);
  int bare = pr >= P_UNARY || e->op == same || (ok_prec && pr >= ok_prec);
  if (!bare) tc_str_cat(out, "(");
  print_rec(out, p, e, 0);
  if (!bare) tc_str_cat(out, ")");
}

static void print_const(tc_str *out, int64_t v) {
  if (v == INT64_MIN) {
    tc_str_cat(out, "(-9223372036854775807LL - 1)");
    return;
  }
  const char *suf = (v > INT32_MAX || v < INT32_MIN) ? "LL" : "";
  if (v < 0)
    tc_str_printf(out, "(%" PRId64 "%s)", v, suf);
  else
    tc_str_printf(out, "%" PRId64 "%s", v, suf);
}

static const char *op_text(tc_eop op) {
  switch (op) {
  case TC_E_ADD: return " + ";
  case TC_E_SUB: return " - ";
  case TC_E_MUL: return " * ";
  case TC_E_DIV: return " / ";
  case TC_E_MOD: return " % ";
  case TC_E_XOR: return " ^ ";
  case TC_E_AND: return " & ";
  case TC_E_OR: return " | ";
  case TC_E_SHL: return " << ";
  case TC_E_SHR: return " >> ";
  case TC_E_LT: return " < ";
  case TC_E_LE: return " <= ";
  case TC_E_EQ: return " == ";
  case TC_E_NE: return " != ";
  case TC_E_LAND: return " && ";
  case TC_E_LOR: return " || ";
  default: return " ? ";
  }
}

static void print_rec(tc_str *out, const tc_epool *p, const tc_expr *e, int need) {
  int pr = prec_of(e);
  int paren = pr < need;
  if (paren) tc_str_cat(out, "(");
  switch (e->op) {
  case TC_E_CONST: print_const(out, e->val); break;
  case TC_E_VAR: tc_str_cat(out, tc_e_var_name(p, (int)e->val)); break;
  case TC_E_ADD: case TC_E_SUB: case TC_E_MUL:
    print_rec(out, p, e->a, pr);
    tc_str_cat(out, op_text(e->op));
    print_rec(out, p, e->b, pr + 1);
    break;
  case TC_E_DIV: case TC_E_MOD:
    if (nonneg_div(e)) {
      print_rec(out, p, e->a, P_MUL);
      tc_str_cat(out, op_text(e->op));
      print_rec(out, p, e->b, P_MUL + 1);
    } else {
      tc_str_cat(out, e->op == TC_E_DIV ? "tc_fdiv(" : "tc_fmod(");
      print_rec(out, p, e->a, 0);
      tc_str_cat(out, ", ");
      print_rec(out, p, e->b, 0);
      tc_str_cat(out, ")");
    }
    break;
  case TC_E_MIN: case TC_E_MAX:
    tc_str_cat(out, e->op == TC_E_MIN ? "tc_min(" : "tc_max(");
    print_rec(out, p, e->a, 0);
    tc_str_cat(out, ", ");
    print_rec(out, p, e->b, 0);
    tc_str_cat(out, ")");
    break;
  case TC_E_XOR: case TC_E_AND: case TC_E_OR: case TC_E_LAND: case TC_E_LOR:
    print_strict(out, p, e->a, e->op, e->op == TC_E_LAND || e->op == TC_E_LOR ? P_EQ : 0);
    tc_str_cat(out, op_text(e->op));
    print_strict(out, p, e->b, TC_E_NUM_OPS, e->op == TC_E_LAND || e->op == TC_E_LOR ? P_EQ : 0);
    break;
  case TC_E_SHL: case TC_E_SHR:
    print_strict(out, p, e->a, TC_E_NUM_OPS, 0);
    tc_str_cat(out, op_text(e->op));
    print_strict(out, p, e->b, TC_E_NUM_OPS, 0);
    break;
  case TC_E_LT: case TC_E_LE: case TC_E_EQ: case TC_E_NE:
    /* arithmetic operands need no parentheses; anything looser does */
    print_strict(out, p, e->a, TC_E_NUM_OPS, P_ADD);
    tc_str_cat(out, op_text(e->op));
    print_strict(out, p, e->b, TC_E_NUM_OPS, P_ADD);
    break;
  case TC_E_NOT:
    tc_str_cat(out, "!");
    print_rec(out, p, e->a, P_UNARY);
    break;
  case TC_E_SELECT:
    tc_str_cat(out, "(");
    print_strict(out, p, e->a, TC_E_NUM_OPS, P_EQ);
    tc_str_cat(out, " ? ");
    print_rec(out, p, e->b, P_LOR);
    tc_str_cat(out, " : ");
    print_rec(out, p, e->c, P_LOR);
    tc_str_cat(out, ")");
    break;
  default: tc_str_cat(out, "?"); break;
  }
  if (paren) tc_str_cat(out, ")");
}

void tc_e_print_c(tc_str *out, const tc_epool *p, const tc_expr *e) { print_rec(out, p, e, 0); }

int64_t tc_e_print_size(const tc_expr *e, int64_t cap) {
  if (!e) return 0;
  int64_t n = 1;
  const tc_expr *kids[3] = {e->a, e->b, e->c};
  for (int i = 0; i < 3 && n <= cap; i++) n += tc_e_print_size(kids[i], cap - n);
  return n;
}

const tc_expr *tc_e_subst(tc_epool *p, const tc_expr *e, int n, const int64_t *ids,
                          const tc_expr *const *vals) {
  switch (e->op) {
    case TC_E_CONST: return e;
    case TC_E_VAR:
      for (int i = 0; i < n; i++)
        if (e->val == ids[i]) return vals[i];
      return e;
    case TC_E_NOT: return tc_e_not(p, tc_e_subst(p, e->a, n, ids, vals));
    case TC_E_SELECT:
      return tc_e_select(p, tc_e_subst(p, e->a, n, ids, vals), tc_e_subst(p, e->b, n, ids, vals),
                         tc_e_subst(p, e->c, n, ids, vals));
    default:
      return tc_e_bin(p, e->op, tc_e_subst(p, e->a, n, ids, vals), tc_e_subst(p, e->b, n, ids, vals));
  }
}

bool tc_e_uses(const tc_expr *e, int64_t id) {
  if (!e) return false;
  if (e->op == TC_E_VAR) return e->val == id;
  if (e->op == TC_E_CONST) return false;
  return tc_e_uses(e->a, id) || tc_e_uses(e->b, id) || tc_e_uses(e->c, id);
}
