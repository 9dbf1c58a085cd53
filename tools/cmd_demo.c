/* cmd_demo.c - `tilec demo`: compiles every example kernel (or a chosen
 * subset), runs it and compares its outputs with the plain C reference.
 *
 *   --target opencl (default)  compile for OpenCL, run on the OpenCL device
 *                              (PoCL by default), verify.
 *   --target cuda              compile for CUDA and build with NVRTC (no GPU
 *                              needed); run and verify where a CUDA device
 *                              exists, else say once why not.
 *   --target hip               the same for AMD GPUs: build with hipcc for
 *                              --arch (default the AMD GPU's, else gfx90a),
 *                              run and verify through the HIP runtime.
 *
 * One table row per example, flushed as it completes; failures print their
 * reason under the row.  Exit 0 only if every selected example verified
 * (for CUDA or HIP without a device: compiled), 1 otherwise, 2 on usage
 * errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/tilec.h"
#include "../src/base/base.h"
#include "../src/demo/examples.h"
#include "../src/runtime/runtime.h"
#include "cli.h"


static void demo_usage(FILE *out) {
  fputs("usage: tilec demo [--target opencl|cuda|hip] [--device SEL] [--arch ARCH]\n"
        "                  [--only NAME[,NAME..]] [--list]\n"
        "\n"
        "compiles the example kernels, runs them and verifies their outputs against a\n"
        "plain C reference; exit 0 only if every one verified.\n"
        "\n"
        "  --target opencl|cuda|hip  opencl (default); cuda: build with NVRTC (no GPU\n"
        "                         needed), run and verify where a CUDA device exists;\n"
        "                         hip: build with hipcc, run and verify where an AMD GPU\n"
        "                         exists\n"
        "  --device SEL           OpenCL device: \"P:D\" or a name substring (e.g. pocl);\n"
        "                         default $TILEC_OPENCL_DEVICE, then PoCL, then the first\n"
        "  --arch ARCH            CUDA architecture (default: " TC_CUDA_OPS_DEFAULT_ARCH "), or\n"
        "                         AMD one (default: the AMD GPU's, else " TC_HIP_DEFAULT_ARCH ")\n"
        "  --only NAME[,NAME..]   run only these examples (see --list)\n"
        "  --list                 list the examples and exit\n",
        out);
}

/* Prints a (possibly multi-line) failure reason indented under a row. */
static void print_reason(const char *msg) {
  if (!msg || !*msg) msg = "(no message)";
  for (const char *p = msg; *p;) {
    const char *end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    printf("    %.*s\n", (int)len, p);
    p = end ? end + 1 : p + len;
  }
}

/* Marks the examples named in a comma-separated list; returns 0, or
 * CLI_USAGE after an error message. */
static int select_names(const char *list, char *selected) {
  const char *p = list;
  for (;;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == 0) return cli_usage_error("empty example name in --only '%s'", list);
    char name[128];
    if (len >= sizeof name) len = sizeof name - 1;
    memcpy(name, p, len);
    name[len] = 0;
    int found = 0;
    for (int i = 0; i < tc_example_count(); i++) {
      if (strcmp(tc_example_get(i)->name, name) == 0) {
        selected[i] = 1;
        found = 1;
      }
    }
    if (!found) {
      fprintf(stderr, "tilec: unknown example '%s' in --only; run `tilec demo --list`\n", name);
      return CLI_USAGE;
    }
    if (!end) return 0;
    p = end + 1;
  }
}

static void print_header_row(void) {
  printf("%-16s %-7s %9s  %-34s %10s\n", "example", "target", "smem(B)", "result", "time(ms)");
  fflush(stdout);
}

static void print_row(const char *name, const char *target, long long smem, const char *result,
                      double ms, int has_time) {
  char smem_s[32], ms_s[32];
  if (smem >= 0)
    snprintf(smem_s, sizeof smem_s, "%lld", smem);
  else
    snprintf(smem_s, sizeof smem_s, "-");
  if (has_time)
    snprintf(ms_s, sizeof ms_s, "%.3f", ms);
  else
    snprintf(ms_s, sizeof ms_s, "-");
  printf("%-16s %-7s %9s  %-34s %10s\n", name, target, smem_s, result, ms_s);
}

/* ---- OpenCL ------------------------------------------------------------- */

static int demo_opencl(const char *device, const char *selected, int nselected) {
  tc_str err;
  tc_str_init(&err);
  tc_cl *cl = NULL;
  if (tc_cl_open(device, &cl, &err) != TC_OK) {
    fprintf(stderr, "tilec demo: cannot open an OpenCL device: %s\n", tc_str_cstr(&err));
    tc_str_free(&err);
    return CLI_FAIL;
  }
  char *dev_name = tc_xstrdup(tc_cl_device_name(cl));
  tc_cl_close(cl);
  tc_str_free(&err);

  const char *env = getenv("TILEC_OPENCL_DEVICE");
  printf("tilec demo: %d example kernel%s on OpenCL device %s%s%s%s\n", nselected,
         nselected == 1 ? "" : "s", dev_name, device ? " (--device " : "",
         device ? device : "", device ? ")" : "");
  if (!device && env && *env) printf("(device chosen by TILEC_OPENCL_DEVICE=%s)\n", env);
  print_header_row();

  int verified = 0;
  for (int i = 0; i < tc_example_count(); i++) {
    if (!selected[i]) continue;
    const tc_example *e = tc_example_get(i);
    tc_example_result r;
    tc_status st = tc_example_run(e, device, &r);
    int ok = st == TC_OK && r.verified;
    char result[64];
    if (ok)
      snprintf(result, sizeof result, "verified");
    else if (st != TC_OK)
      snprintf(result, sizeof result, "FAILED (%s)", tc_status_name(st));
    else
      snprintf(result, sizeof result, "FAILED (max error %.3g)", r.max_err);
    /* r.smem is only known once the kernel compiled */
    int compiled = st == TC_OK || st == TC_ERR_COMPILE || st == TC_ERR_RUNTIME ||
                   st == TC_ERR_NO_DEVICE;
    print_row(e->name, "opencl", compiled ? (long long)r.smem : -1, result, r.ms, st == TC_OK);
    if (!ok) print_reason(r.msg);
    verified += ok;
    fflush(stdout);
  }
  printf("%d of %d kernel%s verified on %s\n", verified, nselected, nselected == 1 ? "" : "s", dev_name);
  free(dev_name);
  return verified == nselected ? CLI_OK : CLI_FAIL;
}

/* ---- CUDA and HIP ------------------------------------------------------ */

/* A GPU target of the demo: how it builds, and its device. */
typedef struct gpu_target {
  tc_target target;
  const char *arch;
  const char *compiler; /* "NVRTC", "hipcc" */
} gpu_target;

/* Builds one example for the target and, when run_it, runs and verifies
 * it.  Returns 1 when it compiled (and, if run, verified). */
static int gpu_one(const tc_example *e, const gpu_target *t, int run_it) {
  tc_fusion *f = e->build();
  tc_compile_options opt = {t->target, t->arch, e->name};
  tc_status st = TC_OK;
  char result[96];
  char msg[1024] = "";
  long long smem = -1;
  double ms = 0;
  int ok = 0, has_time = 0;
  void **got = NULL, **want = NULL;
  tc_kernel *k = tc_compile(f, &opt, &st);
  if (!k) {
    snprintf(result, sizeof result, "FAILED (%s)", tc_status_name(st));
    snprintf(msg, sizeof msg, "%s", tc_fusion_error(f));
    goto report;
  }
  smem = (long long)tc_kernel_smem_bytes(k);
  st = tc_kernel_build(k, NULL);
  if (st != TC_OK) {
    snprintf(result, sizeof result, "FAILED (%s)", tc_status_name(st));
    snprintf(msg, sizeof msg, "%s", tc_kernel_error(k));
    goto report;
  }
  if (!run_it) {
    snprintf(result, sizeof result, "compiled (%s %s)", t->compiler, t->arch);
    ok = 1;
    goto report;
  }
  got = tc_params_alloc(f, 1), want = tc_params_alloc(f, 1);
  st = tc_kernel_run(k, got, NULL, &ms);
  if (st != TC_OK) {
    snprintf(result, sizeof result, "FAILED (%s)", tc_status_name(st));
    snprintf(msg, sizeof msg, "%s", tc_kernel_error(k));
  } else {
    has_time = 1;
    double max_err = 0;
    tc_reference_run(f, want);
    TC_STR_LOCAL(cmp);
    long bad = tc_outputs_compare(f, got, want, &max_err, &cmp);
    snprintf(msg, sizeof msg, "%s", tc_str_cstr(&cmp));
    if (bad == 0 && e->expect_smem >= 0 && smem != e->expect_smem) {
      bad = 1;
      snprintf(msg, sizeof msg, "shared memory is %lld bytes; the allocation rules give %lld", smem,
               (long long)e->expect_smem);
    }
    ok = bad == 0;
    if (ok)
      snprintf(result, sizeof result, "compiled (%s %s), verified", t->compiler, t->arch);
    else
      snprintf(result, sizeof result, "FAILED (max error %.3g)", max_err);
  }

report:
  tc_params_free(f, got), tc_params_free(f, want);
  print_row(e->name, tc_target_name(t->target), smem, result, ms, has_time);
  if (!ok) print_reason(msg);
  fflush(stdout);
  tc_kernel_free(k);
  tc_fusion_free(f);
  return ok;
}

/* The text after `prefix` on the line of `text` that starts with it. */
static int line_after(const char *text, const char *prefix, char *buf, size_t cap) {
  const char *p = strstr(text, prefix);
  if (!p || (p != text && p[-1] != '\n')) return 0;
  p += strlen(prefix);
  size_t len = strcspn(p, "\n");
  if (len >= cap) len = cap - 1;
  memcpy(buf, p, len);
  buf[len] = 0;
  return 1;
}

/* Whether the target's compiler is there (why not in why); with a device,
 * its name into dev (have_dev; why says why there is none). */
static int gpu_state(const gpu_target *t, int *have_dev, char *dev, size_t devcap, tc_str *why) {
  tc_str desc;
  tc_str_init(&desc);
  char line[1024];
  int compiler = 1;
  if (tc_target_info_of(t->target).build == TC_BUILD_NVRTC) {
    tc_cuda_describe(&desc);
    if (line_after(tc_str_cstr(&desc), "CUDA compiler: unavailable: ", line, sizeof line)) {
      tc_str_printf(why, "%s", line);
      compiler = 0;
    } else if ((*have_dev = tc_cuda_available(why)) &&
               !line_after(tc_str_cstr(&desc), "CUDA device 0: ", dev, devcap)) {
      snprintf(dev, devcap, "CUDA device 0");
    }
  } else {
    char hipcc[4096];
    tc_hip_device d;
    if (!tc_hip_find_hipcc(hipcc, sizeof hipcc)) {
      tc_str_cat(why, "hipcc not found (apt-get install hipcc libamdhip64-dev rocm-device-libs)");
      compiler = 0;
    } else if ((*have_dev = tc_hip_device_get(&d, why))) {
      snprintf(dev, devcap, "%.200s (%.200s)", d.name, d.target_id);
    }
  }
  tc_str_free(&desc);
  return compiler;
}

static int demo_gpu(const gpu_target *t, const char *selected, int nselected) {
  tc_str why;
  tc_str_init(&why);
  int have_device = 0;
  char dev[512] = "";
  if (!gpu_state(t, &have_device, dev, sizeof dev, &why)) {
    fprintf(stderr, "tilec demo: cannot compile for %s: %s\n", tc_target_info_of(t->target).api,
            tc_str_cstr(&why));
    tc_str_free(&why);
    return CLI_FAIL;
  }
  printf("tilec demo: %d example kernel%s for %s %s, built with %s; %s%s\n", nselected,
         nselected == 1 ? "" : "s", tc_target_info_of(t->target).api, t->arch,
         t->compiler, have_device ? "running on " : "",
         have_device ? dev : "compile only (no GPU needed)");
  print_header_row();

  int ok = 0;
  for (int i = 0; i < tc_example_count(); i++)
    if (selected[i]) ok += gpu_one(tc_example_get(i), t, have_device);

  if (have_device) {
    printf("%d of %d kernel%s verified on %s\n", ok, nselected, nselected == 1 ? "" : "s", dev);
  } else {
    printf("%d of %d kernel%s compiled with %s for %s\n", ok, nselected,
           nselected == 1 ? "" : "s", t->compiler, t->arch);
    printf("not run: %s\n", tc_str_cstr(&why));
  }
  tc_str_free(&why);
  return ok == nselected ? CLI_OK : CLI_FAIL;
}

/* ---- the command -------------------------------------------------------- */

int cmd_demo(int argc, char **argv) {
  const char *device = NULL, *target = "opencl", *arch = NULL;
  int list = 0, any_only = 0, n = tc_example_count();
  char *selected = tc_xcalloc((size_t)n + 1, 1);
  int rc = CLI_OK;

  for (int i = 1; i < argc && rc == CLI_OK; i++) {
    const char *a = argv[i], *v;
    int err = 0;
    if (cli_is_help(a)) {
      demo_usage(stdout);
      free(selected);
      return CLI_OK;
    } else if (strcmp(a, "--list") == 0) {
      list = 1;
    } else if ((v = cli_option_value(argc, argv, &i, "--device", &err)) || err) {
      if (err) rc = CLI_USAGE;
      else device = v;
    } else if ((v = cli_option_value(argc, argv, &i, "--target", &err)) || err) {
      if (err) rc = CLI_USAGE;
      else target = v;
    } else if ((v = cli_option_value(argc, argv, &i, "--arch", &err)) || err) {
      if (err) rc = CLI_USAGE;
      else arch = v;
    } else if ((v = cli_option_value(argc, argv, &i, "--only", &err)) || err) {
      if (err) rc = CLI_USAGE;
      else rc = select_names(v, selected), any_only = 1;
    } else if (a[0] == '-') {
      rc = cli_usage_error("unknown option '%s' for `tilec demo`", a);
    } else {
      rc = cli_usage_error("unexpected argument '%s' for `tilec demo`", a);
    }
  }
  int cuda = 0, hip = 0;
  if (rc == CLI_OK) {
    if (strcmp(target, "cuda") == 0)
      cuda = 1;
    else if (strcmp(target, "hip") == 0)
      hip = 1;
    else if (strcmp(target, "opencl") != 0)
      rc = cli_usage_error("unknown target '%s' (opencl, cuda or hip)", target);
  }
  if (rc == CLI_OK && cuda && device)
    rc = cli_usage_error("--device selects an OpenCL device; --target cuda uses CUDA device 0");
  if (rc == CLI_OK && hip && device)
    rc = cli_usage_error("--device selects an OpenCL device; --target hip uses AMD GPU 0");
  if (rc == CLI_OK && !cuda && !hip && arch)
    rc = cli_usage_error("--arch applies to --target cuda and hip only");
  tc_target_info hip_info;
  if (rc == CLI_OK && hip && arch && tc_target_info_make(TC_TARGET_HIP, arch, &hip_info, NULL) != TC_OK)
    rc = cli_usage_error("--arch for --target hip is an AMD GPU architecture (gfx90a, gfx940, "
                         "gfx942, gfx950), got '%s'", arch);
  if (rc != CLI_OK) {
    free(selected);
    return rc;
  }
  if (!any_only) memset(selected, 1, (size_t)n);
  int nselected = 0;
  for (int i = 0; i < n; i++) nselected += selected[i] != 0;

  if (list) {
    for (int i = 0; i < n; i++) {
      if (!selected[i]) continue;
      const tc_example *e = tc_example_get(i);
      printf("%-16s %s\n", e->name, e->what);
    }
  } else if (cuda || hip) {
    gpu_target t = {cuda ? TC_TARGET_CUDA : TC_TARGET_HIP, arch, cuda ? "NVRTC" : "hipcc"};
    if (!t.arch) t.arch = cuda ? TC_CUDA_OPS_DEFAULT_ARCH : tc_hip_device_arch();
    if (!t.arch) t.arch = TC_HIP_DEFAULT_ARCH;
    rc = demo_gpu(&t, selected, nselected);
  } else {
    rc = demo_opencl(device, selected, nselected);
  }
  free(selected);
  return rc;
}
