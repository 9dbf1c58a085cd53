/* hip.c - compiling HIP kernels with hipcc (the HIP runtime that runs
 * them is hip_run.c).
 *
 * tc_hip_compile writes the source to a private temporary directory and
 * runs `hipcc --genco --offload-arch=ARCH -O3 -include hip/hip_runtime.h`
 * (fork + exec, no shell), returning the code object (a clang offload
 * bundle, which hipModuleLoadData takes).  hipcc is found in $PATH, else
 * /opt/rocm/bin.  Debian 12's ROCm (hipcc 5.2 over clang 15) compiles for
 * gfx90a and gfx940 but does not know gfx942 (ROCm 6.0 and later do) or
 * gfx950 (ROCm 7.0); tilec still emits HIP source for those. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime.h"

/* ---- finding hipcc ------------------------------------------------------ */

static int executable(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

int tc_hip_find_hipcc(char *path, size_t cap) {
  if (cap) path[0] = 0;
  const char *env = getenv("PATH");
  if (env) {
    const char *p = env;
    while (*p) {
      size_t len = strcspn(p, ":");
      if (len > 0 && len < 4000) {
        char cand[4096];
        snprintf(cand, sizeof cand, "%.*s/hipcc", (int)len, p);
        if (executable(cand)) {
          snprintf(path, cap, "%s", cand);
          return 1;
        }
      }
      p += len;
      if (*p == ':') p++;
    }
  }
  if (executable("/opt/rocm/bin/hipcc")) {
    snprintf(path, cap, "/opt/rocm/bin/hipcc");
    return 1;
  }
  return 0;
}

static const char no_hipcc[] =
    "hipcc not found (looked in $PATH and /opt/rocm/bin; on Debian 12: apt-get install hipcc "
    "libamdhip64-dev rocm-device-libs)";

/* ---- running a command -------------------------------------------------- */

/* Runs argv (argv[0] a path) in dir with stdout and stderr into the file
 * log (or /dev/null when log is NULL); returns the exit status, or -1
 * when it could not run (err says why). */
static int run(char *const argv[], const char *dir, const char *log, tc_str *err) {
  pid_t pid = fork();
  if (pid < 0) {
    tc_str_printf(err, "fork failed: %s", strerror(errno));
    return -1;
  }
  if (pid == 0) {
    int fd = open(log ? log : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0) {
      dup2(nul, 0);
      close(nul);
    }
    if (dir && chdir(dir) != 0) _exit(126);
    execv(argv[0], argv);
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      tc_str_printf(err, "waitpid failed: %s", strerror(errno));
      return -1;
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  tc_str_printf(err, "%s was killed by signal %d", argv[0],
                WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return -1;
}

/* Reads a whole file; NULL on failure. */
static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  tc_str s;
  tc_str_init(&s);
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) tc_str_catn(&s, buf, n);
  fclose(f);
  if (len) *len = s.len;
  return tc_str_take(&s);
}

/* A private temporary directory ("" on failure, with err). */
static int make_tmpdir(char *dir, size_t cap, tc_str *err) {
  const char *t = getenv("TMPDIR");
  snprintf(dir, cap, "%s/tilec-hip.XXXXXX", t && *t ? t : "/tmp");
  if (!mkdtemp(dir)) {
    tc_str_printf(err, "cannot make a temporary directory %s: %s", dir, strerror(errno));
    dir[0] = 0;
    return 0;
  }
  return 1;
}

static void remove_tmpdir(const char *dir) {
  static const char *files[] = {"kernel.hip", "kernel.co", "hipcc.log", "probe.hip"};
  char p[4200];
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, files[i]);
    unlink(p);
  }
  rmdir(dir);
}

/* ---- versions and architectures ----------------------------------------- */

int tc_hip_hipcc_version(char *buf, size_t cap) {
  if (cap) buf[0] = 0;
  char hipcc[4096], dir[4096];
  if (!tc_hip_find_hipcc(hipcc, sizeof hipcc)) return 0;
  tc_str e;
  tc_str_init(&e);
  int ok = 0;
  if (make_tmpdir(dir, sizeof dir, &e)) {
    char log[4200];
    snprintf(log, sizeof log, "%s/hipcc.log", dir);
    char *argv[] = {hipcc, "--version", NULL};
    if (run(argv, dir, log, &e) == 0) {
      char *text = slurp(log, NULL);
      const char *v = text ? strstr(text, "HIP version: ") : NULL;
      if (v) {
        v += strlen("HIP version: ");
        snprintf(buf, cap, "%.*s", (int)strcspn(v, "\r\n"), v);
        ok = buf[0] != 0;
      }
      free(text);
    }
    remove_tmpdir(dir);
  }
  tc_str_free(&e);
  return ok;
}

/* Does the log say the offload arch is unknown to this hipcc? */
static int arch_rejected(const char *log) {
  return log && (strstr(log, "invalid target ID") || strstr(log, "Unsupported CUDA gpu arch") ||
                 strstr(log, "unsupported HIP gpu arch") || strstr(log, "unknown target CPU") ||
                 strstr(log, "unsupported offload arch"));
}

/* The first ROCm release whose compiler knows arch, for the archs newer
 * than Debian 12's ROCm 5.2; NULL for the rest. */
static const char *rocm_needed(const char *arch) {
  static const struct {
    const char *arch, *rocm;
  } table[] = {{"gfx942", "6.0"}, {"gfx950", "7.0"}};
  size_t n = strcspn(arch, ":");
  for (size_t i = 0; i < sizeof table / sizeof *table; i++)
    if (strlen(table[i].arch) == n && strncmp(arch, table[i].arch, n) == 0) return table[i].rocm;
  return NULL;
}

static void unsupported_arch(tc_str *err, const char *arch, const char *hipcc) {
  char ver[64];
  if (!tc_hip_hipcc_version(ver, sizeof ver)) snprintf(ver, sizeof ver, "unknown version");
  const char *rocm = rocm_needed(arch);
  tc_str_printf(err, "%s (HIP %s) does not support --offload-arch=%s (the HIP source is still "
                     "generated; compile it with ", hipcc, ver, arch);
  if (rocm)
    tc_str_printf(err, "ROCm %s or newer, the first to know %.*s)", rocm, (int)strcspn(arch, ":"),
                  arch);
  else
    tc_str_cat(err, "a newer ROCm)");
  if (strncmp(ver, "5.", 2) == 0)
    tc_str_cat(err, "; ROCm 5.x (Debian 12 has 5.2) compiles for gfx90a and gfx940 but not gfx942 "
                    "or gfx950");
}

/* ---- compiling ----------------------------------------------------------- */

tc_status tc_hip_compile(const char *source, const char *arch, char **co, size_t *co_bytes,
                         tc_str *err) {
  if (co) *co = NULL;
  if (co_bytes) *co_bytes = 0;
  if (!source) {
    tc_str_printf(err, "tc_hip_compile: no source");
    return TC_ERR_ARGUMENT;
  }
  tc_target_info ti;
  tc_str why;
  tc_str_init(&why);
  if (tc_target_info_make(TC_TARGET_HIP, arch, &ti, &why) != TC_OK) {
    tc_str_printf(err, "tc_hip_compile: %s", tc_str_cstr(&why));
    tc_str_free(&why);
    return TC_ERR_ARGUMENT;
  }
  tc_str_free(&why);
  arch = ti.arch;
  char hipcc[4096], dir[4096];
  if (!tc_hip_find_hipcc(hipcc, sizeof hipcc)) {
    tc_str_printf(err, "%s", no_hipcc);
    return TC_ERR_UNSUPPORTED;
  }
  if (!make_tmpdir(dir, sizeof dir, err)) return TC_ERR_RUNTIME;
  char src[4200], out[4200], log[4200], opt[96];
  snprintf(src, sizeof src, "%s/kernel.hip", dir);
  snprintf(out, sizeof out, "%s/kernel.co", dir);
  snprintf(log, sizeof log, "%s/hipcc.log", dir);
  snprintf(opt, sizeof opt, "--offload-arch=%s", arch);
  tc_status st = TC_OK;
  FILE *f = fopen(src, "w");
  if (!f || fputs(source, f) < 0 || fclose(f) != 0) {
    if (f) fclose(f);
    tc_str_printf(err, "cannot write %s: %s", src, strerror(errno));
    remove_tmpdir(dir);
    return TC_ERR_RUNTIME;
  }
  char *argv[] = {hipcc, "--genco", opt, "-O3", "-include", "hip/hip_runtime.h",
                  "kernel.hip", "-o", "kernel.co", NULL};
  int rc = run(argv, dir, log, err);
  if (rc != 0) {
    char *text = slurp(log, NULL);
    if (rc > 0 && arch_rejected(text)) {
      unsupported_arch(err, arch, hipcc);
      st = TC_ERR_UNSUPPORTED;
    } else if (rc >= 0) {
      tc_str_printf(err, "hipcc --genco %s failed (exit %d):\n%s", opt, rc, text ? text : "");
      st = TC_ERR_COMPILE;
    } else {
      st = TC_ERR_RUNTIME;
    }
    free(text);
  } else {
    size_t n = 0;
    char *bin = slurp(out, &n);
    if (!bin || n == 0) {
      tc_str_printf(err, "hipcc wrote no code object %s", out);
      free(bin);
      st = TC_ERR_COMPILE;
    } else if (co) {
      *co = bin;
      if (co_bytes) *co_bytes = n;
    } else {
      free(bin);
    }
  }
  remove_tmpdir(dir);
  return st;
}

/* Whether this hipcc compiles for arch (an empty translation unit). */
static int arch_ok(const char *hipcc, const char *arch) {
  char dir[4096];
  tc_str e;
  tc_str_init(&e);
  int ok = 0;
  if (make_tmpdir(dir, sizeof dir, &e)) {
    char src[4200], opt[64];
    snprintf(src, sizeof src, "%s/probe.hip", dir);
    snprintf(opt, sizeof opt, "--offload-arch=%s", arch);
    FILE *f = fopen(src, "w");
    if (f) {
      fputs("/* tilec: does hipcc know this arch? */\n", f);
      fclose(f);
      char h[4096];
      snprintf(h, sizeof h, "%s", hipcc);
      char *argv[] = {h, "--genco", opt, "-fsyntax-only", "probe.hip", NULL};
      ok = run(argv, dir, NULL, &e) == 0;
    }
    remove_tmpdir(dir);
  }
  tc_str_free(&e);
  return ok;
}

/* ---- what `tilec devices` says ------------------------------------------- */

void tc_hip_describe(tc_str *out) {
  char hipcc[4096], ver[64];
  if (tc_hip_find_hipcc(hipcc, sizeof hipcc)) {
    if (!tc_hip_hipcc_version(ver, sizeof ver)) snprintf(ver, sizeof ver, "version unknown");
    tc_str_printf(out, "HIP compiler: hipcc (HIP %s, %s)\n", ver, hipcc);
    static const char *archs[] = {"gfx90a", "gfx940", "gfx942", "gfx950"};
    tc_str yes, no;
    tc_str_init(&yes);
    tc_str_init(&no);
    for (size_t i = 0; i < sizeof archs / sizeof *archs; i++) {
      tc_str *t = arch_ok(hipcc, archs[i]) ? &yes : &no;
      tc_str_printf(t, "%s%s", t->len ? ", " : "", archs[i]);
    }
    tc_str_printf(out, "HIP archs: compiles for %s", yes.len ? tc_str_cstr(&yes) : "none");
    if (no.len)
      tc_str_printf(out, "; not supported by this hipcc: %s (%skernels are still emitted for them)",
                    tc_str_cstr(&no),
                    strncmp(ver, "5.", 2) == 0 ? "Debian 12's ROCm 5.2 predates them; " : "");
    tc_str_cat(out, "\n");
    tc_str_free(&yes);
    tc_str_free(&no);
  } else {
    tc_str_printf(out, "HIP compiler: unavailable: %s\n", no_hipcc);
  }
  tc_hip_describe_runtime(out);
}
