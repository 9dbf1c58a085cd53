/* family.c - a kernel family (tc_family_*): the kernels of one fusion
 * specialised on the divisibility of its size variable, picked per run
 * from the concrete size, as Triton specialises a size argument on
 * "a multiple of 16" (docs/dynamic.md).
 *
 * The family holds a builder (the fusion for a divisor, scheduled) and
 * the kernels made so far, one per assumption set.  A run with size v
 * wants the kernel for "a multiple of 16" when 16 divides v, else the
 * general one; it uses that kernel when the family has it, else builds
 * the fusion for that divisor and compiles it (tc_compile: the kernel
 * cache may hold it already). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/tilec.h"
#include "../base/base.h"

/* The divisor of a specialised kernel (Triton's). */
#define TC_FAMILY_DIVISOR 16
#define TC_FAMILY_MAX 2

struct tc_kernel_family {
  tc_family_build build;
  void *ctx;
  tc_compile_options opt;
  int n;
  int64_t div[TC_FAMILY_MAX];
  tc_fusion *fus[TC_FAMILY_MAX];
  tc_kernel *kern[TC_FAMILY_MAX];
  int compiled, loaded; /* kernels made by tc_compile / read from the cache */
  char err[1024];
};

tc_kernel_family *tc_family_new(tc_family_build build, void *ctx, const tc_compile_options *opt) {
  if (!build || !opt) return NULL;
  tc_kernel_family *fam = tc_xcalloc(1, sizeof *fam);
  fam->build = build, fam->ctx = ctx, fam->opt = *opt;
  return fam;
}

void tc_family_free(tc_kernel_family *fam) {
  if (!fam) return;
  for (int i = 0; i < fam->n; i++) tc_kernel_free(fam->kern[i]), tc_fusion_free(fam->fus[i]);
  free(fam);
}

const char *tc_family_error(const tc_kernel_family *fam) { return fam ? fam->err : "no family"; }

void tc_family_counts(const tc_kernel_family *fam, int *kernels, int *compiled, int *loaded) {
  if (kernels) *kernels = fam ? fam->n : 0;
  if (compiled) *compiled = fam ? fam->compiled : 0;
  if (loaded) *loaded = fam ? fam->loaded : 0;
}

/* The kernel for divisor d: the family's, else built and compiled. */
static tc_kernel *kernel_for(tc_kernel_family *fam, int64_t d, tc_status *st) {
  for (int i = 0; i < fam->n; i++)
    if (fam->div[i] == d) return fam->kern[i];
  tc_fusion *f = fam->build(d, fam->ctx);
  if (!f) {
    snprintf(fam->err, sizeof fam->err, "tc_family: the builder returned no fusion for the divisor %lld",
             (long long)d);
    *st = TC_ERR_ARGUMENT;
    return NULL;
  }
  int64_t have = 0;
  tc_kernel *k = tc_compile(f, &fam->opt, st);
  if (k && (!tc_kernel_size_var(k, &have, NULL) || have != d)) {
    snprintf(fam->err, sizeof fam->err, "tc_family: the builder's fusion for the divisor %lld has "
             "%s; build it with tc_input_sym(..., divisor)", (long long)d,
             tc_kernel_size_var(k, NULL, NULL) ? "another divisor" : "no size variable");
    tc_kernel_free(k), tc_fusion_free(f);
    *st = TC_ERR_ARGUMENT;
    return NULL;
  }
  if (!k) {
    snprintf(fam->err, sizeof fam->err, "%s", tc_fusion_error(f));
    tc_fusion_free(f);
    return NULL;
  }
  if (tc_kernel_from_cache(k)) fam->loaded++;
  else fam->compiled++;
  fam->div[fam->n] = d, fam->fus[fam->n] = f, fam->kern[fam->n] = k;
  fam->n++;
  return k;
}

tc_kernel *tc_family_kernel(tc_kernel_family *fam, const int64_t *sizes, int nsizes, tc_status *status) {
  tc_status dummy;
  tc_status *st = status ? status : &dummy;
  *st = TC_OK;
  if (!fam) return *st = TC_ERR_ARGUMENT, NULL;
  fam->err[0] = 0;
  if (nsizes != 1 || !sizes) {
    snprintf(fam->err, sizeof fam->err, "tc_family: a family's fusion has one size variable; pass "
             "its value (nsizes 1), got %d value%s", nsizes, nsizes == 1 ? " and no array" : "s");
    return *st = TC_ERR_ARGUMENT, NULL;
  }
  if (sizes[0] < 1) {
    snprintf(fam->err, sizeof fam->err, "tc_family: the size is %lld; it must be at least 1",
             (long long)sizes[0]);
    return *st = TC_ERR_ARGUMENT, NULL;
  }
  /* the specialised kernel where its assumption holds, else the general one */
  int64_t d = sizes[0] % TC_FAMILY_DIVISOR == 0 ? TC_FAMILY_DIVISOR : 1;
  tc_kernel *k = kernel_for(fam, d, st);
  return k;
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
