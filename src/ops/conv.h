/* conv.h - 2-D and 3-D convolution as implicit GEMM (after rocMLIR's MIOpen
 * dialect): forward, backward-data and backward-weight, each lowered to one
 * or more gridwise GEMMs over coordinate-transform views of the tensors in
 * memory. */
#ifndef TC_CONV_H
#define TC_CONV_H

#include "gemm.h"

typedef enum tc_conv_dir {
  TC_CONV_FWD = 1,
  TC_CONV_BWD_DATA = 2,
  TC_CONV_BWD_WEIGHT = 4
} tc_conv_dir;

/* MIOpenDriver's conventions: input [N, C, H, W], filter [K, C/G, Y, X],
 * output [N, K, Ho, Wo], in the layouts given by the layout strings
 * ("NCHW", "KCYX", "NKHW", or "NHWC", "KYXC", "NHWK").  With spatial 3,
 * a 3-D convolution: input [N, C, D, H, W], filter [K, C/G, Z, Y, X],
 * output [N, K, Do, Ho, Wo] ("NCDHW", "KCZYX", "NKDHW", or "NDHWC",
 * "KZYXC", "NDHWK"); the depth is one more spatial dim everywhere. */
typedef struct tc_conv_problem {
  tc_conv_dir dir;
  int64_t n, c, h, w, k, y, x;
  int64_t pad_h_l, pad_h_r, pad_w_l, pad_w_r;
  int64_t stride_h, stride_w, dil_h, dil_w;
  int64_t groups;
  int spatial;                 /* 3: 3-D (the depth fields below); 0 or 2: 2-D */
  int64_t d, z;                /* 3-D: input depth, filter depth */
  int64_t pad_d_l, pad_d_r, stride_d, dil_d;
  tc_dtype dtype;              /* f32 or f16; accumulation is f32 */
  char in_layout[8], fil_layout[8], out_layout[8];
} tc_conv_problem;

/* Fills defaults: stride 1, dilation 1, groups 1, NCHW/KCYX/NKHW, f32
 * (2-D; the depth fields 1, 1, 0, 0, 1, 1 for a caller that sets spatial
 * 3 and the 3-D layouts). */
void tc_conv_problem_init(tc_conv_problem *p);
/* Sets spatial 3 and the 3-D default layouts NCDHW / KCZYX / NKDHW. */
void tc_conv_problem_make_3d(tc_conv_problem *p);
/* Checks the problem (positive sizes, channels divisible by groups, a
 * non-negative output size, known layouts) and computes Ho, Wo.  Returns 0
 * or -1 with one clear line in err. */
int tc_conv_check(const tc_conv_problem *p, int64_t *ho, int64_t *wo, tc_str *err);
/* tc_conv_check with the output depth too (1 for a 2-D problem). */
int tc_conv_check3(const tc_conv_problem *p, int64_t *dout, int64_t *ho, int64_t *wo, tc_str *err);
/* Element counts of the three tensors. */
int64_t tc_conv_input_elems(const tc_conv_problem *p);
int64_t tc_conv_filter_elems(const tc_conv_problem *p);
int64_t tc_conv_output_elems(const tc_conv_problem *p);
/* MIOpenDriver-style problem string used as the perf-database key, e.g.
 * "conv2d -F 1 -n 2 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1
 * -l 1 -j 1 -g 1 -t f32 --in_layout NCHW --fil_layout KCYX --out_layout
 * NKHW" (padding written as --pad_h_l .. when asymmetric).  A 3-D problem
 * is "conv3d ..." with MIOpenDriver's --in_d, --fil_d, --pad_d,
 * --conv_stride_d and --dilation_d in their places. */
void tc_conv_problem_string(const tc_conv_problem *p, tc_str *out);

/* Which of the three conv buffers a kernel parameter is. */
typedef enum tc_conv_buf { TC_BUF_INPUT, TC_BUF_FILTER, TC_BUF_OUTPUT } tc_conv_buf;

typedef struct tc_conv_step {
  tc_gemm_kernel kernel;       /* or a zero-init kernel (gemm fields unused) */
  tc_conv_buf args[3];         /* buffers bound to the kernel's parameters */
  int nargs;
  int64_t gemm_m, gemm_n, gemm_k, gemm_g; /* 0 for a zero-init kernel */
  tc_gemm_params params;       /* this GEMM's parameters (zero for zero-init) */
} tc_conv_step;

/* A plan: kernels to launch in order (backward-data with stride > 1 needs
 * several GEMMs and possibly a zero-init kernel). */
typedef struct tc_conv_plan {
  tc_conv_problem problem;
  tc_gemm_params params;       /* the parameters every GEMM uses when they
                                  were given; else the first GEMM's (each
                                  step has its own in steps[i].params) */
  tc_conv_step *steps;
  int nsteps;
  tc_target target;            /* the target the kernels were generated for */
} tc_conv_plan;

/* Plans the convolution for target.  params NULL: the heuristic's choice
 * for each GEMM (tc_gemm_default_for the GEMM's shape on target and arch:
 * on CUDA an mma.sync kernel for f16/bf16, on HIP an XDLOPS one, else the
 * FMA kernel); otherwise these parameters (derived and checked against
 * each GEMM's shape; a violated rule is an error naming it).  arch: the
 * CUDA or AMD architecture the kernels are for (NULL: the default, sm_80
 * or newer on CUDA). */
tc_status tc_conv_plan_make_for(const tc_conv_problem *p, const tc_gemm_params *params,
                                tc_target target, const char *arch, tc_conv_plan **out, tc_str *err);
/* tc_conv_plan_make_for with arch NULL. */
tc_status tc_conv_plan_make(const tc_conv_problem *p, const tc_gemm_params *params,
                            tc_target target, tc_conv_plan **out, tc_str *err);
void tc_conv_plan_free(tc_conv_plan *plan);

/* Runs a plan on its target with host buffers in the problem's layouts
 * (device: the OpenCL device selector, or the CUDA / AMD arch, NULL: the
 * default, tc_tune_arch's): in, fil, out as the direction reads/writes them
 * (forward writes out; backward-data writes in; backward-weight writes
 * fil).  *ms gets the summed kernel time.  repeat > 0: each step, after
 * its run and copy back, is launched repeat more times back to back
 * (tc_launch's repeat), and repeat_ms[r] gets the sum over the steps of
 * their r-th timed launch; the host buffers hold the result of one run of
 * the plan. */
tc_status tc_conv_run(const tc_conv_plan *plan, const char *device, void *in, void *fil,
                      void *out, double *ms, int repeat, double *repeat_ms, tc_str *err);

/* Plain C reference, accumulating in double, for verification: reads the
 * two tensors the direction reads and writes the third (as tc_conv_run). */
void tc_conv_reference(const tc_conv_problem *p, void *in, void *fil, void *out);

/* ---- additions (conv owner) ---- */

/* "fwd", "bwd-data", "bwd-weight" (and "?" for anything else). */
const char *tc_conv_dir_name(tc_conv_dir dir);
/* The buffer a direction writes: OUTPUT, INPUT or FILTER. */
tc_conv_buf tc_conv_written_buf(tc_conv_dir dir);

/* One GEMM of a convolution's lowering, before any kernel exists: the
 * three coordinate-transform views over the conv tensors (upper dims
 * [G,K,M], [G,K,N], [G,M,N]), the buffers they read, and the sizes. */
typedef struct tc_conv_gemm {
  tc_view *a, *b, *c;          /* owned */
  tc_conv_buf abuf, bbuf, cbuf;
  int64_t g, m, n, k;
  char name[48];               /* "fwd", "bwd_data_y1_x0", "bwd_weight" */
} tc_conv_gemm;

/* Lowers a problem to its GEMMs (see docs/conv.md for every transform).
 * *zero_init is set when some element of the written tensor is written by
 * no GEMM (backward-data only) and the tensor must be zeroed first.
 * *ngemms may be 0 (backward-data where no input element gets any
 * contribution: only the zero-init).  Returns 0 or -1 + err. */
int tc_conv_lower(const tc_conv_problem *p, tc_conv_gemm **gemms, int *ngemms,
                  int *zero_init, tc_str *err);
void tc_conv_gemms_free(tc_conv_gemm *gemms, int ngemms);

/* Verifies the tensor the direction writes, as tc_conv_run left it in the
 * buffers, against the double-precision reference computed from the two
 * it reads.  An element passes when |got - want| <= bound, where K is the
 * number of products summed (C/G*Y*X forward, K/G*Y*X backward-data,
 * N*Ho*Wo backward-weight), u = 2^-24, S the sum of |products| and
 * gamma = (K+1)u / (1 - (K+1)u):
 *   f32: bound = gamma * S + (K+1) * 2^-149
 *   f16: that, plus 2^-11 * (|want| + that) + 2^-25 (the final rounding)
 * i.e. the worst-case error of an f32 accumulation in any order (see
 * docs/conv.md).  Returns the number of failing elements (0: pass) or -1
 * for a bad problem; *worst (may be NULL) gets the largest
 * |got - want| / bound seen; msg gets a one-line summary naming the first
 * failing element. */
int64_t tc_conv_verify(const tc_conv_problem *p, const void *in, const void *fil,
                       const void *out, double *worst, tc_str *msg);
/* tc_conv_verify of a written tensor to which a per-channel bias (bias[c],
 * one element of the dtype per channel of the tensor; NULL: none) was
 * added after the convolution, in a second kernel: forward (the bias of
 * the output's K) or backward data (of the input's C: the forward of a
 * transposed convolution).  The reference is the sum plus bias[c], and
 * the bound grows by the rounding of that addition (in f32, then to f16
 * for f16 tensors). */
int64_t tc_conv_verify_bias(const tc_conv_problem *p, const void *in, const void *fil,
                            const void *out, const void *bias, double *worst, tc_str *msg);

/* ---- the fusion path (conv_fusion.c) ---- */

/* What follows a forward convolution in its kernel: bias 1 adds a
 * per-output-channel bias (K elements of the dtype), act (TC_RELU,
 * TC_GELU, TC_SILU; -1: none) is applied after it. */
typedef struct tc_conv_epi {
  int bias;
  int act;
} tc_conv_epi;

/* The bias buffer, after the three of tc_conv_buf. */
enum { TC_CONV_BUF_BIAS = 3 };

/* One GEMM of the lowering as a fusion: inputs the two operands seen
 * through their views (and the bias), the output stored through the
 * result's view; args[] the buffers of its inputs then its output (a
 * tc_conv_buf or TC_CONV_BUF_BIAS), as tc_kernel_run takes them. */
typedef struct tc_conv_fusion {
  tc_fusion *f;
  int args[4], nargs;
  char name[48];
} tc_conv_fusion;

/* The fusions of problem p (its direction's GEMMs, tc_conv_lower's, in
 * order; ep may be NULL: none); *zero_init as tc_conv_lower's.  Returns
 * 0 or -1 + err (an epilogue on a backward direction, a bad activation,
 * a bad problem).  f32, f16 and bf16. */
int tc_conv_fusions(const tc_conv_problem *p, const tc_conv_epi *ep, tc_conv_fusion **out,
                    int *n, int *zero_init, tc_str *err);
void tc_conv_fusions_free(tc_conv_fusion *fs, int n);

#define TC_CONV_FUSION_MAX_INFO 8
/* What a fusion-path run made: the kernels, and the first ones' schedule
 * notes. */
typedef struct tc_conv_fusion_info {
  int total_kernels, nkernels;
  char note[TC_CONV_FUSION_MAX_INFO][600];
} tc_conv_fusion_info;

/* Builds the fusions, schedules each (tc_schedule_auto for target and
 * arch; tc_schedule_matmul with tiles where tiles is not NULL), compiles and runs them in order on the host buffers (as
 * tc_conv_run; bias NULL unless ep->bias), zeroing the written tensor on
 * the host first where no GEMM writes some of its elements.  *ms (may be
 * NULL) gets the summed kernel time; with repeat > 0 each kernel then
 * runs repeat more times and repeat_ms[r] gets the sum over the kernels
 * of their r-th timed run; info (may be NULL) the kernels. */
tc_status tc_conv_fusion_run(const tc_conv_problem *p, const tc_conv_epi *ep, tc_target target,
                             const char *arch, const tc_matmul_tiles *tiles, const char *device,
                             void *in, void *fil, void *out,
                             const void *bias, double *ms, int repeat, double *repeat_ms,
                             tc_conv_fusion_info *info, tc_str *err);

/* tc_conv_verify_bias with an activation after the bias (act: TC_RELU,
 * TC_GELU or TC_SILU; -1 none): the reference is act(sum + bias[c]),
 * the bound grown by the activation's slope (1 for ReLU, 1.13 for GELU
 * and SiLU), its f32 evaluation and the final rounding (docs/conv.md). */
int64_t tc_conv_verify_epilogue(const tc_conv_problem *p, const void *in, const void *fil,
                                const void *out, const void *bias, int act, double *worst,
                                tc_str *msg);

#endif
