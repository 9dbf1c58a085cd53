/* tensor_file.c - raw and .npy tensor files for `tilec driver`
 * (tensor_file.h).  The .npy reader follows NumPy's format description
 * (versions 1.0, 2.0 and 3.0: magic, version, header length, a Python
 * dict literal with 'descr', 'fortran_order' and 'shape'); the writer
 * writes version 1.0 with the header padded to a multiple of 64 bytes. */
#include "tensor_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAX_HEADER (1u << 20)

int tf_is_npy(const char *path) {
  size_t n = path ? strlen(path) : 0;
  if (n < 4) return 0;
  const char *e = path + n - 4;
  return e[0] == '.' && (e[1] == 'n' || e[1] == 'N') && (e[2] == 'p' || e[2] == 'P') &&
         (e[3] == 'y' || e[3] == 'Y');
}

static int host_little_endian(void) {
  const uint16_t one = 1;
  return *(const unsigned char *)&one == 1;
}

/* "(2, 8, 9, 9)" into out. */
static void shape_text(int rank, const int64_t *dims, char *out, size_t cap) {
  size_t len = 0;
  len += (size_t)snprintf(out, cap, "(");
  for (int i = 0; i < rank && len < cap; i++)
    len += (size_t)snprintf(out + len, cap - len, "%s%lld", i ? ", " : "", (long long)dims[i]);
  if (len < cap) snprintf(out + len, cap - len, rank == 1 ? ",)" : ")");
}

static int64_t count_of(int rank, const int64_t *dims) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0) return -1;
    if (dims[i] && n > INT64_MAX / 16 / dims[i]) return -1;
    n *= dims[i];
  }
  return n;
}

/* ---- the .npy header ------------------------------------------------------ */

typedef struct npy_lex {
  const char *p, *end;
} npy_lex;

static void skip_space(npy_lex *l) {
  while (l->p < l->end && (*l->p == ' ' || *l->p == '\t' || *l->p == '\n' || *l->p == '\r'))
    l->p++;
}

static int eat(npy_lex *l, char c) {
  skip_space(l);
  if (l->p < l->end && *l->p == c) {
    l->p++;
    return 1;
  }
  return 0;
}

/* A quoted string ('...' or "...", no escapes) into out. */
static int quoted(npy_lex *l, char *out, size_t cap) {
  skip_space(l);
  if (l->p >= l->end || (*l->p != '\'' && *l->p != '"')) return 0;
  char q = *l->p++;
  size_t n = 0;
  while (l->p < l->end && *l->p != q) {
    if (*l->p == '\\' || n + 1 >= cap) return 0;
    out[n++] = *l->p++;
  }
  if (l->p >= l->end) return 0;
  l->p++;
  out[n] = 0;
  return 1;
}

static int word(npy_lex *l, const char *w) {
  skip_space(l);
  size_t n = strlen(w);
  if ((size_t)(l->end - l->p) < n || strncmp(l->p, w, n) != 0) return 0;
  l->p += n;
  return 1;
}

/* "(2, 8, 9, 9)", "(5,)" or "()" */
static int shape_tuple(npy_lex *l, tf_npy *h) {
  if (!eat(l, '(')) return 0;
  h->rank = 0;
  for (;;) {
    if (eat(l, ')')) return 1;
    skip_space(l);
    if (l->p >= l->end || *l->p < '0' || *l->p > '9' || h->rank >= TF_MAX_RANK) return 0;
    int64_t v = 0;
    while (l->p < l->end && *l->p >= '0' && *l->p <= '9') {
      if (v > (INT64_MAX - 9) / 10) return 0;
      v = v * 10 + (*l->p++ - '0');
    }
    if (eat(l, 'L')) { /* Python 2's long suffix */
    }
    h->dims[h->rank++] = v;
    if (!eat(l, ',')) return eat(l, ')');
  }
}

static tf_status bad_header(tc_str *err, const char *what) {
  tc_err_set(err, "not a valid .npy file: %s", what);
  return TF_MISMATCH;
}

tf_status tf_npy_parse(const unsigned char *data, size_t len, tf_npy *h, tc_str *err) {
  memset(h, 0, sizeof *h);
  if (len < 10 || memcmp(data, NPY_MAGIC, 6) != 0)
    return bad_header(err, "it does not start with the .npy magic string");
  int major = data[6];
  size_t hlen, start;
  if (major == 1) {
    hlen = (size_t)data[8] | (size_t)data[9] << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (len < 12) return bad_header(err, "the header is cut short");
    hlen = (size_t)data[8] | (size_t)data[9] << 8 | (size_t)data[10] << 16 |
           (size_t)data[11] << 24;
    start = 12;
  } else {
    tc_err_set(err, "not a .npy file this reader knows: format version %d.%d (1.0, 2.0 and "
             "3.0 are)", major, data[7]);
    return TF_MISMATCH;
  }
  if (hlen > NPY_MAX_HEADER || hlen > len - start)
    return bad_header(err, "the header is longer than the file");
  h->data_offset = start + hlen;
  npy_lex l = {(const char *)data + start, (const char *)data + start + hlen};
  int have_descr = 0, have_order = 0, have_shape = 0;
  if (!eat(&l, '{')) return bad_header(err, "the header is not a dict");
  while (!eat(&l, '}')) {
    char key[32];
    if (!quoted(&l, key, sizeof key) || !eat(&l, ':'))
      return bad_header(err, "the header dict is malformed");
    if (strcmp(key, "descr") == 0) {
      if (!quoted(&l, h->descr, sizeof h->descr)) {
        tc_err_set(err, "its elements are not of one simple type (a structured dtype); "
                 "float16, float32 or float64 expected");
        return TF_MISMATCH;
      }
      have_descr = 1;
    } else if (strcmp(key, "fortran_order") == 0) {
      if (word(&l, "True")) h->fortran_order = 1;
      else if (word(&l, "False")) h->fortran_order = 0;
      else return bad_header(err, "'fortran_order' is neither True nor False");
      have_order = 1;
    } else if (strcmp(key, "shape") == 0) {
      if (!shape_tuple(&l, h))
        return bad_header(err, "'shape' is not a tuple of at most 8 sizes");
      have_shape = 1;
    } else {
      return bad_header(err, "the header has a key other than 'descr', 'fortran_order' "
                        "and 'shape'");
    }
    if (!eat(&l, ',')) {
      if (!eat(&l, '}')) return bad_header(err, "the header dict is malformed");
      break;
    }
  }
  if (!have_descr || !have_order || !have_shape)
    return bad_header(err, "the header lacks 'descr', 'fortran_order' or 'shape'");
  const char *d = h->descr;
  if ((d[0] != '<' && d[0] != '>' && d[0] != '|' && d[0] != '=') || !d[1] || d[2] < '1' ||
      d[2] > '9')
    return bad_header(err, "'descr' is not a simple type such as '<f4'");
  h->big_endian = d[0] == '>' || (d[0] == '=' && !host_little_endian());
  h->kind = d[1];
  char *end = NULL;
  long size = strtol(d + 2, &end, 10);
  if (*end || size < 1 || size > 64) return bad_header(err, "'descr' has a bad size");
  h->size = (int)size;
  if (count_of(h->rank, h->dims) < 0) return bad_header(err, "the shape is too large");
  return TF_OK;
}

/* ---- element conversion --------------------------------------------------- */

static float load_elem(const unsigned char *p, int size, int swap) {
  unsigned char b[8];
  for (int i = 0; i < size; i++) b[i] = swap ? p[size - 1 - i] : p[i];
  if (size == 2) {
    uint16_t v;
    memcpy(&v, b, 2);
    return tc_f16_to_f32(v);
  }
  if (size == 4) {
    float v;
    memcpy(&v, b, 4);
    return v;
  }
  double v;
  memcpy(&v, b, 8);
  return (float)v;
}

static void store_elem(void *buf, int64_t i, tc_dtype dtype, float v) {
  if (dtype == TC_F16) ((uint16_t *)buf)[i] = tc_f32_to_f16(v);
  else ((float *)buf)[i] = v;
}

static const char *npy_type_name(char kind, int size) {
  if (kind == 'f') return size == 2 ? "float16" : size == 4 ? "float32" : size == 8 ? "float64" : "float";
  if (kind == 'i') return "signed integer";
  if (kind == 'u') return "unsigned integer";
  if (kind == 'b') return "bool";
  if (kind == 'c') return "complex";
  return "non-numeric";
}

/* ---- reading -------------------------------------------------------------- */

static tf_status io_error(tc_str *err, const char *verb, const char *path) {
  tc_err_set(err, "cannot %s %s: %s", verb, path, errno ? strerror(errno) : "short read");
  return TF_IO;
}

/* Reads exactly n bytes; 0 on a short read. */
static int read_all(FILE *f, void *dst, size_t n) { return fread(dst, 1, n, f) == n; }

static tf_status read_npy(FILE *f, const char *path, tc_dtype dtype, int rank, const int64_t *dims,
                          int64_t count, void *buf, int *converted, tc_str *err) {
  unsigned char pre[12];
  size_t got = fread(pre, 1, sizeof pre, f);
  if (got < 10) {
    tc_err_set(err, "%s is not a valid .npy file: it is only %zu bytes long", path, got);
    return TF_MISMATCH;
  }
  size_t hlen = pre[6] == 1 ? ((size_t)pre[8] | (size_t)pre[9] << 8) + 10
                            : got < 12 ? 12
                                       : ((size_t)pre[8] | (size_t)pre[9] << 8 |
                                          (size_t)pre[10] << 16 | (size_t)pre[11] << 24) + 12;
  if (hlen > NPY_MAX_HEADER + 12) hlen = NPY_MAX_HEADER + 12; /* the parser says why */
  unsigned char *head = malloc(hlen > got ? hlen : got);
  if (!head) return io_error(err, "read", path);
  memcpy(head, pre, got);
  size_t have = got + (hlen > got ? fread(head + got, 1, hlen - got, f) : 0);
  tf_npy h;
  tf_status st = tf_npy_parse(head, have, &h, err);
  free(head);
  if (st != TF_OK) {
    tc_err_prefix(err, "%s is ", path);
    return st;
  }
  if (fseek(f, (long)h.data_offset, SEEK_SET) != 0) return io_error(err, "read", path);
  char want[160], has[160];
  shape_text(rank, dims, want, sizeof want);
  shape_text(h.rank, h.dims, has, sizeof has);
  if (h.kind != 'f' || (h.size != 2 && h.size != 4 && h.size != 8)) {
    tc_err_set(err, "%s holds %s elements ('%s'); float16, float32 or float64 expected", path,
             npy_type_name(h.kind, h.size), h.descr);
    return TF_MISMATCH;
  }
  int same = h.rank == rank;
  for (int i = 0; same && i < rank; i++) same = h.dims[i] == dims[i];
  if (!same) {
    tc_err_set(err, "%s has shape %s; expected %s", path, has, want);
    return TF_MISMATCH;
  }
  int more_than_one = 0;
  for (int i = 0; i < rank; i++) more_than_one += h.dims[i] > 1;
  if (h.fortran_order && more_than_one > 1) {
    tc_err_set(err, "%s is in Fortran order; save a C-order array "
             "(numpy.ascontiguousarray)", path);
    return TF_MISMATCH;
  }
  size_t nbytes = (size_t)count * (size_t)h.size;
  int swap = h.big_endian == host_little_endian();
  int direct = swap == 0 && (size_t)h.size == tc_dtype_size(dtype);
  unsigned char *src = direct ? buf : malloc(nbytes ? nbytes : 1);
  if (!src) return io_error(err, "read", path);
  errno = 0;
  if (!read_all(f, src, nbytes)) {
    if (!direct) free(src);
    if (ferror(f)) return io_error(err, "read", path);
    tc_err_set(err, "%s ends before its %lld elements of shape %s", path, (long long)count, has);
    return TF_MISMATCH;
  }
  if (fgetc(f) != EOF) {
    if (!direct) free(src);
    tc_err_set(err, "%s has bytes after its %lld elements of shape %s", path, (long long)count,
             has);
    return TF_MISMATCH;
  }
  if (!direct) {
    for (int64_t i = 0; i < count; i++)
      store_elem(buf, i, dtype, load_elem(src + (size_t)i * (size_t)h.size, h.size, swap));
    free(src);
  }
  if (converted) *converted = (size_t)h.size != tc_dtype_size(dtype);
  return TF_OK;
}

tf_status tf_read(const char *path, tc_dtype dtype, int rank, const int64_t *dims, void *buf,
                  int *converted, tc_str *err) {
  if (converted) *converted = 0;
  int64_t count = count_of(rank, dims);
  if (count < 0 || rank > TF_MAX_RANK) {
    tc_err_set(err, "the tensor for %s is too large", path);
    return TF_MISMATCH;
  }
  errno = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return io_error(err, "open", path);
  tf_status st;
  if (tf_is_npy(path)) {
    st = read_npy(f, path, dtype, rank, dims, count, buf, converted, err);
  } else {
    struct stat sb;
    size_t esize = tc_dtype_size(dtype), want = (size_t)count * esize;
    if (fstat(fileno(f), &sb) != 0) {
      st = io_error(err, "read", path);
    } else if (!S_ISREG(sb.st_mode) || (uint64_t)sb.st_size != (uint64_t)want) {
      char dimtext[160];
      shape_text(rank, dims, dimtext, sizeof dimtext);
      if (!S_ISREG(sb.st_mode))
        tc_err_set(err, "%s is not a regular file", path);
      else
        tc_err_set(err, "%s holds %lld bytes; a raw tensor of shape %s and type %s takes %zu",
                 path, (long long)sb.st_size, dimtext, tc_dtype_name(dtype), want);
      st = TF_MISMATCH;
    } else {
      errno = 0;
      st = read_all(f, buf, want) ? TF_OK : io_error(err, "read", path);
    }
  }
  fclose(f);
  return st;
}

/* ---- writing -------------------------------------------------------------- */

tf_status tf_write(const char *path, tc_dtype dtype, int rank, const int64_t *dims,
                   const void *buf, tc_str *err) {
  int64_t count = count_of(rank, dims);
  if (count < 0 || rank > TF_MAX_RANK) {
    tc_err_set(err, "the tensor for %s is too large", path);
    return TF_MISMATCH;
  }
  size_t esize = tc_dtype_size(dtype), nbytes = (size_t)count * esize;
  errno = 0;
  FILE *f = fopen(path, "wb");
  if (!f) return io_error(err, "write", path);
  int bad = 0;
  if (tf_is_npy(path)) {
    char shape[160], dict[256];
    shape_text(rank, dims, shape, sizeof shape);
    int n = snprintf(dict, sizeof dict, "{'descr': '<f%zu', 'fortran_order': False, 'shape': %s, }",
                     esize, shape);
    /* magic (6) + version (2) + length (2) + dict + padding + '\n' is a
     * multiple of 64 */
    size_t total = 10 + (size_t)n + 1, pad = (64 - total % 64) % 64;
    size_t hlen = (size_t)n + pad + 1;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff),
                             (unsigned char)(hlen >> 8)};
    bad |= fwrite(pre, 1, 10, f) != 10;
    bad |= fwrite(dict, 1, (size_t)n, f) != (size_t)n;
    for (size_t i = 0; i < pad; i++) bad |= fputc(' ', f) == EOF;
    bad |= fputc('\n', f) == EOF;
  }
  if (host_little_endian()) {
    bad |= fwrite(buf, 1, nbytes, f) != nbytes;
  } else {
    const unsigned char *p = buf;
    for (size_t i = 0; i < nbytes && !bad; i += esize)
      for (size_t b = esize; b-- > 0;) bad |= fputc(p[i + b], f) == EOF;
  }
  if (fclose(f) != 0) bad = 1;
  if (bad) return io_error(err, "write", path);
  return TF_OK;
}
