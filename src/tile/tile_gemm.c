/* tile_gemm.c - the GEMM and MoE-gather tile kernels, their reference
 * and launch (tile_gemm.h). */
#include "tile_gemm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/host.h"
#include "../ops/tuner.h"

void tc_tile_gemm_desc_init(tc_tile_gemm_desc *d, int64_t m, int64_t n, int64_t k) {
  memset(d, 0, sizeof *d);
  d->m = m, d->n = n, d->k = k;
  d->dtype = TC_F32;
  d->num_valid = -1;
}

static int64_t rows_a(const tc_tile_gemm_desc *d) { return d->moe ? d->tokens : d->m; }

int tc_tile_gemm_resolve(tc_tile_gemm_desc *d, tc_str *err) {
  if (!d->block_m) d->block_m = 32;
  if (!d->block_n) d->block_n = 32;
  if (!d->block_k) d->block_k = 16;
  if (d->moe && !d->tokens) d->tokens = d->m;
  if (d->moe && d->num_valid < 0) d->num_valid = d->tokens;
  if (!d->threads) d->threads = d->block_m * d->block_n < 256 ? d->block_m * d->block_n : 256;
  if (d->m < 1 || d->n < 1 || d->k < 1) {
    tc_err_set(err, "M, N and K must be at least 1");
    return -1;
  }
  if (d->dtype != TC_F32 && d->dtype != TC_F16) {
    tc_err_set(err, "the tile GEMM takes f32 or f16");
    return -1;
  }
  int bs[3] = {d->block_m, d->block_n, d->block_k};
  for (int i = 0; i < 3; i++)
    if (bs[i] < 1 || bs[i] > 256) {
      tc_err_set(err, "block sizes must be between 1 and 256 (got %dx%dx%d)", d->block_m,
               d->block_n, d->block_k);
      return -1;
    }
  if (d->threads < 1 || d->threads > 1024) {
    tc_err_set(err, "threads must be between 1 and 1024 (got %d)", d->threads);
    return -1;
  }
  if (d->moe && (d->tokens < 1 || d->num_valid < 0 || d->num_valid > d->tokens)) {
    tc_err_set(err, "MoE: need tokens >= 1 and 0 <= valid <= tokens (tokens %lld, valid %lld)",
             (long long)d->tokens, (long long)d->num_valid);
    return -1;
  }
  if (d->moe && d->mask_m) {
    tc_err_set(err, "MoE kernels mask rows by the token ids; mask_m is for the plain GEMM");
    return -1;
  }
  double big = (double)INT32_MAX;
  if ((double)rows_a(d) * (double)d->k > big || (double)d->k * (double)d->n > big ||
      (double)d->m * (double)d->n > big || (double)d->m + d->block_m > big ||
      (double)d->n + d->block_n > big || (double)d->k + d->block_k > big) {
    tc_err_set(err, "the matrices must have fewer than 2^31 elements");
    return -1;
  }
  if (d->k % d->block_k) d->mask_k = 1;
  return 0;
}

size_t tc_tile_gemm_elems(const tc_tile_gemm_desc *d, char which) {
  switch (which) {
    case 'A': return (size_t)(rows_a(d) * d->k);
    case 'B': return (size_t)(d->k * d->n);
    case 'C': return (size_t)(d->m * d->n);
    case 'I': return d->moe ? (size_t)d->m : 0;
  }
  return 0;
}

int tc_tile_gemm_arg(const tc_tile_gemm_desc *d, const char *name, int32_t *v) {
  int64_t ra = rows_a(d);
  struct { const char *n; int64_t v; } t[] = {
      {"M", d->m}, {"N", d->n}, {"K", d->k}, {"num_valid_tokens", d->num_valid},
      {"stride_am", d->trans_a ? 1 : d->k}, {"stride_ak", d->trans_a ? ra : 1},
      {"stride_bk", d->trans_b ? 1 : d->n}, {"stride_bn", d->trans_b ? d->k : 1},
      {"stride_cm", d->n}, {"stride_cn", 1}};
  for (size_t i = 0; i < sizeof t / sizeof *t; i++)
    if (strcmp(name, t[i].n) == 0) return *v = (int32_t)t[i].v, 0;
  return -1;
}

void tc_tile_gemm_ids(const tc_tile_gemm_desc *d, int32_t *ids) {
  /* a multiplier prime to the modulus visits every residue */
  int64_t mod = d->tokens + 3, mul = 13;
  for (;; mul++) {
    int64_t a = mod, b = mul;
    while (b) {
      int64_t t = a % b;
      a = b, b = t;
    }
    if (a == 1) break;
  }
  for (int64_t p = 0; p < d->m; p++) {
    int64_t v = (p * mul + 5) % mod;
    ids[p] = (int32_t)(v >= d->tokens ? d->tokens : v);
  }
}

void tc_tile_gemm_reference(const tc_tile_gemm_desc *d, const void *a, const void *b,
                            const int32_t *ids, double *want, double *bound) {
  int32_t sam, sak, sbk, sbn;
  tc_tile_gemm_arg(d, "stride_am", &sam), tc_tile_gemm_arg(d, "stride_ak", &sak);
  tc_tile_gemm_arg(d, "stride_bk", &sbk), tc_tile_gemm_arg(d, "stride_bn", &sbn);
  for (int64_t i = 0; i < d->m; i++) {
    int64_t row = d->moe ? ids[i] : i;
    int valid = !d->moe || row < d->num_valid;
    for (int64_t j = 0; j < d->n; j++) {
      double sum = 0, abs_sum = 0;
      for (int64_t l = 0; valid && l < d->k; l++) {
        double p = tc_host_read(d->dtype, a, (size_t)(row * sam + l * sak)) *
                   tc_host_read(d->dtype, b, (size_t)(l * sbk + j * sbn));
        sum += p;
        abs_sum += fabs(p);
      }
      want[i * d->n + j] = sum;
      bound[i * d->n + j] = tc_tune_bound(abs_sum, sum, d->k, d->dtype);
    }
  }
}

/* ---- the kernel ---- */

static tc_tile_value *splat1(tc_tile_kernel *k, tc_tile_value *s, int64_t n) {
  return tc_tile_splat(k, s, 1, &n);
}

static tc_tile_value *splat2(tc_tile_kernel *k, tc_tile_value *s, int64_t r, int64_t c) {
  int64_t sh[2] = {r, c};
  return tc_tile_splat(k, s, 2, sh);
}

static tc_tile_value *cint(tc_tile_kernel *k, int64_t v) { return tc_tile_const_int(k, v); }

static tc_tile_value *bin(tc_tile_kernel *k, tc_tile_opkind op, tc_tile_value *a, tc_tile_value *b) {
  return tc_tile_binary(k, op, a, b);
}

static tc_tile_value *zeros(tc_tile_kernel *k, tc_dtype dt, int64_t r, int64_t c) {
  int64_t sh[2] = {r, c};
  return tc_tile_const_tensor(k, TC_TK_FLOAT, dt, 2, sh, 0.0);
}

/* offs[:, None] * stride (axis 1) or offs[None, :] * stride (axis 0). */
static tc_tile_value *scaled(tc_tile_kernel *k, tc_tile_value *offs, int axis, tc_tile_value *stride) {
  tc_tile_value *e = tc_tile_expand_dims(k, offs, axis);
  if (!e) return NULL;
  return bin(k, TC_TO_MUL, e, splat2(k, stride, e->type.shape[0], e->type.shape[1]));
}

/* base + rows[:, None] * sr + cols[None, :] * sc, in the canonical form. */
static tc_tile_value *ptrs2(tc_tile_kernel *k, tc_tile_value *base, tc_tile_value *rows,
                            tc_tile_value *sr, tc_tile_value *cols, tc_tile_value *sc) {
  if (!rows || !cols) return NULL;
  int64_t r = rows->type.shape[0], c = cols->type.shape[0];
  tc_tile_value *p1 = tc_tile_addptr(k, splat2(k, base, r, 1), scaled(k, rows, 1, sr));
  return tc_tile_addptr(k, tc_tile_broadcast(k, p1, r, c),
                        tc_tile_broadcast(k, scaled(k, cols, 0, sc), r, c));
}

tc_tile_kernel *tc_tile_gemm_build(const tc_tile_gemm_desc *d, const char *name, tc_str *err) {
  int64_t BM = d->block_m, BN = d->block_n, BK = d->block_k;
  int64_t tiles_m = (d->m + BM - 1) / BM, tiles_n = (d->n + BN - 1) / BN;
  tc_tile_kernel *k = tc_tile_kernel_new(name ? name : "tilec_tile_gemm", tiles_m * tiles_n,
                                         d->threads);
  tc_tile_value *A = tc_tile_arg_ptr(k, "A", d->dtype, 0);
  tc_tile_value *B = tc_tile_arg_ptr(k, "B", d->dtype, 0);
  tc_tile_value *C = tc_tile_arg_ptr(k, "C", d->dtype, 1);
  tc_tile_value *ids = d->moe ? tc_tile_arg_ptr(k, "sorted_token_ids", TC_I32, 0) : NULL;
  tc_tile_value *M = tc_tile_arg_int(k, "M"), *N = tc_tile_arg_int(k, "N");
  tc_tile_value *K = d->dynamic_k ? tc_tile_arg_int(k, "K") : NULL;
  tc_tile_value *nv = d->moe ? tc_tile_arg_int(k, "num_valid_tokens") : NULL;
  tc_tile_value *s_am = tc_tile_arg_int(k, "stride_am"), *s_ak = tc_tile_arg_int(k, "stride_ak");
  tc_tile_value *s_bk = tc_tile_arg_int(k, "stride_bk"), *s_bn = tc_tile_arg_int(k, "stride_bn");
  tc_tile_value *s_cm = tc_tile_arg_int(k, "stride_cm"), *s_cn = tc_tile_arg_int(k, "stride_cn");

  /* pid -> (pid_m, pid_n) */
  tc_tile_value *pid = tc_tile_program_id(k);
  tc_tile_value *npn = bin(k, TC_TO_DIV, bin(k, TC_TO_ADD, N, cint(k, BN - 1)), cint(k, BN));
  tc_tile_value *pid_m = bin(k, TC_TO_DIV, pid, npn), *pid_n = bin(k, TC_TO_REM, pid, npn);
  tc_tile_value *offs_m = bin(k, TC_TO_ADD, splat1(k, bin(k, TC_TO_MUL, pid_m, cint(k, BM)), BM),
                              tc_tile_make_range(k, 0, BM));
  tc_tile_value *offs_n = bin(k, TC_TO_ADD, splat1(k, bin(k, TC_TO_MUL, pid_n, cint(k, BN)), BN),
                              tc_tile_make_range(k, 0, BN));
  tc_tile_value *offs_bn = bin(k, TC_TO_REM, offs_n, splat1(k, N, BN));
  tc_tile_value *offs_am, *row_mask = NULL;
  if (d->moe) {
    /* offs_token = load(sorted_token_ids + offs_token_id) */
    tc_tile_value *id_mask = d->m % BM ? bin(k, TC_TO_LT, offs_m, splat1(k, M, BM)) : NULL;
    tc_tile_value *tok = tc_tile_load(k, tc_tile_addptr(k, splat1(k, ids, BM), offs_m), id_mask,
                                      id_mask ? splat1(k, nv, BM) : NULL);
    row_mask = bin(k, TC_TO_LT, tok, splat1(k, nv, BM)); /* token_mask */
    offs_am = tok;
  } else if (d->mask_m) {
    offs_am = offs_m;
    row_mask = bin(k, TC_TO_LT, offs_m, splat1(k, M, BM));
  } else {
    offs_am = bin(k, TC_TO_REM, offs_m, splat1(k, M, BM));
  }
  tc_tile_value *offs_k = tc_tile_make_range(k, 0, BK);
  tc_tile_value *a_ptrs = NULL;
  switch (d->a_form) {
    case TC_TILE_A_CANONICAL:
      a_ptrs = ptrs2(k, A, offs_am, s_am, offs_k, s_ak);
      break;
    case TC_TILE_A_K_FIRST: {
      tc_tile_value *p1 = tc_tile_addptr(k, splat2(k, A, 1, BK), scaled(k, offs_k, 0, s_ak));
      a_ptrs = tc_tile_addptr(k, tc_tile_broadcast(k, p1, BM, BK),
                              tc_tile_broadcast(k, scaled(k, offs_am, 1, s_am), BM, BK));
      break;
    }
    case TC_TILE_A_COMBINED: {
      tc_tile_value *off = bin(k, TC_TO_ADD, tc_tile_broadcast(k, scaled(k, offs_am, 1, s_am), BM, BK),
                               tc_tile_broadcast(k, scaled(k, offs_k, 0, s_ak), BM, BK));
      a_ptrs = tc_tile_addptr(k, splat2(k, A, BM, BK), off);
      break;
    }
  }
  tc_tile_value *b_ptrs = ptrs2(k, B, offs_k, s_bk, offs_bn, s_bn);
  tc_tile_value *a_rows = row_mask ? tc_tile_broadcast(k, tc_tile_expand_dims(k, row_mask, 1), BM, BK)
                                   : NULL;

  /* the K loop */
  tc_tile_value *nk = d->dynamic_k
                          ? bin(k, TC_TO_DIV, bin(k, TC_TO_ADD, K, cint(k, BK - 1)), cint(k, BK))
                          : cint(k, (d->k + BK - 1) / BK);
  tc_tile_value *inits[3] = {zeros(k, TC_F32, BM, BN), a_ptrs, b_ptrs};
  tc_tile_op *loop = tc_tile_for_begin(k, cint(k, 0), nk, cint(k, 1), 3, inits);
  tc_tile_value *iv = tc_tile_for_iv(loop), *acc = tc_tile_for_arg(loop, 0);
  tc_tile_value *ap = tc_tile_for_arg(loop, 1), *bp = tc_tile_for_arg(loop, 2);
  tc_tile_value *a, *b;
  if (d->mask_k) {
    /* mask = offs_k < K - k * BLOCK_K (K: tl.constexpr unless dynamic_k) */
    if (!K) K = cint(k, d->k);
    tc_tile_value *left = bin(k, TC_TO_SUB, K, bin(k, TC_TO_MUL, iv, cint(k, BK)));
    tc_tile_value *ka = bin(k, TC_TO_LT, tc_tile_broadcast(k, tc_tile_expand_dims(k, offs_k, 0), BM, BK),
                            splat2(k, left, BM, BK));
    tc_tile_value *kb = bin(k, TC_TO_LT, tc_tile_broadcast(k, tc_tile_expand_dims(k, offs_k, 1), BK, BN),
                            splat2(k, left, BK, BN));
    a = tc_tile_load(k, ap, a_rows ? bin(k, TC_TO_AND, a_rows, ka) : ka, zeros(k, d->dtype, BM, BK));
    b = tc_tile_load(k, bp, kb, zeros(k, d->dtype, BK, BN));
  } else {
    a = tc_tile_load(k, ap, a_rows, a_rows ? zeros(k, d->dtype, BM, BK) : NULL);
    b = tc_tile_load(k, bp, NULL, NULL);
  }
  tc_tile_value *acc2 = tc_tile_dot(k, a, b, acc);
  tc_tile_value *ap2 =
      tc_tile_addptr(k, ap, splat2(k, bin(k, TC_TO_MUL, cint(k, BK), s_ak), BM, BK));
  tc_tile_value *bp2 =
      tc_tile_addptr(k, bp, splat2(k, bin(k, TC_TO_MUL, cint(k, BK), s_bk), BK, BN));
  tc_tile_value *ys[3] = {acc2, ap2, bp2};
  tc_tile_for_end(k, loop, 3, ys);

  /* C (by row of sorted ids for MoE), masked to M x N */
  tc_tile_value *c_ptrs = ptrs2(k, C, offs_m, s_cm, offs_n, s_cn);
  tc_tile_value *cm = tc_tile_broadcast(
      k, bin(k, TC_TO_LT, tc_tile_expand_dims(k, offs_m, 1), splat2(k, M, BM, 1)), BM, BN);
  tc_tile_value *cn = tc_tile_broadcast(
      k, bin(k, TC_TO_LT, tc_tile_expand_dims(k, offs_n, 0), splat2(k, N, 1, BN)), BM, BN);
  tc_tile_store(k, c_ptrs, tc_tile_for_result(loop, 0), bin(k, TC_TO_AND, cm, cn));
  if (k->err[0]) {
    tc_err_set(err, "building the tile GEMM: %s", k->err);
    tc_tile_kernel_free(k);
    return NULL;
  }
  return k;
}

/* ---- launching ---- */

tc_status tc_tile_gemm_run(tc_target target, tc_cl *cl, const char *arch,
                           const tc_tile_emitted *em, const tc_tile_gemm_desc *d, const void *a,
                           const void *b, void *c, const int32_t *ids, double *ms, int repeat,
                           double *repeat_ms, tc_str *err) {
  tc_rt_buffer bufs[TC_TILE_MAX_PARAMS];
  int32_t iargs[TC_TILE_MAX_PARAMS];
  memset(bufs, 0, sizeof bufs);
  size_t es = d->dtype == TC_F16 ? 2 : 4;
  for (int i = 0; i < em->nint_args; i++)
    if (tc_tile_gemm_arg(d, em->int_args[i], &iargs[i]) != 0) {
      tc_str_printf(err, "the kernel takes an unknown i32 argument '%s'", em->int_args[i]);
      return TC_ERR_ARGUMENT;
    }
  for (int i = 0; i < em->nparams; i++) {
    const char *n = em->params[i].name;
    tc_rt_buffer *bf = &bufs[i];
    if (strcmp(n, "A") == 0)
      bf->host = (void *)a, bf->bytes = tc_tile_gemm_elems(d, 'A') * es;
    else if (strcmp(n, "B") == 0)
      bf->host = (void *)b, bf->bytes = tc_tile_gemm_elems(d, 'B') * es;
    else if (strcmp(n, "C") == 0)
      bf->host = c, bf->bytes = tc_tile_gemm_elems(d, 'C') * es, bf->copy_back = 1;
    else if (strcmp(n, "sorted_token_ids") == 0)
      bf->host = (void *)ids, bf->bytes = tc_tile_gemm_elems(d, 'I') * sizeof(int32_t);
    else if (strcmp(n, "tc_args") == 0)
      bf->host = iargs, bf->bytes = (size_t)em->nint_args * sizeof(int32_t);
    if (!bf->host || !bf->bytes) {
      tc_str_printf(err, "no data for the kernel parameter '%s'", n);
      return TC_ERR_ARGUMENT;
    }
  }
  tc_launch l = {{0}};
  memset(&l, 0, sizeof l);
  for (int i = 0; i < 3; i++) l.grid[i] = em->grid[i], l.block[i] = em->block[i];
  l.repeat = repeat, l.repeat_ms = repeat_ms;
  tc_rt_code code = {.source = em->source, .name = em->name, .arch = tc_tune_arch(target, arch)};
  return tc_rt_launch(target, cl, &code, bufs, em->nparams, &l, ms, err);
}
