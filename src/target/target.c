/* target.c - the target model: the one parser of arch strings and the one
 * table of what each arch has (see target.h).  The numbers are the
 * vendors': NVIDIA's CUDA C++ Programming Guide (compute capabilities
 * table) and PTX ISA (the sm_ each instruction needs), AMD's CDNA ISA
 * guides and the LLVM AMDGPU processor table. */
#include "target.h"

#include <stdio.h>
#include <string.h>

/* What each target is, whatever its arch: the one table of names, device
 * APIs and ways to build and run (tc_target_info's fields of the same
 * names). */
static const struct target_row {
  tc_target target;
  const char *name, *api;
  tc_build_kind build;
  tc_source_lang lang;
  int device_selector, runs, tensor_maps, swizzle_swap;
} targets[] = {
    {TC_TARGET_OPENCL, "opencl", "OpenCL", TC_BUILD_OPENCL, TC_LANG_OPENCL_C, 1, 1, 0, 0},
    {TC_TARGET_CUDA, "cuda", "CUDA", TC_BUILD_NVRTC, TC_LANG_CUDA_CXX, 0, 1, 1, 0},
    {TC_TARGET_HIP, "hip", "HIP", TC_BUILD_HIPCC, TC_LANG_CUDA_CXX, 0, 1, 0, 1},
};
#define NTARGETS (sizeof targets / sizeof targets[0])

static const struct target_row *row_of(tc_target t) {
  for (size_t i = 0; i < NTARGETS; i++)
    if (targets[i].target == t) return &targets[i];
  return NULL;
}

const char *tc_target_name(tc_target t) {
  const struct target_row *r = row_of(t);
  return r ? r->name : "?";
}

int tc_target_from_name(const char *name, tc_target *out) {
  for (size_t i = 0; name && i < NTARGETS; i++)
    if (strcmp(name, targets[i].name) == 0) return *out = targets[i].target, 1;
  return 0;
}

const char *tc_target_default_arch(tc_target t) {
  return t == TC_TARGET_CUDA ? TC_CUDA_DEFAULT_ARCH : t == TC_TARGET_HIP ? TC_HIP_DEFAULT_ARCH : NULL;
}

const char *tc_target_ops_default_arch(tc_target t) {
  return t == TC_TARGET_CUDA ? TC_CUDA_OPS_DEFAULT_ARCH : tc_target_default_arch(t);
}

const char *tc_target_ops_arch(tc_target t, const char *arch) {
  if (arch) return arch;
  const char *ops = tc_target_ops_default_arch(t), *below = tc_target_default_arch(t);
  return ops && below && strcmp(ops, below) != 0 ? ops : NULL;
}

/* "sm_90a", "compute_100f": the number and the suffix letter; 0 when the
 * text is not of that form (at least two digits, at most one lowercase
 * letter after them). */
static int parse_sm(const char *arch, int *sm, char *suffix) {
  const char *p;
  if (strncmp(arch, "sm_", 3) == 0)
    p = arch + 3;
  else if (strncmp(arch, "compute_", 8) == 0)
    p = arch + 8;
  else
    return 0;
  int v = 0, digits = 0;
  for (; *p >= '0' && *p <= '9'; p++, digits++)
    if (digits < 6) v = v * 10 + (*p - '0');
  if (digits < 2 || digits > 6) return 0;
  char s = 0;
  if (*p >= 'a' && *p <= 'z') s = *p++;
  if (*p) return 0;
  *sm = v, *suffix = s;
  return 1;
}

static int hexval(char c) { return c >= '0' && c <= '9' ? c - '0' : c - 'a' + 10; }

/* "gfx90a", "gfx942:sramecc+:xnack-" (an LLVM target ID): major, minor,
 * stepping (the last two hex digits are minor and stepping); 0 when the
 * text is not of that form. */
static int parse_gfx(const char *arch, int *major, int *minor, int *stepping) {
  if (strncmp(arch, "gfx", 3) != 0 || strlen(arch) > 40) return 0;
  const char *p = arch + 3, *q = p;
  for (; *q && *q != ':'; q++)
    if (!((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f'))) return 0;
  size_t n = (size_t)(q - p);
  if (n == 0) return 0;
  for (const char *r = q; *r; r++)
    if (!((*r >= 'a' && *r <= 'z') || (*r >= '0' && *r <= '9') || *r == ':' || *r == '+' ||
          *r == '-'))
      return 0;
  *major = *minor = *stepping = 0;
  if (n >= 3) { /* shorter names ("gfx9") name no processor: no features */
    for (size_t i = 0; i + 2 < n; i++) *major = *major * 10 + hexval(p[i]) % 10;
    *minor = hexval(p[n - 2]), *stepping = hexval(p[n - 1]);
  }
  return 1;
}

static unsigned sm_features(int sm, char suffix) {
  unsigned f = 0;
  int specific = suffix == 'a' || suffix == 'f';
  if (sm >= 75) f |= TC_FEAT_LDMATRIX;
  if (sm >= 80) f |= TC_FEAT_CP_ASYNC | TC_FEAT_MMA_SYNC;
  if (sm >= 90) f |= TC_FEAT_STMATRIX | TC_FEAT_TMA | TC_FEAT_CLUSTERS;
  if (sm == 90 && suffix == 'a') f |= TC_FEAT_WGMMA;
  if (sm >= 90 && specific) f |= TC_FEAT_SETMAXNREG;
  if ((sm == 100 || sm == 101 || sm == 103 || sm == 110) && specific) f |= TC_FEAT_TCGEN05;
  return f;
}

static unsigned gfx_features(int major, int minor, int stepping) {
  unsigned f = 0;
  int cdna = major == 9 && ((minor == 0 && (stepping == 8 || stepping == 10)) || minor == 4 ||
                            minor == 5);
  if (cdna) f |= TC_FEAT_MFMA;
  if (cdna && !(minor == 0 && stepping == 8)) f |= TC_FEAT_MFMA_BF16_1K; /* gfx90a and later */
  if (major == 9 && minor >= 4) f |= TC_FEAT_MFMA_F8;                    /* gfx940 and later */
  return f;
}

/* Shared memory per block with the opt-in attribute, by compute
 * capability (the CUDA C++ Programming Guide's table of technical
 * specifications): 227 KiB on sm_90 and sm_100-class GPUs, 163 KiB on
 * sm_80 / sm_87, 99 KiB on sm_86 / sm_89 / sm_120, 64 KiB on sm_75, 96 KiB
 * on sm_70 / sm_72, 48 KiB before. */
static int64_t sm_smem_optin(int sm) {
  if (sm >= 120) return 99 * 1024;
  if (sm >= 90) return 227 * 1024;
  if (sm == 80 || sm == 87) return 163 * 1024;
  if (sm >= 86) return 99 * 1024;
  if (sm >= 80) return 163 * 1024;
  if (sm == 75) return 64 * 1024;
  if (sm >= 70) return 96 * 1024;
  return 48 * 1024;
}

tc_status tc_target_info_make(tc_target target, const char *arch, tc_target_info *out, tc_str *err) {
  memset(out, 0, sizeof *out);
  out->target = target;
  out->name = tc_target_name(target);
  const struct target_row *r = row_of(target);
  out->api = "?";
  if (r) {
    out->api = r->api, out->build = r->build, out->lang = r->lang;
    out->device_selector = r->device_selector, out->runs = r->runs;
    out->tensor_maps = r->tensor_maps, out->swizzle_swap = r->swizzle_swap;
  }
  out->arch_valid = 1;
  out->warp = 32;
  if (target == TC_TARGET_OPENCL) {
    /* the device decides the limits (checked at launch); the dialect
     * emulates the NVIDIA instructions below with 32-lane warps */
    out->features = TC_FEAT_LDMATRIX | TC_FEAT_STMATRIX | TC_FEAT_TCGEN05;
    return TC_OK;
  }
  out->arch_given = arch != NULL;
  if (!arch) arch = tc_target_default_arch(target);
  if (!arch) arch = ""; /* a value outside tc_target: no default */
  snprintf(out->arch, sizeof out->arch, "%s", arch);
  out->max_threads = 1024;
  if (target == TC_TARGET_CUDA) {
    out->family = TC_ARCH_SM;
    out->max_block_z = 64;
    out->regs_per_sm = 65536; /* 64 K 32-bit registers per SM */
    out->max_regs_per_thread = 255;
    if (!parse_sm(arch, &out->sm, &out->suffix)) {
      out->arch_valid = 0;
      if (err) tc_str_printf(err, "bad CUDA architecture '%s' (expected sm_XX or compute_XX, e.g. sm_80, "
                         "sm_90a)", arch);
      return TC_ERR_ARGUMENT;
    }
    out->features = sm_features(out->sm, out->suffix);
    out->smem_max = sm_smem_optin(out->sm);
    return TC_OK;
  }
  out->family = TC_ARCH_GFX;
  out->warp = 64;
  out->max_block_z = 1024;
  out->max_regs_per_thread = 512; /* CDNA 2 / 3: 256 VGPRs + 256 AGPRs per lane */
  if (!parse_gfx(arch, &out->gfx_major, &out->gfx_minor, &out->gfx_stepping)) {
    out->arch_valid = 0;
    out->smem_max = 65536;
    if (err) tc_str_printf(err, "'%s' is not an AMD GPU architecture (gfx90a, gfx940, gfx942, gfx950 ...)",
                  arch);
    return TC_ERR_ARGUMENT;
  }
  /* LDS per work-group: 64 KiB on CDNA 2 / 3, 160 KiB on gfx950 (CDNA 4) */
  int gfx950 = out->gfx_major == 9 && out->gfx_minor == 5 && out->gfx_stepping == 0;
  out->smem_max = gfx950 ? 163840 : 65536;
  out->features = gfx_features(out->gfx_major, out->gfx_minor, out->gfx_stepping);
  return TC_OK;
}

tc_target_info tc_target_info_of(tc_target target) {
  tc_target_info ti;
  tc_target_info_make(target, NULL, &ti, NULL); /* the default arch parses */
  return ti;
}

void tc_target_info_set_device(tc_target_info *ti, const tc_device_limits *d) {
  if (d->warp > 0) ti->warp = d->warp;
  if (d->max_threads > 0) ti->max_threads = d->max_threads;
  if (d->smem_max > 0) ti->smem_max = d->smem_max;
  if (d->units > 0) ti->units = d->units;
}
