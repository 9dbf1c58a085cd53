/* test_harness.c - checks of the test harness itself (tests/test.h): how
 * TC_RUN counts a test that passes, fails, skips, or fails and then
 * skips.  A skip must never hide a failure.  The harness's counters are
 * saved, the sample tests run through TC_RUN, the counts compared, and the
 * counters restored, so the samples' deliberate failures do not count;
 * their output (FAIL and skip lines, check messages) goes to /dev/null so
 * that it cannot be mistaken for the suite's own. */
#include <fcntl.h>
#include <unistd.h>

#include "test.h"

static void sample_pass(void) { TC_CHECK(1 + 1 == 2, "arithmetic"); }
static void sample_fail(void) {
  TC_CHECK(1 + 1 == 3, "deliberate failure");
}
static void sample_skip(void) { TC_SKIP("deliberate skip of a sample test"); }
static void sample_fail_then_skip(void) {
  TC_CHECK(0, "deliberate failure before a skip");
  TC_SKIP("deliberate skip after a failed check");
}

typedef struct { int passed, failed, skipped; } counts;

/* The harness's state, saved around a sample. */
typedef struct {
  int passed, failed, skipped, checks, out, err;
  const char *current;
} saved;

static saved sample_begin(void) {
  saved s = {tc_tests_passed, tc_tests_failed, tc_tests_skipped, tc_test_failed_checks, -1, -1,
             tc_test_current};
  tc_tests_passed = tc_tests_failed = tc_tests_skipped = 0;
  fflush(stdout), fflush(stderr);
  int null = open("/dev/null", O_WRONLY);
  if (null >= 0) {
    s.out = dup(1), s.err = dup(2);
    dup2(null, 1), dup2(null, 2);
    close(null);
  }
  return s;
}

static counts sample_end(saved s) {
  fflush(stdout), fflush(stderr);
  if (s.out >= 0) dup2(s.out, 1), close(s.out);
  if (s.err >= 0) dup2(s.err, 2), close(s.err);
  counts c = {tc_tests_passed, tc_tests_failed, tc_tests_skipped};
  tc_tests_passed = s.passed, tc_tests_failed = s.failed, tc_tests_skipped = s.skipped;
  tc_test_failed_checks = s.checks, tc_test_current = s.current, tc_test_skipping = 0;
  return c;
}

/* Runs one sample through TC_RUN and gives how the harness counted it. */
#define RUN_SAMPLE(fn, out)                                                  \
  do {                                                                       \
    saved s_ = sample_begin();                                               \
    TC_RUN(fn);                                                              \
    out = sample_end(s_);                                                    \
  } while (0)

static void check_counts(counts c, int passed, int failed, int skipped, const char *what) {
  TC_CHECK(c.passed == passed && c.failed == failed && c.skipped == skipped,
           "%s: counted %d passed, %d failed, %d skipped; expected %d, %d, %d", what, c.passed,
           c.failed, c.skipped, passed, failed, skipped);
}

static void test_counting(void) {
  counts c;
  RUN_SAMPLE(sample_pass, c);
  check_counts(c, 1, 0, 0, "a passing test");
  RUN_SAMPLE(sample_fail, c);
  check_counts(c, 0, 1, 0, "a failing test");
  RUN_SAMPLE(sample_skip, c);
  check_counts(c, 0, 0, 1, "a skipped test");
  RUN_SAMPLE(sample_fail_then_skip, c);
  check_counts(c, 0, 1, 0, "a test that failed a check, then skipped");
}

/* A skip in one test does not leak into the next one. */
static void test_skip_does_not_leak(void) {
  counts c;
  RUN_SAMPLE(sample_skip, c);
  RUN_SAMPLE(sample_pass, c);
  check_counts(c, 1, 0, 0, "a passing test after a skipped one");
}

int main(void) {
  TC_RUN(test_counting);
  TC_RUN(test_skip_does_not_leak);
  TC_MAIN_END();
}
