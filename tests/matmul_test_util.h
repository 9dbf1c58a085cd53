/* matmul_test_util.h - the plain C loop the matmul tests compare a
 * kernel's C = relu(A @ B + bias) (or A @ B) with. */
#ifndef TC_MATMUL_TEST_UTIL_H
#define TC_MATMUL_TEST_UTIL_H

#include <math.h>
#include <stdint.h>

#include "test.h"

/* The mismatches (at most 4) of out [m][n] against the sums in double of
 * va [m][k] x vb [k][n], then + bias[j] and relu when bias is not NULL:
 * the products of f32 / f16 / bf16 values are exact in f32 and the f32
 * sums round at most K + 1 times, so each element lies within (K + 2)
 * 2^-24 of the magnitudes it sums.  Each mismatch is a failed check
 * unless expected (an injected fault that must show). */
static int matmul_mismatches(const char *desc, const float *out, const double *va, const double *vb,
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
