/* runtime/kernels/transformer.c: the transformer "fast path" of PyTorch 1.13
 * (aten/src/ATen/native/transformers/{attention,transformer}.cpp), which
 * scripted nn.TransformerEncoderLayer and nn.MultiheadAttention take in eval
 * mode with grad disabled: aten::_native_multi_head_attention,
 * aten::_transformer_encoder_layer_fwd, and the nested-tensor ops
 * nn.TransformerEncoder uses with a src_key_padding_mask.
 *
 * The math runs on contiguous float32/float64 buffers (bfloat16 through
 * float32) with OpenBLAS GEMMs, in PyTorch's order: qkv = x @ W^T, then bias
 * and the 1/sqrt(head_dim) scale on q (in place: the per-head GEMMs read
 * q, k and v from the qkv buffer), scores = q @ k^T per head, masked
 * softmax (a fully masked row gives NaN, as PyTorch), ctx = P @ v written
 * straight into [B, L, E], out = ctx @ Wo^T + bo.
 *
 * Nested tensors: a full NestedTensor is out of scope. What the encoder's
 * fast path makes of a padding mask (_nested_tensor_from_mask, the layers,
 * to_padded_tensor) is represented as the padded dense [B, L, E] tensor whose
 * storage carries each sequence's length (tf_nested, found through the
 * storage's free_fn). Attention over such a tensor ignores keys past each
 * sequence's length, rows past it are kept zero, and to_padded_tensor cuts
 * the length to the longest sequence, as PyTorch's padded result is.
 */
#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/args.h"
#include "kernels/gemm_small.h"
#include "runtime.h"
#include "tensor_ops.h"


/* ------------------------------------------------------ nested tensors */

/* The side data of a nested tensor's storage: per-sequence lengths. */
typedef struct tf_nested {
  int64_t batch;
  int64_t len[];
} tf_nested;

static void tf_nested_free(void *ctx, void *data) {
  ts_rt_free(data);
  ts_rt_free(ctx);
}

/* The lengths when t is a nested tensor made here (a 3-d contiguous tensor
 * over the whole marked storage), else NULL. */
static const tf_nested *tf_nested_of(const ts_rt_tensor *t) {
  if (!t || t->storage->free_fn != tf_nested_free) return NULL;
  const tf_nested *n = t->storage->free_ctx;
  if (t->ndim != 3 || t->sizes[0] != n->batch || t->offset != 0 || !ts_rt_tensor_is_contiguous(t)) return NULL;
  return n;
}

bool ts_rt_tensor_is_nested(const ts_rt_tensor *t) { return tf_nested_of(t) != NULL; }

/* New nested tensor [B, L, E] of dtype dt with the given lengths; its data
 * is uninitialised. */
static ts_rt_tensor *tf_nested_new(ts_rt_ctx *c, ts_dtype dt, int64_t B, int64_t L, int64_t E, const int64_t *lens) {
  int64_t n, nb;
  size_t es = ts_dtype_size(dt);
  if (__builtin_mul_overflow(B, L, &n) || __builtin_mul_overflow(n, E, &n) ||
      __builtin_mul_overflow(n, (int64_t)es, &nb) || (uint64_t)nb > SIZE_MAX / 2) {
    ts_rt_fail(c, "nested tensor too large");
    return NULL;
  }
  tf_nested *side = ts_rt_malloc(sizeof(tf_nested) + (size_t)B * sizeof(int64_t));
  void *data = nb ? ts_rt_malloc((size_t)nb) : NULL;
  if (!side || (nb && !data)) {
    ts_rt_free(side);
    ts_rt_free(data);
    ts_rt_oom(c);
    return NULL;
  }
  side->batch = B;
  if (B) memcpy(side->len, lens, (size_t)B * sizeof(int64_t));
  ts_rt_storage *s = ts_rt_storage_wrap(c, data, (size_t)nb, tf_nested_free, side);
  if (!s) {
    ts_rt_free(side);
    ts_rt_free(data);
    return NULL;
  }
  int64_t sizes[3] = {B, L, E}, strides[3];
  ts_rt_strides_contiguous(3, sizes, strides);
  ts_rt_tensor *t = ts_rt_tensor_new_view(c, s, dt, 0, 3, sizes, strides);
  ts_rt_storage_release(s);
  return t;
}

/* ------------------------------------------------------------- helpers */

/* The dtype the math runs in; TS_DT_NONE after an error. */
static ts_dtype tf_compute_dtype(ts_rt_ctx *c, ts_dtype dt) {
  if (dt == TS_DT_FLOAT32 || dt == TS_DT_FLOAT64) return dt;
  if (dt == TS_DT_BFLOAT16) return TS_DT_FLOAT32;
  const char *name = ts_dtype_name(dt);
  ts_rt_fail(c, "\"addmm_impl_cpu_\" not implemented for '%s'", name ? name : "?");
  return TS_DT_NONE;
}

/* New: t contiguous in dtype cd (t itself when it already is). */
static ts_rt_tensor *tf_prep(ts_rt_ctx *c, ts_rt_tensor *t, ts_dtype cd) {
  if (t->dtype == cd) return ts_rt_tensor_contiguous(c, t);
  return ts_rt_tensor_to_dtype(c, t, cd);
}

static void tf_release_all(ts_rt_tensor **ts, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (ts[i]) ts_rt_tensor_release(ts[i]);
}

/* out[m, n] (ldo) = a[m, k] (lda) @ w[n, k]^T (ldw) (+ bias[n] first, as
 * addmm), or with trans_w false: a @ w[k, n] (ldw). */
static void tf_gemm(bool f64, bool trans_w, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda, const void *w,
                    int64_t ldw, const void *bias, void *out, int64_t ldo) {
  if (m == 0 || n == 0) return;
  size_t es = f64 ? 8 : 4;
  /* Without a bias BLAS overwrites C (beta 0), so it is not cleared first. */
  for (int64_t i = 0; i < m && (bias || k == 0); i++) {
    char *row = (char *)out + (size_t)(i * ldo) * es;
    if (bias) memcpy(row, bias, (size_t)n * es);
    else memset(row, 0, (size_t)n * es);
  }
  if (k == 0) return;
  CBLAS_TRANSPOSE tw = trans_w ? CblasTrans : CblasNoTrans;
  double beta = bias ? 1.0 : 0.0;
  if (f64)
    cblas_dgemm(CblasRowMajor, CblasNoTrans, tw, (int)m, (int)n, (int)k, 1.0, a, (int)lda, w, (int)ldw, beta, out,
                (int)ldo);
  else
    cblas_sgemm(CblasRowMajor, CblasNoTrans, tw, (int)m, (int)n, (int)k, 1.0f, a, (int)lda, w, (int)ldw, (float)beta,
                out, (int)ldo);
}

/* out[m, n] (ldo) = a @ w[n, k]^T (+ bias), through w's packed copy when
 * it has one (a float32 constant and few rows: gemm_small.c), else as
 * tf_gemm. */
static void tf_linear(ts_rt_ctx *c, const ts_rt_gemm_pack *pk, bool f64, int64_t m, int64_t n, int64_t k, const void *a,
                      int64_t lda, const void *w, const void *bias, void *out, int64_t ldo) {
  if (pk && !f64 && m > 0) ts_rt_gemm_small(c, pk, m, a, lda, bias, out, ldo);
  else tf_gemm(f64, true, m, n, k, a, lda, w, k, bias, out, ldo);
}

/* The packed copy of weight input i ([n, k]) for m rows, or NULL (see
 * ts_rt_gemm_pack_input). */
static const ts_rt_gemm_pack *tf_pack(const ts_rt_call *call, uint32_t i, bool f64, int64_t m, int64_t n, int64_t k) {
  const ts_rt_gemm_pack *pk = f64 ? NULL : ts_rt_gemm_pack_input(call, i, true, m);
  return pk && ts_rt_gemm_pack_k(pk) == k && ts_rt_gemm_pack_n(pk) == n ? pk : NULL;
}

/* A key-side mask for the softmax: bool bytes (nonzero: masked out), either
 * [B, L] (type 1, key padding) or [B, H, L, L] (type 2); and/or the nested
 * lengths (keys at or past len[b] are masked). */
typedef struct tf_mask {
  const uint8_t *m; /* NULL: none */
  int type;
  const int64_t *lens; /* NULL: none */
} tf_mask;

/* The typed loops, for float and double. */
#define TF_DEFINE(T, SUF, EXPF, SQRTF)                                                                        \
  /* Softmax over the last dim of scores [B, H, L, L] with the mask. */                                             \
  static void tf_softmax_##SUF(T *sc, int64_t B, int64_t H, int64_t L, const tf_mask *mk) {                         \
    for (int64_t b = 0; b < B; b++)                                                                                 \
      for (int64_t h = 0; h < H; h++)                                                                               \
        for (int64_t i = 0; i < L; i++) {                                                                           \
          T *row = sc + ((b * H + h) * L + i) * L;                                                                  \
          const uint8_t *mrow = NULL;                                                                               \
          if (mk->m) mrow = mk->type == 1 ? mk->m + b * L : mk->m + ((b * H + h) * L + i) * L;                      \
          int64_t lim = mk->lens ? mk->lens[b] : L;                                                                 \
          T mx = -INFINITY;                                                                                         \
          bool any = false;                                                                                         \
          for (int64_t j = 0; j < lim; j++)                                                                         \
            if (!mrow || !mrow[j]) {                                                                                \
              if (!any || row[j] > mx || row[j] != row[j]) mx = row[j];                                             \
              any = true;                                                                                           \
            }                                                                                                       \
          if (!any) {                                                                                               \
            for (int64_t j = 0; j < L; j++) row[j] = (T)NAN;                                                        \
            continue;                                                                                               \
          }                                                                                                         \
          T sum = 0;                                                                                                \
          for (int64_t j = 0; j < L; j++) {                                                                         \
            if (j < lim && (!mrow || !mrow[j])) {                                                                   \
              row[j] = EXPF(row[j] - mx);                                                                           \
              sum += row[j];                                                                                        \
            } else {                                                                                                \
              row[j] = 0;                                                                                           \
            }                                                                                                       \
          }                                                                                                         \
          for (int64_t j = 0; j < L; j++) row[j] = row[j] / sum;                                                    \
        }                                                                                                           \
  }                                                                                                                 \
  /* dst[b, i, :] = sum_h P[b, h, i, :] / H */                                                                      \
  static void tf_avg_heads_##SUF(T *dst, const T *p, int64_t B, int64_t H, int64_t L) {                             \
    for (int64_t b = 0; b < B; b++)                                                                                 \
      for (int64_t i = 0; i < L * L; i++) {                                                                         \
        T s = 0;                                                                                                    \
        for (int64_t h = 0; h < H; h++) s += p[(b * H + h) * L * L + i];                                            \
        dst[b * L * L + i] = s / (T)H;                                                                              \
      }                                                                                                             \
  }

TF_DEFINE(float, f32, expf, sqrtf)
TF_DEFINE(double, f64, exp, sqrt)

/* Layer norm over rows of E (out may be x), float64: Welford in double. */
static void tf_layer_norm_f64(double *out, const double *x, int64_t rows, int64_t E, const double *w,
                              const double *bias, double eps) {
  for (int64_t r = 0; r < rows; r++) {
    const double *xr = x + r * E;
    double *o = out + r * E;
    double mean = 0, m2 = 0;
    for (int64_t j = 0; j < E; j++) {
      double d = xr[j] - mean;
      mean += d / (double)(j + 1);
      m2 += d * (xr[j] - mean);
    }
    double var = E > 0 ? m2 / (double)E : 0;
    double rstd = 1.0 / sqrt((var > 0 ? var : 0) + eps);
    for (int64_t j = 0; j < E; j++) o[j] = (xr[j] - mean) * rstd * w[j] + bias[j];
  }
}

/* qkv[r, :E] = (qkv[r, :E] + bias[:E]) * scale; the k and v thirds get
 * their bias only (PyTorch's scale of k and v is 1). */
static void tf_bias_scale_f64(double *qkv, int64_t BL, int64_t E, const double *bias, double scale) {
  for (int64_t r = 0; r < BL; r++) {
    double *row = qkv + r * 3 * E;
    for (int64_t j = 0; j < E; j++) row[j] = (row[j] + bias[j]) * scale;
    for (int64_t j = E; j < 3 * E; j++) row[j] = row[j] + bias[j];
  }
}

static void tf_add_f64(double *x, const double *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) x[i] = x[i] + y[i];
}

/* Zeroes rows t >= len[b] of x [B, L, E] (compute dtype). */
static void tf_zero_padding(bool f64, void *x, int64_t B, int64_t L, int64_t E, const int64_t *lens) {
  size_t es = f64 ? 8 : 4;
  for (int64_t b = 0; b < B; b++)
    if (lens[b] < L) memset((char *)x + (size_t)((b * L + lens[b]) * E) * es, 0, (size_t)((L - lens[b]) * E) * es);
}

/* Float32 versions of the hot loops on 4-lane vectors (SSE2 in the
 * generic x86-64 build; GCC does not vectorize float reductions or
 * unknown-count loops at -O2 by itself). */
typedef float tf_v4 __attribute__((vector_size(16)));
typedef int32_t tf_i4 __attribute__((vector_size(16)));

static inline tf_v4 tf_ld4(const float *p) {
  tf_v4 v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline void tf_st4(float *p, tf_v4 v) { memcpy(p, &v, sizeof v); }

/* Layer norm over rows of E (out may be x): mean, then the variance of the
 * centred values, summed in 4 float lanes per row as PyTorch's float
 * kernel does (its lanes are wider; the difference is rounding). */
static void tf_layer_norm_f32v(float *out, const float *x, int64_t rows, int64_t E, const float *w, const float *b,
                               double eps) {
  int64_t E4 = E & ~(int64_t)3;
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * E;
    float *o = out + r * E;
    tf_v4 s = {0};
    for (int64_t j = 0; j < E4; j += 4) s += tf_ld4(xr + j);
    float sum = (s[0] + s[1]) + (s[2] + s[3]);
    for (int64_t j = E4; j < E; j++) sum += xr[j];
    float m = E > 0 ? sum / (float)E : 0;
    tf_v4 mv = {m, m, m, m}, q = {0};
    for (int64_t j = 0; j < E4; j += 4) {
      tf_v4 d = tf_ld4(xr + j) - mv;
      q += d * d;
    }
    float sq = (q[0] + q[1]) + (q[2] + q[3]);
    for (int64_t j = E4; j < E; j++) sq += (xr[j] - m) * (xr[j] - m);
    float var = E > 0 ? sq / (float)E : 0;
    float rstd = (float)(1.0 / sqrt((double)var + eps));
    tf_v4 rv = {rstd, rstd, rstd, rstd};
    for (int64_t j = 0; j < E4; j += 4) tf_st4(o + j, (tf_ld4(xr + j) - mv) * rv * tf_ld4(w + j) + tf_ld4(b + j));
    for (int64_t j = E4; j < E; j++) o[j] = (xr[j] - m) * rstd * w[j] + b[j];
  }
}

/* qkv[r, :E] = (qkv[r, :E] + bias[:E]) * scale, qkv[r, E:] += bias[E:]:
 * tf_bias_scale_f64's float32 version, on 4-lane vectors. */
static void tf_bias_scale_f32v(float *qkv, int64_t BL, int64_t E, const float *bias, float scale) {
  int64_t E4 = E & ~(int64_t)3, F4 = (3 * E) & ~(int64_t)3;
  tf_v4 sv = {scale, scale, scale, scale};
  for (int64_t r = 0; r < BL; r++) {
    float *row = qkv + r * 3 * E;
    for (int64_t j = 0; j < E4; j += 4) tf_st4(row + j, (tf_ld4(row + j) + tf_ld4(bias + j)) * sv);
    for (int64_t j = E4; j < E; j++) row[j] = (row[j] + bias[j]) * scale;
    int64_t j = E;
    for (; j < 3 * E && (j & 3); j++) row[j] = row[j] + bias[j];
    for (; j < F4; j += 4) tf_st4(row + j, tf_ld4(row + j) + tf_ld4(bias + j));
    for (; j < 3 * E; j++) row[j] = row[j] + bias[j];
  }
}

/* The per-head products below are built for AVX-512, AVX2 and plain
 * x86-64 (chosen when the library loads) at O3, as conv.c's hot loops. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#define TF_HOT __attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))
#else
#define TF_HOT
#endif

/* (loaded with memcpy in place: a function returning one would change the
 * ABI of the generic build) */
typedef float tf_v8 __attribute__((vector_size(32)));

/* One float32 head's scores s [L, L] = q @ k^T (q, k: L rows of dh, row
 * stride ld), in tiles of 4 rows x 8 columns held in vectors over the
 * whole dh (k^T copied into kt, [dh, L rounded up to 8], zero padded):
 * at these sizes OpenBLAS's entry path and packing cost more than the
 * products. Rows past L in the last tile repeat row L-1 (computed, not
 * stored). */
TF_HOT static void tf_head_scores_f32(float *restrict s, const float *q, const float *k, int64_t ld, int64_t L,
                                      int64_t dh, float *restrict kt) {
  int64_t Lp = (L + 7) & ~(int64_t)7;
  for (int64_t d = 0; d < dh; d++)
    for (int64_t j = 0; j < Lp; j++) kt[d * Lp + j] = j < L ? k[j * ld + d] : 0.0f;
  for (int64_t i0 = 0; i0 < L; i0 += 4) {
    const float *q0 = q + i0 * ld, *q1 = q + (i0 + 1 < L ? i0 + 1 : L - 1) * ld;
    const float *q2 = q + (i0 + 2 < L ? i0 + 2 : L - 1) * ld, *q3 = q + (i0 + 3 < L ? i0 + 3 : L - 1) * ld;
    for (int64_t j0 = 0; j0 < Lp; j0 += 8) {
      tf_v8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
      for (int64_t d = 0; d < dh; d++) {
        tf_v8 kv;
        memcpy(&kv, kt + d * Lp + j0, sizeof kv);
        a0 += q0[d] * kv;
        a1 += q1[d] * kv;
        a2 += q2[d] * kv;
        a3 += q3[d] * kv;
      }
      tf_v8 acc[4] = {a0, a1, a2, a3};
      int64_t nj = L - j0 < 8 ? L - j0 : 8;
      for (int64_t r = 0; r < 4 && i0 + r < L; r++) memcpy(s + (i0 + r) * L + j0, &acc[r], (size_t)nj * sizeof(float));
    }
  }
}

/* One float32 head's context o [L, dh] (row stride ldo) = p [L, L] @ v
 * (L rows of dh, row stride ld): rows of o in 8-column vectors, the
 * columns past the last multiple of 8 one by one. */
TF_HOT static void tf_head_ctx_f32(float *restrict o, int64_t ldo, const float *restrict p, const float *restrict v,
                                   int64_t ld, int64_t L, int64_t dh) {
  int64_t d8 = dh & ~(int64_t)7;
  for (int64_t i = 0; i < L; i++) {
    const float *pr = p + i * L;
    float *restrict row = o + i * ldo;
    for (int64_t d0 = 0; d0 < d8; d0 += 8) {
      tf_v8 a0 = {0}, a1 = {0};
      int64_t j = 0;
      tf_v8 x0, x1;
      for (; j + 1 < L; j += 2) {
        memcpy(&x0, v + j * ld + d0, sizeof x0);
        memcpy(&x1, v + (j + 1) * ld + d0, sizeof x1);
        a0 += pr[j] * x0;
        a1 += pr[j + 1] * x1;
      }
      if (j < L) {
        memcpy(&x0, v + j * ld + d0, sizeof x0);
        a0 += pr[j] * x0;
      }
      a0 += a1;
      memcpy(row + d0, &a0, sizeof a0);
    }
    for (int64_t d = d8; d < dh; d++) {
      float acc = 0;
      for (int64_t j = 0; j < L; j++) acc += pr[j] * v[j * ld + d];
      row[d] = acc;
    }
  }
}

/* Softmax of rows of n floats with no mask (tf_softmax_f32's common case):
 * max, exp(x - max) with its sum, then one multiply by the reciprocal. */
static void tf_softmax_plain_f32(float *sc, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; r++) {
    float *row = sc + r * n, mx = -INFINITY, sum = 0;
    bool nan = false;
    for (int64_t j = 0; j < n; j++) {
      mx = row[j] > mx ? row[j] : mx;
      nan |= row[j] != row[j];
    }
    if (nan) mx = NAN;
    for (int64_t j = 0; j < n; j++) {
      row[j] = expf(row[j] - mx);
      sum += row[j];
    }
    float inv = 1.0f / sum;
    for (int64_t j = 0; j < n; j++) row[j] *= inv;
  }
}

/* x += y over n floats. */
static void tf_add_f32v(float *x, const float *y, int64_t n) {
  int64_t n4 = n & ~(int64_t)3;
  for (int64_t i = 0; i < n4; i += 4) tf_st4(x + i, tf_ld4(x + i) + tf_ld4(y + i));
  for (int64_t i = n4; i < n; i++) x[i] = x[i] + y[i];
}

/* relu in place; NaN stays NaN (the comparison is false for it). */
static void tf_relu_f64(double *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    double v = x[i];
    x[i] = v > 0 ? v : (v != v ? v : 0);
  }
}

static void tf_relu_f32v(float *x, int64_t n) {
  int64_t n4 = n & ~(int64_t)3;
  for (int64_t i = 0; i < n4; i += 4) {
    tf_v4 v = tf_ld4(x + i);
    tf_st4(x + i, (tf_v4)((tf_i4)v & ~(v < (tf_v4){0})));
  }
  for (int64_t i = n4; i < n; i++) x[i] = x[i] < 0 ? 0 : x[i];
}

/* ------------------------------------------------------------ attention */

/* The longest sequence whose float32 heads run as direct loops. */
#define TF_HEAD_SMALL 64

/* The parameters of one attention block, in the compute dtype. */
typedef struct tf_attn {
  bool f64;
  int64_t B, L, E, H;
  const void *wqkv, *bqkv, *wo, *bo; /* [3E, E], [3E], [E, E], [E] */
  const ts_rt_gemm_pack *pqkv, *po;  /* packed wqkv, wo, or NULL */
} tf_attn;

/* out [B, L, E] = attention of q/k/v inputs (each [B*L, E] contiguous; the
 * same pointer for self-attention). probs, when not NULL, receives the
 * softmax [B, H, L, L]; it is scratch otherwise. All buffers compute dtype. */
static bool tf_attention(ts_rt_ctx *c, const tf_attn *p, const void *xq, const void *xk, const void *xv,
                         const tf_mask *mk, void *out, ts_rt_tensor **probs_out) {
  int64_t B = p->B, L = p->L, E = p->E, H = p->H, dh = E / H, BL = B * L;
  bool f64 = p->f64;
  ts_dtype cd = f64 ? TS_DT_FLOAT64 : TS_DT_FLOAT32;
  size_t es = f64 ? 8 : 4;
  ts_rt_tensor *tmp[2] = {NULL};
  int64_t qkvs[2] = {BL, 3 * E}, scs[4] = {B, H, L, L}, ctxs[2] = {BL, E};
  if (!(tmp[0] = ts_rt_tensor_new(c, cd, 2, qkvs, false)) || !(tmp[1] = ts_rt_tensor_new(c, cd, 2, ctxs, false))) {
    tf_release_all(tmp, 2);
    return false;
  }
  ts_rt_tensor *sc = ts_rt_tensor_new(c, cd, 4, scs, false);
  if (!sc) {
    tf_release_all(tmp, 2);
    return false;
  }
  char *qkv = ts_rt_tensor_data(tmp[0]);
  char *ctx = ts_rt_tensor_data(tmp[1]), *scd = ts_rt_tensor_data(sc);
  const char *w = p->wqkv;
  /* The input projection without bias (PyTorch adds it with the scale). */
  if (xq == xk && xk == xv) {
    tf_linear(c, p->pqkv, f64, BL, 3 * E, E, xq, E, w, NULL, qkv, 3 * E);
  } else {
    const void *xs[3] = {xq, xk, xv};
    for (int i = 0; i < 3; i++)
      tf_gemm(f64, true, BL, E, E, xs[i], E, w + (size_t)(i * E * E) * es, E, NULL, qkv + (size_t)(i * E) * es, 3 * E);
  }
  /* q, k and v stay in qkv (row stride 3E): the per-head GEMMs read them
   * in place, with no copy into [B, H, L, dh]. */
  if (f64) tf_bias_scale_f64((double *)(void *)qkv, BL, E, p->bqkv, 1.0 / sqrt((double)dh));
  else tf_bias_scale_f32v((float *)(void *)qkv, BL, E, p->bqkv, 1.0f / sqrtf((float)dh));
  int64_t ld = 3 * E;
  /* float32 heads of a short sequence: the direct loops (scratch for k^T) */
  float *kt = !f64 && L <= TF_HEAD_SMALL ? ts_rt_malloc((size_t)(dh * ((L + 7) & ~(int64_t)7)) * sizeof(float) + 1)
                                         : NULL;
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < H; h++) {
      size_t qoff = (size_t)(b * L * ld + h * dh) * es, koff = qoff + (size_t)E * es;
      char *so = scd + (size_t)((b * H + h) * L * L) * es;
      if (kt)
        tf_head_scores_f32((float *)(void *)so, (const float *)(const void *)(qkv + qoff),
                           (const float *)(const void *)(qkv + koff), ld, L, dh, kt);
      else
        tf_gemm(f64, true, L, L, dh, qkv + qoff, ld, qkv + koff, ld, NULL, so, L);
    }
  if (f64) tf_softmax_f64((double *)(void *)scd, B, H, L, mk);
  else if (!mk->m && !mk->lens) tf_softmax_plain_f32((float *)(void *)scd, B * H * L, L);
  else tf_softmax_f32((float *)(void *)scd, B, H, L, mk);
  /* ctx[b, t, h*dh + j] = (P @ v)[b, h, t, j]: the 0213 transform for free. */
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < H; h++) {
      int64_t bh = b * H + h;
      size_t voff = (size_t)(b * L * ld + 2 * E + h * dh) * es;
      char *pr = scd + (size_t)(bh * L * L) * es, *co = ctx + (size_t)(b * L * E + h * dh) * es;
      if (kt)
        tf_head_ctx_f32((float *)(void *)co, E, (const float *)(const void *)pr,
                        (const float *)(const void *)(qkv + voff), ld, L, dh);
      else
        tf_gemm(f64, false, L, dh, L, pr, L, qkv + voff, ld, NULL, co, E);
    }
  ts_rt_free(kt);
  tf_linear(c, p->po, f64, BL, E, E, ctx, E, p->wo, p->bo, out, E);
  tf_release_all(tmp, 2);
  if (probs_out) *probs_out = sc;
  else ts_rt_tensor_release(sc);
  return true;
}

/* --------------------------------------------------------- argument checks */

/* Checks that t is a `ndim`-d tensor of dtype dt with the given sizes
 * (r1 < 0: 1-d). */
static bool tf_check_param(ts_rt_ctx *c, const ts_rt_tensor *t, const char *name, ts_dtype dt, int64_t r0,
                           int64_t r1) {
  if (t->dtype != dt) {
    const char *want = ts_dtype_name(dt), *got = ts_dtype_name((ts_dtype)t->dtype);
    return ts_rt_fail(c, "expected scalar type %s but found %s", want ? want : "?", got ? got : "?");
  }
  bool ok = r1 < 0 ? t->ndim == 1 && t->sizes[0] == r0 : t->ndim == 2 && t->sizes[0] == r0 && t->sizes[1] == r1;
  if (!ok) {
    if (r1 < 0) return ts_rt_fail(c, "expected `%s` of shape [%lld]", name, (long long)r0);
    return ts_rt_fail(c, "expected `%s` of shape [%lld, %lld]", name, (long long)r0, (long long)r1);
  }
  return true;
}

static bool tf_fits_int(ts_rt_ctx *c, int64_t v) {
  if (v >= 0 && v <= INT_MAX / 4) return true;
  return ts_rt_fail(c, "attention: size %lld too large for BLAS", (long long)v);
}

/* The mask as contiguous bool bytes (new, in *mt) after PyTorch's checks;
 * *mt NULL when there is no mask. Non-bool masks are converted (nonzero is
 * masked), as PyTorch does with a warning. */
static bool tf_prep_mask(ts_rt_ctx *c, ts_rt_tensor *mask, bool has_type, int64_t mask_type, int64_t B, int64_t H,
                         int64_t L, ts_rt_tensor **mt, tf_mask *mk) {
  *mt = NULL;
  if (!mask) return true;
  if (mask->ndim < 1 || mask->sizes[0] != B)
    return ts_rt_fail(c, "Expected attn_mask->sizes()[0] == batch_size to be true, but got false.");
  if (mask->ndim >= 2 && mask->sizes[1] != (mask->ndim == 2 ? L : H))
    return ts_rt_fail(c, "Expected attn_mask->sizes()[1] == seq_len to be true, but got false.");
  if (!has_type) return ts_rt_fail(c, "Mask Type should be defined");
  if (mask_type == 0) return ts_rt_fail(c, "src_mask not currently supported on CPU");
  bool shape_ok = mask_type == 1 ? mask->ndim == 2
                                 : mask->ndim == 4 && mask->sizes[1] == H && mask->sizes[2] == L && mask->sizes[3] == L;
  if ((mask_type != 1 && mask_type != 2) || !shape_ok) return ts_rt_fail(c, "Mask shape should match input shape");
  *mt = mask->dtype == TS_DT_BOOL ? ts_rt_tensor_contiguous(c, mask) : ts_rt_tensor_to_dtype(c, mask, TS_DT_BOOL);
  if (!*mt) return false;
  mk->m = ts_rt_tensor_data(*mt);
  mk->type = (int)mask_type;
  return true;
}

/* The shared checks of both fast-path ops: src [B, L, E] of a float dtype,
 * embed_dim == E, E divisible by num_heads, the attention weights' shapes. */
static bool tf_check_attn(ts_rt_ctx *c, const ts_rt_tensor *x, int64_t embed_dim, int64_t num_heads,
                          const ts_rt_tensor *wqkv, const ts_rt_tensor *bqkv, const ts_rt_tensor *wo,
                          const ts_rt_tensor *bo) {
  if (x->ndim != 3) return ts_rt_fail(c, "expected 3-D `query`, got %d-D tensor", (int)x->ndim);
  if (embed_dim != x->sizes[2])
    return ts_rt_fail(c, "passed-in embed_dim %lld didn't match last dim of query %lld", (long long)embed_dim,
                      (long long)x->sizes[2]);
  if (num_heads <= 0 || embed_dim % num_heads != 0)
    return ts_rt_fail(c, "`embed_dim` must divide evenly by `num_heads`");
  ts_dtype dt = (ts_dtype)x->dtype;
  int64_t E = embed_dim;
  if (!tf_check_param(c, wqkv, "qkv_weight", dt, 3 * E, E) || !tf_check_param(c, bqkv, "qkv_bias", dt, 3 * E, -1) ||
      !tf_check_param(c, wo, "proj_weight", dt, E, E) || !tf_check_param(c, bo, "proj_bias", dt, E, -1))
    return false;
  return tf_fits_int(c, x->sizes[0] * x->sizes[1] * 3) && tf_fits_int(c, 3 * E) && tf_fits_int(c, x->sizes[1]);
}

/* New: t (compute dtype) in dtype dt. */
static ts_rt_tensor *tf_finish(ts_rt_ctx *c, ts_rt_tensor *t, ts_dtype dt) {
  if (!t || t->dtype == dt) return t;
  ts_rt_tensor *r = ts_rt_tensor_to_dtype(c, t, dt);
  ts_rt_tensor_release(t);
  return r;
}

/* Copies a result into an out= argument, resized as resize_output does. */
static bool tf_copy_out(ts_rt_ctx *c, ts_rt_tensor *out, ts_rt_tensor *r) {
  return ts_rt_tensor_resize_out(c, out, r->ndim, r->sizes, NULL) && ts_rt_tensor_copy_(c, out, r);
}

/* ------------------------------------------------------- multi-head attention */

/* aten::_native_multi_head_attention: (out [B, L, E], weights [B, L, L]
 * averaged over heads or [B, H, L, L]; None unless need_weights). */
static bool tf_mha(ts_rt_ctx *c, ts_rt_call *call, ts_rt_tensor **out, ts_rt_tensor **weights) {
  ts_rt_tensor *q = NULL, *k = NULL, *v = NULL, *wqkv = NULL, *bqkv = NULL, *wo = NULL, *bo = NULL, *mask = NULL;
  int64_t E = 0, H = 0, mask_type = 0;
  bool need_weights = false, average = false, has_type = false;
  if (!ts_rt_arg_tensor(c, call, 0, &q) || !ts_rt_arg_tensor(c, call, 1, &k) || !ts_rt_arg_tensor(c, call, 2, &v) ||
      !ts_rt_arg_int(c, call, 3, &E) || !ts_rt_arg_int(c, call, 4, &H) || !ts_rt_arg_tensor(c, call, 5, &wqkv) ||
      !ts_rt_arg_tensor(c, call, 6, &bqkv) || !ts_rt_arg_tensor(c, call, 7, &wo) ||
      !ts_rt_arg_tensor(c, call, 8, &bo) || !ts_rt_arg_opt_tensor(c, call, 9, &mask) ||
      !ts_rt_arg_bool(c, call, 10, &need_weights) || !ts_rt_arg_bool(c, call, 11, &average) ||
      !ts_rt_arg_opt_int(c, call, 12, &mask_type, &has_type))
    return false;
  *out = *weights = NULL;
  if (!tf_check_attn(c, q, E, H, wqkv, bqkv, wo, bo)) return false;
  for (int i = 0; i < 2; i++) {
    const ts_rt_tensor *o = i ? v : k;
    bool same = o->ndim == 3 && o->sizes[0] == q->sizes[0] && o->sizes[1] == q->sizes[1] && o->sizes[2] == q->sizes[2];
    if (!same) return ts_rt_fail(c, "expected `query`/`key`/`value` shapes to match");
    if (o->dtype != q->dtype) return ts_rt_fail(c, "expected scalar type %s but found %s",
                                                ts_dtype_name((ts_dtype)q->dtype), ts_dtype_name((ts_dtype)o->dtype));
  }
  ts_dtype dt = (ts_dtype)q->dtype, cd = tf_compute_dtype(c, dt);
  if (cd == TS_DT_NONE) return false;
  int64_t B = q->sizes[0], L = q->sizes[1];
  const tf_nested *nq = tf_nested_of(q);
  tf_mask mk = {NULL, 0, nq ? nq->len : NULL};
  ts_rt_tensor *mt = NULL;
  if (!tf_prep_mask(c, mask, has_type, mask_type, B, H, L, &mt, &mk)) return false;
  ts_rt_tensor *tmp[8] = {mt, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  ts_rt_tensor *probs = NULL, *res = NULL;
  bool ok = false;
  if (B == 0 || L == 0) {
    /* PyTorch returns no weights for an empty batch or sequence. */
    int64_t s[3] = {B, L, E};
    res = ts_rt_tensor_new(c, dt, 3, s, true);
    if (res) {
      *out = res;
      ok = true;
    }
    goto done;
  }
  ts_rt_tensor *ins[7] = {q, k, v, wqkv, bqkv, wo, bo};
  for (int i = 0; i < 7; i++) {
    /* Self-attention (the same tensor thrice) is one GEMM, as in PyTorch. */
    if ((i == 1 && k == q) || (i == 2 && v == q)) continue;
    if (!(tmp[1 + i] = tf_prep(c, ins[i], cd))) goto done;
  }
  const void *xq = ts_rt_tensor_data(tmp[1]);
  const void *xk = k == q ? xq : ts_rt_tensor_data(tmp[2]);
  const void *xv = v == q ? xq : ts_rt_tensor_data(tmp[3]);
  bool f64 = cd == TS_DT_FLOAT64;
  tf_attn p = {f64, B, L, E, H, ts_rt_tensor_data(tmp[4]), ts_rt_tensor_data(tmp[5]), ts_rt_tensor_data(tmp[6]),
               ts_rt_tensor_data(tmp[7]), tf_pack(call, 5, f64, B * L, 3 * E, E), tf_pack(call, 7, f64, B * L, E, E)};
  int64_t s[3] = {B, L, E};
  res = nq ? tf_nested_new(c, cd, B, L, E, nq->len) : ts_rt_tensor_new(c, cd, 3, s, false);
  if (!res || !tf_attention(c, &p, xq, xk, xv, &mk, ts_rt_tensor_data(res), &probs)) goto done;
  if (nq) tf_zero_padding(p.f64, ts_rt_tensor_data(res), B, L, E, nq->len);
  if (need_weights) {
    if (average) {
      int64_t ws[3] = {B, L, L};
      ts_rt_tensor *avg = ts_rt_tensor_new(c, cd, 3, ws, false);
      if (!avg) goto done;
      if (p.f64) tf_avg_heads_f64(ts_rt_tensor_data(avg), ts_rt_tensor_data(probs), B, H, L);
      else tf_avg_heads_f32(ts_rt_tensor_data(avg), ts_rt_tensor_data(probs), B, H, L);
      ts_rt_tensor_release(probs);
      probs = avg;
    }
    if (!(probs = tf_finish(c, probs, dt))) goto done;
    *weights = probs;
    probs = NULL;
  }
  if (nq && dt != cd) {
    /* Keep the nested marker through the conversion back. */
    ts_rt_tensor *r = tf_nested_new(c, dt, B, L, E, nq->len);
    if (!r || !ts_rt_tensor_copy_(c, r, res)) {
      if (r) ts_rt_tensor_release(r);
      goto done;
    }
    ts_rt_tensor_release(res);
    res = r;
  } else if (!(res = tf_finish(c, res, dt))) {
    goto done;
  }
  *out = res;
  res = NULL;
  ok = true;
done:
  tf_release_all(tmp, 8);
  if (probs) ts_rt_tensor_release(probs);
  if (res && !ok) ts_rt_tensor_release(res);
  if (!ok && *weights) {
    ts_rt_tensor_release(*weights);
    *weights = NULL;
  }
  return ok;
}

static bool tf_k_mha(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *o = NULL, *w = NULL;
  if (!tf_mha(c, call, &o, &w)) return false;
  call->out[0] = ts_iv_tensor(o);
  call->out[1] = w ? ts_iv_tensor(w) : ts_iv_none();
  return true;
}

static bool tf_k_mha_out(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *o0 = NULL, *o1 = NULL, *r = NULL, *w = NULL;
  if (!ts_rt_arg_tensor(c, call, 13, &o0) || !ts_rt_arg_tensor(c, call, 14, &o1)) return false;
  if (!tf_mha(c, call, &r, &w)) return false;
  bool ok = tf_copy_out(c, o0, r) && (!w || tf_copy_out(c, o1, w));
  ts_rt_tensor_release(r);
  if (w) ts_rt_tensor_release(w);
  if (!ok) return false;
  ts_rt_tensor_retain(o0);
  ts_rt_tensor_retain(o1);
  call->out[0] = ts_iv_tensor(o0);
  call->out[1] = ts_iv_tensor(o1);
  return true;
}

/* ------------------------------------------------------------ encoder layer */

/* aten::_transformer_encoder_layer_fwd: self-attention, residual, layer
 * norm, feed-forward (relu or exact gelu), residual, layer norm; with
 * norm_first the norms come before each block instead. */
static bool tf_encoder(ts_rt_ctx *c, ts_rt_call *call, ts_rt_tensor **result) {
  ts_rt_tensor *a[18] = {NULL}; /* argument tensors by schema position */
  int64_t E = 0, H = 0, mask_type = 0;
  bool use_gelu = false, norm_first = false, has_type = false;
  double eps = 0;
  ts_rt_tensor *mask = NULL;
  static const uint8_t tpos[] = {0, 3, 4, 5, 6, 10, 11, 12, 13, 14, 15, 16, 17};
  for (size_t i = 0; i < sizeof tpos; i++)
    if (!ts_rt_arg_tensor(c, call, tpos[i], &a[tpos[i]])) return false;
  if (!ts_rt_arg_int(c, call, 1, &E) || !ts_rt_arg_int(c, call, 2, &H) || !ts_rt_arg_bool(c, call, 7, &use_gelu) ||
      !ts_rt_arg_bool(c, call, 8, &norm_first) || !ts_rt_arg_double(c, call, 9, &eps) ||
      !ts_rt_arg_opt_tensor(c, call, 18, &mask) || !ts_rt_arg_opt_int(c, call, 19, &mask_type, &has_type))
    return false;
  ts_rt_tensor *src = a[0];
  if (!tf_check_attn(c, src, E, H, a[3], a[4], a[5], a[6])) return false;
  ts_dtype dt = (ts_dtype)src->dtype, cd = tf_compute_dtype(c, dt);
  if (cd == TS_DT_NONE) return false;
  if (a[14]->ndim != 2) return ts_rt_fail(c, "expected `ffn_weight_1` to be 2-D");
  int64_t F = a[14]->sizes[0];
  if (!tf_check_param(c, a[10], "norm_weight_1", dt, E, -1) || !tf_check_param(c, a[11], "norm_bias_1", dt, E, -1) ||
      !tf_check_param(c, a[12], "norm_weight_2", dt, E, -1) || !tf_check_param(c, a[13], "norm_bias_2", dt, E, -1) ||
      !tf_check_param(c, a[14], "ffn_weight_1", dt, F, E) || !tf_check_param(c, a[15], "ffn_bias_1", dt, F, -1) ||
      !tf_check_param(c, a[16], "ffn_weight_2", dt, E, F) || !tf_check_param(c, a[17], "ffn_bias_2", dt, E, -1) ||
      !tf_fits_int(c, F))
    return false;
  int64_t B = src->sizes[0], L = src->sizes[1], BL = B * L, BLF;
  if (__builtin_mul_overflow(BL, F, &BLF)) return ts_rt_oom(c);
  const tf_nested *ns = tf_nested_of(src);
  tf_mask mk = {NULL, 0, ns ? ns->len : NULL};
  ts_rt_tensor *mt = NULL;
  if (!tf_prep_mask(c, mask, has_type, mask_type, B, H, L, &mt, &mk)) return false;
  /* p[i]: argument i in the compute dtype; w[]: work buffers. */
  ts_rt_tensor *p[18] = {NULL}, *w[4] = {NULL};
  bool ok = false, f64 = cd == TS_DT_FLOAT64;
  for (int i = 0; i < 18; i++)
    if (a[i] && !(p[i] = tf_prep(c, a[i], cd))) goto done;
  int64_t s3[3] = {B, L, E}, sf[2] = {BL, F}, se[2] = {BL, E};
  /* w[0]: result (nested when src is); w[1]: normed input; w[2]: ffn hidden; w[3]: residual copy. */
  w[0] = ns ? tf_nested_new(c, cd, B, L, E, ns->len) : ts_rt_tensor_new(c, cd, 3, s3, false);
  if (!w[0] || !(w[1] = ts_rt_tensor_new(c, cd, 2, se, false)) || !(w[2] = ts_rt_tensor_new(c, cd, 2, sf, false)) ||
      !(w[3] = ts_rt_tensor_new(c, cd, 2, se, false)))
    goto done;
  if (BL > 0) {
    void *x = ts_rt_tensor_data(p[0]), *res = ts_rt_tensor_data(w[0]), *xn = ts_rt_tensor_data(w[1]);
    void *hid = ts_rt_tensor_data(w[2]), *pre = ts_rt_tensor_data(w[3]);
    size_t es = f64 ? 8 : 4;
#define TF_D(i) ts_rt_tensor_data(p[i])
#define TF_LN(o, in, wi, bi)                                                               \
  (f64 ? tf_layer_norm_f64((o), (in), BL, E, TF_D(wi), TF_D(bi), eps)                      \
       : tf_layer_norm_f32v((o), (in), BL, E, TF_D(wi), TF_D(bi), eps))
    const void *ain = x;
    if (norm_first) {
      TF_LN(xn, x, 10, 11);
      ain = xn;
    }
    tf_attn at = {f64, B, L, E, H, TF_D(3), TF_D(4), TF_D(5), TF_D(6), tf_pack(call, 3, f64, BL, 3 * E, E),
                  tf_pack(call, 5, f64, BL, E, E)};
    if (!tf_attention(c, &at, ain, ain, ain, &mk, res, NULL)) goto done;
    if (f64) tf_add_f64(res, x, BL * E);
    else tf_add_f32v(res, x, BL * E);
    /* pre: the residual of the feed-forward block (the normed sum, or with
     * norm_first the plain sum); fin: the block's input. */
    const void *fin = pre;
    if (norm_first) {
      memcpy(pre, res, (size_t)(BL * E) * es);
      TF_LN(xn, res, 12, 13);
      fin = xn;
    } else {
      TF_LN(pre, res, 10, 11);
    }
    tf_linear(c, tf_pack(call, 14, f64, BL, F, E), f64, BL, F, E, fin, E, TF_D(14), TF_D(15), hid, F);
    /* the exact gelu is aten::gelu's row (ir/ops.def), as the unfused layer computes it */
    if (use_gelu) ts_rt_pointwise_buffer(c, TS_PW_gelu, f64 ? TS_DT_FLOAT64 : TS_DT_FLOAT32, hid, BLF);
    else if (f64) tf_relu_f64(hid, BLF);
    else tf_relu_f32v(hid, BLF);
    tf_linear(c, tf_pack(call, 16, f64, BL, E, F), f64, BL, E, F, hid, F, TF_D(16), TF_D(17), res, E);
    if (f64) tf_add_f64(res, pre, BL * E);
    else tf_add_f32v(res, pre, BL * E);
    if (!norm_first) TF_LN(res, res, 12, 13);
#undef TF_LN
#undef TF_D
    if (ns) tf_zero_padding(f64, res, B, L, E, ns->len);
  }
  if (ns && dt != cd) {
    ts_rt_tensor *r = tf_nested_new(c, dt, B, L, E, ns->len);
    if (!r || !ts_rt_tensor_copy_(c, r, w[0])) {
      if (r) ts_rt_tensor_release(r);
      goto done;
    }
    *result = r;
  } else {
    ts_rt_tensor_retain(w[0]);
    if (!(*result = tf_finish(c, w[0], dt))) goto done;
  }
  ok = true;
done:
  tf_release_all(p, 18);
  tf_release_all(w, 4);
  if (mt) ts_rt_tensor_release(mt);
  return ok;
}

static bool tf_k_encoder(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *r = NULL;
  if (!tf_encoder(c, call, &r)) return false;
  call->out[0] = ts_iv_tensor(r);
  return true;
}

static bool tf_k_encoder_out(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *o = NULL, *r = NULL;
  if (!ts_rt_arg_tensor(c, call, 20, &o) || !tf_encoder(c, call, &r)) return false;
  bool ok = tf_copy_out(c, o, r);
  ts_rt_tensor_release(r);
  if (!ok) return false;
  ts_rt_tensor_retain(o);
  call->out[0] = ts_iv_tensor(o);
  return true;
}

/* ------------------------------------------------------------ nested ops */

/* PyTorch's checks of (t, mask) for the mask-to-nested ops; the lengths
 * (number of true entries per row) into lens when not NULL, and whether
 * every row is trues then falses into *aligned. */
static bool tf_mask_lengths(ts_rt_ctx *c, const ts_rt_tensor *t, const ts_rt_tensor *mask, int64_t *lens,
                            bool *aligned) {
  if (mask->dtype != TS_DT_BOOL) {
    const char *got = ts_dtype_name((ts_dtype)mask->dtype);
    return ts_rt_fail(c, "Expected mask to be of ScalarType Bool, but got %s instead.", got ? got : "?");
  }
  if (mask->ndim != 2) return ts_rt_fail(c, "Padding mask should be 2D");
  if (t->ndim != 3) return ts_rt_fail(c, "Input should be 3D");
  if (mask->sizes[0] != t->sizes[0] || mask->sizes[1] != t->sizes[1])
    return ts_rt_fail(c, "Mask size should match input size");
  *aligned = true;
  const uint8_t *m = ts_rt_tensor_data(mask);
  for (int64_t b = 0; b < mask->sizes[0]; b++) {
    int64_t n = 0;
    bool seen_false = false;
    for (int64_t j = 0; j < mask->sizes[1]; j++) {
      bool on = m[b * mask->strides[0] + j * mask->strides[1]] != 0;
      if (on) {
        n++;
        if (seen_false) *aligned = false;
      } else {
        seen_false = true;
      }
    }
    if (lens) lens[b] = n;
  }
  return true;
}

/* aten::_nested_tensor_from_mask_left_aligned(t, mask) -> bool */
static bool tf_k_left_aligned(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t = NULL, *mask = NULL;
  bool aligned = false;
  if (!ts_rt_arg_tensor(c, call, 0, &t) || !ts_rt_arg_tensor(c, call, 1, &mask) ||
      !tf_mask_lengths(c, t, mask, NULL, &aligned))
    return false;
  call->out[0] = ts_iv_bool(aligned);
  return true;
}

/* aten::_nested_tensor_from_mask(t, mask, mask_check): sequence b is the
 * first sum(mask[b]) rows of t[b] (PyTorch takes the prefix even when the
 * mask has gaps and mask_check is off). */
static bool tf_nested_from_mask(ts_rt_ctx *c, ts_rt_call *call, ts_rt_tensor **out) {
  ts_rt_tensor *t = NULL, *mask = NULL;
  bool check = false, aligned = false;
  if (!ts_rt_arg_tensor(c, call, 0, &t) || !ts_rt_arg_tensor(c, call, 1, &mask) ||
      !ts_rt_arg_bool(c, call, 2, &check))
    return false;
  if (tf_nested_of(t)) return ts_rt_fail(c, "_nested_tensor_from_mask: the input is already a nested tensor");
  int64_t B = t->ndim >= 1 ? t->sizes[0] : 0;
  int64_t *lens = ts_rt_malloc((size_t)(B ? B : 1) * sizeof(int64_t));
  if (!lens) return ts_rt_oom(c);
  bool ok = false;
  if (tf_mask_lengths(c, t, mask, lens, &aligned)) {
    if (check && !aligned) {
      ts_rt_fail(c, "Mask must be left-aligned without gaps");
    } else {
      ts_rt_tensor *r = tf_nested_new(c, (ts_dtype)t->dtype, B, t->sizes[1], t->sizes[2], lens);
      if (r && ts_rt_tensor_copy_(c, r, t)) {
        size_t es = ts_dtype_size((ts_dtype)t->dtype);
        int64_t L = t->sizes[1], E = t->sizes[2];
        for (int64_t b = 0; b < B; b++)
          if (lens[b] < L && E > 0)
            memset((char *)ts_rt_tensor_data(r) + (size_t)((b * L + lens[b]) * E) * es, 0,
                   (size_t)((L - lens[b]) * E) * es);
        *out = r;
        ok = true;
      } else if (r) {
        ts_rt_tensor_release(r);
      }
    }
  }
  ts_rt_free(lens);
  return ok;
}

static bool tf_k_nested_from_mask(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *r = NULL;
  if (!tf_nested_from_mask(c, call, &r)) return false;
  call->out[0] = ts_iv_tensor(r);
  return true;
}

/* aten::to_padded_tensor(self, padding, output_size): the padded dense
 * tensor, [B, longest sequence, E] or output_size (no truncation). */
static bool tf_k_to_padded(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t = NULL;
  double padding = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &t) || !ts_rt_arg_double(c, call, 1, &padding)) return false;
  const tf_nested *n = tf_nested_of(t);
  if (!n)
    return ts_rt_fail(c, "Could not run 'aten::to_padded_tensor' with arguments from the 'CPU' backend: "
                         "it takes a nested tensor");
  int64_t B = t->sizes[0], L = t->sizes[1], E = t->sizes[2], maxlen = 0;
  for (int64_t b = 0; b < B; b++)
    if (n->len[b] > maxlen) maxlen = n->len[b];
  int64_t sizes[3] = {B, maxlen, E};
  if (call->in[2].tag != TS_IV_NONE) {
    int64_t os[TS_RT_MAX_DIMS];
    uint32_t no = 0;
    if (!ts_rt_arg_ints(c, call, 2, os, TS_RT_MAX_DIMS, &no, 0)) return false;
    if (no != 3)
      return ts_rt_fail(c, "Length of output_size does not match NestedTensor dims. Broadcasting is not supported.");
    for (int i = 0; i < 3; i++) {
      if (os[i] < sizes[i])
        return ts_rt_fail(c, "Value in output_size is less than NestedTensor padded size. "
                             "Truncation is not supported.");
      sizes[i] = os[i];
    }
  }
  ts_rt_tensor *r = ts_rt_tensor_new(c, (ts_dtype)t->dtype, 3, sizes, false);
  if (!r) return false;
  ts_rt_tensor *pad = ts_rt_tensor_scalar(c, TS_DT_FLOAT64, padding, 0);
  bool ok = pad && ts_rt_tensor_copy_(c, r, pad);
  if (pad) ts_rt_tensor_release(pad);
  for (int64_t b = 0; ok && b < B; b++) {
    if (n->len[b] == 0 || E == 0) continue;
    /* r[b, :len, :E] = t[b, :len, :] */
    int64_t vs[2] = {n->len[b], E}, rst[2] = {r->strides[1], r->strides[2]}, tst[2] = {E, 1};
    ts_rt_tensor *dst = ts_rt_tensor_view(c, r, b * r->strides[0], 2, vs, rst);
    ts_rt_tensor *src = ts_rt_tensor_view(c, t, b * L * E, 2, vs, tst);
    ok = dst && src && ts_rt_tensor_copy_(c, dst, src);
    if (dst) ts_rt_tensor_release(dst);
    if (src) ts_rt_tensor_release(src);
  }
  if (!ok) {
    ts_rt_tensor_release(r);
    return false;
  }
  call->out[0] = ts_iv_tensor(r);
  return true;
}

const ts_rt_kernel_def ts_rt_kernels_transformer[] = {
    {"aten::_native_multi_head_attention", tf_k_mha},
    {"aten::_native_multi_head_attention.out", tf_k_mha_out},
    {"aten::_transformer_encoder_layer_fwd", tf_k_encoder},
    {"aten::_transformer_encoder_layer_fwd.out", tf_k_encoder_out},
    {"aten::_nested_tensor_from_mask", tf_k_nested_from_mask},
    {"aten::_nested_tensor_from_mask_left_aligned", tf_k_left_aligned},
    {"aten::to_padded_tensor", tf_k_to_padded},
    {NULL, NULL},
};
