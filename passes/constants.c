/* passes/constants.c: the scalar prim::Constants the passes read and make,
 * as PyTorch's toIValue (torch/csrc/jit/ir/constants.cpp) reads them and
 * Graph::insertConstant makes them. Lists, tensors and functions are not
 * read here: the passes that fold values only fold immutable scalars. */
#include "passes.h"

#include <string.h>

/* Node::mustBeNone for a constant: NoneType, or an optional with no value. */
static bool ts_cv_must_be_none(const ts_node *n, const ts_type *t) {
  return t->kind == TS_TY_NONE || (t->kind == TS_TY_OPTIONAL && !n->attrs);
}

bool ts_pass_const_get(const ts_value *v, ts_cval *out) {
  const ts_node *n = v->node;
  if (!ts_node_is(n, TS_K_prim_Constant) || n->noutputs != 1)
    return false;
  const ts_type *t = v->type;
  const ts_attr *a = ts_node_attr(n, "value");
  memset(out, 0, sizeof *out);
  bool number = t->kind == TS_TY_INT || t->kind == TS_TY_FLOAT || t->kind == TS_TY_NUMBER;
  if (t->kind == TS_TY_BOOL) {
    if (!a || a->kind != TS_ATTR_INT)
      return false;
    out->kind = TS_CV_BOOL;
    out->i = a->u.i != 0;
    return true;
  }
  if (number && a && a->kind == TS_ATTR_INT) {
    out->kind = TS_CV_INT;
    out->i = a->u.i;
    return true;
  }
  if (number && a && a->kind == TS_ATTR_FLOAT) {
    out->kind = TS_CV_FLOAT;
    out->f = a->u.f;
    return true;
  }
  if (t->kind == TS_TY_STR && a && a->kind == TS_ATTR_STR) {
    out->kind = TS_CV_STR;
    out->s = a->u.s;
    out->len = a->len;
    return true;
  }
  if (t->kind == TS_TY_DEVICE && a && a->kind == TS_ATTR_STR) {
    out->kind = TS_CV_DEVICE;
    return ts_device_parse(a->u.s, a->len, &out->dev);
  }
  if (ts_cv_must_be_none(n, t)) {
    out->kind = TS_CV_NONE;
    return true;
  }
  return false;
}

bool ts_pass_const_int(const ts_value *v, int64_t *out) {
  ts_cval c;
  if (!ts_pass_const_get(v, &c) || c.kind != TS_CV_INT)
    return false;
  *out = c.i;
  return true;
}

bool ts_pass_const_bool(const ts_value *v, bool *out) {
  ts_cval c;
  if (!ts_pass_const_get(v, &c) || c.kind != TS_CV_BOOL)
    return false;
  *out = c.i != 0;
  return true;
}

ts_value *ts_pass_const_insert(ts_node *pos, const ts_cval *c) {
  ts_graph *g = pos->graph;
  ts_node *n = ts_node_new(g, TS_K_prim_Constant, 1);
  if (!n)
    return NULL;
  ts_value *v = n->outputs[0];
  bool ok = true;
  switch (c->kind) {
  case TS_CV_NONE: ts_value_set_type(v, ts_type_leaf(TS_TY_NONE)); break;
  case TS_CV_BOOL:
    ok = ts_node_set_i(n, "value", c->i != 0);
    ts_value_set_type(v, ts_type_leaf(TS_TY_BOOL));
    break;
  case TS_CV_INT:
    ok = ts_node_set_i(n, "value", c->i);
    ts_value_set_type(v, ts_type_leaf(TS_TY_INT));
    break;
  case TS_CV_FLOAT:
    ok = ts_node_set_f(n, "value", c->f);
    ts_value_set_type(v, ts_type_leaf(TS_TY_FLOAT));
    break;
  case TS_CV_STR:
    ok = ts_node_set_s(n, "value", c->s ? c->s : "", c->len);
    ts_value_set_type(v, ts_type_leaf(TS_TY_STR));
    break;
  case TS_CV_DEVICE: {
    ts_buf b = {0};
    ts_device_print(&b, c->dev);
    ok = !b.failed && ts_node_set_s(n, "value", b.data, b.len);
    ts_buf_free(&b);
    ts_value_set_type(v, ts_type_leaf(TS_TY_DEVICE));
    break;
  }
  }
  if (!ok)
    return NULL;
  ts_node_insert_before(n, pos);
  return v;
}

static bool ts_cv_attr_equal(const ts_attr *a, const ts_attr *b) {
  if (a->kind != b->kind)
    return false;
  switch (a->kind) {
  case TS_ATTR_INT: return a->u.i == b->u.i;
  case TS_ATTR_FLOAT: return a->u.f == b->u.f;
  case TS_ATTR_STR: return a->len == b->len && memcmp(a->u.s, b->u.s, a->len) == 0;
  case TS_ATTR_TYPE: return ts_type_equal(a->u.ty, b->u.ty);
  case TS_ATTR_INTS: return a->len == b->len && (!a->len || memcmp(a->u.is, b->u.is, a->len * sizeof *a->u.is) == 0);
  case TS_ATTR_FLOATS:
    if (a->len != b->len)
      return false;
    for (size_t i = 0; i < a->len; i++)
      if (!(a->u.fs[i] == b->u.fs[i]))
        return false;
    return true;
  case TS_ATTR_STRS:
    if (a->len != b->len)
      return false;
    for (size_t i = 0; i < a->len; i++)
      if (strcmp(a->u.ss[i], b->u.ss[i]) != 0)
        return false;
    return true;
  /* Tensor values are compared by PyTorch; a graph read from text has none
   * to compare, so two tensor constants never count as equal here. Graph
   * attributes never compare equal in PyTorch either. */
  case TS_ATTR_TENSOR:
  case TS_ATTR_TENSORS:
  case TS_ATTR_GRAPH: return false;
  }
  return false;
}

bool ts_pass_const_nodes_equal(const ts_node *a, const ts_node *b) {
  if (!ts_node_same_kind(a, b) || a->noutputs != b->noutputs || a->ninputs != b->ninputs)
    return false;
  for (uint32_t i = 0; i < a->noutputs; i++)
    if (!ts_type_equal(a->outputs[i]->type, b->outputs[i]->type))
      return false;
  for (uint32_t i = 0; i < a->ninputs; i++)
    if (a->inputs[i] != b->inputs[i])
      return false;
  if (ts_node_attr_count(a) != ts_node_attr_count(b))
    return false;
  for (const ts_attr *x = a->attrs; x; x = x->next) {
    const ts_attr *y = ts_node_attr(b, x->name);
    if (!y || !ts_cv_attr_equal(x, y))
      return false;
  }
  return true;
}

/* AliasDb::isMutableType: could a value of this type be written through? */
bool ts_pass_type_mutable(const ts_type *t) {
  switch (t->kind) {
  case TS_TY_INT:
  case TS_TY_FLOAT:
  case TS_TY_COMPLEX:
  case TS_TY_BOOL:
  case TS_TY_STR:
  case TS_TY_NONE:
  case TS_TY_DEVICE:
  case TS_TY_NUMBER:
  case TS_TY_LAYOUT:
  case TS_TY_SCALARTYPE:
  case TS_TY_MEMORYFORMAT:
  case TS_TY_FUNCTION:
  case TS_TY_QSCHEME:
  case TS_TY_SYMINT:
  case TS_TY_STREAM:
  case TS_TY_ANYENUM: return false;
  case TS_TY_OPTIONAL:
  case TS_TY_TUPLE:
  case TS_TY_UNION:
    for (uint32_t i = 0; i < t->n; i++)
      if (ts_pass_type_mutable(t->elems[i]))
        return true;
    return false;
  default: return true;
  }
}
