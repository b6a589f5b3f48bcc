/* runtime/kernels/conv.c: 1-d and 2-d convolution (aten::_convolution,
 * convolution, conv1d, conv2d and their padding='same'/'valid' forms):
 * im2col + GEMM per group, a direct loop for depthwise convolution, and a
 * plain GEMM for 1x1 convolutions; transposed convolution by GEMM +
 * col2im. 1-d runs as 2-d with height 1. */
#include <cblas.h>
#include <limits.h>

#include "nn_util.h"

/* The geometry of one 2-d convolution over contiguous NCHW data. */
typedef struct cv_geom {
  int64_t N, C, H, W;    /* input */
  int64_t O, KH, KW;     /* weight [O, C / groups, KH, KW] */
  int64_t OH, OW;        /* output */
  int64_t sh, sw, ph, pw, dh, dw; /* stride, padding before, dilation */
  int64_t groups;
} cv_geom;

/* Work shared with the parallel loops. */
typedef struct cv_job {
  const cv_geom *g;
  const void *x;   /* input, one image for im2col, all for depthwise */
  const void *w;
  void *col;       /* im2col rows */
  void *y;         /* output (bias already in) */
  int64_t c0;      /* first input channel of the group (im2col) */
} cv_job;

/* im2col and depthwise loops for float and double. */
#define CV_DEFINE(T, S)                                                                                               \
  static void cv_im2col_##S(void *arg, int64_t b, int64_t e) {                                                        \
    const cv_job *j = arg;                                                                                            \
    const cv_geom *g = j->g;                                                                                          \
    const T *x = j->x;                                                                                                \
    T *col = j->col;                                                                                                  \
    int64_t ohw = g->OH * g->OW;                                                                                      \
    for (int64_t r = b; r < e; r++) {                                                                                 \
      int64_t kw = r % g->KW, kh = (r / g->KW) % g->KH, ci = j->c0 + r / (g->KW * g->KH);                             \
      const T *xp = x + ci * g->H * g->W;                                                                             \
      T *dst = col + r * ohw;                                                                                         \
      for (int64_t oh = 0; oh < g->OH; oh++) {                                                                        \
        int64_t ih = oh * g->sh - g->ph + kh * g->dh;                                                                 \
        T *d = dst + oh * g->OW;                                                                                      \
        if (ih < 0 || ih >= g->H) {                                                                                   \
          for (int64_t ow = 0; ow < g->OW; ow++) d[ow] = 0;                                                           \
          continue;                                                                                                   \
        }                                                                                                             \
        const T *row = xp + ih * g->W;                                                                                \
        int64_t iw0 = -g->pw + kw * g->dw;                                                                            \
        if (g->sw == 1 && iw0 >= 0 && iw0 + g->OW <= g->W) {                                                          \
          memcpy(d, row + iw0, (size_t)g->OW * sizeof(T));                                                            \
          continue;                                                                                                   \
        }                                                                                                             \
        for (int64_t ow = 0; ow < g->OW; ow++) {                                                                      \
          int64_t iw = iw0 + ow * g->sw;                                                                              \
          d[ow] = iw >= 0 && iw < g->W ? row[iw] : (T)0;                                                              \
        }                                                                                                             \
      }                                                                                                               \
    }                                                                                                                 \
  }                                                                                                                   \
                                                                                                                      \
  /* planes [b, e) of N * O: output channel o reads input channel o / (O / C); \
   * row-wise accumulation so the stride-1 case vectorises */                                                       \
  static void cv_depthwise_##S(void *arg, int64_t b, int64_t e) {                                                     \
    const cv_job *j = arg;                                                                                            \
    const cv_geom *g = j->g;                                                                                          \
    int64_t mult = g->O / g->C;                                                                                       \
    for (int64_t p = b; p < e; p++) {                                                                                 \
      int64_t n = p / g->O, o = p % g->O, ci = o / mult;                                                              \
      const T *xp = (const T *)j->x + (n * g->C + ci) * g->H * g->W;                                                  \
      const T *wp = (const T *)j->w + o * g->KH * g->KW;                                                              \
      T *yp = (T *)j->y + p * g->OH * g->OW;                                                                          \
      for (int64_t oh = 0; oh < g->OH; oh++) {                                                                        \
        T *yr = yp + oh * g->OW;                                                                                      \
        for (int64_t kh = 0; kh < g->KH; kh++) {                                                                      \
          int64_t ih = oh * g->sh - g->ph + kh * g->dh;                                                               \
          if (ih < 0 || ih >= g->H) continue;                                                                         \
          const T *xr = xp + ih * g->W;                                                                               \
          for (int64_t kw = 0; kw < g->KW; kw++) {                                                                    \
            T wv = wp[kh * g->KW + kw];                                                                               \
            int64_t off = kw * g->dw - g->pw; /* iw = ow * sw + off */                                                \
            int64_t lo = off >= 0 ? 0 : (-off + g->sw - 1) / g->sw;                                                   \
            int64_t hi = g->W - 1 - off < 0 ? -1 : (g->W - 1 - off) / g->sw;                                          \
            if (hi > g->OW - 1) hi = g->OW - 1;                                                                       \
            if (g->sw == 1) {                                                                                         \
              const T *xs = xr + off;                                                                                 \
              for (int64_t ow = lo; ow <= hi; ow++) yr[ow] += wv * xs[ow];                                            \
            } else {                                                                                                  \
              for (int64_t ow = lo; ow <= hi; ow++) yr[ow] += wv * xr[ow * g->sw + off];                              \
            }                                                                                                         \
          }                                                                                                           \
        }                                                                                                             \
      }                                                                                                               \
    }                                                                                                                 \
  }

CV_DEFINE(float, f32)
CV_DEFINE(double, f64)

/* y[M, N] += w[M, K] @ col[K, N], all contiguous, in the work dtype. */
static void cv_gemm(bool dbl, int64_t M, int64_t N, int64_t K, const void *w, const void *col, void *y) {
  if (dbl)
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)M, (blasint)N, (blasint)K, 1.0, w, (blasint)K, col,
                (blasint)N, 1.0, y, (blasint)N);
  else
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)M, (blasint)N, (blasint)K, 1.0f, w, (blasint)K,
                col, (blasint)N, 1.0f, y, (blasint)N);
}

/* The convolution proper on contiguous work-dtype x and w; y holds the bias
 * (or zeros) on entry. */
static bool cv_run(ts_rt_ctx *c, const cv_geom *g, bool dbl, const void *x, const void *w, void *y) {
  size_t es = dbl ? sizeof(double) : sizeof(float);
  int64_t Cg = g->C / g->groups, Og = g->O / g->groups, ohw = g->OH * g->OW, kk = g->KH * g->KW;
  if (g->N == 0 || g->O == 0 || ohw == 0) return true;
  if (g->groups > 1 && g->groups == g->C && Cg == 1) {
    cv_job j = {g, x, w, NULL, y, 0};
    int64_t plane = ohw * kk;
    ts_rt_parallel_for(c, g->N * g->O, 32768 / (plane ? plane : 1) + 1, dbl ? cv_depthwise_f64 : cv_depthwise_f32,
                       &j);
    return true;
  }
  int64_t K = Cg * kk;
  if (K == 0) return true;
  if (Og > INT_MAX || ohw > INT_MAX || K > INT_MAX) return ts_rt_fail(c, "convolution too large for BLAS");
  bool direct = g->KH == 1 && g->KW == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0 && g->OH == g->H &&
                g->OW == g->W;
  int64_t ncol = 0;
  void *col = NULL;
  if (!direct) {
    if (!nnu_mul(K, ohw, &ncol) || (uint64_t)ncol > SIZE_MAX / es) return ts_rt_fail(c, "convolution too large");
    if (!(col = ts_rt_malloc((size_t)ncol * es))) return ts_rt_oom(c);
  }
  for (int64_t n = 0; n < g->N; n++) {
    const char *xn = (const char *)x + (size_t)(n * g->C * g->H * g->W) * es;
    for (int64_t gi = 0; gi < g->groups; gi++) {
      const void *b = xn + (size_t)(gi * Cg * g->H * g->W) * es;
      if (!direct) {
        cv_job j = {g, xn, NULL, col, NULL, gi * Cg};
        ts_rt_parallel_for(c, K, 32768 / ohw + 1, dbl ? cv_im2col_f64 : cv_im2col_f32, &j);
        b = col;
      }
      const char *wg = (const char *)w + (size_t)(gi * Og * K) * es;
      char *yg = (char *)y + (size_t)((n * g->O + gi * Og) * ohw) * es;
      cv_gemm(dbl, Og, ohw, K, wg, b, yg);
    }
  }
  ts_rt_free(col);
  return true;
}

/* A convolution's arguments after parsing: nsp spatial dims (1 or 2). */
typedef struct cv_args {
  int32_t nsp;
  int64_t stride[2], plo[2], phi[2], dil[2];
  int64_t groups;
  int64_t outpad[2]; /* transposed only */
} cv_args;

/* Fills y (contiguous [N, O, ...], float32 or float64) with the bias per
 * channel, or zeros. */
static bool cv_fill_bias(ts_rt_ctx *c, ts_rt_tensor *y, const ts_rt_tensor *bias, const cv_geom *g) {
  (void)c;
  int64_t ohw = g->OH * g->OW;
  char *yd = ts_rt_tensor_data(y);
  for (int64_t n = 0; n < g->N; n++)
    for (int64_t o = 0; o < g->O; o++) {
      double bv = bias ? ts_rt_load_f64((const char *)ts_rt_tensor_data(bias) +
                                            o * bias->strides[0] * (int64_t)ts_dtype_size((ts_dtype)bias->dtype),
                                        (ts_dtype)bias->dtype)
                       : 0.0;
      if (y->dtype == TS_DT_FLOAT32)
        for (int64_t i = 0; i < ohw; i++) ((float *)yd)[(n * g->O + o) * ohw + i] = (float)bv;
      else
        for (int64_t i = 0; i < ohw; i++) ((double *)yd)[(n * g->O + o) * ohw + i] = bv;
    }
  return true;
}

/* Checks as ATen's check_shape_forward, then runs. x and w are batched
 * (x->ndim == w->ndim == nsp + 2). */
static ts_rt_tensor *cv_conv(ts_rt_ctx *c, const ts_rt_tensor *x, const ts_rt_tensor *w, const ts_rt_tensor *bias,
                             const cv_args *a) {
  char ws[256], xs[256];
  nnu_shape_str(ws, sizeof ws, w->ndim, w->sizes);
  nnu_shape_str(xs, sizeof xs, x->ndim, x->sizes);
  int32_t nsp = a->nsp;
  if (a->groups <= 0) return ts_rt_fail(c, "non-positive groups is not supported"), NULL;
  for (int32_t i = 0; i < nsp; i++) {
    if (a->plo[i] < 0 || a->phi[i] < 0) return ts_rt_fail(c, "negative padding is not supported"), NULL;
    if (a->stride[i] <= 0) return ts_rt_fail(c, "non-positive stride is not supported"), NULL;
    if (a->dil[i] <= 0) return ts_rt_fail(c, "dilation should be greater than zero"), NULL;
  }
  if (x->ndim != w->ndim)
    return ts_rt_fail(c, "Expected %d-dimensional input for %d-dimensional weight %s, but got %d-dimensional input of "
                         "size %s instead",
                      (int)w->ndim, (int)w->ndim, ws, (int)x->ndim, xs),
           NULL;
  if (w->sizes[0] % a->groups)
    return ts_rt_fail(c, "Given groups=%lld, expected weight to be divisible by %lld at dimension 0, but got weight of "
                         "size [%s] instead",
                      (long long)a->groups, (long long)a->groups, ws),
           NULL;
  if (x->sizes[1] != w->sizes[1] * a->groups)
    return ts_rt_fail(c, "Given groups=%lld, weight of size %s, expected input%s to have %lld channels, but got %lld "
                         "channels instead",
                      (long long)a->groups, ws, xs, (long long)(w->sizes[1] * a->groups), (long long)x->sizes[1]),
           NULL;
  if (bias && (bias->ndim != 1 || bias->sizes[0] != w->sizes[0])) {
    char bs[256];
    nnu_shape_str(bs, sizeof bs, bias->ndim, bias->sizes);
    return ts_rt_fail(c, "Given weight of size %s, expected bias to be 1-dimensional with %lld elements, but got bias "
                         "of size %s instead",
                      ws, (long long)w->sizes[0], bs),
           NULL;
  }
  int64_t in[2], k[2], out[2];
  bool small = false;
  for (int32_t i = 0; i < nsp; i++) {
    in[i] = x->sizes[2 + i] + a->plo[i] + a->phi[i];
    k[i] = a->dil[i] * (w->sizes[2 + i] - 1) + 1;
    if (in[i] < k[i]) small = true;
    out[i] = (in[i] - k[i]) / a->stride[i] + 1;
  }
  if (small) {
    if (nsp == 2)
      ts_rt_fail(c, "Calculated padded input size per channel: (%lld x %lld). Kernel size: (%lld x %lld). Kernel size "
                    "can't be greater than actual input size",
                 (long long)in[0], (long long)in[1], (long long)k[0], (long long)k[1]);
    else
      ts_rt_fail(c, "Calculated padded input size per channel: (%lld). Kernel size: (%lld). Kernel size can't be "
                    "greater than actual input size",
                 (long long)in[0], (long long)k[0]);
    return NULL;
  }
  ts_dtype dt = (ts_dtype)x->dtype;
  if (w->dtype != dt)
    return ts_rt_fail(c, "expected scalar type %s but found %s", ts_rt_dtype_name(dt), ts_rt_dtype_name((ts_dtype)w->dtype)),
           NULL;
  if (bias && bias->dtype != dt)
    return ts_rt_fail(c, "Input type (%s) and bias type (%s) should be the same", nnu_ctype_name(dt),
                      nnu_ctype_name((ts_dtype)bias->dtype)),
           NULL;
  if (dt == TS_DT_FLOAT16 || dt == TS_DT_BOOL || !ts_rt_dtype_supported(dt))
    return nnu_not_impl(c, "slow_conv2d_cpu", dt), NULL;
  cv_geom g = {x->sizes[0], x->sizes[1], nsp == 2 ? x->sizes[2] : 1, x->sizes[1 + nsp], w->sizes[0],
               nsp == 2 ? w->sizes[2] : 1, w->sizes[1 + nsp], nsp == 2 ? out[0] : 1, out[nsp - 1],
               nsp == 2 ? a->stride[0] : 1, a->stride[nsp - 1], nsp == 2 ? a->plo[0] : 0, a->plo[nsp - 1],
               nsp == 2 ? a->dil[0] : 1, a->dil[nsp - 1], a->groups};
  int64_t osz[4] = {g.N, g.O, nsp == 2 ? g.OH : g.OW, g.OW};
  ts_dtype wdt = nnu_work_dtype(dt);
  ts_rt_tensor *xc = nnu_contig_as(c, x, wdt);
  ts_rt_tensor *wc = xc ? nnu_contig_as(c, w, wdt) : NULL;
  ts_rt_tensor *y = wc ? ts_rt_tensor_new(c, wdt, nsp + 2, osz, false) : NULL;
  bool ok = y != NULL && cv_fill_bias(c, y, bias, &g) &&
            cv_run(c, &g, wdt == TS_DT_FLOAT64, ts_rt_tensor_data(xc), ts_rt_tensor_data(wc), ts_rt_tensor_data(y));
  if (xc) ts_rt_tensor_release(xc);
  if (wc) ts_rt_tensor_release(wc);
  if (!ok) {
    if (y) ts_rt_tensor_release(y);
    return NULL;
  }
  return nnu_cast_owned(c, y, dt);
}

/* col2im for transposed convolution: scatter-adds col [Cog * KH * KW, H * W]
 * into y [Cog, OH, OW]. */
#define CV_COL2IM(T, S)                                                                                               \
  static void cv_col2im_##S(const cv_geom *g, int64_t cog, const T *col, T *y) {                                      \
    int64_t hw = g->H * g->W;                                                                                         \
    for (int64_t r = 0; r < cog * g->KH * g->KW; r++) {                                                               \
      int64_t kw = r % g->KW, kh = (r / g->KW) % g->KH, co = r / (g->KW * g->KH);                                     \
      T *yc = y + co * g->OH * g->OW;                                                                                 \
      const T *cr = col + r * hw;                                                                                     \
      for (int64_t ih = 0; ih < g->H; ih++) {                                                                         \
        int64_t oh = ih * g->sh - g->ph + kh * g->dh;                                                                 \
        if (oh < 0 || oh >= g->OH) continue;                                                                          \
        for (int64_t iw = 0; iw < g->W; iw++) {                                                                       \
          int64_t ow = iw * g->sw - g->pw + kw * g->dw;                                                               \
          if (ow >= 0 && ow < g->OW) yc[oh * g->OW + ow] += cr[ih * g->W + iw];                                       \
        }                                                                                                             \
      }                                                                                                               \
    }                                                                                                                 \
  }
CV_COL2IM(float, f32)
CV_COL2IM(double, f64)

/* Transposed convolution (the gradient of convolution): per image and
 * group, col = W_g^T @ x_g by GEMM, then col2im. x [N, C, H, W], weight
 * [C, O / groups, KH, KW]; y holds the bias on entry. */
static bool cv_run_transposed(ts_rt_ctx *c, const cv_geom *g, bool dbl, const void *x, const void *w, void *y) {
  size_t es = dbl ? sizeof(double) : sizeof(float);
  int64_t Cg = g->C / g->groups, Og = g->O / g->groups, hw = g->H * g->W, kk = g->KH * g->KW, M = Og * kk;
  if (g->N == 0 || M == 0 || hw == 0) return true;
  if (M > INT_MAX || hw > INT_MAX || Cg > INT_MAX) return ts_rt_fail(c, "convolution too large for BLAS");
  int64_t ncol = 0;
  if (!nnu_mul(M, hw, &ncol) || (uint64_t)ncol > SIZE_MAX / es) return ts_rt_fail(c, "convolution too large");
  void *col = ts_rt_malloc((size_t)ncol * es);
  if (!col) return ts_rt_oom(c);
  for (int64_t n = 0; n < g->N; n++)
    for (int64_t gi = 0; gi < g->groups; gi++) {
      const char *xg = (const char *)x + (size_t)((n * g->C + gi * Cg) * hw) * es;
      const char *wg = (const char *)w + (size_t)(gi * Cg * M) * es;
      char *yg = (char *)y + (size_t)((n * g->O + gi * Og) * g->OH * g->OW) * es;
      if (Cg == 0) continue;
      if (dbl) {
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (blasint)M, (blasint)hw, (blasint)Cg, 1.0,
                    (const double *)wg, (blasint)M, (const double *)xg, (blasint)hw, 0.0, col, (blasint)hw);
        cv_col2im_f64(g, Og, col, (double *)yg);
      } else {
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (blasint)M, (blasint)hw, (blasint)Cg, 1.0f,
                    (const float *)wg, (blasint)M, (const float *)xg, (blasint)hw, 0.0f, col, (blasint)hw);
        cv_col2im_f32(g, Og, col, (float *)yg);
      }
    }
  ts_rt_free(col);
  return true;
}

/* Checks and runs a transposed convolution (x, w batched, nsp + 2 dims). */
static ts_rt_tensor *cv_conv_transposed(ts_rt_ctx *c, const ts_rt_tensor *x, const ts_rt_tensor *w,
                                        const ts_rt_tensor *bias, const cv_args *a) {
  char ws[256], xs[256];
  nnu_shape_str(ws, sizeof ws, w->ndim, w->sizes);
  nnu_shape_str(xs, sizeof xs, x->ndim, x->sizes);
  int32_t nsp = a->nsp;
  if (a->groups <= 0) return ts_rt_fail(c, "non-positive groups is not supported"), NULL;
  for (int32_t i = 0; i < nsp; i++) {
    if (a->plo[i] < 0) return ts_rt_fail(c, "negative padding is not supported"), NULL;
    if (a->outpad[i] < 0) return ts_rt_fail(c, "negative output_padding is not supported"), NULL;
    if (a->stride[i] <= 0) return ts_rt_fail(c, "non-positive stride is not supported"), NULL;
    if (a->dil[i] <= 0) return ts_rt_fail(c, "dilation should be greater than zero"), NULL;
    if (a->outpad[i] >= a->stride[i] && a->outpad[i] >= a->dil[i])
      return ts_rt_fail(c,
                        "output padding must be smaller than either stride or dilation, but got output_padding=%lld, "
                        "stride=%lld and dilation=%lld",
                        (long long)a->outpad[i], (long long)a->stride[i], (long long)a->dil[i]),
             NULL;
  }
  if (x->ndim != w->ndim)
    return ts_rt_fail(c, "Expected %d-dimensional input for %d-dimensional weight %s, but got %d-dimensional input of "
                         "size %s instead",
                      (int)w->ndim, (int)w->ndim, ws, (int)x->ndim, xs),
           NULL;
  if (x->sizes[1] != w->sizes[0])
    return ts_rt_fail(c, "Given transposed=1, weight of size %s, expected input%s to have %lld channels, but got %lld "
                         "channels instead",
                      ws, xs, (long long)w->sizes[0], (long long)x->sizes[1]),
           NULL;
  if (w->sizes[0] % a->groups)
    return ts_rt_fail(c, "Given groups=%lld, expected weight to be divisible by %lld at dimension 0, but got weight of "
                         "size [%s] instead",
                      (long long)a->groups, (long long)a->groups, ws),
           NULL;
  int64_t O = w->sizes[1] * a->groups;
  if (bias && (bias->ndim != 1 || bias->sizes[0] != O)) {
    char bs[256];
    nnu_shape_str(bs, sizeof bs, bias->ndim, bias->sizes);
    return ts_rt_fail(c, "Given transposed=1, weight of size %s, expected bias to be 1-dimensional with %lld elements, "
                         "but got bias of size %s instead",
                      ws, (long long)O, bs),
           NULL;
  }
  int64_t out[2];
  for (int32_t i = 0; i < nsp; i++) {
    out[i] = (x->sizes[2 + i] - 1) * a->stride[i] - 2 * a->plo[i] + a->dil[i] * (w->sizes[2 + i] - 1) +
             a->outpad[i] + 1;
    if (out[i] <= 0) return ts_rt_fail(c, "Output size is too small"), NULL;
  }
  ts_dtype dt = (ts_dtype)x->dtype;
  if (w->dtype != dt)
    return ts_rt_fail(c, "expected scalar type %s but found %s", ts_rt_dtype_name(dt), ts_rt_dtype_name((ts_dtype)w->dtype)),
           NULL;
  if (bias && bias->dtype != dt)
    return ts_rt_fail(c, "Input type (%s) and bias type (%s) should be the same", nnu_ctype_name(dt),
                      nnu_ctype_name((ts_dtype)bias->dtype)),
           NULL;
  if (dt == TS_DT_FLOAT16 || dt == TS_DT_BOOL || !ts_rt_dtype_supported(dt))
    return nnu_not_impl(c, "slow_conv_transpose2d_out_cpu", dt), NULL;
  cv_geom g = {x->sizes[0], x->sizes[1], nsp == 2 ? x->sizes[2] : 1, x->sizes[1 + nsp], O,
               nsp == 2 ? w->sizes[2] : 1, w->sizes[1 + nsp], nsp == 2 ? out[0] : 1, out[nsp - 1],
               nsp == 2 ? a->stride[0] : 1, a->stride[nsp - 1], nsp == 2 ? a->plo[0] : 0, a->plo[nsp - 1],
               nsp == 2 ? a->dil[0] : 1, a->dil[nsp - 1], a->groups};
  int64_t osz[4] = {g.N, g.O, nsp == 2 ? g.OH : g.OW, g.OW};
  ts_dtype wdt = nnu_work_dtype(dt);
  ts_rt_tensor *xc = nnu_contig_as(c, x, wdt);
  ts_rt_tensor *wc = xc ? nnu_contig_as(c, w, wdt) : NULL;
  ts_rt_tensor *y = wc ? ts_rt_tensor_new(c, wdt, nsp + 2, osz, false) : NULL;
  bool ok = y != NULL && cv_fill_bias(c, y, bias, &g) &&
            cv_run_transposed(c, &g, wdt == TS_DT_FLOAT64, ts_rt_tensor_data(xc), ts_rt_tensor_data(wc),
                              ts_rt_tensor_data(y));
  if (xc) ts_rt_tensor_release(xc);
  if (wc) ts_rt_tensor_release(wc);
  if (!ok) {
    if (y) ts_rt_tensor_release(y);
    return NULL;
  }
  return nnu_cast_owned(c, y, dt);
}

/* Reads an int[] argument of a convolution with nsp entries ("expected
 * stride to be a single integer value or a list of 2 values ..."). */
static bool cv_list_arg(ts_rt_ctx *c, ts_rt_call *call, uint32_t i, int32_t nsp, const char *name, int64_t *out) {
  int64_t v[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  if (!ts_rt_arg_ints(c, call, i, v, TS_RT_MAX_DIMS, &n, (uint32_t)nsp)) return false;
  if (n == 1) {
    for (int32_t k = 0; k < nsp; k++) out[k] = v[0];
    return true;
  }
  if ((int32_t)n != nsp) {
    char s[256];
    nnu_shape_str(s, sizeof s, (int32_t)n, v);
    return ts_rt_fail(c,
                      "expected %s to be a single integer value or a list of %d values to match the convolution "
                      "dimensions, but got %s=%s",
                      name, (int)nsp, name, s);
  }
  memcpy(out, v, (size_t)nsp * sizeof(int64_t));
  return true;
}

/* Runs a convolution of x, w (nsp from w's rank), making an unbatched
 * input batched when `unbatched_ok` (conv1d / conv2d) and returning it
 * unbatched again. */
static ts_rt_tensor *cv_conv_any(ts_rt_ctx *c, ts_rt_tensor *x, ts_rt_tensor *w, ts_rt_tensor *b, cv_args *a,
                                 bool unbatched_ok) {
  if (unbatched_ok && x->ndim == a->nsp + 1 && w->ndim == a->nsp + 2) {
    int64_t sz[TS_RT_MAX_DIMS], st[TS_RT_MAX_DIMS];
    sz[0] = 1, st[0] = 0;
    for (int32_t i = 0; i < x->ndim; i++) sz[i + 1] = x->sizes[i], st[i + 1] = x->strides[i];
    ts_rt_tensor *xb = ts_rt_tensor_view(c, x, x->offset, x->ndim + 1, sz, st);
    if (!xb) return NULL;
    ts_rt_tensor *y = cv_conv(c, xb, w, b, a);
    ts_rt_tensor_release(xb);
    if (!y) return NULL;
    ts_rt_tensor *r = ts_rt_tensor_view(c, y, y->offset, y->ndim - 1, y->sizes + 1, y->strides + 1);
    ts_rt_tensor_release(y);
    return r;
  }
  return cv_conv(c, x, w, b, a);
}

/* The common part of convolution / _convolution: arguments 0..8. */
static bool cv_k_convolution_common(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x = NULL, *w = NULL, *b = NULL;
  bool transposed = false;
  int64_t groups = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_tensor(c, call, 1, &w) || !ts_rt_arg_opt_tensor(c, call, 2, &b) ||
      !ts_rt_arg_bool(c, call, 6, &transposed) || !ts_rt_arg_int(c, call, 8, &groups))
    return false;
  if (w->ndim != 3 && w->ndim != 4) {
    if (w->ndim == 5) return ts_rt_fail(c, "3-d convolution is not supported yet");
    return ts_rt_fail(c, "weight should have at least three dimensions");
  }
  cv_args a = {w->ndim - 2, {1, 1}, {0, 0}, {0, 0}, {1, 1}, groups, {0, 0}};
  if (!cv_list_arg(c, call, 3, a.nsp, "stride", a.stride) || !cv_list_arg(c, call, 4, a.nsp, "padding", a.plo) ||
      !cv_list_arg(c, call, 5, a.nsp, "dilation", a.dil))
    return false;
  memcpy(a.phi, a.plo, sizeof a.phi);
  if (transposed) {
    if (!cv_list_arg(c, call, 7, a.nsp, "output_padding", a.outpad)) return false;
    return nnu_ret(call, cv_conv_transposed(c, x, w, b, &a));
  }
  return nnu_ret(call, cv_conv(c, x, w, b, &a));
}

bool ts_rt_k_convolution(ts_rt_ctx *c, ts_rt_call *call) { return cv_k_convolution_common(c, call); }
bool ts_rt_k__convolution(ts_rt_ctx *c, ts_rt_call *call) { return cv_k_convolution_common(c, call); }
bool ts_rt_k__convolution_deprecated(ts_rt_ctx *c, ts_rt_call *call) { return cv_k_convolution_common(c, call); }

/* conv1d / conv2d (nsp spatial dims), padding as int[] or as a string. */
static bool cv_k_convnd(ts_rt_ctx *c, ts_rt_call *call, int32_t nsp, bool str_padding) {
  ts_rt_tensor *x = NULL, *w = NULL, *b = NULL;
  int64_t groups = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_tensor(c, call, 1, &w) || !ts_rt_arg_opt_tensor(c, call, 2, &b) ||
      !ts_rt_arg_int(c, call, 6, &groups))
    return false;
  cv_args a = {nsp, {1, 1}, {0, 0}, {0, 0}, {1, 1}, groups, {0, 0}};
  if (!cv_list_arg(c, call, 3, nsp, "stride", a.stride) || !cv_list_arg(c, call, 5, nsp, "dilation", a.dil))
    return false;
  if (!str_padding) {
    if (!cv_list_arg(c, call, 4, nsp, "padding", a.plo)) return false;
    memcpy(a.phi, a.plo, sizeof a.phi);
  } else {
    const ts_rt_str *p = NULL;
    if (!ts_rt_arg_str(c, call, 4, &p)) return false;
    if (strcmp(p->data, "same") == 0) {
      for (int32_t i = 0; i < nsp; i++)
        if (a.stride[i] != 1) return ts_rt_fail(c, "padding='same' is not supported for strided convolutions");
      if (w->ndim != nsp + 2) return ts_rt_fail(c, "weight should have %d dimensions", (int)(nsp + 2));
      for (int32_t i = 0; i < nsp; i++) {
        int64_t total = a.dil[i] * (w->sizes[2 + i] - 1);
        a.plo[i] = total / 2;
        a.phi[i] = total - total / 2;
      }
    } else if (strcmp(p->data, "valid") != 0) {
      return ts_rt_fail(c, "Invalid padding string: '%s'", p->data);
    }
  }
  if (w->ndim != nsp + 2) {
    char ws[256];
    nnu_shape_str(ws, sizeof ws, w->ndim, w->sizes);
    return ts_rt_fail(c, "Expected %d-dimensional input for %d-dimensional weight %s, but got %d-dimensional input "
                         "instead",
                      (int)w->ndim, (int)w->ndim, ws, (int)x->ndim);
  }
  return nnu_ret(call, cv_conv_any(c, x, w, b, &a, true));
}

bool ts_rt_k_conv1d(ts_rt_ctx *c, ts_rt_call *call) { return cv_k_convnd(c, call, 1, false); }
bool ts_rt_k_conv2d(ts_rt_ctx *c, ts_rt_call *call) { return cv_k_convnd(c, call, 2, false); }
bool ts_rt_k_conv1d_padding(ts_rt_ctx *c, ts_rt_call *call) { return cv_k_convnd(c, call, 1, true); }
bool ts_rt_k_conv2d_padding(ts_rt_ctx *c, ts_rt_call *call) { return cv_k_convnd(c, call, 2, true); }
