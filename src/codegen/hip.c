/* hip.c - the HIP C++ dialect (AMD GPUs: gfx90a, gfx940, gfx942, gfx950).
 *
 * Compiled with hipcc (clang) for an --offload-arch; the kernels need no
 * header beyond <hip/hip_runtime.h>.  As in the CUDA dialect, shared
 * memory (LDS) of lowered kernels is one dynamic buffer carved at the byte
 * offsets lowering assigned, and 16-bit floats are stored as unsigned
 * short: f16 converts through _Float16 (round-to-nearest-even), bf16 by
 * bit manipulation as in the OpenCL dialect.  The wavefront is 64 lanes.
 *
 * Additions the GEMM generators use:
 *   - buffer loads: global loads through a buffer resource (V#) with the
 *     LLVM intrinsic llvm.amdgcn.raw.buffer.load.{i16,f32} (buffer_load_ushort /
 *     buffer_load_dword); the resource is base address, num_records =
 *     the bytes the kernel may read (reads past it return 0) and the
 *     third-dword config 0x00020000 (DATA_FORMAT 32, as gfx9 / CDNA
 *     expects for raw buffer accesses);
 *   - MFMA: __builtin_amdgcn_mfma_f32_32x32x8{f16,bf16_1k} and
 *     __builtin_amdgcn_mfma_f32_16x16x16{f16,bf16_1k} on fragments of
 *     4 x 16 bits (short4, bit-cast to _Float16 x4 for f16) and f32 x16 /
 *     f32 x4 accumulators.  The lane layouts are in docs/amd.md. */
#include "cxx_common.h"

#include "../target/target.h"

static const char hip_prelude[] =
    "#include <hip/hip_runtime.h>\n"
    TC_CXX_PRELUDE_INT
    "TC_DEV float tc_f16_to_f32(unsigned short h) { return (float)__builtin_bit_cast(_Float16, h); }\n"
    "TC_DEV unsigned short tc_f32_to_f16(float f) { return __builtin_bit_cast(unsigned short, (_Float16)f); }\n"
    "TC_DEV float tc_bf16_to_f32(unsigned short h) { return __builtin_bit_cast(float, ((unsigned)h) << 16); }\n"
    "TC_DEV unsigned short tc_f32_to_bf16(float f) {\n"
    "  unsigned u = __builtin_bit_cast(unsigned, f);\n"
    "  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);\n"
    "  u += 0x7fffu + ((u >> 16) & 1u);\n"
    "  return (unsigned short)(u >> 16);\n"
    "}\n"
    "/* buffer loads: a V# resource and llvm.amdgcn.raw.buffer.load */\n"
    "typedef int tc_i32x4 __attribute__((ext_vector_type(4)));\n"
    "__device__ short tc_raw_buffer_load_i16(tc_i32x4 rsrc, int voffset, int soffset, int aux) __asm(\"llvm.amdgcn.raw.buffer.load.i16\");\n"
    "__device__ float tc_raw_buffer_load_f32(tc_i32x4 rsrc, int voffset, int soffset, int aux) __asm(\"llvm.amdgcn.raw.buffer.load.f32\");\n"
    "TC_DEV tc_i32x4 tc_make_rsrc(const void *p, unsigned bytes) {\n"
    "  unsigned long long a = (unsigned long long)p;\n"
    "  tc_i32x4 r;\n"
    "  r[0] = (int)(unsigned)a;\n"
    "  r[1] = (int)(unsigned)((a >> 32) & 0xffffu); /* stride 0 */\n"
    "  r[2] = (int)bytes;                           /* num_records */\n"
    "  r[3] = 0x00020000;                           /* DATA_FORMAT 32 */\n"
    "  return r;\n"
    "}\n";

static const char hip_mfma_prelude[] =
    "typedef short tc_s16x4 __attribute__((ext_vector_type(4)));\n"
    "typedef _Float16 tc_f16x4 __attribute__((ext_vector_type(4)));\n"
    "typedef float tc_f32x4 __attribute__((ext_vector_type(4)));\n"
    "typedef float tc_f32x16 __attribute__((ext_vector_type(16)));\n";

static void hip_alloc(tc_str *o, const tc_kalloc *a, int depth) {
  tc_str_indent(o, depth);
  tc_cxx_alloc_buffer(o, a, "LDS, ");
}

static void hip_buffer_setup(tc_str *o, tc_dtype t, const char *name, int64_t bytes, int depth) {
  tc_str_indent(o, depth);
  tc_str_printf(o, "const tc_i32x4 %s_rsrc = tc_make_rsrc(%s, %lldu);  /* buffer loads of %s */\n",
                name, name, (long long)bytes, name);
}

static void hip_buffer_load(tc_str *o, tc_dtype t, const char *name, const char *idx, int raw) {
  switch (t) {
    case TC_F16: case TC_BF16:
      if (!raw) tc_str_cat(o, t == TC_F16 ? "tc_f16_to_f32(" : "tc_bf16_to_f32(");
      tc_str_printf(o, "(unsigned short)tc_raw_buffer_load_i16(%s_rsrc, (%s) * 2, 0, 0)", name, idx);
      if (!raw) tc_str_cat(o, ")");
      break;
    case TC_F32:
      tc_str_printf(o, "tc_raw_buffer_load_f32(%s_rsrc, (%s) * 4, 0, 0)", name, idx);
      break;
    default: /* the generators load only floats; integers go through plain loads */
      tc_cxx_load(o, t, TC_MEM_GLOBAL, name, idx);
      break;
  }
}

static void hip_mfma_decls(tc_str *o, int kind, int na, int nb, int nacc, int waves, int depth) {
  tc_str_indent(o, depth);
  tc_str_printf(o, "tc_s16x4 a_frag[%d], b_frag[%d];  /* MFMA operand fragments */\n", na, nb);
  tc_str_indent(o, depth);
  tc_str_printf(o, "%s c_acc[%d];  /* MFMA accumulators */\n",
                kind == TC_MFMA_32X32X8 ? "tc_f32x16" : "tc_f32x4", nacc);
}

static int64_t hip_mfma_smem(int waves) { return 0; }

static void hip_mfma(tc_str *o, int kind, tc_dtype in, const char *a, const char *b,
                     const char *acc, int depth) {
  const char *shape = kind == TC_MFMA_32X32X8 ? "32x32x8" : "16x16x16";
  tc_str_indent(o, depth);
  if (in == TC_BF16)
    tc_str_printf(o, "%s = __builtin_amdgcn_mfma_f32_%sbf16_1k(%s, %s, %s, 0, 0, 0);\n", acc,
                  shape, a, b, acc);
  else
    tc_str_printf(o,
                  "%s = __builtin_amdgcn_mfma_f32_%sf16(__builtin_bit_cast(tc_f16x4, %s), "
                  "__builtin_bit_cast(tc_f16x4, %s), %s, 0, 0, 0);\n",
                  acc, shape, a, b, acc);
}

const tc_dialect tc_dialect_hip = {
    .name = "HIP C++",
    .prelude = hip_prelude,
    TC_CXX_DIALECT_COMMON,
    .index_defs =
        "  extern __shared__ __attribute__((aligned(16))) unsigned char tc_smem[];\n" TC_CXX_INDEX_DEFS,
    .alloc = hip_alloc,
    .wave_size = 64,
    .shfl_xor = "__shfl_xor(%s, %s)",
    .shfl_width = 64,
    .buffer_setup = hip_buffer_setup,
    .buffer_load = hip_buffer_load,
    .mfma_prelude = hip_mfma_prelude,
    .mfma_decls = hip_mfma_decls,
    .mfma_smem = hip_mfma_smem,
    .mfma = hip_mfma,
};
