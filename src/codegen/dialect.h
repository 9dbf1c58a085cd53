/* dialect.h - what differs between the languages tilec prints.
 *
 * The printer (printer.c) walks the kernel IR once; everything
 * target-specific comes from a tc_dialect: the prelude of helper
 * functions, how a kernel and its parameters are declared, how block and
 * thread indices are read, how on-chip buffers are declared, the barrier,
 * 16-bit float loads/stores and math function names.  A new target is a
 * new dialect file. */
#ifndef TC_DIALECT_H
#define TC_DIALECT_H

#include "../lower/kernel.h"

/* The helper functions at the start of every dialect's prelude, each
 * declared with the qualifier Q ("static" for OpenCL, "TC_DEV" for CUDA
 * and HIP), so that the three targets print the same definitions and
 * compute the same values (the semantics of the ops in tilec.h):
 *   index arithmetic: tc_fdiv / tc_fmod, floor division and its
 *   remainder (0 and a where b == 0), tc_min, tc_max;
 *   i32 / i8 ops (computed in int): tc_iadd, tc_isub, tc_imul, tc_ineg,
 *   tc_iabs wrap around in two's complement (through unsigned: signed
 *   overflow is undefined in C); tc_idiv truncates toward zero, x / 0 = 0
 *   and INT_MIN / -1 = INT_MIN (which traps on x86);
 *   casts of a float to i32 / i8: tc_sat_i32, tc_sat_i8 truncate toward
 *   zero and saturate to the type's range, NaN -> 0 (a plain (int) of an
 *   out-of-range value or NaN is undefined). */
#define TC_PRELUDE_INT(Q)                                                                                       \
  Q " int tc_fdiv(int a, int b) { if (b == 0) return 0; int q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q; }\n" \
  Q " int tc_fmod(int a, int b) { if (b == 0) return a; int r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n" \
  Q " int tc_min(int a, int b) { return a < b ? a : b; }\n"                                                    \
  Q " int tc_max(int a, int b) { return a > b ? a : b; }\n"                                                    \
  Q " int tc_iadd(int a, int b) { return (int)((unsigned)a + (unsigned)b); }\n"                                \
  Q " int tc_isub(int a, int b) { return (int)((unsigned)a - (unsigned)b); }\n"                                \
  Q " int tc_imul(int a, int b) { return (int)((unsigned)a * (unsigned)b); }\n"                                \
  Q " int tc_ineg(int a) { return (int)(0u - (unsigned)a); }\n"                                                \
  Q " int tc_iabs(int a) { return a < 0 ? tc_ineg(a) : a; }\n"                                                 \
  Q " int tc_idiv(int a, int b) { return b == 0 ? 0 : b == -1 ? tc_ineg(a) : a / b; }\n"                       \
  Q " int tc_sat_i32(float x) { return x != x ? 0 : x >= 2147483648.0f ? 2147483647 : x <= -2147483648.0f ? -2147483647 - 1 : (int)x; }\n" \
  Q " int tc_sat_i8(float x) { return x != x ? 0 : x >= 127.0f ? 127 : x <= -128.0f ? -128 : (int)x; }\n"

typedef struct tc_dialect {
  const char *name;
  /* Helper functions every kernel may use: TC_PRELUDE_INT's, and the
   * 16-bit float conversions. */
  const char *prelude;
  /* Opening of a kernel definition up to "(" and the parameter list. */
  void (*kernel_open)(tc_str *o, const tc_kir *k, const char *name);
  void (*param)(tc_str *o, const tc_tensor *t, int is_output, int first);
  /* Statements that define bidx..tidz. */
  const char *index_defs;
  /* Declares an on-chip buffer (shared, tensor or local memory). */
  void (*alloc)(tc_str *o, const tc_kalloc *a, int depth);
  const char *barrier;
  /* Defines tc_wi_zero: an int that is 0 in every thread, computed from
   * the thread index so that the device compiler takes it for a value
   * that differs between threads (NULL: the target needs none).  In a
   * kernel with barriers, the printer bounds every loop that has no
   * barrier inside at extent + tc_wi_zero, except the Unroll and
   * Vectorize loops: a bound it does not know would keep the device
   * compiler from unrolling them, and unrolled they are no loops to PoCL's
   * passes, which run after it.  PoCL (OpenCL on the CPU) adds
   * barriers of its own to loops whose trip count is the same in every
   * work-item, in kernels that have barriers, and PoCL 3.1 then runs an
   * outer loop of such a loop a wrong number of times (wrong results, or
   * a loop that never ends) when the inner loop's body is predicated on
   * the outer loop's index; a bound it cannot prove uniform keeps it from
   * adding them.  PoCL folds tc_wi_zero away once it has laid out the
   * work-item loops, so the loops end up as the printed extents say. */
  const char *wi_zero_def;
  const char *unroll_pragma;
  /* Printed before every loop of the kernel's loop nest (NULL: none).
   * OpenCL: keeps LLVM's loop vectorizer off the kernel's own loops.
   * PoCL 3.1 lets it vectorize loops of a few iterations (it lowers the
   * vectorizer's minimum trip count for its work-item loops), and
   * LLVM 15 then predicates them with masked vector loads and stores
   * that the x86 instruction selector cannot select when the values of
   * one such loop feed another through shared memory ("LLVM ERROR:
   * Cannot select", which ends the whole process): fabs / fmax results
   * written to shared memory in a predicated loop, a predicated float
   * to i8 cast.  PoCL still vectorizes across work-items. */
  const char *loop_pragma;
  /* Reads element idx of buffer `name` (of dtype t in memory m) as its
   * compute type (float or int). */
  void (*load)(tc_str *o, tc_dtype t, tc_memtype m, const char *name, const char *idx);
  /* Writes value (compute type) to element idx of buffer `name`. */
  void (*store)(tc_str *o, tc_dtype t, tc_memtype m, const char *name, const char *idx,
                const char *value);
  /* Float math: names of exp, log, sqrt, tanh, fabs, fmax, fmin. */
  const char *fexp, *flog, *fsqrt, *ftanh, *fabs_, *fmax_, *fmin_;
  /* For generators that print kernels without a tc_kir (src/ops):
   * kernel_begin opens a kernel of `threads` threads per block up to "(";
   * buffer_param declares a global buffer parameter of dtype t (storage
   * type, const unless is_output, preceded by ", " unless first);
   * shared_array declares `count` elements of dtype t in shared memory at
   * indentation depth, followed by a newline. */
  void (*kernel_begin)(tc_str *o, const char *name, int64_t threads);
  void (*buffer_param)(tc_str *o, tc_dtype t, const char *name, int is_output, int first);
  void (*shared_array)(tc_str *o, tc_dtype t, const char *name, int64_t count, int depth);
  /* Block reductions (printer.c): the lanes of a warp exchange values
   * with shfl_xor, a printf format of (value, lane mask), two %s, as
   * one expression ("__shfl_xor_sync(0xffffffffu, %s, %s)" on CUDA); NULL:
   * the printer emulates the exchange through shared memory (OpenCL).
   * shfl_width is the warp the reduction assumes: 32 on CUDA and in the
   * emulation, 64 on AMD (a wavefront). */
  const char *shfl_xor;
  int shfl_width;
  /* ---- additions (HIP) ---- */
  /* Threads of a wavefront where the generators rely on it (64 for HIP);
   * 0 where they do not (OpenCL emulates 64-lane waves, CUDA). */
  int wave_size;
  /* Global loads of the generators through buffer resources (NULL where
   * the target has none; plain `load` is used then).  buffer_setup
   * declares, at indentation depth, the resource of global buffer
   * parameter `name` covering `bytes` bytes (at most INT32_MAX);
   * buffer_load reads element idx through it, as the compute type (like
   * load) or, when raw, as the stored bits (the storage type). */
  void (*buffer_setup)(tc_str *o, tc_dtype t, const char *name, int64_t bytes, int depth);
  void (*buffer_load)(tc_str *o, tc_dtype t, const char *name, const char *idx, int raw);
  /* MFMA (AMD matrix cores) for the XDLOPS GEMM (src/ops/gemm_mfma.c);
   * NULL where the target has none (CUDA).  `kind` is TC_MFMA_32X32X8 or
   * TC_MFMA_16X16X16 (src/target/target.h).  mfma_prelude (types, helpers)
   * is printed once before the kernel.  The kernel defines `tc_wave` and
   * `tc_lane` (tid / 64, tid % 64) before mfma_decls, which declares the
   * fragments a_frag[na][4], b_frag[nb][4] (16-bit storage bits) and the
   * accumulators c_acc[nacc][n] (f32, n = 16 or 4) for `waves` waves,
   * plus mfma_smem(waves) bytes of shared memory of its own.  mfma prints
   * one wave-wide acc += a * b with fragments of dtype `in` (f16 or
   * bf16): AMD's builtin for HIP; for OpenCL an emulation with the same
   * lane layouts (docs/amd.md). */
  const char *mfma_prelude;
  void (*mfma_decls)(tc_str *o, int kind, int na, int nb, int nacc, int waves, int depth);
  int64_t (*mfma_smem)(int waves);
  void (*mfma)(tc_str *o, int kind, tc_dtype in, const char *a, const char *b, const char *acc,
               int depth);
  /* ---- tensor memory (src/lower/tmem.c); NULL where the target has none.
   * Printed only for kernels that use it (tc_kir.tmem_columns > 0):
   * tmem_prelude (helpers, once per translation unit); tmem_setup, after
   * the buffers, allocates every tensor-memory tc_kalloc (CUDA:
   * tcgen05.alloc by warp 0 into a shared-memory slot, then
   * relinquish_alloc_permit; OpenCL: one 128-lane x 512-column local array
   * of 32-bit words) and defines tc_tmem_<tensor>, its address (lane << 16
   * | column); tmem_teardown frees it at the end of the kernel
   * (tcgen05.dealloc by warp 0); tmem_barrier replaces barrier (tcgen05
   * fences around it); tmem_access prints one warp-collective tcgen05.st
   * (is_load 0) of `words` 32-bit registers tc_tr[0 .. words) to the
   * address `addr` (an int expression, relative to allocation a), or
   * tcgen05.ld into them, and waits for it to complete; f32_bits and
   * bits_f32 name the bit casts between float and unsigned int. */
  const char *tmem_prelude;
  void (*tmem_setup)(tc_str *o, const tc_kir *k);
  void (*tmem_teardown)(tc_str *o, const tc_kir *k);
  const char *tmem_barrier;
  void (*tmem_access)(tc_str *o, const tc_kalloc *a, int is_load, int words, const char *addr,
                      int depth);
  const char *f32_bits, *bits_f32;
  /* ---- ldmatrix / stmatrix m8n8 .b16 (src/lower/ldst.c,
   * src/codegen/ldst_*.c); NULL where the target has none (HIP: lowering
   * refuses them there).  Printed only for kernels that use them
   * (tc_kir.nldsm > 0): ldsm_prelude once per translation unit; ldsm_setup
   * after the buffers (OpenCL: the local scratch of published row
   * addresses); ldsm_access prints one warp-collective ldmatrix.x<num>
   * (is_load; .trans when trans) into the num (1, 2, 4) 32-bit registers
   * tc_lr[0 .. num), or stmatrix from them, of the m8n8 matrices whose row
   * this lane supplies at element `addr` (an int expression) of the shared
   * buffer `smem` (16-bit storage). */
  const char *ldsm_prelude;
  void (*ldsm_setup)(tc_str *o, const tc_kir *k);
  void (*ldsm_access)(tc_str *o, int is_load, int num, int trans, const char *smem,
                      const char *addr, int depth);
  /* ---- bulk tensor (TMA) copies (src/lower/tma.c, tma_cuda.c); NULL where
   * lowering never makes them (only CUDA sm_90+ does).  For kernels with
   * tc_kir.ntma > 0: tma_prelude once; tma_params after the buffer
   * parameters (one tensor map per global tensor); tma_setup after the
   * buffers (mbarriers); tma_copy prints statement s (tc_knode.stmt.tma) in
   * place of its loop nest; tma_wait, before node n's barrier, the wait
   * of a ring of bulk tensor copies for its tile (tc_knode.mbar_slot). */
  const char *tma_prelude;
  void (*tma_params)(tc_str *o, const tc_kir *k);
  void (*tma_setup)(tc_str *o, const tc_kir *k);
  void (*tma_copy)(tc_str *o, const tc_kir *k, const tc_knode *s, int depth);
  void (*tma_wait)(tc_str *o, const tc_kir *k, const tc_knode *n, int depth);
  /* ---- vector accesses of the generators (src/ops/gemm.c); NULL where
   * the target has none (the generators then access element by element).
   * Each moves n consecutive elements (n a power of two >= 2, n times the
   * element size at most 16 bytes) of buffer `name` (dtype t, in memory m)
   * starting at element idx (an int expression), which the caller has
   * proven a multiple of n: the access is aligned to n elements given a
   * buffer aligned to 16 bytes (global buffers are; the generators'
   * shared arrays are declared so).  vec_load declares, at indentation
   * depth, `var` holding the elements (zeros where the C condition `valid`
   * is false; NULL: always loaded), as floats or, when raw, as the stored
   * bits; vec_elem prints element i of such a var as a float (or, raw,
   * the stored bits); vec_store prints, at depth, the store of the n
   * float expressions vals[] converted to t (raw: stored bits as they
   * are), followed by a newline. */
  void (*vec_load)(tc_str *o, tc_dtype t, tc_memtype m, const char *name, const char *idx, int n,
                   int raw, const char *valid, const char *var, int depth);
  void (*vec_elem)(tc_str *o, tc_dtype t, const char *var, int n, int i, int raw);
  void (*vec_store)(tc_str *o, tc_dtype t, tc_memtype m, const char *name, const char *idx, int n,
                    int raw, const char *const *vals, int depth);
  /* ---- mma.sync m16n8k16 (NVIDIA tensor cores) for the mma GEMM
   * (src/ops/gemm_mma.c); NULL where the target has none (HIP).
   * mma_prelude is printed once before the kernel; the kernel defines
   * tc_warp and tc_lane (tid / 32, tid % 32) and the fragments
   * (unsigned int a_frag[..][4], b_frag[..][2], float c_acc[..][4]);
   * mma_decls (may be NULL) declares what the dialect needs besides, for
   * `warps` warps, taking mma_smem(warps) bytes of shared memory (NULL:
   * none); mma prints one warp-wide acc += a * b with inputs of dtype `in`
   * (f16 or bf16): the PTX instruction for CUDA, an emulation with the
   * same lane layouts for OpenCL (mma_emu.c, docs/mma.md). */
  const char *mma_prelude;
  void (*mma_decls)(tc_str *o, int warps, int depth);
  int64_t (*mma_smem)(int warps);
  void (*mma)(tc_str *o, tc_dtype in, const char *a, const char *b, const char *acc, int depth);
  /* ---- wgmma m64nNk16 (sm_90a warp groups) for the wgmma GEMM
   * (src/ops/gemm_wgmma.c, docs/wgmma.md) and the matmul's wgmma op type
   * (printer.c, docs/matmul.md); NULL where the target has none.
   * wgmma_prelude once before the kernel (defines tc_wgmma_desc(addr, lbo,
   * sbo, mode), mode the descriptor's swizzle field: 0 none, 1 128B);
   * wgmma_addr prints the descriptor address (u32 bytes) of element
   * `off` of shared array `lds`; wgmma_begin / wgmma_end are the
   * statements before and after one blockwise GEMM's instructions (NULL:
   * none), wgmma_end_wait1 the end that leaves this group running (at
   * most one pending: a ring's wait depth 1, circular.c) and wgmma_drain
   * the wait for every group after such a ring loop (NULL: none; the
   * emulation is synchronous), wgmma_acc_fence, printed after the drain
   * for each such statement's accumulators acc[0 .. nr), a compiler
   * barrier on them (they are read only after the drain; NULL: none),
   * wgmma_store_fence the one after the threads' shared stores;
   * wgmma prints one warp-group-wide acc[0 .. n/2) += A * B with the
   * descriptors da, db (expressions) over the shared arrays lds_a, lds_b,
   * trans_a / trans_b 1 for an M- / N-major operand (imm-trans-a/b): the
   * PTX for CUDA (wgmma_cuda.c), an emulation for OpenCL (wgmma_emu.c). */
  const char *wgmma_prelude;
  void (*wgmma_addr)(tc_str *o, const char *lds, const char *off);
  const char *wgmma_begin, *wgmma_end, *wgmma_end_wait1, *wgmma_drain, *wgmma_store_fence;
  void (*wgmma)(tc_str *o, tc_dtype in, int n, const char *lds_a, const char *da,
                const char *lds_b, const char *db, int trans_a, int trans_b, const char *acc,
                 int depth);
  void (*wgmma_acc_fence)(tc_str *o, const char *acc, int nr, int depth);
  /* ---- grid reductions (printer.c): global_qual qualifies a pointer into
   * global memory ("__global " in OpenCL, "" in CUDA and HIP); grid_fence
   * makes a thread's earlier global writes visible to other blocks before
   * its later ones; grid_atomic_inc, a printf format of one int pointer
   * (%s), adds 1 to the int atomically and gives its old value. */
  const char *global_qual, *grid_fence, *grid_atomic_inc;
  /* ---- cp.async (src/lower/circular.c: the copies of a circular buffer);
   * NULL where the target has none (OpenCL, HIP: the ring's copies are
   * plain statements and its waits and commits print nothing).
   * cp_async_prelude once for kernels with tc_kir.ncp_async > 0;
   * cp_async prints, at depth, one copy of `bytes` (4, 8 or 16) bytes
   * from the global address src to the shared address dst (C pointer
   * expressions), under the C condition pred (NULL: always), and where
   * zero (non-NULL) does not hold it fills the bytes with 0 instead of
   * reading them (src-size 0; a tile a wgmma reads whole); cp_commit
   * closes this thread's group of copies, cp_wait waits until at most n
   * of its groups are pending. */
  const char *cp_async_prelude;
  void (*cp_async)(tc_str *o, int bytes, const char *dst, const char *src, const char *pred,
                   const char *zero, int depth);
  void (*cp_commit)(tc_str *o, int depth);
  void (*cp_wait)(tc_str *o, int n, int depth);
} tc_dialect;

/* ldmatrix / stmatrix hooks of the CUDA (ldst_cuda.c) and OpenCL
 * (ldst_opencl.c) dialects. */
extern const char tc_cu_ldsm_prelude[];
void tc_cu_ldsm_access(tc_str *o, int is_load, int num, int trans, const char *smem,
                       const char *addr, int depth);
extern const char tc_cu_tma_prelude[];
void tc_cu_tma_params(tc_str *o, const tc_kir *k);
void tc_cu_tma_setup(tc_str *o, const tc_kir *k);
void tc_cu_tma_copy(tc_str *o, const tc_kir *k, const tc_knode *s, int depth);
void tc_cu_tma_wait(tc_str *o, const tc_kir *k, const tc_knode *n, int depth);
/* The tensor maps the kernel's tc_tmap parameters need, in their order
 * (one per global tensor a bulk copy touches): 2-D, dims {columns, rows}
 * of the global buffer seen as rows of its innermost logical extent, the
 * row stride in bytes, box {stmt.tma.cols, stmt.tma.rows}, the copy's swizzle.
 * Returns how many (at most cap), or -1 with the reason in why when a
 * tensor's copies need maps that one tc_rt_tmap cannot describe. */
struct tc_rt_tmap;
int tc_cu_tma_maps(const tc_kir *k, struct tc_rt_tmap *maps, int cap, tc_str *why);
extern const char tc_cl_ldsm_prelude[];
void tc_cl_ldsm_setup(tc_str *o, const tc_kir *k);
void tc_cl_ldsm_access(tc_str *o, int is_load, int num, int trans, const char *smem,
                       const char *addr, int depth);
/* Prints statement s lowered to ldmatrix / stmatrix (ldst_print.c). */
void tc_print_ldsm(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *s, int depth);

extern const tc_dialect tc_dialect_opencl;
extern const tc_dialect tc_dialect_cuda;
extern const tc_dialect tc_dialect_hip;
/* The dialect tc_compile prints for target; NULL for an unknown one. */
const tc_dialect *tc_dialect_for(tc_target target);

/* The OpenCL dialect's MFMA emulation (mfma_emu.c). */
extern const char tc_cl_mfma_prelude[];
void tc_cl_mfma_decls(tc_str *o, int kind, int na, int nb, int nacc, int waves, int depth);
int64_t tc_cl_mfma_smem(int waves);
void tc_cl_mfma(tc_str *o, int kind, tc_dtype in, const char *a, const char *b, const char *acc,
                int depth);

/* mma.sync m16n8k16: CUDA's PTX (mma_cuda.c) and the OpenCL emulation
 * (mma_emu.c). */
extern const char tc_cu_mma_prelude[];
void tc_cu_mma(tc_str *o, tc_dtype in, const char *a, const char *b, const char *acc, int depth);
extern const char tc_cl_mma_prelude[];
void tc_cl_mma_decls(tc_str *o, int warps, int depth);
int64_t tc_cl_mma_smem(int warps);
void tc_cl_mma(tc_str *o, tc_dtype in, const char *a, const char *b, const char *acc, int depth);

/* cp.async for circular buffers: CUDA's PTX (cp_async_cuda.c). */
extern const char tc_cu_cp_async_prelude[];
void tc_cu_cp_async(tc_str *o, int bytes, const char *dst, const char *src, const char *pred,
                    const char *zero, int depth);
void tc_cu_cp_commit(tc_str *o, int depth);
void tc_cu_cp_wait(tc_str *o, int n, int depth);

/* wgmma m64nNk16: CUDA's PTX (wgmma_cuda.c) and the OpenCL emulation
 * (wgmma_emu.c). */
extern const char tc_cu_wgmma_prelude[], tc_cu_wgmma_begin[], tc_cu_wgmma_end[],
    tc_cu_wgmma_end_wait1[], tc_cu_wgmma_drain[], tc_cu_wgmma_store_fence[];
void tc_cu_wgmma_addr(tc_str *o, const char *lds, const char *off);
void tc_cu_wgmma_acc_fence(tc_str *o, const char *acc, int nr, int depth);
void tc_cu_wgmma(tc_str *o, tc_dtype in, int n, const char *lds_a, const char *da,
                 const char *lds_b, const char *db, int trans_a, int trans_b, const char *acc,
                 int depth);
extern const char tc_cl_wgmma_prelude[];
void tc_cl_wgmma_addr(tc_str *o, const char *lds, const char *off);
void tc_cl_wgmma(tc_str *o, tc_dtype in, int n, const char *lds_a, const char *da,
                 const char *lds_b, const char *db, int trans_a, int trans_b, const char *acc,
                 int depth);

/* Welford reductions (welford.c): the state's M2 and count arrays next
 * to allocation a of state a->t (its mean); the value of a
 * TC_OP_WELFORD_PART of state w at element idx (var: M2 / count, else the
 * mean); a TC_RED_INIT or TC_RED_ACC statement of a Welford reduction;
 * its TC_RED_ALL block merge, with barrier printing a block barrier; the
 * shared scratch (three floats per thread) the merge uses. */
void tc_print_welford_allocs(tc_str *o, const tc_dialect *d, const tc_kalloc *a, int depth);
void tc_print_welford_part(tc_str *o, const tc_dialect *d, const tc_tensor *w, int var, const char *idx);
void tc_print_welford_step(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *s, int depth);
void tc_print_welford_all(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *s, int depth,
                          void (*barrier)(tc_str *o, const tc_dialect *d, const tc_kir *k, int depth));
void tc_print_welford_scratch(tc_str *o, const tc_dialect *d, int64_t threads);

/* The storage C type of a dtype in memory (16-bit floats are stored as
 * unsigned short bit patterns). */
const char *tc_storage_type(tc_dtype t);

/* Prints the whole kernel source. */
void tc_print_kernel(tc_str *o, const tc_dialect *d, const tc_kir *k, const char *name);

#endif
