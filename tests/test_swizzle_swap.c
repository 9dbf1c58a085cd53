/* test_swizzle_swap.c - the swizzle swap (src/sched/swizzle_swap.c; after
 * TileLang's, for AMD direct-to-LDS loads)
 * on the OpenCL device (PoCL by default).
 *
 * Each case copies a global tensor G into a shared tensor SH (a set, or a
 * cast) whose layout swizzles: AMD's matrix-core swizzle, Triton's (vec,
 * perPhase, maxPhase) form, CuTe's Swizzle<B,M,S> on the linear offset, or an
 * XOR of 16-byte chunks with the row, optionally reshaped as TileLang's
 * gfx950 example does ([R, C] -> [R / 8, 8 * C]) behind a stage prefix and a
 * replication prefix (an extent-1 axis), padded by tc_resize (the copy then
 * reads under a predicate: if_then_else(pred, load, skip)), or cut into row
 * tiles that the tensor does not divide (edge tiles).  Two
 * consumers read SH: OUT (a logical-order copy, checked against G) and
 * DUMP.  The same fusion is built twice, with the copy as scheduled
 * (stores through the swizzle) and with tc_swizzle_swap, and both run.
 *
 * Dumping shared memory: DUMP = set(SH) is lowered like any consumer, so
 * its statement reads SH at the shared-memory address of each element
 * (in_index).  The test then sets that statement's output index to the
 * same address plus the block / serial-loop iteration times the tile size
 * - dump[iter * tile + q] = SH[q] - prints the kernel with the OpenCL
 * dialect and runs it with a dump buffer of one tile per iteration.  The
 * dump is the raw shared-memory image of what the copy wrote (positions no
 * element maps to keep their sentinel), taken the same way for both
 * kernels, and is compared with an image computed here from plain C
 * formulas of each layout.  Both kernels must produce exactly that image.
 *
 * Also: the analysis that the swapped store is lane-contiguous (the
 * lowered statement's out_index is base + tidx * n + v, with no XOR, and
 * the XOR has moved into the global read), the refusals, tc_compile's
 * automatic swap (tc_swizzle_swap_auto and its undo) and, where the HIP
 * dialect exists, that tc_compile(TC_TARGET_HIP) swaps by default and not
 * with TILEC_SWIZZLE_SWAP=0 (skipped with the reason while TC_TARGET_HIP
 * is unsupported). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tilec/tilec.h"
#include "codegen/dialect.h"
#include "lower/kernel.h"
#include "runtime/runtime.h"
#include "sched/sched.h"

#define OK(f, call) TC_CHECK((call) == TC_OK, "%s: %s", #call, tc_fusion_error(f))

/* ---- cases ----------------------------------------------------------------- */

typedef enum { L_MC, L_TRITON, L_CUTE, L_XOR } layout_kind;

typedef struct kcase {
  const char *name;
  tc_dtype src, dst;       /* dst != src: SH = cast(G, dst) */
  int64_t stages;          /* > 0: a leading stage dimension */
  int stage_serial;        /* the stage is a serial loop (else BIDx) */
  int64_t rows, cols;
  int64_t tile_rows;       /* > 0: tiles of this many rows on BIDx (edge tiles when it does not divide) */
  int64_t pad_rows;        /* the layout pads the tile's rows (tc_resize) */
  layout_kind layout;
  int vec, pp, mp;         /* L_MC: vec (0: the default); L_TRITON: all three */
  int cb, cm, cs;          /* L_CUTE */
  int64_t reshape;         /* > 0: [R, C] -> [R / reshape, reshape * C] */
  int replicate;           /* an extent-1 axis in front of the reshaped rows */
  int64_t threads, per;    /* the copy: TIDx lanes, elements per lane in logical order */
  int n;                   /* tc_swizzle_swap's n */
  int64_t want_n;          /* elements per lane after the swap */
} kcase;

static const kcase cases[] = {
    /* TileLang's: bf16 [S, 256, 64] -> [S, 1, 32, 512], matrix core vec 4 */
    {"tilelang_bf16", TC_BF16, TC_BF16, 2, 0, 256, 64, 0, 0, L_MC, 0, 0, 0, 0, 0, 0, 8, 1, 64, 8, 0, 4},
    {"tilelang_f16_vec8", TC_F16, TC_F16, 2, 0, 256, 64, 0, 0, L_MC, 8, 0, 0, 0, 0, 0, 8, 1, 64, 8, 0, 8},
    {"cast_f32_bf16", TC_F32, TC_BF16, 2, 0, 256, 64, 0, 0, L_MC, 8, 0, 0, 0, 0, 0, 8, 1, 64, 4, 0, 8},
    {"cast_f32_f16_serial_stage", TC_F32, TC_F16, 3, 1, 64, 128, 0, 0, L_MC, 0, 0, 0, 0, 0, 0, 0, 0, 128, 4, 0, 4},
    {"padded_read_bf16", TC_BF16, TC_BF16, 0, 0, 250, 64, 0, 6, L_MC, 8, 0, 0, 0, 0, 0, 8, 0, 64, 8, 0, 8},
    {"edge_tiles_f16", TC_F16, TC_F16, 0, 0, 200, 64, 64, 0, L_TRITON, 8, 1, 8, 0, 0, 0, 8, 1, 96, 4, 0, 8},
    {"triton_f32", TC_F32, TC_F32, 2, 0, 32, 64, 0, 0, L_TRITON, 4, 2, 4, 0, 0, 0, 0, 0, 32, 4, 0, 4},
    {"matrix_core_f32", TC_F32, TC_F32, 3, 0, 32, 32, 0, 0, L_MC, 0, 0, 0, 0, 0, 0, 0, 0, 64, 2, 0, 2},
    {"matrix_core_i8", TC_I8, TC_I8, 2, 0, 64, 64, 0, 0, L_MC, 0, 0, 0, 0, 0, 0, 0, 0, 64, 16, 0, 8},
    {"cute_333_f16", TC_F16, TC_F16, 2, 0, 64, 64, 0, 0, L_CUTE, 0, 0, 0, 3, 3, 3, 0, 0, 128, 4, 0, 8},
    {"xor_chunks_bf16", TC_BF16, TC_BF16, 2, 0, 32, 128, 0, 0, L_XOR, 0, 0, 0, 0, 0, 0, 0, 0, 64, 8, 0, 8},
    {"cast_bf16_f32_n1", TC_BF16, TC_F32, 2, 0, 64, 64, 0, 0, L_MC, 0, 0, 0, 0, 0, 0, 8, 0, 64, 8, 1, 1},
};

/* The row position of the layout's swizzle and the tile size. */
static int64_t tile_rows_of(const kcase *c) { return (c->tile_rows ? c->tile_rows : c->rows) + c->pad_rows; }
static int64_t tile_elems(const kcase *c) { return tile_rows_of(c) * c->cols; }
static int64_t iterations(const kcase *c) {
  if (c->stages) return c->stages;
  return c->tile_rows ? (c->rows + c->tile_rows - 1) / c->tile_rows : 1;
}

/* ---- plain C formulas of the layouts ----------------------------------------- */

static int64_t triton_ref(int64_t vec, int64_t pp, int64_t mp, int64_t row, int64_t col) {
  int64_t phase = (row / pp) % mp;
  return ((col / vec) ^ phase) * vec + col % vec;
}

static int64_t cute_ref(int b, int m, int s, int64_t x) {
  int64_t yyy = (((int64_t)1 << b) - 1) << (m + s);
  return x ^ ((x & yyy) >> s);
}

/* The offset inside its tile of the element at tile row r, column col.  A
 * reshape [R, C] -> [R / k, k * C] and an extent-1 axis do not change it. */
static int64_t tile_offset(const kcase *c, int64_t r, int64_t col) {
  int64_t C = c->cols;
  switch (c->layout) {
    case L_MC: {
      int bits = (int)tc_dtype_size(c->dst) * 8;
      int64_t vec = c->vec ? c->vec : 64 / bits;
      int64_t pp = (1024 / bits) / C > 1 ? (1024 / bits) / C : 1;
      int64_t mp = 16 / pp < C / vec ? 16 / pp : C / vec;
      return r * C + triton_ref(vec, pp, mp < 1 ? 1 : mp, r, col);
    }
    case L_TRITON: return r * C + triton_ref(c->vec, c->pp, c->mp, r, col);
    case L_CUTE: return cute_ref(c->cb, c->cm, c->cs, r * C + col);
    case L_XOR: return r * C + ((col / 8) ^ (r % 8)) * 8 + col % 8;
  }
  return -1;
}

/* ---- building --------------------------------------------------------------- */

typedef struct built {
  tc_fusion *f;
  tc_tensor *g, *sh, *out, *dump;
} built;

static built build(const kcase *c, int swap) {
  built b;
  tc_fusion *f = b.f = tc_fusion_new();
  int rank = c->stages ? 3 : 2;
  int64_t shape[3];
  int k = 0;
  if (c->stages) shape[k++] = c->stages;
  shape[k++] = c->rows, shape[k++] = c->cols;
  b.g = tc_input(f, c->src, rank, shape);
  b.sh = c->dst == c->src ? tc_set(f, b.g) : tc_cast(f, b.g, c->dst);
  b.out = tc_set(f, b.sh);
  b.dump = tc_set(f, b.sh);
  OK(f, tc_add_output(f, b.out));
  OK(f, tc_add_output(f, b.dump));
  tc_tensor *sh = b.sh;
  OK(f, tc_set_memory_type(sh, TC_MEM_SHARED));
  /* the shared layout, scheduled on SH's loop and frozen as its allocation */
  int r = rank - 2, col = rank - 1, ca = 0;
  tc_ptype tile_p = TC_BIDX;
  if (c->stages) {
    ca = 1;
    if (!c->stage_serial) {
      OK(f, tc_parallelize(sh, 0, TC_BIDX));
      tile_p = TC_BIDY;
    }
  }
  if (c->tile_rows) {
    OK(f, tc_split(sh, r, c->tile_rows, 1));
    OK(f, tc_parallelize(sh, r, tile_p));
    r++, col++, ca++;
  }
  if (c->pad_rows) OK(f, tc_resize(sh, r, 0, c->pad_rows));
  switch (c->layout) {
    case L_MC: OK(f, tc_swizzle_matrix_core(sh, r, col, c->vec)); break;
    case L_TRITON: OK(f, tc_swizzle_amd(sh, r, col, c->vec, c->pp, c->mp)); break;
    case L_CUTE:
      OK(f, tc_merge(sh, r, col));
      OK(f, tc_swizzle_cute(sh, r, c->cb, c->cm, c->cs));
      break;
    case L_XOR: /* [R, C] -> [R / 8, 8, C / 8, 8], row % 8 ^= chunk */
      OK(f, tc_split(sh, col, 8, 1));
      OK(f, tc_split(sh, r, 8, 1));
      OK(f, tc_swizzle(sh, TC_SWIZZLE_XOR, r + 1, r + 2));
      break;
  }
  if (c->reshape) {
    OK(f, tc_split(sh, r, c->reshape, 1));
    OK(f, tc_merge(sh, r + 1, r + 2));
  }
  if (c->replicate) OK(f, tc_split(sh, r, 1, 0));
  OK(f, tc_set_alloc_to_loop(sh));
  /* the copy and the reads: logical order, `threads` lanes of `per` */
  tc_tensor *o = b.out;
  int orow = rank - 2;
  if (c->tile_rows) {
    OK(f, tc_split(o, orow, c->tile_rows, 1));
    orow++;
  }
  OK(f, tc_merge(o, orow, orow + 1));
  OK(f, tc_split(o, orow, c->per, 1));
  OK(f, tc_split(o, orow, c->threads, 1)); /* [.., rest, TIDx, per] */
  if (c->stages && !c->stage_serial) OK(f, tc_parallelize(o, 0, TC_BIDX));
  if (c->tile_rows) OK(f, tc_parallelize(o, orow - 1, tile_p));
  OK(f, tc_parallelize(o, orow + 1, TC_TIDX));
  OK(f, tc_propagate_transforms(o));
  OK(f, tc_parallelize_all_like(o));
  OK(f, tc_inline_at(sh, ca));
  if (swap) OK(f, tc_swizzle_swap(sh, c->n));
  return b;
}

/* ---- running with a shared-memory dump --------------------------------------- */

static tc_cl *cl;
static const char *no_device;

static tc_knode *find_stmt(tc_knode *n, const tc_tensor *out) {
  if (n->kind == TC_K_STMT) return n->stmt.op->out == out ? n : NULL;
  for (int i = 0; i < n->nbody; i++) {
    tc_knode *s = find_stmt(n->body[i], out);
    if (s) return s;
  }
  return NULL;
}

static bool encloses(const tc_knode *a, const tc_knode *n) {
  for (; n; n = n->parent)
    if (n == a) return true;
  return false;
}

/* Lowers b for OpenCL with DUMP's statement turned into a raw copy of SH's
 * shared memory (see the top of the file) and runs it.  args: G, OUT, DUMP;
 * dump_elems: the elements of the dump buffer. */
static int run_dumped(const char *name, built *b, void **args, size_t dump_elems) {
  tc_kir *k = NULL;
  tc_status st = tc_lower(b->f, TC_TARGET_OPENCL, NULL, &k);
  TC_CHECK(st == TC_OK, "%s: lower: %s", name, tc_fusion_error(b->f));
  if (st) return 0;
  tc_knode *cp = find_stmt(k->root, b->sh), *dn = find_stmt(k->root, b->dump);
  const tc_kalloc *al = tc_kir_alloc_of(k, b->sh);
  TC_CHECK(cp && dn && al, "%s: statements or allocation not found", name);
  int ok = 0;
  if (cp && dn && al) {
    tc_epool *p = k->pool;
    /* the iteration: the block, then the serial loops around both statements */
    const tc_expr *it = tc_e_add(p, k->pvar[0],
                                 tc_e_mulc(p, tc_e_add(p, k->pvar[1], tc_e_mulc(p, k->pvar[2], k->grid[1])),
                                           k->grid[0]));
    tc_knode *loops[16];
    int nl = 0;
    for (tc_knode *n = cp->parent; n && nl < 16; n = n->parent)
      if (n->kind == TC_K_LOOP && encloses(n, dn)) loops[nl++] = n;
    for (int i = nl - 1; i >= 0; i--) it = tc_e_add(p, tc_e_mulc(p, it, loops[i]->loop.extent), loops[i]->loop.var);
    dn->stmt.out_index = tc_simplify(p, tc_e_add(p, tc_e_mulc(p, it, al->elems), dn->stmt.in_index[0]));
    tc_str src;
    tc_str_init(&src);
    tc_print_kernel(&src, &tc_dialect_opencl, k, name);
    tc_rt_buffer bufs[3] = {{0}};
    tc_tensor *ps[3] = {b->g, b->out, b->dump};
    for (int i = 0; i < 3; i++) {
      bufs[i].host = args[i];
      bufs[i].bytes = i == 2 ? dump_elems * tc_dtype_size(ps[i]->dtype) : tc_tensor_bytes(ps[i]);
      bufs[i].copy_back = i > 0;
    }
    tc_launch l = {{0}};
    for (int d = 0; d < 3; d++) l.grid[d] = (size_t)k->grid[d], l.block[d] = (size_t)k->block[d];
    l.dyn_smem = (size_t)k->smem_bytes;
    tc_str err;
    tc_str_init(&err);
    st = tc_cl_run(cl, tc_str_cstr(&src), name, bufs, 3, &l, NULL, &err);
    TC_CHECK(st == TC_OK, "%s: run: %s: %s\n%s", name, tc_status_name(st), tc_str_cstr(&err), tc_str_cstr(&src));
    ok = st == TC_OK;
    tc_str_free(&err);
    tc_str_free(&src);
  }
  tc_kir_free(k);
  return ok;
}

/* ---- values ------------------------------------------------------------------ */

static uint32_t rng = 0x003a03c1u;

static uint32_t next_u32(void) {
  rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
  return rng;
}

static void fill(tc_dtype t, void *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    float v = (float)(next_u32() >> 8) / 16777216.0f * 8.0f - 4.0f;
    switch (t) {
      case TC_F32: ((float *)p)[i] = v; break;
      case TC_F16: ((uint16_t *)p)[i] = tc_f32_to_f16(v); break;
      case TC_BF16: ((uint16_t *)p)[i] = tc_f32_to_bf16(v); break;
      case TC_I32: ((int32_t *)p)[i] = (int32_t)(next_u32() % 2001) - 1000; break;
      case TC_I8: ((int8_t *)p)[i] = (int8_t)(next_u32() % 255 - 127); break;
    }
  }
}

static double read_v(tc_dtype t, const void *p, size_t i) {
  switch (t) {
    case TC_F32: return ((const float *)p)[i];
    case TC_F16: return tc_f16_to_f32(((const uint16_t *)p)[i]);
    case TC_BF16: return tc_bf16_to_f32(((const uint16_t *)p)[i]);
    case TC_I32: return ((const int32_t *)p)[i];
    case TC_I8: return ((const int8_t *)p)[i];
  }
  return 0;
}

/* Writes v converted (round to nearest even) to dtype t. */
static void write_v(tc_dtype t, void *p, size_t i, double v) {
  switch (t) {
    case TC_F32: ((float *)p)[i] = (float)v; break;
    case TC_F16: ((uint16_t *)p)[i] = tc_f32_to_f16((float)v); break;
    case TC_BF16: ((uint16_t *)p)[i] = tc_f32_to_bf16((float)v); break;
    case TC_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case TC_I8: ((int8_t *)p)[i] = (int8_t)v; break;
  }
}

static void sentinel(tc_dtype t, void *p, size_t n) { memset(p, 0x5b, n * tc_dtype_size(t)); }

/* First differing element of two buffers of n elements of size es, or -1. */
static long first_diff(const void *a, const void *b, size_t n, size_t es) {
  const unsigned char *x = a, *y = b;
  for (size_t i = 0; i < n; i++)
    if (memcmp(x + i * es, y + i * es, es) != 0) return (long)i;
  return -1;
}

/* ---- the store-address analysis ------------------------------------------------ */

/* The lowered copy of a swapped fusion stores at base + tidx * n + v: no
 * XOR in out_index, which is linear in the lane and the vector element
 * with strides n and 1 and does not depend on the block or the outer
 * loops; the XOR is in the global read instead.  For the fusion as
 * scheduled, the store has the XOR. */
static void check_store(const kcase *c, built *b, int swapped, int64_t n) {
  tc_kir *k = NULL;
  if (tc_lower(b->f, TC_TARGET_OPENCL, NULL, &k) != TC_OK) {
    TC_CHECK(0, "%s: lower: %s", c->name, tc_fusion_error(b->f));
    return;
  }
  tc_knode *s = find_stmt(k->root, b->sh);
  TC_REQUIRE(s, "%s: no copy statement", c->name);
  int xo = tc_e_count_op(s->stmt.out_index, TC_E_XOR), xi = tc_e_count_op(s->stmt.in_index[0], TC_E_XOR);
  if (!swapped) {
    TC_CHECK(xo > 0, "%s: the store as scheduled has no XOR", c->name);
    tc_kir_free(k);
    return;
  }
  TC_CHECK(xo == 0 && xi > 0, "%s: after the swap the store has %d XORs and the load %d", c->name, xo, xi);
  tc_knode *vloop = n > 1 ? s->parent : NULL, *sloop = n > 1 ? s->parent->parent : s->parent;
  TC_REQUIRE(!vloop || (vloop->kind == TC_K_LOOP && vloop->loop.extent == n), "%s: no loop of %lld around the copy",
             c->name, (long long)n);
  TC_REQUIRE(sloop && sloop->kind == TC_K_LOOP, "%s: no serial loop around the lanes", c->name);
  int64_t elems = tc_kir_alloc_of(k, b->sh)->elems;
  int nv = tc_e_num_vars(k->pool);
  int64_t *vars = tc_xcalloc((size_t)nv + 1, sizeof *vars);
  int64_t T = k->block[0];
  int tid = (int)k->pvar[3]->val, sv = (int)sloop->loop.var->val, vv = vloop ? (int)vloop->loop.var->val : -1;
  int bad = 0;
  for (int other = 0; other < 2 && !bad; other++) {
    /* every other variable (blocks, outer loops) at 0, then at 1 */
    for (int i = 0; i < nv; i++) {
      int64_t lo, hi;
      tc_e_var_range(k->pool, i, &lo, &hi);
      vars[i] = other && hi >= 1 ? 1 : 0;
    }
    for (int64_t si = 0; si < sloop->loop.extent && !bad; si++)
      for (int64_t t = 0; t < T && !bad; t++)
        for (int64_t v = 0; v < n && !bad; v++) {
          vars[sv] = si, vars[tid] = t;
          if (vv >= 0) vars[vv] = v;
          int64_t got = tc_e_eval(s->stmt.out_index, vars), want = (si * T + t) * n + v;
          if (want >= elems) continue; /* past the tile: predicated off */
          if (got != want) bad++;
          TC_CHECK(got == want, "%s: store address at serial %lld, lane %lld, element %lld is %lld, "
                   "want %lld (base + tidx * %lld + v)", c->name, (long long)si, (long long)t, (long long)v,
                   (long long)got, (long long)want, (long long)n);
        }
  }
  free(vars);
  tc_kir_free(k);
}

/* ---- the LDS equality test ------------------------------------------------------ */

static void run_case(const kcase *c) {
  if (!cl) TC_SKIP("%s", no_device);
  size_t nlog = (size_t)((c->stages ? c->stages : 1) * c->rows * c->cols);
  size_t tile = (size_t)tile_elems(c), ndump = tile * (size_t)iterations(c);
  void *G = malloc(nlog * tc_dtype_size(c->src) + 1);
  fill(c->src, G, nlog);
  /* the expected image of shared memory and of OUT */
  void *want_dump = malloc(ndump * tc_dtype_size(c->dst) + 1), *want_out = malloc(nlog * tc_dtype_size(c->dst) + 1);
  sentinel(c->dst, want_dump, ndump);
  for (size_t e = 0; e < nlog; e++) {
    int64_t col = (int64_t)e % c->cols, row = (int64_t)e / c->cols % c->rows;
    int64_t it = c->stages ? (int64_t)e / c->cols / c->rows : c->tile_rows ? row / c->tile_rows : 0;
    int64_t r = c->tile_rows ? row % c->tile_rows : row;
    double v = read_v(c->src, G, e);
    write_v(c->dst, want_out, e, v);
    write_v(c->dst, want_dump, (size_t)(it * (int64_t)tile + tile_offset(c, r, col)), v);
  }
  void *dumps[2];
  for (int swap = 0; swap < 2; swap++) {
    built b = build(c, swap);
    char name[96];
    snprintf(name, sizeof name, "%s_%s", c->name, swap ? "swapped" : "as_scheduled");
    void *out = malloc(nlog * tc_dtype_size(c->dst) + 1);
    dumps[swap] = malloc(ndump * tc_dtype_size(c->dst) + 1);
    sentinel(c->dst, out, nlog);
    sentinel(c->dst, dumps[swap], ndump);
    void *args[3] = {G, out, dumps[swap]};
    if (swap) {
      /* the copy iterates [.., rest, TIDx{threads}, n] */
      int nl = tc_tensor_nloop(b.sh), lane = c->want_n > 1 ? nl - 2 : nl - 1;
      int64_t n = c->want_n > 1 ? tc_tensor_loop_extent(b.sh, nl - 1) : 1;
      TC_CHECK(n == c->want_n && tc_tensor_loop_ptype(b.sh, lane) == TC_TIDX &&
                   tc_tensor_loop_extent(b.sh, lane) == c->threads,
               "%s: swapped loop %s, want %lld lanes of %lld", c->name,
               tc_tensor_describe(b.sh, name, sizeof name), (long long)c->threads, (long long)c->want_n);
      snprintf(name, sizeof name, "%s_swapped", c->name);
    }
    if (run_dumped(name, &b, args, ndump)) {
      size_t es = tc_dtype_size(c->dst);
      long d = first_diff(out, want_out, nlog, es);
      TC_CHECK(d < 0, "%s: OUT element %ld is %g, want %g", name, d, d < 0 ? 0 : read_v(c->dst, out, (size_t)d),
               d < 0 ? 0 : read_v(c->dst, want_out, (size_t)d));
      d = first_diff(dumps[swap], want_dump, ndump, es);
      TC_CHECK(d < 0, "%s: shared memory at %ld holds %g, the layout wants %g", name, d,
               d < 0 ? 0 : read_v(c->dst, dumps[swap], (size_t)d), d < 0 ? 0 : read_v(c->dst, want_dump, (size_t)d));
    }
    check_store(c, &b, swap, c->want_n);
    free(out);
    tc_fusion_free(b.f);
  }
  TC_CHECK(memcmp(dumps[0], dumps[1], ndump * tc_dtype_size(c->dst)) == 0,
           "%s: shared memory differs between the copy as scheduled and the swapped one", c->name);
  free(dumps[0]), free(dumps[1]);
  free(G), free(want_dump), free(want_out);
}

static void test_lds_equal(void) {
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) run_case(&cases[i]);
}

/* ---- refusals ------------------------------------------------------------------ */

static void test_refusals(void) {
  const kcase *c = &cases[0];
  built b = build(c, 0);
  tc_fusion *f = b.f;
  TC_CHECK(tc_swizzle_swap(b.g, 0) == TC_ERR_SCHEDULE && strstr(tc_fusion_error(f), "fusion input"),
           "input: %s", tc_fusion_error(f));
  TC_CHECK(tc_swizzle_swap(b.out, 0) == TC_ERR_SCHEDULE && strstr(tc_fusion_error(f), "global memory"),
           "global: %s", tc_fusion_error(f));
  TC_CHECK(tc_swizzle_swap(b.sh, -1) == TC_ERR_ARGUMENT, "n = -1: %s", tc_fusion_error(f));
  TC_CHECK(tc_swizzle_swap(b.sh, 3) == TC_ERR_SCHEDULE && strstr(tc_fusion_error(f), "do not divide"),
           "n = 3: %s", tc_fusion_error(f));
  TC_STR_LOCAL(why);
  TC_CHECK(tc_swizzle_swap_legal(b.sh, &why), "legal: %s", tc_str_cstr(&why));
  OK(f, tc_swizzle_swap(b.sh, 0));
  char d1[256], d2[256];
  tc_tensor_describe(b.sh, d1, sizeof d1);
  int nx = f->g.nxf;
  OK(f, tc_swizzle_swap(b.sh, 0)); /* already in allocation order: unchanged */
  TC_CHECK(strcmp(d1, tc_tensor_describe(b.sh, d2, sizeof d2)) == 0 && f->g.nxf == nx, "second swap: %s", d2);
  TC_CHECK(!tc_swizzle_swap_legal(b.sh, &why) && strstr(tc_str_cstr(&why), "already"), "legal again: %s", tc_str_cstr(&why));
  tc_fusion_free(f);

  /* no swizzle; a copy from shared memory; an op that is not a copy; a
   * layout that mixes rows; lanes on TIDy */
  for (int how = 0; how < 5; how++) {
    f = tc_fusion_new();
    int64_t shape[2] = {32, 64};
    tc_tensor *g = tc_input(f, TC_F16, 2, shape);
    tc_tensor *s = how == 2 ? tc_unary(f, TC_NEG, g) : tc_set(f, g);
    tc_tensor *s2 = how == 1 ? tc_set(f, s) : s;
    OK(f, tc_add_output(f, tc_set(f, s2)));
    OK(f, tc_set_memory_type(s, TC_MEM_SHARED));
    if (how == 1) OK(f, tc_set_memory_type(s2, TC_MEM_SHARED));
    if (how != 0 && how != 3) OK(f, tc_swizzle_amd(s2, 0, 1, 8, 1, 4));
    if (how == 3) { /* XOR of a column chunk into the row */
      OK(f, tc_split(s2, 1, 8, 1));
      OK(f, tc_split(s2, 0, 8, 1));
      OK(f, tc_swizzle(s2, TC_SWIZZLE_XOR, 2, 1));
    }
    OK(f, tc_set_alloc_to_loop(s2));
    if (how == 3) { /* back to a plain [32, 64] loop is not needed: the layout check comes first */ }
    OK(f, tc_parallelize(s2, 0, how == 4 ? TC_TIDY : TC_SERIAL));
    const char *want[] = {"no swizzle", "not global memory", "not made by a copy", "mixes rows", "TIDy"};
    tc_status st = tc_swizzle_swap(s2, 0);
    TC_CHECK(st == TC_ERR_SCHEDULE && strstr(tc_fusion_error(f), want[how]), "case %d: %s: %s", how,
             tc_status_name(st), tc_fusion_error(f));
    TC_CHECK(!tc_swizzle_swap_legal(s2, &why) && strstr(tc_str_cstr(&why), want[how]), "legal %d: %s", how, tc_str_cstr(&why));
    tc_fusion_free(f);
  }
}

/* ---- automatic application and tc_compile for HIP ------------------------------- */

/* Does some store NAME[idx] = ... in src have '^' in idx?  -1: no store of
 * that form found (a dialect that stores through a function). */
static int store_has_xor(const char *src, const char *name) {
  char pat[32];
  snprintf(pat, sizeof pat, "%s[", name);
  int found = -1;
  for (const char *p = strstr(src, pat); p; p = strstr(p + 1, pat)) {
    if (p > src && (p[-1] == '_' || (p[-1] >= '0' && p[-1] <= '9') || (p[-1] >= 'A' && p[-1] <= 'Z') ||
                    (p[-1] >= 'a' && p[-1] <= 'z')))
      continue;
    const char *q = p + strlen(pat);
    int depth = 1, has = 0;
    for (; *q && depth; q++) {
      if (*q == '[') depth++;
      else if (*q == ']') depth--;
      if (depth && *q == '^') has = 1;
    }
    while (*q == ' ') q++;
    if (q[0] != '=' || q[1] == '=') continue;
    if (found < 0) found = 0;
    if (has) found = 1;
  }
  return found;
}

static void test_auto_and_undo(void) {
  built b = build(&cases[0], 0);
  tc_fusion *f = b.f;
  char before[256], after[256];
  tc_tensor_describe(b.sh, before, sizeof before);
  int naxes = f->g.naxes, nxf = f->g.nxf;
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "auto_k"};
  tc_status st;
  tc_kernel *k0 = tc_compile(f, &o, &st);
  TC_REQUIRE(k0, "compile: %s", tc_fusion_error(f));
  TC_CHECK(store_has_xor(tc_kernel_source(k0), tc_tensor_name(b.sh)) == 1, "OpenCL is not swapped:\n%s",
           tc_kernel_source(k0));
  tc_swap_undo *u = NULL;
  int n = tc_swizzle_swap_auto(f, &u);
  TC_CHECK(n == 1, "%d copies swapped", n);
  TC_CHECK(strcmp(before, tc_tensor_describe(b.sh, after, sizeof after)) != 0, "the swap changed nothing");
  tc_kir *k = NULL;
  TC_CHECK(tc_lower(f, TC_TARGET_OPENCL, NULL, &k) == TC_OK, "lower: %s", tc_fusion_error(f));
  tc_knode *s = k ? find_stmt(k->root, b.sh) : NULL;
  TC_CHECK(s && tc_e_count_op(s->stmt.out_index, TC_E_XOR) == 0, "the auto-swapped store has an XOR");
  tc_kir_free(k);
  tc_swizzle_swap_restore(f, u);
  TC_CHECK(strcmp(before, tc_tensor_describe(b.sh, after, sizeof after)) == 0, "undo: %s, was %s", after, before);
  TC_CHECK(f->g.naxes == naxes && f->g.nxf == nxf, "undo left %d axes, %d transforms (was %d, %d)", f->g.naxes,
           f->g.nxf, naxes, nxf);
  setenv("TILEC_CACHE", "0", 1);
  tc_kernel *k1 = tc_compile(f, &o, &st);
  unsetenv("TILEC_CACHE");
  TC_CHECK(k1 && strcmp(tc_kernel_source(k0), tc_kernel_source(k1)) == 0, "the kernel changed after the undo");
  tc_kernel_free(k0), tc_kernel_free(k1);
  /* the undo left the copy as scheduled: the swap applies again */
  n = tc_swizzle_swap_auto(f, &u);
  TC_CHECK(n == 1, "second auto: %d", n);
  tc_swizzle_swap_restore(f, u);
  TC_CHECK(tc_swizzle_swap_env_enabled(), "enabled by default");
  setenv("TILEC_SWIZZLE_SWAP", "off", 1);
  TC_CHECK(!tc_swizzle_swap_env_enabled(), "TILEC_SWIZZLE_SWAP=off");
  unsetenv("TILEC_SWIZZLE_SWAP");
  tc_fusion_free(f);
}

static void test_hip_default(void) {
  unsetenv("TILEC_SWIZZLE_SWAP");
  built b = build(&cases[0], 0);
  tc_fusion *f = b.f;
  tc_compile_options o = {TC_TARGET_HIP, NULL, "swap_k"}; /* the default arch */
  tc_status st;
  tc_kernel *kd = tc_compile(f, &o, &st);
  if (!kd && st == TC_ERR_UNSUPPORTED) {
    char why[512];
    snprintf(why, sizeof why, "%s", tc_fusion_error(f));
    tc_fusion_free(f);
    TC_SKIP("TC_TARGET_HIP is unsupported in this build (%s)", why);
  }
  TC_REQUIRE(kd, "HIP compile: %s: %s", tc_status_name(st), tc_fusion_error(f));
  char before[256], after[256];
  tc_tensor_describe(b.sh, before, sizeof before);
  setenv("TILEC_SWIZZLE_SWAP", "0", 1);
  tc_kernel *koff = tc_compile(f, &o, &st);
  unsetenv("TILEC_SWIZZLE_SWAP");
  TC_REQUIRE(koff, "HIP compile, TILEC_SWIZZLE_SWAP=0: %s", tc_fusion_error(f));
  TC_CHECK(strcmp(before, tc_tensor_describe(b.sh, after, sizeof after)) == 0, "tc_compile changed the schedule");
  /* the default is the explicitly swapped fusion; off is the fusion as
   * scheduled (the explicit swap needs no automatic one: compile it with
   * the switch off, which also checks the cache keeps the two apart) */
  built bs = build(&cases[0], 1);
  setenv("TILEC_SWIZZLE_SWAP", "off", 1);
  tc_kernel *kexp = tc_compile(bs.f, &o, &st);
  unsetenv("TILEC_SWIZZLE_SWAP");
  TC_REQUIRE(kexp, "HIP compile of the swapped fusion: %s", tc_fusion_error(bs.f));
  const char *sd = tc_kernel_source(kd), *soff = tc_kernel_source(koff);
  TC_CHECK(strcmp(sd, tc_kernel_source(kexp)) == 0, "HIP default is not the swapped kernel:\n%s\n----\n%s", sd,
           tc_kernel_source(kexp));
  TC_CHECK(strcmp(sd, soff) != 0, "HIP with the swap off is the swapped kernel");
  int xd = store_has_xor(sd, tc_tensor_name(b.sh)), xoff = store_has_xor(soff, tc_tensor_name(b.sh));
  if (xd >= 0 && xoff >= 0) TC_CHECK(xd == 0 && xoff == 1, "stores with XOR: default %d, off %d", xd, xoff);
  /* the device compiler takes the swapped kernel (where hipcc exists) */
  st = tc_kernel_build(kd, NULL);
  if (st == TC_ERR_UNSUPPORTED || st == TC_ERR_NO_DEVICE)
    printf("  note test_hip_default: no HIP compiler to build with (%s)\n", tc_kernel_error(kd));
  else
    TC_CHECK(st == TC_OK, "hipcc: %s: %s", tc_status_name(st), tc_kernel_error(kd));
  /* again, from the kernel cache when it is on: the keys differ */
  tc_kernel *kd2 = tc_compile(f, &o, &st);
  TC_CHECK(kd2 && strcmp(tc_kernel_source(kd2), sd) == 0, "second default compile differs");
  tc_kernel_free(kd), tc_kernel_free(koff), tc_kernel_free(kexp), tc_kernel_free(kd2);
  tc_fusion_free(bs.f);
  tc_fusion_free(f);
}

int main(void) {
  tc_str err;
  tc_str_init(&err);
  if (tc_cl_open(NULL, &cl, &err) != TC_OK) {
    static char why[512];
    snprintf(why, sizeof why, "no OpenCL device: %s", tc_str_cstr(&err));
    no_device = why;
    cl = NULL;
  }
  tc_str_free(&err);
  TC_RUN(test_lds_equal);
  TC_RUN(test_refusals);
  TC_RUN(test_auto_and_undo);
  TC_RUN(test_hip_default);
  if (cl) tc_cl_close(cl);
  TC_MAIN_END();
}
