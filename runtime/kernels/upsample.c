/* runtime/kernels/upsample.c: the upsample family, each with its .vec form
 * (output_size or scale_factors, as F.interpolate calls it):
 * upsample_nearest1d/2d/3d, _upsample_nearest_exact1d/2d/3d,
 * upsample_linear1d, upsample_bilinear2d, upsample_trilinear3d,
 * upsample_bicubic2d, and the antialiased _upsample_bilinear2d_aa and
 * _upsample_bicubic2d_aa.
 *
 * PyTorch 1.13's index arithmetic throughout (ATen's UpSample.h and
 * UpSampleKernel.cpp): the scale is in/out, 1/scale_factor when one is
 * given, or (in-1)/(out-1) with align_corners, computed in the op's math
 * type (float for float32 and bfloat16, double for float64); nearest takes
 * floor(o * scale), nearest-exact floor((o + 0.5) * scale), linear and
 * cubic take the source index (o + 0.5) * scale - 0.5 (linear clamps it at
 * 0) and its fraction, cubic with Keys' A = -0.75 and indices clamped to
 * the input; the interpolation runs over the dims outermost first, each
 * dim's taps summed in order, with the weights stored in the tensor's
 * dtype (bfloat16 weights for a bfloat16 tensor, then summed in float:
 * PyTorch 1.13's bfloat16 results differ from that by up to 1.3% for
 * bilinear and 9% for bicubic, by a path we have not matched; the op cases
 * compare them loosely, bicubic's by shape). Antialiased modes
 * resample one dim at a time (the last first), with Pillow's filters
 * (triangle, Keys' cubic with A = -0.5) stretched by the scale when
 * downsampling and normalised to sum 1. */
#include <math.h>

#include "nn_util.h"

typedef enum up_mode { UP_NEAREST, UP_NEAREST_EXACT, UP_LINEAR, UP_CUBIC, UP_LINEAR_AA, UP_CUBIC_AA } up_mode;

/* The taps of one dim: output o reads input offsets off[t * out + o] (in
 * elements of the plane; tap-major, so that a row of outputs reads each
 * tap's offsets and weights contiguously) with weights w[t * out + o]
 * (float or double, by the work dtype), nt taps each; antialiased axes
 * are output-major instead, off[o * nt + t], with cnt[o] taps used. */
typedef struct up_axis {
  int64_t in, out, stride;
  int nt;
  int64_t *off;
  void *w;
} up_axis;

/* ATen's compute_scales_value / area_pixel_compute_scale in float and
 * double. */
#define UP_SCALE(T, S)                                                                                                 \
  static T up_scale_##S(int64_t in, int64_t out, bool align, double scale) {                                          \
    if (align) return out > 1 ? (T)(in - 1) / (T)(out - 1) : (T)0;                                                    \
    return scale > 0 ? (T)(1.0 / scale) : (T)in / (T)out;                                                             \
  }
UP_SCALE(float, f32)
UP_SCALE(double, f64)

/* Keys' cubic convolution kernels (ATen's cubic_convolution1/2). */
#define UP_CUBIC_FNS(T, S)                                                                                             \
  static T up_cc1_##S(T x, T A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }                                       \
  static T up_cc2_##S(T x, T A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }                                 \
  /* Pillow's filters for the antialiased modes */                                                                   \
  static T up_aa_linear_##S(T x) {                                                                                    \
    x = x < 0 ? -x : x;                                                                                               \
    return x < 1.0 ? (T)(1.0 - x) : (T)0;                                                                             \
  }                                                                                                                   \
  static T up_aa_cubic_##S(T x) {                                                                                     \
    x = x < 0 ? -x : x;                                                                                               \
    if (x < 1.0) return up_cc1_##S(x, (T)-0.5);                                                                       \
    if (x < 2.0) return up_cc2_##S(x, (T)-0.5);                                                                       \
    return 0;                                                                                                         \
  }
UP_CUBIC_FNS(float, f32)
UP_CUBIC_FNS(double, f64)

/* Rounds a weight to the tensor's dtype, as ATen stores it (wdt float32
 * for float32, bfloat16). */
static float up_round_w(float w, ts_dtype dt) {
  return dt == TS_DT_BFLOAT16 ? ts_rt_bf16_to_float(ts_rt_float_to_bf16(w)) : w;
}

/* Fills one axis's taps for mode (not antialiased) in the work dtype; dt
 * is the tensor's dtype. */
#define UP_AXIS(T, S)                                                                                                  \
  static void up_axis_fill_##S(up_axis *a, up_mode mode, bool align, double scale, ts_dtype dt) {                     \
    T *w = a->w;                                                                                                      \
    T s = up_scale_##S(a->in, a->out, mode == UP_LINEAR || mode == UP_CUBIC ? align : false, scale);                  \
    for (int64_t o = 0; o < a->out; o++) {                                                                            \
      int64_t off[4];                                                                                                 \
      T wo[4];                                                                                                        \
      if (mode == UP_NEAREST || mode == UP_NEAREST_EXACT) {                                                           \
        /* ATen computes nearest indices in float whatever the dtype */                                            \
        float sf = up_scale_f32(a->in, a->out, false, scale);                                                         \
        float src = mode == UP_NEAREST ? sf * (float)o : sf * ((float)o + 0.5f) - 0.5f;                               \
        if (mode == UP_NEAREST_EXACT) {                                                                               \
          src = src < 0 ? 0.0f : src;                                                                                 \
          src = src + 0.5f;                                                                                           \
        }                                                                                                             \
        int64_t i = (int64_t)floorf(src);                                                                             \
        off[0] = (i < a->in - 1 ? i : a->in - 1) * a->stride;                                                         \
        wo[0] = 1;                                                                                                    \
      } else if (mode == UP_LINEAR) {                                                                                 \
        int64_t i0 = o, i1 = o;                                                                                       \
        T l1 = 0;                                                                                                     \
        if (a->out != a->in) {                                                                                        \
          T src = align ? s * (T)o : s * ((T)o + (T)0.5) - (T)0.5;                                                    \
          if (!align && src < 0) src = 0;                                                                             \
          i0 = (int64_t)src;                                                                                          \
          i1 = i0 + (i0 < a->in - 1 ? 1 : 0);                                                                         \
          l1 = src - (T)i0;                                                                                           \
          l1 = l1 < 0 ? 0 : l1 > 1 ? 1 : l1;                                                                          \
        }                                                                                                             \
        off[0] = i0 * a->stride, off[1] = i1 * a->stride;                                                             \
        wo[0] = (T)1 - l1, wo[1] = l1;                                                                                \
      } else {                                                                                                        \
        T src = align ? s * (T)o : s * ((T)o + (T)0.5) - (T)0.5;                                                      \
        int64_t i = (int64_t)floor(src);                                                                              \
        i = i < a->in - 1 ? i : a->in - 1;                                                                            \
        T t = src - (T)i, A = (T)-0.75;                                                                               \
        t = t < 0 ? 0 : t > 1 ? 1 : t;                                                                                \
        wo[0] = up_cc2_##S((T)(t + 1.0), A), wo[1] = up_cc1_##S(t, A);                                                \
        T t2 = (T)(1.0 - t);                                                                                          \
        wo[2] = up_cc1_##S(t2, A), wo[3] = up_cc2_##S((T)(t2 + 1.0), A);                                              \
        for (int k = 0; k < 4; k++) {                                                                                 \
          int64_t j = i - 1 + k;                                                                                      \
          off[k] = (j < 0 ? 0 : j > a->in - 1 ? a->in - 1 : j) * a->stride;                                           \
        }                                                                                                             \
      }                                                                                                               \
      for (int k = 0; k < a->nt; k++) {                                                                               \
        a->off[k * a->out + o] = off[k];                                                                              \
        w[k * a->out + o] = sizeof(T) == sizeof(float) ? (T)up_round_w((float)wo[k], dt) : wo[k];                     \
      }                                                                                                               \
    }                                                                                                                 \
  }
UP_AXIS(float, f32)
UP_AXIS(double, f64)

/* The antialiased taps of one axis (ATen's _compute_indices_min_size_
 * weights_aa, its float and double rounding steps included): output o
 * reads off[o * nt] .. for cnt[o] taps. */
#define UP_AXIS_AA(T, S)                                                                                               \
  static void up_axis_fill_aa_##S(up_axis *a, int64_t *cnt, bool cubic, bool align, double scale) {                  \
    T *w = a->w;                                                                                                      \
    T s = up_scale_##S(a->in, a->out, align, scale);                                                                  \
    int interp = cubic ? 4 : 2;                                                                                       \
    T support = (T)(s >= 1.0 ? (interp * 0.5) * s : interp * 0.5);                                                   \
    T invscale = (T)(s >= 1.0 ? 1.0 / s : 1.0);                                                                       \
    for (int64_t o = 0; o < a->out; o++) {                                                                            \
      T center = (T)(s * (o + 0.5));                                                                                  \
      int64_t xmin = (int64_t)((T)(center - support) + 0.5);                                                          \
      xmin = xmin > 0 ? xmin : 0;                                                                                     \
      int64_t xmax = (int64_t)((T)(center + support) + 0.5);                                                          \
      int64_t xsize = (xmax < a->in ? xmax : a->in) - xmin;                                                           \
      xsize = xsize < 0 ? 0 : xsize > a->nt ? a->nt : xsize;                                                          \
      T *wo = w + o * a->nt, total = 0;                                                                               \
      for (int64_t j = 0; j < xsize; j++) {                                                                           \
        T x = (T)(((double)((T)(j + xmin) - center) + 0.5) * (double)invscale);                                       \
        wo[j] = cubic ? up_aa_cubic_##S(x) : up_aa_linear_##S(x);                                                     \
        total += wo[j];                                                                                               \
      }                                                                                                               \
      if (total != 0)                                                                                                 \
        for (int64_t j = 0; j < xsize; j++) wo[j] /= total;                                                           \
      for (int64_t j = 0; j < a->nt; j++) a->off[o * a->nt + j] = (xmin + (j < xsize ? j : 0)) * a->stride;          \
      cnt[o] = xsize;                                                                                                 \
    }                                                                                                                 \
  }
UP_AXIS_AA(float, f32)
UP_AXIS_AA(double, f64)

/* One antialiased pass over a contiguous [rows, nin, inner] buffer: output
 * o along nin reads inputs first[o * nt] .. + cnt[o] - 1. */
typedef struct up_pass {
  const void *x;
  void *y;
  int64_t nin, nout, inner;
  const int64_t *first, *cnt;
  const void *w;
  int nt;
} up_pass;

typedef struct up_job {
  const void *x;
  void *y;
  size_t es;           /* nearest: the element size it copies */
  int64_t in, on;      /* elements per input / output plane */
  up_axis ax[3];       /* D, H, W (missing dims: one tap of weight 1) */
} up_job;

/* Nearest modes: a gather of elements of any dtype over planes [b, e). */
static void up_nearest_planes(void *arg, int64_t b, int64_t e) {
  const up_job *j = arg;
  const up_axis *ad = &j->ax[0], *ah = &j->ax[1], *aw = &j->ax[2];
  for (int64_t p = b; p < e; p++) {
    const char *x = (const char *)j->x + (size_t)(p * j->in) * j->es;
    char *y = (char *)j->y + (size_t)(p * j->on) * j->es;
    for (int64_t od = 0; od < ad->out; od++)
      for (int64_t oh = 0; oh < ah->out; oh++) {
        const char *row = x + (size_t)(ad->off[od] + ah->off[oh]) * j->es;
        size_t at = (size_t)((od * ah->out + oh) * aw->out);
        switch (j->es) {
        case 1:
          for (int64_t ow = 0; ow < aw->out; ow++) ((uint8_t *)y)[at + ow] = ((const uint8_t *)row)[aw->off[ow]];
          break;
        case 2:
          for (int64_t ow = 0; ow < aw->out; ow++) ((uint16_t *)y)[at + ow] = ((const uint16_t *)row)[aw->off[ow]];
          break;
        case 4:
          for (int64_t ow = 0; ow < aw->out; ow++) ((uint32_t *)y)[at + ow] = ((const uint32_t *)row)[aw->off[ow]];
          break;
        default:
          for (int64_t ow = 0; ow < aw->out; ow++) ((uint64_t *)y)[at + ow] = ((const uint64_t *)row)[aw->off[ow]];
          break;
        }
      }
  }
}

/* The hot loops are built for AVX-512, AVX2 and plain x86-64, chosen when
 * the library loads, and at O3 so that GCC vectorizes them (as conv.c). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#ifdef __SANITIZE_THREAD__ /* ThreadSanitizer: clones' ifunc resolvers would run before it is set up */
#define UP_HOT __attribute__((optimize("O3")))
#else
#define UP_HOT __attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))
#endif
#else
#define UP_HOT
#endif

/* Linear and cubic: out = sum over the D taps of (sum over the H taps of
 * (sum over the W taps of x * w_w) * w_h) * w_d, each sum in tap order
 * (a sum of one term being the term itself, as the weight of a missing dim
 * is 1). Row by row: acc += (row's W sums) * w_h across the output row, so
 * the loops over a row vectorize. */
#define UP_INTERP(T, S)                                                                                                \
  /* acc[ow] (+)= (sum over the W taps of row[off] * w) * wr, for one output row */                                \
  UP_HOT static void up_row_##S(const T *restrict row, const up_axis *aw, T wr, bool first, T *restrict acc) {        \
    int64_t n = aw->out;                                                                                              \
    const int64_t *o0 = aw->off, *o1 = aw->off + n, *o2 = aw->off + 2 * n, *o3 = aw->off + 3 * n;                     \
    const T *w0 = aw->w, *w1 = (const T *)aw->w + n, *w2 = (const T *)aw->w + 2 * n, *w3 = (const T *)aw->w + 3 * n;  \
    if (aw->nt == 2) {                                                                                                \
      if (first)                                                                                                      \
        for (int64_t i = 0; i < n; i++) acc[i] = (row[o0[i]] * w0[i] + row[o1[i]] * w1[i]) * wr;                      \
      else                                                                                                            \
        for (int64_t i = 0; i < n; i++) acc[i] += (row[o0[i]] * w0[i] + row[o1[i]] * w1[i]) * wr;                     \
    } else if (aw->nt == 4) {                                                                                         \
      for (int64_t i = 0; i < n; i++) {                                                                               \
        T v = row[o0[i]] * w0[i];                                                                                     \
        v += row[o1[i]] * w1[i];                                                                                      \
        v += row[o2[i]] * w2[i];                                                                                      \
        v += row[o3[i]] * w3[i];                                                                                      \
        acc[i] = first ? v * wr : acc[i] + v * wr;                                                                    \
      }                                                                                                               \
    } else {                                                                                                          \
      for (int64_t i = 0; i < n; i++) acc[i] = first ? row[o0[i]] * w0[i] * wr : acc[i] + row[o0[i]] * w0[i] * wr;   \
    }                                                                                                                 \
  }                                                                                                                   \
  static void up_interp_##S(void *arg, int64_t b, int64_t e) {                                                        \
    const up_job *j = arg;                                                                                            \
    const up_axis *ad = &j->ax[0], *ah = &j->ax[1], *aw = &j->ax[2];                                                  \
    const T *wd = ad->w, *wh = ah->w;                                                                                 \
    T *acc = ts_rt_malloc((size_t)aw->out * sizeof(T));                                                               \
    if (!acc) { /* out of memory: element by element */                                                              \
      for (int64_t p = b; p < e; p++)                                                                                 \
        for (int64_t od = 0; od < ad->out; od++)                                                                      \
          for (int64_t oh = 0; oh < ah->out; oh++)                                                                    \
            for (int64_t ow = 0; ow < aw->out; ow++) {                                                                \
              const T *x = (const T *)j->x + p * j->in;                                                               \
              T vd = 0;                                                                                               \
              for (int a = 0; a < ad->nt; a++) {                                                                      \
                T vh = 0;                                                                                             \
                for (int h = 0; h < ah->nt; h++) {                                                                    \
                  const T *row = x + ad->off[a * ad->out + od] + ah->off[h * ah->out + oh];                           \
                  T vw = 0;                                                                                           \
                  for (int c = 0; c < aw->nt; c++)                                                                    \
                    vw += row[aw->off[c * aw->out + ow]] * ((const T *)aw->w)[c * aw->out + ow];                      \
                  vh += vw * wh[h * ah->out + oh];                                                                    \
                }                                                                                                     \
                vd += vh * wd[a * ad->out + od];                                                                      \
              }                                                                                                       \
              ((T *)j->y)[p * j->on + (od * ah->out + oh) * aw->out + ow] = vd;                                       \
            }                                                                                                         \
      return;                                                                                                         \
    }                                                                                                                 \
    for (int64_t p = b; p < e; p++) {                                                                                 \
      const T *x = (const T *)j->x + p * j->in;                                                                       \
      T *y = (T *)j->y + p * j->on;                                                                                   \
      for (int64_t od = 0; od < ad->out; od++)                                                                        \
        for (int64_t oh = 0; oh < ah->out; oh++) {                                                                    \
          T *yr = y + (od * ah->out + oh) * aw->out;                                                                  \
          /* one D tap (1-d and 2-d): the H sums go straight to the output row */                                  \
          T *hrow = ad->nt == 1 ? yr : acc;                                                                           \
          for (int a = 0; a < ad->nt; a++) {                                                                          \
            for (int h = 0; h < ah->nt; h++)                                                                          \
              up_row_##S(x + ad->off[a * ad->out + od] + ah->off[h * ah->out + oh], aw, wh[h * ah->out + oh], h == 0, \
                         hrow);                                                                                       \
            if (ad->nt > 1) {                                                                                         \
              T wa = wd[a * ad->out + od];                                                                            \
              if (a == 0)                                                                                             \
                for (int64_t i = 0; i < aw->out; i++) yr[i] = hrow[i] * wa;                                           \
              else                                                                                                    \
                for (int64_t i = 0; i < aw->out; i++) yr[i] += hrow[i] * wa;                                          \
            }                                                                                                         \
          }                                                                                                           \
        }                                                                                                             \
    }                                                                                                                 \
    ts_rt_free(acc);                                                                                                  \
  }
UP_INTERP(float, f32)
UP_INTERP(double, f64)

/* One antialiased pass: rows [b, e) of [rows, nin, inner] resampled along
 * nin to [rows, nout, inner], each output's taps summed in order. */
#define UP_AA_PASS(T, S)                                                                                               \
  static void up_aa_pass_##S(void *arg, int64_t b, int64_t e) {                                                       \
    const up_pass *j = arg;                                                                                           \
    const T *w = j->w;                                                                                                \
    for (int64_t r = b; r < e; r++) {                                                                                 \
      const T *x = (const T *)j->x + r * j->nin * j->inner;                                                           \
      T *y = (T *)j->y + r * j->nout * j->inner;                                                                      \
      for (int64_t o = 0; o < j->nout; o++) {                                                                         \
        const T *wo = w + o * j->nt, *xo = x + j->first[o * j->nt] * j->inner;                                        \
        for (int64_t k = 0; k < j->inner; k++) {                                                                      \
          T v = 0;                                                                                                    \
          for (int64_t t = 0; t < j->cnt[o]; t++) v += xo[t * j->inner + k] * wo[t];                                  \
          y[o * j->inner + k] = v;                                                                                    \
        }                                                                                                             \
      }                                                                                                               \
    }                                                                                                                 \
  }
UP_AA_PASS(float, f32)
UP_AA_PASS(double, f64)

/* The dtype name of ATen's refusal, per mode. */
static const char *up_dispatch_name(up_mode m) {
  switch (m) {
  case UP_NEAREST:
  case UP_NEAREST_EXACT: return "compute_indices_weights_nearest";
  case UP_LINEAR: return "compute_indices_weights_linear";
  case UP_CUBIC: return "compute_indices_weights_cubic";
  default: return "compute_indices_weights_aa";
  }
}

/* Runs mode over x's last nsp dims to sizes osz[nsp] with scales (0:
 * none); x has been checked. */
static ts_rt_tensor *up_run(ts_rt_ctx *c, const ts_rt_tensor *x, int32_t nsp, up_mode mode, bool align,
                            const int64_t *osz, const double *scales) {
  ts_dtype dt = (ts_dtype)x->dtype;
  bool nearest = mode == UP_NEAREST || mode == UP_NEAREST_EXACT, aa = mode == UP_LINEAR_AA || mode == UP_CUBIC_AA;
  ts_dtype wdt = nearest ? dt : nnu_work_dtype(dt);
  bool dbl = wdt == TS_DT_FLOAT64;
  size_t ws = dbl ? sizeof(double) : sizeof(float);
  int32_t nd = x->ndim;
  int64_t ysz[5], in3[3] = {1, 1, 1}, out3[3] = {1, 1, 1};
  for (int32_t i = 0; i < nd; i++) ysz[i] = i < 2 ? x->sizes[i] : osz[i - 2];
  for (int32_t i = 0; i < nsp; i++) in3[3 - nsp + i] = x->sizes[2 + i], out3[3 - nsp + i] = osz[i];
  ts_rt_tensor *xc = nnu_contig_as(c, x, wdt);
  if (!xc) return NULL;
  ts_rt_tensor *y = ts_rt_tensor_new(c, wdt, nd, ysz, false);
  int64_t planes = x->sizes[0] * x->sizes[1];
  up_job j = {ts_rt_tensor_data(xc), y ? ts_rt_tensor_data(y) : NULL, ts_dtype_size(wdt), in3[0] * in3[1] * in3[2],
              out3[0] * out3[1] * out3[2], {{0}}};
  /* taps: nearest 1, linear 2, cubic 4, antialiased ceil(support) * 2 + 1 */
  int nt[3] = {1, 1, 1};
  double sc[3] = {0, 0, 0};
  for (int32_t i = 0; i < nsp; i++) sc[3 - nsp + i] = scales[i];
  int64_t need = 0;
  bool too_wide = false;
  for (int i = 0; i < 3; i++) {
    bool real = i >= 3 - nsp;
    if (real && (mode == UP_LINEAR || mode == UP_CUBIC)) nt[i] = mode == UP_LINEAR ? 2 : 4;
    if (real && aa) {
      double s = dbl ? up_scale_f64(in3[i], out3[i], align, sc[i]) : up_scale_f32(in3[i], out3[i], align, sc[i]);
      double support = (mode == UP_CUBIC_AA ? 4 : 2) * 0.5 * (s >= 1.0 ? s : 1.0);
      /* a filter over more than a million inputs per output: refused rather than sized */
      too_wide = too_wide || !(support < 1e6);
      nt[i] = too_wide ? 1 : (int)ceil(dbl ? support : (double)(float)support) * 2 + 1;
    }
    need += out3[i] * nt[i] + out3[i];
  }
  int64_t *ibuf = y && !too_wide ? ts_rt_malloc((size_t)need * sizeof(int64_t)) : NULL;
  void *wbuf = ibuf ? ts_rt_malloc((size_t)need * ws) : NULL;
  if (!wbuf) {
    ts_rt_free(ibuf);
    ts_rt_tensor_release(xc);
    if (y) {
      ts_rt_tensor_release(y);
      if (too_wide) ts_rt_fail(c, "upsample: a scale factor too small to antialias");
      else ts_rt_oom(c);
    }
    return NULL;
  }
  int64_t *cnt[3];
  int64_t at = 0;
  for (int i = 0; i < 3; i++) {
    up_axis *a = &j.ax[i];
    a->in = in3[i], a->out = out3[i], a->nt = nt[i];
    /* element offsets within a plane; the antialiased passes take input indices */
    a->stride = aa ? 1 : i == 0 ? in3[1] * in3[2] : i == 1 ? in3[2] : 1;
    a->off = ibuf + at, a->w = (char *)wbuf + (size_t)at * ws;
    cnt[i] = ibuf + at + out3[i] * nt[i];
    at += out3[i] * nt[i] + out3[i];
    bool real = i >= 3 - nsp;
    if (!real) {
      a->off[0] = 0;
      if (dbl) ((double *)a->w)[0] = 1;
      else ((float *)a->w)[0] = 1;
    } else if (aa) {
      if (dbl) up_axis_fill_aa_f64(a, cnt[i], mode == UP_CUBIC_AA, align, sc[i]);
      else up_axis_fill_aa_f32(a, cnt[i], mode == UP_CUBIC_AA, align, sc[i]);
    } else if (dbl) {
      up_axis_fill_f64(a, mode, align, sc[i], dt);
    } else {
      up_axis_fill_f32(a, mode, align, sc[i], dt);
    }
  }
  int64_t grain = 32768 / (j.on ? j.on : 1) + 1;
  ts_rt_tensor *res = y;
  if (planes > 0 && j.on > 0) {
    if (nearest) {
      ts_rt_parallel_for(c, planes, grain, up_nearest_planes, &j);
    } else if (!aa) {
      ts_rt_parallel_for(c, planes, grain, dbl ? up_interp_f64 : up_interp_f32, &j);
    } else {
      /* one dim at a time, the last first, through a buffer when two dims change (ATen copies when none does) */
      const void *src = j.x;
      int64_t cur[3] = {in3[0], in3[1], in3[2]};
      int passes = 0, done = 0;
      for (int i = 0; i < 3; i++) passes += in3[i] != out3[i];
      ts_rt_tensor *prev = NULL;
      for (int i = 2; i >= 0 && res; i--) {
        if (in3[i] == out3[i]) continue;
        void *dst = ts_rt_tensor_data(y);
        ts_rt_tensor *tmp = NULL;
        if (++done < passes) {
          int64_t tsz[4] = {planes, i == 0 ? out3[0] : cur[0], i == 1 ? out3[1] : cur[1], i == 2 ? out3[2] : cur[2]};
          if (!(tmp = ts_rt_tensor_new(c, wdt, 4, tsz, false))) {
            res = NULL;
            break;
          }
          dst = ts_rt_tensor_data(tmp);
        }
        int64_t outer = planes, inner = 1;
        for (int k = 0; k < i; k++) outer *= cur[k];
        for (int k = i + 1; k < 3; k++) inner *= cur[k];
        up_pass pp = {src, dst, in3[i], out3[i], inner, j.ax[i].off, cnt[i], j.ax[i].w, nt[i]};
        ts_rt_parallel_for(c, outer, 32768 / (out3[i] * inner) + 1,
                           dbl ? up_aa_pass_f64 : up_aa_pass_f32, &pp);
        if (prev) ts_rt_tensor_release(prev);
        prev = tmp;
        src = dst;
        cur[i] = out3[i];
      }
      if (prev) ts_rt_tensor_release(prev);
      if (passes == 0) memcpy(ts_rt_tensor_data(y), j.x, (size_t)(planes * j.on) * ws);
    }
  }
  ts_rt_free(ibuf);
  ts_rt_free(wbuf);
  ts_rt_tensor_release(xc);
  if (!res) {
    ts_rt_tensor_release(y);
    return NULL;
  }
  return nnu_cast_owned(c, y, dt);
}

/* Where one upsample op finds its arguments. */
typedef struct up_op {
  int32_t nsp;
  up_mode mode;
  bool align; /* takes align_corners (argument 2) */
  bool vec;   /* the .vec form: output_size?, [align_corners,] scale_factors? */
} up_op;

/* Checks as ATen's upsample_{1,2,3}d_common_check and the kernel's
 * non-empty check; runs. */
static bool up_k(ts_rt_ctx *c, ts_rt_call *call, up_op op) {
  static const char *const dim_names[3] = {"D", "H", "W"};
  ts_rt_tensor *x = NULL;
  bool align = false;
  int64_t osz[8];
  uint32_t no = 0;
  double scales[3] = {0, 0, 0};
  int32_t nsp = op.nsp;
  char sh[256];
  if (!ts_rt_arg_tensor(c, call, 0, &x) || (op.align && !ts_rt_arg_bool(c, call, 2, &align))) return false;
  uint32_t first_scale = op.align ? 3 : 2;
  if (op.vec) {
    if (!ts_rt_arg_check(c, call, first_scale)) return false;
    bool has_o = call->in[1].tag != TS_IV_NONE, has_s = call->in[first_scale].tag != TS_IV_NONE;
    int32_t spatial = x->ndim - 2;
    if (has_o == has_s) return ts_rt_fail(c, "Must specify exactly one of output_size and scale_factors");
    if (has_o) {
      if (!ts_rt_arg_ints(c, call, 1, osz, 8, &no, 0)) return false;
      if ((int32_t)no != spatial)
        return ts_rt_fail(c, "Expected static_cast<int64_t>(output_size->size()) == spatial_dimensions to be true, but "
                             "got false.  (Could this error message be improved?  If so, please report an enhancement "
                             "request to PyTorch.)");
    } else {
      ts_rt_list *l = NULL;
      if (!ts_rt_arg_list(c, call, first_scale, &l)) return false;
      if ((int32_t)l->n != spatial)
        return ts_rt_fail(c, "Expected static_cast<int64_t>(scale_factors->size()) == spatial_dimensions to be true, "
                             "but got false.  (Could this error message be improved?  If so, please report an "
                             "enhancement request to PyTorch.)");
      if (l->n > 8) return ts_rt_fail(c, "upsample: too many scale factors");
      double sf[8];
      for (uint32_t i = 0; i < l->n; i++) {
        ts_iv v = l->items[i];
        if (v.tag == TS_IV_DOUBLE) sf[i] = v.u.d;
        else if (v.tag == TS_IV_INT) sf[i] = (double)v.u.i;
        else return ts_rt_fail(c, "scale_factors: expected List[float]");
        double od = (double)x->sizes[2 + i] * sf[i];
        /* ATen casts to int64 (x86 gives INT64_MIN out of range) and refuses what a SymInt cannot hold */
        int64_t v64 = od >= -9.2233720368547758e18 && od < 9.2233720368547758e18 ? (int64_t)od : INT64_MIN;
        if (v64 <= -4611686018427387905LL)
          return ts_rt_fail(c, "IntArrayRef contains an int that cannot be represented as a SymInt: %lld",
                            (long long)v64);
        osz[i] = v64;
      }
      no = l->n;
      for (int32_t i = 0; i < nsp; i++) {
        if ((uint32_t)i >= l->n)
          return ts_rt_fail(c, "ArrayRef: invalid index Index = %d; Length = %u", (int)i, (unsigned)l->n);
        scales[i] = sf[i];
      }
    }
  } else {
    if (!ts_rt_arg_ints(c, call, 1, osz, 8, &no, 0)) return false;
    for (int32_t i = 0; i < nsp; i++) {
      uint32_t k = first_scale + (uint32_t)i;
      if (!ts_rt_arg_check(c, call, k)) return false;
      if (call->in[k].tag != TS_IV_NONE && !ts_rt_arg_double(c, call, k, &scales[i])) return false;
    }
  }
  if ((int32_t)no != nsp)
    return ts_rt_fail(c, "It is expected output_size equals to %d, but got size %u", (int)nsp, (unsigned)no);
  if (x->ndim != nsp + 2)
    return ts_rt_fail(c, "It is expected input_size equals to %d, but got size %d", (int)(nsp + 2), (int)x->ndim);
  bool pos = true;
  for (int32_t i = 0; i < nsp; i++) pos = pos && x->sizes[2 + i] > 0 && osz[i] > 0;
  if (!pos) {
    char a[128], b[128];
    size_t na = 0, nb = 0;
    for (int32_t i = 0; i < nsp; i++) {
      const char *dn = dim_names[3 - nsp + i];
      na += (size_t)snprintf(a + na, sizeof a - na, "%s%s: %lld", i ? ", " : "", dn, (long long)x->sizes[2 + i]);
      nb += (size_t)snprintf(b + nb, sizeof b - nb, "%s%s: %lld", i ? ", " : "", dn, (long long)osz[i]);
    }
    return ts_rt_fail(c, "Input and output sizes should be greater than 0, but got input (%s)%s output (%s)", a,
                      nsp == 1 ? " and" : "", b);
  }
  if (ts_rt_tensor_numel(x) == 0 && x->sizes[1] == 0) {
    nnu_shape_str(sh, sizeof sh, x->ndim, x->sizes);
    return ts_rt_fail(c, "Non-empty %dD data tensor expected but got a tensor with sizes %s", (int)(nsp + 2), sh);
  }
  ts_dtype dt = (ts_dtype)x->dtype;
  bool okdt = dt == TS_DT_FLOAT32 || dt == TS_DT_FLOAT64;
  switch (op.mode) {
  case UP_NEAREST: okdt = okdt || dt == TS_DT_BFLOAT16 || dt == TS_DT_UINT8; break;
  case UP_NEAREST_EXACT: okdt = okdt || dt == TS_DT_UINT8; break;
  case UP_LINEAR:
  case UP_CUBIC: okdt = okdt || dt == TS_DT_BFLOAT16; break;
  default: break;
  }
  if (!okdt) return nnu_not_impl(c, up_dispatch_name(op.mode), dt);
  return nnu_ret(call, up_run(c, x, nsp, op.mode, align, osz, scales));
}

#define UP_KERNELS(NAME, NSP, MODE, ALIGN)                                                                            \
  static bool up_k_##NAME(ts_rt_ctx *c, ts_rt_call *call) { return up_k(c, call, (up_op){NSP, MODE, ALIGN, false}); } \
  static bool up_k_##NAME##_vec(ts_rt_ctx *c, ts_rt_call *call) {                                                     \
    return up_k(c, call, (up_op){NSP, MODE, ALIGN, true});                                                            \
  }
UP_KERNELS(nearest1d, 1, UP_NEAREST, false)
UP_KERNELS(nearest2d, 2, UP_NEAREST, false)
UP_KERNELS(nearest3d, 3, UP_NEAREST, false)
UP_KERNELS(nearest_exact1d, 1, UP_NEAREST_EXACT, false)
UP_KERNELS(nearest_exact2d, 2, UP_NEAREST_EXACT, false)
UP_KERNELS(nearest_exact3d, 3, UP_NEAREST_EXACT, false)
UP_KERNELS(linear1d, 1, UP_LINEAR, true)
UP_KERNELS(bilinear2d, 2, UP_LINEAR, true)
UP_KERNELS(trilinear3d, 3, UP_LINEAR, true)
UP_KERNELS(bicubic2d, 2, UP_CUBIC, true)
UP_KERNELS(bilinear2d_aa, 2, UP_LINEAR_AA, true)
UP_KERNELS(bicubic2d_aa, 2, UP_CUBIC_AA, true)

/* the out= forms nn.c had before this file (the other ops' come from the
 * generic out= adapter) */
NNU_OUT_KERNEL(up_k_nearest2d_out, up_k_nearest2d, 1)
NNU_OUT_KERNEL(up_k_nearest2d_vec_out, up_k_nearest2d_vec, 1)
NNU_OUT_KERNEL(up_k_bilinear2d_out, up_k_bilinear2d, 1)
NNU_OUT_KERNEL(up_k_bilinear2d_vec_out, up_k_bilinear2d_vec, 1)

const ts_rt_kernel_def ts_rt_kernels_upsample[] = {
    {"aten::upsample_nearest1d", up_k_nearest1d},
    {"aten::upsample_nearest1d.vec", up_k_nearest1d_vec},
    {"aten::upsample_nearest2d", up_k_nearest2d},
    {"aten::upsample_nearest2d.vec", up_k_nearest2d_vec},
    {"aten::upsample_nearest2d.out", up_k_nearest2d_out},
    {"aten::upsample_nearest2d.vec_out", up_k_nearest2d_vec_out},
    {"aten::upsample_nearest3d", up_k_nearest3d},
    {"aten::upsample_nearest3d.vec", up_k_nearest3d_vec},
    {"aten::_upsample_nearest_exact1d", up_k_nearest_exact1d},
    {"aten::_upsample_nearest_exact1d.vec", up_k_nearest_exact1d_vec},
    {"aten::_upsample_nearest_exact2d", up_k_nearest_exact2d},
    {"aten::_upsample_nearest_exact2d.vec", up_k_nearest_exact2d_vec},
    {"aten::_upsample_nearest_exact3d", up_k_nearest_exact3d},
    {"aten::_upsample_nearest_exact3d.vec", up_k_nearest_exact3d_vec},
    {"aten::upsample_linear1d", up_k_linear1d},
    {"aten::upsample_linear1d.vec", up_k_linear1d_vec},
    {"aten::upsample_bilinear2d", up_k_bilinear2d},
    {"aten::upsample_bilinear2d.vec", up_k_bilinear2d_vec},
    {"aten::upsample_bilinear2d.out", up_k_bilinear2d_out},
    {"aten::upsample_bilinear2d.vec_out", up_k_bilinear2d_vec_out},
    {"aten::upsample_trilinear3d", up_k_trilinear3d},
    {"aten::upsample_trilinear3d.vec", up_k_trilinear3d_vec},
    {"aten::upsample_bicubic2d", up_k_bicubic2d},
    {"aten::upsample_bicubic2d.vec", up_k_bicubic2d_vec},
    {"aten::_upsample_bilinear2d_aa", up_k_bilinear2d_aa},
    {"aten::_upsample_bilinear2d_aa.vec", up_k_bilinear2d_aa_vec},
    {"aten::_upsample_bicubic2d_aa", up_k_bicubic2d_aa},
    {"aten::_upsample_bicubic2d_aa.vec", up_k_bicubic2d_aa_vec},
    {NULL, NULL},
};
