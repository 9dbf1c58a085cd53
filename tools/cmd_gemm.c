/* cmd_gemm.c - `tilec gemm`: C[M,N] = A[M,K] * B[K,N] (G times, batched)
 * through the gridwise GEMM generator.
 *
 * Every matrix is row-major in memory: A is stored [G][M][K], or [G][K][M]
 * with --transA 1; B is stored [G][K][N], or [G][N][K] with --transB 1; C
 * is [G][M][N].  Each is a coordinate-transform view (src/layout/coord.h)
 * whose upper dims are what tc_gemm_generate wants: A [G, K, M], B [G, K,
 * N], C [G, M, N] (a reorder where the memory order differs).  The perf
 * config comes from --perf-config, --tune, the perf DB or the heuristic,
 * as for conv2d; the kernel runs through tc_cl_run (or tc_cuda_run) and -V
 * 1 compares C with a plain C GEMM summed in double.  See docs/conv_cli.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/tilec.h"
#include "../src/base/base.h"
#include "../src/layout/coord.h"
#include "../src/ops/gemm.h"
#include "../src/runtime/runtime.h"
#include "../src/tune/perfdb.h"
#include "../src/ops/tuner.h"
#include "cli.h"
#include "op_cli.h"
#include "gemm_tile.h"

/* Largest matrix the command allocates, in elements. */
#define GEMM_MAX_ELEMS ((int64_t)1 << 31)

static void gemm_usage(FILE *out) {
  fputs("usage: tilec gemm -M M -N N -K K [--transA 0|1] [--transB 0|1] [-g G]\n"
        "                  [-t f32|f16|bf16] [-V 0|1] [--perf-config S | --tune [--tune-max N]]\n"
        "                  [--time [-i N]] [--emit FILE] [--json]\n"
        "                  [--target opencl|cuda|hip] [--device SEL] [--arch ARCH]\n"
        "                  [--kernel gridwise|tile [--passes] [--no-aggregate] [--moe ...]]\n"
        "\n"
        "runs C[M,N] = A[M,K] * B[K,N], G times (one per group), with the gridwise GEMM\n"
        "kernel.  Every matrix is row-major.\n"
        "\n"
        "  -M, -N, -K N            the sizes (required; -m, -n, -k also work)\n"
        "  --transA 0|1            1: A is stored [K, M] (default 0: [M, K])\n"
        "  --transB 0|1            1: B is stored [N, K] (default 0: [K, N])\n"
        "  -g G                    groups: G independent GEMMs, each matrix stored [G][..]\n"
        "                          (default 1)\n",
        out);
  gemm_tile_usage(out);
  op_common_usage(out);
}

static int parse_bool(op_opts *o, const char *flag, const char *v, int *out) {
  if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0) return *out = 0, CLI_OK;
  if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0) return *out = 1, CLI_OK;
  return op_usage_error(o, "%s takes 0 or 1, got '%s'", flag, v);
}

/* The three views; NULL after a message in err. */
static tc_view *matrix_view(int64_t g, int64_t rows, int64_t cols, const char *rname,
                            const char *cname, int swap, char *err, size_t cap) {
  int64_t ext[3] = {g, rows, cols};
  const char *names[3] = {"g", rname, cname};
  tc_view *v = tc_view_new(3, ext, NULL, names);
  if (!v) {
    snprintf(err, cap, "cannot make the [%s, %s] view", rname, cname);
    return NULL;
  }
  static const int perm[3] = {0, 2, 1};
  if (swap && tc_view_reorder(v, perm) != 0) {
    snprintf(err, cap, "cannot reorder the [%s, %s] view: %s", rname, cname, v->err);
    tc_view_free(v);
    return NULL;
  }
  return v;
}

static void print_json(const op_opts *o, const char *key, int64_t g, int64_t m, int64_t n,
                       int64_t k, int ta, int tb, const tc_gemm_kernel *kern, const op_report *r,
                       int ok) {
  tc_str j;
  tc_str_init(&j);
  tc_str_cat(&j, "{\"command\": \"gemm\", \"problem\": {\"string\": ");
  op_json_str(&j, key);
  tc_str_printf(&j, ", \"g\": %lld, \"m\": %lld, \"n\": %lld, \"k\": %lld, \"transA\": %d, "
                "\"transB\": %d, \"dtype\": \"%s\"}", (long long)g, (long long)m, (long long)n,
                (long long)k, ta, tb, tc_dtype_name(o->dtype));
  op_json_device(&j, o, r);
  tc_str_cat(&j, ", \"perf_config\": ");
  op_json_str(&j, r->config);
  tc_str_cat(&j, ", \"perf_config_source\": ");
  op_json_str(&j, r->source);
  tc_str_cat(&j, ", \"kernels\": [{\"name\": ");
  op_json_str(&j, kern->name);
  tc_str_printf(&j, ", \"grid\": [%zu, %zu, %zu], \"block\": [%zu, %zu, %zu], \"smem_bytes\": %lld}]",
                kern->grid[0], kern->grid[1], kern->grid[2], kern->block[0], kern->block[1],
                kern->block[2], (long long)kern->smem_bytes);
  op_json_run(&j, o, r, 1);
  op_json_tune(&j, r);
  op_json_end(&j, ok);
}

int cmd_gemm(int argc, char **argv) {
  op_opts o;
  op_opts_init(&o, "gemm");
  int64_t m = 0, n = 0, k = 0, g = 1;
  int ta = 0, tb = 0;
  gemm_tile_opts tile;
  gemm_tile_opts_init(&tile);
  struct { const char *flag, *alias; int64_t *dst; } sizes[] = {
      {"-M", "-m", &m}, {"-N", "-n", &n}, {"-K", "-k", &k}, {"-g", "--groups", &g}};

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = NULL;
    int rc = CLI_OK;
    if (cli_is_help(a)) {
      gemm_usage(stdout);
      return CLI_OK;
    }
    if (op_common_option(&o, argc, argv, &i, &rc)) {
      if (rc != CLI_OK) return rc;
      continue;
    }
    if (gemm_tile_option(&o, &tile, argc, argv, &i, &rc)) {
      if (rc != CLI_OK) return rc;
      continue;
    }
    int matched = 0;
    for (int f = 0; f < 4 && !matched; f++) {
      const char *name = sizes[f].flag;
      if (!(v = op_value(&o, argc, argv, &i, name, &rc)) && rc == CLI_OK)
        v = op_value(&o, argc, argv, &i, name = sizes[f].alias, &rc);
      if (rc != CLI_OK) return rc;
      if (!v) continue;
      matched = 1;
      if ((rc = op_parse_int(&o, name, v, 1, INT32_MAX, sizes[f].dst)) != CLI_OK) return rc;
    }
    if (matched) continue;
    const char *tname[4] = {"--transA", "-transA", "--transB", "-transB"};
    for (int t = 0; t < 4 && !matched; t++) {
      if (!(v = op_value(&o, argc, argv, &i, tname[t], &rc))) {
        if (rc != CLI_OK) return rc;
        continue;
      }
      matched = 1;
      if ((rc = parse_bool(&o, tname[t], v, t < 2 ? &ta : &tb)) != CLI_OK) return rc;
    }
    if (matched) continue;
    if (a[0] == '-') return op_usage_error(&o, "unknown option '%s'", a);
    return op_usage_error(&o, "unexpected argument '%s'", a);
  }
  int rc = op_opts_check(&o);
  if (rc != CLI_OK) return rc;
  if (!m || !n || !k) return op_usage_error(&o, "-M, -N and -K are required");
  if (tile.tile) return gemm_tile_run(&o, &tile, g, m, n, k, ta, tb);
  if (tile.first) return op_usage_error(&o, "%s applies to --kernel tile", tile.first);
  double ea = (double)g * (double)m * (double)k, eb = (double)g * (double)k * (double)n,
         ec = (double)g * (double)m * (double)n;
  if (ea > (double)GEMM_MAX_ELEMS || eb > (double)GEMM_MAX_ELEMS || ec > (double)GEMM_MAX_ELEMS)
    return op_invalid(&o, "a matrix would have more than 2^31 elements (A %.0f, B %.0f, C %.0f)", ea,
                      eb, ec);

  tc_str key;
  tc_str_init(&key);
  tc_str_printf(&key, "gemm -g %lld -M %lld -N %lld -K %lld --transA %d --transB %d -t %s",
                (long long)g, (long long)m, (long long)n, (long long)k, ta, tb,
                tc_dtype_name(o.dtype));

  char why[2048] = "";
  op_report r;
  memset(&r, 0, sizeof r);
  tc_view *va = NULL, *vb = NULL, *vc = NULL;
  tc_gemm_kernel kern;
  memset(&kern, 0, sizeof kern);
  int have_kernel = 0, ok = 0;
  tc_perfdb *db = NULL;
  tc_cl *cl = NULL;
  void *host[3] = {NULL, NULL, NULL};
  tc_gemm_check chk = {0};
  tc_str e;
  tc_str_init(&e);
  rc = CLI_FAIL;

  tc_gemm_params prm;
  memset(&prm, 0, sizeof prm);
  if (o.perf_config && tc_gemm_params_parse(o.perf_config, &prm, why, sizeof why) != 0) {
    rc = op_invalid(&o, "bad --perf-config '%s': %s", o.perf_config, why);
    goto out;
  }

  /* A [G,K,M] over memory [G][M][K] (or [G][K][M]), B [G,K,N] over
   * [G][K][N] (or [G][N][K]), C [G,M,N] */
  va = ta ? matrix_view(g, k, m, "k", "m", 0, why, sizeof why)
          : matrix_view(g, m, k, "m", "k", 1, why, sizeof why);
  if (va) vb = tb ? matrix_view(g, n, k, "n", "k", 1, why, sizeof why)
                  : matrix_view(g, k, n, "k", "n", 0, why, sizeof why);
  if (vb) vc = matrix_view(g, m, n, "m", "n", 0, why, sizeof why);
  if (!vc) {
    op_fail(&o, "%s", why);
    goto out;
  }
  tc_gemm_problem pb;
  memset(&pb, 0, sizeof pb);
  pb.a = va, pb.b = vb, pb.c = vc;
  pb.a_dtype = pb.b_dtype = pb.c_dtype = o.dtype;
  pb.accumulate = 0;
  pb.alpha = 1.0f;
  tc_gemm_shape shape = tc_gemm_problem_shape(&pb);

  /* --target hip: generated and compiled, never run (op_hip_finish) */
  int hip = o.target == TC_TARGET_HIP, runs;
  int have_dev = op_find_device(&o, &r, &runs, why, sizeof why);
  if (!have_dev && runs) goto out;
  if (!o.json) {
    printf("problem: %s\n", tc_str_cstr(&key));
    op_print_device(&o, &r, have_dev, why);
    fflush(stdout);
  }

  /* host buffers and the reference, when anything runs */
  size_t esize = tc_dtype_size(o.dtype);
  size_t elems[3] = {(size_t)ea, (size_t)eb, (size_t)ec};
  tc_rt_buffer bufs[3];
  if (runs) {
    uint64_t seed = 0x5eed0e11ull;
    for (int t = 0; t < 3; t++) {
      host[t] = calloc(elems[t], esize);
      if (!host[t]) {
        op_fail(&o, "cannot allocate %zu bytes for %c", elems[t] * esize, "ABC"[t]);
        goto out;
      }
      tc_tune_fill(host[t], elems[t], o.dtype, t < 2 ? &seed : NULL);
      bufs[t].host = host[t], bufs[t].bytes = elems[t] * esize, bufs[t].copy_back = t == 2;
    }
    if (o.verify || o.tune) {
      if (tc_gemm_check_make(g, m, n, k, ta, tb, o.dtype, host[0], host[1], &chk,
                             &r.check_cell) != 0) {
        op_fail(&o, "cannot allocate the reference of C");
        goto out;
      }
      r.checked = (int64_t)chk.n;
    }
  }

  /* ---- the perf config ---- */
  r.source = "heuristic";
  if (o.perf_config) {
    r.source = "option";
    snprintf(r.source_detail, sizeof r.source_detail, "--perf-config");
    if (tc_gemm_params_derive(&prm, &shape, why, sizeof why) != 0) {
      rc = op_invalid(&o, "--perf-config %s breaks a rule for this GEMM (G %lld, M %lld, N %lld, "
                          "K %lld): %s", o.perf_config, (long long)g, (long long)m, (long long)n,
                      (long long)k, why);
      goto out;
    }
  } else if (o.tune) {
    tc_tune_options to;
    op_tune_begin(&o, &r, &db, tc_str_cstr(&key), &to);
    tc_status st = tc_tune_gemm(&pb, bufs, &chk, &to, &r.tune, why, sizeof why);
    if (st != TC_OK) {
      op_fail(&o, "tuning failed: %s", why);
      goto out;
    }
    prm = r.tune.best;
    op_tune_end(&o, &r, db);
  } else if (have_dev && (db = op_perfdb_open(&o, 0)) != NULL) {
    tc_perfdb_entry pe;
    int found = tc_tune_lookup(db, tc_str_cstr(&key), o.target, r.device, &prm, &pe, why, sizeof why);
    if (found == 1 && tc_gemm_params_derive(&prm, &shape, why, sizeof why) == 0) {
      op_from_perfdb(&r, db, &pe);
    } else if (found != 0) {
      fprintf(stderr, "tilec gemm: warning: %s%s; using the heuristic\n",
              found == 1 ? "the perf DB entry does not fit: " : "", why);
    }
  }
  if (strcmp(r.source, "heuristic") == 0) {
    /* the kernel kind per target (tc_gemm_default_for): 16-bit inputs get
     * the TMA + wgmma kernel on CUDA sm_90a (the default arch) where the
     * matrices allow it, else mma.sync, and the XDLOPS (MFMA) one on HIP */
    const char *kind = "";
    if (tc_gemm_default_for(&shape, o.target, tc_tune_arch(o.target, o.arch), &prm, &kind, why,
                            sizeof why) != 0) {
      op_fail(&o, "no valid perf config for this GEMM: %s", why);
      goto out;
    }
    snprintf(r.source_detail, sizeof r.source_detail, "heuristic, %s", kind);
  }
  tc_gemm_params_format(&prm, r.config, sizeof r.config);
  tc_status st = tc_gemm_generate(&pb, &prm, o.target, "tilec_gemm", &kern, why, sizeof why);
  if (st != TC_OK) {
    op_fail(&o, "cannot generate the kernel (%s): %s", tc_status_name(st), why);
    goto out;
  }
  have_kernel = 1;
  if (!o.json) {
    printf("perf config: %s (%s)\n", r.config, r.source_detail);
    printf("kernel: %s, grid [%zu, %zu, %zu] of blocks [%zu, %zu, %zu], shared memory %lld bytes\n",
           kern.name, kern.grid[0], kern.grid[1], kern.grid[2], kern.block[0], kern.block[1],
           kern.block[2], (long long)kern.smem_bytes);
    fflush(stdout);
  }

  /* ---- --emit ---- */
  if (o.emit) {
    tc_str text, extra;
    tc_str_init(&text);
    tc_str_init(&extra);
    tc_str_printf(&text, "/* tilec gemm: %s\n * perf config %s (%s), for %s */\n\n", tc_str_cstr(&key),
                  r.config, r.source, tc_target_name(o.target));
    const tc_view *views[3] = {va, vb, vc};
    for (int t = 0; t < 3; t++) {
      tc_str_printf(&extra, "%c view:\n", "ABC"[t]);
      tc_view_describe(views[t], &extra);
      if (extra.len && extra.buf[extra.len - 1] != '\n') tc_str_cat(&extra, "\n");
    }
    tc_str_cat(&extra, "arguments: A, B, C");
    op_emit_kernel(&text, 1, 1, &kern, tc_str_cstr(&extra));
    int wrc = op_write_file(&o, o.emit, tc_str_cstr(&text));
    tc_str_free(&text);
    tc_str_free(&extra);
    if (wrc != CLI_OK) goto out;
    if (!o.json) printf("emit: 1 kernel written to %s\n", o.emit);
  }

  /* ---- run ---- */
  if (!runs) {
    /* --target hip: compiled with hipcc, never run; cuda: checked with NVRTC */
    const char *src = kern.source, *kname = kern.name;
    rc = hip ? op_hip_finish(&o, &src, &kname, 1)
             : o.target == TC_TARGET_CUDA ? op_cuda_check(&o, &src, NULL, 1) : CLI_OK;
    ok = rc == CLI_OK;
    goto out;
  }
  if (o.target == TC_TARGET_OPENCL && (st = tc_cl_open(o.device, &cl, &e)) != TC_OK) {
    op_fail(&o, "%s", tc_str_cstr(&e));
    goto out;
  }
  tc_str_clear(&e);
  /* the first run (C copied back, verified), then with --time o.iters timed
   * launches back to back on the same loaded kernel, in one call */
  double *times = o.time ? tc_xcalloc((size_t)o.iters, sizeof *times) : NULL;
  st = tc_gemm_kernel_run(&kern, o.target, cl, o.arch, bufs, 3, &r.first_ms,
                          times ? o.iters : 0, times, &e);
  if (st != TC_OK) {
    free(times);
    op_fail(&o, "the kernel failed (%s): %s", tc_status_name(st), tc_str_cstr(&e));
    goto out;
  }
  r.ran = 1;
  if (o.verify) {
    r.verified = 1;
    r.bad = tc_tune_check(host[2], o.dtype, chk.idx, chk.want, chk.bound, chk.n, &r.max_abs, &r.worst,
                          r.verify_msg, sizeof r.verify_msg);
    r.pass = r.bad == 0;
  }
  if (times) op_set_time(&o, &r, times, 2.0 * (double)g * (double)m * (double)n * (double)k);
  if (!o.json) op_print_run(&o, &r, 1, (int64_t)elems[2]);
  ok = !r.verified || r.pass;
  rc = ok ? CLI_OK : CLI_FAIL;

out:
  if (o.json && have_kernel) print_json(&o, tc_str_cstr(&key), g, m, n, k, ta, tb, &kern, &r, ok);
  else if (o.json && rc != CLI_OK) op_json_failure(&o, tc_str_cstr(&key));
  if (have_kernel) tc_gemm_kernel_free(&kern);
  tc_cl_close(cl);
  for (int t = 0; t < 3; t++) free(host[t]);
  tc_gemm_check_free(&chk);
  tc_perfdb_close(db);
  tc_view_free(va);
  tc_view_free(vb);
  tc_view_free(vc);
  tc_str_free(&e);
  tc_str_free(&key);
  return rc;
}
