/* passes/remove_dropout.c: torch::jit::removeDropout
 * (passes/remove_dropout.cpp).
 *
 * aten::dropout, feature_dropout, alpha_dropout, feature_alpha_dropout and
 * their in-place forms (dropout_, ...) whose `train` argument is a constant
 * False do nothing: their output is replaced by their input and the node
 * goes. In-place forms return their input, so the same holds for them.
 * A `train` that is not a constant (self.training before freezing, a graph
 * input) or is True leaves the node as it is. PyTorch's pass knows only
 * dropout and feature_dropout (and their in-place forms); the alpha forms
 * are the identity in eval mode as well. As in PyTorch, no dead code
 * elimination follows (the constants the nodes read stay). */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

static bool rd_is_dropout(const ts_node *n) {
  static const char *const names[] = {
      "aten::dropout",       "aten::dropout_",       "aten::feature_dropout",       "aten::feature_dropout_",
      "aten::alpha_dropout", "aten::alpha_dropout_", "aten::feature_alpha_dropout", "aten::feature_alpha_dropout_",
  };
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strcmp(n->kind_name, names[i]) == 0)
      return true;
  return false;
}

/* Blocks inside the node first, then the node, last to first (as PyTorch
 * walks them); the removable nodes are destroyed at the end. */
static bool rd_block(ts_block *b, ts_node ***dead, size_t *ndead, size_t *cap) {
  for (ts_node *n = b->ret->prev; n != b->ret; n = n->prev) {
    for (uint32_t i = 0; i < n->nblocks; i++)
      if (!rd_block(n->blocks[i], dead, ndead, cap))
        return false;
    bool train = true;
    if (!rd_is_dropout(n) || n->ninputs != 3 || n->noutputs != 1 || !ts_pass_const_bool(n->inputs[2], &train) || train)
      continue;
    if (*ndead == *cap) {
      size_t nc = *cap ? *cap * 2 : 16;
      ts_node **p = realloc(*dead, nc * sizeof *p);
      if (!p)
        return false;
      *dead = p;
      *cap = nc;
    }
    ts_value_replace_all_uses(n->outputs[0], n->inputs[0]);
    (*dead)[(*ndead)++] = n;
  }
  return true;
}

bool ts_pass_remove_dropout(ts_graph *g, ts_diag *d) {
  ts_node **dead = NULL;
  size_t ndead = 0, cap = 0;
  bool ok = rd_block(g->block, &dead, &ndead, &cap);
  for (size_t i = 0; i < ndead; i++)
    ts_node_destroy(dead[i]);
  free(dead);
  if (!ok) {
    ts_diag_error(d, "remove-dropout: out of memory");
    return false;
  }
  return true;
}
