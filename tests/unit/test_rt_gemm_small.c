/* tests/unit/test_rt_gemm_small.c: runtime/kernels/gemm_small.c, the small-M
 * float32 GEMM over weights packed once, and its use by aten::linear.
 *
 * Row counts around the 4-row tile (M = 1, 3, 4, 8, 17, 33), K and N that are
 * not multiples of 16 (the last 32-column panel partly padding), with and
 * without a bias, packed from w^T (linear's weight) and from a [K, N]
 * matrix, A rows with a wider stride, 1 and 2 threads. The linear kernel
 * packs a weight made by a prim::Constant that nothing writes (once: the
 * copy is kept with the storage), and takes the general path for a weight
 * that a node writes, a weight that is not a constant and a transposed
 * input. Expected values are PyTorch 1.13's, in
 * tests/fixtures/composite/gemm_small.npy, made by
 *   /usr/bin/python3 tests/fixtures/make_gemm_small_cases.py */
#include <stdlib.h>
#include <string.h>

#include "composite_cases.h"
#include "kernels/gemm_small.h"
#include "passes.h"
#include "tensor_ops.h"

/* the fixture's cases, in order (make_gemm_small_cases.py's CASES) */
static const struct {
  int64_t M, K, N;
  bool bias;
} cases[] = {{1, 37, 45, true}, {3, 5, 70, false}, {8, 64, 33, true}, {17, 37, 45, false}, {33, 29, 97, true},
             {4, 1, 3, true}};

/* out = A @ B + bias through a pack, A's rows `pad` floats apart beyond K,
 * on 1 and 2 threads, against want. */
static void check_pack(const ts_rt_gemm_pack *p, const ts_rt_tensor *x, const ts_rt_tensor *b, const ts_rt_tensor *want,
                       int64_t pad) {
  int64_t M = x->sizes[0], K = x->sizes[1], N = want->sizes[1], lda = K + pad;
  float *a = malloc((size_t)(M * lda) * sizeof(float));
  for (int64_t i = 0; i < M; i++) {
    memcpy(a + i * lda, (const float *)ts_rt_tensor_data(x) + i * K, (size_t)K * sizeof(float));
    for (int64_t j = K; j < lda; j++) a[i * lda + j] = 1e30f; /* never read */
  }
  /* every variant this CPU can run (each only once: the cap goes down) */
  for (int isa = TS_RT_GEMM_ISA_AVX512, last = -1; isa >= TS_RT_GEMM_ISA_C; isa--) {
    int got = ts_rt_gemm_small_use(isa);
    if (got == last) continue;
    last = got;
    for (int threads = 1; threads <= 2; threads++) {
      ctx.nthreads = threads;
      int64_t sz[2] = {M, N};
      ts_rt_tensor *out = ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 2, sz, false);
      ts_rt_gemm_small(&ctx, p, M, a, lda, b ? ts_rt_tensor_data(b) : NULL, ts_rt_tensor_data(out), N);
      if (!check_close(out, want, 1e-5, 1e-4))
        fprintf(stderr, "  M=%lld K=%lld N=%lld pad=%lld threads=%d variant=%d\n", (long long)M, (long long)K,
                (long long)N, (long long)pad, threads, got);
      ts_rt_tensor_release(out);
    }
  }
  ts_rt_gemm_small_use(TS_RT_GEMM_ISA_AVX512);
  ctx.nthreads = 1;
  free(a);
}

/* Packs from w^T and from a [K, N] copy; the second request of a pack gives
 * the first. */
static void test_direct(ts_rt_tensor *x, ts_rt_tensor *w, ts_rt_tensor *b, ts_rt_tensor *want) {
  int64_t N = w->sizes[0], K = w->sizes[1];
  const float *wd = ts_rt_tensor_data(w);
  const ts_rt_gemm_pack *p = ts_rt_gemm_pack_get(w->storage, wd, K, N, 1, K);
  if (!TS_CHECK(p != NULL)) return;
  TS_CHECK(ts_rt_gemm_pack_get(w->storage, wd, K, N, 1, K) == p);
  TS_CHECK_INTEQ(ts_rt_gemm_pack_k(p), K);
  TS_CHECK_INTEQ(ts_rt_gemm_pack_n(p), N);
  check_pack(p, x, b, want, 0);
  check_pack(p, x, b, want, 3);
  int64_t ksz[2] = {K, N};
  ts_rt_tensor *wt = ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 2, ksz, false);
  float *wtd = ts_rt_tensor_data(wt);
  for (int64_t k = 0; k < K; k++)
    for (int64_t n = 0; n < N; n++) wtd[k * N + n] = wd[n * K + k];
  const ts_rt_gemm_pack *q = ts_rt_gemm_pack_get(wt->storage, wtd, K, N, N, 1);
  if (TS_CHECK(q != NULL)) check_pack(q, x, b, want, 0);
  ts_rt_tensor_release(wt);
}

/* A graph whose linear reads the constant %w, and with `extra` another use
 * of it: a view of %w (aten::t, an alias annotation: the alias analysis
 * decides, at compile time: ts_pass_mark_never_written) that aten::add_
 * writes, or that aten::relu only reads. */
static ts_graph *linear_graph(const char *extra) {
  char src[512];
  snprintf(src, sizeof src,
           "graph(%%x.1 : Tensor, %%b.1 : Tensor):\n"
           "  %%w : Tensor = prim::Constant[value=<Tensor>]()\n"
           "  %%one : int = prim::Constant[value=1]()\n"
           "  %%y : Tensor = aten::linear(%%x.1, %%w, %%b.1)\n"
           "%s"
           "  return (%%y)\n",
           extra ? extra : "");
  ts_diag d = {0};
  ts_graph *g = ts_graph_parse("t.ir", src, strlen(src), &d);
  if (g && !ts_pass_mark_never_written(g, &d)) {
    ts_graph_free(g);
    g = NULL;
  }
  if (!g) fprintf(stderr, "%s\n", d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  return g;
}

static const ts_node *find_linear(const ts_graph *g) {
  for (ts_node *n = ts_block_first(g->block); n != g->block->ret; n = n->next)
    if (ts_node_is(n, TS_K_aten_linear)) return n;
  return NULL;
}

/* aten::linear on (x, w, b) as node n (NULL: none) runs; the result is
 * want's. */
static void run_linear(const ts_node *n, ts_rt_tensor *x, ts_rt_tensor *w, ts_rt_tensor *b, ts_rt_tensor *want) {
  ts_rt_kernel_fn fn = ts_rt_kernel_by_name("aten::linear");
  if (!TS_CHECK(fn != NULL)) return;
  ts_iv in[3] = {ts_iv_tensor(x), ts_iv_tensor(w), b ? ts_iv_tensor(b) : ts_iv_none()};
  ts_iv out[1] = {ts_iv_none()};
  ts_rt_call call = {.in = in, .nin = 3, .out = out, .nout = 1, .node = n};
  if (!TS_CHECK(fn(&ctx, &call))) {
    fprintf(stderr, "  %s\n", ctx.err.data ? ctx.err.data : "?");
    ts_rt_clear_error(&ctx);
    return;
  }
  check_close((ts_rt_tensor *)out[0].u.o, want, 1e-5, 1e-4);
  ts_iv_release(out[0]);
}

/* A new copy of w: a storage of its own, with nothing derived yet. */
static ts_rt_tensor *fresh(const ts_rt_tensor *w) {
  ts_rt_tensor *t = ts_rt_tensor_new(&ctx, (ts_dtype)w->dtype, w->ndim, w->sizes, false);
  memcpy(ts_rt_tensor_data(t), ts_rt_tensor_data(w), (size_t)ts_rt_tensor_numel(w) * sizeof(float));
  return t;
}

static void test_kernel(ts_graph *gc, ts_graph *gw, ts_rt_tensor *x, ts_rt_tensor *w, ts_rt_tensor *b,
                        ts_rt_tensor *want) {
  const ts_node *lc = find_linear(gc), *lw = find_linear(gw);
  if (!TS_CHECK(lc && lw)) return;
  ts_iv in[3] = {ts_iv_none(), ts_iv_none(), ts_iv_none()};
  ts_rt_call probe = {.in = in, .nin = 3, .node = lc};
  TS_CHECK(ts_rt_call_input_const(&probe, 1));
  TS_CHECK(!ts_rt_call_input_const(&probe, 0)); /* a graph input */
  probe.node = lw;
  TS_CHECK(!ts_rt_call_input_const(&probe, 1)); /* aten::add_ writes its view */
  probe.node = NULL;
  TS_CHECK(!ts_rt_call_input_const(&probe, 1));

  bool small = x->sizes[0] <= TS_RT_GEMM_SMALL_MAX_M;
  /* a constant: packed on the first run (when M is small), kept after */
  ts_rt_tensor *wc = fresh(w);
  run_linear(lc, x, wc, b, want);
  const ts_rt_derived *d = ts_rt_storage_derived(wc->storage);
  TS_CHECK((d != NULL) == small);
  run_linear(lc, x, wc, b, want);
  TS_CHECK(ts_rt_storage_derived(wc->storage) == d);
  if (d) TS_CHECK(d->next == NULL);
  ts_rt_tensor_release(wc);
  /* no node: BLAS, nothing kept */
  ts_rt_tensor *ww = fresh(w);
  run_linear(NULL, x, ww, b, want);
  TS_CHECK(ts_rt_storage_derived(ww->storage) == NULL);
  /* written by another node: BLAS; only a mark kept (no pack), twice the same */
  run_linear(lw, x, ww, b, want);
  const ts_rt_derived *mark = ts_rt_storage_derived(ww->storage);
  run_linear(lw, x, ww, b, want);
  TS_CHECK(ts_rt_storage_derived(ww->storage) == mark);
  ts_iv win[3] = {ts_iv_tensor(x), ts_iv_tensor(ww), ts_iv_none()};
  ts_rt_call wcall = {.in = win, .nin = 3, .node = lw};
  TS_CHECK(ts_rt_gemm_pack_input(&wcall, 1, true, x->sizes[0]) == NULL);
  ts_rt_tensor_release(ww);
  /* x transposed (a [K, M] buffer seen as [M, K]): the general path */
  int64_t M = x->sizes[0], K = x->sizes[1];
  int64_t tsz[2] = {K, M};
  ts_rt_tensor *xt = ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 2, tsz, false);
  const float *xd = ts_rt_tensor_data(x);
  float *xtd = ts_rt_tensor_data(xt);
  for (int64_t i = 0; i < M; i++)
    for (int64_t k = 0; k < K; k++) xtd[k * M + i] = xd[i * K + k];
  int64_t vsz[2] = {M, K}, vst[2] = {1, M};
  ts_rt_tensor *xv = ts_rt_tensor_view(&ctx, xt, 0, 2, vsz, vst);
  ts_rt_tensor *wc2 = fresh(w);
  if (TS_CHECK(xv != NULL)) {
    run_linear(lc, xv, wc2, b, want);
    /* (one row or one column is still a unit-stride matrix) */
    TS_CHECK(K == 1 || M == 1 || ts_rt_storage_derived(wc2->storage) == NULL);
    ts_rt_tensor_release(xv);
  }
  ts_rt_tensor_release(wc2);
  ts_rt_tensor_release(xt);
}

int main(void) {
  ts_rt_ctx_init(&ctx, 1);
  ts_diag d = {0};
  if (!ts_rt_kernels_init(&d)) fprintf(stderr, "kernel tables: %s", d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  ts_graph *gc = linear_graph(NULL);
  ts_graph *gw = linear_graph("  %wt : Tensor = aten::t(%w)\n  %z : Tensor = aten::add_(%wt, %x.1, %one)\n");
  ts_graph *gr = linear_graph("  %wt : Tensor = aten::t(%w)\n  %z : Tensor = aten::relu(%wt)\n");
  if (TS_CHECK(gr != NULL)) {
    ts_iv in[3] = {ts_iv_none(), ts_iv_none(), ts_iv_none()};
    ts_rt_call probe = {.in = in, .nin = 3, .node = find_linear(gr)};
    TS_CHECK(probe.node && ts_rt_call_input_const(&probe, 1)); /* viewed, never written */
    if (probe.node) { /* not marked by the compiler: the runtime does not guess */
      probe.node->inputs[1]->node->flags = 0;
      TS_CHECK(!ts_rt_call_input_const(&probe, 1));
    }
    ts_graph_free(gr);
  }
  flat f;
  if (TS_CHECK(gc && gw) && flat_open(&f, "gemm_small")) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      int64_t M = cases[i].M, K = cases[i].K, N = cases[i].N;
      ts_rt_tensor *x = NEXT(&f, M, K), *w = NEXT(&f, N, K), *b = cases[i].bias ? NEXT(&f, N) : NULL;
      ts_rt_tensor *want = NEXT(&f, M, N);
      if (x && w && want && (!cases[i].bias || b)) {
        test_direct(x, w, b, want);
        test_kernel(gc, gw, x, w, b, want);
      }
      ts_rt_tensor *all[4] = {x, w, b, want};
      for (int k = 0; k < 4; k++)
        if (all[k]) ts_rt_tensor_release(all[k]);
    }
    flat_close(&f);
  }
  if (gc) ts_graph_free(gc);
  if (gw) ts_graph_free(gw);
  ts_rt_ctx_free(&ctx);
  return ts_test_finish();
}
