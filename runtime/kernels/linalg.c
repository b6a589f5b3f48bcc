/* runtime/kernels/linalg.c: linear algebra through LAPACK (lapack.h), as
 * PyTorch 1.13 computes it on the CPU: the same routine per op (LU by getrf
 * and getrs for det, slogdet, inv and solve; Cholesky by potrf, potrs,
 * potri; triangular solves by trsm; eigh by syevd or heevd; eig and eigvals by
 * geev; SVD by gesdd; QR by geqrf, orgqr, ormqr; lstsq by the driver asked for, gelsy by default;
 * LDL by sytrf, sytrs; pinv, matrix_rank and cond over the SVD or eigh as
 * ATen composes them; matrix_exp, not a LAPACK routine, by scaling and
 * squaring in double) on the same library (Debian's PyTorch calls
 * OpenBLAS's LAPACK too), so that pivots, signs and orderings come out as
 * PyTorch's.
 *
 * float32 runs the s routines, float64 the d ones (eig and eigvals also
 * take complex64/complex128, by the c and z ones, and return complex
 * results; eigh and eigvalsh take them by heevd, their eigenvalues real);
 * other dtypes fail with PyTorch's message. A batch of matrices (*, m, n) is gathered one matrix
 * at a time into a column-major scratch buffer (ts_rt_malloc), factored or
 * solved there and scattered into contiguous outputs. Where ATen factors
 * A^T instead of A (det, slogdet and solve of a contiguous A) so does this
 * file, as the pivots and the LU output follow. Workspaces are sized by
 * LAPACK's own query; sizes are bounded to its 32-bit integers.
 *
 * Known differences: pinv's and matrix_rank's tolerance tensors must
 * broadcast to the input's batch dims (PyTorch also lets them widen the
 * result); lstsq with broadcast batches gives rank and singular values the
 * broadcast batch dims, where PyTorch 1.13 sizes them by the input's;
 * eig's and eigh's eigenvectors are row-major contiguous, where PyTorch's
 * are column-major (the same values, other strides). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cblas.h>

#include "args.h"
#include "lapack.h"
#include "tensor_ops.h"

/* ---------------------------------------------------------------- helpers */

/* The largest matrix dimension and element count handed to LAPACK. */
#define LA_MAX_SIDE ((int64_t)1 << 24)
#define LA_MAX_ELEMS ((int64_t)1 << 30)

static inline double la_get(const void *p, bool d, int64_t i) {
  return d ? ((const double *)p)[i] : (double)((const float *)p)[i];
}
static inline void la_set(void *p, bool d, int64_t i, double v) {
  if (d)
    ((double *)p)[i] = v;
  else
    ((float *)p)[i] = (float)v;
}

/* Batch dims of one or more operands broadcast together. */
typedef struct la_batch {
  int32_t nd;
  int64_t s[TS_RT_MAX_DIMS];
  int64_t n; /* product of s */
} la_batch;

/* t's leading ndim - mdims dims. */
static void la_batch_of(la_batch *b, const ts_rt_tensor *t, int32_t mdims) {
  b->nd = t->ndim - mdims;
  b->n = 1;
  for (int32_t k = 0; k < b->nd; k++) {
    b->s[k] = t->sizes[k];
    b->n *= t->sizes[k];
  }
}

/* b broadcast with t's batch dims (PyTorch's message when they do not). */
static bool la_batch_bcast(ts_rt_ctx *c, la_batch *b, const ts_rt_tensor *t, int32_t mdims) {
  int32_t nd = 0;
  int64_t out[TS_RT_MAX_DIMS];
  if (!ts_rt_broadcast_shapes(c, b->nd, b->s, t->ndim - mdims, t->sizes, &nd, out)) return false;
  b->nd = nd;
  b->n = 1;
  for (int32_t k = 0; k < nd; k++) {
    b->s[k] = out[k];
    b->n *= out[k];
  }
  return true;
}

/* Element offset of batch element i (row-major over b) in t, whose batch
 * dims broadcast to b's. */
static int64_t la_off(const ts_rt_tensor *t, int32_t mdims, const la_batch *b, int64_t i) {
  int32_t tnb = t->ndim - mdims;
  int64_t off = t->offset;
  for (int32_t k = b->nd - 1; k >= 0; k--) {
    int64_t x = i % b->s[k];
    i /= b->s[k];
    int32_t tk = k - (b->nd - tnb);
    if (tk >= 0 && t->sizes[tk] != 1) off += x * t->strides[tk];
  }
  return off;
}

/* The matrix of t (its last two dims) at element offset off into buf,
 * column-major with leading dimension ld; transposed (buf holds t^T) when
 * tr. t's dtype is buf's. */
static void la_load(const ts_rt_tensor *t, int64_t off, void *buf, int64_t ld, bool tr) {
  int64_t m = t->sizes[t->ndim - 2], n = t->sizes[t->ndim - 1];
  int64_t rs = t->strides[t->ndim - 2], cs = t->strides[t->ndim - 1];
  size_t esz = ts_dtype_size((ts_dtype)t->dtype);
  const char *src = t->storage->data;
  char *dst = buf;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++)
      memcpy(dst + (size_t)(tr ? j + i * ld : i + j * ld) * esz, src + (size_t)(off + i * rs + j * cs) * esz, esz);
}

/* Batch element i of the contiguous tensor out (its last two dims r x c)
 * from buf, column-major with leading dimension ld (transposed when tr:
 * out[i][j] = buf[j + i * ld]). */
static void la_store(ts_rt_tensor *out, int64_t i, const void *buf, int64_t ld, bool tr) {
  int64_t r = out->sizes[out->ndim - 2], cc = out->sizes[out->ndim - 1];
  size_t esz = ts_dtype_size((ts_dtype)out->dtype);
  char *dst = (char *)ts_rt_tensor_data(out) + (size_t)(i * r * cc) * esz;
  const char *src = buf;
  for (int64_t a = 0; a < r; a++)
    for (int64_t b = 0; b < cc; b++)
      memcpy(dst + (size_t)(a * cc + b) * esz, src + (size_t)(tr ? b + a * ld : a + b * ld) * esz, esz);
}

/* New contiguous tensor: batch dims b, then up to two more. */
static ts_rt_tensor *la_new(ts_rt_ctx *c, ts_dtype dt, const la_batch *b, int32_t nm, int64_t r, int64_t cc,
                            bool zero) {
  int64_t sizes[TS_RT_MAX_DIMS];
  if (b->nd + nm > TS_RT_MAX_DIMS) {
    ts_rt_fail(c, "linalg: too many dimensions");
    return NULL;
  }
  memcpy(sizes, b->s, (size_t)b->nd * sizeof *sizes);
  if (nm > 0) sizes[b->nd] = r;
  if (nm > 1) sizes[b->nd + 1] = cc;
  return ts_rt_tensor_new(c, dt, b->nd + nm, sizes, zero);
}

/* Scratch of n elements of esz bytes (at least one), bounded. */
static void *la_scratch(ts_rt_ctx *c, int64_t n, size_t esz) {
  if (n < 0 || n > LA_MAX_ELEMS * 4) {
    ts_rt_fail(c, "linalg: workspace of %lld elements is too large", (long long)n);
    return NULL;
  }
  void *p = ts_rt_malloc((size_t)(n > 0 ? n : 1) * esz);
  if (!p) ts_rt_fail(c, "out of memory");
  return p;
}

/* A dimension LAPACK can take. */
static bool la_dims_ok(ts_rt_ctx *c, int64_t m, int64_t n) {
  if (m > LA_MAX_SIDE || n > LA_MAX_SIDE || m * n > LA_MAX_ELEMS)
    return ts_rt_fail(c, "linalg: %lld x %lld matrices are beyond the sizes LAPACK takes here", (long long)m,
                      (long long)n);
  return true;
}

static void la_release(ts_rt_tensor **t, int n) {
  for (int i = 0; i < n; i++)
    if (t[i]) ts_rt_tensor_release(t[i]);
}

static bool la_put(ts_rt_call *call, ts_rt_tensor **t, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) call->out[i] = ts_iv_tensor(t[i]);
  return true;
}

/* checkIsMatrix: "<fn>: The input tensor <arg> must have at least 2 dimensions." */
static bool la_check_matrix(ts_rt_ctx *c, const ts_rt_tensor *t, const char *fn, const char *arg) {
  if (t->ndim >= 2) return true;
  return ts_rt_fail(c, "%s: The input tensor %s must have at least 2 dimensions.", fn, arg);
}

/* squareCheckInputs */
static bool la_check_square(ts_rt_ctx *c, const ts_rt_tensor *t, const char *fn, const char *arg) {
  if (!la_check_matrix(c, t, fn, arg)) return false;
  int64_t m = t->sizes[t->ndim - 2], n = t->sizes[t->ndim - 1];
  if (m != n)
    return ts_rt_fail(c, "%s: %s must be batches of square matrices, but they are %lld by %lld matrices", fn, arg,
                      (long long)m, (long long)n);
  return la_dims_ok(c, m, n);
}

/* checkFloatingOrComplex (its message names fn); float16 and bfloat16 pass
 * it in PyTorch and fail in the kernel's dispatch, named kern. */
static bool la_check_float(ts_rt_ctx *c, const ts_rt_tensor *t, const char *fn, const char *kern) {
  ts_dtype dt = (ts_dtype)t->dtype;
  if (dt == TS_DT_FLOAT32 || dt == TS_DT_FLOAT64) return true;
  if (dt == TS_DT_FLOAT16 || dt == TS_DT_BFLOAT16)
    return ts_rt_fail(c, "\"%s\" not implemented for '%s'", kern, ts_rt_dtype_name(dt));
  return ts_rt_fail(c, "%s: Expected a floating point or complex tensor as input. Got %s", fn, ts_rt_dtype_name(dt));
}

/* A dispatch's refusal: "<kern>" not implemented for '<dtype>'. */
static bool la_check_dispatch(ts_rt_ctx *c, const ts_rt_tensor *t, const char *kern) {
  ts_dtype dt = (ts_dtype)t->dtype;
  if (dt == TS_DT_FLOAT32 || dt == TS_DT_FLOAT64) return true;
  return ts_rt_fail(c, "\"%s\" not implemented for '%s'", kern, ts_rt_dtype_name(dt));
}

typedef enum { LA_ERR_INV, LA_ERR_SOLVE, LA_ERR_CHOL, LA_ERR_SVD, LA_ERR_EIG, LA_ERR_LU } la_err_kind;

/* _linalg_check_errors: the first positive info as PyTorch words it. */
static bool la_check_info(ts_rt_ctx *c, const int32_t *info, int64_t n, const char *api, bool is_matrix,
                          la_err_kind kind) {
  for (int64_t i = 0; i < n; i++) {
    int32_t v = info[i];
    if (v <= 0) continue;
    char batch[64] = "";
    if (!is_matrix) snprintf(batch, sizeof batch, ": (Batch element %lld)", (long long)i);
    switch (kind) {
    case LA_ERR_INV:
      return ts_rt_fail(c,
                        "%s%s: The diagonal element %d is zero, the inversion could not be completed because the "
                        "input matrix is singular.",
                        api, batch, v);
    case LA_ERR_SOLVE: return ts_rt_fail(c, "%s%s: The solver failed because the input matrix is singular.", api, batch);
    case LA_ERR_CHOL:
      return ts_rt_fail(c,
                        "%s%s: The factorization could not be completed because the input is not positive-definite "
                        "(the leading minor of order %d is not positive-definite).",
                        api, batch, v);
    case LA_ERR_SVD:
      return ts_rt_fail(c,
                        "%s%s: The algorithm failed to converge because the input matrix is ill-conditioned or has "
                        "too many repeated singular values (error code: %d).",
                        api, batch, v);
    case LA_ERR_EIG:
      return ts_rt_fail(c,
                        "%s%s: The algorithm failed to converge because the input matrix is ill-conditioned or has "
                        "too many repeated eigenvalues (error code: %d).",
                        api, batch, v);
    case LA_ERR_LU:
      return ts_rt_fail(c,
                        "%s%s: U[%d,%d] is zero and using it on lu_solve would result in a division by zero. If you "
                        "still want to perform the factorization, consider calling linalg.lu(A, pivot) or "
                        "linalg.lu_factor_ex(A, pivot)",
                        api, batch, v, v);
    }
  }
  return true;
}

static int64_t la_max1(int64_t x) { return x > 1 ? x : 1; }

/* "[3, 4]" as PyTorch prints a size */
static void la_shape_str(char *buf, size_t cap, const ts_rt_tensor *t) {
  size_t at = 0;
  at += (size_t)snprintf(buf, cap, "[");
  for (int32_t i = 0; i < t->ndim && at < cap; i++)
    at += (size_t)snprintf(buf + at, cap - at, "%s%lld", i ? ", " : "", (long long)t->sizes[i]);
  if (at < cap) snprintf(buf + at, cap - at, "]");
}

/* ---------------------------------------------------------------- LU */

/* getrf of each matrix of A (of A^T when tr): LU (*, m, n) as the factored
 * matrix's, pivots int32 (*, min(m, n)), 1-based as LAPACK's, info int32 (*). */
static bool la_lu(ts_rt_ctx *c, const ts_rt_tensor *A, bool tr, ts_rt_tensor **out) {
  bool d = A->dtype == TS_DT_FLOAT64;
  int64_t m = A->sizes[A->ndim - (tr ? 1 : 2)], n = A->sizes[A->ndim - (tr ? 2 : 1)], k = m < n ? m : n;
  if (!la_dims_ok(c, m, n)) return false;
  la_batch b;
  la_batch_of(&b, A, 2);
  out[0] = la_new(c, (ts_dtype)A->dtype, &b, 2, m, n, false);
  out[1] = out[0] ? la_new(c, TS_DT_INT32, &b, 1, k, 0, false) : NULL;
  out[2] = out[1] ? la_new(c, TS_DT_INT32, &b, 0, 0, 0, true) : NULL;
  int64_t ld = la_max1(m);
  void *buf = out[2] ? la_scratch(c, ld * n, d ? 8 : 4) : NULL;
  if (!buf) {
    la_release(out, 3);
    return false;
  }
  int32_t *piv = ts_rt_tensor_data(out[1]), *info = ts_rt_tensor_data(out[2]);
  for (int64_t i = 0; i < b.n; i++) {
    la_load(A, la_off(A, 2, &b, i), buf, ld, tr);
    ts_la_int im = (ts_la_int)m, in = (ts_la_int)n, ild = (ts_la_int)ld, inf = 0;
    if (m > 0 && n > 0) {
      if (d)
        dgetrf_(&im, &in, buf, &ild, piv + i * k, &inf);
      else
        sgetrf_(&im, &in, buf, &ild, piv + i * k, &inf);
    }
    info[i] = inf;
    la_store(out[0], i, buf, ld, false);
  }
  ts_rt_free(buf);
  return true;
}

/* linalg_lu_factor_ex's checks; fn names the op in the dimension message. */
static bool la_lu_checks(ts_rt_ctx *c, const ts_rt_tensor *A, bool pivot, const char *fn) {
  if (A->ndim < 2) {
    char shape[256];
    la_shape_str(shape, sizeof shape, A);
    return ts_rt_fail(c, "%s: Expected tensor with 2 or more dimensions. Got size: %s instead", fn, shape);
  }
  if (!la_check_dispatch(c, A, "lu_cpu")) return false;
  if (!pivot) return ts_rt_fail(c, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
  return true;
}

/* linalg_lu_factor_ex(A, *, pivot, check_errors) -> (LU, pivots, info) */
static bool la_k_lu_factor_ex(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[3];
  bool pivot, check;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_bool(c, call, 1, &pivot) || !ts_rt_arg_bool(c, call, 2, &check))
    return false;
  if (!la_lu_checks(c, A, pivot, "torch.lu_factor") || !la_lu(c, A, false, o)) return false;
  if (check && !la_check_info(c, ts_rt_tensor_data(o[2]), ts_rt_tensor_numel(o[2]), "torch.linalg.lu_factor_ex",
                              A->ndim == 2, LA_ERR_LU)) {
    la_release(o, 3);
    return false;
  }
  return la_put(call, o, 3);
}

/* linalg_lu_factor(A, *, pivot) -> (LU, pivots) */
static bool la_k_lu_factor(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[3];
  bool pivot;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_bool(c, call, 1, &pivot)) return false;
  if (!la_lu_checks(c, A, pivot, "torch.lu_factor") || !la_lu(c, A, false, o)) return false;
  bool ok = la_check_info(c, ts_rt_tensor_data(o[2]), ts_rt_tensor_numel(o[2]), "torch.linalg.lu_factor",
                          A->ndim == 2, LA_ERR_LU);
  ts_rt_tensor_release(o[2]);
  if (!ok) {
    la_release(o, 2);
    return false;
  }
  return la_put(call, o, 2);
}

/* _lu_with_info(self, pivot, check_errors): torch.lu's op, lu_factor_ex
 * without its checks (PyTorch ignores check_errors here). */
static bool la_k_lu_with_info(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[3];
  bool pivot, check;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_bool(c, call, 1, &pivot) || !ts_rt_arg_bool(c, call, 2, &check))
    return false;
  if (!la_lu_checks(c, A, pivot, "torch.lu_factor") || !la_lu(c, A, false, o)) return false;
  return la_put(call, o, 3);
}

/* P, L, U of LU and pivots (lu_unpack), each NULL when not asked for:
 * P[perm[j]][j] = 1 after the pivots' row swaps applied to perm = 0..m-1,
 * L unit lower (m x k), U upper (k x n). */
static bool la_unpack(ts_rt_ctx *c, const ts_rt_tensor *LU, const ts_rt_tensor *piv, bool data, bool pivots,
                      ts_rt_tensor **o) {
  int64_t m = LU->sizes[LU->ndim - 2], n = LU->sizes[LU->ndim - 1], k = m < n ? m : n;
  ts_dtype dt = (ts_dtype)LU->dtype;
  la_batch b;
  la_batch_of(&b, LU, 2);
  int64_t zero = 0;
  o[0] = o[1] = o[2] = NULL;
  if (pivots) {
    o[0] = la_new(c, dt, &b, 2, m, m, true);
  } else {
    o[0] = ts_rt_tensor_new(c, dt, 1, &zero, false);
  }
  if (!o[0]) return false;
  if (data) {
    o[1] = la_new(c, dt, &b, 2, m, k, true);
    o[2] = o[1] ? la_new(c, dt, &b, 2, k, n, true) : NULL;
  } else {
    o[1] = ts_rt_tensor_new(c, dt, 1, &zero, false);
    o[2] = o[1] ? ts_rt_tensor_new(c, dt, 1, &zero, false) : NULL;
  }
  if (!o[2]) {
    la_release(o, 3);
    return false;
  }
  size_t esz = ts_dtype_size(dt);
  const char *src = LU->storage->data;
  int64_t rs = LU->strides[LU->ndim - 2], cs = LU->strides[LU->ndim - 1];
  if (data) {
    char *L = ts_rt_tensor_data(o[1]), *U = ts_rt_tensor_data(o[2]);
    for (int64_t bi = 0; bi < b.n; bi++) {
      int64_t off = la_off(LU, 2, &b, bi);
      char *Lb = L + (size_t)(bi * m * k) * esz, *Ub = U + (size_t)(bi * k * n) * esz;
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
          const char *s = src + (size_t)(off + i * rs + j * cs) * esz;
          if (j < i && j < k) memcpy(Lb + (size_t)(i * k + j) * esz, s, esz);
          if (i <= j && i < k) memcpy(Ub + (size_t)(i * n + j) * esz, s, esz);
        }
      for (int64_t i = 0; i < k; i++) ts_rt_store_f64(Lb + (size_t)(i * k + i) * esz, dt, 1.0);
    }
  }
  if (pivots) {
    int64_t *perm = la_scratch(c, m, sizeof(int64_t));
    if (!perm) {
      la_release(o, 3);
      return false;
    }
    char *P = ts_rt_tensor_data(o[0]);
    int64_t pk = piv->sizes[piv->ndim - 1], ps = piv->strides[piv->ndim - 1];
    const int32_t *pv = (const int32_t *)piv->storage->data;
    for (int64_t bi = 0; bi < b.n; bi++) {
      int64_t poff = la_off(piv, 1, &b, bi);
      for (int64_t i = 0; i < m; i++) perm[i] = i;
      for (int64_t i = 0; i < pk && i < m; i++) {
        int64_t p = pv[poff + i * ps];
        if (p < 1 || p > m) {
          ts_rt_free(perm);
          la_release(o, 3);
          return ts_rt_fail(c, "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive.Did you "
                               "properly pass the result of lu_factor?");
        }
        int64_t t = perm[i];
        perm[i] = perm[p - 1];
        perm[p - 1] = t;
      }
      char *Pb = P + (size_t)(bi * m * m) * esz;
      for (int64_t j = 0; j < m; j++) ts_rt_store_f64(Pb + (size_t)(perm[j] * m + j) * esz, dt, 1.0);
    }
    ts_rt_free(perm);
  }
  return true;
}

/* lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots) -> (P, L, U) */
static bool la_k_lu_unpack(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *LU, *piv, *o[3];
  bool data, pivots;
  if (!ts_rt_arg_tensor(c, call, 0, &LU) || !ts_rt_arg_tensor(c, call, 1, &piv) ||
      !ts_rt_arg_bool(c, call, 2, &data) || !ts_rt_arg_bool(c, call, 3, &pivots))
    return false;
  if (LU->ndim < 2) {
    char shape[256];
    la_shape_str(shape, sizeof shape, LU);
    return ts_rt_fail(c, "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: %s instead", shape);
  }
  int64_t m = LU->sizes[LU->ndim - 2], n = LU->sizes[LU->ndim - 1], k = m < n ? m : n;
  if (pivots) {
    if (piv->dtype != TS_DT_INT32)
      return ts_rt_fail(c, "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                           "Note: this function is intended to be used with the output produced by torch.linalg."
                           "lu_factor");
    bool shape_ok = piv->ndim == LU->ndim - 1 && piv->sizes[piv->ndim - 1] == k;
    for (int32_t i = 0; shape_ok && i < LU->ndim - 2; i++) shape_ok = piv->sizes[i] == LU->sizes[i];
    if (!shape_ok) return ts_rt_fail(c, "torch.lu_unpack: LU_pivots should have shape LU_data.shape[:-2] + (min(m, n),)");
  }
  if (!la_dims_ok(c, m, n) || !la_unpack(c, LU, piv, data, pivots, o)) return false;
  return la_put(call, o, 3);
}

/* linalg_lu(A, *, pivot) -> (P, L, U) */
static bool la_k_linalg_lu(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *f[3], *o[3];
  bool pivot;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_bool(c, call, 1, &pivot)) return false;
  if (!la_lu_checks(c, A, pivot, "linalg.lu") || !la_lu(c, A, false, f)) return false;
  bool ok = la_unpack(c, f[0], f[1], true, true, o);
  la_release(f, 3);
  return ok && la_put(call, o, 3);
}

/* X = op(M)^-1 B (left) or B op(M)^-1 (right), M given by its LU and
 * pivots, op transposing when adjoint; B (*, n, k) or (*, k, n); batches
 * broadcast. Checks are the caller's. */
static ts_rt_tensor *la_lu_solve(ts_rt_ctx *c, const ts_rt_tensor *LU, const ts_rt_tensor *piv,
                                 const ts_rt_tensor *B, bool left, bool adjoint) {
  bool d = LU->dtype == TS_DT_FLOAT64;
  int64_t n = LU->sizes[LU->ndim - 1];
  int64_t br = B->sizes[B->ndim - 2], bc = B->sizes[B->ndim - 1], k = left ? bc : br;
  la_batch b;
  la_batch_of(&b, B, 2);
  if (!la_batch_bcast(c, &b, LU, 2) || !la_dims_ok(c, n, k)) return NULL;
  ts_rt_tensor *X = la_new(c, (ts_dtype)B->dtype, &b, 2, br, bc, false);
  if (!X) return NULL;
  int64_t ld = la_max1(n);
  void *lu = la_scratch(c, ld * n, d ? 8 : 4);
  void *rhs = lu ? la_scratch(c, ld * k, d ? 8 : 4) : NULL;
  ts_la_int *ip = rhs ? la_scratch(c, n, sizeof(ts_la_int)) : NULL;
  if (!ip) {
    ts_rt_free(lu);
    ts_rt_free(rhs);
    ts_rt_tensor_release(X);
    return NULL;
  }
  const int32_t *pv = (const int32_t *)piv->storage->data;
  int64_t ps = piv->strides[piv->ndim - 1];
  char trans = (left ? adjoint : !adjoint) ? 'T' : 'N';
  for (int64_t i = 0; i < b.n; i++) {
    la_load(LU, la_off(LU, 2, &b, i), lu, ld, false);
    int64_t po = la_off(piv, 1, &b, i);
    for (int64_t j = 0; j < n; j++) ip[j] = pv[po + j * ps];
    la_load(B, la_off(B, 2, &b, i), rhs, ld, !left);
    ts_la_int in = (ts_la_int)n, ik = (ts_la_int)k, ild = (ts_la_int)ld, info = 0;
    if (n > 0 && k > 0) {
      if (d)
        dgetrs_(&trans, &in, &ik, lu, &ild, ip, rhs, &ild, &info, 1);
      else
        sgetrs_(&trans, &in, &ik, lu, &ild, ip, rhs, &ild, &info, 1);
    }
    la_store(X, i, rhs, ld, !left);
  }
  ts_rt_free(lu);
  ts_rt_free(rhs);
  ts_rt_free(ip);
  return X;
}

/* linalg_lu_solve's checks. */
static bool la_lu_solve_checks(ts_rt_ctx *c, const ts_rt_tensor *LU, const ts_rt_tensor *piv, const ts_rt_tensor *B,
                               bool left) {
  if (!la_check_square(c, LU, "torch.linalg.lu_solve", "A") || !la_check_matrix(c, B, "linalg.lu_solve", "B"))
    return false;
  int64_t n = LU->sizes[LU->ndim - 1];
  if (left ? B->sizes[B->ndim - 2] != n : B->sizes[B->ndim - 1] != n)
    return ts_rt_fail(c, "linalg.lu_solve: Incompatible shapes of A and B for the equation %s (%lldx%lld and %lldx%lld)",
                      left ? "AX = B" : "XA = B", (long long)n, (long long)n, (long long)B->sizes[B->ndim - 2],
                      (long long)B->sizes[B->ndim - 1]);
  if (LU->dtype != B->dtype)
    return ts_rt_fail(c,
                      "linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type %s and B of "
                      "type %s instead",
                      ts_rt_dtype_name((ts_dtype)LU->dtype), ts_rt_dtype_name((ts_dtype)B->dtype));
  if (piv->dtype != TS_DT_INT32)
    return ts_rt_fail(c, "linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32");
  if (piv->ndim < 1 || piv->sizes[piv->ndim - 1] != n)
    return ts_rt_fail(c, "linalg.lu_solve: Number of pivots per batch should be same as the dimension of the matrix");
  bool batch_ok = piv->ndim == LU->ndim - 1;
  for (int32_t i = 0; batch_ok && i < LU->ndim - 2; i++) batch_ok = piv->sizes[i] == LU->sizes[i];
  if (!batch_ok)
    return ts_rt_fail(c, "linalg.lu_solve: Expected LU.shape[:-2] == pivots.shape[:-1]");
  if (!la_check_float(c, LU, "linalg.lu_solve", "lu_solve_cpu")) return false;
  /* out-of-range pivots would let getrs read outside the matrix */
  const int32_t *pv = (const int32_t *)piv->storage->data;
  int64_t np = ts_rt_tensor_numel(piv);
  if (np > 0) {
    la_batch pb;
    la_batch_of(&pb, piv, 1);
    for (int64_t i = 0; i < pb.n; i++) {
      int64_t po = la_off(piv, 1, &pb, i);
      for (int64_t j = 0; j < n; j++) {
        int32_t p = pv[po + j * piv->strides[piv->ndim - 1]];
        if (p < 1 || p > n) return ts_rt_fail(c, "linalg.lu_solve: pivots must be between 1 and %lld", (long long)n);
      }
    }
  }
  return true;
}

/* linalg_lu_solve(LU, pivots, B, *, left, adjoint) */
static bool la_k_linalg_lu_solve(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *LU, *piv, *B;
  bool left, adjoint;
  if (!ts_rt_arg_tensor(c, call, 0, &LU) || !ts_rt_arg_tensor(c, call, 1, &piv) || !ts_rt_arg_tensor(c, call, 2, &B) ||
      !ts_rt_arg_bool(c, call, 3, &left) || !ts_rt_arg_bool(c, call, 4, &adjoint))
    return false;
  if (!la_lu_solve_checks(c, LU, piv, B, left)) return false;
  ts_rt_tensor *X = la_lu_solve(c, LU, piv, B, left, adjoint);
  if (!X) return false;
  return la_put(call, &X, 1);
}

/* lu_solve(self, LU_data, LU_pivots): linalg_lu_solve(LU, pivots, self) */
static bool la_k_lu_solve(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *LU, *piv, *B;
  if (!ts_rt_arg_tensor(c, call, 0, &B) || !ts_rt_arg_tensor(c, call, 1, &LU) || !ts_rt_arg_tensor(c, call, 2, &piv))
    return false;
  if (!la_lu_solve_checks(c, LU, piv, B, true)) return false;
  ts_rt_tensor *X = la_lu_solve(c, LU, piv, B, true, false);
  if (!X) return false;
  return la_put(call, &X, 1);
}

/* ------------------------------------------------------- det, slogdet */

/* sign of the permutation the pivots of batch element i make */
static double la_piv_sign(const ts_rt_tensor *piv, int64_t i) {
  int64_t k = piv->sizes[piv->ndim - 1];
  const int32_t *p = (const int32_t *)ts_rt_tensor_data(piv) + i * k;
  double s = 1;
  for (int64_t j = 0; j < k; j++)
    if (p[j] != j + 1) s = -s;
  return s;
}

/* LU of a square A for det/slogdet: of A^T when A is contiguous, as ATen. */
static bool la_det_lu(ts_rt_ctx *c, const ts_rt_tensor *A, const char *fn, ts_rt_tensor **f) {
  if (!la_check_square(c, A, fn, "A") || !la_check_float(c, A, fn, "lu_cpu")) return false;
  return la_lu(c, A, ts_rt_tensor_is_contiguous(A), f);
}

/* det = sign(P) * prod(diag(LU)), the product in the dtype */
static ts_rt_tensor *la_det_from(ts_rt_ctx *c, ts_rt_tensor *const *f) {
  const ts_rt_tensor *LU = f[0];
  bool d = LU->dtype == TS_DT_FLOAT64;
  la_batch b;
  la_batch_of(&b, LU, 2);
  ts_rt_tensor *r = la_new(c, (ts_dtype)LU->dtype, &b, 0, 0, 0, false);
  if (!r) return NULL;
  int64_t n = LU->sizes[LU->ndim - 1];
  const void *lu = ts_rt_tensor_data(LU);
  void *rp = ts_rt_tensor_data(r);
  for (int64_t i = 0; i < b.n; i++) {
    double s = la_piv_sign(f[1], i);
    if (d) {
      double p = 1;
      for (int64_t j = 0; j < n; j++) p *= la_get(lu, true, i * n * n + j * (n + 1));
      la_set(rp, true, i, s * p);
    } else {
      float p = 1;
      for (int64_t j = 0; j < n; j++) p *= (float)la_get(lu, false, i * n * n + j * (n + 1));
      la_set(rp, false, i, (float)s * p);
    }
  }
  return r;
}

/* linalg_det(A) and det(self) */
static bool la_k_det(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *f[3];
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !la_det_lu(c, A, "linalg.det", f)) return false;
  ts_rt_tensor *r = la_det_from(c, f);
  la_release(f, 3);
  return r && la_put(call, &r, 1);
}

/* _linalg_det(A) -> (result, LU, pivots) */
static bool la_k__det(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *f[3];
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !la_det_lu(c, A, "linalg.det", f)) return false;
  ts_rt_tensor *o[3] = {la_det_from(c, f), f[0], f[1]};
  ts_rt_tensor_release(f[2]);
  if (!o[0]) {
    la_release(f, 2);
    return false;
  }
  return la_put(call, o, 3);
}

/* sign and log|det| from the LU: sign(P) * prod(sign(diag)), sum(log|diag|) */
static bool la_slogdet_from(ts_rt_ctx *c, ts_rt_tensor *const *f, ts_rt_tensor **o) {
  const ts_rt_tensor *LU = f[0];
  bool d = LU->dtype == TS_DT_FLOAT64;
  la_batch b;
  la_batch_of(&b, LU, 2);
  o[0] = la_new(c, (ts_dtype)LU->dtype, &b, 0, 0, 0, false);
  o[1] = o[0] ? la_new(c, (ts_dtype)LU->dtype, &b, 0, 0, 0, false) : NULL;
  if (!o[1]) {
    la_release(o, 1);
    return false;
  }
  int64_t n = LU->sizes[LU->ndim - 1];
  const void *lu = ts_rt_tensor_data(LU);
  void *sp = ts_rt_tensor_data(o[0]), *lp = ts_rt_tensor_data(o[1]);
  for (int64_t i = 0; i < b.n; i++) {
    double s = la_piv_sign(f[1], i);
    if (d) {
      double l = 0;
      for (int64_t j = 0; j < n; j++) {
        double x = la_get(lu, true, i * n * n + j * (n + 1));
        s *= x > 0 ? 1 : x < 0 ? -1 : 0;
        l += log(fabs(x));
      }
      la_set(sp, true, i, s);
      la_set(lp, true, i, l);
    } else {
      float l = 0;
      for (int64_t j = 0; j < n; j++) {
        float x = (float)la_get(lu, false, i * n * n + j * (n + 1));
        s *= x > 0 ? 1 : x < 0 ? -1 : 0;
        l += logf(fabsf(x));
      }
      la_set(sp, false, i, s);
      la_set(lp, false, i, l);
    }
  }
  return true;
}

/* linalg_slogdet(A) and slogdet(self) -> (sign, logabsdet) */
static bool la_k_slogdet(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *f[3], *o[2];
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !la_det_lu(c, A, "linalg.slogdet", f)) return false;
  bool ok = la_slogdet_from(c, f, o);
  la_release(f, 3);
  return ok && la_put(call, o, 2);
}

/* _linalg_slogdet(A) -> (sign, logabsdet, LU, pivots) */
static bool la_k__slogdet(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *f[3], *o[4];
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !la_det_lu(c, A, "linalg.slogdet", f)) return false;
  bool ok = la_slogdet_from(c, f, o);
  ts_rt_tensor_release(f[2]);
  if (!ok) {
    la_release(f, 2);
    return false;
  }
  o[2] = f[0];
  o[3] = f[1];
  return la_put(call, o, 4);
}

/* logdet(self): log|det| where the sign is not -1, NaN where it is */
static bool la_k_logdet(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *f[3], *o[2];
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !la_det_lu(c, A, "logdet", f)) return false;
  bool ok = la_slogdet_from(c, f, o);
  la_release(f, 3);
  if (!ok) return false;
  bool d = A->dtype == TS_DT_FLOAT64;
  int64_t n = ts_rt_tensor_numel(o[0]);
  const void *sp = ts_rt_tensor_data(o[0]);
  void *lp = ts_rt_tensor_data(o[1]);
  for (int64_t i = 0; i < n; i++)
    if (la_get(sp, d, i) == -1) la_set(lp, d, i, NAN);
  ts_rt_tensor_release(o[0]);
  return la_put(call, &o[1], 1);
}

/* ------------------------------------------------------- solve, inv */

/* _linalg_solve_ex: result, LU, pivots, info. B is a vector (or batch of
 * them) when it is 1-d or A's shape less the last dim. A contiguous A is
 * factored as A^T and solved with adjoint, as ATen does. */
static bool la_solve(ts_rt_ctx *c, const ts_rt_tensor *A, const ts_rt_tensor *B, bool left, ts_rt_tensor **o) {
  const char *fn = "linalg.solve";
  if (!la_check_float(c, A, fn, "linalg_solve_cpu")) return false;
  if (A->dtype != B->dtype)
    return ts_rt_fail(c, "%s: Expected A and B to have the same dtype, but found A of type %s and B of type %s instead",
                      fn, ts_rt_dtype_name((ts_dtype)A->dtype), ts_rt_dtype_name((ts_dtype)B->dtype));
  bool vec = B->ndim == 1;
  if (!vec && A->ndim >= 1 && B->ndim == A->ndim - 1) {
    vec = true;
    for (int32_t i = 0; i < B->ndim; i++) vec = vec && B->sizes[i] == A->sizes[i];
  }
  if (!la_check_square(c, A, fn, "A")) return false;
  ts_rt_tensor *Bm = NULL;
  if (vec) {
    int64_t sizes[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS];
    if (B->ndim + 1 > TS_RT_MAX_DIMS) return ts_rt_fail(c, "linalg: too many dimensions");
    memcpy(sizes, B->sizes, (size_t)B->ndim * sizeof *sizes);
    memcpy(strides, B->strides, (size_t)B->ndim * sizeof *strides);
    sizes[B->ndim] = 1;
    strides[B->ndim] = 1;
    Bm = ts_rt_tensor_view(c, B, B->offset, B->ndim + 1, sizes, strides);
    if (!Bm) return false;
  } else {
    if (!la_check_matrix(c, B, fn, "B")) return false;
    Bm = (ts_rt_tensor *)B;
    ts_rt_tensor_retain(Bm);
  }
  int64_t n = A->sizes[A->ndim - 1];
  int64_t br = Bm->sizes[Bm->ndim - 2], bc = Bm->sizes[Bm->ndim - 1];
  bool ok = true;
  if (left ? br != n : bc != n)
    ok = ts_rt_fail(c, "%s: Incompatible shapes of A and B for the equation %s (%lldx%lld and %lldx%lld)", fn,
                    left ? "AX = B" : "XA = B", (long long)n, (long long)n, (long long)br, (long long)bc);
  la_batch b;
  la_batch_of(&b, Bm, 2);
  if (ok) ok = la_batch_bcast(c, &b, A, 2);
  if (ok && !left && vec)
    ok = ts_rt_fail(c, "linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. In "
                       "this case linalg.solve is equivalent to B / A.squeeze(-1)");
  bool tr = ts_rt_tensor_is_contiguous(A);
  if (ok) ok = la_lu(c, A, tr, o + 1);
  if (!ok) {
    ts_rt_tensor_release(Bm);
    return false;
  }
  ts_rt_tensor *X = la_lu_solve(c, o[1], o[2], Bm, left, tr);
  ts_rt_tensor_release(Bm);
  if (!X) {
    la_release(o + 1, 3);
    return false;
  }
  if (vec) {
    int64_t sizes[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS];
    memcpy(sizes, X->sizes, (size_t)(X->ndim - 1) * sizeof *sizes);
    ts_rt_strides_contiguous(X->ndim - 1, sizes, strides);
    ts_rt_tensor *v = ts_rt_tensor_view(c, X, X->offset, X->ndim - 1, sizes, strides);
    ts_rt_tensor_release(X);
    if (!v) {
      la_release(o + 1, 3);
      return false;
    }
    X = v;
  }
  o[0] = X;
  return true;
}

/* _linalg_solve_ex(A, B, *, left, check_errors) -> (result, LU, pivots, info) */
static bool la_k__solve_ex(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *B, *o[4];
  bool left, check;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_tensor(c, call, 1, &B) || !ts_rt_arg_bool(c, call, 2, &left) ||
      !ts_rt_arg_bool(c, call, 3, &check) || !la_solve(c, A, B, left, o))
    return false;
  if (check && !la_check_info(c, ts_rt_tensor_data(o[3]), ts_rt_tensor_numel(o[3]), "torch.linalg.solve_ex",
                              A->ndim == 2, LA_ERR_SOLVE)) {
    la_release(o, 4);
    return false;
  }
  return la_put(call, o, 4);
}

/* linalg_solve_ex(A, B, *, left, check_errors) -> (result, info) */
static bool la_k_solve_ex(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *B, *o[4];
  bool left, check;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_tensor(c, call, 1, &B) || !ts_rt_arg_bool(c, call, 2, &left) ||
      !ts_rt_arg_bool(c, call, 3, &check) || !la_solve(c, A, B, left, o))
    return false;
  la_release(o + 1, 2);
  if (check && !la_check_info(c, ts_rt_tensor_data(o[3]), ts_rt_tensor_numel(o[3]), "torch.linalg.solve_ex",
                              A->ndim == 2, LA_ERR_SOLVE)) {
    ts_rt_tensor_release(o[0]);
    ts_rt_tensor_release(o[3]);
    return false;
  }
  o[1] = o[3];
  return la_put(call, o, 2);
}

/* linalg_solve(A, B, *, left) */
static bool la_k_solve(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *B, *o[4];
  bool left;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_tensor(c, call, 1, &B) || !ts_rt_arg_bool(c, call, 2, &left) ||
      !la_solve(c, A, B, left, o))
    return false;
  bool ok = la_check_info(c, ts_rt_tensor_data(o[3]), ts_rt_tensor_numel(o[3]), "torch.linalg.solve", A->ndim == 2,
                          LA_ERR_SOLVE);
  la_release(o + 1, 3);
  if (!ok) {
    ts_rt_tensor_release(o[0]);
    return false;
  }
  return la_put(call, o, 1);
}

/* inverse as ATen's linalg_inv_ex: solve(A, I); o: result, info */
static bool la_inv(ts_rt_ctx *c, const ts_rt_tensor *A, const char *fn, ts_rt_tensor **o) {
  if (!la_check_square(c, A, fn, "A") || !la_check_float(c, A, fn, "linalg_solve_cpu")) return false;
  int64_t n = A->sizes[A->ndim - 1];
  la_batch b;
  la_batch_of(&b, A, 2);
  ts_rt_tensor *eye = la_new(c, (ts_dtype)A->dtype, &b, 2, n, n, true);
  if (!eye) return false;
  size_t esz = ts_dtype_size((ts_dtype)A->dtype);
  char *ip = ts_rt_tensor_data(eye);
  for (int64_t i = 0; i < b.n; i++)
    for (int64_t j = 0; j < n; j++) ts_rt_store_f64(ip + (size_t)(i * n * n + j * (n + 1)) * esz, (ts_dtype)A->dtype, 1);
  ts_rt_tensor *s[4];
  bool ok = la_solve(c, A, eye, true, s);
  ts_rt_tensor_release(eye);
  if (!ok) return false;
  la_release(s + 1, 2);
  o[0] = s[0];
  o[1] = s[3];
  return true;
}

/* linalg_inv_ex(A, *, check_errors) -> (inverse, info) */
static bool la_k_inv_ex(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[2];
  bool check;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_bool(c, call, 1, &check) || !la_inv(c, A, "linalg.inv", o))
    return false;
  if (check && !la_check_info(c, ts_rt_tensor_data(o[1]), ts_rt_tensor_numel(o[1]), "linalg.inv_ex", A->ndim == 2,
                              LA_ERR_INV)) {
    la_release(o, 2);
    return false;
  }
  return la_put(call, o, 2);
}

/* linalg_inv(A), inverse(self) */
static bool la_k_inv(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[2];
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !la_inv(c, A, "linalg.inv", o)) return false;
  bool ok = la_check_info(c, ts_rt_tensor_data(o[1]), ts_rt_tensor_numel(o[1]), "linalg.inv", A->ndim == 2, LA_ERR_INV);
  ts_rt_tensor_release(o[1]);
  if (!ok) {
    ts_rt_tensor_release(o[0]);
    return false;
  }
  return la_put(call, o, 1);
}

/* ------------------------------------------------------- Cholesky */

/* Zeroes the triangle above (upper false) or below the diagonal of a
 * column-major n x n buf. */
static void la_keep_tri(void *buf, bool d, int64_t n, int64_t ld, bool upper) {
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++)
      if (upper ? i > j : i < j) la_set(buf, d, i + j * ld, 0);
}

/* potrf of each matrix of A: L (or U), info (*) */
static bool la_chol(ts_rt_ctx *c, const ts_rt_tensor *A, bool upper, ts_rt_tensor **o) {
  bool d = A->dtype == TS_DT_FLOAT64;
  int64_t n = A->sizes[A->ndim - 1], ld = la_max1(n);
  la_batch b;
  la_batch_of(&b, A, 2);
  o[0] = la_new(c, (ts_dtype)A->dtype, &b, 2, n, n, false);
  o[1] = o[0] ? la_new(c, TS_DT_INT32, &b, 0, 0, 0, true) : NULL;
  void *buf = o[1] ? la_scratch(c, ld * n, d ? 8 : 4) : NULL;
  if (!buf) {
    la_release(o, 2);
    return false;
  }
  int32_t *info = ts_rt_tensor_data(o[1]);
  char uplo = upper ? 'U' : 'L';
  for (int64_t i = 0; i < b.n; i++) {
    la_load(A, la_off(A, 2, &b, i), buf, ld, false);
    ts_la_int in = (ts_la_int)n, ild = (ts_la_int)ld, inf = 0;
    if (n > 0) {
      if (d)
        dpotrf_(&uplo, &in, buf, &ild, &inf, 1);
      else
        spotrf_(&uplo, &in, buf, &ild, &inf, 1);
    }
    info[i] = inf;
    la_keep_tri(buf, d, n, ld, upper);
    la_store(o[0], i, buf, ld, false);
  }
  ts_rt_free(buf);
  return true;
}

/* linalg_cholesky_ex(self, *, upper, check_errors) -> (L, info) */
static bool la_k_cholesky_ex(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[2];
  bool upper, check;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_bool(c, call, 1, &upper) || !ts_rt_arg_bool(c, call, 2, &check))
    return false;
  if (!la_check_square(c, A, "linalg.cholesky", "A") || !la_check_float(c, A, "linalg.cholesky", "cholesky_cpu") ||
      !la_chol(c, A, upper, o))
    return false;
  if (check && !la_check_info(c, ts_rt_tensor_data(o[1]), ts_rt_tensor_numel(o[1]), "linalg.cholesky_ex",
                              A->ndim == 2, LA_ERR_CHOL)) {
    la_release(o, 2);
    return false;
  }
  return la_put(call, o, 2);
}

/* linalg_cholesky(self, *, upper) */
static bool la_k_linalg_cholesky(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[2];
  bool upper;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_bool(c, call, 1, &upper)) return false;
  if (!la_check_square(c, A, "linalg.cholesky", "A") || !la_check_float(c, A, "linalg.cholesky", "cholesky_cpu") ||
      !la_chol(c, A, upper, o))
    return false;
  bool ok = la_check_info(c, ts_rt_tensor_data(o[1]), ts_rt_tensor_numel(o[1]), "linalg.cholesky", A->ndim == 2,
                          LA_ERR_CHOL);
  ts_rt_tensor_release(o[1]);
  if (!ok) {
    ts_rt_tensor_release(o[0]);
    return false;
  }
  return la_put(call, o, 1);
}

/* cholesky(self, upper): the lower factor, or its transpose for upper */
static bool la_k_cholesky(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[2];
  bool upper;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_bool(c, call, 1, &upper)) return false;
  if (!la_check_square(c, A, "cholesky", "A") || !la_check_dispatch(c, A, "cholesky_cpu") || !la_chol(c, A, false, o))
    return false;
  bool ok = la_check_info(c, ts_rt_tensor_data(o[1]), ts_rt_tensor_numel(o[1]), "cholesky", A->ndim == 2, LA_ERR_CHOL);
  ts_rt_tensor_release(o[1]);
  if (ok && upper) {
    /* L^T, contiguous */
    int64_t n = A->sizes[A->ndim - 1];
    la_batch b;
    la_batch_of(&b, A, 2);
    ts_rt_tensor *u = la_new(c, (ts_dtype)A->dtype, &b, 2, n, n, false);
    if (u)
      for (int64_t i = 0; i < b.n; i++)
        la_store(u, i, (const char *)ts_rt_tensor_data(o[0]) + (size_t)(i * n * n) * ts_dtype_size((ts_dtype)A->dtype),
                 n, false);
    ts_rt_tensor_release(o[0]);
    o[0] = u;
    ok = u != NULL;
  } else if (!ok) {
    ts_rt_tensor_release(o[0]);
  }
  return ok && la_put(call, o, 1);
}

/* The batch dims of B and A broadcast, and b/A shape checks of ATen's
 * linearSolveCheckInputs (cholesky_solve, triangular_solve). */
static bool la_linear_solve_checks(ts_rt_ctx *c, const ts_rt_tensor *B, const ts_rt_tensor *A, const char *name) {
  if (B->dtype != A->dtype)
    return ts_rt_fail(c, "Expected b and A to have the same dtype, but found b of type %s and A of type %s instead.",
                      ts_rt_dtype_name((ts_dtype)B->dtype), ts_rt_dtype_name((ts_dtype)A->dtype));
  int64_t am = A->sizes[A->ndim - 2], an = A->sizes[A->ndim - 1];
  if (am != an)
    return ts_rt_fail(c, "A must be batches of square matrices, but they are %lld by %lld matrices", (long long)am,
                      (long long)an);
  if (an != B->sizes[B->ndim - 2])
    return ts_rt_fail(c, "Incompatible matrix sizes for %s: each A matrix is %lld by %lld but each b matrix is %lld by %lld",
                      name, (long long)an, (long long)an, (long long)B->sizes[B->ndim - 2],
                      (long long)B->sizes[B->ndim - 1]);
  return la_dims_ok(c, an, B->sizes[B->ndim - 1]);
}

/* cholesky_solve(self, input2, upper): potrs with the factor input2 */
static bool la_k_cholesky_solve(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *B, *L;
  bool upper;
  if (!ts_rt_arg_tensor(c, call, 0, &B) || !ts_rt_arg_tensor(c, call, 1, &L) || !ts_rt_arg_bool(c, call, 2, &upper))
    return false;
  if (B->ndim < 2)
    return ts_rt_fail(c, "b should have at least 2 dimensions, but has %d dimensions instead", (int)B->ndim);
  if (L->ndim < 2)
    return ts_rt_fail(c, "u should have at least 2 dimensions, but has %d dimensions instead", (int)L->ndim);
  if (!la_linear_solve_checks(c, B, L, "cholesky_solve") || !la_check_dispatch(c, B, "cholesky_solve_cpu"))
    return false;
  bool d = B->dtype == TS_DT_FLOAT64;
  int64_t n = L->sizes[L->ndim - 1], k = B->sizes[B->ndim - 1], ld = la_max1(n);
  la_batch b;
  la_batch_of(&b, B, 2);
  if (!la_batch_bcast(c, &b, L, 2)) return false;
  ts_rt_tensor *X = la_new(c, (ts_dtype)B->dtype, &b, 2, n, k, false);
  void *lb = X ? la_scratch(c, ld * n, d ? 8 : 4) : NULL;
  void *xb = lb ? la_scratch(c, ld * k, d ? 8 : 4) : NULL;
  if (!xb) {
    ts_rt_free(lb);
    if (X) ts_rt_tensor_release(X);
    return false;
  }
  char uplo = upper ? 'U' : 'L';
  for (int64_t i = 0; i < b.n; i++) {
    la_load(L, la_off(L, 2, &b, i), lb, ld, false);
    la_load(B, la_off(B, 2, &b, i), xb, ld, false);
    ts_la_int in = (ts_la_int)n, ik = (ts_la_int)k, ild = (ts_la_int)ld, inf = 0;
    if (n > 0 && k > 0) {
      if (d)
        dpotrs_(&uplo, &in, &ik, lb, &ild, xb, &ild, &inf, 1);
      else
        spotrs_(&uplo, &in, &ik, lb, &ild, xb, &ild, &inf, 1);
    }
    la_store(X, i, xb, ld, false);
  }
  ts_rt_free(lb);
  ts_rt_free(xb);
  return la_put(call, &X, 1);
}

/* cholesky_inverse(self, upper): potri, then the whole symmetric inverse */
static bool la_k_cholesky_inverse(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *L;
  bool upper;
  if (!ts_rt_arg_tensor(c, call, 0, &L) || !ts_rt_arg_bool(c, call, 1, &upper)) return false;
  if (!la_check_square(c, L, "cholesky_inverse", "A") || !la_check_dispatch(c, L, "cholesky_inverse_out_cpu"))
    return false;
  bool d = L->dtype == TS_DT_FLOAT64;
  int64_t n = L->sizes[L->ndim - 1], ld = la_max1(n);
  la_batch b;
  la_batch_of(&b, L, 2);
  ts_rt_tensor *X = la_new(c, (ts_dtype)L->dtype, &b, 2, n, n, false);
  void *buf = X ? la_scratch(c, ld * n, d ? 8 : 4) : NULL;
  int32_t *info = buf ? la_scratch(c, b.n, sizeof(int32_t)) : NULL;
  if (!info) {
    ts_rt_free(buf);
    if (X) ts_rt_tensor_release(X);
    return false;
  }
  char uplo = upper ? 'U' : 'L';
  for (int64_t i = 0; i < b.n; i++) {
    la_load(L, la_off(L, 2, &b, i), buf, ld, false);
    ts_la_int in = (ts_la_int)n, ild = (ts_la_int)ld, inf = 0;
    if (n > 0) {
      if (d)
        dpotri_(&uplo, &in, buf, &ild, &inf, 1);
      else
        spotri_(&uplo, &in, buf, &ild, &inf, 1);
    }
    info[i] = inf;
    for (int64_t j = 0; j < n; j++)
      for (int64_t r = 0; r < n; r++)
        if (upper ? r > j : r < j) la_set(buf, d, r + j * ld, la_get(buf, d, j + r * ld));
    la_store(X, i, buf, ld, false);
  }
  ts_rt_free(buf);
  bool ok = la_check_info(c, info, b.n, "cholesky_inverse", L->ndim == 2, LA_ERR_INV);
  ts_rt_free(info);
  if (!ok) {
    ts_rt_tensor_release(X);
    return false;
  }
  return la_put(call, &X, 1);
}

/* ------------------------------------------------- triangular solves */

/* X = op(A)^-1 B (left) or B op(A)^-1 by trsm, batches broadcast; A, B of
 * dtype dt (converted copies when they are not). */
static ts_rt_tensor *la_trsm(ts_rt_ctx *c, const ts_rt_tensor *A, const ts_rt_tensor *B, bool upper, bool left,
                             bool trans, bool unit, la_batch *b) {
  bool d = B->dtype == TS_DT_FLOAT64;
  int64_t n = A->sizes[A->ndim - 1], m = B->sizes[B->ndim - 2], k = B->sizes[B->ndim - 1], lda = la_max1(n),
          ldb = la_max1(m);
  if (!la_dims_ok(c, m, k)) return NULL;
  ts_rt_tensor *X = la_new(c, (ts_dtype)B->dtype, b, 2, m, k, false);
  void *ab = X ? la_scratch(c, lda * n, d ? 8 : 4) : NULL;
  void *xb = ab ? la_scratch(c, ldb * k, d ? 8 : 4) : NULL;
  if (!xb) {
    ts_rt_free(ab);
    if (X) ts_rt_tensor_release(X);
    return NULL;
  }
  char side = left ? 'L' : 'R', uplo = upper ? 'U' : 'L', ta = trans ? 'T' : 'N', diag = unit ? 'U' : 'N';
  for (int64_t i = 0; i < b->n; i++) {
    la_load(A, la_off(A, 2, b, i), ab, lda, false);
    la_load(B, la_off(B, 2, b, i), xb, ldb, false);
    ts_la_int im = (ts_la_int)m, ik = (ts_la_int)k, ilda = (ts_la_int)lda, ildb = (ts_la_int)ldb;
    if (m > 0 && k > 0) {
      if (d) {
        double one = 1;
        dtrsm_(&side, &uplo, &ta, &diag, &im, &ik, &one, ab, &ilda, xb, &ildb, 1, 1, 1, 1);
      } else {
        float one = 1;
        strsm_(&side, &uplo, &ta, &diag, &im, &ik, &one, ab, &ilda, xb, &ildb, 1, 1, 1, 1);
      }
    }
    la_store(X, i, xb, ldb, false);
  }
  ts_rt_free(ab);
  ts_rt_free(xb);
  return X;
}

/* linalg_solve_triangular(self, B, *, upper, left, unitriangular): in A's
 * dtype (B converted), as PyTorch 1.13 computes it */
static bool la_k_solve_triangular(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *B;
  bool upper, left, unit;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_tensor(c, call, 1, &B) || !ts_rt_arg_bool(c, call, 2, &upper) ||
      !ts_rt_arg_bool(c, call, 3, &left) || !ts_rt_arg_bool(c, call, 4, &unit))
    return false;
  const char *fn = "linalg.solve_triangular";
  if (!la_check_matrix(c, B, fn, "B") || !la_check_square(c, A, fn, "A")) return false;
  int64_t n = A->sizes[A->ndim - 1];
  if (left ? B->sizes[B->ndim - 2] != n : B->sizes[B->ndim - 1] != n)
    return ts_rt_fail(c, "%s: Incompatible shapes of A and B for the equation %s (%lldx%lld and %lldx%lld)", fn,
                      left ? "AX = B" : "XA = B", (long long)n, (long long)n, (long long)B->sizes[B->ndim - 2],
                      (long long)B->sizes[B->ndim - 1]);
  ts_dtype dt = (ts_dtype)A->dtype;
  if (dt != TS_DT_FLOAT32 && dt != TS_DT_FLOAT64)
    return ts_rt_fail(c, "\"triangular_solve_cpu\" not implemented for '%s'", ts_rt_dtype_name(dt));
  ts_rt_tensor *Ac = A;
  ts_rt_tensor *Bc = B->dtype == dt ? B : ts_rt_tensor_to_dtype(c, B, dt);
  la_batch b;
  la_batch_of(&b, B, 2);
  ts_rt_tensor *X = Bc && la_batch_bcast(c, &b, A, 2) ? la_trsm(c, Ac, Bc, upper, left, false, unit, &b) : NULL;
  if (Ac && Ac != A) ts_rt_tensor_release(Ac);
  if (Bc && Bc != B) ts_rt_tensor_release(Bc);
  return X && la_put(call, &X, 1);
}

/* triangular_solve(self, A, upper, transpose, unitriangular) ->
 * (solution, cloned_coefficient: A broadcast to the batch) */
static bool la_k_triangular_solve(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *B, *A;
  bool upper, trans, unit;
  if (!ts_rt_arg_tensor(c, call, 0, &B) || !ts_rt_arg_tensor(c, call, 1, &A) || !ts_rt_arg_bool(c, call, 2, &upper) ||
      !ts_rt_arg_bool(c, call, 3, &trans) || !ts_rt_arg_bool(c, call, 4, &unit))
    return false;
  if (B->ndim < 2)
    return ts_rt_fail(c, "torch.triangular_solve: Expected b to have at least 2 dimensions, but it has %d dimensions "
                         "instead",
                      (int)B->ndim);
  if (A->ndim < 2)
    return ts_rt_fail(c, "torch.triangular_solve: Expected A to have at least 2 dimensions, but it has %d dimensions "
                         "instead",
                      (int)A->ndim);
  if (!la_linear_solve_checks(c, B, A, "triangular_solve") || !la_check_dispatch(c, B, "triangular_solve_cpu"))
    return false;
  la_batch b;
  la_batch_of(&b, B, 2);
  if (!la_batch_bcast(c, &b, A, 2)) return false;
  ts_rt_tensor *o[2] = {la_trsm(c, A, B, upper, true, trans, unit, &b), NULL};
  int64_t n = A->sizes[A->ndim - 1];
  o[1] = o[0] ? la_new(c, (ts_dtype)A->dtype, &b, 2, n, n, false) : NULL;
  if (!o[1]) {
    la_release(o, 1);
    return false;
  }
  if (!ts_rt_tensor_copy_(c, o[1], A)) {
    la_release(o, 2);
    return false;
  }
  return la_put(call, o, 2);
}

/* ------------------------------------------------------------ eigh */

/* One syevd/heevd call by A's dtype; lwork -1 is the workspace query. */
static void la_syevd(ts_dtype dt, char jobz, char uplo, ts_la_int n, void *a, ts_la_int ld, void *w, void *work,
                     ts_la_int lwork, void *rwork, ts_la_int lrwork, ts_la_int *iwork, ts_la_int liwork,
                     ts_la_int *info) {
  switch (dt) {
  case TS_DT_FLOAT32: ssyevd_(&jobz, &uplo, &n, a, &ld, w, work, &lwork, iwork, &liwork, info, 1, 1); break;
  case TS_DT_FLOAT64: dsyevd_(&jobz, &uplo, &n, a, &ld, w, work, &lwork, iwork, &liwork, info, 1, 1); break;
  case TS_DT_COMPLEX64:
    cheevd_(&jobz, &uplo, &n, a, &ld, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1);
    break;
  default: zheevd_(&jobz, &uplo, &n, a, &ld, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1); break;
  }
}

/* syevd (heevd for complex64/128) of each matrix (the triangle uplo):
 * eigenvalues (*, n) ascending, real (the parts' dtype for complex A),
 * eigenvectors (*, n, n) in A's dtype as columns when vectors, else NULL */
static bool la_eigh(ts_rt_ctx *c, const ts_rt_tensor *A, char uplo, bool vectors, ts_rt_tensor **o, const char *api) {
  ts_dtype dt = (ts_dtype)A->dtype;
  bool cplx = dt == TS_DT_COMPLEX64 || dt == TS_DT_COMPLEX128;
  bool d = dt == TS_DT_FLOAT64 || dt == TS_DT_COMPLEX128;
  size_t rsz = d ? 8 : 4; /* one real */
  int64_t k = cplx ? 2 : 1; /* reals per element */
  int64_t n = A->sizes[A->ndim - 1], ld = la_max1(n);
  la_batch b;
  la_batch_of(&b, A, 2);
  o[0] = la_new(c, d ? TS_DT_FLOAT64 : TS_DT_FLOAT32, &b, 1, n, 0, false);
  o[1] = !o[0] ? NULL : vectors ? la_new(c, dt, &b, 2, n, n, false) : NULL;
  if (!o[0] || (vectors && !o[1])) {
    la_release(o, 2);
    return false;
  }
  char jobz = vectors ? 'V' : 'N';
  ts_la_int in = (ts_la_int)n, ild = (ts_la_int)ld, lwork = 1, lrwork = 1, liwork = 1, inf = 0, iwq = 0;
  double wq[2] = {0, 0}, rwq = 0; /* work[0] (complex for heevd), rwork[0] */
  float wqf[2] = {0, 0}, rwqf = 0;
  if (n > 0) {
    la_syevd(dt, jobz, uplo, in, NULL, ild, NULL, d ? (void *)wq : (void *)wqf, -1, d ? (void *)&rwq : (void *)&rwqf,
             -1, &iwq, -1, &inf);
    lwork = (ts_la_int)(d ? wq[0] : (double)wqf[0]) + 1;
    lrwork = (ts_la_int)(d ? rwq : (double)rwqf) + 1;
    liwork = iwq > 0 ? iwq : 1;
  }
  void *buf = la_scratch(c, ld * n * k, rsz);
  void *work = buf ? la_scratch(c, (int64_t)lwork * k, rsz) : NULL;
  void *rwork = work ? la_scratch(c, cplx ? lrwork : 1, rsz) : NULL;
  ts_la_int *iwork = rwork ? la_scratch(c, liwork, sizeof(ts_la_int)) : NULL;
  int32_t *info = iwork ? la_scratch(c, b.n, sizeof(int32_t)) : NULL;
  if (!info) {
    ts_rt_free(buf);
    ts_rt_free(work);
    ts_rt_free(rwork);
    ts_rt_free(iwork);
    la_release(o, 2);
    return false;
  }
  for (int64_t i = 0; i < b.n; i++) {
    la_load(A, la_off(A, 2, &b, i), buf, ld, false);
    inf = 0;
    char *w = (char *)ts_rt_tensor_data(o[0]) + (size_t)(i * n) * rsz;
    if (n > 0) la_syevd(dt, jobz, uplo, in, buf, ild, w, work, lwork, rwork, lrwork, iwork, liwork, &inf);
    info[i] = inf;
    if (vectors) la_store(o[1], i, buf, ld, false);
  }
  bool ok = la_check_info(c, info, b.n, api, A->ndim == 2, LA_ERR_EIG);
  ts_rt_free(buf);
  ts_rt_free(work);
  ts_rt_free(rwork);
  ts_rt_free(iwork);
  ts_rt_free(info);
  if (!ok) la_release(o, 2);
  return ok;
}

static bool la_uplo(ts_rt_ctx *c, const ts_rt_str *s, char *out) {
  if (s->len == 1 && (s->data[0] == 'L' || s->data[0] == 'U' || s->data[0] == 'l' || s->data[0] == 'u')) {
    *out = (char)(s->data[0] & ~0x20);
    return true;
  }
  return ts_rt_fail(c, "Expected UPLO argument to be 'L' or 'U', but got %.*s", (int)s->len, s->data);
}

/* linalg.eigh's checks: square, then the dtypes its dispatch takes
 * (float32/64 and complex64/128) */
static bool la_eigh_checks(ts_rt_ctx *c, const ts_rt_tensor *A) {
  ts_dtype dt = (ts_dtype)A->dtype;
  if (!la_check_square(c, A, "linalg.eigh", "A")) return false;
  return dt == TS_DT_COMPLEX64 || dt == TS_DT_COMPLEX128 || la_check_dispatch(c, A, "linalg_eigh_cpu");
}

/* linalg_eigh(self, UPLO) -> (eigenvalues, eigenvectors) */
static bool la_k_eigh(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[2];
  const ts_rt_str *s;
  char uplo;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_str(c, call, 1, &s) || !la_eigh_checks(c, A) ||
      !la_uplo(c, s, &uplo) || !la_eigh(c, A, uplo, true, o, "linalg.eigh"))
    return false;
  return la_put(call, o, 2);
}

/* _linalg_eigh(A, UPLO, compute_v): eigenvectors [0] without compute_v */
static bool la_k__eigh(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[2];
  const ts_rt_str *s;
  char uplo;
  bool v;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_str(c, call, 1, &s) || !ts_rt_arg_bool(c, call, 2, &v) ||
      !la_eigh_checks(c, A) || !la_uplo(c, s, &uplo) || !la_eigh(c, A, uplo, v, o, "linalg.eigh"))
    return false;
  if (!v) {
    int64_t zero = 0;
    o[1] = ts_rt_tensor_new(c, (ts_dtype)A->dtype, 1, &zero, false);
    if (!o[1]) {
      la_release(o, 1);
      return false;
    }
  }
  return la_put(call, o, 2);
}

/* linalg_eigvalsh(self, UPLO) */
static bool la_k_eigvalsh(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[2];
  const ts_rt_str *s;
  char uplo;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_str(c, call, 1, &s) || !la_eigh_checks(c, A) ||
      !la_uplo(c, s, &uplo) || !la_eigh(c, A, uplo, false, o, "linalg.eigh"))
    return false;
  return la_put(call, o, 1);
}

/* symeig(self, eigenvectors, upper): eigenvectors [0] when not asked for
 * (syevd where PyTorch calls syev: the same eigenvalues and, at OpInfo's
 * sizes, the same vectors) */
static bool la_k_symeig(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[2];
  bool vec, upper;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_bool(c, call, 1, &vec) || !ts_rt_arg_bool(c, call, 2, &upper))
    return false;
  if (!la_check_square(c, A, "symeig", "A") || !la_check_dispatch(c, A, "symeig_cpu") ||
      !la_eigh(c, A, upper ? 'U' : 'L', vec, o, "symeig"))
    return false;
  if (!vec) {
    /* an empty input keeps its shape (ATen returns early with it) */
    int64_t zero = 0;
    o[1] = ts_rt_tensor_numel(A) == 0 ? ts_rt_tensor_new(c, (ts_dtype)A->dtype, A->ndim, A->sizes, false)
                                      : ts_rt_tensor_new(c, (ts_dtype)A->dtype, 1, &zero, false);
    if (!o[1]) {
      la_release(o, 1);
      return false;
    }
  }
  return la_put(call, o, 2);
}

/* -------------------------------------------------------------- eig */

/* The complex dtype eig returns for A's (toComplexType); TS_DT_NONE with
 * PyTorch's message for one it has none for. float16 and bfloat16 have one
 * (and fail later, in the kernel's dispatch). */
static ts_dtype la_eig_out_dtype(ts_rt_ctx *c, ts_dtype dt) {
  switch (dt) {
  case TS_DT_FLOAT32:
  case TS_DT_COMPLEX64: return TS_DT_COMPLEX64;
  case TS_DT_FLOAT64:
  case TS_DT_COMPLEX128: return TS_DT_COMPLEX128;
  case TS_DT_FLOAT16:
  case TS_DT_BFLOAT16: return TS_DT_COMPLEX32;
  default: ts_rt_fail(c, "Unknown Complex ScalarType for %s", ts_rt_dtype_name(dt)); return TS_DT_NONE;
  }
}

/* linalg.eig's isfinite(A).all() check, over every element of any shape. */
static bool la_eig_finite(ts_rt_ctx *c, ts_rt_tensor *A) {
  ts_dtype dt = (ts_dtype)A->dtype;
  bool cplx = dt == TS_DT_COMPLEX64 || dt == TS_DT_COMPLEX128;
  if (!ts_rt_dtype_is_float(dt) && !cplx) return true;
  ts_rt_tensor *t = ts_rt_tensor_contiguous(c, A);
  if (!t) return false;
  /* a complex element is two reals of half its size */
  ts_dtype rdt = dt == TS_DT_COMPLEX64 ? TS_DT_FLOAT32 : dt == TS_DT_COMPLEX128 ? TS_DT_FLOAT64 : dt;
  int64_t n = ts_rt_tensor_numel(t) * (cplx ? 2 : 1);
  size_t esz = ts_dtype_size(rdt);
  const char *p = ts_rt_tensor_data(t);
  bool ok = true;
  for (int64_t i = 0; i < n && ok; i++) ok = isfinite(ts_rt_load_f64(p + (size_t)i * esz, rdt));
  ts_rt_tensor_release(t);
  if (!ok) return ts_rt_fail(c, "torch.linalg.eig: input tensor should not contain infs or NaNs.");
  return true;
}

/* The eigenvector matrix of real geev (vr, column-major, ld n) as complex
 * columns into out (row-major n x n, interleaved): a real eigenvalue's
 * column as it is, a conjugate pair's (wi[j] > 0, then wi[j + 1] < 0)
 * columns j and j + 1 as vr[:, j] +- i vr[:, j + 1], as ATen's
 * linalg_eig_make_complex_eigenvectors makes them. */
static void la_eig_vectors(const void *vr, const void *wi, bool d, int64_t n, void *out) {
  for (int64_t j = 0; j < n; j++) {
    bool pair = la_get(wi, d, j) != 0 && j + 1 < n;
    for (int64_t r = 0; r < n; r++) {
      double re = la_get(vr, d, r + j * n), im = pair ? la_get(vr, d, r + (j + 1) * n) : 0.0;
      la_set(out, d, 2 * (r * n + j), re);
      la_set(out, d, 2 * (r * n + j) + 1, im);
      if (pair) {
        la_set(out, d, 2 * (r * n + j + 1), re);
        la_set(out, d, 2 * (r * n + j + 1) + 1, -im);
      }
    }
    if (pair) j++;
  }
}

/* One geev call; lwork -1 is the workspace query (a, w, vr may be NULL). */
static void la_geev(ts_dtype dt, char jobvr, ts_la_int n, void *a, void *w, void *wi, void *vr, void *work,
                    ts_la_int lwork, void *rwork, ts_la_int *info) {
  char jobvl = 'N';
  ts_la_int ld = n > 1 ? n : 1, one = 1;
  switch (dt) {
  case TS_DT_FLOAT32: sgeev_(&jobvl, &jobvr, &n, a, &ld, w, wi, NULL, &one, vr, &ld, work, &lwork, info, 1, 1); break;
  case TS_DT_FLOAT64: dgeev_(&jobvl, &jobvr, &n, a, &ld, w, wi, NULL, &one, vr, &ld, work, &lwork, info, 1, 1); break;
  case TS_DT_COMPLEX64:
    cgeev_(&jobvl, &jobvr, &n, a, &ld, w, NULL, &one, vr, &ld, work, &lwork, rwork, info, 1, 1);
    break;
  default: zgeev_(&jobvl, &jobvr, &n, a, &ld, w, NULL, &one, vr, &ld, work, &lwork, rwork, info, 1, 1); break;
  }
}

/* geev of each matrix of A (square, float32/64 or complex64/128; its
 * right eigenvectors when vectors): eigenvalues (*, n) and eigenvectors
 * (*, n, n) (columns; NULL without vectors) in the complex dtype, as
 * LAPACK orders and normalises them (each vector of unit 2-norm, its
 * largest component real). */
static bool la_eig(ts_rt_ctx *c, const ts_rt_tensor *A, bool vectors, ts_rt_tensor **o, const char *api) {
  ts_dtype dt = (ts_dtype)A->dtype;
  bool cplx = dt == TS_DT_COMPLEX64 || dt == TS_DT_COMPLEX128;
  bool d = dt == TS_DT_FLOAT64 || dt == TS_DT_COMPLEX128;
  ts_dtype cdt = d ? TS_DT_COMPLEX128 : TS_DT_COMPLEX64;
  size_t rsz = d ? 8 : 4; /* one real */
  int64_t n = A->sizes[A->ndim - 1];
  la_batch b;
  la_batch_of(&b, A, 2);
  o[0] = la_new(c, cdt, &b, 1, n, 0, false);
  o[1] = !o[0] ? NULL : vectors ? la_new(c, cdt, &b, 2, n, n, false) : NULL;
  if (!o[0] || (vectors && !o[1])) {
    la_release(o, 2);
    return false;
  }
  char jobvr = vectors ? 'V' : 'N';
  ts_la_int in = (ts_la_int)n, lwork = 1, inf = 0;
  int64_t k = cplx ? 2 : 1; /* reals per element */
  void *a = la_scratch(c, n * n * k, rsz);
  void *w = a ? la_scratch(c, 2 * n, rsz) : NULL; /* complex w, or wr then wi */
  void *vr = w ? la_scratch(c, vectors ? n * n * k : 1, rsz) : NULL;
  void *rwork = vr ? la_scratch(c, cplx ? 2 * n : 1, rsz) : NULL;
  /* the workspace query, with real arrays (OpenBLAS's ctrevc3 reads them) */
  double wqd[2] = {0, 0}; /* work[0], complex for c and z */
  float wqf[2] = {0, 0};
  if (rwork && n > 0) {
    la_geev(dt, jobvr, in, a, w, (char *)w + (size_t)n * rsz, vr, d ? (void *)wqd : (void *)wqf, -1, rwork, &inf);
    lwork = (ts_la_int)(d ? wqd[0] : (double)wqf[0]);
    if (lwork < 1) lwork = 1;
  }
  void *work = rwork ? la_scratch(c, (int64_t)lwork * k, rsz) : NULL;
  int32_t *info = work ? la_scratch(c, b.n, sizeof(int32_t)) : NULL;
  bool ok = info != NULL;
  for (int64_t i = 0; ok && i < b.n; i++) {
    inf = 0;
    la_load(A, la_off(A, 2, &b, i), a, n, false);
    if (n > 0) la_geev(dt, jobvr, in, a, w, (char *)w + (size_t)n * rsz, vr, work, lwork, rwork, &inf);
    info[i] = inf;
    char *wo = (char *)ts_rt_tensor_data(o[0]) + (size_t)(i * n * 2) * rsz;
    if (cplx) {
      if (n > 0) memcpy(wo, w, (size_t)(2 * n) * rsz); /* an empty output has no data */
      if (vectors) la_store(o[1], i, vr, n, false);
      continue;
    }
    for (int64_t j = 0; j < n; j++) {
      la_set(wo, d, 2 * j, la_get(w, d, j));
      la_set(wo, d, 2 * j + 1, la_get(w, d, n + j));
    }
    if (vectors)
      la_eig_vectors(vr, (char *)w + (size_t)n * rsz, d, n,
                     (char *)ts_rt_tensor_data(o[1]) + (size_t)(i * n * n * 2) * rsz);
  }
  ok = ok && la_check_info(c, info, b.n, api, A->ndim == 2, LA_ERR_EIG);
  ts_rt_free(a);
  ts_rt_free(w);
  ts_rt_free(vr);
  ts_rt_free(work);
  ts_rt_free(rwork);
  ts_rt_free(info);
  if (!ok) la_release(o, 2);
  return ok;
}

/* The dtypes geev runs on; float16 and bfloat16 get the dispatch's refusal. */
static bool la_eig_dispatch(ts_rt_ctx *c, const ts_rt_tensor *A) {
  ts_dtype dt = (ts_dtype)A->dtype;
  if (dt == TS_DT_FLOAT32 || dt == TS_DT_FLOAT64 || dt == TS_DT_COMPLEX64 || dt == TS_DT_COMPLEX128) return true;
  return ts_rt_fail(c, "\"linalg_eig_out_cpu\" not implemented for '%s'", ts_rt_dtype_name(dt));
}

/* linalg_eig(self) -> (eigenvalues, eigenvectors), complex; checks in
 * ATen's order: the outputs' complex dtype, finite input, square, dispatch */
static bool la_k_eig(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[2];
  if (!ts_rt_arg_tensor(c, call, 0, &A) || la_eig_out_dtype(c, (ts_dtype)A->dtype) == TS_DT_NONE ||
      !la_eig_finite(c, A) || !la_check_square(c, A, "linalg.eig", "A") || !la_eig_dispatch(c, A) ||
      !la_eig(c, A, true, o, "torch.linalg.eig"))
    return false;
  return la_put(call, o, 2);
}

/* linalg_eigvals(self): geev without vectors, and no finiteness check
 * (a NaN input gives what LAPACK makes of it, as in PyTorch) */
static bool la_k_eigvals(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[2];
  if (!ts_rt_arg_tensor(c, call, 0, &A) || la_eig_out_dtype(c, (ts_dtype)A->dtype) == TS_DT_NONE ||
      !la_check_square(c, A, "linalg.eigvals", "A") || !la_eig_dispatch(c, A) ||
      !la_eig(c, A, false, o, "torch.linalg.eigvals"))
    return false;
  return la_put(call, o, 1);
}

/* ------------------------------------------------------------- SVD */

/* gesdd of each matrix: U (*, m, m|k), S (*, k), Vh (*, n|k, n); without
 * uv, U and Vh NULL. An empty matrix gives identity U and Vh (full). */
static bool la_svd(ts_rt_ctx *c, const ts_rt_tensor *A, bool full, bool uv, ts_rt_tensor **o) {
  bool d = A->dtype == TS_DT_FLOAT64;
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n;
  if (!la_dims_ok(c, m, n)) return false;
  int64_t ucols = full ? m : k, vrows = full ? n : k;
  la_batch b;
  la_batch_of(&b, A, 2);
  o[0] = o[2] = NULL;
  o[1] = la_new(c, (ts_dtype)A->dtype, &b, 1, k, 0, false);
  if (o[1] && uv) {
    o[0] = la_new(c, (ts_dtype)A->dtype, &b, 2, m, ucols, true);
    o[2] = o[0] ? la_new(c, (ts_dtype)A->dtype, &b, 2, vrows, n, true) : NULL;
  }
  if (!o[1] || (uv && !o[2])) {
    la_release(o, 3);
    return false;
  }
  size_t esz = d ? 8 : 4;
  if (k == 0) {
    if (uv && full) {
      for (int64_t i = 0; i < b.n; i++) {
        char *u = (char *)ts_rt_tensor_data(o[0]) + (size_t)(i * m * m) * esz;
        char *v = (char *)ts_rt_tensor_data(o[2]) + (size_t)(i * n * n) * esz;
        for (int64_t j = 0; j < m; j++) la_set(u, d, j * (m + 1), 1);
        for (int64_t j = 0; j < n; j++) la_set(v, d, j * (n + 1), 1);
      }
    }
    return true;
  }
  char jobz = !uv ? 'N' : full ? 'A' : 'S';
  int64_t lda = la_max1(m), ldu = la_max1(m), ldvt = la_max1(vrows);
  ts_la_int im = (ts_la_int)m, in = (ts_la_int)n, ilda = (ts_la_int)lda, ildu = (ts_la_int)ldu,
            ildvt = (ts_la_int)ldvt, lwork = -1, inf = 0;
  double wq = 0;
  float wqf = 0;
  if (d)
    dgesdd_(&jobz, &im, &in, NULL, &ilda, NULL, NULL, &ildu, NULL, &ildvt, &wq, &lwork, NULL, &inf, 1);
  else
    sgesdd_(&jobz, &im, &in, NULL, &ilda, NULL, NULL, &ildu, NULL, &ildvt, &wqf, &lwork, NULL, &inf, 1);
  lwork = (ts_la_int)(d ? wq : wqf) + 1;
  void *buf = la_scratch(c, lda * n, esz);
  void *ub = buf ? la_scratch(c, uv ? ldu * ucols : 1, esz) : NULL;
  void *vb = ub ? la_scratch(c, uv ? ldvt * n : 1, esz) : NULL;
  void *work = vb ? la_scratch(c, lwork, esz) : NULL;
  ts_la_int *iwork = work ? la_scratch(c, 8 * k, sizeof(ts_la_int)) : NULL;
  int32_t *info = iwork ? la_scratch(c, b.n, sizeof(int32_t)) : NULL;
  bool ok = info != NULL;
  for (int64_t i = 0; ok && i < b.n; i++) {
    la_load(A, la_off(A, 2, &b, i), buf, lda, false);
    char *s = (char *)ts_rt_tensor_data(o[1]) + (size_t)(i * k) * esz;
    inf = 0;
    if (d)
      dgesdd_(&jobz, &im, &in, buf, &ilda, (double *)s, ub, &ildu, vb, &ildvt, work, &lwork, iwork, &inf, 1);
    else
      sgesdd_(&jobz, &im, &in, buf, &ilda, (float *)s, ub, &ildu, vb, &ildvt, work, &lwork, iwork, &inf, 1);
    info[i] = inf;
    if (uv) {
      la_store(o[0], i, ub, ldu, false);
      la_store(o[2], i, vb, ldvt, false);
    }
  }
  if (ok) ok = la_check_info(c, info, b.n, "linalg.svd", A->ndim == 2, LA_ERR_SVD);
  ts_rt_free(buf);
  ts_rt_free(ub);
  ts_rt_free(vb);
  ts_rt_free(work);
  ts_rt_free(iwork);
  ts_rt_free(info);
  if (!ok) la_release(o, 3);
  return ok;
}

static bool la_svd_checks(ts_rt_ctx *c, const ts_rt_call *call, const ts_rt_tensor *A, int32_t driver_arg) {
  if (!la_check_matrix(c, A, "linalg.svd", "A") || !la_check_float(c, A, "linalg.svd", "linalg_svd_cpu")) return false;
  if (driver_arg >= 0 && call->in[driver_arg].tag != TS_IV_NONE)
    return ts_rt_fail(c, "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER "
                         "backend.");
  return true;
}

/* An empty [0] tensor for the outputs an op does not compute. */
static ts_rt_tensor *la_empty(ts_rt_ctx *c, ts_dtype dt) {
  int64_t zero = 0;
  return ts_rt_tensor_new(c, dt, 1, &zero, false);
}

/* linalg_svd(A, full_matrices, *, driver) -> (U, S, Vh) */
static bool la_k_linalg_svd(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[3];
  bool full;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_bool(c, call, 1, &full) || !ts_rt_arg_check(c, call, 2) ||
      !la_svd_checks(c, call, A, 2) || !la_svd(c, A, full, true, o))
    return false;
  return la_put(call, o, 3);
}

/* _linalg_svd(A, full_matrices, compute_uv, *, driver) */
static bool la_k__svd(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[3];
  bool full, uv;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_bool(c, call, 1, &full) || !ts_rt_arg_bool(c, call, 2, &uv) ||
      !ts_rt_arg_check(c, call, 3) || !la_svd_checks(c, call, A, 3) || !la_svd(c, A, full, uv, o))
    return false;
  if (!uv) {
    o[0] = la_empty(c, (ts_dtype)A->dtype);
    o[2] = o[0] ? la_empty(c, (ts_dtype)A->dtype) : NULL;
    if (!o[2]) {
      la_release(o, 3);
      return false;
    }
  }
  return la_put(call, o, 3);
}

/* linalg_svdvals(A, *, driver) */
static bool la_k_svdvals(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[3];
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_check(c, call, 1) || !la_svd_checks(c, call, A, 1) ||
      !la_svd(c, A, false, false, o))
    return false;
  return la_put(call, &o[1], 1);
}

/* Batch element-wise transpose of a contiguous (*, r, cc) tensor into a new
 * contiguous (*, cc, r) one. */
static ts_rt_tensor *la_transposed(ts_rt_ctx *c, const ts_rt_tensor *t) {
  int64_t r = t->sizes[t->ndim - 2], cc = t->sizes[t->ndim - 1];
  la_batch b;
  la_batch_of(&b, t, 2);
  ts_rt_tensor *o = la_new(c, (ts_dtype)t->dtype, &b, 2, cc, r, false);
  if (!o) return NULL;
  size_t esz = ts_dtype_size((ts_dtype)t->dtype);
  for (int64_t i = 0; i < b.n; i++)
    la_store(o, i, (const char *)ts_rt_tensor_data(t) + (size_t)(i * r * cc) * esz, cc, false);
  return o;
}

/* svd(self, some, compute_uv) -> (U, S, V): V = Vh^T; without compute_uv,
 * U (*, m, m) and V (*, n, n) zeros */
static bool la_k_svd(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[3];
  bool some, uv;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_bool(c, call, 1, &some) || !ts_rt_arg_bool(c, call, 2, &uv))
    return false;
  if (A->ndim < 2)
    return ts_rt_fail(c, "linalg.svd: input should have at least 2 dimensions, but has %d dimensions instead",
                      (int)A->ndim);
  if (!la_svd_checks(c, call, A, -1) || !la_svd(c, A, uv && !some, uv, o)) return false;
  if (!uv) {
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
    la_batch b;
    la_batch_of(&b, A, 2);
    o[0] = la_new(c, (ts_dtype)A->dtype, &b, 2, m, m, true);
    o[2] = o[0] ? la_new(c, (ts_dtype)A->dtype, &b, 2, n, n, true) : NULL;
    if (!o[2]) {
      la_release(o, 3);
      return false;
    }
    return la_put(call, o, 3);
  }
  ts_rt_tensor *v = la_transposed(c, o[2]);
  ts_rt_tensor_release(o[2]);
  o[2] = v;
  if (!v) {
    la_release(o, 2);
    return false;
  }
  return la_put(call, o, 3);
}

/* -------------------------------------------------------------- QR */

static ts_la_int la_geqrf_lwork(bool d, ts_la_int m, ts_la_int n, ts_la_int ld) {
  ts_la_int lwork = -1, inf = 0;
  double wq = 0;
  float wqf = 0;
  if (d)
    dgeqrf_(&m, &n, NULL, &ld, NULL, &wq, &lwork, &inf);
  else
    sgeqrf_(&m, &n, NULL, &ld, NULL, &wqf, &lwork, &inf);
  return (ts_la_int)(d ? wq : wqf) + 1;
}

static ts_la_int la_orgqr_lwork(bool d, ts_la_int m, ts_la_int n, ts_la_int k, ts_la_int ld) {
  ts_la_int lwork = -1, inf = 0;
  double wq = 0;
  float wqf = 0;
  if (d)
    dorgqr_(&m, &n, &k, NULL, &ld, NULL, &wq, &lwork, &inf);
  else
    sorgqr_(&m, &n, &k, NULL, &ld, NULL, &wqf, &lwork, &inf);
  return (ts_la_int)(d ? wq : wqf) + 1;
}

/* geqrf of each matrix: the reflectors and R in a (*, m, n), tau (*, k);
 * with want_q (mode: 0 reduced, 1 complete, 2 r) Q and R as linalg_qr's. */
static bool la_qr(ts_rt_ctx *c, const ts_rt_tensor *A, int mode, bool raw, ts_rt_tensor **o) {
  bool d = A->dtype == TS_DT_FLOAT64;
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n;
  if (!la_dims_ok(c, m, n) || !la_dims_ok(c, m, m)) return false;
  size_t esz = d ? 8 : 4;
  la_batch b;
  la_batch_of(&b, A, 2);
  int64_t qc = mode == 1 ? m : k, rr = mode == 1 ? m : k;
  o[0] = o[1] = NULL;
  if (raw) {
    o[0] = la_new(c, (ts_dtype)A->dtype, &b, 2, m, n, false);
    o[1] = o[0] ? la_new(c, (ts_dtype)A->dtype, &b, 1, k, 0, false) : NULL;
  } else {
    o[0] = mode == 2 ? la_empty(c, (ts_dtype)A->dtype) : la_new(c, (ts_dtype)A->dtype, &b, 2, m, qc, false);
    o[1] = o[0] ? la_new(c, (ts_dtype)A->dtype, &b, 2, rr, n, true) : NULL;
  }
  if (!o[1]) {
    la_release(o, 2);
    return false;
  }
  int64_t ld = la_max1(m);
  ts_la_int im = (ts_la_int)m, in = (ts_la_int)n, ik = (ts_la_int)k, iqc = (ts_la_int)qc, ild = (ts_la_int)ld;
  ts_la_int lw1 = m > 0 && n > 0 ? la_geqrf_lwork(d, im, in, ild) : 1;
  ts_la_int lw2 = !raw && mode != 2 && m > 0 && qc > 0 ? la_orgqr_lwork(d, im, iqc, ik, ild) : 1;
  ts_la_int lwork = lw1 > lw2 ? lw1 : lw2;
  void *buf = la_scratch(c, ld * (n > qc ? n : qc), esz);
  void *tau = buf ? la_scratch(c, k, esz) : NULL;
  void *work = tau ? la_scratch(c, lwork, esz) : NULL;
  if (!work) {
    ts_rt_free(buf);
    ts_rt_free(tau);
    la_release(o, 2);
    return false;
  }
  for (int64_t i = 0; i < b.n; i++) {
    la_load(A, la_off(A, 2, &b, i), buf, ld, false);
    ts_la_int inf = 0;
    if (m > 0 && n > 0) {
      if (d)
        dgeqrf_(&im, &in, buf, &ild, tau, work, &lw1, &inf);
      else
        sgeqrf_(&im, &in, buf, &ild, tau, work, &lw1, &inf);
    }
    if (raw) {
      la_store(o[0], i, buf, ld, false);
      if (k > 0) memcpy((char *)ts_rt_tensor_data(o[1]) + (size_t)(i * k) * esz, tau, (size_t)k * esz);
      continue;
    }
    /* R: the upper triangle of the first rr rows */
    char *R = (char *)ts_rt_tensor_data(o[1]) + (size_t)(i * rr * n) * esz;
    for (int64_t r = 0; r < rr && r < m; r++)
      for (int64_t j = r; j < n; j++) la_set(R, d, r * n + j, la_get(buf, d, r + j * ld));
    if (mode == 2) continue;
    if (m > 0 && qc > 0) {
      if (d)
        dorgqr_(&im, &iqc, &ik, buf, &ild, tau, work, &lw2, &inf);
      else
        sorgqr_(&im, &iqc, &ik, buf, &ild, tau, work, &lw2, &inf);
    }
    la_store(o[0], i, buf, ld, false);
  }
  ts_rt_free(buf);
  ts_rt_free(tau);
  ts_rt_free(work);
  return true;
}

/* linalg_qr(A, mode) -> (Q, R) */
static bool la_k_linalg_qr(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[2];
  const ts_rt_str *s;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_str(c, call, 1, &s)) return false;
  int mode = -1;
  if (s->len == 7 && !memcmp(s->data, "reduced", 7)) mode = 0;
  if (s->len == 8 && !memcmp(s->data, "complete", 8)) mode = 1;
  if (s->len == 1 && s->data[0] == 'r') mode = 2;
  if (!la_check_matrix(c, A, "linalg.qr", "A") || !la_check_float(c, A, "linalg.qr", "linalg_qr_cpu")) return false;
  if (mode < 0)
    return ts_rt_fail(c, "qr received unrecognized mode '%.*s' but expected one of 'reduced' (default), 'r', or "
                         "'complete'",
                      (int)s->len, s->data);
  if (!la_qr(c, A, mode, false, o)) return false;
  return la_put(call, o, 2);
}

/* qr(self, some): linalg_qr reduced, or complete */
static bool la_k_qr(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[2];
  bool some;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_bool(c, call, 1, &some)) return false;
  if (!la_check_matrix(c, A, "linalg.qr", "A") || !la_check_float(c, A, "linalg.qr", "linalg_qr_cpu") ||
      !la_qr(c, A, some ? 0 : 1, false, o))
    return false;
  return la_put(call, o, 2);
}

/* geqrf(self) -> (a, tau) */
static bool la_k_geqrf(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[2];
  if (!ts_rt_arg_tensor(c, call, 0, &A)) return false;
  if (A->ndim < 2) return ts_rt_fail(c, "torch.geqrf: input must have at least 2 dimensions.");
  if (!la_check_dispatch(c, A, "geqrf_cpu") || !la_qr(c, A, 0, true, o)) return false;
  return la_put(call, o, 2);
}

/* linalg_householder_product(input, tau) and orgqr(self, input2): orgqr
 * over the first tau.size(-1) reflectors */
static bool la_k_householder(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *tau;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_tensor(c, call, 1, &tau)) return false;
  const char *fn = "torch.linalg.householder_product";
  if (A->ndim < 2) return ts_rt_fail(c, "%s: input must have at least 2 dimensions.", fn);
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
  if (m < n) return ts_rt_fail(c, "%s: input.shape[-2] must be greater than or equal to input.shape[-1]", fn);
  if (tau->ndim < 1 || n < tau->sizes[tau->ndim - 1])
    return ts_rt_fail(c, "%s: input.shape[-1] must be greater than or equal to tau.shape[-1]", fn);
  if (tau->ndim != A->ndim - 1)
    return ts_rt_fail(c, "%s: Expected tau to have one dimension less than input, but got tau.ndim equal to %d and "
                         "input.ndim is equal to %d",
                      fn, (int)tau->ndim, (int)A->ndim);
  for (int32_t i = 0; i < A->ndim - 2; i++)
    if (tau->sizes[i] != A->sizes[i])
      return ts_rt_fail(c, "%s: Expected batch dimensions of tau to be equal to input.shape[:-2], but got %lld", fn,
                        (long long)tau->sizes[i]);
  if (tau->dtype != A->dtype)
    return ts_rt_fail(c, "%s: tau dtype %s does not match input dtype %s", fn, ts_rt_dtype_name((ts_dtype)tau->dtype),
                      ts_rt_dtype_name((ts_dtype)A->dtype));
  if (!la_check_dispatch(c, A, "orgqr_cpu") || !la_dims_ok(c, m, n)) return false;
  bool d = A->dtype == TS_DT_FLOAT64;
  size_t esz = d ? 8 : 4;
  int64_t k = tau->sizes[tau->ndim - 1], ld = la_max1(m);
  la_batch b;
  la_batch_of(&b, A, 2);
  ts_rt_tensor *Q = la_new(c, (ts_dtype)A->dtype, &b, 2, m, n, false);
  ts_la_int im = (ts_la_int)m, in = (ts_la_int)n, ik = (ts_la_int)k, ild = (ts_la_int)ld;
  ts_la_int lwork = m > 0 && n > 0 ? la_orgqr_lwork(d, im, in, ik, ild) : 1;
  void *buf = Q ? la_scratch(c, ld * n, esz) : NULL;
  void *tb = buf ? la_scratch(c, k, esz) : NULL;
  void *work = tb ? la_scratch(c, lwork, esz) : NULL;
  if (!work) {
    ts_rt_free(buf);
    ts_rt_free(tb);
    if (Q) ts_rt_tensor_release(Q);
    return false;
  }
  const char *tp = tau->storage->data;
  int64_t ts = tau->strides[tau->ndim - 1];
  for (int64_t i = 0; i < b.n; i++) {
    la_load(A, la_off(A, 2, &b, i), buf, ld, false);
    int64_t to = la_off(tau, 1, &b, i);
    for (int64_t j = 0; j < k; j++) memcpy((char *)tb + (size_t)j * esz, tp + (size_t)(to + j * ts) * esz, esz);
    ts_la_int inf = 0;
    if (m > 0 && n > 0) {
      if (d)
        dorgqr_(&im, &in, &ik, buf, &ild, tb, work, &lwork, &inf);
      else
        sorgqr_(&im, &in, &ik, buf, &ild, tb, work, &lwork, &inf);
    }
    la_store(Q, i, buf, ld, false);
  }
  ts_rt_free(buf);
  ts_rt_free(tb);
  ts_rt_free(work);
  return la_put(call, &Q, 1);
}

/* ormqr(self, input2, input3, left, transpose): op(Q) C or C op(Q), Q given
 * by the reflectors in self and tau input2 */
static bool la_k_ormqr(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *tau, *C;
  bool left, trans;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_tensor(c, call, 1, &tau) || !ts_rt_arg_tensor(c, call, 2, &C) ||
      !ts_rt_arg_bool(c, call, 3, &left) || !ts_rt_arg_bool(c, call, 4, &trans))
    return false;
  const char *fn = "torch.ormqr";
  if (A->ndim < 2) return ts_rt_fail(c, "%s: input must have at least 2 dimensions.", fn);
  if (C->ndim < 2) return ts_rt_fail(c, "%s: other must have at least 2 dimensions.", fn);
  int64_t lr = left ? C->sizes[C->ndim - 2] : C->sizes[C->ndim - 1];
  if (lr != A->sizes[A->ndim - 2])
    return ts_rt_fail(c, "%s: other.shape[%d] must be equal to input.shape[-2]", fn, left ? -2 : -1);
  if (tau->ndim < 1 || tau->sizes[tau->ndim - 1] > lr)
    return ts_rt_fail(c, "%s: tau.shape[-1] must be less than or equal to other.shape[%d]", fn, left ? -2 : -1);
  if (tau->ndim != A->ndim - 1 || C->ndim != A->ndim)
    return ts_rt_fail(c, "%s: Expected tau to have one dimension less than input and other to have the same number "
                         "of dimensions as input",
                      fn);
  for (int32_t i = 0; i < A->ndim - 2; i++)
    if (tau->sizes[i] != A->sizes[i] || C->sizes[i] != A->sizes[i])
      return ts_rt_fail(c, "%s: Expected batch dimensions of tau and other to be equal to input.shape[:-2]", fn);
  if (tau->dtype != A->dtype || C->dtype != A->dtype)
    return ts_rt_fail(c, "%s: Expected input, tau and other to have the same dtype", fn);
  if (!la_check_dispatch(c, A, "ormqr_cpu")) return false;
  bool d = A->dtype == TS_DT_FLOAT64;
  size_t esz = d ? 8 : 4;
  int64_t am = A->sizes[A->ndim - 2], an = A->sizes[A->ndim - 1], k = tau->sizes[tau->ndim - 1];
  int64_t m = C->sizes[C->ndim - 2], n = C->sizes[C->ndim - 1], lda = la_max1(am), ldc = la_max1(m);
  if (!la_dims_ok(c, am, an) || !la_dims_ok(c, m, n)) return false;
  la_batch b;
  la_batch_of(&b, C, 2);
  ts_rt_tensor *X = la_new(c, (ts_dtype)C->dtype, &b, 2, m, n, false);
  char side = left ? 'L' : 'R', tr = trans ? 'T' : 'N';
  ts_la_int im = (ts_la_int)m, in = (ts_la_int)n, ik = (ts_la_int)k, ilda = (ts_la_int)lda, ildc = (ts_la_int)ldc,
            lwork = -1, inf = 0;
  double wq = 1;
  float wqf = 1;
  if (m > 0 && n > 0 && k > 0) {
    if (d)
      dormqr_(&side, &tr, &im, &in, &ik, NULL, &ilda, NULL, NULL, &ildc, &wq, &lwork, &inf, 1, 1);
    else
      sormqr_(&side, &tr, &im, &in, &ik, NULL, &ilda, NULL, NULL, &ildc, &wqf, &lwork, &inf, 1, 1);
  }
  lwork = (ts_la_int)(d ? wq : wqf) + 1;
  void *ab = X ? la_scratch(c, lda * an, esz) : NULL;
  void *tb = ab ? la_scratch(c, k, esz) : NULL;
  void *cb = tb ? la_scratch(c, ldc * n, esz) : NULL;
  void *work = cb ? la_scratch(c, lwork, esz) : NULL;
  if (!work) {
    ts_rt_free(ab);
    ts_rt_free(tb);
    ts_rt_free(cb);
    if (X) ts_rt_tensor_release(X);
    return false;
  }
  const char *tp = tau->storage->data;
  int64_t ts = tau->strides[tau->ndim - 1];
  for (int64_t i = 0; i < b.n; i++) {
    la_load(A, la_off(A, 2, &b, i), ab, lda, false);
    la_load(C, la_off(C, 2, &b, i), cb, ldc, false);
    int64_t to = la_off(tau, 1, &b, i);
    for (int64_t j = 0; j < k; j++) memcpy((char *)tb + (size_t)j * esz, tp + (size_t)(to + j * ts) * esz, esz);
    if (m > 0 && n > 0 && k > 0) {
      if (d)
        dormqr_(&side, &tr, &im, &in, &ik, ab, &ilda, tb, cb, &ildc, work, &lwork, &inf, 1, 1);
      else
        sormqr_(&side, &tr, &im, &in, &ik, ab, &ilda, tb, cb, &ildc, work, &lwork, &inf, 1, 1);
    }
    la_store(X, i, cb, ldc, false);
  }
  ts_rt_free(ab);
  ts_rt_free(tb);
  ts_rt_free(cb);
  ts_rt_free(work);
  return la_put(call, &X, 1);
}

/* ------------------------------------------ pinv, matrix_rank, cond */

/* The atol and rtol of ATen's get_atol_rtol, per batch element: each a
 * number, a tensor broadcast over the batch, or absent (atol 0; rtol
 * eps * max(m, n), or 0 where atol > 0 was given). */
typedef struct la_tol {
  bool has_atol, has_rtol;
  double atol, rtol;
  const ts_rt_tensor *atol_t, *rtol_t;
} la_tol;

/* Reads a tolerance argument: None, a number or a tensor. */
static bool la_tol_arg(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i, bool *has, double *v, const ts_rt_tensor **t) {
  if (!ts_rt_arg_check(c, call, i)) return false;
  ts_iv a = call->in[i];
  *has = a.tag != TS_IV_NONE;
  *t = NULL;
  if (a.tag == TS_IV_TENSOR) {
    *t = a.u.t;
    if (!ts_rt_dtype_is_float((ts_dtype)(*t)->dtype) && (*t)->dtype != TS_DT_INT64 && (*t)->dtype != TS_DT_INT32)
      return ts_rt_fail(c, "tolerance of dtype %s is not supported", ts_rt_dtype_name((ts_dtype)(*t)->dtype));
    return true;
  }
  return !*has || ts_rt_arg_double(c, call, i, v);
}

/* A tolerance tensor must broadcast to the batch b (the result keeps b). */
static bool la_tol_fits(ts_rt_ctx *c, const ts_rt_tensor *t, const la_batch *b) {
  if (!t) return true;
  bool ok = t->ndim <= b->nd;
  for (int32_t k = 0; ok && k < t->ndim; k++) {
    int64_t s = t->sizes[t->ndim - 1 - k], bs = b->s[b->nd - 1 - k];
    ok = s == 1 || s == bs;
  }
  if (!ok) return ts_rt_fail(c, "linalg: a tolerance tensor must broadcast to the batch dimensions of the input");
  return true;
}

static double la_tol_at(const ts_rt_tensor *t, const la_batch *b, int64_t i) {
  return ts_rt_load_f64((const char *)t->storage->data + (size_t)la_off(t, 0, b, i) * ts_dtype_size((ts_dtype)t->dtype),
                        (ts_dtype)t->dtype);
}

/* max(atol, rtol * maxv) for batch element i */
static double la_tol_value(const la_tol *tl, const la_batch *b, int64_t i, double eps_mn, double maxv) {
  double atol = tl->atol_t ? la_tol_at(tl->atol_t, b, i) : tl->has_atol ? tl->atol : 0;
  double rtol;
  if (tl->has_rtol)
    rtol = tl->rtol_t ? la_tol_at(tl->rtol_t, b, i) : tl->rtol;
  else
    rtol = tl->has_atol && atol > 0 ? 0 : eps_mn;
  double r = rtol * maxv;
  return atol > r || isnan(atol) ? atol : r;
}

static double la_eps(bool d, int64_t m, int64_t n) {
  return (d ? 2.220446049250313e-16 : 1.1920928955078125e-07) * (double)(m > n ? m : n);
}

/* pinv through the SVD (or eigh when hermitian): V diag(1/S) U^T over the
 * singular values above the tolerance, the product by matmul */
static ts_rt_tensor *la_pinv(ts_rt_ctx *c, const ts_rt_tensor *A, const la_tol *tl, bool herm) {
  ts_dtype dt = (ts_dtype)A->dtype;
  if (A->ndim < 2 || (dt != TS_DT_FLOAT32 && dt != TS_DT_FLOAT64)) {
    char shape[256];
    la_shape_str(shape, sizeof shape, A);
    const char *nm = dt == TS_DT_FLOAT32 ? "Float" : dt == TS_DT_FLOAT64 ? "Double" : ts_rt_dtype_name(dt);
    ts_rt_fail(c,
               "linalg.pinv(%s{%s}): expected a tensor with 2 or more dimensions of float, double, cfloat or cdouble "
               "types",
               nm, shape);
    return NULL;
  }
  bool d = dt == TS_DT_FLOAT64;
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
  la_batch b;
  la_batch_of(&b, A, 2);
  if (!la_tol_fits(c, tl->atol_t, &b) || !la_tol_fits(c, tl->rtol_t, &b)) return NULL;
  if (ts_rt_tensor_numel(A) == 0) return la_new(c, dt, &b, 2, n, m, true);
  if (herm && !la_check_square(c, A, "linalg.eigh", "A")) return NULL;
  ts_rt_tensor *f[3] = {NULL, NULL, NULL};
  int64_t k;
  if (herm) {
    if (!la_eigh(c, A, 'L', true, f, "linalg.eigh")) return NULL;
    /* f[0] values, f[1] vectors: as (U, S) */
    ts_rt_tensor *t = f[0];
    f[0] = f[1];
    f[1] = t;
    k = n;
  } else {
    if (!la_svd(c, A, false, true, f)) return NULL;
    k = m < n ? m : n;
  }
  /* X = V diag(S+) (n x k), Ut = U^T (k x m) */
  ts_rt_tensor *X = la_new(c, dt, &b, 2, n, k, false);
  ts_rt_tensor *Ut = X ? la_new(c, dt, &b, 2, k, herm ? n : m, false) : NULL;
  ts_rt_tensor *r = NULL;
  if (Ut) {
    const void *U = ts_rt_tensor_data(f[0]), *S = ts_rt_tensor_data(f[1]), *V = herm ? U : ts_rt_tensor_data(f[2]);
    void *xp = ts_rt_tensor_data(X), *up = ts_rt_tensor_data(Ut);
    int64_t um = herm ? n : m;
    double eps = la_eps(d, m, n);
    for (int64_t i = 0; i < b.n; i++) {
      const int64_t so = i * k;
      /* the largest: S[0] (descending singular values), or max |eigenvalue| */
      double maxv = la_get(S, d, so);
      if (herm) {
        maxv = 0;
        for (int64_t j = 0; j < k; j++) {
          double s = fabs(la_get(S, d, so + j));
          if (j == 0 || s > maxv || isnan(s)) maxv = s;
          if (isnan(s)) break;
        }
      }
      double tol = la_tol_value(tl, &b, i, eps, maxv);
      for (int64_t j = 0; j < k; j++) {
        double s = la_get(S, d, so + j), sp = 0;
        if ((herm ? fabs(s) : s) > tol) sp = d ? 1.0 / s : (double)(1.0f / (float)s);
        for (int64_t r2 = 0; r2 < n; r2++) {
          /* V[r2][j]: Vh[j][r2] (svd) or U[r2][j] (eigh) */
          double v = herm ? la_get(V, d, i * n * n + r2 * n + j) : la_get(V, d, i * k * n + j * n + r2);
          la_set(xp, d, i * n * k + r2 * k + j, d ? v * sp : (double)((float)v * (float)sp));
        }
        for (int64_t r2 = 0; r2 < um; r2++) la_set(up, d, i * k * um + j * um + r2, la_get(U, d, i * um * k + r2 * k + j));
      }
    }
    r = ts_rt_matmul(c, X, Ut);
  }
  if (X) ts_rt_tensor_release(X);
  if (Ut) ts_rt_tensor_release(Ut);
  la_release(f, herm ? 2 : 3);
  return r;
}

/* linalg_pinv(self, float rcond, hermitian): atol 0, rtol rcond */
static bool la_k_pinv_rcond(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A;
  la_tol tl = {.has_atol = true, .has_rtol = true};
  bool herm;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_double(c, call, 1, &tl.rtol) || !ts_rt_arg_bool(c, call, 2, &herm))
    return false;
  ts_rt_tensor *r = la_pinv(c, A, &tl, herm);
  return r && la_put(call, &r, 1);
}

/* linalg_pinv.rcond_tensor(self, Tensor rcond, hermitian) */
static bool la_k_pinv_rcond_t(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A;
  la_tol tl = {.has_atol = true, .has_rtol = true};
  bool herm;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !la_tol_arg(c, call, 1, &tl.has_rtol, &tl.rtol, &tl.rtol_t) ||
      !ts_rt_arg_bool(c, call, 2, &herm))
    return false;
  ts_rt_tensor *r = la_pinv(c, A, &tl, herm);
  return r && la_put(call, &r, 1);
}

/* linalg_pinv.atol_rtol_float / atol_rtol_tensor(self, *, atol, rtol, hermitian) */
static bool la_k_pinv_atol_rtol(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A;
  la_tol tl = {0};
  bool herm;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !la_tol_arg(c, call, 1, &tl.has_atol, &tl.atol, &tl.atol_t) ||
      !la_tol_arg(c, call, 2, &tl.has_rtol, &tl.rtol, &tl.rtol_t) || !ts_rt_arg_bool(c, call, 3, &herm))
    return false;
  ts_rt_tensor *r = la_pinv(c, A, &tl, herm);
  return r && la_put(call, &r, 1);
}

/* pinverse(self, rcond) */
static bool la_k_pinverse(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A;
  la_tol tl = {.has_atol = true, .has_rtol = true};
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_double(c, call, 1, &tl.rtol)) return false;
  ts_rt_tensor *r = la_pinv(c, A, &tl, false);
  return r && la_put(call, &r, 1);
}

/* matrix_rank: how many singular values (|eigenvalues| when hermitian)
 * exceed max(atol, rtol * max(S)); 0 for an empty input; int64 (*) */
static ts_rt_tensor *la_rank(ts_rt_ctx *c, const ts_rt_tensor *A, const la_tol *tl, bool herm) {
  const char *fn = "torch.linalg.matrix_rank";
  if (!la_check_matrix(c, A, fn, "input")) return NULL;
  if (A->dtype != TS_DT_FLOAT32 && A->dtype != TS_DT_FLOAT64) {
    ts_rt_fail(c, "This function doesn't handle types other than float and double");
    return NULL;
  }
  bool d = A->dtype == TS_DT_FLOAT64;
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
  la_batch b;
  la_batch_of(&b, A, 2);
  if (!la_tol_fits(c, tl->atol_t, &b) || !la_tol_fits(c, tl->rtol_t, &b)) return NULL;
  ts_rt_tensor *r = la_new(c, TS_DT_INT64, &b, 0, 0, 0, true);
  if (!r || ts_rt_tensor_numel(A) == 0) return r;
  ts_rt_tensor *f[3] = {NULL, NULL, NULL}, *S;
  int64_t k;
  if (herm) {
    if (!la_check_square(c, A, "linalg.eigh", "A") || !la_check_dispatch(c, A, "linalg_eigh_cpu") ||
        !la_eigh(c, A, 'L', false, f, "linalg.eigh")) {
      ts_rt_tensor_release(r);
      return NULL;
    }
    S = f[0];
    k = n;
  } else {
    if (!la_svd(c, A, false, false, f)) {
      ts_rt_tensor_release(r);
      return NULL;
    }
    S = f[1];
    k = m < n ? m : n;
  }
  const void *sp = ts_rt_tensor_data(S);
  int64_t *rp = ts_rt_tensor_data(r);
  double eps = la_eps(d, m, n);
  for (int64_t i = 0; i < b.n; i++) {
    double maxv = 0;
    for (int64_t j = 0; j < k; j++) {
      double s = fabs(la_get(sp, d, i * k + j));
      if (j == 0 || s > maxv || isnan(s)) maxv = s;
      if (!herm) break; /* descending: the first is the largest */
    }
    double tol = la_tol_value(tl, &b, i, eps, maxv);
    int64_t cnt = 0;
    for (int64_t j = 0; j < k; j++) cnt += fabs(la_get(sp, d, i * k + j)) > tol;
    rp[i] = cnt;
  }
  la_release(f, 3);
  return r;
}

/* linalg_matrix_rank(self, float tol, hermitian) and .tol_tensor: atol tol, rtol 0 */
static bool la_k_rank_tol(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A;
  la_tol tl = {.has_rtol = true};
  bool herm;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !la_tol_arg(c, call, 1, &tl.has_atol, &tl.atol, &tl.atol_t) ||
      !ts_rt_arg_bool(c, call, 2, &herm))
    return false;
  ts_rt_tensor *r = la_rank(c, A, &tl, herm);
  return r && la_put(call, &r, 1);
}

/* linalg_matrix_rank.atol_rtol_float / atol_rtol_tensor */
static bool la_k_rank_atol_rtol(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A;
  la_tol tl = {0};
  bool herm;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !la_tol_arg(c, call, 1, &tl.has_atol, &tl.atol, &tl.atol_t) ||
      !la_tol_arg(c, call, 2, &tl.has_rtol, &tl.rtol, &tl.rtol_t) || !ts_rt_arg_bool(c, call, 3, &herm))
    return false;
  ts_rt_tensor *r = la_rank(c, A, &tl, herm);
  return r && la_put(call, &r, 1);
}

/* A matrix norm of each (n x n) matrix of buf (contiguous batch): ord 1,
 * -1 (column sums), inf, -inf (row sums), 'f' fro, 'n' nuc (singular
 * values from s) */
static double la_mat_norm(const void *p, bool d, int64_t n, double ord, char kind, const void *s) {
  if (kind == 'f') {
    double acc = 0;
    for (int64_t j = 0; j < n * n; j++) acc += la_get(p, d, j) * la_get(p, d, j);
    return sqrt(acc);
  }
  if (kind == 'n') {
    double acc = 0;
    for (int64_t j = 0; j < n; j++) acc += la_get(s, d, j);
    return acc;
  }
  bool cols = fabs(ord) == 1, mx = ord > 0;
  double best = 0;
  for (int64_t a = 0; a < n; a++) {
    double sum = 0;
    for (int64_t j = 0; j < n; j++) sum += fabs(la_get(p, d, cols ? j * n + a : a * n + j));
    if (a == 0 || (mx ? sum > best : sum < best) || isnan(sum)) best = sum;
  }
  return best;
}

/* cond with ord ±1, ±inf, 'fro', 'nuc': norm(A) * norm(inv(A)), inf where
 * A is singular */
static ts_rt_tensor *la_cond_inv(ts_rt_ctx *c, const ts_rt_tensor *A, double ord, char kind, const char *fn) {
  if (!la_check_square(c, A, fn, "A")) return NULL;
  bool d = A->dtype == TS_DT_FLOAT64;
  int64_t n = A->sizes[A->ndim - 1];
  la_batch b;
  la_batch_of(&b, A, 2);
  ts_rt_tensor *iv[2];
  if (!la_inv(c, A, "linalg.inv", iv)) return NULL;
  ts_rt_tensor *Ac = ts_rt_tensor_contiguous(c, (ts_rt_tensor *)A);
  ts_rt_tensor *sa[3] = {NULL, NULL, NULL}, *si[3] = {NULL, NULL, NULL};
  bool ok = Ac != NULL;
  if (ok && kind == 'n') ok = la_svd(c, Ac, false, false, sa) && la_svd(c, iv[0], false, false, si);
  ts_rt_tensor *r = ok ? la_new(c, (ts_dtype)A->dtype, &b, 0, 0, 0, false) : NULL;
  if (r) {
    const int32_t *info = ts_rt_tensor_data(iv[1]);
    size_t esz = d ? 8 : 4;
    for (int64_t i = 0; i < b.n; i++) {
      const char *ap = (const char *)ts_rt_tensor_data(Ac) + (size_t)(i * n * n) * esz;
      const char *ip = (const char *)ts_rt_tensor_data(iv[0]) + (size_t)(i * n * n) * esz;
      const char *s1 = kind == 'n' ? (const char *)ts_rt_tensor_data(sa[1]) + (size_t)(i * n) * esz : NULL;
      const char *s2 = kind == 'n' ? (const char *)ts_rt_tensor_data(si[1]) + (size_t)(i * n) * esz : NULL;
      double v = info[i] > 0 ? INFINITY : la_mat_norm(ap, d, n, ord, kind, s1) * la_mat_norm(ip, d, n, ord, kind, s2);
      la_set(ts_rt_tensor_data(r), d, i, v);
    }
  }
  if (Ac) ts_rt_tensor_release(Ac);
  la_release(iv, 2);
  la_release(sa, 3);
  la_release(si, 3);
  return r;
}

/* cond with ord 2 / -2 (None): the ratio of the extreme singular values */
static ts_rt_tensor *la_cond2(ts_rt_ctx *c, const ts_rt_tensor *A, bool neg) {
  if (!la_check_float(c, A, "linalg.svd", "linalg_svd_cpu")) return NULL;
  ts_rt_tensor *f[3];
  if (!la_svd(c, A, false, false, f)) return NULL;
  bool d = A->dtype == TS_DT_FLOAT64;
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n;
  la_batch b;
  la_batch_of(&b, A, 2);
  ts_rt_tensor *r = la_new(c, (ts_dtype)A->dtype, &b, 0, 0, 0, false);
  if (r) {
    const void *s = ts_rt_tensor_data(f[1]);
    for (int64_t i = 0; i < b.n; i++) {
      double hi = la_get(s, d, i * k), lo = la_get(s, d, i * k + k - 1);
      la_set(ts_rt_tensor_data(r), d, i, d ? (neg ? lo / hi : hi / lo) : (double)(neg ? (float)lo / (float)hi
                                                                                    : (float)hi / (float)lo));
    }
  }
  la_release(f, 3);
  return r;
}

static ts_rt_tensor *la_cond(ts_rt_ctx *c, const ts_rt_tensor *A, bool none, double ord, char kind, bool ord_double) {
  if (A->ndim < 2) {
    ts_rt_fail(c, "linalg.cond: The input tensor must have at least 2 dimensions.");
    return NULL;
  }
  if (kind == 0 && !none && !(fabs(ord) == 2 || fabs(ord) == 1 || isinf(ord))) {
    ts_rt_fail(c, "linalg.cond got an invalid norm type: %g", ord);
    return NULL;
  }
  la_batch b;
  la_batch_of(&b, A, 2);
  if (ts_rt_tensor_numel(A) == 0) {
    ts_dtype dt = (ts_dtype)A->dtype;
    return la_new(c, dt == TS_DT_FLOAT64 ? dt : TS_DT_FLOAT32, &b, 0, 0, 0, true);
  }
  if (kind == 0 && (none || fabs(ord) == 2)) return la_cond2(c, A, !none && ord < 0);
  char name[64];
  if (kind == 'f' || kind == 'n')
    snprintf(name, sizeof name, "linalg.cond(ord=%s)", kind == 'f' ? "fro" : "nuc");
  else if (ord_double) /* std::to_string of the Scalar as given: "1.000000", "inf" */
    snprintf(name, sizeof name, "linalg.cond(ord=%f)", ord);
  else
    snprintf(name, sizeof name, "linalg.cond(ord=%lld)", (long long)ord);
  if (!la_check_float(c, A, "linalg.inv", "linalg_solve_cpu")) return NULL;
  return la_cond_inv(c, A, ord, kind, name);
}

/* linalg_cond(self, Scalar? p) */
static bool la_k_cond(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_check(c, call, 1)) return false;
  bool none = call->in[1].tag == TS_IV_NONE;
  double ord = 2;
  if (!none && !ts_rt_arg_double(c, call, 1, &ord)) return false;
  ts_rt_tensor *r = la_cond(c, A, none, ord, 0, call->in[1].tag == TS_IV_DOUBLE);
  return r && la_put(call, &r, 1);
}

/* linalg_cond.p_str(self, str p): 'fro' or 'nuc' */
static bool la_k_cond_str(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A;
  const ts_rt_str *s;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_str(c, call, 1, &s)) return false;
  char kind = 0;
  if (s->len == 3 && !memcmp(s->data, "fro", 3)) kind = 'f';
  if (s->len == 3 && !memcmp(s->data, "nuc", 3)) kind = 'n';
  if (!kind) return ts_rt_fail(c, "linalg.cond got an invalid norm type: %.*s", (int)s->len, s->data);
  ts_rt_tensor *r = la_cond(c, A, false, 0, kind, false);
  return r && la_put(call, &r, 1);
}

/* ------------------------------------------ tensorinv, tensorsolve */

/* A contiguous copy (or t itself) viewed with new sizes (same numel). */
static ts_rt_tensor *la_reshape(ts_rt_ctx *c, ts_rt_tensor *t, int32_t nd, const int64_t *sizes) {
  ts_rt_tensor *ct = ts_rt_tensor_contiguous(c, t);
  if (!ct) return NULL;
  int64_t strides[TS_RT_MAX_DIMS];
  ts_rt_strides_contiguous(nd, sizes, strides);
  ts_rt_tensor *v = ts_rt_tensor_view(c, ct, ct->offset, nd, sizes, strides);
  ts_rt_tensor_release(ct);
  return v;
}

static bool la_prod(ts_rt_ctx *c, const int64_t *s, int32_t n, int64_t *out) {
  int64_t p = 1;
  for (int32_t i = 0; i < n; i++) {
    if (s[i] != 0 && p > INT64_MAX / s[i]) return ts_rt_fail(c, "linalg: size overflow");
    p *= s[i];
  }
  *out = p;
  return true;
}

/* linalg_tensorinv(self, ind): inv of self as (prod(shape[:ind]), prod(shape[ind:])),
 * shaped shape[ind:] + shape[:ind] */
static bool la_k_tensorinv(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A;
  int64_t ind;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_int(c, call, 1, &ind)) return false;
  if (ind <= 0) return ts_rt_fail(c, "Expected a strictly positive integer for 'ind', but got %lld", (long long)ind);
  if (ind > A->ndim) ind = A->ndim;
  int64_t p1 = 0, p2 = 0;
  if (!la_prod(c, A->sizes + ind, A->ndim - (int32_t)ind, &p1) || !la_prod(c, A->sizes, (int32_t)ind, &p2)) return false;
  if (p1 != p2)
    return ts_rt_fail(c,
                      "Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), but "
                      "got %lld != %lld",
                      (long long)p1, (long long)p2);
  int64_t sq[2] = {p1, p1};
  ts_rt_tensor *M = la_reshape(c, A, 2, sq), *o[2];
  if (!M) return false;
  bool ok = la_inv(c, M, "linalg.inv", o);
  ts_rt_tensor_release(M);
  if (!ok) return false;
  ok = la_check_info(c, ts_rt_tensor_data(o[1]), 1, "inv", true, LA_ERR_INV);
  ts_rt_tensor_release(o[1]);
  int64_t sizes[TS_RT_MAX_DIMS];
  int32_t nd = 0;
  for (int32_t i = (int32_t)ind; i < A->ndim; i++) sizes[nd++] = A->sizes[i];
  for (int32_t i = 0; i < ind; i++) sizes[nd++] = A->sizes[i];
  ts_rt_tensor *r = ok ? la_reshape(c, o[0], nd, sizes) : NULL;
  ts_rt_tensor_release(o[0]);
  return r && la_put(call, &r, 1);
}

/* linalg_tensorsolve(self, other, dims): self with dims moved to the end,
 * as a (prod(other.shape), prod(rest)) matrix, solved against other
 * flattened, shaped self.shape[other.ndim:] */
static bool la_k_tensorsolve(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *B;
  int64_t dims[TS_RT_MAX_DIMS];
  uint32_t ndims = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_tensor(c, call, 1, &B) || !ts_rt_arg_check(c, call, 2)) return false;
  if (call->in[2].tag != TS_IV_NONE && !ts_rt_arg_ints(c, call, 2, dims, TS_RT_MAX_DIMS, &ndims, 0)) return false;
  int32_t nd = A->ndim;
  int64_t perm[TS_RT_MAX_DIMS];
  bool used[TS_RT_MAX_DIMS] = {false};
  if ((int32_t)ndims > nd) return ts_rt_fail(c, "movedim: Invalid source or destination dims");
  for (uint32_t i = 0; i < ndims; i++) {
    int64_t w = 0;
    if (!ts_rt_wrap_dim(c, dims[i], nd, &w)) return false;
    if (used[w]) return ts_rt_fail(c, "movedim: repeated dim in `source` ([%lld])", (long long)dims[i]);
    used[w] = true;
    perm[nd - (int32_t)ndims + (int32_t)i] = w;
  }
  for (int32_t i = 0, j = 0; i < nd; i++)
    if (!used[i]) perm[j++] = i;
  int64_t sizes[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS];
  for (int32_t i = 0; i < nd; i++) {
    sizes[i] = A->sizes[perm[i]];
    strides[i] = A->strides[perm[i]];
  }
  int32_t bn = B->ndim < nd ? B->ndim : nd;
  int64_t rp = 0, op = 0;
  if (!la_prod(c, sizes + bn, nd - bn, &rp) || !la_prod(c, B->sizes, B->ndim, &op)) return false;
  if (rp != op)
    return ts_rt_fail(c,
                      "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                      "prod(self.shape[:other.ndim]), but got %lld != %lld",
                      (long long)rp, (long long)op);
  ts_rt_tensor *P = ts_rt_tensor_view(c, A, A->offset, nd, sizes, strides);
  int64_t sq[2] = {rp, rp};
  ts_rt_tensor *M = P ? la_reshape(c, P, 2, sq) : NULL;
  ts_rt_tensor *v = M ? la_reshape(c, B, 1, &op) : NULL, *o[4];
  bool ok = v && la_solve(c, M, v, true, o);
  if (P) ts_rt_tensor_release(P);
  if (M) ts_rt_tensor_release(M);
  if (v) ts_rt_tensor_release(v);
  if (!ok) return false;
  ok = la_check_info(c, ts_rt_tensor_data(o[3]), 1, "torch.linalg.solve", true, LA_ERR_SOLVE);
  la_release(o + 1, 3);
  ts_rt_tensor *r = ok ? la_reshape(c, o[0], nd - bn, sizes + bn) : NULL;
  ts_rt_tensor_release(o[0]);
  return r && la_put(call, &r, 1);
}

/* ----------------------------------------------------------- lstsq */

typedef enum { LA_GELS, LA_GELSY, LA_GELSD, LA_GELSS } la_driver;

/* One least-squares solve in place: a (m x n, lda), b (ldb x k; the
 * solution in its first n rows). rank and s where the driver gives them. */
static ts_la_int la_lstsq_one(la_driver dv, bool d, ts_la_int m, ts_la_int n, ts_la_int k, void *a, ts_la_int lda,
                              void *b, ts_la_int ldb, double rcond, ts_la_int *rank, void *s, void *work,
                              ts_la_int lwork, ts_la_int *iwork) {
  ts_la_int inf = 0;
  char tn = 'N';
  float rf = (float)rcond;
  switch (dv) {
  case LA_GELS:
    if (d)
      dgels_(&tn, &m, &n, &k, a, &lda, b, &ldb, work, &lwork, &inf, 1);
    else
      sgels_(&tn, &m, &n, &k, a, &lda, b, &ldb, work, &lwork, &inf, 1);
    break;
  case LA_GELSY:
    if (lwork != -1) /* jpvt: every column free; a query passes no array */
      for (ts_la_int j = 0; j < n; j++) iwork[j] = 0;
    if (d)
      dgelsy_(&m, &n, &k, a, &lda, b, &ldb, iwork, &rcond, rank, work, &lwork, &inf);
    else
      sgelsy_(&m, &n, &k, a, &lda, b, &ldb, iwork, &rf, rank, work, &lwork, &inf);
    break;
  case LA_GELSD:
    if (d)
      dgelsd_(&m, &n, &k, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, iwork, &inf);
    else
      sgelsd_(&m, &n, &k, a, &lda, b, &ldb, s, &rf, rank, work, &lwork, iwork, &inf);
    break;
  case LA_GELSS:
    if (d)
      dgelss_(&m, &n, &k, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, &inf);
    else
      sgelss_(&m, &n, &k, a, &lda, b, &ldb, s, &rf, rank, work, &lwork, &inf);
    break;
  }
  return inf;
}

/* linalg_lstsq(self, b, rcond, *, driver) -> (solution, residuals, rank,
 * singular_values), as ATen: rank for gelsy/gelsd/gelss, singular values
 * for gelsd/gelss, residuals when m > n and not gelsy (gelsd/gelss: only
 * when every matrix has rank n), a b of one dim less than self a vector */
static bool la_k_lstsq(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *B;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_tensor(c, call, 1, &B) || !ts_rt_arg_check(c, call, 2) ||
      !ts_rt_arg_check(c, call, 3))
    return false;
  double rcond = -1;
  bool has_rcond = call->in[2].tag != TS_IV_NONE;
  if (has_rcond && !ts_rt_arg_double(c, call, 2, &rcond)) return false;
  la_driver dv = LA_GELSY;
  if (call->in[3].tag != TS_IV_NONE) {
    const ts_rt_str *s;
    if (!ts_rt_arg_str(c, call, 3, &s)) return false;
    static const char *names[] = {"gels", "gelsy", "gelsd", "gelss"};
    int found = -1;
    for (int i = 0; i < 4; i++)
      if (s->len == strlen(names[i]) && !memcmp(s->data, names[i], s->len)) found = i;
    if (found < 0)
      return ts_rt_fail(c, "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
    dv = (la_driver)found;
  }
  if (A->ndim < 2) return ts_rt_fail(c, "torch.linalg.lstsq: input must have at least 2 dimensions.");
  if (B->ndim < 1) return ts_rt_fail(c, "torch.linalg.lstsq: other must have at least 1 dimension.");
  if (A->dtype != B->dtype)
    return ts_rt_fail(c, "torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's dtype "
                         "%s and other's dtype %s",
                      ts_rt_dtype_name((ts_dtype)A->dtype), ts_rt_dtype_name((ts_dtype)B->dtype));
  int32_t diff = A->ndim - B->ndim;
  if (diff < 0 || diff > 1)
    return ts_rt_fail(c, "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and (input.dim() - "
                         "other.dim()) <= 1");
  bool vec = diff == 1;
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
  int64_t bm = vec ? B->sizes[B->ndim - 1] : B->sizes[B->ndim - 2], k = vec ? 1 : B->sizes[B->ndim - 1];
  if (bm != m)
    return ts_rt_fail(c, vec ? "torch.linalg.lstsq: input.size(-2) should match other.size(-1)"
                             : "torch.linalg.lstsq: input.size(-2) should match other.size(-2)");
  if (!la_check_float(c, A, "torch.linalg.lstsq", "linalg_lstsq_cpu")) return false;
  int64_t mx = m > n ? m : n, mn = m < n ? m : n;
  if (!la_dims_ok(c, mx, k) || !la_dims_ok(c, m, n)) return false;
  bool d = A->dtype == TS_DT_FLOAT64;
  size_t esz = d ? 8 : 4;
  if (!has_rcond) rcond = la_eps(d, m, n);
  /* B as a matrix (a vector gets a trailing dim of 1) */
  ts_rt_tensor *Bm;
  if (vec) {
    int64_t sizes[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS];
    memcpy(sizes, B->sizes, (size_t)B->ndim * sizeof *sizes);
    memcpy(strides, B->strides, (size_t)B->ndim * sizeof *strides);
    sizes[B->ndim] = 1;
    strides[B->ndim] = 1;
    Bm = ts_rt_tensor_view(c, B, B->offset, B->ndim + 1, sizes, strides);
  } else {
    Bm = B;
    ts_rt_tensor_retain(Bm);
  }
  if (!Bm) return false;
  la_batch b;
  la_batch_of(&b, Bm, 2);
  ts_rt_tensor *o[4] = {NULL, NULL, NULL, NULL};
  if (!la_batch_bcast(c, &b, A, 2)) {
    ts_rt_tensor_release(Bm);
    return false;
  }
  o[0] = vec ? la_new(c, (ts_dtype)A->dtype, &b, 1, n, 0, true) : la_new(c, (ts_dtype)A->dtype, &b, 2, n, k, true);
  bool has_rank = dv != LA_GELS, has_s = dv == LA_GELSD || dv == LA_GELSS;
  if (o[0]) o[2] = has_rank ? la_new(c, TS_DT_INT64, &b, 0, 0, 0, true) : la_empty(c, TS_DT_INT64);
  if (o[2]) o[3] = has_s ? la_new(c, (ts_dtype)A->dtype, &b, 1, mn, 0, true) : la_empty(c, (ts_dtype)A->dtype);
  int64_t lda = la_max1(m), ldb = la_max1(mx);
  ts_la_int im = (ts_la_int)m, in = (ts_la_int)n, ik = (ts_la_int)k, ilda = (ts_la_int)lda, ildb = (ts_la_int)ldb;
  bool work_needed = m > 0 && n > 0 && k > 0;
  ts_la_int lwork = 1, iwq = 1, rk = 0;
  if (o[3] && work_needed) {
    double wq = 0;
    float wqf = 0;
    ts_la_int q = -1;
    ts_la_int *iw = &iwq;
    if (d)
      la_lstsq_one(dv, true, im, in, ik, NULL, ilda, NULL, ildb, rcond, &rk, NULL, &wq, q, iw);
    else
      la_lstsq_one(dv, false, im, in, ik, NULL, ilda, NULL, ildb, rcond, &rk, NULL, &wqf, q, iw);
    lwork = (ts_la_int)(d ? wq : wqf) + 1;
  }
  /* gelsy's jpvt (n), gelsd's iwork (the query's size) */
  int64_t niw = dv == LA_GELSD ? (iwq > n ? iwq : n) : n;
  void *ab = o[3] ? la_scratch(c, lda * n, esz) : NULL;
  void *bb = ab ? la_scratch(c, ldb * k, esz) : NULL;
  void *sb = bb ? la_scratch(c, mn, esz) : NULL;
  void *work = sb ? la_scratch(c, lwork, esz) : NULL;
  ts_la_int *iwork = work ? la_scratch(c, niw, sizeof(ts_la_int)) : NULL;
  int32_t *info = iwork ? la_scratch(c, b.n, sizeof(int32_t)) : NULL;
  /* the rows n..m-1 of each solution, for the residuals */
  void *res = info && m > n ? la_scratch(c, b.n * k, sizeof(double)) : NULL;
  bool ok = info != NULL && (m <= n || res != NULL);
  bool all_full = true;
  for (int64_t i = 0; ok && i < b.n; i++) {
    la_load(A, la_off(A, 2, &b, i), ab, lda, false);
    memset(bb, 0, (size_t)(ldb * k) * esz);
    la_load(Bm, la_off(Bm, 2, &b, i), bb, ldb, false);
    rk = 0;
    info[i] = work_needed ? la_lstsq_one(dv, d, im, in, ik, ab, ilda, bb, ildb, rcond, &rk, sb, work, lwork, iwork) : 0;
    if (!work_needed) memset(bb, 0, (size_t)(ldb * k) * esz);
    if (has_rank) ((int64_t *)ts_rt_tensor_data(o[2]))[i] = rk;
    if (rk != n) all_full = false;
    if (has_s && mn > 0) memcpy((char *)ts_rt_tensor_data(o[3]) + (size_t)(i * mn) * esz, sb, (size_t)mn * esz);
    /* the solution: the first n rows */
    char *xp = (char *)ts_rt_tensor_data(o[0]) + (size_t)(i * n * k) * esz;
    for (int64_t r = 0; r < n; r++)
      for (int64_t j = 0; j < k; j++)
        la_set(xp, d, r * k + j, m == 0 ? 0 : la_get(bb, d, r + j * ldb));
    if (res)
      for (int64_t j = 0; j < k; j++) {
        double acc = 0;
        float accf = 0;
        for (int64_t r = n; r < m; r++) {
          double v = la_get(bb, d, r + j * ldb);
          acc += v * v;
          accf += (float)v * (float)v;
        }
        ((double *)res)[i * k + j] = d ? acc : (double)accf;
      }
  }
  if (ok) ok = la_check_info(c, info, b.n, "torch.linalg.lstsq", A->ndim == 2, LA_ERR_SVD) ;
  if (ok) {
    bool want = m > n && dv != LA_GELSY && (dv == LA_GELS || all_full);
    o[1] = want ? la_new(c, (ts_dtype)A->dtype, &b, 1, k, 0, false) : la_empty(c, (ts_dtype)A->dtype);
    ok = o[1] != NULL;
    if (ok && want)
      for (int64_t i = 0; i < b.n * k; i++) la_set(ts_rt_tensor_data(o[1]), d, i, ((double *)res)[i]);
  }
  ts_rt_free(ab);
  ts_rt_free(bb);
  ts_rt_free(sb);
  ts_rt_free(work);
  ts_rt_free(iwork);
  ts_rt_free(info);
  ts_rt_free(res);
  ts_rt_tensor_release(Bm);
  if (!ok) {
    la_release(o, 4);
    return false;
  }
  return la_put(call, o, 4);
}

/* ------------------------------------------------------------- LDL */

/* linalg_ldl_factor_ex(self, *, hermitian, check_errors) -> (LD, pivots, info):
 * sytrf on the lower triangle of A, as ATen (upper false) */
static bool la_ldl(ts_rt_ctx *c, const ts_rt_tensor *A, ts_rt_tensor **o) {
  const char *fn = "torch.linalg.ldl_factor_ex";
  if (!la_check_square(c, A, fn, "A") || !la_check_float(c, A, fn, "ldl_factor_cpu")) return false;
  bool d = A->dtype == TS_DT_FLOAT64;
  size_t esz = d ? 8 : 4;
  int64_t n = A->sizes[A->ndim - 1], ld = la_max1(n);
  la_batch b;
  la_batch_of(&b, A, 2);
  o[0] = la_new(c, (ts_dtype)A->dtype, &b, 2, n, n, false);
  o[1] = o[0] ? la_new(c, TS_DT_INT32, &b, 1, n, 0, true) : NULL;
  o[2] = o[1] ? la_new(c, TS_DT_INT32, &b, 0, 0, 0, true) : NULL;
  char uplo = 'L';
  ts_la_int in = (ts_la_int)n, ild = (ts_la_int)ld, lwork = -1, inf = 0;
  if (o[2] && n > 0) {
    double wq = 0;
    float wqf = 0;
    if (d)
      dsytrf_(&uplo, &in, NULL, &ild, NULL, &wq, &lwork, &inf, 1);
    else
      ssytrf_(&uplo, &in, NULL, &ild, NULL, &wqf, &lwork, &inf, 1);
    lwork = (ts_la_int)(d ? wq : wqf) + 1;
  }
  if (lwork < 1) lwork = 1;
  void *buf = o[2] ? la_scratch(c, ld * n, esz) : NULL;
  void *work = buf ? la_scratch(c, lwork, esz) : NULL;
  if (!work) {
    ts_rt_free(buf);
    la_release(o, 3);
    return false;
  }
  for (int64_t i = 0; i < b.n; i++) {
    la_load(A, la_off(A, 2, &b, i), buf, ld, false);
    la_keep_tri(buf, d, n, ld, false);
    inf = 0;
    int32_t *pv = (int32_t *)ts_rt_tensor_data(o[1]) + i * n;
    if (n > 0) {
      if (d)
        dsytrf_(&uplo, &in, buf, &ild, pv, work, &lwork, &inf, 1);
      else
        ssytrf_(&uplo, &in, buf, &ild, pv, work, &lwork, &inf, 1);
    }
    ((int32_t *)ts_rt_tensor_data(o[2]))[i] = inf;
    la_store(o[0], i, buf, ld, false);
  }
  ts_rt_free(buf);
  ts_rt_free(work);
  return true;
}

static bool la_k_ldl_factor_ex(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[3];
  bool herm, check;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_bool(c, call, 1, &herm) || !ts_rt_arg_bool(c, call, 2, &check) ||
      !la_ldl(c, A, o))
    return false;
  const int32_t *info = ts_rt_tensor_data(o[2]);
  for (int64_t i = 0; check && i < ts_rt_tensor_numel(o[2]); i++)
    if (info[i] > 0) {
      la_release(o, 3);
      return ts_rt_fail(c, "torch.linalg.ldl_factor_ex: Unknown error code: %d.", info[i]);
    }
  return la_put(call, o, 3);
}

/* linalg_ldl_factor(self, *, hermitian) -> (LD, pivots) */
static bool la_k_ldl_factor(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A, *o[3];
  bool herm;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_bool(c, call, 1, &herm) || !la_ldl(c, A, o)) return false;
  const int32_t *info = ts_rt_tensor_data(o[2]);
  for (int64_t i = 0; i < ts_rt_tensor_numel(o[2]); i++)
    if (info[i] > 0) {
      la_release(o, 3);
      return ts_rt_fail(c, "torch.linalg.ldl_factor: Unknown error code: %d.", info[i]);
    }
  ts_rt_tensor_release(o[2]);
  return la_put(call, o, 2);
}

/* linalg_ldl_solve(LD, pivots, B, *, hermitian): sytrs, batches broadcast */
static bool la_k_ldl_solve(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *LD, *piv, *B;
  bool herm;
  if (!ts_rt_arg_tensor(c, call, 0, &LD) || !ts_rt_arg_tensor(c, call, 1, &piv) || !ts_rt_arg_tensor(c, call, 2, &B) ||
      !ts_rt_arg_bool(c, call, 3, &herm))
    return false;
  const char *fn = "torch.linalg.ldl_solve";
  if (!la_check_square(c, LD, fn, "LD") || !la_check_float(c, LD, fn, "ldl_solve_cpu") ||
      !la_check_matrix(c, B, fn, "B"))
    return false;
  int64_t n = LD->sizes[LD->ndim - 1];
  bool shape_ok = piv->ndim == LD->ndim - 1;
  for (int32_t i = 0; shape_ok && i < piv->ndim; i++) shape_ok = piv->sizes[i] == LD->sizes[i];
  if (!shape_ok) return ts_rt_fail(c, "%s: Expected LD.shape[:-2] and pivots.shape[:-1] to be the same", fn);
  if (piv->dtype != TS_DT_INT32)
    return ts_rt_fail(c, "%s: Expected pivots to be integers. Got %s", fn, ts_rt_dtype_name((ts_dtype)piv->dtype));
  if (LD->dtype != B->dtype)
    return ts_rt_fail(c, "%s: LD dtype %s does not match b dtype %s", fn, ts_rt_dtype_name((ts_dtype)LD->dtype),
                      ts_rt_dtype_name((ts_dtype)B->dtype));
  if (B->sizes[B->ndim - 2] != n)
    return ts_rt_fail(c, "%s: Incompatible shapes of A and B for the equation AX = B (%lldx%lld and %lldx%lld)", fn,
                      (long long)n, (long long)n, (long long)B->sizes[B->ndim - 2], (long long)B->sizes[B->ndim - 1]);
  int64_t k = B->sizes[B->ndim - 1], ld = la_max1(n);
  if (!la_dims_ok(c, n, k)) return false;
  la_batch b;
  la_batch_of(&b, B, 2);
  if (!la_batch_bcast(c, &b, LD, 2)) return false;
  bool d = LD->dtype == TS_DT_FLOAT64;
  size_t esz = d ? 8 : 4;
  ts_rt_tensor *X = la_new(c, (ts_dtype)B->dtype, &b, 2, n, k, false);
  void *lb = X ? la_scratch(c, ld * n, esz) : NULL;
  void *xb = lb ? la_scratch(c, ld * k, esz) : NULL;
  ts_la_int *ip = xb ? la_scratch(c, n, sizeof(ts_la_int)) : NULL;
  if (!ip) {
    ts_rt_free(lb);
    ts_rt_free(xb);
    if (X) ts_rt_tensor_release(X);
    return false;
  }
  const int32_t *pv = (const int32_t *)piv->storage->data;
  int64_t ps = piv->strides[piv->ndim - 1];
  char uplo = 'L';
  bool ok = true;
  for (int64_t i = 0; ok && i < b.n; i++) {
    la_load(LD, la_off(LD, 2, &b, i), lb, ld, false);
    int64_t po = la_off(piv, 1, &b, i);
    for (int64_t j = 0; j < n; j++) {
      ip[j] = pv[po + j * ps];
      /* sytrs indexes rows by the pivots: refuse ones outside the matrix */
      if (ip[j] == 0 || ip[j] > n || ip[j] < -n) ok = ts_rt_fail(c, "%s: invalid pivots", fn);
    }
    la_load(B, la_off(B, 2, &b, i), xb, ld, false);
    ts_la_int in = (ts_la_int)n, ik = (ts_la_int)k, ild = (ts_la_int)ld, inf = 0;
    if (ok && n > 0 && k > 0) {
      if (d)
        dsytrs_(&uplo, &in, &ik, lb, &ild, ip, xb, &ild, &inf, 1);
      else
        ssytrs_(&uplo, &in, &ik, lb, &ild, ip, xb, &ild, &inf, 1);
    }
    la_store(X, i, xb, ld, false);
  }
  ts_rt_free(lb);
  ts_rt_free(xb);
  ts_rt_free(ip);
  if (!ok) {
    ts_rt_tensor_release(X);
    return false;
  }
  return la_put(call, &X, 1);
}

/* ------------------------------------------------------ matrix_exp */

/* exp(A) by scaling and squaring in double whatever the dtype: A / 2^s
 * with ||A / 2^s||_1 <= 1/2, the Taylor polynomial of degree 18 there
 * (Horner; the remainder below 1e-22), squared s times, rounded to the
 * dtype at the end. PyTorch evaluates Bader, Blanes and Casas's optimised
 * degree-18 polynomial in the dtype itself; the double evaluation stays
 * within PyTorch's own float32 error of the exact value. */
static void la_expm(double *a, int64_t n, double *p, double *t) {
  double norm = 0;
  for (int64_t j = 0; j < n; j++) {
    double cs = 0;
    for (int64_t i = 0; i < n; i++) cs += fabs(a[i * n + j]);
    if (cs > norm || isnan(cs)) norm = cs;
  }
  int s = 0;
  if (norm > 0.5) s = isfinite(norm) ? (int)ceil(log2(norm / 0.5)) : 1100;
  if (s > 1100) s = 1100;
  double sc = ldexp(1.0, -s);
  for (int64_t i = 0; i < n * n; i++) a[i] *= sc;
  /* p = I + a/18 (I + a/17 (I + ...)) */
  for (int64_t i = 0; i < n * n; i++) p[i] = i % (n + 1) == 0 ? 1 : 0;
  for (int k = 18; k >= 1; k--) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)n, (blasint)n, (blasint)n, 1.0 / k, a, (blasint)n,
                p, (blasint)n, 0.0, t, (blasint)n);
    for (int64_t i = 0; i < n * n; i++) p[i] = t[i] + (i % (n + 1) == 0 ? 1 : 0);
  }
  for (int k = 0; k < s; k++) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)n, (blasint)n, (blasint)n, 1.0, p, (blasint)n, p,
                (blasint)n, 0.0, t, (blasint)n);
    memcpy(p, t, (size_t)(n * n) * sizeof *p);
  }
}

/* linalg_matrix_exp(self), matrix_exp(self) */
static bool la_k_matrix_exp(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *A;
  if (!ts_rt_arg_tensor(c, call, 0, &A)) return false;
  if (!la_check_square(c, A, "linalg.matrix_exp", "A") || !la_check_float(c, A, "matrix_exp", "matrix_exp")) return false;
  bool d = A->dtype == TS_DT_FLOAT64;
  int64_t n = A->sizes[A->ndim - 1];
  la_batch b;
  la_batch_of(&b, A, 2);
  ts_rt_tensor *r = la_new(c, (ts_dtype)A->dtype, &b, 2, n, n, false);
  double *buf = r ? la_scratch(c, 3 * n * n, sizeof(double)) : NULL;
  double *ab = r ? la_scratch(c, n * n, sizeof(double)) : NULL;
  if (!buf || !ab) {
    ts_rt_free(buf);
    ts_rt_free(ab);
    if (r) ts_rt_tensor_release(r);
    return false;
  }
  const char *src = A->storage->data;
  int64_t rs = A->strides[A->ndim - 2], cs = A->strides[A->ndim - 1];
  for (int64_t i = 0; i < b.n && n > 0; i++) {
    int64_t off = la_off(A, 2, &b, i);
    for (int64_t x = 0; x < n; x++)
      for (int64_t y = 0; y < n; y++) ab[x * n + y] = la_get(src, d, off + x * rs + y * cs);
    la_expm(ab, n, buf, buf + n * n);
    void *rp = ts_rt_tensor_data(r);
    for (int64_t x = 0; x < n * n; x++) la_set(rp, d, i * n * n + x, buf[x]);
  }
  ts_rt_free(buf);
  ts_rt_free(ab);
  return la_put(call, &r, 1);
}

/* ---------------------------------------------------------- table */

const ts_rt_kernel_def ts_rt_kernels_linalg[] = {
    {"aten::_linalg_det", la_k__det},
    {"aten::_linalg_eigh", la_k__eigh},
    {"aten::_linalg_slogdet", la_k__slogdet},
    {"aten::_linalg_solve_ex", la_k__solve_ex},
    {"aten::_linalg_svd", la_k__svd},
    {"aten::_lu_with_info", la_k_lu_with_info},
    {"aten::cholesky", la_k_cholesky},
    {"aten::cholesky_inverse", la_k_cholesky_inverse},
    {"aten::cholesky_solve", la_k_cholesky_solve},
    {"aten::det", la_k_det},
    {"aten::geqrf", la_k_geqrf},
    {"aten::inverse", la_k_inv},
    {"aten::linalg_cholesky", la_k_linalg_cholesky},
    {"aten::linalg_cholesky_ex", la_k_cholesky_ex},
    {"aten::linalg_cond", la_k_cond},
    {"aten::linalg_cond.p_str", la_k_cond_str},
    {"aten::linalg_det", la_k_det},
    {"aten::linalg_eig", la_k_eig},
    {"aten::linalg_eigh", la_k_eigh},
    {"aten::linalg_eigvals", la_k_eigvals},
    {"aten::linalg_eigvalsh", la_k_eigvalsh},
    {"aten::linalg_householder_product", la_k_householder},
    {"aten::linalg_inv", la_k_inv},
    {"aten::linalg_inv_ex", la_k_inv_ex},
    {"aten::linalg_ldl_factor", la_k_ldl_factor},
    {"aten::linalg_ldl_factor_ex", la_k_ldl_factor_ex},
    {"aten::linalg_ldl_solve", la_k_ldl_solve},
    {"aten::linalg_lstsq", la_k_lstsq},
    {"aten::linalg_lu", la_k_linalg_lu},
    {"aten::linalg_lu_factor", la_k_lu_factor},
    {"aten::linalg_lu_factor_ex", la_k_lu_factor_ex},
    {"aten::linalg_lu_solve", la_k_linalg_lu_solve},
    {"aten::linalg_matrix_exp", la_k_matrix_exp},
    {"aten::linalg_matrix_rank", la_k_rank_tol},
    {"aten::linalg_matrix_rank.atol_rtol_float", la_k_rank_atol_rtol},
    {"aten::linalg_matrix_rank.atol_rtol_tensor", la_k_rank_atol_rtol},
    {"aten::linalg_matrix_rank.tol_tensor", la_k_rank_tol},
    {"aten::linalg_pinv", la_k_pinv_rcond},
    {"aten::linalg_pinv.atol_rtol_float", la_k_pinv_atol_rtol},
    {"aten::linalg_pinv.atol_rtol_tensor", la_k_pinv_atol_rtol},
    {"aten::linalg_pinv.rcond_tensor", la_k_pinv_rcond_t},
    {"aten::linalg_qr", la_k_linalg_qr},
    {"aten::linalg_slogdet", la_k_slogdet},
    {"aten::linalg_solve", la_k_solve},
    {"aten::linalg_solve_ex", la_k_solve_ex},
    {"aten::linalg_solve_triangular", la_k_solve_triangular},
    {"aten::linalg_svd", la_k_linalg_svd},
    {"aten::linalg_svdvals", la_k_svdvals},
    {"aten::linalg_tensorinv", la_k_tensorinv},
    {"aten::linalg_tensorsolve", la_k_tensorsolve},
    {"aten::logdet", la_k_logdet},
    {"aten::lu_solve", la_k_lu_solve},
    {"aten::lu_unpack", la_k_lu_unpack},
    {"aten::matrix_exp", la_k_matrix_exp},
    {"aten::orgqr", la_k_householder},
    {"aten::ormqr", la_k_ormqr},
    {"aten::pinverse", la_k_pinverse},
    {"aten::qr", la_k_qr},
    {"aten::slogdet", la_k_slogdet},
    {"aten::svd", la_k_svd},
    {"aten::symeig", la_k_symeig},
    {"aten::triangular_solve", la_k_triangular_solve},
    {NULL, NULL},
};
