/* test_misuse.c - every misuse of the API must return a non-OK status,
 * must not crash, and must leave a message (tc_fusion_error, or
 * tc_kernel_error for kernel calls) that names the tensor, the axis where
 * there is one, and the reason.  A failed scheduling call must also leave
 * the tensor's loop domain as it was.  Each case counts once; the total is
 * printed at the end.  No kernel is run on a device: compile-time cases
 * only lower and print. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tilec/tilec.h"

static int ncases, ncase_fail;

/* Checks one misuse: the status, and that msg contains every substring in
 * the NULL-terminated list.  Counts the case. */
static void expect(const char *label, tc_status got, tc_status want, const char *msg, ...) {
  ncases++;
  int before = tc_test_failed_checks;
  TC_CHECK(got == want, "%s: status %s (%d), want %s (%d); message: %s", label,
           tc_status_name(got), (int)got, tc_status_name(want), (int)want, msg ? msg : "(null)");
  TC_CHECK(msg && *msg, "%s: empty message", label);
  va_list ap;
  va_start(ap, msg);
  for (const char *s = va_arg(ap, const char *); s; s = va_arg(ap, const char *))
    TC_CHECK(msg && strstr(msg, s), "%s: message lacks \"%s\": %s", label, s, msg ? msg : "(null)");
  va_end(ap);
  if (tc_test_failed_checks != before) ncase_fail++;
}

/* For calls that return a tensor: NULL means failure (status ARGUMENT). */
static tc_status tstat(const tc_tensor *t) { return t ? TC_OK : TC_ERR_ARGUMENT; }

/* The loop domain of t, for checking that a failed call changed nothing. */
static const char *desc(const tc_tensor *t, char *buf) { return tc_tensor_describe(t, buf, 256); }

#define UNCHANGED(t, before)                                                   \
  do {                                                                         \
    char now_[256];                                                            \
    TC_CHECK(strcmp(desc(t, now_), before) == 0, "loop domain changed: %s -> %s", before, now_); \
  } while (0)

static tc_kernel *compile_t(tc_fusion *f, tc_target target, const char *name, tc_status *st) {
  tc_compile_options o = {target, NULL, name};
  return tc_compile(f, &o, st);
}

/* A small fusion: T0, T1, T2 inputs of `shape`; T3 = T0 * T1; T4 = T3 + T2
 * (output). */
typedef struct {
  tc_fusion *f;
  tc_tensor *a, *b, *c, *mul, *out;
} fx;

static fx make(int n, const int64_t *shape) {
  fx x;
  x.f = tc_fusion_new();
  x.a = tc_input(x.f, TC_F32, n, shape);
  x.b = tc_input(x.f, TC_F32, n, shape);
  x.c = tc_input(x.f, TC_F32, n, shape);
  x.mul = tc_binary(x.f, TC_MUL, x.a, x.b);
  x.out = tc_binary(x.f, TC_ADD, x.mul, x.c);
  tc_add_output(x.f, x.out);
  return x;
}

static fx make2(int64_t m, int64_t n) {
  int64_t s[2] = {m, n};
  return make(2, s);
}

#define E(x) tc_fusion_error((x).f)
#define N(t) tc_tensor_name(t)

/* ---- loop-domain transforms ------------------------------------------------ */

static void test_transform_misuse(void) {
  char d0[256];
  int64_t s3[3] = {4, 6, 8};
  fx x = make(3, s3);
  TC_CHECK_STR(N(x.out), "T4");
  desc(x.out, d0);

  expect("merge non-adjacent", tc_merge(x.out, 0, 2), TC_ERR_SCHEDULE, E(x), "tc_merge", "T4",
         "axes 0 and 2", "not adjacent", NULL);
  UNCHANGED(x.out, d0);
  expect("merge reversed", tc_merge(x.out, 1, 0), TC_ERR_SCHEDULE, E(x), "T4", "axes 1 and 0",
         "not adjacent", NULL);
  expect("merge axis out of range", tc_merge(x.out, 2, 3), TC_ERR_ARGUMENT, E(x), "T4",
         "no loop axis 3", "it has 3", NULL);
  expect("split axis out of range (+)", tc_split(x.out, 3, 2, 1), TC_ERR_ARGUMENT, E(x), "tc_split",
         "T4", "no loop axis 3", "it has 3", NULL);
  expect("split axis out of range (-)", tc_split(x.out, -4, 2, 1), TC_ERR_ARGUMENT, E(x), "T4",
         "no loop axis -4", NULL);
  expect("split factor 0", tc_split(x.out, 1, 0, 1), TC_ERR_ARGUMENT, E(x), "T4", "axis 1",
         "split factor must be at least 1, got 0", NULL);
  expect("split factor negative", tc_split(x.out, -1, -8, 0), TC_ERR_ARGUMENT, E(x), "T4", "axis 2",
         "got -8", NULL);
  UNCHANGED(x.out, d0);
  expect("parallelize axis out of range (+)", tc_parallelize(x.out, 3, TC_TIDX), TC_ERR_ARGUMENT,
         E(x), "tc_parallelize", "T4", "no loop axis 3", NULL);
  expect("parallelize axis out of range (-)", tc_parallelize(x.out, -5, TC_BIDX), TC_ERR_ARGUMENT,
         E(x), "T4", "no loop axis -5", NULL);
  expect("parallelize unknown type", tc_parallelize(x.out, 0, (tc_ptype)99), TC_ERR_ARGUMENT, E(x),
         "T4", "unknown parallel type 99", NULL);
  int o1[1] = {3}, n1[1] = {0};
  expect("reorder axis out of range (+)", tc_reorder(x.out, 1, o1, n1), TC_ERR_ARGUMENT, E(x),
         "tc_reorder", "T4", "no loop axis 3", NULL);
  int o2[1] = {0}, n2[1] = {-4};
  expect("reorder axis out of range (-)", tc_reorder(x.out, 1, o2, n2), TC_ERR_ARGUMENT, E(x), "T4",
         "no loop axis -4", NULL);
  int o3[2] = {0, 0}, n3[2] = {1, 2};
  expect("reorder names an old axis twice", tc_reorder(x.out, 2, o3, n3), TC_ERR_ARGUMENT, E(x),
         "T4", "axis 0", "named twice", NULL);
  int o4[2] = {0, 1}, n4[2] = {2, -1};
  expect("reorder names a new position twice", tc_reorder(x.out, 2, o4, n4), TC_ERR_ARGUMENT, E(x),
         "T4", "axis 2", "named twice", NULL);
  expect("reorder with NULL positions", tc_reorder(x.out, 1, NULL, n1), TC_ERR_ARGUMENT, E(x),
         "T4", "bad arguments", NULL);
  UNCHANGED(x.out, d0);
  expect("swizzle axis out of range", tc_swizzle(x.out, TC_SWIZZLE_XOR, 0, 9), TC_ERR_ARGUMENT, E(x),
         "tc_swizzle", "T4", "no loop axis 9", NULL);
  expect("swizzle axis out of range (-)", tc_swizzle(x.out, TC_SWIZZLE_XOR, -7, 1), TC_ERR_ARGUMENT,
         E(x), "T4", "no loop axis -7", NULL);
  expect("swizzle with itself", tc_swizzle(x.out, TC_SWIZZLE_XOR, 2, -1), TC_ERR_ARGUMENT, E(x), "T4",
         "axis 2", "swizzled with itself", NULL);
  /* axis 1 has extent 6: not a power of two */
  expect("swizzle non-power-of-two", tc_swizzle(x.out, TC_SWIZZLE_XOR, 0, 1), TC_ERR_SCHEDULE, E(x),
         "T4", "axes 0, 1", "power of two", "got 4 and 6", NULL);
  /* x extent 8 > y extent 4 */
  expect("swizzle x wider than y", tc_swizzle(x.out, TC_SWIZZLE_XOR, 2, 0), TC_ERR_SCHEDULE, E(x),
         "T4", "axes 2, 0", "no smaller than the first", NULL);
  expect("swizzle unknown type", tc_swizzle(x.out, (tc_swizzle_type)5, 0, 2), TC_ERR_ARGUMENT, E(x),
         "T4", "unknown swizzle type 5", NULL);
  expect("resize axis out of range (+)", tc_resize(x.out, 3, 1, 1), TC_ERR_ARGUMENT, E(x),
         "tc_resize", "T4", "no loop axis 3", NULL);
  expect("resize axis out of range (-)", tc_resize(x.out, -4, 1, 1), TC_ERR_ARGUMENT, E(x), "T4",
         "no loop axis -4", NULL);
  expect("resize below one element", tc_resize(x.out, 0, -3, -2), TC_ERR_ARGUMENT, E(x), "T4",
         "axis 0", "leaves extent -1", NULL);
  UNCHANGED(x.out, d0);

  /* a successful call clears the message */
  TC_CHECK(tc_split(x.out, 0, 2, 1) == TC_OK, "%s", E(x));
  TC_CHECK_STR(E(x), "");
  tc_fusion_free(x.f);
}

static void test_parallel_misuse(void) {
  char d0[256];
  fx x = make2(32, 64);
  TC_CHECK(tc_split(x.out, 1, 8, 1) == TC_OK, "%s", E(x)); /* [32, 8, 8] */
  TC_CHECK(tc_parallelize(x.out, 0, TC_TIDX) == TC_OK, "%s", E(x));
  desc(x.out, d0);
  expect("same parallel type on two axes", tc_parallelize(x.out, 2, TC_TIDX), TC_ERR_SCHEDULE, E(x),
         "T4", "axes 0 and 2", "both be TIDx", NULL);
  UNCHANGED(x.out, d0);
  expect("merge of parallelized axes", tc_merge(x.out, 0, 1), TC_ERR_SCHEDULE, E(x), "tc_merge", "T4",
         "axes 0 and 1", "parallelized (TIDx, Serial)", NULL);
  UNCHANGED(x.out, d0);
  tc_fusion_free(x.f);

  /* vectorized widths: 3 is not a power of two; 8 x f32 = 32 bytes > 16 */
  x = make2(4, 24);
  TC_CHECK(tc_split(x.out, 1, 3, 1) == TC_OK, "%s", E(x)); /* [4, 8, 3] */
  expect("vectorize extent 3", tc_parallelize(x.out, 2, TC_VECTORIZE), TC_ERR_SCHEDULE, E(x), "T4",
         "axis 2", "extent 3", "power-of-two", "12 bytes of f32", NULL);
  expect("vectorize 8 x f32", tc_parallelize(x.out, 1, TC_VECTORIZE), TC_ERR_SCHEDULE, E(x), "T4",
         "axis 1", "extent 8", "at most 16 bytes", "32 bytes of f32", NULL);
  TC_CHECK(tc_tensor_loop_ptype(x.out, 1) == TC_SERIAL && tc_tensor_loop_ptype(x.out, 2) == TC_SERIAL,
           "a rejected vectorize must not stick");
  tc_fusion_free(x.f);
}

/* ---- inlining ------------------------------------------------------------------ */

static void test_inline_misuse(void) {
  fx x = make2(16, 40);
  /* the producer T3 split by 4, the consumer T4 by 8: axis 1 does not map */
  TC_CHECK(tc_split(x.out, 1, 8, 1) == TC_OK, "%s", E(x));
  TC_CHECK(tc_split(x.mul, 1, 4, 1) == TC_OK, "%s", E(x));
  TC_CHECK(tc_inline_at(x.mul, 1) == TC_OK, "axis 0 maps: %s", E(x));
  expect("inline past an unmapped axis", tc_inline_at(x.mul, 2), TC_ERR_SCHEDULE, E(x),
         "tc_inline_at", "cannot inline T3 at position 2", "loop axis 1", "does not map",
         "consumer T4", NULL);
  expect("inline position out of range (+)", tc_inline_at(x.mul, 4), TC_ERR_ARGUMENT, E(x), "T3",
         "position 4 is outside 0..3", NULL);
  expect("inline position out of range (-)", tc_inline_at(x.mul, -5), TC_ERR_ARGUMENT, E(x), "T3",
         "position -5", NULL);
  expect("inline a tensor with no consumer", tc_inline_at(x.out, 1), TC_ERR_SCHEDULE, E(x), "T4",
         "no consumer to inline into", NULL);
  expect("inline an input", tc_inline_at(x.a, 1), TC_ERR_SCHEDULE, E(x), "tc_inline_at", "T0",
         "fusion input", NULL);
  expect("compute_at: consumer does not read producer", tc_compute_at(x.mul, x.a, 1),
         TC_ERR_SCHEDULE, E(x), "tc_compute_at", "T0 does not read T3", NULL);
  expect("compute_at position out of range", tc_compute_at(x.mul, x.out, 7), TC_ERR_ARGUMENT, E(x),
         "tc_compute_at", "T4", "position 7 is outside 0..3", NULL);
  tc_fusion_free(x.f);

  /* producer TIDx on axis 0, consumer serial there */
  x = make2(16, 40);
  TC_CHECK(tc_parallelize(x.mul, 0, TC_TIDX) == TC_OK, "%s", E(x));
  expect("inline across parallel types", tc_inline_at(x.mul, 1), TC_ERR_SCHEDULE, E(x), "T3",
         "loop axis 0 is TIDx", "consumer T4 is Serial",
         "parallelize both alike (tc_parallelize_all_like) or inline T3 at position 0 or less", NULL);
  tc_fusion_free(x.f);

  /* vectorized axis left of the inline position */
  x = make2(16, 4);
  TC_CHECK(tc_parallelize(x.mul, 1, TC_VECTORIZE) == TC_OK, "%s", E(x));
  TC_CHECK(tc_parallelize(x.out, 1, TC_VECTORIZE) == TC_OK, "%s", E(x));
  expect("inline past a vectorized axis", tc_inline_at(x.mul, 2), TC_ERR_SCHEDULE, E(x), "T3",
         "loop axis 1 is vectorized", NULL);
  tc_fusion_free(x.f);

  /* transforms replayed from a tensor whose logical axes have no
   * counterpart: two independent chains of different shapes */
  tc_fusion *f = tc_fusion_new();
  int64_t s1[2] = {4, 5}, s2[2] = {6, 7};
  tc_tensor *a = tc_input(f, TC_F32, 2, s1), *b = tc_input(f, TC_F32, 2, s2);
  tc_tensor *oa = tc_set(f, a), *ob = tc_set(f, b);
  tc_add_output(f, oa), tc_add_output(f, ob);
  TC_CHECK(tc_split(oa, 0, 2, 1) == TC_OK, "%s", tc_fusion_error(f));
  expect("propagate to an unrelated tensor", tc_propagate_transforms(oa), TC_ERR_SCHEDULE,
         tc_fusion_error(f), "tc_propagate_transforms", "T2's logical axis 0 (extent 4)",
         "no counterpart in T3", NULL);
  tc_fusion_free(f);
}

/* ---- memory types ------------------------------------------------------------ */

static void test_memory_misuse(void) {
  fx x = make2(8, 8);
  expect("schedule a fusion input", tc_split(x.a, 0, 2, 1), TC_ERR_SCHEDULE, E(x), "tc_split", "T0",
         "fusion input", "tc_cache_after", NULL);
  expect("parallelize a fusion input", tc_parallelize(x.b, 0, TC_TIDX), TC_ERR_SCHEDULE, E(x),
         "tc_parallelize", "T1", "fusion input", NULL);
  expect("shared memory for an input", tc_set_memory_type(x.a, TC_MEM_SHARED), TC_ERR_SCHEDULE, E(x),
         "tc_set_memory_type", "T0", "fusion input", "global memory", NULL);
  expect("shared memory for an output", tc_set_memory_type(x.out, TC_MEM_SHARED), TC_ERR_SCHEDULE,
         E(x), "T4", "fusion output", "global memory", NULL);
  expect("unknown memory type", tc_set_memory_type(x.mul, (tc_memtype)42), TC_ERR_ARGUMENT, E(x),
         "T3", "unknown memory type 42", NULL);
  expect("tmem dim-sep on a local tensor", tc_set_tmem_dimsep(x.mul, 1), TC_ERR_SCHEDULE, E(x),
         "tc_set_tmem_dimsep", "T3", "local memory", "tensor memory only", NULL);
  TC_CHECK(tc_set_memory_type(x.mul, TC_MEM_TENSOR) == TC_OK, "%s", E(x));
  expect("tmem dim-sep out of range", tc_set_tmem_dimsep(x.mul, 3), TC_ERR_ARGUMENT, E(x), "T3",
         "position 3 is outside 0..2", NULL);
  tc_status st = TC_OK;
  tc_kernel *k = compile_t(x.f, TC_TARGET_OPENCL, NULL, &st);
  expect("tensor memory without dim-sep (compile)", st, TC_ERR_SCHEDULE, E(x), "compile", "T3",
         "tensor memory", "no dim-sep position", NULL);
  TC_CHECK(k == NULL, "kernel returned");
  TC_CHECK(tc_set_memory_type(x.mul, TC_MEM_GLOBAL) == TC_OK, "%s", E(x));
  k = compile_t(x.f, TC_TARGET_OPENCL, NULL, &st);
  expect("intermediate in global memory (compile)", st, TC_ERR_SCHEDULE, E(x), "compile", "T3",
         "intermediate tensor in global memory", NULL);
  TC_CHECK(k == NULL, "kernel returned");
  expect("alloc-to-loop on global memory", tc_set_alloc_to_loop(x.mul), TC_ERR_SCHEDULE, E(x),
         "tc_set_alloc_to_loop", "T3", "global memory", NULL);
  expect("ldst type on a non-set op", tc_set_ldst_type(x.mul, TC_LDST_CP_ASYNC), TC_ERR_SCHEDULE,
         E(x), "tc_set_ldst_type", "T3", "not made by a set", NULL);
  expect("ldst type on an input", tc_set_ldst_type(x.a, TC_LDST_CP_ASYNC), TC_ERR_SCHEDULE, E(x), "T0",
         "not made by a set", NULL);
  tc_tensor *cp = tc_cache_after(x.a);
  expect("unknown ldst type", tc_set_ldst_type(cp, (tc_ldst_type)(TC_LDST_STMATRIX_TRANS + 1)),
         TC_ERR_ARGUMENT, E(x), "tc_set_ldst_type", "unknown load/store type 9", NULL);
  TC_CHECK(tc_set_ldst_type(cp, TC_LDST_STMATRIX_TRANS) == TC_OK, "%s", E(x));
  tc_tensor *cb = tc_cache_before(x.a);
  expect("cache_before of an input", tstat(cb), TC_ERR_ARGUMENT, E(x), "tc_cache_before", "T0",
         "fusion input", NULL);
  tc_fusion_free(x.f);

  /* registers read across threads: T3 local with TIDx on axis 1, T4 serial */
  x = make2(8, 32);
  TC_CHECK(tc_parallelize(x.mul, 1, TC_TIDX) == TC_OK, "%s", E(x));
  k = compile_t(x.f, TC_TARGET_OPENCL, NULL, &st);
  expect("registers read across threads (compile)", st, TC_ERR_SCHEDULE, E(x), "compile", "T3",
         "local memory", "axis 1 bound to TIDx", "consumer T4", "no matching TIDx axis",
         "schedule and parallelize T3 and T4 alike", "or place T3 in shared memory", NULL);
  TC_CHECK(k == NULL, "kernel returned");
  tc_fusion_free(x.f);

  /* shared memory read across blocks: T3 shared with BIDx, T4 serial */
  x = make2(8, 32);
  TC_CHECK(tc_set_memory_type(x.mul, TC_MEM_SHARED) == TC_OK, "%s", E(x));
  TC_CHECK(tc_parallelize(x.mul, 0, TC_BIDX) == TC_OK, "%s", E(x));
  k = compile_t(x.f, TC_TARGET_OPENCL, NULL, &st);
  expect("shared memory read across blocks (compile)", st, TC_ERR_SCHEDULE, E(x), "T3",
         "shared memory", "axis 0 bound to BIDx", "consumer T4",
         "schedule and parallelize T3 and T4 alike", "no memory type makes this safe", NULL);
  TC_CHECK(!strstr(E(x), "global memory"), "a remedy that does not apply: %s", E(x));
  tc_fusion_free(x.f);

  /* global memory read across blocks: an output T1 with BIDx, read by the
   * output T2 serial there; no memory type is a remedy (T1 is already in
   * global memory, and blocks do not wait for each other) */
  {
    tc_fusion *f = tc_fusion_new();
    int64_t s2[2] = {8, 32};
    tc_tensor *in = tc_input(f, TC_F32, 2, s2);
    tc_tensor *o1 = tc_unary(f, TC_NEG, in);
    tc_tensor *o2 = tc_unary(f, TC_ABS, o1);
    TC_CHECK(tc_add_output(f, o1) == TC_OK && tc_add_output(f, o2) == TC_OK, "%s", tc_fusion_error(f));
    TC_CHECK(tc_parallelize(o1, 0, TC_BIDX) == TC_OK, "%s", tc_fusion_error(f));
    k = compile_t(f, TC_TARGET_OPENCL, NULL, &st);
    expect("global memory read across blocks (compile)", st, TC_ERR_SCHEDULE, tc_fusion_error(f),
           "compile: T1 is in global memory with axis 0 bound to BIDx, but its consumer T2 has no "
           "matching BIDx axis, so it would read elements another block wrote; schedule and "
           "parallelize T1 and T2 alike (tc_propagate_transforms, tc_parallelize_all_like); the "
           "blocks of a launch neither share on-chip memory nor wait for each other, so no memory "
           "type makes this safe", NULL);
    TC_CHECK(k == NULL, "kernel returned");
    TC_CHECK(tc_parallelize_all_like(o1) == TC_OK, "%s", tc_fusion_error(f));
    k = compile_t(f, TC_TARGET_OPENCL, NULL, &st);
    TC_CHECK(k != NULL, "the remedy compiles: %s", tc_fusion_error(f));
    tc_kernel_free(k);
    tc_fusion_free(f);
  }

  /* too many registers: a 100 x 50 local tensor, not inlined */
  x = make2(100, 50);
  k = compile_t(x.f, TC_TARGET_OPENCL, NULL, &st);
  expect("too many registers (compile)", st, TC_ERR_LOWER, E(x), "T3", "5000 registers",
         "limit 4096", NULL);
  tc_fusion_free(x.f);

  /* too much shared memory for CUDA: 300 x 256 f32 = 307200 bytes, over
   * the default arch sm_80's 163 KiB (166912 bytes) */
  x = make2(300, 256);
  TC_CHECK(tc_set_memory_type(x.mul, TC_MEM_SHARED) == TC_OK, "%s", E(x));
  k = compile_t(x.f, TC_TARGET_CUDA, NULL, &st);
  expect("too much shared memory for CUDA (compile)", st, TC_ERR_LOWER, E(x), "307200 bytes",
         "shared memory", "cuda sm_80 allows at most 166912", NULL);
  tc_fusion_free(x.f);
}

/* ---- compile-time checks -------------------------------------------------------- */

static void test_compile_misuse(void) {
  tc_status st = TC_OK;
  tc_kernel *k;

  /* vectorized axis not innermost */
  fx x = make2(8, 16);
  TC_CHECK(tc_split(x.out, 1, 4, 1) == TC_OK, "%s", E(x)); /* [8, 4, 4] */
  TC_CHECK(tc_parallelize(x.out, 1, TC_VECTORIZE) == TC_OK, "%s", E(x));
  k = compile_t(x.f, TC_TARGET_OPENCL, NULL, &st);
  expect("vectorized axis not innermost (compile)", st, TC_ERR_SCHEDULE, E(x), "compile", "T4",
         "axis 1", "not the innermost", NULL);
  TC_CHECK(k == NULL, "kernel returned");
  tc_fusion_free(x.f);

  /* vectorize an inner split that does not divide: 18 = 4 * 5 - 2 */
  x = make2(8, 18);
  TC_CHECK(tc_split(x.out, 1, 4, 1) == TC_OK, "%s", E(x));
  TC_CHECK(tc_parallelize(x.out, 2, TC_VECTORIZE) == TC_OK, "%s", E(x));
  k = compile_t(x.f, TC_TARGET_OPENCL, NULL, &st);
  expect("vectorize a non-divisible split (compile)", st, TC_ERR_SCHEDULE, E(x), "compile", "T4",
         "axis 2", "does not divide", NULL);
  tc_fusion_free(x.f);

  /* more than 1024 threads in a block for CUDA (OpenCL leaves it to the device) */
  x = make2(2, 1024);
  TC_CHECK(tc_parallelize(x.out, 0, TC_TIDY) == TC_OK, "%s", E(x));
  TC_CHECK(tc_parallelize(x.out, 1, TC_TIDX) == TC_OK, "%s", E(x));
  TC_CHECK(tc_propagate_transforms(x.out) == TC_OK, "%s", E(x));
  TC_CHECK(tc_parallelize_all_like(x.out) == TC_OK, "%s", E(x));
  TC_CHECK(tc_inline_most(x.f) == TC_OK, "%s", E(x));
  k = compile_t(x.f, TC_TARGET_CUDA, "big_block", &st);
  expect("block over 1024 threads for CUDA (compile)", st, TC_ERR_LOWER, E(x), "2048 threads",
         "1024 x 2 x 1", "at most 1024", NULL);
  TC_CHECK(k == NULL, "kernel returned");
  tc_fusion_free(x.f);

  /* TIDz over 64 for CUDA */
  x = make2(128, 2);
  TC_CHECK(tc_parallelize(x.out, 0, TC_TIDZ) == TC_OK, "%s", E(x));
  TC_CHECK(tc_parallelize_all_like(x.out) == TC_OK, "%s", E(x));
  TC_CHECK(tc_inline_most(x.f) == TC_OK, "%s", E(x));
  k = compile_t(x.f, TC_TARGET_CUDA, NULL, &st);
  expect("TIDz over 64 for CUDA (compile)", st, TC_ERR_LOWER, E(x), "TIDz extent 128", "64", NULL);
  tc_fusion_free(x.f);

  /* BIDy over 65535 */
  x = make2(70000, 2);
  TC_CHECK(tc_parallelize(x.out, 0, TC_BIDY) == TC_OK, "%s", E(x));
  TC_CHECK(tc_parallelize_all_like(x.out) == TC_OK, "%s", E(x));
  TC_CHECK(tc_inline_most(x.f) == TC_OK, "%s", E(x));
  k = compile_t(x.f, TC_TARGET_OPENCL, NULL, &st);
  expect("grid y over 65535 (compile)", st, TC_ERR_LOWER, E(x), "grid 1 x 70000 x 1",
         "launch limits", NULL);
  tc_fusion_free(x.f);

  /* a shared tensor of 2^90 elements, each axis under the 2^31 limit
   * (found by fuzz_sched: the byte count overflowed) */
  {
    tc_fusion *f = tc_fusion_new();
    int64_t shape[3] = {16, 16, 16};
    tc_tensor *in = tc_input(f, TC_F32, 3, shape), *sh = tc_set(f, in), *out = tc_set(f, sh);
    tc_add_output(f, out);
    TC_CHECK(tc_set_memory_type(sh, TC_MEM_SHARED) == TC_OK, "%s", tc_fusion_error(f));
    for (int a = 0; a < 3; a++)
      TC_CHECK(tc_resize(sh, a, 0, (1 << 30) - 16) == TC_OK, "%s", tc_fusion_error(f));
    k = compile_t(f, TC_TARGET_OPENCL, NULL, &st);
    expect("2^90 shared elements (compile)", st, TC_ERR_LOWER, tc_fusion_error(f),
           "more than 2^63 bytes of shared memory", NULL);
    tc_kernel_free(k);
    tc_fusion_free(f);
  }

  /* a printed index that doubles with each swizzle (found by fuzz_sched:
   * 30 of them took 2 GiB): 8 compile, 30 are refused with the reason */
  for (int nsw = 8; nsw <= 30; nsw += 22) {
    tc_fusion *f = tc_fusion_new();
    int64_t shape[1] = {16};
    tc_tensor *in = tc_input(f, TC_F32, 1, shape), *out = tc_set(f, in);
    tc_add_output(f, out);
    for (int i = 0; i < nsw; i++)
      TC_CHECK(tc_swizzle_cute(out, 0, 1, 1, 2) == TC_OK, "swizzle %d: %s", i, tc_fusion_error(f));
    k = compile_t(f, TC_TARGET_OPENCL, NULL, &st);
    if (nsw == 8)
      TC_CHECK(st == TC_OK && k, "8 swizzles: %s", tc_fusion_error(f));
    else
      expect("30 swizzles on one axis (compile)", st, TC_ERR_LOWER, tc_fusion_error(f), "T1",
             "more than 262144 terms", "swizzle", NULL);
    tc_kernel_free(k);
    tc_fusion_free(f);
  }

  /* bad kernel names */
  x = make2(4, 4);
  TC_CHECK(tc_inline_most(x.f) == TC_OK, "%s", E(x));
  k = compile_t(x.f, TC_TARGET_OPENCL, "my-kernel", &st);
  expect("kernel name with a dash", st, TC_ERR_ARGUMENT, E(x), "kernel name \"my-kernel\"",
         "not a C identifier", NULL);
  TC_CHECK(k == NULL, "kernel returned");
  k = compile_t(x.f, TC_TARGET_OPENCL, "9lives", &st);
  expect("kernel name starting with a digit", st, TC_ERR_ARGUMENT, E(x), "\"9lives\"",
         "not a C identifier", NULL);
  k = compile_t(x.f, TC_TARGET_OPENCL, "", &st);
  expect("empty kernel name", st, TC_ERR_ARGUMENT, E(x), "kernel name \"\"", NULL);
  k = compile_t(x.f, (tc_target)42, NULL, &st);
  expect("target without a dialect", st, TC_ERR_UNSUPPORTED, E(x), "(42)", "no dialect", NULL);
  tc_fusion_free(x.f);

  /* tensor memory for CUDA is not generated yet */
  x = make2(4, 4);
  TC_CHECK(tc_set_memory_type(x.mul, TC_MEM_TENSOR) == TC_OK, "%s", E(x));
  TC_CHECK(tc_set_tmem_dimsep(x.mul, 1) == TC_OK, "%s", E(x));
  k = compile_t(x.f, TC_TARGET_CUDA, NULL, &st);
  expect("tensor memory for CUDA (compile)", st, TC_ERR_UNSUPPORTED, E(x), "tensor memory",
         "not supported", NULL);
  tc_fusion_free(x.f);

  /* no outputs */
  tc_fusion *f = tc_fusion_new();
  int64_t s[1] = {4};
  tc_tensor *a = tc_input(f, TC_F32, 1, s);
  (void)tc_unary(f, TC_NEG, a);
  k = tc_compile(f, NULL, &st);
  expect("compile with no outputs", st, TC_ERR_ARGUMENT, tc_fusion_error(f), "no outputs", NULL);
  TC_CHECK(k == NULL, "kernel returned");
  tc_fusion_free(f);
}

/* ---- building fusions ------------------------------------------------------------ */

static void test_build_misuse(void) {
  tc_fusion *f = tc_fusion_new(), *g = tc_fusion_new();
  int64_t s45[2] = {4, 5}, s46[2] = {4, 6}, s3[3] = {4, 5, 1}, bad[2] = {4, 0};
  tc_tensor *a = tc_input(f, TC_F32, 2, s45);     /* T0 */
  tc_tensor *b = tc_input(f, TC_F32, 2, s46);     /* T1 */
  tc_tensor *h = tc_input(f, TC_F16, 2, s45);     /* T2 */
  tc_tensor *r3 = tc_input(f, TC_F32, 3, s3);     /* T3 */
  tc_tensor *i = tc_input(f, TC_I32, 2, s45);     /* T4 */
  tc_tensor *other = tc_input(g, TC_F32, 2, s45); /* T0 of g */
  const char *m = tc_fusion_error(f);

  expect("binary shape mismatch", tstat(tc_binary(f, TC_ADD, a, b)), TC_ERR_ARGUMENT, m, "tc_binary",
         "T0 and T1", "axis 1", "5 vs 6", NULL);
  expect("binary rank mismatch", tstat(tc_binary(f, TC_MUL, a, r3)), TC_ERR_ARGUMENT, m, "T0",
         "rank 2", "T3 has rank 3", NULL);
  expect("binary dtype mismatch", tstat(tc_binary(f, TC_SUB, a, h)), TC_ERR_ARGUMENT, m, "T0 is f32",
         "T2 is f16", "cast one first", NULL);
  expect("binary operand of another fusion", tstat(tc_binary(f, TC_ADD, a, other)), TC_ERR_ARGUMENT,
         m, "tc_binary", "not a tensor of this fusion", NULL);
  expect("binary NULL operand", tstat(tc_binary(f, TC_ADD, NULL, a)), TC_ERR_ARGUMENT, m,
         "not a tensor of this fusion", NULL);
  expect("binary unknown op", tstat(tc_binary(f, (tc_binary_op)77, a, a)), TC_ERR_ARGUMENT, m,
         "tc_binary", "T0", "unknown op 77", NULL);
  expect("unary unknown op", tstat(tc_unary(f, (tc_unary_op)-1, a)), TC_ERR_ARGUMENT, m, "tc_unary",
         "T0", "unknown op -1", NULL);
  expect("float op on an integer tensor", tstat(tc_unary(f, TC_EXP, i)), TC_ERR_ARGUMENT, m, "T4 is i32",
         "floating-point", NULL);
  int p00[2] = {0, 0}, p02[2] = {0, 2}, pm1[2] = {-1, 0};
  expect("permute repeats an axis", tstat(tc_permute(f, a, p00)), TC_ERR_ARGUMENT, m, "tc_permute",
         "T0", "exactly once", "bad entry 1: 0", NULL);
  expect("permute axis out of range", tstat(tc_permute(f, a, p02)), TC_ERR_ARGUMENT, m, "T0",
         "bad entry 1: 2", NULL);
  expect("permute negative axis", tstat(tc_permute(f, a, pm1)), TC_ERR_ARGUMENT, m, "T0",
         "bad entry 0: -1", NULL);
  expect("permute NULL perm", tstat(tc_permute(f, a, NULL)), TC_ERR_ARGUMENT, m, "tc_permute", "T0",
         "perm is NULL", NULL);
  expect("cast to an unknown dtype", tstat(tc_cast(f, a, (tc_dtype)9)), TC_ERR_ARGUMENT, m, "tc_cast",
         "T0", "unknown dtype 9", NULL);
  expect("cast of another fusion's tensor", tstat(tc_cast(f, other, TC_F16)), TC_ERR_ARGUMENT, m,
         "tc_cast", "not a tensor of this fusion", NULL);
  expect("input with a zero extent", tstat(tc_input(f, TC_F32, 2, bad)), TC_ERR_ARGUMENT, m, "tc_input",
         "extent 1 is 0", NULL);
  expect("input of rank 0", tstat(tc_input(f, TC_F32, 0, s45)), TC_ERR_ARGUMENT, m, "rank must be 1..16",
         NULL);
  expect("input of unknown dtype", tstat(tc_input(f, (tc_dtype)17, 2, s45)), TC_ERR_ARGUMENT, m,
         "unknown dtype 17", NULL);

  tc_tensor *o = tc_set(f, a);
  TC_CHECK(tc_add_output(f, o) == TC_OK, "%s", m);
  expect("add an output twice", tc_add_output(f, o), TC_ERR_ARGUMENT, m, "tc_add_output",
         tc_tensor_name(o), "already an output", NULL);
  expect("add an input as output", tc_add_output(f, a), TC_ERR_ARGUMENT, m, "T0 is an input",
         "tc_set", NULL);
  expect("add another fusion's tensor as output", tc_add_output(f, other), TC_ERR_ARGUMENT, m,
         "not of this fusion", NULL);
  tc_fusion_free(f);
  tc_fusion_free(g);
}

/* ---- kernels ---------------------------------------------------------------------- */

static void test_kernel_misuse(void) {
  fx x = make2(4, 4);
  TC_CHECK(tc_inline_most(x.f) == TC_OK, "%s", E(x));
  tc_status st;
  tc_kernel *k = compile_t(x.f, TC_TARGET_OPENCL, "misuse_k", &st);
  TC_REQUIRE(k, "compile: %s", E(x));
  expect("run with NULL args", tc_kernel_run(k, NULL, NULL, NULL), TC_ERR_ARGUMENT, tc_kernel_error(k),
         "tc_kernel_run", "args is NULL", NULL);
  float buf[16] = {0};
  void *args[4] = {buf, NULL, buf, buf};
  expect("run with a NULL argument", tc_kernel_run(k, args, NULL, NULL), TC_ERR_ARGUMENT,
         tc_kernel_error(k), "argument 1 is NULL", NULL);
  TC_CHECK_EQ_INT(tc_kernel_nparams(k), 4);
  TC_CHECK_EQ_INT(tc_kernel_param_bytes(k, 4), 0);
  TC_CHECK_EQ_INT(tc_kernel_param_bytes(k, -1), 0);
  tc_kernel_free(k);

  tc_compile_options o = {TC_TARGET_CUDA, "sm_x", "bad_arch"};
  k = tc_compile(x.f, &o, &st);
  TC_REQUIRE(k, "compile: %s", E(x));
  expect("NVRTC build for a bad arch", tc_kernel_build(k, NULL), TC_ERR_ARGUMENT, tc_kernel_error(k),
         "bad CUDA architecture 'sm_x'", NULL);
  tc_kernel_free(k);
  tc_fusion_free(x.f);
}

/* ---- limits and failed calls ------------------------------------------------------
 * Loop extents past 32 bits, resize overflow, and a failed tc_compute_at
 * leaving the producer as it was. */

static void test_limits(void) {
  tc_status st = TC_OK;
  char d0[256];

  /* a split factor of 2^40 gives a loop "for (int i = 0; i < 1099511627776; ++i)" */
  int64_t s[2] = {4, 5};
  tc_fusion *f = tc_fusion_new();
  tc_tensor *o = tc_set(f, tc_input(f, TC_F32, 2, s));
  tc_add_output(f, o);
  if (tc_split(o, 1, (int64_t)1 << 40, 1) == TC_OK) { /* else rejected early: fine */
    tc_kernel *k = tc_compile(f, NULL, &st);
    TC_CHECK(st != TC_OK, "a loop of 2^40 iterations compiled:\n%s", k ? tc_kernel_source(k) : "");
    tc_kernel_free(k);
  }
  tc_fusion_free(f);

  /* extent INT64_MAX (split by INT64_MAX), then resize by +1: signed overflow */
  f = tc_fusion_new();
  o = tc_set(f, tc_input(f, TC_F32, 2, s));
  tc_add_output(f, o);
  if (tc_split(o, 0, INT64_MAX, 1) == TC_OK)
    expect("resize of an INT64_MAX axis", tc_resize(o, 1, 1, 0), TC_ERR_ARGUMENT, tc_fusion_error(f),
           "T1", "axis 1", NULL);
  tc_fusion_free(f);

  /* the consumer is already parallelized: compute_at gives the shared
   * loops the consumer's parallel types */
  fx x = make2(16, 40);
  TC_CHECK(tc_split(x.out, 1, 8, 1) == TC_OK, "%s", E(x));
  TC_CHECK(tc_parallelize(x.out, 0, TC_BIDX) == TC_OK, "%s", E(x));
  TC_CHECK(tc_compute_at(x.mul, x.out, 1) == TC_OK, "%s", E(x));
  TC_CHECK(tc_tensor_loop_ptype(x.mul, 0) == TC_BIDX, "shared axis 0 is %s",
           tc_ptype_name(tc_tensor_loop_ptype(x.mul, 0)));
  TC_CHECK(tc_tensor_nloop(x.mul) == 3, "producer has %d loop axes", tc_tensor_nloop(x.mul));
  tc_fusion_free(x.f);

  /* a vectorized consumer axis cannot be shared: compute_at fails and the
   * producer keeps its loop domain */
  x = make2(16, 40);
  TC_CHECK(tc_split(x.out, 1, 4, 1) == TC_OK, "%s", E(x));
  TC_CHECK(tc_parallelize(x.out, 2, TC_VECTORIZE) == TC_OK, "%s", E(x));
  desc(x.mul, d0);
  expect("compute_at past a vectorized axis", tc_compute_at(x.mul, x.out, 3), TC_ERR_SCHEDULE,
         E(x), "tc_compute_at", "T3", "Vectorize", NULL);
  UNCHANGED(x.mul, d0);
  tc_fusion_free(x.f);
}

int main(void) {
  TC_RUN(test_transform_misuse);
  TC_RUN(test_parallel_misuse);
  TC_RUN(test_inline_misuse);
  TC_RUN(test_memory_misuse);
  TC_RUN(test_compile_misuse);
  TC_RUN(test_build_misuse);
  TC_RUN(test_kernel_misuse);
  TC_RUN(test_limits);
  printf("%d misuse cases, %d with a wrong status or message\n", ncases, ncase_fail);
  TC_MAIN_END();
}
