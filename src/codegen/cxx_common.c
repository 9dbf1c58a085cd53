/* cxx_common.c - the pieces the CUDA and HIP dialects share
 * (cxx_common.h). */
#include "cxx_common.h"

void tc_cxx_kernel_begin_blocks(tc_str *o, const char *name, int64_t threads, int min_blocks,
                                int cluster) {
  tc_str_cat(o, "extern \"C\" __global__ void ");
  if (cluster > 1) tc_str_printf(o, "__cluster_dims__(%d, 1, 1) ", cluster);
  tc_str_printf(o, "__launch_bounds__(%lld", (long long)threads);
  if (min_blocks > 0) tc_str_printf(o, ", %d", min_blocks);
  tc_str_printf(o, ") %s(", name);
}

void tc_cxx_kernel_begin(tc_str *o, const char *name, int64_t threads) {
  tc_cxx_kernel_begin_blocks(o, name, threads, 0, 1);
}

void tc_cxx_kernel_open(tc_str *o, const tc_kir *k, const char *name) {
  tc_cxx_kernel_begin(o, name, k->block[0] * k->block[1] * k->block[2]);
}

void tc_cxx_buffer_param(tc_str *o, tc_dtype t, const char *name, int is_output, int first) {
  tc_str_printf(o, "%s%s%s* __restrict__ %s", first ? "" : ", ", is_output ? "" : "const ",
                tc_storage_type(t), name);
}

void tc_cxx_param(tc_str *o, const tc_tensor *t, int is_output, int first) {
  if (t->is_scalar) { /* by value (tc_scalar_input) */
    tc_str_printf(o, "%sconst %s %s", first ? "" : ", ", tc_storage_type(t->dtype), t->name);
    return;
  }
  tc_cxx_buffer_param(o, t->dtype, t->name, is_output, first);
}

void tc_cxx_shared_array(tc_str *o, tc_dtype t, const char *name, int64_t count, int depth) {
  tc_str_indent(o, depth);
  /* 16-byte aligned for the generators' vector accesses (vec_store) */
  tc_str_printf(o, "__shared__ %s %s[%lld] __attribute__((aligned(16)));\n", tc_storage_type(t),
                name, (long long)count);
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

/* ---- vector accesses: a reinterpret_cast to a vector type of the same
 * bytes: float2 / float4 for f32; 16-bit floats as packed pairs in
 * unsigned / uint2 / uint4 (element 2w in the low half of word w, the
 * targets being little-endian). */

static const char *cxx_vec_type(tc_dtype t, int n) {
  if (t == TC_F32) return n == 2 ? "float2" : "float4";
  return n == 2 ? "unsigned" : n == 4 ? "uint2" : "uint4";
}

void tc_cxx_vec_load(tc_str *o, tc_dtype t, tc_memtype m, const char *name, const char *idx, int n,
                     int raw, const char *valid, const char *var, int depth) {
  const char *ty = cxx_vec_type(t, n);
  int words = t == TC_F32 ? n : n / 2;
  tc_str_indent(o, depth);
  tc_str_printf(o, "const %s %s = ", ty, var);
  if (valid) tc_str_printf(o, "(%s) ? ", valid);
  tc_str_printf(o, "*reinterpret_cast<const %s*>(%s + (%s))", ty, name, idx);
  if (valid) {
    if (words == 1) {
      tc_str_cat(o, " : 0u");
    } else {
      tc_str_printf(o, " : %s{", ty);
      for (int i = 0; i < words; i++) tc_str_printf(o, "%s%s", i ? ", " : "", t == TC_F32 ? "0.0f" : "0u");
      tc_str_cat(o, "}");
    }
  }
  tc_str_cat(o, ";\n");
}

static const char cxx_comp[4][3] = {".x", ".y", ".z", ".w"};

void tc_cxx_vec_elem(tc_str *o, tc_dtype t, const char *var, int n, int i, int raw) {
  if (t == TC_F32) {
    tc_str_printf(o, "%s%s", var, cxx_comp[i]);
    return;
  }
  if (!raw) tc_str_cat(o, t == TC_F16 ? "tc_f16_to_f32(" : "tc_bf16_to_f32(");
  const char *comp = n == 2 ? "" : cxx_comp[i / 2];
  if (i % 2)
    tc_str_printf(o, "(unsigned short)(%s%s >> 16)", var, comp);
  else
    tc_str_printf(o, "(unsigned short)(%s%s & 0xffffu)", var, comp);
  if (!raw) tc_str_cat(o, ")");
}

void tc_cxx_vec_store(tc_str *o, tc_dtype t, tc_memtype m, const char *name, const char *idx, int n,
                      int raw, const char *const *vals, int depth) {
  const char *ty = cxx_vec_type(t, n);
  tc_str_indent(o, depth);
  tc_str_printf(o, "*reinterpret_cast<%s*>(%s + (%s)) = ", ty, name, idx);
  if (t == TC_F32) {
    tc_str_printf(o, "%s{", ty);
    for (int i = 0; i < n; i++) tc_str_printf(o, "%s%s", i ? ", " : "", vals[i]);
    tc_str_cat(o, "};\n");
    return;
  }
  const char *conv = raw ? "" : t == TC_F16 ? "tc_f32_to_f16" : "tc_f32_to_bf16";
  if (n > 2) tc_str_printf(o, "%s{", ty);
  for (int w = 0; w < n / 2; w++)
    tc_str_printf(o, "%s(unsigned)(unsigned short)%s(%s) | ((unsigned)(unsigned short)%s(%s) << 16)",
                  w ? ", " : "", conv, vals[2 * w], conv, vals[2 * w + 1]);
  tc_str_cat(o, n > 2 ? "};\n" : ";\n");
}
