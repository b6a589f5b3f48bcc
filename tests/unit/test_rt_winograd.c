/* tests/unit/test_rt_winograd.c: runtime/kernels/winograd.c, float32 3x3
 * stride-1 convolution by Winograd F(4x4, 3x3) and F(2x2, 3x3), through
 * tsaot::conv2d_act and aten::conv2d.
 *
 * Heights and widths that are not multiples of 4 (partial tiles), padding 0
 * and 1, bias, residual and clamps in the epilogue, two images, 1, 2 and 3
 * threads, the default chunks of tiles and many smaller ones (a few tiles,
 * so that chunks cut tile rows and cross an image boundary; one tile per
 * chunk), and a convolution below the thresholds
 * (the im2col path). The transformed weights of a prim::Constant weight are
 * made once and kept with its storage; a weight with no node behind it is
 * transformed per call and nothing is kept. Expected values are PyTorch
 * 1.13's, in tests/fixtures/composite/winograd.npy, made by
 *   /usr/bin/python3 tests/fixtures/make_winograd_cases.py
 * (inputs from hashed(), computed here alike); F(2x2, 3x3)'s are the
 * float64 im2col path's (test_f2). The rounding error of both against
 * PyTorch's float64 is test_rt_conv_error.c's. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "composite_cases.h"
#include "kernels/winograd.h"
#include "tensor_ops.h"

/* the fixture's cases, in order (make_winograd_cases.py's CASES) */
static const struct {
  int64_t N, C, H, W, O, p;
  bool bias, res;
  double lo, hi;
} cases[] = {{1, 24, 29, 30, 24, 1, true, false, 0.0, INFINITY},
             {2, 24, 19, 23, 28, 0, false, true, 0.0, 6.0},
             {1, 40, 26, 27, 33, 1, true, true, -INFINITY, INFINITY},
             {1, 16, 14, 15, 16, 1, true, false, 0.0, INFINITY}};

/* make_winograd_cases.py's hashed(): element i is ((h >> 8) - 2^23) / 2^23
 * * scale, h = (i * 2654435761 + salt * 40503) mod 2^32. */
static ts_rt_tensor *hashed(int32_t nd, const int64_t *sizes, uint32_t salt, float scale) {
  ts_rt_tensor *t = ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, nd, sizes, false);
  if (!t) return NULL;
  float *d = ts_rt_tensor_data(t);
  for (int64_t i = 0, n = ts_rt_tensor_numel(t); i < n; i++) {
    uint32_t h = (uint32_t)((uint64_t)i * 2654435761u + salt * 40503u);
    d[i] = (float)(((int64_t)(h >> 8) - (1 << 23)) / 8388608.0) * scale;
  }
  return t;
}

/* A graph whose conv2d reads the constant %w: the node that tells the
 * kernels their weight is a constant nothing writes. */
static ts_graph *conv_graph(void) {
  static const char src[] = "graph(%x.1 : Tensor, %b.1 : Tensor):\n"
                            "  %w : Tensor = prim::Constant[value=<Tensor>]()\n"
                            "  %one : int = prim::Constant[value=1]()\n"
                            "  %l : int[] = prim::ListConstruct(%one, %one)\n"
                            "  %y : Tensor = aten::conv2d(%x.1, %w, %b.1, %l, %l, %l, %one)\n"
                            "  return (%y)\n";
  ts_diag d = {0};
  ts_graph *g = ts_graph_parse("t.ir", src, strlen(src), &d);
  if (!g) fprintf(stderr, "%s\n", d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  return g;
}

static ts_iv ints2(int64_t v) {
  ts_rt_list *l = ts_rt_list_new(&ctx, NULL, 2);
  ts_rt_list_append(&ctx, l, ts_iv_int(v));
  ts_rt_list_append(&ctx, l, ts_iv_int(v));
  return (ts_iv){.u.l = l, .tag = TS_IV_LIST};
}

/* tsaot::conv2d_act (x, w, b, r borrowed; b, r NULL: none) as node n (NULL:
 * none) against want. */
static void run_act(const ts_node *n, ts_rt_tensor *x, ts_rt_tensor *w, ts_rt_tensor *b, ts_rt_tensor *r, int64_t p,
                    double lo, double hi, const ts_rt_tensor *want) {
  ts_rt_kernel_fn fn = ts_rt_kernel_by_name("tsaot::conv2d_act");
  if (!TS_CHECK(fn != NULL)) return;
  ts_iv in[10] = {ts_iv_tensor(x),
                  ts_iv_tensor(w),
                  b ? ts_iv_tensor(b) : ts_iv_none(),
                  ints2(1),
                  ints2(p),
                  ints2(1),
                  ts_iv_int(1),
                  isinf(lo) ? ts_iv_none() : ts_iv_double(lo),
                  isinf(hi) ? ts_iv_none() : ts_iv_double(hi),
                  r ? ts_iv_tensor(r) : ts_iv_none()};
  ts_iv out[1] = {ts_iv_none()};
  ts_rt_call call = {.in = in, .nin = 10, .out = out, .nout = 1, .node = n};
  if (TS_CHECK(fn(&ctx, &call))) {
    if (!check_close((ts_rt_tensor *)out[0].u.o, want, 2e-5, 1e-4))
      fprintf(stderr, "  C=%lld O=%lld H=%lld W=%lld threads=%d node=%d\n", (long long)x->sizes[1],
              (long long)w->sizes[0], (long long)x->sizes[2], (long long)x->sizes[3], ctx.nthreads, n != NULL);
  } else {
    fprintf(stderr, "  %s\n", ctx.err.data ? ctx.err.data : "?");
    ts_rt_clear_error(&ctx);
  }
  ts_iv_release(out[0]);
  for (int i = 3; i < 6; i++) ts_iv_release(in[i]);
}

/* A new copy of w: a storage of its own, with nothing derived yet. */
static ts_rt_tensor *fresh(const ts_rt_tensor *w) {
  ts_rt_tensor *t = ts_rt_tensor_new(&ctx, (ts_dtype)w->dtype, w->ndim, w->sizes, false);
  memcpy(ts_rt_tensor_data(t), ts_rt_tensor_data(w), (size_t)ts_rt_tensor_numel(w) * sizeof(float));
  return t;
}

/* One case: a constant weight (transformed once, kept), then one with no
 * node (per call, nothing kept), at 1, 2 and 3 threads (chunks a multiple
 * of the threads) and three chunk sizes. */
static void test_case(const ts_node *n, size_t i, const ts_rt_tensor *want) {
  int64_t N = cases[i].N, C = cases[i].C, O = cases[i].O, OH = want->sizes[2], OW = want->sizes[3];
  ts_rt_tensor *x = hashed(4, (int64_t[]){N, C, cases[i].H, cases[i].W}, 1, 1.0f);
  ts_rt_tensor *w = hashed(4, (int64_t[]){O, C, 3, 3}, 2, 0.125f);
  ts_rt_tensor *b = cases[i].bias ? hashed(1, (int64_t[]){O}, 3, 1.0f) : NULL;
  ts_rt_tensor *r = cases[i].res ? hashed(4, (int64_t[]){N, O, OH, OW}, 4, 1.0f) : NULL;
  ts_rt_wino_geom g = {N, C, cases[i].H, cases[i].W, O, cases[i].p, cases[i].p, OH, OW};
  bool wino = ts_rt_wino_worth(&g);
  TS_CHECK(wino == (C >= 24)); /* the last case is below the thresholds */
  ts_rt_tensor *wc = fresh(w);
  const ts_rt_derived *kept = NULL;
  static const int64_t passes[] = {0, 100000, 1}; /* the default; a few tiles; one tile */
  for (int threads = 1; threads <= 3; threads++)
    for (size_t k = 0; k < sizeof passes / sizeof *passes; k++) {
      ctx.nthreads = threads;
      ts_rt_wino_pass_bytes(passes[k]);
      run_act(n, x, wc, b, r, cases[i].p, cases[i].lo, cases[i].hi, want);
      if (!kept) {
        kept = ts_rt_storage_derived(wc->storage);
        TS_CHECK((kept != NULL) == wino);
      }
      TS_CHECK(ts_rt_storage_derived(wc->storage) == kept); /* made once */
      ts_rt_tensor *wn = fresh(w);
      run_act(NULL, x, wn, b, r, cases[i].p, cases[i].lo, cases[i].hi, want);
      TS_CHECK(ts_rt_storage_derived(wn->storage) == NULL);
      ts_rt_tensor_release(wn);
    }
  ts_rt_wino_pass_bytes(0);
  ctx.nthreads = 1;
  /* aten::conv2d (no epilogue but the bias) agrees with conv2d_act where it is the same */
  if (!cases[i].res && cases[i].lo == -INFINITY && cases[i].hi == INFINITY) {
    ts_rt_kernel_fn fn = ts_rt_kernel_by_name("aten::conv2d");
    ts_iv in[7] = {ts_iv_tensor(x), ts_iv_tensor(wc), b ? ts_iv_tensor(b) : ts_iv_none(), ints2(1), ints2(cases[i].p),
                   ints2(1), ts_iv_int(1)};
    ts_iv out[1] = {ts_iv_none()};
    ts_rt_call call = {.in = in, .nin = 7, .out = out, .nout = 1, .node = n};
    if (TS_CHECK(fn && fn(&ctx, &call))) check_close((ts_rt_tensor *)out[0].u.o, want, 2e-5, 1e-4);
    ts_iv_release(out[0]);
    for (int k = 3; k < 6; k++) ts_iv_release(in[k]);
  }
  ts_rt_tensor *all[5] = {x, w, b, r, wc};
  for (int k = 0; k < 5; k++)
    if (all[k]) ts_rt_tensor_release(all[k]);
}

/* The weight transforms against G g G^T by hand for a kernel of ones: entry
 * (i, j) is the product of G's row sums i and j, within one rounding (2^-24
 * relative: the entries are summed in double, then rounded). */
static void test_weights(void) {
  float w[9], u[36];
  for (int k = 0; k < 9; k++) w[k] = 1.0f;
  ts_rt_wino_weights(4, w, 1, 1, u);
  /* F(4x4, 3x3)'s G (points 0, +-3/2, +-2/3, infinity, rows scaled as winograd.c says): its row sums */
  static const double rs[6] = {1.0 / 36, 19.0 / 2340, 7.0 / 2340, -19.0 / 4680, -7.0 / 4680, 1.0 / 36};
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) TS_CHECK(fabs(u[i * 6 + j] - rs[i] * rs[j]) <= 0x1p-24 * fabs(rs[i] * rs[j]));
  ts_rt_wino_weights(2, w, 1, 1, u);
  static const double rs2[4] = {1.0, 1.5, 0.5, 1.0}; /* F(2x2, 3x3)'s */
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) TS_CHECK(fabs(u[i * 4 + j] - rs2[i] * rs2[j]) <= 0x1p-24 * fabs(rs2[i] * rs2[j]));
  TS_CHECK(ts_rt_wino_weights_len(3, 8, 8) == 0 && ts_rt_wino_weights_len(2, 8, 8) == 16 * 64);
}

/* A float32 tensor's float64 copy and back. */
static ts_rt_tensor *as_dtype(const ts_rt_tensor *t, ts_dtype dt) {
  return t ? ts_rt_tensor_to_dtype(&ctx, t, dt) : NULL;
}

/* F(2x2, 3x3), where 4x4 tiles are too few (14x14-like layers): against
 * the im2col path of the same convolution in float64 (Winograd runs in
 * float32 only), with bias, residual and clamps, partial tiles, padding 0
 * and 1, two images, 1 to 3 threads, chunks that cut tile rows, a
 * constant weight (transformed once, kept) and one transformed per call. */
static void test_f2(const ts_node *n) {
  static const struct {
    int64_t N, C, H, W, O, p;
    bool bias, res;
    double lo, hi;
  } f2[] = {{1, 64, 13, 15, 72, 1, true, true, 0.0, INFINITY}, {2, 64, 12, 11, 64, 0, false, true, -1.0, 1.0},
            {1, 96, 14, 14, 64, 1, true, false, -INFINITY, INFINITY}};
  for (size_t i = 0; i < sizeof f2 / sizeof *f2; i++) {
    int64_t N = f2[i].N, C = f2[i].C, O = f2[i].O, OH = f2[i].H + 2 * f2[i].p - 2, OW = f2[i].W + 2 * f2[i].p - 2;
    ts_rt_wino_geom g = {N, C, f2[i].H, f2[i].W, O, f2[i].p, f2[i].p, OH, OW};
    TS_CHECK_INTEQ(ts_rt_wino_tile(&g), 2);
    ts_rt_tensor *x = hashed(4, (int64_t[]){N, C, f2[i].H, f2[i].W}, 11, 1.0f);
    ts_rt_tensor *w = hashed(4, (int64_t[]){O, C, 3, 3}, 12, 0.125f);
    ts_rt_tensor *b = f2[i].bias ? hashed(1, (int64_t[]){O}, 13, 1.0f) : NULL;
    ts_rt_tensor *r = f2[i].res ? hashed(4, (int64_t[]){N, O, OH, OW}, 14, 1.0f) : NULL;
    /* the reference: float64 takes the im2col path */
    ts_rt_tensor *xd = as_dtype(x, TS_DT_FLOAT64), *wd = as_dtype(w, TS_DT_FLOAT64);
    ts_rt_tensor *bd = as_dtype(b, TS_DT_FLOAT64), *rd = as_dtype(r, TS_DT_FLOAT64);
    ts_rt_kernel_fn fn = ts_rt_kernel_by_name("tsaot::conv2d_act");
    ts_iv in[10] = {ts_iv_tensor(xd),
                    ts_iv_tensor(wd),
                    bd ? ts_iv_tensor(bd) : ts_iv_none(),
                    ints2(1),
                    ints2(f2[i].p),
                    ints2(1),
                    ts_iv_int(1),
                    isinf(f2[i].lo) ? ts_iv_none() : ts_iv_double(f2[i].lo),
                    isinf(f2[i].hi) ? ts_iv_none() : ts_iv_double(f2[i].hi),
                    rd ? ts_iv_tensor(rd) : ts_iv_none()};
    ts_iv out[1] = {ts_iv_none()};
    ts_rt_call call = {.in = in, .nin = 10, .out = out, .nout = 1, .node = NULL};
    ctx.nthreads = 1;
    /* conv.c leaves OpenBLAS at the last run's thread count: the reference
     * on this thread alone (OpenBLAS's own threads are invisible to TSan) */
    openblas_set_num_threads(1);
    ts_rt_tensor *want = fn && TS_CHECK(fn(&ctx, &call)) ? as_dtype((ts_rt_tensor *)out[0].u.o, TS_DT_FLOAT32) : NULL;
    ts_iv_release(out[0]);
    for (int k = 3; k < 6; k++) ts_iv_release(in[k]);
    ts_rt_tensor *wc = fresh(w);
    static const int64_t passes[] = {0, 60000, 1};
    for (int threads = 1; want && threads <= 3; threads++)
      for (size_t k = 0; k < sizeof passes / sizeof *passes; k++) {
        ctx.nthreads = threads;
        ts_rt_wino_pass_bytes(passes[k]);
        run_act(n, x, wc, b, r, f2[i].p, f2[i].lo, f2[i].hi, want);
        TS_CHECK(ts_rt_storage_derived(wc->storage) != NULL); /* kept */
        ts_rt_tensor *wn = fresh(w);
        run_act(NULL, x, wn, b, r, f2[i].p, f2[i].lo, f2[i].hi, want);
        TS_CHECK(ts_rt_storage_derived(wn->storage) == NULL);
        ts_rt_tensor_release(wn);
      }
    ts_rt_wino_pass_bytes(0);
    ctx.nthreads = 1;
    ts_rt_tensor *all[10] = {x, w, b, r, xd, wd, bd, rd, wc, want};
    for (int k = 0; k < 10; k++)
      if (all[k]) ts_rt_tensor_release(all[k]);
  }
}

int main(void) {
  ts_rt_ctx_init(&ctx, 1);
  ts_diag d = {0};
  if (!ts_rt_kernels_init(&d)) fprintf(stderr, "kernel tables: %s", d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  test_weights();
  ts_graph *gc = conv_graph();
  const ts_node *n = NULL;
  if (TS_CHECK(gc != NULL))
    for (ts_node *k = ts_block_first(gc->block); k != gc->block->ret; k = k->next)
      if (ts_node_is(k, TS_K_aten_conv2d)) n = k;
  flat f;
  if (TS_CHECK(n != NULL) && flat_open(&f, "winograd")) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      int64_t OH = cases[i].H + 2 * cases[i].p - 2, OW = cases[i].W + 2 * cases[i].p - 2;
      ts_rt_tensor *want = NEXT(&f, cases[i].N, cases[i].O, OH, OW);
      if (want) test_case(n, i, want);
      if (want) ts_rt_tensor_release(want);
    }
    flat_close(&f);
  }
  if (n) test_f2(n);
  if (gc) ts_graph_free(gc);
  ts_rt_ctx_free(&ctx);
  return ts_test_finish();
}
