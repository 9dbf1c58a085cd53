/* test_gemm_vec.c - vector accesses of the gridwise GEMM's copies (issue
 * #3): global -> registers reads of a_/b_src_per_read elements, LDS
 * writes of a_/b_dst_per_write, C writes of c_per_write, each where the
 * padded view's vector width (tc_view_vector_width) allows it.  The
 * generated sources contain the vector forms (OpenCL vloadN / vstoreN,
 * CUDA and HIP reinterpret_casts), results match a plain C reference on
 * OpenCL for vectorized cases (padded M/N/K, vectors at the edge of the
 * tensor, f16/bf16, transposed layouts, accumulate, XDLOPS), a 1x1 NCHW
 * forward convolution gets vector reads and verifies, and NVRTC / hipcc
 * build the CUDA / HIP sources where they are present.
 *
 * Buffers hold NaN outside the tensors: a vector that reads padding
 * without being predicated off turns a result into NaN. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/conv.h"
#include "ops/gemm.h"
#include "runtime/runtime.h"
#include "test.h"
#include "device_test_util.h"

static tc_cl *cl;

static int has(const char *s, const char *part) { return s && strstr(s, part) != NULL; }

static uint32_t rng = 777;
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

typedef struct vcase {
  const char *cfg;      /* perf config */
  int64_t m, n, k;
  int a_trans, b_trans; /* A stored [M][K], B stored [N][K] */
  int64_t a_ld, b_ld, c_ld; /* leading dims (>= the contiguous extent) */
  tc_dtype ab, c;
  int accumulate;
  float alpha;
} vcase;

typedef struct operand {
  void *buf;
  int64_t elems;
  tc_view *v;
} operand;

/* [K][X] (trans: [X][K]) with leading dim ld, NaN outside. */
static operand make_operand(int64_t k, int64_t x, int trans, int64_t ld, tc_dtype t) {
  operand o;
  int64_t rows = trans ? x : k;
  o.elems = rows * ld + 8;
  o.buf = malloc((size_t)o.elems * tc_dtype_size(t));
  for (int64_t i = 0; i < o.elems; i++) put(o.buf, t, i, NAN);
  int64_t ext[3] = {1, k, x}, st[3] = {rows * ld, trans ? 1 : ld, trans ? ld : 1};
  for (int64_t a = 0; a < k; a++)
    for (int64_t b = 0; b < x; b++) put(o.buf, t, a * st[1] + b * st[2], frand());
  o.v = tc_view_new(3, ext, st, NULL);
  return o;
}

/* Generates the case for target; returns the source (caller frees) or
 * NULL.  *p gets the derived parameters. */
static char *generate(const vcase *c, tc_target target, operand *A, operand *B, tc_view *vc,
                      tc_gemm_params *p) {
  tc_gemm_problem pb = {A->v, B->v, vc, c->ab, c->ab, c->c, c->accumulate, c->alpha};
  tc_gemm_shape s = tc_gemm_problem_shape(&pb);
  TC_STR_LOCAL(err);
  int ok = tc_gemm_params_parse(c->cfg, p, &err) == 0 &&
           tc_gemm_params_derive(p, &s, &err) == 0;
  TC_CHECK(ok, "%s: %s", c->cfg, tc_str_cstr(&err));
  if (!ok) return NULL;
  tc_gemm_kernel k;
  tc_status st = tc_gemm_generate(&pb, p, target, "gemm_vec", &k, &err);
  TC_CHECK(st == TC_OK, "%s: generate (%s): %s", c->cfg, tc_target_name(target), tc_str_cstr(&err));
  if (st != TC_OK) return NULL;
  return k.source;
}

/* Runs the case on OpenCL against the reference; returns the OpenCL
 * source (caller frees). */
static char *run_case(const vcase *c) {
  int64_t M = c->m, N = c->n, K = c->k;
  operand A = make_operand(K, M, c->a_trans, c->a_ld, c->ab);
  operand B = make_operand(K, N, c->b_trans, c->b_ld, c->ab);
  int64_t nc = M * c->c_ld + 8;
  int64_t cext[3] = {1, M, N}, cst[3] = {M * c->c_ld, c->c_ld, 1};
  tc_view *vc = tc_view_new(3, cext, cst, NULL);
  void *cb = malloc((size_t)nc * tc_dtype_size(c->c));
  void *c0 = malloc((size_t)nc * tc_dtype_size(c->c));
  for (int64_t i = 0; i < nc; i++) put(cb, c->c, i, 1234.5f);
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) put(cb, c->c, m * c->c_ld + n, frand());
  memcpy(c0, cb, (size_t)nc * tc_dtype_size(c->c));
  tc_gemm_params p;
  char *src = generate(c, TC_TARGET_OPENCL, &A, &B, vc, &p);
  if (src && cl) {
    tc_gemm_kernel kk;
    TC_STR_LOCAL(err);
    tc_gemm_problem pb = {A.v, B.v, vc, c->ab, c->ab, c->c, c->accumulate, c->alpha};
    tc_status st = tc_gemm_generate(&pb, &p, TC_TARGET_OPENCL, "gemm_vec", &kk, &err);
    TC_CHECK(st == TC_OK, "%s", tc_str_cstr(&err));
    tc_rt_buffer bufs[3] = {{A.buf, (size_t)A.elems * tc_dtype_size(c->ab), 0},
                            {B.buf, (size_t)B.elems * tc_dtype_size(c->ab), 0},
                            {cb, (size_t)nc * tc_dtype_size(c->c), 1}};
    tc_launch L = {{kk.grid[0], 1, 1}, {kk.block[0], 1, 1}, 0};
    tc_str e;
    tc_str_init(&e);
    if (st == TC_OK) st = tc_cl_run(cl, kk.source, kk.name, bufs, 3, &L, NULL, &e);
    TC_CHECK(st == TC_OK, "%s: run: %s", c->cfg, tc_str_cstr(&e));
    tc_str_free(&e);
    tc_gemm_kernel_free(&kk);
    int bad = 0;
    for (int64_t m = 0; m < M && bad < 5; m++)
      for (int64_t n = 0; n < N && bad < 5; n++) {
        double acc = 0, mag = 0;
        for (int64_t k = 0; k < K; k++) {
          int64_t ia = c->a_trans ? m * c->a_ld + k : k * c->a_ld + m;
          int64_t ib = c->b_trans ? n * c->b_ld + k : k * c->b_ld + n;
          double x = get(A.buf, c->ab, ia), y = get(B.buf, c->ab, ib);
          acc += x * y, mag += fabs(x * y);
        }
        int64_t ic = m * c->c_ld + n;
        double want = c->alpha * acc + (c->accumulate ? get(c0, c->c, ic) : 0.0);
        double got = get(cb, c->c, ic);
        double tol = 1e-5 * (1 + mag) + (c->c == TC_F32 ? 1e-5 : 8e-3) * fabs(want) + 1e-6;
        if (!(fabs(got - want) <= tol)) {
          bad++;
          TC_CHECK(0, "%s M%lld N%lld K%lld: C[%lld][%lld] = %g, expected %g", c->cfg,
                   (long long)M, (long long)N, (long long)K, (long long)m, (long long)n, got, want);
        }
      }
    for (int64_t i = 0; i < nc && bad < 5; i++) {
      int64_t m = i / c->c_ld, n = i % c->c_ld;
      if ((m >= M || n >= N) && get(cb, c->c, i) != get(c0, c->c, i)) {
        bad++;
        TC_CHECK(0, "%s: store outside C at element %lld", c->cfg, (long long)i);
      }
    }
  }
  tc_view_free(A.v);
  tc_view_free(B.v);
  tc_view_free(vc);
  free(A.buf);
  free(B.buf);
  free(cb);
  free(c0);
  return src;
}

/* The source for another target (NULL on failure). */
static char *source_for(const vcase *c, tc_target target) {
  operand A = make_operand(c->k, c->m, c->a_trans, c->a_ld, c->ab);
  operand B = make_operand(c->k, c->n, c->b_trans, c->b_ld, c->ab);
  int64_t cext[3] = {1, c->m, c->n}, cst[3] = {c->m * c->c_ld, c->c_ld, 1};
  tc_view *vc = tc_view_new(3, cext, cst, NULL);
  tc_gemm_params p;
  char *src = generate(c, target, &A, &B, vc, &p);
  tc_view_free(A.v);
  tc_view_free(B.v);
  tc_view_free(vc);
  free(A.buf);
  free(B.buf);
  return src;
}

static vcase vc_base(const char *cfg, int64_t m, int64_t n, int64_t k) {
  vcase c;
  memset(&c, 0, sizeof c);
  c.cfg = cfg, c.m = m, c.n = n, c.k = k;
  c.a_ld = m, c.b_ld = n, c.c_ld = n;
  c.ab = c.c = TC_F32;
  c.alpha = 1.0f;
  return c;
}

#define NEED_CL()                          \
  do {                                     \
    if (!cl) TC_SKIP("no OpenCL device"); \
  } while (0)

/* Row-major f32 (M and N contiguous): vload4 reads of A and B, vstore4
 * LDS writes and C writes; CUDA float4. */
static void test_row_major_f32(void) {
  NEED_CL();
  vcase c = vc_base("64,32,32,8,2,2", 64, 64, 64);
  char *src = run_case(&c);
  TC_REQUIRE(src, "no source");
  TC_CHECK(has(src, "vload4(0, A + (") && has(src, "vload4(0, B + ("), "no vload4 of A and B");
  TC_CHECK(has(src, "vstore4((float4)(a_copy[0], a_copy[1], a_copy[2], a_copy[3]), 0, a_lds + ("), "no LDS vstore");
  TC_CHECK(has(src, "vstore2((float2)(c_acc[0], c_acc[1]), 0, C + ("), "no C vstore");
  TC_CHECK(!has(strstr(src, "__kernel"), " ? "), "predicates where nothing is padded");
  free(src);
  src = source_for(&c, TC_TARGET_CUDA);
  TC_REQUIRE(src, "no CUDA source");
  TC_CHECK(has(src, "*reinterpret_cast<const float4*>(A + (") &&
               has(src, "*reinterpret_cast<const float4*>(B + ("),
           "no float4 reads");
  TC_CHECK(has(src, "__attribute__((aligned(16)))"), "LDS not aligned");
  free(src);
  /* a wider thread tile: 4-wide C and LDS writes */
  c = vc_base("64,64,64,16,4,4", 96, 128, 48);
  src = run_case(&c);
  TC_REQUIRE(src, "no source");
  TC_CHECK(has(src, "vstore4((float4)(c_acc[0], c_acc[1], c_acc[2], c_acc[3]), 0, C + ("),
           "no 4-wide C store");
  free(src);
}

/* Padded M, N, K: M = 100 (vectors of 4 end exactly at the tensor's
 * edge), N = 70 with leading dim 72 (only pairs are uniform: a 4-vector
 * at n = 68 would be half out of range), K = 37 padded to 40; C's leading
 * dim 70 allows pairs; accumulate with alpha. */
static void test_padded_edges(void) {
  NEED_CL();
  vcase c = vc_base("64,64,32,8,4,2", 100, 70, 37);
  c.b_ld = 72;
  c.accumulate = 1, c.alpha = 0.5f;
  char *src = run_case(&c);
  TC_REQUIRE(src, "no source");
  TC_CHECK(has(src, "vload4(0, A + ("), "no vload4 of A");
  TC_CHECK(has(src, "vload2(0, B + (") && !has(src, "vload4(0, B + ("), "B must read pairs");
  TC_CHECK(has(src, ") ? vload"), "no predicated vectors");
  free(src);
  /* M = 101: no vector is uniform along M, so A reads elements */
  c = vc_base("64,64,32,8,4,2", 101, 64, 24);
  c.a_ld = 104;
  src = run_case(&c);
  TC_REQUIRE(src, "no source");
  TC_CHECK(!has(src, "vload2(0, A") && !has(src, "vload4(0, A"), "A vectorized along M = 101");
  TC_CHECK(has(src, "vload4(0, B + ("), "no vload4 of B");
  free(src);
  /* M = 102 with leading dim 104: pairs, the last one fully valid */
  c = vc_base("64,64,32,8,4,2", 102, 66, 19);
  c.a_ld = 104, c.b_ld = 66, c.c_ld = 68;
  src = run_case(&c);
  TC_REQUIRE(src, "no source");
  TC_CHECK(has(src, "vload2(0, A + ("), "no vload2 of A");
  free(src);
}

/* Transposed layouts: K contiguous in A and B (read along K), and mixed. */
static void test_transposed(void) {
  NEED_CL();
  vcase c = vc_base("64,32,32,8,2,2", 50, 64, 40);
  c.a_trans = c.b_trans = 1;
  c.a_ld = c.b_ld = 40;
  char *src = run_case(&c);
  TC_REQUIRE(src, "no source");
  /* A and B are contiguous only along K here, and a vload reads contiguous
   * elements: vload4s of them read along K */
  TC_CHECK(has(src, "vload4(0, A + (") && has(src, "vload4(0, B + ("), "no vload4 along K");
  free(src);
  c = vc_base("128,64,64,8,2,4", 64, 96, 30);
  c.b_trans = 1, c.b_ld = 32;
  src = run_case(&c);
  TC_REQUIRE(src, "no source");
  TC_CHECK(has(src, "vload4(0, A + (") && has(src, "vload2(0, B + ("), "mixed layouts");
  free(src);
}

/* f16 and bf16 inputs (and outputs). */
static void test_half(void) {
  NEED_CL();
  vcase c = vc_base("64,64,32,16,4,2", 64, 40, 40);
  c.ab = c.c = TC_F16;
  c.b_trans = 1, c.b_ld = 40;
  char *src = run_case(&c);
  TC_REQUIRE(src, "no source");
  TC_CHECK(has(src, "vload_half8(0, (__global const half*)A + (") ||
               has(src, "vload_half4(0, (__global const half*)A + ("),
           "no vload_halfN of A");
  free(src);
  c = vc_base("64,32,32,8,2,2", 48, 40, 30);
  c.ab = TC_BF16;
  c.c = TC_BF16;
  src = run_case(&c);
  TC_REQUIRE(src, "no source");
  TC_CHECK(has(src, "tc_bf16_to_f32(a_copy_v0.s0)"), "no bf16 vector read");
  TC_CHECK(has(src, "vstore2((ushort2)(tc_f32_to_bf16("), "no bf16 vector store");
  free(src);
}

/* XDLOPS on the OpenCL emulation: raw 16-bit vector reads and LDS writes. */
static void test_xdlops(void) {
  NEED_CL();
  vcase c = vc_base("xdlops:64,64,16,32,32", 64, 64, 64);
  c.ab = TC_F16;
  char *src = run_case(&c);
  TC_REQUIRE(src, "no source");
  TC_CHECK(has(src, "const ushort"), "no raw 16-bit vector read");
  free(src);
  c = vc_base("xdlops:64,64,16,32,32", 50, 70, 40);
  c.ab = TC_BF16, c.a_trans = 1, c.a_ld = 40, c.b_ld = 72;
  free(run_case(&c));
}

/* A 1x1 NCHW forward convolution: gemmN (n, h, w) is contiguous along
 * h*w, read with vectors; verified against the reference. */
static void test_conv_1x1(void) {
  NEED_CL();
  tc_conv_problem p;
  tc_conv_problem_init(&p);
  p.dir = TC_CONV_FWD;
  p.n = 2, p.c = 16, p.h = 8, p.w = 8, p.k = 32, p.y = p.x = 1;
  TC_STR_LOCAL(err);
  tc_conv_plan *plan = NULL;
  TC_REQUIRE(tc_conv_plan_make(&p, NULL, TC_TARGET_OPENCL, &plan, &err) == TC_OK, "%s",
             tc_str_cstr(&err));
  int vec = 0;
  for (int i = 0; i < plan->nsteps; i++)
    vec |= has(plan->steps[i].kernel.source, "vload4(0, B + (") ||
           has(plan->steps[i].kernel.source, "vload2(0, B + (");
  TC_CHECK(vec, "no vector reads of gemmN");
  int64_t ni = tc_conv_input_elems(&p), nf = tc_conv_filter_elems(&p), no = tc_conv_output_elems(&p);
  float *in = malloc((size_t)ni * 4), *fil = malloc((size_t)nf * 4), *out = malloc((size_t)no * 4);
  for (int64_t i = 0; i < ni; i++) in[i] = frand();
  for (int64_t i = 0; i < nf; i++) fil[i] = frand();
  for (int64_t i = 0; i < no; i++) out[i] = NAN;
  tc_status st = tc_conv_run(plan, NULL, in, fil, out, NULL, 0, NULL, &err);
  TC_CHECK(st == TC_OK, "run: %s", tc_str_cstr(&err));
  if (st == TC_OK) {
    TC_STR_LOCAL(msg);
    TC_CHECK(tc_conv_verify(&p, in, fil, out, NULL, &msg) == 0, "%s", tc_str_cstr(&msg));
  }
  free(in);
  free(fil);
  free(out);
  tc_conv_plan_free(plan);
}

/* NVRTC builds the CUDA sources of vectorized cases. */
static void test_cuda_builds(void) {
  tc_str e;
  tc_str_init(&e);
  char *ptx = NULL;
  tc_status st = tc_cuda_compile("extern \"C\" __global__ void k() {}", "sm_80", &ptx, &e);
  free(ptx);
  if (st == TC_ERR_UNSUPPORTED) {
    tc_str_free(&e);
    TC_SKIP("NVRTC not available");
  }
  vcase cs[4];
  cs[0] = vc_base("64,64,64,16,4,4", 96, 128, 48);
  cs[1] = vc_base("64,64,32,8,4,2", 100, 70, 37);
  cs[1].b_ld = 72, cs[1].accumulate = 1, cs[1].alpha = 0.5f;
  cs[2] = vc_base("64,64,32,16,4,2", 64, 40, 40);
  cs[2].ab = cs[2].c = TC_F16, cs[2].b_trans = 1, cs[2].b_ld = 40, cs[2].accumulate = 1;
  cs[3] = vc_base("64,64,64,16,4,4", 64, 64, 32);
  cs[3].ab = cs[3].c = TC_BF16, cs[3].a_trans = 1, cs[3].a_ld = 32;
  for (int i = 0; i < 4; i++) {
    char *src = source_for(&cs[i], TC_TARGET_CUDA);
    if (!src) continue;
    TC_CHECK(has(src, "reinterpret_cast<const "), "case %d: no vector reads", i);
    tc_str_clear(&e);
    st = tc_cuda_compile(src, "sm_80", &ptx, &e);
    TC_CHECK(st == TC_OK && has(ptx, ".entry gemm_vec"), "case %d: %s", i, tc_str_cstr(&e));
    TC_CHECK(!ptx || has(ptx, "ld.global.nc.v4") || has(ptx, "ld.global.v4") ||
                 has(ptx, "ld.global.nc.v2") || has(ptx, "ld.global.v2"),
             "case %d: no vector loads in the PTX", i);
    free(ptx);
    ptx = NULL;
    free(src);
  }
  tc_str_free(&e);
}

/* hipcc builds the HIP sources (buffer-load reads; vector LDS and C
 * writes), XDLOPS included. */
static void test_hip_builds(void) {
  tc_str e;
  tc_str_init(&e);
  char path[512];
  if (!tc_hip_find_hipcc(path, sizeof path)) {
    tc_str_free(&e);
    TC_SKIP("no hipcc");
  }
  vcase cs[3];
  cs[0] = vc_base("64,64,64,16,4,4", 96, 128, 48);
  cs[0].accumulate = 1;
  cs[1] = vc_base("64,64,32,16,4,2", 64, 40, 40);
  cs[1].ab = cs[1].c = TC_F16, cs[1].b_trans = 1, cs[1].b_ld = 40;
  cs[2] = vc_base("xdlops:64,64,16,32,32", 64, 64, 64);
  cs[2].ab = TC_BF16;
  for (int i = 0; i < 3; i++) {
    char *src = source_for(&cs[i], TC_TARGET_HIP);
    if (!src) continue;
    TC_CHECK(has(src, "reinterpret_cast<"), "case %d: no vector accesses", i);
    tc_str_clear(&e);
    tc_status st = tc_hip_compile(src, NULL, NULL, NULL, &e);
    if (st == TC_ERR_UNSUPPORTED) {
      free(src);
      tc_str_free(&e);
      TC_SKIP("hipcc cannot compile for the default arch");
    }
    TC_CHECK(st == TC_OK, "case %d: %s", i, tc_str_cstr(&e));
    free(src);
  }
  tc_str_free(&e);
}

int main(void) {
  cl = open_cl_or_null();
  TC_RUN(test_row_major_f32);
  TC_RUN(test_padded_edges);
  TC_RUN(test_transposed);
  TC_RUN(test_half);
  TC_RUN(test_xdlops);
  TC_RUN(test_conv_1x1);
  TC_RUN(test_cuda_builds);
  TC_RUN(test_hip_builds);
  if (cl) tc_cl_close(cl);
  TC_MAIN_END();
}
