/* test_nvcc.c - the CUDA C tilec prints must compile with NVIDIA's
 * compilers: the kernels of every example (src/demo/examples.c) plus more
 * schedules of our own (pointwise on tiles the shape does not divide,
 * 16-bit casts, i8 inputs, outer split, compute_at, shared-memory caches,
 * vectorized, unrolled and resized axes) are printed for the CUDA target
 * with unique kernel names, concatenated into ONE .cu file (every source
 * repeats the prelude behind an include guard) and compiled with nvcc for
 * sm_80 and for sm_90a, both at once.  Each example is also built with
 * NVRTC for sm_90a through tc_kernel_build.  Where a CUDA device exists the
 * examples are also run on it and compared with the host reference.
 * Skips (with the reason printed) only where nvcc / NVRTC / a device is
 * missing; nvcc is looked for in PATH and then /usr/local/cuda/bin. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demo/examples.h"
#include "runtime/runtime.h"
#include "test.h"
#include "tilec/tilec.h"

/* ---- our own schedules ----------------------------------------------------- */


static tc_fusion *own_fma_1x1(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t s[2] = {1, 1};
  tc_tensor *a = tc_input(f, TC_F32, 2, s), *b = tc_input(f, TC_F32, 2, s), *c = tc_input(f, TC_F32, 2, s);
  tc_tensor *o = tc_binary(f, TC_ADD, tc_binary(f, TC_MUL, a, b), c);
  tc_add_output(f, o);
  tc_example_tile_2d(f, o, 8, 32);
  return f;
}

/* exp, sigmoid, abs, neg, max, min, sub on one tile. */
static tc_fusion *own_unary_binary(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t s[2] = {33, 17};
  tc_tensor *a = tc_input(f, TC_F32, 2, s), *b = tc_input(f, TC_F32, 2, s);
  tc_tensor *e = tc_unary(f, TC_EXP, tc_binary(f, TC_MAX, a, b));
  tc_tensor *g = tc_unary(f, TC_SIGMOID, tc_binary(f, TC_MIN, a, b));
  tc_tensor *o = tc_binary(f, TC_SUB, tc_unary(f, TC_ABS, e), tc_unary(f, TC_NEG, g));
  tc_add_output(f, o);
  tc_example_tile_2d(f, o, 16, 16);
  return f;
}

/* f16 in, f32 and bf16 out. */
static tc_fusion *own_casts(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t s[2] = {100, 75};
  tc_tensor *h = tc_input(f, TC_F16, 2, s);
  tc_tensor *x = tc_cast(f, h, TC_F32);
  tc_tensor *bf = tc_cast(f, x, TC_BF16);
  tc_tensor *h2 = tc_cast(f, tc_unary(f, TC_RELU, x), TC_F16);
  tc_add_output(f, x), tc_add_output(f, bf), tc_add_output(f, h2);
  tc_example_tile_2d(f, x, 8, 32);
  return f;
}

/* i8 and i32: max in i8, add in i32, cast to f32. */
static tc_fusion *own_ints(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t s[3] = {5, 7, 9};
  tc_tensor *a = tc_input(f, TC_I8, 3, s), *b = tc_input(f, TC_I8, 3, s);
  tc_tensor *mx = tc_binary(f, TC_MAX, a, b);
  tc_tensor *sum = tc_binary(f, TC_ADD, tc_cast(f, a, TC_I32), tc_cast(f, b, TC_I32));
  tc_tensor *fl = tc_cast(f, tc_unary(f, TC_ABS, sum), TC_F32);
  tc_add_output(f, mx), tc_add_output(f, fl);
  tc_merge(fl, 0, 1);
  tc_merge(fl, 0, 1);
  tc_split(fl, 0, 32, 1);
  tc_parallelize(fl, 0, TC_BIDX);
  tc_parallelize(fl, 1, TC_TIDX);
  tc_propagate_transforms(fl);
  tc_parallelize_all_like(fl);
  tc_inline_most(f);
  return f;
}

static tc_fusion *own_outer_split(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t s[2] = {100, 75};
  tc_tensor *a = tc_input(f, TC_F32, 2, s), *b = tc_input(f, TC_F32, 2, s);
  tc_tensor *o = tc_binary(f, TC_MUL, a, b);
  tc_add_output(f, o);
  tc_merge(o, 0, 1);
  tc_split(o, 0, 7, 0);
  tc_split(o, 1, 128, 1);
  tc_parallelize(o, 0, TC_BIDX);
  tc_parallelize(o, 2, TC_TIDX);
  return f;
}

static tc_fusion *own_compute_at(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t s[2] = {33, 17};
  tc_tensor *a = tc_input(f, TC_F32, 2, s), *b = tc_input(f, TC_F32, 2, s), *c = tc_input(f, TC_F32, 2, s);
  tc_tensor *t3 = tc_binary(f, TC_MUL, a, b), *t4 = tc_unary(f, TC_EXP, t3);
  tc_tensor *o = tc_binary(f, TC_ADD, t4, c);
  tc_add_output(f, o);
  int from[2] = {1, 2}, to[2] = {2, 1};
  tc_split(o, 0, 4, 1);
  tc_split(o, 2, 8, 1);
  tc_reorder(o, 2, from, to);
  tc_merge(o, 0, 1);
  tc_compute_at(t4, o, -1);
  tc_compute_at(t3, t4, 1);
  tc_parallelize(o, 0, TC_BIDX);
  tc_parallelize(o, 2, TC_TIDX);
  tc_parallelize_all_like(o);
  return f;
}

static tc_fusion *own_cache_shared(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t s[2] = {67, 45};
  tc_tensor *a = tc_input(f, TC_F32, 2, s), *b = tc_input(f, TC_F32, 2, s);
  tc_tensor *o = tc_binary(f, TC_ADD, tc_unary(f, TC_RELU, a), b);
  tc_add_output(f, o);
  tc_tensor *ca = tc_cache_after(a);
  tc_cache_before(o);
  tc_set_memory_type(ca, TC_MEM_SHARED);
  tc_example_tile_2d(f, o, 4, 16);
  return f;
}

static tc_fusion *own_vectorize(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t s[2] = {37, 68};
  tc_tensor *a = tc_input(f, TC_F32, 2, s), *b = tc_input(f, TC_F32, 2, s), *c = tc_input(f, TC_F32, 2, s);
  tc_tensor *o = tc_binary(f, TC_ADD, tc_binary(f, TC_MUL, a, b), c);
  tc_add_output(f, o);
  tc_split(o, 1, 4, 1);
  tc_parallelize(o, 0, TC_BIDX);
  tc_parallelize(o, 1, TC_TIDX);
  tc_parallelize(o, 2, TC_VECTORIZE);
  tc_propagate_transforms(o);
  tc_parallelize_all_like(o);
  tc_inline_most(f);
  return f;
}

static tc_fusion *own_unroll_resize(void) {
  tc_fusion *f = tc_fusion_new();
  int64_t s[2] = {50, 75};
  tc_tensor *a = tc_input(f, TC_F32, 2, s), *b = tc_input(f, TC_F32, 2, s);
  tc_tensor *o = tc_binary(f, TC_SUB, tc_unary(f, TC_RELU, a), b);
  tc_add_output(f, o);
  tc_resize(o, 0, 1, 3);
  tc_split(o, 1, 16, 1);
  tc_reorder(o, 1, (int[]){2}, (int[]){1}); /* [54, 16, 5] */
  tc_parallelize(o, 0, TC_BIDX);
  tc_parallelize(o, 1, TC_TIDX);
  tc_parallelize(o, 2, TC_UNROLL);
  tc_propagate_transforms(o);
  tc_parallelize_all_like(o);
  tc_inline_most(f);
  return f;
}

typedef struct {
  const char *name;
  tc_fusion *(*build)(void);
} own_kernel;

static const own_kernel own[] = {
    {"own_fma_1x1", own_fma_1x1},         {"own_unary_binary", own_unary_binary},
    {"own_casts", own_casts},             {"own_ints", own_ints},
    {"own_outer_split", own_outer_split}, {"own_compute_at", own_compute_at},
    {"own_cache_shared", own_cache_shared}, {"own_vectorize", own_vectorize},
    {"own_unroll_resize", own_unroll_resize},
};
enum { NOWN = sizeof own / sizeof *own };

/* ---- helpers ------------------------------------------------------------------ */

/* nvcc from PATH, else /usr/local/cuda/bin/nvcc; 0 if neither. */
static int find_nvcc(char *out, size_t cap) {
  const char *path = getenv("PATH");
  if (path) {
    char *dup = strdup(path), *save = NULL;
    for (char *d = strtok_r(dup, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
      snprintf(out, cap, "%s/nvcc", *d ? d : ".");
      if (access(out, X_OK) == 0) {
        free(dup);
        return 1;
      }
    }
    free(dup);
  }
  snprintf(out, cap, "/usr/local/cuda/bin/nvcc");
  return access(out, X_OK) == 0;
}

static char *slurp(const char *path) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  fseek(fp, 0, SEEK_END);
  long n = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  char *s = malloc((size_t)(n > 0 ? n : 0) + 1);
  size_t got = fread(s, 1, (size_t)(n > 0 ? n : 0), fp);
  s[got] = 0;
  fclose(fp);
  return s;
}

/* Compiles a fusion for CUDA (arch may be NULL); NULL with a check failure
 * when it does not compile. */
static tc_kernel *compile_cuda(tc_fusion *f, const char *arch, const char *name) {
  tc_compile_options o = {TC_TARGET_CUDA, arch, name};
  tc_status st = TC_OK;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_CHECK(k != NULL, "%s: tc_compile for CUDA failed: %s: %s", name, tc_status_name(st),
           tc_fusion_error(f));
  return k;
}

/* ---- nvcc ------------------------------------------------------------------------ */

static void test_nvcc_one_file_sm80_sm90a(void) {
  char nvcc[1024];
  if (!find_nvcc(nvcc, sizeof nvcc)) TC_SKIP("nvcc not found in PATH or /usr/local/cuda/bin");
  char dir[] = "/tmp/tilec_nvcc_XXXXXX";
  TC_REQUIRE(mkdtemp(dir), "mkdtemp failed");
  char cu[128];
  snprintf(cu, sizeof cu, "%s/all.cu", dir);
  FILE *fp = fopen(cu, "w");
  TC_REQUIRE(fp, "cannot write %s", cu);
  int nkernels = 0, guarded = 0;
  for (int i = 0; i < tc_example_count() + NOWN; i++) {
    const char *name;
    tc_fusion *f;
    if (i < tc_example_count()) {
      const tc_example *e = tc_example_get(i);
      name = e->name, f = e->build();
    } else {
      name = own[i - tc_example_count()].name, f = own[i - tc_example_count()].build();
    }
    tc_kernel *k = compile_cuda(f, NULL, name);
    if (k) {
      const char *src = tc_kernel_source(k);
      guarded += strstr(src, "#ifndef TC_PRELUDE") != NULL;
      TC_CHECK(strstr(src, "extern \"C\" __global__") != NULL, "%s: not a CUDA kernel", name);
      fprintf(fp, "%s\n", src);
      nkernels++;
      tc_kernel_free(k);
    }
    tc_fusion_free(f);
  }
  fclose(fp);
  TC_CHECK_EQ_INT(nkernels, tc_example_count() + NOWN);
  TC_CHECK_EQ_INT(guarded, nkernels); /* the repeated prelude is guarded */

  /* both architectures at once; #177 (the unused bidy/tidz/... the index
   * definitions declare) is suppressed, any other warning is shown */
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && "
           "( '%s' -c -o k80.o -arch=sm_80 -diag-suppress 177 all.cu > log80 2>&1; echo $? > rc80 ) & "
           "( cd '%s' && '%s' -c -o k90a.o -gencode=arch=compute_90a,code=sm_90a -diag-suppress 177 all.cu > log90a 2>&1; "
           "echo $? > rc90a ) & wait",
           dir, nvcc, dir, nvcc);
  int sys = system(cmd);
  TC_CHECK(sys == 0, "system(%s) = %d", cmd, sys);
  const char *tags[2] = {"80", "90a"};
  for (int a = 0; a < 2; a++) {
    char path[256];
    snprintf(path, sizeof path, "%s/rc%s", dir, tags[a]);
    char *rc = slurp(path);
    snprintf(path, sizeof path, "%s/log%s", dir, tags[a]);
    char *log = slurp(path);
    TC_CHECK(rc && atoi(rc) == 0, "nvcc for sm_%s failed (exit %d) on %d kernels:\n%s", tags[a],
             rc ? atoi(rc) : -1, nkernels, log ? log : "(no log)");
    if (log && strstr(log, "warning")) printf("  nvcc sm_%s warnings:\n%s", tags[a], log);
    snprintf(path, sizeof path, "%s/k%s.o", dir, tags[a]);
    TC_CHECK(access(path, R_OK) == 0 || !(rc && atoi(rc) == 0), "no object %s", path);
    free(rc), free(log);
  }
  printf("  nvcc: %d kernels in one file, sm_80 and sm_90a\n", nkernels);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) printf("  could not remove %s\n", dir);
}

/* ---- NVRTC ------------------------------------------------------------------------ */

static void test_nvrtc_examples_sm90a(void) {
  int built = 0;
  for (int i = 0; i < tc_example_count(); i++) {
    const tc_example *e = tc_example_get(i);
    tc_fusion *f = e->build();
    tc_kernel *k = compile_cuda(f, "sm_90a", e->name);
    if (k) {
      tc_status st = tc_kernel_build(k, NULL);
      if (st == TC_ERR_UNSUPPORTED) { /* no NVRTC */
        char why[512];
        snprintf(why, sizeof why, "%s", tc_kernel_error(k));
        tc_kernel_free(k);
        tc_fusion_free(f);
        TC_SKIP("%s", why);
      }
      TC_CHECK(st == TC_OK, "%s: NVRTC for sm_90a: %s: %s\n%s", e->name, tc_status_name(st),
               tc_kernel_error(k), tc_kernel_source(k));
      built += st == TC_OK;
      tc_kernel_free(k);
    }
    tc_fusion_free(f);
  }
  printf("  NVRTC: %d of %d examples built for sm_90a\n", built, tc_example_count());
}

/* ---- a real device --------------------------------------------------------------- */

static void test_cuda_run_examples(void) {
  tc_str why;
  tc_str_init(&why);
  int have = tc_cuda_available(&why);
  char reason[512];
  snprintf(reason, sizeof reason, "%s", tc_str_cstr(&why));
  tc_str_free(&why);
  if (!have) TC_SKIP("%s", reason);
  for (int i = 0; i < tc_example_count() + NOWN; i++) {
    const char *name;
    tc_fusion *f;
    int64_t expect_smem = -1;
    if (i < tc_example_count()) {
      const tc_example *e = tc_example_get(i);
      name = e->name, f = e->build(), expect_smem = e->expect_smem;
    } else {
      name = own[i - tc_example_count()].name, f = own[i - tc_example_count()].build();
    }
    tc_kernel *k = compile_cuda(f, NULL, name);
    if (k) {
      void **got = tc_params_alloc(f, 3), **want = tc_params_alloc(f, 3);
      tc_status st = tc_kernel_run(k, got, NULL, NULL);
      TC_CHECK(st == TC_OK, "%s: CUDA run: %s: %s", name, tc_status_name(st), tc_kernel_error(k));
      if (st == TC_OK) {
        TC_CHECK(tc_reference_run(f, want) == TC_OK, "%s: reference", name);
        double err;
        TC_STR_LOCAL(msg);
        long bad = tc_outputs_compare(f, got, want, &err, &msg);
        TC_CHECK(bad == 0, "%s on CUDA: %ld bad elements: %s", name, bad, tc_str_cstr(&msg));
        if (expect_smem >= 0) TC_CHECK_EQ_INT(tc_kernel_smem_bytes(k), expect_smem);
      }
      tc_params_free(f, got), tc_params_free(f, want);
      tc_kernel_free(k);
    }
    tc_fusion_free(f);
  }
}

int main(void) {
  TC_RUN(test_nvcc_one_file_sm80_sm90a);
  TC_RUN(test_nvrtc_examples_sm90a);
  TC_RUN(test_cuda_run_examples);
  TC_MAIN_END();
}
