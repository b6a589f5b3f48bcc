/* runtime/kernels/shape.c: view ops (sharing storage through
 * ts_rt_tensor_view, with PyTorch 1.13's geometry rules and messages), the
 * copying shape ops (cat, stack, repeat, flip, roll, index_select, gather,
 * advanced indexing, masked_select, nonzero, where(condition), clone, copy_,
 * copy, to) and tensor metadata (size, dim, numel, len, item). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "tensor_ops.h"

#define SH_SHAPE_CAP (TS_RT_MAX_DIMS * 24 + 4)

/* ------------------------------------------------------------- helpers */

/* a * b for non-negative sizes; false on overflow. */
static bool sh_mul(int64_t a, int64_t b, int64_t *out) {
  if (a < 0 || b < 0 || (a != 0 && b > INT64_MAX / a)) return false;
  *out = a * b;
  return true;
}

/* "[2, 3]" as PyTorch prints an IntArrayRef. */
static const char *sh_fmt_shape(char *buf, size_t cap, int32_t n, const int64_t *s) {
  size_t len = 0;
  buf[len++] = '[';
  for (int32_t i = 0; i < n && len + 24 < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? ", " : "", (long long)s[i]);
  buf[len++] = ']';
  buf[len] = 0;
  return buf;
}

/* maybe_wrap_dim for int64 ranges (narrow's start, which wraps like a dim). */
static bool sh_wrap(ts_rt_ctx *c, int64_t dim, int64_t n, int64_t *out) {
  if (n <= 0) n = 1;
  if (dim < -n || dim >= n)
    return ts_rt_fail(c, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                      (long long)-n, (long long)(n - 1), (long long)dim);
  *out = dim < 0 ? dim + n : dim;
  return true;
}

static const char *sh_type_name(ts_dtype dt) {
  switch (dt) {
  case TS_DT_FLOAT32: return "torch.FloatTensor";
  case TS_DT_FLOAT64: return "torch.DoubleTensor";
  case TS_DT_FLOAT16: return "torch.HalfTensor";
  case TS_DT_BFLOAT16: return "torch.BFloat16Tensor";
  case TS_DT_INT64: return "torch.LongTensor";
  case TS_DT_INT32: return "torch.IntTensor";
  case TS_DT_INT16: return "torch.ShortTensor";
  case TS_DT_INT8: return "torch.CharTensor";
  case TS_DT_UINT8: return "torch.ByteTensor";
  case TS_DT_BOOL: return "torch.BoolTensor";
  default: return "torch.Tensor";
  }
}

static const ts_type *sh_tensor_type(void) { return ts_type_leaf(TS_TY_TENSOR); }

/* Same geometry, new tensor object (detach, alias, no-op views). */
static ts_rt_tensor *sh_alias(ts_rt_ctx *c, const ts_rt_tensor *a) {
  return ts_rt_tensor_view(c, a, a->offset, a->ndim, a->sizes, a->strides);
}

/* A new list of tensors that takes over ts[0..n) (released on failure). */
static bool sh_put_list(ts_rt_ctx *c, ts_rt_call *call, ts_rt_tensor **ts, uint32_t n) {
  ts_rt_list *l = ts_rt_list_new(c, sh_tensor_type(), n);
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

/* Writes `r` (owned) into the out= tensor `out` as PyTorch's out= overloads
 * do: resized when its shape differs (ts_rt_tensor_resize_out), values
 * converted to out's dtype. Returns out retained in call->out[0]. */
static bool sh_put_out(ts_rt_ctx *c, ts_rt_call *call, ts_rt_tensor *out, ts_rt_tensor *r) {
  if (!r) return false;
  bool ok = ts_rt_tensor_resize_out(c, out, r->ndim, r->sizes, NULL) && ts_rt_tensor_copy_(c, out, r);
  ts_rt_tensor_release(r);
  if (!ok) return false;
  ts_rt_tensor_retain(out);
  call->out[0] = ts_iv_tensor(out);
  return true;
}

static bool sh_put(ts_rt_call *call, ts_rt_tensor *t) {
  if (!t) return false;
  call->out[0] = ts_iv_tensor(t);
  return true;
}

/* --------------------------------------------------- gather-style copy */

/* Copies into a contiguous `dst` element by element: output element
 * (i0, .., i{nd-1}) comes from src + sum_d maps[d][i_d] elements. Every
 * copying shape op that only rearranges elements (flip, roll, repeat,
 * index_select, advanced indexing) is one of these. */
typedef struct sh_gcopy {
  const char *src;
  char *dst;
  size_t esz;
  int32_t nd;
  const int64_t *sizes;
  int64_t *const *maps;
} sh_gcopy;

static void sh_gcopy_rows(void *arg, int64_t begin, int64_t end) {
  const sh_gcopy *g = arg;
  int32_t nd = g->nd;
  int64_t inner = nd > 0 ? g->sizes[nd - 1] : 1;
  int64_t idx[TS_RT_MAX_DIMS];
  int64_t rem = begin;
  for (int32_t d = nd - 2; d >= 0; d--) {
    idx[d] = rem % g->sizes[d];
    rem /= g->sizes[d];
  }
  const int64_t *last = nd > 0 ? g->maps[nd - 1] : NULL;
  for (int64_t row = begin; row < end; row++) {
    int64_t base = 0;
    for (int32_t d = 0; d < nd - 1; d++) base += g->maps[d][idx[d]];
    char *dst = g->dst + (size_t)row * (size_t)inner * g->esz;
    const char *src = g->src + base * (int64_t)g->esz;
    switch (g->esz) {
    case 1:
      for (int64_t j = 0; j < inner; j++) dst[j] = src[last ? last[j] : 0];
      break;
    case 2:
      for (int64_t j = 0; j < inner; j++) memcpy(dst + 2 * j, src + 2 * (last ? last[j] : 0), 2);
      break;
    case 4:
      for (int64_t j = 0; j < inner; j++) memcpy(dst + 4 * j, src + 4 * (last ? last[j] : 0), 4);
      break;
    case 8:
      for (int64_t j = 0; j < inner; j++) memcpy(dst + 8 * j, src + 8 * (last ? last[j] : 0), 8);
      break;
    default: /* complex128: 16 */
      for (int64_t j = 0; j < inner; j++) memcpy(dst + g->esz * j, src + g->esz * (last ? last[j] : 0), g->esz);
      break;
    }
    for (int32_t d = nd - 2; d >= 0; d--) {
      if (++idx[d] < g->sizes[d]) break;
      idx[d] = 0;
    }
  }
}

/* Runs the copy over dst (contiguous, numel = prod(sizes)). */
static void sh_gcopy_run(ts_rt_ctx *c, const ts_rt_tensor *src, ts_rt_tensor *dst, int32_t nd, const int64_t *sizes,
                         int64_t *const *maps) {
  int64_t numel = 1;
  for (int32_t d = 0; d < nd; d++) numel *= sizes[d];
  if (numel == 0) return;
  sh_gcopy g = {ts_rt_tensor_data(src), ts_rt_tensor_data(dst), ts_dtype_size((ts_dtype)src->dtype), nd, sizes, maps};
  int64_t inner = nd > 0 ? sizes[nd - 1] : 1;
  int64_t rows = numel / inner;
  int64_t grain = 32768 / inner;
  ts_rt_parallel_for(c, rows, grain > 0 ? grain : 1, sh_gcopy_rows, &g);
}

/* One block holding a map per dim (sizes[d] entries each), map d = i * stride
 * to start with. NULL after an OOM error. */
static int64_t *sh_maps_new(ts_rt_ctx *c, int32_t nd, const int64_t *sizes, const int64_t *strides, int64_t **maps) {
  int64_t total = 0;
  for (int32_t d = 0; d < nd; d++) total += sizes[d];
  int64_t *block = ts_rt_malloc(sizeof(int64_t) * (size_t)(total > 0 ? total : 1));
  if (!block) {
    ts_rt_oom(c);
    return NULL;
  }
  int64_t *p = block;
  for (int32_t d = 0; d < nd; d++) {
    maps[d] = p;
    for (int64_t i = 0; i < sizes[d]; i++) p[i] = i * strides[d];
    p += sizes[d];
  }
  return block;
}

/* ---------------------------------------------------------- n-d walks */

/* Advances a row-major counter over `sizes` and the element offsets of nt
 * strided operands. */
static inline void sh_step(int32_t nd, const int64_t *sizes, int64_t *idx, int nt, const int64_t *const *strides,
                           int64_t *offs) {
  for (int32_t d = nd - 1; d >= 0; d--) {
    if (++idx[d] < sizes[d]) {
      for (int k = 0; k < nt; k++) offs[k] += strides[k][d];
      return;
    }
    idx[d] = 0;
    for (int k = 0; k < nt; k++) offs[k] -= strides[k][d] * (sizes[d] - 1);
  }
}

/* ---------------------------------------------------------------- views */

/* PyTorch's infer_size: one -1 allowed, the product must be numel. */
static bool sh_infer_size(ts_rt_ctx *c, int64_t numel, int32_t ndim, const int64_t *shape, int64_t *out) {
  char b[SH_SHAPE_CAP];
  int64_t newsize = 1;
  int32_t infer = -1;
  bool overflow = false;
  for (int32_t d = 0; d < ndim; d++) {
    out[d] = shape[d];
    if (shape[d] == -1) {
      if (infer >= 0) return ts_rt_fail(c, "only one dimension can be inferred");
      infer = d;
    } else if (shape[d] >= 0) {
      if (!sh_mul(newsize, shape[d], &newsize)) overflow = true;
    } else {
      return ts_rt_fail(c, "invalid shape dimension %lld", (long long)shape[d]);
    }
  }
  if (!overflow && (numel == newsize || (infer >= 0 && newsize > 0 && numel % newsize == 0))) {
    if (infer >= 0) {
      if (newsize == 0)
        return ts_rt_fail(c, "cannot reshape tensor of 0 elements into shape %s because the unspecified dimension "
                          "size -1 can be any value and is ambiguous", sh_fmt_shape(b, sizeof b, ndim, shape));
      out[infer] = numel / newsize;
    }
    return true;
  }
  return ts_rt_fail(c, "shape '%s' is invalid for input of size %lld", sh_fmt_shape(b, sizeof b, ndim, shape),
                    (long long)numel);
}

/* PyTorch's computeStride: strides giving `a`'s elements in the new shape
 * without a copy, or false when no such strides exist. */
static bool sh_compute_stride(const ts_rt_tensor *a, int32_t nnew, const int64_t *newshape, int64_t *newstride) {
  int32_t nold = a->ndim;
  if (nold == 0) {
    for (int32_t d = 0; d < nnew; d++) newstride[d] = 1;
    return true;
  }
  int64_t numel = ts_rt_tensor_numel(a);
  if (numel == 0) {
    bool same = nold == nnew;
    for (int32_t d = 0; same && d < nnew; d++) same = a->sizes[d] == newshape[d];
    if (same) {
      memcpy(newstride, a->strides, sizeof(int64_t) * (size_t)nnew);
      return true;
    }
    for (int32_t d = nnew - 1; d >= 0; d--) {
      if (d == nnew - 1) newstride[d] = 1;
      else newstride[d] = (newshape[d + 1] > 1 ? newshape[d + 1] : 1) * newstride[d + 1];
    }
    return true;
  }
  int32_t view_d = nnew - 1;
  int64_t chunk_base_stride = a->strides[nold - 1];
  int64_t tensor_numel = 1, view_numel = 1;
  for (int32_t td = nold - 1; td >= 0; td--) {
    tensor_numel *= a->sizes[td];
    if (td == 0 || (a->sizes[td - 1] != 1 && a->strides[td - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || newshape[view_d] == 1)) {
        newstride[view_d] = view_numel * chunk_base_stride;
        view_numel *= newshape[view_d];
        view_d--;
      }
      if (view_numel != tensor_numel) return false;
      if (td > 0) {
        chunk_base_stride = a->strides[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

static bool sh_check_ndim(ts_rt_ctx *c, int64_t ndim) {
  if (ndim > TS_RT_MAX_DIMS) return ts_rt_fail(c, "tsaot supports at most %d dimensions, got %lld", TS_RT_MAX_DIMS,
                                               (long long)ndim);
  return true;
}

/* view(sizes): one -1 allowed; fails where the strides do not allow it. */
ts_rt_tensor *ts_rt_view(ts_rt_ctx *c, const ts_rt_tensor *a, int32_t ndim, const int64_t *sizes) {
  int64_t shape[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS];
  if (!sh_check_ndim(c, ndim) || !sh_infer_size(c, ts_rt_tensor_numel(a), ndim, sizes, shape)) return NULL;
  if (!sh_compute_stride(a, ndim, shape, strides)) {
    ts_rt_fail(c, "view size is not compatible with input tensor's size and stride (at least one dimension spans "
               "across two contiguous subspaces). Use .reshape(...) instead.");
    return NULL;
  }
  return ts_rt_tensor_view(c, a, a->offset, ndim, shape, strides);
}

/* reshape: a view when computeStride allows one, else a contiguous copy. */
ts_rt_tensor *ts_rt_reshape(ts_rt_ctx *c, const ts_rt_tensor *a, int32_t ndim, const int64_t *sizes) {
  int64_t shape[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS];
  if (!sh_check_ndim(c, ndim) || !sh_infer_size(c, ts_rt_tensor_numel(a), ndim, sizes, shape)) return NULL;
  if (sh_compute_stride(a, ndim, shape, strides)) return ts_rt_tensor_view(c, a, a->offset, ndim, shape, strides);
  ts_rt_tensor *copy = ts_rt_clone(c, a);
  if (!copy) return NULL;
  ts_rt_strides_contiguous(ndim, shape, strides);
  ts_rt_tensor *r = ts_rt_tensor_view(c, copy, copy->offset, ndim, shape, strides);
  ts_rt_tensor_release(copy);
  return r;
}

ts_rt_tensor *ts_rt_transpose(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t d0, int64_t d1) {
  if (!ts_rt_wrap_dim(c, d0, a->ndim, &d0) || !ts_rt_wrap_dim(c, d1, a->ndim, &d1)) return NULL;
  if (a->ndim == 0) return sh_alias(c, a);
  int64_t sizes[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS];
  memcpy(sizes, a->sizes, sizeof(int64_t) * (size_t)a->ndim);
  memcpy(strides, a->strides, sizeof(int64_t) * (size_t)a->ndim);
  sizes[d0] = a->sizes[d1];
  sizes[d1] = a->sizes[d0];
  strides[d0] = a->strides[d1];
  strides[d1] = a->strides[d0];
  return ts_rt_tensor_view(c, a, a->offset, a->ndim, sizes, strides);
}

/* permute with dims already checked to be a->ndim long. */
ts_rt_tensor *ts_rt_permute(ts_rt_ctx *c, const ts_rt_tensor *a, const int64_t *dims) {
  int64_t sizes[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS];
  bool seen[TS_RT_MAX_DIMS] = {false};
  for (int32_t i = 0; i < a->ndim; i++) {
    int64_t d = 0;
    if (!ts_rt_wrap_dim(c, dims[i], a->ndim, &d)) return NULL;
    if (seen[d]) {
      ts_rt_fail(c, "permute(): duplicate dims are not allowed.");
      return NULL;
    }
    seen[d] = true;
    sizes[i] = a->sizes[d];
    strides[i] = a->strides[d];
  }
  return ts_rt_tensor_view(c, a, a->offset, a->ndim, sizes, strides);
}

ts_rt_tensor *ts_rt_select(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t dim, int64_t index) {
  if (a->ndim == 0) {
    ts_rt_fail(c, "select() cannot be applied to a 0-dim tensor.");
    return NULL;
  }
  if (!ts_rt_wrap_dim(c, dim, a->ndim, &dim)) return NULL;
  int64_t size = a->sizes[dim];
  if (index < -size || index >= size) {
    char b[SH_SHAPE_CAP];
    ts_rt_fail(c, "select(): index %lld out of range for tensor of size %s at dimension %lld", (long long)index,
               sh_fmt_shape(b, sizeof b, a->ndim, a->sizes), (long long)dim);
    return NULL;
  }
  if (index < 0) index += size;
  int64_t sizes[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS];
  int32_t n = 0;
  for (int32_t d = 0; d < a->ndim; d++) {
    if (d == dim) continue;
    sizes[n] = a->sizes[d];
    strides[n++] = a->strides[d];
  }
  return ts_rt_tensor_view(c, a, a->offset + index * a->strides[dim], n, sizes, strides);
}

ts_rt_tensor *ts_rt_slice(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (a->ndim == 0) {
    ts_rt_fail(c, "slice() cannot be applied to a 0-dim tensor.");
    return NULL;
  }
  if (!ts_rt_wrap_dim(c, dim, a->ndim, &dim)) return NULL;
  if (step <= 0) {
    ts_rt_fail(c, "slice step must be positive");
    return NULL;
  }
  int64_t size = a->sizes[dim];
  if (start < 0) start += size;
  if (end < 0) end += size;
  if (start < 0) start = 0;
  else if (start >= size) start = size;
  if (end < start) end = start;
  else if (end >= size) end = size;
  int64_t sizes[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS];
  memcpy(sizes, a->sizes, sizeof(int64_t) * (size_t)a->ndim);
  memcpy(strides, a->strides, sizeof(int64_t) * (size_t)a->ndim);
  /* (end - start + step - 1) / step without overflowing for huge steps */
  sizes[dim] = (end - start) / step + ((end - start) % step != 0);
  int64_t st;
  strides[dim] = sh_mul(a->strides[dim], step, &st) ? st : a->strides[dim];
  return ts_rt_tensor_view(c, a, a->offset + start * a->strides[dim], a->ndim, sizes, strides);
}

ts_rt_tensor *ts_rt_narrow(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t dim, int64_t start, int64_t length) {
  if (a->ndim == 0) {
    ts_rt_fail(c, "narrow() cannot be applied to a 0-dim tensor.");
    return NULL;
  }
  if (!ts_rt_wrap_dim(c, dim, a->ndim, &dim)) return NULL;
  int64_t size = a->sizes[dim];
  /* start == size is valid (an empty narrow at the end) */
  if (start != size && !sh_wrap(c, start, size, &start)) return NULL;
  if (length < 0 || start > size - length) {
    ts_rt_fail(c, "start (%lld) + length (%lld) exceeds dimension size (%lld).", (long long)start, (long long)length,
               (long long)size);
    return NULL;
  }
  return ts_rt_slice(c, a, dim, start, start + length, 1);
}

ts_rt_tensor *ts_rt_unsqueeze(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t dim) {
  if (!ts_rt_wrap_dim(c, dim, a->ndim + 1, &dim) || !sh_check_ndim(c, a->ndim + 1)) return NULL;
  int64_t sizes[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS];
  int32_t n = 0;
  for (int32_t d = 0; d <= a->ndim; d++) {
    if (d == dim) {
      sizes[n] = 1;
      strides[n++] = d >= a->ndim ? 1 : a->sizes[d] * a->strides[d];
    }
    if (d < a->ndim) {
      sizes[n] = a->sizes[d];
      strides[n++] = a->strides[d];
    }
  }
  return ts_rt_tensor_view(c, a, a->offset, n, sizes, strides);
}

ts_rt_tensor *ts_rt_squeeze_dim(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t dim) {
  if (!ts_rt_wrap_dim(c, dim, a->ndim, &dim)) return NULL;
  if (a->ndim == 0 || a->sizes[dim] != 1) return sh_alias(c, a);
  int64_t sizes[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS];
  int32_t n = 0;
  for (int32_t d = 0; d < a->ndim; d++) {
    if (d == dim) continue;
    sizes[n] = a->sizes[d];
    strides[n++] = a->strides[d];
  }
  return ts_rt_tensor_view(c, a, a->offset, n, sizes, strides);
}

static ts_rt_tensor *sh_squeeze_all(ts_rt_ctx *c, const ts_rt_tensor *a) {
  int64_t sizes[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS];
  int32_t n = 0;
  for (int32_t d = 0; d < a->ndim; d++) {
    if (a->sizes[d] == 1) continue;
    sizes[n] = a->sizes[d];
    strides[n++] = a->strides[d];
  }
  return ts_rt_tensor_view(c, a, a->offset, n, sizes, strides);
}

/* PyTorch's inferExpandGeometry: new leading dims and size-1 dims get
 * stride 0; -1 keeps a size. */
ts_rt_tensor *ts_rt_expand(ts_rt_ctx *c, const ts_rt_tensor *a, int32_t ndim, const int64_t *target) {
  char b1[SH_SHAPE_CAP], b2[SH_SHAPE_CAP];
  if (ndim < a->ndim) {
    ts_rt_fail(c, "expand(%s{%s}, size=%s): the number of sizes provided (%d) must be greater or equal to the number "
               "of dimensions in the tensor (%d)", sh_type_name((ts_dtype)a->dtype),
               sh_fmt_shape(b1, sizeof b1, a->ndim, a->sizes), sh_fmt_shape(b2, sizeof b2, ndim, target), (int)ndim,
               (int)a->ndim);
    return NULL;
  }
  if (!sh_check_ndim(c, ndim)) return NULL;
  int64_t sizes[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS];
  for (int32_t i = ndim - 1; i >= 0; i--) {
    int32_t off = ndim - 1 - i;
    int32_t dim = a->ndim - 1 - off;
    int64_t size = dim >= 0 ? a->sizes[dim] : 1;
    int64_t stride = dim >= 0 ? a->strides[dim] : (i + 1 < ndim ? sizes[i + 1] * strides[i + 1] : 1);
    int64_t t = target[i];
    if (t == -1) {
      if (dim < 0) {
        ts_rt_fail(c, "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension %d",
                   (int)i);
        return NULL;
      }
      t = size;
    }
    if (size != t) {
      if (size != 1) {
        ts_rt_fail(c, "The expanded size of the tensor (%lld) must match the existing size (%lld) at non-singleton "
                   "dimension %d.  Target sizes: %s.  Tensor sizes: %s", (long long)t, (long long)size, (int)i,
                   sh_fmt_shape(b1, sizeof b1, ndim, target), sh_fmt_shape(b2, sizeof b2, a->ndim, a->sizes));
        return NULL;
      }
      if (t < 0) {
        ts_rt_fail(c, "Trying to create tensor with negative dimension %lld: %s", (long long)t,
                   sh_fmt_shape(b1, sizeof b1, ndim, target));
        return NULL;
      }
      size = t;
      stride = 0;
    }
    sizes[i] = size;
    strides[i] = stride;
  }
  return ts_rt_tensor_view(c, a, a->offset, ndim, sizes, strides);
}

/* Views [starts[i], ends[i]) along dim, slice-clamped, as a list. */
static bool sh_split_put(ts_rt_ctx *c, ts_rt_call *call, const ts_rt_tensor *a, int64_t dim, const int64_t *starts,
                         const int64_t *ends, uint32_t n) {
  ts_rt_tensor **ts = ts_rt_malloc(sizeof(ts_rt_tensor *) * (n ? n : 1));
  if (!ts) return ts_rt_oom(c);
  for (uint32_t i = 0; i < n; i++) {
    ts[i] = ts_rt_slice(c, a, dim, starts[i], ends[i], 1);
    if (!ts[i]) {
      for (uint32_t k = 0; k < i; k++) ts_rt_tensor_release(ts[k]);
      ts_rt_free(ts);
      return false;
    }
  }
  bool ok = sh_put_list(c, call, ts, n);
  ts_rt_free(ts);
  return ok;
}

/* The (start, end) bounds of split / split_with_sizes / chunk pieces, in two
 * malloc'd arrays (*starts holds both). */
static bool sh_bounds_alloc(ts_rt_ctx *c, uint64_t n, int64_t **starts, int64_t **ends) {
  if (n > UINT32_MAX / 4) return ts_rt_fail(c, "too many pieces to split into (%llu)", (unsigned long long)n);
  *starts = ts_rt_malloc(sizeof(int64_t) * 2 * (size_t)(n ? n : 1));
  if (!*starts) return ts_rt_oom(c);
  *ends = *starts + (n ? n : 1);
  return true;
}

/* split(split_size): pieces of split_size, the last one smaller. */
static bool sh_split_bounds(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t *dim, int64_t split_size, int64_t **starts,
                            int64_t **ends, uint32_t *n) {
  if (a->ndim == 0) return ts_rt_fail(c, "split expects at least a 1-dimensional tensor");
  if (split_size < 0) return ts_rt_fail(c, "split expects split_size be non-negative, but got split_size=%lld",
                                        (long long)split_size);
  if (!ts_rt_wrap_dim(c, *dim, a->ndim, dim)) return false;
  int64_t size = a->sizes[*dim];
  if (split_size == 0 && size != 0)
    return ts_rt_fail(c, "split_size can only be 0 if dimension size is 0, but got dimension size of %lld",
                      (long long)size);
  int64_t num = split_size == 0 ? 1 : size / split_size + (size % split_size != 0);
  if (num < 1) num = 1;
  if (!sh_bounds_alloc(c, (uint64_t)num, starts, ends)) return false;
  for (int64_t i = 0; i < num; i++) {
    (*starts)[i] = i * split_size;
    (*ends)[i] = i == num - 1 ? size : (i + 1) * split_size;
  }
  *n = (uint32_t)num;
  return true;
}

static bool sh_split_sizes_bounds(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t *dim, const ts_rt_list *l,
                                  int64_t **starts, int64_t **ends, uint32_t *n) {
  if (a->ndim == 0) return ts_rt_fail(c, "split expects at least a 1-dimensional tensor");
  if (!ts_rt_wrap_dim(c, *dim, a->ndim, dim)) return false;
  int64_t size = a->sizes[*dim], sum = 0;
  bool neg = false;
  for (uint32_t i = 0; i < l->n; i++) {
    if (l->items[i].tag != TS_IV_INT) return ts_rt_fail(c, "split_sizes: expected List[int]");
    if (l->items[i].u.i < 0) neg = true;
    else if (sum <= INT64_MAX - l->items[i].u.i) sum += l->items[i].u.i;
    else sum = -1;
  }
  if (neg || sum != size) {
    size_t cap = (size_t)l->n * 24 + 4, len = 0;
    char *b = ts_rt_malloc(cap);
    if (!b) return ts_rt_oom(c);
    b[len++] = '[';
    for (uint32_t i = 0; i < l->n; i++)
      len += (size_t)snprintf(b + len, cap - len, "%s%lld", i ? ", " : "", (long long)l->items[i].u.i);
    b[len++] = ']';
    b[len] = 0;
    if (neg)
      ts_rt_fail(c, "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=%s", b);
    else
      ts_rt_fail(c, "split_with_sizes expects split_sizes to sum exactly to %lld (input tensor's size at dimension "
                 "%lld), but got split_sizes=%s", (long long)size, (long long)*dim, b);
    ts_rt_free(b);
    return false;
  }
  if (!sh_bounds_alloc(c, l->n, starts, ends)) return false;
  int64_t at = 0;
  for (uint32_t i = 0; i < l->n; i++) {
    (*starts)[i] = at;
    at += l->items[i].u.i;
    (*ends)[i] = at;
  }
  *n = l->n;
  return true;
}

/* chunk: split(ceil(size / chunks)), or n empty pieces of an empty dim. */
static bool sh_chunk_bounds(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t chunks, int64_t *dim, int64_t **starts,
                            int64_t **ends, uint32_t *n) {
  if (a->ndim == 0) return ts_rt_fail(c, "chunk expects at least a 1-dimensional tensor");
  if (chunks <= 0) return ts_rt_fail(c, "chunk expects `chunks` to be greater than 0, got: %lld", (long long)chunks);
  if (!ts_rt_wrap_dim(c, *dim, a->ndim, dim)) return false;
  int64_t size = a->sizes[*dim];
  int64_t split = size / chunks + (size % chunks != 0);
  if (split == 0 && size == 0) {
    if (!sh_bounds_alloc(c, (uint64_t)chunks, starts, ends)) return false;
    for (int64_t i = 0; i < chunks; i++) (*starts)[i] = (*ends)[i] = 0;
    *n = (uint32_t)chunks;
    return true;
  }
  return sh_split_bounds(c, a, dim, split, starts, ends, n);
}

bool ts_rt_chunk(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t chunks, int64_t dim, ts_rt_tensor **out, uint32_t max,
                 uint32_t *n) {
  int64_t *starts = NULL, *ends = NULL;
  uint32_t cnt;
  if (!sh_chunk_bounds(c, a, chunks, &dim, &starts, &ends, &cnt)) return false;
  if (cnt > max) {
    ts_rt_free(starts);
    return ts_rt_fail(c, "chunk: %u pieces, room for %u", (unsigned)cnt, (unsigned)max);
  }
  for (uint32_t i = 0; i < cnt; i++) {
    out[i] = ts_rt_slice(c, a, dim, starts[i], ends[i], 1);
    if (!out[i]) {
      for (uint32_t k = 0; k < i; k++) ts_rt_tensor_release(out[k]);
      ts_rt_free(starts);
      return false;
    }
  }
  ts_rt_free(starts);
  *n = cnt;
  return true;
}

/* tensor_split by sections: the first size % sections pieces one longer. */
static bool sh_tsplit_sections(ts_rt_ctx *c, ts_rt_call *call, const ts_rt_tensor *a, int64_t sections, int64_t dim) {
  if (a->ndim == 0)
    return ts_rt_fail(c, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  if (sections <= 0) return ts_rt_fail(c, "number of sections must be larger than 0, got %lld", (long long)sections);
  if (!ts_rt_wrap_dim(c, dim, a->ndim, &dim)) return false;
  int64_t *starts = NULL, *ends = NULL;
  if (!sh_bounds_alloc(c, (uint64_t)sections, &starts, &ends)) return false;
  int64_t size = a->sizes[dim], min = size / sections, extra = size % sections, at = 0;
  for (int64_t i = 0; i < sections; i++) {
    starts[i] = at;
    at += min + (i < extra);
    ends[i] = at;
  }
  bool ok = sh_split_put(c, call, a, dim, starts, ends, (uint32_t)sections);
  ts_rt_free(starts);
  return ok;
}

/* tensor_split by indices: slices between consecutive indices (clamped). */
static bool sh_tsplit_indices(ts_rt_ctx *c, ts_rt_call *call, const ts_rt_tensor *a, const int64_t *idx, uint32_t n,
                              int64_t dim) {
  if (a->ndim == 0)
    return ts_rt_fail(c, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  if (!ts_rt_wrap_dim(c, dim, a->ndim, &dim)) return false;
  int64_t *starts = NULL, *ends = NULL;
  if (!sh_bounds_alloc(c, (uint64_t)n + 1, &starts, &ends)) return false;
  int64_t prev = 0;
  for (uint32_t i = 0; i < n; i++) {
    starts[i] = prev;
    ends[i] = idx[i];
    prev = idx[i];
  }
  starts[n] = prev;
  ends[n] = a->sizes[dim];
  bool ok = sh_split_put(c, call, a, dim, starts, ends, n + 1);
  ts_rt_free(starts);
  return ok;
}

/* ---------------------------------------------------------------- copies */

ts_rt_tensor *ts_rt_clone(ts_rt_ctx *c, const ts_rt_tensor *a) {
  ts_rt_tensor *r = ts_rt_tensor_new(c, (ts_dtype)a->dtype, a->ndim, a->sizes, false);
  if (!r) return NULL;
  r->device = a->device;
  if (!ts_rt_tensor_copy_(c, r, a)) {
    ts_rt_tensor_release(r);
    return NULL;
  }
  return r;
}

/* cat: dtypes promoted over all inputs; 1-d empty tensors skipped (the legacy
 * rule); a copy of each input into a slice of the result. */
ts_rt_tensor *ts_rt_cat(ts_rt_ctx *c, ts_rt_tensor *const *ts, uint32_t n, int64_t dim) {
  if (n == 0) {
    ts_rt_fail(c, "torch.cat(): expected a non-empty list of Tensors");
    return NULL;
  }
  ts_dtype dt = (ts_dtype)ts[0]->dtype;
  const ts_rt_tensor *ref = NULL;
  for (uint32_t i = 0; i < n; i++) {
    dt = ts_type_promote(dt, (ts_dtype)ts[i]->dtype);
    if (ts[i]->ndim == 0) {
      ts_rt_fail(c, "zero-dimensional tensor (at position %u) cannot be concatenated", (unsigned)i);
      return NULL;
    }
    bool skip = ts[i]->ndim == 1 && ts[i]->sizes[0] == 0;
    if (!skip && !ref) ref = ts[i];
  }
  if (!ref) {
    int64_t zero = 0;
    return ts_rt_tensor_new(c, dt, 1, &zero, true);
  }
  if (!ts_rt_wrap_dim(c, dim, ref->ndim, &dim)) return NULL;
  int64_t sizes[TS_RT_MAX_DIMS];
  memcpy(sizes, ref->sizes, sizeof(int64_t) * (size_t)ref->ndim);
  sizes[dim] = 0;
  for (uint32_t i = 0; i < n; i++) {
    const ts_rt_tensor *t = ts[i];
    if (t->ndim == 1 && t->sizes[0] == 0) continue;
    if (t->ndim != ref->ndim) {
      ts_rt_fail(c, "Tensors must have same number of dimensions: got %d and %d", (int)ref->ndim, (int)t->ndim);
      return NULL;
    }
    for (int32_t d = 0; d < t->ndim; d++)
      if (d != dim && t->sizes[d] != ref->sizes[d]) {
        ts_rt_fail(c, "Sizes of tensors must match except in dimension %lld. Expected size %lld but got size %lld for "
                   "tensor number %u in the list.", (long long)dim, (long long)ref->sizes[d], (long long)t->sizes[d],
                   (unsigned)i);
        return NULL;
      }
    if (sizes[dim] > INT64_MAX - t->sizes[dim]) {
      ts_rt_fail(c, "cat: result too large");
      return NULL;
    }
    sizes[dim] += t->sizes[dim];
  }
  ts_rt_tensor *r = ts_rt_tensor_new(c, dt, ref->ndim, sizes, false);
  if (!r) return NULL;
  int64_t at = 0;
  for (uint32_t i = 0; i < n; i++) {
    const ts_rt_tensor *t = ts[i];
    if (t->ndim == 1 && t->sizes[0] == 0) continue;
    ts_rt_tensor *dst = ts_rt_slice(c, r, dim, at, at + t->sizes[dim], 1);
    bool ok = dst && ts_rt_tensor_copy_(c, dst, t);
    ts_rt_tensor_release(dst);
    if (!ok) {
      ts_rt_tensor_release(r);
      return NULL;
    }
    at += t->sizes[dim];
  }
  return r;
}

/* stack: every input unsqueezed at dim, then cat. */
ts_rt_tensor *ts_rt_stack(ts_rt_ctx *c, ts_rt_tensor *const *ts, uint32_t n, int64_t dim) {
  if (n == 0) {
    ts_rt_fail(c, "stack expects a non-empty TensorList");
    return NULL;
  }
  for (uint32_t i = 1; i < n; i++) {
    bool same = ts[i]->ndim == ts[0]->ndim;
    for (int32_t d = 0; same && d < ts[0]->ndim; d++) same = ts[i]->sizes[d] == ts[0]->sizes[d];
    if (!same) {
      char b1[SH_SHAPE_CAP], b2[SH_SHAPE_CAP];
      ts_rt_fail(c, "stack expects each tensor to be equal size, but got %s at entry 0 and %s at entry %u",
                 sh_fmt_shape(b1, sizeof b1, ts[0]->ndim, ts[0]->sizes),
                 sh_fmt_shape(b2, sizeof b2, ts[i]->ndim, ts[i]->sizes), (unsigned)i);
      return NULL;
    }
  }
  if (!ts_rt_wrap_dim(c, dim, ts[0]->ndim + 1, &dim)) return NULL;
  ts_rt_tensor **us = ts_rt_malloc(sizeof(ts_rt_tensor *) * n);
  if (!us) {
    ts_rt_oom(c);
    return NULL;
  }
  uint32_t k = 0;
  for (; k < n; k++)
    if (!(us[k] = ts_rt_unsqueeze(c, ts[k], dim))) break;
  ts_rt_tensor *r = k == n ? ts_rt_cat(c, us, n, dim) : NULL;
  for (uint32_t i = 0; i < k; i++) ts_rt_tensor_release(us[i]);
  ts_rt_free(us);
  return r;
}

/* repeat: output dim d of size r_d * s_d reads source index i % s_d. */
static ts_rt_tensor *sh_repeat(ts_rt_ctx *c, const ts_rt_tensor *a, uint32_t nrep, const int64_t *rep) {
  if (nrep < (uint32_t)a->ndim) {
    ts_rt_fail(c, "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
    return NULL;
  }
  int32_t nd = (int32_t)nrep, lead = nd - a->ndim;
  int64_t sizes[TS_RT_MAX_DIMS], src_sizes[TS_RT_MAX_DIMS], src_strides[TS_RT_MAX_DIMS];
  bool neg = false;
  for (int32_t d = 0; d < nd; d++) {
    src_sizes[d] = d < lead ? 1 : a->sizes[d - lead];
    src_strides[d] = d < lead ? 0 : a->strides[d - lead];
    if (rep[d] < 0) neg = true;
    if (!neg && !sh_mul(src_sizes[d], rep[d], &sizes[d])) {
      ts_rt_fail(c, "repeat: result too large");
      return NULL;
    }
    if (neg) sizes[d] = src_sizes[d] * rep[d];
  }
  if (neg) {
    char b[SH_SHAPE_CAP];
    int64_t bad = 0;
    for (int32_t d = 0; d < nd; d++)
      if (sizes[d] < 0) {
        bad = sizes[d];
        break;
      }
    if (bad < 0) {
      ts_rt_fail(c, "Trying to create tensor with negative dimension %lld: %s", (long long)bad,
                 sh_fmt_shape(b, sizeof b, nd, sizes));
      return NULL;
    }
  }
  ts_rt_tensor *r = ts_rt_tensor_new(c, (ts_dtype)a->dtype, nd, sizes, false);
  if (!r || ts_rt_tensor_numel(r) == 0) return r;
  int64_t *maps[TS_RT_MAX_DIMS];
  int64_t *block = sh_maps_new(c, nd, sizes, src_strides, maps);
  if (!block) {
    ts_rt_tensor_release(r);
    return NULL;
  }
  for (int32_t d = 0; d < nd; d++)
    for (int64_t i = 0; i < sizes[d]; i++) maps[d][i] = (i % src_sizes[d]) * src_strides[d];
  sh_gcopy_run(c, a, r, nd, sizes, maps);
  ts_rt_free(block);
  return r;
}

/* flip (shift == NULL) or roll (shift[d] per dim): a rearranging copy. */
static ts_rt_tensor *sh_flip_roll(ts_rt_ctx *c, const ts_rt_tensor *a, const bool *flip, const int64_t *shift) {
  ts_rt_tensor *r = ts_rt_tensor_new(c, (ts_dtype)a->dtype, a->ndim, a->sizes, false);
  if (!r || ts_rt_tensor_numel(r) == 0) return r;
  int64_t *maps[TS_RT_MAX_DIMS];
  int64_t *block = sh_maps_new(c, a->ndim, a->sizes, a->strides, maps);
  if (!block) {
    ts_rt_tensor_release(r);
    return NULL;
  }
  for (int32_t d = 0; d < a->ndim; d++) {
    int64_t n = a->sizes[d];
    for (int64_t i = 0; i < n; i++) {
      int64_t src = i;
      if (flip && flip[d]) src = n - 1 - i;
      if (shift) {
        int64_t s = shift[d] % n;
        src = ((i - s) % n + n) % n;
      }
      maps[d][i] = src * a->strides[d];
    }
  }
  sh_gcopy_run(c, a, r, a->ndim, a->sizes, maps);
  ts_rt_free(block);
  return r;
}

static ts_rt_tensor *sh_flip(ts_rt_ctx *c, const ts_rt_tensor *a, const int64_t *dims, uint32_t n) {
  bool flip[TS_RT_MAX_DIMS] = {false};
  for (uint32_t i = 0; i < n; i++) {
    int64_t d = 0;
    if (!ts_rt_wrap_dim(c, dims[i], a->ndim, &d)) return NULL;
    if (flip[d]) {
      ts_rt_fail(c, "dim %lld appears multiple times in the list of dims", (long long)d);
      return NULL;
    }
    flip[d] = true;
  }
  if (a->ndim == 0) return ts_rt_clone(c, a);
  return sh_flip_roll(c, a, flip, NULL);
}

static ts_rt_tensor *sh_roll(ts_rt_ctx *c, const ts_rt_tensor *a, const int64_t *shifts, uint32_t ns,
                             const int64_t *dims, uint32_t nd) {
  if (nd == 0 && ns == 1) {
    /* no dims: roll the flattened tensor */
    int64_t m1 = -1, d0 = 0;
    ts_rt_tensor *flat = ts_rt_reshape(c, a, 1, &m1);
    if (!flat) return NULL;
    ts_rt_tensor *rolled = sh_roll(c, flat, shifts, 1, &d0, 1);
    ts_rt_tensor_release(flat);
    if (!rolled) return NULL;
    ts_rt_tensor *r = ts_rt_view(c, rolled, a->ndim, a->sizes);
    ts_rt_tensor_release(rolled);
    return r;
  }
  if (ns != nd) {
    ts_rt_fail(c, "shifts and dimensions must align. shifts: %u, dims:%u", (unsigned)ns, (unsigned)nd);
    return NULL;
  }
  int64_t shift[TS_RT_MAX_DIMS] = {0};
  for (uint32_t i = 0; i < nd; i++) {
    int64_t d = 0;
    if (!ts_rt_wrap_dim(c, dims[i], a->ndim, &d)) return NULL;
    if (a->ndim == 0) continue;
    int64_t n = a->sizes[d];
    if (n > 0) shift[d] = (shift[d] + shifts[i] % n) % n;
  }
  if (a->ndim == 0) return ts_rt_clone(c, a);
  return sh_flip_roll(c, a, NULL, shift);
}

/* Reads index element k (int32 or int64) of a contiguous index tensor. */
static inline int64_t sh_idx_at(const void *p, ts_dtype dt, int64_t k) {
  return dt == TS_DT_INT32 ? ((const int32_t *)p)[k] : ((const int64_t *)p)[k];
}

static ts_rt_tensor *sh_index_select(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t dim, const ts_rt_tensor *index) {
  if (index->dtype != TS_DT_INT64 && index->dtype != TS_DT_INT32) {
    ts_rt_fail(c, "index_select(): Expected dtype int32 or int64 for index");
    return NULL;
  }
  if (index->ndim > 1) {
    ts_rt_fail(c, "index_select(): Index is supposed to be a vector");
    return NULL;
  }
  if (!ts_rt_wrap_dim(c, dim, a->ndim, &dim)) return NULL;
  ts_rt_tensor *idx = ts_rt_tensor_contiguous(c, (ts_rt_tensor *)index);
  if (!idx) return NULL;
  int64_t ni = ts_rt_tensor_numel(idx);
  const void *ip = ts_rt_tensor_data(idx);
  int64_t dsize = a->ndim ? a->sizes[dim] : 1;
  for (int64_t k = 0; k < ni; k++) {
    int64_t v = sh_idx_at(ip, (ts_dtype)idx->dtype, k);
    if (v < 0 || v >= dsize) {
      ts_rt_tensor_release(idx);
      /* PyTorch's two CPU paths word it differently: the dim-0 and 1-d one,
       * and the general one. */
      if (dim == 0 || a->ndim <= 1)
        ts_rt_fail(c, "index out of range in self");
      else
        ts_rt_fail(c, "INDICES element is out of DATA bounds, id=%lld axis_dim=%lld", (long long)v, (long long)dsize);
      return NULL;
    }
  }
  ts_rt_tensor *r;
  if (a->ndim == 0) {
    r = ts_rt_clone(c, a);
  } else {
    int64_t sizes[TS_RT_MAX_DIMS];
    memcpy(sizes, a->sizes, sizeof(int64_t) * (size_t)a->ndim);
    sizes[dim] = ni;
    r = ts_rt_tensor_new(c, (ts_dtype)a->dtype, a->ndim, sizes, false);
    if (r && ts_rt_tensor_numel(r) > 0) {
      int64_t *maps[TS_RT_MAX_DIMS];
      int64_t *block = sh_maps_new(c, a->ndim, sizes, a->strides, maps);
      if (!block) {
        ts_rt_tensor_release(r);
        r = NULL;
      } else {
        for (int64_t k = 0; k < ni; k++) maps[dim][k] = sh_idx_at(ip, (ts_dtype)idx->dtype, k) * a->strides[dim];
        sh_gcopy_run(c, a, r, a->ndim, sizes, maps);
        ts_rt_free(block);
      }
    }
  }
  ts_rt_tensor_release(idx);
  return r;
}

/* gather: out[i][j] = a[index[i][j]][j] along dim (index int64, same rank,
 * no bigger than a outside dim). */
static ts_rt_tensor *sh_gather(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t dim, const ts_rt_tensor *index) {
  if (!ts_rt_wrap_dim(c, dim, a->ndim, &dim)) return NULL;
  /* ATen checks the dtype of a non-empty index only */
  if (index->dtype != TS_DT_INT64 && ts_rt_tensor_numel(index) != 0) {
    ts_rt_fail(c, "gather(): Expected dtype int64 for index");
    return NULL;
  }
  int32_t an = a->ndim > 0 ? a->ndim : 1, in = index->ndim > 0 ? index->ndim : 1;
  if (ts_rt_tensor_numel(index) != 0 && an != in) {
    ts_rt_fail(c, "Index tensor must have the same number of dimensions as input tensor");
    return NULL;
  }
  if (ts_rt_tensor_numel(index) != 0) {
    for (int32_t d = 0; d < index->ndim && d < a->ndim; d++)
      if (d != dim && index->sizes[d] > a->sizes[d]) {
        char b1[SH_SHAPE_CAP], b2[SH_SHAPE_CAP];
        ts_rt_fail(c, "Size does not match at dimension %d expected index %s to be smaller than self %s apart from "
                   "dimension %lld", (int)d, sh_fmt_shape(b1, sizeof b1, index->ndim, index->sizes),
                   sh_fmt_shape(b2, sizeof b2, a->ndim, a->sizes), (long long)dim);
        return NULL;
      }
  }
  ts_rt_tensor *r = ts_rt_tensor_new(c, (ts_dtype)a->dtype, index->ndim, index->sizes, false);
  int64_t numel = r ? ts_rt_tensor_numel(r) : 0;
  if (!r || numel == 0) return r;
  int32_t nd = index->ndim;
  int64_t idx[TS_RT_MAX_DIMS] = {0}, offs[2] = {index->offset, a->offset};
  int64_t astr[TS_RT_MAX_DIMS] = {0};
  for (int32_t d = 0; d < nd && d < a->ndim; d++) astr[d] = d == dim ? 0 : a->strides[d];
  const int64_t *strides[2] = {index->strides, astr};
  int64_t dsize = a->ndim ? a->sizes[dim] : 1, dstride = a->ndim ? a->strides[dim] : 0;
  const int64_t *ip = index->storage->data;
  const char *ap = a->storage->data;
  char *rp = ts_rt_tensor_data(r);
  size_t esz = ts_dtype_size((ts_dtype)a->dtype);
  for (int64_t k = 0; k < numel; k++) {
    int64_t v = ip[offs[0]];
    if (v < 0 || v >= dsize) {
      ts_rt_tensor_release(r);
      ts_rt_fail(c, "index %lld is out of bounds for dimension %lld with size %lld", (long long)v, (long long)dim,
                 (long long)dsize);
      return NULL;
    }
    memcpy(rp + (size_t)k * esz, ap + (size_t)(offs[1] + v * dstride) * esz, esz);
    sh_step(nd, index->sizes, idx, 2, strides, offs);
  }
  return r;
}

/* nonzero: [n, ndim] int64 coordinates of the nonzero elements, row-major. */
static ts_rt_tensor *sh_nonzero(ts_rt_ctx *c, const ts_rt_tensor *a) {
  int64_t numel = ts_rt_tensor_numel(a), count = 0;
  int32_t nd = a->ndim;
  size_t esz = ts_dtype_size((ts_dtype)a->dtype);
  const char *base = a->storage->data;
  int64_t idx[TS_RT_MAX_DIMS] = {0}, off = a->offset;
  const int64_t *strides[1] = {a->strides};
  for (int64_t k = 0; k < numel; k++) {
    if (ts_rt_load_f64(base + (size_t)off * esz, (ts_dtype)a->dtype) != 0.0) count++;
    sh_step(nd, a->sizes, idx, 1, strides, &off);
  }
  int64_t sizes[2] = {count, nd};
  ts_rt_tensor *r = ts_rt_tensor_new(c, TS_DT_INT64, 2, sizes, false);
  /* a 0-d input's coordinates have no columns (and r no bytes) */
  if (!r || count == 0 || nd == 0) return r;
  int64_t *rp = ts_rt_tensor_data(r);
  memset(idx, 0, sizeof idx);
  off = a->offset;
  for (int64_t k = 0; k < numel; k++) {
    if (ts_rt_load_f64(base + (size_t)off * esz, (ts_dtype)a->dtype) != 0.0) {
      memcpy(rp, idx, sizeof(int64_t) * (size_t)nd);
      rp += nd;
    }
    sh_step(nd, a->sizes, idx, 1, strides, &off);
  }
  return r;
}

/* Broadcast shape of two shapes into out (PyTorch's infer_size). */
static bool sh_broadcast(int32_t na, const int64_t *a, int32_t nb, const int64_t *b, int32_t *nout, int64_t *out) {
  int32_t n = na > nb ? na : nb;
  for (int32_t i = n - 1; i >= 0; i--) {
    int32_t ia = i - (n - na), ib = i - (n - nb);
    int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1) return false;
    out[i] = sa == 1 ? sb : sa;
  }
  *nout = n;
  return true;
}

static ts_rt_tensor *sh_masked_select(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *mask) {
  if (mask->dtype != TS_DT_BOOL && mask->dtype != TS_DT_UINT8) {
    ts_rt_fail(c, "masked_select: expected BoolTensor or ByteTensor for mask");
    return NULL;
  }
  int64_t shape[TS_RT_MAX_DIMS];
  int32_t nd;
  if (!sh_broadcast(a->ndim, a->sizes, mask->ndim, mask->sizes, &nd, shape)) {
    int32_t n = a->ndim > mask->ndim ? a->ndim : mask->ndim;
    for (int32_t i = n - 1; i >= 0; i--) {
      int32_t ia = i - (n - a->ndim), ib = i - (n - mask->ndim);
      int64_t sa = ia >= 0 ? a->sizes[ia] : 1, sb = ib >= 0 ? mask->sizes[ib] : 1;
      if (sa != sb && sa != 1 && sb != 1) {
        /* PyTorch broadcasts (mask, self): the mask is "tensor a" */
        ts_rt_fail(c, "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton "
                   "dimension %d", (long long)sb, (long long)sa, (int)i);
        break;
      }
    }
    return NULL;
  }
  ts_rt_tensor *ea = ts_rt_expand(c, a, nd, shape), *em = ts_rt_expand(c, mask, nd, shape);
  ts_rt_tensor *r = NULL;
  if (ea && em) {
    int64_t numel = ts_rt_tensor_numel(ea), count = 0;
    int64_t idx[TS_RT_MAX_DIMS] = {0}, offs[2] = {em->offset, ea->offset};
    const int64_t *strides[2] = {em->strides, ea->strides};
    const uint8_t *mp = em->storage->data;
    for (int64_t k = 0; k < numel; k++) {
      count += mp[offs[0]] != 0;
      sh_step(nd, shape, idx, 2, strides, offs);
    }
    r = ts_rt_tensor_new(c, (ts_dtype)a->dtype, 1, &count, false);
    if (r && count > 0) {
      size_t esz = ts_dtype_size((ts_dtype)a->dtype);
      char *rp = ts_rt_tensor_data(r);
      const char *ap = ea->storage->data;
      memset(idx, 0, sizeof idx);
      offs[0] = em->offset;
      offs[1] = ea->offset;
      for (int64_t k = 0; k < numel; k++) {
        if (mp[offs[0]]) {
          memcpy(rp, ap + (size_t)offs[1] * esz, esz);
          rp += esz;
        }
        sh_step(nd, shape, idx, 2, strides, offs);
      }
    }
  }
  ts_rt_tensor_release(ea);
  ts_rt_tensor_release(em);
  return r;
}

/* Advanced indexing (aten::index.Tensor): bool/uint8 masks become their
 * nonzero coordinates, index tensors broadcast to one shape B; the result is
 * the plain dims around B when the indexed dims are adjacent, else B first
 * and then the plain dims. `idx` holds n entries, NULL for None. */
static ts_rt_tensor *sh_index(ts_rt_ctx *c, const ts_rt_tensor *self, ts_rt_tensor *const *idx, uint32_t n) {
  ts_rt_tensor *a = (ts_rt_tensor *)self;
  ts_rt_tensor_retain(a);
  /* per self dim after mask expansion: the long index tensor or NULL */
  ts_rt_tensor *dimidx[TS_RT_MAX_DIMS] = {NULL};
  ts_rt_tensor *owned[TS_RT_MAX_DIMS * 2];
  uint32_t nowned = 0;
  ts_rt_tensor *r = NULL;
  int32_t pos = 0, got = 0;
  char b1[SH_SHAPE_CAP], b2[SH_SHAPE_CAP];
  for (uint32_t i = 0; i < n; i++) {
    ts_rt_tensor *t = idx[i];
    if (!t) {
      pos++;
      continue;
    }
    ts_dtype dt = (ts_dtype)t->dtype;
    if (dt != TS_DT_INT64 && dt != TS_DT_BOOL && dt != TS_DT_UINT8) {
      ts_rt_fail(c, "tensors used as indices must be long, byte or bool tensors");
      goto done;
    }
    if (dt == TS_DT_INT64) {
      if (pos >= TS_RT_MAX_DIMS) {
        got = pos + 1;
        goto too_many;
      }
      dimidx[pos++] = t;
      continue;
    }
    if (t->ndim == 0) {
      /* x[True] adds a dim of size 1 here, x[False] one of size 0 */
      ts_rt_tensor *u = ts_rt_unsqueeze(c, a, pos > a->ndim ? a->ndim : pos);
      if (!u) goto done;
      ts_rt_tensor_release(a);
      a = u;
      int64_t cnt = ts_rt_load_f64(ts_rt_tensor_data(t), dt) != 0.0 ? 1 : 0;
      ts_rt_tensor *z = ts_rt_tensor_new(c, TS_DT_INT64, 1, &cnt, true);
      if (!z) goto done;
      owned[nowned++] = z;
      dimidx[pos++] = z;
      continue;
    }
    for (int32_t k = 0; k < t->ndim; k++) {
      if (pos + k >= a->ndim) {
        got = pos + t->ndim;
        goto too_many;
      }
      if (t->sizes[k] != a->sizes[pos + k]) {
        ts_rt_fail(c, "The shape of the mask %s at index %d does not match the shape of the indexed tensor %s at "
                   "index %d", sh_fmt_shape(b1, sizeof b1, t->ndim, t->sizes), (int)k,
                   sh_fmt_shape(b2, sizeof b2, a->ndim, a->sizes), (int)(pos + k));
        goto done;
      }
    }
    ts_rt_tensor *nz = sh_nonzero(c, t);
    if (!nz) goto done;
    owned[nowned++] = nz;
    for (int32_t k = 0; k < t->ndim; k++) {
      ts_rt_tensor *col = ts_rt_select(c, nz, 1, k);
      if (!col) goto done;
      owned[nowned++] = col;
      dimidx[pos++] = col;
    }
  }
  got = pos;
  if (pos > a->ndim) {
  too_many:
    ts_rt_fail(c, "too many indices for tensor of dimension %d (got %d)", (int)self->ndim, (int)got);
    goto done;
  }
  /* broadcast shape of the index tensors; where the indexed dims are */
  int64_t bshape[TS_RT_MAX_DIMS];
  int32_t bnd = 0, first = -1, last = -1, count = 0;
  for (int32_t d = 0; d < a->ndim; d++) {
    ts_rt_tensor *t = dimidx[d];
    if (!t) continue;
    if (first < 0) first = d;
    last = d;
    count++;
    int64_t tmp[TS_RT_MAX_DIMS];
    int32_t tn;
    if (!sh_broadcast(bnd, bshape, t->ndim, t->sizes, &tn, tmp)) {
      size_t len = 0;
      char msg[SH_SHAPE_CAP * 4];
      len += (size_t)snprintf(msg, sizeof msg, "shape mismatch: indexing tensors could not be broadcast together with "
                              "shapes ");
      int32_t m = 0;
      for (int32_t e = 0; e < a->ndim && len + SH_SHAPE_CAP < sizeof msg; e++)
        if (dimidx[e])
          len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s", m++ ? ", " : "",
                                  sh_fmt_shape(b1, sizeof b1, dimidx[e]->ndim, dimidx[e]->sizes));
      ts_rt_fail(c, "%s", msg);
      goto done;
    }
    bnd = tn;
    memcpy(bshape, tmp, sizeof(int64_t) * (size_t)tn);
  }
  if (count == 0) {
    /* PyTorch fails here too (an internal assert); x[None] never gets here */
    ts_rt_fail(c, "index: at least one index must be a tensor");
    goto done;
  }
  bool adjacent = last - first + 1 == count;
  int64_t bnumel = 1;
  for (int32_t d = 0; d < bnd; d++)
    if (!sh_mul(bnumel, bshape[d], &bnumel)) {
      ts_rt_fail(c, "index: result too large");
      goto done;
    }
  /* offsets (in elements) of the indexed dims for each broadcast position */
  int64_t *table = ts_rt_calloc((size_t)(bnumel > 0 ? bnumel : 1), sizeof(int64_t));
  if (!table) {
    ts_rt_oom(c);
    goto done;
  }
  for (int32_t d = 0; d < a->ndim; d++) {
    if (!dimidx[d]) continue;
    ts_rt_tensor *e = ts_rt_expand(c, dimidx[d], bnd, bshape);
    ts_rt_tensor *ct = e ? ts_rt_tensor_contiguous(c, e) : NULL;
    ts_rt_tensor_release(e);
    if (!ct) {
      ts_rt_free(table);
      goto done;
    }
    const int64_t *vp = ts_rt_tensor_data(ct);
    int64_t size = a->sizes[d];
    for (int64_t k = 0; k < bnumel; k++) {
      int64_t v = vp[k];
      if (v < -size || v >= size) {
        ts_rt_tensor_release(ct);
        ts_rt_free(table);
        ts_rt_fail(c, "index %lld is out of bounds for dimension %d with size %lld", (long long)v, (int)d,
                   (long long)size);
        goto done;
      }
      table[k] += (v < 0 ? v + size : v) * a->strides[d];
    }
    ts_rt_tensor_release(ct);
  }
  /* result shape, and the collapsed dims (B as one) the copy walks */
  int64_t rshape[TS_RT_MAX_DIMS], csizes[TS_RT_MAX_DIMS], cstrides[TS_RT_MAX_DIMS];
  int32_t rn = 0, cn = 0, bpos = 0;
  if (!sh_check_ndim(c, (int64_t)a->ndim - count + bnd)) {
    ts_rt_free(table);
    goto done;
  }
  for (int32_t d = 0; d <= a->ndim; d++) {
    bool at_b = adjacent ? d == first : d == 0;
    if (at_b) {
      memcpy(rshape + rn, bshape, sizeof(int64_t) * (size_t)bnd);
      rn += bnd;
      bpos = cn;
      csizes[cn] = bnumel;
      cstrides[cn++] = 0;
    }
    if (d < a->ndim && !dimidx[d]) {
      rshape[rn++] = a->sizes[d];
      csizes[cn] = a->sizes[d];
      cstrides[cn++] = a->strides[d];
    }
  }
  r = ts_rt_tensor_new(c, (ts_dtype)a->dtype, rn, rshape, false);
  if (r && ts_rt_tensor_numel(r) > 0) {
    int64_t *maps[TS_RT_MAX_DIMS + 1];
    int64_t *block = sh_maps_new(c, cn, csizes, cstrides, maps);
    if (!block) {
      ts_rt_tensor_release(r);
      r = NULL;
    } else {
      maps[bpos] = table;
      sh_gcopy_run(c, a, r, cn, csizes, maps);
      ts_rt_free(block);
    }
  }
  ts_rt_free(table);
done:
  for (uint32_t i = 0; i < nowned; i++) ts_rt_tensor_release(owned[i]);
  ts_rt_tensor_release(a);
  return r;
}

/* ------------------------------------------------------- kernel bodies */

#define SH_TENSOR(i, name) \
  ts_rt_tensor *name = NULL; \
  if (!ts_rt_arg_tensor(ctx, call, i, &name)) return false
#define SH_INT(i, name) \
  int64_t name = 0;                                                                                                    \
  if (!ts_rt_arg_int(ctx, call, i, &name)) return false
#define SH_INTS(i, name, nname) \
  int64_t name[TS_RT_MAX_DIMS]; \
  uint32_t nname = 0; \
  if (!ts_rt_arg_ints(ctx, call, i, name, TS_RT_MAX_DIMS, &nname, 0)) return false

static bool sh_k_view(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INTS(1, s, n);
  return sh_put(call, ts_rt_view(ctx, a, (int32_t)n, s));
}

/* view.dtype: a reinterpretation of the bytes (same element size only). */
static bool sh_k_view_dtype(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  ts_dtype dt = TS_DT_NONE;
  if (!ts_rt_arg_opt_dtype(ctx, call, 1, &dt)) return false;
  if (dt == TS_DT_NONE) return ts_rt_arg_bad(ctx, call, 1, "ScalarType");
  if (ts_dtype_size(dt) != ts_dtype_size((ts_dtype)a->dtype))
    return ts_rt_fail(ctx, "tsaot: view(dtype) between %s and %s (different element sizes) is not supported",
                      ts_dtype_name((ts_dtype)a->dtype), ts_dtype_name(dt));
  ts_rt_tensor *r = sh_alias(ctx, a);
  if (r) r->dtype = (int8_t)dt;
  return sh_put(call, r);
}

static bool sh_k_reshape(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INTS(1, s, n);
  return sh_put(call, ts_rt_reshape(ctx, a, (int32_t)n, s));
}

static bool sh_k_view_as(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_TENSOR(1, o);
  return sh_put(call, ts_rt_view(ctx, a, o->ndim, o->sizes));
}

static bool sh_k_reshape_as(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_TENSOR(1, o);
  return sh_put(call, ts_rt_reshape(ctx, a, o->ndim, o->sizes));
}

static bool sh_k_flatten(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INT(1, s);
  SH_INT(2, e);
  if (!ts_rt_wrap_dim(ctx, s, a->ndim, &s) || !ts_rt_wrap_dim(ctx, e, a->ndim, &e)) return false;
  if (s > e) return ts_rt_fail(ctx, "flatten() has invalid args: start_dim cannot come after end_dim");
  if (a->ndim == 0) {
    int64_t one = 1;
    return sh_put(call, ts_rt_reshape(ctx, a, 1, &one));
  }
  if (s == e) {
    ts_rt_tensor_retain(a);
    return sh_put(call, a);
  }
  int64_t shape[TS_RT_MAX_DIMS];
  int32_t n = 0;
  for (int32_t d = 0; d < s; d++) shape[n++] = a->sizes[d];
  int64_t prod = 1;
  for (int64_t d = s; d <= e; d++) prod *= a->sizes[d];
  shape[n++] = prod;
  for (int32_t d = (int32_t)e + 1; d < a->ndim; d++) shape[n++] = a->sizes[d];
  return sh_put(call, ts_rt_reshape(ctx, a, n, shape));
}

static bool sh_k_unflatten(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INT(1, dim);
  SH_INTS(2, s, n);
  if (!ts_rt_wrap_dim(ctx, dim, a->ndim, &dim)) return false;
  if (n == 0) return ts_rt_fail(ctx, "unflatten: sizes must be non-empty");
  if (a->ndim == 0) return ts_rt_fail(ctx, "unflatten: Dimension size must be non-zero");
  int64_t inferred[TS_RT_MAX_DIMS];
  /* the sizes must multiply up to the dim's size (one -1 inferred) */
  int64_t prod = 1;
  int ninf = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (s[i] == -1) ninf++;
    else prod *= s[i];
  }
  char b[SH_SHAPE_CAP];
  if (ninf > 1) return ts_rt_fail(ctx, "only one dimension can be inferred");
  if ((ninf == 0 && prod != a->sizes[dim]) || (ninf == 1 && (prod == 0 || a->sizes[dim] % prod != 0)))
    return ts_rt_fail(ctx, "unflatten: Provided sizes %s don't multiply up to the size of dim %lld (%lld) in the input "
                      "tensor", sh_fmt_shape(b, sizeof b, (int32_t)n, s), (long long)dim, (long long)a->sizes[dim]);
  for (uint32_t i = 0; i < n; i++) inferred[i] = s[i] == -1 ? a->sizes[dim] / prod : s[i];
  int64_t shape[TS_RT_MAX_DIMS];
  int32_t m = 0;
  if (!sh_check_ndim(ctx, (int64_t)a->ndim - 1 + n)) return false;
  for (int32_t d = 0; d < a->ndim; d++) {
    if (d == dim) {
      for (uint32_t i = 0; i < n; i++) shape[m++] = inferred[i];
    } else {
      shape[m++] = a->sizes[d];
    }
  }
  return sh_put(call, ts_rt_view(ctx, a, m, shape));
}

static bool sh_k_squeeze(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  return sh_put(call, sh_squeeze_all(ctx, a));
}

static bool sh_k_squeeze_dim(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INT(1, d);
  return sh_put(call, ts_rt_squeeze_dim(ctx, a, d));
}

static bool sh_k_unsqueeze(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INT(1, d);
  return sh_put(call, ts_rt_unsqueeze(ctx, a, d));
}

static bool sh_k_transpose(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INT(1, d0);
  SH_INT(2, d1);
  return sh_put(call, ts_rt_transpose(ctx, a, d0, d1));
}

static bool sh_k_permute(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INTS(1, dims, n);
  if ((int32_t)n != a->ndim)
    return ts_rt_fail(ctx, "permute(sparse_coo): number of dimensions in the tensor input does not match the length of "
                      "the desired ordering of dimensions i.e. input.dim() = %d is not equal to len(dims) = %u",
                      (int)a->ndim, (unsigned)n);
  return sh_put(call, ts_rt_permute(ctx, a, dims));
}

static bool sh_k_t(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  if (a->ndim > 2) return ts_rt_fail(ctx, "t() expects a tensor with <= 2 dimensions, but self is %dD", (int)a->ndim);
  return sh_put(call, a->ndim < 2 ? sh_alias(ctx, a) : ts_rt_transpose(ctx, a, 0, 1));
}

static bool sh_k_contiguous(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  return sh_put(call, ts_rt_tensor_contiguous(ctx, a));
}

static bool sh_k_detach(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  ts_rt_tensor *r = sh_alias(ctx, a);
  if (r) r->requires_grad = false;
  return sh_put(call, r);
}

static bool sh_k_expand(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INTS(1, s, n);
  return sh_put(call, ts_rt_expand(ctx, a, (int32_t)n, s));
}

static bool sh_k_expand_as(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_TENSOR(1, o);
  return sh_put(call, ts_rt_expand(ctx, a, o->ndim, o->sizes));
}

static bool sh_k_select(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INT(1, d);
  SH_INT(2, i);
  return sh_put(call, ts_rt_select(ctx, a, d, i));
}

static bool sh_k_slice(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INT(1, d);
  int64_t start = 0, end = INT64_MAX;
  bool has;
  if (!ts_rt_arg_opt_int(ctx, call, 2, &start, &has)) return false;
  if (!has) start = 0;
  if (!ts_rt_arg_opt_int(ctx, call, 3, &end, &has)) return false;
  if (!has) end = INT64_MAX;
  SH_INT(4, step);
  return sh_put(call, ts_rt_slice(ctx, a, d, start, end, step));
}

static bool sh_k_narrow(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INT(1, d);
  SH_INT(2, start);
  SH_INT(3, len);
  return sh_put(call, ts_rt_narrow(ctx, a, d, start, len));
}

static bool sh_k_narrow_tensor(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INT(1, d);
  SH_TENSOR(2, st);
  SH_INT(3, len);
  if (st->ndim != 0 || !ts_rt_dtype_is_integral((ts_dtype)st->dtype, false))
    return ts_rt_fail(ctx, "start must be an 0-dim integral Tensor.");
  int64_t start = ts_rt_load_i64(ts_rt_tensor_data(st), (ts_dtype)st->dtype);
  return sh_put(call, ts_rt_narrow(ctx, a, d, start, len));
}

static bool sh_k_chunk(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INT(1, chunks);
  SH_INT(2, dim);
  int64_t *starts = NULL, *ends = NULL;
  uint32_t n = 0;
  if (!sh_chunk_bounds(ctx, a, chunks, &dim, &starts, &ends, &n)) return false;
  bool ok = sh_split_put(ctx, call, a, dim, starts, ends, n);
  ts_rt_free(starts);
  return ok;
}

static bool sh_k_split(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INT(1, size);
  SH_INT(2, dim);
  int64_t *starts = NULL, *ends = NULL;
  uint32_t n = 0;
  if (!sh_split_bounds(ctx, a, &dim, size, &starts, &ends, &n)) return false;
  bool ok = sh_split_put(ctx, call, a, dim, starts, ends, n);
  ts_rt_free(starts);
  return ok;
}

static bool sh_k_split_sizes(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  ts_rt_list *l = NULL;
  if (!ts_rt_arg_list(ctx, call, 1, &l)) return false;
  SH_INT(2, dim);
  int64_t *starts = NULL, *ends = NULL;
  uint32_t n = 0;
  if (!sh_split_sizes_bounds(ctx, a, &dim, l, &starts, &ends, &n)) return false;
  bool ok = sh_split_put(ctx, call, a, dim, starts, ends, n);
  ts_rt_free(starts);
  return ok;
}

static bool sh_k_unbind(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INT(1, dim);
  if (a->ndim == 0) return ts_rt_fail(ctx, "Dimension specified as 0 but tensor has no dimensions");
  if (!ts_rt_wrap_dim(ctx, dim, a->ndim, &dim)) return false;
  int64_t n = a->sizes[dim];
  if (n > UINT32_MAX / 4) return ts_rt_fail(ctx, "unbind: too many pieces");
  ts_rt_tensor **ts = ts_rt_malloc(sizeof(ts_rt_tensor *) * (size_t)(n ? n : 1));
  if (!ts) return ts_rt_oom(ctx);
  for (int64_t i = 0; i < n; i++)
    if (!(ts[i] = ts_rt_select(ctx, a, dim, i))) {
      for (int64_t k = 0; k < i; k++) ts_rt_tensor_release(ts[k]);
      ts_rt_free(ts);
      return false;
    }
  bool ok = sh_put_list(ctx, call, ts, (uint32_t)n);
  ts_rt_free(ts);
  return ok;
}

static bool sh_k_tsplit_sections(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INT(1, sections);
  SH_INT(2, dim);
  return sh_tsplit_sections(ctx, call, a, sections, dim);
}

static bool sh_k_tsplit_indices(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  ts_rt_list *l = NULL;
  if (!ts_rt_arg_list(ctx, call, 1, &l)) return false;
  SH_INT(2, dim);
  int64_t *idx = ts_rt_malloc(sizeof(int64_t) * (l->n ? l->n : 1));
  if (!idx) return ts_rt_oom(ctx);
  for (uint32_t i = 0; i < l->n; i++) {
    if (l->items[i].tag != TS_IV_INT) {
      ts_rt_free(idx);
      return ts_rt_fail(ctx, "tensor_split: expected List[int] indices");
    }
    idx[i] = l->items[i].u.i;
  }
  bool ok = sh_tsplit_indices(ctx, call, a, idx, l->n, dim);
  ts_rt_free(idx);
  return ok;
}

static bool sh_k_tsplit_tensor(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_TENSOR(1, t);
  SH_INT(2, dim);
  if (t->dtype != TS_DT_INT64)
    return ts_rt_fail(ctx, "tensor_split expected tensor_indices_or_sections to have dtype of long, but got %s",
                      ts_dtype_name((ts_dtype)t->dtype));
  if (t->ndim > 1)
    return ts_rt_fail(ctx, "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                      "one-dimensional tensor, but got a tensor with %d dims", (int)t->ndim);
  if (t->ndim == 0) return sh_tsplit_sections(ctx, call, a, *(const int64_t *)ts_rt_tensor_data(t), dim);
  ts_rt_tensor *ct = ts_rt_tensor_contiguous(ctx, t);
  if (!ct) return false;
  if (ct->sizes[0] > UINT32_MAX / 4) {
    ts_rt_tensor_release(ct);
    return ts_rt_fail(ctx, "tensor_split: too many indices");
  }
  bool ok = sh_tsplit_indices(ctx, call, a, ts_rt_tensor_data(ct), (uint32_t)ct->sizes[0], dim);
  ts_rt_tensor_release(ct);
  return ok;
}

/* Tensor[] argument as a borrowed array (malloc'd; the list owns the
 * tensors). */
static bool sh_arg_tensors(ts_rt_ctx *ctx, ts_rt_call *call, uint32_t i, ts_rt_tensor ***out, uint32_t *n) {
  ts_rt_list *l = NULL;
  if (!ts_rt_arg_list(ctx, call, i, &l)) return false;
  ts_rt_tensor **ts = ts_rt_malloc(sizeof(ts_rt_tensor *) * (l->n ? l->n : 1));
  if (!ts) return ts_rt_oom(ctx);
  for (uint32_t k = 0; k < l->n; k++) {
    if (l->items[k].tag != TS_IV_TENSOR) {
      ts_rt_free(ts);
      return ts_rt_fail(ctx, "argument %u: expected List[Tensor]", (unsigned)i);
    }
    ts[k] = l->items[k].u.t;
  }
  *out = ts;
  *n = l->n;
  return true;
}

static bool sh_k_cat(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor **ts;
  uint32_t n = 0;
  SH_INT(1, dim);
  if (!sh_arg_tensors(ctx, call, 0, &ts, &n)) return false;
  ts_rt_tensor *r = ts_rt_cat(ctx, ts, n, dim);
  ts_rt_free(ts);
  return sh_put(call, r);
}

static bool sh_k_cat_out(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor **ts;
  uint32_t n = 0;
  SH_INT(1, dim);
  SH_TENSOR(2, out);
  if (!sh_arg_tensors(ctx, call, 0, &ts, &n)) return false;
  ts_rt_tensor *r = ts_rt_cat(ctx, ts, n, dim);
  ts_rt_free(ts);
  return sh_put_out(ctx, call, out, r);
}

static bool sh_k_stack(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor **ts;
  uint32_t n = 0;
  SH_INT(1, dim);
  if (!sh_arg_tensors(ctx, call, 0, &ts, &n)) return false;
  ts_rt_tensor *r = ts_rt_stack(ctx, ts, n, dim);
  ts_rt_free(ts);
  return sh_put(call, r);
}

static bool sh_k_stack_out(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor **ts;
  uint32_t n = 0;
  SH_INT(1, dim);
  SH_TENSOR(2, out);
  if (!sh_arg_tensors(ctx, call, 0, &ts, &n)) return false;
  ts_rt_tensor *r = ts_rt_stack(ctx, ts, n, dim);
  ts_rt_free(ts);
  return sh_put_out(ctx, call, out, r);
}

static bool sh_k_repeat(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INTS(1, rep, n);
  return sh_put(call, sh_repeat(ctx, a, n, rep));
}

static bool sh_k_repeat_out(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INTS(1, rep, n);
  SH_TENSOR(2, out);
  return sh_put_out(ctx, call, out, sh_repeat(ctx, a, n, rep));
}

static bool sh_k_flip(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INTS(1, dims, n);
  return sh_put(call, sh_flip(ctx, a, dims, n));
}

static bool sh_k_flip_out(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INTS(1, dims, n);
  SH_TENSOR(2, out);
  return sh_put_out(ctx, call, out, sh_flip(ctx, a, dims, n));
}

static bool sh_k_roll(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  int64_t shifts[TS_RT_MAX_DIMS], dims[TS_RT_MAX_DIMS];
  uint32_t ns = 0, nd = 0;
  if (!ts_rt_arg_ints(ctx, call, 1, shifts, TS_RT_MAX_DIMS, &ns, 1)) return false;
  if (!ts_rt_arg_ints(ctx, call, 2, dims, TS_RT_MAX_DIMS, &nd, 1)) return false;
  ts_rt_tensor *r = sh_roll(ctx, a, shifts, ns, dims, nd);
  if (call->nin > 3) {
    SH_TENSOR(3, out);
    return sh_put_out(ctx, call, out, r);
  }
  return sh_put(call, r);
}

static bool sh_k_index_select(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INT(1, dim);
  SH_TENSOR(2, idx);
  ts_rt_tensor *r = sh_index_select(ctx, a, dim, idx);
  if (call->nin > 3) {
    SH_TENSOR(3, out);
    return sh_put_out(ctx, call, out, r);
  }
  return sh_put(call, r);
}

static bool sh_k_gather(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INT(1, dim);
  SH_TENSOR(2, idx);
  return sh_put(call, sh_gather(ctx, a, dim, idx));
}

static bool sh_k_index(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  ts_rt_list *l = NULL;
  if (!ts_rt_arg_list(ctx, call, 1, &l)) return false;
  if (l->n > TS_RT_MAX_DIMS) return ts_rt_fail(ctx, "too many indices for tensor of dimension %d (got %u)",
                                               (int)a->ndim, (unsigned)l->n);
  ts_rt_tensor *idx[TS_RT_MAX_DIMS];
  for (uint32_t i = 0; i < l->n; i++) {
    if (l->items[i].tag == TS_IV_NONE) idx[i] = NULL;
    else if (l->items[i].tag == TS_IV_TENSOR) idx[i] = l->items[i].u.t;
    else return ts_rt_fail(ctx, "argument 1: expected List[Optional[Tensor]]");
  }
  ts_rt_tensor *r = sh_index(ctx, a, idx, l->n);
  if (call->nin > 2) {
    SH_TENSOR(2, out);
    return sh_put_out(ctx, call, out, r);
  }
  return sh_put(call, r);
}

static bool sh_k_masked_select(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_TENSOR(1, m);
  ts_rt_tensor *r = sh_masked_select(ctx, a, m);
  if (call->nin > 2) {
    SH_TENSOR(2, out);
    return sh_put_out(ctx, call, out, r);
  }
  return sh_put(call, r);
}

static bool sh_k_nonzero(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  ts_rt_tensor *r = sh_nonzero(ctx, a);
  if (call->nin > 1) {
    SH_TENSOR(1, out);
    return sh_put_out(ctx, call, out, r);
  }
  return sh_put(call, r);
}

/* where(condition) -> Tensor[]: nonzero(condition).unbind(1) (a 0-d
 * condition taken as 1-d), one int64 index tensor per dimension, as the
 * detection models' torch.where(mask)[0] reads them. */
static bool sh_k_where_cond(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  int64_t one = 1;
  ts_rt_tensor *a1 = a->ndim == 0 ? ts_rt_tensor_view(ctx, a, a->offset, 1, &one, &one) : NULL;
  if (a->ndim == 0 && !a1) return false;
  ts_rt_tensor *nz = sh_nonzero(ctx, a1 ? a1 : a);
  if (a1) ts_rt_tensor_release(a1);
  if (!nz) return false;
  int64_t n = nz->sizes[1];
  ts_rt_tensor *ts[TS_RT_MAX_DIMS];
  bool ok = true;
  for (int64_t i = 0; i < n && ok; i++)
    if (!(ts[i] = ts_rt_select(ctx, nz, 1, i))) {
      for (int64_t k = 0; k < i; k++) ts_rt_tensor_release(ts[k]);
      ok = false;
    }
  ts_rt_tensor_release(nz);
  return ok && sh_put_list(ctx, call, ts, (uint32_t)n);
}

static bool sh_k_clone(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  ts_rt_tensor *r = ts_rt_clone(ctx, a);
  if (call->nin > 2) {
    SH_TENSOR(2, out);
    return sh_put_out(ctx, call, out, r);
  }
  return sh_put(call, r);
}

/* copy(self, src, non_blocking): a copy of self with src copied into it
 * (broadcast, converted to self's dtype). */
static bool sh_k_copy(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, self);
  SH_TENSOR(1, src);
  /* src expanded to self's shape first: expand's message on a mismatch */
  ts_rt_tensor *e = ts_rt_expand(ctx, src, self->ndim, self->sizes);
  if (!e) return false;
  ts_rt_tensor_release(e);
  ts_rt_tensor *r = ts_rt_clone(ctx, self);
  if (!r) return false;
  if (!ts_rt_tensor_copy_(ctx, r, src)) {
    ts_rt_tensor_release(r);
    return false;
  }
  return sh_put(call, r);
}

static bool sh_k_copy_(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, self);
  SH_TENSOR(1, src);
  if (!ts_rt_tensor_copy_(ctx, self, src)) return false;
  ts_rt_tensor_retain(self);
  return sh_put(call, self);
}

/* copy_.int / copy_.float: fill self with a number. */
static bool sh_k_copy_scalar(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, self);
  ts_iv v = call->nin > 1 ? call->in[1] : ts_iv_none();
  ts_rt_tensor *s = v.tag == TS_IV_DOUBLE ? ts_rt_tensor_scalar(ctx, TS_DT_FLOAT64, v.u.d, 0)
                    : v.tag == TS_IV_INT  ? ts_rt_tensor_scalar(ctx, TS_DT_INT64, 0, v.u.i)
                    : v.tag == TS_IV_BOOL ? ts_rt_tensor_scalar(ctx, TS_DT_BOOL, v.u.b, v.u.b)
                                          : NULL;
  if (!s) return ctx->failed ? false : ts_rt_arg_bad(ctx, call, 1, "number");
  bool ok = ts_rt_tensor_copy_(ctx, self, s);
  ts_rt_tensor_release(s);
  if (!ok) return false;
  ts_rt_tensor_retain(self);
  return sh_put(call, self);
}

/* Device? argument: None or the CPU. */
static bool sh_arg_cpu(ts_rt_ctx *ctx, ts_rt_call *call, uint32_t i) {
  if (!ts_rt_arg_check(ctx, call, i)) return false;
  ts_iv v = call->in[i];
  if (v.tag == TS_IV_NONE || (v.tag == TS_IV_DEVICE && v.u.dev.type == TS_DEV_CPU)) return true;
  if (v.tag != TS_IV_DEVICE) return ts_rt_arg_bad(ctx, call, i, "Device");
  ts_buf b = {0};
  ts_device_print(&b, v.u.dev);
  ts_rt_fail(ctx, "tsaot runs on CPU: cannot move a tensor to device '%s'", b.data ? b.data : "?");
  ts_buf_free(&b);
  return false;
}

/* Tensor.to: self itself (retained) when nothing changes and no copy is
 * asked for, as PyTorch; else a converted copy. */
static bool sh_to(ts_rt_ctx *ctx, ts_rt_call *call, ts_rt_tensor *a, ts_dtype dt, bool copy) {
  if (dt == TS_DT_NONE) dt = (ts_dtype)a->dtype;
  if (!copy && dt == (ts_dtype)a->dtype) {
    ts_rt_tensor_retain(a);
    return sh_put(call, a);
  }
  ts_rt_tensor *r = ts_rt_tensor_to_dtype(ctx, a, dt);
  if (r) r->device = a->device;
  return sh_put(call, r);
}

static bool sh_k_to_device(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  ts_dtype dt = TS_DT_NONE;
  bool copy = false;
  if (!sh_arg_cpu(ctx, call, 1) || !ts_rt_arg_opt_dtype(ctx, call, 2, &dt) || !ts_rt_arg_bool(ctx, call, 4, &copy))
    return false;
  return sh_to(ctx, call, a, dt, copy);
}

static bool sh_k_to_dtype(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  ts_dtype dt = TS_DT_NONE;
  bool copy = false;
  if (!ts_rt_arg_opt_dtype(ctx, call, 1, &dt) || !ts_rt_arg_bool(ctx, call, 3, &copy)) return false;
  return sh_to(ctx, call, a, dt, copy);
}

static bool sh_k_to_other(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_TENSOR(1, o);
  bool copy = false;
  if (!ts_rt_arg_bool(ctx, call, 3, &copy)) return false;
  return sh_to(ctx, call, a, (ts_dtype)o->dtype, copy);
}

static bool sh_k_to_dtype_layout(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  ts_dtype dt = TS_DT_NONE;
  bool copy = false;
  if (!ts_rt_arg_opt_dtype(ctx, call, 1, &dt) || !sh_arg_cpu(ctx, call, 3) || !ts_rt_arg_bool(ctx, call, 6, &copy))
    return false;
  return sh_to(ctx, call, a, dt, copy);
}

static bool sh_k_to_prim_device(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  ts_dtype dt = TS_DT_NONE;
  bool copy = false;
  if (!sh_arg_cpu(ctx, call, 1) || !ts_rt_arg_opt_dtype(ctx, call, 2, &dt) || !ts_rt_arg_bool(ctx, call, 4, &copy))
    return false;
  return sh_to(ctx, call, a, dt, copy);
}

static bool sh_k_to_prim_dtype(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  ts_dtype dt = TS_DT_NONE;
  bool copy = false;
  if (!ts_rt_arg_opt_dtype(ctx, call, 1, &dt) || !ts_rt_arg_bool(ctx, call, 3, &copy)) return false;
  return sh_to(ctx, call, a, dt, copy);
}

static bool sh_k_to_prim_other(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  bool copy = false;
  if (!ts_rt_arg_bool(ctx, call, 2, &copy)) return false;
  return sh_to(ctx, call, a, TS_DT_NONE, copy);
}

/* Tensor.cpu(): self itself, as on the CPU already. */
static bool sh_k_cpu(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  return sh_to(ctx, call, a, TS_DT_NONE, false);
}

static bool sh_k_type_as(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_TENSOR(1, o);
  return sh_to(ctx, call, a, (ts_dtype)o->dtype, false);
}

/* ------------------------------------------------------------ metadata */

static bool sh_k_size(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  ts_rt_list *l = ts_rt_list_new(ctx, ts_type_leaf(TS_TY_INT), (uint32_t)a->ndim);
  if (!l) return false;
  for (int32_t d = 0; d < a->ndim; d++)
    if (!ts_rt_list_append(ctx, l, ts_iv_int(a->sizes[d]))) {
      ts_iv_release((ts_iv){.u.l = l, .tag = TS_IV_LIST});
      return false;
    }
  call->out[0] = (ts_iv){.u.l = l, .tag = TS_IV_LIST};
  return true;
}

static bool sh_k_size_int(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  SH_INT(1, d);
  if (!ts_rt_wrap_dim(ctx, d, a->ndim, &d)) return false;
  call->out[0] = ts_iv_int(a->ndim ? a->sizes[d] : 1);
  return true;
}

static bool sh_k_dim(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  call->out[0] = ts_iv_int(a->ndim);
  return true;
}

static bool sh_k_numel(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  call->out[0] = ts_iv_int(ts_rt_tensor_numel(a));
  return true;
}

static bool sh_k_len(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  if (a->ndim == 0) return ts_rt_fail(ctx, "len() of a 0-d tensor");
  call->out[0] = ts_iv_int(a->sizes[0]);
  return true;
}

static bool sh_k_is_floating_point(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  call->out[0] = ts_iv_bool(ts_rt_dtype_is_float((ts_dtype)a->dtype));
  return true;
}

/* item: the one element as an int, float or bool by dtype. */
static bool sh_k_item(ts_rt_ctx *ctx, ts_rt_call *call) {
  SH_TENSOR(0, a);
  int64_t n = ts_rt_tensor_numel(a);
  if (n != 1) return ts_rt_fail(ctx, "a Tensor with %lld elements cannot be converted to Scalar", (long long)n);
  const void *p = ts_rt_tensor_data(a);
  ts_dtype dt = (ts_dtype)a->dtype;
  if (dt == TS_DT_BOOL) call->out[0] = ts_iv_bool(*(const uint8_t *)p != 0);
  else if (ts_rt_dtype_is_float(dt)) call->out[0] = ts_iv_double(ts_rt_load_f64(p, dt));
  else call->out[0] = ts_iv_int(ts_rt_load_i64(p, dt));
  return true;
}

/* broadcast_tensors: each input expanded (a view) to the common shape. */
static bool sh_k_broadcast_tensors(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_list *in;
  if (!ts_rt_arg_list(c, call, 0, &in)) return false;
  int64_t shape[TS_RT_MAX_DIMS];
  int32_t nd = 0;
  for (uint32_t k = 0; k < in->n; k++) {
    if (in->items[k].tag != TS_IV_TENSOR) return ts_rt_fail(c, "broadcast_tensors: expected a list of Tensors");
    const ts_rt_tensor *t = in->items[k].u.t;
    int64_t next[TS_RT_MAX_DIMS];
    int32_t nn;
    if (!ts_rt_broadcast_shapes(c, nd, shape, t->ndim, t->sizes, &nn, next)) return false;
    memcpy(shape, next, sizeof(int64_t) * (size_t)nn);
    nd = nn;
  }
  ts_rt_list *out = ts_rt_list_new(c, ts_type_leaf(TS_TY_TENSOR), in->n);
  if (!out) return false;
  for (uint32_t k = 0; k < in->n; k++) {
    ts_rt_tensor *e = ts_rt_expand(c, in->items[k].u.t, nd, shape);
    if (!e || !ts_rt_list_append(c, out, ts_iv_tensor(e))) {
      ts_iv_release((ts_iv){.u.l = out, .tag = TS_IV_LIST});
      return false;
    }
  }
  call->out[0] = (ts_iv){.u.l = out, .tag = TS_IV_LIST};
  return true;
}

const ts_rt_kernel_def ts_rt_kernels_shape[] = {
    {"aten::broadcast_tensors", sh_k_broadcast_tensors},
    {"aten::view", sh_k_view},
    {"aten::view.dtype", sh_k_view_dtype},
    {"aten::reshape", sh_k_reshape},
    {"aten::view_as", sh_k_view_as},
    {"aten::reshape_as", sh_k_reshape_as},
    {"aten::flatten.using_ints", sh_k_flatten},
    {"aten::unflatten.int", sh_k_unflatten},
    {"aten::squeeze", sh_k_squeeze},
    {"aten::squeeze.dim", sh_k_squeeze_dim},
    {"aten::unsqueeze", sh_k_unsqueeze},
    {"aten::transpose.int", sh_k_transpose},
    {"aten::permute", sh_k_permute},
    {"aten::t", sh_k_t},
    {"aten::contiguous", sh_k_contiguous},
    {"aten::detach", sh_k_detach},
    {"aten::expand", sh_k_expand},
    {"aten::expand_as", sh_k_expand_as},
    {"aten::select.int", sh_k_select},
    {"aten::slice.Tensor", sh_k_slice},
    {"aten::narrow", sh_k_narrow},
    {"aten::narrow.Tensor", sh_k_narrow_tensor},
    {"aten::chunk", sh_k_chunk},
    {"aten::split.Tensor", sh_k_split},
    {"aten::split.sizes", sh_k_split_sizes},
    {"aten::split", sh_k_split_sizes},
    {"aten::split_with_sizes", sh_k_split_sizes},
    {"aten::unbind.int", sh_k_unbind},
    {"aten::tensor_split.sections", sh_k_tsplit_sections},
    {"aten::tensor_split.indices", sh_k_tsplit_indices},
    {"aten::tensor_split.tensor_indices_or_sections", sh_k_tsplit_tensor},
    {"aten::cat", sh_k_cat},
    {"aten::cat.out", sh_k_cat_out},
    {"aten::stack", sh_k_stack},
    {"aten::stack.out", sh_k_stack_out},
    {"aten::repeat", sh_k_repeat},
    {"aten::repeat.out", sh_k_repeat_out},
    {"aten::flip", sh_k_flip},
    {"aten::flip.out", sh_k_flip_out},
    {"aten::roll", sh_k_roll},
    {"aten::roll.out", sh_k_roll},
    {"aten::index_select", sh_k_index_select},
    {"aten::index_select.out", sh_k_index_select},
    {"aten::gather", sh_k_gather},
    {"aten::index.Tensor", sh_k_index},
    {"aten::index.Tensor_out", sh_k_index},
    {"aten::index.Tensor_hacked_twin", sh_k_index},
    {"aten::masked_select", sh_k_masked_select},
    {"aten::masked_select.out", sh_k_masked_select},
    {"aten::nonzero", sh_k_nonzero},
    {"aten::where", sh_k_where_cond},
    {"aten::nonzero.out", sh_k_nonzero},
    {"aten::clone", sh_k_clone},
    {"aten::clone.out", sh_k_clone},
    {"aten::copy", sh_k_copy},
    {"aten::copy_", sh_k_copy_},
    {"aten::copy_.Tensor", sh_k_copy_},
    {"aten::copy_.int", sh_k_copy_scalar},
    {"aten::copy_.float", sh_k_copy_scalar},
    {"aten::to.device", sh_k_to_device},
    {"aten::to.dtype", sh_k_to_dtype},
    {"aten::to.other", sh_k_to_other},
    {"aten::to.dtype_layout", sh_k_to_dtype_layout},
    {"aten::to.prim_Device", sh_k_to_prim_device},
    {"aten::to.prim_dtype", sh_k_to_prim_dtype},
    {"aten::to.prim_other", sh_k_to_prim_other},
    {"aten::type_as", sh_k_type_as},
    {"aten::cpu", sh_k_cpu},
    {"aten::size", sh_k_size},
    {"aten::size.int", sh_k_size_int},
    {"aten::dim", sh_k_dim},
    {"aten::numel", sh_k_numel},
    {"aten::len.Tensor", sh_k_len},
    {"aten::is_floating_point", sh_k_is_floating_point},
    {"aten::item", sh_k_item},
    {NULL, NULL},
};
