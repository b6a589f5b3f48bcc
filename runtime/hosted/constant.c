/* runtime/hosted/constant.c: the value of a prim::Constant as an IValue, as
 * PyTorch's toIValue (torch/csrc/jit/ir/constants.cpp) reads a constant
 * node. The interpreter loads constants with it, and the passes that fold
 * values (constant propagation, freezing) read constants with it, so a
 * constant means the same thing everywhere. */
#include "runtime.h"

#include <string.h>

static ts_iv ts_k_ref(ts_iv_tag tag, void *o) {
  ts_iv v = {.u.o = o, .tag = tag};
  return v;
}

/* New tensor holding a copy of a tensor constant's bytes, with the same
 * geometry (strides and all). The constant's sizes and strides come from
 * files, so the extent they span is checked before anything is copied. */
ts_rt_tensor *ts_rt_tensor_from_tconst(ts_rt_ctx *ctx, const ts_tconst *tc) {
  if (!ts_rt_dtype_supported((ts_dtype)tc->dtype)) {
    const char *nm = ts_dtype_name((ts_dtype)tc->dtype);
    ts_rt_fail(ctx, "tensor constant of unsupported dtype %s", nm ? nm : "?");
    return NULL;
  }
  if (tc->rank < 0 || tc->rank > TS_RT_MAX_DIMS) {
    ts_rt_fail(ctx, "tensor constant of rank %d", (int)tc->rank);
    return NULL;
  }
  int64_t strides[TS_RT_MAX_DIMS];
  uint64_t extent = 1; /* elements from the first to the last, inclusive */
  bool empty = false;
  for (int32_t i = 0; i < tc->rank; i++) {
    int64_t sz = tc->sizes[i];
    strides[i] = tc->strides ? tc->strides[i] : 0;
    if (sz < 0 || strides[i] < 0) {
      ts_rt_fail(ctx, "tensor constant with a negative size or stride");
      return NULL;
    }
    if (sz == 0)
      empty = true;
  }
  if (!tc->strides)
    ts_rt_strides_contiguous(tc->rank, tc->sizes, strides);
  if (empty)
    extent = 0;
  else
    for (int32_t i = 0; i < tc->rank; i++) {
      uint64_t span = (uint64_t)(tc->sizes[i] - 1);
      if (strides[i] && span > (UINT64_MAX / 4 - extent) / (uint64_t)strides[i]) {
        ts_rt_fail(ctx, "tensor constant too large");
        return NULL;
      }
      extent += span * (uint64_t)strides[i];
    }
  size_t es = ts_dtype_size((ts_dtype)tc->dtype);
  if (extent > SIZE_MAX / 2 / es) {
    ts_rt_fail(ctx, "tensor constant too large");
    return NULL;
  }
  size_t nbytes = (size_t)extent * es;
  if (nbytes && !tc->data) {
    ts_rt_fail(ctx, "tensor constant without its data (a graph read from text)");
    return NULL;
  }
  ts_rt_storage *st = ts_rt_storage_new(ctx, nbytes, false);
  if (!st)
    return NULL;
  if (nbytes)
    memcpy(st->data, tc->data, nbytes);
  ts_rt_tensor *t = ts_rt_tensor_new_view(ctx, st, (ts_dtype)tc->dtype, 0, tc->rank, tc->sizes, strides);
  ts_rt_storage_release(st);
  return t;
}

/* The element type of a list (or optional list) type, NULL if unknown. */
static const ts_type *ts_k_list_elem(const ts_type *t) {
  if (t && t->kind == TS_TY_OPTIONAL)
    t = t->elems[0];
  return t && t->kind == TS_TY_LIST ? t->elems[0] : NULL;
}

/* One element of a list attribute as an IValue (new reference). */
static bool ts_k_list_item(ts_rt_ctx *ctx, const ts_attr *a, const ts_type *elem, size_t i, ts_iv *out) {
  switch (a->kind) {
  case TS_ATTR_INTS:
    *out = elem && elem->kind == TS_TY_BOOL ? ts_iv_bool(a->u.is[i] != 0) : ts_iv_int(a->u.is[i]);
    return true;
  case TS_ATTR_FLOATS: *out = ts_iv_double(a->u.fs[i]); return true;
  case TS_ATTR_STRS: {
    ts_rt_str *str = ts_rt_str_new(ctx, a->u.ss[i], strlen(a->u.ss[i]));
    if (!str)
      return false;
    *out = ts_k_ref(TS_IV_STR, str);
    return true;
  }
  default: {
    ts_rt_tensor *t = ts_rt_tensor_from_tconst(ctx, a->u.ts[i]);
    if (!t)
      return false;
    *out = ts_iv_tensor(t);
    return true;
  }
  }
}

bool ts_rt_iv_from_constant(ts_rt_ctx *ctx, const ts_node *n, ts_iv *out) {
  *out = ts_iv_none();
  if (!ts_node_is(n, TS_K_prim_Constant) || n->noutputs != 1)
    return ts_rt_fail(ctx, "malformed prim::Constant");
  const ts_type *ty = n->outputs[0]->type;
  const ts_attr *a = ts_node_attr(n, "value");
  if (ty->kind == TS_TY_FUNCTION) {
    const ts_attr *nm = ts_node_attr(n, "name");
    const char *q = ty->name ? ty->name : nm && nm->kind == TS_ATTR_STR ? nm->u.s : NULL;
    if (!q)
      return ts_rt_fail(ctx, "prim::Constant of a Function type without a name");
    out->tag = TS_IV_FUNCTION;
    out->u.fn = q;
    return true;
  }
  if (!a)
    return true; /* None */
  switch (a->kind) {
  case TS_ATTR_INT: *out = ty->kind == TS_TY_BOOL ? ts_iv_bool(a->u.i != 0) : ts_iv_int(a->u.i); return true;
  case TS_ATTR_FLOAT: *out = ts_iv_double(a->u.f); return true;
  case TS_ATTR_STR: {
    if (ty->kind == TS_TY_DEVICE) {
      ts_device dev;
      if (!ts_device_parse(a->u.s, a->len, &dev))
        return ts_rt_fail(ctx, "bad device constant '%s'", a->u.s);
      *out = ts_iv_device(dev);
      return true;
    }
    ts_rt_str *str = ts_rt_str_new(ctx, a->u.s, a->len);
    if (!str)
      return false;
    *out = ts_k_ref(TS_IV_STR, str);
    return true;
  }
  case TS_ATTR_TENSOR: {
    ts_rt_tensor *t = ts_rt_tensor_from_tconst(ctx, a->u.t);
    if (!t)
      return false;
    *out = ts_iv_tensor(t);
    return true;
  }
  case TS_ATTR_INTS:
  case TS_ATTR_FLOATS:
  case TS_ATTR_STRS:
  case TS_ATTR_TENSORS: {
    const ts_type *elem = ts_k_list_elem(ty);
    if (a->len > UINT32_MAX / 2)
      return ts_rt_fail(ctx, "list constant too long");
    ts_rt_list *l = ts_rt_list_new(ctx, elem, (uint32_t)a->len);
    if (!l)
      return false;
    for (size_t i = 0; i < a->len; i++) {
      ts_iv v;
      if (!ts_k_list_item(ctx, a, elem, i, &v) || !ts_rt_list_append(ctx, l, v)) {
        ts_iv_release(ts_k_ref(TS_IV_LIST, l));
        return false;
      }
    }
    *out = ts_k_ref(TS_IV_LIST, l);
    return true;
  }
  case TS_ATTR_GRAPH:
  case TS_ATTR_TYPE: break;
  }
  return ts_rt_fail(ctx, "prim::Constant with an attribute the interpreter cannot hold");
}
