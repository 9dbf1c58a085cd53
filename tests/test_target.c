/* test_target.c - the target model (src/target): what each arch string
 * parses to, checked against the vendors' published numbers.
 *
 * Sources:
 *  - NVIDIA CUDA C++ Programming Guide, "Technical Specifications per
 *    Compute Capability": warp size 32; 1024 threads per block; block z
 *    dimension at most 64; 64 K 32-bit registers per SM; 255 registers
 *    per thread; shared memory per block (opt-in) 227 KiB = 232448 bytes
 *    on compute capability 9.0 and 10.0 (the most of any arch: tilec
 *    checks that at compile time and the device's own at launch).
 *  - NVIDIA PTX ISA, each instruction's "Target ISA notes": ldmatrix
 *    sm_75+, cp.async and mma.sync .f16/.bf16 m16n8k16 sm_80+, stmatrix,
 *    cp.async.bulk.tensor and clusters sm_90+, wgmma sm_90a, setmaxnreg
 *    sm_90a (and the a / f archs after it), tcgen05 sm_100a/f, sm_101a/f,
 *    sm_103a/f, sm_110a/f.
 *  - AMD CDNA 2 / CDNA 3 ISA guides and the LLVM AMDGPU processor table:
 *    wavefront 64 on gfx9; LDS 64 KiB per work-group on gfx90a, gfx940,
 *    gfx942, 160 KiB on gfx950; 1024 work-items per work-group; MFMA on
 *    gfx908, gfx90a, gfx94x, gfx950; bf16 "_1k" MFMA from gfx90a; fp8 MFMA
 *    from gfx940. */
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
  } cases[] = {
      {"sm_70", 70, 0, 0},
      {"sm_75", 75, 0, TC_FEAT_LDMATRIX},
      {"sm_80", 80, 0, TC_FEAT_LDMATRIX | TC_FEAT_CP_ASYNC | TC_FEAT_MMA_SYNC},
      {"sm_86", 86, 0, TC_FEAT_LDMATRIX | TC_FEAT_CP_ASYNC | TC_FEAT_MMA_SYNC},
      {"sm_90", 90, 0, sm90},
      {"sm_90a", 90, 'a', sm90 | TC_FEAT_WGMMA | TC_FEAT_SETMAXNREG},
      {"compute_90", 90, 0, sm90},
      {"compute_90a", 90, 'a', sm90 | TC_FEAT_WGMMA | TC_FEAT_SETMAXNREG},
      {"sm_100", 100, 0, sm90},
      {"sm_100a", 100, 'a', sm90 | TC_FEAT_SETMAXNREG | TC_FEAT_TCGEN05},
      {"sm_100f", 100, 'f', sm90 | TC_FEAT_SETMAXNREG | TC_FEAT_TCGEN05},
      {"sm_103a", 103, 'a', sm90 | TC_FEAT_SETMAXNREG | TC_FEAT_TCGEN05},
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
    TC_CHECK(ti.smem_max == 232448 && ti.regs_per_sm == 65536 && ti.max_regs_per_thread == 255,
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
  TC_RUN(test_device_limits);
  TC_MAIN_END();
}
