/* test_cute.c - CuTe layouts and their algebra (src/layout/cute.c), the
 * expression parser (cute_expr.c), and tile pictures (picture.c): the
 * transform notation on the axis graph, bijectivity, bank conflicts, TV
 * layouts and SVG output.
 *
 * - known input -> output pairs: the examples of CuTe's layout-algebra
 *   documentation and pycute's results;
 * - property checks over seeded random layouts (coalesce keeps the
 *   function, composition(A,B)(i) == A(B(i)), (L, complement(L, M)) is a
 *   bijection onto its size, left_inverse(L)(L(i)) == i,
 *   L(right_inverse(L)(i)) == i, logical_divide / logical_product agree
 *   with their definitions, print -> parse round trips);
 * - parse errors with their columns; swizzle values;
 * - the 128-byte swizzle of an [8, 64] bf16 tile is conflict-free for rows
 *   and for columns of 16-byte chunks, in both notations. */
#include "test.h"

#include <stdbool.h>
#include <stdint.h>

#include "cute_test_util.h"
#include "layout/picture.h"

/* ------------------------------------------------------- known pairs */

static void test_known_pairs(void) {
  static const char *const cases[][2] = {
      /* CuTe's layout algebra documentation and pycute */
      {"complement((2,2):(1,6), 24)", "(3,2):(2,12)"},
      {"logical_divide(24:1, 4:2)", "(4,(2,3)):(2,(1,8))"},
      {"coalesce((2,(1,6)):(1,(6,2)))", "12:1"},
      {"composition((6,2):(8,2), (4,3):(3,1))", "((2,2),3):((24,2),8)"},
      {"composition(20:2, (5,4):(4,1))", "(5,4):(8,2)"},
      {"composition((10,2):(16,4), (5,4):(1,5))", "(5,(2,2)):(16,(80,4))"},
      {"complement(4:1, 24)", "6:4"},
      {"complement(6:4, 24)", "4:1"},
      {"complement((4,6):(1,4), 24)", "1:0"},
      {"complement(4:2, 24)", "(2,3):(1,8)"},
      {"complement((2,4):(1,6), 24)", "3:2"},
      {"complement(4:2)", "2:1"},
      {"logical_divide((4,2,3):(2,1,8), 4:2)", "((2,2),(2,3)):((4,1),(2,8))"},
      {"logical_divide((9,(4,8)):(59,(13,1)), (3:3, (2,4):(1,8)))",
       "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))"},
      {"logical_divide((8,64):(64,1), (4:1, 16:1))", "((4,2),(16,4)):((64,256),(1,16))"},
      {"logical_product((2,2):(4,1), 6:1)", "((2,2),(2,3)):((4,1),(2,8))"},
      {"logical_product((2,2):(4,1), (4,2):(2,1))", "((2,2),(4,2)):((4,1),(8,2))"},
      {"left_inverse((2,3):(3,1))", "(3,2):(2,1)"},
      {"right_inverse((2,3):(3,1))", "(3,2):(2,1)"},
      {"left_inverse((4,8):(8,1))", "(8,4):(4,1)"},
      {"right_inverse((4,8):(8,1))", "(8,4):(4,1)"},
      {"composition((4,8):(8,1), 4:8)", "4:2"},
      {"coalesce((4,(2,3)):(2,(1,8)))", "(4,2,3):(2,1,8)"},
      {"composition(4:6, 1:1)", "1:6"},
      /* swizzles (pycute's Swizzle) */
      {"Swizzle<3,4,3>(128)", "144"},
      {"Swizzle<3,4,3>(1000)", "920"},
      {"Swizzle<3,4,3>(2047)", "1935"},
      {"Swizzle<2,1,2>(123)", "125"},
      {"Swizzle<1,2,-2>(5)", "21"},
      /* the rest of the language */
      {"(4,2):(1,16)(5)", "17"},
      {"(_4,_2):(_1,_16)", "(4,2):(1,16)"},
      {"( 4 , ( 2 ,3 ) ) : ( 2 , ( 1 , 8 ) )", "(4,(2,3)):(2,(1,8))"},
      {"size((4,(2,3)):(2,(1,8)))", "24"},
      {"cosize((4,(2,3)):(2,(1,8)))", "24"},
      {"rank((4,(2,3)):(2,(1,8)))", "2"},
      {"depth((4,(2,3)):(2,(1,8)))", "2"},
      {"depth(24:1)", "0"},
      {"make_layout(4:1, (2,3):(4,8))", "(4,(2,3)):(1,(4,8))"},
      {"(4):(2)", "4:2"},
      {"24:1 o 4:2", "4:2"},
      {"Swizzle<3,4,3> o (8,64):(64,1)", "Swizzle<3,4,3> o (8,64):(64,1)"},
      {"(Swizzle<3,4,3> o (8,64):(64,1))(17)", "66"},
      {"(Swizzle<3,4,3> o (8,64):(64,1))(42)", "149"},
      {"Sw<3,4,3> o 2048:1 o 16:8", "Swizzle<3,4,3> o 16:8"},
      {"composition((8,64):(64,1), (4,8))", "(4,8):(64,1)"},
      {"(3:3, (2,4):(1,8))", "(3:3,(2,4):(1,8))"},
      {"(2,3)", "(2,3)"},
  };
  int n = (int)(sizeof cases / sizeof cases[0]);
  TC_CHECK(n >= 15, "%d pairs", n);
  for (int i = 0; i < n; i++) {
    tc_cute_error e;
    const char *got = eval_str(cases[i][0], &e);
    TC_CHECK(got && strcmp(got, cases[i][1]) == 0, "%s = %s, expected %s%s%s", cases[i][0], got ? got : "(error)",
             cases[i][1], got ? "" : ": ", got ? "" : e.msg);
  }
}

/* The layouts of the documentation as functions, value by value. */
static void test_eval_and_queries(void) {
  tc_cute l = parse_layout("(4,(2,3)):(2,(1,8))");
  TC_CHECK_EQ_INT(tc_cute_size(&l), 24);
  TC_CHECK_EQ_INT(tc_cute_cosize(&l), 24);
  TC_CHECK_EQ_INT(tc_cute_rank(&l), 2);
  TC_CHECK_EQ_INT(tc_cute_depth(&l), 2);
  TC_CHECK_EQ_INT(tc_cute_leaves(&l), 3);
  /* colex: i = a + 4 (b + 2 c) -> 2a + b + 8c */
  for (int64_t i = 0; i < 24; i++) {
    int64_t a = i % 4, b = (i / 4) % 2, c = i / 8;
    TC_CHECK(tc_cute_eval(&l, i) == 2 * a + b + 8 * c, "L(%lld) = %lld", (long long)i, (long long)tc_cute_eval(&l, i));
  }
  tc_cute_free(&l);
  l = parse_layout("(8,64):(64,1)");
  TC_CHECK_EQ_INT(tc_cute_eval(&l, 3 + 8 * 10), 3 * 64 + 10);
  tc_cute_free(&l);
}

/* ----------------------------------------------------- random properties */

static void test_random_coalesce_roundtrip(void) {
  rng_state = 101;
  for (int it = 0; it < 600; it++) {
    tc_cute a = rand_any(0, false);
    tc_cute c = tc_cute_coalesce(&a);
    char *sa = str(&a), *sc = str(&c);
    TC_CHECK(tc_cute_size(&c) == tc_cute_size(&a), "coalesce(%s) = %s changes the size", sa, sc);
    TC_CHECK(tc_cute_depth(&c) <= 1, "coalesce(%s) = %s has depth > 1", sa, sc);
    TC_CHECK(same_function(&a, &c, tc_cute_size(&a)), "coalesce(%s) = %s is another function", sa, sc);
    /* print -> parse */
    tc_cute b = parse_layout(sa);
    TC_CHECK(tc_cute_equal(&a, &b) || a.n == 1, "%s does not round-trip", sa);
    free(sa), free(sc);
    tc_cute_free(&a), tc_cute_free(&b), tc_cute_free(&c);
  }
}

/* R(i) == A(B(i)) wherever B(i) lies in A's domain, for injective B (the
 * composition of CuTe distributes over B's modes, which needs B's modes to
 * cover disjoint digits of A's coordinates). */
static void test_random_composition(void) {
  rng_state = 202;
  int defined = 0, total = 1000;
  int64_t points = 0;
  for (int it = 0; it < total; it++) {
    bool pow2 = rnd(10) < 7;
    tc_cute a = rnd(2) ? rand_injective(pow2) : rand_any(0, pow2), b = rand_injective(pow2);
    if (rnd(2)) { /* a larger A */
      tc_cute two[2] = {a, rnd(2) ? rand_injective(pow2) : rand_any(1, pow2)};
      a = tc_cute_tuple(2, two);
      if (rnd(2)) assign_injective(&a, pow2);
    }
    for (int tries = 0; tries < 30 && tc_cute_cosize(&b) > tc_cute_size(&a); tries++) {
      tc_cute_free(&b); /* prefer a B whose image lies in A's domain */
      b = rand_injective(pow2);
    }
    tc_cute r;
    TC_STR_LOCAL(err);
    char *sa = str(&a), *sb = str(&b);
    if (tc_cute_composition(&a, &b, &r, &err) == 0) {
      defined++;
      char *sr = str(&r);
      TC_CHECK(tc_cute_size(&r) == tc_cute_size(&b), "composition(%s, %s) = %s: size", sa, sb, sr);
      if (b.n > 0) TC_CHECK(tc_cute_rank(&r) == tc_cute_rank(&b), "composition(%s, %s) = %s: rank", sa, sb, sr);
      int bad = 0;
      for (int64_t i = 0; i < tc_cute_size(&b) && bad < 3; i++) {
        int64_t bi = tc_cute_eval(&b, i);
        if (bi >= tc_cute_size(&a)) continue;
        points++;
        int64_t want = tc_cute_eval(&a, bi), got = tc_cute_eval(&r, i);
        if (want != got) bad++;
        TC_CHECK(want == got, "composition(%s, %s) = %s: R(%lld) = %lld, A(B(i)) = %lld", sa, sb, sr, (long long)i,
                 (long long)got, (long long)want);
      }
      free(sr);
      tc_cute_free(&r);
    } else {
      TC_CHECK(strstr(tc_str_cstr(&err), "not defined"), "composition(%s, %s) fails with '%s'", sa, sb, tc_str_cstr(&err));
    }
    free(sa), free(sb);
    tc_cute_free(&a), tc_cute_free(&b);
  }
  TC_CHECK(defined >= total / 2 && points >= 4000, "only %d of %d random compositions defined, %lld points", defined,
           total, (long long)points);
  printf("  composition: %d of %d random pairs defined, %lld points checked\n", defined, total, (long long)points);
}

/* Is l a bijection of [0, size) onto [0, size)? */
static bool is_bijection(const tc_cute *l) {
  int64_t n = tc_cute_size(l);
  if (n > (1 << 20)) return false;
  char *seen = calloc((size_t)n, 1);
  bool ok = true;
  for (int64_t i = 0; i < n && ok; i++) {
    int64_t v = tc_cute_eval(l, i);
    if (v < 0 || v >= n || seen[v]) ok = false;
    else seen[v] = 1;
  }
  free(seen);
  return ok;
}

static void test_random_complement_inverse(void) {
  rng_state = 303;
  for (int it = 0; it < 600; it++) {
    tc_cute l = rand_injective(rnd(2));
    char *sl = str(&l);
    TC_STR_LOCAL(err);
    int64_t cot = rnd(3) == 0 ? 1 : tc_cute_cosize(&l) * (1 + rnd(3));
    tc_cute c, lc, li, ri;
    TC_REQUIRE(tc_cute_complement(&l, cot, &c, &err) == 0, "complement(%s, %lld): %s", sl, (long long)cot, tc_str_cstr(&err));
    lc = tc_cute_pair(&l, &c);
    char *sc = str(&c);
    TC_CHECK(is_bijection(&lc), "(%s, complement = %s) is not a bijection onto [0, size)", sl, sc);
    TC_CHECK(tc_cute_size(&lc) >= cot, "complement(%s, %lld) = %s is too small", sl, (long long)cot, sc);
    /* the complement is ordered: strictly increasing values */
    for (int64_t i = 1; i < tc_cute_size(&c); i++)
      TC_CHECK(tc_cute_eval(&c, i) > tc_cute_eval(&c, i - 1), "complement %s is not ordered", sc);
    TC_REQUIRE(tc_cute_left_inverse(&l, &li, &err) == 0, "left_inverse(%s): %s", sl, tc_str_cstr(&err));
    for (int64_t i = 0; i < tc_cute_size(&l); i++)
      TC_CHECK(tc_cute_eval(&li, tc_cute_eval(&l, i)) == i, "left_inverse(%s)(L(%lld)) != %lld", sl, (long long)i, (long long)i);
    TC_REQUIRE(tc_cute_right_inverse(&l, &ri, &err) == 0, "right_inverse(%s): %s", sl, tc_str_cstr(&err));
    for (int64_t i = 0; i < tc_cute_size(&ri); i++)
      TC_CHECK(tc_cute_eval(&l, tc_cute_eval(&ri, i)) == i, "L(right_inverse(%s)(%lld)) != %lld", sl, (long long)i, (long long)i);
    /* a bijection's right inverse covers everything */
    if (is_bijection(&l)) TC_CHECK(tc_cute_size(&ri) == tc_cute_size(&l), "right_inverse of the bijection %s is short", sl);
    free(sl), free(sc);
    tc_cute_free(&l), tc_cute_free(&c), tc_cute_free(&lc), tc_cute_free(&li), tc_cute_free(&ri);
  }
}

static void test_random_divide_product(void) {
  rng_state = 404;
  int divided = 0, multiplied = 0;
  for (int it = 0; it < 500; it++) {
    tc_cute a = rand_any(0, true), b = rand_injective(true);
    char *sa = str(&a), *sb = str(&b);
    TC_STR_LOCAL(err);
    tc_cute r, c, bc, want;
    /* logical_divide(A, B) == A o (B, complement(B, size(A))) as a function,
     * with B's elements first */
    if (tc_cute_logical_divide(&a, &b, &r, &err) == 0) {
      divided++;
      TC_REQUIRE(tc_cute_complement(&b, tc_cute_size(&a), &c, &err) == 0, "%s", tc_str_cstr(&err));
      bc = tc_cute_pair(&b, &c);
      TC_CHECK(tc_cute_rank(&r) == 2, "logical_divide(%s, %s) has rank %d", sa, sb, tc_cute_rank(&r));
      TC_CHECK(tc_cute_size(&r) == tc_cute_size(&bc), "logical_divide(%s, %s): size", sa, sb);
      for (int64_t i = 0; i < tc_cute_size(&r); i++) {
        int64_t x = tc_cute_eval(&bc, i);
        if (x >= tc_cute_size(&a)) continue; /* past A's domain */
        TC_CHECK(tc_cute_eval(&r, i) == tc_cute_eval(&a, x), "logical_divide(%s, %s)(%lld)", sa, sb, (long long)i);
      }
      tc_cute_free(&r), tc_cute_free(&c), tc_cute_free(&bc);
    }
    /* logical_product(A, B): mode 0 is A; size(A) * size(B); injective
     * when A and B are */
    tc_cute_free(&a);
    a = rand_injective(true);
    free(sa);
    sa = str(&a);
    if (tc_cute_logical_product(&a, &b, &r, &err) == 0) {
      multiplied++;
      TC_CHECK(tc_cute_equal(&r.m[0], &a), "logical_product(%s, %s): mode 0", sa, sb);
      TC_CHECK(tc_cute_size(&r) == tc_cute_size(&a) * tc_cute_size(&b), "logical_product(%s, %s): size", sa, sb);
      int64_t n = tc_cute_size(&r), cs = tc_cute_cosize(&r);
      char *seen = calloc((size_t)cs, 1);
      bool inj = true;
      for (int64_t i = 0; i < n; i++) {
        int64_t v = tc_cute_eval(&r, i);
        if (seen[v]) inj = false;
        seen[v] = 1;
      }
      free(seen);
      TC_CHECK(inj, "logical_product(%s, %s) is not injective", sa, sb);
      /* mode 1 is complement(A, size(A) * cosize(B)) o B */
      TC_REQUIRE(tc_cute_complement(&a, tc_cute_size(&a) * tc_cute_cosize(&b), &c, &err) == 0, "%s", tc_str_cstr(&err));
      TC_REQUIRE(tc_cute_composition(&c, &b, &want, &err) == 0, "%s", tc_str_cstr(&err));
      TC_CHECK(same_function(&r.m[1], &want, tc_cute_size(&b)), "logical_product(%s, %s): mode 1", sa, sb);
      tc_cute_free(&r), tc_cute_free(&c), tc_cute_free(&want);
    }
    free(sa), free(sb);
    tc_cute_free(&a), tc_cute_free(&b);
  }
  TC_CHECK(divided >= 250 && multiplied >= 250, "defined: %d divides, %d products of 500", divided, multiplied);
  printf("  logical_divide: %d, logical_product: %d of 500 random pairs defined and checked\n", divided, multiplied);
}

/* Not defined: said so, with the reason. */
static void test_undefined(void) {
  static const char *const cases[][2] = {
      {"composition((4,4):(4,1), 6:1)", "shape divisibility"},
      {"composition((2,4):(1,10), 2:3)", "stride divisibility"},
      {"complement((2,2):(1,1))", "not injective"},
      {"left_inverse((2,2):(1,1))", "not injective"},
      {"logical_divide((4,2):(1,4), (2,2,2))", "the tiler has 3 modes"},
      {"24:1(24)", "outside the layout's domain"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tc_cute_error e;
    const char *got = eval_str(cases[i][0], &e);
    TC_CHECK(!got && e.code == TC_CUTE_EUNDEF && strstr(e.msg, cases[i][1]), "%s: got %s / %d '%s'", cases[i][0],
             got ? got : "(error)", e.code, e.msg);
  }
}

/* ------------------------------------------------------------ parse errors */

static void test_parse_errors(void) {
  static const struct {
    const char *text;
    int column;
    const char *msg;
  } cases[] = {
      {"(4,2):(1,16", 12, "expected ')'"},
      {"(4,2:(1,16)", 6, "stride must have the shape's structure"},
      {"(4,2):(1,16,3)", 12, "more entries than the shape"},
      {"(4,2):(1)", 9, "expected ','"},
      {"foo(1)", 1, "unknown function 'foo'"},
      {"coalesce(1, 2)", 1, "coalesce takes 1 argument, got 2"},
      {"Swizzle<3,4>(1)", 12, "expected ','"},
      {"Swizzle<3,4,1>", 1, "|S| >= B"},
      {"(4,2):(1,16) junk", 14, "unexpected 'junk'"},
      {"", 1, "expected an integer, a layout"},
      {"complement((2,2):(1,6), 4:1)", 25, "argument 2 must be an integer"},
      {"coalesce((4,2))", 10, "must be a layout"},
      {"0:1", 1, "at least 1"},
      {"(4,-2):(1,4)", 4, "negative"},
      {"24:1 o", 7, "expected an integer"},
      {"((4,2):(1,4)):(1,2)", 14, "shape before ':'"},
      {"make_layout(Swizzle<1,1,1>)", 13, "got a swizzle"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tc_cute_error e;
    const char *got = eval_str(cases[i].text, &e);
    TC_CHECK(!got, "'%s' parsed as %s", cases[i].text, got);
    if (got) continue;
    TC_CHECK(e.code == TC_CUTE_ESYNTAX, "'%s': code %d", cases[i].text, e.code);
    TC_CHECK(e.column == cases[i].column && strstr(e.msg, cases[i].msg), "'%s': column %d '%s', expected column %d '%s'",
             cases[i].text, e.column, e.msg, cases[i].column, cases[i].msg);
  }
  /* the formatted message: column, the text, a caret under the column */
  tc_cute_error e;
  TC_REQUIRE(!eval_str("(4,2):(1,16", &e), "parsed");
  tc_str s;
  tc_str_init(&s);
  tc_cute_error_format(&s, "(4,2):(1,16", &e);
  TC_CHECK_STR(tc_str_cstr(&s), "column 12: expected ')' to close the stride tuple, found the end of the expression\n"
                                "  (4,2):(1,16\n"
                                "             ^");
  tc_str_free(&s);
}

/* --------------------------------------------------------------- swizzles */

static int64_t swz_ref(int b, int m, int s, int64_t x) { /* CuTe's definition, bit by bit */
  int64_t r = x;
  for (int k = 0; k < b; k++) {
    int src = m + (s > 0 ? s : 0) + k, dst = src - s;
    if ((x >> src) & 1) r ^= (int64_t)1 << dst;
  }
  return r;
}

static void test_swizzle_values(void) {
  TC_STR_LOCAL(err);
  for (int b = 0; b <= 3; b++)
    for (int m = 0; m <= 4; m++)
      for (int s = -4; s <= 4; s++) {
        if (tc_cute_swizzle_check(b, m, s, &err)) {
          TC_CHECK(abs(s) < b, "Swizzle<%d,%d,%d> refused: %s", b, m, s, tc_str_cstr(&err));
          continue;
        }
        int64_t period = (int64_t)1 << (b + m + abs(s));
        char *seen = calloc((size_t)period, 1);
        for (int64_t x = 0; x < period; x++) {
          int64_t y = tc_cute_swizzle(b, m, s, x);
          TC_CHECK(y == swz_ref(b, m, s, x), "Swizzle<%d,%d,%d>(%lld) = %lld", b, m, s, (long long)x, (long long)y);
          TC_CHECK(tc_cute_swizzle(b, m, s, y) == x, "Swizzle<%d,%d,%d> is not an involution at %lld", b, m, s, (long long)x);
          if (y >= 0 && y < period) seen[y] = 1;
        }
        for (int64_t x = 0; x < period; x++) TC_CHECK(seen[x], "Swizzle<%d,%d,%d> is not a permutation", b, m, s);
        free(seen);
      }
  /* the 128-byte TMA swizzle on bytes: 16-byte chunk ^= row % 8 */
  for (int64_t off = 0; off < 2048; off++) {
    int64_t row = off / 128, byte = off % 128;
    TC_CHECK(tc_cute_swizzle(3, 4, 3, off) == row * 128 + (((byte / 16) ^ (row % 8)) * 16) + byte % 16, "at %lld",
             (long long)off);
  }
}

/* ---------------------------------------------------- tiles and banks */

static bool parse_tile(const char *text, tc_tile *t) {
  tc_cute_error e;
  int rc = tc_tile_parse(text, t, &e);
  if (rc) fprintf(stderr, "tile '%s': column %d: %s\n", text, e.column, e.msg);
  return rc == 0;
}

static int64_t ways(const tc_tile *t, int elem, tc_access a, int vec, int64_t *wave) {
  tc_bank_opts o = {elem, a, vec};
  tc_bank_report r;
  TC_STR_LOCAL(err);
  if (tc_bank_analyze(t, &o, &r, &err)) {
    fprintf(stderr, "bank analysis: %s\n", tc_str_cstr(&err));
    return -1;
  }
  int64_t w = r.max_ways;
  if (wave) *wave = r.wavefronts;
  tc_bank_report_free(&r);
  return w;
}

/* The 128-byte swizzle of an [8 rows, 64 bf16] tile in both notations. */
static void test_swizzle_128b_tile(void) {
  const char *forms[] = {"[8,64] split(1,8) xor(0,1) merge(1,2)", "Swizzle<3,3,3> o (8,64):(64,1)",
                         "[8,64] merge(0,1) swizzle(0,3,3,3)"};
  tc_tile t[3];
  for (int i = 0; i < 3; i++) TC_REQUIRE(parse_tile(forms[i], &t[i]), "%s", forms[i]);
  TC_CHECK(t[0].form == TC_TILE_XFORM && t[1].form == TC_TILE_CUTE, "forms");
  for (int i = 0; i < 3; i++) {
    TC_CHECK(t[i].rows == 8 && t[i].cols == 64 && t[i].size == 512, "%s: %lld x %lld", forms[i], (long long)t[i].rows,
             (long long)t[i].cols);
    TC_CHECK(t[i].bijective && t[i].cosize == 512, "%s: bijective %d cosize %lld", forms[i], t[i].bijective,
             (long long)t[i].cosize);
    for (int64_t r = 0; r < 8; r++)
      for (int64_t c = 0; c < 64; c++) {
        int64_t want = r * 64 + (((c / 8) ^ r) * 8) + c % 8;
        TC_CHECK(t[i].off[r * 64 + c] == want, "%s: (%lld,%lld) at %lld, want %lld", forms[i], (long long)r,
                 (long long)c, (long long)t[i].off[r * 64 + c], (long long)want);
      }
    int64_t wave;
    /* rows: 32 bf16 = 64 bytes per access */
    TC_CHECK(ways(&t[i], 2, TC_ACCESS_ROW, 1, &wave) == 1 && wave == 16, "%s: rows conflict", forms[i]);
    /* columns of 16-byte chunks (ldmatrix-like): 8 threads per phase read
     * the same chunk column of 8 rows */
    TC_CHECK(ways(&t[i], 2, TC_ACCESS_COL, 8, &wave) == 1 && wave == 8, "%s: chunk columns conflict", forms[i]);
    TC_CHECK(ways(&t[i], 2, TC_ACCESS_ROW, 8, NULL) == 1, "%s: chunk rows conflict", forms[i]);
  }
  TC_CHECK(strstr(t[0].expr, "^") != NULL, "offset expression: %s", t[0].expr);
  TC_CHECK_STR(t[1].canon, "Swizzle<3,3,3> o (8,64):(64,1)");
  for (int i = 0; i < 3; i++) tc_tile_free(&t[i]);

  /* without the swizzle the chunk columns are 8-way conflicts */
  tc_tile plain;
  TC_REQUIRE(parse_tile("[8,64]", &plain), "plain");
  int64_t wave;
  TC_CHECK(ways(&plain, 2, TC_ACCESS_COL, 8, &wave) == 8 && wave == 64, "plain chunk columns: %lld-way",
           (long long)ways(&plain, 2, TC_ACCESS_COL, 8, NULL));
  TC_CHECK(ways(&plain, 2, TC_ACCESS_ROW, 1, NULL) == 1, "plain rows");
  TC_CHECK_STR(plain.expr, "r * 64 + c");
  tc_tile_free(&plain);
}

static void test_tiles_more(void) {
  tc_tile t;
  /* the transpose classic: a float column of a 32 x 32 tile is a 32-way
   * conflict; padding a column makes it conflict-free, not bijective */
  TC_REQUIRE(parse_tile("[32,32]", &t), "32x32");
  TC_CHECK_EQ_INT(ways(&t, 4, TC_ACCESS_COL, 1, NULL), 32);
  TC_CHECK_EQ_INT(ways(&t, 4, TC_ACCESS_ROW, 1, NULL), 1);
  tc_tile_free(&t);
  TC_REQUIRE(parse_tile("[32,32] pad(1,0,1)", &t), "pad");
  TC_CHECK_EQ_INT(ways(&t, 4, TC_ACCESS_COL, 1, NULL), 1);
  TC_CHECK(t.injective && !t.bijective && t.cosize == 32 * 33 - 1 && t.alloc == 32 * 33, "pad: cosize %lld alloc %lld",
           (long long)t.cosize, (long long)t.alloc);
  tc_tile_free(&t);
  /* the same in CuTe form */
  TC_REQUIRE(parse_tile("(32,32):(33,1)", &t), "padded cute");
  TC_CHECK_EQ_INT(ways(&t, 4, TC_ACCESS_COL, 1, NULL), 1);
  TC_CHECK(!t.bijective && t.cosize == 1055, "cosize %lld", (long long)t.cosize);
  tc_tile_free(&t);
  /* XOR swizzle of a 32 x 32 float tile: conflict-free both ways */
  TC_REQUIRE(parse_tile("[32,32] xor(0,1)", &t), "xor");
  TC_CHECK(t.bijective, "xor bijective");
  TC_CHECK_EQ_INT(ways(&t, 4, TC_ACCESS_COL, 1, NULL), 1);
  TC_CHECK_EQ_INT(ways(&t, 4, TC_ACCESS_ROW, 1, NULL), 1);
  tc_tile_free(&t);
  /* reorder: column-major allocation */
  TC_REQUIRE(parse_tile("[4,8] reorder(1,0)", &t), "reorder");
  for (int64_t r = 0; r < 4; r++)
    for (int64_t c = 0; c < 8; c++) TC_CHECK(t.off[r * 8 + c] == c * 4 + r, "reorder (%lld,%lld)", (long long)r, (long long)c);
  tc_tile_free(&t);
  /* a split that does not divide pads the allocation */
  TC_REQUIRE(parse_tile("[8,10] split(1,4)", &t), "split");
  TC_CHECK(t.alloc == 96 && t.injective && !t.bijective, "alloc %lld", (long long)t.alloc);
  tc_tile_free(&t);
  /* a non-injective layout: broadcast rows */
  TC_REQUIRE(parse_tile("(4,8):(0,1)", &t), "broadcast");
  TC_CHECK(!t.injective && !t.bijective && t.cosize == 8, "broadcast");
  TC_CHECK_EQ_INT(ways(&t, 4, TC_ACCESS_COL, 1, NULL), 1); /* same word: a broadcast, no conflict */
  tc_tile_free(&t);
  /* rank 1 and rank 3 */
  TC_REQUIRE(parse_tile("64:2", &t), "rank 1");
  TC_CHECK(t.rows == 1 && t.cols == 64 && t.cosize == 127, "rank 1");
  TC_CHECK_EQ_INT(ways(&t, 4, TC_ACCESS_ROW, 1, NULL), 2);
  tc_tile_free(&t);
  TC_REQUIRE(parse_tile("[2,3,4]", &t), "rank 3");
  TC_CHECK(t.rows == 2 && t.cols == 12 && t.bijective && t.off[1 * 12 + 5] == 17, "rank 3");
  TC_CHECK_STR(t.vars, "i0, i1, i2");
  tc_tile_free(&t);
  /* 8-byte and 16-byte elements go in phases of 16 and 8 threads */
  TC_REQUIRE(parse_tile("[8,32]", &t), "f64");
  int64_t wave;
  TC_CHECK(ways(&t, 8, TC_ACCESS_ROW, 1, &wave) == 1 && wave == 16, "f64 rows: %lld wavefronts", (long long)wave);
  TC_CHECK(ways(&t, 16, TC_ACCESS_ROW, 1, &wave) == 1 && wave == 32, "16-byte rows: %lld wavefronts", (long long)wave);
  TC_CHECK_EQ_INT(ways(&t, 16, TC_ACCESS_COL, 1, NULL), 8);
  tc_tile_free(&t);
}

static void test_tile_errors(void) {
  static const struct {
    const char *text;
    int code, column;
    const char *msg;
  } cases[] = {
      {"[8,64", TC_CUTE_ESYNTAX, 6, "expected ']'"},
      {"[8,64] split(2,8)", TC_CUTE_ESYNTAX, 8, "no axis 2"},
      {"[8,64] frob(1)", TC_CUTE_ESYNTAX, 8, "unknown transform 'frob'"},
      {"[0,4]", TC_CUTE_ESYNTAX, 2, "at least 1"},
      {"[8,64] xor(1,0)", TC_CUTE_EUNDEF, 8, "power of two"},
      {"[8,64] merge(0,1) swizzle(0,3,4,3)", TC_CUTE_EUNDEF, 19, "multiple of 1024"},
      {"[8,64] split(1,8", TC_CUTE_ESYNTAX, 17, "expected ')'"},
      {"[8,64] reorder(0)", TC_CUTE_ESYNTAX, 8, "permutation of all 2 axes"},
      {"[8,64] pad(0,-1,0)", TC_CUTE_ESYNTAX, 8, "at least 0"},
      {"(8,64):(64,1", TC_CUTE_ESYNTAX, 13, "expected ')'"},
      {"Swizzle<3,3,3>", TC_CUTE_ESYNTAX, 1, "got a swizzle"},
      {"(4:1, 8:1)", TC_CUTE_ESYNTAX, 1, "got a tuple"},
      {"(4096,2048):(1,4096)", TC_CUTE_ESYNTAX, 1, "at most"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tc_tile t;
    tc_cute_error e;
    int rc = tc_tile_parse(cases[i].text, &t, &e);
    TC_CHECK(rc == cases[i].code && e.column == cases[i].column && strstr(e.msg, cases[i].msg),
             "'%s': rc %d column %d '%s'; expected %d, column %d, '%s'", cases[i].text, rc, e.column, e.msg,
             cases[i].code, cases[i].column, cases[i].msg);
    if (rc == 0) tc_tile_free(&t);
  }
  /* bank options that do not fit the tile */
  tc_tile t;
  TC_REQUIRE(parse_tile("[8,12]", &t), "tile");
  tc_bank_opts o = {4, TC_ACCESS_ROW, 8};
  tc_bank_report r;
  TC_STR_LOCAL(err);
  TC_CHECK(tc_bank_analyze(&t, &o, &r, &err) == -1 && strstr(tc_str_cstr(&err), "--vec 8 must divide"), "err: %s", tc_str_cstr(&err));
  o.vec = 1, o.elem_bytes = 3;
  TC_CHECK(tc_bank_analyze(&t, &o, &r, &err) == -1 && strstr(tc_str_cstr(&err), "--elem-bytes"), "err: %s", tc_str_cstr(&err));
  tc_tile_free(&t);
}

/* CuTe's SM80 16x8x16 mma A fragment: thread (t0 + 4 t1) holds rows t1 and
 * t1 + 8, columns 2 t0 + {0, 1} and + 8. */
static void test_tv_layout(void) {
  tc_tile t;
  tc_cute_error e;
  TC_REQUIRE(tc_tile_parse_tv("((4,8),(2,2,2)):((32,1),(16,8,128))", 16, 16, &t, &e) == 0, "%s", e.msg);
  TC_CHECK(t.threads == 32 && t.values == 8 && t.bijective && t.dup == 0 && t.missing == 0, "tv summary");
  for (int lane = 0; lane < 32; lane++)
    for (int v = 0; v < 8; v++) {
      int row = lane / 4 + ((v >> 1) & 1) * 8, col = (lane % 4) * 2 + (v & 1) + ((v >> 2) & 1) * 8;
      TC_CHECK(t.owner_t[row * 16 + col] == lane && t.owner_v[row * 16 + col] == v, "lane %d value %d at (%d,%d): T%d V%d",
               lane, v, row, col, (int)t.owner_t[row * 16 + col], (int)t.owner_v[row * 16 + col]);
    }
  tc_tile_free(&t);
  /* a layout that covers half the tile twice */
  TC_REQUIRE(tc_tile_parse_tv("(32,4):(1,0)", 8, 8, &t, &e) == 0, "%s", e.msg);
  TC_CHECK(!t.bijective && t.dup == 96 && t.missing == 32, "dup %lld missing %lld", (long long)t.dup, (long long)t.missing);
  tc_tile_free(&t);
  TC_CHECK(tc_tile_parse_tv("32:1", 8, 4, &t, &e) == TC_CUTE_ESYNTAX && strstr(e.msg, "(threads, values)"), "%s", e.msg);
}

static int count(const char *s, const char *sub) {
  int n = 0;
  for (const char *p = strstr(s, sub); p; p = strstr(p + 1, sub)) n++;
  return n;
}

/* Every header line (the <text> elements of the 12 px group under the
 * title) fits the canvas: monospace at 12 px advances 0.6 em = 7.2 px per
 * character, an entity (&lt;) counting as one. */
static void check_header_fits(const char *svg, const char *what) {
  const char *w = strstr(svg, "<svg "), *g = strstr(svg, "<g font-size=\"12\">");
  double width = 0;
  TC_REQUIRE(w && strstr(w, "width=\"") && sscanf(strstr(w, "width=\"") + 7, "%lf", &width) == 1 && g,
             "%s: no canvas width or header group", what);
  const char *end = strstr(g, "</g>");
  int lines = 0;
  for (const char *p = strstr(g, "<text"); p && p < end; p = strstr(p + 1, "<text")) {
    double x = 0;
    TC_REQUIRE(sscanf(p, "<text x=\"%lf\"", &x) == 1, "%s: a header <text> without x", what);
    const char *s = strchr(p, '>') + 1, *e = strstr(s, "</text>");
    int n = 0;
    for (const char *c = s; c < e; c++, n++)
      if (*c == '&') c = strchr(c, ';');
    TC_CHECK(x + 7.2 * n <= width, "%s: a header line of %d characters at x = %.0f runs past the %.0f px canvas",
             what, n, x, width);
    lines++;
  }
  TC_CHECK(lines >= 3, "%s: %d header lines, want the title and at least two", what, lines);
}

static void test_svg(void) {
  tc_tile t;
  TC_REQUIRE(parse_tile("[8,64]", &t), "tile");
  tc_bank_opts o = {2, TC_ACCESS_COL, 8};
  tc_bank_report r;
  TC_STR_LOCAL(err);
  TC_REQUIRE(tc_bank_analyze(&t, &o, &r, &err) == 0, "%s", tc_str_cstr(&err));
  for (int view = 0; view < 2; view++) {
    tc_str s;
    tc_str_init(&s);
    TC_REQUIRE(tc_tile_svg(&s, &t, &o, &r, r.worst, view ? TC_VIEW_ADDRESS : TC_VIEW_LOGICAL, "a <title> & more", &err) == 0, "%s", tc_str_cstr(&err));
    const char *x = tc_str_cstr(&s);
    TC_CHECK(strncmp(x, "<?xml", 5) == 0 && strstr(x, "</svg>\n") && count(x, "<svg") == 1, "document");
    TC_CHECK(count(x, "<g>") + count(x, "<g ") == count(x, "</g>"), "unbalanced <g>");
    TC_CHECK(count(x, "<text") == count(x, "</text>"), "unbalanced <text>");
    TC_CHECK(strstr(x, "a &lt;title&gt; &amp; more") != NULL, "title not escaped");
    TC_CHECK(count(x, "stroke=\"#e00000\"") == 256, "%d conflicting cells outlined, want 256 (32 threads x 8)",
             count(x, "stroke=\"#e00000\""));
    TC_CHECK(count(x, "<rect") >= 512, "cells");
    check_header_fits(x, view ? "[8,64] address view" : "[8,64]");
    tc_str_free(&s);
  }
  tc_bank_report_free(&r);
  tc_tile_free(&t);
  /* a narrow tile whose header is wider than its grid and legend: the
   * conflict line of a 16 x 16 float tile read down its columns is 102
   * characters, 746 px from the margin on, past the 712 px the legend
   * needs */
  TC_REQUIRE(parse_tile("[16,16]", &t), "tile");
  tc_bank_opts o4 = {4, TC_ACCESS_COL, 1};
  TC_REQUIRE(tc_bank_analyze(&t, &o4, &r, &err) == 0, "%s", tc_str_cstr(&err));
  tc_str s4;
  tc_str_init(&s4);
  TC_REQUIRE(tc_tile_svg(&s4, &t, &o4, &r, r.worst, TC_VIEW_LOGICAL, "tilec layout [16,16]", &err) == 0,
             "%s", tc_str_cstr(&err));
  check_header_fits(tc_str_cstr(&s4), "[16,16] column access");
  tc_str_free(&s4);
  tc_bank_report_free(&r);
  tc_tile_free(&t);
  /* 32 distinct bank colours */
  char c[32][16];
  for (int b = 0; b < 32; b++) tc_bank_color(b, c[b], sizeof c[b]);
  for (int a = 0; a < 32; a++)
    for (int b = a + 1; b < 32; b++) TC_CHECK(strcmp(c[a], c[b]) != 0, "banks %d and %d share %s", a, b, c[a]);
}

int main(void) {
  TC_RUN(test_known_pairs);
  TC_RUN(test_eval_and_queries);
  TC_RUN(test_random_coalesce_roundtrip);
  TC_RUN(test_random_composition);
  TC_RUN(test_random_complement_inverse);
  TC_RUN(test_random_divide_product);
  TC_RUN(test_undefined);
  TC_RUN(test_parse_errors);
  TC_RUN(test_swizzle_values);
  TC_RUN(test_swizzle_128b_tile);
  TC_RUN(test_tiles_more);
  TC_RUN(test_tile_errors);
  TC_RUN(test_tv_layout);
  TC_RUN(test_svg);
  TC_MAIN_END();
}
