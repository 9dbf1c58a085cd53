/* fuzz_cli.c - libFuzzer harness for the `tilec` command line, in
 * process.  The first byte picks the command, the rest is its arguments,
 * one per line.
 *
 *   layout: cmd_layout with the arguments as given (CuTe layouts,
 *           transform lists, --eval expressions, --tv, --json, --grid ...),
 *           except that --svg always writes to /dev/null;
 *   gemm, conv2d: cmd_gemm / cmd_conv with "--target bogus" appended, so
 *           the whole option loop runs and the command stops at the
 *           target check (a usage error) before any device or kernel work.
 *
 * The exit status must be 0, 1 or 2 (CLI_OK, CLI_FAIL, CLI_USAGE). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/cli.h"
#include "fuzz_util.h"

#define MAX_ARGS 24

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  setenv("TILEC_CACHE", "0", 1);
  /* the commands print their results on stdout */
  if (!freopen("/dev/null", "w", stdout)) abort();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_in in = {data, size};
  unsigned mode = fz_byte(&in) % 3;
  char *text = fz_rest(&in);
  char *argv[MAX_ARGS + 4];
  int argc = 0;
  static const char *names[3] = {"layout", "gemm", "conv2d"};
  argv[argc++] = (char *)names[mode];
  for (char *tok = text, *nl; tok && argc < MAX_ARGS; tok = nl ? nl + 1 : NULL) {
    nl = strchr(tok, '\n');
    if (nl) *nl = 0;
    argv[argc++] = tok;
  }
  static char svg_eq[] = "--svg=/dev/null", devnull[] = "/dev/null";
  static char target[] = "--target", bogus[] = "bogus";
  if (mode == 0) {
    for (int i = 1; i < argc; i++) {
      if (strncmp(argv[i], "--svg=", 6) == 0) argv[i] = svg_eq;
      else if (strcmp(argv[i], "--svg") == 0 && i + 1 < argc) argv[++i] = devnull;
    }
  } else {
    argv[argc++] = target;
    argv[argc++] = bogus;
  }
  argv[argc] = NULL;
  int rc = mode == 0 ? cmd_layout(argc, argv) : mode == 1 ? cmd_gemm(argc, argv)
                                                          : cmd_conv(argc, argv);
  FZ_ASSERT(rc == CLI_OK || rc == CLI_FAIL || rc == CLI_USAGE, "exit status %d", rc);
  FZ_ASSERT(mode == 0 || rc == CLI_OK || rc == CLI_USAGE, "%s: exit status %d before the device",
            names[mode], rc);
  free(text);
  return 0;
}
