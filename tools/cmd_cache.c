/* cmd_cache.c - `tilec cache stats [--json] | clear | path`: the on-disk
 * kernel cache (src/runtime/cache.c, docs/cache.md).
 *
 * Exit statuses as for every command: 0 success, 1 the cache directory is
 * unknown or cannot be read or cleared, 2 a usage error. */
#include <stdio.h>
#include <string.h>

#include "tilec/tilec.h"
#include "../src/base/base.h"
#include "../src/runtime/cache.h"
#include "cli.h"

static void cache_usage(FILE *out) {
  fputs("usage: tilec cache stats [--json]\n"
        "       tilec cache clear\n"
        "       tilec cache path\n"
        "the on-disk kernel cache, where tc_compile keeps the kernels it makes (and the\n"
        "PTX NVRTC makes of them) so that compiling the same schedule again skips code\n"
        "generation and NVRTC\n"
        "  stats    print the directory, whether the cache is on, the number of entries\n"
        "           and their total size in bytes (--json: as one JSON object)\n"
        "  clear    remove every entry (only files tilec wrote) from the directory\n"
        "  path     print the directory\n"
        "directory: $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else $HOME/.cache/tilec;\n"
        "TILEC_CACHE=0 turns the cache off (stats, clear and path still work)\n",
        out);
}

/* The cache directory, or 0 after printing why there is none. */
static int cache_dir(char *buf, size_t cap) {
  if (tc_cache_resolve_dir(buf, cap)) return 1;
  fprintf(stderr, "tilec: no cache directory: set TILEC_CACHE_DIR, XDG_CACHE_HOME or HOME\n");
  return 0;
}

static void json_string(const char *s) {
  putchar('"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      printf("\\%c", *p);
    else if (*p == '\n')
      fputs("\\n", stdout);
    else if (*p == '\t')
      fputs("\\t", stdout);
    else if (*p < 0x20)
      printf("\\u%04x", *p);
    else
      putchar(*p);
  }
  putchar('"');
}

static int cache_stats(int json) {
  char dir[4096];
  if (!cache_dir(dir, sizeof dir)) return CLI_FAIL;
  int64_t entries = 0, bytes = 0;
  tc_str err;
  tc_str_init(&err);
  tc_status st = tc_cache_scan(dir, &entries, &bytes, &err);
  if (st != TC_OK) {
    fprintf(stderr, "tilec: %s\n", tc_str_cstr(&err));
    tc_str_free(&err);
    return CLI_FAIL;
  }
  tc_str_free(&err);
  int enabled = tc_cache_env_enabled();
  if (json) {
    fputs("{\"directory\": ", stdout);
    json_string(dir);
    printf(", \"enabled\": %s, \"entries\": %lld, \"bytes\": %lld}\n", enabled ? "true" : "false",
           (long long)entries, (long long)bytes);
  } else {
    printf("directory: %s\n", dir);
    printf("enabled: %s\n", enabled ? "yes" : "no (TILEC_CACHE=0)");
    printf("entries: %lld\n", (long long)entries);
    printf("bytes: %lld\n", (long long)bytes);
  }
  return CLI_OK;
}

static int cache_clear(void) {
  char dir[4096];
  if (!cache_dir(dir, sizeof dir)) return CLI_FAIL;
  int64_t removed = 0;
  tc_str err;
  tc_str_init(&err);
  tc_status st = tc_cache_clear_dir(dir, &removed, &err);
  if (st != TC_OK) {
    fprintf(stderr, "tilec: %s\n", tc_str_cstr(&err));
    tc_str_free(&err);
    return CLI_FAIL;
  }
  tc_str_free(&err);
  printf("removed %lld entr%s from %s\n", (long long)removed, removed == 1 ? "y" : "ies", dir);
  return CLI_OK;
}

int cmd_cache(int argc, char **argv) {
  const char *sub = NULL;
  int json = 0, help = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0 || (!sub && strcmp(a, "help") == 0)) {
      help = 1;
    } else if (strcmp(a, "--json") == 0) {
      json = 1;
    } else if (a[0] == '-') {
      return cli_usage_error("unknown option '%s' for `tilec cache`", a);
    } else if (!sub) {
      if (strcmp(a, "stats") != 0 && strcmp(a, "clear") != 0 && strcmp(a, "path") != 0)
        return cli_usage_error("unknown cache command '%s' (expected stats, clear or path)", a);
      sub = a;
    } else {
      return cli_usage_error("unexpected argument '%s' for `tilec cache %s`", a, sub);
    }
  }
  if (help) {
    cache_usage(stdout);
    return CLI_OK;
  }
  if (!sub) return cli_usage_error("`tilec cache` needs a command: stats, clear or path");
  if (json && strcmp(sub, "stats") != 0)
    return cli_usage_error("option --json is only for `tilec cache stats`");
  if (strcmp(sub, "stats") == 0) return cache_stats(json);
  if (strcmp(sub, "clear") == 0) return cache_clear();
  char dir[4096];
  if (!cache_dir(dir, sizeof dir)) return CLI_FAIL;
  printf("%s\n", dir);
  return CLI_OK;
}
