/* tests/unit/test_rt_rnn.c: aten::lstm / gru / rnn_tanh (.input and .data)
 * and the LSTM/GRU cells against PyTorch 1.13's results. The cases are
 * tests/fixtures/composite/<case>.npy, made by
 *   /usr/bin/python3 tests/fixtures/make_composite_cases.py
 * (each a flat array of the case's tensors in the order that script lists). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "composite_cases.h"

/* A List[Tensor] of the given tensors (retained). */
static ts_iv tensor_list(ts_rt_tensor **ts, uint32_t n) {
  ts_rt_list *l = ts_rt_list_new(&ctx, NULL, n);
  for (uint32_t i = 0; i < n; i++) {
    ts_rt_tensor_retain(ts[i]);
    ts_rt_list_append(&ctx, l, ts_iv_tensor(ts[i]));
  }
  ts_iv v = {.u.l = l, .tag = TS_IV_LIST};
  return v;
}

static bool run(const char *schema, ts_iv *in, uint32_t nin, ts_iv *out, uint32_t nout) {
  ts_rt_kernel_fn fn = ts_rt_kernel_by_name(schema);
  if (!TS_CHECK(fn != NULL)) return false;
  for (uint32_t i = 0; i < nout; i++) out[i] = ts_iv_none();
  ts_rt_call call = {in, nin, out, nout, NULL};
  ts_rt_clear_error(&ctx);
  bool ok = fn(&ctx, &call);
  if (!ok) fprintf(stderr, "  %s: %s\n", schema, ctx.err.data ? ctx.err.data : "?");
  return ok;
}

static void release_ivs(ts_iv *v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) ts_iv_release(v[i]);
}

static void release_ts(ts_rt_tensor **t, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (t[i]) ts_rt_tensor_release(t[i]);
}

/* One aten::<mode>.input case: x, h0 (, c0), params, output, h_n (, c_n).
 * nparams weights with the shapes in pshape (ndim 1 or 2, second 0 for 1-d). */
typedef struct rnn_case {
  const char *name, *schema;
  bool lstm, has_biases, bidir, batch_first;
  int64_t layers;
  int64_t xs[3], hs[3], cs[3], ys[3];
  uint32_t nparams;
  int64_t pshape[20][2];
  double tol;
  bool transpose_input; /* pass x as a non-contiguous view */
} rnn_case;

static void run_rnn_case(const rnn_case *k) {
  flat f;
  if (!flat_open(&f, k->name)) return;
  ts_rt_tensor *x = NEXT(&f, k->xs[0], k->xs[1], k->xs[2]);
  ts_rt_tensor *h0 = NEXT(&f, k->hs[0], k->hs[1], k->hs[2]);
  ts_rt_tensor *c0 = k->lstm ? NEXT(&f, k->cs[0], k->cs[1], k->cs[2]) : NULL;
  ts_rt_tensor *ps[20] = {NULL};
  for (uint32_t i = 0; i < k->nparams; i++)
    ps[i] = k->pshape[i][1] ? NEXT(&f, k->pshape[i][0], k->pshape[i][1]) : NEXT(&f, k->pshape[i][0]);
  ts_rt_tensor *y = NEXT(&f, k->ys[0], k->ys[1], k->ys[2]);
  ts_rt_tensor *hn = NEXT(&f, k->hs[0], k->hs[1], k->hs[2]);
  ts_rt_tensor *cn = k->lstm ? NEXT(&f, k->cs[0], k->cs[1], k->cs[2]) : NULL;
  flat_close(&f);
  ts_rt_tensor *xin = x;
  if (k->transpose_input) {
    /* The same values through a [1, 0, 2]-permuted copy, viewed back. */
    int64_t ps2[3] = {x->sizes[1], x->sizes[0], x->sizes[2]};
    ts_rt_tensor *tmp = ts_rt_tensor_new(&ctx, (ts_dtype)x->dtype, 3, ps2, false);
    int64_t vs[3] = {x->sizes[0], x->sizes[1], x->sizes[2]}, vst[3] = {x->sizes[2], x->sizes[0] * x->sizes[2], 1};
    xin = ts_rt_tensor_view(&ctx, tmp, 0, 3, vs, vst);
    ts_rt_tensor_release(tmp);
    TS_CHECK(!ts_rt_tensor_is_contiguous(xin));
    ts_rt_tensor_copy_(&ctx, xin, x);
  }
  ts_rt_tensor *hx[2] = {h0, c0};
  ts_iv in[9] = {ts_iv_tensor(xin), k->lstm ? tensor_list(hx, 2) : ts_iv_tensor(h0), tensor_list(ps, k->nparams),
                 ts_iv_bool(k->has_biases), ts_iv_int(k->layers), ts_iv_double(0), ts_iv_bool(false),
                 ts_iv_bool(k->bidir), ts_iv_bool(k->batch_first)};
  ts_rt_tensor_retain(xin);
  if (!k->lstm) ts_rt_tensor_retain(h0);
  ts_iv out[3];
  uint32_t nout = k->lstm ? 3 : 2;
  if (TS_CHECK(run(k->schema, in, 9, out, nout))) {
    check_close(out[0].u.t, y, k->tol, k->tol * 10);
    check_close(out[1].u.t, hn, k->tol, k->tol * 10);
    if (k->lstm) check_close(out[2].u.t, cn, k->tol, k->tol * 10);
    release_ivs(out, nout);
  }
  release_ivs(in, 9);
  if (xin != x) ts_rt_tensor_release(xin);
  ts_rt_tensor *all[6] = {x, h0, c0, y, hn, cn};
  release_ts(all, 6);
  release_ts(ps, k->nparams);
}

static const rnn_case cases[] = {
    {"lstm_2l", "aten::lstm.input", true, true, false, false, 2, {5, 2, 3}, {2, 2, 4}, {2, 2, 4}, {5, 2, 4}, 8,
     {{16, 3}, {16, 4}, {16, 0}, {16, 0}, {16, 4}, {16, 4}, {16, 0}, {16, 0}}, 1e-5, false},
    {"lstm_2l", "aten::lstm.input", true, true, false, false, 2, {5, 2, 3}, {2, 2, 4}, {2, 2, 4}, {5, 2, 4}, 8,
     {{16, 3}, {16, 4}, {16, 0}, {16, 0}, {16, 4}, {16, 4}, {16, 0}, {16, 0}}, 1e-5, true},
    {"lstm_bi_bf", "aten::lstm.input", true, true, true, true, 2, {2, 4, 3}, {4, 2, 4}, {4, 2, 4}, {2, 4, 8}, 16,
     {{16, 3}, {16, 4}, {16, 0}, {16, 0}, {16, 3}, {16, 4}, {16, 0}, {16, 0},
      {16, 8}, {16, 4}, {16, 0}, {16, 0}, {16, 8}, {16, 4}, {16, 0}, {16, 0}}, 1e-5, false},
    {"lstm_proj", "aten::lstm.input", true, true, false, false, 1, {3, 2, 3}, {1, 2, 2}, {1, 2, 5}, {3, 2, 2}, 5,
     {{20, 3}, {20, 2}, {20, 0}, {20, 0}, {2, 5}}, 1e-5, false},
    {"lstm_f64", "aten::lstm.input", true, true, false, false, 1, {3, 2, 3}, {1, 2, 4}, {1, 2, 4}, {3, 2, 4}, 4,
     {{16, 3}, {16, 4}, {16, 0}, {16, 0}}, 1e-12, false},
    {"gru_bi", "aten::gru.input", false, true, true, false, 2, {4, 2, 3}, {4, 2, 4}, {0, 0, 0}, {4, 2, 8}, 16,
     {{12, 3}, {12, 4}, {12, 0}, {12, 0}, {12, 3}, {12, 4}, {12, 0}, {12, 0},
      {12, 8}, {12, 4}, {12, 0}, {12, 0}, {12, 8}, {12, 4}, {12, 0}, {12, 0}}, 1e-5, false},
    {"rnn_nobias", "aten::rnn_tanh.input", false, false, false, true, 1, {2, 3, 3}, {1, 2, 4}, {0, 0, 0}, {2, 3, 4}, 2,
     {{4, 3}, {4, 4}}, 1e-5, false},
};

/* aten::lstm.data on a PackedSequence: lengths [4, 2, 1], bidirectional. */
static void test_lstm_packed(void) {
  flat f;
  if (!flat_open(&f, "lstm_packed")) return;
  ts_rt_tensor *x = NEXT(&f, 7, 3), *h0 = NEXT(&f, 2, 3, 4), *c0 = NEXT(&f, 2, 3, 4);
  ts_rt_tensor *ps[8];
  for (int i = 0; i < 8; i++) ps[i] = (i % 4) == 0 ? NEXT(&f, 16, 3) : (i % 4) == 1 ? NEXT(&f, 16, 4) : NEXT(&f, 16);
  ts_rt_tensor *y = NEXT(&f, 7, 8), *hn = NEXT(&f, 2, 3, 4), *cn = NEXT(&f, 2, 3, 4);
  flat_close(&f);
  int64_t four = 4;
  ts_rt_tensor *bs = ts_rt_tensor_new(&ctx, TS_DT_INT64, 1, &four, false);
  int64_t bsv[4] = {3, 2, 1, 1}; /* from pack_padded_sequence(x, [4, 2, 1]).batch_sizes */
  memcpy(ts_rt_tensor_data(bs), bsv, sizeof bsv);
  ts_rt_tensor *hx[2] = {h0, c0};
  ts_rt_tensor_retain(x);
  ts_iv in[9] = {ts_iv_tensor(x),    ts_iv_tensor(bs),  tensor_list(hx, 2), tensor_list(ps, 8), ts_iv_bool(true),
                 ts_iv_int(1),       ts_iv_double(0),   ts_iv_bool(false), ts_iv_bool(true)};
  ts_iv out[3];
  if (TS_CHECK(run("aten::lstm.data", in, 9, out, 3))) {
    check_close(out[0].u.t, y, 1e-5, 1e-4);
    check_close(out[1].u.t, hn, 1e-5, 1e-4);
    check_close(out[2].u.t, cn, 1e-5, 1e-4);
    release_ivs(out, 3);
  }
  release_ivs(in, 9);
  ts_rt_tensor *all[6] = {x, h0, c0, y, hn, cn};
  release_ts(all, 6);
  release_ts(ps, 8);
}

static void test_cells(void) {
  flat f;
  if (flat_open(&f, "lstm_cell")) {
    ts_rt_tensor *x = NEXT(&f, 2, 3), *h = NEXT(&f, 2, 4), *c = NEXT(&f, 2, 4);
    ts_rt_tensor *w_ih = NEXT(&f, 16, 3), *w_hh = NEXT(&f, 16, 4), *b_ih = NEXT(&f, 16), *b_hh = NEXT(&f, 16);
    ts_rt_tensor *h1 = NEXT(&f, 2, 4), *c1 = NEXT(&f, 2, 4);
    flat_close(&f);
    ts_rt_tensor *hx[2] = {h, c};
    ts_rt_tensor *keep[4] = {x, w_ih, w_hh, b_ih};
    for (int i = 0; i < 4; i++) ts_rt_tensor_retain(keep[i]);
    ts_rt_tensor_retain(b_hh);
    ts_iv in[6] = {ts_iv_tensor(x),    tensor_list(hx, 2), ts_iv_tensor(w_ih),
                   ts_iv_tensor(w_hh), ts_iv_tensor(b_ih), ts_iv_tensor(b_hh)};
    ts_iv out[2];
    if (TS_CHECK(run("aten::lstm_cell", in, 6, out, 2))) {
      check_close(out[0].u.t, h1, 1e-5, 1e-4);
      check_close(out[1].u.t, c1, 1e-5, 1e-4);
      release_ivs(out, 2);
    }
    release_ivs(in, 6);
    ts_rt_tensor *all[9] = {x, h, c, w_ih, w_hh, b_ih, b_hh, h1, c1};
    release_ts(all, 9);
  }
  if (flat_open(&f, "gru_cell_nobias")) {
    ts_rt_tensor *x = NEXT(&f, 2, 3), *h = NEXT(&f, 2, 4), *w_ih = NEXT(&f, 12, 3), *w_hh = NEXT(&f, 12, 4);
    ts_rt_tensor *h1 = NEXT(&f, 2, 4);
    flat_close(&f);
    ts_iv in[6] = {ts_iv_tensor(x), ts_iv_tensor(h), ts_iv_tensor(w_ih), ts_iv_tensor(w_hh), ts_iv_none(),
                   ts_iv_none()};
    ts_iv out[1];
    if (TS_CHECK(run("aten::gru_cell", in, 6, out, 1))) {
      check_close(out[0].u.t, h1, 1e-5, 1e-4);
      release_ivs(out, 1);
    }
    release_ivs(in, 6);
    ts_rt_tensor_release(h1);
  }
}

/* Errors as PyTorch words them, and an empty batch. */
static void test_errors_and_empty(void) {
  int64_t xs[3] = {5, 0, 3}, hs[3] = {1, 0, 4}, w1[2] = {16, 3}, w2[2] = {16, 4};
  ts_rt_tensor *x = ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 3, xs, true);
  ts_rt_tensor *h = ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 3, hs, true);
  ts_rt_tensor *ps[2] = {ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 2, w1, true),
                         ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 2, w2, true)};
  ts_rt_tensor *hx[2] = {h, h};
  ts_iv in[9] = {ts_iv_tensor(x), tensor_list(hx, 2), tensor_list(ps, 2), ts_iv_bool(false), ts_iv_int(1),
                 ts_iv_double(0), ts_iv_bool(false), ts_iv_bool(false), ts_iv_bool(false)};
  ts_iv out[3];
  /* empty batch: [5, 0, 4] outputs */
  if (TS_CHECK(run("aten::lstm.input", in, 9, out, 3))) {
    TS_CHECK_INTEQ(out[0].u.t->ndim, 3);
    TS_CHECK_INTEQ(out[0].u.t->sizes[0], 5);
    TS_CHECK_INTEQ(out[0].u.t->sizes[1], 0);
    TS_CHECK_INTEQ(out[0].u.t->sizes[2], 4);
    TS_CHECK_INTEQ(out[2].u.t->sizes[2], 4);
    release_ivs(out, 3);
  }
  /* a wrong parameter count */
  in[3] = ts_iv_bool(true);
  TS_CHECK(!run("aten::lstm.input", in, 9, out, 3));
  TS_CHECK_STREQ(ctx.err.data, "got an incorrect number of RNN parameters");
  in[3] = ts_iv_bool(false);
  /* hidden of the wrong batch */
  in[4] = ts_iv_int(2);
  TS_CHECK(!run("aten::lstm.input", in, 9, out, 3));
  TS_CHECK_STREQ(ctx.err.data, "Expected hidden[0] size (2, 0, 4), got [1, 0, 4]");
  in[4] = ts_iv_int(1);
  release_ivs(in, 1);
  /* an empty sequence */
  int64_t xs0[3] = {0, 0, 3};
  in[0] = ts_iv_tensor(ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 3, xs0, true));
  TS_CHECK(!run("aten::lstm.input", in, 9, out, 3));
  TS_CHECK_STREQ(ctx.err.data, "Expected sequence length to be larger than 0 in RNN");
  release_ivs(in, 1);
  /* Half is refused as PyTorch's CPU GEMM does */
  in[0] = ts_iv_tensor(ts_rt_tensor_new(&ctx, TS_DT_FLOAT16, 3, xs, true));
  TS_CHECK(!run("aten::lstm.input", in, 9, out, 3));
  TS_CHECK_STREQ(ctx.err.data, "\"addmm_impl_cpu_\" not implemented for 'Half'");
  release_ivs(in, 9);
  ts_rt_tensor_release(h);
  release_ts(ps, 2);
}

/* bfloat16 runs (computed in float32, rounded at the end): compared with
 * the float32 case at bfloat16's precision. */
static void test_bf16(void) {
  const rnn_case *k = &cases[0];
  flat f;
  if (!flat_open(&f, k->name)) return;
  ts_rt_tensor *t[14];
  t[0] = NEXT(&f, 5, 2, 3);
  t[1] = NEXT(&f, 2, 2, 4);
  t[2] = NEXT(&f, 2, 2, 4);
  for (int i = 0; i < 8; i++) t[3 + i] = k->pshape[i][1] ? NEXT(&f, k->pshape[i][0], k->pshape[i][1]) : NEXT(&f, 16);
  t[11] = NEXT(&f, 5, 2, 4);
  t[12] = NEXT(&f, 2, 2, 4);
  t[13] = NEXT(&f, 2, 2, 4);
  flat_close(&f);
  ts_rt_tensor *b[11];
  for (int i = 0; i < 11; i++) b[i] = ts_rt_tensor_to_dtype(&ctx, t[i], TS_DT_BFLOAT16);
  ts_rt_tensor_retain(b[0]);
  ts_iv in[9] = {ts_iv_tensor(b[0]), tensor_list(b + 1, 2), tensor_list(b + 3, 8), ts_iv_bool(true), ts_iv_int(2),
                 ts_iv_double(0),    ts_iv_bool(false),     ts_iv_bool(false),     ts_iv_bool(false)};
  ts_iv out[3];
  if (TS_CHECK(run("aten::lstm.input", in, 9, out, 3))) {
    TS_CHECK_INTEQ(out[0].u.t->dtype, TS_DT_BFLOAT16);
    ts_rt_tensor *y = ts_rt_tensor_to_dtype(&ctx, out[0].u.t, TS_DT_FLOAT32);
    check_close(y, t[11], 3e-2, 3e-2);
    ts_rt_tensor_release(y);
    release_ivs(out, 3);
  }
  release_ivs(in, 9);
  release_ts(b, 11);
  release_ts(t, 14);
}

int main(void) {
  ts_rt_ctx_init(&ctx, 1);
  ts_diag d = {0};
  /* Another table's bad entry is reported here but is not this test's failure: lookups are checked one by one. */
  if (!ts_rt_kernels_init(&d)) fprintf(stderr, "kernel tables: %s", d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_rnn_case(&cases[i]);
  test_lstm_packed();
  test_cells();
  test_errors_and_empty();
  test_bf16();
  ts_rt_ctx_free(&ctx);
  return ts_test_finish();
}
