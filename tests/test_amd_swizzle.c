/* test_amd_swizzle.c - AMD's shared-memory swizzles as transforms
 * (src/layout/amd_swizzle.c) and the split of a layout into a reshape and a
 * per-row column permutation (src/layout/reshape_swizzle.c).
 *
 *  - Triton's swizzle with vec = 8, perPhase = 1, maxPhase = 8 on 64
 *    columns is CuTe's Swizzle<3,3,3> on the row-major offset, checked by
 *    enumerating every offset (against CuTe's definition and tc_dg_cute);
 *  - every other parameterization (the matrix-core parameters for 8-, 16-
 *    and 32-bit elements over many widths, and a sweep of Triton's vec /
 *    perPhase / maxPhase) against the plain C formula written here, forward
 *    and backward, with a bijection check per row;
 *  - the matrix-core parameters against TileLang's formula
 *    (makeMatrixCoreSwizzleLayout);
 *  - TileLang's layout [256, 64] -> [row / 8, (row % 8) * 64 + S(row, col)]
 *    through tc_layout_split / tc_layout_eval (reshape part, swizzled
 *    column), with a stage prefix and a replication prefix;
 *  - the refusals: swizzles that mix rows (an XOR into the row, a CuTe
 *    swizzle whose bits cross the row), crops, redundant and incomplete
 *    allocations, view transforms;
 *  - a randomized soundness test of the row analysis: whenever
 *    tc_rs_split_layout accepts a random chain of splits, merges and
 *    swizzles, enumerating R^-1 o F over the whole domain shows it keeps
 *    every row and permutes its columns. */
#include "test.h"

#include <stdbool.h>
#include <stdint.h>

#include "ir/fusion.h"
#include "layout/amd_swizzle.h"
#include "layout/reshape_swizzle.h"
#include "tilec/tilec.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

/* ---- plain references --------------------------------------------------- */

static int64_t cute_ref(int b, int m, int s, int64_t x) {
  int64_t yyy = (((int64_t)1 << b) - 1) << (m + s);
  return x ^ ((x & yyy) >> s);
}

/* Triton: ((col / vec) ^ ((row / perPhase) % maxPhase)) * vec + col % vec */
static int64_t triton_ref(int64_t vec, int64_t pp, int64_t mp, int64_t row, int64_t col) {
  int64_t phase = (row / pp) % mp;
  return ((col / vec) ^ phase) * vec + col % vec;
}

/* The matrix-core parameters as TileLang's makeMatrixCoreSwizzleLayout
 * derives them. */
static void mc_ref(int bits, int64_t cont, int64_t vec, int64_t *pp, int64_t *mp) {
  int64_t per_bank_row = 32 * 32 / bits;
  *pp = per_bank_row / cont > 1 ? per_bank_row / cont : 1;
  int64_t a = 16 / *pp, b = cont / vec;
  *mp = a < b ? a : b;
  if (*mp < 1) *mp = 1;
}

static bool pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/* Forward expressions of every axis from variables on the given roots. */
static const tc_expr **forward_vals(tc_epool *p, const tc_dgraph *g, const int *roots, int n) {
  const tc_expr **v = tc_xcalloc((size_t)g->naxes + 1, sizeof *v);
  for (int i = 0; i < n; i++) v[roots[i]] = tc_e_var(p, NULL, 0, g->axes[roots[i]].extent - 1);
  tc_dg_walk(p, g, v, NULL);
  return v;
}

/* ---- item 1: the swizzles as transforms --------------------------------- */

static void test_cute_333(void) {
  static const int64_t rows[] = {8, 16, 64, 256};
  for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
    tc_dgraph g;
    tc_dg_init(&g);
    TC_STR_LOCAL(err);
    int row = tc_dg_root(&g, rows[r], 0), col = tc_dg_root(&g, 64, 1), ro, co, lin, flat, sw;
    tc_amd_swizzle_params p = {8, 1, 8};
    TC_REQUIRE(tc_dg_amd_swizzle(&g, row, col, &p, &ro, &co, &err) == 0, "%s", tc_str_cstr(&err));
    TC_REQUIRE(tc_dg_merge(&g, ro, co, &lin, &err) == 0, "%s", tc_str_cstr(&err));
    flat = tc_dg_root(&g, rows[r] * 64, 0);
    TC_REQUIRE(tc_dg_cute(&g, flat, 3, 3, 3, &sw, &err) == 0, "%s", tc_str_cstr(&err));
    tc_epool *ep = tc_epool_new();
    int roots[3] = {row, col, flat};
    const tc_expr **v = forward_vals(ep, &g, roots, 3);
    int bad = 0;
    for (int64_t o = 0; o < rows[r] * 64 && bad < 5; o++) {
      int64_t vars[3] = {o / 64, o % 64, o};
      int64_t got = tc_e_eval(v[lin], vars), want = cute_ref(3, 3, 3, o);
      if (got != want || tc_e_eval(v[sw], vars) != want) bad++;
      TC_CHECK(got == want, "%lld rows: offset %lld: vec 8 / perPhase 1 / maxPhase 8 gives %lld, "
               "Swizzle<3,3,3> %lld", (long long)rows[r], (long long)o, (long long)got, (long long)want);
      TC_CHECK(tc_e_eval(v[sw], vars) == want, "tc_dg_cute<3,3,3>(%lld)", (long long)o);
    }
    TC_CHECK(g.axes[ro].extent == rows[r] && g.axes[co].extent == 64, "extents %lld x %lld",
             (long long)g.axes[ro].extent, (long long)g.axes[co].extent);
    free(v);
    tc_epool_free(ep);
    tc_dg_free(&g);
  }
}

/* Builds the swizzle on [rows, cols] and checks it against the formula:
 * forward (col' and row' == row), backward (the walk from (row', col')
 * back to the roots), a bijection per row, and no predicate.  Returns 1 when
 * the builder accepted the parameters. */
static int check_params(int64_t rows, int64_t cols, int64_t vec, int64_t pp, int64_t mp, const char *what) {
  tc_dgraph g;
  tc_dg_init(&g);
  TC_STR_LOCAL(err);
  int row = tc_dg_root(&g, rows, 0), col = tc_dg_root(&g, cols, 1), ro, co;
  tc_amd_swizzle_params p = {vec, pp, mp};
  if (tc_dg_amd_swizzle(&g, row, col, &p, &ro, &co, &err)) {
    TC_CHECK(g.naxes == 2 && g.nxf == 0, "%s: a refused swizzle changed the graph", what);
    tc_dg_free(&g);
    return 0;
  }
  TC_CHECK(g.axes[ro].extent == rows && g.axes[co].extent == cols, "%s: extents", what);
  tc_epool *ep = tc_epool_new();
  const tc_expr **v = forward_vals(ep, &g, (int[]){row, col}, 2);
  const tc_expr **bk = tc_xcalloc((size_t)g.naxes + 1, sizeof *bk);
  bk[ro] = tc_e_var(ep, NULL, 0, rows - 1); /* var 2 */
  bk[co] = tc_e_var(ep, NULL, 0, cols - 1); /* var 3 */
  const tc_expr *pred = tc_e_const(ep, 1);
  tc_dg_walk(ep, &g, bk, &pred);
  TC_CHECK(tc_e_is_const(pred, 1), "%s: the swizzle needs no predicate", what);
  char *seen = tc_xcalloc((size_t)cols, 1);
  int bad = 0;
  for (int64_t r = 0; r < rows && bad < 5; r++) {
    memset(seen, 0, (size_t)cols);
    for (int64_t c = 0; c < cols && bad < 5; c++) {
      int64_t vars[4] = {r, c, 0, 0};
      int64_t got = tc_e_eval(v[co], vars), want = triton_ref(vec, pp, mp, r, c);
      int64_t gr = tc_e_eval(v[ro], vars);
      if (got != want || gr != r) bad++;
      TC_CHECK(got == want && gr == r, "%s: (%lld, %lld) -> (%lld, %lld), formula (%lld, %lld)", what,
               (long long)r, (long long)c, (long long)gr, (long long)got, (long long)r, (long long)want);
      if (got >= 0 && got < cols) seen[got]++;
      int64_t back[4] = {0, 0, r, want};
      int64_t br = tc_e_eval(bk[row], back), bc = tc_e_eval(bk[col], back);
      if (br != r || bc != c) bad++;
      TC_CHECK(br == r && bc == c, "%s: backward from (%lld, %lld) gives (%lld, %lld), want (%lld, %lld)",
               what, (long long)r, (long long)want, (long long)br, (long long)bc, (long long)r, (long long)c);
    }
    for (int64_t c = 0; c < cols && !bad; c++)
      if (seen[c] != 1) {
        bad++;
        TC_CHECK(0, "%s: row %lld is not permuted (column %lld hit %d times)", what, (long long)r,
                 (long long)c, seen[c]);
      }
  }
  free(seen), free(v), free(bk);
  tc_epool_free(ep);
  tc_dg_free(&g);
  return 1;
}

static void test_matrix_core(void) {
  static const int bits[] = {8, 16, 32};
  static const int64_t conts[] = {8, 16, 32, 64, 128, 256};
  static const int64_t rows[] = {16, 32, 64, 128};
  int built = 0;
  for (size_t b = 0; b < 3; b++)
    for (size_t c = 0; c < sizeof conts / sizeof *conts; c++)
      for (int kpack = 0; kpack <= 2; kpack++) { /* vec: default, 64/bits * 2, 1 */
        int64_t vec = kpack == 0 ? 0 : kpack == 1 ? 2 * (64 / bits[b]) : 1;
        tc_amd_swizzle_params p;
        char what[128];
        TC_STR_LOCAL(err);
        int64_t want_vec = vec ? vec : 64 / bits[b];
        int rc = tc_amd_matrix_core_params(bits[b], conts[c], vec, &p, &err);
        if (conts[c] < want_vec) {
          TC_CHECK(rc == -1 && strstr(tc_str_cstr(&err), "contiguous"), "bits %d cont %lld vec %lld accepted", bits[b],
                   (long long)conts[c], (long long)vec);
          continue;
        }
        TC_REQUIRE(rc == 0, "bits %d cont %lld: %s", bits[b], (long long)conts[c], tc_str_cstr(&err));
        int64_t pp, mp;
        mc_ref(bits[b], conts[c], want_vec, &pp, &mp);
        TC_CHECK(p.vec == want_vec && p.per_phase == pp && p.max_phase == mp,
                 "bits %d cont %lld vec %lld: params %lld/%lld/%lld, formula %lld/%lld/%lld", bits[b],
                 (long long)conts[c], (long long)vec, (long long)p.vec, (long long)p.per_phase,
                 (long long)p.max_phase, (long long)want_vec, (long long)pp, (long long)mp);
        for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
          snprintf(what, sizeof what, "matrix core bits %d [%lld, %lld] vec %lld", bits[b],
                   (long long)rows[r], (long long)conts[c], (long long)p.vec);
          built += check_params(rows[r], conts[c], p.vec, p.per_phase, p.max_phase, what);
        }
      }
  TC_CHECK(built > 150, "only %d matrix-core layouts built", built);
  /* TileLang's bf16 case: 64 columns, vec 4 -> perPhase 1, maxPhase 16 */
  tc_amd_swizzle_params p;
  TC_STR_LOCAL(err);
  TC_CHECK(tc_amd_matrix_core_params(16, 64, 0, &p, &err) == 0 && p.vec == 4 &&
               p.per_phase == 1 && p.max_phase == 16, "bf16 x 64: %lld/%lld/%lld", (long long)p.vec,
           (long long)p.per_phase, (long long)p.max_phase);
  TC_CHECK(tc_amd_matrix_core_params(12, 64, 0, &p, &err) == -1 && strstr(tc_str_cstr(&err), "12 bits"),
           "12 bits: %s", tc_str_cstr(&err));
}

static void test_triton_sweep(void) {
  static const int64_t vecs[] = {1, 2, 4, 8}, pps[] = {1, 2, 4}, mps[] = {1, 2, 3, 4, 8, 16};
  static const int64_t shapes[][2] = {{16, 64}, {32, 32}, {8, 128}, {48, 64}, {64, 96}};
  int built = 0, refused = 0;
  for (size_t a = 0; a < 4; a++)
    for (size_t b = 0; b < 3; b++)
      for (size_t c = 0; c < sizeof mps / sizeof *mps; c++)
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
          char what[128];
          int64_t R = shapes[s][0], C = shapes[s][1], vec = vecs[a], pp = pps[b], mp = mps[c];
          snprintf(what, sizeof what, "[%lld, %lld] vec %lld perPhase %lld maxPhase %lld", (long long)R,
                   (long long)C, (long long)vec, (long long)pp, (long long)mp);
          /* when must the builder refuse?  (the XOR must stay inside the row) */
          int64_t groups = R / pp, phases = groups < mp ? groups : mp, span = 1;
          while (span < phases) span *= 2;
          bool one = mp == 1 || R <= pp;
          bool ok = C % vec == 0 &&
                    (one || (R % pp == 0 && (groups <= mp || groups % mp == 0) && (C / vec) % span == 0));
          int got = check_params(R, C, vec, pp, mp, what);
          TC_CHECK(got == (int)ok, "%s: builder %s, expected %s", what, got ? "accepted" : "refused",
                   ok ? "accept" : "refuse");
          built += got, refused += !got;
        }
  TC_CHECK(built > 100 && refused > 10, "built %d, refused %d", built, refused);
}

static void test_errors_and_identity(void) {
  tc_dgraph g;
  tc_dg_init(&g);
  TC_STR_LOCAL(err);
  int row = tc_dg_root(&g, 64, 0), col = tc_dg_root(&g, 60, 1), ro = -7, co = -7;
  tc_amd_swizzle_params p = {8, 1, 8};
  TC_CHECK(tc_dg_amd_swizzle(&g, row, col, &p, &ro, &co, &err) == -1 &&
               strstr(tc_str_cstr(&err), "60") && strstr(tc_str_cstr(&err), "vec = 8"), "60 columns by 8: %s", tc_str_cstr(&err));
  int col2 = tc_dg_root(&g, 64, 1);
  p = (tc_amd_swizzle_params){8, 3, 8};
  TC_CHECK(tc_dg_amd_swizzle(&g, row, col2, &p, &ro, &co, &err) == -1 &&
               strstr(tc_str_cstr(&err), "perPhase = 3"), "64 rows, perPhase 3: %s", tc_str_cstr(&err));
  p = (tc_amd_swizzle_params){4, 1, 8};
  int row2 = tc_dg_root(&g, 20, 0);
  TC_CHECK(tc_dg_amd_swizzle(&g, row2, col2, &p, &ro, &co, &err) == -1 &&
               strstr(tc_str_cstr(&err), "maxPhase = 8"), "20 rows, maxPhase 8: %s", tc_str_cstr(&err));
  p = (tc_amd_swizzle_params){16, 1, 8};
  TC_CHECK(tc_dg_amd_swizzle(&g, row, col2, &p, &ro, &co, &err) == -1 &&
               strstr(tc_str_cstr(&err), "leave the row"), "4 chunks, 8 phases: %s", tc_str_cstr(&err));
  p = (tc_amd_swizzle_params){0, 1, 8};
  TC_CHECK(tc_dg_amd_swizzle(&g, row, col2, &p, &ro, &co, &err) == -1 && strstr(tc_str_cstr(&err), "1..2^30"),
           "vec 0: %s", tc_str_cstr(&err));
  TC_CHECK(tc_dg_amd_swizzle(&g, row, row, &p, &ro, &co, &err) == -1 && strstr(tc_str_cstr(&err), "distinct"),
           "same axis: %s", tc_str_cstr(&err));
  TC_CHECK(g.nxf == 0, "refused swizzles made %d transforms", g.nxf);
  /* one phase: the identity, nothing added */
  p = (tc_amd_swizzle_params){8, 1, 1};
  TC_CHECK(tc_dg_amd_swizzle(&g, row, col2, &p, &ro, &co, &err) == 0 && ro == row && co == col2 &&
               g.nxf == 0, "maxPhase 1 is the identity");
  p = (tc_amd_swizzle_params){8, 64, 8};
  TC_CHECK(tc_dg_amd_swizzle(&g, row, col2, &p, &ro, &co, &err) == 0 && ro == row && co == col2 &&
               g.nxf == 0, "perPhase >= rows is the identity");
  tc_dg_free(&g);
  /* the scheduling calls */
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {64, 64};
  tc_tensor *a = tc_input(f, TC_BF16, 2, shape);
  tc_tensor *b = tc_set(f, a);
  TC_CHECK(tc_swizzle_matrix_core(a, 0, 1, 0) == TC_ERR_SCHEDULE && strstr(tc_fusion_error(f), "fusion input"),
           "input: %s", tc_fusion_error(f));
  TC_CHECK(tc_swizzle_amd(b, 0, 2, 8, 1, 8) == TC_ERR_ARGUMENT && strstr(tc_fusion_error(f), "no loop axis 2"),
           "axis 2: %s", tc_fusion_error(f));
  TC_CHECK(tc_swizzle_amd(b, 1, 1, 8, 1, 8) == TC_ERR_ARGUMENT && strstr(tc_fusion_error(f), "both"),
           "same axis: %s", tc_fusion_error(f));
  TC_CHECK(tc_swizzle_amd(b, 0, 1, 8, 1, 16) == TC_ERR_SCHEDULE &&
               strstr(tc_fusion_error(f), "tc_swizzle_amd: T1 axes 0 (rows), 1 (columns)") &&
               strstr(tc_fusion_error(f), "leave the row"), "16 phases on 8 chunks: %s", tc_fusion_error(f));
  TC_CHECK(tc_swizzle_matrix_core(b, 0, 1, 128) == TC_ERR_SCHEDULE && strstr(tc_fusion_error(f), "bf16"),
           "vec 128: %s", tc_fusion_error(f));
  OK(f, tc_swizzle_matrix_core(b, 0, 1, 0));
  TC_CHECK(tc_tensor_nloop(b) == 2 && tc_tensor_loop_extent(b, 0) == 64 && tc_tensor_loop_extent(b, 1) == 64,
           "loop after the swizzle");
  tc_fusion_free(f);
}

/* ---- item 2: reshape + swizzle ------------------------------------------ */

/* TileLang's gfx950 example: bf16 [S, 256, 64], matrix-core swizzle (vec 4 ->
 * maxPhase 16), reshaped to [S, 1, 32, 512]: a stage prefix and a replication
 * prefix. */
static void test_tilelang_layout_split(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[3] = {2, 256, 64};
  tc_tensor *g = tc_input(f, TC_BF16, 3, shape);
  tc_tensor *s = tc_set(f, g);
  OK(f, tc_add_output(f, tc_set(f, s)));
  OK(f, tc_set_memory_type(s, TC_MEM_SHARED));
  OK(f, tc_swizzle_matrix_core(s, 1, 2, 0));
  OK(f, tc_split(s, 1, 8, 1));     /* [S, 32, 8, 64] */
  OK(f, tc_merge(s, 2, 3));        /* [S, 32, 512] */
  OK(f, tc_split(s, 1, 1, 0));     /* [S, 1, 32, 512] */
  OK(f, tc_set_alloc_to_loop(s));
  tc_layout_parts lp;
  OK(f, tc_layout_split(s, &lp));
  TC_CHECK(lp.nalloc == 4 && lp.extents[0] == 2 && lp.extents[1] == 1 && lp.extents[2] == 32 &&
               lp.extents[3] == 512, "allocation [%lld, %lld, %lld, %lld]", (long long)lp.extents[0],
           (long long)lp.extents[1], (long long)lp.extents[2], (long long)lp.extents[3]);
  TC_CHECK(lp.rows == 512 && lp.cols == 64 && lp.nswizzles == 1 && lp.grain == 4 && !lp.padded,
           "rows %lld cols %lld swizzles %d grain %lld padded %d", (long long)lp.rows, (long long)lp.cols,
           lp.nswizzles, (long long)lp.grain, lp.padded);
  int bad = 0;
  /* every element through the layout's expressions (tc_rs_forward) */
  tc_epool *ep = tc_epool_new();
  const tc_expr *lv[3], *fv[4], *rv[4];
  for (int i = 0; i < 3; i++) lv[i] = tc_e_var(ep, NULL, 0, shape[i] - 1);
  tc_rs_forward(ep, &f->g, s->logical, 3, s->alloc, 4, lv, true, fv);
  tc_rs_forward(ep, &f->g, s->logical, 3, s->alloc, 4, lv, false, rv);
  for (int64_t st = 0; st < 2; st++)
    for (int64_t r = 0; r < 256 && bad < 5; r++)
      for (int64_t c = 0; c < 64 && bad < 5; c++) {
        int64_t v[3] = {st, r, c};
        int64_t sw = ((c / 4) ^ (r % 16)) * 4 + c % 4;
        int64_t want_f[4] = {st, 0, r / 8, (r % 8) * 64 + sw}, want_r[4] = {st, 0, r / 8, (r % 8) * 64 + c};
        bool ok = true;
        for (int k = 0; k < 4; k++) ok &= tc_e_eval(fv[k], v) == want_f[k] && tc_e_eval(rv[k], v) == want_r[k];
        if (!ok) bad++;
        TC_CHECK(ok, "(%lld, %lld, %lld): the layout's expressions disagree with the formula", (long long)st,
                 (long long)r, (long long)c);
      }
  tc_epool_free(ep);
  /* and a sample through the public call, with the swizzled column */
  static const int64_t rows[] = {0, 1, 7, 8, 15, 16, 100, 255};
  for (int64_t st = 0; st < 2; st++)
    for (size_t ri = 0; ri < sizeof rows / sizeof *rows && bad < 5; ri++)
      for (int64_t c = 0, r = rows[ri]; c < 64 && bad < 5; c++) {
        int64_t co[3] = {st, r, c}, al[4], re[4], sc = -1;
        OK(f, tc_layout_eval(s, co, al, re, &sc));
        int64_t sw = ((c / 4) ^ (r % 16)) * 4 + c % 4; /* the matrix-core swizzle, written out */
        bool ok = al[0] == st && al[1] == 0 && al[2] == r / 8 && al[3] == (r % 8) * 64 + sw &&
                  re[0] == st && re[1] == 0 && re[2] == r / 8 && re[3] == (r % 8) * 64 + c && sc == sw;
        /* F(row, col) = R(row, s_row(col)) */
        int64_t co2[3] = {st, r, sc}, re2[4];
        if (ok) OK(f, tc_layout_eval(s, co2, NULL, re2, NULL));
        ok = ok && memcmp(re2, al, sizeof al) == 0;
        if (!ok) bad++;
        TC_CHECK(ok, "(%lld, %lld, %lld): alloc [%lld %lld %lld %lld] reshape [%lld %lld %lld %lld] s = %lld",
                 (long long)st, (long long)r, (long long)c, (long long)al[0], (long long)al[1],
                 (long long)al[2], (long long)al[3], (long long)re[0], (long long)re[1], (long long)re[2],
                 (long long)re[3], (long long)sc);
      }
  int64_t out_of_range[3] = {0, 256, 0};
  TC_CHECK(tc_layout_eval(s, out_of_range, NULL, NULL, NULL) == TC_ERR_ARGUMENT &&
               strstr(tc_fusion_error(f), "outside [0, 256)"), "range: %s", tc_fusion_error(f));
  /* a global tensor is a pure reshape (row-major) */
  OK(f, tc_layout_split(g, &lp));
  TC_CHECK(lp.nswizzles == 0 && lp.nalloc == 3 && lp.grain == 64, "global: %d swizzles", lp.nswizzles);
  tc_fusion_free(f);
}

/* tc_layout_split on a tensor whose loop (= layout) went through `how`. */
static tc_status split_of(int how, tc_fusion **fo, tc_tensor **to) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {32, 64};
  tc_tensor *g = tc_input(f, TC_F16, 2, shape);
  tc_tensor *s = tc_set(f, g);
  tc_set_memory_type(s, TC_MEM_SHARED);
  *fo = f, *to = s;
  switch (how) {
    case 0: /* XOR of a column chunk into the row: mixes rows */
      OK(f, tc_split(s, 1, 8, 1));              /* [32, 8, 8] */
      OK(f, tc_split(s, 0, 8, 1));              /* [4, 8, 8, 8] */
      OK(f, tc_swizzle(s, TC_SWIZZLE_XOR, 2, 1)); /* row_i ^= chunk */
      break;
    case 1: /* Swizzle<3,3,3> on 32 columns: bits 3..5 include a row bit */
    case 2: { /* the same on 64 columns: only column bits change */
      tc_fusion_free(f);
      f = tc_fusion_new();
      int64_t sh2[2] = {32, how == 1 ? 32 : 64};
      g = tc_input(f, TC_F16, 2, sh2);
      s = tc_set(f, g);
      tc_set_memory_type(s, TC_MEM_SHARED);
      *fo = f, *to = s;
      OK(f, tc_merge(s, 0, 1));
      OK(f, tc_swizzle_cute(s, 0, 3, 3, 3));
      break;
    }
    case 3: /* a crop */
      OK(f, tc_resize(s, 1, 0, -4));
      break;
    case 4: /* a pad: allowed */
      OK(f, tc_resize(s, 1, 0, 64));
      OK(f, tc_split(s, 1, 4, 1));
      OK(f, tc_split(s, 0, 8, 1));
      OK(f, tc_swizzle(s, TC_SWIZZLE_XOR, 1, 2));
      break;
  }
  return tc_layout_split(s, &(tc_layout_parts){0});
}

static void test_split_refusals(void) {
  tc_fusion *f;
  tc_tensor *s;
  TC_CHECK(split_of(0, &f, &s) == TC_ERR_SCHEDULE && strstr(tc_fusion_error(f), "mixes rows") &&
               strstr(tc_fusion_error(f), "logical axis 0"), "XOR into the row: %s", tc_fusion_error(f));
  int64_t co[2] = {0, 0};
  TC_CHECK(tc_layout_eval(s, co, NULL, NULL, NULL) == TC_ERR_SCHEDULE, "eval of a mixing layout");
  tc_fusion_free(f);
  TC_CHECK(split_of(1, &f, &s) == TC_ERR_SCHEDULE && strstr(tc_fusion_error(f), "CuTe swizzle 0") &&
               strstr(tc_fusion_error(f), "mixes rows"), "Swizzle<3,3,3> on 32 columns: %s", tc_fusion_error(f));
  tc_fusion_free(f);
  tc_layout_parts lp;
  TC_CHECK(split_of(2, &f, &s) == TC_OK, "Swizzle<3,3,3> on 64 columns: %s", tc_fusion_error(f));
  OK(f, tc_layout_split(s, &lp));
  TC_CHECK(lp.nswizzles == 1 && lp.grain == 8 && lp.nalloc == 1 && lp.extents[0] == 2048,
           "Swizzle<3,3,3>: %d swizzles, grain %lld", lp.nswizzles, (long long)lp.grain);
  for (int64_t r = 0; r < 32; r++)
    for (int64_t c = 0; c < 64; c++) {
      int64_t xy[2] = {r, c}, al = -1, re = -1, sc = -1;
      OK(f, tc_layout_eval(s, xy, &al, &re, &sc));
      TC_CHECK(al == cute_ref(3, 3, 3, r * 64 + c) && re == r * 64 + c && sc == al - r * 64,
               "(%lld, %lld): %lld %lld %lld", (long long)r, (long long)c, (long long)al, (long long)re,
               (long long)sc);
    }
  tc_fusion_free(f);
  TC_CHECK(split_of(3, &f, &s) == TC_ERR_SCHEDULE && strstr(tc_fusion_error(f), "not a bijection") &&
               strstr(tc_fusion_error(f), "crops"), "crop: %s", tc_fusion_error(f));
  tc_fusion_free(f);
  TC_CHECK(split_of(4, &f, &s) == TC_OK, "pad: %s", tc_fusion_error(f));
  OK(f, tc_layout_split(s, &lp));
  TC_CHECK(lp.padded == 1 && lp.nswizzles == 1 && lp.grain == 4, "pad: padded %d grain %lld", lp.padded,
           (long long)lp.grain);
  tc_fusion_free(f);

  /* internal: allocations that miss an element, repeat an axis, or come
   * from a view transform */
  tc_dgraph g;
  tc_dg_init(&g);
  TC_STR_LOCAL(err);
  int row = tc_dg_root(&g, 16, 0), col = tc_dg_root(&g, 16, 1), ro, ri, e[2];
  TC_REQUIRE(tc_dg_split(&g, row, 4, 1, &ro, &ri, &err) == 0, "%s", tc_str_cstr(&err));
  int lg[2] = {row, col};
  tc_rs_split sp;
  TC_CHECK(tc_rs_split_layout(&g, lg, 2, (int[]){ro, col}, 2, &sp, &err) == -1 &&
               strstr(tc_str_cstr(&err), "do not determine"), "missing ri: %s", tc_str_cstr(&err));
  TC_CHECK(tc_rs_split_layout(&g, lg, 2, (int[]){row, ri, col}, 3, &sp, &err) == -1 &&
               strstr(tc_str_cstr(&err), "determined by the other"), "ri with row: %s", tc_str_cstr(&err));
  TC_CHECK(tc_rs_split_layout(&g, lg, 2, (int[]){col, col, row}, 3, &sp, &err) == -1 &&
               strstr(tc_str_cstr(&err), "same axis"), "col twice: %s", tc_str_cstr(&err));
  TC_REQUIRE(tc_dg_embed(&g, col, 2, (int64_t[]){4, 4}, (int64_t[]){4, 1}, e, &err) == 0, "%s", tc_str_cstr(&err));
  TC_CHECK(tc_rs_split_layout(&g, lg, 2, (int[]){row, e[0], e[1]}, 3, &sp, &err) == -1 &&
               strstr(tc_str_cstr(&err), "embed"), "embed: %s", tc_str_cstr(&err));
  TC_CHECK(tc_rs_split_layout(&g, lg, 2, (int[]){ro, ri, col}, 3, &sp, &err) == 0 &&
               sp.nswizzles == 0 && sp.grain == 16, "plain split: %s", tc_str_cstr(&err));
  tc_dg_free(&g);
}

/* ---- randomized soundness of the row analysis ----------------------------- */

static uint64_t rng = 0x5eed003;

static int rnd(int n) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return n <= 1 ? 0 : (int)(rng % (uint64_t)n);
}

static void test_random_soundness(void) {
  static const int64_t exts[] = {4, 8, 16, 32};
  int accepted = 0, refused = 0;
  for (int iter = 0; iter < 400; iter++) {
    tc_dgraph g;
    tc_dg_init(&g);
    TC_STR_LOCAL(err);
    int nr = 2 + rnd(2);
    int roots[3], leaves[16], nl = 0;
    for (int i = 0; i < nr; i++) roots[i] = leaves[nl++] = tc_dg_root(&g, exts[rnd(i == nr - 1 ? 4 : 2)], i);
    for (int op = 0; op < 6; op++) {
      int k = rnd(4), a = rnd(nl), b = rnd(nl);
      if (k == 0) { /* split by a dividing power of two */
        int64_t e = g.axes[leaves[a]].extent;
        if (e < 2 || nl >= 15) continue;
        int64_t fct = (int64_t)1 << (1 + rnd(4));
        if (e % fct) continue;
        int o, in;
        if (tc_dg_split(&g, leaves[a], fct, 1, &o, &in, &err)) continue;
        for (int j = nl; j > a + 1; j--) leaves[j] = leaves[j - 1];
        leaves[a] = o, leaves[a + 1] = in, nl++;
      } else if (k == 1) { /* merge two leaves (any order) */
        if (a == b || nl < 2) continue;
        int m;
        if (tc_dg_merge(&g, leaves[a], leaves[b], &m, &err)) continue;
        leaves[a] = m;
        for (int j = b; j + 1 < nl; j++) leaves[j] = leaves[j + 1];
        nl--;
      } else if (k == 2) { /* XOR */
        if (a == b) continue;
        int x2, y2;
        if (tc_dg_xor(&g, leaves[a], leaves[b], &x2, &y2, &err)) continue;
        leaves[a] = x2, leaves[b] = y2;
      } else { /* CuTe on a leaf */
        int64_t e = g.axes[leaves[a]].extent;
        int bb = 1 + rnd(2), mm = rnd(3), ss = bb + rnd(2);
        int o;
        if (!pow2(e) || tc_dg_cute(&g, leaves[a], bb, mm, ss, &o, &err)) continue;
        leaves[a] = o;
      }
    }
    tc_rs_split sp;
    if (tc_rs_split_layout(&g, roots, nr, leaves, nl, &sp, &err)) {
      TC_CHECK(strstr(tc_str_cstr(&err), "mixes rows"), "random layout %d refused for another reason: %s", iter, tc_str_cstr(&err));
      refused++;
      tc_dg_free(&g);
      continue;
    }
    accepted++;
    /* T = R^-1 o F over the whole domain: keeps rows, permutes columns */
    tc_epool *ep = tc_epool_new();
    const tc_expr *lv[3], *fv[16];
    for (int i = 0; i < nr; i++) lv[i] = tc_e_var(ep, NULL, 0, g.axes[roots[i]].extent - 1);
    tc_rs_forward(ep, &g, roots, nr, leaves, nl, lv, true, fv);
    tc_dgraph g2;
    tc_rs_graph_copy(&g2, &g);
    int rax[16];
    TC_REQUIRE(tc_rs_reshape_axes(&g2, roots, nr, leaves, nl, rax, &err) == 0, "%s", tc_str_cstr(&err));
    const tc_expr **vals = tc_xcalloc((size_t)g2.naxes + 1, sizeof *vals);
    for (int k = 0; k < nl; k++) vals[rax[k]] = fv[k];
    tc_dg_walk(ep, &g2, vals, NULL);
    int64_t n = 1, cols = g.axes[roots[nr - 1]].extent;
    for (int i = 0; i < nr; i++) n *= g.axes[roots[i]].extent;
    char *hit = tc_xcalloc((size_t)n, 1);
    int bad = 0;
    for (int64_t pt = 0; pt < n && bad < 3; pt++) {
      int64_t v[3], rest = pt;
      for (int i = nr - 1; i >= 0; i--) v[i] = rest % g.axes[roots[i]].extent, rest /= g.axes[roots[i]].extent;
      int64_t lin = 0;
      bool same_row = true;
      for (int i = 0; i < nr; i++) {
        TC_REQUIRE(vals[roots[i]], "layout %d: no value for root %d", iter, i);
        int64_t t = tc_e_eval(vals[roots[i]], v);
        if (i < nr - 1) same_row &= t == v[i];
        if (t < 0 || t >= g.axes[roots[i]].extent) same_row = false;
        lin = lin * g.axes[roots[i]].extent + t;
      }
      if (!same_row) {
        bad++;
        TC_CHECK(0, "layout %d accepted but point %lld changes row", iter, (long long)pt);
      } else if (hit[lin]++) {
        bad++;
        TC_CHECK(0, "layout %d: T is not a permutation (%lld hit twice)", iter, (long long)lin);
      }
    }
    (void)cols;
    free(hit), free(vals);
    tc_dg_free(&g2);
    tc_epool_free(ep);
    tc_dg_free(&g);
  }
  TC_CHECK(accepted > 100 && refused > 20, "accepted %d, refused %d", accepted, refused);
}

int main(void) {
  TC_RUN(test_cute_333);
  TC_RUN(test_matrix_core);
  TC_RUN(test_triton_sweep);
  TC_RUN(test_errors_and_identity);
  TC_RUN(test_tilelang_layout_split);
  TC_RUN(test_split_refusals);
  TC_RUN(test_random_soundness);
  TC_MAIN_END();
}
