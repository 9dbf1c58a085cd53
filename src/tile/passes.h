/* passes.h - the passes over the tile IR (tile.h) and their pass manager.
 *
 * tc_tile_run_passes runs, in order:
 *   aggregate-load  (aggregate_load.c, after ROCm Triton's pass) hoist
 *                   every load of GEMM operand A out of the K loop into
 *                   one shared buffer (or into chunks of whole BLOCK_K
 *                   slices when A does not fit), read one BLOCK_K slice
 *                   per iteration;
 *   dce             remove ops whose results nothing uses, and loop-carried
 *                   values that only feed themselves (A's pointer after
 *                   aggregate-load).
 * Each pass adds exactly one report to the kernel (tc_tile_add_report):
 * its name, whether it changed the kernel, and what it did or why not.
 * A pass that does not apply leaves the kernel exactly as it was. */
#ifndef TC_TILE_PASSES_H
#define TC_TILE_PASSES_H

#include "tile.h"

#define TC_TILE_DEFAULT_SMEM_LIMIT 65536

typedef struct tc_tile_pass_options {
  int aggregate_load;    /* run aggregate-load (default 1) */
  int64_t smem_limit;    /* shared memory the kernel may use, bytes (default 64 KiB) */
  int dce;               /* run dce (default 1) */
  /* Tests only: reproduce the base-pointer bug of the original pass, every
   * slice read at column 0 of its buffer, to show that the tests catch it. */
  int emulate_sliced_base_bug;
} tc_tile_pass_options;

void tc_tile_pass_options_default(tc_tile_pass_options *o);

/* Runs the pipeline above (o NULL: the defaults).  Returns how many passes
 * changed the kernel.  Passes never run on a kernel with a builder error
 * (they report that instead). */
int tc_tile_run_passes(tc_tile_kernel *k, const tc_tile_pass_options *o);

/* The passes one by one; 1 when the kernel changed, else 0. */
int tc_tile_aggregate_load(tc_tile_kernel *k, int64_t smem_limit, int emulate_sliced_base_bug);
int tc_tile_dce(tc_tile_kernel *k);

/* Appends one line per report: "  NAME: applied: DETAIL" or
 * "  NAME: not applied: REASON". */
void tc_tile_print_reports(tc_str *o, const tc_tile_kernel *k);

#endif
