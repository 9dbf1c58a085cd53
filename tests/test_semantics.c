/* test_semantics.c - what every pointwise op does on edge values (NaN,
 * +-inf, +-0, denormals, values out of a type's range, integer limits), as
 * tilec.h states it above tc_set / tc_unary / tc_binary / tc_cast (and
 * docs/api.md with it).  Each case is a 1-D fusion of one op over a table
 * of operands; the value each element must have is written in the table
 * by hand from those rules (derivations in the comments), and checked
 * three ways: the kernel run on the default OpenCL device, tc_reference_run,
 * and the two against each other.  NaN matches any NaN; a zero's sign
 * counts except where the rules leave it open (min / max / relu of two
 * zeros); transcendental results (and OpenCL's division and square root,
 * which OpenCL 1.2 allows a few ulp off) may be a few ulp away.  The CUDA
 * and HIP kernels of each case must call the same functions (the helpers
 * all three dialects print from one definition, run here on OpenCL, or
 * the C99 / CUDA math functions whose NaN rules are the contract): a text
 * check, where the text is the contract.  Last, the comparison that
 * verifies kernels against the reference (tc_outputs_compare) matches NaN
 * with NaN and an infinity only with itself. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo/examples.h"
#include "runtime/host.h"
#include "test.h"
#include "tilec/tilec.h"

#define INF INFINITY
#define DN 0x1p-149               /* the smallest f32 denormal */
#define FMAX 0x1.fffffep127       /* FLT_MAX */
#define IMAX 2147483647.0         /* INT32_MAX */
#define IMIN (-2147483648.0)      /* INT32_MIN */

enum { UNARY, BINARY, CAST };

/* How a result is compared with what it must be.  EXACT: the same value,
 * a zero of the same sign (any NaN matches any NaN); ANYZERO: the same,
 * but -0 matches +0; ULPS: within `ulps` units in the last place of f32
 * (exact where the value is a zero, an infinity or NaN). */
enum { EXACT, ANYZERO, ULPS };

typedef struct {
  double a, b, want; /* b is unused by unary ops and casts */
} row;

typedef struct {
  const char *name;
  int kind, op;
  tc_dtype in, out;
  int cmp, ulps;
  const char *cl_fn, *cxx_fn; /* the function the OpenCL / CUDA and HIP kernels must call */
  const row *rows;
  int n;
} op_case;

#define CASE(name, kind, op, in, out, cmp, ulps, cl, cxx, rows) \
  {name, kind, op, in, out, cmp, ulps, cl, cxx, rows, (int)(sizeof rows / sizeof rows[0])}

/* ---- min / max / relu: IEEE 754 minNum / maxNum, the C99 fmin / fmax:
 * a NaN operand is ignored, NaN only when both are NaN; the sign of a zero
 * result of two zero operands is unspecified. */

static const row min_f32[] = {
    {1, NAN, 1},       {NAN, 1, 1},         {NAN, NAN, NAN},   {-INF, NAN, -INF},
    {NAN, INF, INF},   {-1, 2, -1},         {2, -1, -1},       {INF, 3, 3},
    {-INF, 3, -INF},   {DN, 0, 0},          {-DN, 0, -DN},     {FMAX, INF, FMAX},
    {0.0, -0.0, 0.0},  {-0.0, 0.0, 0.0},
};
static const row max_f32[] = {
    {1, NAN, 1},       {NAN, 1, 1},         {NAN, NAN, NAN},   {NAN, -INF, -INF},
    {-1, 2, 2},        {2, -1, 2},          {-INF, -3, -3},    {INF, 3, INF},
    {DN, 0, DN},       {-DN, 0, 0},         {-FMAX, -INF, -FMAX},
    {0.0, -0.0, 0.0},  {-0.0, 0.0, 0.0},
};
/* f16: 0x1p-24 is its smallest denormal, 65504 its largest finite value */
static const row min_f16[] = {
    {1, NAN, 1}, {NAN, 1, 1}, {NAN, NAN, NAN}, {65504, INF, 65504}, {0x1p-24, 0, 0}, {-0x1p-24, 0, -0x1p-24},
};
/* bf16: 0x1p-133 is a bf16 denormal */
static const row max_bf16[] = {
    {1, NAN, 1}, {NAN, -2, -2}, {NAN, NAN, NAN}, {0x1p-133, 0, 0x1p-133}, {-INF, NAN, -INF},
};
/* relu(x) = max(x, +0): relu(NaN) = +0 */
static const row relu_f32[] = {
    {NAN, 0, 0}, {INF, 0, INF}, {-INF, 0, 0}, {-1, 0, 0}, {1.5, 0, 1.5},
    {0.0, 0, 0}, {-0.0, 0, 0},  {DN, 0, DN},  {-DN, 0, 0}, {FMAX, 0, FMAX},
};
static const row relu_f16[] = {{NAN, 0, 0}, {-INF, 0, 0}, {65504, 0, 65504}, {-0x1p-24, 0, 0}};
static const row relu_i32[] = {{IMIN, 0, 0}, {IMAX, 0, IMAX}, {-1, 0, 0}, {0, 0, 0}, {5, 0, 5}};
static const row max_i32[] = {{IMIN, IMAX, IMAX}, {-1, -2, -1}, {IMIN, IMIN, IMIN}};
static const row min_i8[] = {{-128, 127, -128}, {-1, -2, -2}};

/* ---- integers: two's complement, wrapping on overflow (the exact result
 * modulo 2^32, or 2^8 for i8); x / 0 = 0; division truncates toward zero. */

static const row neg_i32[] = {
    {IMIN, 0, IMIN}, /* -(-2^31) = 2^31, wraps to -2^31 */
    {IMAX, 0, -IMAX}, {0, 0, 0}, {-5, 0, 5},
};
static const row abs_i32[] = {
    {IMIN, 0, IMIN}, /* |-2^31| = 2^31, wraps to -2^31 */
    {-IMAX, 0, IMAX}, {-1, 0, 1}, {7, 0, 7},
};
static const row neg_i8[] = {{-128, 0, -128} /* 128 wraps to -128 */, {127, 0, -127}, {-1, 0, 1}};
static const row abs_i8[] = {{-128, 0, -128}, {-127, 0, 127}};
static const row add_i32[] = {
    {IMAX, 1, IMIN},             /* 2^31 - 2^32 */
    {IMIN, -1, IMAX},            /* -2^31 - 1 + 2^32 */
    {IMIN, IMIN, 0},             /* -2^32 + 2^32 */
    {IMAX, IMAX, -2},            /* 2^32 - 2 - 2^32 */
    {2147483000, 2147483000, -1296}, /* 4294966000 - 4294967296 */
    {-5, 3, -2},
};
static const row sub_i32[] = {{IMIN, 1, IMAX}, {IMAX, -1, IMIN}, {0, IMIN, IMIN}, {3, 5, -2}};
static const row mul_i32[] = {
    {65536, 65536, 0},            /* 2^32 mod 2^32 */
    {IMAX, IMAX, 1},              /* (2^31-1)^2 = 2^62 - 2^32 + 1 = 1 mod 2^32 (inexact in double) */
    {46341, 46341, -2147479015},  /* 2147488281 - 2^32 */
    {123456789, 1000, -1097262584}, /* 123456789000 - 28 * 2^32 = 3197704712, - 2^32 */
    {IMIN, -1, IMIN},             /* 2^31 wraps */
    {-3, 7, -21},
};
static const row div_i32[] = {
    {7, 0, 0}, {-7, 0, 0}, {0, 0, 0},
    {IMIN, -1, IMIN}, /* 2^31 wraps to -2^31 (C leaves it undefined; x86 traps) */
    {IMIN, 1, IMIN}, {-7, 2, -3}, {7, -2, -3}, {IMAX, -1, -IMAX}, {-1, IMIN, 0},
};
static const row add_i8[] = {{127, 1, -128}, {-128, -1, 127}, {100, 100, -56} /* 200 - 256 */, {-128, -128, 0}};
static const row sub_i8[] = {{-128, 1, 127}, {127, -128, -1} /* 255 - 256 */};
static const row mul_i8[] = {
    {127, 127, 1},  /* 16129 = 63 * 256 + 1 */
    {-128, -1, -128}, {16, 16, 0}, {100, 3, 44} /* 300 - 256 */,
};
static const row div_i8[] = {{-128, -1, -128} /* 128 wraps */, {5, 0, 0}, {-7, 2, -3}};

/* ---- floating point: IEEE 754 in f32, rounded to nearest even into the
 * tensor's dtype; denormals are kept. */

static const row neg_f32[] = {{NAN, 0, NAN}, {0.0, 0, -0.0}, {-0.0, 0, 0.0}, {INF, 0, -INF}, {DN, 0, -DN}};
static const row abs_f32[] = {{-0.0, 0, 0.0}, {-INF, 0, INF}, {NAN, 0, NAN}, {-DN, 0, DN}};
static const row add_f32[] = {
    {INF, -INF, NAN},  {FMAX, FMAX, INF},  {DN, DN, 0x1p-148},
    {0x1p-126, -0x1.fffffcp-127, DN}, /* 2^-126 - (2^-126 - 2^-149) */
    {-0.0, -0.0, -0.0}, {0.0, -0.0, 0.0},  {NAN, 1, NAN},
    {1, 0x1p-24, 1},                  /* a tie, to even */
    {1, 0x1.000002p-24, 0x1.000002p0}, /* just above the tie */
};
static const row sub_f32[] = {{INF, INF, NAN}, {0.0, 0.0, 0.0}, {-0.0, 0.0, -0.0}, {1, 1, 0.0}, {-FMAX, FMAX, -INF}};
static const row mul_f32[] = {
    {0.0, INF, NAN}, {-0.0, 5, -0.0}, {FMAX, 2, INF}, {0x1p-126, 0.5, 0x1p-127},
    {DN, 0.5, 0.0},   /* 2^-150: a tie between 0 and 2^-149, to even */
    {-DN, 0.5, -0.0}, {1e30, -1e30, -INF},
};
static const row div_f32[] = {
    {1, 0.0, INF}, {-1, 0.0, -INF}, {1, -0.0, -INF}, {0.0, 0.0, NAN}, {INF, INF, NAN},
    {NAN, 1, NAN}, {1, INF, 0.0}, {-1, INF, -0.0}, {FMAX, 0.5, INF},
    {1, 3, 0x1.555556p-2}, {0x1p-126, 2, 0x1p-127}, {DN, 2, 0.0} /* a tie, to even */,
};
static const row add_f16[] = {
    {65504, 16, INF},    /* 65520 is the tie between 65504 and 2^16: even is 2^16, out of range */
    {65504, 15, 65504},  {0x1p-24, 0x1p-24, 0x1p-23}, {INF, -INF, NAN},
};
static const row mul_bf16[] = {{0x1p100, 0x1p100, INF}, {0x1p-100, 0x1p-100, 0.0}, {NAN, 0.0, NAN}};
static const row recip_f32[] = {
    {0.0, 0, INF}, {-0.0, 0, -INF}, {INF, 0, 0.0}, {-INF, 0, -0.0}, {NAN, 0, NAN}, {2, 0, 0.5},
    {3, 0, 0x1.555556p-2},
    {FMAX, 0, 0x1p-128}, /* 2^-128 (1 + 2^-24 + ..): a denormal, whose ulp 2^-149 rounds it to 2^-128 */
};
static const row sqrt_f32[] = {
    {-1, 0, NAN}, {-0.0, 0, -0.0}, {0.0, 0, 0.0}, {INF, 0, INF}, {-INF, 0, NAN}, {NAN, 0, NAN},
    {4, 0, 2}, {2, 0, 0x1.6a09e6p0}, {DN, 0, 0x1.6a09e6p-75} /* 2^-74.5 */, {0x1p-148, 0, 0x1p-74},
    {-DN, 0, NAN},
};
/* transcendental values: the f32 nearest the exact result */
static const row exp_f32[] = {
    {0.0, 0, 1}, {-0.0, 0, 1}, {-INF, 0, 0.0}, {INF, 0, INF}, {NAN, 0, NAN},
    {1, 0, 0x1.5bf0a8p+1},   /* e */
    {89, 0, INF},            /* 4.5e38 > FLT_MAX */
    {-110, 0, 0.0},          /* 1.7e-48, below half the smallest denormal */
    {-100, 0, 0x1.bp-145},   /* 3.72e-44 = 26.55 * 2^-149: a denormal, 27 * 2^-149 */
    {DN, 0, 1},
};
static const row log_f32[] = {
    {0.0, 0, -INF}, {-0.0, 0, -INF}, {-1, 0, NAN}, {-INF, 0, NAN}, {INF, 0, INF}, {NAN, 0, NAN},
    {1, 0, 0.0}, {2, 0, 0x1.62e43p-1} /* ln 2 */, {DN, 0, -0x1.9d1dap+6} /* -149 ln 2 = -103.28 */,
    {-DN, 0, NAN},
};
static const row tanh_f32[] = {
    {INF, 0, 1}, {-INF, 0, -1}, {0.0, 0, 0.0}, {-0.0, 0, -0.0}, {NAN, 0, NAN}, {20, 0, 1}, {-20, 0, -1},
    {0.5, 0, 0x1.d9353ep-2}, {DN, 0, DN} /* tanh x = x - x^3/3 + ..: x for tiny x */,
};
/* tanh where f32 rounds it to +-1 exactly: OpenCL requires tanh(+-inf) =
 * +-1, and 1 - tanh(x) = about 2 exp(-2x) is below half an ulp of 1
 * (2^-25) for |x| > 13 ln 2 = 9.0109, so C's tanhf gives +-1 there */
static const row tanh_saturated_f32[] = {
    {INF, 0, 1}, {-INF, 0, -1}, {20, 0, 1}, {-20, 0, -1}, {9.5f, 0, 1}, {-100, 0, -1}, {NAN, 0, NAN},
};
/* sigmoid(x) = 1 / (1 + exp(-x)) in f32 */
static const row sigmoid_f32[] = {
    {INF, 0, 1}, {-INF, 0, 0.0} /* 1 / (1 + inf) */, {NAN, 0, NAN}, {0.0, 0, 0.5}, {-0.0, 0, 0.5},
    {100, 0, 1},          /* 1 / (1 + 3.7e-44) */
    {-100, 0, 0.0},       /* exp(100) overflows: 1 / (1 + inf) */
    {1, 0, 0x1.764d5p-1}, /* 0.7310586 */
    {-88, 0, 0x1.07b71p-127}, /* 1 / (1 + 1.65e38) = 6.05e-39, a denormal */
};

/* gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (the tanh
 * form), the values in double rounded to f32; x >= -1, where 1 + tanh(..)
 * is at least 0.3 and the ulps of tanh stay ulps of the result */
static const row gelu_f32[] = {
    {0.0, 0, 0.0}, {1, 0, 0x1.aeb0b8p-1}, {-1, 0, -0x1.453d22p-3}, {0.5, 0, 0x1.6202dap-2},
    {2, 0, 0x1.f46084p+0}, {3, 0, 0x1.7f88d0p+1}, {-0.25, 0, -0x1.9aee04p-4}, {NAN, 0, NAN},
    {INF, 0, INF},
};
/* silu(x) = x / (1 + exp(-x)) in f32 */
static const row silu_f32[] = {
    {0.0, 0, 0.0}, {1, 0, 0x1.764d50p-1}, {-1, 0, -0x1.136562p-2}, {4, 0, 0x1.f6ca82p+1},
    {-4, 0, -0x1.26afa2p-4}, {0.5, 0, 0x1.3eb2fep-2}, {NAN, 0, NAN}, {INF, 0, INF},
    {-100, 0, -0.0}, /* exp(100) overflows f32: -100 / inf */
};

/* ---- casts: float to integer truncates toward zero and saturates to the
 * target's range, NaN -> 0; integer to integer wraps; integer to a float
 * rounds to nearest even (to f16 / bf16 through f32); float to float
 * rounds to nearest even, overflowing to +-inf, NaN stays NaN. */

static const row f32_i32[] = {
    {NAN, 0, 0}, {INF, 0, IMAX}, {-INF, 0, IMIN}, {3e9, 0, IMAX}, {-3e9, 0, IMIN},
    {2147483520.0, 0, 2147483520.0}, /* the largest f32 below 2^31 */
    {2147483648.0, 0, IMAX}, {IMIN, 0, IMIN}, {-2147483904.0, 0, IMIN} /* the next f32 below -2^31 */,
    {1.9, 0, 1}, {-1.9, 0, -1}, {-0.5, 0, 0}, {DN, 0, 0}, {-0.0, 0, 0}, {FMAX, 0, IMAX},
};
static const row f32_i8[] = {
    {NAN, 0, 0}, {INF, 0, 127}, {-INF, 0, -128}, {127.9, 0, 127}, {128, 0, 127}, {300, 0, 127},
    {-128.9, 0, -128}, {-129, 0, -128}, {-300, 0, -128}, {-1.5, 0, -1}, {1e10, 0, 127}, {DN, 0, 0},
};
static const row f16_i32[] = {{NAN, 0, 0}, {INF, 0, IMAX}, {-INF, 0, IMIN}, {65504, 0, 65504}, {-2.5, 0, -2}};
static const row bf16_i8[] = {{NAN, 0, 0}, {-INF, 0, -128}, {0x1p127, 0, 127}, {-0.99609375, 0, 0}, {-200, 0, -128}};
static const row i32_f32[] = {
    {16777217, 0, 16777216},   /* 2^24 + 1: a tie, to even */
    {16777219, 0, 16777220},   /* 2^24 + 3: a tie, to even (2^24 + 4) */
    {IMAX, 0, 2147483648.0}, {IMIN, 0, IMIN}, {-16777217, 0, -16777216},
};
static const row i32_f16[] = {
    {65504, 0, 65504}, {65519, 0, 65504}, {65520, 0, INF} /* the tie above 65504, to even 2^16 */,
    {100000, 0, INF}, {-100000, 0, -INF}, {2049, 0, 2048} /* a tie, to even */, {2051, 0, 2052},
    {IMIN, 0, -INF},
};
static const row i32_bf16[] = {{257, 0, 256} /* a tie, to even */, {259, 0, 260}, {IMAX, 0, 2147483648.0}};
static const row i32_i8[] = {{300, 0, 44}, {-129, 0, 127}, {128, 0, -128}, {255, 0, -1}, {IMIN, 0, 0}, {-1, 0, -1}};
static const row i8_f32[] = {{-128, 0, -128}, {127, 0, 127}};
static const row i8_i32[] = {{-128, 0, -128}, {127, 0, 127}};
static const row f32_f16[] = {
    {NAN, 0, NAN}, {INF, 0, INF}, {-INF, 0, -INF}, {65504, 0, 65504}, {65519, 0, 65504},
    {65520, 0, INF} /* a tie, to even 2^16 */, {FMAX, 0, INF},
    {1e-8, 0, 0.0} /* below 2^-25, half the smallest f16 denormal */, {-1e-8, 0, -0.0},
    {3e-8, 0, 0x1p-24}, {DN, 0, 0.0}, {-DN, 0, -0.0},
    {0x1.004p0, 0, 0x1.004p0} /* 1 + 2^-10, the f16 ulp at 1 */,
    {0x1.002p0, 0, 1} /* 1 + 2^-11: a tie, to even */,
    {0x1.006p0, 0, 0x1.008p0} /* 1 + 3 * 2^-11: a tie, to even 1 + 2^-9 */,
    {0x1.003p0, 0, 0x1.004p0} /* 1 + 3 * 2^-12: above the tie */,
};
static const row f32_bf16[] = {
    {NAN, 0, NAN}, {INF, 0, INF}, {FMAX, 0, INF}, {0x1.01p0, 0, 1} /* 1 + 2^-8: a tie, to even */,
    {0x1.03p0, 0, 0x1.04p0} /* 1 + 3 * 2^-8: a tie, to even 1 + 2^-6 */, {0x1p-133, 0, 0x1p-133}, {DN, 0, 0.0}, {-DN, 0, -0.0},
};
static const row f16_bf16[] = {{65504, 0, 65536} /* 1.1111111111b * 2^15 to 8 bits: up to 2^16 */, {NAN, 0, NAN}, {-0.0, 0, -0.0}};
static const row bf16_f16[] = {{0x1p20, 0, INF}, {NAN, 0, NAN}, {0x1p-30, 0, 0.0}, {-0x1p-20, 0, -0x1p-20}};

static const op_case cases[] = {
    CASE("min_f32", BINARY, TC_MIN, TC_F32, TC_F32, ANYZERO, 0, "fmin(", "fminf(", min_f32),
    CASE("max_f32", BINARY, TC_MAX, TC_F32, TC_F32, ANYZERO, 0, "fmax(", "fmaxf(", max_f32),
    CASE("min_f16", BINARY, TC_MIN, TC_F16, TC_F16, ANYZERO, 0, "fmin(", "fminf(", min_f16),
    CASE("max_bf16", BINARY, TC_MAX, TC_BF16, TC_BF16, ANYZERO, 0, "fmax(", "fmaxf(", max_bf16),
    CASE("relu_f32", UNARY, TC_RELU, TC_F32, TC_F32, ANYZERO, 0, "fmax(", "fmaxf(", relu_f32),
    CASE("relu_f16", UNARY, TC_RELU, TC_F16, TC_F16, ANYZERO, 0, "fmax(", "fmaxf(", relu_f16),
    CASE("relu_i32", UNARY, TC_RELU, TC_I32, TC_I32, EXACT, 0, "tc_max(", "tc_max(", relu_i32),
    CASE("max_i32", BINARY, TC_MAX, TC_I32, TC_I32, EXACT, 0, "tc_max(", "tc_max(", max_i32),
    CASE("min_i8", BINARY, TC_MIN, TC_I8, TC_I8, EXACT, 0, "tc_min(", "tc_min(", min_i8),
    CASE("neg_i32", UNARY, TC_NEG, TC_I32, TC_I32, EXACT, 0, "tc_ineg(", "tc_ineg(", neg_i32),
    CASE("abs_i32", UNARY, TC_ABS, TC_I32, TC_I32, EXACT, 0, "tc_iabs(", "tc_iabs(", abs_i32),
    CASE("neg_i8", UNARY, TC_NEG, TC_I8, TC_I8, EXACT, 0, "tc_ineg(", "tc_ineg(", neg_i8),
    CASE("abs_i8", UNARY, TC_ABS, TC_I8, TC_I8, EXACT, 0, "tc_iabs(", "tc_iabs(", abs_i8),
    CASE("add_i32", BINARY, TC_ADD, TC_I32, TC_I32, EXACT, 0, "tc_iadd(", "tc_iadd(", add_i32),
    CASE("sub_i32", BINARY, TC_SUB, TC_I32, TC_I32, EXACT, 0, "tc_isub(", "tc_isub(", sub_i32),
    CASE("mul_i32", BINARY, TC_MUL, TC_I32, TC_I32, EXACT, 0, "tc_imul(", "tc_imul(", mul_i32),
    CASE("div_i32", BINARY, TC_DIV, TC_I32, TC_I32, EXACT, 0, "tc_idiv(", "tc_idiv(", div_i32),
    CASE("add_i8", BINARY, TC_ADD, TC_I8, TC_I8, EXACT, 0, "tc_iadd(", "tc_iadd(", add_i8),
    CASE("sub_i8", BINARY, TC_SUB, TC_I8, TC_I8, EXACT, 0, "tc_isub(", "tc_isub(", sub_i8),
    CASE("mul_i8", BINARY, TC_MUL, TC_I8, TC_I8, EXACT, 0, "tc_imul(", "tc_imul(", mul_i8),
    CASE("div_i8", BINARY, TC_DIV, TC_I8, TC_I8, EXACT, 0, "tc_idiv(", "tc_idiv(", div_i8),
    CASE("neg_f32", UNARY, TC_NEG, TC_F32, TC_F32, EXACT, 0, NULL, NULL, neg_f32),
    CASE("abs_f32", UNARY, TC_ABS, TC_F32, TC_F32, EXACT, 0, "fabs(", "fabsf(", abs_f32),
    CASE("add_f32", BINARY, TC_ADD, TC_F32, TC_F32, EXACT, 0, NULL, NULL, add_f32),
    CASE("sub_f32", BINARY, TC_SUB, TC_F32, TC_F32, EXACT, 0, NULL, NULL, sub_f32),
    CASE("mul_f32", BINARY, TC_MUL, TC_F32, TC_F32, EXACT, 0, NULL, NULL, mul_f32),
    CASE("add_f16", BINARY, TC_ADD, TC_F16, TC_F16, EXACT, 0, NULL, NULL, add_f16),
    CASE("mul_bf16", BINARY, TC_MUL, TC_BF16, TC_BF16, EXACT, 0, NULL, NULL, mul_bf16),
    /* OpenCL 1.2 allows f32 division 2.5 ulp and sqrt 3 ulp off */
    CASE("div_f32", BINARY, TC_DIV, TC_F32, TC_F32, ULPS, 3, NULL, NULL, div_f32),
    CASE("reciprocal_f32", UNARY, TC_RECIPROCAL, TC_F32, TC_F32, ULPS, 3, NULL, NULL, recip_f32),
    CASE("sqrt_f32", UNARY, TC_SQRT, TC_F32, TC_F32, ULPS, 3, "sqrt(", "sqrtf(", sqrt_f32),
    /* OpenCL 1.2: exp and log 3 ulp, tanh 5; sigmoid adds a division */
    CASE("exp_f32", UNARY, TC_EXP, TC_F32, TC_F32, ULPS, 4, "exp(", "expf(", exp_f32),
    CASE("log_f32", UNARY, TC_LOG, TC_F32, TC_F32, ULPS, 4, "log(", "logf(", log_f32),
    CASE("tanh_f32", UNARY, TC_TANH, TC_F32, TC_F32, ULPS, 6, "tanh(", "tanhf(", tanh_f32),
    CASE("tanh_saturated_f32", UNARY, TC_TANH, TC_F32, TC_F32, EXACT, 0, "tanh(", "tanhf(",
         tanh_saturated_f32),
    CASE("sigmoid_f32", UNARY, TC_SIGMOID, TC_F32, TC_F32, ULPS, 8, "exp(", "expf(", sigmoid_f32),
    CASE("gelu_f32", UNARY, TC_GELU, TC_F32, TC_F32, ULPS, 32, "tanh(", "tanhf(", gelu_f32),
    CASE("silu_f32", UNARY, TC_SILU, TC_F32, TC_F32, ULPS, 8, "exp(", "expf(", silu_f32),
    CASE("cast_f32_i32", CAST, 0, TC_F32, TC_I32, EXACT, 0, "tc_sat_i32(", "tc_sat_i32(", f32_i32),
    CASE("cast_f32_i8", CAST, 0, TC_F32, TC_I8, EXACT, 0, "tc_sat_i8(", "tc_sat_i8(", f32_i8),
    CASE("cast_f16_i32", CAST, 0, TC_F16, TC_I32, EXACT, 0, "tc_sat_i32(", "tc_sat_i32(", f16_i32),
    CASE("cast_bf16_i8", CAST, 0, TC_BF16, TC_I8, EXACT, 0, "tc_sat_i8(", "tc_sat_i8(", bf16_i8),
    CASE("cast_i32_f32", CAST, 0, TC_I32, TC_F32, EXACT, 0, NULL, NULL, i32_f32),
    CASE("cast_i32_f16", CAST, 0, TC_I32, TC_F16, EXACT, 0, NULL, NULL, i32_f16),
    CASE("cast_i32_bf16", CAST, 0, TC_I32, TC_BF16, EXACT, 0, NULL, NULL, i32_bf16),
    CASE("cast_i32_i8", CAST, 0, TC_I32, TC_I8, EXACT, 0, NULL, NULL, i32_i8),
    CASE("cast_i8_f32", CAST, 0, TC_I8, TC_F32, EXACT, 0, NULL, NULL, i8_f32),
    CASE("cast_i8_i32", CAST, 0, TC_I8, TC_I32, EXACT, 0, NULL, NULL, i8_i32),
    CASE("cast_f32_f16", CAST, 0, TC_F32, TC_F16, EXACT, 0, NULL, NULL, f32_f16),
    CASE("cast_f32_bf16", CAST, 0, TC_F32, TC_BF16, EXACT, 0, NULL, NULL, f32_bf16),
    CASE("cast_f16_bf16", CAST, 0, TC_F16, TC_BF16, EXACT, 0, NULL, NULL, f16_bf16),
    CASE("cast_bf16_f16", CAST, 0, TC_BF16, TC_F16, EXACT, 0, NULL, NULL, bf16_f16),
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

/* ---- comparing ------------------------------------------------------------ */

/* f32 values in the order of their bit patterns, -0 and +0 both 0. */
static int64_t ordered(double v) {
  float f = (float)v;
  uint32_t u;
  memcpy(&u, &f, 4);
  return (u & 0x80000000u) ? -(int64_t)(u & 0x7fffffffu) : (int64_t)u;
}

/* 1 when got is what want allows under c's comparison, with `slack` times
 * the case's ulps (2 when both sides may be off). */
static int matches(const op_case *c, double got, double want, int slack) {
  if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
  if (got == want && (c->cmp == ANYZERO || signbit(got) == signbit(want))) return 1;
  if (c->cmp != ULPS || want == 0 || isinf(want) || got == 0 || isinf(got)) return 0;
  int64_t d = ordered(got) - ordered(want);
  return (d < 0 ? -d : d) <= (int64_t)c->ulps * slack;
}

/* ---- running -------------------------------------------------------------- */

/* The case's fusion: out[i] = op(a[i] (, b[i])) over n elements, split by 4
 * onto blocks and threads. */
static tc_fusion *build(const op_case *c) {
  tc_fusion *f = tc_fusion_new();
  int64_t n = c->n;
  tc_tensor *a = tc_input(f, c->in, 1, &n), *out = NULL;
  switch (c->kind) {
    case UNARY: out = tc_unary(f, (tc_unary_op)c->op, a); break;
    case BINARY: out = tc_binary(f, (tc_binary_op)c->op, a, tc_input(f, c->in, 1, &n)); break;
    default: out = tc_cast(f, a, c->out); break;
  }
  if (!out || tc_add_output(f, out) != TC_OK || tc_split(out, 0, 4, 1) != TC_OK ||
      tc_parallelize(out, 0, TC_BIDX) != TC_OK || tc_parallelize(out, 1, TC_TIDX) != TC_OK ||
      tc_propagate_transforms(out) != TC_OK || tc_parallelize_all_like(out) != TC_OK ||
      tc_inline_most(f) != TC_OK) {
    TC_CHECK(0, "%s: building the fusion: %s", c->name, tc_fusion_error(f));
    tc_fusion_free(f);
    return NULL;
  }
  return f;
}

static void run_case(const op_case *c) {
  tc_fusion *f = build(c);
  if (!f) return;
  size_t isz = tc_dtype_size(c->in), osz = tc_dtype_size(c->out), n = (size_t)c->n;
  void *a = malloc(n * isz), *b = malloc(n * isz), *got = malloc(n * osz), *ref = malloc(n * osz);
  for (size_t i = 0; i < n; i++) {
    tc_host_write(c->in, a, i, c->rows[i].a);
    tc_host_write(c->in, b, i, c->rows[i].b);
  }
  memset(got, 0x5a, n * osz); /* f32 1.5e16, f16 203.25, i32 0x5a5a5a5a, i8 90: no row's value */
  memset(ref, 0x5a, n * osz);
  void *kargs[3] = {a, b, got}, *rargs[3] = {a, b, ref};
  if (c->kind != BINARY) kargs[1] = got, rargs[1] = ref;

  tc_compile_options opt = {TC_TARGET_OPENCL, NULL, c->name};
  tc_status st = TC_OK;
  tc_kernel *k = tc_compile(f, &opt, &st);
  TC_CHECK(k, "%s: compile: %s", c->name, tc_fusion_error(f));
  int ran = 0;
  if (k) {
    st = tc_kernel_run(k, kargs, NULL, NULL);
    TC_CHECK(st == TC_OK, "%s: run: %s", c->name, tc_kernel_error(k));
    ran = st == TC_OK;
    if (c->cl_fn)
      TC_CHECK(strstr(tc_kernel_source(k), c->cl_fn), "%s: the OpenCL kernel does not call %s", c->name,
               c->cl_fn);
  }
  TC_CHECK(tc_reference_run(f, rargs) == TC_OK, "%s: reference: %s", c->name, tc_fusion_error(f));
  for (size_t i = 0; i < n; i++) {
    const row *r = &c->rows[i];
    double g = tc_host_read(c->out, got, i), w = tc_host_read(c->out, ref, i);
    char args[64];
    if (c->kind == BINARY) snprintf(args, sizeof args, "%a, %a", r->a, r->b);
    else snprintf(args, sizeof args, "%a", r->a);
    if (ran)
      TC_CHECK(matches(c, g, r->want, 1), "%s(%s): the kernel gives %a, the rules say %a", c->name, args, g,
               r->want);
    TC_CHECK(matches(c, w, r->want, 1), "%s(%s): tc_reference_run gives %a, the rules say %a", c->name,
             args, w, r->want);
    if (ran)
      TC_CHECK(matches(c, g, w, 2), "%s(%s): the kernel gives %a, tc_reference_run %a", c->name, args, g, w);
  }
  tc_kernel_free(k);
  free(a), free(b), free(got), free(ref);
  tc_fusion_free(f);
}

/* ---- the tests ------------------------------------------------------------ */

static int is_min_max_relu(const op_case *c) {
  if (c->kind == BINARY) return c->op == TC_MIN || c->op == TC_MAX;
  return c->kind == UNARY && c->op == TC_RELU;
}

static void test_min_max_relu(void) {
  for (int i = 0; i < NCASES; i++)
    if (is_min_max_relu(&cases[i])) run_case(&cases[i]);
}

static int is_int(tc_dtype t) { return t == TC_I32 || t == TC_I8; }

static void test_integer_ops(void) {
  for (int i = 0; i < NCASES; i++)
    if (cases[i].kind != CAST && is_int(cases[i].in) && !is_min_max_relu(&cases[i])) run_case(&cases[i]);
}

static void test_float_ops(void) {
  for (int i = 0; i < NCASES; i++)
    if (cases[i].kind != CAST && !is_int(cases[i].in) && !is_min_max_relu(&cases[i])) run_case(&cases[i]);
}

static void test_casts(void) {
  for (int i = 0; i < NCASES; i++)
    if (cases[i].kind == CAST) run_case(&cases[i]);
}

/* The CUDA and HIP kernels of every case call the function the rules name
 * (tc_compile prints them without a GPU or a compiler). */
static void test_cuda_hip_call_the_same(void) {
  const tc_target targets[2] = {TC_TARGET_CUDA, TC_TARGET_HIP};
  for (int i = 0; i < NCASES; i++) {
    if (!cases[i].cxx_fn) continue;
    for (int t = 0; t < 2; t++) {
      tc_fusion *f = build(&cases[i]);
      if (!f) continue;
      tc_compile_options opt = {targets[t], NULL, cases[i].name};
      tc_status st = TC_OK;
      tc_kernel *k = tc_compile(f, &opt, &st);
      TC_CHECK(k, "%s for %s: %s", cases[i].name, tc_target_name(targets[t]), tc_fusion_error(f));
      if (k)
        TC_CHECK(strstr(tc_kernel_source(k), cases[i].cxx_fn), "%s: the %s kernel does not call %s",
                 cases[i].name, tc_target_name(targets[t]), cases[i].cxx_fn);
      tc_kernel_free(k);
      tc_fusion_free(f);
    }
  }
}

/* The comparison `tilec demo` and the tests verify kernels with
 * (tc_outputs_compare): NaN matches NaN, an infinity only itself. */
static void test_outputs_compare(void) {
  static const float got[] = {NAN, INFINITY, -INFINITY, 1.0f, 0.0f, FLT_MAX, INFINITY, NAN, 1.0f, -INFINITY};
  static const float want[] = {NAN, INFINITY, -INFINITY, 1.0000001f, -0.0f, INFINITY, FLT_MAX, 1.0f, NAN, INFINITY};
  const long nbad = 5; /* the last five */
  tc_fusion *f = tc_fusion_new();
  int64_t n = 10;
  tc_tensor *in = tc_input(f, TC_F32, 1, &n);
  TC_REQUIRE(tc_add_output(f, tc_set(f, in)) == TC_OK, "%s", tc_fusion_error(f));
  void *g[2] = {NULL, (void *)got}, *w[2] = {NULL, (void *)want};
  double err = 0;
  TC_STR_LOCAL(msg);
  long bad = tc_outputs_compare(f, g, w, &err, &msg);
  TC_CHECK(bad == nbad, "%ld mismatches, expected %ld (first: %s)", bad, nbad, tc_str_cstr(&msg));
  TC_CHECK(isinf(err), "max error %g", err);
  TC_CHECK(strstr(tc_str_cstr(&msg), "element 5"), "first mismatch: %s", tc_str_cstr(&msg));
  tc_fusion_free(f);
}

int main(void) {
  TC_RUN(test_min_max_relu);
  TC_RUN(test_integer_ops);
  TC_RUN(test_float_ops);
  TC_RUN(test_casts);
  TC_RUN(test_cuda_hip_call_the_same);
  TC_RUN(test_outputs_compare);
  TC_MAIN_END();
}
