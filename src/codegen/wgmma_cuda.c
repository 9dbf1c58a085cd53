/* wgmma_cuda.c - the CUDA dialect's wgmma (sm_90a warp-group MMA) for the
 * wgmma GEMM (src/ops/gemm_wgmma.c, docs/wgmma.md):
 *
 *   wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16}
 *
 * with A and B in shared memory through 64-bit matrix descriptors (PTX ISA,
 * "Matrix Descriptor Format"): bits 0-13 start address >> 4, 16-29 leading
 * dimension byte offset >> 4, 32-45 stride dimension byte offset >> 4,
 * 49-51 base offset (0), 62-63 swizzle mode (0: none / interleave, the
 * mode used here).  Around the instructions of one blockwise GEMM:
 * wgmma.fence before, wgmma.commit_group + wgmma.wait_group 0 after (or
 * wait_group 1 in a ring of wait depth 1, then wait_group 0 after the
 * loop: docs/matmul.md); the
 * threads' generic stores into the shared tiles are ordered before the
 * async proxy's reads by fence.proxy.async.shared::cta (then the barrier). */
#include "dialect.h"

const char tc_cu_wgmma_prelude[] =
    "/* wgmma m64nNk16, f32 accumulation, A and B from shared memory (tilec wgmma_cuda.c) */\n"
    "#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ != 900 || !defined(__CUDA_ARCH_FEAT_SM90_ALL))\n"
    "#error \"tilec: wgmma.mma_async needs sm_90a (compile with -arch sm_90a)\"\n"
    "#endif\n"
    "static __device__ __forceinline__ unsigned tc_wgmma_smem_u32(const void *p) {\n"
    "  unsigned a;\n"
    "  asm(\"{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }\" : \"=r\"(a) : \"l\"((unsigned long long)p));\n"
    "  return a;\n"
    "}\n"
    "/* matrix descriptor: start, LBO, SBO in bytes; base offset 0; swizzle mode (0 none, 1 128B) */\n"
    "static __device__ __forceinline__ unsigned long long tc_wgmma_desc(unsigned addr, unsigned lbo,\n"
    "                                                                   unsigned sbo, unsigned mode) {\n"
    "  return (unsigned long long)((addr & 0x3FFFFu) >> 4) |\n"
    "         ((unsigned long long)((lbo >> 4) & 0x3FFFu) << 16) |\n"
    "         ((unsigned long long)((sbo >> 4) & 0x3FFFu) << 32) | ((unsigned long long)(mode & 3u) << 62);\n"
    "}\n";

void tc_cu_wgmma_addr(tc_str *o, const char *lds, const char *off) {
  tc_str_printf(o, "tc_wgmma_smem_u32(%s + (%s))", lds, off);
}

const char tc_cu_wgmma_begin[] = "asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");";
const char tc_cu_wgmma_end[] =
    "asm volatile(\"wgmma.commit_group.sync.aligned;\\n\\twgmma.wait_group.sync.aligned 0;\" ::: "
    "\"memory\");";
/* a ring's wait depth 1 (circular.c): this group may still run, every
 * earlier one is done; after the ring loop, all of them */
const char tc_cu_wgmma_end_wait1[] =
    "asm volatile(\"wgmma.commit_group.sync.aligned;\\n\\twgmma.wait_group.sync.aligned 1;\" ::: "
    "\"memory\");";
const char tc_cu_wgmma_drain[] = "asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");";
const char tc_cu_wgmma_store_fence[] =
    "asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");";

/* The accumulators' values flow through the operands of the wgmma asm
 * statements, but a wait names no register: an empty asm statement
 * reading and writing each accumulator after the drain keeps the
 * compiler from moving their reads (the epilogue's) above it. */
static void acc_operands(tc_str *o, const char *acc, int nr, int depth) {
  for (int i = 0; i < nr; i++) {
    if (i && i % 8 == 0) {
      tc_str_cat(o, "\n");
      tc_str_indent(o, depth + 2);
    }
    tc_str_printf(o, "%s \"+f\"(%s[%d])", i ? "," : "", acc, i);
  }
}

void tc_cu_wgmma_acc_fence(tc_str *o, const char *acc, int nr, int depth) {
  tc_str_indent(o, depth);
  tc_str_cat(o, "asm volatile(\"\"\n");
  tc_str_indent(o, depth + 2);
  tc_str_cat(o, ":");
  acc_operands(o, acc, nr, depth);
  tc_str_cat(o, "\n");
  tc_str_indent(o, depth + 2);
  tc_str_cat(o, ":: \"memory\");\n");
}

/* One asm statement: the N/2 accumulators "+f", the descriptors "l", and
 * scale-d (a predicate, 1: D = A * B + D); scale-a/b 1; imm-trans-a/b
 * trans_a, trans_b (0 K-major, 1 M- / N-major). */
void tc_cu_wgmma(tc_str *o, tc_dtype in, int n, const char *lds_a, const char *da,
                 const char *lds_b, const char *db, int trans_a, int trans_b, const char *acc,
                 int depth) {
  (void)lds_a, (void)lds_b;
  const char *t = in == TC_BF16 ? "bf16" : "f16";
  int nr = n / 2;
  tc_str_indent(o, depth);
  tc_str_printf(o, "asm volatile(\"{\\n\\t.reg .pred p;\\n\\tsetp.ne.b32 p, %%%d, 0;\\n\\t", nr + 2);
  tc_str_printf(o, "wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {", n, t, t);
  for (int i = 0; i < nr; i++) tc_str_printf(o, "%s%%%d", i ? ", " : "", i);
  tc_str_printf(o, "}, %%%d, %%%d, p, 1, 1, %d, %d;\\n\\t}\"\n", nr, nr + 1, trans_a != 0,
                trans_b != 0);
  tc_str_indent(o, depth + 2);
  tc_str_cat(o, ":");
  acc_operands(o, acc, nr, depth);
  tc_str_cat(o, "\n");
  tc_str_indent(o, depth + 2);
  tc_str_printf(o, ": \"l\"(%s), \"l\"(%s), \"r\"(1) : \"memory\");\n", da, db);
}
