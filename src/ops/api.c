/* api.c - the public convolution and GEMM API of tilec.h (tc_conv2d_*,
 * tc_gemm_*), on top of the internal pieces `tilec conv2d` and `tilec gemm`
 * use: the convolution planner (conv.h), the GEMM generator (gemm.h), the
 * perf configs (tune/params.h), the tuner (ops/tuner.h) and the perf DB
 * (tune/perfdb.h).
 *
 * Both objects share op_common: the copied options, the last error, the
 * perf config and where it came from, and the device name the perf DB
 * keys use (found once, on first need).  The problem string of an object
 * is the same text the command uses, so the perf DB entries are shared
 * with it. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/tilec.h"
#include "../base/base.h"
#include "../layout/coord.h"
#include "../runtime/runtime.h"
#include "../target/target.h"
#include "../tune/params.h"
#include "../tune/perfdb.h"
#include "conv.h"
#include "gemm.h"
#include "tuner.h"

/* Largest tensor or matrix, in elements (the commands' limit too). */
#define API_MAX_ELEMS ((int64_t)1 << 31)

/* ---- what both objects share ---------------------------------------------- */

typedef struct op_common {
  tc_target target;
  char *device, *arch, *perfdb;  /* copies of the options (NULL: default) */
  tc_str err;                    /* the last error ("" when none) */
  char *key;                     /* the problem string */
  char config[64];               /* the plan's perf config ("" before a plan) */
  const char *source;            /* "", "option", "perfdb", "tuned", "heuristic" */
  tc_str detail;
  tc_str warn;                   /* what went wrong on the way ("" when nothing) */
  int dev_state;                 /* 0 not looked up, 1 devname known, -1 none */
  char devname[256];
  tc_str dev_why;                /* why there is no devname */
} op_common;

static char *dup_or_null(const char *s) { return s ? tc_xstrdup(s) : NULL; }

static void common_init(op_common *o, const tc_op_options *opt) {
  memset(o, 0, sizeof *o);
  tc_str_init(&o->err);
  tc_str_init(&o->detail);
  tc_str_init(&o->warn);
  tc_str_init(&o->dev_why);
  o->target = opt ? opt->target : TC_DEFAULT_TARGET;
  if (opt) {
    o->device = dup_or_null(opt->device);
    o->arch = dup_or_null(opt->arch);
    o->perfdb = dup_or_null(opt->perfdb);
  }
  o->source = "";
}

static void common_free(op_common *o) {
  free(o->device);
  free(o->arch);
  free(o->perfdb);
  free(o->key);
  tc_str_free(&o->err);
  tc_str_free(&o->detail);
  tc_str_free(&o->warn);
  tc_str_free(&o->dev_why);
}

static void set_error(op_common *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_error(op_common *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tc_str_clear(&o->err);
  tc_str_vprintf(&o->err, fmt, ap);
  va_end(ap);
}

/* The arch kernels are run for (tc_tune_arch: the given one, sm_90a on
 * CUDA, the AMD GPU's on HIP). */
static const char *arch_of(const op_common *o) { return tc_tune_arch(o->target, o->arch); }
/* The arch kernels are planned for: the given one; on HIP the AMD GPU's
 * (its MFMA decides the kernel kind); NULL on CUDA, where the heuristic
 * then avoids sm_90a-only kernels. */
static const char *plan_arch(const op_common *o) {
  return o->arch ? o->arch : tc_rt_device_arch(o->target);
}

/* The device name of the perf DB keys: 0, or -1 (why in dev_why). */
static int device_name(op_common *o) {
  if (o->dev_state == 0) {
    o->dev_state = tc_tune_device_name(o->target, o->device, o->devname, sizeof o->devname, &o->dev_why) == TC_OK
                       ? 1
                       : -1;
  }
  return o->dev_state == 1 ? 0 : -1;
}

/* Opens the perf DB.  1 opened; 0 none (the options say "", or the file
 * does not exist when not creating); -1 it cannot be opened (why). */
static int open_db(const op_common *o, int create, tc_perfdb **db, tc_str *why) {
  *db = NULL;
  if (why) tc_str_clear(why);
  if (o->perfdb && !*o->perfdb) return 0;
  return tc_perfdb_open(o->perfdb, create, db, why);
}

/* The perf DB entry of the problem on this device: 1 found (*p parsed,
 * the DB path and entry in *path_out / *e), 0 none, -1 an error (why). */
static int db_lookup(op_common *o, tc_gemm_params *p, tc_perfdb_entry *e, char *path_out,
                     size_t path_cap, tc_str *why) {
  if (why) tc_str_clear(why);
  tc_perfdb *db = NULL;
  int rc = open_db(o, 0, &db, why);
  if (rc != 1) return rc;
  if (device_name(o) != 0) { /* no device: nothing to key on */
    tc_perfdb_close(db);
    return 0;
  }
  rc = tc_tune_lookup(db, o->key, o->target, o->devname, p, e, why);
  snprintf(path_out, path_cap, "%s", tc_perfdb_path(db));
  tc_perfdb_close(db);
  return rc;
}

/* The tuner's progress events (the public tc_op_tune_event), passed on to
 * the caller's callback and context. */
typedef struct progress_relay {
  tc_op_tune_callback fn;
  void *ctx;
} progress_relay;

static void relay_progress(void *vctx, const tc_tune_event *ev) {
  const progress_relay *r = vctx;
  r->fn(r->ctx, ev);
}

/* Fills the tuner's options from ours; *db is opened for writing when the
 * winner is to be stored (a failure to open it goes to warn). */
static void tune_options(op_common *o, const tc_op_tune_options *t, progress_relay *relay,
                         tc_tune_options *to, tc_perfdb **db, tc_str *warn) {
  memset(to, 0, sizeof *to);
  to->target = o->target;
  to->device = o->device;
  to->arch = plan_arch(o);
  to->max_candidates = t ? t->max_candidates : 0;
  to->reps = t ? t->reps : 0;
  if (t && t->progress) {
    relay->fn = t->progress;
    relay->ctx = t->progress_ctx;
    to->progress = relay_progress;
    to->progress_ctx = relay;
  }
  *db = NULL;
  tc_str_clear(warn);
  if (!(t && t->no_store) && open_db(o, 1, db, warn) == 1) {
    to->db = *db;
    to->key = o->key;
  }
}

/* After a successful tuning: the result and the detail line. */
static void tune_report(op_common *o, const tc_tune_result *tr, tc_perfdb *db, const char *warn,
                        tc_op_tune_result *r) {
  o->source = "tuned";
  snprintf(o->config, sizeof o->config, "%s", tr->best_config);
  tc_str_clear(&o->detail);
  tc_str_clear(&o->warn);
  if (!tr->stored && db)
    tc_str_printf(&o->warn, "%s; the tuning result is not stored", tr->store_err);
  else if (!tr->stored && warn && *warn)
    tc_str_printf(&o->warn, "%s; the tuning result is not stored", warn);
  tc_str_printf(&o->detail, "tuned: fastest of %d tried, %.4f ms; ", tr->tried, tr->best_ms);
  if (tr->stored)
    tc_str_printf(&o->detail, "stored in the perf DB %s", tc_perfdb_path(db));
  else if (db)
    tc_str_printf(&o->detail, "not stored: %s", tr->store_err);
  else if (warn && *warn)
    tc_str_printf(&o->detail, "not stored: %s", warn);
  else
    tc_str_cat(&o->detail, "not stored");
  if (r) {
    memset(r, 0, sizeof *r);
    snprintf(r->perf_config, sizeof r->perf_config, "%s", tr->best_config);
    r->ms = tr->best_ms;
    r->candidates = tr->candidates;
    r->tried = tr->tried;
    r->skipped = tr->skipped;
    r->stored = tr->stored;
    if (tr->stored) snprintf(r->perfdb, sizeof r->perfdb, "%s", tc_perfdb_path(db));
  }
}

/* A plan fell back to the heuristic: warn ("; why" or "") is the
 * warning, the detail "heuristic, KIND" followed by it. */
static void heuristic_report(op_common *o, const char *kind, const char *more, const tc_str *warn) {
  o->source = "heuristic";
  tc_str_clear(&o->detail);
  tc_str_printf(&o->detail, "heuristic, %s%s%s", kind, more, tc_str_cstr(warn));
  tc_str_clear(&o->warn);
  if (warn->len > 2) tc_str_cat(&o->warn, tc_str_cstr(warn) + 2);
}

/* ---- 2-D convolution --------------------------------------------------------- */

struct tc_conv2d {
  op_common o;
  tc_conv_problem p;
  char bad[256];        /* what tc_conv2d_new found wrong ("" when nothing) */
  tc_conv_plan *plan;
  tc_matmul_tiles fusion_tiles; /* tc_conv2d_set_fusion_tiles (bm 0: the scheduler's) */
};

void tc_conv2d_desc_init(tc_conv2d_desc *d) {
  if (!d) return;
  memset(d, 0, sizeof *d);
  d->direction = TC_CONV2D_FORWARD;
  d->n = d->c = d->h = d->w = d->k = d->y = d->x = 1;
  d->stride_h = d->stride_w = 1;
  d->dilation_h = d->dilation_w = 1;
  d->groups = 1;
  d->dtype = TC_F32;
}

/* A layout string into the problem's char[8]; 0 or -1 (too long). */
static int copy_layout(char dst[8], const char *src, const char *dflt) {
  const char *s = src ? src : dflt;
  if (strlen(s) >= 8) return -1;
  strcpy(dst, s);
  return 0;
}

/* A convolution of problem p (sizes and parameters set, layouts still
 * to copy from given[] or their defaults). */
static tc_conv2d *conv_new(const tc_conv_problem *p, const char *const given[3],
                           const char *const dflt[3], const tc_op_options *opt) {
  tc_conv2d *c = tc_xcalloc(1, sizeof *c);
  common_init(&c->o, opt);
  c->p = *p;
  const char *names[3] = {"input", "filter", "output"};
  char *dst[3] = {c->p.in_layout, c->p.fil_layout, c->p.out_layout};
  for (int i = 0; i < 3; i++) {
    if (copy_layout(dst[i], given[i], dflt[i]) != 0) {
      snprintf(c->bad, sizeof c->bad, "bad %s layout '%.16s...': expected %d letters such as %s",
               names[i], given[i], (int)strlen(dflt[i]), dflt[i]);
      strcpy(dst[i], "?");
    }
  }
  tc_str key;
  tc_str_init(&key);
  tc_conv_problem_string(&c->p, &key);
  c->o.key = tc_str_take(&key);
  return c;
}

tc_conv2d *tc_conv2d_new(const tc_conv2d_desc *d, const tc_op_options *opt) {
  tc_conv2d_desc def;
  if (!d) {
    tc_conv2d_desc_init(&def);
    d = &def;
  }
  tc_conv_problem p;
  tc_conv_problem_init(&p);
  p.dir = (tc_conv_dir)d->direction;
  p.n = d->n, p.c = d->c, p.h = d->h, p.w = d->w;
  p.k = d->k, p.y = d->y, p.x = d->x;
  p.pad_h_l = d->pad_top, p.pad_h_r = d->pad_bottom;
  p.pad_w_l = d->pad_left, p.pad_w_r = d->pad_right;
  p.stride_h = d->stride_h, p.stride_w = d->stride_w;
  p.dil_h = d->dilation_h, p.dil_w = d->dilation_w;
  p.groups = d->groups;
  p.dtype = d->dtype;
  const char *given[3] = {d->in_layout, d->fil_layout, d->out_layout};
  static const char *const dflt[3] = {"NCHW", "KCYX", "NKHW"};
  return conv_new(&p, given, dflt, opt);
}

void tc_conv3d_desc_init(tc_conv3d_desc *d) {
  if (!d) return;
  memset(d, 0, sizeof *d);
  d->direction = TC_CONV2D_FORWARD;
  d->n = d->c = d->d = d->h = d->w = d->k = d->z = d->y = d->x = 1;
  d->stride_d = d->stride_h = d->stride_w = 1;
  d->dilation_d = d->dilation_h = d->dilation_w = 1;
  d->groups = 1;
  d->dtype = TC_F32;
}

tc_conv2d *tc_conv3d_new(const tc_conv3d_desc *d, const tc_op_options *opt) {
  tc_conv3d_desc def;
  if (!d) {
    tc_conv3d_desc_init(&def);
    d = &def;
  }
  tc_conv_problem p;
  tc_conv_problem_init(&p);
  tc_conv_problem_make_3d(&p);
  p.dir = (tc_conv_dir)d->direction;
  p.n = d->n, p.c = d->c, p.d = d->d, p.h = d->h, p.w = d->w;
  p.k = d->k, p.z = d->z, p.y = d->y, p.x = d->x;
  p.pad_d_l = d->pad_front, p.pad_d_r = d->pad_back;
  p.pad_h_l = d->pad_top, p.pad_h_r = d->pad_bottom;
  p.pad_w_l = d->pad_left, p.pad_w_r = d->pad_right;
  p.stride_d = d->stride_d, p.stride_h = d->stride_h, p.stride_w = d->stride_w;
  p.dil_d = d->dilation_d, p.dil_h = d->dilation_h, p.dil_w = d->dilation_w;
  p.groups = d->groups;
  p.dtype = d->dtype;
  const char *given[3] = {d->in_layout, d->fil_layout, d->out_layout};
  static const char *const dflt[3] = {"NCDHW", "KCZYX", "NKDHW"};
  return conv_new(&p, given, dflt, opt);
}

void tc_conv2d_free(tc_conv2d *c) {
  if (!c) return;
  tc_conv_plan_free(c->plan);
  common_free(&c->o);
  free(c);
}

const char *tc_conv2d_error(const tc_conv2d *c) { return c ? tc_str_cstr(&c->o.err) : ""; }
const char *tc_conv2d_problem_string(const tc_conv2d *c) { return c ? c->o.key : ""; }

/* Checks the description: 0, or -1 with the error set (prefixed by fn). */
static int conv_check(tc_conv2d *c, const char *fn, int64_t *dout, int64_t *ho, int64_t *wo) {
  TC_STR_LOCAL(why);
  if (c->bad[0]) {
    set_error(&c->o, "%s: %s", fn, c->bad);
    return -1;
  }
  if (tc_conv_check3(&c->p, dout, ho, wo, &why) != 0) {
    set_error(&c->o, "%s: %s", fn, tc_str_cstr(&why));
    return -1;
  }
  int64_t elems[3] = {tc_conv_input_elems(&c->p), tc_conv_filter_elems(&c->p),
                      tc_conv_output_elems(&c->p)};
  const char *names[3] = {"input", "filter", "output"};
  for (int i = 0; i < 3; i++) {
    if (elems[i] > API_MAX_ELEMS) {
      set_error(&c->o, "%s: the %s tensor would have %lld elements; at most 2^31 are supported",
                fn, names[i], (long long)elems[i]);
      return -1;
    }
  }
  return 0;
}

/* conv_check that also takes bf16 (the fusion path's dtype; the
 * geometry does not depend on it). */
static int conv_check_any(tc_conv2d *c, const char *fn) {
  tc_conv_problem keep = c->p;
  if (c->p.dtype == TC_BF16) c->p.dtype = TC_F16;
  int rc = conv_check(c, fn, NULL, NULL, NULL);
  c->p = keep;
  return rc;
}

tc_status tc_conv2d_output_size(tc_conv2d *c, int64_t *ho, int64_t *wo) {
  if (!c) return TC_ERR_ARGUMENT;
  int64_t h = 0, w = 0;
  if (conv_check(c, "tc_conv2d_output_size", NULL, &h, &w) != 0) return TC_ERR_ARGUMENT;
  tc_str_clear(&c->o.err);
  if (ho) *ho = h;
  if (wo) *wo = w;
  return TC_OK;
}

tc_status tc_conv3d_output_size(tc_conv2d *c, int64_t *dout, int64_t *ho, int64_t *wo) {
  if (!c) return TC_ERR_ARGUMENT;
  int64_t dd = 0, h = 0, w = 0;
  if (conv_check(c, "tc_conv3d_output_size", &dd, &h, &w) != 0) return TC_ERR_ARGUMENT;
  tc_str_clear(&c->o.err);
  if (dout) *dout = dd;
  if (ho) *ho = h;
  if (wo) *wo = w;
  return TC_OK;
}

int64_t tc_conv2d_elems(tc_conv2d *c, tc_conv2d_tensor t) {
  if (!c) return -1;
  if (conv_check_any(c, "tc_conv2d_elems") != 0) return -1;
  tc_str_clear(&c->o.err);
  switch ((int)t) {
    case TC_CONV2D_INPUT: return tc_conv_input_elems(&c->p);
    case TC_CONV2D_FILTER: return tc_conv_filter_elems(&c->p);
    case TC_CONV2D_OUTPUT: return tc_conv_output_elems(&c->p);
    case TC_CONV2D_BIAS: return c->p.k;
  }
  set_error(&c->o, "tc_conv2d_elems: bad tensor %d (expected TC_CONV2D_INPUT, _FILTER, _OUTPUT "
            "or TC_CONV2D_BIAS)", (int)t);
  return -1;
}

/* Installs a new plan and the perf config it was made with. */
static void conv_install(tc_conv2d *c, tc_conv_plan *plan, const tc_gemm_params *given) {
  tc_conv_plan_free(c->plan);
  c->plan = plan;
  tc_gemm_params_format(given ? given : &plan->params, c->o.config, sizeof c->o.config);
  if (plan->nsteps > 0 && !given) {
    int gemms = 0;
    for (int i = 0; i < plan->nsteps; i++) gemms += plan->steps[i].gemm_m > 0;
    if (gemms == 0) c->o.config[0] = 0; /* only a zero-init kernel */
  }
}

tc_status tc_conv2d_plan(tc_conv2d *c, const char *perf_config) {
  if (!c) return TC_ERR_ARGUMENT;
  const char *fn = "tc_conv2d_plan";
  if (conv_check(c, fn, NULL, NULL, NULL) != 0) return TC_ERR_ARGUMENT;
  TC_STR_LOCAL(why);
  tc_gemm_params prm;
  memset(&prm, 0, sizeof prm);
  tc_conv_plan *plan = NULL;
  tc_status st;
  if (perf_config) {
    if (tc_gemm_params_parse(perf_config, &prm, &why) != 0) {
      set_error(&c->o, "%s: bad perf config '%s': %s", fn, perf_config, tc_str_cstr(&why));
      return TC_ERR_ARGUMENT;
    }
    st = tc_conv_plan_make(&c->p, &prm, c->o.target, &plan, &why);
    if (st != TC_OK) {
      set_error(&c->o, "%s: %s", fn, tc_str_cstr(&why));
      return st;
    }
    conv_install(c, plan, &prm);
    c->o.source = "option";
    tc_str_clear(&c->o.warn);
    tc_str_clear(&c->o.detail);
    tc_str_printf(&c->o.detail, "given to %s", fn);
    tc_str_clear(&c->o.err);
    return TC_OK;
  }
  /* the perf DB entry, when there is one that fits */
  tc_perfdb_entry e;
  char path[4096] = "";
  tc_str warn;
  tc_str_init(&warn);
  int found = db_lookup(&c->o, &prm, &e, path, sizeof path, &why);
  if (found < 0) tc_str_printf(&warn, "; the perf DB was not used: %s", tc_str_cstr(&why));
  if (found == 1) {
    st = tc_conv_plan_make(&c->p, &prm, c->o.target, &plan, &why);
    if (st == TC_OK) {
      conv_install(c, plan, &prm);
      c->o.source = "perfdb";
      tc_str_clear(&c->o.warn);
      tc_str_clear(&c->o.detail);
      tc_str_printf(&c->o.detail, "from the perf DB %s; tuned to %.4f ms by tilec %s", path, e.ms,
                    e.version);
      tc_str_clear(&c->o.err);
      tc_str_free(&warn);
      return TC_OK;
    }
    tc_str_printf(&warn, "; the perf DB entry %s does not fit: %s", e.perf_config, tc_str_cstr(&why));
  }
  st = tc_conv_plan_make_for(&c->p, NULL, c->o.target, plan_arch(&c->o), &plan, &why);
  if (st != TC_OK) {
    set_error(&c->o, "%s: %s", fn, tc_str_cstr(&why));
    tc_str_free(&warn);
    return st;
  }
  conv_install(c, plan, NULL);
  int gemms = 0;
  for (int i = 0; i < plan->nsteps; i++) gemms += plan->steps[i].gemm_m > 0;
  heuristic_report(&c->o, tc_gemm_params_kind(&plan->params),
                   gemms > 1 ? "; that of the first GEMM, each has its own" : "", &warn);
  tc_str_free(&warn);
  tc_str_clear(&c->o.err);
  return TC_OK;
}

tc_status tc_conv2d_tune(tc_conv2d *c, const tc_op_tune_options *t, tc_op_tune_result *r) {
  if (r) memset(r, 0, sizeof *r);
  if (!c) return TC_ERR_ARGUMENT;
  const char *fn = "tc_conv2d_tune";
  if (conv_check(c, fn, NULL, NULL, NULL) != 0) return TC_ERR_ARGUMENT;
  if (t && (t->max_candidates < 0 || t->reps < 0)) {
    set_error(&c->o, "%s: max_candidates and reps must not be negative (got %d and %d)", fn,
              t->max_candidates, t->reps);
    return TC_ERR_ARGUMENT;
  }
  progress_relay relay;
  tc_tune_options to;
  tc_perfdb *db = NULL;
  TC_STR_LOCAL(warn);
  TC_STR_LOCAL(why);
  tune_options(&c->o, t, &relay, &to, &db, &warn);
  tc_tune_result *tr = tc_xcalloc(1, sizeof *tr);
  tc_status st = tc_tune_conv(&c->p, &to, tr, &why);
  if (st != TC_OK) {
    set_error(&c->o, "%s: %s", fn, tc_str_cstr(&why));
    goto out;
  }
  tc_conv_plan *plan = NULL;
  st = tc_conv_plan_make(&c->p, &tr->best, c->o.target, &plan, &why);
  if (st != TC_OK) {
    set_error(&c->o, "%s: the winner %s does not plan: %s", fn, tr->best_config, tc_str_cstr(&why));
    goto out;
  }
  conv_install(c, plan, &tr->best);
  tune_report(&c->o, tr, db, tc_str_cstr(&warn), r);
  tc_str_clear(&c->o.err);
out:
  free(tr);
  tc_perfdb_close(db);
  return st;
}

tc_status tc_conv2d_run(tc_conv2d *c, void *in, void *fil, void *out, double *ms) {
  return tc_conv2d_run_timed(c, in, fil, out, ms, 0, NULL);
}

tc_status tc_conv2d_run_timed(tc_conv2d *c, void *in, void *fil, void *out, double *first_ms,
                              int iters, double *times) {
  if (first_ms) *first_ms = 0;
  if (!c) return TC_ERR_ARGUMENT;
  const char *fn = iters || times ? "tc_conv2d_run_timed" : "tc_conv2d_run";
  if (iters < 0 || (iters > 0 && !times)) {
    set_error(&c->o, "%s: iters must be >= 0 with times for each (got %d, times %s)", fn, iters,
              times ? "given" : "NULL");
    return TC_ERR_ARGUMENT;
  }
  if (!c->plan) {
    tc_status st = tc_conv2d_plan(c, NULL);
    if (st != TC_OK) return st;
  }
  TC_STR_LOCAL(why);
  /* tc_conv_run's device: the OpenCL selector, or the CUDA / AMD arch */
  const char *dev = tc_target_info_of(c->o.target).device_selector ? c->o.device : arch_of(&c->o);
  tc_status st = tc_conv_run(c->plan, dev, in, fil, out, first_ms, iters, times, &why);
  if (st != TC_OK) {
    set_error(&c->o, "%s: %s", fn, tc_str_cstr(&why));
    return st;
  }
  tc_str_clear(&c->o.err);
  return TC_OK;
}

int64_t tc_conv2d_verify(tc_conv2d *c, const void *in, const void *fil, const void *out,
                         double *worst) {
  tc_op_verify_result r;
  int64_t bad = tc_conv2d_verify_result(c, in, fil, out, &r);
  if (worst) *worst = bad < 0 ? 0 : r.worst;
  return bad;
}

int64_t tc_conv2d_verify_result(tc_conv2d *c, const void *in, const void *fil, const void *out,
                                tc_op_verify_result *r) {
  tc_op_verify_result local;
  if (!r) r = &local;
  memset(r, 0, sizeof *r);
  r->bad = -1;
  if (!c) return -1;
  if (conv_check(c, "tc_conv2d_verify", NULL, NULL, NULL) != 0) return -1;
  if (!in || !fil || !out) {
    set_error(&c->o, "tc_conv2d_verify: a buffer is NULL");
    return -1;
  }
  tc_conv_buf wb = tc_conv_written_buf(c->p.dir);
  r->checked = wb == TC_BUF_INPUT    ? tc_conv_input_elems(&c->p)
               : wb == TC_BUF_FILTER ? tc_conv_filter_elems(&c->p)
                                     : tc_conv_output_elems(&c->p);
  TC_STR_LOCAL(msg);
  r->bad = tc_conv_verify(&c->p, in, fil, out, &r->worst, &msg);
  snprintf(r->message, sizeof r->message, "%s", tc_str_cstr(&msg));
  if (r->bad != 0)
    set_error(&c->o, "tc_conv2d_verify: %s", r->message);
  else
    tc_str_clear(&c->o.err);
  return r->bad;
}

/* ---- the fusion path ---- */

/* conv_check for the fusion path, which takes bf16 as well. */
static int conv_check_fusion(tc_conv2d *c, const char *fn, const tc_conv2d_epilogue *ep,
                             tc_conv_epi *epi) {
  if (conv_check_any(c, fn)) return -1;
  epi->bias = ep && ep->bias;
  epi->act = ep && ep->has_activation ? (int)ep->activation : -1;
  return 0;
}

tc_fusion *tc_conv2d_fusion(tc_conv2d *c, const tc_conv2d_epilogue *ep, int i,
                            tc_conv2d_tensor *args, int *nargs, int *count) {
  if (!c) return NULL;
  tc_conv_epi epi;
  if (conv_check_fusion(c, "tc_conv2d_fusion", ep, &epi)) return NULL;
  tc_conv_fusion *fs;
  int n, zero;
  TC_STR_LOCAL(err);
  if (tc_conv_fusions(&c->p, &epi, &fs, &n, &zero, &err)) {
    set_error(&c->o, "tc_conv2d_fusion: %s", tc_str_cstr(&err));
    return NULL;
  }
  if (count) *count = n;
  if (i < 0 || i >= n) {
    set_error(&c->o, "tc_conv2d_fusion: GEMM %d does not exist; the convolution has %d", i, n);
    tc_conv_fusions_free(fs, n);
    return NULL;
  }
  tc_fusion *f = fs[i].f;
  fs[i].f = NULL;
  if (nargs) *nargs = fs[i].nargs;
  for (int a = 0; args && a < fs[i].nargs; a++) args[a] = (tc_conv2d_tensor)fs[i].args[a];
  tc_conv_fusions_free(fs, n);
  tc_str_clear(&c->o.err);
  return f;
}

tc_status tc_conv2d_set_fusion_tiles(tc_conv2d *c, const tc_matmul_tiles *tiles) {
  if (!c) return TC_ERR_ARGUMENT;
  if (tiles && (tiles->bm < 1 || tiles->bn < 1 || tiles->bk < 1 || tiles->tm < 1 || tiles->tn < 1)) {
    set_error(&c->o, "tc_conv2d_set_fusion_tiles: tiles %lldx%lldx%lld with %lldx%lld per thread: "
              "every extent must be at least 1", (long long)tiles->bm, (long long)tiles->bn,
              (long long)tiles->bk, (long long)tiles->tm, (long long)tiles->tn);
    return TC_ERR_ARGUMENT;
  }
  if (tiles) c->fusion_tiles = *tiles;
  else memset(&c->fusion_tiles, 0, sizeof c->fusion_tiles);
  tc_str_clear(&c->o.err);
  return TC_OK;
}

tc_status tc_conv2d_run_fusion(tc_conv2d *c, const tc_conv2d_epilogue *ep, void *in, void *fil,
                               void *out, double *ms) {
  if (!c) return TC_ERR_ARGUMENT;
  tc_conv_epi epi;
  if (conv_check_fusion(c, "tc_conv2d_run_fusion", ep, &epi)) return TC_ERR_ARGUMENT;
  if (!in || !fil || !out) {
    set_error(&c->o, "tc_conv2d_run_fusion: a buffer is NULL");
    return TC_ERR_ARGUMENT;
  }
  TC_STR_LOCAL(err);
  tc_status st = tc_conv_fusion_run(&c->p, &epi, c->o.target, c->o.arch,
                                    c->fusion_tiles.bm ? &c->fusion_tiles : NULL, c->o.device, in, fil, out,
                                    ep ? ep->bias : NULL, ms, 0, NULL, NULL, &err);
  if (st) set_error(&c->o, "tc_conv2d_run_fusion: %s", tc_str_cstr(&err));
  else tc_str_clear(&c->o.err);
  return st;
}

int64_t tc_conv2d_verify_fusion(tc_conv2d *c, const tc_conv2d_epilogue *ep, const void *in,
                                const void *fil, const void *out, double *worst) {
  if (worst) *worst = 0;
  if (!c) return -1;
  tc_conv_epi epi;
  if (conv_check_fusion(c, "tc_conv2d_verify_fusion", ep, &epi)) return -1;
  if (!in || !fil || !out || (epi.bias && !ep->bias)) {
    set_error(&c->o, "tc_conv2d_verify_fusion: a buffer is NULL");
    return -1;
  }
  TC_STR_LOCAL(msg);
  int64_t bad = tc_conv_verify_epilogue(&c->p, in, fil, out, ep ? ep->bias : NULL, epi.act, worst, &msg);
  if (bad != 0) set_error(&c->o, "tc_conv2d_verify_fusion: %s", tc_str_cstr(&msg));
  else tc_str_clear(&c->o.err);
  return bad;
}

tc_status tc_conv2d_reference(tc_conv2d *c, void *in, void *fil, void *out) {
  if (!c) return TC_ERR_ARGUMENT;
  if (conv_check(c, "tc_conv2d_reference", NULL, NULL, NULL) != 0) return TC_ERR_ARGUMENT;
  if (!in || !fil || !out) {
    set_error(&c->o, "tc_conv2d_reference: a buffer is NULL");
    return TC_ERR_ARGUMENT;
  }
  tc_conv_reference(&c->p, in, fil, out);
  tc_str_clear(&c->o.err);
  return TC_OK;
}

const char *tc_conv2d_perf_config(const tc_conv2d *c) { return c ? c->o.config : ""; }
const char *tc_conv2d_perf_config_source(const tc_conv2d *c) { return c ? c->o.source : ""; }
const char *tc_conv2d_perf_config_detail(const tc_conv2d *c) {
  return c ? tc_str_cstr(&c->o.detail) : "";
}
const char *tc_conv2d_warning(const tc_conv2d *c) { return c ? tc_str_cstr(&c->o.warn) : ""; }
int tc_conv2d_num_kernels(const tc_conv2d *c) { return c && c->plan ? c->plan->nsteps : 0; }

static const tc_conv_step *conv_step(const tc_conv2d *c, int i) {
  if (!c || !c->plan || i < 0 || i >= c->plan->nsteps) return NULL;
  return &c->plan->steps[i];
}

const char *tc_conv2d_kernel_name(const tc_conv2d *c, int i) {
  const tc_conv_step *s = conv_step(c, i);
  return s ? s->kernel.name : NULL;
}

const char *tc_conv2d_kernel_source(const tc_conv2d *c, int i) {
  const tc_conv_step *s = conv_step(c, i);
  return s ? s->kernel.source : NULL;
}

int tc_conv2d_kernel_gemm(const tc_conv2d *c, int i, int64_t gemm[4], char *perf_config,
                          size_t cap) {
  const tc_conv_step *s = conv_step(c, i);
  if (perf_config && cap) perf_config[0] = 0;
  if (!s || s->gemm_m <= 0) return 0;
  if (gemm) gemm[0] = s->gemm_g, gemm[1] = s->gemm_m, gemm[2] = s->gemm_n, gemm[3] = s->gemm_k;
  if (perf_config && cap) tc_gemm_params_format(&s->params, perf_config, cap);
  return 1;
}

int64_t tc_conv2d_kernel_smem_bytes(const tc_conv2d *c, int i) {
  const tc_conv_step *s = conv_step(c, i);
  return s ? s->kernel.smem_bytes : 0;
}

int tc_conv2d_kernel_launch(const tc_conv2d *c, int i, int64_t grid[3], int64_t block[3],
                            tc_conv2d_tensor args[3]) {
  const tc_conv_step *s = conv_step(c, i);
  if (!s) return 0;
  for (int d = 0; d < 3; d++) {
    if (grid) grid[d] = (int64_t)s->kernel.grid[d];
    if (block) block[d] = (int64_t)s->kernel.block[d];
  }
  for (int a = 0; a < s->nargs && args; a++)
    args[a] = s->args[a] == TC_BUF_INPUT    ? TC_CONV2D_INPUT
              : s->args[a] == TC_BUF_FILTER ? TC_CONV2D_FILTER
                                            : TC_CONV2D_OUTPUT;
  return s->nargs;
}

/* ---- GEMM ----------------------------------------------------------------------- */

struct tc_gemm {
  op_common o;
  tc_gemm_desc d;
  tc_view *va, *vb, *vc;   /* made by the first successful check */
  tc_gemm_problem pb;
  tc_gemm_shape shape;
  tc_gemm_kernel kern;
  int have_kernel;
  tc_cl *cl;               /* OpenCL: opened by the first run, kept */
  tc_str views;            /* the views described (tc_gemm_views_describe) */
};

void tc_gemm_desc_init(tc_gemm_desc *d) {
  if (!d) return;
  memset(d, 0, sizeof *d);
  d->m = d->n = d->k = 1;
  d->batch = 1;
  d->dtype = TC_F32;
}

tc_gemm *tc_gemm_new(const tc_gemm_desc *d, const tc_op_options *opt) {
  tc_gemm *g = tc_xcalloc(1, sizeof *g);
  common_init(&g->o, opt);
  tc_str_init(&g->views);
  if (d)
    g->d = *d;
  else
    tc_gemm_desc_init(&g->d);
  tc_str key;
  tc_str_init(&key);
  /* the key of `tilec gemm` (tools/cmd_gemm.c), character for character */
  tc_str_printf(&key, "gemm -g %lld -M %lld -N %lld -K %lld --transA %d --transB %d -t %s",
                (long long)g->d.batch, (long long)g->d.m, (long long)g->d.n, (long long)g->d.k,
                g->d.trans_a, g->d.trans_b, tc_dtype_name(g->d.dtype));
  g->o.key = tc_str_take(&key);
  return g;
}

void tc_gemm_free(tc_gemm *g) {
  if (!g) return;
  if (g->have_kernel) tc_gemm_kernel_free(&g->kern);
  tc_cl_close(g->cl);
  tc_view_free(g->va);
  tc_view_free(g->vb);
  tc_view_free(g->vc);
  tc_str_free(&g->views);
  common_free(&g->o);
  free(g);
}

const char *tc_gemm_error(const tc_gemm *g) { return g ? tc_str_cstr(&g->o.err) : ""; }
const char *tc_gemm_problem_string(const tc_gemm *g) { return g ? g->o.key : ""; }

/* A [G, rows, cols] row-major matrix seen with upper dims [G, cols, rows]
 * when swap is set (the GEMM wants A as [G, K, M], B as [G, K, N]). */
static tc_view *matrix_view(int64_t g, int64_t rows, int64_t cols, const char *rname,
                            const char *cname, int swap, tc_str *err) {
  int64_t ext[3] = {g, rows, cols};
  const char *names[3] = {"g", rname, cname};
  tc_view *v = tc_view_new(3, ext, NULL, names);
  if (!v) {
    tc_str_printf(err, "cannot make the [%s, %s] view", rname, cname);
    return NULL;
  }
  static const int perm[3] = {0, 2, 1};
  if (swap && tc_view_reorder(v, perm) != 0) {
    tc_str_printf(err, "cannot reorder the [%s, %s] view: %s", rname, cname, v->err);
    tc_view_free(v);
    return NULL;
  }
  return v;
}

/* Checks the description and makes the views (once): 0 or -1 + error. */
static int gemm_check(tc_gemm *g, const char *fn) {
  const tc_gemm_desc *d = &g->d;
  struct { const char *what; int64_t v; } sz[] = {
      {"m", d->m}, {"n", d->n}, {"k", d->k}, {"batch", d->batch}};
  for (int i = 0; i < 4; i++) {
    if (sz[i].v < 1 || sz[i].v > INT32_MAX) {
      set_error(&g->o, "%s: %s must be in [1, %d], got %lld", fn, sz[i].what, INT32_MAX,
                (long long)sz[i].v);
      return -1;
    }
  }
  if ((d->trans_a != 0 && d->trans_a != 1) || (d->trans_b != 0 && d->trans_b != 1)) {
    set_error(&g->o, "%s: trans_a and trans_b must be 0 or 1 (got %d and %d)", fn, d->trans_a,
              d->trans_b);
    return -1;
  }
  if (d->dtype != TC_F32 && d->dtype != TC_F16 && d->dtype != TC_BF16) {
    set_error(&g->o, "%s: unsupported data type %s for a GEMM: expected f32, f16 or bf16", fn,
              tc_dtype_name(d->dtype));
    return -1;
  }
  double ea = (double)d->batch * (double)d->m * (double)d->k;
  double eb = (double)d->batch * (double)d->k * (double)d->n;
  double ec = (double)d->batch * (double)d->m * (double)d->n;
  if (ea > (double)API_MAX_ELEMS || eb > (double)API_MAX_ELEMS || ec > (double)API_MAX_ELEMS) {
    set_error(&g->o, "%s: a matrix would have more than 2^31 elements (A %.0f, B %.0f, C %.0f)", fn,
              ea, eb, ec);
    return -1;
  }
  if (g->vc) return 0;
  tc_str e;
  tc_str_init(&e);
  /* A [G,K,M] over memory [G][M][K] (or [G][K][M]), B [G,K,N] over
   * [G][K][N] (or [G][N][K]), C [G,M,N] */
  g->va = d->trans_a ? matrix_view(d->batch, d->k, d->m, "k", "m", 0, &e)
                     : matrix_view(d->batch, d->m, d->k, "m", "k", 1, &e);
  if (g->va)
    g->vb = d->trans_b ? matrix_view(d->batch, d->n, d->k, "n", "k", 1, &e)
                       : matrix_view(d->batch, d->k, d->n, "k", "n", 0, &e);
  if (g->vb) g->vc = matrix_view(d->batch, d->m, d->n, "m", "n", 0, &e);
  if (!g->vc) {
    set_error(&g->o, "%s: %s", fn, tc_str_cstr(&e));
    tc_str_free(&e);
    tc_view_free(g->va);
    tc_view_free(g->vb);
    g->va = g->vb = NULL;
    return -1;
  }
  tc_str_free(&e);
  memset(&g->pb, 0, sizeof g->pb);
  g->pb.a = g->va, g->pb.b = g->vb, g->pb.c = g->vc;
  g->pb.a_dtype = g->pb.b_dtype = g->pb.c_dtype = d->dtype;
  g->pb.accumulate = 0;
  g->pb.alpha = 1.0f;
  g->shape = tc_gemm_problem_shape(&g->pb);
  const tc_view *views[3] = {g->va, g->vb, g->vc};
  tc_str_clear(&g->views);
  for (int t = 0; t < 3; t++) {
    tc_str_printf(&g->views, "%c view:\n", "ABC"[t]);
    tc_view_describe(views[t], &g->views);
    if (g->views.len && g->views.buf[g->views.len - 1] != '\n') tc_str_cat(&g->views, "\n");
  }
  return 0;
}

static size_t gemm_elems(const tc_gemm *g, int which) {
  const tc_gemm_desc *d = &g->d;
  int64_t r = which == 0 ? d->m * d->k : which == 1 ? d->k * d->n : d->m * d->n;
  return (size_t)(d->batch * r);
}

/* Generates the kernel with derived parameters and installs it. */
static tc_status gemm_install(tc_gemm *g, const tc_gemm_params *prm, tc_str *why) {
  tc_gemm_kernel k;
  memset(&k, 0, sizeof k);
  tc_status st = tc_gemm_generate(&g->pb, prm, g->o.target, "tilec_gemm", &k, why);
  if (st != TC_OK) return st;
  if (g->have_kernel) tc_gemm_kernel_free(&g->kern);
  g->kern = k;
  g->have_kernel = 1;
  tc_gemm_params_format(prm, g->o.config, sizeof g->o.config);
  return TC_OK;
}

tc_status tc_gemm_plan(tc_gemm *g, const char *perf_config) {
  if (!g) return TC_ERR_ARGUMENT;
  const char *fn = "tc_gemm_plan";
  if (gemm_check(g, fn) != 0) return TC_ERR_ARGUMENT;
  TC_STR_LOCAL(why);
  tc_gemm_params prm;
  memset(&prm, 0, sizeof prm);
  tc_status st;
  const tc_gemm_desc *d = &g->d;
  if (perf_config) {
    if (tc_gemm_params_parse(perf_config, &prm, &why) != 0) {
      set_error(&g->o, "%s: bad perf config '%s': %s", fn, perf_config, tc_str_cstr(&why));
      return TC_ERR_ARGUMENT;
    }
    if (tc_gemm_params_derive(&prm, &g->shape, &why) != 0) {
      set_error(&g->o, "%s: perf config %s breaks a rule for this GEMM (G %lld, M %lld, N %lld, "
                "K %lld): %s", fn, perf_config, (long long)d->batch, (long long)d->m,
                (long long)d->n, (long long)d->k, tc_str_cstr(&why));
      return TC_ERR_ARGUMENT;
    }
    if ((st = gemm_install(g, &prm, &why)) != TC_OK) {
      set_error(&g->o, "%s: %s", fn, tc_str_cstr(&why));
      return st;
    }
    g->o.source = "option";
    tc_str_clear(&g->o.warn);
    tc_str_clear(&g->o.detail);
    tc_str_printf(&g->o.detail, "given to %s", fn);
    tc_str_clear(&g->o.err);
    return TC_OK;
  }
  tc_perfdb_entry e;
  char path[4096] = "";
  tc_str warn;
  tc_str_init(&warn);
  int found = db_lookup(&g->o, &prm, &e, path, sizeof path, &why);
  if (found < 0) tc_str_printf(&warn, "; the perf DB was not used: %s", tc_str_cstr(&why));
  if (found == 1) {
    if (tc_gemm_params_derive(&prm, &g->shape, &why) == 0 &&
        gemm_install(g, &prm, &why) == TC_OK) {
      g->o.source = "perfdb";
      tc_str_clear(&g->o.warn);
      tc_str_clear(&g->o.detail);
      tc_str_printf(&g->o.detail, "from the perf DB %s; tuned to %.4f ms by tilec %s", path, e.ms,
                    e.version);
      tc_str_clear(&g->o.err);
      tc_str_free(&warn);
      return TC_OK;
    }
    tc_str_printf(&warn, "; the perf DB entry %s does not fit: %s", e.perf_config, tc_str_cstr(&why));
  }
  const char *kind = "";
  if (tc_gemm_default_for(&g->shape, g->o.target, plan_arch(&g->o), &prm, &kind, &why) != 0) {
    set_error(&g->o, "%s: no valid perf config for this GEMM: %s", fn, tc_str_cstr(&why));
    tc_str_free(&warn);
    return TC_ERR_UNSUPPORTED;
  }
  if ((st = gemm_install(g, &prm, &why)) != TC_OK) {
    set_error(&g->o, "%s: %s", fn, tc_str_cstr(&why));
    tc_str_free(&warn);
    return st;
  }
  heuristic_report(&g->o, kind, "", &warn);
  tc_str_free(&warn);
  tc_str_clear(&g->o.err);
  return TC_OK;
}

tc_status tc_gemm_tune(tc_gemm *g, const tc_op_tune_options *t, tc_op_tune_result *r) {
  if (r) memset(r, 0, sizeof *r);
  if (!g) return TC_ERR_ARGUMENT;
  const char *fn = "tc_gemm_tune";
  if (gemm_check(g, fn) != 0) return TC_ERR_ARGUMENT;
  if (t && (t->max_candidates < 0 || t->reps < 0)) {
    set_error(&g->o, "%s: max_candidates and reps must not be negative (got %d and %d)", fn,
              t->max_candidates, t->reps);
    return TC_ERR_ARGUMENT;
  }
  const tc_gemm_desc *d = &g->d;
  size_t esize = tc_dtype_size(d->dtype), n[3];
  void *host[3] = {NULL, NULL, NULL};
  tc_rt_buffer bufs[3] = {{0}};
  uint64_t seed = 0x5eed0e11ull;
  for (int i = 0; i < 3; i++) {
    n[i] = gemm_elems(g, i);
    host[i] = tc_xcalloc(n[i], esize);
    tc_tune_fill(host[i], n[i], d->dtype, i < 2 ? &seed : NULL);
    bufs[i].host = host[i], bufs[i].bytes = n[i] * esize, bufs[i].copy_back = i == 2;
  }
  tc_gemm_check chk = {0};
  progress_relay relay;
  tc_tune_options to;
  tc_perfdb *db = NULL;
  TC_STR_LOCAL(warn);
  TC_STR_LOCAL(why);
  tc_tune_result *tr = tc_xcalloc(1, sizeof *tr);
  tc_status st = TC_ERR_RUNTIME; /* out of memory */
  if (tc_gemm_check_make(d->batch, d->m, d->n, d->k, d->trans_a, d->trans_b, d->dtype, host[0],
                         host[1], &chk, NULL) != 0) {
    set_error(&g->o, "%s: cannot allocate the reference of C", fn);
    goto out;
  }
  tune_options(&g->o, t, &relay, &to, &db, &warn);
  st = tc_tune_gemm(&g->pb, bufs, &chk, &to, tr, &why);
  if (st != TC_OK) {
    set_error(&g->o, "%s: %s", fn, tc_str_cstr(&why));
    goto out;
  }
  /* the tuner derived the winner against the shape already; derive again
   * to be independent of that */
  tc_gemm_params prm = tr->best;
  if (tc_gemm_params_derive(&prm, &g->shape, &why) != 0 ||
      (st = gemm_install(g, &prm, &why)) != TC_OK) {
    if (st == TC_OK) st = TC_ERR_ARGUMENT;
    set_error(&g->o, "%s: the winner %s does not generate: %s", fn, tr->best_config, tc_str_cstr(&why));
    goto out;
  }
  tune_report(&g->o, tr, db, tc_str_cstr(&warn), r);
  tc_str_clear(&g->o.err);
out:
  free(tr);
  tc_perfdb_close(db);
  tc_gemm_check_free(&chk);
  for (int i = 0; i < 3; i++) free(host[i]);
  return st;
}

tc_status tc_gemm_run(tc_gemm *g, const void *a, const void *b, void *c, double *ms) {
  return tc_gemm_run_timed(g, a, b, c, ms, 0, NULL);
}

tc_status tc_gemm_run_timed(tc_gemm *g, const void *a, const void *b, void *c, double *first_ms,
                            int iters, double *times) {
  double *ms = first_ms;
  if (ms) *ms = 0;
  if (!g) return TC_ERR_ARGUMENT;
  const char *fn = iters || times ? "tc_gemm_run_timed" : "tc_gemm_run";
  if (iters < 0 || (iters > 0 && !times)) {
    set_error(&g->o, "%s: iters must be >= 0 with times for each (got %d, times %s)", fn, iters,
              times ? "given" : "NULL");
    return TC_ERR_ARGUMENT;
  }
  if (!a || !b || !c) {
    set_error(&g->o, "%s: the %s buffer is NULL", fn, !a ? "A" : !b ? "B" : "C");
    return TC_ERR_ARGUMENT;
  }
  if (!g->have_kernel) {
    tc_status st = tc_gemm_plan(g, NULL);
    if (st != TC_OK) return st;
  }
  size_t esize = tc_dtype_size(g->d.dtype);
  /* a and b are only copied to the device (copy_back 0) */
  void *host[3] = {(void *)(uintptr_t)a, (void *)(uintptr_t)b, c};
  tc_rt_buffer bufs[3] = {{0}};
  for (int i = 0; i < 3; i++) {
    bufs[i].host = host[i];
    bufs[i].bytes = gemm_elems(g, i) * esize;
    bufs[i].copy_back = i == 2;
  }
  tc_str e;
  tc_str_init(&e);
  tc_status st = TC_OK;
  if (tc_target_info_of(g->o.target).device_selector && !g->cl)
    st = tc_cl_open(g->o.device, &g->cl, &e);
  if (st == TC_OK)
    st = tc_gemm_kernel_run(&g->kern, g->o.target, g->cl, arch_of(&g->o), bufs, 3, ms, iters,
                            times, &e);
  if (st != TC_OK)
    set_error(&g->o, "%s: %s", fn, tc_str_cstr(&e));
  else
    tc_str_clear(&g->o.err);
  tc_str_free(&e);
  return st;
}

int64_t tc_gemm_verify(tc_gemm *g, const void *a, const void *b, const void *c, double *worst) {
  tc_op_verify_result r;
  int64_t bad = tc_gemm_verify_result(g, a, b, c, &r);
  if (worst) *worst = bad < 0 ? 0 : r.worst;
  return bad;
}

int64_t tc_gemm_verify_result(tc_gemm *g, const void *a, const void *b, const void *c,
                              tc_op_verify_result *r) {
  tc_op_verify_result local;
  if (!r) r = &local;
  memset(r, 0, sizeof *r);
  r->bad = -1;
  if (!g) return -1;
  const char *fn = "tc_gemm_verify";
  if (gemm_check(g, fn) != 0) return -1;
  if (!a || !b || !c) {
    set_error(&g->o, "%s: a buffer is NULL", fn);
    return -1;
  }
  const tc_gemm_desc *d = &g->d;
  tc_gemm_check chk;
  if (tc_gemm_check_make(d->batch, d->m, d->n, d->k, d->trans_a, d->trans_b, d->dtype, a, b, &chk,
                         &r->cell) != 0) {
    set_error(&g->o, "%s: cannot allocate the reference of C", fn);
    return -1;
  }
  r->checked = (int64_t)chk.n;
  TC_STR_LOCAL(msg);
  r->bad = tc_tune_check(c, d->dtype, chk.idx, chk.want, chk.bound, chk.n, &r->max_abs, &r->worst, &msg);
  snprintf(r->message, sizeof r->message, "%s", tc_str_cstr(&msg));
  if (r->bad)
    set_error(&g->o, "%s: %s", fn, r->message);
  else
    tc_str_clear(&g->o.err);
  tc_gemm_check_free(&chk);
  return r->bad;
}

const char *tc_gemm_perf_config(const tc_gemm *g) { return g ? g->o.config : ""; }
const char *tc_gemm_perf_config_source(const tc_gemm *g) { return g ? g->o.source : ""; }
const char *tc_gemm_perf_config_detail(const tc_gemm *g) {
  return g ? tc_str_cstr(&g->o.detail) : "";
}
const char *tc_gemm_warning(const tc_gemm *g) { return g ? tc_str_cstr(&g->o.warn) : ""; }
const char *tc_gemm_views_describe(const tc_gemm *g) {
  return g && g->have_kernel ? tc_str_cstr(&g->views) : "";
}
int64_t tc_gemm_kernel_smem_bytes(const tc_gemm *g) {
  return g && g->have_kernel ? g->kern.smem_bytes : 0;
}
const char *tc_gemm_kernel_name(const tc_gemm *g) {
  return g && g->have_kernel ? g->kern.name : NULL;
}
const char *tc_gemm_kernel_source(const tc_gemm *g) {
  return g && g->have_kernel ? g->kern.source : NULL;
}

int tc_gemm_kernel_launch(const tc_gemm *g, int64_t grid[3], int64_t block[3]) {
  if (!g || !g->have_kernel) return 0;
  for (int d = 0; d < 3; d++) {
    if (grid) grid[d] = (int64_t)g->kern.grid[d];
    if (block) block[d] = (int64_t)g->kern.block[d];
  }
  return 1;
}
