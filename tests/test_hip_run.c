/* test_hip_run.c - running HIP kernels (src/runtime/hip_run.c, hip_args.c),
 * on a machine with or without an AMD GPU.
 *
 *   - the argument buffer of a launch against kernel signatures: two
 *     written by hand with scalars (offsets, sizes and alignments derived
 *     by hand from the C layout of the parameters) and the ones the HIP
 *     dialect prints for fusions, the gridwise GEMM, the tile-IR GEMM and
 *     MoE kernels and a convolution plan with its zero-init kernel (every
 *     parameter a pointer: 8 bytes at 8 * i); where hipcc and llvm-readelf
 *     exist, the same offsets and sizes as the code object's metadata,
 *     which is where the HIP runtime copies each argument from;
 *   - the packed bytes, and the mistakes found before any device: a wrong
 *     buffer count, a by-value buffer of the wrong size, a kernel the
 *     source does not have, a type tilec cannot pass;
 *   - the HIP API values hip_run.c uses without HIP's headers, against
 *     hip_runtime_api.h where it is installed;
 *   - no HIP runtime (TILEC_HIP_RUNTIME naming no library, in a fresh
 *     process): "no AMD GPU: the HIP runtime (libamdhip64) cannot be
 *     loaded ..." and TC_ERR_NO_DEVICE from every run;
 *   - the runtime without a GPU: hipGetDeviceCount is reached and its
 *     error reported (the name and code this test gets from the library
 *     itself); every run says "no AMD GPU: ..." with TC_ERR_NO_DEVICE;
 *   - with an AMD GPU: a kernel taking pointers and scalars run, repeated
 *     and timed against a plain C result, and example fusions through
 *     tc_kernel_run against the reference. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "demo/examples.h"
#include "ir/fusion.h"
#include "ops/conv.h"
#include "ops/gemm.h"
#include "runtime/runtime.h"
#include "tile/tile_gemm.h"
#include "tile/passes.h"
#include "test.h"

#if defined(__has_include)
#if __has_include(<hip/hip_runtime_api.h>)
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>
#define HAVE_HIP_HEADER 1
#endif
#endif

static int has(const char *s, const char *part) { return s && strstr(s, part) != NULL; }
static int have_hipcc;

/* A kernel with scalars between pointers, after a decoy kernel and
 * comments or directives that mention __global__. */
static const char *mixed_src =
    "#include <hip/hip_runtime.h>\n"
    "#define TC_NOTE \"__global__ void kk(int x)\"\n"
    "/* __global__ void kk(char c) */\n"
    "// __global__ void kk(short s)\n"
    "extern \"C\" __global__ void kk_decoy(float* __restrict__ q) { q[0] = 1.0f; }\n"
    "extern \"C\" __global__ void __launch_bounds__(64) kk(const float* __restrict__ a, int n,\n"
    "    double x, short s, float* __restrict__ y) {\n"
    "  if ((int)threadIdx.x < n) y[threadIdx.x] = (float)(a[threadIdx.x] * x + s);\n"
    "}\n"
    "extern \"C\" __global__ void kk2(char c, long long v, float f, unsigned short h, double d,\n"
    "    int* __restrict__ out) {\n"
    "  out[0] = (int)(c + v + f + h + d);\n"
    "}\n";

static tc_hip_signature *parse_ok(const char *src, const char *kernel) {
  tc_hip_signature *s = calloc(1, sizeof *s);
  tc_str e;
  tc_str_init(&e);
  tc_status st = tc_hip_signature_parse(src, kernel, s, &e);
  TC_CHECK(st == TC_OK, "%s: %s: %s", kernel, tc_status_name(st), tc_str_cstr(&e));
  tc_str_free(&e);
  return s;
}

/* The layout by hand: each parameter at the next multiple of its size
 * (its alignment), pointers 8 bytes. */
static void test_signature_by_hand(void) {
  tc_hip_signature *s = parse_ok(mixed_src, "kk");
  static const struct {
    const char *type, *name;
    int pointer;
    size_t size, offset;
  } want[] = {{"const float*", "a", 1, 8, 0}, {"int", "n", 0, 4, 8}, {"double", "x", 0, 8, 16},
              {"short", "s", 0, 2, 24}, {"float*", "y", 1, 8, 32}};
  TC_REQUIRE(s->nparams == 5, "kk: %d parameters", s->nparams);
  for (int i = 0; i < 5; i++) {
    const tc_hip_param *p = &s->params[i];
    TC_CHECK(strcmp(p->type, want[i].type) == 0 && strcmp(p->name, want[i].name) == 0,
             "kk %d: '%s' '%s'", i, p->type, p->name);
    TC_CHECK(p->pointer == want[i].pointer && p->size == want[i].size &&
                 p->align == want[i].size && p->offset == want[i].offset,
             "kk %d: pointer %d size %zu align %zu offset %zu", i, p->pointer, p->size, p->align,
             p->offset);
  }
  TC_CHECK_EQ_INT(s->bytes, 40);

  /* pack: addresses for the pointers, the scalars' bytes, zero padding */
  int n = 7;
  double x = 2.5;
  short sh = -3;
  tc_rt_buffer bufs[5] = {{NULL, 64, 0}, {&n, 4, 0}, {&x, 8, 0}, {&sh, 2, 0}, {NULL, 64, 1}};
  uint64_t dev[5] = {0x1111222233334444ull, 0, 0, 0, 0x5555666677778888ull};
  unsigned char out[48];
  memset(out, 0xab, sizeof out);
  tc_str e;
  tc_str_init(&e);
  tc_status st = tc_hip_args_pack(s, bufs, 5, dev, out, sizeof out, &e);
  TC_CHECK(st == TC_OK, "pack: %s", tc_str_cstr(&e));
  uint64_t a = 0, y = 0;
  int gn = 0;
  double gx = 0;
  short gs = 0;
  memcpy(&a, out, 8), memcpy(&gn, out + 8, 4), memcpy(&gx, out + 16, 8);
  memcpy(&gs, out + 24, 2), memcpy(&y, out + 32, 8);
  TC_CHECK(a == dev[0] && y == dev[4], "pointers %llx %llx", (unsigned long long)a,
           (unsigned long long)y);
  TC_CHECK(gn == 7 && gx == 2.5 && gs == -3, "scalars %d %g %d", gn, gx, gs);
  for (int i = 12; i < 16; i++) TC_CHECK(out[i] == 0, "padding byte %d = %d", i, out[i]);
  for (int i = 26; i < 32; i++) TC_CHECK(out[i] == 0, "padding byte %d = %d", i, out[i]);
  TC_CHECK(out[40] == 0xab, "wrote past the 40 bytes");
  tc_str_free(&e);
  free(s);

  /* char@0, long long@8, float@16, unsigned short@20, double@24, int*@32 */
  s = parse_ok(mixed_src, "kk2");
  size_t off[6] = {0, 8, 16, 20, 24, 32}, size[6] = {1, 8, 4, 2, 8, 8};
  TC_REQUIRE(s->nparams == 6, "kk2: %d parameters", s->nparams);
  for (int i = 0; i < 6; i++)
    TC_CHECK(s->params[i].offset == off[i] && s->params[i].size == size[i],
             "kk2 %d (%s): offset %zu size %zu", i, s->params[i].type, s->params[i].offset,
             s->params[i].size);
  TC_CHECK_STR(s->params[3].type, "unsigned short");
  TC_CHECK_EQ_INT(s->bytes, 40);
  free(s);
  s = parse_ok("extern \"C\" __global__ void none() {}\n"
               "extern \"C\" __global__ void nothing(void) {}\n", "nothing");
  TC_CHECK(s->nparams == 0 && s->bytes == 0, "(void): %d parameters", s->nparams);
  free(s);
}

static void test_signature_errors(void) {
  tc_hip_signature s;
  tc_str e;
  tc_str_init(&e);
  tc_status st = tc_hip_signature_parse(mixed_src, "kk3", &s, &e);
  TC_CHECK(st == TC_ERR_COMPILE && has(tc_str_cstr(&e), "no __global__ kernel named 'kk3'"),
           "%s: %s", tc_status_name(st), tc_str_cstr(&e));
  tc_str_clear(&e);
  st = tc_hip_signature_parse("extern \"C\" __global__ void k(struct pair p, int* q) {}", "k", &s,
                              &e);
  TC_CHECK(st == TC_ERR_UNSUPPORTED && has(tc_str_cstr(&e), "parameter 0 (struct pair p)"),
           "%s: %s", tc_status_name(st), tc_str_cstr(&e));
  tc_str_clear(&e);
  st = tc_hip_signature_parse("extern \"C\" __global__ void k(int* q", "k", &s, &e);
  TC_CHECK(st == TC_ERR_COMPILE && has(tc_str_cstr(&e), "does not end"), "%s: %s",
           tc_status_name(st), tc_str_cstr(&e));
  tc_str_clear(&e);
  TC_REQUIRE(tc_hip_signature_parse(mixed_src, "kk", &s, &e) == TC_OK, "%s", tc_str_cstr(&e));
  int n = 1;
  double x = 1;
  short sh = 1;
  unsigned char out[64];
  uint64_t dev[5] = {0};
  tc_rt_buffer bufs[5] = {{NULL, 4, 0}, {&n, 4, 0}, {&x, 8, 0}, {&sh, 2, 0}, {NULL, 4, 1}};
  st = tc_hip_args_pack(&s, bufs, 4, dev, out, sizeof out, &e);
  TC_CHECK(st == TC_ERR_ARGUMENT && has(tc_str_cstr(&e), "takes 5 parameters but the launch gives 4"),
           "%s: %s", tc_status_name(st), tc_str_cstr(&e));
  tc_str_clear(&e);
  bufs[2].bytes = 4; /* a double passed from a 4-byte buffer */
  st = tc_hip_args_pack(&s, bufs, 5, dev, out, sizeof out, &e);
  TC_CHECK(st == TC_ERR_ARGUMENT && has(tc_str_cstr(&e), "parameter 2 (double x)") &&
               has(tc_str_cstr(&e), "its 8 bytes, not 4"),
           "%s: %s", tc_status_name(st), tc_str_cstr(&e));
  tc_str_clear(&e);
  bufs[2].bytes = 8;
  st = tc_hip_args_pack(&s, bufs, 5, dev, out, 39, &e);
  TC_CHECK(st == TC_ERR_ARGUMENT, "a 39-byte buffer: %s", tc_status_name(st));
  tc_str_free(&e);
}

/* ---- the signatures the HIP dialect prints ------------------------------------ */

/* Kernels whose signatures are checked, and compiled for the metadata test. */
typedef struct printed {
  char name[64];
  char *source;
  int nparams;
  char types[8][40]; /* expected, as printed */
} printed;
#define MAX_KERNELS 64
static printed kernels[MAX_KERNELS];
static int nkernels;

/* Records a kernel; every caller adds a few, far from MAX_KERNELS. */
static printed *add_kernel(const char *name, const char *source) {
  if (nkernels >= MAX_KERNELS) abort();
  printed *k = &kernels[nkernels++];
  snprintf(k->name, sizeof k->name, "%s", name);
  k->source = strdup(source);
  return k;
}

/* The storage type of a buffer of dtype t, by hand from the HIP dialect's
 * documentation (docs/amd.md: f16 and bf16 stored as unsigned short). */
static const char *storage(tc_dtype t) {
  return t == TC_F32 ? "float" : t == TC_I32 ? "int" : t == TC_I8 ? "signed char" : "unsigned short";
}

static void check_all_pointers(const printed *k) {
  tc_hip_signature *s = parse_ok(k->source, k->name);
  TC_CHECK(s->nparams == k->nparams, "%s: %d parameters, want %d", k->name, s->nparams, k->nparams);
  for (int i = 0; i < s->nparams && i < k->nparams; i++) {
    const tc_hip_param *p = &s->params[i];
    TC_CHECK(p->pointer && p->size == 8 && p->align == 8 && p->offset == (size_t)(8 * i),
             "%s parameter %d (%s %s): pointer %d size %zu offset %zu", k->name, i, p->type,
             p->name, p->pointer, p->size, p->offset);
    if (k->types[i][0])
      TC_CHECK(strcmp(p->type, k->types[i]) == 0, "%s parameter %d: '%s', want '%s'", k->name, i,
               p->type, k->types[i]);
  }
  TC_CHECK(s->bytes == (size_t)(8 * k->nparams), "%s: %zu bytes", k->name, s->bytes);
  free(s);
}

static void fusion_kernels(void) {
  static const char *names[] = {"gsg_copy_6", "pointwise_fma", "cast_f16", "cast_bf16",
                                "transpose_xor"};
  for (size_t j = 0; j < sizeof names / sizeof *names; j++) {
    const tc_example *e = tc_example_find(names[j]);
    TC_REQUIRE(e != NULL, "no example %s", names[j]);
    tc_fusion *f = e->build();
    tc_compile_options o = {TC_TARGET_HIP, "gfx90a", e->name};
    tc_status st;
    tc_kernel *k = tc_compile(f, &o, &st);
    TC_CHECK(k != NULL, "%s: %s", e->name, tc_fusion_error(f));
    if (k) {
      printed *p = add_kernel(e->name, tc_kernel_source(k));
      p->nparams = f->ninputs + f->noutputs;
      TC_CHECK(p->nparams == tc_kernel_nparams(k) && p->nparams <= 8, "%s: %d parameters",
               e->name, p->nparams);
      for (int i = 0; i < p->nparams && i < 8; i++) {
        const tc_tensor *t = i < f->ninputs ? f->inputs[i] : f->outputs[i - f->ninputs];
        snprintf(p->types[i], sizeof p->types[i], "%s%s*", i < f->ninputs ? "const " : "",
                 storage(t->dtype));
      }
      tc_kernel_free(k);
    }
    tc_fusion_free(f);
  }
}

static void gemm_kernels(void) {
  static const struct {
    const char *cfg, *name;
    tc_dtype t;
  } g[] = {{"64,32,32,8,2,2", "gemm_fma_f32", TC_F32}, {"xdlops:64,64,16,32,32", "gemm_mfma_bf16", TC_BF16}};
  for (size_t j = 0; j < sizeof g / sizeof *g; j++) {
    int64_t ea[3] = {1, 64, 96}, sa[3] = {96 * 64, 1, 64};
    int64_t eb[3] = {1, 64, 64}, sb[3] = {64 * 64, 64, 1};
    int64_t ec[3] = {1, 96, 64}, sc[3] = {96 * 64, 64, 1};
    tc_view *a = tc_view_new(3, ea, sa, NULL), *b = tc_view_new(3, eb, sb, NULL),
            *c = tc_view_new(3, ec, sc, NULL);
    tc_gemm_problem pb = {a, b, c, g[j].t, g[j].t, TC_F32, 0, 1.0f};
    tc_gemm_shape s = tc_gemm_problem_shape(&pb);
    tc_gemm_params prm;
    TC_STR_LOCAL(err);
    tc_gemm_kernel k;
    int ok = tc_gemm_params_parse(g[j].cfg, &prm, &err) == 0 &&
             tc_gemm_params_derive(&prm, &s, &err) == 0 &&
             tc_gemm_generate(&pb, &prm, TC_TARGET_HIP, g[j].name, &k, &err) == TC_OK;
    TC_CHECK(ok, "%s: %s", g[j].cfg, tc_str_cstr(&err));
    if (ok) {
      printed *p = add_kernel(g[j].name, k.source);
      p->nparams = 3;
      snprintf(p->types[0], sizeof p->types[0], "const %s*", storage(g[j].t));
      snprintf(p->types[1], sizeof p->types[1], "const %s*", storage(g[j].t));
      snprintf(p->types[2], sizeof p->types[2], "float*");
      tc_gemm_kernel_free(&k);
    }
    tc_view_free(a), tc_view_free(b), tc_view_free(c);
  }
}

/* The tile-IR GEMM (A, B, C, tc_args) and MoE (A, B, C,
 * sorted_token_ids, tc_args) kernels. */
static void tile_kernels(void) {
  for (int moe = 0; moe < 2; moe++) {
    tc_tile_gemm_desc d;
    tc_tile_gemm_desc_init(&d, 64, 32, 64);
    d.moe = moe;
    if (moe) d.tokens = 40, d.num_valid = 29;
    TC_STR_LOCAL(why);
    TC_REQUIRE(tc_tile_gemm_resolve(&d, &why) == 0, "%s", tc_str_cstr(&why));
    const char *name = moe ? "tile_moe" : "tile_gemm";
    tc_tile_kernel *kern = tc_tile_gemm_build(&d, name, &why);
    TC_REQUIRE(kern, "%s: %s", name, tc_str_cstr(&why));
    tc_tile_pass_options po;
    tc_tile_pass_options_default(&po);
    tc_tile_run_passes(kern, &po);
    tc_tile_emitted em;
    memset(&em, 0, sizeof em);
    tc_status st = tc_tile_emit(kern, tc_tile_dialect(TC_TARGET_HIP), &em, &why);
    TC_CHECK(st == TC_OK, "%s: %s", name, tc_str_cstr(&why));
    if (st == TC_OK) {
      printed *p = add_kernel(name, em.source);
      p->nparams = moe ? 5 : 4;
      TC_CHECK(em.nparams == p->nparams, "%s: %d parameters emitted", name, em.nparams);
      const char *types[5] = {"const float*", "const float*", "float*", "const int*", "const int*"};
      for (int i = 0; i < p->nparams; i++)
        snprintf(p->types[i], sizeof p->types[i], "%s", types[moe || i < 3 ? i : 4]);
    }
    tc_tile_emitted_free(&em);
    tc_tile_kernel_free(kern);
  }
}

/* A backward-data convolution with a 1x1 filter and stride 2: its GEMM
 * and the zero-init kernel, whose one parameter has no __restrict__. */
static void conv_kernels(void) {
  tc_conv_problem p;
  tc_conv_problem_init(&p);
  p.dir = TC_CONV_BWD_DATA; /* 1x1 filter, stride 2: the odd rows and columns of the input
                              gradient get nothing but the zero-init */
  p.n = 2, p.c = 8, p.h = p.w = 10, p.k = 16, p.y = p.x = 1;
  p.stride_h = p.stride_w = 2;
  tc_conv_plan *plan = NULL;
  TC_STR_LOCAL(err);
  TC_REQUIRE(tc_conv_plan_make(&p, NULL, TC_TARGET_HIP, &plan, &err) == TC_OK, "%s", tc_str_cstr(&err));
  int zero = 0;
  for (int i = 0; i < plan->nsteps; i++) {
    const tc_gemm_kernel *k = &plan->steps[i].kernel;
    printed *pk = add_kernel(k->name, k->source);
    pk->nparams = plan->steps[i].nargs;
    if (strcmp(k->name, "tilec_conv_zero") == 0) {
      zero = 1;
      TC_CHECK(pk->nparams == 1, "zero-init: %d arguments", pk->nparams);
      snprintf(pk->types[0], sizeof pk->types[0], "unsigned int*");
    }
  }
  TC_CHECK(zero, "no zero-init kernel in the plan");
  tc_conv_plan_free(plan);
}

static void test_dialect_signatures(void) {
  fusion_kernels();
  gemm_kernels();
  tile_kernels();
  conv_kernels();
  TC_CHECK(nkernels >= 11, "%d kernels", nkernels); /* 5 fusions, 2 GEMMs, 2 tile, 2 conv */
  for (int i = 0; i < nkernels; i++) check_all_pointers(&kernels[i]);
}

/* ---- the code object's metadata ------------------------------------------------ */

/* The amdgcn ELF in a clang offload bundle (or co itself when it is one). */
static const char *bundle_elf(const char *co, size_t n, size_t *elf_n) {
  if (n >= 4 && memcmp(co, "\177ELF", 4) == 0) return *elf_n = n, co;
  if (n < 32 || memcmp(co, "__CLANG_OFFLOAD_BUNDLE__", 24) != 0) return NULL;
  uint64_t count;
  memcpy(&count, co + 24, 8);
  size_t at = 32;
  for (uint64_t i = 0; i < count && at + 24 <= n; i++) {
    uint64_t off, size, tlen;
    memcpy(&off, co + at, 8), memcpy(&size, co + at + 8, 8), memcpy(&tlen, co + at + 16, 8);
    at += 24;
    if (tlen > n - at) return NULL;
    int amd = 0;
    for (size_t j = 0; j + 6 <= tlen; j++) amd |= memcmp(co + at + j, "amdgcn", 6) == 0;
    at += tlen;
    if (amd && off <= n && size <= n - off) return *elf_n = size, co + off;
  }
  return NULL;
}

/* `llvm-readelf --notes` of the ELF (NULL where no llvm-readelf runs). */
static char *readelf_notes(const char *elf, size_t n) {
  char path[] = "/tmp/tilec-test-hip-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return NULL;
  int ok = write(fd, elf, n) == (ssize_t)n;
  close(fd);
  static const char *tools[] = {"llvm-readelf", "/opt/rocm/llvm/bin/llvm-readelf"};
  char *text = NULL;
  for (size_t t = 0; ok && t < sizeof tools / sizeof *tools && !text; t++) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s --notes %s 2>/dev/null", tools[t], path);
    FILE *p = popen(cmd, "r");
    if (!p) continue;
    tc_str s;
    tc_str_init(&s);
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, p)) > 0) tc_str_catn(&s, buf, got);
    pclose(p);
    if (has(tc_str_cstr(&s), "amdhsa.kernels")) text = tc_str_take(&s);
    else tc_str_free(&s);
  }
  unlink(path);
  return text;
}

/* The explicit arguments of kernel `name` in the metadata: offsets, sizes
 * and whether each is a global buffer.  Returns their number, -1 when the
 * kernel is not there. */
static int meta_args(const char *notes, const char *name, size_t *off, size_t *size, int *buffer,
                     int cap) {
  int n = 0, found = -1, in_args = 0, hidden = 0;
  char kname[128] = "";
  const char *l = strstr(notes, "\namdhsa.kernels:");
  if (!l) return -1;
  l += strlen("\namdhsa.kernels:");
  while (*l) {
    size_t len = strcspn(l, "\n");
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)(len < 511 ? len : 511), l);
    l += len + (l[len] == '\n');
    int kernel_item = strncmp(line, "  - ", 4) == 0, end = strncmp(line, "amdhsa.", 7) == 0;
    if (kernel_item || end) { /* a kernel's block ends */
      if (strcmp(kname, name) == 0) found = n;
      if (found >= 0 || end) break;
      n = 0, in_args = 0, kname[0] = 0;
    }
    if (strncmp(line, "    .", 5) == 0 || kernel_item) {
      const char *key = line + (kernel_item ? 4 : 4);
      in_args = strncmp(key, ".args:", 6) == 0;
      if (strncmp(key, ".name:", 6) == 0) sscanf(key + 6, " %127s", kname);
      continue;
    }
    if (!in_args) continue;
    const char *kv = NULL;
    if (strncmp(line, "      - ", 8) == 0) {
      if (n < cap && !hidden) n++;
      hidden = 0;
      kv = line + 8;
      if (n <= cap) off[n - 1] = size[n - 1] = 0, buffer[n - 1] = 0;
    } else if (strncmp(line, "        .", 9) == 0) {
      kv = line + 8;
    }
    if (!kv || n == 0 || n > cap) continue;
    unsigned long v;
    char word[64];
    if (sscanf(kv, ".offset: %lu", &v) == 1) off[n - 1] = v;
    if (sscanf(kv, ".size: %lu", &v) == 1) size[n - 1] = v;
    if (sscanf(kv, ".value_kind: %63s", word) == 1) {
      buffer[n - 1] = strcmp(word, "global_buffer") == 0;
      if (strncmp(word, "hidden_", 7) == 0) hidden = 1, n--; /* the runtime's own */
    }
  }
  return found;
}

/* hipcc's metadata of each kernel against tc_hip_signature_parse. */
static void check_metadata(const char *what, const char *src, const char *const *names, int count) {
  char *co = NULL;
  size_t co_n = 0, elf_n = 0;
  tc_str e;
  tc_str_init(&e);
  tc_status st = tc_hip_compile(src, "gfx90a", &co, &co_n, &e);
  TC_CHECK(st == TC_OK, "%s: %s: %.2000s", what, tc_status_name(st), tc_str_cstr(&e));
  tc_str_free(&e);
  const char *elf = co ? bundle_elf(co, co_n, &elf_n) : NULL;
  TC_CHECK(!co || elf, "%s: no amdgcn code object in hipcc's output", what);
  char *notes = elf ? readelf_notes(elf, elf_n) : NULL;
  if (elf && !notes) printf("  (no llvm-readelf: %s's metadata not compared)\n", what);
  for (int i = 0; notes && i < count; i++) {
    size_t off[64], size[64];
    int buffer[64];
    int n = meta_args(notes, names[i], off, size, buffer, 64);
    tc_hip_signature *s = parse_ok(src, names[i]);
    TC_CHECK(n == s->nparams, "%s: the metadata lists %d arguments, tilec reads %d", names[i], n,
             s->nparams);
    for (int a = 0; a < n && a < s->nparams; a++)
      TC_CHECK(off[a] == s->params[a].offset && size[a] == s->params[a].size &&
                   buffer[a] == s->params[a].pointer,
               "%s argument %d (%s): metadata offset %zu size %zu buffer %d; tilec %zu %zu %d",
               names[i], a, s->params[a].type, off[a], size[a], buffer[a], s->params[a].offset,
               s->params[a].size, s->params[a].pointer);
    free(s);
  }
  free(notes);
  free(co);
}

static void test_metadata(void) {
  if (!have_hipcc) TC_SKIP("hipcc not found (apt-get install hipcc libamdhip64-dev rocm-device-libs)");
  const char *mixed[] = {"kk", "kk2", "kk_decoy"};
  check_metadata("the kernels with scalars", mixed_src, mixed, 3);
  /* each printed kernel in its own translation unit (their preludes
   * repeat) */
  for (int i = 0; i < nkernels; i++) {
    const char *name = kernels[i].name;
    check_metadata(name, kernels[i].source, &name, 1);
  }
}

/* ---- the HIP API values ------------------------------------------------------ */

static void test_api_values(void) {
#ifdef HAVE_HIP_HEADER
  TC_CHECK_EQ_INT(TC_HIP_ATTR_MAX_THREADS_PER_BLOCK, hipDeviceAttributeMaxThreadsPerBlock);
  TC_CHECK_EQ_INT(TC_HIP_ATTR_MULTIPROCESSOR_COUNT, hipDeviceAttributeMultiprocessorCount);
  TC_CHECK_EQ_INT(TC_HIP_ATTR_MAX_SHARED_PER_BLOCK, hipDeviceAttributeMaxSharedMemoryPerBlock);
  TC_CHECK_EQ_INT(TC_HIP_ATTR_WARP_SIZE, hipDeviceAttributeWarpSize);
  TC_CHECK_EQ_INT(TC_HIP_FUNC_ATTR_SHARED_SIZE, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  TC_CHECK_EQ_INT(TC_HIP_ERROR_NO_DEVICE, hipErrorNoDevice);
  TC_CHECK(TC_HIP_LAUNCH_PARAM_BUFFER_POINTER == HIP_LAUNCH_PARAM_BUFFER_POINTER &&
               TC_HIP_LAUNCH_PARAM_BUFFER_SIZE == HIP_LAUNCH_PARAM_BUFFER_SIZE &&
               TC_HIP_LAUNCH_PARAM_END == HIP_LAUNCH_PARAM_END,
           "HIP_LAUNCH_PARAM_*");
#if HIP_VERSION_MAJOR >= 6
  TC_CHECK_EQ_INT(TC_HIP_PROPS_ARCH_NAME_R0600, offsetof(hipDeviceProp_t, gcnArchName));
#else
  TC_CHECK_EQ_INT(TC_HIP_PROPS_ARCH_NAME_R0000, offsetof(hipDeviceProp_t, gcnArchName));
#endif
  TC_CHECK(sizeof(hipDeviceProp_t) <= TC_HIP_PROPS_BYTES, "hipDeviceProp_t: %zu bytes",
           sizeof(hipDeviceProp_t));
#else
  TC_SKIP("hip/hip_runtime_api.h not installed");
#endif
}

/* ---- without a GPU, without the runtime --------------------------------------- */

static const char *axpy_src =
    "extern \"C\" __global__ void axpy(const float* __restrict__ x, float* __restrict__ y,\n"
    "                                  float a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

/* In a process started with TILEC_HIP_RUNTIME=/nonexistent/libamdhip64.so. */
static int library_absent_child(void) {
  const char *want = "no AMD GPU: the HIP runtime (libamdhip64) cannot be loaded (tried "
                     "/nonexistent/libamdhip64.so: ";
  tc_str m, err;
  tc_str_init(&m);
  tc_str_init(&err);
  TC_CHECK(!tc_hip_available(&m), "a HIP runtime was loaded");
  TC_CHECK(strncmp(tc_str_cstr(&m), want, strlen(want)) == 0, "message: %s", tc_str_cstr(&m));
  TC_CHECK(has(tc_str_cstr(&m), "TILEC_HIP_RUNTIME names it"), "no advice: %s", tc_str_cstr(&m));
  TC_CHECK(tc_hip_device_arch() == NULL, "an arch without a runtime");
  float x[4] = {1, 2, 3, 4}, y[4] = {0};
  float a = 2;
  int n = 4;
  tc_rt_buffer bufs[4] = {{x, sizeof x, 0}, {y, sizeof y, 1}, {&a, 4, 0}, {&n, 4, 0}};
  tc_launch l = {.grid = {1, 1, 1}, .block = {64, 1, 1}};
  tc_status st = tc_hip_run(axpy_src, "axpy", NULL, bufs, 4, &l, NULL, &err);
  TC_CHECK(st == TC_ERR_NO_DEVICE && strcmp(tc_str_cstr(&err), tc_str_cstr(&m)) == 0, "run: %s: %s",
           tc_status_name(st), tc_str_cstr(&err));
  tc_str d;
  tc_str_init(&d);
  tc_hip_describe(&d);
  TC_CHECK(has(tc_str_cstr(&d), "HIP device: no AMD GPU: the HIP runtime (libamdhip64) cannot be loaded") &&
               !has(tc_str_cstr(&d), "HIP runtime: "),
           "%s", tc_str_cstr(&d));
  tc_str_free(&d);
  tc_str_free(&m);
  tc_str_free(&err);
  return tc_test_failed_checks ? 1 : 0;
}

static void test_library_absent(void) {
  pid_t pid = fork();
  TC_REQUIRE(pid >= 0, "fork failed");
  if (pid == 0) {
    setenv("TILEC_HIP_RUNTIME", "/nonexistent/libamdhip64.so", 1);
    char *argv[] = {"test_hip_run", "--library-absent", NULL};
    execv("/proc/self/exe", argv);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  TC_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the process without a HIP runtime: "
           "status %d (its failures are above)", status);
}

typedef int (*count_fn)(int *);
typedef const char *(*name_fn)(int);

static void test_no_device(void) {
  tc_str m, err;
  tc_str_init(&m);
  tc_str_init(&err);
  if (tc_hip_available(&m)) {
    tc_str_free(&m);
    tc_str_free(&err);
    TC_SKIP("an AMD GPU is present");
  }
  TC_CHECK(strncmp(tc_str_cstr(&m), "no AMD GPU: ", 12) == 0, "%s", tc_str_cstr(&m));
  TC_CHECK(tc_hip_device_arch() == NULL, "an arch without a GPU");
  /* what hipGetDeviceCount says here, asked directly */
  void *lib = dlopen("libamdhip64.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL);
  if (lib && !getenv("TILEC_HIP_RUNTIME")) {
    count_fn count = (count_fn)(uintptr_t)dlsym(lib, "hipGetDeviceCount");
    name_fn name = (name_fn)(uintptr_t)dlsym(lib, "hipGetErrorName");
    int nd = -1, rc = count ? count(&nd) : -1;
    char want[256];
    if (rc != 0)
      snprintf(want, sizeof want, "no AMD GPU: hipGetDeviceCount failed: %s (%d); ",
               name ? name(rc) : "?", rc);
    else
      snprintf(want, sizeof want, "no AMD GPU: hipGetDeviceCount reports 0 devices; ");
    TC_CHECK(strncmp(tc_str_cstr(&m), want, strlen(want)) == 0, "message: %s\nwant: %s...",
             tc_str_cstr(&m), want);
    if (access("/dev/kfd", F_OK) != 0)
      TC_CHECK(has(tc_str_cstr(&m), "/dev/kfd not found"), "%s", tc_str_cstr(&m));
    tc_str d;
    tc_str_init(&d);
    tc_hip_describe(&d);
    TC_CHECK(has(tc_str_cstr(&d), "HIP runtime: ") && has(tc_str_cstr(&d), "HIP device: no AMD GPU: "),
             "%s", tc_str_cstr(&d));
    tc_str_free(&d);
    dlclose(lib);
  } else {
    printf("  (libamdhip64 not loadable here: hipGetDeviceCount not compared)\n");
  }
  /* a run: mistakes in the arguments first (no device needed), then "no AMD GPU" */
  float x[64], y[64];
  float a = 2;
  int n = 64;
  for (int i = 0; i < 64; i++) x[i] = (float)i, y[i] = 1;
  tc_rt_buffer bufs[4] = {{x, sizeof x, 0}, {y, sizeof y, 1}, {&a, 4, 0}, {&n, 4, 0}};
  double times[3] = {-1, -1, -1};
  tc_launch l = {.grid = {1, 1, 1}, .block = {64, 1, 1}, .repeat = 3, .repeat_ms = times};
  tc_status st = tc_hip_run(axpy_src, "axpy", NULL, bufs, 3, &l, NULL, &err);
  TC_CHECK(st == TC_ERR_ARGUMENT && has(tc_str_cstr(&err), "takes 4 parameters but the launch gives 3"),
           "3 buffers: %s: %s", tc_status_name(st), tc_str_cstr(&err));
  tc_str_clear(&err);
  bufs[2].bytes = 8;
  st = tc_hip_run(axpy_src, "axpy", NULL, bufs, 4, &l, NULL, &err);
  TC_CHECK(st == TC_ERR_ARGUMENT && has(tc_str_cstr(&err), "parameter 2 (float a)"),
           "an 8-byte float: %s: %s", tc_status_name(st), tc_str_cstr(&err));
  tc_str_clear(&err);
  bufs[2].bytes = 4;
  st = tc_hip_run(axpy_src, "saxpy", NULL, bufs, 4, &l, NULL, &err);
  TC_CHECK(st == TC_ERR_COMPILE && has(tc_str_cstr(&err), "no __global__ kernel named 'saxpy'"),
           "a kernel not in the source: %s: %s", tc_status_name(st), tc_str_cstr(&err));
  tc_str_clear(&err);
  double ms = -1;
  st = tc_hip_run(axpy_src, "axpy", NULL, bufs, 4, &l, &ms, &err);
  TC_CHECK(st == TC_ERR_NO_DEVICE && strcmp(tc_str_cstr(&err), tc_str_cstr(&m)) == 0, "run: %s: %s",
           tc_status_name(st), tc_str_cstr(&err));
  TC_CHECK(ms == 0 && times[0] == 0 && times[1] == 0 && times[2] == 0, "times written: %g %g", ms,
           times[0]);
  for (int i = 0; i < 64; i++) TC_CHECK(y[i] == 1, "y[%d] = %g: something ran", i, y[i]);
  /* tc_kernel_run of a fusion compiled for HIP */
  const tc_example *e = tc_example_find("pointwise_fma");
  TC_REQUIRE(e != NULL, "no example");
  tc_fusion *f = e->build();
  tc_compile_options o = {TC_TARGET_HIP, NULL, "fma_hip"};
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_REQUIRE(k != NULL, "%s", tc_fusion_error(f));
  void **args = tc_params_alloc(f, 1);
  st = tc_kernel_run(k, args, NULL, &ms);
  TC_CHECK(st == TC_ERR_NO_DEVICE && strcmp(tc_kernel_error(k), tc_str_cstr(&m)) == 0, "%s: %s",
           tc_status_name(st), tc_kernel_error(k));
  tc_params_free(f, args);
  tc_kernel_free(k);
  tc_fusion_free(f);
  tc_str_free(&m);
  tc_str_free(&err);
}

/* ---- with an AMD GPU ----------------------------------------------------------- */

static void test_device_run(void) {
  tc_hip_device d;
  tc_str why, err;
  tc_str_init(&why);
  tc_str_init(&err);
  if (!tc_hip_device_get(&d, &why)) {
    char reason[1600];
    snprintf(reason, sizeof reason, "%s", tc_str_cstr(&why));
    tc_str_free(&why);
    tc_str_free(&err);
    TC_SKIP("%s", reason);
  }
  TC_CHECK(strncmp(d.arch, "gfx", 3) == 0 && d.warp > 0 && d.lds_bytes > 0 && d.compute_units > 0,
           "%s: %s, wavefront %d, %d bytes of LDS, %d CUs", d.name, d.arch, d.warp, d.lds_bytes,
           d.compute_units);
  TC_CHECK_STR(tc_hip_device_arch(), d.arch);
  enum { N = 1000 };
  float x[N], y[N], ref[N], a = 1.5f;
  int n = N;
  tc_rt_buffer bufs[4] = {{x, sizeof x, 0}, {y, sizeof y, 1}, {&a, 4, 0}, {&n, 4, 0}};
  double times[40];
  const int repeats[3] = {0, 3, 40};
  for (int c = 0; c < 3; c++) {
    for (int i = 0; i < N; i++) x[i] = (float)i, y[i] = (float)(N - i), ref[i] = a * x[i] + y[i];
    for (int i = 0; i < 40; i++) times[i] = -1;
    tc_launch l = {.grid = {16, 1, 1}, .block = {64, 1, 1}, .repeat = repeats[c],
                   .repeat_ms = repeats[c] ? times : NULL};
    double ms = -1;
    tc_str_clear(&err);
    /* y = a * x + y reads what it writes: y must be one launch's result */
    tc_status st = tc_hip_run(axpy_src, "axpy", NULL, bufs, 4, &l, &ms, &err);
    TC_CHECK(st == TC_OK, "repeat %d: %s: %s", repeats[c], tc_status_name(st), tc_str_cstr(&err));
    if (st != TC_OK) continue;
    int bad = 0;
    for (int i = 0; i < N; i++) bad += fabsf(y[i] - ref[i]) > 1e-4f;
    TC_CHECK(bad == 0, "repeat %d: %d results differ from one launch's", repeats[c], bad);
    TC_CHECK(ms >= 0, "ms = %g", ms);
    for (int i = 0; i < repeats[c]; i++)
      TC_CHECK(times[i] > 0 && times[i] < 1000, "repeat %d: repeat_ms[%d] = %g", repeats[c], i,
               times[i]);
  }
  /* example fusions through the C API, against the reference */
  static const char *names[] = {"gsg_copy_6", "pointwise_fma", "cast_f16", "transpose"};
  for (size_t j = 0; j < sizeof names / sizeof *names; j++) {
    const tc_example *e = tc_example_find(names[j]);
    TC_REQUIRE(e != NULL, "no example %s", names[j]);
    tc_fusion *f = e->build();
    tc_compile_options o = {TC_TARGET_HIP, NULL, e->name};
    tc_status st;
    tc_kernel *k = tc_compile(f, &o, &st);
    TC_CHECK(k != NULL, "%s: %s", e->name, tc_fusion_error(f));
    if (k) {
      void **got = tc_params_alloc(f, 1), **want = tc_params_alloc(f, 1);
      double ms = 0, max_err = 0;
      TC_STR_LOCAL(msg);
      st = tc_kernel_run(k, got, NULL, &ms);
      TC_CHECK(st == TC_OK, "%s: %s: %s", e->name, tc_status_name(st), tc_kernel_error(k));
      if (st == TC_OK) {
        tc_reference_run(f, want);
        TC_CHECK(tc_outputs_compare(f, got, want, &max_err, &msg) == 0, "%s: %s",
                 e->name, tc_str_cstr(&msg));
      }
      tc_params_free(f, got), tc_params_free(f, want);
      tc_kernel_free(k);
    }
    tc_fusion_free(f);
  }
  tc_str_free(&why);
  tc_str_free(&err);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--library-absent") == 0) return library_absent_child();
  char hipcc[4096];
  have_hipcc = tc_hip_find_hipcc(hipcc, sizeof hipcc);
  TC_RUN(test_signature_by_hand);
  TC_RUN(test_signature_errors);
  TC_RUN(test_dialect_signatures);
  TC_RUN(test_metadata);
  TC_RUN(test_api_values);
  TC_RUN(test_library_absent);
  TC_RUN(test_no_device);
  TC_RUN(test_device_run);
  for (int i = 0; i < nkernels; i++) free(kernels[i].source);
  TC_MAIN_END();
}
