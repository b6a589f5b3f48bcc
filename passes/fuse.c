/* passes/fuse.c: torch::jit::FuseGraph, the graph fuser of PyTorch 1.x
 * (torch/csrc/jit/passes/graph_fuser.cpp), making the prim::FusionGroup
 * nodes that the interpreter runs as subgraphs and code generation will
 * turn into one loop each.
 *
 * Each block is scanned backwards. A consumer (a fusible op, or a group
 * made already) looks at the nodes that produce its inputs, latest first,
 * and pulls a producer into its group (making the group first when the
 * consumer is a plain op) when the producer is fusible and can move down to
 * the consumer; outputs of the producer used after the consumer become
 * outputs of the group. A producer that is a group is merged whole. The scan
 * repeats until nothing changes, as PyTorch's does. Then, per block: cat
 * nodes at group outputs, groups of a single op undone, except for ops
 * worth a native kernel of their own (ts_fu_worth_alone, the rows of
 * ir/ops.def marked TS_PWR_ALONE: a lone gelu, tanh, relu, ... on typed
 * float tensors gets a group of one). Nested
 * blocks are fused on their own;
 * nodes of different blocks never share a group. A subgraph holds one
 * constant per value, placed before its first use (PyTorch runs
 * ConstantPooling on its groups).
 *
 * Fusible: a node of a TS_OPF_POINTWISE kind (a TS_PW row of ir/ops.def)
 * whose overload (ts_node_schema) returns one Tensor, has no alias
 * annotation at all (no in-place or out= form), and takes at least one
 * Tensor; its other inputs
 * are scalar constants (copied into the subgraph, as PyTorch does) or
 * non-constant int/float/bool values (inputs of the group). So add.Tensor
 * fuses and add.int or add.str does not. aten::to is not pointwise here: it
 * returns its input itself when the dtype already matches (Tensor(a) in its
 * schema), and a value computed inside a group is a fresh tensor. type_as
 * is, as in PyTorch.
 *
 * Moving a producer down to its consumer (PyTorch asks
 * AliasDb::moveBeforeTopologicallyValid, which may also drag other nodes
 * along; nothing is dragged here): no use of the producer's outputs may lie
 * in between; nodes in between that write nothing (no "!" argument) and
 * have no side effects are passed freely, since the producer only reads; a
 * node that writes is passed only when alias analysis says the move is
 * valid (ts_alias_can_move_before, on a db rebuilt after each change of the
 * graph); side effects (Print, RaiseException, calls, unknown ops) are never
 * passed, so printed output and raised exceptions keep their order (a
 * kernel error of a moved op, such as mismatched sizes, may now come after
 * one of a node it passed, as in PyTorch).
 *
 * Chunks: ListUnpack(aten::chunk(x, n, d)) with constant n and d, feeding a
 * fusible op, becomes prim::ConstantChunk[chunks=n, dim=d](x) first (the
 * peephole pass does the same). A ConstantChunk between a fusible producer
 * p and a consumer is pushed up through p (chunk(a + b) = chunk(a) +
 * chunk(b)) when the refined types show that every tensor operand of p has
 * p's full size along the chunked dimension, so no operand is broadcast
 * along it (a 1-d bias of size 4H chunked along the last dimension of a
 * [B, 4H] sum is fine); PyTorch also handles the other cases with
 * broadcast_tensors (prim::BroadcastingChunk), here the chunk then stays
 * outside and the group starts after it. Unlike PyTorch, a ConstantChunk at
 * a group's inputs stays outside the group: it is a view, and the group's
 * kernel (codegen/fusion.c) reads its parts through their strides, where a
 * chunk inside would keep the whole group in the interpreter.
 *
 * cat: aten::cat(prim::ListConstruct(...), dim) with a constant dim, whose
 * list only the cat reads, becomes a group output and its fusible inputs
 * join that group. PyTorch turns it into a prim::FusedConcat; here the
 * ListConstruct and aten::cat go into the subgraph as they are (the
 * interpreter runs them; code generation is to store each part at its
 * offset). As in PyTorch, a group holding a cat is not merged into another.
 *
 * Less than PyTorch: no device, dtype or shape conditions (everything runs
 * on the CPU and the interpreter runs any dtype with broadcasting); no
 * removal of group outputs used only by aten::size; no rand_like. More: a
 * group of one cheap op is undone (the subgraph call costs more than it
 * saves).
 * The limit of 128 inputs and outputs per group is PyTorch's. */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

enum { TS_FU_MAX_ARGS = 128 };

typedef struct ts_fu {
  ts_graph *g;
  ts_diag *d;
  ts_alias_db *db; /* built on demand; NULL when not built or stale */
  bool failed;     /* allocation failure */
} ts_fu;

/* The graph changed: the alias db describes the old one. */
static void ts_fu_changed(ts_fu *f) {
  if (f->db) {
    ts_alias_db_free(f->db);
    f->db = NULL;
  }
}

static bool ts_fu_oom(ts_fu *f) {
  f->failed = true;
  return false;
}

/* ------------------------------------------------------------ predicates */

static bool ts_fu_is_tensor(const ts_value *v) { return v->type && v->type->kind == TS_TY_TENSOR; }

/* A prim::Constant holding an immutable scalar (int, float, bool, str,
 * None, Device), which a group copies into its subgraph. */
static bool ts_fu_scalar_const(const ts_value *v) {
  ts_cval c;
  return ts_pass_const_get(v, &c);
}

/* The fusible ops: see the file comment. */
static bool ts_fu_pointwise(const ts_node *n) {
  if (!n->op || !(n->op->flags & TS_OPF_POINTWISE) || n->noutputs != 1 || n->nblocks)
    return false;
  const ts_schema *s = ts_node_schema(n);
  if (!s || s->nrets != 1 || s->vararg || s->varret || s->rets[0].alias || s->rets[0].type->kind != TS_TY_TENSOR ||
      !ts_fu_is_tensor(n->outputs[0]))
    return false;
  for (uint32_t i = 0; i < s->nargs; i++)
    if (s->args[i].alias)
      return false;
  for (const ts_attr *a = n->attrs; a; a = a->next)
    if (a->kind == TS_ATTR_GRAPH)
      return false;
  bool tensor = false;
  for (uint32_t i = 0; i < n->ninputs; i++) {
    const ts_value *v = n->inputs[i];
    if (ts_fu_is_tensor(v))
      tensor = true;
    else if (!ts_fu_scalar_const(v) && v->type->kind != TS_TY_INT && v->type->kind != TS_TY_FLOAT &&
             v->type->kind != TS_TY_BOOL)
      return false;
  }
  return tensor;
}

/* The subgraph of a prim::FusionGroup whose signature matches the node's,
 * or NULL. */
static ts_graph *ts_fu_subgraph(const ts_node *n) {
  if (!ts_node_is(n, TS_K_prim_FusionGroup))
    return NULL;
  const ts_attr *a = ts_node_attr(n, "Subgraph");
  if (!a || a->kind != TS_ATTR_GRAPH || !a->u.g)
    return NULL;
  const ts_block *b = a->u.g->block;
  if (ts_block_ninputs(b) != n->ninputs || ts_block_noutputs(b) != n->noutputs || n->nblocks)
    return NULL;
  return a->u.g;
}

/* A group this pass may extend: made of fusible ops, scalar constants,
 * ConstantChunks and (when `cat_ok`) ListConstruct + cat. */
static bool ts_fu_group_ok(const ts_node *n, bool cat_ok) {
  const ts_graph *sub = ts_fu_subgraph(n);
  if (!sub)
    return false;
  const ts_block *b = sub->block;
  for (const ts_node *x = ts_block_first(b); x != b->ret; x = x->next) {
    if (ts_node_is(x, TS_K_prim_Constant) || ts_node_is(x, TS_K_prim_ConstantChunk) || ts_fu_pointwise(x))
      continue;
    if (cat_ok && (ts_node_is(x, TS_K_prim_ListConstruct) || ts_node_is(x, TS_K_aten_cat)))
      continue;
    return false;
  }
  return true;
}

/* What moving a pure node past `n` risks: 0 nothing (n writes nothing and
 * has no side effects), 1 n writes through a "!" argument, 2 side effects
 * or an op whose effects are unknown. */
static int ts_fu_effects(const ts_node *n) {
  int e = 0;
  if (ts_node_is(n, TS_K_prim_FusionGroup)) {
    const ts_graph *sub = ts_fu_subgraph(n);
    if (!sub)
      return 2;
    for (const ts_node *x = ts_block_first(sub->block); x != sub->block->ret && e < 2; x = x->next) {
      int k = ts_fu_effects(x);
      e = k > e ? k : e;
    }
    return e;
  }
  if (n->kind == TS_K_OTHER || !n->op || (n->op->flags & TS_OPF_SIDE_EFFECT))
    return 2;
  for (uint32_t i = 0; i < n->nblocks && e < 2; i++)
    for (const ts_node *x = ts_block_first(n->blocks[i]); x != n->blocks[i]->ret && e < 2; x = x->next) {
      int k = ts_fu_effects(x);
      e = k > e ? k : e;
    }
  switch (n->kind) {
  /* structure: reads, or makes references, and writes nothing */
  case TS_K_prim_Constant:
  case TS_K_prim_ConstantChunk:
  case TS_K_prim_ListConstruct:
  case TS_K_prim_ListUnpack:
  case TS_K_prim_TupleConstruct:
  case TS_K_prim_TupleUnpack:
  case TS_K_prim_TupleIndex:
  case TS_K_prim_TupleSlice:
  case TS_K_prim_DictConstruct:
  case TS_K_prim_GetAttr:
  case TS_K_prim_CreateObject:
  case TS_K_prim_Uninitialized:
  case TS_K_prim_If:
  case TS_K_prim_Loop:
  case TS_K_prim_isinstance:
  case TS_K_prim_tolist:
    return e;
  default:
    break;
  }
  if (!n->op->nschemas)
    return 2;
  const ts_schema *s = ts_node_schema(n);
  if (!s)
    return 2;
  for (uint32_t i = 0; i < s->nargs; i++)
    if (s->args[i].alias && s->args[i].alias->is_write)
      e = e > 1 ? e : 1;
  return e;
}

/* The node of block b that is or holds `n`, or NULL. */
static ts_node *ts_fu_in_block(ts_node *n, const ts_block *b) {
  while (n && n->owner != b)
    n = n->owner ? n->owner->owner_node : NULL;
  return n;
}

/* Whether `p` (before `c` in the same block) can move to just before `c`:
 * no use of its outputs lies between them, no node between has side
 * effects, and alias analysis allows passing the ones that write. */
static bool ts_fu_can_move(ts_fu *f, ts_node *p, ts_node *c) {
  if (p->owner != c->owner)
    return false;
  bool writer = false;
  for (ts_node *x = p->next; x != c; x = x->next) {
    if (x == p->owner->ret)
      return false; /* c is not after p */
    for (uint32_t i = 0; i < p->noutputs; i++)
      for (uint32_t k = 0; k < p->outputs[i]->nuses; k++)
        if (ts_fu_in_block(p->outputs[i]->uses[k].user, p->owner) == x)
          return false;
    int e = ts_fu_effects(x);
    if (e == 2)
      return false;
    writer |= e == 1;
  }
  if (!writer)
    return true;
  if (!f->db) {
    /* a db that cannot be built answers nothing: stay where we are */
    ts_diag quiet = {0};
    f->db = ts_alias_db_new(f->g, &quiet);
    ts_diag_free(&quiet);
    if (!f->db)
      return false;
  }
  return ts_alias_can_move_before(f->db, p, c);
}

/* --------------------------------------------------------- graph editing */

static const ts_type *ts_fu_type_for(ts_graph *dst, const ts_type *t) {
  return ts_type_clone(ts_graph_arena(dst), t);
}

/* Gives `to` the debug name of `from` (which loses it). */
static void ts_fu_take_name(ts_value *to, ts_value *from) {
  const char *name = from->name;
  if (!name)
    return;
  ts_value_set_name(from, NULL);
  ts_value_set_name(to, name);
}

/* A copy of `n` in graph `dst` reading `inputs`, not linked: outputs with
 * their types (and names, in another graph), attributes, source location.
 * NULL on OOM. */
static ts_node *ts_fu_clone(ts_graph *dst, const ts_node *n, ts_value *const *inputs) {
  ts_node *r = n->kind == TS_K_OTHER ? ts_node_new_named(dst, n->kind_name, strlen(n->kind_name), 0)
                                     : ts_node_new(dst, n->kind, 0);
  if (!r)
    return NULL;
  for (uint32_t i = 0; i < n->noutputs; i++) {
    const ts_type *t = ts_fu_type_for(dst, n->outputs[i]->type);
    ts_value *o = t ? ts_node_add_output(r, t) : NULL;
    if (!o)
      return NULL;
    if (n->outputs[i]->name && dst != n->graph)
      ts_value_set_name(o, n->outputs[i]->name);
  }
  for (const ts_attr *a = n->attrs; a; a = a->next) {
    bool ok = false;
    switch (a->kind) {
    case TS_ATTR_INT: ok = ts_node_set_i(r, a->name, a->u.i); break;
    case TS_ATTR_FLOAT: ok = ts_node_set_f(r, a->name, a->u.f); break;
    case TS_ATTR_STR: ok = ts_node_set_s(r, a->name, a->u.s, a->len); break;
    case TS_ATTR_TENSOR: ok = ts_node_set_t(r, a->name, a->u.t); break;
    case TS_ATTR_TYPE: ok = ts_node_set_ty(r, a->name, a->u.ty); break;
    case TS_ATTR_INTS: ok = ts_node_set_is(r, a->name, a->u.is, a->len); break;
    case TS_ATTR_FLOATS: ok = ts_node_set_fs(r, a->name, a->u.fs, a->len); break;
    case TS_ATTR_STRS: ok = ts_node_set_ss(r, a->name, a->u.ss, a->len); break;
    case TS_ATTR_TENSORS: ok = ts_node_set_ts(r, a->name, a->u.ts, a->len); break;
    case TS_ATTR_GRAPH: ok = false; break; /* never on a fusible node */
    }
    if (!ok)
      return NULL;
  }
  r->loc = n->loc;
  if (n->loc.file && dst != n->graph && !(r->loc.file = ts_arena_strdup(ts_graph_arena(dst), n->loc.file)))
    return NULL;
  for (uint32_t i = 0; i < n->ninputs; i++)
    if (!ts_node_add_input(r, inputs[i]))
      return NULL;
  return r;
}

static int64_t ts_fu_input_index(const ts_node *grp, const ts_value *v) {
  for (uint32_t i = 0; i < grp->ninputs; i++)
    if (grp->inputs[i] == v)
      return i;
  return -1;
}

/* Copies `n` into the subgraph of `grp`, before everything there (n comes
 * before all the nodes already merged): its inputs become group inputs, or
 * scalar constants of the subgraph (one per value, as PyTorch's
 * ConstantPooling leaves its groups); group inputs that were n's outputs
 * become the copy's outputs. Returns the copy; `n` stays where it is. */
static ts_node *ts_fu_merge_node(ts_fu *f, ts_node *grp, ts_node *n) {
  ts_graph *sub = ts_fu_subgraph(grp);
  ts_block *sb = sub->block;
  ts_value **in = malloc((n->ninputs ? n->ninputs : 1) * sizeof *in);
  if (!in) {
    ts_fu_oom(f);
    return NULL;
  }
  ts_node *r = NULL;
  for (uint32_t i = 0; i < n->ninputs; i++) {
    ts_value *v = n->inputs[i];
    int64_t k = ts_fu_input_index(grp, v);
    if (k >= 0) {
      in[i] = ts_block_input(sb, (uint32_t)k);
    } else if (ts_fu_scalar_const(v)) {
      ts_node *c = ts_block_first(sb);
      while (c != sb->ret && !(ts_node_is(c, TS_K_prim_Constant) && ts_pass_const_nodes_equal(c, v->node)))
        c = c->next;
      if (c == sb->ret) {
        if (!(c = ts_fu_clone(sub, v->node, NULL)))
          goto done;
        ts_node_insert_before(c, ts_block_first(sb));
      }
      in[i] = c->outputs[0];
    } else {
      const ts_type *t = ts_fu_type_for(sub, v->type);
      ts_value *p = t ? ts_block_add_input(sb, t) : NULL;
      if (!p || !ts_node_add_input(grp, v))
        goto done;
      if (v->name)
        ts_value_set_name(p, v->name);
      in[i] = p;
    }
  }
  r = ts_fu_clone(sub, n, in);
  if (!r)
    goto done;
  ts_node_insert_before(r, ts_block_first(sb));
  /* the constants it reads go in front of it (they read nothing) */
  for (uint32_t i = 0; i < r->ninputs; i++)
    if (ts_node_is(r->inputs[i]->node, TS_K_prim_Constant) && r->inputs[i]->node->owner == sb)
      ts_node_move_before(r->inputs[i]->node, r);
  for (uint32_t i = 0; i < n->noutputs; i++) {
    int64_t k = ts_fu_input_index(grp, n->outputs[i]);
    if (k < 0)
      continue;
    ts_value_replace_all_uses(ts_block_input(sb, (uint32_t)k), r->outputs[i]);
    ts_node_remove_input(grp, (uint32_t)k);
    ts_node_remove_output(sb->param, (uint32_t)k);
  }
done:
  free(in);
  if (!r || !ts_graph_ok(sub) || !ts_graph_ok(f->g))
    ts_fu_oom(f);
  return f->failed ? NULL : r;
}

/* Makes `v` (an output of n, whose copy in grp's subgraph is `inner`) an
 * output of the group: later uses read the group's output. */
static bool ts_fu_add_output(ts_fu *f, ts_node *grp, ts_value *v, ts_value *inner) {
  ts_graph *sub = ts_fu_subgraph(grp);
  ts_value *o = ts_node_add_output(grp, v->type);
  if (!o || !ts_block_add_output(sub->block, inner))
    return ts_fu_oom(f);
  ts_fu_take_name(o, v);
  ts_value_replace_all_uses(v, o);
  return true;
}

/* createSingletonFusionGroup: a group holding only n, in n's place. */
static ts_node *ts_fu_singleton(ts_fu *f, ts_node *n) {
  ts_graph *g = n->graph;
  ts_node *grp = ts_node_new(g, TS_K_prim_FusionGroup, 0);
  ts_graph *sub = grp ? ts_graph_new_subgraph(g) : NULL;
  if (!sub || !ts_node_set_g(grp, "Subgraph", sub)) {
    ts_fu_oom(f);
    return NULL;
  }
  ts_node_insert_before(grp, n);
  ts_fu_changed(f);
  ts_node *inner = ts_fu_merge_node(f, grp, n);
  if (!inner)
    return NULL;
  for (uint32_t i = 0; i < n->noutputs; i++) {
    ts_value *o = ts_node_add_output(grp, n->outputs[i]->type);
    if (!o || !ts_block_add_output(sub->block, inner->outputs[i])) {
      ts_fu_oom(f);
      return NULL;
    }
    ts_fu_take_name(o, n->outputs[i]);
    ts_value_replace_all_uses(n->outputs[i], o);
  }
  ts_node_destroy(n);
  return grp;
}

/* Puts the nodes of group `grp` back in its place (the inverse of fusing).
 * The copies go between *first and *last (NULL when the subgraph was
 * empty). */
static bool ts_fu_unmerge(ts_fu *f, ts_node *grp, ts_node **first, ts_node **last) {
  ts_graph *sub = ts_fu_subgraph(grp);
  ts_node *before = grp->prev;
  uint32_t n = grp->noutputs;
  ts_value **outs = malloc((n ? n : 1) * sizeof *outs);
  if (!outs)
    return ts_fu_oom(f);
  ts_fu_changed(f);
  /* the copies take the inner names; the group's outputs go away */
  for (uint32_t i = 0; i < n; i++)
    ts_value_set_name(grp->outputs[i], NULL);
  if (!ts_block_clone_before(sub->block, grp, grp->inputs, outs)) {
    free(outs);
    return ts_fu_oom(f);
  }
  for (uint32_t i = 0; i < n; i++)
    ts_value_replace_all_uses(grp->outputs[i], outs[i]);
  free(outs);
  *first = before->next != grp ? before->next : NULL;
  *last = *first ? grp->prev : NULL;
  ts_node_destroy(grp);
  return ts_graph_ok(f->g) || ts_fu_oom(f);
}

/* mergeFusionGroups: the producer group's nodes are put back in the outer
 * block, then merged into the consumer group one by one, last first. */
static bool ts_fu_merge_groups(ts_fu *f, ts_node *cons, ts_node *prod) {
  ts_node *first, *last;
  if (!ts_fu_unmerge(f, prod, &first, &last))
    return false;
  if (!first)
    return true;
  for (ts_node *x = last, *stop = first->prev; x != stop;) {
    ts_node *prev = x->prev;
    bool used = false;
    for (uint32_t i = 0; i < x->noutputs; i++)
      used |= x->outputs[i]->nuses > 0;
    if (used) {
      ts_node *inner = ts_fu_merge_node(f, cons, x);
      if (!inner)
        return false;
      for (uint32_t i = 0; i < x->noutputs; i++)
        if (x->outputs[i]->nuses && !ts_fu_add_output(f, cons, x->outputs[i], inner->outputs[i]))
          return false;
    }
    ts_node_destroy(x);
    x = prev;
  }
  return true;
}

/* --------------------------------------------------------------- fusing */

/* A node the consumer may pull in: a fusible op, or a group without a cat. */
static bool ts_fu_producer_ok(const ts_node *p, const ts_block *b) {
  if (p->owner != b)
    return false;
  return ts_fu_pointwise(p) || ts_fu_group_ok(p, false);
}

static bool ts_fu_consumer_ok(const ts_node *c) { return ts_fu_pointwise(c) || ts_fu_group_ok(c, true); }

/* Whether an output of p is chunked inside group c: a ConstantChunk in a
 * group reads a group input (PyTorch's invariant; one loop over the group's
 * output cannot chunk a value it computes). */
static bool ts_fu_feeds_chunk(const ts_node *c, const ts_node *p) {
  const ts_graph *sub = ts_node_is(c, TS_K_prim_FusionGroup) ? ts_fu_subgraph(c) : NULL;
  for (uint32_t i = 0; sub && i < p->noutputs; i++) {
    int64_t k = ts_fu_input_index(c, p->outputs[i]);
    const ts_value *in = k >= 0 ? ts_block_input(sub->block, (uint32_t)k) : NULL;
    for (uint32_t u = 0; in && u < in->nuses; u++)
      if (ts_node_is(in->uses[u].user, TS_K_prim_ConstantChunk))
        return true;
  }
  return false;
}

/* tryFuse: pulls producer p into consumer c's group. Returns the group, or
 * NULL when p cannot join (f->failed tells an allocation failure). */
static ts_node *ts_fu_try_fuse(ts_fu *f, ts_node *c, ts_node *p) {
  if (!ts_fu_producer_ok(p, c->owner) || ts_fu_feeds_chunk(c, p) || !ts_fu_can_move(f, p, c))
    return NULL;
  if ((uint64_t)c->ninputs + c->noutputs + p->ninputs + p->noutputs > TS_FU_MAX_ARGS)
    return NULL;
  ts_node *grp = ts_node_is(c, TS_K_prim_FusionGroup) ? c : ts_fu_singleton(f, c);
  if (!grp)
    return NULL;
  ts_fu_changed(f);
  if (ts_node_is(p, TS_K_prim_FusionGroup))
    return ts_fu_merge_groups(f, grp, p) ? grp : NULL;
  ts_node *inner = ts_fu_merge_node(f, grp, p);
  if (!inner)
    return NULL;
  for (uint32_t i = 0; i < p->noutputs; i++)
    if (p->outputs[i]->nuses && !ts_fu_add_output(f, grp, p->outputs[i], inner->outputs[i]))
      return NULL;
  ts_node_destroy(p);
  return grp;
}

/* Whether every use of every output of n is by `user`. */
static bool ts_fu_only_used_by(const ts_node *n, const ts_node *user) {
  for (uint32_t i = 0; i < n->noutputs; i++)
    for (uint32_t k = 0; k < n->outputs[i]->nuses; k++)
      if (n->outputs[i]->uses[k].user != user)
        return false;
  return true;
}

static bool ts_fu_attr_int(const ts_node *n, const char *name, int64_t *out) {
  const ts_attr *a = ts_node_attr(n, name);
  if (!a || a->kind != TS_ATTR_INT)
    return false;
  *out = a->u.i;
  return true;
}

static const ts_tensor_info *ts_fu_info(const ts_value *v) {
  const ts_tensor_info *t = ts_fu_is_tensor(v) ? v->type->tensor : NULL;
  return t && t->rank >= 0 && t->sizes ? t : NULL;
}

/* The size of dimension d of v's refined type, or -1 when unknown. */
static int64_t ts_fu_size(const ts_value *v, int64_t d) {
  const ts_tensor_info *t = ts_fu_info(v);
  return t && d >= 0 && d < t->rank ? t->sizes[d] : -1;
}

/* v's type with dimension d of size `size` (-1: unknown) and no strides
 * (a chunk's part, or a fresh result); plain Tensor when v's is not
 * refined. */
static const ts_type *ts_fu_resized(ts_fu *f, const ts_type *t, int64_t d, int64_t size) {
  if (!t->tensor || t->tensor->rank < 0 || !t->tensor->sizes || d < 0 || d >= t->tensor->rank) {
    if (!t->tensor)
      return t;
    ts_tensor_info info = *t->tensor;
    info.strides = NULL;
    const ts_type *r = ts_type_tensor(ts_graph_arena(f->g), &info);
    return r ? r : (ts_fu_oom(f), t);
  }
  ts_tensor_info info = *t->tensor;
  int64_t *sizes = ts_arena_alloc(ts_graph_arena(f->g), (size_t)info.rank * sizeof *sizes);
  if (!sizes) {
    ts_fu_oom(f);
    return t;
  }
  memcpy(sizes, info.sizes, (size_t)info.rank * sizeof *sizes);
  sizes[d] = size;
  info.sizes = sizes;
  info.strides = NULL;
  const ts_type *r = ts_type_tensor(ts_graph_arena(f->g), &info);
  return r ? r : (ts_fu_oom(f), t);
}

/* tryToMoveChunk: k = ConstantChunk(p(a, b, ...)) read only by consumer c
 * becomes ConstantChunk(a), ConstantChunk(b), ... and one p per part, in
 * k's place, when the types show that no operand of p is broadcast along
 * the chunked dimension. */
static bool ts_fu_try_move_chunk(ts_fu *f, ts_node *c, ts_node *k) {
  int64_t chunks, dim;
  if (!ts_node_is(k, TS_K_prim_ConstantChunk) || k->owner != c->owner || k->ninputs != 1 ||
      !ts_fu_attr_int(k, "chunks", &chunks) || !ts_fu_attr_int(k, "dim", &dim) || chunks < 2 ||
      (int64_t)k->noutputs != chunks || !ts_fu_only_used_by(k, c))
    return false;
  ts_value *x = k->inputs[0];
  ts_node *p = x->node;
  if (p->owner != k->owner || !ts_fu_pointwise(p) || x->nuses != 1)
    return false;
  const ts_tensor_info *xi = ts_fu_info(x);
  if (!xi)
    return false;
  int64_t rank = xi->rank, d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= rank || xi->sizes[d] == -1)
    return false;
  for (uint32_t i = 0; i < p->ninputs; i++) {
    const ts_value *a = p->inputs[i];
    if (!ts_fu_is_tensor(a))
      continue;
    const ts_tensor_info *ai = ts_fu_info(a);
    int64_t ad = ai ? d - (rank - ai->rank) : -1;
    if (!ai || ai->rank > rank || ad < 0 || ai->sizes[ad] != xi->sizes[d])
      return false;
  }
  if (!ts_fu_can_move(f, p, k))
    return false;
  ts_fu_changed(f);
  /* cks[i]: the ConstantChunk of operand i (one per distinct tensor) */
  uint32_t n = p->ninputs, nparts = (uint32_t)chunks;
  ts_node **cks = calloc(n ? n : 1, sizeof *cks);
  ts_value **in = calloc(n ? n : 1, sizeof *in);
  if (!cks || !in)
    goto oom;
  for (uint32_t i = 0; i < n; i++) {
    ts_value *a = p->inputs[i];
    if (!ts_fu_is_tensor(a))
      continue;
    for (uint32_t j = 0; j < i && !cks[i]; j++)
      if (p->inputs[j] == a)
        cks[i] = cks[j];
    if (cks[i])
      continue;
    int64_t ad = d - (rank - ts_fu_info(a)->rank);
    ts_node *ck = ts_node_new(f->g, TS_K_prim_ConstantChunk, 0);
    if (!ck || !ts_node_set_i(ck, "chunks", chunks) || !ts_node_set_i(ck, "dim", ad) || !ts_node_add_input(ck, a))
      goto oom;
    ck->loc = k->loc;
    for (uint32_t j = 0; j < nparts; j++)
      if (!ts_node_add_output(ck, ts_fu_resized(f, a->type, ad, ts_fu_size(k->outputs[j], d))))
        goto oom;
    ts_node_insert_before(ck, k);
    cks[i] = ck;
  }
  for (uint32_t j = 0; j < nparts; j++) {
    for (uint32_t i = 0; i < n; i++)
      in[i] = cks[i] ? cks[i]->outputs[j] : p->inputs[i];
    ts_node *op = ts_fu_clone(f->g, p, in);
    if (!op)
      goto oom;
    ts_value_set_type(op->outputs[0], ts_fu_resized(f, k->outputs[j]->type, -1, -1));
    ts_node_insert_before(op, k);
    ts_fu_take_name(op->outputs[0], k->outputs[j]);
    ts_value_replace_all_uses(k->outputs[j], op->outputs[0]);
  }
  free(cks);
  free(in);
  ts_node_destroy(k);
  ts_node_destroy(p);
  return !f->failed && (ts_graph_ok(f->g) || ts_fu_oom(f));
oom:
  free(cks);
  free(in);
  return ts_fu_oom(f);
}

/* The distinct nodes of block b producing inputs of n, latest first. */
static uint32_t ts_fu_producers(const ts_node *n, const ts_block *b, ts_node **out, uint32_t cap) {
  uint32_t want = 0, got = 0;
  for (uint32_t i = 0; i < n->ninputs; i++) {
    const ts_node *p = n->inputs[i]->node;
    bool seen = p->owner != b || ts_node_is(p, TS_K_prim_Param);
    for (uint32_t j = 0; j < i && !seen; j++)
      seen = n->inputs[j]->node == p;
    want += !seen;
  }
  for (ts_node *x = n->prev; x != b->ret && got < want && got < cap; x = x->prev)
    for (uint32_t i = 0; i < n->ninputs; i++)
      if (n->inputs[i]->node == x) {
        out[got++] = x;
        break;
      }
  return got;
}

/* scanNode: tries the producers of consumer n. Returns the node to look at
 * next (the group again after a change) and sets *changed. */
static ts_node *ts_fu_scan(ts_fu *f, ts_node *n, bool *changed) {
  *changed = false;
  if (!ts_fu_consumer_ok(n))
    return n->prev;
  uint32_t cap = n->ninputs ? n->ninputs : 1;
  ts_node **prods = malloc(cap * sizeof *prods);
  if (!prods) {
    ts_fu_oom(f);
    return n->owner->ret;
  }
  uint32_t np = ts_fu_producers(n, n->owner, prods, cap);
  ts_node *next = n->prev;
  for (uint32_t i = 0; i < np && !f->failed; i++) {
    if (ts_fu_try_move_chunk(f, n, prods[i])) {
      *changed = true;
      next = n;
      break;
    }
    ts_node *grp = f->failed ? NULL : ts_fu_try_fuse(f, n, prods[i]);
    if (grp) {
      *changed = true;
      next = grp;
      break;
    }
  }
  free(prods);
  return f->failed ? n->owner->ret : next;
}

/* ListUnpack(aten::chunk(x, n, d)), n and d constants, the list read only
 * there, one output per chunk and an output read by a fusible op: becomes
 * prim::ConstantChunk[chunks=n, dim=d](x). */
static bool ts_fu_constant_chunk(ts_fu *f, ts_node *u) {
  if (!ts_node_is(u, TS_K_prim_ListUnpack) || u->ninputs != 1 || u->inputs[0]->nuses != 1)
    return false;
  ts_node *ch = u->inputs[0]->node;
  int64_t chunks, dim;
  if (!ts_node_is(ch, TS_K_aten_chunk) || ch->owner != u->owner || ch->ninputs != 3 ||
      !ts_fu_is_tensor(ch->inputs[0]) || !ts_pass_const_int(ch->inputs[1], &chunks) ||
      !ts_pass_const_int(ch->inputs[2], &dim) || chunks < 1 || (int64_t)u->noutputs != chunks)
    return false;
  bool wanted = false;
  for (uint32_t i = 0; i < u->noutputs && !wanted; i++)
    for (uint32_t k = 0; k < u->outputs[i]->nuses && !wanted; k++)
      wanted = ts_fu_pointwise(u->outputs[i]->uses[k].user) && u->outputs[i]->uses[k].user->owner == u->owner;
  if (!wanted)
    return false;
  ts_fu_changed(f);
  ts_node *ck = ts_node_new(f->g, TS_K_prim_ConstantChunk, 0);
  if (!ck || !ts_node_set_i(ck, "chunks", chunks) || !ts_node_set_i(ck, "dim", dim) ||
      !ts_node_add_input(ck, ch->inputs[0]))
    return ts_fu_oom(f);
  ck->loc = ch->loc;
  for (uint32_t i = 0; i < u->noutputs; i++) {
    ts_value *o = ts_node_add_output(ck, u->outputs[i]->type);
    if (!o)
      return ts_fu_oom(f);
    ts_fu_take_name(o, u->outputs[i]);
    ts_value_replace_all_uses(u->outputs[i], o);
  }
  ts_node_insert_before(ck, u);
  ts_node_destroy(u);
  ts_node_destroy(ch);
  return true;
}

/* fuseConcats: cat(ListConstruct(...), dim) into a group, with whichever of
 * its inputs' producers can join. */
static bool ts_fu_concat(ts_fu *f, ts_node *cat) {
  if (!ts_node_is(cat, TS_K_aten_cat) || cat->ninputs != 2 || cat->noutputs != 1 || !ts_fu_is_tensor(cat->outputs[0]))
    return false;
  ts_node *lc = cat->inputs[0]->node;
  int64_t dim;
  if (!ts_node_is(lc, TS_K_prim_ListConstruct) || lc->owner != cat->owner || cat->inputs[0]->nuses != 1 ||
      !ts_pass_const_int(cat->inputs[1], &dim) || lc->ninputs + 1 > TS_FU_MAX_ARGS)
    return false;
  for (uint32_t i = 0; i < lc->ninputs; i++)
    if (!ts_fu_is_tensor(lc->inputs[i]))
      return false;
  /* The list goes down to the cat first (it only hands references on), then
   * the cat's group forms only when some producer can join it, so that no
   * group holds a cat alone. */
  ts_node *after = lc->next;
  if (after != cat) {
    if (!ts_fu_can_move(f, lc, cat))
      return false;
    ts_node_move_before(lc, cat);
    ts_fu_changed(f);
  }
  ts_node **prods = malloc((lc->ninputs ? lc->ninputs : 1) * sizeof *prods);
  if (!prods)
    return ts_fu_oom(f);
  uint32_t np = ts_fu_producers(lc, lc->owner, prods, lc->ninputs);
  bool any = false;
  for (uint32_t i = 0; i < np && !any; i++)
    any = ts_fu_producer_ok(prods[i], cat->owner) && ts_fu_can_move(f, prods[i], lc);
  free(prods);
  if (!any) {
    if (after != cat) {
      ts_node_move_before(lc, after);
      ts_fu_changed(f);
    }
    return false;
  }
  ts_node *grp = ts_fu_singleton(f, cat);
  ts_node *inner = grp ? ts_fu_merge_node(f, grp, lc) : NULL;
  if (!inner)
    return false;
  ts_node_destroy(lc);
  for (bool again = true; again && !f->failed;) {
    again = false;
    uint32_t cap = grp->ninputs ? grp->ninputs : 1;
    prods = malloc(cap * sizeof *prods);
    if (!prods)
      return ts_fu_oom(f);
    np = ts_fu_producers(grp, grp->owner, prods, cap);
    for (uint32_t i = 0; i < np && !again && !f->failed; i++)
      again = ts_fu_try_fuse(f, grp, prods[i]) != NULL;
    free(prods);
  }
  return !f->failed;
}

/* Ops in a group that count for its worth: not constants or chunks. */
static uint32_t ts_fu_group_ops(const ts_graph *sub) {
  uint32_t n = 0;
  for (const ts_node *x = ts_block_first(sub->block); x != sub->block->ret; x = x->next)
    if (!ts_node_is(x, TS_K_prim_Constant) && !ts_node_is(x, TS_K_prim_ConstantChunk) &&
        !ts_node_is(x, TS_K_prim_ListConstruct))
      n++;
  return n;
}

/* An op worth a group of its own (its row's TS_PWR_ALONE in ir/ops.def): a
 * transcendental or an activation, whose native kernel (codegen/fusion.c, vectorised, split over threads) beats
 * the runtime's kernel several times over, on floating tensors whose dtype
 * and sizes the types tell (else the code generator leaves the group to
 * the interpreter, where a group of one op costs more than the op). relu
 * and its kin after a convolution are gone into the convolution by now. */
static bool ts_fu_worth_alone(const ts_node *n) {
  const ts_pw_def *row = ts_pw_of_kind(n->kind);
  if (!row || row->kind != n->kind || !(row->rule & TS_PWR_ALONE))
    return false;
  if (!ts_fu_pointwise(n))
    return false;
  const ts_tensor_info *o = ts_fu_info(n->outputs[0]);
  if (!o || (o->dtype != TS_DT_FLOAT32 && o->dtype != TS_DT_FLOAT64))
    return false;
  for (int32_t d = 0; d < o->rank; d++)
    if (o->sizes[d] < 0)
      return false;
  for (uint32_t i = 0; i < n->ninputs; i++) {
    const ts_value *v = n->inputs[i];
    if (!ts_fu_is_tensor(v)) {
      if (!ts_fu_scalar_const(v)) /* a parameter the kernel would need at run time */
        return false;
      continue;
    }
    const ts_tensor_info *t = ts_fu_info(v);
    if (!t || t->dtype != o->dtype)
      return false;
  }
  return true;
}

/* A group of one op worth a group of its own: kept as it is (undoing and
 * remaking it would rename its constants on every run of the pass). */
static bool ts_fu_group_alone(const ts_node *grp) {
  const ts_block *b = ts_fu_subgraph(grp)->block;
  for (const ts_node *x = ts_block_first(b); x != b->ret; x = x->next)
    if (!ts_node_is(x, TS_K_prim_Constant))
      return ts_fu_worth_alone(x);
  return false;
}

static bool ts_fu_block(ts_fu *f, ts_block *b);

/* FuseGraph on one block, then the blocks nested in it. */
static bool ts_fu_block(ts_fu *f, ts_block *b) {
  for (ts_node *n = ts_block_first(b); n != b->ret && !f->failed;) {
    ts_node *next = n->next;
    ts_fu_constant_chunk(f, n);
    n = next;
  }
  for (bool any = true; any && !f->failed;) {
    any = false;
    for (ts_node *n = b->ret->prev; n != b->ret && !f->failed;) {
      bool changed;
      n = ts_fu_scan(f, n, &changed);
      any |= changed;
    }
  }
  for (ts_node *n = b->ret->prev; n != b->ret && !f->failed;) {
    ts_node *prev = n->prev;
    if (ts_node_is(n, TS_K_aten_cat) && ts_fu_concat(f, n))
      prev = b->ret->prev; /* nodes moved: start over; each cat is fused once */
    n = prev;
  }
  for (ts_node *n = ts_block_first(b); n != b->ret && !f->failed;) {
    ts_node *next = n->next;
    ts_node *first, *last;
    if (ts_fu_group_ok(n, true) && ts_fu_group_ops(ts_fu_subgraph(n)) < 2 && !ts_fu_group_alone(n))
      ts_fu_unmerge(f, n, &first, &last);
    n = next;
  }
  for (ts_node *n = ts_block_first(b); n != b->ret && !f->failed;) {
    ts_node *next = n->next;
    if (ts_fu_worth_alone(n))
      ts_fu_singleton(f, n);
    n = next;
  }
  for (ts_node *n = ts_block_first(b); n != b->ret && !f->failed; n = n->next)
    for (uint32_t i = 0; i < n->nblocks && !f->failed; i++)
      ts_fu_block(f, n->blocks[i]);
  return !f->failed;
}

bool ts_pass_fuse(ts_graph *g, ts_diag *d) {
  ts_fu f = {.g = g, .d = d};
  bool ok = ts_fu_block(&f, g->block);
  ts_fu_changed(&f);
  if (!ok || !ts_graph_ok(g)) {
    ts_diag_error(d, "fuse: out of memory");
    return false;
  }
  return true;
}
