/* fuzz_sched.c - libFuzzer harness for the scheduling API: the input is a
 * small fusion (one or two inputs of rank 1 to 3, a chain of ops, an
 * output) and then a sequence of API calls (split, merge, reorder,
 * swizzles, resize, parallelize, memory and ld/st types, inlining,
 * caching, propagation, loop/allocation domains, abstract tensors, layout
 * queries, new ops: also reductions over fuzzed axes, Welford mean and
 * variance, broadcasting binary ops, scalar ops and scalar inputs) with
 * fuzzed arguments on fuzzed tensors.  Every call must
 * succeed or fail with a message in tc_fusion_error; then tc_compile for
 * a fuzzed target must give a kernel with a source or fail with a
 * message. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/tilec.h"
#include "fuzz_util.h"

#define MAX_T 24

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  setenv("TILEC_CACHE", "0", 1);
  return 0;
}

typedef struct state {
  tc_fusion *f;
  tc_tensor *t[MAX_T];
  int nt;
  tc_abstract_tensor *abs;
} state;

static void add(state *s, tc_tensor *t, const char *what) {
  FZ_LOG("%s: %s", what, t ? tc_tensor_name(t) : tc_fusion_error(s->f));
  if (!t) {
    FZ_ASSERT(tc_fusion_error(s->f)[0], "%s returned NULL without a message", what);
    return;
  }
  if (s->nt < MAX_T) s->t[s->nt++] = t;
}

static void status(state *s, tc_status st, const char *what) {
  FZ_LOG("%s: %s %s", what, tc_status_name(st), st ? tc_fusion_error(s->f) : "");
  if (st != TC_OK)
    FZ_ASSERT(tc_fusion_error(s->f)[0], "%s failed (%s) without a message", what,
              tc_status_name(st));
}

static tc_tensor *pick(state *s, fz_in *in) { return s->t[fz_byte(in) % s->nt]; }
static int pos(fz_in *in) { return (int)fz_range(in, -5, 6); }

static void one_call(state *s, fz_in *in) {
  tc_tensor *t = pick(s, in);
  unsigned op = fz_byte(in) % 34;
  int a = pos(in), b = pos(in);
  switch (op) {
    case 0: status(s, tc_split(t, a, fz_range(in, -2, 20), b & 1), "tc_split"); break;
    case 1: status(s, tc_merge(t, a, b), "tc_merge"); break;
    case 2: {
      int n = (int)fz_range(in, 0, 3), o[3], p[3];
      for (int i = 0; i < n; i++) o[i] = pos(in), p[i] = pos(in);
      status(s, tc_reorder(t, n, o, p), "tc_reorder");
      break;
    }
    case 3: status(s, tc_swizzle(t, TC_SWIZZLE_XOR, a, b), "tc_swizzle"); break;
    case 4:
      status(s, tc_swizzle_cute(t, a, (int)fz_range(in, -1, 4), (int)fz_range(in, -1, 4),
                                (int)fz_range(in, -1, 4)),
             "tc_swizzle_cute");
      break;
    case 5:
      status(s, tc_resize(t, a, fz_range(in, -4, 8), fz_range(in, -4, 8)), "tc_resize");
      break;
    case 6:
      status(s, tc_parallelize(t, a, (tc_ptype)fz_range(in, 0, 12)), "tc_parallelize");
      break;
    case 7:
      status(s, tc_set_memory_type(t, (tc_memtype)fz_range(in, 0, 4)), "tc_set_memory_type");
      break;
    case 8:
      status(s, tc_set_ldst_type(t, (tc_ldst_type)fz_range(in, 0, 9)), "tc_set_ldst_type");
      break;
    case 9: status(s, tc_inline_at(t, a), "tc_inline_at"); break;
    case 10: status(s, tc_compute_at(t, pick(s, in), a), "tc_compute_at"); break;
    case 11: status(s, tc_inline_most(s->f), "tc_inline_most"); break;
    case 12: status(s, tc_inline_all_at(s->f, a), "tc_inline_all_at"); break;
    case 13: status(s, tc_set_tmem_dimsep(t, a), "tc_set_tmem_dimsep"); break;
    case 14: status(s, tc_set_alloc_to_loop(t), "tc_set_alloc_to_loop"); break;
    case 15: add(s, tc_cache_after(t), "tc_cache_after"); break;
    case 16: add(s, tc_cache_before(t), "tc_cache_before"); break;
    case 17: status(s, tc_propagate_transforms(t), "tc_propagate_transforms"); break;
    case 18: status(s, tc_parallelize_all_like(t), "tc_parallelize_all_like"); break;
    case 19:
    case 20: {
      int n = (int)fz_range(in, 0, 4), ids[4];
      for (int i = 0; i < n; i++) ids[i] = (int)fz_range(in, -1, 40);
      if (op == 19) status(s, tc_set_loop_domain(t, n, ids), "tc_set_loop_domain");
      else status(s, tc_set_alloc_domain(t, n, ids), "tc_set_alloc_domain");
      break;
    }
    case 21:
      tc_abstract_tensor_free(s->abs);
      s->abs = tc_abstract_tensor_new(t);
      break;
    case 22:
      if (s->abs)
        status(s, tc_abstract_split(s->abs, a, fz_range(in, -2, 20), b & 1), "tc_abstract_split");
      break;
    case 23:
      if (s->abs) status(s, tc_abstract_merge(s->abs, a, b), "tc_abstract_merge");
      break;
    case 24:
      if (s->abs) {
        int n = (int)fz_range(in, 0, 3), o[3], p[3];
        for (int i = 0; i < n; i++) o[i] = pos(in), p[i] = pos(in);
        status(s, tc_abstract_reorder(s->abs, n, o, p), "tc_abstract_reorder");
      }
      break;
    case 25:
      if (s->abs) {
        tc_abstract_tensor *c = tc_abstract_tensor_copy(s->abs);
        (void)tc_abstract_tensor_axis(c, a);
        (void)tc_abstract_tensor_extent(c, b);
        status(s, tc_set_loop_domain(t, tc_abstract_tensor_rank(c), tc_abstract_tensor_axes(c)),
               "tc_set_loop_domain (abstract)");
        tc_abstract_tensor_free(c);
      }
      break;
    case 26: {
      static const tc_tma_swizzle sw[] = {TC_TMA_SWIZZLE_NONE, TC_TMA_SWIZZLE_32B,
                                          TC_TMA_SWIZZLE_64B, TC_TMA_SWIZZLE_128B, 16};
      (void)tc_tma_swizzle_for(t);
      status(s, tc_schedule_tma_swizzle(t, sw[fz_byte(in) % 5]), "tc_schedule_tma_swizzle");
      break;
    }
    case 27:
      status(s, tc_swizzle_amd(t, a, b, (int)fz_range(in, -1, 8), (int)fz_range(in, -1, 4),
                               (int)fz_range(in, -1, 8)),
             "tc_swizzle_amd");
      break;
    case 28:
      status(s, tc_swizzle_matrix_core(t, a, b, (int)fz_range(in, -1, 8)),
             "tc_swizzle_matrix_core");
      break;
    case 29: {
      tc_layout_parts parts;
      tc_status st = tc_layout_split(t, &parts);
      status(s, st, "tc_layout_split");
      if (st == TC_OK) {
        int64_t coords[16] = {0}, ac[16], rc[16], col;
        for (int i = 0; i < tc_tensor_ndims(t); i++) coords[i] = fz_range(in, -1, 20);
        status(s, tc_layout_eval(t, coords, ac, rc, &col), "tc_layout_eval");
      }
      break;
    }
    case 30: status(s, tc_swizzle_swap(t, (int)fz_range(in, -1, 8)), "tc_swizzle_swap"); break;
    case 31: {
      int ax = tc_tensor_loop_axis(t, a);
      (void)tc_tensor_alloc_axis(t, b);
      (void)tc_tensor_nalloc(t);
      (void)tc_tensor_loop_extent(t, a);
      (void)tc_tensor_loop_ptype(t, b);
      (void)tc_tensor_extent(t, a);
      FZ_ASSERT(ax >= -1, "loop axis id %d", ax);
      break;
    }
    case 32: {
      tc_tensor *o = pick(s, in);
      unsigned k = fz_byte(in) % 8;
      if (k == 0) add(s, tc_unary(s->f, (tc_unary_op)fz_range(in, 0, 11), o), "tc_unary");
      else if (k == 1) add(s, tc_binary(s->f, (tc_binary_op)fz_range(in, 0, 6), o, t), "tc_binary");
      else if (k == 2) add(s, tc_cast(s->f, o, (tc_dtype)fz_range(in, 0, 5)), "tc_cast");
      else if (k == 3) add(s, tc_set(s->f, o), "tc_set");
      else if (k == 4) { /* op 3 and axes out of range or repeated are refused */
        tc_reduce_op rop = (tc_reduce_op)fz_range(in, 0, 3);
        int n = (int)fz_range(in, -1, 3), axes[3];
        for (int i = 0; i < 3; i++) axes[i] = (int)fz_range(in, -4, 3);
        add(s, tc_reduce(s->f, rop, o, n, axes), "tc_reduce");
      } else if (k == 6) { /* the state and its mean and variance */
        tc_tensor *mean = NULL, *var = NULL;
        int n = (int)fz_range(in, -1, 3), axes[3];
        for (int i = 0; i < 3; i++) axes[i] = (int)fz_range(in, -4, 3);
        add(s, tc_welford(s->f, o, n, axes, &mean, &var), "tc_welford");
        if (mean) add(s, mean, "tc_welford mean");
        if (var) add(s, var, "tc_welford var");
      } else if (k == 7) { /* a scalar input on either side of a binary op */
        static const char *names[] = {"eps", "scale", "2x", ""};
        tc_tensor *sc = tc_scalar_input(s->f, names[fz_byte(in) % 4], (tc_dtype)fz_range(in, 0, 5));
        add(s, sc, "tc_scalar_input");
        if (sc) {
          tc_binary_op bop = (tc_binary_op)fz_range(in, 0, 6);
          add(s, fz_byte(in) & 1 ? tc_binary(s->f, bop, sc, o) : tc_binary(s->f, bop, o, sc), "tc_binary");
        }
      } else {
        static const double v[] = {0, -0.0, 1.5, -3, 1e-5, 2147483648.0, NAN, INFINITY, 7};
        tc_binary_op bop = (tc_binary_op)fz_range(in, 0, 6);
        add(s, tc_binary_scalar(s->f, bop, o, v[fz_byte(in) % 9]), "tc_binary_scalar");
      }
      break;
    }
    default: status(s, tc_add_output(s->f, t), "tc_add_output"); break;
  }
  char buf[512];
  tc_tensor_describe(t, buf, sizeof buf);
  FZ_ASSERT(memchr(buf, 0, sizeof buf), "describe: no terminator");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_in in = {data, size};
  state s;
  memset(&s, 0, sizeof s);
  s.f = tc_fusion_new();
  int rank = (int)fz_range(&in, 1, 3);
  int64_t shape[3];
  for (int i = 0; i < rank; i++) shape[i] = fz_range(&in, 1, 16);
  tc_dtype dt = (tc_dtype)fz_range(&in, 0, 4);
  add(&s, tc_input(s.f, dt, rank, shape), "tc_input");
  if (fz_byte(&in) & 1) add(&s, tc_input(s.f, dt, rank, shape), "tc_input");
  /* a chain of ops on the last tensor, and an output */
  int nops = (int)fz_range(&in, 1, 3);
  for (int i = 0; i < nops; i++) {
    tc_tensor *last = s.t[s.nt - 1];
    unsigned k = fz_byte(&in) % 5;
    if (k == 0) add(&s, tc_set(s.f, last), "tc_set");
    else if (k == 1) add(&s, tc_unary(s.f, (tc_unary_op)fz_range(&in, 0, 10), last), "tc_unary");
    else if (k == 2)
      add(&s, tc_binary(s.f, (tc_binary_op)fz_range(&in, 0, 5), last, s.t[0]), "tc_binary");
    else if (k == 3) add(&s, tc_cast(s.f, last, (tc_dtype)fz_range(&in, 0, 4)), "tc_cast");
    else {
      int perm[3] = {0, 1, 2};
      if (rank > 1) perm[0] = 1, perm[1] = 0;
      add(&s, tc_permute(s.f, last, perm), "tc_permute");
    }
  }
  status(&s, tc_add_output(s.f, s.t[s.nt - 1]), "tc_add_output");
  unsigned tflags = fz_byte(&in);
  int ncalls = 0;
  while (in.n > 0 && ncalls++ < 40) one_call(&s, &in);
  tc_abstract_tensor_free(s.abs);

  static const char *archs[] = {NULL, "sm_80", "sm_90a", "sm_100a", "gfx90a", "bogus"};
  tc_compile_options opt;
  memset(&opt, 0, sizeof opt);
  opt.target = (tc_target)(tflags % 3);
  opt.arch = archs[(tflags >> 2) % 6];
  tc_status st = TC_OK;
  tc_kernel *k = tc_compile(s.f, &opt, &st);
  FZ_LOG("tc_compile (%s): %s %s", tc_target_name(opt.target), tc_status_name(st),
         k ? "" : tc_fusion_error(s.f));
  if (k) {
    FZ_ASSERT(st == TC_OK, "a kernel with status %s", tc_status_name(st));
    const char *src = tc_kernel_source(k);
    FZ_ASSERT(src && src[0], "a kernel without a source");
    int64_t grid[3], block[3];
    tc_kernel_launch_dims(k, grid, block);
    for (int i = 0; i < tc_kernel_nparams(k); i++) (void)tc_kernel_param_bytes(k, i);
    tc_kernel_free(k);
  } else {
    FZ_ASSERT(st != TC_OK, "tc_compile returned NULL with TC_OK");
    FZ_ASSERT(tc_fusion_error(s.f)[0], "tc_compile failed (%s) without a message",
              tc_status_name(st));
  }
  tc_fusion_free(s.f);
  return 0;
}
