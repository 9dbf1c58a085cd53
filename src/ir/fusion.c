/* fusion.c - building fusions: tensors, ops, names, errors, traversal. */
#include "fusion.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tc_status_name(tc_status s) {
  switch (s) {
    case TC_OK: return "ok";
    case TC_ERR_ARGUMENT: return "invalid argument";
    case TC_ERR_SCHEDULE: return "invalid schedule";
    case TC_ERR_LOWER: return "cannot lower";
    case TC_ERR_COMPILE: return "compile error";
    case TC_ERR_RUNTIME: return "runtime error";
    case TC_ERR_NO_DEVICE: return "no device";
    case TC_ERR_UNSUPPORTED: return "unsupported";
    case TC_ERR_TIMEOUT: return "timed out";
  }
  return "unknown status";
}

size_t tc_dtype_size(tc_dtype t) {
  switch (t) {
    case TC_F32: case TC_I32: return 4;
    case TC_F16: case TC_BF16: return 2;
    case TC_I8: return 1;
  }
  return 0;
}

const char *tc_dtype_name(tc_dtype t) {
  switch (t) {
    case TC_F32: return "f32";
    case TC_F16: return "f16";
    case TC_BF16: return "bf16";
    case TC_I32: return "i32";
    case TC_I8: return "i8";
  }
  return "?";
}

const char *tc_memtype_name(tc_memtype m) {
  switch (m) {
    case TC_MEM_GLOBAL: return "global";
    case TC_MEM_SHARED: return "shared";
    case TC_MEM_LOCAL: return "local";
    case TC_MEM_TENSOR: return "tensor";
  }
  return "?";
}

const char *tc_ptype_name(tc_ptype p) {
  static const char *names[] = {"Serial", "BIDx", "BIDy", "BIDz", "TIDx", "TIDy", "TIDz",
                                "DIDx", "DIDy", "DIDz", "Vectorize", "Unroll"};
  return (unsigned)p < sizeof names / sizeof *names ? names[p] : "?";
}

void tc_set_schedule_note(tc_fusion *f, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  TC_STR_LOCAL(s);
  tc_str_vprintf(&s, fmt, ap);
  va_end(ap);
  free(f->sched_note); /* (after formatting: the old note may be an argument) */
  f->sched_note = tc_xstrdup(tc_str_cstr(&s));
  tc_str_free(&s);
}

tc_status tc_fail(tc_fusion *f, tc_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->err, sizeof f->err, fmt, ap);
  va_end(ap);
  return status;
}

void tc_clear_error(tc_fusion *f) { f->err[0] = 0; }

tc_fusion *tc_fusion_new(void) {
  tc_fusion *f = tc_xcalloc(1, sizeof *f);
  tc_dg_init(&f->g);
  return f;
}

void tc_fusion_free(tc_fusion *f) {
  if (!f) return;
  for (int i = 0; i < f->ntensors; i++) {
    tc_tensor *t = f->tensors[i];
    if (t->view) tc_view_free(t->view);
    free(t->logical), free(t->loop), free(t->alloc), free(t);
  }
  for (int i = 0; i < f->nops; i++) free(f->ops[i]);
  free(f->tensors), free(f->ops), free(f->inputs), free(f->outputs);
  tc_dg_free(&f->g);
  free(f->sched_note);
  free(f);
}

const char *tc_fusion_error(const tc_fusion *f) { return f ? f->err : "no fusion"; }

tc_tensor *tc_tensor_new(tc_fusion *f, tc_dtype t, int ndims, const int64_t *shape) {
  tc_tensor *tv = tc_xcalloc(1, sizeof *tv);
  tv->f = f;
  tv->id = f->ntensors;
  snprintf(tv->name, sizeof tv->name, "T%d", tv->id);
  tv->dtype = t;
  tv->mem = TC_MEM_LOCAL;
  tv->nlogical = tv->nloop = ndims;
  tv->logical = tc_xmalloc((size_t)ndims * sizeof(int));
  tv->loop = tc_xmalloc((size_t)ndims * sizeof(int));
  for (int i = 0; i < ndims; i++) tv->logical[i] = tv->loop[i] = tc_dg_root(&f->g, shape[i], i);
  tv->tmem_dimsep = -1;
  TC_PUSH(f->tensors, f->ntensors, f->ctensors, tv);
  return tv;
}

tc_op *tc_op_new(tc_fusion *f, tc_op_kind kind, int sub, tc_tensor *a, tc_tensor *b,
                 tc_tensor *out) {
  tc_op *op = tc_xcalloc(1, sizeof *op);
  op->kind = kind, op->sub = sub, op->ldst = TC_LDST_DEFAULT;
  op->in[0] = a, op->in[1] = b, op->nin = b ? 2 : 1;
  op->out = out;
  out->def = op;
  TC_PUSH(f->ops, f->nops, f->cops, op);
  return op;
}

static bool valid_dtype(tc_dtype t) { return t >= TC_F32 && t <= TC_I8; }

tc_tensor *tc_input(tc_fusion *f, tc_dtype t, int ndims, const int64_t *shape) {
  tc_clear_error(f);
  if (!valid_dtype(t)) return tc_fail(f, TC_ERR_ARGUMENT, "tc_input: unknown dtype %d", (int)t), NULL;
  if (ndims < 1 || ndims > 16 || !shape)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_input: rank must be 1..16, got %d", ndims), NULL;
  for (int i = 0; i < ndims; i++)
    if (shape[i] < 1 || shape[i] > ((int64_t)1 << 31))
      return tc_fail(f, TC_ERR_ARGUMENT, "tc_input: extent %d is %lld; it must be 1..2^31", i,
                     (long long)shape[i]), NULL;
  tc_tensor *tv = tc_tensor_new(f, t, ndims, shape);
  tv->is_input = true;
  tv->mem = TC_MEM_GLOBAL;
  TC_PUSH(f->inputs, f->ninputs, f->cinputs, tv);
  return tv;
}

/* Whether v is a view tc_input_view / tc_output_view take: 1..16 upper
 * dims, each within 1..2^31, and a buffer size within 1..2^31. */
static bool view_ok(tc_fusion *f, const char *call, const tc_view *v, int64_t elems) {
  if (!v || v->nupper < 1 || v->nupper > 16) {
    tc_fail(f, TC_ERR_ARGUMENT, "%s: the view has %d dims; it must have 1..16", call, v ? v->nupper : 0);
    return false;
  }
  for (int i = 0; i < v->nupper; i++)
    if (tc_view_extent(v, i) < 1 || tc_view_extent(v, i) > ((int64_t)1 << 31)) {
      tc_fail(f, TC_ERR_ARGUMENT, "%s: the view's dim %d has extent %lld; it must be 1..2^31", call, i,
              (long long)tc_view_extent(v, i));
      return false;
    }
  if (elems < 1 || elems > ((int64_t)1 << 31)) {
    tc_fail(f, TC_ERR_ARGUMENT, "%s: the buffer has %lld elements; it must have 1..2^31", call,
            (long long)elems);
    return false;
  }
  return true;
}

tc_tensor *tc_input_view(tc_fusion *f, tc_dtype t, const tc_view *v, int64_t elems) {
  tc_clear_error(f);
  if (!valid_dtype(t)) return tc_fail(f, TC_ERR_ARGUMENT, "tc_input_view: unknown dtype %d", (int)t), NULL;
  if (!view_ok(f, "tc_input_view", v, elems)) return NULL;
  int64_t shape[16];
  for (int i = 0; i < v->nupper; i++) shape[i] = tc_view_extent(v, i);
  tc_tensor *tv = tc_input(f, t, v->nupper, shape);
  if (!tv) return NULL;
  tv->view = tc_view_copy(v);
  tv->view_elems = elems;
  return tv;
}

tc_status tc_output_view(tc_tensor *t, const tc_view *v, int64_t elems) {
  tc_fusion *f = t->f;
  tc_clear_error(f);
  if (!t->is_output || t->is_input)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_output_view: %s is not an output of the fusion", t->name);
  if (!view_ok(f, "tc_output_view", v, elems)) return TC_ERR_ARGUMENT;
  if (v->nupper != t->nlogical)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_output_view: the view has %d dims but %s has rank %d",
                   v->nupper, t->name, t->nlogical);
  for (int i = 0; i < t->nlogical; i++)
    if (tc_view_extent(v, i) != tc_logical_extent(t, i))
      return tc_fail(f, TC_ERR_ARGUMENT, "tc_output_view: the view's dim %d has extent %lld but %s's "
                     "axis %d has %lld", i, (long long)tc_view_extent(v, i), t->name, i,
                     (long long)tc_logical_extent(t, i));
  if (t->view) tc_view_free(t->view);
  t->view = tc_view_copy(v);
  t->view_elems = elems;
  return TC_OK;
}

void tc_tensor_view_index(const tc_tensor *t, tc_epool *p, const tc_expr *const *lv,
                          const tc_expr **offset, const tc_expr **valid) {
  const tc_expr *ok;
  tc_view_index(t->view, p, lv, offset, &ok);
  *valid = tc_e_is_const(ok, 1) ? NULL : ok;
}

/* The size variable `name` of divisor div: the fusion's, else a new one
 * of bound `bound` (-1: the caller has none, an error for a new one);
 * its index, or -1 after a message. */
static int size_var(tc_fusion *f, const char *call, const char *name, int64_t div, int64_t bound) {
  for (int v = 0; v < f->nsym; v++) {
    if (strcmp(f->sym[v]->label, name) != 0) continue;
    if (f->sym_div[v] != div || (bound != -1 && f->sym_bound[v] != bound))
      return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: the size variable %s is a multiple of %lld, at most "
                     "%lld; every input that names it gives the same divisor and bound (got %lld "
                     "and %lld)", call, name, (long long)f->sym_div[v], (long long)f->sym_bound[v],
                     (long long)div, (long long)bound), -1;
    return v;
  }
  if (f->nsym == TC_MAX_SIZE_VARS)
    return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: %s would be a fusion's size variable number %d; at "
                   "most %d", call, name, f->nsym + 1, TC_MAX_SIZE_VARS), -1;
  if (bound == -1)
    return tc_fail(f, TC_ERR_ARGUMENT, "%s: give the bound of the new size variable %s (-1 takes "
                   "an existing variable's)", call, name), -1;
  tc_tensor *s = tc_scalar_input(f, name, TC_I32);
  if (!s) return -1;
  f->sym[f->nsym] = s, f->sym_div[f->nsym] = div, f->sym_bound[f->nsym] = bound;
  return f->nsym++;
}

tc_tensor *tc_input_syms(tc_fusion *f, tc_dtype t, int ndims, const int64_t *shape,
                         const char *const *names, const int64_t *divisors) {
  tc_clear_error(f);
  const char *call = "tc_input_sym";
  if (ndims < 1 || ndims > 16 || !shape || !names)
    return tc_fail(f, TC_ERR_ARGUMENT, "%s: rank must be 1..16, got %d", call, ndims), NULL;
  int64_t fixed = 1, sh[16], div[16];
  int nsym = 0, at = -1;
  for (int i = 0; i < ndims; i++) {
    div[i] = names[i] ? (divisors ? divisors[i] : 1) : 0;
    if (names[i]) {
      nsym++, at = i;
      if (div[i] < 1 || div[i] > ((int64_t)1 << 30))
        return tc_fail(f, TC_ERR_ARGUMENT, "%s: the divisor of %s is %lld; it must be 1..2^30 (1: "
                       "none known)", call, names[i], (long long)div[i]), NULL;
      continue;
    }
    if (shape[i] < 1 || shape[i] > ((int64_t)1 << 31))
      return tc_fail(f, TC_ERR_ARGUMENT, "%s: extent %d is %lld; it must be 1..2^31", call, i,
                     (long long)shape[i]), NULL;
    fixed = tc_sat_mul(fixed, shape[i]);
  }
  if (!nsym) return tc_fail(f, TC_ERR_ARGUMENT, "%s: no axis names a size variable", call), NULL;
  /* the bounds: the caller's, else the variable's; with one new variable
   * and -1, the most 32-bit indices reach */
  int64_t elems = fixed;
  for (int i = 0; i < ndims; i++) {
    if (!names[i]) {
      sh[i] = shape[i];
      continue;
    }
    int64_t bound = shape[i];
    for (int v = 0; v < f->nsym; v++)
      if (strcmp(f->sym[v]->label, names[i]) == 0) {
        if (f->sym_div[v] != div[i]) return size_var(f, call, names[i], div[i], bound), NULL;
        if (bound == -1) bound = f->sym_bound[v];
      }
    if (bound == -1 && nsym == 1)
      bound = fixed > 2147483647 ? 0 : 2147483647 / fixed / div[i] * div[i];
    if (bound < div[i] || bound % div[i] != 0 || bound > 2147483647)
      return tc_fail(f, TC_ERR_ARGUMENT, "%s: the bound of %s is %lld; it must be %sa multiple of "
                     "the divisor %lld, at least %lld and under 2^31", call, names[i],
                     (long long)shape[i], nsym == 1 ? "-1 (the largest that 32-bit indices reach) or " : "",
                     (long long)div[i], (long long)div[i]), NULL;
    sh[i] = bound;
    elems = tc_sat_mul(elems, bound);
  }
  if (elems > 2147483647)
    return tc_fail(f, TC_ERR_ARGUMENT, "%s: at the bounds of its size variables the input has %lld "
                   "elements; give bounds that keep it under 2^31 (indices are 32-bit)", call,
                   (long long)elems), NULL;
  for (int i = 0; i < ndims; i++)
    for (int j = 0; j < i; j++)
      if (names[i] && names[j] && strcmp(names[i], names[j]) == 0)
        return tc_fail(f, TC_ERR_UNSUPPORTED, "%s: axes %d and %d both name the size variable %s; "
                       "an input takes each variable on one axis", call, j, i, names[i]), NULL;
  int var[16];
  for (int i = 0; i < ndims; i++)
    if (names[i] && (var[i] = size_var(f, call, names[i], div[i], sh[i])) < 0) return NULL;
  (void)at;
  tc_tensor *tv = tc_input(f, t, ndims, sh);
  for (int i = 0; tv && i < ndims; i++)
    if (names[i]) f->g.axes[tv->logical[i]].sym_div = div[i], f->g.axes[tv->logical[i]].sym_var = var[i];
  return tv;
}

tc_tensor *tc_input_sym(tc_fusion *f, tc_dtype t, int ndims, const int64_t *shape, const char *name,
                        int64_t divisor) {
  const char *names[16] = {name ? name : ""};
  int64_t divs[16] = {divisor};
  if (ndims < 1 || ndims > 16 || !shape)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_input_sym: rank must be 1..16, got %d", ndims), NULL;
  if (!name || !name[0])
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_input_sym: the size variable needs a name"), NULL;
  return tc_input_syms(f, t, ndims, shape, names, divs);
}

void tc_fusion_mark_symbolic(tc_fusion *f) {
  if (!f->nsym) return;
  /* to a fixpoint: an op made later (a schedule's copy of an
   * intermediate) may feed one made earlier */
  for (bool more = true; more;) {
    more = false;
    for (int i = 0; i < f->nops; i++) {
      tc_op *op = f->ops[i];
      tc_tensor *o = op->out;
      for (int j = 0; j < o->nlogical; j++)
        for (int k = 0; k < op->nin; k++) {
          int ia = tc_op_in_axis(op, j);
          const tc_tensor *in = op->in[k];
          if (!in || ia < 0 || ia >= in->nlogical || tc_op_axis_gathered(op, k, j)) continue;
          const tc_axis *a = &f->g.axes[in->logical[ia]];
          tc_axis *b = &f->g.axes[o->logical[j]];
          /* (an operand broadcasting along the axis has extent 1 there) */
          if (a->sym_div && !a->reduction && a->extent == b->extent &&
              (b->sym_div != a->sym_div || b->sym_var != a->sym_var))
            b->sym_div = a->sym_div, b->sym_var = a->sym_var, more = true;
        }
    }
  }
}

const char *tc_tensor_axis_size_var(const tc_tensor *t, int axis) {
  if (!t || !t->f->nsym || axis < 0 || axis >= t->nlogical) return NULL;
  tc_fusion_mark_symbolic(t->f);
  const tc_axis *a = &t->f->g.axes[t->logical[axis]];
  return a->sym_div ? t->f->sym[a->sym_var]->label : NULL;
}

const char *tc_tensor_size_var(const tc_tensor *t) { return tc_tensor_axis_size_var(t, 0); }

tc_tensor *tc_size_var_value(tc_fusion *f, const char *name) {
  if (!f) return NULL;
  tc_clear_error(f);
  for (int v = 0; name && v < f->nsym; v++)
    if (strcmp(f->sym[v]->label, name) == 0) return f->sym[v];
  return tc_fail(f, TC_ERR_ARGUMENT, "tc_size_var_value: no input names the size variable %s%s",
                 name ? name : "(null)", f->nsym ? "" : " (the fusion has none: tc_input_sym names one)"),
         NULL;
}

static bool owned(tc_fusion *f, const tc_tensor *t) {
  return t && t->f == f && t->id < f->ntensors && f->tensors[t->id] == t;
}

tc_tensor *tc_scalar_input(tc_fusion *f, const char *name, tc_dtype t) {
  tc_clear_error(f);
  bool ident = name && (name[0] == '_' || ((name[0] | 32) >= 'a' && (name[0] | 32) <= 'z'));
  for (size_t i = 0; ident && name[i]; i++)
    ident = i < 31 && (name[i] == '_' || (name[i] >= '0' && name[i] <= '9') ||
                       ((name[i] | 32) >= 'a' && (name[i] | 32) <= 'z'));
  if (!ident)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_scalar_input: the name must be 1..31 letters, digits or "
                   "'_', not starting with a digit (got \"%.40s\")", name ? name : "(null)"), NULL;
  if (t != TC_F32 && t != TC_I32)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_scalar_input: %s is %s; a scalar input is f32 (for float "
                   "tensors) or i32 (for integer tensors)", name, valid_dtype(t) ? tc_dtype_name(t) : "an unknown dtype"), NULL;
  for (int i = 0; i < f->ninputs; i++)
    if (f->inputs[i]->is_scalar && strcmp(f->inputs[i]->label, name) == 0)
      return tc_fail(f, TC_ERR_ARGUMENT, "tc_scalar_input: the fusion has a scalar named %s already", name), NULL;
  tc_tensor *tv = tc_tensor_new(f, t, 0, NULL);
  tv->is_input = tv->is_scalar = true;
  tv->mem = TC_MEM_GLOBAL;
  snprintf(tv->label, sizeof tv->label, "%s", name);
  TC_PUSH(f->inputs, f->ninputs, f->cinputs, tv);
  return tv;
}

/* owned(), and for every op but tc_binary's: not a scalar input (only
 * binary ops take one); the error names call. */
static bool operand(tc_fusion *f, const tc_tensor *t, const char *call) {
  if (!owned(f, t)) return tc_fail(f, TC_ERR_ARGUMENT, "%s: operand is not a tensor of this fusion", call), false;
  if (t->is_scalar)
    return tc_fail(f, TC_ERR_ARGUMENT, "%s: %s is the scalar input %s; only tc_binary takes a scalar "
                   "input (combine it with a tensor there first)", call, t->name, t->label), false;
  return true;
}

tc_status tc_add_output(tc_fusion *f, tc_tensor *t) {
  tc_clear_error(f);
  if (!owned(f, t)) return tc_fail(f, TC_ERR_ARGUMENT, "tc_add_output: tensor not of this fusion");
  if (t->is_scalar)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_add_output: %s is the scalar input %s; outputs are tensors", t->name, t->label);
  if (t->is_input) return tc_fail(f, TC_ERR_ARGUMENT, "tc_add_output: %s is an input; copy it with tc_set first", t->name);
  if (t->is_output) return tc_fail(f, TC_ERR_ARGUMENT, "tc_add_output: %s is already an output", t->name);
  if (tc_tensor_is_welford(t))
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_add_output: %s is a Welford state (mean, M2 and count in "
                   "registers); add the mean or the variance tc_welford returned instead", t->name);
  t->is_output = true;
  t->mem = TC_MEM_GLOBAL;
  TC_PUSH(f->outputs, f->noutputs, f->coutputs, t);
  return TC_OK;
}

int64_t tc_logical_extent(const tc_tensor *t, int i) {
  const tc_axis *a = &t->f->g.axes[t->logical[i]];
  return a->reduction ? 1 : a->extent;
}

bool tc_tensor_is_reduction(const tc_tensor *t) {
  for (int i = 0; i < t->nlogical; i++)
    if (t->f->g.axes[t->logical[i]].reduction) return true;
  return false;
}

tc_tensor *tc_tensor_like(tc_fusion *f, const tc_tensor *src, const int *perm, tc_dtype t) {
  int64_t shape[16];
  for (int k = 0; k < src->nlogical; k++) shape[k] = tc_logical_extent(src, perm ? perm[k] : k);
  return tc_tensor_new(f, t, src->nlogical, shape);
}

int tc_op_in_axis(const tc_op *op, int j) {
  return op->kind == TC_OP_PERMUTE || op->kind == TC_OP_BROADCAST ? op->perm[j] : j;
}

bool tc_op_reduces(const tc_op *op) {
  return op && (op->kind == TC_OP_REDUCE || op->kind == TC_OP_MATMUL);
}

bool tc_op_axis_gathered(const tc_op *op, int k, int j) {
  return op->kind == TC_OP_GATHER && k == 0 && j == op->sub;
}

static tc_tensor *like(tc_fusion *f, const tc_tensor *in, tc_dtype t) {
  return tc_tensor_like(f, in, NULL, t);
}

tc_tensor *tc_set(tc_fusion *f, tc_tensor *in) {
  tc_clear_error(f);
  if (!operand(f, in, "tc_set")) return NULL;
  tc_tensor *out = like(f, in, in->dtype);
  tc_op_new(f, TC_OP_SET, 0, in, NULL, out);
  return out;
}

tc_tensor *tc_unary(tc_fusion *f, tc_unary_op op, tc_tensor *in) {
  tc_clear_error(f);
  if (!operand(f, in, "tc_unary")) return NULL;
  if ((int)op < TC_NEG || op > TC_SILU) return tc_fail(f, TC_ERR_ARGUMENT, "tc_unary: unknown op %d on %s", (int)op, in->name), NULL;
  bool is_float = in->dtype == TC_F32 || in->dtype == TC_F16 || in->dtype == TC_BF16;
  if (!is_float && op != TC_NEG && op != TC_ABS && op != TC_RELU)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_unary: %s is %s; this op needs a floating-point tensor",
                   in->name, tc_dtype_name(in->dtype)), NULL;
  tc_tensor *out = like(f, in, in->dtype);
  tc_op_new(f, TC_OP_UNARY, op, in, NULL, out);
  return out;
}

static bool is_float_dtype(tc_dtype t) { return t == TC_F32 || t == TC_F16 || t == TC_BF16; }

/* tc_binary with a scalar input on one side: the tensor's shape and
 * dtype, the scalar read at launch (an f32 scalar with float tensors, an
 * i32 one with integer tensors; a size variable with either). */
static tc_tensor *binary_scalar_input(tc_fusion *f, tc_binary_op op, tc_tensor *a, tc_tensor *b) {
  if (a->is_scalar && b->is_scalar)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_binary: %s and %s are both scalar inputs; one operand "
                   "must be a tensor", a->label, b->label), NULL;
  tc_tensor *x = a->is_scalar ? b : a, *s = a->is_scalar ? a : b;
  /* (a size variable, i32, meets a float tensor as a float) */
  bool size_var = false;
  for (int v = 0; v < f->nsym; v++) size_var |= f->sym[v] == s;
  if (is_float_dtype(x->dtype) != (s->dtype == TC_F32) && !size_var)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_binary: %s is %s but the scalar input %s is %s; a float "
                   "tensor takes an f32 scalar, an integer one an i32 scalar", x->name,
                   tc_dtype_name(x->dtype), s->label, tc_dtype_name(s->dtype)), NULL;
  tc_tensor *out = like(f, x, x->dtype);
  tc_op *o = tc_op_new(f, TC_OP_BINARY, op, x, NULL, out);
  o->scalar_in = s;
  o->scalar_left = a->is_scalar;
  return out;
}

tc_tensor *tc_binary(tc_fusion *f, tc_binary_op op, tc_tensor *a, tc_tensor *b) {
  tc_clear_error(f);
  if (!owned(f, a) || !owned(f, b))
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_binary: operand is not a tensor of this fusion"), NULL;
  if ((int)op < TC_ADD || op > TC_MIN) return tc_fail(f, TC_ERR_ARGUMENT, "tc_binary: unknown op %d on %s and %s", (int)op, a->name, b->name), NULL;
  if (a->is_scalar || b->is_scalar) return binary_scalar_input(f, op, a, b);
  if (a->nlogical != b->nlogical)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_binary: %s has rank %d but %s has rank %d", a->name,
                   a->nlogical, b->name, b->nlogical), NULL;
  int64_t shape[16];
  tc_tensor *ab[2] = {a, b};
  if (!tc_broadcast_shape(f, "tc_binary", ab, 2, shape)) return NULL;
  if (a->dtype != b->dtype)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_binary: %s is %s but %s is %s; cast one first", a->name,
                   tc_dtype_name(a->dtype), b->name, tc_dtype_name(b->dtype)), NULL;
  tc_tensor *out = tc_tensor_new(f, a->dtype, a->nlogical, shape);
  tc_op_new(f, TC_OP_BINARY, op, a, b, out);
  return out;
}

bool tc_broadcast_shape(tc_fusion *f, const char *call, tc_tensor *const *ops, int n, int64_t *shape) {
  for (int k = 1; k < n; k++)
    if (ops[k]->nlogical != ops[0]->nlogical)
      return tc_fail(f, TC_ERR_ARGUMENT, "%s: %s has rank %d but %s has rank %d", call, ops[0]->name,
                     ops[0]->nlogical, ops[k]->name, ops[k]->nlogical), false;
  for (int i = 0; i < ops[0]->nlogical; i++) {
    shape[i] = 1;
    for (int k = 0; k < n; k++) {
      int64_t e = tc_logical_extent(ops[k], i);
      if (e != 1 && shape[i] != 1 && e != shape[i]) {
        const tc_tensor *o = ops[0];
        for (int q = 0; q < k; q++)
          if (tc_logical_extent(ops[q], i) != 1) o = ops[q];
        return tc_fail(f, TC_ERR_ARGUMENT,
                       "%s: %s and %s differ in extent at axis %d (%lld vs %lld); an operand "
                       "broadcasts along an axis only where its extent is 1", call, o->name,
                       ops[k]->name, i, (long long)shape[i], (long long)e), false;
      }
      if (e != 1) shape[i] = e;
    }
  }
  return true;
}

tc_tensor *tc_compare(tc_fusion *f, tc_compare_op op, tc_tensor *a, tc_tensor *b) {
  tc_clear_error(f);
  if (!operand(f, a, "tc_compare") || !operand(f, b, "tc_compare")) return NULL;
  if ((int)op < TC_LT || op > TC_NE)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_compare: unknown comparison %d on %s and %s", (int)op,
                   a->name, b->name), NULL;
  int64_t shape[16];
  tc_tensor *ab[2] = {a, b};
  if (!tc_broadcast_shape(f, "tc_compare", ab, 2, shape)) return NULL;
  if (a->dtype != b->dtype)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_compare: %s is %s but %s is %s; cast one first", a->name,
                   tc_dtype_name(a->dtype), b->name, tc_dtype_name(b->dtype)), NULL;
  tc_tensor *out = tc_tensor_new(f, TC_I8, a->nlogical, shape);
  tc_op_new(f, TC_OP_COMPARE, op, a, b, out);
  return out;
}

tc_tensor *tc_where(tc_fusion *f, tc_tensor *cond, tc_tensor *a, tc_tensor *b) {
  tc_clear_error(f);
  if (!operand(f, cond, "tc_where") || !operand(f, a, "tc_where") || !operand(f, b, "tc_where")) return NULL;
  int64_t shape[16];
  tc_tensor *all[3] = {cond, a, b};
  if (!tc_broadcast_shape(f, "tc_where", all, 3, shape)) return NULL;
  if (a->dtype != b->dtype)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_where: %s is %s but %s is %s; cast one first", a->name,
                   tc_dtype_name(a->dtype), b->name, tc_dtype_name(b->dtype)), NULL;
  tc_tensor *out = tc_tensor_new(f, a->dtype, a->nlogical, shape);
  tc_op *op = tc_op_new(f, TC_OP_WHERE, 0, cond, a, out);
  op->in[2] = b, op->nin = 3;
  return out;
}

/* v rounded to f32 to nearest, beyond its range to +-inf (as a cast to
 * f32 rounds; converting such a double with (float) is undefined). */
static double round_f32(double v) {
  if (fabs(v) <= FLT_MAX) return (float)v;
  return copysign(fabs(v) < 0x1.ffffffp127 ? FLT_MAX : INFINITY, v);
}

tc_tensor *tc_binary_scalar(tc_fusion *f, tc_binary_op op, tc_tensor *a, double value) {
  tc_clear_error(f);
  if (!operand(f, a, "tc_binary_scalar")) return NULL;
  if ((int)op < TC_ADD || op > TC_MIN)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_binary_scalar: unknown op %d on %s", (int)op, a->name), NULL;
  bool fl = a->dtype == TC_F32 || a->dtype == TC_F16 || a->dtype == TC_BF16;
  /* (compared, not converted: a double outside int32's range converted
   * to int32_t is undefined behaviour) */
  bool integer = value >= -2147483648.0 && value <= 2147483647.0 && value == trunc(value);
  if (!(value == value) || (!fl && !integer))
    return tc_fail(f, TC_ERR_ARGUMENT,
                   "tc_binary_scalar: %s is %s and the scalar %g is not %s", a->name,
                   tc_dtype_name(a->dtype), value, fl ? "a number" : "a 32-bit integer"), NULL;
  tc_tensor *out = like(f, a, a->dtype);
  tc_op *o = tc_op_new(f, TC_OP_BINARY, op, a, NULL, out);
  o->has_scalar = true;
  o->scalar = fl ? round_f32(value) : value;
  return out;
}

tc_tensor *tc_broadcast(tc_fusion *f, tc_tensor *in, int ndims, const bool *is_new) {
  tc_clear_error(f);
  if (!operand(f, in, "tc_broadcast")) return NULL;
  if (ndims < 1 || ndims > 16 || !is_new)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_broadcast: the result's rank must be 1..16, got %d", ndims), NULL;
  int64_t shape[16];
  int perm[16], k = 0;
  for (int j = 0; j < ndims; j++) {
    if (is_new[j]) {
      shape[j] = 1, perm[j] = -1;
      continue;
    }
    if (k >= in->nlogical) break;
    shape[j] = tc_logical_extent(in, k), perm[j] = k++;
  }
  int kept = 0;
  for (int j = 0; j < ndims; j++) kept += !is_new[j];
  if (kept != in->nlogical)
    return tc_fail(f, TC_ERR_ARGUMENT,
                   "tc_broadcast: %s has %d axes but the result keeps %d (ndims %d minus the new "
                   "ones); they must be equal", in->name, in->nlogical, kept, ndims), NULL;
  tc_tensor *out = tc_tensor_new(f, in->dtype, ndims, shape);
  tc_op *op = tc_op_new(f, TC_OP_BROADCAST, 0, in, NULL, out);
  memcpy(op->perm, perm, (size_t)ndims * sizeof(int));
  return out;
}

tc_tensor *tc_expand(tc_fusion *f, tc_tensor *in, int ndims, const int64_t *shape) {
  tc_clear_error(f);
  if (!operand(f, in, "tc_expand")) return NULL;
  if (ndims != in->nlogical || !shape)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_expand: %s has rank %d but the shape has %d extents",
                   in->name, in->nlogical, ndims), NULL;
  for (int i = 0; i < ndims; i++) {
    int64_t e = tc_logical_extent(in, i);
    if (shape[i] < 1 || shape[i] > ((int64_t)1 << 31) || (e != 1 && shape[i] != e))
      return tc_fail(f, TC_ERR_ARGUMENT,
                     "tc_expand: %s has extent %lld at axis %d, which cannot expand to %lld (only "
                     "an extent of 1 expands)", in->name, (long long)e, i, (long long)shape[i]), NULL;
  }
  tc_tensor *out = tc_tensor_new(f, in->dtype, ndims, shape);
  tc_op_new(f, TC_OP_SET, 0, in, NULL, out); /* a copy reads an extent-1 axis at 0 */
  return out;
}

tc_tensor *tc_gather(tc_fusion *f, tc_tensor *in, int axis, tc_tensor *index) {
  tc_clear_error(f);
  if (!operand(f, in, "tc_gather") || !operand(f, index, "tc_gather")) return NULL;
  int a = tc_norm_axis(axis, in->nlogical);
  if (a < 0)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_gather: axis %d is out of range for %s (rank %d)", axis,
                   in->name, in->nlogical), NULL;
  if (index->dtype != TC_I32)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_gather: the index %s is %s; it must be i32", index->name,
                   tc_dtype_name(index->dtype)), NULL;
  if (index->nlogical != in->nlogical)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_gather: the index %s has rank %d but %s has rank %d",
                   index->name, index->nlogical, in->name, in->nlogical), NULL;
  int64_t shape[16];
  for (int i = 0; i < in->nlogical; i++) {
    shape[i] = tc_logical_extent(index, i);
    if (i != a && shape[i] != tc_logical_extent(in, i))
      return tc_fail(f, TC_ERR_ARGUMENT,
                     "tc_gather: the index %s has extent %lld at axis %d but %s has %lld; they may "
                     "differ only along the gathered axis %d", index->name, (long long)shape[i], i,
                     in->name, (long long)tc_logical_extent(in, i), a), NULL;
  }
  tc_tensor *out = tc_tensor_new(f, in->dtype, in->nlogical, shape);
  tc_op_new(f, TC_OP_GATHER, a, in, index, out);
  return out;
}

tc_tensor *tc_reduce(tc_fusion *f, tc_reduce_op op, tc_tensor *in, int naxes, const int *axes) {
  tc_clear_error(f);
  if (!operand(f, in, "tc_reduce")) return NULL;
  if ((int)op < TC_REDUCE_SUM || op > TC_REDUCE_MIN)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_reduce: unknown op %d on %s", (int)op, in->name), NULL;
  if (naxes < 1 || naxes > in->nlogical || !axes)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_reduce: give 1..%d axes of %s to reduce, got %d",
                   in->nlogical, in->name, naxes), NULL;
  bool red[16] = {false};
  for (int k = 0; k < naxes; k++) {
    int a = tc_norm_axis(axes[k], in->nlogical);
    if (a < 0 || red[a])
      return tc_fail(f, TC_ERR_ARGUMENT, "tc_reduce: axis %d of %s (rank %d) is %s", axes[k],
                     in->name, in->nlogical, a < 0 ? "out of range" : "listed twice"), NULL;
    red[a] = true;
  }
  /* f32 accumulation for 16-bit floats; 32-bit for i8 */
  tc_dtype t = in->dtype == TC_F16 || in->dtype == TC_BF16 ? TC_F32 : in->dtype == TC_I8 ? TC_I32
                                                                                        : in->dtype;
  tc_tensor *out = like(f, in, t);
  for (int i = 0; i < in->nlogical; i++)
    if (red[i]) out->logical[i] = out->loop[i] = tc_dg_root_reduction(&f->g, tc_logical_extent(in, i), i);
  tc_op_new(f, TC_OP_REDUCE, op, in, NULL, out);
  return out;
}

bool tc_tensor_is_welford(const tc_tensor *t) {
  return t->def && t->def->kind == TC_OP_REDUCE && t->def->sub == TC_REDUCE_WELFORD;
}

tc_tensor *tc_welford(tc_fusion *f, tc_tensor *in, int naxes, const int *axes, tc_tensor **mean,
                      tc_tensor **var) {
  tc_clear_error(f);
  if (mean) *mean = NULL;
  if (var) *var = NULL;
  if (!mean || !var)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_welford: mean and var must point at tensor handles"), NULL;
  if (!operand(f, in, "tc_welford")) return NULL;
  if (in->dtype != TC_F32 && in->dtype != TC_F16 && in->dtype != TC_BF16)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_welford: %s is %s; the mean and variance need a "
                   "floating-point tensor (cast it first)", in->name, tc_dtype_name(in->dtype)), NULL;
  /* tc_reduce checks the axes and makes the reduction axes */
  tc_tensor *w = tc_reduce(f, TC_REDUCE_SUM, in, naxes, axes);
  if (!w) {
    char msg[sizeof f->err];
    snprintf(msg, sizeof msg, "%s", f->err);
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_welford%s", strncmp(msg, "tc_reduce", 9) == 0 ? msg + 9 : msg), NULL;
  }
  w->def->sub = TC_REDUCE_WELFORD;
  *mean = like(f, w, TC_F32);
  tc_op_new(f, TC_OP_WELFORD_PART, TC_WELFORD_MEAN, w, NULL, *mean);
  *var = like(f, w, TC_F32);
  tc_op_new(f, TC_OP_WELFORD_PART, TC_WELFORD_VAR, w, NULL, *var);
  return w;
}

tc_tensor *tc_cast(tc_fusion *f, tc_tensor *in, tc_dtype to) {
  tc_clear_error(f);
  if (!operand(f, in, "tc_cast")) return NULL;
  if (!valid_dtype(to)) return tc_fail(f, TC_ERR_ARGUMENT, "tc_cast: unknown dtype %d for %s", (int)to, in->name), NULL;
  tc_tensor *out = like(f, in, to);
  tc_op_new(f, TC_OP_CAST, 0, in, NULL, out);
  return out;
}

tc_tensor *tc_permute(tc_fusion *f, tc_tensor *in, const int *perm) {
  tc_clear_error(f);
  if (!operand(f, in, "tc_permute")) return NULL;
  if (!perm) return tc_fail(f, TC_ERR_ARGUMENT, "tc_permute: perm is NULL for %s", in->name), NULL;
  int seen[16] = {0};
  for (int k = 0; k < in->nlogical; k++) {
    if (perm[k] < 0 || perm[k] >= in->nlogical || seen[perm[k]]++)
      return tc_fail(f, TC_ERR_ARGUMENT,
                     "tc_permute: perm must list each of %s's %d axes exactly once (bad entry %d: %d)",
                     in->name, in->nlogical, k, perm[k]), NULL;
  }
  tc_tensor *out = tc_tensor_like(f, in, perm, in->dtype);
  tc_op *op = tc_op_new(f, TC_OP_PERMUTE, 0, in, NULL, out);
  memcpy(op->perm, perm, (size_t)in->nlogical * sizeof(int));
  return out;
}

const char *tc_tensor_name(const tc_tensor *t) { return t->name; }
tc_dtype tc_tensor_dtype(const tc_tensor *t) { return t->dtype; }
int tc_tensor_ndims(const tc_tensor *t) { return t->nlogical; }
int tc_tensor_nloop(const tc_tensor *t) { return t->nloop; }

size_t tc_tensor_bytes(const tc_tensor *t) {
  size_t n = tc_dtype_size(t->dtype);
  if (t->view) return n * (size_t)t->view_elems;
  for (int i = 0; i < t->nlogical; i++) n *= (size_t)tc_logical_extent(t, i);
  return n;
}

int64_t tc_tensor_extent(const tc_tensor *t, int axis) {
  int a = tc_norm_axis(axis, t->nlogical);
  return a < 0 ? -1 : tc_logical_extent(t, a);
}

int64_t tc_tensor_loop_extent(const tc_tensor *t, int axis) {
  int a = tc_norm_axis(axis, t->nloop);
  return a < 0 ? -1 : t->f->g.axes[t->loop[a]].extent;
}

tc_ptype tc_tensor_loop_ptype(const tc_tensor *t, int axis) {
  int a = tc_norm_axis(axis, t->nloop);
  return a < 0 ? TC_SERIAL : t->f->g.axes[t->loop[a]].ptype;
}

/* "[a, b, ...]" for the n axes, with "(CA)" before position ca and "(DS)"
 * before position ds (-1: no mark; n: after the last axis). */
static void domain_str(const tc_dgraph *g, const int *axes, int n, int ca, int ds, tc_str *out) {
  char buf[64];
  if (ca > n) ca = n;
  if (ds > n) ds = n; /* as lowering reads a dim-sep past a shortened domain */
  const char *sep = "";
  tc_str_cat(out, "[");
  for (int i = 0; i <= n; i++) {
    if (i == ca) tc_str_printf(out, "%s(CA)", sep), sep = ", ";
    if (i == ds) tc_str_printf(out, "%s(DS)", sep), sep = ", ";
    if (i < n) tc_str_printf(out, "%s%s", sep, tc_axis_describe(g, axes[i], buf, sizeof buf));
    sep = ", ";
  }
  tc_str_cat(out, "]");
}

void tc_tensor_loop_str(const tc_tensor *t, tc_str *out) {
  bool own_alloc = t->alloc_set && (t->nalloc != t->nloop ||
                                    memcmp(t->alloc, t->loop, (size_t)t->nloop * sizeof(int)) != 0);
  int ds = t->mem == TC_MEM_TENSOR ? t->tmem_dimsep : -1;
  tc_str_cat(out, t->name);
  domain_str(&t->f->g, t->loop, t->nloop, t->ca_pos > 0 ? t->ca_pos : -1, own_alloc ? -1 : ds, out);
  if (own_alloc) {
    tc_str_cat(out, " alloc");
    domain_str(&t->f->g, t->alloc, t->nalloc, -1, ds, out);
  }
}

tc_status tc_vfail_call(tc_fusion *f, tc_status status, const char *call, const char *context,
                        const char *fmt, va_list ap) {
  char msg[700];
  vsnprintf(msg, sizeof msg, fmt, ap);
  return tc_fail(f, status, "%s: %s (%s)", call, msg, context);
}

tc_status tc_tensor_vfail(const tc_tensor *t, tc_status status, const char *call, const char *fmt,
                          va_list ap) {
  tc_str d;
  tc_str_init(&d);
  tc_tensor_loop_str(t, &d);
  tc_status r = tc_vfail_call(t->f, status, call, tc_str_cstr(&d), fmt, ap);
  tc_str_free(&d);
  return r;
}

tc_status tc_tensor_fail(const tc_tensor *t, tc_status status, const char *call, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tc_status r = tc_tensor_vfail(t, status, call, fmt, ap);
  va_end(ap);
  return r;
}

tc_status tc_tensor_check_computed(const tc_tensor *t, const char *call) {
  tc_clear_error(t->f);
  if (t->is_input)
    return tc_tensor_fail(t, TC_ERR_SCHEDULE, call,
                          "%s is a fusion input: the kernel does not compute it, so it has no loop "
                          "to schedule; schedule a tensor that reads it (e.g. one made by "
                          "tc_cache_after)",
                          t->name);
  return TC_OK;
}

void tc_tensor_set_alloc(tc_tensor *t, const int *axes, int n) {
  int *alloc = tc_xmalloc((size_t)n * sizeof(int));
  memcpy(alloc, axes, (size_t)n * sizeof(int));
  free(t->alloc);
  t->alloc = alloc;
  t->nalloc = n;
  t->alloc_set = true;
}

const char *tc_tensor_describe(const tc_tensor *t, char *buf, size_t cap) {
  tc_str s;
  tc_str_init(&s);
  tc_tensor_loop_str(t, &s);
  snprintf(buf, cap, "%s", tc_str_cstr(&s));
  tc_str_free(&s);
  return buf;
}

int tc_consumers(const tc_fusion *f, const tc_tensor *t, tc_op **out, int cap) {
  int n = 0;
  for (int i = 0; i < f->nops; i++) {
    tc_op *op = f->ops[i];
    for (int k = 0; k < op->nin; k++)
      if (op->in[k] == t) {
        if (out && n < cap) out[n] = op;
        n++;
        break;
      }
  }
  return n;
}

static void topo_visit(const tc_fusion *f, tc_tensor *t, char *seen, tc_op **order, int *n) {
  if (seen[t->id]) return;
  seen[t->id] = 1;
  if (!t->def) return;
  for (int k = 0; k < t->def->nin; k++) topo_visit(f, t->def->in[k], seen, order, n);
  order[(*n)++] = t->def;
}

bool tc_tensor_reads(const tc_tensor *t, const tc_tensor *from) {
  if (t == from) return true;
  for (int i = 0; t->def && i < t->def->nin; i++)
    if (tc_tensor_reads(t->def->in[i], from)) return true;
  return false;
}

tc_op **tc_topo_order(const tc_fusion *f, int *n) {
  char *seen = tc_xcalloc((size_t)f->ntensors + 1, 1);
  tc_op **order = tc_xmalloc((size_t)(f->nops + 1) * sizeof *order);
  *n = 0;
  for (int i = 0; i < f->noutputs; i++) topo_visit(f, f->outputs[i], seen, order, n);
  free(seen);
  return order;
}

int tc_norm_axis(int axis, int n) {
  if (axis < 0) axis += n;
  return axis >= 0 && axis < n ? axis : -1;
}

int tc_norm_pos(int pos, int n) {
  if (pos < 0) pos += n + 1;
  return pos >= 0 && pos <= n ? pos : -1;
}
