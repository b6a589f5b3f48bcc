/* passes/cse.c: torch::jit::EliminateCommonSubexpression
 * (passes/common_subexpression_elimination.cpp).
 *
 * Walks each block in order with a table of the nodes seen so far (hashed
 * on kind and inputs, compared with ts_pass_const_nodes_equal: same kind,
 * inputs, attributes and output types). A node equal to an earlier one of
 * its own block, or of an enclosing block before the node holding it, is
 * replaced by it; nodes in a nested block are never reused outside it.
 * Skipped, as in PyTorch: nodes with side effects, nondeterministic ops
 * (rand*, bernoulli, normal, dropout and friends unless `train` is a
 * constant false), nodes with blocks (their blocks are searched), and nodes
 * any of whose inputs or outputs may be written by some node of the graph
 * (alias analysis). Two equal nodes whose outputs both reach the graph's
 * outputs are kept apart, so that the caller does not get one tensor twice;
 * a reuse across blocks also needs one side not to escape
 * (safeToChangeAliasingRelationship).
 *
 * Less than PyTorch: prim::Constant is left to constant pooling, and kinds
 * the op table does not know are never merged (their effects are unknown).
 * More: the blocks of every node are searched, where PyTorch skips those of
 * an If or Loop whose inputs or outputs have writers (a loop carrying a
 * tensor written in its body); each node inside is still checked itself. */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

typedef struct ts_cse_scope {
  const ts_node **slots; /* open addressing, NULL: empty */
  uint32_t cap, n;
  const struct ts_cse_scope *parent;
} ts_cse_scope;

typedef struct ts_cse {
  ts_graph *g;
  ts_alias_db *db;
  bool oom;
  uint32_t replaced;
} ts_cse;

static uint64_t ts_cse_hash(const ts_node *n) {
  uint64_t h = 1469598103934665603ull ^ (uint64_t)n->kind;
  h = (h ^ n->ninputs) * 1099511628211ull;
  h = (h ^ n->noutputs) * 1099511628211ull;
  for (uint32_t i = 0; i < n->ninputs; i++)
    h = (h ^ n->inputs[i]->id) * 1099511628211ull;
  return h ^ (h >> 29);
}

static const ts_node *ts_cse_find(const ts_cse_scope *s, const ts_node *n) {
  if (!s->cap)
    return NULL;
  uint32_t mask = s->cap - 1;
  for (uint32_t i = (uint32_t)ts_cse_hash(n) & mask;; i = (i + 1) & mask) {
    const ts_node *m = s->slots[i];
    if (!m)
      return NULL;
    if (ts_pass_const_nodes_equal(m, n))
      return m;
  }
}

static bool ts_cse_insert(ts_cse_scope *s, const ts_node *n) {
  if ((s->n + 1) * 4 >= s->cap * 3) {
    uint32_t cap = s->cap ? s->cap * 2 : 64;
    const ts_node **slots = calloc(cap, sizeof *slots);
    if (!slots || cap < s->cap)
      return free(slots), false;
    for (uint32_t i = 0; i < s->cap; i++) {
      if (!s->slots[i])
        continue;
      uint32_t j = (uint32_t)ts_cse_hash(s->slots[i]) & (cap - 1);
      while (slots[j])
        j = (j + 1) & (cap - 1);
      slots[j] = s->slots[i];
    }
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
  }
  uint32_t j = (uint32_t)ts_cse_hash(n) & (s->cap - 1);
  while (s->slots[j])
    j = (j + 1) & (s->cap - 1);
  s->slots[j] = n;
  s->n++;
  return true;
}

static bool ts_cse_effects(const ts_node *n) {
  if (n->kind == TS_K_OTHER || n->kind == TS_K_prim_BailOut)
    return true;
  return n->op && (n->op->flags & TS_OPF_SIDE_EFFECT);
}

/* The input bound to the schema argument `name`, or NULL. */
static const ts_value *ts_cse_arg(const ts_node *n, const char *name) {
  const ts_schema *s = ts_node_schema(n);
  for (uint32_t i = 0; s && i < s->nargs && i < n->ninputs; i++)
    if (strcmp(s->args[i].name, name) == 0)
      return n->inputs[i];
  return NULL;
}

/* Node::isNondeterministic, by name so that ops the table gains later are
 * covered: random sampling, and dropout unless `train` is a constant false
 * (the RNN ops also when their dropout is a constant 0). */
static bool ts_cse_nondeterministic(const ts_node *n) {
  static const char *const random[] = {"bernoulli", "normal", "multinomial", "poisson", "binomial", "rrelu",
                                       "rrelu_with_noise", "_standard_gamma", "_sample_dirichlet", "uniform",
                                       "exponential", "geometric", "cauchy", "log_normal"};
  static const char *const dropouts[] = {"dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout",
                                         "_fused_dropout", "native_dropout"};
  static const char *const rnns[] = {"lstm", "gru", "rnn_tanh", "rnn_relu"};
  const char *full = n->kind_name;
  if (strncmp(full, "aten::", 6) != 0)
    return false;
  const char *name = full + 6;
  size_t len = strlen(name);
  if (len && name[len - 1] == '_')
    len--;
  if (strncmp(name, "rand", 4) == 0)
    return true;
  for (size_t i = 0; i < sizeof random / sizeof *random; i++)
    if (strlen(random[i]) == len && memcmp(random[i], name, len) == 0)
      return true;
  bool train = true;
  for (size_t i = 0; i < sizeof dropouts / sizeof *dropouts; i++)
    if (strlen(dropouts[i]) == len && memcmp(dropouts[i], name, len) == 0) {
      const ts_value *t = ts_cse_arg(n, "train");
      return !(t && ts_pass_const_bool(t, &train) && !train);
    }
  for (size_t i = 0; i < sizeof rnns / sizeof *rnns; i++)
    if (strlen(rnns[i]) == len && memcmp(rnns[i], name, len) == 0) {
      const ts_value *t = ts_cse_arg(n, "train");
      if (t && ts_pass_const_bool(t, &train) && !train)
        return false;
      const ts_value *p = ts_cse_arg(n, "dropout");
      ts_cval c;
      if (p && ts_pass_const_get(p, &c) && ((c.kind == TS_CV_FLOAT && c.f == 0) || (c.kind == TS_CV_INT && !c.i)))
        return false;
      return true;
    }
  return false;
}

/* aliasDb.hasWriters(node): some input or output may be written. */
static bool ts_cse_has_writers(const ts_cse *c, const ts_node *n) {
  for (uint32_t i = 0; i < n->ninputs; i++)
    if (ts_alias_has_writers(c->db, n->inputs[i]))
      return true;
  for (uint32_t i = 0; i < n->noutputs; i++)
    if (ts_alias_has_writers(c->db, n->outputs[i]))
      return true;
  return false;
}

/* Whether some output of n may alias what the graph returns now (the db
 * predates the replacements made so far; the return's inputs do not). */
static bool ts_cse_reaches_outputs(const ts_cse *c, const ts_node *n) {
  const ts_block *top = c->g->block;
  for (uint32_t i = 0; i < n->noutputs; i++)
    for (uint32_t j = 0; j < ts_block_noutputs(top); j++) {
      const ts_value *r = ts_block_output(top, j);
      if (r == n->outputs[i] || ts_alias_may_alias(c->db, n->outputs[i], r))
        return true;
    }
  return false;
}

/* escapesScope for every output of n. */
static bool ts_cse_escapes(const ts_cse *c, const ts_node *n) {
  for (uint32_t i = 0; i < n->noutputs; i++)
    if (ts_alias_escapes(c->db, n->outputs[i]))
      return true;
  return ts_cse_reaches_outputs(c, n);
}

static void ts_cse_replace(ts_cse *c, ts_node *n, const ts_node *by) {
  for (uint32_t i = 0; i < n->noutputs; i++)
    ts_value_replace_all_uses(n->outputs[i], by->outputs[i]);
  ts_node_destroy(n);
  c->replaced++;
}

static const ts_node *ts_cse_lookup_parents(const ts_cse_scope *s, const ts_node *n) {
  for (; s; s = s->parent) {
    const ts_node *m = ts_cse_find(s, n);
    if (m)
      return m;
  }
  return NULL;
}

static void ts_cse_block(ts_cse *c, ts_block *b, const ts_cse_scope *parent) {
  ts_cse_scope scope = {.parent = parent};
  for (ts_node *n = ts_block_first(b); n != b->ret && !c->oom;) {
    ts_node *next = n->next;
    if (n->nblocks) {
      for (uint32_t i = 0; i < n->nblocks; i++)
        ts_cse_block(c, n->blocks[i], &scope);
      n = next;
      continue;
    }
    if (ts_node_is(n, TS_K_prim_Constant) || ts_cse_effects(n) || ts_cse_nondeterministic(n) ||
        ts_cse_has_writers(c, n)) {
      n = next;
      continue;
    }
    const ts_node *outer = ts_cse_lookup_parents(parent, n);
    if (outer) {
      /* safeToChangeAliasingRelationship: neither side is written (checked
       * when each was met), and not both escape */
      if (!(ts_cse_escapes(c, n) && ts_cse_escapes(c, outer)))
        ts_cse_replace(c, n, outer);
      n = next;
      continue;
    }
    const ts_node *same = ts_cse_find(&scope, n);
    if (same) {
      if (!(ts_cse_reaches_outputs(c, n) && ts_cse_reaches_outputs(c, same)))
        ts_cse_replace(c, n, same);
    } else if (!ts_cse_insert(&scope, n)) {
      c->oom = true;
    }
    n = next;
  }
  free(scope.slots);
}

bool ts_pass_cse(ts_graph *g, ts_diag *d) {
  ts_cse c = {.g = g};
  c.db = ts_alias_db_new(g, d);
  if (!c.db)
    return false;
  ts_cse_block(&c, g->block, NULL);
  ts_alias_db_free(c.db);
  if (c.oom || !ts_graph_ok(g)) {
    ts_diag_error(d, "cse: out of memory");
    return false;
  }
  return true;
}
