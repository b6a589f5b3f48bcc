/* runtime/kernels/rnn.c: recurrent layers and cells (aten::lstm, aten::gru,
 * aten::rnn_tanh, aten::rnn_relu and the *_cell ops), as PyTorch 1.13's CPU implementation
 * computes them (aten/src/ATen/native/RNN.cpp).
 *
 * Everything runs on contiguous float32 (or float64) buffers: the input
 * projections of a layer for all time steps are one GEMM, then each step is
 * one GEMM with the hidden state and a pointwise loop over the gates.
 * bfloat16 inputs are computed in float32 and rounded at the end. Packed
 * sequences (the .data overloads) use the same loop: step t updates the first
 * batch_sizes[t] rows of the hidden state, which is what PyTorch's packed
 * layers amount to (rows past the batch keep their last, or initial, state).
 *
 * Gate order: LSTM i, f, g, o; GRU r, z, n. params hold per layer and
 * direction [w_ih, w_hh, (b_ih, b_hh), (w_hr)].
 */
#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/args.h"
#include "runtime.h"

typedef enum rnn_mode { RNN_LSTM, RNN_GRU, RNN_TANH, RNN_RELU } rnn_mode;

static const char *const rnn_names[] = {"lstm", "gru", "rnn_tanh", "rnn_relu"};

static int64_t rnn_ngates(rnn_mode m) { return m == RNN_LSTM ? 4 : m == RNN_GRU ? 3 : 1; }

/* ------------------------------------------------------------- helpers */

/* The dtype the loops run in, or TS_DT_NONE after an error (PyTorch's CPU
 * GEMM refuses Half and the integer types). */
static ts_dtype rnn_compute_dtype(ts_rt_ctx *c, ts_dtype dt) {
  if (dt == TS_DT_FLOAT32 || dt == TS_DT_FLOAT64) return dt;
  if (dt == TS_DT_BFLOAT16) return TS_DT_FLOAT32;
  const char *name = ts_dtype_name(dt);
  ts_rt_fail(c, "\"addmm_impl_cpu_\" not implemented for '%s'", name ? name : "?");
  return TS_DT_NONE;
}

/* New: t as a contiguous tensor of dtype `cd` (t itself when it already is). */
static ts_rt_tensor *rnn_prep(ts_rt_ctx *c, ts_rt_tensor *t, ts_dtype cd) {
  if (t->dtype == cd) return ts_rt_tensor_contiguous(c, t);
  return ts_rt_tensor_to_dtype(c, t, cd);
}

static bool rnn_fits_int(ts_rt_ctx *c, int64_t v) {
  if (v >= 0 && v <= INT_MAX) return true;
  return ts_rt_fail(c, "RNN: size %lld too large for BLAS", (long long)v);
}

/* out[m, n] (row stride ldo) = a[m, k] (row stride lda) @ w[n, k]^T + bias[n]
 * (bias may be NULL), as PyTorch's addmm computes linear. Contiguous rows. */
static void rnn_gemm_nt(bool f64, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda, const void *w,
                        const void *bias, void *out, int64_t ldo) {
  if (m == 0 || n == 0) return;
  size_t es = f64 ? 8 : 4;
  for (int64_t i = 0; i < m; i++) {
    char *row = (char *)out + (size_t)(i * ldo) * es;
    if (bias) memcpy(row, bias, (size_t)n * es);
    else memset(row, 0, (size_t)n * es);
  }
  if (k == 0) return;
  if (f64)
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)k, 1.0, a, (int)lda, w, (int)k, 1.0, out,
                (int)ldo);
  else
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)k, 1.0f, a, (int)lda, w, (int)k, 1.0f,
                out, (int)ldo);
}

/* The pointwise part of one step for `rows` batch rows: gi and gh hold the
 * input and hidden projections ([rows, G*hs], row strides ldi/ldh, biases
 * included); h/cs are updated in place (LSTM writes the unprojected new h
 * to hout, which may alias h when there is no projection). */
#define RNN_DEFINE_CELLS(T, SUF, EXPF, TANHF)                                                                       \
  static T rnn_sigmoid_##SUF(T x) { return (T)1 / ((T)1 + EXPF(-x)); }                                              \
  static void rnn_cell_##SUF(rnn_mode mode, int64_t rows, int64_t hs, const T *gi, int64_t ldi, const T *gh,       \
                             int64_t ldh, const T *h, int64_t ldhh, T *cs, T *hout, int64_t ldo) {                  \
    for (int64_t b = 0; b < rows; b++) {                                                                            \
      const T *xi = gi + b * ldi, *xh = gh + b * ldh;                                                               \
      const T *hr = h + b * ldhh;                                                                                   \
      T *o = hout + b * ldo;                                                                                        \
      switch (mode) {                                                                                               \
      case RNN_LSTM: {                                                                                              \
        T *cr = cs + b * hs;                                                                                        \
        for (int64_t j = 0; j < hs; j++) {                                                                          \
          T ig = rnn_sigmoid_##SUF(xh[j] + xi[j]);                                                                  \
          T fg = rnn_sigmoid_##SUF(xh[hs + j] + xi[hs + j]);                                                        \
          T cg = TANHF(xh[2 * hs + j] + xi[2 * hs + j]);                                                            \
          T og = rnn_sigmoid_##SUF(xh[3 * hs + j] + xi[3 * hs + j]);                                                \
          T fc = fg * cr[j];                                                                                        \
          T icg = ig * cg;                                                                                          \
          T cy = fc + icg;                                                                                          \
          cr[j] = cy;                                                                                               \
          o[j] = og * TANHF(cy);                                                                                    \
        }                                                                                                           \
        break;                                                                                                      \
      }                                                                                                             \
      case RNN_GRU:                                                                                                 \
        for (int64_t j = 0; j < hs; j++) {                                                                          \
          T r = rnn_sigmoid_##SUF(xh[j] + xi[j]);                                                                   \
          T z = rnn_sigmoid_##SUF(xh[hs + j] + xi[hs + j]);                                                         \
          T hn = xh[2 * hs + j] * r;                                                                                \
          T n = TANHF(xi[2 * hs + j] + hn);                                                                         \
          T d = hr[j] - n;                                                                                          \
          T dz = d * z;                                                                                             \
          o[j] = dz + n;                                                                                            \
        }                                                                                                           \
        break;                                                                                                      \
      case RNN_TANH:                                                                                                \
        for (int64_t j = 0; j < hs; j++) o[j] = TANHF(xh[j] + xi[j]);                                               \
        break;                                                                                                      \
      case RNN_RELU: /* relu keeps a NaN, as at::relu does */                                                       \
        for (int64_t j = 0; j < hs; j++) {                                                                          \
          T v = xh[j] + xi[j];                                                                                      \
          o[j] = v < (T)0 ? (T)0 : v;                                                                               \
        }                                                                                                           \
        break;                                                                                                      \
      }                                                                                                             \
    }                                                                                                               \
  }

RNN_DEFINE_CELLS(float, f32, expf, tanhf)
RNN_DEFINE_CELLS(double, f64, exp, tanh)

static void rnn_cell(bool f64, rnn_mode mode, int64_t rows, int64_t hs, const void *gi, int64_t ldi, const void *gh,
                     int64_t ldh, const void *h, int64_t ldhh, void *cs, void *hout, int64_t ldo) {
  if (f64) rnn_cell_f64(mode, rows, hs, gi, ldi, gh, ldh, h, ldhh, cs, hout, ldo);
  else rnn_cell_f32(mode, rows, hs, gi, ldi, gh, ldh, h, ldhh, cs, hout, ldo);
}

static void rnn_copy(void *dst, const void *src, size_t n) {
  if (n) memcpy(dst, src, n);
}

/* Writes "[a, b, c]" of a tensor's sizes into buf. */
static const char *rnn_sizes_str(const ts_rt_tensor *t, char *buf, size_t cap) {
  size_t n = 0;
  n += (size_t)snprintf(buf + n, cap - n, "[");
  for (int32_t i = 0; i < t->ndim && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)t->sizes[i]);
  if (n < cap) snprintf(buf + n, cap - n, "]");
  return buf;
}

/* ---------------------------------------------------------- full layers */

/* One recurrent module over a sequence. Rows of x (compute dtype,
 * contiguous [N, I]) at step t are x[off[t] .. off[t] + bs[t]); bs is
 * non-increasing, bs[0] == B. */
typedef struct rnn_args {
  rnn_mode mode;
  ts_dtype cd;
  int64_t T, B, N;
  const int64_t *off, *bs;
  ts_rt_tensor *hx, *cx; /* [L*D, B, P], [L*D, B, H] (cx: LSTM only); caller's dtype */
  const ts_rt_list *params;
  bool has_biases, bidir;
  int64_t L;
  /* outputs (compute dtype): y [N, D*P], hn [L*D, B, P], cn [L*D, B, H] */
  ts_rt_tensor *y, *hn, *cn;
} rnn_args;

/* Checks the parameter list against the layer geometry and returns the
 * parameter tensor `k` of (layer, dir) in the compute dtype (new). */
static ts_rt_tensor *rnn_param(ts_rt_ctx *c, const rnn_args *a, int64_t idx, int64_t r0, int64_t r1,
                               ts_dtype want_dt) {
  ts_iv v = a->params->items[idx];
  if (v.tag != TS_IV_TENSOR) {
    ts_rt_fail(c, "%s: parameter %lld is not a Tensor", rnn_names[a->mode], (long long)idx);
    return NULL;
  }
  ts_rt_tensor *t = v.u.t;
  if (t->dtype != want_dt) {
    ts_rt_fail(c, "mat1 and mat2 must have the same dtype");
    return NULL;
  }
  bool ok = r1 < 0 ? (t->ndim == 1 && t->sizes[0] == r0) : (t->ndim == 2 && t->sizes[0] == r0 && t->sizes[1] == r1);
  if (!ok) {
    char buf[128];
    if (r1 < 0)
      ts_rt_fail(c, "%s: parameter %lld has shape %s, expected [%lld]", rnn_names[a->mode], (long long)idx,
                 rnn_sizes_str(t, buf, sizeof buf), (long long)r0);
    else
      ts_rt_fail(c, "%s: parameter %lld has shape %s, expected [%lld, %lld]", rnn_names[a->mode], (long long)idx,
                 rnn_sizes_str(t, buf, sizeof buf), (long long)r0, (long long)r1);
    return NULL;
  }
  return rnn_prep(c, t, a->cd);
}

/* Runs every layer and direction; fills a->y, a->hn, a->cn. */
static bool rnn_run(ts_rt_ctx *c, rnn_args *a, ts_rt_tensor *x0, ts_dtype in_dt) {
  bool f64 = a->cd == TS_DT_FLOAT64;
  size_t es = f64 ? 8 : 4;
  int64_t D = a->bidir ? 2 : 1, G = rnn_ngates(a->mode);
  int64_t P = a->hx->sizes[2];
  int64_t H = a->cx ? a->cx->sizes[2] : P;
  bool proj = a->mode == RNN_LSTM && P != H;
  int64_t per = 2 + (a->has_biases ? 2 : 0) + (proj ? 1 : 0);
  int64_t GH;
  if (__builtin_mul_overflow(G, H, &GH)) return ts_rt_oom(c);
  int64_t nparams;
  if (__builtin_mul_overflow(a->L * D, per, &nparams) || (int64_t)a->params->n != nparams)
    return ts_rt_fail(c, "got an incorrect number of RNN parameters");
  if (!rnn_fits_int(c, a->N) || !rnn_fits_int(c, GH) || !rnn_fits_int(c, D * P) || !rnn_fits_int(c, x0->sizes[1]))
    return false;

  bool ok = false;
  ts_rt_tensor *h0 = NULL, *c0 = NULL, *gi = NULL, *gh = NULL, *hfull = NULL, *cur = NULL, *next = NULL;
  ts_rt_tensor *w_ih = NULL, *w_hh = NULL, *b_ih = NULL, *b_hh = NULL, *w_hr = NULL;
  int64_t hsz[3] = {a->L * D, a->B, P}, csz[3] = {a->L * D, a->B, H};
  int64_t gisz[2] = {a->N, GH}, ghsz[2] = {a->B, GH}, hfsz[2] = {a->B, H}, ysz[2] = {a->N, D * P};
  h0 = rnn_prep(c, a->hx, a->cd);
  if (!h0) goto done;
  if (a->cx && !(c0 = rnn_prep(c, a->cx, a->cd))) goto done;
  a->hn = ts_rt_tensor_new(c, a->cd, 3, hsz, false);
  a->cn = ts_rt_tensor_new(c, a->cd, 3, csz, false);
  gh = ts_rt_tensor_new(c, a->cd, 2, ghsz, false);
  hfull = proj ? ts_rt_tensor_new(c, a->cd, 2, hfsz, false) : NULL;
  if (!a->hn || !a->cn || !gh || (proj && !hfull)) goto done;
  rnn_copy(ts_rt_tensor_data(a->hn), ts_rt_tensor_data(h0), (size_t)ts_rt_tensor_numel(a->hn) * es);
  if (c0) rnn_copy(ts_rt_tensor_data(a->cn), ts_rt_tensor_data(c0), (size_t)ts_rt_tensor_numel(a->cn) * es);
  ts_rt_tensor_retain(x0);
  cur = x0;
  /* Nothing to compute for an empty batch or state (the data pointers may be NULL). */
  bool empty = a->N == 0 || a->B == 0 || H == 0;
  for (int64_t l = 0; l < a->L; l++) {
    int64_t in = cur->sizes[1];
    next = ts_rt_tensor_new(c, a->cd, 2, ysz, false);
    if (!next) goto done;
    for (int64_t d = 0; d < D && !empty; d++) {
      int64_t base = (l * D + d) * per;
      if (!(w_ih = rnn_param(c, a, base, GH, in, in_dt)) || !(w_hh = rnn_param(c, a, base + 1, GH, P, in_dt)))
        goto done;
      if (a->has_biases &&
          (!(b_ih = rnn_param(c, a, base + 2, GH, -1, in_dt)) || !(b_hh = rnn_param(c, a, base + 3, GH, -1, in_dt))))
        goto done;
      if (proj && !(w_hr = rnn_param(c, a, base + per - 1, P, H, in_dt))) goto done;
      if (!gi && !(gi = ts_rt_tensor_new(c, a->cd, 2, gisz, false))) goto done;
      char *gid = ts_rt_tensor_data(gi), *ghd = ts_rt_tensor_data(gh), *yd = ts_rt_tensor_data(next);
      rnn_gemm_nt(f64, a->N, GH, in, ts_rt_tensor_data(cur), in, ts_rt_tensor_data(w_ih),
                  b_ih ? ts_rt_tensor_data(b_ih) : NULL, gid, GH);
      /* The state lives in hn/cn's slice for this layer and direction. */
      char *hs = (char *)ts_rt_tensor_data(a->hn) + (size_t)((l * D + d) * a->B * P) * es;
      char *cs = (char *)ts_rt_tensor_data(a->cn) + (size_t)((l * D + d) * a->B * H) * es;
      for (int64_t s = 0; s < a->T; s++) {
        int64_t t = d ? a->T - 1 - s : s;
        int64_t rows = a->bs[t];
        rnn_gemm_nt(f64, rows, GH, P, hs, P, ts_rt_tensor_data(w_hh), b_hh ? ts_rt_tensor_data(b_hh) : NULL, ghd,
                    GH);
        const char *git = gid + (size_t)(a->off[t] * GH) * es;
        if (proj) {
          rnn_cell(f64, a->mode, rows, H, git, GH, ghd, GH, hs, P, cs, ts_rt_tensor_data(hfull), H);
          rnn_gemm_nt(f64, rows, P, H, ts_rt_tensor_data(hfull), H, ts_rt_tensor_data(w_hr), NULL, hs, P);
        } else {
          rnn_cell(f64, a->mode, rows, H, git, GH, ghd, GH, hs, P, cs, hs, P);
        }
        char *yt = yd + (size_t)(a->off[t] * D * P + d * P) * es;
        for (int64_t b = 0; b < rows; b++)
          memcpy(yt + (size_t)(b * D * P) * es, hs + (size_t)(b * P) * es, (size_t)P * es);
      }
      ts_rt_tensor *ps[5] = {w_ih, w_hh, b_ih, b_hh, w_hr};
      for (int k = 0; k < 5; k++)
        if (ps[k]) ts_rt_tensor_release(ps[k]);
      w_ih = w_hh = b_ih = b_hh = w_hr = NULL;
    }
    ts_rt_tensor_release(cur);
    cur = next;
    next = NULL;
  }
  a->y = cur;
  cur = NULL;
  ok = true;
done:;
  ts_rt_tensor *tmp[] = {h0, c0, gi, gh, hfull, cur, next, w_ih, w_hh, b_ih, b_hh, w_hr};
  for (size_t k = 0; k < sizeof tmp / sizeof tmp[0]; k++)
    if (tmp[k]) ts_rt_tensor_release(tmp[k]);
  if (!ok) {
    if (a->hn) ts_rt_tensor_release(a->hn);
    if (a->cn) ts_rt_tensor_release(a->cn);
    a->hn = a->cn = NULL;
  }
  return ok;
}

/* New: t (compute dtype) converted back to the caller's dtype. */
static ts_rt_tensor *rnn_finish(ts_rt_ctx *c, ts_rt_tensor *t, ts_dtype dt) {
  if (t->dtype == dt) return t;
  ts_rt_tensor *r = ts_rt_tensor_to_dtype(c, t, dt);
  ts_rt_tensor_release(t);
  return r;
}

/* The arguments every full-layer overload shares, from `first` on:
 * hx, params, has_biases, num_layers, dropout, train, bidirectional. */
static bool rnn_common_args(ts_rt_ctx *c, ts_rt_call *call, rnn_mode mode, uint32_t first, rnn_args *a) {
  ts_rt_list *hl = NULL;
  double dropout = 0;
  bool train = false;
  if (mode == RNN_LSTM) {
    if (!ts_rt_arg_list(c, call, first, &hl)) return false;
    if (hl->n != 2 || hl->items[0].tag != TS_IV_TENSOR || hl->items[1].tag != TS_IV_TENSOR)
      return ts_rt_fail(c, "lstm expects two hidden states");
    a->hx = hl->items[0].u.t;
    a->cx = hl->items[1].u.t;
  } else {
    if (!ts_rt_arg_tensor(c, call, first, &a->hx)) return false;
    a->cx = NULL;
  }
  ts_rt_list *params = NULL;
  if (!ts_rt_arg_list(c, call, first + 1, &params) || !ts_rt_arg_bool(c, call, first + 2, &a->has_biases) ||
      !ts_rt_arg_int(c, call, first + 3, &a->L) || !ts_rt_arg_double(c, call, first + 4, &dropout) ||
      !ts_rt_arg_bool(c, call, first + 5, &train) || !ts_rt_arg_bool(c, call, first + 6, &a->bidir))
    return false;
  a->params = params;
  a->mode = mode;
  if (a->L < 1) return ts_rt_fail(c, "%s: num_layers must be at least 1, got %lld", rnn_names[mode], (long long)a->L);
  if (train && dropout > 0 && a->L > 1)
    return ts_rt_fail(c, "%s: dropout in training mode is not supported (inference only)", rnn_names[mode]);
  return true;
}

/* Checks the hidden states' shapes against [L*D, B, *]. */
static bool rnn_check_hidden(ts_rt_ctx *c, const rnn_args *a, ts_dtype dt) {
  int64_t LD = a->L * (a->bidir ? 2 : 1);
  char buf[128];
  if (a->hx->ndim != 3 || a->hx->sizes[0] != LD || a->hx->sizes[1] != a->B)
    return ts_rt_fail(c, "Expected hidden%s size (%lld, %lld, %lld), got %s", a->cx ? "[0]" : "", (long long)LD,
                      (long long)a->B, (long long)(a->hx->ndim == 3 ? a->hx->sizes[2] : 0),
                      rnn_sizes_str(a->hx, buf, sizeof buf));
  if (a->cx && (a->cx->ndim != 3 || a->cx->sizes[0] != LD || a->cx->sizes[1] != a->B))
    return ts_rt_fail(c, "Expected hidden[1] size (%lld, %lld, %lld), got %s", (long long)LD, (long long)a->B,
                      (long long)(a->cx->ndim == 3 ? a->cx->sizes[2] : 0), rnn_sizes_str(a->cx, buf, sizeof buf));
  if (a->cx && a->cx->sizes[2] < a->hx->sizes[2])
    return ts_rt_fail(c, "proj_size has to be smaller than hidden_size");
  if (a->hx->dtype != dt || (a->cx && a->cx->dtype != dt))
    return ts_rt_fail(c, "mat1 and mat2 must have the same dtype");
  return true;
}

/* Writes the outputs: (output, h_n[, c_n]). */
static bool rnn_outputs(ts_rt_ctx *c, ts_rt_call *call, rnn_args *a, ts_rt_tensor *y, ts_dtype dt) {
  ts_rt_tensor *hn = rnn_finish(c, a->hn, dt);
  ts_rt_tensor *cn = a->cx ? rnn_finish(c, a->cn, dt) : NULL;
  if (!a->cx) ts_rt_tensor_release(a->cn);
  y = y ? rnn_finish(c, y, dt) : NULL;
  if (!hn || (a->cx && !cn) || !y) {
    if (hn) ts_rt_tensor_release(hn);
    if (cn) ts_rt_tensor_release(cn);
    if (y) ts_rt_tensor_release(y);
    return false;
  }
  call->out[0] = ts_iv_tensor(y);
  call->out[1] = ts_iv_tensor(hn);
  if (a->cx) call->out[2] = ts_iv_tensor(cn);
  return true;
}

/* aten::{lstm,gru,rnn_tanh,rnn_relu}.input: a padded batch, time-major unless
 * batch_first. */
static bool rnn_input_kernel(ts_rt_ctx *c, ts_rt_call *call, rnn_mode mode) {
  ts_rt_tensor *x = NULL;
  bool batch_first = false;
  rnn_args a;
  memset(&a, 0, sizeof a);
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !rnn_common_args(c, call, mode, 1, &a) ||
      !ts_rt_arg_bool(c, call, 8, &batch_first))
    return false;
  if (x->ndim != 3) return ts_rt_fail(c, "input must have 3 dimensions, got %d", (int)x->ndim);
  ts_dtype cd = rnn_compute_dtype(c, (ts_dtype)x->dtype);
  if (cd == TS_DT_NONE) return false;
  a.cd = cd;
  a.T = x->sizes[batch_first ? 1 : 0];
  a.B = x->sizes[batch_first ? 0 : 1];
  if (a.T == 0) return ts_rt_fail(c, "Expected sequence length to be larger than 0 in RNN");
  if (!rnn_check_hidden(c, &a, (ts_dtype)x->dtype)) return false;
  if (__builtin_mul_overflow(a.T, a.B, &a.N)) return ts_rt_oom(c);
  int64_t *off = ts_rt_malloc((size_t)a.T * 2 * sizeof(int64_t));
  if (!off) return ts_rt_oom(c);
  int64_t *bs = off + a.T;
  for (int64_t t = 0; t < a.T; t++) {
    off[t] = t * a.B;
    bs[t] = a.B;
  }
  a.off = off;
  a.bs = bs;
  /* Time-major rows [T*B, I]: a transposed view when batch_first, then one
   * contiguous copy in the compute dtype. */
  int64_t vs[3] = {a.T, a.B, x->sizes[2]};
  int64_t vst[3] = {x->strides[batch_first ? 1 : 0], x->strides[batch_first ? 0 : 1], x->strides[2]};
  ts_rt_tensor *xv = ts_rt_tensor_view(c, x, x->offset, 3, vs, vst);
  ts_rt_tensor *xc = xv ? rnn_prep(c, xv, cd) : NULL;
  ts_rt_tensor *x2 = NULL;
  bool ok = false;
  if (xc) {
    int64_t s2[2] = {a.N, x->sizes[2]}, st2[2] = {x->sizes[2], 1};
    x2 = ts_rt_tensor_view(c, xc, xc->offset, 2, s2, st2);
  }
  if (x2 && rnn_run(c, &a, x2, (ts_dtype)x->dtype)) {
    /* y is [T*B, D*P] time-major: reshape, and transpose back for batch_first. */
    int64_t DP = a.y->sizes[1];
    int64_t ys[3] = {a.T, a.B, DP}, yst[3] = {a.B * DP, DP, 1};
    if (batch_first) {
      ys[0] = a.B, ys[1] = a.T;
      yst[0] = DP, yst[1] = a.B * DP;
    }
    ts_rt_tensor *yv = ts_rt_tensor_view(c, a.y, 0, 3, ys, yst);
    ts_rt_tensor *y = yv ? ts_rt_tensor_contiguous(c, yv) : NULL;
    if (yv) ts_rt_tensor_release(yv);
    ts_rt_tensor_release(a.y);
    if (y) ok = rnn_outputs(c, call, &a, y, (ts_dtype)x->dtype);
    else {
      ts_rt_tensor_release(a.hn);
      ts_rt_tensor_release(a.cn);
    }
  }
  ts_rt_free(off);
  if (xv) ts_rt_tensor_release(xv);
  if (xc) ts_rt_tensor_release(xc);
  if (x2) ts_rt_tensor_release(x2);
  return ok;
}

/* aten::{lstm,gru,rnn_tanh,rnn_relu}.data: a PackedSequence (data [N, I], batch_sizes
 * [T] int64, non-increasing). */
static bool rnn_data_kernel(ts_rt_ctx *c, ts_rt_call *call, rnn_mode mode) {
  ts_rt_tensor *x = NULL, *bst = NULL;
  rnn_args a;
  memset(&a, 0, sizeof a);
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_tensor(c, call, 1, &bst) ||
      !rnn_common_args(c, call, mode, 2, &a))
    return false;
  if (x->ndim != 2) return ts_rt_fail(c, "packed input must have 2 dimensions, got %d", (int)x->ndim);
  if (bst->ndim != 1 || bst->dtype != TS_DT_INT64) return ts_rt_fail(c, "batch_sizes should be a 1D int64 tensor");
  ts_dtype cd = rnn_compute_dtype(c, (ts_dtype)x->dtype);
  if (cd == TS_DT_NONE) return false;
  a.cd = cd;
  a.T = bst->sizes[0];
  if (a.T == 0) return ts_rt_fail(c, "Expected sequence length to be larger than 0 in RNN");
  int64_t *off = ts_rt_malloc((size_t)a.T * 2 * sizeof(int64_t));
  if (!off) return ts_rt_oom(c);
  int64_t *bs = off + a.T, total = 0;
  const char *bd = ts_rt_tensor_data(bst);
  for (int64_t t = 0; t < a.T; t++) {
    bs[t] = *(const int64_t *)(const void *)(bd + (size_t)(t * bst->strides[0]) * 8);
    if (bs[t] <= 0 || (t > 0 && bs[t] > bs[t - 1]) || total > INT64_MAX - bs[t]) {
      ts_rt_free(off);
      return ts_rt_fail(c, "batch_sizes must be positive and non-increasing");
    }
    off[t] = total;
    total += bs[t];
  }
  if (total != x->sizes[0]) {
    ts_rt_free(off);
    return ts_rt_fail(c, "batch_sizes sum to %lld, but the packed data has %lld rows", (long long)total,
                      (long long)x->sizes[0]);
  }
  a.off = off;
  a.bs = bs;
  a.N = total;
  a.B = bs[0];
  bool ok = false;
  /* ATen adds the hidden state's projection to the first step's input
   * projection (B rows): a state of another batch size (not 1) fails there */
  if (a.hx->ndim == 3 && a.hx->sizes[1] != a.B && a.hx->sizes[1] != 1) {
    ts_rt_free(off);
    return ts_rt_fail(c,
                      "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton dimension 0",
                      (long long)a.hx->sizes[1], (long long)a.B);
  }
  if (rnn_check_hidden(c, &a, (ts_dtype)x->dtype)) {
    ts_rt_tensor *xc = rnn_prep(c, x, cd);
    if (xc && rnn_run(c, &a, xc, (ts_dtype)x->dtype)) ok = rnn_outputs(c, call, &a, a.y, (ts_dtype)x->dtype);
    if (xc) ts_rt_tensor_release(xc);
  }
  ts_rt_free(off);
  return ok;
}

static bool rnn_k_lstm_input(ts_rt_ctx *c, ts_rt_call *call) { return rnn_input_kernel(c, call, RNN_LSTM); }
static bool rnn_k_gru_input(ts_rt_ctx *c, ts_rt_call *call) { return rnn_input_kernel(c, call, RNN_GRU); }
static bool rnn_k_tanh_input(ts_rt_ctx *c, ts_rt_call *call) { return rnn_input_kernel(c, call, RNN_TANH); }
static bool rnn_k_relu_input(ts_rt_ctx *c, ts_rt_call *call) { return rnn_input_kernel(c, call, RNN_RELU); }
static bool rnn_k_lstm_data(ts_rt_ctx *c, ts_rt_call *call) { return rnn_data_kernel(c, call, RNN_LSTM); }
static bool rnn_k_gru_data(ts_rt_ctx *c, ts_rt_call *call) { return rnn_data_kernel(c, call, RNN_GRU); }
static bool rnn_k_tanh_data(ts_rt_ctx *c, ts_rt_call *call) { return rnn_data_kernel(c, call, RNN_TANH); }
static bool rnn_k_relu_data(ts_rt_ctx *c, ts_rt_call *call) { return rnn_data_kernel(c, call, RNN_RELU); }

/* ---------------------------------------------------------------- cells */

/* aten::lstm_cell / aten::gru_cell / aten::rnn_{tanh,relu}_cell: one step for a batch [B, I] with
 * hidden [B, H] (and cell [B, H] for LSTM). */
static bool rnn_cell_kernel(ts_rt_ctx *c, ts_rt_call *call, rnn_mode mode) {
  ts_rt_tensor *x = NULL, *h = NULL, *cx = NULL, *w_ih = NULL, *w_hh = NULL, *b_ih = NULL, *b_hh = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &x)) return false;
  if (mode == RNN_LSTM) {
    ts_rt_list *hl = NULL;
    if (!ts_rt_arg_list(c, call, 1, &hl)) return false;
    if (hl->n != 2 || hl->items[0].tag != TS_IV_TENSOR || hl->items[1].tag != TS_IV_TENSOR)
      return ts_rt_fail(c, "lstm_cell expects two hidden states");
    h = hl->items[0].u.t;
    cx = hl->items[1].u.t;
  } else if (!ts_rt_arg_tensor(c, call, 1, &h)) {
    return false;
  }
  if (!ts_rt_arg_tensor(c, call, 2, &w_ih) || !ts_rt_arg_tensor(c, call, 3, &w_hh) ||
      !ts_rt_arg_opt_tensor(c, call, 4, &b_ih) || !ts_rt_arg_opt_tensor(c, call, 5, &b_hh))
    return false;
  int64_t G = rnn_ngates(mode);
  if (x->ndim != 2) return ts_rt_fail(c, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  if (w_ih->ndim != 2 || w_hh->ndim != 2) return ts_rt_fail(c, "%s_cell: weights must be 2-D", rnn_names[mode]);
  int64_t H = w_hh->sizes[1];
  if (x->sizes[1] != w_ih->sizes[1])
    return ts_rt_fail(c, "input has inconsistent input_size: got %lld expected %lld", (long long)x->sizes[1],
                      (long long)w_ih->sizes[1]);
  ts_rt_tensor *hs[2] = {h, cx};
  for (int k = 0; k < (cx ? 2 : 1); k++) {
    if (hs[k]->ndim != 2 || hs[k]->sizes[0] != x->sizes[0])
      return ts_rt_fail(c, "Input batch size %lld doesn't match hidden%d batch size %lld", (long long)x->sizes[0], k,
                        (long long)(hs[k]->ndim > 0 ? hs[k]->sizes[0] : 0));
    if (hs[k]->sizes[1] != H)
      return ts_rt_fail(c, "hidden%d has inconsistent hidden_size: got %lld, expected %lld", k,
                        (long long)hs[k]->sizes[1], (long long)H);
  }
  int64_t GH;
  if (__builtin_mul_overflow(G, H, &GH)) return ts_rt_oom(c);
  if (w_ih->sizes[0] != GH || w_hh->sizes[0] != GH || (b_ih && (b_ih->ndim != 1 || b_ih->sizes[0] != GH)) ||
      (b_hh && (b_hh->ndim != 1 || b_hh->sizes[0] != GH)))
    return ts_rt_fail(c, "%s_cell: weights and biases must have %lld rows", rnn_names[mode], (long long)GH);
  ts_dtype dt = (ts_dtype)x->dtype;
  ts_dtype cd = rnn_compute_dtype(c, dt);
  if (cd == TS_DT_NONE) return false;
  ts_rt_tensor *ins[7] = {x, h, cx, w_ih, w_hh, b_ih, b_hh};
  for (int k = 0; k < 7; k++)
    if (ins[k] && ins[k]->dtype != dt) return ts_rt_fail(c, "mat1 and mat2 must have the same dtype");
  if (!rnn_fits_int(c, x->sizes[0]) || !rnn_fits_int(c, GH) || !rnn_fits_int(c, x->sizes[1])) return false;
  ts_rt_tensor *p[7] = {NULL};
  ts_rt_tensor *gi = NULL, *gh = NULL, *hy = NULL, *cy = NULL;
  bool ok = false;
  for (int k = 0; k < 7; k++)
    if (ins[k] && !(p[k] = rnn_prep(c, ins[k], cd))) goto done;
  int64_t B = x->sizes[0], gs[2] = {B, GH}, hsz[2] = {B, H};
  bool f64 = cd == TS_DT_FLOAT64;
  if (!(gi = ts_rt_tensor_new(c, cd, 2, gs, false)) || !(gh = ts_rt_tensor_new(c, cd, 2, gs, false)) ||
      !(hy = ts_rt_tensor_new(c, cd, 2, hsz, false)))
    goto done;
  rnn_gemm_nt(f64, B, GH, x->sizes[1], ts_rt_tensor_data(p[0]), x->sizes[1], ts_rt_tensor_data(p[3]),
              p[5] ? ts_rt_tensor_data(p[5]) : NULL, ts_rt_tensor_data(gi), GH);
  rnn_gemm_nt(f64, B, GH, H, ts_rt_tensor_data(p[1]), H, ts_rt_tensor_data(p[4]),
              p[6] ? ts_rt_tensor_data(p[6]) : NULL, ts_rt_tensor_data(gh), GH);
  if (cx) {
    if (!(cy = ts_rt_tensor_new(c, cd, 2, hsz, false))) goto done;
    rnn_copy(ts_rt_tensor_data(cy), ts_rt_tensor_data(p[2]), (size_t)(B * H) * (f64 ? 8 : 4));
  }
  rnn_cell(f64, mode, B, H, ts_rt_tensor_data(gi), GH, ts_rt_tensor_data(gh), GH, ts_rt_tensor_data(p[1]), H,
           cy ? ts_rt_tensor_data(cy) : NULL, ts_rt_tensor_data(hy), H);
  hy = rnn_finish(c, hy, dt);
  if (!hy) goto done;
  if (cy && !(cy = rnn_finish(c, cy, dt))) goto done;
  call->out[0] = ts_iv_tensor(hy);
  if (cy) call->out[1] = ts_iv_tensor(cy);
  hy = cy = NULL;
  ok = true;
done:
  for (int k = 0; k < 7; k++)
    if (p[k]) ts_rt_tensor_release(p[k]);
  ts_rt_tensor *tmp[4] = {gi, gh, hy, cy};
  for (int k = 0; k < 4; k++)
    if (tmp[k]) ts_rt_tensor_release(tmp[k]);
  return ok;
}

static bool rnn_k_lstm_cell(ts_rt_ctx *c, ts_rt_call *call) { return rnn_cell_kernel(c, call, RNN_LSTM); }
static bool rnn_k_gru_cell(ts_rt_ctx *c, ts_rt_call *call) { return rnn_cell_kernel(c, call, RNN_GRU); }
static bool rnn_k_tanh_cell(ts_rt_ctx *c, ts_rt_call *call) { return rnn_cell_kernel(c, call, RNN_TANH); }
static bool rnn_k_relu_cell(ts_rt_ctx *c, ts_rt_call *call) { return rnn_cell_kernel(c, call, RNN_RELU); }

const ts_rt_kernel_def ts_rt_kernels_rnn[] = {
    {"aten::lstm.input", rnn_k_lstm_input},
    {"aten::lstm.data", rnn_k_lstm_data},
    {"aten::gru.input", rnn_k_gru_input},
    {"aten::gru.data", rnn_k_gru_data},
    {"aten::rnn_tanh.input", rnn_k_tanh_input},
    {"aten::rnn_tanh.data", rnn_k_tanh_data},
    {"aten::rnn_relu.input", rnn_k_relu_input},
    {"aten::rnn_relu.data", rnn_k_relu_data},
    {"aten::lstm_cell", rnn_k_lstm_cell},
    {"aten::gru_cell", rnn_k_gru_cell},
    {"aten::rnn_tanh_cell", rnn_k_tanh_cell},
    {"aten::rnn_relu_cell", rnn_k_relu_cell},
    {NULL, NULL},
};
