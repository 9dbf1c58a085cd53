/* cuda.c - the CUDA side of the runtime: compiling CUDA C to PTX with NVRTC
 * and launching it with the driver API.  Both libraries are loaded with
 * dlopen at first use and their functions resolved with dlsym, so tilec
 * builds without CUDA headers and runs where CUDA is missing, saying so
 * ("no CUDA device: libcuda.so.1 not found ...").
 *
 * The loaded libraries live in one static struct, the only process-wide
 * state in tilec.  It is filled in once with pthread_once (NVRTC, the
 * driver and the device's primary context each have their own once), so
 * every function here may be called from any thread.  The primary context
 * of device 0 stays retained until the process exits. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

/* ---- NVRTC types (declared here: no nvrtc.h needed) --------------------- */

typedef int nvrtcResult; /* NVRTC_SUCCESS == 0 */
typedef struct tc_nvrtc_prog *nvrtcProgram;

typedef nvrtcResult (*nvrtcCreateProgram_fn)(nvrtcProgram *prog,
                                             const char *src, const char *name,
                                             int num_headers,
                                             const char *const *headers,
                                             const char *const *include_names);
typedef nvrtcResult (*nvrtcCompileProgram_fn)(nvrtcProgram prog, int nopts,
                                              const char *const *opts);
typedef nvrtcResult (*nvrtcGetSize_fn)(nvrtcProgram prog, size_t *size);
typedef nvrtcResult (*nvrtcGetText_fn)(nvrtcProgram prog, char *out);
typedef nvrtcResult (*nvrtcDestroyProgram_fn)(nvrtcProgram *prog);
typedef nvrtcResult (*nvrtcVersion_fn)(int *major, int *minor);
typedef const char *(*nvrtcGetErrorString_fn)(nvrtcResult r);

/* ---- driver API types ---------------------------------------------------- */

typedef int CUresult; /* CUDA_SUCCESS == 0 */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct tc_cu_ctx *CUcontext;
typedef struct tc_cu_mod *CUmodule;
typedef struct tc_cu_func *CUfunction;
typedef struct tc_cu_event *CUevent;
typedef struct tc_cu_stream *CUstream;

enum {
  TC_CU_ATTR_MAX_THREADS_PER_BLOCK = 1,
  TC_CU_ATTR_MULTIPROCESSOR_COUNT = 16,
  TC_CU_ATTR_CC_MAJOR = 75,
  TC_CU_ATTR_CC_MINOR = 76,
  TC_CU_ATTR_MAX_SMEM_OPTIN = 97,
  TC_CU_JIT_ERROR_LOG_BUFFER = 5,
  TC_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
};

typedef CUresult (*cuInit_fn)(unsigned flags);
typedef CUresult (*cuDriverGetVersion_fn)(int *v);
typedef CUresult (*cuDeviceGetCount_fn)(int *n);
typedef CUresult (*cuDeviceGet_fn)(CUdevice *d, int ordinal);
typedef CUresult (*cuDeviceGetName_fn)(char *name, int len, CUdevice d);
typedef CUresult (*cuDeviceGetAttribute_fn)(int *v, int attr, CUdevice d);
typedef CUresult (*cuDevicePrimaryCtxRetain_fn)(CUcontext *c, CUdevice d);
typedef CUresult (*cuCtxSetCurrent_fn)(CUcontext c);
typedef CUresult (*cuCtxSynchronize_fn)(void);
typedef CUresult (*cuModuleLoadDataEx_fn)(CUmodule *m, const void *image,
                                          unsigned nopts, int *opts,
                                          void **values);
typedef CUresult (*cuModuleGetFunction_fn)(CUfunction *f, CUmodule m,
                                           const char *name);
typedef CUresult (*cuModuleUnload_fn)(CUmodule m);
typedef CUresult (*cuFuncSetAttribute_fn)(CUfunction f, int attr, int value);
typedef CUresult (*cuFuncGetAttribute_fn)(int *value, int attr, CUfunction f);
typedef CUresult (*cuMemAlloc_fn)(CUdeviceptr *p, size_t bytes);
typedef CUresult (*cuMemFree_fn)(CUdeviceptr p);
typedef CUresult (*cuMemcpyHtoD_fn)(CUdeviceptr dst, const void *src,
                                    size_t bytes);
typedef CUresult (*cuMemcpyDtoH_fn)(void *dst, CUdeviceptr src, size_t bytes);
typedef CUresult (*cuMemcpyDtoD_fn)(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
typedef CUresult (*cuLaunchKernel_fn)(CUfunction f, unsigned gx, unsigned gy,
                                      unsigned gz, unsigned bx, unsigned by,
                                      unsigned bz, unsigned smem, CUstream s,
                                      void **params, void **extra);
typedef CUresult (*cuEventCreate_fn)(CUevent *e, unsigned flags);
typedef CUresult (*cuEventRecord_fn)(CUevent e, CUstream s);
typedef CUresult (*cuEventSynchronize_fn)(CUevent e);
typedef CUresult (*cuEventElapsedTime_fn)(float *ms, CUevent a, CUevent b);
typedef CUresult (*cuEventDestroy_fn)(CUevent e);
typedef CUresult (*cuGetErrorName_fn)(CUresult r, const char **s);
/* CUtensorMap is 128 opaque bytes (the driver needs them 64-byte aligned; cuda.h
 * aligns the type to 128, as tilec does); the enums are ints */
typedef CUresult (*cuTensorMapEncodeTiled_fn)(void *tensor_map, int data_type, uint32_t rank,
                                              void *global_address, const uint64_t *global_dim,
                                              const uint64_t *global_strides,
                                              const uint32_t *box_dim,
                                              const uint32_t *element_strides, int interleave,
                                              int swizzle, int l2_promotion, int oob_fill);

/* ---- the one process-wide state ----------------------------------------- */

static struct {
  /* NVRTC */
  pthread_once_t nvrtc_once;
  void *nvrtc;
  char nvrtc_path[256];
  char nvrtc_why[768]; /* why it is unusable ("" when loaded) */
  nvrtcCreateProgram_fn nvrtcCreateProgram;
  nvrtcCompileProgram_fn nvrtcCompileProgram;
  nvrtcGetSize_fn nvrtcGetPTXSize;
  nvrtcGetText_fn nvrtcGetPTX;
  nvrtcGetSize_fn nvrtcGetProgramLogSize;
  nvrtcGetText_fn nvrtcGetProgramLog;
  nvrtcDestroyProgram_fn nvrtcDestroyProgram;
  nvrtcVersion_fn nvrtcVersion;
  nvrtcGetErrorString_fn nvrtcGetErrorString; /* optional */

  /* driver */
  pthread_once_t cu_once;
  void *cuda;
  char cu_why[768]; /* "no CUDA device: ..." ("" when usable) */
  int ndevices;
  CUdevice dev; /* device 0 */
  char dev_name[256];
  int cc_major, cc_minor, driver_version;
  cuInit_fn cuInit;
  cuDriverGetVersion_fn cuDriverGetVersion;
  cuDeviceGetCount_fn cuDeviceGetCount;
  cuDeviceGet_fn cuDeviceGet;
  cuDeviceGetName_fn cuDeviceGetName;
  cuDeviceGetAttribute_fn cuDeviceGetAttribute;
  cuDevicePrimaryCtxRetain_fn cuDevicePrimaryCtxRetain;
  cuCtxSetCurrent_fn cuCtxSetCurrent;
  cuCtxSynchronize_fn cuCtxSynchronize;
  cuModuleLoadDataEx_fn cuModuleLoadDataEx;
  cuModuleGetFunction_fn cuModuleGetFunction;
  cuModuleUnload_fn cuModuleUnload;
  cuFuncSetAttribute_fn cuFuncSetAttribute;
  cuFuncGetAttribute_fn cuFuncGetAttribute;
  cuMemAlloc_fn cuMemAlloc;
  cuMemFree_fn cuMemFree;
  cuMemcpyHtoD_fn cuMemcpyHtoD;
  cuMemcpyDtoH_fn cuMemcpyDtoH;
  cuMemcpyDtoD_fn cuMemcpyDtoD; /* optional: only tc_cuda_time_d2d needs it */
  cuLaunchKernel_fn cuLaunchKernel;
  cuEventCreate_fn cuEventCreate;
  cuEventRecord_fn cuEventRecord;
  cuEventSynchronize_fn cuEventSynchronize;
  cuEventElapsedTime_fn cuEventElapsedTime;
  cuEventDestroy_fn cuEventDestroy;
  cuGetErrorName_fn cuGetErrorName; /* optional */
  cuTensorMapEncodeTiled_fn cuTensorMapEncodeTiled; /* optional: CUDA 12.0+ drivers */

  /* the primary context of device 0 */
  pthread_once_t ctx_once;
  CUcontext ctx;
  CUresult ctx_err;
} g = {.nvrtc_once = PTHREAD_ONCE_INIT,
       .cu_once = PTHREAD_ONCE_INIT,
       .ctx_once = PTHREAD_ONCE_INIT};


/* dlsym into a function pointer of any type (memcpy keeps ISO C happy). */
static int resolve(void *lib, const char *name, void *fnptr, size_t size) {
  void *p = dlsym(lib, name);
  if (!p) return 0;
  memcpy(fnptr, &p, size);
  return 1;
}
#define RESOLVE(lib, field, name) resolve((lib), (name), &(field), sizeof(field))

/* ---- NVRTC loading ------------------------------------------------------ */

static void nvrtc_load(void) {
  char cuda_home_lib[512] = "";
  const char *home = getenv("CUDA_HOME");
  if (home && *home)
    snprintf(cuda_home_lib, sizeof cuda_home_lib, "%s/lib64/libnvrtc.so", home);
  const char *tries[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
                         "/usr/local/cuda/lib64/libnvrtc.so", cuda_home_lib};
  char first_error[512] = "";
  for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
    if (!tries[i][0]) continue;
    void *h = dlopen(tries[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char *e = dlerror();
      if (!first_error[0] && e) snprintf(first_error, sizeof first_error, "%s", e);
      continue;
    }
    g.nvrtc = h;
    snprintf(g.nvrtc_path, sizeof g.nvrtc_path, "%s", tries[i]);
    break;
  }
  if (!g.nvrtc) {
    snprintf(g.nvrtc_why, sizeof g.nvrtc_why,
             "NVRTC not found (tried libnvrtc.so, libnvrtc.so.13, libnvrtc.so.12, "
             "/usr/local/cuda/lib64%s; set CUDA_HOME or LD_LIBRARY_PATH): %s",
             cuda_home_lib[0] ? ", $CUDA_HOME/lib64" : "", first_error);
    return;
  }
  const char *missing = NULL;
#define NV(field, name) \
  if (!missing && !RESOLVE(g.nvrtc, g.field, name)) missing = name
  NV(nvrtcCreateProgram, "nvrtcCreateProgram");
  NV(nvrtcCompileProgram, "nvrtcCompileProgram");
  NV(nvrtcGetPTXSize, "nvrtcGetPTXSize");
  NV(nvrtcGetPTX, "nvrtcGetPTX");
  NV(nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize");
  NV(nvrtcGetProgramLog, "nvrtcGetProgramLog");
  NV(nvrtcDestroyProgram, "nvrtcDestroyProgram");
  NV(nvrtcVersion, "nvrtcVersion");
#undef NV
  RESOLVE(g.nvrtc, g.nvrtcGetErrorString, "nvrtcGetErrorString");
  if (missing) {
    snprintf(g.nvrtc_why, sizeof g.nvrtc_why, "%s lacks the symbol %s",
             g.nvrtc_path, missing);
    dlclose(g.nvrtc);
    g.nvrtc = NULL;
  }
}

static int nvrtc_ready(void) {
  pthread_once(&g.nvrtc_once, nvrtc_load);
  return g.nvrtc != NULL;
}

static const char *nvrtc_error_name(nvrtcResult r) {
  if (g.nvrtcGetErrorString) {
    const char *s = g.nvrtcGetErrorString(r);
    if (s) return s;
  }
  return "NVRTC error";
}

/* ---- driver loading ------------------------------------------------------ */

static const char *cu_error_name(CUresult r) {
  const char *s = NULL;
  if (g.cuGetErrorName && g.cuGetErrorName(r, &s) == 0 && s) return s;
  return "CUDA error";
}

static void cu_load(void) {
  g.cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!g.cuda) {
    const char *e = dlerror();
    snprintf(g.cu_why, sizeof g.cu_why,
             "no CUDA device: libcuda.so.1 not found (%s)",
             e ? e : "no NVIDIA driver installed");
    return;
  }
  const char *missing = NULL;
#define CU(field, name) \
  if (!missing && !RESOLVE(g.cuda, g.field, name)) missing = name
  CU(cuInit, "cuInit");
  CU(cuDriverGetVersion, "cuDriverGetVersion");
  CU(cuDeviceGetCount, "cuDeviceGetCount");
  CU(cuDeviceGet, "cuDeviceGet");
  CU(cuDeviceGetName, "cuDeviceGetName");
  CU(cuDeviceGetAttribute, "cuDeviceGetAttribute");
  CU(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  CU(cuCtxSetCurrent, "cuCtxSetCurrent");
  CU(cuCtxSynchronize, "cuCtxSynchronize");
  CU(cuModuleLoadDataEx, "cuModuleLoadDataEx");
  CU(cuModuleGetFunction, "cuModuleGetFunction");
  CU(cuModuleUnload, "cuModuleUnload");
  CU(cuFuncSetAttribute, "cuFuncSetAttribute");
  CU(cuFuncGetAttribute, "cuFuncGetAttribute");
  CU(cuMemAlloc, "cuMemAlloc_v2");
  CU(cuMemFree, "cuMemFree_v2");
  CU(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  CU(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  CU(cuLaunchKernel, "cuLaunchKernel");
  CU(cuEventCreate, "cuEventCreate");
  CU(cuEventRecord, "cuEventRecord");
  CU(cuEventSynchronize, "cuEventSynchronize");
  CU(cuEventDestroy, "cuEventDestroy_v2");
  /* CUDA 12.8+ drivers export _v2; older ones only the plain name. */
  if (!missing && !RESOLVE(g.cuda, g.cuEventElapsedTime, "cuEventElapsedTime_v2"))
    CU(cuEventElapsedTime, "cuEventElapsedTime");
#undef CU
  RESOLVE(g.cuda, g.cuGetErrorName, "cuGetErrorName");
  RESOLVE(g.cuda, g.cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled");
  RESOLVE(g.cuda, g.cuMemcpyDtoD, "cuMemcpyDtoD_v2");
  if (missing) {
    snprintf(g.cu_why, sizeof g.cu_why,
             "no CUDA device: libcuda.so.1 lacks the symbol %s (driver too old?)",
             missing);
    return;
  }
  CUresult r = g.cuInit(0);
  if (r != 0) {
    snprintf(g.cu_why, sizeof g.cu_why, "no CUDA device: cuInit failed: %s (%d)",
             cu_error_name(r), r);
    return;
  }
  g.cuDriverGetVersion(&g.driver_version);
  r = g.cuDeviceGetCount(&g.ndevices);
  if (r != 0) {
    snprintf(g.cu_why, sizeof g.cu_why,
             "no CUDA device: cuDeviceGetCount failed: %s (%d)", cu_error_name(r),
             r);
    return;
  }
  if (g.ndevices == 0) {
    snprintf(g.cu_why, sizeof g.cu_why,
             "no CUDA device: the driver reports 0 devices");
    return;
  }
  r = g.cuDeviceGet(&g.dev, 0);
  if (r != 0) {
    snprintf(g.cu_why, sizeof g.cu_why, "no CUDA device: cuDeviceGet failed: %s (%d)",
             cu_error_name(r), r);
    return;
  }
  if (g.cuDeviceGetName(g.dev_name, (int)sizeof g.dev_name - 1, g.dev) != 0)
    snprintf(g.dev_name, sizeof g.dev_name, "CUDA device 0");
  g.cuDeviceGetAttribute(&g.cc_major, TC_CU_ATTR_CC_MAJOR, g.dev);
  g.cuDeviceGetAttribute(&g.cc_minor, TC_CU_ATTR_CC_MINOR, g.dev);
}

static int cu_ready(void) {
  pthread_once(&g.cu_once, cu_load);
  return g.cu_why[0] == 0;
}

static void ctx_load(void) { g.ctx_err = g.cuDevicePrimaryCtxRetain(&g.ctx, g.dev); }

/* ---- compiling ----------------------------------------------------------- */

tc_status tc_cuda_compile(const char *source, const char *arch, char **ptx,
                          tc_str *err) {
  if (ptx) *ptx = NULL;
  if (!source || !ptx) {
    tc_str_printf(err, "tc_cuda_compile: source and ptx must not be NULL");
    return TC_ERR_ARGUMENT;
  }
  tc_target_info ti;
  if (tc_target_info_make(TC_TARGET_CUDA, arch, &ti, err) != TC_OK) return TC_ERR_ARGUMENT;
  arch = ti.arch;
  if (!nvrtc_ready()) {
    tc_str_printf(err, "cannot compile CUDA: %s", g.nvrtc_why);
    return TC_ERR_UNSUPPORTED;
  }
  char archopt[96];
  snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
  const char *opts[] = {archopt, "-default-device", "--std=c++17"};

  nvrtcProgram prog = NULL;
  nvrtcResult r =
      g.nvrtcCreateProgram(&prog, source, "tilec_kernel.cu", 0, NULL, NULL);
  if (r != 0) {
    tc_str_printf(err, "nvrtcCreateProgram failed: %s (%d)", nvrtc_error_name(r), r);
    return TC_ERR_COMPILE;
  }
  r = g.nvrtcCompileProgram(prog, (int)(sizeof opts / sizeof opts[0]), opts);
  if (r != 0) {
    tc_str_printf(err, "NVRTC compilation for %s failed: %s (%d)", arch,
        nvrtc_error_name(r), r);
    size_t n = 0;
    if (g.nvrtcGetProgramLogSize(prog, &n) == 0 && n > 1) {
      char *log = tc_xmalloc(n + 1);
      if (g.nvrtcGetProgramLog(prog, log) == 0) {
        log[n] = 0;
        tc_str_printf(err, "\nNVRTC log:\n%s", log);
      }
      free(log);
    }
    g.nvrtcDestroyProgram(&prog);
    return TC_ERR_COMPILE;
  }
  size_t n = 0;
  r = g.nvrtcGetPTXSize(prog, &n);
  if (r != 0 || n == 0) {
    tc_str_printf(err, "nvrtcGetPTXSize failed: %s (%d)", nvrtc_error_name(r), r);
    g.nvrtcDestroyProgram(&prog);
    return TC_ERR_COMPILE;
  }
  char *out = tc_xmalloc(n + 1);
  r = g.nvrtcGetPTX(prog, out);
  g.nvrtcDestroyProgram(&prog);
  if (r != 0) {
    free(out);
    tc_str_printf(err, "nvrtcGetPTX failed: %s (%d)", nvrtc_error_name(r), r);
    return TC_ERR_COMPILE;
  }
  out[n] = 0;
  *ptx = out;
  return TC_OK;
}

int tc_cuda_nvrtc_version(int *major, int *minor) {
  *major = *minor = 0;
  return nvrtc_ready() && g.nvrtcVersion(major, minor) == 0;
}

/* ---- availability --------------------------------------------------------- */

int tc_cuda_available(tc_str *msg) {
  if (cu_ready()) return 1;
  tc_str_printf(msg, "%s", g.cu_why);
  return 0;
}

void tc_cuda_describe(tc_str *out) {
  if (!out) return;
  if (nvrtc_ready()) {
    int maj = 0, min = 0;
    g.nvrtcVersion(&maj, &min);
    tc_str_printf(out, "CUDA compiler: NVRTC %d.%d (%s)\n", maj, min,
                  g.nvrtc_path);
  } else {
    tc_str_printf(out, "CUDA compiler: unavailable: %s\n", g.nvrtc_why);
  }
  if (cu_ready()) {
    tc_str_printf(out, "CUDA driver: %d.%d, %d device%s\n",
                  g.driver_version / 1000, (g.driver_version % 1000) / 10,
                  g.ndevices, g.ndevices == 1 ? "" : "s");
    tc_str_printf(out, "CUDA device 0: %s (sm_%d%d)\n", g.dev_name, g.cc_major,
                  g.cc_minor);
  } else {
    tc_str_printf(out, "CUDA driver: %s\n", g.cu_why);
  }
}

/* ---- running -------------------------------------------------------------- */

#define CU_CHECK(call, what)                                              \
  do {                                                                    \
    CUresult r_ = (call);                                                 \
    if (r_ != 0) {                                                        \
      tc_str_printf(err, "%s failed: %s (%d)", (what), cu_error_name(r_), r_);      \
      st = TC_ERR_RUNTIME;                                                \
      goto done;                                                          \
    }                                                                     \
  } while (0)

/* Launches of a launch's timed repeats in flight between two waits: each
 * has its own pair of events, so 2 x this many events are created once per
 * run, and a wait every this many launches reads their times. */
enum { CU_TIMED_BATCH = 32 };

/* Records a, launches fn with launch's geometry on the default stream,
 * records b.  TC_ERR_RUNTIME with a message naming the launch on failure. */
static tc_status cu_launch_between(CUfunction fn, const tc_launch *launch, void **params,
                                   CUevent a, CUevent b, const char *kernel_name, tc_str *err) {
  tc_status st = TC_OK;
  CU_CHECK(g.cuEventRecord(a, NULL), "cuEventRecord");
  {
    CUresult r = g.cuLaunchKernel(
        fn, (unsigned)launch->grid[0], (unsigned)launch->grid[1],
        (unsigned)launch->grid[2], (unsigned)launch->block[0],
        (unsigned)launch->block[1], (unsigned)launch->block[2],
        (unsigned)launch->dyn_smem, NULL, params, NULL);
    if (r != 0) {
      tc_str_printf(err, "cuLaunchKernel failed: %s (%d) (kernel '%s', grid %zux%zux%zu, "
          "block %zux%zux%zu, %zu bytes dynamic shared memory)",
          cu_error_name(r), r, kernel_name, launch->grid[0], launch->grid[1],
          launch->grid[2], launch->block[0], launch->block[1], launch->block[2],
          launch->dyn_smem);
      st = TC_ERR_RUNTIME;
      goto done;
    }
  }
  CU_CHECK(g.cuEventRecord(b, NULL), "cuEventRecord");
done:
  return st;
}

/* The time between two completed events, in ms. */
static tc_status cu_elapsed(CUevent a, CUevent b, double *ms, tc_str *err) {
  tc_status st = TC_OK;
  float t = 0;
  CU_CHECK(g.cuEventElapsedTime(&t, a, b), "cuEventElapsedTime");
  *ms = t;
done:
  return st;
}

/* tc_cuda_run, or tc_cuda_run_ptx when given_ptx is not NULL. */
static tc_status cuda_run(const char *source, const char *given_ptx, const char *kernel_name,
                          const char *arch, tc_rt_buffer *bufs, int nbufs,
                          const tc_launch *launch, double *ms, tc_str *err) {
  if (ms) *ms = 0;
  if ((!source && !given_ptx) || !kernel_name || !launch || nbufs < 0 || (nbufs > 0 && !bufs)) {
    tc_str_printf(err, "tc_cuda_run: missing source, kernel name, launch or buffers");
    return TC_ERR_ARGUMENT;
  }
  if (tc_launch_check_repeat(launch, kernel_name, err)) return TC_ERR_ARGUMENT;
  /* the tensor maps first: their rules need no device (tmap.c) */
  int ntmaps = launch->ntmaps;
  if (ntmaps < 0) {
    tc_str_printf(err, "launch of '%s': %d tensor maps", kernel_name, ntmaps);
    return TC_ERR_ARGUMENT;
  }
  if (tc_tmap_check_all(launch->tmaps, ntmaps, nbufs, err)) return TC_ERR_ARGUMENT;
  for (int i = 0; i < ntmaps; i++) {
    const tc_rt_tmap *t = &launch->tmaps[i];
    uint64_t span = tc_tmap_span_bytes(t);
    if (span > bufs[t->buffer].bytes) {
      tc_str_printf(err, "tensor map %d: it spans %llu bytes but buffer %d of '%s' has %zu",
                    i, (unsigned long long)span, t->buffer, kernel_name, bufs[t->buffer].bytes);
      return TC_ERR_ARGUMENT;
    }
  }
  if (!cu_ready()) {
    tc_str_printf(err, "%s", g.cu_why);
    return TC_ERR_NO_DEVICE;
  }
  tc_launch cut; /* a persistent kernel: at most one block per multiprocessor */
  if (launch->persistent > 0) {
    int sms = 0;
    g.cuDeviceGetAttribute(&sms, TC_CU_ATTR_MULTIPROCESSOR_COUNT, g.dev);
    cut = *launch;
    cut.grid[0] = tc_launch_persistent_grid(launch->grid[0], sms, launch->persistent);
    launch = &cut;
  }
  if (ntmaps > 0 && !g.cuTensorMapEncodeTiled) {
    tc_str_printf(err, "launch of '%s': the kernel takes %d tensor map%s (TMA), but this driver "
                  "(%d.%d) lacks cuTensorMapEncodeTiled; tensor maps need a CUDA 12.0 or newer "
                  "driver", kernel_name, ntmaps, ntmaps == 1 ? "" : "s",
                  g.driver_version / 1000, (g.driver_version % 1000) / 10);
    return TC_ERR_UNSUPPORTED;
  }
  size_t threads = 1;
  for (int d = 0; d < 3; d++) {
    if (launch->grid[d] == 0 || launch->block[d] == 0 ||
        launch->grid[d] > 0x7fffffffu || launch->block[d] > 0xffffu) {
      tc_str_printf(err, "launch of '%s': bad grid %zux%zux%zu / block %zux%zux%zu",
          kernel_name, launch->grid[0], launch->grid[1], launch->grid[2],
          launch->block[0], launch->block[1], launch->block[2]);
      return TC_ERR_ARGUMENT;
    }
    threads *= launch->block[d];
  }
  int max_threads = 0;
  if (g.cuDeviceGetAttribute(&max_threads, TC_CU_ATTR_MAX_THREADS_PER_BLOCK,
                             g.dev) == 0 &&
      max_threads > 0 && threads > (size_t)max_threads) {
    tc_str_printf(err, "launch of '%s': block %zux%zux%zu has %zu threads, which exceeds "
        "the max block size %d of %s", kernel_name, launch->block[0],
        launch->block[1], launch->block[2], threads, max_threads, g.dev_name);
    return TC_ERR_RUNTIME;
  }
  for (int i = 0; i < nbufs; i++) {
    if (bufs[i].bytes > 0 && !bufs[i].host) {
      tc_str_printf(err, "buffer %d of '%s' has %zu bytes but no host data", i,
          kernel_name, bufs[i].bytes);
      return TC_ERR_ARGUMENT;
    }
  }
  char dev_arch[32];
  if (!arch) {
    snprintf(dev_arch, sizeof dev_arch, "sm_%d%d", g.cc_major, g.cc_minor);
    arch = dev_arch;
  }

  pthread_once(&g.ctx_once, ctx_load);
  if (g.ctx_err != 0) {
    tc_str_printf(err, "cuDevicePrimaryCtxRetain failed: %s (%d)",
        cu_error_name(g.ctx_err), g.ctx_err);
    return TC_ERR_RUNTIME;
  }

  char *ptx = NULL;
  tc_status st = given_ptx ? TC_OK : tc_cuda_compile(source, arch, &ptx, err);
  if (st != TC_OK) return st;
  if (given_ptx) ptx = tc_xstrdup(given_ptx);

  CUmodule mod = NULL;
  CUfunction fn = NULL;
  CUevent ev[2 * CU_TIMED_BATCH] = {NULL};
  int batch = launch->repeat < 1 ? 1 : launch->repeat < CU_TIMED_BATCH ? launch->repeat
                                                                       : CU_TIMED_BATCH;
  CUdeviceptr *dptr = tc_xcalloc((size_t)(nbufs ? nbufs : 1), sizeof *dptr);
  int nparams = nbufs + ntmaps;
  void **params = tc_xcalloc((size_t)(nparams ? nparams : 1), sizeof *params);
  /* the CUtensorMaps, passed by value after the buffers */
  unsigned char *tmaps =
      ntmaps ? aligned_alloc(TC_CU_TMAP_ALIGN, (size_t)ntmaps * TC_CU_TMAP_BYTES) : NULL;
  if (ntmaps && !tmaps) {
    tc_str_printf(err, "out of memory for %d tensor maps", ntmaps);
    st = TC_ERR_RUNTIME;
    goto done;
  }

  CU_CHECK(g.cuCtxSetCurrent(g.ctx), "cuCtxSetCurrent");

  {
    char jit_log[8192] = "";
    int opts[2] = {TC_CU_JIT_ERROR_LOG_BUFFER,
                   TC_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[2] = {jit_log, (void *)(uintptr_t)sizeof jit_log};
    CUresult r = g.cuModuleLoadDataEx(&mod, ptx, 2, opts, vals);
    if (r != 0) {
      mod = NULL;
      tc_str_printf(err, "cuModuleLoadDataEx failed: %s (%d) loading PTX for %s",
          cu_error_name(r), r, arch);
      jit_log[sizeof jit_log - 1] = 0;
      if (jit_log[0]) tc_str_printf(err, "\nJIT log:\n%s", jit_log);
      st = TC_ERR_COMPILE;
      goto done;
    }
  }
  {
    CUresult r = g.cuModuleGetFunction(&fn, mod, kernel_name);
    if (r != 0) {
      tc_str_printf(err, "cuModuleGetFunction failed: %s (%d): no kernel named '%s' "
          "(is it extern \"C\"?)", cu_error_name(r), r, kernel_name);
      st = TC_ERR_COMPILE;
      goto done;
    }
  }
  if (launch->dyn_smem > 0) {
    /* The launch fails when dyn_smem exceeds the function's
     * MAX_DYNAMIC_SHARED_SIZE_BYTES, 48 KiB less its static shared memory
     * until raised: compare with the function's own values rather than
     * 48 KiB (a kernel with bulk copies has 1 KiB of static shared memory
     * although its mbarriers take a few bytes: ptxas pads it to the
     * alignment of tc_smem). */
    int stat = 0, cur = 48 * 1024, optin = 0;
    g.cuFuncGetAttribute(&stat, TC_CU_FUNC_ATTR_SHARED_SIZE, fn);
    if (g.cuFuncGetAttribute(&cur, TC_CU_FUNC_ATTR_MAX_DYN_SMEM, fn) != 0) cur = 48 * 1024 - stat;
    g.cuDeviceGetAttribute(&optin, TC_CU_ATTR_MAX_SMEM_OPTIN, g.dev);
    tc_str why;
    tc_str_init(&why);
    long set = tc_cuda_dyn_smem_limit(launch->dyn_smem, stat, cur, optin, &why);
    if (set < 0) {
      tc_str_printf(err, "launch of '%s': %s", kernel_name, tc_str_cstr(&why));
      tc_str_free(&why);
      st = TC_ERR_RUNTIME;
      goto done;
    }
    tc_str_free(&why);
    CUresult r = set > 0 ? g.cuFuncSetAttribute(fn, TC_CU_FUNC_ATTR_MAX_DYN_SMEM, (int)set) : 0;
    if (r != 0) {
      tc_str_printf(err, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES = %ld) failed: "
          "%s (%d); the function has %d bytes of static shared memory and the device allows "
          "at most %d bytes per block", set, cu_error_name(r), r, stat, optin);
      st = TC_ERR_RUNTIME;
      goto done;
    }
  }

  for (int i = 0; i < nbufs; i++) {
    size_t n = bufs[i].bytes;
    if (bufs[i].by_value) { /* a scalar: cuLaunchKernel reads the value there */
      params[i] = bufs[i].host;
      continue;
    }
    CU_CHECK(g.cuMemAlloc(&dptr[i], n > 0 ? n : 1), "cuMemAlloc");
    if (n > 0) CU_CHECK(g.cuMemcpyHtoD(dptr[i], bufs[i].host, n), "cuMemcpyHtoD");
    params[i] = &dptr[i];
  }
  for (int i = 0; i < ntmaps; i++) {
    const tc_rt_tmap *t = &launch->tmaps[i];
    tc_cu_tmap_args a;
    tc_tmap_encode_args(t, &a);
    void *map = tmaps + (size_t)i * TC_CU_TMAP_BYTES;
    CUresult r = g.cuTensorMapEncodeTiled(map, a.data_type, a.rank, (void *)(uintptr_t)dptr[t->buffer],
                                          a.dims, a.strides, a.box, a.elem_strides, a.interleave,
                                          a.swizzle, a.l2_promotion, a.oob_fill);
    if (r != 0) {
      tc_str_printf(err, "tensor map %d (buffer %d of '%s'): cuTensorMapEncodeTiled failed: %s (%d)",
                    i, t->buffer, kernel_name, cu_error_name(r), r);
      st = r == 1 ? TC_ERR_ARGUMENT : TC_ERR_RUNTIME; /* 1: CUDA_ERROR_INVALID_VALUE */
      goto done;
    }
    params[nbufs + i] = map;
  }
  for (int i = 0; i < 2 * batch; i++) CU_CHECK(g.cuEventCreate(&ev[i], 0), "cuEventCreate");
  /* the first launch: its time, then its results */
  void **args = nparams ? params : NULL;
  if ((st = cu_launch_between(fn, launch, args, ev[0], ev[1], kernel_name, err))) goto done;
  CU_CHECK(g.cuEventSynchronize(ev[1]), "running the kernel (cuEventSynchronize)");
  CU_CHECK(g.cuCtxSynchronize(), "running the kernel (cuCtxSynchronize)");
  if (ms && (st = cu_elapsed(ev[0], ev[1], ms, err))) goto done;
  for (int i = 0; i < nbufs; i++) {
    if (!bufs[i].copy_back || bufs[i].bytes == 0 || bufs[i].by_value) continue;
    CU_CHECK(g.cuMemcpyDtoH(bufs[i].host, dptr[i], bufs[i].bytes), "cuMemcpyDtoH");
  }
  /* the timed repeats, back to back, each between its own two events */
  for (int first = 0; first < launch->repeat; first += batch) {
    int n = launch->repeat - first < batch ? launch->repeat - first : batch;
    for (int j = 0; j < n; j++)
      if ((st = cu_launch_between(fn, launch, args, ev[2 * j], ev[2 * j + 1], kernel_name, err))) {
        tc_str_printf(err, " in timed launch %d of %d", first + j + 1, launch->repeat);
        goto done;
      }
    CU_CHECK(g.cuEventSynchronize(ev[2 * n - 1]),
             "running the timed launches (cuEventSynchronize)");
    for (int j = 0; j < n; j++)
      if ((st = cu_elapsed(ev[2 * j], ev[2 * j + 1], &launch->repeat_ms[first + j], err)))
        goto done;
  }
  if (launch->repeat > 0)
    CU_CHECK(g.cuCtxSynchronize(), "running the timed launches (cuCtxSynchronize)");

done:
  for (int i = 0; i < 2 * batch; i++)
    if (ev[i]) g.cuEventDestroy(ev[i]);
  for (int i = 0; i < nbufs; i++)
    if (dptr[i]) g.cuMemFree(dptr[i]);
  if (mod) g.cuModuleUnload(mod);
  free(params);
  free(tmaps);
  free(dptr);
  free(ptx);
  return st;
}

long tc_cuda_dyn_smem_limit(size_t dyn, int static_bytes, int cur_max, int optin, tc_str *err) {
  if (dyn > 0x7fffffff) {
    tc_str_printf(err, "dynamic shared memory of %zu bytes is too large", dyn);
    return -1;
  }
  if (static_bytes < 0) static_bytes = 0;
  if (optin > 0 && (long)static_bytes + (long)dyn > optin) {
    tc_str_printf(err, "%zu bytes of dynamic shared memory and %d of static (the compiled "
                  "kernel's) exceed the %d bytes a block may have on this device",
                  dyn, static_bytes, optin);
    return -1;
  }
  return (long)dyn <= (long)cur_max ? 0 : (long)dyn;
}

tc_status tc_cuda_run(const char *source, const char *kernel_name,
                      const char *arch, tc_rt_buffer *bufs, int nbufs,
                      const tc_launch *launch, double *ms, tc_str *err) {
  return cuda_run(source, NULL, kernel_name, arch, bufs, nbufs, launch, ms, err);
}

tc_status tc_cuda_run_ptx(const char *ptx, const char *kernel_name,
                          const char *arch, tc_rt_buffer *bufs, int nbufs,
                          const tc_launch *launch, double *ms, tc_str *err) {
  if (!ptx) {
    tc_str_printf(err, "tc_cuda_run_ptx: ptx is NULL");
    return TC_ERR_ARGUMENT;
  }
  return cuda_run(NULL, ptx, kernel_name, arch, bufs, nbufs, launch, ms, err);
}

/* ---- a device-to-device copy, timed (the bandwidth baseline) -------------- */

tc_status tc_cuda_time_d2d(size_t bytes, int runs, double *ms, tc_str *err) {
  if (bytes == 0 || runs < 1 || !ms) {
    tc_str_printf(err, "tc_cuda_time_d2d: need bytes > 0, runs >= 1 and ms (got %zu bytes, %d runs)",
                  bytes, runs);
    return TC_ERR_ARGUMENT;
  }
  for (int i = 0; i < runs; i++) ms[i] = 0;
  if (!cu_ready()) {
    tc_str_printf(err, "%s", g.cu_why);
    return TC_ERR_NO_DEVICE;
  }
  if (!g.cuMemcpyDtoD) {
    tc_str_printf(err, "this CUDA driver (%d.%d) lacks cuMemcpyDtoD_v2", g.driver_version / 1000,
                  (g.driver_version % 1000) / 10);
    return TC_ERR_UNSUPPORTED;
  }
  pthread_once(&g.ctx_once, ctx_load);
  if (g.ctx_err != 0) {
    tc_str_printf(err, "cuDevicePrimaryCtxRetain failed: %s (%d)", cu_error_name(g.ctx_err),
                  g.ctx_err);
    return TC_ERR_RUNTIME;
  }
  tc_status st = TC_OK;
  CUdeviceptr src = 0, dst = 0;
  CUevent e0 = NULL, e1 = NULL;
  CU_CHECK(g.cuCtxSetCurrent(g.ctx), "cuCtxSetCurrent");
  {
    CUresult r = g.cuMemAlloc(&src, bytes);
    if (r == 0) r = g.cuMemAlloc(&dst, bytes);
    if (r != 0) {
      tc_str_printf(err, "cuMemAlloc of 2 x %zu bytes for the device-to-device copy failed: %s (%d)",
                    bytes, cu_error_name(r), r);
      st = TC_ERR_RUNTIME;
      goto done;
    }
  }
  CU_CHECK(g.cuEventCreate(&e0, 0), "cuEventCreate");
  CU_CHECK(g.cuEventCreate(&e1, 0), "cuEventCreate");
  /* one untimed copy first: the pages are touched, the copy engine warm */
  CU_CHECK(g.cuMemcpyDtoD(dst, src, bytes), "cuMemcpyDtoD");
  CU_CHECK(g.cuCtxSynchronize(), "cuMemcpyDtoD (cuCtxSynchronize)");
  for (int i = 0; i < runs; i++) {
    float t = 0;
    CU_CHECK(g.cuEventRecord(e0, NULL), "cuEventRecord");
    CU_CHECK(g.cuMemcpyDtoD(dst, src, bytes), "cuMemcpyDtoD");
    CU_CHECK(g.cuEventRecord(e1, NULL), "cuEventRecord");
    CU_CHECK(g.cuEventSynchronize(e1), "cuMemcpyDtoD (cuEventSynchronize)");
    CU_CHECK(g.cuEventElapsedTime(&t, e0, e1), "cuEventElapsedTime");
    ms[i] = t;
  }

done:
  if (e0) g.cuEventDestroy(e0);
  if (e1) g.cuEventDestroy(e1);
  if (src) g.cuMemFree(src);
  if (dst) g.cuMemFree(dst);
  return st;
}
