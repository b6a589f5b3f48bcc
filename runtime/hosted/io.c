/* runtime/hosted/io.c: a program's arguments and results as arrays, by one set of
 * rules for tsaot-run's .npy files and compiled models' DLTensors
 * (include/tsaot.h, ../shared/DESIGN.md "Command-line contract").
 *
 * In: an array is a Tensor argument; a 0-d integral / floating / bool array
 * an int / float / bool argument where the parameter has that type; a 1-d
 * array a List[int] / List[float] / List[bool]; a 1-d uint8 array of UTF-8
 * a str. Arguments of other types are flattened into several arrays
 * ("slots", include/tsaot.h): Optional[T] is a None marker or T's slots,
 * a tuple its elements' slots, any other list a 0-d length and its
 * elements' slots; ts_rt_io_args reads them back by the parameters' types,
 * for tsaot-run's command line and compiled models alike. Out: a result flattened
 * depth-first, tuples, lists and dicts (values, in insertion order) element
 * by element, a list of numbers of one kind as one array (an empty list as
 * an empty int64 array), numbers as 0-d arrays, None as nothing, as
 * tests/fixtures/make_fixtures.py flattens PyTorch's results. PyTorch has
 * no such convention (its C++ API passes IValues); strings and objects have
 * no array form and are handed to the caller as they are.
 */
#include "runtime.h"

#include <string.h>

static const char *ts_io_dtype(ts_dtype dt) {
  switch (dt) {
  case TS_DT_FLOAT32: return "float32";
  case TS_DT_FLOAT64: return "float64";
  case TS_DT_FLOAT16: return "float16";
  case TS_DT_BFLOAT16: return "bfloat16";
  case TS_DT_INT64: return "int64";
  case TS_DT_INT32: return "int32";
  case TS_DT_INT16: return "int16";
  case TS_DT_INT8: return "int8";
  case TS_DT_UINT8: return "uint8";
  case TS_DT_BOOL: return "bool";
  case TS_DT_COMPLEX64: return "complex64";
  case TS_DT_COMPLEX128: return "complex128";
  default: return "?";
  }
}

void ts_rt_io_describe(ts_buf *b, const ts_rt_tensor *t) {
  ts_buf_printf(b, "a %d-d %s array", (int)t->ndim, ts_io_dtype((ts_dtype)t->dtype));
  if (t->ndim) {
    ts_buf_puts(b, " of shape (");
    for (int32_t i = 0; i < t->ndim; i++)
      ts_buf_printf(b, "%s%lld", i ? ", " : "", (long long)t->sizes[i]);
    ts_buf_puts(b, t->ndim == 1 ? ",)" : ")");
  }
}

/* A 1-d array as a list of numbers of kind ek. */
static bool ts_io_list(ts_rt_ctx *c, const ts_rt_tensor *t, const ts_type *elem, ts_iv *out) {
  if (t->sizes[0] > UINT32_MAX / 2)
    return ts_rt_fail(c, "the list is too long");
  ts_type_kind ek = elem->kind;
  ts_dtype dt = (ts_dtype)t->dtype;
  ts_rt_list *l = ts_rt_list_new(c, elem, (uint32_t)t->sizes[0]);
  if (!l)
    return false;
  size_t es = ts_dtype_size(dt);
  for (int64_t i = 0; i < t->sizes[0]; i++) {
    const char *p = (const char *)ts_rt_tensor_data(t) + i * t->strides[0] * (int64_t)es;
    ts_iv v = ek == TS_TY_INT     ? ts_iv_int(ts_rt_load_i64(p, dt))
              : ek == TS_TY_FLOAT ? ts_iv_double(ts_rt_load_f64(p, dt))
                                  : ts_iv_bool(ts_rt_load_i64(p, dt) != 0);
    if (!ts_rt_list_append(c, l, v)) {
      ts_iv lv = {.u.l = l, .tag = TS_IV_LIST};
      ts_iv_release(lv);
      return false;
    }
  }
  out->u.l = l;
  out->tag = TS_IV_LIST;
  return true;
}

/* The index of the first byte of s[0..n) that is not part of valid UTF-8
 * (as Python's encoder writes it: no overlong forms, no surrogates, nothing
 * past U+10FFFF), or n. */
static size_t ts_io_utf8_bad(const uint8_t *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint8_t b = s[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    size_t len = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (!len || n - i < len)
      return i;
    uint8_t lo = 0x80, hi = 0xbf; /* the second byte's range */
    if (b == 0xe0)
      lo = 0xa0; /* overlong */
    else if (b == 0xed)
      hi = 0x9f; /* surrogates */
    else if (b == 0xf0)
      lo = 0x90; /* overlong */
    else if (b == 0xf4)
      hi = 0x8f; /* past U+10FFFF */
    if (s[i + 1] < lo || s[i + 1] > hi)
      return i;
    for (size_t k = 2; k < len; k++)
      if ((s[i + k] & 0xc0) != 0x80)
        return i;
    i += len;
  }
  return n;
}

/* A str from a 1-d uint8 array of UTF-8 bytes (any stride). */
static bool ts_io_str(ts_rt_ctx *c, const ts_rt_tensor *t, ts_iv *out) {
  int64_t n = t->sizes[0];
  if ((uint64_t)n > SIZE_MAX / 2)
    return ts_rt_fail(c, "the str is too long");
  const uint8_t *p = ts_rt_tensor_data(t);
  uint8_t *tmp = NULL;
  if (n > 1 && t->strides[0] != 1) {
    if (!(tmp = ts_rt_malloc((size_t)n)))
      return ts_rt_oom(c);
    for (int64_t i = 0; i < n; i++)
      tmp[i] = p[i * t->strides[0]];
    p = tmp;
  }
  size_t bad = ts_io_utf8_bad(p, (size_t)n);
  ts_rt_str *str = NULL;
  if (bad < (size_t)n)
    ts_rt_fail(c, "the str is not valid UTF-8 (byte %zu, 0x%02x)", bad, (unsigned)p[bad]);
  else
    str = ts_rt_str_new(c, (const char *)p, (size_t)n);
  ts_rt_free(tmp);
  if (!str)
    return false;
  out->u.s = str;
  out->tag = TS_IV_STR;
  return true;
}

bool ts_rt_io_arg(ts_rt_ctx *c, ts_rt_tensor *t, const ts_type *ty, ts_iv *out) {
  while (ty->kind == TS_TY_OPTIONAL)
    ty = ty->elems[0];
  ts_dtype dt = (ts_dtype)t->dtype;
  bool fl = ts_rt_dtype_is_float(dt), in = ts_rt_dtype_is_integral(dt, false), bo = dt == TS_DT_BOOL;
  const char *want = NULL;
  switch (ty->kind) {
  case TS_TY_TENSOR:
  case TS_TY_ANY:
    ts_rt_tensor_retain(t);
    *out = ts_iv_tensor(t);
    return true;
  case TS_TY_INT:
  case TS_TY_SYMINT:
    if (t->ndim == 0 && in) {
      *out = ts_iv_int(ts_rt_load_i64(ts_rt_tensor_data(t), dt));
      return true;
    }
    want = "an int (a 0-d int64 array)";
    break;
  case TS_TY_FLOAT:
    if (t->ndim == 0 && (fl || in)) {
      *out = ts_iv_double(ts_rt_load_f64(ts_rt_tensor_data(t), dt));
      return true;
    }
    want = "a float (a 0-d float64 array)";
    break;
  case TS_TY_BOOL:
    if (t->ndim == 0 && bo) {
      *out = ts_iv_bool(ts_rt_load_i64(ts_rt_tensor_data(t), dt) != 0);
      return true;
    }
    want = "a bool (a 0-d bool array)";
    break;
  case TS_TY_NUMBER:
    if (t->ndim == 0) {
      const void *p = ts_rt_tensor_data(t);
      *out = bo   ? ts_iv_bool(ts_rt_load_i64(p, dt) != 0)
             : in ? ts_iv_int(ts_rt_load_i64(p, dt))
                  : ts_iv_double(ts_rt_load_f64(p, dt));
      return true;
    }
    want = "a number (a 0-d array)";
    break;
  case TS_TY_STR:
    if (t->ndim == 1 && dt == TS_DT_UINT8)
      return ts_io_str(c, t, out);
    want = "a str (a 1-d uint8 array of UTF-8 bytes)";
    break;
  case TS_TY_LIST: {
    ts_type_kind ek = ty->elems[0]->kind;
    if (ek != TS_TY_INT && ek != TS_TY_FLOAT && ek != TS_TY_BOOL)
      break;
    if (t->ndim == 1 && ((ek == TS_TY_INT && in) || (ek == TS_TY_FLOAT && (fl || in)) || (ek == TS_TY_BOOL && bo)))
      return ts_io_list(c, t, ty->elems[0], out);
    want = ek == TS_TY_INT     ? "a List[int] (a 1-d int64 array)"
           : ek == TS_TY_FLOAT ? "a List[float] (a 1-d float64 array)"
                               : "a List[bool] (a 1-d bool array)";
    break;
  }
  default:
    break;
  }
  /* error text is built on the C library's heap: errors only */
  ts_buf why = {0};
  if (!want) {
    ts_buf_puts(&why, "a parameter of type ");
    ts_type_print(&why, ty);
    ts_buf_puts(&why, " cannot be given as an array");
  } else {
    ts_buf_printf(&why, "expected %s, got ", want);
    ts_rt_io_describe(&why, t);
  }
  if (why.failed)
    ts_rt_oom(c);
  else
    ts_rt_fail(c, "%s", why.data);
  ts_buf_free(&why);
  return false;
}

/* ------------------------------------------------------------ slots */

static const ts_type *ts_io_strip(const ts_type *t) {
  while (t->kind == TS_TY_OPTIONAL)
    t = t->elems[0];
  return t;
}

bool ts_rt_io_leaf(const ts_type *ty) {
  const ts_type *u = ts_io_strip(ty);
  switch (u->kind) {
  case TS_TY_TENSOR:
  case TS_TY_ANY:
  case TS_TY_INT:
  case TS_TY_SYMINT:
  case TS_TY_FLOAT:
  case TS_TY_BOOL:
  case TS_TY_NUMBER:
  case TS_TY_STR:
    return true;
  case TS_TY_LIST: {
    ts_type_kind ek = u->elems[0]->kind;
    return ek == TS_TY_INT || ek == TS_TY_FLOAT || ek == TS_TY_BOOL;
  }
  default:
    return false;
  }
}

/* Whether the first slot of a value of type t may be a None marker. */
static bool ts_io_first_may_be_none(const ts_type *t) {
  if (t->kind == TS_TY_OPTIONAL)
    return true;
  return t->kind == TS_TY_TUPLE && t->n && ts_io_first_may_be_none(t->elems[0]);
}

static bool ts_io_passable(const ts_type *ty, int depth, ts_buf *why) {
  if (depth > TS_RT_IO_MAX_DEPTH) {
    ts_buf_printf(why, "it nests more than %d types deep", TS_RT_IO_MAX_DEPTH);
    return false;
  }
  if (ts_rt_io_leaf(ty))
    return true;
  const ts_type *u = ts_io_strip(ty);
  if (u->kind == TS_TY_TUPLE && !u->n) {
    /* no slot: a list of them would have a length nothing bounds */
    ts_buf_puts(why, "an empty tuple has no slots");
    return false;
  }
  if (ty->kind == TS_TY_OPTIONAL && u->kind == TS_TY_TUPLE && ts_io_first_may_be_none(u)) {
    /* None would read the same as the value's own first slot */
    ts_buf_puts(why, "an Optional tuple whose first element may be None has no unambiguous slots");
    return false;
  }
  if (u->kind == TS_TY_TUPLE) {
    for (uint32_t i = 0; i < u->n; i++)
      if (!ts_io_passable(u->elems[i], depth + 1, why))
        return false;
    return true;
  }
  if (u->kind == TS_TY_LIST)
    return ts_io_passable(u->elems[0], depth + 1, why);
  ts_buf_puts(why, "only tensors, numbers, str, and Optional, List and Tuple of them cross it");
  return false;
}

bool ts_rt_io_passable(const ts_type *ty, ts_buf *why) { return ts_io_passable(ty, 0, why); }

uint32_t ts_rt_io_template_slots(const ts_type *ty) {
  const ts_type *u = ts_io_strip(ty);
  if (ts_rt_io_leaf(u))
    return 1;
  uint32_t n = 0;
  if (u->kind == TS_TY_TUPLE)
    for (uint32_t i = 0; i < u->n; i++)
      n += ts_rt_io_template_slots(u->elems[i]);
  else if (u->kind == TS_TY_LIST)
    n = 1 + ts_rt_io_template_slots(u->elems[0]);
  return n;
}

void ts_rt_io_path(char *buf, size_t cap, const char *name, uint32_t arg, const uint32_t *idx, uint32_t depth) {
  ts_buf b = {.data = buf, .cap = cap, .fixed = true};
  buf[0] = 0;
  if (name && *name) {
    /* "x.1" is the graph's name of x */
    size_t n = strlen(name);
    size_t end = n;
    while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9')
      end--;
    if (end > 1 && end < n && name[end - 1] == '.')
      n = end - 1;
    ts_buf_printf(&b, "%.*s", (int)n, name);
  } else {
    ts_buf_printf(&b, "argument %u", arg + 1);
  }
  for (uint32_t i = 0; i < depth; i++)
    ts_buf_printf(&b, "[%u]", idx[i]);
}

/* Reading arguments from slots. */
typedef struct ts_io_rd {
  ts_rt_ctx *c;
  ts_rt_io_slot_fn fn;
  void *arg;
  uint32_t nslots, pos;
  uint32_t idx[TS_RT_IO_MAX_DEPTH + 1];
  uint32_t depth;
  bool placed; /* w says where the error is */
  ts_rt_io_where *w;
} ts_io_rd;

/* Records where the error in c happened (the innermost place wins). */
static bool ts_io_at(ts_io_rd *r, uint32_t slot) {
  if (r->w && !r->placed) {
    r->w->slot = slot;
    r->w->depth = r->depth;
    memcpy(r->w->idx, r->idx, r->depth * sizeof *r->idx);
  }
  r->placed = true;
  return false;
}

/* The slot at r->pos read as `as` (a new tensor; NULL with *none for a
 * None marker, NULL without it on error). */
static ts_rt_tensor *ts_io_slot(ts_io_rd *r, const ts_type *as, bool *none) {
  *none = false;
  if (r->pos >= r->nslots) {
    ts_rt_fail(r->c, "missing: %u input%s given, the arguments need more", r->nslots, r->nslots == 1 ? "" : "s");
    ts_io_at(r, r->pos);
    return NULL;
  }
  uint32_t at = r->pos++;
  ts_rt_tensor *t = r->fn(r->arg, r->c, at, as, none);
  if (!t && !*none)
    ts_io_at(r, at);
  return t;
}

/* A list's length slot: a 0-d integral array, at most the slots left
 * (every element takes one at least). */
static bool ts_io_length(ts_io_rd *r, int64_t *len) {
  bool none;
  uint32_t at = r->pos;
  ts_rt_tensor *t = ts_io_slot(r, ts_type_leaf(TS_TY_INT), &none);
  if (none) {
    ts_rt_fail(r->c, "None where a list's length (a 0-d int64 array) goes");
    return ts_io_at(r, at);
  }
  if (!t)
    return false;
  bool ok = t->ndim == 0 && ts_rt_dtype_is_integral((ts_dtype)t->dtype, false);
  int64_t n = ok ? ts_rt_load_i64(ts_rt_tensor_data(t), (ts_dtype)t->dtype) : 0;
  if (!ok) {
    ts_buf why = {0};
    ts_buf_puts(&why, "expected a list's length (a 0-d int64 array), got ");
    ts_rt_io_describe(&why, t);
    if (why.failed)
      ts_rt_oom(r->c);
    else
      ts_rt_fail(r->c, "%s", why.data);
    ts_buf_free(&why);
  } else if (n < 0 || (uint64_t)n > r->nslots - r->pos) {
    ts_rt_fail(r->c, "a list length of %lld, %s", (long long)n,
               n < 0 ? "below 0" : "more than the inputs left after it");
    ok = false;
  }
  ts_rt_tensor_release(t);
  if (!ok)
    return ts_io_at(r, at);
  *len = n;
  return true;
}

static bool ts_io_type_fail(ts_io_rd *r, uint32_t at, const char *fmt, const ts_type *ty) {
  ts_buf tn = {0};
  ts_type_print(&tn, ty);
  ts_rt_fail(r->c, fmt, tn.data ? tn.data : "?");
  ts_buf_free(&tn);
  return ts_io_at(r, at);
}

/* One value of type ty from the slots at r->pos. */
static bool ts_io_value(ts_io_rd *r, const ts_type *ty, ts_iv *out) {
  *out = ts_iv_none();
  uint32_t at = r->pos;
  if (r->depth >= TS_RT_IO_MAX_DEPTH) {
    ts_rt_fail(r->c, "the argument nests more than %d types deep", TS_RT_IO_MAX_DEPTH);
    return ts_io_at(r, at);
  }
  bool opt = ty->kind == TS_TY_OPTIONAL, none;
  const ts_type *u = ts_io_strip(ty);
  if (ts_rt_io_leaf(u)) {
    ts_rt_tensor *t = ts_io_slot(r, u, &none);
    if (none)
      return opt || ts_io_type_fail(r, at, "None given for a parameter of type %s", ty);
    if (!t)
      return false;
    bool ok = ts_rt_io_arg(r->c, t, u, out);
    ts_rt_tensor_release(t);
    return ok || ts_io_at(r, at);
  }
  if (u->kind != TS_TY_TUPLE && u->kind != TS_TY_LIST)
    return ts_io_type_fail(r, at, "a parameter of type %s cannot be given as arrays", ty);
  if (opt && r->pos < r->nslots) {
    /* a None marker first: the whole value is None (ts_rt_io_passable
     * refuses types where it could be the value's own first slot) */
    none = false;
    r->fn(r->arg, r->c, r->pos, NULL, &none);
    if (none) {
      r->pos++;
      return true;
    }
  }
  bool ok = true;
  uint32_t d = r->depth++;
  if (u->kind == TS_TY_TUPLE) {
    ts_rt_tuple *tup = ts_rt_tuple_new(r->c, u->n);
    if (tup) {
      out->u.tup = tup;
      out->tag = TS_IV_TUPLE;
    }
    ok = tup || ts_io_at(r, at);
    for (uint32_t i = 0; i < u->n && ok; i++) {
      r->idx[d] = i;
      ok = ts_io_value(r, u->elems[i], &tup->items[i]);
    }
  } else {
    int64_t n = 0;
    ts_rt_list *l = NULL;
    r->depth = d;
    ok = ts_io_length(r, &n);
    r->depth = d + 1;
    if (ok && (l = ts_rt_list_new(r->c, u->elems[0], (uint32_t)n)) != NULL) {
      out->u.l = l;
      out->tag = TS_IV_LIST;
    } else if (ok) {
      ok = ts_io_at(r, at);
    }
    for (int64_t i = 0; i < n && ok; i++) {
      ts_iv e;
      r->idx[d] = (uint32_t)i;
      ok = ts_io_value(r, u->elems[0], &e) && (ts_rt_list_append(r->c, l, e) || ts_io_at(r, r->pos));
    }
  }
  r->depth = d;
  if (!ok)
    ts_iv_clear(out);
  return ok;
}

bool ts_rt_io_args(ts_rt_ctx *c, const ts_type *const *types, uint32_t n, uint32_t nslots, ts_rt_io_slot_fn fn,
                   void *arg, ts_iv *out, ts_rt_io_where *w) {
  ts_io_rd r; /* idx[] is written before it is read */
  r.c = c;
  r.fn = fn;
  r.arg = arg;
  r.nslots = nslots;
  r.pos = r.depth = 0;
  r.placed = false;
  r.w = w;
  if (w)
    w->arg = w->slot = w->depth = 0;
  for (uint32_t k = 0; k < n; k++)
    out[k] = ts_iv_none();
  for (uint32_t k = 0; k < n; k++) {
    if (w)
      w->arg = k;
    if (!ts_io_value(&r, types[k], &out[k])) {
      for (uint32_t j = 0; j < k; j++)
        ts_iv_clear(&out[j]);
      return false;
    }
  }
  if (r.pos != nslots) {
    for (uint32_t j = 0; j < n; j++)
      ts_iv_clear(&out[j]);
    if (w) {
      w->arg = n;
      w->slot = r.pos;
      w->depth = 0;
    }
    return ts_rt_fail(c, "%u inputs given, the arguments take %u", nslots, r.pos);
  }
  return true;
}

/* The leaves of v (of type ty) in slot order. */
static bool ts_io_leaves(ts_iv v, const ts_type *ty, ts_iv *out, uint32_t cap, uint32_t *n, int depth) {
  if (v.tag == TS_IV_NONE || depth > TS_RT_IO_MAX_DEPTH)
    return v.tag == TS_IV_NONE;
  const ts_type *u = ts_io_strip(ty);
  if (ts_rt_io_leaf(u)) {
    if (*n >= cap)
      return false;
    out[(*n)++] = v;
    return true;
  }
  if (u->kind == TS_TY_TUPLE && v.tag == TS_IV_TUPLE && v.u.tup->n == u->n) {
    for (uint32_t i = 0; i < u->n; i++)
      if (!ts_io_leaves(v.u.tup->items[i], u->elems[i], out, cap, n, depth + 1))
        return false;
    return true;
  }
  if (u->kind == TS_TY_LIST && v.tag == TS_IV_LIST) {
    for (uint32_t i = 0; i < v.u.l->n; i++)
      if (!ts_io_leaves(v.u.l->items[i], u->elems[0], out, cap, n, depth + 1))
        return false;
    return true;
  }
  return false;
}

bool ts_rt_io_leaves(ts_iv v, const ts_type *ty, ts_iv *out, uint32_t cap, uint32_t *n) {
  return ts_io_leaves(v, ty, out, cap, n, 0);
}

typedef struct ts_io_flat {
  ts_rt_ctx *c;
  ts_rt_io_out_fn fn;
  void *arg;
} ts_io_flat;

/* Hands a new array to fn, then drops it. */
static bool ts_io_give(ts_io_flat *f, ts_rt_tensor *t, ts_iv v) {
  if (!t)
    return false;
  bool ok = f->fn(f->arg, t, v);
  ts_rt_tensor_release(t);
  return ok;
}

/* A list of numbers of one kind (tag) as one 1-d array. */
static ts_rt_tensor *ts_io_numbers(ts_rt_ctx *c, const ts_rt_list *l, int32_t tag) {
  ts_dtype dt = tag == TS_IV_BOOL ? TS_DT_BOOL : tag == TS_IV_DOUBLE ? TS_DT_FLOAT64 : TS_DT_INT64;
  int64_t n = l->n;
  ts_rt_tensor *t = ts_rt_tensor_new(c, dt, 1, &n, true);
  if (!t)
    return NULL;
  char *p = ts_rt_tensor_data(t);
  size_t es = ts_dtype_size(dt);
  for (uint32_t k = 0; k < l->n; k++) {
    ts_iv v = l->items[k];
    if (tag == TS_IV_DOUBLE)
      ts_rt_store_f64(p + k * es, dt, v.u.d);
    else
      ts_rt_store_i64(p + k * es, dt, tag == TS_IV_BOOL ? (int64_t)v.u.b : v.u.i);
  }
  return t;
}

static bool ts_io_flatten(ts_io_flat *f, ts_iv v, int depth) {
  if (depth > 200)
    return ts_rt_fail(f->c, "the output is nested too deeply");
  switch ((ts_iv_tag)v.tag) {
  case TS_IV_NONE:
    return true;
  case TS_IV_TENSOR:
    return f->fn(f->arg, v.u.t, v);
  case TS_IV_INT:
    return ts_io_give(f, ts_rt_tensor_scalar(f->c, TS_DT_INT64, 0, v.u.i), v);
  case TS_IV_DOUBLE:
    return ts_io_give(f, ts_rt_tensor_scalar(f->c, TS_DT_FLOAT64, v.u.d, 0), v);
  case TS_IV_BOOL:
    return ts_io_give(f, ts_rt_tensor_scalar(f->c, TS_DT_BOOL, 0, v.u.b), v);
  case TS_IV_LIST: {
    const ts_rt_list *l = v.u.l;
    int32_t tag = l->n ? l->items[0].tag : TS_IV_INT;
    bool same = tag == TS_IV_INT || tag == TS_IV_DOUBLE || tag == TS_IV_BOOL;
    for (uint32_t k = 1; k < l->n && same; k++)
      same = l->items[k].tag == tag;
    if (same)
      return ts_io_give(f, ts_io_numbers(f->c, l, tag), v);
    for (uint32_t k = 0; k < l->n; k++)
      if (!ts_io_flatten(f, l->items[k], depth + 1))
        return false;
    return true;
  }
  case TS_IV_TUPLE:
    for (uint32_t k = 0; k < v.u.tup->n; k++)
      if (!ts_io_flatten(f, v.u.tup->items[k], depth + 1))
        return false;
    return true;
  case TS_IV_DICT:
    for (uint32_t k = 0; k < v.u.dict->n; k++)
      if (!ts_io_flatten(f, v.u.dict->values[k], depth + 1))
        return false;
    return true;
  default:
    return f->fn(f->arg, NULL, v);
  }
}

bool ts_rt_io_flatten(ts_rt_ctx *c, ts_iv v, ts_rt_io_out_fn fn, void *arg) {
  ts_io_flat f = {.c = c, .fn = fn, .arg = arg};
  return ts_io_flatten(&f, v, 0);
}
