/* tests/unit/test_rt_conv_act.c: tsaot::conv2d_act (conv2d, + residual,
 * clamp in one kernel) and the convolution and max-pooling fast paths of
 * kernels/conv.c and pool.c (the 3x3 depthwise rows, the 1x1 GEMM, the
 * epilogue, separable max pooling).
 *
 * Three kinds of checks:
 *   - literals from PyTorch 1.13 (/usr/bin/python3, torch), inputs made by
 *     seq() as in test_rt_nn.c:
 *       def seq(*shape, dt=torch.float32, m=37, mod=17, off=8, div=4.0):
 *           n = math.prod(shape)
 *           return torch.tensor([((i*m)%mod-off)/div for i in range(n)],
 *                               dtype=torch.float64).reshape(shape).to(dt)
 *   - conv2d_act against aten::conv2d, aten::add.Tensor and aten::clamp run
 *     one after the other through the kernel table (the ops it replaces);
 *   - the convolution and max pooling over a sweep of odd sizes, strides,
 *     paddings, groups and depthwise multipliers against a direct loop in
 *     double written here, at 1 and 2 threads.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "tensor_ops.h"
#include "test.h"

static ts_rt_ctx C;

/* clang-format off */
/* torch.clamp(F.conv2d(seq(2,3,6,7), seq(4,3,3,3,m=11,mod=7,off=3), seq(4,m=5,mod=3,off=1), stride=2, padding=1) + seq(2,4,3,4,m=13,mod=9,off=4), -1.5, 2.0) */
static const int64_t S_act_res[] = {2, 4, 3, 4};
static const double E_act_res[] = {0.0625, 0.375, 2.0, 1.4375, 1.5, -1.5, -1.5, -0.9375, -1.5, -1.5, 2.0, 2.0, -1.5, 1.0625, 0.75, -1.5, 0.5, 2.0, 1.125, 2.0, 1.75, 1.5, 0.3125, -1.5, 2.0, 1.375, 2.0, 1.0, -0.3125, -1.5, 2.0, -1.5, -1.5, 2.0, 1.25, 2.0, -1.25, 2.0, -1.5, -1.5, 1.5, 2.0, 2.0, -1.1875, 2.0, -1.5, -1.5, -0.5, -1.5, 2.0, -1.5, -1.5, 0.25, 2.0, 2.0, 0.625, 0.375, 2.0, -1.5, -1.5, 2.0, 1.25, -1.5, 1.0, -1.125, -1.5, 1.125, 1.375, 1.0625, 2.0, 2.0, 2.0, -0.3125, 1.5, -1.5, -0.125, 2.0, 2.0, -1.5, -1.5, 1.9375, -1.5, -1.5, 2.0, -0.25, -1.5, -1.5, 1.375, -1.5, -1.1875, 2.0, -0.4375, 2.0, 0.5, 2.0, -1.5};
/* F.relu(F.conv2d(seq(1,4,9,8), seq(4,1,3,3,m=11,mod=7,off=3), seq(4,m=5,mod=3,off=1), stride=2, padding=1, groups=4)) */
static const int64_t S_act_dw_s2[] = {1, 4, 5, 4};
static const double E_act_dw_s2[] = {0.0, 0.0, 1.875, 0.5, 0.0, 0.0, 0.0, 0.0, 1.625, 0.0625, 0.0, 2.8125, 0.0, 0.0, 0.0, 0.0, 1.25, 1.875, 0.0, 0.0, 0.0, 2.5, 0.0, 0.0, 0.0, 2.5, 0.375, 0.375, 1.8125, 0.375, 2.5, 0.0, 1.125, 0.0, 2.5, 0.375, 1.125, 0.0, 0.0, 2.3125, 0.0, 0.0, 0.0, 0.0, 1.9375, 0.0, 0.3125, 3.1875, 1.1875, 0.0, 0.0, 0.0, 1.5, 3.0625, 0.0, 0.3125, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 1.0, 0.0, 2.5, 0.0, 0.6875, 0.0, 3.0625, 0.0, 1.4375, 0.0, 0.0, 2.5, 0.6875, 0.0625, 0.0, 1.0};
/* F.conv2d(seq(1,3,5,13), seq(3,1,3,3,m=11,mod=7,off=3), None, padding=1, groups=3) + seq(1,3,5,13,m=13,mod=9,off=4) */
static const int64_t S_act_dw_res[] = {1, 3, 5, 13};
static const double E_act_dw_res[] = {-0.875, -0.875, 0.5, -1.4375, 3.125, -0.9375, 1.5, -1.5, -0.125, -2.0625, 2.5, 0.6875, 1.3125, 1.0, 0.6875, 0.25, -1.375, 0.3125, -1.3125, -1.75, 1.0, 2.5625, 0.0, -0.5625, 0.0625, -3.8125, -0.875, 1.6875, -0.875, 2.9375, -1.875, 1.9375, -0.75, -0.125, -0.6875, -0.0625, -2.75, 0.0, 3.0625, -1.6875, 0.6875, -0.9375, -1.375, -0.875, 2.9375, -1.875, 1.9375, -0.625, 0.9375, 0.5, -1.125, 2.375, 0.5, -1.3125, 0.625, 1.625, -0.5625, -0.75, 0.25, -2.0625, 2.125, 0.875, -1.3125, 0.625, -2.1875, 0.8125, -2.8125, 3.6875, 1.5625, -0.4375, -1.5, -2.4375, -1.375, 1.9375, 3.125, -1.125, 0.0625, -1.3125, -0.8125, 1.25, 3.3125, -3.25, -0.125, -1.25, 2.8125, 2.75, -0.625, -1.75, -3.0, 0.125, 0.25, 1.25, 0.875, -2.5, -1.5, -0.625, 2.5, 2.3125, -2.0, -1.125, -2.25, 4.0625, 1.75, -0.5625, -0.9375, -1.75, -0.875, 2.25, 1.0, -0.125, -1.25, -2.5, 0.625, 1.5, 3.5625, -3.0, -0.4375, -2.4375, 2.1875, 3.0, -0.5625, -1.875, -1.1875, -0.375, 1.375, 2.1875, -1.375, -2.6875, 0.25, 0.5, 2.0625, -2.0625, 2.125, 0.875, -1.3125, 0.625, -1.5625, 2.625, 1.375, -0.8125, -1.0, 0.0, -3.0, 2.3125, -1.0, -1.75, 0.6875, -0.1875, 0.125, -0.75, 1.6875, -2.375, 2.1875, -1.875, 2.6875, -0.125, -3.3125, 0.3125, -0.5625, -0.25, 2.0625, 0.25, -2.75, -0.3125, 1.0625, -0.875, 0.5, 0.6875, 0.75, 0.625, -0.625, 1.6875, -0.125, -0.875, -0.6875, 0.6875, -1.25, 3.3125, -0.75, -1.5, -1.3125, -0.5, 2.125, -1.1875, 0.5, -1.125, 1.625, -1.0625, 2.75, -2.0625, -0.375, 0.25, 0.75, 0.3125, 1.75};
/* F.hardtanh(F.conv2d(seq(1,5,3,5), seq(4,5,1,1,m=11,mod=7,off=3), seq(4,m=5,mod=3,off=1)), 0.0, 1.0) */
static const int64_t S_act_1x1[] = {1, 4, 3, 5};
static const double E_act_1x1[] = {1.0, 0.0, 0.0, 0.0, 0.4375, 0.0, 0.375, 0.0, 0.0, 0.0, 0.25, 0.0, 0.1875, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0625, 1.0, 1.0, 0.0, 0.0, 0.1875, 0.0, 1.0, 1.0, 0.0, 0.0, 0.125, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0625, 0.0, 0.0, 0.0, 0.1875, 0.0, 0.25, 0.0, 0.0, 0.0, 0.375, 0.0};
/* torch.clamp(F.conv2d(seq(1,2,4,5,dt=torch.float64), seq(3,2,3,3,m=11,mod=7,off=3,dt=torch.float64), None, padding=1), max=0.5) */
static const int64_t S_act_f64[] = {1, 3, 4, 5};
static const double E_act_f64[] = {-2.5625, -0.8125, 0.5, 0.5, -0.5625, -2.1875, -0.875, 0.5, -0.5625, 0.5, 0.5, -4.875, 0.5, 0.5, -0.9375, 0.25, -2.125, -2.3125, -0.375, -0.9375, -2.125, 0.5, -0.4375, 0.4375, 0.5, 0.5, -4.0625, -1.0625, 0.5, 0.5, 0.5, -3.9375, -3.0625, -2.1875, 0.5, 0.4375, 0.5, -2.6875, -0.4375, 0.5, -0.375, -1.9375, -0.75, 0.5, 0.0, 0.5, -0.25, -3.4375, 0.5, -0.6875, -0.875, 0.5, -1.3125, -1.3125, 0.5, 0.5, 0.125, 0.0, -2.25, -0.3125};
/* x = seq(1,2,9,11); x[0,1,4,5] = nan; F.max_pool2d(x, 3, 2, 1) */
static const int64_t S_mp_nan[] = {1, 2, 5, 6};
static const double E_mp_nan[] = {2.0, 0.25, 1.75, 1.75, 0.5, 1.25, 2.0, 0.0, 1.5, 2.0, 0.25, 1.0, 2.0, 2.0, 1.0, 2.0, 2.0, 0.5, 1.75, 2.0, 0.5, 2.0, 2.0, 0.0, 1.25, 2.0, 0.0, 1.5, 2.0, -0.5, 0.75, 2.0, 2.0, 1.0, 1.75, -1.0, 0.5, 2.0, 2.0, 0.75, 2.0, 2.0, 0.0, 1.5, NAN, NAN, 1.75, 2.0, -0.5, 1.0, 2.0, 2.0, 1.25, 2.0, -1.0, 0.5, 2.0, 2.0, 0.75, 1.5};
/* F.max_pool2d(seq(1,1,12,10), (3,2), (1,3), (1,1), (1,2)) */
static const int64_t S_mp_odd[] = {1, 1, 12, 4};
static const double E_mp_odd[] = {2.0, 1.0, 1.75, -0.25, 2.0, 1.75, 1.75, 2.0, 2.0, 1.75, 1.25, 2.0, 1.0, 1.75, 2.0, 2.0, 0.0, 1.25, 2.0, 1.0, 1.25, 2.0, 2.0, 0.0, 1.25, 2.0, 1.5, 1.25, 1.25, 2.0, 1.5, 1.25, 0.25, 1.5, 1.25, 1.25, 1.5, 1.5, 1.75, 0.25, 1.5, 1.25, 1.75, 1.5, 1.5, 1.25, 1.75, 1.5};
/* F.max_pool2d(seq(2,3,8,13), 2, 2, 0, 1, True) */
static const int64_t S_mp_s2[] = {2, 3, 4, 7};
static const double E_mp_s2[] = {0.0, 1.5, 1.75, 0.25, 1.75, 2.0, -0.25, 1.75, 2.0, 1.25, 2.0, 0.0, 1.5, 1.0, 0.75, 1.5, 1.75, 1.0, 1.75, 2.0, 0.5, 2.0, 0.5, 2.0, 1.5, 0.75, 1.5, 1.75, 1.5, 1.75, 0.25, 1.75, 2.0, 0.5, 1.25, 2.0, 1.25, 2.0, 0.0, 1.5, 1.75, -0.5, 1.5, 1.75, 1.0, 1.75, 2.0, 1.25, 2.0, 0.5, 2.0, 1.5, 0.75, 1.5, 1.75, 0.25, 1.75, 0.25, 1.75, 2.0, 0.5, 2.0, 1.5, 1.25, 2.0, 0.0, 1.5, 1.75, 0.25, 1.0, 1.75, 1.0, 1.75, 2.0, 1.25, 2.0, -0.75, 2.0, 1.5, 0.75, 1.5, 1.75, 1.0, 1.75, 0.25, 1.75, 2.0, 0.5, 2.0, 1.5, 0.0, 2.0, 0.0, 1.5, 1.75, 0.25, 1.75, 1.25, 1.0, 1.75, 2.0, 1.25, 2.0, 0.0, 0.75, 1.5, 0.75, 1.5, 1.75, 1.0, 1.75, 2.0, 1.75, 2.0, 0.5, 2.0, 1.5, 0.75, 1.5, 0.0, 1.5, 1.75, 0.25, 1.75, 2.0, -0.25, 1.75, 2.0, 1.25, 2.0, 0.0, 1.5, 1.0, 0.75, 1.5, 1.75, 1.0, 1.75, 2.0, 0.5, 2.0, 0.5, 2.0, 1.5, 0.75, 1.5, 1.75, 1.5, 1.75, 0.25, 1.75, 2.0, 0.5, 1.25, 2.0, 1.25, 2.0, 0.0, 1.5, 1.75, -0.5, 1.5, 1.75, 1.0, 1.75, 2.0, 1.25, 2.0};
/* clang-format on */

typedef struct seqp {
  int m, mod, off;
  double div;
} seqp;
static const seqp D = {37, 17, 8, 4.0}, PW = {11, 7, 3, 4.0}, PB = {5, 3, 1, 4.0}, PR = {13, 9, 4, 4.0};

/* seq() of the Python above: a contiguous tensor of dtype dt. */
static ts_rt_tensor *seqt(ts_dtype dt, int32_t nd, const int64_t *sizes, seqp p) {
  ts_rt_tensor *t = ts_rt_tensor_new(&C, dt, nd, sizes, false);
  if (!t) return NULL;
  int64_t n = ts_rt_tensor_numel(t);
  size_t es = ts_dtype_size(dt);
  for (int64_t i = 0; i < n; i++)
    ts_rt_store_f64((char *)ts_rt_tensor_data(t) + i * (int64_t)es, dt, (double)((i * p.m) % p.mod - p.off) / p.div);
  return t;
}

#define SZ(...) ((const int64_t[]){__VA_ARGS__})
#define NDIM(...) ((int32_t)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define SEQP(p, ...) ts_iv_tensor(seqt(TS_DT_FLOAT32, NDIM(__VA_ARGS__), SZ(__VA_ARGS__), p))
#define SEQD(dt, p, ...) ts_iv_tensor(seqt(dt, NDIM(__VA_ARGS__), SZ(__VA_ARGS__), p))

static ts_iv ilist(int n, const int64_t *v) {
  ts_rt_list *l = ts_rt_list_new(&C, NULL, (uint32_t)n);
  for (int i = 0; i < n; i++) ts_rt_list_append(&C, l, ts_iv_int(v[i]));
  return (ts_iv){.u.l = l, .tag = TS_IV_LIST};
}
#define IL(...) ilist(NDIM(__VA_ARGS__), SZ(__VA_ARGS__))
#define NONE ts_iv_none()
#define I(x) ts_iv_int(x)
#define F(x) ts_iv_double(x)
#define BO(x) ts_iv_bool(x)

/* Runs a kernel on in[0..n) (released after); the result into *out. */
static bool run(const char *schema, ts_iv *in, uint32_t n, ts_iv *out) {
  ts_rt_kernel_fn fn = ts_rt_kernel_by_name(schema);
  *out = ts_iv_none();
  bool ok = false;
  if (TS_CHECK(fn != NULL)) {
    ts_rt_call call = {in, n, out, 1, NULL};
    ts_rt_clear_error(&C);
    ok = fn(&C, &call);
    if (!ok) fprintf(stderr, "  %s failed: %s\n", schema, C.err.data ? C.err.data : "");
  }
  for (uint32_t i = 0; i < n; i++) ts_iv_release(in[i]);
  return ok && out->tag == TS_IV_TENSOR;
}

/* Element k of contiguous-or-not t (row-major order), as double. */
static double at(const ts_rt_tensor *t, int64_t k) {
  int64_t off = t->offset;
  for (int32_t i = t->ndim - 1; i >= 0; i--) {
    off += (k % t->sizes[i]) * t->strides[i];
    k /= t->sizes[i];
  }
  return ts_rt_load_f64((const char *)t->storage->data + off * (int64_t)ts_dtype_size((ts_dtype)t->dtype),
                        (ts_dtype)t->dtype);
}

/* Whether t has the shape and (within tol relative, 1e-6 absolute, NaN
 * matching NaN) the values. */
static bool same(const ts_rt_tensor *t, int32_t nd, const int64_t *sizes, const double *want, double tol, int line) {
  if (!TS_CHECK(t->ndim == nd)) return false;
  int64_t n = 1;
  for (int32_t i = 0; i < nd; i++) {
    if (!TS_CHECK(t->sizes[i] == sizes[i])) {
      fprintf(stderr, "line %d: size %d is %lld, want %lld\n", line, i, (long long)t->sizes[i], (long long)sizes[i]);
      return false;
    }
    n *= sizes[i];
  }
  for (int64_t k = 0; k < n; k++) {
    double v = at(t, k);
    bool eq = (isnan(v) && isnan(want[k])) || v == want[k] || fabs(v - want[k]) <= tol * fabs(want[k]) + 1e-6;
    if (!TS_CHECK(eq)) {
      fprintf(stderr, "line %d: element %lld is %.10g, want %.10g\n", line, (long long)k, v, want[k]);
      return false;
    }
  }
  return true;
}

#define EXPECT(schema, ins, name)                                                                                      \
  do {                                                                                                                 \
    ts_iv out_;                                                                                                        \
    if (TS_CHECK(run(schema, ins, (uint32_t)(sizeof ins / sizeof(ts_iv)), &out_)))                                     \
      same(out_.u.t, (int32_t)(sizeof S_##name / sizeof(int64_t)), S_##name, E_##name, 1e-5, __LINE__);               \
    ts_iv_release(out_);                                                                                               \
  } while (0)

/* The PyTorch literals. */
static void test_literals(void) {
  ts_iv a[] = {SEQP(D, 2, 3, 6, 7), SEQP(PW, 4, 3, 3, 3), SEQP(PB, 4), IL(2), IL(1), IL(1), I(1), F(-1.5), F(2.0),
               SEQP(PR, 2, 4, 3, 4)};
  EXPECT("tsaot::conv2d_act", a, act_res);
  ts_iv b[] = {SEQP(D, 1, 4, 9, 8), SEQP(PW, 4, 1, 3, 3), SEQP(PB, 4), IL(2, 2), IL(1, 1), IL(1, 1), I(4), F(0), NONE,
               NONE};
  EXPECT("tsaot::conv2d_act", b, act_dw_s2);
  ts_iv c[] = {SEQP(D, 1, 3, 5, 13), SEQP(PW, 3, 1, 3, 3), NONE, IL(1), IL(1), IL(1), I(3), NONE, NONE,
               SEQP(PR, 1, 3, 5, 13)};
  EXPECT("tsaot::conv2d_act", c, act_dw_res);
  ts_iv d[] = {SEQP(D, 1, 5, 3, 5), SEQP(PW, 4, 5, 1, 1), SEQP(PB, 4), IL(1), IL(0), IL(1), I(1), F(0), F(1), NONE};
  EXPECT("tsaot::conv2d_act", d, act_1x1);
  ts_iv e[] = {SEQD(TS_DT_FLOAT64, D, 1, 2, 4, 5), SEQD(TS_DT_FLOAT64, PW, 3, 2, 3, 3), NONE, IL(1), IL(1), IL(1), I(1),
               NONE, F(0.5), NONE};
  EXPECT("tsaot::conv2d_act", e, act_f64);
  /* max pooling: a NaN wins its windows */
  ts_rt_tensor *x = seqt(TS_DT_FLOAT32, 4, SZ(1, 2, 9, 11), D);
  if (TS_CHECK(x != NULL)) ((float *)ts_rt_tensor_data(x))[99 + 4 * 11 + 5] = NAN;
  ts_iv f[] = {ts_iv_tensor(x), IL(3, 3), IL(2, 2), IL(1, 1), IL(1, 1), BO(false)};
  EXPECT("aten::max_pool2d", f, mp_nan);
  ts_iv g[] = {SEQP(D, 1, 1, 12, 10), IL(3, 2), IL(1, 3), IL(1, 1), IL(1, 2), BO(false)};
  EXPECT("aten::max_pool2d", g, mp_odd);
  ts_iv h[] = {SEQP(D, 2, 3, 8, 13), IL(2), IL(2), IL(0), IL(1), BO(true)};
  EXPECT("aten::max_pool2d", h, mp_s2);
}

/* The errors conv2d_act gives for what its pass never makes. */
static void test_errors(void) {
  ts_iv out;
  ts_iv a[] = {SEQP(D, 1, 2, 4, 4), SEQP(PW, 3, 2, 3, 3), NONE, IL(1), IL(1), IL(1), I(1), NONE, NONE,
               SEQP(PR, 1, 3, 4, 5)};
  TS_CHECK(!run("tsaot::conv2d_act", a, 10, &out));
  TS_CHECK(C.err.data && strstr(C.err.data, "residual") != NULL);
  ts_iv b[] = {SEQD(TS_DT_INT64, D, 1, 2, 4, 4), SEQD(TS_DT_INT64, PW, 3, 2, 3, 3), NONE, IL(1), IL(1), IL(1), I(1),
               NONE, NONE, NONE};
  TS_CHECK(!run("tsaot::conv2d_act", b, 10, &out));
}

/* A small deterministic generator for the sweeps. */
static uint64_t rng = 88172645463325252ull;
static double rnd(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}
static ts_rt_tensor *rand_t(ts_dtype dt, int32_t nd, const int64_t *sizes) {
  ts_rt_tensor *t = ts_rt_tensor_new(&C, dt, nd, sizes, false);
  if (!t) return NULL;
  int64_t n = ts_rt_tensor_numel(t);
  for (int64_t i = 0; i < n; i++)
    ts_rt_store_f64((char *)ts_rt_tensor_data(t) + i * (int64_t)ts_dtype_size(dt), dt, rnd());
  return t;
}

/* One convolution geometry of the sweep. */
typedef struct cgeo {
  int64_t N, C, H, W, O, K, s, p, d, groups;
} cgeo;

/* clamp(conv2d(x, w, b) + r, lo, hi) by the definition, in double. */
static double direct(const cgeo *g, const ts_rt_tensor *x, const ts_rt_tensor *w, const ts_rt_tensor *b,
                     const ts_rt_tensor *r, double lo, double hi, int64_t OH, int64_t OW, int64_t idx) {
  int64_t ow = idx % OW, oh = idx / OW % OH, o = idx / (OW * OH) % g->O, n = idx / (OW * OH * g->O);
  int64_t cg = g->C / g->groups, og = g->O / g->groups, gi = o / og;
  double acc = 0;
  for (int64_t ci = 0; ci < cg; ci++)
    for (int64_t kh = 0; kh < g->K; kh++)
      for (int64_t kw = 0; kw < g->K; kw++) {
        int64_t ih = oh * g->s - g->p + kh * g->d, iw = ow * g->s - g->p + kw * g->d;
        if (ih < 0 || ih >= g->H || iw < 0 || iw >= g->W) continue;
        acc += at(x, ((n * g->C + gi * cg + ci) * g->H + ih) * g->W + iw) * at(w, ((o * cg + ci) * g->K + kh) * g->K + kw);
      }
  if (b) acc += at(b, o);
  if (r) acc += at(r, idx);
  return acc < lo ? lo : acc > hi ? hi : acc;
}

/* conv2d_act over g against the direct loop and against conv2d, add and
 * clamp through the kernel table. */
static void check_geo(const cgeo *g, ts_dtype dt, bool bias, bool res, double lo, double hi) {
  int64_t OH = (g->H + 2 * g->p - g->d * (g->K - 1) - 1) / g->s + 1, OW = (g->W + 2 * g->p - g->d * (g->K - 1) - 1) / g->s + 1;
  ts_rt_tensor *x = rand_t(dt, 4, SZ(g->N, g->C, g->H, g->W));
  ts_rt_tensor *w = rand_t(dt, 4, SZ(g->O, g->C / g->groups, g->K, g->K));
  ts_rt_tensor *b = bias ? rand_t(dt, 1, SZ(g->O)) : NULL;
  ts_rt_tensor *r = res ? rand_t(dt, 4, SZ(g->N, g->O, OH, OW)) : NULL;
  if (!TS_CHECK(x && w && (!bias || b) && (!res || r))) return;
  ts_rt_tensor_retain(x), ts_rt_tensor_retain(w);
  if (b) ts_rt_tensor_retain(b);
  if (r) ts_rt_tensor_retain(r);
  ts_iv in[] = {ts_iv_tensor(x), ts_iv_tensor(w), b ? ts_iv_tensor(b) : NONE, IL(g->s, g->s), IL(g->p, g->p),
                IL(g->d, g->d), I(g->groups), isinf(lo) ? NONE : F(lo), isinf(hi) ? NONE : F(hi),
                r ? ts_iv_tensor(r) : NONE};
  ts_iv y;
  bool ok = run("tsaot::conv2d_act", in, 10, &y);
  /* the ops it replaces, one after the other */
  ts_iv ref = NONE;
  ts_rt_tensor_retain(x), ts_rt_tensor_retain(w);
  if (b) ts_rt_tensor_retain(b);
  ts_iv cin[] = {ts_iv_tensor(x), ts_iv_tensor(w), b ? ts_iv_tensor(b) : NONE, IL(g->s, g->s), IL(g->p, g->p),
                 IL(g->d, g->d), I(g->groups)};
  bool rok = run("aten::conv2d", cin, 7, &ref);
  if (rok && r) {
    ts_rt_tensor_retain(r);
    ts_iv ain[] = {ref, ts_iv_tensor(r), I(1)};
    rok = run("aten::add.Tensor", ain, 3, &ref);
  }
  if (rok && (!isinf(lo) || !isinf(hi))) {
    ts_iv kin[] = {ref, isinf(lo) ? NONE : F(lo), isinf(hi) ? NONE : F(hi)};
    rok = run("aten::clamp", kin, 3, &ref);
  }
  if (TS_CHECK(ok) && TS_CHECK(rok)) {
    int64_t n = ts_rt_tensor_numel(y.u.t);
    TS_CHECK_INTEQ(n, g->N * g->O * OH * OW);
    int bad = 0;
    for (int64_t k = 0; k < n && bad < 3; k++) {
      double v = at(y.u.t, k), want = direct(g, x, w, b, r, lo, hi, OH, OW, k), v2 = at(ref.u.t, k);
      bool eq = fabs(v - want) <= 1e-4 * (1 + fabs(want)) && v == v2;
      if (!TS_CHECK(eq)) {
        bad++;
        fprintf(stderr, "  N%lld C%lld H%lld W%lld O%lld K%lld s%lld p%lld d%lld g%lld dt%d threads %d: element %lld is "
                        "%.9g, direct %.9g, conv2d+add+clamp %.9g\n",
                (long long)g->N, (long long)g->C, (long long)g->H, (long long)g->W, (long long)g->O, (long long)g->K,
                (long long)g->s, (long long)g->p, (long long)g->d, (long long)g->groups, (int)dt, C.nthreads,
                (long long)k, v, want, v2);
      }
    }
  }
  ts_iv_release(y);
  ts_iv_release(ref);
  ts_rt_tensor_release(x), ts_rt_tensor_release(w);
  if (b) ts_rt_tensor_release(b);
  if (r) ts_rt_tensor_release(r);
}

/* Odd sizes, every path: im2col + GEMM, 1x1 direct, 1x1 strided, groups,
 * depthwise 3x3 (stride 1, 2, 3; padding 0, 1, 2; multiplier 2; widths
 * shorter than the window, one-column and one-row planes), depthwise 5x5
 * and dilated (the general loop). */
static void test_sweep(void) {
  static const cgeo geos[] = {
      {2, 3, 7, 9, 5, 3, 1, 1, 1, 1},  {1, 4, 11, 13, 6, 3, 2, 1, 1, 2}, {1, 5, 6, 7, 4, 1, 1, 0, 1, 1},
      {2, 6, 5, 9, 3, 1, 2, 0, 1, 1},  {1, 3, 9, 10, 4, 2, 1, 0, 2, 1},  {1, 8, 13, 17, 8, 3, 1, 1, 1, 8},
      {2, 5, 12, 19, 5, 3, 2, 1, 1, 5}, {1, 4, 9, 23, 8, 3, 1, 1, 1, 4}, {1, 3, 8, 8, 3, 3, 3, 2, 1, 3},
      {1, 3, 4, 2, 3, 3, 1, 1, 1, 3},  {1, 3, 2, 1, 3, 3, 2, 1, 1, 3},  {1, 2, 7, 6, 2, 3, 1, 0, 1, 2},
      {1, 4, 10, 11, 4, 5, 2, 2, 1, 4}, {1, 4, 10, 11, 4, 3, 1, 2, 2, 4}, {1, 2, 15, 40, 2, 3, 2, 1, 1, 2},
      {3, 16, 7, 7, 16, 3, 1, 1, 1, 16}, {1, 2, 5, 1, 2, 3, 1, 1, 1, 2},  {1, 2, 1, 6, 4, 3, 1, 1, 1, 2},
      /* column blocks (kernels/conv.c: about 1 MiB of im2col each, a partial last one): stride 1 and 2, 1x1
       * direct, groups with dilation */
      {1, 64, 23, 23, 8, 3, 1, 1, 1, 1}, {1, 64, 45, 47, 8, 3, 2, 1, 1, 1}, {1, 512, 24, 25, 8, 1, 1, 0, 1, 1},
      {1, 128, 30, 31, 8, 3, 1, 2, 2, 2},
  };
  const size_t nsmall = 18;
  for (int threads = 1; threads <= 2; threads++) {
    ts_rt_ctx_free(&C);
    ts_rt_ctx_init(&C, threads);
    for (size_t i = 0; i < sizeof geos / sizeof *geos; i++) {
      check_geo(&geos[i], TS_DT_FLOAT32, true, true, 0, INFINITY);
      check_geo(&geos[i], TS_DT_FLOAT64, true, true, -INFINITY, 0.75);
      if (i >= nsmall) continue; /* the big ones: two variants are enough */
      check_geo(&geos[i], TS_DT_FLOAT32, i % 2 == 0, false, 0, 6);
      check_geo(&geos[i], TS_DT_FLOAT32, false, i % 3 == 0, -0.25, 0.5);
      check_geo(&geos[i], TS_DT_FLOAT32, true, true, -INFINITY, INFINITY);
    }
  }
}

/* max_pool2d over odd sizes against the definition (in double), 1 and 2
 * threads, float32 (the separable path) and float64. */
static void test_maxpool_sweep(void) {
  static const int64_t cases[][9] = {
      /* N C H W k s p d ceil */
      {1, 3, 112, 113, 3, 2, 1, 1, 0}, {2, 2, 7, 5, 3, 1, 1, 1, 0}, {1, 1, 9, 10, 2, 2, 0, 1, 1},
      {1, 2, 10, 9, 3, 3, 1, 2, 1},    {1, 1, 4, 3, 4, 1, 2, 1, 0}, {1, 3, 33, 1, 3, 2, 1, 1, 0},
  };
  for (int threads = 1; threads <= 2; threads++) {
    ts_rt_ctx_free(&C);
    ts_rt_ctx_init(&C, threads);
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++)
      for (int f64 = 0; f64 < 2; f64++) {
        const int64_t *q = cases[ci];
        ts_dtype dt = f64 ? TS_DT_FLOAT64 : TS_DT_FLOAT32;
        ts_rt_tensor *x = rand_t(dt, 4, q);
        if (!TS_CHECK(x != NULL)) continue;
        if (ci == 1) ts_rt_store_f64(ts_rt_tensor_data(x), dt, NAN);
        ts_rt_tensor_retain(x);
        ts_iv in[] = {ts_iv_tensor(x), IL(q[4], q[4]), IL(q[5], q[5]), IL(q[6], q[6]), IL(q[7], q[7]), BO(q[8] != 0)};
        ts_iv y;
        if (TS_CHECK(run("aten::max_pool2d", in, 6, &y))) {
          const ts_rt_tensor *t = y.u.t;
          int64_t OH = t->sizes[2], OW = t->sizes[3], n = ts_rt_tensor_numel(t);
          int bad = 0;
          for (int64_t k = 0; k < n && bad < 3; k++) {
            int64_t ow = k % OW, oh = k / OW % OH, pl = k / (OW * OH);
            double m = -INFINITY;
            for (int64_t kh = 0; kh < q[4]; kh++)
              for (int64_t kw = 0; kw < q[4]; kw++) {
                int64_t ih = oh * q[5] - q[6] + kh * q[7], iw = ow * q[5] - q[6] + kw * q[7];
                if (ih < 0 || ih >= q[2] || iw < 0 || iw >= q[3]) continue;
                double v = at(x, (pl * q[2] + ih) * q[3] + iw);
                if (v > m || isnan(v)) m = v;
              }
            double v = at(t, k);
            if (!TS_CHECK((isnan(v) && isnan(m)) || v == m)) {
              bad++;
              fprintf(stderr, "  max_pool2d case %zu f64 %d threads %d: element %lld is %g, want %g\n", ci, f64,
                      threads, (long long)k, v, m);
            }
          }
        }
        ts_iv_release(y);
        ts_rt_tensor_release(x);
      }
  }
}

int main(void) {
  ts_rt_ctx_init(&C, 2);
  ts_diag d;
  memset(&d, 0, sizeof d);
  if (!TS_CHECK(ts_rt_kernels_init(&d))) {
    fprintf(stderr, "%s\n", d.text.data ? d.text.data : "");
    ts_diag_free(&d);
    return ts_test_finish();
  }
  ts_diag_free(&d);
  test_literals();
  test_errors();
  test_sweep();
  test_maxpool_sweep();
  ts_rt_ctx_free(&C);
  return ts_test_finish();
}
