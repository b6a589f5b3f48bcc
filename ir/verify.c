/* ir/verify.c: the IR's invariants, checked between passes in debug builds
 * and after every parse. */
#include "ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ts_verifier {
  const ts_graph *g;
  ts_diag *d;
  bool *defined;      /* by value id: in scope now */
  uint32_t nids;
  uint32_t *undo;     /* ids defined since each block began */
  size_t nundo, cap_undo;
  bool oom;
} ts_verifier;

/* Reports a problem with node `n`, quoting the node as it prints. */
static void ts_v_fail(ts_verifier *v, const ts_node *n, const char *fmt, ...) TS_PRINTF(3, 4);
static void ts_v_fail(ts_verifier *v, const ts_node *n, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ts_buf line = {0};
  if (n) {
    ts_node_print(&line, n, 0);
    /* only the node's own line, not its blocks */
    char *nl = line.data ? strchr(line.data, '\n') : NULL;
    if (nl)
      *nl = 0;
  }
  if (n && n->loc.file && n->loc.file[0])
    ts_diag_error(v->d, "%s:%d:%d: %s\n  in: %s", n->loc.file, n->loc.line, n->loc.col, msg,
                  line.data ? line.data : "");
  else if (n)
    ts_diag_error(v->d, "%s\n  in: %s", msg, line.data ? line.data : "");
  else
    ts_diag_error(v->d, "%s", msg);
  ts_buf_free(&line);
}

static void ts_v_define(ts_verifier *v, const ts_value *val) {
  if (val->id >= v->nids)
    return;
  v->defined[val->id] = true;
  if (v->nundo == v->cap_undo) {
    size_t cap = v->cap_undo ? v->cap_undo * 2 : 256;
    uint32_t *u = realloc(v->undo, cap * sizeof *u);
    if (!u) {
      v->oom = true;
      return;
    }
    v->undo = u;
    v->cap_undo = cap;
  }
  v->undo[v->nundo++] = val->id;
}

static void ts_v_uses_match(ts_verifier *v, const ts_node *n, const ts_value *val) {
  for (uint32_t i = 0; i < val->nuses; i++) {
    ts_use u = val->uses[i];
    if (u.index >= u.user->ninputs || u.user->inputs[u.index] != val)
      ts_v_fail(v, n, "the uses list of %%%s names input %u of a node that does not use it",
                val->name ? val->name : "?", u.index);
  }
}

static void ts_v_outputs(ts_verifier *v, const ts_node *n) {
  for (uint32_t i = 0; i < n->noutputs; i++) {
    const ts_value *o = n->outputs[i];
    if (o->node != n || o->offset != i)
      ts_v_fail(v, n, "output %u does not point back to its node", i);
    if (!o->type)
      ts_v_fail(v, n, "output %u has no type", i);
    if (o->id < v->nids && v->defined[o->id])
      ts_v_fail(v, n, "output %u is defined twice", i);
    ts_v_uses_match(v, n, o);
    ts_v_define(v, o);
  }
}

static void ts_v_inputs(ts_verifier *v, const ts_node *n) {
  for (uint32_t i = 0; i < n->ninputs; i++) {
    const ts_value *in = n->inputs[i];
    if (!in) {
      ts_v_fail(v, n, "input %u is missing", i);
      continue;
    }
    ts_buf name = {0};
    ts_value_print_name(&name, in);
    if (in->node->graph != v->g)
      ts_v_fail(v, n, "input %s belongs to another graph", name.data);
    else if (in->id >= v->nids || !v->defined[in->id])
      ts_v_fail(v, n, "input %s is used before its definition or outside its scope", name.data);
    bool found = false;
    for (uint32_t u = 0; u < in->nuses && !found; u++)
      found = in->uses[u].user == n && in->uses[u].index == i;
    if (!found)
      ts_v_fail(v, n, "input %s does not list this use", name.data);
    ts_buf_free(&name);
  }
}

/* Arity against the op table: some overload must take this many inputs (all
 * arguments, or all but trailing defaults) and give this many outputs. */
static void ts_v_schema(ts_verifier *v, const ts_node *n) {
  uint32_t ns = 0;
  const ts_schema *const *ss = n->kind < TS_K_COUNT ? ts_op_schemas(n->kind, &ns) : NULL;
  if (!ss || !ns)
    return;
  for (uint32_t i = 0; i < ns; i++) {
    const ts_schema *s = ss[i];
    uint32_t required = 0;
    for (uint32_t a = 0; a < s->nargs; a++)
      if (!s->args[a].has_default)
        required = a + 1;
    bool in_ok = n->ninputs >= required && (s->vararg || n->ninputs <= s->nargs);
    bool out_ok = s->varret || n->noutputs == s->nrets;
    if (in_ok && out_ok)
      return;
  }
  ts_v_fail(v, n, "no overload of %s takes %u input%s and gives %u output%s", n->kind_name, n->ninputs,
            n->ninputs == 1 ? "" : "s", n->noutputs, n->noutputs == 1 ? "" : "s");
}

static void ts_v_block(ts_verifier *v, const ts_block *b, const ts_node *owner);

static void ts_v_control(ts_verifier *v, const ts_node *n) {
  if (n->kind == TS_K_prim_If) {
    if (n->ninputs != 1 || n->nblocks != 2) {
      ts_v_fail(v, n, "prim::If takes one condition and two blocks");
      return;
    }
    for (uint32_t i = 0; i < 2; i++) {
      const ts_block *b = n->blocks[i];
      if (ts_block_ninputs(b) != 0)
        ts_v_fail(v, n, "block%u of prim::If takes no inputs", i);
      if (ts_block_noutputs(b) != n->noutputs)
        ts_v_fail(v, n, "block%u of prim::If returns %u values for %u outputs", i, ts_block_noutputs(b),
                  n->noutputs);
    }
  } else if (n->kind == TS_K_prim_Loop) {
    if (n->ninputs < 2 || n->nblocks != 1) {
      ts_v_fail(v, n, "prim::Loop takes a trip count, a condition, the carried values and one block");
      return;
    }
    uint32_t carried = n->ninputs - 2;
    const ts_block *b = n->blocks[0];
    if (n->noutputs != carried)
      ts_v_fail(v, n, "prim::Loop carries %u values but has %u outputs", carried, n->noutputs);
    if (ts_block_ninputs(b) != carried + 1)
      ts_v_fail(v, n, "the body of prim::Loop takes %u inputs, expected the counter and %u carried values",
                ts_block_ninputs(b), carried);
    if (ts_block_noutputs(b) != carried + 1)
      ts_v_fail(v, n, "the body of prim::Loop returns %u values, expected the condition and %u carried values",
                ts_block_noutputs(b), carried);
  } else if (n->kind == TS_K_prim_Constant) {
    if (n->ninputs != 0 || n->noutputs != 1)
      ts_v_fail(v, n, "prim::Constant takes no inputs and has one output");
  }
}

static void ts_v_node(ts_verifier *v, const ts_node *n, const ts_block *b) {
  if (n->graph != v->g)
    ts_v_fail(v, n, "node belongs to another graph");
  if (n->owner != b)
    ts_v_fail(v, n, "node does not point back to its block");
  if (n->next->prev != n || n->prev->next != n)
    ts_v_fail(v, n, "node list links are broken");
  ts_v_inputs(v, n);
  ts_v_control(v, n);
  ts_v_schema(v, n);
  for (uint32_t i = 0; i < n->nblocks; i++)
    ts_v_block(v, n->blocks[i], n);
  /* outputs come into scope after the node's blocks */
  ts_v_outputs(v, n);
  for (const ts_attr *a = n->attrs; a; a = a->next)
    if (a->kind == TS_ATTR_GRAPH) {
      if (!a->u.g || a->u.g->parent != v->g)
        ts_v_fail(v, n, "subgraph attribute '%s' is not owned by this graph", a->name);
      else if (!ts_graph_verify(a->u.g, v->d))
        ts_v_fail(v, n, "subgraph attribute '%s' does not verify", a->name);
    }
}

/* Values defined inside a block go out of scope at its end. */
static void ts_v_block(ts_verifier *v, const ts_block *b, const ts_node *owner) {
  size_t mark = v->nundo;
  if (b->graph != v->g || b->owner_node != owner)
    ts_v_fail(v, owner, "a block does not point back to its graph and node");
  if (b->param->owner != b || b->ret->owner != b)
    ts_v_fail(v, owner, "a block's Param/Return nodes do not point back to it");
  ts_v_outputs(v, b->param);
  size_t steps = 0;
  for (const ts_node *n = ts_block_first(b); n != b->ret; n = n->next) {
    if (!n || ++steps > (size_t)v->g->next_node_id) {
      ts_v_fail(v, owner, "a block's node list is not a cycle through its Return node");
      break;
    }
    ts_v_node(v, n, b);
  }
  ts_v_inputs(v, b->ret);
  while (v->nundo > mark)
    v->defined[v->undo[--v->nundo]] = false;
}

bool ts_graph_verify(const ts_graph *g, ts_diag *d) {
  int before = d->errors;
  ts_verifier v = {.g = g, .d = d, .nids = g->next_value_id};
  v.defined = calloc(v.nids ? v.nids : 1, sizeof *v.defined);
  if (!v.defined) {
    ts_diag_error(d, "out of memory while verifying");
    return false;
  }
  if (!ts_graph_ok(g))
    ts_diag_error(d, "the graph ran out of memory while it was built");
  ts_v_block(&v, g->block, NULL);
  if (v.oom)
    ts_diag_error(d, "out of memory while verifying");
  free(v.defined);
  free(v.undo);
  return d->errors == before;
}
