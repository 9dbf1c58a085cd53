/* test_target.c - the target model (src/target): what each arch string
 * parses to, checked against the vendors' published numbers.
 *
 * Sources:
 *  - NVIDIA CUDA C++ Programming Guide, "Technical Specifications per
 *    Compute Capability": warp size 32; 1024 threads per block; block z
 *    dimension at most 64; 64 K 32-bit registers per SM; 255 registers
 *    per thread; shared memory per block (opt-in): 96 KiB on 7.0, 64 KiB
 *    on 7.5, 163 KiB = 166912 bytes on 8.0, 99 KiB = 101376 bytes on 8.6
 *    and 8.9, 227 KiB = 232448 bytes on 9.0 and 10.x (tilec checks the
 *    arch's at compile time and the device's own at launch).
 *  - NVIDIA PTX ISA, each instruction's "Target ISA notes": ldmatrix
 *    sm_75+, cp.async and mma.sync .f16/.bf16 m16n8k16 sm_80+, stmatrix,
 *    cp.async.bulk.tensor and clusters sm_90+, wgmma sm_90a, setmaxnreg
 *    sm_90a (and the a / f archs after it), tcgen05 sm_100a/f, sm_101a/f,
 *    sm_103a/f, sm_110a/f.
 *  - AMD CDNA 2 / CDNA 3 ISA guides and the LLVM AMDGPU processor table:
 *    wavefront 64 on gfx9; LDS 64 KiB per work-group on gfx90a, gfx940,
 *    gfx942, 160 KiB on gfx950; 1024 work-items per work-group; MFMA on
 *    gfx908, gfx90a, gfx94x, gfx950; bf16 "_1k" MFMA from gfx90a; fp8 MFMA
 *    from gfx940.
 *  - How each target's kernels are built and run: NVIDIA's NVRTC guide
 *    (CUDA C++ compiled at run time to PTX, no GPU needed) and the CUDA
 *    driver API (a kernel runs on a CUdevice, device 0 by default; the
 *    Hopper TMA copies take a CUtensorMap made by cuTensorMapEncodeTiled
 *    as a __grid_constant__ kernel parameter); AMD's HIP programming guide
 *    (HIP kernels are CUDA-syntax C++: __global__, blockIdx; hipcc
 *    --genco makes a code object for a gfx arch without a GPU); the
 *    OpenCL 3.0 API and C specifications (a device is picked among the
 *    platforms' devices; the program is built by the driver for that
 *    device, clBuildProgram; kernels are OpenCL C: __kernel,
 *    get_global_id).  tilec has no HIP launcher yet (its kernels are only
 *    compiled), and it swaps swizzles automatically only on AMD, whose
 *    direct-to-LDS loads write LDS at lane_id * n (docs/swizzle_swap.md). */
#include <string.h>

#include "test.h"
#include "target/target.h"

static tc_target_info make(tc_target t, const char *arch, tc_status want) {
  tc_target_info ti;
  tc_str e;
  tc_str_init(&e);
  tc_status st = tc_target_info_make(t, arch, &ti, &e);
  TC_CHECK(st == want, "%s %s: %s (%s)", tc_target_name(t), arch ? arch : "NULL", tc_status_name(st),
           tc_str_cstr(&e));
  tc_str_free(&e);
  return ti;
}

static void test_cuda_archs(void) {
  const unsigned sm90 = TC_FEAT_LDMATRIX | TC_FEAT_CP_ASYNC | TC_FEAT_MMA_SYNC | TC_FEAT_STMATRIX |
                        TC_FEAT_TMA | TC_FEAT_CLUSTERS;
  const struct {
    const char *arch;
    int sm;
    char suffix;
    unsigned features;
    int64_t smem; /* opt-in shared memory per block: the programming guide's table, in bytes */
  } cases[] = {
      {"sm_70", 70, 0, 0, 98304},
      {"sm_75", 75, 0, TC_FEAT_LDMATRIX, 65536},
      {"sm_80", 80, 0, TC_FEAT_LDMATRIX | TC_FEAT_CP_ASYNC | TC_FEAT_MMA_SYNC, 166912},
      {"sm_86", 86, 0, TC_FEAT_LDMATRIX | TC_FEAT_CP_ASYNC | TC_FEAT_MMA_SYNC, 101376},
      {"sm_89", 89, 0, TC_FEAT_LDMATRIX | TC_FEAT_CP_ASYNC | TC_FEAT_MMA_SYNC, 101376},
      {"sm_90", 90, 0, sm90, 232448},
      {"sm_90a", 90, 'a', sm90 | TC_FEAT_WGMMA | TC_FEAT_SETMAXNREG, 232448},
      {"compute_90", 90, 0, sm90, 232448},
      {"compute_90a", 90, 'a', sm90 | TC_FEAT_WGMMA | TC_FEAT_SETMAXNREG, 232448},
      {"sm_100", 100, 0, sm90, 232448},
      {"sm_100a", 100, 'a', sm90 | TC_FEAT_SETMAXNREG | TC_FEAT_TCGEN05, 232448},
      {"sm_100f", 100, 'f', sm90 | TC_FEAT_SETMAXNREG | TC_FEAT_TCGEN05, 232448},
      {"sm_103a", 103, 'a', sm90 | TC_FEAT_SETMAXNREG | TC_FEAT_TCGEN05, 232448},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tc_target_info ti = make(TC_TARGET_CUDA, cases[i].arch, TC_OK);
    TC_CHECK(ti.family == TC_ARCH_SM && ti.arch_valid && ti.arch_given, "%s: family", cases[i].arch);
    TC_CHECK(ti.sm == cases[i].sm && ti.suffix == cases[i].suffix, "%s: sm %d suffix %c",
             cases[i].arch, ti.sm, ti.suffix ? ti.suffix : '-');
    TC_CHECK(ti.features == cases[i].features, "%s: features %#x, want %#x", cases[i].arch,
             ti.features, cases[i].features);
    TC_CHECK(strcmp(ti.arch, cases[i].arch) == 0, "%s: arch %s", cases[i].arch, ti.arch);
    TC_CHECK(ti.warp == 32 && ti.max_threads == 1024 && ti.max_block_z == 64, "%s: block limits",
             cases[i].arch);
    TC_CHECK(ti.smem_max == cases[i].smem && ti.regs_per_sm == 65536 && ti.max_regs_per_thread == 255,
             "%s: smem %lld regs %d", cases[i].arch, (long long)ti.smem_max, ti.regs_per_sm);
  }
}

static void test_amd_archs(void) {
  const unsigned cdna2 = TC_FEAT_MFMA | TC_FEAT_MFMA_BF16_1K, cdna3 = cdna2 | TC_FEAT_MFMA_F8;
  const struct {
    const char *arch;
    int major, minor, stepping;
    int64_t lds;
    unsigned features;
  } cases[] = {
      {"gfx908", 9, 0, 8, 65536, TC_FEAT_MFMA},
      {"gfx90a", 9, 0, 10, 65536, cdna2},
      {"gfx90a:xnack+", 9, 0, 10, 65536, cdna2},
      {"gfx940", 9, 4, 0, 65536, cdna3},
      {"gfx942", 9, 4, 2, 65536, cdna3},
      {"gfx950", 9, 5, 0, 163840, cdna3},
      {"gfx1100", 11, 0, 0, 65536, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tc_target_info ti = make(TC_TARGET_HIP, cases[i].arch, TC_OK);
    TC_CHECK(ti.family == TC_ARCH_GFX && ti.arch_valid, "%s: family", cases[i].arch);
    TC_CHECK(ti.gfx_major == cases[i].major && ti.gfx_minor == cases[i].minor &&
                 ti.gfx_stepping == cases[i].stepping,
             "%s: %d.%d.%d", cases[i].arch, ti.gfx_major, ti.gfx_minor, ti.gfx_stepping);
    TC_CHECK(ti.smem_max == cases[i].lds, "%s: LDS %lld", cases[i].arch, (long long)ti.smem_max);
    TC_CHECK(ti.features == cases[i].features, "%s: features %#x, want %#x", cases[i].arch,
             ti.features, cases[i].features);
    TC_CHECK(ti.warp == 64 && ti.max_threads == 1024, "%s: wave %d", cases[i].arch, ti.warp);
  }
}

static void test_bad_archs(void) {
  const struct {
    tc_target t;
    const char *arch, *needle;
  } cases[] = {
      {TC_TARGET_CUDA, "sm_x", "bad CUDA architecture 'sm_x' (expected sm_XX or compute_XX"},
      {TC_TARGET_CUDA, "sm_9", "bad CUDA architecture"},
      {TC_TARGET_CUDA, "sm_90ab", "bad CUDA architecture"},
      {TC_TARGET_CUDA, "gfx90a", "bad CUDA architecture"},
      {TC_TARGET_CUDA, "", "bad CUDA architecture"},
      {TC_TARGET_HIP, "sm_90a", "'sm_90a' is not an AMD GPU architecture (gfx90a"},
      {TC_TARGET_HIP, "gfx", "not an AMD GPU architecture"},
      {TC_TARGET_HIP, "gfxz", "not an AMD GPU architecture"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tc_target_info ti;
    tc_str e;
    tc_str_init(&e);
    tc_status st = tc_target_info_make(cases[i].t, cases[i].arch, &ti, &e);
    TC_CHECK(st == TC_ERR_ARGUMENT && strstr(tc_str_cstr(&e), cases[i].needle),
             "%s '%s': %s: %s", tc_target_name(cases[i].t), cases[i].arch, tc_status_name(st),
             tc_str_cstr(&e));
    /* a refused arch has none of the arch's features, only the target's limits */
    TC_CHECK(!ti.arch_valid && ti.features == 0 && ti.max_threads == 1024, "%s: info",
             cases[i].arch);
    tc_str_free(&e);
  }
  /* a NULL message buffer is allowed */
  tc_target_info ti;
  TC_CHECK(tc_target_info_make(TC_TARGET_CUDA, "bogus", &ti, NULL) == TC_ERR_ARGUMENT, "NULL err");
}

static void test_defaults(void) {
  TC_CHECK(strcmp(tc_target_default_arch(TC_TARGET_CUDA), "sm_80") == 0, "CUDA compile default");
  TC_CHECK(strcmp(tc_target_default_arch(TC_TARGET_HIP), "gfx90a") == 0, "HIP default");
  TC_CHECK(tc_target_default_arch(TC_TARGET_OPENCL) == NULL, "OpenCL has no arch");
  TC_CHECK(strcmp(tc_target_ops_default_arch(TC_TARGET_CUDA), "sm_90a") == 0, "CUDA ops default");
  TC_CHECK(strcmp(tc_target_ops_default_arch(TC_TARGET_HIP), "gfx90a") == 0, "HIP ops default");
  tc_target_info ti = make(TC_TARGET_CUDA, NULL, TC_OK);
  TC_CHECK(!ti.arch_given && strcmp(ti.arch, "sm_80") == 0 && ti.sm == 80, "CUDA NULL: %s", ti.arch);
  ti = make(TC_TARGET_HIP, NULL, TC_OK);
  TC_CHECK(!ti.arch_given && strcmp(ti.arch, "gfx90a") == 0 && ti.smem_max == 65536, "HIP NULL");
  /* OpenCL: the device decides the limits (0), at launch */
  ti = make(TC_TARGET_OPENCL, NULL, TC_OK);
  TC_CHECK(ti.family == TC_ARCH_NONE && ti.max_threads == 0 && ti.smem_max == 0 && ti.arch[0] == 0,
           "OpenCL limits");
  TC_CHECK(strcmp(ti.name, "opencl") == 0 && strcmp(tc_target_name(TC_TARGET_HIP), "hip") == 0,
           "names");
}

static void test_build_and_run(void) {
  const struct {
    tc_target t;
    const char *name, *api;
    tc_build_kind build;
    tc_source_lang lang;
    int selector, runs, tensor_maps, swap, warp;
  } cases[] = {
      {TC_TARGET_OPENCL, "opencl", "OpenCL", TC_BUILD_OPENCL, TC_LANG_OPENCL_C, 1, 1, 0, 0, 32},
      {TC_TARGET_CUDA, "cuda", "CUDA", TC_BUILD_NVRTC, TC_LANG_CUDA_CXX, 0, 1, 1, 0, 32},
      {TC_TARGET_HIP, "hip", "HIP", TC_BUILD_HIPCC, TC_LANG_CUDA_CXX, 0, 1, 0, 1, 64},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tc_target_info ti = tc_target_info_of(cases[i].t);
    TC_CHECK(strcmp(ti.name, cases[i].name) == 0 && strcmp(ti.api, cases[i].api) == 0, "%s: api %s",
             cases[i].name, ti.api);
    TC_CHECK(ti.build == cases[i].build && ti.lang == cases[i].lang, "%s: build %d lang %d",
             cases[i].name, (int)ti.build, (int)ti.lang);
    TC_CHECK(ti.device_selector == cases[i].selector && ti.runs == cases[i].runs &&
                 ti.tensor_maps == cases[i].tensor_maps && ti.swizzle_swap == cases[i].swap,
             "%s: selector %d runs %d tensor maps %d swap %d", cases[i].name, ti.device_selector,
             ti.runs, ti.tensor_maps, ti.swizzle_swap);
    TC_CHECK(ti.warp == cases[i].warp && ti.arch_valid && !ti.arch_given, "%s: warp %d",
             cases[i].name, ti.warp);
    /* what does not depend on the arch is the same for every arch */
    const char *other = cases[i].t == TC_TARGET_CUDA  ? "sm_100a"
                        : cases[i].t == TC_TARGET_HIP ? "gfx950"
                                                      : NULL;
    tc_target_info tj = make(cases[i].t, other, TC_OK);
    TC_CHECK(tj.build == ti.build && tj.runs == ti.runs && tj.device_selector == ti.device_selector &&
                 tj.tensor_maps == ti.tensor_maps && tj.swizzle_swap == ti.swizzle_swap &&
                 tj.lang == ti.lang && strcmp(tj.api, ti.api) == 0,
             "%s %s: the same build and run", cases[i].name, other ? other : "NULL");
    /* a bad arch keeps them: callers check the arch later */
    if (other) {
      tc_target_info tb = make(cases[i].t, "bogus", TC_ERR_ARGUMENT);
      TC_CHECK(tb.build == ti.build && tb.runs == ti.runs, "%s bogus: build %d", cases[i].name,
               (int)tb.build);
    }
  }
  /* a value outside tc_target: nothing to build or run it with */
  tc_target_info ti;
  TC_CHECK(tc_target_info_make((tc_target)42, NULL, &ti, NULL) == TC_ERR_ARGUMENT, "target 42");
  TC_CHECK(ti.build == TC_BUILD_NONE && ti.lang == TC_LANG_NONE && !ti.runs && !ti.device_selector &&
               strcmp(ti.name, "?") == 0 && strcmp(ti.api, "?") == 0 && ti.arch[0] == 0 &&
               ti.features == 0,
           "target 42: build %d name %s arch '%s'", (int)ti.build, ti.name, ti.arch);
}

static void test_names(void) {
  const tc_target all[] = {TC_TARGET_OPENCL, TC_TARGET_CUDA, TC_TARGET_HIP};
  const char *names[] = {"opencl", "cuda", "hip"};
  for (int i = 0; i < 3; i++) {
    tc_target t = (tc_target)42;
    TC_CHECK(tc_target_from_name(names[i], &t) == 1 && t == all[i], "%s", names[i]);
    TC_CHECK(strcmp(tc_target_name(all[i]), names[i]) == 0, "name of %d", (int)all[i]);
  }
  const char *bad[] = {"CUDA", "", "cud", "cudax", "opencl ", "rocm"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    tc_target t = TC_TARGET_HIP;
    TC_CHECK(tc_target_from_name(bad[i], &t) == 0 && t == TC_TARGET_HIP, "'%s'", bad[i]);
  }
  tc_target t = TC_TARGET_CUDA;
  TC_CHECK(tc_target_from_name(NULL, &t) == 0 && t == TC_TARGET_CUDA, "NULL");
  TC_CHECK(strcmp(tc_target_name((tc_target)42), "?") == 0, "unknown name");
}

/* The arch the ops pass down: given, else sm_90a on CUDA (tc_compile's own
 * default is sm_80); NULL where the layers below pick the ops' default
 * themselves (HIP: gfx90a both) or there is no arch (OpenCL). */
static void test_ops_arch(void) {
  TC_CHECK(strcmp(tc_target_ops_arch(TC_TARGET_CUDA, NULL), "sm_90a") == 0, "CUDA NULL");
  TC_CHECK(strcmp(tc_target_ops_arch(TC_TARGET_CUDA, "sm_80"), "sm_80") == 0, "CUDA sm_80");
  TC_CHECK(tc_target_ops_arch(TC_TARGET_HIP, NULL) == NULL, "HIP NULL");
  TC_CHECK(strcmp(tc_target_ops_arch(TC_TARGET_HIP, "gfx942"), "gfx942") == 0, "HIP gfx942");
  TC_CHECK(tc_target_ops_arch(TC_TARGET_OPENCL, NULL) == NULL, "OpenCL");
  TC_CHECK(tc_target_ops_arch((tc_target)42, NULL) == NULL, "unknown");
}

/* A device's own numbers narrow the arch's: an MI210 (gfx90a, 104 CUs)
 * keeps the arch's 64 KiB of LDS and 1024 work-items; a device reporting
 * less wins; what it does not report (0) stays the arch's. */
static void test_device_limits(void) {
  tc_target_info ti = make(TC_TARGET_HIP, "gfx90a", TC_OK);
  TC_CHECK(ti.units == 0, "units before a device: %d", ti.units);
  tc_device_limits mi210 = {64, 1024, 65536, 104};
  tc_target_info_set_device(&ti, &mi210);
  TC_CHECK(ti.warp == 64 && ti.max_threads == 1024 && ti.smem_max == 65536 && ti.units == 104,
           "MI210: warp %d, %d threads, %lld bytes, %d units", ti.warp, ti.max_threads,
           (long long)ti.smem_max, ti.units);
  tc_device_limits small = {32, 256, 32768, 0};
  tc_target_info_set_device(&ti, &small);
  TC_CHECK(ti.warp == 32 && ti.max_threads == 256 && ti.smem_max == 32768 && ti.units == 104,
           "narrowed: warp %d, %d threads, %lld bytes, %d units", ti.warp, ti.max_threads,
           (long long)ti.smem_max, ti.units);
  tc_device_limits none = {0, 0, 0, 0};
  ti = make(TC_TARGET_HIP, "gfx950", TC_OK);
  tc_target_info_set_device(&ti, &none);
  TC_CHECK(ti.warp == 64 && ti.max_threads == 1024 && ti.smem_max == 163840 && ti.units == 0,
           "nothing reported: the arch's");
  TC_CHECK(ti.features & TC_FEAT_MFMA, "features are the arch's");
}

int main(void) {
  TC_RUN(test_cuda_archs);
  TC_RUN(test_amd_archs);
  TC_RUN(test_bad_archs);
  TC_RUN(test_defaults);
  TC_RUN(test_build_and_run);
  TC_RUN(test_names);
  TC_RUN(test_ops_arch);
  TC_RUN(test_device_limits);
  TC_MAIN_END();
}
