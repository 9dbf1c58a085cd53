/* test_matmul_mma.c - the matmul whose products are mma.sync m16n8k16
 * (tc_matmul_tiles.macro = TC_MACRO_MMA_M16N8K16): f16 and bf16 operands,
 * with and without a fused epilogue (bias, ReLU), several warp tilings,
 * run on OpenCL (PoCL, through the emulation of the instruction, whose
 * lane layouts are written independently of the lowering's) against a
 * plain C loop, with the fragments loaded by ldmatrix and by scalar
 * loads; the CUDA kernel holds the instruction and builds with
 * NVRTC for sm_80; edges the tiles do not fill (zeros in the fragments);
 * the refusals (f32 operands, HIP, CUDA before sm_80, tiles that are not
 * multiples of the macro). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/test_hooks.h"
#include "matmul_test_util.h"
#include "test.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

static uint64_t g_state = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void) {
  g_state ^= g_state << 13, g_state ^= g_state >> 7, g_state ^= g_state << 17;
  return g_state;
}

/* n values of t in [-2, 2] (exact in t), and the same values as doubles */
static uint16_t *values(tc_dtype t, int64_t n, double *v) {
  uint16_t *p = malloc((size_t)n * 2);
  for (int64_t i = 0; i < n; i++) {
    float x = (float)((int64_t)(rnd() % 4001) - 2000) / 1000.0f;
    p[i] = t == TC_F16 ? tc_f32_to_f16(x) : tc_f32_to_bf16(x);
    v[i] = t == TC_F16 ? tc_f16_to_f32(p[i]) : tc_bf16_to_f32(p[i]);
  }
  return p;
}

typedef struct mcase {
  int64_t m, n, k;
  tc_dtype t;
  int epilogue; /* 1: relu(A @ B + bias) */
  tc_matmul_tiles tiles;
} mcase;

/* y = A @ B (+ bias, relu); bias_out the bias input or NULL */
static tc_tensor *build(tc_fusion *f, const mcase *c, tc_tensor **a, tc_tensor **b,
                        tc_tensor **bias) {
  int64_t sa[2] = {c->m, c->k}, sb[2] = {c->k, c->n};
  *a = tc_input(f, c->t, 2, sa), *b = tc_input(f, c->t, 2, sb);
  tc_tensor *y = tc_matmul(f, *a, *b);
  *bias = NULL;
  if (c->epilogue && y) {
    bool is_new[2] = {true, false};
    *bias = tc_input(f, TC_F32, 1, &c->n);
    y = tc_unary(f, TC_RELU, tc_binary(f, TC_ADD, y, tc_broadcast(f, *bias, 2, is_new)));
  }
  return y;
}

/* Runs the case on OpenCL against the plain C loop and returns the
 * mismatches (up to 4; -1: not run); they are failures unless
 * fault_wanted, the injected fault (test_faults) that must show. */
static int run_case_fault(const mcase *c, int fault_wanted, const char *name);

static void run_case(const mcase *c) { run_case_fault(c, 0, "mm"); }

/* name: the kernel's, so that a kernel made under a test hook has its own
 * cache key */
static int run_case_fault(const mcase *c, int fault_wanted, const char *name) {
  char desc[128];
  snprintf(desc, sizeof desc, "%lldx%lldx%lld %s%s tiles %lldx%lldx%lld/%lldx%lld",
           (long long)c->m, (long long)c->n, (long long)c->k, tc_dtype_name(c->t),
           c->epilogue ? " bias,relu" : "", (long long)c->tiles.bm, (long long)c->tiles.bn,
           (long long)c->tiles.bk, (long long)c->tiles.tm, (long long)c->tiles.tn);
  tc_fusion *f = tc_fusion_new();
  tc_tensor *ta, *tb, *tbias;
  tc_tensor *y = build(f, c, &ta, &tb, &tbias);
  if (!y) {
    TC_CHECK(0, "%s: %s", desc, tc_fusion_error(f));
    tc_fusion_free(f);
    return -1;
  }
  OK(f, tc_add_output(f, y));
  OK(f, tc_schedule_matmul(f, TC_TARGET_OPENCL, NULL, &c->tiles));
  TC_CHECK(strstr(tc_fusion_schedule_note(f), "mma.sync m16n8k16") != NULL, "%s: note %s", desc,
           tc_fusion_schedule_note(f));
  tc_compile_options opt = {TC_TARGET_OPENCL, NULL, name};
  tc_status st;
  tc_kernel *k = tc_compile(f, &opt, &st);
  TC_CHECK(k != NULL, "%s: %s", desc, tc_fusion_error(f));
  if (!k) {
    tc_fusion_free(f);
    return -1;
  }
  /* one emulated instruction per 16 x 8 tile, no scalar products */
  const char *src = tc_kernel_source(k);
  TC_CHECK(strstr(src, "tc_mma_emu(") != NULL, "%s: no mma in\n%s", desc, src);
  /* the fragments by ldmatrix (the tiles' rows are contiguous K / N), or
   * by scalar loads under the hook or where an extent of 1 makes a tile
   * one element read by every lane */
  bool scalar = tc_test_hooks_get()->mma_scalar_fragments || c->m == 1 || c->n == 1 || c->k == 1;
  if (!fault_wanted)
    TC_CHECK((strstr(src, "ldmatrix.x4 */") != NULL) == !scalar, "%s: %s ldmatrix", desc,
             scalar ? "with" : "without");
  int64_t m = c->m, n = c->n, kk = c->k;
  double *va = malloc((size_t)(m * kk) * sizeof(double)), *vb = malloc((size_t)(kk * n) * sizeof(double));
  double bias[512];
  uint16_t *a = values(c->t, m * kk, va), *b = values(c->t, kk * n, vb);
  float fbias[512];
  for (int64_t j = 0; j < n && c->epilogue; j++)
    fbias[j] = (float)((int64_t)(rnd() % 41) - 20) / 8.0f, bias[j] = fbias[j];
  float *out = malloc((size_t)(m * n) * sizeof(float));
  memset(out, 0xff, (size_t)(m * n) * sizeof(float)); /* NaNs: an element never written shows */
  void *args[4] = {a, b, c->epilogue ? (void *)fbias : (void *)out, out};
  st = tc_kernel_run(k, args, NULL, NULL);
  int bad = -1;
  if (st == TC_ERR_NO_DEVICE) {
    printf("  skip run: %s\n", tc_kernel_error(k));
  } else {
    TC_CHECK(st == TC_OK, "%s: run: %s", desc, tc_kernel_error(k));
    bad = matmul_mismatches(desc, out, va, vb, c->epilogue ? bias : NULL, m, n, kk, fault_wanted);
  }
  free(va), free(vb), free(a), free(b), free(out);
  tc_kernel_free(k);
  tc_fusion_free(f);
  return bad;
}

#define MMA(bm, bn, bk, tm, tn) {bm, bn, bk, tm, tn, TC_MACRO_MMA_M16N8K16}

/* One warp of one 16 x 8 tile, the smallest kernel: each lane's four
 * accumulators land at the PTX ISA's (row, column) or the plain C loop
 * disagrees. */
static void test_one_tile(void) {
  mcase c = {16, 8, 16, TC_F16, 0, MMA(16, 8, 16, 16, 8)};
  run_case(&c);
  c.t = TC_BF16;
  run_case(&c);
}

/* Several warps, several 16 x 8 tiles per warp, several K tiles and K
 * steps, more than one block; f16 and bf16, with and without the
 * epilogue.  Then edges the tiles do not fill: the fragment loads past
 * M, N or K give 0 (the instruction itself is never predicated; a K tile
 * past K still holds the previous tile's values in shared memory), and
 * the store skips the rows and columns past the result; extents of 1 and
 * primes. */
static void test_shapes(void) {
  static const mcase cs[] = {
      {64, 64, 64, TC_F16, 0, MMA(32, 32, 32, 16, 16)},
      {64, 64, 64, TC_BF16, 1, MMA(32, 32, 32, 16, 16)},
      {32, 48, 48, TC_F16, 1, MMA(32, 16, 16, 32, 8)},
      {128, 64, 32, TC_BF16, 0, MMA(64, 32, 32, 32, 16)},
      {96, 40, 80, TC_F16, 1, MMA(32, 8, 16, 16, 8)},
      /* edges */
      {1, 1, 1, TC_F16, 0, MMA(16, 8, 16, 16, 8)},
      {33, 20, 24, TC_BF16, 1, MMA(32, 16, 16, 16, 8)},
      {67, 97, 131, TC_F16, 1, MMA(32, 32, 32, 16, 16)},
      {5, 130, 17, TC_BF16, 0, MMA(16, 64, 16, 16, 32)},
      {100, 3, 40, TC_F16, 1, MMA(64, 8, 32, 32, 8)},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) run_case(&cs[i]);
}

static void expect_refusal(tc_dtype t, int64_t m, int64_t n, int64_t k, tc_matmul_tiles tl,
                           tc_target target, const char *words) {
  tc_fusion *f = tc_fusion_new();
  mcase c = {m, n, k, t, 0, tl};
  tc_tensor *a, *b, *bias;
  tc_tensor *y = build(f, &c, &a, &b, &bias);
  OK(f, tc_add_output(f, y));
  tc_status st = tc_schedule_matmul(f, target, NULL, &tl);
  TC_CHECK(st != TC_OK, "accepted; wanted \"%s\"", words);
  TC_CHECK(strstr(tc_fusion_error(f), words) != NULL, "message \"%s\" lacks \"%s\"",
           tc_fusion_error(f), words);
  tc_fusion_free(f);
}

static void test_refusals(void) {
  tc_matmul_tiles tl = MMA(32, 32, 16, 16, 8);
  expect_refusal(TC_F32, 32, 32, 16, tl, TC_TARGET_OPENCL, "multiplies f16 or bf16 operands, not f32");
  expect_refusal(TC_F16, 32, 32, 16, tl, TC_TARGET_HIP, "mma.sync m16n8k16 is an NVIDIA instruction");
  tc_matmul_tiles odd = MMA(32, 24, 16, 16, 12);
  expect_refusal(TC_F16, 32, 24, 16, odd, TC_TARGET_OPENCL, "multiple of 16 x 8");
  tc_matmul_tiles bad = tl;
  bad.macro = 7;
  expect_refusal(TC_F16, 32, 32, 16, bad, TC_TARGET_OPENCL, "unknown macro 7");
}

/* The case's fusion (*fp) scheduled and compiled for CUDA arch. */
static tc_kernel *cuda_kernel(const mcase *c, const char *arch, tc_fusion **fp) {
  tc_fusion *f = *fp = tc_fusion_new();
  tc_tensor *a, *b, *bias;
  OK(f, tc_add_output(f, build(f, c, &a, &b, &bias)));
  OK(f, tc_schedule_matmul(f, TC_TARGET_CUDA, arch, &c->tiles));
  tc_compile_options o = {TC_TARGET_CUDA, arch, "mm"};
  tc_status st;
  return tc_compile(f, &o, &st);
}

/* The scalar 16-bit fragment loads (the form for shared layouts that
 * ldmatrix cannot read) on the same shapes, edges included. */
static void test_scalar_fragments(void) {
  static const mcase cs[] = {
      {64, 64, 64, TC_BF16, 1, MMA(32, 32, 32, 16, 16)},
      {67, 97, 131, TC_F16, 1, MMA(32, 32, 32, 16, 16)},
      {5, 130, 17, TC_BF16, 0, MMA(16, 64, 16, 16, 32)},
  };
  tc_test_hooks h = {0};
  h.mma_scalar_fragments = 1;
  tc_test_hooks_set(&h);
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) run_case_fault(&cs[i], 0, "mma_scalar");
  tc_test_hooks_set(NULL);
}

/* Each wrong layout injected into the lowering (A registers 1 and 2
 * swapped, B register halves swapped, a lane's accumulator columns
 * swapped) gives wrong results on the OpenCL emulation, whose layouts are
 * its own: the right results above are not an accident of symmetric
 * data or of two wrongs cancelling. */
static void test_faults(void) {
  mcase c = {32, 16, 32, TC_F16, 0, MMA(32, 16, 32, 16, 8)};
  for (int fault = 1; fault <= 3; fault++) {
    tc_test_hooks h = {0};
    h.mma_lower_fault = fault;
    tc_test_hooks_set(&h);
    char name[32];
    snprintf(name, sizeof name, "mma_fault%d", fault); /* its own cache key */
    int bad = run_case_fault(&c, fault, name);
    tc_test_hooks_set(NULL);
    TC_CHECK(bad != 0, "fault %d: the results still match the plain C loop", fault); /* -1: no device */
  }
}

/* CUDA before sm_80 has no mma.sync m16n8k16 for f16/bf16: refused when
 * compiling, with the arch. */
static void test_arch(void) {
  mcase c = {32, 32, 16, TC_F16, 0, MMA(32, 32, 16, 16, 8)};
  tc_fusion *f;
  tc_kernel *k = cuda_kernel(&c, "sm_75", &f);
  TC_CHECK(k == NULL, "compiled for sm_75");
  TC_CHECK(strstr(tc_fusion_error(f), "needs arch sm_80 or later, but the arch is sm_75") != NULL,
           "%s", tc_fusion_error(f));
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* The CUDA kernel calls the instruction (no emulation) and builds with
 * NVRTC for sm_80, f16 on whole tiles and bf16 with edges (no GPU needed;
 * skipped where NVRTC cannot be loaded). */
static void test_cuda_build(void) {
  for (int dt = 0; dt < 2; dt++) {
    mcase c = {64, 64, 32, TC_F16, 1, MMA(32, 32, 16, 16, 16)};
    if (dt) c = (mcase){67, 97, 33, TC_BF16, 1, MMA(32, 32, 16, 16, 16)}; /* edges */
    tc_fusion *f;
    tc_kernel *k = cuda_kernel(&c, "sm_80", &f);
    TC_CHECK(k != NULL, "%s", tc_fusion_error(f));
    if (k) {
      const char *src = tc_kernel_source(k);
      TC_CHECK(strstr(src, dt ? "tc_mma_bf16(" : "tc_mma_f16(") != NULL, "no call in\n%s", src);
      TC_CHECK(strstr(src, "mma.sync.aligned.m16n8k16.row.col.f32") != NULL, "no instruction");
      TC_CHECK(strstr(src, "tc_mma_emu") == NULL, "the emulation in a CUDA kernel");
      TC_CHECK(strstr(src, "ldmatrix.sync.aligned.m8n8.x4.shared.b16") != NULL &&
                   strstr(src, "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16") != NULL,
               "the fragments are not loaded by ldmatrix");
      tc_status st = tc_kernel_build(k, NULL);
      if (st == TC_ERR_UNSUPPORTED) {
        printf("  skip NVRTC build: %s\n", tc_kernel_error(k));
      } else {
        TC_CHECK(st == TC_OK, "does not build: %s", tc_kernel_error(k));
      }
    }
    tc_kernel_free(k);
    tc_fusion_free(f);
  }
}

int main(void) {
  TC_RUN(test_refusals);
  TC_RUN(test_one_tile);
  TC_RUN(test_shapes);
  TC_RUN(test_scalar_fragments);
  TC_RUN(test_faults);
  TC_RUN(test_arch);
  TC_RUN(test_cuda_build);
  TC_MAIN_END();
}
