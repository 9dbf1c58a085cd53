/* matmul_test_util.h - the plain C loop the matmul tests compare a
 * kernel's C = relu(A @ B + bias) (or A @ B) with, and their random
 * operand values. */
#ifndef TC_MATMUL_TEST_UTIL_H
#define TC_MATMUL_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "test.h"
#include "tilec/tilec.h"

/* The tests' pseudo-random sequence (xorshift64). */
static uint64_t g_state = 0x2545f4914f6cdd1dull;
static inline uint64_t rnd(void) {
  g_state ^= g_state << 13, g_state ^= g_state >> 7, g_state ^= g_state << 17;
  return g_state;
}

/* n values in [-2, 2] of dtype t (f32, f16 or bf16), exact in t, in a new
 * buffer (the caller frees it); v gets the same values as doubles. */
static inline void *values(tc_dtype t, int64_t n, double *v) {
  size_t es = t == TC_F32 ? 4 : 2;
  unsigned char *p = malloc((size_t)n * es + 1);
  for (int64_t i = 0; i < n; i++) {
    float x = (float)((int64_t)(rnd() % 4001) - 2000) / 1000.0f;
    if (t == TC_F32) {
      ((float *)p)[i] = x, v[i] = x;
    } else {
      uint16_t h = t == TC_F16 ? tc_f32_to_f16(x) : tc_f32_to_bf16(x);
      ((uint16_t *)p)[i] = h, v[i] = t == TC_F16 ? tc_f16_to_f32(h) : tc_bf16_to_f32(h);
    }
  }
  return p;
}

/* The mismatches (at most 4) of out [m][n] against the sums in double of
 * va [m][k] x vb [k][n], then + bias[j] and relu when bias is not NULL:
 * the products of f32 / f16 / bf16 values are exact in f32 and the f32
 * sums round at most K + 1 times, so each element lies within (K + 2)
 * 2^-24 of the magnitudes it sums.  Each mismatch is a failed check
 * unless expected (an injected fault that must show). */
static inline int matmul_mismatches(const char *desc, const float *out, const double *va, const double *vb,
                             const double *bias, int64_t m, int64_t n, int64_t k, int expected) {
  int bad = 0;
  for (int64_t i = 0; i < m && bad < 4; i++)
    for (int64_t j = 0; j < n && bad < 4; j++) {
      double s = 0, mag = 0;
      for (int64_t q = 0; q < k; q++) s += va[i * k + q] * vb[q * n + j], mag += fabs(va[i * k + q] * vb[q * n + j]);
      if (bias) s = fmax(s + bias[j], 0.0), mag += fabs(bias[j]);
      double tol = (double)(k + 2) * 0x1p-24 * mag + 1e-30;
      double got = out[i * n + j];
      if (!(fabs(got - s) <= tol)) {
        bad++;
        TC_CHECK(expected, "%s: C[%lld][%lld] = %.9g, plain C %.9g (+-%.3g)", desc, (long long)i,
                 (long long)j, got, s, tol);
      }
    }
  return bad;
}

#endif
