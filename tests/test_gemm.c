/* test_gemm.c - the gridwise GEMM generator: kernels run on OpenCL (PoCL)
 * against a plain C reference (double accumulation), for several parameter
 * sets, M/N/K not multiples of the tiles, both loop tails (K/KPB odd and
 * even, and K < 2*KPB), G > 1, transposed and strided layouts, f16/bf16,
 * accumulate mode and alpha; the kernel's structure (barriers, loop
 * counts); errors; and the CUDA source through NVRTC (and on a CUDA device
 * when there is one).
 *
 * Buffers have extra elements around the tensors filled with NaN (inputs)
 * or a sentinel (C): a padding read that is not predicated off turns the
 * result into NaN, a store outside C changes a sentinel. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/gemm.h"
#include "runtime/runtime.h"
#include "test.h"
#include "device_test_util.h"

static tc_cl *cl;
static int cuda_ok;

static int has(const char *s, const char *part) { return s && strstr(s, part) != NULL; }

static int count(const char *s, const char *part) {
  int n = 0;
  size_t len = strlen(part);
  for (const char *c = strstr(s, part); c; c = strstr(c + len, part)) n++;
  return n;
}

typedef struct gcase {
  const char *cfg;                 /* perf config, NULL = the heuristic's default */
  int64_t g, m, n, k;
  int a_trans, b_trans;            /* A stored [G][M][K], B stored [G][N][K] */
  tc_dtype ab, c;                  /* A/B dtype, C dtype */
  int accumulate;
  float alpha;
  int64_t a_extra, b_extra, c_extra; /* extra elements per row (NaN / sentinel) */
  int64_t k_extra;                 /* extra NaN rows after K (non-transposed A, B) */
} gcase;

static uint32_t rng = 12345;
static float frand(void) {
  rng = rng * 1664525u + 1013904223u;
  return (float)((rng >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void put(void *buf, tc_dtype t, int64_t i, float v) {
  if (t == TC_F32) ((float *)buf)[i] = v;
  else if (t == TC_F16) ((uint16_t *)buf)[i] = tc_f32_to_f16(v);
  else ((uint16_t *)buf)[i] = tc_f32_to_bf16(v);
}

static float get(const void *buf, tc_dtype t, int64_t i) {
  if (t == TC_F32) return ((const float *)buf)[i];
  if (t == TC_F16) return tc_f16_to_f32(((const uint16_t *)buf)[i]);
  return tc_bf16_to_f32(((const uint16_t *)buf)[i]);
}

/* An operand [G][K][X] in memory: non-transposed [G][K + k_extra][X +
 * extra], transposed [G][X][K + extra].  Fills it (NaN outside the tensor)
 * and returns its view and its element count. */
static tc_view *operand(int64_t g, int64_t k, int64_t x, int trans, int64_t extra, int64_t kx,
                        tc_dtype t, void **buf, int64_t *elems) {
  int64_t ext[3] = {g, k, x}, st[3];
  int64_t rows, ld;
  if (!trans) {
    rows = k + kx, ld = x + extra;
    st[0] = rows * ld, st[1] = ld, st[2] = 1;
  } else {
    rows = x, ld = k + extra;
    st[0] = rows * ld, st[1] = 1, st[2] = ld;
  }
  *elems = g * rows * ld;
  *buf = malloc((size_t)*elems * tc_dtype_size(t));
  for (int64_t i = 0; i < *elems; i++) put(*buf, t, i, NAN);
  for (int64_t a = 0; a < g; a++)
    for (int64_t b = 0; b < k; b++)
      for (int64_t c = 0; c < x; c++) put(*buf, t, a * st[0] + b * st[1] + c * st[2], frand());
  const char *names[3] = {"g", "k", "x"};
  return tc_view_new(3, ext, st, names);
}

/* Generates, runs and checks one case on OpenCL (and CUDA when present).
 * Returns the kernel source (caller frees) for structural checks. */
static char *run_case(const gcase *tc, tc_target also_cuda_check) {
  int64_t G = tc->g, M = tc->m, N = tc->n, K = tc->k;
  void *a, *b;
  int64_t na, nb;
  tc_view *va = operand(G, K, M, tc->a_trans, tc->a_extra, tc->k_extra, tc->ab, &a, &na);
  tc_view *vb = operand(G, K, N, tc->b_trans, tc->b_extra, tc->k_extra, tc->ab, &b, &nb);
  int64_t ldc = N + tc->c_extra, nc = G * M * ldc;
  int64_t cext[3] = {G, M, N}, cst[3] = {M * ldc, ldc, 1};
  tc_view *vc = tc_view_new(3, cext, cst, NULL);
  void *c = malloc((size_t)nc * tc_dtype_size(tc->c));
  void *c0 = malloc((size_t)nc * tc_dtype_size(tc->c));
  for (int64_t i = 0; i < nc; i++) put(c, tc->c, i, 1234.5f); /* sentinel */
  for (int64_t g = 0; g < G; g++)
    for (int64_t m = 0; m < M; m++)
      for (int64_t n = 0; n < N; n++) put(c, tc->c, g * cst[0] + m * ldc + n, frand());
  memcpy(c0, c, (size_t)nc * tc_dtype_size(tc->c));

  tc_gemm_problem pb = {va, vb, vc, tc->ab, tc->ab, tc->c, tc->accumulate, tc->alpha};
  tc_gemm_shape s = tc_gemm_problem_shape(&pb);
  tc_gemm_params p;
  char cfgtext[64];
  TC_STR_LOCAL(err);
  char *src = NULL;
  int ok = tc->cfg ? tc_gemm_params_parse(tc->cfg, &p, &err) == 0 : 1;
  if (ok && tc->cfg) ok = tc_gemm_params_derive(&p, &s, &err) == 0;
  if (ok && !tc->cfg) ok = tc_gemm_params_default(&s, &p, &err) == 0;
  TC_CHECK(ok, "%s: %s", tc->cfg ? tc->cfg : "default", tc_str_cstr(&err));
  tc_gemm_kernel kern;
  memset(&kern, 0, sizeof kern);
  if (ok) {
    tc_gemm_params_format(&p, cfgtext, sizeof cfgtext);
    tc_status st = tc_gemm_generate(&pb, &p, TC_TARGET_OPENCL, "gemm_test", &kern, &err);
    TC_CHECK(st == TC_OK, "%s: generate: %s", cfgtext, tc_str_cstr(&err));
    ok = st == TC_OK;
  }
  if (ok) {
    TC_CHECK_EQ_INT(kern.grid[0], G * ((M + p.m_per_block - 1) / p.m_per_block) *
                                      ((N + p.n_per_block - 1) / p.n_per_block));
    TC_CHECK_EQ_INT(kern.block[0], p.block_size);
    TC_CHECK_EQ_INT(kern.smem_bytes, 2 * p.k_per_block * (p.m_per_block + p.n_per_block) * 4);
    tc_rt_buffer bufs[3] = {{a, (size_t)na * tc_dtype_size(tc->ab), 0},
                            {b, (size_t)nb * tc_dtype_size(tc->ab), 0},
                            {c, (size_t)nc * tc_dtype_size(tc->c), 1}};
    tc_launch L = {{kern.grid[0], kern.grid[1], kern.grid[2]},
                   {kern.block[0], kern.block[1], kern.block[2]}, 0};
    tc_str e;
    tc_str_init(&e);
    tc_status st = tc_cl_run(cl, kern.source, kern.name, bufs, 3, &L, NULL, &e);
    TC_CHECK(st == TC_OK, "%s: run: %s", cfgtext, tc_str_cstr(&e));
    tc_str_free(&e);
    int bad = 0;
    for (int64_t g = 0; g < G && bad < 5; g++)
      for (int64_t m = 0; m < M && bad < 5; m++)
        for (int64_t n = 0; n < N && bad < 5; n++) {
          double acc = 0, mag = 0;
          for (int64_t k = 0; k < K; k++) {
            int64_t ia = tc->a_trans ? g * M * (K + tc->a_extra) + m * (K + tc->a_extra) + k
                                     : (g * (K + tc->k_extra) + k) * (M + tc->a_extra) + m;
            int64_t ib = tc->b_trans ? g * N * (K + tc->b_extra) + n * (K + tc->b_extra) + k
                                     : (g * (K + tc->k_extra) + k) * (N + tc->b_extra) + n;
            double x = get(a, tc->ab, ia), y = get(b, tc->ab, ib);
            acc += x * y, mag += fabs(x * y);
          }
          int64_t ic = g * cst[0] + m * ldc + n;
          double want = tc->alpha * acc + (tc->accumulate ? get(c0, tc->c, ic) : 0.0);
          double got = get(c, tc->c, ic);
          double tol = 1e-5 * (1 + mag) + (tc->c == TC_F32 ? 1e-5 : 8e-3) * fabs(want) + 1e-6;
          if (!(fabs(got - want) <= tol)) {
            bad++;
            TC_CHECK(0, "%s G%lld M%lld N%lld K%lld: C[%lld][%lld][%lld] = %g, expected %g",
                     cfgtext, (long long)G, (long long)M, (long long)N, (long long)K, (long long)g,
                     (long long)m, (long long)n, got, want);
          }
        }
    for (int64_t g = 0; g < G && bad < 5; g++)
      for (int64_t m = 0; m < M && bad < 5; m++)
        for (int64_t n = N; n < ldc && bad < 5; n++)
          if (get(c, tc->c, g * cst[0] + m * ldc + n) != get(c0, tc->c, g * cst[0] + m * ldc + n)) {
            bad++;
            TC_CHECK(0, "%s: store outside C at [%lld][%lld][%lld]", cfgtext, (long long)g,
                     (long long)m, (long long)n);
          }
  }
  if (ok && cuda_ok && also_cuda_check == TC_TARGET_CUDA) {
    /* the same problem on a CUDA device */
    tc_gemm_kernel ck;
    tc_status st = tc_gemm_generate(&pb, &p, TC_TARGET_CUDA, "gemm_test", &ck, &err);
    TC_CHECK(st == TC_OK, "cuda generate: %s", tc_str_cstr(&err));
    void *c2 = malloc((size_t)nc * tc_dtype_size(tc->c));
    memcpy(c2, c0, (size_t)nc * tc_dtype_size(tc->c));
    tc_rt_buffer bufs[3] = {{a, (size_t)na * tc_dtype_size(tc->ab), 0},
                            {b, (size_t)nb * tc_dtype_size(tc->ab), 0},
                            {c2, (size_t)nc * tc_dtype_size(tc->c), 1}};
    tc_launch L = {{ck.grid[0], ck.grid[1], ck.grid[2]}, {ck.block[0], ck.block[1], ck.block[2]}, 0};
    tc_str e;
    tc_str_init(&e);
    if (st == TC_OK) {
      st = tc_cuda_run(ck.source, ck.name, NULL, bufs, 3, &L, NULL, &e);
      TC_CHECK(st == TC_OK, "cuda run: %s", tc_str_cstr(&e));
    }
    /* CUDA and OpenCL sum in the same order: results agree closely */
    int bad = 0;
    for (int64_t i = 0; st == TC_OK && i < nc && bad < 5; i++) {
      double x = get(c, tc->c, i), y = get(c2, tc->c, i);
      if (!(fabs(x - y) <= 1e-4 * (1 + fabs(x)))) {
        bad++;
        TC_CHECK(0, "cuda differs at %lld: %g vs %g", (long long)i, y, x);
      }
    }
    tc_str_free(&e);
    free(c2);
    tc_gemm_kernel_free(&ck);
  }
  src = kern.source;
  kern.source = NULL;
  tc_gemm_kernel_free(&kern);
  tc_view_free(va);
  tc_view_free(vb);
  tc_view_free(vc);
  free(a);
  free(b);
  free(c);
  free(c0);
  return src;
}

#define NEED_CL() \
  do {            \
    if (!cl) TC_SKIP("no OpenCL device"); \
  } while (0)

static gcase base(const char *cfg, int64_t g, int64_t m, int64_t n, int64_t k) {
  gcase c;
  memset(&c, 0, sizeof c);
  c.cfg = cfg, c.g = g, c.m = m, c.n = n, c.k = k;
  c.ab = c.c = TC_F32;
  c.alpha = 1.0f;
  return c;
}

/* Tiles fit exactly; K/KPB = 8 (even): 3 loop iterations and the two-tile
 * tail: 2 barriers per iteration + 2 in the tail. */
static void test_exact_even_tail(void) {
  NEED_CL();
  gcase c = base("64,32,32,8,2,2", 1, 64, 64, 64);
  char *src = run_case(&c, TC_TARGET_CUDA);
  TC_REQUIRE(src, "no source");
  TC_CHECK(has(src, "for (int iter = 0; iter < 3; ++iter)"), "loop count");
  TC_CHECK_EQ_INT(count(src, "barrier("), 2 + 2);
  TC_CHECK(has(src, "two tiles left"), "tail");
  TC_CHECK(!has(strstr(src, "__kernel"), " ? "), "predicates where nothing is padded");
  free(src);
}

/* M, N, K not multiples of the tiles; K/KPB = ceil(37/8) = 5 (odd): 2
 * iterations and the one-tile tail (one barrier). */
static void test_padded_odd_tail(void) {
  NEED_CL();
  gcase c = base("64,64,32,8,4,2", 1, 100, 70, 37);
  c.k_extra = 3, c.a_extra = 5, c.b_extra = 2, c.c_extra = 3;
  char *src = run_case(&c, TC_TARGET_CUDA);
  TC_REQUIRE(src, "no source");
  TC_CHECK(has(src, "for (int iter = 0; iter < 2; ++iter)"), "loop count");
  TC_CHECK_EQ_INT(count(src, "barrier("), 2 + 1);
  TC_CHECK(has(src, "one tile left"), "tail");
  free(src);
}

/* K < 2*KPB: one tile (no loop, one-tile tail) and two tiles (no loop,
 * two-tile tail). */
static void test_short_k(void) {
  NEED_CL();
  gcase c = base("64,32,64,8,2,4", 1, 33, 65, 5);
  c.k_extra = 2;
  char *src = run_case(&c, TC_TARGET_CUDA);
  TC_REQUIRE(src, "no source");
  TC_CHECK(!has(src, "for (int iter"), "a main loop for one tile");
  TC_CHECK_EQ_INT(count(src, "barrier("), 1);
  free(src);
  c.k = 12;
  src = run_case(&c, TC_TARGET_CUDA);
  TC_REQUIRE(src, "no source");
  TC_CHECK(!has(src, "for (int iter"), "a main loop for two tiles");
  TC_CHECK_EQ_INT(count(src, "barrier("), 2);
  free(src);
}

/* rocMLIR's example 256,128,128,16,4,4, padded in M and N, K/KPB = 3. */
static void test_rocmlir_example_params(void) {
  NEED_CL();
  gcase c = base("256,128,128,16,4,4", 1, 130, 200, 48);
  c.c_extra = 1;
  free(run_case(&c, TC_TARGET_CUDA));
}

/* G = 3 batches, A and B transposed in memory (K contiguous), strided. */
static void test_batched_transposed(void) {
  NEED_CL();
  gcase c = base("128,64,64,4,2,4", 3, 50, 64, 21);
  c.a_trans = c.b_trans = 1;
  c.a_extra = 3, c.b_extra = 1;
  free(run_case(&c, TC_TARGET_CUDA));
}

/* f16 inputs (vload_half) and output, B transposed; bf16 inputs with an
 * f32 output. */
static void test_half_types(void) {
  NEED_CL();
  gcase c = base("64,64,32,16,4,2", 2, 64, 31, 40);
  c.ab = c.c = TC_F16;
  c.b_trans = 1;
  c.b_extra = 2, c.c_extra = 2;
  char *src = run_case(&c, TC_TARGET_CUDA);
  TC_REQUIRE(src, "no source");
  TC_CHECK(has(src, "vload_half") && has(src, "vstore_half_rte("), "f16 through the dialect");
  free(src);
  c = base("64,32,32,8,2,2", 1, 40, 48, 30);
  c.ab = TC_BF16;
  c.k_extra = 2;
  free(run_case(&c, TC_TARGET_CUDA));
}

/* C = alpha * A*B + C. */
static void test_accumulate_alpha(void) {
  NEED_CL();
  gcase c = base("64,32,32,4,2,2", 2, 45, 33, 17);
  c.accumulate = 1;
  c.alpha = 0.5f;
  c.c_extra = 2;
  char *src = run_case(&c, TC_TARGET_CUDA);
  TC_REQUIRE(src, "no source");
  TC_CHECK(has(src, "0.5 * c_acc[0] + C["), "accumulate/alpha text");
  free(src);
}

/* The heuristic's own choice for a shape, with C = -2 * A*B. */
static void test_default_params(void) {
  NEED_CL();
  gcase c = base(NULL, 1, 96, 80, 24);
  c.alpha = -2.0f;
  free(run_case(&c, TC_TARGET_CUDA));
}

/* ---- errors ------------------------------------------------------------- */

static void test_errors(void) {
  int64_t ea[3] = {1, 16, 32}, eb[3] = {1, 16, 32}, ec[3] = {1, 32, 32}, bad[3] = {1, 17, 32};
  tc_view *a = tc_view_new(3, ea, NULL, NULL), *b = tc_view_new(3, eb, NULL, NULL);
  tc_view *c = tc_view_new(3, ec, NULL, NULL), *x = tc_view_new(3, bad, NULL, NULL);
  int64_t e2[2] = {16, 32};
  tc_view *two = tc_view_new(2, e2, NULL, NULL);
  tc_gemm_problem pb = {a, b, c, TC_F32, TC_F32, TC_F32, 0, 1.0f};
  tc_gemm_shape s = tc_gemm_problem_shape(&pb);
  TC_CHECK_EQ_INT(s.g, 1);
  TC_CHECK_EQ_INT(s.k, 16);
  TC_CHECK_EQ_INT(s.m, 32);
  TC_CHECK_EQ_INT(s.n, 32);
  tc_gemm_params p;
  TC_STR_LOCAL(err);
  TC_REQUIRE(tc_gemm_params_parse("64,32,32,8,2,2", &p, &err) == 0, "%s", tc_str_cstr(&err));
  TC_REQUIRE(tc_gemm_params_derive(&p, &s, &err) == 0, "%s", tc_str_cstr(&err));
  tc_gemm_kernel k;
  tc_status st = tc_gemm_generate(&pb, &p, TC_TARGET_OPENCL, "ok_name", &k, &err);
  TC_CHECK(st == TC_OK, "%s", tc_str_cstr(&err));
  tc_gemm_kernel_free(&k);
  TC_CHECK(k.source == NULL, "free left the source");

  struct {
    tc_gemm_problem pb;
    const char *name;
    tc_target target;
    tc_status st;
    const char *msg;
  } cases[] = {
      {{a, x, c, TC_F32, TC_F32, TC_F32, 0, 1}, "k", TC_TARGET_OPENCL, TC_ERR_ARGUMENT,
       "K differs between A (16) and B (17)"},
      {{a, b, a, TC_F32, TC_F32, TC_F32, 0, 1}, "k", TC_TARGET_OPENCL, TC_ERR_ARGUMENT,
       "M differs between A (32) and C (16)"},
      {{a, b, two, TC_F32, TC_F32, TC_F32, 0, 1}, "k", TC_TARGET_OPENCL, TC_ERR_ARGUMENT,
       "the view of C must have 3 upper dims [G, M, N] (has 2)"},
      {{NULL, b, c, TC_F32, TC_F32, TC_F32, 0, 1}, "k", TC_TARGET_OPENCL, TC_ERR_ARGUMENT,
       "the view of A is missing"},
      {{a, b, c, TC_I32, TC_F32, TC_F32, 0, 1}, "k", TC_TARGET_OPENCL, TC_ERR_UNSUPPORTED,
       "A has dtype i32; only f32, f16 and bf16 are supported"},
      {{a, b, c, TC_F32, TC_F32, TC_F32, 0, NAN}, "k", TC_TARGET_OPENCL, TC_ERR_ARGUMENT,
       "alpha must be finite"},
      {{a, b, c, TC_F32, TC_F32, TC_F32, 0, 1}, "9lives", TC_TARGET_OPENCL, TC_ERR_ARGUMENT,
       "kernel name \"9lives\" must be a C identifier"},
      {{a, b, c, TC_F32, TC_F32, TC_F32, 0, 1}, "k", (tc_target)42, TC_ERR_UNSUPPORTED,
       "unknown target 42"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tc_str_clear(&err);
    memset(&k, 0x5a, sizeof k);
    st = tc_gemm_generate(&cases[i].pb, &p, cases[i].target, cases[i].name, &k, &err);
    TC_CHECK(st == cases[i].st, "case %zu: status %s, expected %s", i, tc_status_name(st),
             tc_status_name(cases[i].st));
    TC_CHECK(has(tc_str_cstr(&err), cases[i].msg), "case %zu: message \"%s\" lacks \"%s\"", i, tc_str_cstr(&err),
             cases[i].msg);
    TC_CHECK(k.source == NULL, "case %zu: source set on failure", i);
  }
  /* parameters that break a rule are rejected with the rule */
  tc_gemm_params q = p;
  q.m_level1 = 4;
  st = tc_gemm_generate(&pb, &q, TC_TARGET_OPENCL, NULL, &k, &err);
  TC_CHECK(st == TC_ERR_ARGUMENT, "status %s", tc_status_name(st));
  TC_CHECK(has(tc_str_cstr(&err), "invalid parameters: m_per_thread * m_level0 * m_level1 * 2 must equal "
                    "m_per_block (2*4*4*2 != 32)"),
           "%s", tc_str_cstr(&err));
  /* underived parameters */
  TC_REQUIRE(tc_gemm_params_parse("64,32,32,8,2,2", &q, &err) == 0, "%s", tc_str_cstr(&err));
  st = tc_gemm_generate(&pb, &q, TC_TARGET_OPENCL, NULL, &k, &err);
  TC_CHECK(st == TC_ERR_ARGUMENT && has(tc_str_cstr(&err), "must be positive"), "%s", tc_str_cstr(&err));
  tc_view_free(a);
  tc_view_free(b);
  tc_view_free(c);
  tc_view_free(x);
  tc_view_free(two);
}

/* The CUDA source compiles with NVRTC for every sm the project targets. */
static void test_cuda_compiles(void) {
  tc_str e;
  tc_str_init(&e);
  char *ptx = NULL;
  tc_status st = tc_cuda_compile("extern \"C\" __global__ void k() {}", "sm_80", &ptx, &e);
  free(ptx);
  if (st == TC_ERR_UNSUPPORTED) {
    tc_str_free(&e);
    TC_SKIP("NVRTC not available");
  }
  const char *cfgs[] = {"256,128,128,16,4,4", "64,32,32,8,2,2", "128,64,64,4,2,4"};
  const char *archs[] = {"sm_80", "sm_90a", "sm_80"};
  tc_dtype dts[] = {TC_F32, TC_F16, TC_BF16};
  for (int i = 0; i < 3; i++) {
    int64_t ea[3] = {2, 37, 100}, eb[3] = {2, 37, 70}, ec[3] = {2, 100, 70};
    tc_view *a = tc_view_new(3, ea, NULL, NULL), *b = tc_view_new(3, eb, NULL, NULL),
            *c = tc_view_new(3, ec, NULL, NULL);
    tc_gemm_problem pb = {a, b, c, dts[i], dts[i], dts[i], i == 2, i == 1 ? 0.25f : 1.0f};
    tc_gemm_shape s = tc_gemm_problem_shape(&pb);
    tc_gemm_params p;
    TC_STR_LOCAL(err);
    tc_gemm_kernel k;
    memset(&k, 0, sizeof k);
    int ok = tc_gemm_params_parse(cfgs[i], &p, &err) == 0 &&
             tc_gemm_params_derive(&p, &s, &err) == 0 &&
             tc_gemm_generate(&pb, &p, TC_TARGET_CUDA, "gemm_cu", &k, &err) == TC_OK;
    TC_CHECK(ok, "%s: %s", cfgs[i], tc_str_cstr(&err));
    if (ok) {
      TC_CHECK(has(k.source, "__launch_bounds__("), "no launch bounds");
      TC_CHECK(has(k.source, "__shared__ float a_lds["), "no shared A");
      TC_CHECK(has(k.source, "__syncthreads();"), "no barrier");
      tc_str_clear(&e);
      st = tc_cuda_compile(k.source, archs[i], &ptx, &e);
      TC_CHECK(st == TC_OK && ptx && has(ptx, ".entry gemm_cu"), "%s %s: %s", cfgs[i], archs[i],
               tc_str_cstr(&e));
      free(ptx);
      ptx = NULL;
    }
    tc_gemm_kernel_free(&k);
    tc_view_free(a);
    tc_view_free(b);
    tc_view_free(c);
  }
  tc_str_free(&e);
}

int main(void) {
  cl = open_cl_or_null();
  tc_str e;
  tc_str_init(&e);
  cuda_ok = tc_cuda_available(&e);
  tc_str_free(&e);
  double t0 = tc_now_seconds();
#define RUN(fn)                                                                       \
  do {                                                                                \
    double t1 = tc_now_seconds();                                                     \
    TC_RUN(fn);                                                                       \
    if (getenv("TILEC_TEST_VERBOSE")) printf("  %-26s %.2f s\n", #fn, tc_now_seconds() - t1); \
  } while (0)
  RUN(test_exact_even_tail);
  RUN(test_padded_odd_tail);
  RUN(test_short_k);
  RUN(test_rocmlir_example_params);
  RUN(test_batched_transposed);
  RUN(test_half_types);
  RUN(test_accumulate_alpha);
  RUN(test_default_params);
  RUN(test_errors);
  RUN(test_cuda_compiles);
  if (getenv("TILEC_TEST_VERBOSE")) printf("  gemm tests took %.1f s\n", tc_now_seconds() - t0);
  if (cl) tc_cl_close(cl);
  TC_MAIN_END();
}
