/* cmd_driver.c - `tilec driver`: MIOpenDriver's convolution command line
 * as it is ("MIOpenDriver conv -n 2 ..." runs as "tilec driver conv -n 2
 * ..."), on tilec's implicit-GEMM convolution (the tc_conv2d_ API).
 *
 * The first word picks the data type (conv f32, convfp16 f16); every flag
 * of MIOpenDriver's conv is read with MIOpenDriver's default and either
 * honoured or refused by name with the reason (exit 1: MIOpenDriver runs
 * it, tilec cannot yet); a malformed line is a usage error (exit 2).  Like
 * MIOpenDriver it runs the directions -F selects one after another (the
 * default -F 0: forward, backward data, backward weights) on the tensors
 * x, w and dy (pseudo-random, or read with --in_data, --weights and
 * --dout_data as raw binary or .npy), and prints MIOpenDriver's kind of
 * lines per direction: with -t 1 the kernel time and GFLOP/s, with -V 1
 * (the default) whether it verifies against the CPU reference.  tilec's
 * problem string, perf config and plan come first (-P 1, the default).
 * --dump_output 1 writes MIOpenDriver's dump_*.bin files, --out FILE the
 * results (tensor_file.h).
 *
 * -m trans runs the transposed convolution as MIOpen defines it, on the
 * ordinary convolution with the same filter and parameters whose input is
 * the transposed one's output: its forward is that convolution's backward
 * data, its backward data the forward, its backward weights the backward
 * weights with x and dy in each other's places.  --spatial_dim 3 runs the
 * 3-D convolution (tc_conv3d_new) the same way; -b 1 adds the bias to the
 * forward result and, with backward data, computes its gradient, each by
 * a fusion of its own (conv_bias.h).  See docs/driver.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/tilec.h"
#include "../src/base/base.h"
#include "../src/ops/conv.h"
#include "../src/ops/tuner.h"
#include "cli.h"
#include "conv_bias.h"
#include "conv_cli.h"
#include "op_cli.h"
#include "tensor_file.h"

/* ---- MIOpenDriver's conv flags (and tilec's few own) ----------------------- */

enum {
  D_FORW, D_BATCH, D_IN_C, D_IN_D, D_IN_H, D_IN_W, D_OUT_C, D_FIL_D, D_FIL_H, D_FIL_W,
  D_STRIDE_D, D_STRIDE_H, D_STRIDE_W, D_PAD_D, D_PAD_H, D_PAD_W, D_PAD_VAL, D_TPAD_D, D_TPAD_H,
  D_TPAD_W, D_ITER, D_VERIFY, D_VCACHE, D_TIME, D_WALL, D_SEARCH, D_PRINTCONV, D_DUMP,
  D_IN_DATA, D_WEIGHTS, D_BIAS, D_MODE, D_PAD_MODE, D_TENSOR_VECT, D_VECTOR_LENGTH, D_DIL_D,
  D_DIL_H, D_DIL_W, D_IN_BIAS, D_GROUPS, D_DOUT_DATA, D_SOLUTION, D_GPUALLOC, D_IN_CAST,
  D_OUT_CAST, D_WEI_CAST, D_IN_LAYOUT, D_OUT_LAYOUT, D_FIL_LAYOUT, D_SPATIAL_DIM,
  D_MIOPEN_FLAGS, /* tilec's own flags follow */
  D_OUT = D_MIOPEN_FLAGS, D_DEVICE, D_TARGET, D_ARCH,
  D_NFLAGS
};

typedef struct drv_flag {
  const char *name;  /* the long name, without "--" */
  char letter;       /* MIOpenDriver's short name, 0 for tilec's own flags */
  const char *dflt;  /* MIOpenDriver's default */
  const char *help;  /* what tilec does with it */
} drv_flag;

static const drv_flag flags[D_NFLAGS] = {
    [D_FORW] = {"forw", 'F', "0", "0: fwd, bwd and wrw one after another; 1 fwd, 2 bwd (backward\n"
                                  "data), 4 wrw (backward weights), or a sum of them"},
    [D_BATCH] = {"batchsize", 'n', "100", "mini-batch size N"},
    [D_IN_C] = {"in_channels", 'c', "3", "input channels C"},
    [D_IN_D] = {"in_d", '!', "32", "input depth D (--spatial_dim 3; unused with 2)"},
    [D_IN_H] = {"in_h", 'H', "32", "input height"},
    [D_IN_W] = {"in_w", 'W', "32", "input width"},
    [D_OUT_C] = {"out_channels", 'k', "32", "output channels K"},
    [D_FIL_D] = {"fil_d", '@', "3", "filter depth Z (--spatial_dim 3)"},
    [D_FIL_H] = {"fil_h", 'y', "3", "filter height"},
    [D_FIL_W] = {"fil_w", 'x', "3", "filter width"},
    [D_STRIDE_D] = {"conv_stride_d", '#', "1", "stride of the depth (--spatial_dim 3)"},
    [D_STRIDE_H] = {"conv_stride_h", 'u', "1", "stride of the height (also --conv_stride_0)"},
    [D_STRIDE_W] = {"conv_stride_w", 'v', "1", "stride of the width (also --conv_stride_1)"},
    [D_PAD_D] = {"pad_d", '$', "0", "zero padding of the depth, both sides (--spatial_dim 3)"},
    [D_PAD_H] = {"pad_h", 'p', "0", "zero padding of the height, both sides"},
    [D_PAD_W] = {"pad_w", 'q', "0", "zero padding of the width, both sides"},
    [D_PAD_VAL] = {"pad_val", 'r', "0", "padding value: 0 (another is refused: the kernels pad with\n"
                                        "zeros)"},
    [D_TPAD_D] = {"trans_output_pad_d", '%', "0", "output padding of the depth (-m trans, 3-D)"},
    [D_TPAD_H] = {"trans_output_pad_h", 'Y', "0", "rows added at the bottom of a transposed\n"
                                                  "convolution's output (-m trans only; unused\n"
                                                  "with -m conv, as in MIOpenDriver)"},
    [D_TPAD_W] = {"trans_output_pad_w", 'X', "0", "columns added at the right of a transposed\n"
                                                  "convolution's output (-m trans only)"},
    [D_ITER] = {"iter", 'i', "10", "timed launches of each direction with -t 1, after its\n"
                                   "verified first run; their median is printed"},
    [D_VERIFY] = {"verify", 'V', "1", "1: verify each result against the CPU reference (summed in\n"
                                      "double, every element within its error bound)"},
    [D_VCACHE] = {"verification_cache", 'C', "", "a directory caching reference results: refused\n"
                                                 "(tilec computes the reference every run)"},
    [D_TIME] = {"time", 't', "0", "1: print each direction's kernel time and GFLOP/s"},
    [D_WALL] = {"wall", 'w', "0", "1 (with -t 1): also print each direction's wall-clock time\n"
                                  "(host time of its runs, copies included, per run); 2\n"
                                  "(warm-up of MIOpen's caches) is refused"},
    [D_SEARCH] = {"search", 's', "0", "1: tune each direction with tilec's tuner, store the fastest\n"
                                      "perf config in the perf DB and run it"},
    [D_PRINTCONV] = {"printconv", 'P', "1", "1: print each direction's problem string, perf config\n"
                                            "and plan"},
    [D_DUMP] = {"dump_output", 'o', "0", "1: write MIOpenDriver's raw dump files into the current\n"
                                         "directory (dump_in.bin, dump_wei.bin, dump_dout.bin,\n"
                                         "dump_fwd_out_gpu.bin, dump_bwd_din_gpu.bin,\n"
                                         "dump_bwd_dwei_gpu.bin; with -V 1 the *_cpu.bin references)"},
    [D_IN_DATA] = {"in_data", 'd', "", "the input x from FILE: raw, or .npy by its extension"},
    [D_WEIGHTS] = {"weights", 'e', "", "the weights w from FILE: raw or .npy"},
    [D_BIAS] = {"bias", 'b', "0", "1: add a per-output-channel bias to the forward result, in\n"
                                  "a second kernel (a pointwise fusion), verified with it;\n"
                                  "with bwd also its gradient db (a reduction kernel)"},
    [D_MODE] = {"mode", 'm', "conv", "conv or trans: the transposed convolution, output\n"
                                     "[N, K, Ho, Wo] with Ho = (H - 1) * u - 2 * p + l * (y - 1)\n"
                                     "+ 1 + (the output padding -Y), weights [C, K/G, y, x];\n"
                                     "its fwd runs as the\n"
                                     "convolution's bwd, its bwd as fwd, its wrw as wrw (the\n"
                                     "problem line shows the convolution run)"},
    [D_PAD_MODE] = {"pad_mode", 'z', "default", "default (-p, -q), same or valid, as MIOpenDriver\n"
                                                "computes them"},
    [D_TENSOR_VECT] = {"tensor_vect", 'Z', "0", "0 (1, vectorized int8 tensors, is refused)"},
    [D_VECTOR_LENGTH] = {"vector_length", 'L', "1", "1 (4 or 8 go with --tensor_vect 1)"},
    [D_DIL_D] = {"dilation_d", '^', "1", "dilation of the depth (--spatial_dim 3)"},
    [D_DIL_H] = {"dilation_h", 'l', "1", "dilation of the height"},
    [D_DIL_W] = {"dilation_w", 'j', "1", "dilation of the width"},
    [D_IN_BIAS] = {"in_bias", 'a', "", "the bias (K elements) from FILE, raw or .npy (with -b 1;\n"
                                       "unused otherwise)"},
    [D_GROUPS] = {"group_count", 'g', "1", "groups G; C and K must be multiples of G"},
    [D_DOUT_DATA] = {"dout_data", 'D', "", "the output gradient dy from FILE: raw or .npy"},
    [D_SOLUTION] = {"solution", 'S', "-1", "-1 (find) or 0 (the fastest) run tilec's one solution,\n"
                                           "the implicit GEMM; another id or name is refused"},
    [D_GPUALLOC] = {"gpualloc", 'G', "0", "0: the tensors are filled on the host (1 is refused)"},
    [D_IN_CAST] = {"in_cast_type", 'U', "-1", "casts to fp8 / bf8 of the input: refused"},
    [D_OUT_CAST] = {"out_cast_type", 'T', "-1", "casts of the output: refused"},
    [D_WEI_CAST] = {"wei_cast_type", 'R', "-1", "casts of the weights: refused"},
    [D_IN_LAYOUT] = {"in_layout", 'I', "NCHW", "NCHW or NHWC (any order of the letters); NCDHW or\n"
                                               "NDHWC with --spatial_dim 3 (NCHW, NHWC read as\n"
                                               "them)"},
    [D_OUT_LAYOUT] = {"out_layout", 'O', "NCHW", "NCHW or NHWC (also NKHW, NHWK); 3-D: NCDHW, NDHWC"},
    [D_FIL_LAYOUT] = {"fil_layout", 'f', "NCHW", "NCHW or NHWC (also KCYX, KYXC); 3-D: NCDHW, NDHWC\n"
                                                 "(also KCZYX, KZYXC)"},
    [D_SPATIAL_DIM] = {"spatial_dim", '_', "2", "2 or 3: a 3-D convolution (the depth flags --in_d,\n"
                                                "--fil_d, --pad_d, --conv_stride_d, --dilation_d)"},
    [D_OUT] = {"out", 0, "", "each direction's result to FILE (.npy or raw); with several\n"
                             "directions FILE gets .fwd, .bwd, .wrw before its extension"},
    [D_DEVICE] = {"device", 0, "", "the OpenCL device (as for `tilec demo --device`)"},
    [D_TARGET] = {"target", 0, "opencl", "opencl or cuda"},
    [D_ARCH] = {"arch", 0, "", "the CUDA architecture for --target cuda (default sm_90a)"},
};

/* The flags as given: a value for each (the default until given) and how
 * the user spelled the flag, for messages. */
typedef struct drv_args {
  const char *val[D_NFLAGS];
  char spelled[D_NFLAGS][32];
  int given[D_NFLAGS];
} drv_args;

static void driver_usage(FILE *out) {
  fputs("usage: tilec driver conv|convfp16 [MIOpenDriver's conv flags] [--out FILE]\n"
        "                   [--device SEL] [--target opencl|cuda] [--arch ARCH]\n"
        "\n"
        "runs an MIOpenDriver convolution line as it is, with `tilec driver` in place\n"
        "of `MIOpenDriver`, on tilec's implicit-GEMM convolution: the directions -F\n"
        "picks one after another, each verified against the CPU reference (-V 1)\n"
        "and timed (-t 1), in MIOpenDriver's conventions: input x [N, C, H, W],\n"
        "weights w [K, C/G, Y, X] ([C, K/G, Y, X] with -m trans), output y and its\n"
        "gradient dy [N, K, Ho, Wo]; with --spatial_dim 3 the depth comes before\n"
        "the height ([N, C, D, H, W], [K, C/G, Z, Y, X], [N, K, Do, Ho, Wo]).\n"
        "\n"
        "The first word is the data type: conv (f32) or convfp16 (f16); convbfp16,\n"
        "convint8, convfp8 and convbfp8 are refused (tilec's convolution has f32\n"
        "and f16 kernels only).  Each flag takes its value as the next argument\n"
        "(or after '='), by its long or its short name; the defaults are\n"
        "MIOpenDriver's:\n"
        "\n",
        out);
  for (int i = 0; i < D_NFLAGS; i++) {
    const drv_flag *f = &flags[i];
    char head[64];
    if (i == D_MIOPEN_FLAGS) fputs("\ntilec's own flags:\n\n", out);
    if (f->letter)
      snprintf(head, sizeof head, "  -%c, --%s", f->letter, f->name);
    else
      snprintf(head, sizeof head, "  --%s", f->name);
    fprintf(out, "%-28s", head);
    if (strlen(head) > 27) fprintf(out, "\n%-28s", "");
    /* the help and the default (one word: \001 prints as a space),
     * word-wrapped into the column */
    char text[512];
    snprintf(text, sizeof text, "%s%s%s%s", f->help, *f->dflt ? " (default\001" : "", f->dflt,
             *f->dflt ? ")" : "");
    int col = 0;
    for (char *w = text; *w;) {
      size_t n = strcspn(w, " \n");
      if (col && col + 1 + (int)n > 51) {
        fprintf(out, "\n%-28s", "");
        col = 0;
      }
      if (col) fputc(' ', out);
      for (size_t c = 0; c < n; c++) fputc(w[c] == '\001' ? ' ' : w[c], out);
      col += (col ? 1 : 0) + (int)n;
      w += n;
      while (*w == ' ' || *w == '\n') w++;
    }
    fputc('\n', out);
  }
  fputs("\n"
        "Output, per direction: with -P 1 `problem: conv2d -F N ...` (conv3d in 3-D;\n"
        "tilec's problem\n"
        "string, the perf DB key of `tilec conv2d`), `perf config:` and `plan:`;\n"
        "with -t 1 `GPU Kernel Time Forward Conv. Elapsed: T ms (median of I), G\n"
        "GFLOP/s` and MIOpenDriver's `stats:` lines; with -V 1 `Forward Convolution\n"
        "Verifies OK on CPU reference (...)` or `Forward Convolution FAILED: ...`\n"
        "(Backward Convolution Data, Backward Convolution Weights for bwd and wrw).\n"
        "-b 1 adds the bias after the forward convolution (a second kernel; with -t 1\n"
        "its time on a line of its own) and verifies the sum; with bwd it also\n"
        "computes the bias gradient: `Backward Convolution Bias Verifies OK ...`.\n"
        "\n"
        "exit status: 0 every direction ran (and with -V 1 verified); 1 a direction\n"
        "failed to run or verify, no device, a file that cannot be read or written,\n"
        "or something MIOpenDriver runs that tilec does not support yet (the message\n"
        "names the flag and says why); 2 a malformed line: an unknown flag, a missing\n"
        "or bad value, an impossible problem, a tensor file that does not fit it\n",
        out);
}

/* ---- parsing ---------------------------------------------------------------- */

static int find_long(const char *name, size_t len) {
  static const struct { const char *alias; int id; } aliases[] = {
      {"conv_stride_0", D_STRIDE_H}, {"conv_stride_1", D_STRIDE_W}};
  for (int i = 0; i < D_NFLAGS; i++)
    if (strlen(flags[i].name) == len && strncmp(flags[i].name, name, len) == 0) return i;
  for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++)
    if (strlen(aliases[i].alias) == len && strncmp(aliases[i].alias, name, len) == 0)
      return aliases[i].id;
  return -1;
}

static int find_short(char c) {
  for (int i = 0; i < D_MIOPEN_FLAGS; i++)
    if (flags[i].letter == c) return i;
  return -1;
}

/* Reads argv[2..] into a; CLI_OK, or the exit code (*done for --help). */
static int parse_flags(op_opts *o, drv_args *a, int argc, char **argv, int *done) {
  memset(a, 0, sizeof *a);
  for (int i = 0; i < D_NFLAGS; i++) {
    a->val[i] = flags[i].dflt;
    snprintf(a->spelled[i], sizeof a->spelled[i], "--%s", flags[i].name);
  }
  for (int i = 2; i < argc; i++) {
    const char *arg = argv[i], *eq, *v = NULL;
    int id;
    if (cli_is_help(arg) || strcmp(arg, "-?") == 0) {
      driver_usage(stdout);
      *done = 1;
      return CLI_OK;
    }
    if (arg[0] != '-' || !arg[1])
      return op_usage_error(o, "unexpected argument '%s' (flags start with - or --)", arg);
    if (arg[1] == '-') {
      size_t len = (eq = strchr(arg + 2, '=')) ? (size_t)(eq - arg - 2) : strlen(arg + 2);
      if ((id = find_long(arg + 2, len)) < 0)
        return op_usage_error(o, "unknown option '%.*s': not a flag of MIOpenDriver's conv",
                              (int)(len + 2), arg);
      snprintf(a->spelled[id], sizeof a->spelled[id], "--%.*s", (int)len, arg + 2);
      if (eq) v = eq + 1;
    } else {
      if ((arg[2] && arg[2] != '=') || (id = find_short(arg[1])) < 0)
        return op_usage_error(o, "unknown option '%s': not a flag of MIOpenDriver's conv", arg);
      snprintf(a->spelled[id], sizeof a->spelled[id], "-%c", arg[1]);
      if (arg[2] == '=') v = arg + 3;
    }
    if (!v) {
      if (i + 1 >= argc) return op_usage_error(o, "option %s needs a value", a->spelled[id]);
      v = argv[++i];
    }
    a->val[id] = v;
    a->given[id] = 1;
  }
  return CLI_OK;
}

static int get_int(const op_opts *o, const drv_args *a, int id, int64_t min, int64_t max,
                   int64_t *out) {
  /* MIOpenDriver leaves an int flag it was not given at its default; an
   * empty value (-b's default) is 0 */
  const char *v = *a->val[id] ? a->val[id] : "0";
  return op_parse_int(o, a->spelled[id], v, min, max, out);
}

static int is(const drv_args *a, int id, const char *s) { return strcmp(a->val[id], s) == 0; }

/* ---- refusals: what MIOpenDriver runs and tilec does not (yet) ---------------- */

static const char *const other_commands[] = {
    "pool", "lrn", "activ", "softmax", "bnorm", "rnn", "gemm", "ctc", "dropout", "tensorop",
    "reduce", "layernorm", "sum", "groupnorm", "cat", "addlayernorm", "t5layernorm", "adam",
    "ampadam", "adamw", "ampadamw", "transformersadamw", "transformersampadamw", "getitem",
    "reducecalculation", "reduceextreme", "rope", "prelu", "kthvalue", "glu", "softmarginloss",
    "multimarginloss", "argmax", "argmin", "fold", "unfold", "mseloss", "nllloss"};

/* Is w a word MIOpenDriver knows: its conv commands, or another command
 * of it (the index of its name in other_commands + 1)? */
static int other_command(const char *w) {
  for (size_t i = 0; i < sizeof other_commands / sizeof *other_commands; i++) {
    size_t n = strlen(other_commands[i]);
    if (strncmp(w, other_commands[i], n) == 0 &&
        (!w[n] || strstr(w + n, "fp16") || strstr(w + n, "fp64") || strstr(w + n, "_seq")))
      return (int)i + 1;
  }
  return 0;
}

static const char *const conv_words[] = {"conv", "convfp16", "convbfp16", "convint8", "convfp8",
                                         "convbfp8"};

/* A word MIOpenDriver does not know: CLI_USAGE after a message, else
 * CLI_OK (checked before the flags). */
static int known_word(const op_opts *o, const char *w) {
  for (size_t i = 0; i < sizeof conv_words / sizeof *conv_words; i++)
    if (strcmp(w, conv_words[i]) == 0) return CLI_OK;
  if (other_command(w)) return CLI_OK;
  return op_usage_error(o, "unknown command '%s': expected conv or convfp16 (MIOpenDriver's "
                           "convolution commands)", w);
}

/* The first word, known: CLI_OK with o's dtype, or CLI_FAIL for one
 * tilec refuses (checked after the flags: a malformed line first). */
static int check_word(op_opts *o, const char *w) {
  if (strcmp(w, "conv") == 0) return o->dtype = TC_F32, CLI_OK;
  if (strcmp(w, "convfp16") == 0) return o->dtype = TC_F16, CLI_OK;
  if (strcmp(w, "convbfp16") == 0)
    return op_fail(o, "convbfp16 is not supported: tilec's convolution has f32 and f16 kernels "
                      "only, no bf16 yet (use conv or convfp16)");
  if (strcmp(w, "convint8") == 0)
    return op_fail(o, "convint8 is not supported: tilec's convolution has no int8 kernels "
                      "(int8 inputs accumulated in int32); use conv or convfp16");
  if (strcmp(w, "convfp8") == 0 || strcmp(w, "convbfp8") == 0)
    return op_fail(o, "%s is not supported: tilec's convolution has no 8-bit float kernels; use "
                      "conv or convfp16", w);
  int i = other_command(w) - 1;
  return op_fail(o, "'%s' is an MIOpenDriver command tilec does not run: `tilec driver` runs "
                    "its convolutions (conv, convfp16)%s", w,
                 i >= 0 && strcmp(other_commands[i], "gemm") == 0 ? "; for a GEMM use `tilec gemm`"
                                                                   : "");
}

/* The flags whose values MIOpenDriver accepts but tilec cannot run, in
 * the order checked; CLI_FAIL after a message naming the first. */
static int check_supported(const op_opts *o, const drv_args *a) {
  int64_t v;
  if (get_int(o, a, D_PAD_VAL, INT64_MIN, INT64_MAX, &v) == CLI_OK && v != 0)
    return op_fail(o, "%s %s is not supported: tilec's convolution pads with zeros only",
                   a->spelled[D_PAD_VAL], a->val[D_PAD_VAL]);
  if (get_int(o, a, D_WALL, INT64_MIN, INT64_MAX, &v) == CLI_OK && v == 2)
    return op_fail(o, "%s %s is not supported: it warms up MIOpen's kernel and database caches "
                      "before timing, and tilec has no such caches; -w 1 prints the wall-clock "
                      "time", a->spelled[D_WALL], a->val[D_WALL]);
  if (*a->val[D_VCACHE])
    return op_fail(o, "%s is not supported: tilec keeps no cache of reference results (it "
                      "computes the reference every run); drop the flag", a->spelled[D_VCACHE]);
  if (!is(a, D_SOLUTION, "-1") && !is(a, D_SOLUTION, "0"))
    return op_fail(o, "%s %s is not supported: tilec has one solution for each direction, its "
                      "implicit GEMM (-S -1 or -S 0 run it); tune its perf config with -s 1",
                   a->spelled[D_SOLUTION], a->val[D_SOLUTION]);
  if (get_int(o, a, D_GPUALLOC, INT64_MIN, INT64_MAX, &v) == CLI_OK && v != 0)
    return op_fail(o, "%s %s is not supported: tilec fills the tensors on the host and copies "
                      "them to the device", a->spelled[D_GPUALLOC], a->val[D_GPUALLOC]);
  if (get_int(o, a, D_TENSOR_VECT, INT64_MIN, INT64_MAX, &v) == CLI_OK && v != 0)
    return op_fail(o, "%s %s is not supported: vectorized tensors (NCHW_VECT_C) are MIOpen's "
                      "int8 format and tilec's convolution has no int8 kernels",
                   a->spelled[D_TENSOR_VECT], a->val[D_TENSOR_VECT]);
  const int casts[3] = {D_IN_CAST, D_OUT_CAST, D_WEI_CAST};
  for (int i = 0; i < 3; i++)
    if (!is(a, casts[i], "-1"))
      return op_fail(o, "%s %s is not supported: tilec's convolution has no tensor casts (its "
                        "tensors are all of the command's type)",
                     a->spelled[casts[i]], a->val[casts[i]]);
  return CLI_OK;
}

/* ---- the problem ------------------------------------------------------------ */

/* Everything the line says, checked. */
typedef struct drv_problem {
  tc_conv_problem p;      /* sizes, strides, dilations, groups, layouts (dir unset) */
  int nsp;                /* spatial dims: 2, or 3 with --spatial_dim 3 */
  int64_t pad_h, pad_w, pad_d; /* after --pad_mode */
  int64_t side[4];        /* the padding of each side for conv_make_desc */
  int64_t side_d[2];      /* the same for the depth (front, back) */
  int trans;              /* -m trans: p is the convolution it runs on (see trans_problem) */
  int64_t trans_c, trans_k; /* -m trans: its own input and output channels */
  int dirs;               /* bits 1 fwd, 2 bwd, 4 wrw */
  int forw;               /* -F as given */
  int verify, time, search, print, dump, bias, wall;
  int64_t iters;
} drv_problem;

/* A layout for the number of spatial dims: with --spatial_dim 2 a 3-D
 * layout (NCDHW, NDHWC: five letters with a D) is a usage error; with 3,
 * a 4-letter one is read as MIOpenDriver's default NCHW is, with the
 * depth letter before the height's (NCHW -> NCDHW, NHWC -> NDHWC, KYXC ->
 * KZYXC).  dst gets the layout (8 bytes). */
static int check_layout(const op_opts *o, const drv_args *a, int id, int nsp, char dst[8]) {
  const char *l = a->val[id];
  size_t n = strlen(l);
  if (n >= 8)
    return op_invalid(o, "bad %s '%s': expected a %d-letter layout such as %s", a->spelled[id], l,
                      nsp + 2, nsp == 3 ? "NCDHW" : "NCHW");
  if (nsp == 2 && n == 5 && strpbrk(l, "Dd"))
    return op_invalid(o, "%s %s is a 3-D layout; --spatial_dim is 2 (NCHW or NHWC)",
                      a->spelled[id], l);
  snprintf(dst, 8, "%s", l);
  if (nsp == 3 && n == 4) {
    const char *h = strpbrk(l, "HYhy");
    if (h) {
      int at = (int)(h - l), y = *h == 'Y' || *h == 'y', lower = *h >= 'a';
      char depth = (char)(y ? 'Z' : 'D');
      if (lower) depth = (char)(depth - 'A' + 'a');
      snprintf(dst, 8, "%.*s%c%s", at, l, depth, l + at);
    }
  }
  return CLI_OK;
}

/* -m trans: d->p, read as the transposed convolution (input [N, C, (D,)
 * H, W], weights [C, K/G, (Z,) Y, X]), becomes the ordinary convolution it
 * runs on: input [N, K, (Do,) Ho, Wo] (the transposed one's output), the
 * same weights read as KC(Z)YX, output [N, C, (D,) H, W]; the layouts of
 * input and output change places.  Output padding (tpad[i] rows at the
 * end of spatial dim i) is in that convolution's input: its leading
 * padding stays (it places every product), and its trailing padding is
 * lowered by the whole strides in the output padding, so that its output
 * is the transposed one's input again.  tpad, flags in the order depth
 * (3-D only), height, width.  CLI_OK, or the exit code after a message. */
static int trans_problem(const op_opts *o, const drv_args *a, drv_problem *d, const int64_t *tpad,
                         const int *flag) {
  tc_conv_problem *p = &d->p;
  int nsp = d->nsp, o3 = nsp - 2;
  int64_t pad[3], in[3], fil[3], st[3], dil[3], out[3];
  static const char *const what[3] = {"depth", "height", "width"};
  static const char *const sym[3][5] = {{"D", "#", "$", "^", "@"}, {"H", "u", "p", "l", "y"},
                                        {"W", "v", "q", "j", "x"}};
  const int pad_flag[3] = {D_PAD_D, D_PAD_H, D_PAD_W};
  if (nsp == 3)
    pad[0] = d->pad_d, in[0] = p->d, fil[0] = p->z, st[0] = p->stride_d, dil[0] = p->dil_d;
  pad[o3] = d->pad_h, in[o3] = p->h, fil[o3] = p->y, st[o3] = p->stride_h, dil[o3] = p->dil_h;
  pad[o3 + 1] = d->pad_w, in[o3 + 1] = p->w, fil[o3 + 1] = p->x, st[o3 + 1] = p->stride_w;
  dil[o3 + 1] = p->dil_w;
  for (int i = 0; i < nsp; i++) {
    int ax = i + 3 - nsp; /* 0 depth, 1 height, 2 width */
    if (tpad[i] < 0)
      return op_usage_error(o, "%s must not be negative (got %lld)", a->spelled[flag[i]],
                            (long long)tpad[i]);
    out[i] = (in[i] - 1) * st[i] - 2 * pad[i] + dil[i] * (fil[i] - 1) + 1 + tpad[i];
    if (out[i] < 1)
      return op_usage_error(o, "the transposed convolution's output %s would be %lld ((%s - 1) * "
                               "%s - 2 * %s + %s * (%s - 1) + 1 + %s): the padding is larger "
                               "than the output", what[ax], (long long)out[i], sym[ax][0],
                            sym[ax][1], sym[ax][2], sym[ax][3], sym[ax][4], a->spelled[flag[i]]);
    int64_t low = pad[i] - st[i] * (tpad[i] / st[i]);
    if (low < 0)
      return op_fail(o, "%s %lld is not supported with %s %lld and stride %lld: tilec runs "
                        "output padding of a whole stride or more as that many strides less "
                        "padding at the %s of the convolution, and the padding is smaller; "
                        "use output padding below the stride",
                     a->spelled[flag[i]], (long long)tpad[i], a->spelled[pad_flag[ax]],
                     (long long)pad[i], (long long)st[i],
                     ax == 0 ? "back" : ax == 1 ? "bottom" : "right");
    if (ax == 0) d->side_d[1] = low;
    else d->side[ax == 1 ? 1 : 3] = low;
  }
  d->trans_c = p->c, d->trans_k = p->k;
  p->c = d->trans_k, p->k = d->trans_c;
  if (nsp == 3) p->d = out[0];
  p->h = out[o3], p->w = out[o3 + 1];
  /* the output's K (NKHW, NHWK) is the input's C */
  char lay[8];
  memcpy(lay, p->in_layout, sizeof lay);
  memcpy(p->in_layout, p->out_layout, sizeof lay);
  memcpy(p->out_layout, lay, sizeof lay);
  for (char *l = p->in_layout; *l; l++)
    if (*l == 'K' || *l == 'k') *l = 'C';
  return CLI_OK;
}

static int read_problem(op_opts *o, const drv_args *a, drv_problem *d) {
  int64_t v[D_NFLAGS] = {0};
  /* every integer flag is checked, those of 3-D too, as MIOpenDriver reads them */
  static const struct { int id; int64_t min, max; } ints[] = {
      {D_FORW, 0, 7}, {D_BATCH, 1, INT32_MAX}, {D_IN_C, 1, INT32_MAX}, {D_IN_D, INT32_MIN, INT32_MAX},
      {D_IN_H, 1, INT32_MAX}, {D_IN_W, 1, INT32_MAX}, {D_OUT_C, 1, INT32_MAX},
      {D_FIL_D, INT32_MIN, INT32_MAX}, {D_FIL_H, 1, INT32_MAX}, {D_FIL_W, 1, INT32_MAX},
      {D_STRIDE_D, INT32_MIN, INT32_MAX}, {D_STRIDE_H, 1, INT32_MAX}, {D_STRIDE_W, 1, INT32_MAX},
      {D_PAD_D, INT32_MIN, INT32_MAX}, {D_PAD_H, 0, INT32_MAX}, {D_PAD_W, 0, INT32_MAX},
      {D_PAD_VAL, INT32_MIN, INT32_MAX}, {D_TPAD_D, INT32_MIN, INT32_MAX},
      {D_TPAD_H, INT32_MIN, INT32_MAX}, {D_TPAD_W, INT32_MIN, INT32_MAX}, {D_ITER, 1, 100000},
      {D_VERIFY, 0, 1}, {D_TIME, 0, 1}, {D_WALL, 0, 2}, {D_SEARCH, 0, 1}, {D_PRINTCONV, 0, 1},
      {D_DUMP, 0, 1}, {D_BIAS, 0, 1}, {D_TENSOR_VECT, 0, 1}, {D_VECTOR_LENGTH, 1, 8},
      {D_DIL_D, INT32_MIN, INT32_MAX}, {D_DIL_H, 1, INT32_MAX}, {D_DIL_W, 1, INT32_MAX},
      {D_GROUPS, 0, INT32_MAX}, {D_GPUALLOC, 0, 1}, {D_SPATIAL_DIM, 2, 3}};
  int rc;
  if (!is(a, D_TIME, "0") && !is(a, D_TIME, "1"))
    return op_usage_error(o, "%s is MIOpenDriver's --time, 0 or 1 (got '%s'); the data type is "
                             "the first word: conv (f32) or convfp16 (f16)",
                          a->spelled[D_TIME], a->val[D_TIME]);
  for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
    if ((rc = get_int(o, a, ints[i].id, ints[i].min, ints[i].max, &v[ints[i].id])) != CLI_OK)
      return rc;
  if (!is(a, D_MODE, "conv") && !is(a, D_MODE, "trans"))
    return op_usage_error(o, "%s must be conv or trans, got '%s'", a->spelled[D_MODE],
                          a->val[D_MODE]);
  if (!is(a, D_PAD_MODE, "default") && !is(a, D_PAD_MODE, "same") && !is(a, D_PAD_MODE, "valid"))
    return op_usage_error(o, "%s must be default, same or valid, got '%s'",
                          a->spelled[D_PAD_MODE], a->val[D_PAD_MODE]);
  /* MIOpenDriver's valid pairs: length 1 unvectorized, 4 or 8 vectorized */
  if (!((v[D_TENSOR_VECT] == 0 && v[D_VECTOR_LENGTH] == 1) ||
        (v[D_TENSOR_VECT] == 1 && (v[D_VECTOR_LENGTH] == 4 || v[D_VECTOR_LENGTH] == 8))))
    return op_usage_error(o, "%s %lld does not go with %s %lld (1 with 0; 4 or 8 with 1)",
                          a->spelled[D_VECTOR_LENGTH], (long long)v[D_VECTOR_LENGTH],
                          a->spelled[D_TENSOR_VECT], (long long)v[D_TENSOR_VECT]);
  static const char *const casts[] = {"fp32", "fp16", "bf16", "fp8", "bf8"};
  const int cast_ids[3] = {D_IN_CAST, D_OUT_CAST, D_WEI_CAST};
  for (int i = 0; i < 3; i++) {
    int ok = is(a, cast_ids[i], "-1");
    for (size_t c = 0; c < sizeof casts / sizeof *casts; c++) ok |= is(a, cast_ids[i], casts[c]);
    if (!ok)
      return op_usage_error(o, "%s must be fp32, fp16, bf16, fp8 or bf8, got '%s'",
                            a->spelled[cast_ids[i]], a->val[cast_ids[i]]);
  }
  if (a->given[D_OUT] && !*a->val[D_OUT]) return op_usage_error(o, "--out needs a file name");
  if ((rc = check_supported(o, a)) != CLI_OK) return rc;

  tc_conv_problem *p = &d->p;
  tc_conv_problem_init(p);
  d->nsp = (int)v[D_SPATIAL_DIM];
  if (d->nsp == 3) {
    /* the depth flags matter now: MIOpenDriver's perf_models lines carry
     * them at 0 with --spatial_dim 2 */
    static const struct { int id; int64_t min; } depth[] = {
        {D_IN_D, 1}, {D_FIL_D, 1}, {D_STRIDE_D, 1}, {D_DIL_D, 1}, {D_PAD_D, 0}};
    for (size_t i = 0; i < sizeof depth / sizeof *depth; i++)
      if ((rc = get_int(o, a, depth[i].id, depth[i].min, INT32_MAX, &v[depth[i].id])) != CLI_OK)
        return rc;
    tc_conv_problem_make_3d(p);
    p->d = v[D_IN_D], p->z = v[D_FIL_D], p->stride_d = v[D_STRIDE_D], p->dil_d = v[D_DIL_D];
  }
  char *dst[3] = {p->in_layout, p->fil_layout, p->out_layout};
  const int lay_id[3] = {D_IN_LAYOUT, D_FIL_LAYOUT, D_OUT_LAYOUT};
  for (int i = 0; i < 3; i++)
    if (*a->val[lay_id[i]] && (rc = check_layout(o, a, lay_id[i], d->nsp, dst[i])) != CLI_OK)
      return rc;
  p->n = v[D_BATCH], p->c = v[D_IN_C], p->h = v[D_IN_H], p->w = v[D_IN_W];
  p->k = v[D_OUT_C], p->y = v[D_FIL_H], p->x = v[D_FIL_W];
  p->stride_h = v[D_STRIDE_H], p->stride_w = v[D_STRIDE_W];
  p->dil_h = v[D_DIL_H], p->dil_w = v[D_DIL_W];
  p->groups = v[D_GROUPS] < 1 ? 1 : v[D_GROUPS]; /* MIOpenDriver: max(g, 1) */
  d->pad_h = v[D_PAD_H], d->pad_w = v[D_PAD_W], d->pad_d = d->nsp == 3 ? v[D_PAD_D] : 0;
  /* --pad_mode as MIOpenDriver applies it: for -m conv where the dilations
   * or the filter sizes are all 1; "same" pads (Y - S) / 2, or
   * (Y - H % S) / 2 where S does not divide H, at least 0 (each spatial
   * dim: the depth too in 3-D) */
  d->trans = is(a, D_MODE, "trans");
  int three = d->nsp == 3;
  int64_t in[3] = {p->d, p->h, p->w}, fil[3] = {p->z, p->y, p->x};
  int64_t st[3] = {p->stride_d, p->stride_h, p->stride_w}, *pad[3] = {&d->pad_d, &d->pad_h, &d->pad_w};
  int dil1 = p->dil_h == 1 && p->dil_w == 1 && (!three || p->dil_d == 1);
  int fil1 = p->y == 1 && p->x == 1 && (!three || p->z == 1);
  if (!d->trans && (dil1 || fil1) && !is(a, D_PAD_MODE, "default")) {
    for (int i = three ? 0 : 1; i < 3; i++) {
      int64_t t = in[i] % st[i] == 0 ? fil[i] - st[i] : fil[i] - in[i] % st[i];
      *pad[i] = is(a, D_PAD_MODE, "valid") ? 0 : (t > 0 ? t : 0) / 2;
    }
  }
  for (int i = 0; i < 4; i++) d->side[i] = INT64_MIN;
  d->side_d[0] = d->side_d[1] = INT64_MIN;
  if (d->trans) {
    const int64_t tpad[3] = {three ? v[D_TPAD_D] : v[D_TPAD_H], three ? v[D_TPAD_H] : v[D_TPAD_W],
                             v[D_TPAD_W]};
    const int tflag[3] = {three ? D_TPAD_D : D_TPAD_H, three ? D_TPAD_H : D_TPAD_W, D_TPAD_W};
    if ((rc = trans_problem(o, a, d, tpad, tflag)) != CLI_OK) return rc;
  }
  d->forw = (int)v[D_FORW];
  d->dirs = d->forw == 0 ? 7 : d->forw;
  d->verify = (int)v[D_VERIFY], d->time = (int)v[D_TIME], d->search = (int)v[D_SEARCH];
  d->print = (int)v[D_PRINTCONV], d->dump = (int)v[D_DUMP];
  d->bias = (int)v[D_BIAS], d->wall = (int)v[D_WALL];
  d->iters = v[D_ITER];
  return CLI_OK;
}

/* ---- tensors ------------------------------------------------------------------ */

enum { X_IN, X_WEI, X_DOUT, NDATA }; /* the tensors the directions read */

/* The dims of conv tensor t (TC_CONV2D_INPUT, _FILTER, _OUTPUT) in memory
 * order, from its layout (valid: the API checked it), out[] the output's
 * depth, height and width; returns the rank (4, or 5 in 3-D).  *ch (may
 * be NULL) gets the memory position of the channel dim (C, or K of the
 * output). */
static int mem_dims(const tc_conv_problem *p, int t, const int64_t out[3], int64_t dims[5],
                    int *ch) {
  const char *lay = t == TC_CONV2D_INPUT ? p->in_layout : t == TC_CONV2D_FILTER ? p->fil_layout
                                                                               : p->out_layout;
  int n = (int)strlen(lay);
  for (int i = 0; i < n && i < 5; i++) {
    char c = lay[i] >= 'a' && lay[i] <= 'z' ? (char)(lay[i] - 'a' + 'A') : lay[i];
    int64_t e = 0;
    if (t == TC_CONV2D_INPUT)
      e = c == 'N' ? p->n : c == 'C' ? p->c : c == 'D' ? p->d : c == 'H' ? p->h : p->w;
    else if (t == TC_CONV2D_FILTER)
      e = c == 'K' || c == 'N' ? p->k : c == 'C' ? p->c / p->groups : c == 'Z' || c == 'D' ? p->z
        : c == 'Y' || c == 'H' ? p->y : p->x;
    else
      e = c == 'N' ? p->n : c == 'K' || c == 'C' ? p->k : c == 'D' ? out[0] : c == 'H' ? out[1]
        : out[2];
    if (ch && (c == 'C' || (t == TC_CONV2D_OUTPUT && c == 'K'))) *ch = i;
    dims[i] = e;
  }
  return n;
}

typedef struct drv_run {
  op_opts *o;
  drv_problem *d;
  const drv_args *a;
  int64_t out[3], elems[3];   /* the output's depth (1 in 2-D), height, width */
  void *data[NDATA]; /* x, w, dy */
  void *bias;        /* -b 1: the bias, K elements of the transposed or ordinary output */
  const char *device; /* the device's name, for --search's progress */
} drv_run;

static const struct {
  int flag;           /* the file flag */
  int tensor;         /* its conv tensor */
  int read_by;        /* direction bits that read it */
  const char *what, *dump;
} data_of[NDATA] = {
    [X_IN] = {D_IN_DATA, TC_CONV2D_INPUT, 1 | 4, "the input x", "dump_in.bin"},
    [X_WEI] = {D_WEIGHTS, TC_CONV2D_FILTER, 1 | 2, "the weights w", "dump_wei.bin"},
    [X_DOUT] = {D_DOUT_DATA, TC_CONV2D_OUTPUT, 2 | 4, "the output gradient dy", "dump_dout.bin"},
};

/* A tensor file: CLI_OK, CLI_FAIL (cannot read / write), CLI_USAGE (does
 * not fit), after a message naming the flag. */
static int file_status(const op_opts *o, tf_status st, const char *flag, const char *err) {
  if (st == TF_OK) return CLI_OK;
  return st == TF_IO ? op_fail(o, "%s: %s", flag, err) : op_invalid(o, "%s: %s", flag, err);
}

/* The convolution tensor that holds data tensor x (X_IN ...): with -m
 * trans x is the convolution's output and dy its input. */
static int tensor_of(const drv_run *r, int x) {
  int t = data_of[x].tensor;
  if (r->d->trans && t != TC_CONV2D_FILTER) t = t == TC_CONV2D_INPUT ? TC_CONV2D_OUTPUT : TC_CONV2D_INPUT;
  return t;
}

static int write_tensor(const drv_run *r, const char *flag, const char *path, int t, const void *buf) {
  int64_t dims[5];
  TC_STR_LOCAL(err);
  int rank = mem_dims(&r->d->p, t, r->out, dims, NULL);
  tf_status st = tf_write(path, r->d->p.dtype, rank, dims, buf, &err);
  int rc = file_status(r->o, st, flag, tc_str_cstr(&err));
  if (rc == CLI_OK) printf("Wrote output to file %s\n", path);
  return rc;
}

/* The channels of the forward result, which the bias has: K, or the
 * transposed convolution's own K with -m trans. */
static int64_t bias_len(const drv_run *r) { return r->d->trans ? r->d->p.c : r->d->p.k; }

/* -b 1: the bias of the forward direction, from --in_bias (raw or .npy,
 * K elements) or pseudo-random in [-1, 1). */
static int make_bias(drv_run *r) {
  const drv_args *a = r->a;
  const char *path = a->val[D_IN_BIAS], *flag = a->spelled[D_IN_BIAS];
  if (!r->d->bias) {
    if (*path)
      fprintf(stderr, "tilec driver: note: %s is not read without -b 1 (as in MIOpenDriver)\n",
              flag);
    return CLI_OK;
  }
  if (!(r->d->dirs & 1)) return CLI_OK;
  int64_t k = bias_len(r);
  size_t esize = tc_dtype_size(r->d->p.dtype);
  if (!(r->bias = calloc((size_t)k, esize)))
    return op_fail(r->o, "cannot allocate %lld bytes for the bias", (long long)k * (long long)esize);
  if (!*path) {
    uint64_t seed = 0xb1a5ull;
    tc_tune_fill(r->bias, (size_t)k, r->d->p.dtype, &seed);
    return CLI_OK;
  }
  int converted = 0;
  TC_STR_LOCAL(err);
  tf_status st = tf_read(path, r->d->p.dtype, 1, &k, r->bias, &converted, &err);
  int rc = file_status(r->o, st, flag, tc_str_cstr(&err));
  if (rc == CLI_OK)
    printf("Read data from input file %s%s%s\n", path, converted ? ", converted to " : "",
           converted ? tc_dtype_name(r->d->p.dtype) : "");
  return rc;
}

/* x, w and dy as the directions need them: read from their files, else
 * pseudo-random in [-1, 1); with --dump_output 1 written to dump_*.bin. */
static int make_data(drv_run *r) {
  const drv_args *a = r->a;
  size_t esize = tc_dtype_size(r->d->p.dtype);
  uint64_t seed = 0x5eed0d71e5ull;
  for (int x = 0; x < NDATA; x++) {
    const char *path = a->val[data_of[x].flag], *flag = a->spelled[data_of[x].flag];
    int64_t n = r->elems[tensor_of(r, x)];
    if (!(r->d->dirs & data_of[x].read_by)) {
      if (*path)
        fprintf(stderr, "tilec driver: note: %s is not read: no direction of -F %d reads %s\n",
                flag, r->d->forw, data_of[x].what);
      continue;
    }
    if (!(r->data[x] = calloc((size_t)n ? (size_t)n : 1, esize)))
      return op_fail(r->o, "cannot allocate %lld bytes for %s", (long long)n * (long long)esize,
                     data_of[x].what);
    if (!*path) {
      tc_tune_fill(r->data[x], (size_t)n, r->d->p.dtype, &seed);
    } else {
      int64_t dims[5];
      int converted = 0;
      TC_STR_LOCAL(err);
      int rank = mem_dims(&r->d->p, tensor_of(r, x), r->out, dims, NULL);
      tf_status st = tf_read(path, r->d->p.dtype, rank, dims, r->data[x], &converted, &err);
      int rc = file_status(r->o, st, flag, tc_str_cstr(&err));
      if (rc != CLI_OK) return rc;
      printf("Read data from input file %s%s%s\n", path, converted ? ", converted to " : "",
             converted ? tc_dtype_name(r->d->p.dtype) : "");
    }
    if (r->d->dump) {
      int rc = write_tensor(r, flag, data_of[x].dump, tensor_of(r, x), r->data[x]);
      if (rc != CLI_OK) return rc;
    }
  }
  return make_bias(r);
}

/* ---- the directions ------------------------------------------------------------ */

typedef struct drv_dir {
  int bit;
  tc_conv2d_direction dir;
  const char *tag;         /* --out's infix, as -F's help names them */
  const char *verify_name; /* MIOpenDriver's names in its lines */
  const char *time_name;
  const char *stats_name;
  const char *dump_gpu, *dump_cpu;
} drv_dir;

static const drv_dir dirs_of[3] = {
    {1, TC_CONV2D_FORWARD, "fwd", "Forward Convolution", "Forward Conv.", "fwd-conv",
     "dump_fwd_out_gpu.bin", "dump_fwd_out_cpu.bin"},
    {2, TC_CONV2D_BACKWARD_DATA, "bwd", "Backward Convolution Data", "Backward Data Conv.",
     "bwdd-conv", "dump_bwd_din_gpu.bin", "dump_bwd_din_cpu.bin"},
    {4, TC_CONV2D_BACKWARD_WEIGHT, "wrw", "Backward Convolution Weights",
     "Backward Weights Conv.", "bwdw-conv", "dump_bwd_dwei_gpu.bin", "dump_bwd_dwei_cpu.bin"},
};

/* --out FILE for direction dd: FILE itself when one direction runs, else
 * FILE with ".fwd" (".bwd", ".wrw") before its extension. */
static void out_path(const drv_run *r, const drv_dir *dd, char *buf, size_t cap) {
  const char *f = r->a->val[D_OUT];
  int several = r->d->dirs != 1 && r->d->dirs != 2 && r->d->dirs != 4;
  const char *slash = strrchr(f, '/'), *dot = strrchr(f, '.');
  if (!several) {
    snprintf(buf, cap, "%s", f);
  } else if (dot && (!slash || dot > slash + 1)) {
    snprintf(buf, cap, "%.*s.%s%s", (int)(dot - f), f, dd->tag, dot);
  } else {
    snprintf(buf, cap, "%s.%s", f, dd->tag);
  }
}

/* The convolution direction that runs direction dd: with -m trans the
 * forward is the backward data and the backward data the forward. */
static tc_conv2d_direction conv_dir_of(const drv_run *r, const drv_dir *dd) {
  if (!r->d->trans || dd->dir == TC_CONV2D_BACKWARD_WEIGHT) return dd->dir;
  return dd->dir == TC_CONV2D_FORWARD ? TC_CONV2D_BACKWARD_DATA : TC_CONV2D_FORWARD;
}

/* The convolution tensor direction dd writes. */
static int written_of(const drv_run *r, const drv_dir *dd) {
  return (int)tc_conv_written_buf((tc_conv_dir)conv_dir_of(r, dd));
}

/* MIOpenDriver's time and stats lines (the sizes of the transposed
 * convolution with -m trans: its C, K and output). */
/* MIOpenDriver's flopCnt: 2 N K (C/G) (Z) Y X (Do) Ho Wo in every direction. */
static double conv_flops(const drv_run *r) {
  const tc_conv_problem *p = &r->d->p;
  return 2.0 * (double)p->n * (double)p->k * (double)(p->c / p->groups) * (double)p->z *
         (double)p->y * (double)p->x * (double)r->out[0] * (double)r->out[1] * (double)r->out[2];
}

static void print_time(const drv_run *r, const drv_dir *dd, const op_report *rep) {
  const tc_conv_problem *p = &r->d->p;
  double flops = conv_flops(r);
  size_t esize = tc_dtype_size(p->dtype);
  int wt = written_of(r, dd);
  int64_t c = p->c, k = p->k, ho = r->out[1], wo = r->out[2];
  if (r->d->trans) c = r->d->trans_c, k = r->d->trans_k, ho = p->h, wo = p->w;
  double written = (double)r->elems[wt] * (double)esize;
  double read = ((double)r->elems[0] + (double)r->elems[1] + (double)r->elems[2]) * (double)esize -
                written;
  printf("GPU Kernel Time %s Elapsed: %f ms (median of %lld), %.3f GFLOP/s\n", dd->time_name,
         rep->ms, (long long)r->d->iters, rep->gflops);
  printf("stats: name, n, c, ho, wo, x, y, k, flopCnt, bytesRead, bytesWritten, GFLOPs, GB/s, "
         "timeMs\n");
  printf("stats: %s%lldx%lldu%lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld,  %.0f, %.0f, %.0f, "
         "%.3f, %.3f, %f\n", dd->stats_name, (long long)p->y, (long long)p->x,
         (long long)p->stride_h, (long long)p->n, (long long)c, (long long)ho, (long long)wo,
         (long long)p->x, (long long)p->y, (long long)k, flops, read, written,
         rep->gflops, rep->ms > 0 ? (read + written) / (rep->ms * 1e6) : 0.0, rep->ms);
}

/* The convolution of direction dir through the API: the 2-D description
 * of conv_make_desc (which checks it and completes d->p), extended by the
 * depth in 3-D.  CLI_OK with *c (free it), or the exit code. */
static int drv_conv_new(const drv_run *r, tc_conv2d_direction dir, tc_conv2d **c) {
  op_opts *o = r->o;
  drv_problem *d = r->d;
  tc_conv2d_desc desc;
  int rc = conv_make_desc(o, &d->p, dir, d->pad_h, d->pad_w, d->side, &desc);
  if (rc != CLI_OK) return rc;
  tc_op_options opt = {o->target, o->device, o->arch, NULL};
  if (d->nsp == 2) {
    *c = tc_conv2d_new(&desc, &opt);
    return CLI_OK;
  }
  tc_conv_problem *p = &d->p;
  p->pad_d_l = d->side_d[0] != INT64_MIN ? d->side_d[0] : d->pad_d;
  p->pad_d_r = d->side_d[1] != INT64_MIN ? d->side_d[1] : d->pad_d;
  tc_conv3d_desc d3;
  tc_conv3d_desc_init(&d3);
  d3.direction = desc.direction;
  d3.n = p->n, d3.c = p->c, d3.d = p->d, d3.h = p->h, d3.w = p->w;
  d3.k = p->k, d3.z = p->z, d3.y = p->y, d3.x = p->x;
  d3.pad_front = p->pad_d_l, d3.pad_back = p->pad_d_r;
  d3.pad_top = p->pad_h_l, d3.pad_bottom = p->pad_h_r;
  d3.pad_left = p->pad_w_l, d3.pad_right = p->pad_w_r;
  d3.stride_d = p->stride_d, d3.stride_h = p->stride_h, d3.stride_w = p->stride_w;
  d3.dilation_d = p->dil_d, d3.dilation_h = p->dil_h, d3.dilation_w = p->dil_w;
  d3.groups = p->groups, d3.dtype = p->dtype;
  d3.in_layout = p->in_layout, d3.fil_layout = p->fil_layout, d3.out_layout = p->out_layout;
  *c = tc_conv3d_new(&d3, &opt);
  return CLI_OK;
}

/* The forward result (the written tensor wt) seen as [outer, K, inner]
 * for the bias pass. */
static conv_bias_shape bias_shape(const drv_run *r, int wt) {
  int64_t dims[5];
  int ch = 0, rank = mem_dims(&r->d->p, wt, r->out, dims, &ch);
  conv_bias_shape s = {1, dims[ch], 1};
  for (int i = 0; i < rank; i++) {
    if (i < ch) s.outer *= dims[i];
    if (i > ch) s.inner *= dims[i];
  }
  return s;
}

/* -b 1 with the backward direction: the bias gradient db[k], the sum of
 * dy over all but its channel dim, by a reduction kernel, verified
 * against the sums in double.  CLI_OK or CLI_FAIL. */
static int run_bias_grad(drv_run *r) {
  op_opts *o = r->o;
  drv_problem *d = r->d;
  conv_bias_shape s = bias_shape(r, tensor_of(r, X_DOUT));
  size_t esize = tc_dtype_size(d->p.dtype);
  void *db = calloc((size_t)s.channels, esize);
  if (!db) return op_fail(o, "cannot allocate the bias gradient");
  tc_tune_fill(db, (size_t)s.channels, d->p.dtype, NULL); /* NaN until written */
  TC_STR_LOCAL(why);
  double ms = 0;
  int rc = CLI_OK;
  tc_status st = conv_bias_grad(o->target, o->device, o->arch, d->p.dtype, s, r->data[X_DOUT], db,
                                &ms, &why);
  if (st != TC_OK) {
    rc = op_fail(o, "the bias gradient: %s", tc_str_cstr(&why));
  } else {
    if (d->print)
      printf("plan: 1 kernel: tilec_conv_bias_grad (db[k] = the sum of dy over all but k, a "
             "reduction fusion)\n");
    if (d->time) printf("GPU Kernel Time Backward Conv. Bias Elapsed: %f ms\n", ms);
    if (d->verify) {
      double worst = 0;
      int64_t bad = conv_bias_grad_verify(d->p.dtype, s, r->data[X_DOUT], db, &worst, &why);
      if (bad == 0)
        printf("Backward Convolution Bias Verifies OK on CPU reference (max error %.3g of the "
               "bound; %lld elements)\n", worst, (long long)s.channels);
      else
        printf("Backward Convolution Bias FAILED: %s\n", tc_str_cstr(&why));
      if (bad) rc = CLI_FAIL;
    }
  }
  fflush(stdout);
  free(db);
  return rc;
}

/* Runs, times, verifies and writes one direction.  CLI_OK, CLI_FAIL (run
 * or verify failed, a file not written) or CLI_USAGE (the problem). */
static int run_dir(drv_run *r, const drv_dir *dd) {
  op_opts *o = r->o;
  drv_problem *d = r->d;
  tc_conv2d *c = NULL;
  int rc = drv_conv_new(r, conv_dir_of(r, dd), &c);
  if (rc != CLI_OK) return rc;
  int bias = r->bias && dd->bit == 1;
  op_report rep;
  memset(&rep, 0, sizeof rep);
  snprintf(rep.device, sizeof rep.device, "%s", r->device);
  void *result = NULL, *ref = NULL;
  double *times = NULL;
  int wt = written_of(r, dd);
  size_t esize = tc_dtype_size(d->p.dtype);
  tc_status st;
  if (d->print) printf("problem: %s\n", tc_conv2d_problem_string(c));
  if (o->tune) {
    if ((rc = conv_tune(o, c, &rep)) != CLI_OK) goto out;
  } else if ((st = tc_conv2d_plan(c, NULL)) != TC_OK) {
    rc = op_fail(o, "cannot plan the %s convolution (%s): %s", dd->tag, tc_status_name(st),
                 op_api_message(tc_conv2d_error(c)));
    goto out;
  }
  conv_report_plan(o, c, &rep, d->print);
  fflush(stdout);
  /* the buffers as the API takes them: x, w, y; the written one is NaN
   * before the run, so an element no kernel writes cannot pass */
  if (!(result = calloc((size_t)r->elems[wt] ? (size_t)r->elems[wt] : 1, esize))) {
    rc = op_fail(o, "cannot allocate the %s result", dd->tag);
    goto out;
  }
  tc_tune_fill(result, (size_t)r->elems[wt], d->p.dtype, NULL);
  void *buf[3];
  for (int x = 0; x < NDATA; x++) buf[tensor_of(r, x)] = r->data[x];
  buf[wt] = result;
  if (d->time) times = tc_xcalloc((size_t)d->iters, sizeof *times);
  double wall0 = tc_now_seconds();
  st = tc_conv2d_run_timed(c, buf[0], buf[1], buf[2], &rep.first_ms, times ? (int)d->iters : 0,
                           times);
  double wall_ms = (tc_now_seconds() - wall0) * 1e3 / (double)(1 + (times ? d->iters : 0));
  if (st != TC_OK) {
    rc = op_fail(o, "the %s kernels failed (%s): %s", dd->tag, tc_status_name(st),
                 op_api_message(tc_conv2d_error(c)));
    goto out;
  }
  if (times) {
    op_set_time(o, &rep, times, conv_flops(r));
    times = NULL;
    print_time(r, dd, &rep);
    if (d->wall) printf("Wall-clock Time %s Elapsed: %f ms\n", dd->time_name, wall_ms);
  }
  /* -b 1: the bias, added by its own kernel after the convolution's */
  conv_bias_shape bs = bias_shape(r, wt);
  if (bias) {
    TC_STR_LOCAL(why);
    double bms = 0;
    st = conv_bias_add(o->target, o->device, o->arch, d->p.dtype, bs, result, r->bias, &bms, &why);
    if (st != TC_OK) {
      rc = op_fail(o, "the %s bias: %s", dd->tag, tc_str_cstr(&why));
      goto out;
    }
    if (d->print) printf("plan: + 1 kernel: tilec_conv_bias (y + bias[k], a pointwise fusion)\n");
    if (d->time) printf("GPU Kernel Time %s Bias Elapsed: %f ms\n", dd->time_name, bms);
  }
  /* the files first (as MIOpenDriver dumps before it verifies); one that
   * cannot be written fails the direction, which is still verified */
  rc = CLI_OK;
  if (d->dump) rc = write_tensor(r, r->a->spelled[D_DUMP], dd->dump_gpu, wt, result);
  if (*r->a->val[D_OUT]) {
    char path[4200];
    out_path(r, dd, path, sizeof path);
    int wrc = write_tensor(r, r->a->spelled[D_OUT], path, wt, result);
    if (wrc != CLI_OK) rc = wrc;
  }
  if (d->verify) {
    tc_op_verify_result v;
    int64_t bad;
    if (bias) {
      /* the sum's own reference and bound (the bias is no part of the API's
       * convolution) */
      memset(&v, 0, sizeof v);
      TC_STR_LOCAL(msg);
      bad = tc_conv_verify_bias(&d->p, buf[0], buf[1], buf[2], r->bias, &v.worst, &msg);
      snprintf(v.message, sizeof v.message, "%s", tc_str_cstr(&msg));
    } else {
      bad = tc_conv2d_verify_result(c, buf[0], buf[1], buf[2], &v);
    }
    if (bad == 0)
      printf("%s Verifies OK on CPU reference (max error %.3g of the bound; %lld elements)\n",
             dd->verify_name, v.worst, (long long)r->elems[wt]);
    else
      printf("%s FAILED: %s\n", dd->verify_name,
             bad < 0 && !bias ? op_api_message(tc_conv2d_error(c)) : v.message);
    if (bad != 0) rc = CLI_FAIL;
    if (d->dump) {
      /* MIOpenDriver's dump of the CPU reference */
      if (!(ref = calloc((size_t)r->elems[wt] ? (size_t)r->elems[wt] : 1, esize))) {
        rc = op_fail(o, "cannot allocate the %s reference", dd->tag);
        goto out;
      }
      buf[wt] = ref;
      int ok = tc_conv2d_reference(c, buf[0], buf[1], buf[2]) == TC_OK;
      if (ok && bias) conv_bias_add_host(d->p.dtype, bs, ref, r->bias);
      int wrc = ok ? write_tensor(r, r->a->spelled[D_DUMP], dd->dump_cpu, wt, ref)
                   : op_fail(o, "the %s reference failed: %s", dd->tag,
                             op_api_message(tc_conv2d_error(c)));
      if (wrc != CLI_OK) rc = wrc;
    }
  }
out:
  fflush(stdout);
  free(times);
  free(result);
  free(ref);
  free((char *)rep.db_path);
  tc_conv2d_free(c);
  return rc;
}

/* ---- the command ------------------------------------------------------------------ */

int cmd_driver(int argc, char **argv) {
  op_opts o;
  op_opts_init(&o, "driver");
  if (argc < 2 || cli_is_help(argv[1]) || strcmp(argv[1], "-?") == 0) {
    driver_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? CLI_USAGE : CLI_OK;
  }
  drv_args a;
  int done = 0, rc;
  if (argv[1][0] == '-')
    return op_usage_error(&o, "the first word is the command (conv or convfp16), got '%s'",
                          argv[1]);
  /* a word MIOpenDriver does not know is a usage error before the flags;
   * one tilec refuses is refused after them (a malformed line first) */
  if ((rc = known_word(&o, argv[1])) != CLI_OK) return rc;
  if ((rc = parse_flags(&o, &a, argc, argv, &done)) != CLI_OK || done) return rc;
  if ((rc = check_word(&o, argv[1])) != CLI_OK) return rc;
  drv_problem d;
  memset(&d, 0, sizeof d);
  if ((rc = read_problem(&o, &a, &d)) != CLI_OK) return rc;
  /* tilec's own flags */
  o.device = *a.val[D_DEVICE] ? a.val[D_DEVICE] : NULL;
  o.arch = *a.val[D_ARCH] ? a.val[D_ARCH] : NULL;
  o.target_arg = a.val[D_TARGET];
  if (strcmp(o.target_arg, "hip") == 0)
    return op_fail(&o, "--target hip is not supported by the driver: it runs every direction, "
                       "and HIP kernels cannot run here (`tilec conv2d --target hip` compiles "
                       "them)");
  o.verify = d.verify, o.time = d.time, o.tune = d.search, o.iters = (int)d.iters;
  if ((rc = op_opts_check(&o)) != CLI_OK) return rc;
  d.p.dtype = o.dtype;

  /* the problem, checked once (the forward one: the sizes are the same
   * in every direction) */
  drv_run r;
  memset(&r, 0, sizeof r);
  r.o = &o, r.d = &d, r.a = &a;
  tc_conv2d *c = NULL;
  if ((rc = drv_conv_new(&r, TC_CONV2D_FORWARD, &c)) != CLI_OK) return rc;
  if (tc_conv3d_output_size(c, &r.out[0], &r.out[1], &r.out[2]) != TC_OK) {
    rc = op_invalid(&o, "%s", op_api_message(tc_conv2d_error(c)));
    tc_conv2d_free(c);
    return rc;
  }
  for (int t = 0; t < 3; t++) r.elems[t] = tc_conv2d_elems(c, (tc_conv2d_tensor)t);
  tc_conv2d_free(c);

  /* MIOpenDriver echoes its command line first */
  printf("tilec driver");
  for (int i = 1; i < argc; i++) printf(" %s", argv[i]);
  printf("\n");
  op_report dev;
  memset(&dev, 0, sizeof dev);
  TC_STR_LOCAL(why);
  int runs;
  if (!op_find_device(&o, &dev, &runs, &why)) {
    fflush(stdout);
    return CLI_FAIL;
  }
  op_print_device(&o, &dev, 1, tc_str_cstr(&why));
  fflush(stdout);
  r.device = dev.device;
  if ((rc = make_data(&r)) == CLI_OK) {
    /* every direction runs, as MIOpenDriver goes on after a failure */
    for (int i = 0; i < 3; i++) {
      if (!(d.dirs & dirs_of[i].bit)) continue;
      int drc = run_dir(&r, &dirs_of[i]);
      if (drc != CLI_OK && (rc == CLI_OK || drc == CLI_USAGE)) rc = drc;
      if (d.bias && dirs_of[i].bit == 2 && (drc = run_bias_grad(&r)) != CLI_OK && rc == CLI_OK)
        rc = drc;
    }
  }
  for (int x = 0; x < NDATA; x++) free(r.data[x]);
  free(r.bias);
  fflush(stdout);
  return rc;
}
