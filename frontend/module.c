/* frontend/module.c: the loaded model: archive, module tree, source files,
 * classes and functions found by qualified name, type annotations. */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TS_M_MAX_QUALNAME = 4096 };

static bool ts_m_push(void **arr, uint32_t *n, uint32_t *cap, size_t elem, const void *item) {
  if (*n == *cap) {
    uint32_t nc = *cap ? *cap * 2 : 8;
    void *p = realloc(*arr, (size_t)nc * elem);
    if (!p)
      return false;
    *arr = p;
    *cap = nc;
  }
  memcpy((char *)*arr + (size_t)*n * elem, item, elem);
  (*n)++;
  return true;
}

bool ts_fe_model_own_graph(ts_fe_model *m, ts_graph *g) {
  if (!ts_m_push((void **)&m->graphs, &m->ngraphs, &m->cap_graphs, sizeof g, &g)) {
    ts_graph_free(g);
    return false;
  }
  return true;
}

static ts_fe_model *ts_m_load(const char *path, const void *buf, size_t buflen, ts_diag *d);

ts_fe_model *ts_fe_model_load(const char *path, ts_diag *d) { return ts_m_load(path, NULL, 0, d); }

ts_fe_model *ts_fe_model_load_buffer(const void *data, size_t len, const char *name, ts_diag *d) {
  return ts_m_load(name, data ? data : "", len, d);
}

/* From a file, or from `buf` when it is not NULL (then `path` names it). */
static ts_fe_model *ts_m_load(const char *path, const void *buf, size_t buflen, ts_diag *d) {
  ts_diag tmp = {0};
  if (!ts_ops_init(&tmp)) {
    ts_diag_error(d, "the op table does not parse: %s", tmp.text.data ? tmp.text.data : "?");
    ts_diag_free(&tmp);
    return NULL;
  }
  ts_diag_free(&tmp);
  ts_fe_model *m = calloc(1, sizeof *m);
  if (!m) {
    ts_diag_error(d, "%s: out of memory", path);
    return NULL;
  }
  ts_arena_init(&m->arena, 0);
  m->path = ts_arena_strdup(&m->arena, path);
  m->ar = buf ? ts_fe_archive_open_buffer(buf, buflen, path, NULL, d) : ts_fe_archive_open(path, NULL, d);
  if (!m->ar)
    goto fail;
  size_t len;
  const uint8_t *pkl = ts_fe_archive_read(m->ar, "data.pkl", &len, d);
  if (!pkl)
    goto fail;
  char what[512];
  snprintf(what, sizeof what, "%s: data.pkl", path);
  if (!(m->root = ts_fe_unpickle(&m->arena, pkl, len, what, m->ar, "data/", NULL, d)))
    goto fail;
  if (m->root->kind != TS_PV_OBJECT) {
    ts_diag_error(d, "%s: data.pkl does not hold a module object", path);
    goto fail;
  }
  if (ts_fe_archive_has(m->ar, "constants.pkl")) {
    const uint8_t *c = ts_fe_archive_read(m->ar, "constants.pkl", &len, d);
    if (!c)
      goto fail;
    snprintf(what, sizeof what, "%s: constants.pkl", path);
    if (!(m->constants = ts_fe_unpickle(&m->arena, c, len, what, m->ar, "constants/", NULL, d)))
      goto fail;
    if (m->constants->kind != TS_PV_TUPLE) {
      ts_diag_error(d, "%s: constants.pkl does not hold a tuple", path);
      goto fail;
    }
  }
  if (m->arena.failed) {
    ts_diag_error(d, "%s: out of memory", path);
    goto fail;
  }
  return m;
fail:
  ts_fe_model_free(m);
  return NULL;
}

void ts_fe_model_free(ts_fe_model *m) {
  if (!m)
    return;
  for (uint32_t i = 0; i < m->ngraphs; i++)
    ts_graph_free(m->graphs[i]);
  free(m->graphs);
  free(m->files);
  free(m->unknown);
  ts_fe_archive_close(m->ar);
  ts_arena_release(&m->arena);
  free(m);
}

const ts_pv *ts_fe_model_root(const ts_fe_model *m) { return m->root; }

/* ------------------------------------------------------------ source files */

/* "code/__torch__/a/b.py" for "__torch__.a.b". */
static bool ts_m_file_entry(const char *qualifier, size_t len, char *out, size_t cap) {
  if (len + 9 >= cap)
    return false;
  memcpy(out, "code/", 5);
  for (size_t i = 0; i < len; i++)
    out[5 + i] = qualifier[i] == '.' ? '/' : qualifier[i];
  memcpy(out + 5 + len, ".py", 4);
  return true;
}

/* The parsed file for `qualifier`, or NULL when the archive has none
 * (*missing set) or it does not parse (error in d). */
static ts_fe_file *ts_m_file(ts_fe_model *m, const char *qualifier, size_t qlen, bool *missing, ts_diag *d) {
  *missing = false;
  for (uint32_t i = 0; i < m->nfiles; i++)
    if (strlen(m->files[i]->qualifier) == qlen && memcmp(m->files[i]->qualifier, qualifier, qlen) == 0)
      return m->files[i];
  char entry[TS_M_MAX_QUALNAME + 16];
  if (!ts_m_file_entry(qualifier, qlen, entry, sizeof entry) || !ts_fe_archive_has(m->ar, entry)) {
    *missing = true;
    return NULL;
  }
  size_t len;
  const uint8_t *text = ts_fe_archive_read(m->ar, entry, &len, d);
  if (!text)
    return NULL;
  ts_fe_file *f = ts_arena_alloc(&m->arena, sizeof *f);
  if (!f)
    return NULL;
  f->qualifier = ts_arena_strndup(&m->arena, qualifier, qlen);
  f->src.file = ts_arena_strdup(&m->arena, entry);
  f->src.text = (const char *)text;
  f->src.len = len;
  if (!f->qualifier || !f->src.file)
    return NULL;
  if (!(f->ast = ts_fe_parse(&m->arena, &f->src, d)))
    return NULL;
  if (!ts_m_push((void **)&m->files, &m->nfiles, &m->cap_files, sizeof f, &f))
    return NULL;
  return f;
}

bool ts_fe_model_is_package(ts_fe_model *m, const char *q, size_t len) {
  char entry[TS_M_MAX_QUALNAME + 16];
  if (!ts_m_file_entry(q, len, entry, sizeof entry))
    return false;
  if (ts_fe_archive_has(m->ar, entry))
    return true;
  /* a folder: some entry starts with "code/a/b/" */
  size_t n = strlen(entry) - 3;
  entry[n] = '/';
  entry[n + 1] = 0;
  for (uint32_t i = 0, c = ts_fe_archive_count(m->ar); i < c; i++)
    if (strncmp(ts_fe_archive_name(m->ar, i), entry, n + 1) == 0)
      return true;
  return false;
}

/* The top-level statement of the file defining `name` (a class or def). */
static const ts_ast *ts_m_find_def(const ts_fe_file *f, ts_ast_kind kind, const char *name) {
  for (uint32_t i = 0; i < f->ast->body.n; i++) {
    const ts_ast *s = f->ast->body.v[i];
    if (s->kind == kind && strcmp(s->str, name) == 0)
      return s;
  }
  return NULL;
}

static void ts_m_error(ts_diag *d, ts_srange where, const char *fmt, const char *arg) {
  if (where.src)
    ts_fe_error_at(d, where, fmt, arg);
  else {
    ts_diag_error(d, fmt, arg);
  }
}

/* Splits "__torch__.a.b.C" into the file "__torch__.a.b" and "C". */
static const char *ts_m_split(const char *qualname) {
  const char *dot = strrchr(qualname, '.');
  return dot && dot != qualname && dot[1] ? dot : NULL;
}

static ts_fe_fn *ts_m_new_fn(ts_fe_model *m, const char *qualname, const char *name, ts_fe_file *f, const ts_ast *def,
                             ts_fe_class *owner) {
  ts_fe_fn *fn = ts_arena_alloc(&m->arena, sizeof *fn);
  if (!fn)
    return NULL;
  memset(fn, 0, sizeof *fn);
  fn->qualname = ts_arena_strdup(&m->arena, qualname);
  fn->name = name;
  fn->file = f;
  fn->def = def;
  fn->owner = owner;
  return fn->qualname ? fn : NULL;
}

static bool ts_m_is_name(const ts_ast *e, const char *s) { return e && e->kind == TS_AST_NAME && strcmp(e->str, s) == 0; }

/* Reads a class body: attributes, Final constants, parameter and buffer
 * lists, methods. */
static bool ts_m_read_class(ts_fe_model *m, ts_fe_class *c, ts_diag *d) {
  const ts_ast *def = c->def;
  c->kind = TS_FE_CLASS_PLAIN;
  for (uint32_t i = 0; i < def->list.n; i++) {
    const ts_ast *b = def->list.v[i];
    const char *bn = b->kind == TS_AST_NAME ? b->str : b->kind == TS_AST_ATTR ? b->str : "";
    if (strcmp(bn, "Module") == 0)
      c->kind = TS_FE_CLASS_MODULE;
    else if (strcmp(bn, "NamedTuple") == 0)
      c->kind = TS_FE_CLASS_NAMEDTUPLE;
    else if (strcmp(bn, "Interface") == 0 || strcmp(bn, "ModuleInterface") == 0)
      c->kind = TS_FE_CLASS_INTERFACE;
    else if (strcmp(bn, "Enum") == 0)
      c->kind = TS_FE_CLASS_ENUM;
  }
  uint32_t nattr = 0, nconst = 0;
  for (uint32_t i = 0; i < def->body.n; i++) {
    const ts_ast *s = def->body.v[i];
    if (s->kind == TS_AST_ASSIGN)
      nattr++, nconst++;
  }
  c->attrs = ts_arena_alloc(&m->arena, (nattr + 1) * sizeof *c->attrs);
  c->consts = ts_arena_alloc(&m->arena, (nconst + 1) * sizeof *c->consts);
  if (!c->attrs || !c->consts)
    return false;
  const ts_ast *params = NULL, *buffers = NULL;
  ts_fe_fn **tail = &c->methods;
  for (uint32_t i = 0; i < def->body.n; i++) {
    const ts_ast *s = def->body.v[i];
    if (s->kind == TS_AST_DEF) {
      char q[TS_M_MAX_QUALNAME];
      if ((size_t)snprintf(q, sizeof q, "%s.%s", c->qualname, s->str) >= sizeof q) {
        ts_fe_error_at(d, s->range, "qualified name too long");
        return false;
      }
      ts_fe_fn *fn = ts_m_new_fn(m, q, s->str, c->file, s, c);
      if (!fn)
        return false;
      *tail = fn;
      tail = &fn->next;
      continue;
    }
    if (s->kind != TS_AST_ASSIGN)
      continue;
    /* __annotations__["0"] = T: an attribute whose name is not an identifier
     * (the children of Sequential and ModuleList) */
    if (s->list.n == 1 && s->list.v[0]->kind == TS_AST_SUBSCRIPT && ts_m_is_name(s->list.v[0]->a, "__annotations__") &&
        s->list.v[0]->list.n == 1 && s->list.v[0]->list.v[0]->kind == TS_AST_STR && s->a && !s->b) {
      ts_fe_attr *at = &c->attrs[c->nattrs++];
      at->name = s->list.v[0]->list.v[0]->str;
      at->is_param = at->is_buffer = false;
      if (!(at->type = ts_fe_type_from_ast(m, s->a, d)))
        return false;
      continue;
    }
    if (s->list.n != 1 || s->list.v[0]->kind != TS_AST_NAME) {
      ts_fe_error_at(d, s->range, "expected 'name : Type' or 'name = value' in a class body");
      return false;
    }
    const char *name = s->list.v[0]->str;
    if (!s->b) {
      if (strcmp(name, "__parameters__") == 0)
        params = s->a;
      else if (strcmp(name, "__buffers__") == 0)
        buffers = s->a;
      else {
        ts_fe_const *k = &c->consts[c->nconsts++];
        k->name = name;
        k->type = NULL;
        k->value = s->a;
      }
      continue;
    }
    const ts_ast *ann = s->b;
    if (ann->kind == TS_AST_SUBSCRIPT && ts_m_is_name(ann->a, "Final")) {
      if (ann->list.n != 1 || !s->a) {
        ts_fe_error_at(d, s->range, "a Final constant needs one type and a value");
        return false;
      }
      ts_fe_const *k = &c->consts[c->nconsts++];
      k->name = name;
      k->value = s->a;
      if (!(k->type = ts_fe_type_from_ast(m, ann->list.v[0], d)))
        return false;
      continue;
    }
    ts_fe_attr *at = &c->attrs[c->nattrs++];
    at->name = name;
    at->is_param = at->is_buffer = false;
    if (!(at->type = ts_fe_type_from_ast(m, ann, d)))
      return false;
  }
  /* __parameters__ = ["w", ...] marks attributes */
  for (int pass = 0; pass < 2; pass++) {
    const ts_ast *lst = pass ? buffers : params;
    if (!lst)
      continue;
    if (lst->kind != TS_AST_LIST) {
      ts_fe_error_at(d, lst->range, "expected a list of attribute names");
      return false;
    }
    for (uint32_t i = 0; i < lst->list.n; i++) {
      const ts_ast *e = lst->list.v[i];
      if (e->kind != TS_AST_STR) {
        ts_fe_error_at(d, e->range, "expected an attribute name");
        return false;
      }
      for (uint32_t j = 0; j < c->nattrs; j++)
        if (strcmp(c->attrs[j].name, e->str) == 0) {
          if (pass)
            c->attrs[j].is_buffer = true;
          else
            c->attrs[j].is_param = true;
        }
    }
  }
  if (c->kind == TS_FE_CLASS_NAMEDTUPLE) {
    const ts_type **elems = ts_arena_alloc(&m->arena, (c->nattrs + 1) * sizeof *elems);
    const char **fields = ts_arena_alloc(&m->arena, (c->nattrs + 1) * sizeof *fields);
    if (!elems || !fields)
      return false;
    for (uint32_t i = 0; i < c->nattrs; i++) {
      elems[i] = c->attrs[i].type;
      fields[i] = c->attrs[i].name;
    }
    ts_type *t = (ts_type *)ts_type_tuple(&m->arena, c->nattrs, elems);
    if (!t)
      return false;
    t->fields = fields;
    t->name = c->qualname;
    c->type = t;
  }
  return true;
}

ts_fe_class *ts_fe_model_class(ts_fe_model *m, const char *qualname, ts_srange where, ts_diag *d) {
  for (ts_fe_class *c = m->classes; c; c = c->next)
    if (strcmp(c->qualname, qualname) == 0)
      return c;
  const char *dot = ts_m_split(qualname);
  if (!dot || strlen(qualname) >= TS_M_MAX_QUALNAME) {
    ts_m_error(d, where, "unknown class '%s'", qualname);
    return NULL;
  }
  bool missing;
  ts_fe_file *f = ts_m_file(m, qualname, (size_t)(dot - qualname), &missing, d);
  if (!f) {
    if (missing)
      ts_m_error(d, where, "unknown class '%s' (the archive has no source for it)", qualname);
    return NULL;
  }
  const ts_ast *def = ts_m_find_def(f, TS_AST_CLASS, dot + 1);
  if (!def) {
    ts_m_error(d, where, "unknown class '%s'", qualname);
    return NULL;
  }
  ts_fe_class *c = ts_arena_alloc(&m->arena, sizeof *c);
  if (!c)
    return NULL;
  memset(c, 0, sizeof *c);
  c->qualname = ts_arena_strdup(&m->arena, qualname);
  c->file = f;
  c->def = def;
  if (!c->qualname || !(c->type = ts_type_class(&m->arena, qualname, strlen(qualname))))
    return NULL;
  /* registered before reading so that self-referencing annotations resolve */
  c->next = m->classes;
  m->classes = c;
  if (!ts_m_read_class(m, c, d)) {
    m->classes = c->next;
    return NULL;
  }
  return c;
}

ts_fe_fn *ts_fe_model_function(ts_fe_model *m, const char *qualname, ts_srange where, ts_diag *d) {
  for (ts_fe_fn *fn = m->functions; fn; fn = fn->next)
    if (strcmp(fn->qualname, qualname) == 0)
      return fn;
  const char *dot = ts_m_split(qualname);
  if (!dot || strlen(qualname) >= TS_M_MAX_QUALNAME) {
    ts_m_error(d, where, "unknown function '%s'", qualname);
    return NULL;
  }
  bool missing;
  ts_fe_file *f = ts_m_file(m, qualname, (size_t)(dot - qualname), &missing, d);
  if (!f) {
    if (missing)
      ts_m_error(d, where, "unknown function '%s' (the archive has no source for it)", qualname);
    return NULL;
  }
  const ts_ast *def = ts_m_find_def(f, TS_AST_DEF, dot + 1);
  if (!def) {
    ts_m_error(d, where, "unknown function '%s'", qualname);
    return NULL;
  }
  ts_fe_fn *fn = ts_m_new_fn(m, qualname, def->str, f, def, NULL);
  if (!fn)
    return NULL;
  fn->next = m->functions;
  m->functions = fn;
  return fn;
}

ts_fe_fn *ts_fe_class_method(const ts_fe_class *c, const char *name) {
  for (ts_fe_fn *fn = c->methods; fn; fn = fn->next)
    if (strcmp(fn->name, name) == 0)
      return fn;
  return NULL;
}

const ts_fe_attr *ts_fe_class_attr(const ts_fe_class *c, const char *name) {
  for (uint32_t i = 0; i < c->nattrs; i++)
    if (strcmp(c->attrs[i].name, name) == 0)
      return &c->attrs[i];
  return NULL;
}

const ts_fe_const *ts_fe_class_const(const ts_fe_class *c, const char *name) {
  for (uint32_t i = 0; i < c->nconsts; i++)
    if (strcmp(c->consts[i].name, name) == 0)
      return &c->consts[i];
  return NULL;
}

/* ------------------------------------------------------------------ types */

/* Writes the dotted name of NAME/ATTR chains into `out`; false otherwise. */
static bool ts_m_dotted(const ts_ast *e, ts_buf *out) {
  if (e->kind == TS_AST_NAME) {
    ts_buf_puts(out, e->str);
    return true;
  }
  if (e->kind == TS_AST_ATTR && ts_m_dotted(e->a, out)) {
    ts_buf_putc(out, '.');
    ts_buf_puts(out, e->str);
    return true;
  }
  return false;
}

static const struct {
  const char *name;
  ts_type_kind kind;
} ts_m_leaf_types[] = {
    {"Tensor", TS_TY_TENSOR},       {"int", TS_TY_INT},           {"float", TS_TY_FLOAT},
    {"bool", TS_TY_BOOL},           {"str", TS_TY_STR},           {"NoneType", TS_TY_NONE},
    {"None", TS_TY_NONE},           {"Any", TS_TY_ANY},           {"number", TS_TY_NUMBER},
    {"Scalar", TS_TY_NUMBER},       {"complex", TS_TY_COMPLEX},   {"Device", TS_TY_DEVICE},
    {"torch.device", TS_TY_DEVICE}, {"Stream", TS_TY_STREAM},     {"Generator", TS_TY_GENERATOR},
    {"Storage", TS_TY_STORAGE},     {"Capsule", TS_TY_CAPSULE},   {"Layout", TS_TY_LAYOUT},
    {"ScalarType", TS_TY_SCALARTYPE}, {"MemoryFormat", TS_TY_MEMORYFORMAT}, {"torch.Tensor", TS_TY_TENSOR},
    {"AnyEnumType", TS_TY_ANYENUM}, {"QScheme", TS_TY_QSCHEME},
};

const ts_type *ts_fe_type_from_ast(ts_fe_model *m, const ts_ast *e, ts_diag *d) {
  ts_arena *a = &m->arena;
  if (e->kind == TS_AST_NONE)
    return ts_type_leaf(TS_TY_NONE);
  if (e->kind == TS_AST_STR) {
    /* a forward reference written as a string */
    ts_fe_source src = {e->range.src ? e->range.src->file : "<type>", e->str, e->len};
    ts_ast *inner = ts_fe_parse_expr(a, &src, d);
    return inner ? ts_fe_type_from_ast(m, inner, d) : NULL;
  }
  if (e->kind == TS_AST_NAME || e->kind == TS_AST_ATTR) {
    ts_buf b = {0};
    const ts_type *t = NULL;
    if (ts_m_dotted(e, &b) && b.data) {
      for (size_t i = 0; i < sizeof ts_m_leaf_types / sizeof *ts_m_leaf_types; i++)
        if (strcmp(b.data, ts_m_leaf_types[i].name) == 0)
          t = ts_type_leaf(ts_m_leaf_types[i].kind);
      if (!t && strncmp(b.data, "__torch__.", 10) == 0) {
        ts_fe_class *c = ts_fe_model_class(m, b.data, e->range, d);
        t = c ? c->type : NULL;
        ts_buf_free(&b);
        return t;
      }
    }
    if (!t)
      ts_fe_error_at(d, e->range, "unknown type '%s'", b.data ? b.data : "?");
    ts_buf_free(&b);
    return t;
  }
  if (e->kind == TS_AST_TUPLE && e->list.n == 0)
    return ts_type_tuple(a, 0, NULL);
  if (e->kind != TS_AST_SUBSCRIPT || e->a->kind != TS_AST_NAME) {
    ts_fe_error_at(d, e->range, "expected a type");
    return NULL;
  }
  const char *k = e->a->str;
  uint32_t n = e->list.n;
  const ts_type *elems[64];
  if (n > 64) {
    ts_fe_error_at(d, e->range, "too many type arguments");
    return NULL;
  }
  /* Tuple[()] is the empty tuple */
  if (n == 1 && e->list.v[0]->kind == TS_AST_TUPLE && e->list.v[0]->list.n == 0)
    n = 0;
  for (uint32_t i = 0; i < n; i++)
    if (!(elems[i] = ts_fe_type_from_ast(m, e->list.v[i], d)))
      return NULL;
  const char *want = NULL;
  const ts_type *t = NULL;
  if (strcmp(k, "Tuple") == 0)
    t = ts_type_tuple(a, n, elems);
  else if (strcmp(k, "Union") == 0)
    t = n ? ts_type_union(a, n, elems) : NULL, want = n ? NULL : "at least one type";
  else if (strcmp(k, "Dict") == 0)
    t = n == 2 ? ts_type_dict(a, elems[0], elems[1]) : NULL, want = n == 2 ? NULL : "two types";
  else if (n != 1)
    want = "one type";
  else if (strcmp(k, "List") == 0)
    t = ts_type_list(a, elems[0]);
  else if (strcmp(k, "Optional") == 0)
    t = elems[0]->kind == TS_TY_OPTIONAL ? elems[0] : ts_type_optional(a, elems[0]);
  else if (strcmp(k, "Future") == 0)
    t = ts_type_future(a, elems[0]);
  else if (strcmp(k, "RRef") == 0)
    t = ts_type_rref(a, elems[0]);
  else if (strcmp(k, "Final") == 0)
    t = elems[0];
  else {
    ts_fe_error_at(d, e->a->range, "unknown type constructor '%s'", k);
    return NULL;
  }
  if (want) {
    ts_fe_error_at(d, e->range, "'%s' takes %s", k, want);
    return NULL;
  }
  return t;
}

bool ts_fe_fn_signature(ts_fe_model *m, ts_fe_fn *fn, ts_diag *d) {
  if (fn->sig_ok)
    return true;
  const ts_ast *def = fn->def;
  uint32_t n = def->list.n;
  fn->param_names = ts_arena_alloc(&m->arena, (n + 1) * sizeof *fn->param_names);
  fn->param_types = ts_arena_alloc(&m->arena, (n + 1) * sizeof *fn->param_types);
  fn->param_defaults = ts_arena_alloc(&m->arena, (n + 1) * sizeof *fn->param_defaults);
  if (!fn->param_names || !fn->param_types || !fn->param_defaults)
    return false;
  for (uint32_t i = 0; i < n; i++) {
    const ts_ast *p = def->list.v[i];
    if (p->flags & TS_AST_F_VARARGS) {
      ts_fe_error_at(d, p->range, "*args parameters are not supported in TorchScript");
      return false;
    }
    fn->param_names[i] = p->str;
    fn->param_defaults[i] = p->b;
    if (i == 0 && fn->owner && strcmp(p->str, "self") == 0)
      fn->param_types[i] = fn->owner->type;
    else if (p->a) {
      if (!(fn->param_types[i] = ts_fe_type_from_ast(m, p->a, d)))
        return false;
    } else
      fn->param_types[i] = ts_type_leaf(TS_TY_TENSOR);
  }
  fn->nparams = n;
  fn->ret_type = NULL;
  if (def->a && !(fn->ret_type = ts_fe_type_from_ast(m, def->a, d)))
    return false;
  fn->sig_ok = true;
  return true;
}

/* ------------------------------------------------------------ entry points */

/* The method `name` of the root module's class. */
static ts_fe_fn *ts_m_root_method(ts_fe_model *m, const char *name, ts_diag *d) {
  ts_srange none = {0};
  ts_fe_class *c = ts_fe_model_class(m, m->root->u.obj.cls, none, d);
  if (!c)
    return NULL;
  ts_fe_fn *fn = ts_fe_class_method(c, name);
  if (!fn)
    ts_diag_error(d, "%s: class %s has no method '%s'", m->path, c->qualname, name);
  return fn;
}

/* The function a prim::CallMethod / prim::CallFunction node calls. */
static ts_fe_fn *ts_m_call_target(ts_fe_model *m, const ts_node *n, ts_diag *d) {
  ts_srange none = {0};
  const ts_type *t = n->inputs[0]->type;
  if (ts_node_is(n, TS_K_prim_CallFunction))
    return t->kind == TS_TY_FUNCTION && t->name ? ts_fe_model_function(m, t->name, none, d) : NULL;
  const ts_attr *a = ts_node_attr(n, "name");
  if (!a || a->kind != TS_ATTR_STR || t->kind != TS_TY_CLASS)
    return NULL;
  ts_fe_class *c = ts_fe_model_class(m, t->name, none, d);
  return c ? ts_fe_class_method(c, a->u.s) : NULL;
}

/* Compiles every function `b` calls, transitively, so that one run reports
 * the errors of all of them. */
static bool ts_m_compile_callees(ts_fe_model *m, const ts_block *b, int depth, ts_diag *d) {
  bool ok = true;
  if (depth > 200) {
    ts_diag_error(d, "%s: calls nested more than 200 deep", m->path);
    return false;
  }
  for (ts_node *n = ts_block_first(b); n != b->ret; n = n->next) {
    for (uint32_t i = 0; i < n->nblocks; i++)
      ok = ts_m_compile_callees(m, n->blocks[i], depth, d) && ok;
    if (!ts_node_is(n, TS_K_prim_CallMethod) && !ts_node_is(n, TS_K_prim_CallFunction))
      continue;
    ts_fe_fn *fn = ts_m_call_target(m, n, d);
    if (fn && fn->owner && fn->owner->kind == TS_FE_CLASS_INTERFACE)
      continue; /* an interface's methods have no body to compile */
    if (!fn || fn->state == TS_FE_FAILED) {
      ok = false;
      continue;
    }
    if (fn->state != TS_FE_NOT_COMPILED)
      continue;
    ts_graph *g = ts_fe_fn_graph(m, fn, d);
    ts_graph *seen = g ? g : fn->graph;
    ok = g && ok;
    if (seen)
      ok = ts_m_compile_callees(m, seen->block, depth + 1, d) && ok;
  }
  return ok;
}

bool ts_fe_model_note_unknown(ts_fe_model *m, const char *name) {
  if (m->nunknown == m->cap_unknown) {
    uint32_t cap = m->cap_unknown ? m->cap_unknown * 2 : 16;
    const char **u = cap > m->cap_unknown ? realloc(m->unknown, cap * sizeof *u) : NULL;
    if (!u)
      return false;
    m->unknown = u;
    m->cap_unknown = cap;
  }
  const char *s = ts_arena_strdup(&m->arena, name);
  if (!s)
    return false;
  m->unknown[m->nunknown++] = s;
  return true;
}

typedef struct ts_m_count {
  const char *name;
  uint32_t n;
} ts_m_count;

/* Most calls first, then by name. */
static int ts_m_count_cmp(const void *a, const void *b) {
  const ts_m_count *x = a, *y = b;
  if (x->n != y->n)
    return x->n > y->n ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* One error after the others: the unknown operators reported since entry
 * `from`, grouped, with their counts, one per line, most calls first
 * ("3 calls of 2 operators ...:" then "  aten::a: 2 calls"). */
static void ts_m_unknown_summary(ts_fe_model *m, uint32_t from, ts_diag *d) {
  uint32_t n = m->nunknown - from, ng = 0;
  if (!n)
    return;
  ts_m_count *c = calloc(n, sizeof *c);
  if (!c) {
    ts_diag_error(d, "%s: out of memory", m->path);
    return;
  }
  for (uint32_t i = from; i < m->nunknown; i++) {
    uint32_t k = 0;
    while (k < ng && strcmp(c[k].name, m->unknown[i]) != 0)
      k++;
    if (k == ng)
      c[ng++].name = m->unknown[i];
    c[k].n++;
  }
  qsort(c, ng, sizeof *c, ts_m_count_cmp);
  ts_buf b = {0};
  for (uint32_t k = 0; k < ng; k++)
    ts_buf_printf(&b, "\n  %s: %u call%s", c[k].name, c[k].n, c[k].n == 1 ? "" : "s");
  ts_diag_error(d, "%s: %u call%s of %u operator%s that neither tsaot nor PyTorch 1.13 knows:%s", m->path, n,
                n == 1 ? "" : "s", ng, ng == 1 ? "" : "s", b.data ? b.data : " ?");
  ts_buf_free(&b);
  free(c);
}

ts_graph *ts_fe_model_method(ts_fe_model *m, const char *method, ts_diag *d) {
  ts_fe_fn *fn = ts_m_root_method(m, method, d);
  if (!fn)
    return NULL;
  bool fresh = fn->state == TS_FE_NOT_COMPILED;
  uint32_t from = m->nunknown;
  ts_graph *g = ts_fe_fn_graph(m, fn, d);
  /* a method that failed still has its calls looked at, so that one run
   * reports every unknown operator */
  ts_graph *seen = g ? g : fn->graph;
  if (seen && fresh && !ts_m_compile_callees(m, seen->block, 0, d))
    g = NULL;
  ts_m_unknown_summary(m, from, d);
  return g;
}

/* --------------------------------------------------------------- --code */

static void ts_m_indent(ts_buf *b, int n) {
  for (int i = 0; i < n; i++)
    ts_buf_puts(b, "  ");
}

static bool ts_m_print_object(ts_fe_model *m, ts_buf *b, const char *name, const ts_pv *obj, int depth, ts_diag *d) {
  ts_srange none = {0};
  if (depth > 64) {
    ts_diag_error(d, "%s: module tree deeper than 64 levels", m->path);
    return false;
  }
  ts_fe_class *c = ts_fe_model_class(m, obj->u.obj.cls, none, d);
  if (!c)
    return false;
  ts_m_indent(b, depth);
  ts_buf_printf(b, "%s : %s\n", name, c->qualname);
  for (uint32_t i = 0; i < c->nattrs; i++) {
    const ts_fe_attr *at = &c->attrs[i];
    const ts_pv *v = ts_pv_object_attr(obj, at->name);
    if (v && v->kind == TS_PV_OBJECT && at->type->kind == TS_TY_CLASS) {
      if (!ts_m_print_object(m, b, at->name, v, depth + 1, d))
        return false;
      continue;
    }
    ts_m_indent(b, depth + 1);
    ts_buf_printf(b, "%s%s : ", at->is_param ? "param " : at->is_buffer ? "buffer " : "", at->name);
    ts_type_print(b, at->type);
    ts_buf_puts(b, " = ");
    if (v)
      ts_pv_print(b, v, 3);
    else
      ts_buf_puts(b, "<missing>");
    ts_buf_putc(b, '\n');
  }
  for (uint32_t i = 0; i < c->nconsts; i++) {
    const ts_fe_const *k = &c->consts[i];
    ts_m_indent(b, depth + 1);
    ts_buf_printf(b, "const %s", k->name);
    if (k->type) {
      ts_buf_puts(b, " : ");
      ts_type_print(b, k->type);
    }
    const ts_srange *r = &k->value->range;
    ts_buf_printf(b, " = %.*s\n", (int)(r->end - r->start), r->src->text + r->start);
  }
  for (ts_fe_fn *fn = c->methods; fn; fn = fn->next) {
    if (!ts_fe_fn_signature(m, fn, d))
      return false;
    ts_m_indent(b, depth + 1);
    ts_buf_printf(b, "def %s(", fn->name);
    for (uint32_t i = 0; i < fn->nparams; i++) {
      ts_buf_printf(b, "%s%s: ", i ? ", " : "", fn->param_names[i]);
      ts_type_print(b, fn->param_types[i]);
    }
    ts_buf_puts(b, ")");
    if (fn->ret_type) {
      ts_buf_puts(b, " -> ");
      ts_type_print(b, fn->ret_type);
    }
    ts_buf_putc(b, '\n');
  }
  return true;
}

bool ts_fe_model_print_code(ts_fe_model *m, ts_buf *b, ts_diag *d) {
  return ts_m_print_object(m, b, "self", m->root, 0, d);
}
