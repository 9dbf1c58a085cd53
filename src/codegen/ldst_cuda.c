/* ldst_cuda.c - ldmatrix.x4 / stmatrix.x4 for the CUDA dialect: one
 * inline-asm instruction per vector, with the lane's row address
 * converted to a 32-bit shared-window address. */
#include "dialect.h"

const char tc_cu_ldsm_prelude[] =
    "TC_DEV unsigned tc_ldsm_u32(const void *p) {\n"
    "  unsigned a;\n"
    "  asm(\"{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }\" : \"=r\"(a) : \"l\"((unsigned long long)p));\n"
    "  return a;\n"
    "}\n";

void tc_cu_ldsm_access(tc_str *o, int is_load, const char *smem, const char *addr, int depth) {
  tc_str_indent(o, depth);
  if (is_load)
    tc_str_printf(o,
                  "asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%%0, %%1, %%2, %%3}, [%%4];\"\n");
  else
    tc_str_printf(o,
                  "asm volatile(\"stmatrix.sync.aligned.m8n8.x4.shared.b16 [%%0], {%%1, %%2, %%3, %%4};\"\n");
  tc_str_indent(o, depth + 2);
  if (is_load)
    tc_str_printf(o,
                  ": \"=r\"(tc_lr[0]), \"=r\"(tc_lr[1]), \"=r\"(tc_lr[2]), \"=r\"(tc_lr[3])\n");
  else
    tc_str_cat(o, ":: ");
  if (is_load) {
    tc_str_indent(o, depth + 2);
    tc_str_cat(o, ": ");
  }
  tc_str_printf(o, "\"r\"(tc_ldsm_u32(&%s[%s]))", smem, addr);
  if (!is_load) tc_str_cat(o, ", \"r\"(tc_lr[0]), \"r\"(tc_lr[1]), \"r\"(tc_lr[2]), \"r\"(tc_lr[3])");
  tc_str_cat(o, "\n");
  tc_str_indent(o, depth + 2);
  tc_str_cat(o, ": \"memory\");\n");
}
