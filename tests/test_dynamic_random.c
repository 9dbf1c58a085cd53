/* test_dynamic_random.c - one kernel for many shapes, on random fusions:
 * pointwise chains, row reductions (with ops after them), matmuls with an
 * epilogue and column reductions (over M itself: a serial loop to M's
 * parameter), their leading extent M a size variable (tc_input_sym),
 * scheduled by tc_schedule_auto.  Each is made a kernel family
 * (tc_kernel_family) and run on PoCL at 13 values of M (1, primes,
 * multiples of the tiles, 2048), each compared with tc_reference_run on
 * the same recipe built with M fixed; each family compiles the fusion
 * once per divisor it tries (16, 8, 4 and 1) and keeps a kernel per
 * distinct code (one for the GEMMs). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "tilec/tilec.h"

static const int64_t Ms[] = {1, 2, 3, 7, 13, 16, 31, 64, 127, 128, 257, 1000, 2048};
#define NM ((int)(sizeof Ms / sizeof Ms[0]))
#define NFUSIONS 16

/* a recipe: what the generator drew */
typedef struct recipe {
  int kind;           /* 0 pointwise, 1 row reduction, 2 matmul + epilogue,
                         3 column reduction (over M) */
  int64_t n, k;       /* row length (N), and K for the matmul */
  int nin;            /* tensor inputs of M rows (pointwise, reduction) */
  int nops, op[6], arg[6];
  int red, after;     /* reduction: max or sum; after: 0 the reduction, 1 x - r, 2 x / r */
  int bias, relu, residual;
  double scale;
} recipe;

static uint64_t rng;
static int draw(int n) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (int)((rng >> 33) % (uint64_t)n);
}

static recipe make_recipe(int i) {
  recipe r;
  memset(&r, 0, sizeof r);
  static const int64_t ns[] = {1, 5, 37, 128, 200};
  r.kind = i % 4;
  r.n = ns[draw(5)];
  r.k = 1 + draw(48);
  r.nin = 1 + draw(3);
  r.nops = 1 + draw(5);
  for (int j = 0; j < r.nops; j++) r.op[j] = draw(8), r.arg[j] = draw(r.nin);
  r.red = draw(2), r.after = draw(3);
  r.bias = draw(2), r.relu = draw(2), r.residual = draw(2);
  r.scale = 0.25 * (1 + draw(8));
  return r;
}

/* The recipe as a fusion: M the size variable of divisor div (m 0), or
 * fixed at m; its output (NULL after a failure, recorded on f). */
static tc_tensor *build(tc_fusion *f, const recipe *r, int64_t m, int64_t div, tc_tensor **ins, int *nins) {
  int64_t s2[2] = {m ? m : -1, r->n};
  tc_tensor *in[3];
  *nins = 0;
  if (r->kind == 2) {
    int64_t sa[2] = {m ? m : 1 << 16, r->k}, sb[2] = {r->k, r->n};
    tc_tensor *a = m ? tc_input(f, TC_F32, 2, sa) : tc_input_sym(f, TC_F32, 2, sa, "M", div);
    tc_tensor *b = tc_input(f, TC_F32, 2, sb);
    ins[(*nins)++] = a, ins[(*nins)++] = b;
    tc_tensor *y = tc_matmul(f, a, b);
    if (r->bias) {
      bool is_new[2] = {true, false};
      ins[*nins] = tc_input(f, TC_F32, 1, &r->n);
      y = tc_binary(f, TC_ADD, y, tc_broadcast(f, ins[(*nins)++], 2, is_new));
    }
    if (r->residual) {
      s2[0] = m ? m : -1;
      ins[*nins] = m ? tc_input(f, TC_F32, 2, s2) : tc_input_sym(f, TC_F32, 2, s2, "M", div);
      y = tc_binary(f, TC_ADD, y, ins[(*nins)++]);
    }
    y = tc_binary_scalar(f, TC_MUL, y, r->scale);
    return r->relu ? tc_unary(f, TC_RELU, y) : y;
  }
  for (int j = 0; j < r->nin; j++)
    ins[(*nins)++] = in[j] = m ? tc_input(f, TC_F32, 2, s2) : tc_input_sym(f, TC_F32, 2, s2, "M", div);
  tc_tensor *x = in[0];
  static const tc_binary_op bops[4] = {TC_ADD, TC_SUB, TC_MUL, TC_MAX};
  static const tc_unary_op uops[3] = {TC_TANH, TC_NEG, TC_SIGMOID};
  for (int j = 0; j < r->nops && x; j++) {
    int o = r->op[j];
    if (o < 4) x = tc_binary(f, bops[o], x, in[r->arg[j]]);
    else if (o < 7) x = tc_unary(f, uops[o - 4], x);
    else x = tc_binary_scalar(f, TC_MUL, x, r->scale);
  }
  if (r->kind == 0 || !x) return x;
  int ax = r->kind == 3 ? 0 : 1;
  tc_tensor *red = tc_reduce(f, r->red ? TC_REDUCE_MAX : TC_REDUCE_SUM, x, 1, &ax);
  if (r->after == 0 || r->kind == 3 || !red) return red;
  return tc_binary(f, r->after == 1 ? TC_SUB : TC_DIV, x, red);
}

static tc_fusion *build_sym(int64_t div, void *ctx) {
  const recipe *r = ctx;
  tc_fusion *f = tc_fusion_new();
  tc_tensor *ins[4];
  int nins;
  tc_tensor *y = build(f, r, 0, div, ins, &nins);
  TC_CHECK(y != NULL, "%s", tc_fusion_error(f));
  if (!y || tc_add_output(f, y) || tc_schedule_auto(f, TC_TARGET_OPENCL, NULL)) {
    TC_CHECK(0, "kind %d: %s", r->kind, tc_fusion_error(f));
    tc_fusion_free(f);
    return NULL;
  }
  return f;
}

static float value(uint64_t i) { return (float)((i * 2654435761u) % 1009) / 1009.0f * 2.0f - 1.0f; }

/* src without its comment lines (a line that is one comment, past its
 * indentation: the schedule note at a kernel's top names the divisor). */
static char *code_of(const char *src) {
  char *out = malloc(strlen(src) + 1), *o = out;
  for (const char *b = src; *b;) {
    const char *e = strchr(b, '\n');
    size_t n = e ? (size_t)(e - b) + 1 : strlen(b);
    const char *t = b;
    while (t < b + n && (*t == ' ' || *t == '\t')) t++;
    size_t tn = (size_t)(b + n - t) - (e ? 1 : 0);
    bool comment = tn >= 4 && t[0] == '/' && t[1] == '*' && t[tn - 2] == '*' && t[tn - 1] == '/';
    if (!comment) memcpy(o, b, n), o += n;
    b += n;
  }
  *o = 0;
  return out;
}

/* The kernels a family of r needs for the sizes Ms, derived from the
 * family's rule (docs/dynamic.md) with kernels compiled here one divisor
 * at a time: each size wants the largest of 16, 8, 4, 1 dividing it, and
 * a divisor takes the kernel of the next smaller one while their code
 * (comment lines aside) is the same; the distinct kernels the sizes end
 * at. */
static int kernels_needed(recipe *r, const tc_compile_options *o) {
  static const int64_t divs[4] = {16, 8, 4, 1};
  char *code[4] = {NULL};
  for (int d = 0; d < 4; d++) {
    tc_fusion *f = build_sym(divs[d], r);
    tc_status st;
    tc_kernel *k = f ? tc_compile(f, o, &st) : NULL;
    TC_CHECK(k != NULL, "divisor %lld: %s", (long long)divs[d], f ? tc_fusion_error(f) : "no fusion");
    code[d] = code_of(k ? tc_kernel_source(k) : "");
    tc_kernel_free(k);
    tc_fusion_free(f);
  }
  bool end[4] = {false};
  for (int q = 0; q < NM; q++) {
    int d = 0;
    while (Ms[q] % divs[d]) d++;
    while (d + 1 < 4 && strcmp(code[d], code[d + 1]) == 0) d++;
    end[d] = true;
  }
  int n = 0;
  for (int d = 0; d < 4; d++) n += end[d], free(code[d]);
  return n;
}

/* Runs the family at every M against the reference; 0: no device. */
static int sweep(tc_kernel_family *fam, const recipe *r, int idx) {
  for (int q = 0; q < NM; q++) {
    int64_t m = Ms[q];
    tc_fusion *ref = tc_fusion_new();
    tc_tensor *ins[4];
    int np;
    tc_tensor *y = build(ref, r, m, 1, ins, &np);
    if (!y || tc_add_output(ref, y) != TC_OK) {
      TC_CHECK(0, "fusion %d: %s", idx, tc_fusion_error(ref));
      tc_fusion_free(ref);
      return 1;
    }
    void *args[8] = {NULL}, *kargs[9] = {NULL};
    size_t ybytes = tc_tensor_bytes(y);
    for (int i = 0; i < np; i++) {
      size_t bytes = tc_tensor_bytes(ins[i]);
      float *p = malloc(bytes);
      for (size_t e = 0; e < bytes / 4; e++) p[e] = value(e * 7 + (size_t)i * 101 + 3);
      args[i] = kargs[i + 1] = p;
    }
    float *want = malloc(ybytes), *got = malloc(ybytes + 4);
    got[ybytes / 4] = -77.0f;
    args[np] = want, kargs[np + 1] = got;
    TC_CHECK(tc_reference_run(ref, args) == TC_OK, "%s", tc_fusion_error(ref));
    /* (M's parameter comes first: a symbolic input is the first input) */
    tc_status st = tc_family_run(fam, kargs, &m, 1, NULL, NULL);
    int ran = st != TC_ERR_NO_DEVICE;
    if (ran) {
      TC_CHECK(st == TC_OK, "fusion %d (kind %d), M = %lld: %s", idx, r->kind, (long long)m, tc_family_error(fam));
      for (size_t e = 0; e < ybytes / 4 && st == TC_OK; e++) {
        double len = r->kind == 2 ? (double)r->k : r->kind == 3 ? (double)m : (double)r->n;
        double tol = 1e-5 + 2e-5 * fabs(want[e]) * len;
        if (!(fabs(got[e] - want[e]) <= tol)) {
          TC_CHECK(0, "fusion %d (kind %d, N %lld), M = %lld: y[%zu] = %g, want %g", idx, r->kind,
                   (long long)r->n, (long long)m, e, got[e], want[e]);
          break;
        }
      }
      TC_CHECK(got[ybytes / 4] == -77.0f, "fusion %d, M = %lld: wrote past M rows", idx, (long long)m);
    }
    for (int i = 0; i < np; i++) free(args[i]);
    free(want), free(got);
    tc_fusion_free(ref);
    if (!ran) return 0;
  }
  return 1;
}

static void test_random(void) {
  char dir[] = "/tmp/tilec-dyn-random.XXXXXX";
  TC_REQUIRE(mkdtemp(dir), "mkdtemp");
  setenv("TILEC_CACHE_DIR", dir, 1);
  rng = 0x9e3779b97f4a7c15ull;
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "dyn_random"};
  int total = 0;
  for (int i = 0; i < NFUSIONS; i++) {
    recipe r = make_recipe(i);
    tc_kernel_family *fam = tc_family_new(build_sym, &r, &o);
    if (!sweep(fam, &r, i)) {
      printf("  skip runs: no OpenCL device\n");
      tc_family_free(fam);
      break;
    }
    int kernels, compiled, loaded;
    tc_family_counts(fam, &kernels, &compiled, &loaded);
    /* 13 sizes want three assumption sets (16, 64, 128, 2048 are
     * multiples of 16, 1000 of 8, the others of 1); the family compiles
     * the fusion for each divisor of 16, 8, 4, 1 once (the lowering's
     * probes) and keeps the kernels kernels_needed derives (the GEMM's
     * FMA schedule makes nothing of the divisor: one kernel) */
    int want = kernels_needed(&r, &o);
    TC_CHECK(kernels == want && (r.kind != 2 || kernels == 1) && compiled == 4 && loaded == 0,
             "fusion %d (kind %d): %d kernels (want %d), %d compiled, %d loaded for %d sizes", i,
             r.kind, kernels, want, compiled, loaded, NM);
    total += compiled;
    tc_family_free(fam);
  }
  printf("  %d random fusions, %d sizes each, %d compiles\n", NFUSIONS, NM, total);
  tc_cache_clear(NULL);
  rmdir(dir);
  unsetenv("TILEC_CACHE_DIR");
}

int main(void) {
  TC_RUN(test_random);
  TC_MAIN_END();
}
