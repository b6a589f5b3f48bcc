/* ir/ops.c: the op table. ops.def is expanded here into the per-kind entries
 * (name, flags, schema texts); ts_ops_init() parses every schema once into a
 * private arena and builds a sorted name index for ts_kind_lookup. The
 * lookups initialise the table on first use, so callers that never call
 * ts_ops_init() still get a complete table. */
#include "ir.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define TS_NO_SCHEMA NULL

/* Each entry's schema texts, NULL-terminated (TS_NO_SCHEMA: none). */
#define TS_OP(ns, name, flags, ...) static const char *const ts_op_texts_##ns##_##name[] = {__VA_ARGS__, NULL};
#include "ops.def"
#undef TS_OP

/* nschemas is counted by ts_ops_build(). */
static ts_opdef ts_ops[] = {
#define TS_OP(ns, name, flags, ...) {TS_K_##ns##_##name, #ns "::" #name, (flags), ts_op_texts_##ns##_##name, 0},
#include "ops.def"
#undef TS_OP
};

_Static_assert(sizeof ts_ops / sizeof *ts_ops == TS_K_COUNT, "ts_ops and ts_kind out of step");

static pthread_once_t ts_ops_once = PTHREAD_ONCE_INIT;
static bool ts_ops_ok;
static ts_arena ts_ops_arena;                    /* the parsed schemas; never released */
static const ts_schema **ts_op_parsed[TS_K_COUNT]; /* the schemas that parsed, in table order */
static uint32_t ts_op_nparsed[TS_K_COUNT];
static ts_kind ts_kind_by_name[TS_K_COUNT];      /* kinds sorted by name */

/* Parses and checks every schema of the table into `a`; problems go to `d`
 * (may be NULL). With `keep`, the parsed schemas are recorded for lookups. */
static bool ts_ops_check(ts_arena *a, ts_diag *d, bool keep) {
  bool ok = true;
  for (int k = 0; k < TS_K_COUNT; k++) {
    ts_opdef *op = &ts_ops[k];
    uint32_t n = 0;
    while (op->schema_texts[n])
      n++;
    op->nschemas = n;
    const ts_schema **out = n ? ts_arena_alloc(a, n * sizeof *out) : NULL;
    if (n && !out) {
      if (d)
        ts_diag_error(d, "out of memory parsing the op table");
      return false;
    }
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
      const ts_schema *s = ts_schema_parse(a, op->schema_texts[i], d);
      if (!s) {
        ok = false;
        continue;
      }
      if (strcmp(s->name, op->name) != 0) {
        if (d)
          ts_diag_error(d, "op table: schema \"%s\" is listed under %s", op->schema_texts[i], op->name);
        ok = false;
        continue;
      }
      bool dup = false;
      for (uint32_t j = 0; j < m && !dup; j++)
        dup = strcmp(out[j]->overload, s->overload) == 0;
      if (dup) {
        if (d)
          ts_diag_error(d, "op table: %s has two overloads named \"%s\"", op->name, s->overload);
        ok = false;
        continue;
      }
      out[m++] = s;
    }
    if (keep) {
      ts_op_parsed[k] = out;
      ts_op_nparsed[k] = m;
    }
  }
  return ok;
}

static int ts_kind_cmp(const void *a, const void *b) {
  return strcmp(ts_ops[*(const ts_kind *)a].name, ts_ops[*(const ts_kind *)b].name);
}

/* Binary search of the sorted names; `qualname` need not end in NUL. */
static ts_kind ts_kind_find(const char *qualname, size_t len) {
  size_t lo = 0, hi = TS_K_COUNT;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const char *name = ts_ops[ts_kind_by_name[mid]].name;
    size_t nlen = strlen(name);
    int c = memcmp(name, qualname, nlen < len ? nlen : len);
    if (c == 0)
      c = nlen < len ? -1 : nlen > len ? 1 : 0;
    if (c == 0)
      return ts_kind_by_name[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return TS_K_OTHER;
}

static bool ts_schema_is_view(const ts_schema *s);

static ts_kind ts_op_inplace_of[TS_K_COUNT];    /* aten::add -> aten::add_ */
static ts_kind ts_op_functional_of[TS_K_COUNT]; /* aten::add_ -> aten::add */

/* Whether the type is a Generator or an optional one. */
static bool ts_type_is_generator(const ts_type *t) {
  if (t->kind == TS_TY_OPTIONAL)
    t = t->elems[0];
  return t->kind == TS_TY_GENERATOR;
}

/* The flags the schemas say (TS_OPF_VIEW ... TS_OPF_OUT, TS_OPF_RANDOM for
 * a Generator argument), and each in-place kind paired with its op. */
static void ts_ops_derive(void) {
  for (int k = 0; k < TS_K_COUNT; k++) {
    ts_op_inplace_of[k] = TS_K_OTHER;
    ts_op_functional_of[k] = TS_K_OTHER;
  }
  for (int k = 0; k < TS_K_COUNT; k++) {
    ts_opdef *op = &ts_ops[k];
    for (uint32_t i = 0; i < ts_op_nparsed[k]; i++) {
      const ts_schema *s = ts_op_parsed[k][i];
      if (ts_op_is_inplace(s))
        op->flags |= TS_OPF_INPLACE;
      if (ts_op_is_out(s))
        op->flags |= TS_OPF_OUT;
      for (uint32_t a = 0; a < s->nargs; a++)
        if (ts_type_is_generator(s->args[a].type))
          op->flags |= TS_OPF_RANDOM;
    }
  }
  /* ts_op_is_view reads TS_OPF_MAY_COPY, written in ops.def */
  for (int k = 0; k < TS_K_COUNT; k++)
    for (uint32_t i = 0; i < ts_op_nparsed[k]; i++)
      if (ts_schema_is_view(ts_op_parsed[k][i]))
        ts_ops[k].flags |= TS_OPF_VIEW;
  for (int k = 0; k < TS_K_COUNT; k++) {
    const char *name = ts_ops[k].name;
    size_t len = strlen(name);
    if (!(ts_ops[k].flags & TS_OPF_INPLACE) || len < 2 || name[len - 1] != '_')
      continue;
    ts_kind base = ts_kind_find(name, len - 1);
    if (base == TS_K_OTHER)
      continue;
    ts_op_inplace_of[base] = (ts_kind)k;
    ts_op_functional_of[k] = base;
    ts_ops[base].flags |= TS_OPF_HAS_INPLACE;
  }
}

static void ts_ops_build(void) {
  ts_arena_init(&ts_ops_arena, 0);
  ts_ops_ok = ts_ops_check(&ts_ops_arena, NULL, true);
  for (int k = 0; k < TS_K_COUNT; k++)
    ts_kind_by_name[k] = (ts_kind)k;
  qsort(ts_kind_by_name, TS_K_COUNT, sizeof *ts_kind_by_name, ts_kind_cmp);
  ts_ops_derive();
}

static void ts_ops_ensure(void) { pthread_once(&ts_ops_once, ts_ops_build); }

/* The table is built once. When it has problems, each call with a `d`
 * parses it again into a scratch arena to tell that caller what they are. */
bool ts_ops_init(ts_diag *d) {
  ts_ops_ensure();
  if (!ts_ops_ok && d) {
    ts_arena scratch;
    ts_arena_init(&scratch, 0);
    ts_ops_check(&scratch, d, false);
    ts_arena_release(&scratch);
  }
  return ts_ops_ok;
}

const ts_opdef *ts_op_get(ts_kind k) {
  if ((unsigned)k >= TS_K_COUNT)
    return NULL;
  ts_ops_ensure();
  return &ts_ops[k];
}

const ts_schema *const *ts_op_schemas(ts_kind k, uint32_t *n) {
  if ((unsigned)k >= TS_K_COUNT) {
    if (n)
      *n = 0;
    return NULL;
  }
  ts_ops_ensure();
  if (n)
    *n = ts_op_nparsed[k];
  return ts_op_parsed[k];
}

const ts_schema *ts_op_find_overload(ts_kind k, const char *overload) {
  uint32_t n;
  const ts_schema *const *s = ts_op_schemas(k, &n);
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(s[i]->overload, overload ? overload : "") == 0)
      return s[i];
  return NULL;
}

ts_kind ts_kind_lookup(const char *qualname, size_t len) {
  if (!qualname)
    return TS_K_OTHER;
  ts_ops_ensure();
  return ts_kind_find(qualname, len);
}

const char *ts_kind_name(ts_kind k) { return (unsigned)k < TS_K_COUNT ? ts_ops[k].name : NULL; }

/* ------------------------------------------------- schema properties */

/* Whether the alias sets of `a` (before its arrow) include `set`. */
static bool ts_alias_names(const ts_alias *a, const char *set) {
  for (uint32_t i = 0; a && i < a->nsets; i++)
    if (strcmp(a->sets[i], set) == 0)
      return true;
  return false;
}

bool ts_op_is_inplace(const ts_schema *s) {
  if (!s || s->nargs == 0 || s->args[0].kwarg_only)
    return false;
  const ts_alias *self = s->args[0].alias;
  if (!self || !self->is_write)
    return false;
  for (uint32_t r = 0; r < s->nrets; r++) {
    const ts_alias *a = s->rets[r].alias;
    for (uint32_t i = 0; a && a->is_write && i < a->nsets; i++)
      if (ts_alias_names(self, a->sets[i]))
        return true;
  }
  return false;
}

bool ts_op_is_out(const ts_schema *s) {
  for (uint32_t i = 0; s && i < s->nargs; i++)
    if (s->args[i].kwarg_only && s->args[i].alias && s->args[i].alias->is_write)
      return true;
  return false;
}

/* Whether every set of return alias `a` is an unwritten input's. */
static bool ts_alias_is_input_view(const ts_schema *s, const ts_alias *a) {
  if (!a || a->is_write || a->nsets == 0)
    return false;
  for (uint32_t i = 0; i < a->nsets; i++) {
    bool found = false;
    for (uint32_t k = 0; k < s->nargs && !found; k++) {
      const ts_alias *in = s->args[k].alias;
      found = in && !in->is_write && ts_alias_names(in, a->sets[i]);
    }
    if (!found)
      return false;
  }
  return true;
}

/* ts_op_is_view without initialising the table (ts_ops_derive runs while
 * it is built). */
static bool ts_schema_is_view(const ts_schema *s) {
  if (!s || s->nrets == 0)
    return false;
  for (uint32_t r = 0; r < s->nrets; r++) {
    const ts_arg *ret = &s->rets[r];
    const ts_type *t = ret->type;
    const ts_alias *a = ret->alias;
    if (t->kind == TS_TY_LIST && t->elems[0]->kind == TS_TY_TENSOR) /* Tensor(a)[] */
      a = a ? a->contained : NULL;
    else if (t->kind != TS_TY_TENSOR)
      return false;
    if (!ts_alias_is_input_view(s, a))
      return false;
  }
  ts_kind k = ts_kind_find(s->name, strlen(s->name));
  return k != TS_K_OTHER && !(ts_ops[k].flags & TS_OPF_MAY_COPY);
}

bool ts_op_is_view(const ts_schema *s) {
  ts_ops_ensure();
  return ts_schema_is_view(s);
}

ts_kind ts_op_inplace_kind(ts_kind k) {
  if ((unsigned)k >= TS_K_COUNT)
    return TS_K_OTHER;
  ts_ops_ensure();
  return ts_op_inplace_of[k];
}

ts_kind ts_op_functional_kind(ts_kind inplace) {
  if ((unsigned)inplace >= TS_K_COUNT)
    return TS_K_OTHER;
  ts_ops_ensure();
  return ts_op_functional_of[inplace];
}

/* ----------------------------------------------------- pointwise rows */

static const ts_pw_def ts_pw_rows[TS_PW_COUNT] = {
#define TS_OP(...)
#define TS_PW(ns, name, ip, layout, nin, rule, kname, formula, schemas, ipschemas)                                 \
  {TS_PW_##name, TS_K_##ns##_##name, #name, TS_PWL_##layout, nin, rule, kname},
#define TS_PWF(name, layout, nin, rule, kname, formula) {TS_PW_##name, TS_K_OTHER, #name, TS_PWL_##layout, nin, rule, kname},
#include "ops.def"
#undef TS_OP
#undef TS_PW
#undef TS_PWF
};

/* The row of each kind a TS_PW row declares, plus one: 0 for none. */
static const uint8_t ts_pw_by_kind[TS_K_COUNT] = {
#define TS_OP(...)
#define TS_PW(ns, name, ...) [TS_K_##ns##_##name] = TS_PW_##name + 1,
#define TS_PWF(...)
#include "ops.def"
#undef TS_OP
#undef TS_PW
#undef TS_PWF
};

_Static_assert(TS_PW_COUNT < 255, "ts_pw_by_kind holds a row number in a byte");

const ts_pw_def *ts_pw_get(ts_pw_op op) { return (unsigned)op < TS_PW_COUNT ? &ts_pw_rows[op] : NULL; }

const ts_pw_def *ts_pw_of_kind(ts_kind k) {
  if ((unsigned)k >= TS_K_COUNT)
    return NULL;
  if (ts_pw_by_kind[k])
    return &ts_pw_rows[ts_pw_by_kind[k] - 1];
  ts_kind base = ts_op_functional_kind(k);
  return base != TS_K_OTHER && ts_pw_by_kind[base] ? &ts_pw_rows[ts_pw_by_kind[base] - 1] : NULL;
}

/* Whether argument i of s is a Scalar (a number, not a tensor). */
static bool ts_pw_arg_scalar(const ts_schema *s, uint32_t i) {
  return i < s->nargs && s->args[i].type->kind == TS_TY_NUMBER;
}

bool ts_pw_out_is_autogen(const ts_pw_def *d, const ts_schema *s) {
  if (!d || !ts_op_is_out(s))
    return false;
  return (d->rule & TS_PWR_AUTOGEN_OUT) || ((d->rule & TS_PWR_AUTOGEN_SCALAR_OTHER) && ts_pw_arg_scalar(s, 1)) ||
         ((d->rule & TS_PWR_AUTOGEN_SCALAR_SELF) && ts_pw_arg_scalar(s, 0));
}

/* Whether a schema argument of type `p` takes a value of type `s`: PyTorch's
 * subtyping, with type variables and Any taking anything, and the enum-like
 * types (ScalarType, Layout, MemoryFormat) taking the ints they are at run
 * time. Containers are matched element-wise, so "t[]" takes "int[]". */
static bool ts_schema_accepts(const ts_type *p, const ts_type *s) {
  if (!p || !s)
    return false;
  switch (p->kind) {
  case TS_TY_VAR:
  case TS_TY_ANY:
    return true;
  case TS_TY_SCALARTYPE:
  case TS_TY_LAYOUT:
  case TS_TY_MEMORYFORMAT:
  case TS_TY_STORAGE:
    return s->kind == p->kind || s->kind == TS_TY_INT;
  case TS_TY_OPTIONAL:
    if (s->kind == TS_TY_NONE)
      return true;
    if (s->kind == TS_TY_OPTIONAL)
      return ts_schema_accepts(p->elems[0], s->elems[0]);
    return ts_schema_accepts(p->elems[0], s);
  case TS_TY_LIST:
  case TS_TY_FUTURE:
  case TS_TY_RREF:
    return s->kind == p->kind && ts_schema_accepts(p->elems[0], s->elems[0]);
  case TS_TY_DICT:
    return s->kind == TS_TY_DICT && ts_schema_accepts(p->elems[0], s->elems[0]) &&
           ts_schema_accepts(p->elems[1], s->elems[1]);
  case TS_TY_TUPLE:
    if (s->kind != TS_TY_TUPLE || s->n != p->n)
      return false;
    for (uint32_t i = 0; i < p->n; i++)
      if (!ts_schema_accepts(p->elems[i], s->elems[i]))
        return false;
    return true;
  case TS_TY_UNION:
    if (s->kind == TS_TY_UNION) {
      for (uint32_t i = 0; i < s->n; i++)
        if (!ts_schema_accepts(p, s->elems[i]))
          return false;
      return true;
    }
    for (uint32_t i = 0; i < p->n; i++)
      if (ts_schema_accepts(p->elems[i], s))
        return true;
    return false;
  default:
    return ts_type_is_subtype(s, p);
  }
}

/* Does `s` fit node `n`: every input taken by its argument, the arguments
 * past the inputs all defaulted (or "..." taking extra inputs), and as many
 * outputs as returns (at least as many after "-> ...")? */
static bool ts_schema_fits(const ts_schema *s, const ts_node *n) {
  if (n->ninputs > s->nargs && !s->vararg)
    return false;
  for (uint32_t i = n->ninputs; i < s->nargs; i++)
    if (!s->args[i].has_default)
      return false;
  if (s->varret ? n->noutputs < s->nrets : n->noutputs != s->nrets)
    return false;
  for (uint32_t i = 0; i < n->ninputs && i < s->nargs; i++)
    if (!ts_schema_accepts(s->args[i].type, n->inputs[i]->type))
      return false;
  return true;
}

/* The one of count schemas s that fits node n, as ts_node_schema picks. */
static const ts_schema *ts_schemas_pick(const ts_schema *const *s, uint32_t count, const ts_node *n) {
  /* Graphs carry every argument, defaults included, so an overload taking
   * exactly the node's inputs wins over one whose extra arguments default
   * (aten::sum(%x, %none) is sum(self, dtype), not sum.dim_IntList). */
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t i = 0; i < count; i++)
      if ((pass == 1 || s[i]->vararg || s[i]->nargs == n->ninputs) && ts_schema_fits(s[i], n))
        return s[i];
  return NULL;
}

const ts_schema *ts_node_schema(const ts_node *n) {
  if (!n || (unsigned)n->kind >= TS_K_COUNT)
    return NULL;
  uint32_t count;
  const ts_schema *const *s = ts_op_schemas(n->kind, &count);
  return ts_schemas_pick(s, count, n);
}

const ts_schema *ts_node_schema_pytorch(const ts_node *n) {
  if (!n || n->kind != TS_K_OTHER || !n->kind_name)
    return NULL;
  uint32_t count;
  const ts_schema *const *s = ts_op_pytorch_schemas(n->kind_name, strlen(n->kind_name), &count);
  return s ? ts_schemas_pick(s, count, n) : NULL;
}
