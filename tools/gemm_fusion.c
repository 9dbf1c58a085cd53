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
#include "../src/sched/sched.h"
#include "../src/target/target.h"
#include "../src/tune/matmul_config.h"
#include "cli.h"
#include "gemm_fusion.h"

enum { EP_BIAS, EP_BIAS_M, EP_SCALE, EP_RESIDUAL, EP_RELU, EP_GELU, EP_SILU, EP_CAST, EP_ROW_SUM,
       EP_ROW_MAX, EP_COL_SUM, EP_COL_MAX };
/* --macro's names, by tc_matmul_macro */
const char *const gemm_macro_name[5] = {"fma", "mma", "mfma", "mfma16", "wgmma"};

static const char *const ep_name[] = {"bias", "bias_m", "scale", "residual", "relu", "gelu", "silu",
                                      "cast", "row_sum", "row_max", "col_sum", "col_max"};

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
        "                          C is f32 otherwise); the inputs follow A and B in that order;\n"
        "                          and one of row_sum, row_max, col_sum, col_max after the\n"
        "                          pointwise ops: a second output R, the f32 values before the\n"
        "                          cast reduced over each row ([G][M]) or column ([G][N])\n"
        "  --tiles BM,BN,BK,TM,TN  with --epilogue: the matmul schedule's block tile, K tile and\n"
        "                          accumulators per thread (default: the perf DB's tuned tiles,\n"
        "                          else the scheduler's choice)\n"
        "  --perf-config S         with --epilogue: BS,MPB,NPB,KPB,MPT,NPT as the tiles MPB,NPB,\n"
        "                          KPB,2*MPT,2*NPT (BS = the threads), or mma:MPB,NPB,KPB,MPW,NPW\n"
        "                          as --tiles MPB,NPB,KPB,MPW,NPW --macro mma, or\n"
        "                          xdlops:MPB,NPB,KPB,MPW,NPW[,MFMA] as --macro mfma (mfma16);\n"
        "                          not the Hopper forms\n"
        "  --ab-type f32|f16|bf16  with --epilogue: A and B are stored in this type and cast\n"
        "                          to -t's as their tiles are staged (default: -t's)\n"
        "                          (--tune with --epilogue: times a few tile choices, runs the\n"
        "                          fastest and stores its perf config in the perf DB under the\n"
        "                          problem with its epilogue; not with --tiles)\n"
        "  --macro fma|mma|mfma|mfma16|wgmma\n"
        "                          with --tiles (or --tune: the mma candidates only): the\n"
        "                          products as FMA outer products (default), as mma.sync\n"
        "                          m16n8k16 (f16/bf16; cuda sm_80+, emulated on opencl; TM x TN\n"
        "                          each warp's tile, multiples of 16 x 8, BK of 16) or, with\n"
        "                          --tiles only, as AMD's MFMA 32x32x8 (mfma) or 16x16x16\n"
        "                          (mfma16) (f16/bf16; hip gfx90a / gfx94x, emulated on opencl;\n"
        "                          TM x TN each wavefront's tile, multiples of 32 x 32 (16 x\n"
        "                          16), BK of 8 (16)) or as wgmma m64nNk16 (f16/bf16; cuda\n"
        "                          sm_90a, emulated on opencl; TM x TN each warp group's tile,\n"
        "                          TM 64 and TN = N a multiple of 8 up to 256, BK of 16)\n"
        "  --stages N              with --tiles: A and B tiles in rings of N slots (1 to 8;\n"
        "                          1: one buffer), the copies of N-1 K tiles ahead in flight\n"
        "                          (cp.async on cuda sm_80+ where a copy is a plain aligned load;\n"
        "                          with wgmma and N >= 3, N-2 ahead while the previous K tile's\n"
        "                          wgmma still runs: wgmma.wait_group 1)\n",
        out);
}

/* One item of the list into e; CLI_OK or a usage error. */
static int parse_item(op_opts *o, gemm_epilogue *e, const char *item, size_t len) {
  char buf[64];
  if (len >= sizeof buf) len = sizeof buf - 1;
  memcpy(buf, item, len), buf[len] = 0;
  if (e->cast != TC_F32)
    return op_usage_error(o, "--epilogue: '%s' follows the cast; the cast comes last", buf);
  if (e->reduce && strncmp(buf, "cast:", 5) != 0)
    return op_usage_error(o, "--epilogue: '%s' follows %s; the reduction comes after the pointwise "
                          "ops (only the cast may follow it)", buf, ep_name[e->reduce]);
  if (e->n == GEMM_EPI_MAX) return op_usage_error(o, "--epilogue: at most %d ops", GEMM_EPI_MAX);
  char *colon = strchr(buf, ':');
  if (colon) *colon = 0;
  int op = -1;
  for (int i = 0; i < (int)(sizeof ep_name / sizeof *ep_name); i++)
    if (strcmp(buf, ep_name[i]) == 0) op = i;
  if (op < 0)
    return op_usage_error(o, "--epilogue: unknown op '%s' (bias, bias_m, scale:X, residual, relu, "
                          "gelu, silu, cast:f16|bf16, row_sum, row_max, col_sum, col_max)", buf);
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
  if (op >= EP_ROW_SUM) return e->reduce = op, CLI_OK;
  e->ops[e->n++] = op;
  return CLI_OK;
}

/* --tiles BM,BN,BK,TM,TN into tiles[]. */
static int parse_tiles(op_opts *o, int64_t tiles[5], const char *v) {
  const char *p = v;
  for (int k = 0; k < 5; k++) {
    char *end;
    long long x = strtoll(p, &end, 10);
    if (end == p || x < 1 || x > 4096 || (k < 4 ? *end != ',' : *end != 0))
      return op_usage_error(o, "--tiles takes five extents BM,BN,BK,TM,TN from 1 to 4096, got '%s'", v);
    tiles[k] = x;
    p = end + 1;
  }
  if (tiles[0] % tiles[3] || tiles[1] % tiles[4])
    return op_usage_error(o, "--tiles %s: TM must divide BM and TN divide BN", v);
  return CLI_OK;
}

int matmul_tiles_option(op_opts *o, int64_t tiles[5], tc_matmul_macro *macro, int *stages, int argc,
                        char **argv, int *i, int *rc) {
  const char *v = op_value(o, argc, argv, i, "--tiles", rc);
  if (v) return *rc = parse_tiles(o, tiles, v), 1;
  if (*rc != CLI_OK) return 1;
  if ((v = op_value(o, argc, argv, i, "--macro", rc))) {
    for (int k = 0; k < 5; k++)
      if (strcmp(v, gemm_macro_name[k]) == 0) return *macro = (tc_matmul_macro)k, 1;
    return *rc = op_usage_error(o, "--macro takes fma, mma, mfma, mfma16 or wgmma, got '%s'", v), 1;
  }
  if (*rc != CLI_OK) return 1;
  if ((v = op_value(o, argc, argv, i, "--stages", rc))) {
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x < 1 || x > 8)
      return *rc = op_usage_error(o, "--stages takes a number of slots from 1 to 8, got '%s'", v), 1;
    *stages = (int)x;
    return 1;
  }
  return *rc != CLI_OK;
}

int gemm_epilogue_option(op_opts *o, gemm_epilogue *e, int argc, char **argv, int *i, int *rc) {
  if (matmul_tiles_option(o, e->tiles, &e->macro, &e->stages, argc, argv, i, rc)) return 1;
  const char *v;
  if ((v = op_value(o, argc, argv, i, "--ab-type", rc))) {
    static const tc_dtype types[3] = {TC_F32, TC_F16, TC_BF16};
    e->ab_given = 1;
    for (int k = 0; k < 3; k++)
      if (strcmp(v, tc_dtype_name(types[k])) == 0) return e->ab_type = types[k], 1;
    return *rc = op_usage_error(o, "--ab-type takes f32, f16 or bf16, got '%s'", v), 1;
  }
  if (*rc != CLI_OK) return 1;
  v = op_value(o, argc, argv, i, "--epilogue", rc);
  if (!v) return *rc != CLI_OK;
  gemm_epilogue keep = *e;
  gemm_epilogue_init(e);
  memcpy(e->tiles, keep.tiles, sizeof keep.tiles);
  e->ab_given = keep.ab_given, e->ab_type = keep.ab_type;
  e->macro = keep.macro;
  e->stages = keep.stages;
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
 * list order; in[] gets them, cnt[] their element counts; *red the
 * reduction (NULL without). */
static tc_tensor *build(tc_fusion *f, const gemm_epilogue *e, tc_dtype t, int64_t g, int64_t m,
                        int64_t n, int64_t k, int ta, int tb, tc_tensor **in, int64_t *cnt, int *nin,
                        tc_tensor **red) {
  /* m < 0: M is the size variable "M" of bound -m (-M dyn): A, bias_m and
   * the residuals have M rows; n < 0 likewise N (-N dyn): B, bias and the
   * residuals have N columns; k < 0 K (-K dyn): A's columns and B's rows
   * (both stored row-major); cnt[] are their counts at the bounds */
  bool dyn = m < 0, dn = n < 0, dk = k < 0;
  if (dyn) m = -m;
  if (dn) n = -n;
  if (dk) k = -k;
  int r = g > 1 ? 3 : 2, o = r - 2;
  int64_t sa[3] = {g}, sb[3] = {g}, sc[3] = {g};
  sa[o] = ta ? k : m, sa[o + 1] = ta ? m : k;
  sb[o] = tb ? n : k, sb[o + 1] = tb ? k : n;
  sc[o] = m, sc[o + 1] = n;
  int perm[3] = {0, 1, 2};
  perm[o] = o + 1, perm[o + 1] = o;
  tc_dtype st = e->ab_given ? e->ab_type : t;
  /* (a variable B names again takes A's bound: -1) */
  const char *anames[2] = {dyn ? "M" : NULL, dk ? "K" : NULL}, *bnames[2] = {dk ? "K" : NULL, dn ? "N" : NULL};
  if (dk) sb[o] = -1;
  in[0] = dyn || dk ? tc_input_syms(f, st, r, sa, anames, NULL) : tc_input(f, st, r, sa);
  in[1] = dn || dk ? tc_input_syms(f, st, r, sb, bnames, NULL) : tc_input(f, st, r, sb), *nin = 2;
  cnt[0] = g * m * k, cnt[1] = g * k * n;
  /* (with --ab-type, the casts are the operands' prologue) */
  tc_tensor *a = st != t ? tc_cast(f, in[0], t) : in[0], *b = st != t ? tc_cast(f, in[1], t) : in[1];
  if (!in[0] || !in[1]) return NULL;
  tc_tensor *y = tc_matmul(f, ta ? tc_permute(f, a, perm) : a, tb ? tc_permute(f, b, perm) : b);
  for (int i = 0; y && i < e->n; i++) {
    bool is_new[3] = {true, true, true};
    switch (e->ops[i]) {
      case EP_BIAS: case EP_BIAS_M: {
        int64_t len = e->ops[i] == EP_BIAS ? n : m;
        is_new[e->ops[i] == EP_BIAS ? o + 1 : o] = false;
        const char *var = e->ops[i] == EP_BIAS ? (dn ? "N" : NULL) : dyn ? "M" : NULL;
        in[*nin] = var ? tc_input_sym(f, TC_F32, 1, &len, var, 1) : tc_input(f, TC_F32, 1, &len);
        cnt[(*nin)++] = len;
        y = tc_binary(f, TC_ADD, y, tc_broadcast(f, in[*nin - 1], r, is_new));
        break;
      }
      case EP_RESIDUAL: {
        const char *names[3] = {NULL, NULL, NULL};
        names[o] = dyn ? "M" : NULL, names[o + 1] = dn ? "N" : NULL;
        in[*nin] = dyn || dn ? tc_input_syms(f, TC_F32, r, sc, names, NULL) : tc_input(f, TC_F32, r, sc);
        cnt[(*nin)++] = g * m * n;
        y = tc_binary(f, TC_ADD, y, in[*nin - 1]);
        break;
      }
      case EP_SCALE: y = tc_binary_scalar(f, TC_MUL, y, e->scale[i]); break;
      case EP_RELU: y = tc_unary(f, TC_RELU, y); break;
      case EP_GELU: y = tc_unary(f, TC_GELU, y); break;
      default: y = tc_unary(f, TC_SILU, y); break;
    }
  }
  *red = NULL;
  if (y && e->reduce) {
    int ax = e->reduce == EP_ROW_SUM || e->reduce == EP_ROW_MAX ? -1 : -2;
    *red = tc_reduce(f, e->reduce == EP_ROW_SUM || e->reduce == EP_COL_SUM ? TC_REDUCE_SUM
                     : TC_REDUCE_MAX, y, 1, &ax);
    if (!*red) return NULL;
  }
  if (y && e->cast != TC_F32) y = tc_cast(f, y, e->cast);
  return y;
}

static double host_value(tc_dtype t, const void *p, int64_t i) {
  if (t == TC_F16) return tc_f16_to_f32(((const uint16_t *)p)[i]);
  if (t == TC_BF16) return tc_bf16_to_f32(((const uint16_t *)p)[i]);
  return ((const float *)p)[i];
}

/* An operand's element: stored as st, rounded to t (its cast). */
static double operand_value(tc_dtype st, tc_dtype t, const void *p, int64_t i) {
  float v = (float)host_value(st, p, i);
  if (t == TC_F16) return tc_f16_to_f32(tc_f32_to_f16(v));
  if (t == TC_BF16) return tc_bf16_to_f32(tc_f32_to_bf16(v));
  return v;
}

/* The plain C result and its bound for count elements of C: those at the
 * offsets idx[0 .. count) (idx NULL: every element, in order). */
static void reference(const gemm_epilogue *e, tc_dtype t, int64_t g, int64_t m, int64_t n, int64_t k,
                      int ta, int tb, void *const *host, const size_t *idx, size_t count,
                      double *want, double *bound) {
  (void)g;
  for (size_t at = 0; at < count; at++) {
        int64_t c = idx ? (int64_t)idx[at] : (int64_t)at;
        int64_t q = c / (m * n), i = c / n % m, j = c % n;
        double s = 0, sabs = 0;
        for (int64_t kk = 0; kk < k; kk++) {
          tc_dtype st = e->ab_given ? e->ab_type : t;
          double a = operand_value(st, t, host[0], q * m * k + (ta ? kk * m + i : i * k + kk));
          double b = operand_value(st, t, host[1], q * k * n + (tb ? j * k + kk : kk * n + j));
          s += a * b, sabs += fabs(a * b);
        }
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
        want[at] = y, bound[at] = err;
  }
}

/* The list as given: "bias,scale:0.5,relu,cast:f16" (empty without ops). */
static void list_string(const gemm_epilogue *e, char *buf, size_t cap) {
  size_t at = 0;
  buf[0] = 0;
  for (int i = 0; i <= e->n + 1 && at < cap; i++) {
    const char *sep = at ? "," : "";
    if (i < e->n && e->ops[i] == EP_SCALE)
      at += (size_t)snprintf(buf + at, cap - at, "%sscale:%g", sep, e->scale[i]);
    else if (i < e->n)
      at += (size_t)snprintf(buf + at, cap - at, "%s%s", sep, ep_name[e->ops[i]]);
    else if (i == e->n && e->reduce)
      at += (size_t)snprintf(buf + at, cap - at, "%s%s", sep, ep_name[e->reduce]);
    else if (i > e->n && e->cast != TC_F32)
      at += (size_t)snprintf(buf + at, cap - at, "%scast:%s", sep, tc_dtype_name(e->cast));
  }
}

/* --json: the gemm command's object (docs/conv_cli.md) with "kernel":
 * "fusion", the list in the problem and the scheduler's note. */
static void print_json(const op_opts *o, const char *key, const char *list, tc_dtype t, int64_t g,
                       int64_t m, int64_t n, int64_t k, int ta, int tb, const tc_fusion *f,
                       const tc_kernel *kern, const op_report *r, int ok) {
  tc_str j;
  tc_str_init(&j);
  tc_str_cat(&j, "{\"command\": \"gemm\", \"kernel\": \"fusion\", \"problem\": {\"string\": ");
  op_json_str(&j, key);
  tc_str_printf(&j, ", \"g\": %lld, \"m\": %lld, \"n\": %lld, \"k\": %lld, \"transA\": %d, "
                "\"transB\": %d, \"dtype\": \"%s\", \"epilogue\": ", (long long)g, (long long)m,
                (long long)n, (long long)k, ta, tb, tc_dtype_name(t));
  op_json_str(&j, list);
  tc_str_cat(&j, "}");
  op_json_device(&j, o, r);
  tc_str_cat(&j, ", \"perf_config\": ");
  if (r->config[0]) op_json_str(&j, r->config); else tc_str_cat(&j, "null");
  tc_str_cat(&j, ", \"perf_config_source\": ");
  op_json_str(&j, r->source);
  tc_str_cat(&j, ", \"schedule\": ");
  op_json_str(&j, tc_fusion_schedule_note(f));
  int64_t grid[3], block[3];
  tc_kernel_launch_dims(kern, grid, block);
  tc_str_cat(&j, ", \"kernels\": [{\"name\": ");
  op_json_str(&j, tc_kernel_name(kern));
  tc_str_printf(&j, ", \"grid\": [%lld, %lld, %lld], \"block\": [%lld, %lld, %lld], "
                "\"smem_bytes\": %lld}]", (long long)grid[0], (long long)grid[1], (long long)grid[2],
                (long long)block[0], (long long)block[1], (long long)block[2],
                (long long)tc_kernel_smem_bytes(kern));
  op_json_run(&j, o, r, 1);
  op_json_tune(&j, r);
  op_json_end(&j, ok);
}

/* The text lines before the run: problem, device, schedule, kernel. */
static void print_text(const op_opts *o, const gemm_epilogue *e, const op_report *r, int have_dev,
                       const char *why, const tc_fusion *f, const tc_kernel *kern, int64_t g,
                       int64_t m, int64_t n, int64_t k, int ta, int tb) {
  int64_t grid[3], block[3];
  tc_kernel_launch_dims(kern, grid, block);
  if (m < 0 || n < 0 || k < 0) {
    /* "Mx64xK (M and K size variables, at most B1 and B2: one kernel for every M and K)" */
    const int64_t ext[3] = {m, n, k};
    const char *var[3] = {"M", "N", "K"};
    char names[32] = "", bounds[96] = "";
    int nv = 0;
    for (int i = 0; i < 3; i++) nv += ext[i] < 0;
    printf("problem: gemm ");
    for (int i = 0, at = 0; i < 3; i++) {
      if (ext[i] < 0) printf("%s%s", i ? "x" : "", var[i]);
      else printf("%s%lld", i ? "x" : "", (long long)ext[i]);
      if (ext[i] >= 0) continue;
      const char *sep = !at ? "" : at == nv - 1 ? " and " : ", ";
      snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", sep, var[i]);
      snprintf(bounds + strlen(bounds), sizeof bounds - strlen(bounds), "%s%lld", sep, (long long)-ext[i]);
      at++;
    }
    printf(" (%s %s, at most %s: one kernel for every %s) %s", names,
           nv > 1 ? "size variables" : "a size variable", bounds, names, tc_dtype_name(o->dtype));
  } else
    printf("problem: gemm %lldx%lldx%lld%s%s%s %s", (long long)m, (long long)n, (long long)k,
           g > 1 ? " batched" : "", ta ? " A^T" : "", tb ? " B^T" : "", tc_dtype_name(o->dtype));
  if (e->ab_given) printf(" (A and B stored as %s)", tc_dtype_name(e->ab_type));
  printf(", epilogue");
  for (int i = 0; i < e->n; i++) {
    printf(" %s", ep_name[e->ops[i]]);
    if (e->ops[i] == EP_SCALE) printf(":%g", e->scale[i]);
  }
  if (e->reduce) printf(" %s", ep_name[e->reduce]);
  if (e->cast != TC_F32) printf(" cast:%s", tc_dtype_name(e->cast));
  printf("\n");
  op_print_device(o, r, have_dev, why);
  printf("perf config: %s (%s)\n", r->config[0] ? r->config : "none", r->source_detail);
  printf("schedule: %s\n", tc_fusion_schedule_note(f));
  if (m < 0 && n < 0)
    printf("kernel: %s (fusion), grid [one block per %lld rows of M (at most %lld), one per %lld "
           "columns of N (at most %lld), %lld] of blocks [%lld, %lld, %lld], shared memory %lld "
           "bytes\n", tc_kernel_name(kern), (long long)((-m + grid[0] - 1) / grid[0]),
           (long long)grid[0], (long long)((-n + grid[1] - 1) / grid[1]), (long long)grid[1],
           (long long)grid[2], (long long)block[0], (long long)block[1], (long long)block[2],
           (long long)tc_kernel_smem_bytes(kern));
  else if (n < 0) /* (No on BIDx where M is fixed) */
    printf("kernel: %s (fusion), grid [one block per %lld columns of N (at most %lld), %lld, %lld] "
           "of blocks [%lld, %lld, %lld], shared memory %lld bytes\n", tc_kernel_name(kern),
           (long long)((-n + grid[0] - 1) / grid[0]), (long long)grid[0], (long long)grid[1],
           (long long)grid[2], (long long)block[0], (long long)block[1], (long long)block[2],
           (long long)tc_kernel_smem_bytes(kern));
  else if (m < 0)
    printf("kernel: %s (fusion), grid [one block per %lld rows of M (at most %lld), %lld, %lld] of "
           "blocks [%lld, %lld, %lld], shared memory %lld bytes\n", tc_kernel_name(kern),
           (long long)((-m + grid[0] - 1) / grid[0]), (long long)grid[0], (long long)grid[1],
           (long long)grid[2], (long long)block[0], (long long)block[1], (long long)block[2],
           (long long)tc_kernel_smem_bytes(kern));
  else
  printf("kernel: %s (fusion), grid [%lld, %lld, %lld] of blocks [%lld, %lld, %lld], shared memory "
         "%lld bytes\n", tc_kernel_name(kern), (long long)grid[0], (long long)grid[1],
         (long long)grid[2], (long long)block[0], (long long)block[1], (long long)block[2],
         (long long)tc_kernel_smem_bytes(kern));
  fflush(stdout);
}

/* R in plain C: want[] (the f32 values before the cast) reduced over
 * each row or column in double, within the elements' bounds (their sum
 * for a sum, the largest for a max) and an f32 sum's rounding. */
static void reduce_reference(const gemm_epilogue *e, int64_t g, int64_t m, int64_t n,
                             const double *want, const double *bound, double *rwant, double *rbound) {
  int rows = e->reduce <= EP_ROW_MAX, sum = e->reduce == EP_ROW_SUM || e->reduce == EP_COL_SUM;
  int64_t keep = rows ? m : n, len = rows ? n : m, at = 0;
  for (int64_t q = 0; q < g; q++)
    for (int64_t i = 0; i < keep; i++, at++) {
      double v = sum ? 0 : -INFINITY, vabs = 0, err = 0;
      for (int64_t j = 0; j < len; j++) {
        int64_t c = (q * m + (rows ? i : j)) * n + (rows ? j : i);
        v = sum ? v + want[c] : fmax(v, want[c]);
        vabs += fabs(want[c]), err = sum ? err + bound[c] : fmax(err, bound[c]);
      }
      rwant[at] = v, rbound[at] = err + (sum ? (double)len * vabs * 0x1p-23 : 0) + 1e-6;
    }
}

/* Checks C (host[nin]) and R (host[nin + 1], relems of them) against the
 * plain C loop: the result into r (bad, max_abs, worst, the message). */
static void verify_outputs(const gemm_epilogue *e, tc_dtype t, int64_t g, int64_t m, int64_t n,
                           int64_t k, int ta, int tb, void *const *host, int nin, size_t relems,
                           op_report *r) {
  size_t celems = (size_t)(g * m * n);
  /* a sample of C's elements past TC_CHECK_FULL_MACS, as the GEMM
   * kernels' check, unless a reduction of whole rows or columns needs
   * every element */
  tc_gemm_check sample = {0};
  int64_t cell = 1;
  if (!relems && tc_gemm_check_sample(g, m, n, k, &sample, &cell) != 0) {
    r->verified = 1, r->bad = 1, r->pass = 0;
    snprintf(r->verify_msg, sizeof r->verify_msg, "out of memory for the check of C");
    return;
  }
  size_t count = sample.idx ? sample.n : celems;
  double *want = tc_xmalloc(count * sizeof *want), *bound = tc_xmalloc(count * sizeof *bound);
  reference(e, t, g, m, n, k, ta, tb, host, sample.idx, count, want, bound);
  r->verified = 1;
  if (sample.idx) r->checked = (int64_t)count, r->check_cell = cell;
  TC_STR_LOCAL(msg);
  r->bad = tc_tune_check(host[nin], e->cast, sample.idx, want, bound, count, &r->max_abs, &r->worst,
                         &msg);
  tc_gemm_check_free(&sample);
  snprintf(r->verify_msg, sizeof r->verify_msg, "%s", tc_str_cstr(&msg));
  if (relems) {
    double *rwant = tc_xmalloc(relems * sizeof *rwant), *rbound = tc_xmalloc(relems * sizeof *rbound);
    reduce_reference(e, g, m, n, want, bound, rwant, rbound);
    double max_abs, worst;
    tc_str_clear(&msg);
    int64_t bad = tc_tune_check(host[nin + 1], TC_F32, NULL, rwant, rbound, relems, &max_abs,
                                &worst, &msg);
    if (bad && !r->bad) snprintf(r->verify_msg, sizeof r->verify_msg, "R: %s", tc_str_cstr(&msg));
    r->bad += bad;
    r->max_abs = fmax(r->max_abs, max_abs), r->worst = fmax(r->worst, worst);
    free(rwant), free(rbound);
  }
  r->pass = r->bad == 0;
  free(want), free(bound);
}

/* The tuner's tile choices into a new array (*n of them): with 16-bit
 * operands the mma.sync candidates of the template GEMM's tuner (its
 * mma: perf configs, tc_gemm_candidates_for: CUDA sm_80 and newer; with
 * --macro mma on any target, OpenCL's emulation), mapped onto tiles, when
 * the fusion has no reduction or operand prologue (which the mma op type
 * does not take); then, unless --macro mma, FMA tiles of a small space
 * (block tiles of 32 to 128, K tiles of 8 and 16, 4x4, 4x8, 8x4 or 8x8
 * accumulators per thread, 16 to 512 threads; with a reduction the
 * reduced axis's block tile stays the scheduler's).  Each has a perf
 * config (tc_matmul_tiles_perf_config), the form it is stored in. */
static tc_matmul_tiles *tune_space(const op_opts *o, const gemm_epilogue *e, int64_t g, int64_t m,
                                   int64_t n, int64_t k, const char *arch, int *count) {
  int int16 = o->dtype == TC_F16 || o->dtype == TC_BF16, cap = 72, cands = 0;
  tc_gemm_params *pc = NULL;
  int npc = 0;
  if (int16 && !e->reduce && !e->ab_given) {
    tc_gemm_shape s;
    memset(&s, 0, sizeof s);
    s.g = g, s.m = m, s.n = n, s.k = k, s.dtype = o->dtype, s.c_dtype = o->dtype;
    npc = e->macro == TC_MACRO_MMA_M16N8K16 ? tc_gemm_mma_candidates(&s, &pc)
                                            : tc_gemm_candidates_for(&s, o->target, arch, &pc);
  }
  tc_matmul_tiles *list = tc_xcalloc((size_t)(npc + cap), sizeof *list);
  TC_STR_LOCAL(why);
  char cfg[64];
  for (int i = 0; i < npc; i++)
    if (tc_gemm_params_is_mma(&pc[i]) && tc_gemm_params_matmul_tiles(&pc[i], &list[cands], &why) == 0)
      cands++;
  free(pc);
  if (e->macro == TC_MACRO_MMA_M16N8K16) return *count = cands, list;
  static const int64_t blk[3] = {32, 64, 128}, ks[2] = {8, 16}, th[4][2] = {{4, 4}, {4, 8}, {8, 4}, {8, 8}};
  int rows = e->reduce == EP_ROW_SUM || e->reduce == EP_ROW_MAX, cols = e->reduce && !rows;
  int64_t pm = 1, pn = 1;
  while (pm < m) pm *= 2;
  while (pn < n) pn *= 2;
  if (rows && pn < 4) pn = 4;
  if (cols && pm < 4) pm = 4;
  for (int c = 0; c < cap; c++) {
    tc_matmul_tiles t = {cols ? pm : blk[c / 24], rows ? pn : blk[c / 8 % 3], ks[c / 4 % 2],
                         th[c % 4][0], th[c % 4][1], TC_MACRO_FMA};
    if ((cols && c / 24) || (rows && c / 8 % 3)) continue; /* (the reduced tile is fixed) */
    int64_t threads = (t.bm / t.tm) * (t.bn / t.tn);
    if (t.bm % t.tm || t.bn % t.tn || threads < 16 || threads > 512 || (t.bm > 32 && t.bm >= 2 * pm) ||
        (t.bn > 32 && t.bn >= 2 * pn) || tc_matmul_tiles_perf_config(&t, cfg, sizeof cfg))
      continue;
    list[cands++] = t;
  }
  *count = cands;
  return list;
}

/* --tune: the tile choices of tune_space, each compiled, run on the same
 * data, verified and timed (the median of 3 runs); at most --tune-max of
 * them (default 16), in that order, evenly spread over them when there
 * are more.  The fastest that verifies into *best; CLI_OK, or CLI_FAIL
 * when none ran. */
static int tune_tiles(op_opts *o, const gemm_epilogue *e, int64_t g, int64_t m, int64_t n,
                      int64_t k, int ta, int tb, const char *arch, op_report *r,
                      tc_matmul_tiles *best) {
  int cap = o->tune_max ? o->tune_max : TC_TUNE_DEFAULT_MAX, cands = 0, tried = 0, failed = 0;
  double best_ms = INFINITY;
  int rows = e->reduce == EP_ROW_SUM || e->reduce == EP_ROW_MAX;
  tc_matmul_tiles *list = tune_space(o, e, g, m, n, k, arch, &cands);
  fprintf(stderr, "tuning the fused GEMM's tiles on %s (%d candidates, at most %d tried)\n",
          r->device, cands, cap);
  void *host[GEMM_EPI_MAX + 4] = {NULL};
  int nin = 0;
  for (int q = 0; q < cands && q < cap; q++) {
    /* evenly spread over the candidates when there are more than cap */
    const tc_matmul_tiles *t = &list[cands > cap ? (int)((int64_t)q * cands / cap) : q];
    char cfg[64];
    tc_matmul_tiles_perf_config(t, cfg, sizeof cfg);
    tried++;
    tc_fusion *f = tc_fusion_new();
    tc_tensor *in[GEMM_EPI_MAX + 2], *red;
    int64_t cnt[GEMM_EPI_MAX + 2];
    tc_tensor *y = build(f, e, o->dtype, g, m, n, k, ta, tb, in, cnt, &nin, &red);
    tc_status st = !y ? TC_ERR_ARGUMENT : tc_add_output(f, y);
    if (!st && red) st = tc_add_output(f, red);
    if (!st) st = tc_schedule_matmul(f, o->target, arch, t);
    tc_compile_options opt = {o->target, arch, "gemm_fused"};
    tc_kernel *kern = st ? NULL : tc_compile(f, &opt, &st);
    size_t relems = !e->reduce ? 0 : (size_t)(g * (rows ? m : n));
    if (kern && !host[0]) { /* the data, once */
      uint64_t seed = 0x5eed0e11ull;
      for (int i = 0; i < nin; i++) {
        host[i] = tc_xcalloc((size_t)cnt[i], tc_dtype_size(tc_tensor_dtype(in[i])));
        tc_tune_fill(host[i], (size_t)cnt[i], tc_tensor_dtype(in[i]), &seed);
      }
      host[nin] = tc_xcalloc((size_t)(g * m * n), tc_dtype_size(e->cast));
      if (relems) host[nin + 1] = tc_xcalloc(relems, sizeof(float));
    }
    double ms[3] = {0, 0, 0}, first;
    op_report v;
    memset(&v, 0, sizeof v);
    if (kern && (st = tc_kernel_run(kern, host, o->device, &first)) == TC_OK) {
      verify_outputs(e, o->dtype, g, m, n, k, ta, tb, host, nin, relems, &v);
      for (int i = 0; i < 3 && st == TC_OK && v.pass; i++) st = tc_kernel_run(kern, host, o->device, &ms[i]);
    }
    if (kern && st == TC_OK && v.pass) {
      double med = op_median(ms, 3);
      fprintf(stderr, "  tiles %lld,%lld,%lld,%lld,%lld%s%s (%s): %.4f ms\n", (long long)t->bm,
              (long long)t->bn, (long long)t->bk, (long long)t->tm, (long long)t->tn,
              t->macro ? " " : "", t->macro ? gemm_macro_name[t->macro] : "", cfg, med);
      if (med < best_ms) best_ms = med, *best = *t;
    } else {
      failed++;
      fprintf(stderr, "  tiles %lld,%lld,%lld,%lld,%lld%s%s (%s): %s\n", (long long)t->bm,
              (long long)t->bn, (long long)t->bk, (long long)t->tm, (long long)t->tn,
              t->macro ? " " : "", t->macro ? gemm_macro_name[t->macro] : "", cfg,
              !kern ? tc_fusion_error(f) : st ? tc_kernel_error(kern) : "wrong result");
    }
    tc_kernel_free(kern);
    tc_fusion_free(f);
  }
  for (int i = 0; i <= nin + 1; i++) free(host[i]);
  free(list);
  r->tuned = 1;
  r->tune.candidates = cands, r->tune.tried = tried, r->tune.skipped = failed;
  r->tune.best_ms = best_ms, r->tune.stored = 0;
  if (!isfinite(best_ms)) return op_fail(o, "tuning failed: none of %d tile choices ran correctly", tried);
  return CLI_OK;
}

/* The tuned tiles into the perf DB under the key (the problem string with
 * the epilogue, and the arch where the target has one), the target and
 * the device: r->tune.stored, r->db_path (the caller frees it) and the
 * detail of the "perf config:" line. */
static void tune_store(const op_opts *o, const char *dbkey, op_report *r) {
  tc_perfdb *db = NULL;
  TC_STR_LOCAL(why);
  int n = snprintf(r->source_detail, sizeof r->source_detail, "tuned: fastest of %d tried, %.4f ms; ",
                   r->tune.tried, r->tune.best_ms);
  char *rest = r->source_detail + n;
  size_t left = sizeof r->source_detail - (size_t)n;
  if (tc_perfdb_open(NULL, 1, &db, &why) == 1 &&
      tc_perfdb_put(db, dbkey, tc_target_name(o->target), r->device, r->config, r->tune.best_ms, &why) == 0) {
    r->tune.stored = 1;
    r->db_path = tc_xstrdup(tc_perfdb_path(db));
    snprintf(rest, left, "stored in the perf DB %s", r->db_path);
  } else {
    fprintf(stderr, "tilec %s: warning: %s; the tuning result is not stored\n", o->cmd, tc_str_cstr(&why));
    snprintf(rest, left, "not stored: %s", tc_str_cstr(&why));
  }
  tc_perfdb_close(db);
}

/* r's perf config (that of the tiles, "" where they have none), source
 * and detail; warn (may be "") printed as op_set_plan does. */
static void set_plan(const op_opts *o, op_report *r, const tc_matmul_tiles *t, const char *source,
                     const char *detail, const char *warn) {
  char cfg[sizeof r->config];
  tc_matmul_tiles_perf_config(t, cfg, sizeof cfg);
  op_set_plan(o, r, warn, cfg, source, detail);
}

/* The tiles of the run and where they come from, in r (config, source,
 * source_detail: as the template GEMM's plan, docs/conv_cli.md):
 * --perf-config (mapped onto the tiles), --tune (stored in the perf DB),
 * --tiles, the perf DB's entry for dbkey on this device, else the
 * scheduler's (*tl->bm 0: tc_schedule_auto).  CLI_OK, or the exit code
 * after a message. */
static int plan_tiles(op_opts *o, const gemm_epilogue *e, int64_t g, int64_t m, int64_t n,
                      int64_t k, int ta, int tb, const char *arch, const char *dbkey, op_report *r,
                      tc_matmul_tiles *tl) {
  TC_STR_LOCAL(why);
  memset(tl, 0, sizeof *tl);
  if (o->perf_config) {
    tc_gemm_params p;
    if (tc_gemm_params_parse(o->perf_config, &p, &why) != 0)
      return op_invalid(o, "bad perf config '%s': %s", o->perf_config, tc_str_cstr(&why));
    if (tc_gemm_params_matmul_tiles(&p, tl, &why) != 0)
      return op_invalid(o, "perf config %s breaks a rule for this GEMM (G %lld, M %lld, N %lld, K "
                        "%lld): %s", o->perf_config, (long long)g, (long long)m, (long long)n,
                        (long long)k, tc_str_cstr(&why));
    set_plan(o, r, tl, "option", "", "");
    return CLI_OK;
  }
  if (o->tune) {
    int runs;
    if (!op_find_device(o, r, &runs, &why) || tune_tiles(o, e, g, m, n, k, ta, tb, arch, r, tl) != CLI_OK)
      return CLI_FAIL;
    set_plan(o, r, tl, "tuned", "", "");
    tune_store(o, dbkey, r);
    return CLI_OK;
  }
  if (e->tiles[0]) {
    *tl = (tc_matmul_tiles){e->tiles[0], e->tiles[1], e->tiles[2], e->tiles[3], e->tiles[4], e->macro,
                            e->stages};
    set_plan(o, r, tl, "option", "", "");
    /* (op_set_plan says "--perf-config" for an option) */
    snprintf(r->source_detail, sizeof r->source_detail, "--tiles");
    return CLI_OK;
  }
  TC_STR_LOCAL(warn);
  char dev[256];
  tc_perfdb *db = NULL;
  int found = 0;
  tc_perfdb_entry ent;
  if (tc_tune_device_name(o->target, o->device, dev, sizeof dev, &why) == TC_OK &&
      (found = tc_perfdb_open(NULL, 0, &db, &why)) == 1)
    found = tc_perfdb_get(db, dbkey, tc_target_name(o->target), dev, &ent, &why);
  if (found < 0) tc_str_printf(&warn, "the perf DB was not used: %s", tc_str_cstr(&why));
  if (found == 1) {
    tc_gemm_params p;
    if (tc_gemm_params_parse(ent.perf_config, &p, &why) == 0 &&
        tc_gemm_params_matmul_tiles(&p, tl, &why) == 0) {
      char detail[sizeof r->source_detail];
      snprintf(detail, sizeof detail, "from the perf DB %s; tuned to %.4f ms by tilec %s",
               tc_perfdb_path(db), ent.ms, ent.version);
      set_plan(o, r, tl, "perfdb", detail, "");
      tc_perfdb_close(db);
      return CLI_OK;
    }
    memset(tl, 0, sizeof *tl);
    tc_str_printf(&warn, "the perf DB entry %s does not fit: %s", ent.perf_config, tc_str_cstr(&why));
  }
  tc_perfdb_close(db);
  /* the scheduler's tiles, as tc_schedule_auto picks them */
  int rax = !e->reduce ? -1 : e->reduce == EP_ROW_SUM || e->reduce == EP_ROW_MAX ? 1 : 0;
  const char *not_what, *why_not;
  tc_matmul_tiles auto_tl = tc_matmul_auto_choice(o->target, arch, o->dtype, m < 0 ? -m : m,
                                                  n < 0 ? -n : n, k < 0 ? -k : k, rax, e->ab_given,
                                                  &not_what, &why_not);
  char detail[sizeof r->source_detail];
  snprintf(detail, sizeof detail, "heuristic, the matmul scheduler's tiles %lld,%lld,%lld,%lld,%lld%s%s%s%s",
           (long long)auto_tl.bm, (long long)auto_tl.bn, (long long)auto_tl.bk,
           (long long)auto_tl.tm, (long long)auto_tl.tn, auto_tl.macro ? " " : "",
           auto_tl.macro ? gemm_macro_name[auto_tl.macro] : "", warn.len ? "; " : "", tc_str_cstr(&warn));
  set_plan(o, r, &auto_tl, "heuristic", detail, tc_str_cstr(&warn));
  return CLI_OK;
}

/* The values a kernel with size variables runs at (those up to the
 * bounds): each of dyn_vals for one variable; for two, the pairs (the
 * first of M, N, K that is open, then the second); for all three, the
 * triples (M, N, K). */
static const int64_t dyn_vals[] = {1, 7, 64, 129, 1000};
static const int64_t dyn_pairs[][2] = {{1, 1}, {7, 64}, {64, 129}, {129, 7}, {1000, 1000}};
static const int64_t dyn_triples[][3] = {{1, 1, 1}, {7, 64, 129}, {64, 129, 7}, {129, 7, 64}, {1000, 129, 1000}};
#define DYN_RUNS 5

/* The element count of input t at (M, N, K) = mnk (its axes of those
 * size variables at those values). */
static int64_t count_at(const tc_tensor *t, const int64_t *mnk) {
  int64_t c = 1;
  for (int a = 0; a < tc_tensor_ndims(t); a++) {
    const char *v = tc_tensor_axis_size_var(t, a);
    c *= !v ? tc_tensor_extent(t, a) : mnk[v[0] == 'M' ? 0 : v[0] == 'N' ? 1 : 2];
  }
  return c;
}

/* -M dyn / -N dyn / -K dyn: runs kern, compiled for every value of its
 * size variables, at DYN_RUNS points (dyn_vals, dyn_pairs or
 * dyn_triples) up to the bounds (ext[i] < 0: -bound of M, N, K; else the
 * fixed extent) on fresh data, each checked (-V 1) and timed (--time);
 * the text lines, or the JSON's "runs" array into j.  CLI_OK when every
 * check passed. */
static int run_dyn(op_opts *o, const gemm_epilogue *e, tc_kernel *kern, tc_tensor *const *in, int nin,
                   const int64_t *ext, tc_str *j) {
  static const char *var[3] = {"M", "N", "K"};
  int rc = CLI_OK, first = 1, nvar = (ext[0] < 0) + (ext[1] < 0) + (ext[2] < 0);
  tc_str_cat(j, ", \"runs\": [");
  for (int q = 0; q < DYN_RUNS && rc != CLI_FAIL; q++) {
    int64_t v[3]; /* M, N, K of this run */
    bool over = false;
    for (int i = 0, at = 0; i < 3; i++) {
      if (ext[i] >= 0) {
        v[i] = ext[i];
        continue;
      }
      v[i] = nvar == 1 ? dyn_vals[q] : nvar == 2 ? dyn_pairs[q][at] : dyn_triples[q][i];
      over |= v[i] > -ext[i];
      at++;
    }
    if (over) continue;
    int64_t m = v[0], n = v[1], k = v[2];
    void *host[GEMM_EPI_MAX + 4] = {NULL}, *args[GEMM_EPI_MAX + 7] = {NULL};
    uint64_t seed = 0x5eed0e11ull;
    op_report r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < nin; i++) {
      tc_dtype t = tc_tensor_dtype(in[i]);
      int64_t c = count_at(in[i], v);
      host[i] = tc_xcalloc((size_t)c, tc_dtype_size(t));
      tc_tune_fill(host[i], (size_t)c, t, &seed);
    }
    size_t celems = (size_t)(m * n);
    size_t relems = !e->reduce ? 0 : (size_t)(e->reduce <= EP_ROW_MAX ? m : n);
    host[nin] = tc_xcalloc(celems, tc_dtype_size(e->cast));
    if (relems) host[nin + 1] = tc_xcalloc(relems, sizeof(float));
    /* the parameters: each variable's (filled by the run) before the
     * first input that names it (M and K before A, N before B), in the
     * kernel's order of its variables */
    int64_t sizes[3];
    int nk = tc_kernel_size_var_count(kern);
    for (int i = 0; i < nk && i < 3; i++) {
      const char *name = tc_kernel_size_var_at(kern, i, NULL, NULL);
      sizes[i] = v[name[0] == 'M' ? 0 : name[0] == 'N' ? 1 : 2];
    }
    for (int i = 0, at = 0; i < nin + 2; i++) {
      if (i == 0) at += (ext[0] < 0) + (ext[2] < 0);
      if (i == 1 && ext[1] < 0) at++;
      args[at++] = host[i];
    }
    tc_status st = tc_kernel_run_sizes(kern, args, sizes, nk, o->device, &r.first_ms);
    char at_text[64] = "";
    for (int i = 0; i < 3; i++)
      if (ext[i] < 0)
        snprintf(at_text + strlen(at_text), sizeof at_text - strlen(at_text), "%s%s = %lld",
                 at_text[0] ? ", " : "", var[i], (long long)v[i]);
    if (st != TC_OK) {
      rc = op_fail(o, "%s: the kernel failed (%s): %s", at_text, tc_status_name(st), tc_kernel_error(kern));
    } else {
      r.ran = 1;
      if (o->verify) verify_outputs(e, o->dtype, 1, m, n, k, 0, 0, host, nin, relems, &r);
      if (o->time) {
        double *times = tc_xcalloc((size_t)o->iters, sizeof *times);
        for (int i = 0; i < o->iters && st == TC_OK; i++)
          st = tc_kernel_run_sizes(kern, args, sizes, nk, o->device, &times[i]);
        if (st != TC_OK) free(times), rc = op_fail(o, "the kernel failed: %s", tc_kernel_error(kern));
        else op_set_time(o, &r, times, 2.0 * (double)m * (double)n * (double)k);
      }
      if (r.verified && !r.pass) rc = CLI_FAIL;
    }
    if (r.ran && !o->json) {
      printf("%s:\n", at_text);
      op_print_run(o, &r, 1, (int64_t)(celems + relems));
    }
    if (r.ran) {
      tc_str_printf(j, "%s{", first ? "" : ", ");
      for (int i = 0, at = 0; i < 3; i++)
        if (ext[i] < 0) tc_str_printf(j, "%s\"%c\": %lld", at++ ? ", " : "", "mnk"[i], (long long)v[i]);
      op_json_run(j, o, &r, 1);
      tc_str_cat(j, "}");
      first = 0;
    }
    for (int i = 0; i < nin + 2; i++) free(host[i]);
  }
  tc_str_cat(j, "]");
  return rc;
}

/* --json with size variables: the gemm command's object with "m", "n"
 * and / or "k" "dyn", the size variables (in the kernel's order), and
 * one entry of "runs" per run. */
static void print_json_dyn(const op_opts *o, const char *key, const char *list, int64_t m, int64_t n,
                           int64_t k, const tc_fusion *f, const tc_kernel *kern, const op_report *r,
                           const tc_str *runs, int ok) {
  tc_str j;
  tc_str_init(&j);
  tc_str_cat(&j, "{\"command\": \"gemm\", \"kernel\": \"fusion\", \"problem\": {\"string\": ");
  op_json_str(&j, key);
  char mtext[24], ntext[24], ktext[24];
  snprintf(mtext, sizeof mtext, m < 0 ? "\"dyn\"" : "%lld", (long long)m);
  snprintf(ntext, sizeof ntext, n < 0 ? "\"dyn\"" : "%lld", (long long)n);
  snprintf(ktext, sizeof ktext, k < 0 ? "\"dyn\"" : "%lld", (long long)k);
  tc_str_printf(&j, ", \"g\": 1, \"m\": %s, \"n\": %s, \"k\": %s, \"transA\": 0, "
                "\"transB\": 0, \"dtype\": \"%s\", \"epilogue\": ", mtext, ntext, ktext,
                tc_dtype_name(o->dtype));
  op_json_str(&j, list);
  op_json_size_vars(&j, kern);
  tc_str_cat(&j, "}");
  op_json_device(&j, o, r);
  tc_str_cat(&j, ", \"schedule\": ");
  op_json_str(&j, tc_fusion_schedule_note(f));
  int64_t grid[3], block[3];
  tc_kernel_launch_dims(kern, grid, block);
  tc_str_cat(&j, ", \"kernels\": [{\"name\": ");
  op_json_str(&j, tc_kernel_name(kern));
  /* (the grid at the bounds: M's blocks on x, one per rows_per_block_x
   * rows; N's on x where M is fixed, else y, one per columns_per_block_x
   * or _y columns) */
  tc_str_printf(&j, ", \"grid\": [%lld, %lld, %lld]", (long long)grid[0], (long long)grid[1],
                (long long)grid[2]);
  if (m < 0) tc_str_printf(&j, ", \"rows_per_block_x\": %lld", (long long)((-m + grid[0] - 1) / grid[0]));
  if (n < 0)
    tc_str_printf(&j, ", \"columns_per_block_%s\": %lld", m < 0 ? "y" : "x",
                  (long long)((-n + grid[m < 0] - 1) / grid[m < 0]));
  tc_str_printf(&j, ", \"block\": [%lld, %lld, %lld], \"smem_bytes\": %lld}], \"cached\": %s%s",
                (long long)block[0], (long long)block[1], (long long)block[2],
                (long long)tc_kernel_smem_bytes(kern), tc_kernel_from_cache(kern) ? "true" : "false",
                tc_str_cstr(runs));
  op_json_end(&j, ok);
}

int gemm_epilogue_run(op_opts *o, const gemm_epilogue *e, int64_t g, int64_t m, int64_t n, int64_t k,
                      int ta, int tb) {
  if (o->dtype != TC_F32 && o->dtype != TC_F16 && o->dtype != TC_BF16)
    return op_usage_error(o, "--epilogue takes -t f32, f16 or bf16");
  /* -M dyn / -N dyn / -K dyn: the bounds keep every tensor (A [M, K],
   * B [K, N], C [M, N]) under 2^31 elements: a variable is at most
   * 2^31 / E beside each fixed extent E of its tensors (every tensor
   * holds two of M, N, K), and 46340 beside another variable (46340^2 <
   * 2^31) */
  bool dyn = m < 0 || n < 0 || k < 0;
  int64_t *dims[3] = {&m, &n, &k}, bound[3];
  for (int i = 0; i < 3; i++) {
    bound[i] = INT64_MAX;
    for (int p = 0; p < 3; p++) {
      int64_t cap = p == i ? INT64_MAX : *dims[p] < 0 ? 46340 : 2147483647 / *dims[p];
      if (cap < bound[i]) bound[i] = cap;
    }
  }
  for (int i = 0; i < 3; i++)
    if (*dims[i] < 0) *dims[i] = -bound[i];
  tc_fusion *f = tc_fusion_new();
  tc_tensor *in[GEMM_EPI_MAX + 2];
  int64_t cnt[GEMM_EPI_MAX + 2];
  void *host[GEMM_EPI_MAX + 4] = {NULL};
  double *times = NULL;
  int nin = 0, rc = CLI_FAIL, kern_json_done = 0;
  tc_kernel *kern = NULL;
  TC_STR_LOCAL(why);
  op_report r;
  memset(&r, 0, sizeof r);
  char list[GEMM_EPI_MAX * 24 + 16], key[sizeof list + 180], stages_text[24] = "";
  list_string(e, list, sizeof list);
  if (e->stages > 1) snprintf(stages_text, sizeof stages_text, " --stages %d", e->stages);
  char mtext[24], ntext[24], ktext[24];
  snprintf(mtext, sizeof mtext, m < 0 ? "dyn" : "%lld", (long long)m);
  snprintf(ntext, sizeof ntext, n < 0 ? "dyn" : "%lld", (long long)n);
  snprintf(ktext, sizeof ktext, k < 0 ? "dyn" : "%lld", (long long)k);
  snprintf(key, sizeof key, "gemm -g %lld -M %s -N %s -K %s --transA %d --transB %d -t %s "
           "--epilogue %s%s%s%s%s%s", (long long)g, mtext, ntext, ktext, ta, tb,
           tc_dtype_name(o->dtype), list, e->ab_given ? " --ab-type " : "",
           e->ab_given ? tc_dtype_name(e->ab_type) : "",
           stages_text, e->macro ? " --macro " : "", e->macro ? gemm_macro_name[e->macro] : "");
  const char *arch = o->target == TC_TARGET_OPENCL ? NULL : tc_target_ops_arch(o->target, o->arch);
  /* the perf DB key: the problem (without --macro: the perf config says
   * the op type) and the arch the kernel is built for */
  char dbkey[sizeof key + 40];
  size_t macro_len = e->macro ? strlen(" --macro ") + strlen(gemm_macro_name[e->macro]) : 0;
  snprintf(dbkey, sizeof dbkey, "%.*s%s%s", (int)(strlen(key) - macro_len), key, arch ? " --arch " : "",
           arch ? arch : "");
  tc_matmul_tiles tl;
  if ((rc = plan_tiles(o, e, g, m, n, k, ta, tb, arch, dbkey, &r, &tl)) != CLI_OK) goto out;
  rc = CLI_FAIL;
  tc_tensor *red, *y = build(f, e, o->dtype, g, m, n, k, ta, tb, in, cnt, &nin, &red);
  tc_status st = !y ? TC_ERR_ARGUMENT : tc_add_output(f, y);
  if (!st && red) st = tc_add_output(f, red);
  if (!st) st = tl.bm ? tc_schedule_matmul(f, o->target, arch, &tl) : tc_schedule_auto(f, o->target, arch);
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
  int runs, have_dev = op_find_device(o, &r, &runs, &why);
  if (!have_dev && runs) goto out;
  if (!o->json) print_text(o, e, &r, have_dev, tc_str_cstr(&why), f, kern, g, m, n, k, ta, tb);
  if (!o->json && r.tuned)
    printf("tune: tiles %lld,%lld,%lld,%lld,%lld%s%s the fastest of %d candidates (%d failed), %.4f "
           "ms\n", (long long)tl.bm, (long long)tl.bn, (long long)tl.bk, (long long)tl.tm,
           (long long)tl.tn, tl.macro ? " " : "", tl.macro ? gemm_macro_name[tl.macro] : "", r.tune.tried, r.tune.skipped, r.tune.best_ms);
  if (o->emit) {
    if (op_write_file(o, o->emit, tc_kernel_source(kern)) != CLI_OK) goto out;
    if (!o->json) printf("emit: 1 kernel written to %s\n", o->emit);
  }
  if (!runs) {
    rc = op_build_only(o, have_dev, tc_str_cstr(&why), tc_kernel_source(kern), tc_kernel_name(kern));
    goto out;
  }
  if (dyn) {
    if (!o->json)
      printf("cache: %s\n", tc_kernel_from_cache(kern) ? "hit (the kernel was read from the cache)"
                                                      : "miss (the kernel was compiled)");
    TC_STR_LOCAL(runs_json);
    int64_t ext[3] = {m, n, k};
    rc = run_dyn(o, e, kern, in, nin, ext, &runs_json);
    if (o->json) print_json_dyn(o, key, list, m, n, k, f, kern, &r, &runs_json, rc == CLI_OK);
    kern_json_done = 1;
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
  size_t relems = !e->reduce ? 0 : (size_t)(g * (e->reduce <= EP_ROW_MAX ? m : n));
  if (!(host[nin] = calloc(celems, tc_dtype_size(e->cast))) ||
      (relems && !(host[nin + 1] = calloc(relems, sizeof(float))))) {
    op_fail(o, "cannot allocate C");
    goto out;
  }
  if ((st = tc_kernel_run(kern, host, o->device, &r.first_ms)) != TC_OK) {
    op_fail(o, "the kernel failed (%s): %s", tc_status_name(st), tc_kernel_error(kern));
    goto out;
  }
  r.ran = 1;
  if (o->verify) verify_outputs(e, o->dtype, g, m, n, k, ta, tb, host, nin, relems, &r);
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
  if (!o->json) op_print_run(o, &r, 1, (int64_t)(celems + relems));
  rc = !r.verified || r.pass ? CLI_OK : CLI_FAIL;
out:
  if (kern_json_done)
    ;
  else if (o->json && kern && dyn)
    op_json_failure(o, key);
  else if (o->json && kern)
    print_json(o, key, list, o->dtype, g, m, n, k, ta, tb, f, kern, &r, rc == CLI_OK);
  else if (o->json)
    op_json_failure(o, key);
  for (int i = 0; i <= nin + 1; i++) free(host[i]);
  free(times);
  free((char *)r.db_path);
  tc_kernel_free(kern);
  tc_fusion_free(f);
  return rc;
}
