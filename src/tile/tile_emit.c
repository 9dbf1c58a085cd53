/* tile_emit.c - prints a tile-IR kernel through a dialect (tile_emit.h).
 *
 * Each value gets a representation: a C scalar (R_SCALAR), an expression
 * of element coordinates built on demand (R_SYM), a shared-memory array
 * (R_LDS: loads), a per-thread register array (R_REG: dot results and
 * float loop-carried tensors), a shared-memory window (R_SMEM:
 * local_alloc, memdesc_subview) or a loop-carried pointer tensor (R_PTRITER:
 * its initial value plus one integer advance).  Generated names start
 * with t_ (argument names never do). */
#include "tile_emit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum repr { R_NONE, R_SCALAR, R_SYM, R_LDS, R_REG, R_SMEM, R_PTRITER } repr;

typedef struct vinfo {
  repr r;
  char name[40];        /* SCALAR: C expression; LDS, REG: array; PTRITER: the advance */
  tc_dtype dtype;       /* LDS, SMEM: storage dtype */
  int64_t cols;         /* LDS, SMEM: columns of the allocation (row length) */
  char *off0, *off1;    /* SMEM: the window's offsets in the allocation (owned) */
  const tc_tile_value *init; /* PTRITER: the initial pointer tensor */
} vinfo;

typedef struct lds_decl {
  char name[40];
  tc_dtype dtype;
  int64_t count;
} lds_decl;

typedef struct emitter {
  const tc_tile_kernel *k;
  const tc_dialect *d;
  tc_str *o;
  vinfo *vi;
  int *uses;
  int nt;          /* threads */
  int counter;
  int depth;       /* indentation */
  int loop_depth;
  lds_decl *lds;
  int nlds, caplds;
  int64_t smem_bytes;
  char err[512];
} emitter;

static void fail(emitter *E, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(emitter *E, const char *fmt, ...) {
  if (E->err[0]) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(E->err, sizeof E->err, fmt, ap);
  va_end(ap);
}

static void line(emitter *E, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(emitter *E, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tc_str_vline(E->o, E->depth, fmt, ap);
  va_end(ap);
}

static vinfo *V(emitter *E, const tc_tile_value *v) { return &E->vi[v->id]; }

static size_t dsize(tc_dtype t) { return t == TC_F16 || t == TC_BF16 ? 2 : t == TC_I8 ? 1 : 4; }

const tc_dialect *tc_tile_dialect(tc_target target) { return tc_dialect_for(target); }

/* ---- element expressions ---- */

/* The base pointer argument of a pointer value. */
static const tc_tile_value *ptr_base(emitter *E, const tc_tile_value *v) {
  for (int guard = 0; v && guard < 100000; guard++) {
    if (v->is_arg) return v;
    vinfo *x = V(E, v);
    if (x->r == R_PTRITER) {
      v = x->init;
    } else if (v->def && (v->def->kind == TC_TO_SPLAT || v->def->kind == TC_TO_BROADCAST ||
                          v->def->kind == TC_TO_EXPAND_DIMS || v->def->kind == TC_TO_ADDPTR)) {
      v = v->def->in[0];
    } else {
      break;
    }
  }
  fail(E, "a pointer that does not come from a pointer argument");
  return NULL;
}

static char *elem_str(emitter *E, const tc_tile_value *v, const char *c0, const char *c1,
                      const char *own);

/* Appends the element of v at coordinates (c0, c1) (rank 1: c0 only); own
 * is the index of the element in the thread's register arrays where the
 * coordinates are an owned element, else NULL.  Pointer values give their
 * offset from the base argument (ptr_base). */
static void elem(emitter *E, const tc_tile_value *v, const char *c0, const char *c1,
                 const char *own, tc_str *o) {
  if (E->err[0]) return;
  vinfo *x = V(E, v);
  const tc_tile_type *t = &v->type;
  switch (x->r) {
    case R_SCALAR:
      tc_str_cat(o, x->name);
      return;
    case R_LDS: {
      char idx[160];
      if (t->rank == 2)
        snprintf(idx, sizeof idx, "(%s) * %lld + (%s)", c0, (long long)t->shape[1], c1);
      else
        snprintf(idx, sizeof idx, "%s", c0);
      E->d->load(o, x->dtype, TC_MEM_SHARED, x->name, idx);
      return;
    }
    case R_REG:
      if (!own) {
        fail(E, "a register tensor (a tt.dot result) is read at arbitrary coordinates; only "
                "tt.store and tt.dot's accumulator may read it");
        return;
      }
      tc_str_printf(o, "%s[%s]", x->name, own);
      return;
    case R_PTRITER:
      tc_str_cat(o, "(");
      elem(E, x->init, c0, c1, own, o);
      tc_str_printf(o, " + %s)", x->name);
      return;
    case R_SMEM:
      fail(E, "a shared-memory descriptor used as a tensor (read it with ttg.local_load)");
      return;
    case R_NONE:
      fail(E, "value v%d is used before it is defined", v->id);
      return;
    case R_SYM:
      break;
  }
  const tc_tile_op *op = v->def;
  switch (op->kind) {
    case TC_TO_CONST:
      if (t->kind == TC_TK_FLOAT)
        tc_str_printf(o, "((float)%.17g)", op->fval);
      else
        tc_str_printf(o, op->ival[0] < 0 ? "(%lld)" : "%lld", (long long)op->ival[0]);
      return;
    case TC_TO_ADD: case TC_TO_SUB: case TC_TO_MUL: case TC_TO_DIV: case TC_TO_REM:
    case TC_TO_LT: case TC_TO_AND: {
      static const char *sym[] = {[TC_TO_ADD] = "+", [TC_TO_SUB] = "-", [TC_TO_MUL] = "*",
                                  [TC_TO_DIV] = "/", [TC_TO_REM] = "%", [TC_TO_LT] = "<",
                                  [TC_TO_AND] = "&&"};
      tc_str_cat(o, "(");
      elem(E, op->in[0], c0, c1, own, o);
      tc_str_printf(o, " %s ", sym[op->kind]);
      elem(E, op->in[1], c0, c1, own, o);
      tc_str_cat(o, ")");
      return;
    }
    case TC_TO_MIN:
      tc_str_cat(o, "tc_min(");
      elem(E, op->in[0], c0, c1, own, o);
      tc_str_cat(o, ", ");
      elem(E, op->in[1], c0, c1, own, o);
      tc_str_cat(o, ")");
      return;
    case TC_TO_MAKE_RANGE:
      if (op->ival[0])
        tc_str_printf(o, "(%lld + %s)", (long long)op->ival[0], c0);
      else
        tc_str_cat(o, c0);
      return;
    case TC_TO_SPLAT:
      elem(E, op->in[0], "0", "0", NULL, o);
      return;
    case TC_TO_EXPAND_DIMS:
      elem(E, op->in[0], op->ival[0] == 0 ? c1 : c0, NULL, NULL, o);
      return;
    case TC_TO_BROADCAST: {
      const tc_tile_type *it = &op->in[0]->type;
      /* an owned element of the result is owned by the operand only when
       * nothing is broadcast */
      int same = it->shape[0] == t->shape[0] && it->shape[1] == t->shape[1];
      elem(E, op->in[0], it->shape[0] == 1 ? "0" : c0, it->shape[1] == 1 ? "0" : c1,
           same ? own : NULL, o);
      return;
    }
    case TC_TO_ADDPTR: {
      char *p = elem_str(E, op->in[0], c0, c1, own);
      if (strcmp(p, "0") == 0) { /* the base argument itself */
        elem(E, op->in[1], c0, c1, own, o);
      } else {
        tc_str_printf(o, "(%s + ", p);
        elem(E, op->in[1], c0, c1, own, o);
        tc_str_cat(o, ")");
      }
      free(p);
      return;
    }
    case TC_TO_LOCAL_LOAD: {
      vinfo *s = V(E, op->in[0]);
      if (s->r != R_SMEM) {
        fail(E, "ttg.local_load of something that is not in shared memory");
        return;
      }
      char idx[400];
      if (t->rank == 2)
        snprintf(idx, sizeof idx, "((%s) + %s) * %lld + ((%s) + %s)", c0, s->off0,
                 (long long)s->cols, c1, s->off1);
      else
        snprintf(idx, sizeof idx, "(%s) + %s", c0, s->off1);
      E->d->load(o, s->dtype, TC_MEM_SHARED, s->name, idx);
      return;
    }
    default:
      fail(E, "%s has no element expression", tc_tile_opkind_name(op->kind));
      return;
  }
}

static char *elem_str(emitter *E, const tc_tile_value *v, const char *c0, const char *c1,
                      const char *own) {
  tc_str s;
  tc_str_init(&s);
  elem(E, v, c0, c1, own, &s);
  tc_str_cat(&s, "");
  return tc_str_take(&s);
}

/* Whether every element of v is the same (built from scalars by splat,
 * broadcast, expand_dims and arithmetic). */
static int uniform(emitter *E, const tc_tile_value *v) {
  vinfo *x = V(E, v);
  if (x->r == R_SCALAR) return 1;
  if (x->r != R_SYM) return 0;
  const tc_tile_op *op = v->def;
  switch (op->kind) {
    case TC_TO_CONST: case TC_TO_SPLAT: return 1;
    case TC_TO_EXPAND_DIMS: case TC_TO_BROADCAST: return uniform(E, op->in[0]);
    case TC_TO_ADD: case TC_TO_SUB: case TC_TO_MUL: case TC_TO_DIV: case TC_TO_REM:
    case TC_TO_MIN: case TC_TO_LT: case TC_TO_AND:
      return uniform(E, op->in[0]) && uniform(E, op->in[1]);
    default: return 0;
  }
}

/* ---- element loops ---- */

static void coord_names(const tc_tile_type *t, const char **c0, const char **c1) {
  *c0 = t->rank == 2 ? "t_r" : "t_e";
  *c1 = t->rank == 2 ? "t_c" : NULL;
}

static int64_t per_thread(emitter *E, const tc_tile_type *t) {
  return (tc_tile_type_elems(t) + E->nt - 1) / E->nt;
}

/* Opens the loop over the elements of t that this thread owns; the body
 * sees t_i (register index), t_e (element) and t_r, t_c (rank 2). */
static void open_owned(emitter *E, const tc_tile_type *t) {
  int64_t n = tc_tile_type_elems(t);
  line(E, "for (int t_i = 0; t_i < %lld; t_i++) {", (long long)per_thread(E, t));
  E->depth++;
  line(E, "const int t_e = tidx + t_i * %d;", E->nt);
  line(E, "if (t_e < %lld) {", (long long)n);
  E->depth++;
  if (t->rank == 2)
    line(E, "const int t_r = t_e / %lld, t_c = t_e %% %lld;", (long long)t->shape[1],
         (long long)t->shape[1]);
}

static void close_owned(emitter *E) {
  E->depth--;
  line(E, "}");
  E->depth--;
  line(E, "}");
}

/* Opens the cooperative loop over all elements of t (t_e, t_r, t_c). */
static void open_all(emitter *E, const tc_tile_type *t) {
  line(E, "for (int t_e = tidx; t_e < %lld; t_e += %d) {", (long long)tc_tile_type_elems(t), E->nt);
  E->depth++;
  if (t->rank == 2)
    line(E, "const int t_r = t_e / %lld, t_c = t_e %% %lld;", (long long)t->shape[1],
         (long long)t->shape[1]);
}

static void close_all(emitter *E) {
  E->depth--;
  line(E, "}");
}

static void new_lds(emitter *E, vinfo *x, tc_dtype dt, const tc_tile_type *t) {
  x->dtype = dt;
  x->cols = t->rank == 2 ? t->shape[1] : t->shape[0];
  snprintf(x->name, sizeof x->name, "t_l%d", E->counter++);
  lds_decl dcl;
  memset(&dcl, 0, sizeof dcl);
  snprintf(dcl.name, sizeof dcl.name, "%s", x->name);
  dcl.dtype = dt;
  dcl.count = tc_tile_type_elems(t);
  TC_PUSH(E->lds, E->nlds, E->caplds, dcl);
  E->smem_bytes += dcl.count * (int64_t)dsize(dt);
}

/* Fills a new shared array with the elements of v (a load: from global
 * memory under its mask). */
static void fill_lds(emitter *E, const tc_tile_value *v, const tc_tile_op *load, vinfo *x,
                     tc_dtype dt) {
  const tc_tile_type *t = &v->type;
  const char *c0, *c1;
  coord_names(t, &c0, &c1);
  new_lds(E, x, dt, t);
  if (E->loop_depth) line(E, "%s", E->d->barrier);
  line(E, "/* %s into shared memory: %lld elements */", load ? "tt.load" : "copy",
       (long long)tc_tile_type_elems(t));
  open_all(E, t);
  tc_str val;
  tc_str_init(&val);
  if (load) {
    const tc_tile_value *base = ptr_base(E, load->in[0]);
    char *off = elem_str(E, load->in[0], c0, c1, NULL);
    tc_str g;
    tc_str_init(&g);
    if (base) E->d->load(&g, load->in[0]->type.dtype, TC_MEM_GLOBAL, base->name, off);
    if (load->nin >= 2) {
      char *m = elem_str(E, load->in[1], c0, c1, NULL);
      char *oth = load->nin >= 3 ? elem_str(E, load->in[2], c0, c1, NULL) : NULL;
      tc_str_printf(&val, "(%s) ? %s : %s", m, tc_str_cstr(&g), oth ? oth : "0");
      free(m);
      free(oth);
    } else {
      tc_str_cat(&val, tc_str_cstr(&g));
    }
    tc_str_free(&g);
    free(off);
  } else {
    elem(E, v, c0, c1, NULL, &val);
  }
  tc_str st;
  tc_str_init(&st);
  E->d->store(&st, dt, TC_MEM_SHARED, x->name, "t_e", tc_str_cstr(&val));
  line(E, "%s", tc_str_cstr(&st));
  tc_str_free(&st);
  tc_str_free(&val);
  close_all(E);
  line(E, "%s", E->d->barrier);
  x->r = R_LDS;
}

/* ---- ops ---- */

static void emit_block(emitter *E, const tc_tile_block *b);

static void new_reg(emitter *E, vinfo *x, const tc_tile_type *t) {
  snprintf(x->name, sizeof x->name, "t_r%d", E->counter++);
  x->r = R_REG;
  line(E, "float %s[%lld] = {0};", x->name, (long long)per_thread(E, t));
}

/* Sets the register array x (of type t) from the elements of v. */
static void fill_reg(emitter *E, vinfo *x, const tc_tile_type *t, const tc_tile_value *v) {
  vinfo *y = V(E, v);
  if (y == x) return;
  if (y->r == R_REG) {
    line(E, "for (int t_i = 0; t_i < %lld; t_i++) %s[t_i] = %s[t_i];",
         (long long)per_thread(E, t), x->name, y->name);
    return;
  }
  const char *c0, *c1;
  coord_names(t, &c0, &c1);
  open_owned(E, t);
  char *e = elem_str(E, v, c0, c1, "t_i");
  line(E, "%s[t_i] = %s;", x->name, e);
  free(e);
  close_owned(E);
}

static void emit_for(emitter *E, const tc_tile_op *op) {
  int n = op->nout;
  tc_tile_op *yield = op->body.n ? op->body.ops[op->body.n - 1] : NULL;
  if (!yield || yield->kind != TC_TO_YIELD || yield->nin != n) {
    fail(E, "scf.for without its scf.yield");
    return;
  }
  line(E, "/* scf.for */");
  for (int i = 0; i < n; i++) {
    const tc_tile_value *init = op->in[i + 3], *ba = op->bargs[i + 1];
    vinfo *x = V(E, ba);
    const tc_tile_type *t = &ba->type;
    if (t->kind == TC_TK_PTR) {
      x->r = R_PTRITER;
      x->init = init;
      snprintf(x->name, sizeof x->name, "t_adv%d", E->counter++);
      line(E, "int %s = 0;", x->name);
    } else if (t->kind == TC_TK_FLOAT && t->rank > 0) {
      new_reg(E, x, t);
      fill_reg(E, x, t, init);
    } else if (t->rank == 0 && (t->kind == TC_TK_INT || t->kind == TC_TK_BOOL)) {
      x->r = R_SCALAR;
      snprintf(x->name, sizeof x->name, "t_s%d", E->counter++);
      char *e = elem_str(E, init, "0", "0", NULL);
      line(E, "int %s = %s;", x->name, e);
      free(e);
    } else {
      fail(E, "scf.for: iteration argument %d: only pointer tensors, float tensors and i32 "
              "scalars can be carried", i);
      return;
    }
  }
  vinfo *iv = V(E, op->bargs[0]);
  iv->r = R_SCALAR;
  snprintf(iv->name, sizeof iv->name, "t_s%d", E->counter++);
  char *lb = elem_str(E, op->in[0], "0", "0", NULL), *ub = elem_str(E, op->in[1], "0", "0", NULL),
       *st = elem_str(E, op->in[2], "0", "0", NULL);
  line(E, "for (int %s = %s; %s < %s; %s += %s) {", iv->name, lb, iv->name, ub, iv->name, st);
  free(lb), free(ub), free(st);
  E->depth++;
  E->loop_depth++;
  emit_block(E, &op->body);
  /* scf.yield: scalars through temporaries (parallel assignment) */
  char (*tmp)[40] = tc_xcalloc((size_t)n + 1, sizeof *tmp);
  for (int i = 0; i < n; i++) {
    const tc_tile_value *y = yield->in[i], *ba = op->bargs[i + 1];
    if (ba->type.rank == 0 && y != ba) {
      snprintf(tmp[i], sizeof tmp[i], "t_y%d", E->counter++);
      char *e = elem_str(E, y, "0", "0", NULL);
      line(E, "const int %s = %s;", tmp[i], e);
      free(e);
    }
  }
  for (int i = 0; i < n && !E->err[0]; i++) {
    const tc_tile_value *y = yield->in[i], *ba = op->bargs[i + 1];
    vinfo *x = V(E, ba);
    if (y == ba) continue;
    if (ba->type.rank == 0) {
      line(E, "%s = %s;", x->name, tmp[i]);
    } else if (x->r == R_PTRITER) {
      const tc_tile_op *d = y->def;
      vinfo *yv = V(E, y);
      if (yv->r == R_PTRITER && yv->init == ba) { /* an inner loop advanced it further */
        line(E, "%s += %s;", x->name, yv->name);
        continue;
      }
      if (!d || d->kind != TC_TO_ADDPTR || d->in[0] != ba || !uniform(E, d->in[1])) {
        fail(E, "scf.for: loop-carried pointer %d must advance by a uniform offset "
                "(tt.addptr of itself and a splat)", i);
        break;
      }
      char *e = elem_str(E, d->in[1], "0", "0", NULL);
      line(E, "%s += %s;", x->name, e);
      free(e);
    } else {
      for (int j = 0; j < n; j++)
        if (y == op->bargs[j + 1]) fail(E, "scf.yield: an iteration argument yields another one");
      fill_reg(E, x, &ba->type, y);
    }
  }
  free(tmp);
  E->loop_depth--;
  E->depth--;
  line(E, "}");
  for (int i = 0; i < n; i++) {
    vinfo *r = V(E, op->out[i]);
    *r = *V(E, op->bargs[i + 1]);
  }
}

static void emit_op(emitter *E, const tc_tile_op *op) {
  if (E->err[0]) return;
  tc_tile_value *res = op->nout == 1 ? op->out[0] : NULL;
  vinfo *x = res ? V(E, res) : NULL;
  switch (op->kind) {
    case TC_TO_CONST:
      if (res->type.rank == 0) {
        x->r = R_SCALAR;
        snprintf(x->name, sizeof x->name, op->ival[0] < 0 ? "(%lld)" : "%lld",
                 (long long)op->ival[0]);
      } else {
        x->r = R_SYM;
      }
      return;
    case TC_TO_PROGRAM_ID:
      x->r = R_SCALAR;
      snprintf(x->name, sizeof x->name, "bidx");
      return;
    case TC_TO_ADD: case TC_TO_SUB: case TC_TO_MUL: case TC_TO_DIV: case TC_TO_REM:
    case TC_TO_MIN: case TC_TO_LT: case TC_TO_AND:
      if (res->type.rank == 0) {
        x->r = R_SYM;
        char *e = elem_str(E, res, "0", "0", NULL);
        x->r = R_SCALAR;
        snprintf(x->name, sizeof x->name, "t_s%d", E->counter++);
        line(E, "const int %s = %s;", x->name, e);
        free(e);
      } else {
        x->r = R_SYM;
      }
      return;
    case TC_TO_MAKE_RANGE: case TC_TO_SPLAT: case TC_TO_EXPAND_DIMS: case TC_TO_BROADCAST:
    case TC_TO_ADDPTR: case TC_TO_LOCAL_LOAD:
      x->r = R_SYM;
      return;
    case TC_TO_LOAD:
      fill_lds(E, res, op, x, op->in[0]->type.dtype);
      return;
    case TC_TO_LOCAL_ALLOC: {
      const tc_tile_value *src = op->in[0];
      vinfo *s = V(E, src);
      if (s->r == R_LDS && E->uses[src->id] == 1) {
        *x = *s; /* the load's array is the allocation */
      } else {
        fill_lds(E, src, NULL, x, src->type.dtype == TC_F16 ? TC_F16 : src->type.kind == TC_TK_INT
                                                                          ? TC_I32 : TC_F32);
      }
      x->r = R_SMEM;
      x->cols = src->type.rank == 2 ? src->type.shape[1] : src->type.shape[0];
      x->off0 = tc_xstrdup("0");
      x->off1 = tc_xstrdup("0");
      return;
    }
    case TC_TO_SUBVIEW: {
      vinfo *s = V(E, op->in[0]);
      if (s->r != R_SMEM) {
        fail(E, "ttg.memdesc_subview of something that is not in shared memory");
        return;
      }
      /* offsets add up from the allocation's own base, however deep the
       * views nest (the original aggregate-load pass's bug took them from a
       * slice) */
      char *a = elem_str(E, op->in[1], "0", "0", NULL), *b = elem_str(E, op->in[2], "0", "0", NULL);
      *x = *s;
      tc_str t;
      tc_str_init(&t);
      tc_str_printf(&t, strcmp(s->off0, "0") ? "(%s + %s)" : "%.0s%s", s->off0, a);
      x->off0 = tc_str_take(&t);
      tc_str_printf(&t, strcmp(s->off1, "0") ? "(%s + %s)" : "%.0s%s", s->off1, b);
      x->off1 = tc_str_take(&t);
      tc_str_free(&t);
      free(a), free(b);
      return;
    }
    case TC_TO_STORE: {
      const tc_tile_type *t = &op->in[0]->type;
      const char *c0, *c1;
      coord_names(t, &c0, &c1);
      const tc_tile_value *base = ptr_base(E, op->in[0]);
      if (!base) return;
      line(E, "/* tt.store */");
      open_owned(E, t);
      char *off = elem_str(E, op->in[0], c0, c1, "t_i");
      char *val = elem_str(E, op->in[1], c0, c1, "t_i");
      tc_str st;
      tc_str_init(&st);
      E->d->store(&st, op->in[0]->type.dtype, TC_MEM_GLOBAL, base->name, off, val);
      if (op->nin >= 3) {
        char *m = elem_str(E, op->in[2], c0, c1, "t_i");
        line(E, "if (%s) %s", m, tc_str_cstr(&st));
        free(m);
      } else {
        line(E, "%s", tc_str_cstr(&st));
      }
      tc_str_free(&st);
      free(off);
      free(val);
      close_owned(E);
      return;
    }
    case TC_TO_DOT: {
      const tc_tile_type *t = &res->type;
      int64_t kk = op->in[0]->type.shape[1];
      new_reg(E, x, t);
      line(E, "/* tt.dot: %lldx%lld += %lldx%lld * %lldx%lld */", (long long)t->shape[0],
           (long long)t->shape[1], (long long)t->shape[0], (long long)kk, (long long)kk,
           (long long)t->shape[1]);
      open_owned(E, t);
      char *acc = elem_str(E, op->in[2], "t_r", "t_c", "t_i");
      char *a = elem_str(E, op->in[0], "t_r", "t_k", NULL);
      char *b = elem_str(E, op->in[1], "t_k", "t_c", NULL);
      line(E, "float t_acc = %s;", acc);
      line(E, "for (int t_k = 0; t_k < %lld; t_k++) t_acc += %s * %s;", (long long)kk, a, b);
      line(E, "%s[t_i] = t_acc;", x->name);
      free(acc), free(a), free(b);
      close_owned(E);
      return;
    }
    case TC_TO_FOR:
      emit_for(E, op);
      return;
    case TC_TO_YIELD:
      return; /* emit_for handles it */
    default:
      fail(E, "cannot emit %s", tc_tile_opkind_name(op->kind));
      return;
  }
}

static void emit_block(emitter *E, const tc_tile_block *b) {
  for (int i = 0; i < b->n && !E->err[0]; i++) emit_op(E, b->ops[i]);
}

static void count_uses(const tc_tile_block *b, int *uses) {
  for (int i = 0; i < b->n; i++) {
    const tc_tile_op *op = b->ops[i];
    for (int j = 0; j < op->nin; j++)
      if (op->in[j]) uses[op->in[j]->id]++;
    if (op->kind == TC_TO_FOR) count_uses(&op->body, uses);
  }
}

tc_status tc_tile_emit(const tc_tile_kernel *k, const tc_dialect *d, tc_tile_emitted *out,
                       tc_str *err) {
  memset(out, 0, sizeof *out);
  if (!k || !d) {
    tc_err_set(err, "tc_tile_emit: no kernel or no dialect");
    return TC_ERR_ARGUMENT;
  }
  if (k->err[0]) {
    tc_err_set(err, "the tile kernel has a builder error: %s", k->err);
    return TC_ERR_ARGUMENT;
  }
  emitter E;
  memset(&E, 0, sizeof E);
  E.k = k, E.d = d, E.nt = k->threads;
  E.vi = tc_xcalloc((size_t)k->nvals + 1, sizeof *E.vi);
  E.uses = tc_xcalloc((size_t)k->nvals + 1, sizeof *E.uses);
  count_uses(&k->body, E.uses);
  tc_str body;
  tc_str_init(&body);
  E.o = &body;
  E.depth = 1;

  /* parameters */
  int nint = 0;
  for (int i = 0; i < k->nargs; i++) {
    const tc_tile_value *a = k->args[i];
    vinfo *x = V(&E, a);
    x->r = R_SCALAR;
    if (a->type.kind == TC_TK_PTR) {
      snprintf(x->name, sizeof x->name, "0");
      if (out->nparams >= TC_TILE_MAX_PARAMS - 1) {
        fail(&E, "more than %d arguments", TC_TILE_MAX_PARAMS - 1);
        break;
      }
      tc_tile_param *p = &out->params[out->nparams++];
      snprintf(p->name, sizeof p->name, "%s", a->name);
      p->is_ptr = 1, p->dtype = a->type.dtype, p->is_output = a->is_output;
    } else {
      snprintf(x->name, sizeof x->name, "%s", a->name);
      if (nint >= TC_TILE_MAX_PARAMS) {
        fail(&E, "more than %d i32 arguments", TC_TILE_MAX_PARAMS);
        break;
      }
      snprintf(out->int_args[nint], sizeof out->int_args[nint], "%s", a->name);
      line(&E, "const int %s = tc_args[%d];", a->name, nint++);
    }
  }
  if (nint) {
    tc_tile_param *p = &out->params[out->nparams++];
    snprintf(p->name, sizeof p->name, "tc_args");
    p->is_ptr = 0, p->dtype = TC_I32;
  }
  out->nint_args = nint;
  emit_block(&E, &k->body);

  tc_status st = TC_OK;
  if (E.err[0]) {
    tc_err_set(err, "%s", E.err);
    st = TC_ERR_UNSUPPORTED;
  } else {
    tc_str src;
    tc_str_init(&src);
    tc_str_printf(&src, "/* generated by tilec %s for %s: tile-IR kernel %s */\n", TILEC_VERSION,
                  d->name, k->name);
    tc_str_cat(&src, "#ifndef TC_PRELUDE\n#define TC_PRELUDE\n");
    tc_str_cat(&src, d->prelude);
    tc_str_cat(&src, "#endif\n\n");
    d->kernel_begin(&src, k->name, k->threads);
    for (int i = 0; i < out->nparams; i++)
      d->buffer_param(&src, out->params[i].dtype, out->params[i].name, out->params[i].is_output,
                      i == 0);
    tc_str_cat(&src, ") {\n");
    tc_str_cat(&src, d->index_defs);
    for (int i = 0; i < E.nlds; i++) d->shared_array(&src, E.lds[i].dtype, E.lds[i].name, E.lds[i].count, 1);
    tc_str_cat(&src, tc_str_cstr(&body));
    tc_str_cat(&src, "}\n");
    out->source = tc_str_take(&src);
    snprintf(out->name, sizeof out->name, "%s", k->name);
    out->grid[0] = (size_t)k->num_programs, out->grid[1] = out->grid[2] = 1;
    out->block[0] = (size_t)k->threads, out->block[1] = out->block[2] = 1;
    out->smem_bytes = E.smem_bytes;
  }
  /* the SMEM offsets are owned by every vinfo that copied them: free
   * each string once */
  for (int i = 0; i < k->nvals; i++) {
    vinfo *x = &E.vi[i];
    if (x->r != R_SMEM) continue;
    int first0 = 1, first1 = 1;
    for (int j = 0; j < i; j++) {
      if (E.vi[j].r != R_SMEM) continue;
      if (E.vi[j].off0 == x->off0) first0 = 0;
      if (E.vi[j].off1 == x->off1) first1 = 0;
    }
    if (first0) free(x->off0);
    if (first1) free(x->off1);
  }
  free(E.vi);
  free(E.uses);
  free(E.lds);
  tc_str_free(&body);
  return st;
}

void tc_tile_emitted_free(tc_tile_emitted *e) {
  if (!e) return;
  free(e->source);
  e->source = NULL;
}
