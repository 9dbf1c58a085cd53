/* conv_fusion.c - a convolution's GEMMs as fusions: each GEMM of the
 * lowering (conv_lower.c) becomes one fusion whose operands are inputs
 * seen through the lowering's coordinate-transform views
 * (tc_input_view) and whose result is stored through the third view
 * (tc_output_view), with tc_matmul between them; forward takes a
 * per-output-channel bias and an activation after it, in the same
 * kernel.  The fusions are scheduled like any matmul fusion
 * (tc_schedule_auto), so the kernels come out of the compiler's one
 * pipeline rather than the GEMM text templates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv_internal.h"
#include "../ir/fusion.h"

/* The buffer of conv buffer b. */
static int64_t buf_elems(const tc_conv_problem *p, int b) {
  return b == TC_BUF_INPUT ? tc_conv_input_elems(p)
         : b == TC_BUF_FILTER ? tc_conv_filter_elems(p)
         : b == TC_BUF_OUTPUT ? tc_conv_output_elems(p) : 0;
}

/* v without its leading group dim (fixed at 0) when g is 1, so that the
 * matmul is [M, K] x [K, N] rather than a batch of one; then reordered
 * to [.., M, K] when transpose (A's views are [g, K, M]). */
static tc_view *operand_view(const tc_view *src, int64_t g, int transpose) {
  tc_view *v = tc_view_copy(src);
  int ok = 0;
  if (g == 1) ok |= tc_view_const_dim(v, 0, 0);
  if (transpose) {
    int r = v->nupper, perm[3] = {0, 1, 2};
    perm[r - 2] = r - 1, perm[r - 1] = r - 2;
    ok |= tc_view_reorder(v, perm);
  }
  if (ok) {
    tc_view_free(v);
    return NULL;
  }
  return v;
}

void tc_conv_fusions_free(tc_conv_fusion *fs, int n) {
  if (!fs) return;
  for (int i = 0; i < n; i++) tc_fusion_free(fs[i].f);
  free(fs);
}

/* One GEMM as a fusion. */
static int gemm_fusion(const tc_conv_problem *p, const tc_conv_gemm *gm, const tc_conv_epi *ep,
                       tc_conv_fusion *out, tc_str *err) {
  tc_fusion *f = out->f = tc_fusion_new();
  snprintf(out->name, sizeof out->name, "%s", gm->name);
  tc_dtype dt = p->dtype;
  int r = gm->g > 1 ? 3 : 2;
  tc_view *av = operand_view(gm->a, gm->g, 1), *bv = operand_view(gm->b, gm->g, 0),
          *cv = operand_view(gm->c, gm->g, 0);
  tc_tensor *y = NULL;
  if (av && bv && cv) {
    tc_tensor *a = tc_input_view(f, dt, av, buf_elems(p, gm->abuf));
    tc_tensor *b = a ? tc_input_view(f, dt, bv, buf_elems(p, gm->bbuf)) : NULL;
    out->args[0] = (int)gm->abuf, out->args[1] = (int)gm->bbuf, out->nargs = 2;
    y = b ? tc_matmul(f, a, b) : NULL;
    if (y && ep && ep->bias) { /* bias[g * K/G + k] of output channel k of group g */
      int64_t shape[2] = {gm->g, gm->m};
      bool is_new[3] = {false, false, true};
      tc_tensor *bias = tc_input(f, dt, r - 1, r == 3 ? shape : shape + 1);
      out->args[out->nargs++] = TC_CONV_BUF_BIAS;
      tc_tensor *bb = bias ? tc_broadcast(f, bias, r, r == 3 ? is_new : is_new + 1) : NULL;
      if (bb && dt != TC_F32) bb = tc_cast(f, bb, TC_F32);
      y = bb ? tc_binary(f, TC_ADD, y, bb) : NULL;
    }
    if (y && ep && ep->act >= 0) y = tc_unary(f, (tc_unary_op)ep->act, y);
    if (y && dt != TC_F32) y = tc_cast(f, y, dt);
    if (y && (tc_add_output(f, y) || tc_output_view(y, cv, buf_elems(p, gm->cbuf)))) y = NULL;
    out->args[out->nargs++] = (int)gm->cbuf;
  }
  if (!y)
    tc_err_set(err, "building the fusion of the convolution's GEMM %s: %s", gm->name,
               av && bv && cv ? tc_fusion_error(f) : "the views do not take the group dim out");
  if (av) tc_view_free(av);
  if (bv) tc_view_free(bv);
  if (cv) tc_view_free(cv);
  return y ? 0 : -1;
}

int tc_conv_fusions(const tc_conv_problem *p, const tc_conv_epi *ep, tc_conv_fusion **out,
                    int *n, int *zero_init, tc_str *err) {
  *out = NULL;
  *n = 0;
  *zero_init = 0;
  if (ep && (ep->bias || ep->act >= 0) && p->dir != TC_CONV_FWD) {
    tc_err_set(err, "a bias and an activation are fused into forward convolutions only, not %s",
               tc_conv_dir_name(p->dir));
    return -1;
  }
  if (ep && ep->act >= 0 && ep->act != TC_RELU && ep->act != TC_GELU && ep->act != TC_SILU) {
    tc_err_set(err, "the activation after a convolution is relu, gelu or silu (got op %d)", ep->act);
    return -1;
  }
  tc_conv_gemm *gemms = NULL;
  int ng = 0;
  if (tc_conv_lower(p, &gemms, &ng, zero_init, err)) return -1;
  tc_conv_fusion *fs = tc_xcalloc((size_t)ng + 1, sizeof *fs);
  int made = 0, rc = 0;
  for (; made < ng && !rc; made++) rc = gemm_fusion(p, &gemms[made], ep, &fs[made], err);
  tc_conv_gemms_free(gemms, ng);
  if (rc) {
    tc_conv_fusions_free(fs, made);
    return -1;
  }
  *out = fs;
  *n = ng;
  return 0;
}

tc_status tc_conv_fusion_run(const tc_conv_problem *p, const tc_conv_epi *ep, tc_target target,
                             const char *arch, const tc_matmul_tiles *tiles, const char *device,
                             void *in, void *fil, void *out,
                             const void *bias, double *ms, int repeat, double *repeat_ms,
                             tc_conv_fusion_info *info, tc_str *err) {
  for (int r = 0; r < repeat && repeat_ms; r++) repeat_ms[r] = 0;
  tc_conv_fusion *fs = NULL;
  int n = 0, zero = 0;
  if (ms) *ms = 0;
  if (info) memset(info, 0, sizeof *info);
  if (tc_conv_fusions(p, ep, &fs, &n, &zero, err)) return TC_ERR_ARGUMENT;
  void *bufs[4] = {in, fil, out, (void *)bias};
  if (zero) { /* elements no GEMM writes: zero on the host (the runs upload the buffer) */
    int w = (int)tc_conv_written_buf(p->dir);
    memset(bufs[w], 0, (size_t)buf_elems(p, w) * tc_dtype_size(p->dtype));
  }
  tc_status st = TC_OK;
  for (int i = 0; i < n && !st; i++) {
    tc_fusion *f = fs[i].f;
    st = tiles ? tc_schedule_matmul(f, target, arch, tiles) : tc_schedule_auto(f, target, arch);
    tc_compile_options o = {target, arch, NULL};
    char kname[64];
    snprintf(kname, sizeof kname, "conv_%s", fs[i].name);
    o.kernel_name = kname;
    tc_kernel *k = st ? NULL : tc_compile(f, &o, &st);
    if (!k) {
      tc_err_set(err, "the fusion of the convolution's GEMM %s: %s", fs[i].name, tc_fusion_error(f));
      if (!st) st = TC_ERR_LOWER;
      break;
    }
    if (info && info->nkernels < TC_CONV_FUSION_MAX_INFO) {
      snprintf(info->note[info->nkernels], sizeof info->note[0], "%s: %s", kname,
               tc_fusion_schedule_note(f));
      info->nkernels++;
    }
    if (info) info->total_kernels++;
    void *args[4];
    for (int a = 0; a < fs[i].nargs; a++) args[a] = bufs[fs[i].args[a]];
    double t = 0;
    st = tc_kernel_run(k, args, device, &t);
    if (st) tc_err_set(err, "running the kernel of the convolution's GEMM %s: %s", fs[i].name,
                       tc_kernel_error(k));
    if (ms) *ms += t;
    /* the timed launches: the same kernel on the buffers it left (each
     * GEMM writes what it wrote before, so the result stands) */
    for (int r = 0; r < repeat && !st; r++) {
      st = tc_kernel_run(k, args, device, &t);
      if (st) tc_err_set(err, "a timed run of the convolution's GEMM %s: %s", fs[i].name,
                         tc_kernel_error(k));
      if (repeat_ms) repeat_ms[r] += t;
    }
    tc_kernel_free(k);
  }
  tc_conv_fusions_free(fs, n);
  return st;
}
