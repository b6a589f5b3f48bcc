/* runtime/ivalue.c: IValues and the refcounted containers they hold (str,
 * list, tuple, dict, object), Python's == over them, and their printing as
 * TorchScript's IValue printer (prim::Print, aten::str) writes them. The
 * containers come from ts_rt_malloc (runtime/alloc.c); printing's text
 * goes to a ts_buf, which is the C library's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

/* --------------------------------------------------------------- release */

/* A stack of objects whose refcount reached zero, so that freeing a deep
 * structure (a list of lists of ...) does not recurse. */
typedef struct ts_v_stack {
  ts_rt_obj **items;
  size_t n, cap;
  ts_rt_obj *small[32];
} ts_v_stack;

static void ts_v_free_obj(ts_rt_obj *o, ts_v_stack *st);

/* Drops one reference to o; at zero, frees it now (leaves) or queues it
 * (containers). */
static void ts_v_drop(ts_rt_obj *o, ts_v_stack *st) {
  if (!o)
    return;
  switch ((ts_rt_obj_kind)o->kind) {
  case TS_RT_OBJ_STORAGE: ts_rt_storage_release((ts_rt_storage *)o); return;
  case TS_RT_OBJ_TENSOR: ts_rt_tensor_release((ts_rt_tensor *)o); return;
  case TS_RT_OBJ_STR:
    if (ts_rt_obj_unref(o))
      ts_rt_free(o);
    return;
  default: break;
  }
  if (!ts_rt_obj_unref(o))
    return;
  if (st->n == st->cap) {
    size_t ncap = st->cap * 2;
    ts_rt_obj **ni = NULL;
    if (st->items == st->small) {
      ni = ts_rt_malloc(ncap * sizeof *ni);
      if (ni)
        memcpy(ni, st->small, st->n * sizeof *ni);
    } else {
      ni = ts_rt_realloc(st->items, ncap * sizeof *ni);
    }
    if (!ni) {
      /* No memory for the queue: free this one by recursion instead. */
      ts_v_free_obj(o, st);
      return;
    }
    st->items = ni;
    st->cap = ncap;
  }
  st->items[st->n++] = o;
}

static void ts_v_drop_iv(ts_iv v, ts_v_stack *st) {
  if (ts_iv_is_ref(v))
    ts_v_drop(v.u.o, st);
}

/* Frees a container whose refcount reached zero, dropping its items. */
static void ts_v_free_obj(ts_rt_obj *o, ts_v_stack *st) {
  switch ((ts_rt_obj_kind)o->kind) {
  case TS_RT_OBJ_LIST: {
    ts_rt_list *l = (ts_rt_list *)o;
    for (uint32_t i = 0; i < l->n; i++)
      ts_v_drop_iv(l->items[i], st);
    ts_rt_free(l->items);
    break;
  }
  case TS_RT_OBJ_TUPLE: {
    ts_rt_tuple *t = (ts_rt_tuple *)o;
    for (uint32_t i = 0; i < t->n; i++)
      ts_v_drop_iv(t->items[i], st);
    break;
  }
  case TS_RT_OBJ_DICT: {
    ts_rt_dict *d = (ts_rt_dict *)o;
    for (uint32_t i = 0; i < d->n; i++) {
      ts_v_drop_iv(d->keys[i], st);
      ts_v_drop_iv(d->values[i], st);
    }
    ts_rt_free(d->keys);
    ts_rt_free(d->values);
    ts_rt_free(d->index);
    break;
  }
  case TS_RT_OBJ_OBJECT: {
    ts_rt_object *ob = (ts_rt_object *)o;
    for (uint32_t i = 0; i < ob->n; i++)
      ts_v_drop_iv(ob->attrs[i], st);
    break;
  }
  default: break;
  }
  ts_rt_free(o);
}

static void ts_v_release_obj(ts_rt_obj *o) {
  ts_v_stack st;
  st.items = st.small;
  st.n = 0;
  st.cap = sizeof st.small / sizeof st.small[0];
  ts_v_drop(o, &st);
  while (st.n)
    ts_v_free_obj(st.items[--st.n], &st);
  if (st.items != st.small)
    ts_rt_free(st.items);
}

void ts_iv_retain(ts_iv v) {
  if (ts_iv_is_ref(v) && v.u.o)
    ts_rt_obj_ref(v.u.o);
}

/* Sets (on) or clears the TS_RT_RC_SHARED mark of v and what it holds;
 * false at a dict or an object, which are left unmarked. */
static bool ts_v_mark(ts_iv v, bool on) {
  if (!ts_iv_is_ref(v) || !v.u.o)
    return true;
  ts_rt_obj *o = v.u.o, *sub = NULL;
  bool ok = true;
  switch ((ts_rt_obj_kind)o->kind) {
  case TS_RT_OBJ_TENSOR: sub = &((ts_rt_tensor *)o)->storage->h; break;
  case TS_RT_OBJ_STR: break;
  case TS_RT_OBJ_LIST:
    for (uint32_t i = 0; i < ((ts_rt_list *)o)->n; i++)
      ok = ts_v_mark(((ts_rt_list *)o)->items[i], on) && ok;
    break;
  case TS_RT_OBJ_TUPLE:
    for (uint32_t i = 0; i < ((ts_rt_tuple *)o)->n; i++)
      ok = ts_v_mark(((ts_rt_tuple *)o)->items[i], on) && ok;
    break;
  default: return false;
  }
  if (on && !ok)
    return false;
  o->refcount = on ? o->refcount | TS_RT_RC_SHARED : o->refcount & ~TS_RT_RC_SHARED;
  if (sub)
    sub->refcount = on ? sub->refcount | TS_RT_RC_SHARED : sub->refcount & ~TS_RT_RC_SHARED;
  return ok;
}

bool ts_iv_share(ts_iv v) { return ts_v_mark(v, true); }

void ts_iv_unshare(ts_iv v) { ts_v_mark(v, false); }

void ts_iv_release(ts_iv v) {
  if (ts_iv_is_ref(v) && v.u.o)
    ts_v_release_obj(v.u.o);
}

void ts_iv_clear(ts_iv *v) {
  ts_iv old = *v;
  *v = ts_iv_none();
  ts_iv_release(old);
}

/* ------------------------------------------------------------ containers */

ts_rt_str *ts_rt_str_new(ts_rt_ctx *c, const char *s, size_t len) {
  if (len > SIZE_MAX - sizeof(ts_rt_str) - 1) {
    ts_rt_oom(c);
    return NULL;
  }
  ts_rt_str *r = ts_rt_malloc(sizeof *r + len + 1);
  if (!r) {
    ts_rt_oom(c);
    return NULL;
  }
  r->h.refcount = 1;
  r->h.kind = TS_RT_OBJ_STR;
  r->len = len;
  if (len)
    memcpy(r->data, s, len);
  r->data[len] = 0;
  return r;
}

ts_rt_list *ts_rt_list_new(ts_rt_ctx *c, const ts_type *elem, uint32_t cap) {
  ts_rt_list *l = ts_rt_malloc(sizeof *l);
  if (!l) {
    ts_rt_oom(c);
    return NULL;
  }
  l->items = NULL;
  if (cap) {
    l->items = ts_rt_malloc((size_t)cap * sizeof *l->items);
    if (!l->items) {
      ts_rt_free(l);
      ts_rt_oom(c);
      return NULL;
    }
  }
  l->h.refcount = 1;
  l->h.kind = TS_RT_OBJ_LIST;
  l->n = 0;
  l->cap = cap;
  l->elem = elem;
  return l;
}

bool ts_rt_list_append(ts_rt_ctx *c, ts_rt_list *l, ts_iv v) {
  if (l->n == l->cap) {
    if (l->cap >= UINT32_MAX / 2) {
      ts_iv_release(v);
      return ts_rt_fail(c, "list too long");
    }
    uint32_t ncap = l->cap < 4 ? 4 : l->cap * 2;
    ts_iv *ni = ts_rt_realloc(l->items, (size_t)ncap * sizeof *ni);
    if (!ni) {
      ts_iv_release(v);
      return ts_rt_oom(c);
    }
    l->items = ni;
    l->cap = ncap;
  }
  l->items[l->n++] = v;
  return true;
}

ts_rt_tuple *ts_rt_tuple_new(ts_rt_ctx *c, uint32_t n) {
  ts_rt_tuple *t = ts_rt_malloc(sizeof *t + (size_t)n * sizeof(ts_iv));
  if (!t) {
    ts_rt_oom(c);
    return NULL;
  }
  t->h.refcount = 1;
  t->h.kind = TS_RT_OBJ_TUPLE;
  t->n = n;
  t->type = NULL;
  for (uint32_t i = 0; i < n; i++)
    t->items[i] = ts_iv_none();
  return t;
}

ts_rt_object *ts_rt_object_new(ts_rt_ctx *c, const ts_rt_class *cls) {
  uint32_t n = cls->nattrs;
  ts_rt_object *o = ts_rt_malloc(sizeof *o + (size_t)n * sizeof(ts_iv));
  if (!o) {
    ts_rt_oom(c);
    return NULL;
  }
  o->h.refcount = 1;
  o->h.kind = TS_RT_OBJ_OBJECT;
  o->cls = cls;
  o->n = n;
  for (uint32_t i = 0; i < n; i++)
    o->attrs[i] = ts_iv_none();
  return o;
}

int32_t ts_rt_class_attr_index(const ts_rt_class *cls, const char *name) {
  for (uint32_t i = 0; i < cls->nattrs; i++)
    if (strcmp(cls->attr_names[i], name) == 0)
      return (int32_t)i;
  return -1;
}

/* ----------------------------------------------------------------- dicts */

ts_rt_dict *ts_rt_dict_new(ts_rt_ctx *c, const ts_type *key_type, const ts_type *value_type) {
  ts_rt_dict *d = ts_rt_calloc(1, sizeof *d);
  if (!d) {
    ts_rt_oom(c);
    return NULL;
  }
  d->h.refcount = 1;
  d->h.kind = TS_RT_OBJ_DICT;
  d->key_type = key_type;
  d->value_type = value_type;
  return d;
}

static uint64_t ts_v_mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

/* Hash of a key; numbers that compare equal (1, 1.0, True) hash alike. */
static uint64_t ts_v_hash(ts_iv k) {
  switch ((ts_iv_tag)k.tag) {
  case TS_IV_INT: return ts_v_mix((uint64_t)k.u.i);
  case TS_IV_BOOL: return ts_v_mix(k.u.b ? 1 : 0);
  case TS_IV_DOUBLE: {
    double d = k.u.d;
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == floor(d))
      return ts_v_mix((uint64_t)(int64_t)d);
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return ts_v_mix(bits);
  }
  case TS_IV_STR: {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < k.u.s->len; i++)
      h = (h ^ (unsigned char)k.u.s->data[i]) * 1099511628211ull;
    return ts_v_mix(h);
  }
  case TS_IV_NONE: return 0;
  default: return ts_iv_is_ref(k) ? ts_v_mix((uint64_t)(uintptr_t)k.u.o) : ts_v_mix((uint64_t)k.u.i);
  }
}

/* Where key lives in d->keys, or -1. */
static int64_t ts_v_dict_pos(const ts_rt_dict *d, ts_iv key) {
  if (!d->index_cap)
    return -1;
  uint32_t mask = d->index_cap - 1;
  for (uint32_t i = (uint32_t)ts_v_hash(key) & mask;; i = (i + 1) & mask) {
    uint32_t e = d->index[i];
    if (!e)
      return -1;
    if (ts_iv_equal(d->keys[e - 1], key))
      return e - 1;
  }
}

/* Rebuilds the index for n entries with room to grow (load <= 1/2). */
static bool ts_v_dict_reindex(ts_rt_dict *d, uint32_t want) {
  uint32_t cap = 8;
  while (cap < 2 * (uint64_t)want + 2) {
    if (cap > UINT32_MAX / 2)
      return false;
    cap *= 2;
  }
  uint32_t *idx = d->index;
  if (cap != d->index_cap) {
    idx = ts_rt_calloc(cap, sizeof *idx);
    if (!idx)
      return false;
    ts_rt_free(d->index);
    d->index = idx;
    d->index_cap = cap;
  } else {
    memset(idx, 0, (size_t)cap * sizeof *idx);
  }
  uint32_t mask = cap - 1;
  for (uint32_t p = 0; p < d->n; p++) {
    uint32_t i = (uint32_t)ts_v_hash(d->keys[p]) & mask;
    while (idx[i])
      i = (i + 1) & mask;
    idx[i] = p + 1;
  }
  return true;
}

ts_iv *ts_rt_dict_find(ts_rt_dict *d, ts_iv key) {
  int64_t p = ts_v_dict_pos(d, key);
  return p < 0 ? NULL : &d->values[p];
}

bool ts_rt_dict_set(ts_rt_ctx *c, ts_rt_dict *d, ts_iv key, ts_iv value) {
  int64_t p = ts_v_dict_pos(d, key);
  if (p >= 0) {
    /* Python keeps the first key object and replaces the value. */
    ts_iv_retain(value);
    ts_iv old = d->values[p];
    d->values[p] = value;
    ts_iv_release(old);
    return true;
  }
  if (d->n == d->cap) {
    if (d->cap >= UINT32_MAX / 4)
      return ts_rt_fail(c, "dict too large");
    uint32_t ncap = d->cap < 4 ? 4 : d->cap * 2;
    ts_iv *nk = ts_rt_realloc(d->keys, (size_t)ncap * sizeof *nk);
    if (!nk)
      return ts_rt_oom(c);
    d->keys = nk;
    ts_iv *nv = ts_rt_realloc(d->values, (size_t)ncap * sizeof *nv);
    if (!nv)
      return ts_rt_oom(c);
    d->values = nv;
    d->cap = ncap;
  }
  if (2 * ((uint64_t)d->n + 1) + 2 > d->index_cap) {
    /* Grow the index first, so that a failure leaves the dict as it was. */
    uint32_t *old = d->index;
    uint32_t oldcap = d->index_cap;
    d->index = NULL;
    d->index_cap = 0;
    if (!ts_v_dict_reindex(d, d->n + 1)) {
      d->index = old;
      d->index_cap = oldcap;
      return ts_rt_oom(c);
    }
    ts_rt_free(old);
  }
  ts_iv_retain(key);
  ts_iv_retain(value);
  uint32_t pos = d->n++;
  d->keys[pos] = key;
  d->values[pos] = value;
  uint32_t mask = d->index_cap - 1;
  uint32_t i = (uint32_t)ts_v_hash(key) & mask;
  while (d->index[i])
    i = (i + 1) & mask;
  d->index[i] = pos + 1;
  return true;
}

bool ts_rt_dict_remove(ts_rt_dict *d, ts_iv key, ts_iv *out) {
  int64_t p = ts_v_dict_pos(d, key);
  if (p < 0)
    return false;
  ts_iv k = d->keys[p], v = d->values[p];
  memmove(d->keys + p, d->keys + p + 1, (size_t)(d->n - p - 1) * sizeof *d->keys);
  memmove(d->values + p, d->values + p + 1, (size_t)(d->n - p - 1) * sizeof *d->values);
  d->n--;
  /* Same capacity: no allocation, cannot fail. */
  uint32_t cap = d->index_cap, mask = cap - 1;
  memset(d->index, 0, (size_t)cap * sizeof *d->index);
  for (uint32_t q = 0; q < d->n; q++) {
    uint32_t i = (uint32_t)ts_v_hash(d->keys[q]) & mask;
    while (d->index[i])
      i = (i + 1) & mask;
    d->index[i] = q + 1;
  }
  if (out)
    *out = v;
  else
    ts_iv_release(v);
  ts_iv_release(k);
  return true;
}

/* ---------------------------------------------------------------- equal */

static bool ts_v_is_num(ts_iv v) { return v.tag == TS_IV_INT || v.tag == TS_IV_DOUBLE || v.tag == TS_IV_BOOL; }

/* Python's exact comparison of an int with a float. */
static bool ts_v_int_eq_double(int64_t i, double d) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != floor(d))
    return false;
  return (int64_t)d == i;
}

bool ts_iv_equal(ts_iv a, ts_iv b) {
  if (ts_v_is_num(a) && ts_v_is_num(b)) {
    if (a.tag == TS_IV_DOUBLE && b.tag == TS_IV_DOUBLE)
      return a.u.d == b.u.d;
    if (a.tag == TS_IV_DOUBLE)
      return ts_v_int_eq_double(b.tag == TS_IV_BOOL ? (int64_t)b.u.b : b.u.i, a.u.d);
    if (b.tag == TS_IV_DOUBLE)
      return ts_v_int_eq_double(a.tag == TS_IV_BOOL ? (int64_t)a.u.b : a.u.i, b.u.d);
    int64_t x = a.tag == TS_IV_BOOL ? (int64_t)a.u.b : a.u.i;
    int64_t y = b.tag == TS_IV_BOOL ? (int64_t)b.u.b : b.u.i;
    return x == y;
  }
  if (a.tag != b.tag)
    return false;
  switch ((ts_iv_tag)a.tag) {
  case TS_IV_NONE:
  case TS_IV_UNINIT: return true;
  case TS_IV_DEVICE: return a.u.dev.type == b.u.dev.type && a.u.dev.index == b.u.dev.index;
  case TS_IV_STR: return a.u.s->len == b.u.s->len && memcmp(a.u.s->data, b.u.s->data, a.u.s->len) == 0;
  case TS_IV_LIST: {
    if (a.u.l == b.u.l)
      return true;
    if (a.u.l->n != b.u.l->n)
      return false;
    for (uint32_t i = 0; i < a.u.l->n; i++)
      if (!ts_iv_equal(a.u.l->items[i], b.u.l->items[i]))
        return false;
    return true;
  }
  case TS_IV_TUPLE: {
    if (a.u.tup->n != b.u.tup->n)
      return false;
    for (uint32_t i = 0; i < a.u.tup->n; i++)
      if (!ts_iv_equal(a.u.tup->items[i], b.u.tup->items[i]))
        return false;
    return true;
  }
  case TS_IV_DICT: {
    ts_rt_dict *x = a.u.dict, *y = b.u.dict;
    if (x == y)
      return true;
    if (x->n != y->n)
      return false;
    for (uint32_t i = 0; i < x->n; i++) {
      ts_iv *v = ts_rt_dict_find(y, x->keys[i]);
      if (!v || !ts_iv_equal(x->values[i], *v))
        return false;
    }
    return true;
  }
  case TS_IV_FUNCTION: return a.u.fn == b.u.fn || (a.u.fn && b.u.fn && strcmp(a.u.fn, b.u.fn) == 0);
  default: return a.u.o == b.u.o; /* tensors and objects by identity */
  }
}

/* -------------------------------------------------------------- printing */

/* A float as TorchScript's IValue printer writes it: integral values that
 * fit in int64 as "3.", others with 17 significant digits ("%.17g"). */
static void ts_v_put_double(ts_buf *b, double d) {
  if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == floor(d)) {
    ts_buf_printf(b, "%lld.", (long long)d);
    return;
  }
  ts_buf_printf(b, "%.17g", d);
}

/* Python's repr() of a string: single quotes unless the text has ' and no ". */
static void ts_v_put_pyquoted(ts_buf *b, const char *s, size_t n) {
  bool has_sq = memchr(s, '\'', n) != NULL, has_dq = memchr(s, '"', n) != NULL;
  char q = has_sq && !has_dq ? '"' : '\'';
  ts_buf_putc(b, q);
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == (unsigned char)q || ch == '\\') {
      ts_buf_putc(b, '\\');
      ts_buf_putc(b, (char)ch);
    } else if (ch == '\n') {
      ts_buf_puts(b, "\\n");
    } else if (ch == '\r') {
      ts_buf_puts(b, "\\r");
    } else if (ch == '\t') {
      ts_buf_puts(b, "\\t");
    } else if (ch < 0x20 || ch == 0x7f) {
      ts_buf_printf(b, "\\x%02x", ch);
    } else {
      ts_buf_putc(b, (char)ch);
    }
  }
  ts_buf_putc(b, q);
}

/* The three number layouts of ATen's tensor printer. */
typedef enum ts_v_fmt { TS_V_GENERAL, TS_V_SCI, TS_V_FIXED } ts_v_fmt;

typedef struct ts_v_tfmt {
  ts_v_fmt mode;
  int prec; /* the stream's precision: 4 once a sci/fixed layout was picked, else 6 */
  double scale;
  int sz;   /* field width */
} ts_v_tfmt;

/* ATen's __printFormat: whether every finite value is an integer, the
 * decimal exponents of the smallest and largest magnitudes, and from them
 * the layout. (The largest is tracked by comparing the signed value, as
 * ATen does.) */
static void ts_v_tensor_format(const double *v, int64_t n, ts_v_tfmt *f) {
  bool int_mode = true;
  for (int64_t i = 0; i < n; i++)
    if (isfinite(v[i]) && v[i] != ceil(v[i])) {
      int_mode = false;
      break;
    }
  int64_t off = 0;
  while (off < n && !isfinite(v[off]))
    off++;
  double exp_min = 1, exp_max = 1;
  if (off < n) {
    exp_min = fabs(v[off]);
    exp_max = fabs(v[off]);
    for (int64_t i = off; i < n; i++) {
      double z = fabs(v[i]);
      if (isfinite(z)) {
        if (z < exp_min)
          exp_min = z;
        if (v[i] > exp_max)
          exp_max = z;
      }
    }
    exp_min = exp_min != 0 ? floor(log10(exp_min)) + 1 : 1;
    exp_max = exp_max != 0 ? floor(log10(exp_max)) + 1 : 1;
  }
  f->scale = 1;
  if (int_mode) {
    if (exp_max > 9) {
      f->sz = 11;
      f->mode = TS_V_SCI;
      f->prec = 4;
    } else {
      f->sz = (int)exp_max + 1;
      f->mode = TS_V_GENERAL;
    }
  } else if (exp_max - exp_min > 4) {
    f->sz = 11;
    if (fabs(exp_max) > 99 || fabs(exp_min) > 99)
      f->sz++;
    f->mode = TS_V_SCI;
    f->prec = 4;
  } else {
    if (exp_max > 5 || exp_max < 0) {
      f->sz = 7;
      f->scale = pow(10, exp_max - 1);
    } else {
      f->sz = exp_max == 0 ? 7 : (int)exp_max + 6;
    }
    f->mode = TS_V_FIXED;
    f->prec = 4;
  }
}

static void ts_v_put_num(ts_buf *b, const ts_v_tfmt *f, double x) {
  switch (f->mode) {
  case TS_V_SCI: ts_buf_printf(b, "%*.*e", f->sz, f->prec, x); break;
  case TS_V_FIXED: ts_buf_printf(b, "%*.*f", f->sz, f->prec, x); break;
  default: ts_buf_printf(b, "%*.*g", f->sz, f->prec, x); break;
  }
}

static void ts_v_put_indent(ts_buf *b, int indent) {
  for (int i = 0; i < indent; i++)
    ts_buf_putc(b, ' ');
}

/* ATen's __printMatrix of rows x cols values (row-major), lines of at most
 * 80 characters, split into "Columns a to b" blocks. */
static void ts_v_put_matrix(ts_buf *b, const double *v, int64_t rows, int64_t cols, int indent, int *prec) {
  ts_v_tfmt f = {.prec = *prec};
  ts_v_tensor_format(v, rows * cols, &f);
  *prec = f.prec;
  ts_v_put_indent(b, indent);
  int64_t per_line = (80 - indent) / (f.sz + 1);
  if (per_line < 1)
    per_line = 1;
  int64_t first = 0;
  while (first < cols) {
    int64_t last = first + per_line <= cols ? first + per_line - 1 : cols - 1;
    if (per_line < cols) {
      if (first != 0)
        ts_buf_putc(b, '\n');
      ts_buf_printf(b, "Columns %lld to %lld", (long long)first + 1, (long long)last + 1);
      ts_v_put_indent(b, indent);
    }
    if (f.scale != 1) {
      ts_buf_printf(b, "%.*g *\n", f.prec, f.scale);
      ts_v_put_indent(b, indent);
    }
    for (int64_t l = 0; l < rows; l++) {
      for (int64_t c = first; c <= last; c++) {
        ts_v_put_num(b, &f, v[l * cols + c] / f.scale);
        if (c == last) {
          ts_buf_putc(b, '\n');
          if (l != rows - 1) {
            ts_v_put_indent(b, indent);
            if (f.scale != 1)
              ts_buf_putc(b, ' ');
          }
        } else {
          ts_buf_putc(b, ' ');
        }
      }
    }
    first = last + 1;
  }
}

static void ts_v_gather(void *arg, void *elem, int64_t index) {
  const ts_rt_tensor *t = ((const ts_rt_tensor **)arg)[0];
  double *out = ((double **)arg)[1];
  out[index] = ts_rt_load_f64(elem, (ts_dtype)t->dtype);
}

/* A tensor as ATen's operator<< prints it: the values, then
 * "[ CPUFloatType{2,3} ]". */
static void ts_v_put_tensor(ts_buf *b, const ts_rt_tensor *t) {
  if (!t) {
    ts_buf_puts(b, "[ Tensor (undefined) ]");
    return;
  }
  int64_t n = ts_rt_tensor_numel(t);
  double *v = NULL;
  if (n > 0) {
    v = (uint64_t)n <= SIZE_MAX / sizeof(double) ? ts_rt_malloc((size_t)n * sizeof(double)) : NULL;
    if (!v) {
      b->failed = true;
      return;
    }
    void *arg[2] = {(void *)t, v};
    ts_rt_tensor_foreach(t, ts_v_gather, arg);
  }
  int prec = 6;
  if (t->ndim == 0) {
    ts_buf_printf(b, "%g\n", v[0]);
  } else if (t->ndim == 1) {
    if (n > 0) {
      ts_v_tfmt f = {.prec = prec};
      ts_v_tensor_format(v, n, &f);
      if (f.scale != 1)
        ts_buf_printf(b, "%.*g *\n", f.prec, f.scale);
      for (int64_t i = 0; i < n; i++) {
        ts_v_put_num(b, &f, v[i] / f.scale);
        ts_buf_putc(b, '\n');
      }
    }
  } else if (t->ndim == 2) {
    if (n > 0)
      ts_v_put_matrix(b, v, t->sizes[0], t->sizes[1], 0, &prec);
  } else if (n > 0) {
    /* ATen's __printTensor: one matrix per index of the leading dims, the
     * FIRST leading dim varying fastest. */
    int32_t lead = t->ndim - 2;
    int64_t rows = t->sizes[t->ndim - 2], cols = t->sizes[t->ndim - 1];
    int64_t counter[TS_RT_MAX_DIMS] = {0};
    int64_t nmat = n / (rows * cols);
    for (int64_t m = 0; m < nmat; m++) {
      if (m)
        ts_buf_putc(b, '\n');
      ts_buf_putc(b, '(');
      int64_t moff = 0;
      for (int32_t i = 0; i < lead; i++) {
        ts_buf_printf(b, "%lld,", (long long)counter[i] + 1);
        moff = moff * t->sizes[i] + counter[i];
      }
      ts_buf_puts(b, ".,.) = \n");
      ts_v_put_matrix(b, v + moff * rows * cols, rows, cols, 1, &prec);
      for (int32_t i = 0; i < lead; i++) {
        if (++counter[i] < t->sizes[i])
          break;
        counter[i] = 0;
      }
    }
  }
  ts_rt_free(v);
  const char *dn = ts_dtype_name((ts_dtype)t->dtype);
  ts_buf_printf(b, "[ %s%sType{", t->device.type == TS_DEV_CUDA ? "CUDA" : "CPU", dn ? dn : "?");
  for (int32_t i = 0; i < t->ndim; i++)
    ts_buf_printf(b, "%s%lld", i ? "," : "", (long long)t->sizes[i]);
  ts_buf_puts(b, "} ]");
}

static void ts_v_print(ts_buf *b, ts_iv v, bool repr, int depth);

static void ts_v_print_seq(ts_buf *b, const ts_iv *items, uint32_t n, bool repr, int depth) {
  for (uint32_t i = 0; i < n; i++) {
    if (i)
      ts_buf_puts(b, ", ");
    ts_v_print(b, items[i], repr, depth + 1);
  }
}

/* Writes v as TorchScript's IValue printer does. Strings are quoted only
 * for repr. Nesting deeper than 512 is elided, so hostile structures cannot
 * exhaust the stack. */
static void ts_v_print(ts_buf *b, ts_iv v, bool repr, int depth) {
  if (depth > 512) {
    ts_buf_puts(b, "...");
    return;
  }
  switch ((ts_iv_tag)v.tag) {
  case TS_IV_NONE: ts_buf_puts(b, "None"); break;
  case TS_IV_INT: ts_buf_printf(b, "%lld", (long long)v.u.i); break;
  case TS_IV_DOUBLE: ts_v_put_double(b, v.u.d); break;
  case TS_IV_BOOL: ts_buf_puts(b, v.u.b ? "True" : "False"); break;
  case TS_IV_DEVICE: ts_device_print(b, v.u.dev); break;
  case TS_IV_TENSOR: ts_v_put_tensor(b, v.u.t); break;
  case TS_IV_STR:
    if (repr)
      ts_v_put_pyquoted(b, v.u.s->data, v.u.s->len);
    else
      ts_buf_putn(b, v.u.s->data, v.u.s->len);
    break;
  case TS_IV_LIST:
    ts_buf_putc(b, '[');
    ts_v_print_seq(b, v.u.l->items, v.u.l->n, repr, depth);
    ts_buf_putc(b, ']');
    break;
  case TS_IV_TUPLE:
    ts_buf_putc(b, '(');
    ts_v_print_seq(b, v.u.tup->items, v.u.tup->n, repr, depth);
    if (v.u.tup->n == 1)
      ts_buf_putc(b, ',');
    ts_buf_putc(b, ')');
    break;
  case TS_IV_DICT:
    ts_buf_putc(b, '{');
    for (uint32_t i = 0; i < v.u.dict->n; i++) {
      if (i)
        ts_buf_puts(b, ", ");
      ts_v_print(b, v.u.dict->keys[i], repr, depth + 1);
      ts_buf_puts(b, ": ");
      ts_v_print(b, v.u.dict->values[i], repr, depth + 1);
    }
    ts_buf_putc(b, '}');
    break;
  case TS_IV_OBJECT:
    ts_buf_printf(b, "<%s object at %p>", v.u.obj->cls && v.u.obj->cls->qualname ? v.u.obj->cls->qualname : "?",
                  (void *)v.u.obj);
    break;
  case TS_IV_FUNCTION: ts_buf_printf(b, "<function %s>", v.u.fn ? v.u.fn : "?"); break;
  case TS_IV_UNINIT: ts_buf_puts(b, "Uninitialized"); break;
  default: ts_buf_puts(b, "<?>"); break;
  }
}

void ts_iv_str(ts_buf *b, ts_iv v) { ts_v_print(b, v, false, 0); }

void ts_iv_repr(ts_buf *b, ts_iv v) { ts_v_print(b, v, true, 0); }

const char *ts_iv_tag_name(ts_iv v) {
  switch ((ts_iv_tag)v.tag) {
  case TS_IV_NONE: return "NoneType";
  case TS_IV_INT: return "int";
  case TS_IV_DOUBLE: return "float";
  case TS_IV_BOOL: return "bool";
  case TS_IV_DEVICE: return "Device";
  case TS_IV_TENSOR: return "Tensor";
  case TS_IV_STR: return "str";
  case TS_IV_LIST: return "List";
  case TS_IV_TUPLE: return "Tuple";
  case TS_IV_DICT: return "Dict";
  case TS_IV_OBJECT: return "Object";
  case TS_IV_FUNCTION: return "Function";
  case TS_IV_UNINIT: return "Uninitialized";
  default: return "?";
  }
}

bool ts_iv_isinstance(ts_iv v, const ts_type *t) {
  switch (t->kind) {
  case TS_TY_ANY: return true;
  case TS_TY_NONE: return v.tag == TS_IV_NONE;
  case TS_TY_INT: return v.tag == TS_IV_INT;
  case TS_TY_FLOAT: return v.tag == TS_IV_DOUBLE;
  case TS_TY_BOOL: return v.tag == TS_IV_BOOL;
  case TS_TY_NUMBER: return v.tag == TS_IV_INT || v.tag == TS_IV_DOUBLE;
  case TS_TY_STR: return v.tag == TS_IV_STR;
  case TS_TY_DEVICE: return v.tag == TS_IV_DEVICE;
  case TS_TY_TENSOR: return v.tag == TS_IV_TENSOR;
  case TS_TY_ANYLIST: return v.tag == TS_IV_LIST;
  case TS_TY_ANYTUPLE: return v.tag == TS_IV_TUPLE;
  case TS_TY_ANYCLASS: return v.tag == TS_IV_OBJECT;
  case TS_TY_OPTIONAL: return v.tag == TS_IV_NONE || ts_iv_isinstance(v, t->elems[0]);
  case TS_TY_UNION:
    for (uint32_t i = 0; i < t->n; i++)
      if (ts_iv_isinstance(v, t->elems[i]))
        return true;
    return false;
  case TS_TY_LIST:
    if (v.tag != TS_IV_LIST)
      return false;
    if (v.u.l->elem)
      return ts_type_is_subtype(v.u.l->elem, t->elems[0]);
    for (uint32_t i = 0; i < v.u.l->n; i++)
      if (!ts_iv_isinstance(v.u.l->items[i], t->elems[0]))
        return false;
    return true;
  case TS_TY_TUPLE:
    if (v.tag != TS_IV_TUPLE || v.u.tup->n != t->n)
      return false;
    for (uint32_t i = 0; i < t->n; i++)
      if (!ts_iv_isinstance(v.u.tup->items[i], t->elems[i]))
        return false;
    return true;
  case TS_TY_DICT:
    return v.tag == TS_IV_DICT && v.u.dict->key_type && v.u.dict->value_type &&
           ts_type_is_subtype(v.u.dict->key_type, t->elems[0]) && ts_type_is_subtype(v.u.dict->value_type, t->elems[1]);
  case TS_TY_CLASS:
    return v.tag == TS_IV_OBJECT && t->name && v.u.obj->cls && v.u.obj->cls->qualname &&
           strcmp(v.u.obj->cls->qualname, t->name) == 0;
  default: return false;
  }
}
