/* runtime/io.c: a program's arguments and results as arrays, by one set of
 * rules for tsaot-run's .npy files and compiled models' DLTensors
 * (include/tsaot.h, ../shared/DESIGN.md "Command-line contract").
 *
 * In: an array is a Tensor argument; a 0-d integral / floating / bool array
 * an int / float / bool argument where the parameter has that type; a 1-d
 * array a List[int] / List[float] / List[bool]. Out: a result flattened
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
