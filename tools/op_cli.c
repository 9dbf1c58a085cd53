/* op_cli.c - the pieces `tilec conv2d` and `tilec gemm` share (op_cli.h). */
#include "op_cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "../src/runtime/runtime.h"
#include "../src/target/target.h"

void op_opts_init(op_opts *o, const char *cmd) {
  memset(o, 0, sizeof *o);
  o->cmd = cmd;
  o->iters = OP_DEFAULT_ITERS;
  o->target = TC_DEFAULT_TARGET;
  o->dtype = TC_F32;
}

/* "tilec CMD: <message>" on stderr, then `tail` (a format taking the
 * command name, or a plain line end) */
/* The last message printed, for the JSON of a failed command. */
static char last_error[2048];

static void op_vmessage(const op_opts *o, const char *tail, const char *fmt, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  vsnprintf(last_error, sizeof last_error, fmt, copy);
  va_end(copy);
  fprintf(stderr, "tilec %s: ", o->cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, tail, o->cmd);
}

int op_usage_error(const op_opts *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  op_vmessage(o, "; run `tilec %s --help`\n", fmt, ap);
  va_end(ap);
  return CLI_USAGE;
}

int op_invalid(const op_opts *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  op_vmessage(o, "\n", fmt, ap);
  va_end(ap);
  return CLI_USAGE;
}

int op_fail(const op_opts *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  op_vmessage(o, "\n", fmt, ap);
  va_end(ap);
  return CLI_FAIL;
}

int op_parse_int(const op_opts *o, const char *flag, const char *v, int64_t min, int64_t max,
                 int64_t *out) {
  char *end = NULL;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (!*v || *end || errno == ERANGE)
    return op_usage_error(o, "%s needs an integer, got '%s'", flag, v);
  if (x < min || x > max) {
    if (max == INT64_MAX)
      return op_usage_error(o, "%s must be at least %lld (got %lld)", flag, (long long)min, x);
    return op_usage_error(o, "%s must be between %lld and %lld (got %lld)", flag, (long long)min,
                          (long long)max, x);
  }
  *out = x;
  return CLI_OK;
}

const char *op_value(op_opts *o, int argc, char **argv, int *i, const char *name, int *rc) {
  const char *a = argv[*i];
  size_t n = strlen(name);
  if (strncmp(a, name, n) != 0) return NULL;
  if (a[n] == '=') return a + n + 1;
  if (a[n] != 0) return NULL;
  if (*i + 1 >= argc) {
    *rc = op_usage_error(o, "option %s needs a value", name);
    return NULL;
  }
  *i += 1;
  return argv[*i];
}

int op_common_option(op_opts *o, int argc, char **argv, int *i, int *rc) {
  const char *a = argv[*i], *v;
  int64_t x;
  *rc = CLI_OK;
  if (strcmp(a, "--tune") == 0) return o->tune = 1, 1;
  if (strcmp(a, "--time") == 0) return o->time = 1, 1;
  if (strcmp(a, "--json") == 0) return o->json = 1, 1;
#define VALUE(name) ((v = op_value(o, argc, argv, i, name, rc)) != NULL || *rc != CLI_OK)
  if (VALUE("-V") || VALUE("--verify")) {
    if (*rc == CLI_OK && (*rc = op_parse_int(o, a, v, 0, 1, &x)) == CLI_OK) o->verify = (int)x;
    return 1;
  }
  if (VALUE("-t") || VALUE("--dtype")) {
    if (*rc != CLI_OK) return 1;
    if (strcmp(v, "f32") == 0 || strcmp(v, "fp32") == 0)
      o->dtype = TC_F32;
    else if (strcmp(v, "f16") == 0 || strcmp(v, "fp16") == 0)
      o->dtype = TC_F16;
    else if (strcmp(v, "bf16") == 0)
      o->dtype = TC_BF16;
    else
      *rc = op_usage_error(o, "unknown data type '%s' for -t (f32, f16 or bf16)", v);
    return 1;
  }
  if (VALUE("--perf-config") || VALUE("--perf_config")) {
    if (*rc == CLI_OK) o->perf_config = v;
    return 1;
  }
  if (VALUE("--tune-max")) {
    if (*rc == CLI_OK && (*rc = op_parse_int(o, "--tune-max", v, 1, 100000, &x)) == CLI_OK)
      o->tune_max = (int)x;
    return 1;
  }
  if (VALUE("-i") || VALUE("--iter")) {
    if (*rc == CLI_OK && (*rc = op_parse_int(o, "-i", v, 1, 100000, &x)) == CLI_OK) o->iters = (int)x;
    return 1;
  }
  if (VALUE("--emit")) {
    if (*rc == CLI_OK) {
      if (!*v) *rc = op_usage_error(o, "--emit needs a file name");
      o->emit = v;
    }
    return 1;
  }
  if (VALUE("--device")) {
    if (*rc == CLI_OK) o->device = v;
    return 1;
  }
  if (VALUE("--arch")) {
    if (*rc == CLI_OK) o->arch = v;
    return 1;
  }
  if (VALUE("--target")) {
    if (*rc == CLI_OK) o->target_arg = v;
    return 1;
  }
#undef VALUE
  return 0;
}

void op_common_usage(FILE *out) {
  fputs("  -t f32|f16|bf16         data type (default f32; accumulation is always f32)\n"
        "  -V 0|1                  1: verify against the plain C reference and print\n"
        "                          `verify: PASS` or `verify: FAIL` with the max error\n"
        "                          (default 0); a GEMM of more than 2^30 multiply-adds is\n"
        "                          checked on one element in each square cell of C (the\n"
        "                          line says how many)\n"
        "  --perf-config STRING    the GEMM tunables \"BS,MPB,NPB,KPB,MPT,NPT\" (block size,\n"
        "                          M/N/K per block, M/N per thread); one that breaks a rule\n"
        "                          is an error naming the rule (exit 2)\n"
        "  --tune                  time the candidate perf configs (progress on stderr),\n"
        "                          store the fastest in the perf DB and use it\n"
        "  --tune-max N            try at most N candidates, best first by the heuristic\n"
        "                          (default 16)\n"
        "  --time                  print the kernel time (median of -i back-to-back launches\n"
        "                          after the verified first run) and GFLOP/s\n"
        "  -i N                    timed runs for --time (default 5)\n"
        "  --emit FILE             write the kernel source(s) to FILE (a comment header\n"
        "                          before each); alone (without -V 1, --time, --tune) it\n"
        "                          only generates the kernels and runs nothing\n"
        "  --json                  print one JSON object on stdout instead of the text\n"
        "  --target opencl|cuda|hip  opencl (default), cuda (NVRTC + the CUDA driver) or\n"
        "                          hip (hipcc + the HIP runtime on an AMD GPU; without\n"
        "                          one the kernels are only compiled, and -V 1, --time and\n"
        "                          --tune fail)\n"
        "  --device SEL            OpenCL device: \"P:D\" or a name substring (e.g. pocl);\n"
        "                          default $TILEC_OPENCL_DEVICE, then PoCL, then the first\n"
        "  --arch ARCH             CUDA architecture for --target cuda (default sm_90a), or\n"
        "                          AMD one for --target hip (default: the AMD GPU's, else\n"
        "                          gfx90a; gfx940; gfx942 and gfx950 are emitted but\n"
        "                          Debian's hipcc cannot compile them: ROCm 6.0 / 7.0 can)\n"
        "\n"
        "Without --tune or --perf-config the perf config comes from the perf DB entry of\n"
        "the problem on this device when there is one, else from the heuristic; the\n"
        "output says which (and the kernel kind: \"heuristic, mma.sync\").  The perf DB\n"
        "is $TILEC_PERFDB, else $XDG_DATA_HOME/tilec/perfdb.sqlite, else\n"
        "~/.local/share/tilec/perfdb.sqlite.\n"
        "\n"
        "XDLOPS (MFMA) kernels for f16/bf16: --perf-config xdlops:MPB,NPB,KPB,MPW,NPW[,MFMA]\n"
        "(M/N/K per block, M/N per wave, MFMA 32 or 16); --target hip uses them by\n"
        "default for f16/bf16; on opencl the MFMA is emulated.\n"
        "mma.sync kernels (NVIDIA tensor cores, sm_80+) for f16/bf16: --perf-config\n"
        "mma:MPB,NPB,KPB,MPW,NPW (M/N/K per block, M/N per warp); --target cuda uses\n"
        "them by default for f16/bf16 when --arch is sm_80 or newer; on opencl the\n"
        "mma.sync is emulated.\n"
        "TMA + wgmma kernels (sm_90a) for f16/bf16: --perf-config\n"
        "tmaws:MPB,NPB,STAGES[,CLUSTER[,BLOCKS]] (C tile, shared-memory stages; a\n"
        "producer warp group issues the copies; CLUSTER 2: clusters of 2 blocks\n"
        "sharing B by multicast; BLOCKS: a persistent grid of at most that many\n"
        "blocks walking the tiles, on CUDA also at most one per SM (65536: one per\n"
        "SM); both opt-in) or\n"
        "tma:MPB,NPB,STAGES (the same without the producer: the consumers take turns\n"
        "with the copies); --target cuda uses them by default for\n"
        "--arch sm_90a (the default) when the matrices have 16-byte rows; on opencl\n"
        "the copies, wgmma and stmatrix are emulated.  The heuristic and --tune use\n"
        "the same kinds (--tune:\n"
        "the tensor-core candidates first, then the FMA ones); f32 and opencl use\n"
        "the FMA kernel.\n"
        "\n"
        "exit status: 0 success (with -V 1: verify PASS; --target hip without an AMD\n"
        "GPU: compiled, or hipcc missing); 1 no device, a kernel failed to compile or\n"
        "run, verify FAIL, -V 1 / --time / --tune with --target hip and no AMD GPU; 2 a\n"
        "bad option or value, an impossible problem, or a perf config that breaks a rule\n",
        out);
}

int op_opts_check(op_opts *o) {
  if (o->target_arg && !tc_target_from_name(o->target_arg, &o->target))
    return op_usage_error(o, "unknown target '%s' (opencl, cuda or hip)", o->target_arg);
  tc_target_info ti;
  tc_target_info_make(o->target, o->arch, &ti, NULL);
  if (o->device && !ti.device_selector) {
    if (ti.runs)
      return op_usage_error(o, "--device selects an OpenCL device; --target %s uses %s device 0",
                            ti.name, ti.api);
    return op_usage_error(o, "--device selects an OpenCL device; --target %s has none", ti.name);
  }
  if (o->arch && ti.family == TC_ARCH_NONE)
    return op_usage_error(o, "--arch applies to --target cuda and hip only");
  /* an AMD arch is checked here, a CUDA one where the kernels are
   * compiled (tc_cuda_compile) */
  if (o->arch && ti.family == TC_ARCH_GFX && !ti.arch_valid)
    return op_usage_error(o, "--arch for --target hip is an AMD GPU architecture (gfx90a, gfx940, "
                             "gfx942, gfx950), got '%s'", o->arch);
  if (o->tune && o->perf_config)
    return op_usage_error(o, "--tune and --perf-config exclude each other");
  if (o->tune_max && !o->tune) return op_usage_error(o, "--tune-max applies to --tune only");
  if (ti.build == TC_BUILD_HIPCC && o->tune) { /* an AMD GPU must be there to time on */
    tc_str m;
    tc_str_init(&m);
    int rc = CLI_OK;
    if (!tc_hip_available(&m))
      rc = op_fail(o, "--tune times the kernels on the device; --target hip cannot run them: %s",
                   tc_str_cstr(&m));
    tc_str_free(&m);
    return rc;
  }
  return CLI_OK;
}

/* The arch the kernels are built for: --arch, else the ops' default. */
static const char *build_arch(const op_opts *o) {
  return o->arch ? o->arch : tc_target_ops_default_arch(o->target);
}

int op_hip_finish(op_opts *o, int have_dev, const char *why, const char *const *sources,
                  const char *const *names, int n) {
  const char *arch = tc_tune_arch(o->target, o->arch);
  if (!arch) arch = TC_HIP_DEFAULT_ARCH;
  int compiled = 1;
  for (int i = 0; i < n; i++) {
    tc_str e;
    tc_str_init(&e);
    tc_status st = tc_hip_compile(sources[i], arch, NULL, NULL, &e);
    if (st == TC_ERR_UNSUPPORTED) {
      /* no hipcc, or it does not know the arch: the source is still there */
      if (!o->json) printf("not compiled: %s\n", tc_str_cstr(&e));
      tc_str_free(&e);
      compiled = 0;
      break;
    }
    if (st != TC_OK) {
      int rc = op_fail(o, "%s does not compile with hipcc for %s (%s): %s", names[i], arch,
                       tc_status_name(st), tc_str_cstr(&e));
      tc_str_free(&e);
      return rc;
    }
    tc_str_free(&e);
  }
  if (!o->json) {
    if (have_dev && compiled) printf("compiled for %s (hipcc)\n", arch);
    else if (compiled) printf("compiled for %s (hipcc); no AMD GPU: cannot run\n", arch);
    else if (!have_dev) printf("no AMD GPU: cannot run\n");
    fflush(stdout);
  }
  if (!have_dev && (o->verify || o->time || o->tune))
    return op_fail(o, "%s needs the kernels to run: --target hip cannot run them here (%s)",
                   o->verify ? "-V 1" : o->time ? "--time" : "--tune", why);
  return CLI_OK;
}

int op_runs(const op_opts *o) { return !o->emit || o->verify || o->time || o->tune; }

void op_tune_progress(void *ctx, const tc_tune_event *ev) {
  (void)ctx;
  if (ev->ok) {
    fprintf(stderr, "tuning %d/%d %s: %.4f ms\n", ev->index, ev->total, ev->perf_config, ev->ms);
  } else {
    const char *n = ev->note && *ev->note ? ev->note : "failed";
    fprintf(stderr, "tuning %d/%d %s: skipped: %.*s\n", ev->index, ev->total, ev->perf_config,
            (int)strcspn(n, "\n"), n);
  }
  fflush(stderr);
}

int op_find_device(const op_opts *o, op_report *r, int *runs, tc_str *why) {
  *runs = op_runs(o);
  int have_dev = tc_tune_device_name(o->target, o->device, r->device, sizeof r->device, why) == TC_OK;
  /* --target hip without an AMD GPU: the kernels are compiled (op_hip_finish) */
  if (!have_dev && tc_target_info_of(o->target).build == TC_BUILD_HIPCC) *runs = 0;
  if (!have_dev && *runs) op_fail(o, "%s", tc_str_cstr(why));
  return have_dev;
}

void op_print_device(const op_opts *o, const op_report *r, int have_dev, const char *why) {
  if (have_dev)
    printf("device: %s %s\n", tc_target_name(o->target), r->device);
  else
    printf("device: %s, none (%s)\n", tc_target_name(o->target), why);
}

tc_op_tune_options op_tune_start(op_opts *o, const op_report *r, const char *key) {
  fprintf(stderr, "tuning %s on %s (at most %d candidates)\n", key, r->device,
          o->tune_max ? o->tune_max : TC_TUNE_DEFAULT_MAX);
  fflush(stderr);
  tc_op_tune_options to = {o->tune_max, 0, 0, op_tune_progress, o};
  return to;
}

int op_tune_finish(const op_opts *o, op_report *r, tc_status st, const tc_op_tune_result *tr,
                   const char *err) {
  if (st != TC_OK) return op_fail(o, "tuning failed: %s", op_api_message(err));
  r->tuned = 1;
  r->tune.candidates = tr->candidates, r->tune.tried = tr->tried, r->tune.skipped = tr->skipped;
  r->tune.best_ms = tr->ms, r->tune.stored = tr->stored;
  r->db_path = tr->stored ? tc_xstrdup(tr->perfdb) : NULL;
  return CLI_OK;
}

void op_set_plan(const op_opts *o, op_report *r, const char *warning, const char *config,
                 const char *source, const char *detail) {
  if (*warning) fprintf(stderr, "tilec %s: warning: %s\n", o->cmd, warning);
  snprintf(r->config, sizeof r->config, "%s", config);
  r->source = source;
  snprintf(r->source_detail, sizeof r->source_detail, "%s",
           strcmp(source, "option") == 0 ? "--perf-config" : detail);
}

int op_cuda_check(const op_opts *o, const char *const *sources, const char *const *names, int n) {
  const char *arch = build_arch(o);
  for (int i = 0; i < n; i++) {
    char *ptx = NULL;
    tc_str e;
    tc_str_init(&e);
    tc_status st = tc_cuda_compile(sources[i], arch, &ptx, &e);
    free(ptx);
    if (st == TC_ERR_UNSUPPORTED) {
      if (!o->json) printf("not compiled: %s\n", tc_str_cstr(&e));
      tc_str_free(&e);
      break;
    }
    if (st != TC_OK) {
      int rc = op_fail(o, "%s does not compile with NVRTC: %s", names ? names[i] : "the kernel",
                       tc_str_cstr(&e));
      tc_str_free(&e);
      return rc;
    }
    tc_str_free(&e);
    if (!o->json && i + 1 == n) printf("compiled with NVRTC for %s\n", arch);
  }
  return CLI_OK;
}

int op_build_only(op_opts *o, int have_dev, const char *why, const char *src, const char *name) {
  tc_build_kind b = tc_target_info_of(o->target).build;
  return b == TC_BUILD_HIPCC   ? op_hip_finish(o, have_dev, why, &src, &name, 1)
         : b == TC_BUILD_NVRTC ? op_cuda_check(o, &src, NULL, 1)
                               : CLI_OK;
}

void op_set_time(const op_opts *o, op_report *r, double *times, double flops) {
  r->ms = op_median(times, o->iters);
  free(times);
  r->gflops = r->ms > 0 ? flops / (r->ms * 1e6) : NAN;
  r->timed = 1;
}

double op_median(double *t, int n) {
  for (int a = 1; a < n; a++) /* insertion sort */
    for (int b = a; b > 0 && t[b] < t[b - 1]; b--) {
      double x = t[b];
      t[b] = t[b - 1], t[b - 1] = x;
    }
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

void op_print_run(const op_opts *o, const op_report *r, int with_max_abs, int64_t elems) {
  if (r->timed)
    printf("time: %.4f ms (median of %d run%s), %.2f GFLOP/s\n", r->ms, o->iters,
           o->iters == 1 ? "" : "s", r->gflops);
  else
    printf("ran: ok (first run %.4f ms, warm-up included; --time gives the median)\n", r->first_ms);
  if (r->verified) {
    printf("verify: %s (max error ", r->pass ? "PASS" : "FAIL");
    if (with_max_abs) printf("%.3g, ", r->max_abs);
    if (r->pass && r->checked && r->checked < elems)
      printf("%.3g of the bound; %lld of %lld elements, one in each %lldx%lld cell)\n", r->worst,
             (long long)r->checked, (long long)elems, (long long)r->check_cell,
             (long long)r->check_cell);
    else if (r->pass)
      printf("%.3g of the bound; %lld elements)\n", r->worst, (long long)elems);
    else
      printf("%.3g of the bound; %s)\n", r->worst, r->verify_msg);
  }
  fflush(stdout);
}

const char *op_api_message(const char *err) {
  if (strncmp(err, "tc_", 3) != 0) return err;
  size_t n = strcspn(err, ": ");
  return err[n] == ':' && err[n + 1] == ' ' ? err + n + 2 : err;
}


void op_emit_kernel(tc_str *out, int index, int count, const op_kernel *k, const char *extra) {
  tc_str_printf(out, "/* ---- kernel %d of %d: %s\n", index, count, k->name);
  tc_str_printf(out, " * launch: grid [%lld, %lld, %lld] of blocks [%lld, %lld, %lld], shared memory %lld bytes\n",
                (long long)k->grid[0], (long long)k->grid[1], (long long)k->grid[2],
                (long long)k->block[0], (long long)k->block[1], (long long)k->block[2],
                (long long)k->smem_bytes);
  for (const char *p = extra ? extra : ""; *p;) {
    size_t len = strcspn(p, "\n");
    tc_str_cat(out, " * ");
    /* never close the comment early */
    for (size_t i = 0; i < len; i++) {
      if (p[i] == '*' && i + 1 < len && p[i + 1] == '/')
        tc_str_cat(out, "* ");
      else
        tc_str_catn(out, p + i, 1);
    }
    tc_str_cat(out, "\n");
    p += len;
    if (*p == '\n') p++;
  }
  tc_str_cat(out, " */\n");
  tc_str_cat(out, k->source ? k->source : "");
  if (out->len && out->buf[out->len - 1] != '\n') tc_str_cat(out, "\n");
  tc_str_cat(out, "\n");
}

int op_write_file(const op_opts *o, const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return op_fail(o, "cannot write %s: %s", path, strerror(errno));
  size_t n = strlen(text);
  int bad = fwrite(text, 1, n, f) != n;
  if (fclose(f) != 0) bad = 1;
  if (bad) return op_fail(o, "cannot write %s: %s", path, strerror(errno));
  return CLI_OK;
}

void op_json_str(tc_str *j, const char *s) {
  tc_str_cat(j, "\"");
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    if (*p == '"' || *p == '\\')
      tc_str_printf(j, "\\%c", *p);
    else if (*p == '\n')
      tc_str_cat(j, "\\n");
    else if (*p == '\t')
      tc_str_cat(j, "\\t");
    else if (*p < 0x20)
      tc_str_printf(j, "\\u%04x", *p);
    else
      tc_str_catn(j, (const char *)p, 1);
  }
  tc_str_cat(j, "\"");
}

void op_json_size_vars(tc_str *j, const tc_kernel *k) {
  int n = tc_kernel_size_var_count(k);
  for (int i = 0; i < n; i++) {
    int64_t div, bound;
    const char *name = tc_kernel_size_var_at(k, i, &div, &bound);
    char one[128];
    snprintf(one, sizeof one, "{\"name\": \"%s\", \"divisor\": %lld, \"bound\": %lld}", name,
             (long long)div, (long long)bound);
    if (i == 0) tc_str_printf(j, ", \"size_variable\": %s, \"size_variables\": [", one);
    tc_str_printf(j, "%s%s", i ? ", " : "", one);
  }
  if (n) tc_str_cat(j, "]");
}

void op_json_num(tc_str *j, double v) {
  if (isnan(v) || isinf(v))
    tc_str_cat(j, "null");
  else
    tc_str_printf(j, "%.6g", v);
}

void op_json_device(tc_str *j, const op_opts *o, const op_report *r) {
  tc_str_printf(j, ", \"target\": \"%s\", \"device\": ", tc_target_name(o->target));
  if (r->device[0]) op_json_str(j, r->device); else tc_str_cat(j, "null");
}

void op_json_run(tc_str *j, const op_opts *o, const op_report *r, int with_max_abs) {
  tc_str_printf(j, ", \"ran\": %s, \"verify\": ", r->ran ? "true" : "false");
  if (r->verified) {
    tc_str_printf(j, "{\"result\": \"%s\", ", r->pass ? "PASS" : "FAIL");
    if (with_max_abs) {
      tc_str_cat(j, "\"max_abs_error\": ");
      op_json_num(j, r->max_abs);
      tc_str_cat(j, ", ");
    }
    tc_str_cat(j, "\"max_error_over_bound\": ");
    op_json_num(j, r->worst);
    tc_str_printf(j, ", \"bad_elements\": %lld, ", (long long)r->bad);
    if (r->checked) tc_str_printf(j, "\"checked_elements\": %lld, ", (long long)r->checked);
    tc_str_cat(j, "\"message\": ");
    op_json_str(j, r->verify_msg);
    tc_str_cat(j, "}");
  } else {
    tc_str_cat(j, "null");
  }
  tc_str_cat(j, ", \"time\": ");
  if (r->timed) {
    tc_str_cat(j, "{\"ms\": ");
    op_json_num(j, r->ms);
    tc_str_printf(j, ", \"runs\": %d, \"gflops\": ", o->iters);
    op_json_num(j, r->gflops);
    tc_str_cat(j, "}");
  } else {
    tc_str_cat(j, "null");
  }
}

void op_json_tune(tc_str *j, const op_report *r) {
  tc_str_cat(j, ", \"tune\": ");
  if (r->tuned) {
    tc_str_printf(j, "{\"candidates\": %d, \"tried\": %d, \"skipped\": %d, \"best_ms\": ",
                  r->tune.candidates, r->tune.tried, r->tune.skipped);
    op_json_num(j, r->tune.best_ms);
    tc_str_printf(j, ", \"stored\": %s, \"perfdb\": ", r->tune.stored ? "true" : "false");
    if (r->db_path) op_json_str(j, r->db_path); else tc_str_cat(j, "null");
    tc_str_cat(j, "}");
  } else {
    tc_str_cat(j, "null");
  }
}

void op_json_failure(const op_opts *o, const char *key) {
  tc_str j;
  tc_str_init(&j);
  tc_str_printf(&j, "{\"command\": \"%s\", \"problem\": ", o->cmd);
  if (key && *key) {
    tc_str_cat(&j, "{\"string\": ");
    op_json_str(&j, key);
    tc_str_cat(&j, "}");
  } else {
    tc_str_cat(&j, "null");
  }
  tc_str_printf(&j, ", \"target\": \"%s\", \"kernels\": [], \"ran\": false",
                tc_target_name(o->target));
  op_json_end(&j, 0);
}

void op_json_end(tc_str *j, int ok) {
  if (!ok && last_error[0]) {
    tc_str_cat(j, ", \"error\": ");
    op_json_str(j, last_error);
  }
  tc_str_printf(j, ", \"ok\": %s}\n", ok ? "true" : "false");
  fputs(tc_str_cstr(j), stdout);
  fflush(stdout);
  tc_str_free(j);
}
