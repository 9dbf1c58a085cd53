/* perfdb.h - the performance database: the tuned perf config of a problem
 * on a device, kept in SQLite (MIOpen's perf-db idea).
 *
 * One table, keyed by (problem string, target, device name): the problem
 * string is MIOpenDriver-style ("conv2d -F 1 -n 2 -c 64 ..." from
 * tc_conv_problem_string, or "gemm -M 64 -N 64 ..."), the target "opencl"
 * or "cuda", the device name as the runtime reports it.  Each row holds
 * the perf config string ("BS,MPB,NPB,KPB,MPT,NPT"), its time in ms, the
 * tilec version that measured it and a Unix timestamp.
 *
 * Where: $TILEC_PERFDB (a file), else $XDG_DATA_HOME/tilec/perfdb.sqlite,
 * else $HOME/.local/share/tilec/perfdb.sqlite.  Opening for writing
 * creates the missing directories and the file; opening for reading only
 * never creates anything.  Several processes may use one file at once
 * (SQLite locking, with a busy timeout).  Failures come back as a status
 * and one line in err naming the path and the reason. */
#ifndef TC_PERFDB_H
#define TC_PERFDB_H

#include <stddef.h>
#include <stdint.h>

#include "../base/base.h"

typedef struct tc_perfdb tc_perfdb;

typedef struct tc_perfdb_entry {
  char perf_config[64];
  double ms;
  char version[32];      /* tilec version that stored it */
  int64_t timestamp;     /* seconds since the epoch */
} tc_perfdb_entry;

/* The path the environment names, written to buf.  Returns 0, or -1 (buf
 * "") when there is none (no TILEC_PERFDB, XDG_DATA_HOME or HOME) or it
 * does not fit in cap. */
int tc_perfdb_default_path(char *buf, size_t cap);

/* Opens the database at path (NULL: tc_perfdb_default_path).
 *   create = 1: creates missing directories, the file and the table;
 *               returns 1 with *out set, or -1 with err set.
 *   create = 0: opens an existing file read-write without creating it;
 *               returns 1 with *out set, 0 (*out NULL, err "") when the
 *               file does not exist, or -1 with err set. */
int tc_perfdb_open(const char *path, int create, tc_perfdb **out, tc_str *err);
void tc_perfdb_close(tc_perfdb *db);
/* The file the database lives in. */
const char *tc_perfdb_path(const tc_perfdb *db);

/* Looks up (problem, target, device): 1 found (*e filled), 0 none, -1 an
 * error (err set). */
int tc_perfdb_get(tc_perfdb *db, const char *problem, const char *target, const char *device,
                  tc_perfdb_entry *e, tc_str *err);
/* Stores or replaces the row of (problem, target, device), stamped with
 * this tilec version and the current time.  0, or -1 with err set. */
int tc_perfdb_put(tc_perfdb *db, const char *problem, const char *target, const char *device,
                  const char *perf_config, double ms, tc_str *err);
/* Number of rows (for tests and listings); -1 on error. */
int64_t tc_perfdb_count(tc_perfdb *db, tc_str *err);

#endif
