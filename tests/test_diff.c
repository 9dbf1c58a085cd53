/* test_diff.c - differential tests: random fusions with random schedules
 * (diff_case.h) compiled for OpenCL and run on the default device (PoCL),
 * each output element checked against two evaluations: the library's
 * reference (tc_reference_run) and an independent one written here from
 * the generator's record of ops (diff_values.h), which bounds every
 * element by the accuracy of each op in the tensor's dtype.
 *
 * Cases run in child processes (workers, one case at a time each), so
 * that a crash or an abort is caught and a hang is killed after a
 * timeout.  Outcomes:
 *   ok       compiled, ran, every element within its bounds;
 *   refused  tc_compile (or the launch) refused the schedule with a
 *            message; counted by class of message, never a failure;
 *   wrong    an element out of bounds, kernel and reference apart, or the
 *            device compiler rejected the generated source;
 *   crashed  the worker died of a signal or exited without a result;
 *   hung     the case ran past the timeout (its worker is killed).
 *
 * Without arguments: checks of the value model and of the outcome
 * classification, then DF_SUITE_CASES cases of a fixed seed; the test
 * fails on any wrong, crashed or hung case.  With arguments, a campaign
 * (docs/fuzzing.md, `make fuzz-diff`):
 *   test_diff [--seed S] [--cases N] [--first K] [--timeout-ms T]
 *             [--edge] [--shrink] [--verbose] [--jobs J] [--device D]
 *   test_diff [--seed S] --print-case K [--shrink]   the case as C
 * Exit status: 0 when no case was wrong, crashed or hung, 1 otherwise,
 * 2 for bad arguments. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "diff_case.h"
#include "test.h"

#define DF_SUITE_SEED 1
#define DF_SUITE_CASES 200

typedef enum df_outcome { DF_OK, DF_REFUSED, DF_WRONG, DF_CRASHED, DF_HUNG } df_outcome;
static const char *df_outcome_name[] = {"ok", "refused", "wrong", "crashed", "hung"};

typedef struct df_opts {
  uint64_t seed;
  long cases, first;
  int timeout_ms;
  int edge, shrink, verbose;
  int jobs;           /* cases run at once */
  const char *device;
  int inject; /* self-tests: 1 corrupts an output element, 2 aborts, 3 hangs */
} df_opts;

typedef struct df_result {
  df_outcome outcome;
  char msg[1024];     /* the refusal, or the first line of what went wrong */
  char detail[4096];  /* further lines */
  double secs, cpu;   /* wall seconds, and CPU seconds in the worker */
} df_result;

/* ---- in a worker: build, compile, run, compare ------------------------------- */

/* The index into y (rank r, y's shape) of the element at coordinates co
 * of a tensor that y broadcasts to: 0 along y's axes of extent 1. */
static int64_t df_bcast_index(const df_tensor *y, const int64_t *co) {
  int64_t i = 0;
  for (int k = 0; k < y->rank; k++) i = i * y->shape[k] + (y->shape[k] == 1 ? 0 : co[k]);
  return i;
}

/* Evaluates record tensor i from its operands' values (diff_values.h) at
 * launch `run` (its scalar inputs' values).  A Welford state's values are
 * its n means, then its n variances. */
static dv *df_eval_tensor(const df_case *c, dv **val, int i, const void *input, int run) {
  const df_tensor *x = &c->t[i];
  int64_t n = df_elems(x);
  dv *v = malloc((size_t)n * sizeof *v);
  if (x->kind == DF_INPUT) {
    for (int64_t e = 0; e < n; e++) {
      double d = dt_read(x->dtype, input, (size_t)e);
      v[e] = isfinite(d) ? dv_point(d) : dv_unknown;
    }
    return v;
  }
  int a = df_resolve(c, x->a), b = x->kind == DF_BINARY ? df_resolve(c, x->b) : -1;
  const df_tensor *A = &c->t[a];
  if (x->kind == DF_WPART) { /* the state's means or variances */
    memcpy(v, val[a] + (x->sub ? n : 0), (size_t)n * sizeof *v);
    return v;
  }
  if (x->kind == DF_WELFORD) { /* each row's elements in one place, then dv_welford */
    int64_t m = df_elems(A), row = m / n, *fill = calloc((size_t)n, sizeof *fill);
    dv *rows = malloc((size_t)m * sizeof *rows);
    v = realloc(v, 2 * (size_t)n * sizeof *v);
    for (int64_t e = 0; e < m; e++) {
      int64_t co[3], rest = e;
      for (int k = A->rank - 1; k >= 0; k--) co[k] = rest % A->shape[k], rest /= A->shape[k];
      int64_t o = df_bcast_index(x, co);
      rows[o * row + fill[o]++] = val[a][e];
    }
    for (int64_t e = 0; e < n; e++) dv_welford(rows + e * row, row, &v[e], &v[n + e]);
    free(rows), free(fill);
    return v;
  }
  if (x->kind == DF_REDUCE) { /* every element of A into the element of x it reduces to */
    dv_red *acc = malloc((size_t)n * sizeof *acc);
    for (int64_t e = 0; e < n; e++) acc[e] = dv_red_start((tc_reduce_op)x->sub);
    for (int64_t e = 0, m = df_elems(A); e < m; e++) {
      int64_t co[3], rest = e;
      for (int k = A->rank - 1; k >= 0; k--) co[k] = rest % A->shape[k], rest /= A->shape[k];
      dv_red_add(&acc[df_bcast_index(x, co)], val[a][e]);
    }
    for (int64_t e = 0; e < n; e++) v[e] = dv_red_end(&acc[e], x->dtype);
    free(acc);
    return v;
  }
  for (int64_t e = 0; e < n; e++) {
    int64_t co[3], rest = e;
    for (int k = x->rank - 1; k >= 0; k--) co[k] = rest % x->shape[k], rest /= x->shape[k];
    int64_t src = df_bcast_index(A, co);
    if (x->kind == DF_PERMUTE) { /* out[c] = in[d] with d[perm[k]] = c[k] */
      int64_t d[3];
      for (int k = 0; k < x->rank; k++) d[x->perm[k]] = co[k];
      src = 0;
      for (int k = 0; k < A->rank; k++) src = src * A->shape[k] + d[k];
    }
    switch (x->kind) {
      case DF_UNARY: v[e] = dv_unary((tc_unary_op)x->sub, x->dtype, val[a][src]); break;
      case DF_BINARY:
        v[e] = dv_binary((tc_binary_op)x->sub, x->dtype, val[a][src], val[b][df_bcast_index(&c->t[b], co)]);
        break;
      case DF_SCALAR: {
        dv s = dv_point(df_scalar_run(x, run));
        v[e] = x->left ? dv_binary((tc_binary_op)x->sub, x->dtype, s, val[a][src])
                       : dv_binary((tc_binary_op)x->sub, x->dtype, val[a][src], s);
        break;
      }
      case DF_CAST: v[e] = dv_cast(A->dtype, x->dtype, val[a][src]); break;
      default: v[e] = val[a][src]; break;
    }
  }
  return v;
}

static void df_sentinel(tc_dtype t, void *p, int64_t n) {
  for (int64_t i = 0; i < n; i++) switch (t) {
      case TC_F32: ((uint32_t *)p)[i] = 0x7fa5a5a5u; break; /* NaN */
      case TC_F16: case TC_BF16: ((uint16_t *)p)[i] = 0x7fffu; break;
      case TC_I32: ((int32_t *)p)[i] = 0x5a5a5a5a; break; /* far outside every range */
      case TC_I8: ((int8_t *)p)[i] = 127; break;
    }
}

/* Coordinates of element e of x, as "[i, j, k]". */
static void df_coords(const df_tensor *x, int64_t e, char *buf, size_t cap) {
  int64_t co[3];
  for (int k = x->rank - 1; k >= 0; k--) co[k] = e % x->shape[k], e /= x->shape[k];
  int n = snprintf(buf, cap, "[");
  for (int k = 0; k < x->rank; k++) n += snprintf(buf + n, cap - (size_t)n, "%s%lld", k ? ", " : "", (long long)co[k]);
  snprintf(buf + n, cap - (size_t)n, "]");
}

/* Compares every output element of launch `run`; writes the outcome to
 * res (with nothing when ok and quiet_ok). */
static int df_compare(const df_case *c, const df_built *b, void **args, void **ref, FILE *res, int run, int quiet_ok) {
  dv *val[DF_MAX_T] = {0};
  for (int i = 0; i < c->nt; i++) {
    if (c->t[i].bypass || !b->h[i]) continue;
    const void *input = NULL;
    for (int j = 0; j < b->nin; j++)
      if (b->in[j] == i) input = args[j];
    val[i] = df_eval_tensor(c, val, i, input, run);
  }
  int nbad = 0, kernel_bad = 0, ref_bad = 0, apart = 0;
  char first[1024] = "";
  static char more[4096];
  size_t nmore = 0;
  more[0] = 0;
  for (int j = 0; j < b->nout; j++) {
    int o = b->out[j], p = b->nin + j;
    const df_tensor *x = &c->t[o];
    int64_t n = df_elems(x);
    for (int64_t e = 0; e < n; e++) {
      dv iv = val[o][e];
      double kd = dt_read(x->dtype, args[p], (size_t)e), rd = dt_read(x->dtype, ref[p], (size_t)e);
      int kok = dv_allows(iv, kd), rok = dv_allows(iv, rd);
      if (!dv_known(iv) && !dv_is_any(iv) && !dv_agree(x->dtype, kd, rd)) kok = rok = 0, apart++;
      if (kok && rok) continue;
      if (dv_known(iv)) kernel_bad += !kok, ref_bad += !rok;
      char co[64], line[512];
      df_coords(x, e, co, sizeof co);
      snprintf(line, sizeof line, "%s (output %d, %s) element %lld %s: kernel %.9g, reference %.9g, allowed %s[%.9g, %.9g]",
               tc_tensor_name(b->h[o]), j, tc_dtype_name(x->dtype), (long long)e, co, kd, rd,
               dv_known(iv) ? "" : "(unknown: they must agree) ", iv.lo, iv.hi);
      if (nbad == 0) snprintf(first, sizeof first, "%s", line);
      else if (nbad < 6 && nmore < sizeof more - 600) nmore += (size_t)snprintf(more + nmore, sizeof more - nmore, "%s\n", line);
      nbad++;
    }
  }
  for (int i = 0; i < c->nt; i++) free(val[i]);
  if (nbad == 0) {
    if (!quiet_ok) fprintf(res, "ok\n\n");
    return 1;
  }
  const char *when = run ? " (second launch, other scalar values)" : "";
  if (kernel_bad || ref_bad) {
    const char *who = kernel_bad && ref_bad ? "kernel and reference" : kernel_bad ? "kernel" : "reference";
    fprintf(res, "wrong\n%s outside the independent bounds in %d elements%s: %s\n%s", who,
            kernel_bad > ref_bad ? kernel_bad : ref_bad, when, first, more);
  } else {
    fprintf(res, "wrong\nkernel and reference apart where the independent evaluation has no bound (NaN, "
                 "infinity, overflow) in %d elements%s: %s\n%s", apart, when, first, more);
  }
  return 0;
}

/* Sets the values of the scalar inputs among the parameters for launch
 * `run`; returns whether there is one. */
static int df_set_scalars(const df_case *c, const df_built *b, void **args, void **ref, int run) {
  int any = 0;
  for (int j = 0; j < b->nin; j++) {
    const df_tensor *x = &c->t[b->in[j]];
    if (x->kind != DF_SCALAR) continue;
    any = 1;
    double v = df_scalar_run(x, run);
    if (dt_float(x->dtype)) *(float *)args[j] = *(float *)ref[j] = (float)v;
    else *(int32_t *)args[j] = *(int32_t *)ref[j] = (int32_t)v;
  }
  return any;
}

static void df_child(const df_case *c, const df_opts *o, FILE *res) {
  df_built b;
  df_build(c, &b);
  tc_status st;
  tc_compile_options opt = {TC_TARGET_OPENCL, NULL, NULL};
  tc_kernel *k = tc_compile(b.f, &opt, &st);
  if (!k) {
    fprintf(res, "refused\n%s: %s\n", tc_status_name(st), tc_fusion_error(b.f));
    return;
  }
  int np = b.nin + b.nout;
  void *args[DF_MAX_T + 3], *ref[DF_MAX_T + 3];
  for (int j = 0; j < np; j++) {
    const df_tensor *x = &c->t[j < b.nin ? b.in[j] : b.out[j - b.nin]];
    size_t bytes = (size_t)df_elems(x) * tc_dtype_size(x->dtype);
    int scalar_in = j < b.nin && x->kind == DF_SCALAR; /* set by df_set_scalars */
    if (scalar_in) bytes = 4;
    args[j] = malloc(bytes), ref[j] = malloc(bytes);
    if (scalar_in) {
    } else if (j < b.nin) {
      df_fill(c, b.in[j], args[j]);
      memcpy(ref[j], args[j], bytes);
    } else {
      df_sentinel(x->dtype, args[j], df_elems(x));
      df_sentinel(x->dtype, ref[j], df_elems(x));
    }
  }
  if (o->inject == 2) abort();
  if (o->inject == 3) for (;;) pause();
  int scalars = df_set_scalars(c, &b, args, ref, 0);
  st = tc_kernel_run(k, args, o->device, NULL);
  if (st == TC_ERR_COMPILE) {
    fprintf(res, "wrong\nthe device compiler rejected the generated source: %.300s\n", tc_kernel_error(k));
  } else if (st != TC_OK) {
    fprintf(res, "refused\n%s: %s\n", tc_status_name(st), tc_kernel_error(k));
  } else if ((st = tc_reference_run(b.f, ref)) != TC_OK) {
    fprintf(res, "wrong\ntc_reference_run failed: %s: %s\n", tc_status_name(st), tc_fusion_error(b.f));
  } else {
    if (o->inject == 1) { /* a wrong element: the comparison must see it */
      const df_tensor *x = &c->t[b.out[0]];
      double v = dt_read(x->dtype, args[b.nin], 0);
      double w = v + (dt_float(x->dtype) ? fmax(1.0, fabs(v)) : 1);
      switch (x->dtype) {
        case TC_F32: ((float *)args[b.nin])[0] = (float)w; break;
        case TC_F16: case TC_BF16: ((uint16_t *)args[b.nin])[0] = dt_bits16(dt_down(w, x->dtype), x->dtype); break;
        case TC_I32: ((int32_t *)args[b.nin])[0] = (int32_t)w; break;
        case TC_I8: ((int8_t *)args[b.nin])[0] = (int8_t)(v > 0 ? v - 1 : v + 1); break;
      }
    }
    /* with scalar inputs: a second launch of the same kernel with their
     * other values, on fresh outputs */
    if (df_compare(c, &b, args, ref, res, 0, scalars) && scalars) {
      df_set_scalars(c, &b, args, ref, 1);
      for (int j = b.nin; j < np; j++) {
        const df_tensor *x = &c->t[b.out[j - b.nin]];
        df_sentinel(x->dtype, args[j], df_elems(x)), df_sentinel(x->dtype, ref[j], df_elems(x));
      }
      if ((st = tc_kernel_run(k, args, o->device, NULL)) != TC_OK)
        fprintf(res, "wrong\nthe second launch failed: %s: %s\n", tc_status_name(st), tc_kernel_error(k));
      else if ((st = tc_reference_run(b.f, ref)) != TC_OK)
        fprintf(res, "wrong\ntc_reference_run failed: %s: %s\n", tc_status_name(st), tc_fusion_error(b.f));
      else
        df_compare(c, &b, args, ref, res, 1, 0);
    }
  }
  for (int j = 0; j < np; j++) free(args[j]), free(ref[j]);
  tc_kernel_free(k);
  tc_fusion_free(b.f);
}

/* ---- workers: child processes that run cases ----------------------------------
 *
 * A worker is a child process that runs cases one after the other: it
 * reads a request (a case) from a pipe and answers with the result
 * (df_child's text, with the CPU time it took).  It keeps one OpenCL
 * kernel open for its whole life: the device's context then stays alive
 * between cases, and PoCL keeps its built-in library loaded instead of
 * loading it again for each kernel (which costs about half a second).
 * A case that crashes takes its worker with it, a case that hangs is
 * killed with its worker (its whole process group); either way the next
 * case gets a new worker.  A worker is also replaced after DF_WORKER_CASES
 * cases, so that what one case leaves behind cannot pile up. */

#define DF_MAX_JOBS 16
#define DF_WORKER_CASES 100
#define DF_WARMUP_SECS 15 /* the first case of a new worker waits this much longer */

static double df_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Moves all n bytes through fd (writing when out), retrying short moves;
 * 0 when the other end is gone. */
static int df_move_full(int fd, void *p, size_t n, int out) {
  char *c = p;
  while (n > 0) {
    ssize_t k = out ? write(fd, c, n) : read(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return 0;
    c += k, n -= (size_t)k;
  }
  return 1;
}

typedef struct df_request {
  int inject;
  df_case c;
} df_request;

typedef struct df_answer {
  uint32_t len; /* bytes of text that follow */
  double cpu;
} df_answer;

/* The worker's loop; never returns. */
static void df_worker_main(int cmd, int res, const df_opts *o) {
  /* the kernel that keeps the device's context open */
  tc_fusion *f = tc_fusion_new();
  int64_t one = 1;
  tc_tensor *x = tc_input(f, TC_F32, 1, &one);
  tc_add_output(f, tc_set(f, x));
  tc_status st;
  tc_compile_options opt = {TC_TARGET_OPENCL, NULL, NULL};
  tc_kernel *keep = tc_compile(f, &opt, &st);
  float a = 1, b = 0;
  void *args[2] = {&a, &b};
  if (keep) tc_kernel_run(keep, args, o->device, NULL);
  df_request q;
  while (df_move_full(cmd, &q, sizeof q, 0)) {
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    df_opts oo = *o;
    oo.inject = q.inject;
    df_child(&q.c, &oo, m);
    fclose(m);
    if (len > 12000) len = 12000; /* what the parent reads in one answer */
    getrusage(RUSAGE_SELF, &r1);
    df_answer h = {(uint32_t)len,
                   (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) + (r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) * 1e-6 +
                       (double)(r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) + (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) * 1e-6};
    if (!df_move_full(res, &h, sizeof h, 1) || !df_move_full(res, text, len, 1)) _exit(0);
    free(text);
  }
  tc_kernel_free(keep);
  tc_fusion_free(f);
  _exit(0);
}

typedef struct df_worker {
  pid_t pid;            /* -1: none */
  int cmd, res, err;    /* the request pipe (to it), result and output pipes */
  int ncases;
  int busy;             /* a case is running */
  long index;
  df_case c;
  char out[16384], text[4096];
  size_t nout, ntext;   /* result bytes; output kept (its tail) */
  double t0, deadline;
} df_worker;

static df_worker df_workers[DF_MAX_JOBS];
static int df_workers_init;

/* Starts a worker; 0 (and a message in r) when it cannot. */
static int df_worker_spawn(df_worker *w, const df_opts *o, df_result *r) {
  int cp[2], rp[2], ep[2];
  if (pipe(cp) == 0) {
    if (pipe(rp) == 0) {
      if (pipe(ep) == 0) {
        fflush(stdout), fflush(stderr);
        pid_t pid = fork();
        if (pid == 0) {
          setpgid(0, 0); /* its own group: a hang is killed with all it started */
          close(cp[1]), close(rp[0]), close(ep[0]);
          for (int i = 0; i < DF_MAX_JOBS; i++) /* the other workers' pipes */
            if (df_workers[i].pid > 0)
              close(df_workers[i].cmd), close(df_workers[i].res), close(df_workers[i].err);
          dup2(ep[1], 1), dup2(ep[1], 2);
          df_worker_main(cp[0], rp[1], o);
        }
        close(cp[0]), close(rp[1]), close(ep[1]);
        if (pid > 0) {
          setpgid(pid, pid);
          w->pid = pid, w->cmd = cp[1], w->res = rp[0], w->err = ep[0], w->ncases = 0;
          return 1;
        }
        close(cp[1]), close(rp[0]), close(ep[0]);
      } else {
        close(rp[0]), close(rp[1]), close(cp[0]), close(cp[1]);
      }
    } else {
      close(cp[0]), close(cp[1]);
    }
  }
  memset(r, 0, sizeof *r);
  r->outcome = DF_CRASHED;
  snprintf(r->msg, sizeof r->msg, "cannot start a worker process: %s", strerror(errno));
  return 0;
}

/* Ends a worker (killing its process group when kill_it) and returns its
 * wait status. */
static int df_worker_end(df_worker *w, int kill_it) {
  if (w->pid < 0) return 0;
  if (kill_it) kill(-w->pid, SIGKILL), kill(w->pid, SIGKILL);
  close(w->cmd);
  if (w->res >= 0) close(w->res);
  if (w->err >= 0) close(w->err);
  int status = 0;
  while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {
  }
  w->pid = -1, w->busy = 0;
  return status;
}

static void df_workers_shutdown(void) {
  for (int i = 0; i < DF_MAX_JOBS; i++) df_worker_end(&df_workers[i], 0);
}

/* Sends a case to worker w (started first when needed); 0 (and the
 * outcome in r) when it could not be sent. */
static int df_worker_send(df_worker *w, const df_opts *o, long index, const df_case *c, df_result *r) {
  if (w->pid > 0 && w->ncases >= DF_WORKER_CASES) df_worker_end(w, 0);
  static df_request q;
  q.inject = o->inject, q.c = *c;
  for (int attempt = 0; attempt < 2; attempt++) {
    int fresh = w->pid < 0;
    if (fresh && !df_worker_spawn(w, o, r)) return 0;
    w->index = index, w->c = *c, w->nout = w->ntext = 0, w->ncases++;
    w->text[0] = 0;
    w->t0 = df_now();
    w->deadline = w->t0 + o->timeout_ms / 1000.0 + (fresh ? DF_WARMUP_SECS : 0);
    if (df_move_full(w->cmd, &q, sizeof q, 1)) {
      w->busy = 1;
      return 1;
    }
    df_worker_end(w, 1); /* it died between cases: start another */
  }
  memset(r, 0, sizeof *r);
  r->outcome = DF_CRASHED;
  snprintf(r->msg, sizeof r->msg, "no worker process would take the case");
  return 0;
}

/* Appends what fd has to read to buf (keeping the last half when full and
 * keep_tail); returns 0 at end of file. */
static int df_drain(int fd, char *buf, size_t cap, size_t *len, int keep_tail) {
  char tmp[4096];
  ssize_t n = read(fd, tmp, sizeof tmp);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return 0;
  for (ssize_t i = 0; i < n; i++) {
    if (*len + 1 >= cap) {
      if (!keep_tail) break;
      memmove(buf, buf + cap / 2, *len - cap / 2);
      *len -= cap / 2;
    }
    buf[(*len)++] = tmp[i];
  }
  buf[*len] = 0;
  return 1;
}

/* Parses df_child's text: outcome, first line, the rest. */
static void df_parse_answer(char *text, df_result *r) {
  char *nl = strchr(text, '\n');
  r->outcome = DF_CRASHED;
  if (!nl) {
    snprintf(r->msg, sizeof r->msg, "the worker answered nothing");
    return;
  }
  *nl = 0;
  for (int k = DF_OK; k <= DF_WRONG; k++)
    if (strcmp(text, df_outcome_name[k]) == 0) r->outcome = (df_outcome)k;
  char *rest = nl + 1, *nl2 = strchr(rest, '\n');
  if (nl2) *nl2 = 0;
  snprintf(r->msg, sizeof r->msg, "%s", rest);
  if (nl2) snprintf(r->detail, sizeof r->detail, "%s", nl2 + 1);
}

/* Reads what worker w has to say (after poll said so) and, when the case
 * is over (answered, died or past its deadline), fills r and returns 1. */
static int df_worker_poll(df_worker *w, short rev_res, short rev_err, const df_opts *o, df_result *r) {
  if (w->err >= 0 && (rev_err & (POLLIN | POLLHUP | POLLERR)) &&
      !df_drain(w->err, w->text, sizeof w->text, &w->ntext, 1))
    close(w->err), w->err = -1;
  int died = 0;
  if (rev_res & (POLLIN | POLLHUP | POLLERR)) {
    ssize_t n = read(w->res, w->out + w->nout, sizeof w->out - 1 - w->nout);
    if (n > 0) w->nout += (size_t)n;
    else if (n == 0 || (errno != EINTR && errno != EAGAIN)) died = 1;
  }
  memset(r, 0, sizeof *r);
  r->secs = df_now() - w->t0;
  df_answer h;
  if (w->nout >= sizeof h) {
    memcpy(&h, w->out, sizeof h);
    size_t want = sizeof h + (h.len < sizeof w->out - 1 - sizeof h ? h.len : sizeof w->out - 1 - sizeof h);
    if (w->nout >= want) {
      w->out[want] = 0;
      r->cpu = h.cpu;
      df_parse_answer(w->out + sizeof h, r);
      w->busy = 0;
      return 1;
    }
  }
  if (died) {
    /* its output up to the end, for the report */
    while (w->err >= 0 && df_drain(w->err, w->text, sizeof w->text, &w->ntext, 1)) {
    }
    int status = df_worker_end(w, 0);
    r->outcome = DF_CRASHED;
    if (WIFSIGNALED(status))
      snprintf(r->msg, sizeof r->msg, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
      snprintf(r->msg, sizeof r->msg, "exited with status %d without a result", WEXITSTATUS(status));
    snprintf(r->detail, sizeof r->detail, "%s", w->text);
    return 1;
  }
  if (df_now() >= w->deadline) {
    df_worker_end(w, 1);
    r->outcome = DF_HUNG;
    snprintf(r->msg, sizeof r->msg, "no result after %d ms; the process was killed", o->timeout_ms);
    snprintf(r->detail, sizeof r->detail, "%s", w->text);
    return 1;
  }
  return 0;
}

/* Runs the cases the next() callback hands out (it returns 0 when there
 * are no more), up to o->jobs at a time; done() gets each result. */
typedef int (*df_next_fn)(void *ctx, long *index, df_case *c);
typedef void (*df_done_fn)(void *ctx, long index, df_case *c, const df_result *r);

static void df_run_pool(const df_opts *o, df_next_fn next, df_done_fn done, void *ctx) {
  if (!df_workers_init) {
    for (int i = 0; i < DF_MAX_JOBS; i++) df_workers[i].pid = -1;
    df_workers_init = 1;
  }
  int nj = o->jobs < 1 ? 1 : o->jobs > DF_MAX_JOBS ? DF_MAX_JOBS : o->jobs, busy = 0, more = 1;
  static df_case c;
  df_result r;
  while (more || busy) {
    for (int i = 0; i < nj && more; i++) {
      df_worker *w = &df_workers[i];
      if (w->busy) continue;
      long index;
      if (!(more = next(ctx, &index, &c))) break;
      if (df_worker_send(w, o, index, &c, &r)) busy++;
      else done(ctx, index, &c, &r);
    }
    if (!busy) continue;
    struct pollfd pf[2 * DF_MAX_JOBS];
    double now = df_now(), first = now + 3600;
    for (int i = 0; i < nj; i++) {
      df_worker *w = &df_workers[i];
      pf[2 * i] = (struct pollfd){w->busy ? w->res : -1, POLLIN, 0};
      pf[2 * i + 1] = (struct pollfd){w->pid > 0 ? w->err : -1, POLLIN, 0};
      if (w->busy && w->deadline < first) first = w->deadline;
    }
    int wait_ms = first > now ? (int)((first - now) * 1000) + 1 : 0;
    if (poll(pf, (nfds_t)(2 * nj), wait_ms) < 0 && errno != EINTR) {
      perror("poll");
      exit(2);
    }
    for (int i = 0; i < nj; i++) {
      df_worker *w = &df_workers[i];
      if (!w->busy) {
        /* output between cases (an idle worker's): keep reading it */
        if (w->pid > 0 && w->err >= 0 && (pf[2 * i + 1].revents & (POLLIN | POLLHUP | POLLERR)) &&
            !df_drain(w->err, w->text, sizeof w->text, &w->ntext, 1))
          close(w->err), w->err = -1;
        continue;
      }
      if (!df_worker_poll(w, pf[2 * i].revents, pf[2 * i + 1].revents, o, &r)) continue;
      busy--;
      done(ctx, w->index, &w->c, &r);
    }
  }
}

/* One case, run to its end. */
typedef struct df_single {
  const df_case *c;
  df_result *r;
  int given;
} df_single;

static int df_single_next(void *ctx, long *index, df_case *c) {
  df_single *s = ctx;
  if (s->given++) return 0;
  *index = 0, *c = *s->c;
  return 1;
}

static void df_single_done(void *ctx, long index, df_case *c, const df_result *r) { *((df_single *)ctx)->r = *r; }

static void df_run_case(const df_case *c, const df_opts *o, df_result *r) {
  df_opts one = *o;
  one.jobs = 1;
  df_single s = {c, r, 0};
  df_run_pool(&one, df_single_next, df_single_done, &s);
}

/* The class of a refusal: the message with tensor names, numbers and
 * loop-domain descriptions taken out, up to its first ';' (the hint). */
static void df_refusal_class(const char *msg, char *out, size_t cap) {
  size_t n = 0;
  int paren = 0;
  for (const char *p = msg; *p && n + 1 < cap && n < 110; p++) {
    if (*p == ';' && !paren) break;
    if (*p == '(' && (strchr(p, '[') || strchr(p, '{'))) {
      const char *close = strchr(p, ')');
      const char *br = strpbrk(p, "[{");
      if (close && br && br < close) { /* a domain description */
        paren = 1;
        continue;
      }
    }
    if (paren) { /* inside a domain description, which may hold "(CA)" */
      paren += *p == '(' ? 1 : *p == ')' ? -1 : 0;
      continue;
    }
    if ((*p >= '0' && *p <= '9')) {
      if (n == 0 || out[n - 1] != '#') out[n++] = '#';
      continue;
    }
    if (*p == ' ' && n > 0 && out[n - 1] == ' ') continue;
    out[n++] = *p;
  }
  while (n > 0 && out[n - 1] == ' ') n--;
  out[n] = 0;
}

/* Whether a shrunk case still fails the same way. */
static int df_same_failure(const df_result *a, const df_result *b) {
  if (a->outcome != b->outcome) return 0;
  char ca[256], cb[256];
  switch (a->outcome) {
    case DF_REFUSED:
      df_refusal_class(a->msg, ca, sizeof ca), df_refusal_class(b->msg, cb, sizeof cb);
      return strcmp(ca, cb) == 0;
    case DF_WRONG: { /* the same side wrong: the words before " in N elements" */
      const char *ea = strstr(a->msg, " in "), *eb = strstr(b->msg, " in ");
      size_t na = ea ? (size_t)(ea - a->msg) : strlen(a->msg), nb = eb ? (size_t)(eb - b->msg) : strlen(b->msg);
      return na == nb && strncmp(a->msg, b->msg, na) == 0;
    }
    case DF_CRASHED: return strcmp(a->msg, b->msg) == 0;
    default: return 1;
  }
}

/* Drops scheduling calls, outputs and ops while the case fails as it did;
 * returns how many runs that took. */
static int df_shrink(df_case *c, const df_result *orig, const df_opts *o) {
  int runs = 0, changed = 1;
  df_result r;
  while (changed && runs < 400) {
    changed = 0;
    for (int i = c->nsteps - 1; i >= 0; i--) {
      if (c->s[i].dropped) continue;
      c->s[i].dropped = 1;
      df_run_case(c, o, &r), runs++;
      if (df_same_failure(orig, &r)) changed = 1;
      else c->s[i].dropped = 0;
    }
    for (int j = c->nout - 1; j >= 0 && c->nout > 1; j--) {
      df_case keep = *c;
      memmove(&c->out[j], &c->out[j + 1], sizeof(int) * (size_t)(c->nout - j - 1));
      c->nout--;
      df_run_case(c, o, &r), runs++;
      if (df_same_failure(orig, &r)) changed = 1;
      else *c = keep;
    }
    for (int i = c->nt - 1; i >= 0; i--) {
      df_tensor *x = &c->t[i];
      /* (a bypassed reduction changes its consumers' shapes, and its
       * dtype for 16-bit and i8 inputs: df_ranges_ok checks they fit) */
      if (x->bypass || x->kind == DF_INPUT || x->kind == DF_CAST || x->kind == DF_PERMUTE || x->kind == DF_WELFORD ||
          x->kind == DF_WPART)
        continue;
      for (int side = 0; side < (x->kind == DF_BINARY ? 2 : 1) && !x->bypass; side++) {
        df_case keep = *c;
        if (side) { /* bypass to the second operand */
          int t = x->a;
          x->a = x->b, x->b = t;
        }
        x->bypass = 1;
        int ok = df_ranges_ok(c);
        if (ok) df_run_case(c, o, &r), runs++;
        if (ok && df_same_failure(orig, &r)) changed = 1;
        else *c = keep;
      }
    }
  }
  df_ranges_ok(c);
  return runs;
}

/* ---- campaigns -------------------------------------------------------------------- */

typedef struct df_class {
  char name[256];
  int count, alike; /* refusals; of those, of schedules made alike */
  long example, example_alike;
} df_class;

typedef struct df_tally {
  long n[5];
  long red[5], block[5]; /* of those, cases with a reduction, with a block reduction */
  long welford[5], scalar[5]; /* with a live Welford state, with a scalar input */
  df_class classes[64];
  int nclasses;
  long failed[64]; /* the first failing cases */
  df_outcome failed_outcome[64];
  int nfailed;
} df_tally;

static void df_count_refusal(df_tally *t, const char *msg, long index, int alike) {
  char cls[256];
  df_refusal_class(msg, cls, sizeof cls);
  df_class *k = NULL;
  for (int i = 0; i < t->nclasses && !k; i++)
    if (strcmp(t->classes[i].name, cls) == 0) k = &t->classes[i];
  if (!k) {
    if (t->nclasses == 64) return;
    k = &t->classes[t->nclasses++];
    snprintf(k->name, sizeof k->name, "%s", cls);
    k->example = k->example_alike = -1;
  }
  k->count++, k->alike += alike;
  if (k->example < 0 || index < k->example) k->example = index;
  if (alike && (k->example_alike < 0 || index < k->example_alike)) k->example_alike = index;
}

static void df_print_summary(const df_tally *t, const df_opts *o) {
  long run = 0;
  for (int k = 0; k < 5; k++) run += t->n[k];
  printf("diff: seed %llu, %ld cases run: %ld ok, %ld refused, %ld wrong, %ld crashed, %ld hung\n",
         (unsigned long long)o->seed, run, t->n[DF_OK], t->n[DF_REFUSED], t->n[DF_WRONG], t->n[DF_CRASHED],
         t->n[DF_HUNG]);
  long red = 0, block = 0;
  for (int k = 0; k < 5; k++) red += t->red[k], block += t->block[k];
  printf("with a reduction: %ld cases (%ld ok, %ld refused); with a block reduction: %ld (%ld ok, %ld refused)\n",
         red, t->red[DF_OK], t->red[DF_REFUSED], block, t->block[DF_OK], t->block[DF_REFUSED]);
  long wf = 0, sc = 0;
  for (int k = 0; k < 5; k++) wf += t->welford[k], sc += t->scalar[k];
  printf("with a Welford state: %ld cases (%ld ok, %ld refused); with a scalar input (two launches): %ld (%ld ok, "
         "%ld refused)\n", wf, t->welford[DF_OK], t->welford[DF_REFUSED], sc, t->scalar[DF_OK], t->scalar[DF_REFUSED]);
  if (t->nclasses)
    printf("refused, by class (count, first case; of those, schedules made alike, legal by construction, "
           "and the first):\n");
  int order[64];
  for (int i = 0; i < t->nclasses; i++) order[i] = i;
  for (int i = 1; i < t->nclasses; i++) /* most frequent first */
    for (int j = i; j > 0 && t->classes[order[j]].count > t->classes[order[j - 1]].count; j--) {
      int x = order[j];
      order[j] = order[j - 1], order[j - 1] = x;
    }
  for (int i = 0; i < t->nclasses; i++) {
    const df_class *k = &t->classes[order[i]];
    char ex[32] = "";
    if (k->alike) snprintf(ex, sizeof ex, "case %ld", k->example_alike);
    printf("  %5d case %-6ld %5d %-11s %s\n", k->count, k->example, k->alike, ex, k->name);
  }
}

/* A campaign: cases first .. first + cases - 1 of a seed. */
typedef struct df_campaign_state {
  const df_opts *o;
  long next;
  df_tally t;
  int (*on_fail)(long index, const df_result *r); /* the suite's check */
} df_campaign_state;

static int df_campaign_next(void *ctx, long *index, df_case *c) {
  df_campaign_state *s = ctx;
  if (s->next >= s->o->first + s->o->cases) return 0;
  *index = s->next++;
  df_generate(c, s->o->seed, (uint64_t)*index, s->o->edge);
  return 1;
}

static void df_report(const df_opts *o, long index, const df_result *r) {
  printf("case %ld: %s: %s\n", index, df_outcome_name[r->outcome], r->msg);
  if (r->detail[0]) printf("%s%s", r->detail, r->detail[strlen(r->detail) - 1] == '\n' ? "" : "\n");
  printf("  reproduce: test_diff --seed %llu%s --print-case %ld [--shrink]\n", (unsigned long long)o->seed,
         o->edge ? " --edge" : "", index);
}

static void df_campaign_done(void *ctx, long index, df_case *c, const df_result *r) {
  df_campaign_state *s = ctx;
  df_tally *t = &s->t;
  t->n[r->outcome]++;
  t->red[r->outcome] += c->nred > 0, t->block[r->outcome] += c->nblock > 0;
  int live[DF_MAX_T], wf = 0, sc = 0;
  df_live(c, live);
  for (int i = 0; i < c->nt; i++)
    if (live[i] && !c->t[i].bypass) wf |= c->t[i].kind == DF_WELFORD, sc |= c->t[i].kind == DF_SCALAR && c->t[i].launch;
  t->welford[r->outcome] += wf, t->scalar[r->outcome] += sc;
  if (r->outcome == DF_REFUSED) df_count_refusal(t, r->msg, index, c->alike);
  if (s->o->verbose)
    printf("case %ld: %s (%.2f s, %.2f s CPU)%s%s\n", index, df_outcome_name[r->outcome], r->secs, r->cpu,
           r->msg[0] ? ": " : "", r->msg);
  if (r->outcome >= DF_WRONG) {
    if (t->nfailed < 64) t->failed_outcome[t->nfailed] = r->outcome, t->failed[t->nfailed++] = index;
    df_report(s->o, index, r);
    if (s->on_fail) s->on_fail(index, r);
  }
  fflush(stdout);
}

/* Shrinks a failing case and prints it as C. */
static void df_shrink_and_print(const df_opts *o, long index) {
  df_case c;
  df_result r;
  df_generate(&c, o->seed, (uint64_t)index, o->edge);
  df_run_case(&c, o, &r);
  int runs = r.outcome >= DF_WRONG ? df_shrink(&c, &r, o) : 0;
  char what[1536];
  snprintf(what, sizeof what, "case %ld of seed %llu%s%s: %s%s%.900s", index, (unsigned long long)o->seed,
           o->edge ? " with edge values" : "", runs ? " (shrunk)" : "", df_outcome_name[r.outcome],
           r.msg[0] ? ": " : "", r.msg);
  for (char *p = what; (p = strstr(p, "*/")) != NULL;) p[0] = '+'; /* keep the comment closed */
  df_print_case(stdout, &c, what);
}

static int df_campaign(const df_opts *o) {
  df_campaign_state s;
  memset(&s, 0, sizeof s);
  s.o = o, s.next = o->first;
  df_run_pool(o, df_campaign_next, df_campaign_done, &s);
  df_print_summary(&s.t, o);
  /* hung cases are not shrunk here: each try would wait out the timeout
   * (--print-case K --shrink does it for one) */
  if (o->shrink)
    for (int i = 0, n = 0; i < s.t.nfailed && n < 10; i++)
      if (s.t.failed_outcome[i] != DF_HUNG) df_shrink_and_print(o, s.t.failed[i]), n++;
  return s.t.n[DF_WRONG] + s.t.n[DF_CRASHED] + s.t.n[DF_HUNG] ? 1 : 0;
}

/* --print-case: the case as a C program (with --shrink: run, and shrunk
 * first when it fails). */
static int df_print_one(const df_opts *o, long index) {
  if (o->shrink) {
    df_shrink_and_print(o, index);
    return 0;
  }
  df_case c;
  df_generate(&c, o->seed, (uint64_t)index, o->edge);
  char what[512];
  snprintf(what, sizeof what, "case %ld of seed %llu (test_diff --seed %llu%s --print-case %ld)", index,
           (unsigned long long)o->seed, (unsigned long long)o->seed, o->edge ? " --edge" : "", index);
  df_print_case(stdout, &c, what);
  return 0;
}

/* ---- the suite ------------------------------------------------------------------- */

static const df_opts df_suite_opts = {DF_SUITE_SEED, DF_SUITE_CASES, 0, 20000, 0, 0, 0, 2, NULL, 0};

/* Set when the suite finds no OpenCL device (every case is then skipped). */
static int df_no_device;

/* The rounding of diff_values.h, against values worked out by hand. */
static void test_value_model(void) {
  /* 1/3 lies between f16 values 0x3555 = 1365/4096 and 0x3556 = 1366/4096
   * (exponent -2: spacing 2^-2 * 2^-10) */
  TC_CHECK(dt_down(1.0 / 3, TC_F16) == 1365.0 / 4096 && dt_up(1.0 / 3, TC_F16) == 1366.0 / 4096,
           "f16 around 1/3: %.9g %.9g", dt_down(1.0 / 3, TC_F16), dt_up(1.0 / 3, TC_F16));
  TC_CHECK(dt_down(-1.0 / 3, TC_F16) == -1366.0 / 4096, "down(-1/3) = %.9g", dt_down(-1.0 / 3, TC_F16));
  /* bf16 keeps 8 bits: in [1, 2) the spacing is 2^-7, so 1.005 lies
   * between 1 and 1.0078125 */
  TC_CHECK(dt_down(1.005, TC_BF16) == 1.0 && dt_up(1.005, TC_BF16) == 1.0078125, "bf16 around 1.005");
  TC_CHECK(dt_down(1.5, TC_F32) == 1.5 && dt_up(1.5, TC_F32) == 1.5, "a value on the grid stays");
  /* the smallest f16 subnormal, 2^-24, and the spacing below 2^-14 */
  TC_CHECK(dt_up(1e-8, TC_F16) == ldexp(1, -24) && dt_down(1e-8, TC_F16) == 0, "f16 subnormals");
  /* encodings: 1.5 = 0x3e00 (f16), 0x3fc0 (bf16); -2^-24 = 0x8001 (f16) */
  TC_CHECK_EQ_INT(dt_bits16(1.5, TC_F16), 0x3e00);
  TC_CHECK_EQ_INT(dt_bits16(1.5, TC_BF16), 0x3fc0);
  TC_CHECK_EQ_INT(dt_bits16(-ldexp(1, -24), TC_F16), 0x8001);
  TC_CHECK(dt_from_bits16(0x7bff, TC_F16) == 65504 && dt_from_bits16(0xc000, TC_BF16) == -2, "decoding");
  /* exact ops: 0.1f + 0.2f rounds to 0.3000000119 (the f32 nearest to
   * 0.30000000447034836 = their exact sum) */
  dv s = dv_binary(TC_ADD, TC_F32, dv_point((float)0.1), dv_point((float)0.2));
  TC_CHECK(s.lo <= (float)((float)0.1 + (float)0.2) && s.hi >= (float)((float)0.1 + (float)0.2) &&
               s.hi - s.lo <= 2 * ldexp(1, -25),
           "0.1 + 0.2 in [%.10g, %.10g]", s.lo, s.hi);
  /* integer division truncates: -7 / 2 = -3 */
  dv q = dv_binary(TC_DIV, TC_I32, dv_point(-7), dv_point(2));
  TC_CHECK(q.lo == -3 && q.hi == -3, "-7 / 2 = [%g, %g]", q.lo, q.hi);
  /* exp(1) = 2.718281828...: within 4 f32 ulps (2^-22 each at e) */
  dv e = dv_unary(TC_EXP, TC_F32, dv_point(1));
  TC_CHECK(e.lo < 2.718281828 && e.hi > 2.718281829 && e.hi - e.lo < 10 * ldexp(1, -22), "exp(1)");
  TC_CHECK(!dv_known(dv_unary(TC_LOG, TC_F32, dv_point(-1))) && !dv_is_any(dv_unary(TC_LOG, TC_F32, dv_point(-1))),
           "log(-1) is unknown");
  /* f32 -> i8 cast of [-3.7, 2.2] truncates to [-3, 2] */
  dv ct = dv_cast(TC_F32, TC_I8, (dv){-3.7, 2.2});
  TC_CHECK(ct.lo == -3 && ct.hi == 2, "cast [%g, %g]", ct.lo, ct.hi);
}

/* The bounds of reductions (diff_values.h), against sums worked out by
 * hand and computed in f32 in two orders. */
static void test_value_model_reductions(void) {
  /* 1 + 2^-24 + 2^-24: added left to right in f32 each addition is a tie
   * that rounds to even, giving 1; the two small terms first give 1 +
   * 2^-23 exactly.  Both lie within g(2) (1 + 2^-23) ~ 2^-23 of the exact
   * sum 1 + 2^-23, and the interval is that wide, rounded out to f32. */
  volatile float one = 1, tiny = 0x1p-24f;
  float serial = (one + tiny) + tiny, pairwise = one + (tiny + tiny);
  TC_CHECK(serial == 1 && pairwise == 1 + 0x1p-23f, "the two orders: %.9g %.9g", serial, pairwise);
  dv_red r = dv_red_start(TC_REDUCE_SUM);
  dv_red_add(&r, dv_point(1)), dv_red_add(&r, dv_point(0x1p-24)), dv_red_add(&r, dv_point(0x1p-24));
  dv s = dv_red_end(&r, TC_F32);
  TC_CHECK(s.lo <= serial && s.hi >= pairwise && s.hi - s.lo <= 4 * 0x1p-23, "1 + 2^-24 + 2^-24 in [%.10g, %.10g]",
           s.lo, s.hi);
  /* 1000 terms of 0.1f: A = 1000 * 0.1f, and the bound 999 * 2^-24 * A
   * (5.95e-3) on each side; the serial f32 sum is 99.99905, inside */
  r = dv_red_start(TC_REDUCE_SUM);
  float acc = 0;
  for (int i = 0; i < 1000; i++) dv_red_add(&r, dv_point((float)0.1)), acc += (float)0.1;
  s = dv_red_end(&r, TC_F32);
  double half = (s.hi - s.lo) / 2, want = 999 * 0x1p-24 * 1000 * (double)(float)0.1;
  TC_CHECK(half >= want && half <= want * 1.001, "half width %.6g, want %.6g", half, want);
  TC_CHECK(acc >= s.lo && acc <= s.hi && fabs(acc - 100) > 1e-4, "serial sum %.9g in [%.9g, %.9g]", acc, s.lo, s.hi);
  /* max and min of intervals are exact: [-3, 1] and [0.5, 2] */
  for (int op = TC_REDUCE_MAX; op <= TC_REDUCE_MIN; op++) {
    r = dv_red_start((tc_reduce_op)op);
    dv_red_add(&r, (dv){-3, 1}), dv_red_add(&r, (dv){0.5, 2});
    s = dv_red_end(&r, TC_F32);
    TC_CHECK(op == TC_REDUCE_MAX ? s.lo == 0.5 && s.hi == 2 : s.lo == -3 && s.hi == 1, "%s: [%g, %g]",
             op == TC_REDUCE_MAX ? "max" : "min", s.lo, s.hi);
  }
  /* integer sums are exact */
  r = dv_red_start(TC_REDUCE_SUM);
  dv_red_add(&r, dv_point(5)), dv_red_add(&r, dv_point(-7)), dv_red_add(&r, dv_point(3));
  s = dv_red_end(&r, TC_I32);
  TC_CHECK(s.lo == 1 && s.hi == 1, "5 - 7 + 3 = [%g, %g]", s.lo, s.hi);
  /* a non-finite term: a sum depends on the order (any), a maximum is
   * unknown (kernel and reference must agree), and any stays any */
  r = dv_red_start(TC_REDUCE_SUM);
  dv_red_add(&r, dv_point(1)), dv_red_add(&r, dv_unknown);
  TC_CHECK(dv_is_any(dv_red_end(&r, TC_F32)), "sum with an unknown term");
  r = dv_red_start(TC_REDUCE_MAX);
  dv_red_add(&r, dv_point(1)), dv_red_add(&r, dv_unknown);
  s = dv_red_end(&r, TC_F32);
  TC_CHECK(!dv_known(s) && !dv_is_any(s), "max with an unknown term");
  TC_CHECK(dv_is_any(dv_unary(TC_EXP, TC_F32, dv_any)) && dv_is_any(dv_binary(TC_ADD, TC_F32, dv_any, dv_point(1))) &&
               dv_is_any(dv_cast(TC_F32, TC_F16, dv_any)),
           "any propagates");
  /* 1 / min(-0, +0): the zero's sign is unspecified, so +inf and -inf
   * are both right (any); so is a sum around 0 under log, which may be
   * -1e-30 in one order and 1e-30 in another; an integer division by 0
   * is 0, to agree on */
  dv z = dv_binary(TC_MIN, TC_F32, dv_point(-0.0), dv_point(0.0));
  TC_CHECK(z.lo <= 0 && z.hi >= 0 && dv_is_any(dv_unary(TC_RECIPROCAL, TC_F32, z)) &&
               dv_is_any(dv_binary(TC_DIV, TC_F32, dv_point(1), z)) && dv_is_any(dv_unary(TC_LOG, TC_F32, z)),
           "division by a zero of either sign");
  dv iz = dv_binary(TC_DIV, TC_I32, dv_point(5), dv_point(0));
  TC_CHECK(!dv_known(iz) && !dv_is_any(iz), "integer division by 0");
}

/* Welford's bounds (diff_values.h): a small row worked out by hand, and
 * a row with a large mean where f32 Welford (serial and pairwise) lies
 * inside the bounds and f32 E[x^2] - E[x]^2 does not. */
static float df_naive_var(const float *x, int n) {
  float s = 0, q = 0;
  for (int i = 0; i < n; i++) s += x[i], q += x[i] * x[i];
  float m = s / (float)n;
  return q / (float)n - m * m;
}

/* Chan's merge of [lo, hi) in halves, as a block tree does; *m, *q, *c. */
static void df_chan(const float *x, int lo, int hi, float *m, float *q, float *c) {
  if (hi - lo == 1) {
    *m = x[lo], *q = 0, *c = 1;
    return;
  }
  float am, aq, ac, zm, zq, zc;
  df_chan(x, lo, (lo + hi) / 2, &am, &aq, &ac), df_chan(x, (lo + hi) / 2, hi, &zm, &zq, &zc);
  float t = ac + zc, w = zc / t, d = zm - am;
  *m = am + d * w, *q = aq + zq + d * d * ac * w, *c = t;
}

static void test_value_model_welford(void) {
  /* 1, 2, 3, 4: mean 2.5, variance 1.25.  n = 4, M = 4, D = 3: E_m = 4 u
   * 13 / (1 - 24 u) ~ 52 u and E_2 ~ 4 u (3 * 13 * 16 + 9 * 20) = 3216 u
   * (the n^3 term is negligible), so the variance within 804 u ~ 4.8e-5 */
  dv row[4] = {dv_point(1), dv_point(2), dv_point(3), dv_point(4)}, m, v;
  dv_welford(row, 4, &m, &v);
  double u = 0x1p-24;
  TC_CHECK(m.lo < 2.5 && m.hi > 2.5 && m.hi - 2.5 <= 60 * u, "mean [%.9g, %.9g]", m.lo, m.hi);
  TC_CHECK(v.lo < 1.25 && v.hi > 1.25 && v.hi - 1.25 >= 800 * u && v.hi - 1.25 <= 820 * u, "var [%.9g, %.9g]",
           v.lo, v.hi);
  /* intervals: [0, 2] and [2, 2]: the mean in [1, 2]; the variance is
   * (x - 2)^2 / 4, in [0, 1].  The bound goes through the midpoints (1,
   * 2): sqrt(M2) = sqrt(1/2), moved by R = 1, so var <= (sqrt(1/2) +
   * 1)^2 / 2 = 1.457, and >= 0; both widened by the rounding */
  dv iv[2] = {{0, 2}, dv_point(2)};
  dv_welford(iv, 2, &m, &v);
  double top = (sqrt(0.5) + 1) * (sqrt(0.5) + 1) / 2;
  TC_CHECK(m.lo <= 1 && m.lo > 0.999 && m.hi >= 2 && m.hi < 2.001, "interval mean [%.9g, %.9g]", m.lo, m.hi);
  TC_CHECK(v.lo <= 0 && v.lo > -0.001 && v.hi >= top && v.hi < top + 0.001, "interval var [%.9g, %.9g]", v.lo,
           v.hi);
  /* 256 values 2^14 + k / 16: mean 2^14 + 255 / 32, variance (256^2 - 1)
   * / 12 / 256 = 21.33 (exact in double); its square sum is near 7e10,
   * where an f32 step is 8192 */
  float x[256];
  dv xr[256];
  for (int k = 0; k < 256; k++) x[k] = 16384.0f + (float)k / 16, xr[k] = dv_point(x[k]);
  dv_welford(xr, 256, &m, &v);
  double exact = (256.0 * 256 - 1) / 12 / 256;
  TC_CHECK(v.lo <= exact && v.hi >= exact, "var [%.9g, %.9g] holds %.9g", v.lo, v.hi, exact);
  float wm = 0, wq = 0, wc = 0;
  for (int k = 0; k < 256; k++) { /* the kernel's serial update */
    float c = wc + 1, d = x[k] - wm, n = wm + d / c;
    wq = wq + d * (x[k] - n), wm = n, wc = c;
  }
  float cm, cq, cc;
  df_chan(x, 0, 256, &cm, &cq, &cc);
  float naive = df_naive_var(x, 256);
  TC_CHECK(dv_allows(v, wq / wc) && dv_allows(m, wm), "serial Welford %.9g (mean %.9g) in [%.9g, %.9g]", wq / wc, wm,
           v.lo, v.hi);
  TC_CHECK(dv_allows(v, cq / cc) && dv_allows(m, cm), "pairwise Welford %.9g in [%.9g, %.9g]", cq / cc, v.lo, v.hi);
  TC_CHECK(!dv_allows(v, naive), "the sum of squares %.9g is outside [%.9g, %.9g]", naive, v.lo, v.hi);
}

/* The classification itself: an element made wrong on purpose, an abort
 * and a hang are each reported as what they are. */
static void test_outcomes_classified(void) {
  df_case c;
  df_result r;
  df_opts o = df_suite_opts;
  /* the first case of the suite seed that runs, so that it has outputs */
  long i = 0;
  for (;; i++) {
    df_generate(&c, o.seed, (uint64_t)i, 0);
    df_run_case(&c, &o, &r);
    if (r.outcome == DF_OK || i == 50) break;
  }
  if (r.outcome == DF_REFUSED && strncmp(r.msg, "no device", 9) == 0) {
    df_no_device = 1;
    TC_SKIP("%s", r.msg);
  }
  TC_REQUIRE(r.outcome == DF_OK, "no case of the first 51 ran: %s", r.msg);
  o.inject = 1;
  df_run_case(&c, &o, &r);
  TC_CHECK(r.outcome == DF_WRONG && strstr(r.msg, "kernel outside"), "corrupted output: %s: %s",
           df_outcome_name[r.outcome], r.msg);
  /* the worker is warm now: the hang is timed from the request */
  o.inject = 3, o.timeout_ms = 1500;
  df_run_case(&c, &o, &r);
  TC_CHECK(r.outcome == DF_HUNG && r.secs < 10, "hang: %s after %.1f s: %s", df_outcome_name[r.outcome], r.secs,
           r.msg);
  o.inject = 2, o.timeout_ms = df_suite_opts.timeout_ms;
  df_run_case(&c, &o, &r);
  TC_CHECK(r.outcome == DF_CRASHED && strstr(r.msg, "signal"), "abort: %s: %s", df_outcome_name[r.outcome], r.msg);
  /* and the next case gets a new worker */
  o.inject = 0;
  df_run_case(&c, &o, &r);
  TC_CHECK(r.outcome == DF_OK, "after the abort: %s: %s", df_outcome_name[r.outcome], r.msg);
}

static int df_suite_fail(long index, const df_result *r) {
  TC_CHECK(0, "case %ld of seed %d: %s: %s", index, DF_SUITE_SEED, df_outcome_name[r->outcome], r->msg);
  return 0;
}

static void test_fixed_seed_cases(void) {
  if (df_no_device) TC_SKIP("no OpenCL device");
  df_opts o = df_suite_opts;
  df_campaign_state s;
  memset(&s, 0, sizeof s);
  s.o = &o, s.next = o.first, s.on_fail = df_suite_fail;
  df_run_pool(&o, df_campaign_next, df_campaign_done, &s);
  df_print_summary(&s.t, &o);
  /* a harness that refuses everything checks nothing */
  TC_CHECK(s.t.n[DF_OK] >= o.cases / 2, "only %ld of %ld cases ran", s.t.n[DF_OK], o.cases);
}

/* The usage, on stderr after a bad argument (exit status 2), else on
 * stdout. */
static int df_usage(const char *bad, const char *value) {
  FILE *o = bad ? stderr : stdout;
  if (bad) fprintf(o, "test_diff: %s%s%s\n", value ? "bad value for " : "unknown argument ", bad,
                   value ? (*value ? "" : " (missing)") : "");
  fprintf(o,
          "usage: test_diff [--seed S] [--cases N] [--first K] [--timeout-ms T] [--edge]\n"
          "                 [--shrink] [--verbose] [--jobs J] [--device D]\n"
          "       test_diff [--seed S] [--edge] [--shrink] --print-case K\n"
          "Without arguments: the suite (%d cases of seed %d).\n",
          DF_SUITE_CASES, DF_SUITE_SEED);
  return bad ? 2 : 0;
}

static int df_takes_value(const char *a) {
  static const char *opts[] = {"--device", "--seed", "--cases", "--jobs", "--first", "--timeout-ms", "--print-case"};
  for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
    if (!strcmp(a, opts[i])) return 1;
  return 0;
}

static int df_parse_num(const char *s, long long *v) {
  char *end;
  errno = 0;
  *v = strtoll(s, &end, 0);
  return errno == 0 && end != s && *end == 0 && *v >= 0;
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  char cache_dir[] = "/tmp/tilec-diff-cache.XXXXXX";
  int own_cache = !getenv("TILEC_CACHE_DIR") && mkdtemp(cache_dir);
  if (own_cache) setenv("TILEC_CACHE_DIR", cache_dir, 1);
  int rc;
  if (argc == 1) {
    TC_RUN(test_value_model);
    TC_RUN(test_value_model_reductions);
    TC_RUN(test_value_model_welford);
    TC_RUN(test_outcomes_classified);
    TC_RUN(test_fixed_seed_cases);
    rc = tc_tests_failed ? 1 : 0;
    printf("%d passed, %d failed, %d skipped\n", tc_tests_passed, tc_tests_failed, tc_tests_skipped);
  } else {
    df_opts o = {1, 1000, 0, 20000, 0, 0, 0, 2, NULL, 0};
    long long print = -1, v;
    rc = -1;
    for (int i = 1; i < argc && rc < 0; i++) {
      const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : "";
      int num = df_parse_num(val, &v);
      if (!strcmp(a, "--help")) rc = df_usage(NULL, NULL);
      else if (!strcmp(a, "--edge")) o.edge = 1;
      else if (!strcmp(a, "--shrink")) o.shrink = 1;
      else if (!strcmp(a, "--verbose")) o.verbose = 1;
      else if (!strcmp(a, "--device") && *val) o.device = val, i++;
      else if (!strcmp(a, "--seed") && num) o.seed = (uint64_t)v, i++;
      else if (!strcmp(a, "--cases") && num) o.cases = (long)v, i++;
      else if (!strcmp(a, "--jobs") && num && v >= 1) o.jobs = (int)v, i++;
      else if (!strcmp(a, "--first") && num) o.first = (long)v, i++;
      else if (!strcmp(a, "--timeout-ms") && num && v > 0) o.timeout_ms = (int)v, i++;
      else if (!strcmp(a, "--print-case") && num) print = v, i++;
      else rc = df_usage(a, df_takes_value(a) ? val : NULL);
    }
    if (rc < 0) rc = print >= 0 ? df_print_one(&o, (long)print) : df_campaign(&o);
  }
  df_workers_shutdown();
  if (own_cache) {
    tc_cache_clear(NULL);
    rmdir(cache_dir);
  }
  return rc;
}
