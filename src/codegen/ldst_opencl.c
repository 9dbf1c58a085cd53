/* ldst_opencl.c - ldmatrix / stmatrix (m8n8 .b16, .x1/.x2/.x4, plain or
 * .trans) emulated in OpenCL C with the same data movement: every
 * work-item publishes its row address in a local scratch array (indexed by
 * linear thread id; a warp is 32 consecutive ids), a barrier, then each
 * work-item moves its fragment - word j (of num) holds, from matrix j
 * (whose row r is at the address lane 8j + r of its warp published), row
 * l/4, columns 2(l%4) and 2(l%4)+1, or with .trans column l/4, rows 2(l%4)
 * and 2(l%4)+1 (the PTX ISA's rule, tc_ldsm_fragment in lower/ldst.h) -
 * and a barrier before the scratch is reused.  Only lanes 0 .. 8num-1's
 * addresses are read, as on the hardware. */
#include "dialect.h"

const char tc_cl_ldsm_prelude[] =
    "/* element h (0: low half) of word j of this work-item's m8n8 fragment */\n"
    "static int tc_ldsm_at(__local const int *rows, int tid, int j, int h, int trans) {\n"
    "  int w = tid & ~31, l = tid & 31;\n"
    "  return trans ? rows[w + 8 * j + 2 * (l % 4) + h] + l / 4\n"
    "               : rows[w + 8 * j + l / 4] + 2 * (l % 4) + h;\n"
    "}\n"
    "static void tc_ldsm_ld(__local const ushort *sm, __local const int *rows, int tid, int num,\n"
    "                       int trans, uint *r) {\n"
    "  for (int j = 0; j < num; j++)\n"
    "    r[j] = (uint)sm[tc_ldsm_at(rows, tid, j, 0, trans)] |\n"
    "           ((uint)sm[tc_ldsm_at(rows, tid, j, 1, trans)] << 16);\n"
    "}\n"
    "static void tc_ldsm_st(__local ushort *sm, __local const int *rows, int tid, int num, int trans,\n"
    "                       const uint *r) {\n"
    "  for (int j = 0; j < num; j++) {\n"
    "    sm[tc_ldsm_at(rows, tid, j, 0, trans)] = (ushort)(r[j] & 0xffffu);\n"
    "    sm[tc_ldsm_at(rows, tid, j, 1, trans)] = (ushort)(r[j] >> 16);\n"
    "  }\n"
    "}\n";

void tc_cl_ldsm_setup(tc_str *o, const tc_kir *k) {
  int64_t threads = k->block[0] * k->block[1] * k->block[2];
  tc_str_printf(o, "  __local int tc_ldsm_rows[%lld];  /* ldmatrix/stmatrix: published row addresses */\n",
                (long long)threads);
  tc_str_printf(o, "  const int tc_ldsm_tid = tidx + %lld * (tidy + %lld * tidz);\n", (long long)k->block[0],
                (long long)k->block[1]);
}

void tc_cl_ldsm_access(tc_str *o, int is_load, int num, int trans, const char *smem,
                       const char *addr, int depth) {
  tc_str_indent(o, depth);
  tc_str_printf(o, "tc_ldsm_rows[tc_ldsm_tid] = (int)(%s);\n", addr);
  tc_str_indent(o, depth);
  tc_str_cat(o, "barrier(CLK_LOCAL_MEM_FENCE);\n");
  tc_str_indent(o, depth);
  tc_str_printf(o, "tc_ldsm_%s(%s, tc_ldsm_rows, tc_ldsm_tid, %d, %d, tc_lr);  /* %smatrix.x%d%s */\n",
                is_load ? "ld" : "st", smem, num, trans, is_load ? "ld" : "st", num,
                trans ? ".trans" : "");
  tc_str_indent(o, depth);
  tc_str_cat(o, "barrier(CLK_LOCAL_MEM_FENCE);\n");
}
