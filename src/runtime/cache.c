/* cache.c - the on-disk kernel cache (see cache.h and docs/cache.md).
 *
 * An entry is a text header, the kernel source and optionally the PTX as
 * length-prefixed blocks, and a closing line with a hash of everything
 * before it:
 *
 *   tilec-cache 2
 *   key 0123...ef
 *   name copy
 *   target 1
 *   arch sm_90a
 *   smem 8
 *   tmem 0
 *   grid 4 1 1
 *   block 2 1 1
 *   params 2
 *   param 32 0
 *   param 32 1
 *   allocs 3                     (one per kernel parameter and allocated tensor)
 *   alloc 0 0 2 8 32 0 0 0 0     (tensor id, memory, axes, elements, bytes,
 *   axes 0 2 1 4                  offset, lanes, columns, columns allocated;
 *   ...                           then position and extent of each axis)
 *   tmaps 1                      (optional: CUDA kernels with bulk tensor copies)
 *   tmap 1 2 2 128 512 256 0 0 0 0 1024 0 0 0 64 64 0 0 0
 *   workspace 33                 (optional: 32-bit words of a grid reduction's workspace)
 *   source 1234
 *   <1234 bytes>
 *   ptx nvrtc-13.0 5678          (optional)
 *   <5678 bytes>
 *   end 0123...ef
 *
 * Anything that does not parse exactly, or whose closing hash does not
 * match, is a corrupt entry: a miss, and the file is removed. */
#include "cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../ir/fusion.h"

#define FORMAT_LINE "tilec-cache 2\n"
#define ENTRY_EXT ".tck"
#define TMP_PREFIX ".tilec-tmp-"
#define MAX_ENTRY_BYTES ((size_t)256 << 20)

/* ---- counters ------------------------------------------------------------ */

static atomic_llong counters[TC_CACHE_NCOUNTERS];

void tc_cache_count(tc_cache_counter c) {
  if ((unsigned)c < TC_CACHE_NCOUNTERS) atomic_fetch_add(&counters[c], 1);
}

int64_t tc_cache_counter_value(tc_cache_counter c) {
  return (unsigned)c < TC_CACHE_NCOUNTERS ? (int64_t)atomic_load(&counters[c]) : 0;
}

/* ---- the key ------------------------------------------------------------ */

/* The file holding this code (tilec, a program linked with libtilec.a, or
 * libtilec.so), found in /proc/self/maps: its device, inode, size and
 * modification time.  Mixed into every key, so that a rebuilt tilec (whose
 * code generation may differ under the same TILEC_VERSION) never reads the
 * kernels of an older build.  0 where it cannot be found (then only
 * TILEC_VERSION and TC_CODEGEN_FORMAT tell builds apart). */
static pthread_once_t fingerprint_once = PTHREAD_ONCE_INIT;
static uint64_t fingerprint;

static void fingerprint_load(void) {
  FILE *fp = fopen("/proc/self/maps", "r");
  if (!fp) return;
  uintptr_t self = (uintptr_t)&fingerprint_load;
  char line[4608];
  while (fgets(line, sizeof line, fp)) {
    unsigned long long lo, hi;
    int off = 0;
    if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &lo, &hi, &off) < 2 || off == 0) continue;
    if (self < lo || self >= hi) continue;
    char *path = line + off;
    path[strcspn(path, "\n")] = 0;
    struct stat st;
    if (path[0] == '/' && stat(path, &st) == 0) {
      tc_hasher h;
      tc_hasher_init(&h);
      tc_hasher_str(&h, path);
      tc_hasher_u64(&h, (uint64_t)st.st_dev);
      tc_hasher_u64(&h, (uint64_t)st.st_ino);
      tc_hasher_u64(&h, (uint64_t)st.st_size);
      tc_hasher_u64(&h, (uint64_t)st.st_mtim.tv_sec);
      tc_hasher_u64(&h, (uint64_t)st.st_mtim.tv_nsec);
      fingerprint = h.a ^ (h.b << 1) ^ 1;
    }
    break;
  }
  fclose(fp);
}

uint64_t tc_cache_build_fingerprint(void) {
  pthread_once(&fingerprint_once, fingerprint_load);
  return fingerprint;
}

void tc_cache_key(const tc_fusion *f, tc_target target, const char *arch, const char *kernel_name,
                  char key[33]) {
  char fh[33];
  tc_fusion_hash(f, target, arch, kernel_name, fh);
  tc_hasher h;
  tc_hasher_init(&h);
  tc_hasher_str(&h, "tilec-cache-key");
  tc_hasher_str(&h, fh);
  tc_hasher_u64(&h, tc_cache_build_fingerprint());
  tc_hasher_hex(&h, key);
}

/* ---- where ------------------------------------------------------------- */

int tc_cache_env_enabled(void) {
  const char *v = getenv("TILEC_CACHE");
  if (!v) return 1;
  static const char *off[] = {"0", "off", "no", "false"};
  for (size_t i = 0; i < sizeof off / sizeof *off; i++)
    if (strcasecmp(v, off[i]) == 0) return 0;
  return 1;
}

int tc_cache_resolve_dir(char *buf, size_t cap) {
  const char *d = getenv("TILEC_CACHE_DIR");
  int n;
  if (d && *d) {
    n = snprintf(buf, cap, "%s", d);
  } else if ((d = getenv("XDG_CACHE_HOME")) && *d == '/') {
    /* the XDG spec: a relative XDG_CACHE_HOME is invalid and ignored */
    n = snprintf(buf, cap, "%s/tilec", d);
  } else if ((d = getenv("HOME")) && *d) {
    n = snprintf(buf, cap, "%s/.cache/tilec", d);
  } else {
    n = -1;
  }
  if (n < 0 || (size_t)n >= cap) {
    if (cap) buf[0] = 0;
    return 0;
  }
  /* drop trailing slashes (but keep "/") */
  while (n > 1 && buf[n - 1] == '/') buf[--n] = 0;
  return 1;
}

int tc_cache_enabled(void) {
  char dir[4096];
  return tc_cache_env_enabled() && tc_cache_resolve_dir(dir, sizeof dir);
}

static int valid_key(const char *key) {
  if (!key || strlen(key) != 32) return 0;
  for (int i = 0; i < 32; i++)
    if (!((key[i] >= '0' && key[i] <= '9') || (key[i] >= 'a' && key[i] <= 'f'))) return 0;
  return 1;
}

/* Is `name` an entry file name ("<32 hex>.tck")? */
static int is_entry_name(const char *name) {
  if (strlen(name) != 32 + strlen(ENTRY_EXT) || strcmp(name + 32, ENTRY_EXT) != 0) return 0;
  char key[33];
  memcpy(key, name, 32);
  key[32] = 0;
  return valid_key(key);
}

static int entry_path(const char *key, char *buf, size_t cap) {
  char dir[4096];
  if (!tc_cache_env_enabled() || !tc_cache_resolve_dir(dir, sizeof dir) || !valid_key(key))
    return 0;
  int n = snprintf(buf, cap, "%s/%s" ENTRY_EXT, dir, key);
  return n > 0 && (size_t)n < cap;
}

/* mkdir -p with mode 0700 for the directories it creates. */
static int make_dirs(const char *dir) {
  char p[4096];
  int n = snprintf(p, sizeof p, "%s", dir);
  if (n <= 0 || (size_t)n >= sizeof p) return -1;
  for (char *s = p + 1; *s; s++) {
    if (*s != '/') continue;
    *s = 0;
    if (mkdir(p, 0700) != 0 && errno != EEXIST) return -1;
    *s = '/';
  }
  if (mkdir(p, 0700) != 0 && errno != EEXIST) return -1;
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

/* ---- the entry format --------------------------------------------------- */

static void checksum(const char *p, size_t n, char out[33]) {
  tc_hasher h;
  tc_hasher_init(&h);
  tc_hasher_str(&h, "tilec-cache-entry");
  tc_hasher_bytes(&h, p, n);
  tc_hasher_hex(&h, out);
}

/* A word for a header line: non-empty (unless may_be_empty), no spaces or
 * control characters. */
static int plain_word(const char *s, int may_be_empty) {
  if (!s) return 0;
  if (!*s) return may_be_empty;
  for (; *s; s++)
    if ((unsigned char)*s <= ' ' || *s == 0x7f) return 0;
  return 1;
}

static void serialize(const tc_cache_entry *e, tc_str *out) {
  tc_str_cat(out, FORMAT_LINE);
  tc_str_printf(out, "key %s\nname %s\ntarget %d\narch %s\n", e->key, e->name, (int)e->target,
                e->arch);
  tc_str_printf(out, "smem %lld\ntmem %lld\n", (long long)e->smem, (long long)e->tmem_cols);
  tc_str_printf(out, "grid %lld %lld %lld\n", (long long)e->grid[0], (long long)e->grid[1],
                (long long)e->grid[2]);
  tc_str_printf(out, "block %lld %lld %lld\n", (long long)e->block[0], (long long)e->block[1],
                (long long)e->block[2]);
  tc_str_printf(out, "params %d\n", e->nparams);
  for (int i = 0; i < e->nparams; i++)
    tc_str_printf(out, "param %zu %d\n", e->param_bytes[i], e->param_is_output[i] ? 1 : 0);
  tc_str_printf(out, "allocs %d\n", e->nallocs);
  for (int i = 0; i < e->nallocs; i++) {
    const tc_allocation *a = &e->allocs[i].a;
    tc_str_printf(out, "alloc %d %d %d %lld %lld %lld %lld %lld %lld\naxes", e->allocs[i].tensor,
                  (int)a->memory, a->naxes, (long long)a->elements, (long long)a->bytes,
                  (long long)a->offset, (long long)a->lanes, (long long)a->columns,
                  (long long)a->columns_allocated);
    for (int j = 0; j < a->naxes && j < 16; j++)
      tc_str_printf(out, " %d %lld", a->positions[j], (long long)a->extents[j]);
    tc_str_cat(out, "\n");
  }
  if (e->ntmaps > 0) tc_str_printf(out, "tmaps %d\n", e->ntmaps);
  for (int i = 0; i < e->ntmaps; i++) {
    const tc_rt_tmap *t = &e->tmaps[i];
    tc_str_printf(out, "tmap %d %d %d %d", t->buffer, (int)t->dtype, t->rank, t->swizzle);
    for (int d = 0; d < 5; d++) tc_str_printf(out, " %llu", (unsigned long long)t->dims[d]);
    for (int d = 0; d < 5; d++) tc_str_printf(out, " %llu", (unsigned long long)t->strides[d]);
    for (int d = 0; d < 5; d++) tc_str_printf(out, " %u", t->box[d]);
    tc_str_cat(out, "\n");
  }  if (e->ws_words > 0) tc_str_printf(out, "workspace %lld\n", (long long)e->ws_words);
  if (e->sym.n > 0) { /* "sym N", N "symvar" lines, 3 "symgrid" lines */
    const tc_sym_info *y = &e->sym;
    tc_str_printf(out, "sym %d\n", y->n);
    for (int v = 0; v < y->n; v++)
      tc_str_printf(out, "symvar %lld %lld %lld %d\n", (long long)y->div[v], (long long)y->bound[v],
                    (long long)y->mask[v], y->param[v]);
    for (int d = 0; d < 3; d++) {
      tc_str_printf(out, "symgrid %d %d", y->grid_var[d], y->grid_nsteps[d]);
      for (int i = 0; i < TC_SYM_MAX_STEPS; i++)
        tc_str_printf(out, " %lld", (long long)(i < y->grid_nsteps[d] ? y->grid_steps[d][i] : 0));
      tc_str_cat(out, "\n");
    }
  }

  size_t n = strlen(e->source);
  tc_str_printf(out, "source %zu\n", n);
  tc_str_catn(out, e->source, n);
  tc_str_cat(out, "\n");
  if (e->ptx) {
    n = strlen(e->ptx);
    tc_str_printf(out, "ptx %s %zu\n", e->ptx_tag, n);
    tc_str_catn(out, e->ptx, n);
    tc_str_cat(out, "\n");
  }
  char sum[33];
  checksum(out->buf, out->len, sum);
  tc_str_printf(out, "end %s\n", sum);
}

typedef struct cursor {
  const char *p, *end;
} cursor;

/* Reads the line starting with `word` and a space (or a newline when the
 * value is empty); returns a copy of the rest of it in val (cap bytes), or
 * 0 when the line is not there or too long. */
static int line(cursor *c, const char *word, char *val, size_t cap) {
  size_t wn = strlen(word);
  if ((size_t)(c->end - c->p) < wn + 1 || memcmp(c->p, word, wn) != 0) return 0;
  const char *s = c->p + wn;
  const char *nl = memchr(s, '\n', (size_t)(c->end - s));
  if (!nl) return 0;
  if (s == nl) { /* "word\n": an empty value */
    if (cap < 1) return 0;
    val[0] = 0;
  } else {
    if (*s != ' ') return 0;
    s++;
    size_t n = (size_t)(nl - s);
    if (n >= cap || memchr(s, 0, n)) return 0;
    memcpy(val, s, n);
    val[n] = 0;
  }
  c->p = nl + 1;
  return 1;
}

/* Parses exactly n decimal integers separated by single spaces. */
static int ints(const char *s, int n, long long *v, long long lo, long long hi) {
  for (int i = 0; i < n; i++) {
    if (i > 0) {
      if (*s != ' ') return 0;
      s++;
    }
    if (!((*s >= '0' && *s <= '9') || (*s == '-' && s[1] >= '0' && s[1] <= '9'))) return 0;
    char *e;
    errno = 0;
    long long x = strtoll(s, &e, 10);
    if (errno || e == s || x < lo || x > hi) return 0;
    v[i] = x;
    s = e;
  }
  return *s == 0;
}

/* Takes n bytes plus a newline as a new string. */
static char *block(cursor *c, size_t n) {
  if ((size_t)(c->end - c->p) < n + 1 || c->p[n] != '\n' || memchr(c->p, 0, n)) return NULL;
  char *s = tc_xmalloc(n + 1);
  memcpy(s, c->p, n);
  s[n] = 0;
  c->p += n + 1;
  return s;
}

static int parse(const char *buf, size_t len, const char *key, tc_cache_entry *e) {
  /* the closing line: "end <32 hex>\n" */
  const size_t endlen = 4 + 32 + 1;
  if (len < strlen(FORMAT_LINE) + endlen || buf[len - 1] != '\n') return 0;
  const char *endline = buf + len - endlen;
  if (memcmp(endline, "end ", 4) != 0) return 0;
  char sum[33];
  checksum(buf, (size_t)(endline - buf), sum);
  if (memcmp(endline + 4, sum, 32) != 0) return 0;

  cursor c = {buf, endline};
  char v[256];
  long long x[3];
  if (!line(&c, "tilec-cache", v, sizeof v) || strcmp(v, "2") != 0) return 0;
  if (!line(&c, "key", v, sizeof v) || strcmp(v, key) != 0) return 0;
  snprintf(e->key, sizeof e->key, "%s", key);
  if (!line(&c, "name", v, sizeof v) || !plain_word(v, 0) || strlen(v) >= sizeof e->name) return 0;
  memcpy(e->name, v, strlen(v) + 1); /* length checked above */
  if (!line(&c, "target", v, sizeof v) || !ints(v, 1, x, 0, 64)) return 0;
  e->target = (tc_target)x[0];
  if (!line(&c, "arch", v, sizeof v) || !plain_word(v, 1) || strlen(v) >= sizeof e->arch) return 0;
  memcpy(e->arch, v, strlen(v) + 1);
  if (!line(&c, "smem", v, sizeof v) || !ints(v, 1, x, 0, INT64_MAX)) return 0;
  e->smem = x[0];
  if (!line(&c, "tmem", v, sizeof v) || !ints(v, 1, x, 0, INT64_MAX)) return 0;
  e->tmem_cols = x[0];
  if (!line(&c, "grid", v, sizeof v) || !ints(v, 3, x, 0, INT64_MAX)) return 0;
  memcpy(e->grid, x, sizeof e->grid);
  if (!line(&c, "block", v, sizeof v) || !ints(v, 3, x, 0, INT64_MAX)) return 0;
  memcpy(e->block, x, sizeof e->block);
  if (!line(&c, "params", v, sizeof v) || !ints(v, 1, x, 0, 1 << 20)) return 0;
  e->nparams = (int)x[0];
  e->param_bytes = tc_xcalloc((size_t)e->nparams + 1, sizeof *e->param_bytes);
  e->param_is_output = tc_xcalloc((size_t)e->nparams + 1, sizeof *e->param_is_output);
  for (int i = 0; i < e->nparams; i++) {
    if (!line(&c, "param", v, sizeof v) || !ints(v, 2, x, 0, INT64_MAX) || x[1] > 1) return 0;
    e->param_bytes[i] = (size_t)x[0];
    e->param_is_output[i] = (int)x[1];
  }
  if (!line(&c, "allocs", v, sizeof v) || !ints(v, 1, x, 0, 1 << 20)) return 0;
  e->nallocs = (int)x[0];
  e->allocs = tc_xcalloc((size_t)e->nallocs + 1, sizeof *e->allocs);
  for (int i = 0; i < e->nallocs; i++) {
    long long y[32];
    tc_allocation *a = &e->allocs[i].a;
    if (!line(&c, "alloc", v, sizeof v) || !ints(v, 9, y, 0, INT64_MAX) || y[0] > INT32_MAX ||
        y[1] > TC_MEM_TENSOR || y[2] > INT32_MAX)
      return 0;
    e->allocs[i].tensor = (int)y[0];
    a->memory = (tc_memtype)y[1], a->naxes = (int)y[2], a->elements = y[3], a->bytes = y[4];
    a->offset = y[5], a->lanes = y[6], a->columns = y[7], a->columns_allocated = y[8];
    char axes[1024];
    int listed = a->naxes < 16 ? a->naxes : 16;
    if (!line(&c, "axes", axes, sizeof axes) || !ints(axes, 2 * listed, y, 0, INT64_MAX)) return 0;
    for (int j = 0; j < listed; j++) {
      if (y[2 * j] > INT32_MAX) return 0;
      a->positions[j] = (int)y[2 * j], a->extents[j] = y[2 * j + 1];
    }
  }
  if (line(&c, "tmaps", v, sizeof v)) {
    if (!ints(v, 1, x, 1, 64)) return 0;
    e->ntmaps = (int)x[0];
    e->tmaps = tc_xcalloc((size_t)e->ntmaps, sizeof *e->tmaps);
    for (int i = 0; i < e->ntmaps; i++) {
      long long y[19];
      if (!line(&c, "tmap", v, sizeof v) || !ints(v, 19, y, 0, INT64_MAX)) return 0;
      tc_rt_tmap *t = &e->tmaps[i];
      if (y[0] > INT32_MAX || y[1] > 64 || y[2] > 5 || y[3] > 128) return 0;
      t->buffer = (int)y[0], t->dtype = (tc_dtype)y[1], t->rank = (int)y[2];
      t->swizzle = (int)y[3];
      for (int d = 0; d < 5; d++) {
        t->dims[d] = (uint64_t)y[4 + d];
        t->strides[d] = (uint64_t)y[9 + d];
        if (y[14 + d] > 256) return 0;
        t->box[d] = (uint32_t)y[14 + d];
      }
      tc_str why;
      tc_str_init(&why);
      tc_status st = tc_tmap_check(t, e->nparams, &why);
      tc_str_free(&why);
      if (st) return 0;
    }
  }
  if (line(&c, "workspace", v, sizeof v)) {
    if (!ints(v, 1, x, 1, (long long)1 << 29)) return 0;
    e->ws_words = x[0];
  }
  if (line(&c, "sym", v, sizeof v)) {
    tc_sym_info *q = &e->sym;
    if (!ints(v, 1, x, 1, TC_MAX_SIZE_VARS)) return 0;
    q->n = (int)x[0];
    for (int k = 0; k < q->n; k++) {
      long long y[4];
      if (!line(&c, "symvar", v, sizeof v) || !ints(v, 4, y, 0, INT64_MAX) || y[0] < 1 || y[1] < 1 ||
          y[3] >= e->nparams)
        return 0;
      q->div[k] = y[0], q->bound[k] = y[1], q->mask[k] = y[2], q->param[k] = (int)y[3];
    }
    for (int d = 0; d < 3; d++) {
      long long y[2 + TC_SYM_MAX_STEPS];
      if (!line(&c, "symgrid", v, sizeof v) || !ints(v, 2 + TC_SYM_MAX_STEPS, y, INT64_MIN, INT64_MAX) ||
          y[0] < -1 || y[0] >= q->n || y[1] < 0 || y[1] > TC_SYM_MAX_STEPS)
        return 0;
      q->grid_var[d] = (int)y[0], q->grid_nsteps[d] = (int)y[1];
      for (int i = 0; i < TC_SYM_MAX_STEPS; i++) {
        /* a step is a split, a fixed extent or a variable of this kernel */
        int var = tc_sym_step_var(y[2 + i]);
        if (var >= q->n || (var < 0 && y[2 + i] < INT32_MIN)) return 0;
        q->grid_steps[d][i] = y[2 + i];
      }
    }
  }
  if (!line(&c, "source", v, sizeof v) || !ints(v, 1, x, 0, (long long)MAX_ENTRY_BYTES)) return 0;
  if (!(e->source = block(&c, (size_t)x[0]))) return 0;
  if (c.p < c.end) {
    if (!line(&c, "ptx", v, sizeof v)) return 0;
    char *sp = strchr(v, ' ');
    if (!sp) return 0;
    *sp = 0;
    if (!plain_word(v, 0) || strlen(v) >= sizeof e->ptx_tag) return 0;
    if (!ints(sp + 1, 1, x, 0, (long long)MAX_ENTRY_BYTES)) return 0;
    memcpy(e->ptx_tag, v, strlen(v) + 1);
    if (!(e->ptx = block(&c, (size_t)x[0]))) return 0;
  }
  return c.p == c.end;
}

void tc_cache_entry_free(tc_cache_entry *e) {
  if (!e) return;
  free(e->param_bytes), free(e->param_is_output), free(e->source), free(e->ptx);
  free(e->tmaps), free(e->allocs);
  memset(e, 0, sizeof *e);
}

/* Reads a whole file (at most MAX_ENTRY_BYTES); NULL when it cannot. */
static char *read_file(const char *path, size_t *len, int *exists) {
  *exists = 0;
  int fd = open(path, O_RDONLY);
  if (fd < 0) return NULL;
  *exists = 1;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
      (uint64_t)st.st_size > MAX_ENTRY_BYTES) {
    close(fd);
    return NULL;
  }
  size_t n = (size_t)st.st_size, got = 0;
  char *buf = tc_xmalloc(n + 1);
  while (got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  if (got != n) {
    free(buf);
    return NULL;
  }
  buf[n] = 0;
  *len = n;
  return buf;
}

int tc_cache_load(const char *key, tc_cache_entry *e) {
  memset(e, 0, sizeof *e);
  char path[4200];
  if (!entry_path(key, path, sizeof path)) return 0;
  size_t len = 0;
  int exists;
  char *buf = read_file(path, &len, &exists);
  if (buf && parse(buf, len, key, e)) {
    free(buf);
    return 1;
  }
  free(buf);
  tc_cache_entry_free(e);
  if (exists) {
    tc_cache_count(TC_CACHE_CORRUPT);
    unlink(path);
  }
  return 0;
}

int tc_cache_store(const tc_cache_entry *e) {
  char dir[4096], path[4200], tmp[4200];
  if (!tc_cache_env_enabled() || !tc_cache_resolve_dir(dir, sizeof dir)) return -1;
  if (!valid_key(e->key) || !plain_word(e->name, 0) || !plain_word(e->arch, 1) || !e->source ||
      e->nparams < 0 || (e->nparams > 0 && (!e->param_bytes || !e->param_is_output)) ||
      (e->ptx && !plain_word(e->ptx_tag, 0)) || e->ntmaps < 0 || e->ntmaps > 64 ||
      (e->ntmaps > 0 && !e->tmaps)) {
    tc_cache_count(TC_CACHE_STORE_FAIL);
    return -1;
  }
  int n1 = snprintf(path, sizeof path, "%s/%s" ENTRY_EXT, dir, e->key);
  int n2 = snprintf(tmp, sizeof tmp, "%s/" TMP_PREFIX "XXXXXX", dir);
  if (n1 < 0 || (size_t)n1 >= sizeof path || n2 < 0 || (size_t)n2 >= sizeof tmp ||
      make_dirs(dir) != 0) {
    tc_cache_count(TC_CACHE_STORE_FAIL);
    return -1;
  }
  tc_str s;
  tc_str_init(&s);
  serialize(e, &s);
  int fd = mkstemp(tmp);
  int ok = fd >= 0;
  if (ok) {
    fchmod(fd, 0644);
    size_t off = 0;
    while (ok && off < s.len) {
      ssize_t w = write(fd, s.buf + off, s.len - off);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) ok = 0;
      else off += (size_t)w;
    }
    if (close(fd) != 0) ok = 0;
    if (ok && rename(tmp, path) != 0) ok = 0;
    if (!ok) unlink(tmp);
  }
  tc_str_free(&s);
  tc_cache_count(ok ? TC_CACHE_STORE : TC_CACHE_STORE_FAIL);
  return ok ? 0 : -1;
}

/* ---- the directory as a whole ------------------------------------------ */

tc_status tc_cache_scan(const char *dir, int64_t *entries, int64_t *bytes, tc_str *err) {
  *entries = 0, *bytes = 0;
  DIR *d = opendir(dir);
  if (!d) {
    if (errno == ENOENT) return TC_OK;
    tc_str_printf(err, "cannot read the cache directory %s: %s", dir, strerror(errno));
    return TC_ERR_RUNTIME;
  }
  struct dirent *de;
  char path[4400];
  while ((de = readdir(d))) {
    if (!is_entry_name(de->d_name)) continue;
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    *entries += 1;
    *bytes += (int64_t)st.st_size;
  }
  closedir(d);
  return TC_OK;
}

tc_status tc_cache_clear_dir(const char *dir, int64_t *removed, tc_str *err) {
  if (removed) *removed = 0;
  DIR *d = opendir(dir);
  if (!d) {
    if (errno == ENOENT) return TC_OK;
    tc_str_printf(err, "cannot read the cache directory %s: %s", dir, strerror(errno));
    return TC_ERR_RUNTIME;
  }
  tc_status st = TC_OK;
  struct dirent *de;
  char path[4400];
  while ((de = readdir(d))) {
    int entry = is_entry_name(de->d_name);
    if (!entry && strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) != 0) continue;
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    struct stat sb;
    if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
    if (unlink(path) != 0) {
      if (errno == ENOENT) continue; /* removed by someone else meanwhile */
      if (st == TC_OK)
        tc_str_printf(err, "cannot remove %s: %s", path, strerror(errno));
      st = TC_ERR_RUNTIME;
      continue;
    }
    if (entry && removed) *removed += 1;
  }
  closedir(d);
  return st;
}

/* ---- the public API ------------------------------------------------------ */

tc_status tc_cache_get_stats(tc_cache_stats *s) {
  if (!s) return TC_ERR_ARGUMENT;
  memset(s, 0, sizeof *s);
  int have_dir = tc_cache_resolve_dir(s->dir, sizeof s->dir);
  s->enabled = have_dir && tc_cache_env_enabled();
  s->hits = tc_cache_counter_value(TC_CACHE_HIT);
  s->misses = tc_cache_counter_value(TC_CACHE_MISS);
  s->stores = tc_cache_counter_value(TC_CACHE_STORE);
  s->store_failures = tc_cache_counter_value(TC_CACHE_STORE_FAIL);
  s->corrupt = tc_cache_counter_value(TC_CACHE_CORRUPT);
  s->ptx_hits = tc_cache_counter_value(TC_CACHE_PTX_HIT);
  s->nvrtc_runs = tc_cache_counter_value(TC_CACHE_NVRTC_RUN);
  if (!have_dir) return TC_OK;
  tc_status st = tc_cache_scan(s->dir, &s->entries, &s->bytes, NULL);
  return st;
}

tc_status tc_cache_clear(int64_t *removed) {
  if (removed) *removed = 0;
  char dir[4096];
  if (!tc_cache_resolve_dir(dir, sizeof dir)) return TC_OK;
  return tc_cache_clear_dir(dir, removed, NULL);
}
