/* passes/unroll.c: the complete-unrolling half of torch::jit::UnrollLoops
 * (passes/loop_unrolling.cpp).
 *
 * A prim::Loop is a for-loop of a known length when its trip count is an
 * int constant, its start condition a True constant and the condition its
 * body returns a True constant (a loop with a `break`, or a while loop,
 * computes it and is left alone). Such a loop of at most 8 iterations whose
 * body holds no loop is replaced by that many copies of its body, one after
 * the other before the loop: copy k reads the iteration number k as a new
 * int constant and the loop-carried values the copy before it produced; the
 * loop's outputs become the last copy's. A loop of 0 iterations goes, its
 * outputs replaced by the initial values. Inner loops are handled first, so
 * an outer loop whose inner loops were all unrolled is unrolled too. If
 * anything changed, EliminateDeadCode runs (unused iteration constants,
 * dead copies).
 *
 * Where this does less: PyTorch also unrolls longer loops by a factor of 8
 * (a loop of 8-iteration bodies plus an epilogue) and limits bodies to 32
 * nodes; here longer loops are left as they are, and the body size is not
 * limited (8 copies of any body at most). Instead, the nodes one run of the
 * pass may create are budgeted (16,384 by default): nested loops
 * of 8 trips each multiply by 8 at every level, and a loop whose copies
 * would pass what is left of the budget stays a loop (unrolling is an
 * optimization; the loop is still correct). */
#include "passes.h"

/* TS_UNROLL_MAX_NEW_NODES: some passes after unroll grow faster than
 * linearly with the graph (262,144 unrolled nodes took 10 s of passes), so
 * unrolling stops well before the graph size limit. */
enum { TS_UNROLL_MAX_TRIPS = 8, TS_UNROLL_MAX_NEW_NODES = 1 << 14 };

typedef struct ts_unroll {
  bool changed;
  bool oom;
  uint64_t budget; /* nodes the pass may still create */
} ts_unroll;

/* Nodes in a block, nested blocks included. */
static uint64_t ts_unroll_count(const ts_block *b) {
  uint64_t n = 0;
  for (ts_node *x = ts_block_first(b); x != b->ret; x = x->next) {
    n++;
    for (uint32_t i = 0; i < x->nblocks; i++)
      n += ts_unroll_count(x->blocks[i]);
  }
  return n;
}

static bool ts_unroll_has_loop(const ts_block *b) {
  for (ts_node *n = ts_block_first(b); n != b->ret; n = n->next) {
    if (ts_node_is(n, TS_K_prim_Loop))
      return true;
    for (uint32_t i = 0; i < n->nblocks; i++)
      if (ts_unroll_has_loop(n->blocks[i]))
        return true;
  }
  return false;
}

/* The trip count of a for-loop of known length, or -1. */
static int64_t ts_unroll_trips(const ts_node *n) {
  if (n->nblocks != 1 || n->ninputs < 2 || n->ninputs != n->noutputs + 2)
    return -1;
  const ts_block *body = n->blocks[0];
  if (ts_block_ninputs(body) != n->noutputs + 1 || ts_block_noutputs(body) != n->noutputs + 1)
    return -1;
  int64_t trips;
  bool start, cont;
  if (!ts_pass_const_int(n->inputs[0], &trips) || !ts_pass_const_bool(n->inputs[1], &start) || !start ||
      !ts_pass_const_bool(ts_block_output(body, 0), &cont) || !cont)
    return -1;
  return trips < 0 ? 0 : trips;
}

/* Copies of the body in place of the loop. */
static void ts_unroll_loop(ts_unroll *u, ts_node *n, int64_t trips) {
  ts_block *body = n->blocks[0];
  uint32_t ncarried = n->noutputs;
  enum { MAX_SMALL = 16 };
  ts_value *small_in[MAX_SMALL + 1], *small_out[MAX_SMALL + 1];
  ts_arena *a = ts_graph_arena(n->graph);
  /* block inputs: the iteration number, then the carried values */
  ts_value **in = ncarried < MAX_SMALL ? small_in : ts_arena_alloc(a, (ncarried + 1) * sizeof *in);
  ts_value **out = ncarried < MAX_SMALL ? small_out : ts_arena_alloc(a, (ncarried + 1) * sizeof *out);
  if (!in || !out) {
    u->oom = true;
    return;
  }
  for (uint32_t i = 0; i < ncarried; i++)
    in[i + 1] = n->inputs[i + 2];
  for (int64_t k = 0; k < trips; k++) {
    ts_cval iter = {.kind = TS_CV_INT, .i = k};
    if (!(in[0] = ts_pass_const_insert(n, &iter)) || !ts_block_clone_before(body, n, in, out)) {
      u->oom = true;
      return;
    }
    for (uint32_t i = 0; i < ncarried; i++)
      in[i + 1] = out[i + 1];
  }
  for (uint32_t i = 0; i < ncarried; i++)
    ts_value_replace_all_uses(n->outputs[i], in[i + 1]);
  ts_node_destroy(n);
  u->changed = true;
}

static void ts_unroll_block(ts_unroll *u, ts_block *b) {
  for (ts_node *n = ts_block_first(b); n != b->ret && !u->oom;) {
    ts_node *next = n->next; /* n may be replaced */
    for (uint32_t i = 0; i < n->nblocks; i++)
      ts_unroll_block(u, n->blocks[i]);
    if (ts_node_is(n, TS_K_prim_Loop)) {
      int64_t trips = ts_unroll_trips(n);
      if (trips >= 0 && trips <= TS_UNROLL_MAX_TRIPS && !ts_unroll_has_loop(n->blocks[0])) {
        /* each copy: the body and its iteration constant */
        uint64_t cost = (uint64_t)trips * (ts_unroll_count(n->blocks[0]) + 1);
        if (cost <= u->budget) {
          u->budget -= cost;
          ts_unroll_loop(u, n, trips);
        }
      }
    }
    n = next;
  }
}

bool ts_pass_unroll(ts_graph *g, ts_diag *d) { return ts_pass_unroll_limited(g, TS_UNROLL_MAX_NEW_NODES, d); }

bool ts_pass_unroll_limited(ts_graph *g, uint64_t max_new_nodes, ts_diag *d) {
  ts_unroll u = {.budget = max_new_nodes};
  ts_unroll_block(&u, g->block);
  if (u.oom || !ts_graph_ok(g)) {
    ts_diag_error(d, "unroll: out of memory");
    return false;
  }
  return u.changed ? ts_pass_dce(g, d) : true;
}
