/* cxx_common.h - what the two C++ dialects (CUDA, HIP) print alike.
 *
 * Both store 16-bit floats as unsigned short and declare kernels,
 * buffers and shared arrays the same way; they differ in the 16-bit float
 * conversions of the prelude, in the shared-memory declaration and in
 * their additions (tensor memory for CUDA, buffer loads and MFMA for
 * HIP). */
#ifndef TC_CXX_COMMON_H
#define TC_CXX_COMMON_H

#include "dialect.h"

/* The start of both preludes: TC_DEV and the helpers of
 * TC_PRELUDE_INT (dialect.h).  Each dialect follows it with its 16-bit
 * float conversions. */
#define TC_CXX_PRELUDE_INT \
  "#define TC_DEV __device__ __forceinline__\n" TC_PRELUDE_INT("TC_DEV")

/* Statements defining bidx..tidz after the declaration of tc_smem. */
#define TC_CXX_INDEX_DEFS                                                  \
  "  const int bidx = blockIdx.x, bidy = blockIdx.y, bidz = blockIdx.z;\n" \
  "  const int tidx = threadIdx.x, tidy = threadIdx.y, tidz = threadIdx.z;\n"

/* The designated initializers of the tc_dialect members that CUDA and
 * HIP share (all but name, prelude, index_defs, alloc and the additions). */
#define TC_CXX_DIALECT_COMMON                                                     \
  .kernel_open = tc_cxx_kernel_open, .param = tc_cxx_param,                       \
  .barrier = "__syncthreads();", .unroll_pragma = "#pragma unroll",               \
  .load = tc_cxx_load, .store = tc_cxx_store,                                     \
  .fexp = "expf", .flog = "logf", .fsqrt = "sqrtf", .ftanh = "tanhf",             \
  .fabs_ = "fabsf", .fmax_ = "fmaxf", .fmin_ = "fminf",                           \
  .kernel_begin = tc_cxx_kernel_begin, .buffer_param = tc_cxx_buffer_param,       \
  .shared_array = tc_cxx_shared_array,                                          \
  .vec_load = tc_cxx_vec_load, .vec_elem = tc_cxx_vec_elem,                       \
  .vec_store = tc_cxx_vec_store, .global_qual = "", .grid_fence = "__threadfence();",  \
  .grid_atomic_inc = "atomicAdd(%s, 1)"

/* tc_dialect members, the same for CUDA and HIP. */
void tc_cxx_kernel_begin(tc_str *o, const char *name, int64_t threads);
/* The same with __launch_bounds__(threads, min_blocks) (min_blocks > 0):
 * ptxas then budgets registers for that many resident blocks.  A kernel
 * that changes its warps' registers with setmaxnreg needs it (min_blocks
 * 1): without it ptxas cannot tell the register count at entry and drops
 * the setmaxnreg instructions (info C7508).  cluster > 1 adds
 * __cluster_dims__(cluster, 1, 1) (sm_90: the launch groups that many
 * consecutive blocks along x into a cluster). */
void tc_cxx_kernel_begin_blocks(tc_str *o, const char *name, int64_t threads, int min_blocks,
                                int cluster);
void tc_cxx_kernel_open(tc_str *o, const tc_kir *k, const char *name);
void tc_cxx_buffer_param(tc_str *o, tc_dtype t, const char *name, int is_output, int first);
void tc_cxx_param(tc_str *o, const tc_tensor *t, int is_output, int first);
void tc_cxx_shared_array(tc_str *o, tc_dtype t, const char *name, int64_t count, int depth);
void tc_cxx_load(tc_str *o, tc_dtype t, tc_memtype m, const char *name, const char *idx);
void tc_cxx_store(tc_str *o, tc_dtype t, tc_memtype m, const char *name, const char *idx,
                  const char *v);

/* Vector accesses (dialect.h vec_load, vec_elem, vec_store). */
void tc_cxx_vec_load(tc_str *o, tc_dtype t, tc_memtype m, const char *name, const char *idx, int n,
                     int raw, const char *valid, const char *var, int depth);
void tc_cxx_vec_elem(tc_str *o, tc_dtype t, const char *var, int n, int i, int raw);
void tc_cxx_vec_store(tc_str *o, tc_dtype t, tc_memtype m, const char *name, const char *idx, int n,
                      int raw, const char *const *vals, int depth);

/* Declares a shared or local buffer (not tensor memory) at the current
 * position (the caller has indented); a shared one is carved from tc_smem,
 * with `note` (e.g. "LDS, ") at the start of its comment. */
void tc_cxx_alloc_buffer(tc_str *o, const tc_kalloc *a, const char *note);

#endif
