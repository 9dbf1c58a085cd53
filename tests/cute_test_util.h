/* cute_test_util.h - what the CuTe layout tests share: a seeded random
 * generator, random layouts (any strides, or injective ones), and
 * evaluating expressions to text or to a layout. */
#ifndef TC_CUTE_TEST_UTIL_H
#define TC_CUTE_TEST_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout/cute.h"

static uint64_t rng_state;

static inline uint64_t rnd64(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static inline int rnd(int n) { return n <= 1 ? 0 : (int)(rnd64() % (uint64_t)n); }

/* Evaluates text; returns the printed result (static buffer) or NULL with
 * the error in *e. */
static inline const char *eval_str(const char *text, tc_cute_error *e) {
  static char buf[1024];
  tc_cute_value v;
  if (tc_cute_eval_expr(text, &v, e) != TC_CUTE_OK) return NULL;
  tc_str s;
  tc_str_init(&s);
  tc_cute_value_print(&s, &v);
  snprintf(buf, sizeof buf, "%s", tc_str_cstr(&s));
  tc_str_free(&s);
  tc_cute_value_free(&v);
  return buf;
}

static inline tc_cute parse_layout(const char *text) {
  tc_cute_value v;
  tc_cute_error e;
  tc_cute l = tc_cute_leaf(1, 0);
  if (tc_cute_eval_expr(text, &v, &e) == TC_CUTE_OK && v.kind == TC_CV_LAYOUT) {
    l = tc_cute_copy(&v.l);
  } else {
    fprintf(stderr, "parse_layout(%s) failed: %s\n", text, e.msg);
  }
  if (e.code == TC_CUTE_OK) tc_cute_value_free(&v);
  return l;
}

static const int SHAPES[] = {1, 2, 2, 3, 4, 4, 6, 8};
static const int POW2[] = {1, 2, 2, 4, 4, 8};

/* A random shape tree with random strides (possibly overlapping). */
static inline tc_cute rand_any(int depth, bool pow2) {
  if (depth < 2 && rnd(10) < 3) {
    int n = 2 + rnd(2);
    tc_cute m[3];
    for (int i = 0; i < n; i++) m[i] = rand_any(depth + 1, pow2);
    return tc_cute_tuple(n, m);
  }
  static const int strides[] = {0, 1, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32};
  static const int pstrides[] = {0, 1, 1, 2, 4, 8, 16, 32};
  return pow2 ? tc_cute_leaf(POW2[rnd(6)], pstrides[rnd(8)]) : tc_cute_leaf(SHAPES[rnd(8)], strides[rnd(12)]);
}

/* Assigns to the leaves of l (in a random order) compact strides with
 * random gaps, so that each stride is a multiple of the previous reach:
 * an injective layout for which complement is a true complement. */
static inline void assign_injective(tc_cute *l, bool pow2) {
  enum { N = 64 };
  tc_cute *leaf[N];
  int n = 0, stack_n = 1;
  tc_cute *stack[N];
  stack[0] = l;
  while (stack_n) { /* collect the leaves */
    tc_cute *x = stack[--stack_n];
    if (x->n == 0) {
      if (n < N) leaf[n++] = x;
      continue;
    }
    for (int i = x->n - 1; i >= 0 && stack_n < N; i--) stack[stack_n++] = &x->m[i];
  }
  for (int i = n - 1; i > 0; i--) { /* shuffle */
    int j = rnd(i + 1);
    tc_cute *t = leaf[i];
    leaf[i] = leaf[j], leaf[j] = t;
  }
  int64_t cur = 1;
  for (int i = 0; i < n; i++) {
    int gap = pow2 ? (rnd(4) == 0 ? 2 : 1) : (rnd(4) == 0 ? 2 + rnd(2) : 1);
    leaf[i]->stride = cur * gap;
    cur = leaf[i]->stride * leaf[i]->shape;
  }
}

static inline tc_cute rand_injective(bool pow2) {
  tc_cute l = rand_any(0, pow2);
  assign_injective(&l, pow2);
  return l;
}

static inline char *str(const tc_cute *l) { return tc_cute_str(l); }

/* a(i) == b(i) for every i < n. */
static inline bool same_function(const tc_cute *a, const tc_cute *b, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (tc_cute_eval(a, i) != tc_cute_eval(b, i)) return false;
  return true;
}

#endif
