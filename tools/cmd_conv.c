/* cmd_conv.c - `tilec conv2d`: a 2-D convolution (forward, backward-data
 * or backward-weight) as implicit GEMM, with MIOpenDriver's flags.
 *
 * It checks the problem, picks the perf config (--perf-config, --tune,
 * the perf DB entry of the problem on this device, or the heuristic, and
 * says which), plans the kernels (src/ops/conv.h), optionally writes their
 * sources (--emit), runs them on pseudo-random inputs, and with -V 1
 * verifies the result against the double-precision reference
 * (tc_conv_verify).  --time prints the median time of -i timed launches
 * (back to back, after the verified first run) and GFLOP/s, --json one
 * JSON object instead of the text.  See docs/conv_cli.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/tilec.h"
#include "../src/base/base.h"
#include "../src/ops/conv.h"
#include "../src/runtime/runtime.h"
#include "../src/tune/perfdb.h"
#include "../src/ops/tuner.h"
#include "cli.h"
#include "op_cli.h"

/* Largest tensor the command allocates, in elements. */
#define CONV_MAX_ELEMS ((int64_t)1 << 31)

static void conv_usage(FILE *out) {
  fputs("usage: tilec conv2d [-F 1|2|4] [-n N] [-c C] [-H H] [-W W] [-k K] [-y Y] [-x X]\n"
        "                    [-p PH] [-q PW] [-u SH] [-v SW] [-l DH] [-j DW] [-g G]\n"
        "                    [--in_layout L] [--fil_layout L] [--out_layout L]\n"
        "                    [--pad_h_l P] [--pad_h_r P] [--pad_w_l P] [--pad_w_r P]\n"
        "                    [-t f32|f16|bf16] [-V 0|1] [--perf-config S | --tune [--tune-max N]]\n"
        "                    [--time [-i N]] [--emit FILE] [--json]\n"
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

static void json_problem(tc_str *j, const tc_conv_problem *p, const char *key, int64_t ho, int64_t wo) {
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

static const char *buf_name(tc_conv_buf b) {
  return b == TC_BUF_INPUT ? "input" : b == TC_BUF_FILTER ? "filter" : "output";
}

static void json_kernels(tc_str *j, const tc_conv_plan *plan) {
  tc_str_cat(j, "\"kernels\": [");
  for (int i = 0; i < plan->nsteps; i++) {
    const tc_conv_step *s = &plan->steps[i];
    tc_str_cat(j, i ? ", {\"name\": " : "{\"name\": ");
    op_json_str(j, s->kernel.name);
    tc_str_printf(j, ", \"grid\": [%zu, %zu, %zu], \"block\": [%zu, %zu, %zu], \"smem_bytes\": %lld",
                  s->kernel.grid[0], s->kernel.grid[1], s->kernel.grid[2], s->kernel.block[0],
                  s->kernel.block[1], s->kernel.block[2], (long long)s->kernel.smem_bytes);
    tc_str_cat(j, ", \"args\": [");
    for (int a = 0; a < s->nargs; a++) {
      if (a) tc_str_cat(j, ", ");
      op_json_str(j, buf_name(s->args[a]));
    }
    tc_str_cat(j, "]");
    if (s->gemm_m > 0) {
      char pc[64];
      tc_gemm_params_format(&s->params, pc, sizeof pc);
      tc_str_printf(j, ", \"gemm\": {\"g\": %lld, \"m\": %lld, \"n\": %lld, \"k\": %lld}, \"perf_config\": ",
                    (long long)s->gemm_g, (long long)s->gemm_m, (long long)s->gemm_n,
                    (long long)s->gemm_k);
      op_json_str(j, pc);
    } else {
      tc_str_cat(j, ", \"gemm\": null");
    }
    tc_str_cat(j, "}");
  }
  tc_str_cat(j, "]");
}

static void print_json(const op_opts *o, const tc_conv_problem *p, const char *key, int64_t ho,
                       int64_t wo, const tc_conv_plan *plan, const op_report *r, int ok) {
  tc_str j;
  tc_str_init(&j);
  tc_str_cat(&j, "{\"command\": \"conv2d\", ");
  json_problem(&j, p, key, ho, wo);
  op_json_device(&j, o, r);
  tc_str_cat(&j, ", \"perf_config\": ");
  op_json_str(&j, r->config);
  tc_str_cat(&j, ", \"perf_config_source\": ");
  op_json_str(&j, r->source);
  tc_str_cat(&j, ", ");
  json_kernels(&j, plan);
  op_json_run(&j, o, r, 0);
  op_json_tune(&j, r);
  op_json_end(&j, ok);
}

/* ---- the command ------------------------------------------------------------ */

int cmd_conv(int argc, char **argv) {
  op_opts o;
  op_opts_init(&o, "conv2d");
  tc_conv_problem p;
  tc_conv_problem_init(&p);
  /* side[]: --pad_h_l .. --pad_w_r, INT64_MIN when not given */
  int64_t dir = 1, pad_h = 0, pad_w = 0, side[4] = {INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN};
  conv_flag flags[] = {
      {"-F", "--forw", &dir},           {"-n", "--batchsize", &p.n},
      {"-c", "--in_channels", &p.c},    {"-H", "--in_h", &p.h},
      {"-W", "--in_w", &p.w},           {"-k", "--out_channels", &p.k},
      {"-y", "--fil_h", &p.y},          {"-x", "--fil_w", &p.x},
      {"-p", "--pad_h", &pad_h},        {"-q", "--pad_w", &pad_w},
      {"-u", "--conv_stride_h", &p.stride_h}, {"-v", "--conv_stride_w", &p.stride_w},
      {"-l", "--dilation_h", &p.dil_h}, {"-j", "--dilation_w", &p.dil_w},
      {"-g", "--group_count", &p.groups},
      {"--pad_h_l", NULL, &side[0]},    {"--pad_h_r", NULL, &side[1]},
      {"--pad_w_l", NULL, &side[2]},    {"--pad_w_r", NULL, &side[3]},
  };
  const int nflags = (int)(sizeof flags / sizeof *flags);

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = NULL;
    int rc = CLI_OK;
    if (cli_is_help(a)) {
      conv_usage(stdout);
      return CLI_OK;
    }
    if (op_common_option(&o, argc, argv, &i, &rc)) {
      if (rc != CLI_OK) return rc;
      continue;
    }
    int matched = 0;
    for (int f = 0; f < nflags && !matched; f++) {
      const char *name = flags[f].flag;
      if (!(v = op_value(&o, argc, argv, &i, name, &rc)) && rc == CLI_OK && flags[f].alias)
        v = op_value(&o, argc, argv, &i, name = flags[f].alias, &rc);
      if (rc != CLI_OK) return rc;
      if (!v) continue;
      matched = 1;
      if ((rc = op_parse_int(&o, name, v, INT64_MIN, INT64_MAX, flags[f].dst)) != CLI_OK) return rc;
    }
    if (matched) continue;
    const char *lname[3] = {"--in_layout", "--fil_layout", "--out_layout"};
    char *ldst[3] = {p.in_layout, p.fil_layout, p.out_layout};
    for (int l = 0; l < 3 && !matched; l++) {
      if (!(v = op_value(&o, argc, argv, &i, lname[l], &rc))) {
        if (rc != CLI_OK) return rc;
        continue;
      }
      matched = 1;
      if ((rc = set_layout(&o, lname[l], v, ldst[l])) != CLI_OK) return rc;
    }
    if (matched) continue;
    if (a[0] == '-') return op_usage_error(&o, "unknown option '%s'", a);
    return op_usage_error(&o, "unexpected argument '%s'", a);
  }
  int rc = op_opts_check(&o);
  if (rc != CLI_OK) return rc;
  if (dir != 1 && dir != 2 && dir != 4)
    return op_usage_error(&o, "-F must be 1 (forward), 2 (backward data) or 4 (backward weight), "
                              "got %lld", (long long)dir);
  p.dir = (tc_conv_dir)dir;
  p.dtype = o.dtype;
  if (pad_h < 0 || pad_w < 0)
    return op_invalid(&o, "%s must not be negative (got %lld)", pad_h < 0 ? "-p" : "-q",
                      (long long)(pad_h < 0 ? pad_h : pad_w));
  p.pad_h_l = side[0] != INT64_MIN ? side[0] : pad_h;
  p.pad_h_r = side[1] != INT64_MIN ? side[1] : pad_h;
  p.pad_w_l = side[2] != INT64_MIN ? side[2] : pad_w;
  p.pad_w_r = side[3] != INT64_MIN ? side[3] : pad_w;

  char why[2048] = "";
  int64_t ho = 0, wo = 0;
  if (tc_conv_check(&p, &ho, &wo, why, sizeof why) != 0) return op_invalid(&o, "%s", why);
  int64_t elems[3] = {tc_conv_input_elems(&p), tc_conv_filter_elems(&p), tc_conv_output_elems(&p)};
  for (int t = 0; t < 3; t++)
    if (elems[t] > CONV_MAX_ELEMS)
      return op_invalid(&o, "the %s tensor would have %lld elements; tilec conv2d handles at most "
                            "2^31", buf_name((tc_conv_buf)t), (long long)elems[t]);

  tc_str key;
  tc_str_init(&key);
  tc_conv_problem_string(&p, &key);

  tc_gemm_params prm;
  memset(&prm, 0, sizeof prm);
  if (o.perf_config && tc_gemm_params_parse(o.perf_config, &prm, why, sizeof why) != 0) {
    tc_str_free(&key);
    return op_invalid(&o, "bad --perf-config '%s': %s", o.perf_config, why);
  }

  op_report r;
  memset(&r, 0, sizeof r);
  /* --target hip: generated and compiled, never run (op_hip_finish) */
  int hip = o.target == TC_TARGET_HIP, runs;
  const char *arch = o.arch ? o.arch : TC_TUNE_DEFAULT_ARCH;
  /* tc_conv_run's device: the OpenCL selector, or the CUDA architecture */
  const char *run_device = o.target == TC_TARGET_CUDA ? arch : o.device;
  tc_perfdb *db = NULL;
  tc_conv_plan *plan = NULL;
  void *buf[3] = {NULL, NULL, NULL};
  int ok = 0;
  rc = CLI_FAIL;
  int have_dev = op_find_device(&o, &r, &runs, why, sizeof why);
  if (!have_dev && runs) goto out;
  if (!o.json) {
    printf("problem: %s\n", tc_str_cstr(&key));
    printf("direction: %s, output %lld x %lld x %lld x %lld (Ho %lld, Wo %lld)\n",
           tc_conv_dir_name(p.dir), (long long)p.n, (long long)p.k, (long long)ho, (long long)wo,
           (long long)ho, (long long)wo);
    op_print_device(&o, &r, have_dev, why);
    fflush(stdout);
  }

  /* ---- the perf config ---- */
  const tc_gemm_params *use = NULL;
  r.source = "heuristic";
  if (o.perf_config) {
    use = &prm;
    r.source = "option";
    snprintf(r.source_detail, sizeof r.source_detail, "--perf-config");
  } else if (o.tune) {
    tc_tune_options to;
    op_tune_begin(&o, &r, &db, tc_str_cstr(&key), &to);
    tc_status st = tc_tune_conv(&p, &to, &r.tune, why, sizeof why);
    if (st != TC_OK) {
      op_fail(&o, "tuning failed: %s", why);
      goto out;
    }
    prm = r.tune.best;
    use = &prm;
    op_tune_end(&o, &r, db);
  } else if (have_dev) {
    db = op_perfdb_open(&o, 0);
    if (db) {
      tc_perfdb_entry e;
      int found = tc_tune_lookup(db, tc_str_cstr(&key), o.target, r.device, &prm, &e, why, sizeof why);
      if (found == 1) {
        use = &prm;
        op_from_perfdb(&r, db, &e);
      } else if (found < 0) {
        fprintf(stderr, "tilec conv2d: warning: %s; using the heuristic\n", why);
      }
    }
  }
  tc_status st = tc_conv_plan_make_for(&p, use, o.target, o.arch, &plan, why, sizeof why);
  if (st != TC_OK && use && strcmp(r.source, "perfdb") == 0) {
    fprintf(stderr, "tilec conv2d: warning: the perf DB entry does not fit: %s; using the heuristic\n", why);
    use = NULL;
    r.source = "heuristic";
    st = tc_conv_plan_make_for(&p, NULL, o.target, o.arch, &plan, why, sizeof why);
  }
  if (st != TC_OK) {
    if (strcmp(r.source, "option") == 0 && st == TC_ERR_ARGUMENT)
      rc = op_invalid(&o, "--perf-config %s: %s", o.perf_config, why);
    else
      op_fail(&o, "cannot plan the convolution (%s): %s", tc_status_name(st), why);
    goto out;
  }
  tc_gemm_params_format(use ? use : &plan->params, r.config, sizeof r.config);
  int ngemms = 0;
  for (int i = 0; i < plan->nsteps; i++) ngemms += plan->steps[i].gemm_m > 0;
  if (strcmp(r.source, "heuristic") == 0)
    snprintf(r.source_detail, sizeof r.source_detail, "heuristic, %s%s",
             tc_gemm_params_kind(&plan->params), ngemms > 1 ? "; that of the first GEMM, each has its own" : "");
  if (!o.json) {
    printf("perf config: %s (%s)\n", r.config, r.source_detail);
    printf("plan: %d kernel%s:", plan->nsteps, plan->nsteps == 1 ? "" : "s");
    for (int i = 0; i < plan->nsteps; i++) {
      const tc_conv_step *s = &plan->steps[i];
      if (s->gemm_m > 0)
        printf(" %s (GEMM G %lld M %lld N %lld K %lld)%s", s->kernel.name, (long long)s->gemm_g,
               (long long)s->gemm_m, (long long)s->gemm_n, (long long)s->gemm_k,
               i + 1 < plan->nsteps ? "," : "");
      else
        printf(" %s%s", s->kernel.name, i + 1 < plan->nsteps ? "," : "");
    }
    printf("\n");
    fflush(stdout);
  }

  /* ---- --emit ---- */
  if (o.emit) {
    tc_str text;
    tc_str_init(&text);
    tc_str_printf(&text, "/* tilec conv2d: %s\n * perf config %s (%s); %d kernel%s for %s, run in this order */\n\n",
                  tc_str_cstr(&key), r.config, r.source, plan->nsteps, plan->nsteps == 1 ? "" : "s",
                  tc_target_name(o.target));
    for (int i = 0; i < plan->nsteps; i++) {
      const tc_conv_step *s = &plan->steps[i];
      char extra[512];
      if (s->gemm_m > 0) {
        char pc[64];
        tc_gemm_params_format(&s->params, pc, sizeof pc);
        snprintf(extra, sizeof extra, "GEMM G %lld, M %lld, N %lld, K %lld; perf config %s\narguments: %s, %s, %s",
                 (long long)s->gemm_g, (long long)s->gemm_m, (long long)s->gemm_n,
                 (long long)s->gemm_k, pc, buf_name(s->args[0]), buf_name(s->args[1]),
                 buf_name(s->args[2]));
      } else {
        snprintf(extra, sizeof extra, "zero-initializes the %s\narguments: %s", buf_name(s->args[0]),
                 buf_name(s->args[0]));
      }
      op_kernel k = {s->kernel.name, s->kernel.source, {0}, {0}, s->kernel.smem_bytes};
      for (int d = 0; d < 3; d++)
        k.grid[d] = (int64_t)s->kernel.grid[d], k.block[d] = (int64_t)s->kernel.block[d];
      op_emit_kernel(&text, i + 1, plan->nsteps, &k, extra);
    }
    int wrc = op_write_file(&o, o.emit, tc_str_cstr(&text));
    tc_str_free(&text);
    if (wrc != CLI_OK) goto out;
    if (!o.json) printf("emit: %d kernel%s written to %s\n", plan->nsteps, plan->nsteps == 1 ? "" : "s", o.emit);
  }

  /* ---- run ---- */
  if (!runs) {
    /* --target hip: compiled with hipcc, never run; cuda: the sources are
     * checked with NVRTC where it exists (no device needed) */
    const char **srcs = tc_xcalloc((size_t)plan->nsteps + 1, sizeof *srcs);
    const char **names = tc_xcalloc((size_t)plan->nsteps + 1, sizeof *names);
    for (int i = 0; i < plan->nsteps; i++)
      srcs[i] = plan->steps[i].kernel.source, names[i] = plan->steps[i].kernel.name;
    if (hip)
      rc = op_hip_finish(&o, srcs, names, plan->nsteps);
    else if (o.target == TC_TARGET_CUDA)
      rc = op_cuda_check(&o, srcs, names, plan->nsteps);
    else
      rc = CLI_OK;
    ok = rc == CLI_OK;
    free(srcs);
    free(names);
    goto out;
  }
  tc_conv_buf wb = tc_conv_written_buf(p.dir);
  size_t esize = tc_dtype_size(p.dtype);
  uint64_t seed = 0x5eed0c0471ull;
  for (int t = 0; t < 3; t++) {
    buf[t] = calloc((size_t)elems[t] ? (size_t)elems[t] : 1, esize);
    if (!buf[t]) {
      op_fail(&o, "cannot allocate %lld bytes for the %s", (long long)elems[t] * (long long)esize,
              buf_name((tc_conv_buf)t));
      goto out;
    }
    /* the tensors read get values in [-1, 1); the one written NaN, so an
     * element no kernel writes cannot pass */
    tc_tune_fill(buf[t], (size_t)elems[t], p.dtype, (tc_conv_buf)t == wb ? NULL : &seed);
  }
  /* the first run (copied back, verified), then with --time o.iters timed
   * launches of each kernel back to back, in one call */
  double *times = o.time ? tc_xcalloc((size_t)o.iters, sizeof *times) : NULL;
  st = tc_conv_run(plan, run_device, buf[0], buf[1], buf[2], &r.first_ms, times ? o.iters : 0,
                   times, why, sizeof why);
  if (st != TC_OK) {
    free(times);
    op_fail(&o, "the kernels failed (%s): %s", tc_status_name(st), why);
    goto out;
  }
  r.ran = 1;
  if (o.verify) {
    r.verified = 1;
    r.bad = tc_conv_verify(&p, buf[0], buf[1], buf[2], &r.worst, r.verify_msg, sizeof r.verify_msg);
    r.pass = r.bad == 0;
  }
  if (times)
    op_set_time(&o, &r, times,
                2.0 * (double)p.n * (double)p.k * (double)(p.c / p.groups) * (double)p.y *
                    (double)p.x * (double)ho * (double)wo);
  if (!o.json) op_print_run(&o, &r, 0, elems[tc_conv_written_buf(p.dir)]);
  ok = !r.verified || r.pass;
  rc = ok ? CLI_OK : CLI_FAIL;

out:
  if (o.json && plan) print_json(&o, &p, tc_str_cstr(&key), ho, wo, plan, &r, ok);
  else if (o.json && rc != CLI_OK) op_json_failure(&o, tc_str_cstr(&key));
  for (int t = 0; t < 3; t++) free(buf[t]);
  tc_conv_plan_free(plan);
  tc_perfdb_close(db);
  tc_str_free(&key);
  return rc;
}
