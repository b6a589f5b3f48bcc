/* runtime/kernels/nn_util.h: helpers shared by the nn and reduction kernel
 * files (nn.c, conv.c, pool.c, norm.c, reduce.c), and the kernels that
 * conv.c, pool.c and norm.c export for nn.c's table. Internal to runtime/. */
#ifndef TS_RT_KERNELS_NN_UTIL_H
#define TS_RT_KERNELS_NN_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "tensor_ops.h"

/* Lower-case C++ type names, for conv's "Input type (float) and bias type
 * (double) should be the same". */
static inline const char *nnu_ctype_name(ts_dtype dt) {
  switch (dt) {
  case TS_DT_UINT8: return "unsigned char";
  case TS_DT_INT8: return "signed char";
  case TS_DT_INT16: return "short int";
  case TS_DT_INT32: return "int";
  case TS_DT_INT64: return "long int";
  case TS_DT_FLOAT16: return "c10::Half";
  case TS_DT_FLOAT32: return "float";
  case TS_DT_FLOAT64: return "double";
  case TS_DT_BOOL: return "bool";
  case TS_DT_BFLOAT16: return "c10::BFloat16";
  default: return "?";
  }
}

static inline bool nnu_not_impl(ts_rt_ctx *c, const char *op, ts_dtype dt) {
  return ts_rt_fail(c, "\"%s\" not implemented for '%s'", op, ts_rt_dtype_name(dt));
}

/* a * b into *out; false on int64 overflow or a negative operand. */
static inline bool nnu_mul(int64_t a, int64_t b, int64_t *out) {
  if (a < 0 || b < 0) return false;
  if (a != 0 && b > INT64_MAX / a) return false;
  *out = a * b;
  return true;
}

/* Writes "[2, 3]" for messages. */
static inline void nnu_shape_str(char *buf, size_t cap, int32_t ndim, const int64_t *sizes) {
  size_t n = 0;
  n += (size_t)snprintf(buf + n, cap - n, "[");
  for (int32_t i = 0; i < ndim && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)sizes[i]);
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

/* The dtype nn kernels compute in: float32 (for float32, float16, bfloat16)
 * or float64 (float64 and the integer types). */
static inline ts_dtype nnu_work_dtype(ts_dtype dt) {
  return dt == TS_DT_FLOAT32 || dt == TS_DT_FLOAT16 || dt == TS_DT_BFLOAT16 ? TS_DT_FLOAT32 : TS_DT_FLOAT64;
}

/* New: t as a contiguous tensor of dtype `dt` (t itself, retained, when it
 * already is one). */
static inline ts_rt_tensor *nnu_contig_as(ts_rt_ctx *c, const ts_rt_tensor *t, ts_dtype dt) {
  if (t->dtype == dt) return ts_rt_tensor_contiguous(c, (ts_rt_tensor *)t);
  return ts_rt_tensor_to_dtype(c, t, dt);
}

/* Takes over r; returns it converted to dt (r itself if already dt). */
static inline ts_rt_tensor *nnu_cast_owned(ts_rt_ctx *c, ts_rt_tensor *r, ts_dtype dt) {
  if (!r || r->dtype == dt) return r;
  ts_rt_tensor *o = ts_rt_tensor_to_dtype(c, r, dt);
  ts_rt_tensor_release(r);
  return o;
}

/* Stores a result tensor (taken over) as the kernel's only output. */
static inline bool nnu_ret(ts_rt_call *call, ts_rt_tensor *t) {
  if (!t) return false;
  call->out[0] = ts_iv_tensor(t);
  return true;
}

/* Makes `out` (an out= argument) hold res: resized as PyTorch's out= does
 * when its shape differs (ts_rt_tensor_resize_out), then res copied in,
 * converted to out's dtype (the out= forms ATen generates for functional
 * ops: resize_output, then copy_). */
static inline bool nnu_write_out(ts_rt_ctx *c, ts_rt_tensor *out, const ts_rt_tensor *res) {
  return ts_rt_tensor_resize_out(c, out, res->ndim, res->sizes, NULL) && ts_rt_tensor_copy_(c, out, res);
}

/* Runs a functional kernel on the inputs before the `nouts` trailing out=
 * tensors, copies its results into them and returns them retained. */
static inline bool nnu_out_call(ts_rt_ctx *c, ts_rt_call *call, ts_rt_kernel_fn fn, uint32_t nouts) {
  if (call->nin < nouts || call->nout != nouts || nouts > 4) return ts_rt_fail(c, "out= kernel called with bad arity");
  ts_iv res[4];
  ts_rt_call inner = {call->in, call->nin - nouts, res, nouts, call->node};
  if (!fn(c, &inner)) return false;
  bool ok = true;
  for (uint32_t i = 0; i < nouts; i++) {
    ts_iv o = call->in[call->nin - nouts + i];
    if (ok && (o.tag != TS_IV_TENSOR || res[i].tag != TS_IV_TENSOR))
      ok = ts_rt_fail(c, "out= argument %u: expected Tensor", (unsigned)i);
    if (ok) ok = nnu_write_out(c, o.u.t, res[i].u.t);
  }
  for (uint32_t i = 0; i < nouts; i++) ts_iv_release(res[i]);
  if (!ok) return false;
  for (uint32_t i = 0; i < nouts; i++) {
    ts_iv o = call->in[call->nin - nouts + i];
    ts_iv_retain(o);
    call->out[i] = o;
  }
  return true;
}

/* Defines `static bool NAME(ctx, call)`: the out= overload of FN. */
#define NNU_OUT_KERNEL(NAME, FN, NOUTS) \
  static bool NAME(ts_rt_ctx *c, ts_rt_call *call) { return nnu_out_call(c, call, FN, NOUTS); }

/* kernels of conv.c, pool.c and norm.c, listed in nn.c's table */
bool ts_rt_k_convolution(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k__convolution(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k__convolution_deprecated(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k_conv1d(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k_conv2d(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k_conv1d_padding(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k_conv2d_padding(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k_conv3d(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k_conv3d_padding(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k_conv_transpose1d(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k_conv_transpose2d(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k_conv_transpose3d(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k_conv2d_act(ts_rt_ctx *c, ts_rt_call *call);

bool ts_rt_k_max_pool1d(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k_max_pool2d(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k_avg_pool1d(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k_avg_pool2d(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k_adaptive_avg_pool1d(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k_adaptive_avg_pool2d(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k_adaptive_max_pool2d(ts_rt_ctx *c, ts_rt_call *call);

bool ts_rt_k_batch_norm(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k_instance_norm(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k_group_norm(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k_layer_norm(ts_rt_ctx *c, ts_rt_call *call);
/* norm.c's, listed in stats.c's table */
bool ts_rt_k_native_batch_norm(ts_rt_ctx *c, ts_rt_call *call);
bool ts_rt_k_native_layer_norm(ts_rt_ctx *c, ts_rt_call *call);

#endif
