/* ldst_opencl.c - ldmatrix.x4 / stmatrix.x4 emulated in OpenCL C with
 * the same data movement: every work-item publishes its row address in a
 * local scratch array (indexed by linear thread id; a warp is 32
 * consecutive ids), a barrier, then each work-item moves its fragment -
 * word j holds row l/4, columns 2(l%4) and 2(l%4)+1 of matrix j, whose
 * row addresses come from lanes 8j .. 8j+7 of its warp - and a barrier
 * before the scratch is reused. */
#include "dialect.h"

const char tc_cl_ldsm_prelude[] =
    "static void tc_ldsm_ld(__local const ushort *sm, __local const int *rows, int tid, uint *r) {\n"
    "  int w = tid & ~31, l = tid & 31;\n"
    "  for (int j = 0; j < 4; j++) {\n"
    "    int a = rows[w + 8 * j + l / 4] + 2 * (l % 4);\n"
    "    r[j] = (uint)sm[a] | ((uint)sm[a + 1] << 16);\n"
    "  }\n"
    "}\n"
    "static void tc_ldsm_st(__local ushort *sm, __local const int *rows, int tid, const uint *r) {\n"
    "  int w = tid & ~31, l = tid & 31;\n"
    "  for (int j = 0; j < 4; j++) {\n"
    "    int a = rows[w + 8 * j + l / 4] + 2 * (l % 4);\n"
    "    sm[a] = (ushort)(r[j] & 0xffffu);\n"
    "    sm[a + 1] = (ushort)(r[j] >> 16);\n"
    "  }\n"
    "}\n";

void tc_cl_ldsm_setup(tc_str *o, const tc_kir *k) {
  int64_t threads = k->block[0] * k->block[1] * k->block[2];
  tc_str_printf(o, "  __local int tc_ldsm_rows[%lld];  /* ldmatrix/stmatrix: published row addresses */\n",
                (long long)threads);
  tc_str_printf(o, "  const int tc_ldsm_tid = tidx + %lld * (tidy + %lld * tidz);\n", (long long)k->block[0],
                (long long)k->block[1]);
}

void tc_cl_ldsm_access(tc_str *o, int is_load, const char *smem, const char *addr, int depth) {
  tc_str_indent(o, depth);
  tc_str_printf(o, "tc_ldsm_rows[tc_ldsm_tid] = (int)(%s);\n", addr);
  tc_str_indent(o, depth);
  tc_str_cat(o, "barrier(CLK_LOCAL_MEM_FENCE);\n");
  tc_str_indent(o, depth);
  tc_str_printf(o, "tc_ldsm_%s(%s, tc_ldsm_rows, tc_ldsm_tid, tc_lr);  /* %smatrix.x4 */\n",
                is_load ? "ld" : "st", smem, is_load ? "ld" : "st");
  tc_str_indent(o, depth);
  tc_str_cat(o, "barrier(CLK_LOCAL_MEM_FENCE);\n");
}
