/* test_matmul.c - matmul as a fusion op: the op's shapes and refusals, the
 * reference evaluator against a plain C loop, random matmul + epilogue
 * fusions scheduled by tc_schedule_auto and run on OpenCL (PoCL) against
 * tc_reference_run and an independent plain C evaluation, the kernels'
 * builds with NVRTC and hipcc, and the shared-memory limit.
 *
 * test_matmul [--cases N] [--seed S] runs N random fusions (default 10). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/fusion.h"
#include "test.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

static uint64_t g_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
  g_state ^= g_state << 13, g_state ^= g_state >> 7, g_state ^= g_state << 17;
  return g_state;
}

/* ---- the op ------------------------------------------------------------ */

static void test_shapes(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t sa[2] = {5, 7}, sb[2] = {7, 3};
  tc_tensor *a = tc_input(f, TC_F16, 2, sa), *b = tc_input(f, TC_F16, 2, sb);
  tc_tensor *c = tc_matmul(f, a, b);
  TC_REQUIRE(c, "%s", tc_fusion_error(f));
  TC_CHECK_EQ_INT(tc_tensor_ndims(c), 2);
  TC_CHECK_EQ_INT(tc_tensor_extent(c, 0), 5);
  TC_CHECK_EQ_INT(tc_tensor_extent(c, 1), 3);
  TC_CHECK_EQ_INT(tc_tensor_dtype(c), TC_F32); /* f32 accumulation */
  tc_tensor *acc = tc_matmul_accumulator(c);
  TC_REQUIRE(acc, "no accumulator");
  /* [M, N, rK]: K a reduction axis of extent 7 in its loop domain */
  TC_CHECK_EQ_INT(tc_tensor_ndims(acc), 3);
  TC_CHECK_EQ_INT(tc_tensor_loop_extent(acc, 2), 7);
  char d[256];
  TC_CHECK(strstr(tc_tensor_describe(acc, d, sizeof d), "rS{7}") != NULL, "%s", d);
  TC_CHECK(tc_matmul_accumulator(a) == NULL, "an input has no accumulator");
  /* a batch */
  int64_t ba[3] = {4, 5, 7}, bb[3] = {4, 7, 3};
  tc_tensor *x = tc_input(f, TC_F32, 3, ba), *y = tc_input(f, TC_F32, 3, bb);
  tc_tensor *z = tc_matmul(f, x, y);
  TC_REQUIRE(z, "%s", tc_fusion_error(f));
  TC_CHECK(tc_tensor_ndims(z) == 3 && tc_tensor_extent(z, 0) == 4 && tc_tensor_extent(z, 1) == 5 &&
               tc_tensor_extent(z, 2) == 3, "batch shape");
  /* a transposed operand: [K, N] given as a permute of [N, K] */
  int64_t st[2] = {3, 7};
  int perm[2] = {1, 0};
  tc_tensor *bt = tc_permute(f, tc_input(f, TC_F16, 2, st), perm);
  tc_tensor *ct = tc_matmul(f, a, bt);
  TC_CHECK(ct && tc_tensor_extent(ct, 1) == 3, "%s", tc_fusion_error(f));
  tc_fusion_free(f);
}

static void expect_refusal(tc_tensor *a, tc_tensor *b, const char *words) {
  tc_fusion *f = a->f;
  TC_CHECK(tc_matmul(f, a, b) == NULL, "accepted; wanted \"%s\"", words);
  TC_CHECK(strstr(tc_fusion_error(f), words) != NULL, "message \"%s\" lacks \"%s\"",
           tc_fusion_error(f), words);
}

static void test_misuse(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t s57[2] = {5, 7}, s83[2] = {8, 3}, s73[2] = {7, 3}, s4[1] = {4};
  int64_t b2[3] = {2, 5, 7}, b3[3] = {3, 7, 3};
  tc_tensor *a = tc_input(f, TC_F32, 2, s57);
  expect_refusal(a, tc_input(f, TC_F32, 2, s83), "the inner extents (K) differ (7 vs 8)");
  expect_refusal(a, tc_input(f, TC_F16, 2, s73), "cast one first");
  expect_refusal(a, tc_input(f, TC_F32, 1, s4), "rank");
  expect_refusal(tc_input(f, TC_I32, 2, s57), tc_input(f, TC_I32, 2, s73), "must be f32, f16 or bf16");
  expect_refusal(tc_input(f, TC_F32, 3, b2), tc_input(f, TC_F32, 3, b3), "2 batches");
  tc_fusion_free(f);
  /* the matmul schedule's refusals */
  f = tc_fusion_new();
  tc_tensor *x = tc_input(f, TC_F32, 2, s57), *w = tc_input(f, TC_F32, 2, s73);
  tc_tensor *c = tc_matmul(f, tc_unary(f, TC_EXP, tc_binary(f, TC_ADD, x, x)), w); /* two operands */
  OK(f, tc_add_output(f, c));
  TC_CHECK(tc_schedule_auto(f, TC_TARGET_OPENCL, NULL) == TC_ERR_UNSUPPORTED &&
               strstr(tc_fusion_error(f), "is computed in the fusion"), "%s", tc_fusion_error(f));
  tc_fusion_free(f);
  f = tc_fusion_new();
  x = tc_input(f, TC_F32, 2, s57), w = tc_input(f, TC_F32, 2, s73);
  c = tc_matmul(f, x, w);
  OK(f, tc_add_output(f, c));
  tc_matmul_tiles bad = {64, 64, 8, 3, 4};
  TC_CHECK(tc_schedule_matmul(f, TC_TARGET_OPENCL, NULL, NULL) == TC_OK, "%s", tc_fusion_error(f));
  tc_fusion_free(f);
  f = tc_fusion_new();
  x = tc_input(f, TC_F32, 2, s57), w = tc_input(f, TC_F32, 2, s73);
  c = tc_matmul(f, x, w);
  OK(f, tc_add_output(f, c));
  TC_CHECK(tc_schedule_matmul(f, TC_TARGET_OPENCL, NULL, &bad) == TC_ERR_ARGUMENT &&
               strstr(tc_fusion_error(f), "do not nest"), "%s", tc_fusion_error(f));
  tc_fusion_free(f);
  /* an epilogue op that does not map onto the result's elements */
  f = tc_fusion_new();
  x = tc_input(f, TC_F32, 2, s57), w = tc_input(f, TC_F32, 2, s73);
  bool lead[3] = {true, false, false};
  OK(f, tc_add_output(f, tc_broadcast(f, tc_matmul(f, x, w), 3, lead)));
  TC_CHECK(tc_schedule_auto(f, TC_TARGET_OPENCL, NULL) == TC_ERR_UNSUPPORTED &&
               strstr(tc_fusion_error(f), "has rank 3 but the matmul's result has rank 2"), "%s",
           tc_fusion_error(f));
  tc_fusion_free(f);
  /* the accumulator as the output */
  f = tc_fusion_new();
  x = tc_input(f, TC_F32, 2, s57), w = tc_input(f, TC_F32, 2, s73);
  OK(f, tc_add_output(f, tc_matmul_accumulator(tc_matmul(f, x, w))));
  TC_CHECK(tc_schedule_auto(f, TC_TARGET_OPENCL, NULL) == TC_ERR_UNSUPPORTED &&
               strstr(tc_fusion_error(f), "is the matmul's accumulator"), "%s", tc_fusion_error(f));
  tc_fusion_free(f);
  /* no matmul, two matmuls */
  f = tc_fusion_new();
  x = tc_input(f, TC_F32, 2, s57);
  OK(f, tc_add_output(f, tc_unary(f, TC_EXP, x)));
  TC_CHECK(tc_schedule_matmul(f, TC_TARGET_OPENCL, NULL, NULL) == TC_ERR_ARGUMENT &&
               strstr(tc_fusion_error(f), "has no matmul"), "%s", tc_fusion_error(f));
  tc_fusion_free(f);
  f = tc_fusion_new();
  x = tc_input(f, TC_F32, 2, s57), w = tc_input(f, TC_F32, 2, s73);
  int64_t s33[2] = {3, 3};
  OK(f, tc_add_output(f, tc_matmul(f, tc_matmul(f, x, w), tc_input(f, TC_F32, 2, s33))));
  TC_CHECK(tc_schedule_auto(f, TC_TARGET_OPENCL, NULL) == TC_ERR_UNSUPPORTED &&
               strstr(tc_fusion_error(f), "two matmuls"), "%s", tc_fusion_error(f));
  tc_fusion_free(f);
  f = tc_fusion_new();
  x = tc_input(f, TC_F32, 2, s57), w = tc_input(f, TC_F32, 2, s73);
  int ax = 1;
  c = tc_reduce(f, TC_REDUCE_SUM, tc_matmul(f, x, w), 1, &ax); /* a row sum of the result */
  OK(f, tc_add_output(f, c));
  /* (refused before the reduction was part of the matmul schedule) */
  OK(f, tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  TC_CHECK(strstr(tc_fusion_schedule_note(f), "the only output: the sum of each row, reduced in its block"),
           "%s", tc_fusion_schedule_note(f));
  tc_fusion_free(f);
  /* the reductions it refuses */
  for (int kind = 0; kind < 5; kind++) {
    f = tc_fusion_new();
    int64_t big[2] = {7, 1025};
    x = tc_input(f, TC_F32, 2, s57), w = tc_input(f, TC_F32, 2, kind == 3 ? big : s73);
    c = tc_matmul(f, x, w);
    int both[2] = {0, 1}, col = 0;
    tc_tensor *rd = tc_reduce(f, TC_REDUCE_MAX, c, kind == 0 ? 2 : 1, kind == 0 ? both : &ax);
    OK(f, tc_add_output(f, c));
    tc_matmul_tiles narrow = {8, 2, 4, 4, 1};
    if (kind == 1) /* the reduction read by another op */
      OK(f, tc_add_output(f, tc_binary(f, TC_SUB, c, rd)));
    else
      OK(f, tc_add_output(f, rd));
    if (kind == 2) /* two reductions */
      OK(f, tc_add_output(f, tc_reduce(f, TC_REDUCE_SUM, c, 1, &col)));
    static const char *const want[5] = {
        "reduces 2 axes", "reads the reduction", "two reductions",
        "each row of the result, of 1025 elements; the matmul schedule reduces one in one block, "
        "of at most 1024",
        "covers 2 (bn 2); the matmul schedule reduces one in one block: give bn >= 3"};
    tc_status st = kind == 4 ? tc_schedule_matmul(f, TC_TARGET_OPENCL, NULL, &narrow)
                             : tc_schedule_auto(f, TC_TARGET_OPENCL, NULL);
    TC_CHECK(st == TC_ERR_UNSUPPORTED && strstr(tc_fusion_error(f), want[kind]), "kind %d: %s", kind,
             tc_fusion_error(f));
    tc_fusion_free(f);
  }
}

/* ---- random matmul + epilogue fusions ---------------------------------- */

enum { E_BIAS_N, E_BIAS_M, E_ALPHA, E_RESID, E_RELU, E_GELU, E_SILU, E_NUM };
static const char *ename[E_NUM] = {"bias_n", "bias_m", "alpha", "residual", "relu", "gelu", "silu"};

typedef struct mcase {
  int64_t batch, m, n, k; /* batch 0: none */
  tc_dtype t, out_t;      /* operands; the stored result (f32 or a cast) */
  int trans_a, trans_b;
  int steps[4], nsteps;
  float alpha;
  int red; /* a second output reducing the result before the cast: 0 none,
              R_ROW_SUM.. (below) */
  int pro; /* a prologue: f32 inputs cast to t (1), and B scaled by -1.5
              and ReLU'd first, A permuted before its cast (2) */
} mcase;

enum { R_NONE, R_ROW_SUM, R_ROW_MAX, R_COL_SUM, R_COL_MAX, R_NUM };
static const char *rname[R_NUM] = {"", "row-sum", "row-max", "column-sum", "column-max"};

static void case_str(const mcase *c, char *buf, size_t cap) {
  int w = snprintf(buf, cap, "%s%lldx%lldx%lld %s%s%s ->%s", c->batch ? "batch " : "",
                   (long long)c->m, (long long)c->n, (long long)c->k, tc_dtype_name(c->t),
                   c->trans_a ? " A^T" : "", c->trans_b ? " B^T" : "", tc_dtype_name(c->out_t));
  for (int i = 0; i < c->nsteps && w > 0 && (size_t)w < cap; i++)
    w += snprintf(buf + w, cap - (size_t)w, " %s", ename[c->steps[i]]);
  if (c->red && w > 0 && (size_t)w < cap) w += snprintf(buf + w, cap - (size_t)w, " + %s", rname[c->red]);
  if (c->pro && w > 0 && (size_t)w < cap) snprintf(buf + w, cap - (size_t)w, " prologue %d", c->pro);
}

static double rounded(tc_dtype t, double v) {
  if (t == TC_F16) return tc_f16_to_f32(tc_f32_to_f16((float)v));
  if (t == TC_BF16) return tc_bf16_to_f32(tc_f32_to_bf16((float)v));
  return (float)v;
}

/* A host buffer of n elements of t with values in [-2, 2] (exact in t),
 * and the same values as doubles. */
static void *host_values(tc_dtype t, int64_t n, double *vals) {
  void *p = malloc((size_t)n * tc_dtype_size(t) + 1);
  for (int64_t i = 0; i < n; i++) {
    double v = rounded(t, (double)((int64_t)(rnd() % 4001) - 2000) / 1000.0);
    vals[i] = v;
    if (t == TC_F32) ((float *)p)[i] = (float)v;
    else if (t == TC_F16) ((uint16_t *)p)[i] = tc_f32_to_f16((float)v);
    else ((uint16_t *)p)[i] = tc_f32_to_bf16((float)v);
  }
  return p;
}

static double out_value(tc_dtype t, const void *p, int64_t i) {
  if (t == TC_F16) return tc_f16_to_f32(((const uint16_t *)p)[i]);
  if (t == TC_BF16) return tc_bf16_to_f32(((const uint16_t *)p)[i]);
  return ((const float *)p)[i];
}

static float gelu(float x) {
  return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

/* Builds the case's fusion; the inputs in order into in[] (A, B, then the
 * epilogue's), their element counts into cnt[]. */
static tc_tensor *build(tc_fusion *f, const mcase *c, tc_tensor **in, int64_t *cnt, int *nin,
                        tc_tensor **pre) {
  int r = c->batch ? 3 : 2, o = r - 2;
  int64_t sa[3], sb[3];
  if (o) sa[0] = sb[0] = c->batch;
  sa[o] = c->trans_a ? c->k : c->m, sa[o + 1] = c->trans_a ? c->m : c->k;
  sb[o] = c->trans_b ? c->n : c->k, sb[o + 1] = c->trans_b ? c->k : c->n;
  int perm[3] = {0, 1, 2};
  perm[o] = o + 1, perm[o + 1] = o;
  tc_dtype it = c->pro ? TC_F32 : c->t;
  tc_tensor *a = tc_input(f, it, r, sa), *b = tc_input(f, it, r, sb);
  in[0] = a, in[1] = b, *nin = 2;
  cnt[0] = (c->batch ? c->batch : 1) * c->m * c->k, cnt[1] = (c->batch ? c->batch : 1) * c->k * c->n;
  if (c->pro == 2) b = tc_unary(f, TC_RELU, tc_binary_scalar(f, TC_MUL, b, -1.5));
  tc_tensor *pa = c->trans_a ? tc_permute(f, a, perm) : a, *pb = b;
  if (c->pro) {
    /* A: the cast after the permute with prologue 2, before it with 1 */
    pa = c->pro == 2 ? tc_cast(f, pa, c->t) : c->trans_a ? tc_permute(f, tc_cast(f, a, c->t), perm) : tc_cast(f, a, c->t);
    pb = tc_cast(f, b, c->t);
  }
  tc_tensor *y = tc_matmul(f, pa, c->trans_b ? tc_permute(f, pb, perm) : pb);
  if (!y) return NULL;
  for (int s = 0; s < c->nsteps && y; s++) {
    int64_t one = c->n, onem = c->m, full[3] = {c->batch, c->m, c->n};
    bool is_new[3] = {true, true, true};
    switch (c->steps[s]) {
      case E_BIAS_N:
        in[*nin] = tc_input(f, TC_F32, 1, &one), cnt[(*nin)++] = c->n;
        is_new[r - 1] = false;
        y = tc_binary(f, TC_ADD, y, tc_broadcast(f, in[*nin - 1], r, is_new));
        break;
      case E_BIAS_M:
        in[*nin] = tc_input(f, TC_F32, 1, &onem), cnt[(*nin)++] = c->m;
        is_new[o] = false;
        y = tc_binary(f, TC_ADD, y, tc_broadcast(f, in[*nin - 1], r, is_new));
        break;
      case E_ALPHA: y = tc_binary_scalar(f, TC_MUL, y, c->alpha); break;
      case E_RESID:
        in[*nin] = tc_input(f, TC_F32, r, c->batch ? full : full + 1);
        cnt[(*nin)++] = (c->batch ? c->batch : 1) * c->m * c->n;
        y = tc_binary(f, TC_ADD, y, in[*nin - 1]);
        break;
      case E_RELU: y = tc_unary(f, TC_RELU, y); break;
      case E_GELU: y = tc_unary(f, TC_GELU, y); break;
      default: y = tc_unary(f, TC_SILU, y); break;
    }
  }
  if (pre) *pre = y;
  if (y && c->out_t != TC_F32) y = tc_cast(f, y, c->out_t);
  return y;
}

/* The case's reduction of the epilogue's f32 values want[] (plain()'s)
 * in double: rwant[] over the kept axis, with a bound rtol[] of the
 * elements' bounds (their sum for a sum, the largest for a max) and of
 * an f32 sum of the terms in any order. */
static int64_t plain_reduction(const mcase *c, const double *want, const double *tol, double *rwant,
                               double *rtol) {
  int64_t nb = c->batch ? c->batch : 1, n = 0;
  int rows = c->red == R_ROW_SUM || c->red == R_ROW_MAX, sum = c->red == R_ROW_SUM || c->red == R_COL_SUM;
  int64_t keep = rows ? c->m : c->n, len = rows ? c->n : c->m;
  for (int64_t q = 0; q < nb; q++)
    for (int64_t i = 0; i < keep; i++, n++) {
      double s = sum ? 0 : -INFINITY, sabs = 0, e = 0;
      for (int64_t j = 0; j < len; j++) {
        int64_t x = (q * c->m + (rows ? i : j)) * c->n + (rows ? j : i);
        s = sum ? s + want[x] : fmax(s, want[x]);
        sabs += fabs(want[x]), e = sum ? e + tol[x] : fmax(e, tol[x]);
      }
      rwant[n] = s, rtol[n] = e + (sum ? (double)len * sabs * 0x1p-23 : 0) + 1e-6;
    }
  return n;
}

/* The case in plain C: the products summed in double, then the epilogue
 * in f32; want[] and a bound tol[] per element. */
static void plain(const mcase *c, double *const *v, double *want, double *tol) {
  int64_t nb = c->batch ? c->batch : 1;
  for (int64_t q = 0; q < nb; q++)
    for (int64_t i = 0; i < c->m; i++)
      for (int64_t j = 0; j < c->n; j++) {
        double s = 0, sabs = 0;
        for (int64_t k = 0; k < c->k; k++) {
          double x = v[0][q * c->m * c->k + (c->trans_a ? k * c->m + i : i * c->k + k)];
          double y = v[1][q * c->k * c->n + (c->trans_b ? j * c->k + k : k * c->n + j)];
          if (c->pro == 2) y = fmax(-1.5 * y, 0); /* (exact in f32: 1.5 y of 3 decimals) */
          if (c->pro) x = rounded(c->t, x), y = rounded(c->t, y);
          s += x * y, sabs += fabs(x * y);
        }
        int64_t e = (q * c->m + i) * c->n + j;
        /* an f32 sum of K terms in any order, then each op's rounding */
        double err = (double)c->k * sabs * 0x1p-23 + 1e-6;
        float y = (float)s;
        int w = 2;
        for (int st = 0; st < c->nsteps; st++) {
          switch (c->steps[st]) {
            case E_BIAS_N: y = y + (float)v[w++][j]; break;
            case E_BIAS_M: y = y + (float)v[w++][i]; break;
            case E_ALPHA: y = y * c->alpha, err *= fabs(c->alpha); break;
            case E_RESID: y = y + (float)v[w++][e]; break;
            case E_RELU: y = y > 0 ? y : 0; break;
            case E_GELU: y = gelu(y), err *= 1.2; break;
            default: y = y / (1.0f + expf(-y)), err *= 1.2; break;
          }
          err += fabs(y) * 4e-6 + 1e-6; /* a few ulp per op (exp, tanh on the device) */
        }
        want[e] = y;
        if (c->out_t != TC_F32)
          err += fabs(y) * (c->out_t == TC_F16 ? 0x1p-10 : 0x1p-7) + 1e-6;
        tol[e] = err;
      }
}

static void run_case_tiles(const mcase *c, int idx, const tc_matmul_tiles *tiles);

static void run_case(const mcase *c, int idx) { run_case_tiles(c, idx, NULL); }

/* tiles NULL: tc_schedule_auto's */
static void run_case_tiles(const mcase *c, int idx, const tc_matmul_tiles *tiles) {
  char desc[160];
  case_str(c, desc, sizeof desc);
  tc_fusion *f = tc_fusion_new();
  tc_tensor *in[8];
  int64_t cnt[8];
  int nin;
  tc_tensor *pre, *y = build(f, c, in, cnt, &nin, &pre);
  TC_REQUIRE(y, "case %d %s: %s", idx, desc, tc_fusion_error(f));
  OK(f, tc_add_output(f, y));
  if (c->red) {
    int ax = c->red == R_ROW_SUM || c->red == R_ROW_MAX ? -1 : -2;
    tc_tensor *rd = tc_reduce(f, c->red == R_ROW_SUM || c->red == R_COL_SUM ? TC_REDUCE_SUM : TC_REDUCE_MAX,
                              pre, 1, &ax);
    TC_REQUIRE(rd, "case %d %s: %s", idx, desc, tc_fusion_error(f));
    OK(f, tc_add_output(f, rd));
  }
  if (tiles) {
    size_t w = strlen(desc);
    snprintf(desc + w, sizeof desc - w, " tiles %lldx%lldx%lld/%lldx%lld", (long long)tiles->bm,
             (long long)tiles->bn, (long long)tiles->bk, (long long)tiles->tm, (long long)tiles->tn);
  }
  OK(f, tiles ? tc_schedule_matmul(f, TC_TARGET_OPENCL, NULL, tiles) : tc_schedule_auto(f, TC_TARGET_OPENCL, NULL));
  TC_CHECK(strncmp(tc_fusion_schedule_note(f), "matmul:", 7) == 0, "note: %s", tc_fusion_schedule_note(f));
  tc_compile_options opt = {TC_TARGET_OPENCL, NULL, "mm"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &opt, &st);
  TC_CHECK(k != NULL, "case %d %s: %s", idx, desc, tc_fusion_error(f));
  if (!k) {
    tc_fusion_free(f);
    return;
  }
  int64_t nout = (c->batch ? c->batch : 1) * c->m * c->n;
  void *args[10], *rargs[10];
  double *vals[8];
  for (int i = 0; i < nin; i++) {
    vals[i] = malloc((size_t)cnt[i] * sizeof(double));
    args[i] = rargs[i] = host_values(tc_tensor_dtype(in[i]), cnt[i], vals[i]);
  }
  size_t osz = (size_t)nout * tc_dtype_size(c->out_t);
  void *out = malloc(osz), *ref = malloc(osz);
  memset(out, 0xff, osz); /* NaNs: an element never written shows */
  args[nin] = out, rargs[nin] = ref;
  double *want = malloc((size_t)nout * sizeof(double)), *tol = malloc((size_t)nout * sizeof(double));
  plain(c, vals, want, tol);
  /* the reduction's f32 values (the NaNs of 0xff bytes where unwritten) */
  double *rwant = malloc((size_t)nout * sizeof(double) + 8), *rtol = malloc((size_t)nout * sizeof(double) + 8);
  int64_t nred = c->red ? plain_reduction(c, want, tol, rwant, rtol) : 0;
  float *rout = malloc((size_t)nred * 4 + 4), *rref = malloc((size_t)nred * 4 + 4);
  memset(rout, 0xff, (size_t)nred * 4 + 4);
  args[nin + 1] = rout, rargs[nin + 1] = rref;
  st = tc_kernel_run(k, args, NULL, NULL);
  if (st != TC_ERR_NO_DEVICE) {
    TC_CHECK(st == TC_OK, "case %d %s: run: %s", idx, desc, tc_kernel_error(k));
    OK(f, tc_reference_run(f, rargs));
    int bad = 0;
    for (int64_t i = 0; i < nout && st == TC_OK && bad < 3; i++) {
      double got = out_value(c->out_t, out, i), rv = out_value(c->out_t, ref, i);
      if (!(fabs(got - want[i]) <= tol[i])) {
        bad++;
        TC_CHECK(0, "case %d %s: element %lld = %.9g, plain C %.9g (+-%.3g)", idx, desc,
                 (long long)i, got, want[i], tol[i]);
      }
      if (!(fabs(rv - want[i]) <= tol[i])) {
        bad++;
        TC_CHECK(0, "case %d %s: reference element %lld = %.9g, plain C %.9g", idx, desc,
                 (long long)i, rv, want[i]);
      }
    }
    for (int64_t i = 0; i < nred && st == TC_OK && bad < 3; i++)
      if (!(fabs(rout[i] - rwant[i]) <= rtol[i]) || !(fabs(rref[i] - rwant[i]) <= rtol[i])) {
        bad++;
        TC_CHECK(0, "case %d %s: %s %lld = %.9g (reference %.9g), plain C %.9g (+-%.3g)", idx,
                 desc, rname[c->red], (long long)i, rout[i], rref[i], rwant[i], rtol[i]);
      }
  }
  for (int i = 0; i < nin; i++) free(args[i]), free(vals[i]);
  free(out), free(ref), free(want), free(tol), free(rwant), free(rtol), free(rout), free(rref);
  tc_kernel_free(k);
  tc_fusion_free(f);
}

static const int64_t extents[] = {1, 2, 3, 7, 13, 17, 31, 64, 67, 97};

static mcase random_case(void) {
  mcase c = {0};
  c.m = extents[rnd() % 10], c.n = extents[rnd() % 10], c.k = extents[rnd() % 10];
  c.batch = rnd() % 4 == 0 ? 1 + (int64_t)(rnd() % 3) : 0;
  static const tc_dtype ts[3] = {TC_F32, TC_F16, TC_BF16};
  c.t = ts[rnd() % 3];
  c.out_t = rnd() % 3 == 0 ? ts[1 + rnd() % 2] : TC_F32;
  c.trans_a = (int)(rnd() % 3 == 0), c.trans_b = (int)(rnd() % 3 == 0);
  c.nsteps = (int)(rnd() % 5);
  for (int i = 0; i < c.nsteps; i++) c.steps[i] = (int)(rnd() % E_NUM);
  c.alpha = (float)((int)(rnd() % 7) - 3) * 0.75f;
  return c;
}

static long g_cases = 10;

static void test_random_fusions(void) {
  for (long i = 0; i < g_cases; i++) {
    mcase c = random_case();
    run_case(&c, (int)i);
  }
}

/* Tiles of any extent, not only the scheduler's powers of two: threads
 * that do not divide a shared tile, accumulator tiles of 1 x n, K tiles
 * longer than K. */
static void test_random_tiles(void) {
  for (long i = 0; i < (g_cases + 1) / 2; i++) {
    mcase c = random_case();
    tc_matmul_tiles t = {0};
    t.tm = 1 + (int64_t)(rnd() % 4), t.tn = 1 + (int64_t)(rnd() % 4);
    t.bm = t.tm * (1 + (int64_t)(rnd() % 12)), t.bn = t.tn * (1 + (int64_t)(rnd() % 12));
    t.bk = 1 + (int64_t)(rnd() % 24);
    run_case_tiles(&c, (int)i, &t);
  }
}

/* A row or column reduction of the epilogue's result as a second output
 * (the row sums of relu(A @ B + bias) beside it): listed ragged shapes in
 * each dtype, with a cast of the result after the reduced values, a batch
 * and transposes; then random cases, half of them with random tiles that
 * cover the reduced axis. */
static void test_epilogue_reductions(void) {
  static const int64_t shapes[][3] = {{67, 97, 33}, {1, 1, 1}, {97, 3, 17}, {3, 130, 7}, {31, 17, 61}};
  static const tc_dtype ts[3] = {TC_F32, TC_F16, TC_BF16};
  for (int s = 0; s < 5; s++)
    for (int red = R_ROW_SUM; red < R_NUM; red++) {
      mcase c = {0};
      c.m = shapes[s][0], c.n = shapes[s][1], c.k = shapes[s][2], c.red = red;
      c.t = ts[(s + red) % 3], c.out_t = red == R_COL_MAX ? TC_BF16 : TC_F32;
      c.batch = s == 4 ? 2 : 0, c.trans_b = s == 2;
      c.steps[0] = red % 2 ? E_BIAS_N : E_BIAS_M, c.steps[1] = E_RELU, c.nsteps = 2;
      run_case(&c, -10 * s - red);
    }
  for (long i = 0; i < g_cases; i++) {
    mcase c = random_case();
    c.red = 1 + (int)(rnd() % (R_NUM - 1));
    if (i % 2 == 0) {
      run_case(&c, (int)i);
      continue;
    }
    tc_matmul_tiles t = {0};
    int rows = c.red <= R_ROW_MAX;
    t.tm = 1 + (int64_t)(rnd() % 4), t.tn = 1 + (int64_t)(rnd() % 4);
    t.bm = t.tm * (1 + (int64_t)(rnd() % 12)), t.bn = t.tn * (1 + (int64_t)(rnd() % 12));
    if (rows) t.bn = t.tn * ((c.n + t.tn - 1) / t.tn + (int64_t)(rnd() % 3));
    else t.bm = t.tm * ((c.m + t.tm - 1) / t.tm + (int64_t)(rnd() % 3));
    t.bk = 1 + (int64_t)(rnd() % 24);
    run_case_tiles(&c, (int)i, &t);
  }
}

/* Ops before the matmul on its operands (a cast of f32 inputs to the
 * operand type, a scale and a ReLU), computed as the tiles are staged:
 * listed ragged shapes with transposes, a batch and each dtype, then
 * random cases, half of them with random tiles. */
static void test_operand_prologues(void) {
  static const int64_t shapes[][3] = {{67, 45, 33}, {1, 1, 1}, {97, 3, 130}, {5, 200, 17}, {31, 17, 61}};
  static const tc_dtype ts[3] = {TC_F16, TC_BF16, TC_F32};
  for (int s = 0; s < 5; s++)
    for (int pro = 1; pro <= 2; pro++) {
      mcase c = {0};
      c.m = shapes[s][0], c.n = shapes[s][1], c.k = shapes[s][2], c.pro = pro;
      c.t = ts[(s + pro) % 3], c.out_t = TC_F32;
      c.batch = s == 4 ? 3 : 0, c.trans_a = s % 2, c.trans_b = (s + pro) % 2;
      c.steps[0] = E_BIAS_N, c.steps[1] = E_RELU, c.nsteps = s == 1 ? 0 : 2;
      c.red = s == 3 ? R_ROW_SUM : R_NONE;
      run_case(&c, -20 * s - pro);
    }
  for (long i = 0; i < g_cases; i++) {
    mcase c = random_case();
    c.pro = 1 + (int)(rnd() % 2);
    if (i % 2 == 0) {
      run_case(&c, (int)i);
      continue;
    }
    tc_matmul_tiles t = {0};
    t.tm = 1 + (int64_t)(rnd() % 4), t.tn = 1 + (int64_t)(rnd() % 4);
    t.bm = t.tm * (1 + (int64_t)(rnd() % 12)), t.bn = t.tn * (1 + (int64_t)(rnd() % 12));
    t.bk = 1 + (int64_t)(rnd() % 24);
    run_case_tiles(&c, (int)i, &t);
  }
}

/* A warp-level op type (macro, an im x in x ik instruction) on random
 * f16 / bf16 fusions: random warp tiles (1 or 2 instruction tiles along M
 * by 1 to ntn along N), 1 to 4 warps, K tiles of ik or 2 ik, any M, N, K
 * (edges as zeros in the fragments), batches, transposes and epilogue
 * chains, on the OpenCL emulation of the instruction. */
static void test_random_macro_tiles(tc_matmul_macro macro, int64_t im, int64_t in, int64_t ik,
                                    int ntn) {
  for (long i = 0; i < (g_cases + 1) / 2; i++) {
    mcase c = random_case();
    c.t = rnd() % 2 ? TC_F16 : TC_BF16;
    tc_matmul_tiles t = {0};
    t.tm = im * (1 + (int64_t)(rnd() % 2)), t.tn = in * (1 + (int64_t)(rnd() % ntn));
    t.bm = t.tm * (1 + (int64_t)(rnd() % 2)), t.bn = t.tn * (1 + (int64_t)(rnd() % 2));
    t.bk = ik * (1 + (int64_t)(rnd() % 2));
    t.macro = macro;
    run_case_tiles(&c, (int)i, &t);
  }
}

/* mma.sync m16n8k16 (TC_MACRO_MMA_M16N8K16): 1 to 4 8-column tiles. */
static void test_random_mma_tiles(void) {
  test_random_macro_tiles(TC_MACRO_MMA_M16N8K16, 16, 8, 16, 4);
}

/* The same with AMD's MFMA (emulated): 32x32x8 and 16x16x16, up to 2 x 2
 * instruction tiles per wavefront and 2 x 2 wavefronts. */
static void test_random_mfma_tiles(void) {
  test_random_macro_tiles(TC_MACRO_MFMA_32X32X8, 32, 32, 8, 2);
  test_random_macro_tiles(TC_MACRO_MFMA_16X16X16, 16, 16, 16, 2);
}

/* The wgmma m64nNk16 op type (TC_MACRO_WGMMA) likewise: 1 or 2 warp
 * groups along M, 1 or 2 along N with N of 8 to 64 each, K tiles of 16,
 * 32 or 64 (64: the 128B swizzled tiles), any M, N, K (edges as zeros
 * stored in the shared tiles), batches, transposes and epilogue chains,
 * on the OpenCL emulation of the instruction. */
static void test_random_wgmma_tiles(void) {
  for (long i = 0; i < (g_cases + 3) / 4; i++) {
    mcase c = random_case();
    c.t = rnd() % 2 ? TC_F16 : TC_BF16;
    tc_matmul_tiles t = {0};
    t.tm = 64, t.tn = 8 * (1 + (int64_t)(rnd() % 8));
    t.bm = 64 * (1 + (int64_t)(rnd() % 2)), t.bn = t.tn * (1 + (int64_t)(rnd() % 2));
    t.bk = 16 << (rnd() % 3);
    t.macro = TC_MACRO_WGMMA;
    run_case_tiles(&c, (int)i, &t);
  }
}

/* M or N of 1 with each op type's tiles: the operand broadcast along
 * that axis (A along N, B along M) keeps its tile one row (column) wide,
 * so the shared tiles are (bm + bn) x bk elements as for any other
 * extent: a matmul's result of extent 1 used to give its broadcast
 * operand the split of its own extent-1 axis by the tile (266240 bytes
 * for the FMA tiles below at M 1, 5275648 for the wgmma ones).  Each runs
 * on PoCL against the plain C loop, bias_m / bias added and ReLU'd. */
static void test_extent_one_tiles(void) {
  static const struct {
    tc_matmul_tiles t;
    tc_dtype dt;
  } cs[] = {
      {{64, 64, 32, 32, 32, TC_MACRO_FMA, 0}, TC_BF16},
      {{64, 64, 16, 4, 4, TC_MACRO_FMA, 2}, TC_F32},
      {{64, 64, 32, 32, 32, TC_MACRO_MMA_M16N8K16, 0}, TC_F16},
      {{128, 160, 128, 64, 40, TC_MACRO_WGMMA, 0}, TC_BF16},
      {{64, 64, 64, 64, 64, TC_MACRO_WGMMA, 2}, TC_F16},
  };
  static const int64_t mn[3][2] = {{1, 130}, {130, 1}, {1, 1}};
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
    for (int s = 0; s < 3; s++) {
      mcase c = {0};
      c.m = mn[s][0], c.n = mn[s][1], c.k = 97, c.t = cs[i].dt, c.out_t = TC_F32;
      c.steps[0] = s == 1 ? E_BIAS_M : E_BIAS_N, c.steps[1] = E_RELU, c.nsteps = 2;
      run_case_tiles(&c, (int)(100 + 3 * i + (size_t)s), &cs[i].t);
      tc_fusion *f = tc_fusion_new();
      tc_tensor *in[8], *pre;
      int64_t cnt[8];
      int nin;
      OK(f, tc_add_output(f, build(f, &c, in, cnt, &nin, &pre)));
      OK(f, tc_schedule_matmul(f, TC_TARGET_OPENCL, NULL, &cs[i].t));
      tc_compile_options opt = {TC_TARGET_OPENCL, NULL, "mm"};
      tc_status st;
      tc_kernel *k = tc_compile(f, &opt, &st);
      const tc_matmul_tiles *t = &cs[i].t;
      int64_t want = (t->bm + t->bn) * t->bk * (int64_t)tc_dtype_size(c.t) * (t->stages > 1 ? t->stages : 1);
      TC_CHECK(k && tc_kernel_smem_bytes(k) == want, "case %zu at %lldx%lld: %lld bytes of shared "
               "memory, want %lld (%s)", i, (long long)c.m, (long long)c.n,
               (long long)(k ? tc_kernel_smem_bytes(k) : -1), (long long)want, tc_fusion_error(f));
      tc_kernel_free(k);
      tc_fusion_free(f);
    }
}

/* Extents of 1 and primes on each axis, and tiles the shape does not
 * divide; relu(A @ B + bias) in each dtype. */
static void test_listed_shapes(void) {
  static const int64_t shapes[][3] = {{1, 1, 1}, {1, 67, 5}, {67, 1, 17}, {3, 5, 1}, {67, 97, 131}};
  static const tc_dtype ts[3] = {TC_F32, TC_F16, TC_BF16};
  for (int s = 0; s < 5; s++) {
    mcase c = {0};
    c.m = shapes[s][0], c.n = shapes[s][1], c.k = shapes[s][2];
    c.t = ts[s % 3], c.out_t = TC_F32;
    c.steps[0] = E_BIAS_N, c.steps[1] = E_RELU, c.nsteps = 2;
    run_case(&c, -1 - s);
  }
}

/* relu(A @ B + bias) is one kernel: one store of the result, the bias
 * and the ReLU applied to the registers before it, nothing else in
 * global memory. */
static void test_epilogue_in_one_kernel(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t sa[2] = {128, 64}, sb[2] = {64, 96}, sn = 96;
  tc_tensor *a = tc_input(f, TC_F32, 2, sa), *b = tc_input(f, TC_F32, 2, sb);
  tc_tensor *bias = tc_input(f, TC_F32, 1, &sn);
  bool is_new[2] = {true, false};
  tc_tensor *y = tc_unary(f, TC_RELU, tc_binary(f, TC_ADD, tc_matmul(f, a, b), tc_broadcast(f, bias, 2, is_new)));
  OK(f, tc_add_output(f, y));
  OK(f, tc_schedule_auto(f, TC_TARGET_CUDA, "sm_90a"));
  const char *note = tc_fusion_schedule_note(f);
  TC_CHECK(strstr(note, "128 x 96 x 64") && strstr(note, "64x64 tiles") && strstr(note, "4x4 f32 accumulators") &&
               strstr(note, "2 epilogue ops"), "note: %s", note);
  tc_compile_options opt = {TC_TARGET_CUDA, "sm_90a", "mm_bias_relu"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &opt, &st);
  TC_REQUIRE(k, "%s", tc_fusion_error(f));
  const char *src = tc_kernel_source(k);
  char store[32];
  snprintf(store, sizeof store, "%s[", tc_tensor_name(y));
  int stores = 0;
  for (const char *p = src; (p = strstr(p, store)); p++) stores++;
  TC_CHECK_EQ_INT(stores, 1); /* the output appears once: its store */
  TC_CHECK(strstr(src, "__syncthreads()") != NULL && strstr(src, "__shared__") != NULL, "%s", src);
  TC_CHECK(strstr(src, "fmaxf(") != NULL, "no ReLU in\n%s", src);
  /* (64 + 64) x 8 floats of A and B tiles */
  TC_CHECK_EQ_INT(tc_kernel_smem_bytes(k), 4096);
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* The kernels build with NVRTC and hipcc (no GPU needed). */
static void test_device_builds(void) {
  for (int t = TC_TARGET_CUDA; t <= TC_TARGET_HIP; t++)
    for (int dt = 0; dt < 4; dt++) {
      mcase c = {0};
      c.red = dt < 2 ? R_NONE : dt == 2 ? R_ROW_SUM : R_COL_MAX; /* and a reduction beside it */
      c.m = 67, c.n = 97, c.k = 33, c.batch = dt % 2 ? 2 : 0;
      c.t = dt % 2 ? TC_BF16 : TC_F16, c.out_t = dt % 2 ? TC_BF16 : TC_F16, c.trans_b = dt % 2;
      c.steps[0] = E_BIAS_N, c.steps[1] = E_GELU, c.nsteps = 2;
      tc_fusion *f = tc_fusion_new();
      tc_tensor *in[8];
      int64_t cnt[8];
      int nin;
      tc_tensor *pre, *y = build(f, &c, in, cnt, &nin, &pre);
      TC_REQUIRE(y, "%s", tc_fusion_error(f));
      OK(f, tc_add_output(f, y));
      int ax = c.red == R_ROW_SUM ? -1 : -2;
      if (c.red) OK(f, tc_add_output(f, tc_reduce(f, c.red == R_ROW_SUM ? TC_REDUCE_SUM : TC_REDUCE_MAX, pre, 1, &ax)));
      OK(f, tc_schedule_auto(f, (tc_target)t, NULL));
      tc_compile_options o = {(tc_target)t, t == TC_TARGET_CUDA ? "sm_90a" : "gfx90a", "mm"};
      tc_status st;
      tc_kernel *k = tc_compile(f, &o, &st);
      TC_CHECK(k != NULL, "%s: %s", tc_target_name((tc_target)t), tc_fusion_error(f));
      if (k) {
        st = tc_kernel_build(k, NULL);
        if (st == TC_ERR_UNSUPPORTED) {
          printf("  skip %s build: %s\n", tc_target_name((tc_target)t), tc_kernel_error(k));
        } else {
          TC_CHECK(st == TC_OK, "%s (%s) does not build: %s", tc_target_name((tc_target)t),
                   rname[c.red], tc_kernel_error(k));
        }
      }
      tc_kernel_free(k);
      tc_fusion_free(f);
    }
}

/* Tiles whose A and B tiles exceed the arch's shared memory are refused
 * at compile time with the arch's limit: (256 + 256) x 128 f32 = 256 KiB
 * against sm_90a's 227 KiB. */
static void test_shared_memory_limit(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t sa[2] = {512, 512};
  tc_tensor *a = tc_input(f, TC_F32, 2, sa), *b = tc_input(f, TC_F32, 2, sa);
  OK(f, tc_add_output(f, tc_matmul(f, a, b)));
  tc_matmul_tiles big = {256, 256, 128, 8, 8};
  OK(f, tc_schedule_matmul(f, TC_TARGET_CUDA, "sm_90a", &big));
  tc_compile_options opt = {TC_TARGET_CUDA, "sm_90a", "mm"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &opt, &st);
  TC_CHECK(k == NULL && st == TC_ERR_LOWER, "compiled: %d", (int)st);
  TC_CHECK(strstr(tc_fusion_error(f), "262144 bytes of shared memory") &&
               strstr(tc_fusion_error(f), "allows at most 232448"), "%s", tc_fusion_error(f));
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* The lowering's tile of accumulators on a plain reduction: column sums
 * of x [37, 10] with the reduction loop outside the loop over the 10
 * columns, all 10 sums in one thread's registers (refused before: an
 * iteration loop inside a reduction loop). */
static void test_register_tile_of_a_reduction(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {37, 10};
  tc_tensor *x = tc_input(f, TC_F32, 2, shape);
  int ax = 0;
  tc_tensor *s = tc_reduce(f, TC_REDUCE_SUM, x, 1, &ax);
  OK(f, tc_add_output(f, s));
  tc_tensor *acc = tc_cache_before(s); /* the sums in registers, s their copy */
  TC_REQUIRE(acc, "%s", tc_fusion_error(f));
  OK(f, tc_split(acc, 0, 8, 1));       /* [rK/8, r8, i10] */
  tc_compile_options opt = {TC_TARGET_OPENCL, NULL, "colsum"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &opt, &st);
  TC_REQUIRE(k, "%s", tc_fusion_error(f));
  float in[370], out[10], want[10] = {0};
  for (int i = 0; i < 370; i++) in[i] = (float)((i * 7) % 13) - 6.0f, want[i % 10] += in[i];
  void *args[2] = {in, out};
  st = tc_kernel_run(k, args, NULL, NULL);
  if (st != TC_ERR_NO_DEVICE) {
    TC_CHECK(st == TC_OK, "run: %s", tc_kernel_error(k));
    for (int j = 0; j < 10 && st == TC_OK; j++) TC_CHECK(out[j] == want[j], "column %d: %g, want %g", j, out[j], want[j]);
  }
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* Fusions built alike hash alike; a transposed operand or another
 * epilogue op hashes differently. */
static void test_hash(void) {
  char h[4][33];
  for (int v = 0; v < 4; v++) {
    tc_fusion *f = tc_fusion_new();
    int64_t s[2] = {16, 16};
    tc_tensor *a = tc_input(f, TC_F16, 2, s), *b = tc_input(f, TC_F16, 2, s);
    int perm[2] = {1, 0};
    tc_tensor *y = tc_matmul(f, a, v == 2 ? tc_permute(f, b, perm) : b);
    if (v == 3) y = tc_unary(f, TC_SILU, y);
    tc_add_output(f, y);
    tc_schedule_auto(f, TC_TARGET_OPENCL, NULL);
    tc_fusion_hash(f, TC_TARGET_OPENCL, NULL, "mm", h[v]);
    tc_fusion_free(f);
  }
  TC_CHECK(strcmp(h[0], h[1]) == 0, "same fusion, hashes %s %s", h[0], h[1]);
  TC_CHECK(strcmp(h[0], h[2]) != 0 && strcmp(h[0], h[3]) != 0 && strcmp(h[2], h[3]) != 0, "hashes collide");
}

int main(int argc, char **argv) {
  for (int i = 1; i + 1 < argc; i++) {
    if (strcmp(argv[i], "--cases") == 0) g_cases = atol(argv[++i]);
    else if (strcmp(argv[i], "--seed") == 0) g_state = strtoull(argv[++i], NULL, 0) | 1;
  }
  TC_RUN(test_shapes);
  TC_RUN(test_misuse);
  TC_RUN(test_hash);
  TC_RUN(test_register_tile_of_a_reduction);
  TC_RUN(test_epilogue_in_one_kernel);
  TC_RUN(test_shared_memory_limit);
  TC_RUN(test_listed_shapes);
  TC_RUN(test_extent_one_tiles);
  TC_RUN(test_random_fusions);
  TC_RUN(test_random_tiles);
  TC_RUN(test_epilogue_reductions);
  TC_RUN(test_operand_prologues);
  TC_RUN(test_random_mma_tiles);
  TC_RUN(test_random_mfma_tiles);
  TC_RUN(test_random_wgmma_tiles);
  TC_RUN(test_device_builds);
  TC_MAIN_END();
}
