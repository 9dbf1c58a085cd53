/* dispatch.c - running a kernel on whichever target it was made for: the
 * one place that picks the OpenCL, CUDA or HIP runtime for a launch
 * (tc_rt_launch, runtime.h) or for the device's name (tc_rt_device_name),
 * so adding a target touches these switches. */
#include <string.h>

#include "runtime.h"

/* CUDA with PTX the caller makes (or finds in its cache): the launch's
 * tensor maps and the device are checked first, as tc_cuda_run does,
 * since they need no compiler. */
static tc_status cuda_launch_ptx(const tc_rt_code *code, tc_rt_buffer *bufs, int nbufs,
                                 const tc_launch *launch, double *ms, tc_str *err) {
  if (tc_tmap_check_all(launch->tmaps, launch->ntmaps, nbufs, err)) return TC_ERR_ARGUMENT;
  if (!tc_cuda_available(err)) return TC_ERR_NO_DEVICE;
  const char *ptx = NULL;
  tc_status st = code->ptx(code->ctx, &ptx, err);
  if (st) return st;
  return tc_cuda_run_ptx(ptx, code->name, code->arch, bufs, nbufs, launch, ms, err);
}

tc_status tc_rt_launch(tc_target target, tc_cl *cl, const tc_rt_code *code, tc_rt_buffer *bufs,
                       int nbufs, const tc_launch *launch, double *ms, tc_str *err) {
  switch (target) {
  case TC_TARGET_OPENCL:
    return tc_cl_run(cl, code->source, code->name, bufs, nbufs, launch, ms, err);
  case TC_TARGET_CUDA:
    if (code->ptx) return cuda_launch_ptx(code, bufs, nbufs, launch, ms, err);
    return tc_cuda_run(code->source, code->name, code->arch, bufs, nbufs, launch, ms, err);
  case TC_TARGET_HIP:
    return tc_hip_run_code(code, bufs, nbufs, launch, ms, err);
  }
  tc_str_printf(err, "running %s kernels is not supported in this build", tc_target_name(target));
  return TC_ERR_UNSUPPORTED;
}

tc_status tc_rt_device_name(tc_target target, const char *selector, tc_str *name, tc_str *err) {
  switch (target) {
  case TC_TARGET_OPENCL: {
    tc_cl *cl = NULL;
    tc_status st = tc_cl_open(selector, &cl, err);
    if (st != TC_OK) return st;
    tc_str_cat(name, tc_cl_device_name(cl));
    tc_cl_close(cl);
    return TC_OK;
  }
  case TC_TARGET_CUDA: {
    if (!tc_cuda_available(err)) return TC_ERR_NO_DEVICE;
    tc_str desc;
    tc_str_init(&desc);
    tc_cuda_describe(&desc);
    const char *p = strstr(tc_str_cstr(&desc), "CUDA device 0: ");
    if (p) {
      p += strlen("CUDA device 0: ");
      tc_str_catn(name, p, strcspn(p, "\n"));
    } else {
      tc_str_cat(name, "CUDA device 0");
    }
    tc_str_free(&desc);
    return TC_OK;
  }
  case TC_TARGET_HIP: {
    tc_hip_device d;
    if (!tc_hip_device_get(&d, err)) return TC_ERR_NO_DEVICE;
    tc_str_cat(name, d.name);
    return TC_OK;
  }
  }
  tc_str_printf(err, "target %s is not available yet", tc_target_name(target));
  return TC_ERR_UNSUPPORTED;
}

const char *tc_rt_device_arch(tc_target target) {
  return target == TC_TARGET_HIP ? tc_hip_device_arch() : NULL;
}
