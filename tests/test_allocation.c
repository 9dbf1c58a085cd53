/* test_allocation.c - tc_kernel_tensor_allocation: what a compiled kernel
 * allocates for each tensor, against sizes derived by hand from the
 * allocation rules (the derivation is in each case's comment):
 *   - an axis bound to what the memory is distributed across is never
 *     allocated: BIDx/y/z for shared and tensor memory, BIDx/y/z and
 *     TIDx/y/z for local memory (registers);
 *   - an axis bound to what the memory is shared by is always allocated:
 *     TIDx/y/z for shared and tensor memory, even left of the compute-at
 *     position;
 *   - any other axis is allocated when it is right of the compute-at
 *     position;
 *   - tensor memory: lanes = the allocated axes left of the dim-sep,
 *     columns = ceil(the other allocated extents * dtype bytes / 4), and
 *     max(32, next power of two) columns reserved.
 * Every kernel here also runs on the default OpenCL device and must match
 * the reference evaluator exactly (copies, neg and abs only), and the
 * allocations must come back the same from the kernel cache. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

/* What a case expects of one tensor; extents/positions end at naxes. */
typedef struct want {
  tc_memtype memory;
  int naxes;
  int positions[4];
  int64_t extents[4];
  int64_t bytes, offset, lanes, columns, columns_allocated;
} want;

static void check_alloc(const tc_kernel *k, const tc_tensor *t, const want *w, const char *label) {
  tc_allocation a;
  memset(&a, 0x5a, sizeof a);
  tc_status st = tc_kernel_tensor_allocation(k, t, &a);
  TC_REQUIRE(st == TC_OK, "%s: %s: %s", label, tc_status_name(st), tc_tensor_name(t));
  const char *n = tc_tensor_name(t);
  TC_CHECK(a.memory == w->memory, "%s: %s in %s memory, expected %s", label, n,
           tc_memtype_name(a.memory), tc_memtype_name(w->memory));
  TC_CHECK(a.naxes == w->naxes, "%s: %s has %d axes allocated, expected %d", label, n, a.naxes,
           w->naxes);
  int64_t elems = 1;
  for (int i = 0; i < w->naxes && i < a.naxes; i++) {
    TC_CHECK(a.positions[i] == w->positions[i] && a.extents[i] == w->extents[i],
             "%s: %s allocated axis %d: position %d extent %lld, expected %d and %lld", label, n,
             i, a.positions[i], (long long)a.extents[i], w->positions[i],
             (long long)w->extents[i]);
    elems *= w->extents[i];
  }
  TC_CHECK(a.elements == elems, "%s: %s: %lld elements, expected %lld", label, n,
           (long long)a.elements, (long long)elems);
  TC_CHECK(a.bytes == w->bytes, "%s: %s: %lld bytes, expected %lld", label, n, (long long)a.bytes,
           (long long)w->bytes);
  TC_CHECK(a.offset == w->offset, "%s: %s: offset %lld, expected %lld", label, n,
           (long long)a.offset, (long long)w->offset);
  TC_CHECK(a.lanes == w->lanes && a.columns == w->columns &&
               a.columns_allocated == w->columns_allocated,
           "%s: %s: %lld lanes x %lld columns (%lld allocated), expected %lld x %lld (%lld)", label,
           n, (long long)a.lanes, (long long)a.columns, (long long)a.columns_allocated,
           (long long)w->lanes, (long long)w->columns, (long long)w->columns_allocated);
}

/* Runs k on pseudo-random f32 inputs and compares every output with the
 * reference evaluator, bit for bit. */
static void run_and_verify(tc_fusion *f, tc_kernel *k, const char *label) {
  int np = tc_kernel_nparams(k);
  void *args[8];
  void *ref[8];
  TC_REQUIRE(np <= 8, "%s: %d parameters", label, np);
  uint32_t r = 12345u;
  /* every buffer gets the same pseudo-random values in both runs (the
   * outputs are overwritten) */
  for (int i = 0; i < np; i++) {
    size_t b = tc_kernel_param_bytes(k, i);
    float *p = args[i] = malloc(b);
    for (size_t j = 0; j < b / 4; j++) {
      r = r * 1664525u + 1013904223u;
      p[j] = (float)((int)(r >> 8) % 2000 - 1000) / 64.0f;
    }
    ref[i] = malloc(b);
    memcpy(ref[i], args[i], b);
  }
  tc_status st = tc_kernel_run(k, args, NULL, NULL);
  TC_CHECK(st == TC_OK, "%s: run: %s", label, tc_kernel_error(k));
  st = tc_reference_run(f, ref);
  TC_CHECK(st == TC_OK, "%s: reference: %s", label, tc_fusion_error(f));
  for (int i = 0; i < np; i++) {
    TC_CHECK(memcmp(args[i], ref[i], tc_kernel_param_bytes(k, i)) == 0,
             "%s: parameter %d differs from the reference", label, i);
    free(args[i]), free(ref[i]);
  }
}

static tc_kernel *compile_ok(tc_fusion *f, const char *label) {
  tc_status st;
  tc_kernel *k = tc_compile(f, NULL, &st);
  TC_CHECK(k != NULL, "%s: compile: %s", label, tc_fusion_error(f));
  return k;
}

/* A chain t[0] (input of dtype dt and the given shape) -> t[1] -> ... ->
 * t[n] (the output), t[i] = unary op ops[i - 1] of t[i - 1], or a set
 * where ops is NULL; every tensor of it in t. */
#define SET_CHAIN NULL
static tc_fusion *chain(tc_dtype dt, int rank, const int64_t *shape, int n,
                        const tc_unary_op *ops, tc_tensor **t) {
  tc_fusion *f = tc_fusion_new();
  t[0] = tc_input(f, dt, rank, shape);
  for (int i = 1; i <= n; i++)
    t[i] = ops ? tc_unary(f, ops[i - 1], t[i - 1]) : tc_set(f, t[i - 1]);
  OK(f, tc_add_output(f, t[n]));
  return f;
}

/* ---- shared memory: the tutorial's six copies of a [2, 4] f32 tensor ----------- */

/* T0 (global) -> T1 (shared) -> T2 (global).  Derivations, per case:
 *   1 nothing:                 both axes serial, compute-at 0: [2, 4], 32 bytes
 *   2 axis 1 BIDx:             axis 1 distributed (shared is per block): [2]
 *   3 inline at 1:             axis 0 serial left of CA: [4] (position 1)
 *   4 inline at 1, axis 1 BIDx: neither axis: 1 element, 4 bytes
 *   5 inline at 1, axis 0 TIDx: TIDx always allocated in shared memory: [2, 4]
 *   6 inline at 1, TIDx 0, BIDx 1: [2] */
static void test_shared_allocation_rule_cases(void) {
  static const struct {
    int inl, bidx1, tidx0;
    want w;
  } cases[6] = {
      {0, 0, 0, {TC_MEM_SHARED, 2, {0, 1}, {2, 4}, 32, 0, 0, 0, 0}},
      {0, 1, 0, {TC_MEM_SHARED, 1, {0}, {2}, 8, 0, 0, 0, 0}},
      {1, 0, 0, {TC_MEM_SHARED, 1, {1}, {4}, 16, 0, 0, 0, 0}},
      {1, 1, 0, {TC_MEM_SHARED, 0, {0}, {0}, 4, 0, 0, 0, 0}},
      {1, 0, 1, {TC_MEM_SHARED, 2, {0, 1}, {2, 4}, 32, 0, 0, 0, 0}},
      {1, 1, 1, {TC_MEM_SHARED, 1, {0}, {2}, 8, 0, 0, 0, 0}},
  };
  for (int c = 0; c < 6; c++) {
    char label[32];
    snprintf(label, sizeof label, "shared case %d", c + 1);
    int64_t shape[2] = {2, 4};
    tc_tensor *t[3];
    tc_fusion *f = chain(TC_F32, 2, shape, 2, SET_CHAIN, t);
    tc_tensor *t0 = t[0], *t1 = t[1], *t2 = t[2];
    OK(f, tc_set_memory_type(t1, TC_MEM_SHARED));
    if (cases[c].inl) OK(f, tc_inline_at(t1, 1));
    for (int i = 1; i <= 2; i++) {
      if (cases[c].tidx0) OK(f, tc_parallelize(t[i], 0, TC_TIDX));
      if (cases[c].bidx1) OK(f, tc_parallelize(t[i], 1, TC_BIDX));
    }
    tc_kernel *k = compile_ok(f, label);
    if (k) {
      check_alloc(k, t1, &cases[c].w, label);
      TC_CHECK_EQ_INT(tc_kernel_smem_bytes(k), cases[c].w.bytes);
      /* the parameters: the caller's [2, 4] f32 buffers */
      want g = {TC_MEM_GLOBAL, 2, {0, 1}, {2, 4}, 32, 0, 0, 0, 0};
      check_alloc(k, t0, &g, label);
      check_alloc(k, t2, &g, label);
      run_and_verify(f, k, label);
    }
    tc_kernel_free(k);
    tc_fusion_free(f);
  }
}

/* [4, 6] f32: T1 = neg(T0) shared, T2 = abs(T1) shared, T3 = neg(T2) out,
 * all [BIDx{4}, TIDx{6}], inlined as deep as possible.  Shared memory:
 * BIDx not allocated, TIDx always: 6 elements = 24 bytes each.  T1 comes
 * first at offset 0; T2 starts at the next 16-byte boundary, 32; the block
 * has 32 + 24 = 56 bytes. */
static void test_shared_offsets(void) {
  int64_t shape[2] = {4, 6};
  static const tc_unary_op ops[3] = {TC_NEG, TC_ABS, TC_NEG};
  tc_tensor *t[4];
  tc_fusion *f = chain(TC_F32, 2, shape, 3, ops, t);
  tc_tensor *t1 = t[1], *t2 = t[2], *t3 = t[3];
  OK(f, tc_set_memory_type(t1, TC_MEM_SHARED));
  OK(f, tc_set_memory_type(t2, TC_MEM_SHARED));
  OK(f, tc_parallelize(t3, 0, TC_BIDX));
  OK(f, tc_parallelize(t3, 1, TC_TIDX));
  OK(f, tc_parallelize_all_like(t3));
  OK(f, tc_inline_most(f));
  tc_kernel *k = compile_ok(f, "offsets");
  if (k) {
    want w1 = {TC_MEM_SHARED, 1, {1}, {6}, 24, 0, 0, 0, 0};
    want w2 = {TC_MEM_SHARED, 1, {1}, {6}, 24, 32, 0, 0, 0};
    check_alloc(k, t1, &w1, "offsets");
    check_alloc(k, t2, &w2, "offsets");
    TC_CHECK_EQ_INT(tc_kernel_smem_bytes(k), 56);
    run_and_verify(f, k, "offsets");
  }
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* ---- local memory (registers) --------------------------------------------- */

/* [4, 6, 8] f32: T1 = neg(T0), T2 = abs(T1) output, T2 = [BIDx{4},
 * TIDx{6}, 8] and T1 alike; T1 in local memory inlined at pos.  Registers
 * are distributed across blocks and threads, so axes 0 and 1 are never
 * allocated; axis 2 (serial) is allocated when right of the compute-at
 * position: 8 registers (32 bytes) per thread at pos 1 or 2, one at pos 3.
 * In shared memory, the same schedule at pos 2 keeps TIDx{6} (left of the
 * compute-at position, but shared by the threads) and axis 2: 48
 * elements. */
static void test_local_and_shared_across_threads(void) {
  for (int c = 0; c < 4; c++) {
    static const int pos[4] = {1, 2, 3, 2};
    tc_memtype mem = c == 3 ? TC_MEM_SHARED : TC_MEM_LOCAL;
    char label[48];
    snprintf(label, sizeof label, "%s at %d", tc_memtype_name(mem), pos[c]);
    int64_t shape[3] = {4, 6, 8};
    static const tc_unary_op ops[2] = {TC_NEG, TC_ABS};
    tc_tensor *t[3];
    tc_fusion *f = chain(TC_F32, 3, shape, 2, ops, t);
    tc_tensor *t1 = t[1], *t2 = t[2];
    OK(f, tc_set_memory_type(t1, mem));
    OK(f, tc_parallelize(t2, 0, TC_BIDX));
    OK(f, tc_parallelize(t2, 1, TC_TIDX));
    OK(f, tc_parallelize_all_like(t2));
    OK(f, tc_inline_at(t1, pos[c]));
    tc_kernel *k = compile_ok(f, label);
    if (k) {
      want w = {TC_MEM_LOCAL, 1, {2}, {8}, 32, 0, 0, 0, 0};
      if (pos[c] == 3) w.naxes = 0, w.bytes = 4;
      if (mem == TC_MEM_SHARED) w = (want){TC_MEM_SHARED, 2, {1, 2}, {6, 8}, 192, 0, 0, 0, 0};
      check_alloc(k, t1, &w, label);
      TC_CHECK_EQ_INT(tc_kernel_smem_bytes(k), mem == TC_MEM_SHARED ? 192 : 0);
      run_and_verify(f, k, label);
    }
    tc_kernel_free(k);
    tc_fusion_free(f);
  }
}

/* ---- tensor memory --------------------------------------------------------- */

/* tv0 -> tv1 (local) -> tv2 (tensor) -> tv3 (local) -> tv4 (output), f32
 * [128, 2, 6], axis 0 TIDx{128} on all, everything inlined at 2, tv2's
 * dim-sep at 1; with n = 5, tv4 is a copy in shared memory and tv5 the
 * output. */
static tc_fusion *tmem_chain(int n, tc_tensor **tv) {
  int64_t shape[3] = {128, 2, 6};
  tc_fusion *f = chain(TC_F32, 3, shape, n, SET_CHAIN, tv);
  OK(f, tc_set_memory_type(tv[2], TC_MEM_TENSOR));
  if (n == 5) OK(f, tc_set_memory_type(tv[4], TC_MEM_SHARED));
  for (int i = 1; i <= n; i++) OK(f, tc_parallelize(tv[i], 0, TC_TIDX));
  OK(f, tc_inline_all_at(f, 2));
  OK(f, tc_set_tmem_dimsep(tv[2], 1));
  return f;
}

/* tmem_chain(4): tv2 is [TIDx{128}, (DS), 2, (CA), 6].  Tensor memory is
 * shared by the threads, so TIDx{128} is allocated: 128 lanes.  Axis 1 is
 * serial and left of the compute-at position: not allocated.  Axis 2 is
 * right of it: 6 elements per lane = 6 * 4 bytes / 4 = 6 columns, reserved
 * as max(32, next power of two of 6) = 32.  768 elements, 3072 bytes. */
static void test_tmem_f32(void) {
  tc_tensor *tv[5];
  tc_fusion *f = tmem_chain(4, tv);
  char d[128];
  TC_CHECK_STR(tc_tensor_describe(tv[2], d, sizeof d), "T2[iTIDx{128}, (DS), iS{2}, (CA), iS{6}]");
  tc_kernel *k = compile_ok(f, "tmem f32");
  if (k) {
    want w = {TC_MEM_TENSOR, 2, {0, 2}, {128, 6}, 3072, 0, 128, 6, 32};
    check_alloc(k, tv[2], &w, "tmem f32");
    /* tv1 and tv3 in registers: TIDx distributed, axis 1 left of the
     * compute-at position, axis 2 allocated: 6 registers */
    want r = {TC_MEM_LOCAL, 1, {2}, {6}, 24, 0, 0, 0, 0};
    check_alloc(k, tv[1], &r, "tmem f32");
    check_alloc(k, tv[3], &r, "tmem f32");
    TC_CHECK_EQ_INT(tc_kernel_tmem_columns(k), 32);
    run_and_verify(f, k, "tmem f32");
  }
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* The same chain in f16, [128, 10] split to [TIDx{128}, 5, V{2}] (a
 * tcgen05 access moves whole 32-bit words: two halves), tv2 and tv3
 * vectorized, inlined at 1, dim-sep 1.  Lanes: TIDx{128}.  Columns: axes
 * 1 and 2 are right of the compute-at position, 5 * 2 = 10 halves = 20
 * bytes = 5 columns, 32 reserved.  1280 elements, 2560 bytes. */
static void test_tmem_f16(void) {
  int64_t shape[2] = {128, 10};
  tc_tensor *tv[5];
  tc_fusion *f = chain(TC_F16, 2, shape, 4, SET_CHAIN, tv);
  OK(f, tc_set_memory_type(tv[2], TC_MEM_TENSOR));
  for (int i = 1; i < 5; i++) {
    OK(f, tc_split(tv[i], 1, 2, 1));
    OK(f, tc_parallelize(tv[i], 0, TC_TIDX));
  }
  OK(f, tc_parallelize(tv[2], 2, TC_VECTORIZE));
  OK(f, tc_parallelize(tv[3], 2, TC_VECTORIZE));
  OK(f, tc_inline_all_at(f, 1));
  OK(f, tc_set_tmem_dimsep(tv[2], 1));
  char d[128];
  TC_CHECK_STR(tc_tensor_describe(tv[2], d, sizeof d), "T2[iTIDx{128}, (CA), (DS), iS{5}, iV{2}]");
  tc_kernel *k = compile_ok(f, "tmem f16");
  if (k) {
    want w = {TC_MEM_TENSOR, 3, {0, 1, 2}, {128, 5, 2}, 2560, 0, 128, 5, 32};
    check_alloc(k, tv[2], &w, "tmem f16");
    TC_CHECK_EQ_INT(tc_kernel_tmem_columns(k), 32);
    /* f16 data is not f32: compare the copy bit for bit by hand */
    uint16_t in[1280], out[1280];
    for (int i = 0; i < 1280; i++) in[i] = tc_f32_to_f16((float)(i % 97) - 48.5f), out[i] = 0;
    void *args[2] = {in, out};
    TC_CHECK(tc_kernel_run(k, args, NULL, NULL) == TC_OK, "run: %s", tc_kernel_error(k));
    TC_CHECK(memcmp(in, out, sizeof in) == 0, "the f16 copy through tensor memory differs");
  }
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* ---- tensors the kernel does not have ------------------------------------------ */

static void test_not_in_kernel(void) {
  int64_t shape[2] = {4, 6};
  static const tc_unary_op ops[1] = {TC_NEG};
  tc_tensor *t[2];
  tc_fusion *f = chain(TC_F32, 2, shape, 1, ops, t);
  tc_tensor *t1 = t[1];
  tc_tensor *dead = tc_unary(f, TC_ABS, t[0]); /* T2: no output reads it */
  tc_kernel *k = compile_ok(f, "not in kernel");
  TC_REQUIRE(k != NULL, "compile");
  tc_allocation a;
  TC_CHECK(tc_kernel_tensor_allocation(k, dead, &a) == TC_ERR_ARGUMENT, "dead tensor");
  TC_CHECK_STR(tc_fusion_error(f),
               "tc_kernel_tensor_allocation: kernel tilec_kernel has no tensor T2: it is neither a "
               "parameter (an input or output) nor computed on the way to an output of the fusion "
               "as it was at tc_compile; ask about a tensor that the kernel reads, writes or "
               "computes");
  tc_tensor *later = tc_unary(f, TC_NEG, t1); /* T3, made after the compile */
  TC_CHECK(tc_kernel_tensor_allocation(k, later, &a) == TC_ERR_ARGUMENT, "tensor made later");
  TC_CHECK(strstr(tc_fusion_error(f), "has no tensor T3") != NULL, "%s", tc_fusion_error(f));
  TC_CHECK(tc_kernel_tensor_allocation(k, t1, NULL) == TC_ERR_ARGUMENT, "NULL out");
  TC_CHECK_STR(tc_fusion_error(f), "tc_kernel_tensor_allocation: the output (out) is NULL");
  TC_CHECK(tc_kernel_tensor_allocation(NULL, t1, &a) == TC_ERR_ARGUMENT, "NULL kernel");
  TC_CHECK(tc_kernel_tensor_allocation(k, NULL, &a) == TC_ERR_ARGUMENT, "NULL tensor");
  TC_CHECK(tc_kernel_tensor_allocation(k, t1, &a) == TC_OK, "%s", tc_fusion_error(f));
  TC_CHECK_STR(tc_fusion_error(f), "");
  tc_kernel_free(k);
  tc_fusion_free(f);
}

/* ---- the kernel cache keeps them --------------------------------------------------- */

static int same_alloc(const tc_allocation *a, const tc_allocation *b) {
  if (a->memory != b->memory || a->naxes != b->naxes || a->elements != b->elements ||
      a->bytes != b->bytes || a->offset != b->offset || a->lanes != b->lanes ||
      a->columns != b->columns || a->columns_allocated != b->columns_allocated)
    return 0;
  for (int i = 0; i < a->naxes && i < 16; i++)
    if (a->positions[i] != b->positions[i] || a->extents[i] != b->extents[i]) return 0;
  return 1;
}

static void test_from_cache(void) {
  char dir[] = "/tmp/tilec-alloc-cache-XXXXXX";
  TC_REQUIRE(mkdtemp(dir) != NULL, "mkdtemp");
  char *old = getenv("TILEC_CACHE_DIR") ? strdup(getenv("TILEC_CACHE_DIR")) : NULL;
  char *old_on = getenv("TILEC_CACHE") ? strdup(getenv("TILEC_CACHE")) : NULL;
  setenv("TILEC_CACHE_DIR", dir, 1);
  unsetenv("TILEC_CACHE");
  tc_tensor *a[6], *b[6];
  /* tmem_chain(5): test_tmem_f32's chain with a copy in shared memory */
  tc_fusion *fa = tmem_chain(5, a), *fb = tmem_chain(5, b);
  tc_status st;
  tc_kernel *ka = tc_compile(fa, NULL, &st), *kb = tc_compile(fb, NULL, &st);
  TC_CHECK(ka && kb, "compile: %s %s", tc_fusion_error(fa), tc_fusion_error(fb));
  if (ka && kb) {
    TC_CHECK(!tc_kernel_from_cache(ka) && tc_kernel_from_cache(kb), "the second compile is a hit");
    for (int i = 0; i < 6; i++) {
      tc_allocation x, y;
      TC_CHECK(tc_kernel_tensor_allocation(ka, a[i], &x) == TC_OK, "%s", tc_fusion_error(fa));
      TC_CHECK(tc_kernel_tensor_allocation(kb, b[i], &y) == TC_OK, "%s", tc_fusion_error(fb));
      TC_CHECK(same_alloc(&x, &y), "T%d: the cached kernel reports another allocation", i);
    }
    /* tv4 in shared memory: TIDx{128} always, axis 1 left of the
     * compute-at position, axis 2: 768 f32; tv2 as in test_tmem_f32 */
    want w = {TC_MEM_SHARED, 2, {0, 2}, {128, 6}, 3072, 0, 0, 0, 0};
    check_alloc(kb, b[4], &w, "from the cache");
    want t = {TC_MEM_TENSOR, 2, {0, 2}, {128, 6}, 3072, 0, 128, 6, 32};
    check_alloc(kb, b[2], &t, "from the cache");
  }
  tc_kernel_free(ka), tc_kernel_free(kb);
  tc_fusion_free(fa), tc_fusion_free(fb);
  int64_t removed = 0;
  tc_cache_clear(&removed);
  rmdir(dir);
  if (old) setenv("TILEC_CACHE_DIR", old, 1);
  else unsetenv("TILEC_CACHE_DIR");
  if (old_on) setenv("TILEC_CACHE", old_on, 1);
  free(old), free(old_on);
}

int main(void) {
  TC_RUN(test_shared_allocation_rule_cases);
  TC_RUN(test_shared_offsets);
  TC_RUN(test_local_and_shared_across_threads);
  TC_RUN(test_tmem_f32);
  TC_RUN(test_tmem_f16);
  TC_RUN(test_not_in_kernel);
  TC_RUN(test_from_cache);
  TC_MAIN_END();
}
