/* runtime/kernels/reduce.c: reductions (sum, mean, prod, max, min, amax,
 * amin, argmax, argmin, any, all, std, var, norm, frobenius_norm,
 * nuclear_norm, logsumexp) over any dims of any strided input, and the
 * per-lane ops along one dim (cumsum, cumprod, sort, argsort, topk). Floating values are accumulated in double,
 * integers in int64 with wrap-around. */
#include <math.h>

#include "nn_util.h"

typedef enum rd_op {
  RD_SUM, RD_PROD, RD_MEAN, RD_MAX, RD_MIN, RD_ARGMAX, RD_ARGMIN, RD_ANY, RD_ALL, RD_VAR, RD_STD, RD_NORM, RD_LSE,
} rd_op;

/* One reduction: the input split into kept dims (one output element per
 * index) and reduced dims (iterated per output element). */
typedef struct rd_job {
  rd_op op;
  const char *in;  /* input data at offset 0 of the view */
  ts_dtype idt;    /* input dtype */
  bool intmode;    /* accumulate as int64 */
  int32_t nk, nr;
  int64_t ksz[TS_RT_MAX_DIMS], kst[TS_RT_MAX_DIMS];
  int64_t rsz[TS_RT_MAX_DIMS], rst[TS_RT_MAX_DIMS];
  int64_t nred;
  char *out;       /* contiguous output values, dtype odt */
  ts_dtype odt;
  int64_t *idx;    /* indices output (max.dim), or NULL */
  double p;        /* norm order */
  double correction;
} rd_job;

/* Reduces the elements under input offset `base` into one output. */
static void rd_one(const rd_job *j, int64_t base, int64_t o) {
  size_t es = ts_dtype_size(j->idt);
  int32_t nr = j->nr;
  int64_t inner = nr ? j->rsz[nr - 1] : 1, ist = nr ? j->rst[nr - 1] : 0;
  int npass = j->op == RD_VAR || j->op == RD_STD || j->op == RD_LSE ? 2 : 1;
  double s = 0, m = 0, best = 0;
  uint64_t is = j->op == RD_PROD ? 1 : 0;
  int64_t ib = 0, ibest = -1, k = 0;
  bool flag = j->op == RD_ALL;
  if (j->op == RD_PROD) s = 1;
  /* contiguous float32 sums skip the per-element dtype dispatch */
  bool fast = (j->op == RD_SUM || j->op == RD_MEAN) && j->idt == TS_DT_FLOAT32 && (ist == 1 || inner == 1);
  for (int pass = 0; pass < npass; pass++) {
    int64_t id[TS_RT_MAX_DIMS] = {0};
    k = 0;
    if (pass == 1) {
      m = j->op == RD_LSE ? (isinf(best) || ibest < 0 ? 0 : best) : s / (double)j->nred;
      s = 0;
    }
    if (j->nred == 0) break;
    for (;;) {
      int64_t off = base;
      for (int32_t d = 0; d < nr - 1; d++) off += id[d] * j->rst[d];
      const char *p = j->in + off * (int64_t)es;
      if (fast) {
        const float *fp = (const float *)p;
        double acc = 0;
        for (int64_t t = 0; t < inner; t++) acc += fp[t];
        s += acc;
        k += inner;
      }
      for (int64_t t = 0; !fast && t < inner; t++, k++) {
        const char *e = p + t * ist * (int64_t)es;
        if (j->intmode) {
          int64_t v = ts_rt_load_i64(e, j->idt);
          switch (j->op) {
          case RD_SUM: is += (uint64_t)v; break;
          case RD_PROD: is *= (uint64_t)v; break;
          case RD_MAX: case RD_ARGMAX:
            if (ibest < 0 || v > ib) ib = v, ibest = k;
            break;
          case RD_MIN: case RD_ARGMIN:
            if (ibest < 0 || v < ib) ib = v, ibest = k;
            break;
          case RD_ANY: flag = flag || v != 0; break;
          case RD_ALL: flag = flag && v != 0; break;
          default: break;
          }
          continue;
        }
        double v = ts_rt_load_f64(e, j->idt);
        switch (j->op) {
        case RD_SUM: case RD_MEAN: s += v; break;
        case RD_PROD: s *= v; break;
        case RD_MAX: case RD_ARGMAX:
          if (ibest < 0 || (!isnan(best) && (v > best || isnan(v)))) best = v, ibest = k;
          break;
        case RD_MIN: case RD_ARGMIN:
          if (ibest < 0 || (!isnan(best) && (v < best || isnan(v)))) best = v, ibest = k;
          break;
        case RD_ANY: flag = flag || v != 0; break;
        case RD_ALL: flag = flag && v != 0; break;
        case RD_VAR: case RD_STD:
          if (pass == 0) s += v;
          else s += (v - m) * (v - m);
          break;
        case RD_NORM: {
          double a = fabs(v);
          if (j->p == 2) s += a * a;
          else if (j->p == 1) s += a;
          else if (j->p == 0) s += a != 0;
          else if (isinf(j->p) && j->p > 0) s = k == 0 || a > s || isnan(a) ? a : s;
          else if (isinf(j->p)) s = k == 0 || a < s || isnan(a) ? a : s;
          else s += pow(a, j->p);
          break;
        }
        case RD_LSE:
          if (pass == 0) {
            if (ibest < 0 || v > best || isnan(v)) best = v, ibest = k;
          } else {
            s += exp(v - m);
          }
          break;
        }
      }
      int32_t d = nr - 2;
      for (; d >= 0; d--) {
        if (++id[d] < j->rsz[d]) break;
        id[d] = 0;
      }
      if (d < 0) break;
    }
  }
  char *out = j->out + o * (int64_t)ts_dtype_size(j->odt);
  double n = (double)j->nred;
  switch (j->op) {
  case RD_SUM: case RD_PROD:
    if (j->intmode) ts_rt_store_i64(out, j->odt, (int64_t)is);
    else ts_rt_store_f64(out, j->odt, s);
    break;
  case RD_MEAN: ts_rt_store_f64(out, j->odt, s / n); break;
  case RD_MAX: case RD_MIN:
    if (j->intmode) ts_rt_store_i64(out, j->odt, ib);
    else ts_rt_store_f64(out, j->odt, best);
    if (j->idx) j->idx[o] = ibest;
    break;
  case RD_ARGMAX: case RD_ARGMIN: ts_rt_store_i64(out, j->odt, ibest); break;
  case RD_ANY: case RD_ALL: ts_rt_store_i64(out, j->odt, flag); break;
  case RD_VAR: case RD_STD: {
    double den = n - j->correction > 0 ? n - j->correction : 0;
    double v = s / den;
    ts_rt_store_f64(out, j->odt, j->op == RD_STD ? sqrt(v) : v);
    break;
  }
  case RD_NORM:
    if (j->p == 2) s = sqrt(s);
    else if (j->p != 1 && j->p != 0 && !isinf(j->p)) s = pow(s, 1.0 / j->p);
    if (j->nred == 0) s = 0; /* PyTorch: an empty norm is 0 for every p, negative ones too */
    ts_rt_store_f64(out, j->odt, s);
    break;
  case RD_LSE: ts_rt_store_f64(out, j->odt, j->nred ? log(s) + m : -INFINITY); break;
  }
}

static void rd_range(void *arg, int64_t b, int64_t e) {
  const rd_job *j = arg;
  for (int64_t o = b; o < e; o++) {
    int64_t base = 0, r = o;
    for (int32_t d = j->nk - 1; d >= 0; d--) {
      base += (r % j->ksz[d]) * j->kst[d];
      r /= j->ksz[d];
    }
    rd_one(j, base, o);
  }
}

/* Reads a dim list into a mask over a's dims; n == 0 means all dims. */
static bool rd_mask(ts_rt_ctx *c, const ts_rt_tensor *a, const int64_t *dims, uint32_t n, bool *mask) {
  int32_t nd = a->ndim;
  for (int32_t i = 0; i < nd; i++) mask[i] = n == 0;
  for (uint32_t i = 0; i < n; i++) {
    int64_t d = 0;
    if (!ts_rt_wrap_dim(c, dims[i], nd, &d)) return false;
    if (nd == 0) continue;
    if (mask[d]) return ts_rt_fail(c, "dim %lld appears multiple times in the list of dims", (long long)d);
    mask[d] = true;
  }
  return true;
}

/* Runs op over the dims in mask; values of dtype odt; for max/min with
 * `want_idx`, the indices into *idx_out. `name` for messages; `all` says no
 * dim was given (the message of an empty max differs). */
static ts_rt_tensor *rd_run(ts_rt_ctx *c, const ts_rt_tensor *a, rd_op op, const bool *mask, bool keepdim,
                            ts_dtype odt, ts_dtype cdt, bool want_idx, ts_rt_tensor **idx_out, const char *name,
                            bool all, double p, double correction) {
  ts_rt_tensor *src = NULL;
  if (cdt != (ts_dtype)a->dtype) {
    if (!(src = ts_rt_tensor_to_dtype(c, a, cdt))) return NULL;
    a = src;
  }
  rd_job j;
  memset(&j, 0, sizeof j);
  j.op = op, j.in = ts_rt_tensor_data(a), j.idt = cdt, j.odt = odt, j.p = p, j.correction = correction;
  j.intmode = ts_rt_dtype_is_integral(cdt, true) &&
              (op == RD_SUM || op == RD_PROD || op == RD_MAX || op == RD_MIN || op == RD_ARGMAX || op == RD_ARGMIN ||
               op == RD_ANY || op == RD_ALL);
  int64_t osz[TS_RT_MAX_DIMS];
  int32_t on = 0;
  j.nred = 1;
  int64_t nout = 1;
  for (int32_t d = 0; d < a->ndim; d++) {
    if (mask[d]) {
      j.rsz[j.nr] = a->sizes[d], j.rst[j.nr++] = a->strides[d];
      j.nred *= a->sizes[d];
      if (keepdim) osz[on++] = 1;
    } else {
      j.ksz[j.nk] = a->sizes[d], j.kst[j.nk++] = a->strides[d];
      nout *= a->sizes[d];
      osz[on++] = a->sizes[d];
    }
  }
  bool needs_elem = op == RD_MAX || op == RD_MIN || op == RD_ARGMAX || op == RD_ARGMIN;
  if (needs_elem && j.nred == 0 && (all || nout > 0)) {
    if (all)
      ts_rt_fail(c, "%s(): Expected reduction dim to be specified for input.numel() == 0.%s", name,
                 op == RD_ARGMAX || op == RD_ARGMIN ? "" : " Specify the reduction dim with the 'dim' argument.");
    else
      for (int32_t d = 0; d < a->ndim; d++)
        if (mask[d] && a->sizes[d] == 0) {
          ts_rt_fail(c, "%s(): Expected reduction dim %d to have non-zero size.", name, (int)d);
          break;
        }
    if (src) ts_rt_tensor_release(src);
    return NULL;
  }
  ts_rt_tensor *out = ts_rt_tensor_new(c, odt, on, osz, false);
  ts_rt_tensor *idx = out && want_idx ? ts_rt_tensor_new(c, TS_DT_INT64, on, osz, false) : NULL;
  if (out && (!want_idx || idx)) {
    j.out = ts_rt_tensor_data(out);
    j.idx = idx ? ts_rt_tensor_data(idx) : NULL;
    ts_rt_parallel_for(c, nout, 32768 / (j.nred ? j.nred : 1) + 1, rd_range, &j);
  } else if (out) {
    ts_rt_tensor_release(out);
    out = NULL;
  }
  if (src) ts_rt_tensor_release(src);
  if (idx_out) *idx_out = idx;
  return out;
}

/* sum / prod result dtype: integers widen to int64 unless dtype is given. */
static ts_dtype rd_sum_dtype(ts_dtype in, ts_dtype dtype) {
  if (dtype != TS_DT_NONE) return dtype;
  return ts_rt_dtype_is_integral(in, true) ? TS_DT_INT64 : in;
}

ts_rt_tensor *ts_rt_sum(ts_rt_ctx *c, const ts_rt_tensor *a, const int64_t *dims, uint32_t ndims, bool keepdim,
                        ts_dtype dtype) {
  bool mask[TS_RT_MAX_DIMS];
  if (!rd_mask(c, a, dims, ndims, mask)) return NULL;
  ts_dtype odt = rd_sum_dtype((ts_dtype)a->dtype, dtype);
  ts_dtype cdt = dtype != TS_DT_NONE ? dtype : (ts_dtype)a->dtype;
  return rd_run(c, a, RD_SUM, mask, keepdim, odt, cdt, false, NULL, "sum", ndims == 0, 0, 0);
}

ts_rt_tensor *ts_rt_mean(ts_rt_ctx *c, const ts_rt_tensor *a, const int64_t *dims, uint32_t ndims, bool keepdim,
                         ts_dtype dtype) {
  ts_dtype odt = dtype != TS_DT_NONE ? dtype : (ts_dtype)a->dtype;
  if (!ts_rt_dtype_is_float(odt))
    return ts_rt_fail(c, "mean(): could not infer output dtype. %s must be either a floating point or complex dtype. "
                         "Got: %s",
                      dtype != TS_DT_NONE ? "Optional dtype" : "Input dtype", ts_rt_dtype_name(odt)),
           NULL;
  bool mask[TS_RT_MAX_DIMS];
  if (!rd_mask(c, a, dims, ndims, mask)) return NULL;
  return rd_run(c, a, RD_MEAN, mask, keepdim, odt, odt, false, NULL, "mean", ndims == 0, 0, 0);
}

/* ---------------------------------------------------------------- kernels */

/* Reads `int[1]? dim` (None or [] meaning all) into dims. */
static bool rd_dims_arg(ts_rt_ctx *c, ts_rt_call *call, uint32_t i, int64_t *dims, uint32_t *n) {
  *n = 0;
  if (!ts_rt_arg_check(c, call, i)) return false;
  if (call->in[i].tag == TS_IV_NONE) return true;
  return ts_rt_arg_ints(c, call, i, dims, TS_RT_MAX_DIMS, n, 1);
}

static bool rd_k_sum(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  ts_dtype dt = TS_DT_NONE;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_opt_dtype(c, call, 1, &dt)) return false;
  return nnu_ret(call, ts_rt_sum(c, a, NULL, 0, false, dt));
}

static bool rd_k_sum_dim(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  int64_t dims[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  bool keep = false;
  ts_dtype dt = TS_DT_NONE;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !rd_dims_arg(c, call, 1, dims, &n) || !ts_rt_arg_bool(c, call, 2, &keep) ||
      !ts_rt_arg_opt_dtype(c, call, 3, &dt))
    return false;
  return nnu_ret(call, ts_rt_sum(c, a, dims, n, keep, dt));
}

static bool rd_k_mean(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  ts_dtype dt = TS_DT_NONE;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_opt_dtype(c, call, 1, &dt)) return false;
  return nnu_ret(call, ts_rt_mean(c, a, NULL, 0, false, dt));
}

static bool rd_k_mean_dim(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  int64_t dims[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  bool keep = false;
  ts_dtype dt = TS_DT_NONE;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !rd_dims_arg(c, call, 1, dims, &n) || !ts_rt_arg_bool(c, call, 2, &keep) ||
      !ts_rt_arg_opt_dtype(c, call, 3, &dt))
    return false;
  return nnu_ret(call, ts_rt_mean(c, a, dims, n, keep, dt));
}

/* prod over all dims (dim < 0 after `all`) or one dim. */
static ts_rt_tensor *rd_prod(ts_rt_ctx *c, const ts_rt_tensor *a, bool all, int64_t dim, bool keep, ts_dtype dtype) {
  ts_dtype cdt = dtype != TS_DT_NONE ? dtype : (ts_dtype)a->dtype;
  if (cdt == TS_DT_FLOAT16 || cdt == TS_DT_BFLOAT16) return nnu_not_impl(c, "prod_cpu", cdt), NULL;
  bool mask[TS_RT_MAX_DIMS];
  if (!rd_mask(c, a, &dim, all ? 0 : 1, mask)) return NULL;
  return rd_run(c, a, RD_PROD, mask, keep, rd_sum_dtype((ts_dtype)a->dtype, dtype), cdt, false, NULL, "prod", all, 0,
                0);
}

static bool rd_k_prod(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  ts_dtype dt = TS_DT_NONE;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_opt_dtype(c, call, 1, &dt)) return false;
  return nnu_ret(call, rd_prod(c, a, true, 0, false, dt));
}

static bool rd_k_prod_dim(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  int64_t dim = 0;
  bool keep = false;
  ts_dtype dt = TS_DT_NONE;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_int(c, call, 1, &dim) || !ts_rt_arg_bool(c, call, 2, &keep) ||
      !ts_rt_arg_opt_dtype(c, call, 3, &dt))
    return false;
  return nnu_ret(call, rd_prod(c, a, false, dim, keep, dt));
}

/* max() / min(): the whole tensor. */
static bool rd_k_minmax_all(ts_rt_ctx *c, ts_rt_call *call, bool max) {
  ts_rt_tensor *a = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &a)) return false;
  bool mask[TS_RT_MAX_DIMS];
  if (!rd_mask(c, a, NULL, 0, mask)) return false;
  return nnu_ret(call, rd_run(c, a, max ? RD_MAX : RD_MIN, mask, false, (ts_dtype)a->dtype, (ts_dtype)a->dtype, false,
                              NULL, max ? "max" : "min", true, 0, 0));
}
static bool rd_k_max(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_minmax_all(c, call, true); }
static bool rd_k_min(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_minmax_all(c, call, false); }

/* max.dim / min.dim: (values, indices). */
static bool rd_k_minmax_dim(ts_rt_ctx *c, ts_rt_call *call, bool max) {
  ts_rt_tensor *a = NULL;
  int64_t dim = 0;
  bool keep = false;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_int(c, call, 1, &dim) || !ts_rt_arg_bool(c, call, 2, &keep))
    return false;
  bool mask[TS_RT_MAX_DIMS];
  if (!rd_mask(c, a, &dim, 1, mask)) return false;
  ts_rt_tensor *idx = NULL;
  ts_rt_tensor *v = rd_run(c, a, max ? RD_MAX : RD_MIN, mask, keep, (ts_dtype)a->dtype, (ts_dtype)a->dtype, true, &idx,
                           max ? "max" : "min", false, 0, 0);
  if (!v) return false;
  call->out[0] = ts_iv_tensor(v);
  call->out[1] = ts_iv_tensor(idx);
  return true;
}
static bool rd_k_max_dim(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_minmax_dim(c, call, true); }
static bool rd_k_min_dim(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_minmax_dim(c, call, false); }

/* max.other / min.other: elementwise maximum / minimum. */
static bool rd_k_max_other(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL, *b = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_tensor(c, call, 1, &b)) return false;
  return nnu_ret(call, ts_rt_binary_op(c, TS_PW_maximum, a, b));
}
static bool rd_k_min_other(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL, *b = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_tensor(c, call, 1, &b)) return false;
  return nnu_ret(call, ts_rt_binary_op(c, TS_PW_minimum, a, b));
}

/* amax / amin over a dim list ([] = all). */
static bool rd_k_aminmax(ts_rt_ctx *c, ts_rt_call *call, bool max) {
  ts_rt_tensor *a = NULL;
  int64_t dims[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  bool keep = false;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !rd_dims_arg(c, call, 1, dims, &n) || !ts_rt_arg_bool(c, call, 2, &keep))
    return false;
  bool mask[TS_RT_MAX_DIMS];
  if (!rd_mask(c, a, dims, n, mask)) return false;
  return nnu_ret(call, rd_run(c, a, max ? RD_MAX : RD_MIN, mask, keep, (ts_dtype)a->dtype, (ts_dtype)a->dtype, false,
                              NULL, max ? "amax" : "amin", n == 0, 0, 0));
}
static bool rd_k_amax(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_aminmax(c, call, true); }
static bool rd_k_amin(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_aminmax(c, call, false); }

/* argmax / argmin (dim None: index into the flattened tensor). */
static bool rd_k_arg(ts_rt_ctx *c, ts_rt_call *call, bool max) {
  ts_rt_tensor *a = NULL;
  int64_t dim = 0;
  bool has = false, keep = false;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_opt_int(c, call, 1, &dim, &has) ||
      !ts_rt_arg_bool(c, call, 2, &keep))
    return false;
  if (a->dtype == TS_DT_BOOL) return nnu_not_impl(c, max ? "argmax_cpu" : "argmin_cpu", TS_DT_BOOL);
  bool mask[TS_RT_MAX_DIMS];
  if (!rd_mask(c, a, &dim, has ? 1 : 0, mask)) return false;
  /* argmax without dim and keepdim=True keeps every dim as 1 */
  return nnu_ret(call, rd_run(c, a, max ? RD_ARGMAX : RD_ARGMIN, mask, keep, TS_DT_INT64, (ts_dtype)a->dtype, false,
                              NULL, max ? "argmax" : "argmin", !has, 0, 0));
}
static bool rd_k_argmax(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_arg(c, call, true); }
static bool rd_k_argmin(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_arg(c, call, false); }

/* any / all: bool result (uint8 for uint8 input). */
static bool rd_k_anyall(ts_rt_ctx *c, ts_rt_call *call, bool any, bool has_dim) {
  ts_rt_tensor *a = NULL;
  int64_t dim = 0;
  bool keep = false;
  if (!ts_rt_arg_tensor(c, call, 0, &a)) return false;
  if (has_dim && (!ts_rt_arg_int(c, call, 1, &dim) || !ts_rt_arg_bool(c, call, 2, &keep))) return false;
  bool mask[TS_RT_MAX_DIMS];
  if (!rd_mask(c, a, &dim, has_dim ? 1 : 0, mask)) return false;
  ts_dtype odt = a->dtype == TS_DT_UINT8 ? TS_DT_UINT8 : TS_DT_BOOL;
  return nnu_ret(call, rd_run(c, a, any ? RD_ANY : RD_ALL, mask, keep, odt, (ts_dtype)a->dtype, false, NULL,
                              any ? "any" : "all", !has_dim, 0, 0));
}
static bool rd_k_any(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_anyall(c, call, true, false); }
static bool rd_k_any_dim(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_anyall(c, call, true, true); }
static bool rd_k_all(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_anyall(c, call, false, false); }
static bool rd_k_all_dim(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_anyall(c, call, false, true); }

/* var / std with a correction (1 = unbiased). */
static ts_rt_tensor *rd_varstd(ts_rt_ctx *c, const ts_rt_tensor *a, const int64_t *dims, uint32_t n, bool keep,
                               double correction, bool std) {
  if (!ts_rt_dtype_is_float((ts_dtype)a->dtype))
    return ts_rt_fail(c, "std and var only support floating point and complex dtypes"), NULL;
  bool mask[TS_RT_MAX_DIMS];
  if (!rd_mask(c, a, dims, n, mask)) return NULL;
  return rd_run(c, a, std ? RD_STD : RD_VAR, mask, keep, (ts_dtype)a->dtype, (ts_dtype)a->dtype, false, NULL,
                std ? "std" : "var", n == 0, 0, correction);
}

static bool rd_k_varstd(ts_rt_ctx *c, ts_rt_call *call, bool std) {
  ts_rt_tensor *a = NULL;
  bool unbiased = true;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_bool(c, call, 1, &unbiased)) return false;
  return nnu_ret(call, rd_varstd(c, a, NULL, 0, false, unbiased ? 1 : 0, std));
}

static bool rd_k_varstd_dim(ts_rt_ctx *c, ts_rt_call *call, bool std) {
  ts_rt_tensor *a = NULL;
  int64_t dims[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  bool unbiased = true, keep = false;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !rd_dims_arg(c, call, 1, dims, &n) ||
      !ts_rt_arg_bool(c, call, 2, &unbiased) || !ts_rt_arg_bool(c, call, 3, &keep))
    return false;
  return nnu_ret(call, rd_varstd(c, a, dims, n, keep, unbiased ? 1 : 0, std));
}

static bool rd_k_varstd_corr(ts_rt_ctx *c, ts_rt_call *call, bool std) {
  ts_rt_tensor *a = NULL;
  int64_t dims[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  int64_t corr = 1;
  bool has = false, keep = false;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !rd_dims_arg(c, call, 1, dims, &n) ||
      !ts_rt_arg_opt_int(c, call, 2, &corr, &has) || !ts_rt_arg_bool(c, call, 3, &keep))
    return false;
  return nnu_ret(call, rd_varstd(c, a, dims, n, keep, has ? (double)corr : 1, std));
}

static bool rd_k_var(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_varstd(c, call, false); }
static bool rd_k_std(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_varstd(c, call, true); }
static bool rd_k_var_dim(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_varstd_dim(c, call, false); }
static bool rd_k_std_dim(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_varstd_dim(c, call, true); }
static bool rd_k_var_corr(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_varstd_corr(c, call, false); }
static bool rd_k_std_corr(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_varstd_corr(c, call, true); }

/* norm: p (None = 2) over dims (none = all), result in dtype (NONE: a's). */
static ts_rt_tensor *rd_norm(ts_rt_ctx *c, const ts_rt_tensor *a, double p, const int64_t *dims, uint32_t n, bool keep,
                             ts_dtype dtype) {
  if (!ts_rt_dtype_is_float((ts_dtype)a->dtype))
    return ts_rt_fail(c, "norm(): input dtype should be either floating point or complex. Got %s instead.",
                      ts_rt_dtype_name((ts_dtype)a->dtype)),
           NULL;
  ts_dtype odt = dtype != TS_DT_NONE ? dtype : (ts_dtype)a->dtype;
  bool mask[TS_RT_MAX_DIMS];
  if (!rd_mask(c, a, dims, n, mask)) return NULL;
  return rd_run(c, a, RD_NORM, mask, keep, odt, odt, false, NULL, "norm", n == 0, p, 0);
}

/* Reads `Scalar? p` (None: 2). */
static bool rd_p_arg(ts_rt_ctx *c, ts_rt_call *call, uint32_t i, double *p) {
  *p = 2;
  if (!ts_rt_arg_check(c, call, i)) return false;
  return call->in[i].tag == TS_IV_NONE || ts_rt_arg_double(c, call, i, p);
}

static bool rd_k_norm_scalar(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  double p = 2;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !rd_p_arg(c, call, 1, &p)) return false;
  return nnu_ret(call, rd_norm(c, a, p, NULL, 0, false, TS_DT_NONE));
}

static bool rd_k_norm_dim(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  double p = 2;
  int64_t dims[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  bool keep = false;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !rd_p_arg(c, call, 1, &p) || !rd_dims_arg(c, call, 2, dims, &n) ||
      !ts_rt_arg_bool(c, call, 3, &keep))
    return false;
  return nnu_ret(call, rd_norm(c, a, p, dims, n, keep, TS_DT_NONE));
}

static bool rd_k_norm_dim_dtype(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  double p = 2;
  int64_t dims[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  bool keep = false;
  ts_dtype dt = TS_DT_NONE;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !rd_p_arg(c, call, 1, &p) || !rd_dims_arg(c, call, 2, dims, &n) ||
      !ts_rt_arg_bool(c, call, 3, &keep) || !ts_rt_arg_opt_dtype(c, call, 4, &dt))
    return false;
  return nnu_ret(call, rd_norm(c, a, p, dims, n, keep, dt));
}

static bool rd_k_norm_dtype(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  double p = 2;
  ts_dtype dt = TS_DT_NONE;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !rd_p_arg(c, call, 1, &p) || !ts_rt_arg_opt_dtype(c, call, 2, &dt))
    return false;
  return nnu_ret(call, rd_norm(c, a, p, NULL, 0, false, dt));
}

/* frobenius_norm: the 2-norm over at most two dims (none: all of them), as
 * ATen 1.13's frobenius_norm computes it (norm(2) for none or one dim,
 * sqrt(sum(x * x)) for two, which the 2-norm equals). */
static ts_rt_tensor *rd_frobenius(ts_rt_ctx *c, const ts_rt_tensor *a, const int64_t *dims, uint32_t n, bool keep) {
  if (n > 2)
    return ts_rt_fail(c, "Expected at most 2 dimensions, but got %u dimensions instead.", (unsigned)n), NULL;
  int64_t d0 = 0, d1 = 0;
  if (n == 2 && (!ts_rt_wrap_dim(c, dims[0], a->ndim, &d0) || !ts_rt_wrap_dim(c, dims[1], a->ndim, &d1)))
    return NULL;
  if (n == 2 && d0 == d1)
    return ts_rt_fail(c, "Expected dims to be different, got [%lld, %lld] instead", (long long)dims[0],
                      (long long)dims[1]),
           NULL;
  return rd_norm(c, a, 2, dims, n, keep, TS_DT_NONE);
}

static bool rd_k_frobenius(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &a)) return false;
  return nnu_ret(call, rd_frobenius(c, a, NULL, 0, false));
}

static bool rd_k_frobenius_dim(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  int64_t dims[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  bool keep = false;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_ints(c, call, 1, dims, TS_RT_MAX_DIMS, &n, 1) ||
      !ts_rt_arg_bool(c, call, 2, &keep))
    return false;
  return nnu_ret(call, rd_frobenius(c, a, dims, n, keep));
}

/* The sum of the singular values of the m x n matrix in `w` (column j at
 * w + j * m; overwritten): one-sided Jacobi (Hestenes) rotations make the
 * columns orthogonal, their norms are then the singular values. */
static double rd_nuclear_one(double *w, int64_t m, int64_t n) {
  for (int sweep = 0; sweep < 64; sweep++) {
    bool rotated = false;
    for (int64_t j = 0; j + 1 < n; j++)
      for (int64_t k = j + 1; k < n; k++) {
        double *x = w + j * m, *y = w + k * m, al = 0, be = 0, ga = 0;
        for (int64_t i = 0; i < m; i++) al += x[i] * x[i], be += y[i] * y[i], ga += x[i] * y[i];
        if (ga == 0 || !(fabs(ga) > 1e-15 * sqrt(al * be))) continue;
        rotated = true;
        double zeta = (be - al) / (2 * ga);
        double t = (zeta >= 0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1 + zeta * zeta));
        double cs = 1 / sqrt(1 + t * t), sn = cs * t;
        for (int64_t i = 0; i < m; i++) {
          double u = x[i], v = y[i];
          x[i] = cs * u - sn * v;
          y[i] = sn * u + cs * v;
        }
      }
    if (!rotated) break;
  }
  double s = 0;
  for (int64_t j = 0; j < n; j++) {
    double q = 0;
    for (int64_t i = 0; i < m; i++) q += w[j * m + i] * w[j * m + i];
    s += sqrt(q);
  }
  return s;
}

/* nuclear_norm over dims (d0, d1): the sum of the singular values of each
 * matrix, computed in double. `named` (nuclear_norm without dim) wants a
 * 2-d input. */
static ts_rt_tensor *rd_nuclear(ts_rt_ctx *c, const ts_rt_tensor *a, const int64_t *dims, uint32_t n, bool keep,
                                bool named) {
  if (named && a->ndim != 2)
    return ts_rt_fail(c, "Expected a tensor with 2 dimensions, but got a tensor with %d dimension%s instead.",
                      (int)a->ndim, a->ndim == 1 ? "" : "s"),
           NULL;
  if (n != 2) return ts_rt_fail(c, "nuclear norm requires a 'dim' argument of size 2"), NULL;
  ts_dtype dt = (ts_dtype)a->dtype;
  if (dt == TS_DT_FLOAT16 || dt == TS_DT_BFLOAT16) return nnu_not_impl(c, "linalg_svd_cpu", dt), NULL;
  if (dt != TS_DT_FLOAT32 && dt != TS_DT_FLOAT64)
    return ts_rt_fail(c, "linalg.svd: Expected a floating point or complex tensor as input. Got %s",
                      ts_rt_dtype_name(dt)),
           NULL;
  int64_t d0 = 0, d1 = 0;
  if (!ts_rt_wrap_dim(c, dims[0], a->ndim, &d0) || !ts_rt_wrap_dim(c, dims[1], a->ndim, &d1)) return NULL;
  if (d0 == d1) return ts_rt_fail(c, "duplicate or invalid dimensions"), NULL;
  /* rows along d0, columns along d1; the fewer of the two become columns */
  int64_t m = a->sizes[d0], nc = a->sizes[d1], sm = a->strides[d0], sc = a->strides[d1];
  if (nc > m) {
    int64_t t = m;
    m = nc, nc = t, t = sm, sm = sc, sc = t;
  }
  int64_t osz[TS_RT_MAX_DIMS], bsz[TS_RT_MAX_DIMS], bst[TS_RT_MAX_DIMS], nb = 1;
  int32_t on = 0, bn = 0;
  for (int32_t d = 0; d < a->ndim; d++) {
    if (d == d0 || d == d1) {
      if (keep) osz[on++] = 1;
      continue;
    }
    osz[on++] = a->sizes[d];
    bsz[bn] = a->sizes[d], bst[bn++] = a->strides[d];
    nb *= a->sizes[d];
  }
  size_t cells;
  if (__builtin_mul_overflow((size_t)m, (size_t)nc, &cells) || cells > SIZE_MAX / sizeof(double))
    return ts_rt_fail(c, "nuclear_norm: a %lld x %lld matrix is too large", (long long)m, (long long)nc), NULL;
  ts_rt_tensor *out = ts_rt_tensor_new(c, dt, on, osz, false);
  if (!out) return NULL;
  double *w = malloc(cells ? cells * sizeof *w : 1);
  if (!w) {
    ts_rt_tensor_release(out);
    return ts_rt_fail(c, "nuclear_norm: out of memory for a %lld x %lld matrix", (long long)m, (long long)nc), NULL;
  }
  const char *in = ts_rt_tensor_data(a);
  char *o = ts_rt_tensor_data(out);
  size_t es = ts_dtype_size(dt);
  for (int64_t b = 0; b < nb; b++) {
    int64_t base = 0, r = b;
    for (int32_t d = bn - 1; d >= 0; d--) {
      base += (r % bsz[d]) * bst[d];
      r /= bsz[d];
    }
    for (int64_t j = 0; j < nc; j++)
      for (int64_t i = 0; i < m; i++) w[j * m + i] = ts_rt_load_f64(in + (base + i * sm + j * sc) * (int64_t)es, dt);
    ts_rt_store_f64(o + b * (int64_t)es, dt, rd_nuclear_one(w, m, nc));
  }
  free(w);
  return out;
}

static bool rd_k_nuclear(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  bool keep = false;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_bool(c, call, 1, &keep)) return false;
  return nnu_ret(call, rd_nuclear(c, a, (const int64_t[]){0, 1}, 2, keep, true));
}

static bool rd_k_nuclear_dim(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  int64_t dims[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  bool keep = false;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_ints(c, call, 1, dims, TS_RT_MAX_DIMS, &n, 2) ||
      !ts_rt_arg_bool(c, call, 2, &keep))
    return false;
  return nnu_ret(call, rd_nuclear(c, a, dims, n, keep, false));
}

static bool rd_k_logsumexp(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  int64_t dims[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  bool keep = false;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_ints(c, call, 1, dims, TS_RT_MAX_DIMS, &n, 1) ||
      !ts_rt_arg_bool(c, call, 2, &keep))
    return false;
  ts_dtype dt = (ts_dtype)a->dtype;
  if (dt == TS_DT_FLOAT16) return nnu_not_impl(c, "exp_vml_cpu", dt);
  ts_dtype odt = ts_rt_dtype_is_float(dt) ? dt : TS_DT_FLOAT32;
  bool mask[TS_RT_MAX_DIMS];
  if (!rd_mask(c, a, dims, n, mask)) return false;
  return nnu_ret(call, rd_run(c, a, RD_LSE, mask, keep, odt, odt, false, NULL, "logsumexp", n == 0, 0, 0));
}

/* ------------------------------------------------------------ lane ops */

/* A lane op along one dim: the lanes are every index of the other dims. */
typedef struct rd_lanes {
  int32_t nk;
  int64_t ksz[TS_RT_MAX_DIMS], kst_in[TS_RT_MAX_DIMS], kst_out[TS_RT_MAX_DIMS];
  int64_t n, nlanes;
} rd_lanes;

static void rd_lanes_init(rd_lanes *l, const ts_rt_tensor *a, int64_t dim, const int64_t *out_strides) {
  l->nk = 0;
  l->nlanes = 1;
  l->n = a->ndim ? a->sizes[dim] : 1;
  for (int32_t d = 0; d < a->ndim; d++) {
    if (d == dim) continue;
    l->ksz[l->nk] = a->sizes[d], l->kst_in[l->nk] = a->strides[d], l->kst_out[l->nk++] = out_strides[d];
    l->nlanes *= a->sizes[d];
  }
}

/* The input and output offsets of lane i. */
static void rd_lane_base(const rd_lanes *l, int64_t i, int64_t *in, int64_t *out) {
  *in = *out = 0;
  for (int32_t d = l->nk - 1; d >= 0; d--) {
    int64_t k = i % l->ksz[d];
    i /= l->ksz[d];
    *in += k * l->kst_in[d];
    *out += k * l->kst_out[d];
  }
}

/* cumsum / cumprod along dim. */
static ts_rt_tensor *rd_cum(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t dim, ts_dtype dtype, bool prod) {
  int64_t d = 0;
  if (!ts_rt_wrap_dim(c, dim, a->ndim, &d)) return NULL;
  ts_dtype odt = rd_sum_dtype((ts_dtype)a->dtype, dtype);
  if (odt == TS_DT_FLOAT16) return nnu_not_impl(c, prod ? "cumprod_out_cpu" : "cumsum_out_cpu", odt), NULL;
  ts_rt_tensor *out = ts_rt_tensor_new(c, odt, a->ndim, a->sizes, false);
  if (!out) return NULL;
  rd_lanes l;
  rd_lanes_init(&l, a, d, out->strides);
  int64_t sin = a->ndim ? a->strides[d] : 0, sout = a->ndim ? out->strides[d] : 0;
  size_t ies = ts_dtype_size((ts_dtype)a->dtype), oes = ts_dtype_size(odt);
  bool intmode = ts_rt_dtype_is_integral(odt, true);
  const char *in = ts_rt_tensor_data(a);
  char *od = ts_rt_tensor_data(out);
  for (int64_t i = 0; i < l.nlanes; i++) {
    int64_t bi, bo;
    rd_lane_base(&l, i, &bi, &bo);
    double s = prod ? 1 : 0;
    uint64_t is = prod ? 1 : 0;
    for (int64_t k = 0; k < l.n; k++) {
      const char *e = in + (bi + k * sin) * (int64_t)ies;
      char *o = od + (bo + k * sout) * (int64_t)oes;
      if (intmode) {
        uint64_t v = (uint64_t)ts_rt_load_i64(e, (ts_dtype)a->dtype);
        is = prod ? is * v : is + v;
        ts_rt_store_i64(o, odt, (int64_t)is);
      } else {
        double v = ts_rt_load_f64(e, (ts_dtype)a->dtype);
        s = prod ? s * v : s + v;
        ts_rt_store_f64(o, odt, s);
      }
    }
  }
  return out;
}

static bool rd_k_cum(ts_rt_ctx *c, ts_rt_call *call, bool prod) {
  ts_rt_tensor *a = NULL;
  int64_t dim = 0;
  ts_dtype dt = TS_DT_NONE;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_int(c, call, 1, &dim) || !ts_rt_arg_opt_dtype(c, call, 2, &dt))
    return false;
  return nnu_ret(call, rd_cum(c, a, dim, dt, prod));
}
static bool rd_k_cumsum(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_cum(c, call, false); }
static bool rd_k_cumprod(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_cum(c, call, true); }

/* A sort key: the value (as double, or int64 for integer dtypes) and its
 * index along the lane. */
typedef struct rd_key {
  double f;
  int64_t i, pos;
} rd_key;

/* Whether x goes strictly before y: NaN counts as the largest value. */
static bool rd_before(const rd_key *x, const rd_key *y, bool intmode, bool desc) {
  if (intmode) return desc ? x->i > y->i : x->i < y->i;
  bool xn = isnan(x->f), yn = isnan(y->f);
  if (desc) return (xn && !yn) || (!xn && !yn && x->f > y->f);
  return (!xn && yn) || (!xn && !yn && x->f < y->f);
}

/* Stable merge sort of k[0..n) with tmp as scratch. */
static void rd_msort(rd_key *k, rd_key *tmp, int64_t n, bool intmode, bool desc) {
  if (n < 2) return;
  int64_t h = n / 2;
  rd_msort(k, tmp, h, intmode, desc);
  rd_msort(k + h, tmp, n - h, intmode, desc);
  int64_t i = 0, j = h, t = 0;
  while (i < h && j < n) tmp[t++] = rd_before(&k[j], &k[i], intmode, desc) ? k[j++] : k[i++];
  while (i < h) tmp[t++] = k[i++];
  while (j < n) tmp[t++] = k[j++];
  memcpy(k, tmp, (size_t)n * sizeof(rd_key));
}

/* libstdc++'s std::sort, std::nth_element and std::partial_sort, step for
 * step, so that ties come out in the order PyTorch's sort (not stable) and
 * topk give them. */
typedef struct ls_cmp {
  bool intmode, desc;
} ls_cmp;

static bool ls_less(const ls_cmp *c, const rd_key *a, const rd_key *b) { return rd_before(a, b, c->intmode, c->desc); }

static void ls_swap(rd_key *a, rd_key *b) {
  rd_key t = *a;
  *a = *b;
  *b = t;
}

static int64_t ls_lg(int64_t n) {
  int64_t r = 0;
  while (n > 1) n >>= 1, r++;
  return r;
}

static void ls_insertion_sort(const ls_cmp *c, rd_key *first, rd_key *last) {
  if (first == last) return;
  for (rd_key *i = first + 1; i < last; i++) {
    rd_key v = *i;
    if (ls_less(c, &v, first)) {
      memmove(first + 1, first, (size_t)(i - first) * sizeof(rd_key));
      *first = v;
    } else {
      rd_key *j = i, *nx = i - 1;
      while (ls_less(c, &v, nx)) *j = *nx, j = nx, nx--;
      *j = v;
    }
  }
}

static void ls_move_median_to_first(const ls_cmp *c, rd_key *r, rd_key *a, rd_key *b, rd_key *d) {
  if (ls_less(c, a, b)) {
    if (ls_less(c, b, d)) ls_swap(r, b);
    else if (ls_less(c, a, d)) ls_swap(r, d);
    else ls_swap(r, a);
  } else if (ls_less(c, a, d)) {
    ls_swap(r, a);
  } else if (ls_less(c, b, d)) {
    ls_swap(r, d);
  } else {
    ls_swap(r, b);
  }
}

static rd_key *ls_partition_pivot(const ls_cmp *c, rd_key *first, rd_key *last) {
  rd_key *mid = first + (last - first) / 2;
  ls_move_median_to_first(c, first, first + 1, mid, last - 1);
  rd_key *f = first + 1, *l = last;
  for (;;) {
    while (ls_less(c, f, first)) f++;
    l--;
    while (ls_less(c, first, l)) l--;
    if (!(f < l)) return f;
    ls_swap(f, l);
    f++;
  }
}

static void ls_push_heap(const ls_cmp *c, rd_key *first, int64_t hole, int64_t top, rd_key v) {
  int64_t parent = (hole - 1) / 2;
  while (hole > top && ls_less(c, first + parent, &v)) {
    first[hole] = first[parent];
    hole = parent;
    parent = (hole - 1) / 2;
  }
  first[hole] = v;
}

static void ls_adjust_heap(const ls_cmp *c, rd_key *first, int64_t hole, int64_t len, rd_key v) {
  int64_t top = hole, child = hole;
  while (child < (len - 1) / 2) {
    child = 2 * (child + 1);
    if (ls_less(c, first + child, first + (child - 1))) child--;
    first[hole] = first[child];
    hole = child;
  }
  if ((len & 1) == 0 && child == (len - 2) / 2) {
    child = 2 * (child + 1);
    first[hole] = first[child - 1];
    hole = child - 1;
  }
  ls_push_heap(c, first, hole, top, v);
}

static void ls_make_heap(const ls_cmp *c, rd_key *first, rd_key *last) {
  int64_t len = last - first;
  if (len < 2) return;
  for (int64_t parent = (len - 2) / 2;; parent--) {
    ls_adjust_heap(c, first, parent, len, first[parent]);
    if (parent == 0) return;
  }
}

static void ls_pop_heap(const ls_cmp *c, rd_key *first, rd_key *last, rd_key *result) {
  rd_key v = *result;
  *result = *first;
  ls_adjust_heap(c, first, 0, last - first, v);
}

static void ls_partial_sort(const ls_cmp *c, rd_key *first, rd_key *middle, rd_key *last) {
  ls_make_heap(c, first, middle);
  for (rd_key *i = middle; i < last; i++)
    if (ls_less(c, i, first)) ls_pop_heap(c, first, middle, i);
  while (middle - first > 1) {
    middle--;
    ls_pop_heap(c, first, middle, middle);
  }
}

static void ls_introsort_loop(const ls_cmp *c, rd_key *first, rd_key *last, int64_t depth) {
  while (last - first > 16) {
    if (depth == 0) {
      ls_partial_sort(c, first, last, last);
      return;
    }
    depth--;
    rd_key *cut = ls_partition_pivot(c, first, last);
    ls_introsort_loop(c, cut, last, depth);
    last = cut;
  }
}

static void ls_sort(const ls_cmp *c, rd_key *first, rd_key *last) {
  if (last - first < 2) return;
  ls_introsort_loop(c, first, last, ls_lg(last - first) * 2);
  ls_insertion_sort(c, first, last);
}

static void ls_nth_element(const ls_cmp *c, rd_key *first, rd_key *nth, rd_key *last) {
  if (first == last || nth == last) return;
  int64_t depth = ls_lg(last - first) * 2;
  while (last - first > 3) {
    if (depth == 0) {
      /* __heap_select(first, nth + 1, last) then swap first and nth */
      ls_make_heap(c, first, nth + 1);
      for (rd_key *i = nth + 1; i < last; i++)
        if (ls_less(c, i, first)) ls_pop_heap(c, first, nth + 1, i);
      ls_swap(first, nth);
      return;
    }
    depth--;
    rd_key *cut = ls_partition_pivot(c, first, last);
    if (cut <= nth) first = cut;
    else last = cut;
  }
  ls_insertion_sort(c, first, last);
}

typedef enum rd_sortkind { RD_SORT_STABLE, RD_SORT_STD, RD_TOPK, RD_TOPK_UNSORTED } rd_sortkind;

/* Sorts every lane along dim and writes the first `k` of each: values
 * (when vals) and indices. */
static bool rd_sort(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t dim, bool desc, int64_t k, rd_sortkind kind,
                    ts_rt_tensor **vals, ts_rt_tensor **idx) {
  int64_t d = 0;
  if (!ts_rt_wrap_dim(c, dim, a->ndim, &d)) return false;
  int64_t osz[TS_RT_MAX_DIMS];
  memcpy(osz, a->sizes, (size_t)a->ndim * sizeof(int64_t));
  if (a->ndim) osz[d] = k;
  ts_dtype dt = (ts_dtype)a->dtype;
  ts_rt_tensor *v = vals ? ts_rt_tensor_new(c, dt, a->ndim, osz, false) : NULL;
  ts_rt_tensor *ix = (!vals || v) ? ts_rt_tensor_new(c, TS_DT_INT64, a->ndim, osz, false) : NULL;
  if (!ix) {
    if (v) ts_rt_tensor_release(v);
    return false;
  }
  rd_lanes l;
  rd_lanes_init(&l, a, d, ix->strides);
  rd_key *keys = ts_rt_malloc((size_t)(2 * l.n + 1) * sizeof(rd_key));
  if (!keys) {
    if (v) ts_rt_tensor_release(v);
    ts_rt_tensor_release(ix);
    return ts_rt_oom(c);
  }
  bool intmode = ts_rt_dtype_is_integral(dt, true);
  size_t es = ts_dtype_size(dt);
  int64_t sin = a->ndim ? a->strides[d] : 0, sout = a->ndim ? ix->strides[d] : 0;
  const char *in = ts_rt_tensor_data(a);
  for (int64_t i = 0; i < l.nlanes; i++) {
    int64_t bi, bo;
    rd_lane_base(&l, i, &bi, &bo);
    for (int64_t t = 0; t < l.n; t++) {
      const char *e = in + (bi + t * sin) * (int64_t)es;
      keys[t].pos = t;
      if (intmode) keys[t].i = ts_rt_load_i64(e, dt), keys[t].f = 0;
      else keys[t].f = ts_rt_load_f64(e, dt), keys[t].i = 0;
    }
    ls_cmp cmp = {intmode, desc};
    if (kind == RD_SORT_STABLE) {
      rd_msort(keys, keys + l.n, l.n, intmode, desc);
    } else if (kind == RD_SORT_STD) {
      ls_sort(&cmp, keys, keys + l.n);
    } else if (k > 0 && k * 64 <= l.n) {
      ls_partial_sort(&cmp, keys, keys + k, keys + l.n);
    } else if (k > 0) {
      /* as ATen's topk_impl_loop: nth_element, then sort all but the k-th */
      ls_nth_element(&cmp, keys, keys + k - 1, keys + l.n);
      if (kind == RD_TOPK) ls_sort(&cmp, keys, keys + k - 1);
    }
    for (int64_t t = 0; t < k; t++) {
      ((int64_t *)ts_rt_tensor_data(ix))[bo + t * sout] = keys[t].pos;
      if (v) memcpy((char *)ts_rt_tensor_data(v) + (bo + t * sout) * (int64_t)es, in + (bi + keys[t].pos * sin) *
                    (int64_t)es, es);
    }
  }
  ts_rt_free(keys);
  if (vals) *vals = v;
  *idx = ix;
  return true;
}

ts_rt_tensor *ts_rt_argsort(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t dim, bool desc, bool stable) {
  int64_t d = 0;
  ts_rt_tensor *i = NULL;
  if (!ts_rt_wrap_dim(c, dim, a->ndim, &d)) return NULL;
  if (!rd_sort(c, a, dim, desc, a->ndim ? a->sizes[d] : 1, stable ? RD_SORT_STABLE : RD_SORT_STD, NULL, &i)) return NULL;
  return i;
}

static bool rd_ret2(ts_rt_call *call, ts_rt_tensor *v, ts_rt_tensor *i) {
  call->out[0] = ts_iv_tensor(v);
  call->out[1] = ts_iv_tensor(i);
  return true;
}

static bool rd_k_sort(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL, *v = NULL, *i = NULL;
  int64_t dim = -1;
  bool desc = false;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_int(c, call, 1, &dim) || !ts_rt_arg_bool(c, call, 2, &desc))
    return false;
  int64_t d = 0;
  if (!ts_rt_wrap_dim(c, dim, a->ndim, &d)) return false;
  if (!rd_sort(c, a, dim, desc, a->ndim ? a->sizes[d] : 1, RD_SORT_STD, &v, &i)) return false;
  return rd_ret2(call, v, i);
}

/* sort.stable(self, *, stable, dim, descending): stable None is False. */
static bool rd_k_sort_stable(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL, *v = NULL, *i = NULL;
  int64_t dim = -1;
  bool desc = false, stable = false;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_check(c, call, 1) ||
      (call->in[1].tag != TS_IV_NONE && !ts_rt_arg_bool(c, call, 1, &stable)) || !ts_rt_arg_int(c, call, 2, &dim) ||
      !ts_rt_arg_bool(c, call, 3, &desc))
    return false;
  int64_t d = 0;
  if (!ts_rt_wrap_dim(c, dim, a->ndim, &d)) return false;
  if (!rd_sort(c, a, dim, desc, a->ndim ? a->sizes[d] : 1, stable ? RD_SORT_STABLE : RD_SORT_STD, &v, &i)) return false;
  return rd_ret2(call, v, i);
}

static bool rd_k_argsort_common(ts_rt_ctx *c, ts_rt_call *call, uint32_t dim_i) {
  ts_rt_tensor *a = NULL, *i = NULL;
  int64_t dim = -1;
  bool desc = false, stable = false;
  if (dim_i == 2 && !ts_rt_arg_bool(c, call, 1, &stable)) return false;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_int(c, call, dim_i, &dim) ||
      !ts_rt_arg_bool(c, call, dim_i + 1, &desc))
    return false;
  int64_t d = 0;
  if (!ts_rt_wrap_dim(c, dim, a->ndim, &d)) return false;
  if (!rd_sort(c, a, dim, desc, a->ndim ? a->sizes[d] : 1, stable ? RD_SORT_STABLE : RD_SORT_STD, NULL, &i))
    return false;
  return nnu_ret(call, i);
}
static bool rd_k_argsort(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_argsort_common(c, call, 1); }
static bool rd_k_argsort_stable(ts_rt_ctx *c, ts_rt_call *call) { return rd_k_argsort_common(c, call, 2); }

static bool rd_k_topk(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a = NULL, *v = NULL, *i = NULL;
  int64_t k = 0, dim = -1;
  bool largest = true, sorted = true;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_int(c, call, 1, &k) || !ts_rt_arg_int(c, call, 2, &dim) ||
      !ts_rt_arg_bool(c, call, 3, &largest) || !ts_rt_arg_bool(c, call, 4, &sorted))
    return false;
  int64_t d = 0;
  if (!ts_rt_wrap_dim(c, dim, a->ndim, &d)) return false;
  if (a->dtype == TS_DT_FLOAT16 || a->dtype == TS_DT_BOOL) return nnu_not_impl(c, "topk_cpu", (ts_dtype)a->dtype);
  int64_t n = a->ndim ? a->sizes[d] : 1;
  if (k < 0 || k > n) return ts_rt_fail(c, "selected index k out of range");
  if (!rd_sort(c, a, dim, largest, k, sorted ? RD_TOPK : RD_TOPK_UNSORTED, &v, &i)) return false;
  return rd_ret2(call, v, i);
}

NNU_OUT_KERNEL(rd_k_sum_out, rd_k_sum, 1)
NNU_OUT_KERNEL(rd_k_sum_dim_out, rd_k_sum_dim, 1)
NNU_OUT_KERNEL(rd_k_mean_dim_out, rd_k_mean_dim, 1)
NNU_OUT_KERNEL(rd_k_prod_out, rd_k_prod, 1)
NNU_OUT_KERNEL(rd_k_prod_dim_out, rd_k_prod_dim, 1)
NNU_OUT_KERNEL(rd_k_max_other_out, rd_k_max_other, 1)
NNU_OUT_KERNEL(rd_k_min_other_out, rd_k_min_other, 1)
NNU_OUT_KERNEL(rd_k_amax_out, rd_k_amax, 1)
NNU_OUT_KERNEL(rd_k_amin_out, rd_k_amin, 1)
NNU_OUT_KERNEL(rd_k_any_out, rd_k_any_dim, 1)
NNU_OUT_KERNEL(rd_k_any_all_out, rd_k_any, 1)
NNU_OUT_KERNEL(rd_k_all_out, rd_k_all_dim, 1)
NNU_OUT_KERNEL(rd_k_all_all_out, rd_k_all, 1)
NNU_OUT_KERNEL(rd_k_var_out, rd_k_var_dim, 1)
NNU_OUT_KERNEL(rd_k_std_out, rd_k_std_dim, 1)
NNU_OUT_KERNEL(rd_k_var_corr_out, rd_k_var_corr, 1)
NNU_OUT_KERNEL(rd_k_std_corr_out, rd_k_std_corr, 1)
NNU_OUT_KERNEL(rd_k_norm_out, rd_k_norm_dim, 1)
NNU_OUT_KERNEL(rd_k_norm_dtype_out, rd_k_norm_dim_dtype, 1)
NNU_OUT_KERNEL(rd_k_norm_scalar_out, rd_k_norm_scalar, 1)
NNU_OUT_KERNEL(rd_k_norm_scalaropt_dtype_out, rd_k_norm_dtype, 1)
NNU_OUT_KERNEL(rd_k_frobenius_out, rd_k_frobenius_dim, 1)
NNU_OUT_KERNEL(rd_k_nuclear_out, rd_k_nuclear, 1)
NNU_OUT_KERNEL(rd_k_nuclear_dim_out, rd_k_nuclear_dim, 1)
NNU_OUT_KERNEL(rd_k_logsumexp_out, rd_k_logsumexp, 1)
NNU_OUT_KERNEL(rd_k_cumsum_out, rd_k_cumsum, 1)
NNU_OUT_KERNEL(rd_k_cumprod_out, rd_k_cumprod, 1)
NNU_OUT_KERNEL(rd_k_argsort_stable_out, rd_k_argsort_stable, 1)

const ts_rt_kernel_def ts_rt_kernels_reduce[] = {
    {"aten::sum", rd_k_sum},
    {"aten::sum.out", rd_k_sum_out},
    {"aten::sum.dim_IntList", rd_k_sum_dim},
    {"aten::sum.IntList_out", rd_k_sum_dim_out},
    {"aten::mean", rd_k_mean},
    {"aten::mean.dim", rd_k_mean_dim},
    {"aten::mean.out", rd_k_mean_dim_out},
    {"aten::prod", rd_k_prod},
    {"aten::prod.out", rd_k_prod_out},
    {"aten::prod.dim_int", rd_k_prod_dim},
    {"aten::prod.int_out", rd_k_prod_dim_out},
    {"aten::max", rd_k_max},
    {"aten::max.dim", rd_k_max_dim},
    {"aten::max.other", rd_k_max_other},
    {"aten::max.out", rd_k_max_other_out},
    {"aten::min", rd_k_min},
    {"aten::min.dim", rd_k_min_dim},
    {"aten::min.other", rd_k_min_other},
    {"aten::min.out", rd_k_min_other_out},
    {"aten::amax", rd_k_amax},
    {"aten::amax.out", rd_k_amax_out},
    {"aten::amin", rd_k_amin},
    {"aten::amin.out", rd_k_amin_out},
    {"aten::argmax", rd_k_argmax},
    {"aten::argmin", rd_k_argmin},
    {"aten::any", rd_k_any},
    {"aten::any.dim", rd_k_any_dim},
    {"aten::any.out", rd_k_any_out},
    {"aten::any.all_out", rd_k_any_all_out},
    {"aten::all", rd_k_all},
    {"aten::all.dim", rd_k_all_dim},
    {"aten::all.out", rd_k_all_out},
    {"aten::all.all_out", rd_k_all_all_out},
    {"aten::var", rd_k_var},
    {"aten::var.dim", rd_k_var_dim},
    {"aten::var.correction", rd_k_var_corr},
    {"aten::var.out", rd_k_var_out},
    {"aten::var.correction_out", rd_k_var_corr_out},
    {"aten::std", rd_k_std},
    {"aten::std.dim", rd_k_std_dim},
    {"aten::std.correction", rd_k_std_corr},
    {"aten::std.out", rd_k_std_out},
    {"aten::std.correction_out", rd_k_std_corr_out},
    {"aten::norm.Scalar", rd_k_norm_scalar},
    {"aten::norm.Scalar_out", rd_k_norm_scalar_out},
    {"aten::norm.ScalarOpt_dim", rd_k_norm_dim},
    {"aten::norm.out", rd_k_norm_out},
    {"aten::norm.ScalarOpt_dim_dtype", rd_k_norm_dim_dtype},
    {"aten::norm.dtype_out", rd_k_norm_dtype_out},
    {"aten::norm.ScalarOpt_dtype", rd_k_norm_dtype},
    {"aten::norm.ScalarOpt_dtype_out", rd_k_norm_scalaropt_dtype_out},
    {"aten::frobenius_norm", rd_k_frobenius},
    {"aten::frobenius_norm.dim", rd_k_frobenius_dim},
    {"aten::frobenius_norm.out", rd_k_frobenius_out},
    {"aten::nuclear_norm", rd_k_nuclear},
    {"aten::nuclear_norm.dim", rd_k_nuclear_dim},
    {"aten::nuclear_norm.out", rd_k_nuclear_out},
    {"aten::nuclear_norm.dim_out", rd_k_nuclear_dim_out},
    {"aten::logsumexp", rd_k_logsumexp},
    {"aten::logsumexp.out", rd_k_logsumexp_out},
    {"aten::cumsum", rd_k_cumsum},
    {"aten::cumsum.out", rd_k_cumsum_out},
    {"aten::cumprod", rd_k_cumprod},
    {"aten::cumprod.out", rd_k_cumprod_out},
    {"aten::topk", rd_k_topk},
    {"aten::sort", rd_k_sort},
    {"aten::sort.stable", rd_k_sort_stable},
    {"aten::argsort", rd_k_argsort},
    {"aten::argsort.stable", rd_k_argsort_stable},
    {"aten::argsort.stable_out", rd_k_argsort_stable_out},
    {NULL, NULL},
};
