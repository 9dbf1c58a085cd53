/* cp_async_cuda.c - the CUDA dialect's asynchronous copies global ->
 * shared (sm_80 and newer) for circular buffers (src/lower/circular.c):
 *
 *   cp.async.ca.shared.global [dst], [src], 4 / 8;   (through L1)
 *   cp.async.cg.shared.global [dst], [src], 16;      (L2 only: .cg takes 16)
 *   cp.async.commit_group;  cp.async.wait_group N;
 *   with a source size of 0 where a copy zero-fills (tc_cpa<n>z: the
 *   bytes are written as 0 and nothing is read; the source address is
 *   then the tensor's first element);
 *
 * The addresses must be aligned to the copy's size (the lowering proves
 * it); wait_group takes an immediate, so each count is printed as its own
 * statement. */
#include "dialect.h"

const char tc_cu_cp_async_prelude[] =
    "/* cp.async global -> shared (tilec cp_async_cuda.c) */\n"
    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800\n"
    "#error \"tilec: cp.async needs sm_80 or newer\"\n"
    "#endif\n"
    "static __device__ __forceinline__ unsigned int tc_cpa_addr(const void *p) {\n"
    "  unsigned int a;\n"
    "  asm(\"{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }\" : \"=r\"(a) : \"l\"(p));\n"
    "  return a;\n"
    "}\n"
    "static __device__ __forceinline__ void tc_cpa4(void *dst, const void *src) {\n"
    "  asm volatile(\"cp.async.ca.shared.global [%0], [%1], 4;\\n\" :: \"r\"(tc_cpa_addr(dst)), \"l\"(src) : \"memory\");\n"
    "}\n"
    "static __device__ __forceinline__ void tc_cpa8(void *dst, const void *src) {\n"
    "  asm volatile(\"cp.async.ca.shared.global [%0], [%1], 8;\\n\" :: \"r\"(tc_cpa_addr(dst)), \"l\"(src) : \"memory\");\n"
    "}\n"
    "static __device__ __forceinline__ void tc_cpa16(void *dst, const void *src) {\n"
    "  asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\\n\" :: \"r\"(tc_cpa_addr(dst)), \"l\"(src) : \"memory\");\n"
    "}\n"
    "static __device__ __forceinline__ void tc_cpa8z(void *dst, const void *src, int ok) {\n"
    "  asm volatile(\"cp.async.ca.shared.global [%0], [%1], 8, %2;\\n\" :: \"r\"(tc_cpa_addr(dst)), \"l\"(src), \"r\"(ok ? 8 : 0) : \"memory\");\n"
    "}\n"
    "static __device__ __forceinline__ void tc_cpa16z(void *dst, const void *src, int ok) {\n"
    "  asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\\n\" :: \"r\"(tc_cpa_addr(dst)), \"l\"(src), \"r\"(ok ? 16 : 0) : \"memory\");\n"
    "}\n";

void tc_cu_cp_async(tc_str *o, int bytes, const char *dst, const char *src, const char *pred,
                    const char *zero, int depth) {
  tc_str_indent(o, depth);
  if (pred) tc_str_printf(o, "if (%s) ", pred);
  if (zero) {
    /* (the source's tensor: src is "&name[index]") */
    int n = 0;
    while (src[1 + n] && src[1 + n] != '[') n++;
    tc_str_printf(o, "tc_cpa%dz(%s, (%s) ? (const void *)%s : (const void *)%.*s, %s);\n", bytes, dst, zero,
                  src, n, src + 1, zero);
  } else {
    tc_str_printf(o, "tc_cpa%d(%s, %s);\n", bytes, dst, src);
  }
}

void tc_cu_cp_commit(tc_str *o, int depth) {
  tc_str_indent(o, depth);
  tc_str_cat(o, "asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");\n");
}

void tc_cu_cp_wait(tc_str *o, int n, int depth) {
  tc_str_indent(o, depth);
  tc_str_printf(o, "asm volatile(\"cp.async.wait_group %d;\\n\" ::: \"memory\");\n", n);
}
