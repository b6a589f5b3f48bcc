/* runtime/kernels/stats.c: statistics and norms (median, nanmedian,
 * kthvalue, mode, quantile, nanquantile, aminmax, var_mean, std_mean,
 * nansum, nanmean, linalg_vector_norm, linalg_matrix_norm, linalg_norm,
 * dist, renorm, cov, corrcoef, segment_reduce, index_reduce) with PyTorch 1.13's
 * semantics and messages.
 *
 * Most work on "lanes": the input permuted so that the reduced dims come
 * last, copied once into a contiguous float64 buffer of [rows, len], one
 * output element per row; values that PyTorch returns from the input
 * (median, kthvalue, mode, aminmax) are read back from it by index, exact
 * in every dtype. Sums go through reduce.c (nansum, nanmean); the
 * singular values of the 2, -2 and nuclear matrix norms through LAPACK's
 * dgesdd (OpenBLAS). Ties in median/kthvalue give the lowest index of the
 * equal values at that rank (a stable order); PyTorch's CPU selection
 * gives one of them, unspecified. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lapack.h"
#include "nn_util.h"

/* *slot = t, releasing what it held; false if t is NULL. */
static bool st_set(ts_rt_tensor **slot, ts_rt_tensor *t) {
  if (*slot) ts_rt_tensor_release(*slot);
  *slot = t;
  return t != NULL;
}

static bool st_ret2(ts_rt_call *call, ts_rt_tensor *a, ts_rt_tensor *b) {
  if (!a || !b) {
    if (a) ts_rt_tensor_release(a);
    if (b) ts_rt_tensor_release(b);
    return false;
  }
  call->out[0] = ts_iv_tensor(a);
  call->out[1] = ts_iv_tensor(b);
  return true;
}

/* ------------------------------------------------------------- lanes */

typedef struct st_lanes {
  ts_rt_tensor *d;   /* [rows, len] float64, contiguous */
  ts_rt_tensor *src; /* the same in the input's dtype (when asked for) */
  int64_t rows, len;
  int32_t ondim; /* the output's dims (keepdim applied) */
  int64_t osz[TS_RT_MAX_DIMS];
} st_lanes;

static void st_lanes_free(st_lanes *L) {
  st_set(&L->d, NULL);
  st_set(&L->src, NULL);
}

/* Lanes of a over dims[0..n) in that order (all dims when `all`): each
 * row is one output element, its len elements laid out with the last
 * given dim fastest. */
static bool st_lanes_make(ts_rt_ctx *c, const ts_rt_tensor *a, const int64_t *dims, uint32_t n, bool all,
                          bool keepdim, bool want_src, st_lanes *L) {
  memset(L, 0, sizeof *L);
  bool red[TS_RT_MAX_DIMS] = {false};
  int64_t perm[TS_RT_MAX_DIMS], rd[TS_RT_MAX_DIMS];
  uint32_t nr = 0;
  if (all) {
    for (int32_t k = 0; k < a->ndim; k++) red[k] = true, rd[nr++] = k;
  } else {
    for (uint32_t i = 0; i < n; i++) {
      int64_t d = 0;
      if (!ts_rt_wrap_dim(c, dims[i], a->ndim, &d)) return false;
      if (a->ndim == 0) continue;
      if (red[d]) return ts_rt_fail(c, "dim %lld appears multiple times in the list of dims", (long long)d);
      red[d] = true, rd[nr++] = d;
    }
  }
  int32_t np = 0;
  L->rows = 1, L->len = 1;
  for (int32_t k = 0; k < a->ndim; k++) {
    if (!red[k]) perm[np++] = k, L->rows *= a->sizes[k], L->osz[L->ondim++] = a->sizes[k];
    else if (keepdim) L->osz[L->ondim++] = 1;
  }
  for (uint32_t i = 0; i < nr; i++) perm[np++] = rd[i], L->len *= a->sizes[rd[i]];
  ts_rt_tensor *p = a->ndim ? ts_rt_permute(c, a, perm) : ts_rt_clone(c, a);
  if (!p) return false;
  bool ok = st_set(&L->d, ts_rt_tensor_to_dtype(c, p, TS_DT_FLOAT64)) &&
            (!want_src || st_set(&L->src, ts_rt_clone(c, p)));
  ts_rt_tensor_release(p);
  if (!ok) st_lanes_free(L);
  return ok;
}

static const double *st_row(const st_lanes *L, int64_t r) {
  return (const double *)ts_rt_tensor_data(L->d) + r * L->len;
}

/* A new output of the lanes' shape. */
static ts_rt_tensor *st_out(ts_rt_ctx *c, const st_lanes *L, ts_dtype dt) {
  return ts_rt_tensor_new(c, dt, L->ondim, L->osz, false);
}

/* out[o] = the lanes' source element (row r, position pos). */
static void st_put_src(const st_lanes *L, ts_rt_tensor *out, int64_t o, int64_t r, int64_t pos) {
  size_t es = ts_dtype_size((ts_dtype)L->src->dtype);
  memcpy((char *)ts_rt_tensor_data(out) + (size_t)o * es,
         (const char *)ts_rt_tensor_data(L->src) + (size_t)(r * L->len + pos) * es, es);
}

static void st_put_f64(ts_rt_tensor *out, int64_t o, double v) {
  ts_rt_store_f64((char *)ts_rt_tensor_data(out) + (size_t)o * ts_dtype_size((ts_dtype)out->dtype),
                  (ts_dtype)out->dtype, v);
}

/* Reads `int[1]? dim` (None or [] meaning all). */
static bool st_dims_arg(ts_rt_ctx *c, ts_rt_call *call, uint32_t i, int64_t *dims, uint32_t *n) {
  *n = 0;
  if (call->nin > i && call->in[i].tag == TS_IV_NONE) return true;
  return ts_rt_arg_ints(c, call, i, dims, TS_RT_MAX_DIMS, n, 1);
}

/* ----------------------------------------------------- sorted selection */

typedef struct st_key {
  double v;
  int64_t pos;
} st_key;

/* Ascending, NaN last, equal values by position. */
static int st_key_cmp(const void *x, const void *y) {
  const st_key *a = x, *b = y;
  bool an = isnan(a->v), bn = isnan(b->v);
  if (an != bn) return an ? 1 : -1;
  if (!an && a->v != b->v) return a->v < b->v ? -1 : 1;
  return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* keys of row r, sorted; the count of non-NaN ones in *valid. */
static void st_sorted(const st_lanes *L, int64_t r, st_key *k, int64_t *valid) {
  const double *x = st_row(L, r);
  int64_t nv = 0;
  for (int64_t i = 0; i < L->len; i++) {
    k[i].v = x[i], k[i].pos = i;
    nv += !isnan(x[i]);
  }
  qsort(k, (size_t)L->len, sizeof *k, st_key_cmp);
  *valid = nv;
}

static st_key *st_keys(ts_rt_ctx *c, const st_lanes *L) {
  st_key *k = ts_rt_malloc((size_t)(L->len ? L->len : 1) * sizeof(st_key));
  if (!k) ts_rt_oom(c);
  return k;
}

typedef enum st_sel { ST_MEDIAN, ST_NANMEDIAN, ST_KTH, ST_MODE } st_sel;

/* median / nanmedian / kthvalue / mode along one dim (all dims flattened
 * when `all`, values only): values and int64 indices. */
static bool st_select(ts_rt_ctx *c, ts_rt_call *call, const ts_rt_tensor *a, st_sel how, int64_t dim, bool all,
                      bool keepdim, int64_t kth) {
  static const char *const names[] = {"median", "median", "kthvalue", "mode"}; /* nanmedian says median() */
  st_lanes L;
  if (!st_lanes_make(c, a, &dim, 1, all, keepdim, true, &L)) return false;
  int64_t d = 0;
  if (!all) ts_rt_wrap_dim(c, dim, a->ndim, &d);
  if (!all && L.len == 0 && a->ndim > 0) {
    st_lanes_free(&L);
    ts_rt_fail(c, "%s(): Expected reduction dim %lld to have non-zero size.", names[how], (long long)d);
    return false;
  }
  if (how == ST_KTH && (kth < 1 || kth > (a->ndim ? a->sizes[d] : 1))) {
    st_lanes_free(&L);
    return ts_rt_fail(c, "kthvalue(): selected number k out of range for dimension %lld", (long long)d);
  }
  ts_rt_tensor *v = st_out(c, &L, (ts_dtype)a->dtype), *ix = all ? NULL : st_out(c, &L, TS_DT_INT64);
  st_key *k = st_keys(c, &L);
  bool ok = v && (all || ix) && k;
  for (int64_t r = 0; ok && r < L.rows; r++) {
    int64_t nv, pick = 0;
    if (L.len == 0) { /* median() of an empty tensor: NaN */
      st_put_f64(v, r, NAN);
      continue;
    }
    st_sorted(&L, r, k, &nv);
    if (how == ST_MEDIAN) pick = nv < L.len ? nv : (L.len - 1) / 2; /* a NaN: the first one */
    else if (how == ST_NANMEDIAN) pick = nv ? (nv - 1) / 2 : 0;
    else if (how == ST_KTH) pick = kth - 1;
    else {
      /* the most frequent value, the smallest on a tie; its last index */
      int64_t best = 0, bestn = 0, bestpos = 0;
      for (int64_t i = 0; i < L.len;) {
        int64_t j = i, last = k[i].pos;
        while (j < L.len && (k[j].v == k[i].v || (isnan(k[j].v) && isnan(k[i].v)))) {
          if (k[j].pos > last) last = k[j].pos;
          j++;
        }
        if (j - i > bestn) best = i, bestn = j - i, bestpos = last;
        i = j;
      }
      pick = best;
      k[best].pos = bestpos;
    }
    st_put_src(&L, v, r, r, k[pick].pos);
    if (ix) ((int64_t *)ts_rt_tensor_data(ix))[r] = k[pick].pos;
  }
  ts_rt_free(k);
  st_lanes_free(&L);
  if (!ok) {
    if (v) ts_rt_tensor_release(v);
    if (ix) ts_rt_tensor_release(ix);
    return ts_rt_oom(c);
  }
  if (all) {
    call->out[0] = ts_iv_tensor(v);
    return true;
  }
  return st_ret2(call, v, ix);
}

static bool st_k_median(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  if (!ts_rt_arg_tensor(c, call, 0, &a)) return false;
  return st_select(c, call, a, ST_MEDIAN, 0, true, false, 0);
}
static bool st_k_nanmedian(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  if (!ts_rt_arg_tensor(c, call, 0, &a)) return false;
  return st_select(c, call, a, ST_NANMEDIAN, 0, true, false, 0);
}
/* (self, dim, keepdim) */
static bool st_k_sel_dim(ts_rt_ctx *c, ts_rt_call *call, st_sel how) {
  ts_rt_tensor *a;
  int64_t dim;
  bool keep;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_int(c, call, 1, &dim) || !ts_rt_arg_bool(c, call, 2, &keep))
    return false;
  return st_select(c, call, a, how, dim, false, keep, 0);
}
static bool st_k_median_dim(ts_rt_ctx *c, ts_rt_call *call) { return st_k_sel_dim(c, call, ST_MEDIAN); }
static bool st_k_nanmedian_dim(ts_rt_ctx *c, ts_rt_call *call) { return st_k_sel_dim(c, call, ST_NANMEDIAN); }
static bool st_k_mode(ts_rt_ctx *c, ts_rt_call *call) { return st_k_sel_dim(c, call, ST_MODE); }

static bool st_k_kthvalue(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  int64_t k, dim;
  bool keep;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_int(c, call, 1, &k) || !ts_rt_arg_int(c, call, 2, &dim) ||
      !ts_rt_arg_bool(c, call, 3, &keep))
    return false;
  return st_select(c, call, a, ST_KTH, dim, false, keep, k);
}

/* ------------------------------------------------------------ quantile */

/* quantile / nanquantile(self, q (a 0-d or 1-d tensor, or a float), dim?,
 * keepdim, interpolation): a 1-d q adds a leading dim of its length. */
static bool st_quantile(ts_rt_ctx *c, ts_rt_call *call, bool nan_ignore) {
  ts_rt_tensor *a, *qt = NULL;
  int64_t dim = 0;
  bool has_dim, keep;
  const ts_rt_str *interp;
  double qs = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &a)) return false;
  if (call->nin > 1 && call->in[1].tag == TS_IV_TENSOR) qt = call->in[1].u.t;
  else if (!ts_rt_arg_double(c, call, 1, &qs)) return false;
  if (!ts_rt_arg_opt_int(c, call, 2, &dim, &has_dim) || !ts_rt_arg_bool(c, call, 3, &keep) ||
      !ts_rt_arg_str(c, call, 4, &interp))
    return false;
  const char *fn = nan_ignore ? "nanquantile()" : "quantile()";
  if (ts_rt_tensor_numel(a) == 0) return ts_rt_fail(c, "%s input tensor must be non-empty", fn);
  if (qt && qt->ndim > 1) return ts_rt_fail(c, "%s q must be a scalar or 1D tensor", fn);
  if (a->dtype != TS_DT_FLOAT32 && a->dtype != TS_DT_FLOAT64)
    return ts_rt_fail(c, "%s input tensor must be either float or double dtype", fn);
  if (qt && qt->dtype != a->dtype) return ts_rt_fail(c, "%s q tensor must be same dtype as the input tensor", fn);
  int mode;
  static const char *const modes[] = {"linear", "lower", "higher", "midpoint", "nearest"};
  for (mode = 0; mode < 5 && strcmp(interp->data, modes[mode]); mode++) {}
  if (mode == 5)
    return ts_rt_fail(c, "%s interpolation must be one of linear, lower, higher, midpoint or nearest, but got %s", fn,
                      interp->data);
  int64_t nq = qt ? ts_rt_tensor_numel(qt) : 1;
  double *q = ts_rt_malloc((size_t)(nq ? nq : 1) * sizeof(double));
  if (!q) return ts_rt_oom(c);
  if (qt) {
    ts_rt_tensor *qc = ts_rt_tensor_to_dtype(c, qt, TS_DT_FLOAT64);
    if (!qc) return ts_rt_free(q), false;
    memcpy(q, ts_rt_tensor_data(qc), (size_t)nq * sizeof(double));
    ts_rt_tensor_release(qc);
  } else {
    q[0] = qs;
  }
  for (int64_t i = 0; i < nq; i++)
    if (!(q[i] >= 0 && q[i] <= 1)) {
      ts_rt_free(q);
      if (qt) return ts_rt_fail(c, "%s q values must be in the range [0, 1]", fn);
      return ts_rt_fail(c, "%s q must be in the range [0, 1] but got %g", fn, qs);
    }
  st_lanes L;
  if (!st_lanes_make(c, a, &dim, 1, !has_dim, keep, false, &L)) return ts_rt_free(q), false;
  if (!has_dim && keep) { /* every dim kept as 1 */
    L.ondim = a->ndim;
    for (int32_t k = 0; k < a->ndim; k++) L.osz[k] = 1;
  }
  int64_t osz[TS_RT_MAX_DIMS + 1];
  int32_t ond = 0;
  if (qt && qt->ndim == 1) osz[ond++] = nq;
  for (int32_t k = 0; k < L.ondim; k++) osz[ond++] = L.osz[k];
  ts_rt_tensor *out = ond <= TS_RT_MAX_DIMS ? ts_rt_tensor_new(c, (ts_dtype)a->dtype, ond, osz, false) : NULL;
  st_key *k = st_keys(c, &L);
  bool ok = out && k;
  for (int64_t r = 0; ok && r < L.rows; r++) {
    int64_t nv;
    st_sorted(&L, r, k, &nv);
    for (int64_t j = 0; j < nq; j++) {
      double res;
      if ((!nan_ignore && nv < L.len) || nv == 0) {
        res = NAN;
      } else {
        double rank = q[j] * (double)(nv - 1);
        int64_t lo = (int64_t)floor(rank), hi = (int64_t)ceil(rank);
        double a0 = k[lo].v, a1 = k[hi].v, w = rank - (double)lo;
        switch (mode) {
        case 1: res = a0; break;
        case 2: res = a1; break;
        case 3: res = a0 + 0.5 * (a1 - a0); break;
        case 4: res = k[(int64_t)nearbyint(rank)].v; break;
        default: res = w < 0.5 ? a0 + w * (a1 - a0) : a1 - (a1 - a0) * (1 - w); break;
        }
      }
      st_put_f64(out, j * L.rows + r, res);
    }
  }
  ts_rt_free(k);
  ts_rt_free(q);
  st_lanes_free(&L);
  if (!ok) {
    if (out) ts_rt_tensor_release(out);
    return out ? ts_rt_oom(c) : false;
  }
  return nnu_ret(call, out);
}

static bool st_k_quantile(ts_rt_ctx *c, ts_rt_call *call) { return st_quantile(c, call, false); }
static bool st_k_nanquantile(ts_rt_ctx *c, ts_rt_call *call) { return st_quantile(c, call, true); }

/* ------------------------------------------------------------- aminmax */

static bool st_k_aminmax(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  int64_t dim = 0;
  bool has_dim, keep;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_opt_int(c, call, 1, &dim, &has_dim) ||
      !ts_rt_arg_bool(c, call, 2, &keep))
    return false;
  if (!has_dim && ts_rt_tensor_numel(a) == 0)
    return ts_rt_fail(c, "aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                      "identity.");
  st_lanes L;
  if (!st_lanes_make(c, a, &dim, 1, !has_dim, keep, true, &L)) return false;
  if (has_dim && L.len == 0 && a->ndim > 0) {
    int64_t d = 0;
    ts_rt_wrap_dim(c, dim, a->ndim, &d);
    st_lanes_free(&L);
    return ts_rt_fail(c, "aminmax: Expected reduction dim %lld to have non-zero size.", (long long)d);
  }
  if (!has_dim && keep) {
    L.ondim = a->ndim;
    for (int32_t k = 0; k < a->ndim; k++) L.osz[k] = 1;
  }
  if (has_dim && keep && a->ndim == 0) L.ondim = 1, L.osz[0] = 1; /* as PyTorch 1.13 gives it */
  ts_rt_tensor *mn = st_out(c, &L, (ts_dtype)a->dtype), *mx = mn ? st_out(c, &L, (ts_dtype)a->dtype) : NULL;
  for (int64_t r = 0; mx && r < L.rows; r++) {
    const double *x = st_row(&L, r);
    int64_t imn = 0, imx = 0;
    for (int64_t i = 1; i < L.len; i++) {
      if (isnan(x[imn])) break;
      if (isnan(x[i])) {
        imn = imx = i;
        break;
      }
      if (x[i] < x[imn]) imn = i;
      if (x[i] > x[imx]) imx = i;
    }
    st_put_src(&L, mn, r, r, imn);
    st_put_src(&L, mx, r, r, imx);
  }
  st_lanes_free(&L);
  return st_ret2(call, mn, mx);
}

/* ------------------------------------------------------ var_mean, std_mean */

static bool st_varmean(ts_rt_ctx *c, ts_rt_call *call, const ts_rt_tensor *a, const int64_t *dims, uint32_t n,
                       double corr, bool keep, bool std) {
  if (!ts_rt_dtype_is_float((ts_dtype)a->dtype))
    return ts_rt_fail(c, "%s only support floating point and complex dtypes", std ? "std_mean" : "var_mean");
  st_lanes L;
  if (!st_lanes_make(c, a, dims, n, n == 0, keep, false, &L)) return false;
  if (n == 0 && keep) {
    L.ondim = a->ndim;
    for (int32_t k = 0; k < a->ndim; k++) L.osz[k] = 1;
  }
  ts_rt_tensor *v = st_out(c, &L, (ts_dtype)a->dtype), *m = v ? st_out(c, &L, (ts_dtype)a->dtype) : NULL;
  for (int64_t r = 0; m && r < L.rows; r++) {
    const double *x = st_row(&L, r);
    double s = 0, ss = 0;
    for (int64_t i = 0; i < L.len; i++) s += x[i];
    double mean = L.len ? s / (double)L.len : NAN;
    for (int64_t i = 0; i < L.len; i++) ss += (x[i] - mean) * (x[i] - mean);
    double div = (double)L.len - corr;
    double var = ss / (div > 0 ? div : 0);
    st_put_f64(v, r, std ? sqrt(var) : var);
    st_put_f64(m, r, mean);
  }
  st_lanes_free(&L);
  return st_ret2(call, v, m);
}

static bool st_k_vm(ts_rt_ctx *c, ts_rt_call *call, bool std) {
  ts_rt_tensor *a;
  bool unb;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_bool(c, call, 1, &unb)) return false;
  return st_varmean(c, call, a, NULL, 0, unb ? 1 : 0, false, std);
}
static bool st_k_vm_dim(ts_rt_ctx *c, ts_rt_call *call, bool std) {
  ts_rt_tensor *a;
  int64_t dims[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  bool unb, keep;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !st_dims_arg(c, call, 1, dims, &n) || !ts_rt_arg_bool(c, call, 2, &unb) ||
      !ts_rt_arg_bool(c, call, 3, &keep))
    return false;
  return st_varmean(c, call, a, dims, n, unb ? 1 : 0, keep, std);
}
static bool st_k_vm_corr(ts_rt_ctx *c, ts_rt_call *call, bool std) {
  ts_rt_tensor *a;
  int64_t dims[TS_RT_MAX_DIMS], corr = 1;
  uint32_t n = 0;
  bool has, keep;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !st_dims_arg(c, call, 1, dims, &n) ||
      !ts_rt_arg_opt_int(c, call, 2, &corr, &has) || !ts_rt_arg_bool(c, call, 3, &keep))
    return false;
  return st_varmean(c, call, a, dims, n, has ? (double)corr : 1, keep, std);
}
static bool st_k_var_mean(ts_rt_ctx *c, ts_rt_call *call) { return st_k_vm(c, call, false); }
static bool st_k_std_mean(ts_rt_ctx *c, ts_rt_call *call) { return st_k_vm(c, call, true); }
static bool st_k_var_mean_dim(ts_rt_ctx *c, ts_rt_call *call) { return st_k_vm_dim(c, call, false); }
static bool st_k_std_mean_dim(ts_rt_ctx *c, ts_rt_call *call) { return st_k_vm_dim(c, call, true); }
static bool st_k_var_mean_corr(ts_rt_ctx *c, ts_rt_call *call) { return st_k_vm_corr(c, call, false); }
static bool st_k_std_mean_corr(ts_rt_ctx *c, ts_rt_call *call) { return st_k_vm_corr(c, call, true); }

/* ---------------------------------------------------- nansum, nanmean */

/* a copy of a with NaN as 0 (a itself, retained, for integers) */
static ts_rt_tensor *st_nan_to_zero(ts_rt_ctx *c, const ts_rt_tensor *a, ts_rt_tensor **notnan) {
  ts_rt_tensor *m = ts_rt_unary_op(c, TS_PW_isnan, a);
  if (!m) return NULL;
  ts_rt_tensor *r = ts_rt_masked_fill(c, a, m, 0);
  if (r && notnan) {
    *notnan = ts_rt_unary_op(c, TS_PW_logical_not, m);
    if (!*notnan) st_set(&r, NULL);
  }
  ts_rt_tensor_release(m);
  return r;
}

static bool st_k_nansum(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  int64_t dims[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  bool keep;
  ts_dtype dt = TS_DT_NONE;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !st_dims_arg(c, call, 1, dims, &n) ||
      !ts_rt_arg_bool(c, call, 2, &keep) || !ts_rt_arg_opt_dtype(c, call, 3, &dt))
    return false;
  ts_rt_tensor *z = st_nan_to_zero(c, a, NULL);
  if (!z) return false;
  ts_rt_tensor *r = ts_rt_sum(c, z, dims, n, keep, dt);
  ts_rt_tensor_release(z);
  return nnu_ret(call, r);
}

static bool st_k_nanmean(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  int64_t dims[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  bool keep;
  ts_dtype dt = TS_DT_NONE;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !st_dims_arg(c, call, 1, dims, &n) ||
      !ts_rt_arg_bool(c, call, 2, &keep) || !ts_rt_arg_opt_dtype(c, call, 3, &dt))
    return false;
  if (!ts_rt_dtype_is_float((ts_dtype)a->dtype))
    return ts_rt_fail(c, "nanmean(): expected input to have floating point dtype but got %s",
                      ts_rt_dtype_name((ts_dtype)a->dtype));
  ts_rt_tensor *ok = NULL, *z = st_nan_to_zero(c, a, &ok), *s = NULL, *cnt = NULL, *r = NULL;
  if (z && st_set(&s, ts_rt_sum(c, z, dims, n, keep, dt)) && st_set(&cnt, ts_rt_sum(c, ok, dims, n, keep, TS_DT_NONE)))
    r = ts_rt_binary_op(c, TS_PW_div, s, cnt);
  st_set(&z, NULL), st_set(&ok, NULL), st_set(&s, NULL), st_set(&cnt, NULL);
  return nnu_ret(call, r);
}

/* --------------------------------------------------------------- norms */

/* The p-norm of x[0..n) (with stride 1). */
static double st_vnorm(const double *x, int64_t n, double p) {
  double r = 0;
  if (isinf(p)) {
    r = p > 0 ? 0 : INFINITY;
    for (int64_t i = 0; i < n; i++) {
      double a = fabs(x[i]);
      if (isnan(a)) return NAN;
      if (p > 0 ? a > r : a < r) r = a;
    }
    return r;
  }
  if (p == 0) {
    for (int64_t i = 0; i < n; i++) r += x[i] != 0;
    return r;
  }
  if (p == 1) {
    for (int64_t i = 0; i < n; i++) r += fabs(x[i]);
    return r;
  }
  if (p == 2) {
    for (int64_t i = 0; i < n; i++) r += x[i] * x[i];
    return sqrt(r);
  }
  for (int64_t i = 0; i < n; i++) r += pow(fabs(x[i]), p);
  return pow(r, 1 / p);
}

/* The dtype a norm computes and returns in: dtype if given (floating),
 * else a's (floating). */
static bool st_norm_dtype(ts_rt_ctx *c, const char *fn, const ts_rt_tensor *a, ts_dtype dtype, ts_dtype *out) {
  if (!ts_rt_dtype_is_float((ts_dtype)a->dtype))
    return ts_rt_fail(c, "%s: Expected a floating point or complex tensor as input. Got %s", fn,
                      ts_rt_dtype_name((ts_dtype)a->dtype));
  if (dtype != TS_DT_NONE && !ts_rt_dtype_is_float(dtype))
    return ts_rt_fail(c, "%s: dtype should be floating point or complex, but got %s", fn, ts_rt_dtype_name(dtype));
  *out = dtype != TS_DT_NONE ? dtype : (ts_dtype)a->dtype;
  return true;
}

/* vector_norm over dims (n == 0: all), into a new tensor of dtype dt. */
static ts_rt_tensor *st_vector_norm(ts_rt_ctx *c, const ts_rt_tensor *a, double p, const int64_t *dims, uint32_t n,
                                    bool keep, ts_dtype dt) {
  if (isinf(p) && ts_rt_tensor_numel(a) == 0) {
    bool bad = n == 0;
    for (uint32_t i = 0; i < n && !bad; i++) {
      int64_t d = 0;
      if (!ts_rt_wrap_dim(c, dims[i], a->ndim, &d)) return NULL;
      bad = a->ndim && a->sizes[d] == 0;
    }
    if (bad)
      return ts_rt_fail(c, "linalg.vector_norm cannot compute the %s norm on an empty tensor because the operation "
                        "does not have an identity",
                        p > 0 ? "inf" : "-inf"),
             NULL;
  }
  st_lanes L;
  if (!st_lanes_make(c, a, dims, n, n == 0, keep, false, &L)) return NULL;
  if (n == 0 && keep) {
    L.ondim = a->ndim;
    for (int32_t k = 0; k < a->ndim; k++) L.osz[k] = 1;
  }
  ts_rt_tensor *out = st_out(c, &L, dt);
  for (int64_t r = 0; out && r < L.rows; r++) st_put_f64(out, r, st_vnorm(st_row(&L, r), L.len, p));
  st_lanes_free(&L);
  return out;
}

static bool st_k_vector_norm(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  double p;
  int64_t dims[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  bool keep;
  ts_dtype dt = TS_DT_NONE, odt = TS_DT_NONE;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_double(c, call, 1, &p) || !st_dims_arg(c, call, 2, dims, &n) ||
      !ts_rt_arg_bool(c, call, 3, &keep) || !ts_rt_arg_opt_dtype(c, call, 4, &dt))
    return false;
  if (!st_norm_dtype(c, "linalg.vector_norm", a, dt, &odt)) return false;
  return nnu_ret(call, st_vector_norm(c, a, p, dims, n, keep, odt));
}

/* The singular values of the m x n row-major matrix x (through dgesdd on
 * its transpose: the same values), descending, into s[min(m, n)]. */
static bool st_svals(ts_rt_ctx *c, const double *x, int64_t m, int64_t n, double *s) {
  int64_t k = m < n ? m : n;
  if (k == 0) return true;
  if (m > 46340 || n > 46340) return ts_rt_fail(c, "linalg.matrix_norm: matrix too large");
  int im = (int)n, in = (int)m, lwork = -1, info = 0, one = 1;
  double *a = ts_rt_malloc((size_t)(m * n) * sizeof(double)), wq = 0, dummy = 0;
  int *iw = ts_rt_malloc((size_t)(8 * k) * sizeof(int));
  if (!a || !iw) {
    ts_rt_free(a), ts_rt_free(iw);
    return ts_rt_oom(c);
  }
  memcpy(a, x, (size_t)(m * n) * sizeof(double));
  dgesdd_("N", &im, &in, a, &im, s, &dummy, &one, &dummy, &one, &wq, &lwork, iw, &info, 1);
  lwork = (int)wq + 1;
  double *work = ts_rt_malloc((size_t)lwork * sizeof(double));
  if (!work) {
    ts_rt_free(a), ts_rt_free(iw);
    return ts_rt_oom(c);
  }
  dgesdd_("N", &im, &in, a, &im, s, &dummy, &one, &dummy, &one, work, &lwork, iw, &info, 1);
  ts_rt_free(work), ts_rt_free(a), ts_rt_free(iw);
  if (info > 0) return ts_rt_fail(c, "linalg.svd: The algorithm failed to converge because the input matrix is "
                                  "ill-conditioned or has too many repeated singular values (error code: %d).", info);
  return true;
}

/* ord as matrix_norm takes it: 'fro' (1), 'nuc' (2), or a number. */
enum { ST_ORD_NUM = 0, ST_ORD_FRO = 1, ST_ORD_NUC = 2 };

static ts_rt_tensor *st_matrix_norm(ts_rt_ctx *c, const ts_rt_tensor *a, int kind, double ord, const int64_t *dims,
                                    uint32_t n, bool keep, ts_dtype dtype, const char *ordstr) {
  ts_dtype dt = TS_DT_NONE;
  if (a->ndim < 2)
    return ts_rt_fail(c, "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."), NULL;
  if (!st_norm_dtype(c, "linalg.matrix_norm", a, dtype, &dt)) return NULL;
  if (n != 2) return ts_rt_fail(c, "linalg.matrix_norm: dim must be a 2-tuple. Got %lld", n ? (long long)dims[0] : 0LL), NULL;
  int64_t d0 = 0, d1 = 0;
  if (!ts_rt_wrap_dim(c, dims[0], a->ndim, &d0) || !ts_rt_wrap_dim(c, dims[1], a->ndim, &d1)) return NULL;
  if (d0 == d1)
    return ts_rt_fail(c, "linalg.matrix_norm: dims must be different. Got (%lld, %lld)", (long long)dims[0],
                      (long long)dims[1]),
           NULL;
  if (kind == ST_ORD_NUM && !(ord == 1 || ord == -1 || ord == 2 || ord == -2 || isinf(ord))) {
    if (ordstr) return ts_rt_fail(c, "linalg.matrix_norm: Order %s not supported.", ordstr), NULL;
    return ts_rt_fail(c, "linalg.matrix_norm: Order %g not supported.", ord), NULL;
  }
  int64_t dd[2] = {d0, d1};
  st_lanes L;
  if (!st_lanes_make(c, a, dd, 2, false, keep, false, &L)) return NULL;
  int64_t m = a->sizes[d0], nc = a->sizes[d1], k = m < nc ? m : nc;
  ts_rt_tensor *out = st_out(c, &L, dt);
  double *s = ts_rt_malloc((size_t)(k + 1) * sizeof(double));
  bool ok = out && s;
  if (out && !s) ts_rt_oom(c);
  for (int64_t r = 0; ok && r < L.rows; r++) {
    const double *x = st_row(&L, r);
    double res = 0;
    if (kind == ST_ORD_FRO) {
      res = st_vnorm(x, m * nc, 2);
    } else if (kind == ST_ORD_NUC || ord == 2 || ord == -2) {
      if (!(ok = st_svals(c, x, m, nc, s))) break;
      if (kind == ST_ORD_NUC)
        for (int64_t i = 0; i < k; i++) res += s[i];
      else res = k == 0 ? 0 : ord > 0 ? s[0] : s[k - 1];
    } else {
      /* 1: max over columns of the column sums of |x|; inf: over rows */
      bool cols = ord == 1 || ord == -1, mx = ord > 0;
      int64_t no = cols ? nc : m, ni = cols ? m : nc;
      res = mx ? 0 : INFINITY;
      for (int64_t o = 0; o < no; o++) {
        double t = 0;
        for (int64_t i = 0; i < ni; i++) t += fabs(cols ? x[i * nc + o] : x[o * nc + i]);
        if (isnan(t) || (mx ? t > res : t < res)) res = t;
        if (isnan(res)) break;
      }
    }
    st_put_f64(out, r, res);
  }
  ts_rt_free(s);
  st_lanes_free(&L);
  if (!ok) return st_set(&out, NULL), NULL;
  return out;
}

/* ord as a string: 'fro', 'nuc', else not supported */
static bool st_ord_str(ts_rt_ctx *c, const ts_rt_str *s, int *kind) {
  if (!strcmp(s->data, "fro")) *kind = ST_ORD_FRO;
  else if (!strcmp(s->data, "nuc")) *kind = ST_ORD_NUC;
  else return ts_rt_fail(c, "linalg.matrix_norm: Order %s not supported.", s->data);
  return true;
}

static bool st_k_matrix_norm(ts_rt_ctx *c, ts_rt_call *call, bool str) {
  ts_rt_tensor *a;
  double ord = 0;
  int kind = ST_ORD_NUM;
  int64_t dims[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  bool keep;
  ts_dtype dt = TS_DT_NONE;
  const ts_rt_str *s;
  if (!ts_rt_arg_tensor(c, call, 0, &a)) return false;
  if (str ? !ts_rt_arg_str(c, call, 1, &s) || !st_ord_str(c, s, &kind) : !ts_rt_arg_double(c, call, 1, &ord))
    return false;
  if (!ts_rt_arg_ints(c, call, 2, dims, TS_RT_MAX_DIMS, &n, 0) || !ts_rt_arg_bool(c, call, 3, &keep) ||
      !ts_rt_arg_opt_dtype(c, call, 4, &dt))
    return false;
  return nnu_ret(call, st_matrix_norm(c, a, kind, ord, dims, n, keep, dt, NULL));
}
static bool st_k_matrix_norm_num(ts_rt_ctx *c, ts_rt_call *call) { return st_k_matrix_norm(c, call, false); }
static bool st_k_matrix_norm_str(ts_rt_ctx *c, ts_rt_call *call) { return st_k_matrix_norm(c, call, true); }

/* linalg_norm(self, ord?, dim?, keepdim, dtype) / .ord_str: a vector norm
 * for one dim (or a flattened tensor with neither ord nor dim), a matrix
 * norm for two. */
static bool st_k_linalg_norm(ts_rt_ctx *c, ts_rt_call *call, bool str) {
  ts_rt_tensor *a;
  double ord = 2;
  bool has_ord = true, keep;
  int kind = ST_ORD_NUM;
  int64_t dims[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  ts_dtype dt = TS_DT_NONE, odt = TS_DT_NONE;
  const ts_rt_str *s = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &a)) return false;
  if (str) {
    if (!ts_rt_arg_str(c, call, 1, &s)) return false;
  } else if (call->nin > 1 && call->in[1].tag == TS_IV_NONE) {
    has_ord = false;
  } else if (!ts_rt_arg_double(c, call, 1, &ord)) {
    return false;
  }
  bool has_dim = !(call->nin > 2 && call->in[2].tag == TS_IV_NONE);
  if (!st_dims_arg(c, call, 2, dims, &n) || !ts_rt_arg_bool(c, call, 3, &keep) ||
      !ts_rt_arg_opt_dtype(c, call, 4, &dt))
    return false;
  if (has_dim && n != 1 && n != 2) {
    char buf[256];
    nnu_shape_str(buf, sizeof buf, (int32_t)n, dims);
    return ts_rt_fail(c, "linalg.norm: If dim is specified, it must be of length 1 or 2. Got %s", buf);
  }
  if (!has_dim && (has_ord || str) && a->ndim != 1 && a->ndim != 2)
    return ts_rt_fail(c, "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got %dD.",
                      (int)a->ndim);
  bool matrix = has_dim ? n == 2 : (has_ord || str) && a->ndim == 2;
  if (!matrix && str) {
    if (!st_ord_str(c, s, &kind)) return false;
    return ts_rt_fail(c, "linalg.matrix_norm: dim must be a 2-tuple. Got %lld", (long long)dims[0]);
  }
  if (matrix) {
    if (str && !st_ord_str(c, s, &kind)) return false;
    if (!has_dim) dims[0] = 0, dims[1] = 1, n = 2;
    if (!has_ord && !str) kind = ST_ORD_FRO;
    return nnu_ret(call, st_matrix_norm(c, a, kind, ord, dims, n, keep, dt, NULL));
  }
  if (!st_norm_dtype(c, "linalg.vector_norm", a, dt, &odt)) return false;
  if (!has_dim) n = 0;
  return nnu_ret(call, st_vector_norm(c, a, has_ord ? ord : 2, dims, n, keep, odt));
}
static bool st_k_linalg_norm_num(ts_rt_ctx *c, ts_rt_call *call) { return st_k_linalg_norm(c, call, false); }
static bool st_k_linalg_norm_str(ts_rt_ctx *c, ts_rt_call *call) { return st_k_linalg_norm(c, call, true); }

/* dist(self, other, p): the p-norm of self - other (broadcast) */
static bool st_k_dist(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a, *b;
  double p;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_tensor(c, call, 1, &b) || !ts_rt_arg_double(c, call, 2, &p))
    return false;
  ts_rt_tensor *d = ts_rt_binary_op(c, TS_PW_sub, a, b);
  if (!d) return false;
  ts_rt_tensor *r = NULL;
  if (!ts_rt_dtype_is_float((ts_dtype)d->dtype))
    ts_rt_fail(c, "norm(): input dtype should be either floating point or complex. Got %s instead.",
               ts_rt_dtype_name((ts_dtype)d->dtype));
  else
    r = st_vector_norm(c, d, p, NULL, 0, false, (ts_dtype)d->dtype);
  ts_rt_tensor_release(d);
  return nnu_ret(call, r);
}

/* renorm(self, p, dim, maxnorm): each slice along dim whose p-norm passes
 * maxnorm scaled to maxnorm (by maxnorm / (norm + 1e-7)) */
static bool st_k_renorm(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  double p, maxnorm;
  int64_t dim, d = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_double(c, call, 1, &p) || !ts_rt_arg_int(c, call, 2, &dim) ||
      !ts_rt_arg_double(c, call, 3, &maxnorm))
    return false;
  if (p <= 0) return ts_rt_fail(c, "renorm: non-positive-norm not supported");
  if (maxnorm < 0) return ts_rt_fail(c, "renorm: expected maxnorm to be >= 0 but got %g", maxnorm);
  if (a->ndim <= 1) return ts_rt_fail(c, "renorm: input needs at least 2 dimensions, got %d dimensions", (int)a->ndim);
  if (!ts_rt_dtype_is_float((ts_dtype)a->dtype))
    return ts_rt_fail(c, "linalg.vector_norm: Expected a floating point or complex tensor as input. Got %s",
                      ts_rt_dtype_name((ts_dtype)a->dtype));
  if (!ts_rt_wrap_dim(c, dim, a->ndim, &d)) return false;
  int64_t rd[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  for (int32_t k = 0; k < a->ndim; k++)
    if (k != d) rd[n++] = k;
  st_lanes L;
  if (!st_lanes_make(c, a, rd, n, false, true, false, &L)) return false;
  ts_rt_tensor *f = st_out(c, &L, (ts_dtype)a->dtype), *r = NULL;
  for (int64_t i = 0; f && i < L.rows; i++) {
    /* the norm rounded to the input's dtype, as PyTorch computes it */
    st_put_f64(f, i, st_vnorm(st_row(&L, i), L.len, p));
    double nv = ts_rt_load_f64((char *)ts_rt_tensor_data(f) + (size_t)i * ts_dtype_size((ts_dtype)a->dtype),
                               (ts_dtype)a->dtype);
    st_put_f64(f, i, nv > maxnorm ? maxnorm / (nv + 1e-7) : 1.0);
  }
  st_lanes_free(&L);
  if (f) r = ts_rt_binary_op(c, TS_PW_mul, a, f);
  st_set(&f, NULL);
  return nnu_ret(call, r);
}

/* ------------------------------------------------------- cov, corrcoef */

/* cov of x [vars, obs] (a 1-d x is one variable) in float64, with
 * optional integer fweights and floating aweights [obs]; a new
 * [vars, vars] float64 tensor (0-d for one variable). */
static ts_rt_tensor *st_cov(ts_rt_ctx *c, const ts_rt_tensor *x, int64_t corr, const ts_rt_tensor *fw,
                            const ts_rt_tensor *aw, const char *fn) {
  if (x->ndim > 2)
    return ts_rt_fail(c, "%s(): expected input to have two or fewer dimensions but got an input with %d dimensions", fn,
                      (int)x->ndim),
           NULL;
  int64_t nv = x->ndim == 2 ? x->sizes[0] : 1, no = x->ndim == 0 ? 1 : x->sizes[x->ndim - 1];
  const ts_rt_tensor *ws[2] = {fw, aw};
  for (int k = 0; k < 2; k++) {
    const ts_rt_tensor *w = ws[k];
    const char *wn = k ? "aweights" : "fweights";
    if (!w) continue;
    if (w->ndim > 1)
      return ts_rt_fail(c, "cov(): expected %s to have one or fewer dimensions but got %s with %d dimensions", wn, wn,
                        (int)w->ndim),
             NULL;
    if (ts_rt_tensor_numel(w) != no)
      return ts_rt_fail(c, "cov(): expected %s to have the same numel as there are observations in the input but got "
                        "%lld != %lld",
                        wn, (long long)ts_rt_tensor_numel(w), (long long)no),
             NULL;
    bool fl = ts_rt_dtype_is_float((ts_dtype)w->dtype);
    if (!k && fl)
      return ts_rt_fail(c, "cov(): expected fweights to have integral dtype but got fweights with %s dtype",
                        ts_rt_dtype_name((ts_dtype)w->dtype)),
             NULL;
    if (k && !fl)
      return ts_rt_fail(c, "cov(): expected aweights to have floating point dtype but got aweights with %s dtype",
                        ts_rt_dtype_name((ts_dtype)w->dtype)),
             NULL;
  }
  ts_rt_tensor *xd = ts_rt_tensor_to_dtype(c, x, TS_DT_FLOAT64), *fd = NULL, *ad = NULL;
  if (!xd || (fw && !st_set(&fd, ts_rt_tensor_to_dtype(c, fw, TS_DT_FLOAT64))) ||
      (aw && !st_set(&ad, ts_rt_tensor_to_dtype(c, aw, TS_DT_FLOAT64)))) {
    st_set(&xd, NULL), st_set(&fd, NULL);
    return NULL;
  }
  const double *X = ts_rt_tensor_data(xd), *F = fd ? ts_rt_tensor_data(fd) : NULL,
               *A = ad ? ts_rt_tensor_data(ad) : NULL;
  ts_rt_tensor *out = NULL;
  double *w = ts_rt_malloc((size_t)(no ? no : 1) * sizeof(double));
  double *avg = ts_rt_malloc((size_t)(nv ? nv : 1) * sizeof(double));
  if (!w || !avg) {
    ts_rt_oom(c);
    goto done;
  }
  for (int64_t j = 0; j < no; j++) {
    if (F && F[j] < 0) {
      ts_rt_fail(c, "cov(): fweights cannot be negative");
      goto done;
    }
    if (A && A[j] < 0) {
      ts_rt_fail(c, "cov(): aweights cannot be negative");
      goto done;
    }
    w[j] = (F ? F[j] : 1) * (A ? A[j] : 1);
  }
  double wsum = 0, wa = 0;
  for (int64_t j = 0; j < no; j++) wsum += w[j], wa += A ? w[j] * A[j] : 0;
  for (int64_t i = 0; i < nv; i++) {
    double s = 0;
    for (int64_t j = 0; j < no; j++) s += X[i * no + j] * w[j];
    avg[i] = s / wsum;
  }
  double norm = !A ? wsum - (double)corr : corr == 0 ? wsum : wsum - (double)corr * wa / wsum;
  if (norm <= 0) {
    ts_rt_warn(c, "cov(): degrees of freedom is <= 0");
    norm = 0;
  }
  int64_t osz[2] = {nv, nv};
  /* squeezed, as PyTorch's: one variable gives a 0-d result */
  out = ts_rt_tensor_new(c, TS_DT_FLOAT64, nv == 1 ? 0 : 2, osz, false);
  if (!out) goto done;
  double *O = ts_rt_tensor_data(out);
  for (int64_t i = 0; i < nv; i++)
    for (int64_t k = 0; k < nv; k++) {
      double s = 0;
      for (int64_t j = 0; j < no; j++) s += (X[i * no + j] - avg[i]) * (X[k * no + j] - avg[k]) * w[j];
      O[i * nv + k] = s / norm;
    }
done:
  ts_rt_free(w), ts_rt_free(avg);
  st_set(&xd, NULL), st_set(&fd, NULL), st_set(&ad, NULL);
  return out;
}

/* The dtype cov/corrcoef return: the input's floating dtype, float32 for
 * integers and bool. */
static ts_dtype st_cov_dtype(const ts_rt_tensor *x) {
  return ts_rt_dtype_is_float((ts_dtype)x->dtype) ? (ts_dtype)x->dtype : TS_DT_FLOAT32;
}

static bool st_k_cov(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x, *fw, *aw;
  int64_t corr;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_int(c, call, 1, &corr) ||
      !ts_rt_arg_opt_tensor(c, call, 2, &fw) || !ts_rt_arg_opt_tensor(c, call, 3, &aw))
    return false;
  return nnu_ret(call, nnu_cast_owned(c, st_cov(c, x, corr, fw, aw, "cov"), st_cov_dtype(x)));
}

/* corrcoef: cov normalised by the standard deviations, clipped to [-1, 1]
 * (a lone variable: cov / cov) */
static bool st_k_corrcoef(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x;
  if (!ts_rt_arg_tensor(c, call, 0, &x)) return false;
  ts_rt_tensor *cv = st_cov(c, x, 1, NULL, NULL, "corrcoef");
  if (!cv) return false;
  double *O = ts_rt_tensor_data(cv);
  if (cv->ndim == 0) {
    O[0] = O[0] / O[0];
  } else {
    int64_t n = cv->sizes[0];
    for (int64_t i = 0; i < n; i++)
      for (int64_t k = 0; k < n; k++) {
        if (i == k) continue;
        double v = O[i * n + k] / sqrt(O[i * n + i]) / sqrt(O[k * n + k]);
        O[i * n + k] = v < -1 ? -1 : v > 1 ? 1 : v;
      }
    for (int64_t i = 0; i < n; i++) {
      double v = O[i * n + i] / sqrt(O[i * n + i]) / sqrt(O[i * n + i]);
      O[i * n + i] = v < -1 ? -1 : v > 1 ? 1 : v;
    }
  }
  return nnu_ret(call, nnu_cast_owned(c, cv, st_cov_dtype(x)));
}

/* ------------------------------------------------------- segment_reduce */

/* segment_reduce(data, reduce, *, lengths, indices, offsets, axis, unsafe,
 * initial): data [*lead, A, *inner] cut along axis into segments given by
 * lengths [*lead, nseg] or offsets [*lead, nseg + 1] (offsets win when
 * both are given); each reduced ("sum", "mean", "max", "min", "prod")
 * from `initial` when given, NaN propagating; an empty segment gives
 * initial, or the reduction's identity (mean: NaN). */
static bool st_k_segment_reduce(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *data, *len, *idx, *off;
  const ts_rt_str *red;
  int64_t axis;
  bool unsafe, has_init = false;
  double init = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &data) || !ts_rt_arg_str(c, call, 1, &red) ||
      !ts_rt_arg_opt_tensor(c, call, 2, &len) || !ts_rt_arg_opt_tensor(c, call, 3, &idx) ||
      !ts_rt_arg_opt_tensor(c, call, 4, &off) || !ts_rt_arg_int(c, call, 5, &axis) ||
      !ts_rt_arg_bool(c, call, 6, &unsafe))
    return false;
  if (call->nin > 7 && call->in[7].tag != TS_IV_NONE) {
    if (!ts_rt_arg_double(c, call, 7, &init)) return false;
    has_init = true;
  }
  (void)idx;
  static const char *const reds[] = {"sum", "mean", "max", "min", "prod"};
  int op;
  for (op = 0; op < 5 && strcmp(red->data, reds[op]); op++) {}
  if (op == 5) return ts_rt_fail(c, "unsupported reduction given! %s", red->data);
  int64_t ax = 0;
  if (!ts_rt_wrap_dim(c, axis, data->ndim, &ax)) return false;
  const ts_rt_tensor *seg = off ? off : len;
  if (!seg) return ts_rt_fail(c, "segment_reduce(): Either lengths or offsets must be defined.");
  if (seg->dtype != TS_DT_INT32 && seg->dtype != TS_DT_INT64)
    return nnu_not_impl(c, off ? "_segment_reduce_offsets_cpu_kernel1" : "_segment_reduce_lengths_cpu_kernel1",
                        (ts_dtype)seg->dtype);
  ts_dtype dt = (ts_dtype)data->dtype;
  if (!ts_rt_dtype_is_float(dt)) return nnu_not_impl(c, "_segment_reduce_cpu", dt);
  if (seg->ndim != ax + 1)
    return ts_rt_fail(c, "segment_reduce(): Expected axis to be the last dimension of %s but got %lld.",
                      off ? "offsets" : "lengths", (long long)ax);
  for (int64_t d = 0; d < ax; d++)
    if (seg->sizes[d] != data->sizes[d])
      return ts_rt_fail(c, "segment_reduce(): Expected %s to have the leading dimensions of data",
                        off ? "offsets" : "lengths");
  int64_t nseg = seg->sizes[ax] - (off ? 1 : 0), A = data->sizes[ax], inner = 1, outer = 1;
  if (nseg < 0) return ts_rt_fail(c, "segment_reduce(): Expected offsets to have at least one element");
  for (int32_t d = (int32_t)ax + 1; d < data->ndim; d++) inner *= data->sizes[d];
  for (int64_t d = 0; d < ax; d++) outer *= data->sizes[d];
  /* segment starts per outer index, checked */
  int64_t *start = ts_rt_malloc((size_t)(outer * (nseg + 1) + 1) * sizeof(int64_t));
  ts_rt_tensor *sc = ts_rt_tensor_to_dtype(c, seg, TS_DT_INT64), *dd = NULL, *out = NULL;
  if (!start || !sc) {
    ts_rt_free(start);
    st_set(&sc, NULL);
    return start ? false : ts_rt_oom(c);
  }
  const int64_t *sv = ts_rt_tensor_data(sc);
  bool ok = true;
  for (int64_t o = 0; ok && o < outer; o++) {
    int64_t *st = start + o * (nseg + 1);
    if (off) {
      for (int64_t k = 0; k <= nseg; k++) st[k] = sv[o * (nseg + 1) + k];
    } else {
      st[0] = 0;
      for (int64_t k = 0; k < nseg; k++) {
        int64_t l = sv[o * nseg + k];
        if (l < 0) ok = ts_rt_fail(c, "lengths contains negative value!");
        st[k + 1] = st[k] + l;
      }
    }
    if (ok && !unsafe && !off && st[nseg] != A)
      ok = ts_rt_fail(c, "segment_reduce(): Expected all rows of lengths along axis to sum to data.size(lengths.dim()-1) "
                      "when !unsafe.");
    for (int64_t k = 0; ok && k < nseg; k++)
      if (st[k] < 0 || st[k + 1] < st[k] || st[k + 1] > A)
        ok = ts_rt_fail(c, "segment_reduce(): segment %lld runs outside data (%lld to %lld of %lld)", (long long)k,
                        (long long)st[k], (long long)st[k + 1], (long long)A);
  }
  int64_t osz[TS_RT_MAX_DIMS];
  memcpy(osz, data->sizes, (size_t)data->ndim * sizeof(int64_t));
  osz[ax] = nseg;
  ok = ok && st_set(&dd, ts_rt_tensor_to_dtype(c, data, TS_DT_FLOAT64)) &&
       st_set(&out, ts_rt_tensor_new(c, dt, data->ndim, osz, false));
  const double *x = ok ? ts_rt_tensor_data(dd) : NULL;
  for (int64_t o = 0; ok && o < outer; o++)
    for (int64_t k = 0; k < nseg; k++)
      for (int64_t i = 0; i < inner; i++) {
        int64_t b = start[o * (nseg + 1) + k], e = start[o * (nseg + 1) + k + 1];
        double acc = has_init ? init : op == 2 ? -INFINITY : op == 3 ? INFINITY : op == 4 ? 1 : 0;
        for (int64_t t = b; t < e; t++) {
          double v = x[(o * A + t) * inner + i];
          if (op <= 1) acc += v;
          else if (op == 4) acc *= v;
          else if (isnan(v) || isnan(acc)) acc = NAN;
          else if (op == 2 ? v > acc : v < acc) acc = v;
        }
        if (op == 1) acc = e > b ? acc / (double)(e - b) : has_init ? init : NAN;
        st_put_f64(out, (o * nseg + k) * inner + i, acc);
      }
  ts_rt_free(start);
  st_set(&sc, NULL), st_set(&dd, NULL);
  if (!ok) st_set(&out, NULL);
  return nnu_ret(call, out);
}

/* --------------------------------------------------------- index_reduce */

/* index_reduce(self, dim, index, source, reduce, include_self): a copy of
 * self where each self[.., index[i], ..] is reduced ("prod", "mean",
 * "amax", "amin") with source[.., i, ..] (NaN propagating); without
 * include_self the indexed slices start from the identity. mean divides by
 * the count of what was reduced into each element (floor division for
 * integers). Computed in float64. */
static bool st_k_index_reduce(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *self, *index, *src;
  int64_t dim, d = 0;
  const ts_rt_str *red;
  bool incl;
  if (!ts_rt_arg_tensor(c, call, 0, &self) || !ts_rt_arg_int(c, call, 1, &dim) ||
      !ts_rt_arg_tensor(c, call, 2, &index) || !ts_rt_arg_tensor(c, call, 3, &src) ||
      !ts_rt_arg_str(c, call, 4, &red) || !ts_rt_arg_bool(c, call, 5, &incl))
    return false;
  static const char *const reds[] = {"prod", "mean", "amax", "amin"};
  int op;
  for (op = 0; op < 4 && strcmp(red->data, reds[op]); op++) {}
  if (op == 4)
    return ts_rt_fail(c, "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got %s.", red->data);
  if (!ts_rt_wrap_dim(c, dim, self->ndim, &d)) return false;
  if (index->ndim > 1) return ts_rt_fail(c, "index_reduce_(): Index is supposed to be a vector");
  if (index->dtype != TS_DT_INT32 && index->dtype != TS_DT_INT64)
    return ts_rt_fail(c, "index_reduce_(): Expected dtype int32/int64 for index but got: %s",
                      ts_rt_dtype_name((ts_dtype)index->dtype));
  if (self->dtype != src->dtype)
    return ts_rt_fail(c, "index_reduce_(): self (%s) and source (%s) must have the same scalar type",
                      ts_rt_dtype_name((ts_dtype)self->dtype), ts_rt_dtype_name((ts_dtype)src->dtype));
  int64_t n = ts_rt_tensor_numel(index), nsrc = src->ndim ? src->sizes[src->ndim > d ? d : 0] : 1;
  if (src->ndim != self->ndim && !(self->ndim == 0 && src->ndim <= 1))
    return ts_rt_fail(c, "index_reduce_(): Source/destination tensor must have same number of dimensions");
  if (n != nsrc)
    return ts_rt_fail(c, "index_reduce_(): Number of indices (%lld) should be equal to source.size(dim): (%lld), for "
                      "dim: %lld",
                      (long long)n, (long long)nsrc, (long long)d);
  int64_t pre = 1, post = 1, S = self->ndim ? self->sizes[d] : 1;
  for (int32_t k = 0; k < self->ndim; k++) {
    if (k != d && src->sizes[k] != self->sizes[k])
      return ts_rt_fail(c, "index_reduce_(): Source/destination tensor must have same slice shapes");
    if (k < d) pre *= self->sizes[k];
    if (k > d) post *= self->sizes[k];
  }
  ts_rt_tensor *ic = ts_rt_tensor_to_dtype(c, index, TS_DT_INT64), *acc = NULL, *sd = NULL, *out = NULL;
  int64_t *cnt = NULL;
  bool ok = ic && st_set(&acc, ts_rt_tensor_to_dtype(c, self, TS_DT_FLOAT64)) &&
            st_set(&sd, ts_rt_tensor_to_dtype(c, src, TS_DT_FLOAT64));
  const int64_t *ix = ok ? ts_rt_tensor_data(ic) : NULL;
  for (int64_t i = 0; ok && i < n; i++)
    if (ix[i] < 0 || ix[i] >= S) ok = ts_rt_fail(c, "index out of range in self"); /* no negative ones */
  if (ok && !(cnt = ts_rt_calloc((size_t)(pre * S * post + 1), sizeof(int64_t)))) ok = ts_rt_oom(c);
  if (ok) {
    double *a = ts_rt_tensor_data(acc);
    const double *x = ts_rt_tensor_data(sd);
    double ident = op == 0 ? 1 : op == 1 ? 0 : op == 2 ? -INFINITY : INFINITY;
    for (int64_t e = 0; e < pre * S * post; e++) cnt[e] = incl;
    for (int64_t i = 0; !incl && i < n; i++) {
      int64_t j = ix[i];
      for (int64_t p = 0; p < pre; p++)
        for (int64_t q = 0; q < post; q++) a[(p * S + j) * post + q] = ident;
    }
    for (int64_t i = 0; i < n; i++) {
      int64_t j = ix[i];
      for (int64_t p = 0; p < pre; p++)
        for (int64_t q = 0; q < post; q++) {
          int64_t e = (p * S + j) * post + q;
          double v = x[(p * n + i) * post + q];
          if (op == 0) a[e] *= v;
          else if (op == 1) a[e] += v, cnt[e]++;
          else if (isnan(v) || isnan(a[e])) a[e] = NAN;
          else if (op == 2 ? v > a[e] : v < a[e]) a[e] = v;
        }
    }
    bool integral = !ts_rt_dtype_is_float((ts_dtype)self->dtype);
    for (int64_t e = 0; op == 1 && e < pre * S * post; e++) {
      double q = a[e] / (double)(cnt[e] ? cnt[e] : 1);
      a[e] = integral ? floor(q) : q;
    }
    out = ts_rt_tensor_to_dtype(c, acc, (ts_dtype)self->dtype);
  }
  ts_rt_free(cnt);
  st_set(&ic, NULL), st_set(&acc, NULL), st_set(&sd, NULL);
  return nnu_ret(call, out);
}

const ts_rt_kernel_def ts_rt_kernels_stats[] = {
    {"aten::aminmax", st_k_aminmax},
    {"aten::corrcoef", st_k_corrcoef},
    {"aten::cov", st_k_cov},
    {"aten::dist", st_k_dist},
    {"aten::index_reduce", st_k_index_reduce},
    {"aten::kthvalue", st_k_kthvalue},
    {"aten::linalg_matrix_norm", st_k_matrix_norm_num},
    {"aten::linalg_matrix_norm.str_ord", st_k_matrix_norm_str},
    {"aten::linalg_norm", st_k_linalg_norm_num},
    {"aten::linalg_norm.ord_str", st_k_linalg_norm_str},
    {"aten::linalg_vector_norm", st_k_vector_norm},
    {"aten::median", st_k_median},
    {"aten::median.dim", st_k_median_dim},
    {"aten::mode", st_k_mode},
    {"aten::nanmean", st_k_nanmean},
    {"aten::nanmedian", st_k_nanmedian},
    {"aten::nanmedian.dim", st_k_nanmedian_dim},
    {"aten::nanquantile", st_k_nanquantile},
    {"aten::nanquantile.scalar", st_k_nanquantile},
    {"aten::nansum", st_k_nansum},
    {"aten::native_batch_norm", ts_rt_k_native_batch_norm},
    {"aten::native_layer_norm", ts_rt_k_native_layer_norm},
    {"aten::quantile", st_k_quantile},
    {"aten::quantile.scalar", st_k_quantile},
    {"aten::renorm", st_k_renorm},
    {"aten::segment_reduce", st_k_segment_reduce},
    {"aten::std_mean", st_k_std_mean},
    {"aten::std_mean.correction", st_k_std_mean_corr},
    {"aten::std_mean.dim", st_k_std_mean_dim},
    {"aten::var_mean", st_k_var_mean},
    {"aten::var_mean.correction", st_k_var_mean_corr},
    {"aten::var_mean.dim", st_k_var_mean_dim},
    {NULL, NULL},
};
