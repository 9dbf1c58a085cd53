/* expr.h - integer index expressions.
 *
 * Expressions are immutable, hash-consed nodes owned by a pool (tc_epool):
 * building the same node twice returns the same pointer, so pointer equality
 * is structural equality.  Every node carries a conservative value range
 * [lo, hi] computed when it is built (interval analysis), which the
 * simplifier and the C printer use.
 *
 * Semantics (the evaluator is the reference):
 *   DIV is floor division, MOD is floor modulo (result has the sign of the
 *   divisor); x / 0 == 0 and x % 0 == x.  SHL/SHR shift by b when
 *   0 <= b <= 62 and give 0 otherwise; SHR is arithmetic.  Comparisons,
 *   LAND, LOR and NOT give 0 or 1 (any non-zero operand is true).
 *   SELECT(c, a, b) is c != 0 ? a : b.  Arithmetic wraps in two's complement
 *   (it is computed on uint64_t), so nothing in here is undefined behaviour.
 */
#ifndef TC_EXPR_H
#define TC_EXPR_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/base.h"

typedef enum tc_eop {
  TC_E_CONST,
  TC_E_VAR,
  /* binary arithmetic */
  TC_E_ADD, TC_E_SUB, TC_E_MUL, TC_E_DIV, TC_E_MOD,
  /* bitwise */
  TC_E_XOR, TC_E_AND, TC_E_OR, TC_E_SHL, TC_E_SHR,
  TC_E_MIN, TC_E_MAX,
  /* comparisons and logic, 0/1 valued */
  TC_E_LT, TC_E_LE, TC_E_EQ, TC_E_NE, TC_E_LAND, TC_E_LOR,
  TC_E_NOT,    /* unary: a */
  TC_E_SELECT, /* ternary: a ? b : c */
  TC_E_NUM_OPS
} tc_eop;

typedef struct tc_expr {
  tc_eop op;
  int64_t val;                  /* CONST: the value; VAR: the variable id */
  const struct tc_expr *a, *b, *c;
  int64_t lo, hi;               /* conservative range: lo <= value <= hi */
  uint64_t hash;
} tc_expr;

typedef struct tc_epool tc_epool;

tc_epool *tc_epool_new(void);
void tc_epool_free(tc_epool *p);

/* Leaves. */
const tc_expr *tc_e_const(tc_epool *p, int64_t v);
/* Creates a new, distinct variable with the range lo..hi (inclusive).
 * Variable ids are 0, 1, 2, ... in order of creation in a pool. */
const tc_expr *tc_e_var(tc_epool *p, const char *name, int64_t lo, int64_t hi);
int tc_e_num_vars(const tc_epool *p);
const char *tc_e_var_name(const tc_epool *p, int var_id);
void tc_e_var_range(const tc_epool *p, int var_id, int64_t *lo, int64_t *hi);

/* Raw constructors: build exactly the node asked for (no rewriting), for
 * tests of the simplifier.  op must be binary for tc_e_raw2. */
const tc_expr *tc_e_raw2(tc_epool *p, tc_eop op, const tc_expr *a, const tc_expr *b);
const tc_expr *tc_e_raw_not(tc_epool *p, const tc_expr *a);
const tc_expr *tc_e_raw_select(tc_epool *p, const tc_expr *c, const tc_expr *a, const tc_expr *b);

/* Smart constructors: fold constants and apply the cheap local rules
 * (x+0, x*1, x*0, x/1, x%1, range-decided comparisons ...).  Use these
 * everywhere outside tests. */
const tc_expr *tc_e_bin(tc_epool *p, tc_eop op, const tc_expr *a, const tc_expr *b);
const tc_expr *tc_e_add(tc_epool *p, const tc_expr *a, const tc_expr *b);
const tc_expr *tc_e_sub(tc_epool *p, const tc_expr *a, const tc_expr *b);
const tc_expr *tc_e_mul(tc_epool *p, const tc_expr *a, const tc_expr *b);
const tc_expr *tc_e_div(tc_epool *p, const tc_expr *a, const tc_expr *b);
const tc_expr *tc_e_mod(tc_epool *p, const tc_expr *a, const tc_expr *b);
const tc_expr *tc_e_xor(tc_epool *p, const tc_expr *a, const tc_expr *b);
const tc_expr *tc_e_and(tc_epool *p, const tc_expr *a, const tc_expr *b);
const tc_expr *tc_e_lt(tc_epool *p, const tc_expr *a, const tc_expr *b);
const tc_expr *tc_e_le(tc_epool *p, const tc_expr *a, const tc_expr *b);
const tc_expr *tc_e_land(tc_epool *p, const tc_expr *a, const tc_expr *b);
const tc_expr *tc_e_not(tc_epool *p, const tc_expr *a);
const tc_expr *tc_e_select(tc_epool *p, const tc_expr *c, const tc_expr *a, const tc_expr *b);
/* Shorthands with a constant right operand. */
const tc_expr *tc_e_addc(tc_epool *p, const tc_expr *a, int64_t c);
const tc_expr *tc_e_mulc(tc_epool *p, const tc_expr *a, int64_t c);
const tc_expr *tc_e_divc(tc_epool *p, const tc_expr *a, int64_t c);
const tc_expr *tc_e_modc(tc_epool *p, const tc_expr *a, int64_t c);

/* Full simplification with range analysis: returns an expression equal to e
 * at every point where each variable lies in its range.  Rules include
 * linear-form normalization, (a*f + b) / f -> a and (a*f + b) % f -> b
 * when 0 <= b < f, nested div/mod folding, x / f -> 0 and x % f -> x when
 * 0 <= x < f, xor/and/or/shift with constants, min/max/select/comparisons
 * decided by ranges. */
const tc_expr *tc_simplify(tc_epool *p, const tc_expr *e);

/* Whether variable id occurs in e (NULL: no). */
bool tc_e_uses(const tc_expr *e, int64_t id);
/* Whether condition e holds alike for j = 0 .. n - 1 (j the variable
 * expression, a run of n elements starting at a multiple of n): each of
 * its conjuncts does not use j, or is x + j < c with x a multiple of n and
 * c a number that is one too (an edge no run straddles, as 72 for runs of
 * 8).  Then e at j = 0 stands for the whole run. */
bool tc_e_run_uniform(tc_epool *p, const tc_expr *e, const tc_expr *j, int64_t n);

/* e with variables ids[0..n) replaced by vals[0..n) simultaneously (not
 * simplified). */
const tc_expr *tc_e_subst(tc_epool *p, const tc_expr *e, int n, const int64_t *ids,
                          const tc_expr *const *vals);

/* Evaluation: vars[i] is the value of variable id i. */
int64_t tc_e_eval(const tc_expr *e, const int64_t *vars);

static inline bool tc_e_is_const(const tc_expr *e, int64_t v) {
  return e->op == TC_E_CONST && e->val == v;
}

/* Additions (not in the original interface), shared with simplify.c and
 * usable by code generators:
 *   tc_e_apply     - applies a binary op to two values with exactly the
 *                    evaluator's semantics (the constant folder uses it);
 *   tc_e_floordiv  - floor division with x / 0 == 0, never UB;
 *   tc_e_floormod  - floor modulo with x % 0 == x, never UB;
 *   tc_e_compare   - a deterministic total order on expressions (constants
 *                    first, then variables by id, then compound nodes);
 *                    0 only for the same node.  Used for canonical operand
 *                    order of commutative operations. */
int64_t tc_e_apply(tc_eop op, int64_t x, int64_t y);
int64_t tc_e_floordiv(int64_t x, int64_t y);
int64_t tc_e_floormod(int64_t x, int64_t y);
int tc_e_compare(const tc_expr *x, const tc_expr *y);

/* Number of nodes of kind op in e, counting shared subtrees once per use. */
int tc_e_count_op(const tc_expr *e, tc_eop op);

/* Appends e in C syntax (int arithmetic, fully parenthesized where needed).
 * DIV/MOD print as / and % when the range analysis proves the dividend
 * non-negative and the divisor positive, otherwise as the helper calls
 * tc_fdiv(a, b) / tc_fmod(a, b) (floor semantics) that every generated
 * kernel's prelude defines.  Variables print by name. */
void tc_e_print_c(tc_str *out, const tc_epool *p, const tc_expr *e);
/* The nodes tc_e_print_c prints for e: a subexpression shared in the pool
 * is printed at each use, so a chain of n swizzles of one variable (each
 * reads it twice) prints about 2^n nodes.  Counts at most cap + 1 (then
 * stops: the time is bounded by cap). */
int64_t tc_e_print_size(const tc_expr *e, int64_t cap);

#endif
