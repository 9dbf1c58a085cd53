/* base.h - small shared utilities: growable arrays, a string builder, and
 * checked allocation.  Everything in tilec that needs memory goes through
 * tc_xmalloc/tc_xrealloc so that an out-of-memory condition aborts with a
 * message instead of dereferencing NULL. */
#ifndef TC_BASE_H
#define TC_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

void *tc_xmalloc(size_t n);
void *tc_xcalloc(size_t n, size_t size);
void *tc_xrealloc(void *p, size_t n);
char *tc_xstrdup(const char *s);

/* Growable array of elements of any type: `T *v; int n, cap;` and
 * TC_PUSH(v, n, cap, x) appends x. */
#define TC_PUSH(v, n, cap, x)                                            \
  do {                                                                   \
    if ((n) == (cap)) {                                                  \
      (cap) = (cap) ? 2 * (cap) : 8;                                     \
      (v) = tc_xrealloc((v), (size_t)(cap) * sizeof(*(v)));              \
    }                                                                    \
    (v)[(n)++] = (x);                                                    \
  } while (0)

/* String builder.  Always NUL-terminated once anything has been written.
 *
 * Error convention.  The public API records a failure on its object (tc_fail
 * on the fusion, a kernel's err) or, where tilec.h takes a (char *, size_t)
 * from the user, copies the message there with tc_set_err.  Every internal
 * function that can fail takes `tc_str *err` instead (NULL discards the
 * message): it fills it with tc_err_set, which replaces any text held, so a
 * reused tc_str holds the latest failure, and may add more after it with
 * tc_str_printf.  The text is never truncated (compiler logs, CuTe
 * expressions) and composes: a caller adds context in front with
 * tc_err_prefix.  The caller owns the tc_str and frees it; TC_STR_LOCAL
 * declares one that is freed when it goes out of scope. */
typedef struct tc_str {
  char *buf;
  size_t len, cap;
} tc_str;

/* An empty tc_str `name`, freed when it goes out of scope. */
#define TC_STR_LOCAL(name) tc_str name __attribute__((cleanup(tc_str_free))) = {0}

void tc_str_init(tc_str *s);
void tc_str_free(tc_str *s);
void tc_str_clear(tc_str *s);
void tc_str_cat(tc_str *s, const char *text);
void tc_str_catn(tc_str *s, const char *text, size_t n);
/* printf into the builder; a NULL builder discards the text. */
void tc_str_printf(tc_str *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void tc_str_vprintf(tc_str *s, const char *fmt, va_list ap);
/* Appends `depth` levels of two-space indentation. */
void tc_str_indent(tc_str *s, int depth);
/* One line of generated code: the indentation, printf, a newline. */
void tc_str_vline(tc_str *s, int depth, const char *fmt, va_list ap);

/* printf into err[0 .. cap) (nothing where err is NULL or cap 0): only for
 * the public API's (char *err, size_t cap) parameters. */
void tc_set_err(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Replaces err's text with the formatted message (nothing where err is NULL;
 * the arguments may point into err's own text). */
void tc_err_set(tc_str *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Puts the formatted text in front of err's message (nothing where err is
 * NULL). */
void tc_err_prefix(tc_str *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* a * b and a + b for non-negative operands, INT64_MAX where they overflow
 * (sizes built from user extents: compared against limits, never wrapped) */
int64_t tc_sat_mul(int64_t a, int64_t b);
int64_t tc_sat_add(int64_t a, int64_t b);
/* Returns the buffer ("" if empty); ownership stays with the builder. */
const char *tc_str_cstr(const tc_str *s);
/* Hands the buffer to the caller (who frees it) and resets the builder. */
char *tc_str_take(tc_str *s);

/* Union-find over 0 .. n-1 in uf[] (uf[i] = i to start): the
 * representative of x's set (the smallest member, paths halved), and the
 * union of a's and b's sets. */
int tc_uf_find(int *uf, int x);
void tc_uf_union(int *uf, int a, int b);

/* Bits needed to write a non-negative value (0 for v <= 0). */
int tc_nbits(int64_t v);

/* 64-bit FNV-1a style mixing used by the hash tables. */
uint64_t tc_hash_mix(uint64_t h, uint64_t v);

/* Monotonic wall clock in seconds. */
double tc_now_seconds(void);

#endif
