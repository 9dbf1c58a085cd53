/* tmap.c - checking tensor-map launch arguments (tc_rt_tmap) against the
 * rules of cuTensorMapEncodeTiled and turning them into its arguments.
 * Pure C: no cuda.h, no driver; cuda.c calls the driver with the result,
 * and the tests check both without a GPU. */
#include <stdio.h>

#include "runtime.h"

int tc_tmap_cu_dtype(tc_dtype dt) {
  switch (dt) {
    case TC_F32: return TC_CU_TMAP_DTYPE_FLOAT32;
    case TC_F16: return TC_CU_TMAP_DTYPE_FLOAT16;
    case TC_BF16: return TC_CU_TMAP_DTYPE_BFLOAT16;
    case TC_I32: return TC_CU_TMAP_DTYPE_INT32;
    case TC_I8: return TC_CU_TMAP_DTYPE_UINT8; /* a copy moves bits: signedness is moot */
  }
  return -1;
}

static int cu_swizzle(int bytes) {
  switch (bytes) {
    case 0: return TC_CU_TMAP_SWIZZLE_NONE;
    case 32: return TC_CU_TMAP_SWIZZLE_32B;
    case 64: return TC_CU_TMAP_SWIZZLE_64B;
    case 128: return TC_CU_TMAP_SWIZZLE_128B;
  }
  return -1;
}

#define FAIL(...)                         \
  do {                                    \
    tc_str_printf(err, __VA_ARGS__);      \
    return TC_ERR_ARGUMENT;               \
  } while (0)

tc_status tc_tmap_check(const tc_rt_tmap *t, int nbufs, tc_str *err) {
  if (!t) FAIL("no tensor map (NULL)");
  if (t->buffer < 0 || t->buffer >= nbufs)
    FAIL("buffer index %d is out of range (the launch has %d buffer%s)", t->buffer, nbufs,
         nbufs == 1 ? "" : "s");
  if (tc_tmap_cu_dtype(t->dtype) < 0)
    FAIL("element type %d has no tensor-map data type (f32, f16, bf16, i32 and i8 do)",
         (int)t->dtype);
  if (t->rank < 1 || t->rank > 5) FAIL("rank %d is not 1 to 5", t->rank);
  const uint64_t elem = tc_dtype_size(t->dtype);
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] < 1 || t->dims[i] > (UINT64_C(1) << 32))
      FAIL("dims[%d] = %llu is not 1 to 2^32", i, (unsigned long long)t->dims[i]);
  for (int i = 1; i < t->rank; i++) {
    unsigned long long s = t->strides[i];
    if (s % 16 != 0) FAIL("strides[%d] = %llu bytes is not a multiple of 16", i, s);
    if (s >= (UINT64_C(1) << 40)) FAIL("strides[%d] = %llu bytes is not below 2^40", i, s);
    /* dimension i must step over all of dimension i - 1 (no overlap) */
    uint64_t prev = i == 1 ? elem : t->strides[i - 1];
    if (t->dims[i - 1] > s / prev)
      FAIL("strides[%d] = %llu bytes is below dims[%d] * %s = %llu * %llu: the dimensions overlap",
           i, s, i - 1, i == 1 ? "the element size" : "its stride",
           (unsigned long long)t->dims[i - 1], (unsigned long long)prev);
  }
  for (int i = 0; i < t->rank; i++)
    if (t->box[i] < 1 || t->box[i] > 256) FAIL("box[%d] = %u is not 1 to 256", i, t->box[i]);
  uint64_t inner = t->box[0] * elem;
  if (inner % 16 != 0)
    FAIL("box[0] * %llu bytes = %llu is not a multiple of 16 bytes", (unsigned long long)elem,
         (unsigned long long)inner);
  if (cu_swizzle(t->swizzle) < 0)
    FAIL("swizzle %d is not 0 (none), 32, 64 or 128 bytes", t->swizzle);
  if (t->swizzle && inner > (uint64_t)t->swizzle)
    FAIL("box[0] * %llu bytes = %llu exceeds the %dB swizzle span", (unsigned long long)elem,
         (unsigned long long)inner, t->swizzle);
  return TC_OK;
}

tc_status tc_tmap_check_all(const tc_rt_tmap *maps, int n, int nbufs, tc_str *err) {
  if (n > 0 && !maps) FAIL("%d tensor maps but no array of them (NULL)", n);
  for (int i = 0; i < n; i++) {
    tc_str why;
    tc_str_init(&why);
    tc_status st = tc_tmap_check(&maps[i], nbufs, &why);
    if (st) tc_str_printf(err, "tensor map %d: %s", i, tc_str_cstr(&why));
    tc_str_free(&why);
    if (st) return st;
  }
  return TC_OK;
}

uint64_t tc_tmap_span_bytes(const tc_rt_tmap *t) {
  /* one past the last byte: dims[0] elements, then (dims[i] - 1) strides
   * of every outer dimension (a checked map's products fit 64 bits) */
  uint64_t end = t->dims[0] * (uint64_t)tc_dtype_size(t->dtype);
  for (int i = 1; i < t->rank; i++) {
    if (t->dims[i] == 0) return 0;
    uint64_t step = t->dims[i] - 1;
    if (step && t->strides[i] > (UINT64_MAX - end) / step) return UINT64_MAX;
    end += step * t->strides[i];
  }
  return end;
}

void tc_tmap_encode_args(const tc_rt_tmap *t, tc_cu_tmap_args *a) {
  *a = (tc_cu_tmap_args){0};
  a->data_type = tc_tmap_cu_dtype(t->dtype);
  a->rank = (uint32_t)t->rank;
  for (int i = 0; i < t->rank; i++) {
    a->dims[i] = t->dims[i];
    a->box[i] = t->box[i];
    a->elem_strides[i] = 1;
    if (i > 0) a->strides[i - 1] = t->strides[i];
  }
  a->interleave = TC_CU_TMAP_INTERLEAVE_NONE;
  a->swizzle = cu_swizzle(t->swizzle);
  a->l2_promotion = TC_CU_TMAP_L2_PROMOTION_128B;
  a->oob_fill = TC_CU_TMAP_OOB_FILL_NONE;
}
