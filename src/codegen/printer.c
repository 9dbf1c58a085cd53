/* printer.c - the one printer from kernel IR to source text; the dialect
 * supplies every target-specific piece. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dialect.h"
#include "../lower/tmem.h"
#include "../lower/ldst.h"
#include "../target/target.h"

const char *tc_storage_type(tc_dtype t) {
  switch (t) {
    case TC_F32: return "float";
    case TC_F16: case TC_BF16: return "unsigned short";
    case TC_I32: return "int";
    case TC_I8: return "signed char";
  }
  return "float";
}

static bool is_float(tc_dtype t) { return t == TC_F32 || t == TC_F16 || t == TC_BF16; }

static void expr(tc_str *o, const tc_kir *k, const tc_expr *e) { tc_e_print_c(o, k->pool, e); }

/* Appends the load of input i of statement s as a compute-type value. */
static void load_in(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *s, int i) {
  tc_str idx;
  tc_str_init(&idx);
  expr(&idx, k, s->stmt.in_index[i]);
  const tc_tensor *x = s->stmt.op->in[i];
  /* a read through a coordinate-transform view: 0 where it is not valid
   * (padding), and then no load at all */
  const tc_expr *ok = s->stmt.in_valid[i];
  if (ok) {
    tc_str_cat(o, "((");
    expr(o, k, ok);
    tc_str_cat(o, ") ? ");
  }
  d->load(o, x->dtype, x->mem, x->name, tc_str_cstr(&idx));
  if (ok) tc_str_printf(o, " : %s)", is_float(x->dtype) ? "0.0f" : "0");
  tc_str_free(&idx);
}

/* A compile-time constant of a float (f32) or integer compute type: an
 * infinity through its bits, other floats in full precision. */
static void literal(tc_str *o, const tc_dialect *d, double v, bool fl) {
  if (fl && isinf(v)) tc_str_printf(o, "%s(0x%sf800000u)", d->bits_f32 ? d->bits_f32 : "", v < 0 ? "f" : "7");
  else if (fl) tc_str_printf(o, "%.9ef", v);
  else if (v == -2147483648.0) tc_str_cat(o, "(-2147483647 - 1)");
  else tc_str_printf(o, "%d", (int)v);
}

/* The identity of reduction op: 0, or -inf / INT_MIN for MAX, +inf /
 * INT_MAX for MIN. */
static void red_identity(tc_str *o, const tc_dialect *d, tc_reduce_op op, bool fl) {
  double v = op == TC_REDUCE_MAX ? (fl ? -INFINITY : -2147483648.0)
             : op == TC_REDUCE_MIN ? (fl ? INFINITY : 2147483647.0) : 0;
  literal(o, d, v, fl);
}

/* acc combined with x by reduction op, with MAX / MIN's semantics. */
static void red_combine(tc_str *o, const tc_dialect *d, tc_reduce_op op, bool fl, const char *acc,
                        const char *x) {
  switch (op) {
    case TC_REDUCE_SUM: tc_str_printf(o, fl ? "(%s + %s)" : "tc_iadd(%s, %s)", acc, x); break;
    case TC_REDUCE_MAX: tc_str_printf(o, "%s(%s, %s)", fl ? d->fmax_ : "tc_max", acc, x); break;
    case TC_REDUCE_MIN: tc_str_printf(o, "%s(%s, %s)", fl ? d->fmin_ : "tc_min", acc, x); break;
  }
}

/* The value computed by a statement, in the output's compute type, with
 * the semantics of the ops stated in tilec.h: min / max / relu of floats
 * are the math library's fmin / fmax (a NaN operand is ignored), integer
 * ops and float-to-integer casts the helpers of TC_PRELUDE_INT. */
static void value(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *s) {
  tc_op *op = s->stmt.op;
  bool fl = is_float(op->out->dtype);
  tc_str a, b;
  tc_str_init(&a), tc_str_init(&b);
  tc_str c3;
  tc_str_init(&c3);
  load_in(&a, d, k, s, 0);
  if (op->nin > 1) load_in(&b, d, k, s, 1);
  else if (op->scalar_in) /* a kernel parameter (a size variable, int, as a float beside floats) */
    tc_str_printf(&b, fl && !is_float(op->scalar_in->dtype) ? "((float)%s)" : "%s", op->scalar_in->name);
  else if (op->has_scalar) literal(&b, d, op->scalar, fl);
  if (op->nin > 2) load_in(&c3, d, k, s, 2);
  const char *x = tc_str_cstr(&a), *y = tc_str_cstr(&b), *z = tc_str_cstr(&c3);
  if (op->scalar_left) x = tc_str_cstr(&b), y = tc_str_cstr(&a);
  switch (op->kind) {
    case TC_OP_SET: case TC_OP_PERMUTE: case TC_OP_BROADCAST: tc_str_cat(o, x); break;
    case TC_OP_COMPARE: {
      static const char *ops[] = {"<", "<=", ">", ">=", "==", "!="};
      tc_str_printf(o, "((%s) %s (%s) ? 1 : 0)", x, ops[op->sub], y);
      break;
    }
    case TC_OP_WHERE: tc_str_printf(o, "((%s) != 0 ? (%s) : (%s))", x, y, z); break;
    case TC_OP_WELFORD_PART: {
      tc_str idx;
      tc_str_init(&idx);
      expr(&idx, k, s->stmt.in_index[0]);
      tc_print_welford_part(o, d, op->in[0], op->sub == TC_WELFORD_VAR, tc_str_cstr(&idx));
      tc_str_free(&idx);
      break;
    }
    case TC_OP_GATHER: {
      /* in[0] at its index plus the position in[1] holds (y) times the
       * gathered axis's stride; 0 where that position is outside */
      const tc_tensor *in = op->in[0];
      tc_str base, at, e, stride;
      tc_str_init(&base), tc_str_init(&at), tc_str_init(&e), tc_str_init(&stride);
      expr(&base, k, s->stmt.in_index[0]);
      expr(&e, k, s->stmt.gather_extent);
      expr(&stride, k, s->stmt.gather_stride);
      tc_str_printf(&at, "%s + (%s) * %s", tc_str_cstr(&base), y, tc_str_cstr(&stride));
      /* (a number prints as one: "< 1000u"; an extent over a size
       * variable as the parameter: "< (unsigned)(T0)") */
      if (s->stmt.gather_extent->op == TC_E_CONST)
        tc_str_printf(o, "((unsigned)(%s) < %su ? ", y, tc_str_cstr(&e));
      else
        tc_str_printf(o, "((unsigned)(%s) < (unsigned)(%s) ? ", y, tc_str_cstr(&e));
      d->load(o, in->dtype, in->mem, in->name, tc_str_cstr(&at));
      tc_str_printf(o, " : %s)", fl ? "0.0f" : "0");
      tc_str_free(&base), tc_str_free(&at), tc_str_free(&e), tc_str_free(&stride);
      break;
    }
    case TC_OP_REDUCE: case TC_OP_MATMUL: {
      tc_str acc, idx, prod;
      tc_str_init(&acc), tc_str_init(&idx), tc_str_init(&prod);
      expr(&idx, k, s->stmt.out_index);
      d->load(&acc, op->out->dtype, op->out->mem, op->out->name, tc_str_cstr(&idx));
      /* a matmul accumulates the f32 product of its operands' elements */
      if (op->kind == TC_OP_MATMUL) tc_str_printf(&prod, "(%s) * (%s)", x, y);
      red_combine(o, d, (tc_reduce_op)op->sub, fl, tc_str_cstr(&acc),
                  op->kind == TC_OP_MATMUL ? tc_str_cstr(&prod) : x);
      tc_str_free(&prod);
      tc_str_free(&acc), tc_str_free(&idx);
      break;
    }
    case TC_OP_CAST: {
      bool from_fl = is_float(op->in[0]->dtype);
      if (fl && !from_fl) tc_str_printf(o, "(float)(%s)", x);
      else if (!fl && from_fl) tc_str_printf(o, "%s(%s)", op->out->dtype == TC_I8 ? "tc_sat_i8" : "tc_sat_i32", x);
      else tc_str_cat(o, x); /* integer to integer wraps in the store */
      break;
    }
    case TC_OP_UNARY:
      switch ((tc_unary_op)op->sub) {
        case TC_NEG:
          if (fl) tc_str_printf(o, "(-(%s))", x);
          else tc_str_printf(o, "tc_ineg(%s)", x);
          break;
        case TC_ABS:
          if (fl) tc_str_printf(o, "%s(%s)", d->fabs_, x);
          else tc_str_printf(o, "tc_iabs(%s)", x);
          break;
        case TC_RELU:
          if (fl) tc_str_printf(o, "%s(%s, 0.0f)", d->fmax_, x);
          else tc_str_printf(o, "tc_max(%s, 0)", x);
          break;
        case TC_EXP: tc_str_printf(o, "%s(%s)", d->fexp, x); break;
        case TC_LOG: tc_str_printf(o, "%s(%s)", d->flog, x); break;
        case TC_SQRT: tc_str_printf(o, "%s(%s)", d->fsqrt, x); break;
        case TC_TANH: tc_str_printf(o, "%s(%s)", d->ftanh, x); break;
        case TC_SIGMOID: tc_str_printf(o, "(1.0f / (1.0f + %s(-(%s))))", d->fexp, x); break;
        case TC_RECIPROCAL: tc_str_printf(o, "(1.0f / (%s))", x); break;
        case TC_GELU: /* (x is a load or a register: evaluating it four times is cheap) */
          tc_str_printf(o, "(0.5f * (%s) * (1.0f + %s(0.7978845608f * ((%s) + 0.044715f * (%s) * (%s) * (%s)))))",
                        x, d->ftanh, x, x, x, x);
          break;
        case TC_SILU: tc_str_printf(o, "((%s) / (1.0f + %s(-(%s))))", x, d->fexp, x); break;
      }
      break;
    case TC_OP_BINARY:
      switch ((tc_binary_op)op->sub) {
        case TC_ADD: tc_str_printf(o, fl ? "(%s + %s)" : "tc_iadd(%s, %s)", x, y); break;
        case TC_SUB: tc_str_printf(o, fl ? "(%s - %s)" : "tc_isub(%s, %s)", x, y); break;
        case TC_MUL: tc_str_printf(o, fl ? "(%s * %s)" : "tc_imul(%s, %s)", x, y); break;
        case TC_DIV:
          if (fl) tc_str_printf(o, "(%s / %s)", x, y);
          else tc_str_printf(o, "tc_idiv(%s, %s)", x, y);
          break;
        case TC_MAX:
          if (fl) tc_str_printf(o, "%s(%s, %s)", d->fmax_, x, y);
          else tc_str_printf(o, "tc_max(%s, %s)", x, y);
          break;
        case TC_MIN:
          if (fl) tc_str_printf(o, "%s(%s, %s)", d->fmin_, x, y);
          else tc_str_printf(o, "tc_min(%s, %s)", x, y);
          break;
      }
      break;
  }
  tc_str_free(&a), tc_str_free(&b), tc_str_free(&c3);
}

static bool is_float_t(tc_dtype t) { return is_float(t); }
static void print_barrier(tc_str *o, const tc_dialect *d, const tc_kir *k, int depth);

/* A block reduction (TC_RED_ALL): each thread's partial result goes to
 * a shared scratch word, the threads along the reduction's thread axis
 * combine them pairwise in a tree (log2 steps, a barrier after each),
 * and every one of them reads the total back.  Printed outside any
 * predicate, so that every thread reaches every barrier; the statement's
 * predicate (iterations past the end of an iteration axis) guards only
 * its register accesses.  One thread along the axis holds the total
 * already (and PoCL 3.1 aborts on a loop of no iterations around a
 * barrier). */
/* The shuffle form of a block reduction over TIDx, when TIDx's extent
 * bx is a power of two that a warp of w lanes divides or that divides w,
 * and the block is whole warps: the lanes of a warp combine their values
 * in log2 steps of shfl_xor (each lane ends with its group's or warp's
 * total; a group of bx consecutive linear ids lies in one warp or covers
 * whole warps), then, when bx > w, lane 0 of each warp puts the warp's
 * total in shared memory and every thread combines the bx / w totals of
 * its group in order.  Where the dialect has no shuffle (OpenCL) each
 * step exchanges through shared memory between two barriers, so that the
 * emulation runs the same steps in the same order. */
static void print_allreduce_shfl(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *s,
                                 int depth, const char *scr, const char *idx) {
  const tc_tensor *t = s->stmt.op->out;
  bool fl = is_float_t(t->dtype);
  int64_t bx = k->block[0], by = k->block[1], w = d->shfl_width;
  tc_reduce_op op = (tc_reduce_op)s->stmt.op->sub;
  const char *ty = fl ? "float" : "int";
  tc_str comb, other;
  tc_str_init(&comb), tc_str_init(&other);
  tc_str_indent(o, depth + 1);
  tc_str_printf(o, "const int tc_rs = tidx + %lld * (tidy + %lld * tidz);\n", (long long)bx, (long long)by);
  /* the statement's predicate (past the end of an iteration axis) guards
   * the register accesses only: every thread takes part */
  tc_str pred;
  tc_str_init(&pred);
  bool guarded = !tc_e_is_const(s->stmt.pred, 1);
  if (guarded) expr(&pred, k, s->stmt.pred);
  tc_str_indent(o, depth + 1);
  tc_str_printf(o, "%s tc_v = ", ty);
  if (guarded) tc_str_printf(o, "(%s) ? ", tc_str_cstr(&pred));
  d->load(o, t->dtype, t->mem, t->name, idx);
  if (guarded) {
    tc_str_cat(o, " : ");
    red_identity(o, d, op, fl);
  }
  tc_str_cat(o, ";\n");
  if (d->shfl_xor) {
    tc_str_indent(o, depth + 1);
    tc_str_printf(o, "%s\n", d->unroll_pragma);
  }
  tc_str_indent(o, depth + 1);
  tc_str_printf(o, "for (int tc_o = %lld; tc_o > 0; tc_o >>= 1) {\n", (long long)((bx < w ? bx : w) / 2));
  if (d->shfl_xor) {
    tc_str_printf(&other, d->shfl_xor, "tc_v", "tc_o");
    red_combine(&comb, d, op, fl, "tc_v", tc_str_cstr(&other));
  } else {
    tc_str_indent(o, depth + 2);
    tc_str_printf(o, "%s[tc_rs] = tc_v;\n", scr);
    print_barrier(o, d, k, depth + 2);
    tc_str_printf(&other, "%s[tc_rs ^ tc_o]", scr);
    red_combine(&comb, d, op, fl, "tc_v", tc_str_cstr(&other));
  }
  tc_str_indent(o, depth + 2);
  tc_str_printf(o, "tc_v = %s;\n", tc_str_cstr(&comb));
  if (!d->shfl_xor) print_barrier(o, d, k, depth + 2);
  tc_str_indent(o, depth + 1);
  tc_str_cat(o, "}\n");
  if (bx > w) {
    tc_str_indent(o, depth + 1);
    tc_str_printf(o, "if (tc_rs %% %lld == 0) %s[tc_rs / %lld] = tc_v;\n", (long long)w, scr, (long long)w);
    print_barrier(o, d, k, depth + 1);
    tc_str_indent(o, depth + 1);
    tc_str_printf(o, "tc_v = %s[(tc_rs - tidx) / %lld];\n", scr, (long long)w);
    tc_str_indent(o, depth + 1);
    tc_str_printf(o, "for (int tc_i = 1; tc_i < %lld; ++tc_i) ", (long long)(bx / w));
    tc_str_clear(&other), tc_str_clear(&comb);
    tc_str_printf(&other, "%s[(tc_rs - tidx) / %lld + tc_i]", scr, (long long)w);
    red_combine(&comb, d, op, fl, "tc_v", tc_str_cstr(&other));
    tc_str_printf(o, "tc_v = %s;\n", tc_str_cstr(&comb));
    print_barrier(o, d, k, depth + 1); /* before the scratch is written again */
  }
  tc_str_indent(o, depth + 1);
  if (guarded) tc_str_printf(o, "if (%s) ", tc_str_cstr(&pred));
  d->store(o, t->dtype, t->mem, t->name, idx, "tc_v");
  tc_str_cat(o, "\n");
  tc_str_free(&comb), tc_str_free(&other), tc_str_free(&pred);
}

static bool is_pow2_i(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

static void print_block_step(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *s,
                             int depth);

/* The grid step of a grid reduction (after its block step, which leaves
 * the block's total in every thread along the reduction's thread axis):
 * the thread at 0 on that axis writes the block's partial to the
 * workspace, at its row of blocks and its coordinates on the other
 * thread axes, slot bidx; the block counts itself done (atomic add on
 * its row's count, after a fence); the block that counts last combines
 * the grid_blocks partials (each thread along the reduction's thread
 * axis a fixed stride of them, then the block step again; without one,
 * each thread all of them in block order: the same order whichever block
 * is last, so deterministic), stores the total in every thread's
 * register and resets the count.  Sets tc_glast, which the rest of the
 * kernel runs under. */
static void print_grid_step(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *s,
                            int depth) {
  const tc_tensor *t = s->stmt.op->out;
  bool fl = is_float_t(t->dtype);
  tc_reduce_op op = (tc_reduce_op)s->stmt.op->sub;
  int ax = s->stmt.red.slot - 3;
  int64_t g = s->stmt.red.grid_blocks, bx = k->block[0], by = k->block[1], bz = k->block[2];
  int64_t rows = k->grid[1] * k->grid[2];
  /* the thread's slot among those off the reduction's thread axis */
  char other[160];
  if (ax == 0) snprintf(other, sizeof other, "(tidy + %lld * tidz)", (long long)by);
  else if (ax == 1) snprintf(other, sizeof other, "(tidx + %lld * tidz)", (long long)bx);
  else if (ax == 2) snprintf(other, sizeof other, "(tidx + %lld * tidy)", (long long)bx);
  else snprintf(other, sizeof other, "(tidx + %lld * (tidy + %lld * tidz))", (long long)bx, (long long)by);
  int64_t others = ax >= 0 ? bx * by * bz / k->block[ax] : bx * by * bz;
  tc_str idx, pred, comb, lin;
  tc_str_init(&idx), tc_str_init(&pred), tc_str_init(&comb), tc_str_init(&lin);
  expr(&idx, k, s->stmt.out_index);
  bool guarded = !tc_e_is_const(s->stmt.pred, 1);
  if (guarded) expr(&pred, k, s->stmt.pred);
  tc_str_printf(&lin, "tidx + %lld * (tidy + %lld * tidz)", (long long)bx, (long long)by);
  const char *ty = fl ? "float" : "int";
  tc_str_indent(o, depth);
  tc_str_printf(o, "{  /* %s: %s over BIDx (%lld blocks), a grid reduction: each block's partial in "
                "the workspace, the last block to finish combines them in a fixed order */\n", t->name,
                op == TC_REDUCE_SUM ? "sum" : op == TC_REDUCE_MAX ? "max" : "min", (long long)g);
  tc_str_indent(o, depth + 1);
  tc_str_printf(o, "%svolatile %s* tc_gp = (%svolatile %s*)(tc_ws + %lld) + ((long)(bidy + %lld * bidz) "
                "* %lld + %s) * %lld;\n", d->global_qual, ty, d->global_qual, ty, (long long)rows,
                (long long)k->grid[1], (long long)others, other, (long long)g);
  tc_str_indent(o, depth + 1);
  tc_str_printf(o, "if (%s%s%s%s) tc_gp[bidx] = ", ax >= 0 ? "tid" : "1", ax >= 0 ? (ax == 0 ? "x == 0" : ax == 1 ? "y == 0" : "z == 0") : "",
                guarded ? " && " : "", guarded ? tc_str_cstr(&pred) : "");
  d->load(o, t->dtype, t->mem, t->name, tc_str_cstr(&idx));
  tc_str_cat(o, ";\n");
  tc_str_indent(o, depth + 1);
  tc_str_printf(o, "%s\n", d->grid_fence);
  print_barrier(o, d, k, depth + 1);
  tc_str cnt;
  tc_str_init(&cnt);
  tc_str_printf(&cnt, "&tc_ws[bidy + %lld * bidz]", (long long)k->grid[1]);
  tc_str_indent(o, depth + 1);
  tc_str_printf(o, "if (%s == 0) tc_gflag[0] = ", tc_str_cstr(&lin));
  tc_str_printf(o, d->grid_atomic_inc, tc_str_cstr(&cnt));
  tc_str_printf(o, " == %lld;\n", (long long)(g - 1));
  print_barrier(o, d, k, depth + 1);
  tc_str_indent(o, depth + 1);
  tc_str_cat(o, "tc_glast = tc_gflag[0];\n");
  tc_str_indent(o, depth + 1);
  tc_str_cat(o, "if (tc_glast) {\n");
  tc_str_indent(o, depth + 2);
  tc_str_printf(o, "%s\n", d->grid_fence);
  tc_str_indent(o, depth + 2);
  tc_str_printf(o, "%s tc_g = ", ty);
  red_identity(o, d, op, fl);
  tc_str_cat(o, ";\n");
  tc_str_indent(o, depth + 2);
  red_combine(&comb, d, op, fl, "tc_g", "tc_gp[tc_b]");
  /* with a reduction thread axis its threads share the partials, each a
   * fixed stride of them, and the block step combines theirs again */
  if (ax >= 0)
    tc_str_printf(o, "for (int tc_b = tid%c; tc_b < %lld; tc_b += %lld) tc_g = %s;\n", 'x' + ax,
                  (long long)g, (long long)k->block[ax], tc_str_cstr(&comb));
  else
    tc_str_printf(o, "for (int tc_b = 0; tc_b < %lld; ++tc_b) tc_g = %s;\n", (long long)g,
                  tc_str_cstr(&comb));
  tc_str_indent(o, depth + 2);
  if (guarded) tc_str_printf(o, "if (%s) ", tc_str_cstr(&pred));
  d->store(o, t->dtype, t->mem, t->name, tc_str_cstr(&idx), "tc_g");
  tc_str_cat(o, "\n");
  if (ax >= 0) print_block_step(o, d, k, s, depth + 2);
  tc_str_indent(o, depth + 2);
  tc_str_printf(o, "if (%s == 0) tc_ws[bidy + %lld * bidz] = 0;  /* for the next launch */\n",
                tc_str_cstr(&lin), (long long)k->grid[1]);
  tc_str_indent(o, depth + 1);
  tc_str_cat(o, "}\n");
  tc_str_indent(o, depth);
  tc_str_cat(o, "}\n");
  tc_str_free(&idx), tc_str_free(&pred), tc_str_free(&comb), tc_str_free(&lin), tc_str_free(&cnt);
}

/* A TC_RED_ALL statement: the block step where a reduction axis is on a
 * thread axis, then the grid step where one is on BIDx. */
static void print_allreduce(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *s,
                            int depth) {
  if (s->stmt.red.slot >= 3) print_block_step(o, d, k, s, depth);
  if (s->stmt.red.grid) print_grid_step(o, d, k, s, depth);
}

static void print_block_step(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *s,
                             int depth) {
  const tc_tensor *t = s->stmt.op->out;
  bool fl = is_float_t(t->dtype);
  const char *scr = fl ? "tc_red_f" : "tc_red_i";
  int ax = s->stmt.red.slot - 3;
  int64_t bx = k->block[0], by = k->block[1], r = k->block[ax], p2 = 1;
  int64_t w = d->shfl_width, threads = k->block[0] * k->block[1] * k->block[2];
  if (ax == 0 && w > 0 && is_pow2_i(bx) && bx > 1 && threads % w == 0 && (bx <= w || bx % w == 0)) {
    tc_str idx;
    tc_str_init(&idx);
    expr(&idx, k, s->stmt.out_index);
    tc_str_indent(o, depth);
    tc_str_printf(o, "{  /* %s: %s over TIDx, a block reduction: warp shuffles%s */\n", t->name,
                  s->stmt.op->sub == TC_REDUCE_SUM ? "sum" : s->stmt.op->sub == TC_REDUCE_MAX ? "max" : "min",
                  bx > w ? ", then the warps' totals through shared memory" : "");
    print_allreduce_shfl(o, d, k, s, depth, scr, tc_str_cstr(&idx));
    tc_str_indent(o, depth);
    tc_str_cat(o, "}\n");
    tc_str_free(&idx);
    return;
  }
  int64_t stride = ax == 0 ? 1 : ax == 1 ? bx : bx * by;
  while (p2 < r) p2 *= 2;
  if (r <= 1) return;
  tc_str idx, cur, comb, other, pred;
  tc_str_init(&idx), tc_str_init(&cur), tc_str_init(&comb), tc_str_init(&other), tc_str_init(&pred);
  expr(&idx, k, s->stmt.out_index);
  bool guarded = !tc_e_is_const(s->stmt.pred, 1);
  if (guarded) expr(&pred, k, s->stmt.pred);
  tc_str_indent(o, depth);
  tc_str_printf(o, "{  /* %s: %s over TID%c, a block reduction through shared memory */\n", t->name,
                s->stmt.op->sub == TC_REDUCE_SUM ? "sum" : s->stmt.op->sub == TC_REDUCE_MAX ? "max" : "min",
                'x' + ax);
  tc_str_indent(o, depth + 1);
  tc_str_printf(o, "const int tc_rs = tidx + %lld * (tidy + %lld * tidz), tc_rr = tid%c;\n",
                (long long)bx, (long long)by, 'x' + ax);
  tc_str_indent(o, depth + 1);
  tc_str_printf(o, "%s[tc_rs] = ", scr);
  if (guarded) tc_str_printf(o, "(%s) ? ", tc_str_cstr(&pred));
  d->load(o, t->dtype, t->mem, t->name, tc_str_cstr(&idx));
  if (guarded) {
    tc_str_cat(o, " : ");
    red_identity(o, d, (tc_reduce_op)s->stmt.op->sub, fl);
  }
  tc_str_cat(o, ";\n");
  print_barrier(o, d, k, depth + 1);
  tc_str_indent(o, depth + 1);
  tc_str_printf(o, "for (int tc_s = %lld; tc_s > 0; tc_s >>= 1) {\n", (long long)(p2 / 2));
  tc_str_indent(o, depth + 2);
  tc_str_printf(&cur, "%s[tc_rs]", scr);
  tc_str_printf(&other, "%s[tc_rs + tc_s * %lld]", scr, (long long)stride);
  red_combine(&comb, d, (tc_reduce_op)s->stmt.op->sub, fl, tc_str_cstr(&cur), tc_str_cstr(&other));
  tc_str_printf(o, "if (tc_rr < tc_s && tc_rr + tc_s < %lld) %s = %s;\n", (long long)r,
                tc_str_cstr(&cur), tc_str_cstr(&comb));
  print_barrier(o, d, k, depth + 2);
  tc_str_indent(o, depth + 1);
  tc_str_cat(o, "}\n");
  tc_str_indent(o, depth + 1);
  tc_str_clear(&cur);
  tc_str_printf(&cur, "%s[tc_rs - tc_rr * %lld]", scr, (long long)stride);
  if (guarded) tc_str_printf(o, "if (%s) ", tc_str_cstr(&pred));
  d->store(o, t->dtype, t->mem, t->name, tc_str_cstr(&idx), tc_str_cstr(&cur));
  tc_str_cat(o, "\n");
  print_barrier(o, d, k, depth + 1); /* before the scratch is written again */
  tc_str_indent(o, depth);
  tc_str_cat(o, "}\n");
  tc_str_free(&idx), tc_str_free(&cur), tc_str_free(&comb), tc_str_free(&other), tc_str_free(&pred);
}

/* Whether statement s copies 16-bit floats as they are: then it moves
 * their bits (both stored as 16-bit integers; 0 bits are +0.0), no
 * conversion to f32 and back. */
static bool raw_copy(const tc_kstmt *s) {
  const tc_op *op = s->op;
  return s->red.kind == TC_RED_NONE && op->nin == 1 && !op->scalar_in && !op->has_scalar &&
         (op->kind == TC_OP_SET || op->kind == TC_OP_BROADCAST || op->kind == TC_OP_PERMUTE) &&
         (op->out->dtype == TC_F16 || op->out->dtype == TC_BF16) && op->in[0]->dtype == op->out->dtype;
}

/* The stored bits such a copy moves: its input's element, 0 where a
 * view's predicate fails. */
static void raw_value(tc_str *o, const tc_kir *k, const tc_kstmt *s) {
  tc_str src;
  tc_str_init(&src);
  expr(&src, k, s->in_index[0]);
  if (s->in_valid[0]) {
    tc_str_cat(o, "((");
    expr(o, k, s->in_valid[0]);
    tc_str_printf(o, ") ? %s[%s] : 0)", s->op->in[0]->name, tc_str_cstr(&src));
  } else {
    tc_str_printf(o, "%s[%s]", s->op->in[0]->name, tc_str_cstr(&src));
  }
  tc_str_free(&src);
}

static void print_stmt(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *s, int depth) {
  if (s->stmt.red.kind != TC_RED_NONE && tc_tensor_is_welford(s->stmt.op->out)) {
    if (s->stmt.red.kind == TC_RED_ALL) tc_print_welford_all(o, d, k, s, depth, print_barrier);
    else tc_print_welford_step(o, d, k, s, depth);
    return;
  }
  if (s->stmt.red.kind == TC_RED_ALL) {
    print_allreduce(o, d, k, s, depth);
    return;
  }
  const tc_op *op = s->stmt.op;
  tc_str v, idx;
  tc_str_init(&v), tc_str_init(&idx);
  bool raw = raw_copy(&s->stmt);
  if (raw) {
    raw_value(&v, k, &s->stmt);
  } else if (s->stmt.red.kind == TC_RED_INIT) {
    red_identity(&v, d, (tc_reduce_op)op->sub, is_float(op->out->dtype));
  } else {
    value(&v, d, k, s);
  }
  expr(&idx, k, s->stmt.out_index);
  bool guarded = !tc_e_is_const(s->stmt.pred, 1);
  const tc_expr *guard = s->stmt.pred;
  if (guarded && s->stmt.zfill) { /* 0 past the edges (a tile a wgmma reads whole) */
    tc_str z;
    tc_str_init(&z);
    tc_str_cat(&z, "(");
    expr(&z, k, s->stmt.pred);
    tc_str_printf(&z, ") ? (%s) : %s", tc_str_cstr(&v), raw ? "0" : "0.0f");
    tc_str_free(&v);
    v = z;
    guard = s->stmt.inner_pred;
    guarded = !tc_e_is_const(guard, 1);
  }
  tc_str_indent(o, depth);
  if (guarded) {
    tc_str_cat(o, "if (");
    expr(o, k, guard);
    tc_str_cat(o, ") {\n");
    tc_str_indent(o, depth + 1);
  }
  if (raw) tc_str_printf(o, "%s[%s] = %s;", op->out->name, tc_str_cstr(&idx), tc_str_cstr(&v));
  else d->store(o, op->out->dtype, op->out->mem, op->out->name, tc_str_cstr(&idx), tc_str_cstr(&v));
  tc_str_cat(o, "\n");
  if (guarded) {
    tc_str_indent(o, depth);
    tc_str_cat(o, "}\n");
  }
  tc_str_free(&v), tc_str_free(&idx);
}

/* A vectorized loop n (V = its extent lanes) whose one statement stores
 * float values to global memory at V consecutive, V-aligned elements
 * under a predicate the lanes share: printed as the dialect's vector
 * store of the V values (each the statement's value with the lane's
 * index), one access instead of V.  false (nothing printed) otherwise. */
static bool print_vector_store(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *n, int depth) {
  if (!d->vec_store || !k->pool || n->loop.ptype != TC_VECTORIZE || n->nbody != 1 ||
      n->body[0]->kind != TC_K_STMT || n->body[0]->sync_before || n->sync_end)
    return false;
  const tc_knode *s = n->body[0];
  const tc_kstmt *st = &s->stmt;
  const tc_tensor *out = st->op->out;
  int64_t v = n->loop.extent, bytes = v * (int64_t)tc_dtype_size(out->dtype);
  if (out->mem != TC_MEM_GLOBAL || !is_float(out->dtype) || st->red.kind || st->mma.kind ||
      st->tmem.kind || st->ldsm.kind || st->tma.kind || st->cp_bytes || st->zfill ||
      st->op->kind == TC_OP_GATHER || (v != 2 && v != 4 && v != 8) || (bytes != 4 && bytes != 8 && bytes != 16) ||
      (out->dtype == TC_F32 && v > 4))
    return false;
  tc_epool *p = k->pool;
  int64_t id = n->loop.var->val;
  const tc_expr *zero = tc_e_const(p, 0);
  const tc_expr *base = tc_simplify(p, tc_e_subst(p, st->out_index, 1, &id, &zero));
  if (!tc_e_run_uniform(p, st->pred, n->loop.var, v) ||
      !tc_e_is_const(tc_simplify(p, tc_e_sub(p, st->out_index, tc_e_add(p, base, n->loop.var))), 0) ||
      !tc_e_is_const(tc_simplify(p, tc_e_modc(p, base, v)), 0))
    return false;
  const tc_expr *pred = tc_simplify(p, tc_e_subst(p, st->pred, 1, &id, &zero)); /* (the run's) */
  bool raw = raw_copy(st); /* (the stored bits, as they are) */
  tc_str vals[8], idx;
  const char *vp[8];
  tc_str_init(&idx);
  expr(&idx, k, base);
  for (int i = 0; i < v; i++) { /* the statement at lane i */
    tc_knode lane = *s;
    const tc_expr *c = tc_e_const(p, i);
    for (int q = 0; q < 3; q++) {
      if (lane.stmt.in_index[q]) lane.stmt.in_index[q] = tc_simplify(p, tc_e_subst(p, st->in_index[q], 1, &id, &c));
      if (lane.stmt.in_valid[q]) lane.stmt.in_valid[q] = tc_simplify(p, tc_e_subst(p, st->in_valid[q], 1, &id, &c));
    }
    tc_str_init(&vals[i]);
    if (raw) raw_value(&vals[i], k, &lane.stmt);
    else value(&vals[i], d, k, &lane);
    vp[i] = tc_str_cstr(&vals[i]);
  }
  bool guarded = !tc_e_is_const(pred, 1);
  if (guarded) {
    tc_str_indent(o, depth);
    tc_str_cat(o, "if (");
    expr(o, k, pred);
    tc_str_cat(o, ") {\n");
  }
  d->vec_store(o, out->dtype, out->mem, out->name, tc_str_cstr(&idx), (int)v, raw, vp, depth + guarded);
  if (guarded) {
    tc_str_indent(o, depth);
    tc_str_cat(o, "}\n");
  }
  for (int i = 0; i < v; i++) tc_str_free(&vals[i]);
  tc_str_free(&idx);
  return true;
}

static void print_barrier(tc_str *o, const tc_dialect *d, const tc_kir *k, int depth) {
  if (k->nwgmma > 0 && d->wgmma_store_fence) { /* the threads' shared stores before wgmma's reads */
    tc_str_indent(o, depth);
    tc_str_printf(o, "%s\n", d->wgmma_store_fence);
  }
  tc_str_indent(o, depth);
  tc_str_cat(o, k->tmem_columns > 0 && d->tmem_barrier ? d->tmem_barrier : d->barrier);
  tc_str_cat(o, "\n");
}

/* The 32-bit pattern of storage value v of dtype t, and back. */
static void to_bits(tc_str *o, const tc_dialect *d, tc_dtype t, const char *v) {
  switch (t) {
    case TC_F32: tc_str_printf(o, "%s(%s)", d->f32_bits, v); break;
    case TC_I8: tc_str_printf(o, "(unsigned)(unsigned char)(%s)", v); break;
    default: tc_str_printf(o, "(unsigned)(%s)", v); break;
  }
}

static void from_bits(tc_str *o, const tc_dialect *d, tc_dtype t, const char *w) {
  switch (t) {
    case TC_F32: tc_str_printf(o, "%s(%s)", d->bits_f32, w); break;
    case TC_I32: tc_str_printf(o, "(int)(%s)", w); break;
    case TC_I8: tc_str_printf(o, "(signed char)(unsigned char)(%s)", w); break;
    default: tc_str_printf(o, "(unsigned short)(%s)", w); break;
  }
}

/* A statement lowered to a tensor-memory access (tmem.c): its registers
 * are packed into (or unpacked from) 32-bit words tc_tr[], moved by one
 * warp-collective tcgen05.st / tcgen05.ld, element by element over the
 * vectorized loop the statement sits in. */
static void print_tmem(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *s, int depth) {
  const tc_op *op = s->stmt.op;
  bool ld = s->stmt.tmem.kind == TC_TMEM_LD;
  const tc_tensor *tm = ld ? op->in[0] : op->out, *reg = ld ? op->out : op->in[0];
  const tc_kalloc *a = &k->allocs[s->stmt.tmem.alloc];
  int size = (int)tc_dtype_size(tm->dtype), per = 4 / size, bits = 8 * size;
  const char *v = s->stmt.tmem.vec ? tc_e_var_name(k->pool, (int)s->stmt.tmem.vec->loop.var->val) : NULL;
  tc_str idx, addr, elem, word, x;
  tc_str_init(&idx), tc_str_init(&addr), tc_str_init(&elem), tc_str_init(&word), tc_str_init(&x);
  expr(&idx, k, ld ? s->stmt.out_index : s->stmt.in_index[0]);
  expr(&addr, k, s->stmt.tmem.addr);
  tc_str_printf(&elem, "%s[%s]", reg->name, tc_str_cstr(&idx));
  if (!v) tc_str_cat(&word, "tc_tr[0]");
  else if (per == 1) tc_str_printf(&word, "tc_tr[%s]", v);
  else tc_str_printf(&word, "tc_tr[%s / %d]", v, per);
  tc_str_indent(o, depth);
  tc_str_printf(o, "{  /* %s = %s: tcgen05.%s .32x32b.x%d (%s) */\n", op->out->name, op->in[0]->name,
                ld ? "ld" : "st", s->stmt.tmem.words, tm->name);
  int in = depth + 1;
  bool guarded = !tc_e_is_const(s->stmt.pred, 1);
  if (guarded) {
    tc_str_indent(o, in);
    tc_str_cat(o, "if (");
    expr(o, k, s->stmt.pred);
    tc_str_cat(o, ") {\n");
    in++;
  }
  tc_str_indent(o, in);
  tc_str_printf(o, "unsigned tc_tr[%d]%s;\n", s->stmt.tmem.words, !ld && per > 1 ? " = {0}" : "");
  if (ld) d->tmem_access(o, a, 1, s->stmt.tmem.words, tc_str_cstr(&addr), in);
  if (v) {
    tc_str_indent(o, in);
    tc_str_printf(o, "%s\n", d->unroll_pragma);
    tc_str_indent(o, in);
    tc_str_printf(o, "for (int %s = 0; %s < %d; ++%s) {  /* vectorize */\n", v, v, s->stmt.tmem.elems, v);
  }
  tc_str_indent(o, v ? in + 1 : in);
  if (ld) {
    if (per > 1) tc_str_printf(&x, "%s >> (%d * (%s %% %d))", tc_str_cstr(&word), bits, v, per);
    else tc_str_cat(&x, tc_str_cstr(&word));
    tc_str_printf(o, "%s = ", tc_str_cstr(&elem));
    from_bits(o, d, tm->dtype, tc_str_cstr(&x));
    tc_str_cat(o, ";\n");
  } else {
    tc_str_printf(o, "%s %s ", tc_str_cstr(&word), per > 1 ? "|=" : "=");
    to_bits(o, d, tm->dtype, tc_str_cstr(&elem));
    if (per > 1) tc_str_printf(o, " << (%d * (%s %% %d))", bits, v, per);
    tc_str_cat(o, ";\n");
  }
  if (v) {
    tc_str_indent(o, in);
    tc_str_cat(o, "}\n");
  }
  if (!ld) d->tmem_access(o, a, 0, s->stmt.tmem.words, tc_str_cstr(&addr), in);
  if (guarded) {
    tc_str_indent(o, depth + 1);
    tc_str_cat(o, "}\n");
  }
  tc_str_indent(o, depth);
  tc_str_cat(o, "}\n");
  tc_str_free(&idx), tc_str_free(&addr), tc_str_free(&elem), tc_str_free(&word), tc_str_free(&x);
}

/* The lane's accumulators of a tc_kmma (out[c[v]] of the accumulator cn)
 * copied into the instruction's array frag (back: from it). */
static void acc_copies(tc_str *o, const tc_kir *k, const tc_kmma *m, const char *cn,
                       const char *frag, bool back, int depth) {
  for (int v = 0; v < m->nc; v++) {
    tc_str_indent(o, depth);
    if (!back) tc_str_printf(o, "%s[%d] = ", frag, v);
    tc_str_printf(o, "%s[", cn);
    expr(o, k, m->c[v]);
    if (back) tc_str_printf(o, "] = %s[%d];\n", frag, v);
    else tc_str_cat(o, "];\n");
  }
}

/* A statement lowered to mma.sync m16n8k16 (tc_kmma): this lane's
 * fragments packed from the shared tiles' 16-bit elements (the lower-
 * numbered one in the low half; 0 past an edge), its four accumulators,
 * the dialect's instruction, the accumulators back. */
static void print_mma(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *s, int depth) {
  const tc_kmma *m = &s->stmt.mma;
  const tc_op *op = s->stmt.op;
  const char *an = op->in[0]->name, *bn = op->in[1]->name, *cn = op->out->name;
  tc_str_indent(o, depth);
  tc_str_cat(o, "{\n");
  tc_str_indent(o, depth + 1);
  tc_str_cat(o, "unsigned int tc_fa[4], tc_fb[2];\n");
  for (int r = 0; r < 6 && m->ldsm; r++) { /* ldmatrix, then the edges masked */
    bool a = r < 4;
    if (r == 0 || r == 4) {
      tc_str indexs;
      tc_str_init(&indexs);
      expr(&indexs, k, a ? m->addr_a : m->addr_b);
      tc_str_indent(o, depth + 1);
      bool trans = !a && m->ldsm_trans_b;
      tc_str_printf(o, "{  /* %s fragment: ldmatrix.x%d%s */\n", a ? "A" : "B", a ? 4 : 2, trans ? ".trans" : "");
      tc_str_indent(o, depth + 2);
      tc_str_printf(o, "unsigned tc_lr[%d];\n", a ? 4 : 2);
      d->ldsm_access(o, 1, a ? 4 : 2, trans, a ? an : bn, tc_str_cstr(&indexs), depth + 2);
      tc_str_free(&indexs);
    }
    const tc_expr *const *pe = a ? &m->pa[2 * r] : &m->pb[2 * (r - 4)];
    tc_str_indent(o, depth + 2);
    tc_str_printf(o, "tc_f%c[%d] = tc_lr[%d]", a ? 'a' : 'b', a ? r : r - 4, a ? r : r - 4);
    if (!tc_e_is_const(pe[0], 1) || !tc_e_is_const(pe[1], 1)) {
      tc_str_cat(o, " & (((");
      expr(o, k, pe[0]);
      tc_str_cat(o, ") ? 0xffffu : 0u) | ((");
      expr(o, k, pe[1]);
      tc_str_cat(o, ") ? 0xffff0000u : 0u))");
    }
    tc_str_cat(o, ";\n");
    if (r == 3 || r == 5) {
      tc_str_indent(o, depth + 1);
      tc_str_cat(o, "}\n");
    }
  }
  for (int r = 0; r < 6 && !m->ldsm; r++) {
    const tc_expr *const *e = r < 4 ? &m->a[2 * r] : &m->b[2 * (r - 4)];
    const tc_expr *const *pe = r < 4 ? &m->pa[2 * r] : &m->pb[2 * (r - 4)];
    tc_str_indent(o, depth + 1);
    tc_str_printf(o, "tc_f%c[%d] = ", r < 4 ? 'a' : 'b', r < 4 ? r : r - 4);
    for (int h = 0; h < 2; h++) { /* the low half, then the high half */
      bool guarded = pe[h] && !tc_e_is_const(pe[h], 1);
      tc_str_cat(o, h ? " | (" : "(");
      if (guarded) {
        tc_str_cat(o, "(");
        expr(o, k, pe[h]);
        tc_str_cat(o, ") ? ");
      }
      tc_str_printf(o, "(unsigned int)%s[", r < 4 ? an : bn);
      expr(o, k, e[h]);
      tc_str_printf(o, "]%s)%s", guarded ? " : 0u" : "", h ? " << 16" : "");
    }
    tc_str_cat(o, ";\n");
  }
  tc_str_indent(o, depth + 1);
  tc_str_cat(o, "float tc_fc[4];\n");
  acc_copies(o, k, m, cn, "tc_fc", false, depth + 1);
  d->mma(o, m->in, "tc_fa", "tc_fb", "tc_fc", depth + 1);
  acc_copies(o, k, m, cn, "tc_fc", true, depth + 1);
  tc_str_indent(o, depth);
  tc_str_cat(o, "}\n");
}

/* A statement lowered to MFMA (tc_kmma): this lane's four A and four B
 * items from the shared tiles (0 past an edge) into the fragments the
 * dialect declared at the kernel's top (a_frag[0], b_frag[0]), its
 * accumulators into c_acc[0], the dialect's instruction (HIP: the
 * builtin; OpenCL: the emulation), the accumulators back. */
static void print_mfma(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *s, int depth) {
  const tc_kmma *m = &s->stmt.mma;
  const tc_op *op = s->stmt.op;
  const char *cn = op->out->name;
  tc_str_indent(o, depth);
  tc_str_cat(o, "{\n");
  for (int r = 0; r < 8; r++) {
    const tc_expr *e = r < 4 ? m->a[r] : m->b[r - 4], *pe = r < 4 ? m->pa[r] : m->pb[r - 4];
    bool guarded = pe && !tc_e_is_const(pe, 1);
    tc_str_indent(o, depth + 1);
    tc_str_printf(o, "%c_frag[0][%d] = ", r < 4 ? 'a' : 'b', r % 4);
    if (guarded) {
      tc_str_cat(o, "(");
      expr(o, k, pe);
      tc_str_cat(o, ") ? ");
    }
    tc_str_printf(o, "%s[", op->in[r < 4 ? 0 : 1]->name);
    expr(o, k, e);
    tc_str_printf(o, "]%s;\n", guarded ? " : 0" : "");
  }
  acc_copies(o, k, m, cn, "c_acc[0]", false, depth + 1);
  d->mfma(o, m->kind == TC_MACRO_MFMA_32X32X8 ? TC_MFMA_32X32X8 : TC_MFMA_16X16X16, m->in,
          "a_frag[0]", "b_frag[0]", "c_acc[0]", depth + 1);
  acc_copies(o, k, m, cn, "c_acc[0]", true, depth + 1);
  tc_str_indent(o, depth);
  tc_str_cat(o, "}\n");
}

/* The address of element e of shared tensor t for a wgmma descriptor. */
static void wgmma_desc(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_tensor *t,
                       const tc_expr *e, int64_t lbo, int64_t sbo, int swz) {
  tc_str off;
  tc_str_init(&off);
  expr(&off, k, e);
  tc_str_cat(o, "tc_wgmma_desc(");
  d->wgmma_addr(o, t->name, tc_str_cstr(&off));
  tc_str_printf(o, ", %lldu, %lldu, %du)", (long long)lbo, (long long)sbo, swz);
  tc_str_free(&off);
}

/* The accumulators of wgmma statement s, named in place (wait depth 1):
 * its output array from element c0 on. */
static void wgmma_acc_name(tc_str *o, const tc_kir *k, const tc_knode *s) {
  const char *cn = s->stmt.op->out->name;
  if (tc_e_is_const(s->stmt.mma.c0, 0)) {
    tc_str_cat(o, cn);
    return;
  }
  tc_str_printf(o, "(%s + (", cn);
  expr(o, k, s->stmt.mma.c0);
  tc_str_cat(o, "))");
}

/* After a ring loop of wait depth 1: the accumulators of its wgmma
 * statements behind the dialect's compiler barrier (wgmma_acc_fence). */
typedef struct acc_fence_ctx {
  tc_str *o;
  const tc_dialect *d;
  const tc_kir *k;
  int depth;
} acc_fence_ctx;

static int acc_fence(tc_knode *s, void *ctx) {
  acc_fence_ctx *c = ctx;
  if (s->stmt.mma.kind != TC_MACRO_WGMMA || !s->stmt.mma.wait1) return 0;
  tc_str acc;
  tc_str_init(&acc);
  wgmma_acc_name(&acc, c->k, s);
  c->d->wgmma_acc_fence(c->o, tc_str_cstr(&acc), s->stmt.mma.n / 2, c->depth);
  tc_str_free(&acc);
  return 0;
}

/* A statement lowered to wgmma m64nNk16 (tc_kmma kind TC_MACRO_WGMMA): the
 * thread's n / 2 accumulators, the descriptors of the two tiles (start,
 * LBO, SBO, swizzle as the lowering derived them from the layouts), the
 * dialect's instruction between its fences, the accumulators back.  With
 * loop (the statement's K-step loop, its only body, the accumulators the
 * same in every step): the loop's instructions go unrolled between one
 * fence and one commit + wait, so they run back to back on the tensor
 * cores (wgmma needs no fence between instructions of one shape on the
 * same accumulators).  With wait depth 1 (m->wait1, a ring loop's
 * compute, circular.c) the instruction names the accumulators in place
 * (out + c0, constant indices once unrolled: registers), since nothing
 * may touch them while the group runs, and the end leaves the group
 * running (wgmma_end_wait1); the ring loop drains it. */
static void print_wgmma(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *s,
                        const tc_knode *loop, int depth) {
  const tc_kmma *m = &s->stmt.mma;
  const tc_op *op = s->stmt.op;
  const char *cn = op->out->name;
  tc_str c0, da, db, acc;
  tc_str_init(&c0), tc_str_init(&da), tc_str_init(&db), tc_str_init(&acc);
  expr(&c0, k, m->c0);
  wgmma_desc(&da, d, k, op->in[0], m->start_a, m->lbo_a, m->sbo_a, m->swz_a);
  wgmma_desc(&db, d, k, op->in[1], m->start_b, m->lbo_b, m->sbo_b, m->swz_b);
  tc_str_indent(o, depth);
  tc_str_printf(o, "{  /* %s += %s * %s: wgmma m64n%dk16%s%s%s */\n", cn, op->in[0]->name, op->in[1]->name,
                m->n, loop ? ", the K steps back to back" : "",
                m->wait1 ? "; left running into the next K tile (wait depth 1)" : m->depth0_why ? "; wait depth 0: " : "",
                !m->wait1 && m->depth0_why ? m->depth0_why : "");
  if (m->wait1) {
    wgmma_acc_name(&acc, k, s);
  } else {
    tc_str_cat(&acc, "tc_fc");
    tc_str_indent(o, depth + 1);
    tc_str_printf(o, "float tc_fc[%d];\n", m->n / 2);
    tc_str_indent(o, depth + 1); /* (unrolled: the accumulators stay in registers) */
    tc_str_printf(o, "%s\n", d->unroll_pragma);
    tc_str_indent(o, depth + 1);
    tc_str_printf(o, "for (int tc_j = 0; tc_j < %d; ++tc_j) tc_fc[tc_j] = %s[%s + tc_j];\n", m->n / 2,
                  cn, tc_str_cstr(&c0));
  }
  if (d->wgmma_begin) {
    tc_str_indent(o, depth + 1);
    tc_str_printf(o, "%s\n", d->wgmma_begin);
  }
  int in = depth + 1;
  if (loop) {
    const char *v = tc_e_var_name(k->pool, (int)loop->loop.var->val);
    tc_str_indent(o, in);
    tc_str_printf(o, "%s\n", d->unroll_pragma);
    tc_str_indent(o, in);
    tc_str_printf(o, "for (int %s = 0; %s < %lld; ++%s) {\n", v, v, (long long)loop->loop.extent, v);
    in++;
  }
  d->wgmma(o, m->in, m->n, op->in[0]->name, tc_str_cstr(&da), op->in[1]->name, tc_str_cstr(&db),
           m->trans_a, m->trans_b, tc_str_cstr(&acc), in);
  if (loop) {
    tc_str_indent(o, depth + 1);
    tc_str_cat(o, "}\n");
  }
  const char *end = m->wait1 ? d->wgmma_end_wait1 : d->wgmma_end;
  if (end) {
    tc_str_indent(o, depth + 1);
    tc_str_printf(o, "%s\n", end);
  }
  if (!m->wait1) {
    tc_str_indent(o, depth + 1);
    tc_str_printf(o, "%s\n", d->unroll_pragma);
    tc_str_indent(o, depth + 1);
    tc_str_printf(o, "for (int tc_j = 0; tc_j < %d; ++tc_j) %s[%s + tc_j] = tc_fc[tc_j];\n", m->n / 2,
                  cn, tc_str_cstr(&c0));
  }
  tc_str_indent(o, depth);
  tc_str_cat(o, "}\n");
  tc_str_free(&c0), tc_str_free(&da), tc_str_free(&db), tc_str_free(&acc);
}

/* Whether printing n prints a barrier inside it (its own sync_before,
 * printed before it, does not count): a barrier at the end of a loop
 * body, before a node in it, or in a statement lowered to ldmatrix /
 * stmatrix or mma (the OpenCL emulations synchronize the work-group). */
static bool has_barrier_inside(const tc_knode *n) {
  if (n->kind == TC_K_STMT)
    return n->stmt.ldsm.kind != 0 || n->stmt.red.kind == TC_RED_ALL ||
           (n->stmt.mma.kind != 0 && n->stmt.mma.kind != TC_MACRO_WGMMA); /* (its emulation has none) */
  if (n->sync_end) return true;
  for (int i = 0; i < n->nbody; i++)
    if (n->body[i]->sync_before || has_barrier_inside(n->body[i])) return true;
  return false;
}

/* Whether a loop without a barrier comes first in n's body, before any
 * barrier: PoCL 3.1 aborts on such a loop inside a loop with barriers
 * (when the inner loop's body is the same in every work-item: "Assertion
 * `exit != NULL' failed" in its parallel-region formation), unless a
 * barrier starts the outer loop's body. */
static bool loop_before_barrier(const tc_knode *n) {
  for (int i = 0; i < n->nbody; i++) {
    const tc_knode *b = n->body[i];
    if (b->sync_before || has_barrier_inside(b)) return false;
    if (b->kind != TC_K_STMT) return true;
  }
  return false;
}

/* wi_zero: the kernel defines tc_wi_zero (tc_dialect.wi_zero_def), which
 * the loops without a barrier add to their bound; the loops with one
 * start with a barrier where PoCL needs it (loop_before_barrier). */
/* A copy of a circular buffer lowered to cp.async (circular.c): one
 * instruction per element, or per vector (the loop cp_vec, whose
 * variable the indices no longer use). */
static void print_cp_async(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *s, int depth) {
  const tc_op *op = s->stmt.op;
  tc_str dst, src, pred;
  tc_str_init(&dst), tc_str_init(&src), tc_str_init(&pred);
  tc_str_printf(&dst, "&%s[", op->out->name);
  expr(&dst, k, s->stmt.out_index);
  tc_str_cat(&dst, "]");
  tc_str_printf(&src, "&%s[", op->in[0]->name);
  expr(&src, k, s->stmt.in_index[0]);
  tc_str_cat(&src, "]");
  /* a zero-filled edge (zfill): copied where inner_pred holds, the bytes
   * 0 where pred fails */
  bool zero = s->stmt.cp_zero;
  const tc_expr *g = zero ? s->stmt.inner_pred : s->stmt.pred;
  bool guarded = !tc_e_is_const(g, 1);
  tc_str zc;
  tc_str_init(&zc);
  if (guarded) expr(&pred, k, g);
  if (zero) expr(&zc, k, s->stmt.pred);
  d->cp_async(o, s->stmt.cp_bytes, tc_str_cstr(&dst), tc_str_cstr(&src), guarded ? tc_str_cstr(&pred) : NULL,
              zero ? tc_str_cstr(&zc) : NULL, depth);
  tc_str_free(&dst), tc_str_free(&src), tc_str_free(&pred), tc_str_free(&zc);
}

static void print_node_in(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *n, int depth,
                          bool wi_zero);

/* A node with the asynchronous copies' wait before it (before its barrier)
 * and commit after it, where the dialect has them. */
static void print_node(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *n, int depth,
                       bool wi_zero) {
  if (n->cp_wait && d->cp_wait) d->cp_wait(o, n->cp_wait - 1, depth);
  if (n->mbar_slot && d->tma_wait) d->tma_wait(o, k, n, depth);
  print_node_in(o, d, k, n, depth, wi_zero);
  if (n->cp_commit && d->cp_commit) d->cp_commit(o, depth);
  if (n->kind == TC_K_LOOP && n->loop.wgmma_drain && d->wgmma_drain) {
    tc_str_indent(o, depth); /* the ring's last wgmma group, before the accumulators are read */
    tc_str_printf(o, "%s\n", d->wgmma_drain);
    acc_fence_ctx c = {o, d, k, depth};
    if (d->wgmma_acc_fence) tc_knode_each_stmt((tc_knode *)n, acc_fence, &c);
  }
}

static void print_node_in(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *n, int depth,
                          bool wi_zero) {
  if (n->sync_before) print_barrier(o, d, k, depth);
  if (n->kind == TC_K_STMT) {
    if (n->stmt.cp_bytes && d->cp_async) print_cp_async(o, d, k, n, depth);
    else if (n->stmt.ldsm.kind) tc_print_ldsm(o, d, k, n, depth);
    else if (n->stmt.mma.kind == TC_MACRO_WGMMA) print_wgmma(o, d, k, n, NULL, depth);
    else if (n->stmt.mma.kind == TC_MACRO_MMA_M16N8K16) print_mma(o, d, k, n, depth);
    else if (n->stmt.mma.kind) print_mfma(o, d, k, n, depth);
    else if (n->stmt.tmem.kind) print_tmem(o, d, k, n, depth);
    else print_stmt(o, d, k, n, depth);
    return;
  }
  const tc_kstmt *only = n->nbody == 1 && n->body[0]->kind == TC_K_STMT ? &n->body[0]->stmt : NULL;
  if (only && only->tmem.kind && only->tmem.vec == n) {
    print_tmem(o, d, k, n->body[0], depth); /* the vector loop is the access */
    return;
  }
  if (n->loop.tma_stmt && d->tma_copy) {
    d->tma_copy(o, k, n->loop.tma_stmt, depth); /* the loop nest is the bulk copy */
    if (n->sync_end) print_barrier(o, d, k, depth);
    return;
  }
  if (only && only->cp_bytes && only->cp_vec == n && d->cp_async) {
    if (n->body[0]->sync_before) print_barrier(o, d, k, depth);
    print_cp_async(o, d, k, n->body[0], depth); /* the vector loop is the copy */
    if (n->sync_end) print_barrier(o, d, k, depth);
    return;
  }
  if (only && only->mma.kind == TC_MACRO_WGMMA && !n->body[0]->sync_before && !n->body[0]->cp_wait &&
      !n->body[0]->mbar_slot &&
      !n->body[0]->cp_commit && !n->sync_end && !tc_e_uses(only->mma.c0, (int)n->loop.var->val)) {
    print_wgmma(o, d, k, n->body[0], n, depth); /* the K steps between one fence and one wait */
    return;
  }
  if (only && only->ldsm.kind && only->ldsm.vec == n) {
    if (n->body[0]->sync_before) print_barrier(o, d, k, depth);
    tc_print_ldsm(o, d, k, n->body[0], depth); /* the vector loop is the instruction */
    if (n->sync_end) print_barrier(o, d, k, depth);
    return;
  }
  if (print_vector_store(o, d, k, n, depth)) return; /* the vector loop is the access */
  const char *v = k->pool ? tc_e_var_name(k->pool, (int)n->loop.var->val) : "i";
  bool unroll = n->loop.ptype == TC_UNROLL || n->loop.ptype == TC_VECTORIZE;
  if (unroll) {
    tc_str_indent(o, depth);
    tc_str_printf(o, "%s\n", d->unroll_pragma);
  }
  if (d->loop_pragma) {
    tc_str_indent(o, depth);
    tc_str_printf(o, "%s\n", d->loop_pragma);
  }
  tc_str ext;
  tc_str_init(&ext);
  if (n->loop.sym_extent) expr(&ext, k, n->loop.sym_extent); /* (over the size variables) */
  else tc_str_printf(&ext, "%lld", (long long)n->loop.extent);
  tc_str_indent(o, depth);
  tc_str_printf(o, "for (int %s = 0; %s < %s%s; ++%s) {", v, v, tc_str_cstr(&ext),
                wi_zero && !unroll && !has_barrier_inside(n) ? " + tc_wi_zero" : "", v);
  tc_str_free(&ext);
  if (n->loop.ptype != TC_SERIAL) tc_str_printf(o, "  /* %s */", tc_ptype_name(n->loop.ptype));
  tc_str_cat(o, "\n");
  if (wi_zero && has_barrier_inside(n) && loop_before_barrier(n)) print_barrier(o, d, k, depth + 1);
  for (int i = 0; i < n->nbody; i++) print_node(o, d, k, n->body[i], depth + 1, wi_zero);
  if (n->sync_end) print_barrier(o, d, k, depth + 1);
  tc_str_indent(o, depth);
  tc_str_cat(o, "}\n");
}

void tc_print_kernel(tc_str *o, const tc_dialect *d, const tc_kir *k, const char *name) {
  tc_str_printf(o, "/* generated by tilec %s for %s */\n", TILEC_VERSION, d->name);
  if (tc_fusion_schedule_note(k->f)[0]) tc_str_printf(o, "/* %s */\n", tc_fusion_schedule_note(k->f));
  /* guarded, so that several kernels can share one translation unit */
  tc_str_cat(o, "#ifndef TC_PRELUDE\n#define TC_PRELUDE\n");
  tc_str_cat(o, d->prelude);
  tc_str_cat(o, "#endif\n");
  bool tmem = k->tmem_columns > 0 && d->tmem_setup;
  if (tmem && d->tmem_prelude) {
    tc_str_cat(o, "#ifndef TC_TMEM_PRELUDE\n#define TC_TMEM_PRELUDE\n");
    tc_str_cat(o, d->tmem_prelude);
    tc_str_cat(o, "#endif\n");
  }
  if (k->ntma > 0 && d->tma_prelude) {
    tc_str_cat(o, "#ifndef TC_TMA_PRELUDE\n#define TC_TMA_PRELUDE\n");
    tc_str_cat(o, d->tma_prelude);
    tc_str_cat(o, "#endif\n");
  }
  if (k->nldsm > 0 && d->ldsm_prelude) {
    tc_str_cat(o, "#ifndef TC_LDSM_PRELUDE\n#define TC_LDSM_PRELUDE\n");
    tc_str_cat(o, d->ldsm_prelude);
    tc_str_cat(o, "#endif\n");
  }
  if (k->ncp_async > 0 && d->cp_async_prelude) {
    tc_str_cat(o, "#ifndef TC_CP_ASYNC_PRELUDE\n#define TC_CP_ASYNC_PRELUDE\n");
    tc_str_cat(o, d->cp_async_prelude);
    tc_str_cat(o, "#endif\n");
  }
  bool mfma = k->nmma > 0 && k->mma_kind != TC_MACRO_MMA_M16N8K16;
  if (k->nmma > 0 && !mfma && d->mma_prelude) {
    tc_str_cat(o, "#ifndef TC_MMA_PRELUDE\n#define TC_MMA_PRELUDE\n");
    tc_str_cat(o, d->mma_prelude);
    tc_str_cat(o, "#endif\n");
  }
  if (mfma && d->mfma_prelude) {
    tc_str_cat(o, "#ifndef TC_MFMA_PRELUDE\n#define TC_MFMA_PRELUDE\n");
    tc_str_cat(o, d->mfma_prelude);
    tc_str_cat(o, "#endif\n");
  }
  if (k->nwgmma > 0 && d->wgmma_prelude) {
    tc_str_cat(o, "#ifndef TC_WGMMA_PRELUDE\n#define TC_WGMMA_PRELUDE\n");
    tc_str_cat(o, d->wgmma_prelude);
    tc_str_cat(o, "#endif\n");
  }
  tc_str_cat(o, "\n");
  d->kernel_open(o, k, name);
  for (int i = 0; i < k->nparams; i++) d->param(o, k->params[i], i >= k->f->ninputs, i == 0);
  /* the workspace is the buffer after the parameters (tc_kernel_run),
   * before any tensor maps (which follow the buffers) */
  if (k->ws_words) d->buffer_param(o, TC_I32, "tc_ws", 1, k->nparams == 0);
  if (k->ntma > 0 && d->tma_params) d->tma_params(o, k);
  tc_str_cat(o, ") {\n");
  tc_str_cat(o, d->index_defs);
  bool wi_zero = d->wi_zero_def && has_barrier_inside(k->root);
  if (wi_zero) tc_str_cat(o, d->wi_zero_def);
  for (int i = 0; i < k->nallocs; i++) {
    d->alloc(o, &k->allocs[i], 1);
    if (tc_tensor_is_welford(k->allocs[i].t)) tc_print_welford_allocs(o, d, &k->allocs[i], 1);
  }
  int64_t threads = k->block[0] * k->block[1] * k->block[2];
  if (k->nred_f) d->shared_array(o, TC_F32, "tc_red_f", threads, 1);
  if (k->nred_i) d->shared_array(o, TC_I32, "tc_red_i", threads, 1);
  if (k->nred_w) tc_print_welford_scratch(o, d, threads);
  if (k->ws_words) {
    d->shared_array(o, TC_I32, "tc_gflag", 1, 1);
    tc_str_cat(o, "  int tc_glast = 0;\n");
  }
  if (tmem) d->tmem_setup(o, k);
  if (k->nldsm > 0 && d->ldsm_setup) d->ldsm_setup(o, k);
  if (k->nmma > 0 && !mfma) {
    /* the warp and the lane of the mma hooks (the block's x is the 32 lanes) */
    tc_str_printf(o, "  const int tc_lane = tidx, tc_warp = tidy + tidz * %lld;\n"
                  "  (void)tc_lane, (void)tc_warp;\n", (long long)k->block[1]);
    if (d->mma_decls) d->mma_decls(o, k->mma_warps, 1);
  }
  if (mfma) {
    /* the wavefront and the lane of the MFMA hooks (the block's x is the
     * 64 lanes), one fragment of each kind */
    tc_str_printf(o, "  const int tc_lane = tidx, tc_wave = tidy + tidz * %lld;\n"
                  "  (void)tc_lane, (void)tc_wave;\n", (long long)k->block[1]);
    d->mfma_decls(o, k->mma_kind == TC_MACRO_MFMA_32X32X8 ? TC_MFMA_32X32X8 : TC_MFMA_16X16X16,
                  1, 1, 1, k->mma_warps, 1);
  }
  if (k->nwgmma > 0) /* the thread of the emulated warp group: tid % 128 */
    tc_str_printf(o, "  const int tid = tidx + tidy * %lld;\n  (void)tid;\n", (long long)k->block[0]);
  if (k->ntma > 0 && d->tma_setup) d->tma_setup(o, k);
  /* past a grid reduction only its last block goes on, as block 0 (the
   * lowering lets nothing after it bind BIDx to more than one block) */
  int open = 0;
  for (int i = 0; i < k->root->nbody; i++) {
    const tc_knode *n = k->root->body[i];
    print_node(o, d, k, n, 1 + open, wi_zero);
    if (!open && n->kind == TC_K_STMT && n->stmt.red.kind == TC_RED_ALL && n->stmt.red.grid &&
        i + 1 < k->root->nbody) {
      tc_str_cat(o, "  if (tc_glast) {\n    const int bidx = 0;\n    (void)bidx;\n");
      open = 1;
    }
  }
  if (open) tc_str_cat(o, "  }\n");
  if (tmem && d->tmem_teardown) d->tmem_teardown(o, k);
  tc_str_cat(o, "}\n");
}
