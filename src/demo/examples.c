/* examples.c - the example kernels and the run-and-verify helper shared by
 * `tilec demo`, the tests and the benchmarks. */
#include "examples.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/fusion.h"
#include "../runtime/host.h"

/* ---- the allocation rules: gmem -> shared -> gmem copies of a [2, 4] float
 * tensor, the six schedules of nvFuser's tensor-memory tutorial
 * (docs/tutorial.md section 3) ---- */

enum { INL = 1, BIDX1 = 2, TIDX0 = 4 };

static tc_fusion *gsg_copy(int how) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {2, 4};
  tc_tensor *tv0 = tc_input(f, TC_F32, 2, shape);
  tc_tensor *tv1 = tc_set(f, tv0);
  tc_tensor *tv2 = tc_set(f, tv1);
  tc_add_output(f, tv2);
  tc_set_memory_type(tv1, TC_MEM_SHARED);
  if (how & INL) tc_inline_at(tv1, 1);
  if (how & TIDX0) tc_parallelize(tv1, 0, TC_TIDX), tc_parallelize(tv2, 0, TC_TIDX);
  if (how & BIDX1) tc_parallelize(tv1, 1, TC_BIDX), tc_parallelize(tv2, 1, TC_BIDX);
  return f;
}

static tc_fusion *gsg1(void) { return gsg_copy(0); }
static tc_fusion *gsg2(void) { return gsg_copy(BIDX1); }
static tc_fusion *gsg3(void) { return gsg_copy(INL); }
static tc_fusion *gsg4(void) { return gsg_copy(INL | BIDX1); }
static tc_fusion *gsg5(void) { return gsg_copy(INL | TIDX0); }
static tc_fusion *gsg6(void) { return gsg_copy(INL | TIDX0 | BIDX1); }

/* ---- pointwise fusions with a 2-D tile: [Yo*Xo](BIDx), Yi, Xi(TIDx) ----- */

void tc_example_tile_2d(tc_fusion *f, tc_tensor *out, int64_t ty, int64_t tx) {
  int from[2] = {1, 2}, to[2] = {2, 1};
  tc_split(out, 0, ty, 1);
  tc_split(out, 2, tx, 1);
  tc_reorder(out, 2, from, to);
  tc_merge(out, 0, 1);
  tc_parallelize(out, 0, TC_BIDX);
  tc_parallelize(out, 2, TC_TIDX);
  tc_propagate_transforms(out);
  tc_parallelize_all_like(out);
  tc_inline_most(f);
}

static tc_fusion *pointwise_fma(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {100, 75};
  tc_tensor *a = tc_input(f, TC_F32, 2, shape);
  tc_tensor *b = tc_input(f, TC_F32, 2, shape);
  tc_tensor *c = tc_input(f, TC_F32, 2, shape);
  tc_tensor *out = tc_binary(f, TC_ADD, tc_binary(f, TC_MUL, a, b), c);
  tc_add_output(f, out);
  tc_example_tile_2d(f, out, 8, 32);
  return f;
}

static tc_fusion *pointwise_relu(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {37, 130};
  tc_tensor *a = tc_input(f, TC_F32, 2, shape);
  tc_tensor *out = tc_unary(f, TC_RELU, a);
  tc_add_output(f, out);
  tc_example_tile_2d(f, out, 4, 64);
  return f;
}

static tc_fusion *cast_to(tc_dtype t) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {50, 33};
  tc_tensor *a = tc_input(f, TC_F32, 2, shape);
  tc_tensor *out = tc_cast(f, tc_binary(f, TC_MUL, a, a), t);
  tc_add_output(f, out);
  tc_example_tile_2d(f, out, 3, 16);
  return f;
}

static tc_fusion *cast_f16(void) { return cast_to(TC_F16); }
static tc_fusion *cast_bf16(void) { return cast_to(TC_BF16); }

/* ---- tiled transpose through shared memory ------------------------------
 * T1 = set(T0) in shared memory, loaded along T0's rows (TIDx on M);
 * T2 = permute(T1) stored along T2's rows (TIDx on N); 16 x 16 tiles. */
static tc_fusion *transpose(int swizzle) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {67, 45}; /* [N, M], not multiples of the tile */
  int perm[2] = {1, 0};
  tc_tensor *t0 = tc_input(f, TC_F32, 2, shape);
  tc_tensor *t1 = tc_set(f, t0);
  tc_tensor *t2 = tc_permute(f, t1, perm); /* [M, N] */
  tc_add_output(f, t2);
  tc_set_memory_type(t1, TC_MEM_SHARED);
  int from[2] = {1, 2}, to[2] = {2, 1};
  tc_split(t2, 0, 16, 1);
  tc_split(t2, 2, 16, 1);
  tc_reorder(t2, 2, from, to); /* [Mo, No, Mi, Ni] */
  tc_propagate_transforms(t2);
  int swap_from[2] = {2, 3}, swap_to[2] = {3, 2};
  tc_reorder(t1, 2, swap_from, swap_to); /* T1: [Mo, No, Ni, Mi] */
  if (swizzle) tc_swizzle(t1, TC_SWIZZLE_XOR, 2, 3); /* Mi ^= Ni in the shared layout */
  tc_parallelize(t2, 0, TC_BIDY), tc_parallelize(t2, 1, TC_BIDX);
  tc_parallelize(t2, 2, TC_TIDY), tc_parallelize(t2, 3, TC_TIDX);
  tc_parallelize(t1, 0, TC_BIDY), tc_parallelize(t1, 1, TC_BIDX);
  tc_parallelize(t1, 2, TC_TIDY), tc_parallelize(t1, 3, TC_TIDX);
  tc_inline_at(t1, 2);
  return f;
}

static tc_fusion *transpose_plain(void) { return transpose(0); }
static tc_fusion *transpose_swizzled(void) { return transpose(1); }

/* relu(A @ B + bias): the matmul and its epilogue as one kernel, the
 * schedule the matmul scheduler's (tc_schedule_auto). */
static tc_fusion *matmul_bias_relu(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t sa[2] = {67, 33}, sb[2] = {33, 45}, sn = 45;
  tc_tensor *a = tc_input(f, TC_F32, 2, sa), *b = tc_input(f, TC_F32, 2, sb);
  tc_tensor *bias = tc_input(f, TC_F32, 1, &sn);
  bool is_new[2] = {true, false};
  tc_tensor *y = tc_matmul(f, a, b);
  y = tc_unary(f, TC_RELU, tc_binary(f, TC_ADD, y, tc_broadcast(f, bias, 2, is_new)));
  tc_add_output(f, y);
  tc_schedule_auto(f, TC_TARGET_OPENCL, NULL);
  return f;
}

static const tc_example examples[] = {
    {"gsg_copy_1", "copy through shared memory: no inlining, no parallelization", 32, gsg1},
    {"gsg_copy_2", "copy through shared memory: BIDx on axis 1", 8, gsg2},
    {"gsg_copy_3", "copy through shared memory: inline at 1", 16, gsg3},
    {"gsg_copy_4", "copy through shared memory: inline at 1, BIDx on axis 1", 4, gsg4},
    {"gsg_copy_5", "copy through shared memory: inline at 1, TIDx on axis 0", 32, gsg5},
    {"gsg_copy_6", "copy through shared memory: inline at 1, TIDx axis 0, BIDx axis 1", 8, gsg6},
    {"pointwise_fma", "a*b+c on [100,75] f32, 8x32 tiles", -1, pointwise_fma},
    {"pointwise_relu", "relu on [37,130] f32, 4x64 tiles", -1, pointwise_relu},
    {"cast_f16", "(a*a) cast to f16 on [50,33], 3x16 tiles", -1, cast_f16},
    {"cast_bf16", "(a*a) cast to bf16 on [50,33], 3x16 tiles", -1, cast_bf16},
    {"transpose", "[67,45] transpose through shared memory, 16x16 tiles", -1, transpose_plain},
    {"transpose_xor", "the same with an XOR-swizzled shared tile", -1, transpose_swizzled},
    {"matmul_bias_relu", "relu(A @ B + bias), [67,33] x [33,45] f32: one kernel, 64x64 tiles of 4x4 "
     "FMA accumulators per thread, A and B tiles in shared memory", 64 * 8 * 4 * 2, matmul_bias_relu},
};

int tc_example_count(void) { return (int)(sizeof examples / sizeof *examples); }

const tc_example *tc_example_get(int i) {
  return i >= 0 && i < tc_example_count() ? &examples[i] : NULL;
}

const tc_example *tc_example_find(const char *name) {
  for (int i = 0; i < tc_example_count(); i++)
    if (strcmp(examples[i].name, name) == 0) return &examples[i];
  return NULL;
}

/* ---- parameters and comparison ------------------------------------------ */

static int nparams(const tc_fusion *f) { return f->ninputs + f->noutputs; }

static tc_tensor *param(const tc_fusion *f, int i) {
  return i < f->ninputs ? f->inputs[i] : f->outputs[i - f->ninputs];
}

static unsigned next_rand(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (*s >> 8) & 0xffffffu;
}

void **tc_params_alloc(tc_fusion *f, unsigned seed) {
  int n = nparams(f);
  void **bufs = tc_xcalloc((size_t)n + 1, sizeof *bufs);
  for (int i = 0; i < n; i++) {
    tc_tensor *t = param(f, i);
    size_t bytes = tc_tensor_bytes(t), cnt = bytes / tc_dtype_size(t->dtype);
    bufs[i] = tc_xcalloc(bytes, 1);
    if (i >= f->ninputs) continue;
    unsigned s = seed * 7919u + (unsigned)i;
    for (size_t e = 0; e < cnt; e++) {
      float v = (float)next_rand(&s) / 16777216.0f * 4.0f - 2.0f;
      int iv = (int)(next_rand(&s) % 101) - 50;
      switch (t->dtype) {
        case TC_F32: ((float *)bufs[i])[e] = v; break;
        case TC_F16: ((uint16_t *)bufs[i])[e] = tc_f32_to_f16(v); break;
        case TC_BF16: ((uint16_t *)bufs[i])[e] = tc_f32_to_bf16(v); break;
        case TC_I32: ((int32_t *)bufs[i])[e] = iv; break;
        case TC_I8: ((int8_t *)bufs[i])[e] = (int8_t)iv; break;
      }
    }
  }
  return bufs;
}

void tc_params_free(tc_fusion *f, void **bufs) {
  if (!bufs) return;
  for (int i = 0; i < nparams(f); i++) free(bufs[i]);
  free(bufs);
}

long tc_outputs_compare(tc_fusion *f, void *const *got, void *const *want, double *max_err,
                        tc_str *msg) {
  long bad = 0;
  *max_err = 0;
  if (msg) tc_str_clear(msg);
  for (int o = 0; o < f->noutputs; o++) {
    tc_tensor *t = f->outputs[o];
    int p = f->ninputs + o;
    size_t cnt = tc_tensor_bytes(t) / tc_dtype_size(t->dtype);
    double rtol = t->dtype == TC_F32 ? 1e-5 : t->dtype == TC_F16 ? 1e-3 : t->dtype == TC_BF16 ? 8e-3 : 0;
    for (size_t e = 0; e < cnt; e++) {
      double g = tc_host_read(t->dtype, got[p], e), w = tc_host_read(t->dtype, want[p], e);
      double err = fabs(g - w), limit = rtol * (1.0 + fabs(w));
      if (!isfinite(g) || !isfinite(w)) { /* NaN matches any NaN, an infinity only itself */
        err = (isnan(g) && isnan(w)) || g == w ? 0 : INFINITY;
        limit = 0;
      }
      if (err > *max_err) *max_err = err;
      if (err > limit) {
        if (bad == 0)
          tc_err_set(msg, "%s element %zu: got %.9g, expected %.9g", t->name, e, g, w);
        bad++;
      }
    }
  }
  return bad;
}

tc_status tc_example_run(const tc_example *e, const char *device, tc_example_result *r) {
  memset(r, 0, sizeof *r);
  tc_fusion *f = e->build();
  tc_compile_options opt = {TC_TARGET_OPENCL, NULL, e->name};
  tc_kernel *k = tc_compile(f, &opt, &r->status);
  if (!k) {
    snprintf(r->msg, sizeof r->msg, "%s", tc_fusion_error(f));
    tc_fusion_free(f);
    return r->status;
  }
  r->smem = tc_kernel_smem_bytes(k);
  void **got = tc_params_alloc(f, 1), **want = tc_params_alloc(f, 1);
  r->status = tc_kernel_run(k, got, device, &r->ms);
  if (r->status) {
    snprintf(r->msg, sizeof r->msg, "%s", tc_kernel_error(k));
  } else {
    tc_reference_run(f, want);
    TC_STR_LOCAL(msg);
    long bad = tc_outputs_compare(f, got, want, &r->max_err, &msg);
    snprintf(r->msg, sizeof r->msg, "%s", tc_str_cstr(&msg));
    r->verified = bad == 0;
    if (bad == 0 && e->expect_smem >= 0 && r->smem != e->expect_smem) {
      r->verified = 0;
      snprintf(r->msg, sizeof r->msg, "shared memory is %lld bytes; the allocation rules give %lld",
               (long long)r->smem, (long long)e->expect_smem);
    }
  }
  tc_params_free(f, got), tc_params_free(f, want);
  tc_kernel_free(k);
  tc_fusion_free(f);
  return r->status;
}
