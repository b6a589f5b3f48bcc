/* runtime/kernels/creation.c: factory ops (zeros, ones, full, empty and
 * their _like and new_ forms, arange, linspace, logspace, eye, tril_indices,
 * triu_indices, torch.tensor, as_tensor, scalar_tensor, prim::NumToTensor)
 * as PyTorch 1.13 makes them on the CPU. `empty` gives zeros, so runs are
 * deterministic. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "tensor_ops.h"

/* Device? argument: None or the CPU. */
static bool cr_arg_cpu(ts_rt_ctx *ctx, ts_rt_call *call, uint32_t i) {
  if (!ts_rt_arg_check(ctx, call, i)) return false;
  ts_iv v = call->in[i];
  if (v.tag == TS_IV_NONE || (v.tag == TS_IV_DEVICE && v.u.dev.type == TS_DEV_CPU)) return true;
  if (v.tag != TS_IV_DEVICE) return ts_rt_arg_bad(ctx, call, i, "Device");
  ts_buf b = {0};
  ts_device_print(&b, v.u.dev);
  ts_rt_fail(ctx, "tsaot runs on CPU: cannot create a tensor on device '%s'", b.data ? b.data : "?");
  ts_buf_free(&b);
  return false;
}

/* The factory keywords (dtype, layout, device, pin_memory) from position i:
 * dtype TS_DT_NONE when not given; layout must be None or strided. */
static bool cr_factory(ts_rt_ctx *ctx, ts_rt_call *call, uint32_t i, ts_dtype *dt) {
  if (!ts_rt_arg_opt_dtype(ctx, call, i, dt) || !ts_rt_arg_check(ctx, call, i + 1)) return false;
  ts_iv layout = call->in[i + 1];
  if (!(layout.tag == TS_IV_NONE || (layout.tag == TS_IV_INT && layout.u.i == 0)))
    return ts_rt_fail(ctx, "tsaot supports only strided (dense) tensors");
  return cr_arg_cpu(ctx, call, i + 2);
}

/* names: must be None (named tensors are not supported). */
static bool cr_no_names(ts_rt_ctx *ctx, ts_rt_call *call, uint32_t i) {
  if (!ts_rt_arg_check(ctx, call, i)) return false;
  if (call->in[i].tag == TS_IV_NONE) return true;
  return ts_rt_fail(ctx, "tsaot does not support named tensors");
}

/* Sets every element of the contiguous tensor t to v (int, float or bool):
 * one element stored, then the bytes doubled. */
static void cr_fill(ts_rt_tensor *t, ts_iv v) {
  int64_t n = ts_rt_tensor_numel(t);
  if (n == 0) return;
  char *p = ts_rt_tensor_data(t);
  ts_dtype dt = (ts_dtype)t->dtype;
  if (v.tag == TS_IV_DOUBLE) ts_rt_store_f64(p, dt, v.u.d);
  else ts_rt_store_i64(p, dt, v.tag == TS_IV_BOOL ? (int64_t)v.u.b : v.u.i);
  size_t esz = ts_dtype_size(dt), total = (size_t)n * esz, done = esz;
  while (done < total) {
    size_t k = done < total - done ? done : total - done;
    memcpy(p + done, p, k);
    done += k;
  }
}

/* A number argument (int, float or bool) at position i. */
static bool cr_arg_number(ts_rt_ctx *ctx, ts_rt_call *call, uint32_t i, ts_iv *out) {
  if (!ts_rt_arg_check(ctx, call, i)) return false;
  ts_iv v = call->in[i];
  if (v.tag != TS_IV_INT && v.tag != TS_IV_DOUBLE && v.tag != TS_IV_BOOL) return ts_rt_arg_bad(ctx, call, i, "Scalar");
  *out = v;
  return true;
}

/* The dtype full() infers from its fill value when none is given. */
static ts_dtype cr_number_dtype(ts_iv v) {
  return v.tag == TS_IV_DOUBLE ? TS_DT_FLOAT32 : v.tag == TS_IV_BOOL ? TS_DT_BOOL : TS_DT_INT64;
}

/* A new tensor of `sizes` (from the int[] at position i) filled with v. */
static ts_rt_tensor *cr_new_filled(ts_rt_ctx *ctx, ts_rt_call *call, uint32_t i, ts_dtype dt, ts_iv v) {
  int64_t sizes[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  if (!ts_rt_arg_ints(ctx, call, i, sizes, TS_RT_MAX_DIMS, &n, 0)) return NULL;
  bool zero = (v.tag == TS_IV_INT && v.u.i == 0) || (v.tag == TS_IV_BOOL && !v.u.b) ||
              (v.tag == TS_IV_DOUBLE && v.u.d == 0 && !signbit(v.u.d));
  ts_rt_tensor *t = ts_rt_tensor_new(ctx, dt, (int32_t)n, sizes, zero);
  if (t && !zero) cr_fill(t, v);
  return t;
}

static ts_rt_tensor *cr_like_filled(ts_rt_ctx *ctx, const ts_rt_tensor *a, ts_dtype dt, ts_iv v) {
  if (dt == TS_DT_NONE) dt = (ts_dtype)a->dtype;
  ts_rt_tensor *t = ts_rt_tensor_new(ctx, dt, a->ndim, a->sizes, true);
  if (t) cr_fill(t, v);
  return t;
}

static bool cr_put(ts_rt_call *call, ts_rt_tensor *t) {
  if (!t) return false;
  call->out[0] = ts_iv_tensor(t);
  return true;
}

/* Writes r (owned) into the out= tensor: resized when the shape differs
 * (the factories' out= forms call resize_, without resize_output's
 * warning), converted to out's dtype; returns out retained. */
static bool cr_put_out(ts_rt_ctx *ctx, ts_rt_call *call, ts_rt_tensor *out, ts_rt_tensor *r) {
  if (!r) return false;
  bool same = out->ndim == r->ndim && (!r->ndim || !memcmp(out->sizes, r->sizes, (size_t)r->ndim * sizeof(int64_t)));
  bool ok = (same || ts_rt_tensor_resize(ctx, out, r->ndim, r->sizes, NULL)) && ts_rt_tensor_copy_(ctx, out, r);
  ts_rt_tensor_release(r);
  if (!ok) return false;
  ts_rt_tensor_retain(out);
  call->out[0] = ts_iv_tensor(out);
  return true;
}

/* ------------------------------------------------ zeros / ones / full */

#define CR_TENSOR(i, name) \
  ts_rt_tensor *name = NULL; \
  if (!ts_rt_arg_tensor(ctx, call, i, &name)) return false

static bool cr_k_zeros(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_dtype dt = TS_DT_NONE;
  if (!cr_factory(ctx, call, 1, &dt)) return false;
  return cr_put(call, cr_new_filled(ctx, call, 0, dt == TS_DT_NONE ? TS_DT_FLOAT32 : dt, ts_iv_int(0)));
}

static bool cr_k_zeros_names(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_dtype dt = TS_DT_NONE;
  if (!cr_no_names(ctx, call, 1) || !cr_factory(ctx, call, 2, &dt)) return false;
  return cr_put(call, cr_new_filled(ctx, call, 0, dt == TS_DT_NONE ? TS_DT_FLOAT32 : dt, ts_iv_int(0)));
}

static bool cr_k_ones(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_dtype dt = TS_DT_NONE;
  if (!cr_factory(ctx, call, 1, &dt)) return false;
  return cr_put(call, cr_new_filled(ctx, call, 0, dt == TS_DT_NONE ? TS_DT_FLOAT32 : dt, ts_iv_int(1)));
}

static bool cr_k_ones_names(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_dtype dt = TS_DT_NONE;
  if (!cr_no_names(ctx, call, 1) || !cr_factory(ctx, call, 2, &dt)) return false;
  return cr_put(call, cr_new_filled(ctx, call, 0, dt == TS_DT_NONE ? TS_DT_FLOAT32 : dt, ts_iv_int(1)));
}

/* zeros.out / ones.out (size, out) and the names_out forms (size, names, out). */
static bool cr_k_const_out(ts_rt_ctx *ctx, ts_rt_call *call, uint32_t out_i, int64_t value) {
  CR_TENSOR(out_i, out);
  return cr_put_out(ctx, call, out, cr_new_filled(ctx, call, 0, (ts_dtype)out->dtype, ts_iv_int(value)));
}
static bool cr_k_zeros_out(ts_rt_ctx *ctx, ts_rt_call *call) { return cr_k_const_out(ctx, call, 1, 0); }
static bool cr_k_zeros_names_out(ts_rt_ctx *ctx, ts_rt_call *call) {
  return cr_no_names(ctx, call, 1) && cr_k_const_out(ctx, call, 2, 0);
}
static bool cr_k_ones_out(ts_rt_ctx *ctx, ts_rt_call *call) { return cr_k_const_out(ctx, call, 1, 1); }
static bool cr_k_ones_names_out(ts_rt_ctx *ctx, ts_rt_call *call) {
  return cr_no_names(ctx, call, 1) && cr_k_const_out(ctx, call, 2, 1);
}

static bool cr_k_full(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_iv v;
  ts_dtype dt = TS_DT_NONE;
  if (!cr_arg_number(ctx, call, 1, &v) || !cr_factory(ctx, call, 2, &dt)) return false;
  return cr_put(call, cr_new_filled(ctx, call, 0, dt == TS_DT_NONE ? cr_number_dtype(v) : dt, v));
}

static bool cr_k_full_names(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_iv v;
  ts_dtype dt = TS_DT_NONE;
  if (!cr_arg_number(ctx, call, 1, &v) || !cr_no_names(ctx, call, 2) || !cr_factory(ctx, call, 3, &dt)) return false;
  return cr_put(call, cr_new_filled(ctx, call, 0, dt == TS_DT_NONE ? cr_number_dtype(v) : dt, v));
}

static bool cr_k_full_out(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_iv v;
  if (!cr_arg_number(ctx, call, 1, &v)) return false;
  bool names = call->nin > 3;
  if (names && !cr_no_names(ctx, call, 2)) return false;
  CR_TENSOR(names ? 3 : 2, out);
  return cr_put_out(ctx, call, out, cr_new_filled(ctx, call, 0, (ts_dtype)out->dtype, v));
}

/* empty.memory_format (size, dtype, layout, device, pin, memory_format). */
static bool cr_k_empty(ts_rt_ctx *ctx, ts_rt_call *call) { return cr_k_zeros(ctx, call); }
static bool cr_k_empty_names(ts_rt_ctx *ctx, ts_rt_call *call) { return cr_k_zeros_names(ctx, call); }
/* empty.out (size, memory_format, out) / names_out (size, names, memory_format, out) */
static bool cr_k_empty_out(ts_rt_ctx *ctx, ts_rt_call *call) { return cr_k_const_out(ctx, call, 2, 0); }
static bool cr_k_empty_names_out(ts_rt_ctx *ctx, ts_rt_call *call) {
  return cr_no_names(ctx, call, 1) && cr_k_const_out(ctx, call, 3, 0);
}

/* *_like (self, dtype, layout, device, pin, memory_format): self's shape,
 * self's dtype unless given. */
static bool cr_like(ts_rt_ctx *ctx, ts_rt_call *call, int64_t value) {
  CR_TENSOR(0, a);
  ts_dtype dt = TS_DT_NONE;
  if (!cr_factory(ctx, call, 1, &dt)) return false;
  return cr_put(call, cr_like_filled(ctx, a, dt, ts_iv_int(value)));
}
static bool cr_k_zeros_like(ts_rt_ctx *ctx, ts_rt_call *call) { return cr_like(ctx, call, 0); }
static bool cr_k_ones_like(ts_rt_ctx *ctx, ts_rt_call *call) { return cr_like(ctx, call, 1); }

/* *_like.out (self, memory_format, out) */
static bool cr_like_out(ts_rt_ctx *ctx, ts_rt_call *call, int64_t value) {
  CR_TENSOR(0, a);
  CR_TENSOR(2, out);
  return cr_put_out(ctx, call, out, cr_like_filled(ctx, a, (ts_dtype)out->dtype, ts_iv_int(value)));
}
static bool cr_k_zeros_like_out(ts_rt_ctx *ctx, ts_rt_call *call) { return cr_like_out(ctx, call, 0); }
static bool cr_k_ones_like_out(ts_rt_ctx *ctx, ts_rt_call *call) { return cr_like_out(ctx, call, 1); }

static bool cr_k_full_like(ts_rt_ctx *ctx, ts_rt_call *call) {
  CR_TENSOR(0, a);
  ts_iv v;
  ts_dtype dt = TS_DT_NONE;
  if (!cr_arg_number(ctx, call, 1, &v) || !cr_factory(ctx, call, 2, &dt)) return false;
  return cr_put(call, cr_like_filled(ctx, a, dt, v));
}

/* full_like.out (self, fill_value, memory_format, out) */
static bool cr_k_full_like_out(ts_rt_ctx *ctx, ts_rt_call *call) {
  CR_TENSOR(0, a);
  ts_iv v;
  if (!cr_arg_number(ctx, call, 1, &v)) return false;
  CR_TENSOR(3, out);
  return cr_put_out(ctx, call, out, cr_like_filled(ctx, a, (ts_dtype)out->dtype, v));
}

/* ---------------------------------------------------------------- arange */

static double cr_num_f64(ts_iv v) {
  return v.tag == TS_IV_DOUBLE ? v.u.d : v.tag == TS_IV_BOOL ? (double)v.u.b : (double)v.u.i;
}

/* Scalar.to<int64_t>(): floats truncate toward zero. */
static int64_t cr_num_i64(ts_iv v) {
  if (v.tag == TS_IV_DOUBLE) {
    double d = v.u.d;
    if (!(d == d)) return 0;
    if (d >= 9223372036854775807.0) return INT64_MAX;
    if (d <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)d;
  }
  return v.tag == TS_IV_BOOL ? (int64_t)v.u.b : v.u.i;
}

/* arange in dtype dt (TS_DT_NONE: int64 for int arguments, float32 when any
 * is a float), as PyTorch's arange_out: the length ceil((end - start) /
 * step) in double (in int64 for an int64 result), values start + i * step
 * in the accumulate type (double; float for half types; int64 for ints). */
static ts_rt_tensor *cr_arange(ts_rt_ctx *ctx, ts_iv start, ts_iv end, ts_iv step, ts_dtype dt) {
  if (dt == TS_DT_NONE) {
    bool any_float = start.tag == TS_IV_DOUBLE || end.tag == TS_IV_DOUBLE || step.tag == TS_IV_DOUBLE;
    dt = any_float ? TS_DT_FLOAT32 : TS_DT_INT64;
  }
  if (ts_dtype_is_complex(dt)) {
    ts_rt_fail(ctx, "\"arange_cpu\" not implemented for '%s'", ts_rt_dtype_name(dt));
    return NULL;
  }
  bool is_float = ts_rt_dtype_is_float(dt);
  bool half = dt == TS_DT_FLOAT16 || dt == TS_DT_BFLOAT16;
  double xstart, xend, xstep, size_d;
  int64_t istart = 0, istep = 0;
  if (is_float) {
    xstart = cr_num_f64(start);
    xend = cr_num_f64(end);
    xstep = cr_num_f64(step);
    if (half) {
      xstart = (float)xstart;
      xend = (float)xend;
      xstep = (float)xstep;
    }
    size_d = ceil((cr_num_f64(end) - cr_num_f64(start)) / cr_num_f64(step));
  } else {
    istart = cr_num_i64(start);
    int64_t iend = cr_num_i64(end);
    istep = cr_num_i64(step);
    xstart = (double)istart;
    xend = (double)iend;
    xstep = (double)istep;
    /* int64 subtracts in int64 (wrapping as PyTorch's would overflow); the
     * other integer types in double */
    if (dt == TS_DT_INT64)
      size_d = ceil((double)(int64_t)((uint64_t)iend - (uint64_t)istart) / (double)istep);
    else
      size_d = ceil((cr_num_f64(end) - cr_num_f64(start)) / cr_num_f64(step));
  }
  if (!(xstep > 0 || xstep < 0)) {
    ts_rt_fail(ctx, "step must be nonzero");
    return NULL;
  }
  if (!isfinite(xstart) || !isfinite(xend)) {
    if (is_float) ts_rt_fail(ctx, "unsupported range: %g -> %g", xstart, xend);
    else ts_rt_fail(ctx, "unsupported range: %lld -> %lld", (long long)xstart, (long long)xend);
    return NULL;
  }
  if (!((xstep > 0 && xend >= xstart) || (xstep < 0 && xend <= xstart))) {
    ts_rt_fail(ctx, "upper bound and larger bound inconsistent with step sign");
    return NULL;
  }
  if (!(size_d >= 0 && size_d <= 9223372036854775807.0)) {
    ts_rt_fail(ctx, "invalid size, possible overflow?");
    return NULL;
  }
  int64_t n = (int64_t)size_d;
  ts_rt_tensor *t = ts_rt_tensor_new(ctx, dt, 1, &n, false);
  if (!t) return NULL;
  char *p = ts_rt_tensor_data(t);
  size_t esz = ts_dtype_size(dt);
  if (!is_float) {
    for (int64_t i = 0; i < n; i++)
      ts_rt_store_i64(p + (size_t)i * esz, dt, (int64_t)((uint64_t)istart + (uint64_t)istep * (uint64_t)i));
    return t;
  }
  /* PyTorch's CPU kernel (AVX2 build) fills pairs of vectors of V lanes:
   * each vector from a base rounded to the dtype, base + k * step; the tail
   * element by element as start + i * step. Rounding the base makes values
   * differ from the plain formula, so this follows it. */
  int64_t lanes = dt == TS_DT_FLOAT64 ? 4 : dt == TS_DT_FLOAT32 ? 8 : 16;
  int64_t nvec = n / (2 * lanes) * (2 * lanes);
  for (int64_t i = 0; i < n; i++) {
    void *e = p + (size_t)i * esz;
    int64_t k = i % lanes, g = i - k;
    if (dt == TS_DT_FLOAT64) {
      ts_rt_store_f64(e, dt, i < nvec ? (xstart + xstep * (double)g) + (double)k * xstep : xstart + xstep * (double)i);
    } else if (dt == TS_DT_FLOAT32) {
      double v = xstart + xstep * (double)(i < nvec ? g : i);
      if (i < nvec) v = (double)(float)v + (double)k * xstep;
      ts_rt_store_f64(e, dt, (float)v);
    } else {
      float fs = (float)xstart, fst = (float)xstep;
      float v = fs + fst * (float)(i < nvec ? g : i);
      if (i < nvec) {
        char tmp[2];
        ts_rt_store_f64(tmp, dt, v); /* the base rounded to the half type */
        v = (float)ts_rt_load_f64(tmp, dt) + (float)k * fst;
      }
      ts_rt_store_f64(e, dt, v);
    }
  }
  return t;
}

static bool cr_k_arange(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_iv end;
  ts_dtype dt = TS_DT_NONE;
  if (!cr_arg_number(ctx, call, 0, &end) || !cr_factory(ctx, call, 1, &dt)) return false;
  return cr_put(call, cr_arange(ctx, ts_iv_int(0), end, ts_iv_int(1), dt));
}

static bool cr_k_arange_start(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_iv start, end;
  ts_dtype dt = TS_DT_NONE;
  if (!cr_arg_number(ctx, call, 0, &start) || !cr_arg_number(ctx, call, 1, &end) || !cr_factory(ctx, call, 2, &dt))
    return false;
  return cr_put(call, cr_arange(ctx, start, end, ts_iv_int(1), dt));
}

static bool cr_k_arange_start_step(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_iv start, end, step;
  ts_dtype dt = TS_DT_NONE;
  if (!cr_arg_number(ctx, call, 0, &start) || !cr_arg_number(ctx, call, 1, &end) ||
      !cr_arg_number(ctx, call, 2, &step) || !cr_factory(ctx, call, 3, &dt))
    return false;
  return cr_put(call, cr_arange(ctx, start, end, step, dt));
}

/* arange.start_out (start, end, step, out): the result takes out's dtype. */
/* arange.out: an out of another element count (with elements) gets
 * arange_out's own warning before cr_put_out resizes it. */
static bool cr_arange_out(ts_rt_ctx *ctx, ts_rt_call *call, ts_rt_tensor *out, ts_rt_tensor *r) {
  if (!r) return false;
  int64_t have = ts_rt_tensor_numel(out), size = ts_rt_tensor_numel(r);
  if (have != size && have > 0) {
    ts_buf shape = {0};
    for (int32_t i = 0; i < out->ndim; i++) ts_buf_printf(&shape, "%s%lld", i ? ", " : "", (long long)out->sizes[i]);
    ts_rt_warn(ctx,
               "The number of elements in the out tensor of shape [%s] is %lld which does not match the computed "
               "number of elements %lld. Note that this may occur as a result of rounding error. The out tensor will "
               "be resized to a tensor of shape (%lld,).",
               shape.data ? shape.data : "", (long long)have, (long long)size, (long long)size);
    ts_buf_free(&shape);
  }
  return cr_put_out(ctx, call, out, r);
}

static bool cr_k_arange_start_out(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_iv start, end, step;
  if (!cr_arg_number(ctx, call, 0, &start) || !cr_arg_number(ctx, call, 1, &end) ||
      !cr_arg_number(ctx, call, 2, &step))
    return false;
  CR_TENSOR(3, out);
  return cr_arange_out(ctx, call, out, cr_arange(ctx, start, end, step, (ts_dtype)out->dtype));
}

static bool cr_k_arange_out(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_iv end;
  if (!cr_arg_number(ctx, call, 0, &end)) return false;
  CR_TENSOR(1, out);
  return cr_arange_out(ctx, call, out, cr_arange(ctx, ts_iv_int(0), end, ts_iv_int(1), (ts_dtype)out->dtype));
}

/* ------------------------------------------------------- new_* (Tensor.new_zeros, ...) */

/* new_zeros / new_ones / new_empty (self, size, *, dtype, layout, device,
 * pin_memory): self's dtype unless given. */
static bool cr_new_like(ts_rt_ctx *ctx, ts_rt_call *call, int64_t value) {
  CR_TENSOR(0, a);
  ts_dtype dt = TS_DT_NONE;
  if (!cr_factory(ctx, call, 2, &dt)) return false;
  return cr_put(call, cr_new_filled(ctx, call, 1, dt == TS_DT_NONE ? (ts_dtype)a->dtype : dt, ts_iv_int(value)));
}
static bool cr_k_new_zeros(ts_rt_ctx *ctx, ts_rt_call *call) { return cr_new_like(ctx, call, 0); }
static bool cr_k_new_ones(ts_rt_ctx *ctx, ts_rt_call *call) { return cr_new_like(ctx, call, 1); }

/* new_full(self, size, fill_value, *, dtype, ...): self's dtype unless
 * given (not the fill value's, as full's). */
static bool cr_k_new_full(ts_rt_ctx *ctx, ts_rt_call *call) {
  CR_TENSOR(0, a);
  ts_iv v;
  ts_dtype dt = TS_DT_NONE;
  if (!cr_arg_number(ctx, call, 2, &v) || !cr_factory(ctx, call, 3, &dt)) return false;
  return cr_put(call, cr_new_filled(ctx, call, 1, dt == TS_DT_NONE ? (ts_dtype)a->dtype : dt, v));
}

/* new_empty_strided(self, size, stride, *, dtype, ...): zeros laid out with
 * the given strides, over a storage just large enough (empty_strided). */
static bool cr_k_new_empty_strided(ts_rt_ctx *ctx, ts_rt_call *call) {
  CR_TENSOR(0, a);
  int64_t sizes[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS];
  uint32_t n = 0, ns = 0;
  ts_dtype dt = TS_DT_NONE;
  if (!ts_rt_arg_ints(ctx, call, 1, sizes, TS_RT_MAX_DIMS, &n, 0) ||
      !ts_rt_arg_ints(ctx, call, 2, strides, TS_RT_MAX_DIMS, &ns, 0) || !cr_factory(ctx, call, 3, &dt))
    return false;
  if (dt == TS_DT_NONE) dt = (ts_dtype)a->dtype;
  if (n != ns)
    return ts_rt_fail(ctx, "mismatch in length of strides and shape");
  /* ATen's computeStorageNbytes: 1 + sum (size - 1) * stride, 0 when empty */
  uint64_t extent = 1;
  for (uint32_t k = 0; k < n; k++) {
    if (sizes[k] < 0)
      return ts_rt_fail(ctx, "Trying to create tensor with negative dimension %lld", (long long)sizes[k]);
    if (strides[k] < 0) return ts_rt_fail(ctx, "tsaot does not support negative strides (%lld)", (long long)strides[k]);
    if (sizes[k] == 0) extent = 0;
  }
  for (uint32_t k = 0; k < n && extent; k++) {
    uint64_t span = (uint64_t)(sizes[k] - 1);
    if (strides[k] && span > (UINT64_MAX / 2 - extent) / (uint64_t)strides[k])
      return ts_rt_fail(ctx, "new_empty_strided: storage size overflows");
    extent += span * (uint64_t)strides[k];
  }
  size_t esz = ts_dtype_size(dt);
  if (extent > SIZE_MAX / esz / 2) return ts_rt_fail(ctx, "new_empty_strided: storage size overflows");
  ts_rt_storage *st = ts_rt_storage_new(ctx, (size_t)extent * esz, true);
  if (!st) return false;
  ts_rt_tensor *t = ts_rt_tensor_new_view(ctx, st, dt, 0, (int32_t)n, sizes, strides);
  ts_rt_storage_release(st);
  return cr_put(call, t);
}

/* ------------------------------------------------------ linspace, logspace */

/* x rounded to dtype dt's precision (float32, the half types; double and
 * integers as they are). */
static double cr_round_to(double x, ts_dtype dt) {
  if (dt == TS_DT_FLOAT32) return (float)x;
  if (dt == TS_DT_FLOAT16 || dt == TS_DT_BFLOAT16) {
    char tmp[2];
    ts_rt_store_f64(tmp, dt, x);
    return ts_rt_load_f64(tmp, dt);
  }
  return x;
}

/* c10's name of dt's C type, as checked_convert's messages print it. */
static const char *cr_ctype_name(ts_dtype dt) {
  switch (dt) {
  case TS_DT_UINT8: return "uint8_t";
  case TS_DT_INT8: return "int8_t";
  case TS_DT_INT16: return "int16_t";
  case TS_DT_INT32: return "int";
  case TS_DT_INT64: return "int64_t";
  case TS_DT_FLOAT16: return "at::Half";
  case TS_DT_BFLOAT16: return "at::BFloat16";
  case TS_DT_FLOAT32: return "float";
  case TS_DT_FLOAT64: return "double";
  default: return "bool";
  }
}

/* Scalar::to<T> for a number into dtype dt: c10::checked_convert's range
 * check (an int may wrap into an unsigned type from below; infinities fit
 * the float types; NaN fits them too), the value as a double in *out
 * (truncated toward zero for integer types). */
static bool cr_scalar_to(ts_rt_ctx *ctx, ts_iv v, ts_dtype dt, double *out) {
  double lo = 0, hi = 0;
  switch (dt) {
  case TS_DT_UINT8: lo = 0; hi = 255; break;
  case TS_DT_INT8: lo = -128; hi = 127; break;
  case TS_DT_INT16: lo = -32768; hi = 32767; break;
  case TS_DT_INT32: lo = -2147483648.0; hi = 2147483647.0; break;
  case TS_DT_INT64: lo = -9223372036854775808.0; hi = 9223372036854775807.0; break;
  case TS_DT_FLOAT16: lo = -65504; hi = 65504; break;
  case TS_DT_BFLOAT16: lo = -3.38953139e38; hi = 3.38953139e38; break;
  case TS_DT_FLOAT32: lo = -3.4028234663852886e38; hi = 3.4028234663852886e38; break;
  default: lo = -INFINITY; hi = INFINITY; break;
  }
  bool bad;
  if (v.tag == TS_IV_DOUBLE) {
    double f = v.u.d;
    bool is_float = ts_rt_dtype_is_float(dt);
    bad = !(is_float && (isinf(f) || isnan(f))) && (isnan(f) || f < lo || f > hi);
    *out = is_float ? f : trunc(f);
  } else {
    int64_t i = v.tag == TS_IV_BOOL ? v.u.b : v.u.i;
    bad = (double)i > hi || (dt == TS_DT_UINT8 ? (i < 0 && -(uint64_t)i > 255) : (double)i < lo);
    *out = (double)i;
    if (dt == TS_DT_UINT8) *out = (double)(uint8_t)i; /* -20 is 236 */
  }
  if (bad)
    return ts_rt_fail(ctx, "value cannot be converted to type %s without overflow", cr_ctype_name(dt));
  return true;
}

/* The lanes of ATen's Vectorized<T> for dt in the AVX2 build PyTorch's CPU
 * kernels run (32 bytes). */
static int64_t cr_lanes(ts_dtype dt) { return 32 / (int64_t)ts_dtype_size(dt); }

/* a * b + c as the AVX2 build of ATen computes `c + a * b` in its kernels:
 * fused (GCC contracts it there) for float and double; for the half types
 * each operation rounds to the type. */
static double cr_fma_as(double a, double b, double c, ts_dtype r) {
  if (r == TS_DT_FLOAT64) return fma(a, b, c);
  if (r == TS_DT_FLOAT32) return fmaf((float)a, (float)b, (float)c);
  return cr_round_to(c + cr_round_to(a * b, r), r);
}

/* linspace into t (1-d, steps elements, steps >= 2) as ATen's linspace
 * kernel: step = (end - start) / (steps - 1) in the dtype (double for
 * integers), the first half from start, the second from end; output
 * vectors of V lanes (pairs of them, the tail element by element) hold a
 * base computed that way plus k * step, rounded as the dtype rounds. */
static void cr_linspace_fill(ts_rt_tensor *t, double start, double end, int64_t steps) {
  ts_dtype dt = (ts_dtype)t->dtype;
  bool integral = !ts_rt_dtype_is_float(dt);
  char *p = ts_rt_tensor_data(t);
  size_t esz = ts_dtype_size(dt);
  /* start and end as the dtype holds them (Scalar::to<scalar_t>) */
  if (!integral) {
    start = cr_round_to(start, dt);
    end = cr_round_to(end, dt);
  }
  ts_dtype r = integral ? TS_DT_FLOAT64 : dt; /* step_t's rounding */
  double step = cr_round_to(cr_round_to(end - start, r) / (double)(steps - 1), r);
  int64_t halfway = steps / 2, v = cr_lanes(dt), nvec = steps / (2 * v) * (2 * v);
  for (int64_t i = 0; i < steps; i++) {
    int64_t k = i < nvec ? i % v : 0, g = i - k;
    double base = g < halfway ? cr_fma_as(step, (double)g, start, r) : cr_fma_as(-step, (double)(steps - g - 1), end, r);
    double x = base;
    if (k) {
      if (integral) base = (double)(int64_t)base; /* the base is a T */
      x = cr_round_to(base + cr_round_to((double)k * step, r), r);
    }
    void *e = p + (size_t)i * esz;
    if (integral) ts_rt_store_i64(e, dt, (int64_t)x);
    else ts_rt_store_f64(e, dt, x);
  }
}

/* linspace into t for other kernels (histogram's bin edges): a real dtype
 * other than bool, steps = t's numel >= 1; start and end rounded to the
 * dtype first, as Scalar::to does */
void ts_rt_linspace_fill(ts_rt_tensor *t, double start, double end, int64_t steps) {
  if (steps == 1) ts_rt_store_f64(ts_rt_tensor_data(t), (ts_dtype)t->dtype, start);
  else if (steps > 1) cr_linspace_fill(t, start, end, steps);
}

/* linspace(start, end, steps, *, dtype, layout, device, pin_memory):
 * float32 unless given. */
static bool cr_k_linspace(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_iv a, b;
  int64_t steps = 0;
  ts_dtype dt = TS_DT_NONE;
  if (!cr_arg_number(ctx, call, 0, &a) || !cr_arg_number(ctx, call, 1, &b) || !ts_rt_arg_int(ctx, call, 2, &steps) ||
      !cr_factory(ctx, call, 3, &dt))
    return false;
  if (dt == TS_DT_NONE) dt = TS_DT_FLOAT32;
  if (steps < 0) return ts_rt_fail(ctx, "number of steps must be non-negative");
  if (dt == TS_DT_BOOL) return ts_rt_fail(ctx, "\"linspace_cpu\" not implemented for 'Bool'");
  if (ts_dtype_is_complex(dt)) return ts_rt_fail(ctx, "linspace of dtype %s is not supported by tsaot yet", ts_rt_dtype_name(dt));
  double x0 = 0, x1 = 0;
  if (!cr_scalar_to(ctx, a, dt, &x0) || !cr_scalar_to(ctx, b, dt, &x1)) return false;
  ts_rt_tensor *t = ts_rt_tensor_new(ctx, dt, 1, &steps, false);
  if (!t) return false;
  if (steps == 1) cr_fill(t, a);
  else if (steps > 1) cr_linspace_fill(t, x0, x1, steps);
  return cr_put(call, t);
}

/* logspace(start, end, steps, base, *, dtype, ...): base ** x for x spaced
 * as linspace's scalar formula, in double (start and end first converted
 * to the dtype; for integer dtypes the base is a float). */
static bool cr_k_logspace(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_iv a, b;
  int64_t steps = 0;
  double base = 10;
  ts_dtype dt = TS_DT_NONE;
  if (!cr_arg_number(ctx, call, 0, &a) || !cr_arg_number(ctx, call, 1, &b) || !ts_rt_arg_int(ctx, call, 2, &steps) ||
      !ts_rt_arg_double(ctx, call, 3, &base) || !cr_factory(ctx, call, 4, &dt))
    return false;
  if (dt == TS_DT_NONE) dt = TS_DT_FLOAT32;
  if (steps < 0) return ts_rt_fail(ctx, "number of steps must be non-negative");
  if (dt == TS_DT_BOOL || dt == TS_DT_FLOAT16)
    return ts_rt_fail(ctx, "\"logspace_cpu\" not implemented for '%s'", ts_rt_dtype_name(dt));
  if (ts_dtype_is_complex(dt)) return ts_rt_fail(ctx, "logspace of dtype %s is not supported by tsaot yet", ts_rt_dtype_name(dt));
  double start = 0, end = 0;
  if (!cr_scalar_to(ctx, a, dt, &start) || !cr_scalar_to(ctx, b, dt, &end)) return false;
  ts_rt_tensor *t = ts_rt_tensor_new(ctx, dt, 1, &steps, false);
  if (!t) return false;
  bool integral = !ts_rt_dtype_is_float(dt);
  if (integral) {
    base = (float)base;
  } else {
    start = cr_round_to(start, dt);
    end = cr_round_to(end, dt);
  }
  char *p = ts_rt_tensor_data(t);
  size_t esz = ts_dtype_size(dt);
  double step = steps > 1 ? (end - start) / (double)(steps - 1) : 0;
  for (int64_t i = 0; i < steps; i++) {
    double x = steps == 1 ? start : i < steps / 2 ? start + step * (double)i : end - step * (double)(steps - i - 1);
    double y = pow(base, x);
    void *e = p + (size_t)i * esz;
    if (integral) ts_rt_store_i64(e, dt, (int64_t)y);
    else ts_rt_store_f64(e, dt, y);
  }
  return cr_put(call, t);
}

/* ------------------------------------------------ tril_indices, triu_indices */

/* The [2, N] coordinates (row-major) of the lower (upper) triangle of a
 * row x col matrix: col - row <= offset (>= offset); int64 or int32. */
static bool cr_tri_indices(ts_rt_ctx *ctx, ts_rt_call *call, bool upper) {
  int64_t row = 0, col = 0, offset = 0;
  ts_dtype dt = TS_DT_NONE;
  if (!ts_rt_arg_int(ctx, call, 0, &row) || !ts_rt_arg_int(ctx, call, 1, &col) ||
      !ts_rt_arg_int(ctx, call, 2, &offset) || !cr_factory(ctx, call, 3, &dt))
    return false;
  if (dt == TS_DT_NONE) dt = TS_DT_INT64;
  if (row < 0) return ts_rt_fail(ctx, "row must be non-negative, got%lld", (long long)row);
  if (col < 0) return ts_rt_fail(ctx, "col must be non-negative, got%lld", (long long)col);
  if (dt != TS_DT_INT64 && dt != TS_DT_INT32)
    return ts_rt_fail(ctx, "\"%s\" not implemented for '%s'", upper ? "triu_indices" : "tril_indices",
                      ts_rt_dtype_name(dt));
  int64_t n = 0;
  for (int64_t r = 0; r < row; r++) {
    /* the columns of row r in the triangle: [0, min(col, r + offset + 1)) or [max(0, r + offset), col) */
    int64_t lo = upper ? (r + offset > 0 ? r + offset : 0) : 0;
    int64_t hi = upper ? col : (r + offset + 1 < col ? r + offset + 1 : col);
    if (hi > lo) n += hi - lo;
    if (n > (int64_t)1 << 40) return ts_rt_fail(ctx, "%s: too many indices", upper ? "triu_indices" : "tril_indices");
  }
  int64_t sizes[2] = {2, n};
  ts_rt_tensor *t = ts_rt_tensor_new(ctx, dt, 2, sizes, false);
  if (!t) return false;
  char *p = ts_rt_tensor_data(t);
  size_t esz = ts_dtype_size(dt);
  int64_t i = 0;
  for (int64_t r = 0; r < row; r++) {
    int64_t lo = upper ? (r + offset > 0 ? r + offset : 0) : 0;
    int64_t hi = upper ? col : (r + offset + 1 < col ? r + offset + 1 : col);
    for (int64_t c = lo; c < hi; c++, i++) {
      ts_rt_store_i64(p + (size_t)i * esz, dt, r);
      ts_rt_store_i64(p + (size_t)(n + i) * esz, dt, c);
    }
  }
  return cr_put(call, t);
}
static bool cr_k_tril_indices(ts_rt_ctx *ctx, ts_rt_call *call) { return cr_tri_indices(ctx, call, false); }
static bool cr_k_triu_indices(ts_rt_ctx *ctx, ts_rt_call *call) { return cr_tri_indices(ctx, call, true); }

/* ------------------------------------------------------------------- eye */

static ts_rt_tensor *cr_eye(ts_rt_ctx *ctx, int64_t n, int64_t m, ts_dtype dt) {
  if (n < 0) {
    ts_rt_fail(ctx, "n must be greater or equal to 0, got %lld", (long long)n);
    return NULL;
  }
  if (m < 0) {
    ts_rt_fail(ctx, "m must be greater or equal to 0, got %lld", (long long)m);
    return NULL;
  }
  int64_t sizes[2] = {n, m};
  ts_rt_tensor *t = ts_rt_tensor_new(ctx, dt == TS_DT_NONE ? TS_DT_FLOAT32 : dt, 2, sizes, true);
  if (!t) return NULL;
  char *p = ts_rt_tensor_data(t);
  size_t esz = ts_dtype_size((ts_dtype)t->dtype);
  for (int64_t i = 0; i < n && i < m; i++) ts_rt_store_i64(p + (size_t)(i * m + i) * esz, (ts_dtype)t->dtype, 1);
  return t;
}

static bool cr_k_eye(ts_rt_ctx *ctx, ts_rt_call *call) {
  int64_t n = 0;
  ts_dtype dt = TS_DT_NONE;
  if (!ts_rt_arg_int(ctx, call, 0, &n) || !cr_factory(ctx, call, 1, &dt)) return false;
  return cr_put(call, cr_eye(ctx, n, n, dt));
}

static bool cr_k_eye_m(ts_rt_ctx *ctx, ts_rt_call *call) {
  int64_t n = 0, m = 0;
  ts_dtype dt = TS_DT_NONE;
  if (!ts_rt_arg_int(ctx, call, 0, &n) || !ts_rt_arg_int(ctx, call, 1, &m) || !cr_factory(ctx, call, 2, &dt))
    return false;
  return cr_put(call, cr_eye(ctx, n, m, dt));
}

static bool cr_k_eye_out(ts_rt_ctx *ctx, ts_rt_call *call) {
  int64_t n = 0;
  if (!ts_rt_arg_int(ctx, call, 0, &n)) return false;
  CR_TENSOR(1, out);
  return cr_put_out(ctx, call, out, cr_eye(ctx, n, n, (ts_dtype)out->dtype));
}

static bool cr_k_eye_m_out(ts_rt_ctx *ctx, ts_rt_call *call) {
  int64_t n = 0, m = 0;
  if (!ts_rt_arg_int(ctx, call, 0, &n) || !ts_rt_arg_int(ctx, call, 1, &m)) return false;
  CR_TENSOR(2, out);
  return cr_put_out(ctx, call, out, cr_eye(ctx, n, m, (ts_dtype)out->dtype));
}

/* ---------------------------------------------------------- torch.tensor */

/* tensor.float / .int / .bool (t, dtype, device, requires_grad): a 0-d
 * tensor, float32 / int64 / bool unless dtype is given. */
static bool cr_k_tensor_scalar(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_iv v;
  ts_dtype dt = TS_DT_NONE;
  if (!cr_arg_number(ctx, call, 0, &v) || !ts_rt_arg_opt_dtype(ctx, call, 1, &dt) || !cr_arg_cpu(ctx, call, 2))
    return false;
  if (dt == TS_DT_NONE) dt = cr_number_dtype(v);
  ts_rt_tensor *t = ts_rt_tensor_new(ctx, dt, 0, NULL, true);
  if (t) cr_fill(t, v);
  return cr_put(call, t);
}

/* The leaf kind of a nested list's declared element type (float[][] ->
 * float), or TS_TY_ANY when unknown. */
static ts_type_kind cr_leaf_kind(const ts_type *elem) {
  while (elem && elem->kind == TS_TY_LIST && elem->n > 0) elem = elem->elems[0];
  return elem ? elem->kind : TS_TY_ANY;
}

typedef struct cr_nest {
  int32_t ndim;
  int64_t sizes[TS_RT_MAX_DIMS];
  ts_type_kind leaf; /* from the declared type, else the first leaf value */
  char *data;
  size_t esz;
  ts_dtype dt;
  int64_t at;
} cr_nest;

/* Stores the nested list l (at depth d) in row-major order, checking every
 * sublist against the sizes taken from the first elements. */
static bool cr_store(ts_rt_ctx *ctx, cr_nest *ns, const ts_rt_list *l, int32_t d) {
  if ((int64_t)l->n != ns->sizes[d])
    return ts_rt_fail(ctx, "Expected sequence of length %lld at dim %d (got %u)", (long long)ns->sizes[d], (int)d,
                      (unsigned)l->n);
  for (uint32_t i = 0; i < l->n; i++) {
    ts_iv v = l->items[i];
    if (d + 1 < ns->ndim) {
      if (v.tag != TS_IV_LIST) return ts_rt_fail(ctx, "Expected sequence at dim %d, got %s", (int)(d + 1),
                                                 ts_iv_tag_name(v));
      if (!cr_store(ctx, ns, v.u.l, d + 1)) return false;
      continue;
    }
    void *e = ns->data + (size_t)ns->at++ * ns->esz;
    if (v.tag == TS_IV_DOUBLE) ts_rt_store_f64(e, ns->dt, v.u.d);
    else if (v.tag == TS_IV_INT) ts_rt_store_i64(e, ns->dt, v.u.i);
    else if (v.tag == TS_IV_BOOL) ts_rt_store_i64(e, ns->dt, v.u.b);
    else return ts_rt_fail(ctx, "Input must be of ints, floats, or bools, got %s", ts_iv_tag_name(v));
  }
  return true;
}

/* aten::tensor(t[] data, dtype, device, requires_grad): the shape from the
 * nesting, the dtype from the element type (float -> float32, int -> int64,
 * bool -> bool) unless given. */
static bool cr_k_tensor_list(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_list *l = NULL;
  ts_dtype dt = TS_DT_NONE;
  if (!ts_rt_arg_list(ctx, call, 0, &l) || !ts_rt_arg_opt_dtype(ctx, call, 1, &dt) || !cr_arg_cpu(ctx, call, 2))
    return false;
  cr_nest ns = {0};
  ns.leaf = cr_leaf_kind(l->elem);
  const ts_rt_list *cur = l;
  for (;;) {
    if (ns.ndim >= TS_RT_MAX_DIMS) return ts_rt_fail(ctx, "torch.tensor: too many nested lists");
    ns.sizes[ns.ndim++] = cur->n;
    if (cur->n == 0) break;
    ts_iv first = cur->items[0];
    if (first.tag == TS_IV_LIST) {
      cur = first.u.l;
      continue;
    }
    if (ns.leaf != TS_TY_FLOAT && ns.leaf != TS_TY_INT && ns.leaf != TS_TY_BOOL)
      ns.leaf = first.tag == TS_IV_DOUBLE ? TS_TY_FLOAT : first.tag == TS_IV_INT ? TS_TY_INT
                : first.tag == TS_IV_BOOL ? TS_TY_BOOL : TS_TY_ANY;
    if (ns.leaf == TS_TY_ANY)
      return ts_rt_fail(ctx, "Input must be of ints, floats, or bools, got %s", ts_iv_tag_name(first));
    break;
  }
  if (ns.leaf == TS_TY_TENSOR) return ts_rt_fail(ctx, "Input must be of ints, floats, or bools, got Tensor");
  if (dt == TS_DT_NONE) dt = ns.leaf == TS_TY_INT ? TS_DT_INT64 : ns.leaf == TS_TY_BOOL ? TS_DT_BOOL : TS_DT_FLOAT32;
  ts_rt_tensor *t = ts_rt_tensor_new(ctx, dt, ns.ndim, ns.sizes, false);
  if (!t) return false;
  ns.data = ts_rt_tensor_data(t);
  ns.esz = ts_dtype_size(dt);
  ns.dt = dt;
  if (!cr_store(ctx, &ns, l, 0)) {
    ts_rt_tensor_release(t);
    return false;
  }
  return cr_put(call, t);
}

/* as_tensor(Tensor data, *, dtype, device): data itself when the dtype is
 * its own (or None), else a converted copy (register_special_ops.cpp). */
static bool cr_k_as_tensor(ts_rt_ctx *ctx, ts_rt_call *call) {
  CR_TENSOR(0, a);
  ts_dtype dt = TS_DT_NONE;
  if (!ts_rt_arg_opt_dtype(ctx, call, 1, &dt) || !cr_arg_cpu(ctx, call, 2)) return false;
  if (dt == TS_DT_NONE || dt == (ts_dtype)a->dtype) {
    ts_rt_tensor_retain(a);
    return cr_put(call, a);
  }
  return cr_put(call, ts_rt_tensor_to_dtype(ctx, a, dt));
}

/* scalar_tensor(s, *, dtype, layout, device, pin_memory): a 0-d tensor of
 * the default dtype (float32) whatever the number's kind. */
static bool cr_k_scalar_tensor(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_iv v;
  ts_dtype dt = TS_DT_NONE;
  if (!cr_arg_number(ctx, call, 0, &v) || !cr_factory(ctx, call, 1, &dt)) return false;
  ts_rt_tensor *t = ts_rt_tensor_new(ctx, dt == TS_DT_NONE ? TS_DT_FLOAT32 : dt, 0, NULL, true);
  if (t) cr_fill(t, v);
  return cr_put(call, t);
}

/* prim::NumToTensor: a 0-d int64, float64 or bool tensor, as the number. */
static bool cr_k_num_to_tensor(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_iv v;
  if (!cr_arg_number(ctx, call, 0, &v)) return false;
  ts_dtype dt = v.tag == TS_IV_DOUBLE ? TS_DT_FLOAT64 : v.tag == TS_IV_BOOL ? TS_DT_BOOL : TS_DT_INT64;
  ts_rt_tensor *t = ts_rt_tensor_new(ctx, dt, 0, NULL, true);
  if (t) cr_fill(t, v);
  return cr_put(call, t);
}

const ts_rt_kernel_def ts_rt_kernels_creation[] = {
    {"aten::zeros", cr_k_zeros},
    {"aten::zeros.names", cr_k_zeros_names},
    {"aten::zeros.out", cr_k_zeros_out},
    {"aten::zeros.names_out", cr_k_zeros_names_out},
    {"aten::ones", cr_k_ones},
    {"aten::ones.names", cr_k_ones_names},
    {"aten::ones.out", cr_k_ones_out},
    {"aten::ones.names_out", cr_k_ones_names_out},
    {"aten::full", cr_k_full},
    {"aten::full.names", cr_k_full_names},
    {"aten::full.out", cr_k_full_out},
    {"aten::full.names_out", cr_k_full_out},
    {"aten::empty.memory_format", cr_k_empty},
    {"aten::empty.names", cr_k_empty_names},
    {"aten::empty.out", cr_k_empty_out},
    {"aten::empty.names_out", cr_k_empty_names_out},
    {"aten::zeros_like", cr_k_zeros_like},
    {"aten::zeros_like.out", cr_k_zeros_like_out},
    {"aten::ones_like", cr_k_ones_like},
    {"aten::ones_like.out", cr_k_ones_like_out},
    {"aten::empty_like", cr_k_zeros_like},
    {"aten::empty_like.out", cr_k_zeros_like_out},
    {"aten::full_like", cr_k_full_like},
    {"aten::full_like.out", cr_k_full_like_out},
    {"aten::arange", cr_k_arange},
    {"aten::arange.start", cr_k_arange_start},
    {"aten::arange.start_step", cr_k_arange_start_step},
    {"aten::arange.start_out", cr_k_arange_start_out},
    {"aten::arange.out", cr_k_arange_out},
    {"aten::eye", cr_k_eye},
    {"aten::eye.m", cr_k_eye_m},
    {"aten::eye.out", cr_k_eye_out},
    {"aten::eye.m_out", cr_k_eye_m_out},
    {"aten::tensor.float", cr_k_tensor_scalar},
    {"aten::tensor.int", cr_k_tensor_scalar},
    {"aten::tensor.bool", cr_k_tensor_scalar},
    {"aten::tensor", cr_k_tensor_list},
    /* as_tensor of numbers and lists is torch.tensor without requires_grad */
    {"aten::as_tensor.float", cr_k_tensor_scalar},
    {"aten::as_tensor.int", cr_k_tensor_scalar},
    {"aten::as_tensor.bool", cr_k_tensor_scalar},
    {"aten::as_tensor.list", cr_k_tensor_list},
    {"aten::as_tensor", cr_k_as_tensor},
    {"aten::scalar_tensor", cr_k_scalar_tensor},
    {"aten::new_zeros", cr_k_new_zeros},
    {"aten::new_ones", cr_k_new_ones},
    {"aten::new_empty", cr_k_new_zeros},
    {"aten::new_full", cr_k_new_full},
    {"aten::new_empty_strided", cr_k_new_empty_strided},
    {"aten::linspace", cr_k_linspace},
    {"aten::logspace", cr_k_logspace},
    {"aten::tril_indices", cr_k_tril_indices},
    {"aten::triu_indices", cr_k_triu_indices},
    {"prim::NumToTensor.Scalar", cr_k_num_to_tensor},
    {"prim::NumToTensor.bool", cr_k_num_to_tensor},
    {NULL, NULL},
};
