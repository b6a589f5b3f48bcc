/* ir/variant.c: the out-of-place overload an in-place or out= overload is a
 * form of, read from the schemas' alias annotations alone (as PyTorch's
 * codegen pairs `foo_` and `foo.out` with `foo` in native_functions.yaml):
 *
 *   aten::foo_.X(Tensor(a!) self, ARGS) -> Tensor(a!)       in-place: the
 *       kind named without the trailing '_', the overload taking the same
 *       argument types (foo.X first, else the only one that fits:
 *       pow_.Scalar is pow.Tensor_Scalar);
 *   aten::foo.X_out(ARGS, *, Tensor(a!) o1, Tensor(b!) o2)
 *       -> (Tensor(a!), Tensor(b!))                          out=: the same
 *       kind's overload taking ARGS and returning as many tensors (the one
 *       named X, or without "_out", where two would fit).
 *
 * Only an overload that writes nothing itself and returns tensors is a
 * base. The runtime binds a generic kernel from this (runtime/adapt.c), the
 * shape rules a generic rule (passes/shape_rules.c). */
#include "ir.h"

#include <string.h>

/* The writing alias set of an argument or return ("a" of Tensor(a!)), or
 * NULL when it writes nothing. */
static const char *ts_var_write_set(const ts_arg *a) {
  if (!a->alias || !a->alias->is_write || a->alias->nsets != 1)
    return NULL;
  return a->alias->sets[0];
}

static bool ts_var_writes(const ts_schema *s) {
  for (uint32_t i = 0; i < s->nargs; i++)
    if (s->args[i].alias && (s->args[i].alias->is_write ||
                             (s->args[i].alias->contained && s->args[i].alias->contained->is_write)))
      return true;
  return false;
}

static bool ts_var_is_tensor(const ts_type *t) { return t->kind == TS_TY_TENSOR; }

/* Whether b takes the types of a's first n arguments, writes nothing and
 * returns nrets tensors. */
static bool ts_var_base_fits(const ts_schema *b, const ts_schema *a, uint32_t n, uint32_t nrets) {
  if (b == a || b->vararg || b->varret || b->nargs != n || b->nrets != nrets || ts_var_writes(b))
    return false;
  for (uint32_t i = 0; i < n; i++)
    if (!ts_type_equal(b->args[i].type, a->args[i].type))
      return false;
  for (uint32_t r = 0; r < nrets; r++)
    if (!ts_var_is_tensor(b->rets[r].type))
      return false;
  return true;
}

/* The base among kind k's overloads: the one named `prefer` if it fits,
 * else the only one that does. */
static const ts_schema *ts_var_find(ts_kind k, const char *prefer, size_t prefer_len, const ts_schema *s,
                                    uint32_t nargs, uint32_t nrets) {
  uint32_t n = 0;
  const ts_schema *const *all = ts_op_schemas(k, &n);
  const ts_schema *only = NULL;
  uint32_t fits = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (!ts_var_base_fits(all[i], s, nargs, nrets))
      continue;
    if (prefer && strlen(all[i]->overload) == prefer_len && strncmp(all[i]->overload, prefer, prefer_len) == 0)
      return all[i];
    only = all[i];
    fits++;
  }
  return fits == 1 ? only : NULL;
}

static ts_variant ts_var_inplace(const ts_schema *s, size_t namelen) {
  ts_variant v = {TS_VARIANT_NONE, NULL, 0};
  const char *set = ts_var_write_set(&s->args[0]);
  if (!set || s->nrets != 1 || !ts_var_is_tensor(s->args[0].type))
    return v;
  const char *rset = ts_var_write_set(&s->rets[0]);
  if (!rset || strcmp(rset, set) != 0)
    return v;
  for (uint32_t i = 1; i < s->nargs; i++)
    if (s->args[i].alias && (s->args[i].alias->is_write ||
                             (s->args[i].alias->contained && s->args[i].alias->contained->is_write)))
      return v;
  ts_kind k = ts_kind_lookup(s->name, namelen - 1);
  if (k == TS_K_OTHER)
    return v;
  const ts_schema *b = ts_var_find(k, s->overload, strlen(s->overload), s, s->nargs, 1);
  if (!b)
    return v;
  v.base = b;
  v.nouts = 1;
  /* foo(Tensor(a) self, ...) -> Tensor(a): foo returns a view of self */
  const ts_alias *sa = b->args[0].alias, *ra = b->rets[0].alias;
  bool view = sa && ra && !sa->is_write && !ra->is_write && sa->nsets == 1 && ra->nsets == 1 &&
              strcmp(sa->sets[0], ra->sets[0]) == 0;
  v.kind = view ? TS_VARIANT_INPLACE_VIEW : TS_VARIANT_INPLACE;
  return v;
}

static ts_variant ts_var_out(const ts_schema *s) {
  ts_variant v = {TS_VARIANT_NONE, NULL, 0};
  uint32_t nouts = s->nrets;
  if (nouts == 0 || nouts > s->nargs || nouts > TS_VARIANT_MAX_OUTS)
    return v;
  uint32_t first = s->nargs - nouts;
  for (uint32_t r = 0; r < nouts; r++) {
    const ts_arg *o = &s->args[first + r];
    const char *set = ts_var_write_set(o);
    const char *rset = ts_var_write_set(&s->rets[r]);
    if (!set || !rset || strcmp(set, rset) != 0 || !o->kwarg_only || !ts_var_is_tensor(o->type) ||
        o->alias->contained)
      return v;
  }
  for (uint32_t i = 0; i < first; i++)
    if (s->args[i].alias && (s->args[i].alias->is_write ||
                             (s->args[i].alias->contained && s->args[i].alias->contained->is_write)))
      return v;
  ts_kind k = ts_kind_lookup(s->name, strlen(s->name));
  if (k == TS_K_OTHER)
    return v;
  /* "out" pairs with "", "Tensor_out" with "Tensor" */
  const char *ov = s->overload;
  size_t len = strlen(ov);
  if (len >= 4 && strcmp(ov + len - 4, "_out") == 0)
    len -= 4;
  else if (strcmp(ov, "out") == 0)
    len = 0;
  const ts_schema *b = ts_var_find(k, ov, len, s, first, nouts);
  if (!b)
    return v;
  v.kind = TS_VARIANT_OUT;
  v.base = b;
  v.nouts = nouts;
  return v;
}

ts_variant ts_schema_variant(const ts_schema *s) {
  ts_variant none = {TS_VARIANT_NONE, NULL, 0};
  if (!s || s->vararg || s->varret || s->nargs == 0)
    return none;
  size_t namelen = strlen(s->name);
  /* foo_ but not __iand__ */
  if (namelen > 2 && s->name[namelen - 1] == '_' && s->name[namelen - 2] != '_') {
    ts_variant v = ts_var_inplace(s, namelen);
    if (v.kind != TS_VARIANT_NONE)
      return v;
  }
  return ts_var_out(s);
}
