/* tests/unit/test_rt_core.c: the runtime's core: half/bfloat16, element
 * load/store, views, copy_, contiguous, dicts, ==, printing, parallel_for,
 * the kernel registry. Expected values come from PyTorch 1.13 (Debian's
 * /usr/bin/python3 with torch); the python that made each is quoted. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "test.h"

static ts_rt_ctx ctx;

static uint16_t bits_of_half(float f) { return ts_rt_float_to_half(f); }

static void test_half_bf16(void) {
  /* vals = [0.0, -0.0, 1.0, -2.5, 0.1, 65504.0, 65519.0, 65520.0, 1e-8, 5.96e-8, 2.98e-8, 3e-8, 6.1e-5, 1e6,
   *         inf, -inf, nan, 1.00048828125, 1.00146484375, 3.14159]
   * torch.tensor(vals).half().view(torch.int16) and .bfloat16().view(torch.int16), as unsigned hex */
  static const float vals[] = {0.0f,    -0.0f,  1.0f,  -2.5f, 0.1f,     65504.0f, 65519.0f,
                               65520.0f, 1e-8f, 5.96e-8f, 2.98e-8f, 3e-8f, 6.1e-5f, 1e6f,
                               INFINITY, -INFINITY, NAN, 1.00048828125f, 1.00146484375f, 3.14159f};
  static const uint16_t half[] = {0x0,    0x8000, 0x3c00, 0xc100, 0x2e66, 0x7bff, 0x7bff, 0x7c00, 0x0,    0x1,
                                  0x0,    0x1,    0x3ff,  0x7c00, 0x7c00, 0xfc00, 0x7e00, 0x3c00, 0x3c02, 0x4248};
  static const uint16_t bf16[] = {0x0,    0x8000, 0x3f80, 0xc020, 0x3dcd, 0x4780, 0x4780, 0x4780, 0x322c, 0x3380,
                                  0x3300, 0x3301, 0x3880, 0x4974, 0x7f80, 0xff80, 0xffff, 0x3f80, 0x3f80, 0x4049};
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
    if (!TS_CHECK_INTEQ(bits_of_half(vals[i]), half[i]))
      fprintf(stderr, "  half of %.9g\n", vals[i]);
    if (!TS_CHECK_INTEQ(ts_rt_float_to_bf16(vals[i]), bf16[i]))
      fprintf(stderr, "  bf16 of %.9g\n", vals[i]);
  }
  /* torch.from_numpy(np.array(bits, dtype=np.uint16).view(np.int16)).view(torch.half).float().tolist() */
  static const uint16_t hbits[] = {0x0001, 0x03ff, 0x0400, 0x3c00, 0xc000, 0x7bff, 0x8001, 0x3555};
  static const double hvals[] = {5.960464477539063e-08, 6.097555160522461e-05, 6.103515625e-05, 1.0, -2.0, 65504.0,
                                 -5.960464477539063e-08, 0.333251953125};
  for (size_t i = 0; i < sizeof hbits / sizeof hbits[0]; i++)
    TS_CHECK(ts_rt_half_to_float(hbits[i]) == hvals[i]);
  TS_CHECK(isinf(ts_rt_half_to_float(0x7c00)) && ts_rt_half_to_float(0x7c00) > 0);
  TS_CHECK(isinf(ts_rt_half_to_float(0xfc00)) && ts_rt_half_to_float(0xfc00) < 0);
  TS_CHECK(isnan(ts_rt_half_to_float(0x7e00)) && isnan(ts_rt_half_to_float(0x7c01)));
  static const uint16_t bbits[] = {0x3f80, 0x0001, 0x7f7f, 0xc2f7, 0x3dcd};
  static const double bvals[] = {1.0, 9.183549615799121e-41, 3.3895313892515355e+38, -123.5, 0.10009765625};
  for (size_t i = 0; i < sizeof bbits / sizeof bbits[0]; i++)
    TS_CHECK(ts_rt_bf16_to_float(bbits[i]) == bvals[i]);
  /* Every half round-trips through float. */
  int bad = 0;
  for (uint32_t h = 0; h < 0x10000; h++) {
    float f = ts_rt_half_to_float((uint16_t)h);
    if (!isnan(f) && ts_rt_float_to_half(f) != h)
      bad++;
  }
  TS_CHECK_INTEQ(bad, 0);
}

static void test_load_store(void) {
  unsigned char buf[8];
  /* torch.tensor([300.7, -1.5, 1e10, nan, 3e9, -3e9]).to(torch.uint8) -> [44, 255, 0, 0, 0, 0] */
  static const double in_u8[] = {300.7, -1.5, 1e10, NAN, 3e9, -3e9};
  static const int64_t out_u8[] = {44, 255, 0, 0, 0, 0};
  for (size_t i = 0; i < 6; i++) {
    ts_rt_store_f64(buf, TS_DT_UINT8, in_u8[i]);
    TS_CHECK_INTEQ(ts_rt_load_i64(buf, TS_DT_UINT8), out_u8[i]);
  }
  /* torch.tensor([300.7, -1.5, 1e10, nan, 3e9]).to(torch.int32) -> [300, -1, -2147483648 x3] */
  static const double in_i32[] = {300.7, -1.5, 1e10, NAN, 3e9};
  static const int64_t out_i32[] = {300, -1, INT32_MIN, INT32_MIN, INT32_MIN};
  for (size_t i = 0; i < 5; i++) {
    ts_rt_store_f64(buf, TS_DT_INT32, in_i32[i]);
    TS_CHECK_INTEQ(ts_rt_load_i64(buf, TS_DT_INT32), out_i32[i]);
  }
  /* torch.tensor([1e19, nan]).to(torch.int64) -> [INT64_MIN, INT64_MIN];
   * torch.tensor([3e9, -3e9, 1e10, 200.]).to(torch.int8) -> [0, 0, 0, -56] */
  ts_rt_store_f64(buf, TS_DT_INT64, 1e19);
  TS_CHECK(ts_rt_load_i64(buf, TS_DT_INT64) == INT64_MIN);
  ts_rt_store_f64(buf, TS_DT_INT64, NAN);
  TS_CHECK(ts_rt_load_i64(buf, TS_DT_INT64) == INT64_MIN);
  ts_rt_store_f64(buf, TS_DT_INT8, 200.0);
  TS_CHECK_INTEQ(ts_rt_load_i64(buf, TS_DT_INT8), -56);
  ts_rt_store_f64(buf, TS_DT_INT8, 3e9);
  TS_CHECK_INTEQ(ts_rt_load_i64(buf, TS_DT_INT8), 0);
  ts_rt_store_f64(buf, TS_DT_INT16, -7.9);
  TS_CHECK_INTEQ(ts_rt_load_i64(buf, TS_DT_INT16), -7);
  ts_rt_store_f64(buf, TS_DT_BOOL, 0.25);
  TS_CHECK_INTEQ(ts_rt_load_i64(buf, TS_DT_BOOL), 1);
  ts_rt_store_i64(buf, TS_DT_BOOL, -3);
  TS_CHECK(ts_rt_load_f64(buf, TS_DT_BOOL) == 1.0);
  ts_rt_store_i64(buf, TS_DT_INT64, (1LL << 60) + 1);
  TS_CHECK(ts_rt_load_i64(buf, TS_DT_INT64) == (1LL << 60) + 1);
  ts_rt_store_f64(buf, TS_DT_FLOAT16, 0.1);
  TS_CHECK(ts_rt_load_f64(buf, TS_DT_FLOAT16) == ts_rt_half_to_float(0x2e66));
  ts_rt_store_f64(buf, TS_DT_BFLOAT16, -2.5);
  TS_CHECK(ts_rt_load_f64(buf, TS_DT_BFLOAT16) == -2.5);
  ts_rt_store_i64(buf, TS_DT_FLOAT32, 16777217);
  TS_CHECK(ts_rt_load_f64(buf, TS_DT_FLOAT32) == 16777216.0);
  TS_CHECK(ts_rt_dtype_is_float(TS_DT_BFLOAT16) && !ts_rt_dtype_is_float(TS_DT_INT8));
  TS_CHECK(ts_rt_dtype_is_integral(TS_DT_BOOL, true) && !ts_rt_dtype_is_integral(TS_DT_BOOL, false));
  TS_CHECK(ts_rt_dtype_supported(TS_DT_UINT8) && ts_rt_dtype_supported(TS_DT_COMPLEX64) &&
           ts_rt_dtype_supported(TS_DT_COMPLEX128) && !ts_rt_dtype_supported(TS_DT_COMPLEX32) &&
           !ts_rt_dtype_supported(TS_DT_QINT8));
  /* complex elements: loads give the real part, stores a zero imaginary part */
  float cf[2] = {0, 7};
  ts_rt_store_f64(cf, TS_DT_COMPLEX64, -2.5);
  TS_CHECK(cf[0] == -2.5f && cf[1] == 0 && ts_rt_load_f64(cf, TS_DT_COMPLEX64) == -2.5);
  double cd[2] = {0, 7};
  ts_rt_store_i64(cd, TS_DT_COMPLEX128, 3);
  TS_CHECK(cd[0] == 3 && cd[1] == 0 && ts_rt_load_i64(cd, TS_DT_COMPLEX128) == 3);
}

/* A contiguous float32 tensor of the given shape holding 0, 1, 2, ... */
static ts_rt_tensor *arange_f32(int32_t ndim, const int64_t *sizes) {
  ts_rt_tensor *t = ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, ndim, sizes, false);
  if (!t)
    return NULL;
  float *p = ts_rt_tensor_data(t);
  for (int64_t i = 0; i < ts_rt_tensor_numel(t); i++)
    p[i] = (float)i;
  return t;
}

static ts_rt_tensor *tensor_of_f32(int64_t n, const float *v) {
  ts_rt_tensor *t = ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 1, &n, false);
  if (t)
    memcpy(ts_rt_tensor_data(t), v, (size_t)n * sizeof(float));
  return t;
}

static void collect(void *arg, void *elem, int64_t index) {
  double *out = arg;
  out[index] = *(float *)elem;
}

static void test_views(void) {
  int64_t sz[2] = {2, 3};
  ts_rt_tensor *a = arange_f32(2, sz);
  if (!TS_CHECK(a))
    return;
  TS_CHECK(ts_rt_tensor_is_contiguous(a));
  TS_CHECK_INTEQ(a->strides[0], 3);
  /* a.t(): sizes [3, 2], strides [1, 3] */
  int64_t tsz[2] = {3, 2}, tst[2] = {1, 3};
  ts_rt_tensor *t = ts_rt_tensor_view(&ctx, a, 0, 2, tsz, tst);
  TS_CHECK(t && t->storage == a->storage && !ts_rt_tensor_is_contiguous(t));
  TS_CHECK_INTEQ(a->storage->h.refcount, 2);
  /* t[2][1] = 42 is a[1][2] */
  ts_rt_store_f64((float *)ts_rt_tensor_data(t) + 2 * tst[0] + 1 * tst[1], TS_DT_FLOAT32, 42.0);
  TS_CHECK(((float *)ts_rt_tensor_data(a))[5] == 42.0f);
  /* a.t().contiguous() of arange(6).view(2,3) with a[1][2] = 42 -> [0, 3, 1, 4, 2, 42] */
  ts_rt_tensor *tc = ts_rt_tensor_contiguous(&ctx, t);
  TS_CHECK(tc && tc != t && ts_rt_tensor_is_contiguous(tc) && tc->storage != a->storage);
  if (tc) {
    const float *p = ts_rt_tensor_data(tc);
    static const float want[] = {0, 3, 1, 4, 2, 42};
    for (int i = 0; i < 6; i++)
      TS_CHECK(p[i] == want[i]);
  }
  double seen[6];
  ts_rt_tensor_foreach(t, collect, seen);
  TS_CHECK(seen[0] == 0 && seen[1] == 3 && seen[2] == 1 && seen[5] == 42);
  /* A contiguous tensor comes back itself. */
  ts_rt_tensor *ac = ts_rt_tensor_contiguous(&ctx, a);
  TS_CHECK(ac == a && a->h.refcount == 2);
  ts_rt_tensor_release(ac);
  /* Size-1 dims' strides do not matter; an offset view (a[1]) reads from the offset. */
  int64_t s1[2] = {1, 3}, st1[2] = {99, 1};
  ts_rt_tensor *row = ts_rt_tensor_view(&ctx, a, 3, 2, s1, st1);
  TS_CHECK(row && ts_rt_tensor_is_contiguous(row) && ((float *)ts_rt_tensor_data(row))[0] == 3.0f);
  ts_rt_tensor_release(row);
  ts_rt_tensor_release(tc);
  ts_rt_tensor_release(t);
  TS_CHECK_INTEQ(a->storage->h.refcount, 1);
  ts_rt_tensor_release(a);

  /* Bad sizes. */
  int64_t neg[2] = {2, -1};
  TS_CHECK(!ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 2, neg, false));
  /* torch.empty(2, -1) */
  TS_CHECK_STREQ(ctx.err.data, "Trying to create tensor with negative dimension -1: [2, -1]");
  ts_rt_clear_error(&ctx);
  int64_t huge[3] = {1LL << 40, 1LL << 40, 1LL << 40};
  TS_CHECK(!ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 3, huge, false) && ctx.failed);
  ts_rt_clear_error(&ctx);
  int64_t zero[2] = {0, 5};
  ts_rt_tensor *e = ts_rt_tensor_new(&ctx, TS_DT_INT64, 2, zero, true);
  TS_CHECK(e && ts_rt_tensor_numel(e) == 0 && ts_rt_tensor_is_contiguous(e));
  ts_rt_tensor_release(e);
}

static void test_copy(void) {
  /* torch.zeros(2, 3).copy_(torch.tensor([1, 2, 3])) -> [[1, 2, 3], [1, 2, 3]] */
  int64_t sz[2] = {2, 3}, s3 = 3;
  ts_rt_tensor *d = ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 2, sz, true);
  ts_rt_tensor *s = ts_rt_tensor_new(&ctx, TS_DT_INT64, 1, &s3, false);
  if (!TS_CHECK(d && s))
    return;
  for (int i = 0; i < 3; i++)
    ((int64_t *)ts_rt_tensor_data(s))[i] = i + 1;
  TS_CHECK(ts_rt_tensor_copy_(&ctx, d, s));
  static const float want[] = {1, 2, 3, 1, 2, 3};
  for (int i = 0; i < 6; i++)
    TS_CHECK(((float *)ts_rt_tensor_data(d))[i] == want[i]);
  /* torch.zeros(2, 3).copy_(torch.zeros(4)) */
  int64_t s4 = 4;
  ts_rt_tensor *s4t = ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 1, &s4, true);
  TS_CHECK(!ts_rt_tensor_copy_(&ctx, d, s4t));
  TS_CHECK_STREQ(ctx.err.data,
                 "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1");
  ts_rt_clear_error(&ctx);
  /* torch.zeros(3).copy_(torch.ones(2, 3)) */
  ts_rt_tensor *d3 = ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 1, &s3, true);
  TS_CHECK(!ts_rt_tensor_copy_(&ctx, d3, d));
  TS_CHECK_STREQ(ctx.err.data, "output with shape [3] doesn't match the broadcast shape [2, 3]");
  ts_rt_clear_error(&ctx);
  /* float -> int truncates toward zero, -> bool is nonzero:
   * torch.tensor([-1.7, 0.0, 2.9]).to(torch.int32) -> [-1, 0, 2]; .to(torch.bool) -> [True, False, True] */
  float *f3 = ts_rt_tensor_data(d3);
  f3[0] = -1.7f, f3[1] = 0.0f, f3[2] = 2.9f;
  ts_rt_tensor *i3 = ts_rt_tensor_to_dtype(&ctx, d3, TS_DT_INT32);
  ts_rt_tensor *b3 = ts_rt_tensor_to_dtype(&ctx, d3, TS_DT_BOOL);
  if (TS_CHECK(i3 && b3)) {
    const int32_t *ip = ts_rt_tensor_data(i3);
    const uint8_t *bp = ts_rt_tensor_data(b3);
    TS_CHECK(ip[0] == -1 && ip[1] == 0 && ip[2] == 2);
    TS_CHECK(bp[0] == 1 && bp[1] == 0 && bp[2] == 1);
  }
  ts_rt_tensor_release(i3);
  ts_rt_tensor_release(b3);

  /* Overlap: a = torch.arange(6.); a[1:].copy_(a[:-1]) -> [0, 0, 1, 2, 3, 4] */
  int64_t s6 = 6, s5 = 5, st1 = 1, s2b = 2;
  ts_rt_tensor *a = arange_f32(1, &s6);
  ts_rt_tensor *hi = ts_rt_tensor_view(&ctx, a, 1, 1, &s5, &st1);
  ts_rt_tensor *lo = ts_rt_tensor_view(&ctx, a, 0, 1, &s5, &st1);
  TS_CHECK(ts_rt_tensor_copy_(&ctx, hi, lo));
  static const float want2[] = {0, 0, 1, 2, 3, 4};
  for (int i = 0; i < 6; i++)
    TS_CHECK(((float *)ts_rt_tensor_data(a))[i] == want2[i]);
  /* a = torch.arange(6.); a[:-1].copy_(a[1:]) -> [1, 2, 3, 4, 5, 5] */
  for (int i = 0; i < 6; i++)
    ((float *)ts_rt_tensor_data(a))[i] = (float)i;
  TS_CHECK(ts_rt_tensor_copy_(&ctx, lo, hi));
  static const float want3[] = {1, 2, 3, 4, 5, 5};
  for (int i = 0; i < 6; i++)
    TS_CHECK(((float *)ts_rt_tensor_data(a))[i] == want3[i]);
  ts_rt_tensor_release(hi);
  ts_rt_tensor_release(lo);
  ts_rt_tensor_release(a);

  /* A large transposed copy with conversion, split over threads:
   * x = torch.arange(600*700.).view(600, 700).t().to(torch.float64).contiguous(): x[i][j] = j * 700 + i */
  int64_t big[2] = {600, 700};
  ts_rt_tensor *x = arange_f32(2, big);
  int64_t tsz[2] = {700, 600}, tst[2] = {1, 700};
  ts_rt_tensor *xt = x ? ts_rt_tensor_view(&ctx, x, 0, 2, tsz, tst) : NULL;
  ts_rt_tensor *y = xt ? ts_rt_tensor_to_dtype(&ctx, xt, TS_DT_FLOAT64) : NULL;
  if (TS_CHECK(y)) {
    const double *p = ts_rt_tensor_data(y);
    int bad = 0;
    for (int64_t i = 0; i < 700; i++)
      for (int64_t j = 0; j < 600; j++)
        bad += p[i * 600 + j] != (double)(j * 700 + i);
    TS_CHECK_INTEQ(bad, 0);
  }
  ts_rt_tensor_release(y);
  ts_rt_tensor_release(xt);
  ts_rt_tensor_release(x);
  /* x = torch.arange(3*40*50.).view(3, 40, 50).transpose(1, 2).contiguous(): x[p][i][j] = p*2000 + j*50 + i */
  int64_t s3d[3] = {3, 40, 50}, p3d[3] = {3, 50, 40}, pst[3] = {2000, 1, 50};
  x = arange_f32(3, s3d);
  xt = x ? ts_rt_tensor_view(&ctx, x, 0, 3, p3d, pst) : NULL;
  y = xt ? ts_rt_tensor_contiguous(&ctx, xt) : NULL;
  if (TS_CHECK(y)) {
    const float *p = ts_rt_tensor_data(y);
    int bad = 0;
    for (int64_t q = 0; q < 3; q++)
      for (int64_t i = 0; i < 50; i++)
        for (int64_t j = 0; j < 40; j++)
          bad += p[(q * 50 + i) * 40 + j] != (float)(q * 2000 + j * 50 + i);
    TS_CHECK_INTEQ(bad, 0);
  }
  ts_rt_tensor_release(y);
  ts_rt_tensor_release(xt);
  ts_rt_tensor_release(x);

  /* The typed conversion loops agree with the element functions:
   * torch.tensor([0.1, -2.5, 65519.0, 3e-8]).half() bits [0x2e66, 0xc100, 0x7bff, 0x1],
   * .bfloat16() bits [0x3dcd, 0xc020, 0x4780, 0x3301] */
  ts_rt_tensor *f4 = tensor_of_f32(4, (float[]){0.1f, -2.5f, 65519.0f, 3e-8f});
  ts_rt_tensor *h4 = f4 ? ts_rt_tensor_to_dtype(&ctx, f4, TS_DT_FLOAT16) : NULL;
  ts_rt_tensor *b4 = f4 ? ts_rt_tensor_to_dtype(&ctx, f4, TS_DT_BFLOAT16) : NULL;
  if (TS_CHECK(h4 && b4)) {
    const uint16_t *hp = ts_rt_tensor_data(h4), *bp = ts_rt_tensor_data(b4);
    TS_CHECK(hp[0] == 0x2e66 && hp[1] == 0xc100 && hp[2] == 0x7bff && hp[3] == 0x1);
    TS_CHECK(bp[0] == 0x3dcd && bp[1] == 0xc020 && bp[2] == 0x4780 && bp[3] == 0x3301);
    ts_rt_tensor *back = ts_rt_tensor_to_dtype(&ctx, h4, TS_DT_FLOAT32);
    TS_CHECK(back && ((float *)ts_rt_tensor_data(back))[1] == -2.5f);
    ts_rt_tensor_release(back);
  }
  /* torch.tensor([16777217, -3]).float() -> [16777216., -3.]; torch.tensor([-1.7, 2.9]).long() -> [-1, 2] */
  ts_rt_tensor *i64 = ts_rt_tensor_new(&ctx, TS_DT_INT64, 1, &s2b, false);
  if (TS_CHECK(i64)) {
    ((int64_t *)ts_rt_tensor_data(i64))[0] = 16777217;
    ((int64_t *)ts_rt_tensor_data(i64))[1] = -3;
    ts_rt_tensor *f = ts_rt_tensor_to_dtype(&ctx, i64, TS_DT_FLOAT32);
    TS_CHECK(f && ((float *)ts_rt_tensor_data(f))[0] == 16777216.0f && ((float *)ts_rt_tensor_data(f))[1] == -3.0f);
    ((float *)ts_rt_tensor_data(f))[0] = -1.7f;
    ((float *)ts_rt_tensor_data(f))[1] = 2.9f;
    ts_rt_tensor *l = ts_rt_tensor_to_dtype(&ctx, f, TS_DT_INT64);
    TS_CHECK(l && ((int64_t *)ts_rt_tensor_data(l))[0] == -1 && ((int64_t *)ts_rt_tensor_data(l))[1] == 2);
    ts_rt_tensor_release(l);
    ts_rt_tensor_release(f);
  }
  ts_rt_tensor_release(i64);
  ts_rt_tensor_release(h4);
  ts_rt_tensor_release(b4);
  ts_rt_tensor_release(f4);

  /* 0-d scalars. */
  ts_rt_tensor *sc = ts_rt_tensor_scalar(&ctx, TS_DT_INT64, 0, 7);
  ts_rt_tensor *sf = ts_rt_tensor_scalar(&ctx, TS_DT_FLOAT64, 2.5, 0);
  TS_CHECK(sc && sc->ndim == 0 && ts_rt_tensor_numel(sc) == 1 && *(int64_t *)ts_rt_tensor_data(sc) == 7);
  TS_CHECK(sf && *(double *)ts_rt_tensor_data(sf) == 2.5);
  /* Broadcasting a 0-d tensor into d. */
  TS_CHECK(ts_rt_tensor_copy_(&ctx, d, sf));
  TS_CHECK(((float *)ts_rt_tensor_data(d))[5] == 2.5f);
  ts_rt_tensor_release(sc);
  ts_rt_tensor_release(sf);
  ts_rt_tensor_release(d3);
  ts_rt_tensor_release(s4t);
  ts_rt_tensor_release(s);
  ts_rt_tensor_release(d);
}

static ts_iv str_iv(const char *s) { return (ts_iv){.u.s = ts_rt_str_new(&ctx, s, strlen(s)), .tag = TS_IV_STR}; }

static void test_dict(void) {
  ts_rt_dict *d = ts_rt_dict_new(&ctx, NULL, NULL);
  if (!TS_CHECK(d))
    return;
  ts_iv ka = str_iv("a");
  TS_CHECK(ts_rt_dict_set(&ctx, d, ka, ts_iv_int(10)));
  TS_CHECK(ts_rt_dict_set(&ctx, d, ts_iv_int(1), ts_iv_int(20)));
  /* d = {'a': 10, 1: 20}; d[1.0] = 30; d[True] = 40 -> {'a': 10, 1: 40} (Python) */
  TS_CHECK(ts_rt_dict_set(&ctx, d, ts_iv_double(1.0), ts_iv_int(30)));
  TS_CHECK(ts_rt_dict_set(&ctx, d, ts_iv_bool(true), ts_iv_int(40)));
  TS_CHECK_INTEQ(d->n, 2);
  TS_CHECK(d->keys[1].tag == TS_IV_INT);
  ts_iv *v = ts_rt_dict_find(d, ts_iv_double(1.0));
  TS_CHECK(v && v->tag == TS_IV_INT && v->u.i == 40);
  ts_iv kb = str_iv("a");
  v = ts_rt_dict_find(d, kb);
  TS_CHECK(v && v->u.i == 10);
  TS_CHECK(!ts_rt_dict_find(d, ts_iv_int(2)));
  TS_CHECK(!ts_rt_dict_find(d, ts_iv_double(1.5)));
  /* Many keys, then removal keeps the order of the rest. */
  for (int64_t i = 100; i < 1100; i++)
    TS_CHECK(ts_rt_dict_set(&ctx, d, ts_iv_int(i), ts_iv_int(i * 2)));
  TS_CHECK_INTEQ(d->n, 1002);
  ts_iv out;
  TS_CHECK(ts_rt_dict_remove(d, kb, &out) && out.u.i == 10);
  TS_CHECK(!ts_rt_dict_remove(d, kb, NULL));
  TS_CHECK(ts_rt_dict_remove(d, ts_iv_int(500), NULL));
  TS_CHECK_INTEQ(d->n, 1000);
  TS_CHECK(d->keys[0].u.i == 1 && d->keys[1].u.i == 100 && d->keys[400].u.i == 499 && d->keys[401].u.i == 501);
  bool all = true;
  for (int64_t i = 100; i < 1100; i++) {
    v = ts_rt_dict_find(d, ts_iv_int(i));
    all = all && (i == 500 ? v == NULL : v && v->u.i == i * 2);
  }
  TS_CHECK(all);
  /* Tensor keys by identity. */
  ts_rt_tensor *t1 = ts_rt_tensor_scalar(&ctx, TS_DT_FLOAT64, 1.0, 0);
  ts_rt_tensor *t2 = ts_rt_tensor_scalar(&ctx, TS_DT_FLOAT64, 1.0, 0);
  TS_CHECK(ts_rt_dict_set(&ctx, d, ts_iv_tensor(t1), ts_iv_int(1)));
  TS_CHECK(ts_rt_dict_find(d, ts_iv_tensor(t1)) && !ts_rt_dict_find(d, ts_iv_tensor(t2)));
  ts_rt_tensor_release(t1);
  ts_rt_tensor_release(t2);
  ts_iv_release(ka);
  ts_iv_release(kb);
  ts_iv_release((ts_iv){.u.dict = d, .tag = TS_IV_DICT});
}

static ts_iv list_of(uint32_t n, const ts_iv *items) {
  ts_rt_list *l = ts_rt_list_new(&ctx, NULL, 0);
  for (uint32_t i = 0; i < n; i++)
    ts_rt_list_append(&ctx, l, items[i]);
  return (ts_iv){.u.l = l, .tag = TS_IV_LIST};
}

static ts_iv tuple_of(uint32_t n, const ts_iv *items) {
  ts_rt_tuple *t = ts_rt_tuple_new(&ctx, n);
  for (uint32_t i = 0; i < n; i++)
    t->items[i] = items[i];
  return (ts_iv){.u.tup = t, .tag = TS_IV_TUPLE};
}

static void check_str(ts_iv v, const char *want, const char *file, int line) {
  ts_buf b = {0};
  ts_iv_str(&b, v);
  if (!ts_test_streq(b.data ? b.data : "", want, file, line, "str", "want"))
    (void)0;
  ts_buf_free(&b);
}
#define CHECK_STR(v, want) check_str((v), (want), __FILE__, __LINE__)

/* A tensor from values. */
static ts_rt_tensor *tensor_of(ts_dtype dt, int32_t ndim, const int64_t *sizes, const double *vals) {
  ts_rt_tensor *t = ts_rt_tensor_new(&ctx, dt, ndim, sizes, false);
  if (!t)
    return NULL;
  size_t esz = ts_dtype_size(dt);
  for (int64_t i = 0; i < ts_rt_tensor_numel(t); i++)
    ts_rt_store_f64((char *)ts_rt_tensor_data(t) + i * esz, dt, vals[i]);
  return t;
}

#define CHECK_TSTR(dt, ndim, sizes, vals, want)                                                                  \
  do {                                                                                                           \
    ts_rt_tensor *t_ = tensor_of((dt), (ndim), (sizes), (vals));                                                 \
    if (TS_CHECK(t_))                                                                                            \
      CHECK_STR(ts_iv_tensor(t_), (want));                                                                       \
    ts_rt_tensor_release(t_);                                                                                    \
  } while (0)

static void test_equal_and_str(void) {
  /* Python: 1 == 1.0 == True; 'a' == 'a'; [1, 2.0] == [1.0, 2]; (1,) != [1] */
  TS_CHECK(ts_iv_equal(ts_iv_int(1), ts_iv_double(1.0)));
  TS_CHECK(ts_iv_equal(ts_iv_bool(true), ts_iv_int(1)));
  TS_CHECK(!ts_iv_equal(ts_iv_int(1), ts_iv_double(1.5)));
  TS_CHECK(!ts_iv_equal(ts_iv_double(NAN), ts_iv_double(NAN)));
  TS_CHECK(ts_iv_equal(ts_iv_none(), ts_iv_none()));
  TS_CHECK(!ts_iv_equal(ts_iv_none(), ts_iv_int(0)));
  ts_iv sa = str_iv("abc"), sb = str_iv("abc"), sc = str_iv("abd");
  TS_CHECK(ts_iv_equal(sa, sb) && !ts_iv_equal(sa, sc));
  ts_iv l1 = list_of(2, (ts_iv[]){ts_iv_int(1), ts_iv_double(2.0)});
  ts_iv l2 = list_of(2, (ts_iv[]){ts_iv_double(1.0), ts_iv_int(2)});
  ts_iv t1 = tuple_of(1, (ts_iv[]){ts_iv_int(1)});
  TS_CHECK(ts_iv_equal(l1, l2) && !ts_iv_equal(l1, t1));
  ts_rt_tensor *ta = ts_rt_tensor_scalar(&ctx, TS_DT_INT64, 0, 1), *tb = ts_rt_tensor_scalar(&ctx, TS_DT_INT64, 0, 1);
  TS_CHECK(ts_iv_equal(ts_iv_tensor(ta), ts_iv_tensor(ta)) && !ts_iv_equal(ts_iv_tensor(ta), ts_iv_tensor(tb)));
  ts_device cpu = {.type = TS_DEV_CPU, .index = -1}, cuda0 = {.type = TS_DEV_CUDA, .index = 0};
  TS_CHECK(!ts_iv_equal(ts_iv_device(cpu), ts_iv_device(cuda0)));

  /* TorchScript's printer (prim::Print / aten::str), as PyTorch 1.13 writes it:
   *   @torch.jit.script
   *   def f(xs: List[float]) -> List[str]: return [str(x) for x in xs]
   * f([1.0, 0.1, 1e-5, 1e16, 1e17, 1e22, -2.0, 1.5, 123.456, 1.0/3, 1e-300, inf, -inf, nan, -2.0**63, 2.0**63]) ->
   * ['1.', '0.10000000000000001', '1.0000000000000001e-05', '10000000000000000.', '100000000000000000.', '1e+22',
   *  '-2.', '1.5', '123.456', '0.33333333333333331', '1e-300', 'inf', '-inf', 'nan', '-9223372036854775808.',
   *  '9.2233720368547758e+18'] */
  static const double dv[] = {1.0, 0.1, 1e-5, 1e16, 1e17, 1e22, -2.0, 1.5, 123.456, 1.0 / 3, 1e-300,
                              INFINITY, -INFINITY, NAN, -9223372036854775808.0, 9223372036854775808.0};
  static const char *const ds[] = {"1.", "0.10000000000000001", "1.0000000000000001e-05", "10000000000000000.",
                                   "100000000000000000.", "1e+22", "-2.", "1.5", "123.456", "0.33333333333333331",
                                   "1e-300", "inf", "-inf", "nan", "-9223372036854775808.",
                                   "9.2233720368547758e+18"};
  for (size_t i = 0; i < sizeof dv / sizeof dv[0]; i++)
    CHECK_STR(ts_iv_double(dv[i]), ds[i]);
  CHECK_STR(ts_iv_int(-42), "-42");
  CHECK_STR(ts_iv_bool(true), "True");
  CHECK_STR(ts_iv_none(), "None");
  CHECK_STR(ts_iv_device(cpu), "cpu");
  CHECK_STR(ts_iv_device(cuda0), "cuda:0");
  /* print(l, d, (s, 1.0), [[s]], (), [True]) with s = 'x y', l = [1, -2], d = {s: l}:
   * "[1, -2] {x y: [1, -2]} (x y, 1.) [[x y]] () [True]" -- strings are not quoted inside containers */
  ts_iv sx = str_iv("x y");
  ts_iv l = list_of(2, (ts_iv[]){ts_iv_int(1), ts_iv_int(-2)});
  CHECK_STR(l, "[1, -2]");
  ts_rt_dict *d = ts_rt_dict_new(&ctx, NULL, NULL);
  ts_rt_dict_set(&ctx, d, sx, l);
  ts_iv div = {.u.dict = d, .tag = TS_IV_DICT};
  CHECK_STR(div, "{x y: [1, -2]}");
  ts_iv_retain(sx);
  ts_iv tup = tuple_of(2, (ts_iv[]){sx, ts_iv_double(1.0)});
  CHECK_STR(tup, "(x y, 1.)");
  ts_iv_retain(sx);
  ts_iv inner = list_of(1, (ts_iv[]){sx});
  ts_iv nested = list_of(1, (ts_iv[]){inner});
  CHECK_STR(nested, "[[x y]]");
  ts_iv empty = tuple_of(0, NULL);
  CHECK_STR(empty, "()");
  CHECK_STR(t1, "(1,)");
  ts_iv lb = list_of(1, (ts_iv[]){ts_iv_bool(true)});
  CHECK_STR(lb, "[True]");
  CHECK_STR(sx, "x y");
  /* repr quotes strings as Python does: repr("it's") == "\"it's\"" */
  ts_buf b = {0};
  ts_iv q = str_iv("it's");
  ts_iv_repr(&b, q);
  TS_CHECK_STREQ(b.data, "\"it's\"");
  ts_buf_free(&b);
  ts_iv_repr(&b, nested);
  TS_CHECK_STREQ(b.data, "[['x y']]");
  ts_buf_free(&b);
  TS_CHECK_STREQ(ts_iv_tag_name(l), "List");
  TS_CHECK_STREQ(ts_iv_tag_name(ts_iv_int(1)), "int");
  TS_CHECK_STREQ(ts_iv_tag_name(ts_iv_tensor(ta)), "Tensor");

  /* Tensors as ATen's printer writes them: str(x) in TorchScript. */
  int64_t s2 = 2, s22[2] = {2, 2}, s3 = 3, s1 = 1, s0 = 0;
  /* torch.tensor([1.5, 2.25]) */
  CHECK_TSTR(TS_DT_FLOAT32, 1, &s2, ((double[]){1.5, 2.25}), " 1.5000\n 2.2500\n[ CPUFloatType{2} ]");
  /* torch.tensor([1e-5, 1.0]) */
  CHECK_TSTR(TS_DT_FLOAT32, 1, &s2, ((double[]){1e-5, 1.0}), " 1.0000e-05\n 1.0000e+00\n[ CPUFloatType{2} ]");
  /* torch.tensor([[1.5, -2.0], [3.0, 4.0]]) */
  CHECK_TSTR(TS_DT_FLOAT32, 2, s22, ((double[]){1.5, -2.0, 3.0, 4.0}),
             " 1.5000 -2.0000\n 3.0000  4.0000\n[ CPUFloatType{2,2} ]");
  /* torch.tensor([[1, 2], [3, 4]]) */
  CHECK_TSTR(TS_DT_INT64, 2, s22, ((double[]){1, 2, 3, 4}), " 1  2\n 3  4\n[ CPULongType{2,2} ]");
  /* torch.tensor(3.5), torch.tensor(2), torch.tensor(True) */
  CHECK_TSTR(TS_DT_FLOAT32, 0, NULL, ((double[]){3.5}), "3.5\n[ CPUFloatType{} ]");
  CHECK_TSTR(TS_DT_INT64, 0, NULL, ((double[]){2}), "2\n[ CPULongType{} ]");
  CHECK_TSTR(TS_DT_BOOL, 1, &s2, ((double[]){1, 0}), " 1\n 0\n[ CPUBoolType{2} ]");
  /* torch.tensor([1.0, nan, inf]) */
  CHECK_TSTR(TS_DT_FLOAT32, 1, &s3, ((double[]){1.0, NAN, INFINITY}), " 1\nnan\ninf\n[ CPUFloatType{3} ]");
  /* torch.zeros(0) */
  CHECK_TSTR(TS_DT_FLOAT32, 1, &s0, ((double[]){0}), "[ CPUFloatType{0} ]");
  /* torch.tensor([0.001, 0.002]) */
  CHECK_TSTR(TS_DT_FLOAT32, 1, &s2, ((double[]){0.001, 0.002}), "0.001 *\n 1.0000\n 2.0000\n[ CPUFloatType{2} ]");
  /* torch.tensor([1234567.0, 2.0]) */
  CHECK_TSTR(TS_DT_FLOAT32, 1, &s2, ((double[]){1234567.0, 2.0}), "1.23457e+06\n       2\n[ CPUFloatType{2} ]");
  /* torch.tensor([1000.5, 2.25]); torch.tensor([-0.001, 5.0]) */
  CHECK_TSTR(TS_DT_FLOAT32, 1, &s2, ((double[]){1000.5, 2.25}), " 1000.5000\n    2.2500\n[ CPUFloatType{2} ]");
  CHECK_TSTR(TS_DT_FLOAT32, 1, &s2, ((double[]){-0.001, 5.0}), "-0.0010\n 5.0000\n[ CPUFloatType{2} ]");
  /* torch.tensor([1e-200, 1.0], dtype=torch.float64); torch.tensor([1.5], dtype=torch.half) */
  CHECK_TSTR(TS_DT_FLOAT64, 1, &s2, ((double[]){1e-200, 1.0}), " 1.0000e-200\n  1.0000e+00\n[ CPUDoubleType{2} ]");
  CHECK_TSTR(TS_DT_FLOAT16, 1, &s1, ((double[]){1.5}), " 1.5000\n[ CPUHalfType{1} ]");
  CHECK_TSTR(TS_DT_BFLOAT16, 1, &s1, ((double[]){1.5}), " 1.5000\n[ CPUBFloat16Type{1} ]");
  CHECK_TSTR(TS_DT_INT8, 1, &s2, ((double[]){1, -100}), " 1\n-100\n[ CPUCharType{2} ]");
  /* torch.arange(8.).reshape(2, 2, 2) */
  int64_t s222[3] = {2, 2, 2};
  CHECK_TSTR(TS_DT_FLOAT32, 3, s222, ((double[]){0, 1, 2, 3, 4, 5, 6, 7}),
             "(1,.,.) = \n  0  1\n  2  3\n\n(2,.,.) = \n  4  5\n  6  7\n[ CPUFloatType{2,2,2} ]");
  /* torch.arange(16.).reshape(2, 2, 2, 2): the first leading dim varies fastest */
  int64_t s2222[4] = {2, 2, 2, 2};
  double v16[16];
  for (int i = 0; i < 16; i++)
    v16[i] = i;
  CHECK_TSTR(TS_DT_FLOAT32, 4, s2222, v16,
             "(1,1,.,.) = \n  0  1\n  2  3\n\n(2,1,.,.) = \n   8   9\n  10  11\n\n(1,2,.,.) = \n  4  5\n  6  7\n\n"
             "(2,2,.,.) = \n  12  13\n  14  15\n[ CPUFloatType{2,2,2,2} ]");
  /* torch.arange(30.).reshape(2, 15) + 0.5: wider than 80 columns */
  int64_t s215[2] = {2, 15};
  double v30[30];
  for (int i = 0; i < 30; i++)
    v30[i] = i + 0.5;
  CHECK_TSTR(TS_DT_FLOAT32, 2, s215, v30,
             "Columns 1 to 8  0.5000   1.5000   2.5000   3.5000   4.5000   5.5000   6.5000   7.5000\n"
             " 15.5000  16.5000  17.5000  18.5000  19.5000  20.5000  21.5000  22.5000\n\n"
             "Columns 9 to 15  8.5000   9.5000  10.5000  11.5000  12.5000  13.5000  14.5000\n"
             " 23.5000  24.5000  25.5000  26.5000  27.5000  28.5000  29.5000\n[ CPUFloatType{2,15} ]");
  /* A list holding a tensor: str([torch.zeros(1)]) */
  ts_rt_tensor *z = ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 1, &s1, true);
  ts_iv lz = list_of(1, (ts_iv[]){ts_iv_tensor(z)});
  CHECK_STR(lz, "[ 0\n[ CPUFloatType{1} ]]");

  ts_iv_release(lz);
  ts_iv_release(q);
  ts_iv_release(lb);
  ts_iv_release(empty);
  ts_iv_release(nested);
  ts_iv_release(tup);
  ts_iv_release(div);
  ts_iv_release(l);
  ts_iv_release(sx);
  ts_rt_tensor_release(ta);
  ts_rt_tensor_release(tb);
  ts_iv_release(t1);
  ts_iv_release(l1);
  ts_iv_release(l2);
  ts_iv_release(sa);
  ts_iv_release(sb);
  ts_iv_release(sc);
}

static void test_objects_and_deep(void) {
  static const char *const names[] = {"weight", "bias"};
  ts_rt_class cls = {.qualname = "__torch__.M", .nattrs = 2, .attr_names = names};
  ts_rt_object *o = ts_rt_object_new(&ctx, &cls);
  if (!TS_CHECK(o))
    return;
  TS_CHECK_INTEQ(ts_rt_class_attr_index(&cls, "bias"), 1);
  TS_CHECK_INTEQ(ts_rt_class_attr_index(&cls, "nope"), -1);
  TS_CHECK(o->attrs[0].tag == TS_IV_NONE);
  o->attrs[1] = ts_iv_tensor(ts_rt_tensor_scalar(&ctx, TS_DT_FLOAT64, 1.0, 0));
  ts_iv ov = {.u.obj = o, .tag = TS_IV_OBJECT};
  ts_buf b = {0};
  ts_iv_str(&b, ov);
  TS_CHECK(b.data && strncmp(b.data, "<__torch__.M object at ", 23) == 0);
  ts_buf_free(&b);
  ts_iv_release(ov);
  /* A list nested 100000 deep is freed without recursion. */
  ts_iv cur = ts_iv_int(0);
  for (int i = 0; i < 100000; i++)
    cur = list_of(1, &cur);
  ts_iv_release(cur);
}

typedef struct cover {
  atomic_int *hits;
  int64_t n;
} cover;

static void mark(void *arg, int64_t begin, int64_t end) {
  cover *cv = arg;
  for (int64_t i = begin; i < end; i++)
    atomic_fetch_add(&cv->hits[i], 1);
}

static void test_parallel_for(void) {
  static const int threads[] = {1, 2, 4};
  static const int64_t ns[] = {0, 1, 7, 1000, 100003};
  static const int64_t grains[] = {1, 10, 1000, 100000};
  for (size_t t = 0; t < 3; t++) {
    ts_rt_ctx c;
    ts_rt_ctx_init(&c, threads[t]);
    TS_CHECK_INTEQ(c.nthreads, threads[t]);
    for (size_t k = 0; k < 5; k++) {
      for (size_t g = 0; g < 4; g++) {
        cover cv = {calloc((size_t)ns[k] + 1, sizeof(atomic_int)), ns[k]};
        ts_rt_parallel_for(&c, ns[k], grains[g], mark, &cv);
        int bad = 0;
        for (int64_t i = 0; i < ns[k]; i++)
          bad += cv.hits[i] != 1;
        if (!TS_CHECK_INTEQ(bad, 0))
          fprintf(stderr, "  threads %d n %lld grain %lld\n", threads[t], (long long)ns[k], (long long)grains[g]);
        free(cv.hits);
      }
    }
    ts_rt_ctx_free(&c);
  }
  ts_rt_ctx c;
  ts_rt_ctx_init(&c, 0);
  TS_CHECK(c.nthreads >= 1);
  /* The thread count changed between calls: the pool follows it. */
  for (int nt = 3; nt >= 1; nt--) {
    c.nthreads = nt;
    cover cv = {calloc(5001, sizeof(atomic_int)), 5000};
    ts_rt_parallel_for(&c, 5000, 100, mark, &cv);
    int bad = 0;
    for (int64_t i = 0; i < 5000; i++)
      bad += cv.hits[i] != 1;
    TS_CHECK_INTEQ(bad, 0);
    free(cv.hits);
  }
  ts_rt_ctx_free(&c);
}

static void test_errors(void) {
  ts_rt_ctx c;
  ts_rt_ctx_init(&c, 1);
  TS_CHECK(!ts_rt_fail(&c, "first %d\n", 1));
  TS_CHECK(!ts_rt_fail(&c, "second"));
  TS_CHECK(c.failed);
  TS_CHECK_STREQ(c.err.data, "first 1");
  ts_rt_clear_error(&c);
  TS_CHECK(!c.failed);
  TS_CHECK(!ts_rt_oom(&c));
  TS_CHECK_STREQ(c.err.data, "out of memory");
  ts_rt_ctx_free(&c);
}

static void test_kernels(void) {
  ts_diag d = {0};
  bool ok = ts_rt_kernels_init(&d);
  if (!TS_CHECK(ok))
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  uint32_t n = 0;
  const ts_rt_kernel_def *const *all = ts_rt_kernels_all(&n);
  /* each schema finds its table's kernel, or complex.c's wrapper bound in
   * its place (ts_rt_cx_alts) */
  int bad = 0, wrapped = 0;
  for (uint32_t i = 0; i < n; i++) {
    ts_rt_kernel_fn fn = ts_rt_kernel_by_name(all[i]->schema);
    if (fn == all[i]->fn)
      continue;
    const ts_rt_cx_alt *a = ts_rt_cx_alts;
    while (a->schema && strcmp(a->schema, all[i]->schema) != 0)
      a++;
    if (a->schema && fn == a->wrap && *a->real == all[i]->fn)
      wrapped++;
    else
      bad++;
  }
  TS_CHECK_INTEQ(bad, 0);
  int nalts = 0;
  for (const ts_rt_cx_alt *a = ts_rt_cx_alts; a->schema; a++)
    nalts++;
  TS_CHECK_INTEQ(wrapped, nalts);
  TS_CHECK(ts_rt_kernel_by_name("aten::no_such_op") == NULL);
  TS_CHECK(ts_rt_kernel_by_name("aten::add.NoSuchOverload") == NULL);
  TS_CHECK(ts_rt_kernel_for(NULL) == NULL);
}

int main(void) {
  ts_rt_ctx_init(&ctx, 2);
  test_half_bf16();
  test_load_store();
  test_views();
  test_copy();
  test_dict();
  test_equal_and_str();
  test_objects_and_deep();
  test_parallel_for();
  test_errors();
  test_kernels();
  TS_CHECK(!ctx.failed);
  if (ctx.failed)
    fprintf(stderr, "ctx error: %s\n", ctx.err.data);
  ts_rt_ctx_free(&ctx);
  return ts_test_finish();
}
