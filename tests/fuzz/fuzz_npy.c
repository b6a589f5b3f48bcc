/* tests/fuzz/fuzz_npy.c: the .npy reader over hostile bytes. */
#include "fuzz.h"
#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ts_rt_ctx c;
  ts_rt_ctx_init(&c, 1);
  ts_rt_tensor *t = ts_rt_npy_parse(&c, data, size, "fuzz.npy");
  if (t)
    ts_rt_tensor_release(t);
  ts_rt_ctx_free(&c);
  return 0;
}
