/* ldst_bandwidth.c - the bandwidth of the LdStMatrixSet copy (bulk
 * tensor load with a swizzle -> ldmatrix -> stmatrix -> bulk tensor store,
 * built by tc_ldst_set_build, src/demo/ldst_set.c) for each shmoo
 * variant (swizzle 32B/64B/128B x cta_m 64/128 x cta_n 256/512), against a
 * plain device-to-device copy of the same bytes (goal: >= 90% of it).
 * LdStMatrixSet is the copy of nvFuser's ldmatrix/stmatrix tutorial
 * (docs/ldmatrix.md).
 *
 * Every run's output is compared with its input bit for bit (the output
 * buffer is reset to 0xffff first); a variant whose output differs fails.
 * Times are the runtime's (tc_kernel_run's ms: CUDA events around the one
 * launch, or OpenCL profiling events), the median of -i runs after one
 * untimed run; each run is a separate launch with its own host <-> device
 * copies and module load, which are not timed (CUDA_MODULE_LOADING=EAGER
 * unless set, so no lazy loading happens inside the timed launch).  GB/s counts the bytes read plus the bytes
 * written (2 x M x N x 2).  On CUDA the baseline is cuMemcpyDtoD of the
 * same bytes (tc_cuda_time_d2d), timed the same way.  On OpenCL (PoCL:
 * the CPU) the run checks the copy at a small size; its times say nothing
 * about a GPU and there is no baseline.
 *
 * Exit status: 0 every variant ran (or, with --no-run, was generated) and
 * its output equals its input; 1 a variant failed to build, compile or run,
 * or its output differed; 2 a bad option; 3 no device for the target (no
 * CUDA device, or no OpenCL device): nothing ran.  Run with --help for the
 * options. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/test_hooks.h"
#include "demo/ldst_set.h"
#include "lower/ldst.h"
#include "runtime/runtime.h"
#include "tilec/tilec.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_NO_DEVICE = 3 };
#define GOAL 0.90

static void usage(FILE *fp) {
  fputs("usage: ldst_bandwidth [--target cuda|opencl] [--size MxN] [--swizzle 32|64|128|all]\n"
        "                      [--cta-m 64|128|all] [--cta-n 256|512|all] [-i N] [--arch ARCH]\n"
        "                      [--device SEL] [--emit DIR] [--no-run] [--json] [--fault 1|2]\n"
        "\n"
        "Runs the LdStMatrixSet copy (bf16 M x N: bulk tensor load with a swizzle,\n"
        "ldmatrix, stmatrix, bulk tensor store) for each chosen variant, checks output ==\n"
        "input bit for bit, and prints its time and bandwidth; on CUDA also against a\n"
        "device-to-device copy (cuMemcpyDtoD) of the same bytes (goal: >= 90%).\n"
        "\n"
        "  --target cuda|opencl  cuda (default; NVRTC + the driver, needs a GPU) or opencl\n"
        "                        (PoCL by default: checks the copy on the CPU)\n"
        "  --size MxN            the tensor (default 8192x8192 for cuda, 256x512 for\n"
        "                        opencl); M a multiple of cta_m, N of cta_n\n"
        "  --swizzle S           the bulk-copy swizzle in bytes, or all (default all)\n"
        "  --cta-m M, --cta-n N  the CTA tile (64 or 128; 256 or 512), or all (default all)\n"
        "  -i N                  timed runs per variant, the median is reported (default 10\n"
        "                        for cuda, 2 for opencl); one untimed run comes first\n"
        "  --arch ARCH           CUDA arch (default sm_90a; the bulk copies need sm_90+)\n"
        "  --device SEL          OpenCL device (\"P:D\" or a name substring; default\n"
        "                        $TILEC_OPENCL_DEVICE, then PoCL)\n"
        "  --emit DIR            write each variant's CUDA source (for --arch) to\n"
        "                        DIR/ldst_sw<S>_m<cta_m>_n<cta_n>.cu\n"
        "  --no-run              generate (and with --emit write) the kernels, run nothing\n"
        "  --json                print one JSON object instead of the table\n"
        "  --fault 1|2           (for testing the check) ldmatrix with wrong row addresses\n"
        "                        (1: the .trans rule, 2: rows reversed) and the stmatrix side\n"
        "                        an element copy, so the fault cannot cancel out: every\n"
        "                        variant must then FAIL (exit 1)\n"
        "\n"
        "exit status: 0 all variants ran and verified; 1 a variant failed or its output\n"
        "differed; 2 a bad option; 3 no device for the target (nothing ran)\n",
        fp);
}

static int bad_usage(const char *fmt, const char *arg) {
  fprintf(stderr, "ldst_bandwidth: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, " (see --help)\n");
  return EXIT_USAGE;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* A positive integer that fits in int64; 0 on garbage. */
static int64_t parse_pos(const char *s) {
  char *end = NULL;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < 1) return 0;
  return (int64_t)v;
}

/* "all" -> every value of `all` (n of them); else one of them. */
static int parse_choice(const char *s, const int64_t *all, int n, int64_t *out, int *nout) {
  if (strcmp(s, "all") == 0) {
    for (int i = 0; i < n; i++) out[i] = all[i];
    *nout = n;
    return 1;
  }
  int64_t v = parse_pos(s);
  for (int i = 0; i < n; i++)
    if (v == all[i]) {
      out[0] = v, *nout = 1;
      return 1;
    }
  return 0;
}

static void json_str(FILE *fp, const char *s) {
  if (!s) {
    fputs("null", fp);
    return;
  }
  fputc('"', fp);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(fp, "\\%c", *p);
    else if (*p == '\n')
      fputs("\\n", fp);
    else if (*p < 0x20)
      fprintf(fp, "\\u%04x", *p);
    else
      fputc(*p, fp);
  }
  fputc('"', fp);
}

typedef struct variant {
  int64_t sw, cta_m, cta_n;
  int64_t grid[3], block[3], smem;
  int built, ran;      /* compiled; ran every run */
  int64_t mismatches;  /* differing elements, summed over all runs; -1 when it did not run */
  int64_t first;       /* the first differing element of the first bad run */
  int first_run;       /* that run (0: the untimed one) */
  double ms, gbps, ratio;
  char emitted[512];
  char error[1536];
} variant;

/* The CUDA source of v for arch, written to dir. */
static int emit_source(variant *v, tc_fusion *f, const char *arch, const char *dir, int64_t M,
                       int64_t N) {
  tc_compile_options o = {TC_TARGET_CUDA, arch, "ldst_matrix_set"};
  tc_status st = TC_OK;
  tc_kernel *k = tc_compile(f, &o, &st);
  if (!k) {
    snprintf(v->error, sizeof v->error, "CUDA compile for %s (%s): %s", arch, tc_status_name(st),
             tc_fusion_error(f));
    return 0;
  }
  snprintf(v->emitted, sizeof v->emitted, "%s/ldst_sw%lld_m%lld_n%lld.cu", dir, (long long)v->sw,
           (long long)v->cta_m, (long long)v->cta_n);
  FILE *fp = fopen(v->emitted, "w");
  int ok = fp != NULL;
  if (fp) {
    int64_t g[3], b[3];
    tc_kernel_launch_dims(k, g, b);
    fprintf(fp,
            "/* LdStMatrixSet: bf16 %lld x %lld, swizzle %lldB, CTA %lld x %lld, for "
            "%s;\n * grid %lldx%lldx%lld, block %lldx%lldx%lld, %lld bytes of dynamic shared "
            "memory.\n * Written by bench/ldst_bandwidth --emit. */\n",
            (long long)M, (long long)N, (long long)v->sw, (long long)v->cta_m,
            (long long)v->cta_n, arch, (long long)g[0], (long long)g[1], (long long)g[2],
            (long long)b[0], (long long)b[1], (long long)b[2], (long long)tc_kernel_smem_bytes(k));
    ok = fputs(tc_kernel_source(k), fp) >= 0;
    ok = (fclose(fp) == 0) && ok;
  }
  if (!ok) {
    snprintf(v->error, sizeof v->error, "cannot write %s: %s", v->emitted, strerror(errno));
    v->emitted[0] = 0;
  }
  tc_kernel_free(k);
  return ok;
}

int main(int argc, char **argv) {
  /* every run loads its module before the launch it times: load it whole
   * then, not lazily at the launch (unless the caller chose otherwise) */
  setenv("CUDA_MODULE_LOADING", "EAGER", 0);
  const char *target_s = "cuda", *arch = "sm_90a", *device = NULL, *emit = NULL;
  const char *size_s = NULL;
  int runs = 0, json = 0, no_run = 0, fault = 0;
  static const int64_t all_sw[3] = {32, 64, 128}, all_m[2] = {64, 128}, all_n[2] = {256, 512};
  int64_t sws[3], ms_[2], ns[2];
  int nsw = 3, nm = 2, nn = 2;
  memcpy(sws, all_sw, sizeof sws), memcpy(ms_, all_m, sizeof ms_), memcpy(ns, all_n, sizeof ns);

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return EXIT_OK;
    }
    if (!strcmp(a, "--json")) {
      json = 1;
      continue;
    }
    if (!strcmp(a, "--no-run")) {
      no_run = 1;
      continue;
    }
    static const char *valued[] = {"--target", "--size", "--swizzle", "--cta-m", "--cta-n", "-i",
                                   "--arch", "--device", "--emit", "--fault"};
    int known = 0;
    for (size_t j = 0; j < sizeof valued / sizeof *valued; j++) known |= !strcmp(a, valued[j]);
    if (!known) return bad_usage("unknown option '%s'", a);
    if (i + 1 >= argc) return bad_usage("option %s needs a value", a);
    const char *v = argv[++i];
    if (!strcmp(a, "--target")) {
      if (strcmp(v, "cuda") && strcmp(v, "opencl"))
        return bad_usage("--target '%s': expected cuda or opencl", v);
      target_s = v;
    } else if (!strcmp(a, "--size")) {
      size_s = v;
    } else if (!strcmp(a, "--swizzle")) {
      if (!parse_choice(v, all_sw, 3, sws, &nsw))
        return bad_usage("--swizzle '%s': expected 32, 64, 128 or all", v);
    } else if (!strcmp(a, "--cta-m")) {
      if (!parse_choice(v, all_m, 2, ms_, &nm))
        return bad_usage("--cta-m '%s': expected 64, 128 or all", v);
    } else if (!strcmp(a, "--cta-n")) {
      if (!parse_choice(v, all_n, 2, ns, &nn))
        return bad_usage("--cta-n '%s': expected 256, 512 or all", v);
    } else if (!strcmp(a, "-i")) {
      int64_t r = parse_pos(v);
      if (r < 1 || r > 10000) return bad_usage("-i '%s': expected 1 to 10000 runs", v);
      runs = (int)r;
    } else if (!strcmp(a, "--arch")) {
      arch = v;
    } else if (!strcmp(a, "--fault")) {
      if (strcmp(v, "1") && strcmp(v, "2")) return bad_usage("--fault '%s': expected 1 or 2", v);
      fault = atoi(v);
    } else if (!strcmp(a, "--device")) {
      device = v;
    } else {
      emit = v;
    }
  }
  int cuda = !strcmp(target_s, "cuda");
  if (!runs) runs = cuda ? 10 : 2;
  if (!size_s) size_s = cuda ? "8192x8192" : "256x512";
  int64_t M = 0, N = 0;
  {
    const char *x = strchr(size_s, 'x');
    char mbuf[32];
    if (x && (size_t)(x - size_s) < sizeof mbuf) {
      memcpy(mbuf, size_s, (size_t)(x - size_s));
      mbuf[x - size_s] = 0;
      M = parse_pos(mbuf), N = parse_pos(x + 1);
    }
    if (!M || !N) return bad_usage("--size '%s': expected MxN, e.g. 8192x8192", size_s);
    if ((double)M * (double)N > (double)(INT64_C(1) << 31))
      return bad_usage("--size '%s': more than 2^31 elements", size_s);
  }
  for (int d = 0; d < 2; d++) { /* M by every cta_m, N by every cta_n */
    int64_t x = d ? N : M;
    const int64_t *tiles = d ? ns : ms_;
    for (int a = 0; a < (d ? nn : nm); a++)
      if (x % tiles[a]) {
        char buf[128];
        snprintf(buf, sizeof buf, "%c = %lld is not a multiple of cta_%c %lld (pick --cta-%c or "
                 "another size)", d ? 'N' : 'M', (long long)x, d ? 'n' : 'm',
                 (long long)tiles[a], d ? 'n' : 'm');
        return bad_usage("--size: %s", buf);
      }
  }
  if (emit) {
    struct stat sb;
    if (mkdir(emit, 0777) != 0 && !(errno == EEXIST && stat(emit, &sb) == 0 && S_ISDIR(sb.st_mode))) {
      fprintf(stderr, "ldst_bandwidth: cannot create the --emit directory %s: %s\n", emit,
              strerror(errno));
      return EXIT_FAIL;
    }
  }

  /* the device, before anything is built */
  char devname[512] = "(none: --no-run)";
  tc_str why;
  tc_str_init(&why);
  if (!no_run) {
    if (cuda) {
      if (!tc_cuda_available(&why)) {
        fprintf(stderr, "ldst_bandwidth: %s; nothing ran (exit %d). Use --target opencl to "
                        "check the copy on PoCL, or --no-run --emit DIR for the sources.\n",
                tc_str_cstr(&why), EXIT_NO_DEVICE);
        tc_str_free(&why);
        return EXIT_NO_DEVICE;
      }
      tc_str d;
      tc_str_init(&d);
      tc_cuda_describe(&d);
      const char *line = strstr(tc_str_cstr(&d), "CUDA device 0: ");
      snprintf(devname, sizeof devname, "%s", line ? line + strlen("CUDA device 0: ") : "CUDA device 0");
      char *nl = strchr(devname, '\n');
      if (nl) *nl = 0;
      tc_str_free(&d);
    } else {
      tc_cl *cl = NULL;
      if (tc_cl_open(device, &cl, &why) != TC_OK) {
        fprintf(stderr, "ldst_bandwidth: no OpenCL device: %s; nothing ran (exit %d)\n",
                tc_str_cstr(&why), EXIT_NO_DEVICE);
        tc_str_free(&why);
        return EXIT_NO_DEVICE;
      }
      snprintf(devname, sizeof devname, "%s", tc_cl_device_name(cl));
      tc_cl_close(cl);
    }
  }
  tc_str_free(&why);

  size_t elems = (size_t)(M * N), bytes = elems * 2;
  uint16_t *in = NULL, *out = NULL;
  double *t = calloc((size_t)runs, sizeof *t);
  double d2d_ms = 0, d2d_gbps = 0;
  char d2d_err[1024] = "";
  if (!no_run) {
    in = malloc(bytes), out = malloc(bytes);
    if (!in || !out || !t) {
      fprintf(stderr, "ldst_bandwidth: cannot allocate 2 x %zu bytes of host memory\n", bytes);
      free(in), free(out), free(t);
      return EXIT_FAIL;
    }
    uint32_t x = 777u;
    for (size_t e = 0; e < elems; e++) {
      x = x * 1664525u + 1013904223u;
      in[e] = (uint16_t)((x >> 16) & 0x7f7f); /* never 0xffff, the output's fill */
    }
    if (cuda) {
      tc_str e;
      tc_str_init(&e);
      if (tc_cuda_time_d2d(bytes, runs, t, &e) == TC_OK) {
        d2d_ms = median(t, runs);
        d2d_gbps = d2d_ms > 0 ? 2.0 * (double)bytes / (d2d_ms * 1e6) : 0;
      } else {
        snprintf(d2d_err, sizeof d2d_err, "%s", tc_str_cstr(&e));
      }
      tc_str_free(&e);
    }
  }

  int nvar = nsw * nm * nn, failed = 0;
  variant *vs = calloc((size_t)nvar, sizeof *vs);
  if (!json) {
    printf("LdStMatrixSet bf16 %lldx%lld (%.1f MiB in, %.1f MiB out), target %s%s%s, device %s\n",
           (long long)M, (long long)N, bytes / 1048576.0, bytes / 1048576.0, target_s,
           cuda ? " " : "", cuda ? arch : "", devname);
    if (!no_run) {
      printf("times: median of %d run%s after 1 untimed run; GB/s = (bytes read + written) / time\n",
             runs, runs == 1 ? "" : "s");
      if (cuda && !d2d_err[0])
        printf("device-to-device copy (cuMemcpyDtoD, %zu bytes): %.4f ms, %.1f GB/s\n", bytes,
               d2d_ms, d2d_gbps);
      else if (cuda)
        printf("device-to-device copy: FAILED: %s\n", d2d_err);
      else
        printf("(OpenCL: CPU times, no device-to-device baseline)\n");
    }
    printf("%-22s %-12s %-9s %8s %10s %10s %7s %s\n", "variant", "grid", "block", "smem", "ms",
           "GB/s", "vs d2d", "verify");
    fflush(stdout);
  }
  int iv = 0;
  for (int a = 0; a < nsw; a++)
    for (int b = 0; b < nm; b++)
      for (int c = 0; c < nn; c++, iv++) {
        variant *v = &vs[iv];
        v->sw = sws[a], v->cta_m = ms_[b], v->cta_n = ns[c], v->mismatches = -1, v->first = -1;
        tc_ldst_set s;
        TC_STR_LOCAL(msg);
        tc_status st = tc_ldst_set_build(&s, (tc_tma_swizzle)v->sw, v->cta_m, v->cta_n, M, N,
                                          TC_LDST_LDMATRIX, fault ? TC_LDST_DEFAULT : TC_LDST_STMATRIX,
                                          &msg);
        tc_kernel *k = NULL;
        if (st != TC_OK) {
          snprintf(v->error, sizeof v->error, "%s", tc_str_cstr(&msg));
        } else {
          /* a faulty kernel has its own name, so the kernel cache keeps it apart */
          tc_compile_options o = {cuda ? TC_TARGET_CUDA : TC_TARGET_OPENCL, cuda ? arch : NULL,
                                  fault == 1 ? "ldst_fault1" : fault == 2 ? "ldst_fault2"
                                                                          : "ldst_matrix_set"};
          tc_test_hooks hooks = {0};
          hooks.ldsm_fault = fault;
          tc_test_hooks_set(&hooks);
          k = tc_compile(s.f, &o, &st);
          tc_test_hooks_set(NULL);
          if (!k)
            snprintf(v->error, sizeof v->error, "compile (%s): %s", tc_status_name(st),
                     tc_fusion_error(s.f));
        }
        if (k) {
          v->built = 1;
          tc_kernel_launch_dims(k, v->grid, v->block);
          v->smem = tc_kernel_smem_bytes(k);
        }
        if (k && emit && !emit_source(v, s.f, arch, emit, M, N)) v->built = 0;
        if (k && v->built && !no_run) {
          void *args[2] = {in, out};
          v->mismatches = 0;
          for (int r = 0; r <= runs && !v->error[0]; r++) {
            memset(out, 0xff, bytes);
            double ms = 0;
            st = tc_kernel_run(k, args, device, &ms);
            if (st != TC_OK) {
              snprintf(v->error, sizeof v->error, "run %d (%s): %s", r, tc_status_name(st),
                       tc_kernel_error(k));
              break;
            }
            int64_t bad = 0, first = -1;
            if (memcmp(in, out, bytes) != 0)
              for (size_t e = 0; e < elems; e++)
                if (in[e] != out[e] && bad++ == 0) first = (int64_t)e;
            if (bad && v->first < 0) v->first = first, v->first_run = r;
            v->mismatches += bad;
            if (r > 0) t[r - 1] = ms;
          }
          if (!v->error[0]) {
            v->ran = 1;
            v->ms = median(t, runs);
            v->gbps = v->ms > 0 ? 2.0 * (double)bytes / (v->ms * 1e6) : 0;
            v->ratio = d2d_ms > 0 && v->ms > 0 ? d2d_ms / v->ms : 0;
          }
        }
        int ok = v->built && (no_run || (v->ran && v->mismatches == 0));
        failed += !ok;
        if (!json) {
          char name[32], grid[32], block[32], verify[160];
          snprintf(name, sizeof name, "sw%lld cta %lldx%lld", (long long)v->sw, (long long)v->cta_m,
                   (long long)v->cta_n);
          snprintf(grid, sizeof grid, "%lldx%lldx%lld", (long long)v->grid[0],
                   (long long)v->grid[1], (long long)v->grid[2]);
          snprintf(block, sizeof block, "%lldx%lldx%lld", (long long)v->block[0],
                   (long long)v->block[1], (long long)v->block[2]);
          if (!v->built || v->error[0])
            snprintf(verify, sizeof verify, "ERROR");
          else if (no_run)
            snprintf(verify, sizeof verify, "not run");
          else if (v->mismatches == 0)
            snprintf(verify, sizeof verify, "PASS (%d runs)", runs + 1);
          else
            snprintf(verify, sizeof verify, "FAIL: %lld element mismatches over %d runs, the first "
                     "at (%lld, %lld) in run %d", (long long)v->mismatches, runs + 1,
                     (long long)(v->first / N), (long long)(v->first % N), v->first_run);
          char ratio[16] = "-";
          if (v->ratio > 0) snprintf(ratio, sizeof ratio, "%.1f%%", 100 * v->ratio);
          if (v->ran)
            printf("%-22s %-12s %-9s %8lld %10.4f %10.1f %7s %s\n", name, grid, block,
                   (long long)v->smem, v->ms, v->gbps, ratio, verify);
          else
            printf("%-22s %-12s %-9s %8lld %10s %10s %7s %s\n", name, v->built ? grid : "-",
                   v->built ? block : "-", (long long)v->smem, "-", "-", "-", verify);
          if (v->error[0]) printf("  error: %s\n", v->error);
          if (v->emitted[0]) printf("  emitted %s\n", v->emitted);
          fflush(stdout);
        }
        tc_kernel_free(k);
        tc_fusion_free(s.f);
      }

  /* the goal, over the variants that ran */
  int met = 0, ran = 0, best = -1;
  for (int i = 0; i < nvar; i++) {
    if (!vs[i].ran || vs[i].mismatches) continue;
    ran++;
    met += vs[i].ratio >= GOAL;
    if (best < 0 || vs[i].ratio > vs[best].ratio) best = i;
  }
  int have_ratio = cuda && !no_run && d2d_ms > 0;
  if (json) {
    printf("{\"bench\": \"ldst_bandwidth\", \"target\": \"%s\", \"arch\": ", target_s);
    json_str(stdout, cuda ? arch : NULL);
    printf(", \"device\": ");
    json_str(stdout, no_run ? NULL : devname);
    printf(", \"m\": %lld, \"n\": %lld, \"bytes\": %zu, \"runs\": %d, \"d2d\": ", (long long)M,
           (long long)N, bytes, no_run ? 0 : runs);
    if (have_ratio)
      printf("{\"ms\": %.6g, \"gbps\": %.6g}", d2d_ms, d2d_gbps);
    else if (d2d_err[0])
      printf("{\"error\": "), json_str(stdout, d2d_err), printf("}");
    else
      printf("null");
    printf(", \"goal_ratio\": %.2f, \"variants\": [", GOAL);
    for (int i = 0; i < nvar; i++) {
      variant *v = &vs[i];
      printf("%s\n  {\"swizzle\": %lld, \"cta_m\": %lld, \"cta_n\": %lld, \"grid\": [%lld, %lld, "
             "%lld], \"block\": [%lld, %lld, %lld], \"smem_bytes\": %lld, \"ran\": %s",
             i ? "," : "", (long long)v->sw, (long long)v->cta_m, (long long)v->cta_n,
             (long long)v->grid[0], (long long)v->grid[1], (long long)v->grid[2],
             (long long)v->block[0], (long long)v->block[1], (long long)v->block[2],
             (long long)v->smem, v->ran ? "true" : "false");
      if (v->ran) {
        printf(", \"ms\": %.6g, \"gbps\": %.6g, \"ratio\": ", v->ms, v->gbps);
        if (have_ratio)
          printf("%.4f", v->ratio);
        else
          printf("null");
        printf(", \"verify\": \"%s\", \"mismatches\": %lld", v->mismatches ? "FAIL" : "PASS",
               (long long)v->mismatches);
        if (v->mismatches)
          printf(", \"first_mismatch\": [%lld, %lld]", (long long)(v->first / N),
                 (long long)(v->first % N));
      }
      printf(", \"emitted\": ");
      json_str(stdout, v->emitted[0] ? v->emitted : NULL);
      printf(", \"error\": ");
      json_str(stdout, v->error[0] ? v->error : NULL);
      printf("}");
    }
    printf("\n], \"ok\": %s}\n", failed ? "false" : "true");
  } else {
    if (have_ratio && best >= 0)
      printf("goal >= %.0f%% of the device-to-device copy: met by %d of %d variants (best: sw%lld "
             "cta %lldx%lld at %.1f%%)\n",
             100 * GOAL, met, ran, (long long)vs[best].sw, (long long)vs[best].cta_m,
             (long long)vs[best].cta_n, 100 * vs[best].ratio);
    printf("%s: %d of %d variants %s\n", failed ? "FAILED" : "ok", nvar - failed, nvar,
           no_run ? "generated" : "ran with output == input");
  }
  free(vs), free(in), free(out), free(t);
  return failed ? EXIT_FAIL : EXIT_OK;
}
