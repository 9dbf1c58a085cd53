/* test_cache.c - the structural hash of a scheduled fusion (src/ir/hash.c)
 * and the on-disk kernel cache (src/runtime/cache.c, tc_compile,
 * tc_kernel_build): equal schedules built in separate fusions hash equal and
 * any schedule change changes the hash; a first compile misses and stores,
 * a second (fresh fusion, same calls) hits and gives back the same kernel
 * byte for byte, which still runs and verifies on OpenCL; TILEC_CACHE=0
 * turns the cache off; corrupt, truncated or mismatched entries are misses
 * and get replaced; an unwritable directory never fails a compile; stats
 * and clear; the directory from TILEC_CACHE_DIR / XDG_CACHE_HOME / HOME;
 * processes racing on one entry; and for CUDA (skipped without NVRTC) a
 * second build reuses the cached PTX instead of running NVRTC, and PTX made
 * by another NVRTC version is not reused.
 *
 * Every test runs in its own directory under one mkdtemp directory set
 * through TILEC_CACHE_DIR before the first call; nothing touches the real
 * home cache. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "demo/examples.h"
#include "ir/fusion.h"
#include "runtime/cache.h"
#include "runtime/runtime.h"
#include "test.h"
#include "tilec/tilec.h"

static char base_dir[256];

/* Points TILEC_CACHE_DIR at base_dir/name (created by the cache on
 * demand); returns the path (static buffer). */
static const char *use_dir(const char *name) {
  static char dir[512];
  snprintf(dir, sizeof dir, "%s/%s", base_dir, name);
  setenv("TILEC_CACHE_DIR", dir, 1);
  unsetenv("TILEC_CACHE");
  return dir;
}

static tc_cache_stats stats(void) {
  tc_cache_stats s;
  tc_cache_get_stats(&s);
  return s;
}

/* The one entry file in dir (path into buf); 0 unless there is exactly one. */
static int only_entry(const char *dir, char *buf, size_t cap) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    size_t len = strlen(de->d_name);
    if (len > 4 && strcmp(de->d_name + len - 4, ".tck") == 0) {
      n++;
      snprintf(buf, cap, "%s/%s", dir, de->d_name);
    }
  }
  closedir(d);
  return n == 1;
}

static char *slurp(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  fseek(fp, 0, SEEK_END);
  long n = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  size_t got = fread(buf, 1, (size_t)n, fp);
  fclose(fp);
  buf[got] = 0;
  if (len) *len = got;
  return buf;
}

static void spit(const char *path, const char *data, size_t len) {
  FILE *fp = fopen(path, "wb");
  if (!fp) return;
  fwrite(data, 1, len, fp);
  fclose(fp);
}

/* ---- a schedule with knobs ------------------------------------------------ */

typedef struct knobs {
  int64_t rows, split;
  int inner_split;
  tc_ptype inner_p;
  tc_memtype mem;
  int ca;
  tc_dtype dtype;
  tc_unary_op op;
} knobs;

static const knobs base_knobs = {16, 8, 1, TC_TIDX, TC_MEM_SHARED, 1, TC_F32, TC_RELU};

/* out = op(set(in)) on [rows, 32]: out split [rows, 32/split, split] with
 * rows on BIDx and the inner axis on inner_p, propagated; the staged copy
 * in `mem`, inlined at `ca`. */
static int build_failures; /* schedule calls that failed in build() */

static tc_fusion *build(const knobs *k) {
  tc_fusion *f = tc_fusion_new();
  int64_t shape[2] = {k->rows, 32};
  tc_tensor *in = tc_input(f, k->dtype, 2, shape);
  tc_tensor *s = tc_set(f, in);
  tc_tensor *out = tc_unary(f, k->op, s);
  tc_status st = tc_add_output(f, out);
  st |= tc_split(out, 1, k->split, k->inner_split);
  st |= tc_propagate_transforms(out);
  st |= tc_parallelize(out, 0, TC_BIDX);
  st |= tc_parallelize(out, 2, k->inner_p);
  st |= tc_parallelize_all_like(out);
  st |= tc_set_memory_type(s, k->mem);
  st |= tc_inline_at(s, k->ca);
  if (st) {
    build_failures++;
    fprintf(stderr, "build: %s\n", tc_fusion_error(f));
  }
  return f;
}

static void hash_of(tc_fusion *f, tc_target t, const char *arch, const char *name, char out[33]) {
  tc_fusion_hash(f, t, arch, name, out);
}

/* ---- the hash --------------------------------------------------------------- */

static void test_hash_equal_across_fusions(void) {
  int n = tc_example_count();
  char (*keys)[33] = calloc((size_t)n, 33);
  for (int i = 0; i < n; i++) {
    const tc_example *e = tc_example_get(i);
    tc_fusion *a = e->build(), *b = e->build();
    char ka[33], kb[33];
    hash_of(a, TC_TARGET_OPENCL, NULL, e->name, ka);
    hash_of(b, TC_TARGET_OPENCL, NULL, e->name, kb);
    TC_CHECK(strcmp(ka, kb) == 0, "%s: %s != %s", e->name, ka, kb);
    TC_CHECK(strlen(ka) == 32 && strspn(ka, "0123456789abcdef") == 32, "hex: %s", ka);
    /* the same hash after a compile: tc_compile does not change the fusion */
    tc_compile_options o = {TC_TARGET_OPENCL, NULL, e->name};
    tc_status st;
    setenv("TILEC_CACHE", "0", 1);
    tc_kernel *k = tc_compile(a, &o, &st);
    unsetenv("TILEC_CACHE");
    TC_CHECK(k != NULL, "%s: %s", e->name, tc_fusion_error(a));
    tc_kernel_free(k);
    hash_of(a, TC_TARGET_OPENCL, NULL, e->name, ka);
    TC_CHECK(strcmp(ka, kb) == 0, "%s: hash changed by tc_compile", e->name);
    memcpy(keys[i], ka, 33);
    tc_fusion_free(a), tc_fusion_free(b);
  }
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      TC_CHECK(strcmp(keys[i], keys[j]) != 0, "examples %d and %d hash equal", i, j);
  free(keys);
}

static void test_hash_options(void) {
  tc_fusion *f = build(&base_knobs);
  char k[6][33];
  hash_of(f, TC_TARGET_OPENCL, NULL, "k", k[0]);
  hash_of(f, TC_TARGET_CUDA, NULL, "k", k[1]);
  hash_of(f, TC_TARGET_CUDA, "sm_90a", "k", k[2]);
  hash_of(f, TC_TARGET_CUDA, "sm_80", "k", k[3]);
  hash_of(f, TC_TARGET_OPENCL, NULL, "k2", k[4]);
  hash_of(f, TC_TARGET_OPENCL, "", "k", k[5]);
  for (int i = 0; i < 6; i++)
    for (int j = i + 1; j < 6; j++) TC_CHECK(strcmp(k[i], k[j]) != 0, "options %d and %d", i, j);
  tc_fusion_free(f);
}

static void test_hash_schedule_changes(void) {
  knobs v[12];
  for (int i = 0; i < 12; i++) v[i] = base_knobs;
  v[1].split = 4;               /* a split factor */
  v[2].inner_split = 0;         /* outer instead of inner split */
  v[3].inner_p = TC_TIDY;       /* a parallel type */
  v[4].inner_p = TC_SERIAL;
  v[5].mem = TC_MEM_LOCAL;      /* a memory type */
  v[6].ca = 2;                  /* an inline position */
  v[7].ca = 0;
  v[8].rows = 17;               /* a shape */
  v[9].dtype = TC_F16;          /* a dtype */
  v[10].op = TC_EXP;            /* an op */
  v[11].split = 16;
  char k[13][33];
  for (int i = 0; i < 12; i++) {
    tc_fusion *f = build(&v[i]);
    hash_of(f, TC_TARGET_OPENCL, NULL, "k", k[i]);
    tc_fusion_free(f);
  }
  /* a change made after the schedule: the ldst type of the staged copy */
  tc_fusion *f = build(&base_knobs);
  tc_set_ldst_type(f->tensors[1], TC_LDST_CP_ASYNC);
  hash_of(f, TC_TARGET_OPENCL, NULL, "k", k[12]);
  tc_fusion_free(f);
  TC_CHECK_EQ_INT(build_failures, 0);
  for (int i = 0; i < 13; i++)
    for (int j = i + 1; j < 13; j++)
      TC_CHECK(strcmp(k[i], k[j]) != 0, "variants %d and %d hash equal (%s)", i, j, k[i]);
}

static void test_build_fingerprint(void) {
  uint64_t fp = tc_cache_build_fingerprint();
  TC_CHECK(fp != 0, "this test binary is found in /proc/self/maps");
  TC_CHECK(tc_cache_build_fingerprint() == fp, "stable");
  tc_fusion *f = build(&base_knobs), *g = build(&base_knobs);
  char kf[33], kg[33], hf[33];
  tc_cache_key(f, TC_TARGET_OPENCL, NULL, "k", kf);
  tc_cache_key(g, TC_TARGET_OPENCL, NULL, "k", kg);
  tc_fusion_hash(f, TC_TARGET_OPENCL, NULL, "k", hf);
  TC_CHECK(strcmp(kf, kg) == 0, "equal keys");
  TC_CHECK(strcmp(kf, hf) != 0, "the key is not the bare fusion hash");
  tc_fusion_free(f), tc_fusion_free(g);
}

static void test_hasher(void) {
  tc_hasher a, b;
  char ha[33], hb[33];
  tc_hasher_init(&a), tc_hasher_init(&b);
  tc_hasher_str(&a, "ab"), tc_hasher_str(&a, "c");
  tc_hasher_str(&b, "a"), tc_hasher_str(&b, "bc");
  tc_hasher_hex(&a, ha), tc_hasher_hex(&b, hb);
  TC_CHECK(strcmp(ha, hb) != 0, "length-prefixed strings: %s", ha);
  tc_hasher_init(&a), tc_hasher_init(&b);
  tc_hasher_str(&a, NULL), tc_hasher_str(&b, "");
  tc_hasher_hex(&a, ha), tc_hasher_hex(&b, hb);
  TC_CHECK(strcmp(ha, hb) != 0, "NULL vs \"\"");
  tc_hasher_init(&a), tc_hasher_init(&b);
  tc_hasher_u64(&a, 1), tc_hasher_u64(&a, 2);
  tc_hasher_u64(&b, 2), tc_hasher_u64(&b, 1);
  tc_hasher_hex(&a, ha), tc_hasher_hex(&b, hb);
  TC_CHECK(strcmp(ha, hb) != 0, "order matters");
}

/* ---- the cache -------------------------------------------------------------- */

/* Runs the kernel on OpenCL and compares with the host reference. */
static void check_runs(tc_fusion *f, tc_kernel *k) {
  void **got = tc_params_alloc(f, 7), **want = tc_params_alloc(f, 7);
  tc_status st = tc_kernel_run(k, got, NULL, NULL);
  TC_CHECK(st == TC_OK, "run: %s: %s", tc_status_name(st), tc_kernel_error(k));
  TC_CHECK(tc_reference_run(f, want) == TC_OK, "reference");
  double err;
  TC_STR_LOCAL(msg);
  if (st == TC_OK)
    TC_CHECK(tc_outputs_compare(f, got, want, &err, &msg) == 0, "%s", tc_str_cstr(&msg));
  tc_params_free(f, got), tc_params_free(f, want);
}

static void test_miss_then_hit(void) {
  const char *dir = use_dir("hit");
  tc_cache_stats s0 = stats();
  TC_CHECK(s0.enabled, "enabled");
  TC_CHECK_STR(s0.dir, dir);
  TC_CHECK_EQ_INT(s0.entries, 0);
  const tc_example *e = tc_example_find("transpose");
  TC_REQUIRE(e != NULL, "example transpose");
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "tr"};
  tc_status st;

  tc_fusion *f1 = e->build();
  tc_kernel *k1 = tc_compile(f1, &o, &st);
  TC_REQUIRE(k1 != NULL, "compile: %s", tc_fusion_error(f1));
  tc_cache_stats s1 = stats();
  TC_CHECK_EQ_INT(s1.misses - s0.misses, 1);
  TC_CHECK_EQ_INT(s1.hits - s0.hits, 0);
  TC_CHECK_EQ_INT(s1.stores - s0.stores, 1);
  TC_CHECK_EQ_INT(s1.entries, 1);
  TC_CHECK(s1.bytes > (int64_t)strlen(tc_kernel_source(k1)), "bytes %lld", (long long)s1.bytes);
  TC_CHECK(!tc_kernel_from_cache(k1), "first compile is not from the cache");

  tc_fusion *f2 = e->build();
  tc_kernel *k2 = tc_compile(f2, &o, &st);
  TC_REQUIRE(k2 != NULL, "compile 2: %s", tc_fusion_error(f2));
  tc_cache_stats s2 = stats();
  TC_CHECK_EQ_INT(s2.hits - s1.hits, 1);
  TC_CHECK_EQ_INT(s2.misses - s1.misses, 0);
  TC_CHECK_EQ_INT(s2.stores - s1.stores, 0);
  TC_CHECK(tc_kernel_from_cache(k2), "second compile is from the cache");
  TC_CHECK(strcmp(tc_kernel_source(k1), tc_kernel_source(k2)) == 0, "same source");
  TC_CHECK_STR(tc_kernel_name(k2), "tr");
  TC_CHECK_EQ_INT(tc_kernel_smem_bytes(k2), tc_kernel_smem_bytes(k1));
  TC_CHECK_EQ_INT(tc_kernel_tmem_columns(k2), tc_kernel_tmem_columns(k1));
  int64_t g1[3], b1[3], g2[3], b2[3];
  tc_kernel_launch_dims(k1, g1, b1), tc_kernel_launch_dims(k2, g2, b2);
  TC_CHECK(memcmp(g1, g2, sizeof g1) == 0 && memcmp(b1, b2, sizeof b1) == 0, "launch dims");
  TC_CHECK_EQ_INT(tc_kernel_nparams(k2), tc_kernel_nparams(k1));
  for (int i = 0; i < tc_kernel_nparams(k1); i++)
    TC_CHECK_EQ_INT(tc_kernel_param_bytes(k2, i), tc_kernel_param_bytes(k1, i));
  TC_CHECK_STR(tc_fusion_error(f2), "");
  check_runs(f2, k2);

  /* the same fusion under another kernel name, or for another target:
   * other entries */
  tc_compile_options o2 = {TC_TARGET_OPENCL, NULL, "tr2"};
  tc_kernel *k3 = tc_compile(f2, &o2, &st);
  TC_CHECK(k3 && !tc_kernel_from_cache(k3), "another name misses");
  TC_CHECK(k3 && strstr(tc_kernel_source(k3), "tr2") != NULL, "named tr2");
  tc_compile_options o3 = {TC_TARGET_CUDA, "sm_90a", "tr"};
  tc_kernel *k4 = tc_compile(f2, &o3, &st);
  TC_CHECK(k4 && !tc_kernel_from_cache(k4), "another target misses");
  TC_CHECK_EQ_INT(stats().entries, 3);
  tc_kernel_free(k1), tc_kernel_free(k2), tc_kernel_free(k3), tc_kernel_free(k4);
  tc_fusion_free(f1), tc_fusion_free(f2);
}

static void test_changed_schedule_misses(void) {
  use_dir("changed");
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "k"};
  tc_status st;
  knobs v = base_knobs;
  tc_fusion *f = build(&v);
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_REQUIRE(k != NULL, "compile: %s", tc_fusion_error(f));
  TC_CHECK(!tc_kernel_from_cache(k), "first");
  check_runs(f, k);
  tc_kernel_free(k), tc_fusion_free(f);

  v.split = 4;
  f = build(&v);
  int64_t m0 = stats().misses;
  k = tc_compile(f, &o, &st);
  TC_REQUIRE(k != NULL, "compile split 4: %s", tc_fusion_error(f));
  TC_CHECK(!tc_kernel_from_cache(k), "a changed split factor misses");
  TC_CHECK_EQ_INT(stats().misses - m0, 1);
  check_runs(f, k);
  tc_kernel_free(k), tc_fusion_free(f);

  v = base_knobs;
  v.mem = TC_MEM_LOCAL;
  v.ca = 3;
  f = build(&v);
  k = tc_compile(f, &o, &st);
  TC_REQUIRE(k != NULL, "compile local: %s", tc_fusion_error(f));
  TC_CHECK(!tc_kernel_from_cache(k), "a changed memory type misses");
  check_runs(f, k);
  tc_kernel_free(k), tc_fusion_free(f);

  /* and the first again: a hit */
  f = build(&base_knobs);
  k = tc_compile(f, &o, &st);
  TC_CHECK(k && tc_kernel_from_cache(k), "the first schedule again hits");
  tc_kernel_free(k), tc_fusion_free(f);
  TC_CHECK_EQ_INT(stats().entries, 3);
}

/* A schedule that does not compile stores nothing and fails the same way
 * the second time. */
static void test_failed_compile_not_cached(void) {
  use_dir("failed");
  knobs v = base_knobs;
  v.mem = TC_MEM_GLOBAL; /* an intermediate in global memory is rejected */
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "k"};
  for (int i = 0; i < 2; i++) {
    tc_fusion *f = build(&v);
    tc_status st = TC_OK;
    tc_kernel *k = tc_compile(f, &o, &st);
    TC_CHECK(k == NULL && st != TC_OK, "round %d: expected a failure", i);
    TC_CHECK(tc_fusion_error(f)[0] != 0, "round %d: a message", i);
    tc_kernel_free(k), tc_fusion_free(f);
  }
  TC_CHECK_EQ_INT(stats().entries, 0);
}

static void test_disabled(void) {
  const char *dir = use_dir("off");
  const char *offs[] = {"0", "off", "FALSE", "no"};
  for (int i = 0; i < 4; i++) {
    setenv("TILEC_CACHE", offs[i], 1);
    tc_cache_stats s0 = stats();
    TC_CHECK(!s0.enabled, "TILEC_CACHE=%s: off", offs[i]);
    TC_CHECK_STR(s0.dir, dir);
    for (int j = 0; j < 2; j++) {
      tc_fusion *f = build(&base_knobs);
      tc_compile_options o = {TC_TARGET_OPENCL, NULL, "k"};
      tc_status st;
      tc_kernel *k = tc_compile(f, &o, &st);
      TC_CHECK(k && !tc_kernel_from_cache(k), "TILEC_CACHE=%s: not from the cache", offs[i]);
      tc_kernel_free(k), tc_fusion_free(f);
    }
    tc_cache_stats s1 = stats();
    TC_CHECK_EQ_INT(s1.hits - s0.hits, 0);
    TC_CHECK_EQ_INT(s1.misses - s0.misses, 0);
    TC_CHECK_EQ_INT(s1.stores - s0.stores, 0);
    struct stat sb;
    TC_CHECK(stat(dir, &sb) != 0, "TILEC_CACHE=%s: the directory is not even created", offs[i]);
  }
  setenv("TILEC_CACHE", "1", 1);
  TC_CHECK(stats().enabled, "TILEC_CACHE=1: on");
  unsetenv("TILEC_CACHE");
}

/* Compiles base_knobs once more; returns whether it came from the cache. */
static int compile_base(const char *name, char **source) {
  tc_fusion *f = build(&base_knobs);
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, name};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  int hit = k ? tc_kernel_from_cache(k) : -1;
  if (source) *source = k ? strdup(tc_kernel_source(k)) : NULL;
  tc_kernel_free(k), tc_fusion_free(f);
  return hit;
}

static void test_corrupt_entries(void) {
  const char *dir = use_dir("corrupt");
  char *good_src = NULL;
  TC_REQUIRE(compile_base("k", &good_src) == 0, "first compile misses");
  char path[1024];
  TC_REQUIRE(only_entry(dir, path, sizeof path), "one entry in %s", dir);
  size_t len;
  char *good = slurp(path, &len);
  TC_REQUIRE(good && len > 100, "entry read");

  /* another valid entry, made for a different key, copied over this one */
  TC_REQUIRE(compile_base("other", NULL) == 0, "other");
  char other_path[1024] = "";
  {
    DIR *d = opendir(dir);
    struct dirent *de;
    while ((de = readdir(d)))
      if (strstr(de->d_name, ".tck") && !strstr(path, de->d_name))
        snprintf(other_path, sizeof other_path, "%s/%s", dir, de->d_name);
    closedir(d);
  }
  size_t other_len = 0;
  char *other = slurp(other_path, &other_len);
  TC_REQUIRE(other != NULL, "other entry");

  struct {
    const char *what;
    char *data;
    size_t len;
  } bad[8];
  int nbad = 0;
  bad[nbad].what = "empty", bad[nbad].data = strdup(""), bad[nbad++].len = 0;
  bad[nbad].what = "truncated to half", bad[nbad].data = strdup(good), bad[nbad++].len = len / 2;
  bad[nbad].what = "last byte missing", bad[nbad].data = strdup(good), bad[nbad++].len = len - 1;
  char *flip = strdup(good);
  flip[len / 2] ^= 0x20; /* a changed byte in the source */
  bad[nbad].what = "a flipped byte", bad[nbad].data = flip, bad[nbad++].len = len;
  bad[nbad].what = "garbage", bad[nbad].data = strdup("\x01\x02garbage\nend 0\n"),
  bad[nbad++].len = 15;
  char *extra = malloc(len + 8);
  memcpy(extra, good, len), memcpy(extra + len, "more\n", 5);
  bad[nbad].what = "bytes after the end", bad[nbad].data = extra, bad[nbad++].len = len + 5;
  bad[nbad].what = "another key's entry", bad[nbad].data = strdup(other), bad[nbad++].len = other_len;
  char *nul = strdup(good);
  nul[len / 3] = 0;
  bad[nbad].what = "a NUL byte", bad[nbad].data = nul, bad[nbad++].len = len;

  for (int i = 0; i < nbad; i++) {
    spit(path, bad[i].data, bad[i].len);
    tc_cache_stats s0 = stats();
    char *src = NULL;
    int hit = compile_base("k", &src);
    tc_cache_stats s1 = stats();
    TC_CHECK(hit == 0, "%s: a miss (got %d)", bad[i].what, hit);
    TC_CHECK(src && strcmp(src, good_src) == 0, "%s: the right kernel", bad[i].what);
    TC_CHECK_EQ_INT(s1.corrupt - s0.corrupt, 1);
    TC_CHECK_EQ_INT(s1.stores - s0.stores, 1);
    size_t n2;
    char *now = slurp(path, &n2);
    TC_CHECK(now && n2 == len && memcmp(now, good, len) == 0, "%s: the entry is replaced",
             bad[i].what);
    free(now);
    free(src);
    TC_CHECK(compile_base("k", NULL) == 1, "%s: then a hit", bad[i].what);
    free(bad[i].data);
  }

  /* a directory where the entry should be: a miss, no crash */
  unlink(path);
  mkdir(path, 0700);
  TC_CHECK(compile_base("k", NULL) == 0, "a directory in place of the entry: a miss");
  rmdir(path);
  free(good), free(other), free(good_src);
}

/* An entry whose facts do not fit the fusion (here: a wrong parameter
 * count, written under the right key with a valid checksum) is a miss. */
static void test_mismatched_entry(void) {
  use_dir("mismatch");
  tc_fusion *f = build(&base_knobs);
  char key[33];
  tc_cache_key(f, TC_TARGET_OPENCL, NULL, "k", key);
  size_t pb[1] = {4};
  int po[1] = {1};
  tc_cache_entry e;
  memset(&e, 0, sizeof e);
  memcpy(e.key, key, 33);
  snprintf(e.name, sizeof e.name, "k");
  e.target = TC_TARGET_OPENCL;
  snprintf(e.arch, sizeof e.arch, "sm_80");
  e.grid[0] = e.grid[1] = e.grid[2] = e.block[0] = e.block[1] = e.block[2] = 1;
  e.nparams = 1, e.param_bytes = pb, e.param_is_output = po;
  e.source = "bogus";
  TC_REQUIRE(tc_cache_store(&e) == 0, "store");
  tc_cache_stats s0 = stats();
  tc_compile_options o = {TC_TARGET_OPENCL, NULL, "k"};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  TC_REQUIRE(k != NULL, "compile: %s", tc_fusion_error(f));
  TC_CHECK(!tc_kernel_from_cache(k), "a miss");
  TC_CHECK(strcmp(tc_kernel_source(k), "bogus") != 0, "not the bogus source");
  TC_CHECK_EQ_INT(stats().corrupt - s0.corrupt, 1);
  tc_kernel_free(k);
  k = tc_compile(f, &o, &st);
  TC_CHECK(k && tc_kernel_from_cache(k), "replaced: now a hit");
  TC_CHECK(k && strcmp(tc_kernel_source(k), "bogus") != 0, "not the bogus source");
  tc_kernel_free(k), tc_fusion_free(f);
}

static void test_unwritable_dir(void) {
  /* a regular file where a parent directory should be */
  char file[512], dir[600];
  snprintf(file, sizeof file, "%s/a-file", base_dir);
  spit(file, "x", 1);
  snprintf(dir, sizeof dir, "%s/sub/cache", file);
  setenv("TILEC_CACHE_DIR", dir, 1);
  tc_cache_stats s0 = stats();
  TC_CHECK(s0.enabled, "on (the directory is only tried when writing)");
  for (int i = 0; i < 2; i++) {
    int hit = compile_base("k", NULL);
    TC_CHECK(hit == 0, "round %d: compiles, a miss (got %d)", i, hit);
  }
  tc_cache_stats s1 = stats();
  TC_CHECK_EQ_INT(s1.store_failures - s0.store_failures, 2);
  TC_CHECK_EQ_INT(s1.stores - s0.stores, 0);
  TC_CHECK_EQ_INT(s1.entries, 0);
  unlink(file);
}

static void test_stats_and_clear(void) {
  const char *dir = use_dir("clear");
  int64_t removed = -1;
  TC_CHECK(tc_cache_clear(&removed) == TC_OK, "clearing a missing directory is fine");
  TC_CHECK_EQ_INT(removed, 0);
  for (int i = 0; i < 3; i++) {
    char name[16];
    snprintf(name, sizeof name, "k%d", i);
    TC_CHECK(compile_base(name, NULL) == 0, "%s", name);
  }
  char foreign[600], tmpfile[600], lookalike[600];
  snprintf(foreign, sizeof foreign, "%s/notes.txt", dir);
  snprintf(lookalike, sizeof lookalike, "%s/mine.tck", dir);
  snprintf(tmpfile, sizeof tmpfile, "%s/.tilec-tmp-abcdef", dir);
  spit(foreign, "keep me\n", 8);
  spit(lookalike, "keep me too\n", 12);
  spit(tmpfile, "partial", 7);
  tc_cache_stats s = stats();
  TC_CHECK_EQ_INT(s.entries, 3);
  TC_CHECK(s.bytes > 300, "bytes %lld", (long long)s.bytes);
  TC_CHECK(tc_cache_clear(&removed) == TC_OK, "clear");
  TC_CHECK_EQ_INT(removed, 3);
  s = stats();
  TC_CHECK_EQ_INT(s.entries, 0);
  TC_CHECK_EQ_INT(s.bytes, 0);
  struct stat sb;
  TC_CHECK(stat(foreign, &sb) == 0, "a file tilec did not write stays");
  TC_CHECK(stat(lookalike, &sb) == 0, "a .tck file not named by a key stays");
  TC_CHECK(stat(tmpfile, &sb) != 0, "a leftover temporary file goes");
  TC_CHECK(compile_base("k0", NULL) == 0, "after clear: a miss");
  TC_CHECK(tc_cache_get_stats(NULL) == TC_ERR_ARGUMENT, "NULL stats");
  unlink(foreign), unlink(lookalike);
}

static void test_dir_resolution(void) {
  char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
  char *xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
  char *mine = strdup(getenv("TILEC_CACHE_DIR"));
  tc_cache_stats s;

  setenv("TILEC_CACHE_DIR", "/some/where/", 1);
  s = stats();
  TC_CHECK_STR(s.dir, "/some/where");
  setenv("TILEC_CACHE_DIR", "", 1); /* empty: as unset */
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  setenv("HOME", "/home/u", 1);
  s = stats();
  TC_CHECK_STR(s.dir, "/xdg/tilec");
  unsetenv("TILEC_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "relative", 1); /* invalid per the XDG spec: ignored */
  s = stats();
  TC_CHECK_STR(s.dir, "/home/u/.cache/tilec");
  unsetenv("XDG_CACHE_HOME");
  s = stats();
  TC_CHECK_STR(s.dir, "/home/u/.cache/tilec");
  TC_CHECK(s.enabled, "on");
  unsetenv("HOME");
  s = stats();
  TC_CHECK_STR(s.dir, "");
  TC_CHECK(!s.enabled, "no directory: off");
  TC_CHECK(compile_base("k", NULL) == 0, "no directory: compiles, not from the cache");

  if (home) setenv("HOME", home, 1);
  if (xdg) setenv("XDG_CACHE_HOME", xdg, 1);
  setenv("TILEC_CACHE_DIR", mine, 1);
  free(home), free(xdg), free(mine);
}

/* Several processes compiling the same kernel while another clears the
 * cache over and over: every compile succeeds with the same source. */
static void test_processes_race(void) {
  use_dir("race");
  char *want = NULL;
  TC_REQUIRE(compile_base("k", &want) == 0, "first");
  enum { NPROC = 4, ROUNDS = 40 };
  pid_t pids[NPROC + 1];
  for (int p = 0; p <= NPROC; p++) {
    pid_t pid = fork();
    if (pid == 0) {
      int bad = 0;
      for (int r = 0; r < ROUNDS; r++) {
        if (p == NPROC) {
          tc_cache_clear(NULL);
          continue;
        }
        char *src = NULL;
        int hit = compile_base("k", &src);
        if (hit < 0 || !src || strcmp(src, want) != 0) bad++;
        free(src);
      }
      _exit(bad ? 1 : 0);
    }
    pids[p] = pid;
  }
  for (int p = 0; p <= NPROC; p++) {
    int status = 0;
    waitpid(pids[p], &status, 0);
    TC_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "process %d: status %d", p, status);
  }
  free(want);
  /* no temporary files are left behind */
  char race[600];
  snprintf(race, sizeof race, "%s/race", base_dir);
  DIR *d = opendir(race);
  struct dirent *de;
  int tmp = 0;
  while (d && (de = readdir(d)))
    if (strncmp(de->d_name, ".tilec-tmp-", 11) == 0) tmp++;
  if (d) closedir(d);
  TC_CHECK_EQ_INT(tmp, 0);
}

/* ---- CUDA: PTX ------------------------------------------------------------- */

static tc_kernel *compile_cuda(const char *name, tc_fusion **fp) {
  const tc_example *e = tc_example_find("pointwise_fma");
  tc_fusion *f = e->build();
  tc_compile_options o = {TC_TARGET_CUDA, "sm_90a", name};
  tc_status st;
  tc_kernel *k = tc_compile(f, &o, &st);
  if (!k) fprintf(stderr, "compile: %s\n", tc_fusion_error(f));
  *fp = f;
  return k;
}

static void test_ptx_cached(void) {
  int major, minor;
  if (!tc_cuda_nvrtc_version(&major, &minor)) TC_SKIP("NVRTC not found");
  const char *dir = use_dir("ptx");
  tc_fusion *f;
  tc_kernel *k = compile_cuda("cached_fma", &f);
  TC_REQUIRE(k != NULL, "compile");
  TC_CHECK(!tc_kernel_from_cache(k), "first");
  tc_cache_stats s0 = stats();
  TC_REQUIRE(tc_kernel_build(k, NULL) == TC_OK, "build: %s", tc_kernel_error(k));
  tc_cache_stats s1 = stats();
  TC_CHECK_EQ_INT(s1.nvrtc_runs - s0.nvrtc_runs, 1);
  TC_CHECK_EQ_INT(s1.ptx_hits - s0.ptx_hits, 0);
  TC_CHECK_EQ_INT(s1.stores - s0.stores, 1); /* the entry, now with PTX */
  /* a second build of the same kernel object: no NVRTC either */
  TC_CHECK(tc_kernel_build(k, NULL) == TC_OK, "build again");
  TC_CHECK_EQ_INT(stats().nvrtc_runs - s1.nvrtc_runs, 0);
  tc_kernel_free(k), tc_fusion_free(f);

  char path[1024];
  TC_REQUIRE(only_entry(dir, path, sizeof path), "one entry");
  char *entry = slurp(path, NULL);
  char tag[64];
  snprintf(tag, sizeof tag, "\nptx nvrtc-%d.%d ", major, minor);
  TC_CHECK(entry && strstr(entry, tag), "the entry has the PTX, tagged %s", tag + 1);
  TC_CHECK(entry && strstr(entry, ".visible .entry cached_fma"), "PTX of the kernel");
  free(entry);

  /* a fresh fusion: the kernel and its PTX from the cache, no NVRTC */
  k = compile_cuda("cached_fma", &f);
  TC_REQUIRE(k != NULL, "compile 2");
  TC_CHECK(tc_kernel_from_cache(k), "second compile from the cache");
  s1 = stats();
  TC_CHECK(tc_kernel_build(k, NULL) == TC_OK, "build 2: %s", tc_kernel_error(k));
  tc_cache_stats s2 = stats();
  TC_CHECK_EQ_INT(s2.nvrtc_runs - s1.nvrtc_runs, 0);
  TC_CHECK_EQ_INT(s2.ptx_hits - s1.ptx_hits, 1);
  TC_CHECK_EQ_INT(s2.stores - s1.stores, 0);
  /* running: the cached PTX, or "no CUDA device" exactly as before */
  void **bufs = tc_params_alloc(f, 1);
  tc_str msg;
  tc_str_init(&msg);
  tc_status st = tc_kernel_run(k, bufs, NULL, NULL);
  if (!tc_cuda_available(&msg)) {
    TC_CHECK(st == TC_ERR_NO_DEVICE, "run without a device: %s", tc_status_name(st));
    TC_CHECK(strstr(tc_kernel_error(k), "no CUDA device") != NULL, "%s", tc_kernel_error(k));
  } else {
    TC_CHECK(st == TC_OK, "run: %s", tc_kernel_error(k));
    void **want = tc_params_alloc(f, 1);
    tc_reference_run(f, want);
    double err;
    TC_STR_LOCAL(m);
    TC_CHECK(tc_outputs_compare(f, bufs, want, &err, &m) == 0, "%s", tc_str_cstr(&m));
    tc_params_free(f, want);
    TC_CHECK_EQ_INT(stats().nvrtc_runs - s1.nvrtc_runs, 0);
  }
  tc_str_free(&msg);
  tc_params_free(f, bufs);
  tc_kernel_free(k), tc_fusion_free(f);
}

/* PTX tagged with another NVRTC version is not reused: NVRTC runs and the
 * entry gets this version's PTX. */
static void test_ptx_other_nvrtc(void) {
  int major, minor;
  if (!tc_cuda_nvrtc_version(&major, &minor)) TC_SKIP("NVRTC not found");
  const char *dir = use_dir("ptx-stale");
  tc_fusion *f;
  tc_kernel *k = compile_cuda("cached_fma", &f);
  TC_REQUIRE(k != NULL, "compile");
  tc_kernel_free(k);
  /* rewrite the entry with PTX from a made-up NVRTC */
  char path[1024];
  TC_REQUIRE(only_entry(dir, path, sizeof path), "one entry");
  char key[33];
  const char *slash = strrchr(path, '/');
  memcpy(key, slash + 1, 32), key[32] = 0;
  tc_cache_entry e;
  TC_REQUIRE(tc_cache_load(key, &e) == 1, "load");
  e.ptx = strdup("// not PTX\n");
  snprintf(e.ptx_tag, sizeof e.ptx_tag, "nvrtc-0.1");
  TC_REQUIRE(tc_cache_store(&e) == 0, "store");
  tc_cache_entry_free(&e);
  tc_fusion_free(f);

  k = compile_cuda("cached_fma", &f);
  TC_REQUIRE(k && tc_kernel_from_cache(k), "from the cache");
  tc_cache_stats s0 = stats();
  TC_CHECK(tc_kernel_build(k, NULL) == TC_OK, "build: %s", tc_kernel_error(k));
  tc_cache_stats s1 = stats();
  TC_CHECK_EQ_INT(s1.nvrtc_runs - s0.nvrtc_runs, 1);
  TC_CHECK_EQ_INT(s1.ptx_hits - s0.ptx_hits, 0);
  tc_kernel_free(k), tc_fusion_free(f);
  char *entry = slurp(path, NULL);
  char tag[64];
  snprintf(tag, sizeof tag, "\nptx nvrtc-%d.%d ", major, minor);
  TC_CHECK(entry && strstr(entry, tag) && !strstr(entry, "not PTX"), "replaced PTX");
  free(entry);

  /* a bad arch still fails the build with TC_ERR_ARGUMENT, cache or not */
  const tc_example *ex = tc_example_find("pointwise_fma");
  f = ex->build();
  tc_compile_options o = {TC_TARGET_CUDA, "sm_x", "cached_fma"};
  tc_status st;
  k = tc_compile(f, &o, &st);
  TC_REQUIRE(k != NULL, "compile sm_x");
  TC_CHECK(tc_kernel_build(k, NULL) == TC_ERR_ARGUMENT, "bad arch: %s", tc_kernel_error(k));
  tc_kernel_free(k), tc_fusion_free(f);
}

/* ---- cleanup ------------------------------------------------------------- */

static void remove_tree(const char *path) {
  struct stat sb;
  if (lstat(path, &sb) != 0) return;
  if (S_ISDIR(sb.st_mode)) {
    DIR *d = opendir(path);
    struct dirent *de;
    char sub[1024];
    while (d && (de = readdir(d))) {
      if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
      snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
      remove_tree(sub);
    }
    if (d) closedir(d);
    rmdir(path);
  } else {
    unlink(path);
  }
}

int main(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(base_dir, sizeof base_dir, "%s/tilec-cache-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(base_dir)) {
    perror("mkdtemp");
    return 1;
  }
  use_dir("default");
  TC_RUN(test_hasher);
  TC_RUN(test_hash_equal_across_fusions);
  TC_RUN(test_hash_options);
  TC_RUN(test_hash_schedule_changes);
  TC_RUN(test_build_fingerprint);
  TC_RUN(test_miss_then_hit);
  TC_RUN(test_changed_schedule_misses);
  TC_RUN(test_failed_compile_not_cached);
  TC_RUN(test_disabled);
  TC_RUN(test_corrupt_entries);
  TC_RUN(test_mismatched_entry);
  TC_RUN(test_unwritable_dir);
  TC_RUN(test_stats_and_clear);
  TC_RUN(test_dir_resolution);
  TC_RUN(test_processes_race);
  TC_RUN(test_ptx_cached);
  TC_RUN(test_ptx_other_nvrtc);
  remove_tree(base_dir);
  TC_MAIN_END();
}
