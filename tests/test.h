/* test.h - the tiny test harness shared by every test program.
 *
 * A test file defines functions `static void test_x(void)` and lists them in
 * main() with TC_RUN(test_x).  TC_CHECK records a failure (with file, line
 * and message) and lets the test go on; TC_REQUIRE returns from the test.
 * TC_MAIN_END prints "N passed, N failed" and returns the exit status;
 * tests/run.sh adds up these lines into the suite's closing line. */
#ifndef TC_TEST_H
#define TC_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tc_test_failed_checks;
static int tc_test_skipping; /* set by TC_SKIP in the running test */
static int tc_tests_passed, tc_tests_failed, tc_tests_skipped;
static const char *tc_test_current;

#define TC_CHECK(cond, ...)                                                  \
  do {                                                                       \
    if (!(cond)) {                                                           \
      tc_test_failed_checks++;                                               \
      fprintf(stderr, "%s:%d: %s: check failed: %s: ", __FILE__, __LINE__,   \
              tc_test_current, #cond);                                       \
      fprintf(stderr, __VA_ARGS__);                                          \
      fputc('\n', stderr);                                                   \
    }                                                                        \
  } while (0)

#define TC_REQUIRE(cond, ...)                                                \
  do {                                                                       \
    if (!(cond)) {                                                           \
      TC_CHECK(cond, __VA_ARGS__);                                           \
      return;                                                                \
    }                                                                        \
  } while (0)

#define TC_CHECK_EQ_INT(a, b)                                                \
  TC_CHECK((long long)(a) == (long long)(b), "%s == %lld, expected %lld", #a, \
           (long long)(a), (long long)(b))

#define TC_CHECK_STR(a, b)                                                   \
  TC_CHECK((a) && strcmp((a), (b)) == 0, "got \"%s\", expected \"%s\"",      \
           (a) ? (a) : "(null)", (b))

/* Marks the running test as skipped, with a reason printed, and returns
 * from it.  A skip never hides a failure: a test that failed checks before
 * it skipped counts as failed. */
#define TC_SKIP(...)                                                         \
  do {                                                                       \
    printf("  skip %s: ", tc_test_current);                                  \
    printf(__VA_ARGS__);                                                     \
    printf("\n");                                                            \
    tc_test_skipping = 1;                                                    \
    return;                                                                  \
  } while (0)

#define TC_RUN(fn)                                                           \
  do {                                                                       \
    tc_test_current = #fn;                                                   \
    tc_test_failed_checks = 0;                                               \
    tc_test_skipping = 0;                                                    \
    fn();                                                                    \
    if (tc_test_failed_checks > 0) {                                         \
      tc_tests_failed++;                                                     \
      printf("  FAIL %s%s\n", #fn,                                           \
             tc_test_skipping ? " (failed checks before it skipped)" : "");  \
    } else if (tc_test_skipping) {                                           \
      tc_tests_skipped++;                                                    \
    } else {                                                                 \
      tc_tests_passed++;                                                     \
    }                                                                        \
    fflush(stdout);                                                          \
  } while (0)

#define TC_MAIN_END()                                                        \
  do {                                                                       \
    printf("%d passed, %d failed, %d skipped\n", tc_tests_passed,            \
           tc_tests_failed, tc_tests_skipped);                               \
    return tc_tests_failed ? 1 : 0;                                          \
  } while (0)

#endif
