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
 * Constants of a mutable type (tensors, lists) are merged as PyTorch merges
 * them: only when the alias db says neither is written and not both escape
 * the graph (AliasDb::safeToChangeAliasingRelationship); otherwise the later
 * one stays where it is. PyTorch skips that check for two constants holding
 * the same IValue object; tsaot's interpreter makes a separate runtime
 * tensor of every tensor constant, so no two constants are one object and
 * the check always applies.
 *
 * Where this does less: two tensor constants are equal only when they are
 * the same constant (the same data pointer, dtype, sizes and strides: a
 * frozen parameter read twice, or a copy made by cloning); their bytes are
 * never compared (PyTorch compares values, which for weights costs a pass
 * over megabytes). Tensor constants without data (a graph read from text)
 * are never equal. */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

static uint64_t ts_cp_mix(uint64_t h, uint64_t x) { return (h ^ x) * 1099511628211ull; }

/* The tensor a constant holds, or NULL. */
static const ts_tconst *ts_cp_tensor(const ts_node *n) {
  const ts_attr *a = ts_node_attr(n, "value");
  return a && a->kind == TS_ATTR_TENSOR && n->attrs == a && !a->next ? a->u.t : NULL;
}

/* The same tensor constant: same bytes (by address), dtype and geometry. */
static bool ts_cp_same_tensor(const ts_node *a, const ts_node *b) {
  const ts_tconst *x = ts_cp_tensor(a), *y = ts_cp_tensor(b);
  if (!x || !y || !x->data || x->data != y->data || x->dtype != y->dtype || x->rank != y->rank ||
      !ts_type_equal(a->outputs[0]->type, b->outputs[0]->type))
    return false;
  int64_t sx[TS_RT_MAX_DIMS], sy[TS_RT_MAX_DIMS];
  if (x->rank < 0 || x->rank > TS_RT_MAX_DIMS)
    return false;
  if (x->rank && memcmp(x->sizes, y->sizes, (size_t)x->rank * sizeof *x->sizes) != 0)
    return false;
  /* no strides: contiguous */
  ts_rt_strides_contiguous(x->rank, x->sizes, sx);
  ts_rt_strides_contiguous(y->rank, y->sizes, sy);
  for (int32_t i = 0; i < x->rank; i++)
    if ((x->strides ? x->strides[i] : sx[i]) != (y->strides ? y->strides[i] : sy[i]))
      return false;
  return true;
}

static bool ts_cp_equal(const ts_node *a, const ts_node *b) {
  return ts_cp_tensor(a) ? ts_cp_same_tensor(a, b) : ts_pass_const_nodes_equal(a, b);
}

/* A hash consistent with ts_cp_equal. */
static uint64_t ts_cp_hash(const ts_node *n) {
  uint64_t h = ts_cp_mix(1469598103934665603ull, n->outputs[0]->type->kind);
  for (const ts_attr *a = n->attrs; a; a = a->next) {
    uint64_t x = a->kind;
    if (a->kind == TS_ATTR_INT)
      x = (uint64_t)a->u.i;
    else if (a->kind == TS_ATTR_TENSOR)
      x = (uint64_t)(uintptr_t)a->u.t->data;
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
    if (ts_cp_equal(s->slots[j], n))
      return s->slots[j];
  s->slots[j] = n;
  s->used++;
  return NULL;
}

typedef struct ts_cp {
  ts_graph *g;
  ts_cp_set set;
  ts_alias_db *db; /* built when two mutable constants are first equal */
  bool db_failed;
  /* pooled constants that took over the uses of one that escaped (the db
   * was built before the merge and does not know) */
  ts_node **escaping;
  size_t nescaping, cap_escaping;
  bool oom;
} ts_cp;

static bool ts_cp_escapes(ts_cp *c, ts_node *n) {
  for (size_t i = 0; i < c->nescaping; i++)
    if (c->escaping[i] == n)
      return true;
  return ts_alias_escapes(c->db, n->outputs[0]);
}

/* AliasDb::safeToChangeAliasingRelationship for two constants */
static bool ts_cp_safe_to_merge(ts_cp *c, ts_node *n, ts_node *existing) {
  if (!ts_pass_type_mutable(n->outputs[0]->type))
    return true;
  if (!c->db && !c->db_failed) {
    ts_diag d = {0}; /* no db: unsafe, the constants stay apart */
    c->db = ts_alias_db_new(c->g, &d);
    c->db_failed = !c->db;
    ts_diag_free(&d);
  }
  if (!c->db)
    return false;
  if (ts_alias_has_writers(c->db, n->outputs[0]) || ts_alias_has_writers(c->db, existing->outputs[0]))
    return false;
  bool esc = ts_alias_escapes(c->db, n->outputs[0]);
  if (esc && ts_cp_escapes(c, existing))
    return false;
  if (esc) {
    if (c->nescaping == c->cap_escaping) {
      size_t cap = c->cap_escaping ? c->cap_escaping * 2 : 8;
      ts_node **e = realloc(c->escaping, cap * sizeof *e);
      if (!e) {
        c->oom = true;
        return false;
      }
      c->escaping = e;
      c->cap_escaping = cap;
    }
    c->escaping[c->nescaping++] = existing;
  }
  return true;
}

static void ts_cp_block(ts_cp *c, ts_block *b) {
  for (ts_node *n = ts_block_first(b); n != b->ret && !c->oom;) {
    ts_node *next = n->next; /* n may move to the top block */
    if (n->nblocks) {
      for (uint32_t i = 0; i < n->nblocks; i++)
        ts_cp_block(c, n->blocks[i]);
    } else if (ts_node_is(n, TS_K_prim_Constant) && n->noutputs == 1) {
      ts_node *existing = ts_cp_find_or_add(&c->set, n, &c->oom);
      if (existing) {
        if (ts_cp_safe_to_merge(c, n, existing)) {
          ts_value_replace_all_uses(n->outputs[0], existing->outputs[0]);
          ts_node_destroy(n);
        }
      } else if (!c->oom) {
        ts_node *first = ts_block_first(c->g->block);
        if (n != first)
          ts_node_move_before(n, first);
      }
    }
    n = next;
  }
}

bool ts_pass_constant_pooling(ts_graph *g, ts_diag *d) {
  ts_cp c = {.g = g};
  ts_cp_block(&c, g->block);
  free(c.set.slots);
  free(c.escaping);
  if (c.db)
    ts_alias_db_free(c.db);
  if (c.oom || !ts_graph_ok(g)) {
    ts_diag_error(d, "constant-pooling: out of memory");
    return false;
  }
  return true;
}
