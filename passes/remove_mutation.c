/* passes/remove_mutation.c: torch::jit::RemoveListMutation and
 * RemoveTensorMutation (passes/remove_mutation.cpp), lists first.
 *
 * Tensors: an in-place aten op `y = x.op_(...)` becomes `y = x.op(...)`
 * (the kind named without the trailing "_", with a schema that takes the
 * same inputs), and the uses of x after it read y, when
 *   - the op writes its first input and no other (alias analysis), and has
 *     one output (inplaceOpVariant);
 *   - x is a fresh value: not a graph or block input, not made by a node
 *     with blocks, a subgraph or side effects, and not aliasing or held by
 *     that node's inputs (hasSideEffectOrAlias) - so no view of another
 *     tensor, no element taken out of a list;
 *   - x's creation can move down to just before the op
 *     (ts_alias_can_move_before): same block, and nothing in between uses x
 *     (no alias of x made before the op, x put in no list) nor touches its
 *     memory; the creation is then moved there, as PyTorch does.
 * An If output whose two branch values are fresh and used only there counts
 * as fresh too (tryMakeUnaliasedIfOutputAndMutationAtomic). aten::zero_
 * becomes zeros_like and aten::fill_.Scalar full_like, PyTorch's special
 * cases; copy_(self, src, non_blocking) becomes copy, while copy_.Tensor
 * (self, other: TorchScript's own registration) stays, as in PyTorch 1.13.
 *
 * Lists: `l = prim::ListConstruct(...)` followed by `l.append(v)` (or
 * `l.insert(<constant>, v)`) becomes one ListConstruct, under the same move
 * conditions. Unlike PyTorch, a list of tensors qualifies too: PyTorch's
 * freshness test asks whether the ListConstruct's inputs may be contained
 * in the list, which tensor elements always are, though the list itself is
 * new all the same.
 *
 * Less than PyTorch: the move does not drag along nodes that depend on x's
 * creation (moveBeforeTopologicallyValid does); such cases are left alone.
 * PyTorch updates its AliasDb in place after each rewrite; here it is
 * rebuilt before the next candidate. The functional node takes the in-place
 * op's output name. */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

typedef struct ts_rm {
  ts_graph *g;
  ts_diag *d;
  ts_alias_db *db; /* NULL: stale, rebuilt on demand */
  bool failed;
} ts_rm;

static ts_alias_db *ts_rm_db(ts_rm *r) {
  if (!r->db && !r->failed) {
    r->db = ts_alias_db_new(r->g, r->d);
    if (!r->db)
      r->failed = true;
  }
  return r->db;
}

static void ts_rm_changed(ts_rm *r) {
  ts_alias_db_free(r->db);
  r->db = NULL;
}

static bool ts_rm_effects(const ts_node *n) {
  if (n->kind == TS_K_OTHER || n->kind == TS_K_prim_BailOut)
    return true;
  return n->op && (n->op->flags & TS_OPF_SIDE_EFFECT);
}

/* hasSideEffectOrAlias: whether v is not a fresh, unshared value. */
static bool ts_rm_not_fresh(ts_alias_db *db, const ts_value *v) {
  const ts_node *n = v->node;
  if (n->kind == TS_K_prim_Param || n->nblocks || ts_node_attr(n, "Subgraph") || ts_rm_effects(n))
    return true;
  for (uint32_t i = 0; i < n->ninputs; i++)
    if (ts_alias_may_alias(db, n->inputs[i], v))
      return true;
  return false;
}

/* tryMakeCreationAndMutationAtomic, and for an If output
 * tryMakeUnaliasedIfOutputAndMutationAtomic: moves the creation of v to
 * just before `op` when that is safe. */
static bool ts_rm_make_atomic(ts_rm *r, ts_value *v, ts_node *op) {
  ts_alias_db *db = ts_rm_db(r);
  if (!db)
    return false;
  ts_node *def = v->node;
  /* a ListConstruct's list is always new, even when its elements are held
   * elsewhere (PyTorch asks the elements too, which rules out Tensor[]) */
  if (ts_node_is(def, TS_K_prim_ListConstruct) || !ts_rm_not_fresh(db, v)) {
    if (!ts_alias_can_move_before(db, def, op))
      return false;
    if (def->next != op)
      ts_node_move_before(def, op);
    return true;
  }
  if (!ts_node_is(def, TS_K_prim_If) || def->nblocks != 2 || ts_block_noutputs(def->blocks[0]) != def->noutputs ||
      ts_block_noutputs(def->blocks[1]) != def->noutputs)
    return false;
  const ts_value *t = ts_block_output(def->blocks[0], v->offset);
  const ts_value *f = ts_block_output(def->blocks[1], v->offset);
  if (t->nuses > 1 || f->nuses > 1 || ts_rm_not_fresh(db, t) || ts_rm_not_fresh(db, f))
    return false;
  if (!ts_alias_can_move_before(db, def, op))
    return false;
  if (def->next != op)
    ts_node_move_before(def, op);
  return true;
}

/* ---------------------------------------------------------------- lists */

static bool ts_rm_list_candidate(const ts_node *n) {
  if (n->ninputs < 1 || !ts_node_is(n->inputs[0]->node, TS_K_prim_ListConstruct))
    return false;
  if (ts_node_is(n, TS_K_aten_append))
    return n->ninputs == 2;
  int64_t pos;
  return ts_node_is(n, TS_K_aten_insert) && n->ninputs == 3 && ts_pass_const_int(n->inputs[1], &pos);
}

/* Rebuilds the ListConstruct's inputs with `v` at `pos`. */
static bool ts_rm_list_insert(ts_node *lc, uint32_t pos, ts_value *v) {
  uint32_t n = lc->ninputs;
  ts_value **old = malloc((size_t)(n ? n : 1) * sizeof *old);
  if (!old)
    return false;
  if (n)
    memcpy(old, lc->inputs, (size_t)n * sizeof *old);
  ts_node_remove_all_inputs(lc);
  bool ok = true;
  for (uint32_t i = 0; i <= n && ok; i++) {
    if (i == pos)
      ok = ts_node_add_input(lc, v);
    if (i < n && ok)
      ok = ts_node_add_input(lc, old[i]);
  }
  free(old);
  return ok;
}

static bool ts_rm_lists(ts_rm *r, ts_block *b) {
  for (ts_node *n = ts_block_first(b); n != b->ret && !r->failed;) {
    ts_node *next = n->next;
    for (uint32_t i = 0; i < n->nblocks; i++)
      if (!ts_rm_lists(r, n->blocks[i]))
        return false;
    if (!ts_rm_list_candidate(n)) {
      n = next;
      continue;
    }
    ts_value *list = n->inputs[0];
    if (!ts_rm_make_atomic(r, list, n)) {
      n = next;
      continue;
    }
    ts_node *lc = list->node;
    uint32_t size = lc->ninputs, pos = size;
    ts_value *elem = n->inputs[n->ninputs - 1];
    if (ts_node_is(n, TS_K_aten_insert)) {
      int64_t p = 0;
      ts_pass_const_int(n->inputs[1], &p);
      /* list.insert: a negative position counts from the end, clamped */
      if (p < 0)
        p = p + (int64_t)size < 0 ? 0 : p + (int64_t)size;
      pos = p > (int64_t)size ? size : (uint32_t)p;
    }
    if (!ts_rm_list_insert(lc, pos, elem))
      return false;
    for (uint32_t i = 0; i < n->noutputs; i++)
      ts_value_replace_all_uses(n->outputs[i], list);
    ts_node_destroy(n);
    ts_rm_changed(r);
    n = next;
  }
  return !r->failed;
}

/* -------------------------------------------------------------- tensors */

/* The functional kind of an in-place op (inplaceOpVariant), TS_K_OTHER if
 * it has none or is not one. */
static ts_kind ts_rm_functional(ts_rm *r, const ts_node *n) {
  if (n->kind == TS_K_OTHER || strncmp(n->kind_name, "aten::", 6) != 0 || n->noutputs != 1 || n->ninputs < 1)
    return TS_K_OTHER;
  const ts_schema *s = ts_node_schema(n);
  if (!s)
    return TS_K_OTHER;
  ts_kind k;
  if (ts_node_is(n, TS_K_aten_zero_) && n->ninputs == 1) {
    k = TS_K_aten_zeros_like;
  } else if (ts_node_is(n, TS_K_aten_fill_) && n->ninputs == 2 && strcmp(s->overload, "Scalar") == 0) {
    k = TS_K_aten_full_like;
  } else if (ts_node_is(n, TS_K_aten_copy_) && strcmp(s->overload, "") != 0) {
    return TS_K_OTHER;
  } else {
    size_t len = strlen(n->kind_name);
    if (len < 8 || n->kind_name[len - 1] != '_' || n->kind_name[len - 2] == '_')
      return TS_K_OTHER;
    k = ts_kind_lookup(n->kind_name, len - 1);
    if (k == TS_K_OTHER)
      return TS_K_OTHER;
  }
  ts_alias_db *db = ts_rm_db(r);
  if (!db || !ts_alias_node_writes_to(db, n, n->inputs[0]))
    return TS_K_OTHER;
  for (uint32_t i = 1; i < n->ninputs; i++)
    if (ts_alias_node_writes_to(db, n, n->inputs[i]))
      return TS_K_OTHER;
  return k;
}

/* The node of `b` holding `n`, or NULL. */
static const ts_node *ts_rm_in_block(const ts_node *n, const ts_block *b) {
  while (n && n->owner != b)
    n = n->owner ? n->owner->owner_node : NULL;
  return n;
}

/* Value::replaceAllUsesAfterNodeWith: uses of v by nodes after `after` in
 * its block (or nested in them, or the block's return) read `by`. */
static bool ts_rm_replace_after(ts_value *v, const ts_node *after, ts_value *by) {
  uint32_t n = v->nuses;
  ts_use *uses = malloc((size_t)(n ? n : 1) * sizeof *uses);
  if (!uses)
    return false;
  if (n)
    memcpy(uses, v->uses, (size_t)n * sizeof *uses);
  const ts_block *b = after->owner;
  for (uint32_t i = 0; i < n; i++) {
    const ts_node *a = ts_rm_in_block(uses[i].user, b);
    bool later = a == b->ret;
    for (const ts_node *m = after->next; a && !later && m != b->ret; m = m->next)
      later = m == a;
    if (later)
      ts_node_replace_input(uses[i].user, uses[i].index, by);
  }
  free(uses);
  return true;
}

/* The functional node for `op`, inserted before it; NULL when the functional
 * kind has no schema for these inputs (the node is then dropped). */
static ts_node *ts_rm_make_functional(ts_rm *r, ts_node *op, ts_kind k) {
  ts_node *f = ts_node_new(r->g, k, 1);
  if (!f)
    return NULL;
  ts_node_insert_before(f, op);
  f->loc = op->loc;
  uint32_t nin = op->ninputs;
  if (k == TS_K_aten_zeros_like)
    nin = 1;
  for (uint32_t i = 0; i < nin; i++)
    if (!ts_node_add_input(f, op->inputs[i]))
      break;
  ts_value_set_type(f->outputs[0], op->outputs[0]->type);
  const ts_schema *fs = ts_graph_ok(r->g) ? ts_node_schema(f) : NULL;
  /* zeros_like/full_like take dtype, layout, ... after what fill_ had */
  if (!fs || !ts_pass_node_add_defaults(f, fs) || ts_node_schema(f) != fs) {
    ts_node_destroy(f);
    return NULL;
  }
  return f;
}

static bool ts_rm_tensors(ts_rm *r, ts_block *b) {
  for (ts_node *n = ts_block_first(b); n != b->ret && !r->failed;) {
    ts_node *next = n->next;
    for (uint32_t i = 0; i < n->nblocks; i++)
      if (!ts_rm_tensors(r, n->blocks[i]))
        return false;
    ts_kind k = ts_rm_functional(r, n);
    ts_value *x = k == TS_K_OTHER ? NULL : n->inputs[0];
    if (!x || !ts_rm_make_atomic(r, x, n)) {
      n = next;
      continue;
    }
    ts_node *f = ts_rm_make_functional(r, n, k);
    if (!f) {
      if (!ts_graph_ok(r->g))
        return false;
      /* the move above changed the order: the db must be rebuilt */
      ts_rm_changed(r);
      n = next;
      continue;
    }
    if (!ts_rm_replace_after(x, n, f->outputs[0]))
      return false;
    ts_value_replace_all_uses(n->outputs[0], f->outputs[0]);
    const char *name = n->outputs[0]->name;
    char *keep = name ? ts_arena_strdup(ts_graph_arena(r->g), name) : NULL;
    ts_node_destroy(n);
    if (keep)
      ts_value_set_name(f->outputs[0], keep);
    ts_rm_changed(r);
    n = next;
  }
  return !r->failed;
}

bool ts_pass_remove_mutation(ts_graph *g, ts_diag *d) {
  ts_rm r = {.g = g, .d = d};
  bool ok = ts_rm_lists(&r, g->block);
  ts_rm_changed(&r);
  ok = ok && ts_rm_tensors(&r, g->block);
  ts_rm_changed(&r);
  if (!ok || !ts_graph_ok(g)) {
    if (ts_graph_ok(g) && r.failed)
      return false; /* the alias db said why */
    ts_diag_error(d, "remove-mutation: out of memory");
    return false;
  }
  return true;
}
