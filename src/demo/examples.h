/* examples.h - the example kernels `tilec demo` runs, the benchmarks time
 * and the tests reuse: the six copies through shared memory that show the
 * allocation rules (nvFuser's, docs/tutorial.md section 3), tiled
 * pointwise fusions and a tiled transpose through shared memory, each a
 * fusion plus a hand schedule through the public API. */
#ifndef TC_EXAMPLES_H
#define TC_EXAMPLES_H

#include "tilec/tilec.h"
#include "../base/base.h"

typedef struct tc_example {
  const char *name;
  const char *what;
  int64_t expect_smem;     /* the shared memory the allocation rules give, -1 if none */
  tc_fusion *(*build)(void); /* a new scheduled fusion (caller frees) */
} tc_example;

/* The examples' pointwise schedule of `out` (2-D): split both axes by the
 * tile (ty, tx), reorder to [Yo, Xo, Yi, Xi], merge [Yo*Xo] onto BIDx, Xi
 * onto TIDx, then propagate to the whole fusion and inline most. */
void tc_example_tile_2d(tc_fusion *f, tc_tensor *out, int64_t ty, int64_t tx);

int tc_example_count(void);
const tc_example *tc_example_get(int i);
const tc_example *tc_example_find(const char *name);

typedef struct tc_example_result {
  tc_status status;
  int64_t smem;
  int verified;            /* 1: outputs match the plain C reference */
  double ms;               /* kernel time */
  double max_err;          /* largest |kernel - reference| */
  char msg[1024];
} tc_example_result;

/* Builds, compiles for OpenCL, runs on `device` (NULL: the default) and
 * compares every output with tc_reference_run on the same inputs. */
tc_status tc_example_run(const tc_example *e, const char *device, tc_example_result *r);

/* Host buffers for a fusion's parameters (inputs then outputs), inputs
 * filled with deterministic pseudo-random values of their dtype.  Free
 * with tc_params_free. */
void **tc_params_alloc(tc_fusion *f, unsigned seed);
void tc_params_free(tc_fusion *f, void **bufs);
/* Compares output buffers; returns the number of elements outside the
 * dtype's tolerance and sets *max_err.  NaN matches any NaN, an infinity
 * only the same infinity.  On a mismatch msg names the first bad
 * element. */
long tc_outputs_compare(tc_fusion *f, void *const *got, void *const *want, double *max_err,
                        tc_str *msg);

#endif
