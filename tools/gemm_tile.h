/* gemm_tile.h - `tilec gemm --kernel tile`: the tile-IR GEMM (src/tile)
 * with its passes, and the MoE gather (gemm_tile.c).  cmd_gemm.c reads
 * these options among its own and hands the run over. */
#ifndef TILEC_GEMM_TILE_H
#define TILEC_GEMM_TILE_H

#include <stdint.h>
#include <stdio.h>

#include "op_cli.h"

typedef struct gemm_tile_opts {
  int tile;              /* --kernel tile */
  int passes;            /* --passes */
  int print_ir;          /* --print-ir */
  int no_aggregate;      /* --no-aggregate */
  int moe;               /* --moe */
  int64_t tokens, valid; /* --tokens, --valid (-1: not given) */
  int64_t smem_limit;    /* --smem-limit (0: the default, 64 KiB) */
  int64_t block[3];      /* --tile-block BM,BN,BK (0: defaults) */
  int dynamic_k, mask_k, mask_m;
  int a_form;            /* --a-form: tc_tile_a_form */
  const char *first;     /* the first tile-only option seen (for the usage error) */
} gemm_tile_opts;

void gemm_tile_opts_init(gemm_tile_opts *t);
/* Tries the tile options at argv[*i] (like op_common_option): 1 when it
 * was one (advancing *i past a value), with *rc = CLI_USAGE after a
 * message on a bad value; 0 when it is not. */
int gemm_tile_option(op_opts *o, gemm_tile_opts *t, int argc, char **argv, int *i, int *rc);
/* Their usage lines. */
void gemm_tile_usage(FILE *out);
/* Runs `tilec gemm --kernel tile` once the options are read and checked. */
int gemm_tile_run(op_opts *o, const gemm_tile_opts *t, int64_t g, int64_t m, int64_t n, int64_t k,
                  int ta, int tb);

#endif
