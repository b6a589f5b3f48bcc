/* runtime/adapt.c: kernels for in-place (`foo_`) and out= (`foo.out`)
 * overloads made from the out-of-place overload's kernel, so that no kernel
 * file writes them per op. ir/variant.c pairs each such overload with its
 * base by the schemas' alias annotations; kernel.c binds an adapter here to
 * every pair whose base has a kernel and which has none of its own
 * (explicit kernels keep priority: the pointwise ops write into self
 * directly).
 *
 * An adapter runs the base kernel, then writes its result the way ATen's
 * in-place and out= wrappers do:
 *   in place      TensorIterator's rules for the pointwise ops (the result
 *                 must have self's shape: "output with shape [3, 1] doesn't
 *                 match the broadcast shape [3, 4]"; its dtype must cast to
 *                 self's: "result type Float can't be cast to the desired
 *                 output type Long"), the structured kernels' check_inplace
 *                 for the others ("Bad in-place call: input tensor dtype
 *                 float and output tensor dtype double should match", the
 *                 same for sizes); written through self's strides, so a
 *                 view writes into its base;
 *   in-place view (unsqueeze_, transpose_, t_, squeeze_, as_strided_):
 *                 self takes the view's sizes, strides and offset, nothing
 *                 is copied;
 *   out=          at::native::resize_output: an out of another shape is
 *                 resized (with PyTorch's deprecation warning, as
 *                 "UserWarning: ..." in ctx->out, when it had elements),
 *                 taking the result's strides where the result is dense
 *                 (TensorIterator's and the structured kernels' layout),
 *                 else contiguous ones; dtypes as TensorIterator for the
 *                 pointwise ops (cast allowed), else resize_out's "Expected
 *                 out tensor to have dtype float, but got long int
 *                 instead".
 * Before anything runs, the written tensor may not have two elements at
 * one address, and no tensor input may partly overlap it
 * (TensorIterator's compute_mem_overlaps, with its messages).
 *
 * Less than ATen: the result is computed out of place and copied (a
 * temporary the size of the result); an out= resize that needs more bytes
 * gives the out tensor a new storage where PyTorch grows the old one (other
 * views of the old storage do not see the new bytes); ops whose out= form
 * computes in the out's dtype (sum, cumsum with dtype=None) or keeps other
 * rules of its own need a kernel of their own (reduce.c has them).
 *
 * Kernels have no closure argument, so each adapter is one of
 * TS_RT_ADAPT_SLOTS small functions that passes its own number. */
#include <string.h>

#include "runtime.h"

typedef struct ts_ad_slot {
  const ts_schema *schema;
  ts_variant var;
  ts_rt_kernel_fn base;
  bool pointwise; /* the base is a TensorIterator op (TS_OPF_POINTWISE) */
} ts_ad_slot;

/* Written once, under kernel.c's pthread_once, before any lookup returns
 * an adapter; read-only after. */
static ts_ad_slot ts_ad_slots[TS_RT_ADAPT_SLOTS];
static uint32_t ts_ad_nslots;

static bool ts_ad_run(ts_rt_ctx *c, ts_rt_call *call, uint32_t slot);

/* TS_RT_ADAPT_SLOTS functions ts_ad_kABCD, each calling ts_ad_run with ABCD
 * read in octal. */
#define TS_AD_1(a, b, c, d)                                                                                          \
  static bool ts_ad_k##a##b##c##d(ts_rt_ctx *x, ts_rt_call *k) {                                                     \
    return ts_ad_run(x, k, (((a) * 8u + (b)) * 8u + (c)) * 8u + (d));                                               \
  }
#define TS_AD_8(a, b, c)                                                                                             \
  TS_AD_1(a, b, c, 0)                                                                                                \
  TS_AD_1(a, b, c, 1)                                                                                                \
  TS_AD_1(a, b, c, 2)                                                                                                \
  TS_AD_1(a, b, c, 3) TS_AD_1(a, b, c, 4) TS_AD_1(a, b, c, 5) TS_AD_1(a, b, c, 6) TS_AD_1(a, b, c, 7)
#define TS_AD_64(a, b)                                                                                               \
  TS_AD_8(a, b, 0)                                                                                                   \
  TS_AD_8(a, b, 1) TS_AD_8(a, b, 2) TS_AD_8(a, b, 3) TS_AD_8(a, b, 4) TS_AD_8(a, b, 5) TS_AD_8(a, b, 6) TS_AD_8(a, b, 7)
#define TS_AD_512(a)                                                                                                 \
  TS_AD_64(a, 0)                                                                                                     \
  TS_AD_64(a, 1) TS_AD_64(a, 2) TS_AD_64(a, 3) TS_AD_64(a, 4) TS_AD_64(a, 5) TS_AD_64(a, 6) TS_AD_64(a, 7)
TS_AD_512(0)
TS_AD_512(1)

#define TS_AD_REF(a, b, c, d) ts_ad_k##a##b##c##d,
#define TS_AD_REF8(a, b, c)                                                                                          \
  TS_AD_REF(a, b, c, 0)                                                                                              \
  TS_AD_REF(a, b, c, 1)                                                                                              \
  TS_AD_REF(a, b, c, 2)                                                                                              \
  TS_AD_REF(a, b, c, 3) TS_AD_REF(a, b, c, 4) TS_AD_REF(a, b, c, 5) TS_AD_REF(a, b, c, 6) TS_AD_REF(a, b, c, 7)
#define TS_AD_REF64(a, b)                                                                                            \
  TS_AD_REF8(a, b, 0)                                                                                                \
  TS_AD_REF8(a, b, 1)                                                                                                \
  TS_AD_REF8(a, b, 2) TS_AD_REF8(a, b, 3) TS_AD_REF8(a, b, 4) TS_AD_REF8(a, b, 5) TS_AD_REF8(a, b, 6) TS_AD_REF8(a, b, 7)
#define TS_AD_REF512(a)                                                                                              \
  TS_AD_REF64(a, 0)                                                                                                  \
  TS_AD_REF64(a, 1)                                                                                                  \
  TS_AD_REF64(a, 2)                                                                                                  \
  TS_AD_REF64(a, 3) TS_AD_REF64(a, 4) TS_AD_REF64(a, 5) TS_AD_REF64(a, 6) TS_AD_REF64(a, 7)

static const ts_rt_kernel_fn ts_ad_fns[] = {TS_AD_REF512(0) TS_AD_REF512(1)};

_Static_assert(sizeof ts_ad_fns / sizeof *ts_ad_fns == TS_RT_ADAPT_SLOTS, "one function per adapter slot");

ts_rt_kernel_fn ts_rt_adapt_make(const ts_schema *s, ts_variant v, ts_rt_kernel_fn base) {
  if (!s || !base || v.kind == TS_VARIANT_NONE || !v.base || ts_ad_nslots == TS_RT_ADAPT_SLOTS)
    return NULL;
  ts_ad_slot *a = &ts_ad_slots[ts_ad_nslots];
  a->schema = s;
  a->var = v;
  a->base = base;
  const ts_opdef *op = ts_op_get(ts_kind_lookup(v.base->name, strlen(v.base->name)));
  a->pointwise = op && (op->flags & TS_OPF_POINTWISE);
  return ts_ad_fns[ts_ad_nslots++];
}

/* ------------------------------------------------------------- helpers */

static void ts_ad_shape(ts_buf *b, int32_t ndim, const int64_t *sizes) {
  ts_buf_putc(b, '[');
  for (int32_t i = 0; i < ndim; i++)
    ts_buf_printf(b, "%s%lld", i ? ", " : "", (long long)sizes[i]);
  ts_buf_putc(b, ']');
}

static bool ts_ad_same_shape(const ts_rt_tensor *a, const ts_rt_tensor *b) {
  return a->ndim == b->ndim && (a->ndim == 0 || memcmp(a->sizes, b->sizes, (size_t)a->ndim * sizeof(int64_t)) == 0);
}

/* c10::canCast: no float to integer, nothing but bool to bool. */
static bool ts_ad_can_cast(ts_dtype from, ts_dtype to) {
  if (ts_rt_dtype_is_float(from) && ts_rt_dtype_is_integral(to, true))
    return false;
  return from == TS_DT_BOOL || to != TS_DT_BOOL;
}

/* caffe2::TypeMeta's names, which the structured kernels' checks print. */
static const char *ts_ad_meta_name(ts_dtype dt) {
  switch (dt) {
  case TS_DT_FLOAT32: return "float";
  case TS_DT_FLOAT64: return "double";
  case TS_DT_FLOAT16: return "c10::Half";
  case TS_DT_BFLOAT16: return "c10::BFloat16";
  case TS_DT_INT64: return "long int";
  case TS_DT_INT32: return "int";
  case TS_DT_INT16: return "short int";
  case TS_DT_INT8: return "signed char";
  case TS_DT_UINT8: return "unsigned char";
  case TS_DT_BOOL: return "bool";
  default: return ts_rt_dtype_name(dt);
  }
}

static void ts_ad_name(ts_buf *b, const ts_schema *s) {
  ts_buf_puts(b, s->name);
  if (s->overload[0]) {
    ts_buf_putc(b, '.');
    ts_buf_puts(b, s->overload);
  }
}

/* is_non_overlapping_and_dense: the elements fill [first, first + numel)
 * once each, in some order of the dimensions. */
static bool ts_ad_dense(const ts_rt_tensor *t) {
  int32_t idx[TS_RT_MAX_DIMS], n = 0;
  for (int32_t i = 0; i < t->ndim; i++)
    if (t->sizes[i] != 1)
      idx[n++] = i;
  for (int32_t i = 1; i < n; i++) /* by stride, insertion sort */
    for (int32_t j = i; j > 0 && t->strides[idx[j]] < t->strides[idx[j - 1]]; j--) {
      int32_t x = idx[j];
      idx[j] = idx[j - 1];
      idx[j - 1] = x;
    }
  int64_t expect = 1;
  for (int32_t i = 0; i < n; i++) {
    if (t->sizes[idx[i]] == 0)
      return true;
    if (t->strides[idx[i]] != expect)
      return false;
    expect *= t->sizes[idx[i]];
  }
  return true;
}

/* at::assert_no_internal_overlap: a size > 1 with stride 0 is a YES. */
static bool ts_ad_check_internal(ts_rt_ctx *c, const ts_rt_tensor *w) {
  for (int32_t i = 0; i < w->ndim; i++)
    if (w->sizes[i] > 1 && w->strides[i] == 0)
      return ts_rt_fail(c, "unsupported operation: more than one element of the written-to tensor refers to a single "
                           "memory location. Please clone() the tensor before performing the operation.");
  return true;
}

/* at::assert_no_partial_overlap(w, x): both dense, the same storage, and
 * byte ranges that meet without being the same tensor. */
static bool ts_ad_check_partial(ts_rt_ctx *c, const ts_rt_tensor *w, const ts_rt_tensor *x) {
  if (w->storage != x->storage || !ts_rt_tensor_numel(w) || !ts_rt_tensor_numel(x) || !ts_ad_dense(w) ||
      !ts_ad_dense(x))
    return true;
  int64_t wes = (int64_t)ts_dtype_size((ts_dtype)w->dtype), xes = (int64_t)ts_dtype_size((ts_dtype)x->dtype);
  int64_t wb = w->offset * wes, we = wb + ts_rt_tensor_numel(w) * wes;
  int64_t xb = x->offset * xes, xe = xb + ts_rt_tensor_numel(x) * xes;
  bool full = wb == xb && we == xe && w->ndim == x->ndim &&
              (w->ndim == 0 || memcmp(w->strides, x->strides, (size_t)w->ndim * sizeof(int64_t)) == 0);
  if (full || !(wb < xe && xb < we))
    return true;
  return ts_rt_fail(c, "unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                       "single memory location. Please clone() the tensor before performing the operation.");
}

/* The memory checks for written tensor w against the call's tensor inputs
 * in[0..nin) (w itself among them is fine). */
static bool ts_ad_check_memory(ts_rt_ctx *c, const ts_rt_tensor *w, const ts_iv *in, uint32_t nin) {
  if (!ts_ad_check_internal(c, w))
    return false;
  for (uint32_t i = 0; i < nin; i++) {
    if (in[i].tag == TS_IV_TENSOR) {
      if (in[i].u.t != w && !ts_ad_check_partial(c, w, in[i].u.t))
        return false;
    } else if (in[i].tag == TS_IV_LIST) {
      const ts_rt_list *l = in[i].u.l;
      for (uint32_t k = 0; k < l->n; k++)
        if (l->items[k].tag == TS_IV_TENSOR && l->items[k].u.t != w && !ts_ad_check_partial(c, w, l->items[k].u.t))
          return false;
    }
  }
  return true;
}

static bool ts_ad_arity(ts_rt_ctx *c, const ts_ad_slot *a, const ts_rt_call *call) {
  if (call->nin == a->schema->nargs && call->nout == a->schema->nrets)
    return true;
  ts_buf b = {0};
  ts_ad_name(&b, a->schema);
  ts_rt_fail(c, "%s: called with %u arguments for %u results (the schema takes %u and returns %u)",
             b.data ? b.data : "", (unsigned)call->nin, (unsigned)call->nout, (unsigned)a->schema->nargs,
             (unsigned)a->schema->nrets);
  ts_buf_free(&b);
  return false;
}

static bool ts_ad_not_tensor(ts_rt_ctx *c, const ts_ad_slot *a, const char *what) {
  ts_buf b = {0};
  ts_ad_name(&b, a->schema);
  ts_rt_fail(c, "%s: %s is not a Tensor", b.data ? b.data : "", what);
  ts_buf_free(&b);
  return false;
}

/* Runs the base kernel on in[0..nin) into res[0..nres), all tensors. */
static bool ts_ad_base(ts_rt_ctx *c, const ts_ad_slot *a, const ts_rt_call *call, uint32_t nin, ts_iv *res,
                       uint32_t nres) {
  ts_rt_call inner = {.in = call->in, .nin = nin, .out = res, .nout = nres, .node = call->node};
  if (!a->base(c, &inner))
    return false;
  for (uint32_t r = 0; r < nres; r++)
    if (res[r].tag != TS_IV_TENSOR) {
      for (uint32_t k = 0; k < nres; k++)
        ts_iv_release(res[k]);
      return ts_ad_not_tensor(c, a, "the out-of-place kernel's result");
    }
  return true;
}

/* ------------------------------------------------------------ in place */

static bool ts_ad_inplace(ts_rt_ctx *c, const ts_ad_slot *a, ts_rt_call *call) {
  ts_rt_tensor *self = call->in[0].u.t;
  if (!ts_ad_check_memory(c, self, call->in, call->nin))
    return false;
  ts_iv r;
  if (!ts_ad_base(c, a, call, call->nin, &r, 1))
    return false;
  const ts_rt_tensor *res = r.u.t;
  ts_dtype from = (ts_dtype)res->dtype, to = (ts_dtype)self->dtype;
  bool ok = true;
  ts_buf x = {0}, y = {0};
  if (a->pointwise) {
    if (!ts_ad_same_shape(self, res)) {
      ts_ad_shape(&x, self->ndim, self->sizes);
      ts_ad_shape(&y, res->ndim, res->sizes);
      ok = ts_rt_fail(c, "output with shape %s doesn't match the broadcast shape %s", x.data, y.data);
    } else if (!ts_ad_can_cast(from, to)) {
      ok = ts_rt_fail(c, "result type %s can't be cast to the desired output type %s", ts_rt_dtype_name(from),
                      ts_rt_dtype_name(to));
    }
  } else if (from != to) {
    ok = ts_rt_fail(c, "Bad in-place call: input tensor dtype %s and output tensor dtype %s should match",
                    ts_ad_meta_name(to), ts_ad_meta_name(from));
  } else if (!ts_ad_same_shape(self, res)) {
    ts_ad_shape(&x, self->ndim, self->sizes);
    ts_ad_shape(&y, res->ndim, res->sizes);
    ok = ts_rt_fail(c, "Bad in-place call: input tensor size %s and output tensor size %s should match", x.data,
                    y.data);
  }
  ts_buf_free(&x);
  ts_buf_free(&y);
  ok = ok && ts_rt_tensor_copy_(c, self, res);
  ts_iv_release(r);
  if (!ok)
    return false;
  ts_iv_retain(call->in[0]);
  call->out[0] = call->in[0];
  return true;
}

/* unsqueeze_, t_, ...: self becomes the view the base op returns. */
static bool ts_ad_inplace_view(ts_rt_ctx *c, const ts_ad_slot *a, ts_rt_call *call) {
  ts_rt_tensor *self = call->in[0].u.t;
  ts_iv r;
  if (!ts_ad_base(c, a, call, call->nin, &r, 1))
    return false;
  const ts_rt_tensor *v = r.u.t;
  bool ok;
  if (v == self) {
    ok = true;
  } else if (v->storage != self->storage) {
    ts_buf b = {0};
    ts_ad_name(&b, a->schema);
    ok = ts_rt_fail(c, "%s: the out-of-place kernel did not return a view of self", b.data ? b.data : "");
    ts_buf_free(&b);
  } else {
    ok = ts_rt_tensor_set_geometry(c, self, NULL, v->offset, v->ndim, v->sizes, v->strides);
  }
  ts_iv_release(r);
  if (!ok)
    return false;
  ts_iv_retain(call->in[0]);
  call->out[0] = call->in[0];
  return true;
}

/* ---------------------------------------------------------------- out= */

/* out takes res's shape (resize_output), and res's strides where res is
 * dense, as TensorIterator and the structured kernels lay a resized output
 * out like the result. */
static bool ts_ad_resize(ts_rt_ctx *c, ts_rt_tensor *out, const ts_rt_tensor *res) {
  return ts_rt_tensor_resize_out(c, out, res->ndim, res->sizes, ts_ad_dense(res) ? res->strides : NULL);
}

static bool ts_ad_out(ts_rt_ctx *c, const ts_ad_slot *a, ts_rt_call *call) {
  uint32_t k = a->var.nouts, first = call->nin - k;
  for (uint32_t i = 0; i < k; i++) {
    if (call->in[first + i].tag != TS_IV_TENSOR)
      return ts_ad_not_tensor(c, a, a->schema->args[first + i].name);
    if (!ts_ad_check_memory(c, call->in[first + i].u.t, call->in, first))
      return false;
  }
  ts_iv res[TS_VARIANT_MAX_OUTS];
  if (!ts_ad_base(c, a, call, first, res, k))
    return false;
  bool ok = true;
  for (uint32_t i = 0; i < k && ok; i++) {
    ts_rt_tensor *out = call->in[first + i].u.t;
    const ts_rt_tensor *r = res[i].u.t;
    ts_dtype from = (ts_dtype)r->dtype, to = (ts_dtype)out->dtype;
    if (a->pointwise ? !ts_ad_can_cast(from, to) : from != to) {
      if (a->pointwise)
        ok = ts_rt_fail(c, "result type %s can't be cast to the desired output type %s", ts_rt_dtype_name(from),
                        ts_rt_dtype_name(to));
      else
        ok = ts_rt_fail(c, "Expected out tensor to have dtype %s, but got %s instead", ts_ad_meta_name(from),
                        ts_ad_meta_name(to));
      break;
    }
    if (!ts_ad_same_shape(out, r))
      ok = ts_ad_resize(c, out, r);
    ok = ok && ts_rt_tensor_copy_(c, out, r);
  }
  for (uint32_t i = 0; i < k; i++)
    ts_iv_release(res[i]);
  if (!ok)
    return false;
  for (uint32_t i = 0; i < k; i++) {
    ts_iv_retain(call->in[first + i]);
    call->out[i] = call->in[first + i];
  }
  return true;
}

static bool ts_ad_run(ts_rt_ctx *c, ts_rt_call *call, uint32_t slot) {
  if (slot >= ts_ad_nslots)
    return ts_rt_fail(c, "adapter %u is not bound", (unsigned)slot);
  const ts_ad_slot *a = &ts_ad_slots[slot];
  if (!ts_ad_arity(c, a, call))
    return false;
  switch (a->var.kind) {
  case TS_VARIANT_INPLACE:
  case TS_VARIANT_INPLACE_VIEW:
    if (call->in[0].tag != TS_IV_TENSOR)
      return ts_ad_not_tensor(c, a, "self");
    return a->var.kind == TS_VARIANT_INPLACE ? ts_ad_inplace(c, a, call) : ts_ad_inplace_view(c, a, call);
  case TS_VARIANT_OUT:
    return ts_ad_out(c, a, call);
  default:
    return ts_rt_fail(c, "adapter %u has no form", (unsigned)slot);
  }
}
