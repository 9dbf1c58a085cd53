/* simplify.c - the rewriting simplifier for index expressions (tc_simplify).
 *
 * Works bottom-up: children are simplified first, then the node is rebuilt
 * by rw(), which applies the rules for its operator and calls itself on any
 * node it newly creates.  The whole pass repeats until nothing changes (a
 * bounded number of times).
 *
 * Soundness argument used throughout: ADD, SUB, MUL and SHL by a constant
 * are ring operations modulo 2^64, so the linear form (sum of coefficient *
 * term + constant, with wrapping coefficients) is always exact.  Rules that
 * rely on integer facts (floor division identities, orderings) first prove
 * from the ranges of the pieces that the integer value fits in int64, so the
 * wrapped and the exact value coincide.  Bit-level rules (xor/or/and with
 * a low part) need no such proof: a multiple of 2^k stays a multiple of 2^k
 * under wrapping. */
#include "expr.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ linear form */

typedef struct lterm {
  const tc_expr *t;
  int64_t c;
} lterm;

typedef struct lin {
  lterm *v;
  int n, cap;
  int64_t k;
} lin;

static int64_t wadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wmul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

static void lin_init(lin *L) {
  L->v = NULL;
  L->n = L->cap = 0;
  L->k = 0;
}

static void lin_free(lin *L) {
  free(L->v);
  lin_init(L);
}

static void lin_copy(lin *dst, const lin *src) {
  lin_init(dst);
  for (int i = 0; i < src->n; i++) TC_PUSH(dst->v, dst->n, dst->cap, src->v[i]);
  dst->k = src->k;
}

static void lin_push(lin *L, const tc_expr *t, int64_t c) {
  lterm x = {t, c};
  TC_PUSH(L->v, L->n, L->cap, x);
}

/* Adds mult * e, flattening through ADD, SUB, MUL by a constant and SHL by
 * a constant in 0..62 (which is a multiplication by 2^s modulo 2^64). */
static void lin_add(lin *L, const tc_expr *e, int64_t mult) {
  if (mult == 0) return;
  switch (e->op) {
  case TC_E_CONST: L->k = wadd(L->k, wmul(mult, e->val)); return;
  case TC_E_ADD:
    lin_add(L, e->a, mult);
    lin_add(L, e->b, mult);
    return;
  case TC_E_SUB:
    lin_add(L, e->a, mult);
    lin_add(L, e->b, wmul(mult, -1));
    return;
  case TC_E_MUL:
    if (e->b->op == TC_E_CONST) {
      lin_add(L, e->a, wmul(mult, e->b->val));
      return;
    }
    if (e->a->op == TC_E_CONST) {
      lin_add(L, e->b, wmul(mult, e->a->val));
      return;
    }
    break;
  case TC_E_SHL:
    if (e->b->op == TC_E_CONST && e->b->val >= 0 && e->b->val <= 62) {
      lin_add(L, e->a, wmul(mult, (int64_t)1 << e->b->val));
      return;
    }
    break;
  default: break;
  }
  lin_push(L, e, mult);
}

static int lterm_cmp(const void *x, const void *y) {
  const lterm *a = x, *b = y;
  return tc_e_compare(a->t, b->t);
}

/* Sorts terms canonically, merges equal terms, drops zero coefficients. */
static void lin_norm(lin *L) {
  if (L->n > 1) qsort(L->v, (size_t)L->n, sizeof(lterm), lterm_cmp);
  int m = 0;
  for (int i = 0; i < L->n; i++) {
    if (m > 0 && L->v[m - 1].t == L->v[i].t) {
      L->v[m - 1].c = wadd(L->v[m - 1].c, L->v[i].c);
    } else {
      L->v[m++] = L->v[i];
    }
  }
  int w = 0;
  for (int i = 0; i < m; i++)
    if (L->v[i].c != 0) L->v[w++] = L->v[i];
  L->n = w;
}

static const tc_expr *term_times(tc_epool *p, const tc_expr *t, int64_t c) {
  return tc_e_mul(p, t, tc_e_const(p, c));
}

/* Builds the canonical expression of a normalized linear form: the first
 * term with a positive coefficient, then the others in order, positive ones
 * added and negative ones subtracted, the constant last. */
static const tc_expr *lin_build(tc_epool *p, const lin *L) {
  if (L->n == 0) return tc_e_const(p, L->k);
  int first = 0;
  while (first < L->n && L->v[first].c <= 0) first++;
  const tc_expr *sum;
  if (first == L->n) {
    first = 0;
    if (L->k != 0) {
      sum = tc_e_const(p, L->k);
      for (int i = 0; i < L->n; i++) {
        int64_t c = L->v[i].c;
        sum = c == INT64_MIN ? tc_e_add(p, sum, term_times(p, L->v[i].t, c))
                             : tc_e_sub(p, sum, term_times(p, L->v[i].t, -c));
      }
      return sum;
    }
  }
  sum = term_times(p, L->v[first].t, L->v[first].c);
  for (int i = 0; i < L->n; i++) {
    if (i == first) continue;
    int64_t c = L->v[i].c;
    if (c > 0 || c == INT64_MIN)
      sum = tc_e_add(p, sum, term_times(p, L->v[i].t, c));
    else
      sum = tc_e_sub(p, sum, term_times(p, L->v[i].t, -c));
  }
  return tc_e_add(p, sum, tc_e_const(p, L->k));
}

/* ------------------------------------------------------------- utilities */

static int is_c(const tc_expr *e) { return e->op == TC_E_CONST; }

static int is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

static uint64_t uabs64(int64_t v) { return v < 0 ? 0u - (uint64_t)v : (uint64_t)v; }

static uint64_t ugcd(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b, b = t;
  }
  return a;
}

/* True when f * q + r fits in int64 for every q in Q's range and r in R's
 * range (so the wrapped value of f*Q + R is its exact integer value). */
static int affine_exact(int64_t f, const tc_expr *Q, const tc_expr *R) {
  int64_t qs[2] = {Q->lo, Q->hi}, rs[2] = {R->lo, R->hi};
  for (int i = 0; i < 2; i++) {
    int64_t fq, s;
    if (__builtin_mul_overflow(f, qs[i], &fq)) return 0;
    for (int j = 0; j < 2; j++)
      if (__builtin_add_overflow(fq, rs[j], &s)) return 0;
  }
  return 1;
}

/* ------------------------------------------------------------- simplifier */

typedef struct memo_ent {
  const tc_expr *k, *v;
} memo_ent;

typedef struct sctx {
  tc_epool *p;
  memo_ent *memo;
  size_t memo_cap, memo_n;
  int depth;
} sctx;

#define MAX_DEPTH 48

static size_t ptr_hash(const tc_expr *e) { return (size_t)(e->hash ^ (e->hash >> 29)); }

static const tc_expr *memo_get(sctx *s, const tc_expr *k) {
  size_t mask = s->memo_cap - 1;
  for (size_t i = ptr_hash(k) & mask; s->memo[i].k; i = (i + 1) & mask)
    if (s->memo[i].k == k) return s->memo[i].v;
  return NULL;
}

static void memo_put(sctx *s, const tc_expr *k, const tc_expr *v) {
  if ((s->memo_n + 1) * 2 > s->memo_cap) {
    size_t ncap = s->memo_cap * 2;
    memo_ent *nm = tc_xcalloc(ncap, sizeof(*nm));
    for (size_t i = 0; i < s->memo_cap; i++) {
      if (!s->memo[i].k) continue;
      size_t j = ptr_hash(s->memo[i].k) & (ncap - 1);
      while (nm[j].k) j = (j + 1) & (ncap - 1);
      nm[j] = s->memo[i];
    }
    free(s->memo);
    s->memo = nm;
    s->memo_cap = ncap;
  }
  size_t mask = s->memo_cap - 1, i = ptr_hash(k) & mask;
  while (s->memo[i].k && s->memo[i].k != k) i = (i + 1) & mask;
  if (!s->memo[i].k) s->memo_n++;
  s->memo[i].k = k;
  s->memo[i].v = v;
}

static const tc_expr *rw(sctx *s, tc_eop op, const tc_expr *a, const tc_expr *b, const tc_expr *c);

static const tc_expr *rw2(sctx *s, tc_eop op, const tc_expr *a, const tc_expr *b) {
  return rw(s, op, a, b, NULL);
}

static const tc_expr *K(sctx *s, int64_t v) { return tc_e_const(s->p, v); }

/* Finds term t in a normalized form; -1 when absent. */
static int lin_find(const lin *L, const tc_expr *t) {
  for (int i = 0; i < L->n; i++)
    if (L->v[i].t == t) return i;
  return -1;
}

static void lin_remove2(lin *L, int i, int j) {
  int w = 0;
  for (int r = 0; r < L->n; r++)
    if (r != i && r != j) L->v[w++] = L->v[r];
  L->n = w;
}

/* Normalizes a linear form, applies the div/mod recombination rules and
 * builds the result:
 *   c*(x % f) + c*f*(x / f)  ->  c*x
 *   c*x - c*f*(x / f)        ->  c*(x % f)     (x a single term)
 * both exact identities of floor division, also modulo 2^64. */
static const tc_expr *rw_lin(sctx *s, lin *L) {
  lin_norm(L);
  for (int round = 0; round < 16; round++) {
    int done = 1;
    for (int i = 0; i < L->n && done; i++) {
      const tc_expr *t = L->v[i].t;
      if (t->op != TC_E_MOD && t->op != TC_E_DIV) continue;
      if (!is_c(t->b) || t->b->val == 0) continue;
      int64_t f = t->b->val;
      const tc_expr *x = t->a;
      if (t->op == TC_E_MOD) {
        int j = -1;
        for (int q = 0; q < L->n && j < 0; q++) {
          const tc_expr *u = L->v[q].t;
          if (u->op == TC_E_DIV && u->a == x && u->b == t->b) j = q;
        }
        if (j >= 0 && L->v[j].c == wmul(L->v[i].c, f)) {
          int64_t c = L->v[i].c;
          lin_remove2(L, i, j);
          lin_add(L, x, c);
          lin_norm(L);
          done = 0;
        }
      } else {
        int j = lin_find(L, x);
        if (j >= 0 && L->v[i].c == wmul(wmul(L->v[j].c, -1), f)) {
          int64_t c = L->v[j].c;
          lin_remove2(L, i, j);
          const tc_expr *m = rw2(s, TC_E_MOD, x, t->b);
          lin_add(L, m, c);
          lin_norm(L);
          done = 0;
        }
      }
    }
    if (done) break;
  }
  return lin_build(s->p, L);
}

/* Splits L by divisor f (not 0 or -1): L = f*Q + R, where Q takes the terms
 * whose coefficient f divides (divided by f) and floor(k / f), R the other
 * terms and the constant k mod f.  Returns whether any term went to Q. */
static int lin_split(const lin *L, int64_t f, lin *Q, lin *R) {
  lin_init(Q);
  lin_init(R);
  int any = 0;
  for (int i = 0; i < L->n; i++) {
    if (tc_e_floormod(L->v[i].c, f) == 0) {
      lin_push(Q, L->v[i].t, L->v[i].c / f);
      any = 1;
    } else {
      lin_push(R, L->v[i].t, L->v[i].c);
    }
  }
  Q->k = tc_e_floordiv(L->k, f);
  R->k = tc_e_floormod(L->k, f);
  return any;
}

/* When the dividend a is known non-negative but the remainder part R of a
 * split may be negative, moves t*f from Q's constant to R's (t the least
 * that makes R non-negative), so that R / f and R % f keep printing as plain
 * C operators.  Only done when R + t*f cannot overflow, so R's new wrapped
 * value is exactly the old one plus t*f. */
static void nonneg_shift(sctx *s, lin *Q, lin *R, int64_t f, const tc_expr **Re) {
  const tc_expr *r = *Re;
  if (f <= 0 || r->lo >= 0 || r->lo == INT64_MIN) return;
  int64_t t = (-r->lo + f - 1) / f, tf, nlo, nhi, nk;
  if (__builtin_mul_overflow(t, f, &tf) || __builtin_add_overflow(r->lo, tf, &nlo) ||
      __builtin_add_overflow(r->hi, tf, &nhi) || __builtin_add_overflow(R->k, tf, &nk))
    return;
  R->k = nk;
  if (Q) Q->k = wadd(Q->k, -t);
  lin Rc;
  lin_copy(&Rc, R);
  *Re = rw_lin(s, &Rc);
  lin_free(&Rc);
}

/* The divisor-of-f rule, for f > 0: with c dividing f, L = c*X + B where
 * every coefficient of X is an integer and 0 <= B < c,
 *   L / f == X / (f/c)      and      L % f == c*(X % (f/c)) + B
 * (provided c*X + B is computed exactly).  Candidates c are the gcds of the
 * coefficients with f, largest first. */
static const tc_expr *divisor_rule(sctx *s, tc_eop op, const lin *L, int64_t f) {
  int64_t cands[16];
  int nc = 0;
  for (int i = 0; i < L->n && nc < 16; i++) {
    int64_t c = (int64_t)ugcd(uabs64(L->v[i].c), (uint64_t)f);
    if (c <= 1 || c >= f) continue;
    int dup = 0;
    for (int j = 0; j < nc; j++) dup |= cands[j] == c;
    if (!dup) cands[nc++] = c;
  }
  for (int i = 1; i < nc; i++) /* descending */
    for (int j = i; j > 0 && cands[j] > cands[j - 1]; j--) {
      int64_t t = cands[j];
      cands[j] = cands[j - 1], cands[j - 1] = t;
    }
  for (int ci = 0; ci < nc; ci++) {
    int64_t c = cands[ci];
    lin X, B;
    int any = lin_split(L, c, &X, &B);
    const tc_expr *res = NULL;
    if (any) {
      lin Bc;
      lin_copy(&Bc, &B);
      const tc_expr *Be = rw_lin(s, &Bc);
      lin_free(&Bc);
      if (Be->lo >= 0 && Be->hi < c) {
        const tc_expr *Xe = rw_lin(s, &X);
        if (affine_exact(c, Xe, Be)) {
          if (op == TC_E_DIV) {
            res = rw2(s, TC_E_DIV, Xe, K(s, f / c));
          } else {
            lin O;
            lin_init(&O);
            lin_add(&O, rw2(s, TC_E_MOD, Xe, K(s, f / c)), c);
            lin_add(&O, Be, 1);
            res = rw_lin(s, &O);
            lin_free(&O);
          }
        }
      }
    }
    lin_free(&X);
    lin_free(&B);
    if (res) return res;
  }
  return NULL;
}

static const tc_expr *rw_div(sctx *s, const tc_expr *a, const tc_expr *b) {
  tc_epool *p = s->p;
  if (!is_c(b) || is_c(a)) return tc_e_div(p, a, b);
  int64_t f = b->val;
  if (f == 0 || f == 1 || f == -1) return tc_e_div(p, a, b);
  /* (x / g) / f -> x / (g*f) for positive constants */
  if (f > 0 && a->op == TC_E_DIV && is_c(a->b) && a->b->val > 0) {
    int64_t gf;
    if (!__builtin_mul_overflow(a->b->val, f, &gf)) return rw2(s, TC_E_DIV, a->a, K(s, gf));
  }
  /* (x % (f*q)) / f -> (x / f) % q for positive constants */
  if (f > 0 && a->op == TC_E_MOD && is_c(a->b) && a->b->val > 0 && a->b->val % f == 0)
    return rw2(s, TC_E_MOD, rw2(s, TC_E_DIV, a->a, b), K(s, a->b->val / f));

  const tc_expr *res = NULL;
  lin L;
  lin_init(&L);
  lin_add(&L, a, 1);
  lin_norm(&L);
  /* common factor: (g*A) / (g*f') -> A / f' */
  uint64_t g = uabs64(f);
  for (int i = 0; i < L.n && g > 1; i++) g = ugcd(g, uabs64(L.v[i].c));
  g = ugcd(g, uabs64(L.k));
  if (g > 1 && g <= (uint64_t)INT64_MAX && L.n > 0) {
    lin A;
    lin_copy(&A, &L);
    for (int i = 0; i < A.n; i++) A.v[i].c /= (int64_t)g;
    A.k /= (int64_t)g;
    const tc_expr *Ae = rw_lin(s, &A);
    int64_t t1, t2;
    if (!__builtin_mul_overflow(Ae->lo, (int64_t)g, &t1) &&
        !__builtin_mul_overflow(Ae->hi, (int64_t)g, &t2))
      res = rw2(s, TC_E_DIV, Ae, K(s, f / (int64_t)g));
    lin_free(&A);
    if (res) {
      lin_free(&L);
      return res;
    }
  }
  /* (f*Q + R) / f -> Q + R / f, and -> Q + m when R / f is the constant m */
  lin Q, R;
  int any = lin_split(&L, f, &Q, &R);
  lin Qc;
  lin_copy(&Qc, &Q);
  const tc_expr *Qe = rw_lin(s, &Qc);
  lin_free(&Qc);
  lin Rc;
  lin_copy(&Rc, &R);
  const tc_expr *Re = rw_lin(s, &Rc);
  lin_free(&Rc);
  if (affine_exact(f, Qe, Re)) {
    int64_t m1 = tc_e_floordiv(Re->lo, f), m2 = tc_e_floordiv(Re->hi, f);
    if (m1 == m2) {
      Q.k = wadd(Q.k, m1);
      res = rw_lin(s, &Q);
    } else if (any) {
      if (a->lo >= 0) nonneg_shift(s, &Q, &R, f, &Re);
      lin_add(&Q, rw2(s, TC_E_DIV, Re, b), 1);
      res = rw_lin(s, &Q);
    }
  }
  if (!res && f > 0) res = divisor_rule(s, TC_E_DIV, &L, f);
  lin_free(&Q);
  lin_free(&R);
  lin_free(&L);
  return res ? res : tc_e_div(p, a, b);
}

static const tc_expr *rw_mod(sctx *s, const tc_expr *a, const tc_expr *b) {
  tc_epool *p = s->p;
  if (!is_c(b) || is_c(a)) return tc_e_mod(p, a, b);
  int64_t f = b->val;
  if (f == 0 || f == 1 || f == -1) return tc_e_mod(p, a, b);
  /* (x % m) % f -> x % f when f divides m */
  if (a->op == TC_E_MOD && is_c(a->b) && a->b->val != 0 && tc_e_floormod(a->b->val, f) == 0)
    return rw2(s, TC_E_MOD, a->a, b);

  const tc_expr *res = NULL;
  lin L;
  lin_init(&L);
  lin_add(&L, a, 1);
  lin_norm(&L);
  lin Q, R;
  int any = lin_split(&L, f, &Q, &R);
  lin Rc;
  lin_copy(&Rc, &R);
  const tc_expr *Re = rw_lin(s, &Rc);
  lin_free(&Rc);
  /* (f*Q + R) % f == R % f: always true modulo 2^64 when f is a power of two
   * (it divides 2^64), else only when f*Q + R is computed exactly. */
  int ok = is_pow2(f);
  if (!ok) {
    lin Qc;
    lin_copy(&Qc, &Q);
    const tc_expr *Qe = rw_lin(s, &Qc);
    lin_free(&Qc);
    ok = affine_exact(f, Qe, Re);
  }
  if (ok) {
    int64_t m1 = tc_e_floordiv(Re->lo, f), m2 = tc_e_floordiv(Re->hi, f);
    if (m1 == m2) {
      R.k = (int64_t)((uint64_t)R.k - (uint64_t)wmul(m1, f));
      res = rw_lin(s, &R);
    } else {
      if (a->lo >= 0) nonneg_shift(s, NULL, &R, f, &Re);
      if (any || R.k != L.k) res = rw2(s, TC_E_MOD, Re, b);
    }
  }
  if (!res && f > 0) res = divisor_rule(s, TC_E_MOD, &L, f);
  lin_free(&Q);
  lin_free(&R);
  lin_free(&L);
  return res ? res : tc_e_mod(p, a, b);
}

/* (H + B) op c -> H + (B op c), op XOR or OR, where H's coefficients and
 * constant are multiples of P = 2^k and c lies in [0, P) (the "swizzle"
 * rule).  The low k bits of H + B are those of B (also under wrapping, as P
 * divides 2^64) and op with c only touches those bits, so
 *   (H + B) op c == H + B - (B mod P) + ((B mod P) op c) == H + (B op c)
 * for every B; no range condition on B is needed.  The smallest usable k
 * (just enough bits for c) moves the most terms into H. */
static const tc_expr *swizzle(sctx *s, tc_eop op, const tc_expr *x, const tc_expr *c) {
  if (c->lo < 0 || c->hi <= 0 || is_c(x)) return NULL;
  int k = tc_nbits(c->hi);
  if (k > 62) return NULL;
  int64_t P = (int64_t)1 << k;
  lin L, H, B;
  lin_init(&L);
  lin_add(&L, x, 1);
  lin_norm(&L);
  const tc_expr *res = NULL;
  int any = lin_split(&L, P, &H, &B);
  if (any || H.k != 0) {
    const tc_expr *Be = rw_lin(s, &B);
    for (int i = 0; i < H.n; i++) H.v[i].c = wmul(H.v[i].c, P);
    H.k = wmul(H.k, P);
    lin_add(&H, rw2(s, op, Be, c), 1);
    res = rw_lin(s, &H);
  }
  lin_free(&L);
  lin_free(&H);
  lin_free(&B);
  return res;
}

/* Canonical operand order for a commutative operator: a constant goes
 * right, otherwise the smaller operand (tc_e_compare) goes left. */
static void order2(const tc_expr **a, const tc_expr **b) {
  if (is_c(*b)) return;
  if (is_c(*a) || tc_e_compare(*a, *b) > 0) {
    const tc_expr *t = *a;
    *a = *b, *b = t;
  }
}

static void xor_leaves(const tc_expr *e, const tc_expr ***v, int *n, int *cap, int64_t *k) {
  if (e->op == TC_E_XOR) {
    xor_leaves(e->a, v, n, cap, k);
    xor_leaves(e->b, v, n, cap, k);
  } else if (e->op == TC_E_CONST) {
    *k ^= e->val;
  } else {
    TC_PUSH(*v, *n, *cap, e);
  }
}

static int ptr_cmp(const void *x, const void *y) {
  return tc_e_compare(*(const tc_expr *const *)x, *(const tc_expr *const *)y);
}

static const tc_expr *rw_xor(sctx *s, const tc_expr *a, const tc_expr *b) {
  tc_epool *p = s->p;
  const tc_expr **v = NULL;
  int n = 0, cap = 0;
  int64_t k = 0;
  xor_leaves(a, &v, &n, &cap, &k);
  xor_leaves(b, &v, &n, &cap, &k);
  if (n > 1) qsort(v, (size_t)n, sizeof(*v), ptr_cmp);
  int m = 0; /* cancel equal pairs */
  for (int i = 0; i < n; i++) {
    if (m > 0 && v[m - 1] == v[i])
      m--;
    else
      v[m++] = v[i];
  }
  const tc_expr *res;
  if (m == 0) {
    res = K(s, k);
  } else {
    res = v[0];
    for (int i = 1; i < m; i++) res = tc_e_xor(p, res, v[i]);
    res = tc_e_xor(p, res, K(s, k));
    int nops = m + (k != 0);
    if (nops == 2) {
      const tc_expr *u = v[0], *w = m == 2 ? v[1] : K(s, k);
      const tc_expr *r = swizzle(s, TC_E_XOR, u, w);
      if (!r) r = swizzle(s, TC_E_XOR, w, u);
      if (r) res = r;
    }
  }
  free(v);
  return res;
}

/* x & c where c lies in [0, 2^k): the terms of x that are multiples of 2^k
 * do not reach the low k bits (also under wrapping) and can be dropped. */
static const tc_expr *and_drop(sctx *s, const tc_expr *x, const tc_expr *c) {
  if (c->lo < 0 || c->hi <= 0 || is_c(x)) return NULL;
  int k = tc_nbits(c->hi);
  if (k > 62) return NULL;
  int64_t P = (int64_t)1 << k;
  lin L, H, B;
  lin_init(&L);
  lin_add(&L, x, 1);
  lin_norm(&L);
  int any = lin_split(&L, P, &H, &B);
  const tc_expr *res = NULL;
  if (any || B.k != L.k) {
    const tc_expr *Be = rw_lin(s, &B);
    res = rw2(s, TC_E_AND, Be, c);
  }
  lin_free(&L);
  lin_free(&H);
  lin_free(&B);
  return res;
}

static const tc_expr *rw_and(sctx *s, const tc_expr *a, const tc_expr *b) {
  order2(&a, &b);
  if (is_c(b)) {
    int64_t m = b->val;
    /* x & (2^k - 1) == x mod 2^k (floor) for every x */
    if (m > 0 && m < INT64_MAX && is_pow2(m + 1)) return rw2(s, TC_E_MOD, a, K(s, m + 1));
    /* x in [0, 2^k) and the low k bits of m all set: x & m == x */
    if (a->lo >= 0) {
      int k = tc_nbits(a->hi);
      if (k <= 62) {
        uint64_t low = ((uint64_t)1 << k) - 1;
        if (((uint64_t)m & low) == low) return a;
      }
    }
  }
  const tc_expr *r = and_drop(s, a, b);
  if (!r) r = and_drop(s, b, a);
  return r ? r : tc_e_and(s->p, a, b);
}

static const tc_expr *rw_or(sctx *s, const tc_expr *a, const tc_expr *b) {
  order2(&a, &b);
  const tc_expr *r = swizzle(s, TC_E_OR, a, b);
  if (!r) r = swizzle(s, TC_E_OR, b, a);
  return r ? r : tc_e_bin(s->p, TC_E_OR, a, b);
}

/* Range of a - b when it is computed exactly (no wrap), using the linear
 * form of the difference so that common terms cancel.  Returns 0 if the
 * subtraction could overflow. */
static int diff_range(sctx *s, const tc_expr *a, const tc_expr *b, int64_t *lo, int64_t *hi) {
  int64_t l, h;
  if (__builtin_sub_overflow(a->lo, b->hi, &l) || __builtin_sub_overflow(a->hi, b->lo, &h))
    return 0;
  lin L;
  lin_init(&L);
  lin_add(&L, a, 1);
  lin_add(&L, b, -1);
  lin_norm(&L);
  const tc_expr *d = lin_build(s->p, &L);
  lin_free(&L);
  *lo = d->lo > l ? d->lo : l;
  *hi = d->hi < h ? d->hi : h;
  return 1;
}

/* The range of the wrapped difference a - b (exact or not): enough for
 * equality tests, since x - y == 0 modulo 2^64 iff x == y. */
static void wdiff_range(sctx *s, const tc_expr *a, const tc_expr *b, int64_t *lo, int64_t *hi) {
  lin L;
  lin_init(&L);
  lin_add(&L, a, 1);
  lin_add(&L, b, -1);
  lin_norm(&L);
  const tc_expr *d = lin_build(s->p, &L);
  lin_free(&L);
  *lo = d->lo;
  *hi = d->hi;
}

static const tc_expr *rw_cmp(sctx *s, tc_eop op, const tc_expr *a, const tc_expr *b) {
  int64_t lo, hi;
  if (a == b || is_c(a) || is_c(b)) return tc_e_bin(s->p, op, a, b);
  switch (op) {
  case TC_E_LT:
    if (diff_range(s, a, b, &lo, &hi)) {
      if (hi < 0) return K(s, 1);
      if (lo >= 0) return K(s, 0);
    }
    break;
  case TC_E_LE:
    if (diff_range(s, a, b, &lo, &hi)) {
      if (hi <= 0) return K(s, 1);
      if (lo > 0) return K(s, 0);
    }
    break;
  case TC_E_EQ:
  case TC_E_NE:
    wdiff_range(s, a, b, &lo, &hi);
    if (lo > 0 || hi < 0) return K(s, op == TC_E_NE);
    if (lo == 0 && hi == 0) return K(s, op == TC_E_EQ);
    order2(&a, &b);
    break;
  default: break;
  }
  return tc_e_bin(s->p, op, a, b);
}

static const tc_expr *rw_minmax(sctx *s, tc_eop op, const tc_expr *a, const tc_expr *b) {
  int64_t lo, hi;
  if (a == b) return a;
  order2(&a, &b);
  /* min(min(x, c1), c2) -> min(x, min(c1, c2)), same for max */
  if (is_c(b) && a->op == op && is_c(a->b))
    return rw2(s, op, a->a, K(s, tc_e_apply(op, a->b->val, b->val)));
  if (!is_c(a) && !is_c(b) && diff_range(s, a, b, &lo, &hi)) {
    if (hi <= 0) return op == TC_E_MIN ? a : b;
    if (lo >= 0) return op == TC_E_MIN ? b : a;
  }
  return tc_e_bin(s->p, op, a, b);
}

static const tc_expr *rw(sctx *s, tc_eop op, const tc_expr *a, const tc_expr *b, const tc_expr *c) {
  tc_epool *p = s->p;
  if (op == TC_E_NOT) return tc_e_not(p, a);
  if (op == TC_E_SELECT) return tc_e_select(p, a, b, c);
  if (s->depth >= MAX_DEPTH || (is_c(a) && is_c(b))) return tc_e_bin(p, op, a, b);
  s->depth++;
  const tc_expr *r = NULL;
  lin L;
  switch (op) {
  case TC_E_ADD:
  case TC_E_SUB:
    lin_init(&L);
    lin_add(&L, a, 1);
    lin_add(&L, b, op == TC_E_ADD ? 1 : -1);
    r = rw_lin(s, &L);
    lin_free(&L);
    break;
  case TC_E_MUL:
    if (is_c(a) || is_c(b)) {
      lin_init(&L);
      lin_add(&L, tc_e_mul(p, a, b), 1);
      r = rw_lin(s, &L);
      lin_free(&L);
    } else {
      order2(&a, &b);
      r = tc_e_mul(p, a, b);
    }
    break;
  case TC_E_DIV: r = rw_div(s, a, b); break;
  case TC_E_MOD: r = rw_mod(s, a, b); break;
  case TC_E_XOR: r = rw_xor(s, a, b); break;
  case TC_E_AND: r = rw_and(s, a, b); break;
  case TC_E_OR: r = rw_or(s, a, b); break;
  case TC_E_SHL:
    /* x << s == x * 2^s modulo 2^64 for 0 <= s <= 62 */
    if (is_c(b) && b->val >= 0 && b->val <= 62)
      r = rw2(s, TC_E_MUL, a, K(s, (int64_t)1 << b->val));
    else
      r = tc_e_bin(p, op, a, b);
    break;
  case TC_E_SHR:
    /* arithmetic shift right is floor division by 2^s */
    if (is_c(b) && b->val >= 0 && b->val <= 62)
      r = rw2(s, TC_E_DIV, a, K(s, (int64_t)1 << b->val));
    else
      r = tc_e_bin(p, op, a, b);
    break;
  case TC_E_MIN:
  case TC_E_MAX: r = rw_minmax(s, op, a, b); break;
  case TC_E_LT:
  case TC_E_LE:
  case TC_E_EQ:
  case TC_E_NE: r = rw_cmp(s, op, a, b); break;
  case TC_E_LAND:
  case TC_E_LOR:
    order2(&a, &b);
    r = tc_e_bin(p, op, a, b);
    break;
  default: r = tc_e_bin(p, op, a, b); break;
  }
  s->depth--;
  return r;
}

static const tc_expr *simp(sctx *s, const tc_expr *e) {
  if (e->op == TC_E_CONST || e->op == TC_E_VAR) return e;
  const tc_expr *m = memo_get(s, e);
  if (m) return m;
  const tc_expr *a = e->a ? simp(s, e->a) : NULL;
  const tc_expr *b = e->b ? simp(s, e->b) : NULL;
  const tc_expr *c = e->c ? simp(s, e->c) : NULL;
  const tc_expr *r = rw(s, e->op, a, b, c);
  memo_put(s, e, r);
  return r;
}

const tc_expr *tc_simplify(tc_epool *p, const tc_expr *e) {
  sctx s;
  s.p = p;
  s.memo_cap = 256;
  s.memo_n = 0;
  s.memo = tc_xcalloc(s.memo_cap, sizeof(*s.memo));
  s.depth = 0;
  for (int iter = 0; iter < 8; iter++) {
    const tc_expr *r = simp(&s, e);
    if (r == e) break;
    e = r;
  }
  free(s.memo);
  return e;
}

/* The conjuncts of e into t[*k..cap) (false when there are more). */
static bool conjuncts(const tc_expr *e, const tc_expr **t, int *k, int cap) {
  if (e->op == TC_E_LAND) return conjuncts(e->a, t, k, cap) && conjuncts(e->b, t, k, cap);
  if (*k == cap) return false;
  t[(*k)++] = e;
  return true;
}

/* x + j < c with x a multiple of n and c one too (j's variable id). */
static bool lt_run_uniform(tc_epool *p, const tc_expr *e, const tc_expr *j, int64_t n) {
  int64_t id = j->val;
  if (e->op != TC_E_LT || e->b->op != TC_E_CONST || e->b->val % n) return false;
  const tc_expr *zero = tc_e_const(p, 0);
  const tc_expr *x = tc_simplify(p, tc_e_subst(p, e->a, 1, &id, &zero));
  return tc_e_is_const(tc_simplify(p, tc_e_sub(p, e->a, tc_e_add(p, x, j))), 0) &&
         tc_e_is_const(tc_simplify(p, tc_e_modc(p, x, n)), 0);
}

bool tc_e_run_uniform(tc_epool *p, const tc_expr *e, const tc_expr *j, int64_t n) {
  enum { CAP = 32 };
  const tc_expr *t[CAP];
  int k = 0;
  if (!e || !tc_e_uses(e, j->val)) return true;
  if (!conjuncts(e, t, &k, CAP)) return false;
  for (int i = 0; i < k; i++) {
    if (!tc_e_uses(t[i], j->val) || lt_run_uniform(p, t[i], j, n)) continue;
    /* y / c < d, implied by a uniform conjunct y < c' with c' <= c d (a
     * merged axis's digit checked where the whole is) */
    bool implied = false;
    const tc_expr *q = t[i];
    if (q->op == TC_E_LT && q->a->op == TC_E_DIV && q->a->b->op == TC_E_CONST && q->b->op == TC_E_CONST &&
        q->a->b->val > 0 && q->b->val > 0 && q->a->a->lo >= 0)
      for (int h = 0; h < k && !implied; h++)
        implied = t[h]->op == TC_E_LT && t[h]->a == q->a->a && t[h]->b->op == TC_E_CONST &&
                  t[h]->b->val <= q->a->b->val * q->b->val && lt_run_uniform(p, t[h], j, n);
    if (!implied) return false;
  }
  return true;
}
