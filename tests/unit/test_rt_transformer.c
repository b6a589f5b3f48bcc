/* tests/unit/test_rt_transformer.c: the transformer fast path
 * (aten::_native_multi_head_attention, aten::_transformer_encoder_layer_fwd)
 * and the nested-tensor ops of nn.TransformerEncoder against PyTorch 1.13's
 * results. The cases are tests/fixtures/composite/<case>.npy, made by
 *   /usr/bin/python3 tests/fixtures/make_composite_cases.py
 * (each a flat array of the case's tensors in the order that script lists). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "composite_cases.h"
#include "tensor_ops.h"

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

/* A [B, L] (or any 2-d) bool tensor from 0/1 bytes. */
static ts_rt_tensor *bool_tensor(int32_t ndim, const int64_t *sizes, const uint8_t *v) {
  ts_rt_tensor *t = ts_rt_tensor_new(&ctx, TS_DT_BOOL, ndim, sizes, false);
  memcpy(ts_rt_tensor_data(t), v, (size_t)ts_rt_tensor_numel(t));
  return t;
}

/* One encoder layer's 12 parameter tensors (d_model 8, ff 16), read in the
 * fixture's order. */
static void read_layer(flat *f, ts_rt_tensor **p) {
  p[0] = NEXT(f, 24, 8);
  p[1] = NEXT(f, 24);
  p[2] = NEXT(f, 8, 8);
  p[3] = NEXT(f, 8);
  for (int i = 4; i < 8; i++) p[i] = NEXT(f, 8);
  p[8] = NEXT(f, 16, 8);
  p[9] = NEXT(f, 16);
  p[10] = NEXT(f, 8, 16);
  p[11] = NEXT(f, 8);
}

/* _transformer_encoder_layer_fwd(src, 8, 2, params..., use_gelu, norm_first, eps, mask, mask_type) */
static bool run_layer(ts_rt_tensor *src, ts_rt_tensor **p, bool gelu, bool norm_first, double eps, ts_rt_tensor *mask,
                      ts_iv mask_type, ts_iv *out) {
  ts_iv in[20] = {ts_iv_tensor(src),  ts_iv_int(8),        ts_iv_int(2),        ts_iv_tensor(p[0]),
                  ts_iv_tensor(p[1]), ts_iv_tensor(p[2]), ts_iv_tensor(p[3]),  ts_iv_bool(gelu),
                  ts_iv_bool(norm_first), ts_iv_double(eps), ts_iv_tensor(p[4]), ts_iv_tensor(p[5]),
                  ts_iv_tensor(p[6]), ts_iv_tensor(p[7]), ts_iv_tensor(p[8]),  ts_iv_tensor(p[9]),
                  ts_iv_tensor(p[10]), ts_iv_tensor(p[11]), mask ? ts_iv_tensor(mask) : ts_iv_none(), mask_type};
  /* in[] borrows */
  return run("aten::_transformer_encoder_layer_fwd", in, 20, out, 1);
}

static void test_encoder_layers(void) {
  static const struct {
    const char *name;
    bool norm_first, gelu, kpm;
  } cases[] = {{"enc_post_relu", false, false, false},
               {"enc_pre_gelu", true, true, false},
               {"enc_kpm", false, true, true}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    flat f;
    if (!flat_open(&f, cases[k].name)) continue;
    ts_rt_tensor *x = NEXT(&f, 2, 3, 8), *p[12];
    read_layer(&f, p);
    ts_rt_tensor *want = NEXT(&f, 2, 3, 8);
    flat_close(&f);
    int64_t ms[2] = {2, 3};
    static const uint8_t kpm[6] = {0, 0, 1, 0, 0, 0};
    ts_rt_tensor *mask = cases[k].kpm ? bool_tensor(2, ms, kpm) : NULL;
    ts_iv out;
    if (TS_CHECK(run_layer(x, p, cases[k].gelu, cases[k].norm_first, 1e-4, mask,
                           mask ? ts_iv_int(1) : ts_iv_none(), &out))) {
      check_close(out.u.t, want, 1e-5, 1e-4);
      ts_iv_release(out);
    }
    /* bfloat16 (computed in float32): PyTorch's float32 result at bfloat16's precision */
    ts_rt_tensor *xb = ts_rt_tensor_to_dtype(&ctx, x, TS_DT_BFLOAT16), *pb[12];
    for (int i = 0; i < 12; i++) pb[i] = ts_rt_tensor_to_dtype(&ctx, p[i], TS_DT_BFLOAT16);
    if (TS_CHECK(run_layer(xb, pb, cases[k].gelu, cases[k].norm_first, 1e-4, mask,
                           mask ? ts_iv_int(1) : ts_iv_none(), &out))) {
      TS_CHECK_INTEQ(out.u.t->dtype, TS_DT_BFLOAT16);
      ts_rt_tensor *of = ts_rt_tensor_to_dtype(&ctx, out.u.t, TS_DT_FLOAT32);
      check_close(of, want, 1e-1, 5e-2);
      ts_rt_tensor_release(of);
      ts_iv_release(out);
    }
    ts_rt_tensor_release(xb);
    release_ts(pb, 12);
    if (mask) {
      /* a src_mask (type 0) is refused on CPU, as PyTorch does */
      TS_CHECK(!run_layer(x, p, cases[k].gelu, cases[k].norm_first, 1e-4, mask, ts_iv_int(0), &out));
      TS_CHECK_STREQ(ctx.err.data, "src_mask not currently supported on CPU");
      TS_CHECK(!run_layer(x, p, cases[k].gelu, cases[k].norm_first, 1e-4, mask, ts_iv_none(), &out));
      TS_CHECK_STREQ(ctx.err.data, "Mask Type should be defined");
      ts_rt_tensor_release(mask);
    }
    ts_rt_tensor_release(x);
    ts_rt_tensor_release(want);
    release_ts(p, 12);
  }
}

/* _native_multi_head_attention(q, k, v, 8, 2, w..., mask, need_weights, average, mask_type) */
static bool run_mha(ts_rt_tensor *q, ts_rt_tensor *k, ts_rt_tensor *v, ts_rt_tensor **w, ts_rt_tensor *mask,
                    bool need, bool avg, ts_iv mask_type, ts_iv *out) {
  ts_iv in[13] = {ts_iv_tensor(q),    ts_iv_tensor(k),    ts_iv_tensor(v),    ts_iv_int(8),
                  ts_iv_int(2),       ts_iv_tensor(w[0]), ts_iv_tensor(w[1]), ts_iv_tensor(w[2]),
                  ts_iv_tensor(w[3]), mask ? ts_iv_tensor(mask) : ts_iv_none(), ts_iv_bool(need), ts_iv_bool(avg),
                  mask_type};
  return run("aten::_native_multi_head_attention", in, 13, out, 2);
}

static void test_mha(void) {
  flat f;
  if (!flat_open(&f, "mha")) return;
  ts_rt_tensor *x = NEXT(&f, 2, 3, 8), *w[4];
  w[0] = NEXT(&f, 24, 8);
  w[1] = NEXT(&f, 24);
  w[2] = NEXT(&f, 8, 8);
  w[3] = NEXT(&f, 8);
  ts_rt_tensor *o1 = NEXT(&f, 2, 3, 8), *w1 = NEXT(&f, 2, 3, 3), *o2 = NEXT(&f, 2, 3, 8), *w2 = NEXT(&f, 2, 2, 3, 3);
  ts_rt_tensor *o3 = NEXT(&f, 2, 3, 8), *w3 = NEXT(&f, 2, 2, 3, 3), *y = NEXT(&f, 2, 3, 8), *z = NEXT(&f, 2, 3, 8);
  ts_rt_tensor *o4 = NEXT(&f, 2, 3, 8), *w4 = NEXT(&f, 2, 3, 3);
  flat_close(&f);
  ts_iv out[2];
  /* self-attention, weights averaged over heads */
  if (TS_CHECK(run_mha(x, x, x, w, NULL, true, true, ts_iv_none(), out))) {
    check_close(out[0].u.t, o1, 1e-5, 1e-4);
    check_close(out[1].u.t, w1, 1e-5, 1e-4);
    release_ivs(out, 2);
  }
  /* no weights asked: None */
  if (TS_CHECK(run_mha(x, x, x, w, NULL, false, true, ts_iv_none(), out))) {
    check_close(out[0].u.t, o1, 1e-5, 1e-4);
    TS_CHECK(out[1].tag == TS_IV_NONE);
    release_ivs(out, 2);
  }
  /* key padding mask (type 1), per-head weights */
  int64_t ms[2] = {2, 3}, m4s[4] = {2, 2, 3, 3};
  static const uint8_t kpm[6] = {0, 1, 0, 0, 0, 1};
  ts_rt_tensor *mask = bool_tensor(2, ms, kpm);
  if (TS_CHECK(run_mha(x, x, x, w, mask, true, false, ts_iv_int(1), out))) {
    check_close(out[0].u.t, o2, 1e-5, 1e-4);
    check_close(out[1].u.t, w2, 1e-5, 1e-4);
    release_ivs(out, 2);
  }
  /* the same mask as float (nonzero is masked, as PyTorch converts it) */
  ts_rt_tensor *fmask = ts_rt_tensor_to_dtype(&ctx, mask, TS_DT_FLOAT32);
  if (TS_CHECK(run_mha(x, x, x, w, fmask, true, false, ts_iv_int(1), out))) {
    check_close(out[0].u.t, o2, 1e-5, 1e-4);
    release_ivs(out, 2);
  }
  ts_rt_tensor_release(fmask);
  ts_rt_tensor_release(mask);
  /* a full [B, H, L, L] mask (type 2) */
  uint8_t m4v[36] = {0};
  m4v[((0 * 2 + 1) * 3 + 0) * 3 + 2] = 1;
  m4v[((1 * 2 + 0) * 3 + 2) * 3 + 0] = 1;
  ts_rt_tensor *m4 = bool_tensor(4, m4s, m4v);
  if (TS_CHECK(run_mha(x, x, x, w, m4, true, false, ts_iv_int(2), out))) {
    check_close(out[0].u.t, o3, 1e-5, 1e-4);
    check_close(out[1].u.t, w3, 1e-5, 1e-4);
    release_ivs(out, 2);
  }
  ts_rt_tensor_release(m4);
  /* query, key and value different tensors of one shape */
  if (TS_CHECK(run_mha(x, y, z, w, NULL, true, true, ts_iv_none(), out))) {
    check_close(out[0].u.t, o4, 1e-5, 1e-4);
    check_close(out[1].u.t, w4, 1e-5, 1e-4);
    release_ivs(out, 2);
  }
  /* non-contiguous query: x through a transposed copy */
  int64_t ts3[3] = {3, 2, 8}, vs[3] = {2, 3, 8}, vst[3] = {8, 16, 1};
  ts_rt_tensor *tmp = ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 3, ts3, false);
  ts_rt_tensor *xv = ts_rt_tensor_view(&ctx, tmp, 0, 3, vs, vst);
  ts_rt_tensor_copy_(&ctx, xv, x);
  if (TS_CHECK(run_mha(xv, xv, xv, w, NULL, true, true, ts_iv_none(), out))) {
    check_close(out[0].u.t, o1, 1e-5, 1e-4);
    release_ivs(out, 2);
  }
  ts_rt_tensor_release(xv);
  ts_rt_tensor_release(tmp);
  /* errors */
  ts_iv bad[13] = {ts_iv_tensor(x), ts_iv_tensor(x), ts_iv_tensor(x), ts_iv_int(8), ts_iv_int(3),
                   ts_iv_tensor(w[0]), ts_iv_tensor(w[1]), ts_iv_tensor(w[2]), ts_iv_tensor(w[3]), ts_iv_none(),
                   ts_iv_bool(true), ts_iv_bool(true), ts_iv_none()};
  TS_CHECK(!run("aten::_native_multi_head_attention", bad, 13, out, 2));
  TS_CHECK_STREQ(ctx.err.data, "`embed_dim` must divide evenly by `num_heads`");
  bad[4] = ts_iv_int(2);
  bad[3] = ts_iv_int(4);
  TS_CHECK(!run("aten::_native_multi_head_attention", bad, 13, out, 2));
  TS_CHECK_STREQ(ctx.err.data, "passed-in embed_dim 4 didn't match last dim of query 8");
  ts_rt_tensor *all[15] = {x, w[0], w[1], w[2], w[3], o1, w1, o2, w2, o3, w3, y, z, o4, w4};
  release_ts(all, 15);
}

/* nn.TransformerEncoder's padding-mask path: _nested_tensor_from_mask, two
 * layers on the nested tensor, to_padded_tensor (cut to the longest
 * sequence, 2 of 3). */
static void test_nested(void) {
  flat f;
  if (!flat_open(&f, "enc_nested")) return;
  ts_rt_tensor *x = NEXT(&f, 2, 3, 8), *p0[12], *p1[12];
  read_layer(&f, p0);
  read_layer(&f, p1);
  ts_rt_tensor *want = NEXT(&f, 2, 2, 8);
  flat_close(&f);
  int64_t ms[2] = {2, 3};
  static const uint8_t keep[6] = {1, 1, 0, 1, 0, 0}, gap[6] = {1, 0, 1, 1, 0, 0};
  ts_rt_tensor *mask = bool_tensor(2, ms, keep), *gmask = bool_tensor(2, ms, gap);
  ts_iv out, in[3] = {ts_iv_tensor(x), ts_iv_tensor(mask), ts_iv_bool(false)};
  if (TS_CHECK(run("aten::_nested_tensor_from_mask_left_aligned", in, 2, &out, 1))) TS_CHECK(out.u.b);
  in[1] = ts_iv_tensor(gmask);
  if (TS_CHECK(run("aten::_nested_tensor_from_mask_left_aligned", in, 2, &out, 1))) TS_CHECK(!out.u.b);
  in[2] = ts_iv_bool(true);
  TS_CHECK(!run("aten::_nested_tensor_from_mask", in, 3, &out, 1));
  TS_CHECK_STREQ(ctx.err.data, "Mask must be left-aligned without gaps");
  in[1] = ts_iv_tensor(mask);
  in[2] = ts_iv_bool(false);
  TS_CHECK(!ts_rt_tensor_is_nested(x));
  ts_iv nt;
  if (TS_CHECK(run("aten::_nested_tensor_from_mask", in, 3, &nt, 1))) {
    TS_CHECK(ts_rt_tensor_is_nested(nt.u.t));
    ts_iv h1, h2;
    if (TS_CHECK(run_layer(nt.u.t, p0, false, false, 1e-5, NULL, ts_iv_none(), &h1))) {
      TS_CHECK(ts_rt_tensor_is_nested(h1.u.t));
      if (TS_CHECK(run_layer(h1.u.t, p1, false, false, 1e-5, NULL, ts_iv_none(), &h2))) {
        ts_iv pin[3] = {h2, ts_iv_double(0), ts_iv_none()};
        if (TS_CHECK(run("aten::to_padded_tensor", pin, 3, &out, 1))) {
          check_close(out.u.t, want, 1e-5, 1e-4);
          ts_iv_release(out);
        }
        /* an output_size pads further; a smaller one is refused */
        ts_rt_list *os = ts_rt_list_new(&ctx, NULL, 3);
        ts_rt_list_append(&ctx, os, ts_iv_int(3));
        ts_rt_list_append(&ctx, os, ts_iv_int(4));
        ts_rt_list_append(&ctx, os, ts_iv_int(9));
        pin[1] = ts_iv_double(-1);
        pin[2].tag = TS_IV_LIST;
        pin[2].u.l = os;
        if (TS_CHECK(run("aten::to_padded_tensor", pin, 3, &out, 1))) {
          ts_rt_tensor *r = out.u.t;
          TS_CHECK(r->sizes[0] == 3 && r->sizes[1] == 4 && r->sizes[2] == 9);
          const float *rd = ts_rt_tensor_data(r), *wd = ts_rt_tensor_data(want);
          TS_CHECK(fabsf(rd[0] - wd[0]) < 1e-5f);
          TS_CHECK(rd[8] == -1.0f && rd[9 * 4 * 3 - 1] == -1.0f);
          /* sequence 1 has length 1: its second row is padding */
          TS_CHECK(rd[(1 * 4 + 1) * 9] == -1.0f);
          ts_iv_release(out);
        }
        os->items[1] = ts_iv_int(1);
        TS_CHECK(!run("aten::to_padded_tensor", pin, 3, &out, 1));
        TS_CHECK_STREQ(ctx.err.data,
                       "Value in output_size is less than NestedTensor padded size. Truncation is not supported.");
        ts_iv_release(pin[2]);
        ts_iv_release(h2);
      }
      ts_iv_release(h1);
    }
    ts_iv_release(nt);
  }
  /* to_padded_tensor of a dense tensor is refused */
  ts_iv pin[3] = {ts_iv_tensor(x), ts_iv_double(0), ts_iv_none()};
  TS_CHECK(!run("aten::to_padded_tensor", pin, 3, &out, 1));
  ts_rt_tensor_release(mask);
  ts_rt_tensor_release(gmask);
  ts_rt_tensor_release(x);
  ts_rt_tensor_release(want);
  release_ts(p0, 12);
  release_ts(p1, 12);
}

int main(void) {
  ts_rt_ctx_init(&ctx, 1);
  ts_diag d = {0};
  /* Another table's bad entry is reported here but is not this test's failure: lookups are checked one by one. */
  if (!ts_rt_kernels_init(&d)) fprintf(stderr, "kernel tables: %s", d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  test_encoder_layers();
  test_mha();
  test_nested();
  ts_rt_ctx_free(&ctx);
  return ts_test_finish();
}
