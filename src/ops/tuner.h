/* tuner.h - picks the fastest gridwise-GEMM perf config for a problem by
 * running the candidates, and remembers it in the perf database.
 *
 * The candidates are tc_gemm_candidates_for the problem's GEMM shape on
 * the target (CUDA f16/bf16: the mma.sync sets, then the FMA ones; HIP
 * f16/bf16: XDLOPS then FMA; else FMA), best first by the heuristic,
 * capped at max_candidates (the heuristic's own choice, tc_gemm_default_for,
 * is always among them and goes first).  Each one is planned, compiled, run once
 * and checked against a reference (a candidate whose result is wrong is
 * skipped, never chosen); in the same runtime call, after that run's
 * result is copied back, it is launched `reps` more times back to back on
 * the loaded kernel and its time is the median of those.  A candidate
 * that fails to plan, compile, run or check is
 * skipped with a note given to the progress callback.  The winner is
 * stored in the perf DB (when one is given) under the problem string, the
 * target and the device name, MIOpen-style, so the next call can reuse it
 * (tc_tune_lookup). */
#ifndef TC_TUNER_H
#define TC_TUNER_H

#include <stddef.h>

#include "tilec/tilec.h"
#include "../runtime/runtime.h"
#include "../tune/params.h"
#include "../tune/perfdb.h"
#include "conv.h"
#include "gemm.h"

#define TC_TUNE_DEFAULT_MAX 16
#define TC_TUNE_DEFAULT_REPS 3
/* The arch kernels for target are built for: arch; when arch is NULL,
 * the device's where it decides the arch (HIP: the AMD GPU's,
 * tc_rt_device_arch), else the ops' default (tc_target_ops_arch: sm_90a
 * for CUDA; NULL for OpenCL, and for HIP without a GPU, where
 * TC_HIP_DEFAULT_ARCH then applies). */
static inline const char *tc_tune_arch(tc_target target, const char *arch) {
  if (arch) return arch;
  const char *dev = tc_rt_device_arch(target);
  return dev ? dev : tc_target_ops_arch(target, NULL);
}

/* One candidate done (timed or skipped): the public API's event and
 * callback (tilec.h), which tc_conv2d_tune and tc_gemm_tune pass on. */
typedef tc_op_tune_event tc_tune_event;
typedef tc_op_tune_callback tc_tune_progress;

typedef struct tc_tune_options {
  tc_target target;          /* one whose kernels run (tc_target_info.runs) */
  const char *device;        /* OpenCL device selector; NULL: the default */
  const char *arch;          /* CUDA or AMD architecture; NULL: tc_tune_arch's */
  int max_candidates;        /* 0: TC_TUNE_DEFAULT_MAX */
  int reps;                  /* timed runs per candidate; 0: TC_TUNE_DEFAULT_REPS */
  tc_tune_progress progress; /* may be NULL */
  void *progress_ctx;
  tc_perfdb *db;             /* store the winner here; NULL: not stored */
  const char *key;           /* the problem string to store it under */
} tc_tune_options;

typedef struct tc_tune_result {
  tc_gemm_params best;       /* tuned fields (and, for a GEMM, derived ones) */
  char best_config[64];
  double best_ms;
  int candidates;            /* valid candidates for the shape */
  int tried;                 /* how many were tried (<= max_candidates) */
  int skipped;               /* of those, how many failed */
  char device[256];          /* the device name the DB key uses */
  int stored;                /* 1: written to the DB */
  char store_err[512];       /* why not, when a DB was given and writing failed */
} tc_tune_result;

/* Tunes a convolution.  Inputs are filled with pseudo-random values and
 * every candidate's result is checked with tc_conv_verify.  Returns TC_OK
 * with *r filled, or an error (no device, the problem is invalid, no
 * candidate ran correctly) with err set. */
tc_status tc_tune_conv(const tc_conv_problem *p, const tc_tune_options *o, tc_tune_result *r,
                       tc_str *err);

/* What a GEMM's result is checked against: n elements of C at offsets
 * idx[0 .. n) (idx NULL: every element, offsets 0 .. n-1), each within
 * want +- bound.  tc_gemm_check_make builds it for `tilec gemm`'s problem
 * (as tc_tune_gemm_reference): every element when G*M*N*K is at most
 * TC_CHECK_FULL_MACS multiply-adds, else a sample: C split into square
 * cells of c x c elements (c the smallest power of two that gives at most
 * max(TC_CHECK_MIN_SAMPLES, TC_CHECK_FULL_MACS / K) cells) and one
 * pseudo-random element of each cell, so every tile of any kernel is
 * checked somewhere and a run stays about a second of CPU time.  *cell
 * gets c (1 when every element is checked).  Returns 0, or -1 when memory
 * runs out.  tc_gemm_check_sample makes only the choice of elements (n
 * and idx; want and bound stay NULL), for a caller with its own reference
 * (the fused GEMM's epilogue). */
typedef struct tc_gemm_check {
  size_t n;
  size_t *idx;
  double *want, *bound;
} tc_gemm_check;
#define TC_CHECK_FULL_MACS (1LL << 30)
#define TC_CHECK_MIN_SAMPLES 4096
int tc_gemm_check_make(int64_t g, int64_t m, int64_t n, int64_t k, int trans_a, int trans_b,
                       tc_dtype t, const void *a, const void *b, tc_gemm_check *c, int64_t *cell);
int tc_gemm_check_sample(int64_t g, int64_t m, int64_t n, int64_t k, tc_gemm_check *c,
                         int64_t *cell);
void tc_gemm_check_free(tc_gemm_check *c);

/* Tunes a GEMM whose A, B, C buffers are bufs[0..2] (host data and sizes;
 * they are not modified).  When chk is not NULL, every candidate's C is
 * checked against it (tc_tune_check). */
tc_status tc_tune_gemm(const tc_gemm_problem *pb, const tc_rt_buffer bufs[3],
                       const tc_gemm_check *chk, const tc_tune_options *o, tc_tune_result *r,
                       tc_str *err);

/* The perf DB entry of (key, target, device_name), parsed into the tuned
 * fields of *p (derive them against the shape before use).  1 found, 0 no
 * entry, -1 a DB error or an entry that does not parse (err says which). */
int tc_tune_lookup(tc_perfdb *db, const char *key, tc_target target, const char *device_name,
                   tc_gemm_params *p, tc_perfdb_entry *e, tc_str *err);

/* The name of the device a run with (target, device selector) uses, as the
 * DB key spells it (tc_rt_device_name): "platform / device" for OpenCL,
 * the CUDA device 0 name for CUDA, the AMD GPU's (hipDeviceGetName: "AMD
 * Instinct MI250X") for HIP.  TC_OK, or TC_ERR_NO_DEVICE /
 * TC_ERR_UNSUPPORTED with err. */
tc_status tc_tune_device_name(tc_target target, const char *device, char *buf, size_t bufcap,
                              tc_str *err);

/* ---- checking results (the rule of tc_conv_verify) ---- */

/* The largest |got - want| an element may have when it is a sum of
 * `terms` products accumulated in f32 in any order, the absolute values of
 * the products summing to abs_sum: gamma * abs_sum + (terms+1) * 2^-149
 * with gamma = (terms+1)u / (1 - (terms+1)u), u = 2^-24; for an f16
 * result also its final rounding, 2^-11 * (|want| + that) + 2^-25. */
double tc_tune_bound(double abs_sum, double want, int64_t terms, tc_dtype t);

/* The reference of `tilec gemm`: C[g][m][n] = sum_k A[g][m][k] * B[g][k][n]
 * with every matrix row-major, A stored [G][K][M] when trans_a and B
 * stored [G][N][K] when trans_b, elements of type t, summed in double.
 * want and bound get the `count` elements at offsets idx[] of C (idx
 * NULL: all G*M*N, count must be that) (bound by tc_tune_bound). */
void tc_tune_gemm_reference(int64_t g, int64_t m, int64_t n, int64_t k, int trans_a, int trans_b,
                            tc_dtype t, const void *a, const void *b, const size_t *idx,
                            size_t count, double *want, double *bound);

/* Compares n elements of got (type t), got[idx[i]] (idx NULL: got[i]),
 * with want[i] +- bound[i].  Returns how many are out of bound (NaN
 * always is); *max_abs gets the largest |got - want| (INFINITY for NaN),
 * *worst the largest error / bound, and msg a one-line summary naming the
 * first failing element by its offset. */
int64_t tc_tune_check(const void *got, tc_dtype t, const size_t *idx, const double *want,
                      const double *bound, size_t n, double *max_abs, double *worst, tc_str *msg);

/* Fills n elements of type t with pseudo-random values in [-1, 1) from
 * *seed (updated), or with NaN when seed is NULL. */
void tc_tune_fill(void *buf, size_t n, tc_dtype t, uint64_t *seed);

#endif
