/* test_aggregate_load.c - the tile IR (src/tile) and its aggregate-load
 * pass (after ROCm Triton's): GEMM and MoE-gather kernels run on PoCL with and
 * without the pass against a plain C GEMM; the chunked loop when A does
 * not fit in shared memory; the base-pointer regression (B = identity, so
 * C shows which columns of A each slice read); every legality failure
 * reported with its reason and the kernel left unchanged; the builder's
 * and emitter's errors; CUDA sources through NVRTC and HIP sources
 * through hipcc when they are there.
 *
 * Inputs are small integers, so every sum is exact in f32 (and f16) and
 * results must equal the reference exactly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "tile/passes.h"
#include "tile/tile.h"
#include "tile/tile_emit.h"
#include "tile/tile_gemm.h"
#include "runtime/host.h"
#include "runtime/runtime.h"

static tc_cl *g_cl;
static char g_cl_why[512];

/* ---- helpers ---- */

typedef struct built {
  tc_tile_kernel *k;
  tc_tile_emitted em;
  char ir_before[1 << 14], ir_after[1 << 14];
} built;

static void opts(tc_tile_pass_options *o, int aggregate, int64_t limit) {
  tc_tile_pass_options_default(o);
  o->aggregate_load = aggregate;
  if (limit) o->smem_limit = limit;
}

/* Builds, runs the passes, emits for target; 0 on success. */
static int build(tc_tile_gemm_desc *d, const tc_tile_pass_options *po, tc_target t, built *b) {
  TC_STR_LOCAL(err);
  memset(b, 0, sizeof *b);
  if (tc_tile_gemm_resolve(d, &err) != 0) {
    TC_CHECK(0, "resolve: %s", tc_str_cstr(&err));
    return -1;
  }
  b->k = tc_tile_gemm_build(d, NULL, &err);
  if (!b->k) {
    TC_CHECK(0, "build: %s", tc_str_cstr(&err));
    return -1;
  }
  tc_str s;
  tc_str_init(&s);
  tc_tile_print(&s, b->k);
  snprintf(b->ir_before, sizeof b->ir_before, "%s", tc_str_cstr(&s));
  tc_tile_run_passes(b->k, po);
  tc_str_clear(&s);
  tc_tile_print(&s, b->k);
  snprintf(b->ir_after, sizeof b->ir_after, "%s", tc_str_cstr(&s));
  tc_str_free(&s);
  if (tc_tile_emit(b->k, tc_tile_dialect(t), &b->em, &err) != TC_OK) {
    TC_CHECK(0, "emit: %s", tc_str_cstr(&err));
    return -1;
  }
  return 0;
}

static void unbuild(built *b) {
  tc_tile_emitted_free(&b->em);
  tc_tile_kernel_free(b->k);
}

static const tc_tile_report *agg_report(const built *b) {
  return tc_tile_find_report(b->k, "aggregate-load");
}

/* Small integer inputs (exact sums). */
static void fill_ints(tc_dtype t, void *buf, size_t n, int seed, int range) {
  for (size_t i = 0; i < n; i++)
    tc_host_write(t, buf, i, (double)((int)((i * 37 + (size_t)seed * 11 + 5) % (size_t)range) - range / 2));
}

typedef struct data {
  void *a, *b, *c;
  int32_t *ids;
  double *want, *bound;
} data;

static void data_new(const tc_tile_gemm_desc *d, data *x) {
  size_t es = d->dtype == TC_F16 ? 2 : 4;
  x->a = calloc(tc_tile_gemm_elems(d, 'A'), es);
  x->b = calloc(tc_tile_gemm_elems(d, 'B'), es);
  x->c = calloc(tc_tile_gemm_elems(d, 'C'), es);
  x->ids = d->moe ? calloc(tc_tile_gemm_elems(d, 'I'), sizeof(int32_t)) : NULL;
  x->want = calloc(tc_tile_gemm_elems(d, 'C'), sizeof(double));
  x->bound = calloc(tc_tile_gemm_elems(d, 'C'), sizeof(double));
  fill_ints(d->dtype, x->a, tc_tile_gemm_elems(d, 'A'), 1, 7);
  fill_ints(d->dtype, x->b, tc_tile_gemm_elems(d, 'B'), 2, 5);
  if (d->moe) tc_tile_gemm_ids(d, x->ids);
}

static void data_free(data *x) {
  free(x->a), free(x->b), free(x->c), free(x->ids), free(x->want), free(x->bound);
}

/* Runs b on PoCL into x->c (first poisoned with 12345); 0 on success. */
static int run(const tc_tile_gemm_desc *d, built *b, data *x) {
  size_t n = tc_tile_gemm_elems(d, 'C');
  for (size_t i = 0; i < n; i++) tc_host_write(d->dtype, x->c, i, 12345.0);
  tc_str e;
  tc_str_init(&e);
  tc_status st = tc_tile_gemm_run(TC_TARGET_OPENCL, g_cl, NULL, &b->em, d, x->a, x->b, x->c, x->ids,
                                  NULL, 0, NULL, &e);
  TC_CHECK(st == TC_OK, "run: %s: %s", tc_status_name(st), tc_str_cstr(&e));
  tc_str_free(&e);
  return st == TC_OK ? 0 : -1;
}

/* Number of elements of C that differ from the reference (exactly). */
static int64_t mismatches(const tc_tile_gemm_desc *d, data *x) {
  tc_tile_gemm_reference(d, x->a, x->b, x->ids, x->want, x->bound);
  int64_t bad = 0, first = -1;
  size_t n = tc_tile_gemm_elems(d, 'C');
  for (size_t i = 0; i < n; i++)
    if (tc_host_read(d->dtype, x->c, i) != x->want[i]) {
      if (first < 0) first = (int64_t)i;
      bad++;
    }
  if (bad)
    fprintf(stderr, "  %lld mismatches; first at %lld (row %lld col %lld): got %g want %g\n",
            (long long)bad, (long long)first, (long long)(first / d->n), (long long)(first % d->n),
            tc_host_read(d->dtype, x->c, (size_t)first), x->want[first]);
  return bad;
}

#define NEED_CL()                                                     \
  do {                                                                \
    if (!g_cl) TC_SKIP("no OpenCL device: %s", g_cl_why);             \
  } while (0)

/* Builds d with and without the pass, runs both, checks both exactly
 * against the reference and against each other; returns the report of
 * the run with the pass (copied into *rep). */
static void with_and_without(tc_tile_gemm_desc *d, int64_t limit, tc_tile_report *rep) {
  tc_tile_pass_options on, off;
  opts(&on, 1, limit);
  opts(&off, 0, limit);
  built b1, b0;
  data x;
  if (build(d, &on, TC_TARGET_OPENCL, &b1) != 0) return;
  if (build(d, &off, TC_TARGET_OPENCL, &b0) != 0) {
    unbuild(&b1);
    return;
  }
  if (rep) *rep = *agg_report(&b1);
  data_new(d, &x);
  size_t bytes = tc_tile_gemm_elems(d, 'C') * (d->dtype == TC_F16 ? 2 : 4);
  void *c_off = malloc(bytes);
  if (run(d, &b0, &x) == 0) {
    TC_CHECK(mismatches(d, &x) == 0, "without the pass: C differs from the reference");
    memcpy(c_off, x.c, bytes);
    if (run(d, &b1, &x) == 0) {
      TC_CHECK(mismatches(d, &x) == 0, "with the pass: C differs from the reference");
      TC_CHECK(memcmp(c_off, x.c, bytes) == 0, "with and without the pass differ");
    }
  }
  free(c_off);
  data_free(&x);
  unbuild(&b0);
  unbuild(&b1);
}

/* ---- the IR ---- */

static void test_ir_build_and_print(void) {
  tc_tile_gemm_desc d;
  tc_tile_gemm_desc_init(&d, 64, 48, 128);
  d.block_m = 32, d.block_n = 16, d.block_k = 16;
  tc_tile_pass_options o;
  opts(&o, 1, 0);
  built b;
  if (build(&d, &o, TC_TARGET_OPENCL, &b) != 0) return;
  /* before: the load of A is in the loop, offs_k is 0..16 */
  TC_CHECK(strstr(b.ir_before, "scf.for") && strstr(b.ir_before, "tt.dot"), "%s", b.ir_before);
  TC_CHECK(strstr(b.ir_before, "tt.make_range {end = 16 : i32, start = 0 : i32}"), "%s", b.ir_before);
  TC_CHECK(!strstr(b.ir_before, "local_alloc"), "%s", b.ir_before);
  /* after: one 32x128 load into a shared buffer, a 32x16 subview per iteration */
  TC_CHECK(strstr(b.ir_after, "tt.make_range {end = 128 : i32, start = 0 : i32}"), "%s", b.ir_after);
  TC_CHECK(strstr(b.ir_after, "ttg.local_alloc") &&
               strstr(b.ir_after, "-> !ttg.memdesc<32x128xf32, #shared>"), "%s", b.ir_after);
  TC_CHECK(strstr(b.ir_after, "ttg.memdesc_subview") &&
               strstr(b.ir_after, "-> !ttg.memdesc<32x16xf32, #shared>"), "%s", b.ir_after);
  TC_CHECK(strstr(b.ir_after, "ttg.local_load"), "%s", b.ir_after);
  /* the loop carries the accumulator and B's pointer only (dce dropped A's) */
  TC_CHECK(strstr(b.ir_after, "-> (tensor<32x16xf32>, tensor<16x16x!tt.ptr<f32>>) : i32 {"), "%s",
           b.ir_after);
  /* exactly one tt.load in the loop now (B's) */
  const char *loop = strstr(b.ir_after, "scf.for");
  int loads = 0;
  for (const char *p = loop; p && (p = strstr(p, "tt.load")); p++) loads++;
  TC_CHECK_EQ_INT(loads, 1);
  const tc_tile_report *r = agg_report(&b);
  TC_REQUIRE(r, "no aggregate-load report");
  TC_CHECK(r->applied, "%s", r->detail);
  TC_CHECK(strstr(r->detail, "32x128 f32, 16384 bytes") && strstr(r->detail, "chunks=1"), "%s",
           r->detail);
  const tc_tile_report *dr = tc_tile_find_report(b.k, "dce");
  TC_CHECK(dr && dr->applied && strstr(dr->detail, "1 dead loop-carried value"), "%s",
           dr ? dr->detail : "no dce report");
  TC_CHECK_EQ_INT(tc_tile_num_reports(b.k), 2);
  tc_str s;
  tc_str_init(&s);
  tc_tile_print_reports(&s, b.k);
  TC_CHECK(strstr(tc_str_cstr(&s), "  aggregate-load: applied: hoisted") &&
               strstr(tc_str_cstr(&s), "  dce: applied: removed"), "%s", tc_str_cstr(&s));
  tc_str_free(&s);
  /* the OpenCL source: a 32x128 shared buffer and a slice read at column k*16 */
  TC_CHECK(strstr(b.em.source, "__local float t_l") && strstr(b.em.source, "[4096];"), "%s",
           b.em.source);
  TC_CHECK_EQ_INT(b.em.smem_bytes, 32 * 128 * 4 + 16 * 16 * 4);
  TC_CHECK_EQ_INT(b.em.grid[0], 2 * 3);
  TC_CHECK_EQ_INT(b.em.block[0], 256);
  TC_CHECK_EQ_INT(b.em.nparams, 4);
  TC_CHECK_STR(b.em.params[3].name, "tc_args");
  unbuild(&b);
}

/* ---- correctness on PoCL ---- */

static void test_plain_gemm(void) {
  NEED_CL();
  tc_tile_report r;
  tc_tile_gemm_desc d;
  tc_tile_gemm_desc_init(&d, 64, 48, 128);
  d.block_m = 32, d.block_n = 16, d.block_k = 16;
  with_and_without(&d, 0, &r);
  TC_CHECK(r.applied && strstr(r.detail, "chunks=1"), "%s", r.detail);
  /* ragged M and N (offs % M, masked store), 256 threads for 1024 elements */
  tc_tile_gemm_desc_init(&d, 50, 40, 96);
  with_and_without(&d, 0, &r);
  TC_CHECK(r.applied, "%s", r.detail);
  /* rows masked on M (version 1.1) instead of wrapped */
  tc_tile_gemm_desc_init(&d, 45, 24, 64);
  d.mask_m = 1, d.block_m = 16, d.block_n = 8, d.block_k = 32;
  with_and_without(&d, 0, &r);
  TC_CHECK(r.applied && strstr(r.detail, "rows masked by the M mask read 0"), "%s", r.detail);
  /* transposed storage: strides */
  tc_tile_gemm_desc_init(&d, 32, 24, 48);
  d.trans_a = d.trans_b = 1, d.block_m = 16, d.block_n = 8, d.block_k = 8;
  with_and_without(&d, 0, &r);
  TC_CHECK(r.applied, "%s", r.detail);
}

static void test_f16_gemm(void) {
  NEED_CL();
  tc_tile_report r;
  tc_tile_gemm_desc d;
  tc_tile_gemm_desc_init(&d, 32, 32, 64);
  d.dtype = TC_F16;
  with_and_without(&d, 0, &r);
  TC_CHECK(r.applied && strstr(r.detail, "32x64 f16, 4096 bytes"), "%s", r.detail);
}

static void test_moe_gather(void) {
  NEED_CL();
  tc_tile_gemm_desc d;
  tc_tile_gemm_desc_init(&d, 64, 32, 64);
  d.moe = 1, d.tokens = 40, d.num_valid = 29;
  d.block_m = 16, d.block_n = 32, d.block_k = 16;
  TC_STR_LOCAL(err);
  TC_REQUIRE(tc_tile_gemm_resolve(&d, &err) == 0, "%s", tc_str_cstr(&err));
  /* the id list has valid ids, ids in [valid, tokens) and padding ids */
  int32_t ids[64];
  tc_tile_gemm_ids(&d, ids);
  int valid = 0, counted_out = 0, pad = 0;
  for (int i = 0; i < 64; i++) {
    valid += ids[i] < 29;
    counted_out += ids[i] >= 29 && ids[i] < 40;
    pad += ids[i] == 40;
  }
  TC_CHECK(valid > 0 && counted_out > 0 && pad > 0, "ids: %d valid, %d >= num_valid, %d padding",
           valid, counted_out, pad);
  tc_tile_pass_options on;
  opts(&on, 1, 0);
  built b;
  if (build(&d, &on, TC_TARGET_OPENCL, &b) != 0) return;
  const tc_tile_report *r = agg_report(&b);
  TC_CHECK(r && r->applied && strstr(r->detail, "rows masked by the M mask read 0") &&
               strstr(r->detail, "16x64 f32"), "%s", r ? r->detail : "");
  TC_CHECK(strstr(b.ir_after, "%sorted_token_ids") && strstr(b.ir_after, "arith.cmpi slt"), "%s",
           b.ir_after);
  data x;
  data_new(&d, &x);
  if (run(&d, &b, &x) == 0) {
    TC_CHECK(mismatches(&d, &x) == 0, "MoE with the pass: C differs from the reference");
    /* masked rows: exactly zero; the others: not all zero */
    int64_t zero_rows = 0, nonzero_valid = 0;
    for (int i = 0; i < 64; i++) {
      int all0 = 1;
      for (int j = 0; j < 32; j++) all0 &= tc_host_read(d.dtype, x.c, (size_t)(i * 32 + j)) == 0;
      if (ids[i] >= 29) zero_rows += all0;
      else nonzero_valid += !all0;
    }
    TC_CHECK_EQ_INT(zero_rows, 64 - valid);
    TC_CHECK(nonzero_valid > 0, "every valid row is zero");
  }
  data_free(&x);
  unbuild(&b);
  /* with and without, and a number of ids that is not a multiple of BLOCK_M */
  with_and_without(&d, 0, NULL);
  tc_tile_gemm_desc_init(&d, 60, 24, 48);
  d.moe = 1, d.tokens = 33, d.num_valid = 20, d.block_m = 16, d.block_n = 8, d.block_k = 16;
  d.dtype = TC_F16;
  with_and_without(&d, 0, NULL);
}

static void test_chunked(void) {
  NEED_CL();
  tc_tile_report r;
  tc_tile_gemm_desc d;
  /* A 32x256 f32 = 32768 bytes; B's tile 16x32 f32 = 2048 bytes.  Limit
   * 12288: 10240 bytes left = 5 slices of 2048 -> 16 slices in chunks of
   * 5, 5, 5, 1 (the last masked past K) */
  tc_tile_gemm_desc_init(&d, 32, 32, 256);
  with_and_without(&d, 12288, &r);
  TC_CHECK(r.applied && strstr(r.detail, "chunks=4 of up to 5 BLOCK_K slices") &&
               strstr(r.detail, "fewer in the last chunk"), "%s", r.detail);
  /* limit 18432: 8 slices per chunk, 2 chunks, no tail */
  with_and_without(&d, 18432, &r);
  TC_CHECK(r.applied && strstr(r.detail, "chunks=2 of up to 8") &&
               !strstr(r.detail, "fewer"), "%s", r.detail);
  /* the IR: an outer loop over chunks around the original loop */
  tc_tile_pass_options o;
  opts(&o, 1, 12288);
  built b;
  if (build(&d, &o, TC_TARGET_OPENCL, &b) == 0) {
    const char *f1 = strstr(b.ir_after, "scf.for");
    TC_CHECK(f1 && strstr(f1 + 1, "scf.for") && strstr(b.ir_after, "arith.minsi"), "%s", b.ir_after);
    TC_CHECK(strstr(b.ir_after, "-> !ttg.memdesc<32x80xf32, #shared>"), "%s", b.ir_after);
    TC_CHECK_EQ_INT(b.em.smem_bytes, 32 * 80 * 4 + 16 * 32 * 4);
    unbuild(&b);
  }
  /* MoE gather, chunked, with the row mask and a short last chunk */
  tc_tile_gemm_desc_init(&d, 48, 16, 160);
  d.moe = 1, d.tokens = 30, d.num_valid = 22, d.block_m = 16, d.block_n = 16, d.block_k = 16;
  /* slice 16x16x4 = 1024; B tile 1024 + ids 64 bytes; limit 4160 -> 3 slices */
  with_and_without(&d, 4160, &r);
  TC_CHECK(r.applied && strstr(r.detail, "chunks=4 of up to 3") && strstr(r.detail, "rows masked"),
           "%s", r.detail);
}

/* ---- the original pass's base-pointer bug ----
 * A[i][j] = i * K + j, B = identity (N = K): C = A exactly, so every
 * column of C shows the column of A that its slice read.  With the bug
 * (every slice read at the buffer's column 0) C[i][j] = A[i][j % BK]
 * (observation 2 of the original pass's notes). */

static int base_pointer_case(int64_t kdim, int bk, int64_t limit, int emulate, int64_t *bad_vs_a,
                             int64_t *bad_vs_bug) {
  tc_tile_gemm_desc d;
  tc_tile_gemm_desc_init(&d, 32, kdim, kdim);
  d.block_m = 32, d.block_n = 32, d.block_k = bk;
  tc_tile_pass_options o;
  opts(&o, 1, limit);
  o.emulate_sliced_base_bug = emulate;
  built b;
  if (build(&d, &o, TC_TARGET_OPENCL, &b) != 0) return -1;
  int rc = -1;
  data x;
  data_new(&d, &x);
  for (int64_t i = 0; i < 32; i++)
    for (int64_t j = 0; j < kdim; j++) tc_host_write(TC_F32, x.a, (size_t)(i * kdim + j), (double)(i * kdim + j));
  memset(x.b, 0, tc_tile_gemm_elems(&d, 'B') * sizeof(float));
  for (int64_t j = 0; j < kdim; j++) tc_host_write(TC_F32, x.b, (size_t)(j * kdim + j), 1.0);
  const tc_tile_report *r = agg_report(&b);
  TC_CHECK(r && r->applied, "%s", r ? r->detail : "");
  if (run(&d, &b, &x) == 0) {
    *bad_vs_a = *bad_vs_bug = 0;
    for (int64_t i = 0; i < 32; i++)
      for (int64_t j = 0; j < kdim; j++) {
        double c = tc_host_read(TC_F32, x.c, (size_t)(i * kdim + j));
        *bad_vs_a += c != (double)(i * kdim + j);
        *bad_vs_bug += c != (double)(i * kdim + j % bk);
      }
    rc = 0;
  }
  data_free(&x);
  unbuild(&b);
  return rc;
}

static void test_base_pointer_regression(void) {
  NEED_CL();
  int64_t bad_a = -1, bad_bug = -1;
  /* the configuration of the original pass's bug: 32x32x32, BLOCK_K 16, two
   * slices */
  if (base_pointer_case(32, 16, 0, 0, &bad_a, &bad_bug) == 0) {
    TC_CHECK(bad_a == 0, "second slice read the wrong columns: %lld elements of C != A",
             (long long)bad_a);
    TC_CHECK(bad_bug > 0, "the check cannot tell the bug from the fix");
  }
  /* the check catches the bug: with it, C[i][j] == A[i][j % 16] */
  if (base_pointer_case(32, 16, 0, 1, &bad_a, &bad_bug) == 0) {
    TC_CHECK(bad_a > 0, "the emulated bug went unnoticed");
    TC_CHECK(bad_bug == 0, "the emulated bug does not give C = A[:, j %% 16]: %lld",
             (long long)bad_bug);
  }
  /* four slices, and chunks (2 slices of 32x16 f32 per chunk) */
  if (base_pointer_case(64, 16, 0, 0, &bad_a, &bad_bug) == 0) TC_CHECK_EQ_INT(bad_a, 0);
  if (base_pointer_case(128, 16, 8192 + 2 * 2048, 0, &bad_a, &bad_bug) == 0)
    TC_CHECK_EQ_INT(bad_a, 0);
  if (base_pointer_case(128, 16, 8192 + 2 * 2048, 1, &bad_a, &bad_bug) == 0)
    TC_CHECK(bad_a > 0, "the emulated bug went unnoticed in the chunked loop");
}

/* A hand-built 8x8x16 GEMM whose K loop runs iv = 3, 5, 7, 9 (lb 3,
 * step 2), with constant strides: the slice of iteration iv is
 * (iv - 3) / 2, and in chunks iv = 3 + (chunk * slices + j) * 2. */
static tc_tile_kernel *odd_loop_gemm(void) {
  tc_tile_kernel *k = tc_tile_kernel_new("odd_loop", 1, 64);
  tc_tile_value *A = tc_tile_arg_ptr(k, "A", TC_F32, 0), *B = tc_tile_arg_ptr(k, "B", TC_F32, 0);
  tc_tile_value *C = tc_tile_arg_ptr(k, "C", TC_F32, 1);
  tc_tile_value *rm = tc_tile_make_range(k, 0, 8), *rk = tc_tile_make_range(k, 0, 4);
  tc_tile_value *c1 = tc_tile_const_int(k, 1), *c4 = tc_tile_const_int(k, 4);
  tc_tile_value *c8 = tc_tile_const_int(k, 8), *c16 = tc_tile_const_int(k, 16);
  int64_t m1[2] = {8, 1}, k1[2] = {1, 4}, kc[2] = {4, 1}, n1[2] = {1, 8}, mk[2] = {8, 4},
          kn[2] = {4, 8}, mn[2] = {8, 8};
#define ROWS(base, r, stride, sh) \
  tc_tile_addptr(k, tc_tile_splat(k, base, 2, sh), \
                 tc_tile_binary(k, TC_TO_MUL, tc_tile_expand_dims(k, r, 1), tc_tile_splat(k, stride, 2, sh)))
#define COLS(c, stride, sh) \
  tc_tile_binary(k, TC_TO_MUL, tc_tile_expand_dims(k, c, 0), tc_tile_splat(k, stride, 2, sh))
  tc_tile_value *ap = tc_tile_addptr(k, tc_tile_broadcast(k, ROWS(A, rm, c16, m1), 8, 4),
                                     tc_tile_broadcast(k, COLS(rk, c1, k1), 8, 4));
  tc_tile_value *bp = tc_tile_addptr(k, tc_tile_broadcast(k, ROWS(B, rk, c8, kc), 4, 8),
                                     tc_tile_broadcast(k, COLS(rm, c1, n1), 4, 8));
  tc_tile_value *init[3] = {tc_tile_const_tensor(k, TC_TK_FLOAT, TC_F32, 2, mn, 0), ap, bp};
  tc_tile_op *loop = tc_tile_for_begin(k, tc_tile_const_int(k, 3), tc_tile_const_int(k, 11),
                                       tc_tile_const_int(k, 2), 3, init);
  tc_tile_value *a = tc_tile_load(k, tc_tile_for_arg(loop, 1), NULL, NULL);
  tc_tile_value *b = tc_tile_load(k, tc_tile_for_arg(loop, 2), NULL, NULL);
  tc_tile_value *y[3] = {
      tc_tile_dot(k, a, b, tc_tile_for_arg(loop, 0)),
      tc_tile_addptr(k, tc_tile_for_arg(loop, 1), tc_tile_splat(k, tc_tile_binary(k, TC_TO_MUL, c4, c1), 2, mk)),
      tc_tile_addptr(k, tc_tile_for_arg(loop, 2), tc_tile_splat(k, tc_tile_binary(k, TC_TO_MUL, c4, c8), 2, kn))};
  tc_tile_for_end(k, loop, 3, y);
  tc_tile_value *cp = tc_tile_addptr(k, tc_tile_broadcast(k, ROWS(C, rm, c8, m1), 8, 8),
                                     tc_tile_broadcast(k, COLS(rm, c1, n1), 8, 8));
  tc_tile_store(k, cp, tc_tile_for_result(loop, 0), NULL);
#undef ROWS
#undef COLS
  return k;
}

static void test_general_loop_bounds(void) {
  NEED_CL();
  float A[8 * 16], B[16 * 8], want[64];
  for (int i = 0; i < 8 * 16; i++) A[i] = (float)((i * 5 + 1) % 9 - 4), B[i] = (float)((i * 3 + 2) % 7 - 3);
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++) {
      float s = 0;
      for (int l = 0; l < 16; l++) s += A[i * 16 + l] * B[l * 8 + j];
      want[i * 8 + j] = s;
    }
  /* A 8x16 f32 = 512 bytes, B's tile 128, a slice 128: limits for one
   * buffer, chunks of 2 (2 chunks) and of 3 (2 chunks, the last short) */
  int64_t limits[4] = {0, 640, 128 + 256, 128 + 384};
  const char *expect[4] = {NULL, "chunks=1", "chunks=2 of up to 2", "chunks=2 of up to 3"};
  for (int c = 0; c < 4; c++) {
    tc_tile_kernel *k = odd_loop_gemm();
    TC_REQUIRE(!tc_tile_error(k)[0], "%s", tc_tile_error(k));
    tc_tile_pass_options o;
    opts(&o, c > 0, limits[c]);
    tc_tile_run_passes(k, &o);
    const tc_tile_report *r = tc_tile_find_report(k, "aggregate-load");
    if (expect[c]) TC_CHECK(r && r->applied && strstr(r->detail, expect[c]), "%s", r ? r->detail : "");
    TC_STR_LOCAL(err);
    tc_tile_emitted em;
    if (tc_tile_emit(k, &tc_dialect_opencl, &em, &err) != TC_OK) {
      TC_CHECK(0, "emit: %s", tc_str_cstr(&err));
      tc_tile_kernel_free(k);
      continue;
    }
    float C[64];
    for (int i = 0; i < 64; i++) C[i] = 12345;
    tc_rt_buffer b[3] = {{A, sizeof A, 0}, {B, sizeof B, 0}, {C, sizeof C, 1}};
    tc_launch l = {{1, 1, 1}, {64, 1, 1}, 0};
    tc_str e;
    tc_str_init(&e);
    TC_CHECK(tc_cl_run(g_cl, em.source, em.name, b, 3, &l, NULL, &e) == TC_OK, "%s", tc_str_cstr(&e));
    tc_str_free(&e);
    int bad = 0;
    for (int i = 0; i < 64; i++) bad += C[i] != want[i];
    TC_CHECK(bad == 0, "case %d: %d elements differ", c, bad);
    tc_tile_emitted_free(&em);
    tc_tile_kernel_free(k);
  }
}

/* ---- legality ---- */

/* The pass does not apply: the reason is reported, the IR and the source
 * are those of a run without the pass, and the kernel still computes the
 * right result. */
static void not_applied(tc_tile_gemm_desc *d, int64_t limit, const char *reason) {
  tc_tile_pass_options on, off;
  opts(&on, 1, limit);
  opts(&off, 0, limit);
  built b1, b0;
  if (build(d, &on, TC_TARGET_OPENCL, &b1) != 0) return;
  if (build(d, &off, TC_TARGET_OPENCL, &b0) != 0) {
    unbuild(&b1);
    return;
  }
  const tc_tile_report *r = agg_report(&b1);
  TC_CHECK(r && !r->applied && strstr(r->detail, reason), "want a report with \"%s\", got: %s",
           reason, r ? r->detail : "(none)");
  TC_CHECK(strcmp(b1.ir_before, b1.ir_after) == 0, "the IR changed:\n%s\n---\n%s", b1.ir_before,
           b1.ir_after);
  TC_CHECK(strcmp(b1.em.source, b0.em.source) == 0, "the source differs from the pass-off source");
  if (g_cl) {
    data x;
    data_new(d, &x);
    if (run(d, &b1, &x) == 0) TC_CHECK(mismatches(d, &x) == 0, "wrong result (%s)", reason);
    data_free(&x);
  }
  unbuild(&b0);
  unbuild(&b1);
}

static void test_legality_dynamic_k(void) {
  tc_tile_gemm_desc d;
  tc_tile_gemm_desc_init(&d, 32, 32, 64);
  d.dynamic_k = 1;
  not_applied(&d, 0, "K is not a compile-time constant: the K loop's bounds depend on the "
                     "run-time argument K");
}

static void test_legality_mask_k(void) {
  tc_tile_gemm_desc d;
  tc_tile_gemm_desc_init(&d, 32, 32, 40); /* K % 16 != 0: masked along K */
  not_applied(&d, 0, "the load of A is masked along K");
  tc_tile_gemm_desc_init(&d, 32, 16, 48);
  d.mask_k = 1, d.moe = 1, d.tokens = 20, d.num_valid = 15;
  not_applied(&d, 0, "the load of A is masked along K");
}

static void test_legality_address_form(void) {
  tc_tile_gemm_desc d;
  tc_tile_gemm_desc_init(&d, 32, 32, 64);
  d.a_form = TC_TILE_A_K_FIRST;
  not_applied(&d, 0, "A's address adds the K offsets before the M offsets");
  d.a_form = TC_TILE_A_COMBINED;
  not_applied(&d, 0, "A's M and K offsets are summed before they are added to the pointer");
}

static void test_legality_no_room(void) {
  tc_tile_gemm_desc d;
  tc_tile_gemm_desc_init(&d, 32, 32, 64);
  /* one slice is 32x16x4 = 2048 bytes, B's tile 2048: 3000 leaves 952 */
  not_applied(&d, 3000, "not even one BLOCK_K slice of A (32x16 f32, 2048 bytes) fits in the "
                        "shared-memory limit of 3000 bytes next to the kernel's other shared "
                        "buffers (2048 bytes)");
}

static void test_disabled(void) {
  tc_tile_gemm_desc d;
  tc_tile_gemm_desc_init(&d, 32, 32, 64);
  tc_tile_pass_options off;
  opts(&off, 0, 0);
  built b;
  if (build(&d, &off, TC_TARGET_OPENCL, &b) != 0) return;
  const tc_tile_report *r = agg_report(&b);
  TC_CHECK(r && !r->applied && strstr(r->detail, "disabled"), "%s", r ? r->detail : "");
  r = tc_tile_find_report(b.k, "dce");
  TC_CHECK(r && !r->applied && strcmp(r->detail, "nothing to remove") == 0, "%s",
           r ? r->detail : "");
  TC_CHECK(strcmp(b.ir_before, b.ir_after) == 0, "the IR changed with the pass off");
  unbuild(&b);
}

/* ---- builder, emitter and dce ---- */

static void test_builder_errors(void) {
  tc_tile_kernel *k = tc_tile_kernel_new("bad", 1, 64);
  tc_tile_value *r8 = tc_tile_make_range(k, 0, 8), *r4 = tc_tile_make_range(k, 0, 4);
  TC_CHECK(tc_tile_binary(k, TC_TO_ADD, r8, r4) == NULL, "adding 8 and 4 elements");
  TC_CHECK(strstr(tc_tile_error(k), "arith.addi: operands of different types"), "%s",
           tc_tile_error(k));
  TC_CHECK(tc_tile_make_range(k, 0, 8) == NULL, "calls after an error return NULL");
  TC_STR_LOCAL(err);
  tc_tile_emitted em;
  TC_CHECK(tc_tile_emit(k, &tc_dialect_opencl, &em, &err) == TC_ERR_ARGUMENT, "emit");
  TC_CHECK(strstr(tc_str_cstr(&err), "builder error"), "%s", tc_str_cstr(&err));
  tc_tile_run_passes(k, NULL);
  TC_CHECK(tc_tile_find_report(k, "aggregate-load") &&
               !tc_tile_find_report(k, "aggregate-load")->applied, "report on a bad kernel");
  tc_tile_kernel_free(k);

  k = tc_tile_kernel_new("bad", 1, 64);
  TC_CHECK(tc_tile_arg_ptr(k, "t_x", TC_F32, 0) == NULL && strstr(tc_tile_error(k), "bad argument name"),
           "%s", tc_tile_error(k));
  tc_tile_kernel_free(k);

  k = tc_tile_kernel_new("bad", 1, 64);
  int64_t s[2] = {4, 8}, s2[2] = {4, 4};
  tc_tile_value *x = tc_tile_const_tensor(k, TC_TK_FLOAT, TC_F32, 2, s, 1.0);
  tc_tile_value *acc = tc_tile_const_tensor(k, TC_TK_FLOAT, TC_F32, 2, s2, 0.0);
  TC_CHECK(tc_tile_dot(k, x, x, acc) == NULL && strstr(tc_tile_error(k), "tt.dot: shapes 4x8 * 4x8"),
           "%s", tc_tile_error(k));
  tc_tile_kernel_free(k);

  k = tc_tile_kernel_new("bad", 0, 64);
  TC_CHECK(strstr(tc_tile_error(k), "number of programs"), "%s", tc_tile_error(k));
  tc_tile_kernel_free(k);
}

static void test_emit_non_uniform_advance(void) {
  /* a loop-carried pointer advanced by a range is not supported */
  tc_tile_kernel *k = tc_tile_kernel_new("adv", 1, 8);
  tc_tile_value *p = tc_tile_arg_ptr(k, "P", TC_F32, 1);
  int64_t n = 8;
  tc_tile_value *r = tc_tile_make_range(k, 0, 8);
  tc_tile_value *ptrs = tc_tile_addptr(k, tc_tile_splat(k, p, 1, &n), r);
  tc_tile_value *init[1] = {ptrs};
  tc_tile_op *loop = tc_tile_for_begin(k, tc_tile_const_int(k, 0), tc_tile_const_int(k, 2),
                                       tc_tile_const_int(k, 1), 1, init);
  tc_tile_value *a = tc_tile_for_arg(loop, 0);
  tc_tile_value *y[1] = {tc_tile_addptr(k, a, r)};
  tc_tile_for_end(k, loop, 1, y);
  int64_t one = 8;
  tc_tile_store(k, tc_tile_for_result(loop, 0), tc_tile_const_tensor(k, TC_TK_FLOAT, TC_F32, 1, &one, 2.0),
                NULL);
  TC_REQUIRE(!tc_tile_error(k)[0], "%s", tc_tile_error(k));
  TC_STR_LOCAL(err);
  tc_tile_emitted em;
  TC_CHECK(tc_tile_emit(k, &tc_dialect_opencl, &em, &err) == TC_ERR_UNSUPPORTED, "emit");
  TC_CHECK(strstr(tc_str_cstr(&err), "must advance by a uniform offset"), "%s", tc_str_cstr(&err));
  /* the pass says why it does nothing */
  tc_tile_run_passes(k, NULL);
  const tc_tile_report *rep = tc_tile_find_report(k, "aggregate-load");
  TC_CHECK(rep && !rep->applied && strstr(rep->detail, "no tt.dot"), "%s", rep ? rep->detail : "");
  tc_tile_kernel_free(k);
}

static void test_dce(void) {
  tc_tile_kernel *k = tc_tile_kernel_new("dce", 1, 4);
  tc_tile_value *p = tc_tile_arg_ptr(k, "P", TC_I32, 1);
  int64_t n = 4;
  tc_tile_value *r = tc_tile_make_range(k, 0, 4);
  tc_tile_make_range(k, 0, 16);                                  /* dead */
  tc_tile_binary(k, TC_TO_MUL, r, r);                            /* dead */
  tc_tile_store(k, tc_tile_addptr(k, tc_tile_splat(k, p, 1, &n), r), r, NULL);
  TC_REQUIRE(!tc_tile_error(k)[0], "%s", tc_tile_error(k));
  TC_CHECK(tc_tile_dce(k) == 1, "dce changed nothing");
  const tc_tile_report *rep = tc_tile_find_report(k, "dce");
  TC_CHECK(rep && strstr(rep->detail, "removed 2 dead ops and 0 dead loop-carried values"), "%s",
           rep ? rep->detail : "");
  TC_CHECK(tc_tile_dce(k) == 0, "dce twice");
  if (g_cl) {
    TC_STR_LOCAL(err);
    tc_tile_emitted em;
    TC_REQUIRE(tc_tile_emit(k, &tc_dialect_opencl, &em, &err) == TC_OK, "%s", tc_str_cstr(&err));
    int32_t out[4] = {-1, -1, -1, -1};
    tc_rt_buffer b = {out, sizeof out, 1};
    tc_launch l = {{1, 1, 1}, {4, 1, 1}, 0};
    tc_str e;
    tc_str_init(&e);
    TC_CHECK(tc_cl_run(g_cl, em.source, em.name, &b, 1, &l, NULL, &e) == TC_OK, "%s", tc_str_cstr(&e));
    for (int i = 0; i < 4; i++) TC_CHECK_EQ_INT(out[i], i);
    tc_str_free(&e);
    tc_tile_emitted_free(&em);
  }
  tc_tile_kernel_free(k);
}

/* ---- other targets ---- */

static void test_cuda_nvrtc(void) {
  int major = 0, minor = 0;
  if (!tc_cuda_nvrtc_version(&major, &minor)) TC_SKIP("NVRTC not found");
  tc_tile_gemm_desc ds[3];
  tc_tile_gemm_desc_init(&ds[0], 64, 64, 128);
  tc_tile_gemm_desc_init(&ds[1], 64, 32, 64);
  ds[1].moe = 1, ds[1].tokens = 40, ds[1].num_valid = 29, ds[1].dtype = TC_F16;
  tc_tile_gemm_desc_init(&ds[2], 32, 32, 256); /* chunked */
  int64_t limits[3] = {0, 0, 12288};
  for (int i = 0; i < 3; i++) {
    tc_tile_pass_options o;
    opts(&o, 1, limits[i]);
    built b;
    if (build(&ds[i], &o, TC_TARGET_CUDA, &b) != 0) continue;
    TC_CHECK(agg_report(&b)->applied, "%s", agg_report(&b)->detail);
    TC_CHECK(strstr(b.em.source, "__shared__ float t_l") || strstr(b.em.source, "__shared__ unsigned short t_l"),
             "no shared buffer");
    char *ptx = NULL;
    tc_str e;
    tc_str_init(&e);
    tc_status st = tc_cuda_compile(b.em.source, "sm_90a", &ptx, &e);
    TC_CHECK(st == TC_OK, "case %d: NVRTC: %s\n%s", i, tc_str_cstr(&e), b.em.source);
    free(ptx);
    tc_str_free(&e);
    unbuild(&b);
  }
}

static void test_hip_hipcc(void) {
  if (system("command -v hipcc >/dev/null 2>&1") != 0) TC_SKIP("hipcc not found");
  tc_tile_gemm_desc d;
  tc_tile_gemm_desc_init(&d, 64, 32, 64);
  d.moe = 1, d.tokens = 40, d.num_valid = 29, d.dtype = TC_F16;
  tc_tile_pass_options o;
  opts(&o, 1, 0);
  built b;
  if (build(&d, &o, TC_TARGET_HIP, &b) != 0) return;
  TC_CHECK(agg_report(&b)->applied, "%s", agg_report(&b)->detail);
  char dir[] = "/tmp/tilec-tile-hip-XXXXXX";
  TC_REQUIRE(mkdtemp(dir), "mkdtemp");
  char src[96], out[96], cmd[512];
  snprintf(src, sizeof src, "%s/moe.hip", dir);
  snprintf(out, sizeof out, "%s/moe.hsaco", dir);
  FILE *f = fopen(src, "w");
  TC_REQUIRE(f, "cannot write %s", src);
  fputs(b.em.source, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "hipcc --genco --offload-arch=gfx90a -o %s %s > %s/log 2>&1", out, src,
           dir);
  int rc = system(cmd);
  if (rc != 0) {
    snprintf(cmd, sizeof cmd, "cat %s/log >&2", dir);
    TC_CHECK(system(cmd) >= 0, "log");
  }
  TC_CHECK(rc == 0, "hipcc failed on the MoE GEMM");
  TC_CHECK(access(out, F_OK) == 0, "no code object");
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  TC_CHECK(system(cmd) == 0, "rm");
  unbuild(&b);
}

int main(void) {
  tc_str e;
  tc_str_init(&e);
  if (tc_cl_open(NULL, &g_cl, &e) != TC_OK) {
    snprintf(g_cl_why, sizeof g_cl_why, "%s", tc_str_cstr(&e));
    g_cl = NULL;
  }
  tc_str_free(&e);
  TC_RUN(test_ir_build_and_print);
  TC_RUN(test_plain_gemm);
  TC_RUN(test_f16_gemm);
  TC_RUN(test_moe_gather);
  TC_RUN(test_chunked);
  TC_RUN(test_base_pointer_regression);
  TC_RUN(test_general_loop_bounds);
  TC_RUN(test_legality_dynamic_k);
  TC_RUN(test_legality_mask_k);
  TC_RUN(test_legality_address_form);
  TC_RUN(test_legality_no_room);
  TC_RUN(test_disabled);
  TC_RUN(test_builder_errors);
  TC_RUN(test_emit_non_uniform_advance);
  TC_RUN(test_dce);
  TC_RUN(test_cuda_nvrtc);
  TC_RUN(test_hip_hipcc);
  tc_cl_close(g_cl);
  TC_MAIN_END();
}
