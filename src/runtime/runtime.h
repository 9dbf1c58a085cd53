/* runtime.h - compiling and launching generated kernels on devices.
 *
 * OpenCL goes through the ICD loader (linked with -lOpenCL); PoCL on the CPU
 * is the default device.  CUDA goes through NVRTC and the driver API, both
 * loaded with dlopen at first use, so tilec builds and runs where neither
 * exists and says so clearly.  All calls report failures as a tc_status
 * plus a message appended to `err`. */
#ifndef TC_RUNTIME_H
#define TC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "tilec/tilec.h"
#include "../base/base.h"
#include "../lower/tmap.h"
#include "../target/target.h"

/* One kernel argument: a buffer of `bytes` bytes.  `host` is copied to the
 * device before the launch and, when copy_back is set, back afterwards.
 * by_value: the argument is the `bytes` bytes at host themselves, passed
 * by value (a scalar input, tc_scalar_input), no buffer. */
typedef struct tc_rt_buffer {
  void *host;
  size_t bytes;
  int copy_back;
  int by_value;
} tc_rt_buffer;

/* ---- tensor maps (tmap.c; pure C, needs neither cuda.h nor a GPU) ----
 * tilec's copies of the enum values cuda.h gives cuTensorMapEncodeTiled's
 * arguments (tests/test_tmap.c compares them with cuda.h where it exists). */
enum {
  TC_CU_TMAP_DTYPE_UINT8 = 0,          /* CU_TENSOR_MAP_DATA_TYPE_UINT8 (i8: a bit copy) */
  TC_CU_TMAP_DTYPE_INT32 = 3,          /* CU_TENSOR_MAP_DATA_TYPE_INT32 */
  TC_CU_TMAP_DTYPE_FLOAT16 = 6,        /* CU_TENSOR_MAP_DATA_TYPE_FLOAT16 */
  TC_CU_TMAP_DTYPE_FLOAT32 = 7,        /* CU_TENSOR_MAP_DATA_TYPE_FLOAT32 */
  TC_CU_TMAP_DTYPE_BFLOAT16 = 9,       /* CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 */
  TC_CU_TMAP_INTERLEAVE_NONE = 0,      /* CU_TENSOR_MAP_INTERLEAVE_NONE */
  TC_CU_TMAP_SWIZZLE_NONE = 0,         /* CU_TENSOR_MAP_SWIZZLE_NONE */
  TC_CU_TMAP_SWIZZLE_32B = 1,          /* CU_TENSOR_MAP_SWIZZLE_32B */
  TC_CU_TMAP_SWIZZLE_64B = 2,          /* CU_TENSOR_MAP_SWIZZLE_64B */
  TC_CU_TMAP_SWIZZLE_128B = 3,         /* CU_TENSOR_MAP_SWIZZLE_128B */
  TC_CU_TMAP_L2_PROMOTION_128B = 2,    /* CU_TENSOR_MAP_L2_PROMOTION_L2_128B */
  TC_CU_TMAP_OOB_FILL_NONE = 0,        /* CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE (zeros) */
  TC_CU_TMAP_BYTES = 128,              /* sizeof(CUtensorMap) (CU_TENSOR_MAP_NUM_QWORDS * 8) */
  TC_CU_TMAP_ALIGN = 128               /* its alignment in cuda.h (the driver needs 64) */
};

/* The arguments of cuTensorMapEncodeTiled (after tensorMap), in its
 * order, except globalAddress (the device pointer of the buffer). */
typedef struct tc_cu_tmap_args {
  int data_type;            /* CUtensorMapDataType */
  uint32_t rank;            /* tensorRank */
  uint64_t dims[5];         /* globalDim (cuuint64_t), rank entries */
  uint64_t strides[4];      /* globalStrides (cuuint64_t), rank - 1 entries */
  uint32_t box[5];          /* boxDim (cuuint32_t) */
  uint32_t elem_strides[5]; /* elementStrides: all 1 */
  int interleave;           /* TC_CU_TMAP_INTERLEAVE_NONE */
  int swizzle;              /* TC_CU_TMAP_SWIZZLE_* */
  int l2_promotion;         /* TC_CU_TMAP_L2_PROMOTION_128B */
  int oob_fill;             /* TC_CU_TMAP_OOB_FILL_NONE */
} tc_cu_tmap_args;

/* Checks t against every rule cuTensorMapEncodeTiled documents (rank 1..5;
 * dims 1..2^32; strides multiples of 16, below 2^40, each at least the
 * previous dimension's extent times its stride; box extents 1..256;
 * box[0] * element size a multiple of 16 bytes and, with a swizzle, at
 * most the swizzle span; a supported dtype and swizzle) and that its
 * buffer index is below nbufs.  TC_ERR_ARGUMENT with a message naming the
 * rule and the values on the first failure. */
tc_status tc_tmap_check(const tc_rt_tmap *t, int nbufs, tc_str *err);
/* tc_tmap_check over maps[0..n-1]; messages start "tensor map I: ". */
tc_status tc_tmap_check_all(const tc_rt_tmap *maps, int n, int nbufs, tc_str *err);
/* The bytes of the buffer a checked map spans: one past its last element,
 * dims[0] * the element size + sum over the outer dims of (dims[i] - 1) *
 * strides[i] (so an outer dimension of extent 1 adds nothing, and the last
 * row needs no padding after its elements). */
uint64_t tc_tmap_span_bytes(const tc_rt_tmap *t);
/* The CUtensorMapDataType of a tilec dtype; -1 when there is none. */
int tc_tmap_cu_dtype(tc_dtype dt);
/* Fills *a with the arguments cuTensorMapEncodeTiled takes for the
 * checked map t (tc_tmap_check passed). */
void tc_tmap_encode_args(const tc_rt_tmap *t, tc_cu_tmap_args *a);

/* A launch.  Zero-initialised fields (designated or memset init) give one
 * launch.  With repeat > 0 the run launches the kernel 1 + repeat times in
 * the same call, on the same loaded module (CUDA) or built program
 * (OpenCL) and the same device buffers:
 *   1. the first launch, as with repeat 0; its time goes to *ms;
 *   2. the buffers with copy_back are copied back, so the host sees the
 *      result of exactly this one launch (also for a kernel that reads
 *      what it writes, such as C += A * B);
 *   3. the repeat timed launches, back to back on the device (no host
 *      copies between them), each between its own pair of CUDA events or
 *      with its own OpenCL profiling event; repeat_ms[i] gets the time of
 *      the i-th in milliseconds.  Their outputs stay on the device and are
 *      discarded.
 * repeat < 0, or repeat > 0 with repeat_ms NULL, is TC_ERR_ARGUMENT.  On
 * an error every repeat_ms entry not yet measured is 0. */
typedef struct tc_launch {
  size_t grid[3];   /* number of blocks (work-groups) per dimension */
  size_t block[3];  /* threads (work-items) per block per dimension */
  size_t dyn_smem;  /* dynamic shared memory bytes (CUDA) */
  const tc_rt_tmap *tmaps; /* CUDA: tensor-map arguments after the buffers (may be NULL) */
  int ntmaps;
  int repeat;        /* timed launches after the first (0: none) */
  double *repeat_ms; /* repeat entries: the time of each, in ms */
  /* CUDA: > 0 for a persistent kernel, whose blocks stride over its work
   * by gridDim.x: grid[0] is cut to at most one block per multiprocessor
   * of the device, a multiple of this value (its cluster size), so that
   * every block is resident from the start (tc_launch_persistent_grid). */
  int persistent;
} tc_launch;

/* The grid of a persistent launch: grid, at most sms blocks in multiples
 * of `multiple` (at least one multiple); grid itself where sms or
 * multiple is not positive. */
size_t tc_launch_persistent_grid(size_t grid, int sms, int multiple);

/* Checks launch->repeat and repeat_ms as above (messages name
 * kernel_name) and zeroes repeat_ms[0 .. repeat-1]; every runtime calls it
 * before anything else with the launch. */
tc_status tc_launch_check_repeat(const tc_launch *launch, const char *kernel_name, tc_str *err);

/* ---- OpenCL ---- */
typedef struct tc_cl tc_cl;

/* Opens a device.  selector: NULL -> $TILEC_OPENCL_DEVICE if set, else the
 * first PoCL device, else the first device of any platform.  Otherwise
 * "P:D" (platform and device indices, as `tilec devices` lists them) or a
 * case-insensitive substring of "platform name / device name" (or of the
 * platform's vendor or version string, so "pocl" finds PoCL, whose platform
 * is named "Portable Computing Language").  A tc_cl is not thread-safe; use
 * one per thread.  Launch dyn_smem is ignored by OpenCL. */
tc_status tc_cl_open(const char *selector, tc_cl **out, tc_str *err);
void tc_cl_close(tc_cl *cl);
/* "platform / device" of an open device. */
const char *tc_cl_device_name(const tc_cl *cl);
/* Builds `source` (cached per source text inside this tc_cl), runs
 * kernel_name with the buffers as its arguments in order, waits, copies
 * back, then runs launch->repeat timed launches (see tc_launch).  *ms (if
 * not NULL) receives the first launch's run time from OpenCL profiling
 * events.  A block over the device's (or the kernel's) work-group size,
 * or a kernel with more local memory than the device has, is refused
 * before the launch (TC_ERR_RUNTIME).  With $TILEC_RUN_TIMEOUT_MS set to
 * a number of milliseconds, a launch that runs longer fails with
 * TC_ERR_TIMEOUT: it cannot be stopped, so its command queue, buffers and
 * kernel object are abandoned (never released; tc_cl_close leaves the
 * context alone too) and later runs use a new queue.  A value that is not
 * a whole number is TC_ERR_ARGUMENT. */
tc_status tc_cl_run(tc_cl *cl, const char *source, const char *kernel_name,
                    tc_rt_buffer *bufs, int nbufs, const tc_launch *launch,
                    double *ms, tc_str *err);
/* Builds source for the device (and caches it) without running anything;
 * TC_ERR_COMPILE with the build log on failure. */
tc_status tc_cl_build(tc_cl *cl, const char *source, tc_str *err);
/* Appends a listing of every platform and device ("P:D  platform / device
 * (type, compute units, local mem)") to out; returns the device count
 * (0 with a reason in out when there is no OpenCL platform). */
int tc_cl_list_devices(tc_str *out);
/* The name of an OpenCL error code ("CL_INVALID_WORK_GROUP_SIZE"). */
const char *tc_cl_error_name(int code);

/* The OpenCL platforms and their devices, as `tilec version` and `tilec
 * devices` list them.  A string that cannot be read is "?". */
typedef struct tc_cl_device_info {
  char name[256];
  const char *type;                   /* "GPU", "CPU", "accelerator" or "other" */
  unsigned compute_units;
  unsigned long long local_mem_bytes, global_mem_bytes;
} tc_cl_device_info;
typedef struct tc_cl_platform_info {
  char name[256], vendor[256], version[256];
  int ndevices;                       /* 0 also when they cannot be listed */
  tc_cl_device_info *devices;
} tc_cl_platform_info;
/* Fills *out (allocated; free with tc_cl_platforms_free) and returns the
 * number of platforms; with none, 0 and why "no OpenCL platform found
 * (install pocl-opencl-icd)"; when they cannot be listed, -1 and why
 * "clGetPlatformIDs failed: NAME (CODE)".  *out is NULL unless > 0. */
int tc_cl_platforms(tc_cl_platform_info **out, tc_str *why);
void tc_cl_platforms_free(tc_cl_platform_info *p, int n);
/* CL_DEVICE_MAX_WORK_GROUP_SIZE of an open device (0 if unknown). */
size_t tc_cl_max_work_group_size(const tc_cl *cl);
/* CL_DEVICE_LOCAL_MEM_SIZE of an open device (0 if unknown): a launch of
 * a kernel whose CL_KERNEL_LOCAL_MEM_SIZE is larger is refused. */
uint64_t tc_cl_local_mem_size(const tc_cl *cl);
/* How many command queues this tc_cl gave up on because a launch timed
 * out (TILEC_RUN_TIMEOUT_MS; see tc_cl_run). */
int tc_cl_abandoned_queues(const tc_cl *cl);
/* How many built programs this tc_cl holds in its cache (for tests). */
int tc_cl_cached_programs(const tc_cl *cl);

/* ---- CUDA ---- */
/* Compiles CUDA C source with NVRTC for arch ("sm_80", "sm_90a", ...) and
 * returns PTX (caller frees).  TC_ERR_UNSUPPORTED with a clear message
 * where libnvrtc cannot be loaded. */
tc_status tc_cuda_compile(const char *source, const char *arch, char **ptx,
                          tc_str *err);
/* Is there a usable CUDA device?  On no, msg gets the reason
 * ("no CUDA device: libcuda.so.1 not found" ...). */
int tc_cuda_available(tc_str *msg);
/* Describes NVRTC's and the driver's availability for `tilec devices`. */
void tc_cuda_describe(tc_str *out);
/* Compiles, loads the module once and launches (then launch->repeat timed
 * launches, see tc_launch); *ms (if not NULL) gets the first launch's time
 * from CUDA events.  TC_ERR_NO_DEVICE with "no CUDA device: ..." where
 * there is none. */
tc_status tc_cuda_run(const char *source, const char *kernel_name,
                      const char *arch, tc_rt_buffer *bufs, int nbufs,
                      const tc_launch *launch, double *ms, tc_str *err);
/* tc_cuda_run with PTX made earlier (e.g. from the kernel cache) instead
 * of compiling source. */
tc_status tc_cuda_run_ptx(const char *ptx, const char *kernel_name,
                          const char *arch, tc_rt_buffer *bufs, int nbufs,
                          const tc_launch *launch, double *ms, tc_str *err);
/* Times a device-to-device copy (cuMemcpyDtoD on the default stream) of
 * `bytes` between two fresh buffers of device 0: one untimed copy, then
 * `runs` copies, each between its own pair of events; ms[0 .. runs-1]
 * get their times in milliseconds.  The baseline of
 * bench/ldst_bandwidth.c.  TC_ERR_NO_DEVICE with "no CUDA device: ..."
 * where there is none; TC_ERR_RUNTIME when the buffers cannot be
 * allocated or a copy fails. */
tc_status tc_cuda_time_d2d(size_t bytes, int runs, double *ms, tc_str *err);
/* The version of the NVRTC that tc_cuda_compile uses; 0 (and 0.0) where
 * NVRTC cannot be loaded. */
int tc_cuda_nvrtc_version(int *major, int *minor);

/* CUfunction_attribute values cuda.c reads and sets before a launch
 * (tests/test_tmap.c compares them with cuda.h where it exists). */
enum {
  TC_CU_FUNC_ATTR_SHARED_SIZE = 1, /* CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES (static) */
  TC_CU_FUNC_ATTR_MAX_DYN_SMEM = 8 /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
};
/* The dynamic shared memory limit a launch of `dyn` bytes needs, for a
 * function with static_bytes of static shared memory (its
 * SHARED_SIZE_BYTES: the compiler's, which may exceed the kernel's own
 * arrays; ptxas pads them to the alignment of an `extern __shared__
 * __align__(1024)` array) whose MAX_DYNAMIC_SHARED_SIZE_BYTES is now
 * cur_max (48 KiB less the static bytes until set).  Returns 0 when dyn
 * fits cur_max, else dyn, the value to set; -1 with a message in err when
 * static_bytes + dyn exceed optin, the device's opt-in shared memory per
 * block (ignored when not positive).  Pure: no driver needed. */
long tc_cuda_dyn_smem_limit(size_t dyn, int static_bytes, int cur_max, int optin, tc_str *err);

/* ---- HIP (AMD GPUs): hipcc (hip.c), the runtime (hip_run.c), arguments
 * (hip_args.c) ---- */
/* The hipcc tilec uses: the first in $PATH, else /opt/rocm/bin/hipcc.
 * Returns 1 with its path, 0 when there is none. */
int tc_hip_find_hipcc(char *path, size_t cap);
/* hipcc's "HIP version: ..." ("5.2.21153-0"); 0 when unknown. */
int tc_hip_hipcc_version(char *buf, size_t cap);
/* Compiles HIP source to a code object for arch (an --offload-arch:
 * "gfx90a", "gfx940"; NULL = TC_HIP_DEFAULT_ARCH) with `hipcc --genco`;
 * *co (caller frees; co may be NULL) gets its bytes.  TC_ERR_UNSUPPORTED
 * when there is no hipcc or it does not know the arch (Debian 12's ROCm
 * 5.2: gfx942, which needs ROCm 6.0 or newer, and gfx950, ROCm 7.0; the
 * message names the version), TC_ERR_COMPILE with hipcc's log when the
 * source does not compile.  Needs no GPU. */
tc_status tc_hip_compile(const char *source, const char *arch, char **co, size_t *co_bytes,
                         tc_str *err);

/* The AMD GPU tilec runs on (device 0), as the HIP runtime reports it. */
typedef struct tc_hip_device {
  char name[256];      /* hipDeviceGetName ("AMD Instinct MI250X"); the perf DB key */
  char arch[64];       /* the processor of gcnArchName ("gfx90a"): what hipcc compiles for */
  char target_id[256]; /* gcnArchName itself ("gfx90a:sramecc+:xnack-") */
  int lds_bytes;       /* hipDeviceAttributeMaxSharedMemoryPerBlock */
  int warp;            /* hipDeviceAttributeWarpSize (the wavefront: 64 on CDNA) */
  int compute_units;   /* hipDeviceAttributeMultiprocessorCount */
  int max_threads;     /* hipDeviceAttributeMaxThreadsPerBlock */
  int runtime_version; /* hipRuntimeGetVersion (50221153: 5.2.21153) */
  char library[512];   /* the libamdhip64 that was loaded */
} tc_hip_device;

/* The HIP runtime, libamdhip64, is loaded with dlopen at first use (once
 * per process): $TILEC_HIP_RUNTIME when set (a path or a library name;
 * nothing else is tried), else libamdhip64.so on the loader path, its
 * sonames .7, .6 and .5, /opt/rocm/lib and $ROCM_PATH/lib.  Then
 * hipGetDeviceCount and, with a device, its properties.  Is there an AMD
 * GPU?  On no, msg gets "no AMD GPU: ..." with the reason: the library
 * cannot be loaded (and what to install), a symbol is missing, or
 * hipGetDeviceCount failed (its error name, and whether /dev/kfd exists)
 * or found none. */
int tc_hip_available(tc_str *msg);
/* *d = device 0 when there is one (returns 1); else 0 and msg (may be
 * NULL) as tc_hip_available. */
int tc_hip_device_get(tc_hip_device *d, tc_str *msg);
/* The arch of the AMD GPU ("gfx942"), NULL where there is none: what HIP
 * kernels are compiled for when no arch is given.  The string lives as
 * long as the process. */
const char *tc_hip_device_arch(void);
/* The HIP runtime's lines of tc_hip_describe: "HIP runtime: VERSION
 * (LIBRARY), N devices" and "HIP device 0: NAME (gcnArchName, CUs, LDS,
 * wavefront)", or "HIP device: no AMD GPU: ...". */
void tc_hip_describe_runtime(tc_str *out);
/* Values of the HIP API that hip_run.c uses without HIP's headers
 * (tests/test_hip.c compares them with hip_runtime_api.h where it is
 * installed). */
enum {
  TC_HIP_ATTR_MAX_THREADS_PER_BLOCK = 56, /* hipDeviceAttributeMaxThreadsPerBlock */
  TC_HIP_ATTR_MULTIPROCESSOR_COUNT = 63,  /* hipDeviceAttributeMultiprocessorCount */
  TC_HIP_ATTR_MAX_SHARED_PER_BLOCK = 74,  /* hipDeviceAttributeMaxSharedMemoryPerBlock */
  TC_HIP_ATTR_WARP_SIZE = 87,             /* hipDeviceAttributeWarpSize */
  TC_HIP_FUNC_ATTR_SHARED_SIZE = 1,       /* HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES (static LDS) */
  TC_HIP_ERROR_NO_DEVICE = 100,           /* hipErrorNoDevice */
  /* offsetof(hipDeviceProp_t, gcnArchName): the struct hipGetDeviceProperties
   * fills up to ROCm 5 (792 bytes), and the one of hipGetDevicePropertiesR0600,
   * ROCm 6 and later (1472 bytes) */
  TC_HIP_PROPS_ARCH_NAME_R0000 = 396,
  TC_HIP_PROPS_ARCH_NAME_R0600 = 1160,
  TC_HIP_PROPS_BYTES = 4096               /* room for either */
};
/* hipModuleLaunchKernel's `extra`: the argument buffer and its size */
#define TC_HIP_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define TC_HIP_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)
#define TC_HIP_LAUNCH_PARAM_END ((void *)0x03)
/* hipcc (version, path, the archs it compiles for), the HIP runtime and
 * the AMD GPU, for `tilec devices` ("HIP compiler: ...", "HIP archs:
 * ...", "HIP runtime: ...", "HIP device: ..." lines). */
void tc_hip_describe(tc_str *out);

/* One parameter of a HIP kernel as the HIP dialect prints its signature
 * (`extern "C" __global__ void NAME(const float* __restrict__ A, ...)`):
 * where it goes in the kernel's argument buffer.  Each parameter is at the
 * next multiple of its alignment (the AMDGPU kernel-argument layout, the
 * C layout of the parameters in order; the code object's metadata lists
 * the same offsets). */
typedef struct tc_hip_param {
  char type[64];   /* as printed, without __restrict__: "const float*", "int" */
  char name[64];
  int pointer;     /* a pointer: gets the device address of its buffer */
  size_t size, align, offset;
} tc_hip_param;
#define TC_HIP_MAX_PARAMS 64
typedef struct tc_hip_signature {
  int nparams;
  tc_hip_param params[TC_HIP_MAX_PARAMS];
  size_t bytes;    /* the argument buffer: where the last parameter ends */
} tc_hip_signature;
/* Finds the __global__ function `kernel` in source and reads its
 * parameters into *sig.  TC_ERR_COMPILE when there is no such kernel;
 * TC_ERR_UNSUPPORTED for a parameter type tilec cannot pass (named). */
tc_status tc_hip_signature_parse(const char *source, const char *kernel, tc_hip_signature *sig,
                                 tc_str *err);
/* Packs the argument buffer out (cap bytes, at least sig->bytes) for a
 * launch with buffer i as parameter i: a pointer parameter gets dev[i],
 * the device address of buffer i; a parameter passed by value gets the
 * bytes of buffers[i].host, which must be exactly its size.  Padding is
 * zero.  TC_ERR_ARGUMENT when nbufs is not sig->nparams or a size does
 * not match (named).  Needs no device. */
tc_status tc_hip_args_pack(const tc_hip_signature *sig, const tc_rt_buffer *bufs, int nbufs,
                           const uint64_t *dev, unsigned char *out, size_t cap, tc_str *err);

/* Launches kernel_name of HIP source on the AMD GPU, with the contract of
 * tc_cuda_run: checks (the launch, then the signature, then the device;
 * TC_ERR_NO_DEVICE with "no AMD GPU: ..." where there is none), compiles
 * source with hipcc for arch (NULL: the device's), loads the code object
 * (hipModuleLoadData), copies the buffers in, launches with the launch's
 * grid, block and dynamic LDS, copies back (then launch->repeat timed
 * launches, see tc_launch); *ms (if not NULL) gets the first launch's time
 * from HIP events.  Every HIP error is a status with the error's name and
 * what to do. */
tc_status tc_hip_run(const char *source, const char *kernel_name, const char *arch,
                     tc_rt_buffer *bufs, int nbufs, const tc_launch *launch, double *ms,
                     tc_str *err);

/* ---- running on any target (dispatch.c) ---- */
/* A kernel to launch: its source in the target's dialect, its entry point
 * and the arch to compile it for (CUDA, HIP; already resolved by the
 * caller, NULL: the runtime's default). */
typedef struct tc_rt_code {
  const char *source;
  const char *name;
  const char *arch;
  /* CUDA, optional: gives the PTX of source (e.g. from the kernel cache;
   * it stays the caller's), called after the tensor maps and the device
   * were checked.  NULL: NVRTC compiles source at the launch. */
  tc_status (*ptx)(void *ctx, const char **ptx, tc_str *err);
  /* HIP, optional: gives a code object of source for arch (the given one
   * or the device's; it stays the caller's), called after the launch, the
   * signature and the device were checked.  NULL: hipcc compiles source
   * at the launch. */
  tc_status (*hip_co)(void *ctx, const char *arch, const char **co, size_t *bytes, tc_str *err);
  void *ctx; /* for ptx and hip_co */
} tc_rt_code;

/* tc_hip_run for a tc_rt_code: with its code object where code->hip_co
 * gives one. */
tc_status tc_hip_run_code(const tc_rt_code *code, tc_rt_buffer *bufs, int nbufs,
                          const tc_launch *launch, double *ms, tc_str *err);

/* Launches code on target with the buffers and launch as tc_cl_run,
 * tc_cuda_run / tc_cuda_run_ptx or tc_hip_run_code do (cl: the open OpenCL
 * device; ignored elsewhere).  A target this build cannot run is
 * TC_ERR_UNSUPPORTED.  The one place that picks a runtime for a target. */
tc_status tc_rt_launch(tc_target target, tc_cl *cl, const tc_rt_code *code, tc_rt_buffer *bufs,
                       int nbufs, const tc_launch *launch, double *ms, tc_str *err);

/* The name of the device a run on target uses (selector: the OpenCL
 * device selector, ignored elsewhere) into name: "platform / device" for
 * OpenCL, CUDA device 0's for CUDA.  TC_OK, or TC_ERR_NO_DEVICE /
 * TC_ERR_UNSUPPORTED (a target with no device here yet: HIP) with err. */
tc_status tc_rt_device_name(tc_target target, const char *selector, tc_str *name, tc_str *err);
/* The arch of the device kernels for target run on, where the device
 * decides it (HIP: the AMD GPU's, tc_hip_device_arch); NULL where there
 * is none or the target's default applies (CUDA, OpenCL). */
const char *tc_rt_device_arch(tc_target target);

#endif
