/* runtime/kernels/packed.c: packed sequences (torch.nn.utils.rnn):
 * aten::_pack_padded_sequence, aten::_pad_packed_sequence and
 * aten::pad_sequence, as PyTorch 1.13 computes them
 * (aten/src/ATen/native/PackedSequence.cpp), with its checks and messages.
 *
 * A PackedSequence's data holds, time step by time step, the rows of the
 * batch elements still running at that step (batch_sizes[t] of them; the
 * batch sorted by decreasing length). The RNN layers' .data overloads that
 * run over it are rnn.c's. Any dtype; the copies go through copy_, so
 * strided inputs need no contiguous copy first.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/args.h"
#include "runtime.h"
#include "tensor_ops.h"

/* PyTorch's checkLongTensor: lengths and batch_sizes are 1-D int64. */
static bool pk_check_long(ts_rt_ctx *c, const ts_rt_tensor *t) {
  if (t->ndim == 1 && t->dtype == TS_DT_INT64) return true;
  return ts_rt_fail(c, "'lengths' argument should be a 1D CPU int64 tensor, but got %dD cpu %s tensor", (int)t->ndim,
                    ts_rt_dtype_name((ts_dtype)t->dtype));
}

static int64_t pk_i64_at(const ts_rt_tensor *t, int64_t k) {
  const int64_t *p = ts_rt_tensor_data(t);
  return p[k * t->strides[0]];
}

/* c10's checked_convert of the fill value to dt, as at::full's fill_ does
 * it: a float must lie in the type's range before truncation (-0.5 does
 * not fit uint8; infinities and NaN fit the float types); an int may wrap
 * into uint8 from below (-1 is 255). */
static bool pk_check_value(ts_rt_ctx *c, ts_iv v, ts_dtype dt) {
  const char *name = NULL;
  double lo = 0, hi = 0;
  switch (dt) {
  case TS_DT_UINT8: name = "uint8_t", lo = 0, hi = 255; break;
  case TS_DT_INT8: name = "int8_t", lo = -128, hi = 127; break;
  case TS_DT_INT16: name = "int16_t", lo = -32768, hi = 32767; break;
  case TS_DT_INT32: name = "int", lo = -2147483648.0, hi = 2147483647.0; break;
  case TS_DT_INT64: name = "int64_t", lo = -9223372036854775808.0, hi = 9223372036854775807.0; break;
  case TS_DT_FLOAT16: name = "at::Half", lo = -65504, hi = 65504; break;
  case TS_DT_BFLOAT16: name = "at::BFloat16", lo = -3.38953139e38, hi = 3.38953139e38; break;
  case TS_DT_FLOAT32: name = "float", lo = -3.4028234663852886e38, hi = 3.4028234663852886e38; break;
  default: return true; /* double and bool take any number */
  }
  bool bad;
  if (v.tag == TS_IV_DOUBLE) {
    double f = v.u.d;
    bool fl = ts_rt_dtype_is_float(dt);
    bad = fl ? isfinite(f) && (f < lo || f > hi) : !(f >= lo && f <= hi);
  } else {
    int64_t i = v.tag == TS_IV_BOOL ? v.u.b : v.u.i;
    bad = (double)i > hi || (dt == TS_DT_UINT8 ? i < -255 : (double)i < lo);
  }
  if (bad) return ts_rt_fail(c, "value cannot be converted to type %s without overflow", name);
  return true;
}

/* New: at::full(sizes, value, dtype), through aten::full's kernel, the
 * value checked first (pk_check_value). */
static ts_rt_tensor *pk_full(ts_rt_ctx *c, int32_t ndim, const int64_t *sizes, ts_dtype dt, ts_iv value) {
  if (!pk_check_value(c, value, dt)) return NULL;
  ts_rt_kernel_fn full = ts_rt_kernel_by_name("aten::full");
  if (!full) {
    ts_rt_fail(c, "no kernel for aten::full");
    return NULL;
  }
  ts_rt_list *l = ts_rt_list_new(c, ts_type_leaf(TS_TY_INT), (uint32_t)ndim);
  if (!l) return NULL;
  ts_iv lv = {.u.l = l, .tag = TS_IV_LIST};
  for (int32_t d = 0; d < ndim; d++)
    if (!ts_rt_list_append(c, l, ts_iv_int(sizes[d]))) {
      ts_iv_release(lv);
      return NULL;
    }
  ts_iv in[6] = {lv, value, ts_iv_int(dt), ts_iv_none(), ts_iv_none(), ts_iv_none()}, out[1];
  ts_rt_call fc = {in, 6, out, 1, NULL};
  bool ok = full(c, &fc);
  ts_iv_release(in[0]);
  return ok ? out[0].u.t : NULL;
}

/* Copies a [n, b, rest...] block of src (element (0, 0) at src_off, steps
 * s0 and s1 on the first two dims, src's own strides after `skip` dims)
 * into dst likewise. */
static bool pk_copy_block(ts_rt_ctx *c, ts_rt_tensor *dst, int64_t dst_off, int64_t d0, int64_t d1,
                          const ts_rt_tensor *src, int64_t src_off, int64_t s0, int64_t s1, int32_t skip, int64_t n,
                          int64_t b) {
  int32_t rest = src->ndim - skip;
  int64_t sz[TS_RT_MAX_DIMS], sst[TS_RT_MAX_DIMS], dst_st[TS_RT_MAX_DIMS];
  sz[0] = n, sz[1] = b;
  sst[0] = s0, sst[1] = s1;
  dst_st[0] = d0, dst_st[1] = d1;
  for (int32_t k = 0; k < rest; k++) {
    sz[2 + k] = src->sizes[skip + k];
    sst[2 + k] = src->strides[skip + k];
    dst_st[2 + k] = dst->strides[dst->ndim - rest + k];
  }
  ts_rt_tensor *sv = ts_rt_tensor_view(c, src, src_off, 2 + rest, sz, sst);
  ts_rt_tensor *dv = sv ? ts_rt_tensor_view(c, dst, dst_off, 2 + rest, sz, dst_st) : NULL;
  bool ok = dv && ts_rt_tensor_copy_(c, dv, sv);
  if (sv) ts_rt_tensor_release(sv);
  if (dv) ts_rt_tensor_release(dv);
  return ok;
}

/* Writes "[a, b, c]" into buf. */
static const char *pk_shape_str(char *buf, size_t cap, int32_t n, const int64_t *s) {
  size_t k = (size_t)snprintf(buf, cap, "[");
  for (int32_t i = 0; i < n && k < cap; i++)
    k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? ", " : "", (long long)s[i]);
  if (k < cap) snprintf(buf + k, cap - k, "]");
  return buf;
}

/* _pack_padded_sequence(input, lengths, batch_first) -> (data, batch_sizes):
 * input [T, B, *] ([B, T, *] when batch_first), lengths [B] decreasing and
 * positive. batch_sizes has lengths[0] entries; data the rows of the steps
 * input has (a length past T packs nothing for the steps after T, as
 * PyTorch's clamped slices do). */
static bool pk_k_pack(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x = NULL, *lt = NULL;
  bool bf = false;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_tensor(c, call, 1, &lt) || !ts_rt_arg_bool(c, call, 2, &bf))
    return false;
  /* ATen's order: transpose(0, 1), the lengths' check, input.size(1) */
  if (bf && x->ndim < 2)
    return ts_rt_fail(c, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  if (!pk_check_long(c, lt)) return false;
  if (x->ndim == 0) return ts_rt_fail(c, "Dimension specified as 1 but tensor has no dimensions");
  if (x->ndim == 1) return ts_rt_fail(c, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  int32_t td = bf ? 1 : 0, bd = bf ? 0 : 1;
  int64_t T = x->sizes[td], B = x->sizes[bd];
  if (ts_rt_tensor_numel(x) == 0) return ts_rt_fail(c, "Cannot pack empty tensors.");
  if (lt->sizes[0] != B)
    return ts_rt_fail(c, "Expected `len(lengths)` to be equal to batch_size, but got %lld (batch_size=%lld)",
                      (long long)lt->sizes[0], (long long)B);
  if (pk_i64_at(lt, B - 1) <= 0)
    return ts_rt_fail(c, "Length of all samples has to be greater than 0, but found an element in 'lengths' that is "
                         "<= 0");
  for (int64_t i = 0; i + 1 < B; i++)
    if (pk_i64_at(lt, B - 1 - i) > pk_i64_at(lt, B - 2 - i))
      return ts_rt_fail(c, "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can "
                           "pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.");
  int64_t steps = pk_i64_at(lt, 0);
  ts_rt_tensor *bst = ts_rt_tensor_new(c, TS_DT_INT64, 1, &steps, false);
  if (!bst) return false;
  /* batch size at step t: the elements longer than t (a pointer walks down
   * the sorted lengths); rows: those of the steps input has */
  int64_t *bs = ts_rt_tensor_data(bst), k = B, rows = 0;
  for (int64_t t = 0; t < steps; t++) {
    while (k > 0 && pk_i64_at(lt, k - 1) <= t) k--;
    bs[t] = k;
    if (t < T) rows += k;
  }
  int64_t dsz[TS_RT_MAX_DIMS];
  dsz[0] = rows;
  for (int32_t d = 2; d < x->ndim; d++) dsz[d - 1] = x->sizes[d];
  ts_rt_tensor *data = ts_rt_tensor_new(c, (ts_dtype)x->dtype, x->ndim - 1, dsz, false);
  if (!data) {
    ts_rt_tensor_release(bst);
    return false;
  }
  /* one copy per run of steps with the same batch size */
  int64_t rowsz = 1, off = 0;
  for (int32_t d = 2; d < x->ndim; d++) rowsz *= x->sizes[d];
  int64_t tend = steps < T ? steps : T;
  for (int64_t t0 = 0; t0 < tend;) {
    int64_t t1 = t0 + 1;
    while (t1 < tend && bs[t1] == bs[t0]) t1++;
    if (!pk_copy_block(c, data, off * rowsz, bs[t0] * rowsz, rowsz, x, x->offset + t0 * x->strides[td],
                       x->strides[td], x->strides[bd], 2, t1 - t0, bs[t0])) {
      ts_rt_tensor_release(bst);
      ts_rt_tensor_release(data);
      return false;
    }
    off += (t1 - t0) * bs[t0];
    t0 = t1;
  }
  call->out[0] = ts_iv_tensor(data);
  call->out[1] = ts_iv_tensor(bst);
  return true;
}

/* _pad_packed_sequence(data, batch_sizes, batch_first, padding_value,
 * total_length) -> (padded, lengths): padded [max(T, total_length), B, *]
 * filled with padding_value (a transposed view when batch_first), lengths
 * [B] int64. */
static bool pk_k_pad(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *data = NULL, *bst = NULL;
  bool bf = false;
  int64_t total = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &data) || !ts_rt_arg_tensor(c, call, 1, &bst) ||
      !ts_rt_arg_bool(c, call, 2, &bf) || !ts_rt_arg_check(c, call, 3) || !ts_rt_arg_int(c, call, 4, &total))
    return false;
  ts_iv value = call->in[3];
  if (value.tag != TS_IV_INT && value.tag != TS_IV_DOUBLE && value.tag != TS_IV_BOOL)
    return ts_rt_arg_bad(c, call, 3, "Scalar");
  if (!pk_check_long(c, bst)) return false;
  int64_t T = bst->sizes[0];
  /* PyTorch reads batch_sizes[0] unchecked; and it writes past lengths
   * when the batch sizes grow or go negative: refused here. */
  if (T == 0) return ts_rt_fail(c, "_pad_packed_sequence: batch_sizes must not be empty");
  if (data->ndim == 0) return ts_rt_fail(c, "_pad_packed_sequence: data must have at least one dimension");
  if (data->ndim + 1 > TS_RT_MAX_DIMS) return ts_rt_fail(c, "_pad_packed_sequence: data has too many dimensions");
  int64_t B = pk_i64_at(bst, 0);
  for (int64_t t = 0; t < T; t++) {
    int64_t b = pk_i64_at(bst, t);
    if (b < 0 || b > (t ? pk_i64_at(bst, t - 1) : B))
      return ts_rt_fail(c, "_pad_packed_sequence: batch_sizes must be non-negative and non-increasing, got %lld "
                           "after %lld",
                        (long long)b, (long long)(t ? pk_i64_at(bst, t - 1) : b));
  }
  int64_t Tout = T;
  if (total > 0) {
    if (total < T)
      return ts_rt_fail(c, "Expected total_length to be at least the length of the longest sequence in input, but got "
                           "total_length=%lld and max sequence length being %lld",
                        (long long)total, (long long)T);
    Tout = total;
  }
  int64_t osz[TS_RT_MAX_DIMS];
  osz[0] = Tout, osz[1] = B;
  for (int32_t d = 1; d < data->ndim; d++) osz[d + 1] = data->sizes[d];
  int64_t lsz[1] = {B};
  ts_rt_tensor *out = pk_full(c, data->ndim + 1, osz, (ts_dtype)data->dtype, value);
  ts_rt_tensor *lens = out ? ts_rt_tensor_new(c, TS_DT_INT64, 1, lsz, false) : NULL;
  bool ok = lens != NULL;
  int64_t rowsz = 1, N = data->sizes[0], doff = 0;
  for (int32_t d = 1; ok && d < data->ndim; d++)
    if (__builtin_mul_overflow(rowsz, data->sizes[d], &rowsz)) ok = ts_rt_oom(c);
  /* runs of steps with one batch size, as ATen copies them: a run needing
   * rows that data lacks fails as its view would */
  for (int64_t t0 = 0; ok && t0 < T;) {
    int64_t b = pk_i64_at(bst, t0), t1 = t0 + 1;
    while (t1 < T && pk_i64_at(bst, t1) == b) t1++;
    int64_t need, end;
    if (__builtin_mul_overflow(t1 - t0, b, &need) || __builtin_add_overflow(doff, need, &end)) {
      ok = ts_rt_oom(c);
      break;
    }
    int64_t have = N - doff < need ? (N - doff > 0 ? N - doff : 0) : need;
    if (have != need && rowsz != 0) {
      char buf[256];
      int64_t vs[TS_RT_MAX_DIMS];
      vs[0] = t1 - t0, vs[1] = b;
      for (int32_t d = 1; d < data->ndim; d++) vs[d + 1] = data->sizes[d];
      ok = ts_rt_fail(c, "shape '%s' is invalid for input of size %lld",
                      pk_shape_str(buf, sizeof buf, data->ndim + 1, vs), (long long)(have * rowsz));
      break;
    }
    if (need > 0)
      ok = pk_copy_block(c, out, t0 * B * rowsz, B * rowsz, rowsz, data, data->offset + doff * data->strides[0],
                         b * data->strides[0], data->strides[0], 1, t1 - t0, b);
    doff = end;
    t0 = t1;
  }
  if (ok) {
    /* lengths[j]: the steps whose batch holds element j */
    int64_t *l = ts_rt_tensor_data(lens), k = T;
    for (int64_t j = 0; j < B; j++) {
      while (k > 0 && pk_i64_at(bst, k - 1) <= j) k--;
      l[j] = k;
    }
  }
  if (ok && bf) {
    ts_rt_tensor *tr = ts_rt_transpose(c, out, 0, 1);
    ts_rt_tensor_release(out);
    out = tr;
    ok = tr != NULL;
  }
  if (!ok) {
    if (out) ts_rt_tensor_release(out);
    if (lens) ts_rt_tensor_release(lens);
    return false;
  }
  call->out[0] = ts_iv_tensor(out);
  call->out[1] = ts_iv_tensor(lens);
  return true;
}

/* pad_sequence(sequences, batch_first, padding_value): the sequences [L_i, *]
 * stacked into [max L, n, *] ([n, max L, *] when batch_first), padded; the
 * first sequence gives the dtype and the trailing sizes, the others are
 * copied in with copy_'s broadcasting and conversion. */
static bool pk_k_pad_sequence(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_list *l = NULL;
  bool bf = false;
  double pad = 0;
  if (!ts_rt_arg_list(c, call, 0, &l) || !ts_rt_arg_bool(c, call, 1, &bf) || !ts_rt_arg_double(c, call, 2, &pad))
    return false;
  if (l->n == 0) return ts_rt_fail(c, "received an empty list of sequences");
  int64_t maxlen = 0;
  for (uint32_t i = 0; i < l->n; i++) {
    if (l->items[i].tag != TS_IV_TENSOR) return ts_rt_fail(c, "pad_sequence: expected a list of tensors");
    const ts_rt_tensor *s = l->items[i].u.t;
    if (s->ndim == 0) return ts_rt_fail(c, "Dimension specified as 0 but tensor has no dimensions");
    if (s->sizes[0] > maxlen) maxlen = s->sizes[0];
  }
  const ts_rt_tensor *s0 = l->items[0].u.t;
  if (s0->ndim + 1 > TS_RT_MAX_DIMS) return ts_rt_fail(c, "pad_sequence: sequences have too many dimensions");
  int64_t osz[TS_RT_MAX_DIMS];
  osz[0] = bf ? (int64_t)l->n : maxlen;
  osz[1] = bf ? maxlen : (int64_t)l->n;
  for (int32_t d = 1; d < s0->ndim; d++) osz[d + 1] = s0->sizes[d];
  ts_rt_tensor *out = pk_full(c, s0->ndim + 1, osz, (ts_dtype)s0->dtype, ts_iv_double(pad));
  bool ok = out != NULL;
  for (uint32_t i = 0; ok && i < l->n; i++) {
    const ts_rt_tensor *s = l->items[i].u.t;
    /* out.select(0, i).narrow(0, 0, L_i), or out.narrow(0, 0, L_i).select(1, i) */
    int64_t vs[TS_RT_MAX_DIMS], vst[TS_RT_MAX_DIMS];
    vs[0] = s->sizes[0];
    vst[0] = out->strides[bf ? 1 : 0];
    for (int32_t d = 2; d < out->ndim; d++) vs[d - 1] = out->sizes[d], vst[d - 1] = out->strides[d];
    int64_t at = out->offset + (int64_t)i * out->strides[bf ? 0 : 1];
    ts_rt_tensor *dv = ts_rt_tensor_view(c, out, at, out->ndim - 1, vs, vst);
    ok = dv && ts_rt_tensor_copy_(c, dv, s);
    if (dv) ts_rt_tensor_release(dv);
  }
  if (!ok) {
    if (out) ts_rt_tensor_release(out);
    return false;
  }
  call->out[0] = ts_iv_tensor(out);
  return true;
}

const ts_rt_kernel_def ts_rt_kernels_packed[] = {
    {"aten::_pack_padded_sequence", pk_k_pack},
    {"aten::_pad_packed_sequence", pk_k_pad},
    {"aten::pad_sequence", pk_k_pad_sequence},
    {NULL, NULL},
};
