/* passes.c - the tile-IR pass manager, its reports, and dead-code
 * elimination (passes.h). */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

void tc_tile_pass_options_default(tc_tile_pass_options *o) {
  memset(o, 0, sizeof *o);
  o->aggregate_load = 1;
  o->smem_limit = TC_TILE_DEFAULT_SMEM_LIMIT;
  o->dce = 1;
}

int tc_tile_run_passes(tc_tile_kernel *k, const tc_tile_pass_options *o) {
  tc_tile_pass_options def;
  if (!o) tc_tile_pass_options_default(&def), o = &def;
  if (!k) return 0;
  if (k->err[0]) {
    tc_tile_add_report(k, "aggregate-load", 0, "the kernel has a builder error: %s", k->err);
    tc_tile_add_report(k, "dce", 0, "the kernel has a builder error");
    return 0;
  }
  int n = 0;
  if (o->aggregate_load)
    n += tc_tile_aggregate_load(k, o->smem_limit, o->emulate_sliced_base_bug);
  else
    tc_tile_add_report(k, "aggregate-load", 0, "disabled (--no-aggregate)");
  if (o->dce)
    n += tc_tile_dce(k);
  else
    tc_tile_add_report(k, "dce", 0, "disabled");
  return n;
}

void tc_tile_print_reports(tc_str *o, const tc_tile_kernel *k) {
  for (int i = 0; i < tc_tile_num_reports(k); i++) {
    const tc_tile_report *r = tc_tile_get_report(k, i);
    tc_str_printf(o, "  %s: %s: %s\n", r->pass, r->applied ? "applied" : "not applied", r->detail);
  }
}

/* ---- dce ----
 * Liveness from the side effects (tt.store): an op is live when one of its
 * results is, or (a loop) when an op of its body is; a live op's operands
 * are live, except that a loop keeps only the iteration arguments whose
 * result or block argument is live (with their init and yield values).
 * Iterates to a fixed point, then unlinks the dead ops and drops the dead
 * iteration arguments. */

typedef struct dce {
  tc_tile_kernel *k;
  char *live_op, *live_val;
  int changed;
} dce;

static void mark_val(dce *D, const tc_tile_value *v) {
  if (v && !D->live_val[v->id]) D->live_val[v->id] = 1, D->changed = 1;
}

static void mark_op(dce *D, const tc_tile_op *op) {
  if (!D->live_op[op->id]) D->live_op[op->id] = 1, D->changed = 1;
}

/* One sweep over a block; returns whether any op of it is live. */
static int sweep(dce *D, tc_tile_block *b) {
  int any = 0;
  for (int i = b->n - 1; i >= 0; i--) {
    tc_tile_op *op = b->ops[i];
    if (op->kind == TC_TO_STORE) mark_op(D, op);
    for (int j = 0; j < op->nout; j++)
      if (D->live_val[op->out[j]->id]) mark_op(D, op);
    if (op->kind == TC_TO_FOR) {
      if (sweep(D, &op->body)) mark_op(D, op);
      for (int j = 0; j < op->nbargs; j++)
        if (D->live_val[op->bargs[j]->id]) mark_op(D, op);
    }
    if (!D->live_op[op->id] || op->kind == TC_TO_YIELD) {
      any |= D->live_op[op->id];
      continue;
    }
    any = 1;
    if (op->kind == TC_TO_FOR) {
      for (int j = 0; j < 3; j++) mark_val(D, op->in[j]);
      tc_tile_op *y = op->body.ops[op->body.n - 1];
      for (int j = 0; j < op->nout; j++) {
        if (!D->live_val[op->out[j]->id] && !D->live_val[op->bargs[j + 1]->id]) continue;
        mark_val(D, op->bargs[j + 1]);
        mark_val(D, op->in[j + 3]);
        mark_val(D, y->in[j]);
      }
      D->live_op[y->id] = 1;
    } else {
      for (int j = 0; j < op->nin; j++) mark_val(D, op->in[j]);
    }
  }
  return any;
}

static void drop_index(void *arr, int *n, int i, size_t size) {
  char *a = arr;
  memmove(a + (size_t)i * size, a + (size_t)(i + 1) * size, (size_t)(*n - i - 1) * size);
  (*n)--;
}

static void remove_dead(dce *D, tc_tile_block *b, int *ops, int *args) {
  for (int i = b->n - 1; i >= 0; i--) {
    tc_tile_op *op = b->ops[i];
    if (op->kind == TC_TO_YIELD) continue;
    if (!D->live_op[op->id]) {
      tc_tile_remove_op(D->k, op);
      (*ops)++;
      continue;
    }
    if (op->kind != TC_TO_FOR) continue;
    remove_dead(D, &op->body, ops, args);
    tc_tile_op *y = op->body.ops[op->body.n - 1];
    for (int j = op->nout - 1; j >= 0; j--) {
      if (D->live_val[op->out[j]->id] || D->live_val[op->bargs[j + 1]->id]) continue;
      drop_index(op->in, &op->nin, j + 3, sizeof *op->in);
      drop_index(y->in, &y->nin, j, sizeof *y->in);
      drop_index(op->bargs, &op->nbargs, j + 1, sizeof *op->bargs);
      drop_index(op->out, &op->nout, j, sizeof *op->out);
      (*args)++;
    }
    for (int j = 0; j < op->nout; j++) op->out[j]->index = j;
    for (int j = 0; j < op->nbargs; j++) op->bargs[j]->index = j;
  }
}

int tc_tile_dce(tc_tile_kernel *k) {
  dce D = {k, tc_xcalloc((size_t)k->nops + 1, 1), tc_xcalloc((size_t)k->nvals + 1, 1), 1};
  while (D.changed) {
    D.changed = 0;
    sweep(&D, &k->body);
  }
  int ops = 0, args = 0;
  remove_dead(&D, &k->body, &ops, &args);
  free(D.live_op);
  free(D.live_val);
  if (!ops && !args) {
    tc_tile_add_report(k, "dce", 0, "nothing to remove");
    return 0;
  }
  tc_tile_add_report(k, "dce", 1, "removed %d dead op%s and %d dead loop-carried value%s", ops,
                     ops == 1 ? "" : "s", args, args == 1 ? "" : "s");
  return 1;
}
