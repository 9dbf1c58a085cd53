/* cmd_gemm.c - `tilec gemm`: C[M,N] = A[M,K] * B[K,N] (G times, batched)
 * through the gridwise GEMM generator.
 *
 * Every matrix is row-major in memory: A is stored [G][M][K], or [G][K][M]
 * with --transA 1; B is stored [G][K][N], or [G][N][K] with --transB 1; C
 * is [G][M][N].  Each is a coordinate-transform view (src/layout/coord.h)
 * whose upper dims are what tc_gemm_generate wants: A [G, K, M], B [G, K,
 * N], C [G, M, N] (a reorder where the memory order differs).  The
 * command parses and prints; the public API (tc_gemm_*, src/ops/api.c)
 * chooses the perf config (--perf-config, --tune, the perf DB or the
 * heuristic, as for conv2d), generates, runs and with -V 1 compares C with
 * a plain C GEMM summed in double.  See docs/conv_cli.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/tilec.h"
#include "../src/base/base.h"
#include "../src/ops/tuner.h"
#include "../src/target/target.h"
#include "cli.h"
#include "op_cli.h"
#include "gemm_tile.h"
#include "gemm_fusion.h"

static void gemm_usage(FILE *out) {
  fputs("usage: tilec gemm -M M -N N -K K [--transA 0|1] [--transB 0|1] [-g G]\n"
        "                  [-t f32|f16|bf16] [-V 0|1] [--perf-config S | --tune [--tune-max N]]\n"
        "                  [--time [-i N]] [--emit FILE] [--json]\n"
        "                  [--target opencl|cuda|hip] [--device SEL] [--arch ARCH]\n"
        "                  [--kernel gridwise|tile [--passes] [--no-aggregate] [--moe ...]]\n"
        "                  [--epilogue bias,relu,... [--tiles BM,BN,BK,TM,TN] [--ab-type T]\n"
        "                   [--macro fma|mma|mfma|mfma16|wgmma] [--stages N]]\n"
        "\n"
        "runs C[M,N] = A[M,K] * B[K,N], G times (one per group), with the gridwise GEMM\n"
        "kernel.  Every matrix is row-major.\n"
        "\n"
        "  -M, -N, -K N            the sizes (required; -m, -n, -k also work)\n"
        "  -M dyn                  M is a size variable given at launch: one fused kernel (the\n"
        "                          matmul schedule, with --epilogue's ops if given) for every M\n"
        "                          (docs/dynamic.md), printed once (--emit FILE writes it) and\n"
        "                          run at M = 1, 7, 64, 129 and 1000, each checked with -V 1 and\n"
        "                          timed with --time; the scheduler's op type (wgmma on cuda\n"
        "                          sm_90a, mma.sync on sm_80+, MFMA on hip, else FMA) or\n"
        "                          --tiles ... --macro fma|mma|mfma|mfma16|wgmma; not with -g,\n"
        "                          --transA 1, --tune, --perf-config or --kernel tile\n"
        "  -N dyn                  N (the columns of B and C) a size variable the same way: run\n"
        "                          at N = 1, 7, 64, 129 and 1000 (not with --transB 1); with\n"
        "                          -M dyn both, run at (M, N) = (1, 1), (7, 64), (64, 129),\n"
        "                          (129, 7) and (1000, 1000); a row_sum / col_max over a size\n"
        "                          variable is refused\n"
        "  -K dyn                  K a size variable the same way (not with --transA 1 or\n"
        "                          --transB 1): the K tiles' loop runs to ceil(K / BK), the tile\n"
        "                          past K reads zeros; run at K = 1, 7, 64, 129 and 1000; with\n"
        "                          another dyn, at the pairs above (in M, N, K order); with\n"
        "                          all three at (1, 1, 1), (7, 64, 129), (64, 129, 7),\n"
        "                          (129, 7, 64) and (1000, 129, 1000)\n"
        "  --transA 0|1            1: A is stored [K, M] (default 0: [M, K])\n"
        "  --transB 0|1            1: B is stored [N, K] (default 0: [K, N])\n"
        "  -g G                    groups: G independent GEMMs, each matrix stored [G][..]\n"
        "                          (default 1)\n",
        out);
  gemm_epilogue_usage(out);
  gemm_tile_usage(out);
  op_common_usage(out);
}

static int parse_bool(op_opts *o, const char *flag, const char *v, int *out) {
  if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0) return *out = 0, CLI_OK;
  if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0) return *out = 1, CLI_OK;
  return op_usage_error(o, "%s takes 0 or 1, got '%s'", flag, v);
}

/* The kernel of the plan, as op_emit_kernel and the JSON want it. */
static op_kernel kernel_of(const tc_gemm *g) {
  op_kernel k = {tc_gemm_kernel_name(g), tc_gemm_kernel_source(g), {0}, {0},
                 tc_gemm_kernel_smem_bytes(g)};
  tc_gemm_kernel_launch(g, k.grid, k.block);
  return k;
}

static void print_json(const op_opts *o, const tc_gemm_desc *d, const tc_gemm *g,
                       const op_report *r, int ok) {
  tc_str j;
  tc_str_init(&j);
  tc_str_cat(&j, "{\"command\": \"gemm\", \"problem\": {\"string\": ");
  op_json_str(&j, tc_gemm_problem_string(g));
  tc_str_printf(&j, ", \"g\": %lld, \"m\": %lld, \"n\": %lld, \"k\": %lld, \"transA\": %d, "
                "\"transB\": %d, \"dtype\": \"%s\"}", (long long)d->batch, (long long)d->m,
                (long long)d->n, (long long)d->k, d->trans_a, d->trans_b, tc_dtype_name(d->dtype));
  op_json_device(&j, o, r);
  tc_str_cat(&j, ", \"perf_config\": ");
  op_json_str(&j, r->config);
  tc_str_cat(&j, ", \"perf_config_source\": ");
  op_json_str(&j, r->source);
  op_kernel k = kernel_of(g);
  tc_str_cat(&j, ", \"kernels\": [{\"name\": ");
  op_json_str(&j, k.name);
  tc_str_printf(&j, ", \"grid\": [%lld, %lld, %lld], \"block\": [%lld, %lld, %lld], "
                "\"smem_bytes\": %lld}]", (long long)k.grid[0], (long long)k.grid[1],
                (long long)k.grid[2], (long long)k.block[0], (long long)k.block[1],
                (long long)k.block[2], (long long)k.smem_bytes);
  op_json_run(&j, o, r, 1);
  op_json_tune(&j, r);
  op_json_end(&j, ok);
}

/* Reads the arguments into o, tile and d.  CLI_OK, or the exit code
 * (*done set for --help, which returns CLI_OK). */
static int parse_args(op_opts *o, gemm_tile_opts *tile, gemm_epilogue *epi, tc_gemm_desc *d,
                      int argc, char **argv, int *done) {
  int64_t *dims[4] = {&d->m, &d->n, &d->k, &d->batch};
  const char *flag[4] = {"-M", "-N", "-K", "-g"}, *alias[4] = {"-m", "-n", "-k", "--groups"};
  const char *tname[4] = {"--transA", "-transA", "--transB", "-transB"};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = NULL;
    int rc = CLI_OK, matched = 0;
    if (cli_is_help(a)) {
      gemm_usage(stdout);
      *done = 1;
      return CLI_OK;
    }
    if (op_common_option(o, argc, argv, &i, &rc) || gemm_tile_option(o, tile, argc, argv, &i, &rc) ||
        gemm_epilogue_option(o, epi, argc, argv, &i, &rc)) {
      if (rc != CLI_OK) return rc;
      continue;
    }
    for (int f = 0; f < 4 && !matched; f++) {
      const char *name = flag[f];
      if (!(v = op_value(o, argc, argv, &i, name, &rc)) && rc == CLI_OK)
        v = op_value(o, argc, argv, &i, name = alias[f], &rc);
      if (rc != CLI_OK) return rc;
      if (!v) continue;
      matched = 1;
      if (f < 3 && strcmp(v, "dyn") == 0) *dims[f] = -1; /* M, N or K a size variable */
      else if ((rc = op_parse_int(o, name, v, 1, INT32_MAX, dims[f])) != CLI_OK) return rc;
    }
    for (int t = 0; t < 4 && !matched; t++) {
      if (!(v = op_value(o, argc, argv, &i, tname[t], &rc))) {
        if (rc != CLI_OK) return rc;
        continue;
      }
      matched = 1;
      if ((rc = parse_bool(o, tname[t], v, t < 2 ? &d->trans_a : &d->trans_b)) != CLI_OK) return rc;
    }
    if (matched) continue;
    if (a[0] == '-') return op_usage_error(o, "unknown option '%s'", a);
    return op_usage_error(o, "unexpected argument '%s'", a);
  }
  return CLI_OK;
}

/* A failed plan, tuning or run of the API: CLI_USAGE for a problem or
 * perf config that is not valid, CLI_FAIL for one no kernel fits (no
 * valid perf config) and the rest; `what` leads the message of a failure
 * that is not the input's. */
static int api_failure(const op_opts *o, const tc_gemm *g, tc_status st, const char *what) {
  const char *msg = op_api_message(tc_gemm_error(g));
  if (st == TC_ERR_ARGUMENT) return op_invalid(o, "%s", msg);
  if (st == TC_ERR_UNSUPPORTED) return op_fail(o, "%s", msg);
  return op_fail(o, "%s (%s): %s", what, tc_status_name(st), msg);
}

/* --tune through tc_gemm_tune: progress on stderr, the result in r. */
static int tune(op_opts *o, tc_gemm *g, op_report *r) {
  tc_op_tune_options to = op_tune_start(o, r, tc_gemm_problem_string(g));
  tc_op_tune_result tr;
  tc_status st = tc_gemm_tune(g, &to, &tr);
  return op_tune_finish(o, r, st, &tr, tc_gemm_error(g));
}

/* The perf config chosen (r->config, r->source, the detail) and printed. */
static void report_plan(const op_opts *o, const tc_gemm *g, op_report *r) {
  op_set_plan(o, r, tc_gemm_warning(g), tc_gemm_perf_config(g), tc_gemm_perf_config_source(g),
              tc_gemm_perf_config_detail(g));
  if (o->json) return;
  op_kernel k = kernel_of(g);
  printf("perf config: %s (%s)\n", r->config, r->source_detail);
  printf("kernel: %s, grid [%lld, %lld, %lld] of blocks [%lld, %lld, %lld], shared memory %lld "
         "bytes\n", k.name, (long long)k.grid[0], (long long)k.grid[1], (long long)k.grid[2],
         (long long)k.block[0], (long long)k.block[1], (long long)k.block[2],
         (long long)k.smem_bytes);
  fflush(stdout);
}

/* --emit FILE: the kernel with the views in its header comment. */
static int emit(const op_opts *o, const tc_gemm *g, const op_report *r) {
  tc_str text, extra;
  tc_str_init(&text);
  tc_str_init(&extra);
  tc_str_printf(&text, "/* tilec gemm: %s\n * perf config %s (%s), for %s */\n\n",
                tc_gemm_problem_string(g), r->config, r->source, tc_target_name(o->target));
  tc_str_printf(&extra, "%sarguments: A, B, C", tc_gemm_views_describe(g));
  op_kernel k = kernel_of(g);
  op_emit_kernel(&text, 1, 1, &k, tc_str_cstr(&extra));
  int rc = op_write_file(o, o->emit, tc_str_cstr(&text));
  tc_str_free(&text);
  tc_str_free(&extra);
  if (rc == CLI_OK && !o->json) printf("emit: 1 kernel written to %s\n", o->emit);
  return rc;
}

/* Runs on pseudo-random A and B, then verifies (-V 1) and times (--time). */
static int execute(const op_opts *o, tc_gemm *g, const tc_gemm_desc *d, op_report *r) {
  size_t esize = tc_dtype_size(d->dtype);
  size_t elems[3] = {(size_t)(d->batch * d->m * d->k), (size_t)(d->batch * d->k * d->n),
                     (size_t)(d->batch * d->m * d->n)};
  void *host[3] = {NULL, NULL, NULL};
  double *times = o->time ? tc_xcalloc((size_t)o->iters, sizeof *times) : NULL;
  uint64_t seed = 0x5eed0e11ull;
  int rc = CLI_FAIL;
  for (int t = 0; t < 3; t++) {
    if (!(host[t] = calloc(elems[t], esize))) {
      op_fail(o, "cannot allocate %zu bytes for %c", elems[t] * esize, "ABC"[t]);
      goto out;
    }
    tc_tune_fill(host[t], elems[t], d->dtype, t < 2 ? &seed : NULL);
  }
  /* the first run (C copied back, verified), then with --time o->iters
   * timed launches back to back on the same loaded kernel, in one call */
  tc_status st = tc_gemm_run_timed(g, host[0], host[1], host[2], &r->first_ms,
                                   times ? o->iters : 0, times);
  if (st != TC_OK) {
    op_fail(o, "the kernel failed (%s): %s", tc_status_name(st), op_api_message(tc_gemm_error(g)));
    goto out;
  }
  r->ran = 1;
  if (o->verify) {
    tc_op_verify_result v;
    if (tc_gemm_verify_result(g, host[0], host[1], host[2], &v) < 0) {
      op_fail(o, "%s", op_api_message(tc_gemm_error(g)));
      goto out;
    }
    r->verified = 1, r->bad = v.bad, r->pass = v.bad == 0;
    r->max_abs = v.max_abs, r->worst = v.worst, r->checked = v.checked, r->check_cell = v.cell;
    snprintf(r->verify_msg, sizeof r->verify_msg, "%s", v.message);
  }
  if (times) {
    op_set_time(o, r, times, 2.0 * (double)d->batch * (double)d->m * (double)d->n * (double)d->k);
    times = NULL;
  }
  if (!o->json) op_print_run(o, r, 1, (int64_t)elems[2]);
  rc = !r->verified || r->pass ? CLI_OK : CLI_FAIL;
out:
  free(times);
  for (int t = 0; t < 3; t++) free(host[t]);
  return rc;
}

/* Everything after the arguments: plan (or tune), print, emit, run. */
static int gemm_main(op_opts *o, tc_gemm *g, const tc_gemm_desc *d, op_report *r, int *ok) {
  tc_status st;
  /* a given or stored perf config is planned first: a bad one fails
   * before anything is printed */
  if (!o->tune && (st = tc_gemm_plan(g, o->perf_config)) != TC_OK)
    return api_failure(o, g, st, "cannot generate the kernel");
  TC_STR_LOCAL(why);
  int runs, have_dev = op_find_device(o, r, &runs, &why);
  if (!have_dev && runs) return CLI_FAIL;
  if (!o->json) {
    printf("problem: %s\n", tc_gemm_problem_string(g));
    op_print_device(o, r, have_dev, tc_str_cstr(&why));
    fflush(stdout);
  }
  int rc = o->tune ? tune(o, g, r) : CLI_OK;
  if (rc != CLI_OK) return rc;
  report_plan(o, g, r);
  if (o->emit && (rc = emit(o, g, r)) != CLI_OK) return rc;
  if (!runs) {
    /* --target hip: compiled with hipcc; cuda: checked with NVRTC */
    rc = op_build_only(o, have_dev, tc_str_cstr(&why), tc_gemm_kernel_source(g), tc_gemm_kernel_name(g));
  } else {
    rc = execute(o, g, d, r);
  }
  *ok = rc == CLI_OK;
  return rc;
}

int cmd_gemm(int argc, char **argv) {
  op_opts o;
  op_opts_init(&o, "gemm");
  gemm_tile_opts tile;
  gemm_tile_opts_init(&tile);
  gemm_epilogue epi;
  gemm_epilogue_init(&epi);
  tc_gemm_desc d;
  tc_gemm_desc_init(&d);
  d.m = d.n = d.k = 0;
  int done = 0, rc = parse_args(&o, &tile, &epi, &d, argc, argv, &done);
  if (rc != CLI_OK || done) return rc;
  if ((rc = op_opts_check(&o)) != CLI_OK) return rc;
  if (!d.m || !d.n || !d.k) return op_usage_error(&o, "-M, -N and -K are required");
  if (d.m == -1 || d.n == -1 || d.k == -1) {
    /* one fused kernel for every M (N, K) (docs/dynamic.md): the fusion
     * path, with or without epilogue ops */
    const char *clash = tile.tile ? "--kernel tile" : o.perf_config ? "--perf-config" : o.tune ? "--tune"
                        : d.batch != 1 ? "-g" : (d.m == -1 || d.k == -1) && d.trans_a ? "--transA 1"
                        : (d.n == -1 || d.k == -1) && d.trans_b ? "--transB 1" : tile.first;
    if (clash && d.m == -1)
      return op_usage_error(&o, "-M dyn does not combine with %s (one fused kernel for every M "
                            "of a row-major A [M, K])", clash);
    if (clash && d.n == -1)
      return op_usage_error(&o, "-N dyn does not combine with %s (one fused kernel for every N "
                            "of a row-major B [K, N])", clash);
    if (clash)
      return op_usage_error(&o, "-K dyn does not combine with %s (one fused kernel for every K "
                            "of a row-major A [M, K] and B [K, N])", clash);
    epi.given = 1;
  }
  if (epi.tiles[0] && !epi.given) return op_usage_error(&o, "--tiles applies to --epilogue");
  if (epi.ab_given && !epi.given) return op_usage_error(&o, "--ab-type applies to --epilogue");
  if (epi.macro && !epi.tiles[0] && !o.tune && !o.perf_config)
    return op_usage_error(&o, "--macro %s needs --tiles or --tune (and --epilogue)", gemm_macro_name[epi.macro]);
  if (epi.macro > TC_MACRO_MMA_M16N8K16 && o.tune)
    return op_usage_error(&o, "--tune tries FMA and mma.sync tiles; --macro %s needs --tiles",
                          gemm_macro_name[epi.macro]);
  if (epi.stages && !epi.tiles[0]) return op_usage_error(&o, "--stages needs --tiles (and --epilogue)");
  if (epi.given) {
    /* the fused GEMM comes from the fusion path: its tiles are the matmul
     * scheduler's, given by --tiles or a perf config mapped onto them
     * (src/tune/matmul_config.h) */
    const char *clash = tile.tile ? "--kernel tile"
                        : o.perf_config && epi.tiles[0] ? "--perf-config and --tiles together"
                        : o.perf_config && epi.macro ? "--perf-config and --macro together (the perf "
                                                       "config's form says the op type)"
                        : o.tune && epi.tiles[0] ? "--tune and --tiles together" : tile.first;
    if (clash) return op_usage_error(&o, "--epilogue does not combine with %s", clash);
    return gemm_epilogue_run(&o, &epi, d.batch, d.m, d.n, d.k, d.trans_a, d.trans_b);
  }
  if (tile.tile) return gemm_tile_run(&o, &tile, d.batch, d.m, d.n, d.k, d.trans_a, d.trans_b);
  if (tile.first) return op_usage_error(&o, "%s applies to --kernel tile", tile.first);
  d.dtype = o.dtype;
  /* the command names the default arch: on CUDA it may pick TMA + wgmma */
  tc_op_options opt = {o.target, o.device, tc_target_ops_arch(o.target, o.arch), NULL};
  tc_gemm *g = tc_gemm_new(&d, &opt);
  op_report r;
  memset(&r, 0, sizeof r);
  int ok = 0;
  rc = gemm_main(&o, g, &d, &r, &ok);
  if (o.json && tc_gemm_kernel_name(g)) print_json(&o, &d, g, &r, ok);
  else if (o.json && rc != CLI_OK) op_json_failure(&o, tc_gemm_problem_string(g));
  free((char *)r.db_path);
  tc_gemm_free(g);
  return rc;
}
