/* reference.c - plain C evaluation of a fusion on the host, the
 * independent reference every generated kernel is checked against.  It
 * reads only the fusion's ops and logical shapes, never the schedule. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/fusion.h"
#include "host.h"

uint16_t tc_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return sign | 0x7e00u;        /* NaN */
  if (ax >= 0x477ff000u) return sign | 0x7c00u;       /* rounds to infinity */
  if (ax < 0x38800000u) {                             /* half subnormal or zero */
    float a;
    memcpy(&a, &ax, 4);
    return sign | (uint16_t)rint((double)a * 16777216.0); /* units of 2^-24 */
  }
  uint32_t mant = ax & 0x7fffffu;
  uint32_t h = ((ax >> 23) - 127 + 15) << 10 | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
  return sign | (uint16_t)h;
}

float tc_f16_to_f32(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v;
  if (e == 0) v = ldexpf((float)m, -24);
  else if (e == 31) v = m ? NAN : INFINITY;
  else v = ldexpf((float)(m | 0x400), e - 25);
  return (h & 0x8000) ? -v : v;
}

uint16_t tc_f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

float tc_bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static bool is_float(tc_dtype t) { return t == TC_F32 || t == TC_F16 || t == TC_BF16; }

/* The integer v (exact) wrapped to `bits` bits in two's complement. */
static double wrap(int64_t v, int bits) {
  uint64_t m = (uint64_t)1 << bits, u = (uint64_t)v & (m - 1);
  return u >= m / 2 ? (double)u - (double)m : (double)u;
}

/* Values are held as double, always exactly representable in the dtype. */
static double round_to(tc_dtype t, double v) {
  switch (t) {
    case TC_F32: return (float)v;
    case TC_F16: return tc_f16_to_f32(tc_f32_to_f16((float)v));
    case TC_BF16: return tc_bf16_to_f32(tc_f32_to_bf16((float)v));
    case TC_I32: return wrap((int64_t)v, 32);
    case TC_I8: return wrap((int64_t)v, 8);
  }
  return v;
}

double tc_host_read(tc_dtype t, const void *buf, size_t i) {
  switch (t) {
    case TC_F32: return ((const float *)buf)[i];
    case TC_F16: return tc_f16_to_f32(((const uint16_t *)buf)[i]);
    case TC_BF16: return tc_bf16_to_f32(((const uint16_t *)buf)[i]);
    case TC_I32: return ((const int32_t *)buf)[i];
    case TC_I8: return ((const int8_t *)buf)[i];
  }
  return 0;
}

void tc_host_write(tc_dtype t, void *buf, size_t i, double v) {
  switch (t) {
    case TC_F32: ((float *)buf)[i] = (float)v; break;
    case TC_F16: ((uint16_t *)buf)[i] = tc_f32_to_f16((float)v); break;
    case TC_BF16: ((uint16_t *)buf)[i] = tc_f32_to_bf16((float)v); break;
    case TC_I32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case TC_I8: ((int8_t *)buf)[i] = (int8_t)v; break;
  }
}

/* IEEE 754 minNum / maxNum: a NaN operand is ignored (NaN only from two
 * NaNs).  Of two zeros min gives -0 and max +0; the kernels may give
 * either (the sign is unspecified there). */
static double min_num(double a, double b) {
  if (isnan(a)) return b;
  if (isnan(b)) return a;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}

static double max_num(double a, double b) {
  if (isnan(a)) return b;
  if (isnan(b)) return a;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}

/* Floating-point ops, in f32. */
static double float_unary(tc_unary_op op, double x) {
  float f = (float)x;
  switch (op) {
    case TC_NEG: return -x;
    case TC_ABS: return fabs(x);
    case TC_RELU: return max_num(x, 0.0);
    case TC_EXP: return expf(f);
    case TC_LOG: return logf(f);
    case TC_SQRT: return sqrtf(f);
    case TC_TANH: return tanhf(f);
    case TC_SIGMOID: return 1.0f / (1.0f + expf(-f));
    case TC_RECIPROCAL: return 1.0f / f;
    case TC_GELU: /* the tanh form, in f32 as kernels compute it */
      return 0.5f * f * (1.0f + tanhf(0.7978845608f * (f + 0.044715f * f * f * f)));
    case TC_SILU: return f / (1.0f + expf(-f));
  }
  return x;
}

static double float_binary(tc_binary_op op, double a, double b) {
  float x = (float)a, y = (float)b;
  switch (op) {
    case TC_ADD: return x + y;
    case TC_SUB: return x - y;
    case TC_MUL: return x * y;
    case TC_DIV: return x / y;
    case TC_MAX: return max_num(a, b);
    case TC_MIN: return min_num(a, b);
  }
  return 0;
}

/* Integer ops (i32 and i8, computed as 32-bit int as the kernels do):
 * the exact result in int64_t wrapped to 32 bits; x / 0 = 0, division
 * truncates toward zero.  Operands are exact integers of at most 32 bits,
 * so no int64_t operation overflows. */
static double int_unary(tc_unary_op op, double a) {
  int64_t x = (int64_t)a;
  switch (op) {
    case TC_NEG: return wrap(-x, 32);
    case TC_ABS: return wrap(x < 0 ? -x : x, 32);
    case TC_RELU: return x > 0 ? a : 0;
    default: return a; /* tc_unary refuses the others on integers */
  }
}

static double int_binary(tc_binary_op op, double a, double b) {
  int64_t x = (int64_t)a, y = (int64_t)b;
  switch (op) {
    case TC_ADD: return wrap(x + y, 32);
    case TC_SUB: return wrap(x - y, 32);
    case TC_MUL: return wrap(x * y, 32);
    case TC_DIV: return y == 0 ? 0 : wrap(x / y, 32);
    case TC_MAX: return x > y ? a : b;
    case TC_MIN: return x < y ? a : b;
  }
  return 0;
}

/* A cast of value a of dtype `from` to dtype `to`, before rounding to
 * `to`: float to integer truncates toward zero, saturates to to's range
 * and takes NaN to 0; integer to float rounds to f32 first (to nearest
 * even); the rest is exact here and rounded (floats) or wrapped
 * (integers) by round_to. */
static double cast(tc_dtype from, tc_dtype to, double a) {
  if (!is_float(from)) return is_float(to) ? (double)(float)a : a;
  if (is_float(to)) return a;
  double lo = to == TC_I8 ? -128.0 : -2147483648.0, hi = to == TC_I8 ? 127.0 : 2147483647.0;
  if (isnan(a)) return 0;
  return a <= lo ? lo : a >= hi ? hi : trunc(a);
}

/* a op b: IEEE comparisons (with a NaN only NE holds). */
static double compare(tc_compare_op op, double a, double b) {
  switch (op) {
    case TC_LT: return a < b;
    case TC_LE: return a <= b;
    case TC_GT: return a > b;
    case TC_GE: return a >= b;
    case TC_EQ: return a == b;
    default: return a != b;
  }
}

/* The start of a reduction: 0, or the value every element replaces
 * (MAX: -inf / INT32_MIN; MIN: +inf / INT32_MAX). */
static double reduce_identity(tc_reduce_op op, bool fl) {
  switch (op) {
    case TC_REDUCE_MAX: return fl ? -INFINITY : -2147483648.0;
    case TC_REDUCE_MIN: return fl ? INFINITY : 2147483647.0;
    default: return 0;
  }
}

/* acc combined with element a: MAX and MIN ignore a NaN (fmax / fmin);
 * an integer sum wraps at the end (round_to) as 32-bit sums do. */
static double reduce_step(tc_reduce_op op, bool fl, double acc, double a) {
  switch (op) {
    case TC_REDUCE_MAX: return fl ? fmax(acc, a) : (a > acc ? a : acc);
    case TC_REDUCE_MIN: return fl ? fmin(acc, a) : (a < acc ? a : acc);
    default: return acc + a;
  }
}

/* A tensor seen through a coordinate-transform view (tc_tensor.view),
 * element by element in row-major order of its logical domain: with vals
 * NULL, returns the values read from buf (0 where the view's predicate
 * fails); else writes vals[e] to buf where it holds and returns NULL. */
static double *view_walk(const tc_tensor *t, void *buf, const double *vals) {
  int r = t->nlogical;
  tc_epool *p = tc_epool_new();
  const tc_expr *lv[16], *off, *ok;
  int64_t ext[16], coord[16] = {0}, total = 1;
  for (int d = 0; d < r; d++) {
    ext[d] = tc_logical_extent(t, d);
    lv[d] = tc_e_var(p, "u", 0, ext[d] - 1); /* variable id d */
    total *= ext[d];
  }
  tc_tensor_view_index(t, p, lv, &off, &ok);
  double *out = vals ? NULL : tc_xmalloc((size_t)total * sizeof(double));
  for (int64_t e = 0; e < total; e++) {
    bool in = !ok || tc_e_eval(ok, coord) != 0;
    int64_t at = in ? tc_e_eval(off, coord) : -1;
    in = in && at >= 0 && at < t->view_elems; /* (never outside for a view that fits its buffer) */
    if (!vals) out[e] = in ? tc_host_read(t->dtype, buf, (size_t)at) : 0;
    else if (in) tc_host_write(t->dtype, buf, (size_t)at, vals[e]);
    for (int d = r - 1; d >= 0; d--) {
      if (++coord[d] < ext[d]) break;
      coord[d] = 0;
    }
  }
  tc_epool_free(p);
  return out;
}

tc_status tc_reference_run(tc_fusion *f, void *const *args) {
  tc_clear_error(f);
  if (!args) return tc_fail(f, TC_ERR_ARGUMENT, "tc_reference_run: args is NULL");
  if (f->nsym) /* its buffers would be taken at the bound's size */
    return tc_fail(f, TC_ERR_UNSUPPORTED, "tc_reference_run: the fusion's extents include the size "
                   "variable %s; the reference takes fixed shapes: build the same fusion with a "
                   "number there (tc_input)", f->sym[0]->label);
  int n;
  tc_op **order = tc_topo_order(f, &n);
  double **val = tc_xcalloc((size_t)f->ntensors, sizeof *val);
  /* a Welford state's M2 and count (its mean is val) */
  double **m2 = tc_xcalloc((size_t)f->ntensors, sizeof *m2), **cnt_of = tc_xcalloc((size_t)f->ntensors, sizeof *cnt_of);
  for (int i = 0; i < f->ninputs; i++) {
    tc_tensor *t = f->inputs[i];
    if (!args[i]) {
      for (int j = 0; j < i; j++) free(val[f->inputs[j]->id]);
      free(val), free(m2), free(cnt_of), free(order);
      if (t->is_scalar)
        return tc_fail(f, TC_ERR_ARGUMENT, "tc_reference_run: the scalar input %s (argument %d) is "
                       "missing; pass a pointer to its %s value", t->label, i, tc_dtype_name(t->dtype));
      return tc_fail(f, TC_ERR_ARGUMENT, "tc_reference_run: argument %d (%s) is NULL", i, t->name);
    }
    if (t->view) { /* the logical domain through the view, 0 where it is not valid */
      val[t->id] = view_walk(t, (void *)args[i], NULL);
      continue;
    }
    size_t cnt = tc_tensor_bytes(t) / tc_dtype_size(t->dtype);
    val[t->id] = tc_xmalloc(cnt * sizeof(double));
    for (size_t e = 0; e < cnt; e++) val[t->id][e] = tc_host_read(t->dtype, args[i], e);
  }
  for (int o = 0; o < n; o++) {
    tc_op *op = order[o];
    tc_tensor *t = op->out;
    int r = t->nlogical;
    /* the loop runs over t's whole logical domain, reduced axes at their
     * full extent; t's element skips those, and an input is read at 0
     * along an axis where it broadcasts (its extent is 1) */
    int64_t ext[16], out_stride[16], in_stride[3][16], coord[16] = {0}, gstride = 0;
    int64_t s = 1;
    for (int d = r - 1; d >= 0; d--) {
      ext[d] = f->g.axes[t->logical[d]].extent;
      out_stride[d] = f->g.axes[t->logical[d]].reduction ? 0 : s;
      s *= tc_logical_extent(t, d);
    }
    for (int k = 0; k < op->nin; k++) {
      const tc_tensor *x = op->in[k];
      int64_t xs[16];
      s = 1;
      for (int d = x->nlogical - 1; d >= 0; d--) xs[d] = s, s *= tc_logical_extent(x, d);
      for (int d = 0; d < r; d++) {
        int a = tc_op_in_axis(op, d);
        in_stride[k][d] = a < 0 || tc_logical_extent(x, a) == 1 || tc_op_axis_gathered(op, k, d) ? 0 : xs[a];
      }
      if (op->kind == TC_OP_GATHER && k == 0) gstride = xs[op->sub];
    }
    size_t cnt = tc_tensor_bytes(t) / tc_dtype_size(t->dtype), total = 1;
    for (int d = 0; d < r; d++) total *= (size_t)ext[d];
    val[t->id] = tc_xmalloc(cnt * sizeof(double));
    bool fl = is_float(t->dtype);
    bool red = tc_op_reduces(op), welford = op->kind == TC_OP_REDUCE && op->sub == TC_REDUCE_WELFORD;
    if (red && !welford)
      for (size_t e = 0; e < cnt; e++) val[t->id][e] = reduce_identity((tc_reduce_op)op->sub, fl);
    if (welford) {
      memset(val[t->id], 0, cnt * sizeof(double));
      m2[t->id] = tc_xcalloc(cnt, sizeof(double));
      cnt_of[t->id] = tc_xcalloc(cnt, sizeof(double));
    }
    for (size_t e = 0; e < total; e++) {
      int64_t src[3] = {0, 0, 0}, dst = 0;
      for (int d = 0; d < r; d++) {
        dst += coord[d] * out_stride[d];
        for (int k = 0; k < op->nin; k++) src[k] += coord[d] * in_stride[k][d];
      }
      double a = val[op->in[0]->id][src[0]], v;
      switch (op->kind) {
        case TC_OP_UNARY:
          v = fl ? float_unary((tc_unary_op)op->sub, a) : int_unary((tc_unary_op)op->sub, a);
          break;
        case TC_OP_BINARY: {
          double b = op->scalar_in ? val[op->scalar_in->id][0] : op->has_scalar ? op->scalar : val[op->in[1]->id][src[1]];
          if (op->scalar_left) b = a, a = val[op->scalar_in->id][0];
          v = fl ? float_binary((tc_binary_op)op->sub, a, b) : int_binary((tc_binary_op)op->sub, a, b);
          break;
        }
        case TC_OP_CAST: v = cast(op->in[0]->dtype, t->dtype, a); break;
        case TC_OP_COMPARE: v = compare((tc_compare_op)op->sub, a, val[op->in[1]->id][src[1]]); break;
        case TC_OP_WHERE: v = a != 0 ? val[op->in[1]->id][src[1]] : val[op->in[2]->id][src[2]]; break;
        case TC_OP_REDUCE:
          if (welford) { /* Welford's update, in double */
            double n1 = cnt_of[t->id][dst] + 1, d = a - val[t->id][dst];
            v = val[t->id][dst] + d / n1;
            m2[t->id][dst] += d * (a - v);
            cnt_of[t->id][dst] = n1;
          } else {
            v = reduce_step((tc_reduce_op)op->sub, fl, val[t->id][dst], a);
          }
          break;
        case TC_OP_WELFORD_PART: /* the mean, or M2 / count (the population variance) */
          v = op->sub == TC_WELFORD_MEAN ? a : m2[op->in[0]->id][src[0]] / cnt_of[op->in[0]->id][src[0]];
          break;
        /* products of f32, f16 or bf16 values are exact in double */
        case TC_OP_MATMUL: v = val[t->id][dst] + a * val[op->in[1]->id][src[1]]; break;
        case TC_OP_GATHER: { /* in[0] at the position in[1] holds; 0 outside */
          double g = val[op->in[1]->id][src[1]];
          int64_t ge = tc_logical_extent(op->in[0], op->sub);
          v = g >= 0 && g < (double)ge ? val[op->in[0]->id][src[0] + (int64_t)g * gstride] : 0;
          break;
        }
        default: v = a; break;
      }
      /* a reduction accumulates exactly (double, 64-bit integers) and
       * rounds once at the end */
      val[t->id][dst] = red ? v : round_to(t->dtype, v);
      for (int d = r - 1; d >= 0; d--) {
        if (++coord[d] < ext[d]) break;
        coord[d] = 0;
      }
    }
    if (red)
      for (size_t e = 0; e < cnt; e++) val[t->id][e] = round_to(t->dtype, val[t->id][e]);
  }
  for (int i = 0; i < f->noutputs; i++) {
    tc_tensor *t = f->outputs[i];
    if (t->view) { /* stored through the view; the rest of the buffer kept */
      free(view_walk(t, args[f->ninputs + i], val[t->id]));
      continue;
    }
    size_t cnt = tc_tensor_bytes(t) / tc_dtype_size(t->dtype);
    for (size_t e = 0; e < cnt; e++) tc_host_write(t->dtype, args[f->ninputs + i], e, val[t->id][e]);
  }
  for (int i = 0; i < f->ntensors; i++) free(val[i]), free(m2[i]), free(cnt_of[i]);
  free(val), free(m2), free(cnt_of), free(order);
  return TC_OK;
}
