/* ldst_cuda.c - ldmatrix / stmatrix (m8n8 .b16, .x1/.x2/.x4, plain or
 * .trans) for the CUDA dialect: one inline-asm instruction per vector,
 * with the lane's row address converted to a 32-bit shared-window
 * address. */
#include "dialect.h"

const char tc_cu_ldsm_prelude[] =
    "TC_DEV unsigned tc_ldsm_u32(const void *p) {\n"
    "  unsigned a;\n"
    "  asm(\"{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }\" : \"=r\"(a) : \"l\"((unsigned long long)p));\n"
    "  return a;\n"
    "}\n";

/* "%%<first>, %%<first+1>, ..." for num operands, as asm template text. */
static void operands(tc_str *o, int first, int num) {
  for (int i = 0; i < num; i++) tc_str_printf(o, "%s%%%d", i ? ", " : "", first + i);
}

/* ", "=r"(tc_lr[0]) ..." (or "r" for inputs) for num registers. */
static void registers(tc_str *o, const char *constraint, int num) {
  for (int i = 0; i < num; i++) tc_str_printf(o, "%s\"%s\"(tc_lr[%d])", i ? ", " : "", constraint, i);
}

void tc_cu_ldsm_access(tc_str *o, int is_load, int num, int trans, const char *smem,
                       const char *addr, int depth) {
  tc_str_indent(o, depth);
  tc_str_printf(o, "asm volatile(\"%s.sync.aligned.m8n8.x%d%s.shared.b16 ",
                is_load ? "ldmatrix" : "stmatrix", num, trans ? ".trans" : "");
  if (is_load) {
    tc_str_cat(o, "{");
    operands(o, 0, num);
    tc_str_printf(o, "}, [%%%d];\"\n", num);
    tc_str_indent(o, depth + 2);
    tc_str_cat(o, ": ");
    registers(o, "=r", num);
    tc_str_cat(o, "\n");
    tc_str_indent(o, depth + 2);
    tc_str_printf(o, ": \"r\"(tc_ldsm_u32(&%s[%s]))\n", smem, addr);
  } else {
    tc_str_cat(o, "[%0], {");
    operands(o, 1, num);
    tc_str_cat(o, "};\"\n");
    tc_str_indent(o, depth + 2);
    tc_str_printf(o, ":: \"r\"(tc_ldsm_u32(&%s[%s])), ", smem, addr);
    registers(o, "r", num);
    tc_str_cat(o, "\n");
  }
  tc_str_indent(o, depth + 2);
  tc_str_cat(o, ": \"memory\");\n");
}
