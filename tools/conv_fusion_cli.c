/* conv_fusion_cli.c - `tilec conv2d --path fusion [--epilogue LIST]
 * [--tiles ...]`: the convolution's GEMMs as fusions whose matmul reads
 * the tensors through coordinate-transform views (tc_conv2d_fusion), each
 * scheduled by tc_schedule_auto (or tc_schedule_matmul with --tiles) and
 * compiled like any fusion; the run and the check
 * go through tc_conv2d_run_fusion and tc_conv2d_verify_fusion (the
 * plain-C reference in double, plus the bias and the activation). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/base/base.h"
#include "../src/ops/tuner.h"
#include "../src/target/target.h"
#include "cli.h"
#include "conv_cli.h"
#include "conv_fusion_cli.h"
#include "gemm_fusion.h"

void conv_fusion_opts_init(conv_fusion_opts *f) {
  memset(f, 0, sizeof *f);
  f->act = -1;
}

void conv_fusion_usage(FILE *out) {
  fputs("  --path template|fusion  template (default): the GEMM kernels of --perf-config, the\n"
        "                          heuristic or the perf DB; fusion: each GEMM a fusion whose matmul\n"
        "                          reads the tensors through the coordinate-transform views, made\n"
        "                          by the compiler's matmul schedule (one kernel per GEMM; f32,\n"
        "                          f16, bf16; no --perf-config or --tune)\n"
        "  --epilogue LIST         with --path fusion and -F 1: bias (a bias per output channel)\n"
        "                          and/or one of relu, gelu, silu after it, in the same kernel\n"
        "                          (e.g. bias,relu); -V 1 checks against the reference with them\n"
        "  --tiles BM,BN,BK,TM,TN  with --path fusion: each GEMM's matmul schedule by these tiles\n"
        "                          (as tilec gemm --tiles; forward: M the output channels, N the\n"
        "                          output pixels; each kernel's line names M x N x K) instead of\n"
        "                          the scheduler's choice\n"
        "  --macro fma|mma|mfma|mfma16|wgmma, --stages N\n"
        "                          with --tiles: the op type and the rings, as for tilec gemm\n",
        out);
}

static int parse_epilogue(op_opts *o, conv_fusion_opts *f, const char *v) {
  f->epilogue_given = 1;
  const char *s = v;
  while (*s) {
    size_t n = strcspn(s, ",");
    char item[16] = "";
    if (n == 0 || n >= sizeof item) return op_usage_error(o, "--epilogue: bad list '%s'", v);
    memcpy(item, s, n);
    int act = !strcmp(item, "relu") ? TC_RELU : !strcmp(item, "gelu") ? TC_GELU
              : !strcmp(item, "silu") ? TC_SILU : -1;
    if (!strcmp(item, "bias")) {
      if (f->bias || f->act >= 0)
        return op_usage_error(o, "--epilogue: bias comes once, before the activation");
      f->bias = 1;
    } else if (act >= 0) {
      if (f->act >= 0) return op_usage_error(o, "--epilogue: one activation at most");
      f->act = act;
    } else {
      return op_usage_error(o, "--epilogue: unknown op '%s' (bias, relu, gelu, silu)", item);
    }
    s += n;
    if (*s == ',') s++;
  }
  if (!f->bias && f->act < 0) return op_usage_error(o, "--epilogue: empty list");
  return CLI_OK;
}

int conv_fusion_option(op_opts *o, conv_fusion_opts *f, int argc, char **argv, int *i, int *rc) {
  const char *v;
  *rc = CLI_OK;
  if ((v = op_value(o, argc, argv, i, "--path", rc))) {
    if (!strcmp(v, "fusion")) f->fusion = 1;
    else if (!strcmp(v, "template")) f->fusion = 0;
    else *rc = op_usage_error(o, "--path must be template or fusion, got '%s'", v);
    return 1;
  }
  if (*rc != CLI_OK) return 1;
  if ((v = op_value(o, argc, argv, i, "--epilogue", rc))) {
    *rc = parse_epilogue(o, f, v);
    return 1;
  }
  if (*rc != CLI_OK) return 1;
  return matmul_tiles_option(o, f->tiles, &f->macro, &f->stages, argc, argv, i, rc);
}

int conv_fusion_check(op_opts *o, const conv_fusion_opts *f) {
  if (f->tiles[0] && !f->fusion) return op_usage_error(o, "--tiles needs --path fusion");
  if ((f->macro || f->stages) && !f->tiles[0])
    return op_usage_error(o, "--%s needs --tiles (and --path fusion)", f->macro ? "macro" : "stages");
  return CLI_OK;
}

/* The tiles --tiles, --macro and --stages give (NULL: the scheduler's). */
static const tc_matmul_tiles *given_tiles(const conv_fusion_opts *f, tc_matmul_tiles *tl) {
  if (!f->tiles[0]) return NULL;
  *tl = (tc_matmul_tiles){f->tiles[0], f->tiles[1], f->tiles[2], f->tiles[3], f->tiles[4], f->macro,
                          f->stages};
  return tl;
}

static const char *buf_name(tc_conv2d_tensor t) {
  return t == TC_CONV2D_INPUT ? "input" : t == TC_CONV2D_FILTER ? "filter"
         : t == TC_CONV2D_OUTPUT ? "output" : "bias";
}

/* The kernels of the fusions, compiled for o's target: sources and names
 * (the caller frees the kernels), printed as "path: fusion, N kernels:
 * ...", with each one's schedule note; --emit writes them. */
static int compile_all(const op_opts *o, tc_conv2d *c, const tc_conv2d_epilogue *ep,
                       const tc_matmul_tiles *tl, tc_kernel ***kernels, int *count, tc_str *json) {
  int n = 0;
  tc_conv2d_tensor args[4];
  int nargs;
  tc_fusion *f = tc_conv2d_fusion(c, ep, 0, args, &nargs, &n);
  *kernels = tc_xcalloc((size_t)n + 1, sizeof **kernels);
  *count = 0;
  if (!f) {
    if (n == 0 && !tc_conv2d_error(c)[0]) return CLI_OK; /* no GEMM: only the zeroing */
    return op_invalid(o, "%s", op_api_message(tc_conv2d_error(c)));
  }
  tc_str text;
  tc_str_init(&text);
  tc_str_printf(&text, "/* tilec conv2d --path fusion: %s\n * %d kernel%s for %s, run in this "
                "order */\n\n", tc_conv2d_problem_string(c), n, n == 1 ? "" : "s",
                tc_target_name(o->target));
  if (!o->json) printf("path: fusion, %d kernel%s (the compiler's matmul schedule)\n", n, n == 1 ? "" : "s");
  int rc = CLI_OK;
  for (int i = 0; i < n && rc == CLI_OK; i++) {
    if (i) f = tc_conv2d_fusion(c, ep, i, args, &nargs, NULL);
    if (!f) {
      rc = op_fail(o, "%s", op_api_message(tc_conv2d_error(c)));
      break;
    }
    char name[32];
    snprintf(name, sizeof name, "conv_gemm%d", i);
    tc_compile_options co = {o->target, o->arch, name};
    tc_status st = tl ? tc_schedule_matmul(f, o->target, o->arch, tl) : tc_schedule_auto(f, o->target, o->arch);
    tc_kernel *k = st ? NULL : tc_compile(f, &co, &st);
    if (!k) {
      rc = op_fail(o, "cannot compile GEMM %d of the convolution (%s): %s", i, tc_status_name(st),
                   tc_fusion_error(f));
      tc_fusion_free(f);
      break;
    }
    (*kernels)[(*count)++] = k;
    char extra[900];
    int len = snprintf(extra, sizeof extra, "%s\narguments:", tc_fusion_schedule_note(f));
    for (int a = 0; a < nargs && len > 0 && (size_t)len < sizeof extra; a++)
      len += snprintf(extra + len, sizeof extra - (size_t)len, "%s %s", a ? "," : "", buf_name(args[a]));
    if (!o->json) printf("kernel %s: %s\n", name, tc_fusion_schedule_note(f));
    op_kernel ok = {name, tc_kernel_source(k), {0}, {0}, tc_kernel_smem_bytes(k)};
    tc_kernel_launch_dims(k, ok.grid, ok.block);
    tc_str_cat(json, i ? ", {\"name\": " : "{\"name\": ");
    op_json_str(json, name);
    tc_str_printf(json, ", \"grid\": [%lld, %lld, %lld], \"block\": [%lld, %lld, %lld], "
                  "\"smem_bytes\": %lld, \"args\": [", (long long)ok.grid[0], (long long)ok.grid[1],
                  (long long)ok.grid[2], (long long)ok.block[0], (long long)ok.block[1],
                  (long long)ok.block[2], (long long)ok.smem_bytes);
    for (int a = 0; a < nargs; a++) {
      if (a) tc_str_cat(json, ", ");
      op_json_str(json, buf_name(args[a]));
    }
    tc_str_cat(json, "], \"schedule\": ");
    op_json_str(json, tc_fusion_schedule_note(f));
    tc_str_cat(json, "}");
    op_emit_kernel(&text, i + 1, n, &ok, extra);
    tc_fusion_free(f);
  }
  if (rc == CLI_OK && o->emit) {
    rc = op_write_file(o, o->emit, tc_str_cstr(&text));
    if (rc == CLI_OK && !o->json) printf("emit: %d kernel%s written to %s\n", n, n == 1 ? "" : "s", o->emit);
  }
  tc_str_free(&text);
  fflush(stdout);
  return rc;
}

/* Runs on pseudo-random inputs (the written tensor NaN first, so that an
 * element no kernel writes cannot pass) and verifies with -V 1. */
static int execute(const op_opts *o, tc_conv2d *c, const tc_conv_problem *p,
                   tc_conv2d_epilogue *ep, const tc_matmul_tiles *tl, int64_t ho, int64_t wo,
                   op_report *r) {
  double *times = o->time ? tc_xcalloc((size_t)o->iters, sizeof *times) : NULL;
  int64_t elems[4] = {tc_conv_input_elems(p), tc_conv_filter_elems(p), tc_conv_output_elems(p), p->k};
  int wb = (int)tc_conv_written_buf(p->dir);
  size_t esize = tc_dtype_size(p->dtype);
  uint64_t seed = 0x5eed0c0471ull;
  void *buf[4] = {NULL, NULL, NULL, NULL};
  int rc = CLI_FAIL;
  TC_STR_LOCAL(err); /* (before the first goto: clang refuses a jump past a cleanup variable) */
  for (int t = 0; t < 4; t++) {
    if (!(buf[t] = calloc((size_t)elems[t] ? (size_t)elems[t] : 1, esize))) {
      op_fail(o, "cannot allocate %lld bytes", (long long)elems[t] * (long long)esize);
      goto out;
    }
    tc_tune_fill(buf[t], (size_t)elems[t], p->dtype, t == wb ? NULL : &seed);
  }
  if (ep->has_activation || ep->bias) ep->bias = ep->bias ? buf[3] : NULL;
  /* the first run (verified), then with --time o->iters timed runs of
   * each kernel */
  tc_conv_epi epi = {ep->bias != NULL, ep->has_activation ? (int)ep->activation : -1};
  tc_status st = tc_conv_fusion_run(p, &epi, o->target, o->arch, tl, o->device, buf[0], buf[1], buf[2],
                                    buf[3], &r->first_ms, times ? o->iters : 0, times, NULL, &err);
  if (st != TC_OK) {
    op_fail(o, "the kernels failed (%s): %s", tc_status_name(st), tc_str_cstr(&err));
    goto out;
  }
  r->ran = 1;
  if (times) {
    op_set_time(o, r, times, 2.0 * (double)p->n * (double)p->k * (double)(p->c / p->groups) *
                                 (double)p->y * (double)p->x * (double)ho * (double)wo);
    times = NULL;
  }
  if (o->verify) {
    r->verified = 1;
    r->bad = tc_conv2d_verify_fusion(c, ep, buf[0], buf[1], buf[2], &r->worst);
    r->pass = r->bad == 0;
    snprintf(r->verify_msg, sizeof r->verify_msg, "%s", op_api_message(tc_conv2d_error(c)));
  }
  if (!o->json) op_print_run(o, r, 0, elems[wb]);
  rc = !r->verified || r->pass ? CLI_OK : CLI_FAIL;
out:
  free(times);
  for (int t = 0; t < 4; t++) free(buf[t]);
  return rc;
}

int conv_fusion_cmd(op_opts *o, const conv_fusion_opts *f, const tc_conv2d_desc *d,
                    const tc_conv_problem *p) {
  if (o->tune || o->perf_config)
    return op_usage_error(o, "--path fusion takes no %s: the matmul scheduler chooses the tiles",
                          o->tune ? "--tune" : "--perf-config");
  if ((f->bias || f->act >= 0) && p->dir != TC_CONV_FWD)
    return op_usage_error(o, "--epilogue applies to forward convolutions (-F 1)");
  tc_op_options opt = {o->target, o->device, o->arch, NULL};
  tc_conv2d *c = tc_conv2d_new(d, &opt);
  tc_conv2d_epilogue ep = {f->bias ? (const void *)"" : NULL, f->act >= 0,
                           f->act >= 0 ? (tc_unary_op)f->act : TC_RELU};
  /* the output size from the geometry, which bf16 shares with f16 */
  tc_conv_problem q = *p;
  if (q.dtype == TC_BF16) q.dtype = TC_F16;
  int64_t ho = 0, wo = 0;
  TC_STR_LOCAL(err);
  if (tc_conv_check(&q, &ho, &wo, &err)) {
    int rc = op_invalid(o, "%s", tc_str_cstr(&err));
    if (o->json) op_json_failure(o, tc_conv2d_problem_string(c));
    tc_conv2d_free(c);
    return rc;
  }
  op_report r;
  memset(&r, 0, sizeof r);
  TC_STR_LOCAL(why);
  int runs, have_dev = op_find_device(o, &r, &runs, &why);
  int rc = CLI_FAIL;
  tc_kernel **ks = NULL;
  int nk = 0;
  TC_STR_LOCAL(kjson);
  char epi[32];
  snprintf(epi, sizeof epi, "%s%s%s", f->bias ? "bias" : "", f->bias && f->act >= 0 ? "," : "",
           f->act == TC_RELU ? "relu" : f->act == TC_GELU ? "gelu" : f->act == TC_SILU ? "silu" : "");
  if (!have_dev && runs) goto out;
  if (!o->json) {
    printf("problem: %s\n", tc_conv2d_problem_string(c));
    printf("direction: %s, output %lld x %lld x %lld x %lld (Ho %lld, Wo %lld)\n",
           tc_conv_dir_name(p->dir), (long long)p->n, (long long)p->k, (long long)ho, (long long)wo,
           (long long)ho, (long long)wo);
    op_print_device(o, &r, have_dev, tc_str_cstr(&why));
    if (epi[0])
      printf("epilogue: %s%s%s, in the kernel\n", f->bias ? "bias" : "", f->bias && f->act >= 0 ? " + " : "",
             epi + (f->bias ? 4 + (f->act >= 0) : 0));
    fflush(stdout);
  }
  tc_matmul_tiles tiles;
  const tc_matmul_tiles *tl = given_tiles(f, &tiles);
  if ((rc = compile_all(o, c, &ep, tl, &ks, &nk, &kjson)) != CLI_OK) goto out;
  if (runs) {
    rc = execute(o, c, p, &ep, tl, ho, wo, &r);
  } else {
    const char **srcs = tc_xcalloc((size_t)nk + 1, sizeof *srcs), **names = tc_xcalloc((size_t)nk + 1, sizeof *names);
    for (int i = 0; i < nk; i++) srcs[i] = tc_kernel_source(ks[i]), names[i] = tc_kernel_name(ks[i]);
    tc_build_kind b = tc_target_info_of(o->target).build;
    rc = b == TC_BUILD_HIPCC   ? op_hip_finish(o, have_dev, tc_str_cstr(&why), srcs, names, nk)
         : b == TC_BUILD_NVRTC ? op_cuda_check(o, srcs, names, nk)
                               : CLI_OK;
    free(srcs), free(names);
  }
out:
  if (o->json) { /* as the template path's object, with the path, the epilogue and each
                    kernel's schedule in place of the perf config */
    tc_str j;
    tc_str_init(&j);
    tc_str_cat(&j, "{\"command\": \"conv2d\", ");
    conv_json_problem(&j, p, tc_conv2d_problem_string(c), ho, wo);
    op_json_device(&j, o, &r);
    tc_str_cat(&j, ", \"path\": \"fusion\", \"epilogue\": ");
    op_json_str(&j, epi);
    tc_str_printf(&j, ", \"kernels\": [%s]", tc_str_cstr(&kjson));
    op_json_run(&j, o, &r, 0);
    op_json_end(&j, rc == CLI_OK);
  }
  for (int i = 0; i < nk; i++) tc_kernel_free(ks[i]);
  free(ks);
  free((char *)r.db_path);
  tc_conv2d_free(c);
  return rc;
}
