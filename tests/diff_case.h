/* diff_case.h - the cases of the differential tests (test_diff.c): a
 * random fusion and a random schedule, kept as a record of what was made
 * (the ops with their operands, the inputs' shapes, dtypes and value
 * ranges, the outputs, the scheduling calls with their arguments) so that
 * it can be rebuilt through the public API, evaluated independently
 * (diff_values.h), shrunk by dropping calls and ops, and printed as a C
 * program that reproduces it.
 *
 * Fusions: 1 to 3 inputs of rank 1 to 3 (extents 1 to 40, at most
 * DF_MAX_ELEMS elements), f32 mostly and f16, bf16, i32, i8 sometimes;
 * 1 to 8 unary / binary / scalar / cast / set / permute / reduction ops
 * forming a DAG; every tensor nothing reads is an output (1 to 3, added
 * in a random order).  A reduction (sum, max, min over a random set of
 * axes, keeping the rank) is often followed by a binary op that
 * broadcasts it against a tensor of the unreduced shape (x - max(x),
 * x / sum(x)).  Every op is chosen so that its operands' value ranges
 * (tracked as intervals over the whole tensor) keep it defined and away
 * from overflow: log of values >= 0.1, divisors at least 0.25 from zero
 * (1 for integers), exp of values <= 8, casts to integers of values in
 * range; x - max(x) is known to be <= 0 with a 0 in every reduced row, so
 * that exp of it summed over those rows is at least 1 (softmax).
 * Some reductions of float tensors are Welford states (tc_welford) with
 * their mean and / or variance, which later ops read like a reduction's
 * result; half of the scalar ops take a scalar input (tc_scalar_input)
 * instead, with two values for two launches of the kernel.
 *
 * Schedules: caches of inputs (tc_cache_after) and outputs
 * (tc_cache_before) in shared or local memory, intermediates in shared
 * memory, splits (factors that do and do not divide), merges and
 * reorders of a reference tensor (an output, or a reduction),
 * propagated to the fusion; block, thread, unroll and vector axes,
 * copied to the fusion, where an axis a reduction reduces mostly gets a
 * thread axis (a block reduction) or stays serial; reductions' axes
 * reordered innermost, and reductions that are outputs often computed
 * into a local cache (tc_cache_before); inlining
 * (tc_inline_most, tc_inline_all_at, tc_inline_at, tc_compute_at); and
 * sometimes a few random calls on random tensors.  Each call is made on a
 * live fusion as it is generated, so that its arguments fit the tensor as
 * it is then; a call the library refuses is kept in the record (it is a
 * no-op) and printed with its message. */
#ifndef DIFF_CASE_H
#define DIFF_CASE_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff_values.h"

#define DF_MAX_T 16      /* inputs and ops */
#define DF_MAX_H 24      /* tensors and caches */
#define DF_MAX_STEPS 48  /* scheduling calls */
#define DF_MAX_AX 12     /* loop axes of a reorder */
#define DF_MAX_ELEMS 2048
#define DF_MAX_THREADS 256
/* Unrolled loops (their extents multiplied) stay this short: PoCL takes
 * tens of seconds over a few hundred unrolled copies of a body. */
#define DF_MAX_UNROLL 16

/* ---- random numbers: splitmix64 ----------------------------------------- */

/* The input values, in a macro so that the printed reproduction uses the
 * very same code (DF_FILL_TEXT).  Value i is (lo + r % count) * 2^-shift,
 * exact in the dtype; with edge values, one in 8 is instead 0, -0, +-inf,
 * NaN, the largest finite or the smallest normal or subnormal value of a
 * floating-point dtype. */
#define DF_FILL_CODE                                                           \
  static uint64_t df_mix(uint64_t *s) {                                        \
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);                                \
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;                               \
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;                               \
    return z ^ (z >> 31);                                                      \
  }                                                                            \
  static double df_value(uint64_t *s, long long lo, unsigned count, int shift, \
                         int edge, tc_dtype t) {                               \
    uint64_t r = df_mix(s);                                                    \
    int fl = t == TC_F32 || t == TC_F16 || t == TC_BF16;                       \
    if (edge && fl && (r >> 61) == 0) {                                        \
      double big = t == TC_F16 ? 65504.0                                       \
                   : t == TC_BF16 ? 3.3895313892515355e38                      \
                                  : 3.4028234663852886e38;                     \
      int emin = t == TC_F16 ? -14 : -126;                                     \
      int p = t == TC_F16 ? 11 : t == TC_BF16 ? 8 : 24;                        \
      double v[8] = {0.0, -0.0, INFINITY, -INFINITY, NAN, big,                 \
                     ldexp(1.0, emin), ldexp(1.0, emin - p + 1)};              \
      return v[(r >> 8) % 8];                                                  \
    }                                                                          \
    return ldexp((double)(lo + (long long)((r >> 8) % count)), -shift);        \
  }
DF_FILL_CODE
#define DF_STR2(...) #__VA_ARGS__
#define DF_STR(x) DF_STR2(x)
static const char df_fill_text[] = DF_STR(DF_FILL_CODE);

typedef struct df_rng {
  uint64_t s;
} df_rng;

static int df_below(df_rng *r, int n) { return n <= 1 ? 0 : (int)(df_mix(&r->s) % (uint64_t)n); }
static int df_chance(df_rng *r, int percent) { return df_below(r, 100) < percent; }

/* ---- the record ----------------------------------------------------------- */

/* DF_WELFORD is tc_welford's state (a reduction, read only by its parts);
 * DF_WPART its mean (sub 0) or variance (sub 1). */
typedef enum df_kind {
  DF_INPUT, DF_SET, DF_UNARY, DF_BINARY, DF_CAST, DF_PERMUTE, DF_REDUCE, DF_SCALAR, DF_WELFORD, DF_WPART
} df_kind;

/* A tensor made by an input or an op. */
typedef struct df_tensor {
  df_kind kind;
  int sub;          /* tc_unary_op / tc_binary_op (also DF_SCALAR) / tc_reduce_op */
  int a, b;         /* operands (record indices); a binary op broadcasts them */
  tc_dtype dtype;
  int perm[3];
  int red;          /* DF_REDUCE: bit d set when axis d is reduced */
  double scalar;    /* DF_SCALAR: the value as given to tc_binary_scalar */
  int launch;       /* DF_SCALAR: a scalar input (tc_scalar_input) instead, */
  int left;         /* on the left of the op when left, */
  double scalar2;   /* with value scalar at the first launch, scalar2 at the second */
  int rank;
  int64_t shape[3]; /* as consumers see it: 1 along reduced axes */
  long long lo;     /* inputs: values (lo + k) * 2^-shift, k < count */
  unsigned count;
  int shift;
  dv range;         /* every value of the tensor lies in it */
  int peak_mask;    /* when not 0: every row along these axes holds an element >= peak */
  double peak;
  int bypass;       /* shrinking: replaced by operand a */
} df_tensor;

typedef enum df_call {
  DF_SPLIT, DF_MERGE, DF_REORDER, DF_PARALLELIZE, DF_MEMTYPE, DF_INLINE_AT, DF_COMPUTE_AT,
  DF_INLINE_MOST, DF_INLINE_ALL_AT, DF_CACHE_AFTER, DF_CACHE_BEFORE, DF_PROPAGATE,
  DF_PARALLELIZE_ALL_LIKE
} df_call;

/* A scheduling call on handle t (t2: compute_at's consumer; made: the
 * handle a cache call makes).  Handles 0 .. nt-1 are the record's
 * tensors, the others caches. */
typedef struct df_step {
  df_call call;
  int t, t2, made;
  int n;               /* reorder: axes */
  int v[DF_MAX_AX];    /* arguments; reorder: new positions of axes 0 .. n-1 */
  int refused;         /* the library refused it when generated */
  int dropped;         /* shrinking: left out */
} df_step;

typedef struct df_case {
  uint64_t seed;
  int edge;            /* edge values in the floating-point inputs */
  int nt, nh;          /* record tensors; handles (tensors and caches) */
  df_tensor t[DF_MAX_T];
  int nout, out[3];    /* outputs in the order they are added */
  int nsteps;
  df_step s[DF_MAX_STEPS];
  /* Scheduled alike: transforms propagated from one tensor and its
   * parallel types copied to all (both calls accepted), inlining only by
   * calls that check it and keep the loops (not tc_compute_at, which
   * replays the consumer's loop with serial axes past the position), and
   * no random calls after that.  Such a schedule is legal by
   * construction, so a refusal of it is suspect. */
  int alike;
  /* What the case holds, for the summary: reductions, of them with a
   * reduction axis on a thread (block reductions) as generated. */
  int nred, nblock;
} df_case;

/* The tensor that stands for record tensor i (shrinking bypasses ops). */
static int df_resolve(const df_case *c, int i) {
  while (i >= 0 && c->t[i].bypass) i = c->t[i].a;
  return i;
}

/* Which record tensors the outputs need (live[i]). */
static void df_live(const df_case *c, int *live) {
  memset(live, 0, sizeof(int) * DF_MAX_T);
  for (int j = 0; j < c->nout; j++) live[df_resolve(c, c->out[j])] = 1;
  for (int i = c->nt - 1; i >= 0; i--) {
    const df_tensor *x = &c->t[i];
    if (!live[i] || x->kind == DF_INPUT || x->bypass) continue;
    live[df_resolve(c, x->a)] = 1;
    if (x->kind == DF_BINARY) live[df_resolve(c, x->b)] = 1;
  }
}

/* The outputs as added: resolved, without inputs or repeats; returns how
 * many. */
static int df_outputs(const df_case *c, int *out) {
  int n = 0;
  for (int j = 0; j < c->nout; j++) {
    int o = df_resolve(c, c->out[j]), dup = c->t[o].kind == DF_INPUT;
    for (int k = 0; k < n; k++) dup |= out[k] == o;
    if (!dup) out[n++] = o;
  }
  return n;
}

static int64_t df_elems(const df_tensor *x) {
  int64_t n = 1;
  for (int d = 0; d < x->rank; d++) n *= x->shape[d];
  return n;
}

/* ---- value ranges and which ops are allowed -------------------------------- */

static double df_limit(tc_dtype t) {
  switch (t) {
    case TC_F16: return 3e4;
    case TC_I32: return 1e6;
    case TC_I8: return 100;
    default: return 1e5;
  }
}

/* The dtype a reduction of t accumulates and returns. */
static tc_dtype df_acc_dtype(tc_dtype t) { return t == TC_F16 || t == TC_BF16 ? TC_F32 : t == TC_I8 ? TC_I32 : t; }

/* The scalar of a DF_SCALAR op as the op uses it at launch `run` (0 or
 * 1; a scalar input's value differs between the two launches of its
 * kernel): rounded to f32 for floats (tc_binary_scalar's rule). */
static double df_scalar_run(const df_tensor *x, int run) {
  double v = x->launch && run ? x->scalar2 : x->scalar;
  return dt_float(x->dtype) ? (double)(float)v : v;
}

/* The dtype of a scalar input of tensors of dtype t. */
static tc_dtype df_scalar_dtype(tc_dtype t) { return dt_float(t) ? TC_F32 : TC_I32; }

/* The tensor whose values record tensor i has: through copies and exact
 * widening casts (f16 / bf16 to f32, i8 to i32). */
static int df_root(const df_case *c, int i) {
  for (i = df_resolve(c, i); i >= 0; i = df_resolve(c, c->t[i].a)) {
    const df_tensor *x = &c->t[i];
    if (x->kind == DF_SET) continue;
    if (x->kind == DF_CAST && x->dtype == df_acc_dtype(c->t[df_resolve(c, x->a)].dtype) &&
        x->dtype != c->t[df_resolve(c, x->a)].dtype)
      continue;
    break;
  }
  return i;
}

/* x's shape (and the consistency of its dtype) from its operands; 0 when
 * the operands do not fit (shapes that do not broadcast, dtypes that
 * differ after shrinking) or the result has more than DF_MAX_ELEMS
 * elements. */
static int df_derive_shape(const df_case *c, df_tensor *x) {
  if (x->kind == DF_INPUT) return 1;
  const df_tensor *A = &c->t[df_resolve(c, x->a)];
  const df_tensor *B = x->kind == DF_BINARY ? &c->t[df_resolve(c, x->b)] : NULL;
  if (A->rank != x->rank || (B && (B->rank != x->rank || B->dtype != A->dtype))) return 0;
  if (x->kind == DF_REDUCE ? x->dtype != df_acc_dtype(A->dtype)
      : x->kind == DF_WELFORD ? x->dtype != TC_F32 || !dt_float(A->dtype)
      : x->kind == DF_WPART ? A->kind != DF_WELFORD
                            : x->kind != DF_CAST && x->dtype != A->dtype)
    return 0;
  if (x->kind != DF_WPART && A->kind == DF_WELFORD) return 0; /* the state is read by its parts only */
  int64_t n = 1;
  for (int d = 0; d < x->rank; d++) {
    int64_t e = x->kind == DF_PERMUTE ? A->shape[x->perm[d]] : A->shape[d];
    if ((x->kind == DF_REDUCE || x->kind == DF_WELFORD) && (x->red >> d & 1)) e = 1;
    if (B) {
      int64_t f = B->shape[d];
      if (e != f && e != 1 && f != 1) return 0;
      if (f > e) e = f;
    }
    x->shape[d] = e, n *= e;
  }
  return n <= DF_MAX_ELEMS;
}

/* The range of x's values from its operands' ranges; 0 when the op is
 * not allowed on them (undefined, too close to a pole or an overflow). */
static int df_derive_range(df_case *c, df_tensor *x) {
  if (x->kind == DF_INPUT) {
    x->range = (dv){ldexp((double)x->lo, -x->shift), ldexp((double)(x->lo + x->count - 1), -x->shift)};
    return 1;
  }
  const df_tensor *A = &c->t[df_resolve(c, x->a)];
  dv a = A->range, r = a;
  x->peak_mask = 0, x->peak = 0;
  switch (x->kind) {
    case DF_UNARY:
      if ((x->sub == TC_LOG && a.lo < 0.1) || (x->sub == TC_SQRT && a.lo < 0.01) ||
          (x->sub == TC_RECIPROCAL && a.lo < 0.25 && a.hi > -0.25) || (x->sub == TC_EXP && a.hi > 8))
        return 0;
      r = dv_unary((tc_unary_op)x->sub, x->dtype, a);
      if (x->sub == TC_EXP && A->peak_mask) /* exp is increasing */
        x->peak_mask = A->peak_mask, x->peak = dv_unary(TC_EXP, x->dtype, dv_point(A->peak)).lo;
      break;
    case DF_BINARY: {
      const df_tensor *B = &c->t[df_resolve(c, x->b)];
      dv b = B->range;
      double gap = dt_float(x->dtype) ? 0.25 : 1;
      if (x->sub == TC_DIV && b.lo < gap && b.hi > -gap) return 0;
      r = dv_binary((tc_binary_op)x->sub, x->dtype, a, b);
      if (x->sub == TC_SUB && B->kind == DF_REDUCE && B->sub == TC_REDUCE_MAX &&
          df_root(c, B->a) == df_root(c, x->a)) {
        /* x - max(x) over the reduced rows: at most 0, and 0 at each
         * row's maximum (the subtraction of equal values is exact) */
        r = (dv){a.lo - a.hi, 0};
        x->peak_mask = B->red, x->peak = 0;
      }
      break;
    }
    case DF_SCALAR: {
      double gap = dt_float(x->dtype) ? 0.25 : 1;
      for (int run = 0; run < 1 + x->launch; run++) { /* both launches' values */
        dv v = dv_point(df_scalar_run(x, run)), rr;
        if (x->sub == TC_DIV && (x->left ? a.lo < gap && a.hi > -gap : fabs(v.lo) < gap)) return 0;
        rr = x->left ? dv_binary((tc_binary_op)x->sub, x->dtype, v, a) : dv_binary((tc_binary_op)x->sub, x->dtype, a, v);
        if (!dv_known(rr)) return 0;
        r = run ? (dv){fmin(r.lo, rr.lo), fmax(r.hi, rr.hi)} : rr;
      }
      break;
    }
    case DF_WELFORD: case DF_WPART: {
      /* the state stands for its mean; the variance of values in [lo, hi]
       * is at most ((hi - lo) / 2)^2; both widened by dv_welford's bounds */
      const df_tensor *S = x->kind == DF_WPART ? A : x;
      const df_tensor *I = x->kind == DF_WPART ? &c->t[df_resolve(c, A->a)] : A;
      int64_t n = 1;
      for (int d = 0; d < I->rank; d++)
        if (S->red >> d & 1) n *= I->shape[d];
      double mx = fmax(fabs(I->range.lo), fabs(I->range.hi)), N = (double)n, u = 0x1p-24, em, e2;
      double half = (I->range.hi - I->range.lo) / 2; /* the variance is at most half^2 */
      dv_welford_errors(N, mx, 2 * half, &em, &e2);
      r = x->kind == DF_WPART && x->sub == 1 ? (dv){-e2 / N, half * half * (1 + 2 * u) + e2 / N}
                                             : (dv){I->range.lo - em, I->range.hi + em};
      break;
    }
    case DF_REDUCE: {
      int64_t n = 1;
      for (int d = 0; d < A->rank; d++)
        if (x->red >> d & 1) n *= A->shape[d];
      dv_red acc = dv_red_start((tc_reduce_op)x->sub);
      int64_t k = 0;
      /* a sum of non-negative terms over rows that each hold one >= peak */
      if (x->sub == TC_REDUCE_SUM && A->peak_mask && !(A->peak_mask & ~x->red) && a.lo >= 0)
        dv_red_add(&acc, (dv){A->peak, a.hi}), k++;
      for (; k < n; k++) dv_red_add(&acc, a);
      r = dv_red_end(&acc, x->dtype);
      break;
    }
    case DF_CAST:
      r = dv_cast(A->dtype, x->dtype, a);
      if (x->dtype == df_acc_dtype(A->dtype)) x->peak_mask = A->peak_mask, x->peak = A->peak;
      break;
    case DF_SET: x->peak_mask = A->peak_mask, x->peak = A->peak; break;
    default: break;
  }
  if (!dv_known(r) || fabs(r.lo) > df_limit(x->dtype) || fabs(r.hi) > df_limit(x->dtype)) return 0;
  x->range = r;
  return 1;
}

/* Re-derives every shape and range (after shrinking); 0 when some op no
 * longer fits its operands or is no longer allowed. */
static int df_ranges_ok(df_case *c) {
  for (int i = 0; i < c->nt; i++)
    if (!c->t[i].bypass && (!df_derive_shape(c, &c->t[i]) || !df_derive_range(c, &c->t[i]))) return 0;
  return 1;
}

/* ---- generating the fusion ------------------------------------------------- */

static tc_dtype df_pick_dtype(df_rng *r) {
  int p = df_below(r, 100);
  return p < 66 ? TC_F32 : p < 76 ? TC_F16 : p < 84 ? TC_BF16 : p < 93 ? TC_I32 : TC_I8;
}

static void df_input_values(df_rng *r, df_tensor *x) {
  switch (x->dtype) {
    case TC_I32: case TC_I8: {
      int m = x->dtype == TC_I8 ? 10 : 20;
      x->shift = 0;
      if (df_chance(r, 50)) x->lo = -m, x->count = (unsigned)(2 * m + 1);
      else x->lo = 1, x->count = (unsigned)m;
      return;
    }
    default: {
      /* steps exact in the format: 2^-12 (f32, 24 bits cover |k| < 2^15),
       * 2^-6 (f16), 2^-4 (bf16, 8 bits cover |k| <= 128) */
      int s = x->dtype == TC_F32 ? 12 : x->dtype == TC_F16 ? 6 : 4;
      long long one = 1ll << s;
      int top = x->dtype == TC_BF16 ? 8 : 4; /* |values| <= top */
      x->shift = s;
      switch (df_below(r, 4)) {
        case 0: x->lo = -top * one, x->count = (unsigned)(2 * top * one + 1); break; /* [-top, top] */
        case 1: x->lo = one / 4, x->count = (unsigned)(top * one - one / 4 + 1); break;  /* [0.25, top] */
        case 2: x->lo = -one, x->count = (unsigned)(2 * one + 1); break;                 /* [-1, 1] */
        default: x->lo = -top * one, x->count = (unsigned)(top * one - one / 4 + 1); break; /* [-top, -0.25] */
      }
    }
  }
}

/* Whether shapes x and y broadcast against each other (each axis equal,
 * or 1 in one of them); same: and are equal. */
static int df_broadcasts(const df_tensor *x, const df_tensor *y, int *same) {
  if (x->rank != y->rank) return 0;
  *same = 1;
  for (int d = 0; d < x->rank; d++) {
    if (x->shape[d] == y->shape[d]) continue;
    if (x->shape[d] != 1 && y->shape[d] != 1) return 0;
    *same = 0;
  }
  return 1;
}

/* The tensors (record indices, into cand) of dtype want that broadcast
 * against x: of x's shape when other is 0, of another shape when 1. */
static int df_partners(const df_case *c, const df_tensor *x, tc_dtype want, int other, int *cand) {
  int n = 0, same;
  for (int i = 0; i < c->nt; i++)
    if (c->t[i].kind != DF_WELFORD && c->t[i].dtype == want && df_broadcasts(&c->t[i], x, &same) && same != other)
      cand[n++] = i;
  return n;
}

static void df_random_perm(df_rng *r, int *p, int n) {
  for (int i = 0; i < n; i++) p[i] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = df_below(r, i + 1), tmp = p[i];
    p[i] = p[j], p[j] = tmp;
  }
}

/* The reduction that record tensor i was computed from through
 * elementwise ops (itself when it is one); -1 when none. */
static int df_reduction_of(const df_case *c, int i) {
  for (; i >= 0; i = c->t[i].a) {
    df_kind k = c->t[i].kind;
    if (k == DF_REDUCE || k == DF_WELFORD) return i;
    if (k == DF_INPUT || k == DF_BINARY) return -1;
  }
  return -1;
}

/* A binary op that combines x (record index) with a tensor of another
 * shape that it broadcasts against, most often a reduction with the
 * tensor it reduced (x - max(x), x / sum(x)); or, when only tensors of
 * another dtype are there, a cast of x to theirs.  0 when there is none. */
static int df_broadcast_op(df_rng *r, const df_case *c, int x, df_tensor *out) {
  const df_tensor *X = &c->t[x];
  int cand[DF_MAX_T], n = df_partners(c, X, X->dtype, 1, cand);
  if (n == 0) {
    for (int t = 0; t < 5 && !n; t++) { /* another dtype: a cast first */
      tc_dtype d = (tc_dtype)df_below(r, 5);
      if (d != X->dtype && df_partners(c, X, d, 1, cand)) out->kind = DF_CAST, out->dtype = d, n = 1;
    }
    return n;
  }
  /* prefer the tensor the reduction reduced (or one of the same values) */
  int red = df_reduction_of(c, x), pick = cand[df_below(r, n)];
  for (int k = 0; k < n && red < 0; k++) red = df_reduction_of(c, cand[k]);
  if (red >= 0 && df_chance(r, 70)) {
    int m = 0, root = df_root(c, c->t[red].a), best[DF_MAX_T];
    for (int k = 0; k < n; k++)
      if (df_root(c, cand[k]) == root || cand[k] == red) best[m++] = cand[k];
    if (m) pick = best[df_below(r, m)];
  }
  /* the larger shape first: x - max(x) */
  int64_t ex = df_elems(X), ep = df_elems(&c->t[pick]);
  int big = ex >= ep ? x : pick, small = big == x ? pick : x;
  out->kind = DF_BINARY;
  int p = df_below(r, 100);
  out->sub = p < 35 ? TC_SUB : p < 65 ? TC_DIV : p < 80 ? TC_MUL : p < 90 ? TC_ADD : p < 95 ? TC_MAX : TC_MIN;
  if (df_chance(r, 85)) out->a = big, out->b = small;
  else out->a = small, out->b = big;
  return 1;
}

/* A random set of axes of A for a reduction, mostly ones longer than 1. */
static int df_pick_axes(df_rng *r, const df_tensor *A) {
  int red = 0;
  for (int t = 0; t < 4; t++) {
    red = 0;
    for (int d = 0; d < A->rank; d++)
      if (df_chance(r, 45)) red |= 1 << d;
    if (!red) red = 1 << df_below(r, A->rank);
    int longer = 0;
    for (int d = 0; d < A->rank; d++) longer |= (red >> d & 1) && A->shape[d] > 1;
    if (longer) break;
  }
  return red;
}

/* Adds a Welford state of x's operand (a float tensor) and its mean, its
 * variance or both; 1 when it did. */
static int df_try_welford(df_rng *r, df_case *c, df_tensor *x) {
  int parts = 1 + df_below(r, 3); /* bit 0: the mean, bit 1: the variance */
  if (c->nt + 1 + (parts == 3 ? 2 : 1) > DF_MAX_T) return 0;
  int nt0 = c->nt;
  x->kind = DF_WELFORD, x->dtype = TC_F32, x->red = df_pick_axes(r, &c->t[x->a]);
  if (!df_derive_shape(c, x) || !df_derive_range(c, x)) return 0;
  c->t[c->nt++] = *x;
  for (int p = 0; p < 2; p++) {
    if (!(parts >> p & 1)) continue;
    df_tensor y = {0};
    y.kind = DF_WPART, y.sub = p, y.a = nt0, y.b = -1, y.dtype = TC_F32, y.rank = x->rank;
    if (!df_derive_shape(c, &y) || !df_derive_range(c, &y)) {
      c->nt = nt0;
      return 0;
    }
    c->t[c->nt++] = y;
  }
  return 1;
}

/* Tries to add one random op (or a Welford state with its parts); 1
 * when it did. */
static int df_try_op(df_rng *r, df_case *c, const int *used) {
  df_tensor x = {0};
  /* the operand: the newest tensor, an input nothing reads yet, or any */
  int a = c->nt - 1;
  int unused = -1;
  for (int i = 0; i < c->nt; i++)
    if (c->t[i].kind == DF_INPUT && !used[i]) unused = i;
  if (unused >= 0 && df_chance(r, 40)) a = unused;
  else if (df_chance(r, 35)) a = df_below(r, c->nt);
  if (c->t[a].kind == DF_WELFORD) return 0;
  const df_tensor *A = &c->t[a];
  x.a = a, x.b = -1, x.rank = A->rank, x.dtype = A->dtype;
  memcpy(x.shape, A->shape, sizeof x.shape);
  int p = df_below(r, 100), fl = dt_float(A->dtype);
  if (df_chance(r, 60) && df_broadcast_op(r, c, a, &x)) {
    /* made by df_broadcast_op */
  } else if (p < 26) {
    static const tc_unary_op fops[] = {TC_NEG, TC_ABS, TC_RELU, TC_EXP, TC_LOG,
                                       TC_SQRT, TC_TANH, TC_SIGMOID, TC_RECIPROCAL};
    static const tc_unary_op iops[] = {TC_NEG, TC_ABS, TC_RELU};
    x.kind = DF_UNARY;
    x.sub = fl ? fops[df_below(r, 9)] : iops[df_below(r, 3)];
  } else if (p < 50) {
    x.kind = DF_BINARY;
    x.sub = df_below(r, 6);
    /* prefer an input nothing reads yet as the second operand */
    int cand[DF_MAX_T], n = df_partners(c, A, A->dtype, 0, cand);
    x.b = -1;
    for (int k = 0; k < n; k++)
      if (cand[k] == unused && unused != a) x.b = unused;
    if (x.b < 0) x.b = cand[df_below(r, n)]; /* A itself is one */
    if (df_chance(r, 50)) {
      int tmp = x.a;
      x.a = x.b, x.b = tmp;
    }
  } else if (p < 59) {
    x.kind = DF_CAST;
    do x.dtype = df_pick_dtype(r);
    while (x.dtype == A->dtype);
  } else if (p < 65 || (p < 70 && A->rank < 2)) {
    x.kind = DF_SET;
  } else if (p < 70) {
    x.kind = DF_PERMUTE;
    do df_random_perm(r, x.perm, A->rank);
    while (x.perm[0] == 0 && (A->rank == 1 || (x.perm[1] == 1)));
  } else if (p < 84) {
    static const double fv[] = {2, 0.5, -1, 0.25, 3, -1.5, 0.1, 1e-5, 1.0 / 3, 8};
    static const double iv[] = {1, 2, -1, 3, -5, 7};
    static const tc_binary_op sops[] = {TC_ADD, TC_SUB, TC_MUL, TC_MUL, TC_DIV, TC_MAX, TC_MIN};
    x.kind = DF_SCALAR;
    x.sub = sops[df_below(r, 7)];
    x.scalar = fl ? fv[df_below(r, 10)] : iv[df_below(r, 6)];
    if (df_chance(r, 50)) { /* a scalar input: two launches with two values */
      x.launch = 1, x.left = df_chance(r, 30);
      x.scalar2 = fl ? fv[df_below(r, 10)] : iv[df_below(r, 6)];
    }
  } else if (fl && df_chance(r, 30)) {
    return df_try_welford(r, c, &x);
  } else {
    x.kind = DF_REDUCE;
    x.sub = df_chance(r, 45) ? TC_REDUCE_SUM : df_chance(r, 60) ? TC_REDUCE_MAX : TC_REDUCE_MIN;
    x.dtype = df_acc_dtype(A->dtype);
    x.red = df_pick_axes(r, A);
  }
  if (!df_derive_shape(c, &x) || !df_derive_range(c, &x)) return 0;
  c->t[c->nt++] = x;
  return 1;
}

/* The fusion part of a case; 0 when this attempt should be thrown away. */
static int df_try_fusion(df_rng *r, df_case *c) {
  c->nt = 0;
  int nin = 1 + (df_chance(r, 55) ? df_below(r, 3) : 0);
  int rank = 1 + df_below(r, 3);
  int64_t shape[3];
  int64_t total;
  do {
    total = 1;
    for (int d = 0; d < rank; d++) {
      shape[d] = df_chance(r, 40) ? 1 + df_below(r, 8) : 1 + df_below(r, 40);
      total *= shape[d];
    }
  } while (total > DF_MAX_ELEMS);
  tc_dtype dt = df_pick_dtype(r);
  for (int i = 0; i < nin; i++) {
    df_tensor x = {0};
    x.kind = DF_INPUT, x.a = x.b = -1, x.rank = rank;
    x.dtype = i == 0 || df_chance(r, 70) ? dt : df_pick_dtype(r);
    memcpy(x.shape, shape, sizeof shape);
    if (i > 0 && rank > 1 && df_chance(r, 25)) {
      int p[3];
      df_random_perm(r, p, rank);
      for (int d = 0; d < rank; d++) x.shape[d] = shape[p[d]];
    }
    df_input_values(r, &x);
    df_derive_range(c, &x);
    c->t[c->nt++] = x;
  }
  int nops = 1 + df_below(r, 8), tries = 0;
  int used[DF_MAX_T] = {0};
  while (c->nt < nin + nops && tries++ < 200) {
    int nt0 = c->nt;
    if (df_try_op(r, c, used))
      for (int i = nt0; i < c->nt; i++) {
        const df_tensor *x = &c->t[i];
        used[x->a] = 1;
        if (x->b >= 0) used[x->b] = 1;
      }
  }
  if (c->nt == nin) return 0;
  /* outputs: every tensor nothing reads, at most 3, and now and then one
   * that something reads as well */
  c->nout = 0;
  for (int i = nin; i < c->nt; i++)
    if (!used[i]) {
      if (c->nout == 3) return 0;
      c->out[c->nout++] = i;
    }
  if (c->nout < 3 && c->nt - nin > c->nout && df_chance(r, 20)) {
    int o = nin + df_below(r, c->nt - nin), dup = c->t[o].kind == DF_WELFORD; /* never an output */
    for (int j = 0; j < c->nout; j++) dup |= c->out[j] == o;
    if (!dup) c->out[c->nout++] = o;
  }
  int perm[3];
  df_random_perm(r, perm, c->nout);
  int out[3];
  for (int j = 0; j < c->nout; j++) out[j] = c->out[perm[j]];
  memcpy(c->out, out, sizeof out);
  c->nh = c->nt;
  return 1;
}

/* ---- building it through the API ------------------------------------------ */

typedef struct df_built {
  tc_fusion *f;
  tc_tensor *h[DF_MAX_H];
  int nin, in[DF_MAX_T];  /* record indices of the inputs, as kernel parameters (a
                           * DF_SCALAR op's index for its scalar input, after the tensors) */
  tc_tensor *wpart[DF_MAX_T][2]; /* a Welford state's mean and variance */
  int nout, out[3];       /* and of the outputs */
} df_built;

/* Makes one scheduling call; a call on a handle that does not exist (its
 * tensor or cache was shrunk away) is refused. */
static tc_status df_apply(const df_case *c, df_built *b, const df_step *s) {
  tc_tensor *t = s->t >= 0 ? b->h[s->t] : NULL;
  if (s->call != DF_INLINE_MOST && s->call != DF_INLINE_ALL_AT && !t) return TC_ERR_ARGUMENT;
  switch (s->call) {
    case DF_SPLIT: return tc_split(t, s->v[0], s->v[1], s->v[2]);
    case DF_MERGE: return tc_merge(t, s->v[0], s->v[0] + 1);
    case DF_REORDER: {
      int old[DF_MAX_AX];
      for (int i = 0; i < s->n; i++) old[i] = i;
      return tc_reorder(t, s->n, old, s->v);
    }
    case DF_PARALLELIZE: return tc_parallelize(t, s->v[0], (tc_ptype)s->v[1]);
    case DF_MEMTYPE: return tc_set_memory_type(t, (tc_memtype)s->v[0]);
    case DF_INLINE_AT: return tc_inline_at(t, s->v[0]);
    case DF_COMPUTE_AT:
      if (!b->h[s->t2]) return TC_ERR_ARGUMENT;
      return tc_compute_at(t, b->h[s->t2], s->v[0]);
    case DF_INLINE_MOST: return tc_inline_most(b->f);
    case DF_INLINE_ALL_AT: return tc_inline_all_at(b->f, s->v[0]);
    case DF_CACHE_AFTER: case DF_CACHE_BEFORE:
      b->h[s->made] = s->call == DF_CACHE_AFTER ? tc_cache_after(t) : tc_cache_before(t);
      return b->h[s->made] ? TC_OK : TC_ERR_SCHEDULE;
    case DF_PROPAGATE: return tc_propagate_transforms(t);
    case DF_PARALLELIZE_ALL_LIKE: return tc_parallelize_all_like(t);
  }
  return TC_ERR_ARGUMENT;
}

/* The axes a DF_REDUCE op reduces (into axes); returns how many. */
static int df_red_axes(const df_tensor *x, int *axes) {
  int n = 0;
  for (int d = 0; d < x->rank; d++)
    if (x->red >> d & 1) axes[n++] = d;
  return n;
}

/* Builds the fusion (without its schedule): the live inputs and ops. */
static void df_build_fusion(const df_case *c, df_built *b) {
  memset(b, 0, sizeof *b);
  b->f = tc_fusion_new();
  int live[DF_MAX_T];
  df_live(c, live);
  for (int i = 0; i < c->nt; i++) {
    const df_tensor *x = &c->t[i];
    if (x->bypass) continue;
    if (!live[i]) continue;
    tc_tensor *a = x->kind == DF_INPUT ? NULL : b->h[df_resolve(c, x->a)];
    switch (x->kind) {
      case DF_INPUT:
        b->h[i] = tc_input(b->f, x->dtype, x->rank, x->shape);
        b->in[b->nin++] = i;
        break;
      case DF_SET: b->h[i] = tc_set(b->f, a); break;
      case DF_UNARY: b->h[i] = tc_unary(b->f, (tc_unary_op)x->sub, a); break;
      case DF_BINARY: b->h[i] = tc_binary(b->f, (tc_binary_op)x->sub, a, b->h[df_resolve(c, x->b)]); break;
      case DF_CAST: b->h[i] = tc_cast(b->f, a, x->dtype); break;
      case DF_PERMUTE: b->h[i] = tc_permute(b->f, a, x->perm); break;
      case DF_REDUCE: {
        int axes[3], n = df_red_axes(x, axes);
        b->h[i] = tc_reduce(b->f, (tc_reduce_op)x->sub, a, n, axes);
        break;
      }
      case DF_SCALAR:
        if (x->launch) {
          char name[16];
          snprintf(name, sizeof name, "s%d", i);
          tc_tensor *v = tc_scalar_input(b->f, name, df_scalar_dtype(x->dtype));
          b->h[i] = x->left ? tc_binary(b->f, (tc_binary_op)x->sub, v, a) : tc_binary(b->f, (tc_binary_op)x->sub, a, v);
          b->in[b->nin++] = i;
        } else {
          b->h[i] = tc_binary_scalar(b->f, (tc_binary_op)x->sub, a, x->scalar);
        }
        break;
      case DF_WELFORD: {
        int axes[3], n = df_red_axes(x, axes);
        b->h[i] = tc_welford(b->f, a, n, axes, &b->wpart[i][0], &b->wpart[i][1]);
        break;
      }
      case DF_WPART: b->h[i] = b->wpart[df_resolve(c, x->a)][x->sub]; break;
    }
  }
  for (int i = 0; i < c->nt; i++)
    if (c->t[i].bypass) b->h[i] = NULL;
  b->nout = df_outputs(c, b->out);
  for (int j = 0; j < b->nout; j++) tc_add_output(b->f, b->h[b->out[j]]);
}

/* Builds the fusion and its schedule. */
static void df_build(const df_case *c, df_built *b) {
  df_build_fusion(c, b);
  for (int i = 0; i < c->nsteps; i++)
    if (!c->s[i].dropped) df_apply(c, b, &c->s[i]);
}

/* ---- generating the schedule ---------------------------------------------- */

typedef struct df_gen {
  df_rng *r;
  df_case *c;
  df_built b;
} df_gen;

static df_step *df_step_new(df_gen *g, df_call call, int t) {
  if (g->c->nsteps == DF_MAX_STEPS) return NULL;
  df_step *s = &g->c->s[g->c->nsteps];
  memset(s, 0, sizeof *s);
  s->call = call, s->t = t, s->t2 = -1, s->made = -1;
  return s;
}

/* Makes the call on the live fusion and keeps it in the record. */
static void df_step_do(df_gen *g, df_step *s) {
  if (!s) return;
  if ((s->call == DF_CACHE_AFTER || s->call == DF_CACHE_BEFORE)) {
    if (g->c->nh == DF_MAX_H) return;
    s->made = g->c->nh++;
  }
  s->refused = df_apply(g->c, &g->b, s) != TC_OK;
  g->c->nsteps++;
}

static void df_call1(df_gen *g, df_call call, int t, int v0) {
  df_step *s = df_step_new(g, call, t);
  if (s) s->v[0] = v0;
  df_step_do(g, s);
}

static void df_call2(df_gen *g, df_call call, int t, int v0, int v1) {
  df_step *s = df_step_new(g, call, t);
  if (s) s->v[0] = v0, s->v[1] = v1;
  df_step_do(g, s);
}

static int df_nloop(df_gen *g, int h) { return g->b.h[h] ? tc_tensor_nloop(g->b.h[h]) : 0; }
static int64_t df_ext(df_gen *g, int h, int a) { return tc_tensor_loop_extent(g->b.h[h], a); }

static void df_split(df_gen *g, int h) {
  int n = df_nloop(g, h);
  if (n == 0) return;
  df_step *s = df_step_new(g, DF_SPLIT, h);
  if (!s) return;
  int a = df_below(g->r, n);
  int64_t e = df_ext(g, h, a), f;
  int p = df_below(g->r, 100);
  if (p < 40) {
    f = 2 + df_below(g->r, 7);
  } else if (p < 70) { /* a divisor when there is one */
    int64_t d[40];
    int nd = 0;
    for (int64_t k = 2; k < e && nd < 40; k++)
      if (e % k == 0) d[nd++] = k;
    f = nd ? d[df_below(g->r, nd)] : 2 + df_below(g->r, 7);
  } else if (p < 90) {
    f = 1 + df_below(g->r, e < 16 ? (int)e : 16);
  } else {
    f = e + df_below(g->r, 2);
  }
  s->v[0] = a, s->v[1] = (int)f, s->v[2] = df_chance(g->r, 85);
  df_step_do(g, s);
}

static void df_merge(df_gen *g, int h) {
  int n = df_nloop(g, h);
  if (n >= 2) df_call1(g, DF_MERGE, h, df_below(g->r, n - 1));
}

static void df_reorder(df_gen *g, int h) {
  int n = df_nloop(g, h);
  if (n < 2 || n > DF_MAX_AX) return;
  df_step *s = df_step_new(g, DF_REORDER, h);
  if (!s) return;
  s->n = n;
  df_random_perm(g->r, s->v, n);
  df_step_do(g, s);
}

/* Which loop axes of handle h are reduction axes (bit i: loop axis i),
 * read from its description ("T3[iBIDx{2}, (CA), rS{4}]"). */
static unsigned df_raxes(df_gen *g, int h) {
  if (!g->b.h[h]) return 0;
  char d[1024];
  tc_tensor_describe(g->b.h[h], d, sizeof d);
  unsigned m = 0;
  int i = 0;
  for (const char *p = strchr(d, '['); p && *p && *p != ']'; p++) {
    p += strspn(p, "[, ");
    if (*p == '(') { /* the compute-at mark */
      p = strchr(p, ')');
      if (!p) break;
      continue;
    }
    if (*p == 'r' && i < 32) m |= 1u << i;
    i++;
    p = strchr(p, '}');
    if (!p) break;
  }
  return m;
}

/* The handles that hold a reduction (its tensor, or the cache that
 * tc_cache_before moved it to); returns how many. */
static int df_reductions(df_gen *g, int *hs) {
  int n = 0;
  for (int h = 0; h < g->c->nh; h++)
    if (df_raxes(g, h)) hs[n++] = h;
  return n;
}

static int df_is_output(const df_case *c, int h) {
  for (int j = 0; j < c->nout; j++)
    if (c->out[j] == h) return 1;
  return 0;
}

/* The memory type of handle h as the (accepted) calls so far left it:
 * outputs in global memory, other tensors and caches in local memory
 * until a call says otherwise. */
static int df_memtype(const df_case *c, int h) {
  int m = h < c->nt && (c->t[h].kind == DF_INPUT || df_is_output(c, h)) ? TC_MEM_GLOBAL : TC_MEM_LOCAL;
  for (int i = 0; i < c->nsteps; i++)
    if (c->s[i].call == DF_MEMTYPE && c->s[i].t == h && !c->s[i].refused && !c->s[i].dropped) m = c->s[i].v[0];
  return m;
}

/* Whether reduction h's schedule is one that lowers (docs/reductions.md):
 * no reduction axis on a block or vectorized, at most one on a thread
 * and then the result in local memory, no serial iteration loop inside a
 * reduction loop (and so no vectorized axis before a reduction loop),
 * and in global memory every block axis of the kernel bound. */
static int df_reduction_legal(df_gen *g, int h) {
  unsigned m = df_raxes(g, h);
  int threads = 0, inner = 0;
  for (int i = 0; i < df_nloop(g, h); i++) {
    tc_ptype p = tc_tensor_loop_ptype(g->b.h[h], i);
    int r = m >> i & 1, thread = p >= TC_TIDX && p <= TC_TIDZ, block = p >= TC_BIDX && p <= TC_BIDZ;
    if ((r && (block || p == TC_VECTORIZE)) || (p == TC_VECTORIZE && i != df_nloop(g, h) - 1)) return 0;
    threads += r && thread;
    if (thread || block) continue;
    if (r) inner = 1;
    else if (inner) return 0;
  }
  if (threads > 1 || (threads == 1 && df_memtype(g->c, h) != TC_MEM_LOCAL)) return 0;
  /* in global memory, accumulated in place: every block the kernel runs
   * along an axis it does not bind would add into it */
  for (int o = 0; o < g->c->nh && df_memtype(g->c, h) == TC_MEM_GLOBAL; o++)
    for (int i = 0; g->b.h[o] && i < df_nloop(g, o); i++) {
      tc_ptype p = tc_tensor_loop_ptype(g->b.h[o], i);
      int bound = 0;
      for (int j = 0; j < df_nloop(g, h); j++) bound |= tc_tensor_loop_ptype(g->b.h[h], j) == p;
      if (p >= TC_BIDX && p <= TC_BIDZ && df_ext(g, o, i) > 1 && !bound) return 0;
    }
  return 1;
}

/* Binds some of h's axes to blocks, threads, unrolled or vector loops,
 * keeping the block within DF_MAX_THREADS threads.  The axes in mask
 * (those a reduction reduces) mostly get a thread axis, one at most (a
 * block reduction), or stay serial or unrolled: a block or a vector there
 * is refused; those in serial (those a reduction outside local memory
 * reduces, where a block reduction is refused) mostly stay serial or
 * unrolled. */
static void df_parallelize(df_gen *g, int h, int percent, unsigned mask, unsigned serial) {
  int n = df_nloop(g, h), order[DF_MAX_AX];
  if (n > DF_MAX_AX) return;
  df_random_perm(g->r, order, n);
  int used[TC_UNROLL + 1] = {0}, red_thread = 0;
  int64_t threads = 1, unrolled = 1;
  for (int k = 0; k < n; k++) {
    int a = order[k];
    if (!df_chance(g->r, (mask >> a & 1) ? 80 : percent)) continue;
    int64_t e = df_ext(g, h, a);
    static const tc_ptype choice[] = {TC_BIDX, TC_BIDY, TC_TIDX, TC_TIDY, TC_TIDZ,
                                      TC_TIDX, TC_UNROLL, TC_VECTORIZE};
    static const tc_ptype rchoice[] = {TC_TIDX, TC_TIDY, TC_TIDZ, TC_TIDX, TC_UNROLL};
    tc_ptype p = choice[df_below(g->r, 8)];
    if ((serial >> a & 1) && df_chance(g->r, 90)) {
      if (!df_chance(g->r, 30)) continue;
      p = TC_UNROLL;
    } else if ((mask >> a & 1) && df_chance(g->r, 90)) {
      p = rchoice[df_below(g->r, 5)];
      if (p != TC_UNROLL && red_thread++ && df_chance(g->r, 90)) continue;
    }
    if (p == TC_VECTORIZE && a != n - 1) p = TC_UNROLL;
    if (p != TC_UNROLL && used[p]) continue;
    if (p >= TC_TIDX && p <= TC_TIDZ) {
      if (threads * e > DF_MAX_THREADS) continue;
      threads *= e;
    }
    if (p == TC_UNROLL) {
      if (unrolled * e > DF_MAX_UNROLL) continue;
      unrolled *= e;
    }
    used[p] = 1;
    df_call2(g, DF_PARALLELIZE, h, a, (int)p);
  }
}

/* The ops that read record tensor i (record indices). */
static int df_consumers(const df_case *c, int i, int *cons) {
  int n = 0;
  for (int j = 0; j < c->nt; j++)
    if (c->t[j].kind != DF_INPUT && (c->t[j].a == i || c->t[j].b == i)) cons[n++] = j;
  return n;
}

/* A random scheduling call on a random tensor or cache. */
static void df_random_call(df_gen *g) {
  df_case *c = g->c;
  int h, tries = 0;
  do h = df_below(g->r, c->nh);
  while ((h < c->nt && c->t[h].kind == DF_INPUT) && tries++ < 20);
  if (h < c->nt && c->t[h].kind == DF_INPUT) return;
  int n = df_nloop(g, h);
  switch (df_below(g->r, 6)) {
    case 0: df_split(g, h); break;
    case 1: df_reorder(g, h); break;
    case 2: {
      static const tc_ptype p[] = {TC_SERIAL, TC_BIDX, TC_TIDX, TC_TIDY, TC_UNROLL};
      if (!n) break;
      int a = df_below(g->r, n);
      tc_ptype pt = p[df_below(g->r, 5)];
      if (!(pt == TC_UNROLL && df_ext(g, h, a) > DF_MAX_UNROLL)) df_call2(g, DF_PARALLELIZE, h, a, (int)pt);
      break;
    }
    case 3:
      if (!df_is_output(c, h) && !(h < c->nt && c->t[h].kind == DF_INPUT))
        df_call1(g, DF_MEMTYPE, h, df_chance(g->r, 50) ? TC_MEM_SHARED : TC_MEM_LOCAL);
      break;
    case 4: df_call1(g, DF_INLINE_AT, h, df_below(g->r, n + 1)); break;
    default: df_merge(g, h); break;
  }
}

/* Reorders reduction h's loop so that its reduction axes come after
 * all its iteration axes (in their order), unless they do already. */
static void df_reduction_innermost(df_gen *g, int h) {
  int n = df_nloop(g, h);
  unsigned m = df_raxes(g, h);
  int sorted = 1, seen = 0;
  for (int i = 0; i < n; i++) {
    if (m >> i & 1) seen = 1;
    else sorted &= !seen;
  }
  if (n < 2 || n > DF_MAX_AX || sorted) return;
  df_step *s = df_step_new(g, DF_REORDER, h);
  if (!s) return;
  s->n = n;
  int k = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < n; i++)
      if ((int)(m >> i & 1) == pass) s->v[i] = k++;
  df_step_do(g, s);
}

static void df_gen_schedule(df_gen *g) {
  df_case *c = g->c;
  df_rng *r = g->r;
  int live[DF_MAX_T];
  df_live(c, live);
  /* caches of inputs and outputs; a reduction that is an output often
   * into a local cache (a block reduction needs one) */
  for (int i = 0; i < c->nt; i++) {
    if (!live[i]) continue;
    int in = c->t[i].kind == DF_INPUT, red = c->t[i].kind == DF_REDUCE;
    if (c->t[i].kind == DF_WELFORD) continue; /* never an output, never cached */
    if (!(in ? df_chance(r, 25) : df_is_output(c, i) && df_chance(r, red ? 65 : 12))) continue;
    df_step *s = df_step_new(g, in ? DF_CACHE_AFTER : DF_CACHE_BEFORE, i);
    df_step_do(g, s);
    if (!s || s->made < 0 || s->refused) continue;
    df_call1(g, DF_MEMTYPE, s->made, df_chance(r, red ? 20 : 60) ? TC_MEM_SHARED : TC_MEM_LOCAL);
  }
  /* intermediates in shared memory */
  for (int i = 0; i < c->nt; i++)
    if (live[i] && c->t[i].kind != DF_INPUT && c->t[i].kind != DF_WELFORD && !df_is_output(c, i) &&
        df_chance(r, c->t[i].kind == DF_REDUCE ? 10 : 25))
      df_call1(g, DF_MEMTYPE, i, TC_MEM_SHARED);
  /* a reference tensor: an output mostly, a reduction often */
  int ref = c->out[df_below(r, c->nout)];
  int reds[DF_MAX_H], nred = df_reductions(g, reds);
  if (nred && df_chance(r, 35)) {
    ref = reds[df_below(r, nred)];
  } else if (df_chance(r, 15)) {
    int h = df_below(r, c->nh);
    if (g->b.h[h] && !(h < c->nt && c->t[h].kind == DF_INPUT)) ref = h;
  }
  int nx = df_below(r, 5);
  for (int k = 0; k < nx; k++) {
    int p = df_below(r, 100);
    if (p < 55) df_split(g, ref);
    else if (p < 80) df_merge(g, ref);
    else df_reorder(g, ref);
  }
  int alike = 0;
  if (df_chance(r, 92)) {
    df_call1(g, DF_PROPAGATE, ref, 0);
    alike = !c->s[c->nsteps - 1].refused;
  }
  /* the reference's axes that are a reduction's (the reductions now
   * have the reference's loop, when the transforms propagated) */
  unsigned rmask = 0, rserial = 0;
  for (int k = 0; k < nred; k++)
    if (df_nloop(g, reds[k]) == df_nloop(g, ref))
      *(df_memtype(c, reds[k]) == TC_MEM_LOCAL ? &rmask : &rserial) |= df_raxes(g, reds[k]);
  df_parallelize(g, ref, 55, rmask, rserial);
  if (df_chance(r, 90)) {
    df_call1(g, DF_PARALLELIZE_ALL_LIKE, ref, 0);
    alike &= !c->s[c->nsteps - 1].refused;
  } else {
    alike = 0;
  }
  /* the reduction loops innermost */
  for (int k = 0; k < nred; k++)
    if (df_chance(r, 85)) df_reduction_innermost(g, reds[k]);
  /* inlining */
  int p = df_below(r, 100);
  if (p < 45) {
    df_call1(g, DF_INLINE_MOST, -1, 0);
  } else if (p < 60) {
    df_call1(g, DF_INLINE_ALL_AT, -1, df_below(r, 1 + df_nloop(g, ref)));
    /* one position for all: it may join a loop of a reduction's operand
     * with one of its readers (tc_inline_most avoids that) */
    if (nred) alike = 0;
  } else if (p < 80) {
    for (int i = 0; i < c->nt; i++) {
      if (!live[i] || c->t[i].kind == DF_INPUT || !g->b.h[i]) continue;
      int cons[DF_MAX_T], nc = df_consumers(c, i, cons);
      if (nc == 0 || !df_chance(r, 60)) continue;
      if (df_chance(r, 50)) {
        df_call1(g, DF_INLINE_AT, i, df_below(r, 1 + df_nloop(g, i)));
        /* a random depth: it may join a loop of a reduction's operand
         * with one of its readers (tc_inline_most avoids that) */
        if (nred && !c->s[c->nsteps - 1].refused) alike = 0;
      } else {
        int cj = cons[df_below(r, nc)];
        df_step *s = df_step_new(g, DF_COMPUTE_AT, i);
        if (!s) continue;
        s->t2 = cj, s->v[0] = df_below(r, 1 + df_nloop(g, cj));
        df_step_do(g, s);
        /* the producer's loop is the consumer's again, and its axes past
         * the position are serial: no longer parallelized alike */
        if (!s->refused) alike = 0;
      }
    }
  }
  c->alike = alike;
  /* and a few calls anywhere */
  if (df_chance(r, 25)) {
    c->alike = 0;
    int n = 1 + df_below(r, 2);
    for (int k = 0; k < n; k++) df_random_call(g);
  }
  c->nred = nred;
  for (int k = 0; k < nred; k++) c->alike &= df_reduction_legal(g, reds[k]);
  for (int k = 0; k < nred; k++) {
    unsigned m = df_raxes(g, reds[k]);
    int block = 0;
    for (int i = 0; i < df_nloop(g, reds[k]); i++) {
      tc_ptype pt = tc_tensor_loop_ptype(g->b.h[reds[k]], i);
      block |= (m >> i & 1) && pt >= TC_TIDX && pt <= TC_TIDZ;
    }
    c->nblock += block;
  }
}

/* Case `index` of a campaign with seed `seed`. */
static void df_generate(df_case *c, uint64_t seed, uint64_t index, int edge) {
  memset(c, 0, sizeof *c);
  uint64_t s = seed * 0x100000001b3ull ^ (index + 1) * 0x9e3779b97f4a7c15ull;
  df_rng r = {df_mix(&s)};
  for (;;) {
    memset(c, 0, sizeof *c);
    c->seed = r.s, c->edge = edge;
    if (df_try_fusion(&r, c)) break;
  }
  df_gen g = {&r, c, {0}};
  df_build_fusion(c, &g.b);
  df_gen_schedule(&g);
  tc_fusion_free(g.b.f);
}

/* The seed of input i's values. */
static uint64_t df_input_seed(const df_case *c, int i) { return c->seed ^ (uint64_t)(i + 1) * 0x2545f4914f6cdd1dull; }

/* Fills input buffer i with its values (encoded here, not by the library). */
static void df_fill(const df_case *c, int i, void *buf) {
  const df_tensor *x = &c->t[i];
  uint64_t s = df_input_seed(c, i);
  int64_t n = df_elems(x);
  for (int64_t e = 0; e < n; e++) {
    double v = df_value(&s, x->lo, x->count, x->shift, c->edge, x->dtype);
    switch (x->dtype) {
      case TC_F32: ((float *)buf)[e] = (float)v; break;
      case TC_F16: case TC_BF16:
        ((uint16_t *)buf)[e] = isnan(v) ? (x->dtype == TC_F16 ? 0x7e00u : 0x7fc0u)
                               : isinf(v) ? (uint16_t)((v < 0 ? 0x8000u : 0) | (x->dtype == TC_F16 ? 0x7c00u : 0x7f80u))
                                          : dt_bits16(v, x->dtype);
        break;
      case TC_I32: ((int32_t *)buf)[e] = (int32_t)v; break;
      case TC_I8: ((int8_t *)buf)[e] = (int8_t)v; break;
    }
  }
}

/* ---- printing a case as a C program ----------------------------------------- */

static const char *df_dtype_c(tc_dtype t) {
  static const char *n[] = {"TC_F32", "TC_F16", "TC_BF16", "TC_I32", "TC_I8"};
  return n[t];
}

static const char *df_ptype_c(int p) {
  static const char *n[] = {"TC_SERIAL", "TC_BIDX", "TC_BIDY", "TC_BIDZ", "TC_TIDX", "TC_TIDY",
                            "TC_TIDZ", "TC_DIDX", "TC_DIDY", "TC_DIDZ", "TC_VECTORIZE", "TC_UNROLL"};
  return p >= 0 && p <= TC_UNROLL ? n[p] : "?";
}

static const char *df_unary_c(int op) {
  static const char *n[] = {"TC_NEG", "TC_ABS", "TC_RELU", "TC_EXP", "TC_LOG",
                            "TC_SQRT", "TC_TANH", "TC_SIGMOID", "TC_RECIPROCAL"};
  return n[op];
}

static const char *df_binary_c(int op) {
  static const char *n[] = {"TC_ADD", "TC_SUB", "TC_MUL", "TC_DIV", "TC_MAX", "TC_MIN"};
  return n[op];
}

static const char *df_reduce_c(int op) {
  static const char *n[] = {"TC_REDUCE_SUM", "TC_REDUCE_MAX", "TC_REDUCE_MIN"};
  return n[op];
}

static const char *df_mem_c(int m) {
  static const char *n[] = {"TC_MEM_GLOBAL", "TC_MEM_SHARED", "TC_MEM_LOCAL", "TC_MEM_TENSOR"};
  return n[m];
}

/* Writes text with a line break after each ; { } outside parentheses,
 * indented (the one-line fill code of DF_FILL_TEXT). */
static void df_print_code(FILE *o, const char *text) {
  int depth = 0, paren = 0, bol = 1;
  for (const char *p = text; *p; p++) {
    if (bol && *p == ' ') continue;
    if (*p == '}') depth--;
    if (bol) fprintf(o, "%*s", 2 * depth, ""), bol = 0;
    fputc(*p, o);
    if (*p == '(') paren++;
    if (*p == ')') paren--;
    if (*p == '{') depth++;
    if ((*p == ';' && !paren) || *p == '{' || *p == '}') fputc('\n', o), bol = 1;
  }
}

static void df_print_step(FILE *o, const df_case *c, const df_step *s) {
  fprintf(o, "  ");
  switch (s->call) {
    case DF_SPLIT: fprintf(o, "tc_split(t[%d], %d, %d, %d);", s->t, s->v[0], s->v[1], s->v[2]); break;
    case DF_MERGE: fprintf(o, "tc_merge(t[%d], %d, %d);", s->t, s->v[0], s->v[0] + 1); break;
    case DF_REORDER:
      fprintf(o, "{ int from[%d] = {", s->n);
      for (int i = 0; i < s->n; i++) fprintf(o, "%s%d", i ? ", " : "", i);
      fprintf(o, "}, to[%d] = {", s->n);
      for (int i = 0; i < s->n; i++) fprintf(o, "%s%d", i ? ", " : "", s->v[i]);
      fprintf(o, "}; tc_reorder(t[%d], %d, from, to); }", s->t, s->n);
      break;
    case DF_PARALLELIZE: fprintf(o, "tc_parallelize(t[%d], %d, %s);", s->t, s->v[0], df_ptype_c(s->v[1])); break;
    case DF_MEMTYPE: fprintf(o, "tc_set_memory_type(t[%d], %s);", s->t, df_mem_c(s->v[0])); break;
    case DF_INLINE_AT: fprintf(o, "tc_inline_at(t[%d], %d);", s->t, s->v[0]); break;
    case DF_COMPUTE_AT: fprintf(o, "tc_compute_at(t[%d], t[%d], %d);", s->t, s->t2, s->v[0]); break;
    case DF_INLINE_MOST: fprintf(o, "tc_inline_most(f);"); break;
    case DF_INLINE_ALL_AT: fprintf(o, "tc_inline_all_at(f, %d);", s->v[0]); break;
    case DF_CACHE_AFTER: fprintf(o, "t[%d] = tc_cache_after(t[%d]);", s->made, s->t); break;
    case DF_CACHE_BEFORE: fprintf(o, "t[%d] = tc_cache_before(t[%d]);", s->made, s->t); break;
    case DF_PROPAGATE: fprintf(o, "tc_propagate_transforms(t[%d]);", s->t); break;
    case DF_PARALLELIZE_ALL_LIKE: fprintf(o, "tc_parallelize_all_like(t[%d]);", s->t); break;
  }
  (void)c;
}

/* Prints the case as a complete program: it builds the fusion and the
 * schedule (calls the library refused marked), compiles it for OpenCL,
 * runs it on the same inputs and compares the outputs with
 * tc_reference_run.  what: a comment saying what the case does. */
static void df_print_case(FILE *o, const df_case *c, const char *what) {
  df_built b;
  df_build_fusion(c, &b); /* which handles exist, and the parameters */
  fprintf(o, "/* %s */\n", what);
  fprintf(o, "#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
             "#include <string.h>\n#include <tilec/tilec.h>\n\n");
  df_print_code(o, df_fill_text);
  fprintf(o, "\n/* input values exactly as the test made them */\n"
             "static void *fill(const tc_tensor *x, uint64_t seed, long long lo, unsigned count, int shift, int edge) {\n"
             "  size_t n = tc_tensor_bytes(x) / tc_dtype_size(tc_tensor_dtype(x));\n"
             "  void *buf = malloc(tc_tensor_bytes(x));\n"
             "  for (size_t i = 0; i < n; i++) {\n"
             "    double v = df_value(&seed, lo, count, shift, edge, tc_tensor_dtype(x));\n"
             "    switch (tc_tensor_dtype(x)) {\n"
             "      case TC_F32: ((float *)buf)[i] = (float)v; break;\n"
             "      case TC_F16: ((uint16_t *)buf)[i] = tc_f32_to_f16((float)v); break;\n"
             "      case TC_BF16: ((uint16_t *)buf)[i] = tc_f32_to_bf16((float)v); break;\n"
             "      case TC_I32: ((int32_t *)buf)[i] = (int32_t)v; break;\n"
             "      case TC_I8: ((int8_t *)buf)[i] = (int8_t)v; break;\n"
             "    }\n  }\n  return buf;\n}\n\n"
             "static double get(tc_dtype t, const void *buf, size_t i) {\n"
             "  switch (t) {\n"
             "    case TC_F32: return ((const float *)buf)[i];\n"
             "    case TC_F16: return tc_f16_to_f32(((const uint16_t *)buf)[i]);\n"
             "    case TC_BF16: return tc_bf16_to_f32(((const uint16_t *)buf)[i]);\n"
             "    case TC_I32: return ((const int32_t *)buf)[i];\n"
             "    default: return ((const int8_t *)buf)[i];\n"
             "  }\n}\n\n");
  fprintf(o, "int main(int argc, char **argv) {\n  tc_fusion *f = tc_fusion_new();\n  tc_tensor *t[%d] = {0};\n"
             "  tc_tensor *wmean[%d] = {0}, *wvar[%d] = {0}; /* Welford states' parts */\n",
          c->nh, c->nh, c->nh);
  for (int i = 0; i < c->nt; i++) {
    const df_tensor *x = &c->t[i];
    if (!b.h[i]) continue;
    int a = df_resolve(c, x->a);
    switch (x->kind) {
      case DF_INPUT:
        fprintf(o, "  int64_t shape%d[%d] = {", i, x->rank);
        for (int d = 0; d < x->rank; d++) fprintf(o, "%s%lld", d ? ", " : "", (long long)x->shape[d]);
        fprintf(o, "};\n  t[%d] = tc_input(f, %s, %d, shape%d);\n", i, df_dtype_c(x->dtype), x->rank, i);
        break;
      case DF_SET: fprintf(o, "  t[%d] = tc_set(f, t[%d]);\n", i, a); break;
      case DF_UNARY: fprintf(o, "  t[%d] = tc_unary(f, %s, t[%d]);\n", i, df_unary_c(x->sub), a); break;
      case DF_BINARY:
        fprintf(o, "  t[%d] = tc_binary(f, %s, t[%d], t[%d]);\n", i, df_binary_c(x->sub), a,
                df_resolve(c, x->b));
        break;
      case DF_CAST: fprintf(o, "  t[%d] = tc_cast(f, t[%d], %s);\n", i, a, df_dtype_c(x->dtype)); break;
      case DF_PERMUTE:
        fprintf(o, "  { int perm[%d] = {", x->rank);
        for (int d = 0; d < x->rank; d++) fprintf(o, "%s%d", d ? ", " : "", x->perm[d]);
        fprintf(o, "}; t[%d] = tc_permute(f, t[%d], perm); }\n", i, a);
        break;
      case DF_REDUCE: {
        int axes[3], n = df_red_axes(x, axes);
        fprintf(o, "  { int axes[%d] = {", n);
        for (int k = 0; k < n; k++) fprintf(o, "%s%d", k ? ", " : "", axes[k]);
        fprintf(o, "}; t[%d] = tc_reduce(f, %s, t[%d], %d, axes); }\n", i, df_reduce_c(x->sub), a, n);
        break;
      }
      case DF_SCALAR:
        if (x->launch) {
          char ta[16];
          snprintf(ta, sizeof ta, "t[%d]", a);
          fprintf(o, "  { tc_tensor *s = tc_scalar_input(f, \"s%d\", %s); t[%d] = tc_binary(f, %s, %s, %s); }\n", i,
                  df_dtype_c(df_scalar_dtype(x->dtype)), i, df_binary_c(x->sub), x->left ? "s" : ta, x->left ? ta : "s");
        } else
          fprintf(o, "  t[%d] = tc_binary_scalar(f, %s, t[%d], %.17g);\n", i, df_binary_c(x->sub), a, x->scalar);
        break;
      case DF_WELFORD: {
        int axes[3], n = df_red_axes(x, axes);
        fprintf(o, "  { int axes[%d] = {", n);
        for (int k = 0; k < n; k++) fprintf(o, "%s%d", k ? ", " : "", axes[k]);
        fprintf(o, "}; t[%d] = tc_welford(f, t[%d], %d, axes, &wmean[%d], &wvar[%d]); }\n", i, a, n, i, i);
        break;
      }
      case DF_WPART: fprintf(o, "  t[%d] = %s[%d];\n", i, x->sub ? "wvar" : "wmean", a); break;
    }
  }
  for (int j = 0; j < b.nout; j++) fprintf(o, "  tc_add_output(f, t[%d]);\n", b.out[j]);
  /* replay the schedule to mark the calls refused now */
  for (int i = 0; i < c->nsteps; i++) {
    const df_step *s = &c->s[i];
    if (s->dropped) continue;
    tc_status st = df_apply(c, &b, s);
    df_print_step(o, c, s);
    if (st != TC_OK) fprintf(o, " /* refused: %s */", tc_fusion_error(b.f));
    fprintf(o, "\n");
  }
  tc_fusion_free(b.f);
  fprintf(o, "\n  tc_status st;\n  tc_compile_options opt = {TC_TARGET_OPENCL, NULL, NULL};\n"
             "  tc_kernel *k = tc_compile(f, &opt, &st);\n"
             "  if (!k) {\n    printf(\"refused: %%s: %%s\\n\", tc_status_name(st), tc_fusion_error(f));\n"
             "    return 0;\n  }\n"
             "  if (argc > 1) printf(\"%%s\\n\", tc_kernel_source(k));\n"
             "  void *args[%d], *ref[%d];\n  const tc_tensor *param[%d];\n",
          b.nin + b.nout, b.nin + b.nout, b.nin + b.nout);
  for (int j = 0; j < b.nin; j++) {
    int i = b.in[j];
    const df_tensor *x = &c->t[i];
    if (x->kind == DF_SCALAR) { /* a scalar input: its first launch's value */
      if (dt_float(x->dtype))
        fprintf(o, "  static float s%d = %.9gf;\n", i, df_scalar_run(x, 0));
      else
        fprintf(o, "  static int32_t s%d = %d;\n", i, (int)df_scalar_run(x, 0));
      fprintf(o, "  param[%d] = NULL;\n  args[%d] = ref[%d] = &s%d;\n", j, j, j, i);
      continue;
    }
    fprintf(o, "  param[%d] = t[%d];\n  args[%d] = ref[%d] = fill(t[%d], 0x%llxull, %lld, %u, %d, %d);\n", j,
            i, j, j, i, (unsigned long long)df_input_seed(c, i), x->lo, x->count, x->shift, c->edge);
  }
  for (int j = 0; j < b.nout; j++) {
    int p = b.nin + j;
    fprintf(o, "  param[%d] = t[%d];\n  args[%d] = calloc(1, tc_tensor_bytes(t[%d]));\n"
               "  ref[%d] = calloc(1, tc_tensor_bytes(t[%d]));\n", p, b.out[j], p, b.out[j], p, b.out[j]);
  }
  int live[DF_MAX_T], sums = 0;
  df_live(c, live);
  for (int i = 0; i < c->nt; i++) sums |= live[i] && !c->t[i].bypass && c->t[i].kind == DF_REDUCE && c->t[i].sub == TC_REDUCE_SUM;
  if (sums)
    fprintf(o, "  /* a float sum differs from the reference's (added in double, rounded once) by the\n"
               "   * rounding of its order, up to about n 2^-24 sum |x_i| for n terms, which can be more\n"
               "   * than the tolerance below where terms cancel: the test bounds it exactly */\n");
  fprintf(o, "  st = tc_kernel_run(k, args, NULL, NULL);\n"
             "  if (st != TC_OK) {\n    printf(\"run: %%s: %%s\\n\", tc_status_name(st), tc_kernel_error(k));\n"
             "    return 1;\n  }\n"
             "  tc_reference_run(f, ref);\n"
             "  int bad = 0;\n"
             "  for (int p = %d; p < %d; p++) {\n"
             "    tc_dtype dt = tc_tensor_dtype(param[p]);\n"
             "    size_t n = tc_tensor_bytes(param[p]) / tc_dtype_size(dt);\n"
             "    double tol = dt == TC_F32 ? 1e-5 : dt == TC_F16 || dt == TC_BF16 ? 1e-2 : 0;\n"
             "    for (size_t i = 0; i < n; i++) {\n"
             "      double x = get(dt, args[p], i), y = get(dt, ref[p], i);\n"
             "      if (x == y || (isnan(x) && isnan(y)) || fabs(x - y) <= tol * (1 + fabs(y))) continue;\n"
             "      if (bad++ < 8) printf(\"%%s element %%zu: kernel %%.9g, reference %%.9g\\n\", tc_tensor_name(param[p]), i, x, y);\n"
             "    }\n  }\n"
             "  printf(\"%%d elements differ from the reference\\n\", bad);\n"
             "  return bad != 0;\n}\n",
          b.nin, b.nin + b.nout);
}

#endif
