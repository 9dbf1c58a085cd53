/* base.c - checked allocation, the string builder and hashing helpers. */
#define _POSIX_C_SOURCE 200809L
#include "base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void tc_oom(size_t n) {
  fprintf(stderr, "tilec: out of memory (requested %zu bytes)\n", n);
  abort();
}

void *tc_xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) tc_oom(n);
  return p;
}

void *tc_xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) tc_oom(n * size);
  return p;
}

void *tc_xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) tc_oom(n);
  return q;
}

char *tc_xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = tc_xmalloc(n);
  memcpy(d, s, n);
  return d;
}

void tc_str_init(tc_str *s) { s->buf = NULL, s->len = 0, s->cap = 0; }

void tc_str_free(tc_str *s) {
  free(s->buf);
  tc_str_init(s);
}

void tc_str_clear(tc_str *s) {
  s->len = 0;
  if (s->buf) s->buf[0] = 0;
}

static void tc_str_reserve(tc_str *s, size_t extra) {
  if (s->len + extra + 1 <= s->cap) return;
  size_t cap = s->cap ? s->cap : 64;
  while (cap < s->len + extra + 1) cap *= 2;
  s->buf = tc_xrealloc(s->buf, cap);
  s->cap = cap;
}

void tc_str_catn(tc_str *s, const char *text, size_t n) {
  tc_str_reserve(s, n);
  memcpy(s->buf + s->len, text, n);
  s->len += n;
  s->buf[s->len] = 0;
}

void tc_str_cat(tc_str *s, const char *text) { tc_str_catn(s, text, strlen(text)); }

void tc_str_vprintf(tc_str *s, const char *fmt, va_list ap) {
  if (!s) return;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) return;
  tc_str_reserve(s, (size_t)n);
  vsnprintf(s->buf + s->len, (size_t)n + 1, fmt, ap);
  s->len += (size_t)n;
}

void tc_str_printf(tc_str *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tc_str_vprintf(s, fmt, ap);
  va_end(ap);
}

void tc_str_indent(tc_str *s, int depth) {
  for (int i = 0; i < depth; i++) tc_str_cat(s, "  ");
}

void tc_str_vline(tc_str *s, int depth, const char *fmt, va_list ap) {
  tc_str_indent(s, depth);
  tc_str_vprintf(s, fmt, ap);
  tc_str_cat(s, "\n");
}

void tc_set_err(char *err, size_t cap, const char *fmt, ...) {
  if (!err || cap == 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, cap, fmt, ap);
  va_end(ap);
}

void tc_err_set(tc_str *err, const char *fmt, ...) {
  if (!err) return;
  tc_str msg;
  tc_str_init(&msg);
  va_list ap;
  va_start(ap, fmt);
  tc_str_vprintf(&msg, fmt, ap);
  va_end(ap);
  tc_str_free(err);
  *err = msg;
}

void tc_err_prefix(tc_str *err, const char *fmt, ...) {
  if (!err) return;
  tc_str msg;
  tc_str_init(&msg);
  va_list ap;
  va_start(ap, fmt);
  tc_str_vprintf(&msg, fmt, ap);
  va_end(ap);
  tc_str_cat(&msg, tc_str_cstr(err));
  tc_str_free(err);
  *err = msg;
}

const char *tc_str_cstr(const tc_str *s) { return s->buf ? s->buf : ""; }

char *tc_str_take(tc_str *s) {
  char *b = s->buf ? s->buf : tc_xstrdup("");
  tc_str_init(s);
  return b;
}

int tc_uf_find(int *uf, int x) {
  while (uf[x] != x) x = uf[x] = uf[uf[x]];
  return x;
}

void tc_uf_union(int *uf, int a, int b) {
  a = tc_uf_find(uf, a), b = tc_uf_find(uf, b);
  if (a != b) uf[a < b ? b : a] = a < b ? a : b;
}

int tc_nbits(int64_t v) {
  int n = 0;
  for (; v > 0; v >>= 1) n++;
  return n;
}

uint64_t tc_hash_mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h *= 0x100000001b3ULL;
  return h;
}

double tc_now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int64_t tc_sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t tc_sat_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}
