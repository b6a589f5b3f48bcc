/* runtime/kernels/unpool.c: the nn ops that write by index into a weight
 * or an output: aten::max_unpool2d and max_unpool3d (F.max_unpool1d is
 * max_unpool2d on an unsqueezed input) and aten::embedding_renorm_ (and its
 * functional form), as PyTorch 1.13's CPU kernels compute them
 * (MaxUnpooling.cpp, Embedding.cpp; checks in ATen's order and words).
 *
 * max_unpool moves elements by their size: each plane of the output is
 * zeroed, then every input element is stored at its index, in order (a
 * repeated index keeps the last). embedding_renorm_ scales each distinct
 * indexed row whose p-norm exceeds max_norm by max_norm / (norm + 1e-7),
 * the norm taken in float64 (ATen takes it in the dtype: last-bit
 * differences). */
#include <math.h>

#include "nn_util.h"

/* "[2, 3]" of a tensor's sizes */
static const char *up_shape(const ts_rt_tensor *t, char *buf, size_t cap) {
  nnu_shape_str(buf, cap, t->ndim, t->sizes);
  return buf;
}

/* max_unpool over the last k (2 or 3) dimensions: out (osz) zeroed, then
 * in[i] stored at plane offset idx[i] for each plane. */
static bool up_unpool(ts_rt_ctx *c, ts_rt_call *call, int k, const int64_t *osz) {
  ts_rt_tensor *x, *ind;
  char b1[128], b2[128];
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_tensor(c, call, 1, &ind)) return false;
  const char *fn = k == 2 ? "max_unpooling2d_forward_out_cpu()" : "max_unpooling3d_forward_out_cpu()";
  if (k == 2) {
    if (ind->dtype != TS_DT_INT64)
      return ts_rt_fail(c, "elements in indices should be type int64 but got: %s", ts_rt_dtype_name(ind->dtype));
    if (x->ndim != 3 && x->ndim != 4)
      return ts_rt_fail(c,
                        "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with %d dimensions.",
                        (int)x->ndim);
  } else {
    if (ind->dtype != TS_DT_INT64) return ts_rt_fail(c, "elements in indices should be type int64");
    if (x->ndim != 4 && x->ndim != 5)
      return ts_rt_fail(c,
                        "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with %d dimensions.",
                        (int)x->ndim);
  }
  bool same = x->ndim == ind->ndim && !memcmp(x->sizes, ind->sizes, (size_t)x->ndim * sizeof *x->sizes);
  if (!same)
    return ts_rt_fail(c,
                      "Expected shape of indices to be same as that of the input tensor (%s) but got indices tensor "
                      "with shape: %s",
                      up_shape(x, b1, sizeof b1), up_shape(ind, b2, sizeof b2));
  for (int32_t i = 1; i < x->ndim; i++)
    if (x->sizes[i] <= 0)
      return ts_rt_fail(c,
                        "%s: Expected input to have non-zero size for non-batch dimensions, but got %s with dimension "
                        "%d being empty.",
                        fn, up_shape(x, b1, sizeof b1), (int)i);
  int64_t plane_out = 1;
  for (int i = 0; i < k; i++) {
    if (osz[i] < 0) return ts_rt_fail(c, "max_unpool: output_size must be non-negative");
    if (!nnu_mul(plane_out, osz[i], &plane_out)) return ts_rt_oom(c);
  }
  int32_t nd = x->ndim;
  int64_t sz[5];
  memcpy(sz, x->sizes, (size_t)nd * sizeof *sz);
  int64_t planes = 1, plane_in = 1;
  for (int32_t i = 0; i < nd - k; i++) planes *= x->sizes[i];
  for (int32_t i = nd - k; i < nd; i++) plane_in *= x->sizes[i];
  for (int i = 0; i < k; i++) sz[nd - k + i] = osz[i];
  ts_rt_tensor *y = ts_rt_tensor_new(c, (ts_dtype)x->dtype, nd, sz, true);
  ts_rt_tensor *xc = y ? ts_rt_tensor_contiguous(c, x) : NULL, *ic = xc ? ts_rt_tensor_contiguous(c, ind) : NULL;
  bool ok = false;
  if (!ic) goto done;
  size_t es = ts_dtype_size((ts_dtype)x->dtype);
  const char *xs = ts_rt_tensor_numel(xc) ? ts_rt_tensor_data(xc) : NULL;
  const int64_t *is = ts_rt_tensor_numel(ic) ? ts_rt_tensor_data(ic) : NULL;
  char *ys = ts_rt_tensor_numel(y) ? ts_rt_tensor_data(y) : NULL;
  for (int64_t p = 0; p < planes; p++)
    for (int64_t i = 0; i < plane_in; i++) {
      int64_t m = is[p * plane_in + i];
      if (m < 0 || m >= plane_out) {
        if (k == 2)
          ts_rt_fail(c, "Found an invalid max index: %lld (output volumes are of size %lldx%lld)", (long long)m,
                     (long long)osz[0], (long long)osz[1]);
        else
          ts_rt_fail(c, "Found an invalid max index: %lld (output volumes are of size %lldx%lldx%lld)", (long long)m,
                     (long long)osz[0], (long long)osz[1], (long long)osz[2]);
        goto done;
      }
      memcpy(ys + (size_t)(p * plane_out + m) * es, xs + (size_t)(p * plane_in + i) * es, es);
    }
  ok = true;
done:
  if (xc) ts_rt_tensor_release(xc);
  if (ic) ts_rt_tensor_release(ic);
  if (!ok) {
    if (y) ts_rt_tensor_release(y);
    return false;
  }
  return nnu_ret(call, y);
}

/* max_unpool2d(self, indices, int[2] output_size) */
static bool up_k_max_unpool2d(ts_rt_ctx *c, ts_rt_call *call) {
  int64_t osz[2];
  uint32_t n = 0;
  if (ts_rt_arg_check(c, call, 2) && call->in[2].tag == TS_IV_LIST && call->in[2].u.l->n != 2)
    return ts_rt_fail(c, "There should be exactly two elements (height, width) in output_size, but got %u elements.",
                      (unsigned)call->in[2].u.l->n);
  if (!ts_rt_arg_ints(c, call, 2, osz, 2, &n, 2)) return false;
  return up_unpool(c, call, 2, osz);
}

/* max_unpool3d(self, indices, int[3] output_size, int[3] stride, int[3]
 * padding) */
static bool up_k_max_unpool3d(ts_rt_ctx *c, ts_rt_call *call) {
  int64_t v[3][3];
  uint32_t n[3] = {0, 0, 0};
  static const char *const names[3] = {"output_size", "stride", "padding"};
  for (int a = 0; a < 3; a++) {
    if (ts_rt_arg_check(c, call, 2 + (uint32_t)a) && call->in[2 + a].tag == TS_IV_LIST &&
        call->in[2 + a].u.l->n != 3)
      return ts_rt_fail(c, "There should be exactly three elements (depth, height, width) in %s, but got: %u elements.",
                        names[a], (unsigned)call->in[2 + a].u.l->n);
    if (!ts_rt_arg_ints(c, call, 2 + (uint32_t)a, v[a], 3, &n[a], 3)) return false;
  }
  if (v[1][0] <= 0 || v[1][1] <= 0 || v[1][2] <= 0)
    return ts_rt_fail(c, "strides should be greater than zero, but got stride: [%lld, %lld, %lld]", (long long)v[1][0],
                      (long long)v[1][1], (long long)v[1][2]);
  return up_unpool(c, call, 3, v[0]);
}

/* ---------------------------------------------------- embedding_renorm_ */

/* Scales the rows of w (a 2-d tensor, any view) that `indices` name. */
static bool up_renorm(ts_rt_ctx *c, ts_rt_tensor *w, ts_rt_tensor *ind, double max_norm, double p) {
  if (w->ndim != 2)
    return ts_rt_fail(c, "Expected 2-dimensional tensor, but got %d-dimensional tensor for argument #1 'self' (while "
                         "checking arguments for embedding_renorm_)",
                      (int)w->ndim);
  if (ind->dtype != TS_DT_INT64 && ind->dtype != TS_DT_INT32)
    return ts_rt_fail(c,
                      "Expected tensor for argument #2 'indices' to have one of the following scalar types: Long, Int; "
                      "but got %s instead (while checking arguments for embedding_renorm_)",
                      ts_rt_dtype_name(ind->dtype));
  if (!ts_dtype_is_float((ts_dtype)w->dtype)) return nnu_not_impl(c, "embedding_renorm_cpu_", w->dtype);
  ts_rt_tensor *ic = ts_rt_tensor_to_dtype(c, ind, TS_DT_INT64);
  if (!ic) return false;
  int64_t n = ts_rt_tensor_numel(ic), R = w->sizes[0], D = w->sizes[1];
  int64_t *idx = n ? ts_rt_malloc((size_t)n * sizeof *idx) : NULL;
  if (n && !idx) {
    ts_rt_tensor_release(ic);
    return ts_rt_oom(c);
  }
  if (n) memcpy(idx, ts_rt_tensor_data(ic), (size_t)n * sizeof *idx);
  ts_rt_tensor_release(ic);
  /* insertion order does not matter: each distinct row once */
  for (int64_t i = 1; i < n; i++)
    for (int64_t j = i; j > 0 && idx[j - 1] > idx[j]; j--) {
      int64_t t = idx[j];
      idx[j] = idx[j - 1], idx[j - 1] = t;
    }
  bool ok = true;
  char *base = ts_rt_tensor_data(w);
  size_t es = ts_dtype_size((ts_dtype)w->dtype);
  for (int64_t i = 0; i < n && ok; i++) {
    if (i > 0 && idx[i] == idx[i - 1]) continue;
    int64_t r = idx[i];
    if (r < -R || r >= R) {
      ok = ts_rt_fail(c, "index %lld is out of bounds for dimension 0 with size %lld", (long long)r, (long long)R);
      break;
    }
    if (r < 0) r += R;
    char *row = base + (size_t)(r * w->strides[0]) * es;
    double acc = p == -INFINITY ? INFINITY : 0;
    for (int64_t k = 0; k < D; k++) {
      double a = fabs(ts_rt_load_f64(row + (size_t)(k * w->strides[1]) * es, (ts_dtype)w->dtype));
      if (p == 0) acc += a != 0;
      else if (p == 1) acc += a;
      else if (p == 2) acc += a * a;
      else if (p == INFINITY) acc = a > acc || isnan(a) ? a : acc;
      else if (p == -INFINITY) acc = a < acc || isnan(a) ? a : acc;
      else acc += pow(a, p);
    }
    double norm = p == 2 ? sqrt(acc) : (p == 0 || p == 1 || isinf(p)) ? acc : pow(acc, 1 / p);
    if (norm > max_norm) {
      double scale = max_norm / (norm + 1e-7);
      for (int64_t k = 0; k < D; k++) {
        char *e = row + (size_t)(k * w->strides[1]) * es;
        double v = ts_rt_load_f64(e, (ts_dtype)w->dtype);
        /* a float32 row times a wrapped double scalar computes in float32 */
        if (w->dtype == TS_DT_FLOAT32) v = (double)((float)v * (float)scale);
        else v *= scale;
        ts_rt_store_f64(e, (ts_dtype)w->dtype, v);
      }
    }
  }
  ts_rt_free(idx);
  return ok;
}

static bool up_renorm_args(ts_rt_ctx *c, ts_rt_call *call, ts_rt_tensor **w, ts_rt_tensor **ind, double *mx,
                           double *p) {
  return ts_rt_arg_tensor(c, call, 0, w) && ts_rt_arg_tensor(c, call, 1, ind) && ts_rt_arg_double(c, call, 2, mx) &&
         ts_rt_arg_double(c, call, 3, p);
}

/* embedding_renorm_(self, indices, max_norm, norm_type): in place */
static bool up_k_embedding_renorm_(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *w, *ind;
  double mx, p;
  if (!up_renorm_args(c, call, &w, &ind, &mx, &p) || !up_renorm(c, w, ind, mx, p)) return false;
  ts_rt_tensor_retain(w);
  call->out[0] = ts_iv_tensor(w);
  return true;
}

/* embedding_renorm: the same on a copy */
static bool up_k_embedding_renorm(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *w, *ind;
  double mx, p;
  if (!up_renorm_args(c, call, &w, &ind, &mx, &p)) return false;
  ts_rt_tensor *r = ts_rt_clone(c, w);
  if (!r) return false;
  if (!up_renorm(c, r, ind, mx, p)) {
    ts_rt_tensor_release(r);
    return false;
  }
  return nnu_ret(call, r);
}

const ts_rt_kernel_def ts_rt_kernels_unpool[] = {
    {"aten::max_unpool2d", up_k_max_unpool2d},
    {"aten::max_unpool3d", up_k_max_unpool3d},
    {"aten::embedding_renorm_", up_k_embedding_renorm_},
    {"aten::embedding_renorm", up_k_embedding_renorm},
    {NULL, NULL},
};
