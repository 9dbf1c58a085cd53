/* tensor_file.h - tensors to and from files, for `tilec driver`: raw
 * binary (the elements one after the other in memory order, little-endian,
 * as MIOpenDriver's --in_data / --weights / --dout_data files and its
 * dump_*.bin files hold them) or NumPy's .npy format, chosen by the file
 * name: a name ending in ".npy" (any case) is .npy, any other is raw.
 *
 * A tensor is described by its dtype (f32 or f16) and its dims in memory
 * order, outermost first (an NHWC input is [N, H, W, C]); an .npy file
 * holds exactly those dims as its C-order shape. */
#ifndef TILEC_TENSOR_FILE_H
#define TILEC_TENSOR_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "tilec/tilec.h"
#include "../src/base/base.h"

#define TF_MAX_RANK 8

typedef enum tf_status {
  TF_OK = 0,
  TF_IO,       /* the file cannot be opened, read or written */
  TF_MISMATCH  /* it can, but does not hold the tensor: size, shape, element
                  type, or a malformed .npy header */
} tf_status;

/* What an .npy header says. */
typedef struct tf_npy {
  char kind;         /* 'f' float, 'i' / 'u' integer, 'b' bool, ... */
  int size;          /* bytes per element */
  int big_endian;    /* '>' in the descr */
  int fortran_order;
  int rank;
  int64_t dims[TF_MAX_RANK];
  char descr[16];    /* as written, e.g. "<f4" */
  size_t data_offset; /* bytes before the elements */
} tf_npy;

/* Does path name an .npy file (ends in ".npy", any case)? */
int tf_is_npy(const char *path);

/* Parses the .npy header at the start of data (len bytes: at least the
 * whole header).  TF_OK, or TF_MISMATCH with a one-line reason in err. */
tf_status tf_npy_parse(const unsigned char *data, size_t len, tf_npy *h, tc_str *err);

/* Reads the tensor (dtype f32 or f16, rank dims in memory order) from path
 * into buf.  Raw: the file must hold exactly the tensor's bytes.  .npy:
 * its shape must be dims and its elements little- or big-endian float16,
 * float32 or float64 (converted to dtype, rounding to nearest even; a
 * float64 goes through float32); *converted (may be NULL) is set to 1 when
 * a conversion happened.  TF_OK, or TF_IO / TF_MISMATCH with one line in
 * err naming the file. */
tf_status tf_read(const char *path, tc_dtype dtype, int rank, const int64_t *dims, void *buf,
                  int *converted, tc_str *err);

/* Writes the tensor to path: raw bytes, or .npy (descr "<f4" or "<f2",
 * shape dims, C order).  TF_OK or TF_IO with one line in err. */
tf_status tf_write(const char *path, tc_dtype dtype, int rank, const int64_t *dims,
                   const void *buf, tc_str *err);

#endif
