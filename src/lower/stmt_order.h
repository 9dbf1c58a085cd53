/* stmt_order.h - the order of a kernel's statements (stmt_order.c). */
#ifndef TC_STMT_ORDER_H
#define TC_STMT_ORDER_H

#include "../ir/fusion.h"

/* The loops an op's statement runs in, outermost first: each loop's
 * identity (statements whose loops have equal ids share that loop) and
 * the position, in the loop domain of the op's output, of the axis it
 * comes from.  Two statements that share a loop share every loop outside
 * it too (compute-at positions join a prefix of the loop domain). */
typedef struct tc_stmt_loops {
  const int *id, *pos;
  int n;
} tc_stmt_loops;

/* Reorders ops[0..n), given producers first (tc_topo_order), so that the
 * statements inside each loop are adjacent at every depth of the loop
 * nest and every op comes after the ops it reads; loops[i] describes the
 * op at ops[i] on entry.  An order that already does so is kept.  When no
 * order exists (an op outside a shared loop reads from an op inside it
 * and is read by another inside it) ops is unchanged and the error,
 * TC_ERR_SCHEDULE, names the ops and a schedule change that resolves it. */
tc_status tc_stmt_order(tc_fusion *f, tc_op **ops, const tc_stmt_loops *loops, int n);

#endif
