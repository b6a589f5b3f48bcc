/* passes/inline.c: torch::jit::Inline (passes/inliner.cpp, with
 * inlineCallTo from ir/ir.cpp).
 *
 * Walks every block in order. A prim::CallFunction loses its first input
 * (the Function constant) and a prim::CallMethod keeps all of its inputs,
 * self first; the callee graph the resolver gives is copied in front of the
 * call with those inputs standing for its inputs (ts_block_clone_before:
 * debug names kept and made unique, source locations kept), the call's
 * outputs are replaced by the copy's outputs, and the call goes. Where a
 * call output has a debug name, the value replacing it takes that name (as
 * inlineCallTo does: the name moves even when the callee returns one of
 * its inputs). Calls inside other nodes' blocks are inlined too; the copied
 * nodes are not visited again, so calls inside a callee stay unless the
 * resolver hands out graphs that are inlined already (PyTorch inlines a
 * callee's optimized graph, which is).
 *
 * As in PyTorch 1.13, the Function constant a CallFunction used is left in
 * place even when nothing uses it any more; dead code elimination removes
 * it. Not modelled: inlined call stacks (PyTorch records the callee and
 * module instance on each copied node), the "fallback" function
 * attribute.
 *
 * The graph may not grow past a node budget (TS_PASS_MAX_NODES by default):
 * each callee's nodes are counted before it is copied in, and a call that
 * would pass the budget is an error naming the callee and the limit. */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

static ts_graph ts_inline_keep_marker;
ts_graph *const ts_pass_callee_keep = &ts_inline_keep_marker;

/* Reports a malformed call with the node as it prints. */
static void ts_inline_fail(ts_diag *d, const ts_node *n, const char *msg) {
  ts_buf line = {0};
  ts_node_print(&line, n, 0);
  char *nl = line.data ? strchr(line.data, '\n') : NULL;
  if (nl)
    *nl = 0;
  ts_diag_error(d, "inline: %s\n  in: %s", msg, line.data ? line.data : "");
  ts_buf_free(&line);
}

/* inlineCallTo: replaces `call` (inputs already set up) by `callee`. */
static bool ts_inline_call(ts_node *call, const ts_graph *callee, ts_diag *d) {
  const ts_block *body = callee->block;
  if (ts_block_ninputs(body) != call->ninputs || ts_block_noutputs(body) != call->noutputs) {
    ts_inline_fail(d, call, "the callee's inputs or outputs do not match the call");
    return false;
  }
  ts_value *stack_outs[8];
  ts_value **outs = call->noutputs <= 8 ? stack_outs : malloc(call->noutputs * sizeof *outs);
  if (!outs || !ts_block_clone_before(body, call, call->inputs, outs)) {
    if (outs != stack_outs)
      free(outs);
    ts_diag_error(d, "inline: out of memory");
    return false;
  }
  bool ok = true;
  for (uint32_t i = 0; i < call->noutputs; i++) {
    ts_value *old = call->outputs[i];
    if (old->name && !ts_name_is_number(old->name, strlen(old->name)) && !ts_value_set_name(outs[i], old->name))
      ok = false;
    ts_value_replace_all_uses(old, outs[i]);
  }
  if (outs != stack_outs)
    free(outs);
  ts_node_destroy(call);
  if (!ok)
    ts_diag_error(d, "inline: out of memory");
  return ok;
}

/* A walk's state: the resolver and the graph's node count against its
 * budget (nested blocks and subgraphs counted, as ts_graph_count_nodes). */
typedef struct ts_inline {
  ts_pass_callee_fn callee_fn;
  void *ctx;
  ts_diag *d;
  uint64_t nodes, max_nodes;
} ts_inline;

/* The callee's name for a message: the function's qualified name, or the
 * method's name. */
static const char *ts_inline_callee_name(const ts_node *call, bool fn) {
  if (fn) {
    const ts_type *t = call->inputs[0]->type;
    return t && t->name ? t->name : "a function";
  }
  const ts_attr *a = ts_node_attr(call, "name");
  return a && a->kind == TS_ATTR_STR ? a->u.s : "a method";
}

static bool ts_inline_block(ts_inline *w, ts_block *b) {
  ts_diag *d = w->d;
  for (ts_node *n = ts_block_first(b); n != b->ret;) {
    ts_node *next = n->next; /* the copy goes before n, n goes */
    bool fn = ts_node_is(n, TS_K_prim_CallFunction), method = ts_node_is(n, TS_K_prim_CallMethod);
    if (fn || method) {
      if (n->ninputs < 1 || (fn && !ts_node_is(n->inputs[0]->node, TS_K_prim_Constant))) {
        ts_inline_fail(d, n, fn ? "prim::CallFunction's first input is not a Function constant"
                                : "prim::CallMethod has no self input");
        return false;
      }
      const ts_graph *callee = w->callee_fn(w->ctx, n, d);
      if (!callee)
        return false;
      if (callee == ts_pass_callee_keep) {
        n = next;
        continue;
      }
      /* Checked before copying: a chain of functions each calling the one
       * before twice doubles the graph at every level. */
      uint64_t add = ts_graph_count_nodes(callee);
      if (w->max_nodes && w->nodes - 1 + add > w->max_nodes) {
        ts_diag_error(d, "inline: inlining %s would make the graph %llu nodes, over the limit of %llu (graph size)",
                      ts_inline_callee_name(n, fn), (unsigned long long)(w->nodes - 1 + add),
                      (unsigned long long)w->max_nodes);
        return false;
      }
      w->nodes = w->nodes - 1 + add;
      if (fn)
        ts_node_remove_input(n, 0);
      if (!ts_inline_call(n, callee, d))
        return false;
    } else {
      for (uint32_t i = 0; i < n->nblocks; i++)
        if (!ts_inline_block(w, n->blocks[i]))
          return false;
    }
    n = next;
  }
  return true;
}

bool ts_pass_inline_limited(ts_graph *g, ts_pass_callee_fn callee, void *ctx, uint64_t max_nodes, ts_diag *d) {
  if (!callee) {
    ts_diag_error(d, "inline: no callee resolver");
    return false;
  }
  ts_inline w = {.callee_fn = callee, .ctx = ctx, .d = d, .max_nodes = max_nodes, .nodes = ts_graph_count_nodes(g)};
  return ts_inline_block(&w, g->block) && ts_graph_ok(g);
}

bool ts_pass_inline(ts_graph *g, ts_pass_callee_fn callee, void *ctx, ts_diag *d) {
  return ts_pass_inline_limited(g, callee, ctx, TS_PASS_MAX_NODES, d);
}
