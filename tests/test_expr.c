/* test_expr.c - tests for the index-expression module (src/expr): hash
 * consing, evaluator semantics, ranges, smart constructors, specific
 * simplifier rules, the C printer, and a large differential test that checks
 * tc_simplify (and the smart constructors) against the evaluator on
 * thousands of random expressions, together with range soundness of every
 * node. */
#include <inttypes.h>
#include <stdint.h>

#include "expr/expr.h"
#include "test.h"

/* ------------------------------------------------------------ helpers */

static char *pr(const tc_epool *p, const tc_expr *e) {
  tc_str s;
  tc_str_init(&s);
  tc_e_print_c(&s, p, e);
  return tc_str_take(&s);
}

#define CHECK_PRINT(p, e, want)                                                \
  do {                                                                         \
    char *got_ = pr((p), (e));                                                 \
    TC_CHECK_STR(got_, (want));                                                \
    free(got_);                                                                \
  } while (0)

/* simplify(e) must be the very node simplify(expected) gives. */
#define CHECK_SIMP_EQ(p, e, expected)                                          \
  do {                                                                         \
    const tc_expr *s1_ = tc_simplify((p), (e));                                \
    const tc_expr *s2_ = tc_simplify((p), (expected));                         \
    if (s1_ != s2_) {                                                          \
      char *a_ = pr((p), s1_), *b_ = pr((p), s2_);                             \
      TC_CHECK(s1_ == s2_, "simplified to %s, expected %s", a_, b_);           \
      free(a_);                                                                \
      free(b_);                                                                \
    }                                                                          \
  } while (0)

static const tc_expr *C(tc_epool *p, int64_t v) { return tc_e_const(p, v); }
static const tc_expr *R2(tc_epool *p, tc_eop op, const tc_expr *a, const tc_expr *b) {
  return tc_e_raw2(p, op, a, b);
}

/* ------------------------------------------------------- basic units */

static void test_hash_consing(void) {
  tc_epool *p = tc_epool_new();
  const tc_expr *i = tc_e_var(p, "i", 0, 7);
  const tc_expr *i2 = tc_e_var(p, "i", 0, 7);
  TC_CHECK(i != i2, "two declared variables must be distinct");
  TC_CHECK_EQ_INT(i->val, 0);
  TC_CHECK_EQ_INT(i2->val, 1);
  TC_CHECK_EQ_INT(tc_e_num_vars(p), 2);
  TC_CHECK_STR(tc_e_var_name(p, 1), "i");
  TC_CHECK(C(p, 5) == C(p, 5), "constants are shared");
  const tc_expr *x1 = R2(p, TC_E_ADD, R2(p, TC_E_MUL, i, C(p, 4)), i2);
  const tc_expr *x2 = R2(p, TC_E_ADD, R2(p, TC_E_MUL, i, C(p, 4)), i2);
  TC_CHECK(x1 == x2, "same structure gives the same node");
  TC_CHECK(tc_e_add(p, tc_e_mulc(p, i, 4), i2) == x1, "smart and raw agree when nothing folds");
  TC_CHECK(R2(p, TC_E_ADD, i2, i) != R2(p, TC_E_ADD, i, i2), "operand order matters");
  /* many nodes: the table grows and stays consistent */
  const tc_expr *acc = i;
  const tc_expr *nodes[3000];
  for (int n = 0; n < 3000; n++) nodes[n] = acc = R2(p, TC_E_ADD, acc, C(p, n));
  acc = i;
  int same = 1;
  for (int n = 0; n < 3000; n++) same &= (acc = R2(p, TC_E_ADD, acc, C(p, n))) == nodes[n];
  TC_CHECK(same, "rebuilding 3000 nodes finds the same pointers");
  tc_epool_free(p);
}

static int64_t ev2(tc_eop op, int64_t a, int64_t b) {
  tc_epool *p = tc_epool_new();
  int64_t v = tc_e_eval(R2(p, op, C(p, a), C(p, b)), NULL);
  tc_epool_free(p);
  return v;
}

static void test_eval_semantics(void) {
  TC_CHECK_EQ_INT(ev2(TC_E_DIV, -7, 2), -4);
  TC_CHECK_EQ_INT(ev2(TC_E_MOD, -7, 2), 1);
  TC_CHECK_EQ_INT(ev2(TC_E_DIV, 7, -2), -4);
  TC_CHECK_EQ_INT(ev2(TC_E_MOD, 7, -2), -1);
  TC_CHECK_EQ_INT(ev2(TC_E_DIV, -7, -2), 3);
  TC_CHECK_EQ_INT(ev2(TC_E_MOD, -7, -2), -1);
  TC_CHECK_EQ_INT(ev2(TC_E_DIV, 7, 2), 3);
  TC_CHECK_EQ_INT(ev2(TC_E_MOD, 7, 2), 1);
  TC_CHECK_EQ_INT(ev2(TC_E_DIV, -8, 2), -4);
  TC_CHECK_EQ_INT(ev2(TC_E_MOD, -8, 2), 0);
  TC_CHECK_EQ_INT(ev2(TC_E_DIV, 9, 0), 0);
  TC_CHECK_EQ_INT(ev2(TC_E_MOD, 9, 0), 9);
  TC_CHECK_EQ_INT(ev2(TC_E_MOD, -9, 0), -9);
  TC_CHECK_EQ_INT(ev2(TC_E_DIV, INT64_MIN, -1), INT64_MIN);
  TC_CHECK_EQ_INT(ev2(TC_E_MOD, INT64_MIN, -1), 0);
  TC_CHECK_EQ_INT(ev2(TC_E_DIV, INT64_MIN, 1), INT64_MIN);
  TC_CHECK_EQ_INT(ev2(TC_E_ADD, INT64_MAX, 1), INT64_MIN);
  TC_CHECK_EQ_INT(ev2(TC_E_SUB, INT64_MIN, 1), INT64_MAX);
  TC_CHECK_EQ_INT(ev2(TC_E_MUL, INT64_MIN, -1), INT64_MIN);
  TC_CHECK_EQ_INT(ev2(TC_E_SHL, 1, 62), (int64_t)1 << 62);
  TC_CHECK_EQ_INT(ev2(TC_E_SHL, 3, 62), INT64_MIN + ((int64_t)1 << 62));
  TC_CHECK_EQ_INT(ev2(TC_E_SHL, 1, 63), 0);
  TC_CHECK_EQ_INT(ev2(TC_E_SHL, 1, -1), 0);
  TC_CHECK_EQ_INT(ev2(TC_E_SHL, -3, 2), -12);
  TC_CHECK_EQ_INT(ev2(TC_E_SHR, -8, 1), -4);
  TC_CHECK_EQ_INT(ev2(TC_E_SHR, -7, 1), -4);
  TC_CHECK_EQ_INT(ev2(TC_E_SHR, -1, 62), -1);
  TC_CHECK_EQ_INT(ev2(TC_E_SHR, INT64_MIN, 62), -2);
  TC_CHECK_EQ_INT(ev2(TC_E_SHR, 100, 63), 0);
  TC_CHECK_EQ_INT(ev2(TC_E_SHR, 100, -5), 0);
  TC_CHECK_EQ_INT(ev2(TC_E_XOR, -1, 5), -6);
  TC_CHECK_EQ_INT(ev2(TC_E_AND, -4, 7), 4);
  TC_CHECK_EQ_INT(ev2(TC_E_OR, -8, 3), -5);
  TC_CHECK_EQ_INT(ev2(TC_E_MIN, -3, 2), -3);
  TC_CHECK_EQ_INT(ev2(TC_E_MAX, -3, 2), 2);
  TC_CHECK_EQ_INT(ev2(TC_E_LT, 2, 2), 0);
  TC_CHECK_EQ_INT(ev2(TC_E_LE, 2, 2), 1);
  TC_CHECK_EQ_INT(ev2(TC_E_EQ, 2, 3), 0);
  TC_CHECK_EQ_INT(ev2(TC_E_NE, 2, 3), 1);
  TC_CHECK_EQ_INT(ev2(TC_E_LAND, 5, -2), 1);
  TC_CHECK_EQ_INT(ev2(TC_E_LAND, 5, 0), 0);
  TC_CHECK_EQ_INT(ev2(TC_E_LOR, 0, -7), 1);
  TC_CHECK_EQ_INT(ev2(TC_E_LOR, 0, 0), 0);
  TC_CHECK_EQ_INT(tc_e_floordiv(-1, 3), -1);
  TC_CHECK_EQ_INT(tc_e_floormod(-1, 3), 2);

  tc_epool *p = tc_epool_new();
  const tc_expr *x = tc_e_var(p, "x", -10, 10);
  const tc_expr *y = tc_e_var(p, "y", -10, 10);
  int64_t vars[2] = {-3, 0};
  TC_CHECK_EQ_INT(tc_e_eval(tc_e_raw_not(p, x), vars), 0);
  TC_CHECK_EQ_INT(tc_e_eval(tc_e_raw_not(p, y), vars), 1);
  TC_CHECK_EQ_INT(tc_e_eval(tc_e_raw_select(p, x, C(p, 11), C(p, 22)), vars), 11);
  TC_CHECK_EQ_INT(tc_e_eval(tc_e_raw_select(p, y, C(p, 11), C(p, 22)), vars), 22);
  TC_CHECK_EQ_INT(tc_e_eval(R2(p, TC_E_DIV, x, y), vars), 0);
  TC_CHECK_EQ_INT(tc_e_eval(R2(p, TC_E_MOD, x, y), vars), -3);
  tc_epool_free(p);
}

static void test_ranges(void) {
  tc_epool *p = tc_epool_new();
  const tc_expr *i = tc_e_var(p, "i", 0, 7);
  const tc_expr *j = tc_e_var(p, "j", 0, 3);
  const tc_expr *k = tc_e_var(p, "k", -5, 5);
  const tc_expr *big = tc_e_var(p, "big", 0, INT64_MAX);
  const tc_expr *e;
  e = R2(p, TC_E_ADD, R2(p, TC_E_MUL, i, C(p, 4)), j);
  TC_CHECK(e->lo == 0 && e->hi == 31, "[%" PRId64 ", %" PRId64 "]", e->lo, e->hi);
  e = R2(p, TC_E_XOR, i, j);
  TC_CHECK(e->lo == 0 && e->hi == 7, "xor [%" PRId64 ", %" PRId64 "]", e->lo, e->hi);
  e = R2(p, TC_E_OR, i, C(p, 8));
  TC_CHECK(e->lo == 8 && e->hi == 15, "or [%" PRId64 ", %" PRId64 "]", e->lo, e->hi);
  e = R2(p, TC_E_AND, i, j);
  TC_CHECK(e->lo == 0 && e->hi == 3, "and [%" PRId64 ", %" PRId64 "]", e->lo, e->hi);
  e = R2(p, TC_E_DIV, k, C(p, 2));
  TC_CHECK(e->lo == -3 && e->hi == 2, "div [%" PRId64 ", %" PRId64 "]", e->lo, e->hi);
  e = R2(p, TC_E_MOD, k, C(p, 4));
  TC_CHECK(e->lo == 0 && e->hi == 3, "mod [%" PRId64 ", %" PRId64 "]", e->lo, e->hi);
  e = R2(p, TC_E_MOD, k, C(p, -4));
  TC_CHECK(e->lo == -3 && e->hi == 0, "mod- [%" PRId64 ", %" PRId64 "]", e->lo, e->hi);
  e = R2(p, TC_E_MOD, i, k); /* divisor range includes 0: x % 0 == x */
  TC_CHECK(e->lo <= 0 && e->hi >= 7, "modvar [%" PRId64 ", %" PRId64 "]", e->lo, e->hi);
  e = R2(p, TC_E_SHL, j, C(p, 3));
  TC_CHECK(e->lo == 0 && e->hi == 24, "shl [%" PRId64 ", %" PRId64 "]", e->lo, e->hi);
  e = R2(p, TC_E_SHR, k, C(p, 1));
  TC_CHECK(e->lo == -3 && e->hi == 2, "shr [%" PRId64 ", %" PRId64 "]", e->lo, e->hi);
  e = R2(p, TC_E_ADD, big, C(p, 1)); /* may wrap: full range */
  TC_CHECK(e->lo == INT64_MIN && e->hi == INT64_MAX, "wrap [%" PRId64 ", %" PRId64 "]", e->lo, e->hi);
  e = R2(p, TC_E_LT, j, C(p, 4));
  TC_CHECK(e->lo == 1 && e->hi == 1, "lt [%" PRId64 ", %" PRId64 "]", e->lo, e->hi);
  tc_epool_free(p);
}

static void test_smart_constructors(void) {
  tc_epool *p = tc_epool_new();
  const tc_expr *i = tc_e_var(p, "i", 0, 7);
  const tc_expr *j = tc_e_var(p, "j", 0, 3);
  const tc_expr *k = tc_e_var(p, "k", -5, 5);
  TC_CHECK(tc_e_is_const(tc_e_add(p, C(p, 3), C(p, 4)), 7), "fold");
  TC_CHECK(tc_e_is_const(tc_e_divc(p, C(p, -7), 2), -4), "fold floor div");
  TC_CHECK(tc_e_addc(p, i, 0) == i, "x+0");
  TC_CHECK(tc_e_add(p, C(p, 0), i) == i, "0+x");
  TC_CHECK(tc_e_mulc(p, i, 1) == i, "x*1");
  TC_CHECK(tc_e_is_const(tc_e_mulc(p, i, 0), 0), "x*0");
  TC_CHECK(tc_e_divc(p, i, 1) == i, "x/1");
  TC_CHECK(tc_e_is_const(tc_e_modc(p, i, 1), 0), "x%%1");
  TC_CHECK(tc_e_is_const(tc_e_sub(p, k, k), 0), "x-x");
  TC_CHECK(tc_e_is_const(tc_e_divc(p, j, 4), 0), "j/4 by range");
  TC_CHECK(tc_e_modc(p, j, 4) == j, "j%%4 by range");
  TC_CHECK(tc_e_is_const(tc_e_lt(p, i, C(p, 8)), 1), "i<8");
  TC_CHECK(tc_e_is_const(tc_e_lt(p, i, C(p, 0)), 0), "i<0");
  TC_CHECK(tc_e_is_const(tc_e_le(p, j, i), 0) == 0, "j<=i undecided");
  TC_CHECK(tc_e_not(p, tc_e_lt(p, i, j)) == tc_e_le(p, j, i), "!(i<j) -> j<=i");
  TC_CHECK(tc_e_select(p, tc_e_lt(p, j, C(p, 4)), i, k) == i, "select decided");
  TC_CHECK(tc_e_select(p, C(p, 0), i, k) == k, "select const");
  TC_CHECK(tc_e_land(p, C(p, 1), tc_e_lt(p, i, j)) == tc_e_lt(p, i, j), "1 && c");
  TC_CHECK(tc_e_is_const(tc_e_land(p, C(p, 0), tc_e_lt(p, i, j)), 0), "0 && c");
  TC_CHECK(tc_e_bin(p, TC_E_MIN, j, C(p, 5)) == j, "min by range");
  TC_CHECK(tc_e_bin(p, TC_E_MAX, j, C(p, 5)) == C(p, 5), "max by range");
  TC_CHECK(tc_e_is_const(tc_e_bin(p, TC_E_SHL, i, C(p, 70)), 0), "shl out of range");
  TC_CHECK(tc_e_xor(p, i, C(p, 0)) == i, "x^0");
  TC_CHECK(tc_e_is_const(tc_e_xor(p, i, i), 0), "x^x");
  tc_epool_free(p);
}

/* --------------------------------------------------- simplifier rules */

static void test_simplify_rules(void) {
  tc_epool *p = tc_epool_new();
  const tc_expr *i = tc_e_var(p, "i", 0, 7);
  const tc_expr *j = tc_e_var(p, "j", 0, 3);
  const tc_expr *k = tc_e_var(p, "k", -5, 5);
  const tc_expr *x = tc_e_var(p, "x", 0, 1000);
  const tc_expr *y = tc_e_var(p, "y", -1000, 1000);
  const tc_expr *i4j = R2(p, TC_E_ADD, R2(p, TC_E_MUL, i, C(p, 4)), j);

  /* (a*f + b) / f -> a and (a*f + b) % f -> b when 0 <= b < f */
  TC_CHECK(tc_simplify(p, R2(p, TC_E_DIV, i4j, C(p, 4))) == i, "(i*4+j)/4");
  TC_CHECK(tc_simplify(p, R2(p, TC_E_MOD, i4j, C(p, 4))) == j, "(i*4+j)%%4");
  TC_CHECK(tc_e_is_const(tc_simplify(p, R2(p, TC_E_DIV, j, C(p, 4))), 0), "j/4");
  TC_CHECK(tc_simplify(p, R2(p, TC_E_MOD, j, C(p, 4))) == j, "j%%4");
  const tc_expr *e = R2(p, TC_E_ADD, R2(p, TC_E_ADD, R2(p, TC_E_MUL, i, C(p, 8)),
                                       R2(p, TC_E_MUL, j, C(p, 2))), C(p, 1));
  const tc_expr *s = tc_simplify(p, R2(p, TC_E_DIV, e, C(p, 8)));
  TC_CHECK(s == i, "(i*8+j*2+1)/8 -> i");
  TC_CHECK_EQ_INT(tc_e_count_op(s, TC_E_DIV), 0);
  CHECK_SIMP_EQ(p, R2(p, TC_E_MOD, e, C(p, 8)), tc_e_addc(p, tc_e_mulc(p, j, 2), 1));
  /* (a*f + b) / f -> a + b / f when b's quotient is not constant */
  CHECK_SIMP_EQ(p, R2(p, TC_E_DIV, R2(p, TC_E_ADD, R2(p, TC_E_MUL, i, C(p, 4)), x), C(p, 4)),
                tc_e_add(p, i, tc_e_divc(p, x, 4)));
  /* floor semantics with a negative multiplier: (k*4 + 3) / 4 == k */
  TC_CHECK(tc_simplify(p, R2(p, TC_E_DIV, R2(p, TC_E_ADD, R2(p, TC_E_MUL, k, C(p, 4)), C(p, 3)),
                              C(p, 4))) == k, "(k*4+3)/4 -> k");
  TC_CHECK(tc_simplify(p, R2(p, TC_E_MOD, R2(p, TC_E_ADD, R2(p, TC_E_MUL, k, C(p, 4)), C(p, 3)),
                              C(p, 4))) == C(p, 3), "(k*4+3)%%4 -> 3");
  /* but k / 4 itself must stay a floor division */
  s = tc_simplify(p, R2(p, TC_E_DIV, k, C(p, 4)));
  TC_CHECK(s->op == TC_E_DIV, "k/4 kept");

  /* divisor-of-f rule: (c*X + B) / f -> X / (f/c), % f -> c*(X % (f/c)) + B */
  const tc_expr *t8j = R2(p, TC_E_ADD, R2(p, TC_E_MUL, x, C(p, 8)), j);
  CHECK_SIMP_EQ(p, R2(p, TC_E_DIV, t8j, C(p, 32)), tc_e_divc(p, x, 4));
  CHECK_SIMP_EQ(p, R2(p, TC_E_MOD, t8j, C(p, 32)),
                tc_e_add(p, tc_e_mulc(p, tc_e_modc(p, x, 4), 8), j));
  TC_CHECK_EQ_INT(tc_e_count_op(tc_simplify(p, R2(p, TC_E_MOD, t8j, C(p, 32))), TC_E_MOD), 1);
  /* a non-negative dividend stays non-negative after splitting, so it
   * keeps printing as plain C division */
  s = tc_simplify(p, R2(p, TC_E_DIV, R2(p, TC_E_ADD, R2(p, TC_E_ADD, R2(p, TC_E_MUL, i, C(p, 4)), k),
                                       C(p, 7)), C(p, 4)));
  CHECK_PRINT(p, s, "i + (k + 7) / 4");
  CHECK_PRINT(p, tc_simplify(p, R2(p, TC_E_MOD, R2(p, TC_E_ADD, k, C(p, 7)), C(p, 4))), "(k + 7) % 4");
  CHECK_PRINT(p, tc_simplify(p, R2(p, TC_E_MOD, R2(p, TC_E_ADD, k, C(p, 1)), C(p, 4))),
              "tc_fmod(k + 1, 4)");

  /* linear normalization */
  CHECK_SIMP_EQ(p, R2(p, TC_E_ADD, R2(p, TC_E_MUL, x, C(p, 4)), R2(p, TC_E_MUL, x, C(p, 2))),
                tc_e_mulc(p, x, 6));
  TC_CHECK(tc_simplify(p, R2(p, TC_E_MUL, x, C(p, 4))) == tc_e_mulc(p, x, 4), "x*4 stays");
  TC_CHECK(tc_simplify(p, R2(p, TC_E_SUB, R2(p, TC_E_ADD, x, C(p, 3)), C(p, 3))) == x, "(x+3)-3");
  TC_CHECK(tc_simplify(p, R2(p, TC_E_SUB, R2(p, TC_E_ADD, x, y), x)) == y, "(x+y)-x");
  CHECK_SIMP_EQ(p, R2(p, TC_E_MUL, R2(p, TC_E_ADD, x, C(p, 1)), C(p, 3)),
                tc_e_addc(p, tc_e_mulc(p, x, 3), 3));
  CHECK_SIMP_EQ(p, R2(p, TC_E_ADD, C(p, 2), R2(p, TC_E_ADD, y, R2(p, TC_E_ADD, x, C(p, 5)))),
                tc_e_addc(p, tc_e_add(p, x, y), 7));

  /* nested div/mod */
  CHECK_SIMP_EQ(p, R2(p, TC_E_DIV, R2(p, TC_E_DIV, x, C(p, 4)), C(p, 8)), tc_e_divc(p, x, 32));
  CHECK_SIMP_EQ(p, R2(p, TC_E_DIV, R2(p, TC_E_DIV, y, C(p, 4)), C(p, 8)), tc_e_divc(p, y, 32));
  CHECK_SIMP_EQ(p, R2(p, TC_E_DIV, R2(p, TC_E_MOD, x, C(p, 32)), C(p, 4)),
                tc_e_modc(p, tc_e_divc(p, x, 4), 8));
  CHECK_SIMP_EQ(p, R2(p, TC_E_MOD, R2(p, TC_E_MOD, y, C(p, 32)), C(p, 8)), tc_e_modc(p, y, 8));
  TC_CHECK(tc_e_is_const(tc_simplify(p, R2(p, TC_E_MOD, R2(p, TC_E_MUL, y, C(p, 4)), C(p, 4))), 0),
           "y*4 %% 4");
  TC_CHECK(tc_simplify(p, R2(p, TC_E_DIV, R2(p, TC_E_MUL, y, C(p, 4)), C(p, 4))) == y, "y*4/4");
  /* x - (x/4)*4 -> x % 4, and (x/4)*4 + x%4 -> x */
  CHECK_SIMP_EQ(p, R2(p, TC_E_SUB, y, R2(p, TC_E_MUL, R2(p, TC_E_DIV, y, C(p, 4)), C(p, 4))),
                tc_e_modc(p, y, 4));
  TC_CHECK(tc_simplify(p, R2(p, TC_E_ADD, R2(p, TC_E_MUL, R2(p, TC_E_DIV, y, C(p, 4)), C(p, 4)),
                              R2(p, TC_E_MOD, y, C(p, 4)))) == y, "(y/4)*4 + y%%4");

  /* xor */
  CHECK_SIMP_EQ(p, R2(p, TC_E_XOR, i4j, C(p, 2)),
                tc_e_add(p, tc_e_mulc(p, i, 4), tc_e_xor(p, j, C(p, 2))));
  s = tc_simplify(p, R2(p, TC_E_XOR, i4j, C(p, 2)));
  TC_CHECK(s == tc_e_add(p, tc_e_mulc(p, i, 4), tc_e_xor(p, j, C(p, 2))), "swizzle structure");
  CHECK_SIMP_EQ(p, R2(p, TC_E_XOR, R2(p, TC_E_MUL, i, C(p, 4)), j),
                tc_e_add(p, tc_e_mulc(p, i, 4), j));
  CHECK_SIMP_EQ(p, R2(p, TC_E_XOR, i4j, i), /* i in [0,8): not a low part of i*4+j */
                tc_e_xor(p, tc_e_add(p, tc_e_mulc(p, i, 4), j), i));
  TC_CHECK(tc_simplify(p, R2(p, TC_E_XOR, y, C(p, 0))) == y, "y^0");
  TC_CHECK(tc_e_is_const(tc_simplify(p, R2(p, TC_E_XOR, y, y)), 0), "y^y");
  CHECK_SIMP_EQ(p, R2(p, TC_E_XOR, R2(p, TC_E_XOR, y, C(p, 3)), C(p, 5)), tc_e_xor(p, y, C(p, 6)));
  TC_CHECK(tc_simplify(p, R2(p, TC_E_XOR, R2(p, TC_E_XOR, y, x), y)) == x, "y^x^y");

  /* and / or / shifts */
  CHECK_SIMP_EQ(p, R2(p, TC_E_AND, y, C(p, 7)), tc_e_modc(p, y, 8));
  TC_CHECK(tc_e_is_const(tc_simplify(p, R2(p, TC_E_AND, y, C(p, 0))), 0), "y&0");
  TC_CHECK(tc_simplify(p, R2(p, TC_E_AND, i, C(p, 15))) == i, "i&15");
  TC_CHECK(tc_simplify(p, R2(p, TC_E_AND, i4j, C(p, 3))) == j, "(i*4+j)&3");
  CHECK_SIMP_EQ(p, R2(p, TC_E_OR, R2(p, TC_E_MUL, i, C(p, 4)), j), tc_e_add(p, tc_e_mulc(p, i, 4), j));
  CHECK_SIMP_EQ(p, R2(p, TC_E_SHR, y, C(p, 2)), tc_e_divc(p, y, 4));
  CHECK_SIMP_EQ(p, R2(p, TC_E_SHL, y, C(p, 3)), tc_e_mulc(p, y, 8));
  TC_CHECK(tc_simplify(p, R2(p, TC_E_SHR, R2(p, TC_E_SHL, i, C(p, 2)), C(p, 2))) == i, "(i<<2)>>2");

  /* min / max / comparisons / select / logic */
  TC_CHECK(tc_simplify(p, R2(p, TC_E_MIN, y, R2(p, TC_E_ADD, y, C(p, 1)))) == y, "min(y,y+1)");
  CHECK_SIMP_EQ(p, R2(p, TC_E_MAX, y, R2(p, TC_E_ADD, y, C(p, 1))), tc_e_addc(p, y, 1));
  TC_CHECK(tc_simplify(p, R2(p, TC_E_MIN, i, R2(p, TC_E_ADD, j, C(p, 8)))) == i, "min(i,j+8)");
  const tc_expr *i4 = R2(p, TC_E_MUL, i, C(p, 4));
  TC_CHECK(tc_e_is_const(tc_simplify(p, R2(p, TC_E_LT, i4j, R2(p, TC_E_ADD, i4, C(p, 4)))), 1),
           "i*4+j < i*4+4");
  TC_CHECK(tc_e_is_const(tc_simplify(p, R2(p, TC_E_LE, R2(p, TC_E_ADD, i4, C(p, 4)), i4j)), 0),
           "i*4+4 <= i*4+j");
  TC_CHECK(tc_e_is_const(tc_simplify(p, R2(p, TC_E_EQ, R2(p, TC_E_ADD, y, C(p, 1)), y)), 0), "y+1==y");
  TC_CHECK(tc_simplify(p, tc_e_raw_select(p, R2(p, TC_E_LT, j, C(p, 4)), x, y)) == x, "select");
  TC_CHECK(tc_simplify(p, tc_e_raw_select(p, tc_e_raw_not(p, R2(p, TC_E_LT, x, y)), x, y)) ==
               tc_e_select(p, tc_e_le(p, y, x), x, y),
           "select(!(x<y), x, y) -> select(y<=x, x, y)");
  TC_CHECK(tc_simplify(p, tc_e_raw_select(p, tc_e_raw_not(p, y), x, i)) == tc_e_select(p, y, i, x),
           "select(!y, x, i) swaps");
  TC_CHECK(tc_simplify(p, tc_e_raw_not(p, R2(p, TC_E_LT, x, y))) == tc_e_le(p, y, x), "!(x<y)");
  TC_CHECK(tc_simplify(p, R2(p, TC_E_LAND, C(p, 3), R2(p, TC_E_LT, x, y))) == tc_e_lt(p, x, y),
           "3 && c");
  TC_CHECK(tc_e_is_const(tc_simplify(p, R2(p, TC_E_LOR, C(p, 3), R2(p, TC_E_LT, x, y))), 1),
           "3 || c");
  tc_epool_free(p);
}

/* The printed size of a shared subexpression counts at each use: e_n =
 * e_{n-1} ^ (e_{n-1} & y) prints 2 s_{n-1} + 3 nodes, s_0 = 1, so
 * s_n = 2^(n + 2) - 3; the count stops at cap + 1. */
static void test_print_size(void) {
  tc_epool *p = tc_epool_new();
  const tc_expr *e = tc_e_var(p, "x", 0, 1023), *y = tc_e_var(p, "y", 0, 1023);
  TC_CHECK(tc_e_print_size(e, 100) == 1, "a variable");
  for (int n = 1; n <= 10; n++) {
    e = tc_e_xor(p, e, tc_e_and(p, e, y));
    TC_CHECK(tc_e_print_size(e, 1 << 20) == (1 << (n + 2)) - 3, "n %d: %lld", n,
             (long long)tc_e_print_size(e, 1 << 20));
  }
  TC_CHECK(tc_e_print_size(e, 100) == 101, "capped: %lld", (long long)tc_e_print_size(e, 100));
  tc_str s;
  tc_str_init(&s);
  tc_e_print_c(&s, p, e);
  TC_CHECK(s.len > 4093, "the printed text has every node: %zu chars", s.len);
  tc_str_free(&s);
  tc_epool_free(p);
}

static void test_print(void) {
  tc_epool *p = tc_epool_new();
  const tc_expr *i = tc_e_var(p, "i", 0, 7);
  const tc_expr *j = tc_e_var(p, "j", 0, 3);
  const tc_expr *k = tc_e_var(p, "k", -5, 5);
  CHECK_PRINT(p, tc_e_add(p, tc_e_mulc(p, i, 4), j), "i * 4 + j");
  CHECK_PRINT(p, tc_e_mulc(p, tc_e_add(p, i, j), 4), "(i + j) * 4");
  CHECK_PRINT(p, tc_e_sub(p, i, tc_e_sub(p, j, k)), "i - (j - k)");
  CHECK_PRINT(p, tc_e_divc(p, tc_e_add(p, i, j), 2), "(i + j) / 2");
  CHECK_PRINT(p, tc_e_modc(p, tc_e_divc(p, i, 2), 3), "i / 2 % 3");
  CHECK_PRINT(p, tc_e_mul(p, i, tc_e_divc(p, j, 2)), "i * (j / 2)");
  CHECK_PRINT(p, tc_e_divc(p, k, 4), "tc_fdiv(k, 4)");
  CHECK_PRINT(p, tc_e_modc(p, k, 4), "tc_fmod(k, 4)");
  CHECK_PRINT(p, tc_e_div(p, i, k), "tc_fdiv(i, k)");
  CHECK_PRINT(p, tc_e_addc(p, tc_e_mulc(p, tc_e_divc(p, k, 4), 2), 1), "tc_fdiv(k, 4) * 2 + 1");
  CHECK_PRINT(p, tc_e_mulc(p, k, -3), "k * (-3)");
  CHECK_PRINT(p, tc_e_addc(p, i, -3), "i - 3");
  CHECK_PRINT(p, tc_e_addc(p, i, 5000000000LL), "i + 5000000000LL");
  CHECK_PRINT(p, tc_e_mulc(p, k, -5000000000LL), "k * (-5000000000LL)");
  CHECK_PRINT(p, C(p, INT64_MIN), "(-9223372036854775807LL - 1)");
  CHECK_PRINT(p, C(p, 2147483647), "2147483647");
  CHECK_PRINT(p, C(p, 2147483648LL), "2147483648LL");
  CHECK_PRINT(p, tc_e_bin(p, TC_E_MIN, i, k), "tc_min(i, k)");
  CHECK_PRINT(p, tc_e_bin(p, TC_E_MAX, tc_e_add(p, i, j), k), "tc_max(i + j, k)");
  CHECK_PRINT(p, tc_e_select(p, tc_e_lt(p, i, j), i, tc_e_addc(p, j, 1)), "(i < j ? i : j + 1)");
  CHECK_PRINT(p, tc_e_xor(p, tc_e_mulc(p, i, 4), j), "(i * 4) ^ j");
  CHECK_PRINT(p, tc_e_and(p, tc_e_xor(p, i, j), k), "(i ^ j) & k");
  CHECK_PRINT(p, tc_e_xor(p, tc_e_xor(p, i, j), k), "i ^ j ^ k");
  CHECK_PRINT(p, tc_e_bin(p, TC_E_SHL, tc_e_add(p, i, j), k), "(i + j) << k");
  CHECK_PRINT(p, tc_e_land(p, tc_e_lt(p, i, j), tc_e_bin(p, TC_E_NE, k, C(p, 0))),
              "i < j && k != 0");
  CHECK_PRINT(p, tc_e_bin(p, TC_E_LOR, tc_e_land(p, tc_e_lt(p, i, j), tc_e_lt(p, j, k)),
                          tc_e_lt(p, k, i)),
              "(i < j && j < k) || k < i");
  CHECK_PRINT(p, tc_e_bin(p, TC_E_EQ, tc_e_lt(p, i, j), tc_e_lt(p, j, k)), "(i < j) == (j < k)");
  CHECK_PRINT(p, tc_e_raw_not(p, tc_e_add(p, i, k)), "!(i + k)");
  tc_epool_free(p);
}

/* ---------------------------------------------------- differential test */

static uint64_t rng_state;

static uint64_t rnd(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static int64_t rnd_in(int64_t lo, int64_t hi) { /* inclusive */
  uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
  if (span == 0) return (int64_t)rnd();
  return (int64_t)((uint64_t)lo + rnd() % span);
}

static int chance(int pct) { return (int)(rnd() % 100) < pct; }

typedef struct gen {
  tc_epool *p;
  const tc_expr *vars[4];
  int nvars;
  int big; /* large constants and ranges */
} gen;

static const tc_expr *g_const(gen *g) {
  if (g->big && chance(15)) {
    static const int64_t bigs[] = {INT64_MIN, INT64_MAX, (int64_t)1 << 62, (int64_t)1 << 40,
                                   -((int64_t)1 << 40), 2147483648LL, 3000000007LL,
                                   INT64_MIN + 1, -INT64_MAX / 3};
    return C(g->p, bigs[rnd() % (sizeof bigs / sizeof bigs[0])]);
  }
  if (chance(25)) return C(g->p, (int64_t)1 << rnd_in(0, 6));
  return C(g->p, rnd_in(-4, 16));
}

static const tc_expr *g_leaf(gen *g) {
  if (chance(65)) return g->vars[rnd() % (uint64_t)g->nvars];
  return g_const(g);
}

static const tc_expr *g_expr(gen *g, int depth);

/* A divisor: mostly a small positive constant, sometimes negative, zero or
 * an arbitrary expression. */
static const tc_expr *g_divisor(gen *g, int depth) {
  int r = (int)(rnd() % 100);
  if (g->big && r < 25) return C(g->p, rnd_in(-7, 13));
  if (r < 55) return C(g->p, (int64_t)1 << rnd_in(0, 4));
  if (r < 70) return C(g->p, rnd_in(1, 12));
  if (r < 78) return C(g->p, rnd_in(-9, -1));
  if (r < 81) return C(g->p, 0);
  if (g->big && r < 84) return g_const(g);
  return g_expr(g, depth);
}

/* Layout-like index: sum of var * 2^s (+ const). */
static const tc_expr *g_linear(gen *g) {
  const tc_expr *e = NULL;
  int n = (int)rnd_in(1, 3);
  for (int t = 0; t < n; t++) {
    const tc_expr *v = g->vars[rnd() % (uint64_t)g->nvars];
    static const int64_t odd[] = {3, 5, 6, 7, 12, -3, -4};
    int64_t coef = (g->big && chance(40)) ? odd[rnd() % (sizeof odd / sizeof odd[0])]
                                          : (int64_t)1 << rnd_in(0, 5);
    const tc_expr *term = R2(g->p, TC_E_MUL, v, C(g->p, coef));
    e = e ? R2(g->p, TC_E_ADD, e, term) : term;
  }
  if (chance(50)) e = R2(g->p, TC_E_ADD, e, C(g->p, rnd_in(-3, 9)));
  return e;
}

/* Shapes the simplifier rules look for, with perturbed constants so that
 * near misses (where a rule must not fire) are generated too. */
static const tc_expr *g_pattern(gen *g, int depth) {
  tc_epool *p = g->p;
  const tc_expr *x = chance(50) ? g_linear(g) : g_expr(g, depth);
  int64_t f = chance(70) ? (int64_t)1 << rnd_in(1, 3) : rnd_in(-5, 7);
  int64_t q = chance(80) ? rnd_in(1, 4) : rnd_in(-3, 0);
  int64_t c = chance(70) ? 1 : rnd_in(-3, 3);
  int64_t f2 = chance(75) ? f : rnd_in(-5, 9);
  const tc_expr *F = C(p, f);
  switch (rnd() % 10) {
  case 8:
  case 9: { /* (c*X + B) / f and % f with c | f and B around [0, c) */
    int64_t c2 = (int64_t)1 << rnd_in(1, 3), fm = c2 << rnd_in(0, 2);
    if (chance(20)) fm = rnd_in(-4, 24);
    const tc_expr *v = g->vars[rnd() % (uint64_t)g->nvars];
    const tc_expr *B = R2(p, TC_E_ADD, R2(p, TC_E_MUL, v, C(p, rnd_in(1, 3))), C(p, rnd_in(-2, 4)));
    const tc_expr *cx = R2(p, TC_E_MUL, chance(50) ? g_linear(g) : g_leaf(g), C(p, c2));
    if (chance(30)) cx = R2(p, TC_E_ADD, cx, C(p, rnd_in(-9, 9)));
    return R2(p, chance(50) ? TC_E_DIV : TC_E_MOD, R2(p, TC_E_ADD, cx, B), C(p, fm));
  }
  case 0: /* c*(x % f) + c*f*(x / f) */
    return R2(p, TC_E_ADD, R2(p, TC_E_MUL, R2(p, TC_E_MOD, x, F), C(p, c)),
              R2(p, TC_E_MUL, R2(p, TC_E_DIV, x, F), C(p, c * f2)));
  case 1: /* x - (x / f) * f */
    return R2(p, TC_E_SUB, R2(p, TC_E_MUL, x, C(p, c)),
              R2(p, TC_E_MUL, R2(p, TC_E_DIV, x, F), C(p, c * f2)));
  case 2: /* (x % (f*q)) / f */
    return R2(p, TC_E_DIV, R2(p, TC_E_MOD, x, C(p, f * q)), C(p, f2));
  case 3: /* (x / f) / q */
    return R2(p, TC_E_DIV, R2(p, TC_E_DIV, x, F), C(p, q));
  case 4: /* (x % (f*q)) % f */
    return R2(p, TC_E_MOD, R2(p, TC_E_MOD, x, C(p, f * q)), C(p, f2));
  case 5: /* (x*f + y) / f and % f */
    return R2(p, chance(50) ? TC_E_DIV : TC_E_MOD,
              R2(p, TC_E_ADD, R2(p, TC_E_ADD, R2(p, TC_E_MUL, x, C(p, f2)), g_leaf(g)),
                 C(p, rnd_in(-8, 8))), F);
  case 6: /* swizzle */
    return R2(p, chance(70) ? TC_E_XOR : TC_E_OR, g_linear(g), chance(60) ? C(p, rnd_in(0, 7)) : g_leaf(g));
  default: /* min/max/compare of linear forms sharing terms */
    {
      const tc_expr *l = g_linear(g);
      static const tc_eop ops[] = {TC_E_MIN, TC_E_MAX, TC_E_LT, TC_E_LE, TC_E_EQ, TC_E_NE};
      return R2(p, ops[rnd() % 6], R2(p, TC_E_ADD, l, g_leaf(g)),
                R2(p, TC_E_ADD, l, C(p, rnd_in(-4, 8))));
    }
  }
}

static const tc_expr *g_expr(gen *g, int depth) {
  tc_epool *p = g->p;
  if (depth <= 0 || chance(20)) return chance(30) ? g_linear(g) : g_leaf(g);
  if (chance(12)) return g_pattern(g, depth - 1);
  int d = depth - 1;
  static const tc_eop bins[] = {TC_E_ADD, TC_E_ADD, TC_E_SUB, TC_E_MUL, TC_E_MUL, TC_E_DIV,
                                TC_E_DIV, TC_E_DIV, TC_E_MOD, TC_E_MOD, TC_E_MOD, TC_E_XOR,
                                TC_E_XOR, TC_E_AND, TC_E_OR, TC_E_SHL, TC_E_SHR, TC_E_MIN,
                                TC_E_MAX, TC_E_LT, TC_E_LE, TC_E_EQ, TC_E_NE, TC_E_LAND,
                                TC_E_LOR};
  int r = (int)(rnd() % 100);
  if (r < 4) return tc_e_raw_not(p, g_expr(g, d));
  if (r < 9) return tc_e_raw_select(p, g_expr(g, d), g_expr(g, d), g_expr(g, d));
  tc_eop op = bins[rnd() % (sizeof bins / sizeof bins[0])];
  const tc_expr *a = g_expr(g, d), *b;
  switch (op) {
  case TC_E_MUL: b = chance(75) ? g_const(g) : g_expr(g, d); break;
  case TC_E_DIV:
  case TC_E_MOD: b = g_divisor(g, d); break;
  case TC_E_XOR:
  case TC_E_AND:
  case TC_E_OR: b = chance(60) ? C(p, rnd_in(-2, 20)) : g_expr(g, d); break;
  case TC_E_SHL:
  case TC_E_SHR:
    b = chance(80) ? C(p, chance(90) ? rnd_in(0, 5) : rnd_in(-3, 70)) : g_expr(g, d);
    break;
  default: b = g_expr(g, d); break;
  }
  if (chance(30) && (op == TC_E_ADD || op == TC_E_MUL || op == TC_E_XOR)) {
    const tc_expr *t = a;
    a = b, b = t;
  }
  return R2(p, op, a, b);
}

/* Rebuilds e with the smart constructors. */
static const tc_expr *smart_copy(tc_epool *p, const tc_expr *e) {
  switch (e->op) {
  case TC_E_CONST:
  case TC_E_VAR: return e;
  case TC_E_NOT: return tc_e_not(p, smart_copy(p, e->a));
  case TC_E_SELECT:
    return tc_e_select(p, smart_copy(p, e->a), smart_copy(p, e->b), smart_copy(p, e->c));
  default: return tc_e_bin(p, e->op, smart_copy(p, e->a), smart_copy(p, e->b));
  }
}

/* Evaluates e and checks that every node's value lies in its range.
 * Both SELECT arms are evaluated so that their ranges are checked too. */
static int range_bad;
static const tc_expr *range_bad_node;
static int64_t eval_checked(const tc_expr *e, const int64_t *vars) {
  int64_t v, a = 0, b = 0;
  switch (e->op) {
  case TC_E_CONST: v = e->val; break;
  case TC_E_VAR: v = vars[e->val]; break;
  case TC_E_NOT: v = eval_checked(e->a, vars) == 0; break;
  case TC_E_SELECT:
    a = eval_checked(e->b, vars);
    b = eval_checked(e->c, vars);
    v = eval_checked(e->a, vars) != 0 ? a : b;
    break;
  default:
    a = eval_checked(e->a, vars);
    b = eval_checked(e->b, vars);
    v = tc_e_apply(e->op, a, b);
    break;
  }
  if (v < e->lo || v > e->hi) {
    if (!range_bad) range_bad_node = e;
    range_bad++;
  }
  return v;
}

static int node_count(const tc_expr *e) {
  if (!e) return 0;
  return 1 + node_count(e->a) + node_count(e->b) + node_count(e->c);
}

typedef struct diff_stats {
  int exprs, points, failures, changed, nonidem;
  long nodes_before, nodes_after;
} diff_stats;

static void report(const tc_epool *p, const char *what, const tc_expr *raw, const tc_expr *other,
                   const int64_t *vars, int nvars, int64_t want, int64_t got) {
  char *a = pr(p, raw), *b = pr(p, other);
  fprintf(stderr, "  %s mismatch:\n    raw:   %s\n    other: %s\n    at", what, a, b);
  for (int v = 0; v < nvars; v++) fprintf(stderr, " %s=%" PRId64, tc_e_var_name(p, v), vars[v]);
  fprintf(stderr, "\n    raw value %" PRId64 ", other value %" PRId64 "\n", want, got);
  free(a);
  free(b);
}

static void run_diff(diff_stats *st, int nexprs, int big, uint64_t seed) {
  rng_state = seed;
  tc_epool *p = tc_epool_new();
  gen g;
  g.p = p;
  g.big = big;
  int64_t lo[4], hi[4];
  if (!big) {
    g.vars[0] = tc_e_var(p, "i", 0, 7);
    g.vars[1] = tc_e_var(p, "j", 0, 3);
    g.vars[2] = tc_e_var(p, "k", -5, 5);
    g.vars[3] = tc_e_var(p, "n", -8, -1);
  } else {
    g.vars[0] = tc_e_var(p, "x", 0, 1023);
    g.vars[1] = tc_e_var(p, "y", -1000, 1000);
    g.vars[2] = tc_e_var(p, "z", 0, (int64_t)1 << 40);
    g.vars[3] = tc_e_var(p, "w", INT64_MIN / 2, INT64_MAX);
  }
  g.nvars = 4;
  for (int v = 0; v < 4; v++) tc_e_var_range(p, v, &lo[v], &hi[v]);

  for (int n = 0; n < nexprs; n++) {
    const tc_expr *raw = g_expr(&g, (int)rnd_in(1, 5));
    const tc_expr *sim = tc_simplify(p, raw);
    const tc_expr *sm = smart_copy(p, raw);
    st->exprs++;
    if (sim != raw) st->changed++;
    if (tc_simplify(p, sim) != sim) st->nonidem++;
    st->nodes_before += node_count(raw);
    st->nodes_after += node_count(sim);
    for (int t = 0; t < 20; t++) {
      int64_t vars[4];
      for (int v = 0; v < 4; v++) {
        int r = (int)(rnd() % 100);
        vars[v] = r < 10 ? lo[v] : r < 20 ? hi[v] : r < 25 ? (lo[v] <= 0 && hi[v] >= 0 ? 0 : lo[v])
                                                          : rnd_in(lo[v], hi[v]);
      }
      st->points++;
      range_bad = 0;
      int64_t want = eval_checked(raw, vars);
      int64_t got = eval_checked(sim, vars);
      int64_t got2 = eval_checked(sm, vars);
      int64_t ref = tc_e_eval(raw, vars);
      int bad = 0;
      if (ref != want || got != want) {
        if (st->failures < 10) report(p, "simplify", raw, sim, vars, 4, want, got);
        bad = 1;
      } else if (got2 != want) {
        if (st->failures < 10) report(p, "smart constructor", raw, sm, vars, 4, want, got2);
        bad = 1;
      } else if (range_bad) {
        if (st->failures < 10) {
          char *a = pr(p, raw), *b = pr(p, range_bad_node);
          fprintf(stderr, "  range unsound: node %s has range [%" PRId64 ", %" PRId64
                          "]\n    in raw %s\n    at",
                  b, range_bad_node->lo, range_bad_node->hi, a);
          for (int v = 0; v < 4; v++) fprintf(stderr, " %" PRId64, vars[v]);
          fprintf(stderr, "\n");
          free(a);
          free(b);
        }
        bad = 1;
      }
      if (bad) {
        st->failures++;
        break;
      }
    }
  }
  tc_epool_free(p);
}

/* DIFF_SCALE (compile-time) multiplies the expression counts for long
 * stress runs; DIFF_SEED changes the seeds. */
#ifndef DIFF_SCALE
#define DIFF_SCALE 1
#endif
#ifndef DIFF_SEED
#define DIFF_SEED 0
#endif

static void test_differential(void) {
  diff_stats st;
  memset(&st, 0, sizeof st);
  double t0 = tc_now_seconds();
  run_diff(&st, 16000 * DIFF_SCALE, 0, 0x5eed1234abcdULL + DIFF_SEED);
  run_diff(&st, 8000 * DIFF_SCALE, 1, 0xfeedface1234ULL + DIFF_SEED);
  double t1 = tc_now_seconds();
  printf("  differential: %d expressions, %d points, %d simplified, %d not idempotent, "
         "nodes %ld -> %ld, %d failures (%.2fs)\n",
         st.exprs, st.points, st.changed, st.nonidem, st.nodes_before, st.nodes_after,
         st.failures, t1 - t0);
  TC_CHECK(st.exprs >= 5000, "only %d expressions", st.exprs);
  TC_CHECK_EQ_INT(st.failures, 0);
}

int main(void) {
  TC_RUN(test_hash_consing);
  TC_RUN(test_eval_semantics);
  TC_RUN(test_ranges);
  TC_RUN(test_smart_constructors);
  TC_RUN(test_simplify_rules);
  TC_RUN(test_print);
  TC_RUN(test_print_size);
  TC_RUN(test_differential);
  TC_MAIN_END();
}
