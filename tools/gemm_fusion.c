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

enum { EP_BIAS, EP_BIAS_M, EP_SCALE, EP_RESIDUAL, EP_RELU, EP_GELU, EP_SILU, EP_CAST, EP_ROW_SUM,
       EP_ROW_MAX, EP_COL_SUM, EP_COL_MAX };
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
        "                          accumulators per thread (default: the scheduler's choice)\n"
        "  --ab-type f32|f16|bf16  with --epilogue: A and B are stored in this type and cast\n"
        "                          to -t's as their tiles are staged (default: -t's)\n"
        "                          (--tune with --epilogue: times a few tile choices, runs the\n"
        "                          fastest; not with --tiles)\n"
        "  --macro fma|mma|wgmma   with --tiles: the products as FMA outer products (default),\n"
        "                          as mma.sync m16n8k16 (f16/bf16; cuda sm_80+, emulated on\n"
        "                          opencl; TM x TN is each warp's tile, multiples of 16 x 8,\n"
        "                          BK a multiple of 16) or as wgmma m64nNk16 (f16/bf16; cuda\n"
        "                          sm_90a, emulated on opencl; TM x TN is each warp group's\n"
        "                          tile, TM 64 and TN = N a multiple of 8 up to 256, BK a\n"
        "                          multiple of 16)\n",
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
  if ((v = op_value(o, argc, argv, i, "--ab-type", rc))) {
    static const tc_dtype types[3] = {TC_F32, TC_F16, TC_BF16};
    e->ab_given = 1;
    for (int k = 0; k < 3; k++)
      if (strcmp(v, tc_dtype_name(types[k])) == 0) return e->ab_type = types[k], 1;
    return *rc = op_usage_error(o, "--ab-type takes f32, f16 or bf16, got '%s'", v), 1;
  }
  if (*rc != CLI_OK) return 1;
  if ((v = op_value(o, argc, argv, i, "--macro", rc))) {
    if (strcmp(v, "fma") && strcmp(v, "mma") && strcmp(v, "wgmma"))
      return *rc = op_usage_error(o, "--macro takes fma, mma or wgmma, got '%s'", v), 1;
    e->macro = !strcmp(v, "mma") ? TC_MACRO_MMA_M16N8K16 : !strcmp(v, "wgmma") ? TC_MACRO_WGMMA
                                                                               : TC_MACRO_FMA;
    return 1;
  }
  if (*rc != CLI_OK) return 1;
  v = op_value(o, argc, argv, i, "--epilogue", rc);
  if (!v) return *rc != CLI_OK;
  gemm_epilogue keep = *e;
  gemm_epilogue_init(e);
  memcpy(e->tiles, keep.tiles, sizeof keep.tiles);
  e->ab_given = keep.ab_given, e->ab_type = keep.ab_type;
  e->macro = keep.macro;
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
  int r = g > 1 ? 3 : 2, o = r - 2;
  int64_t sa[3] = {g}, sb[3] = {g}, sc[3] = {g};
  sa[o] = ta ? k : m, sa[o + 1] = ta ? m : k;
  sb[o] = tb ? n : k, sb[o + 1] = tb ? k : n;
  sc[o] = m, sc[o + 1] = n;
  int perm[3] = {0, 1, 2};
  perm[o] = o + 1, perm[o + 1] = o;
  tc_dtype st = e->ab_given ? e->ab_type : t;
  in[0] = tc_input(f, st, r, sa), in[1] = tc_input(f, st, r, sb), *nin = 2;
  cnt[0] = g * m * k, cnt[1] = g * k * n;
  /* (with --ab-type, the casts are the operands' prologue) */
  tc_tensor *a = st != t ? tc_cast(f, in[0], t) : in[0], *b = st != t ? tc_cast(f, in[1], t) : in[1];
  tc_tensor *y = tc_matmul(f, ta ? tc_permute(f, a, perm) : a, tb ? tc_permute(f, b, perm) : b);
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

/* The plain C result and its bound per element. */
static void reference(const gemm_epilogue *e, tc_dtype t, int64_t g, int64_t m, int64_t n, int64_t k,
                      int ta, int tb, void *const *host, double *want, double *bound) {
  for (int64_t q = 0; q < g; q++)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0, sabs = 0;
        for (int64_t kk = 0; kk < k; kk++) {
          tc_dtype st = e->ab_given ? e->ab_type : t;
          double a = operand_value(st, t, host[0], q * m * k + (ta ? kk * m + i : i * k + kk));
          double b = operand_value(st, t, host[1], q * k * n + (tb ? j * k + kk : kk * n + j));
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
  printf("schedule: %s\n", tc_fusion_schedule_note(f));
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
  double *want = tc_xmalloc(celems * sizeof *want), *bound = tc_xmalloc(celems * sizeof *bound);
  reference(e, t, g, m, n, k, ta, tb, host, want, bound);
  r->verified = 1;
  TC_STR_LOCAL(msg);
  r->bad = tc_tune_check(host[nin], e->cast, NULL, want, bound, celems, &r->max_abs, &r->worst, &msg);
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

/* --tune: tc_schedule_matmul's tiles from a small space (block tiles of
 * 32 to 128, K tiles of 8 and 16, 4x4, 4x8, 8x4 or 8x8 accumulators per
 * thread, 16 to 512 threads; with a reduction the reduced axis's block
 * tile stays the scheduler's), each compiled, run on the same data,
 * verified and timed (the median of 3 runs); at most --tune-max of them
 * (default 16), in that order.  The fastest that verifies into best[];
 * CLI_OK, or CLI_FAIL when none ran. */
static int tune_tiles(op_opts *o, const gemm_epilogue *e, int64_t g, int64_t m, int64_t n,
                      int64_t k, int ta, int tb, const char *arch, op_report *r, int64_t *best) {
  static const int64_t blk[3] = {32, 64, 128}, ks[2] = {8, 16}, th[4][2] = {{4, 4}, {4, 8}, {8, 4}, {8, 8}};
  int cap = o->tune_max ? o->tune_max : TC_TUNE_DEFAULT_MAX, cands = 0, tried = 0, failed = 0;
  double best_ms = INFINITY;
  int rows = e->reduce == EP_ROW_SUM || e->reduce == EP_ROW_MAX, cols = e->reduce && !rows;
  int64_t pm = 1, pn = 1;
  while (pm < m) pm *= 2;
  while (pn < n) pn *= 2;
  if (rows && pn < 4) pn = 4;
  if (cols && pm < 4) pm = 4;
  int64_t list[72][5];
  for (int c = 0; c < 72; c++) {
    int64_t *t = list[cands];
    t[0] = cols ? pm : blk[c / 24], t[1] = rows ? pn : blk[c / 8 % 3], t[2] = ks[c / 4 % 2];
    t[3] = th[c % 4][0], t[4] = th[c % 4][1];
    if ((cols && c / 24) || (rows && c / 8 % 3)) continue; /* (the reduced tile is fixed) */
    int64_t threads = (t[0] / t[3]) * (t[1] / t[4]);
    if (t[0] % t[3] || t[1] % t[4] || threads < 16 || threads > 512 || (t[0] > 32 && t[0] >= 2 * pm) ||
        (t[1] > 32 && t[1] >= 2 * pn))
      continue;
    cands++;
  }
  fprintf(stderr, "tuning the fused GEMM's tiles on %s (%d candidates, at most %d tried)\n",
          r->device, cands, cap);
  void *host[GEMM_EPI_MAX + 4] = {NULL};
  int nin = 0;
  for (int q = 0; q < cands && q < cap; q++) {
    /* evenly spread over the candidates when there are more than cap */
    const int64_t *t = list[cands > cap ? (int)((int64_t)q * cands / cap) : q];
    tried++;
    tc_fusion *f = tc_fusion_new();
    tc_tensor *in[GEMM_EPI_MAX + 2], *red;
    int64_t cnt[GEMM_EPI_MAX + 2];
    tc_tensor *y = build(f, e, o->dtype, g, m, n, k, ta, tb, in, cnt, &nin, &red);
    tc_status st = !y ? TC_ERR_ARGUMENT : tc_add_output(f, y);
    if (!st && red) st = tc_add_output(f, red);
    tc_matmul_tiles tl = {t[0], t[1], t[2], t[3], t[4]};
    if (!st) st = tc_schedule_matmul(f, o->target, arch, &tl);
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
      fprintf(stderr, "  tiles %lld,%lld,%lld,%lld,%lld: %.4f ms\n", (long long)t[0], (long long)t[1],
              (long long)t[2], (long long)t[3], (long long)t[4], med);
      if (med < best_ms) best_ms = med, memcpy(best, t, 5 * sizeof *t);
    } else {
      failed++;
      fprintf(stderr, "  tiles %lld,%lld,%lld,%lld,%lld: %s\n", (long long)t[0], (long long)t[1],
              (long long)t[2], (long long)t[3], (long long)t[4],
              !kern ? tc_fusion_error(f) : st ? tc_kernel_error(kern) : "wrong result");
    }
    tc_kernel_free(kern);
    tc_fusion_free(f);
  }
  for (int i = 0; i <= nin + 1; i++) free(host[i]);
  r->tuned = 1;
  r->tune.candidates = cands, r->tune.tried = tried, r->tune.skipped = failed;
  r->tune.best_ms = best_ms, r->tune.stored = 0;
  if (!isfinite(best_ms)) return op_fail(o, "tuning failed: none of %d tile choices ran correctly", tried);
  return CLI_OK;
}

int gemm_epilogue_run(op_opts *o, const gemm_epilogue *e, int64_t g, int64_t m, int64_t n, int64_t k,
                      int ta, int tb) {
  if (o->dtype != TC_F32 && o->dtype != TC_F16 && o->dtype != TC_BF16)
    return op_usage_error(o, "--epilogue takes -t f32, f16 or bf16");
  tc_fusion *f = tc_fusion_new();
  tc_tensor *in[GEMM_EPI_MAX + 2];
  int64_t cnt[GEMM_EPI_MAX + 2];
  void *host[GEMM_EPI_MAX + 4] = {NULL};
  double *times = NULL;
  int nin = 0, rc = CLI_FAIL;
  tc_kernel *kern = NULL;
  TC_STR_LOCAL(why);
  op_report r;
  memset(&r, 0, sizeof r);
  char list[GEMM_EPI_MAX * 24 + 16], key[sizeof list + 160];
  list_string(e, list, sizeof list);
  snprintf(key, sizeof key, "gemm -g %lld -M %lld -N %lld -K %lld --transA %d --transB %d -t %s "
           "--epilogue %s%s%s%s", (long long)g, (long long)m, (long long)n, (long long)k, ta, tb,
           tc_dtype_name(o->dtype), list, e->ab_given ? " --ab-type " : "",
           e->ab_given ? tc_dtype_name(e->ab_type) : "",
           e->macro == TC_MACRO_MMA_M16N8K16 ? " --macro mma"
           : e->macro == TC_MACRO_WGMMA      ? " --macro wgmma"
                                             : "");
  const char *arch = o->target == TC_TARGET_OPENCL ? NULL : tc_target_ops_arch(o->target, o->arch);
  gemm_epilogue tuned;
  if (o->tune) {
    int runs;
    int64_t best[5];
    if (!op_find_device(o, &r, &runs, &why) ||
        tune_tiles(o, e, g, m, n, k, ta, tb, arch, &r, best) != CLI_OK)
      goto out;
    tuned = *e;
    memcpy(tuned.tiles, best, sizeof best);
    e = &tuned;
  }
  tc_tensor *red, *y = build(f, e, o->dtype, g, m, n, k, ta, tb, in, cnt, &nin, &red);
  tc_status st = !y ? TC_ERR_ARGUMENT : tc_add_output(f, y);
  if (!st && red) st = tc_add_output(f, red);
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
  int runs, have_dev = op_find_device(o, &r, &runs, &why);
  if (!have_dev && runs) goto out;
  if (!o->json) print_text(o, e, &r, have_dev, tc_str_cstr(&why), f, kern, g, m, n, k, ta, tb);
  if (!o->json && r.tuned)
    printf("tune: tiles %lld,%lld,%lld,%lld,%lld the fastest of %d candidates (%d failed), %.4f "
           "ms\n", (long long)e->tiles[0], (long long)e->tiles[1], (long long)e->tiles[2],
           (long long)e->tiles[3], (long long)e->tiles[4], r.tune.tried, r.tune.skipped,
           r.tune.best_ms);
  if (o->emit) {
    if (op_write_file(o, o->emit, tc_kernel_source(kern)) != CLI_OK) goto out;
    if (!o->json) printf("emit: 1 kernel written to %s\n", o->emit);
  }
  if (!runs) {
    rc = op_build_only(o, have_dev, tc_str_cstr(&why), tc_kernel_source(kern), tc_kernel_name(kern));
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
  if (o->json && kern)
    print_json(o, key, list, o->dtype, g, m, n, k, ta, tb, f, kern, &r, rc == CLI_OK);
  else if (o->json)
    op_json_failure(o, key);
  for (int i = 0; i <= nin + 1; i++) free(host[i]);
  free(times);
  tc_kernel_free(kern);
  tc_fusion_free(f);
  return rc;
}
