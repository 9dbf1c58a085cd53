/* tuner.c - times the candidate perf configs of a convolution or a GEMM and
 * keeps the fastest (see tuner.h). */
#define _POSIX_C_SOURCE 200809L
#include "tuner.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/host.h"
#include "../target/target.h"


/* ---- comparing and filling host buffers --------------------------------- */

double tc_tune_bound(double abs_sum, double want, int64_t terms, tc_dtype t) {
  const double u = ldexp(1.0, -24);
  double kk = (double)terms + 1;
  double gamma = kk * u < 0.5 ? kk * u / (1 - kk * u) : INFINITY;
  double bound = gamma * abs_sum + kk * ldexp(1.0, -149);
  if (t == TC_F16) bound += ldexp(1.0, -11) * (fabs(want) + bound) + ldexp(1.0, -25);
  if (t == TC_BF16) bound += ldexp(1.0, -8) * (fabs(want) + bound) + ldexp(1.0, -134);
  return bound;
}

void tc_tune_gemm_reference(int64_t g, int64_t m, int64_t n, int64_t k, int trans_a, int trans_b,
                            tc_dtype t, const void *a, const void *b, const size_t *idx,
                            size_t count, double *want, double *bound) {
  (void)g;
  for (size_t s = 0; s < count; s++) {
    int64_t ci = idx ? (int64_t)idx[s] : (int64_t)s;
    int64_t gi = ci / (m * n), i = ci / n % m, j = ci % n;
    double sum = 0, abs_sum = 0;
    for (int64_t l = 0; l < k; l++) {
      size_t ai = (size_t)(gi * m * k + (trans_a ? l * m + i : i * k + l));
      size_t bi = (size_t)(gi * k * n + (trans_b ? j * k + l : l * n + j));
      double prod = tc_host_read(t, a, ai) * tc_host_read(t, b, bi);
      sum += prod;
      abs_sum += fabs(prod);
    }
    want[s] = sum;
    bound[s] = tc_tune_bound(abs_sum, sum, k, t);
  }
}

int tc_gemm_check_sample(int64_t g, int64_t m, int64_t n, int64_t k, tc_gemm_check *c,
                         int64_t *cell) {
  memset(c, 0, sizeof *c);
  int64_t total = g * m * n, cs = 1;
  if (total * k > TC_CHECK_FULL_MACS) {
    int64_t budget = TC_CHECK_FULL_MACS / k > TC_CHECK_MIN_SAMPLES ? TC_CHECK_FULL_MACS / k
                                                                    : TC_CHECK_MIN_SAMPLES;
    while (g * ((m + cs - 1) / cs) * ((n + cs - 1) / cs) > budget) cs *= 2;
  }
  if (cell) *cell = cs;
  int64_t cm = (m + cs - 1) / cs, cn = (n + cs - 1) / cs;
  c->n = (size_t)(cs == 1 ? total : g * cm * cn);
  if (cs > 1) {
    c->idx = malloc(c->n * sizeof *c->idx);
    if (!c->idx) return -1;
    /* one element per cell, at a pseudo-random place inside it (cells at
     * the edges are clipped to the matrix) */
    uint64_t seed = 0xc0ffee5eedull;
    size_t s = 0;
    for (int64_t gi = 0; gi < g; gi++)
      for (int64_t ci = 0; ci < cm; ci++)
        for (int64_t cj = 0; cj < cn; cj++) {
          seed = seed * 6364136223846793005ull + 1442695040888963407ull;
          int64_t hi = m - ci * cs < cs ? m - ci * cs : cs, wi = n - cj * cs < cs ? n - cj * cs : cs;
          int64_t i = ci * cs + (int64_t)((seed >> 33) % (uint64_t)hi);
          int64_t j = cj * cs + (int64_t)((seed >> 13) % (uint64_t)wi);
          c->idx[s++] = (size_t)((gi * m + i) * n + j);
        }
  }
  return 0;
}

int tc_gemm_check_make(int64_t g, int64_t m, int64_t n, int64_t k, int trans_a, int trans_b,
                       tc_dtype t, const void *a, const void *b, tc_gemm_check *c, int64_t *cell) {
  if (tc_gemm_check_sample(g, m, n, k, c, cell) != 0) return -1;
  c->want = malloc(c->n * sizeof *c->want);
  c->bound = malloc(c->n * sizeof *c->bound);
  if (!c->want || !c->bound) {
    tc_gemm_check_free(c);
    return -1;
  }
  tc_tune_gemm_reference(g, m, n, k, trans_a, trans_b, t, a, b, c->idx, c->n, c->want, c->bound);
  return 0;
}

void tc_gemm_check_free(tc_gemm_check *c) {
  if (!c) return;
  free(c->idx);
  free(c->want);
  free(c->bound);
  memset(c, 0, sizeof *c);
}

int64_t tc_tune_check(const void *got, tc_dtype t, const size_t *idx, const double *want,
                      const double *bound, size_t n, double *max_abs, double *worst, tc_str *msg) {
  int64_t bad = 0;
  size_t first = 0;
  double ma = 0, wr = 0;
  for (size_t i = 0; i < n; i++) {
    double gv = tc_host_read(t, got, idx ? idx[i] : i);
    double e = fabs(gv - want[i]);
    if (!(e <= bound[i])) {
      if (bad == 0) first = i;
      bad++;
    }
    if (!(e <= ma)) ma = isnan(e) ? INFINITY : e;
    double r = bound[i] > 0 ? e / bound[i] : (e > 0 ? INFINITY : 0);
    if (!(r <= wr)) wr = isnan(r) ? INFINITY : r;
  }
  if (max_abs) *max_abs = ma;
  if (worst) *worst = wr;
  if (bad)
    tc_err_set(msg, "%lld of %zu elements out of bound; first at %zu: got %.9g, want %.9g, bound %.3g",
            (long long)bad, n, idx ? idx[first] : first,
            tc_host_read(t, got, idx ? idx[first] : first), want[first], bound[first]);
  else
    tc_err_set(msg, "%zu elements within bound (worst error %.3g of the bound)", n, wr);
  return bad;
}

void tc_tune_fill(void *buf, size_t n, tc_dtype t, uint64_t *seed) {
  for (size_t i = 0; i < n; i++) {
    double v = NAN;
    if (seed) {
      *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
      v = (double)(*seed >> 40) / (double)(1ull << 24) * 2.0 - 1.0; /* [-1, 1) */
    }
    tc_host_write(t, buf, i, v);
  }
}

/* ---- devices and the perf DB --------------------------------------------- */

tc_status tc_tune_device_name(tc_target target, const char *device, char *buf, size_t bufcap,
                              tc_str *err) {
  if (bufcap) buf[0] = 0;
  tc_str name, why;
  tc_str_init(&name);
  tc_str_init(&why);
  tc_status st = tc_rt_device_name(target, device, &name, &why);
  if (st == TC_OK)
    snprintf(buf, bufcap, "%s", tc_str_cstr(&name));
  else
    tc_err_set(err, "%s", tc_str_cstr(&why));
  tc_str_free(&name);
  tc_str_free(&why);
  return st;
}

int tc_tune_lookup(tc_perfdb *db, const char *key, tc_target target, const char *device_name,
                   tc_gemm_params *p, tc_perfdb_entry *e, tc_str *err) {
  tc_perfdb_entry local;
  if (!e) e = &local;
  int found = tc_perfdb_get(db, key, tc_target_name(target), device_name, e, err);
  if (found != 1) return found;
  TC_STR_LOCAL(why);
  memset(p, 0, sizeof *p);
  if (tc_gemm_params_parse(e->perf_config, p, &why) != 0) {
    tc_err_set(err, "perf DB %s: the stored perf config '%s' does not parse: %s",
            tc_perfdb_path(db), e->perf_config, tc_str_cstr(&why));
    return -1;
  }
  return 1;
}

/* ---- the tuning loop ----------------------------------------------------- */

/* Runs one candidate: plans/compiles it, runs it once and then reps timed
 * launches back to back in the same call (tc_launch's repeat: the host
 * gets the first run's result), and checks that result.  Returns 0 with
 * *median (of the timed launches) set, or -1 with note. */
typedef int (*try_fn)(void *ctx, const tc_gemm_params *cand, int reps, double *median, tc_str *note);

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median_of(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Whether a and b are the same perf config (every tuned field of the FMA,
 * XDLOPS, mma.sync and wgmma forms; derived sets). */
static int same_tuned(const tc_gemm_params *a, const tc_gemm_params *b) {
  return a->block_size == b->block_size && a->m_per_block == b->m_per_block &&
         a->n_per_block == b->n_per_block && a->k_per_block == b->k_per_block &&
         a->m_per_thread == b->m_per_thread && a->n_per_thread == b->n_per_thread &&
         a->m_per_wave == b->m_per_wave && a->n_per_wave == b->n_per_wave &&
         a->mfma == b->mfma && a->mma == b->mma;
}

/* Tries the heuristic's choice `first` and then the candidates (skipping a
 * repeat of first), at most max of them; keeps the fastest. */
static tc_status tune_loop(const tc_gemm_params *first, const tc_gemm_params *cands, int ncands,
                           const tc_tune_options *o, try_fn fn, void *ctx, tc_tune_result *r,
                           tc_str *err) {
  int max = o->max_candidates > 0 ? o->max_candidates : TC_TUNE_DEFAULT_MAX;
  int reps = o->reps > 0 ? o->reps : TC_TUNE_DEFAULT_REPS;
  tc_gemm_params *list = tc_xcalloc((size_t)ncands + 1, sizeof *list);
  int n = 0;
  if (first) list[n++] = *first;
  for (int i = 0; i < ncands && n < max; i++)
    if (!first || !same_tuned(first, &cands[i])) list[n++] = cands[i];
  if (n > max) n = max;
  r->candidates = ncands;
  r->tried = n;
  r->best_ms = INFINITY;
  TC_STR_LOCAL(last_note);
  int found = 0;
  for (int i = 0; i < n; i++) {
    char config[64];
    TC_STR_LOCAL(note);
    tc_gemm_params_format(&list[i], config, sizeof config);
    double ms = 0;
    int ok = fn(ctx, &list[i], reps, &ms, &note) == 0;
    if (ok && (!found || ms < r->best_ms)) {
      r->best = list[i];
      r->best_ms = ms;
      snprintf(r->best_config, sizeof r->best_config, "%s", config);
      found = 1;
    }
    if (!ok) {
      r->skipped++;
      tc_err_set(&last_note, "%s: %s", config, tc_str_cstr(&note));
    }
    if (o->progress) {
      tc_tune_event ev = {i + 1, n, config, ok, ms, ok ? "" : tc_str_cstr(&note)};
      o->progress(o->progress_ctx, &ev);
    }
  }
  free(list);
  if (!found) {
    if (n == 0)
      tc_err_set(err, "no valid perf config for this problem");
    else
      tc_err_set(err, "none of the %d perf config%s tried ran correctly (last: %s)", n,
              n == 1 ? "" : "s", tc_str_cstr(&last_note));
    return TC_ERR_COMPILE;
  }
  if (o->db && o->key) {
    TC_STR_LOCAL(store_err);
    if (tc_perfdb_put(o->db, o->key, tc_target_name(o->target), r->device, r->best_config, r->best_ms, &store_err) == 0)
      r->stored = 1;
    else
      snprintf(r->store_err, sizeof r->store_err, "%s", tc_str_cstr(&store_err));
  }
  return TC_OK;
}

/* ---- convolution ---------------------------------------------------------- */

typedef struct conv_ctx {
  const tc_conv_problem *p;
  const tc_tune_options *o;
  const char *device;    /* tc_conv_run's device argument */
  void *buf[3];          /* in, fil, out */
  size_t elems[3];
  int written;           /* index in buf of the buffer the direction writes */
} conv_ctx;

static int conv_try(void *vctx, const tc_gemm_params *cand, int reps, double *median, tc_str *note) {
  conv_ctx *c = vctx;
  tc_conv_plan *plan = NULL;
  TC_STR_LOCAL(why);
  tc_status st = tc_conv_plan_make(c->p, cand, c->o->target, &plan, &why);
  if (st != TC_OK) {
    tc_err_set(note, "does not plan (%s): %s", tc_status_name(st), tc_str_cstr(&why));
    return -1;
  }
  int rc = -1;
  double *t = tc_xcalloc((size_t)reps, sizeof *t);
  /* NaN in the written tensor: an element the kernels miss fails */
  tc_tune_fill(c->buf[c->written], c->elems[c->written], c->p->dtype, NULL);
  st = tc_conv_run(plan, c->device, c->buf[0], c->buf[1], c->buf[2], NULL, reps, t, &why);
  if (st != TC_OK) {
    tc_err_set(note, "%s: %s", tc_status_name(st), tc_str_cstr(&why));
    goto done;
  }
  if (tc_conv_verify(c->p, c->buf[0], c->buf[1], c->buf[2], NULL, &why) != 0) {
    tc_err_set(note, "wrong result: %s", tc_str_cstr(&why));
    goto done;
  }
  *median = median_of(t, reps);
  rc = 0;
done:
  free(t);
  tc_conv_plan_free(plan);
  return rc;
}

tc_status tc_tune_conv(const tc_conv_problem *p, const tc_tune_options *o, tc_tune_result *r,
                       tc_str *err) {
  memset(r, 0, sizeof *r);
  int64_t ho, wo;
  if (tc_conv_check(p, &ho, &wo, err) != 0) return TC_ERR_ARGUMENT;
  tc_status st = tc_tune_device_name(o->target, o->device, r->device, sizeof r->device, err);
  if (st != TC_OK) return st;
  tc_conv_plan *heur = NULL;
  st = tc_conv_plan_make_for(p, NULL, o->target, o->arch, &heur, err);
  if (st != TC_OK) return st;

  /* The candidates of the largest GEMM of the plan. */
  tc_gemm_shape shape;
  memset(&shape, 0, sizeof shape);
  double most = -1;
  const tc_gemm_params *first = NULL;
  for (int i = 0; i < heur->nsteps; i++) {
    const tc_conv_step *s = &heur->steps[i];
    double work = (double)s->gemm_g * (double)s->gemm_m * (double)s->gemm_n * (double)s->gemm_k;
    if (s->gemm_m > 0 && work > most) {
      most = work;
      shape.g = s->gemm_g, shape.m = s->gemm_m, shape.n = s->gemm_n, shape.k = s->gemm_k;
      first = &s->params;
    }
  }
  shape.dtype = p->dtype;
  shape.a_vec_k = shape.a_vec_m = shape.b_vec_k = shape.b_vec_n = shape.c_vec_n = 1;
  tc_gemm_params *cands = NULL;
  int ncands = first ? tc_gemm_candidates_for(&shape, o->target, o->arch, &cands) : 0;

  conv_ctx c;
  memset(&c, 0, sizeof c);
  c.p = p, c.o = o;
  /* tc_conv_run's device: the OpenCL selector, or the CUDA / AMD arch */
  c.device = tc_target_info_of(o->target).device_selector ? o->device : tc_tune_arch(o->target, o->arch);
  c.elems[0] = (size_t)tc_conv_input_elems(p);
  c.elems[1] = (size_t)tc_conv_filter_elems(p);
  c.elems[2] = (size_t)tc_conv_output_elems(p);
  tc_conv_buf wb = tc_conv_written_buf(p->dir);
  c.written = wb == TC_BUF_INPUT ? 0 : wb == TC_BUF_FILTER ? 1 : 2;
  size_t esize = tc_dtype_size(p->dtype);
  uint64_t seed = 0x7115ec5eedull;
  for (int i = 0; i < 3; i++) {
    c.buf[i] = tc_xcalloc(c.elems[i], esize);
    if (i != c.written) tc_tune_fill(c.buf[i], c.elems[i], p->dtype, &seed);
  }

  st = tune_loop(first, cands, ncands, o, conv_try, &c, r, err);
  for (int i = 0; i < 3; i++) free(c.buf[i]);
  free(cands);
  tc_conv_plan_free(heur);
  return st;
}

/* ---- GEMM ----------------------------------------------------------------- */

typedef struct gemm_ctx {
  const tc_gemm_problem *pb;
  const tc_tune_options *o;
  tc_gemm_shape shape;
  tc_cl *cl;                /* OpenCL: opened once */
  const tc_rt_buffer *bufs; /* the caller's */
  void *c_scratch;
  const tc_gemm_check *chk;
} gemm_ctx;

static int gemm_try(void *vctx, const tc_gemm_params *cand, int reps, double *median, tc_str *note) {
  gemm_ctx *g = vctx;
  tc_gemm_params prm = *cand;
  TC_STR_LOCAL(why);
  if (tc_gemm_params_derive(&prm, &g->shape, &why) != 0) {
    tc_err_set(note, "breaks a rule: %s", tc_str_cstr(&why));
    return -1;
  }
  tc_gemm_kernel k;
  memset(&k, 0, sizeof k);
  tc_status st = tc_gemm_generate(g->pb, &prm, g->o->target, "tilec_tune_gemm", &k, &why);
  if (st != TC_OK) {
    tc_err_set(note, "does not generate (%s): %s", tc_status_name(st), tc_str_cstr(&why));
    return -1;
  }
  int rc = -1;
  double *t = tc_xcalloc((size_t)reps, sizeof *t);
  tc_str e;
  tc_str_init(&e);
  tc_rt_buffer b[3];
  for (int i = 0; i < 3; i++) b[i] = g->bufs[i], b[i].copy_back = 0;
  /* the checked run writes into a copy of C (NaN when C is not read); the
   * timed launches after it leave the copy as that one run made it */
  if (g->pb->accumulate)
    memcpy(g->c_scratch, g->bufs[2].host, g->bufs[2].bytes);
  else
    tc_tune_fill(g->c_scratch, g->bufs[2].bytes / tc_dtype_size(g->pb->c_dtype), g->pb->c_dtype, NULL);
  b[2].host = g->c_scratch, b[2].copy_back = 1;
  st = tc_gemm_kernel_run(&k, g->o->target, g->cl, g->o->arch, b, 3, NULL, reps, t, &e);
  if (st != TC_OK) {
    tc_err_set(note, "%s: %s", tc_status_name(st), tc_str_cstr(&e));
    goto done;
  }
  if (g->chk) {
    const tc_gemm_check *c = g->chk;
    if (tc_tune_check(g->c_scratch, g->pb->c_dtype, c->idx, c->want, c->bound, c->n, NULL, NULL,
                      &why) != 0) {
      tc_err_set(note, "wrong result: %s", tc_str_cstr(&why));
      goto done;
    }
  }
  *median = median_of(t, reps);
  rc = 0;
done:
  tc_str_free(&e);
  free(t);
  tc_gemm_kernel_free(&k);
  return rc;
}

tc_status tc_tune_gemm(const tc_gemm_problem *pb, const tc_rt_buffer bufs[3],
                       const tc_gemm_check *chk, const tc_tune_options *o, tc_tune_result *r,
                       tc_str *err) {
  memset(r, 0, sizeof *r);
  gemm_ctx g;
  memset(&g, 0, sizeof g);
  g.pb = pb, g.o = o, g.bufs = bufs, g.chk = chk;
  g.shape = tc_gemm_problem_shape(pb);
  tc_status st;
  if (tc_target_info_of(o->target).device_selector) {
    tc_str e;
    tc_str_init(&e);
    st = tc_cl_open(o->device, &g.cl, &e);
    if (st != TC_OK) {
      tc_err_set(err, "%s", tc_str_cstr(&e));
      tc_str_free(&e);
      return st;
    }
    tc_str_free(&e);
    snprintf(r->device, sizeof r->device, "%s", tc_cl_device_name(g.cl));
  } else {
    st = tc_tune_device_name(o->target, o->device, r->device, sizeof r->device, err);
    if (st != TC_OK) return st;
  }
  tc_gemm_params first;
  TC_STR_LOCAL(why);
  const char *arch = tc_target_ops_arch(o->target, o->arch);
  int have_first =
      tc_gemm_default_for(&g.shape, o->target, arch, &first, NULL, &why) == 0;
  tc_gemm_params *cands = NULL;
  int ncands = tc_gemm_candidates_for(&g.shape, o->target, arch, &cands);
  g.c_scratch = tc_xmalloc(bufs[2].bytes);
  st = tune_loop(have_first ? &first : NULL, cands, ncands, o, gemm_try, &g, r, err);
  if (st != TC_OK && !have_first && ncands == 0)
    tc_err_set(err, "no valid perf config for this GEMM: %s", tc_str_cstr(&why));
  free(g.c_scratch);
  free(cands);
  tc_cl_close(g.cl);
  return st;
}
