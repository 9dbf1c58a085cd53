/* cache.h - the on-disk kernel cache: one file per compiled kernel, keyed
 * by tc_fusion_hash (src/ir/hash.c), holding everything tc_compile returns
 * (source, name, launch dims, shared/tensor memory, parameter sizes, each
 * tensor's allocation) and,
 * for CUDA, the PTX with the NVRTC version that made it.  See docs/cache.md.
 *
 * The key also covers the build (tc_cache_build_fingerprint), so a rebuilt
 * tilec never reads an older build's kernels.
 *
 * Where: $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else
 * $HOME/.cache/tilec.  TILEC_CACHE=0 (or off, no, false) turns it off.
 * Entries are `<32 hex digits>.tck`, written to a temporary file in the
 * same directory and renamed into place, so readers see a whole entry or
 * none.  A corrupt or truncated entry reads as a miss and is removed.
 * Cache failures (an unwritable directory, a full disk) never fail a
 * compile; they are counted in the statistics.  Safe to call from several
 * threads and processes at once. */
#ifndef TC_CACHE_H
#define TC_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "tilec/tilec.h"
#include "../base/base.h"
#include "../layout/domain.h"
#include "../lower/allocation.h"
#include "runtime.h"

/* A kernel's size variables (tc_input_sym, docs/dynamic.md) as the
 * runtime needs them: n 0 for a kernel of fixed shapes; else for each
 * the divisor and bound it assumed, its parameter, and the parameters
 * with an extent that is it (bit i: parameter i; their param_bytes are
 * at the bound); for each grid dimension d whose extent depends on one
 * (grid_var[d] >= 0: which), the steps from its value to that extent. */
typedef struct tc_sym_info {
  int n;
  int64_t div[TC_MAX_SIZE_VARS], bound[TC_MAX_SIZE_VARS], mask[TC_MAX_SIZE_VARS];
  int param[TC_MAX_SIZE_VARS];
  int grid_var[3], grid_nsteps[3];
  int64_t grid_steps[3][TC_SYM_MAX_STEPS];
} tc_sym_info;

typedef struct tc_cache_entry {
  char key[33];        /* 32 hex digits */
  char name[64];       /* the kernel name */
  tc_target target;
  char arch[32];
  int64_t smem, tmem_cols;
  int64_t grid[3], block[3];
  int nparams;
  size_t *param_bytes;   /* nparams of each (tc_xmalloc'd) */
  int *param_is_output;
  int nallocs;           /* each tensor's allocation (tc_xmalloc'd) */
  tc_tensor_alloc *allocs;
  int ntmaps;            /* CUDA TMA kernels: their tensor maps (tc_xmalloc'd) */
  tc_rt_tmap *tmaps;
  int64_t ws_words;      /* grid reductions: the workspace's 32-bit words (0: none) */
  tc_sym_info sym;       /* the size variables (sym.n 0: none) */
  char *source;          /* NUL-terminated */
  char *ptx;             /* CUDA: PTX, or NULL when none is stored */
  char ptx_tag[32];      /* what made ptx, e.g. "nvrtc-13.0" ("" when none) */
} tc_cache_entry;

/* The process-wide counters (see tc_cache_stats in tilec.h). */
typedef enum tc_cache_counter {
  TC_CACHE_HIT,        /* tc_compile found its kernel */
  TC_CACHE_MISS,       /* tc_compile looked and did not */
  TC_CACHE_STORE,      /* an entry was written */
  TC_CACHE_STORE_FAIL, /* an entry could not be written */
  TC_CACHE_CORRUPT,    /* an unreadable entry was found (and removed) */
  TC_CACHE_PTX_HIT,    /* tc_kernel_build/run took PTX from an entry */
  TC_CACHE_NVRTC_RUN,  /* tc_kernel_build/run ran NVRTC */
  TC_CACHE_NCOUNTERS
} tc_cache_counter;

/* The cache key of compiling f with these options: tc_fusion_hash mixed
 * with tc_cache_build_fingerprint. */
void tc_cache_key(const tc_fusion *f, tc_target target, const char *arch,
                  const char *kernel_name, char key[33]);
/* A fingerprint of the file holding tilec's code (path, inode, size,
 * mtime): a rebuilt tilec gets new keys.  0 where it cannot be found. */
uint64_t tc_cache_build_fingerprint(void);

void tc_cache_count(tc_cache_counter c);
int64_t tc_cache_counter_value(tc_cache_counter c);

/* The cache directory the environment names, written to buf; returns 0
 * (buf "") when none can be determined (no TILEC_CACHE_DIR,
 * XDG_CACHE_HOME or HOME), or when it does not fit in cap. */
int tc_cache_resolve_dir(char *buf, size_t cap);
/* 1 when TILEC_CACHE is unset or not 0/off/no/false. */
int tc_cache_env_enabled(void);
/* Both of the above: the cache is on and has a directory. */
int tc_cache_enabled(void);

/* Looks up key (32 hex digits).  On a hit fills *e (free with
 * tc_cache_entry_free) and returns 1; on a miss returns 0 with *e zeroed.
 * A corrupt entry (also one stored under another key) is removed and
 * counted; hits and misses are the caller's to count. */
int tc_cache_load(const char *key, tc_cache_entry *e);
/* Writes e under e->key atomically (replacing any entry there).  Returns 0,
 * or -1 when the cache is off or the write failed (counted as a store
 * failure).  e->ptx may be NULL. */
int tc_cache_store(const tc_cache_entry *e);
void tc_cache_entry_free(tc_cache_entry *e);

/* Counts the entries in dir and their total size in bytes (0 and 0 when
 * dir does not exist).  TC_ERR_RUNTIME with a message when it cannot be
 * read. */
tc_status tc_cache_scan(const char *dir, int64_t *entries, int64_t *bytes, tc_str *err);
/* Removes every entry (and leftover temporary file) tilec wrote in dir,
 * nothing else; *removed (may be NULL) gets the number of entries removed.
 * A missing dir is not an error. */
tc_status tc_cache_clear_dir(const char *dir, int64_t *removed, tc_str *err);

#endif
