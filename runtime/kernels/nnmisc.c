/* runtime/kernels/nnmisc.c: aten::im2col and col2im (F.unfold / F.fold),
 * pixel_shuffle and pixel_unshuffle, prelu, glu, cosine_similarity and
 * cdist (with _cdist_forward and _euclidean_dist), as PyTorch 1.13's CPU
 * kernels compute them (checks in ATen's order and words).
 *
 * im2col, pixel_shuffle and pixel_unshuffle move elements by their size;
 * col2im sums each output pixel's columns in ATen's order (channel-kernel
 * rows outermost, then block rows and columns), in the tensor's dtype; glu,
 * cosine_similarity and cdist's matmul form for p = 2 are composed from
 * runtime/tensor_ops.h the way ATen composes them; cdist's direct form sums
 * each pair of rows in order (ATen sums in vector lanes: last-bit
 * differences). */
#include <math.h>

#include "nn_util.h"

/* floor division, as ATen's div_rtn */
static int64_t nm_div_rtn(int64_t a, int64_t b) {
  int64_t q = a / b, r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? q - 1 : q;
}

/* int[2] arguments: "It is expected NAME equals to 2, but got size N" */
static bool nm_pair(ts_rt_ctx *c, ts_rt_call *call, uint32_t i, const char *name, int64_t out[2]) {
  int64_t v[2];
  uint32_t n = 0;
  if (ts_rt_arg_check(c, call, i) && call->in[i].tag == TS_IV_LIST && call->in[i].u.l->n != 2)
    return ts_rt_fail(c, "It is expected %s equals to 2, but got size %u", name, (unsigned)call->in[i].u.l->n);
  if (!ts_rt_arg_ints(c, call, i, v, 2, &n, 2)) return false;
  if (n != 2) return ts_rt_fail(c, "It is expected %s equals to 2, but got size %u", name, (unsigned)n);
  out[0] = v[0], out[1] = v[1];
  return true;
}

/* The dtypes ATen folds and unfolds: floating ones */
static bool nm_fold_dtype(ts_dtype dt) {
  return dt == TS_DT_FLOAT32 || dt == TS_DT_FLOAT64 || dt == TS_DT_FLOAT16 || dt == TS_DT_BFLOAT16;
}

/* The checks im2col and col2im share (kernel, stride, dilation, padding). */
static bool nm_fold_common(ts_rt_ctx *c, const int64_t *k, const int64_t *d, const int64_t *p, const int64_t *s,
                           bool pad_check) {
  if (k[0] <= 0 || k[1] <= 0)
    return ts_rt_fail(c, "kernel size should be greater than zero, but got kernel_height: %lld kernel_width: %lld",
                      (long long)k[0], (long long)k[1]);
  if (s[0] <= 0 || s[1] <= 0)
    return ts_rt_fail(c, "stride should be greater than zero, but got stride_height: %lld stride_width: %lld",
                      (long long)s[0], (long long)s[1]);
  if (d[0] <= 0 || d[1] <= 0)
    return ts_rt_fail(c, "dilation should be greater than zero, but got dilation_height: %lld dilation_width: %lld",
                      (long long)d[0], (long long)d[1]);
  if (pad_check && (p[0] < 0 || p[1] < 0))
    return ts_rt_fail(c, "padding should be non-negative, but got pad_height: %lld pad_width: %lld", (long long)p[0],
                      (long long)p[1]);
  /* bounds so that the index arithmetic below stays in int64 */
  for (int i = 0; i < 2; i++)
    if (k[i] > (1 << 20) || d[i] > (1 << 20) || p[i] > ((int64_t)1 << 40) || s[i] > ((int64_t)1 << 40))
      return ts_rt_fail(c, "im2col/col2im: kernel, dilation, padding or stride too large");
  return true;
}

typedef struct nm_fold_job {
  const char *x;
  char *y;
  size_t es;
  int64_t C, H, W, kh, kw, dh, dw, ph, pw, sh, sw, oh, ow;
  ts_dtype dt;
} nm_fold_job;

/* one output row of im2col: the source row's elements at x0 + col * sw, 0
 * outside */
#define NM_IM2COL_ROW(U)                                                                                              \
  do {                                                                                                                 \
    const U *s_ = (const U *)src;                                                                                      \
    U *o_ = (U *)o;                                                                                                    \
    for (int64_t col = 0; col < j->ow; col++) {                                                                        \
      int64_t ix = x0 + col * j->sw;                                                                                   \
      o_[col] = ix >= 0 && ix < j->W ? s_[ix] : (U)0;                                                                  \
    }                                                                                                                  \
  } while (0)

/* im2col over (image, channel) pairs [b, e): each writes its kh * kw rows
 * of oh * ow columns */
static void nm_im2col_run(void *arg, int64_t b, int64_t e) {
  const nm_fold_job *j = arg;
  int64_t L = j->oh * j->ow;
  for (int64_t q = b; q < e; q++) {
    const char *x = j->x + (size_t)(q * j->H * j->W) * j->es;
    char *y = j->y + (size_t)(q * j->kh * j->kw * L) * j->es;
    for (int64_t i = 0; i < j->kh; i++)
      for (int64_t jj = 0; jj < j->kw; jj++) {
        char *row = y + (size_t)((i * j->kw + jj) * L) * j->es;
        for (int64_t r = 0; r < j->oh; r++) {
          int64_t iy = r * j->sh - j->ph + i * j->dh;
          char *o = row + (size_t)(r * j->ow) * j->es;
          if (iy < 0 || iy >= j->H) {
            memset(o, 0, (size_t)j->ow * j->es);
            continue;
          }
          const char *src = x + (size_t)(iy * j->W) * j->es;
          int64_t x0 = jj * j->dw - j->pw;
          if (j->es == 4)
            NM_IM2COL_ROW(uint32_t);
          else if (j->es == 8)
            NM_IM2COL_ROW(uint64_t);
          else
            NM_IM2COL_ROW(uint16_t);
        }
      }
  }
}

static bool nm_k_im2col(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x = NULL;
  int64_t k[2], d[2], p[2], s[2];
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !nm_pair(c, call, 1, "kernel_size", k) ||
      !nm_pair(c, call, 2, "dilation", d) || !nm_pair(c, call, 3, "padding", p) || !nm_pair(c, call, 4, "stride", s))
    return false;
  if (!nm_fold_common(c, k, d, p, s, true)) return false;
  char xs[256];
  nnu_shape_str(xs, sizeof xs, x->ndim, x->sizes);
  /* ATen reads input.size(1) and size(2) first (range errors below 3-d) */
  if (x->ndim == 0) return ts_rt_fail(c, "Dimension specified as 1 but tensor has no dimensions");
  if (x->ndim == 1) return ts_rt_fail(c, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  if (x->ndim == 2 && x->sizes[1] != 0)
    return ts_rt_fail(c, "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  bool valid = x->sizes[1] != 0 && x->ndim > 2 && x->sizes[2] != 0;
  if (!valid || !((x->ndim == 3 && x->sizes[0] != 0) || (x->ndim == 4 && x->sizes[3] != 0)))
    return ts_rt_fail(c, "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                         "dimensions for input, but got: %s",
                      xs);
  bool batched = x->ndim == 4;
  int64_t N = batched ? x->sizes[0] : 1, C = x->sizes[x->ndim - 3], H = x->sizes[x->ndim - 2],
          W = x->sizes[x->ndim - 1];
  int64_t oh = nm_div_rtn(H + 2 * p[0] - (d[0] * (k[0] - 1) + 1), s[0]) + 1;
  int64_t ow = nm_div_rtn(W + 2 * p[1] - (d[1] * (k[1] - 1) + 1), s[1]) + 1;
  if (oh < 1 || ow < 1)
    return ts_rt_fail(c, "Given input with spatial size (%lld, %lld), kernel_size=(%lld, %lld), dilation=(%lld, %lld), "
                         "padding=(%lld, %lld), calculated shape of the array of sliding blocks as (%lld, %lld), but "
                         "its components must be at least one.",
                      /* sic: ATen prints the height twice */
                      (long long)H, (long long)H, (long long)k[0], (long long)k[1], (long long)d[0], (long long)d[1],
                      (long long)p[0], (long long)p[1], (long long)oh, (long long)ow);
  ts_dtype dt = (ts_dtype)x->dtype;
  if (!nm_fold_dtype(dt)) return nnu_not_impl(c, "im2col_out_cpu", dt);
  int64_t rows = 0, L = 0, total = 0;
  if (!nnu_mul(C, k[0] * k[1], &rows) || !nnu_mul(oh, ow, &L) || !nnu_mul(rows, L, &total) ||
      !nnu_mul(total, N, &total) || total > INT64_MAX / 16)
    return ts_rt_fail(c, "im2col: output of %lld x %lld x %lld elements is too large", (long long)N, (long long)rows,
                      (long long)L);
  int64_t osz[3] = {N, rows, L};
  ts_rt_tensor *xc = ts_rt_tensor_contiguous(c, x);
  ts_rt_tensor *y = xc ? ts_rt_tensor_new(c, dt, batched ? 3 : 2, batched ? osz : osz + 1, false) : NULL;
  if (y) {
    nm_fold_job j = {ts_rt_tensor_data(xc), ts_rt_tensor_data(y), ts_dtype_size(dt), C, H, W, k[0], k[1], d[0], d[1],
                     p[0], p[1], s[0], s[1], oh, ow, dt};
    ts_rt_parallel_for(c, N * C, 1 + 65536 / (k[0] * k[1] * L + 1), nm_im2col_run, &j);
  }
  if (xc) ts_rt_tensor_release(xc);
  return nnu_ret(call, y);
}

/* col2im: image channels [b, e), each summing its kh * kw rows in ATen's
 * order into a zeroed plane (the dtype's own arithmetic; float16 and
 * bfloat16 rounded after each add as ATen's scalar_t sums are) */
#define NM_COL2IM(S, T, LOAD, STORE)                                                                                   \
  static void nm_col2im_##S(void *arg, int64_t b, int64_t e) {                                                         \
    const nm_fold_job *j = arg;                                                                                        \
    int64_t L = j->oh * j->ow;                                                                                         \
    for (int64_t q = b; q < e; q++) {                                                                                  \
      const T *x = (const T *)j->x + q * j->kh * j->kw * L;                                                           \
      T *y = (T *)j->y + q * j->H * j->W;                                                                              \
      for (int64_t i = 0; i < j->kh; i++)                                                                              \
        for (int64_t jj = 0; jj < j->kw; jj++) {                                                                       \
          const T *row = x + (i * j->kw + jj) * L;                                                                     \
          for (int64_t r = 0; r < j->oh; r++) {                                                                        \
            int64_t iy = r * j->sh - j->ph + i * j->dh;                                                                \
            if (iy < 0 || iy >= j->H) continue;                                                                        \
            for (int64_t col = 0; col < j->ow; col++) {                                                                \
              int64_t ix = col * j->sw - j->pw + jj * j->dw;                                                           \
              if (ix >= 0 && ix < j->W)                                                                                \
                STORE(y[iy * j->W + ix], LOAD(y[iy * j->W + ix]) + LOAD(row[r * j->ow + col]));                        \
            }                                                                                                          \
          }                                                                                                            \
        }                                                                                                              \
    }                                                                                                                  \
  }
#define NM_ID(v) (v)
#define NM_SET(dst, v) ((dst) = (v))
#define NM_H_LOAD(v) ts_rt_half_to_float(v)
#define NM_H_SET(dst, v) ((dst) = ts_rt_float_to_half(v))
#define NM_B_LOAD(v) ts_rt_bf16_to_float(v)
#define NM_B_SET(dst, v) ((dst) = ts_rt_float_to_bf16(v))
NM_COL2IM(f32, float, NM_ID, NM_SET)
NM_COL2IM(f64, double, NM_ID, NM_SET)
NM_COL2IM(f16, uint16_t, NM_H_LOAD, NM_H_SET)
NM_COL2IM(bf16, uint16_t, NM_B_LOAD, NM_B_SET)

static bool nm_k_col2im(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x = NULL;
  int64_t o[2], k[2], d[2], p[2], s[2];
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !nm_pair(c, call, 1, "output_size", o) ||
      !nm_pair(c, call, 2, "kernel_size", k) || !nm_pair(c, call, 3, "dilation", d) ||
      !nm_pair(c, call, 4, "padding", p) || !nm_pair(c, call, 5, "stride", s))
    return false;
  if (!nm_fold_common(c, k, d, p, s, true)) return false;
  char xs[256];
  nnu_shape_str(xs, sizeof xs, x->ndim, x->sizes);
  bool ok = (x->ndim == 2 && x->sizes[0] != 0 && x->sizes[1] != 0) ||
            (x->ndim == 3 && x->sizes[1] != 0 && x->sizes[2] != 0);
  if (!ok)
    return ts_rt_fail(c, "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                         "dimensions for input, but got: %s",
                      xs);
  bool batched = x->ndim == 3;
  int64_t N = batched ? x->sizes[0] : 1, planes = x->sizes[x->ndim - 2], L = x->sizes[x->ndim - 1];
  if (planes % (k[0] * k[1]) != 0)
    return ts_rt_fail(c, "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
                         "input.size(1)=%lld and kernel_size=(%lld, %lld).",
                      (long long)planes, (long long)k[0], (long long)k[1]);
  if (o[0] < 0 || o[1] < 0 || o[0] > ((int64_t)1 << 40) || o[1] > ((int64_t)1 << 40))
    return ts_rt_fail(c, "col2im: output_size (%lld, %lld) out of range", (long long)o[0], (long long)o[1]);
  int64_t bh = nm_div_rtn(o[0] + 2 * p[0] - d[0] * (k[0] - 1) - 1, s[0]) + 1;
  int64_t bw = nm_div_rtn(o[1] + 2 * p[1] - d[1] * (k[1] - 1) - 1, s[1]) + 1;
  char head[512];
  snprintf(head, sizeof head,
           "Given output_size=(%lld, %lld), kernel_size=(%lld, %lld), dilation=(%lld, %lld), padding=(%lld, %lld), "
           "stride=(%lld, %lld)",
           (long long)o[0], (long long)o[1], (long long)k[0], (long long)k[1], (long long)d[0], (long long)d[1],
           (long long)p[0], (long long)p[1], (long long)s[0], (long long)s[1]);
  if (L != bh * bw)
    return ts_rt_fail(c, "%s, expected size of input's dimension 2 to match the calculated number of sliding blocks "
                         "%lld * %lld = %lld, but got input.size(2)=%lld.",
                      head, (long long)bh, (long long)bw, (long long)(bh * bw), (long long)L);
  if (bh < 1 || bw < 1)
    return ts_rt_fail(c, "%s, calculated shape of the array of sliding blocks as (%lld, %lld), which is too small "
                         "(non-positive)",
                      head, (long long)bh, (long long)bw);
  ts_dtype dt = (ts_dtype)x->dtype;
  if (!nm_fold_dtype(dt)) return nnu_not_impl(c, "col2im_out_cpu", dt);
  int64_t C = planes / (k[0] * k[1]), total = 0;
  if (!nnu_mul(o[0], o[1], &total) || !nnu_mul(total, C, &total) || !nnu_mul(total, N, &total) ||
      total > INT64_MAX / 16)
    return ts_rt_fail(c, "col2im: output too large");
  int64_t osz[4] = {N, C, o[0], o[1]};
  ts_rt_tensor *xc = ts_rt_tensor_contiguous(c, x);
  ts_rt_tensor *y = xc ? ts_rt_tensor_new(c, dt, batched ? 4 : 3, batched ? osz : osz + 1, true) : NULL;
  if (y) {
    nm_fold_job j = {ts_rt_tensor_data(xc), ts_rt_tensor_data(y), ts_dtype_size(dt), C, o[0], o[1], k[0], k[1], d[0],
                     d[1], p[0], p[1], s[0], s[1], bh, bw, dt};
    ts_rt_range_fn fn = dt == TS_DT_FLOAT32   ? nm_col2im_f32
                        : dt == TS_DT_FLOAT64 ? nm_col2im_f64
                        : dt == TS_DT_FLOAT16 ? nm_col2im_f16
                                              : nm_col2im_bf16;
    ts_rt_parallel_for(c, N * C, 1 + 65536 / (k[0] * k[1] * L + 1), fn, &j);
  }
  if (xc) ts_rt_tensor_release(xc);
  return nnu_ret(call, y);
}

/* One image of pixel_shuffle / pixel_unshuffle in elements of type U, the
 * output written in order (n counts them) */
#define NM_SHUFFLE_IMAGE(U)                                                                                           \
  do {                                                                                                                 \
    const U *s_ = (const U *)src + off;                                                                                \
    U *d_ = (U *)dst;                                                                                                  \
    if (up) {                                                                                                          \
      for (int64_t ch = 0; ch < C / rr; ch++)                                                                          \
        for (int64_t h = 0; h < H; h++)                                                                                \
          for (int64_t i = 0; i < r; i++)                                                                              \
            for (int64_t w = 0; w < W; w++) {                                                                          \
              const U *q_ = s_ + (ch * rr + i * r) * sC + h * sH + w * sW;                                             \
              for (int64_t jj = 0; jj < r; jj++) d_[n++] = q_[jj * sC];                                                \
            }                                                                                                          \
    } else {                                                                                                           \
      for (int64_t ch = 0; ch < C; ch++)                                                                               \
        for (int64_t i = 0; i < r; i++)                                                                                \
          for (int64_t jj = 0; jj < r; jj++)                                                                           \
            for (int64_t h = 0; h < H / r; h++)                                                                        \
              for (int64_t w = 0; w < W / r; w++) d_[n++] = s_[ch * sC + (h * r + i) * sH + (w * r + jj) * sW];       \
    }                                                                                                                  \
  } while (0)

/* pixel_shuffle (up) / pixel_unshuffle: [*, C, H, W] viewed as the six
 * dims ATen permutes, copied into a new contiguous tensor */
static bool nm_shuffle(ts_rt_ctx *c, ts_rt_call *call, bool up) {
  ts_rt_tensor *x = NULL;
  int64_t r = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_int(c, call, 1, &r)) return false;
  const char *op = up ? "pixel_shuffle" : "pixel_unshuffle";
  if (x->ndim < 3)
    return ts_rt_fail(c, "%s expects input to have at least 3 dimensions, but got input with %d dimension(s)", op,
                      (int)x->ndim);
  if (r <= 0)
    return ts_rt_fail(c, "%s expects a positive %s, but got %lld", op, up ? "upscale_factor" : "downscale_factor",
                      (long long)r);
  int32_t nd = x->ndim;
  int64_t C = x->sizes[nd - 3], H = x->sizes[nd - 2], W = x->sizes[nd - 1], rr = 0;
  if (!nnu_mul(r, r, &rr)) return ts_rt_fail(c, "%s: factor %lld too large", op, (long long)r);
  if (up && C % rr != 0)
    return ts_rt_fail(c, "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                         "upscale_factor, but input.size(-3)=%lld is not divisible by %lld",
                      (long long)C, (long long)rr);
  if (!up && H % r != 0)
    return ts_rt_fail(c, "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=%lld "
                         "is not divisible by %lld",
                      (long long)H, (long long)r);
  if (!up && W % r != 0)
    return ts_rt_fail(c, "pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=%lld "
                         "is not divisible by %lld",
                      (long long)W, (long long)r);
  int64_t osz[TS_RT_MAX_DIMS];
  memcpy(osz, x->sizes, (size_t)nd * sizeof *osz);
  if (up) {
    if (!nnu_mul(H, r, &osz[nd - 2]) || !nnu_mul(W, r, &osz[nd - 1])) return ts_rt_fail(c, "%s: too large", op);
    osz[nd - 3] = C / rr;
  } else {
    if (!nnu_mul(C, rr, &osz[nd - 3])) return ts_rt_fail(c, "%s: too large", op);
    osz[nd - 2] = H / r, osz[nd - 1] = W / r;
  }
  /* the input seen as [B, oc, r, r, h, w] (shuffle: oc = C / r^2, h = H,
   * w = W; unshuffle's input [B, C, h, r, w, r]): the output element at
   * [b, oc, h, i, w, j] of [B, oc, h*r, w*r] or [b, C, i, j, h, w] */
  ts_rt_tensor *y = ts_rt_tensor_new(c, (ts_dtype)x->dtype, nd, osz, false);
  if (!y) return false;
  int64_t B = 1;
  for (int32_t i = 0; i < nd - 3; i++) B *= x->sizes[i];
  size_t es = ts_dtype_size((ts_dtype)x->dtype);
  const char *src = ts_rt_tensor_data(x);
  char *dst = ts_rt_tensor_data(y);
  /* read through the input's strides (any layout); batch dims walked by
   * index */
  int64_t sC = x->strides[nd - 3], sH = x->strides[nd - 2], sW = x->strides[nd - 1];
  int64_t n = 0;
  for (int64_t b = 0; b < B; b++) {
    int64_t off = 0, rem = b;
    for (int32_t i = nd - 4; i >= 0; i--) {
      off += (rem % x->sizes[i]) * x->strides[i];
      rem /= x->sizes[i];
    }
    if (es == 4)
      NM_SHUFFLE_IMAGE(uint32_t);
    else if (es == 8)
      NM_SHUFFLE_IMAGE(uint64_t);
    else if (es == 2)
      NM_SHUFFLE_IMAGE(uint16_t);
    else
      NM_SHUFFLE_IMAGE(uint8_t);
  }
  return nnu_ret(call, y);
}

static bool nm_k_pixel_shuffle(ts_rt_ctx *c, ts_rt_call *call) { return nm_shuffle(c, call, true); }
static bool nm_k_pixel_unshuffle(ts_rt_ctx *c, ts_rt_call *call) { return nm_shuffle(c, call, false); }

/* prelu(self, weight): self > 0 ? self : weight * self, weight one value
 * or one per channel (dim 1) */
static bool nm_k_prelu(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x = NULL, *w = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_tensor(c, call, 1, &w)) return false;
  int64_t wn = 1;
  for (int32_t i = 0; i < w->ndim; i++) wn *= w->sizes[i];
  if (wn != 1) {
    if (x->ndim == 0) return ts_rt_fail(c, "Not allow zero-dim input tensor.");
    int64_t ch = x->ndim > 1 ? x->sizes[1] : 1;
    if (ch != wn)
      return ts_rt_fail(c, "Mismatch of parameter numbers and input channel size. Found parameter numbers = %lld and "
                           "channel size = %lld.",
                        (long long)wn, (long long)ch);
  }
  if (w->ndim > 1)
    return ts_rt_fail(c, "prelu: Expected `weight` to be a scalar or 1D tensor, but got ndim = %d", (int)w->ndim);
  ts_dtype dt = (ts_dtype)x->dtype;
  if (dt != TS_DT_FLOAT32 && dt != TS_DT_FLOAT64 && dt != TS_DT_BFLOAT16) return nnu_not_impl(c, "prelu_cpu", dt);
  if (w->dtype != dt)
    return ts_rt_fail(c, "Found dtype %s but expected %s", ts_rt_dtype_name((ts_dtype)w->dtype),
                      ts_rt_dtype_name(dt));
  ts_rt_tensor *xc = ts_rt_tensor_contiguous(c, x);
  ts_rt_tensor *wc = xc ? ts_rt_tensor_contiguous(c, w) : NULL;
  ts_rt_tensor *y = wc ? ts_rt_tensor_new(c, dt, x->ndim, x->sizes, false) : NULL;
  if (y) {
    int64_t total = 1, inner = 1, C = wn;
    for (int32_t i = 0; i < x->ndim; i++) total *= x->sizes[i];
    for (int32_t i = 2; i < x->ndim; i++) inner *= x->sizes[i];
    const void *xp = ts_rt_tensor_data(xc), *wp = ts_rt_tensor_data(wc);
    void *yp = ts_rt_tensor_data(y);
    for (int64_t e = 0; e < total; e++) {
      int64_t ci = C == 1 ? 0 : (e / inner) % C;
      if (dt == TS_DT_FLOAT32) {
        float v = ((const float *)xp)[e];
        ((float *)yp)[e] = v > 0 ? v : ((const float *)wp)[ci] * v;
      } else if (dt == TS_DT_FLOAT64) {
        double v = ((const double *)xp)[e];
        ((double *)yp)[e] = v > 0 ? v : ((const double *)wp)[ci] * v;
      } else {
        float v = ts_rt_bf16_to_float(((const uint16_t *)xp)[e]);
        float r = v > 0 ? v : ts_rt_bf16_to_float(((const uint16_t *)wp)[ci]) * v;
        ((uint16_t *)yp)[e] = ts_rt_float_to_bf16(r);
      }
    }
  }
  if (xc) ts_rt_tensor_release(xc);
  if (wc) ts_rt_tensor_release(wc);
  return nnu_ret(call, y);
}

/* glu(self, dim): a * sigmoid(b), a and b the halves along dim */
static bool nm_k_glu(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x = NULL;
  int64_t dim = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_int(c, call, 1, &dim)) return false;
  if (x->ndim == 0) return ts_rt_fail(c, "glu does not support 0-dimensional tensors");
  int64_t wd = 0;
  if (!ts_rt_wrap_dim(c, dim, x->ndim, &wd)) return false;
  int64_t n = x->sizes[wd];
  if (n % 2 != 0)
    return ts_rt_fail(c, "Halving dimension must be even, but dimension %lld is size %lld", (long long)wd,
                      (long long)n);
  ts_dtype dt = (ts_dtype)x->dtype;
  if (dt != TS_DT_FLOAT32 && dt != TS_DT_FLOAT64 && dt != TS_DT_BFLOAT16) return nnu_not_impl(c, "glu_cpu", dt);
  ts_rt_tensor *a = ts_rt_narrow(c, x, wd, 0, n / 2);
  ts_rt_tensor *b = a ? ts_rt_narrow(c, x, wd, n / 2, n / 2) : NULL;
  ts_rt_tensor *sb = b ? ts_rt_unary_op(c, TS_PW_sigmoid, b) : NULL;
  ts_rt_tensor *y = sb ? ts_rt_binary_op(c, TS_PW_mul, a, sb) : NULL;
  if (a) ts_rt_tensor_release(a);
  if (b) ts_rt_tensor_release(b);
  if (sb) ts_rt_tensor_release(sb);
  return nnu_ret(call, y);
}

/* cosine_similarity(x1, x2, dim, eps): in the common (floating) dtype, both
 * broadcast; each divided by its norm sqrt(sum(x * x)) clamped to at least
 * eps, then sum(x1n * x2n) over dim, as ATen 1.13 */
static bool nm_k_cosine_similarity(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x1 = NULL, *x2 = NULL;
  int64_t dim = 0;
  double eps = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &x1) || !ts_rt_arg_tensor(c, call, 1, &x2) || !ts_rt_arg_int(c, call, 2, &dim) ||
      !ts_rt_arg_double(c, call, 3, &eps))
    return false;
  ts_iv ops[2] = {call->in[0], call->in[1]};
  ts_dtype dt = ts_rt_result_type(ops, 2);
  if (dt != TS_DT_FLOAT32 && dt != TS_DT_FLOAT64 && dt != TS_DT_FLOAT16 && dt != TS_DT_BFLOAT16)
    return ts_rt_fail(c, "expected common dtype to be floating point, yet common dtype is %s", ts_rt_dtype_name(dt));
  int64_t bs[TS_RT_MAX_DIMS];
  int32_t bn = 0;
  if (!ts_rt_broadcast_shapes(c, x1->ndim, x1->sizes, x2->ndim, x2->sizes, &bn, bs)) return false;
  int64_t wd = 0;
  if (!ts_rt_wrap_dim(c, dim, bn, &wd)) return false;
  if (dt == TS_DT_FLOAT16) return nnu_not_impl(c, "clamp_min_cpu", dt);
  ts_rt_tensor *in[2] = {x1, x2}, *nrm[2] = {NULL, NULL}, *ex[2] = {NULL, NULL}, *y = NULL;
  ts_rt_tensor *e0 = ts_rt_tensor_new(c, dt, 0, NULL, false);
  bool ok = e0 != NULL;
  if (ok) ts_rt_store_f64(ts_rt_tensor_data(e0), dt, eps);
  for (int i = 0; i < 2 && ok; i++) {
    ts_rt_tensor *cv = nnu_contig_as(c, in[i], dt);
    ex[i] = cv ? ts_rt_expand(c, cv, bn, bs) : NULL;
    ts_rt_tensor *sq = ex[i] ? ts_rt_binary_op(c, TS_PW_mul, ex[i], ex[i]) : NULL;
    ts_rt_tensor *sm = sq ? ts_rt_sum(c, sq, &wd, 1, true, TS_DT_NONE) : NULL;
    ts_rt_tensor *rt = sm ? ts_rt_unary_op(c, TS_PW_sqrt, sm) : NULL;
    /* clamp_min(eps): NaN stays NaN as maximum keeps it */
    nrm[i] = rt ? ts_rt_binary_op(c, TS_PW_maximum, rt, e0) : NULL;
    ok = nrm[i] != NULL;
    if (cv) ts_rt_tensor_release(cv);
    if (sq) ts_rt_tensor_release(sq);
    if (sm) ts_rt_tensor_release(sm);
    if (rt) ts_rt_tensor_release(rt);
  }
  ts_rt_tensor *n1 = ok ? ts_rt_binary_op(c, TS_PW_div, ex[0], nrm[0]) : NULL;
  ts_rt_tensor *n2 = n1 ? ts_rt_binary_op(c, TS_PW_div, ex[1], nrm[1]) : NULL;
  ts_rt_tensor *pr = n2 ? ts_rt_binary_op(c, TS_PW_mul, n1, n2) : NULL;
  y = pr ? ts_rt_sum(c, pr, &wd, 1, false, TS_DT_NONE) : NULL;
  ts_rt_tensor *rel[] = {e0, nrm[0], nrm[1], ex[0], ex[1], n1, n2, pr};
  for (size_t i = 0; i < sizeof rel / sizeof *rel; i++)
    if (rel[i]) ts_rt_tensor_release(rel[i]);
  return nnu_ret(call, y);
}

/* _euclidean_dist(x1, x2): sqrt(max(0, [-2 x1, |x1|^2, 1] . [x2, 1, |x2|^2]^T))
 * as ATen composes it (one matmul; batch dims broadcast) */
static ts_rt_tensor *nm_euclid(ts_rt_ctx *c, const ts_rt_tensor *x1, const ts_rt_tensor *x2) {
  int64_t last = -1;
  ts_rt_tensor *sq1 = ts_rt_binary_op(c, TS_PW_mul, x1, x1);
  ts_rt_tensor *n1 = sq1 ? ts_rt_sum(c, sq1, &last, 1, true, TS_DT_NONE) : NULL;
  ts_rt_tensor *sq2 = n1 ? ts_rt_binary_op(c, TS_PW_mul, x2, x2) : NULL;
  ts_rt_tensor *n2 = sq2 ? ts_rt_sum(c, sq2, &last, 1, true, TS_DT_NONE) : NULL;
  ts_rt_tensor *one1 = n2 ? ts_rt_tensor_new(c, (ts_dtype)n1->dtype, n1->ndim, n1->sizes, false) : NULL;
  ts_rt_tensor *one2 = one1 ? ts_rt_tensor_new(c, (ts_dtype)n2->dtype, n2->ndim, n2->sizes, false) : NULL;
  bool ok = one2 && ts_rt_fill_(c, one1, 1) && ts_rt_fill_(c, one2, 1);
  ts_rt_tensor *m2 = ok ? ts_rt_mul_scalar(c, x1, -2) : NULL;
  ts_rt_tensor *a = NULL, *b = NULL, *bt = NULL, *r = NULL, *z = NULL, *y = NULL;
  if (m2) {
    ts_rt_tensor *pa[3] = {m2, n1, one1}, *pb[3] = {(ts_rt_tensor *)x2, one2, n2};
    a = ts_rt_cat(c, pa, 3, -1);
    b = a ? ts_rt_cat(c, pb, 3, -1) : NULL;
  }
  bt = b ? ts_rt_transpose(c, b, -1, -2) : NULL;
  r = bt ? ts_rt_matmul(c, a, bt) : NULL;
  z = r ? ts_rt_tensor_new(c, (ts_dtype)r->dtype, 0, NULL, true) : NULL;
  ts_rt_tensor *cl = z ? ts_rt_binary_op(c, TS_PW_maximum, r, z) : NULL;
  y = cl ? ts_rt_unary_op(c, TS_PW_sqrt, cl) : NULL;
  ts_rt_tensor *rel[] = {sq1, n1, sq2, n2, one1, one2, m2, a, b, bt, r, z, cl};
  for (size_t i = 0; i < sizeof rel / sizeof *rel; i++)
    if (rel[i]) ts_rt_tensor_release(rel[i]);
  return y;
}

/* The direct distance of rows a and b over m columns, as ATen's cdist
 * kernel defines it for p = 0, 1, 2, inf and others, summed in T. */
#define NM_DIST(S, T)                                                                                                  \
  static T nm_dist_##S(const T *a, const T *b, int64_t m, T p) {                                                     \
    T agg = 0;                                                                                                         \
    if (p == 0) {                                                                                                      \
      for (int64_t k = 0; k < m; k++) agg += (T)(a[k] - b[k] != 0);                                                   \
      return agg;                                                                                                      \
    }                                                                                                                  \
    if (p == 1) {                                                                                                      \
      for (int64_t k = 0; k < m; k++) agg += (T)fabs((double)(a[k] - b[k]));                                          \
      return agg;                                                                                                      \
    }                                                                                                                  \
    if (p == 2) {                                                                                                      \
      for (int64_t k = 0; k < m; k++) agg += (a[k] - b[k]) * (a[k] - b[k]);                                           \
      return (T)sqrt((double)agg);                                                                                     \
    }                                                                                                                  \
    if (isinf(p)) {                                                                                                    \
      for (int64_t k = 0; k < m; k++) {                                                                                \
        T d = (T)fabs((double)(a[k] - b[k]));                                                                          \
        agg = d > agg || d != d ? d : agg;                                                                             \
      }                                                                                                                \
      return agg;                                                                                                      \
    }                                                                                                                  \
    for (int64_t k = 0; k < m; k++) agg += (T)pow(fabs((double)(a[k] - b[k])), (double)p);                           \
    return (T)pow((double)agg, 1.0 / (double)p);                                                                       \
  }
NM_DIST(f32, float)
NM_DIST(f64, double)

/* cdist / _cdist_forward (direct: 0) / _euclidean_dist (2) */
static bool nm_cdist(ts_rt_ctx *c, ts_rt_call *call, int form) {
  ts_rt_tensor *x1 = NULL, *x2 = NULL;
  double p = 2;
  int64_t mode = 0;
  bool have_mode = false;
  if (!ts_rt_arg_tensor(c, call, 0, &x1) || !ts_rt_arg_tensor(c, call, 1, &x2)) return false;
  if (form != 2 && (!ts_rt_arg_double(c, call, 2, &p) || !ts_rt_arg_opt_int(c, call, 3, &mode, &have_mode)))
    return false;
  if (form == 2) {
    ts_iv ops[2] = {call->in[0], call->in[1]};
    ts_dtype rt = ts_rt_result_type(ops, 2);
    if (rt != TS_DT_FLOAT32 && rt != TS_DT_FLOAT64 && rt != TS_DT_FLOAT16 && rt != TS_DT_BFLOAT16)
      return ts_rt_fail(c, "result type Float can't be cast to the desired output type %s", ts_rt_dtype_name(rt));
    return nnu_ret(call, nm_euclid(c, x1, x2));
  }
  if (x1->ndim < 2) return ts_rt_fail(c, "cdist only supports at least 2D tensors, X1 got: %dD", (int)x1->ndim);
  if (x2->ndim < 2) return ts_rt_fail(c, "cdist only supports at least 2D tensors, X2 got: %dD", (int)x2->ndim);
  int64_t m = x1->sizes[x1->ndim - 1], r1 = x1->sizes[x1->ndim - 2], r2 = x2->sizes[x2->ndim - 2];
  if (m != x2->sizes[x2->ndim - 1])
    return ts_rt_fail(c, "X1 and X2 must have the same number of columns. X1: %lld X2: %lld", (long long)m,
                      (long long)x2->sizes[x2->ndim - 1]);
  ts_dtype d1 = (ts_dtype)x1->dtype, d2 = (ts_dtype)x2->dtype;
  bool fl1 = d1 == TS_DT_FLOAT32 || d1 == TS_DT_FLOAT64 || d1 == TS_DT_FLOAT16 || d1 == TS_DT_BFLOAT16;
  bool fl2 = d2 == TS_DT_FLOAT32 || d2 == TS_DT_FLOAT64 || d2 == TS_DT_FLOAT16 || d2 == TS_DT_BFLOAT16;
  if (!fl1) return ts_rt_fail(c, "cdist only supports floating-point dtypes, X1 got: %s", ts_rt_dtype_name(d1));
  if (!fl2) return ts_rt_fail(c, "cdist only supports floating-point dtypes, X2 got: %s", ts_rt_dtype_name(d2));
  if (!(p >= 0)) return ts_rt_fail(c, "cdist only supports non-negative p values");
  if (have_mode && (mode < 0 || mode > 2))
    return ts_rt_fail(c, "possible modes: 0, 1, 2, but was: %lld", (long long)mode);
  int64_t b1[TS_RT_MAX_DIMS], bs[TS_RT_MAX_DIMS];
  int32_t bn = 0;
  if (!ts_rt_broadcast_shapes(c, x1->ndim - 2, x1->sizes, x2->ndim - 2, x2->sizes, &bn, b1)) return false;
  int64_t B = 1;
  for (int32_t i = 0; i < bn; i++) B *= b1[i];
  memcpy(bs, b1, (size_t)bn * sizeof *bs);
  bs[bn] = r1, bs[bn + 1] = r2;
  int32_t on = bn + 2;
  if (r1 == 0 || r2 == 0 || B == 0) return nnu_ret(call, ts_rt_tensor_new(c, d1, on, bs, false));
  if (m == 0) return nnu_ret(call, ts_rt_tensor_new(c, d1, on, bs, true));
  if (d1 == TS_DT_FLOAT16 || d1 == TS_DT_BFLOAT16) return nnu_not_impl(c, "cdist", d1);
  if (d2 != d1)
    return ts_rt_fail(c, "expected scalar type %s but found %s", ts_rt_dtype_name(d1), ts_rt_dtype_name(d2));
  if (form == 1 && p == 2 && (mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25)))) {
    ts_rt_tensor *y = nm_euclid(c, x1, x2);
    if (y && y->ndim != on) { /* unbatched operands broadcast to batch dims of 1 */
      ts_rt_tensor *v = ts_rt_view(c, y, on, bs);
      ts_rt_tensor_release(y);
      y = v;
    }
    return nnu_ret(call, y);
  }
  /* both expanded to the batch dims, made contiguous */
  int64_t e1[TS_RT_MAX_DIMS], e2[TS_RT_MAX_DIMS];
  memcpy(e1, b1, (size_t)bn * sizeof *e1), memcpy(e2, b1, (size_t)bn * sizeof *e2);
  e1[bn] = r1, e1[bn + 1] = m, e2[bn] = r2, e2[bn + 1] = m;
  ts_rt_tensor *v1 = ts_rt_expand(c, x1, on, e1);
  ts_rt_tensor *v2 = v1 ? ts_rt_expand(c, x2, on, e2) : NULL;
  ts_rt_tensor *c1 = v2 ? ts_rt_tensor_contiguous(c, v1) : NULL;
  ts_rt_tensor *c2 = c1 ? ts_rt_tensor_contiguous(c, v2) : NULL;
  ts_rt_tensor *y = c2 ? ts_rt_tensor_new(c, d1, on, bs, false) : NULL;
  if (y) {
    for (int64_t b = 0; b < B; b++)
      for (int64_t i = 0; i < r1; i++)
        for (int64_t j = 0; j < r2; j++) {
          int64_t o = (b * r1 + i) * r2 + j;
          if (d1 == TS_DT_FLOAT32)
            ((float *)ts_rt_tensor_data(y))[o] =
                nm_dist_f32((const float *)ts_rt_tensor_data(c1) + (b * r1 + i) * m,
                            (const float *)ts_rt_tensor_data(c2) + (b * r2 + j) * m, m, (float)p);
          else
            ((double *)ts_rt_tensor_data(y))[o] =
                nm_dist_f64((const double *)ts_rt_tensor_data(c1) + (b * r1 + i) * m,
                            (const double *)ts_rt_tensor_data(c2) + (b * r2 + j) * m, m, p);
        }
  }
  ts_rt_tensor *rel[] = {v1, v2, c1, c2};
  for (size_t i = 0; i < 4; i++)
    if (rel[i]) ts_rt_tensor_release(rel[i]);
  return nnu_ret(call, y);
}

static bool nm_k_cdist(ts_rt_ctx *c, ts_rt_call *call) { return nm_cdist(c, call, 1); }
static bool nm_k_cdist_forward(ts_rt_ctx *c, ts_rt_call *call) { return nm_cdist(c, call, 0); }
static bool nm_k_euclidean_dist(ts_rt_ctx *c, ts_rt_call *call) { return nm_cdist(c, call, 2); }

/* embedding_bag / _embedding_bag / _embedding_bag_forward_only: (output
 * [B, D], offset2bag, bag_size, max_indices) as ATen 1.13's CPU kernel
 * gives them: bags [offsets[b], offsets[b + 1]) (the last to the end of
 * indices; with include_last_offset B = len(offsets) - 1), padding_idx rows
 * skipped and not counted; sum (times per_sample_weights), mean (sum /
 * count, 0 for an empty bag), max (the first greatest, its row index in
 * max_indices). offset2bag is empty on ATen's fast sum path (float32 or
 * float16 weight with unit column stride and no padding_idx), else each
 * index's bag (by ATen's index_add + cumsum of the offsets); bag_size is the
 * count for mean and max, zeros for sum (shaped like offsets in the
 * forward-only form, which embedding_bag calls); max_indices [B, D] for max, bag_size
 * for mean, zeros for sum (the same shape as bag_size). Sums run in index order in the weight's dtype
 * (float for float16, rounded once). */
static bool nm_embedding_bag(ts_rt_ctx *c, ts_rt_call *call, bool pad_arg, bool pad_opt, bool fwd_only) {
  ts_rt_tensor *w = NULL, *idx = NULL, *off = NULL, *psw = NULL;
  int64_t mode = 0, pad = -1;
  bool last = false, have_pad = true;
  if (!ts_rt_arg_tensor(c, call, 0, &w) || !ts_rt_arg_tensor(c, call, 1, &idx) ||
      !ts_rt_arg_tensor(c, call, 2, &off) || !ts_rt_arg_int(c, call, 4, &mode) ||
      !ts_rt_arg_opt_tensor(c, call, 6, &psw) || !ts_rt_arg_bool(c, call, 7, &last))
    return false;
  if (pad_arg && !(pad_opt ? ts_rt_arg_opt_int(c, call, 8, &pad, &have_pad) : ts_rt_arg_int(c, call, 8, &pad)))
    return false;
  if (!have_pad) pad = -1;
  /* embedding_bag.padding_idx wraps a given padding_idx (-1: the last row);
   * in the _embedding_bag forms -1 means none */
  if (pad_opt && have_pad && w->ndim >= 1) {
    int64_t num = w->sizes[0];
    if (pad < -num || pad >= num)
      return ts_rt_fail(c, "padding_idx must be within the number of embeddings, -%lld through %lld, but got %lld",
                        (long long)num, (long long)(num - 1), (long long)pad);
    if (pad < 0) pad += num;
  }
  ts_dtype wd = (ts_dtype)w->dtype, id = (ts_dtype)idx->dtype, od = (ts_dtype)off->dtype;
  if (id != TS_DT_INT64 && id != TS_DT_INT32)
    return ts_rt_fail(c, "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, "
                         "Int; but got torch.%sTensor instead (while checking arguments for embedding_bag)",
                      ts_rt_dtype_name(id));
  if (od != TS_DT_INT64 && od != TS_DT_INT32)
    return ts_rt_fail(c, "Expected tensor for argument #1 'offsets' to have one of the following scalar types: Long, "
                         "Int; but got torch.%sTensor instead (while checking arguments for embedding_bag)",
                      ts_rt_dtype_name(od));
  if (wd != TS_DT_FLOAT32 && wd != TS_DT_FLOAT64 && wd != TS_DT_FLOAT16)
    return ts_rt_fail(c, "Expected tensor for argument #1 'weight' to have one of the following scalar types: Half, "
                         "Float, Double; but got torch.%sTensor instead (while checking arguments for embedding_bag)",
                      ts_rt_dtype_name(wd));
  if (psw && mode != 0) return ts_rt_fail(c, "embedding_bag: per_sample_weights only supported with mode='sum'");
  if (mode < 0 || mode > 2) return ts_rt_fail(c, "embedding_bag: unknown mode %lld", (long long)mode);
  /* shapes this kernel takes: weight [num, D], indices and offsets 1-d */
  if (w->ndim != 2 || idx->ndim != 1 || off->ndim != 1)
    return ts_rt_fail(c, "embedding_bag: expected a 2-D weight and 1-D indices and offsets, got %d-D, %d-D and %d-D",
                      (int)w->ndim, (int)idx->ndim, (int)off->ndim);
  int64_t n = idx->sizes[0], noff = off->sizes[0], num = w->sizes[0], D = w->sizes[1];
  int64_t B = noff - (last ? 1 : 0);
  if (B < 0) B = 0;
  if (psw && (psw->ndim != 1 || psw->sizes[0] != n || psw->dtype != w->dtype))
    return ts_rt_fail(c, "embedding_bag: per_sample_weights must be 1-D with one %s per index",
                      ts_rt_dtype_name(wd));
  int64_t *o = ts_rt_malloc((size_t)(noff + 1) * sizeof *o);
  if (!o) return ts_rt_fail(c, "out of memory");
  for (int64_t b = 0; b < noff; b++)
    o[b] = ts_rt_load_i64((const char *)ts_rt_tensor_data(off) + (size_t)(b * off->strides[0]) * ts_dtype_size(od), od);
  bool ok = true;
  if (noff > 0 && o[0] != 0)
    ok = ts_rt_fail(c, "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position "
                       "0. However, got %lld",
                    (long long)o[0]);
  else if (noff > 0 && o[noff - 1] > n)
    ok = ts_rt_fail(c, "offsets[-1] can not be greater than input's length %lld but got offsets[-1] of %lld",
                    (long long)n, (long long)o[noff - 1]);
  for (int64_t b = 1; ok && b < noff; b++)
    if (o[b] < o[b - 1])
      ok = ts_rt_fail(c, "embedding_bag: offsets must be non-decreasing, offsets[%lld] = %lld is below offsets[%lld] = "
                         "%lld",
                      (long long)b, (long long)o[b], (long long)(b - 1), (long long)o[b - 1]);
  for (int64_t i = 0; ok && i < n; i++) {
    int64_t v =
        ts_rt_load_i64((const char *)ts_rt_tensor_data(idx) + (size_t)(i * idx->strides[0]) * ts_dtype_size(id), id);
    if (v < 0 || v >= num)
      ok = ts_rt_fail(c, "embedding_bag: index %lld is out of bounds for a weight of %lld rows", (long long)v,
                      (long long)num);
  }
  if (!ok) {
    ts_rt_free(o);
    return false;
  }
  o[noff] = n;
  bool fast = mode == 0 && (wd == TS_DT_FLOAT32 || wd == TS_DT_FLOAT16) && (D <= 1 || w->strides[1] == 1) && pad < 0;
  int64_t osz[2] = {B, D}, o2b_n = fast ? 0 : n;
  ts_rt_tensor *y = ts_rt_tensor_new(c, wd, 2, osz, true);
  ts_rt_tensor *o2b = y ? ts_rt_tensor_new(c, od, 1, &o2b_n, true) : NULL;
  /* sum's bag_size and max_indices: zeros, shaped like offsets in the
   * forward-only form (which embedding_bag calls) */
  int64_t bsz[2] = {mode == 0 && fwd_only ? noff : B, D};
  ts_rt_tensor *bs = o2b ? ts_rt_tensor_new(c, od, 1, bsz, true) : NULL;
  ts_rt_tensor *mi = bs ? ts_rt_tensor_new(c, od, mode == 2 ? 2 : 1, bsz, true) : NULL;
  double *acc = mi ? ts_rt_malloc((size_t)(D + 1) * sizeof *acc) : NULL;
  if (!acc) {
    ts_rt_free(o);
    ts_rt_tensor *rel[] = {y, o2b, bs, mi};
    for (int i = 0; i < 4; i++)
      if (rel[i]) ts_rt_tensor_release(rel[i]);
    return mi ? ts_rt_fail(c, "out of memory") : false;
  }
  if (!fast) { /* index_add_(ones at offsets), [0] -= 1, cumsum */
    int64_t run = 0;
    for (int64_t i = 0, b = 0; i < n; i++) {
      int64_t hits = 0;
      for (; b < noff && o[b] <= i; b++) hits += o[b] == i;
      run += hits - (i == 0 ? 1 : 0);
      ts_rt_store_i64((char *)ts_rt_tensor_data(o2b) + (size_t)i * ts_dtype_size(od), od, run);
    }
  }
  const char *wp = ts_rt_tensor_data(w), *ip = ts_rt_tensor_data(idx);
  const char *pp = psw ? ts_rt_tensor_data(psw) : NULL;
  size_t wes = ts_dtype_size(wd);
  for (int64_t b = 0; b < B; b++) {
    int64_t cnt = 0;
    for (int64_t k = 0; k < D; k++) acc[k] = 0;
    for (int64_t i = o[b]; i < o[b + 1]; i++) {
      int64_t v = ts_rt_load_i64(ip + (size_t)(i * idx->strides[0]) * ts_dtype_size(id), id);
      if (v == pad) continue;
      double sw = pp ? ts_rt_load_f64(pp + (size_t)(i * psw->strides[0]) * wes, wd) : 1;
      for (int64_t k = 0; k < D; k++) {
        double e = ts_rt_load_f64(wp + (size_t)(v * w->strides[0] + k * w->strides[1]) * wes, wd);
        if (mode == 2) {
          if (cnt == 0 || e > acc[k]) {
            acc[k] = e;
            ts_rt_store_i64((char *)ts_rt_tensor_data(mi) + (size_t)(b * D + k) * ts_dtype_size(od), od, v);
          }
        } else if (wd == TS_DT_FLOAT64) {
          acc[k] += pp ? e * sw : e;
        } else { /* float arithmetic for float32 and float16 */
          acc[k] = (double)((float)acc[k] + (pp ? (float)e * (float)sw : (float)e));
        }
      }
      cnt++;
    }
    for (int64_t k = 0; k < D; k++) {
      double r = acc[k];
      if (mode == 1 && cnt > 0) r = wd == TS_DT_FLOAT64 ? r / (double)cnt : (double)((float)r / (float)cnt);
      ts_rt_store_f64((char *)ts_rt_tensor_data(y) + (size_t)(b * D + k) * wes, wd, r);
    }
    if (mode != 0) {
      ts_rt_store_i64((char *)ts_rt_tensor_data(bs) + (size_t)b * ts_dtype_size(od), od, cnt);
      if (mode == 1) ts_rt_store_i64((char *)ts_rt_tensor_data(mi) + (size_t)b * ts_dtype_size(od), od, cnt);
    }
  }
  ts_rt_free(o);
  ts_rt_free(acc);
  call->out[0] = ts_iv_tensor(y), call->out[1] = ts_iv_tensor(o2b), call->out[2] = ts_iv_tensor(bs),
  call->out[3] = ts_iv_tensor(mi);
  return true;
}

static bool nm_k_embedding_bag(ts_rt_ctx *c, ts_rt_call *call) { return nm_embedding_bag(c, call, false, false, true); }
static bool nm_k_embedding_bag_pad(ts_rt_ctx *c, ts_rt_call *call) {
  return nm_embedding_bag(c, call, true, true, true);
}
static bool nm_k__embedding_bag(ts_rt_ctx *c, ts_rt_call *call) {
  return nm_embedding_bag(c, call, true, false, false);
}
static bool nm_k__embedding_bag_fwd(ts_rt_ctx *c, ts_rt_call *call) {
  return nm_embedding_bag(c, call, true, false, true);
}

const ts_rt_kernel_def ts_rt_kernels_nnmisc[] = {
    {"aten::im2col", nm_k_im2col},
    {"aten::col2im", nm_k_col2im},
    {"aten::pixel_shuffle", nm_k_pixel_shuffle},
    {"aten::pixel_unshuffle", nm_k_pixel_unshuffle},
    {"aten::prelu", nm_k_prelu},
    {"aten::glu", nm_k_glu},
    {"aten::cosine_similarity", nm_k_cosine_similarity},
    {"aten::cdist", nm_k_cdist},
    {"aten::_cdist_forward", nm_k_cdist_forward},
    {"aten::_euclidean_dist", nm_k_euclidean_dist},
    {"aten::embedding_bag", nm_k_embedding_bag},
    {"aten::embedding_bag.padding_idx", nm_k_embedding_bag_pad},
    {"aten::_embedding_bag", nm_k__embedding_bag},
    {"aten::_embedding_bag_forward_only", nm_k__embedding_bag_fwd},
    {NULL, NULL},
};
