/* tests/unit/test_rt_shape.c: the shape and creation kernels (views sharing
 * storage, copies, advanced indexing, factories) against PyTorch 1.13's
 * values. Expected values come from Debian's torch; each group names the
 * python line that printed them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "tensor_ops.h"
#include "test.h"

static ts_rt_ctx ctx;

/* Our own tables, looked up directly so that this test does not depend on
 * the other kernel files (kernel.c binds them all). */
extern const ts_rt_kernel_def ts_rt_kernels_shape[];
extern const ts_rt_kernel_def ts_rt_kernels_creation[];

/* A contiguous tensor of dtype dt with values v (as doubles). */
static ts_rt_tensor *mk(ts_dtype dt, int32_t ndim, const int64_t *sizes, const double *v) {
  ts_rt_tensor *t = ts_rt_tensor_new(&ctx, dt, ndim, sizes, true);
  if (!t) return NULL;
  int64_t n = ts_rt_tensor_numel(t);
  char *p = ts_rt_tensor_data(t);
  for (int64_t i = 0; i < n && v; i++) ts_rt_store_f64(p + (size_t)i * ts_dtype_size(dt), dt, v[i]);
  return t;
}

/* arange(n) as float32 viewed in the given shape. */
static ts_rt_tensor *mk_arange(ts_dtype dt, int32_t ndim, const int64_t *sizes) {
  ts_rt_tensor *t = mk(dt, ndim, sizes, NULL);
  int64_t n = ts_rt_tensor_numel(t);
  char *p = ts_rt_tensor_data(t);
  for (int64_t i = 0; i < n; i++) ts_rt_store_f64(p + (size_t)i * ts_dtype_size(dt), dt, (double)i);
  return t;
}

/* Shape and values (row-major, any strides) of t. */
static bool chk(const ts_rt_tensor *t, ts_dtype dt, int32_t ndim, const int64_t *sizes, const double *want) {
  if (!TS_CHECK(t != NULL)) return false;
  bool ok = TS_CHECK_INTEQ(t->dtype, dt) & TS_CHECK_INTEQ(t->ndim, ndim);
  if (!ok) return false;
  for (int32_t d = 0; d < ndim; d++) ok &= TS_CHECK_INTEQ(t->sizes[d], sizes[d]);
  if (!ok) return false;
  int64_t n = ts_rt_tensor_numel(t), idx[TS_RT_MAX_DIMS] = {0};
  const char *base = t->storage->data;
  size_t esz = ts_dtype_size((ts_dtype)t->dtype);
  for (int64_t k = 0; k < n; k++) {
    int64_t off = t->offset;
    for (int32_t d = 0; d < ndim; d++) off += idx[d] * t->strides[d];
    double v = ts_rt_load_f64(base + (size_t)off * esz, (ts_dtype)t->dtype);
    if (v != want[k]) {
      fprintf(stderr, "element %lld: got %.17g, want %.17g\n", (long long)k, v, want[k]);
      return TS_CHECK(v == want[k]);
    }
    for (int32_t d = ndim - 1; d >= 0; d--) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
  return TS_CHECK(true);
}

static ts_iv iv_t(ts_rt_tensor *t) { return ts_iv_tensor(t); }

static ts_iv iv_ints(int n, const int64_t *v) {
  ts_rt_list *l = ts_rt_list_new(&ctx, ts_type_leaf(TS_TY_INT), (uint32_t)n);
  for (int i = 0; i < n; i++) ts_rt_list_append(&ctx, l, ts_iv_int(v[i]));
  return (ts_iv){.u.l = l, .tag = TS_IV_LIST};
}

/* A list of tensors (retained). */
static ts_iv iv_tensors(int n, ts_rt_tensor *const *ts) {
  ts_rt_list *l = ts_rt_list_new(&ctx, ts_type_leaf(TS_TY_TENSOR), (uint32_t)n);
  for (int i = 0; i < n; i++) {
    if (ts[i]) {
      ts_rt_tensor_retain(ts[i]);
      ts_rt_list_append(&ctx, l, ts_iv_tensor(ts[i]));
    } else {
      ts_rt_list_append(&ctx, l, ts_iv_none());
    }
  }
  return (ts_iv){.u.l = l, .tag = TS_IV_LIST};
}

/* Runs kernel `name` on in[0..n) (borrowed); result in *out (owned). On a
 * kernel error returns false with the message in ctx. */
static bool run(const char *name, const ts_iv *in, uint32_t n, ts_iv *out) {
  ts_rt_kernel_fn fn = NULL;
  for (const ts_rt_kernel_def *k = ts_rt_kernels_shape; k->schema && !fn; k++)
    if (strcmp(k->schema, name) == 0) fn = k->fn;
  for (const ts_rt_kernel_def *k = ts_rt_kernels_creation; k->schema && !fn; k++)
    if (strcmp(k->schema, name) == 0) fn = k->fn;
  if (!TS_CHECK(fn != NULL)) {
    fprintf(stderr, "  no kernel %s\n", name);
    return false;
  }
  ts_rt_clear_error(&ctx);
  ts_rt_call call = {in, n, out, 1, NULL};
  *out = ts_iv_none();
  return fn(&ctx, &call);
}

/* Runs and expects a tensor result (NULL on error). */
static ts_rt_tensor *run_t(const char *name, const ts_iv *in, uint32_t n) {
  ts_iv out;
  if (!run(name, in, n, &out)) {
    fprintf(stderr, "  %s failed: %s\n", name, ctx.err.data ? ctx.err.data : "");
    TS_CHECK(!"kernel failed");
    return NULL;
  }
  TS_CHECK_INTEQ(out.tag, TS_IV_TENSOR);
  return out.u.t;
}

/* Runs and expects an error with message `msg`. */
static void run_err(const char *name, const ts_iv *in, uint32_t n, const char *msg) {
  ts_iv out;
  bool ok = run(name, in, n, &out);
  if (ok) ts_iv_release(out);
  TS_CHECK(!ok);
  TS_CHECK_STREQ(ctx.err.data, msg);
}

/* python: x = torch.arange(6.).view(2, 3); x.t().view(6) fails; reshape copies */
static void test_view_reshape(void) {
  int64_t s6 = 6, s23[2] = {2, 3}, s32[2] = {3, 2};
  ts_rt_tensor *base = mk_arange(TS_DT_FLOAT32, 1, &s6);
  ts_rt_tensor *x = ts_rt_view(&ctx, base, 2, s23);
  TS_CHECK(x && x->storage == base->storage);
  ts_rt_tensor *xt = ts_rt_transpose(&ctx, x, 0, 1);
  TS_CHECK(xt && xt->storage == base->storage && xt->strides[0] == 1 && xt->strides[1] == 3);
  ts_iv in[2] = {iv_t(xt), iv_ints(1, &s6)};
  run_err("aten::view", in, 2,
          "view size is not compatible with input tensor's size and stride (at least one dimension spans across two "
          "contiguous subspaces). Use .reshape(...) instead.");
  /* python: torch.arange(6.).view(2,3).t().reshape(6).tolist() */
  ts_rt_tensor *r = run_t("aten::reshape", in, 2);
  static const double rv[] = {0, 3, 1, 4, 2, 5};
  chk(r, TS_DT_FLOAT32, 1, &s6, rv);
  TS_CHECK(r && r->storage != base->storage);
  ts_rt_tensor_release(r);
  ts_iv_release(in[1]);
  /* a reshape that can view shares storage */
  in[0] = iv_t(x);
  in[1] = iv_ints(2, s32);
  r = run_t("aten::reshape", in, 2);
  TS_CHECK(r && r->storage == base->storage);
  ts_rt_tensor_release(r);
  ts_iv_release(in[1]);
  int64_t bad[2] = {2, 5}, inf2[2] = {-1, -1}, m1[2] = {-1, 2};
  in[1] = iv_ints(2, bad);
  run_err("aten::view", in, 2, "shape '[2, 5]' is invalid for input of size 6");
  ts_iv_release(in[1]);
  in[1] = iv_ints(2, inf2);
  run_err("aten::view", in, 2, "only one dimension can be inferred");
  ts_iv_release(in[1]);
  in[1] = iv_ints(2, m1);
  r = run_t("aten::view", in, 2);
  static const double v32[] = {0, 1, 2, 3, 4, 5};
  chk(r, TS_DT_FLOAT32, 2, s32, v32);
  ts_rt_tensor_release(r);
  ts_iv_release(in[1]);
  /* a view of a non-contiguous tensor where strides allow: t().view(3, 2, 1) */
  int64_t s321[3] = {3, 2, 1};
  ts_rt_tensor *v3 = ts_rt_view(&ctx, xt, 3, s321);
  TS_CHECK(v3 && v3->storage == base->storage);
  static const double v3v[] = {0, 3, 1, 4, 2, 5};
  chk(v3, TS_DT_FLOAT32, 3, s321, v3v);
  ts_rt_tensor_release(v3);
  /* flatten(0, -1) of the transpose copies; contiguous() of x returns x */
  int64_t fl[3] = {0, -1};
  ts_iv fin[3] = {iv_t(xt), ts_iv_int(fl[0]), ts_iv_int(fl[1])};
  r = run_t("aten::flatten.using_ints", fin, 3);
  chk(r, TS_DT_FLOAT32, 1, &s6, rv);
  ts_rt_tensor_release(r);
  ts_iv cin[2] = {iv_t(x), ts_iv_int(0)};
  r = run_t("aten::contiguous", cin, 2);
  TS_CHECK(r == x);
  ts_rt_tensor_release(r);
  ts_rt_tensor_release(xt);
  ts_rt_tensor_release(x);
  ts_rt_tensor_release(base);
}

/* python: x = torch.arange(10.); x[-3:], x[::3], x[2:100], x[5:2] */
static void test_slice(void) {
  int64_t s10 = 10;
  ts_rt_tensor *x = mk_arange(TS_DT_FLOAT32, 1, &s10);
  ts_iv in[5] = {iv_t(x), ts_iv_int(0), ts_iv_int(-3), ts_iv_none(), ts_iv_int(1)};
  ts_rt_tensor *r = run_t("aten::slice.Tensor", in, 5);
  static const double a[] = {7, 8, 9};
  int64_t s3 = 3;
  chk(r, TS_DT_FLOAT32, 1, &s3, a);
  TS_CHECK(r && r->storage == x->storage && r->offset == 7);
  ts_rt_tensor_release(r);
  in[2] = ts_iv_none();
  in[4] = ts_iv_int(3);
  r = run_t("aten::slice.Tensor", in, 5);
  static const double b[] = {0, 3, 6, 9};
  int64_t s4 = 4;
  chk(r, TS_DT_FLOAT32, 1, &s4, b);
  TS_CHECK(r && r->strides[0] == 3);
  ts_rt_tensor_release(r);
  in[2] = ts_iv_int(2);
  in[3] = ts_iv_int(100);
  in[4] = ts_iv_int(1);
  r = run_t("aten::slice.Tensor", in, 5);
  int64_t s8 = 8;
  static const double c8[] = {2, 3, 4, 5, 6, 7, 8, 9};
  chk(r, TS_DT_FLOAT32, 1, &s8, c8);
  ts_rt_tensor_release(r);
  in[2] = ts_iv_int(5);
  in[3] = ts_iv_int(2);
  r = run_t("aten::slice.Tensor", in, 5);
  int64_t s0 = 0;
  chk(r, TS_DT_FLOAT32, 1, &s0, NULL);
  ts_rt_tensor_release(r);
  in[2] = ts_iv_int(-100);
  in[3] = ts_iv_int(-8);
  r = run_t("aten::slice.Tensor", in, 5);
  int64_t s2 = 2;
  static const double d2[] = {0, 1};
  chk(r, TS_DT_FLOAT32, 1, &s2, d2);
  ts_rt_tensor_release(r);
  in[4] = ts_iv_int(0);
  run_err("aten::slice.Tensor", in, 5, "slice step must be positive");
  in[4] = ts_iv_int(-1);
  run_err("aten::slice.Tensor", in, 5, "slice step must be positive");
  /* narrow: python: torch.arange(10.).narrow(0, -3, 2) -> [7, 8] */
  ts_iv nin[4] = {iv_t(x), ts_iv_int(0), ts_iv_int(-3), ts_iv_int(2)};
  r = run_t("aten::narrow", nin, 4);
  static const double n2[] = {7, 8};
  chk(r, TS_DT_FLOAT32, 1, &s2, n2);
  ts_rt_tensor_release(r);
  nin[2] = ts_iv_int(9);
  run_err("aten::narrow", nin, 4, "start (9) + length (2) exceeds dimension size (10).");
  ts_rt_tensor_release(x);
}

/* python: y = torch.arange(6.).view(2,3).t(); y[1].tolist(), y[:, -1].tolist() */
static void test_select_transposed(void) {
  int64_t s23[2] = {2, 3}, s2 = 2, s3 = 3;
  ts_rt_tensor *x = mk_arange(TS_DT_FLOAT32, 2, s23);
  ts_iv tin[1] = {iv_t(x)};
  ts_rt_tensor *y = run_t("aten::t", tin, 1);
  ts_iv in[3] = {iv_t(y), ts_iv_int(0), ts_iv_int(1)};
  ts_rt_tensor *r = run_t("aten::select.int", in, 3);
  static const double a[] = {1, 4};
  chk(r, TS_DT_FLOAT32, 1, &s2, a);
  ts_rt_tensor_release(r);
  in[1] = ts_iv_int(1);
  in[2] = ts_iv_int(-1);
  r = run_t("aten::select.int", in, 3);
  static const double b[] = {3, 4, 5};
  chk(r, TS_DT_FLOAT32, 1, &s3, b);
  ts_rt_tensor_release(r);
  in[2] = ts_iv_int(2);
  run_err("aten::select.int", in, 3, "select(): index 2 out of range for tensor of size [3, 2] at dimension 1");
  ts_rt_tensor_release(y);
  ts_rt_tensor_release(x);
}

/* Sizes along dim 0 of a list of tensors. */
static void chk_piece_sizes(ts_iv l, int n, const int64_t *want) {
  if (!TS_CHECK_INTEQ(l.tag, TS_IV_LIST) || !TS_CHECK_INTEQ(l.u.l->n, n)) return;
  for (int i = 0; i < n; i++) TS_CHECK_INTEQ(l.u.l->items[i].u.t->sizes[0], want[i]);
}

/* python: [t.shape for t in torch.arange(5).chunk(3)], .chunk(6), torch.arange(0).chunk(3), .split(2),
 * torch.arange(7).tensor_split([2, 5, 100]) */
static void test_chunk_split(void) {
  int64_t s5 = 5, s0 = 0, s7 = 7;
  ts_rt_tensor *x = mk_arange(TS_DT_INT64, 1, &s5);
  ts_iv in[3] = {iv_t(x), ts_iv_int(3), ts_iv_int(0)}, out;
  if (run("aten::chunk", in, 3, &out)) {
    static const int64_t w[] = {2, 2, 1};
    chk_piece_sizes(out, 3, w);
    TS_CHECK(out.u.l->items[2].u.t->storage == x->storage && out.u.l->items[2].u.t->offset == 4);
    ts_iv_release(out);
  }
  in[1] = ts_iv_int(6);
  if (TS_CHECK(run("aten::chunk", in, 3, &out))) {
    static const int64_t w[] = {1, 1, 1, 1, 1};
    chk_piece_sizes(out, 5, w);
    ts_iv_release(out);
  }
  in[1] = ts_iv_int(2);
  if (TS_CHECK(run("aten::split.Tensor", in, 3, &out))) {
    static const int64_t w[] = {2, 2, 1};
    chk_piece_sizes(out, 3, w);
    ts_iv_release(out);
  }
  int64_t sz[2] = {1, 4}, bad[2] = {1, 1};
  in[1] = iv_ints(2, sz);
  if (TS_CHECK(run("aten::split_with_sizes", in, 3, &out))) {
    chk_piece_sizes(out, 2, sz);
    ts_iv_release(out);
  }
  ts_iv_release(in[1]);
  in[1] = iv_ints(2, bad);
  run_err("aten::split_with_sizes", in, 3,
          "split_with_sizes expects split_sizes to sum exactly to 5 (input tensor's size at dimension 0), but got "
          "split_sizes=[1, 1]");
  ts_iv_release(in[1]);
  in[1] = ts_iv_int(0);
  run_err("aten::chunk", in, 3, "chunk expects `chunks` to be greater than 0, got: 0");
  ts_rt_tensor_release(x);
  x = mk(TS_DT_FLOAT32, 1, &s0, NULL);
  in[0] = iv_t(x);
  in[1] = ts_iv_int(3);
  if (TS_CHECK(run("aten::chunk", in, 3, &out))) {
    static const int64_t w[] = {0, 0, 0};
    chk_piece_sizes(out, 3, w);
    ts_iv_release(out);
  }
  ts_rt_tensor_release(x);
  x = mk_arange(TS_DT_INT64, 1, &s7);
  int64_t ind[3] = {2, 5, 100};
  in[0] = iv_t(x);
  in[1] = iv_ints(3, ind);
  if (TS_CHECK(run("aten::tensor_split.indices", in, 3, &out))) {
    static const int64_t w[] = {2, 3, 2, 0};
    chk_piece_sizes(out, 4, w);
    static const double v[] = {5, 6};
    int64_t s2 = 2;
    chk(out.u.l->items[2].u.t, TS_DT_INT64, 1, &s2, v);
    ts_iv_release(out);
  }
  ts_iv_release(in[1]);
  ts_rt_tensor_release(x);
}

/* python: torch.cat([torch.tensor([[1,2]],dtype=torch.int32), torch.tensor([[0.5,1.5]]),
 *                    torch.zeros(0, dtype=torch.float64)], 0)  -> float64 [[1, 2], [0.5, 1.5]]
 *         torch.cat([uint8 [[1,2]], int8 [[-1,3]]], 1) -> int16 [[1, 2, -1, 3]] */
static void test_cat(void) {
  int64_t s12[2] = {1, 2}, s0 = 0, s22[2] = {2, 2}, s14[2] = {1, 4};
  static const double a[] = {1, 2}, b[] = {0.5, 1.5}, c[] = {-1, 3};
  ts_rt_tensor *ts[3] = {mk(TS_DT_INT32, 2, s12, a), mk(TS_DT_FLOAT32, 2, s12, b), mk(TS_DT_FLOAT64, 1, &s0, NULL)};
  ts_iv in[2] = {iv_tensors(3, ts), ts_iv_int(0)};
  ts_rt_tensor *r = run_t("aten::cat", in, 2);
  static const double w[] = {1, 2, 0.5, 1.5};
  chk(r, TS_DT_FLOAT64, 2, s22, w);
  ts_rt_tensor_release(r);
  ts_iv_release(in[0]);
  for (int i = 0; i < 3; i++) ts_rt_tensor_release(ts[i]);
  ts[0] = mk(TS_DT_UINT8, 2, s12, a);
  ts[1] = mk(TS_DT_INT8, 2, s12, c);
  in[0] = iv_tensors(2, ts);
  in[1] = ts_iv_int(-1);
  r = run_t("aten::cat", in, 2);
  static const double w2[] = {1, 2, -1, 3};
  chk(r, TS_DT_INT16, 2, s14, w2);
  ts_rt_tensor_release(r);
  ts_iv_release(in[0]);
  /* stack along dim 1: python: torch.stack([uint8 [[1,2]], int8 [[-1,3]]], 1) -> int16 [[[1, 2], [-1, 3]]] */
  in[0] = iv_tensors(2, ts);
  in[1] = ts_iv_int(1);
  ts_rt_tensor *st = run_t("aten::stack", in, 2);
  int64_t s122[3] = {1, 2, 2};
  static const double w3[] = {1, 2, -1, 3};
  chk(st, TS_DT_INT16, 3, s122, w3);
  ts_rt_tensor_release(st);
  ts_iv_release(in[0]);
  for (int i = 0; i < 2; i++) ts_rt_tensor_release(ts[i]);
  int64_t s23[2] = {2, 3}, s33[2] = {3, 3};
  ts[0] = mk(TS_DT_FLOAT32, 2, s23, NULL);
  ts[1] = mk(TS_DT_FLOAT32, 2, s33, NULL);
  in[0] = iv_tensors(2, ts);
  in[1] = ts_iv_int(1);
  run_err("aten::cat", in, 2,
          "Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 for tensor number 1 in "
          "the list.");
  ts_iv_release(in[0]);
  for (int i = 0; i < 2; i++) ts_rt_tensor_release(ts[i]);
}

/* python: x3 = torch.arange(24).view(2,3,4)
 *   x3[:, [0,2], [1,3]] -> [[1, 11], [13, 23]]           (adjacent: stays in place)
 *   x3[[0,1], :, [1,3]] -> [[1, 5, 9], [15, 19, 23]]      (non-adjacent: moved first)
 *   x3[[[0],[1]], [0, 2]] -> shape [2, 2, 4] (broadcast)
 *   x = torch.arange(12.).view(3,4); x[x > 5.5] -> [6..11]; x[[True,False,True]] -> rows 0, 2
 *   x3[[-1], [-2]] -> [[16, 17, 18, 19]] */
static void test_index(void) {
  int64_t s234[3] = {2, 3, 4}, s2 = 2, s22[2] = {2, 2}, s23[2] = {2, 3};
  ts_rt_tensor *x3 = mk_arange(TS_DT_INT64, 3, s234);
  static const double i02[] = {0, 2}, i13[] = {1, 3}, i01[] = {0, 1};
  ts_rt_tensor *a = mk(TS_DT_INT64, 1, &s2, i02), *b = mk(TS_DT_INT64, 1, &s2, i13), *c = mk(TS_DT_INT64, 1, &s2, i01);
  ts_rt_tensor *idx[3] = {NULL, a, b};
  ts_iv in[2] = {iv_t(x3), iv_tensors(3, idx)};
  ts_rt_tensor *r = run_t("aten::index.Tensor", in, 2);
  static const double w1[] = {1, 11, 13, 23};
  chk(r, TS_DT_INT64, 2, s22, w1);
  ts_rt_tensor_release(r);
  ts_iv_release(in[1]);
  idx[0] = c;
  idx[1] = NULL;
  idx[2] = b;
  in[1] = iv_tensors(3, idx);
  r = run_t("aten::index.Tensor", in, 2);
  static const double w2[] = {1, 5, 9, 15, 19, 23};
  chk(r, TS_DT_INT64, 2, s23, w2);
  ts_rt_tensor_release(r);
  ts_iv_release(in[1]);
  int64_t s21[2] = {2, 1};
  ts_rt_tensor *col = mk(TS_DT_INT64, 2, s21, i01);
  idx[0] = col;
  idx[1] = a;
  in[1] = iv_tensors(2, idx);
  r = run_t("aten::index.Tensor", in, 2);
  int64_t s224[3] = {2, 2, 4};
  static const double w3[] = {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 20, 21, 22, 23};
  chk(r, TS_DT_INT64, 3, s224, w3);
  ts_rt_tensor_release(r);
  ts_iv_release(in[1]);
  int64_t s1 = 1;
  static const double m1[] = {-1}, m2[] = {-2};
  ts_rt_tensor *n1 = mk(TS_DT_INT64, 1, &s1, m1), *n2 = mk(TS_DT_INT64, 1, &s1, m2);
  idx[0] = n1;
  idx[1] = n2;
  in[1] = iv_tensors(2, idx);
  r = run_t("aten::index.Tensor", in, 2);
  int64_t s14[2] = {1, 4};
  static const double w4[] = {16, 17, 18, 19};
  chk(r, TS_DT_INT64, 2, s14, w4);
  ts_rt_tensor_release(r);
  ts_iv_release(in[1]);
  static const double big[] = {5};
  ts_rt_tensor *o = mk(TS_DT_INT64, 1, &s1, big);
  idx[0] = o;
  in[1] = iv_tensors(1, idx);
  run_err("aten::index.Tensor", in, 2, "index 5 is out of bounds for dimension 0 with size 2");
  ts_iv_release(in[1]);
  /* python: torch.ops.aten.index(torch.arange(6).view(2,3), [None, None, torch.tensor([0])]) */
  idx[0] = NULL;
  idx[1] = NULL;
  idx[2] = o;
  ts_iv in2[2] = {iv_t(ts_rt_select(&ctx, x3, 0, 0)), iv_tensors(3, idx)};
  run_err("aten::index.Tensor", in2, 2, "too many indices for tensor of dimension 2 (got 3)");
  ts_iv_release(in2[0]);
  ts_iv_release(in2[1]);
  ts_rt_tensor_release(o);
  ts_rt_tensor_release(n1);
  ts_rt_tensor_release(n2);
  ts_rt_tensor_release(col);
  /* bool masks */
  int64_t s34[2] = {3, 4}, s6 = 6, s3 = 3, s24[2] = {2, 4};
  ts_rt_tensor *x = mk_arange(TS_DT_FLOAT32, 2, s34);
  double mv[12];
  for (int i = 0; i < 12; i++) mv[i] = i > 5.5;
  ts_rt_tensor *mask = mk(TS_DT_BOOL, 2, s34, mv);
  idx[0] = mask;
  in[0] = iv_t(x);
  in[1] = iv_tensors(1, idx);
  r = run_t("aten::index.Tensor", in, 2);
  static const double w5[] = {6, 7, 8, 9, 10, 11};
  chk(r, TS_DT_FLOAT32, 1, &s6, w5);
  ts_rt_tensor_release(r);
  ts_iv_release(in[1]);
  static const double rows[] = {1, 0, 1};
  ts_rt_tensor *rm = mk(TS_DT_BOOL, 1, &s3, rows);
  idx[0] = rm;
  in[1] = iv_tensors(1, idx);
  r = run_t("aten::index.Tensor", in, 2);
  static const double w6[] = {0, 1, 2, 3, 8, 9, 10, 11};
  chk(r, TS_DT_FLOAT32, 2, s24, w6);
  ts_rt_tensor_release(r);
  ts_iv_release(in[1]);
  /* masked_select: python: torch.arange(12.).view(3,4).masked_select(torch.tensor([True,False,False,True])) */
  static const double mrow[] = {1, 0, 0, 1};
  ts_rt_tensor *mr = mk(TS_DT_BOOL, 1, &s34[1], mrow);
  ts_iv min[2] = {iv_t(x), iv_t(mr)};
  r = run_t("aten::masked_select", min, 2);
  static const double w7[] = {0, 3, 4, 7, 8, 11};
  chk(r, TS_DT_FLOAT32, 1, &s6, w7);
  ts_rt_tensor_release(r);
  /* python: torch.arange(12.).view(3,4).masked_select(torch.tensor([True,False,True])) */
  ts_rt_tensor *m3 = mk(TS_DT_BOOL, 1, &s3, rows);
  min[1] = iv_t(m3);
  run_err("aten::masked_select", min, 2,
          "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1");
  ts_rt_tensor_release(m3);
  /* nonzero: python: torch.tensor([[0,1],[2,0]]).nonzero() -> [[0, 1], [1, 0]] */
  static const double nzv[] = {0, 1, 2, 0};
  ts_rt_tensor *nz = mk(TS_DT_INT32, 2, s22, nzv);
  ts_iv nin[1] = {iv_t(nz)};
  r = run_t("aten::nonzero", nin, 1);
  static const double w8[] = {0, 1, 1, 0};
  chk(r, TS_DT_INT64, 2, s22, w8);
  ts_rt_tensor_release(r);
  ts_rt_tensor_release(nz);
  ts_rt_tensor_release(mr);
  ts_rt_tensor_release(rm);
  ts_rt_tensor_release(mask);
  ts_rt_tensor_release(x);
  ts_rt_tensor_release(a);
  ts_rt_tensor_release(b);
  ts_rt_tensor_release(c);
  ts_rt_tensor_release(x3);
}

/* python: y = torch.arange(12.).view(3,4)
 *   torch.gather(y, 1, torch.tensor([[0,3],[1,1],[2,0]])) -> [[0, 3], [5, 5], [10, 8]]
 *   y.index_select(1, torch.tensor([3,0])) -> [[3, 0], [7, 4], [11, 8]]
 *   y.flip(0,1); y.roll(1, 1); y.roll(5); torch.tensor([[1,2]]).repeat(2,1,2) */
static void test_copies(void) {
  int64_t s34[2] = {3, 4}, s32[2] = {3, 2}, s2 = 2;
  ts_rt_tensor *y = mk_arange(TS_DT_FLOAT32, 2, s34);
  static const double gi[] = {0, 3, 1, 1, 2, 0}, ii[] = {3, 0};
  ts_rt_tensor *g = mk(TS_DT_INT64, 2, s32, gi), *is = mk(TS_DT_INT64, 1, &s2, ii);
  ts_iv in[4] = {iv_t(y), ts_iv_int(1), iv_t(g), ts_iv_bool(false)};
  ts_rt_tensor *r = run_t("aten::gather", in, 4);
  static const double w1[] = {0, 3, 5, 5, 10, 8};
  chk(r, TS_DT_FLOAT32, 2, s32, w1);
  ts_rt_tensor_release(r);
  in[2] = iv_t(is);
  r = run_t("aten::index_select", in, 3);
  static const double w2[] = {3, 0, 7, 4, 11, 8};
  chk(r, TS_DT_FLOAT32, 2, s32, w2);
  ts_rt_tensor_release(r);
  int64_t d01[2] = {0, 1}, one = 1, five = 5;
  ts_iv fin[2] = {iv_t(y), iv_ints(2, d01)};
  r = run_t("aten::flip", fin, 2);
  static const double w3[] = {11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  chk(r, TS_DT_FLOAT32, 2, s34, w3);
  ts_rt_tensor_release(r);
  ts_iv_release(fin[1]);
  ts_iv rin[3] = {iv_t(y), iv_ints(1, &one), iv_ints(1, &one)};
  r = run_t("aten::roll", rin, 3);
  static const double w4[] = {3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10};
  chk(r, TS_DT_FLOAT32, 2, s34, w4);
  ts_rt_tensor_release(r);
  ts_iv_release(rin[1]);
  ts_iv_release(rin[2]);
  rin[1] = iv_ints(1, &five);
  rin[2] = iv_ints(0, NULL);
  r = run_t("aten::roll", rin, 3);
  static const double w5[] = {7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 6};
  chk(r, TS_DT_FLOAT32, 2, s34, w5);
  ts_rt_tensor_release(r);
  ts_iv_release(rin[1]);
  ts_iv_release(rin[2]);
  /* repeat on a transposed (non-contiguous) input: python: torch.arange(6.).view(2,3).t().repeat(1, 2) */
  int64_t s23[2] = {2, 3}, rep[2] = {1, 2}, s34b[2] = {3, 4};
  ts_rt_tensor *x = mk_arange(TS_DT_FLOAT32, 2, s23);
  ts_rt_tensor *xt = ts_rt_transpose(&ctx, x, 0, 1);
  ts_iv pin[2] = {iv_t(xt), iv_ints(2, rep)};
  r = run_t("aten::repeat", pin, 2);
  static const double w6[] = {0, 3, 0, 3, 1, 4, 1, 4, 2, 5, 2, 5};
  chk(r, TS_DT_FLOAT32, 2, s34b, w6);
  ts_rt_tensor_release(r);
  ts_iv_release(pin[1]);
  /* expand: stride 0, shared storage: python: torch.arange(3.).view(3,1).expand(2,-1,2) */
  int64_t e[3] = {2, -1, 2};
  int64_t s1[2] = {3, 1};
  ts_rt_tensor *c31 = mk_arange(TS_DT_FLOAT32, 2, s1);
  ts_iv ein[3] = {iv_t(c31), iv_ints(3, e), ts_iv_bool(false)};
  r = run_t("aten::expand", ein, 3);
  int64_t s232[3] = {2, 3, 2};
  static const double w7[] = {0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2};
  chk(r, TS_DT_FLOAT32, 3, s232, w7);
  TS_CHECK(r && r->strides[0] == 0 && r->strides[2] == 0 && r->storage == c31->storage);
  ts_rt_tensor_release(r);
  ts_iv_release(ein[1]);
  ts_rt_tensor_release(c31);
  ts_rt_tensor_release(xt);
  ts_rt_tensor_release(x);
  ts_rt_tensor_release(g);
  ts_rt_tensor_release(is);
  ts_rt_tensor_release(y);
}

/* In-place writes through select/slice/transpose views reach the base. */
static void test_write_through(void) {
  int64_t s34[2] = {3, 4}, s4 = 4, s3 = 3;
  ts_rt_tensor *x = mk(TS_DT_FLOAT32, 2, s34, NULL);
  static const double ones4[] = {1, 1, 1, 1}, twos3[] = {2, 2, 2};
  ts_rt_tensor *row = ts_rt_select(&ctx, x, 0, 1);
  ts_rt_tensor *src = mk(TS_DT_FLOAT32, 1, &s4, ones4);
  ts_iv in[2] = {iv_t(row), iv_t(src)};
  ts_rt_tensor *r = run_t("aten::copy_", in, 2);
  TS_CHECK(r == row);
  ts_rt_tensor_release(r);
  /* column 2 through a transpose, then every other column of row 2 through a slice */
  ts_rt_tensor *xt = ts_rt_transpose(&ctx, x, 0, 1);
  ts_rt_tensor *c2 = ts_rt_select(&ctx, xt, 0, 2);
  ts_rt_tensor *src3 = mk(TS_DT_FLOAT32, 1, &s3, twos3);
  TS_CHECK(ts_rt_tensor_copy_(&ctx, c2, src3));
  ts_rt_tensor *r2 = ts_rt_select(&ctx, x, 0, 2);
  ts_rt_tensor *every = ts_rt_slice(&ctx, r2, 0, 1, INT64_MAX, 2);
  ts_iv fin[2] = {iv_t(every), ts_iv_double(7.0)};
  r = run_t("aten::copy_.float", fin, 2);
  ts_rt_tensor_release(r);
  /* python: x = torch.zeros(3,4); x[1] = 1; x.t()[2] = 2; x[2][1::2] = 7 */
  static const double w[] = {0, 0, 2, 0, 1, 1, 2, 1, 0, 7, 2, 7};
  chk(x, TS_DT_FLOAT32, 2, s34, w);
  ts_rt_tensor_release(every);
  ts_rt_tensor_release(r2);
  ts_rt_tensor_release(src3);
  ts_rt_tensor_release(c2);
  ts_rt_tensor_release(xt);
  ts_rt_tensor_release(src);
  ts_rt_tensor_release(row);
  ts_rt_tensor_release(x);
}

/* python: torch.arange(5) -> int64; torch.arange(1, 2.5, 0.5) -> float32 [1, 1.5, 2];
 * torch.arange(0, 1, 0.1).tolist(); torch.arange(10, 0, -3); torch.arange(2.5, dtype=torch.int32) */
static void test_arange(void) {
  ts_iv in[7] = {ts_iv_int(5), ts_iv_none(), ts_iv_none(), ts_iv_none(), ts_iv_none()};
  ts_rt_tensor *r = run_t("aten::arange", in, 5);
  int64_t s5 = 5, s3 = 3, s10 = 10, s4 = 4;
  static const double w1[] = {0, 1, 2, 3, 4};
  chk(r, TS_DT_INT64, 1, &s5, w1);
  ts_rt_tensor_release(r);
  ts_iv sin[7] = {ts_iv_int(1), ts_iv_double(2.5), ts_iv_double(0.5), ts_iv_none(), ts_iv_none(), ts_iv_none(),
                  ts_iv_none()};
  r = run_t("aten::arange.start_step", sin, 7);
  static const double w2[] = {1, 1.5, 2};
  chk(r, TS_DT_FLOAT32, 1, &s3, w2);
  ts_rt_tensor_release(r);
  sin[0] = ts_iv_int(0);
  sin[1] = ts_iv_int(1);
  sin[2] = ts_iv_double(0.1);
  r = run_t("aten::arange.start_step", sin, 7);
  static const double w3[] = {0.0, 0.10000000149011612, 0.20000000298023224, 0.30000001192092896,
                              0.4000000059604645, 0.5, 0.6000000238418579, 0.699999988079071,
                              0.800000011920929, 0.8999999761581421};
  chk(r, TS_DT_FLOAT32, 1, &s10, w3);
  ts_rt_tensor_release(r);
  /* PyTorch's vectorised fill rounds each 8-lane base to float first:
   * python: torch.arange(-1.3, 4.805, 0.37).tolist() */
  sin[0] = ts_iv_double(-1.3);
  sin[1] = ts_iv_double(4.805);
  sin[2] = ts_iv_double(0.37);
  r = run_t("aten::arange.start_step", sin, 7);
  static const double wv[] = {-1.2999999523162842, -0.9299999475479126, -0.559999942779541, -0.18999995291233063,
                              0.18000005185604095, 0.5500000715255737,  0.9200000762939453, 1.290000081062317,
                              1.659999966621399,   2.0299999713897705,  2.3999998569488525, 2.7699999809265137,
                              3.1399998664855957,  3.509999990463257,   3.879999876022339,  4.25,
                              4.619999885559082};
  int64_t s17 = 17;
  chk(r, TS_DT_FLOAT32, 1, &s17, wv);
  ts_rt_tensor_release(r);
  sin[0] = ts_iv_int(10);
  sin[1] = ts_iv_int(0);
  sin[2] = ts_iv_int(-3);
  r = run_t("aten::arange.start_step", sin, 7);
  static const double w4[] = {10, 7, 4, 1};
  chk(r, TS_DT_INT64, 1, &s4, w4);
  ts_rt_tensor_release(r);
  sin[2] = ts_iv_int(0);
  run_err("aten::arange.start_step", sin, 7, "step must be nonzero");
  sin[2] = ts_iv_int(1);
  run_err("aten::arange.start_step", sin, 7, "upper bound and larger bound inconsistent with step sign");
  in[0] = ts_iv_double(2.5);
  in[1] = ts_iv_int(TS_DT_INT32);
  r = run_t("aten::arange", in, 5);
  chk(r, TS_DT_INT32, 1, &s3, w1);
  ts_rt_tensor_release(r);
}

/* python (TorchScript): torch.tensor([[1,2],[3,4]]) -> int64; torch.tensor([x, 2.0]) -> float32;
 * torch.tensor([[1.0]], dtype=torch.int32); torch.tensor([[1.0]][0:0]) -> float32 shape [0];
 * torch.full((2,), 7) -> int64; torch.eye(2, 3); prim::NumToTensor(3.5) -> float64 */
static void test_creation(void) {
  ts_arena ar;
  ts_arena_init(&ar, 0);
  const ts_type *fl = ts_type_list(&ar, ts_type_leaf(TS_TY_FLOAT));
  const ts_type *il = ts_type_list(&ar, ts_type_leaf(TS_TY_INT));
  ts_rt_list *outer = ts_rt_list_new(&ctx, il, 2);
  for (int i = 0; i < 2; i++) {
    ts_rt_list *in = ts_rt_list_new(&ctx, ts_type_leaf(TS_TY_INT), 2);
    ts_rt_list_append(&ctx, in, ts_iv_int(2 * i + 1));
    ts_rt_list_append(&ctx, in, ts_iv_int(2 * i + 2));
    ts_rt_list_append(&ctx, outer, (ts_iv){.u.l = in, .tag = TS_IV_LIST});
  }
  ts_iv in[4] = {{.u.l = outer, .tag = TS_IV_LIST}, ts_iv_none(), ts_iv_none(), ts_iv_bool(false)};
  ts_rt_tensor *r = run_t("aten::tensor", in, 4);
  int64_t s22[2] = {2, 2}, s0 = 0, s2 = 2, s23[2] = {2, 3}, s11[2] = {1, 1};
  static const double w1[] = {1, 2, 3, 4};
  chk(r, TS_DT_INT64, 2, s22, w1);
  ts_rt_tensor_release(r);
  in[1] = ts_iv_int(TS_DT_FLOAT64);
  r = run_t("aten::tensor", in, 4);
  chk(r, TS_DT_FLOAT64, 2, s22, w1);
  ts_rt_tensor_release(r);
  /* ragged */
  outer->items[1].u.l->n = 1;
  in[1] = ts_iv_none();
  run_err("aten::tensor", in, 4, "Expected sequence of length 2 at dim 1 (got 1)");
  outer->items[1].u.l->n = 2;
  ts_iv_release(in[0]);
  /* float list, and an empty list of float lists */
  ts_rt_list *f = ts_rt_list_new(&ctx, ts_type_leaf(TS_TY_FLOAT), 2);
  ts_rt_list_append(&ctx, f, ts_iv_double(1.5));
  ts_rt_list_append(&ctx, f, ts_iv_double(2.0));
  in[0] = (ts_iv){.u.l = f, .tag = TS_IV_LIST};
  r = run_t("aten::tensor", in, 4);
  static const double w2[] = {1.5, 2.0};
  chk(r, TS_DT_FLOAT32, 1, &s2, w2);
  ts_rt_tensor_release(r);
  ts_iv_release(in[0]);
  ts_rt_list *e = ts_rt_list_new(&ctx, fl, 0);
  in[0] = (ts_iv){.u.l = e, .tag = TS_IV_LIST};
  r = run_t("aten::tensor", in, 4);
  chk(r, TS_DT_FLOAT32, 1, &s0, NULL);
  ts_rt_tensor_release(r);
  ts_iv_release(in[0]);
  /* tensor.float with an int dtype */
  ts_iv sc[4] = {ts_iv_double(2.7), ts_iv_int(TS_DT_INT32), ts_iv_none(), ts_iv_bool(false)};
  r = run_t("aten::tensor.float", sc, 4);
  static const double w3[] = {2};
  chk(r, TS_DT_INT32, 0, NULL, w3);
  ts_rt_tensor_release(r);
  /* full with an int fill value is int64 */
  int64_t two = 2;
  ts_iv fin[6] = {iv_ints(1, &two), ts_iv_int(7), ts_iv_none(), ts_iv_none(), ts_iv_none(), ts_iv_none()};
  r = run_t("aten::full", fin, 6);
  static const double w4[] = {7, 7};
  chk(r, TS_DT_INT64, 1, &s2, w4);
  ts_rt_tensor_release(r);
  fin[1] = ts_iv_double(-0.5);
  r = run_t("aten::full", fin, 6);
  static const double w5[] = {-0.5, -0.5};
  chk(r, TS_DT_FLOAT32, 1, &s2, w5);
  ts_rt_tensor_release(r);
  ts_iv_release(fin[0]);
  ts_iv ein[6] = {ts_iv_int(2), ts_iv_int(3), ts_iv_none(), ts_iv_none(), ts_iv_none(), ts_iv_none()};
  r = run_t("aten::eye.m", ein, 6);
  static const double w6[] = {1, 0, 0, 0, 1, 0};
  chk(r, TS_DT_FLOAT32, 2, s23, w6);
  ts_rt_tensor_release(r);
  ts_iv nin[1] = {ts_iv_double(3.5)};
  r = run_t("prim::NumToTensor.Scalar", nin, 1);
  static const double w7[] = {3.5};
  chk(r, TS_DT_FLOAT64, 0, NULL, w7);
  ts_rt_tensor_release(r);
  nin[0] = ts_iv_int(3);
  r = run_t("prim::NumToTensor.Scalar", nin, 1);
  static const double w8[] = {3};
  chk(r, TS_DT_INT64, 0, NULL, w8);
  /* zeros_like keeps the dtype; ones with dtype */
  ts_iv lin[6] = {iv_t(r), ts_iv_none(), ts_iv_none(), ts_iv_none(), ts_iv_none(), ts_iv_none()};
  ts_rt_tensor *z = run_t("aten::ones_like", lin, 6);
  static const double w9[] = {1};
  chk(z, TS_DT_INT64, 0, NULL, w9);
  ts_rt_tensor_release(z);
  ts_rt_tensor_release(r);
  ts_iv oin[5] = {iv_ints(2, s11), ts_iv_int(TS_DT_BOOL), ts_iv_none(), ts_iv_none(), ts_iv_none()};
  r = run_t("aten::ones", oin, 5);
  chk(r, TS_DT_BOOL, 2, s11, w9);
  ts_rt_tensor_release(r);
  ts_device cuda = {TS_DEV_CUDA, 0};
  oin[3] = ts_iv_device(cuda);
  run_err("aten::ones", oin, 5, "tsaot runs on CPU: cannot create a tensor on device 'cuda:0'");
  ts_iv_release(oin[0]);
  ts_arena_release(&ar);
}

/* size, dim, numel, item, to */
static void test_metadata(void) {
  int64_t s23[2] = {2, 3};
  ts_rt_tensor *x = mk_arange(TS_DT_FLOAT32, 2, s23);
  ts_iv in[6] = {iv_t(x)}, out;
  if (TS_CHECK(run("aten::size", in, 1, &out))) {
    TS_CHECK_INTEQ(out.u.l->n, 2);
    TS_CHECK_INTEQ(out.u.l->items[1].u.i, 3);
    ts_iv_release(out);
  }
  in[1] = ts_iv_int(-1);
  if (TS_CHECK(run("aten::size.int", in, 2, &out))) TS_CHECK_INTEQ(out.u.i, 3);
  if (TS_CHECK(run("aten::numel", in, 1, &out))) TS_CHECK_INTEQ(out.u.i, 6);
  if (TS_CHECK(run("aten::len.Tensor", in, 1, &out))) TS_CHECK_INTEQ(out.u.i, 2);
  run_err("aten::item", in, 1, "a Tensor with 6 elements cannot be converted to Scalar");
  /* to(dtype) with the same dtype and copy=False is self */
  in[1] = ts_iv_int(TS_DT_FLOAT32);
  in[2] = ts_iv_bool(false);
  in[3] = ts_iv_bool(false);
  in[4] = ts_iv_none();
  ts_rt_tensor *r = run_t("aten::to.dtype", in, 5);
  TS_CHECK(r == x);
  ts_rt_tensor_release(r);
  in[1] = ts_iv_int(TS_DT_INT64);
  r = run_t("aten::to.dtype", in, 5);
  static const double w[] = {0, 1, 2, 3, 4, 5};
  chk(r, TS_DT_INT64, 2, s23, w);
  ts_rt_tensor *sel = ts_rt_select(&ctx, r, 1, 2);
  ts_rt_tensor *one = ts_rt_select(&ctx, sel, 0, 1);
  ts_iv iin[1] = {iv_t(one)};
  if (TS_CHECK(run("aten::item", iin, 1, &out))) {
    TS_CHECK_INTEQ(out.tag, TS_IV_INT);
    TS_CHECK_INTEQ(out.u.i, 5);
  }
  ts_rt_tensor_release(one);
  ts_rt_tensor_release(sel);
  ts_rt_tensor_release(r);
  ts_rt_tensor_release(x);
}

int main(void) {
  ts_rt_ctx_init(&ctx, 2);
  test_view_reshape();
  test_slice();
  test_select_transposed();
  test_chunk_split();
  test_cat();
  test_index();
  test_copies();
  test_write_through();
  test_arange();
  test_creation();
  test_metadata();
  ts_rt_ctx_free(&ctx);
  return ts_test_finish();
}
