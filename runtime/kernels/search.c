/* runtime/kernels/search.c: the ops that sort, search or count values, as
 * PyTorch 1.13 computes them on the CPU: _unique2, unique_consecutive,
 * unique_dim, unique_dim_consecutive, searchsorted, bucketize, histc,
 * bincount, msort.
 *
 * Values are compared through one key per element: a double for the
 * floating dtypes (float16/bfloat16/float32 convert exactly), an int64 for
 * the integer ones and bool, so every int64 value compares exactly. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "tensor_ops.h"

typedef struct sr_key {
  union {
    double f;
    int64_t i;
  } v;
  int64_t idx; /* the element's row-major position */
} sr_key;

/* Ascending, NaN last (as sort puts it), position breaking ties. */
static int sr_cmp_f(const void *pa, const void *pb) {
  const sr_key *a = pa, *b = pb;
  bool na = isnan(a->v.f), nb = isnan(b->v.f);
  if (na != nb) return na ? 1 : -1;
  if (!na && a->v.f != b->v.f) return a->v.f < b->v.f ? -1 : 1;
  return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int sr_cmp_i(const void *pa, const void *pb) {
  const sr_key *a = pa, *b = pb;
  if (a->v.i != b->v.i) return a->v.i < b->v.i ? -1 : 1;
  return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Keys of t's elements in row-major order (t contiguous). */
static sr_key *sr_keys(ts_rt_ctx *c, const ts_rt_tensor *t, int64_t n, bool *isf) {
  ts_dtype dt = (ts_dtype)t->dtype;
  *isf = ts_rt_dtype_is_float(dt);
  sr_key *k = ts_rt_malloc((size_t)(n > 0 ? n : 1) * sizeof *k);
  if (!k) return ts_rt_oom(c), NULL;
  const char *p = ts_rt_tensor_data(t);
  size_t es = ts_dtype_size(dt);
  for (int64_t i = 0; i < n; i++) {
    if (*isf) k[i].v.f = ts_rt_load_f64(p + (size_t)i * es, dt);
    else k[i].v.i = ts_rt_load_i64(p + (size_t)i * es, dt);
    k[i].idx = i;
  }
  return k;
}

/* Whether two keys hold equal values (NaN equals nothing). */
static bool sr_key_eq(const sr_key *a, const sr_key *b, bool isf) {
  return isf ? a->v.f == b->v.f : a->v.i == b->v.i;
}

static ts_rt_tensor *sr_empty_long(ts_rt_ctx *c) {
  int64_t z = 0;
  return ts_rt_tensor_new(c, TS_DT_INT64, 1, &z, true);
}

/* The three outputs of the unique ops; a NULL one is an empty int64. */
static bool sr_put3(ts_rt_ctx *c, ts_rt_call *call, ts_rt_tensor *o, ts_rt_tensor *inv, ts_rt_tensor *cnt) {
  if (!inv) inv = sr_empty_long(c);
  if (!cnt) cnt = sr_empty_long(c);
  if (!inv || !cnt) {
    ts_rt_tensor_release(o);
    if (inv) ts_rt_tensor_release(inv);
    if (cnt) ts_rt_tensor_release(cnt);
    return false;
  }
  call->out[0] = ts_iv_tensor(o);
  call->out[1] = ts_iv_tensor(inv);
  call->out[2] = ts_iv_tensor(cnt);
  return true;
}

/* Unique values of self (flattened): sorted (sort) or in runs of equal
 * neighbours (consecutive); inverse in self's shape, counts per value. */
static bool sr_unique_flat(ts_rt_ctx *c, ts_rt_call *call, ts_rt_tensor *self, bool sort, bool ret_inv,
                           bool ret_cnt) {
  if (self->dtype == TS_DT_FLOAT16) return ts_rt_fail(c, "\"unique\" not implemented for 'Half'");
  ts_rt_tensor *sc = ts_rt_tensor_contiguous(c, self);
  if (!sc) return false;
  int64_t n = ts_rt_tensor_numel(sc);
  bool isf = false;
  sr_key *k = sr_keys(c, sc, n, &isf);
  int64_t *inv = ts_rt_malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
  int64_t *cnt = ts_rt_malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
  int64_t *first = ts_rt_malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
  ts_rt_tensor *o = NULL, *ti = NULL, *tc = NULL;
  bool ok = false;
  if (!k || !inv || !cnt || !first) {
    ts_rt_oom(c);
    goto done;
  }
  if (sort) qsort(k, (size_t)n, sizeof *k, isf ? sr_cmp_f : sr_cmp_i);
  int64_t nu = 0;
  for (int64_t i = 0; i < n; i++) {
    if (i == 0 || !sr_key_eq(&k[i - 1], &k[i], isf)) first[nu] = k[i].idx, cnt[nu++] = 0;
    cnt[nu - 1]++;
    inv[k[i].idx] = nu - 1;
  }
  size_t es = ts_dtype_size((ts_dtype)self->dtype);
  if (!(o = ts_rt_tensor_new(c, (ts_dtype)self->dtype, 1, &nu, false))) goto done;
  const char *src = ts_rt_tensor_data(sc);
  char *dst = ts_rt_tensor_data(o);
  for (int64_t u = 0; u < nu; u++) memcpy(dst + (size_t)u * es, src + (size_t)first[u] * es, es);
  if (ret_inv) {
    if (!(ti = ts_rt_tensor_new(c, TS_DT_INT64, self->ndim, self->sizes, false))) goto done;
    if (n) memcpy(ts_rt_tensor_data(ti), inv, (size_t)n * sizeof(int64_t));
  }
  if (ret_cnt) {
    if (!(tc = ts_rt_tensor_new(c, TS_DT_INT64, 1, &nu, false))) goto done;
    if (nu) memcpy(ts_rt_tensor_data(tc), cnt, (size_t)nu * sizeof(int64_t));
  }
  ok = true;
done:
  ts_rt_free(k);
  ts_rt_free(inv);
  ts_rt_free(cnt);
  ts_rt_free(first);
  ts_rt_tensor_release(sc);
  if (!ok) {
    if (o) ts_rt_tensor_release(o);
    if (ti) ts_rt_tensor_release(ti);
    if (tc) ts_rt_tensor_release(tc);
    return false;
  }
  return sr_put3(c, call, o, ti, tc);
}

/* Rows of a [rows, cols] contiguous buffer of keys, compared
 * lexicographically (qsort_r is not portable: the row width is passed
 * through a thread-local). */
static TS_TLS const sr_key *sr_rows_keys;
static TS_TLS int64_t sr_rows_cols;
static TS_TLS bool sr_rows_isf;

static int sr_cmp_rows(const void *pa, const void *pb) {
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  const sr_key *ra = sr_rows_keys + a * sr_rows_cols, *rb = sr_rows_keys + b * sr_rows_cols;
  for (int64_t j = 0; j < sr_rows_cols; j++) {
    int r = sr_rows_isf ? (ra[j].v.f < rb[j].v.f ? -1 : ra[j].v.f > rb[j].v.f)
                        : (ra[j].v.i < rb[j].v.i ? -1 : ra[j].v.i > rb[j].v.i);
    if (r) return r;
  }
  return a < b ? -1 : a > b;
}

static bool sr_rows_eq(const sr_key *k, int64_t cols, int64_t a, int64_t b, bool isf) {
  for (int64_t j = 0; j < cols; j++)
    if (!sr_key_eq(&k[a * cols + j], &k[b * cols + j], isf)) return false;
  return true;
}

/* unique_dim / unique_dim_consecutive: the slices along dim as units;
 * inverse and counts always computed, as ATen does. */
static bool sr_unique_dim(ts_rt_ctx *c, ts_rt_call *call, ts_rt_tensor *self, int64_t dim, bool sort) {
  int64_t d = 0;
  if (self->ndim == 0)
    return ts_rt_fail(c, "Dimension specified as %lld but tensor has no dimensions", (long long)dim);
  if (!ts_rt_wrap_dim(c, dim, self->ndim, &d)) return false;
  if (self->dtype == TS_DT_FLOAT16) return ts_rt_fail(c, "\"unique_dim\" not implemented for 'Half'");
  int64_t perm[TS_RT_MAX_DIMS];
  perm[0] = d;
  for (int32_t i = 0, k = 1; i < self->ndim; i++)
    if (i != d) perm[k++] = i;
  ts_rt_tensor *p = ts_rt_permute(c, self, perm);
  ts_rt_tensor *pc = p ? ts_rt_tensor_contiguous(c, p) : NULL;
  if (p) ts_rt_tensor_release(p);
  if (!pc) return false;
  int64_t rows = self->sizes[d], n = ts_rt_tensor_numel(pc), cols = rows ? n / rows : 0;
  if (n == 0 && rows != 0) {
    ts_rt_tensor_release(pc);
    return ts_rt_fail(c, "Number of zero sized dimensions is more than one, so unique cannot be applied ");
  }
  bool isf = false;
  sr_key *k = sr_keys(c, pc, n, &isf);
  int64_t *order = ts_rt_malloc((size_t)(rows > 0 ? rows : 1) * sizeof(int64_t));
  int64_t *first = ts_rt_malloc((size_t)(rows > 0 ? rows : 1) * sizeof(int64_t));
  ts_rt_tensor *o = NULL, *ti = NULL, *tc = NULL;
  bool ok = false;
  int64_t nu = 0;
  if (!k || !order || !first) {
    ts_rt_oom(c);
    goto done;
  }
  for (int64_t r = 0; r < rows; r++) order[r] = r;
  if (sort) {
    sr_rows_keys = k, sr_rows_cols = cols, sr_rows_isf = isf;
    qsort(order, (size_t)rows, sizeof *order, sr_cmp_rows);
  }
  if (!(ti = ts_rt_tensor_new(c, TS_DT_INT64, 1, &rows, false))) goto done;
  int64_t *inv = ts_rt_tensor_data(ti);
  int64_t *cnt = ts_rt_malloc((size_t)(rows > 0 ? rows : 1) * sizeof(int64_t));
  if (!cnt) {
    ts_rt_oom(c);
    goto done;
  }
  for (int64_t i = 0; i < rows; i++) {
    if (i == 0 || !sr_rows_eq(k, cols, order[i - 1], order[i], isf)) first[nu] = order[i], cnt[nu++] = 0;
    cnt[nu - 1]++;
    inv[order[i]] = nu - 1;
  }
  tc = ts_rt_tensor_new(c, TS_DT_INT64, 1, &nu, false);
  if (tc && nu) memcpy(ts_rt_tensor_data(tc), cnt, (size_t)nu * sizeof(int64_t));
  ts_rt_free(cnt);
  if (!tc) goto done;
  /* the unique slices, then dim moved back */
  int64_t osz[TS_RT_MAX_DIMS], inv_perm[TS_RT_MAX_DIMS];
  for (int32_t i = 0; i < self->ndim; i++) osz[i] = pc->sizes[i], inv_perm[perm[i]] = i;
  osz[0] = nu;
  ts_rt_tensor *u = ts_rt_tensor_new(c, (ts_dtype)self->dtype, self->ndim, osz, false);
  if (!u) goto done;
  size_t row_bytes = (size_t)cols * ts_dtype_size((ts_dtype)self->dtype);
  for (int64_t i = 0; i < nu; i++)
    memcpy((char *)ts_rt_tensor_data(u) + (size_t)i * row_bytes,
           (const char *)ts_rt_tensor_data(pc) + (size_t)first[i] * row_bytes, row_bytes);
  ts_rt_tensor *back = ts_rt_permute(c, u, inv_perm);
  ts_rt_tensor_release(u);
  o = back ? ts_rt_tensor_contiguous(c, back) : NULL;
  if (back) ts_rt_tensor_release(back);
  ok = o != NULL;
done:
  ts_rt_free(k);
  ts_rt_free(order);
  ts_rt_free(first);
  ts_rt_tensor_release(pc);
  if (!ok) {
    if (ti) ts_rt_tensor_release(ti);
    if (tc) ts_rt_tensor_release(tc);
    return false;
  }
  return sr_put3(c, call, o, ti, tc);
}

/* _unique2(self, sorted, return_inverse, return_counts): sorted values
 * (sorted=False too: PyTorch leaves that order unspecified; 1.13's hash
 * order is not reproduced); the inverse comes with the counts as well, as
 * ATen computes it for either. */
static bool sr_k_unique2(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *self = NULL;
  bool sorted = true, inv = false, cnt = false;
  if (!ts_rt_arg_tensor(c, call, 0, &self) || !ts_rt_arg_bool(c, call, 1, &sorted) ||
      !ts_rt_arg_bool(c, call, 2, &inv) || !ts_rt_arg_bool(c, call, 3, &cnt))
    return false;
  return sr_unique_flat(c, call, self, true, inv || cnt, cnt);
}

/* unique_consecutive(self, return_inverse, return_counts, dim): without
 * dim (or dim 0 of a 1-d tensor) the flattened form, inverse and counts as
 * asked; with one, unique_dim_consecutive's (both always). */
static bool sr_k_unique_consecutive(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *self = NULL;
  bool inv = false, cnt = false, has_dim = false;
  int64_t dim = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &self) || !ts_rt_arg_bool(c, call, 1, &inv) ||
      !ts_rt_arg_bool(c, call, 2, &cnt) || !ts_rt_arg_opt_int(c, call, 3, &dim, &has_dim))
    return false;
  if (!has_dim || (dim == 0 && self->ndim == 1)) return sr_unique_flat(c, call, self, false, inv, cnt);
  return sr_unique_dim(c, call, self, dim, false);
}

/* unique_dim(self, dim, sorted, return_inverse, return_counts) */
static bool sr_k_unique_dim(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *self = NULL;
  int64_t dim = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &self) || !ts_rt_arg_int(c, call, 1, &dim)) return false;
  return sr_unique_dim(c, call, self, dim, true);
}

/* unique_dim_consecutive(self, dim, return_inverse, return_counts) */
static bool sr_k_unique_dim_consecutive(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *self = NULL;
  int64_t dim = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &self) || !ts_rt_arg_int(c, call, 1, &dim)) return false;
  return sr_unique_dim(c, call, self, dim, false);
}

/* ------------------------------------------------ searchsorted, bucketize */

/* "[2, 3]" */
static const char *sr_fmt(char *buf, size_t cap, const ts_rt_tensor *t) {
  size_t len = (size_t)snprintf(buf, cap, "[");
  for (int32_t d = 0; d < t->ndim && len + 24 < cap; d++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld", d ? ", " : "", (long long)t->sizes[d]);
  if (len + 2 < cap) snprintf(buf + len, cap - len, "]");
  return buf;
}

/* searchsorted(boundaries, input, out_int32, right, side, sorter): ATen's
 * checks, both converted to their result type, then for each input value
 * the first position in its row of boundaries (through sorter if given)
 * whose value is >= it (> with right), by ATen's binary search (NaN
 * boundaries and inputs compare as its loop compares them). */
static ts_rt_tensor *sr_searchsorted(ts_rt_ctx *c, ts_rt_tensor *bd, ts_rt_tensor *in, bool out_int32, bool right,
                                     const ts_rt_str *side, ts_rt_tensor *sorter) {
  char b1[256], b2[256];
  if (side) {
    bool is_right = side->len == 5 && memcmp(side->data, "right", 5) == 0;
    if (!is_right && !(side->len == 4 && memcmp(side->data, "left", 4) == 0))
      return ts_rt_fail(c, "torch.searchsorted(): side can only be 'left' or 'right' but got %s", side->data), NULL;
    if (right && !is_right)
      return ts_rt_fail(c, "torch.searchsorted(): side and right can't be set to opposites, got side of left while "
                        "right was True"), NULL;
    right = is_right;
  }
  if (sorter) {
    bool same = sorter->ndim == bd->ndim;
    for (int32_t d = 0; same && d < bd->ndim; d++) same = sorter->sizes[d] == bd->sizes[d];
    if (!same)
      return ts_rt_fail(c, "torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                        "tensor %sand got sorter tensor %s", sr_fmt(b1, sizeof b1, bd), sr_fmt(b2, sizeof b2, sorter)),
             NULL;
    if (sorter->dtype != TS_DT_INT64)
      return ts_rt_fail(c, "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype %s",
                        ts_rt_dtype_name((ts_dtype)sorter->dtype)), NULL;
  }
  if (!(in->ndim > 0 || (ts_rt_tensor_numel(in) == 1 && bd->ndim == 1)))
    return ts_rt_fail(c, "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension "
                      "is 1, but we got boundaries tensor dim(%d) and input value's dim(%d) numel(%lld)",
                      (int)bd->ndim, (int)in->ndim, (long long)ts_rt_tensor_numel(in)), NULL;
  if (bd->ndim == 0)
    return ts_rt_fail(c, "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                      "dimension"), NULL;
  if (bd->ndim != 1) {
    bool match = bd->ndim == in->ndim;
    for (int32_t d = 0; match && d + 1 < bd->ndim; d++) match = bd->sizes[d] == in->sizes[d];
    if (!match)
      return ts_rt_fail(c, "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                        "dimensions of boundaries tensor and input value tensor must match, but we got boundaries "
                        "tensor %s and input value tensor %s", sr_fmt(b1, sizeof b1, bd), sr_fmt(b2, sizeof b2, in)),
             NULL;
  }
  ts_iv ops[2] = {ts_iv_tensor(bd), ts_iv_tensor(in)};
  ts_dtype dt = ts_rt_result_type(ops, 2);
  if (dt == TS_DT_BOOL) return ts_rt_fail(c, "\"searchsorted_out_cpu\" not implemented for 'Bool'"), NULL;
  int64_t nb = bd->sizes[bd->ndim - 1], n = ts_rt_tensor_numel(in);
  int64_t nsorter = sorter ? ts_rt_tensor_numel(sorter) : 0;
  ts_rt_tensor *bc = ts_rt_tensor_to_dtype(c, bd, dt), *ic = bc ? ts_rt_tensor_to_dtype(c, in, dt) : NULL;
  ts_rt_tensor *sc = ic && sorter ? ts_rt_tensor_contiguous(c, sorter) : NULL;
  ts_rt_tensor *out = ic && (!sorter || sc) ? ts_rt_tensor_new(c, out_int32 ? TS_DT_INT32 : TS_DT_INT64, in->ndim,
                                                               in->sizes, false) : NULL;
  bool ok = out != NULL;
  if (ok && sc) {
    const int64_t *sp = ts_rt_tensor_data(sc);
    for (int64_t i = 0; i < nsorter && ok; i++)
      if (sp[i] < 0 || sp[i] >= nb) ok = ts_rt_fail(c, "torch.searchsorted(): sorter index out of range");
  }
  if (ok) {
    bool isf = ts_rt_dtype_is_float(dt);
    size_t es = ts_dtype_size(dt);
    const char *bp = ts_rt_tensor_data(bc), *ip = ts_rt_tensor_data(ic);
    const int64_t *sp = sc ? ts_rt_tensor_data(sc) : NULL;
    int64_t per_row = bd->ndim == 1 ? n : (in->ndim ? in->sizes[in->ndim - 1] : 1);
    for (int64_t i = 0; i < n; i++) {
      int64_t row = bd->ndim == 1 ? 0 : i / per_row, base = row * nb, lo = 0, hi = nb;
      double vf = isf ? ts_rt_load_f64(ip + (size_t)i * es, dt) : 0;
      int64_t vi = isf ? 0 : ts_rt_load_i64(ip + (size_t)i * es, dt);
      while (lo < hi) {
        int64_t mid = lo + ((hi - lo) >> 1);
        int64_t at = base + (sp ? sp[base + mid] : mid);
        bool go_right;
        if (isf) {
          double m = ts_rt_load_f64(bp + (size_t)at * es, dt);
          go_right = right ? !(m > vf) : !(m >= vf);
        } else {
          int64_t m = ts_rt_load_i64(bp + (size_t)at * es, dt);
          go_right = right ? !(m > vi) : !(m >= vi);
        }
        if (go_right) lo = mid + 1;
        else hi = mid;
      }
      if (out_int32) ((int32_t *)ts_rt_tensor_data(out))[i] = (int32_t)lo;
      else ((int64_t *)ts_rt_tensor_data(out))[i] = lo;
    }
  }
  if (bc) ts_rt_tensor_release(bc);
  if (ic) ts_rt_tensor_release(ic);
  if (sc) ts_rt_tensor_release(sc);
  if (!ok && out) ts_rt_tensor_release(out), out = NULL;
  return out;
}

/* A Scalar argument as a 0-d tensor (scalar_to_tensor: int64, double or
 * bool). */
static ts_rt_tensor *sr_scalar_tensor(ts_rt_ctx *c, ts_rt_call *call, uint32_t i) {
  if (!ts_rt_arg_check(c, call, i)) return NULL;
  ts_iv v = call->in[i];
  if (v.tag == TS_IV_DOUBLE) return ts_rt_tensor_scalar(c, TS_DT_FLOAT64, v.u.d, 0);
  if (v.tag == TS_IV_INT) return ts_rt_tensor_scalar(c, TS_DT_INT64, 0, v.u.i);
  if (v.tag == TS_IV_BOOL) return ts_rt_tensor_scalar(c, TS_DT_BOOL, v.u.b, v.u.b);
  return ts_rt_arg_bad(c, call, i, "Scalar"), NULL;
}

/* searchsorted.Tensor / .Scalar (scalar: self is a Scalar) */
static bool sr_searchsorted_call(ts_rt_ctx *c, ts_rt_call *call, bool scalar) {
  ts_rt_tensor *bd = NULL, *in = NULL, *sorter = NULL;
  bool out_int32 = false, right = false;
  const ts_rt_str *side = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &bd) || !ts_rt_arg_bool(c, call, 2, &out_int32) ||
      !ts_rt_arg_bool(c, call, 3, &right) || !ts_rt_arg_check(c, call, 4) ||
      (call->in[4].tag != TS_IV_NONE && !ts_rt_arg_str(c, call, 4, &side)) ||
      !ts_rt_arg_opt_tensor(c, call, 5, &sorter))
    return false;
  if (scalar) {
    if (!(in = sr_scalar_tensor(c, call, 1))) return false;
  } else {
    if (!ts_rt_arg_tensor(c, call, 1, &in)) return false;
    ts_rt_tensor_retain(in);
  }
  ts_rt_tensor *out = sr_searchsorted(c, bd, in, out_int32, right, side, sorter);
  ts_rt_tensor_release(in);
  if (!out) return false;
  call->out[0] = ts_iv_tensor(out);
  return true;
}
static bool sr_k_searchsorted(ts_rt_ctx *c, ts_rt_call *call) { return sr_searchsorted_call(c, call, false); }
static bool sr_k_searchsorted_scalar(ts_rt_ctx *c, ts_rt_call *call) { return sr_searchsorted_call(c, call, true); }

/* bucketize(self, boundaries, out_int32, right): searchsorted with 1-d
 * boundaries. */
static bool sr_bucketize_call(ts_rt_ctx *c, ts_rt_call *call, bool scalar) {
  ts_rt_tensor *in = NULL, *bd = NULL;
  bool out_int32 = false, right = false;
  if (!ts_rt_arg_tensor(c, call, 1, &bd) || !ts_rt_arg_bool(c, call, 2, &out_int32) ||
      !ts_rt_arg_bool(c, call, 3, &right))
    return false;
  if (bd->ndim != 1)
    return ts_rt_fail(c, "boundaries tensor must be 1 dimension, but got dim(%d)", (int)bd->ndim);
  if (scalar) {
    if (!(in = sr_scalar_tensor(c, call, 0))) return false;
  } else {
    if (!ts_rt_arg_tensor(c, call, 0, &in)) return false;
    ts_rt_tensor_retain(in);
  }
  ts_rt_tensor *out = sr_searchsorted(c, bd, in, out_int32, right, NULL, NULL);
  ts_rt_tensor_release(in);
  if (!out) return false;
  call->out[0] = ts_iv_tensor(out);
  return true;
}
static bool sr_k_bucketize(ts_rt_ctx *c, ts_rt_call *call) { return sr_bucketize_call(c, call, false); }
static bool sr_k_bucketize_scalar(ts_rt_ctx *c, ts_rt_call *call) { return sr_bucketize_call(c, call, true); }

/* ------------------------------------------------------ histc, bincount */

/* A Scalar argument as a double. */
static bool sr_arg_num(ts_rt_ctx *c, ts_rt_call *call, uint32_t i, double *out) {
  if (!ts_rt_arg_check(c, call, i)) return false;
  ts_iv v = call->in[i];
  if (v.tag == TS_IV_DOUBLE) *out = v.u.d;
  else if (v.tag == TS_IV_INT) *out = (double)v.u.i;
  else if (v.tag == TS_IV_BOOL) *out = v.u.b;
  else return ts_rt_arg_bad(c, call, i, "Scalar");
  return true;
}

/* histc(self, bins, min, max): ATen's histogram over [min, max] (the data's
 * range when equal, widened by 1 each way when still equal); an element's
 * bin (x - lo) * bins / (hi - lo) computed in the dtype (float32 in float,
 * float64 in double, bfloat16 rounding each step, its counts too), the last
 * edge closed, outside values left out; a NaN lands in bin 0, as 1.13's
 * CPU kernel puts it. float32, float64 and bfloat16, as ATen's kernel. */
static bool sr_k_histc(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *self = NULL;
  int64_t bins = 100;
  double lo = 0, hi = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &self) || !ts_rt_arg_int(c, call, 1, &bins) || !sr_arg_num(c, call, 2, &lo) ||
      !sr_arg_num(c, call, 3, &hi))
    return false;
  ts_dtype dt = (ts_dtype)self->dtype;
  if (bins <= 0)
    return ts_rt_fail(c, "torch.histogram(): bins must be > 0, but got %lld for dimension 0", (long long)bins);
  ts_rt_tensor *sc = ts_rt_tensor_contiguous(c, self);
  if (!sc) return false;
  int64_t n = ts_rt_tensor_numel(sc);
  const char *p = ts_rt_tensor_data(sc);
  size_t es = ts_dtype_size(dt);
  if (lo == hi && n > 0) {
    double mn = INFINITY, mx = -INFINITY;
    bool nan = false;
    for (int64_t i = 0; i < n; i++) {
      double x = ts_rt_load_f64(p + (size_t)i * es, dt);
      if (isnan(x)) nan = true;
      if (x < mn) mn = x;
      if (x > mx) mx = x;
    }
    lo = nan ? NAN : mn, hi = nan ? NAN : mx;
  }
  if (lo == hi) lo -= 1, hi += 1;
  const char *err = NULL;
  if (isinf(lo) || isinf(hi) || isnan(lo) || isnan(hi)) err = "range";
  else if (!(lo < hi)) err = "torch.histc: max must be larger than min";
  else if (dt == TS_DT_BOOL) err = "\"linspace_cpu\" not implemented for 'Bool'";
  else if (dt == TS_DT_UINT8 && (lo < 0 || hi > 255)) err = "value cannot be converted to type uint8_t without overflow";
  else if (dt != TS_DT_FLOAT32 && dt != TS_DT_FLOAT64 && dt != TS_DT_BFLOAT16) err = "dtype";
  if (err) {
    ts_rt_tensor_release(sc);
    if (err[0] == 'r') return ts_rt_fail(c, "torch.histc: range of [%g, %g] is not finite", lo, hi);
    if (err[0] == 'd') return ts_rt_fail(c, "\"histogram_cpu\" not implemented for '%s'", ts_rt_dtype_name(dt));
    return ts_rt_fail(c, "%s", err);
  }
  ts_rt_tensor *out = ts_rt_tensor_new(c, dt, 1, &bins, true);
  if (!out) {
    ts_rt_tensor_release(sc);
    return false;
  }
  if (dt == TS_DT_FLOAT32) {
    float flo = (float)lo, fhi = (float)hi, *h = ts_rt_tensor_data(out);
    const float *x = (const float *)p;
    for (int64_t i = 0; i < n; i++) {
      if (x[i] < flo || x[i] > fhi) continue;
      int64_t pos = isnan(x[i]) ? 0 : (int64_t)((x[i] - flo) * (float)bins / (fhi - flo));
      if (pos == bins) pos--;
      h[pos] += 1;
    }
  } else if (dt == TS_DT_FLOAT64) {
    double *h = ts_rt_tensor_data(out);
    const double *x = (const double *)p;
    for (int64_t i = 0; i < n; i++) {
      if (x[i] < lo || x[i] > hi) continue;
      int64_t pos = isnan(x[i]) ? 0 : (int64_t)((x[i] - lo) * (double)bins / (hi - lo));
      if (pos == bins) pos--;
      h[pos] += 1;
    }
  } else {
    /* bfloat16: c10::BFloat16's operators round every step */
#define SR_BF(f) ts_rt_bf16_to_float(ts_rt_float_to_bf16(f))
    float flo = SR_BF((float)lo), fhi = SR_BF((float)hi), fb = SR_BF((float)bins), span = SR_BF(fhi - flo);
    uint16_t *h = ts_rt_tensor_data(out);
    const uint16_t *x = (const uint16_t *)p;
    for (int64_t i = 0; i < n; i++) {
      float v = ts_rt_bf16_to_float(x[i]);
      if (v < flo || v > fhi) continue;
      int64_t pos = isnan(v) ? 0 : (int64_t)SR_BF(SR_BF(SR_BF(v - flo) * fb) / span);
      if (pos == bins) pos--;
      h[pos] = ts_rt_float_to_bf16(ts_rt_bf16_to_float(h[pos]) + 1.0f);
    }
#undef SR_BF
  }
  ts_rt_tensor_release(sc);
  call->out[0] = ts_iv_tensor(out);
  return true;
}

/* bincount(self, weights, minlength): counts (int64) or sums of weights
 * (float32 weights sum in float, any other dtype in double) per value of
 * a 1-d non-negative integer tensor, max(self) + 1 or minlength bins. */
static bool sr_k_bincount(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *self = NULL, *w = NULL;
  int64_t minlength = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &self) || !ts_rt_arg_opt_tensor(c, call, 1, &w) ||
      !ts_rt_arg_int(c, call, 2, &minlength))
    return false;
  ts_dtype dt = (ts_dtype)self->dtype;
  if (!ts_rt_dtype_is_integral(dt, false))
    return ts_rt_fail(c, "\"bincount_cpu\" not implemented for '%s'", ts_rt_dtype_name(dt));
  if (minlength < 0) return ts_rt_fail(c, "minlength should be >= 0");
  int64_t n = ts_rt_tensor_numel(self);
  if (self->ndim == 1 && n == 0) {
    ts_rt_tensor *z = ts_rt_tensor_new(c, TS_DT_INT64, 1, &minlength, true);
    if (!z) return false;
    call->out[0] = ts_iv_tensor(z);
    return true;
  }
  ts_rt_tensor *sc = ts_rt_tensor_contiguous(c, self);
  if (!sc) return false;
  const char *p = ts_rt_tensor_data(sc);
  size_t es = ts_dtype_size(dt);
  int64_t mx = -1, mn = INT64_MAX;
  for (int64_t i = 0; i < n; i++) {
    int64_t v = ts_rt_load_i64(p + (size_t)i * es, dt);
    if (v > mx) mx = v;
    if (v < mn) mn = v;
  }
  ts_rt_tensor *wc = NULL, *out = NULL;
  bool ok = false;
  if (self->ndim != 1 || mn < 0) {
    ts_rt_fail(c, "bincount only supports 1-d non-negative integral inputs.");
    goto done;
  }
  if (w && (w->ndim != 1 || w->sizes[0] != n)) {
    ts_rt_fail(c, "weights should be 1-d and have the same length as input");
    goto done;
  }
  int64_t nb = mx + 1 > minlength ? mx + 1 : minlength;
  ts_dtype odt = !w ? TS_DT_INT64 : w->dtype == TS_DT_FLOAT32 ? TS_DT_FLOAT32 : TS_DT_FLOAT64;
  if (w && !(wc = ts_rt_tensor_to_dtype(c, w, odt))) goto done;
  if (!(out = ts_rt_tensor_new(c, odt, 1, &nb, true))) goto done;
  for (int64_t i = 0; i < n; i++) {
    int64_t v = ts_rt_load_i64(p + (size_t)i * es, dt);
    if (!w) ((int64_t *)ts_rt_tensor_data(out))[v]++;
    else if (odt == TS_DT_FLOAT32) ((float *)ts_rt_tensor_data(out))[v] += ((const float *)ts_rt_tensor_data(wc))[i];
    else ((double *)ts_rt_tensor_data(out))[v] += ((const double *)ts_rt_tensor_data(wc))[i];
  }
  ok = true;
done:
  ts_rt_tensor_release(sc);
  if (wc) ts_rt_tensor_release(wc);
  if (!ok) {
    if (out) ts_rt_tensor_release(out);
    return false;
  }
  call->out[0] = ts_iv_tensor(out);
  return true;
}

/* msort(self): sort(self, dim=0).values */
static bool sr_k_msort(ts_rt_ctx *c, ts_rt_call *call) {
  if (!ts_rt_arg_check(c, call, 0)) return false;
  ts_rt_kernel_fn sort = ts_rt_kernel_by_name("aten::sort");
  if (!sort) return ts_rt_fail(c, "no kernel for aten::sort");
  ts_iv in[3] = {call->in[0], ts_iv_int(0), ts_iv_bool(false)}, out[2];
  ts_rt_call sub = {in, 3, out, 2, NULL};
  if (!sort(c, &sub)) return false;
  ts_iv_release(out[1]);
  call->out[0] = out[0];
  return true;
}

const ts_rt_kernel_def ts_rt_kernels_search[] = {
    {"aten::_unique2", sr_k_unique2},
    {"aten::unique_consecutive", sr_k_unique_consecutive},
    {"aten::unique_dim", sr_k_unique_dim},
    {"aten::unique_dim_consecutive", sr_k_unique_dim_consecutive},
    {"aten::searchsorted.Tensor", sr_k_searchsorted},
    {"aten::searchsorted.Scalar", sr_k_searchsorted_scalar},
    {"aten::bucketize.Tensor", sr_k_bucketize},
    {"aten::bucketize.Scalar", sr_k_bucketize_scalar},
    {"aten::histc", sr_k_histc},
    {"aten::bincount", sr_k_bincount},
    {"aten::msort", sr_k_msort},
    {NULL, NULL},
};
