/* runtime/kernels/linalg.c: linear algebra through LAPACK (lapack.h), as
 * PyTorch 1.13 computes it on the CPU: the same routine per op (LU by getrf
 * for det, slogdet, inv and solve, Cholesky by potrf, triangular solves by
 * trsm, ...) on the same library (Debian's PyTorch calls OpenBLAS's LAPACK
 * too), so that pivots, signs and orderings come out as PyTorch's.
 *
 * float32 runs the s routines, float64 the d ones; other dtypes fail with
 * PyTorch's message. A batch of matrices (*, m, n) is gathered one matrix
 * at a time into a column-major scratch buffer (ts_rt_malloc), factored or
 * solved there and scattered into contiguous outputs. Where PyTorch factors
 * A^T instead of A (det, slogdet and solve of a contiguous A: its row-major
 * bytes are A^T's column-major ones, no copy) so does this file, as the
 * pivots follow. Sizes are bounded to LAPACK's 32-bit integers. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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
  ts_rt_tensor *I = la_new(c, (ts_dtype)A->dtype, &b, 2, n, n, true);
  if (!I) return false;
  size_t esz = ts_dtype_size((ts_dtype)A->dtype);
  char *ip = ts_rt_tensor_data(I);
  for (int64_t i = 0; i < b.n; i++)
    for (int64_t j = 0; j < n; j++) ts_rt_store_f64(ip + (size_t)(i * n * n + j * (n + 1)) * esz, (ts_dtype)A->dtype, 1);
  ts_rt_tensor *s[4];
  bool ok = la_solve(c, A, I, true, s);
  ts_rt_tensor_release(I);
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

/* ---------------------------------------------------------- table */

const ts_rt_kernel_def ts_rt_kernels_linalg[] = {
    {"aten::_linalg_det", la_k__det},
    {"aten::_linalg_slogdet", la_k__slogdet},
    {"aten::_linalg_solve_ex", la_k__solve_ex},
    {"aten::_lu_with_info", la_k_lu_with_info},
    {"aten::det", la_k_det},
    {"aten::inverse", la_k_inv},
    {"aten::linalg_det", la_k_det},
    {"aten::linalg_inv", la_k_inv},
    {"aten::linalg_inv_ex", la_k_inv_ex},
    {"aten::linalg_lu", la_k_linalg_lu},
    {"aten::linalg_lu_factor", la_k_lu_factor},
    {"aten::linalg_lu_factor_ex", la_k_lu_factor_ex},
    {"aten::linalg_lu_solve", la_k_linalg_lu_solve},
    {"aten::linalg_slogdet", la_k_slogdet},
    {"aten::linalg_solve", la_k_solve},
    {"aten::linalg_solve_ex", la_k_solve_ex},
    {"aten::logdet", la_k_logdet},
    {"aten::lu_solve", la_k_lu_solve},
    {"aten::lu_unpack", la_k_lu_unpack},
    {"aten::slogdet", la_k_slogdet},
    {NULL, NULL},
};
