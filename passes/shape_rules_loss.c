/* passes/shape_rules_loss.c: shape rules of the loss functions, the
 * distances (pairwise_distance, pdist) and bilinear
 * (runtime/kernels/loss.c), and of max_unpool2d/3d and embedding_renorm
 * (runtime/kernels/unpool.c).
 *
 * A reduced loss (reduction 1 mean or 2 sum, a constant) is a 0-d tensor;
 * an unreduced one has the shape ATen gives it: the broadcast of the
 * operands for the elementwise losses, the input without its class
 * dimension for nll_loss and cross_entropy_loss, one value per sample for
 * the margin losses. The dtype is claimed only where the operands' dtypes
 * are known, floating and the same (then it is theirs); results are new
 * contiguous tensors. */
#include "shape_rules.h"

#include <string.h>

/* The loss's dtype from tensor inputs in[0..n): theirs when all known and
 * equal, else unknown. */
static int8_t srl_dtype(const ts_sr_shape *in, uint32_t n) {
  int8_t dt = in[0].dtype;
  /* integer operands: l1_loss's sum is int64, the others refuse them */
  if (dt == TS_DT_NONE || !ts_dtype_is_float((ts_dtype)dt))
    return TS_DT_NONE;
  for (uint32_t k = 1; k < n; k++)
    if (in[k].dtype != dt)
      return TS_DT_NONE;
  return dt;
}

/* Sets output 0 to a new tensor of `rank` sizes (rank -1: unknown) and
 * dtype dt, computed from in[0..n). */
static void srl_set(ts_sr_call *c, const ts_sr_shape *in, uint32_t n, int32_t rank, const int64_t *sizes, int8_t dt) {
  ts_sr_shape out;
  ts_sr_unknown(&out);
  out.dtype = dt;
  if (rank >= 0) {
    out.rank = rank;
    if (rank)
      memcpy(out.sizes, sizes, (size_t)rank * sizeof *sizes);
    ts_sr_contiguous(&out);
  }
  const ts_sr_shape *m[4];
  for (uint32_t k = 0; k < n && k < 4; k++)
    m[k] = &in[k];
  ts_sr_meta_from(&out, m, n < 4 ? n : 4);
  ts_sr_set(c, 0, &out);
}

/* The reduction argument: 1 reduced, 0 not, -1 unknown. */
static int srl_reduced(const ts_sr_call *c, uint32_t arg) {
  int64_t red;
  if (!ts_sr_int(c, arg, &red))
    return -1;
  return red == 1 || red == 2;
}

/* The elementwise losses: tensors 0..n-1 broadcast, reduction at red_arg. */
static void srl_elementwise(ts_sr_call *c, uint32_t n, uint32_t red_arg) {
  ts_sr_shape in[3];
  for (uint32_t k = 0; k < n; k++)
    if (!ts_sr_tensor(c, k, &in[k]))
      return;
  int r = srl_reduced(c, red_arg);
  int8_t dt = srl_dtype(in, n);
  if (r == 1) {
    srl_set(c, in, n, 0, NULL, dt);
    return;
  }
  ts_sr_shape b = in[0];
  for (uint32_t k = 1; k < n; k++)
    if (!ts_sr_broadcast(&b, &in[k]))
      return;
  srl_set(c, in, n, r == 0 ? b.rank : -1, b.sizes, dt);
}

static void srl_binary_red2(ts_sr_call *c) { srl_elementwise(c, 2, 2); }
static void srl_binary_red3(ts_sr_call *c) { srl_elementwise(c, 2, 3); }
static void srl_margin_ranking(ts_sr_call *c) { srl_elementwise(c, 3, 4); }
static void srl_poisson(ts_sr_call *c) { srl_elementwise(c, 2, 5); }

/* (self, target, weight, [pos_weight,] reduction): self's dtype; the
 * unreduced loss is self's shape broadcast with the others */
static void srl_bce(ts_sr_call *c) {
  bool logits = c->node->kind == TS_K_aten_binary_cross_entropy_with_logits;
  srl_elementwise(c, 2, logits ? 4 : 3);
}

/* nll_loss & co and cross_entropy_loss (self, target, weight, reduction,
 * ...): reduced, or self without its class dimension (1-d self: 0-d) */
static void srl_nll(ts_sr_call *c) {
  ts_sr_shape x;
  if (!ts_sr_tensor(c, 0, &x))
    return;
  int r = srl_reduced(c, 3);
  if (r == 1) {
    srl_set(c, &x, 1, 0, NULL, x.dtype);
    return;
  }
  if (r != 0 || x.rank < 1) {
    srl_set(c, &x, 1, -1, NULL, x.dtype);
    return;
  }
  int64_t sz[TS_SR_MAX_RANK];
  int32_t rank = 0;
  if (x.rank >= 2) {
    sz[rank++] = x.sizes[0];
    for (int32_t i = 2; i < x.rank; i++)
      sz[rank++] = x.sizes[i];
  }
  srl_set(c, &x, 1, rank, sz, x.dtype);
}

/* multi_margin_loss(self, target, p, margin, weight, reduction): one value
 * per target element (0-d target: 0-d); multilabel_margin_loss(self,
 * target, reduction): one per row of a 2-d self */
static void srl_multi_margin(ts_sr_call *c) {
  ts_sr_shape x, t;
  if (!ts_sr_tensor(c, 0, &x) || !ts_sr_tensor(c, 1, &t))
    return;
  bool multilabel = c->node->kind == TS_K_aten_multilabel_margin_loss;
  int r = srl_reduced(c, multilabel ? 2 : 5);
  int64_t n = x.rank == 2 ? x.sizes[0] : 1;
  int32_t rank = -1;
  if (r == 1)
    rank = 0;
  else if (r == 0 && multilabel && x.rank >= 0)
    rank = x.rank == 2 ? 1 : 0;
  else if (r == 0 && !multilabel && t.rank >= 0)
    rank = t.rank > 0 ? 1 : 0;
  srl_set(c, &x, 1, rank, &n, x.dtype);
}

/* cosine_embedding_loss(input1, input2, target, margin, reduction): target's
 * shape unreduced */
static void srl_cosine_embedding(ts_sr_call *c) {
  ts_sr_shape in[3];
  for (uint32_t k = 0; k < 3; k++)
    if (!ts_sr_tensor(c, k, &in[k]))
      return;
  int r = srl_reduced(c, 4);
  int8_t dt = srl_dtype(in, 2);
  if (r == 1)
    srl_set(c, in, 3, 0, NULL, dt);
  else
    srl_set(c, in, 3, r == 0 && in[2].rank == 0 ? 0 : -1, NULL, dt);
}

/* The broadcast of two inputs without the last dimension (kept as 1 with
 * keepdim): pairwise_distance's norm over the innermost dimension. */
static bool srl_pairwise_shape(const ts_sr_call *c, uint32_t a, uint32_t b, bool keepdim, ts_sr_shape *out) {
  ts_sr_shape x, y;
  if (!ts_sr_tensor(c, a, &x) || !ts_sr_tensor(c, b, &y))
    return false;
  *out = x;
  if (!ts_sr_broadcast(out, &y))
    return false;
  out->dtype = srl_dtype((ts_sr_shape[2]){x, y}, 2);
  if (out->rank > 0) {
    if (keepdim)
      out->sizes[out->rank - 1] = 1;
    else
      out->rank--;
  }
  return true;
}

/* pairwise_distance(x1, x2, p, eps, keepdim) */
static void srl_pairwise(ts_sr_call *c) {
  bool keepdim;
  ts_sr_shape out, in[2];
  if (!ts_sr_bool(c, 4, &keepdim) || !ts_sr_tensor(c, 0, &in[0]) || !ts_sr_tensor(c, 1, &in[1]) ||
      !srl_pairwise_shape(c, 0, 1, keepdim, &out))
    return;
  srl_set(c, in, 2, out.rank, out.sizes, out.dtype);
}

/* triplet_margin_loss(anchor, positive, negative, ..., reduction at 7) */
static void srl_triplet(ts_sr_call *c) {
  ts_sr_shape in[3], out;
  for (uint32_t k = 0; k < 3; k++)
    if (!ts_sr_tensor(c, k, &in[k]))
      return;
  int r = srl_reduced(c, 7);
  int8_t dt = srl_dtype(in, 3);
  if (r == 1) {
    srl_set(c, in, 3, 0, NULL, dt);
    return;
  }
  if (r == 0 && srl_pairwise_shape(c, 0, 1, false, &out)) {
    ts_sr_shape n;
    if (srl_pairwise_shape(c, 0, 2, false, &n) && ts_sr_broadcast(&out, &n)) {
      srl_set(c, in, 3, out.rank, out.sizes, dt);
      return;
    }
  }
  srl_set(c, in, 3, -1, NULL, dt);
}

/* pdist(self [N, M], p) -> [N * (N - 1) / 2] */
static void srl_pdist(ts_sr_call *c) {
  ts_sr_shape x;
  if (!ts_sr_tensor(c, 0, &x))
    return;
  int64_t n = -1;
  if (x.rank == 2 && x.sizes[0] >= 0) {
    int64_t m;
    if (x.sizes[0] < 2)
      n = 0;
    else if (ts_sr_mul(x.sizes[0], x.sizes[0] - 1, &m))
      n = m / 2;
  }
  srl_set(c, &x, 1, x.rank == 2 ? 1 : -1, &n, x.dtype);
}

/* bilinear(input1 [..., I1], input2 [..., I2], weight [O, I1, I2], bias)
 * -> [..., O] */
static void srl_bilinear(ts_sr_call *c) {
  ts_sr_shape in[3];
  for (uint32_t k = 0; k < 3; k++)
    if (!ts_sr_tensor(c, k, &in[k]))
      return;
  int8_t dt = srl_dtype(in, 3);
  if (in[0].rank < 1 || in[2].rank != 3) {
    srl_set(c, in, 3, -1, NULL, dt);
    return;
  }
  int64_t sz[TS_SR_MAX_RANK];
  memcpy(sz, in[0].sizes, (size_t)in[0].rank * sizeof *sz);
  sz[in[0].rank - 1] = in[2].sizes[0];
  srl_set(c, in, 3, in[0].rank, sz, dt);
}

/* ctc_loss(log_probs [T, N, C] or [T, C], ..., reduction at 5): [N] (0-d
 * unbatched) unreduced */
static void srl_ctc(ts_sr_call *c) {
  ts_sr_shape x;
  if (!ts_sr_tensor(c, 0, &x))
    return;
  int r = srl_reduced(c, 5);
  int8_t dt = srl_dtype(&x, 1);
  int64_t n = x.rank == 3 ? x.sizes[1] : -1;
  int32_t rank = r == 1 ? 0 : r == 0 && (x.rank == 2 || x.rank == 3) ? x.rank - 2 : -1;
  srl_set(c, &x, 1, rank, &n, dt);
}

/* _ctc_loss(log_probs [T, N, C], ...) -> ([N], [N, T, 2 * max_len + 1]) */
static void srl__ctc(ts_sr_call *c) {
  ts_sr_shape x, out;
  if (!ts_sr_tensor(c, 0, &x))
    return;
  ts_sr_unknown(&out);
  out.dtype = srl_dtype(&x, 1);
  const ts_sr_shape *m[1] = {&x};
  ts_sr_meta_from(&out, m, 1);
  if (x.rank == 3) {
    out.rank = 1;
    out.sizes[0] = x.sizes[1];
    ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
  if (x.rank == 3) {
    out.rank = 3;
    out.sizes[0] = x.sizes[1], out.sizes[1] = x.sizes[0], out.sizes[2] = -1;
    out.has_strides = false;
  }
  ts_sr_set(c, 1, &out);
}

/* max_unpool2d(self, indices, output_size[2]) and max_unpool3d(...,
 * output_size[3], stride, padding): self with its last 2 (3) sizes the
 * output size's */
static void srl_max_unpool(ts_sr_call *c) {
  ts_sr_shape x;
  if (!ts_sr_tensor(c, 0, &x))
    return;
  int32_t k = c->node->kind == TS_K_aten_max_unpool2d ? 2 : 3, n = 0;
  int64_t osz[3];
  if (x.rank != k + 1 && x.rank != k + 2) {
    srl_set(c, &x, 1, -1, NULL, x.dtype);
    return;
  }
  int64_t sz[5];
  memcpy(sz, x.sizes, (size_t)x.rank * sizeof *sz);
  if (ts_sr_int_list(c, 2, osz, &n, 3) && n == k)
    memcpy(sz + x.rank - k, osz, (size_t)k * sizeof *osz);
  else
    for (int32_t i = x.rank - k; i < x.rank; i++)
      sz[i] = -1;
  srl_set(c, &x, 1, x.rank, sz, x.dtype);
}

/* embedding_renorm(self, indices, max_norm, norm_type): self's sizes */
static void srl_embedding_renorm(ts_sr_call *c) {
  ts_sr_shape x;
  if (!ts_sr_tensor(c, 0, &x))
    return;
  srl_set(c, &x, 1, x.rank, x.sizes, x.dtype);
}

const ts_sr_def ts_sr_rules_loss[] = {
    {"aten::_ctc_loss", srl__ctc},
    {"aten::_ctc_loss.Tensor", srl__ctc},
    {"aten::_pdist_forward", srl_pdist},
    {"aten::bilinear", srl_bilinear},
    {"aten::binary_cross_entropy", srl_bce},
    {"aten::binary_cross_entropy_with_logits", srl_bce},
    {"aten::cosine_embedding_loss", srl_cosine_embedding},
    {"aten::cross_entropy_loss", srl_nll},
    {"aten::ctc_loss.IntList", srl_ctc},
    {"aten::ctc_loss.Tensor", srl_ctc},
    {"aten::embedding_renorm", srl_embedding_renorm},
    {"aten::hinge_embedding_loss", srl_binary_red3},
    {"aten::huber_loss", srl_binary_red2},
    {"aten::kl_div", srl_binary_red2},
    {"aten::l1_loss", srl_binary_red2},
    {"aten::margin_ranking_loss", srl_margin_ranking},
    {"aten::max_unpool2d", srl_max_unpool},
    {"aten::max_unpool3d", srl_max_unpool},
    {"aten::mse_loss", srl_binary_red2},
    {"aten::multi_margin_loss", srl_multi_margin},
    {"aten::multilabel_margin_loss", srl_multi_margin},
    {"aten::nll_loss", srl_nll},
    {"aten::nll_loss2d", srl_nll},
    {"aten::nll_loss_nd", srl_nll},
    {"aten::pairwise_distance", srl_pairwise},
    {"aten::pdist", srl_pdist},
    {"aten::poisson_nll_loss", srl_poisson},
    {"aten::smooth_l1_loss", srl_binary_red2},
    {"aten::soft_margin_loss", srl_binary_red2},
    {"aten::triplet_margin_loss", srl_triplet},
    {NULL, NULL},
};
