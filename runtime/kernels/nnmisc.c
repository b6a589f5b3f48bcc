/* runtime/kernels/nnmisc.c: aten::im2col and col2im (F.unfold / F.fold),
 * pixel_shuffle and pixel_unshuffle, prelu, glu and cosine_similarity, as
 * PyTorch 1.13's CPU kernels compute them (checks in ATen's order and
 * words).
 *
 * im2col, pixel_shuffle and pixel_unshuffle move elements by their size;
 * col2im sums each output pixel's columns in ATen's order (channel-kernel
 * rows outermost, then block rows and columns), in the tensor's dtype; glu and cosine_similarity are
 * composed from runtime/tensor_ops.h the way ATen composes them. */
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
          for (int64_t col = 0; col < j->ow; col++) {
            int64_t ix = col * j->sw - j->pw + jj * j->dw;
            if (ix < 0 || ix >= j->W)
              memset(o + (size_t)col * j->es, 0, j->es);
            else
              memcpy(o + (size_t)col * j->es, src + (size_t)ix * j->es, j->es);
          }
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
                      (long long)H, (long long)H, /* sic: ATen prints the height twice */ (long long)k[0], (long long)k[1], (long long)d[0], (long long)d[1],
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
              if (ix >= 0 && ix < j->W) STORE(y[iy * j->W + ix], LOAD(y[iy * j->W + ix]) + LOAD(row[r * j->ow + col])); \
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
  /* the input's strides, batch dims flattened where they allow (else an
   * index walk over them) */
  int64_t sC = x->strides[nd - 3], sH = x->strides[nd - 2], sW = x->strides[nd - 1];
  int64_t n = 0;
  for (int64_t b = 0; b < B; b++) {
    int64_t off = 0, rem = b;
    for (int32_t i = nd - 4; i >= 0; i--) {
      off += (rem % x->sizes[i]) * x->strides[i];
      rem /= x->sizes[i];
    }
    if (up) {
      int64_t oc = C / rr;
      for (int64_t ch = 0; ch < oc; ch++)
        for (int64_t h = 0; h < H; h++)
          for (int64_t i = 0; i < r; i++)
            for (int64_t w = 0; w < W; w++)
              for (int64_t j = 0; j < r; j++, n++)
                memcpy(dst + (size_t)n * es, src + (size_t)(off + (ch * rr + i * r + j) * sC + h * sH + w * sW) * es,
                       es);
    } else {
      int64_t h0 = H / r, w0 = W / r;
      for (int64_t ch = 0; ch < C; ch++)
        for (int64_t i = 0; i < r; i++)
          for (int64_t j = 0; j < r; j++)
            for (int64_t h = 0; h < h0; h++)
              for (int64_t w = 0; w < w0; w++, n++)
                memcpy(dst + (size_t)n * es,
                       src + (size_t)(off + ch * sC + (h * r + i) * sH + (w * r + j) * sW) * es, es);
    }
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

const ts_rt_kernel_def ts_rt_kernels_nnmisc[] = {
    {"aten::im2col", nm_k_im2col},
    {"aten::col2im", nm_k_col2im},
    {"aten::pixel_shuffle", nm_k_pixel_shuffle},
    {"aten::pixel_unshuffle", nm_k_pixel_unshuffle},
    {"aten::prelu", nm_k_prelu},
    {"aten::glu", nm_k_glu},
    {"aten::cosine_similarity", nm_k_cosine_similarity},
    {NULL, NULL},
};
