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
  int64_t tiles[5];    /* --tiles BM,BN,BK,TM,TN (tiles[0] 0: the scheduler's) */
  tc_matmul_macro macro; /* --macro (with --tiles) */
  int stages;          /* --stages (with --tiles) */
} conv_fusion_opts;

void conv_fusion_opts_init(conv_fusion_opts *f);
/* The help lines of --path, --epilogue, --tiles, --macro and --stages. */
void conv_fusion_usage(FILE *out);
/* Takes argv[*i] when it is --path, --epilogue, --tiles, --macro or
 * --stages (1, with *rc CLI_OK or the usage error's code); 0 when it is
 * none of them. */
int conv_fusion_option(op_opts *o, conv_fusion_opts *f, int argc, char **argv, int *i, int *rc);
/* A usage error where --tiles, --macro or --stages do not fit (without
 * --path fusion; --macro or --stages without --tiles), else CLI_OK. */
int conv_fusion_check(op_opts *o, const conv_fusion_opts *f);
/* The command with --path fusion, on the checked description d of
 * problem p: prints the problem, the device and the kernels, writes
 * --emit, runs and verifies (-V 1) where there is a device, else builds
 * (CUDA: NVRTC, HIP: hipcc).  Returns the exit code. */
int conv_fusion_cmd(op_opts *o, const conv_fusion_opts *f, const tc_conv2d_desc *d,
                    const tc_conv_problem *p);

#endif
