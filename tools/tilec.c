/* tilec.c - the `tilec` command: argument dispatch, usage, and the small
 * subcommands `version` and `devices`.  `demo` lives in cmd_demo.c.
 *
 * Exit statuses: 0 success, 1 a failure (a kernel did not verify, no
 * device), 2 a usage error (unknown command, option or example name). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/tilec.h"
#include "../src/base/base.h"
#include "../src/runtime/runtime.h"
#include "cli.h"
#include "op_cli.h"

/* ---- usage ------------------------------------------------------------- */

void cli_usage(FILE *out) {
  fputs(
      "tilec " TILEC_VERSION " - a compiler for tile-level GPU kernels\n"
      "\n"
      "usage: tilec <command> [options]\n"
      "\n"
      "commands:\n"
      "  demo      compile, run and verify the example kernels\n"
      "  devices   list the OpenCL platforms and devices (marking the default one)\n"
      "            and whether CUDA (NVRTC, driver, device) and HIP (hipcc, the AMD\n"
      "            archs it compiles for, an AMD GPU) are available; --json\n"
      "            prints one JSON object instead\n"
      "  version   print the version and the state of OpenCL, NVRTC, the CUDA driver,\n"
      "            hipcc and the HIP runtime (--json: as one JSON object)\n"
      "  cache     the on-disk kernel cache: `cache stats [--json]`, `cache clear`,\n"
      "            `cache path` (see `tilec cache --help`)\n"
      "  layout    a tile's memory layout: size, cosize, bijective, bank conflicts,\n"
      "            SVG (--svg), JSON (--json); CuTe layout algebra (--eval EXPR);\n"
      "            see `tilec layout --help`\n"
      "  conv2d    run a 2-D convolution (fwd, bwd-data, bwd-weight) as implicit GEMM,\n"
      "            MIOpenDriver flags (-F -n -c -H -W -k -y -x -p -q -u -v -l -j -g);\n"
      "            -V 1 verifies, --tune tunes into the perf DB (see `tilec conv2d --help`)\n"
      "  driver    run an MIOpenDriver convolution line as it is: `tilec driver conv\n"
      "            -n 2 -c 8 ... -F 0 -t 1` runs, verifies and times fwd, bwd, wrw;\n"
      "            --in_data/--weights/--dout_data read raw or .npy tensors, --out\n"
      "            FILE writes results (see `tilec driver --help`)\n"
      "  gemm      run C = A * B with the gridwise GEMM kernel: -M -N -K --transA\n"
      "            --transB -g (see `tilec gemm --help`)\n"
      "  norm      run softmax, rmsnorm, layernorm, their backward or xent over the rows of an\n"
      "            M x N tensor, scheduled automatically (see `tilec norm --help`)\n"
      "  help      print this help (also -h, --help)\n"
      "\n"
      "demo options:\n"
      "  --target opencl|cuda|hip  opencl (default): compile each example for OpenCL, run\n"
      "                         it and compare its outputs with a plain C reference.\n"
      "                         cuda: compile each example for CUDA and build it with NVRTC\n"
      "                         (no GPU needed); run and verify it where a CUDA device exists.\n"
      "                         hip: the same with hipcc, on an AMD GPU where there is one\n"
      "  --device SEL           the OpenCL device: \"P:D\" indices as `tilec devices` lists\n"
      "                         them, or a case-insensitive substring of the platform or\n"
      "                         device name (e.g. pocl); default: $TILEC_OPENCL_DEVICE, then\n"
      "                         PoCL, then the first device.  OpenCL only\n"
      "  --arch ARCH            the CUDA architecture for --target cuda (default: sm_90a),\n"
      "                         the AMD one for --target hip (default: the AMD GPU's, else\n"
      "                         gfx90a)\n"
      "  --only NAME[,NAME..]   run only the named examples (may be repeated)\n"
      "  --list                 list the examples with a description and exit\n"
      "\n"
      "other options:\n"
      "  -h, --help             this help (also `tilec <command> --help`)\n"
      "  --version              the same as `tilec version`\n"
      "\n"
      "environment:\n"
      "  TILEC_OPENCL_DEVICE    the default OpenCL device when --device is not given\n"
      "                         (the same forms as --device)\n"
      "  CUDA_HOME              also look for libnvrtc in $CUDA_HOME/lib64 (besides the\n"
      "                         loader path and /usr/local/cuda/lib64)\n"
      "  ROCM_PATH              also look for the HIP runtime (libamdhip64) in\n"
      "                         $ROCM_PATH/lib (besides the loader path and /opt/rocm/lib)\n"
      "  TILEC_HIP_RUNTIME      the HIP runtime library to load (a path or a name), instead\n"
      "                         of looking for libamdhip64\n"
      "  TILEC_CACHE_DIR        the kernel cache directory (default: $XDG_CACHE_HOME/tilec,\n"
      "                         else $HOME/.cache/tilec)\n"
      "  TILEC_CACHE            0 turns the kernel cache off\n"
      "  TILEC_RUN_TIMEOUT_MS   the longest an OpenCL kernel may run, in milliseconds;\n"
      "                         a longer one fails (timed out) instead of blocking\n"
      "  TILEC_PERFDB           the perf database of conv2d/gemm --tune (default:\n"
      "                         $XDG_DATA_HOME/tilec/perfdb.sqlite, else\n"
      "                         ~/.local/share/tilec/perfdb.sqlite)\n"
      "  TILEC_SWIZZLE_SWAP     0 stops HIP compiles from swapping LDS swizzles to the\n"
      "                         global-load side (docs/swizzle_swap.md)\n"
      "  TILEC_EXPERIMENTAL_WGMMA  1 allows the experimental wgmma: perf configs\n"
      "\n"
      "exit status: 0 success; 1 a kernel failed to compile or verify, or no device;\n"
      "2 a usage error (unknown command, option or example name)\n",
      out);
}

int cli_usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("tilec: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputs("; run `tilec --help`\n", stderr);
  va_end(ap);
  return CLI_USAGE;
}

int cli_is_help(const char *arg) {
  return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0 || strcmp(arg, "help") == 0;
}

const char *cli_option_value(int argc, char **argv, int *i, const char *name, int *err) {
  const char *a = argv[*i];
  size_t n = strlen(name);
  *err = 0;
  if (strncmp(a, name, n) != 0) return NULL;
  if (a[n] == '=') return a + n + 1;
  if (a[n] != 0) return NULL;
  if (*i + 1 >= argc) {
    cli_usage_error("option %s needs a value", name);
    *err = 1;
    return NULL;
  }
  *i += 1;
  return argv[*i];
}

/* Rejects arguments to commands that take none (other than --help, and
 * --json where json is not NULL). */
static int no_arguments(const char *cmd, int argc, char **argv, int *help, int *json) {
  *help = 0;
  if (json) *json = 0;
  for (int i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      *help = 1;
      continue;
    }
    if (json && strcmp(argv[i], "--json") == 0) {
      *json = 1;
      continue;
    }
    if (argv[i][0] == '-') return cli_usage_error("unknown option '%s' for `tilec %s`", argv[i], cmd);
    return cli_usage_error("unexpected argument '%s' for `tilec %s`", argv[i], cmd);
  }
  return CLI_OK;
}

/* ---- version ----------------------------------------------------------- */

/* Copies the line of `text` that starts with `prefix` (without the prefix
 * and the newline) into buf; returns 0 when there is none. */
static int find_line(const char *text, const char *prefix, char *buf, size_t cap) {
  size_t n = strlen(prefix);
  for (const char *p = text; p && *p;) {
    const char *end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len >= n && strncmp(p, prefix, n) == 0) {
      size_t m = len - n < cap - 1 ? len - n : cap - 1;
      memcpy(buf, p + n, m);
      buf[m] = 0;
      return 1;
    }
    p = end ? end + 1 : NULL;
  }
  buf[0] = 0;
  return 0;
}

static void print_opencl_state(void) {
  TC_STR_LOCAL(why);
  tc_cl_platform_info *ps;
  int np = tc_cl_platforms(&ps, &why);
  if (np == 0) {
    printf("OpenCL ICD: loaded, 0 platforms (install pocl-opencl-icd)\n");
    return;
  }
  if (np < 0) {
    printf("OpenCL ICD: loaded, %s\n", tc_str_cstr(&why));
    return;
  }
  printf("OpenCL ICD: loaded, %d platform%s (", np, np == 1 ? "" : "s");
  for (int p = 0; p < np; p++) printf("%s%s", p ? ", " : "", ps[p].name);
  printf(")\n");
  tc_cl_platforms_free(ps, np);
}

/* ---- --json of version and devices --------------------------------------- */

/* "cuda": NVRTC, the driver and device 0, from tc_cuda_describe. */
static void json_cuda(tc_str *j) {
  tc_str d;
  tc_str_init(&d);
  tc_cuda_describe(&d);
  const char *text = tc_str_cstr(&d);
  char line[1024];
  int maj = 0, min = 0;
  tc_str_cat(j, "\"cuda\": {\"nvrtc\": {");
  if (tc_cuda_nvrtc_version(&maj, &min) && find_line(text, "CUDA compiler: NVRTC ", line, sizeof line)) {
    /* "12.4 (/usr/local/cuda/lib64/libnvrtc.so)" */
    char *open = strchr(line, '(');
    char *close = open ? strrchr(open, ')') : NULL;
    tc_str_printf(j, "\"available\": true, \"version\": \"%d.%d\", \"library\": ", maj, min);
    if (open && close) {
      *close = 0;
      op_json_str(j, open + 1);
    } else {
      tc_str_cat(j, "null");
    }
    tc_str_cat(j, ", \"reason\": null}");
  } else {
    tc_str_cat(j, "\"available\": false, \"version\": null, \"library\": null, \"reason\": ");
    if (!find_line(text, "CUDA compiler: unavailable: ", line, sizeof line)) snprintf(line, sizeof line, "not found");
    op_json_str(j, line);
    tc_str_cat(j, "}");
  }
  tc_str why;
  tc_str_init(&why);
  int avail = tc_cuda_available(&why);
  int dmaj = 0, dmin = 0, ndev = 0;
  int have_line = find_line(text, "CUDA driver: ", line, sizeof line);
  int parsed = have_line && sscanf(line, "%d.%d, %d device", &dmaj, &dmin, &ndev) == 3;
  tc_str_printf(j, ", \"driver\": {\"available\": %s, \"version\": ", parsed ? "true" : "false");
  if (parsed)
    tc_str_printf(j, "\"%d.%d\", \"devices\": %d, \"reason\": null}", dmaj, dmin, ndev);
  else {
    tc_str_cat(j, "null, \"devices\": 0, \"reason\": ");
    op_json_str(j, have_line ? line : avail ? "unknown" : tc_str_cstr(&why));
    tc_str_cat(j, "}");
  }
  tc_str_printf(j, ", \"device\": {\"available\": %s, ", avail ? "true" : "false");
  char dev[512];
  if (avail && find_line(text, "CUDA device 0: ", dev, sizeof dev)) {
    /* "NVIDIA H100 80GB HBM3 (sm_90)" */
    char *open = strrchr(dev, '(');
    char *close = open ? strrchr(open, ')') : NULL;
    char arch[32] = "";
    if (open && close && open > dev) {
      snprintf(arch, sizeof arch, "%.*s", (int)(close - open - 1), open + 1);
      *open = 0;
      if (open > dev && open[-1] == ' ') open[-1] = 0;
    }
    tc_str_cat(j, "\"index\": 0, \"name\": ");
    op_json_str(j, dev);
    tc_str_cat(j, ", \"arch\": ");
    if (arch[0]) op_json_str(j, arch); else tc_str_cat(j, "null");
    tc_str_cat(j, ", \"reason\": null}");
  } else {
    tc_str_cat(j, "\"index\": null, \"name\": null, \"arch\": null, \"reason\": ");
    op_json_str(j, avail ? "unknown" : tc_str_cstr(&why));
    tc_str_cat(j, "}");
  }
  tc_str_cat(j, "}");
  tc_str_free(&why);
  tc_str_free(&d);
}

/* "hip": hipcc, the archs it compiles for (with_archs: from
 * tc_hip_describe, which tries each; else null) and the AMD GPU. */
static void json_hip(tc_str *j, int with_archs) {
  char hipcc[4096], ver[64];
  tc_str_cat(j, "\"hip\": {\"hipcc\": {");
  if (tc_hip_find_hipcc(hipcc, sizeof hipcc)) {
    tc_str_cat(j, "\"available\": true, \"version\": ");
    if (tc_hip_hipcc_version(ver, sizeof ver)) op_json_str(j, ver); else tc_str_cat(j, "null");
    tc_str_cat(j, ", \"path\": ");
    op_json_str(j, hipcc);
    tc_str_cat(j, ", \"reason\": null}");
  } else {
    tc_str_cat(j, "\"available\": false, \"version\": null, \"path\": null, \"reason\": "
                  "\"hipcc not found (apt-get install hipcc libamdhip64-dev rocm-device-libs)\"}");
  }
  tc_str_cat(j, ", \"archs\": ");
  char line[1024];
  tc_str d;
  tc_str_init(&d);
  if (with_archs) tc_hip_describe(&d);
  if (with_archs && find_line(tc_str_cstr(&d), "HIP archs: compiles for ", line, sizeof line)) {
    /* "gfx90a, gfx940; not supported by this hipcc: ..." */
    line[strcspn(line, ";")] = 0;
    tc_str_cat(j, "[");
    int n = 0;
    for (char *p = line; *p;) {
      size_t len = strcspn(p, ", ");
      if (len && !(len == 4 && strncmp(p, "none", 4) == 0)) {
        char arch[64];
        snprintf(arch, sizeof arch, "%.*s", (int)len, p);
        if (n++) tc_str_cat(j, ", ");
        op_json_str(j, arch);
      }
      p += len;
      p += strspn(p, ", ");
    }
    tc_str_cat(j, "]");
  } else {
    tc_str_cat(j, with_archs ? "[]" : "null");
  }
  tc_str_free(&d);
  tc_str m;
  tc_str_init(&m);
  tc_hip_device gpu;
  int avail = tc_hip_device_get(&gpu, &m);
  tc_str_printf(j, ", \"device\": {\"available\": %s, ", avail ? "true" : "false");
  if (avail) {
    tc_str_cat(j, "\"name\": ");
    op_json_str(j, gpu.name);
    tc_str_cat(j, ", \"arch\": ");
    op_json_str(j, gpu.target_id);
    tc_str_printf(j, ", \"compute_units\": %d, \"lds_bytes\": %d, \"wavefront\": %d, "
                  "\"reason\": null", gpu.compute_units, gpu.lds_bytes, gpu.warp);
  } else {
    tc_str_cat(j, "\"name\": null, \"arch\": null, \"reason\": ");
    op_json_str(j, tc_str_cstr(&m));
  }
  tc_str_cat(j, "}}");
  tc_str_free(&m);
}

static int print_json_and_free(tc_str *j) {
  tc_str_cat(j, "}\n");
  fputs(tc_str_cstr(j), stdout);
  fflush(stdout);
  tc_str_free(j);
  return CLI_OK;
}

static int print_version_json(void) {
  tc_str j;
  tc_str_init(&j);
  tc_str_cat(&j, "{\"command\": \"version\", \"tilec\": ");
  op_json_str(&j, TILEC_VERSION);
  TC_STR_LOCAL(why);
  tc_cl_platform_info *ps;
  int np = tc_cl_platforms(&ps, &why);
  tc_str_cat(&j, ", \"opencl\": {\"platforms\": [");
  for (int p = 0; p < np; p++) {
    if (p) tc_str_cat(&j, ", ");
    op_json_str(&j, ps[p].name);
  }
  tc_str_cat(&j, "], \"reason\": ");
  if (why.len) op_json_str(&j, tc_str_cstr(&why)); else tc_str_cat(&j, "null");
  tc_str_cat(&j, "}, ");
  if (np > 0) tc_cl_platforms_free(ps, np);
  json_cuda(&j);
  tc_str_cat(&j, ", ");
  json_hip(&j, 0);
  return print_json_and_free(&j);
}

static int print_devices_json(void) {
  /* the default device: what tc_cl_open picks without a selector */
  tc_str err;
  tc_str_init(&err);
  tc_cl *cl = NULL;
  char *def = NULL;
  if (tc_cl_open(NULL, &cl, &err) == TC_OK) {
    def = tc_xstrdup(tc_cl_device_name(cl));
    tc_cl_close(cl);
  }
  tc_str j;
  tc_str_init(&j);
  tc_str_cat(&j, "{\"command\": \"devices\", \"opencl\": {\"platforms\": [");
  TC_STR_LOCAL(why);
  tc_cl_platform_info *ps;
  int np = tc_cl_platforms(&ps, &why);
  tc_str devs;
  tc_str_init(&devs);
  int ndevs = 0, marked = 0;
  for (int p = 0; p < np; p++) {
    const tc_cl_platform_info *pl = &ps[p];
    tc_str_printf(&j, "%s{\"index\": %u, \"name\": ", p ? ", " : "", (unsigned)p);
    op_json_str(&j, pl->name);
    tc_str_cat(&j, ", \"vendor\": ");
    op_json_str(&j, pl->vendor);
    tc_str_cat(&j, ", \"version\": ");
    op_json_str(&j, pl->version);
    tc_str_printf(&j, ", \"devices\": %u}", (unsigned)pl->ndevices);
    for (int d = 0; d < pl->ndevices; d++) {
      const tc_cl_device_info *dv = &pl->devices[d];
      /* the default is the first device whose "platform / device" is def */
      char full[600];
      snprintf(full, sizeof full, "%s / %s", pl->name, dv->name);
      int is_def = def && !marked && strcmp(full, def) == 0;
      if (is_def) marked = 1;
      tc_str_printf(&devs, "%s{\"index\": \"%u:%u\", \"platform_index\": %u, \"device_index\": %u, "
                    "\"platform\": ", ndevs ? ", " : "", (unsigned)p, (unsigned)d, (unsigned)p,
                    (unsigned)d);
      op_json_str(&devs, pl->name);
      tc_str_cat(&devs, ", \"name\": ");
      op_json_str(&devs, dv->name);
      tc_str_printf(&devs, ", \"type\": \"%s\", \"compute_units\": %u, \"local_mem_bytes\": %llu, "
                    "\"global_mem_bytes\": %llu, \"default\": %s}", dv->type, dv->compute_units,
                    dv->local_mem_bytes, dv->global_mem_bytes, is_def ? "true" : "false");
      ndevs++;
    }
  }
  if (np > 0) tc_cl_platforms_free(ps, np);
  tc_str_cat(&j, "], \"devices\": [");
  tc_str_cat(&j, tc_str_cstr(&devs));
  tc_str_cat(&j, "], \"default\": ");
  if (def) op_json_str(&j, def); else tc_str_cat(&j, "null");
  tc_str_cat(&j, ", \"default_reason\": ");
  if (def) tc_str_cat(&j, "null"); else op_json_str(&j, tc_str_cstr(&err));
  const char *env = getenv("TILEC_OPENCL_DEVICE");
  tc_str_cat(&j, ", \"TILEC_OPENCL_DEVICE\": ");
  if (env && *env) op_json_str(&j, env); else tc_str_cat(&j, "null");
  tc_str_cat(&j, ", \"reason\": ");
  if (why.len) op_json_str(&j, tc_str_cstr(&why)); else tc_str_cat(&j, "null");
  tc_str_cat(&j, "}, ");
  json_cuda(&j);
  tc_str_cat(&j, ", ");
  json_hip(&j, 1);
  tc_str_free(&devs);
  tc_str_free(&err);
  free(def);
  return print_json_and_free(&j);
}

/* `tilec version`'s HIP lines: hipcc, the HIP runtime and the AMD GPU (no
 * arch probing; `tilec devices` lists the archs hipcc compiles for). */
static void print_hip_state(void) {
  char hipcc[4096], ver[64];
  if (tc_hip_find_hipcc(hipcc, sizeof hipcc)) {
    int known = tc_hip_hipcc_version(ver, sizeof ver);
    printf("hipcc: HIP %s (%s)%s\n", known ? ver : "version unknown", hipcc,
           known && strncmp(ver, "5.", 2) == 0
               ? "; compiles for gfx90a and gfx940, not gfx942 or gfx950 (kernels are still "
                 "emitted for them)"
               : "");
  } else {
    printf("hipcc: not found (apt-get install hipcc libamdhip64-dev rocm-device-libs)\n");
  }
  tc_str rt;
  tc_str_init(&rt);
  tc_hip_describe_runtime(&rt); /* "HIP runtime: ..." (when loaded) and "HIP device: ..." */
  fputs(tc_str_cstr(&rt), stdout);
  tc_str_free(&rt);
}

static int cmd_version(int argc, char **argv) {
  int help, json;
  int rc = no_arguments("version", argc, argv, &help, &json);
  if (rc) return rc;
  if (help) {
    printf("usage: tilec version [--json]\n"
           "prints the version and one line each for the OpenCL ICD loader, NVRTC, the\n"
           "CUDA driver, hipcc, the HIP runtime and the AMD GPU; --json prints them as\n"
           "one JSON object\n");
    return CLI_OK;
  }
  if (json) return print_version_json();
  printf("tilec %s\n", TILEC_VERSION);
  print_opencl_state();

  tc_str cuda;
  tc_str_init(&cuda);
  tc_cuda_describe(&cuda);
  char line[1024];
  const char *text = tc_str_cstr(&cuda);
  if (find_line(text, "CUDA compiler: NVRTC ", line, sizeof line))
    printf("NVRTC: %s\n", line);
  else if (find_line(text, "CUDA compiler: unavailable: NVRTC ", line, sizeof line))
    printf("NVRTC: %s\n", line); /* "not found (tried ...)" */
  else if (find_line(text, "CUDA compiler: unavailable: ", line, sizeof line))
    printf("NVRTC: not found (%s)\n", line);
  else
    printf("NVRTC: not found\n");
  if (find_line(text, "CUDA driver: ", line, sizeof line))
    printf("CUDA driver: %s\n", line);
  else
    printf("CUDA driver: unknown\n");
  char dev[512];
  if (find_line(text, "CUDA device 0: ", dev, sizeof dev)) printf("CUDA device 0: %s\n", dev);
  tc_str_free(&cuda);
  print_hip_state();
  return CLI_OK;
}

/* ---- devices ----------------------------------------------------------- */

/* Does listing line `line` ("P:D  platform / device (...)") name the device
 * `name` ("platform / device")? */
static int line_names(const char *line, size_t len, const char *name) {
  const char *p = memchr(line, ' ', len);
  if (!p) return 0;
  while ((size_t)(p - line) < len && *p == ' ') p++;
  size_t n = strlen(name), rest = len - (size_t)(p - line);
  return rest > n + 1 && strncmp(p, name, n) == 0 && p[n] == ' ' && p[n + 1] == '(';
}

/* "\nTITLE:" and then what describe writes, each line indented. */
static void print_section(const char *title, void (*describe)(tc_str *out)) {
  tc_str d;
  tc_str_init(&d);
  describe(&d);
  printf("\n%s:\n", title);
  for (const char *p = tc_str_cstr(&d); *p;) {
    const char *end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    printf("  %.*s\n", (int)len, p);
    p = end ? end + 1 : p + len;
  }
  tc_str_free(&d);
}

static int cmd_devices(int argc, char **argv) {
  int help, json;
  int rc = no_arguments("devices", argc, argv, &help, &json);
  if (rc) return rc;
  if (help) {
    printf("usage: tilec devices [--json]\n"
           "lists the OpenCL platforms and devices (\"P:D\" indices for --device and\n"
           "$TILEC_OPENCL_DEVICE; '*' marks the default device), CUDA availability and\n"
           "HIP's (hipcc, the AMD archs it compiles for, the AMD GPU);\n"
           "--json prints them as one JSON object\n");
    return CLI_OK;
  }
  if (json) return print_devices_json();

  /* The default device: what tc_cl_open picks without a selector. */
  tc_str err;
  tc_str_init(&err);
  tc_cl *cl = NULL;
  char *def = NULL;
  if (tc_cl_open(NULL, &cl, &err) == TC_OK) {
    def = tc_xstrdup(tc_cl_device_name(cl));
    tc_cl_close(cl);
  }

  tc_str list;
  tc_str_init(&list);
  int n = tc_cl_list_devices(&list);
  printf("OpenCL devices:\n");
  if (n == 0) {
    const char *t = tc_str_cstr(&list);
    printf("  none: %s", t);
    if (!*t || t[strlen(t) - 1] != '\n') printf("\n");
  } else {
    int marked = 0;
    for (const char *p = tc_str_cstr(&list); *p;) {
      const char *end = strchr(p, '\n');
      size_t len = end ? (size_t)(end - p) : strlen(p);
      int is_def = def && !marked && line_names(p, len, def);
      if (is_def) marked = 1;
      printf("%s%.*s%s\n", is_def ? "* " : "  ", (int)len, p, is_def ? "  [default]" : "");
      p = end ? end + 1 : p + len;
    }
    const char *env = getenv("TILEC_OPENCL_DEVICE");
    if (def)
      printf("default device: %s%s%s%s\n", def, env && *env ? " (TILEC_OPENCL_DEVICE=" : "",
             env && *env ? env : "", env && *env ? ")" : "");
    else
      printf("default device: none: %s\n", tc_str_cstr(&err));
    printf("%d OpenCL device%s\n", n, n == 1 ? "" : "s");
  }

  print_section("CUDA", tc_cuda_describe);
  /* HIP: hipcc, the archs it compiles for, the AMD GPU */
  print_section("HIP", tc_hip_describe);
  tc_str_free(&list);
  tc_str_free(&err);
  free(def);
  return CLI_OK;
}

/* ---- main -------------------------------------------------------------- */

int main(int argc, char **argv) {
  if (argc < 2) {
    cli_usage(stderr);
    return CLI_USAGE;
  }
  const char *cmd = argv[1];
  if (cli_is_help(cmd)) {
    if (argc > 2) {
      /* `tilec help demo` is the same as `tilec demo --help` */
      if (strcmp(argv[2], "demo") == 0) {
        char *sub[] = {argv[2], "--help", NULL};
        return cmd_demo(2, sub);
      }
      if (strcmp(argv[2], "cache") == 0) {
        char *sub[] = {argv[2], "--help", NULL};
        return cmd_cache(2, sub);
      }
      if (strcmp(argv[2], "layout") == 0) {
        char *sub[] = {argv[2], "--help", NULL};
        return cmd_layout(2, sub);
      }
      if (strcmp(argv[2], "conv2d") == 0 || strcmp(argv[2], "gemm") == 0) {
        char *sub[] = {argv[2], "--help", NULL};
        return strcmp(argv[2], "gemm") == 0 ? cmd_gemm(2, sub) : cmd_conv(2, sub);
      }
      if (strcmp(argv[2], "norm") == 0) {
        char *sub[] = {argv[2], "--help", NULL};
        return cmd_norm(2, sub);
      }
      if (strcmp(argv[2], "driver") == 0) {
        char *sub[] = {argv[2], "--help", NULL};
        return cmd_driver(2, sub);
      }
      if (strcmp(argv[2], "version") == 0 || strcmp(argv[2], "devices") == 0) {
        char *sub[] = {argv[2], "--help", NULL};
        return strcmp(argv[2], "version") == 0 ? cmd_version(2, sub) : cmd_devices(2, sub);
      }
      if (!cli_is_help(argv[2])) return cli_usage_error("unknown command '%s'", argv[2]);
    }
    cli_usage(stdout);
    return CLI_OK;
  }
  if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0)
    return cmd_version(argc - 1, argv + 1);
  if (strcmp(cmd, "devices") == 0) return cmd_devices(argc - 1, argv + 1);
  if (strcmp(cmd, "demo") == 0) return cmd_demo(argc - 1, argv + 1);
  if (strcmp(cmd, "cache") == 0) return cmd_cache(argc - 1, argv + 1);
  if (strcmp(cmd, "layout") == 0) return cmd_layout(argc - 1, argv + 1);
  if (strcmp(cmd, "conv2d") == 0) return cmd_conv(argc - 1, argv + 1);
  if (strcmp(cmd, "gemm") == 0) return cmd_gemm(argc - 1, argv + 1);
  if (strcmp(cmd, "norm") == 0) return cmd_norm(argc - 1, argv + 1);
  if (strcmp(cmd, "driver") == 0) return cmd_driver(argc - 1, argv + 1);
  if (cmd[0] == '-') return cli_usage_error("unknown option '%s'", cmd);
  return cli_usage_error("unknown command '%s'", cmd);
}
