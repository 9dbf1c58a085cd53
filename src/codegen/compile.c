/* compile.c - tc_compile (lower, then print in the target's dialect) and
 * the compiled-kernel object with its launch facts and run entry point. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/runtime.h"
#include "dialect.h"

struct tc_kernel {
  char *source;
  char name[64];
  tc_target target;
  char arch[32];
  int64_t smem, tmem_cols;
  int64_t grid[3], block[3];
  int nparams;
  size_t *param_bytes;
  int *param_is_output;
  tc_cl *cl;
  char cl_selector[128];
  char err[4096];
};

static bool valid_name(const char *s) {
  if (!s || !*s || strlen(s) > 60) return false;
  for (const char *p = s; *p; p++) {
    bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
              (p != s && *p >= '0' && *p <= '9');
    if (!ok) return false;
  }
  return true;
}

tc_kernel *tc_compile(tc_fusion *f, const tc_compile_options *opt, tc_status *status) {
  tc_status dummy;
  if (!status) status = &dummy;
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, NULL};
  if (opt) o = *opt;
  const char *name = o.kernel_name ? o.kernel_name : "tilec_kernel";
  tc_clear_error(f);
  if (!valid_name(name)) {
    *status = tc_fail(f, TC_ERR_ARGUMENT, "compile: kernel name \"%s\" is not a C identifier of at most 60 characters", name);
    return NULL;
  }
  const tc_dialect *d;
  switch (o.target) {
    case TC_TARGET_OPENCL: d = &tc_dialect_opencl; break;
    case TC_TARGET_CUDA: d = &tc_dialect_cuda; break;
    default:
      *status = tc_fail(f, TC_ERR_UNSUPPORTED, "compile: target %s has no dialect in this build yet",
                        tc_target_name(o.target));
      return NULL;
  }
  tc_kir *k;
  *status = tc_lower(f, o.target, o.arch, &k);
  if (*status) return NULL;
  if (o.target == TC_TARGET_CUDA && k->tmem_columns > 0) {
    tc_kir_free(k);
    *status = tc_fail(f, TC_ERR_UNSUPPORTED,
                      "compile: tensor memory (tcgen05) code for CUDA is not supported yet; it runs "
                      "emulated on the OpenCL target");
    return NULL;
  }
  tc_kernel *kn = tc_xcalloc(1, sizeof *kn);
  tc_str src;
  tc_str_init(&src);
  tc_print_kernel(&src, d, k, name);
  kn->source = tc_str_take(&src);
  snprintf(kn->name, sizeof kn->name, "%s", name);
  kn->target = o.target;
  snprintf(kn->arch, sizeof kn->arch, "%s", o.arch ? o.arch : "sm_80");
  kn->smem = k->smem_bytes;
  kn->tmem_cols = k->tmem_columns;
  memcpy(kn->grid, k->grid, sizeof kn->grid);
  memcpy(kn->block, k->block, sizeof kn->block);
  kn->nparams = k->nparams;
  kn->param_bytes = tc_xmalloc((size_t)(k->nparams + 1) * sizeof(size_t));
  kn->param_is_output = tc_xmalloc((size_t)(k->nparams + 1) * sizeof(int));
  for (int i = 0; i < k->nparams; i++) {
    const tc_tensor *t = k->params[i];
    size_t n = tc_dtype_size(t->dtype);
    for (int j = 0; j < t->nlogical; j++) n *= (size_t)f->g.axes[t->logical[j]].extent;
    kn->param_bytes[i] = n;
    kn->param_is_output[i] = i >= f->ninputs;
  }
  tc_kir_free(k);
  *status = TC_OK;
  return kn;
}

void tc_kernel_free(tc_kernel *k) {
  if (!k) return;
  if (k->cl) tc_cl_close(k->cl);
  free(k->source), free(k->param_bytes), free(k->param_is_output);
  free(k);
}

const char *tc_kernel_source(const tc_kernel *k) { return k->source; }
const char *tc_kernel_name(const tc_kernel *k) { return k->name; }
int64_t tc_kernel_smem_bytes(const tc_kernel *k) { return k->smem; }
int64_t tc_kernel_tmem_columns(const tc_kernel *k) { return k->tmem_cols; }
int tc_kernel_nparams(const tc_kernel *k) { return k->nparams; }
const char *tc_kernel_error(const tc_kernel *k) { return k->err; }

size_t tc_kernel_param_bytes(const tc_kernel *k, int i) {
  return i >= 0 && i < k->nparams ? k->param_bytes[i] : 0;
}

void tc_kernel_launch_dims(const tc_kernel *k, int64_t grid[3], int64_t block[3]) {
  memcpy(grid, k->grid, sizeof k->grid);
  memcpy(block, k->block, sizeof k->block);
}

/* Opens (or reuses) the kernel's OpenCL device. */
static tc_status open_cl(tc_kernel *k, const char *device, tc_str *err) {
  const char *sel = device ? device : "";
  if (k->cl && strcmp(sel, k->cl_selector) != 0) {
    tc_cl_close(k->cl);
    k->cl = NULL;
  }
  if (k->cl) return TC_OK;
  snprintf(k->cl_selector, sizeof k->cl_selector, "%s", sel);
  return tc_cl_open(device, &k->cl, err);
}

tc_status tc_kernel_build(tc_kernel *k, const char *device) {
  k->err[0] = 0;
  tc_str err;
  tc_str_init(&err);
  tc_status st;
  if (k->target == TC_TARGET_CUDA) {
    char *ptx = NULL;
    st = tc_cuda_compile(k->source, k->arch, &ptx, &err);
    free(ptx);
  } else if (k->target == TC_TARGET_OPENCL) {
    st = open_cl(k, device, &err);
    if (!st) st = tc_cl_build(k->cl, k->source, &err);
  } else {
    st = TC_ERR_UNSUPPORTED;
    tc_str_printf(&err, "building %s kernels is not supported in this build", tc_target_name(k->target));
  }
  snprintf(k->err, sizeof k->err, "%s", tc_str_cstr(&err));
  tc_str_free(&err);
  return st;
}

tc_status tc_kernel_run(tc_kernel *k, void *const *args, const char *device, double *ms) {
  k->err[0] = 0;
  if (!args) {
    snprintf(k->err, sizeof k->err, "tc_kernel_run: args is NULL; pass one host pointer per parameter");
    return TC_ERR_ARGUMENT;
  }
  tc_rt_buffer *bufs = tc_xcalloc((size_t)k->nparams + 1, sizeof *bufs);
  for (int i = 0; i < k->nparams; i++) {
    if (!args[i]) {
      free(bufs);
      snprintf(k->err, sizeof k->err, "tc_kernel_run: argument %d is NULL", i);
      return TC_ERR_ARGUMENT;
    }
    bufs[i].host = args[i];
    bufs[i].bytes = k->param_bytes[i];
    bufs[i].copy_back = k->param_is_output[i];
  }
  tc_launch l;
  for (int d = 0; d < 3; d++) l.grid[d] = (size_t)k->grid[d], l.block[d] = (size_t)k->block[d];
  l.dyn_smem = (size_t)k->smem;
  tc_str err;
  tc_str_init(&err);
  tc_status st;
  if (k->target == TC_TARGET_OPENCL) {
    st = open_cl(k, device, &err);
    if (!st) st = tc_cl_run(k->cl, k->source, k->name, bufs, k->nparams, &l, ms, &err);
  } else if (k->target == TC_TARGET_CUDA) {
    st = tc_cuda_run(k->source, k->name, k->arch, bufs, k->nparams, &l, ms, &err);
  } else {
    st = TC_ERR_UNSUPPORTED;
    tc_str_printf(&err, "running %s kernels is not supported in this build", tc_target_name(k->target));
  }
  snprintf(k->err, sizeof k->err, "%s", tc_str_cstr(&err));
  tc_str_free(&err);
  free(bufs);
  return st;
}
