/* fusion.h - the fusion IR: tensors, the ops between them, and the fusion
 * that owns both together with the axis graph of every tensor's domains.
 *
 * A tensor has a logical domain (its shape, root axes), a loop domain (the
 * axes its computation iterates, made from the logical domain by the
 * schedule) and an allocation domain (the axes its buffer is laid out by;
 * by default the loop domain for on-chip memory and the logical domain,
 * row-major, for global memory). */
#ifndef TC_FUSION_H
#define TC_FUSION_H

#include <stdarg.h>
#include <stdbool.h>

#include "tilec/tilec.h"
#include "../layout/domain.h"
#include "../layout/coord.h"

typedef enum tc_op_kind {
  TC_OP_SET, TC_OP_UNARY, TC_OP_BINARY, TC_OP_CAST, TC_OP_PERMUTE,
  TC_OP_REDUCE,            /* sub: tc_reduce_op; the output's reduced logical
                              axes are reduction axes (tc_axis.reduction) */
  TC_OP_GATHER,            /* out = in[0] read along axis `sub` at the
                              positions in[1] (i32) holds */
  TC_OP_BROADCAST,         /* out = in[0] with new axes of extent 1: out
                              axis j is in[0]'s axis perm[j], or new (-1) */
  TC_OP_COMPARE,           /* sub: tc_compare_op; out (i8) = 1 or 0 */
  TC_OP_WHERE,             /* out = in[0] != 0 ? in[1] : in[2] */
  TC_OP_WELFORD_PART,      /* sub: TC_WELFORD_MEAN / _VAR of the Welford
                              state in[0] (a TC_REDUCE_WELFORD reduction) */
  TC_OP_MATMUL             /* out = sum over the last axis of f32(in[0]) *
                              f32(in[1]); both operands have out's rank and
                              broadcast (extent 1) where the other has M / N;
                              the last logical axis of out is a reduction
                              axis (sub: TC_REDUCE_SUM; matmul.c) */
} tc_op_kind;

/* A Welford reduction (tc_welford): a TC_OP_REDUCE whose sub is
 * TC_REDUCE_WELFORD and whose result is a state of three f32 values per
 * element, the running mean (the tensor's own buffer), M2 (the sum of
 * squared deviations, buffer <name>_m2) and the count (<name>_n), kept in
 * registers; the TC_OP_WELFORD_PART ops read the mean and M2 / count out
 * of it.  Internal: tc_reduce does not take it. */
enum { TC_REDUCE_WELFORD = TC_REDUCE_MIN + 1 };
enum { TC_WELFORD_MEAN, TC_WELFORD_VAR };
/* Whether t is a Welford state (made by tc_welford). */
bool tc_tensor_is_welford(const tc_tensor *t);

typedef struct tc_op {
  tc_op_kind kind;
  int sub;                 /* tc_unary_op / tc_binary_op */
  tc_ldst_type ldst;       /* SET: the instruction it becomes */
  tc_tensor *in[3];
  int nin;
  tc_tensor *out;
  int perm[16];            /* PERMUTE: out logical axis k is input axis perm[k] */
  bool has_scalar;         /* BINARY with one tensor: in[0] op scalar */
  double scalar;
  tc_tensor *scalar_in;    /* BINARY with a scalar input (tc_scalar_input):
                              in[0] op scalar_in, read at launch instead of
                              the constant (it is no operand in in[]: it has
                              no axes); scalar_left: scalar_in op in[0] */
  bool scalar_left;
} tc_op;

/* The most slots of a circular buffer (tc_circular_buffer). */
#define TC_CIRCULAR_MAX_STAGES 8

struct tc_tensor {
  tc_fusion *f;
  int id;
  char name[16];
  tc_dtype dtype;
  tc_memtype mem;
  int *logical, nlogical;
  int *loop, nloop;
  int *alloc, nalloc;      /* alloc_set == false: derived at lowering */
  bool alloc_set;
  int ca_pos;              /* compute-at (inline) position in the loop domain */
  int tmem_dimsep;         /* -1 when unset */
  tc_op *def;              /* NULL for inputs */
  bool is_input, is_output;
  bool is_scalar;          /* a scalar input: rank 0, passed by value */
  char label[32];          /* a scalar input's name (tc_scalar_input) */
  int macro;               /* a matmul accumulator's products: TC_MACRO_* (0: FMA) */
  int circular_stages;     /* tc_circular_buffer: slots of a shared tensor's ring
                              (0, 1: one buffer) */
  /* A global tensor (input or output) whose logical domain is the upper
   * dims of a coordinate-transform view (coord.h) of its buffer: element
   * u is at buffer offset tc_view_index(view, u) and exists where the
   * view's predicate holds (an input reads 0 elsewhere, an output writes
   * nothing there).  The buffer has view_elems elements.  NULL: the
   * logical domain row-major (tc_input_view, tc_output_view). */
  tc_view *view;
  int64_t view_elems;
};

struct tc_fusion {
  tc_dgraph g;
  tc_tensor **tensors;
  int ntensors, ctensors;
  tc_op **ops;
  int nops, cops;
  tc_tensor **inputs, **outputs;
  int ninputs, cinputs, noutputs, coutputs;
  char err[1024];
  char *sched_note;        /* what tc_schedule_auto chose (NULL: not used); any length */
  /* the size variables (tc_input_sym, tc_input_syms; docs/dynamic.md):
   * the scalar inputs that carry them, their divisors and bounds */
  tc_tensor *sym[TC_MAX_SIZE_VARS];
  int64_t sym_div[TC_MAX_SIZE_VARS], sym_bound[TC_MAX_SIZE_VARS];
  int nsym;
};

/* An input whose logical domain is the upper dims of view v (copied) over
 * a buffer of elems elements (implicit-GEMM operands: a convolution's
 * input seen as [G, gemmK, gemmN] through pad / embed / merge).  Every
 * offset the view reaches where its predicate holds must lie in
 * [0, elems).  NULL with the fusion's error on a bad view. */
tc_tensor *tc_input_view(tc_fusion *f, tc_dtype t, const tc_view *v, int64_t elems);
/* Makes output t store through view v (copied; its upper extents must be
 * t's logical extents) into a buffer of elems elements: the elements of
 * the buffer the view does not reach keep what the buffer held (the run
 * uploads it).  TC_ERR_ARGUMENT on a mismatch. */
tc_status tc_output_view(tc_tensor *t, const tc_view *v, int64_t elems);
/* The offset and validity expressions (in pool p) of view tensor t's
 * element at logical coordinates lv; *valid is NULL when always valid. */
void tc_tensor_view_index(const tc_tensor *t, tc_epool *p, const tc_expr *const *lv,
                          const tc_expr **offset, const tc_expr **valid);

/* Marks the logical axes that carry size variables: those the
 * tc_input_syms inputs name and every axis of a tensor an op makes from
 * one (tc_op_in_axis), with the divisor and the variable as
 * tc_axis.sym_div and sym_var.  Idempotent;
 * the lowering and tc_schedule_auto call it. */
void tc_fusion_mark_symbolic(tc_fusion *f);

/* Records an error message on the fusion and returns status. */
tc_status tc_fail(tc_fusion *f, tc_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void tc_clear_error(tc_fusion *f);
/* Sets the fusion's schedule note (tc_fusion_schedule_note), cut at its
 * size. */
void tc_set_schedule_note(tc_fusion *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A new tensor with fresh root axes of the given shape. */
tc_tensor *tc_tensor_new(tc_fusion *f, tc_dtype t, int ndims, const int64_t *shape);
/* A new tensor whose logical axis k has the extent of src's logical axis
 * perm[k] (perm NULL: the identity).  Which axes correspond across the op
 * that makes it is the op's to say (tc_op_in_axis), not the axes'. */
tc_tensor *tc_tensor_like(tc_fusion *f, const tc_tensor *src, const int *perm, tc_dtype t);
/* The extent of t's logical axis i as its consumers see it: 1 for a
 * reduced axis (a reduction keeps its rank: numpy's keepdims), else the
 * axis's extent. */
int64_t tc_logical_extent(const tc_tensor *t, int i);
/* Whether t has reduction axes in its logical domain (it is made by a
 * reduction). */
bool tc_tensor_is_reduction(const tc_tensor *t);
/* Whether op accumulates over reduction axes of its output (a reduction
 * or a matmul): its statement starts from an identity and combines. */
bool tc_op_reduces(const tc_op *op);
/* The logical axis of op input k that output logical axis j reads; -1
 * for an axis a broadcast adds. */
int tc_op_in_axis(const tc_op *op, int j);
/* Whether input k of op reads output axis j at a position the data
 * decides (a gather's data input along its axis): no axis of the input
 * iterates with it. */
bool tc_op_axis_gathered(const tc_op *op, int k, int j);
tc_op *tc_op_new(tc_fusion *f, tc_op_kind kind, int sub, tc_tensor *a, tc_tensor *b,
                 tc_tensor *out);
/* Operands of one rank whose extents agree where neither is 1 (a side
 * with 1 broadcasts): the result's shape in shape[0..rank).  On a
 * mismatch: false with the error recorded for call. */
bool tc_broadcast_shape(tc_fusion *f, const char *call, tc_tensor *const *ops, int n, int64_t *shape);

/* Whether t is from, or is computed from it through some chain of ops. */
bool tc_tensor_reads(const tc_tensor *t, const tc_tensor *from);

/* The ops that read t, in creation order; returns the count (out may be
 * NULL to only count). */
int tc_consumers(const tc_fusion *f, const tc_tensor *t, tc_op **out, int cap);

/* Ops in an order where every producer comes before its consumers, only
 * those that outputs depend on.  Caller frees. */
tc_op **tc_topo_order(const tc_fusion *f, int *n);

/* Resolves an axis argument (negative counts from the end) against n axes;
 * returns -1 if out of range. */
int tc_norm_axis(int axis, int n);
/* Resolves a position argument in [0, n] (negative: pos + n + 1). */
int tc_norm_pos(int pos, int n);

/* Describes the tensor's schedule as tc_tensor_describe does (tilec.h): its
 * loop domain with the compute-at mark, e.g. "T2[iBIDx{2}, (CA), iS{4}]",
 * its allocation domain when it has one of its own, and the tensor-memory
 * dim-sep. */
void tc_tensor_loop_str(const tc_tensor *t, tc_str *out);

/* The error of a scheduling call: records "CALL: <message> (CONTEXT)" on
 * f (the message cut at 699 bytes) and returns status. */
tc_status tc_vfail_call(tc_fusion *f, tc_status status, const char *call, const char *context,
                        const char *fmt, va_list ap);
/* tc_vfail_call on t's fusion with t's loop domain (tc_tensor_loop_str)
 * as the context. */
tc_status tc_tensor_vfail(const tc_tensor *t, tc_status status, const char *call, const char *fmt,
                          va_list ap);
tc_status tc_tensor_fail(const tc_tensor *t, tc_status status, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Clears f's error, then fails call (TC_ERR_SCHEDULE) where t is a fusion
 * input: only computed tensors have a loop to schedule. */
tc_status tc_tensor_check_computed(const tc_tensor *t, const char *call);
/* Sets t's allocation domain to axes[0..n) (a copy). */
void tc_tensor_set_alloc(tc_tensor *t, const int *axes, int n);

/* ---- structural hash (hash.c) ------------------------------------------ */

/* Bump when lowering or printing changes the kernel made from the same
 * schedule, so that on-disk kernel cache entries of older builds miss. */
#define TC_CODEGEN_FORMAT 34

/* A 128-bit non-cryptographic hash, two 64-bit lanes. */
typedef struct tc_hasher {
  uint64_t a, b;
} tc_hasher;

void tc_hasher_init(tc_hasher *h);
void tc_hasher_u64(tc_hasher *h, uint64_t v);
void tc_hasher_bytes(tc_hasher *h, const void *p, size_t n);
/* Hashes the length and the bytes of s (NULL hashes differently from ""). */
void tc_hasher_str(tc_hasher *h, const char *s);
/* The finished hash as 32 lowercase hex digits plus NUL. */
void tc_hasher_hex(const tc_hasher *h, char out[33]);

/* The canonical hash of a scheduled fusion compiled for target/arch under
 * kernel_name: every tensor (in id order), axis, transform and op of the
 * fusion, the input/output lists, plus TILEC_VERSION and
 * TC_CODEGEN_FORMAT.  Two fusions built by the same sequence of calls hash
 * equal; any difference in the schedule (a split factor, a parallel type, a
 * memory type, an inline position ...) changes it.  Writes 32 hex digits. */
void tc_fusion_hash(const tc_fusion *f, tc_target target, const char *arch,
                    const char *kernel_name, char out[33]);

#endif
