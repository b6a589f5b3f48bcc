/* runtime/kernels/scan.c: running (cumulative) ops along one dim beyond
 * reduce.c's cumsum and cumprod, as PyTorch 1.13 computes them on the CPU:
 * cummax, cummin (values and int64 indices) and logcumsumexp. */
#include <math.h>
#include <string.h>

#include "args.h"
#include "tensor_ops.h"

/* The lanes of `a` along dim d: for each position of the other dims (in
 * row-major order), the element offset of its first element. */
typedef struct sc_lanes {
  int32_t nd;
  int64_t sizes[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS];
  int64_t idx[TS_RT_MAX_DIMS];
  int64_t off, count;
} sc_lanes;

static void sc_lanes_init(sc_lanes *l, const ts_rt_tensor *a, int32_t d) {
  l->nd = 0;
  l->count = 1;
  l->off = a->offset;
  for (int32_t k = 0; k < a->ndim; k++) {
    if (k == d) continue;
    l->sizes[l->nd] = a->sizes[k];
    l->strides[l->nd] = a->strides[k];
    l->idx[l->nd++] = 0;
    l->count *= a->sizes[k];
  }
}

static void sc_lanes_next(sc_lanes *l) {
  for (int32_t k = l->nd - 1; k >= 0; k--) {
    if (++l->idx[k] < l->sizes[k]) {
      l->off += l->strides[k];
      return;
    }
    l->off -= l->strides[k] * (l->sizes[k] - 1);
    l->idx[k] = 0;
  }
}

static bool sc_put2(ts_rt_call *call, ts_rt_tensor *v, ts_rt_tensor *i) {
  call->out[0] = ts_iv_tensor(v);
  call->out[1] = ts_iv_tensor(i);
  return true;
}

/* cummax / cummin (self, dim): the running maximum (minimum) and the index
 * where it was found; ties take the later index, and a NaN, once seen,
 * stays (each new NaN taking its own index), as ATen's
 * cummax_cummin_helper. */
static bool sc_cumext(ts_rt_ctx *c, ts_rt_call *call, bool max) {
  ts_rt_tensor *a = NULL;
  int64_t dim = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_int(c, call, 1, &dim)) return false;
  ts_dtype dt = (ts_dtype)a->dtype;
  if (dt == TS_DT_FLOAT16)
    return ts_rt_fail(c, "\"%s\" not implemented for 'Half'", max ? "cummax_cpu" : "cummin_cpu");
  if (!ts_rt_wrap_dim(c, dim, a->ndim, &dim)) return false;
  ts_rt_tensor *vals = ts_rt_tensor_new(c, dt, a->ndim, a->sizes, false);
  ts_rt_tensor *idxs = vals ? ts_rt_tensor_new(c, TS_DT_INT64, a->ndim, a->sizes, false) : NULL;
  if (!idxs) {
    if (vals) ts_rt_tensor_release(vals);
    return false;
  }
  if (ts_rt_tensor_numel(a) == 0) return sc_put2(call, vals, idxs);
  int32_t d = a->ndim ? (int32_t)dim : -1;
  int64_t n = a->ndim ? a->sizes[d] : 1, st = a->ndim ? a->strides[d] : 0;
  /* the outputs are contiguous: lane element k of lane j at j's base + k * ost */
  int64_t ost = 1;
  for (int32_t k = a->ndim - 1; k > d; k--) ost *= a->sizes[k];
  sc_lanes l, lo;
  sc_lanes_init(&l, a, d);
  sc_lanes_init(&lo, vals, d);
  size_t esz = ts_dtype_size(dt);
  bool is_float = ts_rt_dtype_is_float(dt);
  const char *ap = a->storage->data;
  char *vp = ts_rt_tensor_data(vals);
  int64_t *ip = ts_rt_tensor_data(idxs);
  for (int64_t j = 0; j < l.count; j++, sc_lanes_next(&l), sc_lanes_next(&lo)) {
    const char *best = ap + (size_t)l.off * esz;
    int64_t bi = 0;
    for (int64_t k = 0; k < n; k++) {
      const char *e = ap + (size_t)(l.off + k * st) * esz;
      bool take;
      if (is_float) {
        double x = ts_rt_load_f64(e, dt), b = ts_rt_load_f64(best, dt);
        take = isnan(x) || (!isnan(b) && (max ? x >= b : x <= b));
      } else {
        int64_t x = ts_rt_load_i64(e, dt), b = ts_rt_load_i64(best, dt);
        take = max ? x >= b : x <= b;
      }
      if (take) {
        best = e;
        bi = k;
      }
      memcpy(vp + (size_t)(lo.off + k * ost) * esz, best, esz);
      ip[lo.off + k * ost] = bi;
    }
  }
  return sc_put2(call, vals, idxs);
}
static bool sc_k_cummax(ts_rt_ctx *ctx, ts_rt_call *call) { return sc_cumext(ctx, call, true); }
static bool sc_k_cummin(ts_rt_ctx *ctx, ts_rt_call *call) { return sc_cumext(ctx, call, false); }

/* log(exp(x) + exp(y)) as ATen's _log_add_exp_helper: NaN propagates, and
 * equal infinities give x. */
static double sc_log_add_exp(double x, double y) {
  double lo = isnan(y) ? y : (x < y ? x : y), hi = isnan(y) ? y : (x < y ? y : x);
  if (lo != hi || isfinite(lo)) return log1p(exp(lo - hi)) + hi;
  return x;
}

static float sc_log_add_expf(float x, float y) {
  float lo = isnan(y) ? y : (x < y ? x : y), hi = isnan(y) ? y : (x < y ? y : x);
  if (lo != hi || isfinite(lo)) return log1pf(expf(lo - hi)) + hi;
  return x;
}

/* logcumsumexp(self, dim): float32, float64 and bfloat16 only; accumulated
 * in double (float for bfloat16, its accumulate type) from -inf. */
static bool sc_k_logcumsumexp(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  int64_t dim = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_int(c, call, 1, &dim)) return false;
  ts_dtype dt = (ts_dtype)a->dtype;
  if (!ts_rt_dtype_is_float(dt) || dt == TS_DT_FLOAT16)
    return ts_rt_fail(c, "\"logcumsumexp_out_cpu\" not implemented for '%s'", ts_rt_dtype_name(dt));
  if (!ts_rt_wrap_dim(c, dim, a->ndim, &dim)) return false;
  ts_rt_tensor *r = ts_rt_tensor_new(c, dt, a->ndim, a->sizes, false);
  if (!r) return false;
  if (ts_rt_tensor_numel(a) > 0) {
    int32_t d = a->ndim ? (int32_t)dim : -1;
    int64_t n = a->ndim ? a->sizes[d] : 1, st = a->ndim ? a->strides[d] : 0, ost = 1;
    for (int32_t k = a->ndim - 1; k > d; k--) ost *= a->sizes[k];
    sc_lanes l, lo;
    sc_lanes_init(&l, a, d);
    sc_lanes_init(&lo, r, d);
    size_t esz = ts_dtype_size(dt);
    bool half = dt == TS_DT_FLOAT16 || dt == TS_DT_BFLOAT16;
    const char *ap = a->storage->data;
    char *rp = ts_rt_tensor_data(r);
    for (int64_t j = 0; j < l.count; j++, sc_lanes_next(&l), sc_lanes_next(&lo)) {
      double acc = -INFINITY;
      float accf = -INFINITY;
      for (int64_t k = 0; k < n; k++) {
        double x = ts_rt_load_f64(ap + (size_t)(l.off + k * st) * esz, dt);
        char *o = rp + (size_t)(lo.off + k * ost) * esz;
        if (half) {
          accf = sc_log_add_expf((float)x, accf);
          ts_rt_store_f64(o, dt, accf);
        } else {
          acc = sc_log_add_exp(x, acc);
          ts_rt_store_f64(o, dt, acc);
        }
      }
    }
  }
  call->out[0] = ts_iv_tensor(r);
  return true;
}

const ts_rt_kernel_def ts_rt_kernels_scan[] = {
    {"aten::cummax", sc_k_cummax},
    {"aten::cummin", sc_k_cummin},
    {"aten::logcumsumexp", sc_k_logcumsumexp},
    {NULL, NULL},
};
