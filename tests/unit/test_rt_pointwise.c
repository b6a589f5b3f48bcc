/* tests/unit/test_rt_pointwise.c: the elementwise kernels (kernels/pointwise.c)
 * and the iterator (kernels/iter.c): broadcasting, type promotion, strided
 * and empty operands, in-place writes through views, every dtype, and
 * PyTorch's error messages.
 *
 * Expected values come from PyTorch 1.13 (/usr/bin/python3, torch): each
 * check names the expression it was computed from, e.g.
 *   python3 -c 'import torch; print(torch.tensor([1,2,3]) + 2.5)'
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "tensor_ops.h"
#include "test.h"

static ts_rt_ctx C;

extern const ts_rt_kernel_def *ts_rt_kernels_pointwise(void);

/* A contiguous tensor of dtype dt from doubles. */
static ts_rt_tensor *mk(ts_dtype dt, int32_t nd, const int64_t *sizes, const double *v) {
  ts_rt_tensor *t = ts_rt_tensor_new(&C, dt, nd, sizes, false);
  if (!t) return NULL;
  int64_t n = ts_rt_tensor_numel(t);
  size_t es = ts_dtype_size(dt);
  for (int64_t i = 0; i < n; i++) ts_rt_store_f64((char *)ts_rt_tensor_data(t) + i * es, dt, v[i]);
  return t;
}

#define SZ(...) ((const int64_t[]){__VA_ARGS__})
#define VS(...) ((const double[]){__VA_ARGS__})

/* Runs a kernel by schema name on n inputs; the result tensor (new) or NULL
 * with the error in C. */
static ts_rt_tensor *run(const char *schema, const ts_iv *in, uint32_t n) {
  ts_rt_kernel_fn fn = ts_rt_kernel_by_name(schema);
  if (!TS_CHECK(fn != NULL)) {
    fprintf(stderr, "  no kernel for %s\n", schema);
    return NULL;
  }
  ts_iv out = ts_iv_none();
  ts_rt_call call = {in, n, &out, 1, NULL};
  ts_rt_clear_error(&C);
  if (!fn(&C, &call)) return NULL;
  if (!TS_CHECK(out.tag == TS_IV_TENSOR)) {
    ts_iv_release(out);
    return NULL;
  }
  return out.u.t;
}

static ts_iv TV(ts_rt_tensor *t) { return ts_iv_tensor(t); }

/* Checks dtype, shape and values (NaN equals NaN; relative tolerance tol). */
static bool same(const ts_rt_tensor *t, ts_dtype dt, int32_t nd, const int64_t *sizes, const double *want, double tol,
                 int line) {
  if (!t) {
    fprintf(stderr, "line %d: no result: %s\n", line, C.err.data ? C.err.data : "");
    return TS_CHECK(t != NULL);
  }
  bool ok = TS_CHECK(t->dtype == dt) && TS_CHECK(t->ndim == nd);
  if (!ok) {
    fprintf(stderr, "line %d: dtype %d ndim %d\n", line, t->dtype, t->ndim);
    return false;
  }
  int64_t n = 1;
  for (int32_t i = 0; i < nd; i++) {
    if (!TS_CHECK(t->sizes[i] == sizes[i])) {
      fprintf(stderr, "line %d: size %d is %lld\n", line, i, (long long)t->sizes[i]);
      return false;
    }
    n *= sizes[i];
  }
  int64_t idx[TS_RT_MAX_DIMS] = {0};
  size_t es = ts_dtype_size(dt);
  for (int64_t k = 0; k < n; k++) {
    int64_t off = t->offset;
    for (int32_t i = 0; i < nd; i++) off += idx[i] * t->strides[i];
    double v = ts_rt_load_f64((char *)t->storage->data + off * (int64_t)es, dt);
    bool eq = (isnan(v) && isnan(want[k])) || v == want[k] || fabs(v - want[k]) <= tol * fabs(want[k]);
    if (!TS_CHECK(eq)) {
      fprintf(stderr, "line %d: element %lld is %.10g, want %.10g\n", line, (long long)k, v, want[k]);
      return false;
    }
    for (int32_t i = nd - 1; i >= 0; i--) {
      if (++idx[i] < sizes[i]) break;
      idx[i] = 0;
    }
  }
  return true;
}

#define SAME(t, dt, nd, sizes, want) same(t, dt, nd, sizes, want, 1e-6, __LINE__)

/* Runs schema on in[] (released after), checks the result, releases it. */
static void expect(const char *schema, ts_iv *in, uint32_t n, ts_dtype dt, int32_t nd, const int64_t *sizes,
                   const double *want, int line) {
  ts_rt_tensor *r = run(schema, in, n);
  if (!r) fprintf(stderr, "line %d: %s failed: %s\n", line, schema, C.err.data ? C.err.data : "");
  same(r, dt, nd, sizes, want, 1e-6, line);
  if (r) ts_rt_tensor_release(r);
  for (uint32_t i = 0; i < n; i++) ts_iv_release(in[i]);
}

#define EXPECT(schema, ins, dt, nd, sizes, want)                                                                   \
  expect(schema, ins, (uint32_t)(sizeof ins / sizeof(ts_iv)), dt, nd, sizes, want, __LINE__)

/* Runs schema, expecting the error message msg. */
static void expect_err(const char *schema, ts_iv *in, uint32_t n, const char *msg, int line) {
  ts_rt_tensor *r = run(schema, in, n);
  if (r) {
    fprintf(stderr, "line %d: %s succeeded, expected an error\n", line, schema);
    TS_CHECK(r == NULL);
    ts_rt_tensor_release(r);
  } else {
    if (!TS_CHECK_STREQ(C.err.data, msg)) fprintf(stderr, "  (line %d)\n", line);
  }
  for (uint32_t i = 0; i < n; i++) ts_iv_release(in[i]);
}

#define EXPECT_ERR(schema, ins, msg) expect_err(schema, ins, (uint32_t)(sizeof ins / sizeof(ts_iv)), msg, __LINE__)

static ts_iv F32(int32_t nd, const int64_t *sizes, const double *v) { return TV(mk(TS_DT_FLOAT32, nd, sizes, v)); }
static ts_iv I64(int32_t nd, const int64_t *sizes, const double *v) { return TV(mk(TS_DT_INT64, nd, sizes, v)); }
static ts_iv TT(ts_dtype dt, int32_t nd, const int64_t *sizes, const double *v) { return TV(mk(dt, nd, sizes, v)); }
static ts_iv S(const char *s) { return (ts_iv){.u.s = ts_rt_str_new(&C, s, strlen(s)), .tag = TS_IV_STR}; }

static void test_broadcast(void) {
  /* torch.tensor([[1.],[2.],[3.]]) + torch.tensor([[10.,20.,30.,40.]]) */
  ts_iv in[] = {F32(2, SZ(3, 1), VS(1, 2, 3)), F32(2, SZ(1, 4), VS(10, 20, 30, 40)), ts_iv_int(1)};
  EXPECT("aten::add.Tensor", in, TS_DT_FLOAT32, 2, SZ(3, 4), VS(11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43));

  /* torch.ones(3,1) + torch.ones(2,4) */
  ts_iv e1[] = {F32(2, SZ(3, 1), VS(1, 1, 1)), F32(2, SZ(2, 4), VS(1, 1, 1, 1, 1, 1, 1, 1)), ts_iv_int(1)};
  EXPECT_ERR("aten::add.Tensor", e1,
             "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0");
  /* torch.ones(2,3) + torch.ones(3,4,1) */
  ts_iv e2[] = {F32(2, SZ(2, 3), VS(1, 1, 1, 1, 1, 1)), TV(ts_rt_tensor_new(&C, TS_DT_FLOAT32, 3, SZ(3, 4, 1), true)),
                ts_iv_int(1)};
  EXPECT_ERR("aten::add.Tensor", e2,
             "The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 1");
  /* torch.zeros(3).add_(torch.ones(2,3)) */
  ts_iv e3[] = {F32(1, SZ(3), VS(0, 0, 0)), F32(2, SZ(2, 3), VS(1, 1, 1, 1, 1, 1)), ts_iv_int(1)};
  EXPECT_ERR("aten::add_.Tensor", e3, "output with shape [3] doesn't match the broadcast shape [2, 3]");
  /* where(torch.ones(3,1)>0, torch.ones(2,4), torch.ones(5,1,1)): pairwise, left to right */
  ts_iv e4[] = {TT(TS_DT_BOOL, 2, SZ(3, 1), VS(1, 1, 1)), F32(2, SZ(2, 4), VS(1, 1, 1, 1, 1, 1, 1, 1)),
                F32(3, SZ(5, 1, 1), VS(1, 1, 1, 1, 1))};
  EXPECT_ERR("aten::where.self", e4,
             "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0");

  /* scalar and 0-d operands: torch.tensor([[1.],[2.]]) * torch.tensor(3.) */
  ts_iv s1[] = {F32(2, SZ(2, 1), VS(1, 2)), F32(0, NULL, VS(3))};
  EXPECT("aten::mul.Tensor", s1, TS_DT_FLOAT32, 2, SZ(2, 1), VS(3, 6));

  /* empty: torch.ones(0,3) + torch.ones(1,3) */
  ts_iv z1[] = {TV(ts_rt_tensor_new(&C, TS_DT_FLOAT32, 2, SZ(0, 3), true)), F32(2, SZ(1, 3), VS(1, 1, 1)),
                ts_iv_int(1)};
  EXPECT("aten::add.Tensor", z1, TS_DT_FLOAT32, 2, SZ(0, 3), VS(0));
  ts_iv z2[] = {TV(ts_rt_tensor_new(&C, TS_DT_INT64, 1, SZ(0), true))};
  EXPECT("aten::exp", z2, TS_DT_FLOAT32, 1, SZ(0), VS(0));
}

static void test_promotion(void) {
  /* torch.tensor([1,2,3]) + 2.5 -> float32 */
  ts_iv a[] = {I64(1, SZ(3), VS(1, 2, 3)), ts_iv_double(2.5), ts_iv_int(1)};
  EXPECT("aten::add.Scalar", a, TS_DT_FLOAT32, 1, SZ(3), VS(3.5, 4.5, 5.5));
  /* torch.tensor([200,1],dtype=torch.uint8) + torch.tensor([-100,5],dtype=torch.int8) -> int16 [100, 6] */
  ts_iv b[] = {TT(TS_DT_UINT8, 1, SZ(2), VS(200, 1)), TT(TS_DT_INT8, 1, SZ(2), VS(-100, 5)), ts_iv_int(1)};
  EXPECT("aten::add.Tensor", b, TS_DT_INT16, 1, SZ(2), VS(100, 6));
  /* torch.tensor([1.5,0.1],dtype=torch.half) + torch.tensor(0.1,dtype=torch.float64) -> float16 */
  ts_iv h[] = {TT(TS_DT_FLOAT16, 1, SZ(2), VS(1.5, 0.1)), TT(TS_DT_FLOAT64, 0, NULL, VS(0.1)), ts_iv_int(1)};
  EXPECT("aten::add.Tensor", h, TS_DT_FLOAT16, 1, SZ(2), VS(1.599609375, 0.199951171875));
  /* torch.tensor([True,False,False]) + torch.tensor([True,True,False]) -> bool */
  ts_iv bb[] = {TT(TS_DT_BOOL, 1, SZ(3), VS(1, 0, 0)), TT(TS_DT_BOOL, 1, SZ(3), VS(1, 1, 0)), ts_iv_int(1)};
  EXPECT("aten::add.Tensor", bb, TS_DT_BOOL, 1, SZ(3), VS(1, 1, 0));
  /* torch.tensor([True,False]) + 1 -> int64 */
  ts_iv b1[] = {TT(TS_DT_BOOL, 1, SZ(2), VS(1, 0)), ts_iv_int(1), ts_iv_int(1)};
  EXPECT("aten::add.Scalar", b1, TS_DT_INT64, 1, SZ(2), VS(2, 1));
  /* torch.tensor([1,-5]) + torch.tensor(2.5, dtype=torch.float64): a 0-d float beats an int tensor */
  ts_iv d0[] = {I64(1, SZ(2), VS(5, -5)), TT(TS_DT_FLOAT64, 0, NULL, VS(2.5)), ts_iv_int(1)};
  EXPECT("aten::add.Tensor", d0, TS_DT_FLOAT64, 1, SZ(2), VS(7.5, -2.5));
  /* torch.tensor([1,2],dtype=torch.int8) + torch.tensor(300): 300 wraps to int8 first -> [45, 46] */
  ts_iv w[] = {TT(TS_DT_INT8, 1, SZ(2), VS(1, 2)), I64(0, NULL, VS(300)), ts_iv_int(1)};
  EXPECT("aten::add.Tensor", w, TS_DT_INT8, 1, SZ(2), VS(45, 46));
  /* torch.tensor([3,9],dtype=torch.uint8).clamp(-1,5) -> [5, 5] (-1 is 255 in uint8) */
  ts_iv u[] = {TT(TS_DT_UINT8, 1, SZ(2), VS(3, 9)), ts_iv_int(-1), ts_iv_int(5)};
  EXPECT("aten::clamp", u, TS_DT_UINT8, 1, SZ(2), VS(5, 5));
  /* torch.exp(torch.tensor([0,1,2])) -> float32 */
  ts_iv e[] = {I64(1, SZ(3), VS(0, 1, 2))};
  EXPECT("aten::exp", e, TS_DT_FLOAT32, 1, SZ(3), VS(1.0, 2.7182817459106445, 7.389056205749512));
  /* torch.sqrt(torch.tensor([True,False])) -> float32 */
  ts_iv sb[] = {TT(TS_DT_BOOL, 1, SZ(2), VS(1, 0))};
  EXPECT("aten::sqrt", sb, TS_DT_FLOAT32, 1, SZ(2), VS(1, 0));
  /* torch.square(torch.tensor([True,False])) -> int64 */
  ts_iv sq[] = {TT(TS_DT_BOOL, 1, SZ(2), VS(1, 0))};
  EXPECT("aten::square", sq, TS_DT_INT64, 1, SZ(2), VS(1, 0));
  /* torch.tensor([7,-7])/torch.tensor([2,2]) -> float32 */
  ts_iv dv[] = {I64(1, SZ(2), VS(7, -7)), I64(1, SZ(2), VS(2, 2))};
  EXPECT("aten::div.Tensor", dv, TS_DT_FLOAT32, 1, SZ(2), VS(3.5, -3.5));
  /* torch.tensor([1.5,2.5],dtype=torch.half) < torch.tensor([2,2]) */
  ts_iv lt[] = {TT(TS_DT_FLOAT16, 1, SZ(2), VS(1.5, 2.5)), I64(1, SZ(2), VS(2, 2))};
  EXPECT("aten::lt.Tensor", lt, TS_DT_BOOL, 1, SZ(2), VS(1, 0));
  /* result_type over IValues */
  ts_rt_tensor *it = mk(TS_DT_INT64, 1, SZ(1), VS(1));
  ts_iv ops[] = {ts_iv_tensor(it), ts_iv_double(2.5)};
  TS_CHECK_INTEQ(ts_rt_result_type(ops, 2), TS_DT_FLOAT32);
  ts_iv ops2[] = {ts_iv_tensor(it), ts_iv_bool(true)};
  TS_CHECK_INTEQ(ts_rt_result_type(ops2, 2), TS_DT_INT64);
  ts_rt_tensor_release(it);

  /* In place: torch.tensor([5,-5]).add_(2.5) */
  ts_iv ip[] = {I64(1, SZ(2), VS(5, -5)), ts_iv_double(2.5), ts_iv_int(1)};
  EXPECT_ERR("aten::add_.Scalar", ip, "result type Float can't be cast to the desired output type Long");
  /* torch.zeros(2,dtype=torch.int32).clamp_(0.5) */
  ts_iv ic[] = {TT(TS_DT_INT32, 1, SZ(2), VS(0, 0)), ts_iv_double(0.5), ts_iv_none()};
  EXPECT_ERR("aten::clamp_", ic, "result type Float can't be cast to the desired output type int");
}

static void test_strided(void) {
  /* (torch.arange(6.).reshape(2,3)*0.5).t().exp(): strides (1, 3) as PyTorch */
  ts_rt_tensor *x = mk(TS_DT_FLOAT32, 2, SZ(2, 3), VS(0, 0.5, 1, 1.5, 2, 2.5));
  ts_rt_tensor *xt = ts_rt_tensor_view(&C, x, 0, 2, SZ(3, 2), SZ(1, 3));
  ts_iv in[] = {TV(xt)};
  ts_rt_tensor *r = run("aten::exp", in, 1);
  SAME(r, TS_DT_FLOAT32, 2, SZ(3, 2),
       VS(1.0, 4.481688976287842, 1.6487212181091309, 7.389056205749512, 2.7182817459106445, 12.182494163513184));
  if (r) {
    TS_CHECK_INTEQ(r->strides[0], 1);
    TS_CHECK_INTEQ(r->strides[1], 3);
    ts_rt_tensor_release(r);
  }
  ts_rt_tensor_release(xt);
  ts_rt_tensor_release(x);

  /* torch.tensor([1.,2.,3.]).expand(2,3) * torch.tensor([[2.],[3.]]) */
  ts_rt_tensor *v = mk(TS_DT_FLOAT32, 1, SZ(3), VS(1, 2, 3));
  ts_rt_tensor *ve = ts_rt_tensor_view(&C, v, 0, 2, SZ(2, 3), SZ(0, 1));
  ts_iv m[] = {TV(ve), F32(2, SZ(2, 1), VS(2, 3))};
  EXPECT("aten::mul.Tensor", m, TS_DT_FLOAT32, 2, SZ(2, 3), VS(2, 4, 6, 3, 6, 9));
  ts_rt_tensor_release(v);

  /* torch.sigmoid(torch.arange(12.)[::3]) */
  ts_rt_tensor *ar = mk(TS_DT_FLOAT32, 1, SZ(12), VS(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11));
  ts_iv sg[] = {TV(ts_rt_tensor_view(&C, ar, 0, 1, SZ(4), SZ(3)))};
  EXPECT("aten::sigmoid", sg, TS_DT_FLOAT32, 1, SZ(4),
         VS(0.5, 0.9525741338729858, 0.9975274205207825, 0.9998766183853149));

  /* base = torch.arange(12.).reshape(3,4); base[:,1::2].add_(100) writes through */
  ts_rt_tensor *base = ts_rt_tensor_view(&C, ar, 0, 2, SZ(3, 4), SZ(4, 1));
  ts_rt_tensor *view = ts_rt_tensor_view(&C, base, 1, 2, SZ(3, 2), SZ(4, 2));
  ts_iv ad[] = {TV(view), ts_iv_int(100), ts_iv_int(1)};
  ts_rt_tensor *rv = run("aten::add_.Scalar", ad, 3);
  TS_CHECK(rv == view);
  if (rv) ts_rt_tensor_release(rv);
  SAME(base, TS_DT_FLOAT32, 2, SZ(3, 4), VS(0, 101, 2, 103, 4, 105, 6, 107, 8, 109, 10, 111));
  ts_iv_release(ad[0]);
  ts_rt_tensor_release(base);
  ts_rt_tensor_release(ar);

  /* torch.zeros(3).expand(2,3).add_(1) */
  ts_rt_tensor *z = mk(TS_DT_FLOAT32, 1, SZ(3), VS(0, 0, 0));
  ts_iv ze[] = {TV(ts_rt_tensor_view(&C, z, 0, 2, SZ(2, 3), SZ(0, 1))), ts_iv_int(1), ts_iv_int(1)};
  EXPECT_ERR("aten::add_.Scalar", ze,
             "unsupported operation: more than one element of the written-to tensor refers to a single memory "
             "location. Please clone() the tensor before performing the operation.");
  ts_rt_tensor_release(z);

  /* in-place non-float32 through a transposed view: int32 t().mul_(2) */
  ts_rt_tensor *q = mk(TS_DT_INT32, 2, SZ(2, 3), VS(1, 2, 3, 4, 5, 6));
  ts_rt_tensor *qt = ts_rt_tensor_view(&C, q, 0, 2, SZ(3, 2), SZ(1, 3));
  ts_iv mq[] = {TV(qt), ts_iv_int(2)};
  ts_rt_tensor *rq = run("aten::mul_.Scalar", mq, 2);
  if (rq) ts_rt_tensor_release(rq);
  SAME(q, TS_DT_INT32, 2, SZ(2, 3), VS(2, 4, 6, 8, 10, 12));
  ts_iv_release(mq[0]);
  ts_rt_tensor_release(q);
}

static void test_dtypes(void) {
  /* torch.tensor([1.,-7.,5.],dtype=torch.float64)/torch.tensor([3.,2.,0.],dtype=torch.float64) */
  ts_iv d[] = {TT(TS_DT_FLOAT64, 1, SZ(3), VS(1, -7, 5)), TT(TS_DT_FLOAT64, 1, SZ(3), VS(3, 2, 0))};
  EXPECT("aten::div.Tensor", d, TS_DT_FLOAT64, 1, SZ(3), VS(0.3333333333333333, -3.5, INFINITY));
  /* F.gelu(torch.tensor([-1.,0.5,2.],dtype=torch.bfloat16)) */
  ts_iv g[] = {TT(TS_DT_BFLOAT16, 1, SZ(3), VS(-1, 0.5, 2)), S("none")};
  EXPECT("aten::gelu", g, TS_DT_BFLOAT16, 1, SZ(3), VS(-0.158203125, 0.345703125, 1.953125));
  /* F.gelu(torch.tensor([-1.,0.5,2.]), approximate='tanh') */
  ts_iv gt[] = {F32(1, SZ(3), VS(-1, 0.5, 2)), S("tanh")};
  EXPECT("aten::gelu", gt, TS_DT_FLOAT32, 1, SZ(3), VS(-0.15880799293518066, 0.3457140028476715, 1.9545977115631104));
  /* torch.remainder(torch.tensor([7,-7,7,-7],dtype=torch.int32), torch.tensor([3,3,-3,-3],dtype=torch.int32)) */
  ts_iv rm[] = {TT(TS_DT_INT32, 1, SZ(4), VS(7, -7, 7, -7)), TT(TS_DT_INT32, 1, SZ(4), VS(3, 3, -3, -3))};
  EXPECT("aten::remainder.Tensor", rm, TS_DT_INT32, 1, SZ(4), VS(1, 2, -2, -1));
  /* torch.floor_divide(int16 [7,-7,7,-7], int16 [2,2,-2,-2]) */
  ts_iv fd[] = {TT(TS_DT_INT16, 1, SZ(4), VS(7, -7, 7, -7)), TT(TS_DT_INT16, 1, SZ(4), VS(2, 2, -2, -2))};
  EXPECT("aten::floor_divide", fd, TS_DT_INT16, 1, SZ(4), VS(3, -4, -4, 3));
  /* torch.abs(torch.tensor([-128,-5,3],dtype=torch.int8)) */
  ts_iv ab[] = {TT(TS_DT_INT8, 1, SZ(3), VS(-128, -5, 3))};
  EXPECT("aten::abs", ab, TS_DT_INT8, 1, SZ(3), VS(-128, 5, 3));
  /* torch.tensor([1,200],dtype=torch.uint8) - torch.tensor([2,100],dtype=torch.uint8) */
  ts_iv su[] = {TT(TS_DT_UINT8, 1, SZ(2), VS(1, 200)), TT(TS_DT_UINT8, 1, SZ(2), VS(2, 100)), ts_iv_int(1)};
  EXPECT("aten::sub.Tensor", su, TS_DT_UINT8, 1, SZ(2), VS(255, 100));
  /* torch.logical_and(torch.tensor([True,False,True]), torch.tensor([2.,1.,0.])) */
  ts_iv la[] = {TT(TS_DT_BOOL, 1, SZ(3), VS(1, 0, 1)), F32(1, SZ(3), VS(2, 1, 0))};
  EXPECT("aten::logical_and", la, TS_DT_BOOL, 1, SZ(3), VS(1, 0, 0));
  /* ~torch.tensor([True,False]); ~torch.tensor([5,-1],dtype=torch.int32) */
  ts_iv bn[] = {TT(TS_DT_BOOL, 1, SZ(2), VS(1, 0))};
  EXPECT("aten::bitwise_not", bn, TS_DT_BOOL, 1, SZ(2), VS(0, 1));
  ts_iv bi[] = {TT(TS_DT_INT32, 1, SZ(2), VS(5, -1))};
  EXPECT("aten::bitwise_not", bi, TS_DT_INT32, 1, SZ(2), VS(-6, 0));
  /* torch.tensor([12,10]) & torch.tensor([10,6]) */
  ts_iv ba[] = {I64(1, SZ(2), VS(12, 10)), I64(1, SZ(2), VS(10, 6))};
  EXPECT("aten::__and__.Tensor", ba, TS_DT_INT64, 1, SZ(2), VS(8, 2));
  /* torch.tensor([1,2,3]) == 2 */
  ts_iv eq[] = {I64(1, SZ(3), VS(1, 2, 3)), ts_iv_int(2)};
  EXPECT("aten::eq.Scalar", eq, TS_DT_BOOL, 1, SZ(3), VS(0, 1, 0));
}

static void test_ops(void) {
  /* torch.where(torch.tensor([True,False]), 2.5, 3) */
  ts_iv w1[] = {TT(TS_DT_BOOL, 1, SZ(2), VS(1, 0)), ts_iv_double(2.5), ts_iv_int(3)};
  EXPECT("aten::where.Scalar", w1, TS_DT_FLOAT32, 1, SZ(2), VS(2.5, 3));
  /* torch.where(torch.tensor([[True],[False]]), torch.tensor([1,2,3]), torch.tensor(0.5)) */
  ts_iv w2[] = {TT(TS_DT_BOOL, 2, SZ(2, 1), VS(1, 0)), I64(1, SZ(3), VS(1, 2, 3)), F32(0, NULL, VS(0.5))};
  EXPECT("aten::where.self", w2, TS_DT_FLOAT32, 2, SZ(2, 3), VS(1, 2, 3, 0.5, 0.5, 0.5));
  /* torch.tensor([1,2,3]).masked_fill(torch.tensor([True,False,True]), 2.7) */
  ts_iv mf[] = {I64(1, SZ(3), VS(1, 2, 3)), TT(TS_DT_BOOL, 1, SZ(3), VS(1, 0, 1)), ts_iv_double(2.7)};
  EXPECT("aten::masked_fill.Scalar", mf, TS_DT_INT64, 1, SZ(3), VS(2, 2, 2));
  /* torch.clamp(torch.tensor([-1.,0.5,3.]), 2, 1) */
  ts_iv cl[] = {F32(1, SZ(3), VS(-1, 0.5, 3)), ts_iv_int(2), ts_iv_int(1)};
  EXPECT("aten::clamp", cl, TS_DT_FLOAT32, 1, SZ(3), VS(1, 1, 1));
  /* torch.clamp(torch.tensor([-5.,0.,5.]), min=torch.tensor([-1.,1.,1.]), max=torch.tensor(2.)) */
  ts_iv ct[] = {F32(1, SZ(3), VS(-5, 0, 5)), F32(1, SZ(3), VS(-1, 1, 1)), F32(0, NULL, VS(2))};
  EXPECT("aten::clamp.Tensor", ct, TS_DT_FLOAT32, 1, SZ(3), VS(-1, 1, 2));
  /* torch.maximum(torch.tensor([1.,nan,3.]), torch.tensor([2.,0.,nan])) */
  ts_iv mx[] = {F32(1, SZ(3), VS(1, NAN, 3)), F32(1, SZ(3), VS(2, 0, NAN))};
  EXPECT("aten::maximum", mx, TS_DT_FLOAT32, 1, SZ(3), VS(2, NAN, NAN));
  /* torch.round(torch.tensor([0.5,1.5,2.5,-0.5,-1.5])) */
  ts_iv rd[] = {F32(1, SZ(5), VS(0.5, 1.5, 2.5, -0.5, -1.5))};
  EXPECT("aten::round", rd, TS_DT_FLOAT32, 1, SZ(5), VS(0, 2, 2, -0.0, -2));
  /* torch.round(torch.tensor([1.2345,-0.125,1234.5]), decimals=-2) */
  ts_iv rdd[] = {F32(1, SZ(3), VS(1.2345, -0.125, 1234.5)), ts_iv_int(-2)};
  EXPECT("aten::round.decimals", rdd, TS_DT_FLOAT32, 1, SZ(3), VS(0, -0.0, 1200));
  /* torch.tensor([2,-1,1,3]) ** torch.tensor([-1,-3,-5,3]) */
  ts_iv pw[] = {I64(1, SZ(4), VS(2, -1, 1, 3)), I64(1, SZ(4), VS(-1, -3, -5, 3))};
  EXPECT("aten::pow.Tensor_Tensor", pw, TS_DT_INT64, 1, SZ(4), VS(0, -1, 1, 27));
  /* torch.div(torch.tensor([-7.5,7.5,-7.]), 2., rounding_mode='floor') */
  ts_iv df[] = {F32(1, SZ(3), VS(-7.5, 7.5, -7)), ts_iv_double(2), S("floor")};
  EXPECT("aten::div.Scalar_mode", df, TS_DT_FLOAT32, 1, SZ(3), VS(-4, 3, -4));
  /* torch.div(torch.tensor([-7,7]), 2, rounding_mode='trunc') */
  ts_iv dt[] = {I64(1, SZ(2), VS(-7, 7)), ts_iv_int(2), S("trunc")};
  EXPECT("aten::div.Scalar_mode", dt, TS_DT_INT64, 1, SZ(2), VS(-3, 3));
  /* F.hardtanh(torch.tensor([-2.,0.3,5.]), -1., 1.); F.relu6(torch.tensor([-2.,3.,7.])) */
  ts_iv ht[] = {F32(1, SZ(3), VS(-2, 0.3, 5)), ts_iv_double(-1), ts_iv_double(1)};
  EXPECT("aten::hardtanh", ht, TS_DT_FLOAT32, 1, SZ(3), VS(-1, 0.30000001192092896, 1));
  ts_iv r6[] = {F32(1, SZ(3), VS(-2, 3, 7))};
  EXPECT("aten::relu6", r6, TS_DT_FLOAT32, 1, SZ(3), VS(0, 3, 6));
  /* torch.lerp(torch.tensor([0.,1.]), torch.tensor([10.,-1.]), torch.tensor([0.25,0.75])) */
  ts_iv lp[] = {F32(1, SZ(2), VS(0, 1)), F32(1, SZ(2), VS(10, -1)), F32(1, SZ(2), VS(0.25, 0.75))};
  EXPECT("aten::lerp.Tensor", lp, TS_DT_FLOAT32, 1, SZ(2), VS(2.5, -0.5));
  /* torch.addcmul(t([1.,2.]), t([3.,4.]), t([5.,6.]), value=0.5); addcdiv(..., value=2) */
  ts_iv acm[] = {F32(1, SZ(2), VS(1, 2)), F32(1, SZ(2), VS(3, 4)), F32(1, SZ(2), VS(5, 6)), ts_iv_double(0.5)};
  EXPECT("aten::addcmul", acm, TS_DT_FLOAT32, 1, SZ(2), VS(8.5, 14));
  ts_iv acd[] = {F32(1, SZ(2), VS(1, 2)), F32(1, SZ(2), VS(3, 4)), F32(1, SZ(2), VS(5, 6)), ts_iv_int(2)};
  EXPECT("aten::addcdiv", acd, TS_DT_FLOAT32, 1, SZ(2), VS(2.200000047683716, 3.3333334922790527));
  /* F.elu(t([-1.,2.]), alpha=0.5); F.selu; F.leaky_relu(.., 0.2); F.softplus(t([-1.,30.]), beta=2, threshold=20) */
  ts_iv el[] = {F32(1, SZ(2), VS(-1, 2)), ts_iv_double(0.5), ts_iv_int(1), ts_iv_int(1)};
  EXPECT("aten::elu", el, TS_DT_FLOAT32, 1, SZ(2), VS(-0.31606027483940125, 2));
  ts_iv se[] = {F32(1, SZ(2), VS(-1, 2))};
  EXPECT("aten::selu", se, TS_DT_FLOAT32, 1, SZ(2), VS(-1.1113307476043701, 2.1014020442962646));
  ts_iv lr[] = {F32(1, SZ(2), VS(-1, 2)), ts_iv_double(0.2)};
  EXPECT("aten::leaky_relu", lr, TS_DT_FLOAT32, 1, SZ(2), VS(-0.20000000298023224, 2));
  ts_iv sp[] = {F32(1, SZ(2), VS(-1, 30)), ts_iv_int(2), ts_iv_int(20)};
  EXPECT("aten::softplus", sp, TS_DT_FLOAT32, 1, SZ(2), VS(0.06346400082111359, 30));
  /* F.mish, F.hardswish(t([-4.,1.,4.])), F.silu */
  ts_iv mi[] = {F32(1, SZ(2), VS(-1, 2))};
  EXPECT("aten::mish", mi, TS_DT_FLOAT32, 1, SZ(2), VS(-0.3034014403820038, 1.9439589977264404));
  ts_iv hs[] = {F32(1, SZ(3), VS(-4, 1, 4))};
  EXPECT("aten::hardswish", hs, TS_DT_FLOAT32, 1, SZ(3), VS(-0.0, 0.6666666865348816, 4));
  ts_iv sl[] = {F32(1, SZ(2), VS(-1, 2))};
  EXPECT("aten::silu", sl, TS_DT_FLOAT32, 1, SZ(2), VS(-0.2689414322376251, 1.7615940570831299));
  /* torch.atan2(torch.tensor([1,-1]), torch.tensor([-1,-1])) */
  ts_iv at[] = {I64(1, SZ(2), VS(1, -1)), I64(1, SZ(2), VS(-1, -1))};
  EXPECT("aten::atan2", at, TS_DT_FLOAT32, 1, SZ(2), VS(2.356194496154785, -2.356194496154785));
  /* F.threshold(torch.tensor([0.5,1.,2.]), 1., -5.) */
  ts_iv th[] = {F32(1, SZ(3), VS(0.5, 1, 2)), ts_iv_double(1), ts_iv_double(-5)};
  EXPECT("aten::threshold", th, TS_DT_FLOAT32, 1, SZ(3), VS(-5, -5, 2));
  /* torch.fmod(t([-7.,7.]), t([3.,-3.])); torch.sign(t([-3.,0.,2.])) */
  ts_iv fm[] = {F32(1, SZ(2), VS(-7, 7)), F32(1, SZ(2), VS(3, -3))};
  EXPECT("aten::fmod.Tensor", fm, TS_DT_FLOAT32, 1, SZ(2), VS(-1, 1));
  ts_iv sg[] = {F32(1, SZ(3), VS(-3, 0, 2))};
  EXPECT("aten::sign", sg, TS_DT_FLOAT32, 1, SZ(3), VS(-1, 0, 1));
  /* torch.rsub(t([1.,2.]), 5., alpha=2); torch.sub(t([1,2]), t([3,4]), alpha=2) */
  ts_iv rs[] = {F32(1, SZ(2), VS(1, 2)), ts_iv_double(5), ts_iv_int(2)};
  EXPECT("aten::rsub.Scalar", rs, TS_DT_FLOAT32, 1, SZ(2), VS(3, 1));
  ts_iv sa[] = {I64(1, SZ(2), VS(1, 2)), I64(1, SZ(2), VS(3, 4)), ts_iv_int(2)};
  EXPECT("aten::sub.Tensor", sa, TS_DT_INT64, 1, SZ(2), VS(-5, -6));

  /* out=: torch.add(a, b, out=torch.empty(0)) resizes out */
  ts_rt_tensor *o = ts_rt_tensor_new(&C, TS_DT_FLOAT32, 1, SZ(0), true);
  ts_iv ao[] = {F32(1, SZ(2), VS(1, 2)), F32(1, SZ(2), VS(3, 4)), ts_iv_int(1), TV(o)};
  ts_rt_tensor *ro = run("aten::add.out", ao, 4);
  TS_CHECK(ro == o);
  SAME(o, TS_DT_FLOAT32, 1, SZ(2), VS(4, 6));
  if (ro) ts_rt_tensor_release(ro);
  for (int i = 0; i < 4; i++) ts_iv_release(ao[i]);

  /* fill_ and zero_ */
  ts_rt_tensor *f = mk(TS_DT_INT64, 1, SZ(2), VS(5, -5));
  ts_iv fl[] = {TV(f), ts_iv_double(2.7)};
  ts_rt_tensor *rf = run("aten::fill_.Scalar", fl, 2);
  if (!TS_CHECK(rf == f)) fprintf(stderr, "  fill_: %s\n", C.err.data ? C.err.data : "");
  if (rf) ts_rt_tensor_release(rf);
  SAME(f, TS_DT_INT64, 1, SZ(2), VS(2, 2));
  ts_iv zr[] = {TV(f)};
  rf = run("aten::zero_", zr, 1);
  if (rf) ts_rt_tensor_release(rf);
  SAME(f, TS_DT_INT64, 1, SZ(2), VS(0, 0));
  ts_rt_tensor_release(f);
}

static void test_errors(void) {
  ts_iv e1[] = {I64(1, SZ(2), VS(5, -5)), ts_iv_int(0)};
  EXPECT_ERR("aten::remainder.Scalar", e1, "ZeroDivisionError");
  ts_iv e2[] = {I64(1, SZ(2), VS(5, -5)), I64(1, SZ(2), VS(1, 0))};
  EXPECT_ERR("aten::floor_divide", e2, "ZeroDivisionError");
  ts_iv e3[] = {TT(TS_DT_BOOL, 1, SZ(2), VS(1, 0)), TT(TS_DT_BOOL, 1, SZ(2), VS(1, 0)), ts_iv_int(1)};
  EXPECT_ERR("aten::sub.Tensor", e3,
             "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
             "operator instead.");
  ts_iv e4[] = {TT(TS_DT_BOOL, 1, SZ(2), VS(1, 0))};
  EXPECT_ERR("aten::neg", e4,
             "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use "
             "the `~` or `logical_not()` operator instead.");
  ts_iv e5[] = {F32(1, SZ(1), VS(1)), F32(1, SZ(1), VS(1))};
  EXPECT_ERR("aten::bitwise_and.Tensor", e5, "\"bitwise_and_cpu\" not implemented for 'Float'");
  ts_iv e6[] = {I64(1, SZ(1), VS(1)), S("none")};
  EXPECT_ERR("aten::gelu", e6, "\"GeluKernelImpl\" not implemented for 'Long'");
  ts_iv e7[] = {I64(1, SZ(2), VS(5, -5)), ts_iv_int(-1)};
  EXPECT_ERR("aten::pow.Tensor_Scalar", e7, "Integers to negative integer powers are not allowed.");
  ts_iv e8[] = {I64(1, SZ(2), VS(5, -5)), I64(1, SZ(2), VS(5, -5)), ts_iv_double(2.5)};
  EXPECT_ERR("aten::add.Tensor", e8, "For integral input tensors, argument alpha must not be a floating point number.");
  ts_iv e9[] = {I64(1, SZ(2), VS(5, -5)), ts_iv_int(2), ts_iv_int(3)};
  EXPECT_ERR("aten::where.Scalar", e9,
             "where expected condition to be a boolean tensor, but got a tensor with dtype Long");
  ts_iv e10[] = {F32(1, SZ(2), VS(1, 2)), ts_iv_none(), ts_iv_none()};
  EXPECT_ERR("aten::clamp", e10, "torch.clamp: At least one of 'min' or 'max' must not be None");
  ts_iv e11[] = {I64(1, SZ(2), VS(5, -5)), ts_iv_int(0), S("x")};
  EXPECT_ERR("aten::div.Scalar_mode", e11,
             "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'x'");
}

/* A large op takes the parallel path: (torch.arange(100000.)*0.5+1)[[0,77777,99999]] = [1.0, 38889.5, 50000.5] */
static void test_large(void) {
  int64_t n = 100000;
  ts_rt_tensor *a = ts_rt_tensor_new(&C, TS_DT_FLOAT32, 1, &n, false);
  if (!TS_CHECK(a)) return;
  float *p = ts_rt_tensor_data(a);
  for (int64_t i = 0; i < n; i++) p[i] = (float)i;
  ts_rt_tensor *m = ts_rt_mul_scalar(&C, a, 0.5);
  ts_rt_tensor *r = m ? ts_rt_add_scalar(&C, m, 1) : NULL;
  if (TS_CHECK(r != NULL)) {
    const float *q = ts_rt_tensor_data(r);
    TS_CHECK(q[0] == 1.0f && q[77777] == 38889.5f && q[99999] == 50000.5f);
    TS_CHECK_INTEQ(r->dtype, TS_DT_FLOAT32);
    ts_rt_tensor_release(r);
  }
  if (m) ts_rt_tensor_release(m);
  /* strided float64 through the buffered path: a.double()[::2] * 2 */
  ts_rt_tensor *d = ts_rt_tensor_to_dtype(&C, a, TS_DT_FLOAT64);
  ts_rt_tensor *ds = d ? ts_rt_tensor_view(&C, d, 0, 1, SZ(50000), SZ(2)) : NULL;
  ts_rt_tensor *two = ts_rt_tensor_scalar(&C, TS_DT_FLOAT64, 2, 2);
  ts_rt_tensor *dm = ds && two ? ts_rt_binary_op(&C, TS_PW_mul, ds, two) : NULL;
  if (TS_CHECK(dm != NULL)) {
    const double *q = ts_rt_tensor_data(dm);
    TS_CHECK(q[0] == 0 && q[1] == 4 && q[49999] == 199996);
    ts_rt_tensor_release(dm);
  }
  if (two) ts_rt_tensor_release(two);
  if (ds) ts_rt_tensor_release(ds);
  if (d) ts_rt_tensor_release(d);
  ts_rt_tensor_release(a);
}

int main(void) {
  ts_rt_ctx_init(&C, 4);
  /* Other files' tables may not bind yet; every entry of ours must. */
  ts_rt_kernels_init(NULL);
  int nk = 0;
  for (const ts_rt_kernel_def *e = ts_rt_kernels_pointwise(); e && e->schema; e++, nk++)
    if (!TS_CHECK(ts_rt_kernel_by_name(e->schema) == e->fn)) fprintf(stderr, "  %s is not bound\n", e->schema);
  TS_CHECK(nk > 250);
  test_broadcast();
  test_promotion();
  test_strided();
  test_dtypes();
  test_ops();
  test_errors();
  test_large();
  ts_rt_ctx_free(&C);
  return ts_test_finish();
}
