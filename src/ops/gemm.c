/* gemm.c - the gridwise GEMM kernel generator (rocMLIR's; the XDLOPS
 * blockwise GEMM, on MFMA, is in gemm_mfma.c and described there).
 *
 * C[g][m][n] = alpha * sum_k A[g][k][m] * B[g][k][n] (+ C[g][m][n]).  The
 * emitted kernel, everything target-specific coming from the dialect:
 *
 *   Grid: 1-D, G * ceil(M/MPB) * ceil(N/NPB) blocks of BLOCK_SIZE threads;
 *   block id b -> g = b / (nm*nn), m tile = b / nn % nm, n tile = b % nn
 *   (nm, nn: tiles along M and N), so neighbouring blocks share A's tile.
 *
 *   Views: copies of A, B, C padded (tc_view_pad) at the end of K, M, N to
 *   multiples of KPB, MPB, NPB; tc_view_index gives each element's offset
 *   and validity predicate, and an invalid element reads as 0 (A, B) or is
 *   not written (C).
 *
 *   Blockwise copy global -> registers: thread t of the A copy cluster
 *   (a_cluster_k x a_cluster_m, the read dimension varying fastest) loads
 *   its slice_k x slice_m sub-block of the KPB x MPB tile into a_copy[],
 *   converting to f32 with the dialect's load.  Registers -> shared: the
 *   slice goes to a_lds[buf + k*MPB + m] (LDS in [K][M] layout, f32), buf 0
 *   for the even buffer and KPB*MPB for the odd one.  Same for B.  Both
 *   move vectors where they can: a_src_per_read elements along
 *   the read dimension per global read and a_dst_per_write along M per
 *   LDS write, through the dialect's vec_load / vec_store, capped by the
 *   padded view's tc_view_vector_width (load_width, emit_store); the
 *   threadwise copy of C writes c_per_write along N likewise.
 *
 *   Blockwise GEMM: thread t's C tile is 2x2 sub-tiles of MPT x NPT at
 *   rows m_thr + r*MPB/2, columns n_thr + s*NPB/2, where (level-1 cluster
 *   outer, level-0 inner, N fastest)
 *     m_thr = (t / (ML0*NL0*NL1)) * MPT*ML0 + (t / NL0 % ML0) * MPT
 *     n_thr = (t / (ML0*NL0) % NL1) * NPT*NL0 + (t % NL0) * NPT.
 *   The k loop over the LDS tile is rocMLIR's pipelined 2x2 version: read
 *   A0 B0 B1 A1, C00 C01, then per k: read A0, C10, read B0, C11, read B1,
 *   read A1, C00, C01; finally C10 C11.  Accumulation is f32 in c_acc.
 *
 *   The double-buffered K loop, with nk = ceil(K/KPB) tiles:
 *     prologue: tile 0 -> registers -> even
 *     (nk-1)/2 times: barrier; load next tile; gemm even; store to odd;
 *                     barrier; load next tile; gemm odd; store to even
 *     tail: barrier; nk odd (one tile left): gemm even
 *                    nk even (two left): load the last tile; gemm even;
 *                    store to odd; barrier; gemm odd
 *   rocMLIR writes the loop count as K / (2*KPB) and decides the tail at
 *   run time from K % (2*KPB); here K is known when generating, so the
 *   main loop runs only over the pairs that have a following tile to load
 *   ((nk-1)/2, as CK's gridwise GEMM) and the tail is emitted for the one
 *   case that occurs.
 *
 *   Threadwise copy C: each accumulator, times alpha, plus the old C in
 *   accumulate mode, converted to C's dtype by the dialect's store. */
#include "gemm.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codegen/dialect.h"
#include "gemm_gen.h"
#include "tuner.h"

/* the printing helpers of gemm_gen.h, by their short names */
#define line tc_gemm_gen_line
#define pragma_unroll tc_gemm_gen_unroll

typedef tc_gemm_gen gen; /* gemm_gen.h */

/* Fills the generator's error buffer and gives st. */
#define fail(G, st, ...) (tc_err_set((G)->err, __VA_ARGS__), (st))

static int is_float(tc_dtype t) { return t == TC_F32 || t == TC_F16 || t == TC_BF16; }

static int valid_name(const char *n) {
  size_t len = strlen(n);
  if (len == 0 || len >= 64) return 0;
  for (size_t i = 0; i < len; i++) {
    char ch = n[i];
    int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
             (i > 0 && ch >= '0' && ch <= '9');
    if (!ok) return 0;
  }
  return 1;
}

/* Whether view v (3 upper dims) is a dense strided array: every element
 * valid and the offset affine in the coordinates (only +, - and * by
 * constants); then its element strides, read off the offsets of the
 * unit coordinates. */
static int plain_strides(const tc_view *v, int64_t stride[3]) {
  if (!v || v->nupper != 3) return 0;
  tc_epool *P = tc_epool_new();
  const tc_expr *up[3];
  for (int d = 0; d < 3; d++) {
    int64_t e = tc_view_extent(v, d);
    up[d] = tc_e_var(P, d == 0 ? "g" : d == 1 ? "x" : "y", 0, e > 0 ? e - 1 : 0);
  }
  const tc_expr *off = NULL, *valid = NULL;
  tc_view_index(v, P, up, &off, &valid);
  int ok = off && valid && tc_e_is_const(valid, 1);
  for (int op = TC_E_DIV; ok && op < TC_E_NUM_OPS; op++)
    if (op != TC_E_SUB && op != TC_E_MUL && tc_e_count_op(off, (tc_eop)op)) ok = 0;
  if (ok) {
    int64_t vars[3] = {0, 0, 0};
    int64_t base = tc_e_eval(off, vars);
    for (int d = 0; d < 3; d++) {
      int64_t unit[3] = {0, 0, 0};
      unit[d] = 1;
      stride[d] = tc_e_eval(off, unit) - base;
    }
    ok = base == 0;
  }
  tc_epool_free(P);
  return ok;
}

tc_gemm_shape tc_gemm_problem_shape(const tc_gemm_problem *pb) {
  tc_gemm_shape s;
  memset(&s, 0, sizeof s);
  s.a_vec_k = s.a_vec_m = s.b_vec_k = s.b_vec_n = s.c_vec_n = 1;
  if (!pb) return s;
  s.dtype = pb->a_dtype;
  if (pb->a && pb->a->nupper == 3) {
    s.g = tc_view_extent(pb->a, 0);
    s.k = tc_view_extent(pb->a, 1);
    s.m = tc_view_extent(pb->a, 2);
    int eb = (int)tc_dtype_size(pb->a_dtype);
    s.a_vec_k = tc_view_vector_width(pb->a, 1, eb, 16);
    s.a_vec_m = tc_view_vector_width(pb->a, 2, eb, 16);
  }
  if (pb->b && pb->b->nupper == 3) {
    s.n = tc_view_extent(pb->b, 2);
    int eb = (int)tc_dtype_size(pb->b_dtype);
    s.b_vec_k = tc_view_vector_width(pb->b, 1, eb, 16);
    s.b_vec_n = tc_view_vector_width(pb->b, 2, eb, 16);
  }
  if (pb->c && pb->c->nupper == 3)
    s.c_vec_n = tc_view_vector_width(pb->c, 2, (int)tc_dtype_size(pb->c_dtype), 16);
  if (s.a_vec_k < 1) s.a_vec_k = 1;
  if (s.a_vec_m < 1) s.a_vec_m = 1;
  if (s.b_vec_k < 1) s.b_vec_k = 1;
  if (s.b_vec_n < 1) s.b_vec_n = 1;
  if (s.c_vec_n < 1) s.c_vec_n = 1;
  s.c_dtype = pb->c_dtype;
  s.accumulate = pb->accumulate;
  s.plain = plain_strides(pb->a, s.a_stride) && plain_strides(pb->b, s.b_stride) &&
            plain_strides(pb->c, s.c_stride);
  return s;
}

void tc_gemm_kernel_free(tc_gemm_kernel *k) {
  if (!k) return;
  free(k->source);
  k->source = NULL;
}

void tc_gemm_kernel_launch_config(const tc_gemm_kernel *k, tc_launch *l) {
  memset(l, 0, sizeof *l);
  for (int d = 0; d < 3; d++) l->grid[d] = k->grid[d], l->block[d] = k->block[d];
  l->dyn_smem = k->dyn_smem ? (size_t)k->smem_bytes : 0;
  l->tmaps = k->ntmaps ? k->tmaps : NULL;
  l->ntmaps = k->ntmaps;
  l->persistent = k->persistent;
}

tc_status tc_gemm_kernel_run(const tc_gemm_kernel *k, tc_target target, tc_cl *cl,
                             const char *arch, tc_rt_buffer *b, int nb, double *ms, int repeat,
                             double *repeat_ms, tc_str *e) {
  tc_launch l;
  tc_gemm_kernel_launch_config(k, &l);
  l.repeat = repeat, l.repeat_ms = repeat_ms;
  tc_rt_code code = {.source = k->source, .name = k->name, .arch = tc_tune_arch(target, arch)};
  return tc_rt_launch(target, cl, &code, b, nb, &l, ms, e);
}

/* ---- checking the problem --------------------------------------------- */

static tc_status check_problem(gen *G) {
  const tc_gemm_problem *pb = G->pb;
  const tc_view *v[3] = {pb->a, pb->b, pb->c};
  const char *names[3] = {"A", "B", "C"};
  const char *dims[3] = {"[G, K, M]", "[G, K, N]", "[G, M, N]"};
  for (int i = 0; i < 3; i++) {
    if (!v[i]) return fail(G, TC_ERR_ARGUMENT, "GEMM: the view of %s is missing", names[i]);
    if (v[i]->nupper != 3)
      return fail(G, TC_ERR_ARGUMENT, "GEMM: the view of %s must have 3 upper dims %s (has %d)",
                  names[i], dims[i], v[i]->nupper);
    for (int j = 0; j < 3; j++)
      if (tc_view_extent(v[i], j) < 1)
        return fail(G, TC_ERR_ARGUMENT, "GEMM: %s's upper dim %d has extent %lld", names[i], j,
                    (long long)tc_view_extent(v[i], j));
  }
  int64_t g = tc_view_extent(pb->a, 0), k = tc_view_extent(pb->a, 1), m = tc_view_extent(pb->a, 2);
  int64_t n = tc_view_extent(pb->b, 2);
  if (tc_view_extent(pb->b, 0) != g || tc_view_extent(pb->c, 0) != g)
    return fail(G, TC_ERR_ARGUMENT, "GEMM: G differs between A (%lld), B (%lld) and C (%lld)",
                (long long)g, (long long)tc_view_extent(pb->b, 0),
                (long long)tc_view_extent(pb->c, 0));
  if (tc_view_extent(pb->b, 1) != k)
    return fail(G, TC_ERR_ARGUMENT, "GEMM: K differs between A (%lld) and B (%lld)", (long long)k,
                (long long)tc_view_extent(pb->b, 1));
  if (tc_view_extent(pb->c, 1) != m)
    return fail(G, TC_ERR_ARGUMENT, "GEMM: M differs between A (%lld) and C (%lld)", (long long)m,
                (long long)tc_view_extent(pb->c, 1));
  if (tc_view_extent(pb->c, 2) != n)
    return fail(G, TC_ERR_ARGUMENT, "GEMM: N differs between B (%lld) and C (%lld)", (long long)n,
                (long long)tc_view_extent(pb->c, 2));
  tc_dtype dt[3] = {pb->a_dtype, pb->b_dtype, pb->c_dtype};
  for (int i = 0; i < 3; i++)
    if (!is_float(dt[i]))
      return fail(G, TC_ERR_UNSUPPORTED, "GEMM: %s has dtype %s; only f32, f16 and bf16 are supported",
                  names[i], tc_dtype_name(dt[i]));
  if (!isfinite(pb->alpha))
    return fail(G, TC_ERR_ARGUMENT, "GEMM: alpha must be finite (got %g)", (double)pb->alpha);
  return TC_OK;
}

/* ---- printing helpers ------------------------------------------------- */

void tc_gemm_gen_line(gen *G, int depth, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tc_str_vline(G->o, depth, fmt, ap);
  va_end(ap);
}

void tc_gemm_gen_unroll(gen *G, int depth) {
  if (G->d->unroll_pragma && *G->d->unroll_pragma) line(G, depth, "%s", G->d->unroll_pragma);
}

/* "const int name = <e>;" */
static void def_var(gen *G, int depth, const char *name, const tc_expr *e) {
  tc_str_indent(G->o, depth);
  tc_str_printf(G->o, "const int %s = ", name);
  tc_e_print_c(G->o, G->pool, tc_simplify(G->pool, e));
  tc_str_cat(G->o, ";\n");
}

/* The offset and validity of upper coordinates (g, x, y) of view v;
 * fails when the offsets may not fit the kernels' int arithmetic. */
static tc_status index_of(gen *G, const tc_view *v, const char *what, const tc_expr *x,
                          const tc_expr *y, const tc_expr **off, const tc_expr **valid) {
  const tc_expr *up[3] = {G->g_id, x, y};
  tc_view_index(v, G->pool, up, off, valid);
  if ((*off)->hi > INT_MAX || (*off)->lo < INT_MIN)
    return fail(G, TC_ERR_UNSUPPORTED,
                "GEMM: element offsets of %s range over [%lld, %lld], beyond 32-bit int indexing",
                what, (long long)(*off)->lo, (long long)(*off)->hi);
  return TC_OK;
}

tc_status tc_gemm_gen_index(tc_gemm_gen *G, const tc_view *v, const char *what, const tc_expr *x,
                            const tc_expr *y, const tc_expr **off, const tc_expr **valid) {
  return index_of(G, v, what, x, y, off, valid);
}

/* ---- the blockwise copies --------------------------------------------- */

/* The width of operand A's (is_b 0) or B's (1) vector reads from global
 * memory: the copy's src_per_read, capped by what the padded view allows
 * along the read dimension (tc_view_vector_width: from an upper coordinate
 * that is a multiple of w, w consecutive upper values give w consecutive
 * memory elements, equally valid, the first at a multiple of w); 1 (element
 * loads) where the dialect has no vector loads or the kernel reads through
 * buffer resources.  Every vector starts at a coordinate that is a multiple
 * of w: along K, k_tile*KPB + k0 + i with w | slice_k | KPB, k0 a multiple
 * of slice_k and i stepping by w; along M (N) the same with the block's
 * extent and slice.  So the offset of its first element is a multiple of w
 * (the analysis) and the access is aligned. */
static int load_width(gen *G, int is_b) {
  const tc_gemm_params *p = G->p;
  if (!G->d->vec_load || !G->d->vec_elem || (is_b ? G->b_bytes : G->a_bytes) > 0) return 1;
  int kpb = p->k_per_block, ext = is_b ? p->n_per_block : p->m_per_block;
  int slice_k = kpb / (is_b ? p->b_cluster_k : p->a_cluster_k);
  int slice_x = ext / (is_b ? p->b_cluster_n : p->a_cluster_m);
  int along_k = (is_b ? p->b_read_dim : p->a_read_dim) == TC_GEMM_READ_K;
  int w = is_b ? p->b_src_per_read : p->a_src_per_read;
  int eb = (int)tc_dtype_size(is_b ? G->pb->b_dtype : G->pb->a_dtype);
  if (w < 2 || (w & (w - 1)) || (along_k ? slice_k : slice_x) % w || w * eb > 16) return 1;
  int vw = tc_view_vector_width(is_b ? G->b : G->a, along_k ? 1 : 2, eb, 16);
  while (w > 1 && w > vw) w /= 2;
  return w;
}

/* Global -> registers for operand A (is_b 0) or B (1), tile k_tile (a C
 * variable already defined in the enclosing scope): element loads, or
 * vector loads of load_width elements along the read dimension, the
 * validity predicate of a vector (uniform over it) evaluated once. */
static tc_status emit_load(gen *G, int is_b, int depth) {
  const tc_gemm_params *p = G->p;
  tc_epool *P = G->pool;
  int kpb = p->k_per_block, ext = is_b ? p->n_per_block : p->m_per_block;
  int slice_k = kpb / (is_b ? p->b_cluster_k : p->a_cluster_k);
  int slice_x = ext / (is_b ? p->b_cluster_n : p->a_cluster_m);
  const tc_view *v = is_b ? G->b : G->a;
  tc_dtype dt = is_b ? G->pb->b_dtype : G->pb->a_dtype;
  const char *reg = is_b ? "b_copy" : "a_copy", *buf = is_b ? "B" : "A";
  const tc_expr *k0 = is_b ? G->b_k0 : G->a_k0, *x0 = is_b ? G->b_n0 : G->a_m0;
  const tc_expr *blk = is_b ? G->n_blk : G->m_blk;
  int w = load_width(G, is_b);
  int along_k = (is_b ? p->b_read_dim : p->a_read_dim) == TC_GEMM_READ_K;
  tc_str idx, ld, pred;
  tc_str_init(&idx);
  tc_str_init(&ld);
  tc_str_init(&pred);
  tc_status st = TC_OK;
  for (int i = 0; i < slice_k && st == TC_OK; i++)
    for (int j = 0; j < slice_x && st == TC_OK; j++) {
      if (w > 1 && (along_k ? i : j) % w) continue; /* inside a vector */
      const tc_expr *k = tc_e_addc(P, tc_e_add(P, tc_e_mulc(P, G->k_tile, kpb), k0), i);
      const tc_expr *x = tc_e_addc(P, tc_e_add(P, tc_e_mulc(P, blk, ext), x0), j);
      const tc_expr *off, *valid;
      st = index_of(G, v, buf, k, x, &off, &valid);
      if (st != TC_OK) break;
      tc_str_clear(&idx);
      tc_str_clear(&ld);
      tc_e_print_c(&idx, P, off);
      const char *zero = G->xdl ? "0" : "0.0f";
      if (w > 1) {
        /* registers of the vector's elements: along K rows of the slice,
         * along M (N) consecutive registers */
        int r0 = i * slice_x + j, rstep = along_k ? slice_x : 1;
        if (tc_e_is_const(valid, 0)) {
          for (int e = 0; e < w; e++) line(G, depth, "%s[%d] = %s;", reg, r0 + e * rstep, zero);
          continue;
        }
        tc_str_clear(&pred);
        if (!tc_e_is_const(valid, 1)) tc_e_print_c(&pred, P, valid);
        char var[32];
        snprintf(var, sizeof var, "%s_v%d", reg, r0);
        G->d->vec_load(G->o, dt, TC_MEM_GLOBAL, buf, tc_str_cstr(&idx), w, G->xdl,
                       tc_e_is_const(valid, 1) ? NULL : tc_str_cstr(&pred), var, depth);
        for (int e = 0; e < w; e++) {
          tc_str_indent(G->o, depth);
          tc_str_printf(G->o, "%s[%d] = ", reg, r0 + e * rstep);
          G->d->vec_elem(G->o, dt, var, w, e, G->xdl);
          tc_str_cat(G->o, ";\n");
        }
        continue;
      }
      /* through the dialect's buffer loads where it has them (HIP);
       * XDLOPS kernels copy the stored 16-bit values as they are (the
       * MFMA takes them), the others convert to f32 */
      if (G->d->buffer_load && (is_b ? G->b_bytes : G->a_bytes) > 0)
        G->d->buffer_load(&ld, dt, buf, tc_str_cstr(&idx), G->xdl);
      else if (G->xdl)
        tc_str_printf(&ld, "%s[%s]", buf, tc_str_cstr(&idx));
      else
        G->d->load(&ld, dt, TC_MEM_GLOBAL, buf, tc_str_cstr(&idx));
      tc_str_indent(G->o, depth);
      tc_str_printf(G->o, "%s[%d] = ", reg, i * slice_x + j);
      if (tc_e_is_const(valid, 1)) {
        tc_str_printf(G->o, "%s;\n", tc_str_cstr(&ld));
      } else if (tc_e_is_const(valid, 0)) {
        tc_str_printf(G->o, "%s;\n", zero);
      } else {
        tc_str_cat(G->o, "(");
        tc_e_print_c(G->o, P, valid);
        tc_str_printf(G->o, ") ? %s : %s;\n", tc_str_cstr(&ld), zero);
      }
    }
  tc_str_free(&idx);
  tc_str_free(&ld);
  tc_str_free(&pred);
  return st;
}

/* mma kernels: the width (2, 4 or 8 elements: 4, 8 or 16 bytes) of
 * operand A's (is_b 0) or B's (1) asynchronous copies global -> LDS
 * (cp.async on CUDA, docs/mma.md), or 0 where the copy goes through
 * registers.  Only where it is a straight move of contiguous, aligned
 * 16-bit vectors: read along M (N), the dimension contiguous in LDS
 * [K][M]; src_per_read w a power of two dividing slice_m, capped by the
 * padded view's tc_view_vector_width along M as in load_width (so a
 * vector's global offset is a multiple of w and its predicate uniform);
 * its LDS index, base + (a_k0 + i) * MPB + a_m0 + j, is a multiple of w
 * (emit_store).  Independent of the dialect, so the OpenCL emulation
 * copies with the same indices. */
static int async_width(gen *G, int is_b) {
  const tc_gemm_params *p = G->p;
  /* not for wgmma kernels: their LDS layout is not [K][M] (gemm_wgmma.c) */
  if (!G->mma || G->wgmma || (is_b ? p->b_read_dim : p->a_read_dim) == TC_GEMM_READ_K) return 0;
  int ext = is_b ? p->n_per_block : p->m_per_block;
  int slice_x = ext / (is_b ? p->b_cluster_n : p->a_cluster_m);
  int w = is_b ? p->b_src_per_read : p->a_src_per_read;
  int eb = (int)tc_dtype_size(is_b ? G->pb->b_dtype : G->pb->a_dtype);
  if (eb != 2 || w < 2 || (w & (w - 1)) || slice_x % w || w * eb > 16) return 0;
  int vw = tc_view_vector_width(is_b ? G->b : G->a, 2, eb, 16);
  while (w > 1 && w > vw) w /= 2;
  return w >= 2 ? w : 0;
}

/* Global -> shared buffer `odd` for operand A (is_b 0) or B (1) by
 * asynchronous copies of async_width elements: tc_cp_async{4,8,16}(dst,
 * src, src_bytes), from the mma prelude (CUDA: cp.async.ca.shared.global
 * with src-size, which zero-fills the bytes past src_bytes; OpenCL: a
 * plain copy); an invalid vector copies 0 bytes, i.e. zeros. */
static tc_status emit_async(gen *G, int is_b, int odd, int depth) {
  const tc_gemm_params *p = G->p;
  tc_epool *P = G->pool;
  int kpb = p->k_per_block, ext = is_b ? p->n_per_block : p->m_per_block;
  int slice_k = kpb / (is_b ? p->b_cluster_k : p->a_cluster_k);
  int slice_x = ext / (is_b ? p->b_cluster_n : p->a_cluster_m);
  const tc_view *v = is_b ? G->b : G->a;
  const char *buf = is_b ? "B" : "A", *lds = is_b ? "b_lds" : "a_lds";
  const char *k0s = is_b ? "b_k0" : "a_k0", *x0s = is_b ? "b_n0" : "a_m0";
  const tc_expr *k0 = is_b ? G->b_k0 : G->a_k0, *x0 = is_b ? G->b_n0 : G->a_m0;
  const tc_expr *blk = is_b ? G->n_blk : G->m_blk;
  int w = async_width(G, is_b), bytes = 2 * w, base = odd ? kpb * ext : 0;
  tc_status st = TC_OK;
  for (int i = 0; i < slice_k && st == TC_OK; i++)
    for (int j = 0; j < slice_x && st == TC_OK; j += w) {
      const tc_expr *k = tc_e_addc(P, tc_e_add(P, tc_e_mulc(P, G->k_tile, kpb), k0), i);
      const tc_expr *x = tc_e_addc(P, tc_e_add(P, tc_e_mulc(P, blk, ext), x0), j);
      const tc_expr *off, *valid;
      st = index_of(G, v, buf, k, x, &off, &valid);
      if (st != TC_OK) break;
      tc_str_indent(G->o, depth);
      tc_str_printf(G->o, "tc_cp_async%d(&%s[%d + (%s + %d) * %d + %s + %d], ", bytes, lds, base,
                    k0s, i, ext, x0s, j);
      if (tc_e_is_const(valid, 0)) {
        tc_str_printf(G->o, "%s, 0);\n", buf);
      } else if (tc_e_is_const(valid, 1)) {
        tc_str_printf(G->o, "%s + ", buf);
        tc_e_print_c(G->o, P, off);
        tc_str_printf(G->o, ", %d);\n", bytes);
      } else {
        tc_str_printf(G->o, "%s + ((", buf);
        tc_e_print_c(G->o, P, valid);
        tc_str_cat(G->o, ") ? ");
        tc_e_print_c(G->o, P, off);
        tc_str_cat(G->o, " : 0), (");
        tc_e_print_c(G->o, P, valid);
        tc_str_printf(G->o, ") ? %d : 0);\n", bytes);
      }
    }
  return st;
}

/* "{ const int k_tile = <text>; <loads of A and B> }"; operands copied
 * asynchronously (async_width) go straight to shared buffer `odd`, the
 * one the following emit_store fills, as one commit group. */
static tc_status emit_load_tile(gen *G, int depth, const char *k_tile_text, int odd) {
  int aa = async_width(G, 0) > 0, ab = async_width(G, 1) > 0;
  line(G, depth, "{ /* blockwise copy of tile k_tile: global -> %s */",
       aa && ab ? "shared (async)" : aa || ab ? "registers, shared (async)" : "registers");
  line(G, depth + 1, "const int k_tile = %s;", k_tile_text);
  tc_status st = aa ? emit_async(G, 0, odd, depth + 1) : emit_load(G, 0, depth + 1);
  if (st == TC_OK) st = ab ? emit_async(G, 1, odd, depth + 1) : emit_load(G, 1, depth + 1);
  if (aa || ab) line(G, depth + 1, "tc_cp_async_commit();");
  line(G, depth, "}");
  return st;
}

/* Registers -> shared buffer `odd` (0 even, 1 odd): element stores, or
 * vector stores of dst_per_write elements along M (N), contiguous in the
 * [K][M] LDS layout.  A vector's first element, base + (k0 + i)*ext + x0 +
 * j, is a multiple of its width w: w | slice_x | ext (the params check),
 * base is a multiple of ext, x0 of slice_x, and j steps by w. */
static void emit_store(gen *G, int odd, int depth) {
  if (G->wgmma) { /* the wgmma core-matrix layout (gemm_wgmma.c) */
    tc_wgmma_emit_store(G, odd, depth);
    return;
  }
  const tc_gemm_params *p = G->p;
  /* the asynchronous copies into this buffer complete before the barrier
   * that publishes it */
  if (async_width(G, 0) || async_width(G, 1)) line(G, depth, "tc_cp_async_wait_all();");
  for (int is_b = 0; is_b < 2; is_b++) {
    if (async_width(G, is_b)) continue;
    int kpb = p->k_per_block, ext = is_b ? p->n_per_block : p->m_per_block;
    int slice_k = kpb / (is_b ? p->b_cluster_k : p->a_cluster_k);
    int slice_x = ext / (is_b ? p->b_cluster_n : p->a_cluster_m);
    const char *lds = is_b ? "b_lds" : "a_lds", *reg = is_b ? "b_copy" : "a_copy";
    const char *k0 = is_b ? "b_k0" : "a_k0", *x0 = is_b ? "b_n0" : "a_m0";
    int base = odd ? kpb * ext : 0;
    /* LDS holds f32 (XDLOPS: the 16-bit inputs as stored) */
    tc_dtype lt = G->xdl ? (is_b ? G->pb->b_dtype : G->pb->a_dtype) : TC_F32;
    int w = is_b ? p->b_dst_per_write : p->a_dst_per_write;
    if (!G->d->vec_store || w < 2 || w > 4 || (w & (w - 1)) || slice_x % w ||
        w * (int)tc_dtype_size(lt) > 16)
      w = 1;
    for (int i = 0; i < slice_k; i++)
      for (int j = 0; j < slice_x; j += w) {
        if (w == 1) {
          line(G, depth, "%s[%d + (%s + %d) * %d + %s + %d] = %s[%d];", lds, base, k0, i, ext, x0,
               j, reg, i * slice_x + j);
          continue;
        }
        char idx[96], vals[4][32];
        const char *vp[4];
        snprintf(idx, sizeof idx, "%d + (%s + %d) * %d + %s + %d", base, k0, i, ext, x0, j);
        for (int e = 0; e < w; e++) {
          snprintf(vals[e], sizeof vals[e], "%s[%d]", reg, i * slice_x + j + e);
          vp[e] = vals[e];
        }
        G->d->vec_store(G->o, lt, TC_MEM_SHARED, lds, idx, w, G->xdl, vp, depth);
      }
  }
}

/* ---- the blockwise GEMM ----------------------------------------------- */

static void emit_read(gen *G, int depth, int is_b, int half, int base, const char *kk) {
  const tc_gemm_params *p = G->p;
  int per = is_b ? p->n_per_thread : p->m_per_thread;
  int ext = is_b ? p->n_per_block : p->m_per_block;
  pragma_unroll(G, depth);
  line(G, depth, "for (int i = 0; i < %d; ++i) %s[%d + i] = %s[%d + %s * %d + %s + %d + i];", per,
       is_b ? "b_sub" : "a_sub", half * per, is_b ? "b_lds" : "a_lds", base, kk, ext,
       is_b ? "n_thr" : "m_thr", half * (ext / 2));
}

/* C_rs += transpose(A_sub_r) * B_sub_s */
static void emit_sub_gemm(gen *G, int depth, int r, int s) {
  const tc_gemm_params *p = G->p;
  int mpt = p->m_per_thread, npt = p->n_per_thread;
  pragma_unroll(G, depth);
  line(G, depth, "for (int i = 0; i < %d; ++i) {", mpt);
  pragma_unroll(G, depth + 1);
  line(G, depth + 1, "for (int j = 0; j < %d; ++j)", npt);
  line(G, depth + 2, "c_acc[(%d + i) * %d + %d + j] += a_sub[%d + i] * b_sub[%d + j];", r * mpt,
       2 * npt, s * npt, r * mpt, s * npt);
  line(G, depth, "}");
}

/* The pipelined 2x2 blockwise GEMM on shared buffer `odd`. */
static void emit_block_gemm(gen *G, int odd, int depth) {
  if (G->xdl) {
    if (G->wgmma) tc_wgmma_emit_block_gemm(G, odd, depth); /* gemm_wgmma.c */
    else if (G->mma) tc_mma_emit_block_gemm(G, odd, depth); /* gemm_mma.c */
    else tc_mfma_emit_block_gemm(G, odd, depth);
    return;
  }
  const tc_gemm_params *p = G->p;
  int kpb = p->k_per_block;
  int abase = odd ? kpb * p->m_per_block : 0, bbase = odd ? kpb * p->n_per_block : 0;
  line(G, depth, "{ /* blockwise GEMM on the %s buffers */", odd ? "odd" : "even");
  int d1 = depth + 1;
  emit_read(G, d1, 0, 0, abase, "0");
  emit_read(G, d1, 1, 0, bbase, "0");
  emit_read(G, d1, 1, 1, bbase, "0");
  emit_read(G, d1, 0, 1, abase, "0");
  emit_sub_gemm(G, d1, 0, 0);
  emit_sub_gemm(G, d1, 0, 1);
  if (kpb > 1) {
    pragma_unroll(G, d1);
    line(G, d1, "for (int kk = 1; kk < %d; ++kk) {", kpb);
    int d2 = d1 + 1;
    emit_read(G, d2, 0, 0, abase, "kk");
    emit_sub_gemm(G, d2, 1, 0);
    emit_read(G, d2, 1, 0, bbase, "kk");
    emit_sub_gemm(G, d2, 1, 1);
    emit_read(G, d2, 1, 1, bbase, "kk");
    emit_read(G, d2, 0, 1, abase, "kk");
    emit_sub_gemm(G, d2, 0, 0);
    emit_sub_gemm(G, d2, 0, 1);
    line(G, d1, "}");
  }
  emit_sub_gemm(G, d1, 1, 0);
  emit_sub_gemm(G, d1, 1, 1);
  line(G, depth, "}");
}

/* ---- the threadwise copy of C ----------------------------------------- */

tc_status tc_gemm_gen_store_c(gen *G, const tc_expr *m, const tc_expr *n, const char *acc,
                              int depth) {
  tc_epool *P = G->pool;
  const tc_expr *off, *valid;
  tc_status st = index_of(G, G->c, "C", m, n, &off, &valid);
  if (st != TC_OK || tc_e_is_const(valid, 0)) return st;
  tc_str idx, val;
  tc_str_init(&idx);
  tc_str_init(&val);
  tc_e_print_c(&idx, P, off);
  if (G->pb->alpha == 1.0f)
    tc_str_cat(&val, acc);
  else
    tc_str_printf(&val, "(float)%.9g * %s", (double)G->pb->alpha, acc);
  if (G->pb->accumulate) {
    tc_str_cat(&val, " + ");
    G->d->load(&val, G->pb->c_dtype, TC_MEM_GLOBAL, "C", tc_str_cstr(&idx));
  }
  tc_str_indent(G->o, depth);
  if (!tc_e_is_const(valid, 1)) {
    tc_str_cat(G->o, "if (");
    tc_e_print_c(G->o, P, valid);
    tc_str_cat(G->o, ") ");
  }
  G->d->store(G->o, G->pb->c_dtype, TC_MEM_GLOBAL, "C", tc_str_cstr(&idx), tc_str_cstr(&val));
  tc_str_cat(G->o, "\n");
  tc_str_free(&idx);
  tc_str_free(&val);
  return TC_OK;
}

/* The width of the threadwise copy's vector stores to C along N:
 * c_per_write capped by what the padded view of C allows along N; 1 where
 * the dialect has no vector accesses.  A vector starts at n = n_blk*NPB +
 * n_thr + s*NPB/2 + j, a multiple of w: w | NPT, n_thr and NPB/2 are
 * multiples of NPT and j steps by w. */
static int c_store_width(gen *G) {
  const tc_gemm_params *p = G->p;
  int w = p->c_per_write;
  int eb = (int)tc_dtype_size(G->pb->c_dtype);
  if (!G->d->vec_store || !G->d->vec_load || !G->d->vec_elem || w < 2 || w > 4 ||
      (w & (w - 1)) || p->n_per_thread % w || w * eb > 16)
    return 1;
  int vw = tc_view_vector_width(G->c, 2, eb, 16);
  while (w > 1 && w > vw) w /= 2;
  return w;
}

/* The vector store of accumulators c_acc[a0 .. a0 + w) to C at (g_id, m,
 * n .. n + w): as tc_gemm_gen_store_c, the predicate (uniform over the
 * vector) evaluated once and the old C (accumulate mode) read as a vector. */
static tc_status store_c_vec(gen *G, const tc_expr *m, const tc_expr *n, int a0, int w, int depth) {
  tc_epool *P = G->pool;
  const tc_expr *off, *valid;
  tc_status st = index_of(G, G->c, "C", m, n, &off, &valid);
  if (st != TC_OK || tc_e_is_const(valid, 0)) return st;
  tc_str idx, old;
  tc_str_init(&idx);
  tc_str_init(&old);
  tc_e_print_c(&idx, P, off);
  tc_str_indent(G->o, depth);
  if (!tc_e_is_const(valid, 1)) {
    tc_str_cat(G->o, "if (");
    tc_e_print_c(G->o, P, valid);
    tc_str_cat(G->o, ") ");
  }
  tc_str_cat(G->o, "{\n");
  char var[32], vals[4][160];
  const char *vp[4];
  snprintf(var, sizeof var, "c_old%d", a0);
  if (G->pb->accumulate)
    G->d->vec_load(G->o, G->pb->c_dtype, TC_MEM_GLOBAL, "C", tc_str_cstr(&idx), w, 0, NULL, var,
                   depth + 1);
  for (int e = 0; e < w; e++) {
    tc_str_clear(&old);
    if (G->pb->accumulate) {
      tc_str_cat(&old, " + ");
      G->d->vec_elem(&old, G->pb->c_dtype, var, w, e, 0);
    }
    if (G->pb->alpha == 1.0f)
      snprintf(vals[e], sizeof vals[e], "c_acc[%d]%s", a0 + e, tc_str_cstr(&old));
    else
      snprintf(vals[e], sizeof vals[e], "(float)%.9g * c_acc[%d]%s", (double)G->pb->alpha, a0 + e,
               tc_str_cstr(&old));
    vp[e] = vals[e];
  }
  G->d->vec_store(G->o, G->pb->c_dtype, TC_MEM_GLOBAL, "C", tc_str_cstr(&idx), w, 0, vp, depth + 1);
  line(G, depth, "}");
  tc_str_free(&idx);
  tc_str_free(&old);
  return TC_OK;
}

static tc_status emit_c_store(gen *G, int depth) {
  if (G->wgmma) return tc_wgmma_emit_c_store(G, depth);
  if (G->xdl) return G->mma ? tc_mma_emit_c_store(G, depth) : tc_mfma_emit_c_store(G, depth);
  const tc_gemm_params *p = G->p;
  tc_epool *P = G->pool;
  int mpt = p->m_per_thread, npt = p->n_per_thread;
  char acc[32];
  tc_status st = TC_OK;
  int w = c_store_width(G);
  line(G, depth, "/* threadwise copy: registers -> C */");
  for (int r = 0; r < 2 && st == TC_OK; r++)
    for (int i = 0; i < mpt && st == TC_OK; i++)
      for (int s = 0; s < 2 && st == TC_OK; s++)
        for (int j = 0; j < npt && st == TC_OK; j += w) {
          int row = r * mpt + i, col = s * npt + j;
          const tc_expr *m = tc_e_addc(
              P, tc_e_add(P, tc_e_mulc(P, G->m_blk, p->m_per_block), G->m_thr),
              r * (p->m_per_block / 2) + i);
          const tc_expr *n = tc_e_addc(
              P, tc_e_add(P, tc_e_mulc(P, G->n_blk, p->n_per_block), G->n_thr),
              s * (p->n_per_block / 2) + j);
          if (w > 1) {
            st = store_c_vec(G, m, n, row * 2 * npt + col, w, depth);
            continue;
          }
          snprintf(acc, sizeof acc, "c_acc[%d]", row * 2 * npt + col);
          st = tc_gemm_gen_store_c(G, m, n, acc, depth);
        }
  return st;
}

/* ---- the kernel ------------------------------------------------------- */

static void describe_view(gen *G, const char *what, const tc_view *v) {
  tc_str t;
  tc_str_init(&t);
  tc_view_describe(v, &t);
  const char *c = tc_str_cstr(&t);
  line(G, 0, " * %s:", what);
  while (*c) {
    const char *e = strchr(c, '\n');
    size_t len = e ? (size_t)(e - c) : strlen(c);
    tc_str_cat(G->o, " *   ");
    /* never let the text close the comment */
    for (size_t i = 0; i < len; i++) {
      char ch[2] = {c[i], 0};
      if (c[i] == '*' && i + 1 < len && c[i + 1] == '/') ch[0] = '_';
      tc_str_cat(G->o, ch);
    }
    tc_str_cat(G->o, "\n");
    c += len + (e != NULL);
  }
  tc_str_free(&t);
}

static tc_status emit_kernel(gen *G, const char *name) {
  const tc_gemm_params *p = G->p;
  const tc_dialect *d = G->d;
  tc_epool *P = G->pool;
  int bs = p->block_size, mpb = p->m_per_block, npb = p->n_per_block, kpb = p->k_per_block;
  int mpt = p->m_per_thread, npt = p->n_per_thread;
  int ml0 = p->m_level0, nl0 = p->n_level0, nl1 = p->n_level1;
  int64_t nblocks = G->s.g * G->nm * G->nn;
  char cfg[96];
  tc_gemm_params_format(p, cfg, sizeof cfg);

  tc_str_printf(G->o, "/* generated by tilec %s for %s */\n", TILEC_VERSION, d->name);
  tc_str_cat(G->o, "#ifndef TC_PRELUDE\n#define TC_PRELUDE\n");
  tc_str_cat(G->o, d->prelude);
  tc_str_cat(G->o, "#endif\n\n");
  line(G, 0, "/* gridwise GEMM: C[g][m][n] %s %s sum_k A[g][k][m] * B[g][k][n]",
       G->pb->accumulate ? "+=" : "=", "alpha *");
  line(G, 0, " * G=%lld M=%lld N=%lld K=%lld, A %s, B %s, C %s, alpha %.9g, f32 accumulation",
       (long long)G->s.g, (long long)G->s.m, (long long)G->s.n, (long long)G->s.k,
       tc_dtype_name(G->pb->a_dtype), tc_dtype_name(G->pb->b_dtype),
       tc_dtype_name(G->pb->c_dtype), (double)G->pb->alpha);
  if (G->wgmma)
    line(G, 0, " * perf config %s (wgmma, sm_90a): %d warp groups of 64 x %d, m64n%dk16, A and B "
               "from shared memory (K-major core matrices, no swizzle)",
         cfg, p->waves_m, p->n_per_block, p->n_per_block);
  else if (G->mma)
    line(G, 0, " * perf config %s (mma.sync): %d x %d warps of %d x %d, m16n8k16; A copy cluster "
               "k%d x m%d (read along %s, %d per read); B copy cluster k%d x n%d (read along %s, "
               "%d per read)",
         cfg, p->waves_m, p->waves_n, p->m_per_wave, p->n_per_wave, p->a_cluster_k, p->a_cluster_m,
         p->a_read_dim == TC_GEMM_READ_K ? "K" : "M", p->a_src_per_read, p->b_cluster_k,
         p->b_cluster_n, p->b_read_dim == TC_GEMM_READ_K ? "K" : "N", p->b_src_per_read);
  else if (G->xdl)
    line(G, 0, " * perf config %s (XDLOPS): %d x %d waves of %d x %d, MFMA %s; A copy cluster k%d"
               " x m%d (read along %s, %d per read); B copy cluster k%d x n%d (read along %s, %d "
               "per read)",
         cfg, p->waves_m, p->waves_n, p->m_per_wave, p->n_per_wave,
         p->mfma == TC_MFMA_32X32X8 ? "32x32x8" : "16x16x16", p->a_cluster_k, p->a_cluster_m,
         p->a_read_dim == TC_GEMM_READ_K ? "K" : "M", p->a_src_per_read, p->b_cluster_k,
         p->b_cluster_n, p->b_read_dim == TC_GEMM_READ_K ? "K" : "N", p->b_src_per_read);
  else
    line(G, 0, " * perf config %s: levels m %dx%d n %dx%d; A copy cluster k%d x m%d (read along "
               "%s, %d per read); B copy cluster k%d x n%d (read along %s, %d per read)",
         cfg, p->m_level0, p->m_level1, p->n_level0, p->n_level1, p->a_cluster_k, p->a_cluster_m,
         p->a_read_dim == TC_GEMM_READ_K ? "K" : "M", p->a_src_per_read, p->b_cluster_k,
         p->b_cluster_n, p->b_read_dim == TC_GEMM_READ_K ? "K" : "N", p->b_src_per_read);
  if (G->mma)
    line(G, 0, " * global -> shared: A %s, B %s",
         async_width(G, 0) ? "asynchronous (cp.async)" : "through registers",
         async_width(G, 1) ? "asynchronous (cp.async)" : "through registers");
  line(G, 0, " * grid %lld blocks (G * %lld m tiles * %lld n tiles), %d threads; %lld K tiles: "
             "%lld main-loop iterations, tail with %s tile%s",
       (long long)nblocks, (long long)G->nm, (long long)G->nn, bs, (long long)G->nk,
       (long long)((G->nk - 1) / 2), G->nk % 2 ? "one" : "two", G->nk % 2 ? "" : "s");
  describe_view(G, "A (padded)", G->a);
  describe_view(G, "B (padded)", G->b);
  describe_view(G, "C (padded)", G->c);
  line(G, 0, " */");
  if (G->wgmma) tc_wgmma_emit_prelude(G);
  else if (G->mma) tc_mma_emit_prelude(G);
  else if (G->xdl) tc_mfma_emit_prelude(G);

  d->kernel_begin(G->o, name, bs);
  d->buffer_param(G->o, G->pb->a_dtype, "A", 0, 1);
  d->buffer_param(G->o, G->pb->b_dtype, "B", 0, 0);
  d->buffer_param(G->o, G->pb->c_dtype, "C", 1, 0);
  tc_str_cat(G->o, ") {\n");
  tc_str_cat(G->o, d->index_defs);
  /* LDS holds f32 (XDLOPS: the 16-bit inputs as stored) */
  d->shared_array(G->o, G->xdl ? G->pb->a_dtype : TC_F32, "a_lds", 2 * (int64_t)kpb * mpb, 1);
  d->shared_array(G->o, G->xdl ? G->pb->b_dtype : TC_F32, "b_lds", 2 * (int64_t)kpb * npb, 1);
  if (G->a_bytes > 0) d->buffer_setup(G->o, G->pb->a_dtype, "A", G->a_bytes, 1);
  if (G->b_bytes > 0) d->buffer_setup(G->o, G->pb->b_dtype, "B", G->b_bytes, 1);

  /* block and thread coordinates */
  const tc_expr *bid = tc_e_var(P, "bidx", 0, nblocks - 1);
  const tc_expr *tid = tc_e_var(P, "tid", 0, bs - 1);
  line(G, 1, "const int tid = tidx;");
  def_var(G, 1, "g_id", tc_e_divc(P, bid, G->nm * G->nn));
  def_var(G, 1, "m_blk", tc_e_modc(P, tc_e_divc(P, bid, G->nn), G->nm));
  def_var(G, 1, "n_blk", tc_e_modc(P, bid, G->nn));
  /* blockwise-GEMM position of the thread's C tile (XDLOPS: of the
   * wave's, in tc_mfma_emit_setup) */
  if (!G->xdl) {
    const tc_expr *mthr =
        tc_e_add(P, tc_e_mulc(P, tc_e_divc(P, tid, ml0 * nl0 * nl1), mpt * ml0),
                 tc_e_mulc(P, tc_e_modc(P, tc_e_divc(P, tid, nl0), ml0), mpt));
    const tc_expr *nthr =
        tc_e_add(P, tc_e_mulc(P, tc_e_modc(P, tc_e_divc(P, tid, ml0 * nl0), nl1), npt * nl0),
                 tc_e_mulc(P, tc_e_modc(P, tid, nl0), npt));
    def_var(G, 1, "m_thr", mthr);
    def_var(G, 1, "n_thr", nthr);
  }
  /* blockwise-copy positions: the read dimension varies fastest */
  for (int is_b = 0; is_b < 2; is_b++) {
    int ck = is_b ? p->b_cluster_k : p->a_cluster_k, cx = is_b ? p->b_cluster_n : p->a_cluster_m;
    int ext = is_b ? npb : mpb;
    int along_k = (is_b ? p->b_read_dim : p->a_read_dim) == TC_GEMM_READ_K;
    const tc_expr *pk = along_k ? tc_e_modc(P, tid, ck) : tc_e_divc(P, tid, cx);
    const tc_expr *px = along_k ? tc_e_divc(P, tid, ck) : tc_e_modc(P, tid, cx);
    def_var(G, 1, is_b ? "b_k0" : "a_k0", tc_e_mulc(P, pk, kpb / ck));
    def_var(G, 1, is_b ? "b_n0" : "a_m0", tc_e_mulc(P, px, ext / cx));
  }
  /* the same quantities as variables for the index expressions */
  G->g_id = tc_e_var(P, "g_id", 0, G->s.g - 1);
  G->m_blk = tc_e_var(P, "m_blk", 0, G->nm - 1);
  G->n_blk = tc_e_var(P, "n_blk", 0, G->nn - 1);
  G->k_tile = tc_e_var(P, "k_tile", 0, G->nk - 1);
  G->m_thr = tc_e_var(P, "m_thr", 0, mpb / 2 - mpt);
  G->n_thr = tc_e_var(P, "n_thr", 0, npb / 2 - npt);
  G->a_k0 = tc_e_var(P, "a_k0", 0, kpb - kpb / p->a_cluster_k);
  G->a_m0 = tc_e_var(P, "a_m0", 0, mpb - mpb / p->a_cluster_m);
  G->b_k0 = tc_e_var(P, "b_k0", 0, kpb - kpb / p->b_cluster_k);
  G->b_n0 = tc_e_var(P, "b_n0", 0, npb - npb / p->b_cluster_n);

  int acopy = kpb * mpb / bs, bcopy = kpb * npb / bs;
  if (G->xdl) {
    if (!async_width(G, 0))
      line(G, 1, "%s a_copy[%d];  /* blockwise-copy registers (stored bits) */",
           tc_storage_type(G->pb->a_dtype), acopy);
    if (!async_width(G, 1)) line(G, 1, "%s b_copy[%d];", tc_storage_type(G->pb->b_dtype), bcopy);
    if (G->wgmma) tc_wgmma_emit_setup(G, 1);
    else if (G->mma) tc_mma_emit_setup(G, 1);
    else tc_mfma_emit_setup(G, 1);
  } else {
    line(G, 1, "float a_copy[%d], b_copy[%d];  /* blockwise-copy registers */", acopy, bcopy);
    line(G, 1, "float a_sub[%d], b_sub[%d];  /* 2x2 pipeline operands */", 2 * mpt, 2 * npt);
    line(G, 1, "float c_acc[%d];  /* [%d][%d] accumulators */", 4 * mpt * npt, 2 * mpt, 2 * npt);
    pragma_unroll(G, 1);
    line(G, 1, "for (int i = 0; i < %d; ++i) c_acc[i] = 0.0f;", 4 * mpt * npt);
  }

  line(G, 1, "/* prologue: tile 0 -> registers -> even buffers */");
  tc_status st = emit_load_tile(G, 1, "0", 0);
  if (st != TC_OK) return st;
  emit_store(G, 0, 1);

  int64_t iters = (G->nk - 1) / 2;
  line(G, 1, "/* double-buffered main loop: %lld iterations of two K tiles */", (long long)iters);
  if (iters > 0) {
    line(G, 1, "for (int iter = 0; iter < %lld; ++iter) {", (long long)iters);
    line(G, 2, "%s", d->barrier);
    st = emit_load_tile(G, 2, "2 * iter + 1", 1);
    if (st != TC_OK) return st;
    emit_block_gemm(G, 0, 2);
    emit_store(G, 1, 2);
    line(G, 2, "%s", d->barrier);
    st = emit_load_tile(G, 2, "2 * iter + 2", 0);
    if (st != TC_OK) return st;
    emit_block_gemm(G, 1, 2);
    emit_store(G, 0, 2);
    line(G, 1, "}");
  }
  line(G, 1, "/* loop tail: %s */",
       G->nk % 2 ? "one tile left (in the even buffers)"
                 : "two tiles left (even buffers, and the last tile still in global memory)");
  line(G, 1, "%s", d->barrier);
  if (G->nk % 2) {
    emit_block_gemm(G, 0, 1);
  } else {
    char last[32];
    snprintf(last, sizeof last, "%lld", (long long)(G->nk - 1));
    st = emit_load_tile(G, 1, last, 1);
    if (st != TC_OK) return st;
    emit_block_gemm(G, 0, 1);
    emit_store(G, 1, 1);
    line(G, 1, "%s", d->barrier);
    emit_block_gemm(G, 1, 1);
  }
  st = emit_c_store(G, 1);
  if (st != TC_OK) return st;
  tc_str_cat(G->o, "}\n");
  return TC_OK;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The bytes a buffer resource for the (padded) view v must cover: one past
 * the largest element offset any coordinate of [G, e1, e2] may give, by
 * range analysis; 0 (plain loads) when an offset may be negative or the
 * bytes exceed INT32_MAX (a buffer load's 32-bit byte offset). */
static int64_t buffer_bytes(gen *G, const tc_view *v, tc_dtype t, int64_t e1, int64_t e2) {
  const tc_expr *up[3] = {tc_e_var(G->pool, "g_id", 0, G->s.g - 1),
                          tc_e_var(G->pool, "x", 0, e1 - 1), tc_e_var(G->pool, "y", 0, e2 - 1)};
  const tc_expr *off, *valid;
  tc_view_index(v, G->pool, up, &off, &valid);
  int64_t es = (int64_t)tc_dtype_size(t);
  if (off->lo < 0 || off->hi >= INT32_MAX / es) return 0;
  return (off->hi + 1) * es;
}

/* Copies v and pads upper dims 1 and 2 at the end to the given extents. */
static tc_status pad_view(gen *G, const tc_view *v, const char *what, int64_t e1, int64_t e2,
                          tc_view **out) {
  tc_view *c = tc_view_copy(v);
  if (!c) return fail(G, TC_ERR_ARGUMENT, "GEMM: cannot copy the view of %s", what);
  int64_t ext[2] = {e1, e2};
  for (int i = 0; i < 2; i++) {
    int64_t cur = tc_view_extent(c, i + 1);
    if (cur < ext[i] && tc_view_pad(c, i + 1, 0, ext[i] - cur)) {
      tc_status st = fail(G, TC_ERR_ARGUMENT, "GEMM: padding %s: %s", what, c->err);
      tc_view_free(c);
      return st;
    }
  }
  *out = c;
  return TC_OK;
}

tc_status tc_gemm_generate(const tc_gemm_problem *pb, const tc_gemm_params *p, tc_target target,
                           const char *name, tc_gemm_kernel *out, tc_str *err) {
  gen G;
  memset(&G, 0, sizeof G);
  G.err = err;
  if (err) tc_str_clear(err);
  if (!out) return fail(&G, TC_ERR_ARGUMENT, "GEMM: no output kernel");
  memset(out, 0, sizeof *out);
  if (!pb || !p) return fail(&G, TC_ERR_ARGUMENT, "GEMM: no problem or no parameters");
  if (!name) name = "tilec_gemm";
  if (!valid_name(name))
    return fail(&G, TC_ERR_ARGUMENT,
                "GEMM: kernel name \"%.80s\" must be a C identifier of 1 to 63 characters", name);
  if (tc_gemm_params_is_tma(p)) return tc_gemm_tma_generate(pb, p, target, name, out, err);
  if (!(G.d = tc_dialect_for(target)))
    return fail(&G, TC_ERR_UNSUPPORTED, "GEMM: unknown target %d (OpenCL, CUDA and HIP only)",
                (int)target);
  G.pb = pb, G.p = p;
  tc_status st = check_problem(&G);
  if (st != TC_OK) return st;
  G.xdl = tc_gemm_params_is_xdlops(p);
  G.mma = tc_gemm_params_is_mma(p);
  G.wgmma = tc_gemm_params_is_wgmma(p);
  if (G.wgmma && !G.d->wgmma)
    return fail(&G, TC_ERR_UNSUPPORTED,
                "GEMM: wgmma kernels are for NVIDIA sm_90a: target cuda, or opencl (emulated); "
                "not %s", tc_target_name(target));
  if (G.mma && !G.d->mma)
    return fail(&G, TC_ERR_UNSUPPORTED,
                "GEMM: mma.sync kernels are for NVIDIA GPUs: target cuda, or opencl (emulated); "
                "not %s", tc_target_name(target));
  if (G.mma && (pb->a_dtype != pb->b_dtype || (pb->a_dtype != TC_F16 && pb->a_dtype != TC_BF16)))
    return fail(&G, TC_ERR_UNSUPPORTED,
                "GEMM: mma.sync kernels need A and B both f16 or both bf16 (got %s and %s)",
                tc_dtype_name(pb->a_dtype), tc_dtype_name(pb->b_dtype));
  if (G.xdl && !G.mma && !G.d->mfma)
    return fail(&G, TC_ERR_UNSUPPORTED,
                "GEMM: XDLOPS (MFMA) kernels are for AMD GPUs: target hip, or opencl (emulated); "
                "not %s", tc_target_name(target));
  if (G.xdl && (pb->a_dtype != pb->b_dtype || (pb->a_dtype != TC_F16 && pb->a_dtype != TC_BF16)))
    return fail(&G, TC_ERR_UNSUPPORTED,
                "GEMM: XDLOPS (MFMA) kernels need A and B both f16 or both bf16 (got %s and %s)",
                tc_dtype_name(pb->a_dtype), tc_dtype_name(pb->b_dtype));
  G.s = tc_gemm_problem_shape(pb);
  TC_STR_LOCAL(why);
  if (tc_gemm_params_check(p, &G.s, &why))
    return fail(&G, TC_ERR_ARGUMENT, "GEMM: invalid parameters: %s", tc_str_cstr(&why));
  G.nm = ceil_div(G.s.m, p->m_per_block);
  G.nn = ceil_div(G.s.n, p->n_per_block);
  G.nk = ceil_div(G.s.k, p->k_per_block);
  if (G.s.g > INT_MAX / G.nm / G.nn)
    return fail(&G, TC_ERR_UNSUPPORTED, "GEMM: %lld * %lld * %lld blocks exceed the grid limit %d",
                (long long)G.s.g, (long long)G.nm, (long long)G.nn, INT_MAX);
  if (G.nk > INT_MAX / p->k_per_block)
    return fail(&G, TC_ERR_UNSUPPORTED, "GEMM: K = %lld is too large", (long long)G.s.k);
  st = pad_view(&G, pb->a, "A", G.nk * p->k_per_block, G.nm * p->m_per_block, &G.a);
  if (st == TC_OK) st = pad_view(&G, pb->b, "B", G.nk * p->k_per_block, G.nn * p->n_per_block, &G.b);
  if (st == TC_OK) st = pad_view(&G, pb->c, "C", G.nm * p->m_per_block, G.nn * p->n_per_block, &G.c);
  tc_str src;
  tc_str_init(&src);
  if (st == TC_OK) {
    G.pool = tc_epool_new();
    if (G.d->buffer_setup && G.d->buffer_load) {
      G.a_bytes = buffer_bytes(&G, G.a, pb->a_dtype, G.nk * p->k_per_block, G.nm * p->m_per_block);
      G.b_bytes = buffer_bytes(&G, G.b, pb->b_dtype, G.nk * p->k_per_block, G.nn * p->n_per_block);
    }
    G.o = &src;
    st = emit_kernel(&G, name);
    tc_epool_free(G.pool);
  }
  if (G.a) tc_view_free(G.a);
  if (G.b) tc_view_free(G.b);
  if (G.c) tc_view_free(G.c);
  if (st != TC_OK) {
    tc_str_free(&src);
    return st;
  }
  out->source = tc_str_take(&src);
  snprintf(out->name, sizeof out->name, "%s", name);
  out->grid[0] = (size_t)(G.s.g * G.nm * G.nn), out->grid[1] = out->grid[2] = 1;
  out->block[0] = (size_t)p->block_size, out->block[1] = out->block[2] = 1;
  out->smem_bytes = tc_gemm_lds_bytes(p) + (G.wgmma ? 0
                                            : G.mma ? tc_mma_extra_smem(G.d, p)
                                            : G.xdl ? tc_mfma_extra_smem(G.d, p)
                                                    : 0);
  return TC_OK;
}
