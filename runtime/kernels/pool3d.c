/* runtime/kernels/pool3d.c: 3-d pooling (max_pool3d and its indices,
 * avg_pool3d, adaptive_avg_pool3d, adaptive_max_pool3d) over (N, C, D, H,
 * W) or unbatched (C, D, H, W) inputs, and the forms with indices of 1-d
 * and 2-d max pooling (max_pool1d/2d_with_indices, adaptive_max_pool1d),
 * which run as 3-d with the missing leading dims of size 1. Argument checks
 * in ATen's order and words (pooling_output_shape, then pool3d_shape_check
 * or pool2d_shape_check). Computed per plane in float (float32, bfloat16,
 * float16), double (float64), int64 for avg_pool3d (ATen divides an int64
 * sum by the count, truncating). */
#include <math.h>

#include "nn_util.h"

/* The hot loop is built for AVX-512, AVX2 and plain x86-64, chosen when the
 * library loads, and at O3 so that GCC vectorizes it (as conv.c). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#ifdef __SANITIZE_THREAD__ /* ThreadSanitizer: clones' ifunc resolvers would run before it is set up */
#define P3_HOT __attribute__((optimize("O3")))
#else
#define P3_HOT __attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))
#endif
#else
#define P3_HOT
#endif

/* One pooling over contiguous planes: input D x H x W, output OD x OH x
 * OW; window k, stride s, padding p, dilation d per dim (D, H, W). */
typedef struct p3_job {
  const void *x;
  void *y;
  int64_t *idx; /* max: flat index of the maximum within its input plane; NULL: none wanted */
  int64_t D, H, W, OD, OH, OW;
  int64_t k[3], s[3], p[3], d[3];
  bool count_include_pad;
  int64_t divisor; /* 0: none */
} p3_job;

/* The input window [start, end) of adaptive output index o, as ATen. */
static int64_t p3_start(int64_t o, int64_t out, int64_t in) { return o * in / out; }
static int64_t p3_end(int64_t o, int64_t out, int64_t in) { return ((o + 1) * in + out - 1) / out; }

/* The first input index of a max window and its end (exclusive), as ATen:
 * the start moved forward by whole dilations past the padding. */
static void p3_window(int64_t o, int64_t s, int64_t p, int64_t k, int64_t d, int64_t in, int64_t *b, int64_t *e) {
  int64_t start = o * s - p, end = start + (k - 1) * d + 1;
  while (start < 0) start += d;
  *b = start;
  *e = end < in ? end : in;
}

/* Max, adaptive max, average and adaptive average over planes [b, e) for
 * float and double; NaN wins a max (ATen: val > max || isnan(val)), and
 * the index starts at the window's first element. */
#define P3_DEFINE(T, S)                                                                                                \
  static void p3_max_##S(void *arg, int64_t b, int64_t e) {                                                           \
    const p3_job *j = arg;                                                                                            \
    int64_t in = j->D * j->H * j->W, on = j->OD * j->OH * j->OW;                                                      \
    for (int64_t p = b; p < e; p++) {                                                                                 \
      const T *x = (const T *)j->x + p * in;                                                                          \
      T *y = (T *)j->y + p * on;                                                                                      \
      int64_t *ix = j->idx ? j->idx + p * on : NULL;                                                                  \
      for (int64_t od = 0; od < j->OD; od++) {                                                                        \
        int64_t t0, t1;                                                                                               \
        p3_window(od, j->s[0], j->p[0], j->k[0], j->d[0], j->D, &t0, &t1);                                            \
        for (int64_t oh = 0; oh < j->OH; oh++) {                                                                      \
          int64_t h0, h1;                                                                                             \
          p3_window(oh, j->s[1], j->p[1], j->k[1], j->d[1], j->H, &h0, &h1);                                          \
          for (int64_t ow = 0; ow < j->OW; ow++) {                                                                    \
            int64_t w0, w1;                                                                                           \
            p3_window(ow, j->s[2], j->p[2], j->k[2], j->d[2], j->W, &w0, &w1);                                        \
            T m = -INFINITY;                                                                                          \
            int64_t mi = (t0 * j->H + h0) * j->W + w0;                                                                \
            for (int64_t it = t0; it < t1; it += j->d[0])                                                             \
              for (int64_t ih = h0; ih < h1; ih += j->d[1]) {                                                         \
                const T *row = x + (it * j->H + ih) * j->W;                                                           \
                for (int64_t iw = w0; iw < w1; iw += j->d[2]) {                                                       \
                  T v = row[iw];                                                                                      \
                  if (v > m || isnan(v)) m = v, mi = (it * j->H + ih) * j->W + iw;                                    \
                }                                                                                                     \
              }                                                                                                       \
            int64_t at = (od * j->OH + oh) * j->OW + ow;                                                              \
            y[at] = m;                                                                                                \
            if (ix) ix[at] = mi;                                                                                      \
          }                                                                                                           \
        }                                                                                                             \
      }                                                                                                               \
    }                                                                                                                 \
  }                                                                                                                   \
  static void p3_amax_##S(void *arg, int64_t b, int64_t e) {                                                          \
    const p3_job *j = arg;                                                                                            \
    int64_t in = j->D * j->H * j->W, on = j->OD * j->OH * j->OW;                                                      \
    for (int64_t p = b; p < e; p++) {                                                                                 \
      const T *x = (const T *)j->x + p * in;                                                                          \
      T *y = (T *)j->y + p * on;                                                                                      \
      int64_t *ix = j->idx + p * on;                                                                                  \
      for (int64_t od = 0; od < j->OD; od++) {                                                                        \
        int64_t t0 = p3_start(od, j->OD, j->D), t1 = p3_end(od, j->OD, j->D);                                         \
        for (int64_t oh = 0; oh < j->OH; oh++) {                                                                      \
          int64_t h0 = p3_start(oh, j->OH, j->H), h1 = p3_end(oh, j->OH, j->H);                                       \
          for (int64_t ow = 0; ow < j->OW; ow++) {                                                                    \
            int64_t w0 = p3_start(ow, j->OW, j->W), w1 = p3_end(ow, j->OW, j->W);                                     \
            T m = -INFINITY;                                                                                          \
            int64_t mi = (t0 * j->H + h0) * j->W + w0;                                                                \
            for (int64_t it = t0; it < t1; it++)                                                                      \
              for (int64_t ih = h0; ih < h1; ih++)                                                                    \
                for (int64_t iw = w0; iw < w1; iw++) {                                                                \
                  T v = x[(it * j->H + ih) * j->W + iw];                                                              \
                  if (v > m || isnan(v)) m = v, mi = (it * j->H + ih) * j->W + iw;                                    \
                }                                                                                                     \
            int64_t at = (od * j->OH + oh) * j->OW + ow;                                                              \
            y[at] = m;                                                                                                \
            ix[at] = mi;                                                                                              \
          }                                                                                                           \
        }                                                                                                             \
      }                                                                                                               \
    }                                                                                                                 \
  }                                                                                                                   \
  /* ATen's adaptive_avg_pool3d divides the sum by each window side in turn */                                       \
  static void p3_aavg_##S(void *arg, int64_t b, int64_t e) {                                                          \
    const p3_job *j = arg;                                                                                            \
    int64_t in = j->D * j->H * j->W, on = j->OD * j->OH * j->OW;                                                      \
    for (int64_t p = b; p < e; p++) {                                                                                 \
      const T *x = (const T *)j->x + p * in;                                                                          \
      T *y = (T *)j->y + p * on;                                                                                      \
      for (int64_t od = 0; od < j->OD; od++) {                                                                        \
        int64_t t0 = p3_start(od, j->OD, j->D), t1 = p3_end(od, j->OD, j->D);                                         \
        for (int64_t oh = 0; oh < j->OH; oh++) {                                                                      \
          int64_t h0 = p3_start(oh, j->OH, j->H), h1 = p3_end(oh, j->OH, j->H);                                       \
          for (int64_t ow = 0; ow < j->OW; ow++) {                                                                    \
            int64_t w0 = p3_start(ow, j->OW, j->W), w1 = p3_end(ow, j->OW, j->W);                                     \
            T s = 0;                                                                                                  \
            for (int64_t it = t0; it < t1; it++)                                                                      \
              for (int64_t ih = h0; ih < h1; ih++)                                                                    \
                for (int64_t iw = w0; iw < w1; iw++) s += x[(it * j->H + ih) * j->W + iw];                            \
            y[(od * j->OH + oh) * j->OW + ow] = s / (T)(t1 - t0) / (T)(h1 - h0) / (T)(w1 - w0);                       \
          }                                                                                                           \
        }                                                                                                             \
      }                                                                                                               \
    }                                                                                                                 \
  }

P3_DEFINE(float, f32)
P3_DEFINE(double, f64)

/* adaptive_avg_pool3d to 1x1x1 is ATen's mean over each plane: the sum
 * (here in 16 interleaved partial sums, which vectorize, as ATen's sum
 * has partial sums of its own) divided by the count. */
#define P3_MEAN(T, S)                                                                                                  \
  P3_HOT static T p3_sum_##S(const T *x, int64_t n) {                                                                 \
    T acc[16] = {0};                                                                                                  \
    int64_t i = 0;                                                                                                    \
    for (; i + 16 <= n; i += 16)                                                                                      \
      for (int l = 0; l < 16; l++) acc[l] += x[i + l];                                                                \
    for (int l = 0; i < n; i++, l++) acc[l] += x[i];                                                                  \
    for (int w = 8; w > 0; w /= 2)                                                                                    \
      for (int l = 0; l < w; l++) acc[l] += acc[l + w];                                                               \
    return acc[0];                                                                                                    \
  }                                                                                                                   \
  static void p3_mean_##S(void *arg, int64_t b, int64_t e) {                                                          \
    const p3_job *j = arg;                                                                                            \
    int64_t in = j->D * j->H * j->W;                                                                                  \
    for (int64_t p = b; p < e; p++) ((T *)j->y)[p] = p3_sum_##S((const T *)j->x + p * in, in) / (T)in;               \
  }

P3_MEAN(float, f32)
P3_MEAN(double, f64)

/* avg_pool3d as ATen's avg_pool3d_out_frame: the pool size counts the
 * padding inside the padded input, the sum is over the part in the input,
 * in T (int64: truncating division). */
#define P3_AVG(T, S)                                                                                                   \
  static void p3_avg_##S(void *arg, int64_t b, int64_t e) {                                                           \
    const p3_job *j = arg;                                                                                            \
    int64_t in = j->D * j->H * j->W, on = j->OD * j->OH * j->OW;                                                      \
    int64_t lim[3] = {j->D, j->H, j->W};                                                                              \
    for (int64_t p = b; p < e; p++) {                                                                                 \
      const T *x = (const T *)j->x + p * in;                                                                          \
      T *y = (T *)j->y + p * on;                                                                                      \
      for (int64_t od = 0; od < j->OD; od++)                                                                          \
        for (int64_t oh = 0; oh < j->OH; oh++)                                                                        \
          for (int64_t ow = 0; ow < j->OW; ow++) {                                                                    \
            int64_t o[3] = {od, oh, ow}, st[3], en[3], pool = 1, n = 1;                                               \
            for (int i = 0; i < 3; i++) {                                                                             \
              st[i] = o[i] * j->s[i] - j->p[i];                                                                       \
              en[i] = st[i] + j->k[i] < lim[i] + j->p[i] ? st[i] + j->k[i] : lim[i] + j->p[i];                        \
              pool *= en[i] - st[i];                                                                                  \
              st[i] = st[i] > 0 ? st[i] : 0;                                                                          \
              en[i] = en[i] < lim[i] ? en[i] : lim[i];                                                                \
              n *= en[i] > st[i] ? en[i] - st[i] : 0;                                                                 \
            }                                                                                                         \
            T *out = y + (od * j->OH + oh) * j->OW + ow;                                                              \
            if (n == 0) {                                                                                             \
              *out = 0;                                                                                               \
              continue;                                                                                               \
            }                                                                                                         \
            T sum = 0;                                                                                                \
            for (int64_t it = st[0]; it < en[0]; it++)                                                                \
              for (int64_t ih = st[1]; ih < en[1]; ih++)                                                              \
                for (int64_t iw = st[2]; iw < en[2]; iw++) sum += x[(it * j->H + ih) * j->W + iw];                    \
            int64_t div = j->divisor ? j->divisor : j->count_include_pad ? pool : n;                                  \
            *out = sum / (T)div;                                                                                      \
          }                                                                                                           \
    }                                                                                                                 \
  }

P3_AVG(float, f32)
P3_AVG(double, f64)
P3_AVG(int64_t, i64)

typedef enum p3_kind { P3_MAX, P3_AVG, P3_AAVG, P3_AMAX, P3_MEAN } p3_kind;

/* Runs one pooling kind over x (its last 3 dims pooled; nsp + 1 or nsp +
 * 2 dims, the missing leading spatial dims of size 1 in j) into a new
 * tensor of x's dtype with j's output sizes; indices (P3_MAX when wanted,
 * P3_AMAX always) into *indices. x has been checked. */
static ts_rt_tensor *p3_run(ts_rt_ctx *c, const ts_rt_tensor *x, int32_t nsp, p3_job *j, p3_kind kind,
                            ts_rt_tensor **indices) {
  ts_dtype dt = (ts_dtype)x->dtype;
  ts_dtype wdt = dt == TS_DT_INT64 && kind == P3_AVG ? TS_DT_INT64 : nnu_work_dtype(dt);
  int32_t nd = x->ndim;
  int64_t osz[5], o3[3] = {j->OD, j->OH, j->OW};
  for (int32_t i = 0; i < nd - nsp; i++) osz[i] = x->sizes[i];
  for (int32_t i = 0; i < nsp; i++) osz[nd - nsp + i] = o3[3 - nsp + i];
  ts_rt_tensor *xc = nnu_contig_as(c, x, wdt);
  if (!xc) return NULL;
  ts_rt_tensor *y = ts_rt_tensor_new(c, wdt, nd, osz, false);
  ts_rt_tensor *ix = y && indices ? ts_rt_tensor_new(c, TS_DT_INT64, nd, osz, false) : NULL;
  if (!y || (indices && !ix)) {
    ts_rt_tensor_release(xc);
    if (y) ts_rt_tensor_release(y);
    return NULL;
  }
  j->x = ts_rt_tensor_data(xc);
  j->y = ts_rt_tensor_data(y);
  j->idx = ix ? ts_rt_tensor_data(ix) : NULL;
  int64_t planes = 1;
  for (int32_t i = 0; i < nd - nsp; i++) planes *= x->sizes[i];
  int64_t on = j->OD * j->OH * j->OW, win = kind == P3_MAX || kind == P3_AVG ? j->k[0] * j->k[1] * j->k[2] : 1;
  int64_t work = on * win + j->D * j->H * j->W;
  int64_t grain = 32768 / (work ? work : 1) + 1;
  ts_rt_range_fn fn = NULL;
  switch (kind) {
  case P3_MAX: fn = wdt == TS_DT_FLOAT64 ? p3_max_f64 : p3_max_f32; break;
  case P3_AMAX: fn = wdt == TS_DT_FLOAT64 ? p3_amax_f64 : p3_amax_f32; break;
  case P3_AAVG: fn = wdt == TS_DT_FLOAT64 ? p3_aavg_f64 : p3_aavg_f32; break;
  case P3_MEAN: fn = wdt == TS_DT_FLOAT64 ? p3_mean_f64 : p3_mean_f32; break;
  case P3_AVG: fn = wdt == TS_DT_INT64 ? p3_avg_i64 : wdt == TS_DT_FLOAT64 ? p3_avg_f64 : p3_avg_f32; break;
  }
  if (on > 0) ts_rt_parallel_for(c, planes, grain, fn, j);
  ts_rt_tensor_release(xc);
  if (indices) *indices = ix;
  return nnu_cast_owned(c, y, dt);
}

/* ATen's pooling_output_shape, with its checks: false (ctx failed) when it
 * refuses. */
static bool p3_out_size(ts_rt_ctx *c, int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode,
                        int64_t *out) {
  if (stride == 0) return ts_rt_fail(c, "stride should not be zero");
  if (pad < 0) return ts_rt_fail(c, "pad must be non-negative, but got pad: %lld", (long long)pad);
  if (pad > k / 2)
    return ts_rt_fail(c, "pad should be at most half of kernel size, but got pad=%lld and kernel_size=%lld",
                      (long long)pad, (long long)k);
  int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t q = num / stride;
  if ((num % stride != 0) && ((num < 0) != (stride < 0))) q--; /* floor division */
  int64_t o = q + 1;
  if (ceil_mode && (o - 1) * stride >= in + pad) o--;
  *out = o;
  return true;
}

/* Reads an int[nsp] pooling argument: 1 or nsp values (none too when
 * allow_empty: *n is then 0), else fails with msg (1-d: exactly one
 * value, msg then gets " (got N)"). */
static bool p3_list(ts_rt_ctx *c, ts_rt_call *call, uint32_t i, int32_t nsp, bool allow_empty, const char *msg,
                    int64_t *out, uint32_t *n) {
  int64_t v[8];
  if (!ts_rt_arg_ints(c, call, i, v, 8, n, (uint32_t)nsp)) return false;
  if (*n == 0 && allow_empty) return true;
  if (nsp == 1 && *n != 1) return ts_rt_fail(c, "%s (got %u)", msg, (unsigned)*n);
  if (*n != 1 && (int32_t)*n != nsp) return ts_rt_fail(c, "%s", msg);
  for (int32_t k = 0; k < nsp; k++) out[k] = *n == 1 ? v[0] : v[k];
  return true;
}

/* The input's sizes as "2x1x4x4" (its last nsp + 1 dims) for "Given input
 * size: (...)". */
static void p3_dims_str(char *buf, size_t cap, const int64_t *v, int32_t n) {
  size_t k = 0;
  for (int32_t i = 0; i < n && k < cap; i++) k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? "x" : "", (long long)v[i]);
}

/* max_pool3d(_with_indices) (nsp 3), max_pool2d_with_indices (2),
 * max_pool1d_with_indices (1): (self, kernel_size, stride, padding,
 * dilation, ceil_mode); avg_pool3d (avg): (self, kernel_size, stride,
 * padding, ceil_mode, count_include_pad, divisor_override). */
static bool p3_k_pool(ts_rt_ctx *c, ts_rt_call *call, int32_t nsp, bool avg, bool with_indices) {
  static const char *const count[4] = {"", "one", "two", "three"};
  ts_rt_tensor *x = NULL;
  int64_t k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0, 0, 0}, d[3] = {1, 1, 1};
  int32_t off = 3 - (nsp == 1 ? 2 : nsp); /* 1-d runs as 2-d: its messages are 2-d's */
  int64_t *kk = k + 3 - nsp, *ss = s + 3 - nsp, *pp = p + 3 - nsp, *dd = d + 3 - nsp;
  uint32_t nk = 0, ns = 0, np = 0, ndl = 0;
  bool ceil_mode = false, cip = true;
  int64_t divisor = 0;
  const char *op = avg ? "avg_pool3d" : nsp == 3 ? "max_pool3d" : nsp == 2 ? "max_pool2d" : "max_pool1d";
  char m1[128], m2[128], m3[128], m4[128];
  if (avg) {
    snprintf(m1, sizeof m1, "%s: kernel_size must be a single int, or a tuple of three ints", op);
    snprintf(m2, sizeof m2, "%s: stride must be omitted, a single int, or a tuple of three ints", op);
    snprintf(m3, sizeof m3, "%s: padding must be a single int, or a tuple of three ints", op);
  } else if (nsp == 1) {
    snprintf(m1, sizeof m1, "max_pool1d() argument 'kernel_size' should contain one int");
    snprintf(m2, sizeof m2, "max_pool1d() argument 'stride' should contain one int");
    snprintf(m3, sizeof m3, "max_pool1d() argument 'padding' should contain one int");
    snprintf(m4, sizeof m4, "max_pool1d() argument 'dilation' should contain one int");
  } else {
    snprintf(m1, sizeof m1, "%s: kernel_size must either be a single int, or a tuple of %s ints", op, count[nsp]);
    snprintf(m2, sizeof m2, "%s: stride must either be omitted, a single int, or a tuple of %s ints", op,
             count[nsp]);
    snprintf(m3, sizeof m3, "%s: padding must be either be a single int, or a tuple of %s ints", op, count[nsp]);
    snprintf(m4, sizeof m4, "%s: dilation must be either a single int, or a tuple of %s ints", op, count[nsp]);
  }
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !p3_list(c, call, 1, nsp, false, m1, kk, &nk) ||
      !p3_list(c, call, 2, nsp, true, m2, ss, &ns) || !p3_list(c, call, 3, nsp, false, m3, pp, &np))
    return false;
  if (ns == 0) memcpy(ss, kk, (size_t)nsp * sizeof(int64_t));
  if (avg) {
    bool has = false;
    if (!ts_rt_arg_bool(c, call, 4, &ceil_mode) || !ts_rt_arg_bool(c, call, 5, &cip) ||
        !ts_rt_arg_opt_int(c, call, 6, &divisor, &has))
      return false;
    if (has && divisor == 0) return ts_rt_fail(c, "divisor must be not zero");
  } else if (!p3_list(c, call, 4, nsp, false, m4, dd, &ndl) || !ts_rt_arg_bool(c, call, 5, &ceil_mode)) {
    return false;
  }
  int32_t nd = x->ndim;
  if (nsp == 1 && nd != 2 && nd != 3)
    return ts_rt_fail(c, "Expected 2 to 3 dimensions, but got %d-dimensional tensor for argument #1 'self' (while "
                         "checking arguments for max_pool1d)",
                      (int)nd);
  if (nd != nsp + 1 && nd != nsp + 2)
    return ts_rt_fail(c, "non-empty %dD or %dD (batch mode) tensor expected for input", (int)(nsp + 1), (int)(nsp + 2));
  int64_t in[3] = {1, 1, 1}, o[3] = {1, 1, 1};
  for (int32_t i = 0; i < nsp; i++) in[3 - nsp + i] = x->sizes[nd - nsp + i];
  for (int32_t i = off; i < 3; i++)
    if (!p3_out_size(c, in[i], k[i], p[i], s[i], d[i], ceil_mode, &o[i])) return false;
  /* pool3d_shape_check / pool2d_shape_check (1-d as 2-d: [.., C, 1, L]) */
  int64_t sz[6];
  int32_t nd2 = nsp == 1 ? nd + 1 : nd;
  for (int32_t i = 0; i < nd - nsp; i++) sz[i] = x->sizes[i];
  for (int32_t i = off; i < 3; i++) sz[nd2 - (3 - i)] = in[i];
  char sh[256], a[128], b[128];
  if (nsp == 3) {
    if (k[0] <= 0 || k[1] <= 0 || k[2] <= 0)
      return ts_rt_fail(c, "kernel size should be greater than zero, but got kT: %lld kH: %lld kW: %lld",
                        (long long)k[0], (long long)k[1], (long long)k[2]);
    if (s[0] <= 0 || s[1] <= 0 || s[2] <= 0)
      return ts_rt_fail(c, "stride should be greater than zero, but got dT: %lld dH: %lld dW: %lld", (long long)s[0],
                        (long long)s[1], (long long)s[2]);
    if (d[0] <= 0 || d[1] <= 0 || d[2] <= 0)
      return ts_rt_fail(c, "dilation should be greater than zero, but got dilationT: %lld dilationH: %lld dilationW: "
                           "%lld",
                        (long long)d[0], (long long)d[1], (long long)d[2]);
    for (int32_t i = nd == 5 ? 1 : 0; i < nd; i++)
      if (x->sizes[i] <= 0) {
        nnu_shape_str(sh, sizeof sh, nd, x->sizes);
        return ts_rt_fail(c, "%s(): Expected input's non-batch dimensions to have positive length, but input has a "
                             "shape of %s and non-batch dimension %lld has length zero!",
                          avg ? "avg_pool3d" : "max_pool3d_with_indices_out_cpu_template", sh, (long long)x->sizes[i]);
      }
    if (avg && (in[0] < k[0] || in[1] < k[1] || in[2] < k[2]))
      return ts_rt_fail(c, "input image (T: %lld H: %lld W: %lld) smaller than kernel size (kT: %lld kH: %lld kW: "
                           "%lld)",
                        (long long)in[0], (long long)in[1], (long long)in[2], (long long)k[0], (long long)k[1],
                        (long long)k[2]);
  } else {
    if (k[1] <= 0 || k[2] <= 0)
      return ts_rt_fail(c, "kernel size should be greater than zero, but got kH: %lld kW: %lld", (long long)k[1],
                        (long long)k[2]);
    if (s[1] <= 0 || s[2] <= 0)
      return ts_rt_fail(c, "stride should be greater than zero, but got dH: %lld dW: %lld", (long long)s[1],
                        (long long)s[2]);
    if (d[1] <= 0 || d[2] <= 0)
      return ts_rt_fail(c, "dilation should be greater than zero, but got dilationH: %lld dilationW: %lld",
                        (long long)d[1], (long long)d[2]);
    bool empty = false;
    for (int32_t i = nd2 == 4 ? 1 : 0; i < nd2; i++) empty = empty || sz[i] == 0;
    if (empty) {
      nnu_shape_str(sh, sizeof sh, nd2, sz);
      return ts_rt_fail(c, "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           "got:%s",
                        sh);
    }
  }
  if (o[0] < 1 || o[1] < 1 || o[2] < 1) {
    /* (channels x sizes ...), 1-d as 2-d */
    int64_t iv[4] = {x->sizes[nd - nsp - 1]}, ov[4] = {x->sizes[nd - nsp - 1]};
    for (int32_t i = off; i < 3; i++) iv[1 + i - off] = in[i], ov[1 + i - off] = o[i];
    p3_dims_str(a, sizeof a, iv, 4 - off);
    p3_dims_str(b, sizeof b, ov, 4 - off);
    return ts_rt_fail(c, "Given input size: (%s). Calculated output size: (%s). Output size is too small", a, b);
  }
  ts_dtype dt = (ts_dtype)x->dtype;
  bool okdt = dt == TS_DT_FLOAT32 || dt == TS_DT_FLOAT64 || (avg && dt == TS_DT_INT64) || (nsp < 3 && dt == TS_DT_BFLOAT16);
  if (!okdt) return nnu_not_impl(c, avg ? "avg_pool3d_out_frame" : nsp == 3 ? "max_pool3d_with_indices_cpu" : "max_pool2d", dt);
  p3_job j = {NULL, NULL, NULL, in[0], in[1], in[2], o[0], o[1], o[2], {k[0], k[1], k[2]}, {s[0], s[1], s[2]},
              {p[0], p[1], p[2]}, {d[0], d[1], d[2]}, cip, divisor};
  ts_rt_tensor *ix = NULL;
  ts_rt_tensor *y = p3_run(c, x, nsp, &j, avg ? P3_AVG : P3_MAX, with_indices ? &ix : NULL);
  if (!y) return false;
  call->out[0] = ts_iv_tensor(y);
  if (with_indices) call->out[1] = ts_iv_tensor(ix);
  return true;
}

static bool p3_k_max_pool3d(ts_rt_ctx *c, ts_rt_call *call) { return p3_k_pool(c, call, 3, false, false); }
static bool p3_k_max_pool3d_with_indices(ts_rt_ctx *c, ts_rt_call *call) { return p3_k_pool(c, call, 3, false, true); }
static bool p3_k_max_pool2d_with_indices(ts_rt_ctx *c, ts_rt_call *call) { return p3_k_pool(c, call, 2, false, true); }
static bool p3_k_max_pool1d_with_indices(ts_rt_ctx *c, ts_rt_call *call) { return p3_k_pool(c, call, 1, false, true); }
static bool p3_k_avg_pool3d(ts_rt_ctx *c, ts_rt_call *call) { return p3_k_pool(c, call, 3, true, false); }

/* adaptive_avg_pool3d / _adaptive_avg_pool3d / adaptive_max_pool3d (nsp
 * 3), adaptive_max_pool1d (1, run as adaptive_max_pool2d): (self,
 * output_size). */
static bool p3_k_adaptive(ts_rt_ctx *c, ts_rt_call *call, int32_t nsp, bool max, bool underscore) {
  ts_rt_tensor *x = NULL;
  int64_t osz[8];
  uint32_t no = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_ints(c, call, 1, osz, 8, &no, (uint32_t)nsp)) return false;
  int32_t nd = x->ndim;
  char sh[256];
  const char *op = max ? "adaptive_max_pool3d" : "adaptive_avg_pool3d";
  if (nsp == 1) {
    if (no != 1)
      return ts_rt_fail(c, "adaptive_max_pool1d() argument 'output_size' should contain one int (got %u)", (unsigned)no);
    if (nd != 2 && nd != 3)
      return ts_rt_fail(c, "Expected 2 to 3 dimensions, but got %d-dimensional tensor for argument #1 'self' (while "
                           "checking arguments for adaptive_max_pool1d)",
                        (int)nd);
  } else if ((int32_t)no != 3) {
    if (max) return ts_rt_fail(c, "adaptive_max_pool3d(): internal error: output_size.size() must be 3");
    return ts_rt_fail(c, "adaptive_avg_pool3d: output_size must be 3");
  }
  if (nsp == 3 && nd != 4 && nd != 5) {
    nnu_shape_str(sh, sizeof sh, nd, x->sizes);
    return ts_rt_fail(c, "%s(): Expected 4D or 5D tensor, but got%s %s", op, max ? ":" : "", sh);
  }
  int64_t sz[6];
  int32_t nd2 = nsp == 1 ? nd + 1 : nd;
  for (int32_t i = 0; i < nd; i++) sz[i < nd - 1 || nsp != 1 ? i : i + 1] = x->sizes[i];
  if (nsp == 1) sz[nd - 1] = 1;
  for (int32_t i = 1; i < nd2; i++)
    if (sz[i] == 0) {
      nnu_shape_str(sh, sizeof sh, nd2, sz);
      return ts_rt_fail(c, "%s(): Expected input to have non-zero size for non-batch dimensions, but input has sizes "
                           "%s with dimension %d being empty",
                        nsp == 1 ? "adaptive_max_pool2d" : op, sh, (int)i);
    }
  int64_t o[3] = {1, 1, 1}, in[3] = {1, 1, 1};
  for (int32_t i = 0; i < nsp; i++) o[3 - nsp + i] = osz[i], in[3 - nsp + i] = x->sizes[nd - nsp + i];
  if (!max && (o[0] < 0 || o[1] < 0 || o[2] < 0))
    return ts_rt_fail(c, "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
                         "received {%lld, %lld,%lld}",
                      (long long)o[0], (long long)o[1], (long long)o[2]);
  if (o[0] < 0 || o[1] < 0 || o[2] < 0) {
    int64_t s2[6];
    memcpy(s2, x->sizes, (size_t)(nd - nsp) * sizeof(int64_t));
    for (int32_t i = 0; i < nsp; i++) s2[nd - nsp + i] = osz[i];
    nnu_shape_str(sh, sizeof sh, nd, s2);
    for (int32_t i = 0; i < nsp; i++)
      if (osz[i] < 0)
        return ts_rt_fail(c, "Trying to create tensor with negative dimension %lld: %s", (long long)osz[i], sh);
  }
  ts_dtype dt = (ts_dtype)x->dtype;
  bool global = o[0] == 1 && o[1] == 1 && o[2] == 1;
  if (!max && !underscore && global && !ts_rt_dtype_is_float(dt))
    return ts_rt_fail(c, "mean(): could not infer output dtype. Input dtype must be either a floating point or "
                         "complex dtype. Got: %s",
                      ts_rt_dtype_name(dt));
  bool okdt = dt == TS_DT_FLOAT32 || dt == TS_DT_FLOAT64 || (!max && dt == TS_DT_FLOAT16) ||
              (nsp == 1 && dt == TS_DT_BFLOAT16) || (!max && !underscore && global && dt == TS_DT_BFLOAT16);
  if (!okdt) return nnu_not_impl(c, nsp == 1 ? "adaptive_max_pool2d" : max ? "adaptive_max_pool3d_cpu" : "adaptive_avg_pool3d_cpu", dt);
  p3_job j = {NULL, NULL, NULL, in[0], in[1], in[2], o[0], o[1], o[2], {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1},
              true, 0};
  ts_rt_tensor *ix = NULL;
  p3_kind kind = max ? P3_AMAX : global && !underscore ? P3_MEAN : P3_AAVG;
  ts_rt_tensor *y = p3_run(c, x, nsp, &j, kind, max ? &ix : NULL);
  if (!y) return false;
  call->out[0] = ts_iv_tensor(y);
  if (max) call->out[1] = ts_iv_tensor(ix);
  return true;
}

static bool p3_k_adaptive_avg_pool3d(ts_rt_ctx *c, ts_rt_call *call) { return p3_k_adaptive(c, call, 3, false, false); }
static bool p3_k__adaptive_avg_pool3d(ts_rt_ctx *c, ts_rt_call *call) { return p3_k_adaptive(c, call, 3, false, true); }
static bool p3_k_adaptive_max_pool3d(ts_rt_ctx *c, ts_rt_call *call) { return p3_k_adaptive(c, call, 3, true, false); }
static bool p3_k_adaptive_max_pool1d(ts_rt_ctx *c, ts_rt_call *call) { return p3_k_adaptive(c, call, 1, true, false); }

const ts_rt_kernel_def ts_rt_kernels_pool3d[] = {
    {"aten::max_pool3d", p3_k_max_pool3d},
    {"aten::max_pool3d_with_indices", p3_k_max_pool3d_with_indices},
    {"aten::max_pool2d_with_indices", p3_k_max_pool2d_with_indices},
    {"aten::max_pool1d_with_indices", p3_k_max_pool1d_with_indices},
    {"aten::avg_pool3d", p3_k_avg_pool3d},
    {"aten::adaptive_avg_pool3d", p3_k_adaptive_avg_pool3d},
    {"aten::_adaptive_avg_pool3d", p3_k__adaptive_avg_pool3d},
    {"aten::adaptive_max_pool3d", p3_k_adaptive_max_pool3d},
    {"aten::adaptive_max_pool1d", p3_k_adaptive_max_pool1d},
    {NULL, NULL},
};
