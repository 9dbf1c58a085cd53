/* test_tmap.c - tensor maps (CUtensorMap) for kernels with bulk tensor
 * copies (TMA): src/runtime/tmap.c, the CUDA launch path
 * (src/runtime/cuda.c) and the maps tc_compile derives
 * (src/codegen/tma_cuda.c tc_cu_tma_maps).
 *
 *   1. tc_tmap_check: every rule of cuTensorMapEncodeTiled, each failure
 *      with its message; tc_tmap_check_all's "tensor map I: " prefix.
 *   2. tc_tmap_encode_args for a hand-derived case (bf16 [8192, 8192]
 *      row-major, box 64x64, 128B swizzle) and the dtype / swizzle enums.
 *   3. tilec's enum values equal cuda.h's (a tiny C file compiled with
 *      cc -I/usr/local/cuda/include; skipped without the header or cc).
 *   4. tc_cuda_run checks the maps before it needs a device.
 *   5. LdStMatrixSet (tests/ldst_test_util.h) for CUDA sm_90a:
 *      the maps of its input and output, derived by hand; the same from
 *      the kernel cache; none for OpenCL or sm_80; tc_kernel_run ends at
 *      "no CUDA device" here (where there is a GPU it runs and checks the
 *      copy).
 *   6. The dynamic shared memory limit the launch sets
 *      (tc_cuda_dyn_smem_limit): counted against the function's static
 *      shared memory, so a kernel with 1 KiB of it (a kernel with bulk
 *      copies: ptxas pads its few bytes of mbarriers to tc_smem's
 *      1024-byte alignment) and 48 KiB of dynamic memory raises the
 *      limit, where comparing with 48 KiB alone did not. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/kernel_tmaps.h"
#include "ldst_test_util.h"
#include "runtime/runtime.h"
#include "test.h"
#include "tilec/tilec.h"

/* bf16 [8192, 8192] row-major, box 64 x 64, 128B swizzle, buffer 0 */
static tc_rt_tmap base_map(void) {
  tc_rt_tmap t = {0};
  t.buffer = 0;
  t.dtype = TC_BF16;
  t.rank = 2;
  t.dims[0] = 8192, t.dims[1] = 8192;
  t.strides[1] = 8192 * 2;
  t.box[0] = 64, t.box[1] = 64;
  t.swizzle = 128;
  return t;
}

/* t must fail tc_tmap_check (nbufs 1) with TC_ERR_ARGUMENT and `want` in
 * the message. */
static void expect_bad(const tc_rt_tmap *t, const char *want, const char *label) {
  tc_str err;
  tc_str_init(&err);
  tc_status st = tc_tmap_check(t, 1, &err);
  TC_CHECK(st == TC_ERR_ARGUMENT && strstr(tc_str_cstr(&err), want) != NULL,
           "%s: expected TC_ERR_ARGUMENT with \"%s\", got %s: \"%s\"", label, want,
           tc_status_name(st), tc_str_cstr(&err));
  tc_str_free(&err);
}

static void expect_good(const tc_rt_tmap *t, const char *label) {
  tc_str err;
  tc_str_init(&err);
  tc_status st = tc_tmap_check(t, 1, &err);
  TC_CHECK(st == TC_OK, "%s: %s: %s", label, tc_status_name(st), tc_str_cstr(&err));
  tc_str_free(&err);
}

/* ---- 1. the rules --------------------------------------------------------- */

static void test_check_rules(void) {
  tc_rt_tmap t = base_map();
  expect_good(&t, "the base map");
  expect_bad(NULL, "no tensor map (NULL)", "NULL");

  t = base_map(), t.buffer = 1;
  expect_bad(&t, "buffer index 1 is out of range (the launch has 1 buffer)", "buffer 1 of 1");
  t = base_map(), t.buffer = -1;
  expect_bad(&t, "buffer index -1 is out of range", "buffer -1");
  t = base_map(), t.dtype = (tc_dtype)7;
  expect_bad(&t, "element type 7 has no tensor-map data type", "dtype 7");

  t = base_map(), t.rank = 0;
  expect_bad(&t, "rank 0 is not 1 to 5", "rank 0");
  t = base_map(), t.rank = 6;
  expect_bad(&t, "rank 6 is not 1 to 5", "rank 6");

  t = base_map(), t.dims[1] = 0;
  expect_bad(&t, "dims[1] = 0 is not 1 to 2^32", "dims[1] 0");
  t = base_map(), t.dims[0] = (UINT64_C(1) << 32) + 1;
  expect_bad(&t, "dims[0] = 4294967297 is not 1 to 2^32", "dims[0] 2^32 + 1");
  /* 2^32 itself is allowed (with a stride that steps over it) */
  t = base_map(), t.dims[0] = UINT64_C(1) << 32, t.strides[1] = UINT64_C(1) << 33;
  expect_good(&t, "dims[0] 2^32");

  t = base_map(), t.strides[1] = 16392;
  expect_bad(&t, "strides[1] = 16392 bytes is not a multiple of 16", "stride 16392");
  t = base_map(), t.strides[1] = UINT64_C(1) << 40;
  expect_bad(&t, "strides[1] = 1099511627776 bytes is not below 2^40", "stride 2^40");
  t = base_map(), t.strides[1] = (UINT64_C(1) << 40) - 16;
  expect_good(&t, "stride 2^40 - 16");
  t = base_map(), t.strides[1] = 16368;
  expect_bad(&t,
             "strides[1] = 16368 bytes is below dims[0] * the element size = 8192 * 2: the "
             "dimensions overlap",
             "stride below a row");
  /* rank 3: the outer stride must step over dims[1] rows of strides[1] */
  t = base_map(), t.rank = 3;
  t.dims[0] = 64, t.dims[1] = 8, t.dims[2] = 4, t.strides[1] = 128, t.strides[2] = 1008;
  t.box[2] = 1;
  expect_bad(&t,
             "strides[2] = 1008 bytes is below dims[1] * its stride = 8 * 128: the dimensions "
             "overlap",
             "rank 3 overlap");
  t.strides[2] = 1024;
  expect_good(&t, "rank 3");
  /* padded rows are fine */
  t = base_map(), t.strides[1] = 16384 + 64;
  expect_good(&t, "padded rows");

  t = base_map(), t.box[1] = 0;
  expect_bad(&t, "box[1] = 0 is not 1 to 256", "box[1] 0");
  t = base_map(), t.box[1] = 257;
  expect_bad(&t, "box[1] = 257 is not 1 to 256", "box[1] 257");
  t = base_map(), t.box[1] = 256;
  expect_good(&t, "box[1] 256");
  t = base_map(), t.box[0] = 4, t.swizzle = 0;
  expect_bad(&t, "box[0] * 2 bytes = 8 is not a multiple of 16 bytes", "box[0] 8 bytes");
  t = base_map(), t.dtype = TC_F32, t.strides[1] = 8192 * 4, t.box[0] = 6, t.swizzle = 0;
  expect_bad(&t, "box[0] * 4 bytes = 24 is not a multiple of 16 bytes", "f32 box[0] 24 bytes");

  t = base_map(), t.swizzle = 16;
  expect_bad(&t, "swizzle 16 is not 0 (none), 32, 64 or 128 bytes", "swizzle 16");
  t = base_map(), t.box[0] = 136;
  expect_bad(&t, "box[0] * 2 bytes = 272 exceeds the 128B swizzle span", "272 > 128");
  t = base_map(), t.box[0] = 32, t.swizzle = 32;
  expect_bad(&t, "box[0] * 2 bytes = 64 exceeds the 32B swizzle span", "64 > 32");
  t = base_map(), t.box[0] = 32, t.swizzle = 64;
  expect_good(&t, "64B box, 64B swizzle");
  t = base_map(), t.box[0] = 136, t.swizzle = 0;
  expect_good(&t, "272B box without swizzle");

  /* the whole list: the first bad map, by index */
  tc_rt_tmap maps[2] = {base_map(), base_map()};
  maps[1].box[0] = 136;
  tc_str err;
  tc_str_init(&err);
  tc_status st = tc_tmap_check_all(maps, 2, 1, &err);
  TC_CHECK(st == TC_ERR_ARGUMENT &&
               strcmp(tc_str_cstr(&err),
                      "tensor map 1: box[0] * 2 bytes = 272 exceeds the 128B swizzle span") == 0,
           "check_all: %s: \"%s\"", tc_status_name(st), tc_str_cstr(&err));
  tc_str_clear(&err);
  TC_CHECK(tc_tmap_check_all(maps, 1, 1, &err) == TC_OK, "check_all of the good one: %s",
           tc_str_cstr(&err));
  TC_CHECK(tc_tmap_check_all(NULL, 0, 0, &err) == TC_OK, "no maps");
  tc_str_free(&err);

  /* the bytes a map spans */
  t = base_map();
  TC_CHECK_EQ_INT(tc_tmap_span_bytes(&t), 8192LL * 8192 * 2);
  t.rank = 1, t.box[1] = 0;
  TC_CHECK_EQ_INT(tc_tmap_span_bytes(&t), 8192LL * 2);
  /* rows of 100 bf16 padded to 208 bytes: the last row ends after its 200
   * bytes (2 * 208 + 200); one row of them spans its 200 bytes only */
  t = base_map();
  t.dims[0] = 100, t.dims[1] = 3, t.strides[1] = 208;
  TC_CHECK_EQ_INT(tc_tmap_span_bytes(&t), 2 * 208 + 200);
  t.dims[1] = 1;
  TC_CHECK_EQ_INT(tc_tmap_span_bytes(&t), 200);
}

/* ---- 2. the encode arguments --------------------------------------------- */

static void test_encode_args(void) {
  tc_rt_tmap t = base_map();
  tc_cu_tmap_args a;
  memset(&a, 0xab, sizeof a);
  tc_tmap_encode_args(&t, &a);
  TC_CHECK_EQ_INT(a.data_type, 9); /* CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 */
  TC_CHECK_EQ_INT(a.rank, 2);
  TC_CHECK_EQ_INT(a.dims[0], 8192);
  TC_CHECK_EQ_INT(a.dims[1], 8192);
  TC_CHECK_EQ_INT(a.strides[0], 16384); /* the one stride of a rank-2 map */
  TC_CHECK_EQ_INT(a.box[0], 64);
  TC_CHECK_EQ_INT(a.box[1], 64);
  TC_CHECK_EQ_INT(a.elem_strides[0], 1);
  TC_CHECK_EQ_INT(a.elem_strides[1], 1);
  TC_CHECK_EQ_INT(a.interleave, 0);   /* CU_TENSOR_MAP_INTERLEAVE_NONE */
  TC_CHECK_EQ_INT(a.swizzle, 3);      /* CU_TENSOR_MAP_SWIZZLE_128B */
  TC_CHECK_EQ_INT(a.l2_promotion, 2); /* CU_TENSOR_MAP_L2_PROMOTION_L2_128B */
  TC_CHECK_EQ_INT(a.oob_fill, 0);     /* CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE */
  /* unused entries are zero */
  TC_CHECK_EQ_INT(a.dims[2], 0);
  TC_CHECK_EQ_INT(a.strides[1], 0);
  TC_CHECK_EQ_INT(a.box[2], 0);

  /* rank 3: strides[] gets rank - 1 entries, shifted down by one */
  t.rank = 3, t.dims[2] = 4, t.strides[2] = 8192 * 16384, t.box[2] = 2;
  tc_tmap_encode_args(&t, &a);
  TC_CHECK_EQ_INT(a.strides[0], 16384);
  TC_CHECK_EQ_INT(a.strides[1], 8192LL * 16384);
  TC_CHECK_EQ_INT(a.box[2], 2);
  TC_CHECK_EQ_INT(a.elem_strides[2], 1);

  static const struct { tc_dtype dt; int cu; } dts[] = {
      {TC_F32, 7}, {TC_F16, 6}, {TC_BF16, 9}, {TC_I32, 3}, {TC_I8, 0}};
  for (size_t i = 0; i < sizeof dts / sizeof *dts; i++)
    TC_CHECK(tc_tmap_cu_dtype(dts[i].dt) == dts[i].cu, "%s -> %d, expected %d",
             tc_dtype_name(dts[i].dt), tc_tmap_cu_dtype(dts[i].dt), dts[i].cu);
  TC_CHECK_EQ_INT(tc_tmap_cu_dtype((tc_dtype)9), -1);
  static const int sw[4][2] = {{0, 0}, {32, 1}, {64, 2}, {128, 3}};
  for (int i = 0; i < 4; i++) {
    t = base_map();
    t.swizzle = sw[i][0];
    if (sw[i][0]) t.box[0] = (uint32_t)sw[i][0] / 2;
    tc_tmap_encode_args(&t, &a);
    TC_CHECK(a.swizzle == sw[i][1], "swizzle %d -> %d, expected %d", sw[i][0], a.swizzle,
             sw[i][1]);
  }
}

/* ---- 3. the values against cuda.h ----------------------------------------- */

static void test_cuda_h_values(void) {
  const char *hdr = "/usr/local/cuda/include/cuda.h";
  if (access(hdr, R_OK) != 0) TC_SKIP("%s is absent: cannot compare tilec's enum values", hdr);
  if (system("command -v cc >/dev/null 2>&1") != 0) TC_SKIP("no C compiler (cc) in PATH");
  char dir[] = "/tmp/tilec-tmap-XXXXXX";
  TC_REQUIRE(mkdtemp(dir) != NULL, "mkdtemp failed");
  char path[256], cmd[768];
  snprintf(path, sizeof path, "%s/check.c", dir);
  FILE *fp = fopen(path, "w");
  TC_REQUIRE(fp != NULL, "cannot write %s", path);
  static const struct { const char *cu; int tc; } vals[] = {
      {"CU_TENSOR_MAP_DATA_TYPE_UINT8", TC_CU_TMAP_DTYPE_UINT8},
      {"CU_TENSOR_MAP_DATA_TYPE_INT32", TC_CU_TMAP_DTYPE_INT32},
      {"CU_TENSOR_MAP_DATA_TYPE_FLOAT16", TC_CU_TMAP_DTYPE_FLOAT16},
      {"CU_TENSOR_MAP_DATA_TYPE_FLOAT32", TC_CU_TMAP_DTYPE_FLOAT32},
      {"CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", TC_CU_TMAP_DTYPE_BFLOAT16},
      {"CU_TENSOR_MAP_INTERLEAVE_NONE", TC_CU_TMAP_INTERLEAVE_NONE},
      {"CU_TENSOR_MAP_SWIZZLE_NONE", TC_CU_TMAP_SWIZZLE_NONE},
      {"CU_TENSOR_MAP_SWIZZLE_32B", TC_CU_TMAP_SWIZZLE_32B},
      {"CU_TENSOR_MAP_SWIZZLE_64B", TC_CU_TMAP_SWIZZLE_64B},
      {"CU_TENSOR_MAP_SWIZZLE_128B", TC_CU_TMAP_SWIZZLE_128B},
      {"CU_TENSOR_MAP_L2_PROMOTION_L2_128B", TC_CU_TMAP_L2_PROMOTION_128B},
      {"CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE", TC_CU_TMAP_OOB_FILL_NONE},
      {"CU_TENSOR_MAP_NUM_QWORDS * 8", TC_CU_TMAP_BYTES},
      {"sizeof(CUtensorMap)", TC_CU_TMAP_BYTES},
      {"_Alignof(CUtensorMap)", TC_CU_TMAP_ALIGN},
      {"CUDA_ERROR_INVALID_VALUE", 1}, /* cuda.c: encode errors -> TC_ERR_ARGUMENT */
      {"CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES", TC_CU_FUNC_ATTR_SHARED_SIZE},
      {"CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", TC_CU_FUNC_ATTR_MAX_DYN_SMEM},
  };
  fprintf(fp, "#include <cuda.h>\n");
  for (size_t i = 0; i < sizeof vals / sizeof *vals; i++)
    fprintf(fp, "_Static_assert(%s == %d, \"tilec's value for %s is %d\");\n", vals[i].cu,
            vals[i].tc, vals[i].cu, vals[i].tc);
  /* cuda.c's cuTensorMapEncodeTiled_fn passes the enums as int */
  fprintf(fp, "_Static_assert(sizeof(CUtensorMapSwizzle) == sizeof(int), \"enum size\");\n");
  fclose(fp);
  snprintf(cmd, sizeof cmd, "cc -std=c11 -fsyntax-only -I%s %s 2>&1", "/usr/local/cuda/include",
           path);
  FILE *p = popen(cmd, "r");
  char out[4096] = "";
  size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
  out[n] = 0;
  int rc = p ? pclose(p) : -1;
  TC_CHECK(rc == 0, "tilec's tensor-map constants differ from cuda.h's (%s):\n%s", cmd, out);
  unlink(path);
  rmdir(dir);
}

/* ---- 4. the launch path checks maps without a device ---------------------- */

static void test_cuda_run_checks(void) {
  uint16_t host[64 * 16] = {0};
  tc_rt_buffer buf = {host, sizeof host, 0};
  tc_rt_tmap t = {0};
  t.buffer = 0, t.dtype = TC_BF16, t.rank = 2;
  t.dims[0] = 64, t.dims[1] = 16, t.strides[1] = 128, t.box[0] = 64, t.box[1] = 16;
  t.swizzle = 128;
  tc_launch l = {{1, 1, 1}, {32, 1, 1}, 0, &t, 1};
  tc_str err;
  tc_str_init(&err);
  /* a rule broken: TC_ERR_ARGUMENT before anything needs a device */
  t.box[0] = 128;
  tc_status st = tc_cuda_run("not compiled", "k", "sm_90a", &buf, 1, &l, NULL, &err);
  TC_CHECK(st == TC_ERR_ARGUMENT &&
               strstr(tc_str_cstr(&err), "tensor map 0: box[0] * 2 bytes = 256 exceeds the 128B "
                                         "swizzle span"),
           "bad box: %s: %s", tc_status_name(st), tc_str_cstr(&err));
  /* a map larger than its buffer */
  t.box[0] = 64, t.dims[1] = 32;
  tc_str_clear(&err);
  st = tc_cuda_run("not compiled", "k", "sm_90a", &buf, 1, &l, NULL, &err);
  TC_CHECK(st == TC_ERR_ARGUMENT &&
               strstr(tc_str_cstr(&err), "tensor map 0: it spans 4096 bytes but buffer 0 of 'k' "
                                         "has 2048"),
           "map over the buffer: %s: %s", tc_status_name(st), tc_str_cstr(&err));
  /* a buffer index past the launch's buffers */
  t.dims[1] = 16, t.buffer = 1;
  tc_str_clear(&err);
  st = tc_cuda_run("not compiled", "k", "sm_90a", &buf, 1, &l, NULL, &err);
  TC_CHECK(st == TC_ERR_ARGUMENT && strstr(tc_str_cstr(&err), "tensor map 0: buffer index 1"),
           "buffer 1: %s: %s", tc_status_name(st), tc_str_cstr(&err));
  t.buffer = 0;
  tc_str_clear(&err);
  int gpu = tc_cuda_available(&err);
  tc_str_free(&err);
  if (gpu) TC_SKIP("a CUDA device exists: the good map's launch is test_ldst_set_maps's");
  tc_str_init(&err);
  st = tc_cuda_run("not compiled", "k", "sm_90a", &buf, 1, &l, NULL, &err);
  TC_CHECK(st == TC_ERR_NO_DEVICE && strstr(tc_str_cstr(&err), "no CUDA device"),
           "good map: %s: %s", tc_status_name(st), tc_str_cstr(&err));
  tc_str_free(&err);
}

/* ---- 5. LdStMatrixSet's maps --------------------------------------------- */

/* The maps of LdStMatrixSet at M x N (cta 128 x 256, swizzle sw), derived by
 * hand: tv0 (param 0) and tv1 (param 1) are bf16 [M, N] row-major, so
 * each map is dims {N, M} (columns innermost), a row stride of N * 2
 * bytes; the box is one swizzle span of columns (sw / 2 elements) by 64
 * rows (a warp group's tile is 64 rows: the TIDy loop issues per row
 * group, the serial loops over the 256 columns one box per span). */
static void check_ldst_set_maps(const tc_kernel *k, int64_t M, int64_t N, int sw, const char *label) {
  const tc_rt_tmap *maps = NULL;
  const char *why = NULL;
  int n = tc_kernel_tensor_maps(k, &maps, &why);
  TC_REQUIRE(n == 2, "%s: %d tensor maps (%s), expected 2", label, n, why ? why : "");
  TC_CHECK_STR(why, "");
  for (int i = 0; i < 2; i++) {
    const tc_rt_tmap *t = &maps[i];
    TC_CHECK(t->buffer == i, "%s: map %d is of buffer %d", label, i, t->buffer);
    TC_CHECK(t->dtype == TC_BF16 && t->rank == 2, "%s: map %d: %s rank %d", label, i,
             tc_dtype_name(t->dtype), t->rank);
    TC_CHECK(t->dims[0] == (uint64_t)N && t->dims[1] == (uint64_t)M,
             "%s: map %d: dims {%llu, %llu}, expected {%lld, %lld}", label, i,
             (unsigned long long)t->dims[0], (unsigned long long)t->dims[1], (long long)N,
             (long long)M);
    TC_CHECK(t->strides[1] == (uint64_t)N * 2, "%s: map %d: row stride %llu, expected %lld",
             label, i, (unsigned long long)t->strides[1], (long long)N * 2);
    TC_CHECK(t->box[0] == (uint32_t)sw / 2 && t->box[1] == 64,
             "%s: map %d: box {%u, %u}, expected {%d, 64}", label, i, t->box[0], t->box[1],
             sw / 2);
    TC_CHECK(t->swizzle == sw, "%s: map %d: swizzle %d, expected %d", label, i, t->swizzle, sw);
  }
  /* the source's copies say the same box */
  char box[96];
  snprintf(box, sizeof box, "of 64 x %d, %dB swizzle */", sw / 2, sw);
  TC_CHECK(strstr(tc_kernel_source(k), box) != NULL, "%s: the source has no box \"%s\"", label,
           box);
  tc_str err;
  tc_str_init(&err);
  TC_CHECK(tc_tmap_check_all(maps, n, tc_kernel_nparams(k), &err) == TC_OK, "%s: %s", label,
           tc_str_cstr(&err));
  tc_str_free(&err);
}

static void test_ldst_set_maps(void) {
  static const int sws[3] = {32, 64, 128};
  for (int a = 0; a < 3; a++) {
    const int64_t M = 256, N = 512;
    ldst_set s = build((tc_tma_swizzle)sws[a], 128, 256, M, N);
    TC_REQUIRE(tc_test_failed_checks == 0, "building the fusion failed");
    char label[64];
    snprintf(label, sizeof label, "LdStMatrixSet, %dB swizzle", sws[a]);
    tc_compile_options o = {TC_TARGET_CUDA, "sm_90a", "ldst_tmap"};
    tc_status st = TC_OK;
    tc_kernel *k = tc_compile(s.f, &o, &st);
    TC_REQUIRE(k != NULL, "%s: compile: %s", label, tc_fusion_error(s.f));
    check_ldst_set_maps(k, M, N, sws[a], label);

    /* a launch: here it ends at "no CUDA device"; with a GPU it copies */
    size_t bytes = (size_t)(M * N) * 2;
    uint16_t *in = malloc(bytes), *out = malloc(bytes);
    for (int64_t e = 0; e < M * N; e++) in[e] = (uint16_t)(e * 7 + 1), out[e] = 0xffff;
    void *args[2] = {in, out};
    st = tc_kernel_run(k, args, NULL, NULL);
    tc_str why;
    tc_str_init(&why);
    if (!tc_cuda_available(&why)) {
      TC_CHECK(st == TC_ERR_NO_DEVICE && strstr(tc_kernel_error(k), "no CUDA device"),
               "%s: run without a GPU: %s: %s", label, tc_status_name(st), tc_kernel_error(k));
    } else {
      TC_CHECK(st == TC_OK, "%s: run: %s: %s", label, tc_status_name(st), tc_kernel_error(k));
      TC_CHECK(st != TC_OK || memcmp(in, out, bytes) == 0, "%s: output != input", label);
    }
    tc_str_free(&why);
    free(in), free(out);
    tc_kernel_free(k);

    /* the same kernel from the cache has the same maps */
    k = tc_compile(s.f, &o, &st);
    TC_REQUIRE(k != NULL, "%s: second compile: %s", label, tc_fusion_error(s.f));
    /* tests/run.sh gives every program a fresh cache directory */
    const char *dir = getenv("TILEC_CACHE_DIR"), *off = getenv("TILEC_CACHE");
    if (dir && *dir && !(off && (!strcmp(off, "0") || !strcmp(off, "off"))))
      TC_CHECK(tc_kernel_from_cache(k), "%s: the second compile missed the cache", label);
    if (tc_kernel_from_cache(k)) {
      char l2[96];
      snprintf(l2, sizeof l2, "%s (from the cache)", label);
      check_ldst_set_maps(k, M, N, sws[a], l2);
    }
    tc_kernel_free(k);

    /* no maps where the copies are element copies */
    o.arch = "sm_80";
    tc_fusion_free(s.f);
    s = build2((tc_tma_swizzle)sws[a], 128, 256, M, N, TC_LDST_DEFAULT, TC_LDST_DEFAULT);
    k = tc_compile(s.f, &o, &st);
    TC_CHECK(k != NULL, "%s: sm_80 compile: %s", label, tc_fusion_error(s.f));
    if (k) TC_CHECK_EQ_INT(tc_kernel_tensor_maps(k, NULL, NULL), 0);
    tc_kernel_free(k);
    o.target = TC_TARGET_OPENCL, o.arch = NULL;
    k = tc_compile(s.f, &o, &st);
    TC_CHECK(k != NULL, "%s: OpenCL compile: %s", label, tc_fusion_error(s.f));
    if (k) TC_CHECK_EQ_INT(tc_kernel_tensor_maps(k, NULL, NULL), 0);
    tc_kernel_free(k);
    tc_fusion_free(s.f);
  }
}

/* ---- 6. the dynamic shared memory limit ---------------------------------- */

static void test_dyn_smem_limit(void) {
  const int optin = 232448; /* sm_90's opt-in shared memory per block */
  static const struct {
    size_t dyn;
    int stat, cur;
    long want;
  } cases[] = {
      {0, 0, 49152, 0},
      {40960, 0, 49152, 0},           /* fits the default 48 KiB */
      {49152, 0, 49152, 0},           /* exactly the default */
      {49152, 1024, 48128, 49152},    /* 1 KiB static: the default is 47 KiB */
      {48129, 1024, 48128, 48129},
      {48128, 1024, 48128, 0},
      {131072, 1024, 48128, 131072},  /* LdStMatrixSet for sm_90a: 128 KiB */
      {197632, 1024, 48128, 197632},  /* the Hopper GEMM tma:256,128,4 */
      {197632, 1024, 197632, 0},      /* already raised by an earlier launch */
      {231424, 1024, 48128, 231424},  /* static + dynamic = the opt-in limit */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    tc_str err;
    tc_str_init(&err);
    long got = tc_cuda_dyn_smem_limit(cases[i].dyn, cases[i].stat, cases[i].cur, optin, &err);
    TC_CHECK(got == cases[i].want, "dyn %zu, static %d, limit %d: %ld, expected %ld (%s)",
             cases[i].dyn, cases[i].stat, cases[i].cur, got, cases[i].want, tc_str_cstr(&err));
    tc_str_free(&err);
  }
  /* over the opt-in limit only with the static bytes counted */
  tc_str err;
  tc_str_init(&err);
  long got = tc_cuda_dyn_smem_limit(232000, 1024, 48128, optin, &err);
  TC_CHECK(got == -1 && strstr(tc_str_cstr(&err), "232000 bytes of dynamic shared memory and "
                                                  "1024 of static (the compiled kernel's) exceed "
                                                  "the 232448 bytes"),
           "over the opt-in limit: %ld: %s", got, tc_str_cstr(&err));
  tc_str_clear(&err);
  TC_CHECK_EQ_INT(tc_cuda_dyn_smem_limit(232000, 1024, 48128, 0, &err), 232000); /* unknown */
  TC_CHECK(tc_cuda_dyn_smem_limit((size_t)1 << 32, 0, 48128, optin, &err) == -1 &&
               strstr(tc_str_cstr(&err), "is too large"),
           "4 GiB: %s", tc_str_cstr(&err));
  tc_str_free(&err);
}

int main(void) {
  TC_RUN(test_check_rules);
  TC_RUN(test_encode_args);
  TC_RUN(test_cuda_h_values);
  TC_RUN(test_cuda_run_checks);
  TC_RUN(test_ldst_set_maps);
  TC_RUN(test_dyn_smem_limit);
  TC_MAIN_END();
}
