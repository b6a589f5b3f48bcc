/* runtime/kernels/conv.c: convolution (aten::_convolution, convolution,
 * conv1d/2d/3d and their padding='same'/'valid' forms, conv_transpose1d/
 * 2d/3d): the argument checks, in ATen's order and words, then for 1-d and
 * 2-d im2col + GEMM per group, a direct loop for depthwise convolution, a
 * plain GEMM for 1x1 convolutions, and Winograd (winograd.c) for float32
 * 3x3 stride-1 ones with enough channels; 3-d and transposed convolutions
 * run in conv3d.c. 1-d runs as 2-d with height 1. The bias, and for
 * tsaot::conv2d_act a residual and a clamp, are applied to each output plane
 * right after it is computed (an epilogue), while it is still in cache.
 * float32 GEMMs sum K in slices (ts_rt_conv_sgemm), which keeps every path
 * within 2x PyTorch's own float32 error (tests/unit/test_rt_conv_error.c;
 * conv.h names the paths: ts_rt_conv_path). */
#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>

#include "conv.h"
#include "gemm_small.h"
#include "nn_util.h"
#include "winograd.h"

/* The hot loops are built for AVX-512, AVX2 and plain x86-64, chosen when
 * the library loads (the runtime is compiled for generic x86-64), and at O3
 * so that GCC vectorizes loops of unknown trip count. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#ifdef __SANITIZE_THREAD__ /* ThreadSanitizer: clones' ifunc resolvers would run before it is set up */
#define CV_HOT __attribute__((optimize("O3")))
#else
#define CV_HOT __attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))
#endif
#else
#define CV_HOT
#endif

typedef ts_rt_conv_geom cv_geom;

/* What follows the convolution's sums: y = clamp(y + bias[o] + res, lo, hi),
 * in that order (as conv, then add, then clamp round). bias: [O] and res:
 * y's shape, contiguous in the work dtype, NULL for none; lo / hi are -inf /
 * inf for an open side (NaN passes a clamp either way, as in ATen). */
typedef struct cv_epi {
  const void *bias;
  const void *res;
  double lo, hi;
} cv_epi;

/* Work shared with the parallel loops. */
typedef struct cv_job {
  const cv_geom *g;
  const void *x;   /* input, one image for im2col, all for depthwise */
  const void *w;
  void *col;       /* im2col rows */
  void *y;         /* output */
  int64_t c0;      /* first input channel of the group (im2col); first plane (epilogue) */
  const cv_epi *e;
} cv_job;

/* The epilogue on one output plane: y[0, n) of channel o, whose first
 * element is element `at` of the output (and of the residual). Comparisons,
 * not fmin/fmax, so that NaN passes as ATen's clamp lets it. */
#define CV_EPI(T, S)                                                                                                  \
  CV_HOT static void cv_epi_row_##S(T *restrict y, const T *restrict r, int64_t n, T b, T lo, T hi) {                 \
    if (r)                                                                                                            \
      for (int64_t i = 0; i < n; i++) {                                                                               \
        T v = (y[i] + b) + r[i];                                                                                      \
        v = v < lo ? lo : v;                                                                                          \
        y[i] = v > hi ? hi : v;                                                                                       \
      }                                                                                                               \
    else                                                                                                              \
      for (int64_t i = 0; i < n; i++) {                                                                               \
        T v = y[i] + b;                                                                                               \
        v = v < lo ? lo : v;                                                                                          \
        y[i] = v > hi ? hi : v;                                                                                       \
      }                                                                                                               \
  }                                                                                                                   \
  static void cv_epi_plane_##S(const cv_epi *e, T *y, int64_t at, int64_t o, int64_t n) {                             \
    T b = e->bias ? ((const T *)e->bias)[o] : (T)0;                                                                   \
    if (!e->bias && !e->res && e->lo == -INFINITY && e->hi == INFINITY) return;                                       \
    cv_epi_row_##S(y, e->res ? (const T *)e->res + at : NULL, n, b, (T)e->lo, (T)e->hi);                              \
  }
CV_EPI(float, f32)
CV_EPI(double, f64)

/* im2col, depthwise and epilogue loops for float and double. */
#define CV_DEFINE(T, S)                                                                                               \
  /* im2col rows [r0, r1) (r = (ci - c0) * KH * KW + kh * KW + kw) for output columns [j0, j0 + jn)         \
   * (j = oh * OW + ow) of one image's group starting at input channel c0, into col[r * jn + j - j0] */         \
  CV_HOT static void cv_im2col_cols_##S(const cv_geom *g, const T *x, int64_t c0, int64_t r0, int64_t r1,             \
                                        int64_t j0, int64_t jn, T *col) {                                             \
    int64_t hw = g->H * g->W;                                                                                         \
    /* stride 1 with OW == W: a row of col is the input plane shifted by one offset, with zeros where the window   \
     * leaves the plane: one copy, then the columns that wrapped around a row edge zeroed */                       \
    bool shift = g->sh == 1 && g->sw == 1 && g->OW == g->W;                                                           \
    for (int64_t r = r0; r < r1; r++) {                                                                               \
      int64_t kw = r % g->KW, kh = (r / g->KW) % g->KH, ci = c0 + r / (g->KW * g->KH);                                \
      const T *xp = x + ci * hw;                                                                                      \
      T *d = col + r * jn;                                                                                            \
      int64_t off = kw * g->dw - g->pw; /* iw = ow * sw + off */                                                      \
      if (shift) {                                                                                                    \
        int64_t dv = (kh * g->dh - g->ph) * g->W, src = dv + off; /* input index of column j: j + src */             \
        int64_t a = j0, e = j0 + jn;                                                                                  \
        if (a < -dv) a = -dv;                                                                                         \
        if (a < -src) a = -src;                                                                                       \
        if (e > hw - dv) e = hw - dv;                                                                                 \
        if (e > hw - src) e = hw - src;                                                                               \
        if (a > e) a = e;                                                                                             \
        if (a < j0) a = j0;                                                                                           \
        if (e < a) e = a;                                                                                             \
        for (int64_t j = j0; j < a; j++) d[j - j0] = 0;                                                               \
        if (e > a) memcpy(d + (a - j0), xp + a + src, (size_t)(e - a) * sizeof(T));                                   \
        for (int64_t j = e; j < j0 + jn; j++) d[j - j0] = 0;                                                          \
        /* columns ow with ow + off outside [0, W) */                                                                 \
        int64_t zlo = off < 0 ? 0 : g->W - off, zhi = off < 0 ? -off : g->W; /* [zlo, zhi) */                         \
        if (zlo < 0) zlo = 0;                                                                                         \
        if (zhi > g->W) zhi = g->W;                                                                                   \
        if (off != 0 && zlo < zhi)                                                                                    \
          for (int64_t rowj = j0 - j0 % g->W; rowj < j0 + jn; rowj += g->W)                                           \
            for (int64_t ow = zlo; ow < zhi; ow++)                                                                    \
              if (rowj + ow >= j0 && rowj + ow < j0 + jn) d[rowj + ow - j0] = 0;                                      \
        continue;                                                                                                     \
      }                                                                                                               \
      int64_t lo = off >= 0 ? 0 : (-off + g->sw - 1) / g->sw;                                                         \
      int64_t hi = g->W - 1 - off < 0 ? -1 : (g->W - 1 - off) / g->sw;                                                \
      if (hi > g->OW - 1) hi = g->OW - 1;                                                                             \
      for (int64_t j = j0; j < j0 + jn;) {                                                                            \
        int64_t oh = j / g->OW, ow0 = j % g->OW, ow1 = g->OW;                                                         \
        if (ow1 - ow0 > j0 + jn - j) ow1 = ow0 + (j0 + jn - j);                                                       \
        T *dr = d + (j - j0) - ow0; /* dr[ow] is column (oh, ow) */                                                   \
        int64_t ih = oh * g->sh - g->ph + kh * g->dh;                                                                 \
        if (ih < 0 || ih >= g->H) {                                                                                   \
          for (int64_t ow = ow0; ow < ow1; ow++) dr[ow] = 0;                                                          \
        } else {                                                                                                      \
          const T *row = xp + ih * g->W + off;                                                                        \
          int64_t a = ow0 > lo ? ow0 : lo, b = ow1 - 1 < hi ? ow1 - 1 : hi;                                           \
          for (int64_t ow = ow0; ow < ow1 && ow < a; ow++) dr[ow] = 0;                                                \
          if (g->sw == 1)                                                                                             \
            for (int64_t ow = a; ow <= b; ow++) dr[ow] = row[ow];                                                     \
          else if (g->sw == 2)                                                                                        \
            for (int64_t ow = a; ow <= b; ow++) dr[ow] = row[2 * ow];                                                 \
          else                                                                                                        \
            for (int64_t ow = a; ow <= b; ow++) dr[ow] = row[ow * g->sw];                                             \
          for (int64_t ow = (b + 1 > ow0 ? b + 1 : ow0); ow < ow1; ow++) dr[ow] = 0;                                  \
        }                                                                                                             \
        j += ow1 - ow0;                                                                                               \
      }                                                                                                               \
    }                                                                                                                 \
  }                                                                                                                   \
                                                                                                                      \
  /* im2col rows [b, e) of the whole image (j->c0: the group's first input channel) */                              \
  static void cv_im2col_##S(void *arg, int64_t b, int64_t e) {                                                        \
    const cv_job *j = arg;                                                                                            \
    cv_im2col_cols_##S(j->g, j->x, j->c0, b, e, 0, j->g->OH * j->g->OW, j->col);                                      \
  }                                                                                                                   \
                                                                                                                      \
  /* one output row of a 3x3 depthwise convolution with dilation 1: rows r[0..2] of the input (a row of zeros    \
   * where the window leaves the input), all nine taps summed per output in one pass; the stride is a constant    \
   * in the vectorized middle (the outputs whose window stays inside the row) */                                 \
  CV_HOT static void cv_dw3_row_##S(const T *const *r, const T *wk, T *yr, int64_t OW, int64_t W, int64_t sw,          \
                                    int64_t pw) {                                                                     \
    int64_t lo = pw <= 0 ? 0 : (pw + sw - 1) / sw; /* ow * sw - pw >= 0 */                                            \
    int64_t hi = W - 3 + pw < 0 ? -1 : (W - 3 + pw) / sw; /* ow * sw - pw + 2 <= W - 1 */                             \
    if (hi > OW - 1) hi = OW - 1;                                                                                     \
    if (lo > hi) lo = OW, hi = OW - 1;                                                                                \
    const T *a = r[0] - pw, *bb = r[1] - pw, *c = r[2] - pw;                                                          \
    if (sw == 1)                                                                                                      \
      for (int64_t ow = lo; ow <= hi; ow++)                                                                           \
        yr[ow] = wk[0] * a[ow] + wk[1] * a[ow + 1] + wk[2] * a[ow + 2] + wk[3] * bb[ow] + wk[4] * bb[ow + 1] +          \
                 wk[5] * bb[ow + 2] + wk[6] * c[ow] + wk[7] * c[ow + 1] + wk[8] * c[ow + 2];                          \
    else if (sw == 2)                                                                                                 \
      for (int64_t ow = lo; ow <= hi; ow++)                                                                           \
        yr[ow] = wk[0] * a[2 * ow] + wk[1] * a[2 * ow + 1] + wk[2] * a[2 * ow + 2] + wk[3] * bb[2 * ow] +               \
                 wk[4] * bb[2 * ow + 1] + wk[5] * bb[2 * ow + 2] + wk[6] * c[2 * ow] + wk[7] * c[2 * ow + 1] +          \
                 wk[8] * c[2 * ow + 2];                                                                               \
    else                                                                                                              \
      for (int64_t ow = lo; ow <= hi; ow++) {                                                                         \
        int64_t i = ow * sw;                                                                                          \
        yr[ow] = wk[0] * a[i] + wk[1] * a[i + 1] + wk[2] * a[i + 2] + wk[3] * bb[i] + wk[4] * bb[i + 1] +               \
                 wk[5] * bb[i + 2] + wk[6] * c[i] + wk[7] * c[i + 1] + wk[8] * c[i + 2];                              \
      }                                                                                                               \
    /* the edges, tap by tap */                                                                                       \
    for (int64_t ow = 0; ow < OW; ow++) {                                                                             \
      if (ow == lo) ow = hi + 1;                                                                                      \
      if (ow >= OW) break;                                                                                            \
      T acc = 0;                                                                                                      \
      for (int64_t kh = 0; kh < 3; kh++)                                                                              \
        for (int64_t kw = 0; kw < 3; kw++) {                                                                          \
          int64_t iw = ow * sw - pw + kw;                                                                             \
          if (iw >= 0 && iw < W) acc += wk[kh * 3 + kw] * r[kh][iw];                                                  \
        }                                                                                                             \
      yr[ow] = acc;                                                                                                   \
    }                                                                                                                 \
  }                                                                                                                   \
                                                                                                                      \
  /* a whole plane of a 3x3 stride-1 depthwise convolution with padding 1 (OH == H, OW == W), as one stream:      \
   * pad holds the plane with a zero row (and one more zero) before and after it, so that output j reads          \
   * pad[W + 1 + j + (kh - 1) * W + kw - 1] for every j; the first and last column, where that wraps around a     \
   * row, are then redone tap by tap */                                                                           \
  CV_HOT static void cv_dw3s1_plane_##S(const T *x, T *pad, const T *wk, T *y, int64_t H, int64_t W) {               \
    int64_t hw = H * W;                                                                                               \
    for (int64_t i = 0; i < W + 1; i++) pad[i] = 0, pad[W + 1 + hw + i] = 0;                                          \
    memcpy(pad + W + 1, x, (size_t)hw * sizeof(T));                                                                   \
    const T *a = pad, *bb = pad + W, *c = pad + 2 * W;                                                                \
    for (int64_t i = 0; i < hw; i++)                                                                                  \
      y[i] = wk[0] * a[i] + wk[1] * a[i + 1] + wk[2] * a[i + 2] + wk[3] * bb[i] + wk[4] * bb[i + 1] +                  \
             wk[5] * bb[i + 2] + wk[6] * c[i] + wk[7] * c[i + 1] + wk[8] * c[i + 2];                                  \
    for (int64_t oh = 0; oh < H; oh++)                                                                                \
      for (int64_t ow = 0; ow < W; ow += (W > 1 ? W - 1 : 1)) {                                                       \
        T acc = 0;                                                                                                    \
        for (int64_t kh = 0; kh < 3; kh++)                                                                            \
          for (int64_t kw = 0; kw < 3; kw++) {                                                                        \
            int64_t ih = oh + kh - 1, iw = ow + kw - 1;                                                               \
            if (ih >= 0 && ih < H && iw >= 0 && iw < W) acc += wk[kh * 3 + kw] * x[ih * W + iw];                      \
          }                                                                                                           \
        y[oh * W + ow] = acc;                                                                                         \
      }                                                                                                               \
  }                                                                                                                   \
                                                                                                                      \
  CV_HOT static void cv_depthwise_##S(void *arg, int64_t b, int64_t e) {                                              \
    const cv_job *j = arg;                                                                                            \
    const cv_geom *g = j->g;                                                                                          \
    int64_t mult = g->O / g->C, ohw = g->OH * g->OW;                                                                  \
    bool k3 = g->KH == 3 && g->KW == 3 && g->dh == 1 && g->dw == 1 && j->col;                                         \
    bool s1 = k3 && g->sh == 1 && g->sw == 1 && g->ph == 1 && g->pw == 1;                                             \
    T *pad = s1 ? ts_rt_malloc((size_t)((g->H + 2) * g->W + 2) * sizeof(T)) : NULL;                                   \
    for (int64_t p = b; p < e; p++) {                                                                                 \
      int64_t n = p / g->O, o = p % g->O, ci = o / mult;                                                              \
      const T *xp = (const T *)j->x + (n * g->C + ci) * g->H * g->W;                                                  \
      const T *wp = (const T *)j->w + o * g->KH * g->KW;                                                              \
      T *yp = (T *)j->y + p * ohw;                                                                                    \
      if (pad) {                                                                                                      \
        cv_dw3s1_plane_##S(xp, pad, wp, yp, g->H, g->W);                                                              \
        cv_epi_plane_##S(j->e, yp, p * ohw, o, ohw);                                                                  \
        continue;                                                                                                     \
      }                                                                                                               \
      if (k3) {                                                                                                       \
        /* j->col: a zeroed row of W + 2 elements stands for rows outside the input */                                \
        const T *zero = (const T *)j->col;                                                                            \
        for (int64_t oh = 0; oh < g->OH; oh++) {                                                                      \
          const T *r[3];                                                                                              \
          for (int64_t kh = 0; kh < 3; kh++) {                                                                        \
            int64_t ih = oh * g->sh - g->ph + kh;                                                                     \
            r[kh] = ih >= 0 && ih < g->H ? xp + ih * g->W : zero;                                                     \
          }                                                                                                           \
          T *yr = yp + oh * g->OW;                                                                                    \
          cv_dw3_row_##S(r, wp, yr, g->OW, g->W, g->sw, g->pw);                                                       \
          cv_epi_plane_##S(j->e, yr, p * ohw + oh * g->OW, o, g->OW);                                                 \
        }                                                                                                             \
        continue;                                                                                                     \
      }                                                                                                               \
      for (int64_t i = 0; i < ohw; i++) yp[i] = 0;                                                                    \
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
      cv_epi_plane_##S(j->e, yp, p * ohw, o, ohw);                                                                    \
    }                                                                                                                 \
    ts_rt_free(pad);                                                                                                  \
  }                                                                                                                   \
                                                                                                                      \
  /* the epilogue over planes [b, e) of N * O, counted from plane j->c0 */                                           \
  static void cv_epi_planes_##S(void *arg, int64_t b, int64_t e) {                                                    \
    const cv_job *j = arg;                                                                                            \
    int64_t ohw = j->g->OH * j->g->OW;                                                                                \
    for (int64_t p = j->c0 + b; p < j->c0 + e; p++)                                                                   \
      cv_epi_plane_##S(j->e, (T *)j->y + p * ohw, p * ohw, p % j->g->O, ohw);                                         \
  }

CV_DEFINE(float, f32)
CV_DEFINE(double, f64)

/* OpenBLAS's sgemm error grows with K as one long chain of additions per
 * output would (0.3.21's Haswell and SkylakeX kernels alike: rms 2.2e-7
 * relative at K = 512, 2.3e-7 to 2.7e-7 at 1152, for ReLU-like data). In
 * slices, each slice's sum starts from zero and is added to c (c += a_k
 * b_k): slices of 64 to 127 bring that to 1.2e-7 and 1.4e-7 for 0% to 8%
 * more time (32: no better, and slower; 128 to 255: 1.6e-7, and Winograd
 * F(4x4, 3x3) at 512 channels then went over 2x PyTorch's error). Without
 * them an inception_v3 1x3 layer (384 channels, K = 1152) was 2.1x
 * PyTorch's float32 error. */
void ts_rt_conv_sgemm(int64_t M, int64_t N, int64_t K, const float *a, int64_t lda, const float *b, int64_t ldb,
                      float *c, int64_t ldc) {
  if (K == 0) {
    for (int64_t i = 0; i < M; i++) memset(c + i * ldc, 0, (size_t)N * sizeof(float));
    return;
  }
  for (int64_t k0 = 0, kn; k0 < K; k0 += kn) {
    kn = K - k0 < 2 * TS_RT_CONV_KSLICE ? K - k0 : TS_RT_CONV_KSLICE;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)M, (blasint)N, (blasint)kn, 1.0f, a + k0,
                (blasint)lda, b + k0 * ldb, (blasint)ldb, k0 ? 1.0f : 0.0f, c, (blasint)ldc);
  }
}

/* y[M, N] = w[M, K] @ B[K, N] (B's rows ldb apart, y's ldc), in the work dtype. */
static void cv_gemm(bool dbl, int64_t M, int64_t N, int64_t K, const void *w, const void *col, int64_t ldb, void *y,
                    int64_t ldc) {
  if (dbl)
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)M, (blasint)N, (blasint)K, 1.0, w, (blasint)K, col,
                (blasint)ldb, 0.0, y, (blasint)ldc);
  else
    ts_rt_conv_sgemm(M, N, K, w, K, col, ldb, y, ldc);
}

/* One image's group as tiles: columns in blocks of nb (each block's
 * im2col, GEMM and epilogue in one task, so the block stays in cache), or
 * output channels in chunks of mb over all columns (the im2col done
 * before, in `col`). Tasks run on our threads, each GEMM on one thread. */
typedef struct cv_tiles {
  const cv_geom *g;
  const cv_epi *e;
  bool dbl, direct;
  const char *x;   /* this image */
  const char *w;   /* this group's weights [Og, K] */
  const char *col; /* chunks: the whole im2col [K, ohw] (or the input when direct) */
  char *y;         /* this image's group's first plane */
  int64_t c0, p0;  /* the group's first input channel; first output plane */
  int64_t Og, K, nb, mb;
  int64_t ntasks;
  atomic_llong next; /* the next task to take */
  atomic_bool failed; /* a block found no memory for its im2col */
} cv_tiles;

/* One thread's share: tasks taken one at a time until none are left, so
 * that a thread woken late or slowed by another process leaves the rest
 * to the others (ts_rt_parallel_for splits its range in fixed halves). */
static void cv_tiles_run(void *arg, int64_t b, int64_t e) {
  (void)b, (void)e;
  cv_tiles *t = arg;
  const cv_geom *g = t->g;
  size_t es = t->dbl ? sizeof(double) : sizeof(float);
  int64_t ohw = g->OH * g->OW;
  void *col = NULL;
  if (t->nb && !t->direct && !(col = ts_rt_malloc((size_t)(t->K * t->nb) * es))) {
    atomic_store(&t->failed, true);
    return;
  }
  for (;;) {
    int64_t i = (int64_t)atomic_fetch_add(&t->next, 1);
    if (i >= t->ntasks) break;
    int64_t m0 = 0, mn = t->Og, j0 = 0, jn = ohw;
    const char *bm = t->col;
    int64_t ldb = ohw;
    if (t->nb) {
      j0 = i * t->nb;
      jn = ohw - j0 < t->nb ? ohw - j0 : t->nb;
      if (t->direct) {
        bm = t->x + (size_t)(t->c0 * g->H * g->W + j0) * es;
      } else {
        if (t->dbl)
          cv_im2col_cols_f64(g, (const double *)t->x, t->c0, 0, t->K, j0, jn, col);
        else
          cv_im2col_cols_f32(g, (const float *)t->x, t->c0, 0, t->K, j0, jn, col);
        bm = col;
        ldb = jn;
      }
    } else {
      m0 = i * t->mb;
      mn = t->Og - m0 < t->mb ? t->Og - m0 : t->mb;
      bm = t->col;
    }
    char *yt = t->y + (size_t)(m0 * ohw + j0) * es;
    cv_gemm(t->dbl, mn, jn, t->K, t->w + (size_t)(m0 * t->K) * es, bm, ldb, yt, ohw);
    for (int64_t m = m0; m < m0 + mn; m++) {
      int64_t p = t->p0 + m;
      if (t->dbl)
        cv_epi_plane_f64(t->e, (double *)(t->y + (size_t)(m * ohw + j0) * es), p * ohw + j0, p % g->O, jn);
      else
        cv_epi_plane_f32(t->e, (float *)(t->y + (size_t)(m * ohw + j0) * es), p * ohw + j0, p % g->O, jn);
    }
  }
  ts_rt_free(col);
}

/* Runs the epilogue over planes [p0, p0 + n) of the output. */
static void cv_epi_run(ts_rt_ctx *c, const cv_geom *g, bool dbl, const cv_epi *e, void *y, int64_t p0, int64_t n) {
  if (!e->bias && !e->res && e->lo == -INFINITY && e->hi == INFINITY) return;
  cv_job j = {g, NULL, NULL, NULL, y, p0, e};
  int64_t ohw = g->OH * g->OW;
  ts_rt_parallel_for(c, n, 65536 / (ohw ? ohw : 1) + 1, dbl ? cv_epi_planes_f64 : cv_epi_planes_f32, &j);
}

/* How cv_run runs a convolution (cv_plan_make). */
typedef enum { CV_EMPTY, CV_DEPTHWISE, CV_GEMM } cv_kind;
typedef struct cv_plan {
  cv_kind kind;
  bool direct;      /* a 1x1 stride-1 unpadded convolution: the input is the GEMM's B */
  bool blocks;      /* column blocks of nb (nblk of them), else channel chunks of mb */
  int64_t nthreads; /* the threads the GEMM tiles run on */
  int64_t nb, nblk, mb;
} cv_plan;

/* The plan for a convolution of g in float32 or float64 (dbl) with c's
 * threads: what cv_run runs and ts_rt_conv_path reports. */
static cv_plan cv_plan_make(const cv_geom *g, bool dbl, int64_t nthreads) {
  cv_plan p = {.kind = CV_EMPTY, .nthreads = nthreads > 1 ? nthreads : 1};
  int64_t Cg = g->C / g->groups, Og = g->O / g->groups, ohw = g->OH * g->OW, K = Cg * g->KH * g->KW;
  if (g->N == 0 || g->O == 0 || ohw == 0) return p;
  if (g->groups > 1 && g->groups == g->C && Cg == 1) return p.kind = CV_DEPTHWISE, p;
  if (K == 0) return p;
  p.kind = CV_GEMM;
  p.direct = g->KH == 1 && g->KW == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0 && g->OH == g->H &&
             g->OW == g->W;
  /* below about 2M multiply-adds, waking workers and switching OpenBLAS's
   * thread count costs more than the split saves (small_cnn at 2 threads
   * ran 5x slower than at 1) */
  int64_t macs;
  if (!nnu_mul(Og * K, ohw, &macs) || !nnu_mul(macs, g->groups * g->N, &macs)) macs = INT64_MAX;
  if (macs < ((int64_t)1 << 21)) p.nthreads = 1;
  /* Column blocks of at most about 1 MiB of im2col, at least 8 per thread
   * (of at least 128 columns) for the balance, when there are at least two
   * and the weights are small enough that packing them again per block
   * costs little; else channel chunks, one per thread. */
  int64_t nbmax = 262144 / (dbl ? 2 : 1) / K;
  if (nbmax < 128) nbmax = 128;
  int64_t nblk = (ohw + nbmax - 1) / nbmax, want = p.nthreads > 1 ? 8 * p.nthreads : 1;
  if (want > ohw / 128) want = ohw / 128;
  if (nblk < want) nblk = want;
  p.nb = nblk > 0 ? ((ohw + nblk - 1) / nblk + 15) / 16 * 16 : ohw;
  p.nblk = (ohw + p.nb - 1) / p.nb;
  p.blocks = p.nblk >= 2 && Og * K <= 262144;
  p.mb = ((Og + p.nthreads - 1) / p.nthreads + 15) / 16 * 16;
  return p;
}

/* The convolution proper on contiguous work-dtype x and w into y
 * (uninitialised on entry), then the epilogue. */
static bool cv_run(ts_rt_ctx *c, const cv_geom *g, bool dbl, const void *x, const void *w, void *y, const cv_epi *e) {
  size_t es = dbl ? sizeof(double) : sizeof(float);
  int64_t Cg = g->C / g->groups, Og = g->O / g->groups, ohw = g->OH * g->OW, kk = g->KH * g->KW, K = Cg * kk;
  cv_plan p = cv_plan_make(g, dbl, c->nthreads);
  if (p.kind == CV_DEPTHWISE) {
    /* a zero row for the 3x3 path's rows outside the input (without it, the general loop runs) */
    void *zero = g->KH == 3 && g->KW == 3 ? ts_rt_calloc((size_t)g->W + 2, es) : NULL;
    cv_job j = {g, x, w, zero, y, 0, e};
    int64_t plane = ohw * kk;
    ts_rt_parallel_for(c, g->N * g->O, 32768 / (plane ? plane : 1) + 1, dbl ? cv_depthwise_f64 : cv_depthwise_f32,
                       &j);
    ts_rt_free(zero);
    return true;
  }
  if (p.kind == CV_EMPTY) {
    if (ohw && g->N && g->O) { /* K == 0: sums of nothing */
      memset(y, 0, (size_t)(g->N * g->O * ohw) * es);
      cv_epi_run(c, g, dbl, e, y, 0, g->N * g->O);
    }
    return true;
  }
  if (Og > INT_MAX || ohw > INT_MAX || K > INT_MAX) return ts_rt_fail(c, "convolution too large for BLAS");
  bool direct = p.direct, blocks = p.blocks;
  int64_t nthreads = p.nthreads, nb = p.nb, nblk = p.nblk, mb = p.mb;
  int64_t ncol = 0;
  void *col = NULL;
  if (!blocks && !direct) {
    if (!nnu_mul(K, ohw, &ncol) || (uint64_t)ncol > SIZE_MAX / es) return ts_rt_fail(c, "convolution too large");
    if (!(col = ts_rt_malloc((size_t)ncol * es))) return ts_rt_oom(c);
  }
  /* our threads run the tiles, so OpenBLAS runs each GEMM on the thread that calls it */
  if (nthreads > 1) openblas_set_num_threads(1);
  bool ok = true;
  for (int64_t n = 0; n < g->N && ok; n++) {
    const char *xn = (const char *)x + (size_t)(n * g->C * g->H * g->W) * es;
    for (int64_t gi = 0; gi < g->groups && ok; gi++) {
      cv_tiles t = {g, e, dbl, direct, xn, (const char *)w + (size_t)(gi * Og * K) * es, NULL,
                    (char *)y + (size_t)((n * g->O + gi * Og) * ohw) * es, gi * Cg, n * g->O + gi * Og, Og, K,
                    blocks ? nb : 0, mb, blocks ? nblk : (Og + mb - 1) / mb, 0, false};
      atomic_init(&t.next, 0);
      atomic_init(&t.failed, false);
      if (blocks) {
        ts_rt_parallel_for(c, nthreads < t.ntasks ? nthreads : t.ntasks, 1, cv_tiles_run, &t);
      } else {
        if (direct) {
          t.col = xn + (size_t)(gi * Cg * g->H * g->W) * es;
        } else {
          cv_job j = {g, xn, NULL, col, NULL, gi * Cg, e};
          ts_rt_parallel_for(c, K, 32768 / ohw + 1, dbl ? cv_im2col_f64 : cv_im2col_f32, &j);
          t.col = col;
        }
        ts_rt_parallel_for(c, nthreads < t.ntasks ? nthreads : t.ntasks, 1, cv_tiles_run, &t);
      }
      ok = !atomic_load(&t.failed);
    }
  }
  if (nthreads > 1) openblas_set_num_threads((int)nthreads);
  ts_rt_free(col);
  return ok || ts_rt_oom(c);
}

/* A convolution's arguments after parsing: nsp spatial dims (1 to 3). */
typedef struct cv_args {
  int32_t nsp;
  int64_t stride[3], plo[3], phi[3], dil[3];
  int64_t groups;
  int64_t outpad[3]; /* transposed only */
} cv_args;

/* The arguments of a convolution of nsp spatial dims before parsing:
 * stride and dilation 1, no padding. */
static cv_args cv_args_init(int32_t nsp, int64_t groups) {
  cv_args a = {nsp, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, groups, {0, 0, 0}};
  return a;
}

/* The 3-d geometry of x, w (batched, nsp + 2 dims each; the missing leading
 * spatial dims of size 1) with output sizes out[nsp], for conv3d.c. */
static ts_rt_conv3_geom cv_geom3(const ts_rt_tensor *x, const ts_rt_tensor *w, int64_t O, const int64_t *out,
                                 const cv_args *a) {
  int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, o[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0, 0, 0}, d[3] = {1, 1, 1};
  int32_t nsp = a->nsp;
  for (int32_t i = 0; i < nsp; i++) {
    int32_t j = 3 - nsp + i;
    in[j] = x->sizes[2 + i], k[j] = w->sizes[2 + i], o[j] = out[i];
    s[j] = a->stride[i], p[j] = a->plo[i], d[j] = a->dil[i];
  }
  ts_rt_conv3_geom g = {x->sizes[0], x->sizes[1], in[0], in[1], in[2], O, k[0], k[1], k[2], o[0], o[1], o[2],
                        s[0], s[1], s[2], p[0], p[1], p[2], d[0], d[1], d[2], a->groups};
  return g;
}

/* What tsaot::conv2d_act adds after the convolution: a residual (y's
 * shape and dtype; NULL: none) and a clamp to [lo, hi] (-inf / inf: open). */
typedef struct cv_post {
  const ts_rt_tensor *res;
  double lo, hi;
} cv_post;

/* The float32 epilogue as winograd.c calls it. */
static void cv_wino_epi(const void *e, float *y, int64_t at, int64_t o, int64_t n) {
  cv_epi_plane_f32(e, y, at, o, n);
}

/* The Winograd tile for g (ts_rt_wino_tile), 0 where Winograd does not
 * apply: only float32 3x3 stride-1 undilated ungrouped convolutions. */
static int cv_wino_tile(const cv_geom *g, bool dbl) {
  ts_rt_wino_geom wg = {g->N, g->C, g->H, g->W, g->O, g->ph, g->pw, g->OH, g->OW};
  if (dbl || g->KH != 3 || g->KW != 3 || g->sh != 1 || g->sw != 1 || g->dh != 1 || g->dw != 1 || g->groups != 1)
    return 0;
  return ts_rt_wino_tile(&wg);
}

const char *ts_rt_conv_path(const ts_rt_conv_geom *g, bool dbl, int nthreads) {
  int m = g->N && g->O && g->OH && g->OW ? cv_wino_tile(g, dbl) : 0;
  if (m) return m == 4 ? "winograd F(4x4,3x3)" : "winograd F(2x2,3x3)";
  cv_plan p = cv_plan_make(g, dbl, nthreads);
  if (p.kind == CV_EMPTY) return "empty";
  if (p.kind == CV_DEPTHWISE)
    return g->KH == 3 && g->KW == 3 && g->dh == 1 && g->dw == 1 ? "depthwise 3x3" : "depthwise";
  if (p.direct) return p.blocks ? "1x1 blocks" : "1x1 chunks";
  return p.blocks ? "im2col blocks" : "im2col chunks";
}

/* A 3x3 stride-1 float32 convolution of one group by Winograd (winograd.c)
 * when that pays off: with w's transformed weights kept with its storage
 * when w is a constant (input 1 of the call), else transformed for this
 * call. False when it does not apply (then cv_run runs); else *ok is
 * whether it ran. */
static bool cv_wino(ts_rt_ctx *c, const ts_rt_call *call, const cv_geom *g, ts_dtype wdt, const ts_rt_tensor *w,
                    const ts_rt_tensor *wc, const ts_rt_tensor *xc, ts_rt_tensor *y, const cv_epi *e, bool *ok) {
  int m = wdt == TS_DT_FLOAT32 ? cv_wino_tile(g, false) : 0;
  if (!m) return false;
  ts_rt_wino_geom wg = {g->N, g->C, g->H, g->W, g->O, g->ph, g->pw, g->OH, g->OW};
  size_t len = ts_rt_wino_weights_len(m, g->O, g->C);
  if (!len) return false;
  const float *u = call && w == wc ? ts_rt_wino_weights_input(call, 1, w, m) : NULL;
  float *own = NULL;
  if (!u) {
    if (!(own = ts_rt_malloc(len * sizeof(float)))) return *ok = ts_rt_oom(c), true;
    ts_rt_wino_weights(m, ts_rt_tensor_data(wc), g->O, g->C, own);
    u = own;
  }
  *ok = ts_rt_wino_conv(c, &wg, m, ts_rt_tensor_data(xc), u, ts_rt_tensor_data(y), cv_wino_epi, e);
  ts_rt_free(own);
  return true;
}

/* "[1, 3]" as ATen prints the sizes of a 1-d convolution's input or
 * weight once it has made them 2-d (a height of 1 inserted at dim 2). */
static void cv_shape_str_2d(char *buf, size_t cap, const ts_rt_tensor *t, int32_t nsp) {
  int64_t sz[TS_RT_MAX_DIMS + 1];
  int32_t nd = t->ndim;
  memcpy(sz, t->sizes, (size_t)nd * sizeof(int64_t));
  if (nsp == 1 && nd >= 2) {
    memmove(sz + 3, sz + 2, (size_t)(nd - 2) * sizeof(int64_t));
    sz[2] = 1, nd++;
  }
  nnu_shape_str(buf, cap, nd, sz);
}

/* A checked 3-d convolution with output sizes out[3], by conv3d.c. */
static ts_rt_tensor *cv_conv3d(ts_rt_ctx *c, const ts_rt_tensor *x, const ts_rt_tensor *w, const ts_rt_tensor *bias,
                               const cv_args *a, const int64_t *out) {
  ts_dtype dt = (ts_dtype)x->dtype, wdt = nnu_work_dtype(dt);
  ts_rt_conv3_geom g = cv_geom3(x, w, w->sizes[0], out, a);
  int64_t osz[5] = {g.N, g.O, g.OD, g.OH, g.OW};
  ts_rt_tensor *xc = nnu_contig_as(c, x, wdt);
  ts_rt_tensor *wc = xc ? nnu_contig_as(c, w, wdt) : NULL;
  ts_rt_tensor *y = wc ? ts_rt_tensor_new(c, wdt, 5, osz, false) : NULL;
  ts_rt_tensor *bc = y && bias ? nnu_contig_as(c, bias, wdt) : NULL;
  bool ok = y && (!bias || bc) &&
            ts_rt_conv3d_run(c, &g, wdt == TS_DT_FLOAT64, ts_rt_tensor_data(xc), ts_rt_tensor_data(wc),
                             bc ? ts_rt_tensor_data(bc) : NULL, ts_rt_tensor_data(y));
  if (xc) ts_rt_tensor_release(xc);
  if (wc) ts_rt_tensor_release(wc);
  if (bc) ts_rt_tensor_release(bc);
  if (!ok) {
    if (y) ts_rt_tensor_release(y);
    return NULL;
  }
  return nnu_cast_owned(c, y, dt);
}

/* Checks as ATen's check_shape_forward, then runs. x and w are batched
 * (x->ndim == w->ndim == nsp + 2), w the call's input 1 (call: NULL when
 * unknown). post: NULL for a plain convolution. */
static ts_rt_tensor *cv_conv(ts_rt_ctx *c, const ts_rt_call *call, const ts_rt_tensor *x, const ts_rt_tensor *w,
                             const ts_rt_tensor *bias, const cv_args *a, const cv_post *post) {
  char ws[256], xs[256];
  nnu_shape_str(ws, sizeof ws, w->ndim, w->sizes);
  nnu_shape_str(xs, sizeof xs, x->ndim, x->sizes);
  int32_t nsp = a->nsp;
  for (int32_t i = 0; i < nsp; i++)
    if (a->plo[i] < 0 || a->phi[i] < 0) return ts_rt_fail(c, "negative padding is not supported"), NULL;
  for (int32_t i = 0; i < nsp; i++)
    if (a->stride[i] <= 0) return ts_rt_fail(c, "non-positive stride is not supported"), NULL;
  for (int32_t i = 0; i < nsp; i++)
    if (a->dil[i] < 0) return ts_rt_fail(c, "dilation should be greater than zero"), NULL;
  if (a->groups <= 0) return ts_rt_fail(c, "non-positive groups is not supported"), NULL;
  if (x->ndim != w->ndim)
    return ts_rt_fail(c, "Expected %d-dimensional input for %d-dimensional weight %s, but got %d-dimensional input of "
                         "size %s instead",
                      (int)w->ndim, (int)w->ndim, ws, (int)x->ndim, xs),
           NULL;
  if (w->sizes[0] < a->groups)
    return ts_rt_fail(c, "Given groups=%lld, expected weight to be at least %lld at dimension 0, but got weight of size "
                         "%s instead",
                      (long long)a->groups, (long long)a->groups, ws),
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
  int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  bool small = false;
  for (int32_t i = 0; i < nsp; i++) {
    in[i] = x->sizes[2 + i] + a->plo[i] + a->phi[i];
    k[i] = a->dil[i] * (w->sizes[2 + i] - 1) + 1;
    if (in[i] < k[i]) small = true;
    out[i] = (in[i] - k[i]) / a->stride[i] + 1;
  }
  if (small) {
    char is[96], ks[96];
    size_t ni = 0, nk = 0;
    for (int32_t i = 0; i < nsp; i++) {
      ni += (size_t)snprintf(is + ni, sizeof is - ni, "%s%lld", i ? " x " : "", (long long)in[i]);
      nk += (size_t)snprintf(ks + nk, sizeof ks - nk, "%s%lld", i ? " x " : "", (long long)k[i]);
    }
    ts_rt_fail(c, "Calculated padded input size per channel: (%s). Kernel size: (%s). Kernel size can't be greater "
                  "than actual input size",
               is, ks);
    return NULL;
  }
  ts_dtype dt = (ts_dtype)x->dtype;
  if (ts_rt_tensor_numel(x) == 0 && x->sizes[0] != 0 && x->sizes[1] != 0) {
    cv_shape_str_2d(xs, sizeof xs, x, nsp);
    return ts_rt_fail(c, "Only zero batch or zero channel inputs are supported, but got input shape: %s", xs), NULL;
  }
  bool dil_ok = true;
  for (int32_t i = 0; i < nsp; i++) dil_ok = dil_ok && a->dil[i] > 0;
  if (!dil_ok) {
    int64_t d2[3] = {1, a->dil[0], 0};
    nnu_shape_str(xs, sizeof xs, nsp == 1 ? 2 : nsp, nsp == 1 ? d2 : a->dil);
    return ts_rt_fail(c, "dilation should be greater than zero, but got %s", xs), NULL;
  }
  if (w->dtype != dt)
    return ts_rt_fail(c, "expected scalar type %s but found %s", ts_rt_dtype_name(dt), ts_rt_dtype_name((ts_dtype)w->dtype)),
           NULL;
  /* the 3-d kernels convert the bias; the 2-d ones refuse another dtype */
  if (bias && bias->dtype != dt && nsp != 3)
    return ts_rt_fail(c, "Input type (%s) and bias type (%s) should be the same", nnu_ctype_name(dt),
                      nnu_ctype_name((ts_dtype)bias->dtype)),
           NULL;
  if (dt == TS_DT_FLOAT16 || dt == TS_DT_BOOL || !ts_rt_dtype_supported(dt))
    return nnu_not_impl(c, nsp == 3 ? "slow_conv3d_cpu" : "slow_conv2d_cpu", dt), NULL;
  if (x->sizes[1] == 0) {
    /* ATen's empty convolution of an input without channels has none either (whatever the weight says) */
    int64_t osz[5] = {x->sizes[0], 0};
    for (int32_t i = 0; i < nsp; i++) osz[2 + i] = out[i];
    return ts_rt_tensor_new(c, dt, nsp + 2, osz, true);
  }
  if (nsp == 3) return cv_conv3d(c, x, w, bias, a, out);
  cv_geom g = {x->sizes[0], x->sizes[1], nsp == 2 ? x->sizes[2] : 1, x->sizes[1 + nsp], w->sizes[0],
               nsp == 2 ? w->sizes[2] : 1, w->sizes[1 + nsp], nsp == 2 ? out[0] : 1, out[nsp - 1],
               nsp == 2 ? a->stride[0] : 1, a->stride[nsp - 1], nsp == 2 ? a->plo[0] : 0, a->plo[nsp - 1],
               nsp == 2 ? a->dil[0] : 1, a->dil[nsp - 1], a->groups};
  int64_t osz[4] = {g.N, g.O, nsp == 2 ? g.OH : g.OW, g.OW};
  if (post && post->res) {
    const ts_rt_tensor *r = post->res;
    bool same = r->ndim == nsp + 2;
    for (int32_t i = 0; same && i < nsp + 2; i++) same = r->sizes[i] == osz[i];
    if (!same || r->dtype != dt) {
      char rs[256], os[256];
      nnu_shape_str(rs, sizeof rs, r->ndim, r->sizes);
      nnu_shape_str(os, sizeof os, nsp + 2, osz);
      return ts_rt_fail(c, "tsaot::conv2d_act: residual %s %s does not match the output %s %s",
                        ts_rt_dtype_name((ts_dtype)r->dtype), rs, ts_rt_dtype_name(dt), os),
             NULL;
    }
  }
  ts_dtype wdt = nnu_work_dtype(dt);
  ts_rt_tensor *xc = nnu_contig_as(c, x, wdt);
  ts_rt_tensor *wc = xc ? nnu_contig_as(c, w, wdt) : NULL;
  /* y first: compiled code's memory plan hands its buffer to the next new tensor of its size */
  ts_rt_tensor *y = wc ? ts_rt_tensor_new(c, wdt, nsp + 2, osz, false) : NULL;
  ts_rt_tensor *bc = y && bias ? nnu_contig_as(c, bias, wdt) : NULL;
  ts_rt_tensor *rc = y && post && post->res ? nnu_contig_as(c, post->res, wdt) : NULL;
  cv_epi e = {bc ? ts_rt_tensor_data(bc) : NULL, rc ? ts_rt_tensor_data(rc) : NULL, post ? post->lo : -INFINITY,
              post ? post->hi : INFINITY};
  bool ok = y != NULL && (!bias || bc) && (!post || !post->res || rc);
  if (ok && !cv_wino(c, call, &g, wdt, w, wc, xc, y, &e, &ok))
    ok = cv_run(c, &g, wdt == TS_DT_FLOAT64, ts_rt_tensor_data(xc), ts_rt_tensor_data(wc), ts_rt_tensor_data(y), &e);
  if (xc) ts_rt_tensor_release(xc);
  if (wc) ts_rt_tensor_release(wc);
  if (bc) ts_rt_tensor_release(bc);
  if (rc) ts_rt_tensor_release(rc);
  if (!ok) {
    if (y) ts_rt_tensor_release(y);
    return NULL;
  }
  return nnu_cast_owned(c, y, dt);
}

/* "name_depth: 1 name_height: 2 name_width: 3" (sep between the items) of
 * ATen's slow_conv_transpose messages; 1-d as 2-d with a height of `one`. */
static void cv_dims_str(char *buf, size_t cap, const char *name, const int64_t *v, int32_t nsp, int64_t one,
                        const char *sep) {
  static const char *const dims[3] = {"depth", "height", "width"};
  int64_t w[3] = {one, one, one};
  int32_t n = nsp == 1 ? 2 : nsp;
  for (int32_t i = 0; i < nsp; i++) w[n - nsp + i] = v[i];
  size_t k = 0;
  for (int32_t i = 0; i < n && k < cap; i++)
    k += (size_t)snprintf(buf + k, cap - k, "%s%s_%s: %lld", i ? sep : "", name, dims[3 - n + i], (long long)w[i]);
}

/* Checks and runs a transposed convolution (x, w batched, nsp + 2 dims),
 * with ATen's checks in its order: _convolution's check_shape_forward,
 * then slow_conv_transpose{2,3}d's shape check. */
static ts_rt_tensor *cv_conv_transposed(ts_rt_ctx *c, const ts_rt_tensor *x, const ts_rt_tensor *w,
                                        const ts_rt_tensor *bias, const cv_args *a) {
  char ws[256], xs[256], m1[512], m2[256], m3[256];
  nnu_shape_str(ws, sizeof ws, w->ndim, w->sizes);
  nnu_shape_str(xs, sizeof xs, x->ndim, x->sizes);
  int32_t nsp = a->nsp;
  for (int32_t i = 0; i < nsp; i++)
    if (a->plo[i] < 0) return ts_rt_fail(c, "negative padding is not supported"), NULL;
  for (int32_t i = 0; i < nsp; i++)
    if (a->outpad[i] < 0) return ts_rt_fail(c, "negative output_padding is not supported"), NULL;
  for (int32_t i = 0; i < nsp; i++)
    if (a->stride[i] <= 0) return ts_rt_fail(c, "non-positive stride is not supported"), NULL;
  if (a->groups <= 0) return ts_rt_fail(c, "non-positive groups is not supported"), NULL;
  if (x->ndim != w->ndim)
    return ts_rt_fail(c, "Expected %d-dimensional input for %d-dimensional weight %s, but got %d-dimensional input of "
                         "size %s instead",
                      (int)w->ndim, (int)w->ndim, ws, (int)x->ndim, xs),
           NULL;
  if (w->sizes[0] < a->groups)
    return ts_rt_fail(c, "Given groups=%lld, expected weight to be at least %lld at dimension 0, but got weight of size "
                         "%s instead",
                      (long long)a->groups, (long long)a->groups, ws),
           NULL;
  if (w->sizes[0] % a->groups)
    return ts_rt_fail(c, "Given groups=%lld, expected weight to be divisible by %lld at dimension 0, but got weight of "
                         "size [%s] instead",
                      (long long)a->groups, (long long)a->groups, ws),
           NULL;
  if (x->sizes[1] != w->sizes[0])
    return ts_rt_fail(c, "Given transposed=1, weight of size %s, expected input%s to have %lld channels, but got %lld "
                         "channels instead",
                      ws, xs, (long long)w->sizes[0], (long long)x->sizes[1]),
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
  ts_dtype dt = (ts_dtype)x->dtype;
  if (ts_rt_tensor_numel(x) == 0 && x->sizes[0] != 0 && x->sizes[1] != 0) {
    cv_shape_str_2d(xs, sizeof xs, x, nsp);
    return ts_rt_fail(c, "Only zero batch or zero channel inputs are supported, but got input shape: %s", xs), NULL;
  }
  if (w->dtype != dt)
    return ts_rt_fail(c, "expected scalar type %s but found %s", ts_rt_dtype_name(dt), ts_rt_dtype_name((ts_dtype)w->dtype)),
           NULL;
  if (bias && bias->dtype != dt)
    return ts_rt_fail(c, "expected scalar type %s but found %s", ts_rt_dtype_name(dt),
                      ts_rt_dtype_name((ts_dtype)bias->dtype)),
           NULL;
  /* ATen's slow_conv_transpose kernels take the floating types and int64 */
  if (dt != TS_DT_FLOAT32 && dt != TS_DT_FLOAT64 && dt != TS_DT_BFLOAT16 && dt != TS_DT_INT64)
    return nnu_not_impl(c, nsp == 3 ? "slow_conv_transpose3d_out_cpu" : "slow_conv_transpose2d_out_cpu", dt), NULL;
  if (x->sizes[0] == 0 || x->sizes[1] == 0) {
    /* ATen's empty convolution: zeros of the computed size, plus the bias */
  } else if (ts_rt_tensor_numel(w) == 0) {
    cv_shape_str_2d(ws, sizeof ws, w, nsp);
    if (nsp == 3)
      return ts_rt_fail(c, "non-empty 5D (n_output_plane x n_input_plane x kernel_depth x kernel_height x "
                           "kernel_width) tensor expected for weight, but got: %s",
                        ws),
             NULL;
    return ts_rt_fail(c, "non-empty 2D or 4D weight tensor expected, but got: %s", ws), NULL;
  }
  bool dil_ok = true, opad_ok = true;
  for (int32_t i = 0; i < nsp; i++) {
    dil_ok = dil_ok && a->dil[i] > 0;
    opad_ok = opad_ok && (a->outpad[i] < a->stride[i] || a->outpad[i] < a->dil[i]);
  }
  if (!dil_ok) {
    cv_dims_str(m1, sizeof m1, "dilation", a->dil, nsp, 1, ", ");
    return ts_rt_fail(c, "dilation should be greater than zero, but got %s", m1), NULL;
  }
  if (!opad_ok) {
    cv_dims_str(m1, sizeof m1, "output_padding", a->outpad, nsp, 0, " ");
    cv_dims_str(m2, sizeof m2, "stride", a->stride, nsp, 1, " ");
    cv_dims_str(m3, sizeof m3, "dilation", a->dil, nsp, 1, " ");
    return ts_rt_fail(c, "output padding must be smaller than either stride or dilation, but got %s %s %s", m1, m2,
                      m3),
           NULL;
  }
  int64_t out[3] = {1, 1, 1};
  bool small = false;
  for (int32_t i = 0; i < nsp; i++) {
    out[i] = (x->sizes[2 + i] - 1) * a->stride[i] - 2 * a->plo[i] + a->dil[i] * (w->sizes[2 + i] - 1) +
             a->outpad[i] + 1;
    small = small || out[i] < 1;
  }
  if (small) {
    size_t ni = 0, no = 0;
    if (nsp == 1) ni += (size_t)snprintf(m1, sizeof m1, "1 x "), no += (size_t)snprintf(m2, sizeof m2, "1 x ");
    for (int32_t i = 0; i < nsp; i++) {
      ni += (size_t)snprintf(m1 + ni, sizeof m1 - ni, "%s%lld", i ? " x " : "", (long long)x->sizes[2 + i]);
      no += (size_t)snprintf(m2 + no, sizeof m2 - no, "%s%lld", i ? " x " : "", (long long)out[i]);
    }
    return ts_rt_fail(c, "Given input size per channel: (%s). Calculated output size per channel: (%s). Output size "
                         "is too small",
                      m1, m2),
           NULL;
  }
  ts_rt_conv3_geom g = cv_geom3(x, w, O, out, a);
  int64_t osz[5] = {g.N, g.O};
  for (int32_t i = 0; i < nsp; i++) osz[2 + i] = out[i];
  ts_dtype wdt = nnu_work_dtype(dt);
  ts_rt_tensor *xc = nnu_contig_as(c, x, wdt);
  ts_rt_tensor *wc = xc ? nnu_contig_as(c, w, wdt) : NULL;
  ts_rt_tensor *y = wc ? ts_rt_tensor_new(c, wdt, nsp + 2, osz, false) : NULL;
  ts_rt_tensor *bc = y && bias ? nnu_contig_as(c, bias, wdt) : NULL;
  bool ok = y && (!bias || bc) &&
            ts_rt_conv_transposed_run(c, &g, wdt == TS_DT_FLOAT64, ts_rt_tensor_data(xc), ts_rt_tensor_data(wc),
                                      bc ? ts_rt_tensor_data(bc) : NULL, ts_rt_tensor_data(y));
  if (xc) ts_rt_tensor_release(xc);
  if (wc) ts_rt_tensor_release(wc);
  if (bc) ts_rt_tensor_release(bc);
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

/* Runs a convolution (transposed: a transposed one) of x, w (nsp from w's
 * rank), making an unbatched input batched when `unbatched_ok` (conv1d,
 * conv2d, conv3d, conv_transpose*d) and returning it unbatched again. */
static ts_rt_tensor *cv_conv_any(ts_rt_ctx *c, const ts_rt_call *call, ts_rt_tensor *x, ts_rt_tensor *w,
                                 ts_rt_tensor *b, cv_args *a, bool unbatched_ok, bool transposed) {
  if (unbatched_ok && x->ndim == a->nsp + 1 && w->ndim == a->nsp + 2) {
    int64_t sz[TS_RT_MAX_DIMS], st[TS_RT_MAX_DIMS];
    sz[0] = 1, st[0] = 0;
    for (int32_t i = 0; i < x->ndim; i++) sz[i + 1] = x->sizes[i], st[i + 1] = x->strides[i];
    ts_rt_tensor *xb = ts_rt_tensor_view(c, x, x->offset, x->ndim + 1, sz, st);
    if (!xb) return NULL;
    ts_rt_tensor *y = transposed ? cv_conv_transposed(c, xb, w, b, a) : cv_conv(c, call, xb, w, b, a, NULL);
    ts_rt_tensor_release(xb);
    if (!y) return NULL;
    ts_rt_tensor *r = ts_rt_tensor_view(c, y, y->offset, y->ndim - 1, y->sizes + 1, y->strides + 1);
    ts_rt_tensor_release(y);
    return r;
  }
  return transposed ? cv_conv_transposed(c, x, w, b, a) : cv_conv(c, call, x, w, b, a, NULL);
}

/* The common part of convolution / _convolution: arguments 0..8. */
static bool cv_k_convolution_common(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x = NULL, *w = NULL, *b = NULL;
  bool transposed = false;
  int64_t groups = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_tensor(c, call, 1, &w) || !ts_rt_arg_opt_tensor(c, call, 2, &b) ||
      !ts_rt_arg_bool(c, call, 6, &transposed) || !ts_rt_arg_int(c, call, 8, &groups))
    return false;
  if (w->ndim < 3 || w->ndim > 5) {
    if (w->ndim > 5) return ts_rt_fail(c, "%d-d convolution is not supported", (int)(w->ndim - 2));
    return ts_rt_fail(c, "weight should have at least three dimensions");
  }
  cv_args a = cv_args_init(w->ndim - 2, groups);
  if (!cv_list_arg(c, call, 3, a.nsp, "stride", a.stride) || !cv_list_arg(c, call, 4, a.nsp, "padding", a.plo) ||
      !cv_list_arg(c, call, 5, a.nsp, "dilation", a.dil))
    return false;
  memcpy(a.phi, a.plo, sizeof a.phi);
  if (transposed) {
    if (!cv_list_arg(c, call, 7, a.nsp, "output_padding", a.outpad)) return false;
    return nnu_ret(call, cv_conv_transposed(c, x, w, b, &a));
  }
  return nnu_ret(call, cv_conv(c, call, x, w, b, &a, NULL));
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
  if (x->ndim != nsp + 1 && x->ndim != nsp + 2) {
    char xs[256];
    nnu_shape_str(xs, sizeof xs, x->ndim, x->sizes);
    return ts_rt_fail(c, "Expected %dD (unbatched) or %dD (batched) input to conv%dd, but got input of size: %s",
                      (int)(nsp + 1), (int)(nsp + 2), (int)nsp, xs);
  }
  cv_args a = cv_args_init(nsp, groups);
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
  return nnu_ret(call, cv_conv_any(c, call, x, w, b, &a, true, false));
}

bool ts_rt_k_conv1d(ts_rt_ctx *c, ts_rt_call *call) { return cv_k_convnd(c, call, 1, false); }
bool ts_rt_k_conv2d(ts_rt_ctx *c, ts_rt_call *call) { return cv_k_convnd(c, call, 2, false); }
bool ts_rt_k_conv1d_padding(ts_rt_ctx *c, ts_rt_call *call) { return cv_k_convnd(c, call, 1, true); }
bool ts_rt_k_conv2d_padding(ts_rt_ctx *c, ts_rt_call *call) { return cv_k_convnd(c, call, 2, true); }
bool ts_rt_k_conv3d(ts_rt_ctx *c, ts_rt_call *call) { return cv_k_convnd(c, call, 3, false); }
bool ts_rt_k_conv3d_padding(ts_rt_ctx *c, ts_rt_call *call) { return cv_k_convnd(c, call, 3, true); }

/* conv_transpose{1,2,3}d(input, weight, bias, stride, padding,
 * output_padding, groups, dilation) */
static bool cv_k_conv_transpose(ts_rt_ctx *c, ts_rt_call *call, int32_t nsp) {
  ts_rt_tensor *x = NULL, *w = NULL, *b = NULL;
  int64_t groups = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_tensor(c, call, 1, &w) || !ts_rt_arg_opt_tensor(c, call, 2, &b) ||
      !ts_rt_arg_int(c, call, 6, &groups))
    return false;
  cv_args a = cv_args_init(nsp, groups);
  if (!cv_list_arg(c, call, 3, nsp, "stride", a.stride) || !cv_list_arg(c, call, 4, nsp, "padding", a.plo) ||
      !cv_list_arg(c, call, 5, nsp, "output_padding", a.outpad) || !cv_list_arg(c, call, 7, nsp, "dilation", a.dil))
    return false;
  memcpy(a.phi, a.plo, sizeof a.phi);
  if (x->ndim != nsp + 1 && x->ndim != nsp + 2) {
    char xs[256];
    nnu_shape_str(xs, sizeof xs, x->ndim, x->sizes);
    return ts_rt_fail(c, "Expected %dD (unbatched) or %dD (batched) input to conv_transpose%dd, but got input of size: "
                         "%s",
                      (int)(nsp + 1), (int)(nsp + 2), (int)nsp, xs);
  }
  return nnu_ret(call, cv_conv_any(c, call, x, w, b, &a, true, true));
}

bool ts_rt_k_conv_transpose1d(ts_rt_ctx *c, ts_rt_call *call) { return cv_k_conv_transpose(c, call, 1); }
bool ts_rt_k_conv_transpose2d(ts_rt_ctx *c, ts_rt_call *call) { return cv_k_conv_transpose(c, call, 2); }
bool ts_rt_k_conv_transpose3d(ts_rt_ctx *c, ts_rt_call *call) { return cv_k_conv_transpose(c, call, 3); }

/* tsaot::conv2d_act(input, weight, bias, stride, padding, dilation, groups,
 * min, max, residual): clamp(conv2d(...) + residual, min, max) in one pass
 * over the output (passes/fuse_conv_act.c makes it for float32 and float64
 * only: there conv, add and clamp round alike in the work dtype). */
bool ts_rt_k_conv2d_act(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x = NULL, *w = NULL, *b = NULL, *r = NULL;
  int64_t groups = 0;
  cv_post post = {NULL, -INFINITY, INFINITY};
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_tensor(c, call, 1, &w) || !ts_rt_arg_opt_tensor(c, call, 2, &b) ||
      !ts_rt_arg_int(c, call, 6, &groups) || !ts_rt_arg_check(c, call, 8) ||
      (call->in[7].tag != TS_IV_NONE && !ts_rt_arg_double(c, call, 7, &post.lo)) ||
      (call->in[8].tag != TS_IV_NONE && !ts_rt_arg_double(c, call, 8, &post.hi)) ||
      !ts_rt_arg_opt_tensor(c, call, 9, &r))
    return false;
  post.res = r;
  ts_dtype dt = (ts_dtype)x->dtype;
  if (dt != TS_DT_FLOAT32 && dt != TS_DT_FLOAT64) return nnu_not_impl(c, "tsaot::conv2d_act", dt);
  if (x->ndim != 4 || w->ndim != 4) return ts_rt_fail(c, "tsaot::conv2d_act: expected a 4-d input and weight");
  cv_args a = cv_args_init(2, groups);
  if (!cv_list_arg(c, call, 3, 2, "stride", a.stride) || !cv_list_arg(c, call, 4, 2, "padding", a.plo) ||
      !cv_list_arg(c, call, 5, 2, "dilation", a.dil))
    return false;
  memcpy(a.phi, a.plo, sizeof a.phi);
  return nnu_ret(call, cv_conv(c, call, x, w, b, &a, &post));
}
