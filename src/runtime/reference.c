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

size_t tc_tensor_bytes(const tc_tensor *t) {
  size_t n = tc_dtype_size(t->dtype);
  for (int i = 0; i < t->nlogical; i++) n *= (size_t)t->f->g.axes[t->logical[i]].extent;
  return n;
}

static bool is_float(tc_dtype t) { return t == TC_F32 || t == TC_F16 || t == TC_BF16; }

/* Values are held as double, always exactly representable in the dtype. */
static double round_to(tc_dtype t, double v) {
  switch (t) {
    case TC_F32: return (float)v;
    case TC_F16: return tc_f16_to_f32(tc_f32_to_f16((float)v));
    case TC_BF16: return tc_bf16_to_f32(tc_f32_to_bf16((float)v));
    case TC_I32: return (double)(int32_t)(int64_t)v;
    case TC_I8: return (double)(int8_t)(int64_t)v;
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

static double unary(tc_unary_op op, bool fl, double x) {
  float f = (float)x;
  switch (op) {
    case TC_NEG: return -x;
    case TC_ABS: return fabs(x);
    case TC_RELU: return x > 0 ? x : 0;
    case TC_EXP: return expf(f);
    case TC_LOG: return logf(f);
    case TC_SQRT: return sqrtf(f);
    case TC_TANH: return tanhf(f);
    case TC_SIGMOID: return 1.0f / (1.0f + expf(-f));
    case TC_RECIPROCAL: return fl ? 1.0f / f : 0;
  }
  return x;
}

static double binary(tc_binary_op op, bool fl, double a, double b) {
  switch (op) {
    case TC_ADD: return fl ? (double)((float)a + (float)b) : a + b;
    case TC_SUB: return fl ? (double)((float)a - (float)b) : a - b;
    case TC_MUL: return fl ? (double)((float)a * (float)b) : a * b;
    case TC_DIV:
      if (fl) return (float)a / (float)b;
      return b == 0 ? 0 : (double)((int64_t)a / (int64_t)b);
    case TC_MAX: return a > b ? a : b;
    case TC_MIN: return a < b ? a : b;
  }
  return 0;
}

tc_status tc_reference_run(tc_fusion *f, void *const *args) {
  tc_clear_error(f);
  if (!args) return tc_fail(f, TC_ERR_ARGUMENT, "tc_reference_run: args is NULL");
  int n;
  tc_op **order = tc_topo_order(f, &n);
  double **val = tc_xcalloc((size_t)f->ntensors, sizeof *val);
  for (int i = 0; i < f->ninputs; i++) {
    tc_tensor *t = f->inputs[i];
    size_t cnt = tc_tensor_bytes(t) / tc_dtype_size(t->dtype);
    val[t->id] = tc_xmalloc(cnt * sizeof(double));
    for (size_t e = 0; e < cnt; e++) val[t->id][e] = tc_host_read(t->dtype, args[i], e);
  }
  for (int o = 0; o < n; o++) {
    tc_op *op = order[o];
    tc_tensor *t = op->out;
    int r = t->nlogical;
    int64_t ext[16], in_stride[16], coord[16] = {0};
    for (int d = 0; d < r; d++) ext[d] = f->g.axes[t->logical[d]].extent;
    /* input strides (row-major over the input's own logical shape) */
    int64_t s = 1;
    for (int d = r - 1; d >= 0; d--) {
      in_stride[d] = s;
      s *= f->g.axes[op->in[0]->logical[d]].extent;
    }
    size_t cnt = tc_tensor_bytes(t) / tc_dtype_size(t->dtype);
    val[t->id] = tc_xmalloc(cnt * sizeof(double));
    bool fl = is_float(t->dtype);
    for (size_t e = 0; e < cnt; e++) {
      int64_t src = 0;
      for (int d = 0; d < r; d++) src += coord[d] * in_stride[tc_op_in_axis(op, d)];
      double a = val[op->in[0]->id][src], v;
      switch (op->kind) {
        case TC_OP_UNARY: v = unary((tc_unary_op)op->sub, fl, a); break;
        case TC_OP_BINARY: v = binary((tc_binary_op)op->sub, fl, a, val[op->in[1]->id][src]); break;
        case TC_OP_CAST: v = is_float(t->dtype) ? (double)(float)a : (double)(int64_t)a; break;
        default: v = a; break;
      }
      val[t->id][e] = round_to(t->dtype, v);
      for (int d = r - 1; d >= 0; d--) {
        if (++coord[d] < ext[d]) break;
        coord[d] = 0;
      }
    }
  }
  for (int i = 0; i < f->noutputs; i++) {
    tc_tensor *t = f->outputs[i];
    size_t cnt = tc_tensor_bytes(t) / tc_dtype_size(t->dtype);
    for (size_t e = 0; e < cnt; e++) tc_host_write(t->dtype, args[f->ninputs + i], e, val[t->id][e]);
  }
  for (int i = 0; i < f->ntensors; i++) free(val[i]);
  free(val), free(order);
  return TC_OK;
}
