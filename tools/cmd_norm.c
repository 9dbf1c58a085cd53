/* cmd_norm.c - `tilec norm softmax|rmsnorm|layernorm|softmax_bwd|rmsnorm_bwd
 * -M ROWS -N COLS ...`:
 * one normalization over the last axis of an [M, N] tensor, built as a
 * fusion (src/demo/norms.c), scheduled by tc_schedule_auto, compiled for
 * the target and run; -V 1 checks it against tc_reference_run (double
 * accumulation). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "op_cli.h"
#include "../src/demo/norms.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: tilec norm KIND -M ROWS -N COLS [-t f32|f16|bf16] [-V 0|1] [--eps X]\n"
          "                  [--time [-i N]] [--emit FILE] [--json]\n"
          "                  [--target opencl|cuda|hip] [--device SEL] [--arch ARCH]\n"
          "\n"
          "runs one normalization over the last axis of x [ROWS, COLS], as one kernel that\n"
          "tc_schedule_auto schedules (the schedule is printed):\n"
          "  softmax    y = exp(x - max(x)) / sum(exp(x - max(x)))\n"
          "  rmsnorm    y = x / sqrt(mean(x^2) + eps)\n"
          "  layernorm  y = (x - mean) / sqrt(var + eps), mean and variance in one pass\n"
          "             (Welford; no affine weights)\n"
          "  softmax_bwd  dx = y * (dy - sum(dy * y)), from softmax's output y and dy\n"
          "  rmsnorm_bwd  dx = r * dy - x * r^3 * mean(dy * x), r = 1 / sqrt(mean(x^2) + eps)\n"
          "  xent       the cross-entropy loss of each row [ROWS, 1]: log(sum(exp(x - max))) + max\n"
          "             - x[label], with random labels in [0, COLS) (i32)\n"
          "the inputs are random in [-4, 4) (y in (0, 1) for softmax_bwd); 16-bit inputs\n"
          "compute in f32 and round the result back.\n"
          "\n"
          "  -M, -N N               rows and row length (required, 1 .. 2^31 elements in all)\n"
          "  -M dyn                 the rows are a size variable M given at launch: one kernel\n"
          "                         for every M (docs/dynamic.md); it is printed once and run\n"
          "                         (and with -V 1 checked) at M = 1, 7, 128 and 1000; with\n"
          "                         --json, one object whose \"runs\" hold each M's result\n"
          "  -N dyn                 the row length a size variable N the same way (each pass\n"
          "                         over a row reads it from global memory), run at N = 1, 7,\n"
          "                         128 and 1000; with -M dyn both, at (M, N) = (1, 1),\n"
          "                         (7, 128), (128, 7) and (1000, 1000)\n"
          "  --eps X                rmsnorm, layernorm, rmsnorm_bwd: eps (default 1e-5, finite,\n"
          "                         >= 0), passed at launch: the kernel does not depend on it, so\n"
          "                         a run with another eps reuses the cached kernel (the `cache:`\n"
          "                         line says hit)\n"
          "  -V 0|1                 1: compare y with tc_reference_run (sums in double) and print\n"
          "                         `verify: PASS` or `verify: FAIL`; passes when the largest error\n"
          "                         is at most 1e-5 (f32), 2e-3 (f16), 1.6e-2 (bf16) of the\n"
          "                         largest |y| (default 0)\n"
          "  --time                 print the kernel time (median of -i runs) and GB/s (each\n"
          "                         input read and the result written once)\n");
  op_common_usage(out);
  fprintf(out, "\nExit status: 0 ok, 1 a kernel failed to compile, run or verify, or no device;\n"
               "2 a usage error.\n");
}

static double host_value(tc_dtype t, const void *p, int64_t i) {
  if (t == TC_F32) return ((const float *)p)[i];
  uint16_t h = ((const uint16_t *)p)[i];
  return t == TC_F16 ? tc_f16_to_f32(h) : tc_bf16_to_f32(h);
}

static void host_store(tc_dtype t, void *p, int64_t i, float v) {
  if (t == TC_F32) ((float *)p)[i] = v;
  else ((uint16_t *)p)[i] = t == TC_F16 ? tc_f32_to_f16(v) : tc_f32_to_bf16(v);
}

typedef struct norm_run {
  int verified, pass;
  double err;     /* largest error over the largest |y| */
  double ms, gbs;
  int timed;
} norm_run;

/* Runs k (and checks it with -V 1); CLI_OK or CLI_FAIL after a message. */
static int run(op_opts *o, tc_norm_kind kind, tc_fusion *f, tc_kernel *k, int64_t rows, int64_t cols,
               float eps, norm_run *r, int nvar) {
  int64_t n = rows * cols, nout = rows * tc_norm_out_cols(kind, cols);
  size_t esz = o->dtype == TC_F32 ? 4 : 2;
  int nin = tc_norm_inputs(kind);
  void *in[2] = {NULL, NULL}, *y = malloc((size_t)nout * esz), *ref = malloc((size_t)nout * esz);
  uint64_t s = 0x2545F4914F6CDD1Dull;
  for (int q = 0; q < nin; q++) {
    bool label = kind == TC_NORM_XENT && q == 1; /* i32 [rows, 1] in [0, cols) */
    in[q] = malloc((size_t)(label ? rows : n) * (label ? 4 : esz));
    for (int64_t i = 0; i < (label ? rows : n); i++) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      double u = (double)(s >> 11) * ldexp(1.0, -53);
      if (label) ((int32_t *)in[q])[i] = (int32_t)(s % (uint64_t)cols);
      /* softmax_bwd's first input is a softmax output: in (0, 1) */
      else host_store(o->dtype, in[q], i, (float)(kind == TC_NORM_SOFTMAX_BWD && q == 0 ? u / (double)cols : u * 8.0 - 4.0));
    }
  }
  /* the tensor inputs, eps where the kind reads it, the output */
  /* a kernel over the size variables (M, N, or both, in that order)
   * takes them first (filled by the run); f, the reference, has the
   * extents fixed */
  void *kargs[6] = {NULL}, **args = kargs + nvar, *rargs[4];
  int64_t sizes[2];
  for (int i = 0; i < nvar; i++)
    sizes[i] = strcmp(tc_kernel_size_var_at(k, i, NULL, NULL), "M") == 0 ? rows : cols;
  int np = 0;
  for (int q = 0; q < nin; q++, np++) args[np] = rargs[np] = in[q];
  if (tc_norm_has_eps(kind)) args[np] = rargs[np] = &eps, np++;
  args[np] = y, rargs[np] = ref;
  int rc = CLI_OK;
  double ms = 0;
  tc_status st = tc_kernel_run_sizes(k, kargs, sizes, nvar, o->device, &ms);
  if (st) {
    rc = op_fail(o, "%s", tc_kernel_error(k));
  } else if (o->verify) {
    double err = 0, big = 0;
    if (tc_reference_run(f, rargs)) rc = op_fail(o, "%s", tc_fusion_error(f));
    for (int64_t i = 0; i < nout && !rc; i++) {
      double a = host_value(o->dtype, y, i), b = host_value(o->dtype, ref, i);
      if (!(fabs(a - b) <= err)) err = fabs(a - b);
      if (fabs(b) > big) big = fabs(b);
    }
    double tol = o->dtype == TC_F32 ? 1e-5 : o->dtype == TC_F16 ? 2e-3 : 1.6e-2;
    r->verified = 1;
    r->err = err / (big > 0 ? big : 1);
    r->pass = r->err <= tol;
  }
  if (!rc && o->time) {
    double *t = malloc(sizeof(double) * (size_t)o->iters);
    for (int i = 0; i < o->iters && !st; i++) st = tc_kernel_run_sizes(k, kargs, sizes, nvar, o->device, &t[i]);
    if (st) rc = op_fail(o, "%s", tc_kernel_error(k));
    else {
      r->ms = op_median(t, o->iters);
      double bytes = (double)n * (double)esz * (kind == TC_NORM_XENT ? 1 : nin) +
                     (double)nout * (double)esz + (kind == TC_NORM_XENT ? 4.0 * (double)rows : 0);
      r->gbs = bytes / (r->ms * 1e6);
      r->timed = 1;
    }
    free(t);
  }
  free(in[0]), free(in[1]), free(y), free(ref);
  return rc;
}

/* ", "verify": ..., "time": ..." of a run, for --json */
static void json_run(tc_str *j, const op_opts *o, const norm_run *r) {
  tc_str_cat(j, ", \"verify\": ");
  if (r->verified) {
    tc_str_printf(j, "{\"result\": \"%s\", \"max_error_over_max\": ", r->pass ? "PASS" : "FAIL");
    op_json_num(j, r->err);
    tc_str_cat(j, "}");
  } else {
    tc_str_cat(j, "null");
  }
  tc_str_cat(j, ", \"time\": ");
  if (r->timed) {
    tc_str_printf(j, "{\"ms\": ");
    op_json_num(j, r->ms);
    tc_str_printf(j, ", \"runs\": %d, \"gbps\": ", o->iters);
    op_json_num(j, r->gbs);
    tc_str_cat(j, "}");
  } else {
    tc_str_cat(j, "null");
  }
}

/* -M dyn / -N dyn: prints the problem and runs the one kernel k at a
 * few M (N, or (M, N) pairs), each checked (-V 1) against the reference
 * of a fusion with the extents fixed (rows, cols < 0: that one is the
 * size variable). */
static int run_dyn(op_opts *o, tc_norm_kind kind, const char *name, tc_kernel *k, int64_t rows,
                   int64_t cols, double eps, const char *note, int runs) {
  int nvar = tc_kernel_size_var_count(k);
  tc_str j;
  tc_str_init(&j);
  char mtext[24], ntext[24];
  snprintf(mtext, sizeof mtext, rows < 0 ? "dyn" : "%lld", (long long)rows);
  snprintf(ntext, sizeof ntext, cols < 0 ? "dyn" : "%lld", (long long)cols);
  if (o->json) {
    /* the object of fixed extents (print_json) with "rows" and / or
     * "cols" "dyn", the size variables, and verify / time per run in
     * "runs" */
    tc_str_printf(&j, "{\"command\": \"norm\", \"kind\": \"%s\", \"rows\": %s%s%s, \"cols\": %s%s%s",
                  name, rows < 0 ? "\"" : "", mtext, rows < 0 ? "\"" : "", cols < 0 ? "\"" : "", ntext,
                  cols < 0 ? "\"" : "");
    op_json_size_vars(&j, k);
    tc_str_printf(&j, ", \"dtype\": \"%s\", \"target\": \"%s\", \"schedule\": ",
                  tc_dtype_name(o->dtype), tc_target_name(o->target));
    op_json_str(&j, note);
    tc_str_cat(&j, ", \"eps\": ");
    if (tc_norm_has_eps(kind)) op_json_num(&j, eps);
    else tc_str_cat(&j, "null");
    tc_str_printf(&j, ", \"cached\": %s, \"runs\": [", tc_kernel_from_cache(k) ? "true" : "false");
  } else {
    printf("problem: norm %s -M %s -N %s -t %s --target %s", name, mtext, ntext,
           tc_dtype_name(o->dtype), tc_target_name(o->target));
    if (tc_norm_has_eps(kind)) printf(" --eps %g", eps);
    printf("\nschedule: %s\n", note);
    printf("cache: %s\n", tc_kernel_from_cache(k) ? "hit (the kernel was read from the cache)"
                                                  : "miss (the kernel was compiled)");
    if (o->emit) printf("emitted: %s\n", o->emit);
  }
  /* one variable: each value; both: the pairs */
  static const int64_t vals[] = {1, 7, 128, 1000};
  static const int64_t pairs[][2] = {{1, 1}, {7, 128}, {128, 7}, {1000, 1000}};
  int rc = CLI_OK, ok = 1, first = 1;
  for (size_t i = 0; i < sizeof vals / sizeof vals[0] && runs && !rc; i++) {
    int64_t m = rows > 0 ? rows : cols < 0 ? pairs[i][0] : vals[i];
    int64_t n = cols > 0 ? cols : rows < 0 ? pairs[i][1] : vals[i];
    if (m * n > (int64_t)1 << 31) break;
    tc_fusion *ref = tc_fusion_new();
    tc_tensor *y = tc_norm_build(ref, kind, o->dtype, m, n);
    norm_run r = {0};
    if (!y || tc_add_output(ref, y)) rc = op_fail(o, "%s", tc_fusion_error(ref));
    else rc = run(o, kind, ref, k, m, n, (float)eps, &r, nvar);
    tc_fusion_free(ref);
    if (rc) break;
    ok &= !r.verified || r.pass;
    char at[64] = "";
    if (rows < 0) snprintf(at, sizeof at, "M = %lld", (long long)m);
    if (cols < 0) snprintf(at + strlen(at), sizeof at - strlen(at), "%sN = %lld", rows < 0 ? ", " : "", (long long)n);
    if (o->json) {
      tc_str_printf(&j, "%s{", first ? "" : ", ");
      if (rows < 0) tc_str_printf(&j, "\"m\": %lld%s", (long long)m, cols < 0 ? ", " : "");
      if (cols < 0) tc_str_printf(&j, "\"n\": %lld", (long long)n);
      json_run(&j, o, &r);
      tc_str_cat(&j, "}");
      first = 0;
      continue;
    }
    printf("%s:", at);
    if (r.verified)
      printf(" verify: %s (max error %.3g of the largest |y|)", r.pass ? "PASS" : "FAIL", r.err);
    if (r.timed) printf(" time: %.4f ms (median of %d runs), %.2f GB/s", r.ms, o->iters, r.gbs);
    printf("%s\n", r.verified || r.timed ? "" : " ran");
  }
  if (o->json && !rc) {
    tc_str_printf(&j, "], \"ok\": %s}\n", ok ? "true" : "false");
    fputs(tc_str_cstr(&j), stdout);
  }
  tc_str_free(&j);
  if (rc) return rc;
  return ok ? CLI_OK : CLI_FAIL;
}

/* eps < 0: the kind has none; cached: the kernel came from the cache */
static void print_json(const op_opts *o, const char *kind, int64_t rows, int64_t cols, double eps, int cached,
                       const char *note, const norm_run *r, int ok) {
  tc_str j;
  tc_str_init(&j);
  tc_str_printf(&j, "{\"command\": \"norm\", \"kind\": \"%s\", \"rows\": %lld, \"cols\": %lld, "
                "\"dtype\": \"%s\", \"target\": \"%s\", \"schedule\": ", kind, (long long)rows,
                (long long)cols, tc_dtype_name(o->dtype), tc_target_name(o->target));
  op_json_str(&j, note);
  tc_str_cat(&j, ", \"eps\": ");
  if (eps >= 0) op_json_num(&j, eps);
  else tc_str_cat(&j, "null");
  tc_str_printf(&j, ", \"cached\": %s", cached ? "true" : "false");
  json_run(&j, o, r);
  tc_str_printf(&j, ", \"ok\": %s}\n", ok ? "true" : "false");
  fputs(tc_str_cstr(&j), stdout);
  tc_str_free(&j);
}

int cmd_norm(int argc, char **argv) {
  op_opts o;
  op_opts_init(&o, "norm");
  o.dtype = TC_F32;
  if (argc >= 2 && cli_is_help(argv[1])) {
    usage(stdout);
    return CLI_OK;
  }
  if (argc < 2 || argv[1][0] == '-')
    return op_usage_error(&o, "name the normalization: softmax, rmsnorm, layernorm, softmax_bwd, "
                          "rmsnorm_bwd or xent");
  const char *kind = argv[1];
  int k_id = -1;
  for (int i = 0; i < TC_NORM_COUNT; i++)
    if (!strcmp(kind, tc_norm_name((tc_norm_kind)i))) k_id = i;
  if (k_id < 0)
    return op_usage_error(&o, "unknown normalization '%s' (softmax, rmsnorm, layernorm, softmax_bwd, "
                          "rmsnorm_bwd or xent)", kind);
  int64_t rows = 0, cols = 0;
  double eps = TC_NORM_EPS;
  bool eps_given = false;
  for (int i = 2; i < argc; i++) {
    int rc = CLI_OK;
    const char *v;
    if (cli_is_help(argv[i])) {
      usage(stdout);
      return CLI_OK;
    }
    if ((v = op_value(&o, argc, argv, &i, "-M", &rc)) || (!rc && (v = op_value(&o, argc, argv, &i, "-m", &rc)))) {
      if (!strcmp(v, "dyn")) rows = -1;
      else if ((rc = op_parse_int(&o, "-M", v, 1, (int64_t)1 << 31, &rows))) return rc;
    } else if (!rc && ((v = op_value(&o, argc, argv, &i, "-N", &rc)) ||
                       (!rc && (v = op_value(&o, argc, argv, &i, "-n", &rc))))) {
      if (!strcmp(v, "dyn")) cols = -1;
      else if ((rc = op_parse_int(&o, "-N", v, 1, (int64_t)1 << 31, &cols))) return rc;
    } else if (!rc && (v = op_value(&o, argc, argv, &i, "--eps", &rc))) {
      char *end;
      eps = strtod(v, &end);
      if (end == v || *end || !isfinite(eps) || eps < 0 || (float)eps > 3.4028234663852886e38)
        return op_usage_error(&o, "--eps takes a finite number >= 0 (an f32), not '%s'", v);
      eps_given = true;
    } else if (!rc && !op_common_option(&o, argc, argv, &i, &rc) && !rc) {
      return op_usage_error(&o, "unknown option '%s'", argv[i]);
    }
    if (rc) return rc;
  }
  if (!rows || !cols) return op_usage_error(&o, "-M and -N are required");
  if (eps_given && !tc_norm_has_eps((tc_norm_kind)k_id))
    return op_usage_error(&o, "--eps: %s has no eps (rmsnorm, layernorm and rmsnorm_bwd have)", kind);
  bool dyn = rows == -1 || cols == -1;
  if (!dyn && rows * cols > (int64_t)1 << 31) return op_invalid(&o, "%lld x %lld is more than 2^31 elements", (long long)rows, (long long)cols);
  if (o.perf_config || o.tune) return op_usage_error(&o, "norm takes no perf config and no --tune: tc_schedule_auto picks the schedule");
  if (o.dtype != TC_F32 && o.dtype != TC_F16 && o.dtype != TC_BF16)
    return op_usage_error(&o, "-t takes f32, f16 or bf16");
  int rc = op_opts_check(&o);
  if (rc) return rc;
  tc_fusion *f = tc_fusion_new();
  tc_tensor *y = tc_norm_build(f, (tc_norm_kind)k_id, o.dtype, rows, cols);
  tc_status st = y ? tc_add_output(f, y) : TC_ERR_ARGUMENT;
  if (!st) st = tc_schedule_auto(f, o.target, o.arch);
  tc_compile_options co = {o.target, o.arch, kind};
  tc_kernel *k = st ? NULL : tc_compile(f, &co, &st);
  if (!k) {
    rc = op_fail(&o, "%s", tc_fusion_error(f));
    tc_fusion_free(f);
    return rc;
  }
  const char *note = tc_fusion_schedule_note(f);
  if (o.emit && (rc = op_write_file(&o, o.emit, tc_kernel_source(k)))) {
    tc_kernel_free(k), tc_fusion_free(f);
    return rc;
  }
  norm_run r = {0};
  int runs = o.verify || o.time || !o.emit;
  if (dyn) {
    rc = run_dyn(&o, (tc_norm_kind)k_id, kind, k, rows, cols, eps, note, runs);
    tc_kernel_free(k), tc_fusion_free(f);
    return rc;
  }
  if (runs) rc = run(&o, (tc_norm_kind)k_id, f, k, rows, cols, (float)eps, &r, 0);
  int ok = !rc && (!r.verified || r.pass);
  if (o.json) {
    print_json(&o, kind, rows, cols, tc_norm_has_eps((tc_norm_kind)k_id) ? eps : -1,
               tc_kernel_from_cache(k), note, &r, ok);
  } else {
    printf("problem: norm %s -M %lld -N %lld -t %s --target %s", kind, (long long)rows, (long long)cols,
           tc_dtype_name(o.dtype), tc_target_name(o.target));
    if (tc_norm_has_eps((tc_norm_kind)k_id)) printf(" --eps %g", eps);
    printf("\nschedule: %s\n", note);
    printf("cache: %s\n", tc_kernel_from_cache(k) ? "hit (the kernel was read from the cache)"
                                                  : "miss (the kernel was compiled)");
    if (o.emit) printf("emitted: %s\n", o.emit);
    if (r.verified)
      printf("verify: %s (max error %.3g of the largest |y|; %lld elements)\n", r.pass ? "PASS" : "FAIL",
             r.err, (long long)(rows * tc_norm_out_cols((tc_norm_kind)k_id, cols)));
    if (r.timed) printf("time: %.4f ms (median of %d runs), %.2f GB/s\n", r.ms, o.iters, r.gbs);
  }
  tc_kernel_free(k), tc_fusion_free(f);
  if (rc) return rc;
  return ok ? CLI_OK : CLI_FAIL;
}
