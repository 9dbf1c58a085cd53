/* gemm_fusion.c - `tilec gemm --epilogue LIST`: C = epilogue(A @ B) as one
 * fusion (tc_matmul and the listed ops), scheduled by tc_schedule_auto's
 * matmul schedule, compiled through the one pipeline, run, and with -V 1
 * compared with a plain C loop (the products summed in double, the
 * epilogue in f32) within a bound per element: the rounding of K f32
 * additions and of each op, and of the cast. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/tilec.h"
#include "../src/base/base.h"
#include "../src/ops/tuner.h"
#include "../src/target/target.h"
#include "cli.h"
#include "gemm_fusion.h"

enum { EP_BIAS, EP_BIAS_M, EP_SCALE, EP_RESIDUAL, EP_RELU, EP_GELU, EP_SILU, EP_CAST };
static const char *const ep_name[] = {"bias", "bias_m", "scale", "residual", "relu", "gelu", "silu", "cast"};

void gemm_epilogue_init(gemm_epilogue *e) {
  memset(e, 0, sizeof *e);
  e->cast = TC_F32;
}

void gemm_epilogue_usage(FILE *out) {
  fputs("  --epilogue LIST         C = LIST applied to A * B in the same kernel, the GEMM made\n"
        "                          as a fusion by the matmul scheduler (comma-separated, in\n"
        "                          order): bias (a vector of N added to each row), bias_m (of\n"
        "                          M, to each column), scale:X, residual (an input [M, N]\n"
        "                          added), relu, gelu (tanh form), silu, cast:f16|bf16 (last;\n"
        "                          C is f32 otherwise); the inputs follow A and B in that order\n"
        "  --tiles BM,BN,BK,TM,TN  with --epilogue: the matmul schedule's block tile, K tile and\n"
        "                          accumulators per thread (default: the scheduler's choice)\n"
        "  --macro fma|mma         with --tiles: the products as FMA outer products (default)\n"
        "                          or as mma.sync m16n8k16 (f16/bf16; cuda sm_80+, emulated on\n"
        "                          opencl); then TM x TN is each warp's tile (multiples of\n"
        "                          16 x 8) and BK a multiple of 16\n",
        out);
}

/* One item of the list into e; CLI_OK or a usage error. */
static int parse_item(op_opts *o, gemm_epilogue *e, const char *item, size_t len) {
  char buf[64];
  if (len >= sizeof buf) len = sizeof buf - 1;
  memcpy(buf, item, len), buf[len] = 0;
  if (e->cast != TC_F32)
    return op_usage_error(o, "--epilogue: '%s' follows the cast; the cast comes last", buf);
  if (e->n == GEMM_EPI_MAX) return op_usage_error(o, "--epilogue: at most %d ops", GEMM_EPI_MAX);
  char *colon = strchr(buf, ':');
  if (colon) *colon = 0;
  int op = -1;
  for (int i = 0; i < (int)(sizeof ep_name / sizeof *ep_name); i++)
    if (strcmp(buf, ep_name[i]) == 0) op = i;
  if (op < 0)
    return op_usage_error(o, "--epilogue: unknown op '%s' (bias, bias_m, scale:X, residual, relu, "
                          "gelu, silu, cast:f16|bf16)", buf);
  if ((op == EP_SCALE || op == EP_CAST) != (colon != NULL))
    return op_usage_error(o, "--epilogue: %s %s", buf,
                          colon ? "takes no value" : op == EP_SCALE ? "needs a value: scale:X" : "needs a type: cast:f16 or cast:bf16");
  if (op == EP_SCALE) {
    char *end;
    double v = strtod(colon + 1, &end);
    if (*end || end == colon + 1 || !isfinite(v))
      return op_usage_error(o, "--epilogue: scale takes a number, got '%s'", colon + 1);
    e->scale[e->n] = v;
  }
  if (op == EP_CAST) {
    if (strcmp(colon + 1, "f16") == 0) e->cast = TC_F16;
    else if (strcmp(colon + 1, "bf16") == 0) e->cast = TC_BF16;
    else return op_usage_error(o, "--epilogue: cast takes f16 or bf16, got '%s'", colon + 1);
    return CLI_OK;
  }
  e->ops[e->n++] = op;
  return CLI_OK;
}

/* --tiles BM,BN,BK,TM,TN into e->tiles. */
static int parse_tiles(op_opts *o, gemm_epilogue *e, const char *v) {
  const char *p = v;
  for (int k = 0; k < 5; k++) {
    char *end;
    long long x = strtoll(p, &end, 10);
    if (end == p || x < 1 || x > 4096 || (k < 4 ? *end != ',' : *end != 0))
      return op_usage_error(o, "--tiles takes five extents BM,BN,BK,TM,TN from 1 to 4096, got '%s'", v);
    e->tiles[k] = x;
    p = end + 1;
  }
  if (e->tiles[0] % e->tiles[3] || e->tiles[1] % e->tiles[4])
    return op_usage_error(o, "--tiles %s: TM must divide BM and TN divide BN", v);
  return CLI_OK;
}

int gemm_epilogue_option(op_opts *o, gemm_epilogue *e, int argc, char **argv, int *i, int *rc) {
  const char *v = op_value(o, argc, argv, i, "--tiles", rc);
  if (v) return *rc = parse_tiles(o, e, v), 1;
  if (*rc != CLI_OK) return 1;
  v = op_value(o, argc, argv, i, "--macro", rc);
  if (v) {
    if (strcmp(v, "fma") && strcmp(v, "mma"))
      return *rc = op_usage_error(o, "--macro takes fma or mma, got '%s'", v), 1;
    e->macro = strcmp(v, "mma") ? TC_MACRO_FMA : TC_MACRO_MMA_M16N8K16;
    return 1;
  }
  if (*rc != CLI_OK) return 1;
  v = op_value(o, argc, argv, i, "--epilogue", rc);
  if (!v) return *rc != CLI_OK;
  int64_t tiles[5];
  tc_matmul_macro macro = e->macro;
  memcpy(tiles, e->tiles, sizeof tiles);
  gemm_epilogue_init(e);
  memcpy(e->tiles, tiles, sizeof tiles);
  e->macro = macro;
  e->given = 1;
  for (const char *p = v;;) {
    size_t len = strcspn(p, ",");
    if (len == 0) return *rc = op_usage_error(o, "--epilogue: an empty op in '%s'", v), 1;
    if ((*rc = parse_item(o, e, p, len)) != CLI_OK) return 1;
    if (!p[len]) break;
    p += len + 1;
  }
  return 1;
}

/* The fusion: inputs A, B, then the epilogue's vectors and residuals in
 * list order; in[] gets them, cnt[] their element counts. */
static tc_tensor *build(tc_fusion *f, const gemm_epilogue *e, tc_dtype t, int64_t g, int64_t m,
                        int64_t n, int64_t k, int ta, int tb, tc_tensor **in, int64_t *cnt, int *nin) {
  int r = g > 1 ? 3 : 2, o = r - 2;
  int64_t sa[3] = {g}, sb[3] = {g}, sc[3] = {g};
  sa[o] = ta ? k : m, sa[o + 1] = ta ? m : k;
  sb[o] = tb ? n : k, sb[o + 1] = tb ? k : n;
  sc[o] = m, sc[o + 1] = n;
  int perm[3] = {0, 1, 2};
  perm[o] = o + 1, perm[o + 1] = o;
  in[0] = tc_input(f, t, r, sa), in[1] = tc_input(f, t, r, sb), *nin = 2;
  cnt[0] = g * m * k, cnt[1] = g * k * n;
  tc_tensor *y = tc_matmul(f, ta ? tc_permute(f, in[0], perm) : in[0], tb ? tc_permute(f, in[1], perm) : in[1]);
  for (int i = 0; y && i < e->n; i++) {
    bool is_new[3] = {true, true, true};
    switch (e->ops[i]) {
      case EP_BIAS: case EP_BIAS_M: {
        int64_t len = e->ops[i] == EP_BIAS ? n : m;
        is_new[e->ops[i] == EP_BIAS ? o + 1 : o] = false;
        in[*nin] = tc_input(f, TC_F32, 1, &len), cnt[(*nin)++] = len;
        y = tc_binary(f, TC_ADD, y, tc_broadcast(f, in[*nin - 1], r, is_new));
        break;
      }
      case EP_RESIDUAL:
        in[*nin] = tc_input(f, TC_F32, r, sc), cnt[(*nin)++] = g * m * n;
        y = tc_binary(f, TC_ADD, y, in[*nin - 1]);
        break;
      case EP_SCALE: y = tc_binary_scalar(f, TC_MUL, y, e->scale[i]); break;
      case EP_RELU: y = tc_unary(f, TC_RELU, y); break;
      case EP_GELU: y = tc_unary(f, TC_GELU, y); break;
      default: y = tc_unary(f, TC_SILU, y); break;
    }
  }
  if (y && e->cast != TC_F32) y = tc_cast(f, y, e->cast);
  return y;
}

static double host_value(tc_dtype t, const void *p, int64_t i) {
  if (t == TC_F16) return tc_f16_to_f32(((const uint16_t *)p)[i]);
  if (t == TC_BF16) return tc_bf16_to_f32(((const uint16_t *)p)[i]);
  return ((const float *)p)[i];
}

/* The plain C result and its bound per element. */
static void reference(const gemm_epilogue *e, tc_dtype t, int64_t g, int64_t m, int64_t n, int64_t k,
                      int ta, int tb, void *const *host, double *want, double *bound) {
  for (int64_t q = 0; q < g; q++)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0, sabs = 0;
        for (int64_t kk = 0; kk < k; kk++) {
          double a = host_value(t, host[0], q * m * k + (ta ? kk * m + i : i * k + kk));
          double b = host_value(t, host[1], q * k * n + (tb ? j * k + kk : kk * n + j));
          s += a * b, sabs += fabs(a * b);
        }
        int64_t c = (q * m + i) * n + j;
        double err = (double)k * sabs * 0x1p-23 + 1e-6;
        float y = (float)s;
        for (int w = 2, x = 0; x < e->n; x++) {
          switch (e->ops[x]) {
            case EP_BIAS: y += ((const float *)host[w++])[j]; break;
            case EP_BIAS_M: y += ((const float *)host[w++])[i]; break;
            case EP_RESIDUAL: y += ((const float *)host[w++])[c]; break;
            case EP_SCALE: y *= (float)e->scale[x], err *= fabs(e->scale[x]); break;
            case EP_RELU: y = y > 0 ? y : 0; break;
            case EP_GELU:
              y = 0.5f * y * (1.0f + tanhf(0.7978845608f * (y + 0.044715f * y * y * y))), err *= 1.2;
              break;
            default: y = y / (1.0f + expf(-y)), err *= 1.2; break;
          }
          err += fabs(y) * 4e-6 + 1e-6; /* a few ulp of the device's exp / tanh */
        }
        if (e->cast != TC_F32) err += fabs(y) * (e->cast == TC_F16 ? 0x1p-10 : 0x1p-7) + 1e-6;
        want[c] = y, bound[c] = err;
      }
}

int gemm_epilogue_run(op_opts *o, const gemm_epilogue *e, int64_t g, int64_t m, int64_t n, int64_t k,
                      int ta, int tb) {
  if (o->dtype != TC_F32 && o->dtype != TC_F16 && o->dtype != TC_BF16)
    return op_usage_error(o, "--epilogue takes -t f32, f16 or bf16");
  tc_fusion *f = tc_fusion_new();
  tc_tensor *in[GEMM_EPI_MAX + 2];
  int64_t cnt[GEMM_EPI_MAX + 2];
  void *host[GEMM_EPI_MAX + 3] = {NULL};
  double *want = NULL, *bound = NULL, *times = NULL;
  int nin = 0, rc = CLI_FAIL;
  tc_kernel *kern = NULL;
  op_report r;
  memset(&r, 0, sizeof r);
  tc_tensor *y = build(f, e, o->dtype, g, m, n, k, ta, tb, in, cnt, &nin);
  const char *arch = o->target == TC_TARGET_OPENCL ? NULL : tc_target_ops_arch(o->target, o->arch);
  tc_status st = !y ? TC_ERR_ARGUMENT : tc_add_output(f, y);
  tc_matmul_tiles tl = {e->tiles[0], e->tiles[1], e->tiles[2], e->tiles[3], e->tiles[4], e->macro};
  if (!st) st = e->tiles[0] ? tc_schedule_matmul(f, o->target, arch, &tl) : tc_schedule_auto(f, o->target, arch);
  if (st) {
    rc = op_invalid(o, "%s", op_api_message(tc_fusion_error(f)));
    goto out;
  }
  char name[32];
  snprintf(name, sizeof name, "gemm_fused");
  tc_compile_options opt = {o->target, arch, name};
  if (!(kern = tc_compile(f, &opt, &st))) {
    rc = op_fail(o, "cannot compile the fused GEMM (%s): %s", tc_status_name(st), tc_fusion_error(f));
    goto out;
  }
  char why[2048] = "";
  int runs, have_dev = op_find_device(o, &r, &runs, why, sizeof why);
  if (!have_dev && runs) goto out;
  int64_t grid[3], block[3];
  tc_kernel_launch_dims(kern, grid, block);
  printf("problem: gemm %lldx%lldx%lld%s%s%s %s, epilogue", (long long)m, (long long)n, (long long)k,
         g > 1 ? " batched" : "", ta ? " A^T" : "", tb ? " B^T" : "", tc_dtype_name(o->dtype));
  for (int i = 0; i < e->n; i++) {
    printf(" %s", ep_name[e->ops[i]]);
    if (e->ops[i] == EP_SCALE) printf(":%g", e->scale[i]);
  }
  if (e->cast != TC_F32) printf(" cast:%s", tc_dtype_name(e->cast));
  printf("\n");
  op_print_device(o, &r, have_dev, why);
  printf("schedule: %s\n", tc_fusion_schedule_note(f));
  printf("kernel: %s (fusion), grid [%lld, %lld, %lld] of blocks [%lld, %lld, %lld], shared memory "
         "%lld bytes\n", tc_kernel_name(kern), (long long)grid[0], (long long)grid[1],
         (long long)grid[2], (long long)block[0], (long long)block[1], (long long)block[2],
         (long long)tc_kernel_smem_bytes(kern));
  fflush(stdout);
  if (o->emit) {
    if (op_write_file(o, o->emit, tc_kernel_source(kern)) != CLI_OK) goto out;
    printf("emit: 1 kernel written to %s\n", o->emit);
  }
  if (!runs) {
    rc = op_build_only(o, have_dev, why, tc_kernel_source(kern), tc_kernel_name(kern));
    goto out;
  }
  uint64_t seed = 0x5eed0e11ull;
  for (int i = 0; i < nin; i++) {
    tc_dtype t = tc_tensor_dtype(in[i]);
    if (!(host[i] = calloc((size_t)cnt[i], tc_dtype_size(t)))) {
      op_fail(o, "cannot allocate input %d", i);
      goto out;
    }
    tc_tune_fill(host[i], (size_t)cnt[i], t, &seed);
  }
  size_t celems = (size_t)(g * m * n);
  if (!(host[nin] = calloc(celems, tc_dtype_size(e->cast)))) {
    op_fail(o, "cannot allocate C");
    goto out;
  }
  if ((st = tc_kernel_run(kern, host, o->device, &r.first_ms)) != TC_OK) {
    op_fail(o, "the kernel failed (%s): %s", tc_status_name(st), tc_kernel_error(kern));
    goto out;
  }
  r.ran = 1;
  if (o->verify) {
    want = tc_xmalloc(celems * sizeof *want), bound = tc_xmalloc(celems * sizeof *bound);
    reference(e, o->dtype, g, m, n, k, ta, tb, host, want, bound);
    r.verified = 1;
    r.bad = tc_tune_check(host[nin], e->cast, NULL, want, bound, celems, &r.max_abs, &r.worst,
                          r.verify_msg, sizeof r.verify_msg);
    r.pass = r.bad == 0;
  }
  if (o->time) {
    times = tc_xcalloc((size_t)o->iters, sizeof *times);
    for (int i = 0; i < o->iters; i++)
      if ((st = tc_kernel_run(kern, host, o->device, &times[i])) != TC_OK) {
        op_fail(o, "the kernel failed (%s): %s", tc_status_name(st), tc_kernel_error(kern));
        goto out;
      }
    op_set_time(o, &r, times, 2.0 * (double)g * (double)m * (double)n * (double)k);
    times = NULL; /* (op_set_time frees them) */
  }
  op_print_run(o, &r, 1, (int64_t)celems);
  rc = !r.verified || r.pass ? CLI_OK : CLI_FAIL;
out:
  for (int i = 0; i <= nin; i++) free(host[i]);
  free(want), free(bound), free(times);
  tc_kernel_free(kern);
  tc_fusion_free(f);
  return rc;
}
