/* fuzz_gemm_config.c - libFuzzer harness for GEMM perf-config strings: a
 * small GEMM (sizes, transposes, dtype, target from the first bytes; one
 * size may be extreme) and a perf config (the rest).  Parsing, deriving
 * and checking must give 0 or -1 with a message; a config that parses
 * must format to one that parses, one that derives must pass the check
 * and its format must derive to the same fields; and tc_gemm_plan (parse,
 * derive, generate the kernel source for opencl, cuda or hip; or the
 * heuristic) must succeed with a source or fail with a message. */
#include <stdlib.h>
#include <string.h>

#include "tilec/tilec.h"
#include "../src/tune/params.h"
#include "fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  setenv("TILEC_CACHE", "0", 1);
  setenv("TILEC_EXPERIMENTAL_WGMMA", "1", 1);
  return 0;
}

/* A parsed config formats to one that parses; one that derives passes the
 * check, and its format parses and derives back to the same fields (what
 * the perf DB and the messages rely on).  A parsed config that fails to
 * derive may format without fields the rules reject (a tmaws: cluster
 * other than 1 or 2). */
static void check_params(const char *text, const tc_gemm_params *p0, const tc_gemm_shape *s) {
  char buf[128];
  TC_STR_LOCAL(err);
  tc_gemm_params_format(p0, buf, sizeof buf);
  tc_gemm_params p1;
  memset(&p1, 0, sizeof p1);
  FZ_ASSERT(tc_gemm_params_parse(buf, &p1, &err) == 0,
            "\"%s\" parses but its format \"%s\" does not: %s", text, buf, tc_str_cstr(&err));
  tc_gemm_params d = *p0;
  tc_str_clear(&err);
  if (tc_gemm_params_derive(&d, s, &err) != 0) {
    FZ_ASSERT(err.len > 0, "derive of \"%s\" failed without a message", text);
    FZ_ASSERT(memcmp(&d, p0, sizeof d) == 0, "a failed derive of \"%s\" changed the params", text);
    return;
  }
  tc_str_clear(&err);
  FZ_ASSERT(tc_gemm_params_check(&d, s, &err) == 0,
            "\"%s\" derives but fails the check: %s", text, tc_str_cstr(&err));
  tc_gemm_params_format(&d, buf, sizeof buf);
  memset(&p1, 0, sizeof p1);
  FZ_ASSERT(tc_gemm_params_parse(buf, &p1, &err) == 0 &&
                tc_gemm_params_derive(&p1, s, &err) == 0,
            "\"%s\" derives but its format \"%s\" does not: %s", text, buf, tc_str_cstr(&err));
  FZ_ASSERT(memcmp(&d, &p1, sizeof d) == 0, "\"%s\" and its format \"%s\" derive differently",
            text, buf);
  FZ_ASSERT(tc_gemm_lds_bytes(&d) > 0, "\"%s\": no shared memory", text);
  if (s && s->m) { /* (M = 0: no shape, as tc_gemm_params_check reads it) */
    FZ_ASSERT(tc_gemm_num_blocks(s, &d) > 0, "\"%s\": no blocks", text);
    FZ_ASSERT(tc_gemm_padded_flops(s, &d) >= 0, "\"%s\": negative padding", text);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_in in = {data, size};
  tc_gemm_desc d;
  tc_gemm_desc_init(&d);
  d.m = fz_range(&in, 1, 300);
  d.n = fz_range(&in, 1, 300);
  d.k = fz_range(&in, 1, 300);
  d.batch = fz_range(&in, 1, 3);
  unsigned flags = fz_byte(&in);
  d.trans_a = flags & 1;
  d.trans_b = flags >> 1 & 1;
  static const tc_dtype dtypes[] = {TC_F32, TC_F16, TC_F16, TC_BF16};
  d.dtype = dtypes[flags >> 2 & 3];
  tc_op_options opt;
  memset(&opt, 0, sizeof opt);
  opt.target = (tc_target)((flags >> 4 & 3) % 3);
  opt.perfdb = "";
  int heuristic = flags >> 6 & 1;
  if (flags >> 7) {
    /* one size at an extreme: the description's limits, 2^31 elements */
    static const int64_t ext[] = {0, -1, INT32_MAX, (int64_t)1 << 31, 1 << 16, 1 << 20,
                                  INT64_MAX, 46341};
    unsigned e = fz_byte(&in);
    int64_t *dim[4] = {&d.m, &d.n, &d.k, &d.batch};
    *dim[e & 3] = ext[e >> 2 & 7];
  }
  char *text = fz_rest(&in);

  tc_gemm *g = tc_gemm_new(&d, &opt);
  /* the direct API on the GEMM's shape (after a plan made it) */
  tc_status st = tc_gemm_plan(g, heuristic ? NULL : text);
  FZ_LOG("tc_gemm_plan(%s) on %s: %s %s", heuristic ? "NULL" : text, tc_target_name(opt.target),
         tc_status_name(st), st ? tc_gemm_error(g) : tc_gemm_perf_config(g));
  if (st == TC_OK) {
    const char *src = tc_gemm_kernel_source(g);
    FZ_ASSERT(src && strlen(src) > 0, "tc_gemm_plan succeeded without a source");
    int64_t grid[3], block[3];
    FZ_ASSERT(tc_gemm_kernel_launch(g, grid, block) == 1, "no launch after a plan");
    FZ_ASSERT(tc_gemm_perf_config(g)[0], "no perf config after a plan");
  } else {
    FZ_ASSERT(tc_gemm_error(g)[0], "tc_gemm_plan failed (%s) without a message",
              tc_status_name(st));
  }
  tc_gemm_free(g);

  tc_gemm_params p;
  memset(&p, 0, sizeof p);
  TC_STR_LOCAL(err);
  if (tc_gemm_params_parse(text, &p, &err) == 0) {
    tc_gemm_shape s;
    memset(&s, 0, sizeof s);
    s.g = d.batch, s.m = d.m, s.n = d.n, s.k = d.k;
    s.dtype = s.c_dtype = d.dtype;
    s.a_vec_k = s.a_vec_m = s.b_vec_k = s.b_vec_n = s.c_vec_n = 1;
    check_params(text, &p, &s);
    check_params(text, &p, NULL);
  } else {
    FZ_ASSERT(err.len > 0, "parse of \"%s\" failed without a message", text);
  }
  free(text);
  return 0;
}
