/* gemm_wgmma.c - the wgmma blockwise GEMM (NVIDIA sm_90a warp groups):
 * wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16} with A
 * and B read from shared memory through matrix descriptors, printed for
 * CUDA (the PTX, wgmma_cuda.c) and OpenCL (an emulation that reads the
 * shared tiles through the descriptors, wgmma_emu.c).  docs/wgmma.md.
 *
 * The kernel frame is gemm.c's (XDLOPS-like parameters: global ->
 * registers -> shared copies of the stored 16-bit values, the
 * double-buffered K loop); this file supplies the shared-memory layout of
 * the tiles, the register -> shared stores in it, the setup, the
 * blockwise GEMM and the C store.
 *
 * Shared layout (both operands, K-major, no swizzle: the PTX ISA's
 * canonical "K-major, no-swizzling" layout ((8,m),(T,2k)) :
 * ((1T,SBO),(1,LBO)), T = 8 16-bit elements = 16 bytes).  It is built as
 * transforms on the axis graph (domain.h), not typed as a formula:
 *
 *   X (M for A, N for B; extent MPB / NPB), K (KPB)
 *   split(X, 8) -> x_o, x_i(8)      8-row groups (core matrices of 8 rows)
 *   split(K, 8) -> k_o, k_i(8)      16-byte core-matrix rows
 *   allocation order [k_o, x_o, x_i, k_i], row-major:
 *
 * so each core matrix (8 rows x 16 bytes) is 128 contiguous bytes, the
 * core matrices of one K slice follow each other along X (SBO = the
 * stride of x_o = 128 bytes) and the K slices follow (LBO = the stride of
 * k_o = X / 8 * 128 bytes).  The stores' offsets, the descriptors' start
 * addresses, LBO and SBO are all read off this one graph.
 *
 * Warp groups: waves_m = MPB / 64 groups of 128 threads; group wg = tid /
 * 128 owns rows wg*64 .. + 64 and all NPB columns; per 16-wide K step it
 * issues one wgmma m64n<NPB>k16 with A at (m = wg*64, k = 16 ks) and B at
 * (n = 0, k = 16 ks).  The accumulator D (PTX ISA, "WGMMA .m64nNk16
 * register fragment layout for accumulator matrix D"; CUTLASS
 * CLayout_64xN = ((4,8,4),(2,2,N/8)) : ((128,1,16),(64,8,512))): value j of
 * thread t of the group is D[16 (t/32) + g + 8 ((j/2)%2)][8 (j/4) + 2 tq +
 * j%2], g = t%32/4, tq = t%4. */
#include <stdio.h>
#include <string.h>

#include "../layout/domain.h"
#include "gemm_gen.h"
#include "../base/test_hooks.h"

#define line tc_gemm_gen_line
#define unroll tc_gemm_gen_unroll

void tc_wgmma_d_layout(int t, int j, int *row, int *col) {
  int w = t / 32, g = (t % 32) / 4, tq = t % 4;
  *row = 16 * w + g + 8 * ((j / 2) % 2);
  *col = 8 * (j / 4) + 2 * tq + j % 2;
  if (tc_test_hooks_get()->wgmma_fault == 3) *row = 16 * w + g + 8 * (1 - (j / 2) % 2);
}

/* The shared layout of one operand tile [X][K] (see the top). */
typedef struct wg_layout {
  tc_dgraph g;
  int root_k, root_x;
  int alloc[4];      /* allocation order */
  int64_t stride[4]; /* element strides, row-major over alloc */
  int k_o, x_o;
} wg_layout;

static void layout_build(wg_layout *L, int kpb, int ext) {
  TC_STR_LOCAL(err);
  int ki, xi;
  tc_dg_init(&L->g);
  L->root_k = tc_dg_root(&L->g, kpb, 0);
  L->root_x = tc_dg_root(&L->g, ext, 1);
  tc_dg_split(&L->g, L->root_x, 8, 1, &L->x_o, &xi, &err);
  tc_dg_split(&L->g, L->root_k, 8, 1, &L->k_o, &ki, &err);
  int order[4] = {L->k_o, L->x_o, xi, ki};
  if (tc_test_hooks_get()->wgmma_fault == 1) order[2] = ki, order[3] = xi; /* core matrices transposed */
  memcpy(L->alloc, order, sizeof order);
  int64_t s = 1;
  for (int i = 3; i >= 0; i--) {
    L->stride[i] = s;
    s *= L->g.axes[L->alloc[i]].extent;
  }
}

static int64_t layout_stride(const wg_layout *L, int axis) {
  for (int i = 0; i < 4; i++)
    if (L->alloc[i] == axis) return L->stride[i];
  return 0;
}

/* The element offset of (k, x) in the tile, by walking the graph. */
static const tc_expr *layout_offset(tc_epool *P, const wg_layout *L, const tc_expr *k,
                                    const tc_expr *x) {
  const tc_expr *vals[16] = {0};
  vals[L->root_k] = k;
  vals[L->root_x] = x;
  tc_dg_walk(P, &L->g, vals, NULL);
  const tc_expr *off = tc_e_const(P, 0);
  for (int i = 0; i < 4; i++) off = tc_e_add(P, off, tc_e_mulc(P, vals[L->alloc[i]], L->stride[i]));
  return tc_simplify(P, off);
}

void tc_wgmma_emit_prelude(tc_gemm_gen *G) {
  tc_str_cat(G->o, "#ifndef TC_WGMMA_PRELUDE\n#define TC_WGMMA_PRELUDE\n");
  tc_str_cat(G->o, G->d->wgmma_prelude ? G->d->wgmma_prelude : "");
  tc_str_cat(G->o, "#endif\n\n");
}

void tc_wgmma_emit_setup(tc_gemm_gen *G, int depth) {
  const tc_gemm_params *p = G->p;
  line(G, depth, "/* wgmma m64n%dk16: %d warp groups of 128 threads, each 64 x %d */",
       p->n_per_block, p->waves_m, p->n_per_block);
  line(G, depth, "const int tc_wg = tid / 128, tc_wgw = (tid / 32) %% 4;");
  line(G, depth, "const int mma_g = (tid %% 32) / 4, mma_t = tid %% 4;");
  line(G, depth, "float c_acc[%d];  /* wgmma accumulator fragment (D) */", p->n_per_block / 2);
  unroll(G, depth);
  line(G, depth, "for (int j = 0; j < %d; ++j) c_acc[j] = 0.0f;", p->n_per_block / 2);
}

/* Registers -> shared buffer `odd` in the K-major core-matrix layout:
 * element (k0 + i, x0 + j) of the copy's slice at the layout's offset. */
void tc_wgmma_emit_store(tc_gemm_gen *G, int odd, int depth) {
  const tc_gemm_params *p = G->p;
  tc_epool *P = G->pool;
  tc_str idx;
  tc_str_init(&idx);
  for (int is_b = 0; is_b < 2; is_b++) {
    int kpb = p->k_per_block, ext = is_b ? p->n_per_block : p->m_per_block;
    int slice_k = kpb / (is_b ? p->b_cluster_k : p->a_cluster_k);
    int slice_x = ext / (is_b ? p->b_cluster_n : p->a_cluster_m);
    wg_layout L;
    layout_build(&L, kpb, ext);
    const tc_expr *k0 = is_b ? G->b_k0 : G->a_k0, *x0 = is_b ? G->b_n0 : G->a_m0;
    for (int i = 0; i < slice_k; i++)
      for (int j = 0; j < slice_x; j++) {
        const tc_expr *off =
            layout_offset(P, &L, tc_e_addc(P, k0, i), tc_e_addc(P, x0, j));
        tc_str_clear(&idx);
        tc_e_print_c(&idx, P, off);
        line(G, depth, "%s[%d + %s] = %s[%d];", is_b ? "b_lds" : "a_lds", odd ? kpb * ext : 0,
             tc_str_cstr(&idx), is_b ? "b_copy" : "a_copy", i * slice_x + j);
      }
    tc_dg_free(&L.g);
  }
  tc_str_free(&idx);
  if (G->d->wgmma_store_fence) line(G, depth, "%s", G->d->wgmma_store_fence);
}

void tc_wgmma_emit_block_gemm(tc_gemm_gen *G, int odd, int depth) {
  const tc_gemm_params *p = G->p;
  tc_epool *P = G->pool;
  int kpb = p->k_per_block, mpb = p->m_per_block, npb = p->n_per_block;
  wg_layout LA, LB;
  layout_build(&LA, kpb, mpb);
  layout_build(&LB, kpb, npb);
  /* LBO: K-adjacent core matrices (k_o); SBO: 8-row groups (x_o); bytes */
  int64_t a_lbo = 2 * layout_stride(&LA, LA.k_o), a_sbo = 2 * layout_stride(&LA, LA.x_o);
  int64_t b_lbo = 2 * layout_stride(&LB, LB.k_o), b_sbo = 2 * layout_stride(&LB, LB.x_o);
  if (tc_test_hooks_get()->wgmma_fault == 2) { /* LBO and SBO swapped */
    int64_t t = a_lbo;
    a_lbo = a_sbo, a_sbo = t;
    t = b_lbo, b_lbo = b_sbo, b_sbo = t;
  }
  int d1 = depth + 1;
  line(G, depth, "{ /* blockwise GEMM (wgmma m64n%dk16) on the %s buffers */", npb,
       odd ? "odd" : "even");
  if (G->d->wgmma_begin) line(G, d1, "%s", G->d->wgmma_begin);
  const tc_expr *wg = tc_e_var(P, "tc_wg", 0, p->waves_m - 1);
  tc_str ao, bo, aa, ba;
  tc_str_init(&ao), tc_str_init(&bo), tc_str_init(&aa), tc_str_init(&ba);
  for (int ks = 0; ks < kpb / 16; ks++) {
    tc_str_clear(&ao), tc_str_clear(&bo), tc_str_clear(&aa), tc_str_clear(&ba);
    tc_str_printf(&ao, "%d + ", odd ? kpb * mpb : 0);
    tc_e_print_c(&ao, P, layout_offset(P, &LA, tc_e_const(P, 16 * ks), tc_e_mulc(P, wg, 64)));
    tc_str_printf(&bo, "%d + ", odd ? kpb * npb : 0);
    tc_e_print_c(&bo, P, layout_offset(P, &LB, tc_e_const(P, 16 * ks), tc_e_const(P, 0)));
    G->d->wgmma_addr(&aa, "a_lds", tc_str_cstr(&ao));
    G->d->wgmma_addr(&ba, "b_lds", tc_str_cstr(&bo));
    line(G, d1, "{ /* K step %d: A at (m = tc_wg * 64, k = %d), B at (n = 0, k = %d) */", ks,
         16 * ks, 16 * ks);
    line(G, d1 + 1, "const %s tc_da = tc_wgmma_desc(%s, %lldu, %lldu, 0u);",
         G->d->wgmma_begin ? "unsigned long long" : "ulong", tc_str_cstr(&aa), (long long)a_lbo,
         (long long)a_sbo);
    line(G, d1 + 1, "const %s tc_db = tc_wgmma_desc(%s, %lldu, %lldu, 0u);",
         G->d->wgmma_begin ? "unsigned long long" : "ulong", tc_str_cstr(&ba), (long long)b_lbo,
         (long long)b_sbo);
    G->d->wgmma(G->o, G->pb->a_dtype, npb, "a_lds", "tc_da", "b_lds", "tc_db", 0, 0, "c_acc", d1 + 1);
    line(G, d1, "}");
  }
  if (G->d->wgmma_end) line(G, d1, "%s", G->d->wgmma_end);
  line(G, depth, "}");
  tc_str_free(&ao), tc_str_free(&bo), tc_str_free(&aa), tc_str_free(&ba);
  tc_dg_free(&LA.g);
  tc_dg_free(&LB.g);
}

tc_status tc_wgmma_emit_c_store(tc_gemm_gen *G, int depth) {
  const tc_gemm_params *p = G->p;
  tc_epool *P = G->pool;
  const tc_expr *wg = tc_e_var(P, "tc_wg", 0, p->waves_m - 1);
  const tc_expr *w = tc_e_var(P, "tc_wgw", 0, 3);
  const tc_expr *g = tc_e_var(P, "mma_g", 0, 7);
  const tc_expr *t2 = tc_e_mulc(P, tc_e_var(P, "mma_t", 0, 3), 2);
  char acc[32];
  tc_status st = TC_OK;
  line(G, depth, "/* threadwise copy: accumulators -> C (wgmma D: c_acc[j] at row 16*tc_wgw + "
                 "mma_g + 8*((j/2)%%2), column 8*(j/4) + 2*mma_t + j%%2) */");
  for (int j = 0; j < p->n_per_block / 2 && st == TC_OK; j++) {
    int rowc = 8 * ((j / 2) % 2);
    if (tc_test_hooks_get()->wgmma_fault == 3) rowc = 8 - rowc; /* rows g and g + 8 swapped */
    const tc_expr *m = tc_e_addc(
        P,
        tc_e_add(P, tc_e_add(P, tc_e_mulc(P, G->m_blk, p->m_per_block), tc_e_mulc(P, wg, 64)),
                 tc_e_add(P, tc_e_mulc(P, w, 16), g)),
        rowc);
    const tc_expr *n = tc_e_addc(
        P, tc_e_add(P, tc_e_mulc(P, G->n_blk, p->n_per_block), t2), 8 * (j / 4) + j % 2);
    snprintf(acc, sizeof acc, "c_acc[%d]", j);
    st = tc_gemm_gen_store_c(G, m, n, acc, depth);
  }
  return st;
}
