/* passes/shape_rules_views.c: shape rules of runtime/kernels/views.c's and
 * shape2.c's ops: the composed views (broadcast_to, mT, mH, H, T, movedim,
 * atleast_Nd, ravel, unfold, as_strided) and the copying
 * ops built from others (flips, rot90, narrow_copy, the *_scatter ops, put,
 * sum_to_size, count_nonzero, argwhere, kron, isclose, isin, diff, the
 * trapezoid rules). Views keep their input's strides where ATen's geometry
 * gives them; copies are contiguous. Where the result's dtype follows a
 * promotion these rules do not see (the stacks, block_diag) they leave the
 * output unshaped. */
#include "shape_rules.h"

#include <string.h>

/* out gets in's dtype, device and requires_grad, and no sizes. */
static void sv_like(ts_sr_shape *out, const ts_sr_shape *in) {
  ts_sr_unknown(out);
  out->dtype = in->dtype;
  out->device = in->device;
  out->requires_grad = in->requires_grad;
}

static void sv_swap(int64_t *a, int32_t i, int32_t j) {
  int64_t t = a[i];
  a[i] = a[j];
  a[j] = t;
}

/* broadcast_to(self, size): expand's sizes (-1 keeps a size) */
static void sv_broadcast_to(ts_sr_call *c) {
  ts_sr_shape in, out;
  int64_t req[TS_SR_MAX_RANK];
  int32_t n;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sv_like(&out, &in);
  if (ts_sr_size_list(c, 1, req, &n, TS_SR_MAX_RANK) && in.rank >= 0 && n >= in.rank) {
    out.rank = n;
    for (int32_t k = 0; k < n; k++) {
      int32_t j = k - (n - in.rank);
      int64_t have = j >= 0 ? in.sizes[j] : 1;
      if (req[k] == -1)
        out.sizes[k] = j >= 0 ? have : -1;
      else if (req[k] == TS_SR_UNKNOWN)
        out.sizes[k] = have >= 0 && have != 1 ? have : -1;
      else
        out.sizes[k] = req[k];
    }
  }
  ts_sr_set(c, 0, &out);
}

/* mT, mH: the last two dims swapped (0-d stays; 1-d is an error at run
 * time) */
static void sv_mt(ts_sr_call *c) {
  ts_sr_shape in;
  if (!ts_sr_tensor(c, 0, &in) || in.rank == 1)
    return;
  if (in.rank >= 2) {
    sv_swap(in.sizes, in.rank - 2, in.rank - 1);
    sv_swap(in.strides, in.rank - 2, in.rank - 1);
  }
  ts_sr_set(c, 0, &in);
}

/* H: 0-d stays, 2-d transposes */
static void sv_matrix_h(ts_sr_call *c) {
  ts_sr_shape in;
  if (!ts_sr_tensor(c, 0, &in) || (in.rank != -1 && in.rank != 0 && in.rank != 2))
    return;
  if (in.rank == 2) {
    sv_swap(in.sizes, 0, 1);
    sv_swap(in.strides, 0, 1);
  }
  ts_sr_set(c, 0, &in);
}

/* T: every dim reversed */
static void sv_numpy_t(ts_sr_call *c) {
  ts_sr_shape in;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  for (int32_t k = 0; k < in.rank / 2; k++) {
    sv_swap(in.sizes, k, in.rank - 1 - k);
    sv_swap(in.strides, k, in.rank - 1 - k);
  }
  ts_sr_set(c, 0, &in);
}

/* atleast_Nd(self): ranks below N padded with 1s ([n] -> [1, n] or
 * [1, n, 1]; [a, b] -> [a, b, 1]) */
static void sv_atleast(ts_sr_call *c) {
  ts_sr_shape in, out;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  int32_t want = c->node->kind == TS_K_aten_atleast_1d ? 1 : c->node->kind == TS_K_aten_atleast_2d ? 2 : 3;
  sv_like(&out, &in);
  if (in.rank >= want) {
    ts_sr_set(c, 0, &in);
    return;
  }
  if (in.rank >= 0) {
    out.rank = want;
    for (int32_t k = 0; k < want; k++)
      out.sizes[k] = 1;
    if (in.rank == 1)
      out.sizes[want == 2 ? 1 : 1] = in.sizes[0];
    if (in.rank == 2) {
      out.sizes[0] = in.sizes[0];
      out.sizes[1] = in.sizes[1];
    }
  }
  ts_sr_set(c, 0, &out);
}

/* movedim(self, source, destination), int or int[] */
static void sv_movedim(ts_sr_call *c) {
  ts_sr_shape in, out;
  int64_t src[TS_SR_MAX_RANK], dst[TS_SR_MAX_RANK];
  int32_t ns = 1, nd = 1;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sv_like(&out, &in);
  out.rank = in.rank;
  for (int32_t k = 0; k < in.rank; k++)
    out.sizes[k] = -1;
  bool known = in.rank >= 0 &&
               (ts_sr_int_list(c, 1, src, &ns, TS_SR_MAX_RANK) || (ns = 1, ts_sr_int(c, 1, &src[0]))) &&
               (ts_sr_int_list(c, 2, dst, &nd, TS_SR_MAX_RANK) || (nd = 1, ts_sr_int(c, 2, &dst[0])));
  if (!known || ns != nd) {
    if (known)
      return; /* fails at run time */
    ts_sr_set(c, 0, &out);
    return;
  }
  if (in.rank <= 1) {
    ts_sr_set(c, 0, &in);
    return;
  }
  int64_t order[TS_SR_MAX_RANK];
  bool su[TS_SR_MAX_RANK] = {false}, du[TS_SR_MAX_RANK] = {false};
  for (int32_t i = 0; i < ns; i++) {
    if (!ts_sr_wrap_dim(src[i], in.rank, &src[i]) || !ts_sr_wrap_dim(dst[i], in.rank, &dst[i]) || su[src[i]] ||
        du[dst[i]])
      return;
    su[src[i]] = du[dst[i]] = true;
    order[dst[i]] = src[i];
  }
  int32_t s = 0;
  for (int32_t d = 0; d < in.rank; d++) {
    if (du[d])
      continue;
    while (su[s])
      s++;
    order[d] = s++;
  }
  out.has_strides = in.has_strides;
  for (int32_t d = 0; d < in.rank; d++) {
    out.sizes[d] = in.sizes[order[d]];
    out.strides[d] = in.strides[order[d]];
  }
  ts_sr_set(c, 0, &out);
}

/* ravel: [numel], contiguous */
static void sv_ravel(ts_sr_call *c) {
  ts_sr_shape in, out;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sv_like(&out, &in);
  out.rank = 1;
  out.sizes[0] = in.rank >= 0 ? 1 : -1;
  for (int32_t k = 0; k < in.rank; k++)
    if (in.sizes[k] < 0 || !ts_sr_mul(out.sizes[0], in.sizes[k], &out.sizes[0])) {
      out.sizes[0] = -1;
      break;
    }
  ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

/* unfold(self, dim, size, step): dim counts windows, a last dim of size */
static void sv_unfold(ts_sr_call *c) {
  ts_sr_shape in, out;
  int64_t dim, size, step;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sv_like(&out, &in);
  if (in.rank >= 0 && in.rank < TS_SR_MAX_RANK && ts_sr_int(c, 1, &dim) && ts_sr_int(c, 2, &size) &&
      ts_sr_int(c, 3, &step)) {
    if (!ts_sr_wrap_dim(dim, in.rank, &dim) || size < 0 || step <= 0)
      return;
    out = in;
    if (in.rank > 0) {
      int64_t have = in.sizes[dim];
      if (have >= 0 && size > have)
        return;
      out.sizes[dim] = have >= 0 ? (have - size) / step + 1 : -1;
      out.strides[in.rank] = in.strides[dim];
      if (!ts_sr_mul(in.strides[dim], step, &out.strides[dim]))
        out.has_strides = false;
    } else {
      if (size > 1)
        return;
      out.strides[0] = 1;
    }
    out.sizes[in.rank] = size;
    out.rank = in.rank + 1;
  }
  ts_sr_set(c, 0, &out);
}

/* as_strided(self, size, stride, offset) */
static void sv_as_strided(ts_sr_call *c) {
  ts_sr_shape in, out;
  int64_t st[TS_SR_MAX_RANK];
  int32_t n, ns;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sv_like(&out, &in);
  if (ts_sr_size_list(c, 1, out.sizes, &n, TS_SR_MAX_RANK)) {
    out.rank = n;
    for (int32_t k = 0; k < n; k++)
      if (out.sizes[k] == TS_SR_UNKNOWN)
        out.sizes[k] = -1;
    if (ts_sr_int_list(c, 2, st, &ns, TS_SR_MAX_RANK) && ns == n) {
      out.has_strides = true;
      memcpy(out.strides, st, sizeof(int64_t) * (size_t)n);
    }
  }
  ts_sr_set(c, 0, &out);
}

/* Self's sizes and dtype in a new contiguous tensor (the flips, the *_scatter ops, put). */
static void sv_copy(ts_sr_call *c) {
  ts_sr_shape in;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  ts_sr_contiguous(&in);
  ts_sr_set(c, 0, &in);
}

/* rot90(self, k, dims): the two dims' sizes swap for odd k */
static void sv_rot90(ts_sr_call *c) {
  ts_sr_shape in, out;
  int64_t k, dims[2];
  int32_t n;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sv_like(&out, &in);
  out.rank = in.rank;
  for (int32_t d = 0; d < in.rank; d++)
    out.sizes[d] = -1;
  if (in.rank >= 2 && ts_sr_int(c, 1, &k) && ts_sr_int_list(c, 2, dims, &n, 2) && n == 2 &&
      ts_sr_wrap_dim(dims[0], in.rank, &dims[0]) && ts_sr_wrap_dim(dims[1], in.rank, &dims[1])) {
    memcpy(out.sizes, in.sizes, sizeof(int64_t) * (size_t)in.rank);
    if (k % 2 != 0)
      sv_swap(out.sizes, (int32_t)dims[0], (int32_t)dims[1]);
  }
  ts_sr_set(c, 0, &out);
}

/* narrow_copy(self, dim, start, length): length along dim, contiguous */
static void sv_narrow_copy(ts_sr_call *c) {
  ts_sr_shape in;
  int64_t dim, len;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  if (in.rank >= 1 && ts_sr_int(c, 1, &dim) && ts_sr_wrap_dim(dim, in.rank, &dim))
    in.sizes[dim] = ts_sr_int(c, 3, &len) && len >= 0 ? len : -1;
  else
    for (int32_t d = 0; d < in.rank; d++)
      in.sizes[d] = -1;
  ts_sr_contiguous(&in);
  ts_sr_set(c, 0, &in);
}

/* count_nonzero: int64 with the counted dims removed */
static void sv_count_nonzero(ts_sr_call *c) {
  ts_sr_shape in, out;
  int64_t dims[TS_SR_MAX_RANK];
  int32_t n = 0;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sv_like(&out, &in);
  out.dtype = TS_DT_INT64;
  bool known = ts_sr_is_none(c, 1) || ts_sr_int_list(c, 1, dims, &n, TS_SR_MAX_RANK) ||
               (n = 1, ts_sr_int(c, 1, &dims[0]));
  if (known && in.rank >= 0) {
    bool drop[TS_SR_MAX_RANK] = {false};
    for (int32_t i = 0; i < n; i++) {
      if (!ts_sr_wrap_dim(dims[i], in.rank, &dims[i]) || drop[dims[i]])
        return;
      drop[dims[i]] = true;
    }
    out.rank = 0;
    for (int32_t d = 0; d < in.rank; d++)
      if (n != 0 && !drop[d])
        out.sizes[out.rank++] = in.sizes[d];
    ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
}

/* argwhere: int64 [count, rank] */
static void sv_argwhere(ts_sr_call *c) {
  ts_sr_shape in, out;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sv_like(&out, &in);
  out.dtype = TS_DT_INT64;
  out.rank = 2;
  out.sizes[0] = -1;
  out.sizes[1] = in.rank >= 0 ? in.rank : -1;
  ts_sr_set(c, 0, &out);
}

/* isclose: bool of the broadcast shape (same dtypes, else an error) */
static void sv_isclose(ts_sr_call *c) {
  ts_sr_shape a, b, a0;
  if (!ts_sr_tensor(c, 0, &a) || !ts_sr_tensor(c, 1, &b))
    return;
  a0 = a;
  if (!ts_sr_broadcast(&a, &b))
    return;
  const ts_sr_shape *m[2] = {&a0, &b};
  ts_sr_meta_from(&a, m, 2);
  a.dtype = TS_DT_BOOL;
  a.requires_grad = 0;
  ts_sr_contiguous(&a);
  ts_sr_set(c, 0, &a);
}

/* isin: bool of the elements' shape (0-d for a Scalar element) */
static void sv_isin(ts_sr_call *c) {
  ts_sr_shape e;
  if (c->node->ninputs > 0 && c->node->inputs[0]->type->kind == TS_TY_TENSOR) {
    if (!ts_sr_tensor(c, 0, &e))
      return;
  } else {
    ts_sr_unknown(&e);
    e.rank = 0;
  }
  e.dtype = TS_DT_BOOL;
  e.requires_grad = 0;
  ts_sr_contiguous(&e);
  ts_sr_set(c, 0, &e);
}

/* sum_to_size(self, size): size's sizes; the dtype stays for floating
 * inputs (integers become int64 only when something is summed) */
static void sv_sum_to_size(ts_sr_call *c) {
  ts_sr_shape in, out;
  int32_t n;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sv_like(&out, &in);
  if (!ts_dtype_is_float((ts_dtype)in.dtype))
    out.dtype = TS_DT_NONE;
  if (ts_sr_size_list(c, 1, out.sizes, &n, TS_SR_MAX_RANK)) {
    out.rank = n;
    for (int32_t k = 0; k < n; k++)
      if (out.sizes[k] == TS_SR_UNKNOWN)
        out.sizes[k] = -1;
  }
  ts_sr_set(c, 0, &out);
}

/* kron(self, other): the sizes multiplied, ranks padded; dtype by
 * promotion */
static void sv_kron(ts_sr_call *c) {
  ts_sr_shape a, b, out;
  if (!ts_sr_tensor(c, 0, &a) || !ts_sr_tensor(c, 1, &b))
    return;
  ts_sr_unknown(&out);
  out.dtype = a.dtype != TS_DT_NONE && b.dtype != TS_DT_NONE && a.rank > 0 && b.rank > 0
                  ? (int8_t)ts_type_promote((ts_dtype)a.dtype, (ts_dtype)b.dtype)
                  : TS_DT_NONE;
  const ts_sr_shape *m[2] = {&a, &b};
  ts_sr_meta_from(&out, m, 2);
  if (a.rank >= 0 && b.rank >= 0) {
    out.rank = a.rank > b.rank ? a.rank : b.rank;
    for (int32_t d = 0; d < out.rank; d++) {
      int32_t da = d - (out.rank - a.rank), db = d - (out.rank - b.rank);
      int64_t x = da >= 0 ? a.sizes[da] : 1, y = db >= 0 ? b.sizes[db] : 1;
      if (x < 0 || y < 0 || !ts_sr_mul(x, y, &out.sizes[d]))
        out.sizes[d] = -1;
    }
    ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
}

/* diff(self, n, dim, prepend, append): self's rank, sizes unknown */
static void sv_same_rank(ts_sr_call *c) {
  ts_sr_shape in, out;
  if (!ts_sr_tensor(c, 0, &in) || in.rank == 0)
    return;
  ts_sr_unknown(&out);
  out.rank = in.rank;
  for (int32_t d = 0; d < in.rank; d++)
    out.sizes[d] = -1;
  ts_sr_set(c, 0, &out);
}

/* trapezoid / trapz (the sample dim removed) */
static void sv_trapezoid(ts_sr_call *c) {
  ts_sr_shape in, out;
  if (!ts_sr_tensor(c, 0, &in) || in.rank == 0)
    return;
  ts_sr_unknown(&out);
  if (in.rank > 0) {
    out.rank = in.rank - 1;
    for (int32_t d = 0; d < out.rank; d++)
      out.sizes[d] = -1;
  }
  ts_sr_set(c, 0, &out);
}

const ts_sr_def ts_sr_rules_views[] = {
    {"aten::argwhere", sv_argwhere},
    {"aten::as_strided", sv_as_strided},
    {"aten::as_strided_scatter", sv_copy},
    {"aten::atleast_1d", sv_atleast},
    {"aten::atleast_2d", sv_atleast},
    {"aten::atleast_3d", sv_atleast},
    {"aten::broadcast_to", sv_broadcast_to},
    {"aten::count_nonzero", sv_count_nonzero},
    {"aten::count_nonzero.dim_IntList", sv_count_nonzero},
    {"aten::cumulative_trapezoid.dx", sv_same_rank},
    {"aten::cumulative_trapezoid.x", sv_same_rank},
    {"aten::diagonal_scatter", sv_copy},
    {"aten::diff", sv_same_rank},
    {"aten::fliplr", sv_copy},
    {"aten::flipud", sv_copy},
    {"aten::isclose", sv_isclose},
    {"aten::isin.Scalar_Tensor", sv_isin},
    {"aten::isin.Tensor_Scalar", sv_isin},
    {"aten::isin.Tensor_Tensor", sv_isin},
    {"aten::kron", sv_kron},
    {"aten::mH", sv_mt},
    {"aten::mH.a", sv_mt},
    {"aten::mT", sv_mt},
    {"aten::mT.a", sv_mt},
    {"aten::matrix_H", sv_matrix_h},
    {"aten::matrix_H.a", sv_matrix_h},
    {"aten::moveaxis.int", sv_movedim},
    {"aten::moveaxis.intlist", sv_movedim},
    {"aten::movedim.int", sv_movedim},
    {"aten::movedim.intlist", sv_movedim},
    {"aten::narrow_copy", sv_narrow_copy},
    {"aten::numpy_T", sv_numpy_t},
    {"aten::numpy_T.a", sv_numpy_t},
    {"aten::put", sv_copy},
    {"aten::ravel", sv_ravel},
    {"aten::rot90", sv_rot90},
    {"aten::select_scatter", sv_copy},
    {"aten::slice_scatter", sv_copy},
    {"aten::sum_to_size", sv_sum_to_size},
    {"aten::trapezoid.dx", sv_trapezoid},
    {"aten::trapezoid.x", sv_trapezoid},
    {"aten::trapz.dx", sv_trapezoid},
    {"aten::trapz.x", sv_trapezoid},
    {"aten::unfold", sv_unfold},
    {NULL, NULL},
};
