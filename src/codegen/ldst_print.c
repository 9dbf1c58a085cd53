/* ldst_print.c - printing of statements lowered to ldmatrix / stmatrix
 * .x<num> (src/lower/ldst.c): the vector's 2num 16-bit registers are
 * packed into (or unpacked from) num 32-bit words tc_lr[], element v in
 * half v % 2 (low half first) of word v / 2 - the m8n8 fragment's
 * register order, the same with .trans - and moved by the dialect's
 * ldsm_access. */
#include <stdio.h>

#include "dialect.h"
#include "../lower/ldst.h"

void tc_print_ldsm(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *s, int depth) {
  const tc_op *op = s->stmt.op;
  bool ld = s->stmt.ldsm.kind == TC_LDSM_LD;
  const tc_tensor *sm = ld ? op->in[0] : op->out, *reg = ld ? op->out : op->in[0];
  const char *v = tc_e_var_name(k->pool, (int)s->stmt.ldsm.vec->loop.var->val);
  tc_str idx, addr;
  tc_str_init(&idx), tc_str_init(&addr);
  tc_e_print_c(&idx, k->pool, ld ? s->stmt.out_index : s->stmt.in_index[0]);
  tc_e_print_c(&addr, k->pool, s->stmt.ldsm.addr);
  tc_str_indent(o, depth);
  int num = s->stmt.ldsm.num, trans = s->stmt.ldsm.trans;
  tc_str_printf(o, "{  /* %s = %s: %s.sync.aligned.m8n8.x%d%s.shared.b16 */\n", op->out->name,
                op->in[0]->name, ld ? "ldmatrix" : "stmatrix", num, trans ? ".trans" : "");
  tc_str_indent(o, depth + 1);
  tc_str_printf(o, "unsigned tc_lr[%d]", num);
  if (!ld)
    for (int j = 0; j < num; j++) tc_str_cat(o, j ? ", 0u" : " = {0u");
  tc_str_cat(o, ld ? ";\n" : "};\n");
  if (ld) d->ldsm_access(o, 1, num, trans, sm->name, tc_str_cstr(&addr), depth + 1);
  tc_str_indent(o, depth + 1);
  tc_str_printf(o, "%s\n", d->unroll_pragma);
  tc_str_indent(o, depth + 1);
  tc_str_printf(o, "for (int %s = 0; %s < %d; ++%s) {  /* vectorize */\n", v, v, 2 * num, v);
  tc_str_indent(o, depth + 2);
  if (ld)
    tc_str_printf(o, "%s[%s] = (%s)(tc_lr[%s / 2] >> (16 * (%s %% 2)));\n", reg->name,
                  tc_str_cstr(&idx), tc_storage_type(reg->dtype), v, v);
  else
    tc_str_printf(o, "tc_lr[%s / 2] |= (unsigned)%s[%s] << (16 * (%s %% 2));\n", v, reg->name,
                  tc_str_cstr(&idx), v);
  tc_str_indent(o, depth + 1);
  tc_str_cat(o, "}\n");
  if (!ld) d->ldsm_access(o, 0, num, trans, sm->name, tc_str_cstr(&addr), depth + 1);
  tc_str_indent(o, depth);
  tc_str_cat(o, "}\n");
  tc_str_free(&idx), tc_str_free(&addr);
}
