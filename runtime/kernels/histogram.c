/* runtime/kernels/histogram.c: histogram and histogramdd, and the
 * _histogramdd_bin_edges, _histogramdd_from_bin_cts and
 * _histogramdd_from_bin_tensors that histogramdd is composed of, as ATen
 * 1.13's CPU kernels compute them (Histogram.cpp, cpu/HistogramKernel.cpp).
 *
 * The input is read as M points of N coordinates (its last dim N, the rest
 * flattened; histogram's as numel points of one). Bin edges given as a
 * count are linspace's (ATen's arithmetic, creation.c) over the range, or
 * over each coordinate's min and max (0 to 1 for no points; an empty range
 * widened by 0.5 each way); a point goes to its bin by upper_bound over the
 * edges (edges given as tensors), or by linear interpolation then
 * upper_bound over the bins next to it (edges made by count), both in the
 * dtype's arithmetic; the last bin is closed on the right. A point outside
 * the outer edges is left out, but a NaN is not (1.13 tests `x < left ||
 * x > right`): it goes to the last bin of a binary search, and to bin 1 of
 * the linear search (see hg_bin). Weights add in the dtype; density divides
 * by the total, then by each bin's width along each dim. float32, float64
 * and bfloat16, as ATen 1.13's kernel (not float16); the edges are inferred
 * for float32 and float64 only, as ATen's aminmax dispatch. Checks in
 * ATen's order with its messages.
 *
 * Known differences: the points are counted in one sequential pass, where
 * ATen gives each thread a slice and adds their histograms (a weighted sum
 * of many points may round differently); a bins list shorter than the
 * input's dims is an error here, where ATen reads past its end; a range
 * that an integer dtype cannot hold is refused by the kernel's dtype check
 * here, by linspace's overflow check in ATen; _histogramdd_bin_edges of a
 * complex input with a range fails here (ATen gives complex edges). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "tensor_ops.h"

/* ---------------------------------------------------------------- helpers */

/* caffe2::TypeMeta's names, which histogramdd's dtype checks print. */
static const char *hg_meta_name(ts_dtype dt) {
  switch (dt) {
  case TS_DT_FLOAT32: return "float";
  case TS_DT_FLOAT64: return "double";
  case TS_DT_FLOAT16: return "c10::Half";
  case TS_DT_BFLOAT16: return "c10::BFloat16";
  case TS_DT_INT64: return "long int";
  case TS_DT_INT32: return "int";
  case TS_DT_INT16: return "short int";
  case TS_DT_INT8: return "signed char";
  case TS_DT_UINT8: return "unsigned char";
  case TS_DT_BOOL: return "bool";
  case TS_DT_COMPLEX64: return "c10::complex<float>";
  case TS_DT_COMPLEX128: return "c10::complex<double>";
  default: return ts_rt_dtype_name(dt);
  }
}

/* x rounded to dt's precision: one operation of dt's arithmetic when x is
 * its exact result in double (float32, and the half types whose c10
 * operators compute in float and round back). */
static double hg_round(double x, ts_dtype dt) {
  if (dt == TS_DT_FLOAT32) return (float)x;
  if (dt == TS_DT_FLOAT16 || dt == TS_DT_BFLOAT16) {
    char tmp[2];
    ts_rt_store_f64(tmp, dt, x);
    return ts_rt_load_f64(tmp, dt);
  }
  return x;
}

/* The dtypes of ATen 1.13's histogram_cpu kernel (float16 is not one). */
static bool hg_kernel_dtype(ts_rt_ctx *c, ts_dtype dt) {
  if (dt == TS_DT_FLOAT32 || dt == TS_DT_FLOAT64 || dt == TS_DT_BFLOAT16) return true;
  return ts_rt_fail(c, "\"histogram_cpu\" not implemented for '%s'", ts_rt_dtype_name(dt));
}

/* "[3, 4]" as PyTorch prints sizes */
static void hg_sizes_str(char *buf, size_t cap, int32_t nd, const int64_t *s) {
  size_t at = (size_t)snprintf(buf, cap, "[");
  for (int32_t i = 0; i < nd && at < cap; i++)
    at += (size_t)snprintf(buf + at, cap - at, "%s%lld", i ? ", " : "", (long long)s[i]);
  if (at < cap) snprintf(buf + at, cap - at, "]");
}

static void hg_release(ts_rt_tensor **t, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (t[i]) ts_rt_tensor_release(t[i]);
}

/* The input as M points of N coordinates, contiguous, and the weights. */
typedef struct hg_in {
  ts_rt_tensor *x; /* self, contiguous (own reference) */
  ts_rt_tensor *w; /* weight, contiguous (own reference), or NULL */
  ts_dtype dt;
  int64_t m, n;
} hg_in;

static void hg_in_free(hg_in *in) {
  if (in->x) ts_rt_tensor_release(in->x);
  if (in->w) ts_rt_tensor_release(in->w);
}

/* self as points of its last dim (histogramdd) or of one coordinate each
 * (histogram: by_last false); the caller has checked self's rank. */
static bool hg_in_make(ts_rt_ctx *c, ts_rt_tensor *self, ts_rt_tensor *w, bool by_last, hg_in *in) {
  memset(in, 0, sizeof *in);
  in->dt = (ts_dtype)self->dtype;
  in->n = by_last ? self->sizes[self->ndim - 1] : 1;
  in->m = by_last ? 1 : ts_rt_tensor_numel(self);
  if (by_last)
    for (int32_t i = 0; i < self->ndim - 1; i++) in->m *= self->sizes[i];
  in->x = ts_rt_tensor_contiguous(c, self);
  in->w = in->x && w ? ts_rt_tensor_contiguous(c, w) : NULL;
  if (!in->x || (w && !in->w)) {
    hg_in_free(in);
    return false;
  }
  return true;
}

/* histogramdd_check_inputs over the edges e[0..ne) and the weight; the
 * input's and weight's shapes as ATen sees them (histogram reshapes both). */
static bool hg_check_inputs(ts_rt_ctx *c, const hg_in *in, ts_rt_tensor *const *e, int64_t ne, int32_t in_nd,
                            const int64_t *in_sizes, const ts_rt_tensor *w, int32_t w_nd, const int64_t *w_sizes) {
  if (ne != in->n)
    return ts_rt_fail(c,
                      "torch.histogramdd: expected %lld sequences of bin edges for a %lld-dimensional histogram but "
                      "got %lld",
                      (long long)in->n, (long long)in->n, (long long)ne);
  for (int64_t d = 0; d < ne; d++) {
    if (e[d]->dtype != in->dt)
      return ts_rt_fail(c,
                        "torch.histogramdd: input tensor and bins tensors should have the same dtype, but got input "
                        "with dtype %s and bins for dimension %lld with dtype %s",
                        hg_meta_name(in->dt), (long long)d, hg_meta_name((ts_dtype)e[d]->dtype));
    if (e[d]->ndim != 1)
      return ts_rt_fail(c,
                        "torch.histogramdd: bins tensor should have one dimension, but got %d dimensions in the bins "
                        "tensor for dimension %lld",
                        (int)e[d]->ndim, (long long)d);
    if (ts_rt_tensor_numel(e[d]) <= 0)
      return ts_rt_fail(c,
                        "torch.histogramdd: bins tensor should have at least 1 element, but got %lld elements in the "
                        "bins tensor for dimension %lld",
                        (long long)ts_rt_tensor_numel(e[d]), (long long)d);
  }
  if (!w) return true;
  if (w->dtype != in->dt)
    return ts_rt_fail(c,
                      "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should have "
                      "the same dtype, but got input(%s), and weight(%s)",
                      hg_meta_name(in->dt), hg_meta_name((ts_dtype)w->dtype));
  /* a 0-d weight compares as [1] */
  int64_t one = 1;
  const int64_t *ws = w_nd ? w_sizes : &one;
  int32_t wn = w_nd ? w_nd : 1;
  bool same = wn == in_nd - 1;
  for (int32_t i = 0; same && i < wn; i++) same = ws[i] == in_sizes[i];
  if (!same) {
    char a[256], b[256];
    hg_sizes_str(a, sizeof a, in_nd, in_sizes);
    hg_sizes_str(b, sizeof b, w_nd, w_sizes);
    return ts_rt_fail(c,
                      "torch.histogramdd: if weight tensor is provided it should have the same shape as the input "
                      "tensor excluding its innermost dimension, but got input with shape %s and weight with shape %s",
                      a, b);
  }
  return true;
}

/* histogramdd_prepare_out's check of each dim's bin count. */
static bool hg_check_counts(ts_rt_ctx *c, const int64_t *ct, int64_t n) {
  for (int64_t d = 0; d < n; d++)
    if (ct[d] <= 0)
      return ts_rt_fail(c, "torch.histogram(): bins must be > 0, but got %lld for dimension %lld", (long long)ct[d],
                        (long long)d);
  return true;
}

/* select_outer_bin_edges: each dim's leftmost and rightmost edge, from
 * range (None or a float list of 2N) or the points' min and max. */
static bool hg_outer(ts_rt_ctx *c, const hg_in *in, ts_iv range, double *lo, double *hi) {
  for (int64_t d = 0; d < in->n; d++) lo[d] = 0, hi[d] = 1;
  if (range.tag == TS_IV_LIST) {
    const ts_rt_list *l = range.u.l;
    if ((int64_t)l->n != 2 * in->n)
      return ts_rt_fail(c,
                        "torch.histogramdd: for a %lld-dimensional histogram range should have %lld elements, but "
                        "got %u",
                        (long long)in->n, (long long)(2 * in->n), (unsigned)l->n);
    for (uint32_t k = 0; k < l->n; k++) {
      ts_iv v = l->items[k];
      if (v.tag != TS_IV_DOUBLE && v.tag != TS_IV_INT) return ts_rt_fail(c, "histogram: range: expected List[float]");
      double x = v.tag == TS_IV_DOUBLE ? v.u.d : (double)v.u.i;
      if (k % 2) hi[k / 2] = x;
      else lo[k / 2] = x;
    }
  } else if (range.tag != TS_IV_NONE) {
    return ts_rt_fail(c, "histogram: range: expected List[float] or None");
  } else if (in->m * in->n > 0) {
    if (in->dt != TS_DT_FLOAT32 && in->dt != TS_DT_FLOAT64)
      return ts_rt_fail(c, "\"histogramdd\" not implemented for '%s'", ts_rt_dtype_name(in->dt));
    /* aminmax over the points: a NaN makes both NaN */
    const char *p = ts_rt_tensor_data(in->x);
    size_t es = ts_dtype_size(in->dt);
    for (int64_t d = 0; d < in->n; d++) {
      double mn = INFINITY, mx = -INFINITY;
      bool nan = false;
      for (int64_t i = 0; i < in->m; i++) {
        double v = ts_rt_load_f64(p + (size_t)(i * in->n + d) * es, in->dt);
        if (isnan(v)) nan = true;
        if (v < mn) mn = v;
        if (v > mx) mx = v;
      }
      lo[d] = nan ? NAN : mn, hi[d] = nan ? NAN : mx;
    }
  }
  for (int64_t d = 0; d < in->n; d++) {
    if (!isfinite(lo[d]) || !isfinite(hi[d]))
      return ts_rt_fail(c, "torch.histogramdd: dimension %lld's range [%g, %g] is not finite", (long long)d, lo[d],
                        hi[d]);
    if (!(lo[d] <= hi[d]))
      return ts_rt_fail(c, "torch.histogramdd: min should not exceed max, but got min %g max %g for dimension %lld",
                        lo[d], hi[d], (long long)d);
    if (lo[d] == hi[d]) lo[d] -= 0.5, hi[d] += 0.5;
  }
  return true;
}

/* linspace(lo, hi, ct + 1) in dt: new, NULL with linspace's errors. */
static ts_rt_tensor *hg_linspace(ts_rt_ctx *c, ts_dtype dt, double lo, double hi, int64_t ct) {
  int64_t steps = ct + 1;
  if (steps < 0) {
    ts_rt_fail(c, "number of steps must be non-negative");
    return NULL;
  }
  if (dt == TS_DT_BOOL) {
    ts_rt_fail(c, "\"linspace_cpu\" not implemented for 'Bool'");
    return NULL;
  }
  if (ts_dtype_is_complex(dt)) { /* ATen's linspace takes it; its histogram kernel does not */
    hg_kernel_dtype(c, dt);
    return NULL;
  }
  ts_rt_tensor *t = ts_rt_tensor_new(c, dt, 1, &steps, false);
  if (t) ts_rt_linspace_fill(t, lo, hi, steps);
  return t;
}

/* The bin edges of counts ct (one per dim; ct has at least N): new tensors
 * into e[0..N). */
static bool hg_edges_of_counts(ts_rt_ctx *c, const hg_in *in, const int64_t *ct, ts_iv range, ts_rt_tensor **e) {
  double lo[TS_RT_MAX_DIMS], hi[TS_RT_MAX_DIMS];
  for (int64_t d = 0; d < in->n; d++) e[d] = NULL;
  if (!hg_outer(c, in, range, lo, hi)) return false;
  for (int64_t d = 0; d < in->n; d++) {
    e[d] = hg_linspace(c, in->dt, lo[d], hi[d], ct[d]);
    if (!e[d]) {
      hg_release(e, d);
      return false;
    }
  }
  return true;
}

/* std::upper_bound over v[first, last) (libstdc++'s halving, so that
 * edges out of order give ATen's bins): the first index whose edge
 * exceeds x. */
static int64_t hg_upper_bound(const char *v, ts_dtype dt, int64_t first, int64_t last, double x) {
  size_t es = ts_dtype_size(dt);
  int64_t len = last - first;
  while (len > 0) {
    int64_t half = len >> 1, mid = first + half;
    if (x < ts_rt_load_f64(v + (size_t)mid * es, dt)) {
      len = half;
    } else {
      first = mid + 1;
      len = len - half - 1;
    }
  }
  return first;
}

/* The bin of x (within [left, right] or NaN) along edges v (ne of them):
 * by binary search, or (linear) by (x - left) * (ne - 1) / (right - left)
 * in the dtype, then upper_bound over the bins beside it. ATen's cast of a
 * NaN there is INT64_MIN, whose neighbours wrap round to edges [-1, 2):
 * its search ends at 2, bin 1. */
static int64_t hg_bin(const char *v, ts_dtype dt, int64_t ne, double left, double right, double x, bool linear) {
  int64_t pos;
  if (!linear) {
    pos = hg_upper_bound(v, dt, 0, ne, x) - 1;
  } else if (isnan(x)) {
    pos = 1;
  } else {
    double t = hg_round(x - left, dt);
    t = hg_round(t * hg_round((double)(ne - 1), dt), dt);
    t = hg_round(t / hg_round(right - left, dt), dt);
    pos = (int64_t)t;
    int64_t lo = pos - 1 > 0 ? pos - 1 : 0, hi = pos + 2 < ne ? pos + 2 : ne;
    pos = hg_upper_bound(v, dt, lo, hi, x) - 1;
  }
  if (pos == ne - 1) pos--; /* the last bin holds its right edge */
  return pos;
}

/* The histogram of in's points over edges e[0..N) (checked: 1-d, in's
 * dtype, at least two each): new, sizes numel(e[d]) - 1. */
static ts_rt_tensor *hg_count(ts_rt_ctx *c, const hg_in *in, ts_rt_tensor *const *e, bool density, bool linear) {
  int64_t n = in->n, sizes[TS_RT_MAX_DIMS] = {0}, strides[TS_RT_MAX_DIMS] = {0};
  ts_rt_tensor *ec[TS_RT_MAX_DIMS];
  ts_dtype dt = in->dt;
  if (n > TS_RT_MAX_DIMS) {
    ts_rt_fail(c, "histogramdd: a %lld-dimensional histogram has more dims than tsaot's tensors", (long long)n);
    return NULL;
  }
  for (int64_t d = 0; d < n; d++) sizes[d] = ts_rt_tensor_numel(e[d]) - 1;
  ts_rt_tensor *h = ts_rt_tensor_new(c, dt, (int32_t)n, sizes, true);
  if (!h) return NULL;
  int64_t d = 0;
  for (; d < n; d++)
    if (!(ec[d] = ts_rt_tensor_contiguous(c, e[d]))) break;
  if (d < n) {
    hg_release(ec, d);
    ts_rt_tensor_release(h);
    return NULL;
  }
  ts_rt_strides_contiguous((int32_t)n, sizes, strides);
  size_t es = ts_dtype_size(dt);
  char *hp = ts_rt_tensor_data(h);
  const char *xp = ts_rt_tensor_data(in->x), *wp = in->w ? ts_rt_tensor_data(in->w) : NULL;
  double left[TS_RT_MAX_DIMS], right[TS_RT_MAX_DIMS];
  for (d = 0; d < n; d++) {
    const char *v = ts_rt_tensor_data(ec[d]);
    left[d] = ts_rt_load_f64(v, dt);
    right[d] = ts_rt_load_f64(v + (size_t)sizes[d] * es, dt);
  }
  for (int64_t i = 0; n > 0 && i < in->m; i++) {
    int64_t at = 0;
    for (d = 0; d < n; d++) {
      double x = ts_rt_load_f64(xp + (size_t)(i * n + d) * es, dt);
      if (x < left[d] || x > right[d]) break;
      at += strides[d] * hg_bin(ts_rt_tensor_data(ec[d]), dt, sizes[d] + 1, left[d], right[d], x, linear);
    }
    if (d < n) continue;
    double w = wp ? ts_rt_load_f64(wp + (size_t)i * es, dt) : 1.0;
    char *cell = hp + (size_t)at * es;
    ts_rt_store_f64(cell, dt, ts_rt_load_f64(cell, dt) + w);
  }
  if (density) {
    int64_t total = ts_rt_tensor_numel(h);
    double sum = 0;
    for (int64_t k = 0; k < total; k++) sum += ts_rt_load_f64(hp + (size_t)k * es, dt);
    sum = hg_round(sum, dt);
    for (int64_t k = 0; k < total; k++) {
      char *cell = hp + (size_t)k * es;
      ts_rt_store_f64(cell, dt, ts_rt_load_f64(cell, dt) / sum);
    }
    /* then by each dim's bin widths (diff of the edges, in the dtype) */
    for (d = 0; d < n; d++) {
      const char *v = ts_rt_tensor_data(ec[d]);
      for (int64_t k = 0; k < total; k++) {
        int64_t j = k / strides[d] % sizes[d];
        double wd = hg_round(ts_rt_load_f64(v + (size_t)(j + 1) * es, dt) - ts_rt_load_f64(v + (size_t)j * es, dt), dt);
        char *cell = hp + (size_t)k * es;
        ts_rt_store_f64(cell, dt, ts_rt_load_f64(cell, dt) / wd);
      }
    }
  }
  hg_release(ec, n);
  return h;
}

/* A new Tensor[] of t[0..n), taking them over (released on failure). */
static bool hg_list(ts_rt_ctx *c, ts_rt_tensor **t, int64_t n, ts_iv *out) {
  ts_rt_list *l = ts_rt_list_new(c, ts_type_leaf(TS_TY_TENSOR), (uint32_t)n);
  int64_t i = 0;
  if (l)
    for (; i < n; i++)
      if (!ts_rt_list_append(c, l, ts_iv_tensor(t[i]))) {
        i++;
        break;
      }
  bool ok = l && i == n && !c->failed;
  hg_release(t + i, n - i);
  if (!ok) {
    if (l) ts_iv_release((ts_iv){.u.l = l, .tag = TS_IV_LIST});
    return false;
  }
  *out = (ts_iv){.u.l = l, .tag = TS_IV_LIST};
  return true;
}

/* The tensors of a Tensor[] argument into t[0..*n), borrowed. */
static bool hg_arg_tensors(ts_rt_ctx *c, ts_rt_call *call, uint32_t i, ts_rt_tensor **t, int64_t *n) {
  ts_rt_list *l;
  if (!ts_rt_arg_list(c, call, i, &l)) return false;
  if (l->n > TS_RT_MAX_DIMS)
    return ts_rt_fail(c, "histogramdd: %u bins tensors, at most %d allowed", (unsigned)l->n, TS_RT_MAX_DIMS);
  for (uint32_t k = 0; k < l->n; k++) {
    if (l->items[k].tag != TS_IV_TENSOR) return ts_rt_arg_bad(c, call, i, "List[Tensor]");
    t[k] = l->items[k].u.t;
  }
  *n = l->n;
  return true;
}

/* ---------------------------------------------------------- histogram */

/* histogram.bins_tensor(self, bins, *, weight, density) -> (hist, bin_edges) */
static bool hg_k_histogram_bins(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *self, *bins, *w;
  bool density;
  if (!ts_rt_arg_tensor(c, call, 0, &self) || !ts_rt_arg_tensor(c, call, 1, &bins) ||
      !ts_rt_arg_opt_tensor(c, call, 2, &w) || !ts_rt_arg_bool(c, call, 3, &density))
    return false;
  hg_in in;
  if (!hg_in_make(c, self, w, false, &in)) return false;
  /* ATen reshapes self to (numel, 1) and the weight to (numel) */
  int64_t in_sizes[2] = {in.m, 1}, w_sizes[1] = {w ? ts_rt_tensor_numel(w) : 0};
  int64_t ct = ts_rt_tensor_numel(bins) - 1;
  ts_rt_tensor *h = NULL, *edges = NULL;
  bool ok = hg_check_inputs(c, &in, &bins, 1, 2, in_sizes, w, 1, w_sizes) && hg_check_counts(c, &ct, 1) &&
            (edges = ts_rt_clone(c, bins)) != NULL && hg_kernel_dtype(c, in.dt) &&
            (h = hg_count(c, &in, &edges, density, false)) != NULL;
  hg_in_free(&in);
  if (!ok) {
    if (edges) ts_rt_tensor_release(edges);
    return false;
  }
  call->out[0] = ts_iv_tensor(h);
  call->out[1] = ts_iv_tensor(edges);
  return true;
}

/* histogram.bin_ct(self, bins=100, *, range, weight, density) */
static bool hg_k_histogram_ct(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *self, *w;
  int64_t ct;
  bool density;
  if (!ts_rt_arg_tensor(c, call, 0, &self) || !ts_rt_arg_int(c, call, 1, &ct) || !ts_rt_arg_check(c, call, 2) ||
      !ts_rt_arg_opt_tensor(c, call, 3, &w) || !ts_rt_arg_bool(c, call, 4, &density))
    return false;
  if (!hg_check_counts(c, &ct, 1)) return false;
  hg_in in;
  if (!hg_in_make(c, self, w, false, &in)) return false;
  int64_t in_sizes[2] = {in.m, 1}, w_sizes[1] = {w ? ts_rt_tensor_numel(w) : 0};
  ts_rt_tensor *h = NULL, *edges = NULL;
  bool ok = hg_edges_of_counts(c, &in, &ct, call->in[2], &edges) &&
            hg_check_inputs(c, &in, &edges, 1, 2, in_sizes, w, 1, w_sizes) && hg_kernel_dtype(c, in.dt) &&
            (h = hg_count(c, &in, &edges, density, true)) != NULL;
  hg_in_free(&in);
  if (!ok) {
    if (edges) ts_rt_tensor_release(edges);
    return false;
  }
  call->out[0] = ts_iv_tensor(h);
  call->out[1] = ts_iv_tensor(edges);
  return true;
}

/* -------------------------------------------------------- histogramdd */

/* allocate_bin_edges_tensors' check, the first of histogramdd's */
static bool hg_check_rank(ts_rt_ctx *c, const ts_rt_tensor *self) {
  if (self->ndim < 2) return ts_rt_fail(c, "torch.histogramdd: input tensor should have at least 2 dimensions");
  return true;
}

/* Bin counts ct[0..N) of self's points: an int list of at least N (its
 * extra entries unread, as ATen's), or one int for every dim. */
static bool hg_arg_counts(ts_rt_ctx *c, ts_rt_call *call, uint32_t i, const ts_rt_tensor *self, int64_t *ct) {
  int64_t n = self->sizes[self->ndim - 1];
  if (n > TS_RT_MAX_DIMS)
    return ts_rt_fail(c, "histogramdd: a %lld-dimensional histogram has more dims than tsaot's tensors", (long long)n);
  if (call->in[i].tag == TS_IV_INT) {
    for (int64_t d = 0; d < n; d++) ct[d] = call->in[i].u.i;
    return true;
  }
  int64_t buf[256];
  uint32_t got = 0;
  if (!ts_rt_arg_ints(c, call, i, buf, 256, &got, 0)) return false;
  if ((int64_t)got < n)
    return ts_rt_fail(c,
                      "torch.histogramdd: expected %lld sequences of bin edges for a %lld-dimensional histogram but "
                      "got %u",
                      (long long)n, (long long)n, (unsigned)got);
  memcpy(ct, buf, (size_t)n * sizeof *ct);
  return true;
}

/* The weight's and input's shapes as histogramdd checks them. */
#define HG_SHAPES(self, w) (self)->ndim, (self)->sizes, (w), (w) ? (w)->ndim : 0, (w) ? (w)->sizes : NULL

/* histogramdd by counts: bin edges into e[0..N) (new), hist into *h (new;
 * not made when h is NULL), with range the IValue of argument irange. */
static bool hg_dd_counts(ts_rt_ctx *c, ts_rt_call *call, ts_rt_tensor *self, uint32_t ibins, ts_iv range,
                         ts_rt_tensor *w, bool density, ts_rt_tensor **e, ts_rt_tensor **h) {
  int64_t ct[TS_RT_MAX_DIMS];
  hg_in in;
  if (!hg_check_rank(c, self) || !hg_arg_counts(c, call, ibins, self, ct) || !hg_in_make(c, self, w, true, &in))
    return false;
  bool ok = hg_edges_of_counts(c, &in, ct, range, e);
  if (ok && h) {
    *h = NULL;
    ok = hg_check_inputs(c, &in, e, in.n, HG_SHAPES(self, w)) && hg_check_counts(c, ct, in.n) &&
         hg_kernel_dtype(c, in.dt) && (*h = hg_count(c, &in, e, density, true)) != NULL;
    if (!ok) hg_release(e, in.n);
  }
  hg_in_free(&in);
  return ok;
}

/* histogramdd by edge tensors bins[0..nb) (borrowed): hist into *h (new). */
static bool hg_dd_tensors(ts_rt_ctx *c, ts_rt_tensor *self, ts_rt_tensor *const *bins, int64_t nb, ts_rt_tensor *w,
                          bool density, ts_rt_tensor **h) {
  int64_t ct[TS_RT_MAX_DIMS];
  hg_in in;
  if (!hg_check_rank(c, self) || !hg_in_make(c, self, w, true, &in)) return false;
  bool ok = hg_check_inputs(c, &in, bins, nb, HG_SHAPES(self, w));
  for (int64_t d = 0; ok && d < nb; d++) ct[d] = ts_rt_tensor_numel(bins[d]) - 1;
  ok = ok && hg_check_counts(c, ct, nb) && hg_kernel_dtype(c, in.dt) &&
       (*h = hg_count(c, &in, bins, density, false)) != NULL;
  hg_in_free(&in);
  return ok;
}

/* _histogramdd_bin_edges(self, bins, *, range, weight, density) -> Tensor[] */
static bool hg_k_dd_bin_edges(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *self, *w, *e[TS_RT_MAX_DIMS];
  if (!ts_rt_arg_tensor(c, call, 0, &self) || !ts_rt_arg_check(c, call, 2) || !ts_rt_arg_opt_tensor(c, call, 3, &w) ||
      !hg_dd_counts(c, call, self, 1, call->in[2], w, false, e, NULL))
    return false;
  return hg_list(c, e, self->sizes[self->ndim - 1], &call->out[0]);
}

/* _histogramdd_from_bin_cts(self, bins, *, range, weight, density) -> Tensor */
static bool hg_k_dd_from_cts(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *self, *w, *e[TS_RT_MAX_DIMS], *h;
  bool density;
  if (!ts_rt_arg_tensor(c, call, 0, &self) || !ts_rt_arg_check(c, call, 2) || !ts_rt_arg_opt_tensor(c, call, 3, &w) ||
      !ts_rt_arg_bool(c, call, 4, &density) || !hg_dd_counts(c, call, self, 1, call->in[2], w, density, e, &h))
    return false;
  hg_release(e, self->sizes[self->ndim - 1]);
  call->out[0] = ts_iv_tensor(h);
  return true;
}

/* _histogramdd_from_bin_tensors(self, bins, *, weight, density) -> Tensor */
static bool hg_k_dd_from_tensors(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *self, *w, *bins[TS_RT_MAX_DIMS], *h;
  int64_t nb;
  bool density;
  if (!ts_rt_arg_tensor(c, call, 0, &self) || !hg_arg_tensors(c, call, 1, bins, &nb) ||
      !ts_rt_arg_opt_tensor(c, call, 2, &w) || !ts_rt_arg_bool(c, call, 3, &density) ||
      !hg_dd_tensors(c, self, bins, nb, w, density, &h))
    return false;
  call->out[0] = ts_iv_tensor(h);
  return true;
}

/* histogramdd(self, int[] bins | int bins, range, weight, density) ->
 * (hist, bin_edges): the edges, then the hist (ATen makes them apart, by
 * the same arithmetic) */
static bool hg_k_histogramdd_ct(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *self, *w, *e[TS_RT_MAX_DIMS], *h;
  bool density;
  if (!ts_rt_arg_tensor(c, call, 0, &self) || !ts_rt_arg_check(c, call, 1) || !ts_rt_arg_check(c, call, 2) ||
      !ts_rt_arg_opt_tensor(c, call, 3, &w) || !ts_rt_arg_bool(c, call, 4, &density))
    return false;
  /* the int form takes self.size(-1) first */
  if (call->in[1].tag == TS_IV_INT && self->ndim == 0)
    return ts_rt_fail(c, "Dimension specified as -1 but tensor has no dimensions");
  if (!hg_dd_counts(c, call, self, 1, call->in[2], w, density, e, &h)) return false;
  call->out[0] = ts_iv_tensor(h);
  if (!hg_list(c, e, self->sizes[self->ndim - 1], &call->out[1])) {
    ts_rt_tensor_release(h);
    call->out[0] = ts_iv_none();
    return false;
  }
  return true;
}

/* histogramdd.TensorList_bins(self, bins, range, weight, density): range
 * unread; bin_edges are the bins tensors themselves */
static bool hg_k_histogramdd_tensors(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *self, *w, *bins[TS_RT_MAX_DIMS], *h;
  int64_t nb;
  bool density;
  if (!ts_rt_arg_tensor(c, call, 0, &self) || !hg_arg_tensors(c, call, 1, bins, &nb) ||
      !ts_rt_arg_opt_tensor(c, call, 3, &w) || !ts_rt_arg_bool(c, call, 4, &density) ||
      !hg_dd_tensors(c, self, bins, nb, w, density, &h))
    return false;
  for (int64_t d = 0; d < nb; d++) ts_rt_tensor_retain(bins[d]);
  call->out[0] = ts_iv_tensor(h);
  if (!hg_list(c, bins, nb, &call->out[1])) {
    ts_rt_tensor_release(h);
    call->out[0] = ts_iv_none();
    return false;
  }
  return true;
}

/* ---------------------------------------------------------- table */

const ts_rt_kernel_def ts_rt_kernels_histogram[] = {
    {"aten::_histogramdd_bin_edges", hg_k_dd_bin_edges},
    {"aten::_histogramdd_from_bin_cts", hg_k_dd_from_cts},
    {"aten::_histogramdd_from_bin_tensors", hg_k_dd_from_tensors},
    {"aten::histogram.bin_ct", hg_k_histogram_ct},
    {"aten::histogram.bins_tensor", hg_k_histogram_bins},
    {"aten::histogramdd", hg_k_histogramdd_ct},
    {"aten::histogramdd.TensorList_bins", hg_k_histogramdd_tensors},
    {"aten::histogramdd.int_bins", hg_k_histogramdd_ct},
    {NULL, NULL},
};
