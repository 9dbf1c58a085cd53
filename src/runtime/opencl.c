/* opencl.c - the OpenCL side of the runtime: finding and opening a device
 * (PoCL on the CPU by default), building kernel source (with a per-device
 * program cache), launching a kernel over host buffers, timing it with
 * profiling events, and listing devices for `tilec devices`.
 *
 * Every OpenCL error is reported by name and number, e.g.
 * "clEnqueueNDRangeKernel failed: CL_INVALID_WORK_GROUP_SIZE (-54)".
 * A launch that needs more work-items or local memory than the device
 * has is refused before it is enqueued.  With TILEC_RUN_TIMEOUT_MS set, a
 * launch that has not finished in that time fails with TC_ERR_TIMEOUT
 * instead of blocking forever (the watchdog below).
 * A tc_cl is not thread-safe: use one per thread (or lock around it). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime.h"

/* One built program, keyed by its source text. */
typedef struct tc_cl_prog {
  uint64_t hash;
  char *source;
  cl_program program;
} tc_cl_prog;

struct tc_cl {
  cl_platform_id platform;
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;
  char *name;                /* "platform / device" */
  size_t max_wg;             /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
  size_t max_items[3];       /* CL_DEVICE_MAX_WORK_ITEM_SIZES */
  cl_ulong local_mem;        /* CL_DEVICE_LOCAL_MEM_SIZE (0: unknown) */
  int abandoned;             /* queues given up on after a launch timed out */
  tc_cl_prog *progs;
  int nprogs, cap_progs;
};

/* ---- error names -------------------------------------------------------- */

const char *tc_cl_error_name(int code) {
  switch (code) {
  case 0: return "CL_SUCCESS";
  case -1: return "CL_DEVICE_NOT_FOUND";
  case -2: return "CL_DEVICE_NOT_AVAILABLE";
  case -3: return "CL_COMPILER_NOT_AVAILABLE";
  case -4: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
  case -5: return "CL_OUT_OF_RESOURCES";
  case -6: return "CL_OUT_OF_HOST_MEMORY";
  case -7: return "CL_PROFILING_INFO_NOT_AVAILABLE";
  case -8: return "CL_MEM_COPY_OVERLAP";
  case -9: return "CL_IMAGE_FORMAT_MISMATCH";
  case -10: return "CL_IMAGE_FORMAT_NOT_SUPPORTED";
  case -11: return "CL_BUILD_PROGRAM_FAILURE";
  case -12: return "CL_MAP_FAILURE";
  case -13: return "CL_MISALIGNED_SUB_BUFFER_OFFSET";
  case -14: return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
  case -15: return "CL_COMPILE_PROGRAM_FAILURE";
  case -16: return "CL_LINKER_NOT_AVAILABLE";
  case -17: return "CL_LINK_PROGRAM_FAILURE";
  case -18: return "CL_DEVICE_PARTITION_FAILED";
  case -19: return "CL_KERNEL_ARG_INFO_NOT_AVAILABLE";
  case -30: return "CL_INVALID_VALUE";
  case -31: return "CL_INVALID_DEVICE_TYPE";
  case -32: return "CL_INVALID_PLATFORM";
  case -33: return "CL_INVALID_DEVICE";
  case -34: return "CL_INVALID_CONTEXT";
  case -35: return "CL_INVALID_QUEUE_PROPERTIES";
  case -36: return "CL_INVALID_COMMAND_QUEUE";
  case -37: return "CL_INVALID_HOST_PTR";
  case -38: return "CL_INVALID_MEM_OBJECT";
  case -39: return "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR";
  case -40: return "CL_INVALID_IMAGE_SIZE";
  case -41: return "CL_INVALID_SAMPLER";
  case -42: return "CL_INVALID_BINARY";
  case -43: return "CL_INVALID_BUILD_OPTIONS";
  case -44: return "CL_INVALID_PROGRAM";
  case -45: return "CL_INVALID_PROGRAM_EXECUTABLE";
  case -46: return "CL_INVALID_KERNEL_NAME";
  case -47: return "CL_INVALID_KERNEL_DEFINITION";
  case -48: return "CL_INVALID_KERNEL";
  case -49: return "CL_INVALID_ARG_INDEX";
  case -50: return "CL_INVALID_ARG_VALUE";
  case -51: return "CL_INVALID_ARG_SIZE";
  case -52: return "CL_INVALID_KERNEL_ARGS";
  case -53: return "CL_INVALID_WORK_DIMENSION";
  case -54: return "CL_INVALID_WORK_GROUP_SIZE";
  case -55: return "CL_INVALID_WORK_ITEM_SIZE";
  case -56: return "CL_INVALID_GLOBAL_OFFSET";
  case -57: return "CL_INVALID_EVENT_WAIT_LIST";
  case -58: return "CL_INVALID_EVENT";
  case -59: return "CL_INVALID_OPERATION";
  case -60: return "CL_INVALID_GL_OBJECT";
  case -61: return "CL_INVALID_BUFFER_SIZE";
  case -62: return "CL_INVALID_MIP_LEVEL";
  case -63: return "CL_INVALID_GLOBAL_WORK_SIZE";
  case -64: return "CL_INVALID_PROPERTY";
  case -65: return "CL_INVALID_IMAGE_DESCRIPTOR";
  case -66: return "CL_INVALID_COMPILER_OPTIONS";
  case -67: return "CL_INVALID_LINKER_OPTIONS";
  case -68: return "CL_INVALID_DEVICE_PARTITION_COUNT";
  case -69: return "CL_INVALID_PIPE_SIZE";
  case -70: return "CL_INVALID_DEVICE_QUEUE";
  case -71: return "CL_INVALID_SPEC_ID";
  case -72: return "CL_MAX_SIZE_RESTRICTION_EXCEEDED";
  case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
  default: return "unknown OpenCL error";
  }
}

/* ---- small helpers ------------------------------------------------------ */


/* "what failed: NAME (code)" */
static void cl_fail(tc_str *err, const char *what, cl_int e) {
  tc_str_printf(err, "%s failed: %s (%d)", what, tc_cl_error_name(e), (int)e);
}

static char *platform_str(cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  if (clGetPlatformInfo(p, what, 0, NULL, &n) != CL_SUCCESS || n == 0)
    return tc_xstrdup("?");
  char *s = tc_xmalloc(n + 1);
  if (clGetPlatformInfo(p, what, n, s, NULL) != CL_SUCCESS) {
    free(s);
    return tc_xstrdup("?");
  }
  s[n] = 0;
  return s;
}

static char *device_str(cl_device_id d, cl_device_info what) {
  size_t n = 0;
  if (clGetDeviceInfo(d, what, 0, NULL, &n) != CL_SUCCESS || n == 0)
    return tc_xstrdup("?");
  char *s = tc_xmalloc(n + 1);
  if (clGetDeviceInfo(d, what, n, s, NULL) != CL_SUCCESS) {
    free(s);
    return tc_xstrdup("?");
  }
  s[n] = 0;
  return s;
}

/* Case-insensitive strstr. */
static int contains_ci(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  if (n == 0) return 1;
  for (; *hay; hay++) {
    size_t i = 0;
    while (i < n && hay[i] &&
           tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
      i++;
    if (i == n) return 1;
  }
  return 0;
}

static uint64_t hash_text(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= 1099511628211ull;
  }
  return h;
}

/* ---- enumerating devices ------------------------------------------------ */

typedef struct cl_entry {
  int pi, di;                /* platform and device index */
  cl_platform_id platform;
  cl_device_id device;
  char *name;                /* "platform / device" */
  char *match;               /* name + platform vendor + version, for selectors */
  int is_pocl;
} cl_entry;

typedef struct cl_list {
  cl_entry *v;
  int n, cap;
} cl_list;

static void list_free(cl_list *l) {
  for (int i = 0; i < l->n; i++) {
    free(l->v[i].name);
    free(l->v[i].match);
  }
  free(l->v);
  l->v = NULL;
  l->n = l->cap = 0;
}

/* Fills l with every device of every platform.  On failure (no platform)
 * returns non-zero with the reason in err. */
static int list_devices(cl_list *l, tc_str *err) {
  cl_uint np = 0;
  cl_int e = clGetPlatformIDs(0, NULL, &np);
  if (e == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (e == CL_SUCCESS && np == 0)) {
    tc_str_printf(err, "no OpenCL platform found (install pocl-opencl-icd)");
    return 1;
  }
  if (e != CL_SUCCESS) {
    cl_fail(err, "clGetPlatformIDs", e);
    tc_str_printf(err, "; no OpenCL platform found (install pocl-opencl-icd)");
    return 1;
  }
  cl_platform_id *ps = tc_xcalloc(np, sizeof *ps);
  e = clGetPlatformIDs(np, ps, NULL);
  if (e != CL_SUCCESS) {
    free(ps);
    cl_fail(err, "clGetPlatformIDs", e);
    return 1;
  }
  for (cl_uint p = 0; p < np; p++) {
    cl_uint nd = 0;
    e = clGetDeviceIDs(ps[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
    if (e != CL_SUCCESS || nd == 0) continue; /* CL_DEVICE_NOT_FOUND */
    cl_device_id *ds = tc_xcalloc(nd, sizeof *ds);
    if (clGetDeviceIDs(ps[p], CL_DEVICE_TYPE_ALL, nd, ds, NULL) != CL_SUCCESS) {
      free(ds);
      continue;
    }
    char *pname = platform_str(ps[p], CL_PLATFORM_NAME);
    char *pvendor = platform_str(ps[p], CL_PLATFORM_VENDOR);
    char *pversion = platform_str(ps[p], CL_PLATFORM_VERSION);
    for (cl_uint d = 0; d < nd; d++) {
      char *dname = device_str(ds[d], CL_DEVICE_NAME);
      cl_entry en;
      tc_str s;
      tc_str_init(&s);
      tc_str_printf(&s, "%s / %s", pname, dname);
      en.name = tc_str_take(&s);
      tc_str_printf(&s, "%s\n%s\n%s", en.name, pvendor, pversion);
      en.match = tc_str_take(&s);
      en.pi = (int)p;
      en.di = (int)d;
      en.platform = ps[p];
      en.device = ds[d];
      en.is_pocl = contains_ci(pname, "Portable Computing Language") ||
                   contains_ci(pvendor, "pocl") || contains_ci(pversion, "pocl");
      TC_PUSH(l->v, l->n, l->cap, en);
      free(dname);
    }
    free(pname);
    free(pvendor);
    free(pversion);
    free(ds);
  }
  free(ps);
  return 0;
}

/* Parses "P:D"; returns 1 when sel has that form. */
static int parse_indices(const char *sel, int *pi, int *di) {
  char *end;
  if (!isdigit((unsigned char)sel[0])) return 0;
  long p = strtol(sel, &end, 10);
  if (*end != ':' || !isdigit((unsigned char)end[1])) return 0;
  long d = strtol(end + 1, &end, 10);
  if (*end != 0 || p > 1000000 || d > 1000000) return 0;
  *pi = (int)p;
  *di = (int)d;
  return 1;
}

/* ---- opening and closing ------------------------------------------------ */

tc_status tc_cl_open(const char *selector, tc_cl **out, tc_str *err) {
  if (!out) {
    tc_str_printf(err, "tc_cl_open: out is NULL");
    return TC_ERR_ARGUMENT;
  }
  *out = NULL;
  const char *from_env = NULL;
  if (!selector) {
    const char *env = getenv("TILEC_OPENCL_DEVICE");
    if (env && *env) selector = from_env = env;
  }

  cl_list l = {0};
  if (list_devices(&l, err)) return TC_ERR_NO_DEVICE;
  if (l.n == 0) {
    list_free(&l);
    tc_str_printf(err, "no OpenCL device found on any platform (install pocl-opencl-icd)");
    return TC_ERR_NO_DEVICE;
  }

  int pick = -1;
  if (!selector) {
    for (int i = 0; i < l.n && pick < 0; i++)
      if (l.v[i].is_pocl) pick = i;
    if (pick < 0) pick = 0;
  } else {
    int pi, di;
    if (parse_indices(selector, &pi, &di)) {
      for (int i = 0; i < l.n; i++)
        if (l.v[i].pi == pi && l.v[i].di == di) pick = i;
    } else {
      for (int i = 0; i < l.n && pick < 0; i++)
        if (contains_ci(l.v[i].match, selector)) pick = i;
    }
    if (pick < 0) {
      tc_str_printf(err, "no OpenCL device matches '%s'%s; run `tilec devices`", selector,
          from_env ? " (from $TILEC_OPENCL_DEVICE)" : "");
      list_free(&l);
      return TC_ERR_NO_DEVICE;
    }
  }

  cl_entry *en = &l.v[pick];
  cl_int e;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                   (cl_context_properties)en->platform, 0};
  cl_context ctx = clCreateContext(props, 1, &en->device, NULL, NULL, &e);
  if (!ctx || e != CL_SUCCESS) {
    cl_fail(err, "clCreateContext", e);
    tc_str_printf(err, " for %s", en->name);
    list_free(&l);
    return TC_ERR_NO_DEVICE;
  }
  cl_command_queue q =
      clCreateCommandQueue(ctx, en->device, CL_QUEUE_PROFILING_ENABLE, &e);
  if (!q || e != CL_SUCCESS) {
    cl_fail(err, "clCreateCommandQueue", e);
    tc_str_printf(err, " for %s", en->name);
    clReleaseContext(ctx);
    list_free(&l);
    return TC_ERR_NO_DEVICE;
  }

  tc_cl *cl = tc_xcalloc(1, sizeof *cl);
  cl->platform = en->platform;
  cl->device = en->device;
  cl->context = ctx;
  cl->queue = q;
  cl->name = en->name;
  en->name = NULL;
  if (clGetDeviceInfo(cl->device, CL_DEVICE_MAX_WORK_GROUP_SIZE,
                      sizeof cl->max_wg, &cl->max_wg, NULL) != CL_SUCCESS)
    cl->max_wg = 0; /* unknown: let the launch report it */
  size_t items[3] = {0, 0, 0};
  cl_uint ndims = 0;
  if (clGetDeviceInfo(cl->device, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS,
                      sizeof ndims, &ndims, NULL) == CL_SUCCESS &&
      ndims >= 3) {
    size_t *all = tc_xcalloc(ndims, sizeof *all);
    if (clGetDeviceInfo(cl->device, CL_DEVICE_MAX_WORK_ITEM_SIZES,
                        ndims * sizeof *all, all, NULL) == CL_SUCCESS)
      memcpy(items, all, sizeof items);
    free(all);
  }
  memcpy(cl->max_items, items, sizeof items);
  if (clGetDeviceInfo(cl->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof cl->local_mem,
                      &cl->local_mem, NULL) != CL_SUCCESS)
    cl->local_mem = 0; /* unknown: let the launch report it */
  list_free(&l);
  *out = cl;
  return TC_OK;
}

void tc_cl_close(tc_cl *cl) {
  if (!cl) return;
  for (int i = 0; i < cl->nprogs; i++) {
    clReleaseProgram(cl->progs[i].program);
    free(cl->progs[i].source);
  }
  free(cl->progs);
  if (cl->queue) clReleaseCommandQueue(cl->queue);
  /* a launch that timed out still runs in the context: leave it be */
  if (cl->context && !cl->abandoned) clReleaseContext(cl->context);
  free(cl->name);
  free(cl);
}

const char *tc_cl_device_name(const tc_cl *cl) { return cl ? cl->name : ""; }

size_t tc_cl_max_work_group_size(const tc_cl *cl) { return cl ? cl->max_wg : 0; }

uint64_t tc_cl_local_mem_size(const tc_cl *cl) { return cl ? (uint64_t)cl->local_mem : 0; }

int tc_cl_abandoned_queues(const tc_cl *cl) { return cl ? cl->abandoned : 0; }

int tc_cl_cached_programs(const tc_cl *cl) { return cl ? cl->nprogs : 0; }

/* ---- building ----------------------------------------------------------- */

static void append_build_log(tc_cl *cl, cl_program prog, tc_str *err) {
  size_t n = 0;
  if (clGetProgramBuildInfo(prog, cl->device, CL_PROGRAM_BUILD_LOG, 0, NULL,
                            &n) != CL_SUCCESS ||
      n <= 1) {
    tc_str_printf(err, "\n(the OpenCL compiler gave no build log)");
    return;
  }
  char *log = tc_xmalloc(n + 1);
  if (clGetProgramBuildInfo(prog, cl->device, CL_PROGRAM_BUILD_LOG, n, log,
                            NULL) != CL_SUCCESS) {
    free(log);
    return;
  }
  log[n] = 0;
  tc_str_printf(err, "\nbuild log:\n%s", log);
  free(log);
}

/* Returns the built program for source (from the cache, or built now and
 * cached), or NULL with *st and err set. */
static cl_program get_program(tc_cl *cl, const char *source, tc_status *st,
                              tc_str *err) {
  uint64_t h = hash_text(source);
  for (int i = 0; i < cl->nprogs; i++)
    if (cl->progs[i].hash == h && strcmp(cl->progs[i].source, source) == 0)
      return cl->progs[i].program;

  cl_int e;
  const char *srcs[1] = {source};
  cl_program prog = clCreateProgramWithSource(cl->context, 1, srcs, NULL, &e);
  if (!prog || e != CL_SUCCESS) {
    cl_fail(err, "clCreateProgramWithSource", e);
    *st = TC_ERR_COMPILE;
    return NULL;
  }
  e = clBuildProgram(prog, 1, &cl->device, "", NULL, NULL);
  if (e != CL_SUCCESS) {
    cl_fail(err, "clBuildProgram", e);
    tc_str_printf(err, " on %s", cl->name);
    append_build_log(cl, prog, err);
    clReleaseProgram(prog);
    *st = e == CL_BUILD_PROGRAM_FAILURE || e == CL_INVALID_BUILD_OPTIONS ||
                  e == CL_COMPILER_NOT_AVAILABLE
              ? TC_ERR_COMPILE
              : TC_ERR_RUNTIME;
    return NULL;
  }
  tc_cl_prog p = {h, tc_xstrdup(source), prog};
  TC_PUSH(cl->progs, cl->nprogs, cl->cap_progs, p);
  return prog;
}

tc_status tc_cl_build(tc_cl *cl, const char *source, tc_str *err) {
  tc_status st = TC_OK;
  if (!cl || !source) {
    tc_str_printf(err, "tc_cl_build: missing device or source");
    return TC_ERR_ARGUMENT;
  }
  return get_program(cl, source, &st, err) ? TC_OK : st;
}

/* ---- running ------------------------------------------------------------ */

/* Launches of a launch's timed repeats in flight between two waits (one
 * profiling event each). */
enum { CL_TIMED_BATCH = 32 };

/* Enqueues one launch of k with its own event in *ev (NULL on failure). */
static tc_status cl_enqueue(tc_cl *cl, cl_kernel k, const char *kernel_name, cl_uint work_dim,
                            const size_t *global, const size_t *local, cl_event *ev,
                            tc_str *err) {
  cl_int e = clEnqueueNDRangeKernel(cl->queue, k, work_dim, NULL, global, local, 0, NULL, ev);
  if (e == CL_SUCCESS) return TC_OK;
  *ev = NULL;
  cl_fail(err, "clEnqueueNDRangeKernel", e);
  tc_str_printf(err, " (kernel '%s', global %zux%zux%zu, local %zux%zux%zu)", kernel_name,
                global[0], global[1], global[2], local[0], local[1], local[2]);
  return TC_ERR_RUNTIME;
}

/* ---- the run watchdog ------------------------------------------------------
 * OpenCL cannot stop a kernel that has started.  With TILEC_RUN_TIMEOUT_MS
 * set, tilec polls each launch's event instead of blocking on it, and
 * when a launch has not finished in time it gives up on it: the launch
 * fails with TC_ERR_TIMEOUT, and since the stuck kernel keeps its command
 * queue (and the buffers and kernel object it uses) busy for good, those
 * are never released, and the device gets a new queue for later launches.
 * The stuck kernel goes on using the device's threads (PoCL: a CPU core
 * per stuck work-group) until the process ends. */

/* The longest one launch may run, in milliseconds, from
 * $TILEC_RUN_TIMEOUT_MS: 0 (no limit) when it is unset, empty or 0.
 * Non-zero, with the reason in err, for a value that is not a whole
 * number of milliseconds. */
static int run_timeout_ms(long long *ms, tc_str *err) {
  *ms = 0;
  const char *v = getenv("TILEC_RUN_TIMEOUT_MS");
  if (!v || !*v) return 0;
  char *end;
  long long x = strtoll(v, &end, 10);
  if (*end || x < 0 || x > 86400000LL * 365) {
    tc_str_printf(err, "TILEC_RUN_TIMEOUT_MS is \"%s\"; it takes the longest a kernel may run, in "
                  "milliseconds (a whole number; unset or 0: no limit)", v);
    return 1;
  }
  *ms = x;
  return 0;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* Polls ev until its command has finished (or failed): 0, or -1 when
 * timeout_ms passed first. */
static int cl_poll(cl_event ev, long long timeout_ms) {
  double end = now_ms() + (double)timeout_ms;
  long nap_us = 20;
  for (;;) {
    cl_int s = CL_COMPLETE;
    if (clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL) != CL_SUCCESS)
      return 0; /* clWaitForEvents says what is wrong */
    if (s <= CL_COMPLETE) return 0;
    if (now_ms() >= end) return -1;
    struct timespec nap = {0, nap_us * 1000};
    nanosleep(&nap, NULL);
    if (nap_us < 5000) nap_us *= 2;
  }
}

/* After a launch timed out: its queue never drains, so leave it (and its
 * context, at tc_cl_close) unreleased, and give the device a new queue. */
static void abandon_queue(tc_cl *cl) {
  cl->abandoned++;
  cl_int e;
  cl_command_queue q = clCreateCommandQueue(cl->context, cl->device, CL_QUEUE_PROFILING_ENABLE, &e);
  cl->queue = q && e == CL_SUCCESS ? q : NULL;
}

/* Waits for the n launches of evs and checks that each completed; when ms
 * is not NULL, ms[i] gets the run time of evs[i] from its profiling
 * information.  With timeout_ms > 0, each launch may take that long from
 * when the previous one finished (or the wait began): TC_ERR_TIMEOUT, and
 * the queue abandoned, when one takes longer. */
static tc_status cl_wait_times(tc_cl *cl, cl_event *evs, int n, const char *kernel_name,
                               long long timeout_ms, double *ms, tc_str *err) {
  if (timeout_ms > 0) {
    clFlush(cl->queue);
    for (int i = 0; i < n; i++)
      if (cl_poll(evs[i], timeout_ms) < 0) {
        tc_str_printf(err, "kernel '%s' did not finish within %lld ms (TILEC_RUN_TIMEOUT_MS) on %s; "
                      "it is left running: a kernel cannot be stopped, so its command queue and "
                      "buffers are abandoned and later launches use a new queue; look for a loop "
                      "that never ends, or raise TILEC_RUN_TIMEOUT_MS",
                      kernel_name, timeout_ms, cl->name);
        abandon_queue(cl);
        return TC_ERR_TIMEOUT;
      }
  }
  cl_int e = clWaitForEvents((cl_uint)n, evs);
  /* a launch that failed says why in its execution status */
  cl_int bad = e == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST ? CL_SUCCESS : e;
  for (int i = 0; bad == CL_SUCCESS && i < n; i++) {
    cl_int exec = CL_COMPLETE;
    clGetEventInfo(evs[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof exec, &exec, NULL);
    if (exec < 0) bad = exec;
  }
  if (bad == CL_SUCCESS) bad = e;
  if (bad != CL_SUCCESS) {
    cl_fail(err, "running the kernel", bad);
    tc_str_printf(err, " (kernel '%s')", kernel_name);
    return TC_ERR_RUNTIME;
  }
  for (int i = 0; ms && i < n; i++) {
    cl_ulong t0 = 0, t1 = 0;
    e = clGetEventProfilingInfo(evs[i], CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
    if (e == CL_SUCCESS)
      e = clGetEventProfilingInfo(evs[i], CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
    if (e != CL_SUCCESS) {
      cl_fail(err, "clGetEventProfilingInfo", e);
      return TC_ERR_RUNTIME;
    }
    ms[i] = t1 >= t0 ? (double)(t1 - t0) * 1e-6 : 0.0;
  }
  return TC_OK;
}

tc_status tc_cl_run(tc_cl *cl, const char *source, const char *kernel_name,
                    tc_rt_buffer *bufs, int nbufs, const tc_launch *launch,
                    double *ms, tc_str *err) {
  if (!cl || !source || !kernel_name || !launch || nbufs < 0 ||
      (nbufs > 0 && !bufs)) {
    tc_str_printf(err, "tc_cl_run: missing device, source, kernel name, launch or buffers");
    return TC_ERR_ARGUMENT;
  }
  if (ms) *ms = 0;
  if (tc_launch_check_repeat(launch, kernel_name, err)) return TC_ERR_ARGUMENT;
  long long timeout_ms;
  if (run_timeout_ms(&timeout_ms, err)) return TC_ERR_ARGUMENT;
  if (!cl->queue) {
    tc_str_printf(err, "launch of '%s': %s has no command queue: a launch timed out and no new "
                  "queue could be made; open the device again", kernel_name, cl->name);
    return TC_ERR_RUNTIME;
  }

  /* Launch geometry: global = grid * block per dimension, local = block. */
  size_t global[3], local[3];
  size_t wg = 1;
  cl_uint work_dim = 1;
  for (int d = 0; d < 3; d++) {
    size_t g = launch->grid[d], b = launch->block[d];
    if (g == 0 || b == 0) {
      tc_str_printf(err, "launch of '%s': grid and block extents must be >= 1 (grid %zux%zux%zu, "
          "block %zux%zux%zu)", kernel_name, launch->grid[0], launch->grid[1],
          launch->grid[2], launch->block[0], launch->block[1], launch->block[2]);
      return TC_ERR_ARGUMENT;
    }
    if (g > SIZE_MAX / b) {
      tc_str_printf(err, "launch of '%s': global size %zu*%zu overflows in dimension %d",
          kernel_name, g, b, d);
      return TC_ERR_ARGUMENT;
    }
    global[d] = g * b;
    local[d] = b;
    wg = wg > SIZE_MAX / b ? SIZE_MAX : wg * b;
    if (g != 1 || b != 1) work_dim = (cl_uint)d + 1;
  }
  if (cl->max_wg && wg > cl->max_wg) {
    tc_str_printf(err, "launch of '%s': block %zux%zux%zu has %zu work-items, which exceeds "
        "the max work-group size %zu of %s; launch fewer threads per block", kernel_name,
        local[0], local[1], local[2], wg, cl->max_wg, cl->name);
    return TC_ERR_RUNTIME;
  }
  for (int d = 0; d < 3; d++) {
    if (cl->max_items[d] && local[d] > cl->max_items[d]) {
      tc_str_printf(err, "launch of '%s': block extent %zu in dimension %d exceeds the max "
          "work-item size %zu of %s", kernel_name, local[d], d, cl->max_items[d],
          cl->name);
      return TC_ERR_RUNTIME;
    }
  }

  tc_status st = TC_OK;
  cl_program prog = get_program(cl, source, &st, err);
  if (!prog) return st;

  cl_int e;
  cl_kernel k = clCreateKernel(prog, kernel_name, &e);
  if (!k || e != CL_SUCCESS) {
    cl_fail(err, "clCreateKernel", e);
    if (e == CL_INVALID_KERNEL_NAME)
      tc_str_printf(err, ": the program has no kernel named '%s'", kernel_name);
    return TC_ERR_COMPILE;
  }

  cl_mem *mems = tc_xcalloc((size_t)(nbufs ? nbufs : 1), sizeof *mems);
  cl_event evs[CL_TIMED_BATCH] = {NULL};
  int nevs = 0; /* the events of evs to release */

  cl_uint nargs = 0;
  e = clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL);
  if (e == CL_SUCCESS && nargs != (cl_uint)nbufs) {
    tc_str_printf(err, "kernel '%s' takes %u arguments but %d buffers were given",
        kernel_name, (unsigned)nargs, nbufs);
    st = TC_ERR_ARGUMENT;
    goto done;
  }
  size_t kwg = 0;
  if (clGetKernelWorkGroupInfo(k, cl->device, CL_KERNEL_WORK_GROUP_SIZE,
                               sizeof kwg, &kwg, NULL) == CL_SUCCESS &&
      kwg && wg > kwg) {
    tc_str_printf(err, "launch of '%s': block %zux%zux%zu has %zu work-items, which exceeds "
        "the kernel's max work-group size %zu on %s; launch fewer threads per block",
        kernel_name, local[0], local[1], local[2], wg, kwg, cl->name);
    st = TC_ERR_RUNTIME;
    goto done;
  }
  /* PoCL does not check a kernel's local arrays against the device:
   * over its limit it aborts the process from a worker thread */
  cl_ulong klocal = 0;
  if (cl->local_mem &&
      clGetKernelWorkGroupInfo(k, cl->device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof klocal, &klocal,
                               NULL) == CL_SUCCESS &&
      klocal > cl->local_mem) {
    tc_str_printf(err, "launch of '%s': the kernel needs %llu bytes of local (shared) memory per "
        "work-group, but %s has %llu (CL_DEVICE_LOCAL_MEM_SIZE); keep less in shared memory at "
        "a time (inline the shared tensors deeper, or move some to local memory), or pick a "
        "device with more (`tilec devices` lists them)", kernel_name,
        (unsigned long long)klocal, cl->name, (unsigned long long)cl->local_mem);
    st = TC_ERR_RUNTIME;
    goto done;
  }

  for (int i = 0; i < nbufs; i++) {
    size_t n = bufs[i].bytes;
    if (n > 0 && !bufs[i].host) {
      tc_str_printf(err, "buffer %d of '%s' has %zu bytes but no host data", i,
          kernel_name, n);
      st = TC_ERR_ARGUMENT;
      goto done;
    }
    if (bufs[i].by_value) { /* a scalar: the value itself */
      e = clSetKernelArg(k, (cl_uint)i, n, bufs[i].host);
      if (e != CL_SUCCESS) {
        cl_fail(err, "clSetKernelArg", e);
        tc_str_printf(err, " (argument %d of '%s', %zu bytes by value)", i, kernel_name, n);
        st = TC_ERR_ARGUMENT;
        goto done;
      }
      continue;
    }
    /* Zero-byte buffers get one byte: OpenCL has no empty buffers. */
    cl_mem_flags fl = CL_MEM_READ_WRITE | (n > 0 ? CL_MEM_COPY_HOST_PTR : 0);
    mems[i] = clCreateBuffer(cl->context, fl, n > 0 ? n : 1,
                             n > 0 ? bufs[i].host : NULL, &e);
    if (!mems[i] || e != CL_SUCCESS) {
      mems[i] = NULL;
      cl_fail(err, "clCreateBuffer", e);
      tc_str_printf(err, " (buffer %d, %zu bytes)", i, n);
      st = TC_ERR_RUNTIME;
      goto done;
    }
    e = clSetKernelArg(k, (cl_uint)i, sizeof(cl_mem), &mems[i]);
    if (e != CL_SUCCESS) {
      cl_fail(err, "clSetKernelArg", e);
      tc_str_printf(err, " (argument %d of '%s')", i, kernel_name);
      st = TC_ERR_ARGUMENT;
      goto done;
    }
  }

  /* the first launch: its time, then its results */
  if ((st = cl_enqueue(cl, k, kernel_name, work_dim, global, local, &evs[0], err))) goto done;
  nevs = 1;
  if ((st = cl_wait_times(cl, evs, 1, kernel_name, timeout_ms, ms, err))) goto done;
  for (int i = 0; i < nbufs; i++) {
    if (!bufs[i].copy_back || bufs[i].bytes == 0) continue;
    e = clEnqueueReadBuffer(cl->queue, mems[i], CL_TRUE, 0, bufs[i].bytes,
                            bufs[i].host, 0, NULL, NULL);
    if (e != CL_SUCCESS) {
      cl_fail(err, "clEnqueueReadBuffer", e);
      tc_str_printf(err, " (buffer %d, %zu bytes)", i, bufs[i].bytes);
      st = TC_ERR_RUNTIME;
      goto done;
    }
  }
  /* the timed repeats, back to back, each with its own profiling event */
  for (int first = 0; first < launch->repeat; first += CL_TIMED_BATCH) {
    for (int i = 0; i < nevs; i++) clReleaseEvent(evs[i]);
    nevs = 0;
    int n = launch->repeat - first < CL_TIMED_BATCH ? launch->repeat - first : CL_TIMED_BATCH;
    for (; nevs < n; nevs++)
      if ((st = cl_enqueue(cl, k, kernel_name, work_dim, global, local, &evs[nevs], err))) break;
    if (!st)
      st = cl_wait_times(cl, evs, nevs, kernel_name, timeout_ms, &launch->repeat_ms[first], err);
    if (st) {
      tc_str_printf(err, " in the timed launches %d to %d of %d", first + 1, first + n,
                    launch->repeat);
      goto done;
    }
  }

done:
  /* a launch that timed out still uses its buffers, kernel and events */
  for (int i = 0; st != TC_ERR_TIMEOUT && i < nevs; i++) clReleaseEvent(evs[i]);
  for (int i = 0; st != TC_ERR_TIMEOUT && i < nbufs; i++)
    if (mems[i]) clReleaseMemObject(mems[i]);
  free(mems);
  if (st != TC_ERR_TIMEOUT) clReleaseKernel(k);
  return st;
}

/* ---- listing ------------------------------------------------------------ */

static const char *type_name(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return "GPU";
  if (t & CL_DEVICE_TYPE_CPU) return "CPU";
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

int tc_cl_list_devices(tc_str *out) {
  cl_list l = {0};
  if (list_devices(&l, out)) {
    tc_str_printf(out, "\n");
    return 0;
  }
  if (l.n == 0) tc_str_printf(out, "no OpenCL device found on any platform\n");
  for (int i = 0; i < l.n; i++) {
    cl_device_type t = 0;
    cl_uint cus = 0;
    cl_ulong lmem = 0;
    clGetDeviceInfo(l.v[i].device, CL_DEVICE_TYPE, sizeof t, &t, NULL);
    clGetDeviceInfo(l.v[i].device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus,
                    &cus, NULL);
    clGetDeviceInfo(l.v[i].device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lmem, &lmem,
                    NULL);
    tc_str_printf(out, "%d:%d  %s (%s, %u compute units, %llu KiB local mem)\n", l.v[i].pi,
        l.v[i].di, l.v[i].name, type_name(t), (unsigned)cus,
        (unsigned long long)(lmem / 1024));
  }
  int n = l.n;
  list_free(&l);
  return n;
}

/* ---- listing platforms and devices ---------------------------------------- */

/* A platform's string (CL_PLATFORM_NAME ...) into buf ("?" on failure). */
static void platform_info(cl_platform_id p, cl_platform_info what, char *buf, size_t cap) {
  if (clGetPlatformInfo(p, what, cap - 1, buf, NULL) != CL_SUCCESS) snprintf(buf, cap, "?");
  buf[cap - 1] = 0;
}

static const char *cl_type_name(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return "GPU";
  if (t & CL_DEVICE_TYPE_CPU) return "CPU";
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

/* The devices of platform p into *out (nd of them; 0 when they cannot be listed). */
static int platform_devices(cl_platform_id p, tc_cl_device_info **out) {
  cl_uint nd = 0;
  cl_device_id *ds = NULL;
  *out = NULL;
  if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS) nd = 0;
  if (nd) {
    ds = calloc(nd, sizeof *ds);
    if (!ds || clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, ds, NULL) != CL_SUCCESS) nd = 0;
  }
  if (nd) *out = tc_xcalloc(nd, sizeof **out);
  for (cl_uint d = 0; d < nd; d++) {
    tc_cl_device_info *o = &(*out)[d];
    cl_device_type t = 0;
    cl_uint cus = 0;
    cl_ulong lmem = 0, gmem = 0;
    if (clGetDeviceInfo(ds[d], CL_DEVICE_NAME, sizeof o->name - 1, o->name, NULL) != CL_SUCCESS)
      snprintf(o->name, sizeof o->name, "?");
    o->name[sizeof o->name - 1] = 0;
    clGetDeviceInfo(ds[d], CL_DEVICE_TYPE, sizeof t, &t, NULL);
    clGetDeviceInfo(ds[d], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL);
    clGetDeviceInfo(ds[d], CL_DEVICE_LOCAL_MEM_SIZE, sizeof lmem, &lmem, NULL);
    clGetDeviceInfo(ds[d], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof gmem, &gmem, NULL);
    o->type = cl_type_name(t);
    o->compute_units = cus;
    o->local_mem_bytes = lmem, o->global_mem_bytes = gmem;
  }
  free(ds);
  return (int)nd;
}

int tc_cl_platforms(tc_cl_platform_info **out, tc_str *why) {
  *out = NULL;
  if (why) tc_str_clear(why);
  cl_uint np = 0;
  cl_int e = clGetPlatformIDs(0, NULL, &np);
  if (e == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (e == CL_SUCCESS && np == 0)) {
    tc_err_set(why, "no OpenCL platform found (install pocl-opencl-icd)");
    return 0;
  }
  cl_platform_id *ps = e == CL_SUCCESS ? calloc(np, sizeof *ps) : NULL;
  if (e == CL_SUCCESS && ps) e = clGetPlatformIDs(np, ps, NULL);
  if (e != CL_SUCCESS || !ps) {
    tc_err_set(why, "clGetPlatformIDs failed: %s (%d)", tc_cl_error_name(e), (int)e);
    free(ps);
    return -1;
  }
  tc_cl_platform_info *p = tc_xcalloc(np, sizeof *p);
  for (cl_uint i = 0; i < np; i++) {
    platform_info(ps[i], CL_PLATFORM_NAME, p[i].name, sizeof p[i].name);
    platform_info(ps[i], CL_PLATFORM_VENDOR, p[i].vendor, sizeof p[i].vendor);
    platform_info(ps[i], CL_PLATFORM_VERSION, p[i].version, sizeof p[i].version);
    p[i].ndevices = platform_devices(ps[i], &p[i].devices);
  }
  free(ps);
  *out = p;
  return (int)np;
}

void tc_cl_platforms_free(tc_cl_platform_info *p, int n) {
  for (int i = 0; i < n; i++) free(p[i].devices);
  free(p);
}
