/* runtime/kernels/gridsample.c: aten::grid_sampler, grid_sampler_2d and
 * grid_sampler_3d (F.grid_sample: bilinear, nearest and, in 2-d, bicubic
 * interpolation; zeros, border and reflection padding; align_corners), and
 * aten::affine_grid_generator (F.affine_grid), in float32 and float64.
 *
 * PyTorch 1.13's arithmetic: the 2-d CPU kernel is its vectorised one
 * (GridSamplerKernel.cpp: unnormalise as (x + 1) * ((size - 1) / 2) or
 * (x + 1) * (size / 2) - 0.5, weights from the fractions, the four corners
 * summed nw, ne, sw, se, out-of-bounds corners 0), the 3-d kernel the scalar
 * one (GridSampler.h: ((x + 1) * size - 1) / 2, weights from the opposite
 * corners, coordinates that are not finite or beyond int range taken as
 * -100, i.e. outside). Nearest rounds half to even in 2-d (the vectorised
 * round), half away from zero in 3-d (std::round); bicubic is Keys' A =
 * -0.75 over the 4x4 taps with each tap's coordinate padded on its own.
 * Padding as each kernel pads: the 2-d one clips NaN to 0 and folds
 * reflections by a truncating division, the 3-d one clips as std::min/max
 * do (NaN to the far edge) and folds with fmod and an int flip count.
 * affine_grid_generator takes float32 and float64 only (ATen also runs it
 * in bfloat16 and the integer types). */
#include <math.h>

#include "nn_util.h"

enum { GS_BILINEAR = 0, GS_NEAREST = 1, GS_BICUBIC = 2 };
enum { GS_ZEROS = 0, GS_BORDER = 1, GS_REFLECTION = 2 };

typedef struct gs_job {
  const void *x, *g;
  void *y;
  int64_t C, D, H, W;    /* input [N, C, D, H, W] (2-d: D = 1) */
  int64_t OD, OH, OW;    /* grid [N, OD, OH, OW, nsp] */
  int nsp, mode, pad;
  bool align;
} gs_job;

#define GS_DEFINE(T, S)                                                                                                \
  /* the 2-d (vectorised) kernel's clip: NaN to 0, then into [0, size - 1] */                                         \
  static T gs_clip2_##S(T v, int64_t size) {                                                                          \
    if (!(v > 0)) return 0;                                                                                           \
    return v < (T)(size - 1) ? v : (T)(size - 1);                                                                     \
  }                                                                                                                   \
  /* the 3-d (scalar) kernel's: std::min(size - 1, std::max(v, 0)), NaN to size - 1 */                                \
  static T gs_clip3_##S(T v, int64_t size) {                                                                          \
    T lo = v < 0 ? (T)0 : v;                                                                                          \
    return lo < (T)(size - 1) ? lo : (T)(size - 1);                                                                   \
  }                                                                                                                   \
  /* the vectorised reflection: |v - low| folded by truncating division by                                          \
   * twice the span, then the nearer of extra and twice_span - extra (NaN kept) */                                    \
  static T gs_reflect2_##S(T v, int64_t size, bool align) {                                                           \
    if (align && size <= 1) return 0;                                                                                 \
    T low = align ? (T)0 : (T)-0.5, ts = align ? (T)(size - 1) * 2 : (T)size * 2;                                     \
    T ab = (T)fabs((double)(v - low));                                                                                \
    T flips = (T)trunc((double)(ab / ts));                                                                            \
    T extra = ab - flips * ts, other = ts - extra;                                                                    \
    T m = extra != extra || other != other ? (T)NAN : extra < other ? extra : other;                                  \
    return m + low;                                                                                                   \
  }                                                                                                                   \
  /* the scalar one (ATen's reflect_coordinates over [twice_low / 2,                                                 \
   * twice_high / 2]); its flip count an int as x86 converts (INT_MIN when                                           \
   * out of range or NaN: even) */                                                                                    \
  static T gs_reflect3_##S(T v, int64_t twice_low, int64_t twice_high) {                                              \
    if (twice_low == twice_high) return 0;                                                                            \
    T min = (T)twice_low / 2, span = (T)(twice_high - twice_low) / 2;                                                 \
    v = (T)fabs((double)(v - min));                                                                                   \
    T extra = (T)fmod((double)v, (double)span);                                                                       \
    double fl = floor((double)(v / span));                                                                            \
    int32_t flips = fl >= -2147483648.0 && fl < 2147483648.0 ? (int32_t)fl : INT32_MIN;                              \
    return flips % 2 == 0 ? extra + min : span - extra + min;                                                         \
  }                                                                                                                   \
  /* padding applied to an unnormalised coordinate (ATen's compute_coordinates) */                                   \
  static T gs_pad2_##S(T v, int64_t size, int pad, bool align) {                                                      \
    if (pad == GS_BORDER) return gs_clip2_##S(v, size);                                                               \
    if (pad == GS_REFLECTION) return gs_clip2_##S(gs_reflect2_##S(v, size, align), size);                             \
    return v;                                                                                                         \
  }                                                                                                                   \
  static T gs_pad3_##S(T v, int64_t size, int pad, bool align) {                                                      \
    if (pad == GS_BORDER) return gs_clip3_##S(v, size);                                                               \
    if (pad == GS_REFLECTION) {                                                                                       \
      v = align ? gs_reflect3_##S(v, 0, 2 * (size - 1)) : gs_reflect3_##S(v, -1, 2 * size - 1);                       \
      return gs_clip3_##S(v, size);                                                                                   \
    }                                                                                                                 \
    return v;                                                                                                         \
  }                                                                                                                   \
  /* the 2-d kernel's unnormalisation */                                                                            \
  static T gs_unnorm2_##S(T v, int64_t size, bool align) {                                                            \
    return align ? (v + 1) * ((T)(size - 1) / 2) : (v + 1) * ((T)size / 2) - (T)0.5;                                  \
  }                                                                                                                   \
  /* the 3-d kernel's: grid_sampler_compute_source_index, then safe_downgrade_to_int_range */                       \
  static T gs_src3_##S(T v, int64_t size, int pad, bool align) {                                                      \
    v = align ? ((v + 1) / 2) * (T)(size - 1) : ((v + 1) * (T)size - 1) / 2;                                          \
    v = gs_pad3_##S(v, size, pad, align);                                                                             \
    if (!isfinite(v) || v > (T)INT32_MAX - 1 || v < (T)INT32_MIN + 1) return (T)-100;                                 \
    return v;                                                                                                         \
  }                                                                                                                   \
  /* a bicubic tap: its coordinate padded on its own, then read if inside */                                         \
  static T gs_tap_##S(const T *p, int64_t H, int64_t W, T y, T x, int pad, bool align) {                              \
    x = gs_pad2_##S(x, W, pad, align), y = gs_pad2_##S(y, H, pad, align);                                             \
    if (!(x >= 0 && x < (T)W && y >= 0 && y < (T)H)) return 0; /* NaN too */                                          \
    return p[(int64_t)y * W + (int64_t)x];                                                                            \
  }                                                                                                                   \
  static void gs_cubic_##S(T t, T *c) {                                                                               \
    T A = (T)-0.75, x = t + 1;                                                                                        \
    c[0] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;                                                                 \
    c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;                                                                       \
    x = 1 - t;                                                                                                        \
    c[2] = ((A + 2) * x - (A + 3)) * x * x + 1;                                                                       \
    x = x + 1;                                                                                                        \
    c[3] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;                                                                 \
  }                                                                                                                   \
  /* 2-d bilinear over points [b, e) in blocks within one image: each                                               \
   * point's corner offsets (-1 outside) and weights first, then every                                               \
   * channel's block of outputs, so that the writes run in order */                                                  \
  static void gs_bil2_##S(const gs_job *j, int64_t b, int64_t e) {                                                    \
    enum { BLK = 256 };                                                                                               \
    int64_t off[BLK][4];                                                                                              \
    T wt[BLK][4];                                                                                                     \
    int64_t npts = j->OH * j->OW, plane = j->H * j->W;                                                                \
    for (int64_t q0 = b; q0 < e;) {                                                                                   \
      int64_t n = q0 / npts, pt0 = q0 % npts, cnt = e - q0;                                                           \
      if (cnt > BLK) cnt = BLK;                                                                                       \
      if (cnt > npts - pt0) cnt = npts - pt0;                                                                         \
      for (int64_t k = 0; k < cnt; k++) {                                                                             \
        const T *g = (const T *)j->g + (q0 + k) * 2;                                                                  \
        T ix = gs_pad2_##S(gs_unnorm2_##S(g[0], j->W, j->align), j->W, j->pad, j->align);                             \
        T iy = gs_pad2_##S(gs_unnorm2_##S(g[1], j->H, j->align), j->H, j->pad, j->align);                             \
        T fx = (T)floor((double)ix), fy = (T)floor((double)iy);                                                       \
        T w = ix - fx, ee = 1 - w, nn = iy - fy, ss = 1 - nn;                                                         \
        wt[k][0] = ss * ee, wt[k][1] = ss * w, wt[k][2] = nn * ee, wt[k][3] = nn * w;                                 \
        /* NaN or huge coordinates fail every bound check: those corners read 0 */                                  \
        bool ok = fx == fx && fy == fy && fabs((double)fx) < 1e18 && fabs((double)fy) < 1e18;                         \
        int64_t x0 = ok ? (int64_t)fx : -2, y0 = ok ? (int64_t)fy : -2;                                               \
        for (int c4 = 0; c4 < 4; c4++) {                                                                              \
          int64_t xx = x0 + (c4 & 1), yy = y0 + (c4 >> 1);                                                            \
          off[k][c4] = xx >= 0 && xx < j->W && yy >= 0 && yy < j->H ? yy * j->W + xx : -1;                            \
        }                                                                                                             \
      }                                                                                                               \
      for (int64_t ch = 0; ch < j->C; ch++) {                                                                         \
        const T *p = (const T *)j->x + (n * j->C + ch) * plane;                                                       \
        T *yo = (T *)j->y + (n * j->C + ch) * npts + pt0;                                                             \
        for (int64_t k = 0; k < cnt; k++) {                                                                           \
          T v0 = off[k][0] >= 0 ? p[off[k][0]] : (T)0, v1 = off[k][1] >= 0 ? p[off[k][1]] : (T)0;                     \
          T v2 = off[k][2] >= 0 ? p[off[k][2]] : (T)0, v3 = off[k][3] >= 0 ? p[off[k][3]] : (T)0;                     \
          yo[k] = v0 * wt[k][0] + v1 * wt[k][1] + v2 * wt[k][2] + v3 * wt[k][3];                                      \
        }                                                                                                             \
      }                                                                                                               \
      q0 += cnt;                                                                                                      \
    }                                                                                                                 \
  }                                                                                                                   \
  /* output points [b, e) of N * OD * OH * OW, all channels each */                                                 \
  static void gs_run_##S(void *arg, int64_t b, int64_t e) {                                                           \
    const gs_job *j = arg;                                                                                            \
    if (j->nsp == 2 && j->mode == GS_BILINEAR) {                                                                      \
      gs_bil2_##S(j, b, e);                                                                                           \
      return;                                                                                                         \
    }                                                                                                                 \
    int64_t npts = j->OD * j->OH * j->OW, plane = j->D * j->H * j->W;                                                 \
    for (int64_t q = b; q < e; q++) {                                                                                 \
      int64_t n = q / npts, pt = q % npts;                                                                            \
      const T *g = (const T *)j->g + q * j->nsp;                                                                      \
      const T *x = (const T *)j->x + n * j->C * plane;                                                                \
      T *y = (T *)j->y + n * j->C * npts + pt;                                                                        \
      if (j->nsp == 2) {                                                                                              \
        T gx = g[0], gy = g[1];                                                                                       \
        if (j->mode == GS_BICUBIC) {                                                                                  \
          T ix = gs_unnorm2_##S(gx, j->W, j->align), iy = gs_unnorm2_##S(gy, j->H, j->align);                         \
          T fx = (T)floor((double)ix), fy = (T)floor((double)iy), cx[4], cy[4];                                       \
          gs_cubic_##S(ix - fx, cx);                                                                                  \
          gs_cubic_##S(iy - fy, cy);                                                                                  \
          for (int64_t ch = 0; ch < j->C; ch++) {                                                                     \
            const T *p = x + ch * plane;                                                                              \
            T r[4];                                                                                                   \
            for (int i = 0; i < 4; i++) {                                                                             \
              T yy = fy - 1 + (T)i;                                                                                   \
              r[i] = cx[0] * gs_tap_##S(p, j->H, j->W, yy, fx - 1, j->pad, j->align) +                                \
                     cx[1] * gs_tap_##S(p, j->H, j->W, yy, fx, j->pad, j->align) +                                    \
                     cx[2] * gs_tap_##S(p, j->H, j->W, yy, fx + 1, j->pad, j->align) +                                \
                     cx[3] * gs_tap_##S(p, j->H, j->W, yy, fx + 2, j->pad, j->align);                                 \
            }                                                                                                         \
            y[ch * npts] = cy[0] * r[0] + cy[1] * r[1] + cy[2] * r[2] + cy[3] * r[3];                                 \
          }                                                                                                           \
          continue;                                                                                                   \
        }                                                                                                             \
        T ix = gs_pad2_##S(gs_unnorm2_##S(gx, j->W, j->align), j->W, j->pad, j->align);                               \
        T iy = gs_pad2_##S(gs_unnorm2_##S(gy, j->H, j->align), j->H, j->pad, j->align);                               \
        if (j->mode == GS_NEAREST) {                                                                                  \
          T rx = (T)nearbyint((double)ix), ry = (T)nearbyint((double)iy);                                             \
          bool in = rx >= 0 && rx < (T)j->W && ry >= 0 && ry < (T)j->H;                                               \
          int64_t at = in ? (int64_t)ry * j->W + (int64_t)rx : 0;                                                     \
          for (int64_t ch = 0; ch < j->C; ch++) y[ch * npts] = in ? x[ch * plane + at] : (T)0;                       \
          continue;                                                                                                   \
        }                                                                                                             \
        continue; /* bilinear: gs_bil2 */                                                                           \
      }                                                                                                               \
      T ix = gs_src3_##S(g[0], j->W, j->pad, j->align), iy = gs_src3_##S(g[1], j->H, j->pad, j->align);               \
      T iz = gs_src3_##S(g[2], j->D, j->pad, j->align);                                                               \
      if (j->mode == GS_NEAREST) {                                                                                    \
        int64_t rx = (int64_t)round((double)ix), ry = (int64_t)round((double)iy);                                     \
        int64_t rz = (int64_t)round((double)iz);                                                                      \
        bool in = rx >= 0 && rx < j->W && ry >= 0 && ry < j->H && rz >= 0 && rz < j->D;                              \
        for (int64_t ch = 0; ch < j->C; ch++)                                                                         \
          y[ch * npts] = in ? x[ch * plane + (rz * j->H + ry) * j->W + rx] : (T)0;                                    \
        continue;                                                                                                     \
      }                                                                                                               \
      int64_t x0 = (int64_t)floor((double)ix), y0 = (int64_t)floor((double)iy), z0 = (int64_t)floor((double)iz);     \
      T x1 = (T)(x0 + 1), y1 = (T)(y0 + 1), z1 = (T)(z0 + 1), xf = (T)x0, yf = (T)y0, zf = (T)z0;                     \
      /* ATen's eight weights, each from the opposite corner */                                                     \
      T wgt[8] = {(x1 - ix) * (y1 - iy) * (z1 - iz), (ix - xf) * (y1 - iy) * (z1 - iz),                               \
                  (x1 - ix) * (iy - yf) * (z1 - iz), (ix - xf) * (iy - yf) * (z1 - iz),                               \
                  (x1 - ix) * (y1 - iy) * (iz - zf), (ix - xf) * (y1 - iy) * (iz - zf),                               \
                  (x1 - ix) * (iy - yf) * (iz - zf), (ix - xf) * (iy - yf) * (iz - zf)};                              \
      for (int64_t ch = 0; ch < j->C; ch++) {                                                                         \
        const T *p = x + ch * plane;                                                                                  \
        T acc = 0;                                                                                                    \
        for (int k = 0; k < 8; k++) {                                                                                 \
          int64_t xx = x0 + (k & 1), yy = y0 + ((k >> 1) & 1), zz = z0 + (k >> 2);                                    \
          if (xx >= 0 && xx < j->W && yy >= 0 && yy < j->H && zz >= 0 && zz < j->D)                                  \
            acc += p[(zz * j->H + yy) * j->W + xx] * wgt[k];                                                          \
        }                                                                                                             \
        y[ch * npts] = acc;                                                                                           \
      }                                                                                                               \
    }                                                                                                                 \
  }

GS_DEFINE(float, f32)
GS_DEFINE(double, f64)

/* grid_sampler / _2d / _3d (nsp 0: by the input's rank). */
static bool gs_k(ts_rt_ctx *c, ts_rt_call *call, int nsp) {
  ts_rt_tensor *x = NULL, *g = NULL;
  int64_t mode = 0, pad = 0;
  bool align = false;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_tensor(c, call, 1, &g) || !ts_rt_arg_int(c, call, 2, &mode) ||
      !ts_rt_arg_int(c, call, 3, &pad) || !ts_rt_arg_bool(c, call, 4, &align))
    return false;
  char xs[256], gsz[256];
  nnu_shape_str(xs, sizeof xs, x->ndim, x->sizes);
  nnu_shape_str(gsz, sizeof gsz, g->ndim, g->sizes);
  if (nsp == 0) nsp = x->ndim == 4 ? 2 : 3;
  /* check_grid_sampler_common */
  if (x->ndim < 1 || g->ndim < 1 || x->sizes[0] != g->sizes[0])
    return ts_rt_fail(c, "grid_sampler(): expected grid and input to have same batch size, but got input with sizes %s "
                         "and grid with sizes %s",
                      xs, gsz);
  if (g->sizes[g->ndim - 1] != x->ndim - 2)
    return ts_rt_fail(c, "grid_sampler(): expected grid to have size %d in last dimension, but got grid with sizes %s",
                      (int)(x->ndim - 2), gsz);
  for (int32_t i = 2; i < x->ndim; i++)
    if (x->sizes[i] <= 0)
      return ts_rt_fail(c, "grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                           "sizes %s with dimension %d being empty",
                        xs, (int)i);
  if (x->ndim != nsp + 2 || g->ndim != x->ndim)
    return ts_rt_fail(c, "grid_sampler(): expected %dD input and grid with same number of dimensions, but got input "
                         "with sizes %s and grid with sizes %s",
                      (int)(nsp + 2), xs, gsz);
  if (nsp == 3 && mode == GS_BICUBIC)
    return ts_rt_fail(c, "grid_sampler(): bicubic interpolation only supports 4D input");
  ts_dtype dt = (ts_dtype)x->dtype;
  if (g->dtype != dt)
    return ts_rt_fail(c, "expected scalar type %s but found %s", ts_rt_dtype_name(dt),
                      ts_rt_dtype_name((ts_dtype)g->dtype));
  if (dt != TS_DT_FLOAT32 && dt != TS_DT_FLOAT64) {
    if (nsp == 2) return ts_rt_fail(c, "grid_sampler_2d_cpu not implemented for %s", ts_rt_dtype_name(dt));
    return nnu_not_impl(c, "grid_sampler3d_cpu", dt);
  }
  /* ATen's kernels take other mode numbers and return what the output held: refused here */
  if (mode < 0 || mode > 2) return ts_rt_fail(c, "grid_sampler(): unknown interpolation mode %lld", (long long)mode);
  if (pad < 0 || pad > 2) return ts_rt_fail(c, "grid_sampler(): unknown padding mode %lld", (long long)pad);
  int64_t osz[5] = {x->sizes[0], x->sizes[1]};
  for (int i = 0; i < nsp; i++) osz[2 + i] = g->sizes[1 + i];
  ts_rt_tensor *xc = ts_rt_tensor_contiguous(c, x);
  ts_rt_tensor *gc = xc ? ts_rt_tensor_contiguous(c, g) : NULL;
  ts_rt_tensor *y = gc ? ts_rt_tensor_new(c, dt, nsp + 2, osz, false) : NULL;
  if (y) {
    gs_job j = {ts_rt_tensor_data(xc), ts_rt_tensor_data(gc), ts_rt_tensor_data(y), x->sizes[1],
                nsp == 3 ? x->sizes[2] : 1, x->sizes[nsp], x->sizes[nsp + 1], nsp == 3 ? g->sizes[1] : 1,
                g->sizes[nsp - 1], g->sizes[nsp], nsp, (int)mode, (int)pad, align};
    int64_t pts = x->sizes[0] * j.OD * j.OH * j.OW;
    int64_t per = (j.C ? j.C : 1) * (mode == GS_BICUBIC ? 16 : nsp == 3 ? 8 : 4);
    ts_rt_parallel_for(c, pts, 16384 / per + 1, dt == TS_DT_FLOAT64 ? gs_run_f64 : gs_run_f32, &j);
  }
  if (xc) ts_rt_tensor_release(xc);
  if (gc) ts_rt_tensor_release(gc);
  return nnu_ret(call, y);
}

/* ATen's linspace(-1, 1, n) in T (start + step * i below the halfway
 * point, end - step * (n - 1 - i) above), scaled by (n - 1) / n without
 * align_corners (a multiply, then a divide); 0 for n <= 1. */
#define GS_LINSPACE(T)                                                                                                 \
  static void gs_linspace_##T(T *out, int64_t n, bool align) {                                                        \
    if (n <= 1) {                                                                                                     \
      if (n == 1) out[0] = 0;                                                                                         \
      return;                                                                                                         \
    }                                                                                                                 \
    T step = (T)2 / (T)(n - 1);                                                                                       \
    for (int64_t i = 0; i < n; i++) {                                                                                 \
      T v = i < n / 2 ? (T)-1 + step * (T)i : (T)1 - step * (T)(n - 1 - i);                                          \
      out[i] = align ? v : v * (T)(n - 1) / (T)n;                                                                     \
    }                                                                                                                 \
  }
GS_LINSPACE(float)
GS_LINSPACE(double)

/* aten::affine_grid_generator(theta, size, align_corners): the base grid
 * [N, (D,) H, W, nsp + 1] of (x, y, (z,) 1) times theta^T [nsp + 1, nsp],
 * summed in that order. */
static bool gs_k_affine_grid(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *th = NULL;
  int64_t size[5];
  uint32_t n = 0;
  bool align = false;
  if (!ts_rt_arg_tensor(c, call, 0, &th) || !ts_rt_arg_bool(c, call, 2, &align)) return false;
  if (call->in[1].tag == TS_IV_LIST && call->in[1].u.l->n != 4 && call->in[1].u.l->n != 5)
    return ts_rt_fail(c, "AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.");
  if (!ts_rt_arg_ints(c, call, 1, size, 5, &n, 0)) return false;
  int nsp = (int)n - 2;
  int64_t N = size[0], D = nsp == 3 ? size[2] : 1, H = size[n - 2], W = size[n - 1];
  char ss[256];
  nnu_shape_str(ss, sizeof ss, (int32_t)n, size);
  for (uint32_t i = 0; i < n; i++)
    if (size[i] < 0)
      return ts_rt_fail(c, "Trying to create tensor with negative dimension %lld: %s", (long long)size[i], ss);
  int64_t pts = 0;
  if (!nnu_mul(D, H, &pts) || !nnu_mul(pts, W, &pts) || !nnu_mul(pts, N, &pts) || pts > INT64_MAX / 8)
    return ts_rt_fail(c, "affine_grid_generator: size %s too large", ss);
  /* base_grid.view(N, H*W, nsp + 1).bmm(theta.transpose(1, 2)), then a view to [N, ..., nsp] */
  if (th->ndim < 2)
    return ts_rt_fail(c, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  if (th->ndim != 3) return ts_rt_fail(c, "batch2 must be a 3D tensor");
  if (th->sizes[0] != N || th->sizes[2] != nsp + 1)
    return ts_rt_fail(c, "Expected size for first two dimensions of batch2 tensor to be: [%lld, %d] but got: [%lld, "
                         "%lld].",
                      (long long)N, nsp + 1, (long long)th->sizes[0], (long long)th->sizes[2]);
  if (th->sizes[1] != nsp) {
    int64_t osz[5] = {N, D, H, W, nsp};
    if (nsp == 2) osz[1] = H, osz[2] = W, osz[3] = nsp;
    char os[256];
    nnu_shape_str(os, sizeof os, nsp + 2, osz);
    return ts_rt_fail(c, "shape '%s' is invalid for input of size %lld", os, (long long)(pts * th->sizes[1]));
  }
  ts_dtype dt = (ts_dtype)th->dtype;
  /* ATen runs linspace and bmm in the dtype (bfloat16 and integers too):
   * not done here */
  if (dt != TS_DT_FLOAT32 && dt != TS_DT_FLOAT64)
    return ts_rt_fail(c, "affine_grid_generator: dtype %s is not supported here (float32 and float64 are)",
                      ts_rt_dtype_name(dt));
  int64_t osz[5] = {N, D, H, W, nsp};
  if (nsp == 2) osz[1] = H, osz[2] = W, osz[3] = nsp;
  ts_rt_tensor *y = ts_rt_tensor_new(c, dt, nsp + 2, osz, false);
  double *lin = y ? ts_rt_malloc((size_t)(D + H + W + 1) * sizeof(double)) : NULL;
  if (!lin) {
    if (y) ts_rt_tensor_release(y);
    return y ? ts_rt_fail(c, "out of memory") : false;
  }
  int64_t ts0 = th->strides[0], ts1 = th->strides[1], ts2 = th->strides[2];
  if (dt == TS_DT_FLOAT32) {
    float *lx = (float *)lin, *ly = lx + W, *lz = ly + H, *o = ts_rt_tensor_data(y);
    const float *t = ts_rt_tensor_data(th);
    gs_linspace_float(lx, W, align), gs_linspace_float(ly, H, align), gs_linspace_float(lz, D, align);
    for (int64_t b = 0; b < N; b++)
      for (int64_t z = 0; z < D; z++)
        for (int64_t yy = 0; yy < H; yy++)
          for (int64_t x = 0; x < W; x++)
            for (int r = 0; r < nsp; r++) {
              const float *tr = t + b * ts0 + r * ts1;
              float v = lx[x] * tr[0] + ly[yy] * tr[ts2];
              if (nsp == 3) v += lz[z] * tr[2 * ts2];
              *o++ = v + tr[nsp * ts2];
            }
  } else {
    double *lx = lin, *ly = lx + W, *lz = ly + H, *o = ts_rt_tensor_data(y);
    const double *t = ts_rt_tensor_data(th);
    gs_linspace_double(lx, W, align), gs_linspace_double(ly, H, align), gs_linspace_double(lz, D, align);
    for (int64_t b = 0; b < N; b++)
      for (int64_t z = 0; z < D; z++)
        for (int64_t yy = 0; yy < H; yy++)
          for (int64_t x = 0; x < W; x++)
            for (int r = 0; r < nsp; r++) {
              const double *tr = t + b * ts0 + r * ts1;
              double v = lx[x] * tr[0] + ly[yy] * tr[ts2];
              if (nsp == 3) v += lz[z] * tr[2 * ts2];
              *o++ = v + tr[nsp * ts2];
            }
  }
  ts_rt_free(lin);
  return nnu_ret(call, y);
}

static bool gs_k_grid_sampler(ts_rt_ctx *c, ts_rt_call *call) { return gs_k(c, call, 0); }
static bool gs_k_grid_sampler_2d(ts_rt_ctx *c, ts_rt_call *call) { return gs_k(c, call, 2); }
static bool gs_k_grid_sampler_3d(ts_rt_ctx *c, ts_rt_call *call) { return gs_k(c, call, 3); }

const ts_rt_kernel_def ts_rt_kernels_gridsample[] = {
    {"aten::grid_sampler", gs_k_grid_sampler},
    {"aten::grid_sampler_2d", gs_k_grid_sampler_2d},
    {"aten::grid_sampler_3d", gs_k_grid_sampler_3d},
    {"aten::affine_grid_generator", gs_k_affine_grid},
    {NULL, NULL},
};
