/* test_sm90_facts.c - tilec's Hopper (sm_90a) CUDA code checked against
 * NVIDIA's documented rules, worked out by hand here, instead of against
 * the models tilec runs itself: the OpenCL emulations of wgmma, of the bulk
 * tensor copies and of stmatrix share their addressing with the CUDA
 * emitter, so a mistake they share passes every OpenCL run.
 *
 *   1. wgmma matrix descriptors (PTX ISA, "Matrix Descriptor Format"):
 *      64-bit values worked out by hand, for descriptors of the TMA GEMM
 *      and the PTX ISA's own examples, against tc_wgmma_desc of the CUDA
 *      prelude and of the OpenCL prelude, both compiled and run on the host;
 *   2. the bulk-copy swizzles (CU_TENSOR_MAP_SWIZZLE_32B / 64B / 128B): byte
 *      addresses of box elements worked out by hand, against
 *      tc_tma_swizzle_offset (the layout the TMA GEMM prints) and against
 *      the swizzle function the replay below uses;
 *   3. the OpenCL emulation's reading through a descriptor (tc_wgmma_in of
 *      the OpenCL prelude, on the host) against the PTX ISA's canonical
 *      layouts, so the OpenCL GEMM runs vouch for the hardware's addressing;
 *   4. the CUDA TMA GEMM (both pipelines) replayed on the host: the operands
 *      of its bulk copies, expect_tx counts, mbarrier waits and releases,
 *      wgmma descriptors, stmatrix addresses and bulk stores, taken from the
 *      emitted source and evaluated by the host's C compiler, drive a model
 *      of shared memory that follows the documents.  Every wgmma must read
 *      exactly its 64 x 16 slice of A and its N x 16 slice of B, every
 *      element of the C tile must be stored once to its place, the bytes a
 *      stage expects must be the bytes that land in it, and every wait and
 *      release must name the barrier and parity derived here.  The faults
 *      the generator can inject (descriptors without the swizzle, stmatrix
 *      matrices out of order, cluster blocks that ignore their rank) are
 *      caught.
 *
 * Text of the emitted source is read only to find the expressions it hands
 * the hardware; every comparison is of computed values.  Needs a host C
 * compiler (cc); skipped, with the reason, without one. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/dialect.h"
#include "layout/tma_swizzle.h"

#define GEMM_TEST_SEED 9091
#include "gemm_test_util.h"
#include "base/test_hooks.h"

/* ---- the documents' rules, by hand ----------------------------------------
 * Matrix descriptor (PTX ISA, "Matrix Descriptor Format"), with
 * encode(x) = (x & 0x3FFFF) >> 4:
 *   bits  0-13  encode(matrix start address)
 *   bits 16-29  encode(leading dimension byte offset, LBO)
 *   bits 32-45  encode(stride dimension byte offset, SBO)
 *   bits 49-51  matrix base offset (0 when the swizzle pattern starts on its
 *               own boundary: 1024 bytes for 128B, 512 for 64B, 256 for 32B)
 *   bits 62-63  swizzle mode: 0 none, 1 128-byte, 2 64-byte, 3 32-byte. */
static uint64_t ptx_desc(unsigned addr, unsigned lbo, unsigned sbo, unsigned mode) {
  uint64_t enc_a = (addr & 0x3FFFFu) >> 4, enc_l = (lbo & 0x3FFFFu) >> 4,
           enc_s = (sbo & 0x3FFFFu) >> 4;
  return enc_a | enc_l << 16 | enc_s << 32 | (uint64_t)mode << 62;
}

/* The swizzles as permutations of a shared-memory byte address (CUDA
 * driver API, CU_TENSOR_MAP_SWIZZLE_*: 16-byte chunks permuted inside a
 * span of 32, 64 or 128 bytes; the PTX ISA's canonical wgmma layouts apply
 * the same as Swizzle<1|2|3, 4, 3> on byte addresses): the chunk number
 * (bits 4 and up) is XORed with the row of the pattern (bits 7 and up),
 * 3 bits for 128B (bits 4-6 ^= bits 7-9), 2 for 64B (4-5 ^= 7-8), 1 for
 * 32B (4 ^= 7).  So in a box of rows of S bytes the 16-byte chunk of row r
 * is XORed with r % 8 (128B), (r / 2) % 4 (64B) or (r / 4) % 2 (32B). */
static unsigned swz(unsigned a, int span) {
  unsigned bits = span == 128 ? 7u : span == 64 ? 3u : span == 32 ? 1u : 0u;
  return a ^ (((a >> 7) & bits) << 4);
}

/* The byte address the tensor core reads for element (mn, k) of a wgmma
 * operand of 16-bit elements (mn: the row of A / column of B, k < 16)
 * through descriptor d, K-major (trans 0) or M/N-major (trans 1): the PTX
 * ISA's canonical layouts (CuTe notation, T = 8 elements = 16 bytes):
 *   K-major, none:   ((8,m),(T,2k)):((1T,SBO),(1,LBO))
 *       start + (mn % 8) * 16 + (mn / 8) * SBO + (k % 8) * 2 + (k / 8) * LBO
 *   K-major, S-byte swizzle: ((8,m),(T,2k)):((S/16 T,SBO),(1,T))
 *       start + (mn % 8) * S + (mn / 8) * SBO + k * 2          (LBO unused)
 *   MN-major, none:  ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
 *       start + (mn % 8) * 2 + (mn / 8) * SBO + (k % 8) * 16 + (k / 8) * LBO
 *   MN-major, S-byte swizzle: ((T,S/16,m),(8,k)):((1,T,LBO),(S/16 T,SBO))
 *       start + (mn % (S/2)) * 2 + (mn / (S/2)) * LBO + (k % 8) * S + (k / 8) * SBO
 * then the swizzle on the address. */
static unsigned ptx_operand_addr(uint64_t d, int trans, int mn, int k) {
  unsigned start = (unsigned)(d & 0x3FFF) << 4, lbo = (unsigned)((d >> 16) & 0x3FFF) << 4;
  unsigned sbo = (unsigned)((d >> 32) & 0x3FFF) << 4, mode = (unsigned)(d >> 62);
  int span = mode == 1 ? 128 : mode == 2 ? 64 : mode == 3 ? 32 : 0;
  unsigned a;
  if (!span && !trans)
    a = start + (mn % 8) * 16 + (mn / 8) * sbo + (k % 8) * 2 + (k / 8) * lbo;
  else if (!span)
    a = start + (mn % 8) * 2 + (mn / 8) * sbo + (k % 8) * 16 + (k / 8) * lbo;
  else if (!trans)
    a = start + (mn % 8) * span + (mn / 8) * sbo + k * 2;
  else
    a = start + (mn % (span / 2)) * 2 + (mn / (span / 2)) * lbo + (k % 8) * span + (k / 8) * sbo;
  return swz(a, span);
}

/* ---- running C on the host ------------------------------------------------ */

/* Compiles the C program src with the host's compiler (GNU C: the CUDA
 * prelude has asm statements, in functions never called here) and runs it;
 * its output (malloc'd), or NULL with the reason in why. */
static char *host_run(const char *src, tc_str *why) {
  char dir[] = "/tmp/tilec-sm90-XXXXXX", path[64], exe[64], cmd[256], buf[4096];
  if (!mkdtemp(dir)) {
    tc_str_cat(why, "mkdtemp failed");
    return NULL;
  }
  snprintf(path, sizeof path, "%s/p.c", dir);
  snprintf(exe, sizeof exe, "%s/p", dir);
  FILE *f = fopen(path, "w");
  int ok = f && fputs(src, f) >= 0;
  if (f) ok &= fclose(f) == 0;
  tc_str out;
  tc_str_init(&out);
  if (ok) {
    snprintf(cmd, sizeof cmd, "cc -std=gnu11 -O1 -w -o %s %s 2>&1", exe, path);
    for (int pass = 0; pass < 2 && ok; pass++) {
      FILE *p = popen(pass ? exe : cmd, "r");
      tc_str_clear(&out);
      size_t n;
      while (p && (n = fread(buf, 1, sizeof buf, p)) > 0) tc_str_catn(&out, buf, n);
      ok = p && pclose(p) == 0;
      if (!ok) tc_str_printf(why, "%s failed:\n%.2000s", pass ? exe : cmd, tc_str_cstr(&out));
    }
  } else {
    tc_str_printf(why, "cannot write %s", path);
  }
  unlink(path), unlink(exe), rmdir(dir);
  if (!ok) {
    tc_str_free(&out);
    return NULL;
  }
  return tc_str_take(&out);
}

static int have_cc(void) { return system("command -v cc >/dev/null 2>&1") == 0; }

/* The CUDA prelude as host C: __device__ and __forceinline__ dropped, its
 * shared-address helper renamed away (the harness defines its own). */
static void cuda_prelude_for_host(tc_str *h) {
  tc_str_cat(h, "#define __device__\n#define __forceinline__ inline\n"
                "#define tc_wgmma_smem_u32 tc_wgmma_smem_u32_device\n");
  tc_str_cat(h, tc_cu_wgmma_prelude);
  tc_str_cat(h, "#undef tc_wgmma_smem_u32\n");
}

/* The OpenCL prelude as host C; tc_wgmma_in's 16-bit value comes back as
 * a float of its bits (the harness stores each slot's own index there). */
static void opencl_prelude_for_host(tc_str *h) {
  tc_str_cat(h, "#include <math.h>\n#include <stdint.h>\n"
                "typedef uint64_t ulong; typedef uint32_t uint; typedef uint16_t ushort;\n"
                "typedef uint16_t half;\n#define __local\n"
                "#define tc_bf16_to_f32(v) ((float)(v))\n#define vload_half(i, p) ((float)*(p))\n");
  tc_str_cat(h, tc_cl_wgmma_prelude);
}

/* ---- 1. descriptors ------------------------------------------------------- */

static const struct {
  unsigned addr, lbo, sbo, mode;
  uint64_t want;
} desc_cases[] = {
    /* tmaws:128,128,4, A K-major, stage 1, warp group 1, K step 2: start
     * 2 * (16384 + 4096 + 16 * 2) = 41024 = 0xA040 -> 0xA04; LBO 16 -> 1 at
     * bit 16; SBO 1024 (8 rows of 128 bytes) -> 0x40 at bit 32; 128B: 1 at
     * bit 62 */
    {41024, 16, 1024, 1, 0x4000004000010A04ull},
    /* the same kernel's B, N-major, stage 0, K step 3: start 2 * (8192 +
     * 3 * 1024) = 22528 = 0x5800 -> 0x580; LBO 8192 (the next 64 of N) ->
     * 0x200; SBO 1024 (8 K rows) -> 0x40 */
    {22528, 8192, 1024, 1, 0x4000004002000580ull},
    /* PTX ISA example "K-major, no-swizzling, tf32": LBO 64 * 4 = 256 ->
     * 16 = 0x10, SBO 32 * 4 = 128 -> 8; start 0x1F0 -> 0x1F */
    {0x1F0, 256, 128, 0, 0x000000080010001Full},
    /* PTX ISA example "MN-major, 64B swizzling, bf16": LBO 256 * 2 = 512 ->
     * 32 = 0x20, SBO 512 * 2 = 1024 -> 64 = 0x40; 64B: 2, bit 63 alone;
     * start 0x400 -> 0x40 */
    {0x400, 512, 1024, 2, 0x8000004000200040ull},
    /* PTX ISA example "MN-major, 32B swizzling, bf16": LBO 128 * 2 = 256 ->
     * 16, SBO 256 * 2 = 512 -> 32 = 0x20; 32B: 3, bits 62 and 63; start
     * 0x3FFF0, the last 16 bytes of the 18-bit window -> 0x3FFF */
    {0x3FFF0, 256, 512, 3, 0xC000002000103FFFull},
    /* an address past the 18-bit window: encode() keeps bits 4-17, so
     * 0x40010 -> 1 */
    {0x40010, 256, 128, 0, 0x0000000800100001ull},
};
enum { NDESC = sizeof desc_cases / sizeof desc_cases[0] };

/* The harness's main: every case of desc_cases through tc_wgmma_desc. */
static void desc_main(tc_str *h) {
  tc_str_cat(h, "#include <stdio.h>\nint main(void) {\n");
  for (int i = 0; i < NDESC; i++)
    tc_str_printf(h, "  printf(\"%%llx\\n\", (unsigned long long)tc_wgmma_desc(%uu, %uu, %uu, %uu));\n",
                  desc_cases[i].addr, desc_cases[i].lbo, desc_cases[i].sbo, desc_cases[i].mode);
  tc_str_cat(h, "  return 0;\n}\n");
}

static void check_desc_output(const char *out, const char *which) {
  const char *p = out;
  for (int i = 0; i < NDESC; i++) {
    unsigned long long got = 0;
    int n = 0;
    TC_REQUIRE(p && sscanf(p, "%llx%n", &got, &n) == 1, "%s: no value %d in '%s'", which, i, out);
    p += n;
    TC_CHECK(got == desc_cases[i].want,
             "%s: tc_wgmma_desc(%#x, %u, %u, %u) = %#llx, by hand %#llx", which, desc_cases[i].addr,
             desc_cases[i].lbo, desc_cases[i].sbo, desc_cases[i].mode, got,
             (unsigned long long)desc_cases[i].want);
  }
}

static void test_descriptors(void) {
  if (!have_cc()) TC_SKIP("no C compiler (cc) in PATH to run the preludes' tc_wgmma_desc");
  /* the hand encoder (used below) against the hand values */
  for (int i = 0; i < NDESC; i++)
    TC_CHECK(ptx_desc(desc_cases[i].addr, desc_cases[i].lbo, desc_cases[i].sbo, desc_cases[i].mode) ==
                 desc_cases[i].want,
             "case %d: ptx_desc %#llx", i,
             (unsigned long long)ptx_desc(desc_cases[i].addr, desc_cases[i].lbo, desc_cases[i].sbo,
                                          desc_cases[i].mode));
  for (int dialect = 0; dialect < 2; dialect++) {
    tc_str h, why;
    tc_str_init(&h), tc_str_init(&why);
    if (dialect == 0)
      cuda_prelude_for_host(&h);
    else
      opencl_prelude_for_host(&h);
    desc_main(&h);
    char *out = host_run(tc_str_cstr(&h), &why);
    TC_CHECK(out != NULL, "%s prelude on the host: %s", dialect ? "OpenCL" : "CUDA", tc_str_cstr(&why));
    if (out) check_desc_output(out, dialect ? "OpenCL prelude" : "CUDA prelude");
    free(out);
    tc_str_free(&h), tc_str_free(&why);
  }
}

/* ---- 2. the bulk-copy swizzles -------------------------------------------- */

static void test_tma_swizzles(void) {
  /* (swizzle bytes S, element bytes, row, column) -> byte offset in the box,
   * by hand: row r starts at r * S; the column's byte b = c * elem is in
   * 16-byte chunk b / 16, which moves to chunk (b / 16) ^ x, x = r % 8
   * (128B), (r / 2) % 4 (64B), (r / 4) % 2 (32B) */
  static const struct { int span, elem, r, c, byte; } cases[] = {
      {128, 2, 0, 0, 0},
      {128, 2, 0, 63, 126},    /* chunk 7 ^ 0, byte 14 of it */
      {128, 2, 1, 0, 144},     /* 128 + (0 ^ 1) * 16 */
      {128, 2, 3, 9, 418},     /* 384 + (1 ^ 3) * 16 + 2 */
      {128, 2, 7, 60, 904},    /* 896 + (7 ^ 7) * 16 + 8 */
      {128, 2, 13, 21, 1786},  /* 1664 + (2 ^ 5) * 16 + 10 */
      {64, 2, 1, 0, 64},       /* 64 + (0 ^ 0) * 16 */
      {64, 2, 2, 0, 144},      /* 128 + (0 ^ 1) * 16 */
      {64, 2, 5, 13, 378},     /* 320 + (1 ^ 2) * 16 + 10 */
      {64, 2, 9, 31, 638},     /* 576 + (3 ^ 0) * 16 + 14 */
      {64, 2, 14, 4, 952},     /* 896 + (0 ^ 3) * 16 + 8 */
      {32, 2, 3, 0, 96},       /* 96 + (0 ^ 0) * 16 */
      {32, 2, 4, 0, 144},      /* 128 + (0 ^ 1) * 16 */
      {32, 2, 6, 9, 194},      /* 192 + (1 ^ 1) * 16 + 2 */
      {32, 2, 12, 15, 398},    /* 384 + (1 ^ 1) * 16 + 14 */
      {128, 4, 2, 5, 308},     /* f32: 256 + (1 ^ 2) * 16 + 4 */
      {128, 4, 15, 31, 1932},  /* 1920 + (7 ^ 7) * 16 + 12 */
      {64, 4, 3, 7, 204},      /* 192 + (1 ^ 1) * 16 + 12 */
      {128, 1, 5, 100, 692},   /* bytes: 640 + (6 ^ 5) * 16 + 4 */
  };
  tc_epool *p = tc_epool_new();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    TC_STR_LOCAL(err);
    const tc_expr *e = tc_tma_swizzle_offset(p, 16, cases[i].span, cases[i].elem,
                                             tc_e_const(p, cases[i].r), tc_e_const(p, cases[i].c),
                                             &err);
    TC_CHECK(e != NULL, "case %zu: %s", i, tc_str_cstr(&err));
    int64_t none[1] = {0};
    if (e)
      TC_CHECK(tc_e_eval(e, none) * cases[i].elem == cases[i].byte,
               "%dB swizzle, %d-byte elements, (%d, %d): tc_tma_swizzle_offset gives byte %lld, by "
               "hand %d", cases[i].span, cases[i].elem, cases[i].r, cases[i].c,
               (long long)(tc_e_eval(e, none) * cases[i].elem), cases[i].byte);
    unsigned mine = swz((unsigned)(cases[i].r * cases[i].span + cases[i].c * cases[i].elem),
                        cases[i].span);
    TC_CHECK(mine == (unsigned)cases[i].byte, "case %zu: the replay's swizzle gives %u", i, mine);
  }
  tc_epool_free(p);
}

/* ---- 3. the emulation's reading against the canonical layouts ------------- */

static void test_emulated_reads(void) {
  if (!have_cc()) TC_SKIP("no C compiler (cc) in PATH to run the OpenCL prelude");
  /* descriptors of the layouts tilec uses (gemm_wgmma.c: K-major, no
   * swizzle, LBO = X / 8 * 128, SBO 128; gemm_tma.c: 128B, K-major LBO 16
   * SBO 1024, M/N-major LBO 8192 SBO 1024) and an MN-major one without
   * swizzle; starts past 0 so a wrong start shows; 64B: not modelled, NaN */
  static const struct { unsigned addr, lbo, sbo, mode; int trans, nmn; } cases[] = {
      {256, 1024, 128, 0, 0, 64},  {512, 2048, 256, 0, 1, 128}, {1024 + 32, 16, 1024, 1, 0, 128},
      {2048, 8192, 1024, 1, 1, 128}, {1024, 16, 512, 2, 0, 8},
  };
  enum { NC = sizeof cases / sizeof cases[0] };
  tc_str h, why;
  tc_str_init(&h), tc_str_init(&why);
  opencl_prelude_for_host(&h);
  tc_str_cat(&h, "#include <stdio.h>\nstatic ushort s[32768];\nint main(void) {\n"
                 "  for (int i = 0; i < 32768; i++) s[i] = (ushort)i;\n");
  for (int i = 0; i < NC; i++)
    tc_str_printf(&h,
                  "  { const ulong d = tc_wgmma_desc(%uu, %uu, %uu, %uu);\n"
                  "    printf(\"%%llx\\n\", (unsigned long long)d);\n"
                  "    for (int mn = 0; mn < %d; mn++) for (int k = 0; k < 16; k++) {\n"
                  "      float v = tc_wgmma_in(s, d, mn, k, 1, %d);\n"
                  "      printf(\"%%d\\n\", isnan(v) ? -1 : (int)v * 2); } }\n",
                  cases[i].addr, cases[i].lbo, cases[i].sbo, cases[i].mode, cases[i].nmn,
                  cases[i].trans);
  tc_str_cat(&h, "  return 0;\n}\n");
  char *out = host_run(tc_str_cstr(&h), &why);
  TC_CHECK(out != NULL, "OpenCL prelude on the host: %s", tc_str_cstr(&why));
  const char *p = out;
  for (int i = 0; i < NC && p; i++) {
    unsigned long long d = 0;
    int n = 0, bad = 0;
    TC_REQUIRE(sscanf(p, "%llx%n", &d, &n) == 1, "case %d: no descriptor", i);
    p += n;
    uint64_t want_d = ptx_desc(cases[i].addr, cases[i].lbo, cases[i].sbo, cases[i].mode);
    TC_CHECK(d == want_d, "case %d: descriptor %#llx, by hand %#llx", i, d, (unsigned long long)want_d);
    for (int mn = 0; mn < cases[i].nmn; mn++)
      for (int k = 0; k < 16; k++) {
        int got = 0;
        TC_REQUIRE(sscanf(p, "%d%n", &got, &n) == 1, "case %d: output ends", i);
        p += n;
        int want = cases[i].mode >= 2 ? -1 : (int)ptx_operand_addr(want_d, cases[i].trans, mn, k);
        if (got != want && bad++ < 4)
          TC_CHECK(got == want,
                   "descriptor (start %u, LBO %u, SBO %u, mode %u, %s-major) element (%d, %d): the "
                   "emulation reads byte %d, the PTX ISA's layout %d",
                   cases[i].addr, cases[i].lbo, cases[i].sbo, cases[i].mode,
                   cases[i].trans ? "MN" : "K", mn, k, got, want);
      }
  }
  free(out);
  tc_str_free(&h), tc_str_free(&why);
}

/* ---- 4. the CUDA TMA GEMM replayed ------------------------------------------
 * The expressions are evaluated by a harness program that defines the
 * kernel's variables (the K tile kt and running count tc_it, the block's
 * cluster rank tc_rank, the tile's origin tc_m0 / tc_n0 / tc_g, the warp
 * group tc_wg, warp tc_wgw and lane tc_lane) and maps addresses to byte
 * offsets in one array of shared memory (the mbarriers to their numbers:
 * full barrier s is REPLAY_BAR + s, empty barrier s REPLAY_BAR + 8 + s).
 * Each statement is evaluated in its role's context: the producer warp
 * group's (copies, expect_tx, its waits on the empty barriers) for every
 * rank and K tile; the block-synchronous kernel's prologue (its first
 * copies) once; the consumers' (waits on the full barriers, releases,
 * descriptors, the block-synchronous refills) for every K tile and warp
 * group; the epilogue's (stmatrix addresses per warp group, warp and lane;
 * the bulk stores per rank). */

enum { ROPS = 8, OPLEN = 400, RMAX = 48, REPLAY_BAR = 0x40000 };

/* The expressions of the operands ("c"(expr)) of the asm statement in s. */
static int asm_operands(const char *s, char ops[][OPLEN], int max) {
  int n = 0;
  for (const char *q = s; *q && n < max; q++) {
    if (*q != '"') continue;
    const char *c = q + 1;
    while (*c && strchr("=+rlh", *c) && c - q <= 3) c++;
    if (c == q + 1 || *c != '"' || c[1] != '(') continue;
    const char *b = c + 2, *e = b;
    for (int depth = 1; *e; e++) {
      depth += *e == '(' ? 1 : *e == ')' ? -1 : 0;
      if (!depth) break;
    }
    if (!*e) break;
    snprintf(ops[n++], OPLEN, "%.*s", (int)(e - b), b);
    q = e;
  }
  return n;
}

/* The operand numbers (%N) of the asm template in line, in the order they
 * appear; how many. */
static int template_refs(const char *line, int *refs, int max) {
  const char *q = strstr(line, "(\"");
  int n = 0;
  for (q = q ? q + 2 : ""; *q && *q != '"' && n < max; q++) {
    if (*q == '\\' && q[1]) {
      q++;
    } else if (*q == '%' && q[1] >= '0' && q[1] <= '9') {
      refs[n++] = atoi(q + 1);
      while (q[1] >= '0' && q[1] <= '9') q++;
    }
  }
  return n;
}

/* The call starting at p ("name(...)"), with its balanced parentheses. */
static void call_text(const char *p, char *out, size_t cap) {
  const char *e = strchr(p, '(');
  for (int depth = 0; e && *e; e++) {
    depth += *e == '(' ? 1 : *e == ')' ? -1 : 0;
    if (!depth) break;
  }
  snprintf(out, cap, "%.*s", e && *e ? (int)(e - p + 1) : 0, p);
}

/* The text between p and the next ';'. */
static void upto_semicolon(const char *p, char *out, size_t cap) {
  const char *e = strchr(p, ';');
  snprintf(out, cap, "%.*s", e ? (int)(e - p) : 0, p);
}

/* When a copy or expect_tx runs: the warp-specialised producer's, at its
 * K tile kt before the consumers' K tile kt; the block-synchronous
 * kernel's prologue, once before the K loop; its refills, after the
 * consumers' K tile kt. */
enum { AT_PRODUCER, AT_PROLOGUE, AT_REFILL };

typedef struct replay {
  int ws;                                   /* the warp-specialised pipeline */
  int nload, load_map[RMAX], load_mc[RMAX]; /* bulk loads: map 0 (A) or 1 (B), multicast */
  int load_at[RMAX], load_group[RMAX];      /* when it runs; the expect_tx before it */
  int ntx, tx_at[RMAX], nwait, wait_role[RMAX], nrel;
  int ndesc, wg_n[RMAX], wg_ta[RMAX], wg_tb[RMAX], wg_bf16[RMAX]; /* wgmma: N, transposes, type */
  int nst, st_lr[RMAX][4][2]; /* stmatrix: the c_acc index in each half of its 4 registers */
  int nstore, store_rank;
  int nev, ev[2 * RMAX];      /* epilogue order: i >= 0 stmatrix i, -1 - i store i */
  int init_full, init_empty;  /* the mbarriers' arrival counts */
  int own_arrive, peer_arrive; /* releases: arrivals on the block's / the peer's empty barrier */
  char stage[2][OPLEN], align[OPLEN]; /* the producer's and the consumers' stage */
  tc_str prod, once, cons, wgs, st, store; /* harness statements per context */
  char why[512];
} replay;

static void replay_init(replay *R) {
  memset(R, 0, sizeof *R);
  R->init_full = R->init_empty = -1;
  tc_str_init(&R->prod), tc_str_init(&R->once), tc_str_init(&R->cons), tc_str_init(&R->wgs);
  tc_str_init(&R->st), tc_str_init(&R->store);
}
static void replay_free(replay *R) {
  tc_str_free(&R->prod), tc_str_free(&R->once), tc_str_free(&R->cons), tc_str_free(&R->wgs);
  tc_str_free(&R->st), tc_str_free(&R->store);
}

#define RFAIL(...) (snprintf(R->why, sizeof R->why, __VA_ARGS__), -1)

/* Finds the statements of the CUDA TMA kernel src and writes their
 * evaluation into the harness contexts; 0, or -1 with R->why. */
static int replay_parse(replay *R, const char *src) {
  int role = 0;  /* 0 until the consumers' setmaxnreg.inc, then 1 */
  int kloop = 0; /* inside (after the start of) a K loop */
  int lr[4][2];
  memset(lr, -1, sizeof lr);
  char da[OPLEN] = "", db[OPLEN] = "", ops[ROPS][OPLEN], e[OPLEN];
  for (const char *s = src; s && *s;) {
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) : strlen(s);
    char *line = malloc(len + 1), *next = NULL;
    memcpy(line, s, len), line[len] = 0;
    s = nl ? nl + 1 : NULL;
    if (s) {
      const char *nl2 = strchr(s, '\n');
      size_t l2 = nl2 ? (size_t)(nl2 - s) : strlen(s);
      next = malloc(l2 + 1);
      memcpy(next, s, l2), next[l2] = 0;
    }
    const char *p;
    int n, rk = 0, a, b, c, bad = 0;
    if (strstr(line, "setmaxnreg.dec")) R->ws = 1;
    if (strstr(line, "setmaxnreg.inc")) role = 1;
    if (strstr(line, "for (int kt = 0; kt < ")) kloop = 1;
    int at = R->ws ? AT_PRODUCER : kloop ? AT_REFILL : AT_PROLOGUE;
    tc_str *ctx = at == AT_PRODUCER ? &R->prod : at == AT_PROLOGUE ? &R->once : &R->cons;
    if ((p = strstr(line, "cp.async.bulk.tensor.")) && sscanf(p, "cp.async.bulk.tensor.%dd", &rk) == 1 &&
        strstr(line, ".shared::cluster.global")) {
      /* [dst], [map, {coordinates}], [barrier] (, cta mask) */
      n = next ? asm_operands(next, ops, ROPS) : 0;
      int mc = strstr(line, ".multicast::cluster") != NULL, ref[ROPS], nr = template_refs(line, ref, ROPS);
      for (int t = 0; t < nr; t++) bad |= ref[t] < 0 || ref[t] >= n;
      if (bad || nr != 3 + rk + mc || R->nload == RMAX) {
        bad = RFAIL("a bulk load: %s", next ? next : "");
      } else {
        R->load_map[R->nload] = strstr(ops[ref[1]], "tc_tm_a") ? 0 : strstr(ops[ref[1]], "tc_tm_b") ? 1 : -1;
        R->load_mc[R->nload] = mc;
        R->load_at[R->nload] = at, R->load_group[R->nload] = R->ntx - 1;
        tc_str_printf(ctx, "printf(\"L %d %%u %%d %%u %%d %%d %%d %%u\\n\", tc_rank, kt, (unsigned)(%s), "
                      "(int)(%s), (int)(%s), (int)(%s), (unsigned)(%s));\n",
                      R->nload, ops[ref[0]], ops[ref[2]], ops[ref[3]], rk == 3 ? ops[ref[4]] : "0",
                      mc ? ops[ref[3 + rk]] : "0");
        R->nload++;
      }
    } else if (strstr(line, "mbarrier.arrive.expect_tx") && (n = asm_operands(line, ops, ROPS)) >= 2 &&
               R->ntx < RMAX) {
      R->tx_at[R->ntx] = at;
      tc_str_printf(ctx, "printf(\"X %d %%u %%d %%u %%u\\n\", tc_rank, kt, (unsigned)(%s), (unsigned)(%s));\n",
                    R->ntx++, ops[0], ops[1]);
    } else if (strstr(line, "mbarrier.try_wait.parity") && (n = asm_operands(line, ops, ROPS)) >= 3) {
      if (R->nwait == RMAX) {
        bad = RFAIL("too many waits");
      } else {
        R->wait_role[R->nwait] = R->ws ? role : 1;
        tc_str_printf(R->ws && !role ? &R->prod : &R->cons,
                      "printf(\"W %d %%u %%d %%u %%u\\n\", tc_rank, kt, (unsigned)(%s), (unsigned)(%s));\n",
                      R->nwait, ops[1], ops[2]);
        R->nwait++;
      }
    } else if ((p = strstr(line, "tc_eb = "))) {
      upto_semicolon(p + 8, e, sizeof e);
      tc_str_printf(&R->cons, "printf(\"R %d %%d %%u\\n\", kt, (unsigned)(%s));\n", R->nrel++, e);
    } else if (strstr(line, "mbarrier.arrive.shared::cta.b64")) {
      R->own_arrive++;
    } else if (strstr(line, "mbarrier.arrive.shared::cluster.b64")) {
      R->peer_arrive++;
    } else if ((p = strstr(line, "mbarrier.init.shared::cta.b64 [%0], ")) && sscanf(p + 36, "%d", &c) == 1) {
      if (strstr(line, "tc_empty"))
        R->init_empty = c;
      else
        R->init_full = c;
    } else if ((p = strstr(line, "= tc_wgmma_desc("))) {
      call_text(p + 2, strstr(line, "tc_da") ? da : db, OPLEN);
    } else if ((p = strstr(line, "wgmma.mma_async.sync.aligned.m64n"))) {
      char t[8] = "";
      const char *tr = strstr(line, "p, 1, 1, ");
      if (R->ndesc == RMAX || sscanf(p, "wgmma.mma_async.sync.aligned.m64n%dk16.f32.%7[a-z0-9]", &n, t) != 2 ||
          !tr || sscanf(tr, "p, 1, 1, %d, %d;", &a, &b) != 2 || !*da || !*db) {
        bad = RFAIL("a wgmma: %s", line);
      } else {
        R->wg_n[R->ndesc] = n, R->wg_ta[R->ndesc] = a, R->wg_tb[R->ndesc] = b;
        R->wg_bf16[R->ndesc] = !strcmp(t, "bf16") ? 1 : !strcmp(t, "f16") ? 0 : -1;
        tc_str_printf(&R->wgs, "printf(\"D %d %%d %%d %%llx %%llx\\n\", kt, tc_wg, (unsigned long long)(%s), "
                      "(unsigned long long)(%s));\n", R->ndesc++, da, db);
      }
      da[0] = db[0] = 0;
    } else if (sscanf(line, " tc_lr[%d] = tc_pack2(c_acc[%d] * tc_alpha, c_acc[%d] * tc_alpha);", &c, &a,
                      &b) == 3 && c >= 0 && c < 4) {
      lr[c][0] = a, lr[c][1] = b;
    } else if (strstr(line, "stmatrix.sync.aligned.m8n8.x4")) {
      n = next ? asm_operands(next, ops, ROPS) : 0;
      int regs_ok = n == 5 && R->nst < RMAX;
      for (int q = 0; q < 4 && regs_ok; q++) {
        snprintf(e, sizeof e, "tc_lr[%d]", q);
        regs_ok = !strcmp(ops[1 + q], e);
      }
      if (!regs_ok) {
        bad = RFAIL("a stmatrix: %s", next ? next : "");
      } else {
        memcpy(R->st_lr[R->nst], lr, sizeof lr);
        R->ev[R->nev++] = R->nst;
        tc_str_printf(&R->st, "printf(\"S %d %%d %%d %%d %%u\\n\", tc_wg, tc_wgw, tc_lane, (unsigned)(%s));\n",
                      R->nst++, ops[0]);
      }
    } else if ((p = strstr(line, "cp.async.bulk.tensor.")) && sscanf(p, "cp.async.bulk.tensor.%dd", &rk) == 1 &&
               strstr(line, ".global.shared::cta")) {
      /* [map, {coordinates}], [source] */
      int ref[ROPS], nr = template_refs(line, ref, ROPS);
      n = next ? asm_operands(next, ops, ROPS) : 0;
      for (int t = 0; t < nr; t++) bad |= ref[t] < 0 || ref[t] >= n;
      if (bad || nr != 2 + rk || R->nstore == RMAX) {
        bad = RFAIL("a bulk store: %s", next ? next : "");
      } else {
        R->store_rank = rk;
        R->ev[R->nev++] = -1 - R->nstore;
        tc_str_printf(&R->store, "printf(\"T %d %%u %%u %%d %%d %%d\\n\", tc_rank, (unsigned)(%s), (int)(%s), "
                      "(int)(%s), (int)(%s));\n",
                      R->nstore++, ops[ref[1 + rk]], ops[ref[1]], ops[ref[2]], rk == 3 ? ops[ref[3]] : "0");
      }
    } else if ((p = strstr(line, "const int tc_st = "))) {
      upto_semicolon(p + 18, R->stage[R->ws && !role ? 0 : 1], OPLEN);
    } else if ((p = strstr(line, "unsigned char *tc_sm = "))) {
      upto_semicolon(p + 23, R->align, sizeof R->align);
    }
    free(line), free(next);
    if (bad) return -1;
  }
  if ((R->ws && !*R->stage[0]) || !*R->stage[1] || !R->nload || !R->ndesc || !R->nst || !R->nstore ||
      !*R->align)
    return RFAIL("not a TMA kernel: stages '%.60s' / '%.60s', %d loads, %d wgmmas, %d stmatrix, %d stores, "
                 "alignment '%.60s'", R->stage[0], R->stage[1], R->nload, R->ndesc, R->nst, R->nstore,
                 R->align);
  return 0;
}

/* The tile a replay runs: block (rank) r of the cluster computes rows
 * tc_m0 = M0 + r * MPB and columns N0 of batch G0. */
typedef struct rtile {
  int64_t m0, n0, g0;
  int cm, nk, nc, stages, mpb, npb;
} rtile;

static void replay_harness(const replay *R, const rtile *T, tc_str *h) {
  cuda_prelude_for_host(h);
  tc_str_printf(h,
                "#include <stdio.h>\n#include <stdint.h>\n"
                "static unsigned char tc_smem[1 << 19] __attribute__((aligned(1024)));\n"
                "static unsigned long long tc_bars[16];\n"
                "#define tc_bar (tc_bars)\n#define tc_empty (tc_bars + 8)\n"
                "static unsigned tc_addr(const void *p) {\n"
                "  uintptr_t a = (uintptr_t)p, b = (uintptr_t)tc_bars;\n"
                "  if (a >= b && a < b + sizeof tc_bars) return %uu + (unsigned)((a - b) / 8);\n"
                "  return (unsigned)(a - (uintptr_t)tc_smem);\n}\n"
                "#define tc_tma_u32(p) tc_addr(p)\n#define tc_bar_u32(p) tc_addr(p)\n"
                "#define tc_wgmma_smem_u32(p) tc_addr(p)\n#define tc_ldsm_u32(p) tc_addr(p)\n"
                "#define COORDS const int tc_m0 = %lld + (int)tc_rank * %d, tc_n0 = %lld, tc_g = %lld;\n"
                "int main(void) {\n"
                "  unsigned char *tc_sm = tc_smem; unsigned short *tc_sm16 = (unsigned short *)tc_smem;\n",
                (unsigned)REPLAY_BAR, (long long)T->m0, T->mpb, (long long)T->n0, (long long)T->g0);
  /* the ring's alignment for a few places of the dynamic shared memory */
  tc_str_printf(h, "  for (int o = 0; o < 2048; o += 496) { unsigned char *tc_dsm = tc_smem + 4096 + o;\n"
                   "    printf(\"A %%d %%u\\n\", o, tc_addr(%s) - 4096u); }\n", R->align);
  if (R->ws)
    tc_str_printf(h, "  for (unsigned tc_rank = 0; tc_rank < %d; tc_rank++)\n"
                     "  for (int kt = 0; kt < %d; kt++) { const int tc_it = kt, tc_st = %s; COORDS\n%s  }\n",
                  T->cm, T->nk, R->stage[0], tc_str_cstr(&R->prod));
  tc_str_printf(h, "  for (unsigned tc_rank = 0; tc_rank < %d; tc_rank++) {\n"
                   "    const int kt = 0, tc_it = 0, tc_st = 0; COORDS\n%s  }\n",
                T->cm, tc_str_cstr(&R->once));
  tc_str_printf(h, "  for (unsigned tc_rank = 0; tc_rank < %d; tc_rank++)\n"
                   "  for (int kt = 0; kt < %d; kt++) { const int tc_it = kt, tc_st = %s; COORDS\n%s"
                   "    for (int tc_wg = 0; tc_wg < %d; tc_wg++) {\n%s    }\n  }\n",
                T->cm, T->nk, R->stage[1], tc_str_cstr(&R->cons), T->nc, tc_str_cstr(&R->wgs));
  tc_str_printf(h, "  { const unsigned tc_rank = 0; COORDS\n"
                   "    for (int tc_wg = 0; tc_wg < %d; tc_wg++) for (int tc_wgw = 0; tc_wgw < 4; tc_wgw++)\n"
                   "    for (int tc_lane = 0; tc_lane < 32; tc_lane++) {\n%s    }\n  }\n",
                T->nc, tc_str_cstr(&R->st));
  tc_str_printf(h, "  for (unsigned tc_rank = 0; tc_rank < %d; tc_rank++) { const int kt = 0; COORDS\n%s  }\n"
                   "  return 0;\n}\n",
                T->cm, tc_str_cstr(&R->store));
}

/* A model value: what a 16-bit slot of shared memory holds - which element
 * of which matrix (1 A [m][k], 2 B [k][n], 3 C [m][n]), or a zero the copy
 * filled in for coordinates outside the matrix (oob), or 7: something read
 * past the matrix inside the tensor map (padding). */
static uint64_t mval(int mat, int oob, int64_t g, int64_t r, int64_t c) {
  return (uint64_t)mat << 60 | (uint64_t)oob << 59 | (uint64_t)g << 48 | (uint64_t)r << 24 |
         (uint64_t)c;
}
#define UNSET (~(uint64_t)0)

typedef struct rload { unsigned dst, mask; int c[3]; } rload;
typedef struct rpair { unsigned bar, val; } rpair;
typedef struct rdesc { unsigned long long a, b; } rdesc;
typedef struct rstore { unsigned src; int c[3]; } rstore;

/* What the harness printed, per statement (and rank, K tile, ...). */
typedef struct rdata {
  rload *L;            /* [load][rank][kt] */
  rpair *X, *W, *Rl;   /* expect_tx [tx][rank][kt], waits [wait][rank][kt], releases [rel][kt] */
  rdesc *D;            /* [wgmma][kt][warp group] */
  unsigned *Sa;        /* stmatrix addresses [stmatrix][warp group][warp][lane] */
  rstore *St;          /* [store][rank] */
  int64_t smem_end;    /* the highest byte the kernel addresses, + 1 */
} rdata;

/* Notes that the kernel addresses shared memory up to byte end - 1. */
static void reach(rdata *Dd, int64_t end) {
  if (end > Dd->smem_end) Dd->smem_end = end;
}

/* Findings: counted, the first ones reported through TC_CHECK. */
typedef struct finds { int n, shown, report; } finds;
#define FIND(cond, ...)                                        \
  do {                                                         \
    if (!(cond)) {                                             \
      F->n++;                                                  \
      if (F->report && F->shown++ < 10) TC_CHECK(cond, __VA_ARGS__); \
    }                                                          \
  } while (0)

/* Runs copy group x (expect_tx x and the copies after it) of K tile kt
 * (the prologue's: as evaluated once) into block blk's shared memory sm,
 * and checks that the bytes the phase expects are the bytes that land,
 * on the full barrier of the stage of the group's K tile. */
static void replay_group(const replay *R, const rtile *T, rdata *Dd, const tc_gemm_kernel *k,
                         const mcase *tc, int x, int kt, int blk, uint64_t *sm, size_t nslot, finds *F) {
  int cm = T->cm, nk = T->nk, at = R->tx_at[x], kx = at == AT_PROLOGUE ? 0 : kt, ktile = -1;
  int64_t landed = 0, M = tc->m, N = tc->n, K = tc->k;
  for (int i = 0; i < R->nload; i++)
    for (int q = 0; q < cm && R->load_group[i] == x; q++) {
      const rload *l = &Dd->L[(i * cm + q) * nk + kx];
      if (R->load_mc[i] ? !(l->mask >> blk & 1) : q != blk) continue;
      FIND(R->load_map[i] == 0 || R->load_map[i] == 1, "a copy through an unknown tensor map");
      if (R->load_map[i] != 0 && R->load_map[i] != 1) continue;
      const tc_rt_tmap *tm = &k->tmaps[R->load_map[i]];
      int a_side = R->load_map[i] == 0, kmaj = a_side ? tc->a_trans : tc->b_trans;
      int64_t bytes = (int64_t)tm->box[0] * tm->box[1] * 2;
      int kt_of = (kmaj ? l->c[0] : l->c[1]) / 64;
      FIND(l->dst % 1024 == 0 && tm->box[0] * 2 == (uint32_t)tm->swizzle && (ktile < 0 || kt_of == ktile),
           "copy %d: destination %u not on a 1024-byte boundary, or a box row of %u bytes for a %d-byte "
           "swizzle, or K tile %d in a group of K tile %d", i, l->dst, tm->box[0] * 2, tm->swizzle, kt_of,
           ktile);
      ktile = kt_of;
      reach(Dd, l->dst + bytes);
      landed += bytes;
      for (uint32_t i1 = 0; i1 < tm->box[1]; i1++)
        for (uint32_t i0 = 0; i0 < tm->box[0]; i0++) {
          /* box element (i1, i0) is map element (c1 + i1, c0 + i0): zero
           * outside the map's dims */
          int64_t in = l->c[0] + i0, outc = l->c[1] + i1, g = tm->rank == 3 ? l->c[2] : 0;
          int mapoob = in >= (int64_t)tm->dims[0] || outc >= (int64_t)tm->dims[1] ||
                       (tm->rank == 3 && g >= (int64_t)tm->dims[2]);
          int64_t r = a_side ? (kmaj ? outc : in) : (kmaj ? in : outc);  /* m of A, k of B */
          int64_t cc = a_side ? (kmaj ? in : outc) : (kmaj ? outc : in); /* k of A, n of B */
          int inside = r < (a_side ? M : K) && cc < (a_side ? K : N) && g < tc->g;
          uint64_t v = mapoob ? mval(a_side ? 1 : 2, 1, g, r, cc)
                       : inside ? mval(a_side ? 1 : 2, 0, g, r, cc) : mval(7, 0, g, r, cc);
          unsigned addr = swz(l->dst + i1 * tm->box[0] * 2 + i0 * 2, tm->swizzle);
          if (addr / 2 < nslot) sm[addr / 2] = v;
        }
    }
  const rpair *e = &Dd->X[(x * cm + blk) * nk + kx];
  FIND(ktile >= 0 && e->bar == REPLAY_BAR + (unsigned)(ktile % T->stages) && e->val == landed,
       "block %d: expect_tx %d (K tile %d) arms barrier %#x with %u bytes; the copies of K tile %d land "
       "%lld bytes in stage %d (barrier %#x)", blk, x, kt, e->bar, e->val, ktile, (long long)landed,
       ktile % T->stages, REPLAY_BAR + ktile % T->stages);
}

/* Runs the replay of the parsed kernel k of case tc on tile T over the
 * harness's output; the number of findings (the first ones reported
 * through TC_CHECK when `report`). */
static int replay_run(const replay *R, const rtile *T, const char *out, const tc_gemm_kernel *k,
                      const mcase *tc, int report) {
  int cm = T->cm, nk = T->nk, nc = T->nc, S = T->stages;
  finds F0 = {0, 0, report}, *F = &F0;
  rdata Dd;
  memset(&Dd, 0, sizeof Dd);
  rload *L = Dd.L = calloc((size_t)(R->nload * cm * nk), sizeof *L);
  rpair *X = Dd.X = calloc((size_t)(R->ntx * cm * nk), sizeof *X);
  rpair *W = Dd.W = calloc((size_t)(R->nwait * cm * nk), sizeof *W);
  rpair *Rl = Dd.Rl = calloc((size_t)(R->nrel * nk), sizeof *Rl);
  rdesc *D = Dd.D = calloc((size_t)(R->ndesc * nk * nc), sizeof *D);
  unsigned *Sa = Dd.Sa = calloc((size_t)(R->nst * nc * 128), sizeof *Sa);
  rstore *St = Dd.St = calloc((size_t)(R->nstore * cm), sizeof *St);
  /* the harness's output */
  for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
    int i = 0, kt = 0, wg = 0, a = 0, b = 0, c = 0;
    unsigned r = 0, u = 0, v = 0;
    unsigned long long da = 0, db = 0;
    if (sscanf(p, "A %d %u", &a, &u) == 2)
      FIND(u % 1024 == 0 && (int)u >= a && (int)u - a < 1024,
           "the ring starts %u bytes into the 1024-aligned window when the dynamic shared memory "
           "starts %d bytes in: not the next 1024-byte boundary", u, a);
    else if (sscanf(p, "L %d %u %d %u %d %d %d %u", &i, &r, &kt, &u, &a, &b, &c, &v) == 8 && i < R->nload &&
             r < (unsigned)cm && kt < nk)
      L[(i * cm + (int)r) * nk + kt] = (rload){u, v, {a, b, c}};
    else if (sscanf(p, "X %d %u %d %u %u", &i, &r, &kt, &u, &v) == 5 && i < R->ntx && r < (unsigned)cm &&
             kt < nk)
      X[(i * cm + (int)r) * nk + kt] = (rpair){u, v};
    else if (sscanf(p, "W %d %u %d %u %u", &i, &r, &kt, &u, &v) == 5 && i < R->nwait && r < (unsigned)cm &&
             kt < nk)
      W[(i * cm + (int)r) * nk + kt] = (rpair){u, v};
    else if (sscanf(p, "R %d %d %u", &i, &kt, &u) == 3 && i < R->nrel && kt < nk)
      Rl[i * nk + kt] = (rpair){u, 0};
    else if (sscanf(p, "D %d %d %d %llx %llx", &i, &kt, &wg, &da, &db) == 5 && i < R->ndesc && kt < nk &&
             wg < nc)
      D[(i * nk + kt) * nc + wg] = (rdesc){da, db};
    else if (sscanf(p, "S %d %d %d %d %u", &i, &wg, &a, &b, &u) == 5 && i < R->nst && wg < nc)
      Sa[((i * nc + wg) * 4 + a) * 32 + b] = u;
    else if (sscanf(p, "T %d %u %u %d %d %d", &i, &r, &u, &a, &b, &c) == 6 && i < R->nstore && r < (unsigned)cm)
      St[i * cm + (int)r] = (rstore){u, {a, b, c}};
  }
  /* the barriers: one arrival (the producer's expect_tx) per phase of a
   * full barrier; per phase of an empty barrier one from each consumer
   * warp group of the block and, in a cluster, of the peer, whose producer
   * multicasts into this block's stages */
  FIND(R->init_full == 1, "full barriers expect %d arrivals, the producer makes 1", R->init_full);
  if (R->ws)
    FIND(R->init_empty == nc * cm && (R->peer_arrive > 0) == (cm > 1) && R->own_arrive > 0,
         "empty barriers expect %d arrivals; %d consumer warp groups, cluster of %d (releases: %d own, "
         "%d of the peer's)", R->init_empty, nc, cm, R->own_arrive, R->peer_arrive);
  else /* the block's barrier orders the refills after the reads */
    FIND(R->init_empty < 0 && R->own_arrive + R->peer_arrive + R->nrel == 0,
         "a block-synchronous kernel with empty barriers (%d arrivals) or releases", R->init_empty);
  int waits[2] = {0, 0};
  for (int i = 0; i < R->nwait; i++) waits[R->wait_role[i]]++;
  FIND(waits[1] > 0 && (waits[0] > 0) == R->ws, "%d waits of the producer, %d of the consumers", waits[0],
       waits[1]);
  size_t nslot = (size_t)k->smem_bytes / 2 + 1;
  uint64_t *sm = malloc(nslot * sizeof *sm);
  int64_t M = tc->m, N = tc->n, K = tc->k;
  for (int blk = 0; blk < cm; blk++) {
    int64_t m0 = T->m0 + blk * T->mpb;
    for (size_t s = 0; s < nslot; s++) sm[s] = UNSET;
    for (int kt = 0; kt < nk; kt++) {
      /* the copies, group by group (an expect_tx and the copies after it):
       * the warp-specialised producer's of K tile kt, or the
       * block-synchronous prologue's (before K tile 0); the refills come
       * after the consumers' K tile kt.  A group's copies landing in this
       * block: its own, and the multicast ones of every block whose mask
       * names it. */
      for (int x = 0; x < R->ntx; x++) {
        if (R->tx_at[x] == AT_REFILL || (R->tx_at[x] == AT_PROLOGUE && kt > 0)) continue;
        replay_group(R, T, &Dd, k, tc, x, kt, blk, sm, nslot, F);
      }
      /* the waits: K tile kt is fill n = kt / S of stage kt % S.  Phase n of
       * the stage's full barrier completes when fill n has landed: the
       * consumers wait with parity n & 1.  Phase n of its empty barrier
       * completes when the consumers release fill n: fill n >= 1 waits for
       * phase n - 1, parity (n - 1) & 1 (a wait with the other parity would
       * pass at once, before the release).  S = 4: full parities 0 0 0 0 1
       * 1 1 1 0 ..., empty parities (from kt 4) 0 0 0 0 1 1 1 1 0 ... */
      int fill = kt / S;
      for (int i = 0; i < R->nwait; i++) {
        const rpair *w = &W[(i * cm + blk) * nk + kt];
        if (R->wait_role[i] == 0 && fill >= 1)
          FIND(w->bar == REPLAY_BAR + 8 + (unsigned)(kt % S) && w->val == (unsigned)((fill - 1) & 1),
               "K tile %d: the producer waits on barrier %#x parity %u, want empty barrier %#x parity %d",
               kt, w->bar, w->val, REPLAY_BAR + 8 + kt % S, (fill - 1) & 1);
        else if (R->wait_role[i] == 1)
          FIND(w->bar == REPLAY_BAR + (unsigned)(kt % S) && w->val == (unsigned)(fill & 1),
               "K tile %d: the consumers wait on barrier %#x parity %u, want full barrier %#x parity %d", kt,
               w->bar, w->val, REPLAY_BAR + kt % S, fill & 1);
      }
      /* the release after K tile kt's wgmmas are issued and all but the
       * last group done (wait_group 1): K tile kt - 1's stage */
      for (int i = 0; i < R->nrel && kt >= 1; i++)
        FIND(Rl[i * nk + kt].bar == REPLAY_BAR + 8 + (unsigned)((kt - 1) % S),
             "K tile %d: a release of barrier %#x, want the empty barrier %#x of K tile %d", kt,
             Rl[i * nk + kt].bar, REPLAY_BAR + 8 + (kt - 1) % S, kt - 1);
      /* the wgmmas: warp group wg's four read A rows m0 + 64 wg .. + 63 and
       * all NPB columns of B, K columns 64 kt + 16 ks .. + 15, each ks once */
      for (int wg = 0; wg < nc; wg++) {
        int used = 0;
        for (int j = 0; j < R->ndesc; j++) {
          const rdesc *d = &D[(j * nk + kt) * nc + wg];
          FIND(R->wg_n[j] == T->npb && R->wg_bf16[j] == (tc->ab == TC_BF16),
               "wgmma %d: m64n%dk16, %s; the tile is %d wide of %s", j, R->wg_n[j],
               R->wg_bf16[j] ? "bf16" : "f16", T->npb, tc_dtype_name(tc->ab));
          FIND(((d->a | d->b) >> 49 & 7) == 0, "wgmma %d: a base offset in %#llx / %#llx", j, d->a, d->b);
          uint64_t v00 = sm[ptx_operand_addr(d->a, R->wg_ta[j], 0, 0) / 2 % nslot];
          int ks = (int)(((v00 & 0xFFFFFF) - (uint64_t)(64 * kt)) / 16);
          FIND(v00 >> 60 == 1 && ks >= 0 && ks < 4 && !(used >> ks & 1),
               "block %d K tile %d warp group %d wgmma %d: A's first element is %#llx, not the start "
               "of an unread K step", blk, kt, wg, j, (unsigned long long)v00);
          if (ks < 0 || ks >= 4) continue;
          used |= 1 << ks;
          /* A (rows of the warp group) and B (all NPB columns), 16 of K */
          for (int op = 0; op < 2; op++) {
            int bad = 0, trans = op ? R->wg_tb[j] : R->wg_ta[j];
            unsigned long long dd = op ? d->b : d->a;
            for (int x = 0; x < (op ? T->npb : 64); x++)
              for (int kk = 0; kk < 16; kk++) {
                int64_t mn = op ? T->n0 + x : m0 + 64 * wg + x, kx = 64 * kt + 16 * ks + kk;
                int oob = !(mn < (op ? N : M) && kx < K && T->g0 < tc->g);
                uint64_t want = op ? mval(2, oob, T->g0, kx, mn) : mval(1, oob, T->g0, mn, kx);
                unsigned addr = ptx_operand_addr(dd, trans, x, kk);
                reach(&Dd, addr + 2);
                if (sm[addr / 2 % nslot] != want && bad++ < 2)
                  FIND(0, "block %d K tile %d warp group %d K step %d: %c element (%d, k %d) through "
                       "descriptor %#llx (%s-major) reads byte %u holding %#llx, want %#llx", blk, kt, wg, ks,
                       "AB"[op], x, kk, dd, trans ? "MN" : "K", addr, (unsigned long long)sm[addr / 2 % nslot],
                       (unsigned long long)want);
              }
            F->n += bad > 2 ? bad - 2 : 0;
          }
        }
        FIND(used == 15, "block %d K tile %d warp group %d: K steps %#x read, want all 4", blk, kt, wg, used);
      }
      for (int x = 0; x < R->ntx; x++)
        if (R->tx_at[x] == AT_REFILL) replay_group(R, T, &Dd, k, tc, x, kt, blk, sm, nslot, F);
    }
    /* the epilogue, in program order: stmatrix.x4 writes, bulk stores read */
    for (size_t s = 0; s < nslot; s++) sm[s] = UNSET;
    int64_t tile = (int64_t)T->mpb * T->npb;
    int *stored = calloc((size_t)tile, sizeof *stored);
    for (int e = 0; e < R->nev; e++) {
      if (R->ev[e] >= 0) {
        int i = R->ev[e];
        /* stmatrix (PTX ISA): lane 8q + rr gives the address of row rr of
         * matrix q; register q of lane l holds that matrix's row l / 4,
         * columns 2 (l % 4) (low half) and + 1 (high half).  The values
         * are the wgmma accumulators (PTX ISA, m64nNk16 D fragment): c_acc[j]
         * of thread t of the warp group is D[16 (t / 32) + (t % 32) / 4 + 8
         * ((j / 2) % 2)][8 (j / 4) + 2 (t % 4) + j % 2]. */
        for (int wg = 0; wg < nc; wg++)
          for (int w = 0; w < 4; w++)
            for (int q = 0; q < 4; q++)
              for (int rr = 0; rr < 8; rr++)
                for (int cc = 0; cc < 8; cc++) {
                  unsigned addr = Sa[((i * nc + wg) * 4 + w) * 32 + 8 * q + rr] + 2 * (unsigned)cc;
                  int l = 4 * rr + cc / 2, t = 32 * w + l, j = R->st_lr[i][q][cc % 2];
                  int row = 16 * (t / 32) + (t % 32) / 4 + 8 * ((j / 2) % 2);
                  int col = 8 * (j / 4) + 2 * (t % 4) + j % 2;
                  reach(&Dd, addr + 2);
                  FIND(j >= 0 && j < T->npb / 2, "stmatrix %d: register %d holds c_acc[%d]", i, q, j);
                  sm[addr / 2 % nslot] = mval(3, 0, T->g0, m0 + 64 * wg + row, T->n0 + col);
                }
        continue;
      }
      int i = -1 - R->ev[e];
      const rstore *st = &St[i * cm + blk];
      const tc_rt_tmap *tm = &k->tmaps[2];
      int64_t g = R->store_rank == 3 ? st->c[2] : 0;
      FIND(st->src % 1024 == 0, "bulk store %d: source %u not on a 1024-byte boundary", i, st->src);
      reach(&Dd, st->src + (int64_t)tm->box[0] * tm->box[1] * 2);
      for (uint32_t i1 = 0; i1 < tm->box[1]; i1++)
        for (uint32_t i0 = 0; i0 < tm->box[0]; i0++) {
          int64_t n = st->c[0] + i0, m = st->c[1] + i1;
          if (n >= N || m >= M || g >= tc->g) continue; /* the copy engine drops these */
          uint64_t v = sm[swz(st->src + i1 * tm->box[0] * 2 + i0 * 2, tm->swizzle) / 2 % nslot];
          FIND(v == mval(3, 0, g, m, n),
               "block %d bulk store %d: C[%lld][%lld][%lld] gets %#llx, want %#llx", blk, i, (long long)g,
               (long long)m, (long long)n, (unsigned long long)v,
               (unsigned long long)mval(3, 0, g, m, n));
          int64_t tr = m - m0, tcn = n - T->n0;
          FIND(tr >= 0 && tr < T->mpb && tcn >= 0 && tcn < T->npb && g == T->g0,
               "block %d: a store to C[%lld][%lld] outside its tile", blk, (long long)m, (long long)n);
          if (tr >= 0 && tr < T->mpb && tcn >= 0 && tcn < T->npb) stored[tr * T->npb + tcn]++;
        }
    }
    int missing = 0;
    for (int64_t t = 0; t < tile; t++) {
      int64_t m = m0 + t / T->npb, n = T->n0 + t % T->npb;
      if (m < M && n < N && stored[t] != 1 && missing++ < 2)
        FIND(0, "block %d: C[%lld][%lld] stored %d times", blk, (long long)m, (long long)n, stored[t]);
    }
    F->n += missing > 2 ? missing - 2 : 0;
    free(stored);
  }
  /* all of it inside the dynamic shared memory, after the alignment slack
   * (the ring moves up by at most 1008 bytes from a 16-byte aligned start) */
  FIND(Dd.smem_end + 1008 <= k->smem_bytes, "the kernel addresses %lld bytes of shared memory from the "
       "aligned ring; with up to 1008 bytes skipped to align it that is more than the %lld it has",
       (long long)Dd.smem_end, (long long)k->smem_bytes);
  free(sm), free(L), free(X), free(W), free(Rl), free(D), free(Sa), free(St);
  return F->n;
}

static const gemm_harness tma_harness = {"tilec_gemm_tma", tc_gemm_tma_default, 0};

/* Generates case tc for CUDA and replays it; the findings (reported when
 * `report`), or -1 where it could not be replayed (a check failed). */
static int replay_case(const mcase *tc, int report) {
  problem P;
  tc_gemm_params p;
  tc_gemm_kernel k;
  char cfg[64];
  int found = -1;
  if (gemm_make(&tma_harness, tc, TC_TARGET_CUDA, &P, &p, &k, cfg, sizeof cfg)) {
    replay R;
    replay_init(&R);
    int cm = p.tma_cluster > 1 ? p.tma_cluster : 1;
    rtile T = {(int64_t)p.m_per_block * cm, p.n_per_block, tc->g - 1, cm, (int)((tc->k + 63) / 64),
               p.m_per_block / 64, p.tma_stages, p.m_per_block, p.n_per_block};
    int ok = k.ntmaps == 3 && replay_parse(&R, k.source) == 0 && R.ws == p.tma_ws;
    TC_CHECK(ok, "%s: %d tensor maps; %s", cfg, k.ntmaps, R.why);
    tc_str h, why;
    tc_str_init(&h), tc_str_init(&why);
    if (ok) {
      replay_harness(&R, &T, &h);
      char *out = host_run(tc_str_cstr(&h), &why);
      TC_CHECK(out != NULL, "%s: the harness: %s", cfg, tc_str_cstr(&why));
      if (out) found = replay_run(&R, &T, out, &k, tc, report);
      if (report && found > 0) printf("  %s: %d findings\n", cfg, found);
      free(out);
    }
    tc_str_free(&h), tc_str_free(&why);
    replay_free(&R);
  }
  tc_gemm_kernel_free(&k);
  problem_free(&P);
  return found;
}

/* a_trans 1: A stored [M][K] (K-major); b_trans 1: B stored [N][K].  The
 * replayed blocks compute the tile at rows MPB * cluster, columns NPB of
 * the last batch, so the shapes put edges through some of them. */
static const mcase replay_cases[] = {
    /* K-major A, N-major B; 10 K tiles over 4 stages (fills 0, 1 and 2) */
    {"tmaws:128,128,4", 1, 512, 384, 640, 1, 0, TC_BF16, TC_BF16, 0, 1.0f},
    /* M-major A, K-major B, a batch (3-D maps), edges in M, N and K */
    {"tmaws:64,256,3", 2, 104, 304, 200, 0, 1, TC_F16, TC_F16, 0, 1.0f},
    /* 2-block clusters: B multicast as N-major boxes / K-major half boxes */
    {"tmaws:128,256,4,2", 1, 600, 600, 256, 1, 0, TC_BF16, TC_BF16, 0, 1.0f},
    {"tmaws:128,64,3,2", 1, 504, 200, 200, 0, 1, TC_F16, TC_F16, 0, 1.0f},
    /* persistent, 3 C boxes through 2 buffers */
    {"tmaws:128,192,3,1,3", 1, 304, 504, 200, 0, 1, TC_BF16, TC_BF16, 0, 1.0f},
    /* the heuristic's choice */
    {NULL, 1, 512, 512, 512, 1, 0, TC_BF16, TC_BF16, 0, 1.0f},
    /* the block-synchronous pipeline: its prologue fills the stages, each
     * K tile's refill follows the block's barrier */
    {"tma:128,128,4", 1, 512, 384, 640, 0, 0, TC_BF16, TC_BF16, 0, 1.0f},
    {"tma:64,256,2", 2, 104, 304, 200, 1, 1, TC_F16, TC_F16, 0, 1.0f},
};

static void test_replay(void) {
  if (!have_cc()) TC_SKIP("no C compiler (cc) in PATH to evaluate the kernel's expressions");
  for (size_t i = 0; i < sizeof replay_cases / sizeof replay_cases[0]; i++) {
    int f = replay_case(&replay_cases[i], 1);
    TC_CHECK(f == 0, "%s: %d findings", replay_cases[i].cfg ? replay_cases[i].cfg : "default", f);
  }
  /* the generator's injected faults must be found: 1, descriptors without
   * the swizzle; 2, stmatrix registers out of order; 3, cluster blocks
   * that all load the first share of B */
  static const struct { int fault; size_t c; } faults[] = {{1, 0}, {1, 1}, {1, 6}, {2, 0}, {2, 7},
                                                           {3, 2}, {3, 3}};
  for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
    tc_test_hooks_set(&(tc_test_hooks){.gemm_tma_fault = faults[i].fault});
    int f = replay_case(&replay_cases[faults[i].c], 0);
    tc_test_hooks_set(NULL);
    TC_CHECK(f > 0, "fault %d on %s: not found (%d)", faults[i].fault, replay_cases[faults[i].c].cfg, f);
  }
}

int main(void) {
  /* rows of 16-byte multiples (tensor maps) */
  gemm_ab_extra = 8, gemm_c_extra = 8;
  TC_RUN(test_descriptors);
  TC_RUN(test_tma_swizzles);
  TC_RUN(test_emulated_reads);
  TC_RUN(test_replay);
  TC_MAIN_END();
}
