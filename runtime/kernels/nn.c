/* runtime/kernels/nn.c: linear algebra (mm, bmm, matmul, linear, addmm,
 * baddbmm through OpenBLAS), softmax, dropout, embedding and padding; the
 * table also lists the kernels of conv.c (with conv3d.c), pool.c and
 * norm.c. (Upsampling is upsample.c's.) */
#include <cblas.h>
#include <limits.h>
#include <math.h>

#include "gemm_small.h"
#include "nn_util.h"

/* ------------------------------------------------------------------ GEMM */

/* A matrix operand: element (i, j) at data + (i * rs + j * cs) elements of
 * the operand's dtype. */
typedef struct nn_mat {
  const void *data;
  int64_t rows, cols, rs, cs;
} nn_mat;

static nn_mat nn_mat_of(const ts_rt_tensor *t, int32_t d0, int32_t d1) {
  nn_mat m = {ts_rt_tensor_data(t), t->sizes[d0], t->sizes[d1], t->strides[d0], t->strides[d1]};
  return m;
}

/* How BLAS can read m in place (row-major): *trans, *ld; false if it cannot. */
static bool nn_blas_layout(const nn_mat *m, bool *trans, int64_t *ld) {
  int64_t r1 = m->rows > 1 ? m->rows : 1, c1 = m->cols > 1 ? m->cols : 1;
  if ((m->cols == 1 || m->cs == 1) && (m->rows == 1 || m->rs >= c1)) {
    *trans = false;
    *ld = m->rows == 1 ? c1 : m->rs;
    return *ld <= INT_MAX;
  }
  if ((m->rows == 1 || m->rs == 1) && (m->cols == 1 || m->cs >= r1)) {
    *trans = true;
    *ld = m->cols == 1 ? r1 : m->cs;
    return *ld <= INT_MAX;
  }
  return false;
}

/* A contiguous float32 or float64 (wdt) copy of m (dtype dt), malloc'd. */
static void *nn_mat_pack(ts_rt_ctx *c, const nn_mat *m, ts_dtype dt, ts_dtype wdt) {
  size_t es = ts_dtype_size(dt), ws = ts_dtype_size(wdt);
  size_t n = (size_t)m->rows * (size_t)m->cols;
  void *buf = ts_rt_malloc(n ? n * ws : 1);
  if (!buf) {
    ts_rt_oom(c);
    return NULL;
  }
  const char *base = m->data;
  for (int64_t i = 0; i < m->rows; i++)
    for (int64_t j = 0; j < m->cols; j++) {
      const char *p = base + (i * m->rs + j * m->cs) * (int64_t)es;
      size_t k = (size_t)(i * m->cols + j);
      if (dt == wdt)
        memcpy((char *)buf + k * ws, p, ws);
      else if (wdt == TS_DT_FLOAT32)
        ((float *)buf)[k] = (float)ts_rt_load_f64(p, dt);
      else
        ((double *)buf)[k] = ts_rt_load_f64(p, dt);
    }
  return buf;
}

/* C[M, N] (contiguous, dtype wdt: float32 or float64) = alpha * A @ B +
 * beta * C, with A and B of dtype dt (== wdt, or converted). */
static bool nn_gemm_real(ts_rt_ctx *c, ts_dtype dt, ts_dtype wdt, const nn_mat *a, const nn_mat *b, void *cdata,
                         double alpha, double beta) {
  int64_t M = a->rows, K = a->cols, N = b->cols;
  if (M == 0 || N == 0) return true;
  if (M > INT_MAX || N > INT_MAX || K > INT_MAX) return ts_rt_fail(c, "matrix too large for BLAS");
  if (K == 0) {
    for (int64_t i = 0; i < M * N; i++) {
      if (wdt == TS_DT_FLOAT32) {
        float *p = (float *)cdata + i;
        *p = beta == 0 ? 0.0f : (float)(beta * *p);
      } else {
        double *p = (double *)cdata + i;
        *p = beta == 0 ? 0.0 : beta * *p;
      }
    }
    return true;
  }
  bool ta = false, tb = false;
  int64_t lda = 0, ldb = 0;
  void *pa = NULL, *pb = NULL;
  const void *da = a->data, *db = b->data;
  if (dt != wdt || !nn_blas_layout(a, &ta, &lda)) {
    if (!(pa = nn_mat_pack(c, a, dt, wdt))) return false;
    da = pa, ta = false, lda = K;
  }
  if (dt != wdt || !nn_blas_layout(b, &tb, &ldb)) {
    if (!(pb = nn_mat_pack(c, b, dt, wdt))) {
      ts_rt_free(pa);
      return false;
    }
    db = pb, tb = false, ldb = N;
  }
  if (wdt == TS_DT_FLOAT32)
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (blasint)M, (blasint)N,
                (blasint)K, (float)alpha, da, (blasint)lda, db, (blasint)ldb, (float)beta, cdata, (blasint)N);
  else
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (blasint)M, (blasint)N,
                (blasint)K, alpha, da, (blasint)lda, db, (blasint)ldb, beta, cdata, (blasint)N);
  ts_rt_free(pa);
  ts_rt_free(pb);
  return true;
}

/* Integer C = alpha * A @ B + beta * C in int64 with wrap-around, stored
 * in dt (C contiguous of dtype dt). */
static void nn_gemm_int(ts_dtype dt, const nn_mat *a, const nn_mat *b, void *cdata, int64_t alpha, int64_t beta) {
  size_t es = ts_dtype_size(dt);
  const char *A = a->data, *B = b->data;
  for (int64_t i = 0; i < a->rows; i++)
    for (int64_t j = 0; j < b->cols; j++) {
      uint64_t acc = 0;
      for (int64_t k = 0; k < a->cols; k++) {
        uint64_t x = (uint64_t)ts_rt_load_i64(A + (i * a->rs + k * a->cs) * (int64_t)es, dt);
        uint64_t y = (uint64_t)ts_rt_load_i64(B + (k * b->rs + j * b->cs) * (int64_t)es, dt);
        acc += x * y;
      }
      char *p = (char *)cdata + (size_t)(i * b->cols + j) * es;
      uint64_t r = (uint64_t)alpha * acc;
      if (beta != 0) r += (uint64_t)beta * (uint64_t)ts_rt_load_i64(p, dt);
      ts_rt_store_i64(p, dt, (int64_t)r);
    }
}

/* C[M, N] (contiguous, of dtype dt) = alpha * A @ B + beta * C for any
 * dtype the matmul family accepts (checked by the caller). */
static bool nn_gemm(ts_rt_ctx *c, ts_dtype dt, const nn_mat *a, const nn_mat *b, void *cdata, double alpha,
                    double beta) {
  if (ts_rt_dtype_is_integral(dt, true)) {
    nn_gemm_int(dt, a, b, cdata, (int64_t)alpha, (int64_t)beta);
    return true;
  }
  if (dt == TS_DT_FLOAT32 || dt == TS_DT_FLOAT64) return nn_gemm_real(c, dt, dt, a, b, cdata, alpha, beta);
  /* half/bfloat16: through a float C */
  int64_t n = a->rows * b->cols;
  float *tmp = ts_rt_malloc(n ? (size_t)n * sizeof(float) : 1);
  if (!tmp) return ts_rt_oom(c);
  size_t es = ts_dtype_size(dt);
  for (int64_t i = 0; i < n; i++) tmp[i] = beta != 0 ? (float)ts_rt_load_f64((char *)cdata + i * (int64_t)es, dt) : 0;
  bool ok = nn_gemm_real(c, dt, TS_DT_FLOAT32, a, b, tmp, alpha, beta);
  for (int64_t i = 0; ok && i < n; i++) ts_rt_store_f64((char *)cdata + i * (int64_t)es, dt, tmp[i]);
  ts_rt_free(tmp);
  return ok;
}

/* The dtype checks of the matmul family: equal dtypes, and the ones 1.13's
 * CPU kernels dispatch on (no half, no bool). */
static bool nn_mm_dtypes(ts_rt_ctx *c, const char *op, const ts_rt_tensor *a, const ts_rt_tensor *b) {
  if (a->dtype != b->dtype)
    return ts_rt_fail(c, "expected scalar type %s but found %s", ts_rt_dtype_name((ts_dtype)a->dtype),
                      ts_rt_dtype_name((ts_dtype)b->dtype));
  if (a->dtype == TS_DT_FLOAT16 || a->dtype == TS_DT_BOOL || !ts_rt_dtype_supported((ts_dtype)a->dtype))
    return nnu_not_impl(c, op, (ts_dtype)a->dtype);
  return true;
}

static bool nn_mm_shapes(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *b) {
  if (a->ndim != 2) return ts_rt_fail(c, "self must be a matrix");
  if (b->ndim != 2) return ts_rt_fail(c, "mat2 must be a matrix");
  if (a->sizes[1] != b->sizes[0])
    return ts_rt_fail(c, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                      (long long)a->sizes[0], (long long)a->sizes[1], (long long)b->sizes[0], (long long)b->sizes[1]);
  return true;
}

/* out = beta * self (broadcast) + alpha * a @ b for 2-d a, b; self NULL
 * means beta is ignored. */
static ts_rt_tensor *nn_addmm(ts_rt_ctx *c, const char *op, const ts_rt_tensor *self, const ts_rt_tensor *a,
                              const ts_rt_tensor *b, double beta, double alpha) {
  if (!nn_mm_shapes(c, a, b) || !nn_mm_dtypes(c, op, a, b)) return NULL;
  if (self && self->dtype != a->dtype) {
    nn_mm_dtypes(c, op, self, a);
    return NULL;
  }
  int64_t sz[2] = {a->sizes[0], b->sizes[1]};
  ts_rt_tensor *out = ts_rt_tensor_new(c, (ts_dtype)a->dtype, 2, sz, true);
  if (!out) return NULL;
  if (self && beta != 0 && !ts_rt_tensor_copy_(c, out, self)) goto fail;
  nn_mat ma = nn_mat_of(a, 0, 1), mb = nn_mat_of(b, 0, 1);
  if (!nn_gemm(c, (ts_dtype)a->dtype, &ma, &mb, ts_rt_tensor_data(out), alpha, self ? beta : 0)) goto fail;
  return out;
fail:
  ts_rt_tensor_release(out);
  return NULL;
}

ts_rt_tensor *ts_rt_mm(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *b) {
  return nn_addmm(c, "addmm_impl_cpu_", NULL, a, b, 0, 1);
}

ts_rt_tensor *ts_rt_addmm(ts_rt_ctx *c, const ts_rt_tensor *self, const ts_rt_tensor *a, const ts_rt_tensor *b,
                          double beta, double alpha) {
  return nn_addmm(c, "addmm_impl_cpu_", self, a, b, beta, alpha);
}

/* beta * self + alpha * a[B] @ b[B] for 3-d a, b (self NULL: none). */
static ts_rt_tensor *nn_baddbmm(ts_rt_ctx *c, const char *op, const ts_rt_tensor *self, const ts_rt_tensor *a,
                                const ts_rt_tensor *b, double beta, double alpha) {
  if (a->ndim != 3) return ts_rt_fail(c, "batch1 must be a 3D tensor"), NULL;
  if (b->ndim != 3) return ts_rt_fail(c, "batch2 must be a 3D tensor"), NULL;
  if (b->sizes[0] != a->sizes[0] || b->sizes[1] != a->sizes[2]) {
    ts_rt_fail(c, "Expected size for first two dimensions of batch2 tensor to be: [%lld, %lld] but got: [%lld, %lld].",
               (long long)a->sizes[0], (long long)a->sizes[2], (long long)b->sizes[0], (long long)b->sizes[1]);
    return NULL;
  }
  if (!nn_mm_dtypes(c, op, a, b)) return NULL;
  if (self && self->dtype != a->dtype) {
    nn_mm_dtypes(c, op, self, a);
    return NULL;
  }
  int64_t sz[3] = {a->sizes[0], a->sizes[1], b->sizes[2]};
  ts_rt_tensor *out = ts_rt_tensor_new(c, (ts_dtype)a->dtype, 3, sz, true);
  if (!out) return NULL;
  if (self && beta != 0 && !ts_rt_tensor_copy_(c, out, self)) goto fail;
  size_t es = ts_dtype_size((ts_dtype)a->dtype);
  for (int64_t i = 0; i < sz[0]; i++) {
    nn_mat ma = nn_mat_of(a, 1, 2), mb = nn_mat_of(b, 1, 2);
    ma.data = (const char *)ma.data + i * a->strides[0] * (int64_t)es;
    mb.data = (const char *)mb.data + i * b->strides[0] * (int64_t)es;
    char *cd = (char *)ts_rt_tensor_data(out) + (size_t)(i * sz[1] * sz[2]) * es;
    if (!nn_gemm(c, (ts_dtype)a->dtype, &ma, &mb, cd, alpha, self ? beta : 0)) goto fail;
  }
  return out;
fail:
  ts_rt_tensor_release(out);
  return NULL;
}

ts_rt_tensor *ts_rt_bmm(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *b) {
  return nn_baddbmm(c, "bmm", NULL, a, b, 0, 1);
}

ts_rt_tensor *ts_rt_baddbmm(ts_rt_ctx *c, const ts_rt_tensor *self, const ts_rt_tensor *a, const ts_rt_tensor *b,
                            double beta, double alpha) {
  return nn_baddbmm(c, "baddbmm", self, a, b, beta, alpha);
}

/* A fresh contiguous tensor's data seen with other (contiguous) sizes. */
static ts_rt_tensor *nn_reshape_owned(ts_rt_ctx *c, ts_rt_tensor *t, int32_t ndim, const int64_t *sizes) {
  int64_t st[TS_RT_MAX_DIMS];
  ts_rt_strides_contiguous(ndim, sizes, st);
  ts_rt_tensor *v = ts_rt_tensor_view(c, t, t->offset, ndim, sizes, st);
  ts_rt_tensor_release(t);
  return v;
}

/* The general case of torch.matmul: batch dims broadcast, 1-d operands
 * promoted to a row (a) or a column (b) and the added dim dropped after. */
static ts_rt_tensor *nn_matmul_batched(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *b) {
  int32_t da = a->ndim, db = b->ndim;
  int64_t asz[TS_RT_MAX_DIMS + 1], ast[TS_RT_MAX_DIMS + 1], bsz[TS_RT_MAX_DIMS + 1], bst[TS_RT_MAX_DIMS + 1];
  int32_t na = da, nb = db;
  memcpy(asz, a->sizes, (size_t)da * sizeof(int64_t));
  memcpy(ast, a->strides, (size_t)da * sizeof(int64_t));
  memcpy(bsz, b->sizes, (size_t)db * sizeof(int64_t));
  memcpy(bst, b->strides, (size_t)db * sizeof(int64_t));
  if (da == 1) { /* [k] -> [1, k] */
    asz[1] = asz[0], ast[1] = ast[0], asz[0] = 1, ast[0] = 0, na = 2;
  }
  if (db == 1) { /* [k] -> [k, 1] */
    bsz[1] = 1, bst[1] = 0, nb = 2;
  }
  int64_t n = asz[na - 2], k = asz[na - 1], k2 = bsz[nb - 2], p = bsz[nb - 1];
  int32_t nbat = 0;
  int64_t bat[TS_RT_MAX_DIMS];
  if (!ts_rt_broadcast_shapes(c, na - 2, asz, nb - 2, bsz, &nbat, bat)) return NULL;
  int64_t nbatch = 1;
  for (int32_t i = 0; i < nbat; i++)
    if (!nnu_mul(nbatch, bat[i], &nbatch)) return ts_rt_fail(c, "matmul: batch too large"), NULL;
  if (k != k2) {
    /* 1.13 folds b's batch into its rows when a has 1 or 2 dims */
    int64_t rows = p;
    for (int32_t i = 0; i < nb - 2; i++) rows *= bsz[i];
    if (da == 2)
      ts_rt_fail(c, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)", (long long)rows,
                 (long long)k2, (long long)k, (long long)n);
    else if (da == 1)
      ts_rt_fail(c, "size mismatch, got %lld, %lldx%lld,%lld", (long long)rows, (long long)rows, (long long)k2,
                 (long long)k);
    else
      ts_rt_fail(c, "Expected size for first two dimensions of batch2 tensor to be: [%lld, %lld] but got: [%lld, "
                    "%lld].",
                 (long long)nbatch, (long long)k, (long long)nbatch, (long long)k2);
    return NULL;
  }
  if (!nn_mm_dtypes(c, "bmm", a, b)) return NULL;
  int64_t osz[TS_RT_MAX_DIMS + 2];
  memcpy(osz, bat, (size_t)nbat * sizeof(int64_t));
  osz[nbat] = n, osz[nbat + 1] = p;
  if (nbat + 2 > TS_RT_MAX_DIMS) return ts_rt_fail(c, "matmul: too many dimensions"), NULL;
  ts_rt_tensor *out = ts_rt_tensor_new(c, (ts_dtype)a->dtype, nbat + 2, osz, true);
  if (!out) return NULL;
  size_t es = ts_dtype_size((ts_dtype)a->dtype);
  int64_t idx[TS_RT_MAX_DIMS] = {0};
  for (int64_t bi = 0; bi < nbatch; bi++) {
    int64_t oa = 0, ob = 0;
    for (int32_t d = 0; d < nbat; d++) {
      int32_t xa = d - (nbat - (na - 2)), xb = d - (nbat - (nb - 2));
      if (xa >= 0 && asz[xa] != 1) oa += idx[d] * ast[xa];
      if (xb >= 0 && bsz[xb] != 1) ob += idx[d] * bst[xb];
    }
    nn_mat ma = {(const char *)ts_rt_tensor_data(a) + oa * (int64_t)es, n, k, ast[na - 2], ast[na - 1]};
    nn_mat mb = {(const char *)ts_rt_tensor_data(b) + ob * (int64_t)es, k, p, bst[nb - 2], bst[nb - 1]};
    if (!nn_gemm(c, (ts_dtype)a->dtype, &ma, &mb, (char *)ts_rt_tensor_data(out) + (size_t)(bi * n * p) * es, 1, 0)) {
      ts_rt_tensor_release(out);
      return NULL;
    }
    for (int32_t d = nbat - 1; d >= 0; d--) {
      if (++idx[d] < bat[d]) break;
      idx[d] = 0;
    }
  }
  if (da > 1 && db > 1) return out;
  int32_t rn = 0;
  int64_t rsz[TS_RT_MAX_DIMS + 2];
  for (int32_t i = 0; i < nbat; i++) rsz[rn++] = bat[i];
  if (da > 1) rsz[rn++] = n;
  if (db > 1) rsz[rn++] = p;
  return nn_reshape_owned(c, out, rn, rsz);
}

ts_rt_tensor *ts_rt_matmul(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *b) {
  int32_t da = a->ndim, db = b->ndim;
  if (da == 0 || db == 0)
    return ts_rt_fail(c, "both arguments to matmul need to be at least 1D, but they are %dD and %dD", (int)da, (int)db),
           NULL;
  if (da == 1 && db == 1) {
    if (a->sizes[0] != b->sizes[0]) {
      ts_rt_fail(c,
                 "inconsistent tensor size, expected tensor [%lld] and src [%lld] to have the same number of elements, "
                 "but got %lld and %lld elements respectively",
                 (long long)a->sizes[0], (long long)b->sizes[0], (long long)a->sizes[0], (long long)b->sizes[0]);
      return NULL;
    }
    if (!nn_mm_dtypes(c, "dot", a, b)) return NULL;
    ts_rt_tensor *out = ts_rt_tensor_new(c, (ts_dtype)a->dtype, 0, NULL, true);
    if (!out) return NULL;
    nn_mat ma = {ts_rt_tensor_data(a), 1, a->sizes[0], 0, a->strides[0]};
    nn_mat mb = {ts_rt_tensor_data(b), b->sizes[0], 1, b->strides[0], 0};
    if (!nn_gemm(c, (ts_dtype)a->dtype, &ma, &mb, ts_rt_tensor_data(out), 1, 0)) {
      ts_rt_tensor_release(out);
      return NULL;
    }
    return out;
  }
  if (da == 2 && db == 1) {
    if (a->sizes[1] != b->sizes[0]) {
      ts_rt_fail(c, "size mismatch, got %lld, %lldx%lld,%lld", (long long)a->sizes[0], (long long)a->sizes[0],
                 (long long)a->sizes[1], (long long)b->sizes[0]);
      return NULL;
    }
    if (!nn_mm_dtypes(c, "addmv_impl_cpu", a, b)) return NULL;
    return nn_matmul_batched(c, a, b);
  }
  if (da == 2 && db == 2) return ts_rt_mm(c, a, b);
  if (da == 1 && db == 2) {
    if (a->sizes[0] != b->sizes[0]) {
      ts_rt_fail(c, "mat1 and mat2 shapes cannot be multiplied (1x%lld and %lldx%lld)", (long long)a->sizes[0],
                 (long long)b->sizes[0], (long long)b->sizes[1]);
      return NULL;
    }
    if (!nn_mm_dtypes(c, "addmm_impl_cpu_", a, b)) return NULL;
    return nn_matmul_batched(c, a, b);
  }
  if (da >= 3 && db <= 2) {
    /* fold a's batch dims into its rows: one GEMM */
    int64_t k = a->sizes[da - 1], rows = ts_rt_tensor_numel(a) / (k ? k : 1);
    if (k == 0) rows = 1;
    for (int32_t i = 0; k == 0 && i < da - 1; i++) rows *= a->sizes[i];
    if (k != b->sizes[0]) {
      if (db == 1)
        ts_rt_fail(c, "size mismatch, got %lld, %lldx%lld,%lld", (long long)rows, (long long)rows, (long long)k,
                   (long long)b->sizes[0]);
      else
        ts_rt_fail(c, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)", (long long)rows,
                   (long long)k, (long long)b->sizes[0], (long long)b->sizes[1]);
      return NULL;
    }
    if (!nn_mm_dtypes(c, db == 1 ? "addmv_impl_cpu" : "addmm_impl_cpu_", a, b)) return NULL;
    ts_rt_tensor *ac = ts_rt_tensor_contiguous(c, (ts_rt_tensor *)a);
    if (!ac) return NULL;
    int64_t p = db == 2 ? b->sizes[1] : 1;
    int64_t osz[TS_RT_MAX_DIMS];
    memcpy(osz, a->sizes, (size_t)(da - 1) * sizeof(int64_t));
    osz[da - 1] = p;
    ts_rt_tensor *out = ts_rt_tensor_new(c, (ts_dtype)a->dtype, db == 2 ? da : da - 1, osz, true);
    if (out) {
      nn_mat ma = {ts_rt_tensor_data(ac), rows, k, k, 1};
      nn_mat mb = {ts_rt_tensor_data(b), k, p, b->strides[0], db == 2 ? b->strides[1] : 0};
      if (!nn_gemm(c, (ts_dtype)a->dtype, &ma, &mb, ts_rt_tensor_data(out), 1, 0)) {
        ts_rt_tensor_release(out);
        out = NULL;
      }
    }
    ts_rt_tensor_release(ac);
    return out;
  }
  return nn_matmul_batched(c, a, b);
}

ts_rt_tensor *ts_rt_linear(ts_rt_ctx *c, const ts_rt_tensor *x, const ts_rt_tensor *w, const ts_rt_tensor *bias) {
  if (x->ndim == 0 || w->ndim != 2) {
    if (w->ndim > 2)
      return ts_rt_fail(c, "t() expects a tensor with <= 2 dimensions, but self is %dD", (int)w->ndim), NULL;
    ts_rt_tensor *r = ts_rt_matmul(c, x, w);
    if (!r || !bias) return r;
    ts_rt_tensor *s = ts_rt_add(c, r, bias, 1);
    ts_rt_tensor_release(r);
    return s;
  }
  int32_t nd = x->ndim;
  int64_t k = x->sizes[nd - 1], rows = 1;
  for (int32_t i = 0; i < nd - 1; i++) rows *= x->sizes[i];
  if (k != w->sizes[1]) {
    ts_rt_fail(c, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)", (long long)rows, (long long)k,
               (long long)w->sizes[1], (long long)w->sizes[0]);
    return NULL;
  }
  if (!nn_mm_dtypes(c, "addmm_impl_cpu_", x, w)) return NULL;
  if (bias && bias->dtype != x->dtype) return nn_mm_dtypes(c, "addmm_impl_cpu_", x, bias), NULL;
  ts_rt_tensor *xc = nd == 2 ? (ts_rt_tensor_retain((ts_rt_tensor *)x), (ts_rt_tensor *)x)
                             : ts_rt_tensor_contiguous(c, (ts_rt_tensor *)x);
  if (!xc) return NULL;
  int64_t osz[TS_RT_MAX_DIMS];
  memcpy(osz, x->sizes, (size_t)(nd - 1) * sizeof(int64_t));
  osz[nd - 1] = w->sizes[0];
  ts_rt_tensor *out = ts_rt_tensor_new(c, (ts_dtype)x->dtype, nd, osz, true);
  bool ok = out != NULL;
  if (ok && bias) ok = ts_rt_tensor_copy_(c, out, bias);
  if (ok) {
    nn_mat ma = nd == 2 ? nn_mat_of(xc, 0, 1) : (nn_mat){ts_rt_tensor_data(xc), rows, k, k, 1};
    nn_mat mb = {ts_rt_tensor_data(w), k, w->sizes[0], w->strides[1], w->strides[0]};
    ok = nn_gemm(c, (ts_dtype)x->dtype, &ma, &mb, ts_rt_tensor_data(out), 1, bias ? 1 : 0);
  }
  ts_rt_tensor_release(xc);
  if (!ok && out) {
    ts_rt_tensor_release(out);
    out = NULL;
  }
  return out;
}

/* --------------------------------------------------------------- softmax */

typedef struct nn_smx {
  const void *in;
  void *out;
  int64_t n, inner;
  bool log, dbl;
} nn_smx;

/* Softmax of lanes [b, e): lane l is (outer l / inner, inner l % inner). */
static void nn_softmax_range(void *arg, int64_t b, int64_t e) {
  const nn_smx *s = arg;
  int64_t n = s->n, in = s->inner;
  for (int64_t l = b; l < e; l++) {
    int64_t base = (l / in) * n * in + l % in;
    if (s->dbl) {
      const double *x = (const double *)s->in + base;
      double *y = (double *)s->out + base, mx = -INFINITY, sum = 0;
      for (int64_t i = 0; i < n; i++) mx = x[i * in] > mx || isnan(x[i * in]) ? x[i * in] : mx;
      for (int64_t i = 0; i < n; i++) sum += exp(x[i * in] - mx);
      double ls = log(sum);
      for (int64_t i = 0; i < n; i++) y[i * in] = s->log ? x[i * in] - mx - ls : exp(x[i * in] - mx) / sum;
    } else {
      const float *x = (const float *)s->in + base;
      float *y = (float *)s->out + base, mx = -INFINITY;
      double sum = 0;
      for (int64_t i = 0; i < n; i++) mx = x[i * in] > mx || isnan(x[i * in]) ? x[i * in] : mx;
      for (int64_t i = 0; i < n; i++) {
        float v = expf(x[i * in] - mx);
        if (!s->log) y[i * in] = v;
        sum += v;
      }
      if (s->log) {
        float ls = (float)log(sum);
        for (int64_t i = 0; i < n; i++) y[i * in] = x[i * in] - mx - ls;
      } else {
        float inv = (float)(1.0 / sum);
        for (int64_t i = 0; i < n; i++) y[i * in] *= inv;
      }
    }
  }
}

ts_rt_tensor *ts_rt_softmax(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t dim, ts_dtype dtype, bool log) {
  int64_t d = 0;
  if (!ts_rt_wrap_dim(c, dim, a->ndim, &d)) return NULL;
  ts_dtype dt = dtype == TS_DT_NONE ? (ts_dtype)a->dtype : dtype;
  if (dt != TS_DT_FLOAT32 && dt != TS_DT_FLOAT64 && dt != TS_DT_BFLOAT16) {
    bool last = a->ndim == 0 || d == a->ndim - 1;
    return nnu_not_impl(c, log ? (last ? "log_softmax_lastdim_kernel_impl" : "log_softmax_kernel_impl")
                               : (last ? "softmax_lastdim_kernel_impl" : "softmax_kernel_impl"),
                        dt),
           NULL;
  }
  ts_dtype wdt = nnu_work_dtype(dt);
  ts_rt_tensor *x = nnu_contig_as(c, a, wdt);
  if (!x) return NULL;
  ts_rt_tensor *y = ts_rt_tensor_new(c, wdt, a->ndim, a->sizes, false);
  if (y) {
    int64_t n = a->ndim ? a->sizes[d] : 1, inner = 1, outer = 1;
    for (int32_t i = 0; i < a->ndim; i++) {
      if (i < d) outer *= a->sizes[i];
      if (i > d) inner *= a->sizes[i];
    }
    nn_smx s = {ts_rt_tensor_data(x), ts_rt_tensor_data(y), n, inner, log, wdt == TS_DT_FLOAT64};
    if (n > 0) ts_rt_parallel_for(c, outer * inner, 32768 / n + 1, nn_softmax_range, &s);
  }
  ts_rt_tensor_release(x);
  return nnu_cast_owned(c, y, dt);
}

static bool nn_k_softmax_common(ts_rt_ctx *c, ts_rt_call *call, bool log) {
  ts_rt_tensor *a = NULL;
  int64_t dim = 0;
  ts_dtype dt = TS_DT_NONE;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_int(c, call, 1, &dim) || !ts_rt_arg_opt_dtype(c, call, 2, &dt))
    return false;
  return nnu_ret(call, ts_rt_softmax(c, a, dim, dt, log));
}

static bool nn_k_softmax(ts_rt_ctx *c, ts_rt_call *call) { return nn_k_softmax_common(c, call, false); }
static bool nn_k_log_softmax(ts_rt_ctx *c, ts_rt_call *call) { return nn_k_softmax_common(c, call, true); }

/* ----------------------------------------------------------- matmul kernels */

/* x [..., K] @ B (+ bias[N]) through the small GEMM (gemm_small.c), when
 * input wi of the call is a constant float32 matrix that packs: B = w^T
 * for linear (trans), B = w for mm/matmul/addmm. NULL with no error when it
 * does not apply (the caller takes the general path, which also reports
 * any shape or dtype error). */
static ts_rt_tensor *nn_gemm_small(ts_rt_ctx *c, const ts_rt_call *call, const ts_rt_tensor *x, uint32_t wi,
                                   bool trans, const ts_rt_tensor *bias) {
  int32_t nd = x->ndim;
  if (!ts_rt_call_input_from_constant(call, wi) || x->dtype != TS_DT_FLOAT32 || nd < 1 || nd > TS_RT_MAX_DIMS)
    return NULL;
  int64_t K = x->sizes[nd - 1], M = K ? ts_rt_tensor_numel(x) / K : 0, lda = K;
  if (nd == 2) {
    if (x->strides[1] != 1 && K != 1) return NULL;
    lda = x->strides[0];
  } else if (!ts_rt_tensor_is_contiguous(x)) {
    return NULL;
  }
  const ts_rt_gemm_pack *p = ts_rt_gemm_pack_input(call, wi, trans, M);
  if (!p || ts_rt_gemm_pack_k(p) != K) return NULL;
  int64_t N = ts_rt_gemm_pack_n(p);
  if (bias && (bias->dtype != TS_DT_FLOAT32 || bias->ndim != 1 || bias->sizes[0] != N ||
               (N > 1 && bias->strides[0] != 1)))
    return NULL;
  int64_t osz[TS_RT_MAX_DIMS];
  memcpy(osz, x->sizes, (size_t)(nd - 1) * sizeof(int64_t));
  osz[nd - 1] = N;
  ts_rt_tensor *out = ts_rt_tensor_new(c, TS_DT_FLOAT32, nd, osz, false);
  if (!out) return NULL;
  ts_rt_gemm_small(c, p, M, ts_rt_tensor_data(x), lda, bias ? ts_rt_tensor_data(bias) : NULL, ts_rt_tensor_data(out),
                   N);
  return out;
}

static bool nn_k_mm(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL, *b = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_tensor(c, call, 1, &b)) return false;
  ts_rt_tensor *r = a->ndim == 2 && b->ndim == 2 ? nn_gemm_small(c, call, a, 1, false, NULL) : NULL;
  if (r || c->failed) return nnu_ret(call, r);
  return nnu_ret(call, ts_rt_mm(c, a, b));
}

static bool nn_k_bmm(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL, *b = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_tensor(c, call, 1, &b)) return false;
  return nnu_ret(call, ts_rt_bmm(c, a, b));
}

static bool nn_k_matmul(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL, *b = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_tensor(c, call, 1, &b)) return false;
  ts_rt_tensor *r = b->ndim == 2 ? nn_gemm_small(c, call, a, 1, false, NULL) : NULL;
  if (r || c->failed) return nnu_ret(call, r);
  return nnu_ret(call, ts_rt_matmul(c, a, b));
}

static bool nn_k_linear(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x = NULL, *w = NULL, *b = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_tensor(c, call, 1, &w) || !ts_rt_arg_opt_tensor(c, call, 2, &b))
    return false;
  ts_rt_tensor *r = w->ndim == 2 ? nn_gemm_small(c, call, x, 1, true, b) : NULL;
  if (r || c->failed) return nnu_ret(call, r);
  return nnu_ret(call, ts_rt_linear(c, x, w, b));
}

static bool nn_k_addmm(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *s = NULL, *a = NULL, *b = NULL;
  double beta = 0, alpha = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &s) || !ts_rt_arg_tensor(c, call, 1, &a) || !ts_rt_arg_tensor(c, call, 2, &b) ||
      !ts_rt_arg_double(c, call, 3, &beta) || !ts_rt_arg_double(c, call, 4, &alpha))
    return false;
  ts_rt_tensor *r = beta == 1 && alpha == 1 && a->ndim == 2 && b->ndim == 2 && s->ndim == 1
                        ? nn_gemm_small(c, call, a, 2, false, s)
                        : NULL;
  if (r || c->failed) return nnu_ret(call, r);
  return nnu_ret(call, ts_rt_addmm(c, s, a, b, beta, alpha));
}

static bool nn_k_baddbmm(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *s = NULL, *a = NULL, *b = NULL;
  double beta = 0, alpha = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &s) || !ts_rt_arg_tensor(c, call, 1, &a) || !ts_rt_arg_tensor(c, call, 2, &b) ||
      !ts_rt_arg_double(c, call, 3, &beta) || !ts_rt_arg_double(c, call, 4, &alpha))
    return false;
  return nnu_ret(call, ts_rt_baddbmm(c, s, a, b, beta, alpha));
}


/* --------------------------------------------------------------- dropout */

/* A small PRNG (splitmix64) for training-mode dropout: PyTorch's random
 * stream cannot be reproduced anyway. */
static uint64_t nn_rand_next(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Dropout as ATen's _dropout_impl: the input itself when p == 0, not
 * training or empty; zeros for p == 1; else input * mask / (1 - p), the mask
 * per element (per channel for feature dropout). */
static ts_rt_tensor *nn_dropout(ts_rt_ctx *c, ts_rt_tensor *x, double p, bool train, bool feature) {
  if (p < 0 || p > 1) return ts_rt_fail(c, "dropout probability has to be between 0 and 1, but got %g", p), NULL;
  if (p == 0 || !train || ts_rt_tensor_numel(x) == 0) {
    ts_rt_tensor_retain(x);
    return x;
  }
  if (!ts_rt_dtype_is_float((ts_dtype)x->dtype))
    return nnu_not_impl(c, "bernoulli_scalar_cpu_", (ts_dtype)x->dtype), NULL;
  int64_t msz[TS_RT_MAX_DIMS];
  int32_t nd = x->ndim;
  for (int32_t i = 0; i < nd; i++) msz[i] = feature && i >= 2 ? 1 : x->sizes[i];
  if (feature && nd < 2) return ts_rt_fail(c, "Feature dropout requires at least 2 dimensions in the input"), NULL;
  ts_rt_tensor *mask = ts_rt_tensor_new(c, TS_DT_FLOAT32, nd, msz, false);
  if (!mask) return NULL;
  /* runs of a compiled model may drop out at once on several threads */
  static uint64_t seed_counter;
  uint64_t seed = __atomic_add_fetch(&seed_counter, 1, __ATOMIC_RELAXED);
  uint64_t st = (uint64_t)(uintptr_t)x ^ (seed * 0x2545F4914F6CDD1Dull);
  float *m = ts_rt_tensor_data(mask);
  int64_t n = ts_rt_tensor_numel(mask);
  float keep = (float)(p == 1 ? 0.0 : 1.0 / (1.0 - p));
  for (int64_t i = 0; i < n; i++) {
    double u = (double)(nn_rand_next(&st) >> 11) * (1.0 / 9007199254740992.0);
    m[i] = p == 1 || u < p ? 0.0f : keep;
  }
  ts_rt_tensor *r = ts_rt_binary_op(c, TS_PW_mul, x, mask);
  ts_rt_tensor_release(mask);
  return nnu_cast_owned(c, r, (ts_dtype)x->dtype);
}

ts_rt_tensor *ts_rt_dropout(ts_rt_ctx *c, const ts_rt_tensor *x, double p, bool train) {
  return nn_dropout(c, (ts_rt_tensor *)x, p, train, false);
}

static bool nn_k_dropout_common(ts_rt_ctx *c, ts_rt_call *call, bool feature, bool inplace) {
  ts_rt_tensor *x = NULL;
  double p = 0;
  bool train = false;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_double(c, call, 1, &p) || !ts_rt_arg_bool(c, call, 2, &train))
    return false;
  ts_rt_tensor *r = nn_dropout(c, x, p, train, feature);
  if (!r) return false;
  if (inplace && r != x) {
    bool ok = ts_rt_tensor_copy_(c, x, r);
    ts_rt_tensor_release(r);
    if (!ok) return false;
    ts_rt_tensor_retain(x);
    r = x;
  }
  return nnu_ret(call, r);
}

static bool nn_k_dropout(ts_rt_ctx *c, ts_rt_call *call) { return nn_k_dropout_common(c, call, false, false); }
static bool nn_k_dropout_(ts_rt_ctx *c, ts_rt_call *call) { return nn_k_dropout_common(c, call, false, true); }
static bool nn_k_feature_dropout(ts_rt_ctx *c, ts_rt_call *call) { return nn_k_dropout_common(c, call, true, false); }

/* ------------------------------------------------------------- embedding */

static bool nn_k_embedding(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *w = NULL, *idx = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &w) || !ts_rt_arg_tensor(c, call, 1, &idx)) return false;
  if (w->ndim != 2) return ts_rt_fail(c, "'weight' must be 2-D");
  if (idx->dtype != TS_DT_INT64 && idx->dtype != TS_DT_INT32) {
    return ts_rt_fail(c,
                      "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, "
                      "Int; but got torch.%sTensor instead (while checking arguments for embedding)",
                      ts_rt_dtype_name((ts_dtype)idx->dtype));
  }
  if (idx->ndim + 1 > TS_RT_MAX_DIMS) return ts_rt_fail(c, "embedding: too many dimensions");
  int64_t osz[TS_RT_MAX_DIMS];
  memcpy(osz, idx->sizes, (size_t)idx->ndim * sizeof(int64_t));
  int64_t V = w->sizes[0], D = w->sizes[1];
  osz[idx->ndim] = D;
  ts_rt_tensor *ic = ts_rt_tensor_contiguous(c, idx);
  if (!ic) return false;
  ts_rt_tensor *out = ts_rt_tensor_new(c, (ts_dtype)w->dtype, idx->ndim + 1, osz, false);
  if (!out) {
    ts_rt_tensor_release(ic);
    return false;
  }
  int64_t n = ts_rt_tensor_numel(ic);
  size_t es = ts_dtype_size((ts_dtype)w->dtype);
  const char *wd = ts_rt_tensor_data(w);
  char *od = ts_rt_tensor_data(out);
  for (int64_t i = 0; i < n; i++) {
    int64_t k =
        ic->dtype == TS_DT_INT64 ? ((int64_t *)ts_rt_tensor_data(ic))[i] : ((int32_t *)ts_rt_tensor_data(ic))[i];
    if (k < 0 || k >= V) {
      ts_rt_tensor_release(ic);
      ts_rt_tensor_release(out);
      return ts_rt_fail(c, "index out of range in self");
    }
    const char *row = wd + k * w->strides[0] * (int64_t)es;
    char *dst = od + (size_t)(i * D) * es;
    if (w->strides[1] == 1)
      memcpy(dst, row, (size_t)D * es);
    else
      for (int64_t j = 0; j < D; j++) memcpy(dst + (size_t)j * es, row + j * w->strides[1] * (int64_t)es, es);
  }
  ts_rt_tensor_release(ic);
  return nnu_ret(call, out);
}
NNU_OUT_KERNEL(nn_k_embedding_out, nn_k_embedding, 1)

/* --------------------------------------------------------------- padding */

/* constant_pad_nd: pads the last len(pad)/2 dims (pad[0], pad[1] for the
 * last); negative pads crop. */
static ts_rt_tensor *nn_constant_pad(ts_rt_ctx *c, const ts_rt_tensor *x, const int64_t *pad, uint32_t npad,
                                     double value) {
  int32_t nd = x->ndim;
  if (npad % 2) return ts_rt_fail(c, "Length of pad must be even but instead it equals %u", (unsigned)npad), NULL;
  if ((int64_t)npad / 2 > nd)
    return ts_rt_fail(c,
                      "Length of pad should be no more than twice the number of dimensions of the input. Pad length "
                      "is %u while the input has %d dimensions.",
                      (unsigned)npad, (int)nd),
           NULL;
  int64_t osz[TS_RT_MAX_DIMS], lo[TS_RT_MAX_DIMS] = {0}, hi[TS_RT_MAX_DIMS] = {0};
  for (int32_t i = 0; i < nd; i++) osz[i] = x->sizes[i];
  for (uint32_t k = 0; k < npad / 2; k++) {
    int32_t d = nd - 1 - (int32_t)k;
    lo[d] = pad[2 * k], hi[d] = pad[2 * k + 1];
    osz[d] = x->sizes[d] + lo[d] + hi[d];
    if (osz[d] < 0)
      return ts_rt_fail(c,
                        "The input size %lld, plus negative padding %lld and %lld resulted in a negative output size, "
                        "which is invalid. Check dimension %d of your input.",
                        (long long)x->sizes[d], (long long)lo[d], (long long)hi[d], (int)d),
             NULL;
  }
  ts_rt_tensor *out = ts_rt_tensor_new(c, (ts_dtype)x->dtype, nd, osz, false);
  if (!out) return NULL;
  int64_t n = ts_rt_tensor_numel(out);
  size_t es = ts_dtype_size((ts_dtype)x->dtype);
  char *od = ts_rt_tensor_data(out);
  if (n > 0) {
    ts_rt_store_f64(od, (ts_dtype)x->dtype, value);
    for (int64_t i = 1; i < n; i++) memcpy(od + (size_t)i * es, od, es);
  }
  /* the overlap of input and output */
  int64_t xoff = x->offset, ooff = out->offset, csz[TS_RT_MAX_DIMS];
  for (int32_t d = 0; d < nd; d++) {
    int64_t s0 = lo[d] < 0 ? -lo[d] : 0, d0 = lo[d] > 0 ? lo[d] : 0;
    csz[d] = x->sizes[d] - s0 - (hi[d] < 0 ? -hi[d] : 0);
    if (csz[d] <= 0) return out;
    xoff += s0 * x->strides[d];
    ooff += d0 * out->strides[d];
  }
  ts_rt_tensor *sv = ts_rt_tensor_view(c, x, xoff, nd, csz, x->strides);
  ts_rt_tensor *dv = sv ? ts_rt_tensor_view(c, out, ooff, nd, csz, out->strides) : NULL;
  bool ok = dv && ts_rt_tensor_copy_(c, dv, sv);
  if (sv) ts_rt_tensor_release(sv);
  if (dv) ts_rt_tensor_release(dv);
  if (!ok) {
    ts_rt_tensor_release(out);
    return NULL;
  }
  return out;
}

typedef enum nn_padmode { NN_PAD_REFLECT, NN_PAD_REPLICATE, NN_PAD_CIRCULAR } nn_padmode;

/* reflect / replicate / circular padding of the last npad/2 dims. */
static ts_rt_tensor *nn_index_pad(ts_rt_ctx *c, const ts_rt_tensor *x, const int64_t *pad, uint32_t npad,
                                  nn_padmode mode) {
  int32_t nd = x->ndim, np = (int32_t)npad / 2;
  static const char *const names[3][3] = {{"reflection_pad1d", "reflection_pad2d", "reflection_pad3d"},
                                          {"replication_pad1d_cpu", "replication_pad2d_cpu", "replication_pad3d_cpu"},
                                          {"", "", ""}};
  if (mode != NN_PAD_CIRCULAR && x->dtype != TS_DT_FLOAT32 && x->dtype != TS_DT_FLOAT64)
    return nnu_not_impl(c, names[mode][np - 1], (ts_dtype)x->dtype), NULL;
  int64_t osz[TS_RT_MAX_DIMS];
  for (int32_t i = 0; i < nd; i++) osz[i] = x->sizes[i];
  for (int32_t k = 0; k < np; k++) {
    int32_t d = nd - 1 - k;
    int64_t l = pad[2 * k], r = pad[2 * k + 1], in = x->sizes[d];
    if (mode == NN_PAD_REFLECT && (l >= in || r >= in)) {
      char sh[256];
      nnu_shape_str(sh, sizeof sh, nd, x->sizes);
      return ts_rt_fail(c,
                        "Argument #%d: Padding size should be less than the corresponding input dimension, but got: "
                        "padding (%lld, %lld) at dimension %d of input %s",
                        4 + 2 * k, (long long)l, (long long)r, (int)d, sh),
             NULL;
    }
    if (mode == NN_PAD_CIRCULAR && (l > in || r > in))
      return ts_rt_fail(c, "Padding value causes wrapping around more than once."), NULL;
    osz[d] = in + l + r;
    if (osz[d] < 0 || (mode == NN_PAD_REPLICATE && in == 0 && osz[d] > 0)) {
      return ts_rt_fail(c, "input (H: %lld) is too small. Calculated output H: %lld", (long long)in, (long long)osz[d]),
             NULL;
    }
  }
  ts_rt_tensor *out = ts_rt_tensor_new(c, (ts_dtype)x->dtype, nd, osz, false);
  if (!out) return NULL;
  int64_t n = ts_rt_tensor_numel(out);
  if (n == 0) return out;
  /* per output dim, the source index of each output index */
  int64_t total = 0;
  for (int32_t d = 0; d < nd; d++) total += osz[d];
  int64_t *map = ts_rt_malloc((size_t)total * sizeof(int64_t));
  if (!map) {
    ts_rt_tensor_release(out);
    return ts_rt_oom(c), NULL;
  }
  int64_t *mp[TS_RT_MAX_DIMS];
  int64_t at = 0;
  for (int32_t d = 0; d < nd; d++) {
    mp[d] = map + at;
    at += osz[d];
    int32_t k = nd - 1 - d;
    int64_t l = k < np ? pad[2 * k] : 0, in = x->sizes[d];
    for (int64_t o = 0; o < osz[d]; o++) {
      int64_t s = o - l;
      if (mode == NN_PAD_REFLECT) {
        if (s < 0) s = -s;
        if (s >= in) s = 2 * (in - 1) - s;
      } else if (mode == NN_PAD_REPLICATE) {
        s = s < 0 ? 0 : s >= in ? in - 1 : s;
      } else {
        s = ((s % in) + in) % in;
      }
      mp[d][o] = s * x->strides[d];
    }
  }
  size_t es = ts_dtype_size((ts_dtype)x->dtype);
  const char *xd = ts_rt_tensor_data(x);
  char *od = ts_rt_tensor_data(out);
  int64_t idx[TS_RT_MAX_DIMS] = {0};
  for (int64_t i = 0; i < n; i++) {
    int64_t off = 0;
    for (int32_t d = 0; d < nd; d++) off += mp[d][idx[d]];
    memcpy(od + (size_t)i * es, xd + off * (int64_t)es, es);
    for (int32_t d = nd - 1; d >= 0; d--) {
      if (++idx[d] < osz[d]) break;
      idx[d] = 0;
    }
  }
  ts_rt_free(map);
  return out;
}

static bool nn_k_constant_pad_nd(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x = NULL;
  int64_t pad[2 * TS_RT_MAX_DIMS + 2];
  uint32_t npad = 0;
  double v = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_ints(c, call, 1, pad, 2 * TS_RT_MAX_DIMS + 2, &npad, 0) ||
      !ts_rt_arg_double(c, call, 2, &v))
    return false;
  return nnu_ret(call, nn_constant_pad(c, x, pad, npad, v));
}
NNU_OUT_KERNEL(nn_k_constant_pad_nd_out, nn_k_constant_pad_nd, 1)

/* aten::pad, as ATen's _pad_enum. */
static bool nn_k_pad(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x = NULL;
  int64_t pad[2 * TS_RT_MAX_DIMS + 2];
  uint32_t npad = 0;
  const ts_rt_str *mode = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_ints(c, call, 1, pad, 2 * TS_RT_MAX_DIMS + 2, &npad, 0) ||
      !ts_rt_arg_str(c, call, 2, &mode) || !ts_rt_arg_check(c, call, 3))
    return false;
  bool has_v = call->in[3].tag != TS_IV_NONE;
  double v = 0;
  if (has_v && !ts_rt_arg_double(c, call, 3, &v)) return false;
  nn_padmode m;
  if (strcmp(mode->data, "constant") == 0) {
    if (npad % 2) return ts_rt_fail(c, "Padding length must be divisible by 2");
    if ((int64_t)npad > 2 * (int64_t)x->ndim) return ts_rt_fail(c, "Padding length too large");
    return nnu_ret(call, nn_constant_pad(c, x, pad, npad, v));
  } else if (strcmp(mode->data, "reflect") == 0) {
    m = NN_PAD_REFLECT;
  } else if (strcmp(mode->data, "replicate") == 0) {
    m = NN_PAD_REPLICATE;
  } else if (strcmp(mode->data, "circular") == 0) {
    m = NN_PAD_CIRCULAR;
  } else {
    return ts_rt_fail(c, "Unrecognised padding mode %s", mode->data);
  }
  if (npad % 2) return ts_rt_fail(c, "Padding length must be divisible by 2");
  if ((int64_t)npad > 2 * (int64_t)x->ndim) return ts_rt_fail(c, "Padding length too large");
  if (has_v && v != 0) return ts_rt_fail(c, "Padding mode \"%s\" doesn't take in value argument", mode->data);
  int32_t nd = x->ndim;
  if (!((npad == 2 && (nd == 2 || nd == 3)) || (npad == 4 && (nd == 3 || nd == 4)) ||
        (npad == 6 && (nd == 4 || nd == 5))))
    return ts_rt_fail(c, "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now");
  return nnu_ret(call, nn_index_pad(c, x, pad, npad, m));
}

NNU_OUT_KERNEL(nn_k_convolution_out, ts_rt_k_convolution, 1)
NNU_OUT_KERNEL(nn_k__convolution_out, ts_rt_k__convolution, 1)
NNU_OUT_KERNEL(nn_k_adaptive_avg_pool2d_out, ts_rt_k_adaptive_avg_pool2d, 1)
NNU_OUT_KERNEL(nn_k_adaptive_max_pool2d_out, ts_rt_k_adaptive_max_pool2d, 2)

const ts_rt_kernel_def ts_rt_kernels_nn[] = {
    {"aten::mm", nn_k_mm},
    {"aten::bmm", nn_k_bmm},
    {"aten::matmul", nn_k_matmul},
    {"aten::linear", nn_k_linear},
    {"aten::addmm", nn_k_addmm},
    {"aten::baddbmm", nn_k_baddbmm},
    {"aten::softmax.int", nn_k_softmax},
    {"aten::log_softmax.int", nn_k_log_softmax},
    {"aten::dropout", nn_k_dropout},
    {"aten::dropout_", nn_k_dropout_},
    {"aten::feature_dropout", nn_k_feature_dropout},
    {"aten::embedding", nn_k_embedding},
    {"aten::embedding.out", nn_k_embedding_out},
    {"aten::constant_pad_nd", nn_k_constant_pad_nd},
    {"aten::constant_pad_nd.out", nn_k_constant_pad_nd_out},
    {"aten::pad", nn_k_pad},
    {"aten::convolution", ts_rt_k_convolution},
    {"aten::convolution.out", nn_k_convolution_out},
    {"aten::_convolution", ts_rt_k__convolution},
    {"aten::_convolution.out", nn_k__convolution_out},
    {"aten::_convolution.deprecated", ts_rt_k__convolution_deprecated},
    {"aten::conv1d", ts_rt_k_conv1d},
    {"aten::conv2d", ts_rt_k_conv2d},
    {"aten::conv1d.padding", ts_rt_k_conv1d_padding},
    {"aten::conv2d.padding", ts_rt_k_conv2d_padding},
    {"aten::conv3d", ts_rt_k_conv3d},
    {"aten::conv3d.padding", ts_rt_k_conv3d_padding},
    {"aten::conv_transpose1d", ts_rt_k_conv_transpose1d},
    {"aten::conv_transpose2d.input", ts_rt_k_conv_transpose2d},
    {"aten::conv_transpose3d.input", ts_rt_k_conv_transpose3d},
    {"tsaot::conv2d_act", ts_rt_k_conv2d_act},
    {"aten::max_pool1d", ts_rt_k_max_pool1d},
    {"aten::max_pool2d", ts_rt_k_max_pool2d},
    {"aten::avg_pool1d", ts_rt_k_avg_pool1d},
    {"aten::avg_pool2d", ts_rt_k_avg_pool2d},
    {"aten::adaptive_avg_pool1d", ts_rt_k_adaptive_avg_pool1d},
    {"aten::adaptive_avg_pool2d", ts_rt_k_adaptive_avg_pool2d},
    {"aten::adaptive_avg_pool2d.out", nn_k_adaptive_avg_pool2d_out},
    {"aten::adaptive_max_pool2d", ts_rt_k_adaptive_max_pool2d},
    {"aten::adaptive_max_pool2d.out", nn_k_adaptive_max_pool2d_out},
    {"aten::batch_norm", ts_rt_k_batch_norm},
    {"aten::instance_norm", ts_rt_k_instance_norm},
    {"aten::group_norm", ts_rt_k_group_norm},
    {"aten::layer_norm", ts_rt_k_layer_norm},
    {NULL, NULL},
};
