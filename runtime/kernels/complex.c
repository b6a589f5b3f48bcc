/* runtime/kernels/complex.c: complex64/complex128 tensors' own ops:
 * view_as_real / view_as_complex and real / imag (views of the same
 * storage, as in PyTorch), complex and polar (from two real tensors,
 * broadcast), angle, and the conjugation family. PyTorch 1.13 conjugates
 * lazily (conj() sets a bit that resolve_conj materialises); here conj()
 * materialises at once, so every tensor is resolved: is_conj and is_neg are
 * false, resolve_conj and resolve_neg return self. What differs: a write
 * into conj(x) does not reach x. The pointwise rows of ir/ops.def on
 * complex operands (add, mul, abs, exp, eq, where, ...) are computed here
 * too, called by pointwise.c's kernels (ts_rt_cx_pointwise). */
#include <complex.h>
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

static bool k_is_complex(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  if (!ts_rt_arg_tensor(c, call, 0, &a)) return false;
  call->out[0] = ts_iv_bool(cx_is(a));
  return true;
}

static bool k_is_false(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  if (!ts_rt_arg_tensor(c, call, 0, &a)) return false;
  call->out[0] = ts_iv_bool(false);
  return true;
}

/* Kernels of other files that take complex tensors as they are: views,
 * copies and joins that move elements by their size (checked on complex
 * inputs against PyTorch), those that read only metadata, and linalg.c's
 * that run LAPACK's complex routines themselves (eig, eigvals by geev;
 * eigh, eigvalsh by heevd). Every other
 * kernel outside complex.c, fft.c and the non-tensor tables (prim, list,
 * dict, str) refuses complex inputs (ts_rt_call_complex_check). */
const char *const ts_rt_complex_generic[] = {
    "aten::_linalg_eigh", "aten::cat", "aten::chunk", "aten::clone", "aten::constant_pad_nd", "aten::contiguous", "aten::copy_",
    "aten::detach", "aten::diag", "aten::diag_embed", "aten::diagonal", "aten::dim", "aten::empty_like", "aten::expand", "aten::expand_as", "aten::flatten.using_ints",
    "aten::flip", "aten::gather", "aten::index_select", "aten::is_floating_point", "aten::len.Tensor", "aten::linalg_eig", "aten::linalg_eigh", "aten::linalg_eigvals", "aten::linalg_eigvalsh", "aten::narrow", "aten::narrow.Tensor",
    "aten::new_zeros", "aten::numel", "aten::ones_like", "aten::pad", "aten::permute", "aten::repeat", "aten::reshape",
    "aten::reshape_as", "aten::roll", "aten::select.int", "aten::size", "aten::size.int", "aten::slice.Tensor",
    "aten::split.Tensor", "aten::split.sizes", "aten::squeeze", "aten::squeeze.dim", "aten::stack", "aten::t",
    "aten::to.device", "aten::to.dtype", "aten::to.dtype_layout", "aten::to.other", "aten::to.prim_Device",
    "aten::to.prim_dtype", "aten::to.prim_other", "aten::transpose.int", "aten::tril", "aten::triu", "aten::unbind.int", "aten::unflatten.int",
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

/* ------------------------------------------------ pointwise rows on complex */

/* The pointwise rows of ir/ops.def on complex operands. pointwise.c hands
 * every call of a row's kernel that has a complex operand here (its engine
 * computes in float, double and int64 only), so that one row stays one op:
 * the same schemas, overloads and in-place / out= forms, with the complex
 * formula below. Values are computed in double complex; for complex64 the
 * operands and the Scalar parameters are rounded to float first, as
 * PyTorch casts them to complex<float>, and the result rounded once.
 * Rows PyTorch does not define on complex are refused with its messages. */

typedef double complex cx_t;

/* PyTorch's message for a row it refuses on complex, or NULL. */
static const char *cx_refusal(ts_pw_op op) {
  switch (op) {
  case TS_PW_clamp: case TS_PW_clamp_min: case TS_PW_clamp_max: case TS_PW_relu: case TS_PW_relu6:
  case TS_PW_hardtanh:
    return "clamp is not supported for complex types";
  case TS_PW_ceil: return "ceil is not supported for complex inputs";
  case TS_PW_floor: return "floor is not supported for complex inputs";
  case TS_PW_trunc: return "trunc is not supported for complex inputs";
  case TS_PW_sign:
    return "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead.";
  case TS_PW_signbit: return "signbit is not implemented for complex tensors.";
  case TS_PW_isneginf: return "isneginf does not support complex inputs.";
  case TS_PW_isposinf: return "isposinf does not support complex inputs.";
  case TS_PW_deg2rad: return "deg2rad is not supported for complex tensors.";
  case TS_PW_rad2deg: return "rad2deg is not supported for complex tensors.";
  case TS_PW_maximum: return "maximum not implemented for complex tensors.";
  case TS_PW_minimum: return "minimum not implemented for complex tensors.";
  case TS_PW_fmax: return "fmax not implemented for complex tensors.";
  case TS_PW_fmin: return "fmin not implemented for complex tensors.";
  case TS_PW_heaviside: return "heaviside is not yet implemented for complex tensors.";
  default: return NULL;
  }
}

/* Whether the row has a complex formula in cx_eval. */
static bool cx_defined(ts_pw_op op) {
  switch (op) {
  case TS_PW_abs: case TS_PW_neg: case TS_PW_sqrt: case TS_PW_rsqrt: case TS_PW_exp: case TS_PW_log:
  case TS_PW_log10: case TS_PW_log2: case TS_PW_reciprocal: case TS_PW_sgn: case TS_PW_square: case TS_PW_sin:
  case TS_PW_cos: case TS_PW_tan: case TS_PW_sinh: case TS_PW_cosh: case TS_PW_tanh: case TS_PW_asin:
  case TS_PW_acos: case TS_PW_atan: case TS_PW_asinh: case TS_PW_acosh: case TS_PW_atanh: case TS_PW_sigmoid:
  case TS_PW_silu: case TS_PW_sinc: case TS_PW_isnan: case TS_PW_isfinite: case TS_PW_isinf: case TS_PW_isreal:
  case TS_PW_logical_not: case TS_PW_add: case TS_PW_sub: case TS_PW_rsub: case TS_PW_mul: case TS_PW_div:
  case TS_PW_true_divide: case TS_PW_pow: case TS_PW_float_power: case TS_PW_eq: case TS_PW_ne:
  case TS_PW_logical_and: case TS_PW_logical_or: case TS_PW_logical_xor: case TS_PW_ldexp: case TS_PW_where:
  case TS_PW_masked_fill: case TS_PW_lerp: case TS_PW_addcmul: case TS_PW_addcdiv:
    return true;
  default:
    return false;
  }
}

static inline bool cx_nz(cx_t z) { return creal(z) != 0 || cimag(z) != 0; }

/* c10::complex's pow is std::pow, libstdc++'s is the C library's cpow. */
static cx_t cx_pow(cx_t a, cx_t b) { return cpow(a, b); }

/* x / y as PyTorch's vectorized complex kernels divide (and reciprocal,
 * sgn, sigmoid): ((ac + bd) + (bc - ad)i) / (c^2 + d^2), so that a zero or
 * infinite divisor gives NaN, not C's infinity. */
static cx_t cx_div(cx_t x, cx_t y) {
  double a = creal(x), b = cimag(x), c = creal(y), d = cimag(y), den = c * c + d * d;
  return CMPLX((a * c + b * d) / den, (b * c - a * d) / den);
}

/* Scalar exponents PowKernel.cpp computes without pow (as for real dtypes). */
static cx_t cx_pow_scalar(cx_t a, double e) {
  if (e == 2) return a * a;
  if (e == 3) return a * a * a;
  if (e == 0.5) return csqrt(a);
  if (e == -0.5) return cx_div(1.0, csqrt(a));
  if (e == -1) return cx_div(1.0, a);
  if (e == -2) return cx_div(1.0, a * a);
  return cx_pow(a, e);
}

static cx_t cx_sigmoid(cx_t a) { return cx_div(1.0, 1.0 + cexp(-a)); }

/* One element: a b w the operands, p the op's Scalar parameter (alpha,
 * value, a Scalar exponent: pexp). */
typedef struct cx_par {
  cx_t p;
  bool scalar_exp; /* pow with a Scalar exponent (pe) */
  double pe;
} cx_par;

static cx_t cx_eval(ts_pw_op op, cx_t a, cx_t b, cx_t w, const cx_par *q) {
  switch (op) {
  case TS_PW_abs: return cabs(a);
  case TS_PW_neg: return -a;
  case TS_PW_sqrt: return csqrt(a);
  case TS_PW_rsqrt: return cx_div(1.0, csqrt(a));
  case TS_PW_exp: return cexp(a);
  case TS_PW_log: return clog(a);
  case TS_PW_log10: return clog(a) / log(10.0);
  case TS_PW_log2: return clog(a) / log(2.0);
  case TS_PW_reciprocal: return cx_div(1.0, a);
  case TS_PW_sgn: return cx_nz(a) ? cx_div(a, cabs(a)) : 0;
  case TS_PW_square: return a * a;
  case TS_PW_sin: return csin(a);
  case TS_PW_cos: return ccos(a);
  case TS_PW_tan: return ctan(a);
  case TS_PW_sinh: return csinh(a);
  case TS_PW_cosh: return ccosh(a);
  case TS_PW_tanh: return ctanh(a);
  case TS_PW_asin: return casin(a);
  case TS_PW_acos: return cacos(a);
  case TS_PW_atan: return catan(a);
  case TS_PW_asinh: return casinh(a);
  case TS_PW_acosh: return cacosh(a);
  case TS_PW_atanh: return catanh(a);
  case TS_PW_sigmoid: return cx_sigmoid(a);
  case TS_PW_silu: return a * cx_sigmoid(a);
  case TS_PW_sinc: return cx_nz(a) ? csin(CX_PI * a) / (CX_PI * a) : 1;
  case TS_PW_isnan: return isnan(creal(a)) || isnan(cimag(a));
  case TS_PW_isfinite: return isfinite(creal(a)) && isfinite(cimag(a));
  case TS_PW_isinf: return isinf(creal(a)) || isinf(cimag(a));
  case TS_PW_isreal: return cimag(a) == 0;
  case TS_PW_logical_not: return !cx_nz(a);
  case TS_PW_add: return a + q->p * b;
  case TS_PW_sub: return a - q->p * b;
  case TS_PW_rsub: return b - q->p * a;
  case TS_PW_mul: return a * b;
  case TS_PW_div: case TS_PW_true_divide: return cx_div(a, b);
  case TS_PW_pow: case TS_PW_float_power: return q->scalar_exp ? cx_pow_scalar(a, q->pe) : cx_pow(a, b);
  case TS_PW_eq: return a == b;
  case TS_PW_ne: return a != b;
  case TS_PW_logical_and: return cx_nz(a) && cx_nz(b);
  case TS_PW_logical_or: return cx_nz(a) || cx_nz(b);
  case TS_PW_logical_xor: return cx_nz(a) != cx_nz(b);
  case TS_PW_ldexp: return a * cx_pow(2.0, b);
  case TS_PW_where: return cx_nz(a) ? b : w;      /* condition, self, other */
  case TS_PW_masked_fill: return cx_nz(b) ? q->p : a; /* self, mask */
  case TS_PW_lerp: return cabs(w) < 0.5 ? a + w * (b - a) : b - (b - a) * (1.0 - w);
  case TS_PW_addcmul: return a + q->p * b * w;
  case TS_PW_addcdiv: return a + q->p * (b / w);
  default: return NAN;
  }
}

/* A Scalar argument's value (int, float or bool). */
static bool cx_num(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i, double *v) {
  if (!ts_rt_arg_check(c, call, i)) return false;
  ts_iv x = call->in[i];
  if (x.tag == TS_IV_DOUBLE) *v = x.u.d;
  else if (x.tag == TS_IV_INT) *v = (double)x.u.i;
  else if (x.tag == TS_IV_BOOL) *v = x.u.b;
  else return ts_rt_arg_bad(c, call, i, "number");
  return true;
}

/* An operand: a tensor, or a Scalar argument as a 0-d wrapped number. */
typedef struct cx_opnd {
  ts_rt_tensor *t;
  bool own;     /* t was made here */
  bool wrapped; /* a number */
} cx_opnd;

static bool cx_opnd_get(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i, cx_opnd *o) {
  o->t = NULL, o->own = false, o->wrapped = false;
  if (!ts_rt_arg_check(c, call, i)) return false;
  ts_iv v = call->in[i];
  if (v.tag == TS_IV_TENSOR) {
    o->t = v.u.t;
    return true;
  }
  double d;
  if (!cx_num(c, call, i, &d)) return false;
  ts_dtype dt = v.tag == TS_IV_DOUBLE ? TS_DT_FLOAT64 : v.tag == TS_IV_INT ? TS_DT_INT64 : TS_DT_BOOL;
  o->t = ts_rt_tensor_scalar(c, dt, d, v.tag == TS_IV_INT ? v.u.i : (int64_t)d);
  o->own = o->wrapped = true;
  return o->t != NULL;
}

/* Operand k as complex128 values in the broadcast shape (nd, shape),
 * rounded to complex64's parts when c64. A new contiguous tensor. */
static ts_rt_tensor *cx_spread(ts_rt_ctx *c, const ts_rt_tensor *t, int32_t nd, const int64_t *shape, bool c64) {
  ts_rt_tensor *r = ts_rt_tensor_new(c, TS_DT_COMPLEX128, nd, shape, false);
  if (!r) return NULL;
  /* through complex64 first, so that a double operand is rounded as
   * PyTorch's cast to the compute dtype rounds it */
  const ts_rt_tensor *src = t;
  ts_rt_tensor *tmp = NULL;
  if (c64 && t->dtype != TS_DT_COMPLEX64) {
    tmp = ts_rt_tensor_to_dtype(c, t, TS_DT_COMPLEX64);
    if (!tmp) {
      ts_rt_tensor_release(r);
      return NULL;
    }
    src = tmp;
  }
  bool ok = ts_rt_tensor_copy_(c, r, src);
  if (tmp) ts_rt_tensor_release(tmp);
  if (!ok) {
    ts_rt_tensor_release(r);
    return NULL;
  }
  return r;
}

static void cx_shape_str(ts_buf *b, int32_t nd, const int64_t *s) {
  ts_buf_putc(b, '[');
  for (int32_t i = 0; i < nd; i++) ts_buf_printf(b, "%s%lld", i ? ", " : "", (long long)s[i]);
  ts_buf_putc(b, ']');
}

bool ts_rt_cx_pointwise(ts_rt_ctx *c, ts_rt_call *call, ts_pw_op op, ts_rt_pw_form form) {
  const ts_pw_def *d = ts_pw_get(op);
  if (!d) return ts_rt_fail(c, "pointwise op %d: no such row", (int)op);
  ts_pw_layout layout = (ts_pw_layout)d->layout;
  bool has_out = form == TS_RT_PW_OUT || form == TS_RT_PW_OUTCOPY;
  if (has_out && call->nin == 0) return ts_rt_fail(c, "out= kernel called without arguments");
  uint32_t nargs = call->nin - (has_out ? 1 : 0);
  cx_par q = {1.0, false, 0};
  /* the operands a b w as the layout reads them */
  uint32_t nopd = d->nin > 3 ? 3 : d->nin;
  if (layout == TS_PWL_MASKED_FILL) nopd = 2; /* self, mask; the value is q.p */
  if (nopd > nargs) return ts_rt_fail(c, "aten::%s: expected %u arguments, got %u", d->name, nopd, nargs);
  cx_opnd o[3] = {{NULL, false, false}, {NULL, false, false}, {NULL, false, false}};
  bool ok = true;
  for (uint32_t k = 0; k < nopd && ok; k++) ok = cx_opnd_get(c, call, k, &o[k]);
  /* the dtype PyTorch computes in: result_type of the value operands */
  ts_result_state rs = TS_RESULT_STATE_INIT;
  uint32_t first = layout == TS_PWL_WHERE ? 1 : 0, last = layout == TS_PWL_MASKED_FILL ? 1 : nopd;
  for (uint32_t k = first; k < last && ok; k++)
    ts_result_add(&rs, (ts_dtype)o[k].t->dtype,
                  o[k].wrapped ? TS_RESULT_WRAPPED : o[k].t->ndim > 0 ? TS_RESULT_DIM : TS_RESULT_ZERO_DIM);
  ts_dtype cdt = ok ? ts_result_type(&rs) : TS_DT_NONE;
  if (ok && (d->rule & TS_PWR_DOUBLE) && ts_dtype_is_complex(cdt)) cdt = TS_DT_COMPLEX128;
  const char *msg = cx_refusal(op);
  if (ok && msg) ok = ts_rt_fail(c, "%s", msg);
  if (ok && op == TS_PW_abs && form == TS_RT_PW_INPLACE)
    ok = ts_rt_fail(c, "In-place abs is not supported for complex tensors.");
  /* the rows' own argument checks, where they come before the dtype's */
  if (ok && layout == TS_PWL_WHERE && o[0].t->dtype != TS_DT_BOOL && o[0].t->dtype != TS_DT_UINT8)
    ok = ts_rt_fail(c, "where expected condition to be a boolean tensor, but got a tensor with dtype %s",
                    ts_rt_dtype_name((ts_dtype)o[0].t->dtype));
  if (ok && layout == TS_PWL_MASKED_FILL && o[1].t->dtype != TS_DT_BOOL)
    ok = ts_rt_fail(c, "masked_fill_ only supports boolean masks, but got mask with dtype %s",
                    ts_rt_dtype_name((ts_dtype)o[1].t->dtype));
  if (ok && (op == TS_PW_sub || op == TS_PW_rsub) && (o[0].t->dtype == TS_DT_BOOL || o[1].t->dtype == TS_DT_BOOL))
    ok = ts_rt_fail(c, "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                       "invert a mask, use the `~` or `logical_not()` operator instead.");
  if (ok && layout == TS_PWL_DIV && nargs > 2) {
    ts_iv m = call->in[2];
    if (m.tag == TS_IV_STR && strcmp(m.u.s->data, "trunc") == 0)
      ok = ts_rt_fail(c, "\"div_trunc_cpu\" not implemented for '%s'", ts_rt_dtype_name(cdt));
    else if (m.tag == TS_IV_STR && strcmp(m.u.s->data, "floor") == 0)
      ok = ts_rt_fail(c, "\"div_floor_cpu\" not implemented for '%s'", ts_rt_dtype_name(cdt));
    else if (m.tag == TS_IV_STR)
      ok = ts_rt_fail(c, "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'",
                      m.u.s->data);
    else if (m.tag != TS_IV_NONE)
      ok = ts_rt_arg_bad(c, call, 2, "str");
  }
  if (ok && !ts_dtype_is_complex(cdt))
    ok = ts_rt_fail(c, "\"%s\" not implemented for '%s' with a complex operand", d->kname, ts_rt_dtype_name(cdt));
  if (ok && !cx_defined(op)) ok = ts_rt_fail(c, "\"%s\" not implemented for '%s'", d->kname, ts_rt_dtype_name(cdt));
  if (ok && cdt == TS_DT_COMPLEX32) ok = ts_rt_fail(c, "unsupported dtype ComplexHalf (tsaot has no complex32 tensors)");
  bool c64 = cdt == TS_DT_COMPLEX64;
  /* Scalar parameters: alpha, masked_fill's value, addc's value, pow's
   * Scalar exponent */
  if (ok && (layout == TS_PWL_ALPHA || layout == TS_PWL_ADDC) && nargs > (layout == TS_PWL_ALPHA ? 2u : 3u)) {
    uint32_t ai = layout == TS_PWL_ALPHA ? 2 : 3;
    ts_iv al = call->in[ai];
    double v = 1;
    if (al.tag == TS_IV_BOOL) ok = ts_rt_fail(c, "Boolean alpha only supported for Boolean results.");
    else ok = cx_num(c, call, ai, &v);
    q.p = c64 ? (float)v : v;
  }
  if (ok && layout == TS_PWL_MASKED_FILL && nargs < 3) ok = ts_rt_fail(c, "masked_fill: expected 3 arguments");
  if (ok && layout == TS_PWL_MASKED_FILL) {
    ts_iv v = call->in[2];
    if (v.tag == TS_IV_TENSOR) {
      const ts_rt_tensor *vt = v.u.t;
      if (vt->ndim != 0)
        ok = ts_rt_fail(c, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with %d "
                           "dimension(s).", (int)vt->ndim);
      else if (!ts_dtype_is_complex((ts_dtype)o[0].t->dtype))
        ok = ts_rt_fail(c, "value cannot be converted to type %s without overflow",
                        ts_rt_dtype_name((ts_dtype)o[0].t->dtype));
      ts_rt_tensor *one = ok ? ts_rt_tensor_to_dtype(c, vt, TS_DT_COMPLEX128) : NULL;
      if (one) {
        const double *p = ts_rt_tensor_data(one);
        q.p = CMPLX(p[0], p[1]);
        ts_rt_tensor_release(one);
      } else ok = false;
    } else {
      double v0 = 0;
      ok = cx_num(c, call, 2, &v0);
      q.p = v0;
    }
    cdt = (ts_dtype)o[0].t->dtype; /* masked_fill keeps self's dtype */
    c64 = cdt == TS_DT_COMPLEX64;
    if (c64) q.p = CMPLX((float)creal(q.p), (float)cimag(q.p));
  }
  if (ok && (op == TS_PW_pow || op == TS_PW_float_power) && o[1].wrapped) {
    q.scalar_exp = true;
    q.pe = ts_rt_load_f64(ts_rt_tensor_data(o[1].t), (ts_dtype)o[1].t->dtype);
    if (c64) q.pe = (float)q.pe;
  }
  /* the result's dtype and shape */
  ts_dtype odt = (d->rule & TS_PWR_BOOLOUT) ? TS_DT_BOOL : op == TS_PW_abs ? cx_part_dtype(cdt) : cdt;
  int32_t nd = 0;
  int64_t shape[TS_RT_MAX_DIMS];
  for (uint32_t k = 0; k < nopd && ok; k++) {
    int64_t prev[TS_RT_MAX_DIMS];
    int32_t pnd = nd;
    memcpy(prev, shape, sizeof prev);
    ok = ts_rt_broadcast_shapes(c, pnd, prev, o[k].t->ndim, o[k].t->sizes, &nd, shape);
  }
  ts_rt_tensor *out = NULL;
  if (ok && form == TS_RT_PW_INPLACE) {
    out = o[0].t;
    bool same = out->ndim == nd && (nd == 0 || memcmp(out->sizes, shape, (size_t)nd * sizeof(int64_t)) == 0);
    if (!same) {
      ts_buf x = {0}, y = {0};
      cx_shape_str(&x, out->ndim, out->sizes);
      cx_shape_str(&y, nd, shape);
      ok = ts_rt_fail(c, "output with shape %s doesn't match the broadcast shape %s", x.data, y.data);
      ts_buf_free(&x);
      ts_buf_free(&y);
    }
  } else if (ok && has_out) {
    ok = ts_rt_arg_tensor(c, call, call->nin - 1, &out);
  }
  if (ok && out && form != TS_RT_PW_OUTCOPY && !ts_type_can_cast(odt, (ts_dtype)out->dtype))
    ok = ts_rt_fail(c, "result type %s can't be cast to the desired output type %s", ts_rt_dtype_name(odt),
                    ts_rt_dtype_name((ts_dtype)out->dtype));
  /* the operands spread to the result's shape, then the formula */
  ts_rt_tensor *sp[3] = {NULL, NULL, NULL}, *r = NULL;
  for (uint32_t k = 0; k < nopd && ok; k++) ok = (sp[k] = cx_spread(c, o[k].t, nd, shape, c64 && !(layout == TS_PWL_WHERE && k == 0))) != NULL;
  ts_dtype wdt = odt == TS_DT_BOOL ? TS_DT_BOOL : ts_dtype_is_complex(odt) ? TS_DT_COMPLEX128 : TS_DT_FLOAT64;
  if (ok) ok = (r = ts_rt_tensor_new(c, wdt, nd, shape, false)) != NULL;
  if (ok) {
    int64_t n = ts_rt_tensor_numel(r);
    const cx_t *pa = ts_rt_tensor_data(sp[0]);
    const cx_t *pb = sp[1] ? ts_rt_tensor_data(sp[1]) : NULL;
    const cx_t *pw = sp[2] ? ts_rt_tensor_data(sp[2]) : NULL;
    void *po = ts_rt_tensor_data(r);
    for (int64_t i = 0; i < n; i++) {
      cx_t v = cx_eval(op, pa[i], pb ? pb[i] : 0, pw ? pw[i] : 0, &q);
      if (wdt == TS_DT_BOOL) ((bool *)po)[i] = cx_nz(v);
      else if (wdt == TS_DT_FLOAT64) ((double *)po)[i] = creal(v);
      else ((cx_t *)po)[i] = v;
    }
  }
  for (uint32_t k = 0; k < 3; k++) {
    if (sp[k]) ts_rt_tensor_release(sp[k]);
  }
  /* into the result's dtype, or into out / self */
  ts_rt_tensor *res = NULL;
  if (ok && !out) {
    res = wdt == odt ? r : ts_rt_tensor_to_dtype(c, r, odt);
    if (res == r) r = NULL;
    ok = res != NULL;
  } else if (ok) {
    ts_rt_tensor *rr = wdt == odt ? r : ts_rt_tensor_to_dtype(c, r, odt);
    if (form != TS_RT_PW_INPLACE) ok = rr && ts_rt_tensor_resize_out(c, out, nd, shape, NULL);
    ok = ok && rr && ts_rt_tensor_copy_(c, out, rr);
    if (rr && rr != r) ts_rt_tensor_release(rr);
    if (ok) {
      ts_rt_tensor_retain(out);
      res = out;
    }
  }
  if (r) ts_rt_tensor_release(r);
  for (uint32_t k = 0; k < 3; k++)
    if (o[k].own) ts_rt_tensor_release(o[k].t);
  if (!ok) return false;
  call->out[0] = ts_iv_tensor(res);
  return true;
}

/* fill_ and zero_ of a complex self: the value (a number, or a 0-d tensor
 * of any dtype) converted to self's dtype. */
bool ts_rt_cx_fill(ts_rt_ctx *c, ts_rt_call *call, bool zero) {
  ts_rt_tensor *self;
  if (!ts_rt_arg_tensor(c, call, 0, &self)) return false;
  ts_rt_tensor *v = NULL;
  bool ok = true;
  if (zero) {
    v = ts_rt_tensor_new(c, (ts_dtype)self->dtype, 0, NULL, true);
  } else if (ts_rt_arg_check(c, call, 1) && call->in[1].tag == TS_IV_TENSOR) {
    const ts_rt_tensor *t = call->in[1].u.t;
    if (t->ndim != 0)
      ok = ts_rt_fail(c, "fill_ only supports 0-dimension value tensor but got tensor with %d dimensions.",
                      (int)t->ndim);
    else if (!ts_dtype_is_complex((ts_dtype)self->dtype))
      ok = ts_rt_fail(c, "value cannot be converted to type %s without overflow",
                      ts_rt_dtype_name((ts_dtype)self->dtype));
    v = ok ? ts_rt_tensor_to_dtype(c, t, (ts_dtype)self->dtype) : NULL;
  } else {
    double x;
    ok = cx_num(c, call, 1, &x);
    v = ok ? ts_rt_tensor_scalar(c, TS_DT_FLOAT64, x, 0) : NULL;
  }
  ok = ok && v && ts_rt_tensor_copy_(c, self, v);
  if (v) ts_rt_tensor_release(v);
  if (!ok) return false;
  ts_rt_tensor_retain(self);
  call->out[0] = ts_iv_tensor(self);
  return true;
}

bool ts_rt_cx_any(const ts_rt_call *call) { return cx_find(call) != NULL; }

/* ------------------------------------- other files' ops on complex tensors */

/* Ops whose kernels live in other files (reductions, products, norms)
 * taken to complex tensors by the real kernel itself: kernel.c binds each
 * entry's wrapper in place of the schema's kernel and hands it that kernel
 * (ts_rt_cx_alts); the wrapper runs it as it is on real inputs and, on
 * complex ones, in one of these ways:
 *   SPLIT   linear in self: the kernel on self's real and imaginary parts
 *           (sum, mean, cumsum; a dtype argument converts self first)
 *   MULTI   linear in each tensor (matmul, mm, bmm, dot, mv, inner, outer,
 *           kron, einsum; linear's bias added after): the kernel on every
 *           choice of parts, summed with i's powers
 *   PROD    prod: complex products here, along a dim or of all
 *   SOLVE   linalg_solve: the kernel on the real system of twice the size,
 *           [[Ar, -Ai], [Ai, Ar]] [Xr; Xi] = [Br; Bi]
 *   ABS     a norm: the kernel on abs(self), in the parts' dtype
 *   VAR     var(re) + var(im), PyTorch's variance of complex values
 *   STD     sqrt(std(re)^2 + std(im)^2)
 *   REFUSE  PyTorch refuses complex: its message ('%s' the dtype) */
typedef enum cx_alt_kind { CX_SPLIT, CX_MULTI, CX_PROD, CX_SOLVE, CX_ABS, CX_VAR, CX_STD, CX_REFUSE } cx_alt_kind;

typedef struct cx_alt {
  cx_alt_kind kind;
  int dtype_arg;   /* index of a `ScalarType? dtype` argument (MULTI: of a
                    * bias added after the products), or -1 */
  const char *msg; /* REFUSE */
} cx_alt;

/* id, schema, kind, dtype argument, message */
#define CX_ALTS(X)                                                                                  \
  X(0, "aten::sum", CX_SPLIT, 1, NULL)                                                              \
  X(1, "aten::sum.dim_IntList", CX_SPLIT, 3, NULL)                                                  \
  X(2, "aten::mean", CX_SPLIT, 1, NULL)                                                             \
  X(3, "aten::mean.dim", CX_SPLIT, 3, NULL)                                                         \
  X(4, "aten::cumsum", CX_SPLIT, 2, NULL)                                                           \
  X(5, "aten::matmul", CX_MULTI, -1, NULL)                                                          \
  X(6, "aten::mm", CX_MULTI, -1, NULL)                                                              \
  X(7, "aten::bmm", CX_MULTI, -1, NULL)                                                             \
  X(8, "aten::dot", CX_MULTI, -1, NULL)                                                             \
  X(9, "aten::mv", CX_MULTI, -1, NULL)                                                              \
  X(10, "aten::einsum", CX_MULTI, -1, NULL)                                                         \
  X(11, "aten::linalg_vector_norm", CX_ABS, 4, NULL)                                                \
  X(12, "aten::norm.Scalar", CX_ABS, -1, NULL)                                                      \
  X(13, "aten::norm.ScalarOpt_dim", CX_ABS, -1, NULL)                                               \
  X(14, "aten::var", CX_VAR, -1, NULL)                                                              \
  X(15, "aten::var.dim", CX_VAR, -1, NULL)                                                          \
  X(16, "aten::var.correction", CX_VAR, -1, NULL)                                                   \
  X(17, "aten::std", CX_STD, -1, NULL)                                                              \
  X(18, "aten::std.dim", CX_STD, -1, NULL)                                                          \
  X(19, "aten::std.correction", CX_STD, -1, NULL)                                                   \
  X(20, "aten::max", CX_REFUSE, -1, "\"max_all\" not implemented for '%s'")                         \
  X(21, "aten::min", CX_REFUSE, -1, "\"min_all\" not implemented for '%s'")                         \
  X(22, "aten::max.dim", CX_REFUSE, -1, "max(): does not support complex input")                    \
  X(23, "aten::min.dim", CX_REFUSE, -1, "min(): does not support complex input")                    \
  X(24, "aten::amax", CX_REFUSE, -1, "\"max_values_cpu\" not implemented for '%s'")                 \
  X(25, "aten::amin", CX_REFUSE, -1, "\"min_values_cpu\" not implemented for '%s'")                 \
  X(26, "aten::argmax", CX_REFUSE, -1, "\"argmax_cpu\" not implemented for '%s'")                   \
  X(27, "aten::argmin", CX_REFUSE, -1, "\"argmin_cpu\" not implemented for '%s'")                   \
  X(28, "aten::sort", CX_REFUSE, -1, "\"sorting_kernel_method_name\" not implemented for '%s'")     \
  X(29, "aten::sort.stable", CX_REFUSE, -1, "\"sorting_kernel_method_name\" not implemented for '%s'") \
  X(30, "aten::topk", CX_REFUSE, -1, "\"topk_cpu\" not implemented for '%s'")                     \
  X(31, "aten::inner", CX_MULTI, -1, NULL)                                                          \
  X(32, "aten::outer", CX_MULTI, -1, NULL)                                                          \
  X(33, "aten::kron", CX_MULTI, -1, NULL)                                                           \
  X(34, "aten::linear", CX_MULTI, 2, NULL) /* (the bias, added after) */                            \
  X(35, "aten::trace", CX_SPLIT, -1, NULL)                                                          \
  X(36, "aten::prod", CX_PROD, 1, NULL)                                                             \
  X(37, "aten::prod.dim_int", CX_PROD, 3, NULL)                                                     \
  X(38, "aten::linalg_solve", CX_SOLVE, -1, NULL)

enum {
#define CX_ALT_COUNT_X(id, ...) +1
  CX_NALTS = 0 CX_ALTS(CX_ALT_COUNT_X)
#undef CX_ALT_COUNT_X
};

static const cx_alt cx_alts[CX_NALTS] = {
#define CX_ALT_DEF_X(id, schema, kind, dt, msg) [id] = {kind, dt, msg},
    CX_ALTS(CX_ALT_DEF_X)
#undef CX_ALT_DEF_X
};

/* The kernels the wrappers stand in front of (set once by kernel.c). */
static ts_rt_kernel_fn cx_alt_real[CX_NALTS];

/* A contiguous real copy of a complex tensor's part (0 real, 1 imag). */
static ts_rt_tensor *cx_part_copy(ts_rt_ctx *c, const ts_rt_tensor *a, int part) {
  ts_rt_tensor *v = cx_real_view(c, a);
  ts_rt_tensor *s = v ? ts_rt_select(c, v, v->ndim - 1, part) : NULL;
  ts_rt_tensor *r = s ? ts_rt_tensor_to_dtype(c, s, (ts_dtype)s->dtype) : NULL;
  if (s) ts_rt_tensor_release(s);
  if (v) ts_rt_tensor_release(v);
  return r;
}

/* A complex tensor of dtype dt from its parts (same shape). */
static ts_rt_tensor *cx_join(ts_rt_ctx *c, const ts_rt_tensor *re, const ts_rt_tensor *im, ts_dtype dt) {
  ts_rt_tensor *r = ts_rt_tensor_new(c, dt, re->ndim, re->sizes, false);
  ts_rt_tensor *v = r ? cx_real_view(c, r) : NULL;
  ts_rt_tensor *s0 = v ? ts_rt_select(c, v, v->ndim - 1, 0) : NULL;
  ts_rt_tensor *s1 = s0 ? ts_rt_select(c, v, v->ndim - 1, 1) : NULL;
  bool ok = s1 && ts_rt_tensor_copy_(c, s0, re) && ts_rt_tensor_copy_(c, s1, im);
  if (s1) ts_rt_tensor_release(s1);
  if (s0) ts_rt_tensor_release(s0);
  if (v) ts_rt_tensor_release(v);
  if (!ok && r) {
    ts_rt_tensor_release(r);
    r = NULL;
  }
  return r;
}

/* Runs fn on call's arguments with some replaced (rep[i] when its tag is
 * not TS_IV_UNINIT; borrowed); its one tensor result, a new reference. */
static ts_rt_tensor *cx_run_with(ts_rt_ctx *c, const ts_rt_call *call, ts_rt_kernel_fn fn, const ts_iv *rep) {
  ts_iv in[16], out[1] = {ts_iv_none()};
  if (call->nin > 16 || call->nout != 1) return ts_rt_fail(c, "complex form of this operator: too many arguments"), NULL;
  for (uint32_t i = 0; i < call->nin; i++) in[i] = rep[i].tag != TS_IV_UNINIT ? rep[i] : call->in[i];
  ts_rt_call inner = {.in = in, .nin = call->nin, .out = out, .nout = 1, .node = call->node};
  if (!fn(c, &inner)) return NULL;
  if (out[0].tag != TS_IV_TENSOR) {
    ts_iv_release(out[0]);
    return ts_rt_fail(c, "complex form of this operator: the kernel gave no tensor"), NULL;
  }
  return out[0].u.t;
}

static void cx_rep_init(ts_iv *rep, uint32_t n) {
  for (uint32_t i = 0; i < n && i < 16; i++) rep[i].tag = TS_IV_UNINIT, rep[i].u.i = 0;
}

/* acc += sign * r (acc NULL: acc = sign * r); r released. */
static bool cx_acc(ts_rt_ctx *c, ts_rt_tensor **acc, ts_rt_tensor *r, double sign) {
  if (!r) return false;
  ts_rt_tensor *n;
  if (!*acc) n = sign > 0 ? (ts_rt_tensor_retain(r), r) : ts_rt_mul_scalar(c, r, -1.0);
  else n = ts_rt_add(c, *acc, r, sign);
  ts_rt_tensor_release(r);
  if (!n) return false;
  if (*acc) ts_rt_tensor_release(*acc);
  *acc = n;
  return true;
}

static bool cx_alt_split(ts_rt_ctx *c, ts_rt_call *call, const cx_alt *a, ts_rt_kernel_fn fn) {
  ts_rt_tensor *self;
  if (!ts_rt_arg_tensor(c, call, 0, &self)) return false;
  ts_iv rep[16];
  cx_rep_init(rep, call->nin);
  ts_dtype want = TS_DT_NONE;
  if (a->dtype_arg >= 0 && (uint32_t)a->dtype_arg < call->nin && !ts_rt_arg_opt_dtype(c, call, (uint32_t)a->dtype_arg, &want))
    return false;
  ts_rt_tensor *src = NULL;
  if (want != TS_DT_NONE && !ts_dtype_is_complex(want)) {
    /* a real dtype: PyTorch casts self to it (dropping the imaginary part) */
    src = ts_rt_tensor_to_dtype(c, self, want);
    if (!src) return false;
    rep[0] = ts_iv_tensor(src);
    ts_rt_tensor *r = cx_run_with(c, call, fn, rep);
    ts_rt_tensor_release(src);
    if (!r) return false;
    call->out[0] = ts_iv_tensor(r);
    return true;
  }
  ts_dtype cdt = want != TS_DT_NONE ? want : (ts_dtype)self->dtype;
  if (cdt == TS_DT_COMPLEX32) return ts_rt_fail(c, "unsupported dtype ComplexHalf (tsaot has no complex32 tensors)");
  src = cdt == self->dtype ? (ts_rt_tensor_retain(self), self) : ts_rt_tensor_to_dtype(c, self, cdt);
  if (!src) return false;
  if (want != TS_DT_NONE) rep[a->dtype_arg] = ts_iv_int(cx_part_dtype(cdt));
  ts_rt_tensor *part[2] = {NULL, NULL};
  bool ok = true;
  for (int p = 0; p < 2 && ok; p++) {
    ts_rt_tensor *x = cx_part_copy(c, src, p);
    ok = x != NULL;
    if (ok) {
      rep[0] = ts_iv_tensor(x);
      part[p] = cx_run_with(c, call, fn, rep);
      ok = part[p] != NULL;
      ts_rt_tensor_release(x);
    }
  }
  ts_rt_tensor *r = ok ? cx_join(c, part[0], part[1], cdt) : NULL;
  for (int p = 0; p < 2; p++)
    if (part[p]) ts_rt_tensor_release(part[p]);
  ts_rt_tensor_release(src);
  if (!r) return false;
  call->out[0] = ts_iv_tensor(r);
  return true;
}

/* The tensors of a MULTI call: its Tensor arguments, or the Tensor[] list's
 * items (einsum). At most 4 of them (16 products). */
#define CX_MULTI_MAX 4

static bool cx_alt_multi(ts_rt_ctx *c, ts_rt_call *call, int bias_arg, ts_rt_kernel_fn fn) {
  const ts_rt_tensor *t[CX_MULTI_MAX], *bias = NULL;
  uint32_t where[CX_MULTI_MAX], n = 0, list_arg = UINT32_MAX;
  for (uint32_t i = 0; i < call->nin; i++) {
    ts_iv v = call->in[i];
    if ((int)i == bias_arg) {
      if (v.tag == TS_IV_TENSOR) bias = v.u.t;
    } else if (v.tag == TS_IV_TENSOR) {
      if (n == CX_MULTI_MAX) return ts_rt_fail(c, "complex products of more than %d tensors are not supported", CX_MULTI_MAX);
      where[n] = i;
      t[n++] = v.u.t;
    } else if (v.tag == TS_IV_LIST && v.u.l && v.u.l->n > 0 && v.u.l->items[0].tag == TS_IV_TENSOR) {
      list_arg = i;
      for (uint32_t k = 0; k < v.u.l->n; k++) {
        if (v.u.l->items[k].tag != TS_IV_TENSOR) return ts_rt_fail(c, "expected a list of tensors");
        if (n == CX_MULTI_MAX)
          return ts_rt_fail(c, "complex products of more than %d tensors are not supported", CX_MULTI_MAX);
        where[n] = k;
        t[n++] = v.u.l->items[k].u.t;
      }
    }
  }
  if (n == 0) return ts_rt_fail(c, "no tensor operands");
  /* PyTorch's products take one dtype */
  for (uint32_t k = 1; k < n; k++)
    if (t[k]->dtype != t[0]->dtype) {
      if (n == 2 && t[0]->ndim == 1 && t[1]->ndim == 1 && list_arg == UINT32_MAX)
        return ts_rt_fail(c, "dot : expected both vectors to have same dtype, but found %s and %s",
                          ts_rt_dtype_name((ts_dtype)t[0]->dtype), ts_rt_dtype_name((ts_dtype)t[k]->dtype));
      return ts_rt_fail(c, "expected scalar type %s but found %s", ts_rt_dtype_name((ts_dtype)t[0]->dtype),
                        ts_rt_dtype_name((ts_dtype)t[k]->dtype));
    }
  if (bias && bias->dtype != t[0]->dtype) /* linear's addmm(bias, input, weight.t()) */
    return ts_rt_fail(c, "self and mat2 must have the same dtype");
  ts_dtype cdt = (ts_dtype)t[0]->dtype;
  if (cdt == TS_DT_COMPLEX32) return ts_rt_fail(c, "unsupported dtype ComplexHalf (tsaot has no complex32 tensors)");
  ts_rt_tensor *part[CX_MULTI_MAX][2] = {{NULL}};
  ts_rt_tensor *acc[2] = {NULL, NULL};
  ts_rt_list *l = NULL;
  bool ok = true;
  for (uint32_t k = 0; k < n && ok; k++)
    for (int p = 0; p < 2 && ok; p++) ok = (part[k][p] = cx_part_copy(c, t[k], p)) != NULL;
  if (ok && list_arg != UINT32_MAX) {
    const ts_rt_list *src = call->in[list_arg].u.l;
    l = ts_rt_list_new(c, src->elem, n);
    for (uint32_t k = 0; k < n && l && ok; k++) ok = ts_rt_list_append(c, l, ts_iv_none());
    ok = ok && l;
  }
  for (uint32_t mask = 0; mask < (1u << n) && ok; mask++) {
    ts_iv rep[16];
    cx_rep_init(rep, call->nin);
    if (bias_arg >= 0 && (uint32_t)bias_arg < call->nin) rep[bias_arg] = ts_iv_none();
    int m = 0;
    for (uint32_t k = 0; k < n; k++) {
      int p = (mask >> k) & 1;
      m += p;
      if (l) l->items[where[k]] = ts_iv_tensor(part[k][p]); /* borrowed: put back to None below */
      else rep[where[k]] = ts_iv_tensor(part[k][p]);
    }
    if (l) rep[list_arg] = (ts_iv){.u.l = l, .tag = TS_IV_LIST};
    ts_rt_tensor *r = cx_run_with(c, call, fn, rep);
    /* i^m: 1, i, -1, -i */
    ok = cx_acc(c, &acc[m & 1], r, (m & 2) ? -1.0 : 1.0);
  }
  if (l) {
    for (uint32_t k = 0; k < l->n; k++) l->items[k] = ts_iv_none();
    ts_iv_release((ts_iv){.u.l = l, .tag = TS_IV_LIST});
  }
  /* linear's bias, part by part */
  for (int p = 0; p < 2 && ok && bias; p++) ok = cx_acc(c, &acc[p], cx_part_copy(c, bias, p), 1.0);
  ts_rt_tensor *r = ok ? cx_join(c, acc[0], acc[1], cdt) : NULL;
  for (int p = 0; p < 2; p++)
    if (acc[p]) ts_rt_tensor_release(acc[p]);
  for (uint32_t k = 0; k < n; k++)
    for (int p = 0; p < 2; p++)
      if (part[k][p]) ts_rt_tensor_release(part[k][p]);
  if (!r) return false;
  call->out[0] = ts_iv_tensor(r);
  return true;
}

/* |z| in the parts' dtype. */
static ts_rt_tensor *cx_abs(ts_rt_ctx *c, const ts_rt_tensor *a) {
  ts_rt_tensor *x = ts_rt_tensor_to_dtype(c, a, TS_DT_COMPLEX128);
  ts_rt_tensor *r = x ? ts_rt_tensor_new(c, TS_DT_FLOAT64, a->ndim, a->sizes, false) : NULL;
  if (r) {
    const cx_t *p = ts_rt_tensor_data(x);
    double *o = ts_rt_tensor_data(r);
    int64_t n = ts_rt_tensor_numel(r);
    for (int64_t i = 0; i < n; i++) o[i] = cabs(p[i]);
  }
  if (x) ts_rt_tensor_release(x);
  ts_rt_tensor *o = r ? ts_rt_tensor_to_dtype(c, r, cx_part_dtype((ts_dtype)a->dtype)) : NULL;
  if (r) ts_rt_tensor_release(r);
  return o;
}

static bool cx_alt_abs(ts_rt_ctx *c, ts_rt_call *call, const cx_alt *a, ts_rt_kernel_fn fn) {
  ts_rt_tensor *self;
  if (!ts_rt_arg_tensor(c, call, 0, &self)) return false;
  ts_iv rep[16];
  cx_rep_init(rep, call->nin);
  ts_dtype want = TS_DT_NONE;
  if (a->dtype_arg >= 0 && (uint32_t)a->dtype_arg < call->nin && !ts_rt_arg_opt_dtype(c, call, (uint32_t)a->dtype_arg, &want))
    return false;
  if (want != TS_DT_NONE && !ts_dtype_is_complex(want))
    return ts_rt_fail(c, "linalg.vector_norm: dtype should be complex for complex inputs, but got %s",
                      ts_rt_dtype_name(want));
  ts_rt_tensor *src = want != TS_DT_NONE ? ts_rt_tensor_to_dtype(c, self, want) : (ts_rt_tensor_retain(self), self);
  ts_rt_tensor *ab = src ? cx_abs(c, src) : NULL;
  if (src) ts_rt_tensor_release(src);
  if (!ab) return false;
  rep[0] = ts_iv_tensor(ab);
  if (want != TS_DT_NONE) rep[a->dtype_arg] = ts_iv_int(cx_part_dtype(want));
  ts_rt_tensor *r = cx_run_with(c, call, fn, rep);
  ts_rt_tensor_release(ab);
  if (!r) return false;
  call->out[0] = ts_iv_tensor(r);
  return true;
}

/* VAR and STD: the kernel on each part, combined. */
static bool cx_alt_var(ts_rt_ctx *c, ts_rt_call *call, bool std, ts_rt_kernel_fn fn) {
  ts_rt_tensor *self;
  if (!ts_rt_arg_tensor(c, call, 0, &self)) return false;
  ts_rt_tensor *acc = NULL;
  bool ok = true;
  for (int p = 0; p < 2 && ok; p++) {
    ts_iv rep[16];
    cx_rep_init(rep, call->nin);
    ts_rt_tensor *x = cx_part_copy(c, self, p);
    ok = x != NULL;
    if (!ok) break;
    rep[0] = ts_iv_tensor(x);
    ts_rt_tensor *r = cx_run_with(c, call, fn, rep);
    ts_rt_tensor_release(x);
    if (r && std) {
      ts_rt_tensor *sq = ts_rt_binary_op(c, TS_PW_mul, r, r);
      ts_rt_tensor_release(r);
      r = sq;
    }
    ok = cx_acc(c, &acc, r, 1.0);
  }
  if (ok && std) {
    ts_rt_tensor *s = ts_rt_unary_op(c, TS_PW_sqrt, acc);
    ts_rt_tensor_release(acc);
    acc = s;
    ok = s != NULL;
  }
  if (!ok) {
    if (acc) ts_rt_tensor_release(acc);
    return false;
  }
  call->out[0] = ts_iv_tensor(acc);
  return true;
}

/* prod (self, dtype) and prod.dim_int (self, dim, keepdim, dtype): the
 * product in complex128, in order along the dim. A real dtype argument
 * casts self first and leaves the product to the kernel. */
static bool cx_alt_prod(ts_rt_ctx *c, ts_rt_call *call, const cx_alt *a, ts_rt_kernel_fn fn) {
  ts_rt_tensor *self;
  if (!ts_rt_arg_tensor(c, call, 0, &self)) return false;
  ts_dtype want = TS_DT_NONE;
  if ((uint32_t)a->dtype_arg < call->nin && !ts_rt_arg_opt_dtype(c, call, (uint32_t)a->dtype_arg, &want)) return false;
  if (want != TS_DT_NONE && !ts_dtype_is_complex(want)) {
    ts_iv rep[16];
    cx_rep_init(rep, call->nin);
    ts_rt_tensor *src = ts_rt_tensor_to_dtype(c, self, want);
    if (!src) return false;
    rep[0] = ts_iv_tensor(src);
    ts_rt_tensor *r = cx_run_with(c, call, fn, rep);
    ts_rt_tensor_release(src);
    if (!r) return false;
    call->out[0] = ts_iv_tensor(r);
    return true;
  }
  ts_dtype odt = want != TS_DT_NONE ? want : (ts_dtype)self->dtype;
  if (odt == TS_DT_COMPLEX32) return ts_rt_fail(c, "unsupported dtype ComplexHalf (tsaot has no complex32 tensors)");
  bool all = a->dtype_arg == 1;
  int64_t dim = 0;
  bool keep = false;
  if (!all && (!ts_rt_arg_int(c, call, 1, &dim) || !ts_rt_arg_bool(c, call, 2, &keep))) return false;
  int32_t nd = self->ndim;
  int64_t lim = nd > 0 ? nd : 1;
  if (!all && (dim < -lim || dim >= lim))
    return ts_rt_fail(c, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                      (long long)-lim, (long long)(lim - 1), (long long)dim);
  if (dim < 0) dim += lim;
  /* self as [outer, n, inner] */
  int64_t outer = 1, n = 1, inner = 1, osz[TS_RT_MAX_DIMS];
  int32_t ond = 0;
  for (int32_t i = 0; i < nd; i++) {
    if (all) n *= self->sizes[i];
    else if (i < dim) outer *= self->sizes[i];
    else if (i == dim) n = self->sizes[i];
    else inner *= self->sizes[i];
    if (!all && (i != dim || keep)) osz[ond++] = i == dim ? 1 : self->sizes[i];
  }
  ts_rt_tensor *x = ts_rt_tensor_to_dtype(c, self, TS_DT_COMPLEX128);
  ts_rt_tensor *r = x ? ts_rt_tensor_new(c, TS_DT_COMPLEX128, ond, osz, false) : NULL;
  if (r) {
    const cx_t *p = ts_rt_tensor_data(x);
    cx_t *o = ts_rt_tensor_data(r);
    bool c64 = odt == TS_DT_COMPLEX64;
    for (int64_t u = 0; u < outer; u++)
      for (int64_t v = 0; v < inner; v++) {
        cx_t acc = 1;
        for (int64_t k = 0; k < n; k++) {
          acc *= p[(u * n + k) * inner + v];
          /* complex64 rounds each partial product, as its kernel does */
          if (c64) acc = CMPLX((float)creal(acc), (float)cimag(acc));
        }
        o[u * inner + v] = acc;
      }
  }
  if (x) ts_rt_tensor_release(x);
  ts_rt_tensor *res = r ? ts_rt_tensor_to_dtype(c, r, odt) : NULL;
  if (r) ts_rt_tensor_release(r);
  if (!res) return false;
  call->out[0] = ts_iv_tensor(res);
  return true;
}

/* cat of two tensors along dim (new reference; both borrowed). */
static ts_rt_tensor *cx_cat2(ts_rt_ctx *c, ts_rt_tensor *a, ts_rt_tensor *b, int64_t dim) {
  if (!a || !b) return NULL;
  ts_rt_tensor *ts[2] = {a, b};
  return ts_rt_cat(c, ts, 2, dim);
}

static bool cx_alt_solve(ts_rt_ctx *c, ts_rt_call *call, ts_rt_kernel_fn fn) {
  ts_rt_tensor *A, *B;
  if (!ts_rt_arg_tensor(c, call, 0, &A) || !ts_rt_arg_tensor(c, call, 1, &B)) return false;
  if (A->dtype != B->dtype)
    return ts_rt_fail(c, "linalg.solve: Expected A and B to have the same dtype, but found A of type %s and B of type %s "
                         "instead", ts_rt_dtype_name((ts_dtype)A->dtype), ts_rt_dtype_name((ts_dtype)B->dtype));
  bool left = true;
  if (call->nin > 2 && !ts_rt_arg_bool(c, call, 2, &left)) return false;
  if (!left) return ts_rt_fail(c, "linalg.solve: left=False on complex tensors is not supported by tsaot yet");
  if (A->ndim < 2) return ts_rt_fail(c, "linalg.solve: The input tensor A must have at least 2 dimensions.");
  ts_dtype cdt = (ts_dtype)A->dtype;
  if (cdt == TS_DT_COMPLEX32) return ts_rt_fail(c, "unsupported dtype ComplexHalf (tsaot has no complex32 tensors)");
  /* B a batch of vectors, as ATen's linalg_solve_is_vector_rhs tells */
  bool vec = B->ndim == 1 || (B->ndim == A->ndim - 1 &&
                              memcmp(B->sizes, A->sizes, (size_t)B->ndim * sizeof(int64_t)) == 0);
  int64_t bdim = vec ? -1 : -2;
  ts_rt_tensor *ar = cx_part_copy(c, A, 0), *ai = ar ? cx_part_copy(c, A, 1) : NULL;
  ts_rt_tensor *br = ai ? cx_part_copy(c, B, 0) : NULL, *bi = br ? cx_part_copy(c, B, 1) : NULL;
  ts_rt_tensor *nai = bi ? ts_rt_mul_scalar(c, ai, -1.0) : NULL;
  ts_rt_tensor *top = cx_cat2(c, ar, nai, -1), *bot = top ? cx_cat2(c, ai, ar, -1) : NULL;
  ts_rt_tensor *big = bot ? cx_cat2(c, top, bot, -2) : NULL, *bb = big ? cx_cat2(c, br, bi, bdim) : NULL;
  ts_rt_tensor *x = NULL, *r = NULL;
  if (bb) {
    ts_iv rep[16];
    cx_rep_init(rep, call->nin);
    rep[0] = ts_iv_tensor(big);
    rep[1] = ts_iv_tensor(bb);
    x = cx_run_with(c, call, fn, rep);
  }
  if (x) {
    int64_t n = A->sizes[A->ndim - 1];
    ts_rt_tensor *xr = ts_rt_narrow(c, x, bdim, 0, n), *xi = xr ? ts_rt_narrow(c, x, bdim, n, n) : NULL;
    r = xi ? cx_join(c, xr, xi, cdt) : NULL;
    if (xr) ts_rt_tensor_release(xr);
    if (xi) ts_rt_tensor_release(xi);
  }
  ts_rt_tensor *tmp[] = {ar, ai, br, bi, nai, top, bot, big, bb, x};
  for (size_t k = 0; k < sizeof tmp / sizeof tmp[0]; k++)
    if (tmp[k]) ts_rt_tensor_release(tmp[k]);
  if (!r) return false;
  call->out[0] = ts_iv_tensor(r);
  return true;
}

static bool cx_alt_run(ts_rt_ctx *c, ts_rt_call *call, int id) {
  const cx_alt *a = &cx_alts[id];
  ts_rt_kernel_fn fn = cx_alt_real[id];
  if (!fn) return ts_rt_fail(c, "complex form of this operator: no kernel bound");
  switch (a->kind) {
  case CX_SPLIT: return cx_alt_split(c, call, a, fn);
  case CX_MULTI: return cx_alt_multi(c, call, a->dtype_arg, fn);
  case CX_PROD: return cx_alt_prod(c, call, a, fn);
  case CX_SOLVE: return cx_alt_solve(c, call, fn);
  case CX_ABS: return cx_alt_abs(c, call, a, fn);
  case CX_VAR: return cx_alt_var(c, call, false, fn);
  case CX_STD: return cx_alt_var(c, call, true, fn);
  case CX_REFUSE: {
    const ts_rt_tensor *t = cx_find(call);
    return ts_rt_fail(c, a->msg, ts_rt_dtype_name(t ? (ts_dtype)t->dtype : TS_DT_COMPLEX64));
  }
  }
  return ts_rt_fail(c, "complex form of this operator: unknown kind");
}

#define CX_ALT_WRAP_X(id, ...)                                                                                     \
  static bool cx_w_##id(ts_rt_ctx *c, ts_rt_call *call) {                                                         \
    return cx_find(call) ? cx_alt_run(c, call, id) : cx_alt_real[id](c, call);                                    \
  }
CX_ALTS(CX_ALT_WRAP_X)
#undef CX_ALT_WRAP_X

const ts_rt_cx_alt ts_rt_cx_alts[] = {
#define CX_ALT_ENTRY_X(id, schema, ...) {schema, cx_w_##id, &cx_alt_real[id]},
    CX_ALTS(CX_ALT_ENTRY_X)
#undef CX_ALT_ENTRY_X
    {NULL, NULL, NULL},
};

const ts_rt_kernel_def ts_rt_kernels_complex[] = {
    {"aten::angle", k_angle},
    {"aten::complex", k_complex},
    {"aten::conj", k_conj},
    {"aten::conj_physical", k_conj},
    {"aten::conj_physical_", k_conj_physical_},
    {"aten::imag", k_imag},
    {"aten::is_complex", k_is_complex},
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
