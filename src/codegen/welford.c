/* welford.c - printing a Welford reduction (tc_welford): the state's
 * three register arrays, its start, the one-element update of each
 * serial step and the block merge (Chan et al.'s pairwise formula) over
 * warp shuffles or shared memory, in the same shapes as printer.c's
 * block reductions of sums.
 *
 * The state of element i is W[i] (the running mean), W_m2[i] (the sum of
 * squared deviations from it) and W_n[i] (the count, a float: exact up
 * to 2^24 elements).  Adding x: n' = n + 1, d = x - mean, mean += d / n',
 * M2 += d * (x - mean').  Merging a and b: n = na + nb, d = mb - ma,
 * mean = ma + d * nb / n, M2 = M2a + M2b + d^2 * na * nb / n (0 / 0 is
 * taken as 0: two empty states stay empty).  The merge is not symmetric
 * in rounding, so both lanes of a shuffle pair order it by lane (the
 * lower lane's state is a) and every lane ends with the same bits. */
#include <stdio.h>

#include "dialect.h"

/* The buffer of part ("", "_m2", "_n") of state t. */
static void part_name(char *out, size_t cap, const tc_tensor *t, const char *part) {
  snprintf(out, cap, "%s%s", t->name, part);
}

static const char *const parts[3] = {"", "_m2", "_n"};

void tc_print_welford_allocs(tc_str *o, const tc_dialect *d, const tc_kalloc *a, int depth) {
  for (int p = 1; p < 3; p++) {
    tc_tensor t = *a->t;
    tc_kalloc c = *a;
    part_name(t.name, sizeof t.name, a->t, parts[p]);
    c.t = &t;
    d->alloc(o, &c, depth);
  }
}

void tc_print_welford_part(tc_str *o, const tc_dialect *d, const tc_tensor *w, int var, const char *idx) {
  char m2[32], n[32];
  if (!var) {
    d->load(o, w->dtype, w->mem, w->name, idx);
    return;
  }
  part_name(m2, sizeof m2, w, parts[1]), part_name(n, sizeof n, w, parts[2]);
  tc_str_cat(o, "(");
  d->load(o, w->dtype, w->mem, m2, idx);
  tc_str_cat(o, " / ");
  d->load(o, w->dtype, w->mem, n, idx);
  tc_str_cat(o, ")");
}

/* Stores the values v[0..3) (C expressions) into the state's element idx. */
static void store_state(tc_str *o, const tc_dialect *d, const tc_tensor *w, const char *idx,
                        const char *const *v, int depth) {
  for (int p = 0; p < 3; p++) {
    char name[32];
    part_name(name, sizeof name, w, parts[p]);
    tc_str_indent(o, depth);
    d->store(o, w->dtype, w->mem, name, idx, v[p]);
    tc_str_cat(o, "\n");
  }
}

/* Opens "if (pred) {" when the statement has a predicate; returns the
 * depth of its body. */
static int open_pred(tc_str *o, const tc_kir *k, const tc_knode *s, int depth) {
  tc_str_indent(o, depth);
  if (tc_e_is_const(s->stmt.pred, 1)) {
    tc_str_cat(o, "{\n");
  } else {
    tc_str_cat(o, "if (");
    tc_e_print_c(o, k->pool, s->stmt.pred);
    tc_str_cat(o, ") {\n");
  }
  return depth + 1;
}

void tc_print_welford_step(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *s, int depth) {
  const tc_op *op = s->stmt.op;
  const tc_tensor *w = op->out;
  tc_str idx, x, m, v;
  tc_str_init(&idx), tc_str_init(&x), tc_str_init(&m), tc_str_init(&v);
  tc_e_print_c(&idx, k->pool, s->stmt.out_index);
  int in = open_pred(o, k, s, depth);
  if (s->stmt.red.kind == TC_RED_INIT) {
    const char *zero[3] = {"0.0f", "0.0f", "0.0f"};
    store_state(o, d, w, tc_str_cstr(&idx), zero, in);
  } else {
    tc_e_print_c(&x, k->pool, s->stmt.in_index[0]);
    char n[32];
    part_name(n, sizeof n, w, parts[2]);
    tc_str_indent(o, in);
    tc_str_cat(o, "const float tc_x = ");
    d->load(o, op->in[0]->dtype, op->in[0]->mem, op->in[0]->name, tc_str_cstr(&x));
    tc_str_cat(o, ";\n");
    tc_str_indent(o, in);
    tc_str_cat(o, "const float tc_wc = ");
    d->load(o, w->dtype, w->mem, n, tc_str_cstr(&idx));
    tc_str_cat(o, " + 1.0f;\n");
    tc_str_indent(o, in);
    tc_str_cat(o, "const float tc_wm = ");
    d->load(o, w->dtype, w->mem, w->name, tc_str_cstr(&idx));
    tc_str_cat(o, ";\n");
    tc_str_indent(o, in);
    tc_str_cat(o, "const float tc_wd = tc_x - tc_wm, tc_wn = tc_wm + tc_wd / tc_wc;\n");
    char m2[32];
    part_name(m2, sizeof m2, w, parts[1]);
    d->load(&m, w->dtype, w->mem, m2, tc_str_cstr(&idx));
    tc_str_printf(&v, "%s + tc_wd * (tc_x - tc_wn)", tc_str_cstr(&m));
    const char *vals[3] = {"tc_wn", tc_str_cstr(&v), "tc_wc"};
    store_state(o, d, w, tc_str_cstr(&idx), vals, in);
  }
  tc_str_indent(o, depth);
  tc_str_cat(o, "}\n");
  tc_str_free(&idx), tc_str_free(&x), tc_str_free(&m), tc_str_free(&v);
}

/* Merges the state (tc_bv, tc_bq, tc_bc) into (tc_v, tc_q, tc_c); the
 * C condition lo says whether (tc_v, ...) is the first of the two (NULL:
 * it always is). */
static void merge(tc_str *o, const char *lo, int depth) {
  static const char *const lines[] = {
      "const float tc_am = %s ? tc_v : tc_bv, tc_aq = %s ? tc_q : tc_bq, tc_ac = %s ? tc_c : tc_bc;\n",
      "const float tc_zm = %s ? tc_bv : tc_v, tc_zq = %s ? tc_bq : tc_q, tc_zc = %s ? tc_bc : tc_c;\n",
  };
  tc_str_indent(o, depth);
  tc_str_cat(o, "{\n");
  for (int i = 0; i < 2; i++) {
    tc_str_indent(o, depth + 1);
    if (lo) tc_str_printf(o, lines[i], lo, lo, lo);
    else tc_str_cat(o, i == 0 ? "const float tc_am = tc_v, tc_aq = tc_q, tc_ac = tc_c;\n"
                              : "const float tc_zm = tc_bv, tc_zq = tc_bq, tc_zc = tc_bc;\n");
  }
  tc_str_indent(o, depth + 1);
  tc_str_cat(o, "const float tc_wt = tc_ac + tc_zc, tc_wr = tc_wt > 0.0f ? tc_zc / tc_wt : 0.0f, "
                "tc_wd = tc_zm - tc_am;\n");
  tc_str_indent(o, depth + 1);
  tc_str_cat(o, "tc_v = tc_am + tc_wd * tc_wr;\n");
  tc_str_indent(o, depth + 1);
  tc_str_cat(o, "tc_q = tc_aq + tc_zq + tc_wd * tc_wd * tc_ac * tc_wr;\n");
  tc_str_indent(o, depth + 1);
  tc_str_cat(o, "tc_c = tc_wt;\n");
  tc_str_indent(o, depth);
  tc_str_cat(o, "}\n");
}

static const char *const scratch[3] = {"tc_red_wm", "tc_red_wq", "tc_red_wn"};
static const char *const regs[3] = {"tc_v", "tc_q", "tc_c"};
static const char *const others[3] = {"tc_bv", "tc_bq", "tc_bc"};

/* Declares tc_bv, tc_bq, tc_bc as the scratch at index expression at. */
static void load_others(tc_str *o, const char *at, int depth) {
  tc_str_indent(o, depth);
  tc_str_printf(o, "const float tc_bv = tc_red_wm[%s], tc_bq = tc_red_wq[%s], tc_bc = tc_red_wn[%s];\n",
                at, at, at);
}

static void store_scratch(tc_str *o, const char *at, const char *const *v, int depth) {
  tc_str_indent(o, depth);
  for (int p = 0; p < 3; p++) tc_str_printf(o, "%s[%s] = %s;%s", scratch[p], at, v[p], p < 2 ? " " : "\n");
}

void tc_print_welford_scratch(tc_str *o, const tc_dialect *d, int64_t threads) {
  for (int p = 0; p < 3; p++) d->shared_array(o, TC_F32, scratch[p], threads, 1);
}

static bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

void tc_print_welford_all(tc_str *o, const tc_dialect *d, const tc_kir *k, const tc_knode *s, int depth,
                          void (*barrier)(tc_str *o, const tc_dialect *d, const tc_kir *k, int depth)) {
  const tc_tensor *w = s->stmt.op->out;
  int ax = s->stmt.red.slot - 3;
  int64_t bx = k->block[0], by = k->block[1], r = k->block[ax], p2 = 1;
  int64_t wd = d->shfl_width, threads = k->block[0] * k->block[1] * k->block[2];
  if (r <= 1) return; /* one thread along the axis holds the total */
  bool shfl = ax == 0 && wd > 0 && is_pow2(bx) && threads % wd == 0 && (bx <= wd || bx % wd == 0);
  tc_str idx, pred, st[3];
  tc_str_init(&idx), tc_str_init(&pred);
  tc_e_print_c(&idx, k->pool, s->stmt.out_index);
  bool guarded = !tc_e_is_const(s->stmt.pred, 1);
  if (guarded) tc_e_print_c(&pred, k->pool, s->stmt.pred);
  for (int p = 0; p < 3; p++) {
    char name[32];
    part_name(name, sizeof name, w, parts[p]);
    tc_str_init(&st[p]);
    if (guarded) tc_str_printf(&st[p], "(%s) ? ", tc_str_cstr(&pred));
    d->load(&st[p], w->dtype, w->mem, name, tc_str_cstr(&idx));
    if (guarded) tc_str_cat(&st[p], " : 0.0f");
  }
  tc_str_indent(o, depth);
  tc_str_printf(o, "{  /* %s: Welford over TID%c, a block reduction: %s */\n", w->name, 'x' + ax,
                shfl ? (bx > wd ? "warp shuffles, then the warps' states through shared memory" : "warp shuffles")
                     : "through shared memory");
  int in = depth + 1;
  tc_str_indent(o, in);
  tc_str_printf(o, "const int tc_rs = tidx + %lld * (tidy + %lld * tidz), tc_rr = tid%c;\n", (long long)bx,
                (long long)by, 'x' + ax);
  tc_str_indent(o, in);
  tc_str_printf(o, "float tc_v = %s, tc_q = %s, tc_c = %s;\n", tc_str_cstr(&st[0]), tc_str_cstr(&st[1]),
                tc_str_cstr(&st[2]));
  tc_str_indent(o, in);
  tc_str_cat(o, "(void)tc_rr;\n");
  if (shfl) {
    if (d->shfl_xor) {
      tc_str_indent(o, in);
      tc_str_printf(o, "%s\n", d->unroll_pragma);
    }
    tc_str_indent(o, in);
    tc_str_printf(o, "for (int tc_o = %lld; tc_o > 0; tc_o >>= 1) {\n", (long long)((bx < wd ? bx : wd) / 2));
    if (d->shfl_xor) {
      tc_str_indent(o, in + 1);
      tc_str_cat(o, "const float ");
      for (int p = 0; p < 3; p++) {
        tc_str_printf(o, "%s = ", others[p]);
        tc_str_printf(o, d->shfl_xor, regs[p], "tc_o");
        tc_str_cat(o, p < 2 ? ", " : ";\n");
      }
    } else {
      store_scratch(o, "tc_rs", regs, in + 1);
      barrier(o, d, k, in + 1);
      load_others(o, "tc_rs ^ tc_o", in + 1);
    }
    merge(o, "((tc_rs & tc_o) == 0)", in + 1);
    if (!d->shfl_xor) barrier(o, d, k, in + 1);
    tc_str_indent(o, in);
    tc_str_cat(o, "}\n");
    if (bx > wd) {
      char at[96];
      tc_str_indent(o, in);
      tc_str_printf(o, "if (tc_rs %% %lld == 0) {\n", (long long)wd);
      snprintf(at, sizeof at, "tc_rs / %lld", (long long)wd);
      store_scratch(o, at, regs, in + 1);
      tc_str_indent(o, in);
      tc_str_cat(o, "}\n");
      barrier(o, d, k, in);
      tc_str_indent(o, in);
      snprintf(at, sizeof at, "(tc_rs - tidx) / %lld", (long long)wd);
      tc_str_printf(o, "tc_v = tc_red_wm[%s]; tc_q = tc_red_wq[%s]; tc_c = tc_red_wn[%s];\n", at, at, at);
      tc_str_indent(o, in);
      tc_str_printf(o, "for (int tc_i = 1; tc_i < %lld; ++tc_i) {\n", (long long)(bx / wd));
      snprintf(at, sizeof at, "(tc_rs - tidx) / %lld + tc_i", (long long)wd);
      load_others(o, at, in + 1);
      merge(o, NULL, in + 1);
      tc_str_indent(o, in);
      tc_str_cat(o, "}\n");
      barrier(o, d, k, in); /* before the scratch is written again */
    }
  } else {
    int64_t stride = ax == 0 ? 1 : ax == 1 ? bx : bx * by;
    while (p2 < r) p2 *= 2;
    char at[96];
    store_scratch(o, "tc_rs", regs, in);
    barrier(o, d, k, in);
    tc_str_indent(o, in);
    tc_str_printf(o, "for (int tc_s = %lld; tc_s > 0; tc_s >>= 1) {\n", (long long)(p2 / 2));
    tc_str_indent(o, in + 1);
    tc_str_printf(o, "if (tc_rr < tc_s && tc_rr + tc_s < %lld) {\n", (long long)r);
    snprintf(at, sizeof at, "tc_rs + tc_s * %lld", (long long)stride);
    load_others(o, at, in + 2);
    merge(o, NULL, in + 2);
    store_scratch(o, "tc_rs", regs, in + 2);
    tc_str_indent(o, in + 1);
    tc_str_cat(o, "}\n");
    barrier(o, d, k, in + 1);
    tc_str_indent(o, in);
    tc_str_cat(o, "}\n");
    tc_str_indent(o, in);
    snprintf(at, sizeof at, "tc_rs - tc_rr * %lld", (long long)stride);
    tc_str_printf(o, "tc_v = tc_red_wm[%s]; tc_q = tc_red_wq[%s]; tc_c = tc_red_wn[%s];\n", at, at, at);
    barrier(o, d, k, in); /* before the scratch is written again */
  }
  if (guarded) {
    tc_str_indent(o, in);
    tc_str_printf(o, "if (%s) {\n", tc_str_cstr(&pred));
  }
  store_state(o, d, w, tc_str_cstr(&idx), regs, guarded ? in + 1 : in);
  if (guarded) {
    tc_str_indent(o, in);
    tc_str_cat(o, "}\n");
  }
  tc_str_indent(o, depth);
  tc_str_cat(o, "}\n");
  for (int p = 0; p < 3; p++) tc_str_free(&st[p]);
  tc_str_free(&idx), tc_str_free(&pred);
}
