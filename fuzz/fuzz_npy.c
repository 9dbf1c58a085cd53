/* fuzz_npy.c - libFuzzer harness for the .npy reader of `tilec driver`
 * (tools/tensor_file.c).  The input is a file: tf_npy_parse on its bytes
 * must succeed with a header inside the input or fail with a message;
 * tf_read of it as an .npy file (with the shape its header gives when
 * that is small, else a fixed one; f32 or f16 from the last byte's low
 * bit) must succeed or fail with a message; a tensor it reads must write
 * (tf_write) and read back to the same elements. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tilec/tilec.h"
#include "../tools/tensor_file.h"
#include "fuzz_util.h"

static char dir[] = "/tmp/tilec-fuzz-npy-XXXXXX";
static char in_path[64], out_path[64];

static void cleanup(void) {
  unlink(in_path);
  unlink(out_path);
  rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  if (!mkdtemp(dir)) abort();
  snprintf(in_path, sizeof in_path, "%s/in.npy", dir);
  snprintf(out_path, sizeof out_path, "%s/out.npy", dir);
  atexit(cleanup);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tf_npy h;
  TC_STR_LOCAL(err);
  tf_status st = tf_npy_parse(data, size, &h, &err);
  FZ_ASSERT(st == TF_OK || st == TF_MISMATCH, "tf_npy_parse returned %d", (int)st);
  FZ_ASSERT(st == TF_OK || err.len > 0, "tf_npy_parse failed without a message");
  int64_t dims[TF_MAX_RANK] = {2, 3};
  int rank = 2;
  if (st == TF_OK) {
    FZ_ASSERT(h.data_offset <= size, "header ends at %zu of %zu bytes", h.data_offset, size);
    FZ_ASSERT(h.rank >= 0 && h.rank <= TF_MAX_RANK, "rank %d", h.rank);
    int64_t count = 1;
    for (int i = 0; i < h.rank && count >= 0; i++)
      count = h.dims[i] > 4096 || count * h.dims[i] > 4096 ? -1 : count * h.dims[i];
    if (count >= 0) {
      rank = h.rank;
      memcpy(dims, h.dims, sizeof dims);
    }
  }
  FILE *f = fopen(in_path, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) abort();
  tc_dtype dt = size && (data[size - 1] & 1) ? TC_F16 : TC_F32;
  int64_t count = 1;
  for (int i = 0; i < rank; i++) count *= dims[i];
  size_t bytes = (size_t)count * tc_dtype_size(dt);
  unsigned char *buf = malloc(bytes ? bytes : 1), *back = malloc(bytes ? bytes : 1);
  if (!buf || !back) abort();
  tc_str_clear(&err);
  int converted = 0;
  st = tf_read(in_path, dt, rank, dims, buf, &converted, &err);
  FZ_ASSERT(st == TF_OK || err.len > 0, "tf_read failed (%d) without a message", (int)st);
  if (st == TF_OK) {
    tc_str_clear(&err);
    FZ_ASSERT(tf_write(out_path, dt, rank, dims, buf, &err) == TF_OK, "tf_write: %s",
              tc_str_cstr(&err));
    FZ_ASSERT(tf_read(out_path, dt, rank, dims, back, &converted, &err) == TF_OK,
              "a written tensor does not read back: %s", tc_str_cstr(&err));
    FZ_ASSERT(!converted && memcmp(buf, back, bytes) == 0, "a tensor read back differs");
  }
  free(buf);
  free(back);
  return 0;
}
