/* runtime/kernels/blas2.c: the BLAS-like ops around matmul (mv, dot, vdot,
 * inner, outer, addmv, addr, addbmm, tensordot, trace, linalg_multi_dot,
 * linalg_vecdot, linalg_matrix_power, linalg_vander,
 * _scaled_dot_product_attention), composed as PyTorch
 * 1.13 composes them (ATen's Blas.cpp, Linear.cpp, LinearAlgebra.cpp) from
 * nn.c's GEMM paths (OpenBLAS), with PyTorch's checks and messages. beta 0
 * ignores self (NaN in it does not show), as PyTorch's addmm family does. */
#include <math.h>
#include <string.h>

#include "lapack.h"
#include "nn_util.h"

/* *slot = t, releasing what it held; false if t is NULL. */
static bool bl_set(ts_rt_tensor **slot, ts_rt_tensor *t) {
  if (*slot) ts_rt_tensor_release(*slot);
  *slot = t;
  return t != NULL;
}

static bool bl_same_dtype(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *b) {
  if (a->dtype == b->dtype) return true;
  return ts_rt_fail(c, "expected scalar type %s but found %s", ts_rt_dtype_name((ts_dtype)a->dtype),
                    ts_rt_dtype_name((ts_dtype)b->dtype));
}

/* ------------------------------------------------------------ dot, mv */

/* dot / vdot (real): 1-d tensors of one length and dtype. */
static ts_rt_tensor *bl_dot(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *b) {
  if (a->ndim != 1 || b->ndim != 1)
    return ts_rt_fail(c, "1D tensors expected, but got %dD and %dD tensors", (int)a->ndim, (int)b->ndim), NULL;
  if (a->dtype != b->dtype)
    return ts_rt_fail(c, "dot : expected both vectors to have same dtype, but found %s and %s",
                      ts_rt_dtype_name((ts_dtype)a->dtype), ts_rt_dtype_name((ts_dtype)b->dtype)),
           NULL;
  if (a->sizes[0] != b->sizes[0])
    return ts_rt_fail(c,
                      "inconsistent tensor size, expected tensor [%lld] and src [%lld] to have the same number of "
                      "elements, but got %lld and %lld elements respectively",
                      (long long)a->sizes[0], (long long)b->sizes[0], (long long)a->sizes[0], (long long)b->sizes[0]),
           NULL;
  return ts_rt_matmul(c, a, b);
}

static bool bl_k_dot(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a, *b;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_tensor(c, call, 1, &b)) return false;
  return nnu_ret(call, bl_dot(c, a, b));
}

/* mv(self [n, m], vec [m]) */
static bool bl_mv_check(ts_rt_ctx *c, const ts_rt_tensor *self, const ts_rt_tensor *m, const ts_rt_tensor *v) {
  if (m->ndim != 2 || v->ndim != 1 || (self && self->ndim > 1))
    return ts_rt_fail(c, "vector + matrix @ vector expected, got %d, %d, %d", self ? (int)self->ndim : 1,
                      (int)m->ndim, (int)v->ndim);
  if (m->sizes[1] != v->sizes[0] || (self && self->ndim == 1 && self->sizes[0] != m->sizes[0] && self->sizes[0] != 1))
    return ts_rt_fail(c, "size mismatch, got %lld, %lldx%lld,%lld",
                      self && self->ndim == 1 ? (long long)self->sizes[0] : (long long)m->sizes[0],
                      (long long)m->sizes[0], (long long)m->sizes[1], (long long)v->sizes[0]);
  return bl_same_dtype(c, m, v);
}

static bool bl_k_mv(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *m, *v;
  if (!ts_rt_arg_tensor(c, call, 0, &m) || !ts_rt_arg_tensor(c, call, 1, &v)) return false;
  if (!bl_mv_check(c, NULL, m, v)) return false;
  return nnu_ret(call, ts_rt_matmul(c, m, v));
}

/* beta * self + alpha * (a [n, k] @ b [k, m]), self broadcast to [n, m]:
 * addmm's path, the result viewed as `ndim` dims of `sizes`. */
static ts_rt_tensor *bl_addmm_as(ts_rt_ctx *c, const ts_rt_tensor *self, const ts_rt_tensor *a,
                                 const ts_rt_tensor *b, double beta, double alpha, int32_t ndim,
                                 const int64_t *sizes) {
  ts_rt_tensor *r = ts_rt_addmm(c, self, a, b, beta, alpha);
  if (!r) return NULL;
  ts_rt_tensor *v = ts_rt_reshape(c, r, ndim, sizes);
  ts_rt_tensor_release(r);
  return v;
}

/* addmv(self, mat [n, m], vec [m], beta, alpha) */
static bool bl_k_addmv(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *self, *m, *v;
  double beta, alpha;
  if (!ts_rt_arg_tensor(c, call, 0, &self) || !ts_rt_arg_tensor(c, call, 1, &m) ||
      !ts_rt_arg_tensor(c, call, 2, &v) || !ts_rt_arg_double(c, call, 3, &beta) ||
      !ts_rt_arg_double(c, call, 4, &alpha))
    return false;
  if (!bl_mv_check(c, self, m, v)) return false;
  ts_rt_tensor *s2 = NULL, *v2 = NULL;
  int64_t n = m->sizes[0];
  bool ok = bl_set(&s2, self->ndim == 1 ? ts_rt_unsqueeze(c, self, 1) : ts_rt_clone(c, self)) &&
            bl_set(&v2, ts_rt_unsqueeze(c, v, 1));
  ts_rt_tensor *r = ok ? bl_addmm_as(c, s2, m, v2, beta, alpha, 1, &n) : NULL;
  bl_set(&s2, NULL), bl_set(&v2, NULL);
  return nnu_ret(call, r);
}

/* --------------------------------------------------------- outer, addr */

static ts_rt_tensor *bl_outer(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *b, const char *op,
                              const char *na, const char *nb) {
  if (a->ndim != 1) return ts_rt_fail(c, "%s: Expected 1-D argument %s, but got %d-D", op, na, (int)a->ndim), NULL;
  if (b->ndim != 1) return ts_rt_fail(c, "%s: Expected 1-D argument %s, but got %d-D", op, nb, (int)b->ndim), NULL;
  ts_rt_tensor *col = ts_rt_unsqueeze(c, a, 1);
  if (!col) return NULL;
  ts_rt_tensor *r = ts_rt_binary_op(c, TS_PW_mul, col, b);
  ts_rt_tensor_release(col);
  return r;
}

static bool bl_k_outer(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a, *b;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_tensor(c, call, 1, &b)) return false;
  return nnu_ret(call, bl_outer(c, a, b, "outer", "self", "vec2"));
}

/* addr(self, vec1, vec2, beta, alpha): beta * self + alpha * outer, self
 * expanded to [n, m] (beta 0: self ignored). */
static bool bl_k_addr(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *self, *a, *b;
  double beta, alpha;
  if (!ts_rt_arg_tensor(c, call, 0, &self) || !ts_rt_arg_tensor(c, call, 1, &a) ||
      !ts_rt_arg_tensor(c, call, 2, &b) || !ts_rt_arg_double(c, call, 3, &beta) ||
      !ts_rt_arg_double(c, call, 4, &alpha))
    return false;
  ts_rt_tensor *o = bl_outer(c, a, b, "addr", "vec1", "vec2");
  if (!o) return false;
  ts_rt_tensor *se = ts_rt_expand(c, self, 2, o->sizes), *r = NULL;
  if (!se) goto done;
  if (self->dtype == TS_DT_BOOL || o->dtype == TS_DT_BOOL) {
    ts_rt_fail(c, "\"addr\" not implemented for 'Bool'");
    goto done;
  }
  ts_rt_tensor *ao = alpha == 1 ? (ts_rt_tensor_retain(o), o) : ts_rt_mul_scalar(c, o, alpha);
  if (!ao) goto done;
  if (beta == 0) {
    ts_iv ops[2] = {ts_iv_tensor(self), ts_iv_tensor(ao)};
    ts_dtype dt = ts_rt_result_type(ops, 2);
    r = ts_rt_tensor_to_dtype(c, ao, dt);
  } else {
    ts_rt_tensor *bs = beta == 1 ? (ts_rt_tensor_retain(se), se) : ts_rt_mul_scalar(c, se, beta);
    if (bs) r = ts_rt_add(c, bs, ao, 1);
    if (bs) ts_rt_tensor_release(bs);
  }
  ts_rt_tensor_release(ao);
done:
  if (se) ts_rt_tensor_release(se);
  ts_rt_tensor_release(o);
  return nnu_ret(call, r);
}

/* ------------------------------------------------------------- addbmm */

/* addbmm(self, batch1 [B, n, k], batch2 [B, k, m]): beta * self + alpha *
 * sum_b batch1[b] @ batch2[b], as one GEMM of [n, B*k] @ [B*k, m]. */
static bool bl_k_addbmm(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *self, *a, *b;
  double beta, alpha;
  if (!ts_rt_arg_tensor(c, call, 0, &self) || !ts_rt_arg_tensor(c, call, 1, &a) ||
      !ts_rt_arg_tensor(c, call, 2, &b) || !ts_rt_arg_double(c, call, 3, &beta) ||
      !ts_rt_arg_double(c, call, 4, &alpha))
    return false;
  if (a->ndim != 3) return ts_rt_fail(c, "batch1 must be a 3D tensor");
  if (b->ndim != 3) return ts_rt_fail(c, "batch2 must be a 3D tensor");
  if (a->sizes[0] != b->sizes[0])
    return ts_rt_fail(c, "batch1 and batch2 must have same number of batches, got %lld and %lld",
                      (long long)a->sizes[0], (long long)b->sizes[0]);
  if (a->sizes[2] != b->sizes[1])
    return ts_rt_fail(c, "Incompatible matrix sizes for bmm (%lldx%lld and %lldx%lld)", (long long)a->sizes[1],
                      (long long)a->sizes[2], (long long)b->sizes[1], (long long)b->sizes[2]);
  int64_t osz[2] = {a->sizes[1], b->sizes[2]};
  ts_rt_tensor *se = NULL, *at = NULL, *a2 = NULL, *b2 = NULL, *r = NULL;
  int64_t asz[2] = {a->sizes[1], a->sizes[0] * a->sizes[2]}, bsz[2] = {b->sizes[0] * b->sizes[1], b->sizes[2]};
  if (bl_set(&se, ts_rt_expand(c, self, 2, osz)) && bl_set(&at, ts_rt_transpose(c, a, 0, 1)) &&
      bl_set(&a2, ts_rt_reshape(c, at, 2, asz)) && bl_set(&b2, ts_rt_reshape(c, b, 2, bsz)))
    r = ts_rt_addmm(c, se, a2, b2, beta, alpha);
  bl_set(&se, NULL), bl_set(&at, NULL), bl_set(&a2, NULL), bl_set(&b2, NULL);
  return nnu_ret(call, r);
}

/* ------------------------------------------------------ tensordot, inner */

/* tensordot: a's free dims then b's, the contracted pairs summed (one
 * GEMM of the permuted, flattened operands). */
static ts_rt_tensor *bl_tensordot(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *b, const int64_t *da_in,
                                  const int64_t *db_in, uint32_t n) {
  if (!bl_same_dtype(c, a, b)) return NULL;
  bool ca[TS_RT_MAX_DIMS] = {false}, cb[TS_RT_MAX_DIMS] = {false};
  int64_t da[TS_RT_MAX_DIMS], db[TS_RT_MAX_DIMS];
  for (uint32_t i = 0; i < n; i++) {
    if (!ts_rt_wrap_dim(c, da_in[i], a->ndim, &da[i]) || !ts_rt_wrap_dim(c, db_in[i], b->ndim, &db[i])) return NULL;
    if (a->sizes[da[i]] != b->sizes[db[i]])
      return ts_rt_fail(c, "contracted dimensions need to match, but first has size %lld in dim %lld and second has "
                        "size %lld in dim %lld",
                        (long long)a->sizes[da[i]], (long long)da[i], (long long)b->sizes[db[i]], (long long)db[i]),
             NULL;
    if (ca[da[i]] || cb[db[i]]) return ts_rt_fail(c, "dim %lld appears multiple times in the list of dims", (long long)(ca[da[i]] ? da[i] : db[i])), NULL;
    ca[da[i]] = cb[db[i]] = true;
  }
  int64_t pa[TS_RT_MAX_DIMS], pb[TS_RT_MAX_DIMS], osz[TS_RT_MAX_DIMS];
  int32_t np = 0, no = 0;
  int64_t m = 1, k = 1, nn = 1;
  for (int32_t d = 0; d < a->ndim; d++)
    if (!ca[d]) pa[np++] = d, osz[no++] = a->sizes[d], m *= a->sizes[d];
  for (uint32_t i = 0; i < n; i++) pa[np++] = da[i], k *= a->sizes[da[i]];
  np = 0;
  for (uint32_t i = 0; i < n; i++) pb[np++] = db[i];
  for (int32_t d = 0; d < b->ndim; d++)
    if (!cb[d]) pb[np++] = d, osz[no++] = b->sizes[d], nn *= b->sizes[d];
  if (no > TS_RT_MAX_DIMS) return ts_rt_fail(c, "tensordot: result has more than %d dims", TS_RT_MAX_DIMS), NULL;
  ts_rt_tensor *ap = NULL, *bp = NULL, *a2 = NULL, *b2 = NULL, *r = NULL;
  int64_t s1[2] = {m, k}, s2[2] = {k, nn};
  if (bl_set(&ap, ts_rt_permute(c, a, pa)) && bl_set(&bp, ts_rt_permute(c, b, pb)) &&
      bl_set(&a2, ts_rt_reshape(c, ap, 2, s1)) && bl_set(&b2, ts_rt_reshape(c, bp, 2, s2)) &&
      bl_set(&r, ts_rt_mm(c, a2, b2)))
    bl_set(&r, ts_rt_reshape(c, r, no, osz));
  bl_set(&ap, NULL), bl_set(&bp, NULL), bl_set(&a2, NULL), bl_set(&b2, NULL);
  return r;
}

static bool bl_k_tensordot(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a, *b;
  int64_t da[TS_RT_MAX_DIMS], db[TS_RT_MAX_DIMS];
  uint32_t na = 0, nb = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_tensor(c, call, 1, &b) ||
      !ts_rt_arg_ints(c, call, 2, da, TS_RT_MAX_DIMS, &na, 0) || !ts_rt_arg_ints(c, call, 3, db, TS_RT_MAX_DIMS, &nb, 0))
    return false;
  if (na != nb) return ts_rt_fail(c, "both dimension lists should have same length");
  return nnu_ret(call, bl_tensordot(c, a, b, da, db, na));
}

/* inner: a product with a 0-d operand, else the last dims contracted. */
static bool bl_k_inner(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a, *b;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_tensor(c, call, 1, &b)) return false;
  if (a->ndim == 0 || b->ndim == 0) return nnu_ret(call, ts_rt_binary_op(c, TS_PW_mul, a, b));
  if (a->sizes[a->ndim - 1] != b->sizes[b->ndim - 1]) {
    char sa[256], sb[256];
    nnu_shape_str(sa, sizeof sa, a->ndim, a->sizes);
    nnu_shape_str(sb, sizeof sb, b->ndim, b->sizes);
    return ts_rt_fail(c, "inner() the last dimension must match on both input tensors but got shapes %s and %s", sa,
                      sb);
  }
  int64_t d = -1;
  return nnu_ret(call, bl_tensordot(c, a, b, &d, &d, 1));
}

/* ------------------------------------------------------------- trace */

static bool bl_k_trace(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  if (!ts_rt_arg_tensor(c, call, 0, &a)) return false;
  if (a->ndim != 2) return ts_rt_fail(c, "trace: expected a matrix, but got tensor with dim %d", (int)a->ndim);
  ts_dtype dt = (ts_dtype)a->dtype;
  if (dt == TS_DT_BOOL) return nnu_not_impl(c, "trace", dt);
  bool fl = ts_rt_dtype_is_float(dt);
  ts_dtype odt = fl ? dt : TS_DT_INT64;
  ts_rt_tensor *out = ts_rt_tensor_new(c, odt, 0, NULL, true);
  if (!out) return false;
  int64_t n = a->sizes[0] < a->sizes[1] ? a->sizes[0] : a->sizes[1];
  const char *p = ts_rt_tensor_data(a);
  int64_t step = (a->strides[0] + a->strides[1]) * (int64_t)ts_dtype_size(dt);
  double s = 0;
  uint64_t si = 0;
  for (int64_t i = 0; i < n; i++, p += step) {
    if (fl) s += ts_rt_load_f64(p, dt);
    else si += (uint64_t)ts_rt_load_i64(p, dt);
  }
  if (fl) ts_rt_store_f64(ts_rt_tensor_data(out), odt, s);
  else ts_rt_store_i64(ts_rt_tensor_data(out), odt, (int64_t)si);
  return nnu_ret(call, out);
}

/* ------------------------------------------------------ linalg_multi_dot */

static bool bl_k_multi_dot(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_list *l;
  if (!ts_rt_arg_list(c, call, 0, &l)) return false;
  uint32_t n = l->n;
  if (n < 2) return ts_rt_fail(c, "multi_dot(): expected at least 2 tensors but got %u", (unsigned)n);
  for (uint32_t i = 0; i < n; i++)
    if (l->items[i].tag != TS_IV_TENSOR) return ts_rt_fail(c, "multi_dot(): expected a list of tensors");
  const ts_rt_tensor *first = l->items[0].u.t, *last = l->items[n - 1].u.t;
  if (first->ndim < 1 || first->ndim > 2)
    return ts_rt_fail(c, "multi_dot(): the first tensor must be 1D or 2D but got %dD", (int)first->ndim);
  if (last->ndim < 1 || last->ndim > 2)
    return ts_rt_fail(c, "multi_dot(): the last tensor must be 1D or 2D but got %dD", (int)last->ndim);
  for (uint32_t i = 1; i + 1 < n; i++)
    if (l->items[i].u.t->ndim != 2)
      return ts_rt_fail(c, "multi_dot(): tensor %u must be 2D but got %dD", (unsigned)i, (int)l->items[i].u.t->ndim);
  for (uint32_t i = 1; i < n; i++)
    if (l->items[i].u.t->dtype != first->dtype)
      return ts_rt_fail(c, "multi_dot(): all tensors must have be the same dtype but tensor 0 is %s and tensor %u %s",
                        nnu_ctype_name((ts_dtype)first->dtype), (unsigned)i,
                        nnu_ctype_name((ts_dtype)l->items[i].u.t->dtype));
  /* 1-d ends as a row / a column, removed again at the end */
  ts_rt_tensor *acc = first->ndim == 1 ? ts_rt_unsqueeze(c, first, 0) : ts_rt_clone(c, first);
  if (!acc) return false;
  for (uint32_t i = 1; i < n; i++) {
    ts_rt_tensor *t = l->items[i].u.t;
    ts_rt_tensor *m = i == n - 1 && t->ndim == 1 ? ts_rt_unsqueeze(c, t, 1) : (ts_rt_tensor_retain(t), t);
    if (!m) return bl_set(&acc, NULL);
    if (acc->sizes[1] != m->sizes[0]) {
      char sa[256], sb[256];
      const ts_rt_tensor *p = l->items[i - 1].u.t;
      nnu_shape_str(sa, sizeof sa, p->ndim, p->sizes);
      nnu_shape_str(sb, sizeof sb, t->ndim, t->sizes);
      ts_rt_tensor_release(m);
      bl_set(&acc, NULL);
      return ts_rt_fail(c, "multi_dot(): tensors %u and %u with shapes %s and %s cannot be multiplied",
                        (unsigned)(i - 1), (unsigned)i, sa, sb);
    }
    bool ok = bl_set(&acc, ts_rt_mm(c, acc, m));
    ts_rt_tensor_release(m);
    if (!ok) return false;
  }
  int64_t sz[2];
  int32_t nd = 0;
  if (first->ndim == 2) sz[nd++] = acc->sizes[0];
  if (last->ndim == 2) sz[nd++] = acc->sizes[1];
  bl_set(&acc, ts_rt_reshape(c, acc, nd, sz));
  return nnu_ret(call, acc);
}

/* --------------------------------------------------------- linalg_vecdot */

static bool bl_k_vecdot(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x, *y;
  int64_t dim;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_tensor(c, call, 1, &y) || !ts_rt_arg_int(c, call, 2, &dim))
    return false;
  if (x->dtype != y->dtype)
    return ts_rt_fail(c, "linalg.vecdot: Expected x and y to have the same dtype, but found x of type %s and y of type "
                      "%s instead",
                      ts_rt_dtype_name((ts_dtype)x->dtype), ts_rt_dtype_name((ts_dtype)y->dtype));
  ts_rt_tensor *p = ts_rt_binary_op(c, TS_PW_mul, x, y);
  if (!p) return false;
  ts_rt_tensor *r = ts_rt_sum(c, p, &dim, 1, false, TS_DT_NONE);
  ts_rt_tensor_release(p);
  return nnu_ret(call, r);
}

/* ---------------------------------------------------- linalg_matrix_power */

/* The inverse of each n x n matrix of a (contiguous float, [..., n, n]) in
 * double through LAPACK's getrf/getrs (dgesv), PyTorch's message for a
 * singular one. */
static ts_rt_tensor *bl_inverse(ts_rt_ctx *c, const ts_rt_tensor *a) {
  int64_t n = a->sizes[a->ndim - 1];
  if (n > 46340) return ts_rt_fail(c, "linalg.inv: matrix too large"), NULL;
  ts_rt_tensor *w = ts_rt_tensor_to_dtype(c, a, TS_DT_FLOAT64);
  if (!w) return NULL;
  ts_rt_tensor *wc = ts_rt_tensor_contiguous(c, w);
  ts_rt_tensor_release(w);
  if (!wc) return NULL;
  ts_rt_tensor *out = ts_rt_tensor_new(c, TS_DT_FLOAT64, a->ndim, a->sizes, true);
  double *lu = ts_rt_malloc((size_t)(n > 0 ? n * n : 1) * sizeof(double));
  int *piv = ts_rt_malloc((size_t)(n ? n : 1) * sizeof(int));
  bool ok = out && lu && piv;
  if (!ok && out) ts_rt_oom(c);
  int64_t batch = n ? ts_rt_tensor_numel(a) / (n * n) : 0;
  const double *src = ts_rt_tensor_data(wc);
  double *dst = ok ? ts_rt_tensor_data(out) : NULL;
  for (int64_t b = 0; ok && b < batch; b++) {
    /* LAPACK is column-major: lu is A so laid out, and x comes back as
     * A^-1 column-major */
    int in = (int)n, info = 0;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) lu[j * n + i] = src[b * n * n + i * n + j];
    double *x = dst + b * n * n;
    for (int64_t i = 0; i < n * n; i++) x[i] = 0;
    for (int64_t i = 0; i < n; i++) x[i * n + i] = 1;
    dgesv_(&in, &in, lu, &in, piv, x, &in, &info);
    if (info > 0) {
      if (batch > 1 || a->ndim > 2)
        ts_rt_fail(c, "linalg.inv: (Batch element %lld): The diagonal element %d is zero, the inversion could not be "
                   "completed because the input matrix is singular.",
                   (long long)b, info);
      else
        ts_rt_fail(c, "linalg.inv: The diagonal element %d is zero, the inversion could not be completed because the "
                   "input matrix is singular.",
                   info);
      ok = false;
    }
    /* to row-major */
    for (int64_t i = 0; ok && i < n; i++)
      for (int64_t j = i + 1; j < n; j++) {
        double t = x[i * n + j];
        x[i * n + j] = x[j * n + i];
        x[j * n + i] = t;
      }
  }
  ts_rt_free(lu);
  ts_rt_free(piv);
  ts_rt_tensor_release(wc);
  if (!ok) {
    if (out) ts_rt_tensor_release(out);
    return NULL;
  }
  return nnu_cast_owned(c, out, (ts_dtype)a->dtype);
}

static bool bl_k_matrix_power(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  int64_t n;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_int(c, call, 1, &n)) return false;
  if (a->ndim < 2) return ts_rt_fail(c, "linalg.matrix_power: The input tensor A must have at least 2 dimensions.");
  int64_t r = a->sizes[a->ndim - 2], k = a->sizes[a->ndim - 1];
  if (r != k)
    return ts_rt_fail(c, "linalg.matrix_power: A must be batches of square matrices, but they are %lld by %lld matrices",
                      (long long)r, (long long)k);
  if (n == 0) {
    ts_rt_tensor *out = ts_rt_tensor_new(c, (ts_dtype)a->dtype, a->ndim, a->sizes, true);
    if (!out) return false;
    char *p = ts_rt_tensor_data(out);
    size_t es = ts_dtype_size((ts_dtype)a->dtype);
    int64_t batch = k ? ts_rt_tensor_numel(a) / (k * k) : 0;
    for (int64_t b = 0; b < batch; b++)
      for (int64_t i = 0; i < k; i++) ts_rt_store_f64(p + (size_t)(b * k * k + i * k + i) * es, (ts_dtype)a->dtype, 1);
    return nnu_ret(call, out);
  }
  ts_rt_tensor *base = NULL;
  if (n < 0) {
    if (!ts_rt_dtype_is_float((ts_dtype)a->dtype))
      return ts_rt_fail(c, "linalg.inv: Expected a floating point or complex tensor as input. Got %s",
                        ts_rt_dtype_name((ts_dtype)a->dtype));
    if (!(base = bl_inverse(c, a))) return false;
    n = n == INT64_MIN ? INT64_MAX : -n;
  } else {
    if (!(base = ts_rt_clone(c, a))) return false;
  }
  /* binary powering: result = prod of base^(2^i) over the set bits */
  ts_rt_tensor *res = NULL;
  bool ok = true;
  while (ok) {
    if (n & 1) ok = res ? bl_set(&res, ts_rt_matmul(c, res, base)) : (ts_rt_tensor_retain(base), res = base, true);
    n >>= 1;
    if (!n || !ok) break;
    ok = bl_set(&base, ts_rt_matmul(c, base, base));
  }
  ts_rt_tensor_release(base);
  if (!ok) return bl_set(&res, NULL);
  return nnu_ret(call, res);
}

/* ---------------------------------------------------------- linalg_vander */

/* vander(x [..., n], N): [..., n, N] with column j = x^j (a 0-d x as [1]). */
static bool bl_k_vander(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x;
  int64_t N = 0;
  bool hasN;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_opt_int(c, call, 1, &N, &hasN)) return false;
  ts_dtype dt = (ts_dtype)x->dtype;
  if (dt == TS_DT_BOOL)
    return ts_rt_fail(c, "linalg.vander supports floating point, complex, and integer tensors, but got Bool");
  int64_t n = x->ndim ? x->sizes[x->ndim - 1] : 1;
  if (!hasN) N = n;
  if (N <= 1) return ts_rt_fail(c, "N must be greater than 1.");
  ts_dtype odt = ts_rt_dtype_is_float(dt) ? dt : TS_DT_INT64;
  int64_t osz[TS_RT_MAX_DIMS + 1];
  int32_t nd = x->ndim ? x->ndim : 1;
  if (nd + 1 > TS_RT_MAX_DIMS) return ts_rt_fail(c, "linalg.vander: too many dims");
  if (x->ndim) memcpy(osz, x->sizes, (size_t)x->ndim * sizeof(int64_t));
  else osz[0] = 1;
  osz[nd] = N;
  ts_rt_tensor *xc = ts_rt_clone(c, x);
  if (!xc) return false;
  ts_rt_tensor *out = ts_rt_tensor_new(c, odt, nd + 1, osz, false);
  if (!out) return ts_rt_tensor_release(xc), false;
  int64_t m = ts_rt_tensor_numel(xc);
  const char *xs = ts_rt_tensor_data(xc);
  char *o = ts_rt_tensor_data(out);
  size_t es = ts_dtype_size(dt), oes = ts_dtype_size(odt);
  bool fl = ts_rt_dtype_is_float(dt);
  for (int64_t i = 0; i < m; i++) {
    char *row = o + (size_t)(i * N) * oes;
    if (fl) {
      /* the cumulative product, rounded to the dtype at every step as
       * PyTorch's cumprod */
      double v = ts_rt_load_f64(xs + (size_t)i * es, dt), p = 1;
      for (int64_t j = 0; j < N; j++) {
        ts_rt_store_f64(row + (size_t)j * oes, odt, p);
        p = ts_rt_load_f64(row + (size_t)j * oes, odt) * v;
      }
    } else {
      uint64_t v = (uint64_t)ts_rt_load_i64(xs + (size_t)i * es, dt), p = 1;
      for (int64_t j = 0; j < N; j++, p *= v) ts_rt_store_i64(row + (size_t)j * oes, odt, (int64_t)p);
    }
  }
  ts_rt_tensor_release(xc);
  return nnu_ret(call, out);
}

/* ------------------------------------------- _scaled_dot_product_attention */

/* _scaled_dot_product_attention(q [..., L, E], k [..., S, E], v [..., S, Ev],
 * attn_mask, dropout_p, need_attn_weights, is_causal): PyTorch 1.13's math
 * path: softmax(q / sqrt(E) @ k^T + mask) (a bool mask as 0 / -inf; causal:
 * the lower triangle), dropped out with dropout_p, @ v; the weights are
 * returned whatever need_attn_weights says, as 1.13 does. */
static bool bl_k_sdpa(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *q, *k, *v, *mask;
  double p;
  bool need, causal;
  if (!ts_rt_arg_tensor(c, call, 0, &q) || !ts_rt_arg_tensor(c, call, 1, &k) || !ts_rt_arg_tensor(c, call, 2, &v) ||
      !ts_rt_arg_opt_tensor(c, call, 3, &mask) || !ts_rt_arg_double(c, call, 4, &p) ||
      !ts_rt_arg_bool(c, call, 5, &need) || !ts_rt_arg_bool(c, call, 6, &causal))
    return false;
  if (q->ndim < 2 || k->ndim < 2) return ts_rt_fail(c, "_scaled_dot_product_attention: expected at least 2-d inputs");
  if (causal && mask)
    return ts_rt_fail(c, "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
  ts_rt_tensor *qs = NULL, *kt = NULL, *add = NULL, *attn = NULL, *out = NULL;
  int64_t E = q->sizes[q->ndim - 1];
  bool ok = bl_set(&qs, ts_rt_mul_scalar(c, q, 1.0 / sqrt((double)E))) && bl_set(&kt, ts_rt_transpose(c, k, -2, -1)) &&
            bl_set(&attn, ts_rt_matmul(c, qs, kt));
  if (ok && causal) {
    int64_t sz[2] = {q->sizes[q->ndim - 2], k->sizes[k->ndim - 2]};
    ok = bl_set(&add, ts_rt_tensor_new(c, (ts_dtype)q->dtype, 2, sz, true));
    for (int64_t i = 0; ok && i < sz[0]; i++)
      for (int64_t j = i + 1; j < sz[1]; j++)
        ts_rt_store_f64((char *)ts_rt_tensor_data(add) + (size_t)(i * sz[1] + j) * ts_dtype_size((ts_dtype)q->dtype),
                        (ts_dtype)q->dtype, -INFINITY);
  } else if (ok && mask && mask->dtype == TS_DT_BOOL) {
    ts_rt_tensor *z = ts_rt_tensor_new(c, (ts_dtype)q->dtype, mask->ndim, mask->sizes, true), *nm = NULL;
    ok = z && bl_set(&nm, ts_rt_unary_op(c, TS_PW_logical_not, mask)) &&
         bl_set(&add, ts_rt_masked_fill(c, z, nm, -INFINITY));
    bl_set(&z, NULL), bl_set(&nm, NULL);
  } else if (ok && mask) {
    ts_rt_tensor_retain(mask);
    add = mask;
  }
  if (ok && add) {
    /* attn.add_(mask): the sum in attn's dtype and shape */
    ts_rt_tensor *s = ts_rt_add(c, attn, add, 1);
    ok = s && s->ndim == attn->ndim && ts_rt_tensor_numel(s) == ts_rt_tensor_numel(attn);
    if (s && !ok) ts_rt_fail(c, "output with shape of the attention weights doesn't match the broadcast shape");
    ok = ok && ts_rt_tensor_copy_(c, attn, s);
    if (s) ts_rt_tensor_release(s);
  }
  ok = ok && bl_set(&attn, ts_rt_softmax(c, attn, -1, TS_DT_NONE, false));
  if (ok && p > 0) ok = bl_set(&attn, ts_rt_dropout(c, attn, p, true, false, false, false));
  ok = ok && bl_set(&out, ts_rt_matmul(c, attn, v));
  bl_set(&qs, NULL), bl_set(&kt, NULL), bl_set(&add, NULL);
  if (!ok) {
    bl_set(&attn, NULL), bl_set(&out, NULL);
    return false;
  }
  call->out[0] = ts_iv_tensor(out);
  call->out[1] = ts_iv_tensor(attn);
  return true;
}

const ts_rt_kernel_def ts_rt_kernels_blas2[] = {
    {"aten::_scaled_dot_product_attention", bl_k_sdpa},
    {"aten::addbmm", bl_k_addbmm},
    {"aten::addmv", bl_k_addmv},
    {"aten::addr", bl_k_addr},
    {"aten::dot", bl_k_dot},
    {"aten::inner", bl_k_inner},
    {"aten::linalg_matrix_power", bl_k_matrix_power},
    {"aten::linalg_multi_dot", bl_k_multi_dot},
    {"aten::linalg_vander", bl_k_vander},
    {"aten::linalg_vecdot", bl_k_vecdot},
    {"aten::mv", bl_k_mv},
    {"aten::outer", bl_k_outer},
    {"aten::tensordot", bl_k_tensordot},
    {"aten::trace", bl_k_trace},
    {"aten::vdot", bl_k_dot},
    {NULL, NULL},
};
