/* test_tmem.c - tensor memory (Blackwell), the rest of nvFuser's tensor
 * memory tutorial (docs/tmem.md).
 *
 * Every kernel here is a gmem -> register -> tmem -> register -> gmem copy
 *   tv0 (input) -> tv1 = set (local) -> tv2 = set (tensor) -> tv3 = set
 *   (local) -> tv4 = set (output)
 * (tv2 is a permute for the transpose).  Scheduling it so that the
 * tensor-memory accesses are legal:
 *   - tv1, tv2, tv3 and tv4 get the same thread parallelization.  tv1 and
 *     tv3 are registers, private to a thread, so the thread that writes
 *     tv2 (tcgen05.st) must be the one that computed tv1, and the thread
 *     that reads tv2 (tcgen05.ld) must be the one that writes tv3 and then
 *     tv4 (lowering rejects anything else).
 *   - tv2's lane axes (left of its dim-sep position) are exactly its
 *     thread axes, ordered so that the lane is the linear thread id
 *     (TIDx fastest, then TIDy, then TIDz) modulo 128: a tcgen05 32x32b
 *     access puts thread i of warp w on lane 32 * (w % 4) + i.  Serial and
 *     vectorized axes go right of the dim-sep position (columns), where
 *     they are the same for every thread of a warp.
 *   - The threads that touch tensor memory form whole warps.
 *   - Inlining only decides which serial axes of tv2 are allocated (the
 *     allocation rules: tensor memory is shared by threads, so thread axes are
 *     always allocated, and serial axes left of the compute-at position
 *     are not); a vectorized axis is never inlined, so it is always
 *     allocated.
 * Each valid kernel runs on PoCL with tensor memory emulated as a 128 x
 * 512 local array addressed as tcgen05 addresses it, must copy exactly
 * and allocate the columns asserted here; each is also printed for CUDA
 * sm_100a (tcgen05) and built with NVRTC (tc_kernel_build), and all of
 * them together are assembled with ptxas for sm_100a (skipped with the
 * reason where NVRTC or ptxas is missing).  The invalid access patterns
 * must fail with their messages. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "test.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

/* ---- the copy chain --------------------------------------------------------- */

typedef struct chain {
  tc_fusion *f;
  tc_tensor *tv[5];
  int n;
  int64_t shape[8];
  tc_dtype dt;
  int transpose; /* tv2 = permute(tv1, {1, 0}) */
} chain;

static chain make_chain(tc_dtype dt, int n, const int64_t *shape, int transpose) {
  chain c;
  memset(&c, 0, sizeof c);
  c.f = tc_fusion_new();
  c.n = n, c.dt = dt, c.transpose = transpose;
  memcpy(c.shape, shape, (size_t)n * sizeof *shape);
  static const int perm[2] = {1, 0};
  c.tv[0] = tc_input(c.f, dt, n, shape);
  c.tv[1] = tc_set(c.f, c.tv[0]);
  c.tv[2] = transpose ? tc_permute(c.f, c.tv[1], perm) : tc_set(c.f, c.tv[1]);
  c.tv[3] = tc_set(c.f, c.tv[2]);
  c.tv[4] = tc_set(c.f, c.tv[3]);
  OK(c.f, tc_add_output(c.f, c.tv[4]));
  OK(c.f, tc_set_memory_type(c.tv[2], TC_MEM_TENSOR));
  return c;
}

static int64_t numel(const chain *c) {
  int64_t e = 1;
  for (int i = 0; i < c->n; i++) e *= c->shape[i];
  return e;
}

/* Parallelizes axes 0..n-1 of tv1..tv4 as p[] (TC_SERIAL leaves one). */
static void parallelize_all(chain *c, int n, const tc_ptype *p) {
  for (int t = 1; t <= 4; t++)
    for (int i = 0; i < n; i++)
      if (p[i] != TC_SERIAL) OK(c->f, tc_parallelize(c->tv[t], i, p[i]));
}

/* Compiles for OpenCL, runs on PoCL, checks out == in (transposed for a
 * transpose) bit for bit and returns the tensor-memory columns (-1 on
 * failure). */
static int64_t run_pocl(chain *c, const char *label) {
  tc_status st;
  tc_kernel *k = tc_compile(c->f, NULL, &st);
  if (!k) {
    TC_CHECK(k != NULL, "%s: compile failed: %s", label, tc_fusion_error(c->f));
    return -1;
  }
  int64_t n = numel(c);
  size_t es = tc_dtype_size(c->dt);
  unsigned char *in = malloc((size_t)n * es), *out = malloc((size_t)n * es);
  uint32_t r = 0x9e3779b9u;
  for (int64_t i = 0; i < n * (int64_t)es; i++) {
    r ^= r << 13, r ^= r >> 17, r ^= r << 5;
    in[i] = (unsigned char)(r >> 11);
  }
  if (c->dt == TC_F32) /* no NaNs (their payload need not survive a copy) */
    for (int64_t i = 0; i < n; i++) in[4 * i + 3] &= 0x3f;
  if (c->dt == TC_F16 || c->dt == TC_BF16)
    for (int64_t i = 0; i < n; i++) in[2 * i + 1] &= 0x3f;
  memset(out, 0xa5, (size_t)n * es);
  void *args[2] = {in, out};
  st = tc_kernel_run(k, args, NULL, NULL);
  int64_t cols = -1;
  if (st != TC_OK) {
    TC_CHECK(st == TC_OK, "%s: run failed: %s\n%s", label, tc_kernel_error(k), tc_kernel_source(k));
  } else {
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < n; i++) {
      int64_t src = i;
      if (c->transpose) { /* out[j][i] = in[i][j], out is [shape1, shape0] */
        int64_t a = i / c->shape[0], b = i % c->shape[0];
        src = b * c->shape[1] + a;
      }
      if (memcmp(out + i * (int64_t)es, in + src * (int64_t)es, es) != 0) {
        if (first < 0) first = i;
        bad++;
      }
    }
    TC_CHECK(bad == 0, "%s: %lld of %lld elements wrong, first at %lld\n%s", label, (long long)bad,
             (long long)n, (long long)first, tc_kernel_source(k));
    cols = tc_kernel_tmem_columns(k);
  }
  free(in), free(out);
  tc_kernel_free(k);
  return cols;
}

/* Every CUDA kernel printed here, for one NVRTC + ptxas run at the end. */
static tc_str all_cuda;
static int n_cuda;

/* Prints the kernel for CUDA sm_100a under a unique name, checks that it
 * has the tcgen05 instructions (and the `expect` strings, NULL-ended) and,
 * with batch, adds it to all_cuda.  Returns the kernel (caller frees) or
 * NULL. */
static tc_kernel *cuda_kernel(chain *c, const char *name, int batch, int64_t want_cols, ...) {
  tc_compile_options o = {TC_TARGET_CUDA, "sm_100a", name};
  tc_status st;
  tc_kernel *k = tc_compile(c->f, &o, &st);
  if (!k) {
    TC_CHECK(k != NULL, "%s: CUDA compile failed: %s", name, tc_fusion_error(c->f));
    return NULL;
  }
  const char *src = tc_kernel_source(k);
  TC_CHECK_EQ_INT(tc_kernel_tmem_columns(k), want_cols);
  static const char *always[] = {"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32",
                                 "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned",
                                 "tcgen05.dealloc.cta_group::1.sync.aligned.b32",
                                 "tcgen05.wait::st.sync.aligned", "tcgen05.wait::ld.sync.aligned",
                                 "if (tc_tid < 32)"};
  for (size_t i = 0; i < sizeof always / sizeof *always; i++)
    TC_CHECK(strstr(src, always[i]) != NULL, "%s: no \"%s\" in\n%s", name, always[i], src);
  char alloc[96];
  snprintf(alloc, sizeof alloc, "[%%0], %lld;", (long long)want_cols);
  TC_CHECK(strstr(src, alloc) != NULL, "%s: no allocation of %lld columns in\n%s", name,
           (long long)want_cols, src);
  va_list ap;
  va_start(ap, want_cols);
  for (const char *s = va_arg(ap, const char *); s; s = va_arg(ap, const char *))
    TC_CHECK(strstr(src, s) != NULL, "%s: no \"%s\" in\n%s", name, s, src);
  va_end(ap);
  if (batch) {
    tc_str_cat(&all_cuda, src);
    n_cuda++;
  }
  return k;
}

/* NVRTC for sm_100a through tc_kernel_build; a skip reason when NVRTC is
 * missing (0 when it ran). */
static const char *nvrtc_build(tc_kernel *k, const char *label) {
  tc_status st = tc_kernel_build(k, NULL);
  if (st == TC_ERR_UNSUPPORTED || st == TC_ERR_NO_DEVICE) return tc_kernel_error(k);
  TC_CHECK(st == TC_OK, "%s: NVRTC for sm_100a failed (%s):\n%s\n%s", label, tc_status_name(st),
           tc_kernel_error(k), tc_kernel_source(k));
  return NULL;
}

/* One valid case: runs on PoCL (columns == want_cols), prints for CUDA,
 * builds with NVRTC. */
static void valid_case(chain *c, const char *name, int64_t want_cols) {
  int64_t cols = run_pocl(c, name);
  TC_CHECK(cols == want_cols, "%s: %lld tensor-memory columns, expected %lld", name, (long long)cols,
           (long long)want_cols);
  tc_kernel *k = cuda_kernel(c, name, 1, want_cols, "tcgen05.st.sync.aligned.32x32b.x",
                             "tcgen05.ld.sync.aligned.32x32b.x", "tcgen05.fence::before_thread_sync",
                             NULL);
  const char *skip = k ? nvrtc_build(k, name) : NULL;
  char why[512] = "";
  if (skip) snprintf(why, sizeof why, "%s", skip);
  tc_kernel_free(k);
  tc_fusion_free(c->f);
  if (why[0]) TC_SKIP("NVRTC for sm_100a: %s (PoCL run passed)", why);
}

/* ---- the valid cases ---------------------------------------------------------- */

/* [2, 4, 4, 2]: [TIDz{2}, TIDy{4}, TIDx{4}, (dim-sep), 2]: one warp (32
 * threads), lane = 16 * tidz + 4 * tidy + tidx = the linear thread id.
 * tv2 is inlined at 3 (only the thread axes, which tensor memory allocates
 * anyway), so its serial axis is allocated: 2 columns used, 32 allocated;
 * the store loop runs 2 tcgen05.st.x1 before the load loop. */
static void test_warp_xyz(void) {
  int64_t s[4] = {2, 4, 4, 2};
  chain c = make_chain(TC_F32, 4, s, 0);
  tc_ptype p[3] = {TC_TIDZ, TC_TIDY, TC_TIDX};
  parallelize_all(&c, 3, p);
  OK(c.f, tc_inline_most(c.f));
  OK(c.f, tc_inline_at(c.tv[2], 3));
  OK(c.f, tc_set_tmem_dimsep(c.tv[2], 3));
  valid_case(&c, "tmem_warp_xyz", 32);
}

/* [2, 8, 8, 2], the same schedule: a warp group (128 threads), warp w on
 * lanes 32 w .. 32 w + 31.  Inlined as deep as possible (tc_inline_most),
 * so tv2's serial axis is left of its compute-at position and not
 * allocated: each iteration stores and loads column 0. */
static void test_warpgroup_xyz(void) {
  int64_t s[4] = {2, 8, 8, 2};
  chain c = make_chain(TC_F32, 4, s, 0);
  tc_ptype p[3] = {TC_TIDZ, TC_TIDY, TC_TIDX};
  parallelize_all(&c, 3, p);
  OK(c.f, tc_inline_most(c.f));
  OK(c.f, tc_set_tmem_dimsep(c.tv[2], 3));
  valid_case(&c, "tmem_warpgroup_xyz", 32);
}

/* [8, 16, 8]: [TIDy{8}, TIDx{16}, (dim-sep), TIDz{8}]: 1024 threads, 32
 * warps; lane = 16 * tidy + tidx = linear id % 128 (the block is 16 x 8
 * x 8), column = tidz = linear id / 128, the same for a whole warp. */
static void test_warpgroup_xy_col_z(void) {
  int64_t s[3] = {8, 16, 8};
  chain c = make_chain(TC_F32, 3, s, 0);
  tc_ptype p[3] = {TC_TIDY, TC_TIDX, TC_TIDZ};
  parallelize_all(&c, 3, p);
  OK(c.f, tc_inline_most(c.f));
  OK(c.f, tc_set_tmem_dimsep(c.tv[2], 2));
  valid_case(&c, "tmem_warpgroup_xy_col_z", 32);
}

/* [128, 2, 2]: [TIDx{128}, (dim-sep), TIDy{2}, TIDz{2}]: 512 threads;
 * lane = tidx, columns 2 * tidy + tidz (4 of them). */
static void test_warpgroup_x_col_yz(void) {
  int64_t s[3] = {128, 2, 2};
  chain c = make_chain(TC_F32, 3, s, 0);
  tc_ptype p[3] = {TC_TIDX, TC_TIDY, TC_TIDZ};
  parallelize_all(&c, 3, p);
  OK(c.f, tc_inline_most(c.f));
  OK(c.f, tc_set_tmem_dimsep(c.tv[2], 1));
  valid_case(&c, "tmem_warpgroup_x_col_yz", 32);
}

/* [1, 128, 2]: [TIDx{1}, TIDy{128}, (dim-sep), TIDz{2}]: the block is
 * 1 x 128 x 2, so the linear thread id is tidy + 128 * tidz and lane =
 * tidy (TIDx{1} adds nothing). */
static void test_x1_warpgroup_y_col_z(void) {
  int64_t s[3] = {1, 128, 2};
  chain c = make_chain(TC_F32, 3, s, 0);
  tc_ptype p[3] = {TC_TIDX, TC_TIDY, TC_TIDZ};
  parallelize_all(&c, 3, p);
  OK(c.f, tc_inline_most(c.f));
  OK(c.f, tc_set_tmem_dimsep(c.tv[2], 2));
  valid_case(&c, "tmem_x1_warpgroup_y_col_z", 32);
}

/* A transpose through tensor memory: tv0 [32, 128] (i, j), tv2 =
 * permute(tv1) is [128, 32] (j, i) and the output tv4 is tv0 transposed.
 * Everything runs with j on TIDx{128}: tv1 reads tv0[i][j] (coalesced
 * across the threads), reordered to [j, i] to match tv2; tv2 =
 * [TIDx{128} j, (dim-sep), i{32} vectorized]: one tcgen05.st.x32 puts
 * thread j's column of tv0 into lane j, so tensor memory holds the tile
 * transposed; tv3 reads a whole lane back with one tcgen05.ld.x32 and tv4
 * writes it as row j of the output. */
static void test_transpose(void) {
  int64_t s[2] = {32, 128};
  chain c = make_chain(TC_F32, 2, s, 1);
  int o[2] = {0, 1}, n[2] = {1, 0};
  OK(c.f, tc_reorder(c.tv[1], 2, o, n));
  for (int t = 1; t <= 4; t++) OK(c.f, tc_parallelize(c.tv[t], 0, TC_TIDX));
  OK(c.f, tc_parallelize(c.tv[2], 1, TC_VECTORIZE));
  OK(c.f, tc_parallelize(c.tv[3], 1, TC_VECTORIZE));
  OK(c.f, tc_inline_most(c.f));
  OK(c.f, tc_set_tmem_dimsep(c.tv[2], 1));
  int64_t cols = run_pocl(&c, "tmem_transpose");
  TC_CHECK_EQ_INT(cols, 32);
  tc_kernel *k = cuda_kernel(&c, "tmem_transpose", 1, 32, "tcgen05.st.sync.aligned.32x32b.x32.b32",
                             "tcgen05.ld.sync.aligned.32x32b.x32.b32", NULL);
  const char *skip = k ? nvrtc_build(k, "tmem_transpose") : NULL;
  char why[512] = "";
  if (skip) snprintf(why, sizeof why, "%s", skip);
  tc_kernel_free(k);
  tc_fusion_free(c.f);
  if (why[0]) TC_SKIP("NVRTC for sm_100a: %s (PoCL run passed)", why);
}

/* The tutorial swizzles the logical domain when it schedules the allocation,
 * to show that only loop -> allocation matters: [TIDx{32}, 32] with an XOR
 * swizzle {x, x ^ y} on tv1 ... tv4 (tv3's loop walks the swizzled domain
 * too, so each warp still reads one column at a time). */
static void test_xor_swizzled(void) {
  int64_t s[2] = {32, 32};
  chain c = make_chain(TC_F32, 2, s, 0);
  for (int t = 1; t <= 4; t++) {
    OK(c.f, tc_swizzle(c.tv[t], TC_SWIZZLE_XOR, 0, 1));
    OK(c.f, tc_parallelize(c.tv[t], 0, TC_TIDX));
  }
  OK(c.f, tc_inline_most(c.f));
  OK(c.f, tc_set_tmem_dimsep(c.tv[2], 1));
  valid_case(&c, "tmem_xor_swizzled", 32);
}

/* 16-bit floats: a tcgen05 access moves 32-bit words, so a thread's
 * vector of 2 f16 is one word (.x1), packed in registers: [128, 8] with
 * [TIDx{128}, (dim-sep), 4, V{2}]: 8 halves = 4 columns per lane. */
static void test_f16_pairs(void) {
  int64_t s[2] = {128, 8};
  chain c = make_chain(TC_F16, 2, s, 0);
  for (int t = 1; t <= 4; t++) {
    OK(c.f, tc_split(c.tv[t], 1, 2, 1));
    OK(c.f, tc_parallelize(c.tv[t], 0, TC_TIDX));
  }
  OK(c.f, tc_parallelize(c.tv[2], 2, TC_VECTORIZE));
  OK(c.f, tc_parallelize(c.tv[3], 2, TC_VECTORIZE));
  OK(c.f, tc_inline_all_at(c.f, 1));
  OK(c.f, tc_set_tmem_dimsep(c.tv[2], 1));
  int64_t cols = run_pocl(&c, "tmem_f16_pairs");
  TC_CHECK_EQ_INT(cols, 32);
  tc_kernel *k = cuda_kernel(&c, "tmem_f16_pairs", 1, 32, "tcgen05.st.sync.aligned.32x32b.x1.b32",
                             "tcgen05.ld.sync.aligned.32x32b.x1.b32", NULL);
  tc_kernel_free(k);
  tc_fusion_free(c.f);
}

/* Two tensors in tensor memory: two copies of one [128, 64] input, A
 * inlined at 1 (its serial axis allocated: 64 columns), B as deep as
 * possible (1 column used, 32 allocated); 96 columns in all, A placed
 * first (largest first), B after it. */
static void test_two_tensors(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t s[2] = {128, 64};
  tc_tensor *in = tc_input(f, TC_F32, 2, s), *t[2][4];
  for (int b = 0; b < 2; b++) {
    t[b][0] = tc_set(f, in);
    for (int i = 1; i < 4; i++) t[b][i] = tc_set(f, t[b][i - 1]);
    OK(f, tc_add_output(f, t[b][3]));
    OK(f, tc_set_memory_type(t[b][1], TC_MEM_TENSOR));
    for (int i = 0; i < 4; i++) OK(f, tc_parallelize(t[b][i], 0, TC_TIDX));
  }
  OK(f, tc_inline_most(f));
  OK(f, tc_inline_at(t[0][1], 1));
  for (int b = 0; b < 2; b++) OK(f, tc_set_tmem_dimsep(t[b][1], 1));
  tc_status st;
  tc_kernel *k = tc_compile(f, NULL, &st);
  TC_REQUIRE(k != NULL, "compile: %s", tc_fusion_error(f));
  TC_CHECK_EQ_INT(tc_kernel_tmem_columns(k), 96);
  float *x = malloc(128 * 64 * sizeof(float)), *o0 = malloc(128 * 64 * sizeof(float)),
        *o1 = malloc(128 * 64 * sizeof(float));
  for (int i = 0; i < 128 * 64; i++) x[i] = (float)i * 0.5f - 7.0f, o0[i] = o1[i] = -1.0f;
  void *args[3] = {x, o0, o1};
  st = tc_kernel_run(k, args, NULL, NULL);
  TC_CHECK(st == TC_OK, "run: %s", tc_kernel_error(k));
  int bad = 0;
  for (int i = 0; i < 128 * 64; i++) bad += o0[i] != x[i] || o1[i] != x[i];
  TC_CHECK(bad == 0, "%d elements wrong\n%s", bad, tc_kernel_source(k));
  char want[64];
  snprintf(want, sizeof want, "tc_tmem_%s = 64u;", tc_tensor_name(t[1][1]));
  TC_CHECK(strstr(tc_kernel_source(k), want) != NULL, "no \"%s\" in\n%s", want, tc_kernel_source(k));
  tc_kernel_free(k);
  free(x), free(o0), free(o1);
  tc_compile_options o = {TC_TARGET_CUDA, "sm_100a", "tmem_two_tensors"};
  k = tc_compile(f, &o, &st);
  TC_REQUIRE(k != NULL, "CUDA compile: %s", tc_fusion_error(f));
  const char *src = tc_kernel_source(k), *a64 = strstr(src, "[%0], 64;"), *a32 = strstr(src, "[%0], 32;");
  TC_CHECK(a64 && a32 && a64 < a32, "expected the 64-column allocation before the 32-column one:\n%s", src);
  tc_str_cat(&all_cuda, src);
  n_cuda++;
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* ---- columns as a function of the store and load vector widths ---------------- */

/* [128, 256] f32: tv1, tv2 = [TIDx{128}, 256/st, st], tv3, tv4 = [TIDx{128},
 * 256/ld, ld], tv2's and tv3's innermost axes vectorized (tcgen05.st.x<st>,
 * tcgen05.ld.x<ld>), tc_inline_most, dim-sep 1.  inline_most stops at a
 * vectorized axis and at the first axis that does not map to the
 * consumer's: with st == ld tv2's axis 256/st maps to tv3's, tv2 is inlined
 * at 2 and only TIDx (lanes: shared memory-like, always allocated) and
 * the vector st are allocated: max(st, 32) columns after rounding; with st
 * != ld it does not map, tv2 is inlined at 1 and all 256 columns are
 * allocated.  Every pair is lowered and printed for CUDA (the diagonal
 * and three other pairs also go through NVRTC and ptxas); three pairs run
 * on PoCL (each costs a PoCL build of about a second when its cache is
 * cold). */
static void vector_case(int st, int ld, int run, int batch) {
  int64_t s[2] = {128, 256};
  chain c = make_chain(TC_F32, 2, s, 0);
  for (int t = 1; t <= 4; t++) {
    OK(c.f, tc_split(c.tv[t], 1, t <= 2 ? st : ld, 1));
    OK(c.f, tc_parallelize(c.tv[t], 0, TC_TIDX));
  }
  OK(c.f, tc_parallelize(c.tv[2], 2, TC_VECTORIZE));
  OK(c.f, tc_parallelize(c.tv[3], 2, TC_VECTORIZE));
  OK(c.f, tc_inline_most(c.f));
  OK(c.f, tc_set_tmem_dimsep(c.tv[2], 1));
  int64_t want = st == ld ? (st < 32 ? 32 : st) : 256;
  char name[64], sst[64], sld[64];
  snprintf(name, sizeof name, "tmem_vec_st%d_ld%d", st, ld);
  snprintf(sst, sizeof sst, "tcgen05.st.sync.aligned.32x32b.x%d.b32", st);
  snprintf(sld, sizeof sld, "tcgen05.ld.sync.aligned.32x32b.x%d.b32", ld);
  if (run) {
    int64_t cols = run_pocl(&c, name);
    TC_CHECK(cols == want, "%s: %lld columns, expected %lld", name, (long long)cols, (long long)want);
  }
  tc_kernel *k = cuda_kernel(&c, name, batch, want, sst, sld, NULL);
  tc_kernel_free(k);
  tc_fusion_free(c.f);
}

static void test_vector_widths(void) {
  for (int st = 1; st <= 128; st *= 2)
    for (int ld = 1; ld <= 128; ld *= 2) {
      int run = (st == ld && (st == 1 || st == 128)) || (st == 4 && ld == 32);
      vector_case(st, ld, run, run || st == ld || (st == 1 && ld == 128) || (st == 128 && ld == 1));
    }
}

/* ---- invalid access patterns ---------------------------------------------------- */

static void expect_error(chain *c, const char *label, tc_status want, const char *prefix,
                         const char *also) {
  tc_status st;
  tc_kernel *k = tc_compile(c->f, NULL, &st);
  const char *msg = tc_fusion_error(c->f);
  TC_CHECK(k == NULL && st == want, "%s: expected %s, got %s (%s)", label, tc_status_name(want),
           tc_status_name(st), msg);
  TC_CHECK(strncmp(msg, prefix, strlen(prefix)) == 0, "%s: message does not start with \"%s\": %s",
           label, prefix, msg);
  if (also) TC_CHECK(strstr(msg, also) != NULL, "%s: message lacks \"%s\": %s", label, also, msg);
  tc_kernel_free(k);
  /* the same for CUDA sm_100a */
  tc_compile_options o = {TC_TARGET_CUDA, "sm_100a", NULL};
  k = tc_compile(c->f, &o, &st);
  TC_CHECK(k == NULL && st == want && strncmp(tc_fusion_error(c->f), prefix, strlen(prefix)) == 0,
           "%s (CUDA): got %s: %s", label, tc_status_name(st), tc_fusion_error(c->f));
  tc_kernel_free(k);
  tc_fusion_free(c->f);
}

#define BAD "Invalid data access pattern in TMem load/store: "

/* [16, 2]: TIDx{16}: half a warp. */
static void test_not_warp_collective(void) {
  int64_t s[2] = {16, 2};
  chain c = make_chain(TC_F32, 2, s, 0);
  tc_ptype p[1] = {TC_TIDX};
  parallelize_all(&c, 1, p);
  OK(c.f, tc_inline_most(c.f));
  OK(c.f, tc_set_tmem_dimsep(c.tv[2], 1));
  expect_error(&c, "not warp-collective", TC_ERR_LOWER,
               BAD "TMem load/store must be warp-collective, but the innermost extent is not a "
                   "multiple of 32",
               "16 consecutive threads");
}

/* [48, 2]: TIDx{48}: the second warp has 16 threads. */
static void test_partial_warp(void) {
  int64_t s[2] = {48, 2};
  chain c = make_chain(TC_F32, 2, s, 0);
  tc_ptype p[1] = {TC_TIDX};
  parallelize_all(&c, 1, p);
  OK(c.f, tc_inline_most(c.f));
  OK(c.f, tc_set_tmem_dimsep(c.tv[2], 1));
  expect_error(&c, "partial warp", TC_ERR_LOWER, BAD "TMem load/store must be warp-collective",
               "warp 1 would execute it with 16 of its 32 threads");
}

/* [64] split by 2: [TIDx{32}, 2], both lane axes, tv2 inlined at 1 so
 * that the serial axis is allocated: lane = 2 * tidx + i. */
static void test_lanes_not_stride_1(void) {
  int64_t s[1] = {64};
  chain c = make_chain(TC_F32, 1, s, 0);
  for (int t = 1; t <= 4; t++) {
    OK(c.f, tc_split(c.tv[t], 0, 2, 1));
    OK(c.f, tc_parallelize(c.tv[t], 0, TC_TIDX));
  }
  OK(c.f, tc_inline_most(c.f));
  OK(c.f, tc_inline_at(c.tv[2], 1));
  OK(c.f, tc_set_tmem_dimsep(c.tv[2], 2));
  expect_error(&c, "lanes not stride 1", TC_ERR_LOWER,
               BAD "lanes are not stride 1 across the threads of a warp", "thread 1 of warp 0");
}

/* [32, 4]: [TIDx{32}, (dim-sep), TIDy{4}]: warp 1 (tidy = 1) would use
 * lanes 0..31, but it may only touch 32..63. */
static void test_wrong_subpartition(void) {
  int64_t s[2] = {32, 4};
  chain c = make_chain(TC_F32, 2, s, 0);
  tc_ptype p[2] = {TC_TIDX, TC_TIDY};
  parallelize_all(&c, 2, p);
  OK(c.f, tc_inline_most(c.f));
  OK(c.f, tc_set_tmem_dimsep(c.tv[2], 1));
  expect_error(&c, "wrong sub-partition", TC_ERR_LOWER, BAD "warp 1 accesses lanes 0..31",
               "32 * (i % 4)");
}

/* [64, 2]: [TIDx{64}, (dim-sep), TIDy{2}]: 64 lanes, lane = tidx, but in
 * the 64 x 2 block warp 2 is tidx 0..31 of tidy 1: it would use lanes
 * 0..31 where it may only touch 64..95 (with TIDx{128} the same schedule
 * is right: see test_warpgroup_x_col_yz). */
static void test_wrong_subpartition_64(void) {
  int64_t s[2] = {64, 2};
  chain c = make_chain(TC_F32, 2, s, 0);
  tc_ptype p[2] = {TC_TIDX, TC_TIDY};
  parallelize_all(&c, 2, p);
  OK(c.f, tc_inline_most(c.f));
  OK(c.f, tc_set_tmem_dimsep(c.tv[2], 1));
  expect_error(&c, "wrong sub-partition (64)", TC_ERR_LOWER, BAD "warp 2 accesses lanes 0..31",
               "here 64..95");
}

/* f16 without vectorization: 2 bytes per thread. */
static void test_vector_not_4_bytes(void) {
  int64_t s[2] = {128, 2};
  chain c = make_chain(TC_F16, 2, s, 0);
  tc_ptype p[1] = {TC_TIDX};
  parallelize_all(&c, 1, p);
  OK(c.f, tc_inline_most(c.f));
  OK(c.f, tc_set_tmem_dimsep(c.tv[2], 1));
  expect_error(&c, "f16 scalar", TC_ERR_LOWER, "Vectorize size is not a multiple of 4 bytes",
               "1 x f16 = 2 bytes");
}

/* tv3 walks the unswizzled domain of a tensor allocated by its swizzled
 * one: at loop step i, thread x reads column x ^ i, a different column in
 * every thread of the warp. */
static void test_columns_differ_in_warp(void) {
  int64_t s[2] = {32, 32};
  chain c = make_chain(TC_F32, 2, s, 0);
  for (int t = 1; t <= 2; t++) OK(c.f, tc_swizzle(c.tv[t], TC_SWIZZLE_XOR, 0, 1));
  for (int t = 1; t <= 4; t++) OK(c.f, tc_parallelize(c.tv[t], 0, TC_TIDX));
  OK(c.f, tc_inline_most(c.f));
  OK(c.f, tc_set_tmem_dimsep(c.tv[2], 1));
  expect_error(&c, "columns differ", TC_ERR_LOWER,
               BAD "the threads of warp 0 access different columns", "tcgen05.ld of T2");
}

/* No data path between global and tensor memory. */
static void test_gmem_to_tmem(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t s[2] = {128, 2};
  tc_tensor *a = tc_input(f, TC_F32, 2, s);
  tc_tensor *t = tc_set(f, a), *r = tc_set(f, t), *o = tc_set(f, r);
  tc_add_output(f, o);
  OK(f, tc_set_memory_type(t, TC_MEM_TENSOR));
  for (tc_tensor *x = t; x; x = x == t ? r : x == r ? o : NULL) OK(f, tc_parallelize(x, 0, TC_TIDX));
  OK(f, tc_inline_most(f));
  OK(f, tc_set_tmem_dimsep(t, 1));
  tc_status st;
  tc_kernel *k = tc_compile(f, NULL, &st);
  TC_CHECK(k == NULL && st == TC_ERR_SCHEDULE && strstr(tc_fusion_error(f), "global memory") &&
               strstr(tc_fusion_error(f), "tcgen05.st"),
           "got %s: %s", tc_status_name(st), tc_fusion_error(f));
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* CUDA without a tcgen05 arch. */
static void test_cuda_needs_sm100(void) {
  int64_t s[2] = {128, 2};
  chain c = make_chain(TC_F32, 2, s, 0);
  tc_ptype p[1] = {TC_TIDX};
  parallelize_all(&c, 1, p);
  OK(c.f, tc_inline_most(c.f));
  OK(c.f, tc_set_tmem_dimsep(c.tv[2], 1));
  tc_compile_options o = {TC_TARGET_CUDA, "sm_90a", NULL};
  tc_status st;
  tc_kernel *k = tc_compile(c.f, &o, &st);
  TC_CHECK(k == NULL && st == TC_ERR_UNSUPPORTED && strstr(tc_fusion_error(c.f), "sm_90a"),
           "got %s: %s", tc_status_name(st), tc_fusion_error(c.f));
  tc_kernel_free(k);
  o.arch = "sm_100f";
  k = tc_compile(c.f, &o, &st);
  TC_CHECK(k != NULL, "sm_100f: %s", tc_fusion_error(c.f));
  tc_kernel_free(k);
  tc_fusion_free(c.f);
}

/* ---- every CUDA kernel above through NVRTC and ptxas for sm_100a ------------- */

static int find_tool(const char *tool, char *out, size_t cap) {
  const char *path = getenv("PATH");
  if (path) {
    char *dup = strdup(path), *save = NULL;
    for (char *d = strtok_r(dup, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
      snprintf(out, cap, "%s/%s", *d ? d : ".", tool);
      if (access(out, X_OK) == 0) {
        free(dup);
        return 1;
      }
    }
    free(dup);
  }
  snprintf(out, cap, "/usr/local/cuda/bin/%s", tool);
  return access(out, X_OK) == 0;
}

static void test_ptxas_sm100a(void) {
  TC_REQUIRE(n_cuda > 0, "no CUDA kernels were printed");
  char *ptx = NULL;
  tc_str err;
  tc_str_init(&err);
  tc_status st = tc_cuda_compile(tc_str_cstr(&all_cuda), "sm_100a", &ptx, &err);
  if (st == TC_ERR_UNSUPPORTED) {
    char why[512];
    snprintf(why, sizeof why, "%s", tc_str_cstr(&err));
    tc_str_free(&err);
    TC_SKIP("NVRTC: %s", why);
  }
  TC_CHECK(st == TC_OK, "NVRTC for sm_100a failed on %d kernels: %s", n_cuda, tc_str_cstr(&err));
  tc_str_free(&err);
  if (st != TC_OK) {
    free(ptx);
    return;
  }
  char ptxas[1024];
  if (!find_tool("ptxas", ptxas, sizeof ptxas)) {
    free(ptx);
    TC_SKIP("ptxas not found in PATH or /usr/local/cuda/bin (NVRTC passed on %d kernels)", n_cuda);
  }
  char dir[] = "/tmp/tilec_tmem_XXXXXX";
  TC_REQUIRE(mkdtemp(dir) != NULL, "mkdtemp failed");
  char path[256], cmd[2048];
  snprintf(path, sizeof path, "%s/k.ptx", dir);
  FILE *fp = fopen(path, "w");
  TC_REQUIRE(fp != NULL, "cannot write %s", path);
  fputs(ptx, fp);
  fclose(fp);
  free(ptx);
  snprintf(cmd, sizeof cmd, "'%s' -arch=sm_100a '%s/k.ptx' -o '%s/k.cubin' > '%s/log' 2>&1", ptxas,
           dir, dir, dir);
  int rc = system(cmd);
  char log[4096] = "";
  snprintf(path, sizeof path, "%s/log", dir);
  fp = fopen(path, "r");
  if (fp) {
    size_t n = fread(log, 1, sizeof log - 1, fp);
    log[n] = 0;
    fclose(fp);
  }
  TC_CHECK(rc == 0, "ptxas -arch=sm_100a failed (status %d) on %d kernels:\n%s", rc, n_cuda, log);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir);
  if (rc == 0) printf("  NVRTC + ptxas sm_100a: %d kernels\n", n_cuda);
}

int main(void) {
  tc_str_init(&all_cuda);
  TC_RUN(test_warp_xyz);
  TC_RUN(test_warpgroup_xyz);
  TC_RUN(test_warpgroup_xy_col_z);
  TC_RUN(test_warpgroup_x_col_yz);
  TC_RUN(test_x1_warpgroup_y_col_z);
  TC_RUN(test_transpose);
  TC_RUN(test_xor_swizzled);
  TC_RUN(test_f16_pairs);
  TC_RUN(test_two_tensors);
  TC_RUN(test_vector_widths);
  TC_RUN(test_not_warp_collective);
  TC_RUN(test_partial_warp);
  TC_RUN(test_lanes_not_stride_1);
  TC_RUN(test_wrong_subpartition);
  TC_RUN(test_wrong_subpartition_64);
  TC_RUN(test_vector_not_4_bytes);
  TC_RUN(test_columns_differ_in_warp);
  TC_RUN(test_gmem_to_tmem);
  TC_RUN(test_cuda_needs_sm100);
  TC_RUN(test_ptxas_sm100a);
  tc_str_free(&all_cuda);
  TC_MAIN_END();
}
