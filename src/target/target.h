/* target.h - what a target is: one tc_target_info made from (target, arch)
 * in one place, tc_target_info_make.  It holds the parsed arch (sm_90a ->
 * 90 + 'a', gfx90a -> 9.0.a), the feature bits the lowering and the ops ask
 * about (ldmatrix, TMA, wgmma, tcgen05, MFMA ...), the limits a kernel
 * must fit (threads, shared memory / LDS per block) and, the same for every
 * arch of a target, how its kernels are built and run (device API,
 * compiler, device selection, whether tilec launches them).  Nothing else
 * in tilec parses an arch string or compares one; code above asks these
 * fields instead of comparing targets (the dispatcher in runtime/ and
 * codegen's tc_dialect_for are the switches over targets).
 *
 * Layering: this header needs only base and the public tilec.h, so every
 * layer may ask it (base <- target <- expr <- ... <- runtime).  The dialect
 * of a target (codegen's tc_dialect) is looked up in codegen from the
 * target (tc_dialect_for), so that the target layer does not reach up. */
#ifndef TC_TARGET_H
#define TC_TARGET_H

#include <stdint.h>

#include "tilec/tilec.h"
#include "../base/base.h"

/* The target when none is named: tc_compile and the ops with NULL
 * options, the tilec command without --target.  OpenCL runs anywhere an
 * OpenCL driver does (PoCL on the CPU). */
#define TC_DEFAULT_TARGET TC_TARGET_OPENCL

/* The arch a kernel is compiled for when none is given (tc_compile,
 * tc_cuda_compile, tc_hip_compile). */
#define TC_CUDA_DEFAULT_ARCH "sm_80"
#define TC_HIP_DEFAULT_ARCH "gfx90a"
/* The CUDA arch the GEMM / convolution ops and the tuner assume when none
 * is given: the one tilec has its fastest kernels (TMA + wgmma) for. */
#define TC_CUDA_OPS_DEFAULT_ARCH "sm_90a"

/* How the arch of a target is named. */
typedef enum tc_arch_family {
  TC_ARCH_NONE, /* OpenCL: no arch, the device decides */
  TC_ARCH_SM,   /* NVIDIA: sm_XY / compute_XY with an optional suffix letter */
  TC_ARCH_GFX   /* AMD: gfxMMms (major, minor, stepping), ":feature+" allowed */
} tc_arch_family;

/* How a target's kernels are built (tc_target_info.build). */
typedef enum tc_build_kind {
  TC_BUILD_NONE,   /* an unknown target: not at all */
  TC_BUILD_OPENCL, /* by the OpenCL driver of the device they run on, when they run */
  TC_BUILD_NVRTC,  /* by NVRTC, to PTX for the arch; needs no GPU */
  TC_BUILD_HIPCC   /* by hipcc --genco, to a code object for the arch; needs no GPU */
} tc_build_kind;

/* The language kernels are printed in outside the dialects (the ops'
 * small helper kernels). */
typedef enum tc_source_lang {
  TC_LANG_NONE,      /* an unknown target */
  TC_LANG_OPENCL_C,  /* OpenCL C: __kernel, get_global_id */
  TC_LANG_CUDA_CXX   /* CUDA C++: __global__, blockIdx; HIP compiles the same */
} tc_source_lang;

/* Feature bits (tc_target_info.features).  On OpenCL the bits are the
 * instructions the OpenCL dialect emulates. */
enum {
  TC_FEAT_CP_ASYNC = 1u << 0,   /* cp.async: sm_80+ */
  TC_FEAT_LDMATRIX = 1u << 1,   /* ldmatrix: sm_75+ */
  TC_FEAT_STMATRIX = 1u << 2,   /* stmatrix: sm_90+ */
  TC_FEAT_MMA_SYNC = 1u << 3,   /* mma.sync m16n8k16 f16 / bf16: sm_80+ */
  TC_FEAT_TMA = 1u << 4,        /* cp.async.bulk.tensor (TMA): sm_90+ */
  TC_FEAT_WGMMA = 1u << 5,      /* wgmma.mma_async: sm_90a only */
  TC_FEAT_CLUSTERS = 1u << 6,   /* thread block clusters: sm_90+ */
  TC_FEAT_SETMAXNREG = 1u << 7, /* setmaxnreg: sm_90a, sm_100a / f ... */
  TC_FEAT_TCGEN05 = 1u << 8,    /* tcgen05 and tensor memory: sm_100/101/103/110 a or f */
  TC_FEAT_MFMA = 1u << 9,       /* MFMA f32 / f16 (CDNA: gfx908, gfx90a, gfx94x, gfx950) */
  TC_FEAT_MFMA_BF16_1K = 1u << 10, /* MFMA bf16 with k 8 per block ("_1k"): gfx90a+ */
  TC_FEAT_MFMA_F8 = 1u << 11    /* MFMA fp8 / bf8: gfx940+ */
};

/* The MFMA instruction kinds (f32 accumulation; f16 or bf16 inputs as the
 * problem's dtype): v_mfma_f32_32x32x8{f16,bf16_1k} or
 * v_mfma_f32_16x16x16{f16,bf16_1k}.  An XDLOPS kernel's parameters name one
 * (tc_gemm_params.mfma) and the HIP dialect and its OpenCL emulation print it. */
#define TC_MFMA_32X32X8 1
#define TC_MFMA_16X16X16 2

typedef struct tc_target_info {
  tc_target target;
  const char *name;      /* "opencl", "cuda", "hip" */
  tc_arch_family family;
  char arch[48];         /* the arch given, else the target's default; "" for OpenCL */
  int arch_given;        /* 0 when arch is the default */
  int arch_valid;        /* arch parses as the family's (always 1 for OpenCL) */
  int sm;                /* NVIDIA: XY of sm_XY / compute_XY (90, 100); else 0 */
  int gfx_major, gfx_minor, gfx_stepping; /* AMD: gfx90a -> 9, 0, 10; gfx950 -> 9, 5, 0 */
  char suffix;           /* NVIDIA: 'a' (arch-specific), 'f' (family) or 0 */
  unsigned features;     /* TC_FEAT_* */
  int warp;              /* threads per warp / wavefront */
  int max_threads;       /* threads per block; 0: the device's (OpenCL, checked at launch) */
  int max_block_z;       /* a block's z extent; 0: the device's */
  int64_t smem_max;      /* shared memory (LDS) bytes per block; 0: the device's */
  int regs_per_sm;       /* 32-bit registers per SM / CU; 0: unknown */
  int max_regs_per_thread; /* 0: unknown */
  /* How kernels are built and run; the same for every arch of a target. */
  const char *api;       /* the device API they run through: "OpenCL", "CUDA", "HIP" */
  tc_build_kind build;
  tc_source_lang lang;
  int device_selector;   /* the device is an OpenCL one picked by a selector string
                          * (tc_cl_open; --device): OpenCL.  Else the API's device 0 */
  int runs;              /* tilec launches the kernels (tc_rt_launch): every target (HIP
                          * where an AMD GPU and the HIP runtime are present) */
  int tensor_maps;       /* bulk tensor copies (TMA) take CUtensorMap launch parameters
                          * (the CUDA driver's); OpenCL emulates them with plain pointers */
  int swizzle_swap;      /* tc_compile applies tc_swizzle_swap by itself: HIP, where a
                          * lane writes LDS at lane_id * n (docs/swizzle_swap.md) */
  int units;             /* SMs / compute units of the device; 0: no device told (the arch
                            alone does not say) */
} tc_target_info;

/* What a present device reports about itself (0: not reported).  The
 * runtimes fill one from the device (the HIP runtime's attributes). */
typedef struct tc_device_limits {
  int warp;          /* threads per warp / wavefront */
  int max_threads;   /* threads per block */
  int64_t smem_max;  /* shared memory (LDS) bytes per block */
  int units;         /* SMs / compute units */
} tc_device_limits;

/* Fills *out for target and arch (NULL: the target's default arch).  An
 * arch that does not parse (or an arch given for OpenCL) gives
 * TC_ERR_ARGUMENT with a message in err (may be NULL) naming the expected
 * form; *out is still filled, with no features past the target's own, so
 * that callers that check the arch later (at build) may go on.  A value
 * outside tc_target (name and api "?") has no way to build or run: build
 * TC_BUILD_NONE, lang TC_LANG_NONE, runs 0. */
tc_status tc_target_info_make(tc_target target, const char *arch, tc_target_info *out, tc_str *err);
/* The target's info for its default arch: what does not depend on the
 * arch (api, build, lang, device_selector, runs, ...). */
tc_target_info tc_target_info_of(tc_target target);

/* The target named `name` ("opencl", "cuda", "hip", as tc_target_name
 * gives) into *out: 1, or 0 when no target has that name. */
int tc_target_from_name(const char *name, tc_target *out);

/* Narrows *ti, made for a device's arch, to the device: its warp,
 * max_threads, smem_max and units become the device's where it reports
 * them (> 0).  The device's own numbers win over the arch's (a GPU with
 * less than its family's most, a partitioned GPU). */
void tc_target_info_set_device(tc_target_info *ti, const tc_device_limits *d);

/* The arch tc_compile uses for target when none is given (NULL for OpenCL). */
const char *tc_target_default_arch(tc_target target);
/* The arch the ops and the tuner use when none is given (NULL for OpenCL). */
const char *tc_target_ops_default_arch(tc_target target);
/* The arch the ops pass down to the layers below (tc_gemm_default_for,
 * tc_gemm_candidates_for, tc_compile), whose NULL means
 * tc_target_default_arch: arch when given; else the ops' default where it
 * is not that one (CUDA: sm_90a, not sm_80); else NULL (HIP: both are
 * gfx90a; OpenCL has no arch). */
const char *tc_target_ops_arch(tc_target target, const char *arch);

#endif
