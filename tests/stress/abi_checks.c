/* tests/stress/abi_checks.c: the C ABI's checks of what callers pass
 * (include/tsaot.h), through the generated wrappers of the small MLP
 * fixture compiled by the build's tsaot:
 *
 *   abi_checks TSAOT FIXTURES WORKDIR
 *
 * Every bad pointer, count or tensor (inputs of run and run_static, outputs
 * of both, the arena) is refused with its return code and a reason in
 * last_error, and a good call after them still gives PyTorch's output. */
#include "so_model.h"
#include "test.h"

#include "npy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static so_model M;
static size_t asize;
static uint8_t *arena;
static float out_buf[64];
static DLTensor good_out; /* the output spec's shape over out_buf */

/* rc and a last_error containing `why`. */
static bool check_refused(int rc, int want, const char *why, const char *file, int line) {
  const char *err = M.f.last_error();
  bool ok = rc == want && strstr(err, why) != NULL;
  if (!ts_test_check(ok, file, line, why))
    fprintf(stderr, "  rc %d (want %d), last_error \"%s\"\n", rc, want, err);
  return ok;
}
#define REFUSED(rc, want, why) check_refused((rc), (want), (why), __FILE__, __LINE__)

static int run_in(const DLTensor *in, int nin) {
  DLManagedTensor *o[4];
  int n = 0;
  int rc = M.f.run(in, nin, o, 4, &n);
  for (int i = 0; i < n; i++)
    o[i]->deleter(o[i]);
  return rc;
}

static int static_in(const DLTensor *in, int nin) {
  DLTensor o = good_out;
  return M.f.run_static(in, nin, &o, 1, arena, asize);
}

/* An input tensor changed by `edit`, refused by run and by run_static. */
static void check_input(const char *what, void (*edit)(DLTensor *), const char *why) {
  DLTensor t = M.in[0];
  int64_t shape[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS];
  memcpy(shape, t.shape, (size_t)t.ndim * sizeof *shape);
  strides[t.ndim - 1] = 1;
  for (int d = t.ndim - 2; d >= 0; d--)
    strides[d] = strides[d + 1] * shape[d + 1];
  t.shape = shape;
  t.strides = strides;
  edit(&t);
  printf("input: %s\n", what);
  REFUSED(run_in(&t, 1), TSAOT_E_INPUT, why);
  REFUSED(static_in(&t, 1), TSAOT_E_INPUT, why);
}

static void e_data_null(DLTensor *t) { t->data = NULL; }
static void e_device(DLTensor *t) { t->device.device_type = kDLCUDA; }
static void e_lanes(DLTensor *t) { t->dtype.lanes = 4; }
static void e_bits(DLTensor *t) { t->dtype.bits = 24; }
static void e_code(DLTensor *t) { t->dtype.code = 5; /* kDLComplex */ }
static void e_ndim_neg(DLTensor *t) { t->ndim = -1; }
static void e_ndim_big(DLTensor *t) { t->ndim = 65; }
static void e_shape_null(DLTensor *t) { t->shape = NULL; }
static void e_size_neg(DLTensor *t) { t->shape[0] = -2; }
static void e_stride_neg(DLTensor *t) { t->strides[0] = -1; }
static void e_stride_big(DLTensor *t) { t->strides[0] = INT64_MAX / 2; }
static void e_sizes_big(DLTensor *t) {
  t->shape[0] = INT64_MAX / 2;
  t->strides[0] = 0; /* no byte past the data, but the element count overflows */
  t->shape[1] = 4;
  t->strides[1] = 0;
}
static void e_offset_big(DLTensor *t) { t->byte_offset = UINT64_MAX - 8; }
static void e_misaligned(DLTensor *t) { t->byte_offset = 1; }

static void test_inputs(void) {
  printf("input: NULL array\n");
  REFUSED(run_in(NULL, 1), TSAOT_E_INPUT, "NULL");
  REFUSED(static_in(NULL, 1), TSAOT_E_INPUT, "NULL");
  printf("input: counts\n");
  REFUSED(run_in(M.in, 0), TSAOT_E_INPUT, "takes 1 inputs, 0 given");
  REFUSED(run_in(M.in, -1), TSAOT_E_INPUT, "takes 1 inputs, -1 given");
  REFUSED(static_in(M.in, 2), TSAOT_E_INPUT, "takes 1 inputs, 2 given");
  check_input("data NULL", e_data_null, "data is NULL");
  check_input("device", e_device, "device type 2");
  check_input("lanes", e_lanes, "4 lanes");
  check_input("bits", e_bits, "24 bits");
  check_input("dtype code", e_code, "code 5");
  check_input("ndim -1", e_ndim_neg, "-1 dimensions");
  check_input("ndim 65", e_ndim_big, "65 dimensions");
  check_input("shape NULL", e_shape_null, "without a shape");
  check_input("negative size", e_size_neg, "negative size (-2)");
  check_input("negative stride", e_stride_neg, "negative stride (-1)");
  check_input("stride overflow", e_stride_big, "past 2^63 bytes");
  check_input("element count overflow", e_sizes_big, "past 2^63 bytes");
  check_input("byte_offset overflow", e_offset_big, "byte_offset");
  check_input("misaligned", e_misaligned, "aligned");
}

/* An output tensor changed by `edit`, refused by run_static. */
static void check_output(const char *what, void (*edit)(DLTensor *), const char *why) {
  DLTensor o = good_out;
  int64_t shape[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS] = {0};
  memcpy(shape, o.shape, (size_t)o.ndim * sizeof *shape);
  o.shape = shape;
  o.strides = strides;
  strides[o.ndim - 1] = 1;
  for (int d = o.ndim - 2; d >= 0; d--)
    strides[d] = strides[d + 1] * shape[d + 1];
  edit(&o);
  printf("output: %s\n", what);
  REFUSED(M.f.run_static(M.in, 1, &o, 1, arena, asize), TSAOT_E_OUTPUT, why);
}

static void e_dtype64(DLTensor *t) { t->dtype.bits = 64; }
static void e_shape_other(DLTensor *t) { t->shape[0] += 1; }

static void test_outputs(void) {
  check_output("data NULL", e_data_null, "output 0: a tensor of");
  check_output("device", e_device, "output 0: a tensor on device type 2");
  check_output("negative stride", e_stride_neg, "output 0: a negative stride");
  check_output("shape NULL", e_shape_null, "without a shape");
  check_output("byte_offset overflow", e_offset_big, "byte_offset");
  check_output("another dtype", e_dtype64, "the caller's tensor f64");
  check_output("another shape", e_shape_other, "the caller's tensor f32");
  DLTensor o[2] = {good_out, good_out};
  printf("output: counts and pointers\n");
  REFUSED(M.f.run_static(M.in, 1, NULL, 1, arena, asize), TSAOT_E_OUTPUT, "NULL");
  REFUSED(M.f.run_static(M.in, 1, o, -1, arena, asize), TSAOT_E_OUTPUT, "-1 output tensors");
  REFUSED(M.f.run_static(M.in, 1, o, 2, arena, asize), TSAOT_E_OUTPUT, "gave 1 outputs, 2 tensors given");
  REFUSED(M.f.run_static(M.in, 1, o, 0, arena, asize), TSAOT_E_OUTPUT, "gave 1 outputs, 0 tensors given");
  DLManagedTensor *mo[2];
  int n = 7;
  REFUSED(M.f.run(M.in, 1, NULL, 2, &n), TSAOT_E_OUTPUT, "outputs array is NULL");
  TS_CHECK_INTEQ(n, 0);
  REFUSED(M.f.run(M.in, 1, mo, 2, NULL), TSAOT_E_OUTPUT, "noutputs is NULL");
  REFUSED(M.f.run(M.in, 1, mo, -1, &n), TSAOT_E_OUTPUT, "max_outputs is negative");
  REFUSED(M.f.run(M.in, 1, mo, 0, &n), TSAOT_E_OUTPUT, "gave 1 outputs, room for 0");
}

static void test_arena(void) {
  printf("arena\n");
  DLTensor o = good_out;
  REFUSED(M.f.run_static(M.in, 1, &o, 1, NULL, asize), TSAOT_E_ARENA, "NULL");
  REFUSED(M.f.run_static(M.in, 1, &o, 1, arena + 8, asize - 64), TSAOT_E_ARENA, "aligned");
  REFUSED(M.f.run_static(M.in, 1, &o, 1, arena, asize - 1), TSAOT_E_ARENA, "the model needs");
}

/* After all that, good calls give PyTorch's output (out0.npy); an input
 * through a byte_offset and explicit strides is the same input. */
static void test_good(const char *fixture) {
  char path[1100];
  snprintf(path, sizeof path, "%s/out0.npy", fixture);
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  ts_rt_tensor *want = ts_rt_npy_read(&ctx, path);
  ts_rt_ctx_free(&ctx);
  if (!TS_CHECK(want && want->dtype == TS_DT_FLOAT32 && ts_rt_tensor_numel(want) <= 64))
    return;
  const float *w = ts_rt_tensor_data(want);
  int64_t n = ts_rt_tensor_numel(want);
  DLTensor in = M.in[0];
  int64_t strides[TS_RT_MAX_DIMS];
  strides[in.ndim - 1] = 1;
  for (int d = in.ndim - 2; d >= 0; d--)
    strides[d] = strides[d + 1] * in.shape[d + 1];
  in.strides = strides;
  in.data = (char *)in.data - 64;
  in.byte_offset = 64;
  for (int pass = 0; pass < 2; pass++) {
    memset(out_buf, 0, sizeof out_buf);
    DLTensor o = good_out;
    int rc = M.f.run_static(pass ? &in : M.in, 1, &o, 1, arena, asize);
    if (!TS_CHECK_INTEQ(rc, TSAOT_OK))
      fprintf(stderr, "  %s\n", M.f.last_error());
    TS_CHECK_STREQ(M.f.last_error(), "");
    bool close = true;
    for (int64_t i = 0; i < n; i++)
      close = close && fabsf(out_buf[i] - w[i]) <= 1e-5f + 1e-4f * fabsf(w[i]);
    TS_CHECK(close);
  }
  DLManagedTensor *mo[2];
  int nout = 0;
  TS_CHECK_INTEQ(M.f.run(&in, 1, mo, 2, &nout), TSAOT_OK);
  TS_CHECK_INTEQ(nout, 1);
  for (int i = 0; i < nout; i++)
    mo[i]->deleter(mo[i]);
  ts_rt_tensor_release(want);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: abi_checks TSAOT FIXTURES WORKDIR\n");
    return 2;
  }
  char fixture[1024];
  snprintf(fixture, sizeof fixture, "%s/small_mlp", argv[2]);
  if (!TS_CHECK(so_model_open(&M, argv[1], fixture, argv[3], "abi_mlp", true, "--no-fallback")))
    return ts_test_finish();
  asize = M.f.arena_size();
  arena = aligned_alloc(TSAOT_ARENA_ALIGN, (asize + 64 + 63) & ~(size_t)63);
  /* the output: the reference run's dtype and shape over out_buf */
  DLManagedTensor *ref[2];
  int n = 0;
  if (TS_CHECK(arena) && TS_CHECK_INTEQ(M.f.run(M.in, 1, ref, 2, &n), TSAOT_OK) && TS_CHECK_INTEQ(n, 1)) {
    static int64_t shape[TS_RT_MAX_DIMS];
    good_out = ref[0]->dl_tensor;
    memcpy(shape, good_out.shape, (size_t)good_out.ndim * sizeof *shape);
    good_out.shape = shape;
    good_out.strides = NULL;
    good_out.byte_offset = 0;
    good_out.data = out_buf;
    ref[0]->deleter(ref[0]);
    if (TS_CHECK(good_out.ndim == 2 && M.in[0].ndim == 2 && good_out.shape[0] * good_out.shape[1] <= 64)) {
      test_inputs();
      test_outputs();
      test_arena();
      test_good(fixture);
    }
  }
  free(arena);
  so_model_close(&M);
  return ts_test_finish();
}
