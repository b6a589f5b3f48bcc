/* runtime/kernels/layout.c: ops that lay elements out anew, as PyTorch 1.13
 * computes them on the CPU: meshgrid, tril/triu, diag, diagonal (a view),
 * diag_embed, diagflat, tile, repeat_interleave, one_hot, cross and
 * linalg_cross. Where ATen composes an op from others (tile is repeat,
 * repeat_interleave an index_select), the kernel calls theirs. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "tensor_ops.h"

/* ------------------------------------------------------------- helpers */

/* A new list of tensors that takes over ts[0..n) (released on failure). */
static bool ly_put_list(ts_rt_ctx *c, ts_rt_call *call, ts_rt_tensor **ts, uint32_t n) {
  ts_rt_list *l = ts_rt_list_new(c, ts_type_leaf(TS_TY_TENSOR), n);
  uint32_t i = 0;
  if (l) {
    for (; i < n; i++)
      if (!ts_rt_list_append(c, l, ts_iv_tensor(ts[i]))) {
        i++;
        break;
      }
  }
  bool ok = l && i == n && !c->failed;
  for (; i < n; i++) ts_rt_tensor_release(ts[i]);
  if (!ok) {
    if (l) ts_iv_release((ts_iv){.u.l = l, .tag = TS_IV_LIST});
    return false;
  }
  call->out[0] = (ts_iv){.u.l = l, .tag = TS_IV_LIST};
  return true;
}

/* The tensors of a Tensor[] argument (borrowed), at most `max`. */
static bool ly_arg_tensors(ts_rt_ctx *c, ts_rt_call *call, uint32_t i, ts_rt_tensor **out, uint32_t max,
                           uint32_t *n) {
  ts_rt_list *l = NULL;
  if (!ts_rt_arg_list(c, call, i, &l)) return false;
  if (l->n > max) return ts_rt_fail(c, "argument %u: list of %u tensors, at most %u allowed", (unsigned)i,
                                    (unsigned)l->n, (unsigned)max);
  for (uint32_t k = 0; k < l->n; k++) {
    if (l->items[k].tag != TS_IV_TENSOR) return ts_rt_fail(c, "argument %u: expected List[Tensor]", (unsigned)i);
    out[k] = l->items[k].u.t;
  }
  *n = l->n;
  return true;
}

/* Calls the kernel of schema `name` on in[0..nin) (borrowed); its one
 * output (a new reference) into *out. */
static bool ly_call(ts_rt_ctx *c, const char *name, ts_iv *in, uint32_t nin, ts_iv *out) {
  ts_rt_kernel_fn fn = ts_rt_kernel_by_name(name);
  if (!fn) return ts_rt_fail(c, "no kernel for %s", name);
  ts_rt_call sub = {in, nin, out, 1, NULL};
  return fn(c, &sub);
}

static bool ly_put(ts_rt_call *call, ts_rt_tensor *t) {
  if (!t) return false;
  call->out[0] = ts_iv_tensor(t);
  return true;
}

/* Visits the matrices of the last two dims of `a` (any strides): fn(arg,
 * element offset of the matrix's (0, 0), k) for k over the batch. */
static void ly_each_matrix(const ts_rt_tensor *a, void (*fn)(void *arg, int64_t off, int64_t k), void *arg) {
  int32_t nb = a->ndim - 2;
  int64_t batch = 1;
  for (int32_t d = 0; d < nb; d++) batch *= a->sizes[d];
  int64_t idx[TS_RT_MAX_DIMS] = {0}, off = a->offset;
  for (int64_t k = 0; k < batch; k++) {
    fn(arg, off, k);
    for (int32_t d = nb - 1; d >= 0; d--) {
      if (++idx[d] < a->sizes[d]) {
        off += a->strides[d];
        break;
      }
      off -= a->strides[d] * (a->sizes[d] - 1);
      idx[d] = 0;
    }
  }
}

/* ------------------------------------------------------------ meshgrid */

/* meshgrid(tensors, indexing): grid i is tensor i viewed along dim i and
 * expanded to every tensor's length (views of the inputs); "xy" swaps the
 * first two tensors before and the first two grids after. */
static bool ly_meshgrid(ts_rt_ctx *c, ts_rt_call *call, const char *indexing, size_t len) {
  ts_rt_tensor *ts[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  if (!ly_arg_tensors(c, call, 0, ts, TS_RT_MAX_DIMS, &n)) return false;
  if (n == 0) return ts_rt_fail(c, "meshgrid expects a non-empty TensorList");
  for (uint32_t i = 0; i + 1 < n; i++)
    if (ts[i]->dtype != ts[i + 1]->dtype) return ts_rt_fail(c, "meshgrid expects all tensors to have the same dtype");
  bool xy = len == 2 && memcmp(indexing, "xy", 2) == 0;
  if (!xy && !(len == 2 && memcmp(indexing, "ij", 2) == 0))
    return ts_rt_fail(c, "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: %.*s", (int)len,
                      indexing);
  bool swap = xy && n >= 2;
  if (swap) {
    ts_rt_tensor *t = ts[0];
    ts[0] = ts[1];
    ts[1] = t;
  }
  int64_t shape[TS_RT_MAX_DIMS];
  for (uint32_t i = 0; i < n; i++) {
    if (ts[i]->ndim > 1) {
      ts_buf b = {0};
      ts_iv_str(&b, ts_iv_tensor(ts[i]));
      ts_rt_fail(c, "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: %s", b.data ? b.data : "");
      ts_buf_free(&b);
      return false;
    }
    shape[i] = ts_rt_tensor_numel(ts[i]);
  }
  ts_rt_tensor *grids[TS_RT_MAX_DIMS];
  for (uint32_t i = 0; i < n; i++) {
    /* the one element stride of a 0-d or 1-d tensor, along dim i */
    int64_t strides[TS_RT_MAX_DIMS] = {0};
    strides[i] = ts[i]->ndim == 1 ? ts[i]->strides[0] : 1;
    grids[i] = ts_rt_tensor_view(c, ts[i], ts[i]->offset, (int32_t)n, shape, strides);
    if (!grids[i]) {
      for (uint32_t k = 0; k < i; k++) ts_rt_tensor_release(grids[k]);
      return false;
    }
  }
  if (swap) {
    ts_rt_tensor *t = grids[0];
    grids[0] = grids[1];
    grids[1] = t;
  }
  return ly_put_list(c, call, grids, n);
}

/* meshgrid(tensors): "ij" (PyTorch warns that the argument will be needed) */
static bool ly_k_meshgrid(ts_rt_ctx *ctx, ts_rt_call *call) { return ly_meshgrid(ctx, call, "ij", 2); }

static bool ly_k_meshgrid_indexing(ts_rt_ctx *ctx, ts_rt_call *call) {
  const ts_rt_str *s = NULL;
  if (!ts_rt_arg_str(ctx, call, 1, &s)) return false;
  return ly_meshgrid(ctx, call, s->data, s->len);
}

/* ----------------------------------------------------------- tril, triu */

typedef struct ly_tri_job {
  const ts_rt_tensor *a;
  ts_rt_tensor *r;
  int64_t k;
  bool upper;
} ly_tri_job;

static void ly_tri_matrix(void *arg, int64_t off, int64_t b) {
  const ly_tri_job *t = arg;
  const ts_rt_tensor *a = t->a;
  int32_t n = a->ndim;
  int64_t rows = a->sizes[n - 2], cols = a->sizes[n - 1], rs = a->strides[n - 2], cs = a->strides[n - 1];
  size_t esz = ts_dtype_size((ts_dtype)a->dtype);
  const char *src = (const char *)a->storage->data;
  char *dst = (char *)ts_rt_tensor_data(t->r) + (size_t)(b * rows * cols) * esz;
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++) {
      bool keep = t->upper ? j - i >= t->k : j - i <= t->k;
      char *o = dst + (size_t)(i * cols + j) * esz;
      if (keep) memcpy(o, src + (size_t)(off + i * rs + j * cs) * esz, esz);
      else memset(o, 0, esz);
    }
}

/* tril / triu (self, diagonal): the matrices of the last two dims with
 * the elements above (below) the k-th diagonal zeroed. */
static bool ly_tri(ts_rt_ctx *c, ts_rt_call *call, bool upper) {
  ts_rt_tensor *a = NULL;
  int64_t k = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_int(c, call, 1, &k)) return false;
  if (a->ndim < 2)
    return ts_rt_fail(c, "Dimension out of range (expected to be in range of [-1, 0], but got -2)");
  ts_rt_tensor *r = ts_rt_tensor_new(c, (ts_dtype)a->dtype, a->ndim, a->sizes, false);
  if (!r) return false;
  ly_tri_job t = {a, r, k, upper};
  if (ts_rt_tensor_numel(r) > 0) ly_each_matrix(a, ly_tri_matrix, &t);
  return ly_put(call, r);
}
static bool ly_k_tril(ts_rt_ctx *ctx, ts_rt_call *call) { return ly_tri(ctx, call, false); }
static bool ly_k_triu(ts_rt_ctx *ctx, ts_rt_call *call) { return ly_tri(ctx, call, true); }

/* ---------------------------------------------- diagonal, diag, diag_embed */

/* diagonal(self, offset, dim1, dim2): a view; dim1 and dim2 removed and
 * the diagonal appended as the last dim. */
static ts_rt_tensor *ly_diagonal(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t offset, int64_t dim1_, int64_t dim2_) {
  int64_t d1 = 0, d2 = 0;
  if (!ts_rt_wrap_dim(c, dim1_, a->ndim, &d1) || !ts_rt_wrap_dim(c, dim2_, a->ndim, &d2)) return NULL;
  if (d1 == d2) {
    ts_rt_fail(c, "diagonal dimensions cannot be identical %lld, %lld", (long long)dim1_, (long long)dim2_);
    return NULL;
  }
  if (a->ndim < 2) {
    /* a 0-d or 1-d tensor cannot have two different dims */
    ts_rt_fail(c, "diagonal dimensions cannot be identical %lld, %lld", (long long)dim1_, (long long)dim2_);
    return NULL;
  }
  int64_t off = a->offset, len;
  if (offset >= 0) {
    len = a->sizes[d1] < a->sizes[d2] - offset ? a->sizes[d1] : a->sizes[d2] - offset;
  } else {
    len = a->sizes[d1] + offset < a->sizes[d2] ? a->sizes[d1] + offset : a->sizes[d2];
  }
  if (len < 0) len = 0;
  if (len > 0) off += offset >= 0 ? offset * a->strides[d2] : -offset * a->strides[d1];
  int64_t sizes[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS];
  int32_t n = 0;
  for (int32_t d = 0; d < a->ndim; d++) {
    if (d == d1 || d == d2) continue;
    sizes[n] = a->sizes[d];
    strides[n++] = a->strides[d];
  }
  sizes[n] = len;
  strides[n++] = a->strides[d1] + a->strides[d2];
  return ts_rt_tensor_view(c, a, off, n, sizes, strides);
}

static bool ly_k_diagonal(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  int64_t off = 0, d1 = 0, d2 = 1;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_int(ctx, call, 1, &off) ||
      !ts_rt_arg_int(ctx, call, 2, &d1) || !ts_rt_arg_int(ctx, call, 3, &d2))
    return false;
  return ly_put(call, ly_diagonal(ctx, a, off, d1, d2));
}

/* diag_embed(self, offset, dim1, dim2): zeros of one more dim, the last
 * dim of self written along the offset diagonal of (dim1, dim2). */
static ts_rt_tensor *ly_diag_embed(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t offset, int64_t dim1_, int64_t dim2_) {
  int32_t nd = a->ndim + 1;
  int64_t d1 = 0, d2 = 0;
  if (nd > TS_RT_MAX_DIMS) {
    ts_rt_fail(c, "diag_embed: result has more than %d dimensions", TS_RT_MAX_DIMS);
    return NULL;
  }
  if (!ts_rt_wrap_dim(c, dim1_, nd, &d1) || !ts_rt_wrap_dim(c, dim2_, nd, &d2)) return NULL;
  if (d1 == d2) {
    ts_rt_fail(c, "diagonal dimensions cannot be identical %lld, %lld", (long long)dim1_, (long long)dim2_);
    return NULL;
  }
  if (a->ndim == 0) {
    ts_rt_fail(c, "Dimension specified as -1 but tensor has no dimensions");
    return NULL;
  }
  int64_t len = (offset < 0 ? -offset : offset) + a->sizes[a->ndim - 1];
  int64_t sizes[TS_RT_MAX_DIMS];
  int32_t lo = (int32_t)(d1 < d2 ? d1 : d2), hi = (int32_t)(d1 < d2 ? d2 : d1), j = 0;
  for (int32_t d = 0; d < nd; d++) sizes[d] = d == lo || d == hi ? len : a->sizes[j++];
  ts_rt_tensor *r = ts_rt_tensor_new(c, (ts_dtype)a->dtype, nd, sizes, true);
  if (!r) return NULL;
  ts_rt_tensor *dg = ly_diagonal(c, r, offset, d1, d2);
  bool ok = dg && ts_rt_tensor_copy_(c, dg, a);
  if (dg) ts_rt_tensor_release(dg);
  if (!ok) {
    ts_rt_tensor_release(r);
    return NULL;
  }
  return r;
}

static bool ly_k_diag_embed(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  int64_t off = 0, d1 = -2, d2 = -1;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_int(ctx, call, 1, &off) ||
      !ts_rt_arg_int(ctx, call, 2, &d1) || !ts_rt_arg_int(ctx, call, 3, &d2))
    return false;
  return ly_put(call, ly_diag_embed(ctx, a, off, d1, d2));
}

/* diag(self, diagonal): a vector becomes a square matrix with it on the
 * diagonal; a matrix gives a copy of its diagonal. */
static ts_rt_tensor *ly_diag(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t k) {
  if (a->dtype == TS_DT_FLOAT16 && (a->ndim == 1 || a->ndim == 2)) {
    ts_rt_fail(c, "\"diag\" not implemented for 'Half'");
    return NULL;
  }
  if (a->ndim == 1) return ly_diag_embed(c, a, k, 0, 1);
  if (a->ndim == 2) {
    ts_rt_tensor *v = ly_diagonal(c, a, k, 0, 1);
    if (!v) return NULL;
    ts_rt_tensor *r = ts_rt_clone(c, v);
    ts_rt_tensor_release(v);
    return r;
  }
  ts_rt_fail(c, "matrix or a vector expected");
  return NULL;
}

static bool ly_k_diag(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  int64_t k = 0;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_int(ctx, call, 1, &k)) return false;
  return ly_put(call, ly_diag(ctx, a, k));
}

/* diagflat(self, offset): diag of self flattened. */
static bool ly_k_diagflat(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  int64_t k = 0;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_int(ctx, call, 1, &k)) return false;
  int64_t m1 = -1;
  ts_rt_tensor *flat = ts_rt_reshape(ctx, a, 1, &m1);
  if (!flat) return false;
  ts_rt_tensor *r = ly_diag(ctx, flat, k);
  ts_rt_tensor_release(flat);
  return ly_put(call, r);
}

/* ----------------------------------------------------------------- tile */

/* tile(self, dims): repeat with dims padded by leading ones to self's rank. */
static bool ly_k_tile(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  int64_t dims[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_ints(ctx, call, 1, dims, TS_RT_MAX_DIMS, &n, 0)) return false;
  ts_rt_list *l = ts_rt_list_new(ctx, ts_type_leaf(TS_TY_INT), (uint32_t)a->ndim > n ? (uint32_t)a->ndim : n);
  if (!l) return false;
  bool ok = true;
  for (int32_t k = (int32_t)n; k < a->ndim && ok; k++) ok = ts_rt_list_append(ctx, l, ts_iv_int(1));
  for (uint32_t k = 0; k < n && ok; k++) ok = ts_rt_list_append(ctx, l, ts_iv_int(dims[k]));
  ts_iv in[2] = {ts_iv_tensor(a), {.u.l = l, .tag = TS_IV_LIST}};
  ok = ok && ly_call(ctx, "aten::repeat", in, 2, call->out);
  ts_iv_release(in[1]);
  return ok;
}

/* ------------------------------------------------------ repeat_interleave */

/* repeat_interleave(repeats, output_size): index i repeats[i] times (the
 * repeats' dtype, int64 or int32). */
static ts_rt_tensor *ly_repeat_index(ts_rt_ctx *c, const ts_rt_tensor *rep, bool has_size, int64_t size) {
  if (rep->ndim != 1) {
    ts_rt_fail(c, "repeat_interleave only accept 1D vector as repeat");
    return NULL;
  }
  ts_dtype dt = (ts_dtype)rep->dtype;
  if (dt != TS_DT_INT64 && dt != TS_DT_INT32) {
    ts_rt_fail(c, "\"repeat_interleave_cpu\" not implemented for '%s'", ts_rt_dtype_name(dt));
    return NULL;
  }
  int64_t n = rep->sizes[0], total = 0;
  if (n == 0) return ts_rt_tensor_new(c, dt, 1, &n, false);
  const char *rp = ts_rt_tensor_data(rep);
  size_t esz = ts_dtype_size(dt);
  bool neg = false;
  for (int64_t i = 0; i < n; i++) {
    int64_t v = ts_rt_load_i64(rp + (size_t)(i * rep->strides[0]) * esz, dt);
    neg = neg || v < 0;
    total = (int64_t)((uint64_t)total + (uint64_t)v);
  }
  if (!has_size && neg) {
    ts_rt_fail(c, "repeats can not be negative");
    return NULL;
  }
  if (has_size && size != total) {
    ts_rt_fail(c, "allocated size does not match required size");
    return NULL;
  }
  if (neg) {
    ts_rt_fail(c, "repeats can not be negative");
    return NULL;
  }
  ts_rt_tensor *r = ts_rt_tensor_new(c, dt, 1, &total, false);
  if (!r) return NULL;
  char *o = ts_rt_tensor_data(r);
  int64_t j = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t v = ts_rt_load_i64(rp + (size_t)(i * rep->strides[0]) * esz, dt);
    for (int64_t k = 0; k < v; k++) ts_rt_store_i64(o + (size_t)(j++) * esz, dt, i);
  }
  return r;
}

static bool ly_arg_output_size(ts_rt_ctx *c, ts_rt_call *call, uint32_t i, bool *has, int64_t *size) {
  return ts_rt_arg_opt_int(c, call, i, size, has);
}

static bool ly_k_repeat_interleave(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *rep = NULL;
  bool has = false;
  int64_t size = 0;
  if (!ts_rt_arg_tensor(ctx, call, 0, &rep) || !ly_arg_output_size(ctx, call, 1, &has, &size)) return false;
  return ly_put(call, ly_repeat_index(ctx, rep, has, size));
}

/* repeat_interleave(self, repeats, dim, output_size): self (flattened when
 * dim is None) index_select'ed along dim by the repeated indices; one
 * repeat count (0-d or one element) serves every index. */
static bool ly_repeat_interleave(ts_rt_ctx *c, ts_rt_call *call, const ts_rt_tensor *rep) {
  ts_rt_tensor *a = NULL;
  int64_t dim = 0, size = 0;
  bool has_dim = false, has_size = false;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_opt_int(c, call, 2, &dim, &has_dim) ||
      !ly_arg_output_size(c, call, 3, &has_size, &size))
    return false;
  ts_rt_tensor *in = NULL, *reps = NULL, *idx = NULL;
  bool ok = false;
  if (!has_dim) {
    int64_t m1 = -1;
    in = ts_rt_reshape(c, a, 1, &m1);
    dim = 0;
  } else {
    in = a;
    ts_rt_tensor_retain(in);
  }
  if (!in) return false;
  int64_t d = 0;
  if (in->ndim == 0) {
    ts_rt_fail(c, "dimension specified as %lld but tensor has no dimensions", (long long)dim);
    goto done;
  }
  if (!ts_rt_wrap_dim(c, dim, in->ndim, &d)) goto done;
  int64_t len = in->sizes[d];
  if (rep->ndim == 0 || (rep->ndim == 1 && rep->sizes[0] == 1)) {
    reps = ts_rt_tensor_view(c, rep, rep->offset, 1, &len, (int64_t[]){0});
  } else if (rep->ndim == 1) {
    if (rep->sizes[0] != len) {
      ts_rt_fail(c, "repeats must have the same size as input along dim");
      goto done;
    }
    reps = (ts_rt_tensor *)rep;
    ts_rt_tensor_retain(reps);
  } else {
    ts_rt_fail(c, "repeats must be 0-dim or 1-dim tensor");
    goto done;
  }
  if (!reps || !(idx = ly_repeat_index(c, reps, has_size, size))) goto done;
  ts_iv sin[3] = {ts_iv_tensor(in), ts_iv_int(d), ts_iv_tensor(idx)};
  ok = ly_call(c, "aten::index_select", sin, 3, call->out);
done:
  if (idx) ts_rt_tensor_release(idx);
  if (reps) ts_rt_tensor_release(reps);
  ts_rt_tensor_release(in);
  return ok;
}

static bool ly_k_repeat_interleave_self_tensor(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *rep = NULL;
  if (!ts_rt_arg_tensor(ctx, call, 1, &rep)) return false;
  return ly_repeat_interleave(ctx, call, rep);
}

static bool ly_k_repeat_interleave_self_int(ts_rt_ctx *ctx, ts_rt_call *call) {
  int64_t n = 0;
  if (!ts_rt_arg_int(ctx, call, 1, &n)) return false;
  int64_t one = 1;
  ts_rt_tensor *rep = ts_rt_tensor_new(ctx, TS_DT_INT64, 1, &one, false);
  if (!rep) return false;
  *(int64_t *)ts_rt_tensor_data(rep) = n;
  bool ok = ly_repeat_interleave(ctx, call, rep);
  ts_rt_tensor_release(rep);
  return ok;
}

/* --------------------------------------------------------------- one_hot */

/* one_hot(self, num_classes): int64 self, a trailing dim of num_classes
 * (-1: the largest class + 1) with a 1 at each value. */
static bool ly_k_one_hot(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL;
  int64_t nc = -1;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_int(ctx, call, 1, &nc)) return false;
  if (a->dtype != TS_DT_INT64) return ts_rt_fail(ctx, "one_hot is only applicable to index tensor.");
  if (a->ndim + 1 > TS_RT_MAX_DIMS) return ts_rt_fail(ctx, "one_hot: too many dimensions");
  int64_t sizes[TS_RT_MAX_DIMS];
  memcpy(sizes, a->sizes, sizeof(int64_t) * (size_t)a->ndim);
  int64_t n = ts_rt_tensor_numel(a);
  if (n == 0) {
    if (nc <= 0) return ts_rt_fail(ctx, "Can not infer total number of classes from empty tensor.");
    sizes[a->ndim] = nc;
    return ly_put(call, ts_rt_tensor_new(ctx, TS_DT_INT64, a->ndim + 1, sizes, true));
  }
  ts_rt_tensor *ca = ts_rt_tensor_contiguous(ctx, a);
  if (!ca) return false;
  const int64_t *v = ts_rt_tensor_data(ca);
  int64_t lo = v[0], hi = v[0];
  for (int64_t i = 1; i < n; i++) {
    if (v[i] < lo) lo = v[i];
    if (v[i] > hi) hi = v[i];
  }
  ts_rt_tensor *r = NULL;
  if (lo < 0) {
    ts_rt_fail(ctx, "Class values must be non-negative.");
  } else if (nc != -1 && nc <= hi) {
    ts_rt_fail(ctx, "Class values must be smaller than num_classes.");
  } else {
    if (nc == -1) nc = hi + 1;
    sizes[a->ndim] = nc;
    r = ts_rt_tensor_new(ctx, TS_DT_INT64, a->ndim + 1, sizes, true);
    if (r) {
      int64_t *o = ts_rt_tensor_data(r);
      for (int64_t i = 0; i < n; i++) o[i * nc + v[i]] = 1;
    }
  }
  ts_rt_tensor_release(ca);
  return ly_put(call, r);
}

/* ----------------------------------------------------------------- cross */

/* The cross product of 3-vectors along dim in the dtype's arithmetic
 * (bfloat16 rounded after each product and difference, integers
 * wrapping). */
static double ly_cross_one(double a1, double a2, double b1, double b2, ts_dtype dt) {
  if (dt == TS_DT_FLOAT64) return a1 * b2 - a2 * b1;
  if (dt == TS_DT_FLOAT32) return (float)((float)((float)a1 * (float)b2) - (float)((float)a2 * (float)b1));
  char t1[2], t2[2], t3[2];
  ts_rt_store_f64(t1, dt, (float)a1 * (float)b2);
  ts_rt_store_f64(t2, dt, (float)a2 * (float)b1);
  ts_rt_store_f64(t3, dt, (float)ts_rt_load_f64(t1, dt) - (float)ts_rt_load_f64(t2, dt));
  return ts_rt_load_f64(t3, dt);
}

static ts_rt_tensor *ly_cross(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *b, int64_t dim_) {
  if (a->ndim != b->ndim) {
    ts_rt_fail(c, "linalg.cross: inputs must have the same number of dimensions.");
    return NULL;
  }
  int64_t dim = 0;
  if (!ts_rt_wrap_dim(c, dim_, a->ndim, &dim)) return NULL;
  int64_t sa = a->ndim ? a->sizes[dim] : 1, sb = b->ndim ? b->sizes[dim] : 1;
  if (sa != 3 || sb != 3) {
    ts_rt_fail(c, "linalg.cross: inputs dimension %lld must have length 3. Got %lld and %lld", (long long)dim_,
               (long long)sa, (long long)sb);
    return NULL;
  }
  int64_t shape[TS_RT_MAX_DIMS];
  int32_t nd = 0;
  if (!ts_rt_broadcast_shapes(c, a->ndim, a->sizes, b->ndim, b->sizes, &nd, shape)) return NULL;
  ts_dtype dt = (ts_dtype)a->dtype;
  if (b->dtype != a->dtype) {
    ts_rt_fail(c, "expected scalar type %s but found %s", ts_rt_dtype_name(dt), ts_rt_dtype_name((ts_dtype)b->dtype));
    return NULL;
  }
  if (dt == TS_DT_BOOL || dt == TS_DT_FLOAT16) {
    ts_rt_fail(c, "\"cross\" not implemented for '%s'", ts_rt_dtype_name(dt));
    return NULL;
  }
  ts_rt_tensor *ea = ts_rt_expand(c, a, nd, shape), *eb = ea ? ts_rt_expand(c, b, nd, shape) : NULL;
  ts_rt_tensor *r = eb ? ts_rt_tensor_new(c, dt, nd, shape, false) : NULL;
  if (r && ts_rt_tensor_numel(r) > 0) {
    /* walk every position with the dim fixed at 0 */
    int64_t sizes[TS_RT_MAX_DIMS], idx[TS_RT_MAX_DIMS] = {0};
    memcpy(sizes, shape, sizeof(int64_t) * (size_t)nd);
    sizes[dim] = 1;
    int64_t count = 1;
    for (int32_t d = 0; d < nd; d++) count *= sizes[d];
    size_t esz = ts_dtype_size(dt);
    const char *ap = ea->storage->data, *bp = eb->storage->data;
    char *rp = r->storage->data;
    bool integral = !ts_rt_dtype_is_float(dt);
    int64_t oa = ea->offset, ob = eb->offset, orr = r->offset;
    int64_t da = ea->strides[dim], db = eb->strides[dim], dr = r->strides[dim];
    for (int64_t k = 0; k < count; k++) {
      for (int j = 0; j < 3; j++) {
        int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
        char *o = rp + (size_t)(orr + j * dr) * esz;
        if (integral) {
          uint64_t a1 = (uint64_t)ts_rt_load_i64(ap + (size_t)(oa + j1 * da) * esz, dt);
          uint64_t a2 = (uint64_t)ts_rt_load_i64(ap + (size_t)(oa + j2 * da) * esz, dt);
          uint64_t b1 = (uint64_t)ts_rt_load_i64(bp + (size_t)(ob + j1 * db) * esz, dt);
          uint64_t b2 = (uint64_t)ts_rt_load_i64(bp + (size_t)(ob + j2 * db) * esz, dt);
          ts_rt_store_i64(o, dt, (int64_t)(a1 * b2 - a2 * b1));
        } else {
          double a1 = ts_rt_load_f64(ap + (size_t)(oa + j1 * da) * esz, dt);
          double a2 = ts_rt_load_f64(ap + (size_t)(oa + j2 * da) * esz, dt);
          double b1 = ts_rt_load_f64(bp + (size_t)(ob + j1 * db) * esz, dt);
          double b2 = ts_rt_load_f64(bp + (size_t)(ob + j2 * db) * esz, dt);
          ts_rt_store_f64(o, dt, ly_cross_one(a1, a2, b1, b2, dt));
        }
      }
      for (int32_t d = nd - 1; d >= 0; d--) {
        if (++idx[d] < sizes[d]) {
          oa += ea->strides[d];
          ob += eb->strides[d];
          orr += r->strides[d];
          break;
        }
        oa -= ea->strides[d] * (sizes[d] - 1);
        ob -= eb->strides[d] * (sizes[d] - 1);
        orr -= r->strides[d] * (sizes[d] - 1);
        idx[d] = 0;
      }
    }
  }
  if (ea) ts_rt_tensor_release(ea);
  if (eb) ts_rt_tensor_release(eb);
  return r;
}

/* linalg_cross(self, other, *, dim) */
static bool ly_k_linalg_cross(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL, *b = NULL;
  int64_t dim = -1;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_tensor(ctx, call, 1, &b) || !ts_rt_arg_int(ctx, call, 2, &dim))
    return false;
  return ly_put(call, ly_cross(ctx, a, b, dim));
}

/* cross(self, other, dim=None): None is self's first dim of size 3 */
static bool ly_k_cross(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL, *b = NULL;
  int64_t dim = 0;
  bool has = false;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_tensor(ctx, call, 1, &b) ||
      !ts_rt_arg_opt_int(ctx, call, 2, &dim, &has))
    return false;
  if (!has) {
    int32_t d = 0;
    while (d < a->ndim && a->sizes[d] != 3) d++;
    if (d == a->ndim) return ts_rt_fail(ctx, "no dimension of size 3 in input");
    dim = d;
  }
  return ly_put(call, ly_cross(ctx, a, b, dim));
}

const ts_rt_kernel_def ts_rt_kernels_layout[] = {
    {"aten::meshgrid", ly_k_meshgrid},
    {"aten::meshgrid.indexing", ly_k_meshgrid_indexing},
    {"aten::tril", ly_k_tril},
    {"aten::triu", ly_k_triu},
    {"aten::diagonal", ly_k_diagonal},
    {"aten::diag", ly_k_diag},
    {"aten::diag_embed", ly_k_diag_embed},
    {"aten::diagflat", ly_k_diagflat},
    {"aten::tile", ly_k_tile},
    {"aten::repeat_interleave.Tensor", ly_k_repeat_interleave},
    {"aten::repeat_interleave.self_Tensor", ly_k_repeat_interleave_self_tensor},
    {"aten::repeat_interleave.self_int", ly_k_repeat_interleave_self_int},
    {"aten::one_hot", ly_k_one_hot},
    {"aten::cross", ly_k_cross},
    {"aten::linalg_cross", ly_k_linalg_cross},
    {NULL, NULL},
};
