/* fuzz_conv.c - libFuzzer harness for convolution problems: a
 * tc_conv2d_desc (small sizes, up to three fields set to extreme values, any
 * direction and dtype value, fuzzed layout strings), or with one flag bit
 * a tc_conv3d_desc (the same plus the depth fields, one of them possibly
 * extreme), and a perf config or the heuristic, planned for opencl, cuda
 * or hip.  Every call must succeed
 * or fail with a message; a plan must have kernels with sources. */
#include <stdlib.h>
#include <string.h>

#include "tilec/tilec.h"
#include "fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  setenv("TILEC_CACHE", "0", 1);
  setenv("TILEC_EXPERIMENTAL_WGMMA", "1", 1);
  return 0;
}

static const int64_t extremes[] = {0, -1, INT64_MIN, INT64_MAX, (int64_t)1 << 31,
                                   INT32_MAX, (int64_t)1 << 62, 100000};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_in in = {data, size};
  tc_conv2d_desc d;
  tc_conv2d_desc_init(&d);
  static const int dirs[] = {TC_CONV2D_FORWARD, TC_CONV2D_BACKWARD_DATA,
                             TC_CONV2D_BACKWARD_WEIGHT, 0, 3};
  d.direction = (tc_conv2d_direction)dirs[fz_range(&in, 0, 4)];
  int64_t *f[] = {&d.n, &d.c, &d.h, &d.w, &d.k, &d.y, &d.x, &d.pad_top, &d.pad_bottom,
                  &d.pad_left, &d.pad_right, &d.stride_h, &d.stride_w, &d.dilation_h,
                  &d.dilation_w, &d.groups};
  static const int64_t lo[] = {0, 0, 0, 0, 0, 0, 0, -1, -1, -1, -1, 0, 0, 0, 0, 0};
  static const int64_t hi[] = {3, 24, 20, 20, 24, 5, 5, 4, 4, 4, 4, 4, 4, 3, 3, 8};
  for (int i = 0; i < 16; i++) *f[i] = fz_range(&in, lo[i], hi[i]);
  for (int i = 0; i < 3; i++) {
    unsigned ex = fz_byte(&in);
    if (ex & 0x80) *f[ex % 16] = extremes[ex >> 4 & 7];
  }
  d.dtype = (tc_dtype)fz_range(&in, 0, 5);
  unsigned flags = fz_byte(&in);
  tc_op_options opt;
  memset(&opt, 0, sizeof opt);
  opt.target = (tc_target)((flags & 3) % 3);
  opt.perfdb = "";
  char *lay[3] = {NULL, NULL, NULL};
  const char **dl[3] = {&d.in_layout, &d.fil_layout, &d.out_layout};
  for (int i = 0; i < 3; i++)
    if (flags >> (2 + i) & 1) *dl[i] = lay[i] = fz_field(&in, 12);
  int heuristic = flags >> 5 & 1, three = flags >> 6 & 1;
  tc_conv3d_desc d3;
  tc_conv3d_desc_init(&d3);
  if (three) {
    int64_t *g[] = {&d3.d, &d3.z, &d3.pad_front, &d3.pad_back, &d3.stride_d, &d3.dilation_d};
    static const int64_t glo[] = {0, 0, -1, -1, 0, 0}, ghi[] = {9, 4, 3, 3, 3, 3};
    for (int i = 0; i < 6; i++) *g[i] = fz_range(&in, glo[i], ghi[i]);
    unsigned ex = fz_byte(&in);
    if (ex & 0x80) *g[ex % 6] = extremes[ex >> 4 & 7];
    d3.direction = d.direction, d3.n = d.n, d3.c = d.c, d3.h = d.h, d3.w = d.w, d3.k = d.k;
    d3.y = d.y, d3.x = d.x, d3.pad_top = d.pad_top, d3.pad_bottom = d.pad_bottom;
    d3.pad_left = d.pad_left, d3.pad_right = d.pad_right, d3.stride_h = d.stride_h;
    d3.stride_w = d.stride_w, d3.dilation_h = d.dilation_h, d3.dilation_w = d.dilation_w;
    d3.groups = d.groups, d3.dtype = d.dtype;
    d3.in_layout = d.in_layout, d3.fil_layout = d.fil_layout, d3.out_layout = d.out_layout;
  }
  char *text = fz_rest(&in);

  tc_conv2d *c = three ? tc_conv3d_new(&d3, &opt) : tc_conv2d_new(&d, &opt);
  FZ_ASSERT(tc_conv2d_problem_string(c)[0], "no problem string");
  int64_t dout = -7, ho = -7, wo = -7;
  if (tc_conv3d_output_size(c, &dout, &ho, &wo) == TC_OK) {
    FZ_ASSERT(dout >= 1 && ho >= 1 && wo >= 1, "output size %lld x %lld x %lld", (long long)dout,
              (long long)ho, (long long)wo);
    FZ_ASSERT(three || dout == 1, "a 2-D convolution of depth %lld", (long long)dout);
    for (int t = 0; t < 3; t++)
      FZ_ASSERT(tc_conv2d_elems(c, (tc_conv2d_tensor)t) >= 1, "tensor %d has no elements", t);
    tc_status st = tc_conv2d_plan(c, heuristic ? NULL : text);
    FZ_LOG("%s: tc_conv2d_plan(%s) on %s: %s %s", tc_conv2d_problem_string(c),
           heuristic ? "NULL" : text, tc_target_name(opt.target), tc_status_name(st),
           st ? tc_conv2d_error(c) : tc_conv2d_perf_config(c));
    if (st == TC_OK) {
      int nk = tc_conv2d_num_kernels(c);
      FZ_ASSERT(nk >= 1, "a plan without kernels");
      for (int i = 0; i < nk; i++) {
        const char *src = tc_conv2d_kernel_source(c, i);
        FZ_ASSERT(src && src[0] && tc_conv2d_kernel_name(c, i), "kernel %d has no source", i);
        int64_t grid[3], block[3];
        tc_conv2d_tensor args[3];
        FZ_ASSERT(tc_conv2d_kernel_launch(c, i, grid, block, args) >= 1, "kernel %d: no args", i);
      }
      FZ_ASSERT(!tc_conv2d_kernel_source(c, nk) && !tc_conv2d_kernel_source(c, -1),
                "a kernel out of range");
    } else {
      FZ_ASSERT(tc_conv2d_error(c)[0], "tc_conv2d_plan failed (%s) without a message",
                tc_status_name(st));
    }
  } else {
    FZ_ASSERT(tc_conv2d_error(c)[0], "tc_conv2d_output_size failed without a message");
    FZ_LOG("%s: %s", tc_conv2d_problem_string(c), tc_conv2d_error(c));
    FZ_ASSERT(tc_conv2d_plan(c, text) == TC_ERR_ARGUMENT, "planned a problem that is not valid");
  }
  tc_conv2d_free(c);
  for (int i = 0; i < 3; i++) free(lay[i]);
  free(text);
  return 0;
}
