/* passes/alias_analysis.c: torch::jit::AliasDb (torch/csrc/jit/ir/
 * alias_analysis.cpp with memory_dag.cpp).
 *
 * Every value of a mutable type (ts_pass_type_mutable) gets an element;
 * elements "point to" others (a view points to its base, an If output to
 * both branch values) or "contain" others (a list its elements). Elements
 * that point to nothing are memory locations; a value's locations are the
 * locations it reaches. The analysis walks the graph once, flow-insensitive:
 *   - schema'd ops follow their alias annotations: Tensor(a) in a return
 *     points to the argument bound to a, Tensor(a!) registers a write,
 *     Tensor(a -> *) and t(*) send the value to the wildcard set, a return
 *     without annotation is fresh;
 *   - prim::Constant and other creators are fresh; List/Tuple/DictConstruct
 *     put their elements in the wildcard set and contain it (a list used
 *     once, by aten::cat/stack/broadcast_tensors, contains its elements
 *     precisely instead); TupleUnpack/TupleIndex/ListUnpack/GetAttr give
 *     wildcards; If outputs point to both branches' values; SetAttr writes
 *     its object; batch_norm/instance_norm write their running stats unless
 *     training/use_input_stats is a constant false; calls, unknown kinds and
 *     ops no schema fits are conservative: they write everything their
 *     inputs hold and turn inputs and outputs into wildcards;
 *   - graph inputs are wildcards; prim::FusionGroup / DifferentiableGraph
 *     subgraphs are analysed with their inputs pointing to the node's.
 * Wildcard values' locations then point to the wildcard element, so every
 * wildcard may alias every other.
 *
 * Where it differs from PyTorch:
 *   - one wildcard set for all types where PyTorch keeps one per type (a
 *     Tensor and an int[] input may alias here): more conservative, simpler;
 *   - fresh objects, Any values and unions hold the wildcard set (PyTorch
 *     knows a class's attribute types; the IR type does not);
 *   - a loop body's carried inputs also point to the body's outputs (the
 *     values of the previous iteration), which PyTorch leaves out;
 *   - ts_alias_may_alias, _has_writers and _node_writes_to look at what a
 *     value contains too (a list's elements), where PyTorch's mayAlias and
 *     hasWriters look at the value's own locations only;
 *   - ts_alias_can_move_before only answers; it does not move, and it does
 *     not drag dependent nodes along as moveBeforeTopologicallyValid does.
 * Cycles in the points-to graph (loop-carried values) are collapsed with
 * Tarjan's algorithm; a cycle pointing nowhere else is one location.
 *
 * Queries use scratch marks inside the db: a db is not shared between
 * threads. */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

#define TS_AL_NONE UINT32_MAX

typedef struct ts_al_vec {
  uint32_t *v;
  uint32_t n, cap;
} ts_al_vec;

/* A graph the db covers (the main one and fusion subgraphs): its values
 * and nodes are numbered from these bases. */
typedef struct ts_al_graph {
  const ts_graph *g;
  uint32_t vbase, nvalues;
  uint32_t nbase, nnodes;
} ts_al_graph;

struct ts_alias_db {
  const ts_graph *g;
  ts_al_graph *graphs;
  uint32_t ngraphs;
  uint32_t nelems; /* value elements, then the wildcard element */
  uint32_t world;
  uint32_t nnodes;
  uint8_t *has_elem;
  uint8_t *wild;
  ts_al_vec pt, ct; /* pairs (from, to): points-to, contains */
  ts_al_vec wr;     /* triples (node, element, whole contents) */
  /* solved */
  uint32_t *pt_off, *pt_adj, *ct_off, *ct_adj;
  uint32_t *rep;              /* element -> representative of its cycle */
  uint32_t *loc_off, *loc_len; /* by representative: slice of locs */
  ts_al_vec locs;
  uint32_t *nw_off, *nw_len; /* by node: its writes, nested blocks included */
  ts_al_vec nw;
  uint8_t *written, *escaped; /* by element */
  /* query scratch */
  uint32_t *seen_a, *seen_b, *seen_c;
  uint32_t epoch;
  ts_al_vec stack;
  bool oom;
};

/* ------------------------------------------------------------ helpers */

static bool ts_al_push(ts_alias_db *db, ts_al_vec *a, uint32_t x) {
  if (a->n == a->cap) {
    uint32_t cap = a->cap ? a->cap * 2 : 16;
    if (cap < a->cap) {
      db->oom = true;
      return false;
    }
    uint32_t *v = realloc(a->v, (size_t)cap * sizeof *v);
    if (!v) {
      db->oom = true;
      return false;
    }
    a->v = v;
    a->cap = cap;
  }
  a->v[a->n++] = x;
  return true;
}

static int ts_al_cmp(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Sorts v[from..n) and drops duplicates; returns the new length of that
 * part. */
static uint32_t ts_al_sort_unique(uint32_t *v, uint32_t n) {
  if (n < 2)
    return n;
  qsort(v, n, sizeof *v, ts_al_cmp);
  uint32_t k = 1;
  for (uint32_t i = 1; i < n; i++)
    if (v[i] != v[k - 1])
      v[k++] = v[i];
  return k;
}

static const ts_al_graph *ts_al_graph_of(const ts_alias_db *db, const ts_graph *g) {
  for (uint32_t i = 0; i < db->ngraphs; i++)
    if (db->graphs[i].g == g)
      return &db->graphs[i];
  return NULL;
}

/* The element slot of a value (whether or not it has an element), or
 * TS_AL_NONE for a value the db does not know (made after it was built). */
static uint32_t ts_al_slot(const ts_alias_db *db, const ts_value *v) {
  const ts_al_graph *gr = ts_al_graph_of(db, v->node->graph);
  if (!gr || v->id >= gr->nvalues)
    return TS_AL_NONE;
  return gr->vbase + v->id;
}

static uint32_t ts_al_node_slot(const ts_alias_db *db, const ts_node *n) {
  const ts_al_graph *gr = ts_al_graph_of(db, n->graph);
  if (!gr || n->id >= gr->nnodes)
    return TS_AL_NONE;
  return gr->nbase + n->id;
}

static bool ts_al_mutable(const ts_value *v) { return ts_pass_type_mutable(v->type); }

/* How many members of a union are mutable (the last one in *only). */
static uint32_t ts_al_union_mutables(const ts_type *t, const ts_type **only) {
  uint32_t count = 0;
  for (uint32_t i = 0; i < t->n; i++)
    if (ts_pass_type_mutable(t->elems[i])) {
      *only = t->elems[i];
      count++;
    }
  return count;
}

/* Whether a fresh value of type t holds other mutable values (its elements,
 * fields or attributes), which then come from the wildcard set. */
static bool ts_al_holds_mutable(const ts_type *t) {
  switch (t->kind) {
  case TS_TY_OPTIONAL: return ts_al_holds_mutable(t->elems[0]);
  case TS_TY_LIST:
  case TS_TY_FUTURE:
  case TS_TY_RREF: return t->n > 0 && ts_pass_type_mutable(t->elems[0]);
  case TS_TY_TUPLE:
  case TS_TY_DICT:
    for (uint32_t i = 0; i < t->n; i++)
      if (ts_pass_type_mutable(t->elems[i]))
        return true;
    return false;
  case TS_TY_UNION: {
    /* one mutable member: as that member; several: see ts_al_elem_ex */
    const ts_type *only = NULL;
    return ts_al_union_mutables(t, &only) > 1 || (only && ts_al_holds_mutable(only));
  }
  case TS_TY_CLASS:
  case TS_TY_ANY:
  case TS_TY_ANYLIST:
  case TS_TY_ANYTUPLE:
  case TS_TY_ANYCLASS:
  case TS_TY_VAR: return ts_pass_type_mutable(t);
  default: return false;
  }
}

/* Side effects as Node::hasSideEffects, plus kinds the op table does not
 * know and effects inside nested blocks. */
static bool ts_al_effects(const ts_node *n) {
  if (n->kind == TS_K_OTHER || n->kind == TS_K_prim_BailOut)
    return true;
  if (n->op && (n->op->flags & TS_OPF_SIDE_EFFECT))
    return true;
  for (uint32_t i = 0; i < n->nblocks; i++)
    for (const ts_node *m = ts_block_first(n->blocks[i]); m != n->blocks[i]->ret; m = m->next)
      if (ts_al_effects(m))
        return true;
  return false;
}

/* ----------------------------------------------------------- building */

/* giveFreshAlias: the value's element, made on first use (holding the
 * wildcard set when its type holds mutable values, unless `bare`). */
static uint32_t ts_al_elem_ex(ts_alias_db *db, const ts_value *v, bool bare) {
  if (!ts_al_mutable(v))
    return TS_AL_NONE;
  uint32_t e = ts_al_slot(db, v);
  if (e == TS_AL_NONE)
    return TS_AL_NONE;
  if (!db->has_elem[e]) {
    db->has_elem[e] = 1;
    if (!bare && ts_al_holds_mutable(v->type)) {
      /* a union of several mutable types may be any of them: PyTorch points
       * it at their wildcards */
      const ts_type *only = NULL;
      if (v->type->kind == TS_TY_UNION && ts_al_union_mutables(v->type, &only) > 1) {
        ts_al_push(db, &db->pt, e);
        ts_al_push(db, &db->pt, db->world);
      } else {
        ts_al_push(db, &db->ct, e);
        ts_al_push(db, &db->ct, db->world);
      }
    }
  }
  return e;
}

static uint32_t ts_al_elem(ts_alias_db *db, const ts_value *v) { return ts_al_elem_ex(db, v, false); }

static bool ts_al_uninit(const ts_value *v) { return ts_node_is(v->node, TS_K_prim_Uninitialized); }

/* makePointerTo */
static void ts_al_point(ts_alias_db *db, const ts_value *from, const ts_value *to) {
  uint32_t f = ts_al_elem(db, from), t = ts_al_elem(db, to);
  if (f == TS_AL_NONE || t == TS_AL_NONE || f == t || ts_al_uninit(from) || ts_al_uninit(to))
    return;
  ts_al_push(db, &db->pt, f);
  ts_al_push(db, &db->pt, t);
}

static void ts_al_contain(ts_alias_db *db, const ts_value *container, const ts_value *inner) {
  uint32_t c = ts_al_elem(db, container), i = ts_al_elem(db, inner);
  if (c == TS_AL_NONE || i == TS_AL_NONE)
    return;
  ts_al_push(db, &db->ct, c);
  ts_al_push(db, &db->ct, i);
}

static void ts_al_wildcard(ts_alias_db *db, const ts_value *v) {
  uint32_t e = ts_al_elem(db, v);
  if (e != TS_AL_NONE)
    db->wild[e] = 1;
}

/* registerWrite: `n` writes v (or, `whole`, everything v holds). */
static void ts_al_write_elem(ts_alias_db *db, const ts_node *n, uint32_t e, bool whole) {
  uint32_t ns = ts_al_node_slot(db, n);
  if (ns == TS_AL_NONE || e == TS_AL_NONE)
    return;
  ts_al_push(db, &db->wr, ns);
  ts_al_push(db, &db->wr, e);
  ts_al_push(db, &db->wr, whole ? 1u : 0u);
}

static void ts_al_write(ts_alias_db *db, const ts_node *n, const ts_value *v, bool whole) {
  ts_al_write_elem(db, n, ts_al_elem(db, v), whole);
}

static void ts_al_fresh_outputs(ts_alias_db *db, const ts_node *n) {
  for (uint32_t i = 0; i < n->noutputs; i++)
    ts_al_elem(db, n->outputs[i]);
}

static void ts_al_wild_outputs(ts_alias_db *db, const ts_node *n) {
  for (uint32_t i = 0; i < n->noutputs; i++)
    ts_al_wildcard(db, n->outputs[i]);
}

/* analyzeConservative: may write anything its inputs hold; inputs and
 * outputs join the wildcard set. */
static void ts_al_conservative(ts_alias_db *db, const ts_node *n) {
  for (uint32_t i = 0; i < n->ninputs; i++) {
    if (!ts_al_mutable(n->inputs[i]))
      continue;
    ts_al_write(db, n, n->inputs[i], true);
    ts_al_wildcard(db, n->inputs[i]);
  }
  ts_al_wild_outputs(db, n);
}

static bool ts_al_set_is_wild(const char *s) { return s[0] == '*' && s[1] == 0; }

static bool ts_al_has_wild(const char *const *sets, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (ts_al_set_is_wild(sets[i]))
      return true;
  return false;
}

/* Whether some overload of n's kind that could take its inputs carries an
 * alias annotation (when no schema matches the node exactly). */
static bool ts_al_any_overload_annotated(const ts_node *n) {
  uint32_t count = 0;
  const ts_schema *const *all = ts_op_schemas(n->kind, &count);
  if (!count)
    return true;
  for (uint32_t k = 0; k < count; k++) {
    const ts_schema *c = all[k];
    if (n->ninputs > c->nargs && !c->vararg)
      continue;
    for (uint32_t i = 0; i < c->nargs; i++)
      if (c->args[i].alias)
        return true;
    for (uint32_t i = 0; i < c->nrets; i++)
      if (c->rets[i].alias)
        return true;
    if (c->varret)
      return true;
  }
  return false;
}

/* The FROM_SCHEMA analysis: bind each annotated argument's set to the
 * value, then give the returns the values of their sets. */
static void ts_al_schema(ts_alias_db *db, const ts_node *n, const ts_schema *s) {
  enum { TS_AL_MAX_SETS = 16 };
  const char *names[TS_AL_MAX_SETS];
  const ts_value *bound[TS_AL_MAX_SETS];
  uint32_t nbound = 0;
  for (uint32_t i = 0; i < s->nargs && i < n->ninputs; i++) {
    const ts_alias *a = s->args[i].alias;
    const ts_value *v = n->inputs[i];
    if (!a || !ts_al_mutable(v))
      continue;
    if (a->nsets == 0) {
      /* "Tensor(a!)[]": only the elements carry an annotation */
      if (a->contained && a->contained->is_write)
        ts_al_write(db, n, v, true);
      continue;
    }
    const char *set = a->sets[0];
    bool seen = false;
    for (uint32_t k = 0; k < nbound && !seen; k++)
      seen = strcmp(names[k], set) == 0;
    if (seen)
      continue;
    if (nbound < TS_AL_MAX_SETS) {
      names[nbound] = set;
      bound[nbound++] = v;
    }
    if (a->is_write)
      ts_al_write(db, n, v, false);
    if (ts_al_has_wild(a->after_sets, a->nafter))
      ts_al_wildcard(db, v);
  }
  for (uint32_t i = 0; i < n->noutputs; i++) {
    const ts_value *out = n->outputs[i];
    if (i >= s->nrets) {
      /* "-> ...": nothing is known about them */
      ts_al_wildcard(db, out);
      continue;
    }
    const ts_alias *a = s->rets[i].alias;
    if (!a || a->nsets == 0) {
      /* fresh; a "Tensor(a)[]" list holds values whose argument went to
       * the wildcard set ("Tensor(a -> *)") */
      ts_al_elem(db, out);
      continue;
    }
    if (!ts_al_mutable(out))
      continue;
    if (ts_al_has_wild(a->sets, a->nsets)) {
      ts_al_wildcard(db, out);
      continue;
    }
    bool pointed = false;
    for (uint32_t k = 0; k < a->nsets; k++) {
      const ts_value *to = NULL;
      for (uint32_t j = 0; j < nbound && !to; j++)
        if (strcmp(names[j], a->sets[k]) == 0)
          to = bound[j];
      if (to) {
        ts_al_point(db, out, to);
        pointed = true;
      }
    }
    /* "-> Tensor(b)" with b bound nowhere is fresh; "Tensor(b|a)" with b
     * unbound may be fresh or alias a: the edge to a covers it */
    if (!pointed)
      ts_al_elem(db, out);
    if (a->is_write)
      ts_al_write(db, n, out, false);
  }
}

/* The input named `name` of n's schema, or NULL. */
static const ts_value *ts_al_named_input(const ts_node *n, const ts_schema *s, const char *name) {
  for (uint32_t i = 0; s && i < s->nargs && i < n->ninputs; i++)
    if (strcmp(s->args[i].name, name) == 0)
      return n->inputs[i];
  return NULL;
}

/* batch_norm / instance_norm write their running stats unless the flag is
 * a constant false (PyTorch's analyzeBatchNorm, analyzeInstanceNorm). */
static void ts_al_norm(ts_alias_db *db, const ts_node *n, const char *flag) {
  const ts_schema *s = ts_node_schema(n);
  if (!s) {
    ts_al_conservative(db, n);
    return;
  }
  ts_al_fresh_outputs(db, n);
  const ts_value *f = ts_al_named_input(n, s, flag);
  bool on = true;
  if (f && ts_pass_const_bool(f, &on) && !on)
    return;
  const ts_value *mean = ts_al_named_input(n, s, "running_mean");
  const ts_value *var = ts_al_named_input(n, s, "running_var");
  if (mean)
    ts_al_write(db, n, mean, false);
  if (var)
    ts_al_write(db, n, var, false);
}

/* List/Tuple/DictConstruct (analyzeContainerConstruct). */
static void ts_al_construct(ts_alias_db *db, const ts_node *n) {
  if (n->noutputs != 1) {
    ts_al_conservative(db, n);
    return;
  }
  const ts_value *c = n->outputs[0];
  if (!ts_al_mutable(c))
    return;
  /* a list read once by an op whose result does not alias it: its
   * elements stay precise */
  if (c->nuses == 1) {
    const ts_node *u = c->uses[0].user;
    if (ts_node_is(u, TS_K_aten_cat) || ts_node_is(u, TS_K_aten_stack) ||
        ts_node_is(u, TS_K_aten_broadcast_tensors)) {
      ts_al_elem_ex(db, c, true);
      for (uint32_t i = 0; i < n->ninputs; i++)
        ts_al_contain(db, c, n->inputs[i]);
      return;
    }
  }
  ts_al_elem(db, c);
  for (uint32_t i = 0; i < n->ninputs; i++)
    ts_al_wildcard(db, n->inputs[i]);
}

static void ts_al_block(ts_alias_db *db, const ts_block *b);

static bool ts_al_loop_ok(const ts_node *n) {
  if (n->nblocks != 1 || n->ninputs != n->noutputs + 2)
    return false;
  const ts_block *b = n->blocks[0];
  return ts_block_ninputs(b) == n->noutputs + 1 && ts_block_noutputs(b) == n->noutputs + 1;
}

static void ts_al_loop(ts_alias_db *db, const ts_node *n) {
  if (!ts_al_loop_ok(n)) {
    for (uint32_t i = 0; i < n->nblocks; i++)
      ts_al_block(db, n->blocks[i]);
    ts_al_conservative(db, n);
    return;
  }
  const ts_block *body = n->blocks[0];
  for (uint32_t i = 0; i < n->noutputs; i++)
    ts_al_point(db, ts_block_input(body, i + 1), n->inputs[i + 2]);
  ts_al_block(db, body);
  for (uint32_t i = 0; i < n->noutputs; i++) {
    /* the next iteration's carried value is this one's output */
    ts_al_point(db, ts_block_input(body, i + 1), ts_block_output(body, i + 1));
    ts_al_point(db, n->outputs[i], ts_block_output(body, i + 1));
  }
}

static void ts_al_if(ts_alias_db *db, const ts_node *n) {
  for (uint32_t i = 0; i < n->nblocks; i++)
    ts_al_block(db, n->blocks[i]);
  if (n->nblocks != 2 || ts_block_noutputs(n->blocks[0]) != n->noutputs ||
      ts_block_noutputs(n->blocks[1]) != n->noutputs) {
    ts_al_conservative(db, n);
    return;
  }
  for (uint32_t i = 0; i < n->noutputs; i++) {
    ts_al_point(db, n->outputs[i], ts_block_output(n->blocks[0], i));
    ts_al_point(db, n->outputs[i], ts_block_output(n->blocks[1], i));
  }
}

static const ts_graph *ts_al_subgraph(const ts_node *n) {
  if (!ts_node_is(n, TS_K_prim_FusionGroup) && !ts_node_is(n, TS_K_prim_DifferentiableGraph))
    return NULL;
  const ts_attr *a = ts_node_attr(n, "Subgraph");
  return a && a->kind == TS_ATTR_GRAPH ? a->u.g : NULL;
}

static void ts_al_fusion(ts_alias_db *db, const ts_node *n) {
  const ts_graph *sub = ts_al_subgraph(n);
  if (!sub || !ts_al_graph_of(db, sub)) {
    ts_al_conservative(db, n);
    return;
  }
  const ts_block *b = sub->block;
  for (uint32_t i = 0; i < ts_block_ninputs(b) && i < n->ninputs; i++)
    ts_al_point(db, ts_block_input(b, i), n->inputs[i]);
  ts_al_block(db, b);
  for (uint32_t i = 0; i < n->noutputs; i++) {
    if (i < ts_block_noutputs(b))
      ts_al_point(db, n->outputs[i], ts_block_output(b, i));
    else
      ts_al_wildcard(db, n->outputs[i]);
  }
}

static void ts_al_node(ts_alias_db *db, const ts_node *n) {
  switch (n->kind) {
  case TS_K_prim_If: ts_al_if(db, n); return;
  case TS_K_prim_Loop: ts_al_loop(db, n); return;
  case TS_K_prim_FusionGroup:
  case TS_K_prim_DifferentiableGraph: ts_al_fusion(db, n); return;
  case TS_K_prim_fork:
    for (uint32_t i = 0; i < n->ninputs; i++)
      ts_al_wildcard(db, n->inputs[i]);
    ts_al_fresh_outputs(db, n);
    return;
  case TS_K_aten_wait:
    ts_al_wild_outputs(db, n);
    ts_al_write_elem(db, n, db->world, false);
    return;
  case TS_K_aten_batch_norm: ts_al_norm(db, n, "training"); return;
  case TS_K_aten_instance_norm: ts_al_norm(db, n, "use_input_stats"); return;
  case TS_K_prim_Constant:
  case TS_K_prim_AutogradZero:
  case TS_K_prim_CreateObject:
  case TS_K_prim_tolist:
  case TS_K_prim_Uninitialized: ts_al_fresh_outputs(db, n); return;
  case TS_K_prim_ListConstruct:
  case TS_K_prim_TupleConstruct:
  case TS_K_prim_DictConstruct: ts_al_construct(db, n); return;
  case TS_K_prim_TupleUnpack:
  case TS_K_prim_TupleIndex:
  case TS_K_prim_TupleSlice:
  case TS_K_prim_ListUnpack:
  case TS_K_prim_GetAttr: ts_al_wild_outputs(db, n); return;
  case TS_K_prim_unchecked_cast:
    if (n->ninputs == 1 && n->noutputs == 1)
      ts_al_point(db, n->outputs[0], n->inputs[0]);
    else
      ts_al_conservative(db, n);
    return;
  case TS_K_prim_ConstantChunk:
    for (uint32_t i = 0; i < n->noutputs && n->ninputs > 0; i++)
      ts_al_point(db, n->outputs[i], n->inputs[0]);
    return;
  case TS_K_prim_SetAttr:
    if (n->ninputs == 2) {
      ts_al_write(db, n, n->inputs[0], false);
      ts_al_wildcard(db, n->inputs[1]);
    } else {
      ts_al_conservative(db, n);
    }
    return;
  case TS_K_prim_Print:
  case TS_K_prim_isinstance: return;
  case TS_K_prim_Param:
  case TS_K_prim_Return: return;
  default: break;
  }
  if (n->kind == TS_K_OTHER) {
    /* an op PyTorch registers that the op table lacks: its schema says
     * what it writes and aliases (ir/ops_pytorch.def) */
    const ts_schema *pt = ts_node_schema_pytorch(n);
    if (pt)
      ts_al_schema(db, n, pt);
    else
      ts_al_conservative(db, n);
    return;
  }
  const ts_schema *s = ts_node_schema(n);
  if (s) {
    ts_al_schema(db, n, s);
    return;
  }
  /* no overload fits the node's types exactly: pure if none of those it
   * could be carries an annotation */
  if (ts_al_any_overload_annotated(n))
    ts_al_conservative(db, n);
  else
    ts_al_fresh_outputs(db, n);
}

static void ts_al_block(ts_alias_db *db, const ts_block *b) {
  for (const ts_node *n = ts_block_first(b); n != b->ret; n = n->next)
    ts_al_node(db, n);
}

/* Registers g and the fusion subgraphs inside it. */
static bool ts_al_collect_graphs(ts_alias_db *db, const ts_graph *g, uint32_t *cap, uint32_t depth);

static bool ts_al_collect_block(ts_alias_db *db, const ts_block *b, uint32_t *cap, uint32_t depth) {
  for (const ts_node *n = ts_block_first(b); n != b->ret; n = n->next) {
    for (uint32_t i = 0; i < n->nblocks; i++)
      if (!ts_al_collect_block(db, n->blocks[i], cap, depth))
        return false;
    const ts_graph *sub = ts_al_subgraph(n);
    if (sub && !ts_al_graph_of(db, sub) && !ts_al_collect_graphs(db, sub, cap, depth + 1))
      return false;
  }
  return true;
}

static bool ts_al_collect_graphs(ts_alias_db *db, const ts_graph *g, uint32_t *cap, uint32_t depth) {
  if (depth > 64)
    return true; /* deeper subgraphs are left to the conservative rule */
  if (db->ngraphs == *cap) {
    uint32_t nc = *cap ? *cap * 2 : 4;
    ts_al_graph *v = realloc(db->graphs, (size_t)nc * sizeof *v);
    if (!v)
      return false;
    db->graphs = v;
    *cap = nc;
  }
  ts_al_graph *gr = &db->graphs[db->ngraphs++];
  gr->g = g;
  gr->nvalues = g->next_value_id;
  gr->nnodes = g->next_node_id;
  return ts_al_collect_block(db, g->block, cap, depth);
}

/* ------------------------------------------------------------ solving */

/* Builds a CSR adjacency from (from, to) pairs. */
static bool ts_al_csr(ts_alias_db *db, const ts_al_vec *pairs, uint32_t **off_out, uint32_t **adj_out) {
  uint32_t n = db->nelems, m = pairs->n / 2;
  uint32_t *off = calloc((size_t)n + 1, sizeof *off);
  uint32_t *adj = malloc((size_t)(m ? m : 1) * sizeof *adj);
  uint32_t *fill = malloc((size_t)(n ? n : 1) * sizeof *fill);
  if (!off || !adj || !fill) {
    free(off);
    free(adj);
    free(fill);
    db->oom = true;
    return false;
  }
  for (uint32_t i = 0; i < m; i++)
    off[pairs->v[2 * i] + 1]++;
  for (uint32_t i = 0; i < n; i++)
    off[i + 1] += off[i];
  memcpy(fill, off, (size_t)n * sizeof *fill);
  for (uint32_t i = 0; i < m; i++)
    adj[fill[pairs->v[2 * i]]++] = pairs->v[2 * i + 1];
  free(fill);
  free(*off_out);
  free(*adj_out);
  *off_out = off;
  *adj_out = adj;
  return true;
}

/* Locations of every element: Tarjan's strongly connected components over
 * the points-to edges (iterative). Components come out sinks first, so a
 * component's successors are done when it is: a component with no edge
 * out is one location (its representative); the others reach the union of
 * their successors' locations. */
static bool ts_al_solve(ts_alias_db *db) {
  uint32_t n = db->nelems;
  if (!ts_al_csr(db, &db->pt, &db->pt_off, &db->pt_adj))
    return false;
  uint32_t *index = malloc((size_t)n * sizeof *index);
  uint32_t *low = malloc((size_t)n * sizeof *low);
  uint32_t *stk = malloc((size_t)n * sizeof *stk);
  uint32_t *cs = malloc((size_t)n * sizeof *cs);
  uint32_t *ci = malloc((size_t)n * sizeof *ci);
  uint8_t *on = calloc(n, 1);
  uint32_t *loc_off = malloc((size_t)n * sizeof *loc_off);
  uint32_t *loc_len = malloc((size_t)n * sizeof *loc_len);
  uint32_t *rep = malloc((size_t)n * sizeof *rep);
  ts_al_vec tmp = {0};
  bool ok = index && low && stk && cs && ci && on && loc_off && loc_len && rep;
  if (ok) {
    db->locs.n = 0;
    for (uint32_t i = 0; i < n; i++)
      index[i] = TS_AL_NONE;
    uint32_t counter = 0, sp = 0;
    for (uint32_t s = 0; s < n && ok; s++) {
      if (index[s] != TS_AL_NONE)
        continue;
      uint32_t top = 0;
      cs[0] = s;
      ci[0] = db->pt_off[s];
      index[s] = low[s] = counter++;
      stk[sp++] = s;
      on[s] = 1;
      top = 1;
      while (top && ok) {
        uint32_t v = cs[top - 1];
        if (ci[top - 1] < db->pt_off[v + 1]) {
          uint32_t w = db->pt_adj[ci[top - 1]++];
          if (index[w] == TS_AL_NONE) {
            index[w] = low[w] = counter++;
            stk[sp++] = w;
            on[w] = 1;
            cs[top] = w;
            ci[top] = db->pt_off[w];
            top++;
          } else if (on[w] && index[w] < low[v]) {
            low[v] = index[w];
          }
          continue;
        }
        top--;
        if (top && low[v] < low[cs[top - 1]])
          low[cs[top - 1]] = low[v];
        if (low[v] != index[v])
          continue;
        /* v is the root of a component: stk[first..sp) */
        uint32_t first = sp;
        do {
          first--;
          on[stk[first]] = 0;
          rep[stk[first]] = v;
        } while (stk[first] != v);
        tmp.n = 0;
        bool out = false;
        for (uint32_t k = first; k < sp && ok; k++)
          for (uint32_t e = db->pt_off[stk[k]]; e < db->pt_off[stk[k] + 1] && ok; e++) {
            uint32_t r = rep[db->pt_adj[e]];
            if (r == v)
              continue;
            out = true;
            for (uint32_t j = 0; j < loc_len[r] && ok; j++)
              ok = ts_al_push(db, &tmp, db->locs.v[loc_off[r] + j]);
          }
        sp = first;
        if (!out)
          ok = ok && ts_al_push(db, &tmp, v);
        if (!ok)
          break;
        tmp.n = ts_al_sort_unique(tmp.v, tmp.n);
        loc_off[v] = db->locs.n;
        loc_len[v] = tmp.n;
        for (uint32_t j = 0; j < tmp.n && ok; j++)
          ok = ts_al_push(db, &db->locs, tmp.v[j]);
      }
    }
  }
  free(index);
  free(low);
  free(stk);
  free(cs);
  free(ci);
  free(on);
  free(tmp.v);
  free(db->loc_off);
  free(db->loc_len);
  free(db->rep);
  db->loc_off = loc_off;
  db->loc_len = loc_len;
  db->rep = rep;
  if (!ok)
    db->oom = true;
  return ok;
}

static const uint32_t *ts_al_locs(const ts_alias_db *db, uint32_t e, uint32_t *n) {
  uint32_t r = db->rep[e];
  *n = db->loc_len[r];
  return db->locs.v + db->loc_off[r];
}

static uint32_t ts_al_next_epoch(ts_alias_db *db) {
  if (db->epoch == UINT32_MAX - 1) {
    memset(db->seen_a, 0, (size_t)db->nelems * sizeof *db->seen_a);
    memset(db->seen_b, 0, (size_t)db->nelems * sizeof *db->seen_b);
    memset(db->seen_c, 0, (size_t)db->nelems * sizeof *db->seen_c);
    db->epoch = 0;
  }
  return ++db->epoch;
}

/* What a query looks for while it walks a closure. */
typedef struct ts_al_hit {
  const uint32_t *seen; /* elements marked with `ep` */
  uint32_t ep;
  const uint8_t *flag; /* or flagged */
} ts_al_hit;

/* collectAllContainedMemoryLocations: marks e, its locations and,
 * recursively, what they contain, in seen[] with ep; appends them to `out`
 * when given. True as soon as an element matches `hit` (when given). */
static bool ts_al_closure(ts_alias_db *db, uint32_t e, uint32_t *seen, uint32_t ep, ts_al_vec *out,
                          const ts_al_hit *hit) {
  uint32_t base = db->stack.n;
  if (!ts_al_push(db, &db->stack, e))
    return true;
  bool found = false;
  while (db->stack.n > base && !found) {
    uint32_t x = db->stack.v[--db->stack.n];
    if (seen[x] == ep)
      continue;
    seen[x] = ep;
    if (out)
      ts_al_push(db, out, x);
    if (hit && ((hit->seen && hit->seen[x] == hit->ep) || (hit->flag && hit->flag[x]))) {
      found = true;
      break;
    }
    uint32_t nl;
    const uint32_t *l = ts_al_locs(db, x, &nl);
    for (uint32_t i = 0; i < nl; i++)
      if (seen[l[i]] != ep)
        ts_al_push(db, &db->stack, l[i]);
    for (uint32_t i = db->ct_off[x]; i < db->ct_off[x + 1]; i++)
      if (seen[db->ct_adj[i]] != ep)
        ts_al_push(db, &db->stack, db->ct_adj[i]);
  }
  db->stack.n = base;
  /* an allocation failure answers "found": the conservative answer */
  return found || db->oom;
}

/* Per-node writes, nested blocks and fusion subgraphs included. */
static bool ts_al_node_writes(ts_alias_db *db, const ts_node *n, const uint32_t *wr_off, ts_al_vec *tmp);

static bool ts_al_block_writes(ts_alias_db *db, const ts_block *b, const uint32_t *wr_off, ts_al_vec *tmp) {
  for (const ts_node *m = ts_block_first(b); m != b->ret; m = m->next)
    if (!ts_al_node_writes(db, m, wr_off, tmp))
      return false;
  return true;
}

static bool ts_al_node_writes(ts_alias_db *db, const ts_node *n, const uint32_t *wr_off, ts_al_vec *tmp) {
  uint32_t ns = ts_al_node_slot(db, n);
  if (ns == TS_AL_NONE)
    return true;
  for (uint32_t i = 0; i < n->nblocks; i++)
    if (!ts_al_block_writes(db, n->blocks[i], wr_off, tmp))
      return false;
  const ts_graph *sub = ts_al_subgraph(n);
  if (sub && ts_al_graph_of(db, sub) && !ts_al_block_writes(db, sub->block, wr_off, tmp))
    return false;
  uint32_t base = tmp->n;
  for (uint32_t k = wr_off[ns]; k < wr_off[ns + 1]; k++) {
    uint32_t e = db->wr.v[3 * k + 1];
    if (db->wr.v[3 * k + 2]) {
      ts_al_closure(db, e, db->seen_a, ts_al_next_epoch(db), tmp, NULL);
    } else {
      uint32_t nl;
      const uint32_t *l = ts_al_locs(db, e, &nl);
      for (uint32_t i = 0; i < nl; i++)
        ts_al_push(db, tmp, l[i]);
    }
  }
  for (uint32_t k = base; k < tmp->n; k++)
    db->written[tmp->v[k]] = 1;
  for (uint32_t i = 0; i < n->nblocks; i++)
    for (const ts_node *m = ts_block_first(n->blocks[i]); m != n->blocks[i]->ret; m = m->next) {
      uint32_t ms = ts_al_node_slot(db, m);
      for (uint32_t k = 0; ms != TS_AL_NONE && k < db->nw_len[ms]; k++)
        ts_al_push(db, tmp, db->nw.v[db->nw_off[ms] + k]);
    }
  if (sub && ts_al_graph_of(db, sub))
    for (const ts_node *m = ts_block_first(sub->block); m != sub->block->ret; m = m->next) {
      uint32_t ms = ts_al_node_slot(db, m);
      for (uint32_t k = 0; ms != TS_AL_NONE && k < db->nw_len[ms]; k++)
        ts_al_push(db, tmp, db->nw.v[db->nw_off[ms] + k]);
    }
  if (db->oom)
    return false;
  /* tmp->v is NULL while nothing was ever pushed: NULL + 0 is undefined */
  uint32_t len = tmp->n > base ? ts_al_sort_unique(tmp->v + base, tmp->n - base) : 0;
  db->nw_off[ns] = db->nw.n;
  db->nw_len[ns] = len;
  for (uint32_t k = 0; k < len; k++)
    ts_al_push(db, &db->nw, tmp->v[base + k]);
  tmp->n = base;
  return !db->oom;
}

static bool ts_al_build_writes(ts_alias_db *db) {
  uint32_t nw = db->wr.n / 3;
  uint32_t *wr_off = calloc((size_t)db->nnodes + 1, sizeof *wr_off);
  uint32_t *order = malloc((size_t)(nw ? nw : 1) * 3 * sizeof *order);
  uint32_t *fill = malloc((size_t)(db->nnodes ? db->nnodes : 1) * sizeof *fill);
  db->nw_off = calloc(db->nnodes ? db->nnodes : 1, sizeof *db->nw_off);
  db->nw_len = calloc(db->nnodes ? db->nnodes : 1, sizeof *db->nw_len);
  if (!wr_off || !order || !fill || !db->nw_off || !db->nw_len) {
    free(wr_off);
    free(order);
    free(fill);
    db->oom = true;
    return false;
  }
  /* group the write triples by node */
  for (uint32_t i = 0; i < nw; i++)
    wr_off[db->wr.v[3 * i] + 1]++;
  for (uint32_t i = 0; i < db->nnodes; i++)
    wr_off[i + 1] += wr_off[i];
  memcpy(fill, wr_off, (size_t)db->nnodes * sizeof *fill);
  for (uint32_t i = 0; i < nw; i++) {
    uint32_t k = fill[db->wr.v[3 * i]]++;
    memcpy(order + 3 * k, db->wr.v + 3 * i, 3 * sizeof *order);
  }
  if (nw)
    memcpy(db->wr.v, order, (size_t)nw * 3 * sizeof *order);
  free(order);
  free(fill);
  ts_al_vec tmp = {0};
  bool ok = ts_al_block_writes(db, db->g->block, wr_off, &tmp);
  free(tmp.v);
  free(wr_off);
  return ok;
}

ts_alias_db *ts_alias_db_new(ts_graph *g, ts_diag *d) {
  ts_alias_db *db = calloc(1, sizeof *db);
  uint32_t cap = 0;
  if (!db || !ts_al_collect_graphs(db, g, &cap, 0)) {
    if (db)
      free(db->graphs);
    free(db);
    ts_diag_error(d, "alias analysis: out of memory");
    return NULL;
  }
  db->g = g;
  uint64_t nv = 0, nn = 0;
  for (uint32_t i = 0; i < db->ngraphs; i++) {
    db->graphs[i].vbase = (uint32_t)nv;
    db->graphs[i].nbase = (uint32_t)nn;
    nv += db->graphs[i].nvalues;
    nn += db->graphs[i].nnodes;
  }
  if (nv >= UINT32_MAX / 4 || nn >= UINT32_MAX / 4) {
    ts_alias_db_free(db);
    ts_diag_error(d, "alias analysis: the graph is too large");
    return NULL;
  }
  db->world = (uint32_t)nv;
  db->nelems = (uint32_t)nv + 1;
  db->nnodes = (uint32_t)nn;
  db->has_elem = calloc(db->nelems, 1);
  db->wild = calloc(db->nelems, 1);
  db->written = calloc(db->nelems, 1);
  db->escaped = calloc(db->nelems, 1);
  db->seen_a = calloc(db->nelems, sizeof *db->seen_a);
  db->seen_b = calloc(db->nelems, sizeof *db->seen_b);
  db->seen_c = calloc(db->nelems, sizeof *db->seen_c);
  if (!db->has_elem || !db->wild || !db->written || !db->escaped || !db->seen_a || !db->seen_b || !db->seen_c) {
    ts_alias_db_free(db);
    ts_diag_error(d, "alias analysis: out of memory");
    return NULL;
  }
  db->has_elem[db->world] = 1;
  for (uint32_t i = 0; i < ts_block_ninputs(g->block); i++)
    ts_al_wildcard(db, ts_block_input(g->block, i));
  ts_al_block(db, g->block);
  /* setWildcards: the locations of wildcard values point to the wildcard
   * element; solve again with those edges */
  bool ok = !db->oom && ts_al_solve(db);
  for (uint32_t e = 0; ok && e < db->nelems; e++) {
    if (!db->wild[e])
      continue;
    uint32_t nl;
    const uint32_t *l = ts_al_locs(db, e, &nl);
    for (uint32_t i = 0; i < nl; i++)
      if (l[i] != db->world) {
        ts_al_push(db, &db->pt, l[i]);
        ts_al_push(db, &db->pt, db->world);
      }
  }
  ok = ok && !db->oom && ts_al_solve(db);
  /* a cycle's contents are its representative's */
  for (uint32_t i = 0, m = db->ct.n / 2; ok && i < m; i++) {
    uint32_t from = db->ct.v[2 * i], r = db->rep[from];
    if (r != from) {
      ts_al_push(db, &db->ct, r);
      ts_al_push(db, &db->ct, db->ct.v[2 * i + 1]);
    }
  }
  ok = ok && !db->oom && ts_al_csr(db, &db->ct, &db->ct_off, &db->ct_adj);
  ok = ok && ts_al_build_writes(db);
  /* what the caller sees: the graph's inputs, outputs, the wildcard set */
  if (ok) {
    uint32_t ep = ts_al_next_epoch(db);
    ts_al_closure(db, db->world, db->seen_b, ep, NULL, NULL);
    for (uint32_t i = 0; i < ts_block_ninputs(g->block); i++) {
      uint32_t e = ts_al_slot(db, ts_block_input(g->block, i));
      if (e != TS_AL_NONE && db->has_elem[e])
        ts_al_closure(db, e, db->seen_b, ep, NULL, NULL);
    }
    for (uint32_t i = 0; i < ts_block_noutputs(g->block); i++) {
      uint32_t e = ts_al_slot(db, ts_block_output(g->block, i));
      if (e != TS_AL_NONE && db->has_elem[e])
        ts_al_closure(db, e, db->seen_b, ep, NULL, NULL);
    }
    for (uint32_t e = 0; e < db->nelems; e++)
      db->escaped[e] = db->seen_b[e] == ep;
    ok = !db->oom;
  }
  if (!ok) {
    ts_alias_db_free(db);
    ts_diag_error(d, "alias analysis: out of memory");
    return NULL;
  }
  return db;
}

void ts_alias_db_free(ts_alias_db *db) {
  if (!db)
    return;
  free(db->graphs);
  free(db->has_elem);
  free(db->wild);
  free(db->pt.v);
  free(db->ct.v);
  free(db->wr.v);
  free(db->pt_off);
  free(db->pt_adj);
  free(db->ct_off);
  free(db->ct_adj);
  free(db->rep);
  free(db->loc_off);
  free(db->loc_len);
  free(db->locs.v);
  free(db->nw_off);
  free(db->nw_len);
  free(db->nw.v);
  free(db->written);
  free(db->escaped);
  free(db->seen_a);
  free(db->seen_b);
  free(db->seen_c);
  free(db->stack.v);
  free(db);
}

/* ------------------------------------------------------------ queries */

/* Queries mark scratch arrays inside the db (see the file comment). */
static ts_alias_db *ts_al_mut(const ts_alias_db *db) { return (ts_alias_db *)(uintptr_t)db; }

/* The element of a value for a query: TS_AL_NONE for immutable values;
 * *unknown set for values the db has not seen. */
static uint32_t ts_al_query_elem(const ts_alias_db *db, const ts_value *v, bool *unknown) {
  *unknown = false;
  if (!ts_al_mutable(v))
    return TS_AL_NONE;
  uint32_t e = ts_al_slot(db, v);
  if (e == TS_AL_NONE || !db->has_elem[e]) {
    *unknown = true;
    return TS_AL_NONE;
  }
  return e;
}

bool ts_alias_may_alias(const ts_alias_db *cdb, const ts_value *a, const ts_value *b) {
  ts_alias_db *db = ts_al_mut(cdb);
  bool ua, ub;
  uint32_t ea = ts_al_query_elem(db, a, &ua), eb = ts_al_query_elem(db, b, &ub);
  if ((ea == TS_AL_NONE && !ua) || (eb == TS_AL_NONE && !ub))
    return false;
  if (ua || ub)
    return true;
  uint32_t ep = ts_al_next_epoch(db);
  ts_al_closure(db, ea, db->seen_a, ep, NULL, NULL);
  ts_al_hit hit = {db->seen_a, ep, NULL};
  return ts_al_closure(db, eb, db->seen_b, ep, NULL, &hit);
}

bool ts_alias_node_writes_to(const ts_alias_db *cdb, const ts_node *n, const ts_value *v) {
  ts_alias_db *db = ts_al_mut(cdb);
  bool uv;
  uint32_t ev = ts_al_query_elem(db, v, &uv);
  if (ev == TS_AL_NONE && !uv)
    return false;
  uint32_t ns = ts_al_node_slot(db, n);
  if (ns == TS_AL_NONE)
    return true;
  if (!db->nw_len[ns])
    return false;
  if (uv)
    return true;
  uint32_t ep = ts_al_next_epoch(db);
  for (uint32_t k = 0; k < db->nw_len[ns]; k++)
    db->seen_b[db->nw.v[db->nw_off[ns] + k]] = ep;
  ts_al_hit hit = {db->seen_b, ep, NULL};
  return ts_al_closure(db, ev, db->seen_a, ep, NULL, &hit);
}

bool ts_alias_has_writers(const ts_alias_db *cdb, const ts_value *v) {
  ts_alias_db *db = ts_al_mut(cdb);
  bool uv;
  uint32_t ev = ts_al_query_elem(db, v, &uv);
  if (ev == TS_AL_NONE)
    return uv;
  ts_al_hit hit = {NULL, 0, db->written};
  return ts_al_closure(db, ev, db->seen_a, ts_al_next_epoch(db), NULL, &hit);
}

bool ts_alias_node_has_writes(const ts_alias_db *db, const ts_node *n) {
  uint32_t ns = ts_al_node_slot(db, n);
  return ns == TS_AL_NONE || db->nw_len[ns] > 0;
}

bool ts_alias_escapes(const ts_alias_db *cdb, const ts_value *v) {
  ts_alias_db *db = ts_al_mut(cdb);
  bool uv;
  uint32_t ev = ts_al_query_elem(db, v, &uv);
  if (ev == TS_AL_NONE)
    return uv;
  ts_al_hit hit = {NULL, 0, db->escaped};
  return ts_al_closure(db, ev, db->seen_a, ts_al_next_epoch(db), NULL, &hit);
}

/* Marks in seen[ep] everything n reads: what its inputs (and those of the
 * nodes in its blocks) hold. False if some input is unknown to the db. */
static bool ts_al_mark_reads(ts_alias_db *db, const ts_node *n, uint32_t *seen, uint32_t ep, const ts_al_hit *hit,
                             bool *found) {
  for (uint32_t i = 0; i < n->ninputs && !*found; i++) {
    bool u;
    uint32_t e = ts_al_query_elem(db, n->inputs[i], &u);
    if (u)
      return false;
    if (e != TS_AL_NONE && seen[e] != ep && ts_al_closure(db, e, seen, ep, NULL, hit))
      *found = hit != NULL;
  }
  for (uint32_t b = 0; b < n->nblocks && !*found; b++)
    for (const ts_node *m = ts_block_first(n->blocks[b]); m != n->blocks[b]->ret && !*found; m = m->next)
      if (!ts_al_mark_reads(db, m, seen, ep, hit, found))
        return false;
  return true;
}

/* Whether any input of n or of a node nested in n (blocks' returns
 * included) is defined by `def`. */
static bool ts_al_uses_node(const ts_node *n, const ts_node *def) {
  for (uint32_t i = 0; i < n->ninputs; i++)
    if (n->inputs[i]->node == def)
      return true;
  for (uint32_t b = 0; b < n->nblocks; b++) {
    const ts_node *m = ts_block_first(n->blocks[b]);
    for (; m != n->blocks[b]->ret; m = m->next)
      if (ts_al_uses_node(m, def))
        return true;
    if (ts_al_uses_node(m, def))
      return true;
  }
  return false;
}

bool ts_alias_can_move_before(const ts_alias_db *cdb, const ts_node *n, const ts_node *pos) {
  ts_alias_db *db = ts_al_mut(cdb);
  if (!n || !pos || !n->owner || n->owner != pos->owner || n->kind == TS_K_prim_Param ||
      n->kind == TS_K_prim_Return || pos->kind == TS_K_prim_Param)
    return false;
  if (n == pos || n->next == pos)
    return true;
  const ts_block *b = n->owner;
  bool down = false;
  for (const ts_node *m = n->next; m != b->ret && !down; m = m->next)
    down = m == pos;
  if (!down && pos != b->ret) {
    bool up = false;
    for (const ts_node *m = n->prev; m != b->ret && !up; m = m->prev)
      up = m == pos;
    if (!up)
      return false;
  } else if (pos == b->ret) {
    down = true;
  }
  uint32_t ns = ts_al_node_slot(db, n);
  if (ns == TS_AL_NONE || ts_al_effects(n))
    return false;
  /* what n reads in seen_a[ea], what it writes in seen_b[eb] */
  uint32_t ea = ts_al_next_epoch(db);
  bool found = false;
  if (!ts_al_mark_reads(db, n, db->seen_a, ea, NULL, &found))
    return false;
  uint32_t eb = ts_al_next_epoch(db);
  for (uint32_t k = 0; k < db->nw_len[ns]; k++)
    db->seen_b[db->nw.v[db->nw_off[ns] + k]] = eb;
  const ts_node *from = down ? n->next : pos, *to = down ? pos : n;
  for (const ts_node *m = from; m != to; m = m->next) {
    uint32_t ms = ts_al_node_slot(db, m);
    if (ms == TS_AL_NONE || ts_al_effects(m))
      return false;
    /* data: moving down, nothing passed may use n; moving up, n may use
     * nothing it passes */
    if (down ? ts_al_uses_node(m, n) : ts_al_uses_node(n, m))
      return false;
    /* write-read, read-write and write-write on the same memory */
    for (uint32_t k = 0; k < db->nw_len[ms]; k++) {
      uint32_t l = db->nw.v[db->nw_off[ms] + k];
      if (db->seen_a[l] == ea || db->seen_b[l] == eb)
        return false;
    }
    if (db->nw_len[ns]) {
      ts_al_hit hit = {db->seen_b, eb, NULL};
      found = false;
      if (!ts_al_mark_reads(db, m, db->seen_c, ts_al_next_epoch(db), &hit, &found) || found)
        return false;
    }
  }
  return true;
}

/* ------------------------------------------------- never-written constants */

/* g's own tensor constants get TS_NODE_NEVER_WRITTEN as db sees them; those
 * of subgraphs (fusion groups: pointwise ops only read) get it outright. */
static void ts_al_mark_block(const ts_alias_db *db, const ts_block *b, bool sub) {
  for (ts_node *n = ts_block_first(b); n != b->ret; n = n->next) {
    const ts_attr *a = ts_node_is(n, TS_K_prim_Constant) ? ts_node_attr(n, "value") : NULL;
    if (a && a->kind == TS_ATTR_TENSOR && n->noutputs == 1) {
      if (sub || !ts_alias_has_writers(db, n->outputs[0]))
        n->flags |= TS_NODE_NEVER_WRITTEN;
      else
        n->flags &= ~(uint32_t)TS_NODE_NEVER_WRITTEN;
    }
    for (uint32_t i = 0; i < n->nblocks; i++)
      ts_al_mark_block(db, n->blocks[i], sub);
    for (const ts_attr *at = n->attrs; at; at = at->next)
      if (at->kind == TS_ATTR_GRAPH && at->u.g)
        ts_al_mark_block(db, at->u.g->block, true);
  }
}

bool ts_pass_mark_never_written(ts_graph *g, ts_diag *d) {
  ts_alias_db *db = ts_alias_db_new(g, d);
  if (!db)
    return false;
  ts_al_mark_block(db, g->block, false);
  ts_alias_db_free(db);
  return true;
}
