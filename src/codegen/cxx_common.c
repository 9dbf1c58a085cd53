/* cxx_common.c - the pieces the CUDA and HIP dialects share
 * (cxx_common.h). */
#include "cxx_common.h"

void tc_cxx_kernel_begin(tc_str *o, const char *name, int64_t threads) {
  tc_str_printf(o, "extern \"C\" __global__ void __launch_bounds__(%lld) %s(", (long long)threads,
                name);
}

void tc_cxx_kernel_open(tc_str *o, const tc_kir *k, const char *name) {
  tc_cxx_kernel_begin(o, name, k->block[0] * k->block[1] * k->block[2]);
}

void tc_cxx_buffer_param(tc_str *o, tc_dtype t, const char *name, int is_output, int first) {
  tc_str_printf(o, "%s%s%s* __restrict__ %s", first ? "" : ", ", is_output ? "" : "const ",
                tc_storage_type(t), name);
}

void tc_cxx_param(tc_str *o, const tc_tensor *t, int is_output, int first) {
  tc_cxx_buffer_param(o, t->dtype, t->name, is_output, first);
}

void tc_cxx_shared_array(tc_str *o, tc_dtype t, const char *name, int64_t count, int depth) {
  tc_str_indent(o, depth);
  tc_str_printf(o, "__shared__ %s %s[%lld];\n", tc_storage_type(t), name, (long long)count);
}

void tc_cxx_alloc_buffer(tc_str *o, const tc_kalloc *a, const char *note) {
  const char *ty = tc_storage_type(a->t->dtype);
  if (a->t->mem == TC_MEM_SHARED)
    tc_str_printf(o, "%s* %s = reinterpret_cast<%s*>(tc_smem + %lld);  /* %s%lld elements */\n", ty,
                  a->t->name, ty, (long long)a->offset, note, (long long)a->elems);
  else
    tc_str_printf(o, "%s %s[%lld];\n", ty, a->t->name, (long long)a->elems);
}

void tc_cxx_load(tc_str *o, tc_dtype t, tc_memtype m, const char *name, const char *idx) {
  switch (t) {
    case TC_F16: tc_str_printf(o, "tc_f16_to_f32(%s[%s])", name, idx); break;
    case TC_BF16: tc_str_printf(o, "tc_bf16_to_f32(%s[%s])", name, idx); break;
    case TC_I8: tc_str_printf(o, "(int)%s[%s]", name, idx); break;
    default: tc_str_printf(o, "%s[%s]", name, idx); break;
  }
}

void tc_cxx_store(tc_str *o, tc_dtype t, tc_memtype m, const char *name, const char *idx,
                  const char *v) {
  switch (t) {
    case TC_F16: tc_str_printf(o, "%s[%s] = tc_f32_to_f16(%s);", name, idx, v); break;
    case TC_BF16: tc_str_printf(o, "%s[%s] = tc_f32_to_bf16(%s);", name, idx, v); break;
    case TC_I8: tc_str_printf(o, "%s[%s] = (signed char)(%s);", name, idx, v); break;
    default: tc_str_printf(o, "%s[%s] = %s;", name, idx, v); break;
  }
}
