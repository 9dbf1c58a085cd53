/* gemm_tile.c - `tilec gemm --kernel tile` (gemm_tile.h): builds the
 * tile-IR GEMM (src/tile/tile_gemm.h), optionally the MoE gather, runs its
 * passes (aggregate-load, dce), prints their reports (--passes) and the IR
 * (--print-ir), emits the kernel for the target and runs, verifies and
 * times it like the gridwise kernel. */
#include "gemm_tile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../src/runtime/runtime.h"
#include "../src/target/target.h"
#include "../src/tile/passes.h"
#include "../src/tile/tile_gemm.h"
#include "../src/ops/tuner.h"
#include "cli.h"

void gemm_tile_opts_init(gemm_tile_opts *t) {
  memset(t, 0, sizeof *t);
  t->tokens = t->valid = -1;
}

void gemm_tile_usage(FILE *out) {
  fputs("  --kernel gridwise|tile  gridwise (default): the gridwise GEMM above; tile: the\n"
        "                          tile-IR GEMM (Triton-like, one program per C tile) and its\n"
        "                          passes (aggregate-load, dce); the options below need it\n"
        "  --passes                print each pass: applied, with what it did, or not\n"
        "                          applied, with why\n"
        "  --no-aggregate          turn the aggregate-load pass off\n"
        "  --smem-limit BYTES      shared memory the kernel may use (default 65536); A is\n"
        "                          loaded in chunks when it does not fit next to B's tile\n"
        "  --moe                   MoE gather: the rows of A ([tokens, K]) are gathered\n"
        "                          through M sorted token ids; ids >= --valid are masked\n"
        "                          (their rows of C are 0)\n"
        "  --tokens T              --moe: rows of A (default M)\n"
        "  --valid V               --moe: num_valid_tokens (default T)\n"
        "  --tile-block BM,BN,BK   the tile (default 32,32,16)\n"
        "  --dynamic-k             K as a run-time argument (the pass then does not apply)\n"
        "  --mask-k                mask the loads along K (automatic when BK does not divide K)\n"
        "  --mask-m                mask A's rows >= M (instead of wrapping them)\n"
        "  --a-form canonical|k-first|combined\n"
        "                          how A's address is written (only canonical,\n"
        "                          a_ptr + offs_m*stride_m + offs_k*stride_k, is hoisted)\n"
        "  --print-ir              print the tile IR after the passes\n",
        out);
}

static int flag(gemm_tile_opts *t, const char *name, int *dst) {
  if (!t->first) t->first = name;
  *dst = 1;
  return 1;
}

int gemm_tile_option(op_opts *o, gemm_tile_opts *t, int argc, char **argv, int *i, int *rc) {
  const char *a = argv[*i], *v;
  *rc = CLI_OK;
  if (strcmp(a, "--passes") == 0) return flag(t, a, &t->passes);
  if (strcmp(a, "--print-ir") == 0) return flag(t, a, &t->print_ir);
  if (strcmp(a, "--no-aggregate") == 0) return flag(t, a, &t->no_aggregate);
  if (strcmp(a, "--moe") == 0) return flag(t, a, &t->moe);
  if (strcmp(a, "--dynamic-k") == 0) return flag(t, a, &t->dynamic_k);
  if (strcmp(a, "--mask-k") == 0) return flag(t, a, &t->mask_k);
  if (strcmp(a, "--mask-m") == 0) return flag(t, a, &t->mask_m);
#define VALUE(name) ((v = op_value(o, argc, argv, i, name, rc)) != NULL || *rc != CLI_OK)
  if (VALUE("--kernel")) {
    if (*rc != CLI_OK) return 1;
    if (strcmp(v, "tile") == 0)
      t->tile = 1;
    else if (strcmp(v, "gridwise") == 0)
      t->tile = 0;
    else
      *rc = op_usage_error(o, "unknown kernel '%s' (gridwise or tile)", v);
    return 1;
  }
  if (VALUE("--tokens") || VALUE("--valid") || VALUE("--smem-limit")) {
    if (*rc != CLI_OK) return 1;
    if (!t->first) t->first = a;
    const char *name = strncmp(a, "--tokens", 8) == 0 ? "--tokens"
                       : strncmp(a, "--valid", 7) == 0 ? "--valid" : "--smem-limit";
    int64_t *dst = name[2] == 't' ? &t->tokens : name[2] == 'v' ? &t->valid : &t->smem_limit;
    *rc = op_parse_int(o, name, v, name[2] == 'v' ? 0 : 1, INT32_MAX, dst);
    return 1;
  }
  if (VALUE("--tile-block")) {
    if (*rc != CLI_OK) return 1;
    if (!t->first) t->first = "--tile-block";
    char extra;
    long long b[3];
    if (sscanf(v, "%lld,%lld,%lld%c", &b[0], &b[1], &b[2], &extra) != 3 &&
        sscanf(v, "%lldx%lldx%lld%c", &b[0], &b[1], &b[2], &extra) != 3) {
      *rc = op_usage_error(o, "--tile-block takes BM,BN,BK (e.g. 32,32,16), got '%s'", v);
      return 1;
    }
    for (int j = 0; j < 3; j++) {
      if (b[j] < 1 || b[j] > 256) {
        *rc = op_usage_error(o, "--tile-block: each block size must be between 1 and 256, got '%s'", v);
        return 1;
      }
      t->block[j] = b[j];
    }
    return 1;
  }
  if (VALUE("--a-form")) {
    if (*rc != CLI_OK) return 1;
    if (!t->first) t->first = "--a-form";
    if (strcmp(v, "canonical") == 0)
      t->a_form = TC_TILE_A_CANONICAL;
    else if (strcmp(v, "k-first") == 0)
      t->a_form = TC_TILE_A_K_FIRST;
    else if (strcmp(v, "combined") == 0)
      t->a_form = TC_TILE_A_COMBINED;
    else
      *rc = op_usage_error(o, "unknown --a-form '%s' (canonical, k-first or combined)", v);
    return 1;
  }
#undef VALUE
  return 0;
}

static void print_json(const op_opts *o, const char *key, const tc_tile_gemm_desc *d,
                       const tc_tile_kernel *k, const tc_tile_emitted *em, const op_report *r,
                       int ok) {
  tc_str j;
  tc_str_init(&j);
  tc_str_cat(&j, "{\"command\": \"gemm\", \"kernel\": \"tile\", \"problem\": {\"string\": ");
  op_json_str(&j, key);
  tc_str_printf(&j, ", \"m\": %lld, \"n\": %lld, \"k\": %lld, \"transA\": %d, \"transB\": %d, "
                "\"dtype\": \"%s\", \"block\": [%d, %d, %d], \"moe\": ",
                (long long)d->m, (long long)d->n, (long long)d->k, d->trans_a, d->trans_b,
                tc_dtype_name(d->dtype), d->block_m, d->block_n, d->block_k);
  if (d->moe)
    tc_str_printf(&j, "{\"tokens\": %lld, \"valid\": %lld}}", (long long)d->tokens,
                  (long long)d->num_valid);
  else
    tc_str_cat(&j, "null}");
  op_json_device(&j, o, r);
  tc_str_cat(&j, ", \"kernels\": [{\"name\": ");
  op_json_str(&j, em->name);
  tc_str_printf(&j, ", \"grid\": [%zu, %zu, %zu], \"block\": [%zu, %zu, %zu], \"smem_bytes\": %lld}]",
                em->grid[0], em->grid[1], em->grid[2], em->block[0], em->block[1], em->block[2],
                (long long)em->smem_bytes);
  tc_str_cat(&j, ", \"passes\": [");
  for (int i = 0; i < tc_tile_num_reports(k); i++) {
    const tc_tile_report *p = tc_tile_get_report(k, i);
    tc_str_cat(&j, i ? ", {\"name\": " : "{\"name\": ");
    op_json_str(&j, p->pass);
    tc_str_printf(&j, ", \"applied\": %s, \"detail\": ", p->applied ? "true" : "false");
    op_json_str(&j, p->detail);
    tc_str_cat(&j, "}");
  }
  tc_str_cat(&j, "]");
  op_json_run(&j, o, r, 1);
  op_json_end(&j, ok);
}

/* Checks the options --kernel tile takes and fills d; CLI_OK or the
 * usage / invalid-problem code already reported. */
static int tile_desc(op_opts *o, const gemm_tile_opts *t, int64_t g, int64_t m, int64_t n,
                     int64_t k, int ta, int tb, tc_tile_gemm_desc *d) {
  if (g != 1) return op_usage_error(o, "-g applies to the gridwise kernel (--kernel tile runs one GEMM)");
  if (o->tune || o->perf_config)
    return op_usage_error(o, "%s applies to the gridwise kernel, not --kernel tile",
                          o->tune ? "--tune" : "--perf-config");
  if (!t->moe && (t->tokens >= 0 || t->valid >= 0))
    return op_usage_error(o, "%s applies to --moe only", t->tokens >= 0 ? "--tokens" : "--valid");
  if (o->dtype != TC_F32 && o->dtype != TC_F16)
    return op_usage_error(o, "--kernel tile takes -t f32 or f16");
  tc_tile_gemm_desc_init(d, m, n, k);
  d->trans_a = ta, d->trans_b = tb, d->dtype = o->dtype;
  d->block_m = (int)t->block[0], d->block_n = (int)t->block[1], d->block_k = (int)t->block[2];
  d->dynamic_k = t->dynamic_k, d->mask_k = t->mask_k, d->mask_m = t->mask_m;
  d->a_form = (tc_tile_a_form)t->a_form;
  d->moe = t->moe;
  if (t->moe) d->tokens = t->tokens >= 0 ? t->tokens : 0, d->num_valid = t->valid;
  TC_STR_LOCAL(why);
  if (tc_tile_gemm_resolve(d, &why) != 0) return op_invalid(o, "%s", tc_str_cstr(&why));
  return CLI_OK;
}

/* The problem string: the command line that makes this kernel again. */
static void problem_key(const tc_tile_gemm_desc *d, tc_str *key) {
  tc_str_printf(key, "gemm --kernel tile -M %lld -N %lld -K %lld --transA %d --transB %d -t %s",
                (long long)d->m, (long long)d->n, (long long)d->k, d->trans_a, d->trans_b,
                tc_dtype_name(d->dtype));
  if (d->moe)
    tc_str_printf(key, " --moe --tokens %lld --valid %lld", (long long)d->tokens,
                  (long long)d->num_valid);
  tc_str_printf(key, " --tile-block %d,%d,%d", d->block_m, d->block_n, d->block_k);
}

/* The text report before the run: problem, device, kernel, and the
 * passes and IR when asked for. */
static void print_kernel(const op_opts *o, const gemm_tile_opts *t, const char *key,
                         const tc_tile_kernel *kern, const tc_tile_emitted *em, op_report *r,
                         int have_dev, const char *why) {
  printf("problem: %s\n", key);
  op_print_device(o, r, have_dev, why);
  printf("kernel: %s (tile IR), grid [%zu, %zu, %zu] of blocks [%zu, %zu, %zu], shared memory "
         "%lld bytes\n", em->name, em->grid[0], em->grid[1], em->grid[2], em->block[0],
         em->block[1], em->block[2], (long long)em->smem_bytes);
  tc_str p;
  tc_str_init(&p);
  if (t->passes) {
    tc_tile_print_reports(&p, kern);
    printf("passes:\n%s", tc_str_cstr(&p));
    tc_str_clear(&p);
  }
  if (t->print_ir) {
    tc_tile_print(&p, kern);
    printf("%s", tc_str_cstr(&p));
  }
  tc_str_free(&p);
  fflush(stdout);
}

/* --emit FILE: the kernel with its passes and arguments. */
static int emit_file(op_opts *o, const char *key, const tc_tile_kernel *kern,
                     const tc_tile_emitted *em) {
  tc_str text, extra;
  tc_str_init(&text);
  tc_str_init(&extra);
  tc_str_printf(&text, "/* tilec gemm: %s, for %s */\n\n", key, tc_target_name(o->target));
  tc_str_cat(&extra, "passes:\n");
  tc_tile_print_reports(&extra, kern);
  tc_str_cat(&extra, "arguments:");
  for (int i = 0; i < em->nparams; i++) tc_str_printf(&extra, "%s %s", i ? "," : "", em->params[i].name);
  if (em->nint_args) {
    tc_str_cat(&extra, "; tc_args:");
    for (int i = 0; i < em->nint_args; i++) tc_str_printf(&extra, "%s %s", i ? "," : "", em->int_args[i]);
  }
  op_kernel gk = {em->name, em->source, {0}, {0}, em->smem_bytes};
  for (int i = 0; i < 3; i++) gk.grid[i] = (int64_t)em->grid[i], gk.block[i] = (int64_t)em->block[i];
  op_emit_kernel(&text, 1, 1, &gk, tc_str_cstr(&extra));
  int rc = op_write_file(o, o->emit, tc_str_cstr(&text));
  tc_str_free(&text);
  tc_str_free(&extra);
  if (rc == CLI_OK && !o->json) printf("emit: 1 kernel written to %s\n", o->emit);
  return rc;
}

/* Makes the data, runs the kernel (timed with --time), checks C against
 * the reference with -V 1 and prints the result; fills r. */
static int run_verify(op_opts *o, const tc_tile_gemm_desc *d, const tc_tile_emitted *em,
                      op_report *r) {
  int rc = CLI_FAIL;
  tc_cl *cl = NULL;
  void *host[3] = {NULL, NULL, NULL};
  int32_t *ids = NULL;
  double *want = NULL, *bound = NULL, *tm = NULL;
  tc_str e;
  tc_str_init(&e);
  size_t es = o->dtype == TC_F16 ? 2 : 4;
  size_t elems[3] = {tc_tile_gemm_elems(d, 'A'), tc_tile_gemm_elems(d, 'B'),
                     tc_tile_gemm_elems(d, 'C')};
  uint64_t seed = 0x5eed0e11ull;
  for (int i = 0; i < 3; i++) {
    host[i] = calloc(elems[i], es);
    if (!host[i]) {
      op_fail(o, "cannot allocate %zu bytes for %c", elems[i] * es, "ABC"[i]);
      goto out;
    }
    tc_tune_fill(host[i], elems[i], o->dtype, i < 2 ? &seed : NULL);
  }
  if (d->moe) {
    ids = calloc(tc_tile_gemm_elems(d, 'I'), sizeof *ids);
    if (!ids) {
      op_fail(o, "cannot allocate the token ids");
      goto out;
    }
    tc_tile_gemm_ids(d, ids);
  }
  if (o->verify) {
    want = malloc(elems[2] * sizeof *want), bound = malloc(elems[2] * sizeof *bound);
    if (!want || !bound) {
      op_fail(o, "cannot allocate the reference of C");
      goto out;
    }
    tc_tile_gemm_reference(d, host[0], host[1], ids, want, bound);
  }
  tc_status st;
  if (tc_target_info_of(o->target).device_selector &&
      (st = tc_cl_open(o->device, &cl, &e)) != TC_OK) {
    op_fail(o, "%s", tc_str_cstr(&e));
    goto out;
  }
  const char *arch = tc_tune_arch(o->target, o->arch);
  tc_str_clear(&e);
  /* the first run (C copied back, verified), then with --time o->iters
   * timed launches back to back on the same loaded kernel, in one call */
  tm = o->time ? tc_xcalloc((size_t)o->iters, sizeof *tm) : NULL;
  st = tc_tile_gemm_run(o->target, cl, arch, em, d, host[0], host[1], host[2], ids, &r->first_ms,
                        tm ? o->iters : 0, tm, &e);
  if (st != TC_OK) {
    op_fail(o, "the kernel failed (%s): %s", tc_status_name(st), tc_str_cstr(&e));
    goto out;
  }
  r->ran = 1;
  if (o->verify) {
    r->verified = 1;
    TC_STR_LOCAL(msg);
    r->bad = tc_tune_check(host[2], o->dtype, NULL, want, bound, elems[2], &r->max_abs, &r->worst, &msg);
    snprintf(r->verify_msg, sizeof r->verify_msg, "%s", tc_str_cstr(&msg));
    r->pass = r->bad == 0;
  }
  if (tm) op_set_time(o, r, tm, 2.0 * (double)d->m * (double)d->n * (double)d->k); /* frees tm */
  tm = NULL;
  if (!o->json) op_print_run(o, r, 1, (int64_t)elems[2]);
  rc = !r->verified || r->pass ? CLI_OK : CLI_FAIL;
out:
  free(tm);
  tc_cl_close(cl);
  for (int i = 0; i < 3; i++) free(host[i]);
  free(ids);
  free(want);
  free(bound);
  tc_str_free(&e);
  return rc;
}

int gemm_tile_run(op_opts *o, const gemm_tile_opts *t, int64_t g, int64_t m, int64_t n, int64_t k,
                  int ta, int tb) {
  tc_tile_gemm_desc d;
  int rc = tile_desc(o, t, g, m, n, k, ta, tb, &d);
  if (rc != CLI_OK) return rc;
  tc_str key;
  tc_str_init(&key);
  problem_key(&d, &key);
  op_report r;
  memset(&r, 0, sizeof r);
  tc_tile_emitted em;
  memset(&em, 0, sizeof em);
  TC_STR_LOCAL(why);
  int have_em = 0, ok = 0;
  rc = CLI_FAIL;
  tc_tile_kernel *kern = tc_tile_gemm_build(&d, "tilec_tile_gemm", &why);
  if (!kern) {
    op_fail(o, "%s", tc_str_cstr(&why));
    goto out;
  }
  tc_tile_pass_options po;
  tc_tile_pass_options_default(&po);
  po.aggregate_load = !t->no_aggregate;
  if (t->smem_limit) po.smem_limit = t->smem_limit;
  tc_tile_run_passes(kern, &po);
  const tc_dialect *dl = tc_tile_dialect(o->target);
  tc_status st = dl ? tc_tile_emit(kern, dl, &em, &why) : TC_ERR_UNSUPPORTED;
  if (st != TC_OK) {
    op_fail(o, "cannot emit the tile kernel for %s (%s): %s", tc_target_name(o->target),
            tc_status_name(st), dl ? tc_str_cstr(&why) : "no dialect");
    goto out;
  }
  have_em = 1;
  int runs;
  int have_dev = op_find_device(o, &r, &runs, &why);
  if (!have_dev && runs) goto out;
  if (!o->json) print_kernel(o, t, tc_str_cstr(&key), kern, &em, &r, have_dev, tc_str_cstr(&why));
  if (o->emit && emit_file(o, tc_str_cstr(&key), kern, &em) != CLI_OK) goto out;
  if (!runs) {
    /* --target hip: compiled with hipcc; cuda: checked with NVRTC */
    rc = op_build_only(o, have_dev, tc_str_cstr(&why), em.source, em.name);
  } else {
    rc = run_verify(o, &d, &em, &r);
  }
  ok = rc == CLI_OK;
out:
  if (o->json && have_em) print_json(o, tc_str_cstr(&key), &d, kern, &em, &r, ok);
  tc_tile_emitted_free(&em);
  tc_tile_kernel_free(kern);
  tc_str_free(&key);
  return rc;
}
