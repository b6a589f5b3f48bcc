/* passes/constant_pooling.c: torch::jit::ConstantPooling
 * (passes/constant_pooling.cpp).
 *
 * Walks the graph in order, nested blocks included. The first prim::Constant
 * of each value is moved to the front of the graph's top block; a later
 * constant equal to one already seen (EqualNode: same output type, same
 * attributes, floats compared with ==, so 0. and -0. are one constant and
 * nan never matches) has its uses moved to that one and is destroyed. As in
 * PyTorch, each new constant goes before the current first node, so the
 * pooled constants end up in the reverse of the order they were met.
 *
 * What differs from PyTorch: PyTorch merges two equal constants of a
 * mutable type (tensors, lists) when its alias analysis finds that neither
 * is written and not both escape the graph, and otherwise leaves the later
 * one where it is. Without alias analysis, such a later constant is always
 * left where it is (as if the merge were unsafe); the first of each value is
 * hoisted like any other. Tensor constants never compare equal here (a
 * graph read from text has no tensor values to compare), so each is the
 * first of its value. Immutable constants (int, float, bool, str, None,
 * Device, Function, tuples and optionals of those) are merged as PyTorch
 * does. */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

static uint64_t ts_cp_mix(uint64_t h, uint64_t x) { return (h ^ x) * 1099511628211ull; }

/* A hash consistent with ts_pass_const_nodes_equal. */
static uint64_t ts_cp_hash(const ts_node *n) {
  uint64_t h = ts_cp_mix(1469598103934665603ull, n->outputs[0]->type->kind);
  for (const ts_attr *a = n->attrs; a; a = a->next) {
    uint64_t x = a->kind;
    if (a->kind == TS_ATTR_INT)
      x = (uint64_t)a->u.i;
    else if (a->kind == TS_ATTR_STR)
      for (size_t i = 0; i < a->len; i++)
        x = ts_cp_mix(x, (unsigned char)a->u.s[i]);
    /* floats: 0. == -0., so only the kind goes in */
    h += x; /* order independent, like the attribute comparison */
  }
  return h;
}

typedef struct ts_cp_set {
  ts_node **slots;
  size_t cap, used;
} ts_cp_set;

/* The pooled constant equal to `n`, or NULL after adding `n`. Sets *oom. */
static ts_node *ts_cp_find_or_add(ts_cp_set *s, ts_node *n, bool *oom) {
  if ((s->used + 1) * 2 > s->cap) {
    ts_cp_set old = *s;
    s->cap = old.cap ? old.cap * 2 : 64;
    s->slots = calloc(s->cap, sizeof *s->slots);
    if (!s->slots) {
      *s = old;
      *oom = true;
      return NULL;
    }
    s->used = 0;
    for (size_t i = 0; i < old.cap; i++)
      if (old.slots[i]) {
        size_t j = ts_cp_hash(old.slots[i]) & (s->cap - 1);
        while (s->slots[j])
          j = (j + 1) & (s->cap - 1);
        s->slots[j] = old.slots[i];
        s->used++;
      }
    free(old.slots);
  }
  size_t j = ts_cp_hash(n) & (s->cap - 1);
  for (; s->slots[j]; j = (j + 1) & (s->cap - 1))
    if (ts_pass_const_nodes_equal(s->slots[j], n))
      return s->slots[j];
  s->slots[j] = n;
  s->used++;
  return NULL;
}

static void ts_cp_block(ts_graph *g, ts_block *b, ts_cp_set *set, bool *oom) {
  for (ts_node *n = ts_block_first(b); n != b->ret && !*oom;) {
    ts_node *next = n->next; /* n may move to the top block */
    if (n->nblocks) {
      for (uint32_t i = 0; i < n->nblocks; i++)
        ts_cp_block(g, n->blocks[i], set, oom);
    } else if (ts_node_is(n, TS_K_prim_Constant) && n->noutputs == 1) {
      ts_node *existing = ts_cp_find_or_add(set, n, oom);
      if (existing && !ts_pass_type_mutable(n->outputs[0]->type)) {
        ts_value_replace_all_uses(n->outputs[0], existing->outputs[0]);
        ts_node_destroy(n);
      } else if (!existing && !*oom) {
        ts_node *first = ts_block_first(g->block);
        if (n != first)
          ts_node_move_before(n, first);
      }
    }
    n = next;
  }
}

bool ts_pass_constant_pooling(ts_graph *g, ts_diag *d) {
  ts_cp_set set = {0};
  bool oom = false;
  ts_cp_block(g, g->block, &set, &oom);
  free(set.slots);
  if (oom || !ts_graph_ok(g)) {
    ts_diag_error(d, "constant-pooling: out of memory");
    return false;
  }
  return true;
}
