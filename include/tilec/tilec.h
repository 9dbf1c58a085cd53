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
  TC_ERR_UNSUPPORTED  /* a feature this build or target does not have */
} tc_status;

const char *tc_status_name(tc_status s);

typedef enum tc_dtype { TC_F32, TC_F16, TC_BF16, TC_I32, TC_I8 } tc_dtype;
size_t tc_dtype_size(tc_dtype t);
const char *tc_dtype_name(tc_dtype t);

typedef enum tc_memtype {
  TC_MEM_GLOBAL,
  TC_MEM_SHARED,
  TC_MEM_LOCAL,  /* registers, private to a thread */
  TC_MEM_TENSOR  /* Blackwell tensor memory: lanes x columns */
} tc_memtype;
const char *tc_memtype_name(tc_memtype m);

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
 * element copy; the others are filled in by the data-movement work. */
typedef enum tc_ldst_type {
  TC_LDST_DEFAULT,
  TC_LDST_CP_ASYNC,
  TC_LDST_BULK_TENSOR, /* TMA tile load/store */
  TC_LDST_LDMATRIX,
  TC_LDST_LDMATRIX_TRANS,
  TC_LDST_STMATRIX,
  TC_LDST_TMEM_LOAD,
  TC_LDST_TMEM_STORE
} tc_ldst_type;

typedef enum tc_unary_op {
  TC_NEG, TC_ABS, TC_RELU, TC_EXP, TC_LOG, TC_SQRT, TC_TANH, TC_SIGMOID,
  TC_RECIPROCAL
} tc_unary_op;

typedef enum tc_binary_op {
  TC_ADD, TC_SUB, TC_MUL, TC_DIV, TC_MAX, TC_MIN
} tc_binary_op;

typedef enum tc_swizzle_type {
  TC_SWIZZLE_XOR /* nvFuser's Xor(x, y) = {x, x ^ y} on two axes */
} tc_swizzle_type;

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

tc_fusion *tc_fusion_new(void);
void tc_fusion_free(tc_fusion *f);
/* The last error message of a call on this fusion ("" when none). */
const char *tc_fusion_error(const tc_fusion *f);

/* A contiguous row-major input of the given shape (every extent >= 1). */
tc_tensor *tc_input(tc_fusion *f, tc_dtype t, int ndims, const int64_t *shape);
tc_status tc_add_output(tc_fusion *f, tc_tensor *t);

tc_tensor *tc_set(tc_fusion *f, tc_tensor *in);
tc_tensor *tc_unary(tc_fusion *f, tc_unary_op op, tc_tensor *in);
tc_tensor *tc_binary(tc_fusion *f, tc_binary_op op, tc_tensor *a, tc_tensor *b);
tc_tensor *tc_cast(tc_fusion *f, tc_tensor *in, tc_dtype to);
/* out[i_perm[0], ..., ] = in[...]: output logical axis k is input axis
 * perm[k] (a transpose for perm = {1, 0}). */
tc_tensor *tc_permute(tc_fusion *f, tc_tensor *in, const int *perm);
/* These return NULL (message in tc_fusion_error) on bad arguments, e.g.
 * operands of different shapes. */

/* The tensor's name as it appears in kernels and messages ("T3"). */
const char *tc_tensor_name(const tc_tensor *t);
tc_dtype tc_tensor_dtype(const tc_tensor *t);
int tc_tensor_ndims(const tc_tensor *t); /* logical rank */
int64_t tc_tensor_extent(const tc_tensor *t, int logical_axis);
int tc_tensor_nloop(const tc_tensor *t); /* loop-domain rank */
int64_t tc_tensor_loop_extent(const tc_tensor *t, int axis);
tc_ptype tc_tensor_loop_ptype(const tc_tensor *t, int axis);
/* Writes the loop domain as text, e.g. "T2[BIDx{2}, iS{4}]"; returns buf. */
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
tc_status tc_parallelize(tc_tensor *t, int axis, tc_ptype p);
tc_status tc_set_memory_type(tc_tensor *t, tc_memtype m);
tc_status tc_set_ldst_type(tc_tensor *t, tc_ldst_type op);
/* Inlines the tensor into its consumer at loop position pos: loop axes
 * [0, pos) are shared with the consumer's. */
tc_status tc_inline_at(tc_tensor *t, int pos);
/* Replays the consumer's loop transforms on the producer and inlines at
 * pos (nvFuser's computeAt). */
tc_status tc_compute_at(tc_tensor *producer, tc_tensor *consumer, int pos);
/* Inlines every intermediate tensor as deep as its consumer allows. */
tc_status tc_inline_most(tc_fusion *f);
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

/* ---- compiling and running -------------------------------------------- */

typedef struct tc_compile_options {
  tc_target target;
  const char *arch;        /* "sm_80", "sm_90a", "sm_100a", "gfx90a"; NULL = default */
  const char *kernel_name; /* NULL = "tilec_kernel" */
} tc_compile_options;

/* Lowers the fusion and prints the kernel.  On failure returns NULL and
 * *status / tc_fusion_error say why. */
tc_kernel *tc_compile(tc_fusion *f, const tc_compile_options *opt, tc_status *status);
void tc_kernel_free(tc_kernel *k);
const char *tc_kernel_source(const tc_kernel *k);
const char *tc_kernel_name(const tc_kernel *k);
/* Bytes of shared memory the kernel allocates per block. */
int64_t tc_kernel_smem_bytes(const tc_kernel *k);
/* Tensor-memory columns allocated per block (0 when none). */
int64_t tc_kernel_tmem_columns(const tc_kernel *k);
void tc_kernel_launch_dims(const tc_kernel *k, int64_t grid[3], int64_t block[3]);
/* Kernel parameters in order: the fusion's inputs, then its outputs. */
int tc_kernel_nparams(const tc_kernel *k);
size_t tc_kernel_param_bytes(const tc_kernel *k, int i);
const char *tc_kernel_error(const tc_kernel *k);

/* Compiles the kernel's source with the target's device compiler without
 * running it: NVRTC for CUDA (PTX for the kernel's arch; needs no GPU),
 * the OpenCL device's compiler for OpenCL (`device` as for tc_kernel_run).
 * On failure tc_kernel_error has the compiler log. */
tc_status tc_kernel_build(tc_kernel *k, const char *device);

/* Runs the kernel: args[i] points at host data for parameter i (inputs are
 * copied in, outputs copied back).  device selects an OpenCL device
 * ("pocl", a platform/device name substring, or "P:D" indices; NULL uses
 * $TILEC_OPENCL_DEVICE, then PoCL, then the first device).  If ms is not
 * NULL it receives the kernel time in milliseconds. */
tc_status tc_kernel_run(tc_kernel *k, void *const *args, const char *device, double *ms);

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
/* Round-to-nearest-even conversions between f32 and the 16-bit formats. */
uint16_t tc_f32_to_f16(float f);
float tc_f16_to_f32(uint16_t h);
uint16_t tc_f32_to_bf16(float f);
float tc_bf16_to_f32(uint16_t h);

#ifdef __cplusplus
}
#endif
#endif
