/* tests/unit/test_rt_layer_norm.c: aten::layer_norm in float32
 * (runtime/kernels/norm.c: row statistics summed in 16 float lanes), over
 * rows shorter than the lanes, of exactly 16, and longer with a tail that
 * is not a multiple of them; with and without weight and bias; rows with a
 * mean of 100 and a standard deviation of 1 (the centring), at 1 and 2
 * threads; and the argument errors, whose messages are made only then.
 * Expected values are PyTorch 1.13's, in
 * tests/fixtures/composite/layer_norm.npy, made by
 *   /usr/bin/python3 tests/fixtures/make_layer_norm_cases.py */
#include <string.h>

#include "composite_cases.h"
#include "tensor_ops.h"

/* the fixture's cases, in order (make_layer_norm_cases.py's CASES) */
static const struct {
  int64_t R, S;
  bool affine;
} cases[] = {{3, 5, true}, {2, 16, false}, {3, 37, true}, {2, 100, true}, {2, 1000, false}, {1, 1027, true}};

static ts_iv ints1(int64_t v) {
  ts_rt_list *l = ts_rt_list_new(&ctx, NULL, 1);
  ts_rt_list_append(&ctx, l, ts_iv_int(v));
  return (ts_iv){.u.l = l, .tag = TS_IV_LIST};
}

/* layer_norm(x, [S], w, b, 1e-5) (w, b NULL: none); the result, or NULL
 * with the error left in ctx. */
static ts_rt_tensor *run(ts_rt_tensor *x, int64_t S, ts_rt_tensor *w, ts_rt_tensor *b) {
  ts_rt_kernel_fn fn = ts_rt_kernel_by_name("aten::layer_norm");
  if (!TS_CHECK(fn != NULL)) return NULL;
  ts_iv in[6] = {ts_iv_tensor(x), ints1(S), w ? ts_iv_tensor(w) : ts_iv_none(), b ? ts_iv_tensor(b) : ts_iv_none(),
                 ts_iv_double(1e-5), ts_iv_bool(true)};
  ts_iv out[1] = {ts_iv_none()};
  ts_rt_call call = {.in = in, .nin = 6, .out = out, .nout = 1};
  ts_rt_clear_error(&ctx);
  bool ok = fn(&ctx, &call);
  ts_iv_release(in[1]);
  return ok ? (ts_rt_tensor *)out[0].u.o : NULL;
}

/* Wrong normalized_shape and weight: PyTorch's messages. */
static void test_errors(void) {
  ts_rt_tensor *x = ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 2, (int64_t[]){2, 3}, true);
  ts_rt_tensor *w = ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 1, (int64_t[]){4}, true);
  if (!TS_CHECK(x && w)) return;
  TS_CHECK(run(x, 4, NULL, NULL) == NULL);
  TS_CHECK_STREQ(ctx.err.data,
                 "Given normalized_shape=[4], expected input with shape [*, 4], but got input of size[2, 3]");
  TS_CHECK(run(x, 3, w, NULL) == NULL);
  TS_CHECK_STREQ(ctx.err.data, "Expected weight to be of same shape as normalized_shape, but got weight of shape [4] "
                               "and normalized_shape = [3]");
  ts_rt_clear_error(&ctx);
  ts_rt_tensor_release(x);
  ts_rt_tensor_release(w);
}

int main(void) {
  ts_rt_ctx_init(&ctx, 1);
  ts_diag d = {0};
  if (!ts_rt_kernels_init(&d)) fprintf(stderr, "kernel tables: %s", d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  test_errors();
  flat f;
  if (flat_open(&f, "layer_norm")) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      int64_t R = cases[i].R, S = cases[i].S;
      ts_rt_tensor *x = NEXT(&f, R, S);
      ts_rt_tensor *w = cases[i].affine ? NEXT(&f, S) : NULL, *b = cases[i].affine ? NEXT(&f, S) : NULL;
      ts_rt_tensor *want = NEXT(&f, R, S);
      for (int threads = 1; threads <= 2 && x && want; threads++) {
        ctx.nthreads = threads;
        ts_rt_tensor *y = run(x, S, w, b);
        if (!check_close(y, want, 1e-5, 1e-4)) fprintf(stderr, "  R=%lld S=%lld threads=%d\n", (long long)R,
                                                       (long long)S, threads);
        if (y) ts_rt_tensor_release(y);
      }
      ctx.nthreads = 1;
      ts_rt_tensor *all[4] = {x, w, b, want};
      for (int k = 0; k < 4; k++)
        if (all[k]) ts_rt_tensor_release(all[k]);
    }
    flat_close(&f);
  }
  ts_rt_ctx_free(&ctx);
  return ts_test_finish();
}
