/* runtime/kernels/views.c: the view ops PyTorch composes from the basic ones
 * (broadcast_to, mT, mH, H, T, movedim/moveaxis, atleast_Nd, ravel,
 * hsplit/vsplit/dsplit, unfold, as_strided). Each shares its input's
 * storage through ts_rt_tensor_view with the geometry ATen's
 * TensorShape.cpp gives, and fails with its messages. (conj, real and
 * their kin are complex.c's; positive is special.c's.) mH and H of a
 * complex tensor are refused: they would need a conjugating copy. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "tensor_ops.h"

#define VW_SHAPE_CAP (TS_RT_MAX_DIMS * 24 + 4)

/* "[2, 3]" as PyTorch prints an IntArrayRef. */
static const char *vw_fmt(char *buf, size_t cap, int32_t n, const int64_t *s) {
  size_t len = 0;
  buf[len++] = '[';
  for (int32_t i = 0; i < n && len + 24 < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? ", " : "", (long long)s[i]);
  buf[len++] = ']';
  buf[len] = 0;
  return buf;
}

static bool vw_put(ts_rt_call *call, ts_rt_tensor *t) {
  if (!t) return false;
  call->out[0] = ts_iv_tensor(t);
  return true;
}

/* Same geometry, a new tensor object. */
static ts_rt_tensor *vw_alias(ts_rt_ctx *c, const ts_rt_tensor *a) {
  return ts_rt_tensor_view(c, a, a->offset, a->ndim, a->sizes, a->strides);
}

/* A new list of tensors taking over ts[0..n) (all released on failure). */
static bool vw_put_list(ts_rt_ctx *c, ts_rt_call *call, ts_rt_tensor **ts, uint32_t n) {
  ts_rt_list *l = ts_rt_list_new(c, ts_type_leaf(TS_TY_TENSOR), n);
  uint32_t i = 0;
  bool ok = l != NULL;
  for (; ok && i < n; i++) ok = ts_rt_list_append(c, l, ts_iv_tensor(ts[i]));
  if (!ok) {
    for (; i < n; i++) ts_rt_tensor_release(ts[i]);
    if (l) ts_iv_release((ts_iv){.u.l = l, .tag = TS_IV_LIST});
    return false;
  }
  call->out[0] = (ts_iv){.u.l = l, .tag = TS_IV_LIST};
  return true;
}

/* The tensors of a Tensor[] argument, borrowed. */
static bool vw_arg_tensors(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i, ts_rt_tensor ***out, uint32_t *n) {
  ts_rt_list *l = NULL;
  if (!ts_rt_arg_list(c, call, i, &l)) return false;
  for (uint32_t k = 0; k < l->n; k++)
    if (l->items[k].tag != TS_IV_TENSOR) return ts_rt_fail(c, "argument %u: expected List[Tensor]", (unsigned)i);
  *out = l->n ? (ts_rt_tensor **)ts_rt_malloc(sizeof(ts_rt_tensor *) * l->n) : NULL;
  if (l->n && !*out) return ts_rt_oom(c);
  for (uint32_t k = 0; k < l->n; k++) (*out)[k] = l->items[k].u.t;
  *n = l->n;
  return true;
}

/* Complex tensors are another op family's; real ones pass. */
static bool vw_real_only(ts_rt_ctx *c, const ts_rt_tensor *a, const char *op) {
  if (a->dtype != TS_DT_COMPLEX32 && a->dtype != TS_DT_COMPLEX64 && a->dtype != TS_DT_COMPLEX128) return true;
  return ts_rt_fail(c, "tsaot: %s of a %s tensor is not supported", op, ts_rt_dtype_name((ts_dtype)a->dtype));
}

/* ----------------------------------------------------------- the views */

/* mT / mH: the last two dims swapped (conjugated too for complex mH); a
 * 0-d tensor stays (transpose(-2, -1) wraps its dims). */
static ts_rt_tensor *vw_mt(ts_rt_ctx *c, const ts_rt_tensor *a, const char *name) {
  if (a->ndim == 0) return vw_alias(c, a);
  if (a->ndim < 2) {
    ts_rt_fail(c, "tensor.%s is only supported on matrices or batches of matrices. Got %d-D tensor.", name,
               (int)a->ndim);
    return NULL;
  }
  return ts_rt_transpose(c, a, -2, -1);
}

/* atleast_Nd: 0-d becomes [1]*n; 1-d [1, k] (and [1, k, 1] for n=3); 2-d
 * [a, b, 1] for n=3; others stay (as views, like ATen's reshape/unsqueeze). */
static ts_rt_tensor *vw_atleast(ts_rt_ctx *c, const ts_rt_tensor *a, int n) {
  if (a->ndim >= n) return vw_alias(c, a);
  if (a->ndim == 0) {
    int64_t ones[3] = {1, 1, 1};
    return ts_rt_view(c, a, n, ones);
  }
  if (a->ndim == 1) {
    ts_rt_tensor *r = ts_rt_unsqueeze(c, a, 0);
    if (!r || n == 2) return r;
    ts_rt_tensor *r2 = ts_rt_unsqueeze(c, r, -1);
    ts_rt_tensor_release(r);
    return r2;
  }
  return ts_rt_unsqueeze(c, a, -1); /* 2-d, n = 3 */
}

/* movedim: dims src[i] go to dst[i]; the others keep their order in the
 * remaining places. */
static ts_rt_tensor *vw_movedim(ts_rt_ctx *c, const ts_rt_tensor *a, const int64_t *src, uint32_t ns,
                                const int64_t *dst, uint32_t nd) {
  char b1[VW_SHAPE_CAP], b2[VW_SHAPE_CAP];
  if (ns != nd) {
    ts_rt_fail(c, "movedim: Invalid source or destination dims: source (%s dims) should contain the same number of "
               "dims as destination (%s dims)", vw_fmt(b1, sizeof b1, (int32_t)ns, src),
               vw_fmt(b2, sizeof b2, (int32_t)nd, dst));
    return NULL;
  }
  int64_t ws[TS_RT_MAX_DIMS], wd[TS_RT_MAX_DIMS];
  for (uint32_t i = 0; i < ns; i++)
    if (!ts_rt_wrap_dim(c, src[i], a->ndim, &ws[i]) || !ts_rt_wrap_dim(c, dst[i], a->ndim, &wd[i])) return NULL;
  for (uint32_t i = 0; i < ns; i++)
    for (uint32_t j = i + 1; j < ns; j++) {
      if (ws[i] == ws[j]) {
        ts_rt_fail(c, "movedim: repeated dim in `source` (%s)", vw_fmt(b1, sizeof b1, (int32_t)ns, src));
        return NULL;
      }
    }
  for (uint32_t i = 0; i < ns; i++)
    for (uint32_t j = i + 1; j < ns; j++) {
      if (wd[i] == wd[j]) {
        ts_rt_fail(c, "movedim: repeated dim in `destination` (%s)", vw_fmt(b1, sizeof b1, (int32_t)nd, dst));
        return NULL;
      }
    }
  if (a->ndim <= 1) return vw_alias(c, a);
  int64_t order[TS_RT_MAX_DIMS];
  bool src_used[TS_RT_MAX_DIMS] = {false}, dst_used[TS_RT_MAX_DIMS] = {false};
  for (uint32_t i = 0; i < ns; i++) {
    order[wd[i]] = ws[i];
    src_used[ws[i]] = dst_used[wd[i]] = true;
  }
  int32_t s = 0;
  for (int32_t d = 0; d < a->ndim; d++) {
    if (dst_used[d]) continue;
    while (src_used[s]) s++;
    order[d] = s++;
  }
  return ts_rt_permute(c, a, order);
}

/* unfold(dim, size, step): dim becomes the number of windows, a new last
 * dim of `size` walks inside one. */
static ts_rt_tensor *vw_unfold(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t dim, int64_t size, int64_t step) {
  if (!ts_rt_wrap_dim(c, dim, a->ndim, &dim)) return NULL;
  int64_t have = a->ndim ? a->sizes[dim] : 1;
  if (size > have) {
    ts_rt_fail(c, "maximum size for tensor at dimension %lld is %lld but size is %lld", (long long)dim,
               (long long)have, (long long)size);
    return NULL;
  }
  if (step <= 0) {
    ts_rt_fail(c, "step is %lld but must be > 0", (long long)step);
    return NULL;
  }
  if (a->ndim + 1 > TS_RT_MAX_DIMS) {
    ts_rt_fail(c, "tsaot supports at most %d dimensions", TS_RT_MAX_DIMS);
    return NULL;
  }
  int64_t sizes[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS];
  int32_t n = a->ndim ? a->ndim : 0;
  for (int32_t d = 0; d < a->ndim; d++) {
    sizes[d] = a->sizes[d];
    strides[d] = a->strides[d];
  }
  int64_t st = a->ndim ? a->strides[dim] : 1;
  if (a->ndim) {
    sizes[dim] = (have - size) / step + 1;
    strides[dim] = step * st;
  }
  sizes[n] = size;
  strides[n] = st;
  if (size < 0) {
    char b1[VW_SHAPE_CAP], b2[VW_SHAPE_CAP];
    ts_rt_fail(c, "Storage size calculation overflowed with sizes=%s and strides=%s",
               vw_fmt(b1, sizeof b1, n + 1, sizes), vw_fmt(b2, sizeof b2, n + 1, strides));
    return NULL;
  }
  return ts_rt_tensor_view(c, a, a->offset, n + 1, sizes, strides);
}

/* as_strided(size, stride, storage_offset): any geometry inside the
 * storage (setStorage's bounds check). */
static ts_rt_tensor *vw_as_strided(ts_rt_ctx *c, const ts_rt_tensor *a, const int64_t *size, uint32_t n,
                                   const int64_t *stride, uint32_t ns, int64_t offset) {
  char b1[VW_SHAPE_CAP], b2[VW_SHAPE_CAP];
  if (n != ns) {
    ts_rt_fail(c, "mismatch in length of strides and shape");
    return NULL;
  }
  for (uint32_t i = 0; i < n; i++)
    if (stride[i] < 0) {
      ts_rt_fail(c, "as_strided: Negative strides are not supported at the moment, got strides: %s",
                 vw_fmt(b1, sizeof b1, (int32_t)n, stride));
      return NULL;
    }
  for (uint32_t i = 0; i < n; i++)
    if (size[i] < 0) {
      ts_rt_fail(c, "Trying to create tensor with negative dimension %lld: %s", (long long)size[i],
                 vw_fmt(b1, sizeof b1, (int32_t)n, size));
      return NULL;
    }
  if (offset < 0) {
    ts_rt_fail(c, "Tensor: invalid storage offset %lld", (long long)offset);
    return NULL;
  }
  /* computeStorageNbytes: 0 when any size is 0, else the last element's
   * end; overflow is an error */
  size_t esz = ts_dtype_size((ts_dtype)a->dtype);
  bool empty = false;
  for (uint32_t i = 0; i < n; i++) empty |= size[i] == 0;
  unsigned __int128 need = 0;
  if (!empty) {
    unsigned __int128 last = (unsigned __int128)offset;
    for (uint32_t i = 0; i < n; i++) last += (unsigned __int128)(size[i] - 1) * (unsigned __int128)stride[i];
    need = (last + 1) * esz;
  }
  if (need > (unsigned __int128)a->storage->nbytes) {
    ts_rt_fail(c, "setStorage: sizes %s, strides %s, storage offset %lld, and itemsize %zu requiring a storage size of "
               "%llu are out of bounds for storage of size %zu", vw_fmt(b1, sizeof b1, (int32_t)n, size),
               vw_fmt(b2, sizeof b2, (int32_t)n, stride), (long long)offset, esz,
               (unsigned long long)(need > (unsigned __int128)UINT64_MAX ? UINT64_MAX : (uint64_t)need),
               a->storage->nbytes);
    return NULL;
  }
  return ts_rt_tensor_view(c, a, offset, (int32_t)n, size, stride);
}

/* tensor_split's pieces of dim: `sections` near-equal ones (the first
 * size % sections one longer) or cut at indices[0..ni). */
static bool vw_split_put(ts_rt_ctx *c, ts_rt_call *call, const ts_rt_tensor *a, int64_t dim, int64_t sections,
                         const int64_t *indices, uint32_t ni) {
  uint64_t n = indices ? (uint64_t)ni + 1 : (uint64_t)sections;
  if (n > (1u << 24)) return ts_rt_fail(c, "tsaot: %llu pieces is too many", (unsigned long long)n);
  ts_rt_tensor **ts = ts_rt_malloc(sizeof(ts_rt_tensor *) * (n ? n : 1));
  if (!ts) return ts_rt_oom(c);
  int64_t size = a->sizes[dim], start = 0;
  for (uint64_t i = 0; i < n; i++) {
    int64_t end;
    /* slice's clamping: a decreasing index gives an empty piece, a
     * negative one counts from the end */
    if (indices) end = i < ni ? indices[i] : size;
    else end = start + size / sections + ((int64_t)i < size % sections);
    ts[i] = ts_rt_slice(c, a, dim, start, end, 1);
    if (!ts[i]) {
      for (uint64_t k = 0; k < i; k++) ts_rt_tensor_release(ts[k]);
      ts_rt_free(ts);
      return false;
    }
    start = end;
  }
  bool ok = vw_put_list(c, call, ts, (uint32_t)n);
  ts_rt_free(ts);
  return ok;
}

/* hsplit/vsplit/dsplit: which = 0, 1, 2; `sections` (has_sections) or the
 * indices of argument 1. */
static bool vw_hvdsplit(ts_rt_ctx *c, ts_rt_call *call, int which, bool by_sections) {
  static const char *const names[3] = {"hsplit", "vsplit", "dsplit"};
  static const int need[3] = {1, 2, 3};
  ts_rt_tensor *a = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &a)) return false;
  if (a->ndim < need[which]) {
    if (which == 0)
      return ts_rt_fail(c, "torch.hsplit requires a tensor with at least 1 dimension, but got a tensor with %d "
                        "dimensions!", (int)a->ndim);
    return ts_rt_fail(c, "torch.%s requires a tensor with at least %d dimension, but got a tensor with %d dimensions!",
                      names[which], need[which], (int)a->ndim);
  }
  int64_t dim = which == 0 ? (a->ndim == 1 ? 0 : 1) : which == 1 ? 0 : 2;
  if (by_sections) {
    int64_t s = 0;
    if (!ts_rt_arg_int(c, call, 1, &s)) return false;
    if (s == 0 || a->sizes[dim] % s != 0)
      return ts_rt_fail(c, "torch.%s attempted to split along dimension %lld, but the size of the dimension %lld is "
                        "not divisible by the split_size %lld!", names[which], (long long)dim,
                        (long long)a->sizes[dim], (long long)s);
    if (s < 0) return ts_rt_fail(c, "number of sections must be larger than 0, got %lld", (long long)s);
    return vw_split_put(c, call, a, dim, s, NULL, 0);
  }
  int64_t idx[256];
  uint32_t n = 0;
  if (!ts_rt_arg_ints(c, call, 1, idx, 256, &n, 0)) return false;
  return vw_split_put(c, call, a, dim, 0, idx, n);
}

/* ------------------------------------------------------- kernel bodies */

#define VW_TENSOR(i, name) \
  ts_rt_tensor *name = NULL; \
  if (!ts_rt_arg_tensor(ctx, call, i, &name)) return false
#define VW_INT(i, name) \
  int64_t name = 0; \
  if (!ts_rt_arg_int(ctx, call, i, &name)) return false
#define VW_INTS(i, name, nname) \
  int64_t name[TS_RT_MAX_DIMS]; \
  uint32_t nname = 0; \
  if (!ts_rt_arg_ints(ctx, call, i, name, TS_RT_MAX_DIMS, &nname, 0)) return false

static bool vw_k_broadcast_to(ts_rt_ctx *ctx, ts_rt_call *call) {
  VW_TENSOR(0, a);
  VW_INTS(1, s, n);
  return vw_put(call, ts_rt_expand(ctx, a, (int32_t)n, s));
}

static bool vw_k_mT(ts_rt_ctx *ctx, ts_rt_call *call) {
  VW_TENSOR(0, a);
  return vw_put(call, vw_mt(ctx, a, "mT"));
}

static bool vw_k_mH(ts_rt_ctx *ctx, ts_rt_call *call) {
  VW_TENSOR(0, a);
  if (!vw_real_only(ctx, a, "mH")) return false;
  return vw_put(call, vw_mt(ctx, a, "mH"));
}

/* x.H: 0-d stays, 2-d transposes, nothing else. */
static bool vw_k_matrix_H(ts_rt_ctx *ctx, ts_rt_call *call) {
  VW_TENSOR(0, a);
  if (!vw_real_only(ctx, a, "H")) return false;
  if (a->ndim == 0) return vw_put(call, vw_alias(ctx, a));
  if (a->ndim != 2)
    return ts_rt_fail(ctx, "tensor.H is only supported on matrices (2-D tensors). Got %d-D tensor.%s", (int)a->ndim,
                      a->ndim > 2 ? " For batches of matrices, consider using tensor.mH" : "");
  return vw_put(call, ts_rt_transpose(ctx, a, 0, 1));
}

/* x.T: every dim reversed (PyTorch warns once for ranks other than 2:
 * deprecated; not repeated here). */
static bool vw_k_numpy_T(ts_rt_ctx *ctx, ts_rt_call *call) {
  VW_TENSOR(0, a);
  int64_t order[TS_RT_MAX_DIMS];
  for (int32_t d = 0; d < a->ndim; d++) order[d] = a->ndim - 1 - d;
  return vw_put(call, ts_rt_permute(ctx, a, order));
}

static bool vw_atleast_k(ts_rt_ctx *ctx, ts_rt_call *call, int n) {
  VW_TENSOR(0, a);
  return vw_put(call, vw_atleast(ctx, a, n));
}

static bool vw_atleast_seq(ts_rt_ctx *ctx, ts_rt_call *call, int n) {
  ts_rt_tensor **in = NULL;
  uint32_t k = 0;
  if (!vw_arg_tensors(ctx, call, 0, &in, &k)) return false;
  ts_rt_tensor **ts = ts_rt_malloc(sizeof(ts_rt_tensor *) * (k ? k : 1));
  if (!ts) {
    ts_rt_free(in);
    return ts_rt_oom(ctx);
  }
  for (uint32_t i = 0; i < k; i++) {
    ts[i] = vw_atleast(ctx, in[i], n);
    if (!ts[i]) {
      for (uint32_t j = 0; j < i; j++) ts_rt_tensor_release(ts[j]);
      ts_rt_free(ts);
      ts_rt_free(in);
      return false;
    }
  }
  bool ok = vw_put_list(ctx, call, ts, k);
  ts_rt_free(ts);
  ts_rt_free(in);
  return ok;
}

static bool vw_k_atleast_1d(ts_rt_ctx *ctx, ts_rt_call *call) { return vw_atleast_k(ctx, call, 1); }
static bool vw_k_atleast_2d(ts_rt_ctx *ctx, ts_rt_call *call) { return vw_atleast_k(ctx, call, 2); }
static bool vw_k_atleast_3d(ts_rt_ctx *ctx, ts_rt_call *call) { return vw_atleast_k(ctx, call, 3); }
static bool vw_k_atleast_1d_seq(ts_rt_ctx *ctx, ts_rt_call *call) { return vw_atleast_seq(ctx, call, 1); }
static bool vw_k_atleast_2d_seq(ts_rt_ctx *ctx, ts_rt_call *call) { return vw_atleast_seq(ctx, call, 2); }
static bool vw_k_atleast_3d_seq(ts_rt_ctx *ctx, ts_rt_call *call) { return vw_atleast_seq(ctx, call, 3); }

static bool vw_k_movedim_list(ts_rt_ctx *ctx, ts_rt_call *call) {
  VW_TENSOR(0, a);
  VW_INTS(1, s, ns);
  VW_INTS(2, d, nd);
  return vw_put(call, vw_movedim(ctx, a, s, ns, d, nd));
}

static bool vw_k_movedim_int(ts_rt_ctx *ctx, ts_rt_call *call) {
  VW_TENSOR(0, a);
  VW_INT(1, s);
  VW_INT(2, d);
  return vw_put(call, vw_movedim(ctx, a, &s, 1, &d, 1));
}

/* ravel: contiguous().view(-1) */
static bool vw_k_ravel(ts_rt_ctx *ctx, ts_rt_call *call) {
  VW_TENSOR(0, a);
  ts_rt_tensor *ct = ts_rt_tensor_contiguous(ctx, a);
  if (!ct) return false;
  int64_t all = -1;
  ts_rt_tensor *r = ts_rt_view(ctx, ct, 1, &all);
  ts_rt_tensor_release(ct);
  return vw_put(call, r);
}

static bool vw_k_hsplit_int(ts_rt_ctx *ctx, ts_rt_call *call) { return vw_hvdsplit(ctx, call, 0, true); }
static bool vw_k_hsplit_array(ts_rt_ctx *ctx, ts_rt_call *call) { return vw_hvdsplit(ctx, call, 0, false); }
static bool vw_k_vsplit_int(ts_rt_ctx *ctx, ts_rt_call *call) { return vw_hvdsplit(ctx, call, 1, true); }
static bool vw_k_vsplit_array(ts_rt_ctx *ctx, ts_rt_call *call) { return vw_hvdsplit(ctx, call, 1, false); }
static bool vw_k_dsplit_int(ts_rt_ctx *ctx, ts_rt_call *call) { return vw_hvdsplit(ctx, call, 2, true); }
static bool vw_k_dsplit_array(ts_rt_ctx *ctx, ts_rt_call *call) { return vw_hvdsplit(ctx, call, 2, false); }

static bool vw_k_unfold(ts_rt_ctx *ctx, ts_rt_call *call) {
  VW_TENSOR(0, a);
  VW_INT(1, dim);
  VW_INT(2, size);
  VW_INT(3, step);
  return vw_put(call, vw_unfold(ctx, a, dim, size, step));
}

static bool vw_k_as_strided(ts_rt_ctx *ctx, ts_rt_call *call) {
  VW_TENSOR(0, a);
  VW_INTS(1, size, n);
  VW_INTS(2, stride, ns);
  int64_t off = 0;
  bool has = false;
  if (!ts_rt_arg_opt_int(ctx, call, 3, &off, &has)) return false;
  return vw_put(call, vw_as_strided(ctx, a, size, n, stride, ns, has ? off : a->offset));
}




const ts_rt_kernel_def ts_rt_kernels_views[] = {
    {"aten::as_strided", vw_k_as_strided},
    {"aten::atleast_1d", vw_k_atleast_1d},
    {"aten::atleast_1d.Sequence", vw_k_atleast_1d_seq},
    {"aten::atleast_2d", vw_k_atleast_2d},
    {"aten::atleast_2d.Sequence", vw_k_atleast_2d_seq},
    {"aten::atleast_3d", vw_k_atleast_3d},
    {"aten::atleast_3d.Sequence", vw_k_atleast_3d_seq},
    {"aten::broadcast_to", vw_k_broadcast_to},
    {"aten::dsplit.array", vw_k_dsplit_array},
    {"aten::dsplit.int", vw_k_dsplit_int},
    {"aten::hsplit.array", vw_k_hsplit_array},
    {"aten::hsplit.int", vw_k_hsplit_int},
    {"aten::mH", vw_k_mH},
    {"aten::mH.a", vw_k_mH},
    {"aten::mT", vw_k_mT},
    {"aten::mT.a", vw_k_mT},
    {"aten::matrix_H", vw_k_matrix_H},
    {"aten::matrix_H.a", vw_k_matrix_H},
    {"aten::moveaxis.int", vw_k_movedim_int},
    {"aten::moveaxis.intlist", vw_k_movedim_list},
    {"aten::movedim.int", vw_k_movedim_int},
    {"aten::movedim.intlist", vw_k_movedim_list},
    {"aten::numpy_T", vw_k_numpy_T},
    {"aten::numpy_T.a", vw_k_numpy_T},
    {"aten::ravel", vw_k_ravel},
    {"aten::unfold", vw_k_unfold},
    {"aten::vsplit.array", vw_k_vsplit_array},
    {"aten::vsplit.int", vw_k_vsplit_int},
    {NULL, NULL},
};
