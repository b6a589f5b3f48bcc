/* passes/fold_conv_bn.c: torch::jit::FoldFrozenConvBatchnorm
 * (passes/frozen_conv_folding.cpp, computeUpdatedConvWeightAndBias of
 * fold_conv_bn.cpp) and FoldFrozenLinearBatchnorm
 * (passes/frozen_linear_folding.cpp, fold_linear_bn.cpp), in one walk.
 *
 * aten::batch_norm whose input comes from aten::conv1d/conv2d/conv3d, or
 * aten::_convolution with a constant transposed=False, or aten::linear,
 * folds into that node when
 *   - the conv/linear weight and bias and batch_norm's weight, bias,
 *     running_mean, running_var, training and eps are prim::Constants, the
 *     tensors with their data (a graph read from text has none: it does
 *     not fold). PyTorch asks every input but the first to be a constant
 *     (nonConstantParameters), which after its constant propagation the
 *     stride and padding lists are; the fold does not read those, and here
 *     they need not be (lists become constants only where alias analysis
 *     says nothing writes them);
 *   - batch_norm's `training` is the constant False (PyTorch folds frozen
 *     graphs of eval() modules only; here the argument is checked);
 *   - the conv/linear output has no other use;
 *   - running_mean and running_var are tensors of the weight's output
 *     channels (weight.size(0)), and so are the conv/linear bias and the
 *     batch_norm weight and bias where they are not None;
 *   - all those tensors have the weight's floating dtype (PyTorch would
 *     promote mixed dtypes; such graphs are left alone here).
 * Then, with s = bn_w / sqrt(running_var + eps) per output channel:
 *   weight' = weight * s (broadcast over each output channel's slice)
 *   bias'   = (bias - running_mean) * s + bn_b
 * computed op by op as PyTorch's formulas order them, each result rounded to
 * the weight's dtype (PyTorch computes in that dtype). The new weight and
 * bias are tensor constants (contiguous, data in the graph's arena) placed
 * before the conv/linear and named "<weight name>_fused_bn" and "<bias
 * name>_fused_bn"; the batch_norm's uses read the conv/linear output
 * instead. If anything folded, dead code elimination runs on the whole
 * graph (PyTorch runs it every time). */
#include "passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A prim::Constant's tensor with its bytes, or NULL. */
static const ts_tconst *fb_tensor(const ts_value *v) {
  if (!ts_node_is(v->node, TS_K_prim_Constant))
    return NULL;
  const ts_attr *a = ts_node_attr(v->node, "value");
  if (!a || a->kind != TS_ATTR_TENSOR || !a->u.t || a->u.t->rank < 0)
    return NULL;
  const ts_tconst *t = a->u.t;
  return t->data || ts_tconst_numel(t) == 0 ? t : NULL;
}

static bool fb_is_none(const ts_value *v) {
  ts_cval c;
  return ts_pass_const_get(v, &c) && c.kind == TS_CV_NONE;
}


/* supportedConvNode, plus aten::linear (*linear set). */
static bool fb_supported(const ts_node *n, bool *linear) {
  *linear = false;
  /* by name: conv3d has no entry in the op table yet */
  if (strcmp(n->kind_name, "aten::conv3d") == 0)
    return n->ninputs == 7;
  switch (n->kind) {
  case TS_K_aten_conv1d:
  case TS_K_aten_conv2d: return n->ninputs == 7;
  case TS_K_aten__convolution: {
    bool transposed = true;
    return (n->ninputs == 12 || n->ninputs == 13) && ts_pass_const_bool(n->inputs[6], &transposed) && !transposed;
  }
  case TS_K_aten_linear: *linear = true; return n->ninputs == 3;
  default: return false;
  }
}

static bool fb_float_dtype(int dt) {
  return dt == TS_DT_FLOAT32 || dt == TS_DT_FLOAT64 || dt == TS_DT_FLOAT16 || dt == TS_DT_BFLOAT16;
}

/* A per-channel tensor: rank 1, `c` elements, dtype dt. NULL-safe. */
static bool fb_channel_vec(const ts_tconst *t, int64_t c, int dt) {
  return t && t->rank == 1 && t->sizes[0] == c && t->dtype == dt;
}

/* Rounds to the dtype the computation is in (results of float ops on
 * floats of that dtype, computed in double, round exactly as the op in the
 * narrower type would). */
static double fb_round(int dt, double x) {
  switch (dt) {
  case TS_DT_FLOAT32: return (double)(float)x;
  case TS_DT_FLOAT16: return ts_rt_half_to_float(ts_rt_float_to_half((float)x));
  case TS_DT_BFLOAT16: return ts_rt_bf16_to_float(ts_rt_float_to_bf16((float)x));
  default: return x;
  }
}

/* Element i of a rank-1 constant (or `dflt` when t is NULL). */
static double fb_at(const ts_tconst *t, int64_t i, double dflt) {
  if (!t)
    return dflt;
  int64_t stride = t->strides ? t->strides[0] : 1;
  size_t es = ts_dtype_size((ts_dtype)t->dtype);
  return ts_rt_load_f64((const char *)t->data + (size_t)(i * stride) * es, (ts_dtype)t->dtype);
}

/* A new contiguous tensor constant with the given sizes and data, before
 * `pos`, named `base` + "_fused_bn". */
static ts_value *fb_insert(ts_node *pos, int dt, int32_t rank, const int64_t *sizes, void *data, const ts_value *base) {
  ts_graph *g = pos->graph;
  ts_arena *a = ts_graph_arena(g);
  int64_t *sz = ts_arena_alloc(a, (size_t)rank * sizeof *sz), *st = ts_arena_alloc(a, (size_t)rank * sizeof *st);
  ts_node *n = ts_node_new(g, TS_K_prim_Constant, 1);
  if (!sz || !st || !n)
    return NULL;
  memcpy(sz, sizes, (size_t)rank * sizeof *sz);
  ts_rt_strides_contiguous(rank, sz, st);
  ts_tconst tc = {.dtype = (int8_t)dt, .rank = rank, .sizes = sz, .strides = st, .data = data};
  ts_tensor_info info = {.dtype = (int8_t)dt,
                         .requires_grad = 0,
                         .undefined = -1,
                         .device = {.type = TS_DEV_CPU, .index = -1},
                         .rank = rank,
                         .sizes = sz,
                         .strides = st};
  const ts_type *ty = ts_type_tensor(a, &info);
  if (!ty || !ts_node_set_t(n, "value", &tc))
    return NULL;
  ts_value_set_type(n->outputs[0], ty);
  ts_buf name = {0};
  if (base->name)
    ts_buf_puts(&name, base->name);
  else
    ts_buf_printf(&name, "%u", base->id); /* Value::debugName of an unnamed value */
  ts_buf_puts(&name, "_fused_bn");
  bool ok = !name.failed && ts_value_set_name(n->outputs[0], name.data);
  ts_buf_free(&name);
  if (!ok)
    return NULL;
  ts_node_insert_before(n, pos);
  return n->outputs[0];
}

typedef enum { FB_NO, FB_YES, FB_OOM } fb_result;

/* Folds batch_norm `bn` into the conv/linear before it, if it can. */
static fb_result fb_try(ts_node *bn) {
  if (bn->ninputs != 9 || bn->noutputs != 1)
    return FB_NO;
  ts_node *conv = bn->inputs[0]->node;
  bool linear;
  if (!fb_supported(conv, &linear) || conv->noutputs != 1 || conv->outputs[0]->nuses != 1)
    return FB_NO;
  bool training = true;
  double eps;
  ts_cval ce;
  if (!ts_pass_const_bool(bn->inputs[5], &training) || training || !ts_pass_const_get(bn->inputs[7], &ce))
    return FB_NO;
  if (ce.kind == TS_CV_FLOAT)
    eps = ce.f;
  else if (ce.kind == TS_CV_INT)
    eps = (double)ce.i;
  else
    return FB_NO;
  const ts_tconst *w = fb_tensor(conv->inputs[1]);
  if (!w || !fb_float_dtype(w->dtype) || w->rank < (linear ? 2 : 3) || (linear && w->rank != 2) ||
      w->rank > TS_RT_MAX_DIMS)
    return FB_NO;
  int dt = w->dtype;
  int64_t c = w->sizes[0];
  const ts_tconst *rm = fb_tensor(bn->inputs[3]), *rv = fb_tensor(bn->inputs[4]);
  if (!fb_channel_vec(rm, c, dt) || !fb_channel_vec(rv, c, dt))
    return FB_NO;
  /* the optional ones: None, or a per-channel tensor */
  const ts_tconst *cb = NULL, *bw = NULL, *bb = NULL;
  const ts_value *opt[3] = {conv->inputs[2], bn->inputs[1], bn->inputs[2]};
  const ts_tconst **dst[3] = {&cb, &bw, &bb};
  for (int k = 0; k < 3; k++) {
    if (fb_is_none(opt[k]))
      continue;
    *dst[k] = fb_tensor(opt[k]);
    if (!fb_channel_vec(*dst[k], c, dt))
      return FB_NO;
  }
  for (int32_t i = 0; i < w->rank; i++)
    if (w->sizes[i] < 0 || (w->strides && w->strides[i] < 0))
      return FB_NO;

  ts_graph *g = bn->graph;
  ts_arena *a = ts_graph_arena(g);
  int64_t numel = ts_tconst_numel(w);
  size_t es = ts_dtype_size((ts_dtype)dt);
  if (numel < 0 || c < 0 || (uint64_t)numel > SIZE_MAX / 2 / es)
    return FB_NO;
  char *nw = numel ? ts_arena_alloc(a, (size_t)numel * es) : NULL;
  char *nb = c ? ts_arena_alloc(a, (size_t)c * es) : NULL;
  double *rsq = malloc((size_t)(c ? c : 1) * sizeof *rsq), *scale = malloc((size_t)(c ? c : 1) * sizeof *scale);
  if ((numel && !nw) || (c && !nb) || !rsq || !scale) {
    free(rsq);
    free(scale);
    return FB_OOM;
  }
  double eps_r = fb_round(dt, eps); /* the scalar is converted to the tensor's dtype */
  for (int64_t i = 0; i < c; i++) {
    rsq[i] = fb_round(dt, 1.0 / fb_round(dt, sqrt(fb_round(dt, fb_at(rv, i, 0) + eps_r))));
    scale[i] = fb_round(dt, fb_at(bw, i, 1) * rsq[i]);
    double d = fb_round(dt, fb_at(cb, i, 0) - fb_at(rm, i, 0));
    /* conv: (b - mean) * rsqrt * w + bn_b; linear: (b - mean) * (w * rsqrt) + bn_b */
    double t = linear ? fb_round(dt, d * scale[i]) : fb_round(dt, fb_round(dt, d * rsq[i]) * fb_at(bw, i, 1));
    ts_rt_store_f64(nb + (size_t)i * es, (ts_dtype)dt, fb_round(dt, t + fb_at(bb, i, 0)));
  }
  /* weight elements in row-major order; the first index is the channel */
  int64_t idx[TS_RT_MAX_DIMS] = {0};
  int64_t inner = c ? numel / c : 0;
  for (int64_t e = 0; e < numel; e++) {
    int64_t off = e;
    if (w->strides) {
      off = 0;
      for (int32_t k = 0; k < w->rank; k++)
        off += idx[k] * w->strides[k];
    }
    double x = ts_rt_load_f64((const char *)w->data + (size_t)off * es, (ts_dtype)dt);
    ts_rt_store_f64(nw + (size_t)e * es, (ts_dtype)dt, fb_round(dt, x * scale[e / inner]));
    for (int32_t k = w->rank - 1; k >= 0 && ++idx[k] == w->sizes[k]; k--)
      idx[k] = 0;
  }
  free(rsq);
  free(scale);
  int64_t bsz[1] = {c};
  ts_value *fw = fb_insert(conv, dt, w->rank, w->sizes, nw, conv->inputs[1]);
  ts_value *fbias = fw ? fb_insert(conv, dt, 1, bsz, nb, conv->inputs[2]) : NULL;
  if (!fw || !fbias)
    return FB_OOM;
  ts_node_replace_input(conv, 1, fw);
  ts_node_replace_input(conv, 2, fbias);
  ts_value_replace_all_uses(bn->outputs[0], conv->outputs[0]);
  return FB_YES;
}

static fb_result fb_block(ts_block *b) {
  fb_result r = FB_NO;
  for (ts_node *n = ts_block_first(b); n != b->ret; n = n->next) {
    for (uint32_t i = 0; i < n->nblocks; i++) {
      fb_result k = fb_block(n->blocks[i]);
      if (k == FB_OOM)
        return FB_OOM;
      if (k == FB_YES)
        r = FB_YES;
    }
    if (!ts_node_is(n, TS_K_aten_batch_norm))
      continue;
    fb_result k = fb_try(n);
    if (k == FB_OOM)
      return FB_OOM;
    if (k == FB_YES)
      r = FB_YES;
  }
  return r;
}

bool ts_pass_fold_conv_bn(ts_graph *g, ts_diag *d) {
  fb_result r = fb_block(g->block);
  if (r == FB_OOM || !ts_graph_ok(g)) {
    ts_diag_error(d, "fold-conv-bn: out of memory");
    return false;
  }
  return r == FB_NO || ts_pass_dce(g, d);
}
