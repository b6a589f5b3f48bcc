/* tests/unit/test_rt_transformer_odd.c: aten::_transformer_encoder_layer_fwd
 * at sizes that are not multiples of the kernels' vector width (d_model 6 and
 * 10, feed-forward 5 and 7, head_dim 3 and 5), so the vector loops' tails
 * run: float32 and float64, with and without a key padding mask, post- and
 * pre-norm, on 1 and 2 threads. Expected values are PyTorch 1.13's, in
 * tests/fixtures/composite/enc_odd_*.npy, made by
 *   /usr/bin/python3 tests/fixtures/make_transformer_odd_cases.py */
#include <string.h>

#include "composite_cases.h"
#include "tensor_ops.h"

static void release_ts(ts_rt_tensor **t, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (t[i]) ts_rt_tensor_release(t[i]);
}

/* One case: src [B, L, E], the 12 parameters, PyTorch's output. */
static void run_case(const char *name, int64_t E, int64_t H, int64_t F, int64_t B, int64_t L, bool norm_first,
                     bool gelu, bool kpm, double atol, double rtol) {
  flat f;
  if (!flat_open(&f, name)) return;
  ts_rt_tensor *p[14];
  p[0] = NEXT(&f, B, L, E);
  p[1] = NEXT(&f, 3 * E, E);
  p[2] = NEXT(&f, 3 * E);
  p[3] = NEXT(&f, E, E);
  for (int i = 4; i < 9; i++) p[i] = NEXT(&f, E);
  p[9] = NEXT(&f, F, E);
  p[10] = NEXT(&f, F);
  p[11] = NEXT(&f, E, F);
  p[12] = NEXT(&f, E);
  p[13] = NEXT(&f, B, L, E);
  flat_close(&f);
  ts_rt_tensor *mask = NULL;
  if (kpm) {
    int64_t ms[2] = {B, L};
    mask = ts_rt_tensor_new(&ctx, TS_DT_BOOL, 2, ms, true);
    uint8_t *m = ts_rt_tensor_data(mask);
    m[L - 2] = m[L - 1] = 1; /* mask[0, L-2:] = True */
  }
  ts_rt_kernel_fn fn = ts_rt_kernel_by_name("aten::_transformer_encoder_layer_fwd");
  if (!TS_CHECK(fn != NULL)) goto done;
  for (int threads = 1; threads <= 2; threads++) {
    ctx.nthreads = threads;
    ts_iv in[20] = {ts_iv_tensor(p[0]), ts_iv_int(E),        ts_iv_int(H),        ts_iv_tensor(p[1]),
                    ts_iv_tensor(p[2]), ts_iv_tensor(p[3]),  ts_iv_tensor(p[4]),  ts_iv_bool(gelu),
                    ts_iv_bool(norm_first), ts_iv_double(1e-5), ts_iv_tensor(p[5]), ts_iv_tensor(p[6]),
                    ts_iv_tensor(p[7]), ts_iv_tensor(p[8]),  ts_iv_tensor(p[9]),  ts_iv_tensor(p[10]),
                    ts_iv_tensor(p[11]), ts_iv_tensor(p[12]), mask ? ts_iv_tensor(mask) : ts_iv_none(),
                    mask ? ts_iv_int(1) : ts_iv_none()};
    ts_iv out = ts_iv_none();
    ts_rt_call call = {in, 20, &out, 1, NULL};
    ts_rt_clear_error(&ctx);
    bool ok = fn(&ctx, &call);
    if (!ok) fprintf(stderr, "  %s: %s\n", name, ctx.err.data ? ctx.err.data : "?");
    if (TS_CHECK(ok)) {
      if (!check_close(out.u.t, p[13], atol, rtol)) fprintf(stderr, "  %s (%d threads)\n", name, threads);
      ts_iv_release(out);
    }
  }
  ctx.nthreads = 1;
done:
  if (mask) ts_rt_tensor_release(mask);
  release_ts(p, 14);
}

int main(void) {
  ts_rt_ctx_init(&ctx, 1);
  ts_diag d = {0};
  if (!ts_rt_kernels_init(&d)) fprintf(stderr, "kernel tables: %s", d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  run_case("enc_odd_e6", 6, 2, 5, 2, 3, false, false, false, 1e-5, 1e-4);
  run_case("enc_odd_e10_kpm", 10, 2, 7, 2, 7, false, false, true, 1e-5, 1e-4);
  run_case("enc_odd_e10_pre", 10, 2, 7, 3, 7, true, true, false, 1e-5, 1e-4);
  run_case("enc_odd_e6_f64", 6, 2, 5, 2, 3, false, false, false, 1e-10, 1e-9);
  ts_rt_ctx_free(&ctx);
  return ts_test_finish();
}
