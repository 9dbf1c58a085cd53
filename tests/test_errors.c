/* test_errors.c - the internal error convention of src/base/base.h: a
 * failing call fills a tc_str *err with tc_err_set (replacing what it held,
 * as the fixed buffers did), a caller puts context in front with
 * tc_err_prefix, NULL discards the message, and nothing is cut short. */
#include <string.h>

#include "base/base.h"
#include "layout/domain.h"
#include "test.h"

static void test_set_replaces(void) {
  TC_STR_LOCAL(err);
  tc_err_set(&err, "first %d", 1);
  TC_CHECK_STR(tc_str_cstr(&err), "first 1");
  tc_err_set(&err, "second %s", "two");
  TC_CHECK_STR(tc_str_cstr(&err), "second two");
  tc_err_set(&err, "%s", "");
  TC_CHECK_EQ_INT(err.len, 0);
  TC_CHECK_STR(tc_str_cstr(&err), "");
  /* the arguments may be err's own text */
  tc_err_set(&err, "inner");
  tc_err_set(&err, "outer: %s (%s)", tc_str_cstr(&err), tc_str_cstr(&err));
  TC_CHECK_STR(tc_str_cstr(&err), "outer: inner (inner)");
}

static void test_prefix(void) {
  TC_STR_LOCAL(err);
  tc_err_prefix(&err, "nothing yet: ");
  TC_CHECK_STR(tc_str_cstr(&err), "nothing yet: ");
  tc_err_set(&err, "the cause");
  tc_err_prefix(&err, "mode %d: ", 1);
  tc_err_prefix(&err, "%s: ", "tc_split");
  TC_CHECK_STR(tc_str_cstr(&err), "tc_split: mode 1: the cause");
}

static void test_null_discards(void) {
  tc_err_set(NULL, "dropped %d", 1);
  tc_err_prefix(NULL, "dropped %d", 2);
  tc_dgraph g;
  tc_dg_init(&g);
  int a = tc_dg_root(&g, 12, 0), o = -1, i = -1;
  TC_CHECK_EQ_INT(tc_dg_split(&g, a, 0, 1, &o, &i, NULL), -1);
  tc_dg_free(&g);
}

/* 5000 characters through two prefixes: the fixed buffers (256 to 4096
 * bytes) cut such a message; the tc_str keeps every character. */
static void test_long_message(void) {
  char *body = tc_xmalloc(5001);
  for (int k = 0; k < 5000; k++) body[k] = (char)('a' + k % 26);
  body[5000] = 0;
  TC_STR_LOCAL(err);
  tc_err_set(&err, "%s", body);
  tc_err_prefix(&err, "inner: ");
  tc_err_prefix(&err, "outer: ");
  TC_CHECK_EQ_INT(err.len, 5000 + strlen("outer: inner: "));
  TC_CHECK(strncmp(tc_str_cstr(&err), "outer: inner: ", 14) == 0, "%.40s", tc_str_cstr(&err));
  TC_CHECK(strcmp(tc_str_cstr(&err) + 14, body) == 0, "the body changed");
  free(body);
}

/* A layer's message, whole and with the caller's context in front: the
 * domain graph refuses a split factor of 0. */
static void test_layer_message(void) {
  tc_dgraph g;
  tc_dg_init(&g);
  int a = tc_dg_root(&g, 12, 0), o = -1, i = -1;
  TC_STR_LOCAL(err);
  TC_CHECK_EQ_INT(tc_dg_split(&g, a, 0, 1, &o, &i, &err), -1);
  TC_CHECK(err.len > 0, "no message");
  char *alone = tc_xstrdup(tc_str_cstr(&err));
  tc_err_prefix(&err, "pad: ");
  TC_CHECK(strncmp(tc_str_cstr(&err), "pad: ", 5) == 0 && strcmp(tc_str_cstr(&err) + 5, alone) == 0, "%s",
           tc_str_cstr(&err));
  free(alone);
  tc_dg_free(&g);
}

int main(void) {
  TC_RUN(test_set_replaces);
  TC_RUN(test_prefix);
  TC_RUN(test_null_discards);
  TC_RUN(test_long_message);
  TC_RUN(test_layer_message);
  TC_MAIN_END();
}
