/* tile.c - building, inspecting, rewriting and printing the tile IR
 * (tile.h).  Every builder call checks its operands' kinds and shapes and
 * records the first error in the kernel; after an error every call
 * returns NULL. */
#include "tile.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the kernel ---- */

tc_tile_kernel *tc_tile_kernel_new(const char *name, int64_t num_programs, int threads) {
  tc_tile_kernel *k = tc_xcalloc(1, sizeof *k);
  snprintf(k->name, sizeof k->name, "%s", name && *name ? name : "tile_kernel");
  k->num_programs = num_programs;
  k->threads = threads;
  k->ins_block = &k->body;
  k->ins_pos = 0;
  if (num_programs < 1 || num_programs > INT32_MAX)
    tc_tile_fail(k, "the number of programs must be between 1 and 2^31-1 (got %lld)",
                 (long long)num_programs);
  if (threads < 1 || threads > 1024)
    tc_tile_fail(k, "threads per program must be between 1 and 1024 (got %d)", threads);
  return k;
}

void tc_tile_kernel_free(tc_tile_kernel *k) {
  if (!k) return;
  for (int i = 0; i < k->nvals; i++) {
    free((char *)k->vals[i]->name);
    free(k->vals[i]);
  }
  for (int i = 0; i < k->nops; i++) {
    tc_tile_op *op = k->ops[i];
    free(op->in);
    free(op->out);
    free(op->body.ops);
    free(op->bargs);
    free(op);
  }
  free(k->vals);
  free(k->ops);
  free(k->args);
  free(k->body.ops);
  free(k->reports);
  free(k);
}

const char *tc_tile_error(const tc_tile_kernel *k) { return k ? k->err : "no kernel"; }

void tc_tile_fail(tc_tile_kernel *k, const char *fmt, ...) {
  if (!k || k->err[0]) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(k->err, sizeof k->err, fmt, ap);
  va_end(ap);
}

static int ok(tc_tile_kernel *k) { return k && !k->err[0]; }

static tc_tile_value *new_value(tc_tile_kernel *k, tc_tile_type t) {
  tc_tile_value *v = tc_xcalloc(1, sizeof *v);
  v->type = t;
  v->id = k->nvals;
  TC_PUSH(k->vals, k->nvals, k->capvals, v);
  return v;
}

static void block_insert(tc_tile_block *b, int pos, tc_tile_op *op) {
  TC_PUSH(b->ops, b->n, b->cap, op);
  memmove(b->ops + pos + 1, b->ops + pos, (size_t)(b->n - 1 - pos) * sizeof *b->ops);
  b->ops[pos] = op;
}

/* A new op with the given operands and `nout` results of type t, linked
 * at the insertion point. */
static tc_tile_op *new_op(tc_tile_kernel *k, tc_tile_opkind kind, int nin, tc_tile_value *const *in,
                          int nout, const tc_tile_type *t) {
  tc_tile_op *op = tc_xcalloc(1, sizeof *op);
  op->kind = kind;
  for (int i = 0; i < nin; i++) TC_PUSH(op->in, op->nin, op->capin, in[i]);
  if (nout) {
    op->out = tc_xcalloc((size_t)nout, sizeof *op->out);
    op->nout = nout;
    for (int i = 0; i < nout; i++) {
      op->out[i] = new_value(k, t[i]);
      op->out[i]->def = op;
      op->out[i]->index = i;
    }
  }
  op->parent = k->ins_parent;
  op->id = k->nops;
  TC_PUSH(k->ops, k->nops, k->capops, op);
  block_insert(k->ins_block, k->ins_pos++, op);
  return op;
}

static tc_tile_value *new_op1(tc_tile_kernel *k, tc_tile_opkind kind, int nin,
                              tc_tile_value *const *in, tc_tile_type t) {
  return new_op(k, kind, nin, in, 1, &t)->out[0];
}

/* ---- types ---- */

static tc_tile_type scalar_type(tc_tile_kind kind, tc_dtype dt) {
  tc_tile_type t;
  memset(&t, 0, sizeof t);
  t.kind = kind;
  t.dtype = dt;
  return t;
}

static tc_tile_type shaped(tc_tile_type t, int rank, const int64_t *shape) {
  t.rank = rank;
  t.shape[0] = t.shape[1] = 0;
  for (int i = 0; i < rank; i++) t.shape[i] = shape[i];
  return t;
}

int tc_tile_type_eq(const tc_tile_type *a, const tc_tile_type *b) {
  if (a->kind != b->kind || a->rank != b->rank) return 0;
  if (a->kind != TC_TK_INT && a->kind != TC_TK_BOOL && a->dtype != b->dtype) return 0;
  for (int i = 0; i < a->rank; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

int64_t tc_tile_type_elems(const tc_tile_type *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= t->shape[i];
  return n;
}

static const char *dtype_str(tc_dtype d) {
  switch (d) {
    case TC_F32: return "f32";
    case TC_F16: return "f16";
    case TC_BF16: return "bf16";
    case TC_I32: return "i32";
    case TC_I8: return "i8";
  }
  return "?";
}

static void elem_str(tc_str *o, const tc_tile_type *t) {
  switch (t->kind) {
    case TC_TK_INT: tc_str_cat(o, "i32"); break;
    case TC_TK_BOOL: tc_str_cat(o, "i1"); break;
    case TC_TK_FLOAT: tc_str_cat(o, dtype_str(t->dtype)); break;
    case TC_TK_PTR: tc_str_printf(o, "!tt.ptr<%s>", dtype_str(t->dtype)); break;
    case TC_TK_SMEM: tc_str_cat(o, dtype_str(t->dtype)); break;
  }
}

void tc_tile_print_type(tc_str *o, const tc_tile_type *t) {
  if (t->kind == TC_TK_SMEM) {
    tc_str_cat(o, "!ttg.memdesc<");
    for (int i = 0; i < t->rank; i++) tc_str_printf(o, "%lldx", (long long)t->shape[i]);
    elem_str(o, t);
    tc_str_cat(o, ", #shared>");
    return;
  }
  if (t->rank == 0) {
    elem_str(o, t);
    return;
  }
  tc_str_cat(o, "tensor<");
  for (int i = 0; i < t->rank; i++) tc_str_printf(o, "%lldx", (long long)t->shape[i]);
  elem_str(o, t);
  tc_str_cat(o, ">");
}

static const char *kind_word(tc_tile_kind k) {
  switch (k) {
    case TC_TK_INT: return "i32";
    case TC_TK_BOOL: return "i1";
    case TC_TK_FLOAT: return "float";
    case TC_TK_PTR: return "pointer";
    case TC_TK_SMEM: return "shared-memory descriptor";
  }
  return "?";
}

/* Checks that v is non-NULL and of the given kind and rank (-1: any
 * rank, -2: any tensor rank); records an error otherwise. */
static int want(tc_tile_kernel *k, const char *what, const tc_tile_value *v, tc_tile_kind kind,
                int rank) {
  if (!ok(k)) return 0;
  if (!v) {
    tc_tile_fail(k, "%s: an operand is NULL", what);
    return 0;
  }
  if (v->type.kind != kind) {
    tc_tile_fail(k, "%s: expected an %s operand, got %s", what, kind_word(kind),
                 kind_word(v->type.kind));
    return 0;
  }
  if ((rank >= 0 && v->type.rank != rank) || (rank == -2 && v->type.rank == 0)) {
    tc_tile_fail(k, "%s: expected a %s operand, got rank %d", what,
                 rank == 0 ? "scalar" : rank == -2 ? "tensor" : rank == 1 ? "rank-1" : "rank-2",
                 v->type.rank);
    return 0;
  }
  return 1;
}

static int shape_ok(tc_tile_kernel *k, const char *what, int rank, const int64_t *shape) {
  if (rank < 1 || rank > 2) {
    tc_tile_fail(k, "%s: tensors have rank 1 or 2 (got %d)", what, rank);
    return 0;
  }
  for (int i = 0; i < rank; i++)
    if (shape[i] < 1 || shape[i] > (1 << 24)) {
      tc_tile_fail(k, "%s: extent %lld out of range 1..2^24", what, (long long)shape[i]);
      return 0;
    }
  return 1;
}

/* ---- builders ---- */

static int valid_name(const char *s) {
  if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
  for (const char *p = s; *p; p++)
    if (!isalnum((unsigned char)*p) && *p != '_') return 0;
  if (strncmp(s, "t_", 2) == 0 || strncmp(s, "tc_", 3) == 0) return 0;
  static const char *reserved[] = {"bidx", "bidy", "bidz", "tidx", "tidy", "tidz", "int",
                                   "float", "const", "for", "if", "half", "restrict"};
  for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
    if (strcmp(s, reserved[i]) == 0) return 0;
  return strlen(s) < 32;
}

static tc_tile_value *new_arg(tc_tile_kernel *k, const char *name, tc_tile_type t, int is_output) {
  if (!ok(k)) return NULL;
  if (!valid_name(name)) {
    tc_tile_fail(k, "bad argument name '%s' (a C identifier under 32 characters, not starting "
                    "with t_ or tc_, not a reserved word)", name ? name : "(null)");
    return NULL;
  }
  for (int i = 0; i < k->nargs; i++)
    if (strcmp(k->args[i]->name, name) == 0) {
      tc_tile_fail(k, "argument '%s' is declared twice", name);
      return NULL;
    }
  tc_tile_value *v = new_value(k, t);
  v->name = tc_xstrdup(name);
  v->is_arg = 1;
  v->is_output = is_output;
  v->index = k->nargs;
  TC_PUSH(k->args, k->nargs, k->capargs, v);
  return v;
}

tc_tile_value *tc_tile_arg_ptr(tc_tile_kernel *k, const char *name, tc_dtype dtype, int is_output) {
  if (ok(k) && dtype != TC_F32 && dtype != TC_F16 && dtype != TC_I32) {
    tc_tile_fail(k, "argument '%s': pointers to f32, f16 or i32 only", name ? name : "");
    return NULL;
  }
  return new_arg(k, name, scalar_type(TC_TK_PTR, dtype), is_output);
}

tc_tile_value *tc_tile_arg_int(tc_tile_kernel *k, const char *name) {
  return new_arg(k, name, scalar_type(TC_TK_INT, TC_I32), 0);
}

tc_tile_value *tc_tile_const_int(tc_tile_kernel *k, int64_t v) {
  if (!ok(k)) return NULL;
  if (v < INT32_MIN || v > INT32_MAX) {
    tc_tile_fail(k, "constant %lld does not fit in i32", (long long)v);
    return NULL;
  }
  tc_tile_value *r = new_op1(k, TC_TO_CONST, 0, NULL, scalar_type(TC_TK_INT, TC_I32));
  r->def->ival[0] = v;
  return r;
}

tc_tile_value *tc_tile_const_tensor(tc_tile_kernel *k, tc_tile_kind kind, tc_dtype dtype, int rank,
                                    const int64_t *shape, double v) {
  if (!ok(k) || !shape_ok(k, "arith.constant", rank, shape)) return NULL;
  if (kind != TC_TK_INT && kind != TC_TK_FLOAT) {
    tc_tile_fail(k, "arith.constant: i32 or float tensors only");
    return NULL;
  }
  if (kind == TC_TK_FLOAT && dtype != TC_F32 && dtype != TC_F16) {
    tc_tile_fail(k, "arith.constant: f32 or f16 only");
    return NULL;
  }
  tc_tile_type t = shaped(scalar_type(kind, kind == TC_TK_INT ? TC_I32 : dtype), rank, shape);
  tc_tile_value *r = new_op1(k, TC_TO_CONST, 0, NULL, t);
  if (kind == TC_TK_INT) {
    if (v < INT32_MIN || v > INT32_MAX || v != (double)(int64_t)v) {
      tc_tile_fail(k, "arith.constant: %g is not an i32", v);
      return NULL;
    }
    r->def->ival[0] = (int64_t)v;
  } else {
    r->def->fval = v;
  }
  return r;
}

tc_tile_value *tc_tile_program_id(tc_tile_kernel *k) {
  if (!ok(k)) return NULL;
  return new_op1(k, TC_TO_PROGRAM_ID, 0, NULL, scalar_type(TC_TK_INT, TC_I32));
}

tc_tile_value *tc_tile_binary(tc_tile_kernel *k, tc_tile_opkind op, tc_tile_value *a,
                              tc_tile_value *b) {
  const char *nm = tc_tile_opkind_name(op);
  if (!ok(k)) return NULL;
  if (op < TC_TO_ADD || op > TC_TO_AND) {
    tc_tile_fail(k, "tc_tile_binary: %s is not a binary op", nm);
    return NULL;
  }
  tc_tile_kind in = op == TC_TO_AND ? TC_TK_BOOL : TC_TK_INT;
  if (!want(k, nm, a, in, -1) || !want(k, nm, b, in, -1)) return NULL;
  if (!tc_tile_type_eq(&a->type, &b->type)) {
    tc_str s;
    tc_str_init(&s);
    tc_tile_print_type(&s, &a->type);
    tc_str_cat(&s, " and ");
    tc_tile_print_type(&s, &b->type);
    tc_tile_fail(k, "%s: operands of different types (%s)", nm, tc_str_cstr(&s));
    tc_str_free(&s);
    return NULL;
  }
  tc_tile_type t = a->type;
  if (op == TC_TO_LT) t.kind = TC_TK_BOOL;
  tc_tile_value *ops[2] = {a, b};
  return new_op1(k, op, 2, ops, t);
}

tc_tile_value *tc_tile_make_range(tc_tile_kernel *k, int64_t lo, int64_t hi) {
  if (!ok(k)) return NULL;
  if (lo < 0 || hi <= lo || hi > (1 << 24)) {
    tc_tile_fail(k, "tt.make_range: needs 0 <= start < end <= 2^24 (got %lld, %lld)",
                 (long long)lo, (long long)hi);
    return NULL;
  }
  int64_t n = hi - lo;
  tc_tile_value *r = new_op1(k, TC_TO_MAKE_RANGE, 0, NULL,
                             shaped(scalar_type(TC_TK_INT, TC_I32), 1, &n));
  r->def->ival[0] = lo;
  r->def->ival[1] = hi;
  return r;
}

tc_tile_value *tc_tile_splat(tc_tile_kernel *k, tc_tile_value *s, int rank, const int64_t *shape) {
  if (!ok(k)) return NULL;
  if (!s) {
    tc_tile_fail(k, "tt.splat: an operand is NULL");
    return NULL;
  }
  if (s->type.rank != 0 || s->type.kind == TC_TK_SMEM) {
    tc_tile_fail(k, "tt.splat: the operand must be a scalar");
    return NULL;
  }
  if (!shape_ok(k, "tt.splat", rank, shape)) return NULL;
  return new_op1(k, TC_TO_SPLAT, 1, &s, shaped(s->type, rank, shape));
}

tc_tile_value *tc_tile_expand_dims(tc_tile_kernel *k, tc_tile_value *v, int axis) {
  if (!ok(k)) return NULL;
  if (!v || v->type.rank != 1 || v->type.kind == TC_TK_SMEM) {
    tc_tile_fail(k, "tt.expand_dims: the operand must be a rank-1 tensor");
    return NULL;
  }
  if (axis != 0 && axis != 1) {
    tc_tile_fail(k, "tt.expand_dims: axis must be 0 or 1 (got %d)", axis);
    return NULL;
  }
  int64_t sh[2] = {axis == 0 ? 1 : v->type.shape[0], axis == 0 ? v->type.shape[0] : 1};
  tc_tile_value *r = new_op1(k, TC_TO_EXPAND_DIMS, 1, &v, shaped(v->type, 2, sh));
  r->def->ival[0] = axis;
  return r;
}

tc_tile_value *tc_tile_broadcast(tc_tile_kernel *k, tc_tile_value *v, int64_t s0, int64_t s1) {
  if (!ok(k)) return NULL;
  if (!v || v->type.rank != 2 || v->type.kind == TC_TK_SMEM) {
    tc_tile_fail(k, "tt.broadcast: the operand must be a rank-2 tensor");
    return NULL;
  }
  int64_t sh[2] = {s0, s1};
  if (!shape_ok(k, "tt.broadcast", 2, sh)) return NULL;
  for (int i = 0; i < 2; i++)
    if (v->type.shape[i] != 1 && v->type.shape[i] != sh[i]) {
      tc_tile_fail(k, "tt.broadcast: cannot broadcast %lldx%lld to %lldx%lld",
                   (long long)v->type.shape[0], (long long)v->type.shape[1], (long long)s0,
                   (long long)s1);
      return NULL;
    }
  return new_op1(k, TC_TO_BROADCAST, 1, &v, shaped(v->type, 2, sh));
}

tc_tile_value *tc_tile_addptr(tc_tile_kernel *k, tc_tile_value *ptr, tc_tile_value *offs) {
  if (!want(k, "tt.addptr", ptr, TC_TK_PTR, -1) || !want(k, "tt.addptr", offs, TC_TK_INT, -1))
    return NULL;
  tc_tile_type ot = offs->type;
  ot.kind = TC_TK_PTR;
  ot.dtype = ptr->type.dtype;
  if (!tc_tile_type_eq(&ptr->type, &ot)) {
    tc_tile_fail(k, "tt.addptr: the pointer and the offsets have different shapes");
    return NULL;
  }
  tc_tile_value *ops[2] = {ptr, offs};
  return new_op1(k, TC_TO_ADDPTR, 2, ops, ptr->type);
}

tc_tile_value *tc_tile_load(tc_tile_kernel *k, tc_tile_value *ptrs, tc_tile_value *mask,
                            tc_tile_value *other) {
  if (!want(k, "tt.load", ptrs, TC_TK_PTR, -2)) return NULL;
  tc_tile_type t = ptrs->type;
  t.kind = ptrs->type.dtype == TC_I32 ? TC_TK_INT : TC_TK_FLOAT;
  tc_tile_value *ops[3] = {ptrs, mask, other};
  int n = 1;
  if (mask) {
    tc_tile_type mt = t;
    mt.kind = TC_TK_BOOL;
    if (!tc_tile_type_eq(&mask->type, &mt)) {
      tc_tile_fail(k, "tt.load: the mask must be an i1 tensor of the pointers' shape");
      return NULL;
    }
    n = 2;
    if (other) {
      if (!tc_tile_type_eq(&other->type, &t)) {
        tc_tile_fail(k, "tt.load: `other` must have the loaded type");
        return NULL;
      }
      n = 3;
    }
  } else if (other) {
    tc_tile_fail(k, "tt.load: `other` needs a mask");
    return NULL;
  }
  return new_op1(k, TC_TO_LOAD, n, ops, t);
}

void tc_tile_store(tc_tile_kernel *k, tc_tile_value *ptrs, tc_tile_value *value,
                   tc_tile_value *mask) {
  if (!want(k, "tt.store", ptrs, TC_TK_PTR, -2)) return;
  if (!value || value->type.rank != ptrs->type.rank ||
      value->type.kind != (ptrs->type.dtype == TC_I32 ? TC_TK_INT : TC_TK_FLOAT) ||
      value->type.shape[0] != ptrs->type.shape[0] || value->type.shape[1] != ptrs->type.shape[1]) {
    tc_tile_fail(k, "tt.store: the value must be a tensor of the pointers' shape and kind");
    return;
  }
  if (mask) {
    tc_tile_type mt = ptrs->type;
    mt.kind = TC_TK_BOOL;
    if (!tc_tile_type_eq(&mask->type, &mt)) {
      tc_tile_fail(k, "tt.store: the mask must be an i1 tensor of the pointers' shape");
      return;
    }
  }
  tc_tile_value *ops[3] = {ptrs, value, mask};
  new_op(k, TC_TO_STORE, mask ? 3 : 2, ops, 0, NULL);
}

tc_tile_value *tc_tile_dot(tc_tile_kernel *k, tc_tile_value *a, tc_tile_value *b,
                           tc_tile_value *acc) {
  if (!want(k, "tt.dot", a, TC_TK_FLOAT, 2) || !want(k, "tt.dot", b, TC_TK_FLOAT, 2) ||
      !want(k, "tt.dot", acc, TC_TK_FLOAT, 2))
    return NULL;
  if (a->type.shape[1] != b->type.shape[0] || acc->type.shape[0] != a->type.shape[0] ||
      acc->type.shape[1] != b->type.shape[1] || acc->type.dtype != TC_F32) {
    tc_tile_fail(k, "tt.dot: shapes %lldx%lld * %lldx%lld do not give the f32 accumulator "
                    "%lldx%lld",
                 (long long)a->type.shape[0], (long long)a->type.shape[1],
                 (long long)b->type.shape[0], (long long)b->type.shape[1],
                 (long long)acc->type.shape[0], (long long)acc->type.shape[1]);
    return NULL;
  }
  tc_tile_value *ops[3] = {a, b, acc};
  return new_op1(k, TC_TO_DOT, 3, ops, acc->type);
}

tc_tile_op *tc_tile_for_begin(tc_tile_kernel *k, tc_tile_value *lb, tc_tile_value *ub,
                              tc_tile_value *step, int n, tc_tile_value *const *inits) {
  if (!want(k, "scf.for", lb, TC_TK_INT, 0) || !want(k, "scf.for", ub, TC_TK_INT, 0) ||
      !want(k, "scf.for", step, TC_TK_INT, 0))
    return NULL;
  if (n < 0 || (n > 0 && !inits)) {
    tc_tile_fail(k, "scf.for: bad iteration arguments");
    return NULL;
  }
  tc_tile_type *ts = tc_xcalloc((size_t)n + 1, sizeof *ts);
  tc_tile_value **ops = tc_xcalloc((size_t)n + 3, sizeof *ops);
  ops[0] = lb, ops[1] = ub, ops[2] = step;
  for (int i = 0; i < n; i++) {
    if (!inits[i]) {
      tc_tile_fail(k, "scf.for: iteration argument %d is NULL", i);
      free(ts);
      free(ops);
      return NULL;
    }
    ts[i] = inits[i]->type;
    ops[i + 3] = inits[i];
  }
  tc_tile_op *op = new_op(k, TC_TO_FOR, n + 3, ops, n, ts);
  free(ts);
  free(ops);
  op->nbargs = n + 1;
  op->bargs = tc_xcalloc((size_t)n + 1, sizeof *op->bargs);
  for (int i = 0; i <= n; i++) {
    op->bargs[i] = new_value(k, i == 0 ? scalar_type(TC_TK_INT, TC_I32) : inits[i - 1]->type);
    op->bargs[i]->owner = op;
    op->bargs[i]->index = i;
  }
  tc_tile_set_insertion(k, &op->body, 0, op);
  return op;
}

void tc_tile_for_end(tc_tile_kernel *k, tc_tile_op *loop, int n, tc_tile_value *const *yields) {
  if (!ok(k)) return;
  if (!loop || loop->kind != TC_TO_FOR || k->ins_parent != loop) {
    tc_tile_fail(k, "scf.for: tc_tile_for_end without its tc_tile_for_begin");
    return;
  }
  if (n != loop->nout) {
    tc_tile_fail(k, "scf.yield: %d values for %d iteration arguments", n, loop->nout);
    return;
  }
  for (int i = 0; i < n; i++)
    if (!yields[i] || !tc_tile_type_eq(&yields[i]->type, &loop->out[i]->type)) {
      tc_tile_fail(k, "scf.yield: value %d does not have its iteration argument's type", i);
      return;
    }
  new_op(k, TC_TO_YIELD, n, yields, 0, NULL);
  tc_tile_block *b;
  int pos = tc_tile_op_position(k, loop, &b);
  tc_tile_set_insertion(k, b, pos + 1, loop->parent);
}

tc_tile_value *tc_tile_for_iv(const tc_tile_op *loop) {
  return loop && loop->kind == TC_TO_FOR ? loop->bargs[0] : NULL;
}

tc_tile_value *tc_tile_for_arg(const tc_tile_op *loop, int i) {
  return loop && loop->kind == TC_TO_FOR && i >= 0 && i + 1 < loop->nbargs ? loop->bargs[i + 1]
                                                                           : NULL;
}

tc_tile_value *tc_tile_for_result(const tc_tile_op *loop, int i) {
  return loop && loop->kind == TC_TO_FOR && i >= 0 && i < loop->nout ? loop->out[i] : NULL;
}

tc_tile_value *tc_tile_local_alloc(tc_tile_kernel *k, tc_tile_value *v) {
  if (!ok(k)) return NULL;
  if (!v || v->type.rank == 0 || (v->type.kind != TC_TK_FLOAT && v->type.kind != TC_TK_INT)) {
    tc_tile_fail(k, "ttg.local_alloc: the operand must be an i32 or float tensor");
    return NULL;
  }
  tc_tile_type t = v->type;
  t.kind = TC_TK_SMEM;
  return new_op1(k, TC_TO_LOCAL_ALLOC, 1, &v, t);
}

tc_tile_value *tc_tile_subview(tc_tile_kernel *k, tc_tile_value *smem, tc_tile_value *off0,
                               tc_tile_value *off1, int64_t s0, int64_t s1) {
  if (!want(k, "ttg.memdesc_subview", smem, TC_TK_SMEM, 2) ||
      !want(k, "ttg.memdesc_subview", off0, TC_TK_INT, 0) ||
      !want(k, "ttg.memdesc_subview", off1, TC_TK_INT, 0))
    return NULL;
  int64_t sh[2] = {s0, s1};
  if (!shape_ok(k, "ttg.memdesc_subview", 2, sh)) return NULL;
  if (s0 > smem->type.shape[0] || s1 > smem->type.shape[1]) {
    tc_tile_fail(k, "ttg.memdesc_subview: a %lldx%lld window of a %lldx%lld buffer",
                 (long long)s0, (long long)s1, (long long)smem->type.shape[0],
                 (long long)smem->type.shape[1]);
    return NULL;
  }
  tc_tile_value *ops[3] = {smem, off0, off1};
  return new_op1(k, TC_TO_SUBVIEW, 3, ops, shaped(smem->type, 2, sh));
}

tc_tile_value *tc_tile_local_load(tc_tile_kernel *k, tc_tile_value *view) {
  if (!want(k, "ttg.local_load", view, TC_TK_SMEM, -2)) return NULL;
  tc_tile_type t = view->type;
  t.kind = view->type.dtype == TC_I32 ? TC_TK_INT : TC_TK_FLOAT;
  return new_op1(k, TC_TO_LOCAL_LOAD, 1, &view, t);
}

/* ---- inspecting and rewriting ---- */

void tc_tile_set_insertion(tc_tile_kernel *k, tc_tile_block *b, int pos, tc_tile_op *parent) {
  k->ins_block = b;
  k->ins_pos = pos < 0 ? 0 : pos > b->n ? b->n : pos;
  k->ins_parent = parent;
}

int tc_tile_op_position(tc_tile_kernel *k, const tc_tile_op *op, tc_tile_block **block) {
  tc_tile_block *b = op->parent ? &op->parent->body : &k->body;
  if (block) *block = b;
  for (int i = 0; i < b->n; i++)
    if (b->ops[i] == op) return i;
  return -1;
}

void tc_tile_remove_op(tc_tile_kernel *k, tc_tile_op *op) {
  tc_tile_block *b;
  int pos = tc_tile_op_position(k, op, &b);
  if (pos < 0) return;
  memmove(b->ops + pos, b->ops + pos + 1, (size_t)(b->n - pos - 1) * sizeof *b->ops);
  b->n--;
  op->removed = 1;
  if (k->ins_block == b && k->ins_pos > pos) k->ins_pos--;
}

static void replace_in_block(tc_tile_block *b, const tc_tile_value *from, tc_tile_value *to) {
  for (int i = 0; i < b->n; i++) {
    tc_tile_op *op = b->ops[i];
    for (int j = 0; j < op->nin; j++)
      if (op->in[j] == from) op->in[j] = to;
    if (op->kind == TC_TO_FOR) replace_in_block(&op->body, from, to);
  }
}

void tc_tile_replace_uses(tc_tile_kernel *k, const tc_tile_value *from, tc_tile_value *to) {
  replace_in_block(&k->body, from, to);
}

static int count_in_block(const tc_tile_block *b, const tc_tile_value *v) {
  int n = 0;
  for (int i = 0; i < b->n; i++) {
    const tc_tile_op *op = b->ops[i];
    for (int j = 0; j < op->nin; j++) n += op->in[j] == v;
    if (op->kind == TC_TO_FOR) n += count_in_block(&op->body, v);
  }
  return n;
}

int tc_tile_use_count(const tc_tile_kernel *k, const tc_tile_value *v) {
  return count_in_block(&k->body, v);
}

int tc_tile_defined_in(const tc_tile_value *v, const tc_tile_op *loop) {
  const tc_tile_op *p = v->def ? v->def->parent : v->owner;
  for (; p; p = p->parent)
    if (p == loop) return 1;
  return 0;
}

int tc_tile_const_value(const tc_tile_value *v, int64_t *out) {
  if (!v || v->type.kind != TC_TK_INT || v->type.rank != 0 || !v->def) return 0;
  const tc_tile_op *op = v->def;
  if (op->kind == TC_TO_CONST) return *out = op->ival[0], 1;
  if (op->kind < TC_TO_ADD || op->kind > TC_TO_MIN) return 0;
  int64_t a, b;
  if (!tc_tile_const_value(op->in[0], &a) || !tc_tile_const_value(op->in[1], &b)) return 0;
  switch (op->kind) {
    case TC_TO_ADD: *out = a + b; break;
    case TC_TO_SUB: *out = a - b; break;
    case TC_TO_MUL: *out = a * b; break;
    case TC_TO_DIV: if (b == 0) return 0; *out = a / b; break;
    case TC_TO_REM: if (b == 0) return 0; *out = a % b; break;
    case TC_TO_MIN: *out = a < b ? a : b; break;
    default: return 0;
  }
  return 1;
}

/* ---- printing ---- */

const char *tc_tile_opkind_name(tc_tile_opkind k) {
  static const char *names[TC_TO_NUM_KINDS] = {
      [TC_TO_CONST] = "arith.constant",     [TC_TO_PROGRAM_ID] = "tt.get_program_id",
      [TC_TO_ADD] = "arith.addi",           [TC_TO_SUB] = "arith.subi",
      [TC_TO_MUL] = "arith.muli",           [TC_TO_DIV] = "arith.divsi",
      [TC_TO_REM] = "arith.remsi",          [TC_TO_MIN] = "arith.minsi",
      [TC_TO_LT] = "arith.cmpi slt,",       [TC_TO_AND] = "arith.andi",
      [TC_TO_MAKE_RANGE] = "tt.make_range", [TC_TO_SPLAT] = "tt.splat",
      [TC_TO_EXPAND_DIMS] = "tt.expand_dims", [TC_TO_BROADCAST] = "tt.broadcast",
      [TC_TO_ADDPTR] = "tt.addptr",         [TC_TO_LOAD] = "tt.load",
      [TC_TO_STORE] = "tt.store",           [TC_TO_DOT] = "tt.dot",
      [TC_TO_FOR] = "scf.for",              [TC_TO_YIELD] = "scf.yield",
      [TC_TO_LOCAL_ALLOC] = "ttg.local_alloc", [TC_TO_SUBVIEW] = "ttg.memdesc_subview",
      [TC_TO_LOCAL_LOAD] = "ttg.local_load",
  };
  return k >= 0 && k < TC_TO_NUM_KINDS && names[k] ? names[k] : "?";
}

typedef struct printer {
  tc_str *o;
  const tc_tile_kernel *k;
  int *num; /* print number per value id, -1 before its definition */
  int next;
} printer;

static void name_of(printer *P, const tc_tile_value *v) {
  if (!v) {
    tc_str_cat(P->o, "%<null>");
  } else if (v->is_arg) {
    tc_str_printf(P->o, "%%%s", v->name);
  } else if (v->def && v->def->nout > 1) {
    tc_str_printf(P->o, "%%%d#%d", P->num[v->def->out[0]->id], v->index);
  } else if (P->num[v->id] >= 0) {
    tc_str_printf(P->o, "%%%d", P->num[v->id]);
  } else {
    tc_str_printf(P->o, "%%<undefined v%d>", v->id);
  }
}

static void operands(printer *P, const tc_tile_op *op, int from, int to) {
  for (int i = from; i < to; i++) {
    if (i > from) tc_str_cat(P->o, ", ");
    name_of(P, op->in[i]);
  }
}

static void print_block(printer *P, const tc_tile_block *b, int depth);

static void print_op(printer *P, const tc_tile_op *op, int depth) {
  tc_str *o = P->o;
  tc_str_indent(o, depth);
  if (op->nout == 1) {
    P->num[op->out[0]->id] = P->next++;
    name_of(P, op->out[0]);
    tc_str_cat(o, " = ");
  } else if (op->nout > 1) {
    int base = P->next++;
    for (int i = 0; i < op->nout; i++) P->num[op->out[i]->id] = base;
    tc_str_printf(o, "%%%d:%d = ", base, op->nout);
  }
  tc_str_cat(o, tc_tile_opkind_name(op->kind));
  const tc_tile_type *rt = op->nout ? &op->out[0]->type : NULL;
  switch (op->kind) {
    case TC_TO_CONST:
      if (rt->kind == TC_TK_FLOAT)
        tc_str_printf(o, " dense<%g> : ", op->fval);
      else if (rt->rank)
        tc_str_printf(o, " dense<%lld> : ", (long long)op->ival[0]);
      else
        tc_str_printf(o, " %lld : ", (long long)op->ival[0]);
      tc_tile_print_type(o, rt);
      break;
    case TC_TO_PROGRAM_ID:
      tc_str_cat(o, " x : i32");
      break;
    case TC_TO_MAKE_RANGE:
      tc_str_printf(o, " {end = %lld : i32, start = %lld : i32} : ", (long long)op->ival[1],
                    (long long)op->ival[0]);
      tc_tile_print_type(o, rt);
      break;
    case TC_TO_SPLAT: case TC_TO_EXPAND_DIMS: case TC_TO_BROADCAST: case TC_TO_LOCAL_LOAD:
    case TC_TO_LOCAL_ALLOC:
      tc_str_cat(o, " ");
      name_of(P, op->in[0]);
      if (op->kind == TC_TO_EXPAND_DIMS) tc_str_printf(o, " {axis = %lld : i32}", (long long)op->ival[0]);
      tc_str_cat(o, op->kind == TC_TO_LOCAL_ALLOC ? " : (" : " : ");
      tc_tile_print_type(o, &op->in[0]->type);
      tc_str_cat(o, op->kind == TC_TO_LOCAL_ALLOC ? ") -> " : " -> ");
      tc_tile_print_type(o, rt);
      break;
    case TC_TO_SUBVIEW:
      tc_str_cat(o, " ");
      name_of(P, op->in[0]);
      tc_str_cat(o, "[");
      operands(P, op, 1, 3);
      tc_str_cat(o, "] : ");
      tc_tile_print_type(o, &op->in[0]->type);
      tc_str_cat(o, " -> ");
      tc_tile_print_type(o, rt);
      break;
    case TC_TO_ADDPTR:
      tc_str_cat(o, " ");
      operands(P, op, 0, 2);
      tc_str_cat(o, " : ");
      tc_tile_print_type(o, &op->in[0]->type);
      tc_str_cat(o, ", ");
      tc_tile_print_type(o, &op->in[1]->type);
      break;
    case TC_TO_LOAD: case TC_TO_STORE:
      tc_str_cat(o, " ");
      operands(P, op, 0, op->nin);
      tc_str_cat(o, " : ");
      tc_tile_print_type(o, &op->in[0]->type);
      break;
    case TC_TO_DOT:
      tc_str_cat(o, " ");
      operands(P, op, 0, 3);
      tc_str_cat(o, " : ");
      tc_tile_print_type(o, &op->in[0]->type);
      tc_str_cat(o, " * ");
      tc_tile_print_type(o, &op->in[1]->type);
      tc_str_cat(o, " -> ");
      tc_tile_print_type(o, rt);
      break;
    case TC_TO_FOR: {
      P->num[op->bargs[0]->id] = P->next++;
      tc_str_cat(o, " ");
      name_of(P, op->bargs[0]);
      tc_str_cat(o, " = ");
      name_of(P, op->in[0]);
      tc_str_cat(o, " to ");
      name_of(P, op->in[1]);
      tc_str_cat(o, " step ");
      name_of(P, op->in[2]);
      if (op->nout) {
        tc_str_cat(o, " iter_args(");
        for (int i = 0; i < op->nout; i++) {
          P->num[op->bargs[i + 1]->id] = P->next++;
          if (i) tc_str_cat(o, ", ");
          name_of(P, op->bargs[i + 1]);
          tc_str_cat(o, " = ");
          name_of(P, op->in[i + 3]);
        }
        tc_str_cat(o, ") -> (");
        for (int i = 0; i < op->nout; i++) {
          if (i) tc_str_cat(o, ", ");
          tc_tile_print_type(o, &op->out[i]->type);
        }
        tc_str_cat(o, ")");
      }
      tc_str_cat(o, " : i32 {\n");
      print_block(P, &op->body, depth + 1);
      tc_str_indent(o, depth);
      tc_str_cat(o, "}");
      break;
    }
    case TC_TO_YIELD:
      if (op->nin) tc_str_cat(o, " ");
      operands(P, op, 0, op->nin);
      if (op->nin) tc_str_cat(o, " : ");
      for (int i = 0; i < op->nin; i++) {
        if (i) tc_str_cat(o, ", ");
        tc_tile_print_type(o, &op->in[i]->type);
      }
      break;
    default: /* binary */
      tc_str_cat(o, " ");
      operands(P, op, 0, 2);
      tc_str_cat(o, " : ");
      tc_tile_print_type(o, &op->in[0]->type);
      break;
  }
  tc_str_cat(o, "\n");
}

static void print_block(printer *P, const tc_tile_block *b, int depth) {
  for (int i = 0; i < b->n; i++) print_op(P, b->ops[i], depth);
}

void tc_tile_print(tc_str *o, const tc_tile_kernel *k) {
  printer P = {o, k, tc_xcalloc((size_t)k->nvals + 1, sizeof(int)), 0};
  for (int i = 0; i < k->nvals; i++) P.num[i] = -1;
  tc_str_printf(o, "tt.func @%s(", k->name);
  for (int i = 0; i < k->nargs; i++) {
    tc_str_printf(o, "%s%%%s: ", i ? ", " : "", k->args[i]->name);
    tc_tile_print_type(o, &k->args[i]->type);
  }
  tc_str_printf(o, ") attributes {programs = %lld, threads = %d} {\n", (long long)k->num_programs,
                k->threads);
  print_block(&P, &k->body, 1);
  tc_str_cat(o, "}\n");
  free(P.num);
}

/* ---- reports ---- */

void tc_tile_add_report(tc_tile_kernel *k, const char *pass, int applied, const char *fmt, ...) {
  tc_tile_report r;
  memset(&r, 0, sizeof r);
  snprintf(r.pass, sizeof r.pass, "%s", pass);
  r.applied = applied;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r.detail, sizeof r.detail, fmt, ap);
  va_end(ap);
  TC_PUSH(k->reports, k->nreports, k->capreports, r);
}

int tc_tile_num_reports(const tc_tile_kernel *k) { return k ? k->nreports : 0; }

const tc_tile_report *tc_tile_get_report(const tc_tile_kernel *k, int i) {
  return k && i >= 0 && i < k->nreports ? &k->reports[i] : NULL;
}

const tc_tile_report *tc_tile_find_report(const tc_tile_kernel *k, const char *pass) {
  for (int i = k ? k->nreports - 1 : -1; i >= 0; i--)
    if (strcmp(k->reports[i].pass, pass) == 0) return &k->reports[i];
  return NULL;
}
