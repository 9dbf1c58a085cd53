/* fuzz_util.h - what the libFuzzer harnesses share: a byte reader that
 * takes small integers off the front of the input (0 once it runs out),
 * the rest as a NUL-terminated string, a log for FUZZ_VERBOSE=1, and an
 * abort with a message for a broken invariant (libFuzzer records it as a
 * crash). */
#ifndef TC_FUZZ_UTIL_H
#define TC_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fz_in {
  const uint8_t *p;
  size_t n;
} fz_in;

static inline unsigned fz_byte(fz_in *in) {
  if (!in->n) return 0;
  in->n--;
  return *in->p++;
}

/* A value in [lo, hi] from one byte (two when the range needs them). */
static inline int64_t fz_range(fz_in *in, int64_t lo, int64_t hi) {
  uint64_t span = (uint64_t)(hi - lo) + 1;
  uint64_t v = fz_byte(in);
  if (span > 256) v = v << 8 | fz_byte(in);
  return lo + (int64_t)(v % span);
}

/* The rest of the input as a string (caller frees); NULs end it early. */
static inline char *fz_rest(fz_in *in) {
  char *s = malloc(in->n + 1);
  if (!s) abort();
  memcpy(s, in->p, in->n);
  s[in->n] = 0;
  in->p += in->n;
  in->n = 0;
  return s;
}

/* Up to one NUL-terminated field of the input, at most max bytes (caller
 * frees). */
static inline char *fz_field(fz_in *in, size_t max) {
  size_t len = 0;
  while (len < in->n && len < max && in->p[len]) len++;
  char *s = malloc(len + 1);
  if (!s) abort();
  memcpy(s, in->p, len);
  s[len] = 0;
  size_t used = len < in->n ? len + 1 : len;
  in->p += used;
  in->n -= used;
  return s;
}

/* FUZZ_VERBOSE=1 in the environment: the harnesses say on stderr what
 * each input did (for reproducing a finding by hand). */
static inline int fz_verbose(void) {
  static int v = -1;
  if (v < 0) v = getenv("FUZZ_VERBOSE") != NULL;
  return v;
}
#define FZ_LOG(...)                   \
  do {                                \
    if (fz_verbose()) {               \
      fprintf(stderr, __VA_ARGS__);   \
      fprintf(stderr, "\n");          \
    }                                 \
  } while (0)

#define FZ_ASSERT(cond, ...)                            \
  do {                                                  \
    if (!(cond)) {                                      \
      fprintf(stderr, "fuzz invariant: " __VA_ARGS__);  \
      fprintf(stderr, "\n");                            \
      abort();                                          \
    }                                                   \
  } while (0)

#endif
