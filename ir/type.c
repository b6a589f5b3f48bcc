/* ir/type.c: TorchScript types, their equality, subtyping and spelling. */
#include "ir.h"

#include <string.h>

static const char *const ts_dtype_names[TS_DT_COUNT] = {
    "Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double",
    "ComplexHalf", "ComplexFloat", "ComplexDouble", "Bool", "QInt8", "QUInt8", "QInt32", "BFloat16",
};

static const unsigned char ts_dtype_sizes[TS_DT_COUNT] = {1, 1, 2, 4, 8, 2, 4, 8, 4, 8, 16, 1, 1, 1, 4, 2};

const char *ts_dtype_name(ts_dtype dt) { return dt >= 0 && dt < TS_DT_COUNT ? ts_dtype_names[dt] : NULL; }

size_t ts_dtype_size(ts_dtype dt) { return dt >= 0 && dt < TS_DT_COUNT ? ts_dtype_sizes[dt] : 0; }

ts_dtype ts_dtype_from_name(const char *s, size_t n) {
  for (int i = 0; i < TS_DT_COUNT; i++)
    if (strlen(ts_dtype_names[i]) == n && memcmp(ts_dtype_names[i], s, n) == 0)
      return (ts_dtype)i;
  return TS_DT_NONE;
}

static const char *const ts_device_names[] = {"cpu", "cuda", "meta"};

bool ts_device_parse(const char *s, size_t n, ts_device *out) {
  size_t base = n;
  for (size_t i = 0; i < n; i++)
    if (s[i] == ':') {
      base = i;
      break;
    }
  out->type = TS_DEV_NONE;
  out->index = -1;
  for (int t = 0; t < 3; t++)
    if (strlen(ts_device_names[t]) == base && memcmp(s, ts_device_names[t], base) == 0)
      out->type = (int8_t)t;
  if (out->type == TS_DEV_NONE)
    return false;
  if (base == n)
    return true;
  if (base + 1 == n)
    return false;
  int idx = 0;
  for (size_t i = base + 1; i < n; i++) {
    if (s[i] < '0' || s[i] > '9' || idx > 1000)
      return false;
    idx = idx * 10 + (s[i] - '0');
  }
  out->index = (int16_t)idx;
  return true;
}

void ts_device_print(ts_buf *b, ts_device d) {
  ts_buf_puts(b, d.type >= 0 && d.type < 3 ? ts_device_names[d.type] : "?");
  if (d.index >= 0)
    ts_buf_printf(b, ":%d", d.index);
}

static const char *const ts_leaf_names[TS_TY_LEAF_COUNT] = {
    [TS_TY_ANY] = "Any",
    [TS_TY_TENSOR] = "Tensor",
    [TS_TY_INT] = "int",
    [TS_TY_FLOAT] = "float",
    [TS_TY_COMPLEX] = "complex",
    [TS_TY_BOOL] = "bool",
    [TS_TY_STR] = "str",
    [TS_TY_NONE] = "NoneType",
    [TS_TY_DEVICE] = "Device",
    [TS_TY_NUMBER] = "Scalar",
    [TS_TY_LAYOUT] = "Layout",
    [TS_TY_SCALARTYPE] = "ScalarType",
    [TS_TY_MEMORYFORMAT] = "MemoryFormat",
    [TS_TY_GENERATOR] = "Generator",
    [TS_TY_STORAGE] = "Storage",
    [TS_TY_STREAM] = "Stream",
    [TS_TY_FUNCTION] = "Function",
    [TS_TY_CAPSULE] = "Capsule",
    [TS_TY_QSCHEME] = "QScheme",
    [TS_TY_ANYLIST] = "AnyList",
    [TS_TY_ANYTUPLE] = "AnyTuple",
    [TS_TY_ANYCLASS] = "AnyClassType",
    [TS_TY_ANYENUM] = "AnyEnumType",
    [TS_TY_SYMINT] = "SymInt",
};

static const ts_type ts_leaves[TS_TY_LEAF_COUNT] = {
#define L(k) [k] = {.kind = k}
    L(TS_TY_ANY), L(TS_TY_TENSOR), L(TS_TY_INT), L(TS_TY_FLOAT), L(TS_TY_COMPLEX), L(TS_TY_BOOL),
    L(TS_TY_STR), L(TS_TY_NONE), L(TS_TY_DEVICE), L(TS_TY_NUMBER), L(TS_TY_LAYOUT), L(TS_TY_SCALARTYPE),
    L(TS_TY_MEMORYFORMAT), L(TS_TY_GENERATOR), L(TS_TY_STORAGE), L(TS_TY_STREAM), L(TS_TY_FUNCTION),
    L(TS_TY_CAPSULE), L(TS_TY_QSCHEME), L(TS_TY_ANYLIST), L(TS_TY_ANYTUPLE), L(TS_TY_ANYCLASS),
    L(TS_TY_ANYENUM), L(TS_TY_SYMINT),
#undef L
};

const char *ts_type_leaf_name(ts_type_kind k) { return k < TS_TY_LEAF_COUNT ? ts_leaf_names[k] : NULL; }

const ts_type *ts_type_leaf(ts_type_kind k) { return k < TS_TY_LEAF_COUNT ? &ts_leaves[k] : NULL; }

static ts_type *ts_type_make(ts_arena *a, ts_type_kind k, uint32_t n, const ts_type *const *elems) {
  for (uint32_t i = 0; i < n; i++)
    if (!elems[i])
      return NULL;
  ts_type *t = ts_arena_alloc(a, sizeof *t);
  const ts_type **e = n ? ts_arena_alloc(a, n * sizeof *e) : NULL;
  if (!t || (n && !e))
    return NULL;
  if (n)
    memcpy(e, elems, n * sizeof *e);
  t->kind = k;
  t->n = n;
  t->elems = e;
  return t;
}

const ts_type *ts_type_optional(ts_arena *a, const ts_type *e) { return ts_type_make(a, TS_TY_OPTIONAL, 1, &e); }
const ts_type *ts_type_list(ts_arena *a, const ts_type *e) { return ts_type_make(a, TS_TY_LIST, 1, &e); }
const ts_type *ts_type_future(ts_arena *a, const ts_type *e) { return ts_type_make(a, TS_TY_FUTURE, 1, &e); }
const ts_type *ts_type_rref(ts_arena *a, const ts_type *e) { return ts_type_make(a, TS_TY_RREF, 1, &e); }

const ts_type *ts_type_dict(ts_arena *a, const ts_type *k, const ts_type *v) {
  const ts_type *kv[2] = {k, v};
  return ts_type_make(a, TS_TY_DICT, 2, kv);
}

const ts_type *ts_type_tuple(ts_arena *a, uint32_t n, const ts_type *const *elems) {
  return ts_type_make(a, TS_TY_TUPLE, n, elems);
}

const ts_type *ts_type_union(ts_arena *a, uint32_t n, const ts_type *const *elems) {
  return ts_type_make(a, TS_TY_UNION, n, elems);
}

static const ts_type *ts_type_named(ts_arena *a, ts_type_kind k, const char *s, size_t len) {
  ts_type *t = ts_type_make(a, k, 0, NULL);
  if (!t || !(t->name = ts_arena_strndup(a, s, len)))
    return NULL;
  return t;
}

const ts_type *ts_type_class(ts_arena *a, const char *s, size_t len) { return ts_type_named(a, TS_TY_CLASS, s, len); }
const ts_type *ts_type_var(ts_arena *a, const char *s, size_t len) { return ts_type_named(a, TS_TY_VAR, s, len); }
const ts_type *ts_type_function(ts_arena *a, const char *s, size_t len) {
  return ts_type_named(a, TS_TY_FUNCTION, s, len);
}

const ts_type *ts_type_tensor(ts_arena *a, const ts_tensor_info *info) {
  if (!info)
    return &ts_leaves[TS_TY_TENSOR];
  ts_type *t = ts_type_make(a, TS_TY_TENSOR, 0, NULL);
  ts_tensor_info *ti = ts_arena_alloc(a, sizeof *ti);
  if (!t || !ti)
    return NULL;
  *ti = *info;
  if (info->rank > 0) {
    int64_t *sz = ts_arena_grow(a, NULL, 0, (size_t)info->rank, sizeof *sz);
    if (!sz)
      return NULL;
    if (info->sizes)
      memcpy(sz, info->sizes, (size_t)info->rank * sizeof *sz);
    else
      for (int32_t i = 0; i < info->rank; i++)
        sz[i] = -1;
    ti->sizes = sz;
    if (info->strides) {
      int64_t *st = ts_arena_grow(a, NULL, 0, (size_t)info->rank, sizeof *st);
      if (!st)
        return NULL;
      memcpy(st, info->strides, (size_t)info->rank * sizeof *st);
      ti->strides = st;
    }
  } else {
    ti->sizes = NULL;
    ti->strides = NULL;
  }
  t->tensor = ti;
  return t;
}

const ts_type *ts_type_clone(ts_arena *a, const ts_type *t) {
  if (!t || t->kind < TS_TY_LEAF_COUNT) {
    if (t && t->kind == TS_TY_TENSOR && t->tensor)
      return ts_type_tensor(a, t->tensor);
    if (t && t->kind == TS_TY_FUNCTION && t->name)
      return ts_type_function(a, t->name, strlen(t->name));
    return t ? &ts_leaves[t->kind] : NULL;
  }
  const ts_type *elems[64];
  const ts_type **e = t->n <= 64 ? elems : ts_arena_alloc(a, t->n * sizeof *e);
  if (!e)
    return NULL;
  for (uint32_t i = 0; i < t->n; i++)
    if (!(e[i] = ts_type_clone(a, t->elems[i])))
      return NULL;
  ts_type *c = ts_type_make(a, t->kind, t->n, e);
  if (!c)
    return NULL;
  if (t->name && !(c->name = ts_arena_strdup(a, t->name)))
    return NULL;
  if (t->fields) {
    const char **f = ts_arena_alloc(a, t->n * sizeof *f);
    if (!f)
      return NULL;
    for (uint32_t i = 0; i < t->n; i++)
      if (!(f[i] = ts_arena_strdup(a, t->fields[i])))
        return NULL;
    c->fields = f;
  }
  return c;
}

static bool ts_tensor_info_equal(const ts_tensor_info *a, const ts_tensor_info *b) {
  static const ts_tensor_info plain = {.dtype = TS_DT_NONE, .requires_grad = -1, .undefined = -1,
                                       .device = {TS_DEV_NONE, -1}, .rank = -1};
  if (!a)
    a = &plain;
  if (!b)
    b = &plain;
  if (a->dtype != b->dtype || a->requires_grad != b->requires_grad || a->undefined != b->undefined ||
      a->device.type != b->device.type || a->device.index != b->device.index || a->rank != b->rank)
    return false;
  if (a->rank > 0 && memcmp(a->sizes, b->sizes, (size_t)a->rank * sizeof *a->sizes) != 0)
    return false;
  if (!a->strides != !b->strides)
    return false;
  return !a->strides || memcmp(a->strides, b->strides, (size_t)a->rank * sizeof *a->strides) == 0;
}

bool ts_type_equal(const ts_type *a, const ts_type *b) {
  if (a == b)
    return true;
  if (!a || !b || a->kind != b->kind || a->n != b->n)
    return false;
  if (a->kind == TS_TY_TENSOR)
    return ts_tensor_info_equal(a->tensor, b->tensor);
  if ((a->name || b->name) && (!a->name || !b->name || strcmp(a->name, b->name) != 0))
    return false;
  if (!a->fields != !b->fields)
    return false;
  for (uint32_t i = 0; i < a->n; i++) {
    if (!ts_type_equal(a->elems[i], b->elems[i]))
      return false;
    if (a->fields && strcmp(a->fields[i], b->fields[i]) != 0)
      return false;
  }
  return true;
}

/* A refined tensor is a subtype of a less refined one when every property the
 * super type knows is the same in the sub type. */
static bool ts_tensor_is_subtype(const ts_tensor_info *s, const ts_tensor_info *p) {
  if (!p)
    return true;
  if (!s)
    return ts_tensor_info_equal(NULL, p);
  if (p->dtype != TS_DT_NONE && p->dtype != s->dtype)
    return false;
  if (p->requires_grad >= 0 && p->requires_grad != s->requires_grad)
    return false;
  if (p->undefined >= 0 && p->undefined != s->undefined)
    return false;
  if (p->device.type != TS_DEV_NONE && (p->device.type != s->device.type || p->device.index != s->device.index))
    return false;
  if (p->rank >= 0) {
    if (p->rank != s->rank)
      return false;
    /* a symbolic size (<= -2) is one particular unknown: only the same
     * symbol fits it */
    for (int32_t i = 0; i < p->rank; i++)
      if (p->sizes[i] != -1 && p->sizes[i] != s->sizes[i])
        return false;
    if (p->strides && (!s->strides || memcmp(p->strides, s->strides, (size_t)p->rank * sizeof *p->strides)))
      return false;
  }
  return true;
}

bool ts_type_is_subtype(const ts_type *s, const ts_type *p) {
  if (!s || !p)
    return false;
  if (p->kind == TS_TY_ANY || s == p)
    return true;
  /* a union fits wherever each of its members fits (PyTorch's
   * UnionType::isSubtypeOf): torch.functional.norm passes its p as a
   * Union[number] where aten::norm wants a Scalar? */
  if (s->kind == TS_TY_UNION && p->kind != TS_TY_UNION) {
    for (uint32_t i = 0; i < s->n; i++)
      if (!ts_type_is_subtype(s->elems[i], p))
        return false;
    return s->n > 0;
  }
  switch (p->kind) {
  case TS_TY_TENSOR:
    return s->kind == TS_TY_TENSOR && ts_tensor_is_subtype(s->tensor, p->tensor);
  case TS_TY_NUMBER:
    return s->kind == TS_TY_NUMBER || s->kind == TS_TY_INT || s->kind == TS_TY_FLOAT || s->kind == TS_TY_COMPLEX;
  case TS_TY_OPTIONAL:
    if (s->kind == TS_TY_NONE)
      return true;
    if (s->kind == TS_TY_OPTIONAL)
      return ts_type_is_subtype(s->elems[0], p->elems[0]);
    return ts_type_is_subtype(s, p->elems[0]);
  case TS_TY_UNION:
    if (s->kind == TS_TY_UNION) {
      for (uint32_t i = 0; i < s->n; i++)
        if (!ts_type_is_subtype(s->elems[i], p))
          return false;
      return true;
    }
    for (uint32_t i = 0; i < p->n; i++)
      if (ts_type_is_subtype(s, p->elems[i]))
        return true;
    return false;
  case TS_TY_TUPLE:
    if (s->kind != TS_TY_TUPLE || s->n != p->n)
      return false;
    for (uint32_t i = 0; i < s->n; i++)
      if (!ts_type_is_subtype(s->elems[i], p->elems[i]))
        return false;
    return true;
  case TS_TY_ANYLIST:
    return s->kind == TS_TY_LIST || s->kind == TS_TY_ANYLIST;
  case TS_TY_ANYTUPLE:
    return s->kind == TS_TY_TUPLE || s->kind == TS_TY_ANYTUPLE;
  case TS_TY_ANYCLASS:
    return s->kind == TS_TY_CLASS || s->kind == TS_TY_ANYCLASS;
  case TS_TY_ANYENUM:
    return s->kind == TS_TY_ANYENUM; /* enum types are not modelled yet */
  case TS_TY_SYMINT:
    return s->kind == TS_TY_INT || s->kind == TS_TY_SYMINT;
  case TS_TY_FUNCTION:
    /* the plain Function type accepts every particular function */
    return s->kind == TS_TY_FUNCTION && (!p->name || ts_type_equal(s, p));
  case TS_TY_LIST:
    /* lists are invariant, but PyTorch lets int[] stand for SymInt[] */
    if (s->kind == TS_TY_LIST && p->elems[0]->kind == TS_TY_SYMINT)
      return s->elems[0]->kind == TS_TY_INT || s->elems[0]->kind == TS_TY_SYMINT;
    return ts_type_equal(s, p);
  case TS_TY_FUTURE:
  case TS_TY_RREF:
    /* covariant, like PyTorch's Future */
    return s->kind == p->kind && ts_type_is_subtype(s->elems[0], p->elems[0]);
  default:
    /* lists and dicts are invariant */
    return ts_type_equal(s, p);
  }
}

int ts_type_isinstance_static(const ts_type *vt, const ts_type *t) {
  if (ts_type_is_subtype(vt, t))
    return 1;
  if (vt->kind == TS_TY_ANY)
    return -1;
  if (vt->kind == TS_TY_UNION || vt->kind == TS_TY_OPTIONAL) {
    /* some member may be t (or None may be, for an Optional) */
    if (vt->kind == TS_TY_OPTIONAL && t->kind == TS_TY_NONE)
      return -1;
    for (uint32_t i = 0; i < vt->n; i++)
      if (ts_type_isinstance_static(vt->elems[i], t) != 0)
        return -1;
    return 0;
  }
  return 0;
}

/* Writes a Tensor type the way PyTorch's operator<<(Type) does at its "Full"
 * verbosity: "Float(2, *, strides=[3, 1], requires_grad=0, device=cpu)";
 * symbolic sizes (<= -2) as its "Symbolic" verbosity does: "SS(-2)". */
static void ts_tensor_print(ts_buf *b, const ts_tensor_info *ti) {
  if (ti->dtype != TS_DT_NONE) {
    ts_buf_puts(b, ts_dtype_name((ts_dtype)ti->dtype));
    if (ti->rank < 0)
      ts_buf_puts(b, "Tensor");
  } else {
    ts_buf_puts(b, "Tensor");
  }
  int parts = 0;
  if (ti->rank >= 0) {
    ts_buf_putc(b, '(');
    for (int32_t i = 0; i < ti->rank; i++, parts++) {
      if (i)
        ts_buf_puts(b, ", ");
      if (ti->sizes[i] >= 0)
        ts_buf_printf(b, "%lld", (long long)ti->sizes[i]);
      else if (ti->sizes[i] <= -2)
        ts_buf_printf(b, "SS(%lld)", (long long)ti->sizes[i]); /* a symbol, as ShapeSymbol prints */
      else
        ts_buf_putc(b, '*');
    }
    if (ti->rank > 0 && ti->strides) {
      ts_buf_puts(b, ", strides=[");
      for (int32_t i = 0; i < ti->rank; i++)
        ts_buf_printf(b, "%s%lld", i ? ", " : "", (long long)ti->strides[i]);
      ts_buf_putc(b, ']');
    }
    if (ti->requires_grad >= 0)
      ts_buf_printf(b, "%srequires_grad=%d", parts++ ? ", " : "", ti->requires_grad);
    if (ti->device.type != TS_DEV_NONE) {
      ts_buf_puts(b, parts++ ? ", device=" : "device=");
      ts_device_print(b, ti->device);
    }
    ts_buf_putc(b, ')');
  } else {
    if (ti->requires_grad >= 0)
      ts_buf_printf(b, "(requires_grad=%d", ti->requires_grad), parts++;
    if (ti->device.type != TS_DEV_NONE) {
      ts_buf_puts(b, parts++ ? ", device=" : "(device=");
      ts_device_print(b, ti->device);
    }
    if (parts)
      ts_buf_putc(b, ')');
  }
  if (ti->undefined == 1)
    ts_buf_puts(b, "[Undefined]");
}

void ts_type_print(ts_buf *b, const ts_type *t) {
  if (!t) {
    ts_buf_puts(b, "<null type>");
    return;
  }
  switch (t->kind) {
  case TS_TY_TENSOR:
    if (t->tensor)
      ts_tensor_print(b, t->tensor);
    else
      ts_buf_puts(b, "Tensor");
    return;
  case TS_TY_LIST:
    ts_type_print(b, t->elems[0]);
    ts_buf_puts(b, "[]");
    return;
  case TS_TY_OPTIONAL:
    ts_type_print(b, t->elems[0]);
    ts_buf_putc(b, '?');
    return;
  case TS_TY_TUPLE:
    if (t->fields)
      ts_buf_puts(b, "NamedTuple");
    ts_buf_putc(b, '(');
    for (uint32_t i = 0; i < t->n; i++) {
      if (i)
        ts_buf_puts(b, ", ");
      if (t->fields)
        ts_buf_printf(b, "%s : ", t->fields[i]);
      ts_type_print(b, t->elems[i]);
    }
    ts_buf_putc(b, ')');
    return;
  case TS_TY_DICT:
  case TS_TY_FUTURE:
  case TS_TY_RREF:
  case TS_TY_UNION:
    ts_buf_puts(b, t->kind == TS_TY_DICT ? "Dict(" : t->kind == TS_TY_FUTURE ? "Future(" : t->kind == TS_TY_RREF ? "RRef(" : "Union(");
    for (uint32_t i = 0; i < t->n; i++) {
      if (i)
        ts_buf_puts(b, ", ");
      ts_type_print(b, t->elems[i]);
    }
    ts_buf_putc(b, ')');
    return;
  case TS_TY_CLASS:
  case TS_TY_VAR:
    ts_buf_puts(b, t->name);
    return;
  default:
    ts_buf_puts(b, t->kind < TS_TY_LEAF_COUNT ? ts_leaf_names[t->kind] : "<bad type>");
  }
}

static bool ts_ty_has_refined_tensor(const ts_type *t) {
  if (t->kind == TS_TY_TENSOR)
    return t->tensor != NULL;
  for (uint32_t i = 0; i < t->n; i++)
    if (ts_ty_has_refined_tensor(t->elems[i]))
      return true;
  return false;
}

/* PyTorch's unshapedType. */
const ts_type *ts_type_unshaped(ts_arena *a, const ts_type *t) {
  if (!ts_ty_has_refined_tensor(t))
    return t;
  if (t->kind == TS_TY_TENSOR)
    return ts_type_leaf(TS_TY_TENSOR);
  const ts_type *e[64];
  if (t->n > 64)
    return NULL;
  for (uint32_t i = 0; i < t->n; i++)
    if (!(e[i] = ts_type_unshaped(a, t->elems[i])))
      return NULL;
  switch (t->kind) {
  case TS_TY_OPTIONAL: return ts_type_optional(a, e[0]);
  case TS_TY_LIST: return ts_type_list(a, e[0]);
  case TS_TY_FUTURE: return ts_type_future(a, e[0]);
  case TS_TY_RREF: return ts_type_rref(a, e[0]);
  case TS_TY_DICT: return ts_type_dict(a, e[0], e[1]);
  case TS_TY_UNION: return ts_type_union(a, t->n, e);
  case TS_TY_TUPLE: return t->fields ? t : ts_type_tuple(a, t->n, e);
  default: return t;
  }
}

const ts_type *ts_type_merge_tensors(ts_arena *a, const ts_type *x, const ts_type *y) {
  const ts_tensor_info *p = x->tensor, *q = y->tensor;
  if (!p || !q)
    return ts_type_leaf(TS_TY_TENSOR);
  int64_t sizes[64];
  ts_tensor_info r = {.dtype = p->dtype == q->dtype ? p->dtype : TS_DT_NONE,
                      .requires_grad = p->requires_grad == q->requires_grad ? p->requires_grad : -1,
                      .undefined = p->undefined == q->undefined ? p->undefined : -1,
                      .device = {TS_DEV_NONE, -1},
                      .rank = p->rank == q->rank && p->rank <= 64 ? p->rank : -1};
  if (p->device.type == q->device.type && p->device.index == q->device.index)
    r.device = p->device;
  if (r.rank > 0) {
    for (int32_t i = 0; i < r.rank; i++)
      sizes[i] = p->sizes[i] == q->sizes[i] ? p->sizes[i] : -1;
    r.sizes = sizes;
    if (p->strides && q->strides && memcmp(p->strides, q->strides, (size_t)r.rank * sizeof *p->strides) == 0)
      r.strides = p->strides;
  }
  if (r.dtype == TS_DT_NONE && r.requires_grad < 0 && r.undefined < 0 && r.device.type == TS_DEV_NONE && r.rank < 0)
    return ts_type_leaf(TS_TY_TENSOR);
  return ts_type_tensor(a, &r);
}

/* unifyTypes (default_to_union off), in PyTorch 1.13's order: subtyping,
 * tensor merge, None with T, Optional elements, tuples element-wise, then
 * subtyping again with tensors unshaped (mutable containers). */
const ts_type *ts_type_unify(ts_arena *a, const ts_type *x, const ts_type *y, bool *oom) {
  if (ts_type_is_subtype(x, y))
    return y;
  if (ts_type_is_subtype(y, x))
    return x;
  const ts_type *r = NULL;
  if (x->kind == TS_TY_TENSOR && y->kind == TS_TY_TENSOR) {
    r = ts_type_merge_tensors(a, x, y);
  } else if (x->kind == TS_TY_NONE) {
    r = ts_type_optional(a, y);
  } else if (y->kind == TS_TY_NONE) {
    r = ts_type_optional(a, x);
  } else if (x->kind == TS_TY_OPTIONAL || y->kind == TS_TY_OPTIONAL) {
    const ts_type *ex = x->kind == TS_TY_OPTIONAL ? x->elems[0] : x;
    const ts_type *ey = y->kind == TS_TY_OPTIONAL ? y->elems[0] : y;
    const ts_type *u = ts_type_unify(a, ex, ey, oom);
    if (!u)
      return NULL;
    r = u->kind == TS_TY_OPTIONAL ? u : ts_type_optional(a, u);
  } else if (x->kind == TS_TY_TUPLE && y->kind == TS_TY_TUPLE && x->n == y->n && x->n <= 64 && !x->fields &&
             !y->fields) {
    const ts_type *e[64];
    for (uint32_t i = 0; i < x->n; i++)
      if (!(e[i] = ts_type_unify(a, x->elems[i], y->elems[i], oom)))
        return NULL;
    r = ts_type_tuple(a, x->n, e);
  } else {
    const ts_type *ux = ts_type_unshaped(a, x), *uy = ts_type_unshaped(a, y);
    if (!ux || !uy) {
      *oom = true;
      return NULL;
    }
    if (ts_type_is_subtype(ux, uy))
      return uy;
    if (ts_type_is_subtype(uy, ux))
      return ux;
    return NULL;
  }
  if (!r)
    *oom = true;
  return r;
}
