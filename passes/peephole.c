/* passes/peephole.c: torch::jit::PeepholeOptimize (passes/peephole.cpp,
 * peephole_non_tensor.cpp, peephole_list_idioms.cpp,
 * peephole_alias_sensitive.cpp), as PyTorch runs them with shape
 * peepholes on: the walks below in order, then, if anything changed,
 * EliminateDeadCode. Each rule is one function.
 *
 * peephole.cpp, shape-free rules (ts_pp_block):
 *   aten::t(aten::t(x))                                 -> x
 *   aten::Int / Float / IntImplicit / FloatImplicit / ScalarImplicit of
 *   prim::NumToTensor(x)                                -> x
 * peephole.cpp, rules that read refined tensor types (ts_pp_shape_block;
 * a size, dtype or device is known when the type says it, e.g. after
 * shape propagation or freezing):
 *   aten::dim(x), len(x.size())                         -> the rank
 *   aten::size(x, i)                                    -> that size
 *   aten::size(x) with every size known                 -> an int[] constant,
 *       when no user of the list may change it (ts_pp_list_unwritten)
 *   aten::len(x) of a tensor (its first size)           -> that size
 *   prim::dtype(x) / prim::device(x)                    -> the constant
 *   x + 0, x - 0 (alpha 1), x * 1, x / 1 with a Scalar other: -> x, when
 *       x's dtype is known and the result keeps it (x floating, or x an
 *       integer tensor and the scalars ints; never bool, which promotes;
 *       div only for floating x) and alias analysis finds replacing the
 *       result by x safe (neither is written, not both escape)
 * (The chunk rewrite of CanonicalizeOps, chunk + ListUnpack ->
 * prim::ConstantChunk, is the fuser's: passes/fuse.c does it where a
 * fusible op reads the chunks, so that graphs the frontend hands out keep
 * PyTorch's kinds.)
 * peephole_list_idioms.cpp (ts_pp_list_len):
 *   len(ListConstruct(a, b, ...)) -> the element count, when no user of the
 *   list may change it
 * peephole_alias_sensitive.cpp (ts_pp_conv_dim):
 *   aten::dim(conv1d/2d/3d(...)) -> 3/4/5, when no user may resize it
 * peephole_non_tensor.cpp (ts_pp_non_tensor_block):
 *   an output of type NoneType (of any node but a prim::Constant)
 *                                          -> uses moved to a None constant
 *   prim::If output that is True in block0 and False in block1 -> the
 *                                             condition ("x and True", ...)
 *   prim::If output typed T? whose blocks both give non-optional values:
 *                                             retyped to their unified type
 *   aten::__is__ / __isnot__ of a value that must be None and one that
 *   cannot be (by type: not NoneType, Optional or a Union holding None; or
 *   a prim::Constant holding a value)           -> False / True
 *   prim::unchecked_unwrap_optional(x), x cannot be None        -> x
 *   prim::unchecked_cast(x), x's type (tensor refinements ignored) a
 *   subtype of the output's                                     -> x
 *   aten::Int(x) / aten::ceil(x) with x : int                   -> x
 *   aten::eq(x, x) / aten::ne(x, x) for x of type bool, int, float, None,
 *   or a list or dict of those                  -> True / False
 *   int arithmetic, both inputs typed int (a constant first operand of add
 *   or mul is swapped to the second place, as PyTorch does):
 *     x * 1, x // 1                                             -> x
 *     x + 0, x - 0                                              -> x
 *     (x + c1) + c2, (x - c1) + c2, (x + c1) - c2, (x - c1) - c2
 *                   -> x + (c1 + c2), x + (c2 - c1), ... or x if that is 0
 * prim::If on a constant condition is constant propagation's (one place).
 *
 * Not done: expand to the same size, type_as, is_cuda, is_floating_point,
 * is_complex, _grad_sum_to_size; the dict idioms, list slicing and
 * indexing of ListConstruct, CombineConcats; FuseAddMM (not part of
 * PeepholeOptimize).
 *
 * Where this differs from PyTorch on purpose: PyTorch's x / 1 -> x (div on
 * ints, whose result is a float) and aten::Int(NumToTensor(x)) -> x for an
 * x of another type than the output would give a value of the wrong type,
 * so they are done only where the types agree; constant merging that would
 * overflow int64 is left alone. PyTorch's eq(x, x) -> True holds for floats
 * too, nan included; kept as PyTorch has it. PyTorch's list rules ask the
 * alias db whether a list is written; here a list whose users all have
 * schemas that do not write it (or are ListUnpack) counts as unwritten, and
 * any other user (If, Loop, Return, containers, unknown ops) as a writer. */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

typedef struct ts_pp {
  ts_graph *g;
  bool changed;
  bool oom;
  /* alias-sensitive rules: the db (built on first need; it describes the
   * graph as it was) and the values whose aliasing changed since, which
   * those rules leave alone, as PyTorch's stale_alias_values_ */
  ts_alias_db *db;
  bool db_failed;
  uint32_t db_watermark;
  const ts_value **stale;
  size_t nstale, cap_stale;
} ts_pp;

/* Value::mustBeNone */
static bool ts_pp_must_be_none(const ts_value *v) {
  if (v->type->kind == TS_TY_NONE)
    return true;
  const ts_node *n = v->node;
  return ts_node_is(n, TS_K_prim_Constant) && !n->attrs && v->type->kind == TS_TY_OPTIONAL;
}

/* Value::mustNotBeNone; also a constant that holds a value (a frozen
 * optional attribute, typed T?) */
static bool ts_pp_must_not_be_none(const ts_value *v) {
  const ts_type *t = v->type;
  if (ts_node_is(v->node, TS_K_prim_Constant) && ts_node_attr(v->node, "value"))
    return true;
  if (t->kind == TS_TY_NONE || t->kind == TS_TY_OPTIONAL)
    return false;
  if (t->kind == TS_TY_UNION)
    for (uint32_t i = 0; i < t->n; i++)
      if (t->elems[i]->kind == TS_TY_NONE || t->elems[i]->kind == TS_TY_OPTIONAL)
        return false;
  return true;
}


static void ts_pp_replace(ts_pp *p, ts_value *from, ts_value *to);

/* ---- peephole.cpp ---- */

static ts_value *ts_pp_const_int_at(ts_pp *p, ts_node *pos, int64_t i) {
  ts_cval c = {.kind = TS_CV_INT, .i = i};
  ts_value *v = ts_pass_const_insert(pos, &c);
  if (!v)
    p->oom = true;
  return v;
}

static void ts_pp_block(ts_pp *p, ts_block *b) {
  for (ts_node *n = ts_block_first(b); n != b->ret; n = n->next) {
    for (uint32_t i = 0; i < n->nblocks; i++)
      ts_pp_block(p, n->blocks[i]);
    if (n->noutputs != 1 || n->ninputs != 1)
      continue;
    ts_node *in = n->inputs[0]->node;
    switch (n->kind) {
    case TS_K_aten_t:
      if (ts_node_is(in, TS_K_aten_t) && in->ninputs == 1 && in->noutputs == 1) {
        ts_value_replace_all_uses(n->outputs[0], in->inputs[0]);
        p->changed = true;
      }
      break;
    case TS_K_aten_Int:
    case TS_K_aten_Float:
    case TS_K_aten_IntImplicit:
    case TS_K_aten_FloatImplicit:
    case TS_K_aten_ScalarImplicit:
      if (ts_node_is(in, TS_K_prim_NumToTensor) && in->ninputs == 1 &&
          ts_type_is_subtype(in->inputs[0]->type, n->outputs[0]->type)) {
        ts_value_replace_all_uses(n->outputs[0], in->inputs[0]);
        p->changed = true;
      }
      break;
    default: break;
    }
  }
}

/* ---- peephole.cpp with refined types ---- */

/* What v's refined tensor type knows, or NULL. */
static const ts_tensor_info *ts_pp_tinfo(const ts_value *v) {
  return v->type->kind == TS_TY_TENSOR ? v->type->tensor : NULL;
}

/* Whether the list `v` (an int[] about to become a constant) has only
 * users that read it: ops whose schema does not write that argument, and
 * ListUnpack. */
static bool ts_pp_list_unwritten(const ts_value *v) {
  for (uint32_t u = 0; u < v->nuses; u++) {
    const ts_node *user = v->uses[u].user;
    if (ts_node_is(user, TS_K_prim_ListUnpack))
      continue;
    const ts_schema *s = ts_node_schema(user);
    uint32_t i = v->uses[u].index;
    if (!s || s->vararg || i >= s->nargs || (s->args[i].alias && s->args[i].alias->is_write))
      return false;
  }
  return true;
}

/* An int[] constant before pos. */
static ts_value *ts_pp_const_ints(ts_pp *p, ts_node *pos, const int64_t *v, size_t n) {
  ts_node *k = ts_node_new(p->g, TS_K_prim_Constant, 1);
  const ts_type *t = ts_type_list(ts_graph_arena(p->g), ts_type_leaf(TS_TY_INT));
  if (!k || !t || !ts_node_set_is(k, "value", v, n)) {
    p->oom = true;
    return NULL;
  }
  ts_value_set_type(k->outputs[0], t);
  ts_node_insert_before(k, pos);
  return k->outputs[0];
}

/* aten::dim, aten::size, len(size(x)), len(x), prim::dtype, prim::device */
static void ts_pp_shape_query(ts_pp *p, ts_node *n) {
  if (n->noutputs != 1 || n->ninputs < 1)
    return;
  ts_value *x = n->inputs[0];
  const ts_tensor_info *ti = ts_pp_tinfo(x);
  ts_value *out = n->outputs[0];
  switch (n->kind) {
  case TS_K_aten_dim:
    if (ti && ti->rank >= 0 && n->ninputs == 1)
      ts_pp_replace(p, out, ts_pp_const_int_at(p, n, ti->rank));
    return;
  case TS_K_aten_size: {
    if (!ti || ti->rank < 0)
      return;
    int64_t dim;
    if (n->ninputs == 2 && out->type->kind == TS_TY_INT && ts_pass_const_int(n->inputs[1], &dim)) {
      if (dim < 0)
        dim += ti->rank;
      if (dim >= 0 && dim < ti->rank && ti->sizes[dim] >= 0)
        ts_pp_replace(p, out, ts_pp_const_int_at(p, n, ti->sizes[dim]));
      return;
    }
    if (n->ninputs != 1 || out->type->kind != TS_TY_LIST || !ts_pp_list_unwritten(out))
      return;
    for (int32_t i = 0; i < ti->rank; i++)
      if (ti->sizes[i] < 0)
        return;
    ts_pp_replace(p, out, ts_pp_const_ints(p, n, ti->sizes, (size_t)ti->rank));
    return;
  }
  case TS_K_aten_len: {
    if (n->ninputs != 1)
      return;
    if (ti) { /* len(x) of a tensor: its first size */
      if (ti->rank >= 1 && ti->sizes[0] >= 0)
        ts_pp_replace(p, out, ts_pp_const_int_at(p, n, ti->sizes[0]));
      return;
    }
    ts_node *sz = x->node; /* len(x.size()) */
    if (!ts_node_is(sz, TS_K_aten_size) || sz->ninputs != 1 || sz->noutputs != 1 || !ts_pp_list_unwritten(x))
      return;
    const ts_tensor_info *si = ts_pp_tinfo(sz->inputs[0]);
    if (si && si->rank >= 0)
      ts_pp_replace(p, out, ts_pp_const_int_at(p, n, si->rank));
    return;
  }
  case TS_K_prim_dtype:
    if (ti && ti->dtype >= 0 && n->ninputs == 1)
      ts_pp_replace(p, out, ts_pp_const_int_at(p, n, ti->dtype));
    return;
  case TS_K_prim_device:
    if (ti && ti->device.type >= 0 && n->ninputs == 1) {
      ts_cval c = {.kind = TS_CV_DEVICE, .dev = ti->device};
      ts_value *v = ts_pass_const_insert(n, &c);
      if (!v)
        p->oom = true;
      ts_pp_replace(p, out, v);
    }
    return;
  default: return;
  }
}

/* AliasDb::safeToChangeAliasingRelationship(a, b), on a db built once, with
 * the values changed since (and anything that may alias them) refused. */
static bool ts_pp_safe_to_alias(ts_pp *p, const ts_value *a, const ts_value *b) {
  if (!p->db && !p->db_failed) {
    ts_diag d = {0}; /* no db: nothing is safe */
    p->db_watermark = p->g->next_value_id;
    p->db = ts_alias_db_new(p->g, &d);
    p->db_failed = !p->db;
    ts_diag_free(&d);
  }
  if (!p->db || a->id >= p->db_watermark || b->id >= p->db_watermark)
    return false;
  if (ts_alias_has_writers(p->db, a) || ts_alias_has_writers(p->db, b) ||
      (ts_alias_escapes(p->db, a) && ts_alias_escapes(p->db, b)))
    return false;
  for (size_t i = 0; i < p->nstale; i++)
    if (ts_alias_may_alias(p->db, a, p->stale[i]) || ts_alias_may_alias(p->db, b, p->stale[i]))
      return false;
  return true;
}

static void ts_pp_mark_stale(ts_pp *p, const ts_value *v) {
  if (p->nstale == p->cap_stale) {
    size_t cap = p->cap_stale ? p->cap_stale * 2 : 16;
    const ts_value **s = realloc(p->stale, cap * sizeof *s);
    if (!s) {
      p->oom = true;
      return;
    }
    p->stale = s;
    p->cap_stale = cap;
  }
  p->stale[p->nstale++] = v;
}

/* A Scalar constant as a double; *is_int says whether it is an int. */
static bool ts_pp_scalar(const ts_value *v, double *d, bool *is_int) {
  ts_cval c;
  if (!ts_pass_const_get(v, &c) || (c.kind != TS_CV_INT && c.kind != TS_CV_FLOAT))
    return false;
  *is_int = c.kind == TS_CV_INT;
  *d = *is_int ? (double)c.i : c.f;
  return true;
}

/* x + 0, x - 0, x * 1, x / 1 on a tensor x with a Scalar other */
static void ts_pp_tensor_identity(ts_pp *p, ts_node *n) {
  bool addsub = ts_node_is(n, TS_K_aten_add) || ts_node_is(n, TS_K_aten_sub);
  if (n->noutputs != 1 || n->ninputs != (addsub ? 3u : 2u))
    return;
  const ts_schema *s = ts_node_schema(n);
  if (!s || strcmp(s->overload, "Scalar") != 0)
    return;
  ts_value *x = n->inputs[0];
  const ts_tensor_info *ti = ts_pp_tinfo(x);
  if (!ti || ti->dtype < 0)
    return;
  double other, alpha = 1;
  bool other_int, alpha_int = true;
  if (!ts_pp_scalar(n->inputs[1], &other, &other_int) || (addsub && !ts_pp_scalar(n->inputs[2], &alpha, &alpha_int)))
    return;
  if (other != (addsub ? 0 : 1) || alpha != 1)
    return;
  bool floating = ts_rt_dtype_is_float((ts_dtype)ti->dtype);
  bool integral = ts_rt_dtype_is_integral((ts_dtype)ti->dtype, false);
  /* the result's dtype is x's: floating x, or integer x with int scalars
   * (a float scalar promotes integers, anything promotes bool); true
   * division makes integers float */
  if (!(floating || (integral && other_int && alpha_int && !ts_node_is(n, TS_K_aten_div))))
    return;
  ts_value *out = n->outputs[0];
  if (!ts_pp_safe_to_alias(p, x, out))
    return;
  ts_pp_replace(p, out, x);
  ts_pp_mark_stale(p, x);
  ts_pp_mark_stale(p, out);
}

static void ts_pp_shape_block(ts_pp *p, ts_block *b) {
  for (ts_node *n = ts_block_first(b); n != b->ret && !p->oom; n = n->next) {
    for (uint32_t i = 0; i < n->nblocks; i++)
      ts_pp_shape_block(p, n->blocks[i]);
    switch (n->kind) {
    case TS_K_aten_dim:
    case TS_K_aten_size:
    case TS_K_aten_len:
    case TS_K_prim_dtype:
    case TS_K_prim_device: ts_pp_shape_query(p, n); break;
    case TS_K_aten_add:
    case TS_K_aten_sub:
    case TS_K_aten_mul:
    case TS_K_aten_div: ts_pp_tensor_identity(p, n); break;
    default: break;
    }
  }
}

/* ---- peephole_alias_sensitive.cpp ----
 * dim(conv(x)): conv1d/2d/3d give 3/4/5-d outputs, so aten::dim of one is a
 * constant unless something may resize it in place; without alias analysis
 * "may" is any user that writes to an argument (a "!" in its schema, or an
 * op the table does not know). PyTorch runs this rule even with shape
 * peepholes off: it keeps Conv->BatchNorm checks from blocking fusion. */

static bool ts_pp_may_write(const ts_node *user, uint32_t index) {
  const ts_schema *s = ts_node_schema(user);
  if (!s) /* structural kinds (Return, If, ...) do not write; unknown ops may */
    return user->kind == TS_K_OTHER;
  return index < s->nargs && s->args[index].alias && s->args[index].alias->is_write;
}

static void ts_pp_conv_dim(ts_pp *p, ts_block *b) {
  static const struct {
    const char *name;
    int64_t rank;
  } convs[] = {{"aten::conv1d", 3}, {"aten::conv2d", 4}, {"aten::conv3d", 5}};
  for (ts_node *n = ts_block_first(b); n != b->ret; n = n->next) {
    for (uint32_t i = 0; i < n->nblocks; i++)
      ts_pp_conv_dim(p, n->blocks[i]);
    int64_t rank = 0;
    for (size_t k = 0; k < sizeof convs / sizeof *convs; k++)
      if (strcmp(n->kind_name, convs[k].name) == 0)
        rank = convs[k].rank;
    if (!rank || n->noutputs != 1)
      continue;
    ts_value *out = n->outputs[0];
    bool writers = false, dims = false;
    for (uint32_t u = 0; u < out->nuses; u++) {
      writers = writers || ts_pp_may_write(out->uses[u].user, out->uses[u].index);
      dims = dims || ts_node_is(out->uses[u].user, TS_K_aten_dim);
    }
    if (!dims || writers)
      continue;
    for (uint32_t u = 0; u < out->nuses;) {
      ts_node *user = out->uses[u].user;
      if (!ts_node_is(user, TS_K_aten_dim) || user->noutputs != 1) {
        u++;
        continue;
      }
      ts_value *c = ts_pp_const_int_at(p, user, rank);
      if (!c)
        return;
      ts_value_replace_all_uses(user->outputs[0], c);
      p->changed = true;
      /* the dim node stays (unused) for DCE; the use list is unchanged */
      u++;
    }
  }
}

/* ---- peephole_list_idioms.cpp ----
 * len(ListConstruct(a, b, ...)) -> the element count, when no user of the
 * list may change it (without alias analysis: no user writes to it). */
static void ts_pp_list_len(ts_pp *p, ts_block *b) {
  for (ts_node *n = ts_block_first(b); n != b->ret; n = n->next) {
    for (uint32_t i = 0; i < n->nblocks; i++)
      ts_pp_list_len(p, n->blocks[i]);
    if (!ts_node_is(n, TS_K_prim_ListConstruct) || n->noutputs != 1)
      continue;
    ts_value *out = n->outputs[0];
    bool writers = false, lens = false;
    for (uint32_t u = 0; u < out->nuses; u++) {
      ts_node *user = out->uses[u].user;
      writers = writers || ts_pp_may_write(user, out->uses[u].index) || ts_node_is(user, TS_K_prim_Loop) ||
                ts_node_is(user, TS_K_prim_If) || user->kind == TS_K_prim_Return;
      lens = lens || ts_node_is(user, TS_K_aten_len);
    }
    if (!lens || writers)
      continue;
    for (uint32_t u = 0; u < out->nuses; u++) {
      ts_node *user = out->uses[u].user;
      if (!ts_node_is(user, TS_K_aten_len) || user->noutputs != 1 || user->ninputs != 1)
        continue;
      ts_value *c = ts_pp_const_int_at(p, user, n->ninputs);
      if (!c)
        return;
      ts_value_replace_all_uses(user->outputs[0], c);
      p->changed = true;
    }
  }
}

/* ---- peephole_non_tensor.cpp ---- */

static ts_value *ts_pp_const(ts_pp *p, ts_node *pos, ts_cval_kind kind, int64_t i) {
  ts_cval c = {.kind = kind, .i = i};
  ts_value *v = ts_pass_const_insert(pos, &c);
  if (!v)
    p->oom = true;
  return v;
}

static void ts_pp_replace(ts_pp *p, ts_value *from, ts_value *to) {
  if (!to)
    return;
  ts_value_replace_all_uses(from, to);
  p->changed = true;
}

static bool ts_pp_is_int(const ts_value *v) { return v->type->kind == TS_TY_INT; }

/* checkArithNode: the int constant among two int operands, moved to the
 * second place for add and mul. */
static bool ts_pp_arith_const(ts_node *n, int64_t *c) {
  if (n->ninputs != 2 || n->noutputs != 1 || !ts_pp_is_int(n->inputs[0]) || !ts_pp_is_int(n->inputs[1]))
    return false;
  if (ts_node_is(n, TS_K_aten_mul) || ts_node_is(n, TS_K_aten_add)) {
    if (ts_pass_const_int(n->inputs[0], c)) {
      ts_value *a = n->inputs[0], *b = n->inputs[1];
      ts_node_replace_input(n, 0, b);
      ts_node_replace_input(n, 1, a);
      return true;
    }
  }
  return ts_pass_const_int(n->inputs[1], c);
}

static void ts_pp_mul_div(ts_pp *p, ts_node *n) {
  int64_t c;
  /* aten::div of ints gives a float: replacing it by its int operand would
   * change the value's type, so only mul and floordiv */
  if (ts_node_is(n, TS_K_aten_div) || !ts_pp_arith_const(n, &c) || c != 1)
    return;
  ts_pp_replace(p, n->outputs[0], n->inputs[0]);
}

static void ts_pp_add_sub(ts_pp *p, ts_node *n) {
  int64_t c, delta, merged;
  if (!ts_pp_arith_const(n, &c))
    return;
  if (c == 0) {
    ts_pp_replace(p, n->outputs[0], n->inputs[0]);
    return;
  }
  ts_node *dep = n->inputs[0]->node;
  if (!ts_node_is(dep, TS_K_aten_add) && !ts_node_is(dep, TS_K_aten_sub))
    return;
  if (!ts_pp_arith_const(dep, &delta))
    return;
  bool same = ts_node_same_kind(dep, n);
  if (same ? (delta > 0 ? c > INT64_MAX - delta : c < INT64_MIN - delta)
           : (delta < 0 ? c > INT64_MAX + delta : c < INT64_MIN + delta))
    return;
  merged = same ? c + delta : c - delta;
  if (merged == 0) {
    ts_pp_replace(p, n->outputs[0], dep->inputs[0]);
    return;
  }
  ts_value *k = ts_pp_const(p, n, TS_CV_INT, merged);
  if (!k)
    return;
  ts_node_replace_input(n, 0, dep->inputs[0]);
  ts_node_replace_input(n, 1, k);
  p->changed = true;
}

/* element types for which eq(x, x) cannot raise */
static bool ts_pp_eq_safe_leaf(const ts_type *t) {
  return t->kind == TS_TY_BOOL || t->kind == TS_TY_INT || t->kind == TS_TY_FLOAT || t->kind == TS_TY_NONE;
}

static bool ts_pp_eq_safe(const ts_type *t) {
  if (t->kind == TS_TY_LIST)
    return ts_pp_eq_safe_leaf(t->elems[0]);
  if (t->kind == TS_TY_DICT)
    return ts_pp_eq_safe_leaf(t->elems[0]) && ts_pp_eq_safe_leaf(t->elems[1]);
  return ts_pp_eq_safe_leaf(t);
}

static void ts_pp_if(ts_pp *p, ts_node *n) {
  if (n->nblocks != 2 || n->ninputs != 1 || ts_block_noutputs(n->blocks[0]) != n->noutputs ||
      ts_block_noutputs(n->blocks[1]) != n->noutputs)
    return;
  for (uint32_t i = 0; i < n->noutputs; i++) {
    if (n->outputs[i]->type->kind != TS_TY_BOOL)
      continue;
    bool t = false, f = true;
    ts_pass_const_bool(ts_block_output(n->blocks[0], i), &t);
    ts_pass_const_bool(ts_block_output(n->blocks[1], i), &f);
    if (t && !f)
      ts_pp_replace(p, n->outputs[i], n->inputs[0]);
  }
  for (uint32_t i = 0; i < n->noutputs; i++) {
    const ts_type *a = ts_block_output(n->blocks[0], i)->type, *b = ts_block_output(n->blocks[1], i)->type;
    if (a->kind == TS_TY_OPTIONAL || b->kind == TS_TY_OPTIONAL || n->outputs[i]->type->kind != TS_TY_OPTIONAL)
      continue;
    const ts_type *u = ts_type_unify(&p->g->arena, a, b, &p->oom);
    if (u) {
      ts_value_set_type(n->outputs[i], u);
      p->changed = true;
    }
  }
}

static void ts_pp_non_tensor_block(ts_pp *p, ts_block *b) {
  for (ts_node *n = ts_block_first(b); n != b->ret && !p->oom; n = n->next) {
    for (uint32_t i = 0; i < n->nblocks; i++)
      ts_pp_non_tensor_block(p, n->blocks[i]);
    if (!ts_node_is(n, TS_K_prim_Constant))
      for (uint32_t i = 0; i < n->noutputs; i++)
        if (n->outputs[i]->type->kind == TS_TY_NONE)
          ts_pp_replace(p, n->outputs[i], ts_pp_const(p, n, TS_CV_NONE, 0));
    switch (n->kind) {
    case TS_K_prim_If: ts_pp_if(p, n); break;
    case TS_K_aten___is__:
    case TS_K_aten___isnot__:
      if (n->ninputs != 2 || n->noutputs != 1)
        break;
      for (uint32_t k = 0; k < 2; k++)
        if (ts_pp_must_be_none(n->inputs[k]) && ts_pp_must_not_be_none(n->inputs[1 - k]))
          ts_pp_replace(p, n->outputs[0], ts_pp_const(p, n, TS_CV_BOOL, ts_node_is(n, TS_K_aten___isnot__)));
      break;
    case TS_K_prim_isinstance: {
      /* inlining narrowed a Union/Optional argument to what the caller
       * passes: the test is decided now */
      const ts_attr *a = ts_node_attr(n, "types");
      if (n->ninputs != 1 || n->noutputs != 1 || !a || a->kind != TS_ATTR_TYPE)
        break;
      const ts_type *in = ts_type_unshaped(&p->g->arena, n->inputs[0]->type);
      int res = in ? ts_type_isinstance_static(in, a->u.ty) : -1;
      if (!in)
        p->oom = true;
      else if (res >= 0)
        ts_pp_replace(p, n->outputs[0], ts_pp_const(p, n, TS_CV_BOOL, res));
      break;
    }
    case TS_K_prim_unchecked_unwrap_optional:
      if (n->ninputs == 1 && n->noutputs == 1 && ts_pp_must_not_be_none(n->inputs[0]))
        ts_pp_replace(p, n->outputs[0], n->inputs[0]);
      break;
    case TS_K_prim_unchecked_cast: {
      if (n->ninputs != 1 || n->noutputs != 1)
        break;
      const ts_type *in = ts_type_unshaped(&p->g->arena, n->inputs[0]->type);
      const ts_type *out = ts_type_unshaped(&p->g->arena, n->outputs[0]->type);
      if (!in || !out)
        p->oom = true;
      else if (ts_type_is_subtype(in, out))
        ts_pp_replace(p, n->outputs[0], n->inputs[0]);
      break;
    }
    case TS_K_aten_Int:
    case TS_K_aten_ceil:
      if (n->ninputs == 1 && n->noutputs == 1 && ts_pp_is_int(n->inputs[0]))
        ts_pp_replace(p, n->outputs[0], n->inputs[0]);
      break;
    case TS_K_aten_eq:
    case TS_K_aten_ne:
      if (n->ninputs == 2 && n->noutputs == 1 && n->inputs[0] == n->inputs[1] && ts_pp_eq_safe(n->inputs[0]->type))
        ts_pp_replace(p, n->outputs[0], ts_pp_const(p, n, TS_CV_BOOL, ts_node_is(n, TS_K_aten_eq)));
      break;
    case TS_K_aten_mul:
    case TS_K_aten_floordiv:
    case TS_K_aten_div: ts_pp_mul_div(p, n); break;
    case TS_K_aten_add:
    case TS_K_aten_sub: ts_pp_add_sub(p, n); break;
    default: break;
    }
  }
}

bool ts_pass_peephole(ts_graph *g, ts_diag *d) {
  ts_pp p = {.g = g};
  ts_pp_block(&p, g->block);
  if (!p.oom)
    ts_pp_shape_block(&p, g->block);
  ts_pp_list_len(&p, g->block);
  ts_pp_conv_dim(&p, g->block);
  ts_pp_non_tensor_block(&p, g->block);
  if (p.db)
    ts_alias_db_free(p.db);
  free(p.stale);
  if (p.oom || !ts_graph_ok(g)) {
    ts_diag_error(d, "peephole: out of memory");
    return false;
  }
  return p.changed ? ts_pass_dce(g, d) : true;
}
