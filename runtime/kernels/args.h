/* runtime/kernels/args.h: reading a kernel's arguments out of its IValues.
 * Each getter checks the tag and fails with a message naming the argument
 * position, so a kernel can write
 *
 *   const ts_rt_tensor *a; int64_t dim;
 *   if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_int(ctx, call, 1, &dim)) return false;
 *
 * Internal to runtime/. */
#ifndef TS_RT_KERNELS_ARGS_H
#define TS_RT_KERNELS_ARGS_H

#include "runtime.h"

static inline bool ts_rt_arg_check(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i) {
  if (i < call->nin) return true;
  /* not `return ts_rt_fail(...)`: GCC must see the false to know outputs
   * are only read after success (-Wmaybe-uninitialized at -O2) */
  ts_rt_fail(c, "kernel called with %u arguments, argument %u expected", (unsigned)call->nin, (unsigned)i);
  return false;
}

static inline bool ts_rt_arg_bad(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i, const char *want) {
  ts_rt_fail(c, "argument %u: expected %s, got %s", (unsigned)i, want, ts_iv_tag_name(call->in[i]));
  return false;
}

static inline bool ts_rt_arg_tensor(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i, ts_rt_tensor **out) {
  if (!ts_rt_arg_check(c, call, i)) return false;
  if (call->in[i].tag != TS_IV_TENSOR) return ts_rt_arg_bad(c, call, i, "Tensor");
  *out = call->in[i].u.t;
  return true;
}

/* Tensor? : NULL for None. */
static inline bool ts_rt_arg_opt_tensor(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i, ts_rt_tensor **out) {
  if (!ts_rt_arg_check(c, call, i)) return false;
  if (call->in[i].tag == TS_IV_NONE) { *out = NULL; return true; }
  return ts_rt_arg_tensor(c, call, i, out);
}

/* int (a bool is accepted, as Python's bool is an int). */
static inline bool ts_rt_arg_int(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i, int64_t *out) {
  if (!ts_rt_arg_check(c, call, i)) return false;
  ts_iv v = call->in[i];
  if (v.tag == TS_IV_INT) { *out = v.u.i; return true; }
  if (v.tag == TS_IV_BOOL) { *out = v.u.b; return true; }
  return ts_rt_arg_bad(c, call, i, "int");
}

/* int? : `present` false for None. */
static inline bool ts_rt_arg_opt_int(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i, int64_t *out, bool *present) {
  if (!ts_rt_arg_check(c, call, i)) return false;
  *present = call->in[i].tag != TS_IV_NONE;
  return !*present || ts_rt_arg_int(c, call, i, out);
}

/* float, or any number (Scalar) as a double. */
static inline bool ts_rt_arg_double(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i, double *out) {
  if (!ts_rt_arg_check(c, call, i)) return false;
  ts_iv v = call->in[i];
  if (v.tag == TS_IV_DOUBLE) { *out = v.u.d; return true; }
  if (v.tag == TS_IV_INT) { *out = (double)v.u.i; return true; }
  if (v.tag == TS_IV_BOOL) { *out = v.u.b; return true; }
  return ts_rt_arg_bad(c, call, i, "float");
}

static inline bool ts_rt_arg_bool(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i, bool *out) {
  if (!ts_rt_arg_check(c, call, i)) return false;
  ts_iv v = call->in[i];
  if (v.tag == TS_IV_BOOL) { *out = v.u.b; return true; }
  if (v.tag == TS_IV_INT) { *out = v.u.i != 0; return true; }
  return ts_rt_arg_bad(c, call, i, "bool");
}

/* ScalarType? (an int or None): TS_DT_NONE for None. */
static inline bool ts_rt_arg_opt_dtype(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i, ts_dtype *out) {
  if (!ts_rt_arg_check(c, call, i)) return false;
  ts_iv v = call->in[i];
  if (v.tag == TS_IV_NONE) { *out = TS_DT_NONE; return true; }
  if (v.tag != TS_IV_INT) return ts_rt_arg_bad(c, call, i, "ScalarType");
  if (v.u.i < 0 || v.u.i >= TS_DT_COUNT || !ts_rt_dtype_supported((ts_dtype)v.u.i))
    return ts_rt_fail(c, "argument %u: unsupported dtype %lld", (unsigned)i, (long long)v.u.i);
  *out = (ts_dtype)v.u.i;
  return true;
}

static inline bool ts_rt_arg_str(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i, const ts_rt_str **out) {
  if (!ts_rt_arg_check(c, call, i)) return false;
  if (call->in[i].tag != TS_IV_STR) return ts_rt_arg_bad(c, call, i, "str");
  *out = call->in[i].u.s;
  return true;
}

static inline bool ts_rt_arg_list(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i, ts_rt_list **out) {
  if (!ts_rt_arg_check(c, call, i)) return false;
  if (call->in[i].tag != TS_IV_LIST) return ts_rt_arg_bad(c, call, i, "List");
  *out = call->in[i].u.l;
  return true;
}

/* int[] (or int[N] given as one int, repeated N times when n_fill > 0) into
 * out[0..*n), at most `max`. */
static inline bool ts_rt_arg_ints(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i, int64_t *out, uint32_t max,
                                  uint32_t *n, uint32_t n_fill) {
  if (!ts_rt_arg_check(c, call, i)) return false;
  ts_iv v = call->in[i];
  if (v.tag == TS_IV_INT && n_fill > 0 && n_fill <= max) {
    for (uint32_t k = 0; k < n_fill; k++) out[k] = v.u.i;
    *n = n_fill;
    return true;
  }
  if (v.tag != TS_IV_LIST) return ts_rt_arg_bad(c, call, i, "List[int]");
  const ts_rt_list *l = v.u.l;
  if (l->n > max) return ts_rt_fail(c, "argument %u: list of %u ints, at most %u allowed", (unsigned)i, (unsigned)l->n,
                                    (unsigned)max);
  for (uint32_t k = 0; k < l->n; k++) {
    if (l->items[k].tag != TS_IV_INT) return ts_rt_fail(c, "argument %u: expected List[int]", (unsigned)i);
    out[k] = l->items[k].u.i;
  }
  *n = l->n;
  return true;
}

/* Wraps a dimension into [0, ndim) as PyTorch's maybe_wrap_dim (a 0-d
 * tensor accepts -1 and 0). */
static inline bool ts_rt_wrap_dim(ts_rt_ctx *c, int64_t dim, int32_t ndim, int64_t *out) {
  int64_t n = ndim > 0 ? ndim : 1;
  if (dim < -n || dim >= n)
    return ts_rt_fail(c, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                      (long long)-n, (long long)(n - 1), (long long)dim);
  *out = dim < 0 ? dim + n : dim;
  return true;
}

#endif
