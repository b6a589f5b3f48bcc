/* passes/peephole.c: the shape-free part of torch::jit::PeepholeOptimize
 * (passes/peephole.cpp and passes/peephole_non_tensor.cpp), run as PyTorch
 * runs it with shape peepholes disabled: one walk with the rules of
 * peephole.cpp, then one with those of peephole_non_tensor.cpp, then, if
 * anything changed, EliminateDeadCode.
 *
 * peephole.cpp, shape-free rules:
 *   aten::t(aten::t(x))                                 -> x
 *   aten::Int / Float / IntImplicit / FloatImplicit / ScalarImplicit of
 *   prim::NumToTensor(x)                                -> x
 * peephole_non_tensor.cpp:
 *   an output of type NoneType (of any node but a prim::Constant)
 *                                          -> uses moved to a None constant
 *   prim::If output that is True in block0 and False in block1 -> the
 *                                             condition ("x and True", ...)
 *   prim::If output typed T? whose blocks both give non-optional values:
 *                                             retyped to their unified type
 *   aten::__is__ / __isnot__ of a value that must be None and one that
 *   cannot be (by type: not NoneType, Optional or a Union holding None)
 *                                          -> False / True
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
 *
 * Not done: every rule that reads tensor shapes, dtypes or devices (expand
 * to the same size, type_as, size, len of size, size(dim), dim, dtype,
 * device, is_cuda, is_floating_point, is_complex, _grad_sum_to_size),
 * which PyTorch runs only with shape peepholes on; the list, dict and
 * alias-sensitive idioms and CombineConcats, which need alias analysis;
 * FuseAddMM (not part of PeepholeOptimize).
 *
 * Where this differs from PyTorch on purpose: PyTorch's x / 1 -> x (div on
 * ints, whose result is a float) and aten::Int(NumToTensor(x)) -> x for an
 * x of another type than the output would give a value of the wrong type,
 * so they are done only where the types agree; constant merging that would
 * overflow int64 is left alone. PyTorch's eq(x, x) -> True holds for floats
 * too, nan included; kept as PyTorch has it. */
#include "passes.h"

#include <string.h>

typedef struct ts_pp {
  ts_graph *g;
  bool changed;
  bool oom;
} ts_pp;

/* Value::mustBeNone */
static bool ts_pp_must_be_none(const ts_value *v) {
  if (v->type->kind == TS_TY_NONE)
    return true;
  const ts_node *n = v->node;
  return ts_node_is(n, TS_K_prim_Constant) && !n->attrs && v->type->kind == TS_TY_OPTIONAL;
}

/* Value::mustNotBeNone */
static bool ts_pp_must_not_be_none(const ts_value *v) {
  const ts_type *t = v->type;
  if (t->kind == TS_TY_NONE || t->kind == TS_TY_OPTIONAL)
    return false;
  if (t->kind == TS_TY_UNION)
    for (uint32_t i = 0; i < t->n; i++)
      if (t->elems[i]->kind == TS_TY_NONE || t->elems[i]->kind == TS_TY_OPTIONAL)
        return false;
  return true;
}


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
  ts_pp_list_len(&p, g->block);
  ts_pp_conv_dim(&p, g->block);
  ts_pp_non_tensor_block(&p, g->block);
  if (p.oom || !ts_graph_ok(g)) {
    ts_diag_error(d, "peephole: out of memory");
    return false;
  }
  return p.changed ? ts_pass_dce(g, d) : true;
}
