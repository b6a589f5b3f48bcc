/* passes/shape_rules_nn.c: shape rules of the computing ops that are not
 * elementwise: reductions (sum, mean, prod, amax, max, all, std, norm,
 * argmax, ...), scans and sorts (cumsum, softmax, sort, topk), matrix
 * products (mm, bmm, matmul, addmm, baddbmm, linear), convolution, pooling
 * and upsampling, normalisation, dropout, recurrent layers and cells, and
 * the transformer fast path.
 *
 * Output sizes follow ATen's formulas (conv_output_size,
 * pooling_output_shape, matmul's broadcasting of batch dimensions); dtypes
 * follow the kernels (sum and prod of integers give int64, mean of integers
 * fails, argmax gives int64). Where the inputs' dtypes must agree (matrix
 * products), a known one is the result's; two different ones fail at run
 * time and the output is left alone. Results are new tensors: contiguous
 * when their tensor inputs are. */
#include "shape_rules.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------- helpers */

static void sr_like(ts_sr_shape *out, const ts_sr_shape *in) {
  ts_sr_unknown(out);
  out->dtype = in->dtype;
  out->device = in->device;
  out->requires_grad = in->requires_grad;
}

/* The dtype two operands that must agree give: -2 if they differ. */
static int8_t sr_agree(int8_t a, int8_t b) {
  if (a == TS_DT_NONE)
    return b;
  if (b == TS_DT_NONE || a == b)
    return a;
  return -2;
}

/* Two sizes that must be equal: false when both are known and differ. */
static bool sr_match(int64_t a, int64_t b, int64_t *out) {
  if (a >= 0 && b >= 0 && a != b)
    return false;
  *out = a >= 0 ? a : b >= 0 ? b : a == b ? a : a <= -2 ? a : b;
  return true;
}

/* Device, requires_grad and strides of a new result computed from the
 * given inputs. */
static void sr_fresh(ts_sr_shape *out, const ts_sr_shape *const *in, uint32_t n) {
  ts_sr_meta_from(out, in, n);
  bool contiguous = true;
  for (uint32_t k = 0; k < n; k++)
    contiguous = contiguous && ts_sr_is_contiguous(in[k]);
  if (contiguous)
    ts_sr_contiguous(out);
  else
    out->has_strides = false;
}

/* ----------------------------------------------------------- reductions */

/* How a reduction picks its dtype. */
typedef enum sr_red_dt {
  SR_RED_SELF,  /* self's (amax, max) */
  SR_RED_ACC,   /* sum, prod: integral and bool -> int64, or the dtype argument */
  SR_RED_FLOAT, /* mean, logsumexp: self's if floating or complex, else it fails */
  SR_RED_REAL,  /* std, var, norm: SR_RED_FLOAT, but complex gives its parts' dtype */
  SR_RED_BOOL,  /* all, any: bool (uint8 stays uint8) */
  SR_RED_LONG,  /* argmax, argmin: int64 */
} sr_red_dt;

static int8_t sr_red_dtype(sr_red_dt how, int8_t self, int8_t arg) {
  if (how == SR_RED_REAL && ts_dtype_is_complex((ts_dtype)(arg != TS_DT_NONE ? arg : self)))
    return (arg != TS_DT_NONE ? arg : self) == TS_DT_COMPLEX128 ? TS_DT_FLOAT64 : TS_DT_FLOAT32;
  if (arg != TS_DT_NONE)
    return arg;
  if (self == TS_DT_NONE && how != SR_RED_LONG)
    return TS_DT_NONE;
  switch (how) {
  case SR_RED_SELF: return self;
  case SR_RED_ACC: return ts_dtype_is_float((ts_dtype)self) || ts_dtype_is_complex((ts_dtype)self) ? self : TS_DT_INT64;
  case SR_RED_FLOAT: return ts_dtype_is_float((ts_dtype)self) || ts_dtype_is_complex((ts_dtype)self) ? self : -2;
  case SR_RED_REAL: return ts_dtype_is_float((ts_dtype)self) ? self : -2;
  case SR_RED_BOOL: return self == TS_DT_UINT8 ? TS_DT_UINT8 : TS_DT_BOOL;
  case SR_RED_LONG: return TS_DT_INT64;
  }
  return TS_DT_NONE;
}

/* Reduces `in` over dims (n of them; all dims when `all`), keeping them as
 * 1 when keepdim. False when a dim is out of range or repeated. */
static bool sr_reduce_shape(const ts_sr_shape *in, const int64_t *dims, int32_t n, bool all, bool keepdim,
                            ts_sr_shape *out) {
  sr_like(out, in);
  if (in->rank < 0)
    return true;
  bool red[TS_SR_MAX_RANK] = {false};
  if (all) {
    for (int32_t k = 0; k < in->rank; k++)
      red[k] = true;
  } else {
    for (int32_t k = 0; k < n; k++) {
      int64_t d;
      if (!ts_sr_wrap_dim(dims[k], in->rank, &d) || (in->rank > 0 && red[d]))
        return false;
      if (in->rank > 0)
        red[d] = true;
    }
  }
  int32_t r = 0;
  for (int32_t k = 0; k < in->rank; k++) {
    if (!red[k])
      out->sizes[r++] = in->sizes[k];
    else if (keepdim)
      out->sizes[r++] = 1;
  }
  out->rank = r;
  return true;
}

/* A reduction: self at 0, the dims at dim_arg (-1: all; an int or an
 * int[]?, None and [] meaning all), keepdim at keep_arg (-1: false), the
 * dtype argument at dt_arg (-1: none). Outputs 0 and, with `indices`,
 * 1 (int64). */
static void sr_reduce(ts_sr_call *c, sr_red_dt how, int dim_arg, int keep_arg, int dt_arg, bool indices) {
  ts_sr_shape in, out;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  int8_t arg = TS_DT_NONE;
  if (dt_arg >= 0 && !ts_sr_dtype_arg(c, (uint32_t)dt_arg, &arg))
    arg = -2;
  int8_t dt = arg == -2 ? TS_DT_NONE : sr_red_dtype(how, in.dtype, arg);
  if (dt == -2)
    return; /* fails at run time */
  int64_t dims[TS_SR_MAX_RANK];
  int32_t n = 0;
  bool all = dim_arg < 0, keep = false, known = true;
  if (dim_arg >= 0) {
    /* an int dim, or an int[]? one (left out: its default, []) */
    const ts_type *dt_ty = (uint32_t)dim_arg < c->node->ninputs ? c->node->inputs[dim_arg]->type
                                                                 : c->schema->args[dim_arg].type;
    if (ts_sr_is_none(c, (uint32_t)dim_arg))
      all = true;
    else if (dt_ty->kind == TS_TY_INT)
      known = ts_sr_int(c, (uint32_t)dim_arg, &dims[0]), n = 1;
    else
      known = ts_sr_int_list(c, (uint32_t)dim_arg, dims, &n, TS_SR_MAX_RANK), all = known && n == 0;
  }
  if (keep_arg >= 0 && !ts_sr_bool(c, (uint32_t)keep_arg, &keep))
    known = false;
  if (known) {
    if (!sr_reduce_shape(&in, dims, n, all, keep, &out))
      return;
  } else {
    sr_like(&out, &in);
  }
  out.dtype = dt;
  const ts_sr_shape *m[1] = {&in};
  ts_sr_meta_from(&out, m, 1);
  ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
  if (indices) {
    out.dtype = TS_DT_INT64;
    ts_sr_set(c, 1, &out);
  }
}

/* The argument positions, by schema:
 *   sum/mean/prod(self, dtype)          sum/mean(self, dim, keepdim, dtype)
 *   amax(self, dim[], keepdim)          max/min/all/any(self)
 *   max/min.dim(self, dim, keepdim)     all/any.dim(self, dim, keepdim)
 *   std/var(self, unbiased)             std/var.dim(self, dim, unbiased, keepdim)
 *   norm(self, p)                       norm(self, p, dim, keepdim[, dtype])
 *   norm(self, p, dtype)                logsumexp(self, dim, keepdim) */
static void sr_sum(ts_sr_call *c) { sr_reduce(c, SR_RED_ACC, -1, -1, 1, false); }
static void sr_sum_dim(ts_sr_call *c) { sr_reduce(c, SR_RED_ACC, 1, 2, 3, false); }
static void sr_mean(ts_sr_call *c) { sr_reduce(c, SR_RED_FLOAT, -1, -1, 1, false); }
static void sr_mean_dim(ts_sr_call *c) { sr_reduce(c, SR_RED_FLOAT, 1, 2, 3, false); }
static void sr_amax(ts_sr_call *c) { sr_reduce(c, SR_RED_SELF, 1, 2, -1, false); }
static void sr_max_all(ts_sr_call *c) { sr_reduce(c, SR_RED_SELF, -1, -1, -1, false); }
static void sr_max_dim(ts_sr_call *c) { sr_reduce(c, SR_RED_SELF, 1, 2, -1, true); }
static void sr_all(ts_sr_call *c) { sr_reduce(c, SR_RED_BOOL, -1, -1, -1, false); }
static void sr_all_dim(ts_sr_call *c) { sr_reduce(c, SR_RED_BOOL, 1, 2, -1, false); }
static void sr_std(ts_sr_call *c) { sr_reduce(c, SR_RED_REAL, -1, -1, -1, false); }
static void sr_std_dim(ts_sr_call *c) { sr_reduce(c, SR_RED_REAL, 1, 3, -1, false); }
static void sr_norm(ts_sr_call *c) { sr_reduce(c, SR_RED_REAL, -1, -1, -1, false); }
static void sr_norm_dim(ts_sr_call *c) { sr_reduce(c, SR_RED_REAL, 2, 3, -1, false); }
static void sr_norm_dim_dtype(ts_sr_call *c) { sr_reduce(c, SR_RED_REAL, 2, 3, 4, false); }
static void sr_norm_dtype(ts_sr_call *c) { sr_reduce(c, SR_RED_REAL, -1, -1, 2, false); }
/* frobenius_norm(self[, dim, keepdim]); nuclear_norm(self, keepdim) (a
 * matrix: all of its dims), nuclear_norm(self, dim, keepdim) */
static void sr_frobenius_dim(ts_sr_call *c) { sr_reduce(c, SR_RED_REAL, 1, 2, -1, false); }
static void sr_nuclear(ts_sr_call *c) { sr_reduce(c, SR_RED_REAL, -1, 1, -1, false); }
static void sr_logsumexp(ts_sr_call *c) { sr_reduce(c, SR_RED_FLOAT, 1, 2, -1, false); }
static void sr_prod(ts_sr_call *c) { sr_reduce(c, SR_RED_ACC, -1, -1, 1, false); }
static void sr_prod_dim(ts_sr_call *c) { sr_reduce(c, SR_RED_ACC, 1, 2, 3, false); }

/* argmax/argmin(self, dim?, keepdim): dim None reduces everything to a 0-d
 * result when keepdim is false */
static void sr_argmax(ts_sr_call *c) {
  bool keep = false;
  if (ts_sr_is_none(c, 1)) {
    if (!ts_sr_bool(c, 2, &keep) || keep) {
      ts_sr_shape in, out;
      if (!ts_sr_tensor(c, 0, &in))
        return;
      sr_like(&out, &in);
      out.dtype = TS_DT_INT64;
      ts_sr_set(c, 0, &out);
      return;
    }
    sr_reduce(c, SR_RED_LONG, -1, -1, -1, false);
    return;
  }
  sr_reduce(c, SR_RED_LONG, 1, 2, -1, false);
}

/* ------------------------------------------------------ scans and sorts */

/* Same sizes, dtype from a dtype argument at `dt_arg` or by `how`. */
static void sr_same_shape(ts_sr_call *c, sr_red_dt how, int dt_arg) {
  ts_sr_shape in, out;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  int8_t arg = TS_DT_NONE;
  if (dt_arg >= 0 && !ts_sr_dtype_arg(c, (uint32_t)dt_arg, &arg))
    arg = -2;
  int8_t dt = arg == -2 ? TS_DT_NONE : sr_red_dtype(how, in.dtype, arg);
  if (dt == -2)
    return;
  out = in;
  out.dtype = dt;
  const ts_sr_shape *m[1] = {&in};
  sr_fresh(&out, m, 1);
  ts_sr_set(c, 0, &out);
}

static void sr_cumsum(ts_sr_call *c) { sr_same_shape(c, SR_RED_ACC, 2); }     /* (self, dim, dtype) */
static void sr_softmax(ts_sr_call *c) { sr_same_shape(c, SR_RED_FLOAT, 2); }  /* (self, dim, dtype) */
static void sr_argsort(ts_sr_call *c) { sr_same_shape(c, SR_RED_LONG, -1); }

/* sort: values (self's dtype) and int64 indices of self's sizes */
static void sr_sort(ts_sr_call *c) {
  sr_same_shape(c, SR_RED_SELF, -1);
  ts_sr_shape in;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  in.dtype = TS_DT_INT64;
  const ts_sr_shape *m[1] = {&in};
  sr_fresh(&in, m, 1);
  ts_sr_set(c, 1, &in);
}

/* topk(self, k, dim, largest, sorted): k along dim */
static void sr_topk(ts_sr_call *c) {
  ts_sr_shape in, out;
  int64_t k, d;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  out = in;
  if (in.rank < 0 || !ts_sr_int(c, 2, &d) || !ts_sr_wrap_dim(d, in.rank, &d)) {
    sr_like(&out, &in);
  } else if (in.rank > 0) {
    if (!ts_sr_size(c, 1, &k))
      k = -1;
    if (k >= 0 && in.sizes[d] >= 0 && k > in.sizes[d])
      return; /* "selected index k out of range" */
    out.sizes[d] = k;
  }
  const ts_sr_shape *m[1] = {&in};
  sr_fresh(&out, m, 1);
  ts_sr_set(c, 0, &out);
  out.dtype = TS_DT_INT64;
  ts_sr_set(c, 1, &out);
}

/* ------------------------------------------------------ matrix products */

/* mm(self, mat2): [n, k] @ [k, m] */
static void sr_mm(ts_sr_call *c) {
  ts_sr_shape a, b, out;
  if (!ts_sr_tensor(c, 0, &a) || !ts_sr_tensor(c, 1, &b))
    return;
  int8_t dt = sr_agree(a.dtype, b.dtype);
  if (dt == -2 || (a.rank >= 0 && a.rank != 2) || (b.rank >= 0 && b.rank != 2))
    return;
  ts_sr_unknown(&out);
  out.dtype = dt;
  out.rank = 2;
  int64_t k;
  if (a.rank == 2 && b.rank == 2 && !sr_match(a.sizes[1], b.sizes[0], &k))
    return;
  out.sizes[0] = a.rank == 2 ? a.sizes[0] : -1;
  out.sizes[1] = b.rank == 2 ? b.sizes[1] : -1;
  const ts_sr_shape *m[2] = {&a, &b};
  ts_sr_meta_from(&out, m, 2);
  ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

/* bmm(self, mat2): [B, n, k] @ [B, k, m] */
static void sr_bmm(ts_sr_call *c) {
  ts_sr_shape a, b, out;
  if (!ts_sr_tensor(c, 0, &a) || !ts_sr_tensor(c, 1, &b))
    return;
  int8_t dt = sr_agree(a.dtype, b.dtype);
  if (dt == -2 || (a.rank >= 0 && a.rank != 3) || (b.rank >= 0 && b.rank != 3))
    return;
  ts_sr_unknown(&out);
  out.dtype = dt;
  out.rank = 3;
  int64_t x;
  if (a.rank == 3 && b.rank == 3 && (!sr_match(a.sizes[2], b.sizes[1], &x) || !sr_match(a.sizes[0], b.sizes[0], &x)))
    return;
  out.sizes[0] = a.rank == 3 && b.rank == 3 ? x : a.rank == 3 ? a.sizes[0] : b.rank == 3 ? b.sizes[0] : -1;
  out.sizes[1] = a.rank == 3 ? a.sizes[1] : -1;
  out.sizes[2] = b.rank == 3 ? b.sizes[2] : -1;
  const ts_sr_shape *m[2] = {&a, &b};
  ts_sr_meta_from(&out, m, 2);
  ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

/* torch.matmul's shapes: 1-d operands gain and then lose a dimension, the
 * batch dimensions broadcast. False when the shapes cannot multiply. */
static bool sr_matmul_shape(const ts_sr_shape *a, const ts_sr_shape *b, ts_sr_shape *out) {
  if (a->rank < 0 || b->rank < 0) {
    out->rank = -1;
    return true;
  }
  if (a->rank == 0 || b->rank == 0)
    return false; /* "both arguments to matmul need to be at least 1D" */
  int64_t k;
  int64_t ak = a->sizes[a->rank - 1], bk = b->rank == 1 ? b->sizes[0] : b->sizes[b->rank - 2];
  if (!sr_match(ak, bk, &k))
    return false;
  ts_sr_shape ba, bb;
  ts_sr_unknown(&ba);
  ts_sr_unknown(&bb);
  ba.rank = a->rank > 2 ? a->rank - 2 : 0;
  bb.rank = b->rank > 2 ? b->rank - 2 : 0;
  memcpy(ba.sizes, a->sizes, (size_t)ba.rank * sizeof *ba.sizes);
  memcpy(bb.sizes, b->sizes, (size_t)bb.rank * sizeof *bb.sizes);
  if (!ts_sr_broadcast(&ba, &bb))
    return false;
  int32_t r = ba.rank;
  memcpy(out->sizes, ba.sizes, (size_t)r * sizeof *ba.sizes);
  if (a->rank >= 2)
    out->sizes[r++] = a->sizes[a->rank - 2];
  if (b->rank >= 2)
    out->sizes[r++] = b->sizes[b->rank - 1];
  out->rank = r;
  return true;
}

static void sr_matmul(ts_sr_call *c) {
  ts_sr_shape a, b, out;
  if (!ts_sr_tensor(c, 0, &a) || !ts_sr_tensor(c, 1, &b))
    return;
  int8_t dt = sr_agree(a.dtype, b.dtype);
  if (dt == -2)
    return;
  ts_sr_unknown(&out);
  if (!sr_matmul_shape(&a, &b, &out))
    return;
  out.dtype = dt;
  const ts_sr_shape *m[2] = {&a, &b};
  ts_sr_meta_from(&out, m, 2);
  ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

/* addmm(self, mat1, mat2, beta, alpha), baddbmm(self, b1, b2, ...): the
 * product's sizes, self broadcast to them */
static void sr_addmm(ts_sr_call *c) {
  ts_sr_shape s, a, b, out;
  if (!ts_sr_tensor(c, 0, &s) || !ts_sr_tensor(c, 1, &a) || !ts_sr_tensor(c, 2, &b))
    return;
  int8_t dt = sr_agree(sr_agree(a.dtype, b.dtype), s.dtype);
  int32_t want = c->node->kind == TS_K_aten_addmm ? 2 : 3;
  if (dt <= -2 || (a.rank >= 0 && a.rank != want) || (b.rank >= 0 && b.rank != want))
    return;
  ts_sr_unknown(&out);
  if (!sr_matmul_shape(&a, &b, &out))
    return;
  if (out.rank >= 0) {
    ts_sr_shape t = s;
    if (!ts_sr_broadcast(&t, &out) || t.rank != out.rank)
      return; /* self must broadcast to the product */
  }
  out.dtype = dt;
  const ts_sr_shape *m[3] = {&s, &a, &b};
  ts_sr_meta_from(&out, m, 3);
  ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

/* linear(input, weight, bias): input[..., in] @ weight[out, in]^T */
static void sr_linear(ts_sr_call *c) {
  ts_sr_shape x, w, out;
  if (!ts_sr_tensor(c, 0, &x) || !ts_sr_tensor(c, 1, &w))
    return;
  int8_t dt = sr_agree(x.dtype, w.dtype);
  if (dt == -2 || x.rank == 0 || (w.rank >= 0 && w.rank != 1 && w.rank != 2))
    return;
  sr_like(&out, &x);
  out.dtype = dt;
  if (x.rank > 0 && w.rank > 0) {
    int64_t k;
    if (!sr_match(x.sizes[x.rank - 1], w.sizes[w.rank - 1], &k))
      return;
    out.rank = x.rank - 1;
    memcpy(out.sizes, x.sizes, (size_t)out.rank * sizeof *out.sizes);
    if (w.rank == 2)
      out.sizes[out.rank++] = w.sizes[0];
  }
  ts_sr_shape bias;
  const ts_sr_shape *m[3] = {&x, &w, &bias};
  uint32_t nm = 2;
  if (!ts_sr_is_none(c, 2) && ts_sr_tensor(c, 2, &bias))
    nm = 3;
  ts_sr_meta_from(&out, m, nm);
  ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

/* ---------------------------------------------------------- convolution */

/* A list argument of `n` values for `k` spatial dimensions (one value
 * stands for all). */
static bool sr_spatial(const ts_sr_call *c, uint32_t i, int32_t k, int64_t *out) {
  int64_t v[TS_SR_MAX_RANK];
  int32_t n;
  if (!ts_sr_int_list(c, i, v, &n, TS_SR_MAX_RANK) || (n != 1 && n != k))
    return false;
  for (int32_t j = 0; j < k; j++)
    out[j] = v[n == 1 ? 0 : j];
  return true;
}

/* A convolution: input at 0, weight 1, bias 2, stride 3, padding 4 (an
 * int[] or, with `str_padding`, "same"/"valid"), dilation 5; transposed
 * and output_padding at tr_arg, tr_arg + 1 (-1: none), groups at g_arg;
 * tr_arg -2: conv_transpose*d's order (output_padding 5, groups 6,
 * dilation 7). */
static void sr_conv(ts_sr_call *c, int tr_arg, int g_arg, bool unbatched_ok) {
  ts_sr_shape x, w, out;
  if (!ts_sr_tensor(c, 0, &x) || !ts_sr_tensor(c, 1, &w))
    return;
  int8_t dt = sr_agree(x.dtype, w.dtype);
  if (dt == -2)
    return;
  sr_like(&out, &x);
  out.dtype = dt;
  const ts_sr_shape *m[2] = {&x, &w};
  ts_sr_meta_from(&out, m, 2);
  if (w.rank < 3 || x.rank < 0) {
    ts_sr_set(c, 0, &out);
    return;
  }
  int32_t k = w.rank - 2;
  bool batched = x.rank == k + 2;
  if (!batched && !(unbatched_ok && x.rank == k + 1))
    return; /* "Expected 3D (unbatched) or 4D (batched) input" */
  bool transposed = tr_arg == -2;
  int64_t groups = 1;
  if ((tr_arg >= 0 && !ts_sr_bool(c, (uint32_t)tr_arg, &transposed)) || !ts_sr_int(c, (uint32_t)g_arg, &groups) ||
      groups <= 0) {
    ts_sr_set(c, 0, &out);
    return;
  }
  uint32_t dil_arg = tr_arg == -2 ? 7 : 5, opad_arg = tr_arg == -2 ? 5 : (uint32_t)tr_arg + 1;
  int64_t stride[TS_SR_MAX_RANK], pad[TS_SR_MAX_RANK], dil[TS_SR_MAX_RANK], opad[TS_SR_MAX_RANK];
  bool same = false;
  const ts_value *pv = c->node->ninputs > 4 ? c->node->inputs[4] : NULL;
  bool known = sr_spatial(c, 3, k, stride) && sr_spatial(c, dil_arg, k, dil);
  if (pv && pv->type->kind == TS_TY_STR) {
    ts_cval cv;
    if (!ts_pass_const_get(pv, &cv) || cv.kind != TS_CV_STR)
      known = false;
    else if (cv.len == 4 && memcmp(cv.s, "same", 4) == 0)
      same = true;
    else if (cv.len == 5 && memcmp(cv.s, "valid", 5) == 0)
      for (int32_t j = 0; j < k; j++)
        pad[j] = 0;
    else
      return;
  } else {
    known = known && sr_spatial(c, 4, k, pad);
  }
  if (transposed)
    known = known && sr_spatial(c, opad_arg, k, opad);
  int32_t b0 = batched ? 1 : 0;
  out.rank = x.rank;
  if (batched)
    out.sizes[0] = x.sizes[0];
  int64_t cout = w.sizes[0];
  if (transposed && (w.sizes[1] < 0 || !ts_sr_mul(w.sizes[1], groups, &cout)))
    cout = -1;
  if (!transposed && x.sizes[b0] != 0 && cout != 0 && x.sizes[b0] < 0)
    cout = -1; /* an input without channels gives an output without them (ATen's empty convolution) */
  else if (!transposed && x.sizes[b0] == 0)
    cout = 0;
  out.sizes[b0] = cout;
  for (int32_t j = 0; j < k; j++) {
    int64_t in = x.sizes[b0 + 1 + j], kw = w.sizes[2 + j];
    if (!known || in < 0 || kw < 0) {
      out.sizes[b0 + 1 + j] = same && in != -1 ? in : -1;
      continue;
    }
    if (same) {
      out.sizes[b0 + 1 + j] = in;
      continue;
    }
    /* the formulas in non-negative steps, each checked for overflow */
    int64_t o, a, b;
    if (stride[j] <= 0 || pad[j] < 0 || dil[j] <= 0 || in == 0)
      return;
    if (!ts_sr_mul(dil[j], kw - 1, &b))
      return;
    if (transposed) {
      if (opad[j] < 0 || !ts_sr_mul(in - 1, stride[j], &a) || !ts_sr_add(a, b, &a) || !ts_sr_add(a, opad[j], &a) ||
          !ts_sr_add(a, 1, &a) || !ts_sr_mul(pad[j], 2, &o))
        return;
      o = a - o;
    } else {
      if (!ts_sr_mul(pad[j], 2, &a) || !ts_sr_add(a, in, &a))
        return;
      int64_t num = a - b - 1;
      if (num < 0)
        return; /* "Kernel size can't be greater than actual input size" */
      o = num / stride[j] + 1;
    }
    if (o < 0)
      return;
    out.sizes[b0 + 1 + j] = o;
  }
  if (ts_sr_is_contiguous(&x))
    ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

/* conv1d/2d/3d(input, weight, bias, stride, padding, dilation, groups) */
static void sr_conv_nd(ts_sr_call *c) { sr_conv(c, -1, 6, true); }
/* conv_transpose1d/2d/3d(input, weight, bias, stride, padding,
 * output_padding, groups, dilation) */
static void sr_conv_transpose(ts_sr_call *c) { sr_conv(c, -2, 6, true); }
/* convolution(input, weight, bias, stride, padding, dilation, transposed,
 * output_padding, groups), _convolution(... the same, then flags) */
static void sr_convolution(ts_sr_call *c) { sr_conv(c, 6, 8, false); }

/* -------------------------------------------------------------- pooling */

/* ATen's pooling_output_shape; 0 for arguments it would refuse or that
 * overflow, -1 when the input size is not known. */
static int64_t sr_pool_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
  if (in < 0)
    return -1;
  int64_t a, b, num;
  if (stride <= 0 || k <= 0 || pad < 0 || dil <= 0 || !ts_sr_mul(pad, 2, &a) || !ts_sr_add(a, in, &a) ||
      !ts_sr_mul(dil, k - 1, &b) || !ts_sr_add(a, ceil_mode ? stride - 1 : 0, &a))
    return 0;
  num = a - b - 1;
  if (num < 0)
    return 0; /* floor(num / stride) + 1 <= 0 */
  int64_t o = num / stride + 1;
  int64_t last;
  if (ceil_mode && ts_sr_mul(o - 1 >= 0 ? o - 1 : 0, stride, &last) && last >= in + pad)
    o--;
  return o;
}

/* max_pool(self, kernel, stride, padding, dilation, ceil_mode) with k
 * spatial dims; avg_pool(self, kernel, stride, padding, ceil_mode, ...) has
 * no dilation (dil_arg -1); the *_with_indices forms' int64 indices are
 * the output's sizes. */
static void sr_pool(ts_sr_call *c, int32_t k, int dil_arg, int ceil_arg) {
  ts_sr_shape x, out;
  if (!ts_sr_tensor(c, 0, &x))
    return;
  sr_like(&out, &x);
  if (x.rank >= 0 && x.rank != k + 1 && x.rank != k + 2)
    return;
  int64_t kern[TS_SR_MAX_RANK], stride[TS_SR_MAX_RANK], pad[TS_SR_MAX_RANK], dil[TS_SR_MAX_RANK];
  int64_t sv[TS_SR_MAX_RANK];
  int32_t ns = 0;
  bool ceil_mode = false;
  bool known = x.rank >= 0 && sr_spatial(c, 1, k, kern) && sr_spatial(c, 3, k, pad) &&
               ts_sr_int_list(c, 2, sv, &ns, TS_SR_MAX_RANK) && ts_sr_bool(c, (uint32_t)ceil_arg, &ceil_mode);
  if (known && ns == 0)
    memcpy(stride, kern, (size_t)k * sizeof *kern);
  else if (known)
    known = sr_spatial(c, 2, k, stride);
  for (int32_t j = 0; j < k; j++)
    dil[j] = 1;
  if (known && dil_arg >= 0)
    known = sr_spatial(c, (uint32_t)dil_arg, k, dil);
  if (x.rank >= 0) {
    out.rank = x.rank;
    for (int32_t j = 0; j < x.rank - k; j++)
      out.sizes[j] = x.sizes[j];
    for (int32_t j = 0; j < k; j++) {
      int32_t d = x.rank - k + j;
      out.sizes[d] = known ? sr_pool_size(x.sizes[d], kern[j], pad[j], stride[j], dil[j], ceil_mode) : -1;
      if (known && x.sizes[d] >= 0 && out.sizes[d] <= 0)
        return; /* "Output size is too small" */
    }
    if (ts_sr_is_contiguous(&x))
      ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
  if (c->node->noutputs > 1) {
    out.dtype = TS_DT_INT64;
    ts_sr_set(c, 1, &out);
  }
}

static void sr_max_pool1d(ts_sr_call *c) { sr_pool(c, 1, 4, 5); }
static void sr_max_pool2d(ts_sr_call *c) { sr_pool(c, 2, 4, 5); }
static void sr_avg_pool1d(ts_sr_call *c) { sr_pool(c, 1, -1, 4); }
static void sr_avg_pool2d(ts_sr_call *c) { sr_pool(c, 2, -1, 4); }
static void sr_max_pool3d(ts_sr_call *c) { sr_pool(c, 3, 4, 5); }
static void sr_avg_pool3d(ts_sr_call *c) { sr_pool(c, 3, -1, 4); }

/* The last k sizes replaced by the output_size argument at `arg`. */
static bool sr_resize_spatial(ts_sr_call *c, const ts_sr_shape *x, int32_t k, uint32_t arg, ts_sr_shape *out) {
  sr_like(out, x);
  if (x->rank >= 0 && x->rank != k + 1 && x->rank != k + 2)
    return false;
  int64_t os[TS_SR_MAX_RANK];
  int32_t n;
  bool known = ts_sr_size_list(c, arg, os, &n, TS_SR_MAX_RANK) && (n == k || n == 1);
  if (x->rank >= 0) {
    out->rank = x->rank;
    memcpy(out->sizes, x->sizes, (size_t)x->rank * sizeof *x->sizes);
    for (int32_t j = 0; j < k; j++) {
      int64_t v = known ? os[n == 1 ? 0 : j] : TS_SR_UNKNOWN;
      if (v != TS_SR_UNKNOWN && v < 0 && v > -2)
        return false;
      out->sizes[x->rank - k + j] = v == TS_SR_UNKNOWN ? -1 : v;
    }
    if (ts_sr_is_contiguous(x))
      ts_sr_contiguous(out);
  }
  return true;
}

/* adaptive_avg_pool1d/2d/3d(self, output_size), adaptive_max_pool1d/2d/3d
 * (and their int64 indices) */
static void sr_adaptive_pool(ts_sr_call *c) {
  ts_sr_shape x, out;
  if (!ts_sr_tensor(c, 0, &x))
    return;
  ts_kind kind = c->node->kind;
  int32_t k = kind == TS_K_aten_adaptive_avg_pool1d || kind == TS_K_aten_adaptive_max_pool1d ? 1
              : kind == TS_K_aten_adaptive_avg_pool3d || kind == TS_K_aten__adaptive_avg_pool3d ||
                      kind == TS_K_aten_adaptive_max_pool3d
                  ? 3
                  : 2;
  if (!sr_resize_spatial(c, &x, k, 1, &out))
    return;
  ts_sr_set(c, 0, &out);
  if (c->node->noutputs > 1) {
    out.dtype = TS_DT_INT64;
    ts_sr_set(c, 1, &out);
  }
}

/* grid_sampler / _2d / _3d(input [N, C, (D,) H, W], grid [N, (D',) H',
 * W', nsp]): [N, C, (D',) H', W'], contiguous, the input's dtype */
static void sr_grid_sampler(ts_sr_call *c) {
  ts_sr_shape x, g, out;
  if (!ts_sr_tensor(c, 0, &x) || !ts_sr_tensor(c, 1, &g))
    return;
  sr_like(&out, &x);
  int32_t want = c->node->kind == TS_K_aten_grid_sampler_2d ? 4 : c->node->kind == TS_K_aten_grid_sampler_3d ? 5 : -1;
  if (x.rank >= 0 && g.rank >= 0 && x.rank == g.rank && (x.rank == 4 || x.rank == 5) &&
      (want < 0 || x.rank == want)) {
    out.rank = x.rank;
    out.sizes[0] = x.sizes[0] >= 0 ? x.sizes[0] : g.sizes[0];
    out.sizes[1] = x.sizes[1];
    for (int32_t i = 2; i < x.rank; i++)
      out.sizes[i] = g.sizes[i - 1];
    ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
}

/* affine_grid_generator(theta, size [N, C, (D,) H, W], align_corners):
 * [N, (D,) H, W, nsp], contiguous, theta's dtype */
static void sr_affine_grid(ts_sr_call *c) {
  ts_sr_shape t, out;
  if (!ts_sr_tensor(c, 0, &t))
    return;
  sr_like(&out, &t);
  int64_t sz[TS_SR_MAX_RANK];
  int32_t n;
  if (ts_sr_size_list(c, 1, sz, &n, TS_SR_MAX_RANK)) {
    if (n != 4 && n != 5)
      return;
    out.rank = n;
    out.sizes[0] = sz[0] == TS_SR_UNKNOWN ? -1 : sz[0];
    for (int32_t i = 2; i < n; i++)
      out.sizes[i - 1] = sz[i] == TS_SR_UNKNOWN ? -1 : sz[i];
    out.sizes[n - 1] = n - 2;
    for (int32_t i = 0; i < n; i++)
      if (out.sizes[i] < 0 && out.sizes[i] > -2)
        out.sizes[i] = -1;
    ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
}

/* floor division (ATen's div_rtn) */
static int64_t sr_div_rtn(int64_t a, int64_t b) {
  int64_t q = a / b, r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? q - 1 : q;
}

/* Two-element int[2] arguments at i..i+n-1 into v (false if unknown). */
static bool sr_pairs(ts_sr_call *c, uint32_t i, uint32_t n, int64_t v[][2]) {
  for (uint32_t k = 0; k < n; k++) {
    int64_t t[TS_SR_MAX_RANK];
    int32_t m;
    if (!ts_sr_int_list(c, i + k, t, &m, TS_SR_MAX_RANK) || m != 2)
      return false;
    v[k][0] = t[0], v[k][1] = t[1];
    if (v[k][0] > (1 << 20) || v[k][1] > (1 << 20) || v[k][0] < -(1 << 20) || v[k][1] < -(1 << 20))
      return false;
  }
  return true;
}

/* im2col(self [(N,) C, H, W], kernel_size, dilation, padding, stride):
 * [(N,) C * kh * kw, L]; col2im(self [(N,) C * kh * kw, L], output_size,
 * kernel_size, dilation, padding, stride): [(N,) C, oh, ow]; contiguous */
static void sr_im2col(ts_sr_call *c) {
  ts_sr_shape x, out;
  if (!ts_sr_tensor(c, 0, &x))
    return;
  sr_like(&out, &x);
  bool col2im = c->node->kind == TS_K_aten_col2im;
  int64_t v[5][2];
  int32_t r = col2im ? 2 : 3;
  if (x.rank >= 0 && x.rank != r && x.rank != r + 1)
    return;
  if (x.rank >= 0 && sr_pairs(c, 1, col2im ? 5 : 4, v)) {
    int64_t(*k)[2] = col2im ? v + 1 : v, (*d)[2] = k + 1, (*p)[2] = k + 2, (*st)[2] = k + 3;
    if ((*k)[0] <= 0 || (*k)[1] <= 0 || (*d)[0] <= 0 || (*d)[1] <= 0 || (*st)[0] <= 0 || (*st)[1] <= 0)
      return;
    bool batched = x.rank == r + 1;
    out.rank = col2im ? x.rank + 1 : x.rank - 1;
    if (batched)
      out.sizes[0] = x.sizes[0];
    int64_t *o = out.sizes + (batched ? 1 : 0), *in = x.sizes + (batched ? 1 : 0);
    if (!col2im) {
      if ((*p)[0] < 0 || (*p)[1] < 0)
        return;
      int64_t bl[2];
      for (int j = 0; j < 2; j++) {
        bl[j] = in[1 + j] >= 0 ? sr_div_rtn(in[1 + j] + 2 * (*p)[j] - ((*d)[j] * ((*k)[j] - 1) + 1), (*st)[j]) + 1
                               : -1;
        if (in[1 + j] >= 0 && bl[j] < 1)
          return;
      }
      o[0] = in[0] >= 0 ? in[0] * (*k)[0] * (*k)[1] : -1;
      o[1] = bl[0] >= 0 && bl[1] >= 0 ? bl[0] * bl[1] : -1;
    } else {
      int64_t kk = (*k)[0] * (*k)[1];
      if (in[0] >= 0 && in[0] % kk != 0)
        return;
      o[0] = in[0] >= 0 ? in[0] / kk : -1;
      o[1] = v[0][0], o[2] = v[0][1];
      if (o[1] < 0 || o[2] < 0)
        return;
    }
    ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
}

/* pixel_shuffle(self [*, C, H, W], r): [*, C / r^2, H * r, W * r];
 * pixel_unshuffle: [*, C * r^2, H / r, W / r]; contiguous for a contiguous
 * input (ATen keeps a channels-last one channels-last) */
static void sr_pixel_shuffle(ts_sr_call *c) {
  ts_sr_shape x, out;
  int64_t f;
  if (!ts_sr_tensor(c, 0, &x))
    return;
  sr_like(&out, &x);
  if (x.rank >= 0 && x.rank < 3)
    return;
  if (x.rank >= 3 && ts_sr_int(c, 1, &f) && f > 0 && f < (1 << 20)) {
    bool up = c->node->kind == TS_K_aten_pixel_shuffle;
    out.rank = x.rank;
    memcpy(out.sizes, x.sizes, (size_t)x.rank * sizeof *x.sizes);
    int64_t *s = out.sizes + x.rank - 3, *in = x.sizes + x.rank - 3;
    if (up) {
      if (in[0] >= 0 && in[0] % (f * f) != 0)
        return;
      s[0] = in[0] >= 0 ? in[0] / (f * f) : -1;
      s[1] = in[1] >= 0 ? in[1] * f : -1;
      s[2] = in[2] >= 0 ? in[2] * f : -1;
    } else {
      if ((in[1] >= 0 && in[1] % f != 0) || (in[2] >= 0 && in[2] % f != 0))
        return;
      s[0] = in[0] >= 0 ? in[0] * f * f : -1;
      s[1] = in[1] >= 0 ? in[1] / f : -1;
      s[2] = in[2] >= 0 ? in[2] / f : -1;
    }
    for (int32_t i = 0; i < x.rank; i++)
      if (out.sizes[i] < 0)
        out.sizes[i] = -1;
    if (ts_sr_is_contiguous(&x))
      ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
}

/* prelu(self, weight): self's shape and dtype, contiguous */
static void sr_prelu(ts_sr_call *c) {
  ts_sr_shape x, out;
  if (!ts_sr_tensor(c, 0, &x))
    return;
  sr_like(&out, &x);
  if (x.rank >= 0) {
    out.rank = x.rank;
    memcpy(out.sizes, x.sizes, (size_t)x.rank * sizeof *x.sizes);
    ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
}

/* glu(self, dim): dim halved */
static void sr_glu(ts_sr_call *c) {
  ts_sr_shape x, out;
  int64_t dim, wd;
  if (!ts_sr_tensor(c, 0, &x))
    return;
  sr_like(&out, &x);
  if (x.rank >= 1 && ts_sr_int(c, 1, &dim) && ts_sr_wrap_dim(dim, x.rank, &wd)) {
    if (x.sizes[wd] >= 0 && x.sizes[wd] % 2 != 0)
      return;
    out.rank = x.rank;
    memcpy(out.sizes, x.sizes, (size_t)x.rank * sizeof *x.sizes);
    out.sizes[wd] = x.sizes[wd] >= 0 ? x.sizes[wd] / 2 : -1;
    if (ts_sr_is_contiguous(&x)) /* else TensorIterator follows the input's layout */
      ts_sr_contiguous(&out);
  } else if (x.rank == 0) {
    return;
  }
  ts_sr_set(c, 0, &out);
}

/* cosine_similarity(x1, x2, dim, eps): the broadcast shape without dim, in
 * the promoted (floating) dtype */
static void sr_cosine_similarity(ts_sr_call *c) {
  ts_sr_shape a, b, out;
  int64_t dim, wd;
  if (!ts_sr_tensor(c, 0, &a) || !ts_sr_tensor(c, 1, &b))
    return;
  sr_like(&out, &a);
  /* a 0-d operand against a dimensioned one ranks lower in result_type: only same ranks promote here */
  bool same_kind = a.rank >= 0 && b.rank >= 0 && (a.rank == 0) == (b.rank == 0);
  out.dtype = a.dtype == b.dtype                                                  ? a.dtype
              : same_kind && a.dtype != TS_DT_NONE && b.dtype != TS_DT_NONE ? ts_type_promote(a.dtype, b.dtype)
                                                                             : TS_DT_NONE;
  if (out.dtype != TS_DT_NONE && !ts_dtype_is_float(out.dtype))
    return;
  if (a.rank >= 0 && b.rank >= 0 && ts_sr_int(c, 2, &dim)) {
    ts_sr_shape bc = a;
    if (!ts_sr_broadcast(&bc, &b) || !ts_sr_wrap_dim(dim, bc.rank, &wd))
      return;
    out.rank = bc.rank > 0 ? bc.rank - 1 : 0;
    for (int32_t i = 0, k = 0; i < bc.rank; i++)
      if (i != wd)
        out.sizes[k++] = bc.sizes[i];
    ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
}

/* cdist / _cdist_forward / _euclidean_dist(x1 [*, r1, m], x2 [*, r2, m]):
 * [broadcast *, r1, r2], x1's dtype, contiguous */
static void sr_cdist(ts_sr_call *c) {
  ts_sr_shape a, b, out;
  if (!ts_sr_tensor(c, 0, &a) || !ts_sr_tensor(c, 1, &b))
    return;
  sr_like(&out, &a);
  if (c->node->kind == TS_K_aten__euclidean_dist && a.dtype != b.dtype)
    out.dtype = TS_DT_NONE;
  if ((a.rank >= 0 && a.rank < 2) || (b.rank >= 0 && b.rank < 2))
    return;
  if (a.rank >= 2 && b.rank >= 2) {
    ts_sr_shape ba = a, bb = b;
    ba.rank = a.rank - 2, bb.rank = b.rank - 2;
    if (!ts_sr_broadcast(&ba, &bb))
      return;
    out.rank = ba.rank + 2;
    memcpy(out.sizes, ba.sizes, (size_t)ba.rank * sizeof *ba.sizes);
    out.sizes[ba.rank] = a.sizes[a.rank - 2];
    out.sizes[ba.rank + 1] = b.sizes[b.rank - 2];
    ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
}

/* embedding_bag & co (weight [num, D], indices, offsets [K], ...,
 * include_last_offset at 7): output 0 [K - include_last_offset, D] in the
 * weight's dtype (the other three depend on the mode and ATen's fast path) */
static void sr_embedding_bag(ts_sr_call *c) {
  ts_sr_shape w, off, out;
  bool last;
  if (!ts_sr_tensor(c, 0, &w) || !ts_sr_tensor(c, 2, &off))
    return;
  sr_like(&out, &w);
  if (w.rank == 2 && off.rank == 1 && off.sizes[0] >= 0 && ts_sr_bool(c, 7, &last)) {
    out.rank = 2;
    out.sizes[0] = off.sizes[0] - (last ? 1 : 0) >= 0 ? off.sizes[0] - (last ? 1 : 0) : 0;
    out.sizes[1] = w.sizes[1];
    ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
}

/* The upsample family: upsample_nearest1d/2d/3d(self, output_size,
 * scales...), _upsample_nearest_exact*, upsample_linear1d /
 * bilinear2d / trilinear3d / bicubic2d and the _aa forms (self,
 * output_size, align_corners, scales...); the .vec forms (input,
 * output_size?, [align_corners,] scale_factors?): sizes given, or
 * trunc(size * scale) */
static void sr_upsample(ts_sr_call *c) {
  ts_sr_shape x, out;
  if (!ts_sr_tensor(c, 0, &x))
    return;
  const char *name = ts_kind_name(c->node->kind);
  size_t len = strlen(name);
  int32_t k = name[len - 2] - '0';
  if (strncmp(name + len - 3, "_aa", 3) == 0)
    k = 2;
  if (k < 1 || k > 3)
    return;
  bool vec = strcmp(c->schema->overload, "vec") == 0;
  if (!vec || !ts_sr_is_none(c, 1)) {
    if (!sr_resize_spatial(c, &x, k, 1, &out))
      return;
    if (out.rank >= 0 && out.rank != k + 2)
      return; /* "It is expected input_size equals to ..." */
    ts_sr_set(c, 0, &out);
    return;
  }
  uint32_t sf = c->node->ninputs - 1; /* scale_factors: the last argument */
  sr_like(&out, &x);
  if (x.rank == k + 2 && c->node->ninputs >= 3) {
    out.rank = k + 2;
    memcpy(out.sizes, x.sizes, (size_t)(k + 2) * sizeof *x.sizes);
    uint32_t n;
    ts_value *const *items = ts_sp_list_items(c->node->inputs[sf], &n);
    const ts_attr *a = ts_node_is(c->node->inputs[sf]->node, TS_K_prim_Constant)
                           ? ts_node_attr(c->node->inputs[sf]->node, "value")
                           : NULL;
    double scale[3];
    bool known = false;
    if (a && a->kind == TS_ATTR_FLOATS && a->len == (uint32_t)k) {
      for (int32_t j = 0; j < k; j++)
        scale[j] = a->u.fs[j];
      known = true;
    } else if (items && n == (uint32_t)k) {
      known = true;
      for (int32_t j = 0; j < k && known; j++) {
        ts_cval v;
        known = ts_pass_const_get(items[j], &v) && v.kind == TS_CV_FLOAT;
        if (known)
          scale[j] = v.f;
      }
    }
    for (int32_t j = 0; j < k; j++) {
      int64_t in = x.sizes[2 + j];
      double o = known && in >= 0 ? trunc((double)in * scale[j]) : -1;
      out.sizes[2 + j] = o >= 0 && o < 9.0e18 ? (int64_t)o : -1;
      if (known && in > 0 && o < 1)
        return; /* "Input and output sizes should be greater than 0" */
    }
    if (ts_sr_is_contiguous(&x))
      ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
}

/* --------------------------------------------- normalisation, dropout */

/* batch_norm, instance_norm, layer_norm, group_norm: input's sizes and
 * dtype, a new tensor */
static void sr_norm_like(ts_sr_call *c) {
  ts_sr_shape x;
  if (!ts_sr_tensor(c, 0, &x))
    return;
  const ts_sr_shape *m[1] = {&x};
  sr_fresh(&x, m, 1);
  ts_sr_set(c, 0, &x);
}

/* dropout(input, p, train): in eval mode the input itself */
static void sr_dropout(ts_sr_call *c) {
  bool train = true;
  if (ts_sr_bool(c, 2, &train) && !train) {
    if (c->node->inputs[0]->type->kind == TS_TY_TENSOR)
      ts_sr_set_type(c, 0, c->node->inputs[0]->type);
    return;
  }
  sr_norm_like(c);
}

/* ------------------------------------------------------- recurrent ops */

/* lstm.input(input, hx[], params, has_biases, num_layers, dropout, train,
 * bidirectional, batch_first) -> (output, h_n, c_n); gru.input and
 * rnn_{tanh,relu}.input take one hx tensor -> (output, h_n). The output's last
 * size is directions * hidden size (h_0's last). */
static void sr_rnn(ts_sr_call *c) {
  ts_sr_shape x, h[2], out;
  if (!ts_sr_tensor(c, 0, &x))
    return;
  bool lstm = c->node->kind == TS_K_aten_lstm;
  uint32_t nh = 0;
  if (lstm) {
    if (!ts_sr_tensor_list(c, 1, h, &nh, 2) || nh != 2)
      return;
  } else {
    if (!ts_sr_tensor(c, 1, &h[0]))
      return;
    nh = 1;
  }
  bool bidir = false, batch_first = false;
  bool known = ts_sr_bool(c, 7, &bidir) && ts_sr_bool(c, 8, &batch_first);
  sr_like(&out, &x);
  if (known && x.rank >= 0 && (x.rank == 2 || x.rank == 3) && h[0].rank >= 1) {
    int64_t hid = h[0].sizes[h[0].rank - 1];
    out.rank = x.rank;
    memcpy(out.sizes, x.sizes, (size_t)x.rank * sizeof *x.sizes);
    if (hid < 0 || !ts_sr_mul(hid, bidir ? 2 : 1, &out.sizes[x.rank - 1]))
      out.sizes[x.rank - 1] = -1;
    (void)batch_first; /* the last dimension is the feature one either way */
    ts_sr_contiguous(&out);
  }
  const ts_sr_shape *m[1] = {&x};
  ts_sr_meta_from(&out, m, 1);
  ts_sr_set(c, 0, &out);
  for (uint32_t k = 0; k < nh; k++) {
    ts_sr_shape s = h[k];
    s.dtype = x.dtype != TS_DT_NONE ? x.dtype : s.dtype;
    const ts_sr_shape *mm[1] = {&h[k]};
    sr_fresh(&s, mm, 1);
    ts_sr_set(c, 1 + k, &s);
  }
}

/* lstm_cell(input, hx[], w_ih, w_hh, b_ih, b_hh) -> (hy, cy): hx's shapes;
 * gru_cell and rnn_{tanh,relu}_cell(input, hx, ...) -> hy */
static void sr_rnn_cell(ts_sr_call *c) {
  ts_sr_shape x, h[2];
  if (!ts_sr_tensor(c, 0, &x))
    return;
  uint32_t nh = 1;
  if (c->node->kind == TS_K_aten_lstm_cell) {
    if (!ts_sr_tensor_list(c, 1, h, &nh, 2) || nh != 2)
      return;
  } else if (!ts_sr_tensor(c, 1, &h[0])) {
    return;
  }
  for (uint32_t k = 0; k < nh; k++) {
    ts_sr_shape s = h[k];
    if (s.dtype == TS_DT_NONE)
      s.dtype = x.dtype;
    const ts_sr_shape *m[2] = {&x, &h[k]};
    sr_fresh(&s, m, 2);
    ts_sr_set(c, k, &s);
  }
}

/* _transformer_encoder_layer_fwd(src, ...): src's sizes (a nested src has
 * no refined type, so nothing is claimed for it) */
static void sr_encoder_layer(ts_sr_call *c) { sr_norm_like(c); }

/* _native_multi_head_attention(query, key, value, embed_dim, num_head,
 * qkv_weight, qkv_bias, proj_weight, proj_bias, mask, need_weights,
 * average_attn_weights, mask_type) -> (out [B, L, E], weights [B, L, S] or
 * [B, H, L, S]) */
static void sr_mha(ts_sr_call *c) {
  ts_sr_shape q, k, out;
  if (!ts_sr_tensor(c, 0, &q) || !ts_sr_tensor(c, 1, &k))
    return;
  int64_t e, h;
  sr_like(&out, &q);
  if (q.rank == 3 && ts_sr_int(c, 3, &e)) {
    out.rank = 3;
    out.sizes[0] = q.sizes[0];
    out.sizes[1] = q.sizes[1];
    out.sizes[2] = e;
    ts_sr_contiguous(&out);
  }
  const ts_sr_shape *m[1] = {&q};
  ts_sr_meta_from(&out, m, 1);
  ts_sr_set(c, 0, &out);
  bool need = false, avg = true;
  if (!ts_sr_bool(c, 10, &need) || !need || !ts_sr_bool(c, 11, &avg) || q.rank != 3 || k.rank != 3)
    return;
  ts_sr_shape w = out;
  w.rank = 0;
  w.sizes[w.rank++] = q.sizes[0];
  if (!avg)
    w.sizes[w.rank++] = ts_sr_int(c, 4, &h) ? h : -1;
  w.sizes[w.rank++] = q.sizes[1];
  w.sizes[w.rank++] = k.sizes[1];
  ts_sr_contiguous(&w);
  ts_sr_set(c, 1, &w);
}

const ts_sr_def ts_sr_rules_nn[] = {
    {"aten::sum", sr_sum},
    {"aten::sum.dim_IntList", sr_sum_dim},
    {"aten::mean", sr_mean},
    {"aten::mean.dim", sr_mean_dim},
    {"aten::prod", sr_prod},
    {"aten::prod.dim_int", sr_prod_dim},
    {"aten::amax", sr_amax},
    {"aten::amin", sr_amax},
    {"aten::max", sr_max_all},
    {"aten::min", sr_max_all},
    {"aten::max.dim", sr_max_dim},
    {"aten::min.dim", sr_max_dim},
    {"aten::all", sr_all},
    {"aten::all.dim", sr_all_dim},
    {"aten::any", sr_all},
    {"aten::any.dim", sr_all_dim},
    {"aten::std", sr_std},
    {"aten::std.dim", sr_std_dim},
    {"aten::std.correction", sr_std_dim},
    {"aten::var", sr_std},
    {"aten::var.dim", sr_std_dim},
    {"aten::var.correction", sr_std_dim},
    {"aten::norm.Scalar", sr_norm},
    {"aten::norm.ScalarOpt_dim", sr_norm_dim},
    {"aten::norm.ScalarOpt_dim_dtype", sr_norm_dim_dtype},
    {"aten::norm.ScalarOpt_dtype", sr_norm_dtype},
    {"aten::frobenius_norm", sr_norm},
    {"aten::frobenius_norm.dim", sr_frobenius_dim},
    {"aten::nuclear_norm", sr_nuclear},
    {"aten::nuclear_norm.dim", sr_frobenius_dim},
    {"aten::logsumexp", sr_logsumexp},
    {"aten::argmax", sr_argmax},
    {"aten::argmin", sr_argmax},
    {"aten::cumsum", sr_cumsum},
    {"aten::cumprod", sr_cumsum},
    {"aten::softmax.int", sr_softmax},
    {"aten::log_softmax.int", sr_softmax},
    {"aten::sort", sr_sort},
    {"aten::sort.stable", sr_sort},
    {"aten::argsort", sr_argsort},
    {"aten::argsort.stable", sr_argsort},
    {"aten::topk", sr_topk},
    {"aten::mm", sr_mm},
    {"aten::bmm", sr_bmm},
    {"aten::matmul", sr_matmul},
    {"aten::addmm", sr_addmm},
    {"aten::baddbmm", sr_addmm},
    {"aten::linear", sr_linear},
    {"aten::conv1d", sr_conv_nd},
    {"aten::conv2d", sr_conv_nd},
    {"aten::conv1d.padding", sr_conv_nd},
    {"aten::conv2d.padding", sr_conv_nd},
    {"aten::conv3d", sr_conv_nd},
    {"aten::conv3d.padding", sr_conv_nd},
    {"aten::conv_transpose1d", sr_conv_transpose},
    {"aten::conv_transpose2d.input", sr_conv_transpose},
    {"aten::conv_transpose3d.input", sr_conv_transpose},
    /* conv2d, + residual of the output's shape, clamp: the output is conv2d's */
    {"tsaot::conv2d_act", sr_conv_nd},
    {"aten::convolution", sr_convolution},
    {"aten::_convolution", sr_convolution},
    {"aten::_convolution.deprecated", sr_convolution},
    {"aten::max_pool1d", sr_max_pool1d},
    {"aten::max_pool2d", sr_max_pool2d},
    {"aten::avg_pool1d", sr_avg_pool1d},
    {"aten::avg_pool2d", sr_avg_pool2d},
    {"aten::adaptive_avg_pool1d", sr_adaptive_pool},
    {"aten::adaptive_avg_pool2d", sr_adaptive_pool},
    {"aten::adaptive_max_pool2d", sr_adaptive_pool},
    {"aten::max_pool3d", sr_max_pool3d},
    {"aten::max_pool3d_with_indices", sr_max_pool3d},
    {"aten::max_pool2d_with_indices", sr_max_pool2d},
    {"aten::max_pool1d_with_indices", sr_max_pool1d},
    {"aten::avg_pool3d", sr_avg_pool3d},
    {"aten::adaptive_avg_pool3d", sr_adaptive_pool},
    {"aten::_adaptive_avg_pool3d", sr_adaptive_pool},
    {"aten::adaptive_max_pool3d", sr_adaptive_pool},
    {"aten::adaptive_max_pool1d", sr_adaptive_pool},
    {"aten::grid_sampler", sr_grid_sampler},
    {"aten::grid_sampler_2d", sr_grid_sampler},
    {"aten::grid_sampler_3d", sr_grid_sampler},
    {"aten::affine_grid_generator", sr_affine_grid},
    {"aten::im2col", sr_im2col},
    {"aten::col2im", sr_im2col},
    {"aten::pixel_shuffle", sr_pixel_shuffle},
    {"aten::pixel_unshuffle", sr_pixel_shuffle},
    {"aten::prelu", sr_prelu},
    {"aten::glu", sr_glu},
    {"aten::cosine_similarity", sr_cosine_similarity},
    {"aten::cdist", sr_cdist},
    {"aten::_cdist_forward", sr_cdist},
    {"aten::_euclidean_dist", sr_cdist},
    {"aten::embedding_bag", sr_embedding_bag},
    {"aten::embedding_bag.padding_idx", sr_embedding_bag},
    {"aten::_embedding_bag", sr_embedding_bag},
    {"aten::_embedding_bag_forward_only", sr_embedding_bag},
    {"aten::upsample_nearest1d", sr_upsample},
    {"aten::upsample_nearest1d.vec", sr_upsample},
    {"aten::upsample_nearest2d", sr_upsample},
    {"aten::upsample_nearest2d.vec", sr_upsample},
    {"aten::upsample_nearest3d", sr_upsample},
    {"aten::upsample_nearest3d.vec", sr_upsample},
    {"aten::_upsample_nearest_exact1d", sr_upsample},
    {"aten::_upsample_nearest_exact1d.vec", sr_upsample},
    {"aten::_upsample_nearest_exact2d", sr_upsample},
    {"aten::_upsample_nearest_exact2d.vec", sr_upsample},
    {"aten::_upsample_nearest_exact3d", sr_upsample},
    {"aten::_upsample_nearest_exact3d.vec", sr_upsample},
    {"aten::upsample_linear1d", sr_upsample},
    {"aten::upsample_linear1d.vec", sr_upsample},
    {"aten::upsample_bilinear2d", sr_upsample},
    {"aten::upsample_bilinear2d.vec", sr_upsample},
    {"aten::upsample_trilinear3d", sr_upsample},
    {"aten::upsample_trilinear3d.vec", sr_upsample},
    {"aten::upsample_bicubic2d", sr_upsample},
    {"aten::upsample_bicubic2d.vec", sr_upsample},
    {"aten::_upsample_bilinear2d_aa", sr_upsample},
    {"aten::_upsample_bilinear2d_aa.vec", sr_upsample},
    {"aten::_upsample_bicubic2d_aa", sr_upsample},
    {"aten::_upsample_bicubic2d_aa.vec", sr_upsample},
    {"aten::batch_norm", sr_norm_like},
    {"aten::instance_norm", sr_norm_like},
    {"aten::layer_norm", sr_norm_like},
    {"aten::group_norm", sr_norm_like},
    {"aten::dropout", sr_dropout},
    {"aten::feature_dropout", sr_dropout},
    {"aten::lstm.input", sr_rnn},
    {"aten::gru.input", sr_rnn},
    {"aten::rnn_tanh.input", sr_rnn},
    {"aten::rnn_relu.input", sr_rnn},
    {"aten::lstm_cell", sr_rnn_cell},
    {"aten::gru_cell", sr_rnn_cell},
    {"aten::rnn_tanh_cell", sr_rnn_cell},
    {"aten::rnn_relu_cell", sr_rnn_cell},
    {"aten::_transformer_encoder_layer_fwd", sr_encoder_layer},
    {"aten::_native_multi_head_attention", sr_mha},
    {NULL, NULL},
};
