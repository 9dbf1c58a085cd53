/* conv_fusion_cli.h - `tilec conv2d --path fusion [--epilogue LIST]`: the
 * convolution's GEMMs as fusions (tc_conv2d_fusion), made by the
 * compiler's matmul schedule instead of the GEMM templates, with a
 * forward epilogue (bias, activation) in the same kernel. */
#ifndef TILEC_CONV_FUSION_CLI_H
#define TILEC_CONV_FUSION_CLI_H

#include "tilec/tilec.h"
#include "../src/ops/conv.h"
#include "op_cli.h"

typedef struct conv_fusion_opts {
  int fusion;          /* --path fusion (0: template, the default) */
  int bias;            /* --epilogue has bias */
  int act;             /* its activation: TC_RELU, TC_GELU, TC_SILU; -1 none */
  int epilogue_given;
} conv_fusion_opts;

void conv_fusion_opts_init(conv_fusion_opts *f);
/* The help lines of --path and --epilogue. */
void conv_fusion_usage(FILE *out);
/* Takes argv[*i] when it is --path or --epilogue (1, with *rc CLI_OK or
 * the usage error's code); 0 when it is neither. */
int conv_fusion_option(op_opts *o, conv_fusion_opts *f, int argc, char **argv, int *i, int *rc);
/* The command with --path fusion, on the checked description d of
 * problem p: prints the problem, the device and the kernels, writes
 * --emit, runs and verifies (-V 1) where there is a device, else builds
 * (CUDA: NVRTC, HIP: hipcc).  Returns the exit code. */
int conv_fusion_cmd(op_opts *o, const conv_fusion_opts *f, const tc_conv2d_desc *d,
                    const tc_conv_problem *p);

#endif
