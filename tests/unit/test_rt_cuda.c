/* tests/unit/test_rt_cuda.c: runtime/hosted/cuda.c, the CUDA driver opened at run
 * time.
 *
 *   - no driver (TSAOT_LIBCUDA naming a missing file): the clear error;
 *   - a library that is not the driver (libm): which entry point it lacks;
 *   - the stand-in driver (tests/cuda/fake_libcuda.c): cuInit failing as
 *     with no GPU; then every wrapper: memory round trip, PTX module and
 *     kernel look-up, a launch with the kernel table's geometry, bad
 *     geometry refused, event timing, the driver's error names and texts;
 *   - the real driver (libcuda.so.1) when the host has one: device 0, a
 *     memory round trip; skipped with a message otherwise. */
#include "cuda.h"
#include "test.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TSAOT_FAKE_LIBCUDA
#define TSAOT_FAKE_LIBCUDA ""
#endif

static void test_no_driver(void) {
  ts_rt_cuda c;
  ts_buf err = {0};
  setenv("TSAOT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  TS_CHECK(!ts_rt_cuda_open(&c, 0, &err));
  TS_CHECK_HAS(err.data, "CUDA driver /nonexistent/libcuda.so.1 not found (dlopen: ");
  TS_CHECK_HAS(err.data, "): this host has no NVIDIA driver");
  TS_CHECK(c.lib == NULL && c.api == NULL);
  ts_rt_cuda_close(&c); /* closing what failed to open is harmless */
  ts_buf_free(&err);

  setenv("TSAOT_LIBCUDA", "libm.so.6", 1);
  TS_CHECK(!ts_rt_cuda_open(&c, 0, &err));
  TS_CHECK_HAS(err.data, "CUDA driver libm.so.6 lacks cuInit");
  ts_buf_free(&err);
}

static const char ptx[] = "//\n.version 7.8\n.target sm_90\n.address_size 64\n\n"
                          ".visible .entry tsaot_fg0(\n\t.param .u64 p0\n)\n{\n\tret;\n}\n";

static void test_fake_driver(void) {
  if (!*TSAOT_FAKE_LIBCUDA) {
    printf("skipped: the stand-in driver was not built\n");
    return;
  }
  ts_rt_cuda c;
  ts_buf err = {0};
  setenv("TSAOT_LIBCUDA", TSAOT_FAKE_LIBCUDA, 1);
  setenv("FAKE_CUDA_NO_DEVICE", "1", 1);
  TS_CHECK(!ts_rt_cuda_open(&c, 0, &err));
  TS_CHECK_HAS(err.data, "cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected");
  ts_buf_free(&err);
  unsetenv("FAKE_CUDA_NO_DEVICE");
  TS_CHECK(!ts_rt_cuda_open(&c, 3, &err));
  TS_CHECK_HAS(err.data, "CUDA device 3: CUDA_ERROR_INVALID_DEVICE: invalid device ordinal");
  ts_buf_free(&err);

  if (!TS_CHECK(ts_rt_cuda_open(&c, 0, &err))) {
    fprintf(stderr, "%s\n", err.data ? err.data : "");
    ts_buf_free(&err);
    return;
  }
  /* memory: host -> device -> device -> host */
  float in[5] = {1.5f, -2, 0, 3.25f, 1e-3f}, out[5] = {0};
  ts_cu_deviceptr a = 0, b = 0;
  TS_CHECK(ts_rt_cuda_alloc(&c, sizeof in, &a, &err) && ts_rt_cuda_alloc(&c, sizeof in, &b, &err));
  TS_CHECK(ts_rt_cuda_to_device(&c, a, in, sizeof in, &err));
  TS_CHECK(ts_rt_cuda_copy(&c, b, a, sizeof in, &err));
  TS_CHECK(ts_rt_cuda_to_host(&c, out, b, sizeof out, &err));
  TS_CHECK(memcmp(in, out, sizeof in) == 0);

  /* modules and kernels */
  ts_cu_handle mod = NULL, fn = NULL;
  TS_CHECK(!ts_rt_cuda_module_load(&c, "not ptx", &mod, &err));
  TS_CHECK_HAS(err.data, "cuModuleLoadData: CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed");
  ts_buf_free(&err);
  TS_CHECK(ts_rt_cuda_module_load(&c, ptx, &mod, &err));
  TS_CHECK(!ts_rt_cuda_function(&c, mod, "tsaot_fg7", &fn, &err));
  TS_CHECK_HAS(err.data, "cuModuleGetFunction(tsaot_fg7): CUDA_ERROR_NOT_FOUND: named symbol not found");
  ts_buf_free(&err);
  if (TS_CHECK(ts_rt_cuda_function(&c, mod, "tsaot_fg0", &fn, &err))) {
    ts_rt_cuda_kernel k = {.name = "tsaot_fg0", .nelems = 5, .block = 128, .grid = 1, .nparams = 1};
    void *args[1] = {&a};
    TS_CHECK(ts_rt_cuda_launch(&c, fn, &k, args, &err));
    unsigned (*last)(unsigned *, unsigned *);
    void *p = dlsym(c.lib, "fake_cuda_last_launch");
    if (TS_CHECK(p != NULL)) {
      memcpy(&last, &p, sizeof p);
      unsigned grid = 0, block = 0;
      TS_CHECK_INTEQ(last(&grid, &block), 1);
      TS_CHECK_INTEQ(grid, 1);
      TS_CHECK_INTEQ(block, 128);
    }
    k.block = 2048; /* more than a block holds */
    TS_CHECK(!ts_rt_cuda_launch(&c, fn, &k, args, &err));
    TS_CHECK_HAS(err.data, "bad geometry");
    ts_buf_free(&err);
  }
  TS_CHECK(ts_rt_cuda_sync(&c, &err));
  TS_CHECK(ts_rt_cuda_module_unload(&c, mod, &err));

  /* events */
  ts_cu_handle e0, e1;
  if (TS_CHECK(ts_rt_cuda_event_pair(&c, &e0, &e1, &err))) {
    float ms = -1;
    TS_CHECK(ts_rt_cuda_event_record(&c, e0, &err) && ts_rt_cuda_event_record(&c, e1, &err));
    TS_CHECK(ts_rt_cuda_event_ms(&c, e0, e1, &ms, &err));
    TS_CHECK(ms >= 0);
    ts_rt_cuda_event_free(&c, e0);
    ts_rt_cuda_event_free(&c, e1);
  }
  TS_CHECK(ts_rt_cuda_free(&c, a, &err) && ts_rt_cuda_free(&c, b, &err));
  TS_CHECK(err.data == NULL);
  ts_rt_cuda_close(&c);
  TS_CHECK(c.lib == NULL);
  ts_buf_free(&err);
}

static void test_real_driver(void) {
  unsetenv("TSAOT_LIBCUDA");
  ts_rt_cuda c;
  ts_buf err = {0};
  if (!ts_rt_cuda_open(&c, 0, &err)) {
    printf("skipped: the real driver: %s\n", err.data ? err.data : "?");
    ts_buf_free(&err);
    return;
  }
  double in[3] = {1, 2.5, -7}, out[3] = {0};
  ts_cu_deviceptr p = 0;
  TS_CHECK(ts_rt_cuda_alloc(&c, sizeof in, &p, &err));
  TS_CHECK(ts_rt_cuda_to_device(&c, p, in, sizeof in, &err) && ts_rt_cuda_to_host(&c, out, p, sizeof out, &err));
  TS_CHECK(memcmp(in, out, sizeof in) == 0);
  TS_CHECK(ts_rt_cuda_free(&c, p, &err));
  if (err.data)
    fprintf(stderr, "%s\n", err.data);
  ts_rt_cuda_close(&c);
  ts_buf_free(&err);
}

int main(void) {
  test_no_driver();
  test_fake_driver();
  test_real_driver();
  return ts_test_finish();
}
