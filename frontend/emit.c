/* frontend/emit.c: the IR emitter. Turns a function's AST into an SSA graph
 * the way torch/csrc/jit/frontend/ir_emitter.cpp does for the code that
 * PyTorch's Python printer writes: sugared values for self, submodules,
 * methods, builtins and __torch__ functions; overload resolution against the
 * op table; If/Loop nodes with block arguments and outputs; then PyTorch's
 * cleanup passes. */
#include "model.h"
#include "passes.h"

#include <limits.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  TS_E_MAX_ARGS = 256,
  TS_E_MAX_DEPTH = 200, /* nested statements/expressions, and call chains */
};

/* ------------------------------------------------------------ sugared values */

typedef enum ts_sv_kind {
  TS_SV_VALUE,      /* v */
  TS_SV_NS,         /* an operator namespace: "torch" -> aten, "ops.prim" -> prim (s) */
  TS_SV_OPS,        /* "ops" */
  TS_SV_BUILTIN,    /* an operator: s = "aten::add"; v = bound self or NULL */
  TS_SV_PKG,        /* a prefix of a qualified name: s = "__torch__.a" */
  TS_SV_FUNCTION,   /* fn */
  TS_SV_METHOD,     /* fn bound to v */
  TS_SV_CLASS,      /* cls: a constructor / type */
  TS_SV_CONSTANTS,  /* CONSTANTS */
  TS_SV_SPECIAL,    /* s: annotate, isinstance, range, ... */
  TS_SV_EMPTY,      /* the result of a call that returns nothing */
} ts_sv_kind;

typedef struct ts_sv {
  ts_sv_kind kind;
  ts_value *v;
  const char *s;
  ts_fe_fn *fn;
  ts_fe_class *cls;
  /* a variable's annotated type (x : T = v), which later assignments keep
   * and an if or loop gives it where its values join, as PyTorch does */
  const ts_type *decl;
} ts_sv;

/* ------------------------------------------------------------- environment */

typedef struct ts_env_var {
  const char *name;
  ts_sv sv;
} ts_env_var;

typedef struct ts_env {
  struct ts_env *parent;
  ts_env_var *vars;
  uint32_t n, cap;
} ts_env;

typedef struct ts_em {
  ts_fe_model *m;
  ts_fe_fn *fn;
  ts_graph *g;
  ts_block *blk; /* nodes are appended here */
  ts_env *env;
  ts_diag *d;
  int errors; /* errors reported; emission goes on after unknown ops */
  int depth;
  bool in_loop; /* emitting a loop body: break and continue end the block */
  bool oom;
} ts_em;

static bool ts_env_set(ts_em *e, ts_env *env, const char *name, ts_sv sv) {
  for (uint32_t i = 0; i < env->n; i++)
    if (strcmp(env->vars[i].name, name) == 0) {
      env->vars[i].sv = sv;
      return true;
    }
  if (env->n == env->cap) {
    uint32_t cap = env->cap ? env->cap * 2 : 16;
    ts_env_var *v = realloc(env->vars, cap * sizeof *v);
    if (!v) {
      e->oom = true;
      return false;
    }
    env->vars = v;
    env->cap = cap;
  }
  env->vars[env->n].name = name;
  env->vars[env->n].sv = sv;
  env->n++;
  return true;
}

static ts_sv *ts_env_find_here(ts_env *env, const char *name) {
  for (uint32_t i = 0; i < env->n; i++)
    if (strcmp(env->vars[i].name, name) == 0)
      return &env->vars[i].sv;
  return NULL;
}

static ts_sv *ts_env_find(ts_env *env, const char *name) {
  for (; env; env = env->parent) {
    ts_sv *sv = ts_env_find_here(env, name);
    if (sv)
      return sv;
  }
  return NULL;
}

static void ts_env_free(ts_env *env) { free(env->vars); }

/* ------------------------------------------------------------------ errors */

static void ts_e_error(ts_em *e, ts_srange r, const char *fmt, ...) TS_PRINTF(3, 4);
static void ts_e_error(ts_em *e, ts_srange r, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  e->errors++;
  ts_fe_error_at(e->d, r, "%s", msg);
}

static void ts_e_type_str(char *out, size_t cap, const ts_type *t) {
  ts_buf b = {0};
  ts_type_print(&b, t);
  snprintf(out, cap, "%s", b.data ? b.data : "?");
  ts_buf_free(&b);
}

/* A value standing for the result of something that failed, so that
 * emission can go on and report further unknown operators. */
static bool ts_e_is_poison(const ts_value *v) {
  return v->node->kind == TS_K_OTHER && strcmp(v->node->kind_name, "tsaot::error") == 0;
}

/* --------------------------------------------------------------- building */

static ts_node *ts_e_node(ts_em *e, ts_kind k, uint32_t nout, ts_srange r) {
  if (k >= TS_K_COUNT) {
    ts_e_error(e, r, "the op table lacks an operator this construct needs");
    return NULL;
  }
  ts_node *n = ts_node_new(e->g, k, nout);
  if (!n) {
    e->oom = true;
    return NULL;
  }
  if (r.src) {
    n->loc.file = r.src->file;
    n->loc.line = r.line;
    n->loc.col = r.col;
  }
  ts_block_append_node(e->blk, n);
  return n;
}

/* A node of an operator the op table lacks (ir/ops_pytorch.def). */
static ts_node *ts_e_node_named(ts_em *e, const char *name, size_t len, uint32_t nout, ts_srange r) {
  ts_node *n = ts_node_new_named(e->g, name, len, nout);
  if (!n) {
    e->oom = true;
    return NULL;
  }
  if (r.src) {
    n->loc.file = r.src->file;
    n->loc.line = r.line;
    n->loc.col = r.col;
  }
  ts_block_append_node(e->blk, n);
  return n;
}

static ts_value *ts_e_out(ts_node *n, uint32_t i, const ts_type *t) {
  if (!n)
    return NULL;
  ts_value_set_type(n->outputs[i], t);
  return n->outputs[i];
}

static ts_value *ts_e_poison(ts_em *e, ts_srange r, const char *what) {
  (void)what;
  ts_node *n = ts_node_new_named(e->g, "tsaot::error", 12, 1);
  if (!n) {
    e->oom = true;
    return NULL;
  }
  n->loc.file = r.src ? r.src->file : NULL;
  n->loc.line = r.line;
  n->loc.col = r.col;
  ts_block_append_node(e->blk, n);
  return ts_e_out(n, 0, ts_type_leaf(TS_TY_ANY));
}

static ts_value *ts_e_const_int(ts_em *e, int64_t v, const ts_type *t, ts_srange r) {
  ts_node *n = ts_e_node(e, TS_K_prim_Constant, 1, r);
  if (!n || !ts_node_set_i(n, "value", v))
    return NULL;
  return ts_e_out(n, 0, t ? t : ts_type_leaf(TS_TY_INT));
}

static ts_value *ts_e_const_float(ts_em *e, double v, ts_srange r) {
  ts_node *n = ts_e_node(e, TS_K_prim_Constant, 1, r);
  if (!n || !ts_node_set_f(n, "value", v))
    return NULL;
  return ts_e_out(n, 0, ts_type_leaf(TS_TY_FLOAT));
}

static ts_value *ts_e_const_str(ts_em *e, const char *s, size_t len, const ts_type *t, ts_srange r) {
  ts_node *n = ts_e_node(e, TS_K_prim_Constant, 1, r);
  if (!n || !ts_node_set_s(n, "value", s, len))
    return NULL;
  return ts_e_out(n, 0, t ? t : ts_type_leaf(TS_TY_STR));
}

static ts_value *ts_e_const_none(ts_em *e, const ts_type *t, ts_srange r) {
  ts_node *n = ts_e_node(e, TS_K_prim_Constant, 1, r);
  return ts_e_out(n, 0, t ? t : ts_type_leaf(TS_TY_NONE));
}

static ts_value *ts_e_const_bool(ts_em *e, bool v, ts_srange r) {
  return ts_e_const_int(e, v, ts_type_leaf(TS_TY_BOOL), r);
}

static ts_srange ts_e_noloc(void) {
  ts_srange r = {0};
  return r;
}

/* Whether v is a prim::Constant holding an int (or bool); the value in *out. */
static bool ts_e_const_int_of(const ts_value *v, int64_t *out) {
  ts_cval c;
  if (!ts_pass_const_get(v, &c) || (c.kind != TS_CV_INT && c.kind != TS_CV_BOOL))
    return false;
  *out = c.i;
  return true;
}

/* Python's meaning of a name: "_3" names a temporary of the printer. */
static bool ts_e_meaningful_name(const char *name) {
  if (name[0] == '$') /* the emitter's own variables */
    return false;
  if (name[0] != '_')
    return true;
  for (const char *p = name + 1; *p; p++)
    if (*p < '0' || *p > '9')
      return true;
  return false;
}

/* --------------------------------------------------------------- types */

static const ts_type *ts_e_unify(ts_em *e, const ts_type *a, const ts_type *b) {
  bool oom = false; /* the arena's failure is sticky and checked by the caller */
  return ts_type_unify(&e->m->arena, a, b, &oom);
}

/* Type variables of a schema ("t" in t[]) bound while matching. */
typedef struct ts_tvars {
  const char *names[16];
  const ts_type *types[16];
  uint32_t n;
} ts_tvars;

static const ts_type *ts_tvars_get(const ts_tvars *tv, const char *name) {
  for (uint32_t i = 0; i < tv->n; i++)
    if (strcmp(tv->names[i], name) == 0)
      return tv->types[i];
  return NULL;
}

/* The type a variable gets where two of its values join (an if's branches,
 * a loop's entry and body end): its annotated type `decl` when both fit it,
 * else what they unify to. */
static const ts_type *ts_e_join_type(ts_em *e, const ts_type *decl, const ts_type *a, const ts_type *b) {
  if (decl && ts_type_is_subtype(a, decl) && ts_type_is_subtype(b, decl))
    return decl;
  return ts_e_unify(e, a, b);
}

static bool ts_e_has_vars(const ts_type *t) {
  if (t->kind == TS_TY_VAR)
    return true;
  if (t->kind == TS_TY_CLASS)
    return false;
  for (uint32_t i = 0; i < t->n; i++)
    if (ts_e_has_vars(t->elems[i]))
      return true;
  return false;
}

/* Binds the type variables of `formal` against `actual` (PyTorch's
 * matchTypeVariables). */
static bool ts_e_bind(ts_em *e, const ts_type *formal, const ts_type *actual, ts_tvars *tv) {
  if (formal->kind == TS_TY_VAR) {
    const ts_type *cur = ts_tvars_get(tv, formal->name);
    if (!cur) {
      if (tv->n == 16)
        return false;
      tv->names[tv->n] = formal->name;
      tv->types[tv->n++] = actual;
      return true;
    }
    const ts_type *u = ts_e_unify(e, cur, actual);
    if (!u)
      return false;
    for (uint32_t i = 0; i < tv->n; i++)
      if (strcmp(tv->names[i], formal->name) == 0)
        tv->types[i] = u;
    return true;
  }
  if (formal->n == 0)
    return true;
  if (formal->kind == TS_TY_OPTIONAL) {
    if (actual->kind == TS_TY_NONE)
      return true;
    return ts_e_bind(e, formal->elems[0], actual->kind == TS_TY_OPTIONAL ? actual->elems[0] : actual, tv);
  }
  if (actual->kind != formal->kind || actual->n != formal->n) {
    if (formal->kind == TS_TY_LIST && actual->kind == TS_TY_TUPLE) /* tuple -> list conversion */
      return true;
    /* no variables to bind: the subtype check decides (unions, Any) */
    return !ts_e_has_vars(formal);
  }
  for (uint32_t i = 0; i < formal->n; i++)
    if (!ts_e_bind(e, formal->elems[i], actual->elems[i], tv))
      return false;
  return true;
}

/* The formal type with bound variables replaced; SymInt reads as int. */
static const ts_type *ts_e_subst(ts_em *e, const ts_type *t, const ts_tvars *tv) {
  ts_arena *ar = &e->m->arena;
  if (t->kind == TS_TY_VAR) {
    const ts_type *b = ts_tvars_get(tv, t->name);
    return b ? b : NULL;
  }
  /* PyTorch's schema parser reads SymInt, ScalarType, Layout and
   * MemoryFormat as int: values of those types are ints in graphs */
  if (t->kind == TS_TY_SYMINT || t->kind == TS_TY_SCALARTYPE || t->kind == TS_TY_LAYOUT ||
      t->kind == TS_TY_MEMORYFORMAT)
    return ts_type_leaf(TS_TY_INT);
  if (t->n == 0 || t->kind == TS_TY_CLASS)
    return t;
  const ts_type *el[TS_E_MAX_ARGS];
  if (t->n > TS_E_MAX_ARGS)
    return NULL;
  bool same = true;
  for (uint32_t i = 0; i < t->n; i++) {
    if (!(el[i] = ts_e_subst(e, t->elems[i], tv)))
      return NULL;
    same = same && el[i] == t->elems[i];
  }
  if (same)
    return t;
  switch (t->kind) {
  case TS_TY_OPTIONAL: return ts_type_optional(ar, el[0]);
  case TS_TY_LIST: return ts_type_list(ar, el[0]);
  case TS_TY_FUTURE: return ts_type_future(ar, el[0]);
  case TS_TY_RREF: return ts_type_rref(ar, el[0]);
  case TS_TY_DICT: return ts_type_dict(ar, el[0], el[1]);
  case TS_TY_TUPLE: return ts_type_tuple(ar, t->n, el);
  case TS_TY_UNION: return ts_type_union(ar, t->n, el);
  default: return t;
  }
}

/* ------------------------------------------------------- argument matching */

typedef struct ts_arg_in {
  const char *kw; /* NULL: positional */
  ts_value *v;
  ts_srange r;
} ts_arg_in;

/* How a value converts to a formal type (PyTorch's tryConvertToType and
 * the implicit conversions of schema matching). */
typedef enum ts_conv {
  TS_CONV_NONE,       /* fits as it is */
  TS_CONV_FAIL,
  TS_CONV_INT_IMPLICIT,   /* Tensor -> int */
  TS_CONV_FLOAT_IMPLICIT, /* Tensor -> float */
  TS_CONV_SCALAR_IMPLICIT,/* Tensor -> Scalar */
  TS_CONV_FLOAT,          /* Scalar/bool -> float: aten::Float */
  TS_CONV_INT,            /* Scalar/bool -> int: aten::Int */
  TS_CONV_NUM_TO_TENSOR,  /* number -> Tensor */
  TS_CONV_DEVICE,         /* str -> Device */
  TS_CONV_TUPLE_TO_LIST,  /* homogeneous tuple -> list */
  TS_CONV_REPEAT,         /* int used as int[N] */
} ts_conv;

static bool ts_e_is_number(const ts_type *t) {
  return t->kind == TS_TY_INT || t->kind == TS_TY_FLOAT || t->kind == TS_TY_NUMBER || t->kind == TS_TY_COMPLEX;
}

/* Decides how `actual` fits `formal` (formal has type variables bound or
 * not yet: they bind here). */
static ts_conv ts_e_match_type(ts_em *e, const ts_type *formal, int32_t list_len, const ts_value *v, bool allow_conv,
                               ts_tvars *tv) {
  const ts_type *actual = v->type;
  /* Optional[T]: None fits, and so does anything that fits T */
  if (formal->kind == TS_TY_OPTIONAL && actual->kind != TS_TY_OPTIONAL && actual->kind != TS_TY_NONE)
    return ts_e_match_type(e, formal->elems[0], list_len, v, allow_conv, tv);
  ts_tvars save = *tv;
  if (ts_e_bind(e, formal, actual, tv)) {
    const ts_type *f = ts_e_subst(e, formal, tv);
    if (f && ts_type_is_subtype(actual, f))
      return TS_CONV_NONE;
    if (f && f->kind == TS_TY_LIST && f->elems[0]->kind == TS_TY_SYMINT && actual->kind == TS_TY_LIST &&
        actual->elems[0]->kind == TS_TY_INT)
      return TS_CONV_NONE;
    if (f && actual->kind == TS_TY_TUPLE && f->kind == TS_TY_LIST && actual->n > 0) {
      bool all = true;
      for (uint32_t i = 0; i < actual->n; i++)
        all = all && ts_type_is_subtype(actual->elems[i], f->elems[0]);
      if (all)
        return TS_CONV_TUPLE_TO_LIST;
    }
    /* a single int or float where int[N] / float[N] is expected */
    if (f && list_len > 0 && f->kind == TS_TY_LIST && ts_type_is_subtype(actual, f->elems[0]) &&
        (actual->kind == TS_TY_INT || actual->kind == TS_TY_FLOAT))
      return TS_CONV_REPEAT;
    if (f && allow_conv) {
      if (ts_type_is_subtype(actual, ts_type_leaf(TS_TY_STR)) && f->kind == TS_TY_DEVICE)
        return TS_CONV_DEVICE;
      if (actual->kind == TS_TY_TENSOR) {
        if (f->kind == TS_TY_INT || f->kind == TS_TY_SYMINT)
          return TS_CONV_INT_IMPLICIT;
        if (f->kind == TS_TY_FLOAT)
          return TS_CONV_FLOAT_IMPLICIT;
        if (f->kind == TS_TY_NUMBER)
          return TS_CONV_SCALAR_IMPLICIT;
      } else if (actual->kind == TS_TY_NUMBER || actual->kind == TS_TY_BOOL) {
        if (f->kind == TS_TY_FLOAT)
          return TS_CONV_FLOAT;
        if (f->kind == TS_TY_INT || (actual->kind == TS_TY_BOOL && f->kind == TS_TY_NUMBER))
          return TS_CONV_INT;
      }
      if (ts_e_is_number(actual) && f->kind == TS_TY_TENSOR)
        return TS_CONV_NUM_TO_TENSOR;
    }
  }
  *tv = save;
  return TS_CONV_FAIL;
}

/* Whether v is a prim::Constant str. */
static bool ts_e_const_str_of(const ts_value *v) {
  ts_cval c;
  return ts_pass_const_get(v, &c) && c.kind == TS_CV_STR;
}

/* torch.device("cpu") of a constant string is a Device constant, as
 * PyTorch's constant propagation makes it. */
static ts_value *ts_e_const_device(ts_em *e, const ts_value *str, ts_srange r) {
  ts_cval c;
  ts_device dev;
  ts_pass_const_get(str, &c);
  if (!ts_device_parse(c.s, c.len, &dev)) {
    ts_e_error(e, r, "'%.*s' is not a device", (int)c.len, c.s);
    return NULL;
  }
  return ts_e_const_str(e, c.s, c.len, ts_type_leaf(TS_TY_DEVICE), r);
}

static ts_value *ts_e_builtin_node1(ts_em *e, ts_kind k, ts_value *in, const ts_type *t, ts_srange r) {
  ts_node *n = ts_e_node(e, k, 1, r);
  if (!n || !ts_node_add_input(n, in))
    return NULL;
  return ts_e_out(n, 0, t);
}

static ts_value *ts_e_tuple_unpack(ts_em *e, ts_value *tup, ts_value **out, ts_srange r);

static ts_value *ts_e_apply_conv(ts_em *e, ts_conv c, ts_value *v, const ts_type *formal, int32_t list_len, ts_srange r) {
  switch (c) {
  case TS_CONV_NONE: return v;
  case TS_CONV_FAIL: return NULL;
  case TS_CONV_INT_IMPLICIT: return ts_e_builtin_node1(e, TS_K_aten_IntImplicit, v, ts_type_leaf(TS_TY_INT), r);
  case TS_CONV_FLOAT_IMPLICIT: return ts_e_builtin_node1(e, TS_K_aten_FloatImplicit, v, ts_type_leaf(TS_TY_FLOAT), r);
  case TS_CONV_SCALAR_IMPLICIT:
    return ts_e_builtin_node1(e, TS_K_aten_ScalarImplicit, v, ts_type_leaf(TS_TY_NUMBER), r);
  case TS_CONV_FLOAT: return ts_e_builtin_node1(e, TS_K_aten_Float, v, ts_type_leaf(TS_TY_FLOAT), r);
  case TS_CONV_INT: return ts_e_builtin_node1(e, TS_K_aten_Int, v, ts_type_leaf(TS_TY_INT), r);
  case TS_CONV_NUM_TO_TENSOR: return ts_e_builtin_node1(e, TS_K_prim_NumToTensor, v, ts_type_leaf(TS_TY_TENSOR), r);
  case TS_CONV_DEVICE:
    if (ts_e_const_str_of(v))
      return ts_e_const_device(e, v, r);
    return ts_e_builtin_node1(e, ts_kind_lookup("aten::device", 12), v, ts_type_leaf(TS_TY_DEVICE), r);
  case TS_CONV_TUPLE_TO_LIST: {
    ts_value *el[TS_E_MAX_ARGS];
    uint32_t n = v->type->n;
    if (n > TS_E_MAX_ARGS || !ts_e_tuple_unpack(e, v, el, r))
      return NULL;
    const ts_type *lt = formal->kind == TS_TY_OPTIONAL ? formal->elems[0] : formal;
    ts_node *ln = ts_e_node(e, TS_K_prim_ListConstruct, 1, r);
    if (!ln)
      return NULL;
    for (uint32_t i = 0; i < n; i++)
      if (!ts_node_add_input(ln, el[i]))
        return NULL;
    return ts_e_out(ln, 0, lt->kind == TS_TY_LIST ? lt : ts_type_list(&e->m->arena, v->type->elems[0]));
  }
  case TS_CONV_REPEAT: {
    ts_node *ln = ts_e_node(e, TS_K_prim_ListConstruct, 1, r);
    if (!ln)
      return NULL;
    for (int32_t i = 0; i < list_len; i++)
      if (!ts_node_add_input(ln, v))
        return NULL;
    return ts_e_out(ln, 0, ts_type_list(&e->m->arena, v->type));
  }
  }
  return NULL;
}

/* A schema default as a constant (PyTorch inserts the default IValue). */
static ts_value *ts_e_default(ts_em *e, const ts_arg *a, const ts_type *formal, ts_srange r) {
  const ts_default *d = &a->def;
  const ts_type *t = formal;
  switch (d->kind) {
  case TS_DEF_NONE_VALUE: return ts_e_const_none(e, NULL, r);
  case TS_DEF_BOOL: return ts_e_const_bool(e, d->u.b, r);
  case TS_DEF_INT:
    if (t->kind == TS_TY_FLOAT)
      return ts_e_const_float(e, (double)d->u.i, r);
    return ts_e_const_int(e, d->u.i, NULL, r);
  case TS_DEF_FLOAT: return ts_e_const_float(e, d->u.f, r);
  case TS_DEF_STR: return ts_e_const_str(e, d->u.s, d->len, NULL, r);
  case TS_DEF_INTS: {
    ts_node *n = ts_e_node(e, TS_K_prim_Constant, 1, r);
    if (!n || !ts_node_set_is(n, "value", d->u.is, d->len))
      return NULL;
    return ts_e_out(n, 0, ts_type_list(&e->m->arena, ts_type_leaf(TS_TY_INT)));
  }
  case TS_DEF_FLOATS: {
    ts_node *n = ts_e_node(e, TS_K_prim_Constant, 1, r);
    if (!n || !ts_node_set_fs(n, "value", d->u.fs, d->len))
      return NULL;
    return ts_e_out(n, 0, ts_type_list(&e->m->arena, ts_type_leaf(TS_TY_FLOAT)));
  }
  case TS_DEF_BOOLS: {
    int64_t vals[64];
    size_t n = d->len < 64 ? d->len : 64;
    for (size_t i = 0; i < n; i++)
      vals[i] = d->u.bs[i];
    ts_node *nd = ts_e_node(e, TS_K_prim_Constant, 1, r);
    if (!nd || !ts_node_set_is(nd, "value", vals, n))
      return NULL;
    return ts_e_out(nd, 0, ts_type_list(&e->m->arena, ts_type_leaf(TS_TY_BOOL)));
  }
  case TS_DEF_ENUM: {
    /* c10 enums are ints in the IR */
    static const struct {
      const char *name;
      int64_t v;
    } enums[] = {{"contiguous_format", 0}, {"preserve_format", 1}, {"channels_last", 2}, {"channels_last_3d", 3},
                 {"Mean", 1},              {"Sum", 2},             {"None", 0},          {"long", 4},
                 {"float", 6},             {"strided", 0},         {"sparse_coo", 1},    {"per_tensor_affine", 0}};
    for (size_t i = 0; i < sizeof enums / sizeof *enums; i++)
      if (strcmp(enums[i].name, d->u.s) == 0)
        return ts_e_const_int(e, enums[i].v, NULL, r);
    ts_e_error(e, r, "unsupported default '%s' for argument '%s'", d->u.s, a->name);
    return NULL;
  }
  }
  return NULL;
}

/* Tries one schema. On success fills `ins` (the node's inputs, conversions
 * and defaults emitted) and `tv`. With `emit` false only checks. */
static bool ts_e_try_schema(ts_em *e, const ts_schema *s, ts_value *self, const ts_arg_in *args, uint32_t nargs,
                            bool allow_conv, bool emit, ts_value **ins, uint32_t *nins, ts_tvars *tv, ts_srange r) {
  const ts_arg_in *pos[TS_E_MAX_ARGS];
  const ts_arg_in *kw[TS_E_MAX_ARGS];
  ts_arg_in self_arg = {NULL, self, r};
  uint32_t npos = 0, nkw = 0;
  if (self)
    pos[npos++] = &self_arg;
  for (uint32_t i = 0; i < nargs; i++) {
    if (args[i].kw)
      kw[nkw++] = &args[i];
    else
      pos[npos++] = &args[i];
  }
  tv->n = 0;
  uint32_t used_pos = 0, used_kw = 0;
  *nins = 0;
  for (uint32_t i = 0; i < s->nargs; i++) {
    const ts_arg *a = &s->args[i];
    const ts_arg_in *in = NULL;
    if (!a->kwarg_only && used_pos < npos)
      in = pos[used_pos++];
    else
      for (uint32_t k = 0; k < nkw; k++)
        if (strcmp(kw[k]->kw, a->name) == 0) {
          in = kw[k];
          used_kw++;
          break;
        }
    if (!in) {
      if (!a->has_default)
        return false;
      if (emit) {
        const ts_type *f = ts_e_subst(e, a->type, tv);
        if (!(ins[(*nins)++] = ts_e_default(e, a, f ? f : a->type, r)))
          return false;
      }
      continue;
    }
    ts_conv c = ts_e_match_type(e, a->type, a->list_len, in->v, allow_conv, tv);
    if (c == TS_CONV_FAIL)
      return false;
    if (emit) {
      const ts_type *f = ts_e_subst(e, a->type, tv);
      if (!(ins[(*nins)++] = ts_e_apply_conv(e, c, in->v, f ? f : a->type, a->list_len, in->r)))
        return false;
    }
  }
  if (used_kw != nkw)
    return false;
  if (used_pos < npos) {
    if (!s->vararg)
      return false;
    for (; used_pos < npos; used_pos++)
      if (emit)
        ins[(*nins)++] = pos[used_pos]->v;
  }
  return true;
}

/* Writes "aten::add(Tensor, int)" describing a call for error messages. */
static void ts_e_describe_call(ts_buf *b, const char *name, ts_value *self, const ts_arg_in *args, uint32_t nargs) {
  ts_buf_printf(b, "%s(", name);
  bool first = true;
  if (self) {
    ts_type_print(b, self->type);
    first = false;
  }
  for (uint32_t i = 0; i < nargs; i++) {
    if (!first)
      ts_buf_puts(b, ", ");
    first = false;
    if (args[i].kw)
      ts_buf_printf(b, "%s=", args[i].kw);
    ts_type_print(b, args[i].v->type);
  }
  ts_buf_putc(b, ')');
}

static ts_value *ts_e_tuple_construct(ts_em *e, ts_value *const *vals, uint32_t n, const ts_type *t, ts_srange r);

/* Emits a call of operator `name` ("aten::add") with overload resolution
 * as PyTorch's matchSchemas: first without conversions, then with. An
 * operator the op table lacks but PyTorch registers (ir/ops_pytorch.def) is
 * typed by PyTorch's schemas and emitted as a node of its name
 * (TS_K_OTHER) that nothing runs: the passes remove it with a branch that
 * never runs, else it fails when it runs. An operator neither knows is
 * reported and stands as a poison value so that later unknown operators
 * get reported too. */
static ts_sv ts_e_call_builtin(ts_em *e, const char *name, ts_value *self, const ts_arg_in *args, uint32_t nargs,
                               ts_srange r) {
  ts_sv out = {TS_SV_VALUE, NULL, NULL, NULL, NULL, NULL};
  size_t namelen = strlen(name);
  ts_kind k = ts_kind_lookup(name, namelen);
  uint32_t nsch = 0;
  const ts_schema *const *schemas =
      k != TS_K_OTHER ? ts_op_schemas(k, &nsch) : ts_op_pytorch_schemas(name, namelen, &nsch);
  if (nsch == 0) {
    const ts_srange *rr = &r;
    if (k == TS_K_OTHER) {
      ts_e_error(e, r, "unknown operator %s: '%.*s'", name, (int)(rr->end - rr->start), rr->src->text + rr->start);
      if (!ts_fe_model_note_unknown(e->m, name))
        e->oom = true;
    } else
      ts_e_error(e, r, "operator %s has no schema in the op table", name);
    out.v = ts_e_poison(e, r, name);
    return out;
  }
  /* an argument that stands for an earlier error: the operator is known,
   * and nothing can be said about types */
  bool poisoned = self && ts_e_is_poison(self);
  for (uint32_t i = 0; i < nargs; i++)
    poisoned = poisoned || ts_e_is_poison(args[i].v);
  if (poisoned) {
    out.v = ts_e_poison(e, r, name);
    return out;
  }
  ts_value *ins[TS_E_MAX_ARGS];
  uint32_t nins = 0;
  ts_tvars tv;
  const ts_schema *hit = NULL;
  bool conv = false;
  for (int pass = 0; pass < 2 && !hit; pass++)
    for (uint32_t i = 0; i < nsch && !hit; i++)
      if (ts_e_try_schema(e, schemas[i], self, args, nargs, pass, false, ins, &nins, &tv, r)) {
        hit = schemas[i];
        conv = pass;
      }
  if (!hit) {
    ts_buf b = {0};
    ts_e_describe_call(&b, name, self, args, nargs);
    ts_buf_puts(&b, "; candidates:");
    for (uint32_t i = 0; i < nsch && i < 8; i++) {
      ts_buf_puts(&b, "\n    ");
      ts_schema_print(&b, schemas[i]);
    }
    ts_e_error(e, r, "no overload matches %s", b.data ? b.data : name);
    ts_buf_free(&b);
    out.v = ts_e_poison(e, r, name);
    return out;
  }
  if (!ts_e_try_schema(e, hit, self, args, nargs, conv, true, ins, &nins, &tv, r))
    return out;
  uint32_t nret = hit->varret ? 1 : hit->nrets;
  ts_node *n = k != TS_K_OTHER ? ts_e_node(e, k, nret, r) : ts_e_node_named(e, name, namelen, nret, r);
  if (!n)
    return out;
  for (uint32_t i = 0; i < nins; i++)
    if (!ts_node_add_input(n, ins[i]))
      return out;
  for (uint32_t i = 0; i < nret; i++) {
    const ts_type *t = hit->varret ? ts_type_leaf(TS_TY_ANY) : ts_e_subst(e, hit->rets[i].type, &tv);
    if (!t) {
      ts_e_error(e, r, "cannot tell the result type of %s: a type variable is unbound", name);
      return out;
    }
    ts_value_set_type(n->outputs[i], t);
  }
  if (nret == 1) {
    out.v = n->outputs[0];
    return out;
  }
  if (nret == 0) {
    out.kind = TS_SV_EMPTY;
    return out;
  }
  const ts_type *el[TS_E_MAX_ARGS];
  for (uint32_t i = 0; i < nret; i++)
    el[i] = n->outputs[i]->type;
  out.v = ts_e_tuple_construct(e, n->outputs, nret, ts_type_tuple(&e->m->arena, nret, el), r);
  return out;
}

/* ------------------------------------------------------------ expressions */

static ts_sv ts_e_expr_sv(ts_em *e, const ts_ast *x, const ts_type *hint);
static ts_value *ts_e_expr(ts_em *e, const ts_ast *x, const ts_type *hint);
static ts_value *ts_e_sv_value(ts_em *e, ts_sv sv, ts_srange r);

static ts_sv ts_sv_value(ts_value *v) {
  ts_sv s = {TS_SV_VALUE, v, NULL, NULL, NULL, NULL};
  return s;
}

static ts_sv ts_sv_fail(void) {
  ts_sv s = {TS_SV_VALUE, NULL, NULL, NULL, NULL, NULL};
  return s;
}

static ts_value *ts_e_tuple_construct(ts_em *e, ts_value *const *vals, uint32_t n, const ts_type *t, ts_srange r) {
  ts_node *nd = ts_e_node(e, TS_K_prim_TupleConstruct, 1, r);
  if (!nd)
    return NULL;
  for (uint32_t i = 0; i < n; i++)
    if (!ts_node_add_input(nd, vals[i]))
      return NULL;
  if (!t) {
    const ts_type *el[TS_E_MAX_ARGS];
    for (uint32_t i = 0; i < n; i++)
      el[i] = vals[i]->type;
    t = ts_type_tuple(&e->m->arena, n, el);
  }
  return ts_e_out(nd, 0, t);
}

static ts_value *ts_e_tuple_unpack(ts_em *e, ts_value *tup, ts_value **out, ts_srange r) {
  const ts_type *t = tup->type;
  ts_node *n = ts_e_node(e, TS_K_prim_TupleUnpack, t->n, r);
  if (!n || !ts_node_add_input(n, tup))
    return NULL;
  for (uint32_t i = 0; i < t->n; i++)
    out[i] = ts_e_out(n, i, t->elems[i]);
  return tup;
}

/* The sugared value a name stands for. */
static ts_sv ts_e_name(ts_em *e, const ts_ast *x) {
  ts_sv *found = ts_env_find(e->env, x->str);
  if (found)
    return *found;
  ts_sv s = {TS_SV_VALUE, NULL, NULL, NULL, NULL, NULL};
  const char *n = x->str;
  if (strcmp(n, "torch") == 0 || strcmp(n, "math") == 0) {
    s.kind = TS_SV_NS;
    s.s = "aten";
  } else if (strcmp(n, "ops") == 0)
    s.kind = TS_SV_OPS;
  else if (strcmp(n, "__torch__") == 0) {
    s.kind = TS_SV_PKG;
    s.s = "__torch__";
  } else if (strcmp(n, "CONSTANTS") == 0)
    s.kind = TS_SV_CONSTANTS;
  else if (strcmp(n, "inf") == 0 || strcmp(n, "nan") == 0)
    /* the printer writes non-finite floats as these names */
    s.v = ts_e_const_float(e, n[0] == 'i' ? INFINITY : NAN, x->range);
  else {
    static const char *const specials[] = {"annotate", "unchecked_cast", "uninitialized", "isinstance", "range",
                                           "int",      "float",          "bool",          "str",        "len",
                                           "print",    "min",            "max",           "abs",        "list",
                                           "getattr",  "hasattr",        "round",         "ord",        "chr",
                                           "divmod",   "sorted",         "all",           "any",        "sum",
                                           "hash",     "enumerate",      "zip",           "tuple",      "dict",
                                           "Exception"};
    for (size_t i = 0; i < sizeof specials / sizeof *specials; i++)
      if (strcmp(n, specials[i]) == 0) {
        s.kind = TS_SV_SPECIAL;
        s.s = specials[i];
        return s;
      }
    ts_e_error(e, x->range, "undefined name '%s'", n);
  }
  return s;
}

static ts_value *ts_e_tensor_const(ts_em *e, const ts_pv *pv, ts_srange r) {
  ts_node *n = ts_e_node(e, TS_K_prim_Constant, 1, r);
  if (!n || !ts_node_set_t(n, "value", &pv->u.tensor.t))
    return NULL;
  ts_tensor_info ti = {.dtype = pv->u.tensor.t.dtype,
                       .requires_grad = pv->u.tensor.requires_grad,
                       .undefined = 0,
                       .device = pv->u.tensor.device,
                       .rank = pv->u.tensor.t.rank,
                       .sizes = pv->u.tensor.t.sizes,
                       .strides = pv->u.tensor.t.strides};
  return ts_e_out(n, 0, ts_type_tensor(&e->m->arena, &ti));
}

/* An expression that sees no local names: a class constant or a default
 * argument, emitted at the point of use. */
static ts_value *ts_e_expr_detached(ts_em *e, const ts_ast *x, const ts_type *hint) {
  ts_env *saved = e->env;
  ts_env empty = {0};
  e->env = &empty;
  ts_value *v = ts_e_expr(e, x, hint);
  e->env = saved;
  ts_env_free(&empty);
  return v;
}

/* The value of attribute `name` of a value of class type. */
static ts_sv ts_e_class_attr(ts_em *e, ts_value *obj, ts_fe_class *c, const char *name, ts_srange r) {
  ts_sv out = ts_sv_fail();
  ts_fe_fn *fn = ts_fe_class_method(c, name);
  if (fn) {
    out.kind = TS_SV_METHOD;
    out.v = obj;
    out.fn = fn;
    return out;
  }
  const ts_fe_attr *a = ts_fe_class_attr(c, name);
  if (a) {
    ts_node *n = ts_e_node(e, TS_K_prim_GetAttr, 1, r);
    if (!n || !ts_node_set_s(n, "name", name, strlen(name)) || !ts_node_add_input(n, obj))
      return out;
    out.v = ts_e_out(n, 0, a->type);
    return out;
  }
  const ts_fe_const *k = ts_fe_class_const(c, name);
  if (k) {
    /* Final constants are inlined, as PyTorch's ConstantValue does */
    out.v = ts_e_expr_detached(e, k->value, k->type);
    if (out.v && k->type && !ts_type_is_subtype(out.v->type, k->type) && k->type->kind == TS_TY_FLOAT &&
        out.v->type->kind == TS_TY_INT) {
      int64_t iv;
      if (ts_e_const_int_of(out.v, &iv))
        out.v = ts_e_const_float(e, (double)iv, r);
    }
    return out;
  }
  ts_e_error(e, r, "class %s has no attribute, constant or method '%s'", c->qualname, name);
  return out;
}

/* x.name */
static ts_sv ts_e_attr(ts_em *e, const ts_ast *x) {
  ts_sv base = ts_e_expr_sv(e, x->a, NULL);
  ts_sv out = ts_sv_fail();
  const char *name = x->str;
  char q[4096];
  switch (base.kind) {
  case TS_SV_NS:
    snprintf(q, sizeof q, "%s::%s", base.s, name);
    out.kind = TS_SV_BUILTIN;
    out.s = ts_arena_strdup(&e->m->arena, q);
    return out;
  case TS_SV_OPS:
    out.kind = TS_SV_NS;
    out.s = name;
    return out;
  case TS_SV_PKG: {
    if ((size_t)snprintf(q, sizeof q, "%s.%s", base.s, name) >= sizeof q) {
      ts_e_error(e, x->range, "qualified name too long");
      return out;
    }
    if (ts_fe_model_is_package(e->m, q, strlen(q))) {
      out.kind = TS_SV_PKG;
      out.s = ts_arena_strdup(&e->m->arena, q);
      return out;
    }
    ts_diag quiet = {0};
    ts_srange none = ts_e_noloc();
    ts_fe_fn *fn = ts_fe_model_function(e->m, q, none, &quiet);
    if (fn) {
      ts_diag_free(&quiet);
      out.kind = TS_SV_FUNCTION;
      out.fn = fn;
      return out;
    }
    ts_diag_free(&quiet);
    ts_fe_class *c = ts_fe_model_class(e->m, q, x->range, e->d);
    if (!c) {
      e->errors++;
      return out;
    }
    out.kind = TS_SV_CLASS;
    out.cls = c;
    return out;
  }
  case TS_SV_CONSTANTS: {
    char *end;
    if (name[0] != 'c' || !name[1])
      goto bad_const;
    long idx = strtol(name + 1, &end, 10);
    if (*end || idx < 0)
      goto bad_const;
    if (!e->m->constants || (uint64_t)idx >= e->m->constants->u.seq.n) {
      ts_e_error(e, x->range, "CONSTANTS.%s: constants.pkl holds %u constants", name,
                 e->m->constants ? e->m->constants->u.seq.n : 0);
      return out;
    }
    const ts_pv *pv = e->m->constants->u.seq.items[idx];
    switch (pv->kind) {
    case TS_PV_TENSOR: out.v = ts_e_tensor_const(e, pv, x->range); break;
    case TS_PV_STR: out.v = ts_e_const_str(e, pv->u.str.s, pv->u.str.len, NULL, x->range); break;
    case TS_PV_INT: out.v = ts_e_const_int(e, pv->u.i, NULL, x->range); break;
    case TS_PV_BOOL: out.v = ts_e_const_bool(e, pv->u.b, x->range); break;
    case TS_PV_FLOAT: out.v = ts_e_const_float(e, pv->u.f, x->range); break;
    case TS_PV_NONE: out.v = ts_e_const_none(e, NULL, x->range); break;
    default: ts_e_error(e, x->range, "CONSTANTS.%s: constants of this kind are not supported yet", name); break;
    }
    return out;
  bad_const:
    ts_e_error(e, x->range, "expected CONSTANTS.cN");
    return out;
  }
  case TS_SV_VALUE: {
    if (!base.v)
      return out;
    const ts_type *t = base.v->type;
    if (ts_e_is_poison(base.v)) {
      /* x.name(...) of a value that stands for an error: the call is still
       * looked up (an unknown operator is reported); read as a value, the
       * poison stays a poison */
      snprintf(q, sizeof q, "aten::%s", name);
      out.kind = TS_SV_BUILTIN;
      out.s = ts_arena_strdup(&e->m->arena, q);
      out.v = base.v;
      return out;
    }
    if (t->kind == TS_TY_CLASS) {
      ts_fe_class *c = ts_fe_model_class(e->m, t->name, x->range, e->d);
      if (!c) {
        e->errors++;
        return out;
      }
      return ts_e_class_attr(e, base.v, c, name, x->range);
    }
    if (t->kind == TS_TY_TUPLE && t->fields) {
      for (uint32_t i = 0; i < t->n; i++)
        if (strcmp(t->fields[i], name) == 0) {
          ts_value *idx = ts_e_const_int(e, i, NULL, x->range);
          ts_node *n = ts_e_node(e, TS_K_prim_TupleIndex, 1, x->range);
          if (!idx || !n || !ts_node_add_input(n, base.v) || !ts_node_add_input(n, idx))
            return out;
          out.v = ts_e_out(n, 0, t->elems[i]);
          return out;
        }
    }
    if (t->kind == TS_TY_TENSOR) {
      /* tensor properties read as prim ops */
      static const struct {
        const char *attr, *op;
      } props[] = {{"dtype", "prim::dtype"},   {"device", "prim::device"}, {"shape", "aten::size"},
                   {"is_cuda", "prim::is_cuda"}, {"requires_grad", "prim::requires_grad"}, {"data", "prim::data"},
                   {"layout", "prim::layout"}, {"T", "aten::numpy_T"}, {"ndim", "aten::dim"}};
      for (size_t i = 0; i < sizeof props / sizeof *props; i++)
        if (strcmp(props[i].attr, name) == 0) {
          ts_arg_in none[1];
          return ts_e_call_builtin(e, props[i].op, base.v, none, 0, x->range);
        }
    }
    /* a method of a builtin type: x.add(y), l.append(v) */
    snprintf(q, sizeof q, "aten::%s", name);
    out.kind = TS_SV_BUILTIN;
    out.s = ts_arena_strdup(&e->m->arena, q);
    out.v = base.v;
    return out;
  }
  case TS_SV_CLASS: {
    if (strcmp(name, "__new__") == 0) {
      out.kind = TS_SV_SPECIAL;
      out.s = "__new__";
      out.cls = base.cls;
      return out;
    }
    if (base.cls->kind == TS_FE_CLASS_ENUM) {
      ts_e_error(e, x->range, "enum classes are not supported yet");
      return out;
    }
    const ts_fe_const *k = ts_fe_class_const(base.cls, name);
    if (k) {
      out.v = ts_e_expr_detached(e, k->value, k->type);
      return out;
    }
    break;
  }
  default: break;
  }
  ts_e_error(e, x->range, "cannot read attribute '%s' here", name);
  return out;
}

static ts_value *ts_e_sv_value(ts_em *e, ts_sv sv, ts_srange r) {
  switch (sv.kind) {
  case TS_SV_VALUE: return sv.v;
  case TS_SV_BUILTIN:
    if (sv.v && ts_e_is_poison(sv.v))
      return sv.v; /* an attribute of a poison (ts_e_attr) */
    ts_e_error(e, r, "this expression is not a value");
    return NULL;
  case TS_SV_EMPTY: return ts_e_tuple_construct(e, NULL, 0, ts_type_tuple(&e->m->arena, 0, NULL), r);
  case TS_SV_FUNCTION: {
    ts_node *n = ts_e_node(e, TS_K_prim_Constant, 1, r);
    if (!n || !ts_node_set_s(n, "name", sv.fn->name, strlen(sv.fn->name)))
      return NULL;
    return ts_e_out(n, 0, ts_type_function(&e->m->arena, sv.fn->qualname, strlen(sv.fn->qualname)));
  }
  default: ts_e_error(e, r, "this expression is not a value"); return NULL;
  }
}

static ts_value *ts_e_list_literal(ts_em *e, const ts_ast *x, const ts_type *hint) {
  const ts_type *elem = NULL;
  if (hint && hint->kind == TS_TY_OPTIONAL)
    hint = hint->elems[0];
  if (hint && hint->kind == TS_TY_LIST)
    elem = hint->elems[0];
  ts_value *vals[TS_E_MAX_ARGS];
  if (x->list.n > TS_E_MAX_ARGS) {
    ts_e_error(e, x->range, "list literal with more than %d elements", TS_E_MAX_ARGS);
    return NULL;
  }
  const ts_type *u = NULL;
  for (uint32_t i = 0; i < x->list.n; i++) {
    if (!(vals[i] = ts_e_expr(e, x->list.v[i], elem)))
      return NULL;
    if (elem && ts_type_is_subtype(vals[i]->type, elem)) {
      u = elem;
      continue;
    }
    u = i == 0 ? vals[i]->type : ts_e_unify(e, u, vals[i]->type);
    if (!u) {
      ts_e_error(e, x->list.v[i]->range, "list elements have different types");
      return NULL;
    }
  }
  if (elem && u && !ts_type_is_subtype(u, elem))
    elem = NULL;
  if (!elem)
    elem = u ? u : ts_type_leaf(TS_TY_TENSOR);
  if (elem->kind == TS_TY_TENSOR)
    elem = ts_type_leaf(TS_TY_TENSOR);
  ts_node *n = ts_e_node(e, TS_K_prim_ListConstruct, 1, x->range);
  if (!n)
    return NULL;
  for (uint32_t i = 0; i < x->list.n; i++)
    if (!ts_node_add_input(n, vals[i]))
      return NULL;
  return ts_e_out(n, 0, ts_type_list(&e->m->arena, elem));
}

static ts_value *ts_e_dict_literal(ts_em *e, const ts_ast *x, const ts_type *hint) {
  const ts_type *kt = NULL, *vt = NULL;
  if (hint && hint->kind == TS_TY_OPTIONAL)
    hint = hint->elems[0];
  if (hint && hint->kind == TS_TY_DICT)
    kt = hint->elems[0], vt = hint->elems[1];
  uint32_t n = x->list.n;
  if (n > TS_E_MAX_ARGS / 2) {
    ts_e_error(e, x->range, "dict literal too long");
    return NULL;
  }
  ts_value *vals[TS_E_MAX_ARGS];
  const ts_type *uk = NULL, *uv = NULL;
  for (uint32_t i = 0; i < n; i++) {
    if (!(vals[2 * i] = ts_e_expr(e, x->list.v[i], kt)) || !(vals[2 * i + 1] = ts_e_expr(e, x->list2.v[i], vt)))
      return NULL;
    uk = i ? ts_e_unify(e, uk, vals[2 * i]->type) : vals[2 * i]->type;
    uv = i ? ts_e_unify(e, uv, vals[2 * i + 1]->type) : vals[2 * i + 1]->type;
    if (!uk || !uv) {
      ts_e_error(e, x->range, "dict entries have different types");
      return NULL;
    }
  }
  if (!kt)
    kt = uk ? uk : ts_type_leaf(TS_TY_STR);
  if (!vt)
    vt = uv ? uv : ts_type_leaf(TS_TY_TENSOR);
  ts_node *nd = ts_e_node(e, TS_K_prim_DictConstruct, 1, x->range);
  if (!nd)
    return NULL;
  for (uint32_t i = 0; i < 2 * n; i++)
    if (!ts_node_add_input(nd, vals[i]))
      return NULL;
  return ts_e_out(nd, 0, ts_type_dict(&e->m->arena, kt, vt));
}

/* Arguments of a call, emitted left to right. */
static bool ts_e_args(ts_em *e, const ts_ast *call, ts_arg_in *args, uint32_t *nargs) {
  uint32_t n = 0;
  if (call->list.n + call->kw.n > TS_E_MAX_ARGS) {
    ts_e_error(e, call->range, "more than %d arguments", TS_E_MAX_ARGS);
    return false;
  }
  for (uint32_t i = 0; i < call->list.n; i++) {
    const ts_ast *a = call->list.v[i];
    if (a->kind == TS_AST_STARRED) {
      ts_e_error(e, a->range, "starred arguments are not supported");
      return false;
    }
    args[n].kw = NULL;
    args[n].r = a->range;
    if (!(args[n++].v = ts_e_expr(e, a, NULL)))
      return false;
  }
  for (uint32_t i = 0; i < call->kw.n; i++) {
    const ts_ast *a = call->kw.v[i];
    args[n].kw = a->str;
    args[n].r = a->range;
    if (!(args[n++].v = ts_e_expr(e, a->a, NULL)))
      return false;
  }
  *nargs = n;
  return true;
}

/* Converts `v` to `t` for a call or a return (None -> Optional, implicit
 * conversions); NULL and an error if it cannot. */
static ts_value *ts_e_convert(ts_em *e, ts_value *v, const ts_type *t, ts_srange r, const char *what, bool for_call) {
  ts_tvars tv = {.n = 0};
  if (ts_e_is_poison(v))
    return v;
  ts_conv c = ts_e_match_type(e, t, -1, v, true, &tv);
  /* PyTorch's tryConvertToType does not make tensors of numbers: only
   * operator schemas accept a number for a Tensor */
  if (c == TS_CONV_NUM_TO_TENSOR && !for_call)
    c = TS_CONV_FAIL;
  if (c == TS_CONV_FAIL) {
    char a[256], b[256];
    ts_e_type_str(a, sizeof a, v->type);
    ts_e_type_str(b, sizeof b, t);
    ts_e_error(e, r, "%s: expected a value of type %s, found %s", what, b, a);
    return NULL;
  }
  return ts_e_apply_conv(e, c, v, t, -1, r);
}

/* Calls fn (a method when `self` is set) as prim::CallMethod /
 * prim::CallFunction; the callee's defaults fill missing arguments. */
static ts_sv ts_e_call_fn(ts_em *e, ts_fe_fn *fn, ts_value *self, ts_value *fnval, const ts_ast *call) {
  ts_sv out = ts_sv_fail();
  if (!ts_fe_fn_signature(e->m, fn, e->d)) {
    e->errors++;
    return out;
  }
  ts_arg_in args[TS_E_MAX_ARGS];
  uint32_t nargs;
  if (!ts_e_args(e, call, args, &nargs))
    return out;
  uint32_t first = self ? 1 : 0;
  ts_value *ins[TS_E_MAX_ARGS];
  uint32_t np = fn->nparams;
  if (np > TS_E_MAX_ARGS) {
    ts_e_error(e, call->range, "too many parameters");
    return out;
  }
  for (uint32_t i = 0; i < np; i++)
    ins[i] = NULL;
  if (self)
    ins[0] = self;
  uint32_t p = first;
  for (uint32_t i = 0; i < nargs; i++) {
    if (args[i].kw) {
      uint32_t j;
      for (j = first; j < np; j++)
        if (strcmp(fn->param_names[j], args[i].kw) == 0)
          break;
      if (j == np || ins[j]) {
        ts_e_error(e, args[i].r, "%s() got %s keyword argument '%s'", fn->name, j == np ? "an unexpected" : "a repeated",
                   args[i].kw);
        return out;
      }
      ins[j] = args[i].v;
      continue;
    }
    if (p >= np) {
      ts_e_error(e, call->range, "%s() takes %u arguments", fn->name, np - first);
      return out;
    }
    ins[p++] = args[i].v;
  }
  for (uint32_t i = first; i < np; i++) {
    if (!ins[i]) {
      if (!fn->param_defaults[i]) {
        ts_e_error(e, call->range, "%s() is missing argument '%s'", fn->name, fn->param_names[i]);
        return out;
      }
      ins[i] = ts_e_expr_detached(e, fn->param_defaults[i], fn->param_types[i]);
      if (!ins[i])
        return out;
    }
    if (!(ins[i] = ts_e_convert(e, ins[i], fn->param_types[i], call->range, fn->param_names[i], true)))
      return out;
  }
  const ts_type *rt = fn->ret_type;
  if (!rt) {
    /* no annotation: the callee's graph tells */
    ts_graph *cg = ts_fe_fn_graph(e->m, fn, e->d);
    if (!cg) {
      e->errors++;
      return out;
    }
    rt = ts_block_output(cg->block, 0)->type;
  }
  ts_node *n = ts_e_node(e, self ? TS_K_prim_CallMethod : TS_K_prim_CallFunction, 1, call->range);
  if (!n)
    return out;
  if (self && !ts_node_set_s(n, "name", fn->name, strlen(fn->name)))
    return out;
  if (fnval && !ts_node_add_input(n, fnval))
    return out;
  for (uint32_t i = 0; i < np; i++)
    if (!ts_node_add_input(n, ins[i]))
      return out;
  out.v = ts_e_out(n, 0, rt);
  return out;
}

static const ts_type *ts_e_type(ts_em *e, const ts_ast *x) {
  const ts_type *t = ts_fe_type_from_ast(e->m, x, e->d);
  if (!t)
    e->errors++;
  return t;
}

/* print(...) and ops.prim.Print(...): prim::Print takes any values and
 * returns nothing. */
static ts_sv ts_e_print(ts_em *e, const ts_arg_in *args, uint32_t nargs, ts_srange r) {
  ts_sv out = ts_sv_fail();
  ts_node *n = ts_e_node(e, TS_K_prim_Print, 0, r);
  if (!n)
    return out;
  for (uint32_t i = 0; i < nargs; i++)
    if (!ts_node_add_input(n, args[i].v))
      return out;
  out.kind = TS_SV_EMPTY;
  return out;
}

static ts_sv ts_e_special(ts_em *e, const char *name, const ts_ast *call) {
  ts_sv out = ts_sv_fail();
  const ts_ast_list *a = &call->list;
  ts_srange r = call->range;
  if (strcmp(name, "annotate") == 0 || strcmp(name, "unchecked_cast") == 0) {
    if (a->n != 2 || call->kw.n) {
      ts_e_error(e, r, "%s() takes a type and a value", name);
      return out;
    }
    const ts_type *t = ts_e_type(e, a->v[0]);
    if (!t)
      return out;
    const ts_ast *vx = a->v[1];
    if (name[0] == 'a' && vx->kind == TS_AST_CALL && vx->a->kind == TS_AST_ATTR && strcmp(vx->a->str, "tolist") == 0 &&
        vx->list.n == 0 && vx->kw.n == 0) {
      /* x.tolist() takes its result type from the annotation:
       * prim::tolist(x, nesting depth, element kind 0 int / 1 float / 2 bool) */
      int64_t dim = 0;
      const ts_type *el = t;
      while (el->kind == TS_TY_LIST)
        el = el->elems[0], dim++;
      int64_t ek = el->kind == TS_TY_INT ? 0 : el->kind == TS_TY_FLOAT ? 1 : el->kind == TS_TY_BOOL ? 2 : -1;
      if (ek < 0) {
        ts_e_error(e, r, "tolist() needs a List of int, float or bool as its annotation");
        return out;
      }
      ts_value *src = ts_e_expr(e, vx->a->a, NULL);
      ts_value *dv = src ? ts_e_const_int(e, dim, NULL, r) : NULL;
      ts_value *ev = dv ? ts_e_const_int(e, ek, NULL, r) : NULL;
      ts_node *n = ev ? ts_e_node(e, ts_kind_lookup("prim::tolist", 12), 1, r) : NULL;
      if (n && ts_node_add_input(n, src) && ts_node_add_input(n, dv) && ts_node_add_input(n, ev))
        out.v = ts_e_out(n, 0, t);
      return out;
    }
    ts_value *v = ts_e_expr(e, vx, t);
    if (!v)
      return out;
    if (name[0] == 'u') {
      ts_node *n = ts_e_node(e, TS_K_prim_unchecked_cast, 1, r);
      if (n && ts_node_add_input(n, v))
        out.v = ts_e_out(n, 0, t);
      return out;
    }
    if (!(v = ts_e_convert(e, v, t, r, "annotate", false)))
      return out;
    if ((t->kind == TS_TY_OPTIONAL || t->kind == TS_TY_UNION) && v->type->kind == TS_TY_NONE) {
      /* keep what T is for variables assigned this None */
      out.v = ts_e_const_none(e, t, r);
      return out;
    }
    out.v = v;
    return out;
  }
  if (strcmp(name, "uninitialized") == 0) {
    if (a->n != 1) {
      ts_e_error(e, r, "uninitialized() takes a type");
      return out;
    }
    const ts_type *t = ts_e_type(e, a->v[0]);
    if (t)
      out.v = ts_e_out(ts_e_node(e, TS_K_prim_Uninitialized, 1, r), 0, t);
    return out;
  }
  if (strcmp(name, "isinstance") == 0) {
    if (a->n != 2) {
      ts_e_error(e, r, "isinstance() takes a value and a type");
      return out;
    }
    ts_value *v = ts_e_expr(e, a->v[0], NULL);
    if (!v)
      return out;
    const ts_ast *ts = a->v[1];
    uint32_t nt = ts->kind == TS_AST_TUPLE ? ts->list.n : 1;
    int res = 0;
    const ts_type *rt = NULL; /* the one type only the run-time value can tell */
    for (uint32_t i = 0; i < nt; i++) {
      const ts_ast *tx = ts->kind == TS_AST_TUPLE ? ts->list.v[i] : ts;
      const ts_type *t;
      if (tx->kind == TS_AST_NAME && strcmp(tx->str, "list") == 0)
        t = ts_type_leaf(TS_TY_ANYLIST);
      else if (tx->kind == TS_AST_NAME && strcmp(tx->str, "tuple") == 0)
        t = ts_type_leaf(TS_TY_ANYTUPLE);
      else if (!(t = ts_e_type(e, tx)))
        return out;
      int s = ts_type_isinstance_static(v->type, t);
      if (s == 1)
        res = 1;
      else if (s == -1 && res == 0) {
        if (rt) {
          ts_e_error(e, r, "isinstance() against several types that only the run-time value can tell apart is not supported yet");
          return out;
        }
        rt = t;
      }
    }
    if (res == 1 || !rt) {
      out.v = ts_e_const_bool(e, res == 1, r);
      return out;
    }
    /* PyTorch's prim::isinstance[types=[T]]: told at run time, or folded by
     * the peephole pass once inlining gives v a narrower type */
    ts_node *n = ts_e_node(e, TS_K_prim_isinstance, 1, r);
    if (n && ts_node_add_input(n, v) && ts_node_set_ty(n, "types", rt))
      out.v = ts_e_out(n, 0, ts_type_leaf(TS_TY_BOOL));
    return out;
  }
  if (strcmp(name, "getattr") == 0 || strcmp(name, "hasattr") == 0) {
    if (a->n != 2 || a->v[1]->kind != TS_AST_STR) {
      ts_e_error(e, r, "%s() takes a value and a string literal", name);
      return out;
    }
    ts_value *v = ts_e_expr(e, a->v[0], NULL);
    if (!v)
      return out;
    if (v->type->kind != TS_TY_CLASS) {
      ts_e_error(e, r, "%s() needs an object", name);
      return out;
    }
    ts_fe_class *c = ts_fe_model_class(e->m, v->type->name, r, e->d);
    if (!c) {
      e->errors++;
      return out;
    }
    const char *an = a->v[1]->str;
    if (name[0] == 'h') {
      bool has = ts_fe_class_attr(c, an) || ts_fe_class_const(c, an) || ts_fe_class_method(c, an);
      out.v = ts_e_const_bool(e, has, r);
      return out;
    }
    return ts_e_class_attr(e, v, c, an, r);
  }
  if (strcmp(name, "range") == 0 || strcmp(name, "enumerate") == 0 || strcmp(name, "zip") == 0) {
    ts_e_error(e, r, "%s() is only supported as the iterable of a for loop", name);
    return out;
  }
  /* builtins that are operators */
  static const struct {
    const char *name, *op;
  } ops[] = {{"int", "aten::Int"},       {"float", "aten::Float"}, {"bool", "aten::Bool"},   {"str", "aten::str"},
             {"len", "aten::len"},       {"min", "prim::min"},     {"max", "prim::max"},     {"abs", "prim::abs"},
             {"list", "aten::list"},     {"round", "aten::round"}, {"ord", "aten::ord"},     {"chr", "aten::chr"},
             {"divmod", "aten::divmod"}, {"sorted", "aten::sorted"}, {"all", "aten::all"}, {"any", "aten::any"},
             {"sum", "aten::sum"},       {"hash", "aten::hash"},   {"dict", "aten::dict"}};
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    if (strcmp(ops[i].name, name) == 0) {
      ts_arg_in args[TS_E_MAX_ARGS];
      uint32_t nargs;
      if (!ts_e_args(e, call, args, &nargs))
        return out;
      if (nargs == 0 && (strcmp(name, "int") == 0 || strcmp(name, "bool") == 0)) {
        out.v = name[0] == 'i' ? ts_e_const_int(e, 0, NULL, r) : ts_e_const_bool(e, false, r);
        return out;
      }
      if (nargs == 0 && strcmp(name, "float") == 0) {
        out.v = ts_e_const_float(e, 0.0, r);
        return out;
      }
      /* int(x) of an int is x */
      if (nargs == 1 && ((name[0] == 'i' && args[0].v->type->kind == TS_TY_INT) ||
                         (strcmp(name, "float") == 0 && args[0].v->type->kind == TS_TY_FLOAT) ||
                         (name[0] == 'b' && args[0].v->type->kind == TS_TY_BOOL))) {
        out.v = args[0].v;
        return out;
      }
      return ts_e_call_builtin(e, ops[i].op, NULL, args, nargs, r);
    }
  if (strcmp(name, "print") == 0) {
    ts_arg_in args[TS_E_MAX_ARGS];
    uint32_t nargs;
    if (!ts_e_args(e, call, args, &nargs))
      return out;
    return ts_e_print(e, args, nargs, r);
  }
  ts_e_error(e, r, "%s() is not supported here", name);
  return out;
}

static ts_sv ts_e_call(ts_em *e, const ts_ast *x) {
  ts_sv f = ts_e_expr_sv(e, x->a, NULL);
  ts_sv out = ts_sv_fail();
  switch (f.kind) {
  case TS_SV_BUILTIN: {
    ts_arg_in args[TS_E_MAX_ARGS];
    uint32_t nargs;
    if (!ts_e_args(e, x, args, &nargs))
      return out;
    if (strcmp(f.s, "aten::device") == 0 && !f.v && nargs == 1 && !args[0].kw && ts_e_const_str_of(args[0].v)) {
      out.v = ts_e_const_device(e, args[0].v, x->range);
      return out;
    }
    if (strcmp(f.s, "prim::Print") == 0)
      return ts_e_print(e, args, nargs, x->range);
    return ts_e_call_builtin(e, f.s, f.v, args, nargs, x->range);
  }
  case TS_SV_METHOD: return ts_e_call_fn(e, f.fn, f.v, NULL, x);
  case TS_SV_FUNCTION: {
    ts_value *fv = ts_e_sv_value(e, f, x->a->range);
    if (!fv)
      return out;
    return ts_e_call_fn(e, f.fn, NULL, fv, x);
  }
  case TS_SV_SPECIAL:
    if (strcmp(f.s, "__new__") == 0) {
      /* the printer writes object creation as C.__new__(C), then __init__ */
      out.v = ts_e_out(ts_e_node(e, ts_kind_lookup("prim::CreateObject", 18), 1, x->range), 0, f.cls->type);
      return out;
    }
    return ts_e_special(e, f.s, x);
  case TS_SV_CLASS: {
    ts_fe_class *c = f.cls;
    if (c->kind == TS_FE_CLASS_NAMEDTUPLE) {
      ts_arg_in args[TS_E_MAX_ARGS];
      uint32_t nargs;
      if (!ts_e_args(e, x, args, &nargs))
        return out;
      const ts_type *t = c->type;
      ts_value *vals[TS_E_MAX_ARGS] = {0};
      uint32_t p = 0;
      for (uint32_t i = 0; i < nargs; i++) {
        uint32_t j = p;
        if (args[i].kw) {
          for (j = 0; j < t->n; j++)
            if (strcmp(t->fields[j], args[i].kw) == 0)
              break;
        } else
          p++;
        if (j >= t->n || vals[j]) {
          ts_e_error(e, args[i].r, "bad argument for %s()", c->qualname);
          return out;
        }
        vals[j] = args[i].v;
      }
      for (uint32_t j = 0; j < t->n; j++) {
        if (!vals[j]) {
          ts_e_error(e, x->range, "%s() is missing field '%s'", c->qualname, t->fields[j]);
          return out;
        }
        if (!(vals[j] = ts_e_convert(e, vals[j], t->elems[j], x->range, t->fields[j], true)))
          return out;
      }
      out.v = ts_e_tuple_construct(e, vals, t->n, t, x->range);
      return out;
    }
    if (c->kind == TS_FE_CLASS_PLAIN) {
      ts_value *obj = ts_e_out(ts_e_node(e, ts_kind_lookup("prim::CreateObject", 18), 1, x->range), 0, c->type);
      ts_fe_fn *init = ts_fe_class_method(c, "__init__");
      if (!obj)
        return out;
      if (init) {
        ts_sv r = ts_e_call_fn(e, init, obj, NULL, x);
        if (!r.v && r.kind == TS_SV_VALUE)
          return out;
      }
      out.v = obj;
      return out;
    }
    ts_e_error(e, x->range, "cannot construct %s here", c->qualname);
    return out;
  }
  case TS_SV_VALUE:
    if (f.v && ts_e_is_poison(f.v)) {
      out.v = f.v;
      return out;
    }
    if (f.v)
      ts_e_error(e, x->range, "this value cannot be called");
    return out;
  default: ts_e_error(e, x->range, "this expression cannot be called"); return out;
  }
}

static const char *ts_e_binop_name(const char *op) {
  static const struct {
    const char *op, *name;
  } t[] = {{"+", "aten::add"},      {"-", "aten::sub"},        {"*", "aten::mul"},         {"/", "aten::div"},
           {"//", "aten::floordiv"}, {"%", "aten::remainder"}, {"**", "aten::pow"},        {"@", "aten::matmul"},
           {"&", "aten::__and__"},  {"|", "aten::__or__"},     {"^", "aten::__xor__"},     {"<<", "aten::__lshift__"},
           {">>", "aten::__rshift__"}, {"<", "aten::lt"},      {"<=", "aten::le"},         {">", "aten::gt"},
           {">=", "aten::ge"},      {"==", "aten::eq"},        {"!=", "aten::ne"},         {"is", "aten::__is__"},
           {"is not", "aten::__isnot__"}, {"+=", "aten::add"}, {"-=", "aten::sub"},        {"*=", "aten::mul"},
           {"/=", "aten::div"},     {"//=", "aten::floordiv"}, {"%=", "aten::remainder"}, {"**=", "aten::pow"},
           {"&=", "aten::__and__"}, {"|=", "aten::__or__"},    {"^=", "aten::__xor__"}};
  for (size_t i = 0; i < sizeof t / sizeof *t; i++)
    if (strcmp(t[i].op, op) == 0)
      return t[i].name;
  return NULL;
}

static ts_value *ts_e_binary(ts_em *e, const char *op, ts_value *l, ts_value *rv, ts_srange r) {
  if (strcmp(op, "in") == 0 || strcmp(op, "not in") == 0) {
    ts_arg_in args[2] = {{NULL, rv, r}, {NULL, l, r}};
    ts_sv s = ts_e_call_builtin(e, "aten::__contains__", NULL, args, 2, r);
    if (!s.v || op[0] == 'i')
      return s.v;
    ts_arg_in a1[1] = {{NULL, s.v, r}};
    return ts_e_call_builtin(e, "aten::__not__", NULL, a1, 1, r).v;
  }
  const char *name = ts_e_binop_name(op);
  if (!name) {
    ts_e_error(e, r, "unsupported operator '%s'", op);
    return NULL;
  }
  ts_arg_in args[2] = {{NULL, l, r}, {NULL, rv, r}};
  return ts_e_call_builtin(e, name, NULL, args, 2, r).v;
}

static bool ts_e_stmts(ts_em *e, const ts_ast_list *body);

/* Emits `a if c else b`, `a and b`, `a or b` as prim::If. */
static ts_value *ts_e_if_expr(ts_em *e, ts_value *cond, const ts_ast *tx, ts_value *tconst, const ts_ast *fx,
                              ts_value *fconst, ts_srange r) {
  ts_node *n = ts_e_node(e, TS_K_prim_If, 1, r);
  if (!n || !ts_node_add_input(n, cond))
    return NULL;
  ts_block *saved = e->blk;
  ts_value *vals[2];
  for (int i = 0; i < 2; i++) {
    ts_block *b = ts_node_add_block(n);
    if (!b)
      return NULL;
    e->blk = b;
    const ts_ast *x = i ? fx : tx;
    ts_value *c = i ? fconst : tconst;
    vals[i] = x ? ts_e_expr(e, x, NULL) : c;
    if (!vals[i] || !ts_block_add_output(b, vals[i])) {
      e->blk = saved;
      return NULL;
    }
  }
  e->blk = saved;
  const ts_type *t = ts_e_unify(e, vals[0]->type, vals[1]->type);
  if (!t) {
    ts_e_error(e, r, "the two branches give different types");
    return NULL;
  }
  return ts_e_out(n, 0, t);
}

/* A condition as a bool (PyTorch converts with aten::Bool). */
static ts_value *ts_e_cond(ts_em *e, const ts_ast *x) {
  ts_value *v = ts_e_expr(e, x, NULL);
  if (!v || v->type->kind == TS_TY_BOOL || ts_e_is_poison(v))
    return v;
  ts_arg_in a[1] = {{NULL, v, x->range}};
  return ts_e_call_builtin(e, "aten::Bool", NULL, a, 1, x->range).v;
}

/* x[i] */
static ts_value *ts_e_subscript(ts_em *e, const ts_ast *x) {
  ts_value *base = ts_e_expr(e, x->a, NULL);
  if (!base)
    return NULL;
  if (ts_e_is_poison(base))
    return base;
  const ts_type *t = base->type;
  ts_srange r = x->range;
  if (x->list.n != 1 && t->kind != TS_TY_TENSOR) {
    ts_e_error(e, r, "only tensors take several indices");
    return NULL;
  }
  const ts_ast *ix = x->list.v[0];
  if (t->kind == TS_TY_TUPLE) {
    if (ix->kind == TS_AST_SLICE) {
      int64_t bounds[3] = {0, t->n, 1};
      const ts_ast *parts[3] = {ix->a, ix->b, ix->c};
      for (int i = 0; i < 3; i++) {
        if (!parts[i])
          continue;
        ts_value *pv = ts_e_expr(e, parts[i], NULL);
        if (!pv || !ts_e_const_int_of(pv, &bounds[i])) {
          if (pv)
            ts_e_error(e, parts[i]->range, "tuple slices need constant bounds");
          return NULL;
        }
      }
      if (bounds[2] != 1) {
        ts_e_error(e, r, "tuple slices with a step are not supported");
        return NULL;
      }
      for (int i = 0; i < 2; i++) {
        if (bounds[i] < 0)
          bounds[i] += t->n;
        bounds[i] = bounds[i] < 0 ? 0 : bounds[i] > (int64_t)t->n ? t->n : bounds[i];
      }
      ts_value *el[TS_E_MAX_ARGS];
      uint32_t k = 0;
      for (int64_t i = bounds[0]; i < bounds[1] && k < TS_E_MAX_ARGS; i++) {
        ts_value *idx = ts_e_const_int(e, i, NULL, r);
        ts_node *n = ts_e_node(e, TS_K_prim_TupleIndex, 1, r);
        if (!idx || !n || !ts_node_add_input(n, base) || !ts_node_add_input(n, idx))
          return NULL;
        el[k++] = ts_e_out(n, 0, t->elems[i]);
      }
      return ts_e_tuple_construct(e, el, k, NULL, r);
    }
    ts_value *iv = ts_e_expr(e, ix, NULL);
    if (!iv)
      return NULL;
    int64_t i;
    const ts_type *et = NULL;
    if (ts_e_const_int_of(iv, &i)) {
      int64_t given = i;
      if (i < 0)
        i += t->n;
      if (i < 0 || i >= (int64_t)t->n) {
        ts_e_error(e, ix->range, "tuple index out of range");
        return NULL;
      }
      /* the node takes the normalized int index */
      if (i != given || iv->type->kind != TS_TY_INT)
        iv = ts_e_const_int(e, i, NULL, ix->range);
      et = t->elems[i];
    } else {
      for (uint32_t k = 0; k < t->n; k++)
        et = k ? ts_e_unify(e, et, t->elems[k]) : t->elems[k];
      if (!et) {
        ts_e_error(e, ix->range, "a tuple of mixed types needs a constant index");
        return NULL;
      }
    }
    ts_node *n = ts_e_node(e, TS_K_prim_TupleIndex, 1, r);
    if (!n || !ts_node_add_input(n, base) || !ts_node_add_input(n, iv))
      return NULL;
    return ts_e_out(n, 0, et);
  }
  if (t->kind == TS_TY_TENSOR) {
    /* x[i, a:b, None] -> select / slice / unsqueeze, dimension by dimension */
    ts_value *cur = base;
    int64_t dim = 0;
    for (uint32_t k = 0; k < x->list.n; k++) {
      const ts_ast *p = x->list.v[k];
      ts_value *dv = ts_e_const_int(e, dim, NULL, r);
      if (!dv)
        return NULL;
      if (p->kind == TS_AST_NONE) {
        ts_arg_in a[2] = {{NULL, cur, r}, {NULL, dv, r}};
        cur = ts_e_call_builtin(e, "aten::unsqueeze", NULL, a, 2, r).v;
        dim++;
      } else if (p->kind == TS_AST_SLICE) {
        ts_value *parts[3];
        const ts_ast *px[3] = {p->a, p->b, p->c};
        for (int i = 0; i < 3; i++)
          if (!(parts[i] = px[i] ? ts_e_expr(e, px[i], NULL)
                                 : i == 2 ? ts_e_const_int(e, 1, NULL, r) : ts_e_const_none(e, NULL, r)))
            return NULL;
        ts_arg_in a[5] = {{NULL, cur, r}, {NULL, dv, r}, {NULL, parts[0], r}, {NULL, parts[1], r}, {NULL, parts[2], r}};
        cur = ts_e_call_builtin(e, "aten::slice", NULL, a, 5, r).v;
        dim++;
      } else {
        ts_value *iv = ts_e_expr(e, p, NULL);
        if (!iv)
          return NULL;
        if (iv->type->kind == TS_TY_INT) {
          ts_arg_in a[3] = {{NULL, cur, r}, {NULL, dv, r}, {NULL, iv, r}};
          cur = ts_e_call_builtin(e, "aten::select", NULL, a, 3, r).v;
        } else {
          if (x->list.n != 1) {
            ts_e_error(e, p->range, "tensor indices mixed with other indices are not supported yet");
            return NULL;
          }
          ts_node *ln = ts_e_node(e, TS_K_prim_ListConstruct, 1, r);
          if (!ln || !ts_node_add_input(ln, iv))
            return NULL;
          ts_value *lv = ts_e_out(ln, 0, ts_type_list(&e->m->arena, ts_type_optional(&e->m->arena, ts_type_leaf(TS_TY_TENSOR))));
          ts_arg_in a[2] = {{NULL, cur, r}, {NULL, lv, r}};
          cur = ts_e_call_builtin(e, "aten::index", NULL, a, 2, r).v;
        }
      }
      if (!cur)
        return NULL;
    }
    return cur;
  }
  if (ix->kind == TS_AST_SLICE) {
    ts_value *parts[3];
    const ts_ast *px[3] = {ix->a, ix->b, ix->c};
    for (int i = 0; i < 3; i++)
      if (!(parts[i] = px[i] ? ts_e_expr(e, px[i], NULL)
                             : i == 2 ? ts_e_const_int(e, 1, NULL, r) : ts_e_const_none(e, NULL, r)))
        return NULL;
    ts_arg_in a[4] = {{NULL, base, r}, {NULL, parts[0], r}, {NULL, parts[1], r}, {NULL, parts[2], r}};
    return ts_e_call_builtin(e, "aten::slice", NULL, a, 4, r).v;
  }
  ts_value *iv = ts_e_expr(e, ix, t->kind == TS_TY_DICT ? t->elems[0] : NULL);
  if (!iv)
    return NULL;
  ts_arg_in a[2] = {{NULL, base, r}, {NULL, iv, r}};
  return ts_e_call_builtin(e, "aten::__getitem__", NULL, a, 2, r).v;
}

static ts_sv ts_e_expr_sv(ts_em *e, const ts_ast *x, const ts_type *hint) {
  ts_sv out = ts_sv_fail();
  if (++e->depth > TS_E_MAX_DEPTH) {
    ts_e_error(e, x->range, "expression nested too deeply");
    e->depth--;
    return out;
  }
  ts_srange r = x->range;
  switch (x->kind) {
  case TS_AST_NAME: out = ts_e_name(e, x); break;
  case TS_AST_INT: out.v = ts_e_const_int(e, x->i, NULL, r); break;
  case TS_AST_FLOAT: out.v = ts_e_const_float(e, x->f, r); break;
  case TS_AST_STR: out.v = ts_e_const_str(e, x->str, x->len, NULL, r); break;
  case TS_AST_NONE: out.v = ts_e_const_none(e, NULL, r); break;
  case TS_AST_TRUE: out.v = ts_e_const_bool(e, true, r); break;
  case TS_AST_FALSE: out.v = ts_e_const_bool(e, false, r); break;
  case TS_AST_ATTR: out = ts_e_attr(e, x); break;
  case TS_AST_CALL: out = ts_e_call(e, x); break;
  case TS_AST_SUBSCRIPT: out.v = ts_e_subscript(e, x); break;
  case TS_AST_TUPLE: {
    ts_value *vals[TS_E_MAX_ARGS];
    if (x->list.n > TS_E_MAX_ARGS) {
      ts_e_error(e, r, "tuple literal too long");
      break;
    }
    const ts_type *th = hint && hint->kind == TS_TY_TUPLE && hint->n == x->list.n ? hint : NULL;
    uint32_t i;
    for (i = 0; i < x->list.n; i++)
      if (!(vals[i] = ts_e_expr(e, x->list.v[i], th ? th->elems[i] : NULL)))
        break;
    if (i == x->list.n)
      out.v = ts_e_tuple_construct(e, vals, x->list.n, NULL, r);
    break;
  }
  case TS_AST_LIST: out.v = ts_e_list_literal(e, x, hint); break;
  case TS_AST_DICT: out.v = ts_e_dict_literal(e, x, hint); break;
  case TS_AST_UNOP: {
    /* negative literals are constants */
    if (strcmp(x->op, "-") == 0 && x->a->kind == TS_AST_INT) {
      out.v = ts_e_const_int(e, -x->a->i, NULL, r);
      break;
    }
    if (strcmp(x->op, "-") == 0 && x->a->kind == TS_AST_FLOAT) {
      out.v = ts_e_const_float(e, -x->a->f, r);
      break;
    }
    ts_value *v = ts_e_expr(e, x->a, NULL);
    if (!v)
      break;
    if (strcmp(x->op, "+") == 0) {
      out.v = v;
      break;
    }
    /* a unary op of a constant is folded on the spot, as PyTorch's
     * emitUnaryOp does */
    if (ts_node_is(v->node, TS_K_prim_Constant) && strcmp(x->op, "-") == 0 && v->type->kind == TS_TY_FLOAT) {
      out.v = ts_e_const_float(e, -ts_node_attr(v->node, "value")->u.f, r);
      break;
    }
    int64_t iv;
    if (ts_e_const_int_of(v, &iv) && v->type->kind == TS_TY_INT && iv != INT64_MIN &&
        (strcmp(x->op, "-") == 0 || strcmp(x->op, "~") == 0)) {
      out.v = ts_e_const_int(e, x->op[0] == '-' ? -iv : ~iv, NULL, r);
      break;
    }
    if (ts_e_const_int_of(v, &iv) && v->type->kind == TS_TY_BOOL && strcmp(x->op, "not") == 0) {
      out.v = ts_e_const_bool(e, !iv, r);
      break;
    }
    const char *name = strcmp(x->op, "-") == 0 ? "aten::neg" : strcmp(x->op, "not") == 0 ? "aten::__not__" : "aten::bitwise_not";
    if (strcmp(x->op, "not") == 0 && v->type->kind != TS_TY_BOOL) {
      ts_arg_in a0[1] = {{NULL, v, r}};
      if (!(v = ts_e_call_builtin(e, "aten::Bool", NULL, a0, 1, r).v))
        break;
    }
    ts_arg_in a[1] = {{NULL, v, r}};
    out = ts_e_call_builtin(e, name, NULL, a, 1, r);
    break;
  }
  case TS_AST_BINOP:
  case TS_AST_COMPARE: {
    ts_value *l = ts_e_expr(e, x->a, NULL);
    ts_value *rv = l ? ts_e_expr(e, x->b, NULL) : NULL;
    if (rv)
      out.v = ts_e_binary(e, x->op, l, rv, r);
    break;
  }
  case TS_AST_BOOLOP: {
    ts_value *l = ts_e_cond(e, x->a);
    if (!l)
      break;
    bool is_and = strcmp(x->op, "and") == 0;
    /* the constant lives outside the If, as PyTorch's */
    ts_value *k = ts_e_const_bool(e, !is_and, r);
    if (!k)
      break;
    ts_node *n = ts_e_node(e, TS_K_prim_If, 1, r);
    if (!n || !ts_node_add_input(n, l))
      break;
    ts_value *vals[2];
    bool ok = true;
    for (int i = 0; i < 2 && ok; i++) {
      ts_block *b = ts_node_add_block(n);
      if (!b) {
        ok = false;
        break;
      }
      ts_block *sv = e->blk;
      e->blk = b;
      bool eval_rhs = is_and ? i == 0 : i == 1;
      vals[i] = eval_rhs ? ts_e_cond(e, x->b) : k;
      ok = vals[i] && ts_block_add_output(b, vals[i]);
      e->blk = sv;
    }
    if (ok)
      out.v = ts_e_out(n, 0, ts_type_leaf(TS_TY_BOOL));
    break;
  }
  case TS_AST_IFEXP: {
    ts_value *c = ts_e_cond(e, x->c);
    if (c)
      out.v = ts_e_if_expr(e, c, x->a, NULL, x->b, NULL, r);
    break;
  }
  default: ts_e_error(e, r, "unsupported expression (%s)", ts_ast_kind_name(x->kind)); break;
  }
  e->depth--;
  return out;
}

static ts_value *ts_e_expr(ts_em *e, const ts_ast *x, const ts_type *hint) {
  ts_sv s = ts_e_expr_sv(e, x, hint);
  if (s.kind == TS_SV_VALUE)
    return s.v;
  return ts_e_sv_value(e, s, x->range);
}

/* ------------------------------------------------------------- statements */

static bool ts_e_assign_name(ts_em *e, const char *name, ts_sv sv) {
  if (sv.kind == TS_SV_VALUE && sv.v && !sv.decl) {
    const ts_sv *old = ts_env_find(e->env, name);
    if (old && old->kind == TS_SV_VALUE && old->decl && ts_type_is_subtype(sv.v->type, old->decl))
      sv.decl = old->decl;
  }
  if (sv.kind == TS_SV_VALUE && sv.v && ts_e_meaningful_name(name) && !ts_node_is(sv.v->node, TS_K_prim_Param) &&
      !sv.v->name)
    ts_value_set_name(sv.v, name);
  return ts_env_set(e, e->env, name, sv);
}

/* Binds `target` (a name, a tuple/list of targets, x[i], obj.attr) to `sv`. */
static bool ts_e_assign(ts_em *e, const ts_ast *target, ts_sv sv, ts_srange r) {
  switch (target->kind) {
  case TS_AST_NAME: return ts_e_assign_name(e, target->str, sv);
  case TS_AST_TUPLE:
  case TS_AST_LIST: {
    ts_value *v = ts_e_sv_value(e, sv, r);
    if (!v)
      return false;
    uint32_t n = target->list.n;
    ts_value *el[TS_E_MAX_ARGS];
    if (n > TS_E_MAX_ARGS)
      return false;
    if (v->type->kind == TS_TY_TUPLE) {
      if (v->type->n != n) {
        ts_e_error(e, target->range, "cannot unpack a tuple of %u values into %u targets", v->type->n, n);
        return false;
      }
      if (!ts_e_tuple_unpack(e, v, el, r))
        return false;
    } else if (v->type->kind == TS_TY_LIST) {
      ts_node *un = ts_e_node(e, TS_K_prim_ListUnpack, n, r);
      if (!un || !ts_node_add_input(un, v))
        return false;
      for (uint32_t i = 0; i < n; i++)
        el[i] = ts_e_out(un, i, v->type->elems[0]);
    } else if (ts_e_is_poison(v)) {
      for (uint32_t i = 0; i < n; i++)
        el[i] = v;
    } else {
      char ty[256];
      ts_e_type_str(ty, sizeof ty, v->type);
      ts_e_error(e, target->range, "cannot unpack a value of type %s", ty);
      return false;
    }
    for (uint32_t i = 0; i < n; i++)
      if (!ts_e_assign(e, target->list.v[i], ts_sv_value(el[i]), r))
        return false;
    return true;
  }
  case TS_AST_SUBSCRIPT: {
    ts_value *v = ts_e_sv_value(e, sv, r);
    ts_value *base = v ? ts_e_expr(e, target->a, NULL) : NULL;
    if (!base)
      return false;
    if (target->list.n != 1 || target->list.v[0]->kind == TS_AST_SLICE || base->type->kind == TS_TY_TENSOR) {
      ts_e_error(e, target->range, "assignment to this kind of subscript is not supported yet");
      return false;
    }
    ts_value *iv = ts_e_expr(e, target->list.v[0], NULL);
    if (!iv)
      return false;
    ts_arg_in a[3] = {{NULL, base, r}, {NULL, iv, r}, {NULL, v, r}};
    ts_sv res = ts_e_call_builtin(e, "aten::_set_item", NULL, a, 3, r);
    return res.kind == TS_SV_EMPTY || res.v;
  }
  case TS_AST_ATTR: {
    ts_value *v = ts_e_sv_value(e, sv, r);
    ts_value *obj = v ? ts_e_expr(e, target->a, NULL) : NULL;
    if (!obj)
      return false;
    if (obj->type->kind != TS_TY_CLASS) {
      ts_e_error(e, target->range, "only attributes of objects can be assigned");
      return false;
    }
    ts_fe_class *c = ts_fe_model_class(e->m, obj->type->name, target->range, e->d);
    if (!c) {
      e->errors++;
      return false;
    }
    const ts_fe_attr *at = ts_fe_class_attr(c, target->str);
    if (!at) {
      ts_e_error(e, target->range, "class %s has no attribute '%s'", c->qualname, target->str);
      return false;
    }
    if (!(v = ts_e_convert(e, v, at->type, r, target->str, false)))
      return false;
    ts_node *n = ts_e_node(e, TS_K_prim_SetAttr, 0, r);
    return n && ts_node_set_s(n, "name", target->str, strlen(target->str)) && ts_node_add_input(n, obj) &&
           ts_node_add_input(n, v);
  }
  default: ts_e_error(e, target->range, "cannot assign to this expression"); return false;
  }
}

/* Names a statement list assigns (loop-carried candidates), in order. */
typedef struct ts_names {
  const char **v;
  uint32_t n, cap;
} ts_names;

static void ts_names_add(ts_em *e, ts_names *s, const char *name) {
  for (uint32_t i = 0; i < s->n; i++)
    if (strcmp(s->v[i], name) == 0)
      return;
  if (s->n == s->cap) {
    uint32_t cap = s->cap ? s->cap * 2 : 16;
    const char **v = realloc(s->v, cap * sizeof *v);
    if (!v) {
      e->oom = true;
      return;
    }
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n++] = name;
}

static void ts_names_targets(ts_em *e, ts_names *s, const ts_ast *t) {
  if (t->kind == TS_AST_NAME)
    ts_names_add(e, s, t->str);
  else if (t->kind == TS_AST_TUPLE || t->kind == TS_AST_LIST)
    for (uint32_t i = 0; i < t->list.n; i++)
      ts_names_targets(e, s, t->list.v[i]);
}

static void ts_names_assigned(ts_em *e, ts_names *s, const ts_ast_list *body) {
  for (uint32_t i = 0; i < body->n; i++) {
    const ts_ast *st = body->v[i];
    switch (st->kind) {
    case TS_AST_ASSIGN:
      for (uint32_t k = 0; k < st->list.n; k++)
        ts_names_targets(e, s, st->list.v[k]);
      break;
    case TS_AST_AUGASSIGN: ts_names_targets(e, s, st->a); break;
    case TS_AST_FOR:
      ts_names_targets(e, s, st->a);
      ts_names_assigned(e, s, &st->body);
      break;
    case TS_AST_WHILE: ts_names_assigned(e, s, &st->body); break;
    case TS_AST_IF:
      ts_names_assigned(e, s, &st->body);
      ts_names_assigned(e, s, &st->orelse);
      break;
    case TS_AST_WITH: ts_names_assigned(e, s, &st->body); break;
    default: break;
    }
  }
}

static int ts_e_strcmp(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static const char *const ts_e_ret_var = "$return";
static const char *const ts_e_break_var = "$break";   /* bool: the loop body broke */
static const char *const ts_e_exited_var = "$exited"; /* set: the rest of the block is dead */

/* Whether a loop body has a `break` of its own (not of a nested loop). */
static bool ts_e_has_break(const ts_ast_list *body) {
  for (uint32_t i = 0; i < body->n; i++) {
    const ts_ast *s = body->v[i];
    if (s->kind == TS_AST_BREAK)
      return true;
    if ((s->kind == TS_AST_IF && (ts_e_has_break(&s->body) || ts_e_has_break(&s->orelse))) ||
        (s->kind == TS_AST_WITH && ts_e_has_break(&s->body)))
      return true;
  }
  return false;
}

/* if / else: each branch in its own scope; a variable assigned in one
 * branch and visible in the other becomes an output (sorted by name, as
 * PyTorch's ControlFlowLoadStores). */
static bool ts_e_if(ts_em *e, const ts_ast *st) {
  ts_value *c = ts_e_cond(e, st->c);
  if (!c)
    return false;
  ts_node *n = ts_e_node(e, TS_K_prim_If, 0, st->range);
  if (!n || !ts_node_add_input(n, c))
    return false;
  ts_env envs[2] = {{0}, {0}};
  ts_block *blocks[2];
  ts_block *saved_blk = e->blk;
  ts_env *saved_env = e->env;
  bool ok = true;
  for (int i = 0; i < 2 && ok; i++) {
    if (!(blocks[i] = ts_node_add_block(n))) {
      ok = false;
      break;
    }
    envs[i].parent = saved_env;
    e->env = &envs[i];
    e->blk = blocks[i];
    ok = ts_e_stmts(e, i ? &st->orelse : &st->body);
  }
  e->blk = saved_blk;
  e->env = saved_env;
  if (ok) {
    ts_names outs = {0};
    for (int i = 0; i < 2; i++)
      for (uint32_t k = 0; k < envs[i].n; k++) {
        const char *name = envs[i].vars[k].name;
        if (name == ts_e_exited_var)
          continue;
        if (ts_env_find_here(&envs[1 - i], name) || ts_env_find(saved_env, name))
          ts_names_add(e, &outs, name);
      }
    if (outs.n)
      qsort(outs.v, outs.n, sizeof *outs.v, ts_e_strcmp);
    for (uint32_t k = 0; k < outs.n && ok; k++) {
      const char *name = outs.v[k];
      ts_sv *sv[2];
      for (int i = 0; i < 2; i++) {
        sv[i] = ts_env_find_here(&envs[i], name);
        if (!sv[i])
          sv[i] = ts_env_find(saved_env, name);
      }
      if (sv[0]->kind != TS_SV_VALUE || sv[1]->kind != TS_SV_VALUE || !sv[0]->v || !sv[1]->v) {
        bool same = sv[0]->kind == sv[1]->kind && sv[0]->fn == sv[1]->fn && sv[0]->v == sv[1]->v &&
                    sv[0]->cls == sv[1]->cls && sv[0]->s == sv[1]->s;
        if (same)
          ok = ts_env_set(e, saved_env, name, *sv[0]);
        else
          ts_e_error(e, st->range, "'%s' is not the same kind of thing in both branches", name);
        continue;
      }
      const ts_type *d = sv[0]->decl ? sv[0]->decl : sv[1]->decl;
      const ts_type *t = ts_e_join_type(e, d, sv[0]->v->type, sv[1]->v->type);
      if (!t)
        continue; /* as PyTorch: not an output; using it later is an error */
      ts_value *o = ts_node_add_output(n, t);
      ok = o && ts_block_add_output(blocks[0], sv[0]->v) && ts_block_add_output(blocks[1], sv[1]->v);
      if (ok) {
        ts_sv j = ts_sv_value(o);
        j.decl = t == d ? d : NULL;
        ok = ts_e_assign_name(e, name, j);
      }
    }
    free(outs.v);
    /* both branches left the block: so does the code after the if */
    if (ok && ts_env_find_here(&envs[0], ts_e_exited_var) && ts_env_find_here(&envs[1], ts_e_exited_var))
      ok = ts_env_set(e, saved_env, ts_e_exited_var, ts_sv_value(NULL));
  }
  ts_env_free(&envs[0]);
  ts_env_free(&envs[1]);
  return ok;
}

/* The loop skeleton shared by while and for: carried variables are those
 * the body assigns that exist before the loop (sorted by name). `setup`
 * binds the loop target inside the body; `next_cond` computes the
 * continue condition at the end of the body (NULL: constant true). */
typedef struct ts_loop_kind {
  const ts_ast *target;   /* for: the target; while: NULL */
  const ts_ast *while_cond;
  int iter;               /* 0 while, 1 range, 2 list/str/dict-keys, 3 tensor */
  ts_value *iterable;
  ts_value *start, *step; /* range(start, stop, step) */
} ts_loop_kind;

static bool ts_e_loop(ts_em *e, const ts_ast *st, ts_value *max_trip, ts_value *cond0, const ts_loop_kind *lk) {
  ts_names assigned = {0};
  ts_names_assigned(e, &assigned, &st->body);
  ts_names carried = {0};
  for (uint32_t i = 0; i < assigned.n; i++) {
    ts_sv *sv = ts_env_find(e->env, assigned.v[i]);
    if (sv && sv->kind == TS_SV_VALUE && sv->v)
      ts_names_add(e, &carried, assigned.v[i]);
  }
  free(assigned.v);
  if (carried.n)
    qsort(carried.v, carried.n, sizeof *carried.v, ts_e_strcmp);
  ts_node *n = ts_e_node(e, TS_K_prim_Loop, 0, st->range);
  bool ok = n && ts_node_add_input(n, max_trip) && ts_node_add_input(n, cond0);
  ts_block *body = ok ? ts_node_add_block(n) : NULL;
  ts_value **ins = calloc(carried.n + 1, sizeof *ins);
  ok = ok && body && ins;
  ts_value *trip = ok ? ts_block_add_input(body, ts_type_leaf(TS_TY_INT)) : NULL;
  ok = ok && trip;
  for (uint32_t i = 0; ok && i < carried.n; i++) {
    ins[i] = ts_env_find(e->env, carried.v[i])->v;
    ok = ts_node_add_input(n, ins[i]) != false;
  }
  ts_env env = {0};
  env.parent = e->env;
  ts_block *saved_blk = e->blk;
  ts_env *saved_env = e->env;
  bool saved_in_loop = e->in_loop;
  ts_value *no_break = NULL;
  if (ok) {
    e->blk = body;
    e->env = &env;
    e->in_loop = true;
    /* break: the exit transform keeps a flag; the loop goes on while it is
     * false and the condition holds */
    if (ts_e_has_break(&st->body)) {
      no_break = ts_e_const_bool(e, false, st->range);
      ok = no_break && ts_env_set(e, &env, ts_e_break_var, ts_sv_value(no_break));
    }
    for (uint32_t i = 0; ok && i < carried.n; i++) {
      ts_value *bi = ts_block_add_input(body, ins[i]->type);
      ok = bi && ts_e_assign_name(e, carried.v[i], ts_sv_value(bi));
      if (ok && ts_e_meaningful_name(carried.v[i]))
        ok = ts_value_set_name(bi, carried.v[i]);
    }
    if (ok && lk->target && lk->target->kind == TS_AST_NAME && lk->iter == 1 && !lk->start &&
        ts_e_meaningful_name(lk->target->str))
      ok = ts_value_set_name(trip, lk->target->str);
    /* bind the loop target */
    if (ok && lk->target) {
      ts_value *item = NULL;
      ts_srange r = lk->target->range;
      if (lk->iter == 1) {
        if (lk->start) {
          ts_arg_in a[3] = {{NULL, trip, r}, {NULL, lk->start, r}, {NULL, lk->step, r}};
          item = ts_e_call_builtin(e, "aten::__derive_index", NULL, a, 3, r).v;
        } else
          item = trip;
      } else if (lk->iter == 2) {
        ts_arg_in a[2] = {{NULL, lk->iterable, r}, {NULL, trip, r}};
        item = ts_e_call_builtin(e, "aten::__getitem__", NULL, a, 2, r).v;
      } else if (lk->iter == 3) {
        ts_value *zero = ts_e_const_int(e, 0, NULL, r);
        ts_arg_in a[3] = {{NULL, lk->iterable, r}, {NULL, zero, r}, {NULL, trip, r}};
        item = zero ? ts_e_call_builtin(e, "aten::select", NULL, a, 3, r).v : NULL;
      }
      ok = item && ts_e_assign(e, lk->target, ts_sv_value(item), r);
    }
    ok = ok && ts_e_stmts(e, &st->body);
    ts_value *next = NULL;
    ts_sv *broke = no_break ? ts_env_find_here(&env, ts_e_break_var) : NULL;
    if (ok && broke && broke->v != no_break) {
      /* if broke: false, else: the loop's own condition */
      ts_node *n2 = ts_e_node(e, TS_K_prim_If, 1, st->range);
      ts_block *b0 = n2 && ts_node_add_input(n2, broke->v) ? ts_node_add_block(n2) : NULL;
      ts_block *b1 = b0 ? ts_node_add_block(n2) : NULL;
      ok = b1 != NULL;
      if (ok) {
        e->blk = b0;
        ts_value *f = ts_e_const_bool(e, false, st->range);
        ok = f && ts_block_add_output(b0, f);
        e->blk = b1;
        ts_value *c = ok ? (lk->while_cond ? ts_e_cond(e, lk->while_cond) : ts_e_const_bool(e, true, st->range)) : NULL;
        ok = c && ts_block_add_output(b1, c);
        e->blk = body;
        next = ok ? ts_e_out(n2, 0, ts_type_leaf(TS_TY_BOOL)) : NULL;
      }
    } else if (ok)
      next = lk->while_cond ? ts_e_cond(e, lk->while_cond) : ts_e_const_bool(e, true, st->range);
    ok = ok && next && ts_block_add_output(body, next);
    for (uint32_t i = 0; ok && i < carried.n; i++) {
      ts_sv *sv = ts_env_find(e->env, carried.v[i]);
      if (sv->kind != TS_SV_VALUE || !sv->v) {
        ts_e_error(e, st->range, "loop-carried '%s' is not a value", carried.v[i]);
        ok = false;
        break;
      }
      ts_value *bo = sv->v;
      const ts_type *t = ts_e_join_type(e, sv->decl, ins[i]->type, bo->type);
      if (!t) {
        char a[256], b[256];
        ts_e_type_str(a, sizeof a, ins[i]->type);
        ts_e_type_str(b, sizeof b, bo->type);
        ts_e_error(e, st->range, "'%s' is %s before the loop and %s at the end of its body", carried.v[i], a, b);
        ok = false;
        break;
      }
      ts_value_set_type(ts_block_input(body, i + 1), t);
      ok = ts_block_add_output(body, bo);
    }
  }
  e->blk = saved_blk;
  e->env = saved_env;
  e->in_loop = saved_in_loop;
  for (uint32_t i = 0; ok && i < carried.n; i++) {
    ts_value *o = ts_node_add_output(n, ts_block_input(body, i + 1)->type);
    ok = o && ts_e_assign_name(e, carried.v[i], ts_sv_value(o));
  }
  ts_env_free(&env);
  free(ins);
  free(carried.v);
  return ok;
}

static bool ts_e_while(ts_em *e, const ts_ast *st) {
  if (st->orelse.n) {
    ts_e_error(e, st->range, "while ... else is not supported");
    return false;
  }
  ts_value *c = ts_e_cond(e, st->c);
  ts_value *max = c ? ts_e_const_int(e, INT64_MAX, NULL, st->range) : NULL;
  if (!max)
    return false;
  ts_loop_kind lk = {.while_cond = st->c};
  return ts_e_loop(e, st, max, c, &lk);
}

static bool ts_e_for(ts_em *e, const ts_ast *st) {
  const ts_ast *it = st->b;
  ts_srange r = it->range;
  ts_loop_kind lk = {.target = st->a};
  ts_value *max = NULL;
  if (it->kind == TS_AST_CALL && it->a->kind == TS_AST_NAME && strcmp(it->a->str, "range") == 0 &&
      !ts_env_find(e->env, "range")) {
    uint32_t n = it->list.n;
    if (n < 1 || n > 3 || it->kw.n) {
      ts_e_error(e, r, "range() takes 1 to 3 arguments");
      return false;
    }
    ts_value *a[3];
    for (uint32_t i = 0; i < n; i++)
      if (!(a[i] = ts_e_expr(e, it->list.v[i], NULL)))
        return false;
    lk.iter = 1;
    if (n == 1) {
      if (a[0]->type->kind != TS_TY_INT) {
        ts_e_error(e, r, "range() takes ints");
        return false;
      }
      max = a[0];
    } else {
      lk.start = a[0];
      lk.step = n == 3 ? a[2] : ts_e_const_int(e, 1, NULL, r);
      ts_arg_in args[3] = {{NULL, a[0], r}, {NULL, a[1], r}, {NULL, lk.step, r}};
      max = lk.step ? ts_e_call_builtin(e, "aten::__range_length", NULL, args, 3, r).v : NULL;
    }
  } else {
    ts_value *v = ts_e_expr(e, it, NULL);
    if (!v)
      return false;
    if (v->type->kind == TS_TY_TUPLE) {
      /* tuples are unrolled: each element may have its own type */
      ts_value *el[TS_E_MAX_ARGS];
      if (v->type->n > TS_E_MAX_ARGS || !ts_e_tuple_unpack(e, v, el, r))
        return false;
      for (uint32_t i = 0; i < v->type->n; i++)
        if (!ts_e_assign(e, st->a, ts_sv_value(el[i]), r) || !ts_e_stmts(e, &st->body))
          return false;
      return true;
    }
    if (v->type->kind == TS_TY_DICT) {
      ts_arg_in a[1] = {{NULL, v, r}};
      if (!(v = ts_e_call_builtin(e, "aten::keys", NULL, a, 1, r).v))
        return false;
    }
    lk.iterable = v;
    lk.iter = v->type->kind == TS_TY_TENSOR ? 3 : 2;
    if (v->type->kind != TS_TY_LIST && v->type->kind != TS_TY_STR && v->type->kind != TS_TY_TENSOR) {
      char ty[256];
      ts_e_type_str(ty, sizeof ty, v->type);
      ts_e_error(e, r, "cannot iterate over a value of type %s", ty);
      return false;
    }
    ts_arg_in a[1] = {{NULL, v, r}};
    max = ts_e_call_builtin(e, "aten::len", NULL, a, 1, r).v;
  }
  ts_value *t = max ? ts_e_const_bool(e, true, st->range) : NULL;
  return t && ts_e_loop(e, st, max, t, &lk);
}

/* Whether a statement list always ends in `return` (or, in a loop body,
 * `break` / `continue`). */
static bool ts_e_ends(const ts_ast_list *body, bool loops) {
  if (!body->n)
    return false;
  const ts_ast *last = body->v[body->n - 1];
  if (last->kind == TS_AST_RETURN || (loops && (last->kind == TS_AST_BREAK || last->kind == TS_AST_CONTINUE)))
    return true;
  if (last->kind == TS_AST_IF)
    return ts_e_ends(&last->body, loops) && ts_e_ends(&last->orelse, loops);
  return false;
}


static bool ts_e_contains_exit(const ts_ast_list *body, bool loops) {
  for (uint32_t i = 0; i < body->n; i++) {
    const ts_ast *s = body->v[i];
    if (s->kind == TS_AST_RETURN || (loops && (s->kind == TS_AST_BREAK || s->kind == TS_AST_CONTINUE)))
      return true;
    if (s->kind == TS_AST_IF && (ts_e_contains_exit(&s->body, loops) || ts_e_contains_exit(&s->orelse, loops)))
      return true;
    if ((s->kind == TS_AST_WHILE || s->kind == TS_AST_FOR) && ts_e_contains_exit(&s->body, false))
      return true;
  }
  return false;
}


static bool ts_e_stmt(ts_em *e, const ts_ast *st, const ts_ast_list *rest);

/* Emits statements. Early returns are handled by moving the statements
 * after an `if` that returns on one side into its other side (the exit
 * transform for returns outside loops): every path then ends in a return,
 * and the returned value flows out of the If like any other variable. */
static bool ts_e_stmts(ts_em *e, const ts_ast_list *body) {
  for (uint32_t i = 0; i < body->n; i++) {
    if (e->oom)
      return false;
    const ts_ast *st = body->v[i];
    ts_ast_list rest = {body->v + i + 1, body->n - i - 1};
    if (ts_env_find_here(e->env, ts_e_exited_var)) /* after return, break or continue: dead code */
      return true;
    if (st->kind == TS_AST_IF && rest.n &&
        (ts_e_contains_exit(&st->body, e->in_loop) || ts_e_contains_exit(&st->orelse, e->in_loop)))
      return ts_e_stmt(e, st, &rest);
    if (!ts_e_stmt(e, st, NULL) && e->errors)
      return false;
    if (e->oom)
      return false;
    /* graph size: a long source deflates well; its graph stops at the
     * budget inlining has (nodes made so far, dead ones too) */
    if (e->g->next_node_id > TS_PASS_MAX_NODES) {
      ts_e_error(e, st->range, "the function makes more than %d nodes (graph size limit)", TS_PASS_MAX_NODES);
      return false;
    }
  }
  return true;
}

/* if with a return inside and statements after it: the statements are
 * emitted at the end of each branch that does not return. */
static bool ts_e_if_with_rest(ts_em *e, const ts_ast *st, const ts_ast_list *rest) {
  ts_ast copy = *st;
  size_t nb = st->body.n + (ts_e_ends(&st->body, e->in_loop) ? 0 : rest->n);
  size_t ne = st->orelse.n + (ts_e_ends(&st->orelse, e->in_loop) ? 0 : rest->n);
  ts_ast **b = ts_arena_alloc(&e->m->arena, (nb + 1) * sizeof *b);
  ts_ast **o = ts_arena_alloc(&e->m->arena, (ne + 1) * sizeof *o);
  if (!b || !o) {
    e->oom = true;
    return false;
  }
  memcpy(b, st->body.v, st->body.n * sizeof *b);
  if (nb > st->body.n)
    memcpy(b + st->body.n, rest->v, rest->n * sizeof *b);
  if (st->orelse.n)
    memcpy(o, st->orelse.v, st->orelse.n * sizeof *o);
  if (ne > st->orelse.n)
    memcpy(o + st->orelse.n, rest->v, rest->n * sizeof *o);
  copy.body.v = b;
  copy.body.n = (uint32_t)nb;
  copy.orelse.v = o;
  copy.orelse.n = (uint32_t)ne;
  return ts_e_if(e, &copy);
}

static bool ts_e_stmt(ts_em *e, const ts_ast *st, const ts_ast_list *rest) {
  if (++e->depth > TS_E_MAX_DEPTH) {
    ts_e_error(e, st->range, "statements nested too deeply");
    e->depth--;
    return false;
  }
  bool ok = false;
  switch (st->kind) {
  case TS_AST_EXPR_STMT: {
    ts_sv s = ts_e_expr_sv(e, st->a, NULL);
    ok = s.kind != TS_SV_VALUE || s.v;
    break;
  }
  case TS_AST_ASSIGN: {
    if (!st->a) {
      /* a bare annotation "x : T" declares nothing we need */
      ok = true;
      break;
    }
    const ts_type *t = st->b ? ts_e_type(e, st->b) : NULL;
    if (st->b && !t)
      break;
    ts_sv s = ts_e_expr_sv(e, st->a, t);
    if (s.kind == TS_SV_VALUE && !s.v)
      break;
    if (t) {
      ts_value *v = ts_e_sv_value(e, s, st->a->range);
      if (!v || !(v = ts_e_convert(e, v, t, st->range, "assignment", false)))
        break;
      if ((t->kind == TS_TY_OPTIONAL || t->kind == TS_TY_UNION) && v->type->kind == TS_TY_NONE)
        v = ts_e_const_none(e, t, st->range);
      s = ts_sv_value(v);
      s.decl = t;
    }
    ok = true;
    for (uint32_t i = 0; i < st->list.n && ok; i++)
      ok = ts_e_assign(e, st->list.v[i], s, st->range);
    break;
  }
  case TS_AST_AUGASSIGN: {
    ts_value *l = ts_e_expr(e, st->a, NULL);
    ts_value *r = l ? ts_e_expr(e, st->b, NULL) : NULL;
    if (!r)
      break;
    char op[4] = {0};
    size_t ol = strlen(st->op);
    memcpy(op, st->op, ol > 1 && ol < 5 ? ol - 1 : 0);
    /* tensors and lists update in place (add_, extend), as Python does */
    ts_value *res;
    if (l->type->kind == TS_TY_TENSOR && (strcmp(op, "+") == 0 || strcmp(op, "-") == 0 || strcmp(op, "*") == 0 ||
                                          strcmp(op, "/") == 0)) {
      const char *name = op[0] == '+' ? "aten::add_" : op[0] == '-' ? "aten::sub_" : op[0] == '*' ? "aten::mul_" : "aten::div_";
      ts_arg_in a[2] = {{NULL, l, st->range}, {NULL, r, st->range}};
      res = ts_e_call_builtin(e, name, NULL, a, 2, st->range).v;
    } else if (l->type->kind == TS_TY_LIST && strcmp(op, "+") == 0) {
      ts_arg_in a[2] = {{NULL, l, st->range}, {NULL, r, st->range}};
      ts_sv s = ts_e_call_builtin(e, "aten::extend", NULL, a, 2, st->range);
      res = s.kind == TS_SV_EMPTY ? l : s.v ? l : NULL;
    } else
      res = ts_e_binary(e, op, l, r, st->range);
    ok = res && ts_e_assign(e, st->a, ts_sv_value(res), st->range);
    break;
  }
  case TS_AST_IF:
    ok = rest ? ts_e_if_with_rest(e, st, rest) : ts_e_if(e, st);
    break;
  case TS_AST_WHILE:
  case TS_AST_FOR:
    if (ts_e_contains_exit(&st->body, false)) {
      ts_e_error(e, st->range, "return inside a loop is not supported yet");
      break;
    }
    ok = st->kind == TS_AST_WHILE ? ts_e_while(e, st) : ts_e_for(e, st);
    break;
  case TS_AST_RETURN: {
    ts_value *v = st->a ? ts_e_expr(e, st->a, e->fn->ret_type) : ts_e_const_none(e, NULL, st->range);
    if (v && e->fn->ret_type)
      v = ts_e_convert(e, v, e->fn->ret_type, st->range, "return value", false);
    ok = v && ts_env_set(e, e->env, ts_e_ret_var, ts_sv_value(v)) &&
         ts_env_set(e, e->env, ts_e_exited_var, ts_sv_value(NULL));
    break;
  }
  case TS_AST_PASS: ok = true; break;
  case TS_AST_WITH: {
    /* with obj as t: body  ->  t = prim::Enter(obj); body; prim::Exit(obj)
     * (the interpreter calls __enter__ and __exit__ for them) */
    ts_value *objs[16];
    uint32_t n = st->list.n;
    if (n > 16) {
      ts_e_error(e, st->range, "too many context managers");
      break;
    }
    ok = true;
    for (uint32_t i = 0; i < n && ok; i++) {
      const ts_ast *item = st->list.v[i];
      ts_value *obj = ts_e_expr(e, item->a, NULL);
      ok = obj != NULL;
      if (!ok)
        break;
      ts_fe_class *c = obj->type->kind == TS_TY_CLASS ? ts_fe_model_class(e->m, obj->type->name, item->range, e->d) : NULL;
      ts_fe_fn *enter = c ? ts_fe_class_method(c, "__enter__") : NULL;
      if (!enter || !ts_fe_class_method(c, "__exit__") || !ts_fe_fn_signature(e->m, enter, e->d)) {
        ts_e_error(e, item->range, "a with statement needs an object with __enter__ and __exit__");
        ok = false;
        break;
      }
      ts_node *en = ts_e_node(e, ts_kind_lookup("prim::Enter", 11), 1, item->range);
      ts_value *v = en && ts_node_add_input(en, obj)
                        ? ts_e_out(en, 0, enter->ret_type ? enter->ret_type : ts_type_leaf(TS_TY_NONE))
                        : NULL;
      ok = v && (!item->b || ts_e_assign(e, item->b, ts_sv_value(v), item->range));
      objs[i] = obj;
    }
    ok = ok && ts_e_stmts(e, &st->body);
    for (uint32_t i = n; ok && i-- > 0;) {
      ts_node *ex = ts_e_node(e, ts_kind_lookup("prim::Exit", 10), 1, st->range);
      /* PyTorch leaves the output of Exit at the default type, Tensor */
      ok = ex && ts_node_add_input(ex, objs[i]) && ts_e_out(ex, 0, ts_type_leaf(TS_TY_TENSOR));
    }
    break;
  }
  case TS_AST_BREAK:
  case TS_AST_CONTINUE:
    if (!e->in_loop) {
      ts_e_error(e, st->range, "'%s' outside a loop", st->kind == TS_AST_BREAK ? "break" : "continue");
      break;
    }
    ok = true;
    if (st->kind == TS_AST_BREAK) {
      ts_value *t = ts_e_const_bool(e, true, st->range);
      ok = t && ts_env_set(e, e->env, ts_e_break_var, ts_sv_value(t));
    }
    ok = ok && ts_env_set(e, e->env, ts_e_exited_var, ts_sv_value(NULL));
    break;
  case TS_AST_RAISE: {
    /* raise Exception("msg") -> prim::RaiseException */
    const ts_ast *x = st->a;
    ts_value *msg = NULL;
    const char *cls = "builtins.Exception";
    if (x && x->kind == TS_AST_CALL && (x->a->kind == TS_AST_NAME || x->a->kind == TS_AST_ATTR)) {
      char buf[256];
      snprintf(buf, sizeof buf, "builtins.%s", x->a->str);
      cls = ts_arena_strdup(&e->m->arena, buf);
      msg = x->list.n ? ts_e_expr(e, x->list.v[0], NULL) : ts_e_const_str(e, "", 0, NULL, st->range);
    } else
      msg = ts_e_const_str(e, "Exception", 9, NULL, st->range);
    ts_value *cv = msg ? ts_e_const_str(e, cls, strlen(cls), NULL, st->range) : NULL;
    ts_node *n = cv ? ts_e_node(e, TS_K_prim_RaiseException, 0, st->range) : NULL;
    ok = n && ts_node_add_input(n, msg) && ts_node_add_input(n, cv);
    break;
  }
  case TS_AST_ASSERT: {
    /* assert c, msg  ->  if not c: raise AssertionError(msg) */
    ts_value *c = ts_e_cond(e, st->a);
    if (!c)
      break;
    ts_node *n = ts_e_node(e, TS_K_prim_If, 0, st->range);
    if (!n || !ts_node_add_input(n, c))
      break;
    ts_block *tb = ts_node_add_block(n), *fb = ts_node_add_block(n);
    if (!tb || !fb)
      break;
    ts_block *saved = e->blk;
    e->blk = fb;
    ts_value *msg = st->b ? ts_e_expr(e, st->b, NULL) : ts_e_const_str(e, "AssertionError: ", 16, NULL, st->range);
    ts_value *cls = msg ? ts_e_const_str(e, "builtins.AssertionError", 23, NULL, st->range) : NULL;
    ts_node *rn = cls ? ts_e_node(e, TS_K_prim_RaiseException, 0, st->range) : NULL;
    ok = rn && ts_node_add_input(rn, msg) && ts_node_add_input(rn, cls);
    e->blk = saved;
    break;
  }
  default: ts_e_error(e, st->range, "unsupported statement (%s)", ts_ast_kind_name(st->kind)); break;
  }
  e->depth--;
  return ok;
}

/* --------------------------------------------------------------- functions */

static ts_graph *ts_e_callee(void *ctx, const ts_node *call, ts_diag *d);

/* PyTorch's runCleanupPasses after emitting a function. */
static bool ts_e_cleanup(ts_graph *g, ts_diag *d) {
  return ts_pass_lower_simple_tuples(g, d) && ts_pass_constant_prop_immutable(g, d) && ts_pass_constant_pooling(g, d);
}

ts_graph *ts_fe_fn_graph(ts_fe_model *m, ts_fe_fn *fn, ts_diag *d) {
  if (fn->state == TS_FE_DONE)
    return fn->graph;
  if (fn->state == TS_FE_FAILED)
    return NULL;
  if (fn->state == TS_FE_COMPILING) {
    ts_fe_error_at(d, fn->def->range, "%s calls itself: recursion is not supported in TorchScript", fn->qualname);
    return NULL;
  }
  fn->state = TS_FE_COMPILING;
  if (!ts_fe_fn_signature(m, fn, d)) {
    fn->state = TS_FE_FAILED;
    return NULL;
  }
  ts_graph *g = ts_graph_new(0);
  if (!g || !ts_fe_model_own_graph(m, g)) {
    ts_diag_error(d, "%s: out of memory", m->path);
    fn->state = TS_FE_FAILED;
    return NULL;
  }
  ts_em e = {.m = m, .fn = fn, .g = g, .blk = g->block, .d = d};
  ts_env env = {0};
  e.env = &env;
  bool ok = true;
  for (uint32_t i = 0; i < fn->nparams && ok; i++) {
    ts_value *v = ts_block_add_input(g->block, fn->param_types[i]);
    ok = v && ts_value_set_name(v, fn->param_names[i]) && ts_env_set(&e, &env, fn->param_names[i], ts_sv_value(v));
  }
  ok = ok && ts_e_stmts(&e, &fn->def->body);
  if (ok && !e.errors) {
    ts_sv *ret = ts_env_find_here(&env, ts_e_ret_var);
    ts_value *rv = ret ? ret->v : NULL;
    if (!ret) {
      if (fn->ret_type && fn->ret_type->kind != TS_TY_NONE && fn->ret_type->kind != TS_TY_OPTIONAL) {
        ts_fe_error_at(d, fn->def->range, "%s does not return a value on every path", fn->qualname);
        e.errors++;
      } else
        rv = ts_e_const_none(&e, NULL, fn->def->range);
    }
    ok = rv && ts_block_add_output(g->block, rv);
  }
  ts_env_free(&env);
  if (e.oom || !ts_graph_ok(g)) {
    ts_diag_error(d, "%s: out of memory compiling %s", m->path, fn->qualname);
    ok = false;
  }
  if (!ok || e.errors) {
    if (!e.errors && ok == false && d && d->errors == 0)
      ts_diag_error(d, "%s: cannot compile %s", m->path, fn->qualname);
    fn->graph = g; /* partial: only for finding callees to report on */
    fn->state = TS_FE_FAILED;
    return NULL;
  }
  if (!ts_e_cleanup(g, d) || !ts_graph_verify(g, d)) {
    fn->state = TS_FE_FAILED;
    return NULL;
  }
  fn->graph = g;
  fn->state = TS_FE_DONE;
  return g;
}

ts_graph *ts_fe_fn_optimized(ts_fe_model *m, ts_fe_fn *fn, ts_diag *d) {
  if (fn->opt_state == TS_FE_DONE)
    return fn->optimized;
  if (fn->opt_state == TS_FE_FAILED)
    return NULL;
  if (fn->opt_state == TS_FE_COMPILING) {
    ts_fe_error_at(d, fn->def->range, "%s calls itself: recursion is not supported in TorchScript", fn->qualname);
    return NULL;
  }
  ts_graph *g = ts_fe_fn_graph(m, fn, d);
  if (!g) {
    fn->opt_state = TS_FE_FAILED;
    return NULL;
  }
  fn->opt_state = TS_FE_COMPILING;
  ts_graph *o = ts_graph_copy(g);
  if (!o || !ts_fe_model_own_graph(m, o)) {
    ts_diag_error(d, "%s: out of memory", m->path);
    fn->opt_state = TS_FE_FAILED;
    return NULL;
  }
  /* PyTorch's preoptimizeGraph */
  if (!ts_pass_inline(o, ts_e_callee, m, d) || !ts_pass_peephole(o, d) || !ts_pass_constant_prop_immutable(o, d) ||
      !ts_pass_constant_pooling(o, d)) {
    fn->opt_state = TS_FE_FAILED;
    return NULL;
  }
  fn->optimized = o;
  fn->opt_state = TS_FE_DONE;
  return o;
}

/* The resolver for ts_pass_inline: a call's callee, optimized. */
static ts_graph *ts_e_callee(void *ctx, const ts_node *call, ts_diag *d) {
  ts_fe_model *m = ctx;
  ts_srange none = {0};
  ts_fe_fn *fn = NULL;
  if (ts_node_is(call, TS_K_prim_CallFunction)) {
    const ts_type *t = call->inputs[0]->type;
    if (t->kind != TS_TY_FUNCTION || !t->name) {
      ts_diag_error(d, "prim::CallFunction of an unknown function");
      return NULL;
    }
    fn = ts_fe_model_function(m, t->name, none, d);
  } else {
    const ts_attr *a = ts_node_attr(call, "name");
    const ts_type *t = call->inputs[0]->type;
    if (!a || a->kind != TS_ATTR_STR || t->kind != TS_TY_CLASS) {
      ts_diag_error(d, "prim::CallMethod without a method name or an object");
      return NULL;
    }
    ts_fe_class *c = ts_fe_model_class(m, t->name, none, d);
    if (!c)
      return NULL;
    if (c->kind == TS_FE_CLASS_INTERFACE) /* dispatched at run time, as PyTorch leaves it */
      return ts_pass_callee_keep;
    fn = ts_fe_class_method(c, a->u.s);
    if (!fn) {
      ts_diag_error(d, "class %s has no method '%s'", c->qualname, a->u.s);
      return NULL;
    }
  }
  return fn ? ts_fe_fn_optimized(m, fn, d) : NULL;
}

ts_graph *ts_fe_model_method_inlined(ts_fe_model *m, const char *method, ts_diag *d) {
  ts_graph *g = ts_fe_model_method(m, method, d);
  if (!g)
    return NULL;
  ts_graph *o = ts_graph_copy(g);
  if (!o || !ts_fe_model_own_graph(m, o)) {
    ts_diag_error(d, "%s: out of memory", m->path);
    return NULL;
  }
  if (!ts_pass_inline(o, ts_e_callee, m, d) || !ts_graph_verify(o, d))
    return NULL;
  return o;
}
