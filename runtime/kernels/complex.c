/* runtime/kernels/complex.c: complex64/complex128 tensors' own ops:
 * view_as_real / view_as_complex and real / imag (views of the same
 * storage, as in PyTorch), complex and polar (from two real tensors,
 * broadcast), angle, and the conjugation family. PyTorch 1.13 conjugates
 * lazily (conj() sets a bit that resolve_conj materialises); here conj()
 * materialises at once, so every tensor is resolved: is_conj and is_neg are
 * false, resolve_conj and resolve_neg return self. What differs: a write
 * into conj(x) does not reach x. Elementwise arithmetic on complex tensors
 * (add, mul, abs, ...) is the pointwise engine's, which refuses them yet. */
#include <math.h>
#include <string.h>

#include "args.h"
#include "tensor_ops.h"

#define CX_PI 3.14159265358979323846

static bool cx_is(const ts_rt_tensor *t) { return ts_dtype_is_complex((ts_dtype)t->dtype); }

/* The real dtype of a complex one's parts. */
static ts_dtype cx_part_dtype(ts_dtype dt) { return dt == TS_DT_COMPLEX128 ? TS_DT_FLOAT64 : TS_DT_FLOAT32; }

static bool cx_put(ts_rt_call *call, ts_rt_tensor *t) {
  if (!t) return false;
  call->out[0] = ts_iv_tensor(t);
  return true;
}

/* A complex tensor's parts as a real view: sizes + [2], strides doubled
 * (PyTorch's view_as_real). */
static ts_rt_tensor *cx_real_view(ts_rt_ctx *c, const ts_rt_tensor *a) {
  int64_t sizes[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS];
  if (a->ndim + 1 > TS_RT_MAX_DIMS) {
    ts_rt_fail(c, "tensors of %d dimensions are not supported (at most %d)", (int)a->ndim + 1, TS_RT_MAX_DIMS);
    return NULL;
  }
  for (int32_t i = 0; i < a->ndim; i++) sizes[i] = a->sizes[i], strides[i] = a->strides[i] * 2;
  sizes[a->ndim] = 2;
  strides[a->ndim] = 1;
  return ts_rt_tensor_new_view(c, a->storage, cx_part_dtype((ts_dtype)a->dtype), a->offset * 2, a->ndim + 1, sizes,
                               strides);
}

static bool k_view_as_real(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  if (!ts_rt_arg_tensor(c, call, 0, &a)) return false;
  if (!cx_is(a)) return ts_rt_fail(c, "view_as_real is only supported for complex tensors");
  ts_rt_tensor *r = cx_real_view(c, a);
  if (r) r->requires_grad = a->requires_grad;
  return cx_put(call, r);
}

static bool k_view_as_complex(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  if (!ts_rt_arg_tensor(c, call, 0, &a)) return false;
  ts_dtype dt = (ts_dtype)a->dtype;
  if (dt != TS_DT_FLOAT32 && dt != TS_DT_FLOAT64 && dt != TS_DT_FLOAT16)
    return ts_rt_fail(c,
                      "view_as_complex is only supported for half, float and double tensors, but got a tensor of "
                      "scalar type: %s",
                      ts_rt_dtype_name(dt));
  if (dt == TS_DT_FLOAT16) return ts_rt_fail(c, "unsupported dtype ComplexHalf (tsaot has no complex32 tensors)");
  if (a->ndim == 0 || a->sizes[a->ndim - 1] != 2) return ts_rt_fail(c, "Tensor must have a last dimension of size 2");
  if (a->strides[a->ndim - 1] != 1) return ts_rt_fail(c, "Tensor must have a last dimension with stride 1");
  for (int32_t i = 0; i + 1 < a->ndim; i++)
    if (a->strides[i] % 2 != 0)
      return ts_rt_fail(c, "Tensor must have a stride divisible by 2 for all but last dimension");
  if (a->offset % 2 != 0) return ts_rt_fail(c, "Tensor must have a storage_offset divisible by 2");
  int64_t sizes[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS];
  for (int32_t i = 0; i + 1 < a->ndim; i++) sizes[i] = a->sizes[i], strides[i] = a->strides[i] / 2;
  ts_rt_tensor *r = ts_rt_tensor_new_view(c, a->storage, dt == TS_DT_FLOAT64 ? TS_DT_COMPLEX128 : TS_DT_COMPLEX64,
                                          a->offset / 2, a->ndim - 1, sizes, strides);
  if (r) r->requires_grad = a->requires_grad;
  return cx_put(call, r);
}

/* real / imag: a real tensor's real is itself; of a complex one, the parts
 * as a strided view. */
static bool cx_part(ts_rt_ctx *c, ts_rt_call *call, int part) {
  ts_rt_tensor *a;
  if (!ts_rt_arg_tensor(c, call, 0, &a)) return false;
  if (!cx_is(a)) {
    if (part) return ts_rt_fail(c, "imag is not implemented for tensors with non-complex dtypes.");
    ts_rt_tensor_retain(a);
    return cx_put(call, a);
  }
  ts_rt_tensor *v = cx_real_view(c, a);
  if (!v) return false;
  ts_rt_tensor *r = ts_rt_select(c, v, v->ndim - 1, part);
  ts_rt_tensor_release(v);
  return cx_put(call, r);
}

static bool k_real(ts_rt_ctx *c, ts_rt_call *call) { return cx_part(c, call, 0); }
static bool k_imag(ts_rt_ctx *c, ts_rt_call *call) { return cx_part(c, call, 1); }

/* The two real operands of complex / polar, checked as ATen's
 * complex_check_dtype, broadcast to one shape, contiguous in their dtype. */
static bool cx_pair(ts_rt_ctx *c, ts_rt_call *call, ts_rt_tensor **pa, ts_rt_tensor **pb) {
  ts_rt_tensor *a, *b;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_tensor(c, call, 1, &b)) return false;
  ts_dtype da = (ts_dtype)a->dtype, db = (ts_dtype)b->dtype;
  bool fa = da == TS_DT_FLOAT32 || da == TS_DT_FLOAT64 || da == TS_DT_FLOAT16;
  bool fb = db == TS_DT_FLOAT32 || db == TS_DT_FLOAT64 || db == TS_DT_FLOAT16;
  if (!fa || !fb)
    return ts_rt_fail(c, "Expected both inputs to be Half, Float or Double tensors but got %s and %s",
                      ts_rt_dtype_name(da), ts_rt_dtype_name(db));
  if (da != db)
    return ts_rt_fail(c, "Expected object of scalar type %s but got scalar type %s for second argument",
                      ts_rt_dtype_name(da), ts_rt_dtype_name(db));
  if (da == TS_DT_FLOAT16) return ts_rt_fail(c, "unsupported dtype ComplexHalf (tsaot has no complex32 tensors)");
  int32_t nd;
  int64_t shape[TS_RT_MAX_DIMS];
  if (!ts_rt_broadcast_shapes(c, a->ndim, a->sizes, b->ndim, b->sizes, &nd, shape)) return false;
  *pa = ts_rt_tensor_new(c, da, nd, shape, false);
  *pb = *pa ? ts_rt_tensor_new(c, da, nd, shape, false) : NULL;
  if (*pb && ts_rt_tensor_copy_(c, *pa, a) && ts_rt_tensor_copy_(c, *pb, b)) return true;
  if (*pa) ts_rt_tensor_release(*pa);
  if (*pb) ts_rt_tensor_release(*pb);
  return false;
}

/* complex(real, imag) and polar(abs, angle): polar's parts are
 * abs * cos(angle), abs * sin(angle), computed in the operands' dtype. */
static bool cx_make(ts_rt_ctx *c, ts_rt_call *call, bool polar) {
  ts_rt_tensor *a, *b;
  if (!cx_pair(c, call, &a, &b)) return false;
  ts_dtype dt = (ts_dtype)a->dtype;
  ts_rt_tensor *r = ts_rt_tensor_new(c, dt == TS_DT_FLOAT64 ? TS_DT_COMPLEX128 : TS_DT_COMPLEX64, a->ndim, a->sizes,
                                     false);
  if (r) {
    int64_t n = ts_rt_tensor_numel(a);
    if (dt == TS_DT_FLOAT64) {
      const double *x = ts_rt_tensor_data(a), *y = ts_rt_tensor_data(b);
      double *o = ts_rt_tensor_data(r);
      for (int64_t i = 0; i < n; i++) {
        o[2 * i] = polar ? x[i] * cos(y[i]) : x[i];
        o[2 * i + 1] = polar ? x[i] * sin(y[i]) : y[i];
      }
    } else {
      const float *x = ts_rt_tensor_data(a), *y = ts_rt_tensor_data(b);
      float *o = ts_rt_tensor_data(r);
      for (int64_t i = 0; i < n; i++) {
        o[2 * i] = polar ? x[i] * cosf(y[i]) : x[i];
        o[2 * i + 1] = polar ? x[i] * sinf(y[i]) : y[i];
      }
    }
  }
  ts_rt_tensor_release(a);
  ts_rt_tensor_release(b);
  return cx_put(call, r);
}

static bool k_complex(ts_rt_ctx *c, ts_rt_call *call) { return cx_make(c, call, false); }
static bool k_polar(ts_rt_ctx *c, ts_rt_call *call) { return cx_make(c, call, true); }

/* angle: atan2(imag, real) of a complex tensor, in its parts' dtype; of a
 * real one, pi where negative, NaN where NaN, else 0 (integers and bool
 * give float32, PyTorch's default dtype). */
static bool k_angle(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  if (!ts_rt_arg_tensor(c, call, 0, &a)) return false;
  ts_dtype dt = (ts_dtype)a->dtype;
  bool cx = cx_is(a);
  ts_dtype odt = cx ? cx_part_dtype(dt) : ts_rt_dtype_is_float(dt) ? dt : TS_DT_FLOAT32;
  /* the input in double (complex128 for a complex one), then each value */
  ts_rt_tensor *x = ts_rt_tensor_to_dtype(c, a, cx ? TS_DT_COMPLEX128 : TS_DT_FLOAT64);
  if (!x) return false;
  ts_rt_tensor *r = ts_rt_tensor_new(c, odt, a->ndim, a->sizes, false);
  if (r) {
    int64_t n = ts_rt_tensor_numel(a);
    const double *p = ts_rt_tensor_data(x);
    char *o = ts_rt_tensor_data(r);
    size_t esz = ts_dtype_size(odt);
    for (int64_t i = 0; i < n; i++) {
      double v;
      if (cx) v = odt == TS_DT_FLOAT32 ? (double)atan2f((float)p[2 * i + 1], (float)p[2 * i]) : atan2(p[2 * i + 1], p[2 * i]);
      else v = isnan(p[i]) ? p[i] : p[i] < 0 ? CX_PI : 0.0;
      ts_rt_store_f64(o + (size_t)i * esz, odt, v);
    }
  }
  ts_rt_tensor_release(x);
  return cx_put(call, r);
}

/* A new contiguous copy of a with the imaginary parts negated. */
static ts_rt_tensor *cx_conj_copy(ts_rt_ctx *c, const ts_rt_tensor *a) {
  ts_rt_tensor *r = ts_rt_tensor_new(c, (ts_dtype)a->dtype, a->ndim, a->sizes, false);
  if (!r || !ts_rt_tensor_copy_(c, r, a)) {
    if (r) ts_rt_tensor_release(r);
    return NULL;
  }
  int64_t n = ts_rt_tensor_numel(r);
  if (a->dtype == TS_DT_COMPLEX128) {
    double *p = ts_rt_tensor_data(r);
    for (int64_t i = 0; i < n; i++) p[2 * i + 1] = -p[2 * i + 1];
  } else {
    float *p = ts_rt_tensor_data(r);
    for (int64_t i = 0; i < n; i++) p[2 * i + 1] = -p[2 * i + 1];
  }
  r->requires_grad = a->requires_grad;
  return r;
}

/* conj and conj_physical: self for a real tensor (PyTorch returns it
 * unchanged), a conjugated copy for a complex one. */
static bool k_conj(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  if (!ts_rt_arg_tensor(c, call, 0, &a)) return false;
  if (!cx_is(a)) {
    ts_rt_tensor_retain(a);
    return cx_put(call, a);
  }
  return cx_put(call, cx_conj_copy(c, a));
}

/* conj_physical_: negates self's imaginary parts in place (any view). */
static bool k_conj_physical_(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  if (!ts_rt_arg_tensor(c, call, 0, &a)) return false;
  if (cx_is(a)) {
    ts_rt_tensor *v = cx_real_view(c, a);
    ts_rt_tensor *im = v ? ts_rt_select(c, v, v->ndim - 1, 1) : NULL;
    ts_rt_tensor *neg = im ? ts_rt_mul_scalar(c, im, -1.0) : NULL;
    bool ok = neg && ts_rt_tensor_copy_(c, im, neg);
    if (neg) ts_rt_tensor_release(neg);
    if (im) ts_rt_tensor_release(im);
    if (v) ts_rt_tensor_release(v);
    if (!ok) return false;
  }
  ts_rt_tensor_retain(a);
  return cx_put(call, a);
}

/* resolve_conj / resolve_neg: every tensor here is resolved already. */
static bool k_resolved(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  if (!ts_rt_arg_tensor(c, call, 0, &a)) return false;
  ts_rt_tensor_retain(a);
  return cx_put(call, a);
}

static bool k_is_false(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  if (!ts_rt_arg_tensor(c, call, 0, &a)) return false;
  call->out[0] = ts_iv_bool(false);
  return true;
}

/* Kernels of other files that take complex tensors as they are: views,
 * copies and joins that move elements by their size (checked on complex
 * inputs against PyTorch), and those that read only metadata. Every other
 * kernel outside complex.c, fft.c and the non-tensor tables (prim, list,
 * dict, str) refuses complex inputs (ts_rt_call_complex_check). */
const char *const ts_rt_complex_generic[] = {
    "aten::cat", "aten::chunk", "aten::clone", "aten::constant_pad_nd", "aten::contiguous", "aten::copy_",
    "aten::detach", "aten::diag", "aten::dim", "aten::empty_like", "aten::expand", "aten::expand_as", "aten::flatten.using_ints",
    "aten::flip", "aten::gather", "aten::index_select", "aten::is_floating_point", "aten::len.Tensor", "aten::narrow",
    "aten::new_zeros", "aten::numel", "aten::ones_like", "aten::pad", "aten::permute", "aten::repeat", "aten::reshape",
    "aten::reshape_as", "aten::roll", "aten::select.int", "aten::size", "aten::size.int", "aten::slice.Tensor",
    "aten::split.Tensor", "aten::split.sizes", "aten::squeeze", "aten::squeeze.dim", "aten::stack", "aten::t",
    "aten::to.device", "aten::to.dtype", "aten::to.dtype_layout", "aten::to.other", "aten::to.prim_Device",
    "aten::to.prim_dtype", "aten::to.prim_other", "aten::transpose.int", "aten::tril", "aten::unbind.int", "aten::unflatten.int",
    "aten::unsqueeze", "aten::view", "aten::view_as", "aten::zeros_like", "prim::device", "prim::dtype",
    "prim::is_cuda", "prim::layout", "prim::requires_grad", NULL,
};

/* A tensor input, or a Tensor[] element, that is complex. */
static const ts_rt_tensor *cx_find(const ts_rt_call *call) {
  for (uint32_t i = 0; i < call->nin; i++) {
    ts_iv v = call->in[i];
    if (v.tag == TS_IV_TENSOR && v.u.t && cx_is(v.u.t)) return v.u.t;
    if (v.tag == TS_IV_LIST && v.u.l)
      for (uint32_t k = 0; k < v.u.l->n; k++)
        if (v.u.l->items[k].tag == TS_IV_TENSOR && v.u.l->items[k].u.t && cx_is(v.u.l->items[k].u.t))
          return v.u.l->items[k].u.t;
  }
  return NULL;
}

bool ts_rt_call_complex_check(ts_rt_ctx *c, const ts_rt_call *call) {
  const ts_rt_tensor *t = cx_find(call);
  if (!t) return true;
  return ts_rt_fail(c, "\"%s\" not implemented for '%s' (tsaot has no complex kernel for it yet)",
                    call->node && call->node->kind_name ? call->node->kind_name : "this operator",
                    ts_rt_dtype_name((ts_dtype)t->dtype));
}

const ts_rt_kernel_def ts_rt_kernels_complex[] = {
    {"aten::angle", k_angle},
    {"aten::complex", k_complex},
    {"aten::conj", k_conj},
    {"aten::conj_physical", k_conj},
    {"aten::conj_physical_", k_conj_physical_},
    {"aten::imag", k_imag},
    {"aten::is_conj", k_is_false},
    {"aten::is_neg", k_is_false},
    {"aten::polar", k_polar},
    {"aten::real", k_real},
    {"aten::resolve_conj", k_resolved},
    {"aten::resolve_neg", k_resolved},
    {"aten::view_as_complex", k_view_as_complex},
    {"aten::view_as_real", k_view_as_real},
    {NULL, NULL},
};
