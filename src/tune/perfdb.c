/* perfdb.c - the SQLite performance database (see perfdb.h). */
#define _POSIX_C_SOURCE 200809L
#include "perfdb.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "tilec/tilec.h"
#include "../base/base.h"

struct tc_perfdb {
  sqlite3 *db;
  char *path;
};

static const char *const schema =
    "CREATE TABLE IF NOT EXISTS perf_db ("
    " problem TEXT NOT NULL,"
    " target TEXT NOT NULL,"
    " device TEXT NOT NULL,"
    " perf_config TEXT NOT NULL,"
    " time_ms REAL NOT NULL,"
    " tilec_version TEXT NOT NULL,"
    " timestamp INTEGER NOT NULL,"
    " PRIMARY KEY (problem, target, device))";


int tc_perfdb_default_path(char *buf, size_t cap) {
  const char *env = getenv("TILEC_PERFDB");
  const char *xdg = getenv("XDG_DATA_HOME");
  const char *home = getenv("HOME");
  int n;
  if (cap) buf[0] = 0;
  if (env && *env)
    n = snprintf(buf, cap, "%s", env);
  else if (xdg && xdg[0] == '/') /* the XDG spec: relative paths are ignored */
    n = snprintf(buf, cap, "%s/tilec/perfdb.sqlite", xdg);
  else if (home && *home)
    n = snprintf(buf, cap, "%s/.local/share/tilec/perfdb.sqlite", home);
  else
    return -1;
  if (n < 0 || (size_t)n >= cap) {
    if (cap) buf[0] = 0;
    return -1;
  }
  return 0;
}

/* Creates every missing directory above the file `path` (mkdir -p of its
 * dirname).  0, or -1 with err naming the directory. */
static int make_parent_dirs(const char *path, tc_str *err) {
  char *dir = tc_xstrdup(path);
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir) {
    free(dir);
    return 0;
  }
  *slash = 0;
  for (char *p = dir + 1;; p++) {
    if (*p != '/' && *p != 0) continue;
    char c = *p;
    *p = 0;
    struct stat st;
    if (stat(dir, &st) != 0) {
      if (errno != ENOENT || (mkdir(dir, 0755) != 0 && errno != EEXIST)) {
        tc_err_set(err, "cannot create the perf DB directory %s: %s", dir, strerror(errno));
        free(dir);
        return -1;
      }
    } else if (!S_ISDIR(st.st_mode)) {
      tc_err_set(err, "cannot create the perf DB directory %s: a file of that name exists", dir);
      free(dir);
      return -1;
    }
    *p = c;
    if (c == 0) break;
  }
  free(dir);
  return 0;
}

int tc_perfdb_open(const char *path, int create, tc_perfdb **out, tc_str *err) {
  char def[4096];
  *out = NULL;
  if (err) tc_str_clear(err);
  if (!path) {
    if (tc_perfdb_default_path(def, sizeof def) != 0) {
      tc_err_set(err, "no place for the perf DB: set TILEC_PERFDB, XDG_DATA_HOME or HOME");
      return -1;
    }
    path = def;
  }
  if (!*path) {
    tc_err_set(err, "the perf DB path is empty");
    return -1;
  }
  struct stat st;
  if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      tc_err_set(err, "cannot open the perf DB %s: it is a directory", path);
      return -1;
    }
  } else if (!create) {
    if (errno == ENOENT) return 0;
    tc_err_set(err, "cannot open the perf DB %s: %s", path, strerror(errno));
    return -1;
  } else if (make_parent_dirs(path, err) != 0) {
    return -1;
  }

  sqlite3 *db = NULL;
  int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(path, &db, flags, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_busy_timeout(db, 10000);
    char *msg = NULL;
    rc = sqlite3_exec(db, schema, NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
      tc_err_set(err, "cannot open the perf DB %s: %s", path, msg ? msg : sqlite3_errstr(rc));
      sqlite3_free(msg);
      sqlite3_close(db);
      return -1;
    }
  } else {
    tc_err_set(err, "cannot open the perf DB %s: %s", path,
            db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close(db);
    return -1;
  }
  tc_perfdb *p = tc_xcalloc(1, sizeof *p);
  p->db = db;
  p->path = tc_xstrdup(path);
  *out = p;
  return 1;
}

void tc_perfdb_close(tc_perfdb *db) {
  if (!db) return;
  sqlite3_close(db->db);
  free(db->path);
  free(db);
}

const char *tc_perfdb_path(const tc_perfdb *db) { return db ? db->path : ""; }

/* Prepares sql and binds the text arguments in order; NULL on error. */
static sqlite3_stmt *prepare(tc_perfdb *db, const char *sql, int ntext, const char *const *text,
                             const char *what, tc_str *err) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db->db, sql, -1, &st, NULL);
  for (int i = 0; rc == SQLITE_OK && i < ntext; i++)
    rc = sqlite3_bind_text(st, i + 1, text[i], -1, SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) {
    tc_err_set(err, "perf DB %s: cannot %s: %s", db->path, what, sqlite3_errmsg(db->db));
    sqlite3_finalize(st);
    return NULL;
  }
  return st;
}

static void copy_col(sqlite3_stmt *st, int col, char *buf, size_t cap) {
  const unsigned char *t = sqlite3_column_text(st, col);
  snprintf(buf, cap, "%s", t ? (const char *)t : "");
}

int tc_perfdb_get(tc_perfdb *db, const char *problem, const char *target, const char *device,
                  tc_perfdb_entry *e, tc_str *err) {
  const char *keys[3] = {problem, target, device};
  sqlite3_stmt *st = prepare(db,
                             "SELECT perf_config, time_ms, tilec_version, timestamp FROM perf_db"
                             " WHERE problem = ?1 AND target = ?2 AND device = ?3",
                             3, keys, "read", err);
  if (!st) return -1;
  int rc = sqlite3_step(st);
  int found = 0;
  if (rc == SQLITE_ROW) {
    memset(e, 0, sizeof *e);
    copy_col(st, 0, e->perf_config, sizeof e->perf_config);
    e->ms = sqlite3_column_double(st, 1);
    copy_col(st, 2, e->version, sizeof e->version);
    e->timestamp = sqlite3_column_int64(st, 3);
    found = 1;
  } else if (rc != SQLITE_DONE) {
    tc_err_set(err, "perf DB %s: cannot read: %s", db->path, sqlite3_errmsg(db->db));
    found = -1;
  }
  sqlite3_finalize(st);
  return found;
}

int tc_perfdb_put(tc_perfdb *db, const char *problem, const char *target, const char *device,
                  const char *perf_config, double ms, tc_str *err) {
  const char *vals[5] = {problem, target, device, perf_config, TILEC_VERSION};
  sqlite3_stmt *st = prepare(db,
                             "INSERT OR REPLACE INTO perf_db (problem, target, device, perf_config,"
                             " tilec_version, time_ms, timestamp) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                             5, vals, "write", err);
  if (!st) return -1;
  int rc = sqlite3_bind_double(st, 6, ms);
  if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 7, (sqlite3_int64)time(NULL));
  if (rc == SQLITE_OK) rc = sqlite3_step(st);
  int ret = 0;
  if (rc != SQLITE_DONE) {
    tc_err_set(err, "perf DB %s: cannot write: %s", db->path, sqlite3_errmsg(db->db));
    ret = -1;
  }
  sqlite3_finalize(st);
  return ret;
}

int64_t tc_perfdb_count(tc_perfdb *db, tc_str *err) {
  sqlite3_stmt *st = prepare(db, "SELECT count(*) FROM perf_db", 0, NULL, "read", err);
  if (!st) return -1;
  int64_t n = -1;
  if (sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  else
    tc_err_set(err, "perf DB %s: cannot read: %s", db->path, sqlite3_errmsg(db->db));
  sqlite3_finalize(st);
  return n;
}
