/* passes/dead_code_elimination.c: torch::jit::EliminateDeadCode, the
 * inverse mark and sweep of passes/dead_code_elimination.cpp, with its
 * alias analysis (the whole-graph variant).
 *
 * Mark: the graph's return and every node with side effects are live; going
 * backwards through each block, a node is live when one of its outputs is,
 * or when it writes memory that a live value may point to (markIfLive with
 * writesToAlias); a live node makes its inputs and the nodes holding it
 * live. A block's return only makes live the values its owner's live
 * outputs need (for a loop: the carried values that are live after the loop
 * or read in the body, and the continue condition); loops are marked until
 * nothing new is. Sweep: backwards, unused If outputs and unused
 * loop-carried values (output and body input both unused) are dropped with
 * their block outputs, then every unmarked node without uses goes.
 *
 * Side effects, as Node::hasSideEffects plus hasUntrackedMutation: the op
 * table's TS_OPF_SIDE_EFFECT kinds (Print, RaiseException, CallFunction,
 * CallMethod, SetAttr, warn, ...), prim::BailOut, nodes with such a node in
 * a nested block, every kind the op table does not know (their effects are
 * unknown), and nodes that write memory the caller can see (a graph input,
 * a graph output, the wildcard set: ts_alias_escapes). So a fresh local
 * tensor written in place and never read again is dead, with its writes.
 *
 * What differs from PyTorch: the untracked-mutation test asks whether a
 * written input escapes (PyTorch: whether the write hits the wildcard set),
 * which also keeps writes to what the graph returns; a write into a live
 * list's elements keeps the node (the db's queries see contents). Fork
 * subgraph inputs (prim::fork) are not pruned: there is no fork kind yet. */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

typedef struct ts_dce {
  ts_graph *g;
  ts_alias_db *db;
  uint8_t *marked;  /* by node id */
  uint8_t *live;    /* by value id */
  int8_t *effects;  /* by node id: -1 unknown, 0, 1 */
  uint32_t nnodes, nvalues;
  /* the live values of mutable types, for the writes test */
  const ts_value **live_mut;
  uint32_t nlive_mut, cap_live_mut;
  bool oom;
} ts_dce;

/* Loop and If shapes the sweep relies on (a verified graph has them; with
 * the verifier off, other nodes are left alone). */
static bool ts_dce_loop_ok(const ts_node *n) {
  if (!ts_node_is(n, TS_K_prim_Loop) || n->nblocks != 1 || n->ninputs != n->noutputs + 2)
    return false;
  const ts_block *b = n->blocks[0];
  return ts_block_ninputs(b) == n->noutputs + 1 && ts_block_noutputs(b) == n->noutputs + 1;
}

static bool ts_dce_if_ok(const ts_node *n) {
  return ts_node_is(n, TS_K_prim_If) && n->nblocks == 2 && ts_block_noutputs(n->blocks[0]) == n->noutputs &&
         ts_block_noutputs(n->blocks[1]) == n->noutputs;
}

static bool ts_dce_marked(const ts_dce *d, const ts_node *n) { return n->id < d->nnodes && d->marked[n->id]; }

static bool ts_dce_live(const ts_dce *d, const ts_value *v) { return v->id < d->nvalues && d->live[v->id]; }

static void ts_dce_set_live(ts_dce *d, const ts_value *v) {
  if (v->id >= d->nvalues || d->live[v->id])
    return;
  d->live[v->id] = 1;
  if (!ts_pass_type_mutable(v->type))
    return;
  if (d->nlive_mut == d->cap_live_mut) {
    uint32_t cap = d->cap_live_mut ? d->cap_live_mut * 2 : 64;
    const ts_value **p = realloc(d->live_mut, (size_t)cap * sizeof *p);
    if (!p) {
      d->oom = true;
      return;
    }
    d->live_mut = p;
    d->cap_live_mut = cap;
  }
  d->live_mut[d->nlive_mut++] = v;
}

/* hasUntrackedMutation: n writes memory the caller can see. */
static bool ts_dce_writes_escaping(const ts_dce *d, const ts_node *n) {
  if (!ts_alias_node_has_writes(d->db, n))
    return false;
  for (uint32_t i = 0; i < n->ninputs; i++)
    if (ts_alias_node_writes_to(d->db, n, n->inputs[i]) && ts_alias_escapes(d->db, n->inputs[i]))
      return true;
  for (uint32_t i = 0; i < n->noutputs; i++)
    if (ts_alias_node_writes_to(d->db, n, n->outputs[i]) && ts_alias_escapes(d->db, n->outputs[i]))
      return true;
  return false;
}

static bool ts_dce_node_effects(const ts_dce *d, const ts_node *n) {
  if (n->kind == TS_K_OTHER)
    return true;
  if (n->kind == TS_K_prim_BailOut)
    return true;
  if (n->op && (n->op->flags & TS_OPF_SIDE_EFFECT))
    return true;
  return ts_dce_writes_escaping(d, n);
}

static bool ts_dce_has_effects(ts_dce *d, const ts_node *n) {
  if (n->id < d->nnodes && d->effects[n->id] >= 0)
    return d->effects[n->id] != 0;
  bool e = ts_dce_node_effects(d, n);
  for (uint32_t i = 0; i < n->nblocks && !e; i++)
    for (const ts_node *m = ts_block_first(n->blocks[i]); m != n->blocks[i]->ret && !e; m = m->next)
      e = ts_dce_has_effects(d, m);
  if (n->id < d->nnodes)
    d->effects[n->id] = e ? 1 : 0;
  return e;
}

/* Marks `n` and the nodes holding it live, and its inputs live values.
 * True if it was not marked before. */
static bool ts_dce_mark_node(ts_dce *d, ts_node *n) {
  if (ts_dce_marked(d, n) || n->id >= d->nnodes)
    return false;
  d->marked[n->id] = 1;
  for (ts_node *cur = n; cur && cur->owner; cur = cur->owner->owner_node)
    if (cur != n)
      ts_dce_mark_node(d, cur);
  for (uint32_t i = 0; i < n->ninputs; i++)
    ts_dce_set_live(d, n->inputs[i]);
  return true;
}

/* A nested block's return "uses" only what its owner's live outputs need. */
static bool ts_dce_mark_return(ts_dce *d, ts_node *ret) {
  if (ts_dce_marked(d, ret))
    return false;
  ts_node *outer = ret->owner->owner_node;
  if (!outer)
    return ts_dce_mark_node(d, ret);
  if (ts_dce_loop_ok(outer)) {
    ts_block *body = ret->owner;
    for (uint32_t i = 0; i < outer->noutputs; i++) {
      ts_value *inner_in = ts_block_input(body, i + 1);
      if (ts_dce_live(d, outer->outputs[i]) || inner_in->nuses)
        ts_dce_set_live(d, ts_block_output(body, i + 1));
    }
    ts_dce_set_live(d, ts_block_output(body, 0));
  } else {
    for (uint32_t i = 0; i < outer->noutputs && i < ret->ninputs; i++)
      if (ts_dce_live(d, outer->outputs[i]))
        ts_dce_set_live(d, ret->inputs[i]);
  }
  if (ret->id < d->nnodes)
    d->marked[ret->id] = 1;
  return true;
}

static bool ts_dce_mark_if_live(ts_dce *d, ts_node *n) {
  if (ts_dce_marked(d, n))
    return false;
  for (uint32_t i = 0; i < n->noutputs; i++)
    if (ts_dce_live(d, n->outputs[i]))
      return ts_dce_mark_node(d, n);
  /* writesToAlias(node, liveValues) */
  if (!ts_alias_node_has_writes(d->db, n))
    return false;
  for (uint32_t i = 0; i < d->nlive_mut; i++)
    if (ts_alias_node_writes_to(d->db, n, d->live_mut[i]))
      return ts_dce_mark_node(d, n);
  return false;
}

static bool ts_dce_mark_block(ts_dce *d, ts_block *b) {
  bool any = false;
  for (ts_node *n = ts_block_first(b); n != b->ret; n = n->next)
    if (ts_dce_has_effects(d, n))
      any |= ts_dce_mark_node(d, n);
  any |= ts_dce_mark_return(d, b->ret);
  for (ts_node *n = b->ret->prev; n != b->ret; n = n->prev) {
    if (ts_dce_loop_ok(n)) {
      /* run to a fixed point: the body's uses feed its next iteration */
      bool marked;
      do {
        marked = ts_dce_mark_block(d, n->blocks[0]);
        any |= marked;
      } while (marked);
    } else {
      for (uint32_t i = 0; i < n->nblocks; i++)
        any |= ts_dce_mark_block(d, n->blocks[i]);
    }
    any |= ts_dce_mark_if_live(d, n);
  }
  return any;
}

static bool ts_dce_has_uses(const ts_node *n) {
  for (uint32_t i = 0; i < n->noutputs; i++)
    if (n->outputs[i]->nuses)
      return true;
  return false;
}

static void ts_dce_remove_block_outputs(ts_node *n) {
  if (!ts_dce_if_ok(n))
    return;
  for (uint32_t i = n->noutputs; i-- > 0;) {
    if (n->outputs[i]->nuses)
      continue;
    ts_node_remove_output(n, i);
    for (uint32_t b = 0; b < n->nblocks; b++)
      ts_node_remove_input(n->blocks[b]->ret, i);
  }
}

static void ts_dce_remove_loop_outputs(ts_node *n) {
  if (!ts_dce_loop_ok(n))
    return;
  ts_block *body = n->blocks[0];
  for (uint32_t i = n->noutputs; i-- > 0;) {
    if (n->outputs[i]->nuses || ts_block_input(body, i + 1)->nuses)
      continue;
    ts_node_remove_output(n, i);
    ts_node_remove_input(n, i + 2);
    ts_node_remove_output(body->param, i + 1);
    ts_node_remove_input(body->ret, i + 1);
  }
}

static void ts_dce_sweep(ts_dce *d, ts_block *b) {
  for (ts_node *n = b->ret->prev; n != b->ret;) {
    ts_node *prev = n->prev;
    ts_dce_remove_block_outputs(n);
    ts_dce_remove_loop_outputs(n);
    for (uint32_t i = 0; i < n->nblocks; i++)
      ts_dce_sweep(d, n->blocks[i]);
    if (!ts_dce_marked(d, n) && !ts_dce_has_uses(n))
      ts_node_destroy(n);
    n = prev;
  }
}

bool ts_pass_dce(ts_graph *g, ts_diag *diag) {
  ts_dce d = {.g = g, .nnodes = g->next_node_id, .nvalues = g->next_value_id};
  d.db = ts_alias_db_new(g, diag);
  if (!d.db)
    return false;
  d.marked = calloc(d.nnodes ? d.nnodes : 1, 1);
  d.live = calloc(d.nvalues ? d.nvalues : 1, 1);
  d.effects = malloc(d.nnodes ? d.nnodes : 1);
  bool ok = d.marked && d.live && d.effects;
  if (ok) {
    memset(d.effects, -1, d.nnodes ? d.nnodes : 1);
    ts_dce_mark_node(&d, g->block->ret);
    ts_dce_mark_block(&d, g->block);
    /* a failed allocation may have left a live value unrecorded: then
     * nothing is removed */
    ok = !d.oom;
  }
  ts_alias_db_free(d.db);
  if (ok)
    ts_dce_sweep(&d, g->block);
  free(d.marked);
  free(d.live);
  free(d.effects);
  free(d.live_mut);
  if (!ok || !ts_graph_ok(g)) {
    ts_diag_error(diag, "dce: out of memory");
    return false;
  }
  return true;
}
