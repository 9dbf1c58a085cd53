/* matmul.c - the matmul op: C[m, n] = sum_k A[m, k] * B[k, n], with an
 * optional leading batch axis.
 *
 * In the fusion it is three tensors (nvFuser's broadcast form of MmaOp):
 * the operands seen as [M, 1, K] and [1, N, K] (broadcast views of a and
 * b, with any tc_permute of them folded in), the accumulator
 * P = TC_OP_MATMUL(a', b') of logical domain [M, N, rK] (K a reduction
 * axis, extent 1 to consumers as tc_reduce's are), and the result
 * [M, N], P with the reduced axis dropped.  All three share the axes M,
 * N and K by position, so split / reorder / compute_at relate them like
 * any pointwise op's operands. */
#include <string.h>

#include "fusion.h"

static bool owned(tc_fusion *f, const tc_tensor *t) {
  return t && t->f == f && t->id >= 0 && t->id < f->ntensors && f->tensors[t->id] == t;
}

/* An op of one tensor operand that maps each element to one: a cast, a
 * unary op, a binary op with a constant scalar. */
static bool elementwise1(const tc_op *d) {
  return d->kind == TC_OP_CAST || d->kind == TC_OP_UNARY ||
         (d->kind == TC_OP_BINARY && d->has_scalar && !d->scalar_in);
}

/* A view of x (rank r) as an operand of rank r + 1: out axis j reads
 * x's axis map[j] (-1: a new axis of extent 1).  A permute of a tensor
 * is read through: the view reads the permute's source.  So is a chain
 * of elementwise1 ops and permutes (at most 8) over a fusion input (the
 * operand's prologue, a cast of f32 to f16 say): the view reads the
 * input and the chain's elementwise ops are made again on the view, so
 * that the matmul's operand tile computes them as it is staged. */
static tc_tensor *operand_view(tc_fusion *f, tc_tensor *x, const int *map, int nout) {
  int perm[16], p2[16];
  for (int j = 0; j < nout; j++) perm[j] = p2[j] = map[j];
  if (x->def && x->def->kind == TC_OP_PERMUTE && !x->is_output) {
    for (int j = 0; j < nout; j++)
      if (perm[j] >= 0) perm[j] = p2[j] = x->def->perm[perm[j]];
    x = x->def->in[0];
  }
  /* the prologue: permutes fold into the view (an elementwise op commutes
   * with them), the other ops are made again on it */
  const tc_op *chain[8];
  int n = 0;
  tc_tensor *y = x;
  while (n < 8 && y->def && !y->is_output) {
    if (y->def->kind == TC_OP_PERMUTE) {
      for (int j = 0; j < nout; j++)
        if (p2[j] >= 0) p2[j] = y->def->perm[p2[j]];
    } else if (elementwise1(y->def)) {
      chain[n++] = y->def;
    } else {
      break;
    }
    y = y->def->in[0];
  }
  if (n && y->is_input) {
    x = y;
    memcpy(perm, p2, sizeof perm);
  } else {
    n = 0;
  }
  int64_t shape[16] = {0};
  for (int j = 0; j < nout; j++) shape[j] = perm[j] < 0 ? 1 : tc_logical_extent(x, perm[j]);
  tc_tensor *v = tc_tensor_new(f, x->dtype, nout, shape);
  tc_op *op = tc_op_new(f, TC_OP_BROADCAST, 0, x, NULL, v);
  for (int j = 0; j < nout; j++) op->perm[j] = perm[j];
  for (int i = n - 1; i >= 0; i--) {
    tc_tensor *w = tc_tensor_like(f, v, NULL, chain[i]->out->dtype);
    tc_op *e = tc_op_new(f, chain[i]->kind, chain[i]->sub, v, NULL, w);
    e->has_scalar = chain[i]->has_scalar, e->scalar = chain[i]->scalar;
    e->scalar_left = chain[i]->scalar_left;
    v = w;
  }
  return v;
}

tc_tensor *tc_matmul(tc_fusion *f, tc_tensor *a, tc_tensor *b) {
  tc_clear_error(f);
  if (!owned(f, a) || !owned(f, b))
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_matmul: operand is not a tensor of this fusion"), NULL;
  int r = a->nlogical;
  if ((r != 2 && r != 3) || b->nlogical != r)
    return tc_fail(f, TC_ERR_ARGUMENT,
                   "tc_matmul: %s has rank %d and %s rank %d; give [M, K] x [K, N] or, with a "
                   "batch axis, [B, M, K] x [B, K, N]", a->name, a->nlogical, b->name, b->nlogical),
           NULL;
  for (int k = 0; k < 2; k++) {
    tc_dtype t = (k ? b : a)->dtype;
    if (t != TC_F32 && t != TC_F16 && t != TC_BF16)
      return tc_fail(f, TC_ERR_ARGUMENT, "tc_matmul: %s is %s; the operands must be f32, f16 or bf16",
                     (k ? b : a)->name, tc_dtype_name(t)), NULL;
  }
  if (a->dtype != b->dtype)
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_matmul: %s is %s but %s is %s; cast one first", a->name,
                   tc_dtype_name(a->dtype), b->name, tc_dtype_name(b->dtype)), NULL;
  int o = r - 2; /* the batch axis, when there is one, is axis 0 */
  int64_t m = tc_logical_extent(a, o), ka = tc_logical_extent(a, o + 1);
  int64_t kb = tc_logical_extent(b, o), n = tc_logical_extent(b, o + 1);
  if (ka != kb)
    return tc_fail(f, TC_ERR_ARGUMENT,
                   "tc_matmul: %s is [%s%lld, %lld] and %s is [%s%lld, %lld]: the inner extents (K) "
                   "differ (%lld vs %lld)", a->name, o ? "B, " : "", (long long)m, (long long)ka,
                   b->name, o ? "B, " : "", (long long)kb, (long long)n, (long long)ka, (long long)kb),
           NULL;
  if (o && tc_logical_extent(a, 0) != tc_logical_extent(b, 0))
    return tc_fail(f, TC_ERR_ARGUMENT, "tc_matmul: %s has %lld batches but %s has %lld", a->name,
                   (long long)tc_logical_extent(a, 0), b->name, (long long)tc_logical_extent(b, 0)),
           NULL;
  /* [B,] M, N, K */
  int amap[4], bmap[4];
  if (o) amap[0] = bmap[0] = 0;
  amap[o] = o, amap[o + 1] = -1, amap[o + 2] = o + 1;
  bmap[o] = -1, bmap[o + 1] = o + 1, bmap[o + 2] = o;
  tc_tensor *av = operand_view(f, a, amap, r + 1);
  tc_tensor *bv = operand_view(f, b, bmap, r + 1);
  int64_t shape[4];
  if (o) shape[0] = tc_logical_extent(a, 0);
  shape[o] = m, shape[o + 1] = n, shape[o + 2] = ka;
  tc_tensor *acc = tc_tensor_new(f, TC_F32, r + 1, shape);
  acc->logical[r] = acc->loop[r] = tc_dg_root_reduction(&f->g, ka, r);
  tc_op_new(f, TC_OP_MATMUL, TC_REDUCE_SUM, av, bv, acc);
  /* the result: acc without its reduced axis */
  tc_tensor *out = tc_tensor_new(f, TC_F32, r, shape);
  tc_op *sq = tc_op_new(f, TC_OP_BROADCAST, 0, acc, NULL, out);
  for (int j = 0; j < r; j++) sq->perm[j] = j;
  return out;
}

tc_tensor *tc_matmul_accumulator(tc_tensor *t) {
  if (!t || !t->def || t->def->kind != TC_OP_BROADCAST) return NULL;
  tc_tensor *acc = t->def->in[0];
  return acc->def && acc->def->kind == TC_OP_MATMUL ? acc : NULL;
}
