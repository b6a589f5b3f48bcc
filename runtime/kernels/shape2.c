/* runtime/kernels/shape2.c: the copying shape and tensor-manipulation ops
 * that ATen composes from others: fliplr/flipud/rot90, the stacks (hstack,
 * vstack, dstack, column_stack), narrow_copy, the *_scatter ops (a copy of
 * self with a view of it overwritten), sum_to_size, put, count_nonzero,
 * argwhere, nonzero_numpy, block_diag, cartesian_prod, combinations, kron,
 * diff, gradient, trapezoid/trapz/cumulative_trapezoid, equal, isclose, allclose,
 * isin, resize_ and resize_as_. Each follows ATen's composition (so dtypes
 * and broadcasting come from the ops it is made of) and its messages;
 * other kernels are reached by their schema name where no C function
 * exists for them (flip, diagonal, as_strided, nonzero, cumsum). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "tensor_ops.h"

#define S2_SHAPE_CAP (TS_RT_MAX_DIMS * 24 + 4)

/* "[2, 3]" as PyTorch prints an IntArrayRef. */
static const char *s2_fmt(char *buf, size_t cap, int32_t n, const int64_t *s) {
  size_t len = 0;
  buf[len++] = '[';
  for (int32_t i = 0; i < n && len + 24 < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? ", " : "", (long long)s[i]);
  buf[len++] = ']';
  buf[len] = 0;
  return buf;
}

static bool s2_put(ts_rt_call *call, ts_rt_tensor *t) {
  if (!t) return false;
  call->out[0] = ts_iv_tensor(t);
  return true;
}

/* A new int[] IValue of v[0..n). */
static bool s2_ints(ts_rt_ctx *c, const int64_t *v, uint32_t n, ts_iv *out) {
  ts_rt_list *l = ts_rt_list_new(c, ts_type_leaf(TS_TY_INT), n);
  if (!l) return false;
  for (uint32_t i = 0; i < n; i++)
    if (!ts_rt_list_append(c, l, ts_iv_int(v[i]))) {
      ts_iv_release((ts_iv){.u.l = l, .tag = TS_IV_LIST});
      return false;
    }
  *out = (ts_iv){.u.l = l, .tag = TS_IV_LIST};
  return true;
}

/* Calls the kernel of schema `name` on in[0..nin) (borrowed); its one
 * tensor output, a new reference, or NULL. */
static ts_rt_tensor *s2_call(ts_rt_ctx *c, const char *name, ts_iv *in, uint32_t nin) {
  ts_rt_kernel_fn fn = ts_rt_kernel_by_name(name);
  if (!fn) {
    ts_rt_fail(c, "no kernel for %s", name);
    return NULL;
  }
  ts_iv out[1] = {ts_iv_none()};
  ts_rt_call sub = {in, nin, out, 1, NULL};
  if (!fn(c, &sub)) return NULL;
  if (out[0].tag != TS_IV_TENSOR) {
    ts_iv_release(out[0]);
    ts_rt_fail(c, "%s did not return a tensor", name);
    return NULL;
  }
  return out[0].u.t;
}

/* flip(a, dims) through aten::flip's kernel. */
static ts_rt_tensor *s2_flip(ts_rt_ctx *c, const ts_rt_tensor *a, const int64_t *dims, uint32_t n) {
  ts_iv in[2] = {ts_iv_tensor((ts_rt_tensor *)a), ts_iv_none()};
  if (!s2_ints(c, dims, n, &in[1])) return NULL;
  ts_rt_tensor *r = s2_call(c, "aten::flip", in, 2);
  ts_iv_release(in[1]);
  return r;
}

/* The tensors of a Tensor[] argument, borrowed, in a new array. */
static bool s2_arg_tensors(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i, ts_rt_tensor ***out, uint32_t *n) {
  ts_rt_list *l = NULL;
  if (!ts_rt_arg_list(c, call, i, &l)) return false;
  for (uint32_t k = 0; k < l->n; k++)
    if (l->items[k].tag != TS_IV_TENSOR) return ts_rt_fail(c, "argument %u: expected List[Tensor]", (unsigned)i);
  *out = ts_rt_malloc(sizeof(ts_rt_tensor *) * (l->n ? l->n : 1));
  if (!*out) return ts_rt_oom(c);
  for (uint32_t k = 0; k < l->n; k++) (*out)[k] = l->items[k].u.t;
  *n = l->n;
  return true;
}

static void s2_release_all(ts_rt_tensor **ts, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (ts[i]) ts_rt_tensor_release(ts[i]);
}

/* A contiguous copy of a expanded to the shape nd/sizes. */
static ts_rt_tensor *s2_expand_copy(ts_rt_ctx *c, const ts_rt_tensor *a, int32_t nd, const int64_t *sizes) {
  ts_rt_tensor *e = ts_rt_expand(c, a, nd, sizes);
  if (!e) return NULL;
  ts_rt_tensor *r = ts_rt_clone(c, e);
  ts_rt_tensor_release(e);
  return r;
}

/* ------------------------------------------------ flips and rotations */

static bool s2_k_fliplr(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a)) return false;
  if (a->ndim < 2) return ts_rt_fail(ctx, "Input must be >= 2-d.");
  int64_t d = 1;
  return s2_put(call, s2_flip(ctx, a, &d, 1));
}

static bool s2_k_flipud(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a)) return false;
  if (a->ndim < 1) return ts_rt_fail(ctx, "Input must be >= 1-d.");
  int64_t d = 0;
  return s2_put(call, s2_flip(ctx, a, &d, 1));
}

/* rot90(k, dims): k quarter turns from dims[0] towards dims[1], as flips
 * and a transpose. */
static bool s2_k_rot90(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  int64_t k = 0, dims[TS_RT_MAX_DIMS];
  uint32_t nd = 0;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_int(ctx, call, 1, &k) ||
      !ts_rt_arg_ints(ctx, call, 2, dims, TS_RT_MAX_DIMS, &nd, 0))
    return false;
  int64_t total = a->ndim;
  if (nd != 2) return ts_rt_fail(ctx, "expected total rotation dims == 2, but got dims = %u", (unsigned)nd);
  if (total < 2) return ts_rt_fail(ctx, "expected total dims >= 2, but got total dims = %lld", (long long)total);
  if (dims[0] == dims[1] || llabs(dims[0] - dims[1]) == total)
    return ts_rt_fail(ctx, "expected rotation dims to be different, but got dim0 = %lld and dim1 = %lld",
                      (long long)dims[0], (long long)dims[1]);
  if (dims[0] >= total || dims[0] < -total)
    return ts_rt_fail(ctx, "Rotation dim0 out of range, dim0 = %lld", (long long)dims[0]);
  if (dims[1] >= total || dims[1] < -total)
    return ts_rt_fail(ctx, "Rotation dim1 out of range, dim1 = %lld", (long long)dims[1]);
  k = (4 + (k % 4)) % 4;
  ts_rt_tensor *f = NULL, *r = NULL;
  switch (k) {
  case 1:
  case 3:
    f = s2_flip(ctx, a, &dims[k == 1 ? 1 : 0], 1);
    if (f) r = ts_rt_transpose(ctx, f, dims[0], dims[1]);
    if (f) ts_rt_tensor_release(f);
    return s2_put(call, r);
  case 2: return s2_put(call, s2_flip(ctx, a, dims, 2));
  default: return s2_put(call, ts_rt_clone(ctx, a));
  }
}

/* ------------------------------------------------------------- stacks */

/* hstack (0), vstack (1), dstack (2), column_stack (3). */
static bool s2_stack_kind(ts_rt_ctx *ctx, ts_rt_call *call, int kind) {
  static const char *const names[4] = {"hstack", "vstack", "dstack", "column_stack"};
  ts_rt_tensor **in = NULL;
  uint32_t n = 0;
  if (!s2_arg_tensors(ctx, call, 0, &in, &n)) return false;
  if (n == 0) {
    ts_rt_free(in);
    return ts_rt_fail(ctx, "%s expects a non-empty TensorList", names[kind]);
  }
  ts_rt_tensor **ts = ts_rt_malloc(sizeof(ts_rt_tensor *) * n);
  if (!ts) {
    ts_rt_free(in);
    return ts_rt_oom(ctx);
  }
  memset(ts, 0, sizeof(ts_rt_tensor *) * n);
  bool ok = true;
  for (uint32_t i = 0; ok && i < n; i++) {
    const ts_rt_tensor *t = in[i];
    int want = kind == 0 ? 1 : kind == 1 ? 2 : kind == 2 ? 3 : 0;
    if (kind == 3) {
      if (t->ndim <= 1) {
        int64_t s[2] = {ts_rt_tensor_numel(t), 1};
        ts[i] = ts_rt_reshape(ctx, t, 2, s);
      } else {
        ts[i] = ts_rt_tensor_view(ctx, t, t->offset, t->ndim, t->sizes, t->strides);
      }
    } else if (t->ndim >= want) {
      ts[i] = ts_rt_tensor_view(ctx, t, t->offset, t->ndim, t->sizes, t->strides);
    } else if (t->ndim == 0) {
      int64_t ones[3] = {1, 1, 1};
      ts[i] = ts_rt_view(ctx, t, want, ones);
    } else if (t->ndim == 1 && want == 3) {
      int64_t s[3] = {1, t->sizes[0], 1};
      ts[i] = ts_rt_view(ctx, t, 3, s);
    } else if (t->ndim == 1) {
      ts[i] = ts_rt_unsqueeze(ctx, t, 0);
    } else {
      ts[i] = ts_rt_unsqueeze(ctx, t, -1);
    }
    ok = ts[i] != NULL;
  }
  ts_rt_tensor *r = NULL;
  if (ok) {
    int64_t dim = kind == 0 ? (ts[0]->ndim == 1 ? 0 : 1) : kind == 1 ? 0 : kind == 2 ? 2 : 1;
    r = ts_rt_cat(ctx, ts, n, dim);
  }
  s2_release_all(ts, n);
  ts_rt_free(ts);
  ts_rt_free(in);
  return s2_put(call, r);
}

static bool s2_k_hstack(ts_rt_ctx *ctx, ts_rt_call *call) { return s2_stack_kind(ctx, call, 0); }
static bool s2_k_vstack(ts_rt_ctx *ctx, ts_rt_call *call) { return s2_stack_kind(ctx, call, 1); }
static bool s2_k_dstack(ts_rt_ctx *ctx, ts_rt_call *call) { return s2_stack_kind(ctx, call, 2); }
static bool s2_k_column_stack(ts_rt_ctx *ctx, ts_rt_call *call) { return s2_stack_kind(ctx, call, 3); }

static bool s2_k_narrow_copy(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  int64_t dim = 0, start = 0, len = 0;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_int(ctx, call, 1, &dim) ||
      !ts_rt_arg_int(ctx, call, 2, &start) || !ts_rt_arg_int(ctx, call, 3, &len))
    return false;
  ts_rt_tensor *v = ts_rt_narrow(ctx, a, dim, start, len);
  if (!v) return false;
  ts_rt_tensor *r = ts_rt_clone(ctx, v);
  ts_rt_tensor_release(v);
  return s2_put(call, r);
}

/* ------------------------------------------------------------ scatters */

/* The *_scatter ops: out = self.clone(); view(out) = src, src's sizes
 * having to be the view's. `view` is made from the clone by mk. */
typedef ts_rt_tensor *(*s2_view_fn)(ts_rt_ctx *c, ts_rt_tensor *base, const ts_rt_call *call);

static bool s2_scatter(ts_rt_ctx *ctx, ts_rt_call *call, s2_view_fn mk) {
  ts_rt_tensor *a = NULL, *src = NULL;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_tensor(ctx, call, 1, &src)) return false;
  ts_rt_tensor *out = ts_rt_clone(ctx, a);
  if (!out) return false;
  ts_rt_tensor *v = mk(ctx, out, call);
  if (!v) {
    ts_rt_tensor_release(out);
    return false;
  }
  bool same = v->ndim == src->ndim;
  for (int32_t d = 0; same && d < v->ndim; d++) same = v->sizes[d] == src->sizes[d];
  bool ok;
  if (!same) {
    char b1[S2_SHAPE_CAP], b2[S2_SHAPE_CAP];
    ok = ts_rt_fail(ctx, "expected src to have a size equal to the slice of self. src size = %s, slice size = %s",
                    s2_fmt(b1, sizeof b1, src->ndim, src->sizes), s2_fmt(b2, sizeof b2, v->ndim, v->sizes));
  } else {
    ok = ts_rt_tensor_copy_(ctx, v, src);
  }
  ts_rt_tensor_release(v);
  if (!ok) {
    ts_rt_tensor_release(out);
    return false;
  }
  return s2_put(call, out);
}

static ts_rt_tensor *s2_mk_select(ts_rt_ctx *c, ts_rt_tensor *base, const ts_rt_call *call) {
  int64_t dim = 0, index = 0;
  if (!ts_rt_arg_int(c, call, 2, &dim) || !ts_rt_arg_int(c, call, 3, &index)) return NULL;
  return ts_rt_select(c, base, dim, index);
}

static ts_rt_tensor *s2_mk_slice(ts_rt_ctx *c, ts_rt_tensor *base, const ts_rt_call *call) {
  int64_t dim = 0, start = 0, end = 0, step = 1;
  bool hs = false, he = false;
  if (!ts_rt_arg_int(c, call, 2, &dim) || !ts_rt_arg_opt_int(c, call, 3, &start, &hs) ||
      !ts_rt_arg_opt_int(c, call, 4, &end, &he) || !ts_rt_arg_int(c, call, 5, &step))
    return NULL;
  return ts_rt_slice(c, base, dim, hs ? start : 0, he ? end : INT64_MAX, step);
}

static ts_rt_tensor *s2_mk_diagonal(ts_rt_ctx *c, ts_rt_tensor *base, const ts_rt_call *call) {
  ts_iv in[4] = {ts_iv_tensor(base), ts_iv_none(), ts_iv_none(), ts_iv_none()};
  for (uint32_t i = 0; i < 3; i++) {
    int64_t v = 0;
    if (!ts_rt_arg_int(c, call, 2 + i, &v)) return NULL;
    in[1 + i] = ts_iv_int(v);
  }
  return s2_call(c, "aten::diagonal", in, 4);
}

static ts_rt_tensor *s2_mk_as_strided(ts_rt_ctx *c, ts_rt_tensor *base, const ts_rt_call *call) {
  if (!ts_rt_arg_check(c, call, 4)) return NULL;
  ts_iv in[4] = {ts_iv_tensor(base), call->in[2], call->in[3], call->in[4]};
  return s2_call(c, "aten::as_strided", in, 4);
}

static bool s2_k_select_scatter(ts_rt_ctx *ctx, ts_rt_call *call) { return s2_scatter(ctx, call, s2_mk_select); }
static bool s2_k_slice_scatter(ts_rt_ctx *ctx, ts_rt_call *call) { return s2_scatter(ctx, call, s2_mk_slice); }
static bool s2_k_diagonal_scatter(ts_rt_ctx *ctx, ts_rt_call *call) { return s2_scatter(ctx, call, s2_mk_diagonal); }
static bool s2_k_as_strided_scatter(ts_rt_ctx *ctx, ts_rt_call *call) {
  return s2_scatter(ctx, call, s2_mk_as_strided);
}

/* ---------------------------------------------------------- reductions */

/* sum_to_size(size): the leading dims, and dims where size has 1, summed
 * away (ATen's sum_to); self itself when nothing is. */
static bool s2_k_sum_to_size(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  int64_t s[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_ints(ctx, call, 1, s, TS_RT_MAX_DIMS, &n, 0)) return false;
  bool ok = (int32_t)n <= a->ndim;
  for (uint32_t i = 0; ok && i < n; i++) {
    int64_t have = a->sizes[a->ndim - (int32_t)n + (int32_t)i];
    ok = s[i] == have || s[i] == 1;
  }
  if (!ok) {
    char b1[S2_SHAPE_CAP], b2[S2_SHAPE_CAP];
    return ts_rt_fail(ctx, "size {%s} is not expandable to size {%s}.", s2_fmt(b1, sizeof b1, (int32_t)n, s),
                      s2_fmt(b2, sizeof b2, a->ndim, a->sizes));
  }
  int32_t lead = a->ndim - (int32_t)n;
  int64_t dims[TS_RT_MAX_DIMS];
  uint32_t nd = 0;
  for (int32_t d = 0; d < lead; d++) dims[nd++] = d;
  for (int32_t d = lead; d < a->ndim; d++)
    if (s[d - lead] == 1 && a->sizes[d] != 1) dims[nd++] = d;
  if (nd == 0) {
    ts_rt_tensor_retain(a);
    return s2_put(call, a);
  }
  ts_rt_tensor *r = ts_rt_sum(ctx, a, dims, nd, true, TS_DT_NONE);
  if (!r || lead == 0) return s2_put(call, r);
  ts_rt_tensor *v = ts_rt_view(ctx, r, (int32_t)n, s);
  ts_rt_tensor_release(r);
  return s2_put(call, v);
}

/* (a != 0) as a new bool tensor of a's shape. */
static ts_rt_tensor *s2_nonzero_mask(ts_rt_ctx *c, const ts_rt_tensor *a) {
  ts_rt_tensor *ca = ts_rt_tensor_contiguous(c, (ts_rt_tensor *)a);
  if (!ca) return NULL;
  ts_rt_tensor *m = ts_rt_tensor_new(c, TS_DT_BOOL, a->ndim, a->sizes, false);
  if (m) {
    int64_t n = ts_rt_tensor_numel(a);
    const char *p = ts_rt_tensor_data(ca);
    bool *q = ts_rt_tensor_data(m);
    size_t es = ts_dtype_size((ts_dtype)a->dtype);
    bool fl = ts_rt_dtype_is_float((ts_dtype)a->dtype);
    for (int64_t i = 0; i < n; i++)
      q[i] = fl ? ts_rt_load_f64(p + (size_t)i * es, (ts_dtype)a->dtype) != 0
                : ts_rt_load_i64(p + (size_t)i * es, (ts_dtype)a->dtype) != 0;
  }
  ts_rt_tensor_release(ca);
  return m;
}

static ts_rt_tensor *s2_count_nonzero(ts_rt_ctx *c, const ts_rt_tensor *a, const int64_t *dims, uint32_t nd) {
  int64_t w[TS_RT_MAX_DIMS];
  for (uint32_t i = 0; i < nd; i++) {
    if (!ts_rt_wrap_dim(c, dims[i], a->ndim, &w[i])) return NULL;
    for (uint32_t j = 0; j < i; j++)
      if (w[j] == w[i]) {
        ts_rt_fail(c, "dim %lld appears multiple times in the list of dims", (long long)w[i]);
        return NULL;
      }
  }
  ts_rt_tensor *m = s2_nonzero_mask(c, a);
  if (!m) return NULL;
  ts_rt_tensor *r = ts_rt_sum(c, m, w, nd, false, TS_DT_INT64);
  ts_rt_tensor_release(m);
  return r;
}

static bool s2_k_count_nonzero_list(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  int64_t d[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_ints(ctx, call, 1, d, TS_RT_MAX_DIMS, &n, 0)) return false;
  return s2_put(call, s2_count_nonzero(ctx, a, d, n));
}

static bool s2_k_count_nonzero(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  int64_t d = 0;
  bool has = false;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_opt_int(ctx, call, 1, &d, &has)) return false;
  return s2_put(call, s2_count_nonzero(ctx, a, &d, has ? 1 : 0));
}

/* ------------------------------------------------------------- nonzero */

static bool s2_k_argwhere(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a)) return false;
  ts_iv in[1] = {ts_iv_tensor(a)};
  return s2_put(call, s2_call(ctx, "aten::nonzero", in, 1));
}

/* nonzero(as_tuple=True): one 1-d int64 tensor of coordinates per dim (a
 * 0-d input counts as 1-d). */
static bool s2_k_nonzero_numpy(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a)) return false;
  ts_rt_tensor *a1 = a->ndim == 0 ? ts_rt_unsqueeze(ctx, a, 0) : NULL;
  if (a->ndim == 0 && !a1) return false;
  ts_iv in[1] = {ts_iv_tensor(a1 ? a1 : a)};
  ts_rt_tensor *nz = s2_call(ctx, "aten::nonzero", in, 1);
  if (a1) ts_rt_tensor_release(a1);
  if (!nz) return false;
  ts_rt_list *l = ts_rt_list_new(ctx, ts_type_leaf(TS_TY_TENSOR), (uint32_t)nz->sizes[1]);
  bool ok = l != NULL;
  for (int64_t d = 0; ok && d < nz->sizes[1]; d++) {
    ts_rt_tensor *col = ts_rt_select(ctx, nz, 1, d);
    ok = col && ts_rt_list_append(ctx, l, ts_iv_tensor(col));
  }
  ts_rt_tensor_release(nz);
  if (!ok) {
    if (l) ts_iv_release((ts_iv){.u.l = l, .tag = TS_IV_LIST});
    return false;
  }
  call->out[0] = (ts_iv){.u.l = l, .tag = TS_IV_LIST};
  return true;
}

/* ----------------------------------------------------------------- put */

/* put(index, source, accumulate): a copy of self with self.flatten()[index[i]]
 * = source[i] (+= with accumulate), indices wrapping from the end. */
static bool s2_k_put(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL, *index = NULL, *src = NULL;
  bool acc = false;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_tensor(ctx, call, 1, &index) ||
      !ts_rt_arg_tensor(ctx, call, 2, &src) || !ts_rt_arg_bool(ctx, call, 3, &acc))
    return false;
  if (index->dtype != TS_DT_INT64)
    return ts_rt_fail(ctx, "put_(): Expected a long tensor for index, but got %s",
                      ts_rt_dtype_name((ts_dtype)index->dtype));
  if (a->dtype != src->dtype)
    return ts_rt_fail(ctx, "put_(): self and source expected to have the same dtype, but got self.dtype = %s and "
                      "source.dtype = %s", ts_rt_dtype_name((ts_dtype)a->dtype), ts_rt_dtype_name((ts_dtype)src->dtype));
  int64_t ni = ts_rt_tensor_numel(index), ns = ts_rt_tensor_numel(src), na = ts_rt_tensor_numel(a);
  if (ns != ni)
    return ts_rt_fail(ctx, "put_(): Expected source and index to have the same number of elements, but got "
                      "source.numel() = %lld, index.numel() = %lld", (long long)ns, (long long)ni);
  if (na == 0 && ni != 0) return ts_rt_fail(ctx, "put_(): Tried to put elements into an empty tensor");
  ts_rt_tensor *out = ts_rt_clone(ctx, a);
  ts_rt_tensor *ci = out ? ts_rt_tensor_contiguous(ctx, index) : NULL;
  ts_rt_tensor *cs = ci ? ts_rt_tensor_contiguous(ctx, src) : NULL;
  bool ok = cs != NULL;
  if (ok) {
    ts_dtype dt = (ts_dtype)a->dtype;
    size_t es = ts_dtype_size(dt);
    const int64_t *ip = ts_rt_tensor_data(ci);
    const char *sp = ts_rt_tensor_data(cs);
    char *op = ts_rt_tensor_data(out);
    bool fl = ts_rt_dtype_is_float(dt);
    for (int64_t i = 0; ok && i < ni; i++) {
      int64_t k = ip[i];
      if (k < -na || k >= na) {
        ok = ts_rt_fail(ctx, "out of range: tried to access index %lld on a tensor of %lld elements.", (long long)k,
                        (long long)na);
        break;
      }
      if (k < 0) k += na;
      char *dst = op + (size_t)k * es;
      const char *s = sp + (size_t)i * es;
      if (!acc) memcpy(dst, s, es);
      else if (dt == TS_DT_BOOL) *(bool *)dst = *(bool *)dst || *(const bool *)s;
      else if (fl) ts_rt_store_f64(dst, dt, ts_rt_load_f64(dst, dt) + ts_rt_load_f64(s, dt));
      else ts_rt_store_i64(dst, dt, (int64_t)((uint64_t)ts_rt_load_i64(dst, dt) + (uint64_t)ts_rt_load_i64(s, dt)));
    }
  }
  if (ci) ts_rt_tensor_release(ci);
  if (cs) ts_rt_tensor_release(cs);
  if (!ok) {
    if (out) ts_rt_tensor_release(out);
    return false;
  }
  return s2_put(call, out);
}

/* ------------------------------------------------- building new tensors */

/* block_diag: the inputs (0-d as 1x1, 1-d as one row) down the diagonal
 * of a zero matrix in their promoted dtype. */
static bool s2_k_block_diag(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor **in = NULL;
  uint32_t n = 0;
  if (!s2_arg_tensors(ctx, call, 0, &in, &n)) return false;
  int64_t rows = 0, cols = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (in[i]->ndim > 2) {
      int nd = in[i]->ndim;
      ts_rt_free(in);
      return ts_rt_fail(ctx, "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input %u has %d "
                        "dimensions", (unsigned)i, nd);
    }
    rows += in[i]->ndim == 2 ? in[i]->sizes[0] : 1;
    cols += in[i]->ndim == 2 ? in[i]->sizes[1] : in[i]->ndim == 1 ? in[i]->sizes[0] : 1;
  }
  /* result_type of the inputs (0-d ones rank below the others) */
  ts_dtype dt = TS_DT_FLOAT32;
  if (n) {
    ts_iv *ops = ts_rt_malloc(sizeof(ts_iv) * n);
    if (!ops) {
      ts_rt_free(in);
      return ts_rt_oom(ctx);
    }
    for (uint32_t i = 0; i < n; i++) ops[i] = ts_iv_tensor(in[i]);
    dt = ts_rt_result_type(ops, n);
    ts_rt_free(ops);
  }
  int64_t sz[2] = {n ? rows : 1, cols};
  ts_rt_tensor *r = ts_rt_tensor_new(ctx, dt, 2, sz, true);
  int64_t r0 = 0, c0 = 0;
  bool ok = r != NULL;
  for (uint32_t i = 0; ok && i < n; i++) {
    const ts_rt_tensor *t = in[i];
    int64_t h = t->ndim == 2 ? t->sizes[0] : 1, w = t->ndim == 2 ? t->sizes[1] : t->ndim == 1 ? t->sizes[0] : 1;
    int64_t s[2] = {h, w}, st[2] = {r->strides[0], r->strides[1]};
    ts_rt_tensor *v = ts_rt_tensor_view(ctx, r, r->offset + r0 * st[0] + c0 * st[1], 2, s, st);
    ok = v && ts_rt_tensor_copy_(ctx, v, t);
    if (v) ts_rt_tensor_release(v);
    r0 += h;
    c0 += w;
  }
  ts_rt_free(in);
  if (!ok) {
    if (r) ts_rt_tensor_release(r);
    return false;
  }
  return s2_put(call, r);
}

/* cartesian_prod: every combination of one element of each 1-d input, one
 * per row (meshgrid's 'ij' order); one input is returned as it is. */
static bool s2_k_cartesian_prod(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor **in = NULL;
  uint32_t n = 0;
  char b[S2_SHAPE_CAP];
  if (!s2_arg_tensors(ctx, call, 0, &in, &n)) return false;
  bool ok = true;
  for (uint32_t i = 0; ok && i < n; i++)
    if (in[i]->ndim != 1)
      ok = ts_rt_fail(ctx, "Expect a 1D vector, but got shape %s", s2_fmt(b, sizeof b, in[i]->ndim, in[i]->sizes));
  if (ok && n == 0) ok = ts_rt_fail(ctx, "meshgrid expects a non-empty TensorList");
  for (uint32_t i = 1; ok && i < n; i++)
    if (in[i]->dtype != in[0]->dtype) ok = ts_rt_fail(ctx, "meshgrid expects all tensors to have the same dtype");
  if (!ok) {
    ts_rt_free(in);
    return false;
  }
  if (n == 1) {
    ts_rt_tensor *r = in[0];
    ts_rt_free(in);
    ts_rt_tensor_retain(r);
    return s2_put(call, r);
  }
  int64_t rows = 1;
  for (uint32_t i = 0; i < n; i++)
    if (in[i]->sizes[0] != 0 && rows > INT64_MAX / in[i]->sizes[0]) {
      ts_rt_free(in);
      return ts_rt_fail(ctx, "cartesian_prod: too many rows");
    } else {
      rows *= in[i]->sizes[0];
    }
  int64_t sz[2] = {rows, n};
  ts_rt_tensor *r = ts_rt_tensor_new(ctx, (ts_dtype)in[0]->dtype, 2, sz, false);
  if (!r) {
    ts_rt_free(in);
    return false;
  }
  size_t es = ts_dtype_size((ts_dtype)in[0]->dtype);
  char *rp = ts_rt_tensor_data(r);
  int64_t idx[TS_RT_MAX_DIMS > 64 ? TS_RT_MAX_DIMS : 64] = {0};
  if (n > 64) {
    ts_rt_tensor_release(r);
    ts_rt_free(in);
    return ts_rt_fail(ctx, "cartesian_prod: at most 64 tensors");
  }
  for (int64_t k = 0; k < rows; k++) {
    for (uint32_t j = 0; j < n; j++) {
      const char *src = (const char *)in[j]->storage->data + (size_t)(in[j]->offset + idx[j] * in[j]->strides[0]) * es;
      memcpy(rp + ((size_t)k * n + j) * es, src, es);
    }
    for (int32_t j = (int32_t)n - 1; j >= 0; j--) {
      if (++idx[j] < in[j]->sizes[0]) break;
      idx[j] = 0;
    }
  }
  ts_rt_free(in);
  return s2_put(call, r);
}

/* combinations(r, with_replacement): the r-element index tuples i1 < i2 <
 * ... (<= with replacement) in lexicographic order, as rows of elements. */
static bool s2_k_combinations(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  int64_t r = 0;
  bool rep = false;
  char b[S2_SHAPE_CAP];
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_int(ctx, call, 1, &r) || !ts_rt_arg_bool(ctx, call, 2, &rep))
    return false;
  if (a->ndim != 1) return ts_rt_fail(ctx, "Expect a 1D vector, but got shape %s", s2_fmt(b, sizeof b, a->ndim, a->sizes));
  if (r < 0) return ts_rt_fail(ctx, "Expect a non-negative number, but got %lld", (long long)r);
  if (r == 0) {
    int64_t z = 0;
    return s2_put(call, ts_rt_tensor_new(ctx, (ts_dtype)a->dtype, 1, &z, false));
  }
  if (r > 64) return ts_rt_fail(ctx, "tsaot: combinations of more than 64 elements are not supported");
  int64_t n = a->sizes[0], count = 0;
  /* count the tuples first (bounded: the result's elements) */
  int64_t idx[64];
  bool any = rep ? n > 0 : n >= r;
  if (any) {
    for (int64_t j = 0; j < r; j++) idx[j] = rep ? 0 : j;
    for (;;) {
      if (++count * r > ((int64_t)1 << 26)) return ts_rt_fail(ctx, "tsaot: combinations: too many elements");
      int64_t j = r - 1;
      while (j >= 0 && idx[j] == (rep ? n - 1 : n - r + j)) j--;
      if (j < 0) break;
      idx[j]++;
      for (int64_t q = j + 1; q < r; q++) idx[q] = rep ? idx[j] : idx[q - 1] + 1;
    }
  }
  int64_t sz[2] = {count, r};
  ts_rt_tensor *res = ts_rt_tensor_new(ctx, (ts_dtype)a->dtype, 2, sz, false);
  if (!res) return false;
  size_t es = ts_dtype_size((ts_dtype)a->dtype);
  char *rp = ts_rt_tensor_data(res);
  const char *ap = a->storage->data;
  if (any) {
    for (int64_t j = 0; j < r; j++) idx[j] = rep ? 0 : j;
    for (int64_t k = 0; k < count; k++) {
      for (int64_t j = 0; j < r; j++)
        memcpy(rp + ((size_t)k * (size_t)r + (size_t)j) * es, ap + (size_t)(a->offset + idx[j] * a->strides[0]) * es,
               es);
      int64_t j = r - 1;
      while (j >= 0 && idx[j] == (rep ? n - 1 : n - r + j)) j--;
      if (j < 0) break;
      idx[j]++;
      for (int64_t q = j + 1; q < r; q++) idx[q] = rep ? idx[j] : idx[q - 1] + 1;
    }
  }
  return s2_put(call, res);
}

/* kron(a, b): both padded to the same rank with leading 1s, a's dims
 * interleaved with b's and multiplied (broadcast), then merged pairwise. */
static bool s2_k_kron(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL, *b = NULL;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_tensor(ctx, call, 1, &b)) return false;
  int32_t nd = a->ndim > b->ndim ? a->ndim : b->ndim;
  if (2 * nd > TS_RT_MAX_DIMS) return ts_rt_fail(ctx, "tsaot supports at most %d dimensions", TS_RT_MAX_DIMS);
  int64_t as[TS_RT_MAX_DIMS], ast[TS_RT_MAX_DIMS], bs[TS_RT_MAX_DIMS], bst[TS_RT_MAX_DIMS], rs[TS_RT_MAX_DIMS];
  for (int32_t d = 0; d < nd; d++) {
    int32_t da = d - (nd - a->ndim), db = d - (nd - b->ndim);
    as[2 * d] = da >= 0 ? a->sizes[da] : 1;
    ast[2 * d] = da >= 0 ? a->strides[da] : 0;
    as[2 * d + 1] = 1;
    ast[2 * d + 1] = 0;
    bs[2 * d] = 1;
    bst[2 * d] = 0;
    bs[2 * d + 1] = db >= 0 ? b->sizes[db] : 1;
    bst[2 * d + 1] = db >= 0 ? b->strides[db] : 0;
    rs[d] = as[2 * d] * bs[2 * d + 1];
  }
  ts_rt_tensor *av = ts_rt_tensor_view(ctx, a, a->offset, 2 * nd, as, ast);
  ts_rt_tensor *bv = av ? ts_rt_tensor_view(ctx, b, b->offset, 2 * nd, bs, bst) : NULL;
  ts_rt_tensor *p = bv ? ts_rt_binary_op(ctx, TS_PW_mul, av, bv) : NULL;
  ts_rt_tensor *r = p ? ts_rt_reshape(ctx, p, nd, rs) : NULL;
  if (av) ts_rt_tensor_release(av);
  if (bv) ts_rt_tensor_release(bv);
  if (p) ts_rt_tensor_release(p);
  return s2_put(call, r);
}

/* -------------------------------------------------------- differences */

/* x.narrow(dim, 1, len) - x.narrow(dim, 0, len) (xor for bool) */
static ts_rt_tensor *s2_diff_once(ts_rt_ctx *c, const ts_rt_tensor *x, int64_t dim, int64_t len) {
  ts_rt_tensor *hi = ts_rt_narrow(c, x, dim, 1, len);
  ts_rt_tensor *lo = hi ? ts_rt_narrow(c, x, dim, 0, len) : NULL;
  ts_rt_tensor *r = lo ? ts_rt_binary_op(c, x->dtype == TS_DT_BOOL ? TS_PW_logical_xor : TS_PW_sub, hi, lo) : NULL;
  if (hi) ts_rt_tensor_release(hi);
  if (lo) ts_rt_tensor_release(lo);
  return r;
}

static bool s2_diff_check_other(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *o, int64_t dim) {
  if (o->ndim != a->ndim) return ts_rt_fail(c, "diff expects prepend or append to be the same dimension as input");
  for (int32_t d = 0; d < a->ndim; d++)
    if (d != dim && o->sizes[d] != a->sizes[d])
      return ts_rt_fail(c, "diff expects the shape of tensor to prepend or append to match that of input except along "
                        "the differencing dimension; input.size(%d) = %lld, but got tensor.size(%d) = %lld", (int)d,
                        (long long)a->sizes[d], (int)d, (long long)o->sizes[d]);
  return true;
}

static bool s2_k_diff(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL, *pre = NULL, *app = NULL;
  int64_t n = 0, dim = 0;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_int(ctx, call, 1, &n) || !ts_rt_arg_int(ctx, call, 2, &dim) ||
      !ts_rt_arg_opt_tensor(ctx, call, 3, &pre) || !ts_rt_arg_opt_tensor(ctx, call, 4, &app))
    return false;
  if (a->ndim == 0) return ts_rt_fail(ctx, "diff expects input to be at least one-dimensional");
  if (!ts_rt_wrap_dim(ctx, dim, a->ndim, &dim)) return false;
  if ((pre && !s2_diff_check_other(ctx, a, pre, dim)) || (app && !s2_diff_check_other(ctx, a, app, dim))) return false;
  /* n = 0 copies self, prepend and append ignored, as ATen */
  if (n == 0) return s2_put(call, ts_rt_clone(ctx, a));
  ts_rt_tensor *x;
  if (pre || app) {
    ts_rt_tensor *parts[3];
    uint32_t np = 0;
    if (pre) parts[np++] = pre;
    parts[np++] = a;
    if (app) parts[np++] = app;
    x = ts_rt_cat(ctx, parts, np, dim);
  } else {
    ts_rt_tensor_retain(a);
    x = a;
  }
  if (!x) return false;
  if (n < 0) return s2_put(call, x); /* no differences taken */
  int64_t len = x->sizes[dim] - 1;
  if (n > x->sizes[dim]) n = x->sizes[dim];
  for (int64_t i = 0; i < n; i++, len--) {
    ts_rt_tensor *y = s2_diff_once(ctx, x, dim, len);
    ts_rt_tensor_release(x);
    if (!y) return false;
    x = y;
  }
  return s2_put(call, x);
}

/* ---------------------------------------------------------- trapezoid */

/* y's sizes without dim, zeros in y's dtype (an integral of no samples). */
static ts_rt_tensor *s2_zeros_except(ts_rt_ctx *c, const ts_rt_tensor *y, int64_t dim) {
  int64_t s[TS_RT_MAX_DIMS];
  int32_t n = 0;
  for (int32_t d = 0; d < y->ndim; d++)
    if (d != dim) s[n++] = y->sizes[d];
  return ts_rt_tensor_new(c, (ts_dtype)y->dtype, n, s, true);
}

/* x viewed so that its differences along dim broadcast against y's. */
static ts_rt_tensor *s2_trap_dx(ts_rt_ctx *c, const ts_rt_tensor *y, const ts_rt_tensor *x, int64_t dim,
                                const char *op) {
  ts_rt_tensor *xv;
  if (x->ndim == 1) {
    if (x->sizes[0] != y->sizes[dim]) {
      ts_rt_fail(c, "%s: There must be one `x` value for each sample point", op);
      return NULL;
    }
    int64_t s[TS_RT_MAX_DIMS];
    for (int32_t d = 0; d < y->ndim; d++) s[d] = 1;
    s[dim] = x->sizes[0];
    xv = ts_rt_view(c, x, y->ndim, s);
  } else if (x->ndim < y->ndim) {
    int64_t s[TS_RT_MAX_DIMS];
    int32_t pad = y->ndim - x->ndim;
    for (int32_t d = 0; d < y->ndim; d++) s[d] = d < pad ? 1 : x->sizes[d - pad];
    xv = ts_rt_view(c, x, y->ndim, s);
  } else {
    xv = ts_rt_tensor_view(c, x, x->offset, x->ndim, x->sizes, x->strides);
  }
  if (!xv) return NULL;
  ts_rt_tensor *l = ts_rt_slice(c, xv, dim, 0, -1, 1);
  ts_rt_tensor *r = l ? ts_rt_slice(c, xv, dim, 1, INT64_MAX, 1) : NULL;
  ts_rt_tensor *dx = r ? ts_rt_binary_op(c, TS_PW_sub, r, l) : NULL;
  ts_rt_tensor_release(xv);
  if (l) ts_rt_tensor_release(l);
  if (r) ts_rt_tensor_release(r);
  return dx;
}

/* y[:-1] + y[1:] along dim */
static ts_rt_tensor *s2_pair_sum(ts_rt_ctx *c, const ts_rt_tensor *y, int64_t dim) {
  ts_rt_tensor *l = ts_rt_slice(c, y, dim, 0, -1, 1);
  ts_rt_tensor *r = l ? ts_rt_slice(c, y, dim, 1, INT64_MAX, 1) : NULL;
  ts_rt_tensor *s = r ? ts_rt_binary_op(c, TS_PW_add, l, r) : NULL;
  if (l) ts_rt_tensor_release(l);
  if (r) ts_rt_tensor_release(r);
  return s;
}

static ts_rt_tensor *s2_cumsum(ts_rt_ctx *c, ts_rt_tensor *t, int64_t dim) {
  ts_iv in[3] = {ts_iv_tensor(t), ts_iv_int(dim), ts_iv_none()};
  return s2_call(c, "aten::cumsum", in, 3);
}

/* trapezoid / cumulative_trapezoid (cum) of y along dim with sample
 * points x (NULL: spacing dx). */
static ts_rt_tensor *s2_trapezoid(ts_rt_ctx *c, const ts_rt_tensor *y, const ts_rt_tensor *x, double dx, int64_t dim,
                                  bool cum) {
  const char *op = cum ? "cumulative_trapezoid" : "trapezoid";
  if (!ts_rt_wrap_dim(c, dim, y->ndim, &dim)) return NULL;
  if (y->ndim == 0) {
    ts_rt_fail(c, "Dimension specified as %lld but tensor has no dimensions", (long long)(dim == 0 ? -1 : dim));
    return NULL;
  }
  if (!cum && y->sizes[dim] == 0) return s2_zeros_except(c, y, dim);
  if (y->dtype == TS_DT_BOOL || (x && x->dtype == TS_DT_BOOL)) {
    ts_rt_fail(c, "%s: received a bool input for `%s`, but bool is not supported", op,
               y->dtype == TS_DT_BOOL ? "y" : "x");
    return NULL;
  }
  ts_rt_tensor *r = NULL;
  if (x) {
    ts_rt_tensor *d = s2_trap_dx(c, y, x, dim, op);
    ts_rt_tensor *s = d ? s2_pair_sum(c, y, dim) : NULL;
    ts_rt_tensor *p = s ? ts_rt_binary_op(c, TS_PW_mul, d, s) : NULL;
    ts_rt_tensor *h = p ? ts_rt_mul_scalar(c, p, 0.5) : NULL;
    if (h) r = cum ? s2_cumsum(c, h, dim) : ts_rt_sum(c, h, &dim, 1, false, TS_DT_NONE);
    if (d) ts_rt_tensor_release(d);
    if (s) ts_rt_tensor_release(s);
    if (p) ts_rt_tensor_release(p);
    if (h) ts_rt_tensor_release(h);
    return r;
  }
  if (cum) {
    /* (dx / 2 * (y[:-1] + y[1:])).cumsum(dim) */
    ts_rt_tensor *s = s2_pair_sum(c, y, dim);
    /* a float number times integers gives the default dtype */
    if (s && !ts_rt_dtype_is_float((ts_dtype)s->dtype)) {
      ts_rt_tensor *sf = ts_rt_tensor_to_dtype(c, s, TS_DT_FLOAT32);
      ts_rt_tensor_release(s);
      s = sf;
    }
    ts_rt_tensor *h = s ? ts_rt_mul_scalar(c, s, dx / 2.0) : NULL;
    if (h) r = s2_cumsum(c, h, dim);
    if (s) ts_rt_tensor_release(s);
    if (h) ts_rt_tensor_release(h);
    return r;
  }
  /* (y.sum(dim) - (y[0] + y[-1]) * 0.5) * dx */
  ts_rt_tensor *sum = ts_rt_sum(c, y, &dim, 1, false, TS_DT_NONE);
  ts_rt_tensor *f = sum ? ts_rt_select(c, y, dim, 0) : NULL;
  ts_rt_tensor *l = f ? ts_rt_select(c, y, dim, -1) : NULL;
  ts_rt_tensor *e = l ? ts_rt_binary_op(c, TS_PW_add, f, l) : NULL;
  ts_rt_tensor *h = e ? ts_rt_mul_scalar(c, e, 0.5) : NULL;
  ts_rt_tensor *d = h ? ts_rt_binary_op(c, TS_PW_sub, sum, h) : NULL;
  if (d) r = ts_rt_mul_scalar(c, d, dx);
  ts_rt_tensor *tmp[6] = {sum, f, l, e, h, d};
  s2_release_all(tmp, 6);
  return r;
}

/* dx: a number (Scalar, or float for trapz) */
static bool s2_trap_dx_kernel(ts_rt_ctx *ctx, ts_rt_call *call, bool cum) {
  ts_rt_tensor *y = NULL;
  double dx = 1;
  int64_t dim = -1;
  if (!ts_rt_arg_tensor(ctx, call, 0, &y) || !ts_rt_arg_double(ctx, call, 1, &dx) || !ts_rt_arg_int(ctx, call, 2, &dim))
    return false;
  return s2_put(call, s2_trapezoid(ctx, y, NULL, dx, dim, cum));
}

static bool s2_trap_x_kernel(ts_rt_ctx *ctx, ts_rt_call *call, bool cum) {
  ts_rt_tensor *y = NULL, *x = NULL;
  int64_t dim = -1;
  if (!ts_rt_arg_tensor(ctx, call, 0, &y) || !ts_rt_arg_tensor(ctx, call, 1, &x) || !ts_rt_arg_int(ctx, call, 2, &dim))
    return false;
  return s2_put(call, s2_trapezoid(ctx, y, x, 1, dim, cum));
}

static bool s2_k_trapezoid_dx(ts_rt_ctx *ctx, ts_rt_call *call) { return s2_trap_dx_kernel(ctx, call, false); }
static bool s2_k_trapezoid_x(ts_rt_ctx *ctx, ts_rt_call *call) { return s2_trap_x_kernel(ctx, call, false); }
static bool s2_k_cumtrapz_dx(ts_rt_ctx *ctx, ts_rt_call *call) { return s2_trap_dx_kernel(ctx, call, true); }
static bool s2_k_cumtrapz_x(ts_rt_ctx *ctx, ts_rt_call *call) { return s2_trap_x_kernel(ctx, call, true); }

/* ----------------------------------------------------------- gradient */

/* The temporaries of one gradient direction: every tensor made is kept
 * here and released at the end; NULL (a failure) propagates through the
 * helpers, so the formulas read as ATen writes them. */
#define S2_TMPS 96
typedef struct s2_tmps {
  ts_rt_ctx *c;
  ts_rt_tensor *t[S2_TMPS];
  int n;
} s2_tmps;

static ts_rt_tensor *s2_keep(s2_tmps *k, ts_rt_tensor *t) {
  if (!t) return NULL;
  if (k->n == S2_TMPS) {
    ts_rt_tensor_release(t);
    ts_rt_fail(k->c, "tsaot: gradient: too many temporaries");
    return NULL;
  }
  k->t[k->n++] = t;
  return t;
}

static void s2_tmps_free(s2_tmps *k) { s2_release_all(k->t, (uint32_t)k->n); }

static ts_rt_tensor *s2_b(s2_tmps *k, ts_pw_op op, const ts_rt_tensor *a, const ts_rt_tensor *b) {
  return a && b ? s2_keep(k, ts_rt_binary_op(k->c, op, a, b)) : NULL;
}

static ts_rt_tensor *s2_sc(s2_tmps *k, double s, const ts_rt_tensor *a) {
  return a ? s2_keep(k, ts_rt_mul_scalar(k->c, a, s)) : NULL;
}

static ts_rt_tensor *s2_sl(s2_tmps *k, const ts_rt_tensor *a, int64_t dim, int64_t start, int64_t end) {
  return a ? s2_keep(k, ts_rt_slice(k->c, a, dim, start, end, 1)) : NULL;
}

static ts_rt_tensor *s2_el(s2_tmps *k, const ts_rt_tensor *v, int64_t i) {
  return v ? s2_keep(k, ts_rt_select(k->c, v, 0, i)) : NULL;
}

/* cat(pre, center, post) along d: a new reference, or NULL. */
static ts_rt_tensor *s2_grad_join(s2_tmps *k, ts_rt_tensor *pre, ts_rt_tensor *center, ts_rt_tensor *app, int64_t d) {
  if (!pre || !center || !app) return NULL;
  ts_rt_tensor *parts[3] = {pre, center, app};
  return ts_rt_cat(k->c, parts, 3, d);
}

/* One direction of ATen's gradient with a uniform spacing dx (a 0-d
 * tensor): central differences inside, one- or two-sided ones at the
 * edges, in ATen's order of operations. */
static ts_rt_tensor *s2_grad_uniform(ts_rt_ctx *c, const ts_rt_tensor *f, int64_t d, const ts_rt_tensor *dx,
                                     int64_t edge) {
  const int64_t E = INT64_MAX;
  s2_tmps k = {.c = c, .n = 0};
  ts_rt_tensor *two = s2_keep(&k, ts_rt_tensor_scalar(c, TS_DT_INT64, 0, 2));
  ts_rt_tensor *center = s2_b(&k, TS_PW_div, s2_b(&k, TS_PW_div, s2_b(&k, TS_PW_sub, s2_sl(&k, f, d, 2, E),
                                                                      s2_sl(&k, f, d, 0, -2)), dx), two);
  ts_rt_tensor *pre, *app;
  if (edge == 1) {
    pre = s2_b(&k, TS_PW_sub, s2_sl(&k, f, d, 1, 2), s2_sl(&k, f, d, 0, 1));
    app = s2_b(&k, TS_PW_sub, s2_sl(&k, f, d, -1, E), s2_sl(&k, f, d, -2, -1));
  } else {
    pre = s2_b(&k, TS_PW_sub, s2_b(&k, TS_PW_add, s2_sc(&k, -1.5, s2_sl(&k, f, d, 0, 1)),
                                   s2_sc(&k, 2, s2_sl(&k, f, d, 1, 2))), s2_sc(&k, 0.5, s2_sl(&k, f, d, 2, 3)));
    app = s2_b(&k, TS_PW_add, s2_b(&k, TS_PW_sub, s2_sc(&k, 0.5, s2_sl(&k, f, d, -3, -2)),
                                   s2_sc(&k, 2, s2_sl(&k, f, d, -2, -1))), s2_sc(&k, 1.5, s2_sl(&k, f, d, -1, E)));
  }
  ts_rt_tensor *r = s2_grad_join(&k, s2_b(&k, TS_PW_div, pre, dx), center, s2_b(&k, TS_PW_div, app, dx), d);
  s2_tmps_free(&k);
  return r;
}

/* One direction of ATen's gradient with sample coordinates x (1-d):
 * second-order differences for uneven spacing, ATen's formulas. */
static ts_rt_tensor *s2_grad_coords(ts_rt_ctx *c, const ts_rt_tensor *f, int64_t d, const ts_rt_tensor *x,
                                    int64_t edge) {
  const int64_t E = INT64_MAX;
  s2_tmps k = {.c = c, .n = 0};
  int64_t shape[TS_RT_MAX_DIMS];
  for (int32_t i = 0; i < f->ndim; i++) shape[i] = 1;
  shape[d] = -1;
  ts_rt_tensor *h = s2_keep(&k, s2_diff_once(c, x, 0, x->sizes[0] - 1));
  ts_rt_tensor *dx1 = s2_sl(&k, h, 0, 0, -1), *dx2 = s2_sl(&k, h, 0, 1, E);
  ts_rt_tensor *s12 = s2_b(&k, TS_PW_add, dx1, dx2);
  ts_rt_tensor *a = s2_b(&k, TS_PW_div, dx2 ? s2_keep(&k, ts_rt_unary_op(c, TS_PW_neg, dx2)) : NULL,
                         s2_b(&k, TS_PW_mul, dx1, s12));
  ts_rt_tensor *b = s2_b(&k, TS_PW_div, s2_b(&k, TS_PW_sub, dx2, dx1), s2_b(&k, TS_PW_mul, dx1, dx2));
  ts_rt_tensor *cc = s2_b(&k, TS_PW_div, dx1, s2_b(&k, TS_PW_mul, dx2, s12));
  a = a ? s2_keep(&k, ts_rt_reshape(c, a, f->ndim, shape)) : NULL;
  b = b ? s2_keep(&k, ts_rt_reshape(c, b, f->ndim, shape)) : NULL;
  cc = cc ? s2_keep(&k, ts_rt_reshape(c, cc, f->ndim, shape)) : NULL;
  ts_rt_tensor *center = s2_b(&k, TS_PW_add, s2_b(&k, TS_PW_add, s2_b(&k, TS_PW_mul, a, s2_sl(&k, f, d, 0, -2)),
                                                  s2_b(&k, TS_PW_mul, b, s2_sl(&k, f, d, 1, -1))),
                              s2_b(&k, TS_PW_mul, cc, s2_sl(&k, f, d, 2, E)));
  ts_rt_tensor *h0 = s2_el(&k, h, 0), *hl = s2_el(&k, h, -1), *pre, *app;
  if (edge == 1) {
    pre = s2_b(&k, TS_PW_div, s2_b(&k, TS_PW_sub, s2_sl(&k, f, d, 1, 2), s2_sl(&k, f, d, 0, 1)), h0);
    app = s2_b(&k, TS_PW_div, s2_b(&k, TS_PW_sub, s2_sl(&k, f, d, -1, E), s2_sl(&k, f, d, -2, -1)), hl);
  } else {
    ts_rt_tensor *h1 = s2_el(&k, h, 1), *hm = s2_el(&k, h, -2);
    ts_rt_tensor *s01 = s2_b(&k, TS_PW_add, h0, h1), *sml = s2_b(&k, TS_PW_add, hl, hm);
    /* a = -(2 h0 + h1) / (h0 (h0 + h1)), b = (h0 + h1) / (h0 h1),
     * c = -h0 / (h1 (h0 + h1)) */
    ts_rt_tensor *ea = s2_b(&k, TS_PW_div, s2_sc(&k, -1, s2_b(&k, TS_PW_add, s2_sc(&k, 2, h0), h1)),
                            s2_b(&k, TS_PW_mul, h0, s01));
    ts_rt_tensor *eb = s2_b(&k, TS_PW_div, s01, s2_b(&k, TS_PW_mul, h0, h1));
    ts_rt_tensor *ec = s2_b(&k, TS_PW_div, h0 ? s2_keep(&k, ts_rt_unary_op(c, TS_PW_neg, h0)) : NULL,
                            s2_b(&k, TS_PW_mul, h1, s01));
    pre = s2_b(&k, TS_PW_add, s2_b(&k, TS_PW_add, s2_b(&k, TS_PW_mul, ea, s2_sl(&k, f, d, 0, 1)),
                                   s2_b(&k, TS_PW_mul, eb, s2_sl(&k, f, d, 1, 2))),
               s2_b(&k, TS_PW_mul, ec, s2_sl(&k, f, d, 2, 3)));
    /* a = hl / (hm (hl + hm)), b = -(hl + hm) / (hl hm),
     * c = (2 hl + hm) / (hl (hl + hm)) */
    ea = s2_b(&k, TS_PW_div, hl, s2_b(&k, TS_PW_mul, hm, sml));
    eb = s2_b(&k, TS_PW_div, sml ? s2_keep(&k, ts_rt_unary_op(c, TS_PW_neg, sml)) : NULL,
              s2_b(&k, TS_PW_mul, hl, hm));
    ec = s2_b(&k, TS_PW_div, s2_b(&k, TS_PW_add, s2_sc(&k, 2, hl), hm), s2_b(&k, TS_PW_mul, hl, sml));
    app = s2_b(&k, TS_PW_add, s2_b(&k, TS_PW_add, s2_b(&k, TS_PW_mul, ea, s2_sl(&k, f, d, -3, -2)),
                                   s2_b(&k, TS_PW_mul, eb, s2_sl(&k, f, d, -2, -1))),
               s2_b(&k, TS_PW_mul, ec, s2_sl(&k, f, d, -1, E)));
  }
  ts_rt_tensor *r = s2_grad_join(&k, pre, center, app, d);
  s2_tmps_free(&k);
  return r;
}

/* torch.gradient, every overload: spacing None/Scalar/Scalar[]/Tensor[]
 * (argument 1), dim None/int/int[] (argument 2), edge_order (3). One
 * tensor per direction, as a list. */
static bool s2_k_gradient(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  int64_t edge = 1;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_check(ctx, call, 3) || !ts_rt_arg_int(ctx, call, 3, &edge))
    return false;
  ts_iv sp = call->in[1], dv = call->in[2];
  int64_t dims[TS_RT_MAX_DIMS];
  uint32_t nd = 0;
  bool dim_given = dv.tag != TS_IV_NONE;
  if (dv.tag == TS_IV_INT) {
    dims[nd++] = dv.u.i;
  } else if (dim_given) {
    if (!ts_rt_arg_ints(ctx, call, 2, dims, TS_RT_MAX_DIMS, &nd, 0)) return false;
  } else {
    for (int32_t d = 0; d < a->ndim; d++) dims[nd++] = d;
  }
  /* the spacing's length as pre_check_gradient sees it */
  int64_t nsp = -1;
  if (sp.tag == TS_IV_LIST) nsp = sp.u.l->n;
  else if (sp.tag != TS_IV_NONE) nsp = dim_given ? (int64_t)nd : a->ndim;
  if (a->dtype == TS_DT_UINT8) return ts_rt_fail(ctx, "torch.gradient does not support uint8 input.");
  if (nsp >= 0 && !dim_given && nsp != 1 && nsp != a->ndim)
    return ts_rt_fail(ctx, "torch.gradient expected spacing to be unspecified, a scalar or a list of length %d but got "
                      "a list of length %lld", (int)a->ndim, (long long)nsp);
  if (nsp >= 0 && dim_given && nsp != (int64_t)nd)
    return ts_rt_fail(ctx, "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                      "arguments to have the same length, but got a spacing argument of length %lld and a dim "
                      "argument of length %u.", (long long)nsp, (unsigned)nd);
  if (edge != 1 && edge != 2) return ts_rt_fail(ctx, "torch.gradient only supports edge_order=1 and edge_order=2.");
  bool seen[TS_RT_MAX_DIMS] = {false};
  for (uint32_t i = 0; i < nd; i++) {
    if (!ts_rt_wrap_dim(ctx, dims[i], a->ndim, &dims[i])) return false;
    if (seen[dims[i]])
      return ts_rt_fail(ctx, "dim %lld appears multiple times in the list of dims", (long long)dims[i]);
    seen[dims[i]] = true;
  }
  for (uint32_t i = 0; i < nd; i++)
    if (a->ndim == 0 || a->sizes[dims[i]] < edge + 1)
      return ts_rt_fail(ctx, "torch.gradient expected each dimension size to be at least edge_order+1");
  /* integers divide into the default dtype */
  ts_rt_tensor *f = ts_rt_dtype_is_integral((ts_dtype)a->dtype, true) ? ts_rt_tensor_to_dtype(ctx, a, TS_DT_FLOAT32)
                                                                        : ts_rt_tensor_contiguous(ctx, a);
  if (!f) return false;
  ts_rt_list *l = ts_rt_list_new(ctx, ts_type_leaf(TS_TY_TENSOR), nd);
  bool ok = l != NULL;
  for (uint32_t i = 0; ok && i < nd; i++) {
    ts_iv s = sp.tag == TS_IV_LIST ? sp.u.l->items[sp.u.l->n == 1 ? 0 : i] : sp;
    ts_rt_tensor *g = NULL;
    if (s.tag == TS_IV_TENSOR) {
      const ts_rt_tensor *x = s.u.t;
      if (x->ndim != 1) {
        ok = ts_rt_fail(ctx, "torch.gradient expected each element of spacing to have one dimension, but got an "
                        "element with %d dimensions!", (int)x->ndim);
        break;
      }
      /* coordinates of another length fail in the formulas' broadcasting,
       * as in ATen */
      g = s2_grad_coords(ctx, f, dims[i], x, edge);
    } else {
      ts_rt_tensor *dx = s.tag == TS_IV_NONE ? ts_rt_tensor_scalar(ctx, TS_DT_FLOAT64, 1.0, 1)
                         : s.tag == TS_IV_DOUBLE ? ts_rt_tensor_scalar(ctx, TS_DT_FLOAT64, s.u.d, 0)
                         : s.tag == TS_IV_INT ? ts_rt_tensor_scalar(ctx, TS_DT_INT64, 0, s.u.i)
                                              : NULL;
      if (!dx) {
        if (!ctx->failed) ts_rt_fail(ctx, "torch.gradient: spacing must be numbers or tensors");
        ok = false;
        break;
      }
      g = s2_grad_uniform(ctx, f, dims[i], dx, edge);
      ts_rt_tensor_release(dx);
    }
    ok = g && ts_rt_list_append(ctx, l, ts_iv_tensor(g));
  }
  ts_rt_tensor_release(f);
  if (!ok) {
    if (l) ts_iv_release((ts_iv){.u.l = l, .tag = TS_IV_LIST});
    return false;
  }
  call->out[0] = (ts_iv){.u.l = l, .tag = TS_IV_LIST};
  return true;
}

/* gradient.array(self, dim, edge_order): no spacing argument */
static bool s2_k_gradient_array(ts_rt_ctx *ctx, ts_rt_call *call) {
  if (!ts_rt_arg_check(ctx, call, 2)) return false;
  ts_iv in[4] = {call->in[0], ts_iv_none(), call->in[1], call->in[2]};
  ts_rt_call sub = {in, 4, call->out, call->nout, call->node};
  return s2_k_gradient(ctx, &sub);
}

/* ---------------------------------------------------------- comparisons */

/* equal: same sizes and the same values (NaN unequal); dtypes may differ. */
static bool s2_k_equal(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL, *b = NULL;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_tensor(ctx, call, 1, &b)) return false;
  bool eq = a->ndim == b->ndim;
  for (int32_t d = 0; eq && d < a->ndim; d++) eq = a->sizes[d] == b->sizes[d];
  if (eq) {
    ts_rt_tensor *ca = ts_rt_tensor_contiguous(ctx, a);
    ts_rt_tensor *cb = ca ? ts_rt_tensor_contiguous(ctx, b) : NULL;
    if (!cb) {
      if (ca) ts_rt_tensor_release(ca);
      return false;
    }
    int64_t n = ts_rt_tensor_numel(a);
    ts_dtype da = (ts_dtype)a->dtype, db = (ts_dtype)b->dtype;
    size_t ea = ts_dtype_size(da), eb = ts_dtype_size(db);
    bool fl = ts_rt_dtype_is_float(da) || ts_rt_dtype_is_float(db);
    const char *pa = ts_rt_tensor_data(ca), *pb = ts_rt_tensor_data(cb);
    for (int64_t i = 0; eq && i < n; i++)
      eq = fl ? ts_rt_load_f64(pa + (size_t)i * ea, da) == ts_rt_load_f64(pb + (size_t)i * eb, db)
              : ts_rt_load_i64(pa + (size_t)i * ea, da) == ts_rt_load_i64(pb + (size_t)i * eb, db);
    ts_rt_tensor_release(ca);
    ts_rt_tensor_release(cb);
  }
  call->out[0] = ts_iv_bool(eq);
  return true;
}

/* isclose: |a - b| <= atol + |rtol * b| (finite), or a == b, or both NaN
 * with equal_nan; computed in the inputs' dtype (float32 for float32,
 * half and bfloat16, and for integers as ATen casts other to the default
 * dtype), broadcast. */
static ts_rt_tensor *s2_isclose(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *b, double rtol, double atol,
                                bool equal_nan) {
  if (a->dtype != b->dtype) {
    ts_rt_fail(c, "%s did not match %s", ts_rt_dtype_name((ts_dtype)a->dtype), ts_rt_dtype_name((ts_dtype)b->dtype));
    return NULL;
  }
  if (rtol < 0) {
    ts_rt_fail(c, "rtol must be greater than or equal to zero, but got %.17g", rtol);
    return NULL;
  }
  if (atol < 0) {
    ts_rt_fail(c, "atol must be greater than or equal to zero, but got %.17g", atol);
    return NULL;
  }
  int64_t sz[TS_RT_MAX_DIMS];
  int32_t nd = 0;
  if (!ts_rt_broadcast_shapes(c, a->ndim, a->sizes, b->ndim, b->sizes, &nd, sz)) return NULL;
  ts_rt_tensor *ea = s2_expand_copy(c, a, nd, sz);
  ts_rt_tensor *eb = ea ? s2_expand_copy(c, b, nd, sz) : NULL;
  ts_rt_tensor *r = eb ? ts_rt_tensor_new(c, TS_DT_BOOL, nd, sz, false) : NULL;
  if (r) {
    ts_dtype dt = (ts_dtype)a->dtype;
    size_t es = ts_dtype_size(dt);
    int64_t n = ts_rt_tensor_numel(r);
    const char *pa = ts_rt_tensor_data(ea), *pb = ts_rt_tensor_data(eb);
    bool *q = ts_rt_tensor_data(r);
    bool isf = ts_rt_dtype_is_float(dt);
    for (int64_t i = 0; i < n; i++) {
      const char *xa = pa + (size_t)i * es, *xb = pb + (size_t)i * es;
      bool close;
      if (dt == TS_DT_FLOAT64) {
        double x = ts_rt_load_f64(xa, dt), y = ts_rt_load_f64(xb, dt);
        double act = fabs(x - y), allowed = atol + fabs(rtol * y);
        close = x == y || (equal_nan && isnan(x) && isnan(y)) || (isfinite(act) && act <= allowed);
      } else if (isf) {
        float x = (float)ts_rt_load_f64(xa, dt), y = (float)ts_rt_load_f64(xb, dt);
        float act = fabsf(x - y), allowed = (float)atol + fabsf((float)rtol * y);
        close = x == y || (equal_nan && isnan(x) && isnan(y)) || (isfinite(act) && act <= allowed);
      } else {
        int64_t x = ts_rt_load_i64(xa, dt), y = ts_rt_load_i64(xb, dt);
        /* the allowed error is float32 (other cast to the default dtype) */
        int64_t d = (int64_t)((uint64_t)x - (uint64_t)y);
        float act = fabsf((float)d), allowed = (float)atol + fabsf((float)rtol * (float)y);
        close = x == y || act <= allowed;
      }
      q[i] = close;
    }
  }
  if (ea) ts_rt_tensor_release(ea);
  if (eb) ts_rt_tensor_release(eb);
  return r;
}

static bool s2_close_args(ts_rt_ctx *ctx, ts_rt_call *call, ts_rt_tensor **a, ts_rt_tensor **b, double *rtol,
                          double *atol, bool *nan) {
  return ts_rt_arg_tensor(ctx, call, 0, a) && ts_rt_arg_tensor(ctx, call, 1, b) &&
         ts_rt_arg_double(ctx, call, 2, rtol) && ts_rt_arg_double(ctx, call, 3, atol) &&
         ts_rt_arg_bool(ctx, call, 4, nan);
}

static bool s2_k_isclose(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL, *b = NULL;
  double rtol = 0, atol = 0;
  bool nan = false;
  if (!s2_close_args(ctx, call, &a, &b, &rtol, &atol, &nan)) return false;
  return s2_put(call, s2_isclose(ctx, a, b, rtol, atol, nan));
}

static bool s2_k_allclose(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL, *b = NULL;
  double rtol = 0, atol = 0;
  bool nan = false;
  if (!s2_close_args(ctx, call, &a, &b, &rtol, &atol, &nan)) return false;
  ts_rt_tensor *r = s2_isclose(ctx, a, b, rtol, atol, nan);
  if (!r) return false;
  int64_t n = ts_rt_tensor_numel(r);
  const bool *q = ts_rt_tensor_data(r);
  bool all = true;
  for (int64_t i = 0; all && i < n; i++) all = q[i];
  ts_rt_tensor_release(r);
  call->out[0] = ts_iv_bool(all);
  return true;
}

static int s2_cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b ? 1 : 0;
}

/* isin: whether each element equals some test element (NaN never does),
 * compared in the promoted dtype's domain; `invert` negates. */
static ts_rt_tensor *s2_isin(ts_rt_ctx *c, const ts_rt_tensor *e, const ts_rt_tensor *t, bool invert) {
  ts_dtype de = (ts_dtype)e->dtype, dt = (ts_dtype)t->dtype;
  if (de == TS_DT_BOOL || dt == TS_DT_BOOL) {
    ts_rt_fail(c, "Unsupported input type encountered for isin(): Bool");
    return NULL;
  }
  ts_dtype pd = ts_type_promote(de, dt);
  ts_rt_tensor *ce = ts_rt_tensor_to_dtype(c, e, pd);
  ts_rt_tensor *ct = ce ? ts_rt_tensor_to_dtype(c, t, pd) : NULL;
  ts_rt_tensor *r = ct ? ts_rt_tensor_new(c, TS_DT_BOOL, e->ndim, e->sizes, false) : NULL;
  int64_t ne = ts_rt_tensor_numel(e), nt = ts_rt_tensor_numel(t);
  double *tv = r ? ts_rt_malloc(sizeof(double) * (size_t)(nt ? nt : 1)) : NULL;
  if (r && !tv) {
    ts_rt_oom(c);
    ts_rt_tensor_release(r);
    r = NULL;
  }
  if (r) {
    size_t es = ts_dtype_size(pd);
    const char *pe = ts_rt_tensor_data(ce), *pt = ts_rt_tensor_data(ct);
    bool isf = ts_rt_dtype_is_float(pd);
    bool *q = ts_rt_tensor_data(r);
    if (isf) {
      int64_t m = 0;
      for (int64_t i = 0; i < nt; i++) {
        double v = ts_rt_load_f64(pt + (size_t)i * es, pd);
        if (!isnan(v)) tv[m++] = v;
      }
      qsort(tv, (size_t)m, sizeof(double), s2_cmp_double);
      for (int64_t i = 0; i < ne; i++) {
        double v = ts_rt_load_f64(pe + (size_t)i * es, pd);
        bool found = !isnan(v) && m > 0 && bsearch(&v, tv, (size_t)m, sizeof(double), s2_cmp_double) != NULL;
        q[i] = found != invert;
      }
    } else {
      /* integers: exact comparison, quadratic only in the test set size */
      for (int64_t i = 0; i < ne; i++) {
        int64_t v = ts_rt_load_i64(pe + (size_t)i * es, pd);
        bool found = false;
        for (int64_t k = 0; !found && k < nt; k++) found = ts_rt_load_i64(pt + (size_t)k * es, pd) == v;
        q[i] = found != invert;
      }
    }
  }
  ts_rt_free(tv);
  if (ce) ts_rt_tensor_release(ce);
  if (ct) ts_rt_tensor_release(ct);
  return r;
}

/* A 0-d tensor of a number argument (Scalar), as PyTorch wraps one. */
static ts_rt_tensor *s2_scalar_arg(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i) {
  if (!ts_rt_arg_check(c, call, i)) return NULL;
  ts_iv v = call->in[i];
  if (v.tag == TS_IV_DOUBLE) return ts_rt_tensor_scalar(c, TS_DT_FLOAT64, v.u.d, 0);
  if (v.tag == TS_IV_INT) return ts_rt_tensor_scalar(c, TS_DT_INT64, 0, v.u.i);
  if (v.tag == TS_IV_BOOL) return ts_rt_tensor_scalar(c, TS_DT_BOOL, v.u.b, v.u.b);
  ts_rt_arg_bad(c, call, i, "Scalar");
  return NULL;
}

static bool s2_k_isin(ts_rt_ctx *ctx, ts_rt_call *call) {
  bool invert = false, uniq = false;
  if (!ts_rt_arg_bool(ctx, call, 2, &uniq) || !ts_rt_arg_bool(ctx, call, 3, &invert)) return false;
  ts_rt_tensor *e = NULL, *t = NULL, *own = NULL;
  bool ok;
  if (!ts_rt_arg_check(ctx, call, 1)) return false;
  if (call->in[0].tag == TS_IV_TENSOR && call->in[1].tag == TS_IV_TENSOR) {
    ok = ts_rt_arg_tensor(ctx, call, 0, &e) && ts_rt_arg_tensor(ctx, call, 1, &t);
  } else if (call->in[0].tag == TS_IV_TENSOR) {
    ok = ts_rt_arg_tensor(ctx, call, 0, &e) && (t = own = s2_scalar_arg(ctx, call, 1)) != NULL;
  } else {
    ok = ts_rt_arg_tensor(ctx, call, 1, &t) && (e = own = s2_scalar_arg(ctx, call, 0)) != NULL;
  }
  ts_rt_tensor *r = ok ? s2_isin(ctx, e, t, invert) : NULL;
  if (own) ts_rt_tensor_release(own);
  return s2_put(call, r);
}

/* -------------------------------------------------------------- resize */

static bool s2_resize(ts_rt_ctx *ctx, ts_rt_call *call, ts_rt_tensor *a, int32_t n, const int64_t *s) {
  if (!ts_rt_arg_check(ctx, call, 2)) return false;
  ts_iv mf = call->in[2];
  /* None, torch.contiguous_format (0) and torch.preserve_format (3) keep
   * the contiguous layout resize_ gives */
  if (mf.tag == TS_IV_INT && mf.u.i != 0 && mf.u.i != 3)
    return ts_rt_fail(ctx, "tsaot: resize_ with memory_format %lld is not supported", (long long)mf.u.i);
  for (int32_t i = 0; i < n; i++)
    if (s[i] < 0) return ts_rt_fail(ctx, "numel: integer multiplication overflow");
  /* a storage that has to grow keeps its bytes in PyTorch: copy them over
   * when ts_rt_tensor_resize moves the tensor to a new one */
  ts_rt_storage *old = a->storage;
  size_t off = (size_t)a->offset * ts_dtype_size((ts_dtype)a->dtype);
  ts_rt_storage_retain(old);
  if (!ts_rt_tensor_resize(ctx, a, n, s, NULL)) {
    ts_rt_storage_release(old);
    return false;
  }
  if (a->storage != old && off < old->nbytes) {
    size_t have = old->nbytes - off, dst = (size_t)a->offset * ts_dtype_size((ts_dtype)a->dtype);
    size_t room = a->storage->nbytes > dst ? a->storage->nbytes - dst : 0;
    memcpy((char *)a->storage->data + dst, (const char *)old->data + off, have < room ? have : room);
  }
  ts_rt_storage_release(old);
  ts_rt_tensor_retain(a);
  call->out[0] = ts_iv_tensor(a);
  return true;
}

static bool s2_k_resize_(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  int64_t s[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_ints(ctx, call, 1, s, TS_RT_MAX_DIMS, &n, 0)) return false;
  return s2_resize(ctx, call, a, (int32_t)n, s);
}

static bool s2_k_resize_as_(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL, *t = NULL;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_tensor(ctx, call, 1, &t)) return false;
  int64_t s[TS_RT_MAX_DIMS];
  memcpy(s, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
  return s2_resize(ctx, call, a, t->ndim, s);
}

const ts_rt_kernel_def ts_rt_kernels_shape2[] = {
    {"aten::allclose", s2_k_allclose},
    {"aten::argwhere", s2_k_argwhere},
    {"aten::as_strided_scatter", s2_k_as_strided_scatter},
    {"aten::block_diag", s2_k_block_diag},
    {"aten::cartesian_prod", s2_k_cartesian_prod},
    {"aten::column_stack", s2_k_column_stack},
    {"aten::combinations", s2_k_combinations},
    {"aten::count_nonzero", s2_k_count_nonzero},
    {"aten::count_nonzero.dim_IntList", s2_k_count_nonzero_list},
    {"aten::cumulative_trapezoid.dx", s2_k_cumtrapz_dx},
    {"aten::cumulative_trapezoid.x", s2_k_cumtrapz_x},
    {"aten::diagonal_scatter", s2_k_diagonal_scatter},
    {"aten::diff", s2_k_diff},
    {"aten::dstack", s2_k_dstack},
    {"aten::equal", s2_k_equal},
    {"aten::fliplr", s2_k_fliplr},
    {"aten::gradient.array", s2_k_gradient_array},
    {"aten::gradient.scalararray", s2_k_gradient},
    {"aten::gradient.scalarint", s2_k_gradient},
    {"aten::gradient.scalarrayarray", s2_k_gradient},
    {"aten::gradient.scalarrayint", s2_k_gradient},
    {"aten::gradient.tensorarray", s2_k_gradient},
    {"aten::gradient.tensorarrayint", s2_k_gradient},
    {"aten::flipud", s2_k_flipud},
    {"aten::hstack", s2_k_hstack},
    {"aten::isclose", s2_k_isclose},
    {"aten::isin.Scalar_Tensor", s2_k_isin},
    {"aten::isin.Tensor_Scalar", s2_k_isin},
    {"aten::isin.Tensor_Tensor", s2_k_isin},
    {"aten::kron", s2_k_kron},
    {"aten::narrow_copy", s2_k_narrow_copy},
    {"aten::nonzero_numpy", s2_k_nonzero_numpy},
    {"aten::put", s2_k_put},
    {"aten::resize_", s2_k_resize_},
    {"aten::resize_as_", s2_k_resize_as_},
    {"aten::rot90", s2_k_rot90},
    {"aten::select_scatter", s2_k_select_scatter},
    {"aten::slice_scatter", s2_k_slice_scatter},
    {"aten::sum_to_size", s2_k_sum_to_size},
    {"aten::trapezoid.dx", s2_k_trapezoid_dx},
    {"aten::trapezoid.x", s2_k_trapezoid_x},
    {"aten::trapz.dx", s2_k_trapezoid_dx},
    {"aten::trapz.x", s2_k_trapezoid_x},
    {"aten::vstack", s2_k_vstack},
    {NULL, NULL},
};
