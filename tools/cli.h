/* cli.h - shared pieces of the `tilec` command: the usage text, usage
 * errors, and the subcommands (tilec.c has main and the small commands,
 * cmd_demo.c the demo). */
#ifndef TILEC_CLI_H
#define TILEC_CLI_H

#include <stdio.h>

/* Exit statuses. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* Writes the full usage text to out. */
void cli_usage(FILE *out);
/* Prints "tilec: <message>; run `tilec --help`" on stderr (one line) and
 * returns CLI_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Is arg one of -h, --help, help? */
int cli_is_help(const char *arg);
/* Option value: for "--name VALUE" or "--name=VALUE" at argv[*i] returns
 * the value (advancing *i past it) and sets *err = 0; returns NULL with
 * *err = 0 when argv[*i] is not this option, or NULL with *err = 1 when
 * the value is missing (after printing a usage error). */
const char *cli_option_value(int argc, char **argv, int *i, const char *name, int *err);

/* `tilec demo ...`: argv[0] is "demo". */
int cmd_demo(int argc, char **argv);
/* `tilec cache stats|clear|path ...` (cmd_cache.c): argv[0] is "cache". */
int cmd_cache(int argc, char **argv);
/* `tilec layout ...` (cmd_layout.c): argv[0] is "layout". */
int cmd_layout(int argc, char **argv);
/* `tilec conv2d ...` (cmd_conv.c) and `tilec gemm ...` (cmd_gemm.c): argv[0]
 * is the command name. */
int cmd_conv(int argc, char **argv);
int cmd_gemm(int argc, char **argv);
/* `tilec norm softmax|rmsnorm|layernorm ...` (cmd_norm.c). */
int cmd_norm(int argc, char **argv);
/* `tilec driver conv|convfp16 ...` (cmd_driver.c): MIOpenDriver's
 * convolution command line; argv[0] is "driver". */
int cmd_driver(int argc, char **argv);

#endif
