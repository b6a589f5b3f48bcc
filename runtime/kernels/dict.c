/* runtime/kernels/dict.c: TorchScript's dict operations (register_prim_ops
 * dict_ops in PyTorch): lookup, insertion, removal, views as new lists, and
 * construction. Dicts keep insertion order; a removed key that comes back
 * goes to the end, as in Python. Keys are str, int, float, bool or Tensor
 * (by identity); the complex-key overloads are not implemented (the
 * runtime has no complex numbers). */
#include "args.h"
#include "runtime.h"

static ts_iv dc_iv_dict(ts_rt_dict *d) {
  ts_iv v = {.u.dict = d, .tag = TS_IV_DICT};
  return v;
}

static ts_iv dc_iv_list(ts_rt_list *l) {
  ts_iv v = {.u.l = l, .tag = TS_IV_LIST};
  return v;
}

static bool dc_arg_dict(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i, ts_rt_dict **out) {
  if (!ts_rt_arg_check(c, call, i)) return false;
  if (call->in[i].tag != TS_IV_DICT) return ts_rt_arg_bad(c, call, i, "Dict");
  *out = call->in[i].u.dict;
  return true;
}

/* The node's declared output type, if any. */
static const ts_type *dc_out_type(const ts_rt_call *call) {
  const ts_node *n = call->node;
  if (!n || n->noutputs == 0 || !n->outputs[0]->type) return NULL;
  return n->outputs[0]->type;
}

/* Element type of the output list: the node's, or `fallback`. */
static const ts_type *dc_out_elem(const ts_rt_call *call, const ts_type *fallback) {
  const ts_type *t = dc_out_type(call);
  if (t && t->kind == TS_TY_LIST && t->n == 1) return t->elems[0];
  return fallback;
}

/* "KeyError: <key as str()>". */
static bool dc_key_error(ts_rt_ctx *c, ts_iv key) {
  ts_buf b = {0};
  ts_iv_str(&b, key);
  ts_rt_fail(c, "KeyError: %s", b.data ? b.data : "");
  ts_buf_free(&b);
  return false;
}

/* A key argument must have a tag a dict can hold. */
static bool dc_arg_key(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i) {
  if (!ts_rt_arg_check(c, call, i)) return false;
  int32_t t = call->in[i].tag;
  if (t == TS_IV_STR || t == TS_IV_INT || t == TS_IV_DOUBLE || t == TS_IV_BOOL || t == TS_IV_TENSOR) return true;
  return ts_rt_arg_bad(c, call, i, "dict key (str, int, float, bool or Tensor)");
}

static bool dc_len(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_dict *d = NULL;
  if (!dc_arg_dict(c, call, 0, &d)) return false;
  call->out[0] = ts_iv_int(d->n);
  return true;
}

/* keys() / values(): new lists, in insertion order. */
static bool dc_view(ts_rt_ctx *c, ts_rt_call *call, bool keys) {
  ts_rt_dict *d = NULL;
  if (!dc_arg_dict(c, call, 0, &d)) return false;
  ts_rt_list *l = ts_rt_list_new(c, dc_out_elem(call, keys ? d->key_type : d->value_type), d->n);
  if (!l) return false;
  for (uint32_t i = 0; i < d->n; i++) {
    ts_iv v = keys ? d->keys[i] : d->values[i];
    ts_iv_retain(v);
    if (!ts_rt_list_append(c, l, v)) {
      ts_iv_release(dc_iv_list(l));
      return false;
    }
  }
  call->out[0] = dc_iv_list(l);
  return true;
}

static bool dc_keys(ts_rt_ctx *c, ts_rt_call *call) { return dc_view(c, call, true); }
static bool dc_values(ts_rt_ctx *c, ts_rt_call *call) { return dc_view(c, call, false); }

/* items(): a new list of (key, value) tuples. */
static bool dc_items(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_dict *d = NULL;
  if (!dc_arg_dict(c, call, 0, &d)) return false;
  ts_rt_list *l = ts_rt_list_new(c, dc_out_elem(call, NULL), d->n);
  if (!l) return false;
  for (uint32_t i = 0; i < d->n; i++) {
    ts_rt_tuple *t = ts_rt_tuple_new(c, 2);
    if (!t) {
      ts_iv_release(dc_iv_list(l));
      return false;
    }
    ts_iv_retain(d->keys[i]);
    ts_iv_retain(d->values[i]);
    t->items[0] = d->keys[i];
    t->items[1] = d->values[i];
    if (!ts_rt_list_append(c, l, (ts_iv){.u.tup = t, .tag = TS_IV_TUPLE})) {
      ts_iv_release(dc_iv_list(l));
      return false;
    }
  }
  call->out[0] = dc_iv_list(l);
  return true;
}

static bool dc_getitem(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_dict *d = NULL;
  if (!dc_arg_dict(c, call, 0, &d) || !dc_arg_key(c, call, 1)) return false;
  ts_iv *v = ts_rt_dict_find(d, call->in[1]);
  if (!v) return dc_key_error(c, call->in[1]);
  ts_iv_retain(*v);
  call->out[0] = *v;
  return true;
}

/* get(key) -> None when absent; get(key, default). */
static bool dc_get(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_dict *d = NULL;
  if (!dc_arg_dict(c, call, 0, &d) || !dc_arg_key(c, call, 1)) return false;
  ts_iv *v = ts_rt_dict_find(d, call->in[1]);
  ts_iv r = v ? *v : call->nin > 2 ? call->in[2] : ts_iv_none();
  ts_iv_retain(r);
  call->out[0] = r;
  return true;
}

static bool dc_setdefault(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_dict *d = NULL;
  if (!dc_arg_dict(c, call, 0, &d) || !dc_arg_key(c, call, 1) || !ts_rt_arg_check(c, call, 2)) return false;
  ts_iv *v = ts_rt_dict_find(d, call->in[1]);
  ts_iv r = v ? *v : call->in[2];
  if (!v && !ts_rt_dict_set(c, d, call->in[1], call->in[2])) return false;
  ts_iv_retain(r);
  call->out[0] = r;
  return true;
}

static bool dc_setitem(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_dict *d = NULL;
  if (!dc_arg_dict(c, call, 0, &d) || !dc_arg_key(c, call, 1) || !ts_rt_arg_check(c, call, 2)) return false;
  return ts_rt_dict_set(c, d, call->in[1], call->in[2]);
}

static bool dc_contains(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_dict *d = NULL;
  if (!dc_arg_dict(c, call, 0, &d) || !dc_arg_key(c, call, 1)) return false;
  call->out[0] = ts_iv_bool(ts_rt_dict_find(d, call->in[1]) != NULL);
  return true;
}

/* pop(key) (KeyError when absent) and pop(key, default). */
static bool dc_pop(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_dict *d = NULL;
  if (!dc_arg_dict(c, call, 0, &d) || !dc_arg_key(c, call, 1)) return false;
  ts_iv v = ts_iv_none();
  if (ts_rt_dict_remove(d, call->in[1], &v)) {
    call->out[0] = v;
    return true;
  }
  if (call->nin < 3) return dc_key_error(c, call->in[1]);
  ts_iv_retain(call->in[2]);
  call->out[0] = call->in[2];
  return true;
}

static bool dc_delete(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_dict *d = NULL;
  if (!dc_arg_dict(c, call, 0, &d) || !dc_arg_key(c, call, 1)) return false;
  if (!ts_rt_dict_remove(d, call->in[1], NULL)) return dc_key_error(c, call->in[1]);
  return true;
}

/* Inserts or replaces every entry of src into dst, in src's order (src may
 * be dst: its size is read once and replacing keeps positions). */
static bool dc_update_from(ts_rt_ctx *c, ts_rt_dict *dst, const ts_rt_dict *src) {
  uint32_t n = src->n;
  for (uint32_t i = 0; i < n; i++)
    if (!ts_rt_dict_set(c, dst, src->keys[i], src->values[i])) return false;
  return true;
}

static bool dc_update(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_dict *d = NULL, *src = NULL;
  return dc_arg_dict(c, call, 0, &d) && dc_arg_dict(c, call, 1, &src) && dc_update_from(c, d, src);
}

/* A new empty dict typed from the node's output type, else as given. */
static ts_rt_dict *dc_new(ts_rt_ctx *c, const ts_rt_call *call, const ts_type *key, const ts_type *value) {
  const ts_type *t = dc_out_type(call);
  if (t && t->kind == TS_TY_DICT && t->n == 2) {
    key = t->elems[0];
    value = t->elems[1];
  }
  return ts_rt_dict_new(c, key, value);
}

/* dict(d): a shallow copy. */
static bool dc_copy(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_dict *d = NULL;
  if (!dc_arg_dict(c, call, 0, &d)) return false;
  ts_rt_dict *r = dc_new(c, call, d->key_type, d->value_type);
  if (!r) return false;
  if (!dc_update_from(c, r, d)) {
    ts_iv_release(dc_iv_dict(r));
    return false;
  }
  call->out[0] = dc_iv_dict(r);
  return true;
}

/* dict([(k, v), ...]): later pairs replace earlier ones. */
static bool dc_from_pairs(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_list *l = NULL;
  if (!ts_rt_arg_list(c, call, 0, &l)) return false;
  const ts_type *key = NULL, *value = NULL;
  if (l->elem && l->elem->kind == TS_TY_TUPLE && l->elem->n == 2) {
    key = l->elem->elems[0];
    value = l->elem->elems[1];
  }
  ts_rt_dict *r = dc_new(c, call, key, value);
  if (!r) return false;
  for (uint32_t i = 0; i < l->n; i++) {
    ts_iv it = l->items[i];
    if (it.tag != TS_IV_TUPLE || it.u.tup->n != 2) {
      ts_iv_release(dc_iv_dict(r));
      return ts_rt_fail(c, "dict(): expected a list of (key, value) tuples");
    }
    if (!ts_rt_dict_set(c, r, it.u.tup->items[0], it.u.tup->items[1])) {
      ts_iv_release(dc_iv_dict(r));
      return false;
    }
  }
  call->out[0] = dc_iv_dict(r);
  return true;
}

/* dict(): an empty Dict(str, Tensor). */
static bool dc_empty(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_dict *r = dc_new(c, call, ts_type_leaf(TS_TY_STR), ts_type_leaf(TS_TY_TENSOR));
  if (!r) return false;
  call->out[0] = dc_iv_dict(r);
  return true;
}

#define DC_KEYED(k)                                                                                             \
  {"aten::len.Dict_" k, dc_len}, {"aten::keys." k, dc_keys}, {"aten::values." k, dc_values},                   \
      {"aten::items." k, dc_items}, {"aten::__getitem__.Dict_" k, dc_getitem}, {"aten::get." k, dc_get},     \
      {"aten::get.default_" k, dc_get}, {"aten::setdefault." k, dc_setdefault},                              \
      {"aten::Delete.Dict_" k, dc_delete}, {"aten::pop.Dict_" k, dc_pop},                                    \
      {"aten::pop.Dict_default_" k, dc_pop}, {"aten::update." k, dc_update},                                 \
      {"aten::__contains__." k, dc_contains}, {"aten::_set_item." k, dc_setitem}, {"aten::dict." k, dc_from_pairs}, \
      {"aten::dict.Dict_" k, dc_copy}, {"aten::copy.Dict_" k, dc_copy}

const ts_rt_kernel_def ts_rt_kernels_dict[] = {
    DC_KEYED("str"), DC_KEYED("int"), DC_KEYED("bool"), DC_KEYED("float"), DC_KEYED("Tensor"),
    {"aten::dict", dc_empty},
    {NULL, NULL},
};
