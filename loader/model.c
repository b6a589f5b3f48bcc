/* loader/model.c: a TorchScript archive ready to run (loader.h).
 *
 * The pickled module tree (ts_pv values) becomes IValues: one ts_rt_class
 * per class qualname with the class's declared attributes as slots, objects
 * filled from their pickled state (or by running __setstate__), tensors
 * copied once per archive storage so that views and tied weights keep
 * sharing. The interpreter's resolver finds methods and functions through
 * the frontend (lookup.h).
 */
#include "loader.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lookup.h"
#include "passes.h"

/* Nesting of the pickled tree the loader follows. */
enum { TS_RM_MAX_DEPTH = 1000 };

typedef struct ts_rm_class {
  ts_rt_class cls;
  const ts_type *const *types; /* declared attribute types */
} ts_rm_class;

typedef struct ts_rm_method {
  char *name;
  ts_graph *g;
} ts_rm_method;

struct ts_rt_model {
  ts_fe_model *fe;
  ts_rt_interp *ip;
  ts_iv root;
  ts_rm_class **classes;
  uint32_t nclasses, cap_classes;
  ts_rm_method *methods;
  uint32_t nmethods, cap_methods;
  ts_diag *load_diag; /* where class lookups report while loading */
};

static bool ts_rm_grow(void **p, uint32_t *cap, uint32_t need, size_t elem) {
  if (need <= *cap)
    return true;
  uint64_t nc = *cap ? (uint64_t)*cap * 2 : 8;
  while (nc < need)
    nc *= 2;
  if (nc > UINT32_MAX / 2 || nc > SIZE_MAX / 2 / elem)
    return false;
  void *q = realloc(*p, (size_t)nc * elem);
  if (!q)
    return false;
  *p = q;
  *cap = (uint32_t)nc;
  return true;
}

/* The runtime class for `qualname`, made once. NULL with the reason in d. */
static ts_rm_class *ts_rm_class_get(ts_rt_model *m, const char *qualname, ts_diag *d) {
  for (uint32_t i = 0; i < m->nclasses; i++)
    if (strcmp(m->classes[i]->cls.qualname, qualname) == 0)
      return m->classes[i];
  ts_fe_class_layout lay;
  if (!ts_fe_model_class_layout(m->fe, qualname, &lay, d))
    return NULL;
  ts_rm_class *c = calloc(1, sizeof *c);
  if (!c || !ts_rm_grow((void **)&m->classes, &m->cap_classes, m->nclasses + 1, sizeof *m->classes)) {
    free(c);
    ts_diag_error(d, "out of memory");
    return NULL;
  }
  c->cls.qualname = lay.qualname;
  c->cls.nattrs = lay.nattrs;
  c->cls.attr_names = lay.names;
  c->cls.user = NULL;
  c->types = lay.types;
  m->classes[m->nclasses++] = c;
  return c;
}

/* ---------------------------------------------------------------- resolver */

static ts_graph *ts_rm_method_cb(void *ctx, const ts_rt_class *cls, const char *method, ts_diag *d) {
  ts_rt_model *m = ctx;
  return ts_fe_model_class_method_graph(m->fe, cls->qualname, method, d);
}

static ts_graph *ts_rm_function_cb(void *ctx, const char *qualname, ts_diag *d) {
  ts_rt_model *m = ctx;
  return ts_fe_model_function_graph(m->fe, qualname, d);
}

static const char *ts_rm_source_cb(void *ctx, const char *file, size_t *len) {
  ts_rt_model *m = ctx;
  return ts_fe_model_source_text(m->fe, file, len);
}

const char *ts_rt_model_source(void *m, const char *file, size_t *len) { return ts_rm_source_cb(m, file, len); }

static const ts_rt_class *ts_rm_class_cb(void *ctx, const ts_type *type, ts_diag *d) {
  ts_rt_model *m = ctx;
  if (!type || type->kind != TS_TY_CLASS || !type->name) {
    ts_diag_error(d, "not a class type");
    return NULL;
  }
  ts_rm_class *c = ts_rm_class_get(m, type->name, d);
  return c ? &c->cls : NULL;
}

/* ------------------------------------------------------------ the tree */

/* Pointer -> value maps for the loader: archive storages to runtime
 * storages, and pickled containers/objects to their IValues (a value the
 * pickle memoised and referenced twice stays one object). */
typedef struct ts_rm_slot {
  const void *key;
  ts_iv v;         /* holds a reference */
  bool busy;       /* an object being filled: seeing it again is a cycle */
} ts_rm_slot;

typedef struct ts_rm_map {
  ts_rm_slot *slots;
  size_t cap, n; /* cap a power of two */
} ts_rm_map;

static size_t ts_rm_hash(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x;
}

static ts_rm_slot *ts_rm_find(ts_rm_map *mp, const void *key) {
  if (!mp->cap)
    return NULL;
  for (size_t i = ts_rm_hash(key) & (mp->cap - 1);; i = (i + 1) & (mp->cap - 1)) {
    if (mp->slots[i].key == key)
      return &mp->slots[i];
    if (!mp->slots[i].key)
      return NULL;
  }
}

/* Inserts key (absent) with v (the map takes the reference). */
static ts_rm_slot *ts_rm_put(ts_rm_map *mp, const void *key, ts_iv v) {
  if ((mp->n + 1) * 2 > mp->cap) {
    size_t nc = mp->cap ? mp->cap * 2 : 64;
    ts_rm_slot *ns = calloc(nc, sizeof *ns);
    if (!ns)
      return NULL;
    for (size_t i = 0; i < mp->cap; i++) {
      if (!mp->slots[i].key)
        continue;
      size_t j = ts_rm_hash(mp->slots[i].key) & (nc - 1);
      while (ns[j].key)
        j = (j + 1) & (nc - 1);
      ns[j] = mp->slots[i];
    }
    free(mp->slots);
    mp->slots = ns;
    mp->cap = nc;
  }
  size_t j = ts_rm_hash(key) & (mp->cap - 1);
  while (mp->slots[j].key)
    j = (j + 1) & (mp->cap - 1);
  mp->slots[j].key = key;
  mp->slots[j].v = v;
  mp->slots[j].busy = false;
  mp->n++;
  return &mp->slots[j];
}

static void ts_rm_map_free(ts_rm_map *mp, bool storages) {
  for (size_t i = 0; i < mp->cap; i++) {
    if (!mp->slots[i].key)
      continue;
    if (storages)
      ts_rt_storage_release((ts_rt_storage *)mp->slots[i].v.u.o);
    else
      ts_iv_release(mp->slots[i].v);
  }
  free(mp->slots);
  mp->slots = NULL;
  mp->cap = mp->n = 0;
}

typedef struct ts_rm_load {
  ts_rt_model *m;
  ts_rt_ctx ctx;
  ts_diag *d;
  const char *path;
  ts_rm_map storages; /* archive bytes -> ts_rt_storage (in v.u.o) */
  ts_rm_map values;   /* ts_pv -> IValue */
} ts_rm_load;

static bool ts_rm_fail(ts_rm_load *L, const char *fmt, ...) TS_PRINTF(2, 3);
static bool ts_rm_fail(ts_rm_load *L, const char *fmt, ...) {
  ts_buf b = {0};
  va_list ap;
  va_start(ap, fmt);
  ts_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  ts_diag_error(L->d, "%s: %s", L->path, b.data && !b.failed ? b.data : "out of memory");
  ts_buf_free(&b);
  return false;
}

/* ctx's error as the load's. */
static bool ts_rm_fail_ctx(ts_rm_load *L) {
  return ts_rm_fail(L, "%s", L->ctx.err.data && L->ctx.err.len ? L->ctx.err.data : "out of memory");
}

static const ts_type *ts_rm_unopt(const ts_type *t) {
  while (t && t->kind == TS_TY_OPTIONAL)
    t = t->elems[0];
  return t && t->kind == TS_TY_ANY ? NULL : t;
}

static bool ts_rm_value(ts_rm_load *L, const ts_pv *pv, const ts_type *declared, int depth, ts_iv *out);

static bool ts_rm_tensor(ts_rm_load *L, const ts_pv *pv, ts_iv *out) {
  ts_rm_slot *seen = ts_rm_find(&L->values, pv);
  if (seen) {
    *out = seen->v;
    ts_iv_retain(*out);
    return true;
  }
  const ts_tconst *tc = &pv->u.tensor.t;
  ts_dtype dt = (ts_dtype)tc->dtype;
  if (!ts_rt_dtype_supported(dt))
    return ts_rm_fail(L, "a tensor of dtype %s is not supported by the runtime",
                      ts_dtype_name(dt) ? ts_dtype_name(dt) : "?");
  if (tc->rank < 0 || tc->rank > TS_RT_MAX_DIMS)
    return ts_rm_fail(L, "a tensor has too many dimensions");
  const void *key = pv->u.tensor.storage;
  ts_rt_storage *st = NULL;
  ts_rm_slot *ss = key ? ts_rm_find(&L->storages, key) : NULL;
  if (ss)
    st = (ts_rt_storage *)ss->v.u.o;
  else {
    size_t nbytes = pv->u.tensor.storage_bytes;
    if (!(st = ts_rt_storage_new(&L->ctx, nbytes, false)))
      return ts_rm_fail_ctx(L);
    if (nbytes)
      memcpy(st->data, pv->u.tensor.storage, nbytes);
    ts_iv holder = {.u.o = &st->h, .tag = TS_IV_NONE};
    if (key && !ts_rm_put(&L->storages, key, holder)) {
      ts_rt_storage_release(st);
      return ts_rm_fail(L, "out of memory");
    }
  }
  int64_t strides[TS_RT_MAX_DIMS];
  if (tc->strides)
    memcpy(strides, tc->strides, (size_t)tc->rank * sizeof *strides);
  else
    ts_rt_strides_contiguous(tc->rank, tc->sizes, strides);
  ts_rt_tensor *t = ts_rt_tensor_new_view(&L->ctx, st, dt, pv->u.tensor.storage_offset, tc->rank, tc->sizes, strides);
  if (!key)
    ts_rt_storage_release(st);
  if (!t)
    return ts_rm_fail_ctx(L);
  t->requires_grad = pv->u.tensor.requires_grad;
  *out = ts_iv_tensor(t);
  ts_iv_retain(*out);
  if (!ts_rm_put(&L->values, pv, *out)) {
    ts_iv_release(*out);
    ts_iv_release(*out);
    return ts_rm_fail(L, "out of memory");
  }
  return true;
}

/* Runs cls.__setstate__(obj, state) for an object whose pickled state is
 * what __getstate__ returned. */
static bool ts_rm_setstate(ts_rm_load *L, ts_rm_class *c, ts_iv obj, ts_iv state) {
  ts_diag d = {0};
  ts_graph *g = ts_fe_model_class_method_graph(L->m->fe, c->cls.qualname, "__setstate__", &d);
  if (!g) {
    ts_diag_free(&d);
    return ts_rm_fail(L, "the pickled state of a %s object is not a dict and its class has no __setstate__",
                      c->cls.qualname);
  }
  ts_diag_free(&d);
  ts_iv args[2] = {obj, state}, ret[1] = {ts_iv_none()};
  ts_buf where = {0};
  if (ts_block_ninputs(g->block) != 2 || ts_block_noutputs(g->block) != 1) {
    ts_buf_free(&where);
    return ts_rm_fail(L, "%s.__setstate__ must take one state argument", c->cls.qualname);
  }
  bool ok = ts_rt_interp_run(L->m->ip, &L->ctx, g, args, 2, ret, &where);
  if (ok)
    ts_iv_release(ret[0]);
  else
    ts_diag_error(L->d, "%s: %s.__setstate__: %s", L->path, c->cls.qualname,
                  where.data ? where.data : L->ctx.err.data ? L->ctx.err.data : "failed");
  ts_buf_free(&where);
  return ok;
}

static bool ts_rm_object(ts_rm_load *L, const ts_pv *pv, int depth, ts_iv *out) {
  ts_rm_slot *seen = ts_rm_find(&L->values, pv);
  if (seen) {
    if (seen->busy)
      return ts_rm_fail(L, "the object tree has a cycle through a %s object", pv->u.obj.cls);
    *out = seen->v;
    ts_iv_retain(*out);
    return true;
  }
  ts_rm_class *c = ts_rm_class_get(L->m, pv->u.obj.cls, L->d);
  if (!c)
    return false;
  ts_rt_object *o = ts_rt_object_new(&L->ctx, &c->cls);
  if (!o)
    return ts_rm_fail_ctx(L);
  ts_iv ov = {.u.obj = o, .tag = TS_IV_OBJECT};
  ts_rm_slot *slot = ts_rm_put(&L->values, pv, ov);
  if (!slot) {
    ts_iv_release(ov);
    return ts_rm_fail(L, "out of memory");
  }
  slot->busy = true;
  const ts_pv *state = pv->u.obj.state;
  bool ok = true;
  if (state && state->kind == TS_PV_DICT) {
    for (uint32_t i = 0; i < state->u.dict.n && ok; i++) {
      const ts_pv *k = state->u.dict.keys[i];
      if (k->kind != TS_PV_STR) {
        ok = ts_rm_fail(L, "the state of a %s object has a key that is not a str", c->cls.qualname);
        break;
      }
      int32_t at = ts_rt_class_attr_index(&c->cls, k->u.str.s);
      if (at < 0)
        continue; /* pickled but not declared: nothing in TorchScript can read it */
      ts_iv v;
      if (!(ok = ts_rm_value(L, state->u.dict.vals[i], c->types[at], depth + 1, &v)))
        break;
      ts_iv_release(o->attrs[at]);
      o->attrs[at] = v;
    }
  } else if (state) {
    ts_iv sv;
    ok = ts_rm_value(L, state, NULL, depth + 1, &sv) && ts_rm_setstate(L, c, ov, sv);
    ts_iv_release(sv);
  }
  /* the slot may have moved while children were added */
  slot = ts_rm_find(&L->values, pv);
  slot->busy = false;
  if (!ok)
    return false;
  *out = ov;
  ts_iv_retain(ov);
  return true;
}

static bool ts_rm_value(ts_rm_load *L, const ts_pv *pv, const ts_type *declared, int depth, ts_iv *out) {
  *out = ts_iv_none();
  if (depth > TS_RM_MAX_DEPTH)
    return ts_rm_fail(L, "the object tree is nested too deeply");
  const ts_type *ty = ts_rm_unopt(declared);
  switch (pv->kind) {
  case TS_PV_NONE:
    return true;
  case TS_PV_BOOL:
    *out = ts_iv_bool(pv->u.b);
    return true;
  case TS_PV_INT:
    *out = ty && ty->kind == TS_TY_FLOAT ? ts_iv_double((double)pv->u.i) : ts_iv_int(pv->u.i);
    return true;
  case TS_PV_FLOAT:
    *out = ts_iv_double(pv->u.f);
    return true;
  case TS_PV_COMPLEX:
    return ts_rm_fail(L, "complex numbers are not supported by the runtime");
  case TS_PV_STR: {
    ts_rt_str *s = ts_rt_str_new(&L->ctx, pv->u.str.s, pv->u.str.len);
    if (!s)
      return ts_rm_fail_ctx(L);
    out->u.s = s;
    out->tag = TS_IV_STR;
    return true;
  }
  case TS_PV_DEVICE:
    *out = ts_iv_device(pv->u.device);
    return true;
  case TS_PV_TENSOR:
    return ts_rm_tensor(L, pv, out);
  case TS_PV_OBJECT:
    return ts_rm_object(L, pv, depth, out);
  case TS_PV_TUPLE: {
    uint32_t n = pv->u.seq.n;
    bool typed = ty && ty->kind == TS_TY_TUPLE && ty->n == n;
    ts_rt_tuple *t = ts_rt_tuple_new(&L->ctx, n);
    if (!t)
      return ts_rm_fail_ctx(L);
    t->type = typed && ty->fields ? ty : NULL;
    ts_iv tv = {.u.tup = t, .tag = TS_IV_TUPLE};
    for (uint32_t i = 0; i < n; i++)
      if (!ts_rm_value(L, pv->u.seq.items[i], typed ? ty->elems[i] : NULL, depth + 1, &t->items[i])) {
        ts_iv_release(tv);
        return false;
      }
    *out = tv;
    return true;
  }
  case TS_PV_LIST: {
    ts_rm_slot *seen = ts_rm_find(&L->values, pv);
    if (seen) {
      *out = seen->v;
      ts_iv_retain(*out);
      return true;
    }
    const ts_type *elem = ty && ty->kind == TS_TY_LIST ? ty->elems[0] : NULL;
    ts_rt_list *l = ts_rt_list_new(&L->ctx, elem, pv->u.seq.n);
    if (!l)
      return ts_rm_fail_ctx(L);
    ts_iv lv = {.u.l = l, .tag = TS_IV_LIST};
    for (uint32_t i = 0; i < pv->u.seq.n; i++) {
      ts_iv v;
      if (!ts_rm_value(L, pv->u.seq.items[i], elem, depth + 1, &v)) {
        ts_iv_release(lv);
        return false;
      }
      if (!ts_rt_list_append(&L->ctx, l, v)) {
        ts_iv_release(lv);
        return ts_rm_fail_ctx(L);
      }
    }
    ts_iv_retain(lv);
    if (!ts_rm_put(&L->values, pv, lv)) {
      ts_iv_release(lv);
      ts_iv_release(lv);
      return ts_rm_fail(L, "out of memory");
    }
    *out = lv;
    return true;
  }
  case TS_PV_DICT: {
    ts_rm_slot *seen = ts_rm_find(&L->values, pv);
    if (seen) {
      *out = seen->v;
      ts_iv_retain(*out);
      return true;
    }
    bool typed = ty && ty->kind == TS_TY_DICT;
    ts_rt_dict *dd = ts_rt_dict_new(&L->ctx, typed ? ty->elems[0] : NULL, typed ? ty->elems[1] : NULL);
    if (!dd)
      return ts_rm_fail_ctx(L);
    ts_iv dv = {.u.dict = dd, .tag = TS_IV_DICT};
    for (uint32_t i = 0; i < pv->u.dict.n; i++) {
      ts_iv k, v;
      if (!ts_rm_value(L, pv->u.dict.keys[i], typed ? ty->elems[0] : NULL, depth + 1, &k)) {
        ts_iv_release(dv);
        return false;
      }
      if (!ts_rm_value(L, pv->u.dict.vals[i], typed ? ty->elems[1] : NULL, depth + 1, &v)) {
        ts_iv_release(k);
        ts_iv_release(dv);
        return false;
      }
      bool ok = ts_rt_dict_set(&L->ctx, dd, k, v);
      ts_iv_release(k);
      ts_iv_release(v);
      if (!ok) {
        ts_iv_release(dv);
        return ts_rm_fail_ctx(L);
      }
    }
    ts_iv_retain(dv);
    if (!ts_rm_put(&L->values, pv, dv)) {
      ts_iv_release(dv);
      ts_iv_release(dv);
      return ts_rm_fail(L, "out of memory");
    }
    *out = dv;
    return true;
  }
  }
  return ts_rm_fail(L, "an unknown pickled value");
}

/* ------------------------------------------------------------------ API */

static ts_rt_model *ts_rm_load_from(const char *path, const void *buf, size_t len, ts_diag *d);

ts_rt_model *ts_rt_model_load(const char *path, ts_diag *d) { return ts_rm_load_from(path, NULL, 0, d); }

ts_rt_model *ts_rt_model_load_buffer(const void *data, size_t len, const char *name, ts_diag *d) {
  return ts_rm_load_from(name, data ? data : "", len, d);
}

static ts_rt_model *ts_rm_load_from(const char *path, const void *buf, size_t len, ts_diag *d) {
  ts_rt_model *m = calloc(1, sizeof *m);
  if (!m) {
    ts_diag_error(d, "%s: out of memory", path);
    return NULL;
  }
  if (!(m->fe = buf ? ts_fe_model_load_buffer(buf, len, path, d) : ts_fe_model_load(path, d))) {
    free(m);
    return NULL;
  }
  ts_rt_resolver r = {
      .ctx = m,
      .method = ts_rm_method_cb,
      .function = ts_rm_function_cb,
      .source = ts_rm_source_cb,
      .cls = ts_rm_class_cb,
  };
  if (!(m->ip = ts_rt_interp_new(&r))) {
    ts_diag_error(d, "%s: out of memory", path);
    ts_rt_model_free(m);
    return NULL;
  }
  ts_rm_load L = {.m = m, .d = d, .path = path};
  L.ctx.nthreads = 1;
  bool ok = ts_rm_value(&L, ts_fe_model_root(m->fe), NULL, 0, &m->root);
  ts_rm_map_free(&L.values, false);
  ts_rm_map_free(&L.storages, true);
  ts_rt_ctx_free(&L.ctx);
  if (ok && m->root.tag != TS_IV_OBJECT) {
    ts_diag_error(d, "%s: the root is not a module object", path);
    ok = false;
  }
  if (!ok) {
    ts_rt_model_free(m);
    return NULL;
  }
  return m;
}

void ts_rt_model_free(ts_rt_model *m) {
  if (!m)
    return;
  ts_iv_release(m->root);
  ts_rt_interp_free(m->ip);
  for (uint32_t i = 0; i < m->nclasses; i++)
    free(m->classes[i]);
  free(m->classes);
  for (uint32_t i = 0; i < m->nmethods; i++)
    free(m->methods[i].name);
  free(m->methods);
  ts_fe_model_free(m->fe);
  free(m);
}

ts_graph *ts_rt_model_graph(ts_rt_model *m, const char *method, ts_diag *d) {
  for (uint32_t i = 0; i < m->nmethods; i++)
    if (strcmp(m->methods[i].name, method) == 0)
      return m->methods[i].g;
  ts_graph *g = ts_fe_model_method_inlined(m->fe, method, d);
  /* the constants that kernels may keep packed copies of (the runtime
   * analyses no graph itself) */
  if (!g || !ts_pass_mark_never_written(g, d))
    return NULL;
  size_t len = strlen(method);
  char *name = malloc(len + 1);
  if (!name || !ts_rm_grow((void **)&m->methods, &m->cap_methods, m->nmethods + 1, sizeof *m->methods)) {
    free(name);
    ts_diag_error(d, "out of memory");
    return NULL;
  }
  memcpy(name, method, len + 1);
  m->methods[m->nmethods].name = name;
  m->methods[m->nmethods].g = g;
  m->nmethods++;
  return g;
}

/* Fills all[given..] (the parameters the caller left out) with the
 * method's default values, as a Python call does. */
static bool ts_rm_defaults(ts_rt_model *m, ts_rt_ctx *ctx, const ts_graph *g, const char *method, ts_iv *all,
                           uint32_t given, ts_buf *where) {
  uint32_t nparams = ts_block_ninputs(g->block), nd = 0;
  const ts_pv *const *defs = NULL;
  ts_diag d = {0};
  bool ok = ts_fe_model_method_defaults(m->fe, m->root.u.obj->cls->qualname, method, &nd, &defs, &d);
  ts_diag_free(&d);
  for (uint32_t i = given; ok && i < nparams; i++) {
    const ts_value *p = ts_block_input(g->block, i);
    if (i >= nd || !defs[i]) {
      ts_rt_fail(ctx, "%s() is missing value for argument '%s'", method, p->name ? p->name : "?");
      ok = false;
      break;
    }
    ts_rm_load L = {.m = m, .d = &d, .path = "default value"};
    L.ctx.nthreads = 1;
    ok = ts_rm_value(&L, defs[i], p->type, 0, &all[i]);
    ts_rm_map_free(&L.values, false);
    ts_rm_map_free(&L.storages, true);
    ts_rt_ctx_free(&L.ctx);
    if (!ok) {
      ts_rt_fail(ctx, "%s", d.text.data ? d.text.data : "bad default value");
      ts_diag_free(&d);
    }
  }
  if (!ok && !ctx->failed)
    ts_rt_fail(ctx, "%s(): cannot read the default values of its parameters", method);
  if (!ok && where)
    ts_buf_printf(where, "error: %s\n", ctx->err.data ? ctx->err.data : "");
  return ok;
}

bool ts_rt_model_defaults(ts_rt_model *m, ts_rt_ctx *ctx, const ts_graph *g, const char *method, ts_iv *all,
                          uint32_t given) {
  return ts_rm_defaults(m, ctx, g, method, all, given, NULL);
}

bool ts_rt_model_run(ts_rt_model *m, ts_rt_ctx *ctx, const char *method, const ts_iv *args, uint32_t nargs,
                     ts_iv *ret, ts_buf *where) {
  return ts_rt_model_run_graph(m, ctx, method, NULL, args, nargs, ret, where);
}

bool ts_rt_model_run_graph(ts_rt_model *m, ts_rt_ctx *ctx, const char *method, ts_graph *graph, const ts_iv *args,
                           uint32_t nargs, ts_iv *ret, ts_buf *where) {
  ts_rt_clear_error(ctx);
  ts_diag d = {0};
  ts_graph *g = graph ? graph : ts_rt_model_graph(m, method, &d);
  if (!g) {
    const char *t = d.text.data && d.text.len ? d.text.data : "error: cannot compile the method\n";
    if (where)
      ts_buf_puts(where, t);
    const char *msg = strstr(t, "error: ");
    msg = msg ? msg + 7 : t;
    const char *nl = strchr(msg, '\n');
    ts_rt_fail(ctx, "%.*s", (int)(nl ? nl - msg : (ptrdiff_t)strlen(msg)), msg);
    ts_diag_free(&d);
    return false;
  }
  ts_diag_free(&d);
  uint32_t nparams = ts_block_ninputs(g->block);
  if (nargs > UINT32_MAX - 1)
    return ts_rt_oom(ctx);
  uint32_t nall = nargs + 1 < nparams ? nparams : nargs + 1;
  /* Per run: from the run's heap (runtime/alloc.c); what the model keeps
   * (classes, compiled methods) stays in the C library. */
  ts_iv *all = ts_rt_calloc(nall, sizeof *all);
  if (!all)
    return ts_rt_oom(ctx);
  all[0] = m->root;
  if (nargs)
    memcpy(all + 1, args, (size_t)nargs * sizeof *args);
  bool ok = nargs + 1 >= nparams || ts_rm_defaults(m, ctx, g, method, all, nargs + 1, where);
  ok = ok && ts_rt_interp_run(m->ip, ctx, g, all, nall, ret, where);
  for (uint32_t i = nargs + 1; i < nall; i++)
    ts_iv_release(all[i]);
  ts_rt_free(all);
  return ok;
}

ts_iv ts_rt_model_root(const ts_rt_model *m) { return m->root; }

/* ts_rt_model_aot_ops: the loader behind runtime/hosted/aot.c's
 * ts_rt_aot_module_ops (the model as void *). */
static void *ts_rm_aot_load(const void *data, size_t len, const char *name, ts_diag *d) {
  return ts_rt_model_load_buffer(data, len, name, d);
}

static bool ts_rm_aot_run_graph(void *m, ts_rt_ctx *ctx, const char *method, ts_graph *g, const ts_iv *args,
                                uint32_t nargs, ts_iv *ret, ts_buf *where) {
  return ts_rt_model_run_graph(m, ctx, method, g, args, nargs, ret, where);
}

static void ts_rm_aot_free(void *m) { ts_rt_model_free(m); }

const ts_rt_aot_module_ops ts_rt_model_aot_ops = {
    .load = ts_rm_aot_load, .run_graph = ts_rm_aot_run_graph, .free = ts_rm_aot_free};
