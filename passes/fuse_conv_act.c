/* passes/fuse_conv_act.c: a 2-d convolution and the pointwise tail that
 * follows it become one tsaot::conv2d_act, whose kernel adds the residual
 * and clamps each output plane while it is still in cache, instead of
 * separate nodes that each read and write the whole tensor again (oneDNN's
 * post-ops; PyTorch's frozen-graph conv-add-relu fusion for mkldnn does the
 * same for its own kernels).
 *
 * The chain, each step optional but at least one present:
 *   c = aten::conv2d(x, w, b, stride, padding, dilation, groups)
 *       or aten::_convolution(...) with transposed the constant False
 *   s = aten::add(c, r, 1) or aten::add(r, c, 1)    (also add_(c, r, 1))
 *   y = aten::relu(s) | hardtanh(s, lo, hi) | clamp(s, lo?, hi?) (or the
 *       in-place forms on s)
 * becomes y = tsaot::conv2d_act(x, w, b, stride, padding, dilation, groups,
 * lo, hi, r), when
 *   - the weight is a prim::Constant (a frozen model's) of rank 4 and the
 *     convolution's output type is float32 or float64 with all four sizes
 *     known (the kernel computes in that dtype, so conv, add and clamp
 *     round exactly as the separate ops do);
 *   - every intermediate (c, s) has exactly one use, the next step;
 *   - r has the output's dtype and sizes (no broadcasting), add's alpha is
 *     the constant 1, and lo / hi are constant numbers (or None for clamp);
 *   - the convolution can run at the last node of the chain instead (alias
 *     analysis: nothing in between writes what it reads), where the new
 *     node goes, since r may be computed after the convolution (resnet's
 *     downsample branch).
 * The rewritten nodes are destroyed; nothing else changes. */
#include "passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One chain found, read again when rewriting (values are looked up through
 * the nodes then, since rewriting an earlier chain may replace them). */
typedef struct fca_chain {
  ts_node *conv, *add, *act; /* add / act: NULL when absent */
  uint32_t res_index;        /* which input of `add` is the residual */
  bool has_lo, has_hi;
  double lo, hi;
} fca_chain;

typedef struct fca {
  ts_graph *g;
  ts_alias_db *db;
  fca_chain *chains;
  size_t n, cap;
  bool oom;
} fca;

/* The complete tensor type of v: float32/float64, rank 4, sizes known. */
static const ts_tensor_info *fca_float4(const ts_value *v) {
  const ts_type *t = v->type;
  if (!t || t->kind != TS_TY_TENSOR || !t->tensor)
    return NULL;
  const ts_tensor_info *ti = t->tensor;
  if ((ti->dtype != TS_DT_FLOAT32 && ti->dtype != TS_DT_FLOAT64) || ti->rank != 4 || !ti->sizes)
    return NULL;
  for (int32_t i = 0; i < 4; i++)
    if (ti->sizes[i] < 0)
      return NULL;
  return ti;
}

/* The only user of v, or NULL. */
static ts_node *fca_only_user(const ts_value *v) { return v->nuses == 1 ? v->uses[0].user : NULL; }

/* A number constant (int or float) as a double. */
static bool fca_number(const ts_value *v, double *out) {
  ts_cval c;
  if (!ts_pass_const_get(v, &c))
    return false;
  if (c.kind == TS_CV_INT)
    *out = (double)c.i;
  else if (c.kind == TS_CV_FLOAT)
    *out = c.f;
  else
    return false;
  return true;
}

static bool fca_is_none(const ts_value *v) {
  ts_cval c;
  return ts_pass_const_get(v, &c) && c.kind == TS_CV_NONE;
}

/* Whether n is a 2-d convolution the kernel runs: conv2d with int[]
 * padding, or _convolution not transposed, with a constant rank-4 weight. */
static bool fca_is_conv(const ts_node *n) {
  if (n->noutputs != 1)
    return false;
  if (ts_node_is(n, TS_K_aten_conv2d)) {
    if (n->ninputs != 7 || n->inputs[4]->type->kind == TS_TY_STR)
      return false;
  } else if (ts_node_is(n, TS_K_aten__convolution)) {
    bool transposed = true;
    if ((n->ninputs != 12 && n->ninputs != 13) || !ts_pass_const_bool(n->inputs[6], &transposed) || transposed)
      return false;
  } else {
    return false;
  }
  const ts_value *w = n->inputs[1];
  if (!ts_node_is(w->node, TS_K_prim_Constant) || !w->type || w->type->kind != TS_TY_TENSOR || !w->type->tensor ||
      w->type->tensor->rank != 4)
    return false;
  return fca_float4(n->outputs[0]) != NULL;
}

/* Whether `v` is the same tensor type as `ti` (dtype and sizes). */
static bool fca_same(const ts_value *v, const ts_tensor_info *ti) {
  const ts_tensor_info *r = fca_float4(v);
  if (!r || r->dtype != ti->dtype)
    return false;
  for (int32_t i = 0; i < 4; i++)
    if (r->sizes[i] != ti->sizes[i])
      return false;
  return true;
}

/* The add step on s (the convolution's output): fills ch->add. */
static void fca_match_add(fca_chain *ch, ts_node *u, const ts_value *s, const ts_tensor_info *ti) {
  bool inplace = ts_node_is(u, TS_K_aten_add_);
  if ((!ts_node_is(u, TS_K_aten_add) && !inplace) || u->ninputs != 3 || u->noutputs != 1)
    return;
  double alpha;
  if (!fca_number(u->inputs[2], &alpha) || alpha != 1.0)
    return;
  uint32_t ri;
  if (u->inputs[0] == s && u->inputs[1] != s)
    ri = 1;
  else if (u->inputs[1] == s && u->inputs[0] != s && !inplace)
    ri = 0; /* add_(r, c) writes r: not ours to take */
  else
    return;
  if (!fca_same(u->inputs[ri], ti) || !fca_same(u->outputs[0], ti))
    return;
  ch->add = u;
  ch->res_index = ri;
}

/* The clamp step on s: fills ch->act and the bounds. */
static void fca_match_act(fca_chain *ch, ts_node *u, const ts_value *s) {
  if (u->noutputs != 1 || u->ninputs < 1 || u->inputs[0] != s)
    return;
  for (uint32_t i = 1; i < u->ninputs; i++)
    if (u->inputs[i] == s)
      return;
  double lo = 0, hi = 0;
  bool has_lo = false, has_hi = false;
  switch (u->kind) {
  case TS_K_aten_relu:
  case TS_K_aten_relu_:
    if (u->ninputs != 1)
      return;
    has_lo = true;
    break;
  case TS_K_aten_hardtanh:
  case TS_K_aten_hardtanh_:
    if (u->ninputs != 3 || !fca_number(u->inputs[1], &lo) || !fca_number(u->inputs[2], &hi))
      return;
    has_lo = has_hi = true;
    break;
  case TS_K_aten_clamp:
  case TS_K_aten_clamp_:
    /* the Scalar? overload only: Tensor bounds are other types */
    if (u->ninputs != 3)
      return;
    has_lo = fca_number(u->inputs[1], &lo);
    has_hi = fca_number(u->inputs[2], &hi);
    if ((!has_lo && !fca_is_none(u->inputs[1])) || (!has_hi && !fca_is_none(u->inputs[2])) || (!has_lo && !has_hi))
      return;
    break;
  default:
    return;
  }
  if (isnan(lo) || isnan(hi))
    return;
  ch->act = u;
  ch->has_lo = has_lo, ch->has_hi = has_hi;
  ch->lo = lo, ch->hi = hi;
}

/* Whether the convolution may run at `last` instead: no node in between
 * (the chain's aside) writes what it reads, and none has blocks (whose
 * writes are not looked into here). Its output has no other user, and its
 * inputs are defined before it, so only writes can tell. */
static bool fca_can_sink(const fca *f, const fca_chain *ch, const ts_node *last) {
  const ts_node *conv = ch->conv;
  for (const ts_node *m = conv->next; m != last; m = m->next) {
    if (m == conv->owner->ret)
      return false; /* last is not after conv */
    if (m == ch->add)
      continue;
    if (m->nblocks)
      return false;
    if (!ts_alias_node_has_writes(f->db, m))
      continue;
    for (uint32_t i = 0; i < conv->ninputs; i++)
      if (ts_alias_node_writes_to(f->db, m, conv->inputs[i]))
        return false;
  }
  return true;
}

/* Records the chain starting at convolution n, if there is one. */
static void fca_try(fca *f, ts_node *n) {
  if (!fca_is_conv(n))
    return;
  fca_chain ch = {n, NULL, NULL, 0, false, false, 0, 0};
  const ts_tensor_info *ti = fca_float4(n->outputs[0]);
  const ts_value *s = n->outputs[0];
  ts_node *u = fca_only_user(s);
  if (!u)
    return;
  fca_match_add(&ch, u, s, ti);
  if (ch.add) {
    s = ch.add->outputs[0];
    u = fca_only_user(s);
  }
  if (u)
    fca_match_act(&ch, u, s);
  if (!ch.add && !ch.act)
    return;
  ts_node *last = ch.act ? ch.act : ch.add;
  if (last->owner != n->owner || !fca_can_sink(f, &ch, last))
    return;
  /* add(conv_a, conv_b): one chain takes the add, the other conv stays */
  for (size_t i = 0; i < f->n; i++)
    if ((ch.add && f->chains[i].add == ch.add) || (ch.act && f->chains[i].act == ch.act))
      return;
  if (f->n == f->cap) {
    size_t cap = f->cap ? 2 * f->cap : 16;
    fca_chain *c = realloc(f->chains, cap * sizeof *c);
    if (!c) {
      f->oom = true;
      return;
    }
    f->chains = c, f->cap = cap;
  }
  f->chains[f->n++] = ch;
}

static void fca_block(fca *f, ts_block *b) {
  for (ts_node *n = ts_block_first(b); n != b->ret && !f->oom; n = n->next) {
    for (uint32_t i = 0; i < n->nblocks; i++)
      fca_block(f, n->blocks[i]);
    fca_try(f, n);
  }
}

/* A float (or None) constant before pos. */
static ts_value *fca_bound(ts_node *pos, bool has, double v) {
  ts_cval c = {.kind = has ? TS_CV_FLOAT : TS_CV_NONE, .f = v};
  return ts_pass_const_insert(pos, &c);
}

/* Replaces one chain by a tsaot::conv2d_act before its last node. */
static bool fca_rewrite(const fca_chain *ch) {
  ts_node *conv = ch->conv, *last = ch->act ? ch->act : ch->add;
  ts_graph *g = ts_node_graph(conv);
  bool full = ts_node_is(conv, TS_K_aten__convolution);
  ts_value *lo = fca_bound(last, ch->has_lo, ch->lo);
  ts_value *hi = fca_bound(last, ch->has_hi, ch->hi);
  ts_value *res = ch->add ? ch->add->inputs[ch->res_index] : fca_bound(last, false, 0);
  ts_node *f = ts_node_new(g, TS_K_tsaot_conv2d_act, 1);
  if (!lo || !hi || !res || !f)
    return false;
  /* conv2d: x w b stride padding dilation groups; _convolution: groups at 8 */
  static const uint32_t from_conv2d[7] = {0, 1, 2, 3, 4, 5, 6}, from_full[7] = {0, 1, 2, 3, 4, 5, 8};
  const uint32_t *from = full ? from_full : from_conv2d;
  bool ok = true;
  for (uint32_t i = 0; i < 7; i++)
    ok = ok && ts_node_add_input(f, conv->inputs[from[i]]);
  ok = ok && ts_node_add_input(f, lo) && ts_node_add_input(f, hi) && ts_node_add_input(f, res);
  if (!ok)
    return false;
  ts_value_set_type(f->outputs[0], last->outputs[0]->type);
  ts_node_insert_before(f, last);
  ts_value_replace_all_uses(last->outputs[0], f->outputs[0]);
  ts_node_destroy(last);
  if (ch->act && ch->add)
    ts_node_destroy(ch->add);
  ts_node_destroy(conv);
  return true;
}

bool ts_pass_fuse_conv_act(ts_graph *g, ts_diag *d) {
  fca f = {g, NULL, NULL, 0, 0, false};
  ts_diag quiet = {0};
  f.db = ts_alias_db_new(g, &quiet);
  ts_diag_free(&quiet);
  if (!f.db) {
    /* a graph alias analysis cannot read (out of memory aside) is left alone */
    if (!ts_graph_ok(g)) {
      ts_diag_error(d, "fuse-conv-act: out of memory");
      return false;
    }
    return true;
  }
  fca_block(&f, g->block);
  ts_alias_db_free(f.db);
  bool ok = !f.oom;
  for (size_t i = 0; ok && i < f.n; i++)
    ok = fca_rewrite(&f.chains[i]);
  free(f.chains);
  if (!ok || !ts_graph_ok(g)) {
    ts_diag_error(d, "fuse-conv-act: out of memory");
    return false;
  }
  return true;
}
