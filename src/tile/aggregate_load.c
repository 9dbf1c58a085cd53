/* aggregate_load.c - the aggregate-load pass of ROCm's Triton (docs/passes.md):
 * its version 1 (hoist all of A), version 1.1 (a mask on M rows, for MoE
 * gathers) and the "does not fit" item of its to-do list.
 *
 * Pattern: a K loop `scf.for` whose body has `tt.dot(a, b, acc)` with
 * a = tt.load(%a_ptrs [, mask [, other]]) and %a_ptrs a loop-carried pointer
 * tensor initialised to
 *     a_ptr + offs_m[:, None] * stride_m + offs_k[None, :] * stride_k
 * in exactly this IR shape (Triton's):
 *     %p1 = tt.addptr (tt.splat %a_ptr : BMx1), (offs_m * stride_m : BMx1)
 *     %ko = arith.muli (tt.expand_dims (tt.make_range 0..BK) axis 0),
 *                      (tt.splat %stride_k)                        : 1xBK
 *     %a_ptrs = tt.addptr (tt.broadcast %p1), (tt.broadcast %ko)   : BMxBK
 * and advanced by tt.addptr %a_ptrs, tt.splat(BK * stride_k) each iteration.
 * Legal when (1) the trip count is a compile-time constant (K constexpr),
 * (2) the address has the form above (offs_m is anything, e.g. a row
 * gather through sorted token ids), (3) the load's mask, if any, is a
 * loop-invariant broadcast of a BMx1 row mask (a mask on M, version 1.1)
 * and its `other` is a constant.
 *
 * Rewrite: before the loop, the same address with offs_k extended to the
 * whole K (make_range 0..K), one load of BM x K (the row mask broadcast
 * to it, masked rows reading `other`, i.e. zeros) and a local_alloc; in the
 * loop, the load of A becomes
 *     ttg.local_load (ttg.memdesc_subview %buf[0, s * BK])
 * with s the iteration's slice index, the offset counted from the
 * allocation itself (the original pass's bug: a base taken from a
 * previous slice made the second and later slices read the wrong
 * columns).  When BM x K
 * does not fit in the shared-memory limit next to the kernel's other
 * shared buffers (B's tile, the token ids), the loop is split: an outer
 * loop over chunks of the largest number of whole BLOCK_K slices that
 * fits, each loading its chunk (masked past K in a short last chunk)
 * between barriers, and an inner loop over the chunk's slices running the
 * original body.  Otherwise the kernel is left unchanged and the report
 * says why. */
#include <stdio.h>
#include <string.h>

#include "passes.h"

typedef struct agg {
  tc_tile_kernel *k;
  tc_tile_op *loop, *load, *yield;
  int ia;                    /* iteration argument of A's pointer */
  tc_tile_value *p1;         /* a_ptr + offs_m[:, None] * stride_m : BMx1 */
  tc_tile_value *stride_k;   /* NULL: offs_k is not multiplied (stride 1) */
  tc_tile_value *row_mask;   /* BMx1 or NULL */
  double other;
  int64_t bm, bk, lb, step, trips, ktot;
  tc_dtype dtype;
} agg;

static size_t dsize(tc_dtype t) { return t == TC_F16 || t == TC_BF16 ? 2 : t == TC_I8 ? 1 : 4; }

static int is_barg_of(const tc_tile_value *v, const tc_tile_op *loop) {
  return v && !v->def && v->owner == loop && v->index >= 1;
}

/* Finds the first K loop with a dot whose A operand is loaded from a
 * loop-carried pointer; 0 when there is none (why in *why). */
static int find(agg *G, const char **why) {
  int loops = 0;
  for (int i = 0; i < G->k->body.n; i++) {
    tc_tile_op *loop = G->k->body.ops[i];
    if (loop->kind != TC_TO_FOR) continue;
    loops++;
    for (int j = 0; j < loop->body.n; j++) {
      tc_tile_op *dot = loop->body.ops[j];
      if (dot->kind != TC_TO_DOT) continue;
      tc_tile_value *a = dot->in[0];
      if (!a->def || a->def->kind != TC_TO_LOAD || a->def->parent != loop) continue;
      if (!is_barg_of(a->def->in[0], loop)) continue;
      G->loop = loop;
      G->load = a->def;
      G->ia = a->def->in[0]->index - 1;
      G->yield = loop->body.ops[loop->body.n - 1];
      G->bm = a->type.shape[0];
      G->bk = a->type.shape[1];
      G->dtype = a->def->in[0]->type.dtype;
      return 1;
    }
  }
  *why = loops ? "no tt.dot in a top-level scf.for loads its A operand from a loop-carried pointer"
               : "the kernel has no scf.for (K) loop";
  return 0;
}

/* Names of the kernel arguments v depends on, appended to s. */
static void arg_deps(const tc_tile_value *v, tc_str *s, int depth) {
  if (!v || depth > 64) return;
  if (v->is_arg) {
    if (!strstr(tc_str_cstr(s), v->name)) tc_str_printf(s, "%s%s", s->len ? ", " : "", v->name);
    return;
  }
  if (v->def)
    for (int i = 0; i < v->def->nin; i++) arg_deps(v->def->in[i], s, depth + 1);
}

static tc_tile_op *def_of(const tc_tile_value *v, tc_tile_opkind kind) {
  return v && v->def && v->def->kind == kind ? v->def : NULL;
}

/* offs_k[None, :] * stride_k (or offs_k[None, :]) with offs_k = make_range(0, BK). */
static int match_k_offsets(agg *G, tc_tile_value *ko) {
  tc_tile_value *e = ko, *stride = NULL;
  tc_tile_op *mul = def_of(ko, TC_TO_MUL);
  if (mul) {
    for (int s = 0; s < 2 && !stride; s++) {
      tc_tile_op *sp = def_of(mul->in[1 - s], TC_TO_SPLAT);
      if (def_of(mul->in[s], TC_TO_EXPAND_DIMS) && sp) e = mul->in[s], stride = sp->in[0];
    }
    if (!stride) return 0;
  }
  tc_tile_op *ex = def_of(e, TC_TO_EXPAND_DIMS);
  tc_tile_op *r = ex ? def_of(ex->in[0], TC_TO_MAKE_RANGE) : NULL;
  if (!ex || ex->ival[0] != 0 || !r || r->ival[0] != 0 || r->ival[1] != G->bk) return 0;
  G->stride_k = stride;
  return 1;
}

/* The address of A (the loop's init value); 0 with the reason. */
static int match_address(agg *G, const char **why) {
  tc_tile_value *init = G->loop->in[3 + G->ia];
  tc_tile_op *top = def_of(init, TC_TO_ADDPTR);
  if (!top) {
    *why = "A's pointer tensor is not made by tt.addptr";
    return 0;
  }
  tc_tile_value *p = top->in[0], *o = top->in[1];
  tc_tile_op *ob = def_of(o, TC_TO_BROADCAST);
  tc_tile_value *oi = ob ? ob->in[0] : o;
  if (oi->type.shape[0] == 1 && oi->type.shape[1] == G->bk && G->bm > 1) {
    /* K offsets added last: the form wanted */
    tc_tile_op *pb = def_of(p, TC_TO_BROADCAST);
    tc_tile_value *p1 = pb ? pb->in[0] : p;
    tc_tile_op *add = def_of(p1, TC_TO_ADDPTR);
    if (p1->type.shape[0] != G->bm || p1->type.shape[1] != 1 || !add ||
        !def_of(add->in[0], TC_TO_SPLAT) || !add->in[0]->def->in[0]->is_arg) {
      *why = "A's address is not of the form a_ptr + offs_m[:, None] * stride_m + "
             "offs_k[None, :] * stride_k: the part before the K offsets is not "
             "tt.splat(a_ptr) + BLOCK_Mx1 row offsets";
      return 0;
    }
    if (!match_k_offsets(G, oi)) {
      *why = "A's K offsets are not offs_k[None, :] * stride_k with offs_k = "
             "tt.make_range(0, BLOCK_K)";
      return 0;
    }
    G->p1 = p1;
    return 1;
  }
  if (oi->type.shape[0] == G->bm && oi->type.shape[1] == 1 && G->bk > 1) {
    *why = "A's address adds the K offsets before the M offsets (a_ptr + offs_k[None, :] * "
           "stride_k + offs_m[:, None] * stride_m); the pass needs a_ptr + offs_m[:, None] * "
           "stride_m + offs_k[None, :] * stride_k";
    return 0;
  }
  if (!ob && def_of(p, TC_TO_SPLAT)) {
    *why = "A's M and K offsets are summed before they are added to the pointer (a_ptr + "
           "(offs_m[:, None] * stride_m + offs_k[None, :] * stride_k)); the pass needs a_ptr + "
           "offs_m[:, None] * stride_m + offs_k[None, :] * stride_k, without the parentheses";
    return 0;
  }
  *why = "A's address is not of the form a_ptr + offs_m[:, None] * stride_m + offs_k[None, :] * "
         "stride_k";
  return 0;
}

/* The advance: yield = tt.addptr(barg, tt.splat(BK * stride_k)). */
static int match_advance(agg *G, const char **why) {
  tc_tile_value *ba = G->loop->bargs[G->ia + 1];
  tc_tile_op *adv = def_of(G->yield->in[G->ia], TC_TO_ADDPTR);
  tc_tile_op *sp = adv ? def_of(adv->in[1], TC_TO_SPLAT) : NULL;
  if (!adv || adv->in[0] != ba || !sp) {
    *why = "A's pointer is not advanced by tt.addptr(a_ptrs, tt.splat(BLOCK_K * stride_k)) in "
           "each iteration";
    return 0;
  }
  tc_tile_value *s = sp->in[0];
  int64_t sv, kv = 1;
  int ok = 0;
  if (tc_tile_const_value(s, &sv) && (!G->stride_k || tc_tile_const_value(G->stride_k, &kv)))
    ok = sv == G->bk * kv;
  tc_tile_op *mul = def_of(s, TC_TO_MUL);
  for (int i = 0; mul && i < 2 && !ok; i++) {
    int64_t c;
    ok = mul->in[1 - i] == G->stride_k && tc_tile_const_value(mul->in[i], &c) && c == G->bk;
  }
  if (!ok) {
    *why = "A's pointer advances by something other than BLOCK_K * stride_k per iteration";
    return 0;
  }
  int uses = tc_tile_use_count(G->k, ba);
  if (uses != 2 || tc_tile_use_count(G->k, G->load->out[0]) < 1) {
    *why = "A's loop-carried pointer has uses other than its load and its advance";
    return 0;
  }
  return 1;
}

/* Bytes of the shared buffers the kernel has besides A's load. */
static int64_t other_smem(const tc_tile_kernel *k, const tc_tile_block *b, const tc_tile_op *skip) {
  int64_t n = 0;
  for (int i = 0; i < b->n; i++) {
    const tc_tile_op *op = b->ops[i];
    if (op->kind == TC_TO_LOAD && op != skip)
      n += tc_tile_type_elems(&op->out[0]->type) * (int64_t)dsize(op->in[0]->type.dtype);
    if (op->kind == TC_TO_LOCAL_ALLOC) {
      const tc_tile_value *src = op->in[0];
      if (!(src->def && src->def->kind == TC_TO_LOAD && tc_tile_use_count(k, src) == 1))
        n += tc_tile_type_elems(&src->type) * (int64_t)dsize(op->out[0]->type.dtype);
    }
    if (op->kind == TC_TO_FOR) n += other_smem(k, &op->body, skip);
  }
  return n;
}

/* Builds, at the insertion point, the load of columns [kbase, kbase + n)
 * of A (kbase NULL: 0) into shared memory; mask_past_k masks columns at or
 * past K. */
static tc_tile_value *aggregated_load(agg *G, tc_tile_value *kbase, int64_t n, int mask_past_k) {
  tc_tile_kernel *k = G->k;
  int64_t sh1[1] = {n}, row[2] = {1, n}, full[2] = {G->bm, n};
  tc_tile_value *kr = tc_tile_make_range(k, 0, n);
  if (kbase) kr = tc_tile_binary(k, TC_TO_ADD, kr, tc_tile_splat(k, kbase, 1, sh1));
  tc_tile_value *ke = tc_tile_expand_dims(k, kr, 0);
  tc_tile_value *ks = ke;
  if (G->stride_k) ks = tc_tile_binary(k, TC_TO_MUL, ke, tc_tile_splat(k, G->stride_k, 2, row));
  tc_tile_value *ptrs = tc_tile_addptr(k, tc_tile_broadcast(k, G->p1, G->bm, n),
                                       tc_tile_broadcast(k, ks, G->bm, n));
  tc_tile_value *mask = G->row_mask ? tc_tile_broadcast(k, G->row_mask, G->bm, n) : NULL;
  if (mask_past_k) {
    tc_tile_value *in_k = tc_tile_binary(k, TC_TO_LT, tc_tile_broadcast(k, ke, G->bm, n),
                                         tc_tile_splat(k, tc_tile_const_int(k, G->ktot), 2, full));
    mask = mask ? tc_tile_binary(k, TC_TO_AND, mask, in_k) : in_k;
  }
  tc_tile_value *other =
      mask ? tc_tile_const_tensor(k, TC_TK_FLOAT, G->dtype, 2, full, G->other) : NULL;
  return tc_tile_local_alloc(k, tc_tile_load(k, ptrs, mask, other));
}

/* Replaces A's load (in block b of loop `in`) by a local_load of the BMxBK
 * window at column `slice * BK` of buf. */
static void replace_load(agg *G, tc_tile_value *buf, tc_tile_value *slice, tc_tile_block *b,
                         tc_tile_op *in, int emulate_bug) {
  tc_tile_kernel *k = G->k;
  int pos = 0;
  while (pos < b->n && b->ops[pos] != G->load) pos++;
  tc_tile_set_insertion(k, b, pos, in);
  tc_tile_value *off = emulate_bug ? tc_tile_const_int(k, 0)
                                   : tc_tile_binary(k, TC_TO_MUL, slice, tc_tile_const_int(k, G->bk));
  tc_tile_value *view = tc_tile_subview(k, buf, tc_tile_const_int(k, 0), off, G->bm, G->bk);
  tc_tile_value *a = tc_tile_local_load(k, view);
  if (!a) return;
  tc_tile_replace_uses(k, G->load->out[0], a);
  tc_tile_remove_op(k, G->load);
}

/* The slice index of the original induction variable iv: (iv - lb) / step. */
static tc_tile_value *slice_of(agg *G, tc_tile_value *iv) {
  tc_tile_kernel *k = G->k;
  tc_tile_value *s = iv;
  if (G->lb) s = tc_tile_binary(k, TC_TO_SUB, s, tc_tile_const_int(k, G->lb));
  if (G->step != 1) s = tc_tile_binary(k, TC_TO_DIV, s, tc_tile_const_int(k, G->step));
  return s;
}

static void rewrite_single(agg *G, int emulate_bug) {
  tc_tile_kernel *k = G->k;
  tc_tile_block *b;
  int pos = tc_tile_op_position(k, G->loop, &b);
  tc_tile_set_insertion(k, b, pos, G->loop->parent);
  tc_tile_value *buf = aggregated_load(G, NULL, G->ktot, 0);
  tc_tile_block *body = &G->loop->body;
  int lpos = 0;
  while (lpos < body->n && body->ops[lpos] != G->load) lpos++;
  tc_tile_set_insertion(k, body, lpos, G->loop);
  tc_tile_value *slice = slice_of(G, G->loop->bargs[0]);
  replace_load(G, buf, slice, body, G->loop, emulate_bug);
}

static void rewrite_chunked(agg *G, int64_t spc, int64_t nchunks, int emulate_bug) {
  tc_tile_kernel *k = G->k;
  tc_tile_op *loop = G->loop;
  int n = loop->nout;
  tc_tile_block *b;
  int pos = tc_tile_op_position(k, loop, &b);
  tc_tile_set_insertion(k, b, pos, loop->parent);
  tc_tile_op *outer = tc_tile_for_begin(k, tc_tile_const_int(k, 0), tc_tile_const_int(k, nchunks),
                                        tc_tile_const_int(k, 1), n, loop->in + 3);
  if (!outer) return;
  tc_tile_value *c = outer->bargs[0];
  tc_tile_value *first = tc_tile_binary(k, TC_TO_MUL, c, tc_tile_const_int(k, spc));
  tc_tile_value *kbase = tc_tile_binary(k, TC_TO_MUL, c, tc_tile_const_int(k, spc * G->bk));
  int tail = G->trips % spc != 0;
  tc_tile_value *buf = aggregated_load(G, kbase, spc * G->bk, tail);
  tc_tile_value *ub = tc_tile_const_int(k, spc);
  if (tail)
    ub = tc_tile_binary(k, TC_TO_MIN, ub,
                        tc_tile_binary(k, TC_TO_SUB, tc_tile_const_int(k, G->trips), first));
  tc_tile_op *inner = tc_tile_for_begin(k, tc_tile_const_int(k, 0), ub, tc_tile_const_int(k, 1), n,
                                        outer->bargs + 1);
  if (!inner) return;
  tc_tile_value *j = inner->bargs[0];
  /* the original induction variable: lb + (chunk * spc + j) * step */
  tc_tile_value *iv = tc_tile_binary(k, TC_TO_ADD, first, j);
  if (G->step != 1) iv = tc_tile_binary(k, TC_TO_MUL, iv, tc_tile_const_int(k, G->step));
  if (G->lb) iv = tc_tile_binary(k, TC_TO_ADD, iv, tc_tile_const_int(k, G->lb));
  if (!iv) return;
  /* move the original body (its yield included) into the inner loop */
  for (int i = 0; i < loop->body.n; i++) {
    tc_tile_op *op = loop->body.ops[i];
    op->parent = inner;
    TC_PUSH(inner->body.ops, inner->body.n, inner->body.cap, op);
  }
  loop->body.n = 0;
  tc_tile_replace_uses(k, loop->bargs[0], iv);
  for (int i = 0; i < n; i++) tc_tile_replace_uses(k, loop->bargs[i + 1], inner->bargs[i + 1]);
  replace_load(G, buf, j, &inner->body, inner, emulate_bug);
  tc_tile_set_insertion(k, &outer->body, outer->body.n, outer);
  tc_tile_for_end(k, outer, n, inner->out);
  for (int i = 0; i < n; i++) tc_tile_replace_uses(k, loop->out[i], outer->out[i]);
  tc_tile_remove_op(k, loop);
}

int tc_tile_aggregate_load(tc_tile_kernel *k, int64_t smem_limit, int emulate_bug) {
  static const char *P = "aggregate-load";
  if (!k || k->err[0]) {
    if (k) tc_tile_add_report(k, P, 0, "the kernel has a builder error: %s", k->err);
    return 0;
  }
  agg G;
  memset(&G, 0, sizeof G);
  G.k = k;
  const char *why = NULL;
  if (!find(&G, &why)) {
    tc_tile_add_report(k, P, 0, "%s", why);
    return 0;
  }
  /* (1) K is a compile-time constant: the loop's trip count is */
  int64_t ub;
  if (!tc_tile_const_value(G.loop->in[0], &G.lb) || !tc_tile_const_value(G.loop->in[1], &ub) ||
      !tc_tile_const_value(G.loop->in[2], &G.step)) {
    tc_str deps;
    tc_str_init(&deps);
    for (int i = 0; i < 3; i++) arg_deps(G.loop->in[i], &deps, 0);
    if (deps.len)
      tc_tile_add_report(k, P, 0, "K is not a compile-time constant: the K loop's bounds depend "
                                  "on the run-time argument%s %s", strchr(deps.buf, ',') ? "s" : "",
                         deps.buf);
    else
      tc_tile_add_report(k, P, 0, "K is not a compile-time constant: the K loop's bounds are "
                                  "computed at run time");
    tc_str_free(&deps);
    return 0;
  }
  if (G.step <= 0 || ub <= G.lb) {
    tc_tile_add_report(k, P, 0, "the K loop runs no iteration or has a step <= 0");
    return 0;
  }
  G.trips = (ub - G.lb + G.step - 1) / G.step;
  G.ktot = G.trips * G.bk;
  /* (3) no mask on K: a mask is a loop-invariant BMx1 row mask broadcast */
  if (G.load->nin >= 2) {
    tc_tile_value *m = G.load->in[1];
    tc_tile_op *mb = def_of(m, TC_TO_BROADCAST);
    tc_tile_value *mi = mb ? mb->in[0] : m;
    if (tc_tile_defined_in(m, G.loop)) {
      tc_tile_add_report(k, P, 0, "the load of A is masked along K: its mask is computed inside "
                                  "the K loop (it changes with k); only a loop-invariant mask on "
                                  "the M rows is supported");
      return 0;
    }
    if (mi->type.shape[0] != G.bm || mi->type.shape[1] != 1) {
      tc_tile_add_report(k, P, 0, "the load of A is masked along K: its mask is not a broadcast "
                                  "of a BLOCK_Mx1 row mask");
      return 0;
    }
    G.row_mask = mi;
    if (G.load->nin >= 3) {
      tc_tile_op *c = def_of(G.load->in[2], TC_TO_CONST);
      if (!c) {
        tc_tile_add_report(k, P, 0, "the `other` value of A's masked load is not a constant");
        return 0;
      }
      G.other = c->fval;
    }
  }
  /* (2) the address form, then the advance */
  if (!match_address(&G, &why) || !match_advance(&G, &why)) {
    tc_tile_add_report(k, P, 0, "%s", why);
    return 0;
  }
  /* shared memory: A next to the other buffers */
  size_t es = dsize(G.dtype);
  int64_t a_bytes = G.bm * G.ktot * (int64_t)es, slice = G.bm * G.bk * (int64_t)es;
  int64_t other = other_smem(k, &k->body, G.load), avail = smem_limit - other;
  const char *dt = G.dtype == TC_F16 ? "f16" : "f32";
  char rows[160] = "";
  if (G.row_mask)
    snprintf(rows, sizeof rows, "; rows masked by the M mask read %g", G.other);
  if (a_bytes <= avail) {
    rewrite_single(&G, emulate_bug);
    if (k->err[0]) {
      tc_tile_add_report(k, P, 0, "internal error while rewriting: %s", k->err);
      return 0;
    }
    tc_tile_add_report(k, P, 1, "hoisted the loads of A (%lldx%lld %s, %lld bytes) out of the K "
                                "loop into one shared buffer; each of the %lld iterations reads "
                                "the %lldx%lld slice at column k*%lld%s; chunks=1 (limit %lld "
                                "bytes, other shared buffers %lld bytes)",
                       (long long)G.bm, (long long)G.ktot, dt, (long long)a_bytes,
                       (long long)G.trips, (long long)G.bm, (long long)G.bk, (long long)G.bk, rows,
                       (long long)smem_limit, (long long)other);
    return 1;
  }
  int64_t spc = avail > 0 ? avail / slice : 0;
  if (spc < 1) {
    tc_tile_add_report(k, P, 0, "not even one BLOCK_K slice of A (%lldx%lld %s, %lld bytes) fits "
                                "in the shared-memory limit of %lld bytes next to the kernel's "
                                "other shared buffers (%lld bytes)",
                       (long long)G.bm, (long long)G.bk, dt, (long long)slice,
                       (long long)smem_limit, (long long)other);
    return 0;
  }
  int64_t nchunks = (G.trips + spc - 1) / spc;
  rewrite_chunked(&G, spc, nchunks, emulate_bug);
  if (k->err[0]) {
    tc_tile_add_report(k, P, 0, "internal error while rewriting: %s", k->err);
    return 0;
  }
  tc_tile_add_report(k, P, 1, "A (%lldx%lld %s, %lld bytes) does not fit in the shared-memory "
                              "limit of %lld bytes next to the other shared buffers (%lld bytes): "
                              "split into chunks=%lld of up to %lld BLOCK_K slices (%lldx%lld, "
                              "%lld bytes), each loaded into shared memory between barriers before "
                              "its %lld iterations%s%s",
                     (long long)G.bm, (long long)G.ktot, dt, (long long)a_bytes,
                     (long long)smem_limit, (long long)other, (long long)nchunks, (long long)spc,
                     (long long)G.bm, (long long)(spc * G.bk), (long long)(spc * slice),
                     (long long)spc, G.trips % spc ? " (fewer in the last chunk)" : "", rows);
  return 1;
}
