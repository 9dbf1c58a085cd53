/* tile_emit.h - printing a tile-IR kernel (tile.h) as OpenCL C, CUDA C or
 * HIP through a target dialect (src/codegen/dialect.h).
 *
 * The mapping is the straightforward one: a program is a work-group
 * (block) of k->threads threads; program id = block index.  Index, mask
 * and pointer tensors are never stored: each element is an expression of
 * its coordinates, computed where it is used.  Every tt.load fills a
 * shared-memory (LDS) array cooperatively (thread t takes elements t,
 * t + threads, ...), between barriers; ttg.local_alloc of a load used
 * only there is that array, and a memdesc_subview is a window of it at
 * offsets counted from the allocation's own base.  The f32 accumulator
 * and every tt.dot result live in registers: thread t owns elements
 * t + i * threads of the tile.  Stores are done by the owning threads.
 * Loop-carried pointer tensors must advance by a uniform offset (a
 * splat), kept as one integer per loop.
 *
 * The kernel's parameters are its pointer arguments in order, then, when
 * it has i32 arguments, one `const int*` buffer "tc_args" holding them in
 * declaration order (the runtimes pass buffers only). */
#ifndef TC_TILE_EMIT_H
#define TC_TILE_EMIT_H

#include "../codegen/dialect.h"
#include "tile.h"

#define TC_TILE_MAX_PARAMS 32

typedef struct tc_tile_param {
  char name[32];
  int is_ptr;     /* 1: a pointer argument; 0: the tc_args buffer */
  tc_dtype dtype;
  int is_output;
} tc_tile_param;

typedef struct tc_tile_emitted {
  char *source; /* owned */
  char name[64];
  size_t grid[3], block[3];
  int64_t smem_bytes;              /* shared memory declared (static) */
  int nparams;
  tc_tile_param params[TC_TILE_MAX_PARAMS];
  int nint_args;                   /* elements of tc_args */
  char int_args[TC_TILE_MAX_PARAMS][32]; /* their names, in buffer order */
} tc_tile_emitted;

/* The dialect of a target (OpenCL, CUDA or HIP). */
const tc_dialect *tc_tile_dialect(tc_target target);

/* Prints k (which must be free of builder errors) with dialect d.  TC_OK,
 * or TC_ERR_UNSUPPORTED / TC_ERR_ARGUMENT with err filled (e.g. a
 * loop-carried pointer advanced by a non-uniform offset). */
tc_status tc_tile_emit(const tc_tile_kernel *k, const tc_dialect *d, tc_tile_emitted *out,
                       tc_str *err);
void tc_tile_emitted_free(tc_tile_emitted *e);

#endif
