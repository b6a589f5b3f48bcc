/* passes/constants.c: the prim::Constants the passes read and make, as
 * PyTorch's toIValue and insertConstant (torch/csrc/jit/ir/constants.cpp)
 * do: immutable scalars as ts_cval (ts_pass_const_get, _insert), and every
 * kind of constant as a runtime IValue (ts_pass_const_to_iv, _insert_iv)
 * for the passes that evaluate ops with the runtime's kernels.
 *
 * Where this does less than PyTorch: tuples, dicts and objects never become
 * constants (tsaot's prim::Constant holds no tuple value), nor do empty
 * tensor lists (a "[<Tensors>]" attribute of length 0 is what a graph read
 * from text has, values unknown) or lists mixing element kinds (int?[]). */
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

bool ts_pass_node_add_defaults(ts_node *n, const ts_schema *s) {
  for (uint32_t i = n->ninputs; i < s->nargs; i++) {
    const ts_arg *a = &s->args[i];
    ts_cval c = {0};
    if (!a->has_default)
      return false;
    switch (a->def.kind) {
    case TS_DEF_NONE_VALUE: c.kind = TS_CV_NONE; break;
    case TS_DEF_BOOL: c.kind = TS_CV_BOOL; c.i = a->def.u.b; break;
    case TS_DEF_INT: c.kind = TS_CV_INT; c.i = a->def.u.i; break;
    case TS_DEF_FLOAT: c.kind = TS_CV_FLOAT; c.f = a->def.u.f; break;
    default: return false; /* lists, enums: the caller leaves the op */
    }
    ts_value *v = ts_pass_const_insert(n, &c);
    if (!v || !ts_node_add_input(n, v))
      return false;
  }
  return true;
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

/* ---- constants <-> runtime values ---- */

/* Whether a tensor constant has the bytes a runtime tensor can be made of
 * (a graph read from text has none). */
static bool ts_cv_tconst_usable(const ts_tconst *t) {
  return t && ts_rt_dtype_supported((ts_dtype)t->dtype) && (t->data || ts_tconst_numel(t) == 0);
}

bool ts_pass_const_to_iv(ts_rt_ctx *ctx, const ts_value *v, ts_iv *out) {
  const ts_node *n = v->node;
  *out = ts_iv_none();
  if (!ts_node_is(n, TS_K_prim_Constant) || n->noutputs != 1 || v->type->kind == TS_TY_FUNCTION)
    return false;
  const ts_attr *a = ts_node_attr(n, "value");
  if (a) {
    switch (a->kind) {
    case TS_ATTR_TENSOR:
      if (!ts_cv_tconst_usable(a->u.t))
        return false;
      break;
    case TS_ATTR_TENSORS:
      if (!a->len)
        return false;
      for (size_t i = 0; i < a->len; i++)
        if (!ts_cv_tconst_usable(a->u.ts[i]))
          return false;
      break;
    case TS_ATTR_GRAPH:
    case TS_ATTR_TYPE: return false;
    case TS_ATTR_STR:
      if (v->type->kind == TS_TY_DEVICE) {
        ts_device dev;
        if (!ts_device_parse(a->u.s, a->len, &dev))
          return false;
      }
      break;
    default: break;
    }
  }
  /* what is left to fail is allocation (and sizes no arena could hold) */
  return ts_rt_iv_from_constant(ctx, n, out);
}

typedef struct ts_cv_copy {
  char *dst;
  size_t es;
} ts_cv_copy;

static void ts_cv_copy_elem(void *arg, void *elem, int64_t index) {
  ts_cv_copy *c = arg;
  memcpy(c->dst + (size_t)index * c->es, elem, c->es);
}

/* A tensor constant for runtime tensor `t`: its bytes copied into g's arena
 * (contiguous), or pointed at. Sizes and strides are the tensor's or
 * arena copies (ts_node_set_t copies the struct). False on OOM or an
 * unsupported dtype. */
static bool ts_cv_make_tconst(ts_graph *g, const ts_rt_tensor *t, bool borrow, ts_tconst *out) {
  ts_arena *a = ts_graph_arena(g);
  if (!ts_rt_dtype_supported((ts_dtype)t->dtype) || t->ndim < 0 || t->ndim > TS_RT_MAX_DIMS)
    return false;
  *out = (ts_tconst){.dtype = t->dtype, .rank = t->ndim};
  if (t->ndim) {
    out->sizes = t->sizes;
    out->strides = t->strides;
  }
  if (borrow) {
    out->data = ts_rt_tensor_data(t);
    return true;
  }
  if (t->ndim) {
    int64_t *strides = ts_arena_alloc(a, (size_t)t->ndim * sizeof *strides);
    if (!strides)
      return false;
    ts_rt_strides_contiguous(t->ndim, t->sizes, strides);
    out->strides = strides;
  }
  int64_t numel = ts_rt_tensor_numel(t);
  size_t es = ts_dtype_size((ts_dtype)t->dtype);
  if (numel < 0 || (uint64_t)numel > SIZE_MAX / 2 / es)
    return false;
  if (numel > 0) {
    ts_cv_copy c = {.dst = ts_arena_alloc(a, (size_t)numel * es), .es = es};
    if (!c.dst)
      return false;
    ts_rt_tensor_foreach(t, ts_cv_copy_elem, &c);
    out->data = c.dst;
  }
  return true;
}

/* The refined type of a constant tensor, as PyTorch prints frozen
 * parameters: Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu). */
static const ts_type *ts_cv_tensor_type(ts_graph *g, const ts_tconst *tc) {
  ts_tensor_info info = {.dtype = tc->dtype,
                         .requires_grad = 0,
                         .undefined = -1,
                         .device = {.type = TS_DEV_CPU, .index = -1},
                         .rank = tc->rank,
                         .sizes = tc->sizes,
                         .strides = tc->strides};
  return ts_type_tensor(ts_graph_arena(g), &info);
}

/* The attribute kind a list of these items is held in (TS_ATTR_GRAPH: none). */
static ts_attr_kind ts_cv_list_kind(const ts_rt_list *l, const ts_type *elem, const ts_type **leaf) {
  ts_iv_tag tag = TS_IV_UNINIT;
  if (l->n)
    tag = (ts_iv_tag)l->items[0].tag;
  else if (elem)
    tag = elem->kind == TS_TY_INT     ? TS_IV_INT
          : elem->kind == TS_TY_BOOL  ? TS_IV_BOOL
          : elem->kind == TS_TY_FLOAT ? TS_IV_DOUBLE
          : elem->kind == TS_TY_STR   ? TS_IV_STR
                                      : TS_IV_UNINIT; /* an empty Tensor[] is not made (see the top) */
  for (uint32_t i = 1; i < l->n; i++)
    if (l->items[i].tag != (int32_t)tag)
      return TS_ATTR_GRAPH;
  switch (tag) {
  case TS_IV_INT: *leaf = ts_type_leaf(TS_TY_INT); return TS_ATTR_INTS;
  case TS_IV_BOOL: *leaf = ts_type_leaf(TS_TY_BOOL); return TS_ATTR_INTS;
  case TS_IV_DOUBLE: *leaf = ts_type_leaf(TS_TY_FLOAT); return TS_ATTR_FLOATS;
  case TS_IV_STR: *leaf = ts_type_leaf(TS_TY_STR); return TS_ATTR_STRS;
  case TS_IV_TENSOR: *leaf = ts_type_leaf(TS_TY_TENSOR); return TS_ATTR_TENSORS;
  default: return TS_ATTR_GRAPH;
  }
}

/* Sets a list value on `n`; *ty its list type when none was given. */
static bool ts_cv_set_list(ts_node *n, const ts_rt_list *l, const ts_type *given, bool borrow, const ts_type **ty) {
  ts_graph *g = n->graph;
  ts_arena *a = ts_graph_arena(g);
  const ts_type *elem = given && given->kind == TS_TY_LIST ? given->elems[0] : l->elem;
  const ts_type *leaf = NULL;
  ts_attr_kind kind = ts_cv_list_kind(l, elem, &leaf);
  if (kind == TS_ATTR_GRAPH)
    return false;
  *ty = given ? given : ts_type_list(a, leaf);
  if (!*ty)
    return false;
  size_t cnt = l->n;
  switch (kind) {
  case TS_ATTR_INTS: {
    int64_t *v = cnt ? ts_arena_alloc(a, cnt * sizeof *v) : NULL;
    if (cnt && !v)
      return false;
    for (size_t i = 0; i < cnt; i++)
      v[i] = l->items[i].tag == TS_IV_BOOL ? (int64_t)l->items[i].u.b : l->items[i].u.i;
    return ts_node_set_is(n, "value", v, cnt);
  }
  case TS_ATTR_FLOATS: {
    double *v = cnt ? ts_arena_alloc(a, cnt * sizeof *v) : NULL;
    if (cnt && !v)
      return false;
    for (size_t i = 0; i < cnt; i++)
      v[i] = l->items[i].u.d;
    return ts_node_set_fs(n, "value", v, cnt);
  }
  case TS_ATTR_STRS: {
    const char **v = cnt ? ts_arena_alloc(a, cnt * sizeof *v) : NULL;
    if (cnt && !v)
      return false;
    for (size_t i = 0; i < cnt; i++) {
      const ts_rt_str *s = l->items[i].u.s;
      if (memchr(s->data, 0, s->len)) /* STRS elements are NUL-terminated */
        return false;
      v[i] = s->data;
    }
    return ts_node_set_ss(n, "value", v, cnt);
  }
  default: {
    const ts_tconst **v = ts_arena_alloc(a, cnt * sizeof *v);
    ts_tconst *tcs = ts_arena_alloc(a, cnt * sizeof *tcs);
    if (!v || !tcs)
      return false;
    for (size_t i = 0; i < cnt; i++) {
      if (!ts_cv_make_tconst(g, l->items[i].u.t, borrow, &tcs[i]))
        return false;
      v[i] = &tcs[i];
    }
    return ts_node_set_ts(n, "value", v, cnt);
  }
  }
}

ts_value *ts_pass_const_insert_iv(ts_node *pos, const ts_iv *iv, const ts_type *type, bool borrow_tensors) {
  ts_graph *g = pos->graph;
  ts_node *n = NULL;
  switch ((ts_iv_tag)iv->tag) {
  case TS_IV_NONE:
  case TS_IV_STR:
  case TS_IV_TENSOR:
  case TS_IV_LIST:
    if (!(n = ts_node_new(g, TS_K_prim_Constant, 1)))
      return NULL;
    break;
  default: break;
  }
  const ts_type *ty = type;
  bool ok = true;
  switch ((ts_iv_tag)iv->tag) {
  case TS_IV_NONE:
    if (!ty)
      ty = ts_type_leaf(TS_TY_NONE);
    break;
  case TS_IV_BOOL:
  case TS_IV_INT:
  case TS_IV_DOUBLE:
  case TS_IV_DEVICE: {
    ts_cval c = {.kind = iv->tag == TS_IV_BOOL  ? TS_CV_BOOL
                         : iv->tag == TS_IV_INT ? TS_CV_INT
                         : iv->tag == TS_IV_DOUBLE ? TS_CV_FLOAT
                                                   : TS_CV_DEVICE};
    c.i = iv->tag == TS_IV_BOOL ? iv->u.b : iv->tag == TS_IV_INT ? iv->u.i : 0;
    c.f = iv->tag == TS_IV_DOUBLE ? iv->u.d : 0;
    if (iv->tag == TS_IV_DEVICE)
      c.dev = iv->u.dev;
    ts_value *v = ts_pass_const_insert(pos, &c);
    if (v && type)
      ts_value_set_type(v, type);
    return v;
  }
  case TS_IV_STR:
    ok = ts_node_set_s(n, "value", iv->u.s->data, iv->u.s->len);
    if (!ty)
      ty = ts_type_leaf(TS_TY_STR);
    break;
  case TS_IV_TENSOR: {
    ts_tconst tc;
    ok = ts_cv_make_tconst(g, iv->u.t, borrow_tensors, &tc) && ts_node_set_t(n, "value", &tc);
    if (ok && !ty)
      ty = ts_cv_tensor_type(g, &tc);
    break;
  }
  case TS_IV_LIST: ok = ts_cv_set_list(n, iv->u.l, type, borrow_tensors, &ty); break;
  default: return NULL; /* tuples, dicts, objects, functions: not a constant here */
  }
  if (!ok || !ty)
    return NULL;
  ts_value_set_type(n->outputs[0], ty);
  ts_node_insert_before(n, pos);
  return n->outputs[0];
}
