/* test_tuner.c - the perf database (src/tune/perfdb.c) and the tuner
 * (src/ops/tuner.c): put/get/overwrite, where the file goes, errors on a
 * path that cannot be opened; the result check and the GEMM reference on
 * hand-computed values; tuning a tiny GEMM and a tiny convolution on the
 * OpenCL device, with the progress callback counted and the winner stored
 * and found again. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "tilec/tilec.h"
#include "layout/coord.h"
#include "ops/conv.h"
#include "ops/gemm.h"
#include "runtime/host.h"
#include "runtime/runtime.h"
#include "tune/params.h"
#include "tune/perfdb.h"
#include "ops/tuner.h"

static char tmpdir[256];

/* an array as a pointer, for TC_CHECK_STR's NULL test */
static const char *str_of(const char *s) { return s; }

static void path_in_tmp(char *buf, size_t cap, const char *rel) {
  snprintf(buf, cap, "%s/%s", tmpdir, rel);
}

static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* ---- perf DB ---------------------------------------------------------------- */

static void test_perfdb_put_get_overwrite(void) {
  char path[512];
  TC_STR_LOCAL(err);
  path_in_tmp(path, sizeof path, "a.sqlite");
  tc_perfdb *db = NULL;
  TC_REQUIRE(tc_perfdb_open(path, 1, &db, &err) == 1, "open: %s", tc_str_cstr(&err));
  TC_CHECK_STR(tc_perfdb_path(db), path);
  TC_CHECK_EQ_INT(tc_perfdb_count(db, &err), 0);

  tc_perfdb_entry e;
  TC_CHECK_EQ_INT(tc_perfdb_get(db, "conv2d -F 1 -n 1", "opencl", "dev A", &e, &err), 0);
  TC_CHECK_EQ_INT(tc_perfdb_put(db, "conv2d -F 1 -n 1", "opencl", "dev A", "64,32,32,4,2,2", 1.5, &err), 0);
  memset(&e, 0, sizeof e);
  TC_CHECK_EQ_INT(tc_perfdb_get(db, "conv2d -F 1 -n 1", "opencl", "dev A", &e, &err), 1);
  TC_CHECK_STR(str_of(e.perf_config), "64,32,32,4,2,2");
  TC_CHECK(e.ms == 1.5, "ms %g", e.ms);
  TC_CHECK_STR(str_of(e.version), TILEC_VERSION);
  TC_CHECK(e.timestamp > 1600000000, "timestamp %lld", (long long)e.timestamp);

  /* the key is all three parts */
  TC_CHECK_EQ_INT(tc_perfdb_get(db, "conv2d -F 1 -n 1", "cuda", "dev A", &e, &err), 0);
  TC_CHECK_EQ_INT(tc_perfdb_get(db, "conv2d -F 1 -n 1", "opencl", "dev B", &e, &err), 0);
  TC_CHECK_EQ_INT(tc_perfdb_get(db, "conv2d -F 1 -n 2", "opencl", "dev A", &e, &err), 0);
  TC_CHECK_EQ_INT(tc_perfdb_put(db, "conv2d -F 1 -n 1", "opencl", "dev B", "256,128,128,16,4,4", 0.25,
                                &err), 0);
  TC_CHECK_EQ_INT(tc_perfdb_count(db, &err), 2);

  /* overwrite: one row per key, the new values */
  TC_CHECK_EQ_INT(tc_perfdb_put(db, "conv2d -F 1 -n 1", "opencl", "dev A", "128,64,64,8,4,4", 0.75, &err), 0);
  TC_CHECK_EQ_INT(tc_perfdb_count(db, &err), 2);
  TC_CHECK_EQ_INT(tc_perfdb_get(db, "conv2d -F 1 -n 1", "opencl", "dev A", &e, &err), 1);
  TC_CHECK_STR(str_of(e.perf_config), "128,64,64,8,4,4");
  TC_CHECK(e.ms == 0.75, "ms %g", e.ms);
  tc_perfdb_close(db);

  /* persists across opens, also when opened without create */
  db = NULL;
  TC_REQUIRE(tc_perfdb_open(path, 0, &db, &err) == 1, "reopen: %s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(tc_perfdb_get(db, "conv2d -F 1 -n 1", "opencl", "dev B", &e, &err), 1);
  TC_CHECK_STR(str_of(e.perf_config), "256,128,128,16,4,4");
  tc_perfdb_close(db);
}

static void test_perfdb_creates_dirs(void) {
  char path[512], dir[512];
  TC_STR_LOCAL(err);
  path_in_tmp(path, sizeof path, "x/y/z/perf.sqlite");
  path_in_tmp(dir, sizeof dir, "x/y/z");
  TC_CHECK(!file_exists(dir), "%s exists before", dir);
  tc_perfdb *db = NULL;
  /* without create: nothing there, nothing made */
  TC_CHECK_EQ_INT(tc_perfdb_open(path, 0, &db, &err), 0);
  TC_CHECK(db == NULL, "db set");
  TC_CHECK(!file_exists(dir), "open without create made %s", dir);
  TC_REQUIRE(tc_perfdb_open(path, 1, &db, &err) == 1, "open: %s", tc_str_cstr(&err));
  TC_CHECK(file_exists(path), "%s not created", path);
  TC_CHECK_EQ_INT(tc_perfdb_put(db, "gemm -M 1", "opencl", "d", "64,32,32,4,2,2", 1, &err), 0);
  tc_perfdb_close(db);
}

static void test_perfdb_unopenable(void) {
  char file[512], path[600];
  TC_STR_LOCAL(err);
  path_in_tmp(file, sizeof file, "plainfile");
  FILE *f = fopen(file, "w");
  TC_REQUIRE(f, "cannot create %s", file);
  fputs("not a database, just some text that SQLite must refuse to read as one\n", f);
  fclose(f);

  /* a directory that cannot be made: a file is in the way */
  snprintf(path, sizeof path, "%s/sub/perf.sqlite", file);
  tc_perfdb *db = NULL;
  tc_str_clear(&err);
  TC_CHECK_EQ_INT(tc_perfdb_open(path, 1, &db, &err), -1);
  TC_CHECK(db == NULL, "db set");
  TC_CHECK(strstr(tc_str_cstr(&err), file) != NULL, "message does not name the path: %s", tc_str_cstr(&err));
  TC_CHECK(strchr(tc_str_cstr(&err), '\n') == NULL, "message is not one line: %s", tc_str_cstr(&err));

  /* a file that is not a database */
  tc_str_clear(&err);
  TC_CHECK_EQ_INT(tc_perfdb_open(file, 1, &db, &err), -1);
  TC_CHECK(strstr(tc_str_cstr(&err), "not a database") != NULL, "message: %s", tc_str_cstr(&err));
  TC_CHECK(strstr(tc_str_cstr(&err), file) != NULL, "message does not name the path: %s", tc_str_cstr(&err));

  /* a directory */
  tc_str_clear(&err);
  TC_CHECK_EQ_INT(tc_perfdb_open(tmpdir, 1, &db, &err), -1);
  TC_CHECK(strstr(tc_str_cstr(&err), "directory") != NULL, "message: %s", tc_str_cstr(&err));
}

static void test_perfdb_default_path(void) {
  char *saved[3];
  const char *names[3] = {"TILEC_PERFDB", "XDG_DATA_HOME", "HOME"};
  for (int i = 0; i < 3; i++) {
    const char *v = getenv(names[i]);
    saved[i] = v ? strdup(v) : NULL;
  }
  char buf[512];
  setenv("TILEC_PERFDB", "/p/db.sqlite", 1);
  setenv("XDG_DATA_HOME", "/xdg", 1);
  setenv("HOME", "/home/u", 1);
  TC_CHECK_EQ_INT(tc_perfdb_default_path(buf, sizeof buf), 0);
  TC_CHECK_STR(str_of(buf), "/p/db.sqlite");
  unsetenv("TILEC_PERFDB");
  TC_CHECK_EQ_INT(tc_perfdb_default_path(buf, sizeof buf), 0);
  TC_CHECK_STR(str_of(buf), "/xdg/tilec/perfdb.sqlite");
  setenv("XDG_DATA_HOME", "", 1);
  TC_CHECK_EQ_INT(tc_perfdb_default_path(buf, sizeof buf), 0);
  TC_CHECK_STR(str_of(buf), "/home/u/.local/share/tilec/perfdb.sqlite");
  unsetenv("XDG_DATA_HOME");
  unsetenv("HOME");
  TC_CHECK_EQ_INT(tc_perfdb_default_path(buf, sizeof buf), -1);
  TC_CHECK_STR(str_of(buf), "");
  tc_perfdb *db = NULL;
  TC_STR_LOCAL(err);
  TC_CHECK_EQ_INT(tc_perfdb_open(NULL, 1, &db, &err), -1);
  TC_CHECK(strstr(tc_str_cstr(&err), "TILEC_PERFDB") != NULL, "message: %s", tc_str_cstr(&err));
  /* too long for the buffer */
  setenv("TILEC_PERFDB", "/a/rather/long/path.sqlite", 1);
  TC_CHECK_EQ_INT(tc_perfdb_default_path(buf, 8), -1);
  for (int i = 0; i < 3; i++) {
    if (saved[i]) setenv(names[i], saved[i], 1); else unsetenv(names[i]);
    free(saved[i]);
  }
}

/* ---- checking results -------------------------------------------------------- */

static void test_gemm_reference(void) {
  /* A = [[1, 2, 3], [4, 5, 6]] (M 2, K 3), B = [[1, 0], [0, 1], [2, -1]]
   * (K 3, N 2): C = [[7, -1], [16, -1]] */
  float a[6] = {1, 2, 3, 4, 5, 6}, at[6] = {1, 4, 2, 5, 3, 6};
  float b[6] = {1, 0, 0, 1, 2, -1}, bt[6] = {1, 0, 2, 0, 1, -1};
  const double c[4] = {7, -1, 16, -1};
  double want[4], bound[4];
  for (int t = 0; t < 4; t++) {
    int ta = t & 1, tb = t >> 1;
    tc_tune_gemm_reference(1, 2, 2, 3, ta, tb, TC_F32, ta ? at : a, tb ? bt : b, NULL, 4, want,
                           bound);
    for (int i = 0; i < 4; i++) {
      TC_CHECK(want[i] == c[i], "transA %d transB %d: C[%d] = %g, want %g", ta, tb, i, want[i], c[i]);
      TC_CHECK(bound[i] > 0 && bound[i] < 1e-5, "bound[%d] = %g", i, bound[i]);
    }
  }
  /* two groups: the second is the first times 2 */
  float a2[12], b2[12];
  for (int i = 0; i < 6; i++) a2[i] = a[i], a2[6 + i] = 2 * a[i], b2[i] = b[i], b2[6 + i] = b[i];
  double w2[8], bd2[8];
  tc_tune_gemm_reference(2, 2, 2, 3, 0, 0, TC_F32, a2, b2, NULL, 8, w2, bd2);
  for (int i = 0; i < 4; i++) TC_CHECK(w2[4 + i] == 2 * c[i], "group 1: C[%d] = %g", i, w2[4 + i]);
}

/* A GEMM past TC_CHECK_FULL_MACS is checked on a sample: G 1, M = N =
 * 100, K = 2^17 has 1.31e9 multiply-adds > 2^30, a budget of max(4096,
 * 2^30 / 2^17 = 8192) = 8192 cells; side 1 gives 10000 cells, side 2
 * gives 50 x 50 = 2500: one element in each 2 x 2 cell. */
static void test_check_sampled(void) {
  const int64_t M = 100, N = 100, K = 1 << 17;
  float *a = malloc((size_t)(M * K) * 4), *b = malloc((size_t)(K * N) * 4);
  float *c = malloc((size_t)(M * N) * 4);
  TC_REQUIRE(a && b && c, "memory");
  uint64_t seed = 7;
  tc_tune_fill(a, (size_t)(M * K), TC_F32, &seed);
  tc_tune_fill(b, (size_t)(K * N), TC_F32, &seed);
  tc_gemm_check chk;
  int64_t cell = 0;
  TC_REQUIRE(tc_gemm_check_make(1, M, N, K, 0, 0, TC_F32, a, b, &chk, &cell) == 0, "make");
  TC_CHECK_EQ_INT((int)cell, 2);
  TC_REQUIRE(chk.n == 2500 && chk.idx, "%zu samples", chk.n);
  /* each cell (ci, cj) has exactly one sample, inside it */
  static unsigned char seen[50][50];
  memset(seen, 0, sizeof seen);
  for (size_t s = 0; s < chk.n; s++) {
    int64_t i = (int64_t)chk.idx[s] / N, j = (int64_t)chk.idx[s] % N;
    TC_REQUIRE(i < M && j < N, "sample %zu outside C", s);
    seen[i / 2][j / 2]++;
  }
  int once = 1;
  for (int i = 0; i < 50; i++)
    for (int j = 0; j < 50; j++) once &= seen[i][j] == 1;
  TC_CHECK(once, "one sample per 2x2 cell");
  /* the reference at a few samples, summed here in double */
  for (size_t s = 0; s < chk.n; s += 499) {
    int64_t i = (int64_t)chk.idx[s] / N, j = (int64_t)chk.idx[s] % N;
    double sum = 0;
    for (int64_t l = 0; l < K; l++) sum += (double)a[i * K + l] * (double)b[l * N + j];
    TC_CHECK(chk.want[s] == sum, "sample %zu: want %.17g, sum %.17g", s, chk.want[s], sum);
  }
  /* C right at the samples (NaN elsewhere) passes; a wrong 2x2 cell fails
   * and is named by its offset */
  for (int64_t i = 0; i < M * N; i++) c[i] = NAN;
  for (size_t s = 0; s < chk.n; s++) c[chk.idx[s]] = (float)chk.want[s];
  TC_STR_LOCAL(msg);
  TC_CHECK_EQ_INT(tc_tune_check(c, TC_F32, chk.idx, chk.want, chk.bound, chk.n, NULL, NULL, &msg), 0);
  for (int64_t i = 40; i < 42; i++)
    for (int64_t j = 60; j < 62; j++) c[i * N + j] += 1e4f; /* the bound is about 256 */
  TC_CHECK_EQ_INT(tc_tune_check(c, TC_F32, chk.idx, chk.want, chk.bound, chk.n, NULL, NULL, &msg), 1);
  char want_msg[64];
  size_t hit = 0;
  for (size_t s = 0; s < chk.n; s++)
    if (chk.idx[s] / (size_t)N / 2 == 20 && chk.idx[s] % (size_t)N / 2 == 30) hit = chk.idx[s];
  snprintf(want_msg, sizeof want_msg, "first at %zu:", hit);
  TC_CHECK(strstr(tc_str_cstr(&msg), want_msg) != NULL, "msg '%s', want '%s'", tc_str_cstr(&msg), want_msg);
  tc_gemm_check_free(&chk);
  free(a), free(b), free(c);
}

static void test_check_and_bound(void) {
  /* the bound: gamma_{K+1} * sum|products| */
  double u = ldexp(1.0, -24);
  double b = tc_tune_bound(100, 10, 9, TC_F32);
  TC_CHECK(fabs(b - (10 * u / (1 - 10 * u)) * 100) < 1e-12, "bound %g", b);
  TC_CHECK(tc_tune_bound(100, 10, 9, TC_F16) > b + 10 * ldexp(1.0, -11) - 1e-9, "f16 bound");

  float got[4] = {1, 2, 3, 4};
  double want[4] = {1, 2, 3, 4}, bound[4] = {1e-6, 1e-6, 1e-6, 1e-6};
  double max_abs = -1, worst = -1;
  TC_STR_LOCAL(msg);
  TC_CHECK_EQ_INT(tc_tune_check(got, TC_F32, NULL, want, bound, 4, &max_abs, &worst, &msg), 0);
  TC_CHECK(max_abs == 0 && worst == 0, "max_abs %g worst %g", max_abs, worst);
  got[2] = 3.5f;
  TC_CHECK_EQ_INT(tc_tune_check(got, TC_F32, NULL, want, bound, 4, &max_abs, &worst, &msg), 1);
  TC_CHECK(max_abs == 0.5, "max_abs %g", max_abs);
  TC_CHECK(strstr(tc_str_cstr(&msg), "first at 2") != NULL, "msg: %s", tc_str_cstr(&msg));
  got[2] = NAN;
  TC_CHECK_EQ_INT(tc_tune_check(got, TC_F32, NULL, want, bound, 4, &max_abs, &worst, &msg), 1);
  TC_CHECK(isinf(max_abs), "NaN must count as an infinite error, got %g", max_abs);

  /* fill: values in [-1, 1), or NaN */
  uint16_t h[64];
  uint64_t seed = 1;
  tc_tune_fill(h, 64, TC_F16, &seed);
  int distinct = 0;
  for (int i = 0; i < 64; i++) {
    double v = tc_host_read(TC_F16, h, (size_t)i);
    TC_CHECK(v >= -1 && v <= 1, "h[%d] = %g", i, v);
    distinct += i > 0 && h[i] != h[i - 1];
  }
  TC_CHECK(distinct > 50, "only %d changes in 64 values", distinct);
  tc_tune_fill(h, 4, TC_F16, NULL);
  TC_CHECK(isnan(tc_host_read(TC_F16, h, 3)), "not NaN");
}

/* ---- tuning on the device ------------------------------------------------------ */

typedef struct progress_log {
  int calls, ok, last_index, total, in_order;
} progress_log;

static void count_progress(void *ctx, const tc_tune_event *ev) {
  progress_log *l = ctx;
  l->calls++;
  l->ok += ev->ok;
  if (ev->index != l->last_index + 1) l->in_order = 0;
  l->last_index = ev->index;
  l->total = ev->total;
}

static int have_opencl(char *why, size_t cap) {
  tc_str e;
  tc_str_init(&e);
  tc_cl *cl = NULL;
  int ok = tc_cl_open(NULL, &cl, &e) == TC_OK;
  snprintf(why, cap, "%s", tc_str_cstr(&e));
  tc_cl_close(cl);
  tc_str_free(&e);
  return ok;
}

static void test_tune_gemm(void) {
  char why[512];
  if (!have_opencl(why, sizeof why)) TC_SKIP("no OpenCL device: %s", why);
  /* C[40, 24] = A[40, 20] * B[20, 24], A row-major [M][K] seen as [G, K, M] */
  const int64_t M = 40, N = 24, K = 20;
  int64_t ea[3] = {1, M, K}, eb[3] = {1, K, N}, ec[3] = {1, M, N};
  const char *na[3] = {"g", "m", "k"}, *nb[3] = {"g", "k", "n"}, *nc[3] = {"g", "m", "n"};
  tc_view *va = tc_view_new(3, ea, NULL, na), *vb = tc_view_new(3, eb, NULL, nb),
          *vc = tc_view_new(3, ec, NULL, nc);
  const int perm[3] = {0, 2, 1};
  TC_REQUIRE(va && vb && vc && tc_view_reorder(va, perm) == 0, "views");
  tc_gemm_problem pb;
  memset(&pb, 0, sizeof pb);
  pb.a = va, pb.b = vb, pb.c = vc;
  pb.a_dtype = pb.b_dtype = pb.c_dtype = TC_F32;
  pb.alpha = 1;
  float *a = calloc((size_t)(M * K), 4), *b = calloc((size_t)(K * N), 4), *c = calloc((size_t)(M * N), 4);
  uint64_t seed = 42;
  tc_tune_fill(a, (size_t)(M * K), TC_F32, &seed);
  tc_tune_fill(b, (size_t)(K * N), TC_F32, &seed);
  tc_gemm_check chk;
  TC_REQUIRE(tc_gemm_check_make(1, M, N, K, 0, 0, TC_F32, a, b, &chk, NULL) == 0, "reference");
  TC_CHECK(chk.idx == NULL && chk.n == (size_t)(M * N), "a small GEMM checks every element");
  for (int i = 0; i < M * N; i++) c[i] = 12345; /* must stay as it is */
  tc_rt_buffer bufs[3] = {{a, (size_t)(M * K) * 4, 0}, {b, (size_t)(K * N) * 4, 0},
                          {c, (size_t)(M * N) * 4, 1}};

  char path[512];

  TC_STR_LOCAL(err);
  path_in_tmp(path, sizeof path, "tune/gemm.sqlite");
  tc_perfdb *db = NULL;
  TC_REQUIRE(tc_perfdb_open(path, 1, &db, &err) == 1, "open: %s", tc_str_cstr(&err));
  progress_log log = {0, 0, 0, 0, 1};
  tc_tune_options o;
  memset(&o, 0, sizeof o);
  o.target = TC_TARGET_OPENCL;
  o.max_candidates = 3;
  o.reps = 2;
  o.progress = count_progress, o.progress_ctx = &log;
  o.db = db, o.key = "gemm -g 1 -M 40 -N 24 -K 20 --transA 0 --transB 0 -t f32";
  tc_tune_result r;
  tc_status st = tc_tune_gemm(&pb, bufs, &chk, &o, &r, &err);
  TC_CHECK(st == TC_OK, "tune: %s: %s", tc_status_name(st), tc_str_cstr(&err));
  if (st == TC_OK) {
    tc_gemm_shape shape = tc_gemm_problem_shape(&pb);
    TC_CHECK(r.candidates >= 1, "candidates %d", r.candidates);
    int expect_tried = r.candidates < 3 ? r.candidates : 3;
    TC_CHECK(r.tried >= expect_tried && r.tried <= 3, "tried %d of %d", r.tried, r.candidates);
    TC_CHECK_EQ_INT(log.calls, r.tried);
    TC_CHECK_EQ_INT(log.total, r.tried);
    TC_CHECK(log.in_order, "progress indices not 1, 2, ...");
    TC_CHECK_EQ_INT(log.ok, r.tried - r.skipped);
    TC_CHECK(r.best_ms > 0 && isfinite(r.best_ms), "best %g ms", r.best_ms);
    TC_CHECK(r.stored, "not stored: %s", r.store_err);
    TC_CHECK(r.device[0] != 0, "no device name");
    for (int i = 0; i < M * N; i++)
      if (c[i] != 12345) {
        TC_CHECK(0, "the caller's C was changed at %d", i);
        break;
      }
    /* the winner is found again under the same key, and it fits */
    tc_gemm_params p;
    tc_perfdb_entry e;
    TC_CHECK_EQ_INT(tc_tune_lookup(db, o.key, TC_TARGET_OPENCL, r.device, &p, &e, &err), 1);
    char cfg[64];
    tc_gemm_params_format(&p, cfg, sizeof cfg);
    TC_CHECK_STR(str_of(cfg), r.best_config);
    TC_CHECK(e.ms == r.best_ms, "stored %g, best %g", e.ms, r.best_ms);
    TC_CHECK(tc_gemm_params_derive(&p, &shape, &err) == 0, "stored config: %s", tc_str_cstr(&err));
    /* and nothing under another device or target */
    TC_CHECK_EQ_INT(tc_tune_lookup(db, o.key, TC_TARGET_CUDA, r.device, &p, &e, &err), 0);

    /* reused: the stored config generates a kernel that gives the right C */
    tc_gemm_kernel k;
    memset(&k, 0, sizeof k);
    st = tc_gemm_generate(&pb, &p, TC_TARGET_OPENCL, "reuse", &k, &err);
    TC_CHECK(st == TC_OK, "generate: %s", tc_str_cstr(&err));
    if (st == TC_OK) {
      tc_cl *cl = NULL;
      tc_str es;
      tc_str_init(&es);
      tc_launch l = {{0}};
      memset(&l, 0, sizeof l);
      for (int d = 0; d < 3; d++) l.grid[d] = k.grid[d], l.block[d] = k.block[d];
      st = tc_cl_open(NULL, &cl, &es);
      if (st == TC_OK) st = tc_cl_run(cl, k.source, k.name, bufs, 3, &l, NULL, &es);
      TC_CHECK(st == TC_OK, "run: %s", tc_str_cstr(&es));
      if (st == TC_OK)
        TC_CHECK_EQ_INT(tc_tune_check(c, TC_F32, NULL, chk.want, chk.bound, chk.n, NULL, NULL, &err), 0);
      tc_cl_close(cl);
      tc_str_free(&es);
      tc_gemm_kernel_free(&k);
    }
  }
  /* a wrong reference: every candidate is skipped, none is stored */
  for (size_t i = 0; i < chk.n; i++) chk.want[i] += 1;
  progress_log log2 = {0, 0, 0, 0, 1};
  o.progress_ctx = &log2;
  o.max_candidates = 2;
  o.key = "gemm wrong";
  st = tc_tune_gemm(&pb, bufs, &chk, &o, &r, &err);
  TC_CHECK(st != TC_OK, "tuning against a wrong reference succeeded");
  TC_CHECK(strstr(tc_str_cstr(&err), "wrong result") != NULL, "message: %s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(log2.ok, 0);
  TC_CHECK(log2.calls >= 1, "no progress calls");
  tc_perfdb_entry e;
  TC_CHECK_EQ_INT(tc_perfdb_get(db, "gemm wrong", "opencl", r.device, &e, &err), 0);

  tc_perfdb_close(db);
  tc_view_free(va), tc_view_free(vb), tc_view_free(vc);
  free(a), free(b), free(c);
  tc_gemm_check_free(&chk);
}

static void test_tune_conv(void) {
  char why[512];
  if (!have_opencl(why, sizeof why)) TC_SKIP("no OpenCL device: %s", why);
  tc_conv_problem p;
  tc_conv_problem_init(&p);
  p.n = 1, p.c = 4, p.h = 6, p.w = 6, p.k = 8, p.y = 3, p.x = 3;
  p.pad_h_l = p.pad_h_r = p.pad_w_l = p.pad_w_r = 1;
  tc_str key;
  tc_str_init(&key);
  tc_conv_problem_string(&p, &key);
  char path[512];
  TC_STR_LOCAL(err);
  path_in_tmp(path, sizeof path, "tune/conv.sqlite");
  tc_perfdb *db = NULL;
  TC_REQUIRE(tc_perfdb_open(path, 1, &db, &err) == 1, "open: %s", tc_str_cstr(&err));
  progress_log log = {0, 0, 0, 0, 1};
  tc_tune_options o;
  memset(&o, 0, sizeof o);
  o.target = TC_TARGET_OPENCL;
  o.max_candidates = 2;
  o.reps = 1;
  o.progress = count_progress, o.progress_ctx = &log;
  o.db = db, o.key = tc_str_cstr(&key);
  tc_tune_result r;
  tc_status st = tc_tune_conv(&p, &o, &r, &err);
  TC_CHECK(st == TC_OK, "tune: %s: %s", tc_status_name(st), tc_str_cstr(&err));
  if (st == TC_OK) {
    TC_CHECK_EQ_INT(log.calls, r.tried);
    TC_CHECK(r.tried >= 1 && r.tried <= 2, "tried %d", r.tried);
    TC_CHECK(r.stored, "not stored: %s", r.store_err);
    tc_gemm_params q;
    TC_CHECK_EQ_INT(tc_tune_lookup(db, tc_str_cstr(&key), TC_TARGET_OPENCL, r.device, &q, NULL, &err), 1);
    /* the stored config plans the problem */
    tc_conv_plan *plan = NULL;
    st = tc_conv_plan_make(&p, &q, TC_TARGET_OPENCL, &plan, &err);
    TC_CHECK(st == TC_OK, "plan with the stored config: %s", tc_str_cstr(&err));
    tc_conv_plan_free(plan);
  }
  /* an impossible problem is refused before anything runs */
  p.c = 6, p.groups = 4;
  log.calls = 0;
  st = tc_tune_conv(&p, &o, &r, &err);
  TC_CHECK(st == TC_ERR_ARGUMENT, "status %s", tc_status_name(st));
  TC_CHECK(strstr(tc_str_cstr(&err), "divisible") != NULL, "message: %s", tc_str_cstr(&err));
  TC_CHECK_EQ_INT(log.calls, 0);
  tc_perfdb_close(db);
  tc_str_free(&key);
}

/* The perf DB's device names: HIP's is the AMD GPU's (hipDeviceGetName),
 * or TC_ERR_NO_DEVICE with "no AMD GPU: ..." as the runtime says; a
 * target without a runtime is TC_ERR_UNSUPPORTED. */
static void test_device_name(void) {
  char name[256];
  TC_STR_LOCAL(err);
  tc_hip_device d;
  tc_str why;
  tc_str_init(&why);
  int gpu = tc_hip_device_get(&d, &why);
  tc_status st = tc_tune_device_name(TC_TARGET_HIP, NULL, name, sizeof name, &err);
  if (gpu)
    TC_CHECK(st == TC_OK && strcmp(name, d.name) == 0, "hip: %s: '%s', want '%s'",
             tc_status_name(st), name, d.name);
  else
    TC_CHECK(st == TC_ERR_NO_DEVICE && strcmp(tc_str_cstr(&err), tc_str_cstr(&why)) == 0 &&
                 strncmp(tc_str_cstr(&err), "no AMD GPU: ", 12) == 0,
             "hip: %s: %s", tc_status_name(st), tc_str_cstr(&err));
  tc_str_free(&why);
  st = tc_tune_device_name((tc_target)42, NULL, name, sizeof name, &err);
  TC_CHECK(st == TC_ERR_UNSUPPORTED && strstr(tc_str_cstr(&err), "not available") != NULL, "target 42: %s: %s",
           tc_status_name(st), tc_str_cstr(&err));
  st = tc_tune_device_name(TC_TARGET_OPENCL, "no-such-device-anywhere", name, sizeof name,
                                     &err);
  TC_CHECK(st != TC_OK, "a selector that matches nothing gave '%s'", name);
  TC_CHECK(strstr(tc_str_cstr(&err), "no-such-device-anywhere") != NULL, "message: %s", tc_str_cstr(&err));
}

static void remove_tree(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

int main(void) {
  const char *t = getenv("TMPDIR");
  snprintf(tmpdir, sizeof tmpdir, "%s/tilec_tuner_XXXXXX", t && *t ? t : "/tmp");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  TC_RUN(test_perfdb_put_get_overwrite);
  TC_RUN(test_perfdb_creates_dirs);
  TC_RUN(test_perfdb_unopenable);
  TC_RUN(test_perfdb_default_path);
  TC_RUN(test_gemm_reference);
  TC_RUN(test_check_and_bound);
  TC_RUN(test_check_sampled);
  TC_RUN(test_device_name);
  TC_RUN(test_tune_gemm);
  TC_RUN(test_tune_conv);
  remove_tree(tmpdir);
  TC_MAIN_END();
}
