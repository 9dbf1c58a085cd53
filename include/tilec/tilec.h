/* tilec.h - the public C API of tilec, a compiler for tile-level GPU kernels.
 *
 * A program is a fusion (tc_fusion): input tensors, operations on them and
 * output tensors.  A schedule rewrites each tensor's loop domain (split,
 * merge, reorder, swizzle), binds axes to parallel types (blocks, threads,
 * vector lanes), chooses memory types and inlining positions.  tc_compile
 * lowers the scheduled fusion to one kernel and prints it for a target;
 * tc_kernel_run runs it (OpenCL; CUDA where a device exists).
 *
 * Errors: every call that can fail returns a tc_status; the fusion (or
 * kernel) keeps a message naming the tensor, the axis and the reason,
 * read with tc_fusion_error / tc_kernel_error.  Tensors are owned by their
 * fusion; axes are referred to by position in a tensor's loop domain
 * (negative positions count from the end, as in Python). */
#ifndef TILEC_H
#define TILEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TILEC_VERSION "0.1.0"

typedef enum tc_status {
  TC_OK = 0,
  TC_ERR_ARGUMENT,    /* a bad argument: axis out of range, bad factor ... */
  TC_ERR_SCHEDULE,    /* a schedule that cannot be honoured */
  TC_ERR_LOWER,       /* the schedule is valid but the kernel cannot be built
                         (e.g. not enough tensor memory) */
  TC_ERR_COMPILE,     /* the device compiler rejected the generated source */
  TC_ERR_RUNTIME,     /* the device failed to run the kernel */
  TC_ERR_NO_DEVICE,   /* no device / driver for the requested target */
  TC_ERR_UNSUPPORTED, /* a feature this build or target does not have */
  TC_ERR_TIMEOUT      /* a kernel ran longer than $TILEC_RUN_TIMEOUT_MS allows */
} tc_status;

/* A few words for the status ("invalid schedule" for TC_ERR_SCHEDULE). */
const char *tc_status_name(tc_status s);

/* Element types.  tc_dtype_size gives the bytes of one element (4, 2, 2,
 * 4, 1), tc_dtype_name its short name ("f32", "bf16"). */
typedef enum tc_dtype { TC_F32, TC_F16, TC_BF16, TC_I32, TC_I8 } tc_dtype;
size_t tc_dtype_size(tc_dtype t);
const char *tc_dtype_name(tc_dtype t);

/* Where a tensor lives (tc_set_memory_type); tc_memtype_name gives the
 * name used in messages ("shared"). */
typedef enum tc_memtype {
  TC_MEM_GLOBAL,
  TC_MEM_SHARED,
  TC_MEM_LOCAL,  /* registers, private to a thread */
  TC_MEM_TENSOR  /* Blackwell tensor memory: lanes x columns */
} tc_memtype;
const char *tc_memtype_name(tc_memtype m);

/* What a loop axis is bound to (tc_parallelize): nothing (TC_SERIAL, a
 * plain loop, the default), the blocks (BID*), the threads of a block
 * (TID*) or the devices (DID*) of the launch, vector lanes, or an unrolled
 * loop.  tc_ptype_name gives the name used in loop domains and messages
 * ("TIDx"). */
typedef enum tc_ptype {
  TC_SERIAL = 0,
  TC_BIDX, TC_BIDY, TC_BIDZ,
  TC_TIDX, TC_TIDY, TC_TIDZ,
  TC_DIDX, TC_DIDY, TC_DIDZ,
  TC_VECTORIZE,
  TC_UNROLL
} tc_ptype;
const char *tc_ptype_name(tc_ptype p);

/* The instruction a load/store (set) op is lowered to.  DEFAULT is a plain
 * element copy; the others are filled in by the data-movement work.
 *
 * The four matrix types are the warp-collective m8n8 .b16 copies between
 * shared memory and registers: ldmatrix (shared -> registers) and stmatrix
 * (registers -> shared, CUDA sm_90+), plain or .trans.  The set's
 * innermost loop must be a Vectorize axis of 2, 4 or 8 16-bit elements:
 * one thread's share of one, two or four 8x8 matrices, so the vector width
 * chooses .x1, .x2 or .x4.  The _TRANS types choose .trans: lane l's
 * register for matrix j holds column l/4, rows 2(l%4) and 2(l%4)+1 of
 * the matrix in shared memory instead of row l/4, columns 2(l%4) and
 * 2(l%4)+1.  The row addresses are derived from the schedule and checked;
 * a register side that is not the chosen fragment is an error naming the
 * first wrong register (docs/ldmatrix.md).  The OpenCL target emulates all
 * of them; HIP has none. */
typedef enum tc_ldst_type {
  TC_LDST_DEFAULT,
  TC_LDST_CP_ASYNC,
  TC_LDST_BULK_TENSOR, /* TMA tile load/store */
  TC_LDST_LDMATRIX,
  TC_LDST_LDMATRIX_TRANS,
  TC_LDST_STMATRIX,
  TC_LDST_TMEM_LOAD,
  TC_LDST_TMEM_STORE,
  TC_LDST_STMATRIX_TRANS
} tc_ldst_type;

typedef enum tc_unary_op {
  TC_NEG, TC_ABS, TC_RELU, TC_EXP, TC_LOG, TC_SQRT, TC_TANH, TC_SIGMOID,
  TC_RECIPROCAL,
  TC_GELU,   /* the tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
  TC_SILU    /* x * sigmoid(x) */
} tc_unary_op;

typedef enum tc_binary_op {
  TC_ADD, TC_SUB, TC_MUL, TC_DIV, TC_MAX, TC_MIN
} tc_binary_op;

typedef enum tc_swizzle_type {
  TC_SWIZZLE_XOR /* nvFuser's Xor(x, y) = {x, x ^ y} on two axes */
} tc_swizzle_type;

/* What tc_compile prints: OpenCL C, CUDA C++ or HIP C++.  tc_target_name
 * gives its name ("opencl", "cuda", "hip"). */
typedef enum tc_target {
  TC_TARGET_OPENCL,
  TC_TARGET_CUDA,
  TC_TARGET_HIP
} tc_target;
const char *tc_target_name(tc_target t);

typedef struct tc_fusion tc_fusion;
typedef struct tc_tensor tc_tensor;
typedef struct tc_kernel tc_kernel;

/* ---- building a fusion ------------------------------------------------ */

/* tc_fusion_new makes an empty fusion; tc_fusion_free frees one with its
 * tensors (kernels compiled from it stay valid). */
tc_fusion *tc_fusion_new(void);
void tc_fusion_free(tc_fusion *f);
/* The last error message of a call on this fusion ("" when none). */
const char *tc_fusion_error(const tc_fusion *f);

/* A contiguous row-major input of the given shape (every extent >= 1). */
tc_tensor *tc_input(tc_fusion *f, tc_dtype t, int ndims, const int64_t *shape);
/* A scalar input named `name` (a C identifier of at most 31 characters,
 * unique among the fusion's scalars) of dtype t, TC_F32 or TC_I32: a value
 * given at each launch, not compiled into the kernel, so one kernel (and
 * one kernel-cache entry: the key has the name, never the value) serves
 * every value (LayerNorm's eps, a scale).  It is an input like the
 * others, in the order added: a kernel parameter passed by value, its
 * args[i] for tc_kernel_run and tc_reference_run pointing at the value (4
 * bytes; tc_kernel_param_bytes says so); a NULL there is TC_ERR_ARGUMENT
 * naming the scalar.  It has rank 0 and is an operand of tc_binary only
 * (either side), where it applies to every element of the other operand,
 * a tensor: an f32 scalar with f32 / f16 / bf16 tensors (computed in f32,
 * as tc_binary_scalar), an i32 scalar with i32 / i8 tensors.  NULL on a
 * bad name or dtype. */
tc_tensor *tc_scalar_input(tc_fusion *f, const char *name, tc_dtype t);
/* A contiguous row-major input whose leading extent is the size variable
 * `name` (rows, tokens, batch: Triton's size arguments), given at each
 * launch: one kernel (and one kernel-cache entry: the key has the name,
 * divisor and bound, never the value) serves every value
 * (docs/dynamic.md).  shape[1..ndims) are fixed extents; shape[0] is the
 * variable's upper bound, a multiple of divisor, or -1 for the largest
 * that keeps every tensor under 2^31 elements.  divisor (>= 1; 1: none)
 * is a number every value is a multiple of.  The variable is a kernel
 * parameter like a scalar input (tc_scalar_input: i32, by value), added
 * before the first input that names it; tc_kernel_run_sizes fills it.
 * Inputs that share a variable give the same name, divisor and bound
 * (else TC_ERR_UNSUPPORTED; shape[0] -1 after the first input takes the
 * variable's bound); up to 4 variables per fusion (tc_input_syms puts
 * them on other axes).  Every axis an op makes from a leading
 * axis of extent M has extent M too.  This slice compiles pointwise
 * fusions, the automatic reduction schedules (tc_schedule_auto: softmax
 * and RMSNorm rows, a row of N elements, column sums over M) and the
 * matmul schedules with M, N or K open (tc_schedule_matmul; not wgmma):
 * the variable is not moved by a permute, its axes (rounded-up splits
 * with predicates, merges with fixed axes) are serial loops to the
 * extent over the parameters or bound to block indices, and no shared or
 * register allocation depends on it; tc_compile refuses anything else
 * (an unrolled, vector or thread loop over M, a grid reduction over M,
 * a permute that moves M) with a message (docs/dynamic.md).
 * tc_kernel_param_bytes and tc_kernel_tensor_allocation describe such a
 * kernel's symbolic buffers at the bound; tc_reference_run refuses the
 * fusion (TC_ERR_UNSUPPORTED: it takes fixed shapes).  NULL on a bad
 * name, rank, extent, divisor or bound. */
tc_tensor *tc_input_sym(tc_fusion *f, tc_dtype t, int ndims, const int64_t *shape, const char *name,
                        int64_t divisor);
/* The name of the size variable that t's leading extent is (a
 * tc_input_sym input, or a tensor ops make from one along that axis), or
 * NULL where the extent is a number (its tc_tensor_extent is then the
 * extent; for a symbolic one it is the bound). */
const char *tc_tensor_size_var(const tc_tensor *t);
/* The same for logical axis `axis` of t (tc_input_syms names variables
 * on any axes): the variable's name, or NULL where that extent is a
 * number or axis is out of range. */
const char *tc_tensor_axis_size_var(const tc_tensor *t, int axis);
/* The value of size variable `name` as a scalar input of the fusion
 * (i32: the kernel parameter tc_kernel_run_sizes fills), for ops that
 * need an extent known only at launch.  Like any scalar input it is an
 * operand of tc_binary only, where a float tensor takes it as a float: a
 * mean over a row of N elements is tc_binary(f, TC_DIV, sum,
 * tc_size_var_value(f, "N")).  NULL (TC_ERR_ARGUMENT) where no input
 * names it. */
tc_tensor *tc_size_var_value(tc_fusion *f, const char *name);
/* tc_input_sym with a size variable on any axes: names[i] (NULL: axis i
 * is the fixed extent shape[i]) names the variable of axis i, a multiple
 * of divisors[i] (divisors NULL: 1), at most shape[i] (-1: the bound of
 * a variable an earlier input named; with one new variable, the largest
 * that keeps the input under 2^31 elements).  Up to 4 variables per
 * fusion, e.g. M and N of a GEMM (A [M, K], B [K, N]), each an i32
 * kernel parameter added before the first input that names it;
 * tc_kernel_run_sizes takes their values in that order.  Global strides
 * over a variable are products over its parameter.  NULL on a bad name,
 * rank, extent, divisor or bound, or a variable named again with another
 * divisor or bound. */
tc_tensor *tc_input_syms(tc_fusion *f, tc_dtype t, int ndims, const int64_t *shape,
                         const char *const *names, const int64_t *divisors);
/* Makes t an output of the fusion: the kernel writes it to a contiguous
 * row-major buffer.  Kernel parameters are the inputs, then the outputs,
 * each in the order they were added. */
tc_status tc_add_output(tc_fusion *f, tc_tensor *t);

/* New tensors computed from others, element by element, of the operands'
 * shape: tc_set copies (a load or store, when the two are in different
 * memories), tc_unary and tc_binary apply an op, tc_cast converts to
 * another dtype.  Each new tensor starts in local memory, with a loop
 * domain that is its logical domain.
 *
 * What the ops compute: the same on every target and in tc_reference_run.
 *
 * Floating-point ops compute in f32 with IEEE 754 arithmetic (round to
 * nearest even, denormals kept, x / 0 = +-inf, 0 / 0 = NaN) and round the
 * result to the output's dtype.  EXP, LOG, SQRT and TANH are the C math
 * functions (log(+-0) = -inf, log and sqrt of x < 0 are NaN, sqrt(-0) =
 * -0, tanh(+-inf) = +-1); SIGMOID is 1 / (1 + exp(-x)) in f32: 1 at +inf,
 * 0 at -inf and below about -88.7 (where exp(-x) overflows).  Results may
 * be off by the error the target's math library allows (OpenCL 1.2: 3 ulp
 * for exp, log and sqrt, 5 for tanh, 2.5 for division).  A NaN result has
 * no particular sign or payload.
 *
 * MIN, MAX and RELU of floats are IEEE 754 minNum / maxNum, C's fmin /
 * fmax: a NaN operand is ignored, so min(1, NaN) = min(NaN, 1) = 1, and
 * RELU(x) = max(x, 0) makes RELU(NaN) = 0; only two NaNs give NaN.  Of -0
 * and +0 either may come back: the sign of a zero result of MIN, MAX or
 * RELU(-0) is unspecified (tc_reference_run gives -0 for MIN, +0 for MAX).
 *
 * Integer ops (i32, i8) compute in 32-bit two's complement and wrap on
 * overflow: INT_MAX + 1 = INT_MIN, NEG and ABS of INT_MIN are INT_MIN;
 * an i8 result keeps the low 8 bits (127 + 1 = -128).  DIV truncates
 * toward zero, x / 0 = 0 and INT_MIN / -1 = INT_MIN.
 *
 * tc_cast from a float to an integer truncates toward zero and saturates
 * to the target's range, NaN -> 0 (inf -> INT_MAX, 300.0 -> 127 as i8);
 * integer to integer wraps (300 -> 44 as i8); integer to float rounds to
 * nearest even, to f16 and bf16 through f32 (65520 -> inf as f16); float
 * to float rounds to nearest even, beyond the target's range to +-inf. */
tc_tensor *tc_set(tc_fusion *f, tc_tensor *in);
tc_tensor *tc_unary(tc_fusion *f, tc_unary_op op, tc_tensor *in);
tc_tensor *tc_binary(tc_fusion *f, tc_binary_op op, tc_tensor *a, tc_tensor *b);
tc_tensor *tc_cast(tc_fusion *f, tc_tensor *in, tc_dtype to);
/* out[i_perm[0], ..., ] = in[...]: output logical axis k is input axis
 * perm[k] (a transpose for perm = {1, 0}). */
tc_tensor *tc_permute(tc_fusion *f, tc_tensor *in, const int *perm);
/* These return NULL (message in tc_fusion_error) on bad arguments, e.g.
 * operands of different shapes.
 *
 * Broadcasting: tc_binary's operands have the same rank; along an axis
 * where one has extent 1 (a reduced axis counts as 1) and the other n, the
 * first is read at index 0 for every one of the n elements (numpy's
 * broadcasting without the rank extension).  One operand of tc_binary may
 * be a scalar input (tc_scalar_input), which applies to every element. */

/* a op value, element by element, with the scalar a compile-time constant
 * of a's type (rounded to f32 for floats; an integer for i32 / i8). */
tc_tensor *tc_binary_scalar(tc_fusion *f, tc_binary_op op, tc_tensor *a, double value);

/* in with new axes of extent 1: the result has rank ndims, its axis j is
 * new where is_new[j] and else in's next axis (numpy's expand_dims); a
 * new axis broadcasts in tc_binary like any axis of extent 1. */
tc_tensor *tc_broadcast(tc_fusion *f, tc_tensor *in, int ndims, const bool *is_new);
/* A copy of in with its axes of extent 1 expanded to shape[0..ndims)
 * (ndims is in's rank; every other axis keeps its extent). */
tc_tensor *tc_expand(tc_fusion *f, tc_tensor *in, int ndims, const int64_t *shape);

/* out[..., i, ...] = in[..., index[..., i, ...], ...] along `axis`
 * (negative counts from the end), as torch.gather: the index is an i32
 * tensor of in's rank with in's extents except along axis, and the result
 * has the index's shape and in's dtype.  An index outside [0, extent) reads
 * 0 (no access outside in).  in must stay in global memory (a fusion input
 * or output): the kernel reads it at positions only the data knows.
 * Cross-entropy reads the label's logit this way. */
tc_tensor *tc_gather(tc_fusion *f, tc_tensor *in, int axis, tc_tensor *index);

typedef enum tc_compare_op { TC_LT, TC_LE, TC_GT, TC_GE, TC_EQ, TC_NE } tc_compare_op;

/* a op b element by element, broadcasting as tc_binary does, as an i8
 * mask: 1 where it holds, 0 where not.  Floats compare as IEEE 754 says:
 * every comparison with a NaN is false except NE (true); -0 == +0. */
tc_tensor *tc_compare(tc_fusion *f, tc_compare_op op, tc_tensor *a, tc_tensor *b);
/* cond != 0 ? a : b element by element (cond of any dtype; a and b of one
 * dtype, which the result has), the three broadcasting as tc_binary's
 * operands do. */
tc_tensor *tc_where(tc_fusion *f, tc_tensor *cond, tc_tensor *a, tc_tensor *b);

typedef enum tc_reduce_op {
  TC_REDUCE_SUM, TC_REDUCE_MAX, TC_REDUCE_MIN
} tc_reduce_op;

/* Reduces `in` over its logical axes axes[0..naxes) (negative counts from
 * the end) with op: a sum, or the max / min with MAX and MIN's semantics
 * (a NaN element is ignored).  The result keeps the rank: a reduced axis
 * has extent 1 to the result's consumers (numpy's keepdims), so that
 * tc_binary broadcasts it against the unreduced tensor (x - max(x)).  In
 * the result's own loop domain the reduced axes are reduction axes
 * (printed "r", e.g. rS{1024}), scheduled like any axis: split, reordered
 * (reduction axes innermost of the serial loops), parallelized; one bound
 * to a thread axis (TIDx, TIDy or TIDz) makes a block reduction, whose
 * result every thread of the block then holds (the tensor must be in
 * local memory).  16-bit floats accumulate and return f32, i8 i32; the
 * sum adds in the loop order of the schedule, so results differ from a
 * different order by rounding.  The identity of an empty axis cannot
 * arise (extents are >= 1). */
tc_tensor *tc_reduce(tc_fusion *f, tc_reduce_op op, tc_tensor *in, int naxes, const int *axes);

/* The mean and the variance of `in` (f32, f16 or bf16) over its logical
 * axes axes[0..naxes) in one pass, by Welford's algorithm: each element
 * updates a running mean, M2 (the sum of squared deviations from it) and
 * a count, and partial states merge with Chan et al.'s formula (n = na +
 * nb, d = mb - ma, mean = ma + d * nb / n, M2 = M2a + M2b + d^2 * na * nb
 * / n), so no sum of squares loses the variance to cancellation when the
 * mean is large.  Returns the state, a reduction (keepdims, reduction
 * axes in its loop domain, f32) scheduled like any tc_reduce result (its
 * block merge: warp shuffles or shared memory), which lives in registers
 * (local memory) and cannot be an output or be cached; *mean and *var are
 * the mean and the population variance M2 / n (LayerNorm's, divided by
 * the count, not n - 1), f32 tensors of the state's shape to use like any
 * reduction's result.  NULL (and *mean, *var NULL) on bad arguments. */
tc_tensor *tc_welford(tc_fusion *f, tc_tensor *in, int naxes, const int *axes, tc_tensor **mean,
                      tc_tensor **var);
/* The matrix product of a [M, K] and b [K, N], or of a batch of them (a
 * [B, M, K], b [B, K, N]): a tensor of shape [M, N] ([B, M, N]).  K is a
 * reduction axis: the product is made by an op whose result (the
 * accumulator, tc_matmul_accumulator) has the logical domain [M, N, rK]
 * ([B, M, N, rK]), rK a reduction axis that its consumers see with
 * extent 1 (the keepdims model of tc_reduce), and the tensor returned
 * drops that axis.  Operands are f32, f16 or bf16, both of one dtype; the
 * products are formed and summed in f32 and the result is f32 (cast it
 * with tc_cast for f16 / bf16).  A transposed operand is a tc_permute of
 * it: matmul reads the permuted tensor's source in place (the permute is
 * folded into the operand).  An operand made from a fusion input by
 * casts, unary ops, ops with a constant scalar and permutes (f32 inputs
 * cast to f16, say) is read from the input with those ops made again
 * on the operand's view, so that a matmul schedule computes them as it
 * stages the operand.  Shapes that do not agree, ranks other than 2 and
 * 3 and integer operands are refused (NULL, TC_ERR_ARGUMENT). */
tc_tensor *tc_matmul(tc_fusion *f, tc_tensor *a, tc_tensor *b);
/* The accumulator of the matmul that made t (t as tc_matmul returned
 * it): the [M, N, rK] tensor that a schedule splits and binds; NULL when
 * t is not a matmul's result. */
tc_tensor *tc_matmul_accumulator(tc_tensor *t);

/* The tensor's name as it appears in kernels and messages ("T3"). */
const char *tc_tensor_name(const tc_tensor *t);
/* Its element type. */
tc_dtype tc_tensor_dtype(const tc_tensor *t);
/* The rank and the extents of its logical domain (its shape);
 * tc_tensor_extent is -1 for an axis out of range. */
int tc_tensor_ndims(const tc_tensor *t);
int64_t tc_tensor_extent(const tc_tensor *t, int logical_axis);
/* tc_tensor_nloop is the rank of its loop domain; tc_tensor_loop_extent
 * and tc_tensor_loop_ptype are the extent and the parallel type of loop
 * axis `axis` (-1 and TC_SERIAL for an axis out of range). */
int tc_tensor_nloop(const tc_tensor *t);
int64_t tc_tensor_loop_extent(const tc_tensor *t, int axis);
tc_ptype tc_tensor_loop_ptype(const tc_tensor *t, int axis);
/* Writes the tensor's schedule as text into buf (cut to cap bytes) and
 * returns buf: its loop domain, each axis as i<parallel type>{extent}
 * (S: serial, V: vectorized, U: unrolled), e.g. "T2[iBIDx{2}, (CA), iS{4}]".  "(CA)" stands at the
 * compute-at (inline) position: before the first axis that is not shared
 * with the consumer, after the last one when all are (tc_inline_at(t,
 * tc_tensor_nloop(t))), absent when none is.  When the tensor has an
 * allocation domain of its own that is not its loop domain, " alloc[...]"
 * follows with its axes.  For a tensor in tensor memory, "(DS)" stands at
 * the dim-sep position of the allocation domain (tc_set_tmem_dimsep):
 * "T2[iTIDx{128}, (DS), iS{32}]" has 128 lanes of 32 elements. */
const char *tc_tensor_describe(const tc_tensor *t, char *buf, size_t cap);

/* ---- scheduling ------------------------------------------------------- */

/* Splits loop axis `axis` by `factor` into (outer, inner) when inner_split
 * is non-zero (inner extent == factor), or (factor, rest) otherwise.  A
 * factor that does not divide the extent makes the outer extent a ceiling
 * and adds a predicate. */
tc_status tc_split(tc_tensor *t, int axis, int64_t factor, int inner_split);
/* Merges the adjacent loop axes a and b == a + 1 into one (a outer). */
tc_status tc_merge(tc_tensor *t, int a, int b);
/* Moves loop axes: old_pos[i] goes to new_pos[i]; the others keep their
 * relative order. */
tc_status tc_reorder(tc_tensor *t, int n, const int *old_pos, const int *new_pos);
/* Swizzles two loop axes: XOR gives {x, x ^ y}.  The y extent must be a
 * power of two no smaller than the x extent. */
tc_status tc_swizzle(tc_tensor *t, tc_swizzle_type type, int x, int y);
/* Applies CuTe's Swizzle<B,M,S> to one loop axis taken as a linear
 * offset: x ^ ((x & (((1 << B) - 1) << (M + S))) >> S).  Needs 0 <= B <= S
 * and an extent that is a multiple of 2^(B+M+S). */
tc_status tc_swizzle_cute(tc_tensor *t, int axis, int b, int m, int s);
/* Resizes (pads) loop axis `axis` by left/right elements (negative values
 * crop); padded positions read as zero. */
tc_status tc_resize(tc_tensor *t, int axis, int64_t left, int64_t right);
/* Binds loop axis `axis` to p: blocks (TC_BIDX ...) or threads (TC_TIDX
 * ...) of the launch, vector lanes (TC_VECTORIZE: the innermost axis, a
 * power of two of at most 16 bytes, 512 next to tensor memory, 16 lanes
 * of at most 64 bytes in local memory, where it is an unrolled loop over
 * the thread's registers), an unrolled loop (TC_UNROLL), or
 * nothing: TC_SERIAL makes the axis a plain loop again, undoing an earlier
 * binding (the launch loses that dimension when no other tensor binds
 * it).  Two axes of a tensor cannot have the same block, thread or vector
 * binding.  A tensor read by a consumer in another thread or block must
 * be bound alike (tc_parallelize_all_like copies a tensor's bindings,
 * TC_SERIAL included, to the mapped axes of all others). */
tc_status tc_parallelize(tc_tensor *t, int axis, tc_ptype p);
/* Places an intermediate tensor in shared, local (the default) or tensor
 * memory.  Inputs and outputs live in global memory; to stage one
 * elsewhere, cache it (tc_cache_after, tc_cache_before) and place the
 * cache. */
tc_status tc_set_memory_type(tc_tensor *t, tc_memtype m);
/* Circular buffering (nvFuser's circularBuffer): t, a tensor in shared
 * memory computed at a serial loop (tc_compute_at; a matmul's operand tile
 * at its K-tile loop), gets `stages` slots instead of one.  Before the loop
 * the copies of its first stages - 1 iterations are issued; iteration k
 * waits until its own tile has arrived, passes a barrier (after which no
 * thread still reads the slot of iteration k - 1), issues the copy of
 * iteration k + stages - 1 into slot (k + stages - 1) % stages (none past
 * the loop's end) and then computes on slot k % stages.  On CUDA sm_80+ a
 * plain copy from global memory becomes cp.async (4 bytes per element, or
 * 8 / 16 for a vectorized run that is contiguous and aligned), one commit
 * group per iteration, cp.async.wait_group(stages - 2) before the barrier;
 * other copies (a cast on the way) and the other targets copy
 * synchronously in the same ring.  Where the loop's products are wgmma
 * (the matmul's wgmma op type) and stages >= 3, each K tile's wgmma group
 * is left running into the next iteration (wgmma.wait_group 1, then 0
 * after the loop), so the copies go stages - 2 iterations ahead and wait
 * with stages - 3 groups pending.  stages 1 undoes it.  TC_ERR_ARGUMENT
 * for stages outside 1 .. 8; a tensor that is not in shared memory, not
 * computed at a serial loop, or read outside that loop is refused when
 * compiling, as is shared memory over the arch's limit (the tensor's
 * allocation is stages times as large). */
tc_status tc_circular_buffer(tc_tensor *t, int stages);
/* Chooses the instruction that the set (tc_set) making t becomes. */
tc_status tc_set_ldst_type(tc_tensor *t, tc_ldst_type op);
/* Inlines the tensor into its consumer at loop position pos: loop axes
 * [0, pos) are shared with the consumer's. */
tc_status tc_inline_at(tc_tensor *t, int pos);
/* Replays the consumer's loop transforms on the producer and inlines at
 * pos (nvFuser's computeAt). */
tc_status tc_compute_at(tc_tensor *producer, tc_tensor *consumer, int pos);
/* Inlines every intermediate tensor as deep as its consumers allow, but
 * not so deep that the serial loops it joins could not run in any order:
 * a tensor outside a loop that reads from a tensor inside it and is read
 * by another (a reduction's result, computed outside the loop of its
 * operand and read back, broadcast, inside it), or a reduction's own
 * reduction loop shared with an op computed from its result.  Such a
 * joining tensor, read on both sides, is inlined only up to that loop:
 * softmax's exp(x - max), read by the sum and by the division, is
 * computed whole, outside the sum's reduction loop (nvFuser's persistent
 * buffer). */
tc_status tc_inline_most(tc_fusion *f);
/* Schedules every tensor of an unscheduled fusion for target / arch, from
 * its ops and shapes (nvFuser's pointwise, reduction and normalization
 * schedulers): no reduction: the output's elements in blocks of 128
 * threads; reductions of the last axes (softmax, RMSNorm): one row per
 * block (several on TIDy for rows under 128 threads), the row split over
 * T threads on TIDx (a power of two, at most 1024, for at most 16
 * elements each where the row allows) and held in registers between the
 * block reductions and the normalization while that is at most 64 bytes
 * per thread, else in shared memory where the arch's holds it, else
 * recomputed from global memory in each pass (two-pass); one reduction to a value per row of fewer than 64 rows of
 * more than 16384 elements: a grid reduction (the row over blocks on
 * BIDx, the blocks' partials combined in a fixed order by the last block
 * to finish: deterministic); reductions of leading axes
 * (column sums): a column per thread, reduced serially; a matmul and the
 * ops after it: tc_schedule_matmul's tiled kernel.  Every reduction
 * must reduce the same axes, and every tensor have the output's rank;
 * else TC_ERR_UNSUPPORTED with a message.  A reduction that is an output
 * reduces into registers and is copied out (tc_cache_before).  Where any
 * tensor is already scheduled, the user's schedule wins: nothing changes.
 * The choice is the fusion's schedule note. */
tc_status tc_schedule_auto(tc_fusion *f, tc_target target, const char *arch);

/* The tiles of a matmul schedule (tc_schedule_matmul): a block computes
 * a bm x bn tile of the result, bk deep K tiles of both operands at a
 * time staged in shared memory, each thread a tm x tn tile of f32
 * accumulators in registers ((bm / tm) x (bn / tn) threads). */
/* The op type of a matmul's products (tc_matmul_tiles.macro): FMA outer
 * products per thread (the default); NVIDIA's warp-level mma.sync
 * m16n8k16 with f16/bf16 operands and f32 accumulators (CUDA sm_80+);
 * AMD's wavefront-level MFMA v_mfma_f32_32x32x8 / 16x16x16 with f16/bf16
 * operands and f32 accumulators (HIP gfx90a, gfx94x); or NVIDIA's
 * warp-group wgmma m64nNk16 with A and B read from shared memory through
 * matrix descriptors (CUDA sm_90a).  OpenCL emulates each instruction
 * with the same lane layouts (docs/matmul.md). */
typedef enum tc_matmul_macro {
  TC_MACRO_FMA = 0,
  TC_MACRO_MMA_M16N8K16 = 1,
  TC_MACRO_MFMA_32X32X8 = 2,
  TC_MACRO_MFMA_16X16X16 = 3,
  TC_MACRO_WGMMA = 4
} tc_matmul_macro;

typedef struct tc_matmul_tiles {
  int64_t bm, bn, bk, tm, tn;
  /* with TC_MACRO_MMA_M16N8K16, tm x tn is each warp's tile (a multiple
   * of 16 x 8) and bk a multiple of 16; with the MFMA macros each
   * wavefront's (a multiple of 32 x 32, bk of 8; 16 x 16, bk of 16); with
   * TC_MACRO_WGMMA each warp group's tile: tm 64, tn the instruction's N
   * (a multiple of 8 up to 256), bk a multiple of 16 */
  tc_matmul_macro macro;
  /* slots of the A and B tiles' rings in shared memory (tc_circular_buffer):
   * 0 or 1 one buffer per operand (copy, barrier, products, barrier per K
   * tile), 2 to 8 the copies of K tiles k+1 .. k+stages-1 in flight while
   * tile k is multiplied (cp.async on CUDA sm_80+; with wgmma and 3 or
   * more stages k+1 .. k+stages-2, while tile k - 1's wgmma may still run) */
  int stages;
} tc_matmul_tiles;

/* Schedules an unscheduled fusion that holds one tc_matmul and ops after
 * it that map onto its result's elements (its epilogue: bias, scaling,
 * residual adds, activations, a cast) into one tiled kernel: the result's
 * tile on BIDy x BIDx (a batch on BIDz), the threads on TIDy x TIDx with
 * their accumulators in registers, computed as FMA outer products over K
 * loops; per K tile each block copies its tiles of A and B to shared
 * memory (between barriers), per K step each thread its tm values of A
 * and tn of B to registers; the epilogue runs on each thread's
 * registers before the one store.  An operand's prologue (tc_matmul) is
 * computed as its tile is staged.  One tc_reduce of the result (or of an
 * epilogue op) over its rows or columns may be an output beside the
 * result, or alone: one block covers the reduced axis (at most 1024
 * long; tiles NULL then spans it, given tiles must) and combines its
 * threads' partials.  tiles NULL: chosen from the shapes
 * and dtype (tc_schedule_auto does this for a fusion with a matmul; for
 * f16 / bf16 operands on CUDA sm_80+ with neither a reduction of the
 * result nor ops before the matmul: mma.sync m16n8k16 with the A and B
 * tiles in rings of 2 or 3 stages, docs/matmul.md); the
 * edges that tiles do not divide are predicated.  The choice is the
 * fusion's schedule note.  TC_ERR_UNSUPPORTED for fusions it does not
 * schedule (two matmuls, other reductions, a reduced axis longer than
 * the block tile, an operand computed in the fusion other than by a
 * prologue over an input), TC_ERR_ARGUMENT for tiles that
 * do not nest (tm dividing bm, tn dividing bn, all >= 1); the shared
 * memory limit of the arch is checked when the kernel is compiled.  With
 * tiles->macro TC_MACRO_MMA_M16N8K16 the products are warp-wide mma.sync
 * m16n8k16 instead (warps on TIDy, their 32 lanes on TIDx, each warp a
 * tm x tn tile; f16 / bf16 operands; TC_ERR_UNSUPPORTED for f32 or HIP;
 * CUDA needs sm_80+, checked when compiling); with TC_MACRO_MFMA_32X32X8
 * or TC_MACRO_MFMA_16X16X16 wavefront-wide MFMA (wavefronts on TIDy,
 * their 64 lanes on TIDx; f16 / bf16 operands; TC_ERR_UNSUPPORTED for
 * f32 or CUDA; HIP needs an arch with MFMA, checked when compiling); with
 * TC_MACRO_WGMMA warp group-wide wgmma m64nNk16 (warp groups on TIDy,
 * their 128 threads on TIDx, A and B tiles K-major in shared memory, or
 * M- / N-major where the operand's rows are innermost in global memory;
 * CUDA needs sm_90a). */
tc_status tc_schedule_matmul(tc_fusion *f, tc_target target, const char *arch,
                             const tc_matmul_tiles *tiles);
/* What tc_schedule_auto chose, in words (the scheduler, rows, threads,
 * steps), also printed as a comment at the top of compiled kernels; ""
 * when it was not called. */
const char *tc_fusion_schedule_note(const tc_fusion *f);
/* Inlines every intermediate tensor at pos (inlineAllAt). */
tc_status tc_inline_all_at(tc_fusion *f, int pos);
/* Sets the tensor-memory dimension separator of the allocation domain:
 * axes left of it are lanes, axes right of it are columns. */
tc_status tc_set_tmem_dimsep(tc_tensor *t, int pos);
/* Uses the current loop domain as the allocation domain. */
tc_status tc_set_alloc_to_loop(tc_tensor *t);

/* t' = set(t) reading t; the consumers of t now read t'.  Returns t'. */
tc_tensor *tc_cache_after(tc_tensor *t);
/* t' = t's definition writing to a new tensor; t = set(t').  Returns t'. */
tc_tensor *tc_cache_before(tc_tensor *t);
/* Replays ref's loop transforms (from its logical domain) on every other
 * tensor of the fusion (TransformPropagator). */
tc_status tc_propagate_transforms(tc_tensor *ref);
/* Copies ref's parallel types to the mapped loop axes of all tensors. */
tc_status tc_parallelize_all_like(tc_tensor *ref);

/* ---- axes, abstract tensors and alternate domains ------------------------ */

/* Every axis of a fusion has an id (an int >= 0, unique in the fusion).
 * The loop and allocation domains of a tensor are lists of axes of its own
 * axis graph: the axes made from its logical domain by splits, merges,
 * swizzles and resizes.  The two domains may lie on different branches of
 * that graph (in LdStMatrixSet, docs/ldmatrix.md, the ldmatrix loop domain
 * comes from the warp tile and the shared-memory buffer is laid out by the
 * bulk-copy swizzle); indexing walks from the loop domain through the
 * logical domain to the allocation domain. */

/* The id of loop axis pos; -1 when out of range. */
int tc_tensor_loop_axis(const tc_tensor *t, int pos);
/* tc_tensor_nalloc is the rank of the allocation domain and
 * tc_tensor_alloc_axis the id of its axis pos (-1 when out of range).
 * Without an allocation domain of its own, a tensor's allocation domain is
 * its loop domain. */
int tc_tensor_nalloc(const tc_tensor *t);
int tc_tensor_alloc_axis(const tc_tensor *t, int pos);

/* tc_set_loop_domain (tc_set_alloc_domain) replaces t's loop (allocation)
 * domain by the n axes given by id.  They
 * must be axes of t's graph, each named once, that together determine
 * every logical axis and none of which is determined by the others (so
 * every element is visited, or stored, exactly once); an allocation axis
 * must also be computable from the logical domain, and t must not be in
 * global memory (laid out row-major by its logical domain).  The inline
 * position is clamped to the new loop rank. */
tc_status tc_set_loop_domain(tc_tensor *t, int n, const int *axes);
tc_status tc_set_alloc_domain(tc_tensor *t, int n, const int *axes);

/* nvFuser's AbstractTensor: a list of axes scheduled with split, merge and
 * reorder without changing any tensor; tc_set_loop_domain(t,
 * tc_abstract_tensor_rank(a), tc_abstract_tensor_axes(a)) installs the
 * result.  tc_abstract_tensor_new starts from t's loop domain,
 * tc_abstract_tensor_copy from another abstract tensor, and
 * tc_abstract_tensor_free frees one.  Errors go to the fusion's message
 * (tc_fusion_error).  Positions count from the end when negative, as for
 * tensors. */
typedef struct tc_abstract_tensor tc_abstract_tensor;
tc_abstract_tensor *tc_abstract_tensor_new(const tc_tensor *t);
tc_abstract_tensor *tc_abstract_tensor_copy(const tc_abstract_tensor *a);
void tc_abstract_tensor_free(tc_abstract_tensor *a);
int tc_abstract_tensor_rank(const tc_abstract_tensor *a);
const int *tc_abstract_tensor_axes(const tc_abstract_tensor *a);
/* tc_abstract_tensor_axis (tc_abstract_tensor_extent) is the id (extent)
 * of axis pos; -1 when out of range. */
int tc_abstract_tensor_axis(const tc_abstract_tensor *a, int pos);
int64_t tc_abstract_tensor_extent(const tc_abstract_tensor *a, int pos);
/* tc_abstract_split, tc_abstract_merge and tc_abstract_reorder work as
 * tc_split, tc_merge and tc_reorder.  Merge takes any two axes (as
 * nvFuser's): the result sits where the first of the two in the list was. */
tc_status tc_abstract_split(tc_abstract_tensor *a, int axis, int64_t factor, int inner_split);
tc_status tc_abstract_merge(tc_abstract_tensor *a, int outer, int inner);
tc_status tc_abstract_reorder(tc_abstract_tensor *a, int n, const int *old_pos, const int *new_pos);

/* The swizzle of a bulk tensor copy (TMA) between global and shared
 * memory: each row of a box is this many bytes and its 16-byte chunks are
 * XORed with the row within each group of 8 rows (CuTe's Swizzle<3,4,3>,
 * <2,4,3> and <1,4,3> on byte offsets for 128, 64 and 32 bytes). */
typedef enum tc_tma_swizzle {
  TC_TMA_SWIZZLE_NONE = 0,
  TC_TMA_SWIZZLE_32B = 32,
  TC_TMA_SWIZZLE_64B = 64,
  TC_TMA_SWIZZLE_128B = 128
} tc_tma_swizzle;
/* The widest swizzle whose row divides t's innermost loop extent in bytes
 * (nvFuser's tmaSwizzleSharedMemory). */
tc_tma_swizzle tc_tma_swizzle_for(const tc_tensor *t);
/* Schedules t's last two loop axes [rows, cols] as swizzled boxes
 * (nvFuser's scheduleTMALoadForMma; docs/ldmatrix.md): they become [cols / C,
 * rows / 8, S / 16, 128 / S, S / 16 (the XORed chunk), 16 / elem] with
 * S = swizzle bytes and C = S / elem (one swizzled row), and, unless t is
 * in global memory, the allocation domain becomes this loop domain.  Needs
 * serial box axes, cols a multiple of C and rows a multiple of 8.
 * TC_TMA_SWIZZLE_NONE leaves the loop domain alone. */
tc_status tc_schedule_tma_swizzle(tc_tensor *t, tc_tma_swizzle sw);

/* ---- shared-memory layouts: AMD swizzles, reshape + swizzle, the swap ---- */

/* Triton's swizzled shared layout on loop axes `row` and `col`: rows keep
 * their place and columns move in chunks of vec elements, col' = ((col /
 * vec) ^ phase) * vec + col % vec with phase = (row / per_phase) %
 * max_phase.  Built from split, XOR and merge, so it shows in the
 * allocation domain
 * like any other transform (tc_set_alloc_to_loop).  vec = 8, per_phase = 1
 * and max_phase = 8 on 64 columns is CuTe's Swizzle<3,3,3>.  Needs cols a
 * multiple of vec, rows a multiple of per_phase, rows / per_phase at most
 * or a multiple of max_phase, and cols / vec a multiple of the power of
 * two the phases span (so the map stays a bijection).  One phase (max_phase
 * 1, or rows <= per_phase) is the identity and changes nothing. */
tc_status tc_swizzle_amd(tc_tensor *t, int row, int col, int vec, int per_phase, int max_phase);
/* AMD's matrix-core (MFMA) LDS swizzle (TileLang's
 * makeMatrixCoreSwizzleLayout): tc_swizzle_amd with per_phase = max(1,
 * (32 * 32 / bits) / C) and max_phase = max(1, min(16 / per_phase, C /
 * vec)), for elements of `bits` bits (t's dtype) and C = the extent of
 * `col`.  vec = 0 takes 64 / bits (TileLang's vecSize with kPack = 1). */
tc_status tc_swizzle_matrix_core(tc_tensor *t, int row, int col, int vec);

/* A layout - the map from a tensor's logical coordinates to its
 * allocation domain (for a tensor in global memory, or without an
 * allocation domain of its own in on-chip memory, the logical or the loop
 * domain) - split into a pure reshape R (its splits and merges, the order
 * of its axes, with every swizzle taken out) and a swizzle that permutes
 * the columns (the last logical coordinate) within each row (the other
 * coordinates): F(row, col) = R(row, s_row(col)).  TileLang's gfx950
 * layout [256, 64] -> [row / 8, (row % 8) * 64 + S(row, col)] is
 * R = [row / 8, (row % 8) * 64 + col] and s_row = S. */
typedef struct tc_layout_parts {
  int nalloc;            /* rank of the allocation domain */
  int64_t extents[16];   /* its extents, outermost first (the first 16) */
  int64_t rows, cols;    /* logical rows (all extents but the last) and columns */
  int nswizzles;         /* XOR / CuTe swizzles in the layout; 0: a pure reshape */
  int64_t grain;         /* the swizzles move aligned runs of this many columns
                            as a unit (cols when there is no swizzle) */
  int padded;            /* 1: some positions hold no element (a resize that
                            grows, a split that does not divide) */
} tc_layout_parts;
/* Fills *parts.  TC_ERR_SCHEDULE, with the reason in tc_fusion_error, when
 * no such split exists: a swizzle that mixes rows (rewrites a coordinate
 * other than the last), or a map that is not a bijection onto its
 * positions (a crop, a view transform, an allocation axis that the others
 * already determine or that misses elements). */
tc_status tc_layout_split(const tc_tensor *t, tc_layout_parts *parts);
/* For the element at logical `coords`: its allocation coordinates under the
 * layout (alloc_coords) and under the reshape part alone (reshape_coords),
 * nalloc each, and s_row(col) (swizzled_col).  Any output may be NULL. */
tc_status tc_layout_eval(const tc_tensor *t, const int64_t *coords, int64_t *alloc_coords,
                         int64_t *reshape_coords, int64_t *swizzled_col);

/* TileLang's swizzle swap, for a copy t = set(g) or cast(g) from global
 * memory into shared memory whose layout (allocation domain) swizzles:
 * the copy stops storing through the swizzle (scattered addresses) and
 * iterates the allocated axes in order instead, n elements per lane on
 * t's TIDx lanes, so lane i writes positions i * n .. i * n + n - 1 (plus
 * a multiple of lanes * n) and reads global memory at the swizzled column.
 * Shared memory ends up holding the same values.  The loop axes left of
 * t's inline position and its block axes stay; the rest of its loop domain
 * becomes [rest, TIDx (the copy's TIDx extent), n (vectorized when the n
 * elements are contiguous in global memory too)].  n = 0 takes the most
 * elements up to 16 bytes that stay contiguous on both sides.
 * TC_ERR_SCHEDULE when the swap does not apply: t is not such a copy, its
 * layout has no reshape + swizzle split (tc_layout_split) or no swizzle,
 * or the copy binds lanes to anything but one TIDx axis.  A copy that
 * already stores in allocation order is left alone.  tc_compile applies
 * the swap by itself for TC_TARGET_HIP wherever it is legal, to the kernel
 * only (the fusion's schedule is left as it was);
 * TILEC_SWIZZLE_SWAP=0 (or off, no, false) in the environment turns that
 * off.  See docs/swizzle_swap.md. */
tc_status tc_swizzle_swap(tc_tensor *t, int n);

/* ---- CuTe layouts and their algebra -------------------------------------- */

/* A CuTe layout, shape:stride with nested modes ("(4,(2,3)):(2,(1,8))"),
 * a function from an index or a coordinate to an offset, or a tiler (a
 * tuple of layouts applied mode by mode, CuTe's Tile).  The operations
 * follow CuTe's definitions and its text form (docs/layout.md, `tilec
 * layout --eval`).  Each returns a new layout in *out (free it with
 * tc_cute_layout_free) and TC_OK, or TC_ERR_ARGUMENT with *out NULL and a
 * message in err (cap bytes; err may be NULL) when the result is not
 * defined: a divisibility condition of a composition fails (the message
 * names the mode), a complement's modes overlap, a tiler has more modes
 * than the layout, or a size does not fit in 62 bits. */
typedef struct tc_cute_layout tc_cute_layout;

/* How a divide or product groups the modes it makes.  For a layout (M, N,
 * L) and a tiler <B0, B1>: divides give tiles B and rests R,
 *   TC_CUTE_LOGICAL  ((B0,R0), (B1,R1), L)    logical_divide
 *   TC_CUTE_ZIPPED   ((B0,B1), (R0,R1,L))     zipped_divide
 *   TC_CUTE_TILED    ((B0,B1), R0, R1, L)     tiled_divide
 *   TC_CUTE_FLAT     (B0, B1, R0, R1, L)      flat_divide
 * and products put the layout's modes first, ((M,N), (B0',B1',L)) for
 * zipped_product.  A layout tiler (not a tuple) divides the layout as a
 * whole: logical and zipped give (B, R). */
typedef enum tc_cute_grouping {
  TC_CUTE_LOGICAL,
  TC_CUTE_ZIPPED,
  TC_CUTE_TILED,
  TC_CUTE_FLAT
} tc_cute_grouping;

/* Evaluates text, any expression of `tilec layout --eval` whose value is a
 * layout ("(8,64):(64,1)", "zipped_divide(24:1, 4:2)"); a parse error's
 * message gives the column. */
tc_status tc_cute_layout_parse(const char *text, tc_cute_layout **out, char *err, size_t cap);
/* The text form, as `tilec layout --eval` prints it (malloc'd; free()). */
char *tc_cute_layout_str(const tc_cute_layout *l);
/* Frees a layout (NULL is ignored). */
void tc_cute_layout_free(tc_cute_layout *l);
/* tc_cute_layout_size: the product of the shapes; tc_cute_layout_cosize:
 * the largest offset + 1; tc_cute_layout_rank: the number of top-level
 * modes (1 for a single mode). */
int64_t tc_cute_layout_size(const tc_cute_layout *l);
int64_t tc_cute_layout_cosize(const tc_cute_layout *l);
int tc_cute_layout_rank(const tc_cute_layout *l);
/* A copy of mode i (0 <= i < rank) of a layout or tiler. */
tc_status tc_cute_layout_mode(const tc_cute_layout *l, int i, tc_cute_layout **out, char *err, size_t cap);
/* L(coord) in *offset.  n == 1: a 1-D index in [0, size); n == rank(l):
 * one index per top-level mode (CuTe's L(m, n), each a 1-D index into its
 * mode); n == the number of leaves: the natural coordinate, one entry per
 * leaf in order.  An entry outside its mode, or another n, is an error
 * naming the mode. */
tc_status tc_cute_layout_at(const tc_cute_layout *l, int n, const int64_t *coord, int64_t *offset, char *err,
                            size_t cap);
/* make_layout(modes[0], ..., modes[n-1]): the layouts as the modes of one
 * layout (n == 1 gives the layout itself).  tc_cute_layout_tile makes a
 * tiler <modes[0], ...> instead (n >= 2). */
tc_status tc_cute_layout_make(int n, const tc_cute_layout *const *modes, tc_cute_layout **out, char *err,
                              size_t cap);
tc_status tc_cute_layout_tile(int n, const tc_cute_layout *const *modes, tc_cute_layout **out, char *err,
                              size_t cap);
/* CuTe's append(L, X) = (L0, ..., X) and, with tc_cute_layout_prepend,
 * prepend(L, X) = (X, L0, ...): X added as a last or first mode. */
tc_status tc_cute_layout_append(const tc_cute_layout *l, const tc_cute_layout *x, tc_cute_layout **out, char *err,
                                size_t cap);
tc_status tc_cute_layout_prepend(const tc_cute_layout *l, const tc_cute_layout *x, tc_cute_layout **out, char *err,
                                 size_t cap);
/* tc_cute_layout_coalesce: the same function on [0, size) with the fewest
 * modes.  tc_cute_layout_filter: coalesce after setting the shape of each
 * stride-0 mode to 1 (CuTe's filter). */
tc_status tc_cute_layout_coalesce(const tc_cute_layout *l, tc_cute_layout **out, char *err, size_t cap);
tc_status tc_cute_layout_filter(const tc_cute_layout *l, tc_cute_layout **out, char *err, size_t cap);
/* composition(A, B) = A o B, with R(i) == A(B(i)); b may be a tiler. */
tc_status tc_cute_layout_composition(const tc_cute_layout *a, const tc_cute_layout *b, tc_cute_layout **out,
                                     char *err, size_t cap);
/* complement(L, cotarget): the ordered layout C such that (L, C) is
 * injective and covers at least cotarget (>= 1). */
tc_status tc_cute_layout_complement(const tc_cute_layout *l, int64_t cotarget, tc_cute_layout **out, char *err,
                                    size_t cap);
/* logical_divide(A, B) = A o (B, complement(B, size(A))), its modes
 * grouped by g; b may be a tiler. */
tc_status tc_cute_layout_divide(tc_cute_grouping g, const tc_cute_layout *a, const tc_cute_layout *b,
                                tc_cute_layout **out, char *err, size_t cap);
/* logical_product(A, B) = (A, complement(A, size(A) * cosize(B)) o B),
 * its modes grouped by g; b may be a tiler. */
tc_status tc_cute_layout_product(tc_cute_grouping g, const tc_cute_layout *a, const tc_cute_layout *b,
                                 tc_cute_layout **out, char *err, size_t cap);
/* The rank-sensitive products of two layouts: both padded to R = max(rank
 * A, rank B) modes with 1:0, P = logical_product(A, B), and mode i of the
 * result coalesce((A_i, P1_i)): A is a block repeated in the arrangement of
 * B.  tc_cute_layout_raked_product takes coalesce((P1_i, A_i)) instead, so
 * that the copies of A are interleaved (a cyclic distribution). */
tc_status tc_cute_layout_blocked_product(const tc_cute_layout *a, const tc_cute_layout *b, tc_cute_layout **out,
                                         char *err, size_t cap);
tc_status tc_cute_layout_raked_product(const tc_cute_layout *a, const tc_cute_layout *b, tc_cute_layout **out,
                                       char *err, size_t cap);

/* ---- compiling and running -------------------------------------------- */

typedef struct tc_compile_options {
  tc_target target;
  const char *arch;        /* "sm_80", "sm_90a", "sm_100a", "gfx90a"; NULL = default (HIP:
                              lowered for gfx90a, built and run for the AMD GPU's arch
                              where there is one) */
  const char *kernel_name; /* NULL = "tilec_kernel" */
} tc_compile_options;

/* Lowers the fusion and prints the kernel.  On failure returns NULL and
 * *status / tc_fusion_error say why.  opt may be NULL (OpenCL, the
 * default arch, "tilec_kernel").  For CUDA and HIP a block over 1024
 * threads (CUDA: a TIDz extent over 64) or more shared memory than the
 * arch has per block (CUDA 232448 bytes on sm_90 / sm_100, 166912 on
 * sm_80, 101376 on sm_86 / sm_89; HIP 65536, 163840 on gfx950) is
 * TC_ERR_LOWER; OpenCL's limits are the device's, checked at launch. */
tc_kernel *tc_compile(tc_fusion *f, const tc_compile_options *opt, tc_status *status);
/* Frees a kernel (NULL is fine). */
void tc_kernel_free(tc_kernel *k);
/* tc_kernel_source is the kernel's source in the target's language,
 * tc_kernel_name its name. */
const char *tc_kernel_source(const tc_kernel *k);
const char *tc_kernel_name(const tc_kernel *k);
/* Bytes of shared memory the kernel allocates per block. */
int64_t tc_kernel_smem_bytes(const tc_kernel *k);
/* Tensor-memory columns allocated per block (0 when none). */
int64_t tc_kernel_tmem_columns(const tc_kernel *k);
/* The launch: blocks per grid and threads per block in x, y, z, the
 * largest extent bound to each of BIDx/y/z and TIDx/y/z (1 where nothing
 * is bound). */
void tc_kernel_launch_dims(const tc_kernel *k, int64_t grid[3], int64_t block[3]);
/* Kernel parameters in order: the fusion's inputs, then its outputs.
 * tc_kernel_nparams counts them and tc_kernel_param_bytes gives the size
 * of parameter i's contiguous row-major buffer (0 for i out of range). */
int tc_kernel_nparams(const tc_kernel *k);
size_t tc_kernel_param_bytes(const tc_kernel *k, int i);
/* The message of the last failed tc_kernel_build or tc_kernel_run ("" when
 * none). */
const char *tc_kernel_error(const tc_kernel *k);

/* Where one tensor of a compiled kernel lives and how much of it the kernel
 * allocates (tc_kernel_tensor_allocation).  An on-chip tensor keeps the
 * axes of its allocation domain (its loop domain unless it has one of its
 * own) that these rules keep: an axis bound to what the memory is
 * distributed across (BIDx/y/z for shared and tensor memory; those and
 * TIDx/y/z for local memory) is never allocated; an axis bound to what the
 * memory is shared by (TIDx/y/z for shared and tensor memory) always is;
 * any other axis is allocated when it is right of the compute-at (inline)
 * position.  The sizes are per block for shared and tensor memory, per
 * thread for local memory.  Tensor memory holds lanes x columns of 32-bit
 * words: the allocated axes left of the dim-sep position are the lanes,
 * the rest fill the columns of each lane. */
typedef struct tc_allocation {
  tc_memtype memory;       /* TC_MEM_GLOBAL for a kernel parameter */
  int naxes;               /* axes allocated (a parameter: its logical axes) */
  int positions[16];       /* their positions in the allocation (a parameter:
                              logical) domain, outermost first (the first 16) */
  int64_t extents[16];     /* their extents */
  int64_t elements;        /* elements allocated: the product of all extents */
  int64_t bytes;           /* elements times the size of the dtype */
  int64_t offset;          /* shared memory: the byte offset of the tensor in
                              the block's shared memory; else 0 */
  int64_t lanes;           /* tensor memory: lanes used (1 .. 128); else 0 */
  int64_t columns;         /* tensor memory: 32-bit columns a lane's elements
                              fill; else 0 */
  int64_t columns_allocated; /* tensor memory: columns reserved for it, a
                                power of two >= 32 (tc_kernel_tmem_columns
                                sums them); else 0 */
} tc_allocation;
/* Fills *out for tensor t of the fusion k was compiled from, as the
 * schedule stood at tc_compile.  An input or output is a kernel parameter:
 * the caller's contiguous row-major buffer in global memory, described as
 * its logical extents (the bytes tc_kernel_param_bytes gives).
 * TC_ERR_ARGUMENT, with the reason in t's fusion's tc_fusion_error, when
 * the kernel has no such tensor (no output depended on it, or it was made
 * after the compile), or when an argument is NULL. */
tc_status tc_kernel_tensor_allocation(const tc_kernel *k, const tc_tensor *t, tc_allocation *out);

/* Compiles the kernel's source with the target's device compiler without
 * running it: NVRTC for CUDA (PTX for the kernel's arch; needs no GPU),
 * the OpenCL device's compiler for OpenCL (`device` as for tc_kernel_run),
 * hipcc for HIP (a code object for the kernel's arch, or the AMD GPU's
 * when tc_compile was given none; needs no GPU; TC_ERR_UNSUPPORTED where
 * hipcc is missing or does not know the arch, naming the ROCm that does).
 * On failure tc_kernel_error has the compiler log. */
tc_status tc_kernel_build(tc_kernel *k, const char *device);

/* Runs the kernel: args[i] points at host data for parameter i (inputs are
 * copied in, outputs copied back).  device selects an OpenCL device
 * ("pocl", a platform/device name substring, or "P:D" indices; NULL uses
 * $TILEC_OPENCL_DEVICE, then PoCL, then the first device).  If ms is not
 * NULL it receives the kernel time in milliseconds.  A kernel with a grid
 * reduction also takes a global workspace after its parameters, which the
 * run allocates zeroed (docs/reductions.md).
 *
 * OpenCL: a kernel that needs more local (shared) memory than the device
 * has (CL_DEVICE_LOCAL_MEM_SIZE), or a block over the device's work-group
 * size, is refused before the launch with TC_ERR_RUNTIME and a message
 * naming both numbers.  With $TILEC_RUN_TIMEOUT_MS set to a number of
 * milliseconds, a launch that runs longer fails with TC_ERR_TIMEOUT
 * instead of blocking forever; the kernel cannot be stopped, so it keeps
 * running (PoCL: a CPU core per stuck work-group) until the process ends,
 * its command queue and buffers are never released, and later runs use a
 * new queue.  Unset or 0: no limit; any other value is TC_ERR_ARGUMENT.
 *
 * CUDA runs on device 0 through the driver (TC_ERR_NO_DEVICE with "no CUDA
 * device: ..." where there is none).  HIP runs on AMD GPU 0 through the
 * HIP runtime (libamdhip64, loaded at first use): the code object of
 * tc_kernel_build (or hipcc's, made here once) for the kernel's arch, or
 * the GPU's when tc_compile was given none.  Where the runtime cannot be
 * loaded or reports no GPU, TC_ERR_NO_DEVICE with "no AMD GPU: ..." and
 * the reason. */
tc_status tc_kernel_run(tc_kernel *k, void *const *args, const char *device, double *ms);
/* The kernel's size variable (tc_input_sym): its name, or NULL for a
 * kernel of fixed shapes; *divisor and *bound (either may be NULL) get
 * the assumptions it was compiled for. */
const char *tc_kernel_size_var(const tc_kernel *k, int64_t *divisor, int64_t *bound);
/* The number of the kernel's size variables (0: fixed shapes). */
int tc_kernel_size_var_count(const tc_kernel *k);
/* Size variable i (0 .. tc_kernel_size_var_count - 1, in the order the
 * inputs named them): its name, or NULL when there is none; *divisor and
 * *bound (either may be NULL) get its assumptions. */
const char *tc_kernel_size_var_at(const tc_kernel *k, int i, int64_t *divisor, int64_t *bound);
/* tc_kernel_run with the values of the size variables: sizes[0..nsizes),
 * one per variable in tc_kernel_size_var_at's order.  Each value is
 * checked against the kernel's assumptions (1 .. bound, a multiple of the
 * divisor) and a mismatch is TC_ERR_ARGUMENT with a message naming the
 * variable; the values set the extents of the symbolic tensors (their
 * buffers' bytes) and the grid, and are passed as the variables'
 * parameters, whose args[] entries are ignored (they may be NULL).  A
 * kernel of fixed shapes takes nsizes 0.  tc_kernel_run on a kernel with
 * a size variable is TC_ERR_ARGUMENT: it needs this call. */
tc_status tc_kernel_run_sizes(tc_kernel *k, void *const *args, const int64_t *sizes, int nsizes,
                              const char *device, double *ms);

/* ---- kernel families: specialisation on a size's divisibility ------------ */

/* A kernel family: the kernels of one fusion with size variables
 * (tc_input_sym, tc_input_syms), one per assumption set, picked per run
 * from the concrete sizes as Triton specialises a size argument on "a
 * multiple of 16" (docs/dynamic.md). */
typedef struct tc_kernel_family tc_kernel_family;
/* Builds the family's fusion, scheduled, with its size variable a
 * multiple of divisor (the divisor argument of tc_input_sym); NULL on
 * failure.  The family owns the fusion it returns. */
typedef tc_fusion *(*tc_family_build)(int64_t divisor, void *ctx);
/* The same for a fusion of several size variables: variable i (in the
 * order the inputs name them) a multiple of divisors[i]. */
typedef tc_fusion *(*tc_family_build_vars)(const int64_t *divisors, void *ctx);
/* A family of the fusions build makes (one size variable), compiled with
 * *opt (copied); ctx is passed to build.  No kernel is made until a size
 * asks for one.  NULL when build or opt is NULL. */
tc_kernel_family *tc_family_new(tc_family_build build, void *ctx, const tc_compile_options *opt);
/* tc_family_new for fusions of nvars (1..4) size variables, each
 * specialised on its own divisor.  NULL when build or opt is NULL or
 * nvars is out of range. */
tc_kernel_family *tc_family_new_vars(int nvars, tc_family_build_vars build, void *ctx,
                                     const tc_compile_options *opt);
/* The kernel for the size variables' values sizes[0..nsizes) (nsizes the
 * family's count of variables): each variable wants the largest of 16, 8,
 * 4 and 1 that divides its value; the family compiles the fusion for
 * those divisors (tc_compile, so the kernel cache may hold it) and lowers
 * each divisor through that list while the kernel's code (its source but
 * for comment lines) stays the same, and answers the kernel of the
 * weakest assumptions that make that code (M = 64 and M = 1000 share the
 * "multiple of 4" kernel where 16 and 8 buy nothing more).  Owned by the
 * family; NULL with *status (may be NULL) set and tc_family_error on
 * failure. */
tc_kernel *tc_family_kernel(tc_kernel_family *fam, const int64_t *sizes, int nsizes, tc_status *status);
/* tc_family_kernel, then tc_kernel_run_sizes with the same sizes. */
tc_status tc_family_run(tc_kernel_family *fam, void *const *args, const int64_t *sizes, int nsizes,
                        const char *device, double *ms);
/* The family's distinct kernels that sizes were given so far (*kernels),
 * and how many kernels tc_compile made (*compiled) and read from the
 * kernel cache (*loaded), the probes of smaller divisors included; any
 * may be NULL. */
void tc_family_counts(const tc_kernel_family *fam, int *kernels, int *compiled, int *loaded);
/* The last failure's message ("" when none). */
const char *tc_family_error(const tc_kernel_family *fam);
/* Frees the family, its kernels and fusions (NULL is a no-op). */
void tc_family_free(tc_kernel_family *fam);

/* ---- the kernel cache ---------------------------------------------------- */

/* tc_compile keeps each kernel it makes in an on-disk cache, keyed by a
 * hash of the scheduled fusion, the compile options and the tilec version;
 * compiling the same schedule again (in any process) reads the kernel back
 * without lowering.  For CUDA, tc_kernel_build and tc_kernel_run add the
 * PTX (tagged with the NVRTC version) to the entry and later reuse it
 * instead of running NVRTC.  The directory is $TILEC_CACHE_DIR, else
 * $XDG_CACHE_HOME/tilec, else $HOME/.cache/tilec; TILEC_CACHE=0 turns the
 * cache off.  Cache trouble (an unwritable directory, a corrupt entry)
 * never fails a compile: a corrupt entry is a miss and is replaced.  See
 * docs/cache.md. */
typedef struct tc_cache_stats {
  int enabled;           /* 0 with TILEC_CACHE=0 or when no directory is known */
  char dir[4096];        /* the directory ("" when none is known) */
  int64_t entries;       /* kernel entries in dir */
  int64_t bytes;         /* their total size */
  /* this process so far: */
  int64_t hits, misses;  /* tc_compile lookups */
  int64_t stores;        /* entries written */
  int64_t store_failures;
  int64_t corrupt;       /* unreadable entries found (and removed) */
  int64_t ptx_hits;      /* CUDA builds/runs that reused cached PTX */
  int64_t nvrtc_runs;    /* CUDA builds/runs that ran NVRTC */
} tc_cache_stats;

/* Fills *s.  TC_ERR_RUNTIME when the directory exists but cannot be read
 * (the counters are still filled). */
tc_status tc_cache_get_stats(tc_cache_stats *s);
/* Removes every cache entry (only files tilec wrote) from the directory,
 * also when the cache is off; *removed (may be NULL) gets their number. */
tc_status tc_cache_clear(int64_t *removed);
/* 1 when tc_compile read this kernel from the cache, 0 when it made it. */
int tc_kernel_from_cache(const tc_kernel *k);

/* ---- host helpers ------------------------------------------------------ */

/* Bytes of a tensor's contiguous row-major host buffer. */
size_t tc_tensor_bytes(const tc_tensor *t);
/* Evaluates the fusion on the host in plain C, ignoring the schedule:
 * args as for tc_kernel_run (inputs read, outputs written).  Arithmetic is
 * done in float for floating-point tensors and rounded to each tensor's
 * dtype (16-bit floats round to nearest even), as the kernels do. */
tc_status tc_reference_run(tc_fusion *f, void *const *args);
/* Round-to-nearest-even conversions between f32 and the 16-bit formats:
 * tc_f32_to_f16, tc_f16_to_f32, tc_f32_to_bf16 and tc_bf16_to_f32. */
uint16_t tc_f32_to_f16(float f);
float tc_f16_to_f32(uint16_t h);
uint16_t tc_f32_to_bf16(float f);
float tc_bf16_to_f32(uint16_t h);

/* ---- convolutions and GEMMs ---------------------------------------------- */

/* tilec's own convolution and GEMM kernels, ready to use: describe a
 * problem, plan it for a target (its kernels are generated with a perf
 * config, the tunables "BS,MPB,NPB,KPB,MPT,NPT" of the gridwise GEMM: block
 * size, M/N/K per block, M/N per thread), tune it, run it on host buffers
 * and verify the result.  `tilec conv2d` and `tilec gemm` are built on the
 * same code and share the perf database: a problem tuned by one is found
 * by the other.  A convolution is an implicit GEMM: one or more GEMM
 * kernels over coordinate-transform views of its tensors (docs/conv.md).
 *
 * Errors follow the rest of the API: the calls return a tc_status and the
 * object keeps a one-line message (tc_conv2d_error, tc_gemm_error).
 * Problem errors name the `tilec conv2d` flag of the field ("input
 * channels (-c 6) are not divisible by the group count (-g 4)").  An
 * object is not thread-safe; use one per thread. */

/* Where a convolution or GEMM is planned and run.  All zero is the
 * default: OpenCL on the default device and the perf DB the environment
 * names.  Strings are copied. */
typedef struct tc_op_options {
  tc_target target;    /* TC_TARGET_OPENCL, TC_TARGET_CUDA or TC_TARGET_HIP */
  const char *device;  /* the OpenCL device as for tc_kernel_run; NULL: the default */
  const char *arch;    /* the CUDA architecture; NULL: kernels are built
                          for "sm_90a", but the heuristic then picks only
                          kernels any sm_80+ GPU runs (mma.sync, not TMA +
                          wgmma); name "sm_90a" for those.  Or the AMD one
                          for HIP; NULL: the AMD GPU's where there is one,
                          else "gfx90a" */
  const char *perfdb;  /* the perf DB file; NULL: $TILEC_PERFDB, else
                          $XDG_DATA_HOME/tilec/perfdb.sqlite, else
                          $HOME/.local/share/tilec/perfdb.sqlite; "": none */
} tc_op_options;

/* One candidate perf config tried by tc_conv2d_tune or tc_gemm_tune; a
 * tc_op_tune_callback gets each one with the context pointer it was given
 * (tc_op_tune_options). */
typedef struct tc_op_tune_event {
  int index, total;          /* 1-based candidate number, and how many are tried */
  const char *perf_config;   /* "BS,MPB,NPB,KPB,MPT,NPT" */
  int ok;                    /* 1: timed; 0: skipped (see note) */
  double ms;                 /* its median time, when ok */
  const char *note;          /* why it was skipped ("" when ok) */
} tc_op_tune_event;
typedef void (*tc_op_tune_callback)(void *ctx, const tc_op_tune_event *ev);

/* How to tune.  All zero: the defaults. */
typedef struct tc_op_tune_options {
  int max_candidates;            /* try at most this many, best first by the
                                    heuristic (whose own choice is always
                                    tried); 0: 16 */
  int reps;                      /* timed runs per candidate, the median
                                    counts; 0: 3 */
  int no_store;                  /* 1: do not write the winner to the perf DB */
  tc_op_tune_callback progress;  /* called after each candidate; may be NULL */
  void *progress_ctx;
} tc_op_tune_options;

/* What tuning found. */
typedef struct tc_op_tune_result {
  char perf_config[64];  /* the fastest candidate */
  double ms;             /* its median time */
  int candidates;        /* valid perf configs for the problem */
  int tried, skipped;    /* candidates tried, and how many of those failed */
  int stored;            /* 1: the winner was written to the perf DB */
  char perfdb[4096];     /* that file ("" when not stored) */
} tc_op_tune_result;

/* What a verification found, in full (tc_gemm_verify_result). */
typedef struct tc_op_verify_result {
  int64_t bad;         /* elements outside their bound (0: all pass; -1: an error) */
  double worst;        /* the largest error as a fraction of its bound */
  double max_abs;      /* the largest absolute error */
  int64_t checked;     /* elements compared */
  int64_t cell;        /* when fewer than all: one in each cell x cell square of C */
  char message[512];   /* the first element that fails ("" when none) */
} tc_op_verify_result;

/* ---- 2-D convolution -------------------------------------------------------- */

typedef enum tc_conv2d_direction {
  TC_CONV2D_FORWARD = 1,         /* writes the output from input and filter */
  TC_CONV2D_BACKWARD_DATA = 2,   /* writes the input (its gradient) from output and filter */
  TC_CONV2D_BACKWARD_WEIGHT = 4  /* writes the filter (its gradient) from input and output */
} tc_conv2d_direction;

/* A 2-D convolution in MIOpen's conventions: input [N, C, H, W], filter
 * [K, C/groups, Y, X], output [N, K, Ho, Wo] where
 * Ho = (H + pad_top + pad_bottom - dilation_h * (Y - 1) - 1) / stride_h + 1
 * and Wo likewise.  A layout string gives the order of a tensor's dims in
 * memory, outermost first: any order of its four letters (NHWC, KYXC,
 * NHWK ...).  The direction says which tensor is written; the other two
 * are read. */
typedef struct tc_conv2d_desc {
  tc_conv2d_direction direction;
  int64_t n, c, h, w;            /* batch, input channels, input height, width */
  int64_t k, y, x;               /* output channels, filter height, width */
  int64_t pad_top, pad_bottom;   /* zero padding of each side (asymmetric allowed) */
  int64_t pad_left, pad_right;
  int64_t stride_h, stride_w;
  int64_t dilation_h, dilation_w;
  int64_t groups;                /* C and K must be multiples of it */
  tc_dtype dtype;                /* TC_F32 or TC_F16; accumulation is f32 */
  const char *in_layout;         /* NULL: "NCHW" */
  const char *fil_layout;        /* NULL: "KCYX" */
  const char *out_layout;        /* NULL: "NKHW" */
} tc_conv2d_desc;

typedef enum tc_conv2d_tensor {
  TC_CONV2D_INPUT, TC_CONV2D_FILTER, TC_CONV2D_OUTPUT
} tc_conv2d_tensor;

typedef struct tc_conv2d tc_conv2d;

/* Fills d with a forward f32 convolution of one 1 x 1 image with one
 * channel and a 1 x 1 filter: stride, dilation and groups 1, no padding,
 * the default layouts.  Set the fields that differ. */
void tc_conv2d_desc_init(tc_conv2d_desc *d);
/* A convolution of description d with options opt (NULL: defaults); both
 * are copied.  It never fails: a description that is not valid is
 * reported by the calls that need it (tc_conv2d_plan, tc_conv2d_run ...).
 * tc_conv2d_free frees it with its kernels. */
tc_conv2d *tc_conv2d_new(const tc_conv2d_desc *d, const tc_op_options *opt);
void tc_conv2d_free(tc_conv2d *c);
/* The last error message of a call on this convolution ("" when none). */
const char *tc_conv2d_error(const tc_conv2d *c);
/* The problem as `tilec conv2d` flags, which is also its perf-DB key:
 * "conv2d -F 1 -n 2 -c 64 -H 14 -W 14 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1
 * -l 1 -j 1 -g 1 -t f32 --in_layout NCHW --fil_layout KCYX --out_layout
 * NKHW". */
const char *tc_conv2d_problem_string(const tc_conv2d *c);
/* The output height and width; TC_ERR_ARGUMENT for a description that is
 * not valid. */
tc_status tc_conv2d_output_size(tc_conv2d *c, int64_t *ho, int64_t *wo);
/* Elements of a tensor: its host buffer holds this many elements of the
 * dtype (TC_CONV2D_BIAS: the fusion path's bias, K).  -1 for a
 * description that is not valid (bf16 counts as valid here: the fusion
 * path takes it). */
int64_t tc_conv2d_elems(tc_conv2d *c, tc_conv2d_tensor t);

/* Checks the description and generates the kernels for the target.
 * perf_config: "BS,MPB,NPB,KPB,MPT,NPT", or NULL for the perf DB entry of
 * this problem on this device when there is one (tuned earlier by
 * tc_conv2d_tune or `tilec conv2d --tune`), else the heuristic's choice.
 * A perf config that breaks a rule of a GEMM of the problem is
 * TC_ERR_ARGUMENT naming the rule; a perf DB entry that does not fit (or
 * a perf DB that cannot be read) falls back to the heuristic, and
 * tc_conv2d_perf_config_detail says so.  On failure the earlier plan, if
 * any, is kept. */
tc_status tc_conv2d_plan(tc_conv2d *c, const char *perf_config);
/* Times the candidate perf configs on the device (each one is also run
 * once and verified; a wrong one is never chosen), stores the fastest in
 * the perf DB under the problem string, the target and the device name
 * (unless t->no_store or the options' perfdb is ""), and plans the
 * convolution with it.  t may be NULL (the defaults), r too.  A perf DB
 * that cannot be written is no error: r->stored is 0 and
 * tc_conv2d_perf_config_detail says why.  TC_ERR_NO_DEVICE without a
 * device. */
tc_status tc_conv2d_tune(tc_conv2d *c, const tc_op_tune_options *t, tc_op_tune_result *r);
/* Runs the kernels on the device (planning first, as tc_conv2d_plan(c,
 * NULL), when not planned yet).  in, fil, out are host buffers in the
 * description's layouts and dtype (tc_conv2d_elems elements each); the
 * direction's written tensor gets the result, the other two are only read.
 * *ms (may be NULL) gets the kernel time in milliseconds. */
tc_status tc_conv2d_run(tc_conv2d *c, void *in, void *fil, void *out, double *ms);
/* Checks the written tensor against a reference computed in double from
 * the two tensors read.  An element passes when its error is within the
 * worst case of an f32 accumulation in any order (see docs/conv.md).
 * Returns the number of elements that fail (0: all pass; then
 * tc_conv2d_error is "") with the first one described in tc_conv2d_error,
 * or -1 for a description that is not valid.  *worst (may be NULL) gets
 * the largest error as a fraction of its bound. */
int64_t tc_conv2d_verify(tc_conv2d *c, const void *in, const void *fil, const void *out,
                         double *worst);
/* Runs the kernels as tc_conv2d_run (their time, warm-up included, in
 * *first_ms; may be NULL), then launches each kernel iters more times
 * back to back on the same buffers: times[r] (r < iters) gets the summed
 * time in milliseconds of the r-th timed launch of every kernel (iters 0:
 * none; times may then be NULL).  The written tensor is copied back after
 * the first run. */
tc_status tc_conv2d_run_timed(tc_conv2d *c, void *in, void *fil, void *out, double *first_ms,
                              int iters, double *times);
/* tc_conv2d_verify with the whole finding in *r (may be NULL): r->checked
 * is every element of the written tensor (r->cell 0); r->max_abs is not
 * measured (0).  Returns r->bad. */
int64_t tc_conv2d_verify_result(tc_conv2d *c, const void *in, const void *fil, const void *out,
                                tc_op_verify_result *r);
/* Computes the written tensor on the host (summed in double, rounded to
 * the dtype) from the two tensors read, as tc_conv2d_run would. */
tc_status tc_conv2d_reference(tc_conv2d *c, void *in, void *fil, void *out);

/* ---- a convolution through the fusion path ----
 *
 * The same convolution with each GEMM of its lowering made a fusion: the
 * matmul (tc_matmul) reads the two tensors through the lowering's
 * coordinate-transform views (pad, embed, slice, merge: an element in
 * the padding reads 0) and stores its result through the third view, so
 * the kernels come from the compiler (tc_schedule_auto's matmul
 * schedule, lowered and printed like any fusion) instead of the GEMM
 * templates that tc_conv2d_plan uses, and a forward convolution can end
 * in a bias per output channel and an activation computed in the same
 * kernel.  One fusion (one kernel) per GEMM: one forward or backward
 * weight, one per filter phase for backward data with a stride.  f32,
 * f16 and bf16 (the templates take f32 and f16).  docs/conv.md says what
 * this path does not do yet (TMA; wgmma only with tiles given to
 * tc_schedule_matmul). */

/* What follows a forward convolution in its kernel: bias (non-NULL: a
 * bias per output channel, k elements of the dtype, added to the f32
 * sum) then, when has_activation, activation (TC_RELU, TC_GELU or
 * TC_SILU) in f32, then the rounding to the dtype.  All zero: nothing. */
typedef struct tc_conv2d_epilogue {
  const void *bias;
  bool has_activation;
  tc_unary_op activation;
} tc_conv2d_epilogue;

/* The bias buffer among a fusion's arguments (tc_conv2d_fusion). */
#define TC_CONV2D_BIAS ((tc_conv2d_tensor)3)

/* The fusion of GEMM i (0-based) of the convolution with epilogue ep (may
 * be NULL; its bias pointer only says whether there is one), unscheduled:
 * schedule it (tc_schedule_auto), compile and run it like any fusion.
 * args[0..*nargs) (room for 4) get the buffer each of its parameters is,
 * inputs then output (TC_CONV2D_INPUT, _FILTER, _OUTPUT, TC_CONV2D_BIAS);
 * *count (may be NULL) the number of GEMMs.  The caller frees the fusion
 * (tc_fusion_free).  Where some element of the written tensor is written
 * by no GEMM (backward data), zero that tensor first.  NULL with
 * tc_conv2d_error set: a bad description, i out of range, an epilogue on
 * a backward direction. */
tc_fusion *tc_conv2d_fusion(tc_conv2d *c, const tc_conv2d_epilogue *ep, int i,
                            tc_conv2d_tensor *args, int *nargs, int *count);
/* The tiles tc_conv2d_run_fusion schedules each GEMM's fusion with
 * (tc_schedule_matmul; tiles NULL: tc_schedule_auto's choice, the
 * default), M, N and K being those of tc_conv2d_fusion's matmul (forward:
 * M the output channels, N the output pixels, K channels x filter taps;
 * the schedule note of each kernel names them); an op type or tiles that
 * do not fit are refused when the fusion is scheduled.  TC_ERR_ARGUMENT
 * for an extent below 1. */
tc_status tc_conv2d_set_fusion_tiles(tc_conv2d *c, const tc_matmul_tiles *tiles);
/* Runs the convolution through the fusion path on the description's
 * target (tc_op_options: target, device, arch): each GEMM's fusion
 * scheduled by tc_schedule_auto (or by the tiles of
 * tc_conv2d_set_fusion_tiles), compiled and run in order on the host
 * buffers (as tc_conv2d_run; ep may be NULL).  *ms (may be NULL) gets the
 * summed kernel time. */
tc_status tc_conv2d_run_fusion(tc_conv2d *c, const tc_conv2d_epilogue *ep, void *in, void *fil,
                               void *out, double *ms);
/* tc_conv2d_verify for a run with epilogue ep (may be NULL): the
 * reference is activation(sum + bias), the bound widened by the
 * activation's slope and rounding (docs/conv.md).  Takes bf16 too. */
int64_t tc_conv2d_verify_fusion(tc_conv2d *c, const tc_conv2d_epilogue *ep, const void *in,
                                const void *fil, const void *out, double *worst);

/* The perf config of the plan ("" before one is made).  When the
 * heuristic chose it for a problem of several GEMMs (backward data with a
 * stride > 1), each GEMM has its own and this is the first one's. */
const char *tc_conv2d_perf_config(const tc_conv2d *c);
/* Where it came from: "option" (given to tc_conv2d_plan), "perfdb",
 * "tuned" or "heuristic" ("" before a plan). */
const char *tc_conv2d_perf_config_source(const tc_conv2d *c);
/* The same in a sentence for people, with the perf DB file and the tuned
 * time, and any warning (e.g. an unreadable perf DB). */
const char *tc_conv2d_perf_config_detail(const tc_conv2d *c);
/* What went wrong on the way to the last plan or tuning without stopping
 * it, for a warning ("" when nothing): a perf DB that could not be read
 * or whose entry did not fit (the heuristic was used), or a tuning result
 * that could not be stored. */
const char *tc_conv2d_warning(const tc_conv2d *c);
/* The kernels of the plan, launched in order i = 0, 1, ... (0 before a
 * plan).  Backward data with a stride > 1 has several GEMM kernels and
 * may start with one that zeroes the input. */
int tc_conv2d_num_kernels(const tc_conv2d *c);
/* The name and source of kernel i (tc_conv2d_kernel_name,
 * tc_conv2d_kernel_source); NULL for an index out of range. */
const char *tc_conv2d_kernel_name(const tc_conv2d *c, int i);
const char *tc_conv2d_kernel_source(const tc_conv2d *c, int i);
/* Kernel i's launch (1-D grid of blocks; static shared memory only) and
 * the tensors bound to its parameters, in order; returns how many (0 for
 * an index out of range). */
int tc_conv2d_kernel_launch(const tc_conv2d *c, int i, int64_t grid[3], int64_t block[3],
                            tc_conv2d_tensor args[3]);
/* The GEMM kernel i computes: 1 with its G, M, N, K in gemm[0..3] and
 * its perf config in perf_config (cap bytes; 64 is enough), either may be
 * NULL; 0 (perf_config "") for a kernel that only zeroes a tensor or an
 * index out of range. */
int tc_conv2d_kernel_gemm(const tc_conv2d *c, int i, int64_t gemm[4], char *perf_config,
                          size_t cap);
/* The static shared memory of kernel i in bytes (0 for an index out of
 * range). */
int64_t tc_conv2d_kernel_smem_bytes(const tc_conv2d *c, int i);

/* ---- 3-D convolution -------------------------------------------------------- */

/* A 3-D convolution in MIOpen's conventions: input [N, C, D, H, W],
 * filter [K, C/groups, Z, Y, X], output [N, K, Do, Ho, Wo] where
 * Do = (D + pad_front + pad_back - dilation_d * (Z - 1) - 1) / stride_d + 1
 * and Ho, Wo as for tc_conv2d_desc.  A layout string is any order of its
 * five letters (NCDHW or NDHWC; KCZYX or KZYXC, also spelled with N, D,
 * H, W; NKDHW or NDHWK).  The depth is one more spatial dim of the same
 * implicit GEMM (docs/conv.md). */
typedef struct tc_conv3d_desc {
  tc_conv2d_direction direction;
  int64_t n, c, d, h, w;         /* batch, input channels, input depth, height, width */
  int64_t k, z, y, x;            /* output channels, filter depth, height, width */
  int64_t pad_front, pad_back;   /* zero padding of each side (asymmetric allowed) */
  int64_t pad_top, pad_bottom;
  int64_t pad_left, pad_right;
  int64_t stride_d, stride_h, stride_w;
  int64_t dilation_d, dilation_h, dilation_w;
  int64_t groups;                /* C and K must be multiples of it */
  tc_dtype dtype;                /* TC_F32 or TC_F16; accumulation is f32 */
  const char *in_layout;         /* NULL: "NCDHW" */
  const char *fil_layout;        /* NULL: "KCZYX" */
  const char *out_layout;        /* NULL: "NKDHW" */
} tc_conv3d_desc;

/* Fills d with a forward f32 3-D convolution of one 1 x 1 x 1 image with
 * one channel and a 1 x 1 x 1 filter: strides, dilations and groups 1, no
 * padding, the default layouts.  Set the fields that differ. */
void tc_conv3d_desc_init(tc_conv3d_desc *d);
/* A 3-D convolution of description d with options opt (NULL: defaults),
 * as tc_conv2d_new.  It is the same kind of object as a 2-D convolution:
 * every tc_conv2d_ call (plan, tune, run, verify, reference, elems, the
 * kernels, free) applies to it, with the 3-D tensors; its problem string
 * (and perf-DB key) starts with "conv3d" and carries MIOpenDriver's depth
 * flags (--in_d, --fil_d, --pad_d, --conv_stride_d, --dilation_d). */
tc_conv2d *tc_conv3d_new(const tc_conv3d_desc *d, const tc_op_options *opt);
/* The output depth, height and width of a 3-D convolution (a 2-D one has
 * depth 1); any pointer may be NULL.  TC_ERR_ARGUMENT for a description
 * that is not valid. */
tc_status tc_conv3d_output_size(tc_conv2d *c, int64_t *dout, int64_t *ho, int64_t *wo);

/* ---- GEMM ------------------------------------------------------------------- */

/* C[M, N] = A[M, K] * B[K, N], batch times (matrices stored one after the
 * other), every matrix row-major. */
typedef struct tc_gemm_desc {
  int64_t m, n, k;
  int64_t batch;       /* independent GEMMs, each matrix stored [batch][..]; >= 1 */
  int trans_a;         /* 1: A is stored [K, M] (0: [M, K]) */
  int trans_b;         /* 1: B is stored [N, K] (0: [K, N]) */
  tc_dtype dtype;      /* TC_F32, TC_F16 or TC_BF16; accumulation is f32 */
} tc_gemm_desc;

typedef struct tc_gemm tc_gemm;

/* Fills d with a 1 x 1 x 1 f32 GEMM, batch 1, nothing transposed. */
void tc_gemm_desc_init(tc_gemm_desc *d);
/* As tc_conv2d_new, tc_conv2d_free and tc_conv2d_error: tc_gemm_new never
 * fails (the description is checked later), tc_gemm_free frees, and
 * tc_gemm_error is the last error message ("" when none). */
tc_gemm *tc_gemm_new(const tc_gemm_desc *d, const tc_op_options *opt);
void tc_gemm_free(tc_gemm *g);
const char *tc_gemm_error(const tc_gemm *g);
/* "gemm -g 1 -M 64 -N 64 -K 64 --transA 0 --transB 0 -t f32": the perf-DB
 * key `tilec gemm` uses too. */
const char *tc_gemm_problem_string(const tc_gemm *g);
/* tc_gemm_plan, tc_gemm_tune, tc_gemm_run and tc_gemm_verify work as
 * tc_conv2d_plan, tc_conv2d_tune, tc_conv2d_run and tc_conv2d_verify.
 * a and b are only read; c gets the result.  tc_gemm_verify (and the
 * checks of tc_gemm_tune) compare every element of C when the GEMM has at
 * most 2^30 multiply-adds, else one pseudo-random element in each square
 * cell of C (power-of-two side, about 2^30 / K cells; `tilec gemm -V 1`
 * says how many), so checking an 8192^3 GEMM takes about a second.
 * tc_gemm_plan without a perf config returns TC_ERR_UNSUPPORTED when no
 * kernel kind of the target fits the GEMM (the heuristic finds no valid
 * perf config). */
tc_status tc_gemm_plan(tc_gemm *g, const char *perf_config);
tc_status tc_gemm_tune(tc_gemm *g, const tc_op_tune_options *t, tc_op_tune_result *r);
tc_status tc_gemm_run(tc_gemm *g, const void *a, const void *b, void *c, double *ms);
int64_t tc_gemm_verify(tc_gemm *g, const void *a, const void *b, const void *c, double *worst);
/* Runs the GEMM as tc_gemm_run (its time, warm-up included, in *first_ms;
 * may be NULL), then launches the same kernel iters more times back to
 * back on the same buffers, the time of each in milliseconds in
 * times[0 .. iters-1] (iters 0: none; times may then be NULL). */
tc_status tc_gemm_run_timed(tc_gemm *g, const void *a, const void *b, void *c, double *first_ms,
                            int iters, double *times);
/* tc_gemm_verify with the whole finding in *r (may be NULL): the largest
 * absolute error, and how many elements were compared in which cells.
 * Returns r->bad. */
int64_t tc_gemm_verify_result(tc_gemm *g, const void *a, const void *b, const void *c,
                              tc_op_verify_result *r);
/* As the tc_conv2d_ accessors: tc_gemm_perf_config,
 * tc_gemm_perf_config_source, tc_gemm_perf_config_detail, and
 * tc_gemm_kernel_name and tc_gemm_kernel_source of the GEMM's one kernel,
 * whose parameters are A, B, C. */
const char *tc_gemm_perf_config(const tc_gemm *g);
const char *tc_gemm_perf_config_source(const tc_gemm *g);
const char *tc_gemm_perf_config_detail(const tc_gemm *g);
const char *tc_gemm_kernel_name(const tc_gemm *g);
const char *tc_gemm_kernel_source(const tc_gemm *g);
/* 0 before a plan, else 1 with the launch filled. */
int tc_gemm_kernel_launch(const tc_gemm *g, int64_t grid[3], int64_t block[3]);
/* The static shared memory of the kernel in bytes (0 before a plan). */
int64_t tc_gemm_kernel_smem_bytes(const tc_gemm *g);
/* As tc_conv2d_warning. */
const char *tc_gemm_warning(const tc_gemm *g);
/* How the kernel indexes A, B and C: each matrix's coordinate-transform
 * view described in text, "A view:\n...", for a comment next to the
 * emitted kernel ("" before a plan). */
const char *tc_gemm_views_describe(const tc_gemm *g);

#ifdef __cplusplus
}
#endif
#endif
