/* test_ldmatrix_index.c - LdStMatrixSet, the copy of nvFuser's
 * ldmatrix/stmatrix tutorial (docs/ldmatrix.md), in tilec: the fusion
 *
 *   tv0 (global) -> tv0_smem (bulk tensor load, shared, 128B swizzle)
 *     -> tv0_reg (ldmatrix, registers) -> tv1_smem (stmatrix, shared,
 *     128B swizzle) -> tv1 (bulk tensor store, global)
 *
 * built and scheduled through the public API as the tutorial does (CTA tile
 * 128x256, warp-group tile 64x256, 64x64 boxes, 16x16 ldmatrix.x4 tiles),
 * with the tutorial's scheduleLdStMatrix re-expressed call for call on an
 * abstract tensor.  Then the derived indices are checked:
 *
 *   1. The ldmatrix (stmatrix) address: lane t of the warp group at serial
 *      step i supplies one row address.  The address side is the loop
 *      domain (no*nio)(16), (mo*niio*mi)(128) TIDx, niii(8) Vectorize,
 *      scheduled with the abstract tensor and walked with tc_dg_walk to
 *      the logical domain and on through the swizzle to the allocation, as
 *      src/lower/lower.c indexes.  It must equal the tutorial's steps 1-6 in
 *      closed form: m = 16*(t/32) + t%16, c = 2*(i%4) + (t/16)%2, byte =
 *      base + (i/4)*8192 + m*128 + (c ^ (m%8))*16, lane l of each warp
 *      giving row l%8 of matrix l/8, the matrices top-left, bottom-left,
 *      top-right, bottom-right; and each row's 16 bytes are contiguous.
 *   2. The register side (the loop domain scheduleLdStMatrix makes): this
 *      test's walk agrees with the indices tc_lower derives for the
 *      element-copy statements, so 1 and 3 use lowering's own index math.
 *   3. The property that makes ldmatrix/stmatrix correct (see
 *      docs/ldmatrix.md): for every thread t, step i and vector lane v,
 *      the element the ldmatrix.x4 instruction delivers to register (t, i,
 *      v) - lane w*32 + 8*(v/2) + (t%32)/4's row address plus
 *      2*(2*(t%32 % 4) + v%2) bytes, by the PTX definition of the fragment
 *      - is the element the register-side loop domain says (t, i, v) holds
 *      (its offset in the swizzled allocation).  The same for stmatrix into
 *      tv1_smem.  The register side covers the 64x256 warp-group tile once.
 *   4. A simulation of the round trip: shared memory filled as the bulk
 *      load lays it out, ldmatrix.x4 and stmatrix.x4 executed lane by lane
 *      from the derived addresses, the output buffer read back as the bulk
 *      store reads it: the identity.  A negative control shows why 3 is the
 *      property to check and not only 4: with the matrices addressed in the
 *      wrong order on both sides the round trip is still the identity but
 *      property 3 fails (the registers would hold the wrong elements for
 *      any epilogue or MMA between the two).
 *   5. The fusion lowered at 256x512 and run on PoCL (ldmatrix/stmatrix
 *      now emulated by src/codegen/ldst_opencl.c, the bulk copies element
 *      copies): the output equals the input bit for bit. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tilec/tilec.h"
#include "ir/fusion.h"
#include "lower/kernel.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))
#define AT(call) TC_CHECK((call) == TC_OK, "%s failed", #call)

/* The constants of LdStMatrixSet. */
enum { CTA_M = 128, CTA_N = 256, WARP_M = 64, WARP_N = 256, TMA_N = 64, LDST_M = 16, LDST_N = 16 };

typedef struct ldst_set_fusion {
  tc_fusion *f;
  int64_t M, N;
  tc_tensor *tv0, *tv0_smem, *tv0_reg, *tv1_smem, *tv1;
  /* the address sides: axes of tv0_reg (ldmatrix reads tv0_smem) and of
   * tv1_smem (stmatrix writes it); the *_bad ones address the four 8x8
   * matrices in the wrong order (negative control) */
  tc_abstract_tensor *ld_addr, *st_addr, *ld_addr_bad, *st_addr_bad;
  int ok;
} ldst_set_fusion;

static void reorder(tc_abstract_tensor *at, int n, const int (*pairs)[2]) {
  int old[8], new_[8];
  for (int i = 0; i < n; i++) old[i] = pairs[i][0], new_[i] = pairs[i][1];
  TC_CHECK(tc_abstract_reorder(at, n, old, new_) == TC_OK, "reorder failed");
}

/* The tutorial's scheduleLdStMatrix, call for call. */
static tc_abstract_tensor *schedule_ldst_matrix(tc_tensor *tv) {
  tc_abstract_tensor *abstract_tensor = tc_abstract_tensor_new(tv);
  // (GM, GN, cta_m(2), cta_n(1), m(64), n(256))

  // Split by TMA shared memory box
  AT(tc_abstract_split(abstract_tensor, -1, 64, 1));
  reorder(abstract_tensor, 2, (const int[][2]){{-2, -3}, {-3, -2}});
  // (GM, GN, cta_m(2), cta_n(1), no(4), m(64), ni(64))

  // Split by (16, 16) matrix for LdStMatrix.x4
  AT(tc_abstract_split(abstract_tensor, -2, 16, 1));
  AT(tc_abstract_split(abstract_tensor, -1, 16, 1));
  reorder(abstract_tensor, 2, (const int[][2]){{-2, -3}, {-3, -2}});
  // (GM, GN, cta_m(2), cta_n(1), no(4), mo(4), nio(4), mi(16), nii(16))

  // Split (16, 16) matrix into four (8, 8) sub-matrices
  AT(tc_abstract_split(abstract_tensor, -2, 8, 1));
  AT(tc_abstract_split(abstract_tensor, -1, 8, 1));

  // Each register handles two adjacent elements.
  AT(tc_abstract_split(abstract_tensor, -1, 2, 1));

  // The four (8, 8) sub-matrices are traversed in this order to follow the
  // register layout for wgmma accumulator matrix: 0 top-left, 1 bottom-left,
  // 2 top-right, 3 bottom-right.
  reorder(abstract_tensor, 3, (const int[][2]){{-5, -2}, {-4, -5}, {-2, -4}});
  // (GM, GN, cta_m(2), cta_n(1), no(4), mo(4), nio(4), mii(8), niiio(4),
  // niio(2), mio(2), niiii(2))

  // The last three merged become one Vectorize axis of 8 values.
  AT(tc_abstract_merge(abstract_tensor, -2, -1));
  AT(tc_abstract_merge(abstract_tensor, -2, -1));
  // (GM, GN, cta_m(2), cta_n(1), no(4), mo(4), nio(4), mii(8), niiio(4), (niio
  // * mio * niiii)(8))

  // Reorder so the serial axes for (CTA_N / TMA_N) and (TMA_N / LDST_N) are
  // adjacent.
  reorder(abstract_tensor, 2, (const int[][2]){{-5, -4}, {-4, -5}});

  // Four LdStMatrix.x4 instructions are issued simultaneously to process a
  // (64, 16) tile: merge mo, mii and niiio.
  AT(tc_abstract_merge(abstract_tensor, -4, -3));
  AT(tc_abstract_merge(abstract_tensor, -3, -2));
  // (GM, GN, cta_m(2), cta_n(1), no(4), nio(4), (mo * mii * niiio)(128), (niio
  // * mio * niiii)(8))

  // A single serial axis
  AT(tc_abstract_merge(abstract_tensor, -4, -3));
  return abstract_tensor;
}

/* The address side of the same instructions: lane t = mo*32 + niio*16 + mi
 * gives the row address of row mi of the 16x16 tile's column half niio:
 * (no*nio)(16), (mo*niio*mi)(128), niii(8).  wrong_order swaps niio and mi
 * in the lane number (t = mo*32 + mi*2 + niio). */
static tc_abstract_tensor *schedule_ldst_matrix_address(tc_tensor *tv, int wrong_order) {
  tc_abstract_tensor *at = tc_abstract_tensor_new(tv);
  // (GM, GN, cta_m(2), cta_n(1), m(64), n(256))
  AT(tc_abstract_split(at, -1, 64, 1));
  reorder(at, 2, (const int[][2]){{-2, -3}, {-3, -2}});
  AT(tc_abstract_split(at, -2, 16, 1));
  AT(tc_abstract_split(at, -1, 16, 1));
  reorder(at, 2, (const int[][2]){{-2, -3}, {-3, -2}});
  // (GM, GN, cta_m(2), cta_n(1), no(4), mo(4), nio(4), mi(16), nii(16))
  AT(tc_abstract_split(at, -1, 8, 1));
  // (.., no(4), mo(4), nio(4), mi(16), niio(2), niii(8))
  if (!wrong_order)
    reorder(at, 4, (const int[][2]){{-4, -5}, {-5, -4}, {-2, -3}, {-3, -2}});
  else
    reorder(at, 2, (const int[][2]){{-4, -5}, {-5, -4}});
  // (.., no(4), nio(4), mo(4), niio(2), mi(16), niii(8))   [mi, niio when wrong]
  AT(tc_abstract_merge(at, -4, -3));
  AT(tc_abstract_merge(at, -3, -2));
  // (.., no(4), nio(4), (mo * niio * mi)(128), niii(8))
  AT(tc_abstract_merge(at, -4, -3));
  // (GM, GN, cta_m(2), cta_n(1), (no * nio)(16), (mo * niio * mi)(128), niii(8))
  return at;
}

/* LdStMatrixSet as the tutorial builds and schedules it. */
static ldst_set_fusion build_ldst_set_fusion(int64_t M, int64_t N) {
  ldst_set_fusion s = {0};
  s.M = M, s.N = N;
  tc_fusion *f = s.f = tc_fusion_new();
  int64_t shape[2] = {M, N};
  s.tv0 = tc_input(f, TC_BF16, 2, shape); // M, K
  s.tv1 = tc_set(f, s.tv0);
  OK(f, tc_add_output(f, s.tv1));

  // tv0_smem: bulk tensor load into shared memory
  s.tv0_smem = tc_cache_after(s.tv0);
  OK(f, tc_set_ldst_type(s.tv0_smem, TC_LDST_BULK_TENSOR));
  OK(f, tc_set_memory_type(s.tv0_smem, TC_MEM_SHARED));
  // tv0_reg: ldmatrix from shared memory into registers
  s.tv0_reg = tc_cache_after(s.tv0_smem);
  OK(f, tc_set_ldst_type(s.tv0_reg, TC_LDST_LDMATRIX));
  // tv1_smem: stmatrix from registers into shared memory
  s.tv1_smem = tc_cache_before(s.tv1);
  OK(f, tc_set_ldst_type(s.tv1_smem, TC_LDST_STMATRIX));
  OK(f, tc_set_memory_type(s.tv1_smem, TC_MEM_SHARED));
  // tv1: bulk tensor store to global memory
  OK(f, tc_set_ldst_type(s.tv1, TC_LDST_BULK_TENSOR));

  // Create 2D block tile: (GM, GN, cta_m(128), cta_n(256))
  OK(f, tc_split(s.tv1, 0, CTA_M, 1));
  OK(f, tc_split(s.tv1, -1, CTA_N, 1));
  OK(f, tc_reorder(s.tv1, 2, (int[]){-2, -3}, (int[]){-3, -2}));
  // (GM, GN, cta_m(2), cta_n(1), warp_m(64), warp_n(256))
  OK(f, tc_split(s.tv1, -2, WARP_M, 1));
  OK(f, tc_split(s.tv1, -1, WARP_N, 1));
  OK(f, tc_reorder(s.tv1, 2, (int[]){-2, -3}, (int[]){-3, -2}));

  OK(f, tc_propagate_transforms(s.tv1));
  OK(f, tc_parallelize(s.tv1, 0, TC_BIDX));
  OK(f, tc_parallelize(s.tv1, 1, TC_BIDY));
  OK(f, tc_parallelize(s.tv1, 2, TC_TIDY));
  OK(f, tc_parallelize_all_like(s.tv1));

  // Schedule output from TMA Load
  tc_tma_swizzle input_swizzle = tc_tma_swizzle_for(s.tv0_smem);
  TC_CHECK_EQ_INT(input_swizzle, TC_TMA_SWIZZLE_128B);
  OK(f, tc_schedule_tma_swizzle(s.tv0_smem, input_swizzle));
  // Schedule global memory output from TMA Store
  tc_tma_swizzle output_swizzle = tc_tma_swizzle_for(s.tv1_smem);
  TC_CHECK_EQ_INT(output_swizzle, TC_TMA_SWIZZLE_128B);
  OK(f, tc_schedule_tma_swizzle(s.tv1, output_swizzle));

  // Move data from tv0_reg to tv1_smem using StMatrix
  tc_abstract_tensor *tv1_smem_abstract_tensor = schedule_ldst_matrix(s.tv1_smem);
  s.st_addr = schedule_ldst_matrix_address(s.tv1_smem, 0);
  s.st_addr_bad = schedule_ldst_matrix_address(s.tv1_smem, 1);
  // Create tma store allocation domain with swizzle
  OK(f, tc_schedule_tma_swizzle(s.tv1_smem, output_swizzle));
  OK(f, tc_set_loop_domain(s.tv1_smem, tc_abstract_tensor_rank(tv1_smem_abstract_tensor),
                           tc_abstract_tensor_axes(tv1_smem_abstract_tensor)));
  // (GM(BDX), GN(BDY), cta_m(2), cta_n(1), (no * nio)(16), (mo * mii *
  // niiio)(128), (niio * mio * niiii)(8))
  OK(f, tc_parallelize(s.tv1_smem, -2, TC_TIDX));
  OK(f, tc_parallelize(s.tv1_smem, -1, TC_VECTORIZE));
  tc_abstract_tensor_free(tv1_smem_abstract_tensor);

  // Move data from tv0_smem to tv0_reg using LdMatrix
  tc_abstract_tensor *tv0_reg_abstract_tensor = schedule_ldst_matrix(s.tv0_reg);
  s.ld_addr = schedule_ldst_matrix_address(s.tv0_reg, 0);
  s.ld_addr_bad = schedule_ldst_matrix_address(s.tv0_reg, 1);
  OK(f, tc_set_loop_domain(s.tv0_reg, tc_abstract_tensor_rank(tv0_reg_abstract_tensor),
                           tc_abstract_tensor_axes(tv0_reg_abstract_tensor)));
  // Set allocation domain according to loop domain
  OK(f, tc_set_alloc_to_loop(s.tv0_reg));
  OK(f, tc_parallelize(s.tv0_reg, -2, TC_TIDX));
  OK(f, tc_parallelize(s.tv0_reg, -1, TC_VECTORIZE));
  tc_abstract_tensor_free(tv0_reg_abstract_tensor);

  OK(f, tc_inline_most(f));
  s.ok = tc_test_failed_checks == 0;
  return s;
}

static void free_ldst_set_fusion(ldst_set_fusion *s) {
  tc_abstract_tensor_free(s->ld_addr);
  tc_abstract_tensor_free(s->st_addr);
  tc_abstract_tensor_free(s->ld_addr_bad);
  tc_abstract_tensor_free(s->st_addr_bad);
  tc_fusion_free(s->f);
}

/* ---- indices, the way src/lower/lower.c derives them ---------------------- */

/* The allocation rule as lower.c applies it: block-parallel axes are
 * never allocated, thread-parallel ones always in shared memory and never
 * in registers, and otherwise axes left of the inline position are not.
 * (check_register_side_matches_lowering ties this to tc_lower.) */
static int allocated(const tc_dgraph *g, const tc_tensor *x, int axis) {
  tc_ptype pt = g->axes[axis].ptype;
  int thread = pt >= TC_TIDX && pt <= TC_TIDZ, block = pt >= TC_BIDX && pt <= TC_BIDZ;
  if (block) return 0;
  if (thread) return x->mem == TC_MEM_SHARED;
  for (int i = 0; i < x->ca_pos; i++)
    if (x->loop[i] == axis) return 0;
  return 1;
}

/* The element offset into x's allocation of the element that the domain
 * `dom` of tensor t (t's own axes) addresses at the values dv, where x is
 * t or the producer t's set op reads: walk dom -> t's logical axes, map
 * them through the op, walk x's logical axes -> its allocation domain.
 * When lv is not NULL it receives t's logical values. */
static const tc_expr *domain_index(tc_epool *p, const tc_tensor *t, const int *dom, int ndom,
                                   const tc_expr *const *dv, const tc_tensor *x, const tc_expr **lv) {
  const tc_dgraph *g = &t->f->g;
  const tc_expr **vals = tc_xcalloc((size_t)g->naxes, sizeof *vals);
  for (int i = 0; i < ndom; i++) vals[dom[i]] = dv[i];
  tc_dg_walk(p, g, vals, NULL);
  const tc_expr *xl[16];
  for (int j = 0; j < t->nlogical; j++) {
    if (lv) lv[j] = vals[t->logical[j]];
    xl[x == t ? j : tc_op_in_axis(t->def, j)] = vals[t->logical[j]];
  }
  memset(vals, 0, (size_t)g->naxes * sizeof *vals);
  for (int j = 0; j < x->nlogical; j++) vals[x->logical[j]] = xl[j];
  tc_dg_walk(p, g, vals, NULL);
  const int *ax = x->alloc_set ? x->alloc : x->loop;
  int na = x->alloc_set ? x->nalloc : x->nloop;
  const tc_expr *idx = tc_e_const(p, 0);
  for (int j = 0; j < na && idx; j++) {
    if (!allocated(g, x, ax[j])) continue;
    idx = vals[ax[j]] ? tc_e_add(p, tc_e_mulc(p, idx, g->axes[ax[j]].extent), vals[ax[j]]) : NULL;
  }
  free(vals);
  return idx ? tc_simplify(p, idx) : NULL;
}

/* Variables, in this order (tc_e_eval's ids). */
enum { V_BIDX, V_BIDY, V_TIDY, V_TIDX, V_I, V_V, NVARS };

typedef struct indices {
  tc_epool *p;
  const tc_expr *var[NVARS];
  /* element offsets: into tv0_smem for the ldmatrix, into tv1_smem for the
   * stmatrix; *_addr at vector lane v are row address + v */
  const tc_expr *ld_addr, *st_addr, *ld_reg, *st_reg, *ld_addr_bad, *st_addr_bad;
  const tc_expr *reg_lv[2], *addr_lv[2]; /* tv0_reg's logical (m, n): register and address side */
  const tc_expr *alloc0, *alloc1;        /* tv0_smem / tv1_smem offset of logical (m, n) (variables 6, 7) */
} indices;

static const tc_expr *side(indices *ix, const tc_tensor *t, const int *dom, int ndom, const tc_tensor *x,
                           const tc_expr **lv) {
  const tc_expr *dv[7] = {ix->var[V_BIDX], ix->var[V_BIDY], ix->var[V_TIDY], tc_e_const(ix->p, 0),
                          ix->var[V_I],    ix->var[V_TIDX], ix->var[V_V]};
  TC_CHECK(ndom == 7, "%s's domain has %d axes, expected 7", t->name, ndom);
  if (ndom != 7) return NULL;
  const tc_expr *e = domain_index(ix->p, t, dom, ndom, dv, x, lv);
  TC_CHECK(e != NULL, "%s's allocation was not reached", x->name);
  return e;
}

static int derive(indices *ix, const ldst_set_fusion *s) {
  memset(ix, 0, sizeof *ix);
  tc_epool *p = ix->p = tc_epool_new();
  ix->var[V_BIDX] = tc_e_var(p, "bidx", 0, s->M / CTA_M - 1);
  ix->var[V_BIDY] = tc_e_var(p, "bidy", 0, s->N / CTA_N - 1);
  ix->var[V_TIDY] = tc_e_var(p, "tidy", 0, CTA_M / WARP_M - 1);
  ix->var[V_TIDX] = tc_e_var(p, "t", 0, 127);
  ix->var[V_I] = tc_e_var(p, "i", 0, 15);
  ix->var[V_V] = tc_e_var(p, "v", 0, 7);
  ix->ld_addr = side(ix, s->tv0_reg, tc_abstract_tensor_axes(s->ld_addr), tc_abstract_tensor_rank(s->ld_addr),
                     s->tv0_smem, ix->addr_lv);
  ix->ld_addr_bad = side(ix, s->tv0_reg, tc_abstract_tensor_axes(s->ld_addr_bad),
                         tc_abstract_tensor_rank(s->ld_addr_bad), s->tv0_smem, NULL);
  ix->st_addr = side(ix, s->tv1_smem, tc_abstract_tensor_axes(s->st_addr), tc_abstract_tensor_rank(s->st_addr),
                     s->tv1_smem, NULL);
  ix->st_addr_bad = side(ix, s->tv1_smem, tc_abstract_tensor_axes(s->st_addr_bad),
                         tc_abstract_tensor_rank(s->st_addr_bad), s->tv1_smem, NULL);
  ix->ld_reg = side(ix, s->tv0_reg, s->tv0_reg->loop, s->tv0_reg->nloop, s->tv0_smem, ix->reg_lv);
  ix->st_reg = side(ix, s->tv1_smem, s->tv1_smem->loop, s->tv1_smem->nloop, s->tv1_smem, NULL);
  /* the bulk copies' view: logical (m, n) -> allocation offset */
  const tc_expr *m = tc_e_var(p, "m", 0, s->M - 1), *n = tc_e_var(p, "n", 0, s->N - 1);
  for (int k = 0; k < 2; k++) {
    const tc_tensor *x = k ? s->tv1_smem : s->tv0_smem;
    const tc_dgraph *g = &x->f->g;
    const tc_expr **vals = tc_xcalloc((size_t)g->naxes, sizeof *vals);
    vals[x->logical[0]] = m;
    vals[x->logical[1]] = n;
    tc_dg_walk(p, g, vals, NULL);
    const tc_expr *idx = tc_e_const(p, 0);
    for (int j = 0; j < x->nalloc; j++)
      if (allocated(g, x, x->alloc[j])) idx = tc_e_add(p, tc_e_mulc(p, idx, g->axes[x->alloc[j]].extent), vals[x->alloc[j]]);
    *(k ? &ix->alloc1 : &ix->alloc0) = tc_simplify(p, idx);
    free(vals);
  }
  return ix->ld_addr && ix->st_addr && ix->ld_reg && ix->st_reg && ix->ld_addr_bad && ix->st_addr_bad &&
         ix->reg_lv[0] && ix->reg_lv[1] && ix->addr_lv[0] && ix->addr_lv[1];
}

static int64_t ev(const tc_expr *e, int64_t bidx, int64_t bidy, int64_t tidy, int64_t t, int64_t i, int64_t v) {
  int64_t vars[NVARS + 2] = {bidx, bidy, tidy, t, i, v, 0, 0};
  return tc_e_eval(e, vars);
}

/* The bulk copies' offset of logical (m, n): variables 6 and 7. */
static int64_t ev_mn(const tc_expr *e, int64_t m, int64_t n) {
  int64_t vars[NVARS + 2] = {0, 0, 0, 0, 0, 0, m, n};
  return tc_e_eval(e, vars);
}

/* ---- 1. the address side against the tutorial's closed form -------------- */

static void test_address_closed_form(void) {
  ldst_set_fusion s = build_ldst_set_fusion(8192, 8192);
  TC_REQUIRE(s.ok, "building the fusion failed");
  indices ix;
  TC_REQUIRE(derive(&ix, &s), "deriving the indices failed");
  if (getenv("TILEC_TEST_VERBOSE")) {
    tc_str o;
    tc_str_init(&o);
    tc_e_print_c(&o, ix.p, ix.ld_addr);
    printf("  ldmatrix row address (elements of tv0_smem): %s\n", tc_str_cstr(&o));
    tc_str_free(&o);
  }
  TC_CHECK(tc_e_count_op(ix.ld_addr, TC_E_XOR) >= 1, "the address has no XOR: it bypassed the swizzle");
  int bad = 0;
  const int64_t blocks[2][2] = {{0, 0}, {8192 / CTA_M - 1, 8192 / CTA_N - 1}};
  for (int b = 0; b < 2; b++)
    for (int64_t tidy = 0; tidy < 2; tidy++)
      for (int64_t t = 0; t < 128; t++)
        for (int64_t i = 0; i < 16 && bad < 8; i++) {
          int64_t m = 16 * (t / 32) + t % 16, c = 2 * (i % 4) + (t / 16) % 2;
          int64_t want = tidy * (WARP_M * WARP_N * 2) + (i / 4) * 8192 + m * 128 + ((c ^ (m % 8)) * 16);
          const tc_expr *sides[2] = {ix.ld_addr, ix.st_addr};
          for (int k = 0; k < 2; k++) {
            int64_t byte = 2 * ev(sides[k], blocks[b][0], blocks[b][1], tidy, t, i, 0);
            if (byte != want) bad++;
            TC_CHECK(byte == want, "%s tidy %lld t %lld i %lld: byte %lld, the closed form gives %lld",
                     k ? "stmatrix" : "ldmatrix", (long long)tidy, (long long)t, (long long)i,
                     (long long)byte, (long long)want);
            TC_CHECK(byte % 16 == 0, "row address %lld is not 16-byte aligned", (long long)byte);
            for (int64_t v = 1; v < 8; v++) /* a row is 16 contiguous bytes */
              TC_CHECK(2 * ev(sides[k], blocks[b][0], blocks[b][1], tidy, t, i, v) == byte + 2 * v,
                       "t %lld i %lld: element %lld of the row is not at +%lld bytes", (long long)t,
                       (long long)i, (long long)v, (long long)(2 * v));
          }
          /* lane l gives row l%8 of matrix l/8: 0 top-left, 1 bottom-left,
           * 2 top-right, 3 bottom-right of the 16x16 tile at (16*w, 16*(i%4)) of box i/4 */
          int64_t l = t % 32, j = l / 8, w = t / 32;
          int64_t gm = blocks[b][0] * CTA_M + tidy * WARP_M, gn = blocks[b][1] * CTA_N;
          int64_t lm = ev(ix.addr_lv[0], blocks[b][0], blocks[b][1], tidy, t, i, 0) - gm;
          int64_t ln = ev(ix.addr_lv[1], blocks[b][0], blocks[b][1], tidy, t, i, 0) - gn;
          int64_t want_m = 16 * w + 8 * (j % 2) + l % 8, want_n = 64 * (i / 4) + 16 * (i % 4) + 8 * (j / 2);
          if (lm != want_m || ln != want_n) bad++;
          TC_CHECK(lm == want_m && ln == want_n, "lane %lld of warp %lld at i %lld: row (%lld, %lld), want (%lld, %lld)",
                   (long long)l, (long long)w, (long long)i, (long long)lm, (long long)ln, (long long)want_m,
                   (long long)want_n);
        }
  tc_epool_free(ix.p);
  free_ldst_set_fusion(&s);
}

/* ---- 2. the register side against tc_lower -------------------------------- */

static const tc_knode *find_stmt(const tc_knode *n, const tc_tensor *out) {
  if (n->kind == TC_K_STMT) return n->stmt.op->out == out ? n : NULL;
  for (int i = 0; i < n->nbody; i++) {
    const tc_knode *r = find_stmt(n->body[i], out);
    if (r) return r;
  }
  return NULL;
}

/* Evaluates a statement's expression at (bidx, bidy, tidy, t, i, v): the
 * statement's loops are its own Vectorize(8), the shared serial (16) and
 * cta_n (1). */
static int64_t ev_stmt(const tc_kir *k, const tc_knode *st, const tc_expr *e, int64_t bidx, int64_t bidy,
                       int64_t tidy, int64_t t, int64_t i, int64_t v) {
  int n = tc_e_num_vars(k->pool);
  int64_t *vars = tc_xcalloc((size_t)n + 1, sizeof *vars);
  vars[k->pvar[0]->val] = bidx, vars[k->pvar[1]->val] = bidy;
  vars[k->pvar[3]->val] = t, vars[k->pvar[4]->val] = tidy;
  for (const tc_knode *l = st->parent; l && l->kind == TC_K_LOOP; l = l->parent)
    vars[l->loop.var->val] = l->loop.ptype == TC_VECTORIZE ? v : l->loop.extent == 16 ? i : 0;
  int64_t r = tc_e_eval(e, vars);
  free(vars);
  return r;
}

static void test_register_side_matches_lowering(void) {
  ldst_set_fusion s = build_ldst_set_fusion(8192, 8192);
  TC_REQUIRE(s.ok, "building the fusion failed");
  /* inlining as nvFuser's inlineMost: the TMA load at the block tile, the
   * ldmatrix inside the stmatrix's serial loop and threads, stmatrix at
   * the block tile of the TMA store */
  TC_CHECK_EQ_INT(s.tv0_smem->ca_pos, 4);
  TC_CHECK_EQ_INT(s.tv0_reg->ca_pos, 6);
  TC_CHECK_EQ_INT(s.tv1_smem->ca_pos, 4);
  indices ix;
  TC_REQUIRE(derive(&ix, &s), "deriving the indices failed");
  tc_kir *k = NULL;
  tc_status st = tc_lower(s.f, TC_TARGET_CUDA, "sm_90a", &k);
  TC_REQUIRE(st == TC_OK, "tc_lower: %s", tc_fusion_error(s.f));
  TC_CHECK(k->block[0] == 128 && k->block[1] == 2 && k->block[2] == 1, "block %lld x %lld x %lld",
           (long long)k->block[0], (long long)k->block[1], (long long)k->block[2]);
  TC_CHECK(k->grid[0] == 64 && k->grid[1] == 32, "grid %lld x %lld", (long long)k->grid[0], (long long)k->grid[1]);
  TC_CHECK_EQ_INT(k->smem_bytes, 2 * (CTA_M * CTA_N * 2)); /* tv0_smem and tv1_smem: 64 KiB each */
  const tc_kalloc *a0 = tc_kir_alloc_of(k, s.tv0_smem), *a1 = tc_kir_alloc_of(k, s.tv1_smem),
                  *ar = tc_kir_alloc_of(k, s.tv0_reg);
  TC_REQUIRE(a0 && a1 && ar, "allocations missing");
  TC_CHECK_EQ_INT(a0->elems, CTA_M * CTA_N);
  TC_CHECK_EQ_INT(a1->elems, CTA_M * CTA_N);
  TC_CHECK_EQ_INT(ar->elems, 8); /* one ldmatrix.x4 fragment per thread */
  const tc_knode *ld = find_stmt(k->root, s.tv0_reg), *sm = find_stmt(k->root, s.tv1_smem);
  TC_REQUIRE(ld && sm, "statements missing");
  TC_CHECK(tc_e_is_const(ld->stmt.pred, 1) && tc_e_is_const(sm->stmt.pred, 1), "the divisible schedule has predicates");
  int bad = 0;
  for (int64_t tidy = 0; tidy < 2; tidy++)
    for (int64_t t = 0; t < 128 && bad < 8; t++)
      for (int64_t i = 0; i < 16; i++)
        for (int64_t v = 0; v < 8; v++) {
          int64_t b = 3, c = 5;
          int64_t lo = ev_stmt(k, ld, ld->stmt.in_index[0], b, c, tidy, t, i, v), mine = ev(ix.ld_reg, b, c, tidy, t, i, v);
          int64_t so = ev_stmt(k, sm, sm->stmt.out_index, b, c, tidy, t, i, v), mine1 = ev(ix.st_reg, b, c, tidy, t, i, v);
          if (lo != mine || so != mine1) bad++;
          TC_CHECK(lo == mine, "ldmatrix (t %lld, i %lld, v %lld): lowering reads %lld, the walk gives %lld",
                   (long long)t, (long long)i, (long long)v, (long long)lo, (long long)mine);
          TC_CHECK(so == mine1, "stmatrix (t %lld, i %lld, v %lld): lowering writes %lld, the walk gives %lld",
                   (long long)t, (long long)i, (long long)v, (long long)so, (long long)mine1);
          /* tv0_reg's register is the vector lane: register (t, i, v) is v */
          TC_CHECK(ev_stmt(k, ld, ld->stmt.out_index, b, c, tidy, t, i, v) == v, "register index");
        }
  tc_kir_free(k);
  tc_epool_free(ix.p);
  free_ldst_set_fusion(&s);
}

/* ---- 3. what the instructions deliver = what the registers should hold -- */

/* The byte address ldmatrix.x4 / stmatrix.x4 use for register (t, i, v):
 * matrix j = v / 2 has its row r = (t%32) / 4 at the address lane 8j + r
 * of the same warp supplies, and the lane's two elements of that row are
 * at 4*(t%32 % 4) and +2 bytes (PTX ISA, "Matrix fragments for ldmatrix"). */
static int64_t fragment_byte(const tc_expr *addr, int64_t tidy, int64_t t, int64_t i, int64_t v) {
  int64_t w = t / 32, l = t % 32, j = v / 2;
  int64_t row_lane = w * 32 + 8 * j + l / 4;
  return 2 * ev(addr, 0, 0, tidy, row_lane, i, 0) + 4 * (l % 4) + 2 * (v % 2);
}

/* Returns the number of (t, i, v) where the instruction's element differs
 * from the register side's. */
static int count_fragment_mismatches(const tc_expr *addr, const tc_expr *reg) {
  int nbad = 0;
  for (int64_t tidy = 0; tidy < 2; tidy++)
    for (int64_t t = 0; t < 128; t++)
      for (int64_t i = 0; i < 16; i++)
        for (int64_t v = 0; v < 8; v++)
          nbad += fragment_byte(addr, tidy, t, i, v) != 2 * ev(reg, 0, 0, tidy, t, i, v);
  return nbad;
}

static void test_fragments_match_register_side(void) {
  ldst_set_fusion s = build_ldst_set_fusion(8192, 8192);
  TC_REQUIRE(s.ok, "building the fusion failed");
  indices ix;
  TC_REQUIRE(derive(&ix, &s), "deriving the indices failed");
  TC_CHECK_EQ_INT(count_fragment_mismatches(ix.ld_addr, ix.ld_reg), 0);
  TC_CHECK_EQ_INT(count_fragment_mismatches(ix.st_addr, ix.st_reg), 0);
  /* negative control: matrices addressed in the wrong order */
  int wrong = count_fragment_mismatches(ix.ld_addr_bad, ix.ld_reg);
  TC_CHECK(wrong > 0, "the wrong lane order went unnoticed");
  /* the register side holds each element of the warp-group tile once */
  char *seen = tc_xcalloc(CTA_M * CTA_N, 1);
  int dup = 0;
  for (int64_t tidy = 0; tidy < 2; tidy++)
    for (int64_t t = 0; t < 128; t++)
      for (int64_t i = 0; i < 16; i++)
        for (int64_t v = 0; v < 8; v++) {
          int64_t m = ev(ix.reg_lv[0], 0, 0, tidy, t, i, v), n = ev(ix.reg_lv[1], 0, 0, tidy, t, i, v);
          if (m < 0 || m >= CTA_M || n < 0 || n >= CTA_N || (m >= WARP_M) != (tidy == 1) || seen[m * CTA_N + n]) {
            dup++;
            continue;
          }
          seen[m * CTA_N + n] = 1;
          /* the wgmma accumulator fragment: lane l holds row l/4 and
           * columns 2*(l%4) + {0, 1} of matrix v/2 */
          int64_t l = t % 32, j = v / 2;
          int64_t want_m = tidy * 64 + 16 * (t / 32) + 8 * (j % 2) + l / 4;
          int64_t want_n = 64 * (i / 4) + 16 * (i % 4) + 8 * (j / 2) + 2 * (l % 4) + v % 2;
          TC_CHECK(m == want_m && n == want_n, "register (t %lld, i %lld, v %lld) holds (%lld, %lld), want (%lld, %lld)",
                   (long long)t, (long long)i, (long long)v, (long long)m, (long long)n, (long long)want_m,
                   (long long)want_n);
        }
  TC_CHECK_EQ_INT(dup, 0);
  free(seen);
  tc_epool_free(ix.p);
  free_ldst_set_fusion(&s);
}

/* ---- 4. the round trip, simulated ------------------------------------------ */

/* Fills tv0_smem as the bulk load does, runs ldmatrix.x4 and stmatrix.x4
 * lane by lane from the address sides, and reads tv1_smem as the bulk
 * store does.  Returns the number of elements that did not come back to
 * their place (or were written twice). */
static int round_trip(const indices *ix, const tc_expr *ld_addr, const tc_expr *st_addr) {
  enum { E = CTA_M * CTA_N };
  uint32_t *smem0 = tc_xmalloc(E * sizeof *smem0), *smem1 = tc_xmalloc(E * sizeof *smem1);
  uint32_t *reg = tc_xmalloc(2 * 128 * 16 * 8 * sizeof *reg);
  char *written = tc_xcalloc(E, 1);
  for (int64_t m = 0; m < CTA_M; m++)
    for (int64_t n = 0; n < CTA_N; n++) smem0[ev_mn(ix->alloc0, m, n)] = (uint32_t)(m * CTA_N + n);
  for (int64_t e = 0; e < E; e++) smem1[e] = 0xffffffffu;
  int nbad = 0;
  for (int64_t tidy = 0; tidy < 2; tidy++)
    for (int64_t i = 0; i < 16; i++)
      for (int64_t t = 0; t < 128; t++) /* ldmatrix.x4 */
        for (int64_t v = 0; v < 8; v++)
          reg[((tidy * 128 + t) * 16 + i) * 8 + v] = smem0[fragment_byte(ld_addr, tidy, t, i, v) / 2];
  for (int64_t tidy = 0; tidy < 2; tidy++)
    for (int64_t i = 0; i < 16; i++)
      for (int64_t t = 0; t < 128; t++) /* stmatrix.x4 */
        for (int64_t v = 0; v < 8; v++) {
          int64_t e = fragment_byte(st_addr, tidy, t, i, v) / 2;
          nbad += written[e]++ != 0;
          smem1[e] = reg[((tidy * 128 + t) * 16 + i) * 8 + v];
        }
  for (int64_t m = 0; m < CTA_M; m++)
    for (int64_t n = 0; n < CTA_N; n++) nbad += smem1[ev_mn(ix->alloc1, m, n)] != (uint32_t)(m * CTA_N + n);
  free(smem0), free(smem1), free(reg), free(written);
  return nbad;
}

static void test_round_trip(void) {
  ldst_set_fusion s = build_ldst_set_fusion(8192, 8192);
  TC_REQUIRE(s.ok, "building the fusion failed");
  indices ix;
  TC_REQUIRE(derive(&ix, &s), "deriving the indices failed");
  TC_CHECK_EQ_INT(round_trip(&ix, ix.ld_addr, ix.st_addr), 0);
  /* the wrong order on both sides also round-trips: property 3 is needed */
  TC_CHECK_EQ_INT(round_trip(&ix, ix.ld_addr_bad, ix.st_addr_bad), 0);
  TC_CHECK(round_trip(&ix, ix.ld_addr_bad, ix.st_addr) > 0, "a wrong ldmatrix order round-trips");
  tc_epool_free(ix.p);
  free_ldst_set_fusion(&s);
}

/* ---- 5. element-copy lowering run on PoCL --------------------------------- */

static void test_run_pocl(void) {
  const int64_t M = 256, N = 512;
  ldst_set_fusion s = build_ldst_set_fusion(M, N);
  TC_REQUIRE(s.ok, "building the fusion failed");
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "ldst_matrix_set"};
  tc_status st = TC_OK;
  tc_kernel *k = tc_compile(s.f, &o, &st);
  if (!k) {
    TC_CHECK(k != NULL, "compile: %s: %s", tc_status_name(st), tc_fusion_error(s.f));
    free_ldst_set_fusion(&s);
    return;
  }
  int64_t grid[3], block[3];
  tc_kernel_launch_dims(k, grid, block);
  TC_CHECK(grid[0] == 2 && grid[1] == 2 && block[0] == 128 && block[1] == 2, "launch %lldx%lld / %lldx%lld",
           (long long)grid[0], (long long)grid[1], (long long)block[0], (long long)block[1]);
  TC_CHECK_EQ_INT(tc_kernel_smem_bytes(k), 2 * CTA_M * CTA_N * 2);
  uint16_t *in = malloc((size_t)(M * N) * 2), *out = malloc((size_t)(M * N) * 2);
  uint32_t x = 12345u;
  for (int64_t e = 0; e < M * N; e++) {
    x = x * 1664525u + 1013904223u;
    in[e] = (uint16_t)((x >> 16) & 0x7f7f); /* finite bf16 patterns */
    out[e] = 0xffff;
  }
  void *args[2] = {in, out};
  st = tc_kernel_run(k, args, NULL, NULL);
  if (st == TC_ERR_NO_DEVICE) {
    free(in), free(out), tc_kernel_free(k), free_ldst_set_fusion(&s);
    TC_SKIP("no OpenCL device");
  }
  TC_CHECK(st == TC_OK, "run: %s", tc_kernel_error(k));
  int64_t nbad = 0, first = -1;
  for (int64_t e = 0; e < M * N; e++)
    if (in[e] != out[e] && nbad++ == 0) first = e;
  TC_CHECK(nbad == 0, "%lld of %lld elements differ, the first at (%lld, %lld)", (long long)nbad,
           (long long)(M * N), (long long)(first / N), (long long)(first % N));
  free(in), free(out);
  tc_kernel_free(k);
  free_ldst_set_fusion(&s);
}

int main(void) {
  TC_RUN(test_address_closed_form);
  TC_RUN(test_register_side_matches_lowering);
  TC_RUN(test_fragments_match_register_side);
  TC_RUN(test_round_trip);
  TC_RUN(test_run_pocl);
  TC_MAIN_END();
}
