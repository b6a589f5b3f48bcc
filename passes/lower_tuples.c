/* passes/lower_tuples.c: torch::jit::LowerSimpleTuples
 * (passes/lower_tuples.cpp, removeTupleNodes with must_remove_tuples off).
 *
 * In every block, in order:
 *   prim::TupleUnpack(TupleConstruct(a, b))      -> its outputs become a, b
 *   prim::TupleIndex(TupleConstruct(a, b), 1)    -> b, for a constant int
 *       index (negative counts from the end); out of range: left alone
 *   prim::TupleSlice[beg=i, end=j](TupleConstruct(...))
 *       -> a new TupleConstruct of elements i..j-1 before it
 * Anything else (a tuple from a graph input, a call, an If, a non-constant
 * index) is left as it is. Then, as PyTorch does, EliminateDeadCode runs on
 * the whole graph, which removes the unpacks and the constructs left
 * without uses (and any other dead code).
 *
 * prim::TupleSlice is recognised by its name, whether or not the op table
 * has an entry for it.
 * The counts are checked where PyTorch would fail an assertion: an unpack
 * with more outputs than the construct has elements, or a slice past the
 * end, is left alone. */
#include "passes.h"

#include <string.h>

/* by name: the kind may or may not be in the op table */
static bool ts_lt_is(const ts_node *n, const char *name) { return strcmp(n->kind_name, name) == 0; }

/* Returns false on allocation failure. */
static bool ts_lt_node(ts_node *n) {
  bool unpack = ts_node_is(n, TS_K_prim_TupleUnpack), index = ts_node_is(n, TS_K_prim_TupleIndex);
  bool slice = ts_lt_is(n, "prim::TupleSlice");
  if ((!unpack && !index && !slice) || n->ninputs < 1)
    return true;
  ts_node *construct = n->inputs[0]->node;
  if (!ts_node_is(construct, TS_K_prim_TupleConstruct))
    return true;
  uint32_t len = construct->ninputs;
  if (unpack) {
    if (n->noutputs != len)
      return true;
    for (uint32_t i = 0; i < n->noutputs; i++)
      ts_value_replace_all_uses(n->outputs[i], construct->inputs[i]);
  } else if (index) {
    int64_t i;
    if (n->ninputs != 2 || n->noutputs != 1 || !ts_pass_const_int(n->inputs[1], &i))
      return true;
    const ts_type *tt = construct->noutputs == 1 ? construct->outputs[0]->type : NULL;
    if (tt && tt->kind == TS_TY_TUPLE && tt->n < len)
      len = tt->n;
    if (i < 0)
      i += len;
    if (i >= 0 && i < (int64_t)len)
      ts_value_replace_all_uses(n->outputs[0], construct->inputs[i]);
  } else {
    const ts_attr *beg = ts_node_attr(n, "beg"), *end = ts_node_attr(n, "end");
    if (!beg || !end || beg->kind != TS_ATTR_INT || end->kind != TS_ATTR_INT || n->noutputs != 1)
      return true;
    int64_t b = beg->u.i, e = end->u.i;
    if (b < 0 || e > (int64_t)len || b > e)
      return true;
    ts_graph *g = n->graph;
    ts_node *tup = ts_node_new(g, TS_K_prim_TupleConstruct, 0);
    if (!tup)
      return false;
    const ts_type *elems[64];
    const ts_type **types = e - b <= 64 ? elems : ts_arena_alloc(&g->arena, (size_t)(e - b) * sizeof *types);
    if (!types)
      return false;
    for (int64_t i = b; i < e; i++) {
      if (!ts_node_add_input(tup, construct->inputs[i]))
        return false;
      types[i - b] = construct->inputs[i]->type;
    }
    const ts_type *t = ts_type_tuple(&g->arena, (uint32_t)(e - b), types);
    if (!t || !ts_node_add_output(tup, t))
      return false;
    ts_node_insert_before(tup, n);
    ts_value_replace_all_uses(n->outputs[0], tup->outputs[0]);
  }
  return true;
}

static bool ts_lt_block(ts_block *b) {
  for (ts_node *n = ts_block_first(b); n != b->ret; n = n->next) {
    if (!ts_lt_node(n))
      return false;
    for (uint32_t i = 0; i < n->nblocks; i++)
      if (!ts_lt_block(n->blocks[i]))
        return false;
  }
  return true;
}

bool ts_pass_lower_simple_tuples(ts_graph *g, ts_diag *d) {
  if (!ts_lt_block(g->block) || !ts_graph_ok(g)) {
    ts_diag_error(d, "lower-simple-tuples: out of memory");
    return false;
  }
  return ts_pass_dce(g, d);
}
