/* frontend/lookup.c: classes, methods, functions and source text by name,
 * for the runtime's model loader (lookup.h). */
#include "lookup.h"

#include <string.h>

#include "model.h"

bool ts_fe_model_class_layout(ts_fe_model *m, const char *qualname, ts_fe_class_layout *out, ts_diag *d) {
  ts_srange none = {0};
  ts_fe_class *c = ts_fe_model_class(m, qualname, none, d);
  if (!c)
    return false;
  const char **names = ts_arena_alloc(&m->arena, ((size_t)c->nattrs + 1) * sizeof *names);
  const ts_type **types = ts_arena_alloc(&m->arena, ((size_t)c->nattrs + 1) * sizeof *types);
  if (!names || !types) {
    ts_diag_error(d, "%s: out of memory", m->path);
    return false;
  }
  for (uint32_t i = 0; i < c->nattrs; i++) {
    names[i] = c->attrs[i].name;
    types[i] = c->attrs[i].type;
  }
  out->qualname = c->qualname;
  out->type = c->type;
  out->nattrs = c->nattrs;
  out->names = names;
  out->types = types;
  out->is_module = c->kind == TS_FE_CLASS_MODULE;
  return true;
}

ts_graph *ts_fe_model_class_method_graph(ts_fe_model *m, const char *qualname, const char *name, ts_diag *d) {
  ts_srange none = {0};
  ts_fe_class *c = ts_fe_model_class(m, qualname, none, d);
  if (!c)
    return NULL;
  ts_fe_fn *fn = ts_fe_class_method(c, name);
  if (!fn) {
    ts_diag_error(d, "'%s' object has no method '%s'", qualname, name);
    return NULL;
  }
  return ts_fe_fn_optimized(m, fn, d);
}

ts_graph *ts_fe_model_function_graph(ts_fe_model *m, const char *qualname, ts_diag *d) {
  ts_srange none = {0};
  ts_fe_fn *fn = ts_fe_model_function(m, qualname, none, d);
  return fn ? ts_fe_fn_optimized(m, fn, d) : NULL;
}

/* A literal default value as a pickle value (in the model's arena), or
 * NULL for anything else. */
static ts_pv *ts_lk_literal(ts_fe_model *m, const ts_ast *e, int depth) {
  if (!e || depth > 50)
    return NULL;
  ts_pv *v = ts_arena_alloc(&m->arena, sizeof *v);
  if (!v)
    return NULL;
  switch (e->kind) {
  case TS_AST_NONE:
    v->kind = TS_PV_NONE;
    return v;
  case TS_AST_TRUE:
  case TS_AST_FALSE:
    v->kind = TS_PV_BOOL;
    v->u.b = e->kind == TS_AST_TRUE;
    return v;
  case TS_AST_INT:
    v->kind = TS_PV_INT;
    v->u.i = e->i;
    return v;
  case TS_AST_FLOAT:
    v->kind = TS_PV_FLOAT;
    v->u.f = e->f;
    return v;
  case TS_AST_STR:
    v->kind = TS_PV_STR;
    v->u.str.s = e->str;
    v->u.str.len = e->len;
    return v;
  case TS_AST_UNOP: {
    ts_pv *a = strcmp(e->op, "-") == 0 ? ts_lk_literal(m, e->a, depth + 1) : NULL;
    if (!a || (a->kind != TS_PV_INT && a->kind != TS_PV_FLOAT) || (a->kind == TS_PV_INT && a->u.i == INT64_MIN))
      return NULL;
    if (a->kind == TS_PV_INT)
      a->u.i = -a->u.i;
    else
      a->u.f = -a->u.f;
    return a;
  }
  case TS_AST_TUPLE:
  case TS_AST_LIST: {
    v->kind = e->kind == TS_AST_TUPLE ? TS_PV_TUPLE : TS_PV_LIST;
    v->u.seq.n = e->list.n;
    v->u.seq.items = ts_arena_alloc(&m->arena, ((size_t)e->list.n + 1) * sizeof *v->u.seq.items);
    if (!v->u.seq.items)
      return NULL;
    for (uint32_t i = 0; i < e->list.n; i++)
      if (!(v->u.seq.items[i] = ts_lk_literal(m, e->list.v[i], depth + 1)))
        return NULL;
    return v;
  }
  default:
    return NULL;
  }
}

bool ts_fe_model_method_defaults(ts_fe_model *m, const char *qualname, const char *name, uint32_t *n,
                                 const ts_pv *const **defaults, ts_diag *d) {
  ts_srange none = {0};
  ts_fe_class *c = ts_fe_model_class(m, qualname, none, d);
  if (!c)
    return false;
  ts_fe_fn *fn = ts_fe_class_method(c, name);
  if (!fn) {
    ts_diag_error(d, "'%s' object has no method '%s'", qualname, name);
    return false;
  }
  if (!ts_fe_fn_signature(m, fn, d))
    return false;
  const ts_pv **vals = ts_arena_alloc(&m->arena, ((size_t)fn->nparams + 1) * sizeof *vals);
  if (!vals) {
    ts_diag_error(d, "%s: out of memory", m->path);
    return false;
  }
  for (uint32_t i = 0; i < fn->nparams; i++)
    vals[i] = fn->param_defaults[i] ? ts_lk_literal(m, fn->param_defaults[i], 0) : NULL;
  *n = fn->nparams;
  *defaults = vals;
  return true;
}

const char *ts_fe_model_source_text(const ts_fe_model *m, const char *file, size_t *len) {
  for (uint32_t i = 0; i < m->nfiles; i++) {
    const ts_fe_file *f = m->files[i];
    if (f && f->src.file && strcmp(f->src.file, file) == 0) {
      if (len)
        *len = f->src.len;
      return f->src.text;
    }
  }
  return NULL;
}
