/* test_abstract_tensor.c - the abstract tensor (src/sched/abstract_tensor.c),
 * loop and allocation domains set from axes of a tensor's graph
 * (tc_set_loop_domain, tc_set_alloc_domain) and the bulk-copy swizzled
 * shared-memory layouts built as transforms (src/layout/tma_swizzle.c,
 * tc_schedule_tma_swizzle).
 *
 *   - The swizzled box [rows, S / elem] for S = 32, 64, 128 bytes and
 *     elements of 1, 2 and 4 bytes: the byte offset of every element, from
 *     the walk over the transforms, equals CuTe's Swizzle<B,4,3> (B = 1, 2,
 *     3) of its plain row-major byte offset, computed here from CuTe's
 *     definition, and the chunk-XOR form chunk ^ ((row % 8) / (128 / S)).
 *   - The same through a tensor (several boxes side by side), and a copy
 *     through such a swizzled shared buffer run on PoCL, once with the loop
 *     domain equal to the allocation domain and once with a loop domain
 *     from an abstract tensor on another branch of the graph.
 *   - The abstract tensor against the tensor calls: nvFuser's
 *     scheduleLdStMatrix sequence applied to an abstract tensor and, call
 *     for call, to a twin tensor gives the same extents and axis
 *     signatures at every step, and the extents the tutorial's comments state.
 *   - nvFuser's merge of non-adjacent axes, and every misuse with its
 *     message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tilec/tilec.h"
#include "ir/fusion.h"
#include "layout/tma_swizzle.h"
#include "sched/abstract_tensor.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

/* CuTe's Swizzle<B,M,S>: x ^ ((x & (((1 << B) - 1) << (M + S))) >> S). */
static int64_t cute_swizzle(int b, int m, int s, int64_t x) {
  int64_t yyy = (((int64_t)1 << b) - 1) << (m + s);
  return x ^ ((x & yyy) >> s);
}

static int swizzle_b(int bytes) { return bytes == 128 ? 3 : bytes == 64 ? 2 : 1; }

/* Row-major offset over the given axes from their values. */
static const tc_expr *row_major(tc_epool *p, const tc_dgraph *g, const tc_expr **vals,
                                const int *axes, int n) {
  const tc_expr *off = tc_e_const(p, 0);
  for (int i = 0; i < n; i++) {
    if (!vals[axes[i]]) return NULL;
    off = tc_e_add(p, tc_e_mulc(p, off, g->axes[axes[i]].extent), vals[axes[i]]);
  }
  return tc_simplify(p, off);
}

/* ---- the swizzled box on the graph ---------------------------------------- */

static void box_case(int sbytes, int esz, int64_t rows) {
  tc_dgraph g;
  tc_dg_init(&g);
  TC_STR_LOCAL(err);
  int64_t cols = sbytes / esz;
  int r = tc_dg_root(&g, rows, 0), c = tc_dg_root(&g, cols, 1), box[TC_TMA_BOX_NAXES];
  TC_REQUIRE(tc_tma_swizzle_box(&g, r, c, sbytes, esz, box, &err) == 0, "%s", tc_str_cstr(&err));
  int64_t want_ext[TC_TMA_BOX_NAXES] = {rows / 8, sbytes / 16, 128 / sbytes, sbytes / 16, 16 / esz};
  for (int k = 0; k < TC_TMA_BOX_NAXES; k++)
    TC_CHECK(g.axes[box[k]].extent == want_ext[k], "S=%d elem=%d axis %d extent %lld, want %lld",
             sbytes, esz, k, (long long)g.axes[box[k]].extent, (long long)want_ext[k]);
  tc_epool *p = tc_epool_new();
  const tc_expr **v = tc_xcalloc((size_t)g.naxes, sizeof *v);
  v[r] = tc_e_var(p, "r", 0, rows - 1);
  v[c] = tc_e_var(p, "c", 0, cols - 1);
  tc_dg_walk(p, &g, v, NULL);
  const tc_expr *off = row_major(p, &g, v, box, TC_TMA_BOX_NAXES);
  TC_REQUIRE(off != NULL, "box axes not reached from the roots");
  /* and back: from the offset to (row, col) */
  const tc_expr **bk = tc_xcalloc((size_t)g.naxes, sizeof *bk);
  const tc_expr *o = tc_e_var(p, "o", 0, rows * cols - 1);
  int64_t stride = 1;
  for (int k = TC_TMA_BOX_NAXES - 1; k >= 0; k--) {
    bk[box[k]] = tc_e_modc(p, tc_e_divc(p, o, stride), g.axes[box[k]].extent);
    stride *= g.axes[box[k]].extent;
  }
  const tc_expr *pred = tc_e_const(p, 1);
  tc_dg_walk(p, &g, bk, &pred);
  TC_CHECK(tc_e_is_const(pred, 1), "a divisible box needs no predicate");
  TC_REQUIRE(bk[r] && bk[c], "roots not reached from the box");
  int bad = 0;
  char *seen = tc_xcalloc((size_t)(rows * cols), 1);
  for (int64_t i = 0; i < rows && bad < 5; i++)
    for (int64_t j = 0; j < cols && bad < 5; j++) {
      int64_t vv[3] = {i, j, 0};
      int64_t e = tc_e_eval(off, vv), byte = e * esz;
      int64_t plain = i * sbytes + j * esz;
      int64_t cute = cute_swizzle(swizzle_b(sbytes), 4, 3, plain);
      int64_t chunk = (j * esz) / 16, xr = (i % 8) / (128 / sbytes);
      int64_t byxor = i * sbytes + ((chunk ^ xr) * 16) + (j * esz) % 16;
      if (byte != cute || byte != byxor || e < 0 || e >= rows * cols || seen[e]) bad++;
      TC_CHECK(byte == cute, "S=%d elem=%d (%lld, %lld): transforms give byte %lld, Swizzle<%d,4,3> %lld",
               sbytes, esz, (long long)i, (long long)j, (long long)byte, swizzle_b(sbytes),
               (long long)cute);
      TC_CHECK(byte == byxor, "S=%d elem=%d (%lld, %lld): byte %lld, chunk xor gives %lld", sbytes, esz,
               (long long)i, (long long)j, (long long)byte, (long long)byxor);
      if (e >= 0 && e < rows * cols) {
        TC_CHECK(!seen[e], "offset %lld taken twice", (long long)e);
        seen[e] = 1;
        int64_t bv[3] = {0, 0, e};
        TC_CHECK(tc_e_eval(bk[r], bv) == i && tc_e_eval(bk[c], bv) == j,
                 "S=%d elem=%d: backward from offset %lld gives (%lld, %lld), want (%lld, %lld)", sbytes,
                 esz, (long long)e, (long long)tc_e_eval(bk[r], bv), (long long)tc_e_eval(bk[c], bv),
                 (long long)i, (long long)j);
      }
    }
  free(seen), free(v), free(bk);
  tc_epool_free(p);
  tc_dg_free(&g);
}

static void test_box_equals_cute_swizzle(void) {
  static const int sizes[3] = {32, 64, 128}, elems[3] = {1, 2, 4};
  for (int s = 0; s < 3; s++)
    for (int e = 0; e < 3; e++) {
      box_case(sizes[s], elems[e], 8);
      box_case(sizes[s], elems[e], 64);
    }
}

/* The 128B pattern of LdStMatrixSet (bf16, a 64-column box): row r's chunk c
 * lands at chunk c ^ (r % 8), spelled out for rows 0..8. */
static void test_box_128b_bf16_table(void) {
  tc_dgraph g;
  tc_dg_init(&g);
  TC_STR_LOCAL(err);
  int r = tc_dg_root(&g, 64, 0), c = tc_dg_root(&g, 64, 1), box[TC_TMA_BOX_NAXES];
  TC_REQUIRE(tc_tma_swizzle_box(&g, r, c, 128, 2, box, &err) == 0, "%s", tc_str_cstr(&err));
  tc_epool *p = tc_epool_new();
  const tc_expr **v = tc_xcalloc((size_t)g.naxes, sizeof *v);
  v[r] = tc_e_var(p, "r", 0, 63);
  v[c] = tc_e_var(p, "c", 0, 63);
  tc_dg_walk(p, &g, v, NULL);
  const tc_expr *off = row_major(p, &g, v, box, TC_TMA_BOX_NAXES);
  /* chunk 1 (columns 8..15) of rows 0..8 */
  static const int64_t want[9] = {1, 0, 3, 2, 5, 4, 7, 6, 1};
  for (int64_t i = 0; i < 9; i++) {
    int64_t vv[2] = {i, 8};
    int64_t e = tc_e_eval(off, vv);
    TC_CHECK(e == i * 64 + want[i] * 8, "row %lld column 8 at element %lld, want %lld", (long long)i,
             (long long)e, (long long)(i * 64 + want[i] * 8));
  }
  TC_CHECK(tc_e_count_op(off, TC_E_XOR) >= 1, "the offset has no XOR");
  free(v);
  tc_epool_free(p);
  tc_dg_free(&g);
}

static void test_box_errors(void) {
  tc_dgraph g;
  tc_dg_init(&g);
  TC_STR_LOCAL(err);
  int r = tc_dg_root(&g, 64, 0), c = tc_dg_root(&g, 64, 1), r12 = tc_dg_root(&g, 12, 0), out[5];
  TC_CHECK(tc_tma_swizzle_box(&g, r, c, 96, 2, out, &err) == -1, "96-byte swizzle accepted");
  TC_CHECK(strstr(tc_str_cstr(&err), "32, 64 or 128") != NULL, "err: %s", tc_str_cstr(&err));
  TC_CHECK(tc_tma_swizzle_box(&g, r, c, 64, 2, out, &err) == -1, "64 columns for 64B accepted");
  TC_CHECK(strstr(tc_str_cstr(&err), "exactly 32") != NULL, "err: %s", tc_str_cstr(&err));
  TC_CHECK(tc_tma_swizzle_box(&g, r, c, 128, 3, out, &err) == -1, "3-byte elements accepted");
  TC_CHECK(tc_tma_swizzle_box(&g, r12, c, 128, 2, out, &err) == -1, "12 rows accepted");
  TC_CHECK(strstr(tc_str_cstr(&err), "multiple of 8") != NULL, "err: %s", tc_str_cstr(&err));
  TC_CHECK(tc_tma_swizzle_box(&g, r, r, 128, 2, out, &err) == -1, "one axis twice accepted");
  TC_CHECK(tc_tma_swizzle_box(&g, r, 77, 128, 2, out, &err) == -1, "no such axis accepted");
  TC_CHECK(g.nxf == 0, "a refused box changed the graph");
  tc_dg_free(&g);
}

/* ---- through a tensor --------------------------------------------------- */

static void test_swizzle_for(void) {
  static const struct { tc_dtype t; int64_t inner; tc_tma_swizzle want; } cases[] = {
      {TC_BF16, 256, TC_TMA_SWIZZLE_128B}, {TC_BF16, 64, TC_TMA_SWIZZLE_128B},
      {TC_BF16, 32, TC_TMA_SWIZZLE_64B},   {TC_F16, 16, TC_TMA_SWIZZLE_32B},
      {TC_BF16, 8, TC_TMA_SWIZZLE_NONE},   {TC_BF16, 48, TC_TMA_SWIZZLE_32B},
      {TC_F32, 16, TC_TMA_SWIZZLE_64B},    {TC_F32, 12, TC_TMA_SWIZZLE_NONE},
      {TC_I8, 384, TC_TMA_SWIZZLE_128B},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    tc_fusion *f = tc_fusion_new();
    int64_t shape[2] = {8, cases[i].inner};
    tc_tensor *t0 = tc_input(f, cases[i].t, 2, shape), *t1 = tc_set(f, t0);
    tc_add_output(f, t1);
    TC_CHECK_EQ_INT(tc_tma_swizzle_for(t1), cases[i].want);
    tc_fusion_free(f);
  }
}

/* A [rows, cols] copy through shared memory whose buffer is laid out as
 * swizzled boxes; checks the layout through the tensor (offset of every
 * element) and returns the fusion for a run. */
typedef struct swz_copy {
  tc_fusion *f;
  tc_tensor *t0, *t1, *t2;
} swz_copy;

static swz_copy swizzled_copy(tc_dtype dt, int64_t rows, int64_t cols, tc_tma_swizzle sw) {
  swz_copy s;
  s.f = tc_fusion_new();
  int64_t shape[2] = {rows, cols};
  s.t0 = tc_input(s.f, dt, 2, shape);
  s.t1 = tc_set(s.f, s.t0);
  s.t2 = tc_set(s.f, s.t1);
  tc_add_output(s.f, s.t2);
  OK(s.f, tc_set_memory_type(s.t1, TC_MEM_SHARED));
  OK(s.f, tc_set_ldst_type(s.t1, TC_LDST_BULK_TENSOR));
  OK(s.f, tc_schedule_tma_swizzle(s.t1, sw));
  return s;
}

static void check_tensor_layout(tc_dtype dt, int64_t rows, int64_t cols, tc_tma_swizzle sw) {
  swz_copy s = swizzled_copy(dt, rows, cols, sw);
  int esz = (int)tc_dtype_size(dt);
  int64_t row_elems = (int64_t)sw / esz;
  TC_REQUIRE(tc_tensor_nloop(s.t1) == 6, "loop rank %d", tc_tensor_nloop(s.t1));
  TC_CHECK_EQ_INT(tc_tensor_nalloc(s.t1), 6);
  int64_t want[6] = {cols / row_elems, rows / 8, sw / 16, 128 / sw, sw / 16, 16 / esz};
  for (int k = 0; k < 6; k++) {
    TC_CHECK_EQ_INT(tc_tensor_loop_extent(s.t1, k), want[k]);
    TC_CHECK_EQ_INT(tc_tensor_alloc_axis(s.t1, k), tc_tensor_loop_axis(s.t1, k));
  }
  const tc_dgraph *g = &s.f->g;
  tc_epool *p = tc_epool_new();
  const tc_expr **v = tc_xcalloc((size_t)g->naxes, sizeof *v);
  v[s.t1->logical[0]] = tc_e_var(p, "r", 0, rows - 1);
  v[s.t1->logical[1]] = tc_e_var(p, "c", 0, cols - 1);
  tc_dg_walk(p, g, v, NULL);
  const tc_expr *off = row_major(p, g, v, s.t1->alloc, s.t1->nalloc);
  TC_REQUIRE(off != NULL, "allocation not reached from the logical domain");
  int bad = 0;
  for (int64_t i = 0; i < rows && bad < 5; i++)
    for (int64_t j = 0; j < cols && bad < 5; j++) {
      int64_t vv[2] = {i, j};
      int64_t byte = tc_e_eval(off, vv) * esz, box = j / row_elems;
      int64_t want_b = box * rows * sw + cute_swizzle(swizzle_b(sw), 4, 3, i * sw + (j % row_elems) * esz);
      if (byte != want_b) bad++;
      TC_CHECK(byte == want_b, "%s S=%d (%lld, %lld): byte %lld, want %lld", tc_dtype_name(dt), (int)sw,
               (long long)i, (long long)j, (long long)byte, (long long)want_b);
    }
  free(v);
  tc_epool_free(p);
  tc_fusion_free(s.f);
}

static void test_tensor_layout(void) {
  check_tensor_layout(TC_BF16, 64, 256, TC_TMA_SWIZZLE_128B); /* LdStMatrixSet's TMA load */
  check_tensor_layout(TC_F16, 16, 64, TC_TMA_SWIZZLE_64B);
  check_tensor_layout(TC_F32, 8, 24, TC_TMA_SWIZZLE_32B);
  check_tensor_layout(TC_F32, 16, 64, TC_TMA_SWIZZLE_128B);
}

static void test_schedule_tma_errors(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {12, 64}, one[1] = {64};
  tc_tensor *t0 = tc_input(f, TC_BF16, 2, shape), *t1 = tc_set(f, t0), *t2 = tc_set(f, t1);
  tc_add_output(f, t2);
  TC_CHECK(tc_schedule_tma_swizzle(t0, TC_TMA_SWIZZLE_128B) == TC_ERR_SCHEDULE, "input accepted");
  TC_CHECK(strstr(tc_fusion_error(f), "fusion input") != NULL, "err: %s", tc_fusion_error(f));
  TC_CHECK(tc_schedule_tma_swizzle(t1, (tc_tma_swizzle)48) == TC_ERR_ARGUMENT, "48 bytes accepted");
  TC_CHECK(tc_schedule_tma_swizzle(t1, TC_TMA_SWIZZLE_128B) == TC_ERR_SCHEDULE, "12 rows accepted");
  TC_CHECK(strstr(tc_fusion_error(f), "multiple of 8") != NULL, "err: %s", tc_fusion_error(f));
  OK(f, tc_split(t1, 0, 4, 1)); /* [3, 4, 64] */
  TC_CHECK(tc_schedule_tma_swizzle(t1, TC_TMA_SWIZZLE_128B) == TC_ERR_SCHEDULE, "4 rows accepted");
  OK(f, tc_merge(t1, 0, 1));
  OK(f, tc_split(t1, 1, 48, 1)); /* [12, 2, 48] */
  OK(f, tc_reorder(t1, 1, (int[]){0}, (int[]){1})); /* [2, 12, 48] */
  TC_CHECK(tc_schedule_tma_swizzle(t1, TC_TMA_SWIZZLE_128B) == TC_ERR_SCHEDULE, "48 bf16 for 128B accepted");
  TC_CHECK(strstr(tc_fusion_error(f), "not a multiple of the 64 bf16") != NULL, "err: %s", tc_fusion_error(f));
  OK(f, tc_parallelize(t1, -1, TC_TIDX));
  TC_CHECK(tc_schedule_tma_swizzle(t1, TC_TMA_SWIZZLE_32B) == TC_ERR_SCHEDULE, "TIDx box axis accepted");
  TC_CHECK(strstr(tc_fusion_error(f), "must be serial") != NULL, "err: %s", tc_fusion_error(f));
  OK(f, tc_parallelize(t1, -1, TC_SERIAL));
  OK(f, tc_schedule_tma_swizzle(t1, TC_TMA_SWIZZLE_NONE)); /* leaves the loop alone */
  TC_CHECK_EQ_INT(tc_tensor_nloop(t1), 3);
  TC_CHECK_EQ_INT(tc_tensor_nalloc(t1), 3);
  tc_fusion *f1 = tc_fusion_new();
  tc_tensor *u0 = tc_input(f1, TC_BF16, 1, one), *u1 = tc_set(f1, u0);
  tc_add_output(f1, u1);
  TC_CHECK(tc_schedule_tma_swizzle(u1, TC_TMA_SWIZZLE_128B) == TC_ERR_SCHEDULE, "1-d box accepted");
  TC_CHECK(strstr(tc_fusion_error(f1), "two loop axes") != NULL, "err: %s", tc_fusion_error(f1));
  tc_fusion_free(f1);
  tc_fusion_free(f);
}

/* Host copies of test data: 16-bit patterns or floats as raw words. */
static void fill_words(void *p, tc_dtype dt, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    if (tc_dtype_size(dt) == 2) ((uint16_t *)p)[i] = (uint16_t)((seed >> 16) & 0x3fff); /* finite */
    else ((uint32_t *)p)[i] = (seed >> 9) | 0x3f800000u; /* floats in [1, 2) */
  }
}

/* Runs the copy; returns 1 when it ran (0 and a skip without a device). */
static int run_copy(swz_copy *s, tc_dtype dt, int64_t n, const char *what) {
  tc_status st = TC_OK;
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, what};
  tc_kernel *k = tc_compile(s->f, &o, &st);
  if (!k) {
    TC_CHECK(k != NULL, "compile %s: %s", what, tc_fusion_error(s->f));
    return 0;
  }
  TC_CHECK(strstr(tc_kernel_source(k), "^") != NULL, "%s: no XOR in the kernel:\n%s", what,
           tc_kernel_source(k));
  size_t esz = tc_dtype_size(dt);
  unsigned char *in = malloc((size_t)n * esz), *out = malloc((size_t)n * esz);
  fill_words(in, dt, (size_t)n, 7u);
  memset(out, 0xa5, (size_t)n * esz);
  void *args[2] = {in, out};
  st = tc_kernel_run(k, args, NULL, NULL);
  int ran = st == TC_OK;
  if (st == TC_ERR_NO_DEVICE) {
    free(in), free(out), tc_kernel_free(k);
    return 0;
  }
  TC_CHECK(st == TC_OK, "run %s: %s", what, tc_kernel_error(k));
  if (ran) TC_CHECK(memcmp(in, out, (size_t)n * esz) == 0, "%s: the copy differs from its input", what);
  free(in), free(out);
  tc_kernel_free(k);
  return ran;
}

/* gmem -> swizzled shared (loop domain = allocation domain) -> gmem. */
static void test_run_swizzled_copy(void) {
  swz_copy s = swizzled_copy(TC_BF16, 16, 128, TC_TMA_SWIZZLE_128B);
  if (!run_copy(&s, TC_BF16, 16 * 128, "swz_copy") && tc_test_failed_checks == 0) {
    tc_fusion_free(s.f);
    TC_SKIP("no OpenCL device");
  }
  tc_fusion_free(s.f);
}

/* The shared buffer keeps its swizzled allocation while its loop domain
 * comes from an abstract tensor on another branch of its graph: rows
 * split by 4 with the column chunks of 8 on TIDx (not a box traversal). */
static void test_run_alternate_loop_domain(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {16, 64};
  tc_tensor *t0 = tc_input(f, TC_F32, 2, shape), *t1 = tc_set(f, t0), *t2 = tc_set(f, t1);
  tc_add_output(f, t2);
  OK(f, tc_set_memory_type(t1, TC_MEM_SHARED));
  tc_abstract_tensor *at = tc_abstract_tensor_new(t1); /* [16, 64] */
  OK(f, tc_abstract_split(at, 1, 8, 1));               /* [16, 8, 8] */
  OK(f, tc_abstract_split(at, 0, 4, 1));               /* [4, 4, 8, 8] */
  int o[2] = {0, 2}, n[2] = {2, 0};
  OK(f, tc_abstract_reorder(at, 2, o, n));             /* [8, 4, 4, 8] */
  OK(f, tc_abstract_merge(at, 1, 3));                  /* [8, 4*8, 4]: non-adjacent */
  TC_CHECK_EQ_INT(tc_abstract_tensor_rank(at), 3);
  TC_CHECK_EQ_INT(tc_abstract_tensor_extent(at, 1), 32);
  OK(f, tc_schedule_tma_swizzle(t1, TC_TMA_SWIZZLE_128B)); /* f32: 2 boxes of 32 */
  int alloc_axis0 = tc_tensor_alloc_axis(t1, 0);
  OK(f, tc_set_loop_domain(t1, tc_abstract_tensor_rank(at), tc_abstract_tensor_axes(at)));
  TC_CHECK_EQ_INT(tc_tensor_nloop(t1), 3);
  TC_CHECK_EQ_INT(tc_tensor_alloc_axis(t1, 0), alloc_axis0); /* the allocation is untouched */
  TC_CHECK_EQ_INT(tc_tensor_nalloc(t1), 6);
  OK(f, tc_parallelize(t1, 0, TC_TIDX));
  OK(f, tc_split(t2, 1, 8, 0)); /* [16, 8 (TIDx), 8] */
  OK(f, tc_parallelize(t2, 1, TC_TIDX));
  swz_copy s = {f, t0, t1, t2};
  if (!run_copy(&s, TC_F32, 16 * 64, "alt_loop") && tc_test_failed_checks == 0) {
    tc_abstract_tensor_free(at);
    tc_fusion_free(f);
    TC_SKIP("no OpenCL device");
  }
  tc_abstract_tensor_free(at);
  tc_fusion_free(f);
}

/* ---- the abstract tensor ------------------------------------------------ */

/* One step of the tutorial's sequence, applied to both. */
typedef struct twin {
  tc_fusion *f;
  tc_abstract_tensor *at;
  tc_tensor *t;
  int step;
} twin;

static void twin_same(twin *w) {
  const tc_dgraph *g = &w->f->g;
  w->step++;
  TC_REQUIRE(tc_abstract_tensor_rank(w->at) == tc_tensor_nloop(w->t), "step %d: rank %d vs %d", w->step,
             tc_abstract_tensor_rank(w->at), tc_tensor_nloop(w->t));
  for (int i = 0; i < tc_tensor_nloop(w->t); i++) {
    const tc_axis *a = &g->axes[tc_abstract_tensor_axis(w->at, i)], *b = &g->axes[tc_tensor_loop_axis(w->t, i)];
    TC_CHECK(a->extent == b->extent && a->sig == b->sig, "step %d axis %d: extent %lld vs %lld%s", w->step,
             i, (long long)a->extent, (long long)b->extent, a->sig == b->sig ? "" : ", signatures differ");
  }
}

static void twin_split(twin *w, int axis, int64_t factor) {
  OK(w->f, tc_abstract_split(w->at, axis, factor, 1));
  OK(w->f, tc_split(w->t, axis, factor, 1));
  twin_same(w);
}

static void twin_merge(twin *w, int a, int b) {
  OK(w->f, tc_abstract_merge(w->at, a, b));
  OK(w->f, tc_merge(w->t, a, b));
  twin_same(w);
}

static void twin_reorder(twin *w, int n, const int *old, const int *new_) {
  OK(w->f, tc_abstract_reorder(w->at, n, old, new_));
  OK(w->f, tc_reorder(w->t, n, old, new_));
  twin_same(w);
}

static void check_extents(const tc_abstract_tensor *at, int n, const int64_t *want, const char *what) {
  TC_REQUIRE(tc_abstract_tensor_rank(at) == n, "%s: rank %d, want %d", what, tc_abstract_tensor_rank(at), n);
  for (int i = 0; i < n; i++)
    TC_CHECK(tc_abstract_tensor_extent(at, i) == want[i], "%s axis %d: extent %lld, want %lld", what, i,
             (long long)tc_abstract_tensor_extent(at, i), (long long)want[i]);
}

/* nvFuser's scheduleLdStMatrix, call for call, on an abstract tensor of
 * tv1 and on tv2 itself (both tiled (GM, GN, cta_m(2), cta_n(1), m(64),
 * n(256)) first). */
static void test_tutorial_sequence_matches_tensor_calls(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {256, 512};
  tc_tensor *t0 = tc_input(f, TC_BF16, 2, shape), *t1 = tc_set(f, t0), *t2 = tc_set(f, t1);
  tc_add_output(f, t2);
  OK(f, tc_split(t2, 0, 128, 1));
  OK(f, tc_split(t2, -1, 256, 1));
  OK(f, tc_reorder(t2, 2, (int[]){-2, -3}, (int[]){-3, -2}));
  OK(f, tc_split(t2, -2, 64, 1));
  OK(f, tc_split(t2, -1, 256, 1));
  OK(f, tc_reorder(t2, 2, (int[]){-2, -3}, (int[]){-3, -2}));
  OK(f, tc_propagate_transforms(t2));
  twin w = {f, tc_abstract_tensor_new(t1), t2, 0};
  twin_same(&w);
  check_extents(w.at, 6, (int64_t[]){2, 2, 2, 1, 64, 256}, "tiled");
  twin_split(&w, -1, 64);
  twin_reorder(&w, 2, (int[]){-2, -3}, (int[]){-3, -2});
  check_extents(w.at, 7, (int64_t[]){2, 2, 2, 1, 4, 64, 64}, "(no, m, ni)");
  twin_split(&w, -2, 16);
  twin_split(&w, -1, 16);
  twin_reorder(&w, 2, (int[]){-2, -3}, (int[]){-3, -2});
  check_extents(w.at, 9, (int64_t[]){2, 2, 2, 1, 4, 4, 4, 16, 16}, "(no, mo, nio, mi, nii)");
  twin_split(&w, -2, 8);
  twin_split(&w, -1, 8);
  twin_split(&w, -1, 2);
  twin_reorder(&w, 3, (int[]){-5, -4, -2}, (int[]){-2, -5, -4});
  check_extents(w.at, 12, (int64_t[]){2, 2, 2, 1, 4, 4, 4, 8, 4, 2, 2, 2},
                "(no, mo, nio, mii, niiio, niio, mio, niiii)");
  twin_merge(&w, -2, -1);
  twin_merge(&w, -2, -1);
  check_extents(w.at, 10, (int64_t[]){2, 2, 2, 1, 4, 4, 4, 8, 4, 8}, "(.., niiio, (niio*mio*niiii))");
  twin_reorder(&w, 2, (int[]){-5, -4}, (int[]){-4, -5});
  twin_merge(&w, -4, -3);
  twin_merge(&w, -3, -2);
  check_extents(w.at, 8, (int64_t[]){2, 2, 2, 1, 4, 4, 128, 8}, "(no, nio, (mo*mii*niiio), v)");
  twin_merge(&w, -4, -3);
  check_extents(w.at, 7, (int64_t[]){2, 2, 2, 1, 16, 128, 8}, "scheduleLdStMatrix");
  /* t1's loop domain is untouched until it is set */
  TC_CHECK_EQ_INT(tc_tensor_nloop(t1), 6);
  OK(f, tc_set_loop_domain(t1, tc_abstract_tensor_rank(w.at), tc_abstract_tensor_axes(w.at)));
  for (int i = 0; i < 7; i++) TC_CHECK_EQ_INT(tc_tensor_loop_axis(t1, i), tc_abstract_tensor_axis(w.at, i));
  /* a copy is independent */
  tc_abstract_tensor *cp = tc_abstract_tensor_copy(w.at);
  OK(f, tc_abstract_split(cp, -1, 2, 1));
  TC_CHECK_EQ_INT(tc_abstract_tensor_rank(cp), 8);
  TC_CHECK_EQ_INT(tc_abstract_tensor_rank(w.at), 7);
  tc_abstract_tensor_free(cp);
  tc_abstract_tensor_free(w.at);
  tc_fusion_free(f);
}

/* merge(a, b) of non-adjacent axes: extent a*b at the first position,
 * value a_val * extent(b) + b_val. */
static void test_nonadjacent_merge(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[3] = {2, 3, 5};
  tc_tensor *t0 = tc_input(f, TC_F32, 3, shape), *t1 = tc_set(f, t0);
  tc_add_output(f, t1);
  tc_abstract_tensor *base = tc_abstract_tensor_new(t1);
  for (int order = 0; order < 2; order++) {
    tc_abstract_tensor *at = tc_abstract_tensor_copy(base);
    int outer = order ? 2 : 0, inner = order ? 0 : 2;
    OK(f, tc_abstract_merge(at, outer, inner));
    check_extents(at, 2, (int64_t[]){10, 3}, "merged");
    const tc_dgraph *g = &f->g;
    tc_epool *p = tc_epool_new();
    const tc_expr **v = tc_xcalloc((size_t)g->naxes, sizeof *v);
    v[tc_abstract_tensor_axis(at, 0)] = tc_e_var(p, "m", 0, 9);
    v[tc_abstract_tensor_axis(at, 1)] = tc_e_var(p, "k", 0, 2);
    tc_dg_walk(p, g, v, NULL);
    for (int64_t m = 0; m < 10; m++) {
      int64_t vv[2] = {m, 1};
      int64_t a0 = tc_e_eval(v[t1->logical[0]], vv), a2 = tc_e_eval(v[t1->logical[2]], vv);
      int64_t want0 = order ? m % 2 : m / 5, want2 = order ? m / 2 : m % 5;
      TC_CHECK(a0 == want0 && a2 == want2, "merge(%d, %d) value %lld -> (%lld, %lld), want (%lld, %lld)",
               outer, inner, (long long)m, (long long)a0, (long long)a2, (long long)want0, (long long)want2);
    }
    free(v);
    tc_epool_free(p);
    OK(f, tc_set_loop_domain(t1, 2, tc_abstract_tensor_axes(at)));
    tc_abstract_tensor_free(at);
  }
  tc_abstract_tensor_free(base);
  tc_fusion_free(f);
}

static void test_abstract_errors(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {8, 16};
  tc_tensor *t0 = tc_input(f, TC_F32, 2, shape), *t1 = tc_set(f, t0);
  tc_add_output(f, t1);
  tc_abstract_tensor *at = tc_abstract_tensor_new(t1);
  TC_CHECK(tc_abstract_split(at, 2, 4, 1) == TC_ERR_ARGUMENT, "axis 2 of 2 accepted");
  TC_CHECK(strstr(tc_fusion_error(f), "tc_abstract_split: no axis 2") &&
               strstr(tc_fusion_error(f), "abstract T1[iS{8}, iS{16}]"),
           "err: %s", tc_fusion_error(f));
  TC_CHECK(tc_abstract_split(at, 0, 0, 1) == TC_ERR_ARGUMENT, "factor 0 accepted");
  TC_CHECK(tc_abstract_merge(at, 1, 1) == TC_ERR_ARGUMENT, "self merge accepted");
  TC_CHECK(tc_abstract_merge(at, 0, -3) == TC_ERR_ARGUMENT, "axis -3 accepted");
  TC_CHECK(tc_abstract_reorder(at, 2, (int[]){0, 1}, (int[]){1, 1}) == TC_ERR_ARGUMENT, "twice accepted");
  TC_CHECK(strstr(tc_fusion_error(f), "named twice") != NULL, "err: %s", tc_fusion_error(f));
  TC_CHECK(tc_abstract_reorder(at, 1, (int[]){5}, (int[]){0}) == TC_ERR_ARGUMENT, "axis 5 accepted");
  TC_CHECK(tc_abstract_reorder(at, -1, NULL, NULL) == TC_ERR_ARGUMENT, "-1 pairs accepted");
  TC_CHECK_EQ_INT(tc_abstract_tensor_rank(at), 2); /* nothing changed */
  TC_CHECK_EQ_INT(tc_abstract_tensor_axis(at, 2), -1);
  TC_CHECK_EQ_INT(tc_abstract_tensor_extent(at, -3), -1);
  OK(f, tc_parallelize(t1, 0, TC_TIDX)); /* the abstract tensor shares t1's axis */
  TC_CHECK(tc_abstract_merge(at, 0, 1) == TC_ERR_SCHEDULE, "merge of a TIDx axis accepted");
  TC_CHECK(strstr(tc_fusion_error(f), "parallelized (TIDx, Serial)") != NULL, "err: %s", tc_fusion_error(f));
  OK(f, tc_parallelize(t1, 0, TC_SERIAL));
  tc_abstract_tensor_free(at);
  tc_abstract_tensor_free(NULL);
  TC_CHECK(tc_abstract_tensor_new(NULL) == NULL, "an abstract tensor of nothing");
  TC_CHECK(tc_abstract_split(NULL, 0, 2, 1) == TC_ERR_ARGUMENT, "NULL accepted");
  tc_fusion_free(f);
}

static void test_set_domain_errors(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {8, 16};
  tc_tensor *t0 = tc_input(f, TC_F32, 2, shape), *t1 = tc_set(f, t0), *t2 = tc_set(f, t1);
  tc_add_output(f, t2);
  tc_abstract_tensor *at = tc_abstract_tensor_new(t1);
  OK(f, tc_abstract_split(at, 1, 4, 1)); /* [8, 4, 4] */
  const int *ax = tc_abstract_tensor_axes(at);
  int id_row = ax[0], id_o = ax[1], id_i = ax[2], id_col = tc_tensor_loop_axis(t1, 1);
  TC_CHECK(tc_set_loop_domain(t0, 3, ax) == TC_ERR_SCHEDULE, "input accepted");
  TC_CHECK(tc_set_loop_domain(t2, 3, ax) == TC_ERR_SCHEDULE, "t1's axes accepted for t2");
  TC_CHECK(strstr(tc_fusion_error(f), "is not an axis of T2") != NULL, "err: %s", tc_fusion_error(f));
  TC_CHECK(tc_set_loop_domain(t1, 2, ax) == TC_ERR_SCHEDULE, "a missing split output accepted");
  TC_CHECK(strstr(tc_fusion_error(f), "do not determine") != NULL, "err: %s", tc_fusion_error(f));
  int redundant[4] = {id_row, id_o, id_i, id_col};
  TC_CHECK(tc_set_loop_domain(t1, 4, redundant) == TC_ERR_SCHEDULE, "an axis with its split accepted");
  TC_CHECK(strstr(tc_fusion_error(f), "more than once") != NULL, "err: %s", tc_fusion_error(f));
  int twice[3] = {id_row, id_row, id_col};
  TC_CHECK(tc_set_loop_domain(t1, 3, twice) == TC_ERR_ARGUMENT, "an axis twice accepted");
  TC_CHECK(strstr(tc_fusion_error(f), "the same axis") != NULL, "err: %s", tc_fusion_error(f));
  int bogus[2] = {id_row, 100000};
  TC_CHECK(tc_set_loop_domain(t1, 2, bogus) == TC_ERR_ARGUMENT, "axis 100000 accepted");
  TC_CHECK(tc_set_loop_domain(t1, 0, ax) == TC_ERR_ARGUMENT, "an empty domain accepted");
  TC_CHECK(tc_set_loop_domain(t1, 2, NULL) == TC_ERR_ARGUMENT, "NULL accepted");
  TC_CHECK_EQ_INT(tc_tensor_nloop(t1), 2); /* nothing changed */
  OK(f, tc_set_alloc_domain(t1, 3, ax)); /* t1 is in registers */
  TC_CHECK_EQ_INT(tc_tensor_nalloc(t1), 3);
  /* global memory keeps its row-major allocation */
  int t2ax[2] = {tc_tensor_loop_axis(t2, 0), tc_tensor_loop_axis(t2, 1)};
  TC_CHECK(tc_set_alloc_domain(t2, 2, t2ax) == TC_ERR_SCHEDULE, "global allocation accepted");
  TC_CHECK(strstr(tc_fusion_error(f), "global memory") != NULL, "err: %s", tc_fusion_error(f));
  /* a reordered allocation (column-major) for a local tensor */
  int cm[2] = {id_col, id_row};
  OK(f, tc_set_alloc_domain(t1, 2, cm));
  TC_CHECK_EQ_INT(tc_tensor_nalloc(t1), 2);
  TC_CHECK_EQ_INT(tc_tensor_alloc_axis(t1, 0), id_col);
  TC_CHECK_EQ_INT(tc_tensor_alloc_axis(t1, 5), -1);
  TC_CHECK_EQ_INT(tc_tensor_loop_axis(t1, -3), -1);
  tc_abstract_tensor_free(at);
  tc_fusion_free(f);
}

int main(void) {
  TC_RUN(test_box_equals_cute_swizzle);
  TC_RUN(test_box_128b_bf16_table);
  TC_RUN(test_box_errors);
  TC_RUN(test_swizzle_for);
  TC_RUN(test_tensor_layout);
  TC_RUN(test_schedule_tma_errors);
  TC_RUN(test_run_swizzled_copy);
  TC_RUN(test_run_alternate_loop_domain);
  TC_RUN(test_tutorial_sequence_matches_tensor_calls);
  TC_RUN(test_nonadjacent_merge);
  TC_RUN(test_abstract_errors);
  TC_RUN(test_set_domain_errors);
  TC_MAIN_END();
}
