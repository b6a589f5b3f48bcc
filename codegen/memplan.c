/* codegen/memplan.c: the static memory plan of the activation arena.
 *
 * The values the caller marks (want) among the outputs of the graph's top
 * block get byte offsets in one arena, the way PyTorch's static runtime
 * plans its managed tensors (torch/csrc/jit/runtime/static/memory_planner.cpp)
 * but offline:
 *   - a value is planned when its type is a complete, contiguous CPU tensor
 *     (ts_cg_type_nbytes > 0), it is a fresh allocation (it may alias none
 *     of its node's inputs, and its node has no blocks: an If's or a Loop's
 *     outputs are its blocks' values), and it does not escape (alias db:
 *     not a graph output nor anything that may alias one, not held by a
 *     container the db sends to the wildcard set);
 *   - liveness is by position in the top block: a use inside a nested
 *     block counts at the If/Loop holding it; a buffer lives from its node
 *     to the last use of every value that may alias it (views, lists that
 *     hold it, loop-carried values). Those values are found by walking
 *     forward from the buffer's value through its uses, keeping what the
 *     alias db says may alias the value it was reached from: every
 *     points-to or contains edge of the db joins a node's output (or a
 *     block's input) to that node's inputs or its blocks' outputs, and a
 *     planned value is fresh and outside the wildcard set, so the walk
 *     finds every value the db would. One more than the db: a Loop's
 *     output may be its carried input itself (no iteration);
 *   - assignment walks the nodes in order: buffers whose last use is
 *     before the node are freed (coalescing with free neighbours); an
 *     output may take the buffer of an input whose last use is this node
 *     (in place, when inplace_ok says so and the sizes agree); the others
 *     are placed best fit among the free blocks, else at the arena's end.
 *     Offsets and sizes are multiples of 64 bytes.
 * Less than PyTorch's static runtime: values made inside loops and
 * branches, and tensors of dynamic size, are left to the heap.
 */
#include "codegen.h"

#include "passes.h"

#include <stdlib.h>
#include <string.h>

#define TS_MP_ALIGN 64u

/* One arena buffer: a planned value's, or shared by an in-place chain. */
typedef struct ts_mp_buf {
  uint64_t off, size;
  int64_t end;      /* last top-block position any value in it is used at */
  int64_t taken_at; /* node that took it in place (-1: none), so only one output does */
} ts_mp_buf;

/* A free block of the arena. */
typedef struct ts_mp_free {
  uint64_t off, size;
} ts_mp_free;

typedef struct ts_mp {
  ts_graph *g;
  ts_alias_db *db;
  uint32_t nvalues, nnodes;
  int64_t *pos;       /* by node id: top-block position of the node holding it (-1: param, n: return) */
  uint8_t *cand;      /* by value id: planned */
  uint64_t *tsize;    /* by value id: the type's bytes (candidates) */
  int64_t *end;       /* by value id: last position of the candidate's buffer */
  int32_t *bufof;     /* by value id: buffer index, -1 */
  uint32_t *mark;     /* by value id: walk epoch */
  uint32_t epoch;
  const ts_value **work;
  ts_mp_buf *bufs;
  uint32_t nbufs;
  uint32_t *live;     /* buffers not yet freed */
  uint32_t nlive;
  ts_mp_free *freel;  /* sorted by offset, never adjacent */
  uint32_t nfree;
  uint64_t top;       /* arena's end so far (the high-water mark) */
} ts_mp;

static uint64_t ts_mp_round(uint64_t n) { return (n + (TS_MP_ALIGN - 1)) & ~(uint64_t)(TS_MP_ALIGN - 1); }

uint64_t ts_cg_type_nbytes(const ts_type *t) {
  if (!t || t->kind != TS_TY_TENSOR || !t->tensor)
    return 0;
  const ts_tensor_info *ti = t->tensor;
  uint64_t n = ts_dtype_size((ts_dtype)ti->dtype);
  if (!n || ti->undefined == 1 || ti->rank < 0 || (ti->rank > 0 && (!ti->sizes || !ti->strides)))
    return 0;
  /* contiguous as ATen's is_contiguous: strides of size-1 dims do not matter */
  uint64_t expect = 1;
  for (int32_t d = ti->rank - 1; d >= 0; d--) {
    int64_t s = ti->sizes[d];
    if (s <= 0)
      return 0; /* unknown, symbolic, or no elements */
    if (s != 1 && ti->strides[d] != (int64_t)expect)
      return 0;
    if (expect > (uint64_t)INT64_MAX / (uint64_t)s)
      return 0;
    expect *= (uint64_t)s;
  }
  if (expect > ((uint64_t)INT64_MAX - TS_MP_ALIGN) / n)
    return 0;
  return expect * n;
}

static bool ts_mp_bad_id(ts_diag *d) {
  ts_diag_error(d, "memory plan: a node or value id is out of the graph's range");
  return false;
}

/* Gives the nodes of block b (nested ones too) position p, checking the
 * ids the plan indexes its arrays with. */
static bool ts_mp_number(ts_mp *m, const ts_block *b, int64_t p, ts_diag *d) {
  if (b->param->id >= m->nnodes || b->ret->id >= m->nnodes)
    return ts_mp_bad_id(d);
  m->pos[b->param->id] = p;
  m->pos[b->ret->id] = p;
  for (uint32_t i = 0; i < b->param->noutputs; i++)
    if (b->param->outputs[i]->id >= m->nvalues)
      return ts_mp_bad_id(d);
  for (const ts_node *n = ts_block_first(b); n != b->ret; n = n->next) {
    if (n->id >= m->nnodes)
      return ts_mp_bad_id(d);
    m->pos[n->id] = p;
    for (uint32_t i = 0; i < n->noutputs; i++)
      if (n->outputs[i]->id >= m->nvalues)
        return ts_mp_bad_id(d);
    for (uint32_t i = 0; i < n->nblocks; i++)
      if (!ts_mp_number(m, n->blocks[i], p, d))
        return false;
  }
  return true;
}

/* Numbers the top block's nodes 0..n-1, everything nested in a node with
 * the node's number; the graph's inputs are at -1, its return at n. */
static bool ts_mp_number_top(ts_mp *m, ts_diag *d) {
  const ts_block *top = m->g->block;
  int64_t i = 0;
  for (const ts_node *n = ts_block_first(top); n != top->ret; n = n->next, i++) {
    if (n->id >= m->nnodes)
      return ts_mp_bad_id(d);
    m->pos[n->id] = i;
    for (uint32_t k = 0; k < n->noutputs; k++)
      if (n->outputs[k]->id >= m->nvalues)
        return ts_mp_bad_id(d);
    for (uint32_t k = 0; k < n->nblocks; k++)
      if (!ts_mp_number(m, n->blocks[k], i, d))
        return false;
  }
  if (top->param->id >= m->nnodes || top->ret->id >= m->nnodes)
    return ts_mp_bad_id(d);
  for (uint32_t k = 0; k < top->param->noutputs; k++)
    if (top->param->outputs[k]->id >= m->nvalues)
      return ts_mp_bad_id(d);
  m->pos[top->param->id] = -1;
  m->pos[top->ret->id] = i;
  return true;
}

/* The last position v is used at (its own node's position if unused). */
static int64_t ts_mp_last_use(const ts_mp *m, const ts_value *v) {
  int64_t last = m->pos[v->node->id];
  for (uint32_t u = 0; u < v->nuses; u++) {
    int64_t p = m->pos[v->uses[u].user->id];
    if (p > last)
      last = p;
  }
  return last;
}

/* Adds x to the walk when `force`d or when it may alias u, a value the
 * walk holds: every db edge out of x is to such a u. */
static void ts_mp_visit(ts_mp *m, const ts_value *u, const ts_value *x, bool force, uint32_t *nwork, int64_t *end) {
  if (m->mark[x->id] == m->epoch || (!force && !ts_alias_may_alias(m->db, x, u)))
    return;
  m->mark[x->id] = m->epoch;
  m->work[(*nwork)++] = x;
  int64_t last = ts_mp_last_use(m, x);
  if (last > *end)
    *end = last;
}

static void ts_mp_visit_node(ts_mp *m, const ts_value *u, const ts_node *n, uint32_t *nwork, int64_t *end) {
  for (uint32_t i = 0; i < n->noutputs; i++)
    ts_mp_visit(m, u, n->outputs[i], false, nwork, end);
  for (uint32_t b = 0; b < n->nblocks; b++)
    for (uint32_t i = 0; i < ts_block_ninputs(n->blocks[b]); i++)
      ts_mp_visit(m, u, ts_block_input(n->blocks[b], i), false, nwork, end);
}

/* The last position at which c's memory may be read: the last use of
 * every value that may alias it (see the file comment for why walking
 * forward through uses finds them all). */
static int64_t ts_mp_lifetime(ts_mp *m, const ts_value *c) {
  if (++m->epoch == 0) {
    memset(m->mark, 0, (size_t)m->nvalues * sizeof *m->mark);
    m->epoch = 1;
  }
  int64_t end = ts_mp_last_use(m, c);
  uint32_t nwork = 0;
  m->mark[c->id] = m->epoch;
  m->work[nwork++] = c;
  while (nwork) {
    const ts_value *u = m->work[--nwork];
    for (uint32_t k = 0; k < u->nuses; k++) {
      const ts_node *user = u->uses[k].user;
      uint32_t idx = u->uses[k].index;
      const ts_block *ob = user->owner;
      if (ob && user == ob->ret) {
        /* a block output: the If/Loop outputs and the loop-carried inputs */
        if (ob->owner_node)
          ts_mp_visit_node(m, u, ob->owner_node, &nwork, &end);
        continue;
      }
      ts_mp_visit_node(m, u, user, &nwork, &end);
      /* a loop that runs no iteration returns its carried inputs; the db
       * (like PyTorch's AliasDb) points a loop's outputs to the body's
       * only */
      if (ts_node_is(user, TS_K_prim_Loop) && idx >= 2 && idx - 2 < user->noutputs)
        ts_mp_visit(m, u, user->outputs[idx - 2], true, &nwork, &end);
    }
  }
  return end;
}

/* Whether output v of top-block node n is planned (before its lifetime). */
static bool ts_mp_candidate(ts_mp *m, const ts_node *n, const ts_value *v, ts_cg_plan_want_fn want, void *arg) {
  if (n->nblocks || (want && !want(arg, v)))
    return false;
  const ts_type *t = v->type;
  if (!ts_cg_type_nbytes(t))
    return false;
  if (t->tensor->device.type != TS_DEV_CPU && t->tensor->device.type != TS_DEV_NONE)
    return false;
  /* graph outputs, what may alias them, the wildcard set */
  if (ts_alias_escapes(m->db, v))
    return false;
  for (uint32_t i = 0; i < n->ninputs; i++)
    if (ts_alias_may_alias(m->db, v, n->inputs[i]))
      return false;
  return true;
}

/* ------------------------------------------------------------ free list */

static void ts_mp_free_remove(ts_mp *m, uint32_t k) {
  memmove(m->freel + k, m->freel + k + 1, (size_t)(m->nfree - k - 1) * sizeof *m->freel);
  m->nfree--;
}

/* Returns [off, off+size) to the free list, merged with its neighbours. */
static void ts_mp_release(ts_mp *m, uint64_t off, uint64_t size) {
  uint32_t k = 0;
  while (k < m->nfree && m->freel[k].off < off)
    k++;
  bool left = k > 0 && m->freel[k - 1].off + m->freel[k - 1].size == off;
  bool right = k < m->nfree && off + size == m->freel[k].off;
  if (left && right) {
    m->freel[k - 1].size += size + m->freel[k].size;
    ts_mp_free_remove(m, k);
  } else if (left) {
    m->freel[k - 1].size += size;
  } else if (right) {
    m->freel[k].off = off;
    m->freel[k].size += size;
  } else {
    /* room for one block per buffer plus one was allocated up front */
    memmove(m->freel + k + 1, m->freel + k, (size_t)(m->nfree - k) * sizeof *m->freel);
    m->freel[k].off = off;
    m->freel[k].size = size;
    m->nfree++;
  }
}

/* Best fit among the free blocks (the smallest that fits, the lowest on a
 * tie); else the free block at the arena's end grown, else new space. */
static bool ts_mp_alloc(ts_mp *m, uint64_t size, uint64_t *off, ts_diag *d) {
  uint32_t best = UINT32_MAX;
  for (uint32_t k = 0; k < m->nfree; k++)
    if (m->freel[k].size >= size && (best == UINT32_MAX || m->freel[k].size < m->freel[best].size))
      best = k;
  if (best != UINT32_MAX) {
    *off = m->freel[best].off;
    if (m->freel[best].size == size) {
      ts_mp_free_remove(m, best);
    } else {
      m->freel[best].off += size;
      m->freel[best].size -= size;
    }
    return true;
  }
  uint64_t at = m->top;
  if (m->nfree && m->freel[m->nfree - 1].off + m->freel[m->nfree - 1].size == m->top) {
    at = m->freel[m->nfree - 1].off;
    m->nfree--;
  }
  if (size > (uint64_t)INT64_MAX - at) {
    ts_diag_error(d, "memory plan: the arena would exceed %lld bytes", (long long)INT64_MAX);
    return false;
  }
  *off = at;
  m->top = at + size;
  return true;
}

/* ------------------------------------------------------------ assignment */

/* Output o of node n (position i) takes an input's buffer in place. */
static bool ts_mp_try_inplace(ts_mp *m, const ts_node *n, int64_t i, const ts_value *o, ts_cg_plan_inplace_fn ok,
                              void *arg) {
  for (uint32_t j = 0; j < n->ninputs; j++) {
    const ts_value *in = n->inputs[j];
    int32_t b = m->bufof[in->id];
    if (b < 0 || m->bufs[b].end != i || m->bufs[b].taken_at == i || m->tsize[in->id] != m->tsize[o->id])
      continue;
    /* another input reading the same memory (a view of it) would see the
     * output's elements as they are written */
    bool shared = false;
    for (uint32_t k = 0; k < n->ninputs && !shared; k++)
      shared = n->inputs[k] != in && ts_alias_may_alias(m->db, n->inputs[k], in);
    if (shared || !ok(arg, n, in, o))
      continue;
    m->bufof[o->id] = b;
    m->bufs[b].taken_at = i;
    if (m->end[o->id] > m->bufs[b].end)
      m->bufs[b].end = m->end[o->id];
    return true;
  }
  return false;
}

static bool ts_mp_assign(ts_mp *m, ts_cg_plan_inplace_fn inplace_ok, void *arg, ts_cg_memplan *out, ts_diag *d) {
  int64_t i = 0;
  for (const ts_node *n = ts_block_first(m->g->block); n != m->g->block->ret; n = n->next, i++) {
    for (uint32_t k = 0; k < m->nlive;) {
      ts_mp_buf *b = &m->bufs[m->live[k]];
      if (b->end < i) {
        ts_mp_release(m, b->off, b->size);
        m->live[k] = m->live[--m->nlive];
      } else {
        k++;
      }
    }
    for (uint32_t k = 0; k < n->noutputs; k++) {
      const ts_value *o = n->outputs[k];
      if (!m->cand[o->id])
        continue;
      uint64_t size = ts_mp_round(m->tsize[o->id]);
      if (inplace_ok && ts_mp_try_inplace(m, n, i, o, inplace_ok, arg)) {
        out->ninplace++;
      } else {
        uint64_t off;
        if (!ts_mp_alloc(m, size, &off, d))
          return false;
        uint32_t b = m->nbufs++;
        m->bufs[b] = (ts_mp_buf){off, size, m->end[o->id], -1};
        m->bufof[o->id] = (int32_t)b;
        m->live[m->nlive++] = b;
      }
      out->offset[o->id] = (int64_t)m->bufs[m->bufof[o->id]].off;
      out->nbytes[o->id] = size;
      out->nplanned++;
      out->total_bytes += size;
    }
  }
  out->arena_size = m->top;
  return true;
}

static void ts_mp_dispose(ts_mp *m) {
  ts_alias_db_free(m->db);
  free(m->pos);
  free(m->cand);
  free(m->tsize);
  free(m->end);
  free(m->bufof);
  free(m->mark);
  free(m->work);
  free(m->bufs);
  free(m->live);
  free(m->freel);
}

bool ts_cg_memplan_build(ts_graph *g, ts_cg_plan_want_fn want, ts_cg_plan_inplace_fn inplace_ok, void *arg,
                         ts_cg_memplan *out, ts_diag *d) {
  memset(out, 0, sizeof *out);
  ts_mp m = {0};
  m.g = g;
  m.nvalues = g->next_value_id;
  m.nnodes = g->next_node_id;
  size_t nv = m.nvalues ? m.nvalues : 1, nn = m.nnodes ? m.nnodes : 1;
  out->nvalues = m.nvalues;
  out->offset = malloc(nv * sizeof *out->offset);
  out->nbytes = calloc(nv, sizeof *out->nbytes);
  m.pos = malloc(nn * sizeof *m.pos);
  m.cand = calloc(nv, 1);
  m.tsize = calloc(nv, sizeof *m.tsize);
  m.end = calloc(nv, sizeof *m.end);
  m.bufof = malloc(nv * sizeof *m.bufof);
  m.mark = calloc(nv, sizeof *m.mark);
  m.work = malloc(nv * sizeof *m.work);
  if (!out->offset || !out->nbytes || !m.pos || !m.cand || !m.tsize || !m.end || !m.bufof || !m.mark || !m.work) {
    ts_diag_error(d, "memory plan: out of memory");
    goto fail;
  }
  for (size_t k = 0; k < nv; k++) {
    out->offset[k] = -1;
    m.bufof[k] = -1;
  }
  /* a node outside the graph's blocks (unlinked, still listed as a user)
   * never runs: its uses count as before everything */
  for (size_t k = 0; k < nn; k++)
    m.pos[k] = -1;
  if (!ts_mp_number_top(&m, d))
    goto fail;
  m.db = ts_alias_db_new(g, d);
  if (!m.db)
    goto fail;

  uint32_t ncand = 0;
  for (const ts_node *n = ts_block_first(g->block); n != g->block->ret; n = n->next)
    for (uint32_t k = 0; k < n->noutputs; k++) {
      const ts_value *v = n->outputs[k];
      if (!ts_mp_candidate(&m, n, v, want, arg))
        continue;
      m.cand[v->id] = 1;
      m.tsize[v->id] = ts_cg_type_nbytes(v->type);
      m.end[v->id] = ts_mp_lifetime(&m, v);
      ncand++;
    }
  m.bufs = malloc((size_t)(ncand ? ncand : 1) * sizeof *m.bufs);
  m.live = malloc((size_t)(ncand ? ncand : 1) * sizeof *m.live);
  m.freel = malloc(((size_t)ncand + 1) * sizeof *m.freel);
  if (!m.bufs || !m.live || !m.freel) {
    ts_diag_error(d, "memory plan: out of memory");
    goto fail;
  }
  if (!ts_mp_assign(&m, inplace_ok, arg, out, d))
    goto fail;
  ts_mp_dispose(&m);
  return true;
fail:
  ts_mp_dispose(&m);
  ts_cg_memplan_free(out);
  return false;
}

void ts_cg_memplan_free(ts_cg_memplan *p) {
  if (!p)
    return;
  free(p->offset);
  free(p->nbytes);
  memset(p, 0, sizeof *p);
}
