/* recompute.c - the non-persistent form of a normalization: every
 * intermediate tensor that is not a reduction gets one copy of its op per
 * consumer, so that inlined into each consumer it is recomputed there
 * from global memory instead of being held whole (a row in registers)
 * between a reduction and the ops that read the reduction's result. */
#include <stdlib.h>
#include <string.h>

#include "sched.h"

/* A copy of op with a fresh output of the same shape and dtype, reading
 * the same inputs (a scalar input too). */
static tc_tensor *clone_op(tc_fusion *f, const tc_op *op) {
  tc_tensor *out = tc_tensor_like(f, op->out, NULL, op->out->dtype);
  tc_op *c = tc_op_new(f, op->kind, op->sub, op->in[0], op->nin > 1 ? op->in[1] : NULL, out);
  c->ldst = op->ldst;
  c->nin = op->nin;
  memcpy(c->in, op->in, sizeof c->in);
  memcpy(c->perm, op->perm, sizeof c->perm);
  c->has_scalar = op->has_scalar, c->scalar = op->scalar;
  c->scalar_in = op->scalar_in, c->scalar_left = op->scalar_left; /* a scalar input, on its side */
  out->mem = op->out->mem;
  return out;
}

int tc_recompute_intermediates(tc_fusion *f) {
  int n, made = 0;
  tc_op **order = tc_topo_order(f, &n);
  /* consumers first: a copy adds consumers to its op's inputs, which come
   * earlier in the order and are split in turn */
  for (int i = n - 1; i >= 0; i--) {
    tc_op *op = order[i];
    tc_tensor *t = op->out;
    if (t->is_output || op->kind == TC_OP_REDUCE) continue;
    int nc = tc_consumers(f, t, NULL, 0);
    if (nc < 2) continue;
    tc_op **cons = tc_xmalloc((size_t)nc * sizeof *cons);
    tc_consumers(f, t, cons, nc);
    for (int j = 1; j < nc; j++) {
      tc_tensor *copy = clone_op(f, op);
      for (int k = 0; k < cons[j]->nin; k++)
        if (cons[j]->in[k] == t) cons[j]->in[k] = copy;
      made++;
    }
    free(cons);
  }
  free(order);
  return made;
}
