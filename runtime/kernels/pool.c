/* runtime/kernels/pool.c: max, average and adaptive pooling over (N, C,
 * H, W) or unbatched (C, H, W) inputs; the 1-d forms run as 2-d with
 * height 1. Computed in float (double for float64 and int64). */
#include <math.h>

#include "nn_util.h"

typedef struct pl_job {
  const void *x;
  void *y;
  int64_t *idx; /* adaptive max: flat index of the maximum within its plane */
  int64_t H, W, OH, OW;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  bool count_include_pad;
  int64_t divisor; /* 0: none */
} pl_job;

/* The input window [start, end) of adaptive output index o, as ATen. */
static int64_t pl_start(int64_t o, int64_t out, int64_t in) { return o * in / out; }
static int64_t pl_end(int64_t o, int64_t out, int64_t in) { return ((o + 1) * in + out - 1) / out; }

/* Plane loops for float and double: max, average, adaptive average and
 * adaptive max over planes [b, e). NaN wins a max, as in ATen. */
#define PL_DEFINE(T, S)                                                                                                \
  static void pl_max_##S(void *arg, int64_t b, int64_t e) {                                                           \
    const pl_job *j = arg;                                                                                            \
    for (int64_t p = b; p < e; p++) {                                                                                 \
      const T *x = (const T *)j->x + p * j->H * j->W;                                                                 \
      T *y = (T *)j->y + p * j->OH * j->OW;                                                                           \
      for (int64_t oh = 0; oh < j->OH; oh++)                                                                          \
        for (int64_t ow = 0; ow < j->OW; ow++) {                                                                      \
          int64_t h0 = oh * j->sh - j->ph, w0 = ow * j->sw - j->pw;                                                   \
          T m = -INFINITY;                                                                                            \
          for (int64_t kh = 0; kh < j->kh; kh++) {                                                                    \
            int64_t ih = h0 + kh * j->dh;                                                                             \
            if (ih < 0 || ih >= j->H) continue;                                                                       \
            for (int64_t kw = 0; kw < j->kw; kw++) {                                                                  \
              int64_t iw = w0 + kw * j->dw;                                                                           \
              if (iw < 0 || iw >= j->W) continue;                                                                     \
              T v = x[ih * j->W + iw];                                                                                \
              if (v > m || isnan(v)) m = v;                                                                           \
            }                                                                                                         \
          }                                                                                                           \
          y[oh * j->OW + ow] = m;                                                                                     \
        }                                                                                                             \
    }                                                                                                                 \
  }                                                                                                                   \
  static void pl_avg_##S(void *arg, int64_t b, int64_t e) {                                                           \
    const pl_job *j = arg;                                                                                            \
    for (int64_t p = b; p < e; p++) {                                                                                 \
      const T *x = (const T *)j->x + p * j->H * j->W;                                                                 \
      T *y = (T *)j->y + p * j->OH * j->OW;                                                                           \
      for (int64_t oh = 0; oh < j->OH; oh++)                                                                          \
        for (int64_t ow = 0; ow < j->OW; ow++) {                                                                      \
          int64_t h0 = oh * j->sh - j->ph, w0 = ow * j->sw - j->pw;                                                   \
          int64_t h1 = h0 + j->kh < j->H + j->ph ? h0 + j->kh : j->H + j->ph;                                         \
          int64_t w1 = w0 + j->kw < j->W + j->pw ? w0 + j->kw : j->W + j->pw;                                         \
          int64_t pool = (h1 - h0) * (w1 - w0);                                                                       \
          h0 = h0 > 0 ? h0 : 0, w0 = w0 > 0 ? w0 : 0;                                                                 \
          h1 = h1 < j->H ? h1 : j->H, w1 = w1 < j->W ? w1 : j->W;                                                     \
          T s = 0;                                                                                                    \
          for (int64_t ih = h0; ih < h1; ih++)                                                                        \
            for (int64_t iw = w0; iw < w1; iw++) s += x[ih * j->W + iw];                                              \
          int64_t div = j->divisor ? j->divisor : j->count_include_pad ? pool : (h1 - h0) * (w1 - w0);                \
          y[oh * j->OW + ow] = h0 < h1 && w0 < w1 ? s / (T)div : (T)0;                                                \
        }                                                                                                             \
    }                                                                                                                 \
  }                                                                                                                   \
  static void pl_aavg_##S(void *arg, int64_t b, int64_t e) {                                                          \
    const pl_job *j = arg;                                                                                            \
    for (int64_t p = b; p < e; p++) {                                                                                 \
      const T *x = (const T *)j->x + p * j->H * j->W;                                                                 \
      T *y = (T *)j->y + p * j->OH * j->OW;                                                                           \
      for (int64_t oh = 0; oh < j->OH; oh++) {                                                                        \
        int64_t h0 = pl_start(oh, j->OH, j->H), h1 = pl_end(oh, j->OH, j->H);                                         \
        for (int64_t ow = 0; ow < j->OW; ow++) {                                                                      \
          int64_t w0 = pl_start(ow, j->OW, j->W), w1 = pl_end(ow, j->OW, j->W);                                       \
          T s = 0;                                                                                                    \
          for (int64_t ih = h0; ih < h1; ih++)                                                                        \
            for (int64_t iw = w0; iw < w1; iw++) s += x[ih * j->W + iw];                                              \
          y[oh * j->OW + ow] = s / (T)((h1 - h0) * (w1 - w0));                                                        \
        }                                                                                                             \
      }                                                                                                               \
    }                                                                                                                 \
  }                                                                                                                   \
  static void pl_amax_##S(void *arg, int64_t b, int64_t e) {                                                          \
    const pl_job *j = arg;                                                                                            \
    for (int64_t p = b; p < e; p++) {                                                                                 \
      const T *x = (const T *)j->x + p * j->H * j->W;                                                                 \
      T *y = (T *)j->y + p * j->OH * j->OW;                                                                           \
      int64_t *ix = j->idx + p * j->OH * j->OW;                                                                       \
      for (int64_t oh = 0; oh < j->OH; oh++) {                                                                        \
        int64_t h0 = pl_start(oh, j->OH, j->H), h1 = pl_end(oh, j->OH, j->H);                                         \
        for (int64_t ow = 0; ow < j->OW; ow++) {                                                                      \
          int64_t w0 = pl_start(ow, j->OW, j->W), w1 = pl_end(ow, j->OW, j->W);                                       \
          T m = -INFINITY;                                                                                            \
          int64_t mi = h0 * j->W + w0;                                                                                \
          for (int64_t ih = h0; ih < h1; ih++)                                                                        \
            for (int64_t iw = w0; iw < w1; iw++) {                                                                    \
              T v = x[ih * j->W + iw];                                                                                \
              if (v > m || isnan(v)) m = v, mi = ih * j->W + iw;                                                      \
            }                                                                                                         \
          y[oh * j->OW + ow] = m;                                                                                     \
          ix[oh * j->OW + ow] = mi;                                                                                   \
        }                                                                                                             \
      }                                                                                                               \
    }                                                                                                                 \
  }

PL_DEFINE(float, f32)
PL_DEFINE(double, f64)

/* The hot loop is built for AVX-512, AVX2 and plain x86-64, chosen when the
 * library loads, and at O3 so that GCC vectorizes it. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#ifdef __SANITIZE_THREAD__ /* ThreadSanitizer: clones' ifunc resolvers would run before it is set up */
#define PL_HOT __attribute__((optimize("O3")))
#else
#define PL_HOT __attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))
#endif
#else
#define PL_HOT
#endif

/* Max pooling of float planes [b, e), separably: per output row, the max
 * over the window's rows of each input column (contiguous, vectorized),
 * then over the window's columns of that. The same maximum as pl_max_f32,
 * NaN included (any NaN in a window wins). The column maxima are in a
 * scratch row; without one (out of memory) the plain loop runs. */
PL_HOT static void pl_max_rows_f32(void *arg, int64_t b, int64_t e) {
  const pl_job *j = arg;
  float *t = ts_rt_malloc((size_t)j->W * sizeof(float));
  if (!t) {
    pl_max_f32(arg, b, e);
    return;
  }
  for (int64_t p = b; p < e; p++) {
    const float *x = (const float *)j->x + p * j->H * j->W;
    float *y = (float *)j->y + p * j->OH * j->OW;
    for (int64_t oh = 0; oh < j->OH; oh++) {
      int64_t h0 = oh * j->sh - j->ph;
      for (int64_t iw = 0; iw < j->W; iw++) t[iw] = -INFINITY;
      for (int64_t kh = 0; kh < j->kh; kh++) {
        int64_t ih = h0 + kh * j->dh;
        if (ih < 0 || ih >= j->H) continue;
        const float *xr = x + ih * j->W;
        for (int64_t iw = 0; iw < j->W; iw++) {
          float v = xr[iw], m = t[iw];
          t[iw] = v > m || v != v ? v : m;
        }
      }
      /* per window column, over the outputs whose input column is in range */
      float *yr = y + oh * j->OW;
      for (int64_t ow = 0; ow < j->OW; ow++) yr[ow] = -INFINITY;
      for (int64_t kw = 0; kw < j->kw; kw++) {
        int64_t off = kw * j->dw - j->pw; /* iw = ow * sw + off */
        int64_t lo = off >= 0 ? 0 : (-off + j->sw - 1) / j->sw;
        int64_t hi = j->W - 1 - off < 0 ? -1 : (j->W - 1 - off) / j->sw;
        if (hi > j->OW - 1) hi = j->OW - 1;
        if (j->sw == 2)
          for (int64_t ow = lo; ow <= hi; ow++) {
            float v = t[2 * ow + off], m = yr[ow];
            yr[ow] = v > m || v != v ? v : m;
          }
        else
          for (int64_t ow = lo; ow <= hi; ow++) {
            float v = t[ow * j->sw + off], m = yr[ow];
            yr[ow] = v > m || v != v ? v : m;
          }
      }
    }
  }
  ts_rt_free(t);
}

typedef enum pl_kind { PL_MAX, PL_AVG, PL_AAVG, PL_AMAX } pl_kind;

/* Runs one pooling kind over x (3-d or 4-d, its last two dims pooled) into
 * a new tensor of x's dtype with output OH x OW; for PL_AMAX also the
 * indices into *indices. x has been checked. */
static ts_rt_tensor *pl_run(ts_rt_ctx *c, const ts_rt_tensor *x, pl_job *j, pl_kind kind, ts_rt_tensor **indices) {
  ts_dtype dt = (ts_dtype)x->dtype, wdt = nnu_work_dtype(dt);
  int32_t nd = x->ndim;
  int64_t osz[4];
  for (int32_t i = 0; i < nd - 2; i++) osz[i] = x->sizes[i];
  osz[nd - 2] = j->OH, osz[nd - 1] = j->OW;
  ts_rt_tensor *xc = nnu_contig_as(c, x, wdt);
  if (!xc) return NULL;
  ts_rt_tensor *y = ts_rt_tensor_new(c, wdt, nd, osz, false);
  ts_rt_tensor *ix = y && kind == PL_AMAX ? ts_rt_tensor_new(c, TS_DT_INT64, nd, osz, false) : NULL;
  if (!y || (kind == PL_AMAX && !ix)) {
    ts_rt_tensor_release(xc);
    if (y) ts_rt_tensor_release(y);
    return NULL;
  }
  j->x = ts_rt_tensor_data(xc);
  j->y = ts_rt_tensor_data(y);
  j->idx = ix ? ts_rt_tensor_data(ix) : NULL;
  int64_t planes = 1;
  for (int32_t i = 0; i < nd - 2; i++) planes *= x->sizes[i];
  int64_t work = j->OH * j->OW * (kind == PL_MAX || kind == PL_AVG ? j->kh * j->kw : 1) + j->H * j->W;
  int64_t grain = 32768 / (work ? work : 1) + 1;
  bool dbl = wdt == TS_DT_FLOAT64;
  static const ts_rt_range_fn fns[2][4] = {{pl_max_rows_f32, pl_avg_f32, pl_aavg_f32, pl_amax_f32},
                                           {pl_max_f64, pl_avg_f64, pl_aavg_f64, pl_amax_f64}};
  if (j->OH * j->OW > 0) ts_rt_parallel_for(c, planes, grain, fns[dbl][kind], j);
  ts_rt_tensor_release(xc);
  if (indices) *indices = ix;
  return nnu_cast_owned(c, y, dt);
}

/* ATen's pooling_output_shape. */
static int64_t pl_out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
  int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t q = num / stride;
  if ((num % stride != 0) && ((num < 0) != (stride < 0))) q--; /* floor division */
  int64_t out = q + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) out--;
  return out;
}

/* Reads an int[N] pooling argument with 1 or N entries (or 0 when
 * allow_empty: *n set to 0). */
static bool pl_pair(ts_rt_ctx *c, ts_rt_call *call, uint32_t i, int32_t nsp, bool allow_empty, const char *msg,
                    int64_t *out, uint32_t *n) {
  int64_t v[8];
  if (!ts_rt_arg_ints(c, call, i, v, 8, n, (uint32_t)nsp)) return false;
  if (*n == 0 && allow_empty) return true;
  if (*n != 1 && (int32_t)*n != nsp) return ts_rt_fail(c, "%s", msg);
  for (int32_t k = 0; k < nsp; k++) out[k] = *n == 1 ? v[0] : v[k];
  return true;
}

/* max_pool / avg_pool for nsp spatial dims (1 or 2). */
static bool pl_k_pool(ts_rt_ctx *c, ts_rt_call *call, int32_t nsp, bool avg) {
  ts_rt_tensor *x = NULL;
  int64_t k[2] = {1, 1}, s[2] = {1, 1}, p[2] = {0, 0}, d[2] = {1, 1};
  uint32_t nk = 0, ns = 0, np = 0, ndl = 0;
  bool ceil_mode = false, cip = true;
  int64_t divisor = 0;
  const char *op = avg ? "avg_pool2d" : nsp == 1 ? "max_pool1d" : "max_pool2d";
  char m1[128], m2[128], m3[128], m4[128];
  snprintf(m1, sizeof m1, "%s: kernel_size must either be a single int, or a tuple of %s ints", op,
           nsp == 1 ? "one" : "two");
  snprintf(m2, sizeof m2, "%s: stride must either be omitted, a single int, or a tuple of %s ints", op,
           nsp == 1 ? "one" : "two");
  snprintf(m3, sizeof m3, "%s: padding must either be a single int, or a tuple of %s ints", op,
           nsp == 1 ? "one" : "two");
  snprintf(m4, sizeof m4, "%s: dilation must be either a single int, or a tuple of %s ints", op,
           nsp == 1 ? "one" : "two");
  int64_t *kk = k + (2 - nsp), *ss = s + (2 - nsp), *pp = p + (2 - nsp), *dd = d + (2 - nsp);
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !pl_pair(c, call, 1, nsp, false, m1, kk, &nk) ||
      !pl_pair(c, call, 2, nsp, true, m2, ss, &ns) || !pl_pair(c, call, 3, nsp, false, m3, pp, &np))
    return false;
  if (ns == 0) memcpy(ss, kk, (size_t)nsp * sizeof(int64_t));
  if (avg) {
    if (!ts_rt_arg_bool(c, call, 4, &ceil_mode) || !ts_rt_arg_bool(c, call, 5, &cip)) return false;
    if (nsp == 2) {
      bool has = false;
      if (!ts_rt_arg_opt_int(c, call, 6, &divisor, &has)) return false;
      if (has && divisor == 0) return ts_rt_fail(c, "divisor must be not zero");
    }
  } else {
    if (!pl_pair(c, call, 4, nsp, false, m4, dd, &ndl) || !ts_rt_arg_bool(c, call, 5, &ceil_mode)) return false;
  }
  ts_dtype dt = (ts_dtype)x->dtype;
  int32_t nd = x->ndim;
  if (nd != nsp + 1 && nd != nsp + 2) {
    if (nsp == 1) {
      char sh[256];
      nnu_shape_str(sh, sizeof sh, nd, x->sizes);
      return ts_rt_fail(c, "%s() Expected 2D or 3D input tensor, but got %s", avg ? "avg_pool1d" : "max_pool1d", sh);
    }
    return ts_rt_fail(c, "non-empty 3D or 4D (batch mode) tensor expected for input");
  }
  if (k[0] <= 0 || k[1] <= 0)
    return ts_rt_fail(c, "kernel size should be greater than zero, but got kH: %lld kW: %lld", (long long)k[0],
                      (long long)k[1]);
  if (s[0] <= 0 || s[1] <= 0) return ts_rt_fail(c, "stride should not be zero");
  if (d[0] <= 0 || d[1] <= 0)
    return ts_rt_fail(c, "dilation should be greater than zero, but got dilationH: %lld dilationW: %lld",
                      (long long)d[0], (long long)d[1]);
  for (int i = 0; i < 2; i++)
    if (p[i] > k[i] / 2)
      return ts_rt_fail(c, "pad should be at most half of kernel size, but got pad=%lld and kernel_size=%lld",
                        (long long)p[i], (long long)k[i]);
  bool okdt = dt == TS_DT_FLOAT32 || dt == TS_DT_FLOAT64 || dt == TS_DT_BFLOAT16 || (avg && dt == TS_DT_INT64);
  if (!okdt) return nnu_not_impl(c, avg ? "avg_pool2d" : nsp == 1 ? "max_pool1d_impl" : "max_pool2d", dt);
  int64_t H = nsp == 2 ? x->sizes[nd - 2] : 1, W = x->sizes[nd - 1];
  int64_t OH = pl_out_size(H, k[0], p[0], s[0], d[0], ceil_mode),
          OW = pl_out_size(W, k[1], p[1], s[1], d[1], ceil_mode);
  for (int32_t i = nd == nsp + 2 ? 1 : 0; i < nd; i++)
    if (x->sizes[i] == 0) return ts_rt_fail(c, "non-empty %dD or %dD (batch mode) tensor expected for input",
                                            (int)(nsp + 1), (int)(nsp + 2));
  if (OH < 1 || OW < 1) {
    int64_t C = nd == nsp + 2 ? x->sizes[1] : x->sizes[0];
    return ts_rt_fail(c, "Given input size: (%lldx%lldx%lld). Calculated output size: (%lldx%lldx%lld). Output size "
                         "is too small",
                      (long long)C, (long long)H, (long long)W, (long long)C, (long long)OH, (long long)OW);
  }
  /* run as 2-d: a 1-d input [.., L] is [.., 1, L] */
  ts_rt_tensor *x2 = NULL;
  if (nsp == 1) {
    int64_t sz[4], st[4];
    for (int32_t i = 0; i < nd - 1; i++) sz[i] = x->sizes[i], st[i] = x->strides[i];
    sz[nd - 1] = 1, st[nd - 1] = 0, sz[nd] = W, st[nd] = x->strides[nd - 1];
    if (!(x2 = ts_rt_tensor_view(c, x, x->offset, nd + 1, sz, st))) return false;
  }
  pl_job j = {NULL, NULL, NULL, H, W, OH, OW, k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1], cip, divisor};
  ts_rt_tensor *y = pl_run(c, x2 ? x2 : x, &j, avg ? PL_AVG : PL_MAX, NULL);
  if (x2) {
    ts_rt_tensor_release(x2);
    if (y) {
      int64_t sz[3], st[3];
      for (int32_t i = 0; i < nd - 1; i++) sz[i] = y->sizes[i], st[i] = y->strides[i];
      sz[nd - 1] = OW, st[nd - 1] = 1;
      ts_rt_tensor *v = ts_rt_tensor_view(c, y, y->offset, nd, sz, st);
      ts_rt_tensor_release(y);
      y = v;
    }
  }
  return nnu_ret(call, y);
}

bool ts_rt_k_max_pool1d(ts_rt_ctx *c, ts_rt_call *call) { return pl_k_pool(c, call, 1, false); }
bool ts_rt_k_max_pool2d(ts_rt_ctx *c, ts_rt_call *call) { return pl_k_pool(c, call, 2, false); }
bool ts_rt_k_avg_pool1d(ts_rt_ctx *c, ts_rt_call *call) { return pl_k_pool(c, call, 1, true); }
bool ts_rt_k_avg_pool2d(ts_rt_ctx *c, ts_rt_call *call) { return pl_k_pool(c, call, 2, true); }

/* adaptive average / max pooling over nsp spatial dims. */
static bool pl_k_adaptive(ts_rt_ctx *c, ts_rt_call *call, int32_t nsp, bool max) {
  ts_rt_tensor *x = NULL;
  int64_t o[8];
  uint32_t no = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_ints(c, call, 1, o, 8, &no, (uint32_t)nsp)) return false;
  const char *op = max ? "adaptive_max_pool2d" : nsp == 1 ? "adaptive_avg_pool1d" : "adaptive_avg_pool2d";
  if ((int32_t)no != nsp) return ts_rt_fail(c, "%s: output_size must be %d", op, (int)nsp);
  int32_t nd = x->ndim;
  if (nd != nsp + 1 && nd != nsp + 2) {
    if (max) return ts_rt_fail(c, "adaptive_max_pool2d(): Expected 3D or 4D tensor, but got ndim %d", (int)nd);
    return ts_rt_fail(c, "%s(): Expected %dD or %dD tensor, but got %d", op, (int)(nsp + 1), (int)(nsp + 2), (int)nd);
  }
  for (int32_t i = 1; i < nd; i++)
    if (x->sizes[i] == 0) {
      char sh[256];
      nnu_shape_str(sh, sizeof sh, nd, x->sizes);
      return ts_rt_fail(c, "%s(): Expected input to have non-zero size for non-batch dimensions, but input has sizes "
                           "%s with dimension %d being empty",
                        op, sh, (int)i);
    }
  int64_t OH = nsp == 2 ? o[0] : 1, OW = o[nsp - 1];
  if (OH < 0 || OW < 0) return ts_rt_fail(c, "%s: elements of output_size must be greater than or equal to 0", op);
  ts_dtype dt = (ts_dtype)x->dtype;
  bool okdt = dt == TS_DT_FLOAT32 || dt == TS_DT_FLOAT64 || dt == TS_DT_BFLOAT16;
  bool global = OH == 1 && OW == 1;
  if (!max && global && !ts_rt_dtype_is_float(dt))
    return ts_rt_fail(c, "mean(): could not infer output dtype. Input dtype must be either a floating point or "
                         "complex dtype. Got: %s",
                      ts_rt_dtype_name(dt));
  if (!okdt && !(dt == TS_DT_FLOAT16 && !max && global)) return nnu_not_impl(c, op, dt);
  int64_t H = nsp == 2 ? x->sizes[nd - 2] : 1, W = x->sizes[nd - 1];
  ts_rt_tensor *x2 = NULL;
  if (nsp == 1) {
    int64_t sz[4], st[4];
    for (int32_t i = 0; i < nd - 1; i++) sz[i] = x->sizes[i], st[i] = x->strides[i];
    sz[nd - 1] = 1, st[nd - 1] = 0, sz[nd] = W, st[nd] = x->strides[nd - 1];
    if (!(x2 = ts_rt_tensor_view(c, x, x->offset, nd + 1, sz, st))) return false;
  }
  pl_job j = {NULL, NULL, NULL, H, W, OH, OW, 1, 1, 1, 1, 0, 0, 1, 1, true, 0};
  ts_rt_tensor *ix = NULL;
  ts_rt_tensor *y = pl_run(c, x2 ? x2 : x, &j, max ? PL_AMAX : PL_AAVG, max ? &ix : NULL);
  if (x2) {
    ts_rt_tensor_release(x2);
    if (y) {
      int64_t sz[3], st[3];
      for (int32_t i = 0; i < nd - 1; i++) sz[i] = y->sizes[i], st[i] = y->strides[i];
      sz[nd - 1] = OW, st[nd - 1] = 1;
      ts_rt_tensor *v = ts_rt_tensor_view(c, y, y->offset, nd, sz, st);
      ts_rt_tensor_release(y);
      y = v;
    }
  }
  if (!y) {
    if (ix) ts_rt_tensor_release(ix);
    return false;
  }
  call->out[0] = ts_iv_tensor(y);
  if (max) call->out[1] = ts_iv_tensor(ix);
  return true;
}

bool ts_rt_k_adaptive_avg_pool1d(ts_rt_ctx *c, ts_rt_call *call) { return pl_k_adaptive(c, call, 1, false); }
bool ts_rt_k_adaptive_avg_pool2d(ts_rt_ctx *c, ts_rt_call *call) { return pl_k_adaptive(c, call, 2, false); }
bool ts_rt_k_adaptive_max_pool2d(ts_rt_ctx *c, ts_rt_call *call) { return pl_k_adaptive(c, call, 2, true); }
