/* hip_run.c - running HIP kernels on an AMD GPU: the HIP runtime
 * (libamdhip64) loaded with dlopen at first use, device 0 and what it
 * reports (gcnArchName, LDS, wavefront, compute units), code objects of
 * `hipcc --genco` (hip.c) loaded with hipModuleLoadData, the argument
 * buffer packed as the kernel's signature says (hip_args.c), launches with
 * hipModuleLaunchKernel timed with HIP events, and the copies in and out.
 *
 * Shaped like cuda.c: no HIP header is needed to build, the functions are
 * resolved with dlsym, and where the library or the GPU is missing every
 * entry point says so ("no AMD GPU: ...").  The loaded library and device 0
 * are the process-wide state of this file, filled in once (pthread_once),
 * so every function may be called from any thread.
 *
 * The values of the HIP API used without its header (attribute numbers,
 * the place of gcnArchName in hipDeviceProp_t) are the TC_HIP_* constants
 * of runtime.h; tests/test_hip.c compares them with hip_runtime_api.h
 * where it is installed. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

/* ---- the HIP API, declared here ------------------------------------------- */

typedef int hipError_t; /* hipSuccess == 0 */
typedef struct tc_hip_mod *hipModule_t;
typedef struct tc_hip_fn *hipFunction_t;
typedef struct tc_hip_event *hipEvent_t;
typedef struct tc_hip_stream *hipStream_t;

typedef hipError_t (*hipGetDeviceCount_fn)(int *n);
typedef hipError_t (*hipRuntimeGetVersion_fn)(int *v);
typedef const char *(*hipGetErrorName_fn)(hipError_t e);
typedef hipError_t (*hipSetDevice_fn)(int id);
typedef hipError_t (*hipDeviceGet_fn)(int *dev, int ordinal);
typedef hipError_t (*hipDeviceGetName_fn)(char *name, int len, int dev);
typedef hipError_t (*hipDeviceGetAttribute_fn)(int *v, int attr, int id);
typedef hipError_t (*hipGetDeviceProperties_fn)(void *props, int id);
typedef hipError_t (*hipModuleLoadData_fn)(hipModule_t *m, const void *image);
typedef hipError_t (*hipModuleGetFunction_fn)(hipFunction_t *f, hipModule_t m, const char *name);
typedef hipError_t (*hipModuleUnload_fn)(hipModule_t m);
typedef hipError_t (*hipFuncGetAttribute_fn)(int *v, int attr, hipFunction_t f);
typedef hipError_t (*hipModuleLaunchKernel_fn)(hipFunction_t f, unsigned gx, unsigned gy,
                                               unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                               unsigned lds, hipStream_t s, void **params,
                                               void **extra);
typedef hipError_t (*hipMalloc_fn)(void **p, size_t bytes);
typedef hipError_t (*hipFree_fn)(void *p);
typedef hipError_t (*hipMemcpyHtoD_fn)(void *dst, const void *src, size_t bytes);
typedef hipError_t (*hipMemcpyDtoH_fn)(void *dst, const void *src, size_t bytes);
typedef hipError_t (*hipEventCreate_fn)(hipEvent_t *e);
typedef hipError_t (*hipEventRecord_fn)(hipEvent_t e, hipStream_t s);
typedef hipError_t (*hipEventSynchronize_fn)(hipEvent_t e);
typedef hipError_t (*hipEventElapsedTime_fn)(float *ms, hipEvent_t a, hipEvent_t b);
typedef hipError_t (*hipEventDestroy_fn)(hipEvent_t e);
typedef hipError_t (*hipDeviceSynchronize_fn)(void);

/* ---- the one process-wide state -------------------------------------------- */

static struct {
  pthread_once_t once;
  void *lib;
  char why[1536]; /* "no AMD GPU: ..." ("" when usable) */
  int ndevices;
  tc_hip_device dev;
  hipGetDeviceCount_fn hipGetDeviceCount;
  hipRuntimeGetVersion_fn hipRuntimeGetVersion; /* optional */
  hipGetErrorName_fn hipGetErrorName;           /* optional */
  hipSetDevice_fn hipSetDevice;
  hipDeviceGet_fn hipDeviceGet;
  hipDeviceGetName_fn hipDeviceGetName;
  hipDeviceGetAttribute_fn hipDeviceGetAttribute;
  hipGetDeviceProperties_fn props_r0600, props_r0000; /* optional: one gives gcnArchName */
  hipModuleLoadData_fn hipModuleLoadData;
  hipModuleGetFunction_fn hipModuleGetFunction;
  hipModuleUnload_fn hipModuleUnload;
  hipFuncGetAttribute_fn hipFuncGetAttribute; /* optional */
  hipModuleLaunchKernel_fn hipModuleLaunchKernel;
  hipMalloc_fn hipMalloc;
  hipFree_fn hipFree;
  hipMemcpyHtoD_fn hipMemcpyHtoD;
  hipMemcpyDtoH_fn hipMemcpyDtoH;
  hipEventCreate_fn hipEventCreate;
  hipEventRecord_fn hipEventRecord;
  hipEventSynchronize_fn hipEventSynchronize;
  hipEventElapsedTime_fn hipEventElapsedTime;
  hipEventDestroy_fn hipEventDestroy;
  hipDeviceSynchronize_fn hipDeviceSynchronize;
} g = {.once = PTHREAD_ONCE_INIT};

static int resolve(void *lib, const char *name, void *fnptr, size_t size) {
  void *p = dlsym(lib, name);
  if (!p) return 0;
  memcpy(fnptr, &p, size);
  return 1;
}
#define RESOLVE(field, name) resolve(g.lib, (name), &(field), sizeof(field))

static const char *error_name(hipError_t r) {
  const char *s = g.hipGetErrorName ? g.hipGetErrorName(r) : NULL;
  return s && *s ? s : "hipError";
}

/* "MAJOR.MINOR.PATCH" of a hipRuntimeGetVersion number (50221153). */
static void version_text(int v, char *buf, size_t cap) {
  snprintf(buf, cap, "%d.%d.%d", v / 10000000, (v / 100000) % 100, v % 100000);
}

/* ---- loading -------------------------------------------------------------------- */

/* dlopens the HIP runtime into g.lib and g.dev.library, or says why not
 * in g.why: $TILEC_HIP_RUNTIME alone when it is set, else the usual
 * places. */
static void open_library(void) {
  const char *env = getenv("TILEC_HIP_RUNTIME");
  char rocm_lib[512] = "";
  const char *rocm = getenv("ROCM_PATH");
  if (rocm && *rocm) snprintf(rocm_lib, sizeof rocm_lib, "%s/lib/libamdhip64.so", rocm);
  const char *usual[] = {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
                         "libamdhip64.so.5", "/opt/rocm/lib/libamdhip64.so", rocm_lib};
  const char *given[] = {env};
  int use_env = env && *env;
  const char **tries = use_env ? given : usual;
  size_t ntries = use_env ? 1 : sizeof usual / sizeof *usual;
  char first_error[512] = "";
  tc_str tried;
  tc_str_init(&tried);
  for (size_t i = 0; i < ntries && !g.lib; i++) {
    if (!tries[i][0]) continue;
    tc_str_printf(&tried, "%s%s", tried.len ? ", " : "", tries[i]);
    g.lib = dlopen(tries[i], RTLD_NOW | RTLD_LOCAL);
    if (g.lib) {
      snprintf(g.dev.library, sizeof g.dev.library, "%s", tries[i]);
    } else {
      const char *e = dlerror();
      if (!first_error[0] && e) snprintf(first_error, sizeof first_error, "%s", e);
    }
  }
  if (!g.lib)
    snprintf(g.why, sizeof g.why, "no AMD GPU: the HIP runtime (libamdhip64) cannot be loaded "
             "(tried %s: %s); %s", tc_str_cstr(&tried), first_error,
             use_env ? "TILEC_HIP_RUNTIME names it: unset it to look on the loader path, in "
                       "/opt/rocm/lib and $ROCM_PATH/lib"
                     : "install ROCm (Debian 12: apt-get install libamdhip64-dev) or set "
                       "ROCM_PATH to where it is");
  tc_str_free(&tried);
}

/* gcnArchName of device 0 into g.dev.target_id and its processor into
 * g.dev.arch.  The field is read at its place in the hipDeviceProp_t of
 * the call the library has; should that not hold a "gfx" name (a layout
 * tilec does not know), the first "gfx..." string of the struct is taken. */
static void read_arch(void) {
  unsigned char *props = calloc(1, TC_HIP_PROPS_BYTES);
  if (!props) return;
  size_t at = 0;
  hipError_t r = -1;
  if (g.props_r0600) r = g.props_r0600(props, 0), at = TC_HIP_PROPS_ARCH_NAME_R0600;
  else if (g.props_r0000) r = g.props_r0000(props, 0), at = TC_HIP_PROPS_ARCH_NAME_R0000;
  if (r == 0) {
    const char *name = (const char *)props + at;
    if (strncmp(name, "gfx", 3) != 0) {
      name = NULL;
      for (size_t i = 0; i + 4 < TC_HIP_PROPS_BYTES && !name; i++)
        if ((i == 0 || props[i - 1] == 0) && memcmp(props + i, "gfx", 3) == 0 &&
            props[i + 3] >= '0' && props[i + 3] <= '9')
          name = (const char *)props + i;
    }
    if (name) {
      snprintf(g.dev.target_id, sizeof g.dev.target_id, "%.*s",
               (int)strnlen(name, TC_HIP_PROPS_BYTES - (size_t)(name - (const char *)props)), name);
      snprintf(g.dev.arch, sizeof g.dev.arch, "%.*s", (int)strcspn(g.dev.target_id, ":"),
               g.dev.target_id);
    }
  }
  free(props);
}

/* Why hipGetDeviceCount found no device, with what /dev/kfd says. */
static void no_device(const char *what) {
  const char *kfd = access("/dev/kfd", F_OK) != 0
                        ? "/dev/kfd not found: no amdgpu kernel driver or no AMD GPU on this machine"
                    : access("/dev/kfd", R_OK | W_OK) != 0
                        ? "/dev/kfd exists but this user cannot open it: add the user to the "
                          "'render' and 'video' groups"
                        : "/dev/kfd exists";
  char v[32];
  version_text(g.dev.runtime_version, v, sizeof v);
  snprintf(g.why, sizeof g.why, "no AMD GPU: %s; %s (HIP runtime %s, %s)", what, kfd, v,
           g.dev.library);
}

static void load(void) {
  open_library();
  if (!g.lib) return;
  const char *missing = NULL;
#define NEED(field, name) \
  if (!missing && !RESOLVE(g.field, name)) missing = name
  NEED(hipGetDeviceCount, "hipGetDeviceCount");
  NEED(hipSetDevice, "hipSetDevice");
  NEED(hipDeviceGet, "hipDeviceGet");
  NEED(hipDeviceGetName, "hipDeviceGetName");
  NEED(hipDeviceGetAttribute, "hipDeviceGetAttribute");
  NEED(hipModuleLoadData, "hipModuleLoadData");
  NEED(hipModuleGetFunction, "hipModuleGetFunction");
  NEED(hipModuleUnload, "hipModuleUnload");
  NEED(hipModuleLaunchKernel, "hipModuleLaunchKernel");
  NEED(hipMalloc, "hipMalloc");
  NEED(hipFree, "hipFree");
  NEED(hipMemcpyHtoD, "hipMemcpyHtoD");
  NEED(hipMemcpyDtoH, "hipMemcpyDtoH");
  NEED(hipEventCreate, "hipEventCreate");
  NEED(hipEventRecord, "hipEventRecord");
  NEED(hipEventSynchronize, "hipEventSynchronize");
  NEED(hipEventElapsedTime, "hipEventElapsedTime");
  NEED(hipEventDestroy, "hipEventDestroy");
  NEED(hipDeviceSynchronize, "hipDeviceSynchronize");
#undef NEED
  RESOLVE(g.hipRuntimeGetVersion, "hipRuntimeGetVersion");
  RESOLVE(g.hipGetErrorName, "hipGetErrorName");
  RESOLVE(g.hipFuncGetAttribute, "hipFuncGetAttribute");
  RESOLVE(g.props_r0600, "hipGetDevicePropertiesR0600");
  RESOLVE(g.props_r0000, "hipGetDeviceProperties");
  if (missing) {
    snprintf(g.why, sizeof g.why, "no AMD GPU: the HIP runtime %s lacks %s (ROCm too old?); "
             "install ROCm 5.2 or newer", g.dev.library, missing);
    return;
  }
  if (g.hipRuntimeGetVersion) g.hipRuntimeGetVersion(&g.dev.runtime_version);
  hipError_t r = g.hipGetDeviceCount(&g.ndevices);
  if (r != 0) {
    char what[256];
    snprintf(what, sizeof what, "hipGetDeviceCount failed: %s (%d)", error_name(r), r);
    no_device(what);
    return;
  }
  if (g.ndevices <= 0) {
    no_device("hipGetDeviceCount reports 0 devices");
    return;
  }
  int dev = 0;
  if ((r = g.hipSetDevice(0)) != 0 || (r = g.hipDeviceGet(&dev, 0)) != 0) {
    snprintf(g.why, sizeof g.why, "no AMD GPU: device 0 cannot be used: %s (%d)", error_name(r), r);
    return;
  }
  if (g.hipDeviceGetName(g.dev.name, (int)sizeof g.dev.name - 1, dev) != 0) g.dev.name[0] = 0;
  g.hipDeviceGetAttribute(&g.dev.lds_bytes, TC_HIP_ATTR_MAX_SHARED_PER_BLOCK, 0);
  g.hipDeviceGetAttribute(&g.dev.warp, TC_HIP_ATTR_WARP_SIZE, 0);
  g.hipDeviceGetAttribute(&g.dev.compute_units, TC_HIP_ATTR_MULTIPROCESSOR_COUNT, 0);
  g.hipDeviceGetAttribute(&g.dev.max_threads, TC_HIP_ATTR_MAX_THREADS_PER_BLOCK, 0);
  read_arch();
  if (!g.dev.name[0]) /* older runtimes leave the marketing name empty */
    snprintf(g.dev.name, sizeof g.dev.name, "AMD GPU %s", g.dev.arch[0] ? g.dev.arch : "0");
  if (!g.dev.arch[0])
    snprintf(g.why, sizeof g.why, "no AMD GPU: %s does not say its architecture "
             "(gcnArchName); the HIP runtime %s is not one tilec knows", g.dev.name,
             g.dev.library);
}

static int ready(void) {
  pthread_once(&g.once, load);
  return g.why[0] == 0;
}

/* ---- the device ------------------------------------------------------------------ */

int tc_hip_available(tc_str *msg) {
  if (ready()) return 1;
  if (msg) tc_str_printf(msg, "%s", g.why);
  return 0;
}

int tc_hip_device_get(tc_hip_device *d, tc_str *msg) {
  if (!tc_hip_available(msg)) return 0;
  *d = g.dev;
  return 1;
}

const char *tc_hip_device_arch(void) { return ready() ? g.dev.arch : NULL; }

void tc_hip_describe_runtime(tc_str *out) {
  int usable = ready();
  char v[32];
  version_text(g.dev.runtime_version, v, sizeof v);
  if (g.lib) tc_str_printf(out, "HIP runtime: %s (%s)\n", v, g.dev.library);
  if (usable)
    tc_str_printf(out, "HIP device: %s (%s, %d compute units, %d bytes of LDS per work-group, "
                  "wavefront %d; device 0 of %d)\n", g.dev.name, g.dev.target_id,
                  g.dev.compute_units, g.dev.lds_bytes, g.dev.warp, g.ndevices);
  else
    tc_str_printf(out, "HIP device: %s\n", g.why);
}

/* ---- errors ----------------------------------------------------------------------- */

/* What to do about error r of a step (none: ""). */
static const char *hint(hipError_t r) {
  switch (r) {
    case 2: /* hipErrorOutOfMemory */
      return "the GPU has not enough free memory for the buffers";
    case 98: case 200: case 209: case 218: case 303:
      /* InvalidDeviceFunction, InvalidImage, NoBinaryForGpu, InvalidKernelFile,
       * SharedObjectInitFailed */
      return "the code object was not made for this GPU: compile for its arch (leave --arch "
             "out to take the device's)";
    case 9: case 701: /* InvalidConfiguration, LaunchOutOfResources */
      return "the kernel needs more registers or LDS than a work-group of this size can have "
             "on this GPU: try a perf config with smaller blocks";
    case 700: case 719: /* IllegalAddress, LaunchFailure */
      return "the kernel faulted (an access out of its buffers?): check it with -V 1 on "
             "--target opencl, whose runtime bounds-checks; later HIP calls of this process may "
             "fail too";
    case TC_HIP_ERROR_NO_DEVICE: case 101: /* NoDevice, InvalidDevice */
      return "the AMD GPU went away (driver reset?)";
    default:
      return "";
  }
}

/* "WHAT failed: NAME (CODE); HINT" into err. */
static void hip_error(tc_str *err, hipError_t r, const char *what) {
  const char *h = hint(r);
  tc_str_printf(err, "%s failed: %s (%d)%s%s", what, error_name(r), r, *h ? "; " : "", h);
}

#define HIP_CHECK(call, what)   \
  do {                          \
    hipError_t r_ = (call);     \
    if (r_ != 0) {              \
      hip_error(err, r_, what); \
      st = TC_ERR_RUNTIME;      \
      goto done;                \
    }                           \
  } while (0)

/* ---- launching ------------------------------------------------------------------- */

/* Launches of a launch's timed repeats in flight between two waits, as on
 * CUDA: each has its own pair of events. */
enum { HIP_TIMED_BATCH = 32 };

/* One launch between events a and b on the null stream, arguments in extra. */
static tc_status launch_between(hipFunction_t fn, const tc_launch *l, void **extra, hipEvent_t a,
                                hipEvent_t b, const char *name, tc_str *err) {
  tc_status st = TC_OK;
  HIP_CHECK(g.hipEventRecord(a, NULL), "hipEventRecord");
  hipError_t r = g.hipModuleLaunchKernel(fn, (unsigned)l->grid[0], (unsigned)l->grid[1],
                                         (unsigned)l->grid[2], (unsigned)l->block[0],
                                         (unsigned)l->block[1], (unsigned)l->block[2],
                                         (unsigned)l->dyn_smem, NULL, NULL, extra);
  if (r != 0) {
    char what[256];
    snprintf(what, sizeof what, "hipModuleLaunchKernel of '%s' (grid %zux%zux%zu, block "
             "%zux%zux%zu, %zu bytes of dynamic LDS)", name, l->grid[0], l->grid[1], l->grid[2],
             l->block[0], l->block[1], l->block[2], l->dyn_smem);
    hip_error(err, r, what);
    return TC_ERR_RUNTIME;
  }
  HIP_CHECK(g.hipEventRecord(b, NULL), "hipEventRecord");
done:
  return st;
}

static tc_status elapsed(hipEvent_t a, hipEvent_t b, double *ms, tc_str *err) {
  tc_status st = TC_OK;
  float t = 0;
  HIP_CHECK(g.hipEventElapsedTime(&t, a, b), "hipEventElapsedTime");
  *ms = t;
done:
  return st;
}

/* The checks that need no device: the launch's shape and buffers. */
static tc_status check_launch(const tc_rt_code *code, const tc_rt_buffer *bufs, int nbufs,
                              const tc_launch *l, tc_str *err) {
  if (tc_launch_check_repeat(l, code->name, err)) return TC_ERR_ARGUMENT;
  if (l->ntmaps) {
    tc_str_printf(err, "launch of '%s': %d tensor maps; tensor maps (TMA) are CUDA's, HIP kernels "
                  "take none", code->name, l->ntmaps);
    return TC_ERR_ARGUMENT;
  }
  for (int d = 0; d < 3; d++) {
    if (l->grid[d] == 0 || l->block[d] == 0 || l->block[d] > 1024 ||
        (uint64_t)l->grid[d] * l->block[d] > UINT32_MAX) {
      tc_str_printf(err, "launch of '%s': bad grid %zux%zux%zu / block %zux%zux%zu (HIP takes "
                    "at most 2^32 - 1 work-items along a dimension)", code->name, l->grid[0],
                    l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2]);
      return TC_ERR_ARGUMENT;
    }
  }
  for (int i = 0; i < nbufs; i++) {
    if (bufs[i].bytes > 0 && !bufs[i].host) {
      tc_str_printf(err, "buffer %d of '%s' has %zu bytes but no host data", i, code->name,
                    bufs[i].bytes);
      return TC_ERR_ARGUMENT;
    }
  }
  return TC_OK;
}

/* The checks against the device's limits (the target model for arch,
 * narrowed to what the device reports); a persistent launch's grid is cut
 * to its compute units in *cut. */
static tc_status check_device(const char *name, const char *arch, const tc_launch *l,
                              tc_launch *cut, tc_target_info *ti, tc_str *err) {
  tc_str why;
  tc_str_init(&why);
  tc_status st = tc_target_info_make(TC_TARGET_HIP, arch, ti, &why);
  if (st != TC_OK) tc_str_printf(err, "launch of '%s': %s", name, tc_str_cstr(&why));
  tc_str_free(&why);
  if (st != TC_OK) return TC_ERR_ARGUMENT;
  tc_device_limits lim = {g.dev.warp, g.dev.max_threads, g.dev.lds_bytes, g.dev.compute_units};
  tc_target_info_set_device(ti, &lim);
  *cut = *l;
  if (l->persistent > 0) cut->grid[0] = tc_launch_persistent_grid(l->grid[0], ti->units, l->persistent);
  size_t threads = l->block[0] * l->block[1] * l->block[2];
  if (threads > (size_t)ti->max_threads) {
    tc_str_printf(err, "launch of '%s': block %zux%zux%zu has %zu work-items, more than the %d of "
                  "a work-group on %s", name, l->block[0], l->block[1], l->block[2], threads,
                  ti->max_threads, g.dev.name);
    return TC_ERR_RUNTIME;
  }
  if ((int64_t)l->dyn_smem > ti->smem_max) {
    tc_str_printf(err, "launch of '%s': %zu bytes of dynamic LDS exceed the %lld bytes a "
                  "work-group has on %s", name, l->dyn_smem, (long long)ti->smem_max, g.dev.name);
    return TC_ERR_RUNTIME;
  }
  return TC_OK;
}

tc_status tc_hip_run_code(const tc_rt_code *code, tc_rt_buffer *bufs, int nbufs,
                          const tc_launch *launch, double *ms, tc_str *err) {
  if (ms) *ms = 0;
  if (!code || !code->source || !code->name || !launch || nbufs < 0 || (nbufs > 0 && !bufs)) {
    tc_str_printf(err, "tc_hip_run: missing source, kernel name, launch or buffers");
    return TC_ERR_ARGUMENT;
  }
  const char *name = code->name;
  tc_status st = check_launch(code, bufs, nbufs, launch, err);
  if (st) return st;
  /* the signature and the arguments, with placeholder addresses: a
   * mismatch is the caller's, found without a device */
  tc_hip_signature *sig = tc_xmalloc(sizeof *sig);
  uint64_t *dev = tc_xcalloc((size_t)nbufs + 1, sizeof *dev);
  unsigned char *args = NULL;
  void **dptr = tc_xcalloc((size_t)nbufs + 1, sizeof *dptr);
  char *own_co = NULL;
  hipModule_t mod = NULL;
  hipEvent_t ev[2 * HIP_TIMED_BATCH] = {NULL};
  int batch = launch->repeat < 1 ? 1 : launch->repeat < HIP_TIMED_BATCH ? launch->repeat
                                                                        : HIP_TIMED_BATCH;
  if ((st = tc_hip_signature_parse(code->source, name, sig, err))) goto done;
  args = tc_xcalloc(sig->bytes + 1, 1);
  if ((st = tc_hip_args_pack(sig, bufs, nbufs, dev, args, sig->bytes + 1, err))) {
    tc_str_printf(err, " (launch of '%s')", name);
    goto done;
  }
  if (!ready()) {
    tc_str_printf(err, "%s", g.why);
    st = TC_ERR_NO_DEVICE;
    goto done;
  }
  const char *arch = code->arch ? code->arch : g.dev.arch;
  tc_target_info ti;
  tc_launch l;
  if ((st = check_device(name, arch, launch, &l, &ti, err))) goto done;

  /* the code object: the caller's, or hipcc's */
  const char *co = NULL;
  size_t co_bytes = 0;
  st = code->hip_co ? code->hip_co(code->ctx, arch, &co, &co_bytes, err)
                    : tc_hip_compile(code->source, arch, &own_co, &co_bytes, err);
  if (!code->hip_co) co = own_co;
  if (st) {
    if (!code->arch) tc_str_printf(err, " (%s is %s)", g.dev.name, g.dev.target_id);
    goto done;
  }
  HIP_CHECK(g.hipSetDevice(0), "hipSetDevice(0)");
  {
    hipError_t r = g.hipModuleLoadData(&mod, co);
    if (r != 0) {
      mod = NULL;
      char what[1024];
      snprintf(what, sizeof what, "hipModuleLoadData of the code object for %.60s (%s is %s)", arch,
               g.dev.name, g.dev.target_id);
      hip_error(err, r, what);
      st = TC_ERR_COMPILE;
      goto done;
    }
  }
  hipFunction_t fn = NULL;
  {
    hipError_t r = g.hipModuleGetFunction(&fn, mod, name);
    if (r != 0) {
      tc_str_printf(err, "hipModuleGetFunction failed: %s (%d): the code object has no kernel "
                    "named '%s' (is it extern \"C\"?)", error_name(r), r, name);
      st = TC_ERR_COMPILE;
      goto done;
    }
  }
  {
    int stat = 0;
    if (g.hipFuncGetAttribute &&
        g.hipFuncGetAttribute(&stat, TC_HIP_FUNC_ATTR_SHARED_SIZE, fn) == 0 && stat > 0 &&
        (int64_t)stat + (int64_t)l.dyn_smem > ti.smem_max) {
      tc_str_printf(err, "launch of '%s': %d bytes of static LDS and %zu of dynamic exceed the "
                    "%lld bytes a work-group has on %s", name, stat, l.dyn_smem,
                    (long long)ti.smem_max, g.dev.name);
      st = TC_ERR_RUNTIME;
      goto done;
    }
  }

  for (int i = 0; i < nbufs; i++) {
    size_t n = bufs[i].bytes;
    if (bufs[i].by_value) continue; /* a scalar: tc_hip_args_pack copies the value */
    HIP_CHECK(g.hipMalloc(&dptr[i], n > 0 ? n : 1), "hipMalloc");
    if (n > 0) HIP_CHECK(g.hipMemcpyHtoD(dptr[i], bufs[i].host, n), "hipMemcpyHtoD");
    dev[i] = (uint64_t)(uintptr_t)dptr[i];
  }
  if ((st = tc_hip_args_pack(sig, bufs, nbufs, dev, args, sig->bytes + 1, err))) goto done;
  size_t arg_bytes = sig->bytes;
  void *extra[] = {TC_HIP_LAUNCH_PARAM_BUFFER_POINTER, args, TC_HIP_LAUNCH_PARAM_BUFFER_SIZE,
                   &arg_bytes, TC_HIP_LAUNCH_PARAM_END};
  for (int i = 0; i < 2 * batch; i++) HIP_CHECK(g.hipEventCreate(&ev[i]), "hipEventCreate");
  /* the first launch: its time, then its results */
  if ((st = launch_between(fn, &l, extra, ev[0], ev[1], name, err))) goto done;
  HIP_CHECK(g.hipEventSynchronize(ev[1]), "running the kernel (hipEventSynchronize)");
  HIP_CHECK(g.hipDeviceSynchronize(), "running the kernel (hipDeviceSynchronize)");
  if (ms && (st = elapsed(ev[0], ev[1], ms, err))) goto done;
  for (int i = 0; i < nbufs; i++) {
    if (!bufs[i].copy_back || bufs[i].bytes == 0 || bufs[i].by_value) continue;
    HIP_CHECK(g.hipMemcpyDtoH(bufs[i].host, dptr[i], bufs[i].bytes), "hipMemcpyDtoH");
  }
  /* the timed repeats, back to back, each between its own two events */
  for (int first = 0; first < launch->repeat; first += batch) {
    int n = launch->repeat - first < batch ? launch->repeat - first : batch;
    for (int j = 0; j < n; j++)
      if ((st = launch_between(fn, &l, extra, ev[2 * j], ev[2 * j + 1], name, err))) {
        tc_str_printf(err, " in timed launch %d of %d", first + j + 1, launch->repeat);
        goto done;
      }
    HIP_CHECK(g.hipEventSynchronize(ev[2 * n - 1]),
              "running the timed launches (hipEventSynchronize)");
    for (int j = 0; j < n; j++)
      if ((st = elapsed(ev[2 * j], ev[2 * j + 1], &launch->repeat_ms[first + j], err))) goto done;
  }
  if (launch->repeat > 0)
    HIP_CHECK(g.hipDeviceSynchronize(), "running the timed launches (hipDeviceSynchronize)");

done:
  for (int i = 0; i < 2 * batch; i++)
    if (ev[i]) g.hipEventDestroy(ev[i]);
  for (int i = 0; i < nbufs; i++)
    if (dptr[i]) g.hipFree(dptr[i]);
  if (mod) g.hipModuleUnload(mod);
  free(own_co);
  free(args);
  free(dptr);
  free(dev);
  free(sig);
  return st;
}

tc_status tc_hip_run(const char *source, const char *kernel_name, const char *arch,
                     tc_rt_buffer *bufs, int nbufs, const tc_launch *launch, double *ms,
                     tc_str *err) {
  tc_rt_code code = {.source = source, .name = kernel_name, .arch = arch};
  return tc_hip_run_code(&code, bufs, nbufs, launch, ms, err);
}
