/* tma_cuda.c - bulk tensor (TMA) copies for the CUDA dialect (lowered by
 * src/lower/tma.c, sm_90 and later).
 *
 * Every global tensor a bulk copy touches gets a kernel parameter
 * `const __grid_constant__ tc_tmap tc_tmap_<name>`, a CUtensorMap (128
 * bytes, 64-byte aligned) that the host encodes with
 * cuTensorMapEncodeTiled (docs/ldmatrix.md).  A load: thread tidx == 0
 * of each TIDy/TIDz row arms the statement's mbarrier with the bytes it
 * will bring (arrive.expect_tx) and issues one
 * cp.async.bulk.tensor.2d ... mbarrier::complete_tx::bytes per box; every
 * thread then waits for the barrier's phase (try_wait.parity) and flips
 * its parity.  A store: every thread fences its shared-memory writes
 * into the async proxy, a block barrier, then thread tidx == 0 of each
 * row issues one cp.async.bulk.tensor.2d global <- shared per box,
 * commits the bulk group and waits for it: until the copies have read
 * shared memory (wait_group.read), or, where a statement of the kernel
 * reads the global tensor, until they have written it.
 *
 * A copy of a ring of bulk tensor copies (src/lower/circular.c) arms its
 * slot's mbarrier (tc_tma_bar[bar + slot]) and issues its boxes, under
 * its guard (the tile inside the ring loop), and does not wait: the ring
 * loop waits at the top of each iteration for its tile's phase
 * (tc_cu_tma_wait, the same try_wait loop with the parity of the slot's
 * use count).  A ring's mbarriers expect one arrival per copy statement
 * of the ring and issuing row. */
#include <stdio.h>
#include <string.h>

#include "dialect.h"
#include "../lower/tma.h"
#include "../lower/tmap.h"

const char tc_cu_tma_prelude[] =
    /* CUDA 13's cuda.h aligns CUtensorMap to 128 bytes (the copy engine
     * needs 64): the kernel parameter is laid out the same way */
    "struct __align__(128) tc_tmap { unsigned long long opaque[16]; };  /* CUtensorMap */\n"
    "TC_DEV unsigned tc_tma_u32(const void *p) {\n"
    "  unsigned a;\n"
    "  asm(\"{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }\" : \"=r\"(a) : \"l\"((unsigned long long)p));\n"
    "  return a;\n"
    "}\n";

static const tc_tensor *tma_global(const tc_knode *s) {
  return s->stmt.tma.kind == TC_TMA_LOAD ? s->stmt.op->in[0] : s->stmt.op->out;
}

#define MAX_TMA_STMTS 64

/* The TMA statements, in order (at most MAX_TMA_STMTS). */
typedef struct tma_list {
  const tc_knode **st;
  int n;
} tma_list;

static int collect(tc_knode *n, void *ctx) {
  tma_list *l = ctx;
  if (n->stmt.tma.kind && l->n < MAX_TMA_STMTS) l->st[l->n++] = n;
  return 0;
}

/* The TMA statements of k in program order (at most MAX_TMA_STMTS) and,
 * in first[], the first of each distinct global tensor: the kernel's
 * tensor-map parameters, in order.  Returns the number of those. */
static int tma_maps_of(const tc_kir *k, const tc_knode **st, int *nst, const tc_knode **first) {
  tma_list l = {st, 0};
  tc_knode_each_stmt(k->root, collect, &l);
  *nst = l.n;
  int n = 0;
  for (int i = 0; i < *nst; i++) {
    const tc_tensor *g = tma_global(st[i]);
    bool dup = false;
    for (int j = 0; j < i; j++) dup |= tma_global(st[j]) == g;
    if (!dup) first[n++] = st[i];
  }
  return n;
}

void tc_cu_tma_params(tc_str *o, const tc_kir *k) {
  const tc_knode *st[MAX_TMA_STMTS], *first[MAX_TMA_STMTS];
  int nst, n = tma_maps_of(k, st, &nst, first);
  for (int i = 0; i < n; i++)
    tc_str_printf(o, ", const __grid_constant__ tc_tmap tc_tmap_%s", tma_global(first[i])->name);
}

int tc_cu_tma_maps(const tc_kir *k, tc_rt_tmap *maps, int cap, tc_str *why) {
  if (k->ntma > MAX_TMA_STMTS) {
    tc_str_printf(why, "the kernel has %d bulk tensor copies; at most %d have tensor maps",
                  k->ntma, MAX_TMA_STMTS);
    return -1;
  }
  const tc_knode *st[MAX_TMA_STMTS], *first[MAX_TMA_STMTS];
  int nst, n = tma_maps_of(k, st, &nst, first);
  if (n > cap) {
    tc_str_printf(why, "the kernel needs %d tensor maps; at most %d fit", n, cap);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    const tc_knode *s = first[i];
    const tc_tensor *g = tma_global(s);
    /* every copy of g goes through the one map: same box and swizzle */
    for (int j = 0; j < nst; j++) {
      const tc_knode *o = st[j];
      if (tma_global(o) != g) continue;
      if (o->stmt.tma.rows != s->stmt.tma.rows || o->stmt.tma.cols != s->stmt.tma.cols ||
          o->stmt.tma.swizzle != s->stmt.tma.swizzle) {
        tc_str_printf(why,
                      "the bulk copies of %s use boxes %lldx%lld (%dB swizzle) and %lldx%lld (%dB "
                      "swizzle), but the kernel passes one tensor map per global tensor",
                      g->name, (long long)s->stmt.tma.rows, (long long)s->stmt.tma.cols, s->stmt.tma.swizzle,
                      (long long)o->stmt.tma.rows, (long long)o->stmt.tma.cols, o->stmt.tma.swizzle);
        return -1;
      }
    }
    int param = -1;
    for (int p = 0; p < k->nparams; p++)
      if (k->params[p] == g) param = p;
    if (param < 0) {
      tc_str_printf(why, "the bulk copies of %s touch a global tensor that is no kernel parameter",
                    g->name);
      return -1;
    }
    /* src/lower/tma.c addresses element (row, col) of the buffer seen as
     * rows of the innermost logical extent: row = index / N, col = index % N */
    uint64_t elem = tc_dtype_size(g->dtype);
    uint64_t cols = (uint64_t)k->f->g.axes[g->logical[1]].extent;
    uint64_t rows = (uint64_t)tc_tensor_bytes(g) / elem / cols;
    tc_rt_tmap *m = &maps[i];
    *m = (tc_rt_tmap){0};
    m->buffer = param;
    m->dtype = g->dtype;
    m->rank = 2;
    m->dims[0] = cols, m->dims[1] = rows;
    m->strides[1] = cols * elem;
    m->box[0] = (uint32_t)s->stmt.tma.cols, m->box[1] = (uint32_t)s->stmt.tma.rows;
    m->swizzle = s->stmt.tma.swizzle;
  }
  return n;
}

void tc_cu_tma_setup(tc_str *o, const tc_kir *k) {
  if (k->ntma_bars == 0) return;
  tc_str_printf(o, "  __shared__ __align__(8) unsigned long long tc_tma_bar[%d];\n", k->ntma_bars);
  int own = k->ntma_bars; /* the statements' own mbarriers (the rings' are waited by parity) */
  for (int r = 0; r < k->nrings_bulk; r++) own -= k->ring_stages[r];
  if (own) tc_str_printf(o, "  unsigned tc_tma_phase[%d] = {0};\n", k->ntma_bars);
  tc_str_cat(o, "  if (tidx == 0 && tidy == 0 && tidz == 0) {\n");
  for (int b = 0; b < k->ntma_bars; b++) {
    int64_t arrivals = 1; /* per issuing row: one per copy that arms it */
    bool slot = false;
    for (int r = 0; r < k->nrings_bulk; r++)
      if (b >= k->ring_bar[r] && b < k->ring_bar[r] + k->ring_stages[r]) arrivals = k->ring_arrivals[r], slot = true;
    tc_str_printf(o,
                  "    asm volatile(\"mbarrier.init.shared::cta.b64 [%%0], %%1;\" :: \"r\"(tc_tma_u32(&tc_tma_bar[%d])), "
                  "\"r\"(%lld) : \"memory\");%s\n",
                  b, (long long)(arrivals * k->block[1] * k->block[2]),
                  slot ? "  /* a ring slot: one arrival per copy and row */" : "");
  }
  tc_str_cat(o, "    asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");\n");
  tc_str_cat(o, "  }\n  __syncthreads();\n");
}

static void open_issue_loops(tc_str *o, const tc_kir *k, const tc_knode *s, int depth) {
  for (int i = 0; i < s->stmt.tma.nissue; i++) {
    const char *v = tc_e_var_name(k->pool, (int)s->stmt.tma.issue[i]->loop.var->val);
    tc_str_indent(o, depth + i);
    tc_str_printf(o, "for (int %s = 0; %s < %lld; ++%s) {  /* one box each */\n", v, v,
                  (long long)s->stmt.tma.issue[i]->loop.extent, v);
  }
}

static void close_issue_loops(tc_str *o, const tc_knode *s, int depth) {
  for (int i = s->stmt.tma.nissue - 1; i >= 0; i--) {
    tc_str_indent(o, depth + i);
    tc_str_cat(o, "}\n");
  }
}

/* 1 if statement n reads tensor ctx (tc_knode_each_stmt: does any?) */
static int reads(tc_knode *n, void *ctx) {
  for (int i = 0; n->stmt.op && i < n->stmt.op->nin; i++)
    if (n->stmt.op->in[i] == ctx) return 1;
  return 0;
}

/* Waits until mbarrier bar (a shared variable) has completed the phase
 * of parity `parity` (mbarrier.try_wait.parity, retried). */
static void print_wait(tc_str *o, const char *bar, const char *parity, int depth) {
  tc_str_indent(o, depth);
  tc_str_printf(o, "for (unsigned tc_done = 0; !tc_done;)  /* wait for the boxes */\n");
  tc_str_indent(o, depth + 1);
  tc_str_printf(o,
                "asm volatile(\"{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%%1], %%2; "
                "selp.u32 %%0, 1, 0, p; }\" : \"=r\"(tc_done) : \"r\"(tc_tma_u32(&%s)), "
                "\"r\"(%s) : \"memory\");\n",
                bar, parity);
}

void tc_cu_tma_copy(tc_str *o, const tc_kir *k, const tc_knode *s, int depth) {
  bool load = s->stmt.tma.kind == TC_TMA_LOAD;
  const tc_tensor *g = tma_global(s), *sm = load ? s->stmt.op->out : s->stmt.op->in[0];
  int64_t boxes = 1;
  for (int i = 0; i < s->stmt.tma.nissue; i++) boxes *= s->stmt.tma.issue[i]->loop.extent;
  int64_t box_bytes = s->stmt.tma.rows * s->stmt.tma.cols * (int64_t)tc_dtype_size(g->dtype);
  tc_str row, col, sh;
  tc_str_init(&row), tc_str_init(&col), tc_str_init(&sh);
  tc_e_print_c(&row, k->pool, s->stmt.tma.row);
  tc_e_print_c(&col, k->pool, s->stmt.tma.col);
  tc_e_print_c(&sh, k->pool, s->stmt.tma.smem);
  /* the mbarrier: the statement's own, or its ring slot's */
  tc_str bar, guard;
  tc_str_init(&bar), tc_str_init(&guard);
  tc_str_printf(&bar, "tc_tma_bar[%d", s->stmt.tma.bar);
  if (s->stmt.tma.bar_slot) {
    tc_str_cat(&bar, " + (");
    tc_e_print_c(&bar, k->pool, s->stmt.tma.bar_slot);
    tc_str_cat(&bar, ")");
  }
  tc_str_cat(&bar, "]");
  if (s->stmt.tma.guard) tc_e_print_c(&guard, k->pool, s->stmt.tma.guard);
  tc_str_indent(o, depth);
  tc_str_printf(o, "{  /* %s = %s: cp.async.bulk.tensor.2d, %lld box%s of %lld x %lld, %dB swizzle */\n",
                s->stmt.op->out->name, s->stmt.op->in[0]->name, (long long)boxes, boxes == 1 ? "" : "es",
                (long long)s->stmt.tma.rows, (long long)s->stmt.tma.cols, s->stmt.tma.swizzle);
  int d = depth + 1;
  if (!load) {
    tc_str_indent(o, d);
    tc_str_cat(o, "asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n");
    tc_str_indent(o, d);
    tc_str_cat(o, "__syncthreads();\n");
  }
  tc_str_indent(o, d);
  if (s->stmt.tma.guard) tc_str_printf(o, "if (tidx == 0 && (%s)) {\n", tc_str_cstr(&guard));
  else tc_str_cat(o, "if (tidx == 0) {\n");
  if (load) {
    tc_str_indent(o, d + 1);
    tc_str_cat(o, "asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n");
    tc_str_indent(o, d + 1);
    tc_str_printf(o,
                  "asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%%0], %%1;\" :: "
                  "\"r\"(tc_tma_u32(&%s)), \"r\"(%lld) : \"memory\");\n",
                  tc_str_cstr(&bar), (long long)(boxes * box_bytes));
  }
  open_issue_loops(o, k, s, d + 1);
  int in = d + 1 + s->stmt.tma.nissue;
  tc_str_indent(o, in);
  if (load)
    tc_str_printf(o,
                  "asm volatile(\"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
                  "[%%0], [%%1, {%%2, %%3}], [%%4];\"\n");
  else
    tc_str_printf(o,
                  "asm volatile(\"cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%%0, {%%1, %%2}], [%%3];\"\n");
  tc_str_indent(o, in + 2);
  if (load)
    tc_str_printf(o,
                  ":: \"r\"(tc_tma_u32(&%s[%s])), \"l\"((unsigned long long)&tc_tmap_%s), \"r\"(%s), \"r\"(%s), "
                  "\"r\"(tc_tma_u32(&%s))\n",
                  sm->name, tc_str_cstr(&sh), g->name, tc_str_cstr(&col), tc_str_cstr(&row), tc_str_cstr(&bar));
  else
    tc_str_printf(o,
                  ":: \"l\"((unsigned long long)&tc_tmap_%s), \"r\"(%s), \"r\"(%s), \"r\"(tc_tma_u32(&%s[%s]))\n",
                  g->name, tc_str_cstr(&col), tc_str_cstr(&row), sm->name, tc_str_cstr(&sh));
  tc_str_indent(o, in + 2);
  tc_str_cat(o, ": \"memory\");\n");
  close_issue_loops(o, s, d + 1);
  if (!load) {
    tc_str_indent(o, d + 1);
    tc_str_cat(o, "asm volatile(\"cp.async.bulk.commit_group;\" ::: \"memory\");\n");
    /* the shared tile may be rewritten (or the block exit) once the copies
     * have read it; their writes land before the kernel ends, which is all
     * a kernel that never reads the tensor back needs */
    tc_str_indent(o, d + 1);
    tc_str_cat(o, tc_knode_each_stmt(k->root, reads, (void *)g) ? "asm volatile(\"cp.async.bulk.wait_group 0;\" ::: \"memory\");\n"
                                    : "asm volatile(\"cp.async.bulk.wait_group.read 0;\" ::: "
                                      "\"memory\");\n");
  }
  tc_str_indent(o, d);
  tc_str_cat(o, "}\n");
  if (load && !s->stmt.tma.bar_slot) {
    char phase[32];
    snprintf(phase, sizeof phase, "tc_tma_phase[%d]", s->stmt.tma.bar);
    print_wait(o, tc_str_cstr(&bar), phase, d);
    tc_str_indent(o, d);
    tc_str_printf(o, "tc_tma_phase[%d] ^= 1u;\n", s->stmt.tma.bar);
  }
  tc_str_indent(o, depth);
  tc_str_cat(o, "}\n");
  tc_str_free(&row), tc_str_free(&col), tc_str_free(&sh), tc_str_free(&bar), tc_str_free(&guard);
}

void tc_cu_tma_wait(tc_str *o, const tc_kir *k, const tc_knode *n, int depth) {
  tc_str bar, parity;
  tc_str_init(&bar), tc_str_init(&parity);
  tc_str_printf(&bar, "tc_tma_bar[%d + (", n->mbar_base);
  tc_e_print_c(&bar, k->pool, n->mbar_slot);
  tc_str_cat(&bar, ")]");
  tc_str_cat(&parity, "(unsigned)(");
  tc_e_print_c(&parity, k->pool, n->mbar_parity);
  tc_str_cat(&parity, ")");
  print_wait(o, tc_str_cstr(&bar), tc_str_cstr(&parity), depth);
  tc_str_free(&bar), tc_str_free(&parity);
}
