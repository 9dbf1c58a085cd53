/* compile.c - tc_compile (lower, then print in the target's dialect, through
 * the kernel cache) and the compiled-kernel object with its launch facts and
 * run entry point.  In the runtime layer: a tc_kernel holds its device
 * handles and builds and runs through the runtime. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codegen/dialect.h"
#include "../lower/allocation.h"
#include "../sched/sched.h"
#include "../target/target.h"
#include "cache.h"
#include "kernel_tmaps.h"
#include "runtime.h"

struct tc_kernel {
  char *source;
  char name[64];
  tc_target target;
  char arch[32];
  int arch_given;        /* tc_compile named the arch (HIP: else the device's at run) */
  int64_t smem, tmem_cols;
  int64_t grid[3], block[3];
  int nparams;
  size_t *param_bytes;
  int *param_is_output;
  char (*param_scalar)[32]; /* a scalar input's name (passed by value); "" for buffers */
  tc_tensor_alloc *allocs; /* each tensor's allocation (src/lower/allocation.c) */
  int nallocs;
  tc_cl *cl;
  char cl_selector[128];
  char err[4096];
  /* the on-disk kernel cache (src/runtime/cache.c) */
  char key[33];          /* "" when the cache was off at tc_compile */
  int from_cache;        /* tc_compile read the kernel from the cache */
  char *ptx;             /* CUDA: PTX made by (or cached for) ptx_tag */
  char ptx_tag[32];      /* "nvrtc-13.0" */
  int ptx_from_cache;
  char *hip_co;          /* HIP: the code object hipcc made for hip_co_arch (not cached) */
  size_t hip_co_bytes;
  char hip_co_arch[64];
  /* CUDA with bulk tensor copies (TMA): the tensor maps its tc_tmap
   * parameters take (tc_cu_tma_maps), or why there are none (not cached) */
  tc_rt_tmap *tmaps;
  int ntmaps;
  char tmap_why[512];
  int64_t ws_words;      /* a grid reduction's workspace (tc_kir.ws_words): a
                            zeroed buffer passed after the parameters */
  tc_sym_info sym;       /* the size variables (sym.n 0: none) */
};

/* The default arch of a target. */
static const char *default_arch(tc_target t) {
  /* OpenCL kernels record the CUDA default (no arch applies; cache entries
   * keep the field) */
  const char *a = tc_target_default_arch(t);
  return a ? a : TC_CUDA_DEFAULT_ARCH;
}

static tc_kernel *kernel_from_cache(tc_fusion *f, const tc_compile_options *o, const char *name,
                                    char key[33]);

/* The name of each kernel parameter that is a scalar input ("" for a
 * buffer): the inputs, then the outputs. */
static char (*scalar_names(const tc_fusion *f))[32] {
  char (*names)[32] = tc_xcalloc((size_t)(f->ninputs + f->noutputs + 1), sizeof *names);
  for (int i = 0; i < f->ninputs; i++)
    if (f->inputs[i]->is_scalar) snprintf(names[i], sizeof names[i], "%s", f->inputs[i]->label);
  return names;
}
static void kernel_to_cache(const tc_kernel *k);

/* Does tc_compile apply tc_swizzle_swap by itself?  Where the target says
 * so (HIP), unless TILEC_SWIZZLE_SWAP=0 says no. */
static bool swizzle_swap_on(const tc_compile_options *o) {
  return tc_target_info_of(o->target).swizzle_swap && tc_swizzle_swap_env_enabled();
}

static bool valid_name(const char *s) {
  if (!s || !*s || strlen(s) > 60) return false;
  for (const char *p = s; *p; p++) {
    bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
              (p != s && *p >= '0' && *p <= '9');
    if (!ok) return false;
  }
  /* names the kernels' own helpers, C keywords or the targets' built-in
   * functions already take would not compile (or would call the wrong
   * function) */
  static const char *taken[] = {
      "abs", "acos", "asin", "atan", "barrier", "ceil", "cos", "do", "else", "exp", "fabs",
      "float", "floor", "fma", "fmax", "fmin", "for", "half", "if", "int", "log", "main",
      "max", "min", "mix", "pow", "return", "round", "sin", "sqrt", "tan", "tanh", "void",
      "while", "char", "short", "long", "unsigned", "signed", "const", "static", "struct"};
  for (size_t i = 0; i < sizeof taken / sizeof *taken; i++)
    if (strcmp(s, taken[i]) == 0) return false;
  return strncmp(s, "tc_", 3) != 0 && strncmp(s, "get_", 4) != 0 && strncmp(s, "__", 2) != 0;
}

tc_kernel *tc_compile(tc_fusion *f, const tc_compile_options *opt, tc_status *status) {
  tc_status dummy;
  if (!status) status = &dummy;
  tc_compile_options o = {TC_DEFAULT_TARGET, NULL, NULL};
  if (opt) o = *opt;
  const char *name = o.kernel_name ? o.kernel_name : "tilec_kernel";
  tc_clear_error(f);
  if (!valid_name(name)) {
    *status = tc_fail(f, TC_ERR_ARGUMENT, "compile: kernel name \"%s\" is not a C identifier of at most 60 characters, or is a keyword, a built-in function or reserved (tc_, get_, __)", name);
    return NULL;
  }
  const tc_dialect *d = tc_dialect_for(o.target);
  if (!d) {
    *status = tc_fail(f, TC_ERR_UNSUPPORTED, "compile: target %s (%d) has no dialect in this build",
                      tc_target_name(o.target), (int)o.target);
    return NULL;
  }
  char key[33] = "";
  tc_kernel *hit = kernel_from_cache(f, &o, name, key);
  if (hit) {
    *status = TC_OK;
    return hit;
  }
  tc_kir *k;
  /* HIP: the swizzle swap (TileLang's) wherever it is legal, undone after
   * lowering so that the caller's schedule stays as it was */
  tc_swap_undo *undo = NULL;
  if (swizzle_swap_on(&o)) tc_swizzle_swap_auto(f, &undo);
  *status = tc_lower(f, o.target, o.arch, &k);
  tc_swizzle_swap_restore(f, undo);
  if (*status) return NULL;
  tc_target_info ti;
  tc_target_info_make(o.target, o.arch, &ti, NULL); /* a bad arch fails at build */
  if (!(ti.features & TC_FEAT_TCGEN05) && k->tmem_columns > 0) {
    tc_kir_free(k);
    *status = tc_fail(f, TC_ERR_UNSUPPORTED,
                      "compile: tensor memory is an NVIDIA Blackwell (tcgen05) feature; AMD GPUs "
                      "(target hip) have none");
    return NULL;
  }
  tc_kernel *kn = tc_xcalloc(1, sizeof *kn);
  tc_str src;
  tc_str_init(&src);
  tc_print_kernel(&src, d, k, name);
  kn->source = tc_str_take(&src);
  snprintf(kn->name, sizeof kn->name, "%s", name);
  kn->target = o.target;
  snprintf(kn->arch, sizeof kn->arch, "%s", o.arch ? o.arch : default_arch(o.target));
  kn->arch_given = o.arch != NULL;
  kn->smem = k->smem_bytes;
  kn->tmem_cols = k->tmem_columns;
  kn->ws_words = k->ws_words;
  memcpy(kn->grid, k->grid, sizeof kn->grid);
  memcpy(kn->block, k->block, sizeof kn->block);
  kn->nparams = k->nparams;
  kn->param_bytes = tc_xmalloc((size_t)(k->nparams + 1) * sizeof(size_t));
  kn->param_is_output = tc_xmalloc((size_t)(k->nparams + 1) * sizeof(int));
  for (int i = 0; i < k->nparams; i++) {
    const tc_tensor *t = k->params[i];
    kn->param_bytes[i] = tc_tensor_bytes(t); /* (a view tensor's: its buffer's) */
    kn->param_is_output[i] = i >= f->ninputs;
  }
  kn->param_scalar = scalar_names(f);
  for (int v = 0; v < f->nsym; v++) {
    tc_sym_info *y = &kn->sym;
    y->n = f->nsym;
    y->div[v] = f->sym_div[v], y->bound[v] = f->sym_bound[v];
    for (int i = 0; i < k->nparams; i++) {
      const tc_tensor *t = k->params[i];
      if (t == f->sym[v]) y->param[v] = i;
      for (int j = 0; j < t->nlogical && !t->is_scalar && i < 63; j++) {
        const tc_axis *a = &f->g.axes[t->logical[j]];
        if (a->sym_div && a->sym_var == v) y->mask[v] |= (int64_t)1 << i;
      }
    }
  }
  for (int dim = 0; dim < 3; dim++) {
    kn->sym.grid_var[dim] = k->grid_var[dim], kn->sym.grid_nsteps[dim] = k->grid_nsteps[dim];
    memcpy(kn->sym.grid_steps[dim], k->grid_steps[dim], sizeof kn->sym.grid_steps[dim]);
  }
  kn->nallocs = tc_kir_tensor_allocs(k, &kn->allocs);
  if ((ti.features & TC_FEAT_TMA) && k->ntma > 0) {
    kn->tmaps = tc_xcalloc((size_t)k->ntma, sizeof *kn->tmaps);
    tc_str why;
    tc_str_init(&why);
    int n = tc_cu_tma_maps(k, kn->tmaps, k->ntma, &why);
    if (n < 0) snprintf(kn->tmap_why, sizeof kn->tmap_why, "%s", tc_str_cstr(&why));
    kn->ntmaps = n < 0 ? 0 : n;
    tc_str_free(&why);
  }
  tc_kir_free(k);
  if (key[0]) {
    memcpy(kn->key, key, sizeof kn->key);
    kernel_to_cache(kn);
  }
  *status = TC_OK;
  return kn;
}

/* ---- the kernel cache ----------------------------------------------------- */

/* On a hit, the kernel stored under the hash of (f, options); NULL on a
 * miss or when the cache is off.  key gets the hash when the cache is on. */
static tc_kernel *kernel_from_cache(tc_fusion *f, const tc_compile_options *o, const char *name,
                                    char key[33]) {
  key[0] = 0;
  if (!tc_cache_enabled()) return NULL;
  tc_cache_key(f, o->target, o->arch, name, key);
  if (tc_target_info_of(o->target).swizzle_swap) { /* the automatic swap changes the kernel */
    tc_hasher h;
    tc_hasher_init(&h);
    tc_hasher_str(&h, key);
    tc_hasher_str(&h, swizzle_swap_on(o) ? "swizzle-swap 1" : "swizzle-swap off");
    tc_hasher_hex(&h, key);
  }
  tc_cache_entry e;
  if (!tc_cache_load(key, &e)) {
    tc_cache_count(TC_CACHE_MISS);
    return NULL;
  }
  /* cheap sanity checks against the fusion (the hash covers them all) */
  bool ok = e.target == o->target && strcmp(e.name, name) == 0 &&
            e.nparams == f->ninputs + f->noutputs;
  for (int i = 0; ok && i < e.nparams; i++) {
    const tc_tensor *t = i < f->ninputs ? f->inputs[i] : f->outputs[i - f->ninputs];
    ok = e.param_bytes[i] == tc_tensor_bytes(t) && e.param_is_output[i] == (i >= f->ninputs);
  }
  if (!ok) {
    tc_cache_entry_free(&e);
    tc_cache_count(TC_CACHE_CORRUPT);
    tc_cache_count(TC_CACHE_MISS);
    return NULL; /* tc_compile makes the kernel and overwrites the entry */
  }
  tc_cache_count(TC_CACHE_HIT);
  tc_kernel *kn = tc_xcalloc(1, sizeof *kn);
  kn->source = e.source, e.source = NULL;
  snprintf(kn->name, sizeof kn->name, "%s", e.name);
  kn->target = e.target;
  snprintf(kn->arch, sizeof kn->arch, "%s", o->arch ? o->arch : default_arch(o->target));
  kn->arch_given = o->arch != NULL;
  kn->smem = e.smem;
  kn->tmem_cols = e.tmem_cols;
  kn->ws_words = e.ws_words;
  memcpy(kn->grid, e.grid, sizeof kn->grid);
  memcpy(kn->block, e.block, sizeof kn->block);
  kn->nparams = e.nparams;
  kn->param_bytes = e.param_bytes, e.param_bytes = NULL;
  kn->param_is_output = e.param_is_output, e.param_is_output = NULL;
  kn->param_scalar = scalar_names(f);
  kn->sym = e.sym;
  kn->allocs = e.allocs, e.allocs = NULL;
  kn->nallocs = e.nallocs;
  kn->tmaps = e.tmaps, e.tmaps = NULL;
  kn->ntmaps = e.ntmaps;
  if (e.ptx) {
    kn->ptx = e.ptx, e.ptx = NULL;
    snprintf(kn->ptx_tag, sizeof kn->ptx_tag, "%s", e.ptx_tag);
    kn->ptx_from_cache = 1;
  }
  memcpy(kn->key, key, sizeof kn->key);
  kn->from_cache = 1;
  tc_cache_entry_free(&e);
  return kn;
}

/* Writes the kernel (with its PTX, if any) under its key. */
static void kernel_to_cache(const tc_kernel *k) {
  if (!k->key[0] || k->tmap_why[0]) return;
  tc_cache_entry e;
  memset(&e, 0, sizeof e);
  memcpy(e.key, k->key, sizeof e.key);
  snprintf(e.name, sizeof e.name, "%s", k->name);
  e.target = k->target;
  snprintf(e.arch, sizeof e.arch, "%s", k->arch);
  e.smem = k->smem, e.tmem_cols = k->tmem_cols;
  e.ws_words = k->ws_words;
  memcpy(e.grid, k->grid, sizeof e.grid);
  memcpy(e.block, k->block, sizeof e.block);
  e.nparams = k->nparams;
  e.param_bytes = k->param_bytes, e.param_is_output = k->param_is_output;
  e.sym = k->sym;
  e.nallocs = k->nallocs, e.allocs = k->allocs;
  e.ntmaps = k->ntmaps, e.tmaps = k->tmaps;
  e.source = k->source;
  if (k->ptx) {
    e.ptx = k->ptx;
    snprintf(e.ptx_tag, sizeof e.ptx_tag, "%s", k->ptx_tag);
  }
  tc_cache_store(&e); /* borrowed pointers: no tc_cache_entry_free */
}

/* The kernel's PTX for the NVRTC at hand: reused when the kernel already
 * has PTX made by this NVRTC version (from the cache or an earlier build),
 * else made with NVRTC and added to the kernel's cache entry. */
static tc_status cuda_ptx(tc_kernel *k, tc_str *err) {
  char tag[32] = "";
  int major = 0, minor = 0;
  if (tc_cuda_nvrtc_version(&major, &minor)) snprintf(tag, sizeof tag, "nvrtc-%d.%d", major, minor);
  if (k->ptx && tag[0] && strcmp(tag, k->ptx_tag) == 0) {
    if (k->ptx_from_cache) tc_cache_count(TC_CACHE_PTX_HIT);
    return TC_OK;
  }
  free(k->ptx);
  k->ptx = NULL, k->ptx_tag[0] = 0, k->ptx_from_cache = 0;
  char *ptx = NULL;
  tc_status st = tc_cuda_compile(k->source, k->arch, &ptx, err);
  if (tag[0] && st != TC_ERR_ARGUMENT) tc_cache_count(TC_CACHE_NVRTC_RUN);
  if (st) {
    free(ptx);
    return st;
  }
  k->ptx = ptx;
  snprintf(k->ptx_tag, sizeof k->ptx_tag, "%s", tag);
  kernel_to_cache(k);
  return TC_OK;
}

/* cuda_ptx as a tc_rt_code's PTX source (ctx: the tc_kernel). */
static tc_status kernel_ptx(void *ctx, const char **ptx, tc_str *err) {
  tc_kernel *k = ctx;
  tc_status st = cuda_ptx(k, err);
  *ptx = k->ptx;
  return st;
}

/* HIP: the code object of the kernel for arch, made by hipcc once per
 * arch (tc_kernel_build makes the one for the arch a run would use). */
static tc_status hip_code_object(tc_kernel *k, const char *arch, tc_str *err) {
  if (k->hip_co && strcmp(k->hip_co_arch, arch) == 0) return TC_OK;
  free(k->hip_co);
  k->hip_co = NULL, k->hip_co_bytes = 0, k->hip_co_arch[0] = 0;
  tc_status st = tc_hip_compile(k->source, arch, &k->hip_co, &k->hip_co_bytes, err);
  if (st == TC_OK) snprintf(k->hip_co_arch, sizeof k->hip_co_arch, "%s", arch);
  return st;
}

/* hip_code_object as a tc_rt_code's code object source (ctx: the tc_kernel). */
static tc_status kernel_hip_co(void *ctx, const char *arch, const char **co, size_t *bytes,
                               tc_str *err) {
  tc_kernel *k = ctx;
  tc_status st = hip_code_object(k, arch, err);
  *co = k->hip_co, *bytes = k->hip_co_bytes;
  return st;
}

/* The arch a HIP kernel is built and run for: the one tc_compile named,
 * else the AMD GPU's, else the default it was lowered for. */
static const char *hip_arch(const tc_kernel *k) {
  const char *dev = k->arch_given ? NULL : tc_hip_device_arch();
  return dev ? dev : k->arch;
}

int tc_kernel_from_cache(const tc_kernel *k) { return k && k->from_cache; }

void tc_kernel_free(tc_kernel *k) {
  if (!k) return;
  if (k->cl) tc_cl_close(k->cl);
  free(k->source), free(k->param_bytes), free(k->param_is_output), free(k->param_scalar), free(k->ptx);
  free(k->hip_co), free(k->tmaps), free(k->allocs);
  free(k);
}

const char *tc_kernel_source(const tc_kernel *k) { return k->source; }
const char *tc_kernel_name(const tc_kernel *k) { return k->name; }
int64_t tc_kernel_smem_bytes(const tc_kernel *k) { return k->smem; }
int64_t tc_kernel_tmem_columns(const tc_kernel *k) { return k->tmem_cols; }
int tc_kernel_nparams(const tc_kernel *k) { return k->nparams; }

int tc_kernel_tensor_maps(const tc_kernel *k, const tc_rt_tmap **maps, const char **why) {
  if (maps) *maps = k->tmaps;
  if (why) *why = k->tmap_why;
  return k->ntmaps;
}
const char *tc_kernel_error(const tc_kernel *k) { return k->err; }

size_t tc_kernel_param_bytes(const tc_kernel *k, int i) {
  return i >= 0 && i < k->nparams ? k->param_bytes[i] : 0;
}

tc_status tc_kernel_tensor_allocation(const tc_kernel *k, const tc_tensor *t, tc_allocation *out) {
  if (!t) return TC_ERR_ARGUMENT;
  tc_clear_error(t->f);
  if (!k || !out)
    return tc_fail(t->f, TC_ERR_ARGUMENT, "tc_kernel_tensor_allocation: the %s is NULL",
                   !k ? "kernel" : "output (out)");
  return tc_tensor_alloc_find(k->allocs, k->nallocs, k->name, t, out);
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
  switch (tc_target_info_of(k->target).build) {
  case TC_BUILD_NVRTC:
    st = cuda_ptx(k, &err);
    break;
  case TC_BUILD_OPENCL:
    st = open_cl(k, device, &err);
    if (!st) st = tc_cl_build(k->cl, k->source, &err);
    break;
  case TC_BUILD_HIPCC:
    /* hipcc --genco for the kernel's arch (or the AMD GPU's); needs no GPU */
    st = hip_code_object(k, hip_arch(k), &err);
    break;
  default:
    st = TC_ERR_UNSUPPORTED;
    tc_str_printf(&err, "building %s kernels is not supported in this build", tc_target_name(k->target));
  }
  snprintf(k->err, sizeof k->err, "%s", tc_str_cstr(&err));
  tc_str_free(&err);
  return st;
}

const char *tc_kernel_size_var(const tc_kernel *k, int64_t *divisor, int64_t *bound) {
  return tc_kernel_size_var_at(k, 0, divisor, bound);
}

int tc_kernel_size_var_count(const tc_kernel *k) { return k ? k->sym.n : 0; }

const char *tc_kernel_size_var_at(const tc_kernel *k, int i, int64_t *divisor, int64_t *bound) {
  if (!k || i < 0 || i >= k->sym.n) return NULL;
  if (divisor) *divisor = k->sym.div[i];
  if (bound) *bound = k->sym.bound[i];
  return k->param_scalar[k->sym.param[i]];
}

static tc_status run(tc_kernel *k, void *const *args, const int64_t *size, const char *device,
                     double *ms);

tc_status tc_kernel_run(tc_kernel *k, void *const *args, const char *device, double *ms) {
  k->err[0] = 0;
  if (k->sym.n > 0) {
    snprintf(k->err, sizeof k->err, "tc_kernel_run: the kernel's extents include the size "
             "variable %s; give %s with tc_kernel_run_sizes", k->param_scalar[k->sym.param[0]],
             k->sym.n > 1 ? "the variables' values" : "its value");
    return TC_ERR_ARGUMENT;
  }
  return run(k, args, NULL, device, ms);
}

tc_status tc_kernel_run_sizes(tc_kernel *k, void *const *args, const int64_t *sizes, int nsizes,
                              const char *device, double *ms) {
  k->err[0] = 0;
  int want = k->sym.n;
  if (nsizes != want || (nsizes > 0 && !sizes)) {
    if (want) {
      char names[160] = "";
      for (int v = 0; v < want; v++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                 v == 0 ? "" : v == want - 1 ? " and " : ", ", k->param_scalar[k->sym.param[v]]);
      snprintf(k->err, sizeof k->err, "tc_kernel_run_sizes: the kernel has %s size variable%s, %s; "
               "pass %s (nsizes %d), got %d value%s", want == 1 ? "one" : want == 2 ? "two" : "several",
               want == 1 ? "" : "s", names, want == 1 ? "its value" : "their values in that order",
               want, nsizes, nsizes == want ? "s and no array" : nsizes == 1 ? "" : "s");
    } else {
      snprintf(k->err, sizeof k->err, "tc_kernel_run_sizes: the kernel has fixed shapes and no "
               "size variable; pass nsizes 0, got %d", nsizes);
    }
    return TC_ERR_ARGUMENT;
  }
  if (!want) return run(k, args, NULL, device, ms);
  for (int i = 0; i < want; i++) {
    const char *m = k->param_scalar[k->sym.param[i]];
    int64_t v = sizes[i];
    if (v < 1 || v > k->sym.bound[i]) {
      snprintf(k->err, sizeof k->err, "tc_kernel_run_sizes: %s is %lld, but the kernel was compiled "
               "for %s in 1..%lld", m, (long long)v, m, (long long)k->sym.bound[i]);
      return TC_ERR_ARGUMENT;
    }
    if (v % k->sym.div[i] != 0) {
      snprintf(k->err, sizeof k->err, "tc_kernel_run_sizes: %s is %lld, but the kernel was compiled "
               "for %s a multiple of %lld; compile one with a divisor that %lld keeps (1: any)",
               m, (long long)v, m, (long long)k->sym.div[i], (long long)v);
      return TC_ERR_ARGUMENT;
    }
  }
  return run(k, args, sizes, device, ms);
}

/* Runs k; size: the size variables' values (NULL: fixed shapes). */
static tc_status run(tc_kernel *k, void *const *args, const int64_t *size, const char *device,
                     double *ms) {
  if (!args) {
    snprintf(k->err, sizeof k->err, "tc_kernel_run: args is NULL; pass one host pointer per parameter");
    return TC_ERR_ARGUMENT;
  }
  tc_target_info ti = tc_target_info_of(k->target);
  if (ti.tensor_maps && k->tmap_why[0]) {
    snprintf(k->err, sizeof k->err,
             "tc_kernel_run: the kernel uses bulk tensor copies (TMA), and its CUtensorMap "
             "parameters cannot be described: %s; compile for an arch below sm_90 or use "
             "TC_LDST_DEFAULT to run it", k->tmap_why);
    return TC_ERR_UNSUPPORTED;
  }
  tc_rt_buffer *bufs = tc_xcalloc((size_t)k->nparams + 2, sizeof *bufs);
  int nbufs = k->nparams;
  void *ws = NULL;
  if (k->ws_words > 0) { /* a grid reduction's workspace, zeroed for each launch */
    ws = tc_xcalloc((size_t)k->ws_words, 4);
    bufs[nbufs++] = (tc_rt_buffer){ws, (size_t)k->ws_words * 4, 0};
  }
  int32_t size32[TC_MAX_SIZE_VARS] = {0};
  for (int v = 0; size && v < k->sym.n; v++) size32[v] = (int32_t)size[v];
  for (int i = 0; i < k->nparams; i++) {
    int var = -1;
    for (int v = 0; size && v < k->sym.n; v++)
      if (i == k->sym.param[v]) var = v;
    if (var >= 0) { /* a size variable, by value */
      bufs[i] = (tc_rt_buffer){&size32[var], 4, 0, 1};
      continue;
    }
    if (!args[i]) {
      free(bufs), free(ws);
      if (k->param_scalar[i][0])
        snprintf(k->err, sizeof k->err, "tc_kernel_run: the scalar input %s (argument %d) is missing; "
                 "pass a pointer to its %zu-byte value", k->param_scalar[i], i, k->param_bytes[i]);
      else
        snprintf(k->err, sizeof k->err, "tc_kernel_run: argument %d is NULL", i);
      return TC_ERR_ARGUMENT;
    }
    bufs[i].host = args[i];
    bufs[i].bytes = k->param_bytes[i];
    for (int v = 0; size && v < k->sym.n && i < 63; v++)
      if (k->sym.mask[v] >> i & 1) /* the extent the value gives */
        bufs[i].bytes = bufs[i].bytes / (size_t)k->sym.bound[v] * (size_t)size[v];
    bufs[i].copy_back = k->param_is_output[i];
    bufs[i].by_value = k->param_scalar[i][0] != 0;
  }
  tc_launch l = {{0}};
  for (int d = 0; d < 3; d++) l.grid[d] = (size_t)k->grid[d], l.block[d] = (size_t)k->block[d];
  for (int d = 0; size && d < 3; d++)
    if (k->sym.grid_var[d] >= 0)
      l.grid[d] = (size_t)tc_sym_eval(k->sym.grid_steps[d], k->sym.grid_nsteps[d], k->sym.grid_var[d], size);
  l.dyn_smem = (size_t)k->smem;
  if (ti.tensor_maps) l.tmaps = k->tmaps, l.ntmaps = k->ntmaps;
  tc_str err;
  tc_str_init(&err);
  tc_status st = ti.device_selector ? open_cl(k, device, &err) : TC_OK;
  /* CUDA runs the PTX from the cache or an earlier build, HIP the code
   * object of an earlier build or run (for the device's arch unless
   * tc_compile named one) */
  tc_rt_code code = {.source = k->source, .name = k->name, .arch = k->arch, .ptx = kernel_ptx,
                     .hip_co = kernel_hip_co, .ctx = k};
  if (ti.build == TC_BUILD_HIPCC && !k->arch_given) code.arch = NULL;
  if (!st) st = tc_rt_launch(k->target, k->cl, &code, bufs, nbufs, &l, ms, &err);
  snprintf(k->err, sizeof k->err, "%s", tc_str_cstr(&err));
  tc_str_free(&err);
  free(bufs), free(ws);
  return st;
}
