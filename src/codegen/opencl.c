/* opencl.c - the OpenCL C 1.2 dialect.  16-bit floats are stored as
 * unsigned short and converted with vload_half / vstore_half_rte (OpenCL
 * 1.2 on the CPU has no half arithmetic); bf16 is converted by bit
 * manipulation with round-to-nearest-even. */
#include "dialect.h"

static const char cl_prelude[] =
    TC_PRELUDE_INT("static")
    "static float tc_bf16_to_f32(ushort v) { return as_float((uint)v << 16); }\n"
    "static ushort tc_f32_to_bf16(float f) {\n"
    "  uint u = as_uint(f);\n"
    "  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);\n"
    "  u += 0x7fffu + ((u >> 16) & 1u);\n"
    "  return (ushort)(u >> 16);\n"
    "}\n"
    /* tanh through a clamp: PoCL 3.1 returns 0.99999994 for tanh(inf) and
     * for every large x, where OpenCL requires tanh(+-inf) = +-1 and f32
     * rounds tanh(x) to +-1 for |x| > 13 ln 2 = 9.0109 (1 - tanh x = about
     * 2 exp(-2x), below half an ulp of 1, 2^-25); NaN passes through. */
    "static float tc_tanh(float x) { return fabs(x) >= 9.02f ? copysign(1.0f, x) : tanh(x); }\n";

static const char *space(tc_memtype m) {
  switch (m) {
    case TC_MEM_GLOBAL: return "__global ";
    case TC_MEM_SHARED: case TC_MEM_TENSOR: return "__local ";
    case TC_MEM_LOCAL: return "";
  }
  return "";
}

static void cl_kernel_begin(tc_str *o, const char *name, int64_t threads) {
  tc_str_printf(o, "__kernel void %s(", name);
}

static void cl_kernel_open(tc_str *o, const tc_kir *k, const char *name) {
  cl_kernel_begin(o, name, k->block[0] * k->block[1] * k->block[2]);
}

static void cl_buffer_param(tc_str *o, tc_dtype t, const char *name, int is_output, int first) {
  tc_str_printf(o, "%s__global %s%s* restrict %s", first ? "" : ", ", is_output ? "" : "const ",
                tc_storage_type(t), name);
}

static void cl_param(tc_str *o, const tc_tensor *t, int is_output, int first) {
  if (t->is_scalar) { /* by value (tc_scalar_input) */
    tc_str_printf(o, "%sconst %s %s", first ? "" : ", ", tc_storage_type(t->dtype), t->name);
    return;
  }
  cl_buffer_param(o, t->dtype, t->name, is_output, first);
}

static void cl_shared_array(tc_str *o, tc_dtype t, const char *name, int64_t count, int depth) {
  tc_str_indent(o, depth);
  tc_str_printf(o, "__local %s %s[%lld];\n", tc_storage_type(t), name, (long long)count);
}

static void cl_alloc(tc_str *o, const tc_kalloc *a, int depth) {
  tc_str_indent(o, depth);
  if (a->t->mem == TC_MEM_TENSOR) { /* in the emulated tensor memory (cl_tmem_setup) */
    tc_str_printf(o, "/* %s: tensor memory, %lld lanes x %lld columns (tc_tmem_%s) */\n", a->t->name,
                  (long long)a->lanes, (long long)a->columns, a->t->name);
    return;
  }
  /* Registers start zeroed: LLVM 15 (PoCL 3.1's compiler) miscompiles a
   * loop that writes one element of an array under a predicate, taking it
   * for a reduction from the array's undefined contents, and drops the
   * kernel's stores (tests/test_kernels.c, test_tile_taller_than_tensor). */
  tc_str_printf(o, "%s%s %s[%lld]%s;\n", space(a->t->mem), tc_storage_type(a->t->dtype), a->t->name,
                (long long)a->elems, a->t->mem == TC_MEM_LOCAL ? " = {0}" : "");
}

/* ---- tensor memory, emulated ----------------------------------------------
 * One local array of 128 lanes x 512 columns of 32-bit words stands for the
 * CTA's tensor memory, addressed as tcgen05 addresses it (lane << 16 |
 * column); an access moves `n` words between a thread's registers and
 * lane (address lane + lane id), columns (address column) .. + n - 1,
 * which is what tcgen05.st/ld .32x32b.x<n> does for each thread of a warp
 * (lane id = linear thread id % 32).  The masks keep a wrong address
 * inside the array (lowering has checked that none is). */
static const char cl_tmem_prelude[] =
    "static void tc_tmem_st(__local uint *tm, uint taddr, int laneid, const uint *r, int n) {\n"
    "  uint lane = ((taddr >> 16) + (uint)laneid) & 127u, col = taddr & 0xffffu;\n"
    "  for (int j = 0; j < n; j++) tm[lane * 512u + ((col + (uint)j) & 511u)] = r[j];\n"
    "}\n"
    "static void tc_tmem_ld(__local const uint *tm, uint taddr, int laneid, uint *r, int n) {\n"
    "  uint lane = ((taddr >> 16) + (uint)laneid) & 127u, col = taddr & 0xffffu;\n"
    "  for (int j = 0; j < n; j++) r[j] = tm[lane * 512u + ((col + (uint)j) & 511u)];\n"
    "}\n";

static void cl_tmem_setup(tc_str *o, const tc_kir *k) {
  tc_str_cat(o, "  __local uint tc_tmem[128 * 512];  /* emulated tensor memory: 128 lanes x 512 columns */\n");
  tc_str_printf(o, "  const int tc_laneid = (tidx + %lld * (tidy + %lld * tidz)) %% 32;\n",
                (long long)k->block[0], (long long)k->block[1]);
  for (int i = 0; i < k->nallocs; i++) {
    const tc_kalloc *a = &k->allocs[i];
    if (a->t->mem != TC_MEM_TENSOR) continue;
    tc_str_printf(o, "  const uint tc_tmem_%s = %lldu;  /* tcgen05.alloc of %lld columns */\n",
                  a->t->name, (long long)a->tmem_col, (long long)a->columns);
  }
}

static void cl_tmem_access(tc_str *o, const tc_kalloc *a, int is_load, int words, const char *addr,
                           int depth) {
  tc_str_indent(o, depth);
  tc_str_printf(o, "tc_tmem_%s(tc_tmem, tc_tmem_%s + (uint)(%s), tc_laneid, tc_tr, %d);  /* tcgen05.%s.sync.aligned.32x32b.x%d.b32 */\n",
                is_load ? "ld" : "st", a->t->name, addr, words, is_load ? "ld" : "st", words);
}

static void cl_load(tc_str *o, tc_dtype t, tc_memtype m, const char *name, const char *idx) {
  switch (t) {
    case TC_F16: tc_str_printf(o, "vload_half(%s, (%sconst half*)%s)", idx, space(m), name); break;
    case TC_BF16: tc_str_printf(o, "tc_bf16_to_f32(%s[%s])", name, idx); break;
    case TC_I8: tc_str_printf(o, "(int)%s[%s]", name, idx); break;
    default: tc_str_printf(o, "%s[%s]", name, idx); break;
  }
}

static void cl_store(tc_str *o, tc_dtype t, tc_memtype m, const char *name, const char *idx,
                     const char *v) {
  switch (t) {
    case TC_F16: tc_str_printf(o, "vstore_half_rte(%s, %s, (%shalf*)%s);", v, idx, space(m), name); break;
    case TC_BF16: tc_str_printf(o, "%s[%s] = tc_f32_to_bf16(%s);", name, idx, v); break;
    case TC_I8: tc_str_printf(o, "%s[%s] = (signed char)(%s);", name, idx, v); break;
    default: tc_str_printf(o, "%s[%s] = %s;", name, idx, v); break;
  }
}

/* ---- vector accesses: vloadN / vstoreN (vload_halfN / vstore_halfN_rte
 * for f16 converted to or from float; bf16 as ushortN, converted element
 * by element) ---- */

static int cl_vec_as_float(tc_dtype t, int raw) { return t == TC_F32 || (t == TC_F16 && !raw); }

static void cl_vec_load(tc_str *o, tc_dtype t, tc_memtype m, const char *name, const char *idx,
                        int n, int raw, const char *valid, const char *var, int depth) {
  const char *ty = cl_vec_as_float(t, raw) ? "float" : "ushort";
  tc_str_indent(o, depth);
  tc_str_printf(o, "const %s%d %s = ", ty, n, var);
  if (valid) tc_str_printf(o, "(%s) ? ", valid);
  if (t == TC_F16 && !raw)
    tc_str_printf(o, "vload_half%d(0, (%sconst half*)%s + (%s))", n, space(m), name, idx);
  else
    tc_str_printf(o, "vload%d(0, %s + (%s))", n, name, idx);
  if (valid) tc_str_printf(o, " : (%s%d)(0)", ty, n);
  tc_str_cat(o, ";\n");
}

static void cl_vec_elem(tc_str *o, tc_dtype t, const char *var, int n, int i, int raw) {
  if (t == TC_BF16 && !raw)
    tc_str_printf(o, "tc_bf16_to_f32(%s.s%x)", var, i);
  else
    tc_str_printf(o, "%s.s%x", var, i);
}

static void cl_vec_store(tc_str *o, tc_dtype t, tc_memtype m, const char *name, const char *idx,
                         int n, int raw, const char *const *vals, int depth) {
  int as_float = cl_vec_as_float(t, raw);
  tc_str_indent(o, depth);
  if (t == TC_F16 && !raw)
    tc_str_printf(o, "vstore_half%d_rte((float%d)(", n, n);
  else
    tc_str_printf(o, "vstore%d((%s%d)(", n, as_float ? "float" : "ushort", n);
  for (int i = 0; i < n; i++) {
    if (i) tc_str_cat(o, ", ");
    if (t == TC_BF16 && !raw)
      tc_str_printf(o, "tc_f32_to_bf16(%s)", vals[i]);
    else
      tc_str_cat(o, vals[i]);
  }
  if (t == TC_F16 && !raw)
    tc_str_printf(o, "), 0, (%shalf*)%s + (%s));\n", space(m), name, idx);
  else
    tc_str_printf(o, "), 0, %s + (%s));\n", name, idx);
}

const tc_dialect tc_dialect_opencl = {
    .name = "OpenCL C 1.2",
    .prelude = cl_prelude,
    .kernel_open = cl_kernel_open,
    .param = cl_param,
    .index_defs =
        "  const int bidx = (int)get_group_id(0), bidy = (int)get_group_id(1), bidz = (int)get_group_id(2);\n"
        "  const int tidx = (int)get_local_id(0), tidy = (int)get_local_id(1), tidz = (int)get_local_id(2);\n",
    .alloc = cl_alloc,
    .barrier = "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);",
    .shfl_width = 32,
    /* a local id is below the local size: 0, but not uniform to PoCL */
    .wi_zero_def =
        "  /* 0 in every work-item; loops without a barrier count to extent + tc_wi_zero so\n"
        "   * that PoCL does not split them at barriers of its own */\n"
        "  const int tc_wi_zero = (int)(get_local_id(0) >= get_local_size(0));\n",
    .unroll_pragma = "#pragma unroll",
    .loop_pragma = "#pragma clang loop vectorize(disable)",
    .load = cl_load,
    .store = cl_store,
    .fexp = "exp", .flog = "log", .fsqrt = "sqrt", .ftanh = "tc_tanh",
    .fabs_ = "fabs", .fmax_ = "fmax", .fmin_ = "fmin",
    .kernel_begin = cl_kernel_begin,
    .buffer_param = cl_buffer_param,
    .shared_array = cl_shared_array,
    .tmem_prelude = cl_tmem_prelude,
    .tmem_setup = cl_tmem_setup,
    .tmem_access = cl_tmem_access,
    .f32_bits = "as_uint",
    .bits_f32 = "as_float",
    /* MFMA: emulated (mfma_emu.c) */
    .mfma_prelude = tc_cl_mfma_prelude,
    .mfma_decls = tc_cl_mfma_decls,
    .mfma_smem = tc_cl_mfma_smem,
    .mfma = tc_cl_mfma,
    /* ldmatrix / stmatrix: emulated (ldst_opencl.c) */
    .ldsm_prelude = tc_cl_ldsm_prelude,
    .ldsm_setup = tc_cl_ldsm_setup,
    .ldsm_access = tc_cl_ldsm_access,
    /* mma.sync m16n8k16: emulated (mma_emu.c) */
    .mma_prelude = tc_cl_mma_prelude,
    .mma_decls = tc_cl_mma_decls,
    .mma_smem = tc_cl_mma_smem,
    .mma = tc_cl_mma,
    /* wgmma m64nNk16: emulated (wgmma_emu.c) */
    .wgmma_prelude = tc_cl_wgmma_prelude,
    .wgmma_addr = tc_cl_wgmma_addr,
    .wgmma = tc_cl_wgmma,
    .vec_load = cl_vec_load,
    .vec_elem = cl_vec_elem,
    .vec_store = cl_vec_store,
    .global_qual = "__global ",
    .grid_fence = "mem_fence(CLK_GLOBAL_MEM_FENCE);",
    .grid_atomic_inc = "atomic_inc(%s)",
};
