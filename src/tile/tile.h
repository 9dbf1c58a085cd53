/* tile.h - the tile IR: a small, explicit kernel IR for tile GEMM kernels.
 *
 * A tile kernel is written the way a Triton kernel is: one *program* per
 * tile of the output, with whole tensors (tiles) as values.  Index tensors
 * are built from ranges (make_range), expand_dims, broadcast and splat;
 * pointer tensors are a splatted base pointer plus offset tensors (addptr),
 * so the address structure `a_ptr + offs_m[:, None] * stride_m +
 * offs_k[None, :] * stride_k` stays explicit and a pass can pattern-match
 * it.  A K loop (scf.for) carries the f32 accumulator and the pointer
 * tensors as iteration arguments; its body loads tiles (optionally masked,
 * with an `other` value for masked elements), multiplies them with dot and
 * advances the pointers.  Shared memory appears as memory descriptors:
 * local_alloc (a tensor into shared memory), memdesc_subview (a window at
 * a row and column offset, always relative to the allocation it views) and
 * local_load.  Values are SSA: each is defined once, by an op result, a
 * loop block argument or a kernel argument.
 *
 * tile.c builds and prints the IR (an MLIR-like text), tile_emit.c prints
 * it as a kernel through a target dialect, passes.c runs passes and keeps
 * their reports (aggregate_load.c: ROCm Triton's aggregate-load pass),
 * tile_gemm.c builds the GEMM and MoE-gather kernels.  The kernel owns
 * every op and value it ever created; ops that passes remove are unlinked
 * from their block and freed with the kernel. */
#ifndef TC_TILE_H
#define TC_TILE_H

#include <stdint.h>

#include "tilec/tilec.h"
#include "../base/base.h"

/* ---- types ---- */

typedef enum tc_tile_kind {
  TC_TK_INT,   /* i32 */
  TC_TK_BOOL,  /* i1 (masks) */
  TC_TK_FLOAT, /* dtype f32 or f16 */
  TC_TK_PTR,   /* pointer to dtype in global memory */
  TC_TK_SMEM   /* shared-memory descriptor of dtype elements */
} tc_tile_kind;

typedef struct tc_tile_type {
  tc_tile_kind kind;
  tc_dtype dtype;   /* FLOAT: the element; PTR, SMEM: the pointee; INT: TC_I32 */
  int rank;         /* 0 (scalar), 1 or 2 */
  int64_t shape[2]; /* shape[0..rank-1] */
} tc_tile_type;

/* ---- ops ---- */

typedef enum tc_tile_opkind {
  TC_TO_CONST,       /* -> scalar or splat tensor; ival (INT, BOOL) or fval (FLOAT) */
  TC_TO_PROGRAM_ID,  /* -> i32: the program (block) index, 0 .. num_programs-1 */
  TC_TO_ADD, TC_TO_SUB, TC_TO_MUL, TC_TO_DIV, TC_TO_REM, TC_TO_MIN, /* i32 elementwise */
  TC_TO_LT,          /* i32, i32 -> i1 */
  TC_TO_AND,         /* i1, i1 -> i1 */
  TC_TO_MAKE_RANGE,  /* -> tensor<hi-lo x i32> = lo, lo+1, .. hi-1 (ival[0] = lo, ival[1] = hi) */
  TC_TO_SPLAT,       /* scalar -> tensor of the result shape */
  TC_TO_EXPAND_DIMS, /* rank 1 -> rank 2, ival[0] = axis (0: [1,n], 1: [n,1]) */
  TC_TO_BROADCAST,   /* size-1 dims -> the result shape */
  TC_TO_ADDPTR,      /* ptr, i32 offsets (element units) -> ptr */
  TC_TO_LOAD,        /* ptrs [, mask [, other]] -> tensor (masked elements read `other`, or 0) */
  TC_TO_STORE,       /* ptrs, value [, mask] */
  TC_TO_DOT,         /* a [M,K], b [K,N], acc [M,N] f32 -> f32 [M,N] = acc + a*b */
  TC_TO_FOR,         /* lb, ub, step, inits.. ; body; -> one result per init */
  TC_TO_YIELD,       /* the values of the iteration arguments for the next iteration */
  TC_TO_LOCAL_ALLOC, /* tensor -> smem descriptor holding it */
  TC_TO_SUBVIEW,     /* smem, off0, off1 (i32 scalars) -> smem window of the result shape */
  TC_TO_LOCAL_LOAD,  /* smem -> tensor */
  TC_TO_NUM_KINDS
} tc_tile_opkind;

typedef struct tc_tile_op tc_tile_op;
typedef struct tc_tile_value tc_tile_value;

/* An ordered list of ops (the kernel body or a loop body). */
typedef struct tc_tile_block {
  tc_tile_op **ops;
  int n, cap;
} tc_tile_block;

struct tc_tile_value {
  tc_tile_type type;
  tc_tile_op *def;   /* defining op; NULL for kernel and block arguments */
  int index;         /* result index in def; block argument: 0 = induction
                        variable, i + 1 = iteration argument i; kernel
                        argument: its position */
  tc_tile_op *owner; /* block arguments: the FOR op */
  const char *name;  /* kernel arguments: the parameter name (owned) */
  int is_arg;        /* a kernel argument */
  int is_output;     /* a pointer argument the kernel writes */
  int id;            /* creation order, dense from 0 */
};

struct tc_tile_op {
  tc_tile_opkind kind;
  tc_tile_value **in;
  int nin, capin;
  tc_tile_value **out;
  int nout;
  int64_t ival[2];
  double fval;
  tc_tile_block body;     /* FOR */
  tc_tile_value **bargs;  /* FOR: induction variable, then one per init */
  int nbargs;
  tc_tile_op *parent;     /* the enclosing FOR; NULL at the top level */
  int removed;            /* unlinked by a pass */
  int id;                 /* creation order, dense from 0 */
};

/* One pass report: the pass's name, whether it changed the kernel, and
 * what it did or why it did nothing. */
typedef struct tc_tile_report {
  char pass[32];
  int applied;
  char detail[512];
} tc_tile_report;

typedef struct tc_tile_kernel {
  char name[64];
  tc_tile_value **args; /* kernel arguments in parameter order */
  int nargs, capargs;
  tc_tile_block body;
  int64_t num_programs; /* the grid: programs (blocks), one per tile */
  int threads;          /* threads per program (work-items per work-group) */
  /* builder insertion point: ins_block at position ins_pos, inside the
   * FOR ins_parent (NULL at the top) */
  tc_tile_block *ins_block;
  int ins_pos;
  tc_tile_op *ins_parent;
  /* everything ever created, for freeing */
  tc_tile_value **vals;
  int nvals, capvals;
  tc_tile_op **ops;
  int nops, capops;
  tc_tile_report *reports;
  int nreports, capreports;
  char err[512]; /* the first builder error ("" when none) */
} tc_tile_kernel;

/* ---- building ---- *
 * Builder calls append at the insertion point (initially the end of the
 * kernel body).  On a bad argument (a shape or type mismatch, a NULL
 * operand) they record the first error in tc_tile_error and return NULL;
 * every later call then returns NULL too, so a builder can check once at
 * the end. */

tc_tile_kernel *tc_tile_kernel_new(const char *name, int64_t num_programs, int threads);
void tc_tile_kernel_free(tc_tile_kernel *k);
const char *tc_tile_error(const tc_tile_kernel *k); /* "" when none */
/* Records an error (printf-style) unless one is recorded already. */
void tc_tile_fail(tc_tile_kernel *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Kernel arguments: a pointer to global memory of dtype elements, or an
 * i32 scalar known only at run time.  Names are C identifiers that do
 * not start with "t_" or "tc_" (those are the emitter's). */
tc_tile_value *tc_tile_arg_ptr(tc_tile_kernel *k, const char *name, tc_dtype dtype, int is_output);
tc_tile_value *tc_tile_arg_int(tc_tile_kernel *k, const char *name);

tc_tile_value *tc_tile_const_int(tc_tile_kernel *k, int64_t v);
/* A splat constant tensor (rank 1 or 2) of INT or FLOAT kind. */
tc_tile_value *tc_tile_const_tensor(tc_tile_kernel *k, tc_tile_kind kind, tc_dtype dtype, int rank,
                                    const int64_t *shape, double v);
tc_tile_value *tc_tile_program_id(tc_tile_kernel *k);
/* op: ADD, SUB, MUL, DIV, REM, MIN (i32), LT (i32 -> i1), AND (i1).  Both
 * operands have the same shape (splat a scalar first). */
tc_tile_value *tc_tile_binary(tc_tile_kernel *k, tc_tile_opkind op, tc_tile_value *a, tc_tile_value *b);
tc_tile_value *tc_tile_make_range(tc_tile_kernel *k, int64_t lo, int64_t hi);
tc_tile_value *tc_tile_splat(tc_tile_kernel *k, tc_tile_value *scalar, int rank, const int64_t *shape);
tc_tile_value *tc_tile_expand_dims(tc_tile_kernel *k, tc_tile_value *v, int axis);
tc_tile_value *tc_tile_broadcast(tc_tile_kernel *k, tc_tile_value *v, int64_t s0, int64_t s1);
tc_tile_value *tc_tile_addptr(tc_tile_kernel *k, tc_tile_value *ptr, tc_tile_value *offs);
/* mask and other may be NULL. */
tc_tile_value *tc_tile_load(tc_tile_kernel *k, tc_tile_value *ptrs, tc_tile_value *mask,
                            tc_tile_value *other);
void tc_tile_store(tc_tile_kernel *k, tc_tile_value *ptrs, tc_tile_value *value, tc_tile_value *mask);
tc_tile_value *tc_tile_dot(tc_tile_kernel *k, tc_tile_value *a, tc_tile_value *b, tc_tile_value *acc);
/* Opens a loop `for iv = lb; iv < ub; iv += step` carrying n values
 * (inits); later calls build its body until tc_tile_for_end, which gives
 * the values of the next iteration (n of them) and moves the insertion
 * point after the loop.  Returns the FOR op (NULL on error). */
tc_tile_op *tc_tile_for_begin(tc_tile_kernel *k, tc_tile_value *lb, tc_tile_value *ub,
                              tc_tile_value *step, int n, tc_tile_value *const *inits);
void tc_tile_for_end(tc_tile_kernel *k, tc_tile_op *loop, int n, tc_tile_value *const *yields);
tc_tile_value *tc_tile_for_iv(const tc_tile_op *loop);
tc_tile_value *tc_tile_for_arg(const tc_tile_op *loop, int i);    /* block argument i */
tc_tile_value *tc_tile_for_result(const tc_tile_op *loop, int i); /* result i */
tc_tile_value *tc_tile_local_alloc(tc_tile_kernel *k, tc_tile_value *v);
tc_tile_value *tc_tile_subview(tc_tile_kernel *k, tc_tile_value *smem, tc_tile_value *off0,
                               tc_tile_value *off1, int64_t s0, int64_t s1);
tc_tile_value *tc_tile_local_load(tc_tile_kernel *k, tc_tile_value *view);

/* ---- inspecting and rewriting (for passes) ---- */

/* Moves the insertion point before position pos of block b (inside the
 * FOR parent, NULL for the kernel body); pos == b->n appends. */
void tc_tile_set_insertion(tc_tile_kernel *k, tc_tile_block *b, int pos, tc_tile_op *parent);
/* The block an op sits in and its position there (-1 when removed). */
int tc_tile_op_position(tc_tile_kernel *k, const tc_tile_op *op, tc_tile_block **block);
/* Unlinks op from its block (its results must be unused by then). */
void tc_tile_remove_op(tc_tile_kernel *k, tc_tile_op *op);
/* Replaces every use of `from` by `to` in every op of the kernel. */
void tc_tile_replace_uses(tc_tile_kernel *k, const tc_tile_value *from, tc_tile_value *to);
/* How many operands of linked ops refer to v. */
int tc_tile_use_count(const tc_tile_kernel *k, const tc_tile_value *v);
/* Is v defined inside loop (by an op of its body, nested bodies included,
 * or as its block argument)? */
int tc_tile_defined_in(const tc_tile_value *v, const tc_tile_op *loop);
/* Evaluates an i32 scalar built from constants and arithmetic only;
 * 1 with *out set, or 0 when v depends on something else. */
int tc_tile_const_value(const tc_tile_value *v, int64_t *out);
/* Whether two types are equal. */
int tc_tile_type_eq(const tc_tile_type *a, const tc_tile_type *b);
/* The number of elements of a type (1 for a scalar). */
int64_t tc_tile_type_elems(const tc_tile_type *t);

/* ---- printing ---- */

/* Appends the kernel as MLIR-like text (values numbered in print order). */
void tc_tile_print(tc_str *o, const tc_tile_kernel *k);
/* Appends a type ("tensor<16x128x!tt.ptr<f16>>"). */
void tc_tile_print_type(tc_str *o, const tc_tile_type *t);
const char *tc_tile_opkind_name(tc_tile_opkind k); /* "tt.load" ... */

/* ---- reports ---- */

void tc_tile_add_report(tc_tile_kernel *k, const char *pass, int applied, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int tc_tile_num_reports(const tc_tile_kernel *k);
const tc_tile_report *tc_tile_get_report(const tc_tile_kernel *k, int i);
/* The last report of the named pass, or NULL. */
const tc_tile_report *tc_tile_find_report(const tc_tile_kernel *k, const char *pass);

#endif
