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

typedef struct tc_dialect {
  const char *name;
  /* Helper functions every kernel may use: tc_fdiv, tc_fmod, tc_min,
   * tc_max, and 16-bit float conversions. */
  const char *prelude;
  /* Opening of a kernel definition up to "(" and the parameter list. */
  void (*kernel_open)(tc_str *o, const tc_kir *k, const char *name);
  void (*param)(tc_str *o, const tc_tensor *t, int is_output, int first);
  /* Statements that define bidx..tidz. */
  const char *index_defs;
  /* Declares an on-chip buffer (shared, tensor or local memory). */
  void (*alloc)(tc_str *o, const tc_kalloc *a, int depth);
  const char *barrier;
  const char *unroll_pragma;
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
} tc_dialect;

extern const tc_dialect tc_dialect_opencl;
extern const tc_dialect tc_dialect_cuda;

/* The storage C type of a dtype in memory (16-bit floats are stored as
 * unsigned short bit patterns). */
const char *tc_storage_type(tc_dtype t);

/* Prints the whole kernel source. */
void tc_print_kernel(tc_str *o, const tc_dialect *d, const tc_kir *k, const char *name);

#endif
