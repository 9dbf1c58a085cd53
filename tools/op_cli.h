/* op_cli.h - what `tilec conv2d` (cmd_conv.c) and `tilec gemm`
 * (cmd_gemm.c) share: the options common to both (-V, -t, --perf-config,
 * --tune, --time, --emit, --json, --device, --target ...), integer
 * arguments, tuning progress, the --emit file and a small JSON writer. */
#ifndef TILEC_OP_CLI_H
#define TILEC_OP_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "tilec/tilec.h"
#include "../src/base/base.h"
#include "../src/ops/tuner.h"

typedef struct op_opts {
  const char *cmd;         /* "conv2d" or "gemm", for messages */
  int verify;              /* -V 1 */
  int time;                /* --time */
  int iters;               /* -i N: timed runs for --time */
  int tune;                /* --tune */
  int tune_max;            /* --tune-max N */
  int json;                /* --json */
  const char *perf_config; /* --perf-config STRING */
  const char *emit;        /* --emit FILE */
  const char *device;      /* --device SEL */
  const char *arch;        /* --arch ARCH */
  const char *target_arg;  /* --target as given */
  tc_target target;
  tc_dtype dtype;          /* -t */
} op_opts;

#define OP_DEFAULT_ITERS 5

void op_opts_init(op_opts *o, const char *cmd);

/* Prints "tilec CMD: <message>; run `tilec CMD --help`" on stderr (one
 * line) and returns CLI_USAGE. */
int op_usage_error(const op_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "tilec CMD: <message>" on stderr and returns CLI_USAGE (an
 * impossible problem, a perf config that breaks a rule). */
int op_invalid(const op_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "tilec CMD: <message>" on stderr and returns CLI_FAIL. */
int op_fail(const op_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parses an integer option value in [min, max]; CLI_OK, or CLI_USAGE
 * after a message naming the flag. */
int op_parse_int(const op_opts *o, const char *flag, const char *v, int64_t min, int64_t max,
                 int64_t *out);

/* The value of option `name` at argv[*i] ("NAME VALUE" or "NAME=VALUE"),
 * advancing *i; NULL when argv[*i] is not this option; NULL with
 * *rc = CLI_USAGE (after a message) when the value is missing. */
const char *op_value(op_opts *o, int argc, char **argv, int *i, const char *name, int *rc);
/* Tries the common options at argv[*i].  Returns 1 when argv[*i] was one
 * of them (advancing *i past a value), 0 when it is not, and sets *rc to
 * CLI_USAGE after a message on a bad value. */
int op_common_option(op_opts *o, int argc, char **argv, int *i, int *rc);
/* The usage lines of the common options. */
void op_common_usage(FILE *out);
/* Checks the combination once all options are read (target, --device
 * with cuda or hip, --tune with --perf-config ...).  CLI_OK, CLI_USAGE, or
 * CLI_FAIL for --tune with --target hip and no AMD GPU (nothing can run). */
int op_opts_check(op_opts *o);
/* Whether the kernels run: not when --emit is given without -V 1,
 * --time or --tune (and not for --target hip without an AMD GPU:
 * op_find_device, op_hip_finish). */
int op_runs(const op_opts *o);
/* --target hip when nothing runs (no AMD GPU, or --emit alone), after the
 * kernels were generated (and --emit written): compiles each source with
 * hipcc for --arch (default: the AMD GPU's, else gfx90a) and prints
 * "compiled for ARCH (hipcc)", without a GPU (have_dev 0) "compiled for
 * ARCH (hipcc); no AMD GPU: cannot run" (or "not compiled: ..." where
 * hipcc is missing or does not know the arch).  Returns CLI_OK, or
 * CLI_FAIL when a source does not compile or, without a GPU (why says
 * why), -V 1 / --time / --tune asked for a run. */
int op_hip_finish(op_opts *o, int have_dev, const char *why, const char *const *sources,
                  const char *const *names, int n);

/* The tuner's progress callback: "tuning 7/16 BS,..: 1.234 ms" on stderr. */
void op_tune_progress(void *ctx, const tc_tune_event *ev);

/* What a command found out, for its text and JSON output: where the perf
 * config came from, the device, and the run (verify, time, tune). */
typedef struct op_report {
  const char *source;        /* where the perf config came from */
  char source_detail[600];
  char config[64];
  char device[256];
  int ran, verified, pass, timed, tuned;
  double first_ms, max_abs, worst, ms, gflops;
  int64_t bad;
  int64_t checked, check_cell; /* elements compared (0: every one), one per cell x cell */
  char verify_msg[512];
  tc_tune_result tune;
  const char *db_path;
} op_report;

/* The device of the run into r->device (its name, the perf DB key; why
 * says why there is none).  Returns whether there is one, and sets *runs
 * (op_runs; for hip without an AMD GPU 0: op_hip_finish compiles); without
 * a device but with kernels to run it prints the failure (the caller then
 * fails). */
int op_find_device(const op_opts *o, op_report *r, int *runs, tc_str *why);
/* "device: TARGET NAME" or "device: TARGET, none (WHY)" on stdout. */
void op_print_device(const op_opts *o, const op_report *r, int have_dev, const char *why);

/* --tune: prints "tuning KEY on DEVICE (at most N candidates)" on stderr
 * and returns the API's tuning options, with op_tune_progress. */
tc_op_tune_options op_tune_start(op_opts *o, const op_report *r, const char *key);
/* A tuning that ended with status st: CLI_OK with the result tr in r
 * (r->tuned, r->tune, r->db_path a copy the caller frees), or CLI_FAIL
 * after "tuning failed: <err>". */
int op_tune_finish(const op_opts *o, op_report *r, tc_status st, const tc_op_tune_result *tr,
                   const char *err);

/* The plan's perf config into r: r->config, r->source and the detail
 * ("--perf-config" for a given one), after "tilec CMD: warning: ..." on
 * stderr where the API gave a warning. */
void op_set_plan(const op_opts *o, op_report *r, const char *warning, const char *config,
                 const char *source, const char *detail);

/* --target cuda without a run: compiles each source with NVRTC for --arch
 * where NVRTC exists ("compiled with NVRTC for ARCH", or "not compiled:
 * ..." where it is missing).  CLI_OK, or CLI_FAIL after a message naming
 * the kernel (names[i], or "the kernel" where names is NULL). */
int op_cuda_check(const op_opts *o, const char *const *sources, const char *const *names, int n);

/* One kernel when nothing runs: compiled with hipcc (op_hip_finish) or
 * NVRTC (op_cuda_check) as the target builds; CLI_OK for OpenCL. */
int op_build_only(op_opts *o, int have_dev, const char *why, const char *src, const char *name);

/* Sorts the n > 0 times t and returns their median. */
double op_median(double *t, int n);
/* The --time result of o->iters timed launches (times, freed here) of
 * work of `flops` floating-point operations: r's median, GFLOP/s and
 * timed flag. */
void op_set_time(const op_opts *o, op_report *r, double *times, double flops);
/* The text lines of a run: the time (or the first run), then the verify
 * result with the max absolute error where with_max_abs, over `elems`
 * elements. */
void op_print_run(const op_opts *o, const op_report *r, int with_max_abs, int64_t elems);

/* A generated kernel as the public API describes it. */
typedef struct op_kernel {
  const char *name, *source;
  int64_t grid[3], block[3];
  int64_t smem_bytes;
} op_kernel;

/* --emit: one kernel's header comment and source appended to out. */
void op_emit_kernel(tc_str *out, int index, int count, const op_kernel *k, const char *extra);
/* A public API error message ("tc_gemm_plan: why") without the name of
 * the call, for the command's own message. */
const char *op_api_message(const char *err);
/* Writes text to path; CLI_OK or CLI_FAIL after a message. */
int op_write_file(const op_opts *o, const char *path, const char *text);

/* JSON pieces appended to a builder. */
void op_json_str(tc_str *j, const char *s);
void op_json_num(tc_str *j, double v); /* null for NaN/inf */
/* ", "target": T, "device": D" (null without a device). */
void op_json_device(tc_str *j, const op_opts *o, const op_report *r);
/* ", "ran": .., "verify": {..} or null, "time": {..} or null" (the verify
 * object with "max_abs_error" where with_max_abs). */
void op_json_run(tc_str *j, const op_opts *o, const op_report *r, int with_max_abs);
/* ", "size_variable": {..}, "size_variables": [..]" of kernel k (the
 * first, then all, each with name, divisor and bound); nothing for a
 * kernel of fixed shapes. */
void op_json_size_vars(tc_str *j, const tc_kernel *k);
/* ", "tune": {..} or null". */
void op_json_tune(tc_str *j, const op_report *r);
/* Closes the object with ", "ok": ..}" (when not ok, after an "error"
 * field with the last message printed on stderr), prints it on stdout and
 * frees j. */
void op_json_end(tc_str *j, int ok);
/* --json for a command that failed before it had a kernel (no device, a
 * perf config that breaks a rule, ...): {"command", "problem": {"string":
 * key} or null, "target", "kernels": [], "ran": false, "error", "ok":
 * false}. */
void op_json_failure(const op_opts *o, const char *key);

#endif
