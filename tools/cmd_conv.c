/* cmd_conv.c - `tilec conv2d`: a 2-D convolution (forward, backward-data
 * or backward-weight) as implicit GEMM, with MIOpenDriver's flags.
 *
 * The command parses and prints; the public API (tc_conv2d_*,
 * src/ops/api.c) checks the problem, picks the perf config (--perf-config,
 * --tune, the perf DB entry of the problem on this device, or the
 * heuristic, and says which) and plans the kernels.  The command
 * optionally writes their sources (--emit), runs them on pseudo-random
 * inputs, and with -V 1 verifies the result against the double-precision
 * reference (tc_conv2d_verify_result).  --time prints the median time of -i timed launches
 * (back to back, after the verified first run) and GFLOP/s, --json one
 * JSON object instead of the text.  See docs/conv_cli.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/tilec.h"
#include "../src/base/base.h"
#include "../src/ops/conv.h"
#include "../src/ops/tuner.h"
#include "../src/target/target.h"
#include "cli.h"
#include "conv_cli.h"
#include "conv_fusion_cli.h"
#include "op_cli.h"

static void conv_usage(FILE *out) {
  fputs("usage: tilec conv2d [-F 1|2|4] [-n N] [-c C] [-H H] [-W W] [-k K] [-y Y] [-x X]\n"
        "                    [-p PH] [-q PW] [-u SH] [-v SW] [-l DH] [-j DW] [-g G]\n"
        "                    [--in_layout L] [--fil_layout L] [--out_layout L]\n"
        "                    [--pad_h_l P] [--pad_h_r P] [--pad_w_l P] [--pad_w_r P]\n"
        "                    [-t f32|f16|bf16] [-V 0|1] [--perf-config S | --tune [--tune-max N]]\n"
        "                    [--time [-i N]] [--emit FILE] [--json]\n"
        "                    [--path template|fusion [--epilogue bias,relu|gelu|silu]\n"
        "                     [--tiles BM,BN,BK,TM,TN [--macro M] [--stages N]]]\n"
        "                    [--target opencl|cuda|hip] [--device SEL] [--arch ARCH]\n"
        "\n"
        "runs a 2-D convolution as implicit GEMM, in MIOpenDriver's conventions:\n"
        "input [N, C, H, W], filter [K, C/G, Y, X], output [N, K, Ho, Wo].\n"
        "\n"
        "  -F 1|2|4                1 forward (default), 2 backward data, 4 backward weight\n"
        "  -n, --batchsize N       batch size (default 100)\n"
        "  -c, --in_channels C     input channels (default 3)\n"
        "  -H, --in_h H            input height (default 32)\n"
        "  -W, --in_w W            input width (default 32)\n"
        "  -k, --out_channels K    output channels (default 32)\n"
        "  -y, --fil_h Y           filter height (default 3)\n"
        "  -x, --fil_w X           filter width (default 3)\n"
        "  -p, --pad_h PH          padding of the height, both sides (default 0)\n"
        "  -q, --pad_w PW          padding of the width, both sides (default 0)\n"
        "  --pad_h_l, --pad_h_r, --pad_w_l, --pad_w_r P\n"
        "                          asymmetric padding (each overrides -p / -q on its side)\n"
        "  -u, --conv_stride_h SH  stride of the height (default 1)\n"
        "  -v, --conv_stride_w SW  stride of the width (default 1)\n"
        "  -l, --dilation_h DH     dilation of the height (default 1)\n"
        "  -j, --dilation_w DW     dilation of the width (default 1)\n"
        "  -g, --group_count G     groups; C and K must be multiples of G (default 1)\n"
        "  --in_layout NCHW|NHWC   memory layout of the input (default NCHW)\n"
        "  --fil_layout KCYX|KYXC  memory layout of the filter (default KCYX)\n"
        "  --out_layout NKHW|NHWK  memory layout of the output (default NKHW)\n",
        out);
  conv_fusion_usage(out);
  op_common_usage(out);
}

/* ---- the problem's flags -------------------------------------------------- */

typedef struct conv_flag {
  const char *flag, *alias;
  int64_t *dst;
} conv_flag;

static int set_layout(op_opts *o, const char *flag, const char *v, char dst[8]) {
  size_t n = strlen(v);
  if (n == 0 || n >= 8) return op_invalid(o, "bad %s '%s': expected a 4-letter layout such as NCHW", flag, v);
  for (size_t i = 0; i <= n; i++) dst[i] = (char)(v[i] >= 'a' && v[i] <= 'z' ? v[i] - 'a' + 'A' : v[i]);
  return CLI_OK;
}

/* ---- output ---------------------------------------------------------------- */

void conv_json_problem(tc_str *j, const tc_conv_problem *p, const char *key, int64_t ho, int64_t wo) {
  tc_str_cat(j, "\"problem\": {\"string\": ");
  op_json_str(j, key);
  tc_str_cat(j, ", \"direction\": ");
  op_json_str(j, tc_conv_dir_name(p->dir));
  tc_str_printf(j, ", \"F\": %d", (int)p->dir);
  struct { const char *name; int64_t v; } f[] = {
      {"n", p->n}, {"c", p->c}, {"h", p->h}, {"w", p->w}, {"k", p->k}, {"y", p->y}, {"x", p->x},
      {"pad_h_l", p->pad_h_l}, {"pad_h_r", p->pad_h_r}, {"pad_w_l", p->pad_w_l},
      {"pad_w_r", p->pad_w_r}, {"stride_h", p->stride_h}, {"stride_w", p->stride_w},
      {"dilation_h", p->dil_h}, {"dilation_w", p->dil_w}, {"groups", p->groups},
      {"ho", ho}, {"wo", wo}};
  for (size_t i = 0; i < sizeof f / sizeof *f; i++)
    tc_str_printf(j, ", \"%s\": %lld", f[i].name, (long long)f[i].v);
  tc_str_cat(j, ", \"dtype\": ");
  op_json_str(j, tc_dtype_name(p->dtype));
  tc_str_cat(j, ", \"in_layout\": ");
  op_json_str(j, p->in_layout);
  tc_str_cat(j, ", \"fil_layout\": ");
  op_json_str(j, p->fil_layout);
  tc_str_cat(j, ", \"out_layout\": ");
  op_json_str(j, p->out_layout);
  tc_str_cat(j, "}");
}

static const char *buf_name(int t) {
  return t == TC_CONV2D_INPUT ? "input" : t == TC_CONV2D_FILTER ? "filter" : "output";
}

/* Kernel i of the plan, as op_emit_kernel wants it. */
static op_kernel kernel_of(const tc_conv2d *c, int i) {
  op_kernel k = {tc_conv2d_kernel_name(c, i), tc_conv2d_kernel_source(c, i), {0}, {0},
                 tc_conv2d_kernel_smem_bytes(c, i)};
  tc_conv2d_kernel_launch(c, i, k.grid, k.block, NULL);
  return k;
}

static void json_kernels(tc_str *j, const tc_conv2d *c) {
  tc_str_cat(j, "\"kernels\": [");
  for (int i = 0; i < tc_conv2d_num_kernels(c); i++) {
    op_kernel k = kernel_of(c, i);
    tc_conv2d_tensor args[3];
    int nargs = tc_conv2d_kernel_launch(c, i, NULL, NULL, args);
    tc_str_cat(j, i ? ", {\"name\": " : "{\"name\": ");
    op_json_str(j, k.name);
    tc_str_printf(j, ", \"grid\": [%lld, %lld, %lld], \"block\": [%lld, %lld, %lld], "
                  "\"smem_bytes\": %lld", (long long)k.grid[0], (long long)k.grid[1],
                  (long long)k.grid[2], (long long)k.block[0], (long long)k.block[1],
                  (long long)k.block[2], (long long)k.smem_bytes);
    tc_str_cat(j, ", \"args\": [");
    for (int a = 0; a < nargs; a++) {
      if (a) tc_str_cat(j, ", ");
      op_json_str(j, buf_name(args[a]));
    }
    tc_str_cat(j, "]");
    int64_t gm[4];
    char pc[64];
    if (tc_conv2d_kernel_gemm(c, i, gm, pc, sizeof pc)) {
      tc_str_printf(j, ", \"gemm\": {\"g\": %lld, \"m\": %lld, \"n\": %lld, \"k\": %lld}, "
                    "\"perf_config\": ", (long long)gm[0], (long long)gm[1], (long long)gm[2],
                    (long long)gm[3]);
      op_json_str(j, pc);
    } else {
      tc_str_cat(j, ", \"gemm\": null");
    }
    tc_str_cat(j, "}");
  }
  tc_str_cat(j, "]");
}

static void print_json(const op_opts *o, const tc_conv_problem *p, const tc_conv2d *c, int64_t ho,
                       int64_t wo, const op_report *r, int ok) {
  tc_str j;
  tc_str_init(&j);
  tc_str_cat(&j, "{\"command\": \"conv2d\", ");
  conv_json_problem(&j, p, tc_conv2d_problem_string(c), ho, wo);
  op_json_device(&j, o, r);
  tc_str_cat(&j, ", \"perf_config\": ");
  op_json_str(&j, r->config);
  tc_str_cat(&j, ", \"perf_config_source\": ");
  op_json_str(&j, r->source);
  tc_str_cat(&j, ", ");
  json_kernels(&j, c);
  op_json_run(&j, o, r, 0);
  op_json_tune(&j, r);
  op_json_end(&j, ok);
}

/* ---- the arguments ---------------------------------------------------------- */

/* Reads the arguments into o and p (dir, pad_h, pad_w and side[] not yet
 * in p).  CLI_OK, or the exit code (*done set for --help, which returns
 * CLI_OK). */
static int parse_args(op_opts *o, tc_conv_problem *p, conv_fusion_opts *fo, int64_t *dir,
                      int64_t *pad_h, int64_t *pad_w, int64_t side[4], int argc, char **argv,
                      int *done) {
  conv_flag flags[] = {
      {"-F", "--forw", dir},            {"-n", "--batchsize", &p->n},
      {"-c", "--in_channels", &p->c},   {"-H", "--in_h", &p->h},
      {"-W", "--in_w", &p->w},          {"-k", "--out_channels", &p->k},
      {"-y", "--fil_h", &p->y},         {"-x", "--fil_w", &p->x},
      {"-p", "--pad_h", pad_h},         {"-q", "--pad_w", pad_w},
      {"-u", "--conv_stride_h", &p->stride_h}, {"-v", "--conv_stride_w", &p->stride_w},
      {"-l", "--dilation_h", &p->dil_h}, {"-j", "--dilation_w", &p->dil_w},
      {"-g", "--group_count", &p->groups},
      {"--pad_h_l", NULL, &side[0]},    {"--pad_h_r", NULL, &side[1]},
      {"--pad_w_l", NULL, &side[2]},    {"--pad_w_r", NULL, &side[3]},
  };
  const int nflags = (int)(sizeof flags / sizeof *flags);
  const char *lname[3] = {"--in_layout", "--fil_layout", "--out_layout"};
  char *ldst[3] = {p->in_layout, p->fil_layout, p->out_layout};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = NULL;
    int rc = CLI_OK, matched = 0;
    if (cli_is_help(a)) {
      conv_usage(stdout);
      *done = 1;
      return CLI_OK;
    }
    if (op_common_option(o, argc, argv, &i, &rc) || conv_fusion_option(o, fo, argc, argv, &i, &rc)) {
      if (rc != CLI_OK) return rc;
      continue;
    }
    for (int f = 0; f < nflags && !matched; f++) {
      const char *name = flags[f].flag;
      if (!(v = op_value(o, argc, argv, &i, name, &rc)) && rc == CLI_OK && flags[f].alias)
        v = op_value(o, argc, argv, &i, name = flags[f].alias, &rc);
      if (rc != CLI_OK) return rc;
      if (!v) continue;
      matched = 1;
      if ((rc = op_parse_int(o, name, v, INT64_MIN, INT64_MAX, flags[f].dst)) != CLI_OK) return rc;
    }
    for (int l = 0; l < 3 && !matched; l++) {
      if (!(v = op_value(o, argc, argv, &i, lname[l], &rc))) {
        if (rc != CLI_OK) return rc;
        continue;
      }
      matched = 1;
      if ((rc = set_layout(o, lname[l], v, ldst[l])) != CLI_OK) return rc;
    }
    if (matched) continue;
    if (a[0] == '-') return op_usage_error(o, "unknown option '%s'", a);
    return op_usage_error(o, "unexpected argument '%s'", a);
  }
  return CLI_OK;
}

int conv_make_desc(const op_opts *o, tc_conv_problem *p, int64_t dir, int64_t pad_h,
                   int64_t pad_w, const int64_t side[4], tc_conv2d_desc *d) {
  if (dir != 1 && dir != 2 && dir != 4)
    return op_usage_error(o, "-F must be 1 (forward), 2 (backward data) or 4 (backward weight), "
                             "got %lld", (long long)dir);
  p->dir = (tc_conv_dir)dir;
  p->dtype = o->dtype;
  if (pad_h < 0 || pad_w < 0)
    return op_invalid(o, "%s must not be negative (got %lld)", pad_h < 0 ? "-p" : "-q",
                      (long long)(pad_h < 0 ? pad_h : pad_w));
  p->pad_h_l = side[0] != INT64_MIN ? side[0] : pad_h;
  p->pad_h_r = side[1] != INT64_MIN ? side[1] : pad_h;
  p->pad_w_l = side[2] != INT64_MIN ? side[2] : pad_w;
  p->pad_w_r = side[3] != INT64_MIN ? side[3] : pad_w;
  tc_conv2d_desc_init(d);
  d->direction = (tc_conv2d_direction)dir;
  d->n = p->n, d->c = p->c, d->h = p->h, d->w = p->w, d->k = p->k, d->y = p->y, d->x = p->x;
  d->pad_top = p->pad_h_l, d->pad_bottom = p->pad_h_r;
  d->pad_left = p->pad_w_l, d->pad_right = p->pad_w_r;
  d->stride_h = p->stride_h, d->stride_w = p->stride_w;
  d->dilation_h = p->dil_h, d->dilation_w = p->dil_w;
  d->groups = p->groups;
  d->dtype = p->dtype;
  d->in_layout = p->in_layout, d->fil_layout = p->fil_layout, d->out_layout = p->out_layout;
  return CLI_OK;
}

/* ---- the command ------------------------------------------------------------ */

int conv_tune(op_opts *o, tc_conv2d *c, op_report *r) {
  tc_op_tune_options to = op_tune_start(o, r, tc_conv2d_problem_string(c));
  tc_op_tune_result tr;
  tc_status st = tc_conv2d_tune(c, &to, &tr);
  return op_tune_finish(o, r, st, &tr, tc_conv2d_error(c));
}

void conv_report_plan(const op_opts *o, const tc_conv2d *c, op_report *r, int print) {
  op_set_plan(o, r, tc_conv2d_warning(c), tc_conv2d_perf_config(c),
              tc_conv2d_perf_config_source(c), tc_conv2d_perf_config_detail(c));
  if (o->json || !print) return;
  int n = tc_conv2d_num_kernels(c);
  printf("perf config: %s (%s)\n", r->config, r->source_detail);
  printf("plan: %d kernel%s:", n, n == 1 ? "" : "s");
  for (int i = 0; i < n; i++) {
    int64_t gm[4];
    printf(" %s", tc_conv2d_kernel_name(c, i));
    if (tc_conv2d_kernel_gemm(c, i, gm, NULL, 0))
      printf(" (GEMM G %lld M %lld N %lld K %lld)", (long long)gm[0], (long long)gm[1],
             (long long)gm[2], (long long)gm[3]);
    printf("%s", i + 1 < n ? "," : "");
  }
  printf("\n");
  fflush(stdout);
}

/* --emit FILE: the kernels in launch order, each with its GEMM and
 * arguments in its header comment. */
static int emit(const op_opts *o, const tc_conv2d *c, const op_report *r) {
  int n = tc_conv2d_num_kernels(c);
  tc_str text;
  tc_str_init(&text);
  tc_str_printf(&text, "/* tilec conv2d: %s\n * perf config %s (%s); %d kernel%s for %s, run in "
                "this order */\n\n", tc_conv2d_problem_string(c), r->config, r->source, n,
                n == 1 ? "" : "s", tc_target_name(o->target));
  for (int i = 0; i < n; i++) {
    char extra[512], pc[64];
    int64_t gm[4];
    tc_conv2d_tensor args[3];
    tc_conv2d_kernel_launch(c, i, NULL, NULL, args);
    if (tc_conv2d_kernel_gemm(c, i, gm, pc, sizeof pc))
      snprintf(extra, sizeof extra, "GEMM G %lld, M %lld, N %lld, K %lld; perf config %s\n"
               "arguments: %s, %s, %s", (long long)gm[0], (long long)gm[1], (long long)gm[2],
               (long long)gm[3], pc, buf_name(args[0]), buf_name(args[1]), buf_name(args[2]));
    else
      snprintf(extra, sizeof extra, "zero-initializes the %s\narguments: %s", buf_name(args[0]),
               buf_name(args[0]));
    op_kernel k = kernel_of(c, i);
    op_emit_kernel(&text, i + 1, n, &k, extra);
  }
  int rc = op_write_file(o, o->emit, tc_str_cstr(&text));
  tc_str_free(&text);
  if (rc == CLI_OK && !o->json)
    printf("emit: %d kernel%s written to %s\n", n, n == 1 ? "" : "s", o->emit);
  return rc;
}

/* Without a run: --target hip compiles with hipcc (have_dev: whether
 * there is an AMD GPU, why not), cuda checks the sources with NVRTC where
 * it exists (no device needed). */
static int check_sources(op_opts *o, const tc_conv2d *c, int have_dev, const char *why) {
  int n = tc_conv2d_num_kernels(c);
  const char **srcs = tc_xcalloc((size_t)n + 1, sizeof *srcs);
  const char **names = tc_xcalloc((size_t)n + 1, sizeof *names);
  for (int i = 0; i < n; i++)
    srcs[i] = tc_conv2d_kernel_source(c, i), names[i] = tc_conv2d_kernel_name(c, i);
  tc_build_kind b = tc_target_info_of(o->target).build;
  int rc = b == TC_BUILD_HIPCC   ? op_hip_finish(o, have_dev, why, srcs, names, n)
           : b == TC_BUILD_NVRTC ? op_cuda_check(o, srcs, names, n)
                                 : CLI_OK;
  free(srcs);
  free(names);
  return rc;
}

/* Runs on pseudo-random inputs, then verifies (-V 1) and times (--time). */
static int execute(const op_opts *o, tc_conv2d *c, const tc_conv_problem *p, int64_t ho,
                   int64_t wo, op_report *r) {
  int64_t elems[3];
  for (int t = 0; t < 3; t++) elems[t] = tc_conv2d_elems(c, (tc_conv2d_tensor)t);
  int wb = (int)tc_conv_written_buf(p->dir);
  size_t esize = tc_dtype_size(p->dtype);
  uint64_t seed = 0x5eed0c0471ull;
  void *buf[3] = {NULL, NULL, NULL};
  double *times = o->time ? tc_xcalloc((size_t)o->iters, sizeof *times) : NULL;
  int rc = CLI_FAIL;
  for (int t = 0; t < 3; t++) {
    if (!(buf[t] = calloc((size_t)elems[t] ? (size_t)elems[t] : 1, esize))) {
      op_fail(o, "cannot allocate %lld bytes for the %s", (long long)elems[t] * (long long)esize,
              buf_name(t));
      goto out;
    }
    /* the tensors read get values in [-1, 1); the one written NaN, so an
     * element no kernel writes cannot pass */
    tc_tune_fill(buf[t], (size_t)elems[t], p->dtype, t == wb ? NULL : &seed);
  }
  /* the first run (copied back, verified), then with --time o->iters timed
   * launches of each kernel back to back, in one call */
  tc_status st = tc_conv2d_run_timed(c, buf[0], buf[1], buf[2], &r->first_ms,
                                     times ? o->iters : 0, times);
  if (st != TC_OK) {
    op_fail(o, "the kernels failed (%s): %s", tc_status_name(st),
            op_api_message(tc_conv2d_error(c)));
    goto out;
  }
  r->ran = 1;
  if (o->verify) {
    tc_op_verify_result v;
    r->verified = 1;
    r->bad = tc_conv2d_verify_result(c, buf[0], buf[1], buf[2], &v);
    r->worst = v.worst, r->pass = r->bad == 0;
    snprintf(r->verify_msg, sizeof r->verify_msg, "%s", v.message);
  }
  if (times) {
    op_set_time(o, r, times, 2.0 * (double)p->n * (double)p->k * (double)(p->c / p->groups) *
                                 (double)p->y * (double)p->x * (double)ho * (double)wo);
    times = NULL;
  }
  if (!o->json) op_print_run(o, r, 0, elems[wb]);
  rc = !r->verified || r->pass ? CLI_OK : CLI_FAIL;
out:
  free(times);
  for (int t = 0; t < 3; t++) free(buf[t]);
  return rc;
}

/* Everything after the checked problem: plan (or tune), print, emit, run. */
static int conv_main(op_opts *o, tc_conv2d *c, const tc_conv_problem *p, int64_t ho, int64_t wo,
                     op_report *r, int *ok) {
  tc_status st;
  /* a given or stored perf config is planned first: a bad one fails
   * before anything is printed */
  if (!o->tune && (st = tc_conv2d_plan(c, o->perf_config)) != TC_OK) {
    const char *msg = op_api_message(tc_conv2d_error(c));
    if (o->perf_config && st == TC_ERR_ARGUMENT) return op_invalid(o, "%s", msg);
    return op_fail(o, "cannot plan the convolution (%s): %s", tc_status_name(st), msg);
  }
  TC_STR_LOCAL(why);
  int runs, have_dev = op_find_device(o, r, &runs, &why);
  if (!have_dev && runs) return CLI_FAIL;
  if (!o->json) {
    printf("problem: %s\n", tc_conv2d_problem_string(c));
    printf("direction: %s, output %lld x %lld x %lld x %lld (Ho %lld, Wo %lld)\n",
           tc_conv_dir_name(p->dir), (long long)p->n, (long long)p->k, (long long)ho, (long long)wo,
           (long long)ho, (long long)wo);
    op_print_device(o, r, have_dev, tc_str_cstr(&why));
    fflush(stdout);
  }
  int rc = o->tune ? conv_tune(o, c, r) : CLI_OK;
  if (rc != CLI_OK) return rc;
  conv_report_plan(o, c, r, 1);
  if (o->emit && (rc = emit(o, c, r)) != CLI_OK) return rc;
  rc = runs ? execute(o, c, p, ho, wo, r) : check_sources(o, c, have_dev, tc_str_cstr(&why));
  *ok = rc == CLI_OK;
  return rc;
}

int cmd_conv(int argc, char **argv) {
  op_opts o;
  op_opts_init(&o, "conv2d");
  tc_conv_problem p;
  tc_conv_problem_init(&p);
  /* side[]: --pad_h_l .. --pad_w_r, INT64_MIN when not given */
  int64_t dir = 1, pad_h = 0, pad_w = 0, side[4] = {INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN};
  conv_fusion_opts fo;
  conv_fusion_opts_init(&fo);
  int done = 0, rc = parse_args(&o, &p, &fo, &dir, &pad_h, &pad_w, side, argc, argv, &done);
  if (rc != CLI_OK || done) return rc;
  if ((rc = op_opts_check(&o)) != CLI_OK) return rc;
  if (fo.epilogue_given && !fo.fusion) return op_usage_error(&o, "--epilogue needs --path fusion");
  if ((rc = conv_fusion_check(&o, &fo)) != CLI_OK) return rc;
  tc_conv2d_desc d;
  if ((rc = conv_make_desc(&o, &p, dir, pad_h, pad_w, side, &d)) != CLI_OK) return rc;
  if (fo.fusion) return conv_fusion_cmd(&o, &fo, &d, &p);
  /* --arch as given: the heuristic plans with it as the command always did */
  tc_op_options opt = {o.target, o.device, o.arch, NULL};
  tc_conv2d *c = tc_conv2d_new(&d, &opt);
  int64_t ho = 0, wo = 0;
  if (tc_conv2d_output_size(c, &ho, &wo) != TC_OK) {
    rc = op_invalid(&o, "%s", op_api_message(tc_conv2d_error(c)));
    tc_conv2d_free(c);
    return rc;
  }
  op_report r;
  memset(&r, 0, sizeof r);
  int ok = 0;
  rc = conv_main(&o, c, &p, ho, wo, &r, &ok);
  if (o.json && tc_conv2d_num_kernels(c) > 0) print_json(&o, &p, c, ho, wo, &r, ok);
  else if (o.json && rc != CLI_OK) op_json_failure(&o, tc_conv2d_problem_string(c));
  free((char *)r.db_path);
  tc_conv2d_free(c);
  return rc;
}
