/* family.c - a kernel family (tc_family_*): the kernels of one fusion
 * specialised on the divisibility of its size variables, picked per run
 * from the concrete sizes, as Triton specialises a size argument on
 * "a multiple of 16" (docs/dynamic.md).
 *
 * The family holds a builder (the fusion for given divisors, scheduled)
 * and the kernels made so far.  A run wants, for each variable, the
 * largest divisor of its value among 16, 8, 4 and 1; it uses the kernel
 * for that assumption set when the family has it, else builds the fusion
 * for it and compiles it (tc_compile: the kernel cache may hold it
 * already), then lowers each divisor while the code (the source but for
 * comment lines) stays the same: where the schedule made nothing of the
 * larger divisor, the set takes the kernel of the smaller one, so sizes
 * that differ only in what buys nothing share one kernel and the device
 * builds it once. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/tilec.h"
#include "../base/base.h"

/* The divisors a variable is specialised on, largest first (Triton's 16
 * and the vector widths below it). */
static const int64_t family_divisors[] = {16, 8, 4, 1};
#define TC_FAMILY_NDIV ((int)(sizeof family_divisors / sizeof family_divisors[0]))
#define TC_FAMILY_VARS 4
#define TC_FAMILY_MAX 256 /* TC_FAMILY_NDIV ^ TC_FAMILY_VARS assumption sets */

typedef struct family_set {
  int64_t div[TC_FAMILY_VARS];
  int kernel; /* index into kern[] */
} family_set;

struct tc_kernel_family {
  tc_family_build build;         /* one variable, or */
  tc_family_build_vars build_n;  /* nvars of them */
  int nvars;
  void *ctx;
  tc_compile_options opt;
  int nsets, nkern;
  family_set set[TC_FAMILY_MAX]; /* each wanted assumption set: its kernel */
  /* every kernel compiled, with its exact assumptions (those the sets
   * use, and the probes that found a smaller divisor gives other code) */
  int64_t kdiv[TC_FAMILY_MAX][TC_FAMILY_VARS];
  tc_fusion *fus[TC_FAMILY_MAX];
  tc_kernel *kern[TC_FAMILY_MAX];
  int compiled, loaded; /* kernels made by tc_compile / read from the cache */
  char err[1024];
};

static tc_kernel_family *family_new(tc_family_build build, tc_family_build_vars build_n, int nvars,
                                    void *ctx, const tc_compile_options *opt) {
  tc_kernel_family *fam = tc_xcalloc(1, sizeof *fam);
  fam->build = build, fam->build_n = build_n, fam->nvars = nvars, fam->ctx = ctx, fam->opt = *opt;
  return fam;
}

tc_kernel_family *tc_family_new(tc_family_build build, void *ctx, const tc_compile_options *opt) {
  return build && opt ? family_new(build, NULL, 1, ctx, opt) : NULL;
}

tc_kernel_family *tc_family_new_vars(int nvars, tc_family_build_vars build, void *ctx,
                                     const tc_compile_options *opt) {
  return build && opt && nvars >= 1 && nvars <= TC_FAMILY_VARS ? family_new(NULL, build, nvars, ctx, opt)
                                                               : NULL;
}

void tc_family_free(tc_kernel_family *fam) {
  if (!fam) return;
  for (int i = 0; i < fam->nkern; i++) tc_kernel_free(fam->kern[i]), tc_fusion_free(fam->fus[i]);
  free(fam);
}

const char *tc_family_error(const tc_kernel_family *fam) { return fam ? fam->err : "no family"; }

void tc_family_counts(const tc_kernel_family *fam, int *kernels, int *compiled, int *loaded) {
  int used = 0; /* the kernels the sets use */
  for (int i = 0; fam && i < fam->nkern; i++) {
    bool in = false;
    for (int j = 0; j < fam->nsets && !in; j++) in = fam->set[j].kernel == i;
    used += in;
  }
  if (kernels) *kernels = used;
  if (compiled) *compiled = fam ? fam->compiled : 0;
  if (loaded) *loaded = fam ? fam->loaded : 0;
}

/* The divisors d[] as text: "16" or "16, 4". */
static const char *divs_text(const int64_t *d, int n, char *buf, size_t cap) {
  size_t at = 0;
  buf[0] = 0;
  for (int i = 0; i < n && at < cap; i++)
    at += (size_t)snprintf(buf + at, cap - at, "%s%lld", i ? ", " : "", (long long)d[i]);
  return buf;
}

/* Whether the kernel k was compiled for exactly the divisors d[]. */
static bool assumes(const tc_kernel *k, const int64_t *d, int n) {
  if (tc_kernel_size_var_count(k) != n) return false;
  for (int i = 0; i < n; i++) {
    int64_t have = 0;
    if (!tc_kernel_size_var_at(k, i, &have, NULL) || have != d[i]) return false;
  }
  return true;
}

/* The next line of *s that is not a comment line (one that starts, past
 * its indentation, with a comment that closes at its end), as its start
 * and length; false at the end. */
static bool code_line(const char **s, const char **line, size_t *len) {
  while (**s) {
    const char *b = *s, *e = strchr(b, '\n');
    size_t n = e ? (size_t)(e - b) : strlen(b);
    *s = b + n + (e != NULL);
    const char *t = b;
    while (t < b + n && (*t == ' ' || *t == '\t')) t++;
    bool comment = b + n - t >= 4 && t[0] == '/' && t[1] == '*' && b[n - 2] == '*' && b[n - 1] == '/';
    if (!comment) return *line = b, *len = n, true;
  }
  return false;
}

/* Whether two kernel sources differ only in comment lines (a schedule's
 * note that names a bound): the device builds the same code. */
static bool same_code(const char *a, const char *b) {
  const char *la, *lb;
  size_t na, nb;
  for (;;) {
    bool ha = code_line(&a, &la, &na), hb = code_line(&b, &lb, &nb);
    if (!ha || !hb) return ha == hb;
    if (na != nb || memcmp(la, lb, na)) return false;
  }
}

/* The index of the kernel compiled for exactly the divisors d[]: the
 * family's, else built and compiled; -1 with the message on failure. */
static int compiled_for(tc_kernel_family *fam, const int64_t *d, tc_status *st) {
  int n = fam->nvars;
  for (int i = 0; i < fam->nkern; i++)
    if (!memcmp(fam->kdiv[i], d, (size_t)n * sizeof *d)) return i;
  char dt[96];
  if (fam->nkern == TC_FAMILY_MAX) { /* (not reached: sets and probes stay below) */
    snprintf(fam->err, sizeof fam->err, "tc_family: more than %d kernels", TC_FAMILY_MAX);
    return *st = TC_ERR_ARGUMENT, -1;
  }
  tc_fusion *f = fam->build ? fam->build(d[0], fam->ctx) : fam->build_n(d, fam->ctx);
  if (!f) {
    snprintf(fam->err, sizeof fam->err, "tc_family: the builder returned no fusion for the divisor%s %s",
             n > 1 ? "s" : "", divs_text(d, n, dt, sizeof dt));
    return *st = TC_ERR_ARGUMENT, -1;
  }
  tc_kernel *k = tc_compile(f, &fam->opt, st);
  if (k && !assumes(k, d, n)) {
    snprintf(fam->err, sizeof fam->err, "tc_family: the builder's fusion for the divisor%s %s has "
             "%d size variable%s with other divisors or another count (the family takes %d); build it "
             "with tc_input_sym / tc_input_syms and those divisors", n > 1 ? "s" : "",
             divs_text(d, n, dt, sizeof dt), tc_kernel_size_var_count(k),
             tc_kernel_size_var_count(k) == 1 ? "" : "s", n);
    tc_kernel_free(k), tc_fusion_free(f);
    return *st = TC_ERR_ARGUMENT, -1;
  }
  if (!k) {
    snprintf(fam->err, sizeof fam->err, "%s", tc_fusion_error(f));
    tc_fusion_free(f);
    return -1;
  }
  if (tc_kernel_from_cache(k)) fam->loaded++;
  else fam->compiled++;
  memcpy(fam->kdiv[fam->nkern], d, (size_t)n * sizeof *d);
  fam->fus[fam->nkern] = f, fam->kern[fam->nkern] = k;
  return fam->nkern++;
}

/* The kernel for the wanted divisors d[]: the family's for that set, else
 * the kernel of d compiled and each variable's divisor lowered through
 * the set (16, 8, 4, 1) while the code stays the same, so the set gets
 * the kernel of the weakest assumptions that make that code, whatever
 * order the sizes come in. */
static tc_kernel *kernel_for(tc_kernel_family *fam, const int64_t *d, tc_status *st) {
  int n = fam->nvars;
  for (int i = 0; i < fam->nsets; i++)
    if (!memcmp(fam->set[i].div, d, (size_t)n * sizeof *d)) return fam->kern[fam->set[i].kernel];
  int64_t cur[TC_FAMILY_VARS];
  memcpy(cur, d, (size_t)n * sizeof *d);
  int k = compiled_for(fam, cur, st);
  for (int v = 0; v < n && k >= 0; v++)
    for (int i = 0; i + 1 < TC_FAMILY_NDIV; i++) {
      if (cur[v] != family_divisors[i]) continue;
      int64_t lower[TC_FAMILY_VARS];
      memcpy(lower, cur, sizeof lower);
      lower[v] = family_divisors[i + 1];
      int k2 = compiled_for(fam, lower, st);
      if (k2 < 0) return NULL;
      if (!same_code(tc_kernel_source(fam->kern[k]), tc_kernel_source(fam->kern[k2]))) break;
      cur[v] = lower[v], k = k2;
    }
  if (k < 0) return NULL;
  family_set *s = &fam->set[fam->nsets++];
  memcpy(s->div, d, (size_t)n * sizeof *d);
  s->kernel = k;
  return fam->kern[k];
}

tc_kernel *tc_family_kernel(tc_kernel_family *fam, const int64_t *sizes, int nsizes, tc_status *status) {
  tc_status dummy;
  tc_status *st = status ? status : &dummy;
  *st = TC_OK;
  if (!fam) return *st = TC_ERR_ARGUMENT, NULL;
  fam->err[0] = 0;
  if (nsizes != fam->nvars || !sizes) {
    if (fam->nvars == 1)
      snprintf(fam->err, sizeof fam->err, "tc_family: the family's fusion has one size variable; pass "
               "its value (nsizes 1), got %d value%s", nsizes, nsizes == 1 ? " and no array" : "s");
    else
      snprintf(fam->err, sizeof fam->err, "tc_family: the family's fusion has %d size variables; pass "
               "their values (nsizes %d), got %d value%s", fam->nvars, fam->nvars, nsizes,
               nsizes == fam->nvars ? "s and no array" : nsizes == 1 ? "" : "s");
    return *st = TC_ERR_ARGUMENT, NULL;
  }
  int64_t d[TC_FAMILY_VARS];
  for (int v = 0; v < fam->nvars; v++) {
    if (sizes[v] < 1) {
      snprintf(fam->err, sizeof fam->err, "tc_family: size %d is %lld; it must be at least 1", v,
               (long long)sizes[v]);
      return *st = TC_ERR_ARGUMENT, NULL;
    }
    /* the largest divisor of the set that holds (1 always does) */
    int i = 0;
    while (sizes[v] % family_divisors[i]) i++;
    d[v] = family_divisors[i];
  }
  return kernel_for(fam, d, st);
}

tc_status tc_family_run(tc_kernel_family *fam, void *const *args, const int64_t *sizes, int nsizes,
                        const char *device, double *ms) {
  tc_status st;
  tc_kernel *k = tc_family_kernel(fam, sizes, nsizes, &st);
  if (!k) return st;
  st = tc_kernel_run_sizes(k, args, sizes, nsizes, device, ms);
  if (st) snprintf(fam->err, sizeof fam->err, "%s", tc_kernel_error(k));
  return st;
}
