/* diff_values.h - the value model of the differential tests (test_diff.c):
 * an evaluation of fusion ops written here, independent of the library's
 * reference evaluator.  A value is an interval [lo, hi] that holds every
 * result an implementation allowed by the op's accuracy can produce: each
 * op is evaluated exactly (in double) on its operands' intervals, widened
 * by the op's error in f32 units in the last place, and rounded outward to
 * the grid of the tensor's dtype; a sum over reduced axes is widened by
 * the rounding of n f32 additions in any order (dv_red_end).  A kernel (or
 * reference) element is right when it lies in its interval.  An interval
 * with a NaN bound is "unknown" (an input that is NaN or infinite, or an
 * op outside its domain): kernel and reference must then agree.  The
 * interval [-inf, inf] is "any": a sum over non-finite or overflowing
 * terms, whose value depends on the order of the additions (inf + -big +
 * -big is inf or NaN), and everything computed from it; nothing is
 * checked there.  The generator makes neither unless asked for edge
 * values. */
#ifndef DIFF_VALUES_H
#define DIFF_VALUES_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tilec/tilec.h"

typedef struct dv {
  double lo, hi;
} dv;

static const dv dv_unknown = {NAN, NAN};
static const dv dv_any = {-INFINITY, INFINITY};

static int dv_known(dv v) { return !isnan(v.lo) && !isnan(v.hi) && isfinite(v.lo) && isfinite(v.hi); }
static int dv_is_any(dv v) { return v.lo == -INFINITY && v.hi == INFINITY; }
static dv dv_point(double x) { return (dv){x, x}; }

static int dt_float(tc_dtype t) { return t == TC_F32 || t == TC_F16 || t == TC_BF16; }

/* Significand bits (with the implicit one) and the smallest normal
 * exponent of each floating-point format. */
static void dt_format(tc_dtype t, int *p, int *emin) {
  switch (t) {
    case TC_F16: *p = 11, *emin = -14; return;
    case TC_BF16: *p = 8, *emin = -126; return;
    default: *p = 24, *emin = -126; return;
  }
}

/* The spacing of t's values at magnitude ax > 0. */
static double dt_spacing(double ax, tc_dtype t) {
  int p, emin, e;
  dt_format(t, &p, &emin);
  frexp(ax, &e); /* ax = m * 2^e, m in [0.5, 1): ax in [2^(e-1), 2^e) */
  int E = e - 1 < emin ? emin : e - 1;
  return ldexp(1.0, E - (p - 1));
}

/* The largest value of format t not above x (x finite; integer types:
 * floor). */
static double dt_down(double x, tc_dtype t) {
  if (!dt_float(t)) return floor(x);
  if (x == 0) return 0;
  double ax = fabs(x), q = dt_spacing(ax, t);
  return x > 0 ? floor(ax / q) * q : -ceil(ax / q) * q;
}

static double dt_up(double x, tc_dtype t) { return -dt_down(-x, t); }

/* The largest finite magnitude of each dtype. */
static double dt_max(tc_dtype t) {
  switch (t) {
    case TC_F32: return 3.4028234663852886e38;
    case TC_F16: return 65504.0;
    case TC_BF16: return 3.3895313892515355e38;
    case TC_I32: return 2147483647.0;
    case TC_I8: return 127.0;
  }
  return 0;
}

/* ---- host encoding, written here from the formats' definitions ------------ */

/* Bits of a value that format t (f16 or bf16) represents exactly, finite. */
static uint16_t dt_bits16(double v, tc_dtype t) {
  int p, emin;
  dt_format(t, &p, &emin);
  int ebits = t == TC_F16 ? 5 : 8, bias = (1 << (ebits - 1)) - 1;
  uint16_t sign = signbit(v) ? 0x8000u : 0;
  double a = fabs(v);
  if (a == 0) return sign;
  int e;
  frexp(a, &e);
  int E = e - 1;
  if (E < emin) /* subnormal: a multiple of 2^(emin - p + 1) */
    return sign | (uint16_t)ldexp(a, -(emin - (p - 1)));
  uint16_t mant = (uint16_t)(ldexp(a, -E + (p - 1)) - ldexp(1.0, p - 1));
  return sign | (uint16_t)((E + bias) << (p - 1)) | mant;
}

static double dt_from_bits16(uint16_t h, tc_dtype t) {
  int p, emin;
  dt_format(t, &p, &emin);
  int ebits = t == TC_F16 ? 5 : 8, bias = (1 << (ebits - 1)) - 1;
  int e = (h >> (p - 1)) & ((1 << ebits) - 1);
  int m = h & ((1 << (p - 1)) - 1);
  double v;
  if (e == 0) v = ldexp((double)m, emin - (p - 1));
  else if (e == (1 << ebits) - 1) v = m ? NAN : INFINITY;
  else v = ldexp((double)(m | (1 << (p - 1))), e - bias - (p - 1));
  return (h & 0x8000u) ? -v : v;
}

/* Element i of a host buffer of dtype t, as a double. */
static double dt_read(tc_dtype t, const void *buf, size_t i) {
  switch (t) {
    case TC_F32: return ((const float *)buf)[i];
    case TC_F16: case TC_BF16: return dt_from_bits16(((const uint16_t *)buf)[i], t);
    case TC_I32: return ((const int32_t *)buf)[i];
    case TC_I8: return ((const int8_t *)buf)[i];
  }
  return NAN;
}

/* ---- ops ---------------------------------------------------------------- */

/* The stored result of an op whose exact value over the operands lies in
 * [lo, hi]: widened by ulps units of f32 (the op's error when computed in
 * float; 0 for exact ops), rounded outward to f32 (the compute type of
 * every floating-point tensor), then to t's grid.  A bound past t's
 * range makes the value unknown (the generator keeps away from that). */
static dv dv_store(double lo, double hi, double ulps, tc_dtype t) {
  if (isnan(lo) || isnan(hi) || !isfinite(lo) || !isfinite(hi)) return dv_unknown;
  if (dt_float(t)) {
    /* An exact op's bounds are the exact results (sums and products of
     * f32 values are exact in double) and rounding outward covers
     * rounding to nearest; an op with an error bound is computed here in
     * double, whose own error 2^-50 covers.  The f32 minimum normal
     * allows a device that flushes subnormal results to zero. */
    double rel = ulps > 0 ? 0x1p-50 : 0, slack = 1.1754943508222875e-38;
    lo -= ulps * (lo == 0 ? 0 : dt_spacing(fabs(lo), TC_F32)) + fabs(lo) * rel + slack;
    hi += ulps * (hi == 0 ? 0 : dt_spacing(fabs(hi), TC_F32)) + fabs(hi) * rel + slack;
    lo = dt_down(dt_down(lo, TC_F32), t), hi = dt_up(dt_up(hi, TC_F32), t);
  }
  if (fabs(lo) > dt_max(t) || fabs(hi) > dt_max(t)) return dv_unknown;
  return (dv){lo, hi};
}

/* x rounded toward zero, as a float-to-integer conversion does. */
static double dv_trunc(double x) { return x < 0 ? ceil(x) : floor(x); }

static dv dv_unary(tc_unary_op op, tc_dtype t, dv x) {
  if (dv_is_any(x)) return dv_any;
  if (!dv_known(x)) return dv_unknown;
  double lo = x.lo, hi = x.hi;
  switch (op) {
    case TC_NEG: return dv_store(-hi, -lo, 0, t);
    case TC_ABS:
      if (lo >= 0) return dv_store(lo, hi, 0, t);
      if (hi <= 0) return dv_store(-hi, -lo, 0, t);
      return dv_store(0, fmax(-lo, hi), 0, t);
    case TC_RELU: return dv_store(fmax(lo, 0), fmax(hi, 0), 0, t);
    /* OpenCL's full-profile bounds: exp and log 3 ulp, sqrt 3, tanh 5,
     * division 2.5; sigmoid = 1 / (1 + exp(-x)) adds a rounded sum and a
     * division to exp's error */
    case TC_EXP: return dv_store(exp(lo), exp(hi), 4, t);
    /* An operand whose interval reaches over a point where the op jumps
     * (0: log and sqrt are undefined below, 1 / x changes sign) may be
     * on either side in the kernel and in the reference (a sum rounds
     * in its own order; a zero from MIN, MAX or RELU has either sign),
     * and the results far apart: any.  A point there gives the same
     * result in both: unknown, for them to agree on. */
    case TC_LOG: return lo < 0 && hi > 0 ? dv_any : lo <= 0 ? dv_unknown : dv_store(log(lo), log(hi), 4, t);
    case TC_SQRT: return lo < 0 && hi > 0 ? dv_any : lo < 0 ? dv_unknown : dv_store(sqrt(lo), sqrt(hi), 4, t);
    case TC_TANH: return dv_store(tanh(lo), tanh(hi), 6, t);
    case TC_SIGMOID: return dv_store(1 / (1 + exp(-lo)), 1 / (1 + exp(-hi)), 8, t);
    case TC_RECIPROCAL: /* (of a zero too: its sign is not followed) */
      return lo <= 0 && hi >= 0 ? dv_any : dv_store(1 / hi, 1 / lo, 3, t);
    case TC_GELU: case TC_SILU: break; /* (the random cases make neither) */
  }
  return dv_unknown;
}

/* The smallest and largest of four corner values. */
static dv dv_corners(double a, double b, double c, double d) {
  return (dv){fmin(fmin(a, b), fmin(c, d)), fmax(fmax(a, b), fmax(c, d))};
}

static dv dv_binary(tc_binary_op op, tc_dtype t, dv a, dv b) {
  if (dv_is_any(a) || dv_is_any(b)) return dv_any;
  if (!dv_known(a) || !dv_known(b)) return dv_unknown;
  int fl = dt_float(t);
  dv r;
  switch (op) {
    case TC_ADD: return dv_store(a.lo + b.lo, a.hi + b.hi, 0, t);
    case TC_SUB: return dv_store(a.lo - b.hi, a.hi - b.lo, 0, t);
    case TC_MUL:
      r = dv_corners(a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi);
      return dv_store(r.lo, r.hi, 0, t);
    case TC_DIV:
      /* floats: as reciprocal; integers are exact (x / 0 = 0) */
      if (b.lo <= 0 && b.hi >= 0) return fl ? dv_any : dv_unknown;
      if (fl) {
        r = dv_corners(a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi);
        return dv_store(r.lo, r.hi, 3, t);
      }
      /* integer division truncates; truncation is monotone, so the
       * corners still bound it */
      r = dv_corners(dv_trunc(a.lo / b.lo), dv_trunc(a.lo / b.hi), dv_trunc(a.hi / b.lo),
                     dv_trunc(a.hi / b.hi));
      return dv_store(r.lo, r.hi, 0, t);
    case TC_MAX: return dv_store(fmax(a.lo, b.lo), fmax(a.hi, b.hi), 0, t);
    case TC_MIN: return dv_store(fmin(a.lo, b.lo), fmin(a.hi, b.hi), 0, t);
  }
  return dv_unknown;
}

/* A cast: float to integer truncates (defined only inside the integer's
 * range), integer to float rounds to f32 and then to the format, integer
 * to a narrower integer only when the value fits. */
static dv dv_cast(tc_dtype from, tc_dtype to, dv x) {
  if (dv_is_any(x)) return dv_any;
  if (!dv_known(x)) return dv_unknown;
  if (dt_float(from) && !dt_float(to)) {
    if (x.lo <= -2147483648.0 || x.hi >= 2147483647.0) return dv_unknown;
    return dv_store(dv_trunc(x.lo), dv_trunc(x.hi), 0, to);
  }
  return dv_store(x.lo, x.hi, 0, to);
}

/* ---- reductions ------------------------------------------------------------
 *
 * A reduction's result is accumulated over its terms one at a time:
 * dv_red_start, dv_red_add for each term's interval (the element of the
 * operand, whatever value in it the kernel computed), dv_red_end.
 *
 * MAX and MIN are exact (the result is one of the terms, or the
 * identity): the largest of the terms lies between the largest lower
 * bound and the largest upper bound.
 *
 * SUM of integers (i32, and i8 accumulated in i32) is exact while it
 * stays in range (the generator keeps it there).
 *
 * SUM of floats is accumulated in f32 in an order the schedule decides: a
 * serial loop, partial sums per thread combined by a tree, an unrolled
 * loop.  Each of those is a binary tree of additions over the n terms
 * (with additions of the identity 0, which are exact).  One rounded
 * addition gives (a + b)(1 + d) with |d| <= u = 2^-24 (round to nearest,
 * no overflow; a sum of floats that is subnormal is exact), and a term
 * passes through at most n - 1 of them, so the computed sum s' of terms
 * x_i with exact sum s satisfies (Higham, Accuracy and Stability of
 * Numerical Algorithms, 2nd ed., section 4.2)
 *     |s' - s| <= g(n - 1) * sum |x_i|,   g(k) = k u / (1 - k u).
 * A term that is a product fused into the addition (fma(a, b, acc)) is
 * the exact product, which its interval holds, and the fused operation
 * is one rounding of the same form.  So the result lies in
 *     [sum lo_i - g A, sum hi_i + g A],   A = sum max(|lo_i|, |hi_i|),
 * with two small terms more: the sums above are computed here in double
 * (each of n additions off by at most 2^-53 A), and a device that flushes
 * subnormals to zero may lose up to 2^-126 at each term and each addition.
 * The result is an f32 (the accumulation type), so the bounds are then
 * rounded outward to f32.  A bound A too close to the f32 range (a
 * partial sum could overflow in some order) or an unknown term gives
 * "any". */

typedef struct dv_red {
  tc_reduce_op op;
  double lo, hi, abs;  /* SUM: sums of the bounds and of the magnitudes; MAX / MIN: the extremes */
  int64_t n;
  int unknown, any;    /* some term was unknown, or any */
} dv_red;

static dv_red dv_red_start(tc_reduce_op op) {
  dv_red r = {op, 0, 0, 0, 0, 0, 0};
  if (op != TC_REDUCE_SUM) r.lo = r.hi = op == TC_REDUCE_MAX ? -INFINITY : INFINITY;
  return r;
}

static void dv_red_add(dv_red *r, dv x) {
  r->n++;
  if (dv_is_any(x)) r->any = 1;
  if (!dv_known(x)) {
    r->unknown = 1;
    return;
  }
  switch (r->op) {
    case TC_REDUCE_SUM: r->lo += x.lo, r->hi += x.hi, r->abs += fmax(fabs(x.lo), fabs(x.hi)); break;
    case TC_REDUCE_MAX: r->lo = fmax(r->lo, x.lo), r->hi = fmax(r->hi, x.hi); break;
    case TC_REDUCE_MIN: r->lo = fmin(r->lo, x.lo), r->hi = fmin(r->hi, x.hi); break;
  }
}

/* The result, of dtype t (the accumulation type: f32, or i32). */
static dv dv_red_end(const dv_red *r, tc_dtype t) {
  if (r->any) return dv_any;
  if (r->op != TC_REDUCE_SUM) return r->unknown ? dv_unknown : dv_store(r->lo, r->hi, 0, t);
  if (!dt_float(t)) return r->unknown ? dv_unknown : dv_store(r->lo, r->hi, 0, t);
  if (r->unknown) return dv_any;
  double n = (double)r->n, ku = (n - 1) * 0x1p-24, g = ku / (1 - ku);
  double err = g * r->abs + n * 0x1p-53 * r->abs + 2 * n * 0x1p-126;
  if (r->abs + err >= dt_max(TC_F32)) return dv_any;
  return dv_store(r->lo - err, r->hi + err, 0, t);
}

/* ---- Welford's mean and variance (tc_welford) ------------------------------
 *
 * The kernel computes in f32 (u = 2^-24) by Welford's update (c = n + 1,
 * d = x - m, m' = m + d / c, M2' = M2 + d (x - m')) and Chan's merge of
 * partial states (t = na + nb, w = nb / t, d = mb - ma, m = ma + d w,
 * M2 = M2a + M2b + d d na w) in any tree the schedule makes; then
 * var = M2 / n.  An update is a merge with nb = 1.  Take n terms with
 * |x_i| <= M and max x - min x = D.  Every exact partial mean lies in
 * [min x, max x], so once the computed ones are within E_m of theirs,
 * |d| <= D' = D + 2 E_m.
 *
 * Mean.  The exact merged mean is a convex combination of the two
 * partial means, so their errors carry over as at most the larger one;
 * each merge adds the rounding of d, of w and of d w (u D' each) and of
 * the sum (u M).  A tree over n terms is at most n - 1 merges deep, so
 *     E_m = n u (M + 3 D) / (1 - 6 n u)
 * (D' itself holds 2 E_m: solved for E_m).
 *
 * M2.  With e_a <= na u (M + 3 D') the error of a partial mean, the
 * computed d is off by dd <= (t (M + 3 D') + 2 D') u <= 2 t u M' (M' = M
 * + 3 D'), and the term T = d^2 na w by at most 2 D' (na nb / t) dd +
 * (na nb / t) dd^2 + 5 u T (three products and w; T <= D'^2 na nb / t).
 * Summed over the tree, sum na nb = n (n - 1) / 2 (each pair of terms
 * meets in one merge), which gives 2 u D' M' n (n - 1), 2 n^3 u^2 M'^2
 * and 3 u D'^2 n (n - 1).  The two additions of each merge round by u
 * times the partial M2, at most t D'^2 / 4 plus its error; the sizes t of
 * all merges add up to at most n (n + 1) / 2 (a chain is the worst
 * tree).  An update's term d (x - m') is bounded alike (|x - m'| <= D'),
 * with one addition.  With margin for both forms:
 *     E_2 = (4 u D' M' n^2 + 4 n^3 u^2 M'^2 + 4 u D'^2 n (n + 1)) / (1 - 2 n u),
 * and var = M2 / n is within E_2 / n plus the division's u var.  The
 * error grows with M D (the condition of the data), not with M^2 as the
 * sum of squares' does: a kernel that computed E[x^2] - E[x]^2 in f32
 * falls outside these bounds when the mean is large (test_diff checks
 * that it would).
 *
 * Operands that are intervals [m_i - r_i, m_i + r_i]: the mean lies in
 * [sum lo / n, sum hi / n]; sqrt(M2) is the length of the centred vector,
 * which moves by at most sqrt(sum r_i^2) (centring is a projection), so
 * sqrt(M2) lies within R = sqrt(sum r_i^2) of sqrt(M2(m)); M and D are
 * taken over the intervals' ends.  The exact values here are computed in
 * double (two passes), whose error is far below these bounds (a relative
 * 2^-40 of M and M^2 covers it); a device that flushes subnormals to zero
 * adds at most 2^-126 per operation (4 n 2^-126).  A non-finite term
 * makes both results any (not checked). */
static void dv_welford_errors(double n, double mx, double d, double *em, double *e2) {
  double u = 0x1p-24, tiny = 4 * n * 0x1p-126;
  *em = n * u * (mx + 3 * d) / (1 - 6 * n * u);
  double dp = d + 2 * *em, mp = mx + 3 * dp;
  *e2 = (4 * u * dp * mp * n * n + 4 * n * n * n * u * u * mp * mp + 4 * u * dp * dp * n * (n + 1)) / (1 - 2 * n * u);
  *em += 0x1p-40 * mx + tiny, *e2 += 0x1p-40 * mx * mx * n + tiny;
}

static void dv_welford(const dv *x, int64_t n, dv *mean, dv *var) {
  double smid = 0, sr2 = 0, sr = 0, mx = 0, lo = INFINITY, hi = -INFINITY;
  for (int64_t i = 0; i < n; i++) {
    if (!dv_known(x[i])) {
      *mean = *var = dv_any;
      return;
    }
    double m = (x[i].lo + x[i].hi) / 2, r = (x[i].hi - x[i].lo) / 2;
    smid += m, sr += r, sr2 += r * r, mx = fmax(mx, fmax(fabs(x[i].lo), fabs(x[i].hi)));
    lo = fmin(lo, x[i].lo), hi = fmax(hi, x[i].hi);
  }
  double N = (double)n, u = 0x1p-24, cm = smid / N, m2 = 0, em, e2;
  for (int64_t i = 0; i < n; i++) {
    double d = (x[i].lo + x[i].hi) / 2 - cm;
    m2 += d * d;
  }
  dv_welford_errors(N, mx, hi - lo, &em, &e2);
  double R = sqrt(sr2), s = sqrt(m2), slo = fmax(0, s - R), shi = s + R;
  double vlo = (slo * slo - e2) / N, vhi = (shi * shi + e2) / N;
  vlo -= u * fabs(vlo), vhi += u * fabs(vhi);
  *mean = dv_store(cm - sr / N - em, cm + sr / N + em, 0, TC_F32);
  *var = dv_store(vlo, vhi, 0, TC_F32);
}

/* Whether a device or reference value v is one that interval r allows:
 * inside it, or for an unknown interval (edge values only), anything. */
static int dv_allows(dv r, double v) {
  if (!dv_known(r)) return 1;
  return !isnan(v) && v >= r.lo && v <= r.hi;
}

/* For unknown intervals (edge values): the kernel and the reference agree
 * when both are NaN, the same infinity, or finite and within 16 units of
 * t's last place of each other. */
static int dv_agree(tc_dtype t, double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  if (isinf(a) || isinf(b)) return a == b;
  if (!dt_float(t)) return a == b;
  double m = fmax(fabs(a), fabs(b));
  return fabs(a - b) <= 16 * (m == 0 ? 0 : dt_spacing(m, t));
}

#endif
