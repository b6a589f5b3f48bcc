/* passes/shape_rules_packed.c: shape rules of packed sequences
 * (_pack_padded_sequence, _pad_packed_sequence, pad_sequence; kernels:
 * runtime/kernels/packed.c) and of the recurrent layers' .data overloads,
 * which run over a PackedSequence (runtime/kernels/rnn.c).
 *
 * A packed tensor's row count and a padded one's batch and time sizes are
 * values in the lengths, not sizes of any input: they stay unknown here,
 * and only ranks, dtypes and the trailing sizes are claimed. */
#include "shape_rules.h"

#include <string.h>

/* out: the device and requires_grad of `from`, a fresh result of `rank`
 * dims whose sizes the caller fills (unknown until then), no strides. */
static void sr_pk_fresh(ts_sr_shape *out, const ts_sr_shape *from, int8_t dtype, int32_t rank) {
  ts_sr_unknown(out);
  const ts_sr_shape *m[1] = {from};
  ts_sr_meta_from(out, m, 1);
  out->dtype = dtype;
  out->rank = rank;
  for (int32_t d = 0; d < (rank > 0 ? rank : 0); d++)
    out->sizes[d] = -1;
}

/* _pack_padded_sequence(input [T, B, *], lengths, batch_first) ->
 * (data [N, *], batch_sizes [lengths[0]] int64) */
static void sr_pack(ts_sr_call *c) {
  ts_sr_shape x, l, data, bs;
  if (!ts_sr_tensor(c, 0, &x) || !ts_sr_tensor(c, 1, &l))
    return;
  sr_pk_fresh(&data, &x, x.dtype, x.rank >= 2 ? x.rank - 1 : -1);
  for (int32_t d = 2; d < x.rank; d++)
    data.sizes[d - 1] = x.sizes[d];
  sr_pk_fresh(&bs, &l, TS_DT_INT64, 1);
  ts_sr_set(c, 0, &data);
  ts_sr_set(c, 1, &bs);
}

/* _pad_packed_sequence(data [N, *], batch_sizes [T], batch_first,
 * padding_value, total_length) -> (padded [max(T, total_length), B, *] or
 * its transpose, lengths [B] int64) */
static void sr_pad(ts_sr_call *c) {
  ts_sr_shape d, b, out, lens;
  if (!ts_sr_tensor(c, 0, &d) || !ts_sr_tensor(c, 1, &b))
    return;
  bool bf = false, bf_known = ts_sr_bool(c, 2, &bf);
  int64_t total = 0;
  sr_pk_fresh(&out, &d, d.dtype, d.rank >= 1 && d.rank < TS_SR_MAX_RANK ? d.rank + 1 : -1);
  if (out.rank >= 0) {
    for (int32_t k = 1; k < d.rank; k++)
      out.sizes[k + 1] = d.sizes[k];
    int64_t steps = b.rank == 1 ? b.sizes[0] : -1;
    if (steps >= 0 && ts_sr_int(c, 4, &total) && bf_known)
      out.sizes[bf ? 1 : 0] = total > steps ? total : steps;
    if (!bf_known)
      out.rank = -1; /* which of the first two dims is time is not known */
  }
  sr_pk_fresh(&lens, &b, TS_DT_INT64, 1);
  ts_sr_set(c, 0, &out);
  ts_sr_set(c, 1, &lens);
}

/* pad_sequence(sequences [L_i, *], batch_first, padding_value) ->
 * [max L_i, n, *] (batch_first: [n, max L_i, *]), the first sequence's
 * dtype and trailing sizes, contiguous */
static void sr_pad_sequence(ts_sr_call *c) {
  ts_sr_shape seq[16], out;
  uint32_t n = 0;
  bool bf = false;
  if (!ts_sr_tensor_list(c, 0, seq, &n, 16) || n == 0 || !ts_sr_bool(c, 1, &bf))
    return;
  if (seq[0].rank < 1 || seq[0].rank >= TS_SR_MAX_RANK)
    return;
  int64_t maxlen = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (seq[i].rank < 1)
      return; /* unknown, or a 0-d sequence that fails at run time */
    if (seq[i].sizes[0] < 0)
      maxlen = -1;
    else if (maxlen >= 0 && seq[i].sizes[0] > maxlen)
      maxlen = seq[i].sizes[0];
  }
  const ts_sr_shape *m[16];
  for (uint32_t i = 0; i < n; i++)
    m[i] = &seq[i];
  ts_sr_unknown(&out);
  ts_sr_meta_from(&out, m, n);
  out.dtype = seq[0].dtype;
  out.rank = seq[0].rank + 1;
  out.sizes[bf ? 1 : 0] = maxlen;
  out.sizes[bf ? 0 : 1] = (int64_t)n;
  for (int32_t k = 1; k < seq[0].rank; k++)
    out.sizes[k + 1] = seq[0].sizes[k];
  ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

/* {lstm,gru,rnn_tanh,rnn_relu}.data(data [N, I], batch_sizes, hx, params,
 * has_biases, num_layers, dropout, train, bidirectional) -> (output
 * [N, D * hidden], h_n[, c_n]): h_n and c_n have hx's shapes, data's dtype */
static void sr_rnn_data(ts_sr_call *c) {
  ts_sr_shape x, h[2], out;
  if (!ts_sr_tensor(c, 0, &x))
    return;
  uint32_t nh = 0;
  if (c->node->kind == TS_K_aten_lstm) {
    if (!ts_sr_tensor_list(c, 2, h, &nh, 2) || nh != 2)
      return;
  } else {
    if (!ts_sr_tensor(c, 2, &h[0]))
      return;
    nh = 1;
  }
  bool bidir = false;
  sr_pk_fresh(&out, &x, x.dtype, x.rank == 2 ? 2 : -1);
  if (out.rank == 2) {
    out.sizes[0] = x.sizes[0];
    int64_t hid = h[0].rank >= 1 ? h[0].sizes[h[0].rank - 1] : -1;
    if (hid < 0 || !ts_sr_bool(c, 8, &bidir) || !ts_sr_mul(hid, bidir ? 2 : 1, &out.sizes[1]))
      out.sizes[1] = -1;
    ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
  for (uint32_t k = 0; k < nh; k++) {
    ts_sr_shape s;
    sr_pk_fresh(&s, &h[k], x.dtype != TS_DT_NONE ? x.dtype : h[k].dtype, h[k].rank);
    if (h[k].rank > 0)
      memcpy(s.sizes, h[k].sizes, (size_t)h[k].rank * sizeof *s.sizes);
    ts_sr_contiguous(&s);
    ts_sr_set(c, 1 + k, &s);
  }
}

const ts_sr_def ts_sr_rules_packed[] = {
    {"aten::_pack_padded_sequence", sr_pack},
    {"aten::_pad_packed_sequence", sr_pad},
    {"aten::pad_sequence", sr_pad_sequence},
    {"aten::lstm.data", sr_rnn_data},
    {"aten::gru.data", sr_rnn_data},
    {"aten::rnn_tanh.data", sr_rnn_data},
    {"aten::rnn_relu.data", sr_rnn_data},
    {NULL, NULL},
};
