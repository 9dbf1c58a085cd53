/* launch.c - the checks of a tc_launch that every runtime (OpenCL, CUDA,
 * HIP) makes the same way: its timed repeats (runtime.h); the grid of a
 * persistent launch. */
#include "runtime.h"

size_t tc_launch_persistent_grid(size_t grid, int sms, int multiple) {
  if (sms <= 0 || multiple <= 0) return grid;
  size_t cap = (size_t)(sms / multiple) * (size_t)multiple;
  if (cap < (size_t)multiple) cap = (size_t)multiple;
  return grid < cap ? grid : cap;
}

tc_status tc_launch_check_repeat(const tc_launch *launch, const char *kernel_name, tc_str *err) {
  const char *name = kernel_name ? kernel_name : "the kernel";
  if (launch->repeat < 0) {
    tc_str_printf(err, "launch of '%s': repeat is %d; it is the number of timed launches after "
                  "the first and must be 0 or more", name, launch->repeat);
    return TC_ERR_ARGUMENT;
  }
  if (launch->repeat > 0 && !launch->repeat_ms) {
    tc_str_printf(err, "launch of '%s': repeat is %d but repeat_ms is NULL; pass an array of %d "
                  "doubles for the times of the timed launches", name, launch->repeat,
                  launch->repeat);
    return TC_ERR_ARGUMENT;
  }
  for (int i = 0; i < launch->repeat; i++) launch->repeat_ms[i] = 0;
  return TC_OK;
}
