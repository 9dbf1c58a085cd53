/* gemm_fusion.h - `tilec gemm --epilogue LIST`: the GEMM as a fusion
 * (tc_matmul) with the listed ops after it, scheduled by the matmul
 * scheduler into one kernel (gemm_fusion.c).  cmd_gemm.c reads this
 * option among its own and hands the run over. */
#ifndef TILEC_GEMM_FUSION_H
#define TILEC_GEMM_FUSION_H

#include <stdint.h>
#include <stdio.h>

#include "op_cli.h"

#define GEMM_EPI_MAX 8

typedef struct gemm_epilogue {
  int given;                  /* --epilogue was given */
  int ops[GEMM_EPI_MAX], n;   /* the ops in order (gemm_fusion.c's enum) */
  double scale[GEMM_EPI_MAX]; /* scale:X */
  tc_dtype cast;              /* cast:f16 / cast:bf16 (TC_F32: none) */
  int reduce;                 /* row_sum, row_max, col_sum, col_max: a second
                                 output R (gemm_fusion.c's enum; 0: none) */
  int64_t tiles[5];           /* --tiles BM,BN,BK,TM,TN (tiles[0] 0: the scheduler's) */
  int ab_given;               /* --ab-type T: A and B stored as T, cast to -t */
  tc_dtype ab_type;
  tc_matmul_macro macro;      /* --macro fma|mma|mfma|mfma16|wgmma (with --tiles) */
  int stages;                 /* --stages N (with --tiles): the tiles' rings; 0: one buffer */
} gemm_epilogue;

/* --macro's names, indexed by tc_matmul_macro: fma, mma, mfma (32x32x8), mfma16, wgmma */
extern const char *const gemm_macro_name[5];

void gemm_epilogue_init(gemm_epilogue *e);
/* Tries --tiles BM,BN,BK,TM,TN, --macro NAME and --stages N at argv[*i]
 * (like op_common_option) into tiles, *macro and *stages: 1 when it was
 * one (advancing *i past its value), with *rc = CLI_USAGE after a message
 * on a bad value; 0 when it is none of them. */
int matmul_tiles_option(op_opts *o, int64_t tiles[5], tc_matmul_macro *macro, int *stages, int argc,
                        char **argv, int *i, int *rc);
/* Tries --epilogue, --tiles, --ab-type, --macro and --stages at argv[*i] (like op_common_option): 1
 * when it was one (advancing *i past its value), with *rc = CLI_USAGE
 * after a message on a bad value; 0 when it is not. */
int gemm_epilogue_option(op_opts *o, gemm_epilogue *e, int argc, char **argv, int *i, int *rc);
/* Its usage lines. */
void gemm_epilogue_usage(FILE *out);
/* Runs the fused GEMM once the options are read and checked: G x (M x K)
 * times (K x N), A stored transposed where ta, B where tb. */
int gemm_epilogue_run(op_opts *o, const gemm_epilogue *e, int64_t g, int64_t m, int64_t n, int64_t k,
                      int ta, int tb);

#endif
