/* passes/freeze.c: torch.jit.freeze's attribute propagation
 * (passes/freeze_module.cpp, AttributePropagator: recordMutableAttrs,
 * findConstantAttr, propagateAttributes) on one inlined graph.
 *
 * Every prim::GetAttr whose input is a chain of GetAttrs from the graph's
 * first input (self) is replaced by a constant holding the attribute's
 * value in the module object: tensors as tensor constants pointing at the
 * module's storages (ts_pass_const_insert_iv with borrow_tensors), scalars,
 * strings, devices, None and lists of them as constants, tuples as a
 * prim::TupleConstruct of constants. Submodule objects are not constants:
 * their GetAttrs are followed to the attributes read from them, and are
 * removed once nothing uses them. The constants are inserted at the start
 * of the graph, one per (object, attribute), and named as PyTorch names
 * them: "self." + the GetAttr path + the attribute ("self.layer1.0.conv1.
 * weight"). The self input stays, unused.
 *
 * Not folded, as in PyTorch:
 *   - attributes some prim::SetAttr writes (a SetAttr whose target object
 *     is not known blocks that attribute name on every object of its class);
 *   - mutable attributes (tensors, lists, dicts) that an op may write in
 *     place: the GetAttr's value, or a value that may alias it (views, in-
 *     place results, containers holding it, If/Loop outputs), reaches an
 *     argument its schema marks "!", or any call or op without a schema;
 *     and, like PyTorch's overlap test, every other attribute sharing a
 *     storage or container with such a value (tied weights);
 *   - values that cannot be a prim::Constant here (dicts, objects that are
 *     not reached through GetAttr chains, tuples holding such values).
 *
 * Where this differs from PyTorch:
 *   - PyTorch freezes a module after eval(); freeze does not call eval():
 *     `training` folds to the value stored in the model, like every other
 *     attribute, and parameters fold whatever that value is.
 *   - A submodule that is used other than by GetAttr/SetAttr (passed to a
 *     prim::CallMethod left on an interface-typed submodule, returned,
 *     stored in a container or another attribute) keeps every attribute of
 *     it, and of the objects reachable from it, unfolded: the callee could
 *     change any of them. The interface call itself is left as it is: this
 *     pass resolves nothing (PyTorch's freezeInterfaces option would inline
 *     it).
 *   - Objects that are not modules are followed like submodules (the
 *     runtime's classes do not say which are modules); PyTorch would insert
 *     them as object constants.
 *   - prim::fork subgraphs are not visited (the IR has no fork yet). */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

/* Bounds on values read from a (possibly hostile) model: nesting, and
 * the elements one attribute's value may have visited or made (a value
 * sharing sub-values could otherwise cost exponential time). Beyond them
 * an attribute counts as written, or as not a constant. */
enum { FZ_MAX_DEPTH = 64, FZ_BUDGET = 1 << 16 };

typedef struct fz_pair {
  const ts_type *type; /* a class */
  const char *name;
} fz_pair;

typedef struct fz_vec {
  void *items;
  size_t n, cap;
} fz_vec;

/* A hash set of (pointer, name) keys (name NULL for plain pointers), each
 * with a value. */
typedef struct fz_slot {
  const void *key;
  const char *name;
  ts_value *v;
} fz_slot;

typedef struct fz_set {
  fz_slot *slots;
  size_t cap, n; /* cap a power of two */
} fz_set;

typedef struct fz {
  ts_graph *g;
  ts_diag *d;
  ts_rt_object *root;
  ts_value *self;
  ts_node *anchor; /* constants go before it: the graph's first node */
  bool oom;
  bool changed; /* the SetAttr fixpoint found something new */
  fz_set set_objs;  /* (object, name) some SetAttr writes */
  fz_vec set_types; /* fz_pair: (class type, name) blocked on every object of the type */
  fz_set tainted;   /* objects that escaped, or are reachable from one that did */
  fz_set written;   /* storages and containers that may be written */
  bool written_all; /* a written value was too big to record: every mutable value may be */
  fz_set memo;      /* (object, name) -> its constant */
  fz_vec stack;     /* scratch */
  long budget;      /* what one attribute's value may still cost */
  /* value id -> resolved object (after the SetAttr fixpoint) */
  ts_rt_object **obj_of;
  uint8_t *obj_done;
  uint32_t nvalues;
  /* write analysis: value id -> stamp of the walk that reached it */
  uint32_t *seen;
  uint32_t stamp;
  fz_vec work; /* ts_value * */
} fz;

/* Appends one element of `size` bytes; false (and fz->oom) on failure. */
static bool fz_push(fz *f, fz_vec *v, const void *elem, size_t size) {
  if (v->n == v->cap) {
    size_t nc = v->cap ? v->cap * 2 : 16;
    void *p = nc < SIZE_MAX / size ? realloc(v->items, nc * size) : NULL;
    if (!p) {
      f->oom = true;
      return false;
    }
    v->items = p;
    v->cap = nc;
  }
  memcpy((char *)v->items + v->n * size, elem, size);
  v->n++;
  return true;
}

/* Whether attribute `name` is blocked on every object of class `type`. */
static bool fz_type_blocked(const fz *f, const ts_type *type, const char *name) {
  const fz_pair *p = f->set_types.items;
  for (size_t i = 0; i < f->set_types.n; i++)
    if (ts_type_equal(p[i].type, type) && strcmp(p[i].name, name) == 0)
      return true;
  return false;
}

static size_t fz_hash(const void *key, const char *name) {
  uint64_t x = (uint64_t)(uintptr_t)key;
  for (const char *c = name; c && *c; c++)
    x = (x ^ (unsigned char)*c) * 0x100000001b3ull;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x;
}

static bool fz_same(const fz_slot *e, const void *key, const char *name) {
  return e->key == key && (e->name == name || (e->name && name && strcmp(e->name, name) == 0));
}

/* The slot of (key, name), or NULL. */
static fz_slot *fz_find(const fz_set *s, const void *key, const char *name) {
  if (!s->cap)
    return NULL;
  for (size_t i = fz_hash(key, name) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
    if (!s->slots[i].key)
      return NULL;
    if (fz_same(&s->slots[i], key, name))
      return &s->slots[i];
  }
}

static bool fz_has(const fz_set *s, const void *key, const char *name) { return fz_find(s, key, name) != NULL; }

/* Adds (key, name) -> v if absent; false (and f->oom) on failure. */
static bool fz_add(fz *f, fz_set *s, const void *key, const char *name, ts_value *v) {
  if (fz_has(s, key, name))
    return true;
  if ((s->n + 1) * 2 > s->cap) {
    size_t nc = s->cap ? s->cap * 2 : 64;
    fz_slot *ns = nc < SIZE_MAX / sizeof *ns ? calloc(nc, sizeof *ns) : NULL;
    if (!ns) {
      f->oom = true;
      return false;
    }
    for (size_t i = 0; i < s->cap; i++) {
      if (!s->slots[i].key)
        continue;
      size_t j = fz_hash(s->slots[i].key, s->slots[i].name) & (nc - 1);
      while (ns[j].key)
        j = (j + 1) & (nc - 1);
      ns[j] = s->slots[i];
    }
    free(s->slots);
    s->slots = ns;
    s->cap = nc;
  }
  size_t i = fz_hash(key, name) & (s->cap - 1);
  while (s->slots[i].key)
    i = (i + 1) & (s->cap - 1);
  s->slots[i] = (fz_slot){key, name, v};
  s->n++;
  return true;
}

static const char *fz_attr_name(const ts_node *n) {
  const ts_attr *a = ts_node_attr(n, "name");
  return a && a->kind == TS_ATTR_STR && !memchr(a->u.s, 0, a->len) ? a->u.s : NULL;
}

/* ------------------------------------------------------ GetAttr chains */

/* The object `v` is when it is self or a chain of GetAttrs from self, each
 * reading a submodule no SetAttr writes; NULL otherwise. When `path` is
 * given, the GetAttr names from self are appended to it ("a.b."). */
static ts_rt_object *fz_resolve_walk(fz *f, const ts_value *v, ts_buf *path) {
  f->stack.n = 0;
  while (v != f->self) {
    const ts_node *n = v->node;
    if (!ts_node_is(n, TS_K_prim_GetAttr) || n->ninputs != 1 || !fz_attr_name(n))
      return NULL;
    if (!fz_push(f, &f->stack, &n, sizeof n))
      return NULL;
    v = n->inputs[0];
  }
  ts_rt_object *o = f->root;
  const ts_node *const *chain = f->stack.items;
  for (size_t k = f->stack.n; k-- > 0;) {
    const char *name = fz_attr_name(chain[k]);
    int32_t idx = ts_rt_class_attr_index(o->cls, name);
    if (idx < 0 || (uint32_t)idx >= o->n || fz_has(&f->set_objs, o, name) ||
        !ts_iv_is(o->attrs[idx], TS_IV_OBJECT))
      return NULL;
    o = o->attrs[idx].u.obj;
    if (path) {
      ts_buf_puts(path, name);
      ts_buf_putc(path, '.');
    }
  }
  return o;
}

/* fz_resolve_walk, remembered per value (valid once the SetAttrs are all
 * known). */
static ts_rt_object *fz_resolve(fz *f, const ts_value *v) {
  if (v->id >= f->nvalues)
    return fz_resolve_walk(f, v, NULL);
  if (!f->obj_done[v->id]) {
    f->obj_of[v->id] = fz_resolve_walk(f, v, NULL);
    f->obj_done[v->id] = 1;
  }
  return f->obj_of[v->id];
}

/* --------------------------------------------------------- the analysis */

typedef bool (*fz_node_fn)(fz *f, ts_node *n);

/* Calls fn on every node, nested blocks' nodes and their returns included. */
static bool fz_each_node(fz *f, ts_block *b, fz_node_fn fn) {
  for (ts_node *n = ts_block_first(b);; n = n->next) {
    if (!fn(f, n))
      return false;
    if (n == b->ret)
      return true;
    for (uint32_t i = 0; i < n->nblocks; i++)
      if (!fz_each_node(f, n->blocks[i], fn))
        return false;
  }
}

/* One round of the SetAttr fixpoint: records the (object, name) a SetAttr
 * writes, or (class, name) when its target is not a known object. */
static bool fz_note_setattr(fz *f, ts_node *n) {
  if (!ts_node_is(n, TS_K_prim_SetAttr) || n->ninputs < 1)
    return true;
  const char *name = fz_attr_name(n);
  if (!name)
    return true;
  ts_rt_object *o = fz_resolve_walk(f, n->inputs[0], NULL);
  if (f->oom)
    return false;
  if (o && !fz_has(&f->set_objs, o, name)) {
    f->changed = true;
    return fz_add(f, &f->set_objs, o, name, NULL);
  }
  if (!o && !fz_type_blocked(f, n->inputs[0]->type, name)) {
    fz_pair p = {n->inputs[0]->type, name};
    f->changed = true;
    return fz_push(f, &f->set_types, &p, sizeof p);
  }
  return true;
}

/* Marks `o` and every object reachable from its attributes as escaped. */
static bool fz_taint(fz *f, ts_rt_object *o) {
  size_t base = f->stack.n;
  if (fz_has(&f->tainted, o, NULL))
    return true;
  if (!fz_add(f, &f->tainted, o, NULL, NULL) || !fz_push(f, &f->stack, &o, sizeof o))
    return false;
  while (f->stack.n > base) {
    ts_rt_object *x = ((ts_rt_object **)f->stack.items)[--f->stack.n];
    for (uint32_t i = 0; i < x->n; i++) {
      if (!ts_iv_is(x->attrs[i], TS_IV_OBJECT))
        continue;
      ts_rt_object *c = x->attrs[i].u.obj;
      if (fz_has(&f->tainted, c, NULL))
        continue;
      if (!fz_add(f, &f->tainted, c, NULL, NULL) || !fz_push(f, &f->stack, &c, sizeof c))
        return false;
    }
  }
  return true;
}

/* Uses of a known object other than reading or setting its attributes
 * let code this pass cannot see change it. */
static bool fz_note_escapes(fz *f, ts_node *n) {
  for (uint32_t i = 0; i < n->ninputs; i++) {
    ts_value *v = n->inputs[i];
    if (v->type->kind != TS_TY_CLASS)
      continue;
    if (i == 0 && (ts_node_is(n, TS_K_prim_GetAttr) || ts_node_is(n, TS_K_prim_SetAttr)))
      continue;
    /* identity tests and isinstance only look at the object */
    if (ts_node_is(n, TS_K_prim_isinstance) || strcmp(n->kind_name, "aten::__is__") == 0 ||
        strcmp(n->kind_name, "aten::__isnot__") == 0)
      continue;
    f->stack.n = 0;
    ts_rt_object *o = fz_resolve(f, v);
    if (f->oom || (o && !fz_taint(f, o)))
      return false;
  }
  return true;
}

/* Adds the identities (storages, containers) inside `v` to f->written
 * (f->budget set by the caller). */
static bool fz_add_written(fz *f, ts_iv v, int depth) {
  if (depth > FZ_MAX_DEPTH || --f->budget < 0) {
    f->written_all = true;
    return true;
  }
  const void *id = NULL;
  switch ((ts_iv_tag)v.tag) {
  case TS_IV_TENSOR: id = v.u.t->storage; break;
  case TS_IV_LIST:
  case TS_IV_DICT:
  case TS_IV_OBJECT: id = v.u.o; break;
  case TS_IV_TUPLE: break;
  default: return true;
  }
  if (id) {
    if (fz_has(&f->written, id, NULL))
      return true;
    if (!fz_add(f, &f->written, id, NULL, NULL))
      return false;
  }
  switch ((ts_iv_tag)v.tag) {
  case TS_IV_LIST:
    for (uint32_t i = 0; i < v.u.l->n; i++)
      if (!fz_add_written(f, v.u.l->items[i], depth + 1))
        return false;
    break;
  case TS_IV_TUPLE:
    for (uint32_t i = 0; i < v.u.tup->n; i++)
      if (!fz_add_written(f, v.u.tup->items[i], depth + 1))
        return false;
    break;
  case TS_IV_DICT:
    for (uint32_t i = 0; i < v.u.dict->n; i++)
      if (!fz_add_written(f, v.u.dict->keys[i], depth + 1) || !fz_add_written(f, v.u.dict->values[i], depth + 1))
        return false;
    break;
  case TS_IV_OBJECT:
    for (uint32_t i = 0; i < v.u.obj->n; i++)
      if (!fz_add_written(f, v.u.obj->attrs[i], depth + 1))
        return false;
    break;
  default: break;
  }
  return true;
}

/* IValue::overlaps: whether `v` or anything inside it is, or shares a
 * storage with, something in f->written (f->budget set by the caller). */
static bool fz_overlaps(fz *f, ts_iv v, int depth) {
  if (depth > FZ_MAX_DEPTH || --f->budget < 0 || (f->written_all && ts_iv_is_ref(v) && !ts_iv_is(v, TS_IV_STR)))
    return true;
  switch ((ts_iv_tag)v.tag) {
  case TS_IV_TENSOR: return fz_has(&f->written, v.u.t->storage, NULL);
  case TS_IV_LIST:
    if (fz_has(&f->written, v.u.o, NULL))
      return true;
    for (uint32_t i = 0; i < v.u.l->n; i++)
      if (fz_overlaps(f, v.u.l->items[i], depth + 1))
        return true;
    return false;
  case TS_IV_TUPLE:
    for (uint32_t i = 0; i < v.u.tup->n; i++)
      if (fz_overlaps(f, v.u.tup->items[i], depth + 1))
        return true;
    return false;
  case TS_IV_DICT:
    if (fz_has(&f->written, v.u.o, NULL))
      return true;
    for (uint32_t i = 0; i < v.u.dict->n; i++)
      if (fz_overlaps(f, v.u.dict->keys[i], depth + 1) || fz_overlaps(f, v.u.dict->values[i], depth + 1))
        return true;
    return false;
  case TS_IV_OBJECT: return fz_has(&f->written, v.u.o, NULL);
  default: return false;
  }
}

static bool fz_follow(fz *f, ts_value *v) {
  if (v->id < f->nvalues && f->seen[v->id] == f->stamp)
    return true;
  if (v->id < f->nvalues)
    f->seen[v->id] = f->stamp;
  return fz_push(f, &f->work, &v, sizeof v);
}

/* Tensor, Tensor?, Tensor[], Tensor?[] */
static bool fz_type_is_tensors(const ts_type *t) {
  if (t->kind == TS_TY_LIST)
    t = t->elems[0];
  if (t->kind == TS_TY_OPTIONAL)
    t = t->elems[0];
  return t->kind == TS_TY_TENSOR;
}

/* The schema argument a node input stands for, or NULL (varargs). */
static const ts_arg *fz_schema_arg(const ts_schema *s, uint32_t i) { return i < s->nargs ? &s->args[i] : NULL; }

/* Whether any overload of n's kind that could take its inputs marks input
 * i "!" (used when no overload matches the input types exactly). */
static bool fz_any_overload_writes(const ts_node *n, uint32_t i) {
  uint32_t count = 0;
  const ts_schema *const *all = ts_op_schemas(n->kind, &count);
  for (uint32_t k = 0; k < count; k++) {
    const ts_schema *c = all[k];
    if (n->ninputs > c->nargs && !c->vararg)
      continue;
    const ts_arg *a = fz_schema_arg(c, i);
    if (a && a->alias && a->alias->is_write)
      return true;
  }
  return false;
}

/* The use (n, i) of a value that may alias the attribute: true in *written
 * when n may write it; values that may alias it afterwards are queued. */
static bool fz_visit_use(fz *f, ts_node *n, uint32_t i, bool *written) {
  ts_block *ob = n->owner;
  if (ts_node_is(n, TS_K_prim_Return)) {
    ts_node *owner = ob ? ob->owner_node : NULL;
    if (!owner)
      return true; /* a graph output: the caller may write it, as in PyTorch we do not care */
    if (ts_node_is(owner, TS_K_prim_If) && i < owner->noutputs)
      return fz_follow(f, owner->outputs[i]);
    if (ts_node_is(owner, TS_K_prim_Loop) && i >= 1) {
      if (i - 1 < owner->noutputs && !fz_follow(f, owner->outputs[i - 1]))
        return false;
      if (i < ts_block_ninputs(ob))
        return fz_follow(f, ts_block_input(ob, i));
      return true;
    }
    *written = true; /* some other block-holding node: unknown */
    return true;
  }
  if (ts_node_is(n, TS_K_prim_Loop)) {
    if (i >= 2 && i - 2 < n->noutputs && !fz_follow(f, n->outputs[i - 2]))
      return false;
    if (i >= 2 && n->nblocks == 1 && i - 1 < ts_block_ninputs(n->blocks[0]))
      return fz_follow(f, ts_block_input(n->blocks[0], i - 1));
    return true;
  }
  if (ts_node_is(n, TS_K_prim_If))
    return true;
  const ts_opdef *op = n->op;
  /* an op PyTorch registers that the op table lacks (ir/ops_pytorch.def)
   * has its schema: freezing reads it as PyTorch's does, so that a
   * parameter a dead branch passes to one still freezes */
  const ts_schema *pt = n->kind == TS_K_OTHER ? ts_node_schema_pytorch(n) : NULL;
  if ((n->kind == TS_K_OTHER && !pt) || (!op && !pt) || ts_node_is(n, TS_K_prim_CallMethod) || ts_node_is(n, TS_K_prim_CallFunction) ||
      ts_node_is(n, TS_K_prim_SetAttr) || ts_node_is(n, TS_K_prim_fork) || n->nblocks) {
    *written = true; /* unknown effects (PyTorch's analyzeConservative) */
    return true;
  }
  const ts_schema *s = pt ? pt : ts_node_schema(n);
  bool fresh = false;
  if (s) {
    const ts_arg *a = fz_schema_arg(s, i);
    if (a && a->alias && a->alias->is_write) {
      *written = true;
      return true;
    }
    /* tensors into an unannotated argument of an op whose outputs are
     * unannotated tensors or immutable: the outputs are new (generic
     * arguments, `t`, may come back as they are: unchecked_cast) */
    fresh = a && !a->alias && fz_type_is_tensors(a->type);
    for (uint32_t k = 0; k < s->nrets; k++)
      fresh &= !s->rets[k].alias;
    for (uint32_t k = 0; k < n->noutputs; k++)
      fresh &= !ts_pass_type_mutable(n->outputs[k]->type) || n->outputs[k]->type->kind == TS_TY_TENSOR;
  } else if (op->nschemas) {
    if (fz_any_overload_writes(n, i)) {
      *written = true;
      return true;
    }
  }
  if (fresh)
    return true;
  /* views, containers, casts, ops without a schema (ListConstruct,
   * TupleUnpack, ...): the outputs may alias the input */
  for (uint32_t k = 0; k < n->noutputs; k++)
    if (ts_pass_type_mutable(n->outputs[k]->type) && !fz_follow(f, n->outputs[k]))
      return false;
  return true;
}

/* AliasDb::hasOutputWriters for a GetAttr's output, without an alias db:
 * whether anything may write the value it reads. */
static bool fz_may_be_written(fz *f, ts_value *v, bool *written) {
  *written = false;
  if (++f->stamp == 0) {
    memset(f->seen, 0, f->nvalues * sizeof *f->seen);
    f->stamp = 1;
  }
  f->work.n = 0;
  if (!fz_follow(f, v))
    return false;
  while (f->work.n && !*written) {
    ts_value *x = ((ts_value **)f->work.items)[--f->work.n];
    for (uint32_t u = 0; u < x->nuses && !*written; u++)
      if (!fz_visit_use(f, x->uses[u].user, x->uses[u].index, written))
        return false;
  }
  return true;
}

/* recordMutableAttrs: SetAttr'd attributes' old values and attributes
 * written in place go to f->written; a write through a GetAttr on an
 * unknown object blocks that attribute name for the object's class. */
static bool fz_note_writes(fz *f, ts_node *n) {
  bool get = ts_node_is(n, TS_K_prim_GetAttr), set = ts_node_is(n, TS_K_prim_SetAttr);
  if ((!get && !set) || n->ninputs < 1)
    return true;
  const char *name = fz_attr_name(n);
  if (!name)
    return true;
  ts_rt_object *o = fz_resolve(f, n->inputs[0]);
  if (f->oom)
    return false;
  int32_t idx = o ? ts_rt_class_attr_index(o->cls, name) : -1;
  ts_iv stored = idx >= 0 && (uint32_t)idx < o->n ? o->attrs[idx] : ts_iv_none();
  f->budget = FZ_BUDGET;
  if (set)
    return fz_add_written(f, stored, 0);
  if (n->noutputs != 1 || !ts_pass_type_mutable(n->outputs[0]->type) || ts_iv_is(stored, TS_IV_OBJECT))
    return true;
  bool written;
  if (!fz_may_be_written(f, n->outputs[0], &written))
    return false;
  if (!written)
    return true;
  if (o)
    return fz_add_written(f, stored, 0);
  if (fz_type_blocked(f, n->inputs[0]->type, name))
    return true;
  fz_pair p = {n->inputs[0]->type, name};
  return fz_push(f, &f->set_types, &p, sizeof p);
}

/* ------------------------------------------------------------- folding */

static bool fz_fail_oom(fz *f) {
  f->oom = true;
  return false;
}

/* Undoes a half-built tuple: the nodes made so far, newest first. */
static void fz_unmake(ts_node **made, size_t n) {
  while (n-- > 0)
    ts_node_destroy(made[n]);
}

/* A constant (or a TupleConstruct of constants) for `v` before f->anchor;
 * `type` is what the graph declared for it (lists take their element type
 * from it). NULL when v cannot be a constant (or on OOM: f->oom). The new
 * nodes are appended to `made`. */
static ts_value *fz_make(fz *f, ts_iv v, const ts_type *type, fz_vec *made, int depth) {
  if (depth > FZ_MAX_DEPTH || --f->budget < 0)
    return NULL;
  if (ts_iv_is(v, TS_IV_TUPLE)) {
    const ts_rt_tuple *t = v.u.tup;
    bool typed = type && type->kind == TS_TY_TUPLE && type->n == t->n;
    ts_node *tn = ts_node_new(f->g, TS_K_prim_TupleConstruct, 0);
    const ts_type **elems = t->n ? malloc(t->n * sizeof *elems) : NULL;
    if (!tn || (t->n && !elems)) {
      free(elems);
      f->oom = true;
      return NULL;
    }
    for (uint32_t i = 0; i < t->n; i++) {
      ts_value *e = fz_make(f, t->items[i], typed ? type->elems[i] : NULL, made, depth + 1);
      if (!e || !ts_node_add_input(tn, e)) {
        f->oom |= e != NULL;
        ts_node_remove_all_inputs(tn); /* tn is not linked: its uses must go before the elements do */
        free(elems);
        return NULL;
      }
      elems[i] = e->type;
    }
    const ts_type *tt = typed ? type : ts_type_tuple(ts_graph_arena(f->g), t->n, elems);
    free(elems);
    if (!tt || !ts_node_add_output(tn, tt)) {
      ts_node_remove_all_inputs(tn);
      f->oom = true;
      return NULL;
    }
    ts_node_insert_before(tn, f->anchor);
    if (!fz_push(f, made, &tn, sizeof tn)) {
      ts_node_destroy(tn);
      return NULL;
    }
    return tn->outputs[0];
  }
  if (ts_iv_is(v, TS_IV_OBJECT) || ts_iv_is(v, TS_IV_DICT) || ts_iv_is(v, TS_IV_UNINIT) ||
      ts_iv_is(v, TS_IV_FUNCTION))
    return NULL;
  const ts_type *given = ts_iv_is(v, TS_IV_LIST) && type && type->kind == TS_TY_LIST ? type : NULL;
  ts_value *c = ts_pass_const_insert_iv(f->anchor, &v, given, true);
  if (!c) {
    f->oom |= !ts_graph_ok(f->g);
    return NULL;
  }
  if (!fz_push(f, made, &c->node, sizeof c->node)) {
    ts_node_destroy(c->node);
    return NULL;
  }
  return c;
}

/* propagateAttributes for one node. */
static bool fz_fold(fz *f, ts_node *n) {
  if (!ts_node_is(n, TS_K_prim_GetAttr) || n->ninputs != 1 || n->noutputs != 1)
    return true;
  const char *name = fz_attr_name(n);
  ts_value *in = n->inputs[0];
  ts_rt_object *o = name ? fz_resolve(f, in) : NULL;
  if (f->oom)
    return false;
  if (!o || fz_has(&f->tainted, o, NULL) || fz_has(&f->set_objs, o, name) ||
      fz_type_blocked(f, in->type, name))
    return true;
  int32_t idx = ts_rt_class_attr_index(o->cls, name);
  if (idx < 0 || (uint32_t)idx >= o->n)
    return true;
  ts_iv v = o->attrs[idx];
  f->budget = FZ_BUDGET;
  if (ts_iv_is(v, TS_IV_OBJECT) || fz_overlaps(f, v, 0))
    return true;
  const fz_slot *m = fz_find(&f->memo, o, name);
  ts_value *c = m ? m->v : NULL;
  if (!c) {
    fz_vec made = {0};
    f->budget = FZ_BUDGET;
    c = fz_make(f, v, n->outputs[0]->type, &made, 0);
    if (!c) {
      fz_unmake(made.items, made.n);
      free(made.items);
      return !f->oom;
    }
    free(made.items);
    ts_buf full = {0};
    ts_buf_puts(&full, "self.");
    f->stack.n = 0;
    fz_resolve_walk(f, in, &full);
    ts_buf_puts(&full, name);
    bool named = !full.failed && !f->oom && ts_value_set_name(c, full.data);
    ts_buf_free(&full);
    if (!named || !fz_add(f, &f->memo, o, name, c))
      return fz_fail_oom(f);
  }
  ts_value_replace_all_uses(n->outputs[0], c);
  return true;
}

/* Removes the GetAttrs left without uses (the chains to folded
 * attributes), innermost uses first. */
static void fz_sweep(ts_block *b) {
  for (ts_node *n = b->ret->prev, *prev; n != b->ret; n = prev) {
    prev = n->prev;
    for (uint32_t i = 0; i < n->nblocks; i++)
      fz_sweep(n->blocks[i]);
    if (ts_node_is(n, TS_K_prim_GetAttr) && n->noutputs == 1 && n->outputs[0]->nuses == 0)
      ts_node_destroy(n);
  }
}

static void fz_free(fz *f) {
  free(f->set_objs.slots);
  free(f->set_types.items);
  free(f->tainted.slots);
  free(f->written.slots);
  free(f->memo.slots);
  free(f->stack.items);
  free(f->work.items);
  free(f->obj_of);
  free(f->obj_done);
  free(f->seen);
}

bool ts_pass_freeze(ts_graph *g, const ts_iv *module, ts_diag *d) {
  if (!module || !ts_iv_is(*module, TS_IV_OBJECT)) {
    ts_diag_error(d, "freeze: the module to freeze is not an object");
    return false;
  }
  if (ts_block_ninputs(g->block) < 1 || ts_block_input(g->block, 0)->type->kind != TS_TY_CLASS) {
    ts_diag_error(d, "freeze: the graph's first input is not a module (freeze a method's graph, self first)");
    return false;
  }
  fz f = {.g = g, .d = d, .root = module->u.obj, .self = ts_block_input(g->block, 0)};
  f.anchor = ts_block_first(g->block);
  f.nvalues = g->next_value_id;
  f.obj_of = calloc(f.nvalues ? f.nvalues : 1, sizeof *f.obj_of);
  f.obj_done = calloc(f.nvalues ? f.nvalues : 1, 1);
  f.seen = calloc(f.nvalues ? f.nvalues : 1, sizeof *f.seen);
  bool ok = f.obj_of && f.obj_done && f.seen;
  /* SetAttr targets depend on which attributes are set: iterate */
  do {
    f.changed = false;
    ok = ok && fz_each_node(&f, g->block, fz_note_setattr);
  } while (ok && f.changed);
  ok = ok && fz_each_node(&f, g->block, fz_note_escapes) && fz_each_node(&f, g->block, fz_note_writes) &&
       fz_each_node(&f, g->block, fz_fold);
  if (ok)
    fz_sweep(g->block);
  fz_free(&f);
  if (!ok || f.oom || !ts_graph_ok(g)) {
    ts_diag_error(d, "freeze: out of memory");
    return false;
  }
  return true;
}
