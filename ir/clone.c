/* ir/clone.c: copying nodes and blocks, within a graph or from another one,
 * the way PyTorch's Graph::createClone / Block::cloneFrom / insertGraph do:
 * a node's outputs are made (and named) first, then its attributes, inputs
 * and nested blocks. Debug names go through ts_value_set_name, so a copied
 * name that is already taken moves the value holding it to "name.N", as
 * setDebugName does. Numeric names ("%12", which PyTorch does not keep as
 * debug names) are dropped, except by ts_graph_copy, which reproduces the
 * graph exactly: same names, same value ids, so it prints the same. */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

/* source type -> destination type, for re-made composite types */
typedef struct ts_clone_tmap {
  const ts_type **keys;
  const ts_type **vals;
  size_t cap, used;
} ts_clone_tmap;

typedef struct ts_clone {
  ts_graph *dst;
  const ts_graph *src;
  ts_value **map; /* by source value id: its copy */
  uint32_t nmap;
  bool cross; /* src is another graph: types and strings are re-made in dst */
  bool exact; /* ts_graph_copy: keep ids and names as they are */
  bool failed;
  ts_clone_tmap types;
  const char *file_src, *file_dst; /* last source file name copied */
} ts_clone;

static bool ts_clone_init(ts_clone *c, ts_graph *dst, const ts_graph *src, bool exact) {
  memset(c, 0, sizeof *c);
  c->dst = dst;
  c->src = src;
  c->cross = dst != src;
  c->exact = exact;
  c->nmap = src->next_value_id;
  c->map = calloc(c->nmap ? c->nmap : 1, sizeof *c->map);
  return c->map != NULL;
}

static void ts_clone_fini(ts_clone *c) {
  free(c->map);
  free(c->types.keys);
  free(c->types.vals);
}

static size_t ts_clone_ptr_hash(const void *p) {
  uintptr_t x = (uintptr_t)p;
  x ^= x >> 17;
  x *= (uintptr_t)0x9E3779B97F4A7C15ull;
  return (size_t)(x ^ (x >> 29));
}

static const ts_type **ts_clone_tmap_slot(ts_clone_tmap *m, const ts_type *key) {
  size_t mask = m->cap - 1;
  for (size_t i = ts_clone_ptr_hash(key) & mask;; i = (i + 1) & mask)
    if (!m->keys[i] || m->keys[i] == key)
      return &m->keys[i];
}

static bool ts_clone_tmap_put(ts_clone_tmap *m, const ts_type *key, const ts_type *val) {
  if ((m->used + 1) * 2 > m->cap) {
    ts_clone_tmap old = *m;
    size_t cap = old.cap ? old.cap * 2 : 64;
    m->keys = calloc(cap, sizeof *m->keys);
    m->vals = calloc(cap, sizeof *m->vals);
    if (!m->keys || !m->vals) {
      free(m->keys);
      free(m->vals);
      *m = old;
      return false;
    }
    m->cap = cap;
    m->used = 0;
    for (size_t i = 0; i < old.cap; i++)
      if (old.keys[i])
        ts_clone_tmap_put(m, old.keys[i], old.vals[i]);
    free(old.keys);
    free(old.vals);
  }
  const ts_type **slot = ts_clone_tmap_slot(m, key);
  if (!*slot)
    m->used++;
  *slot = key;
  m->vals[slot - m->keys] = val;
  return true;
}

/* A type usable in dst: the same pointer within one graph or for static
 * leaves, else a copy made once per source type. */
static const ts_type *ts_clone_type(ts_clone *c, const ts_type *t) {
  if (!t || !c->cross)
    return t;
  if (t == ts_type_leaf(t->kind))
    return t; /* a static singleton */
  if (c->types.cap) {
    const ts_type **slot = ts_clone_tmap_slot(&c->types, t);
    if (*slot)
      return c->types.vals[slot - c->types.keys];
  }
  const ts_type *r = ts_type_clone(&c->dst->arena, t);
  if (!r || !ts_clone_tmap_put(&c->types, t, r)) {
    c->failed = true;
    return r;
  }
  return r;
}

static void ts_clone_set_name(ts_clone *c, ts_value *v, const ts_value *from) {
  if (c->exact)
    v->id = from->id;
  if (!from->name)
    return;
  bool ok;
  if (c->exact)
    ok = ts_value_set_name_exact(v, from->name, strlen(from->name));
  else
    ok = ts_name_is_number(from->name, strlen(from->name)) || ts_value_set_name(v, from->name);
  if (!ok)
    c->failed = true;
}

/* The copy of a value the copied nodes use. Values of the same graph from
 * outside the copied block stand for themselves; a value of another graph
 * that was not copied means `from` used something outside it. */
static ts_value *ts_clone_lookup(ts_clone *c, ts_value *v) {
  if (v->node->graph == c->src && v->id < c->nmap && c->map[v->id])
    return c->map[v->id];
  if (!c->cross)
    return v;
  c->failed = true;
  return NULL;
}

static void ts_clone_map(ts_clone *c, const ts_value *from, ts_value *to) {
  if (from->id < c->nmap)
    c->map[from->id] = to;
}

static ts_graph *ts_clone_subgraph(ts_graph *parent, const ts_graph *g);
static bool ts_clone_block_into(ts_clone *c, const ts_block *from, ts_block *to);

enum { TS_CLONE_COPY_BYTES = 4096 };

/* Bytes from the first element to one past the last; 0 for an empty
 * tensor, negative strides, or more than TS_CLONE_COPY_BYTES elements. */
static size_t ts_clone_tensor_span(const ts_tconst *t) {
  size_t es = ts_dtype_size((ts_dtype)t->dtype);
  if (!es || t->rank < 0)
    return 0;
  uint64_t last = 0, contiguous = 1;
  for (int32_t i = t->rank; i-- > 0;) {
    int64_t size = t->sizes[i], stride = t->strides ? t->strides[i] : (int64_t)contiguous;
    if (size <= 0 || stride < 0 || size > TS_CLONE_COPY_BYTES || stride > TS_CLONE_COPY_BYTES)
      return 0;
    last += (uint64_t)(size - 1) * (uint64_t)stride;
    contiguous *= (uint64_t)size;
    if (last >= TS_CLONE_COPY_BYTES || contiguous > TS_CLONE_COPY_BYTES)
      return 0;
  }
  return (size_t)(last + 1) * es;
}

/* A tensor constant for another graph. Who owns the bytes is not recorded:
 * the parser puts the "{2}" scalars it reads into the graph's arena, the
 * frontend points at storages it keeps alive. Small tensors (up to 4 KiB)
 * are copied into dst so they outlive the source graph; larger ones, which
 * are weights, keep pointing at their storage. */
static const ts_tconst *ts_clone_tconst(ts_clone *c, const ts_tconst *t, ts_tconst *tmp) {
  size_t bytes = c->cross && t->data ? ts_clone_tensor_span(t) : 0;
  if (!bytes || bytes > TS_CLONE_COPY_BYTES)
    return t;
  void *data = ts_arena_alloc(&c->dst->arena, bytes);
  if (!data) {
    c->failed = true;
    return t;
  }
  memcpy(data, t->data, bytes);
  *tmp = *t;
  tmp->data = data;
  return tmp;
}

static bool ts_clone_attr(ts_clone *c, ts_node *n, const ts_attr *a) {
  switch (a->kind) {
  case TS_ATTR_INT: return ts_node_set_i(n, a->name, a->u.i);
  case TS_ATTR_FLOAT: return ts_node_set_f(n, a->name, a->u.f);
  case TS_ATTR_STR: return ts_node_set_s(n, a->name, a->u.s, a->len);
  case TS_ATTR_TENSOR: {
    ts_tconst tmp;
    return ts_node_set_t(n, a->name, ts_clone_tconst(c, a->u.t, &tmp));
  }
  case TS_ATTR_TYPE: return ts_node_set_ty(n, a->name, ts_clone_type(c, a->u.ty));
  case TS_ATTR_INTS: return ts_node_set_is(n, a->name, a->u.is, a->len);
  case TS_ATTR_FLOATS: return ts_node_set_fs(n, a->name, a->u.fs, a->len);
  case TS_ATTR_STRS: return ts_node_set_ss(n, a->name, a->u.ss, a->len);
  case TS_ATTR_TENSORS: {
    if (!c->cross || !a->len)
      return ts_node_set_ts(n, a->name, a->u.ts, a->len);
    ts_tconst *tmp = malloc(a->len * sizeof *tmp);
    const ts_tconst **ts = malloc(a->len * sizeof *ts);
    bool ok = tmp && ts;
    for (size_t i = 0; ok && i < a->len; i++)
      ts[i] = ts_clone_tconst(c, a->u.ts[i], &tmp[i]);
    ok = ok && ts_node_set_ts(n, a->name, ts, a->len);
    free(tmp);
    free(ts);
    return ok;
  }
  case TS_ATTR_GRAPH: {
    /* GraphAttr::clone copies the subgraph; the copy belongs to dst */
    ts_graph *sub = a->u.g ? ts_clone_subgraph(c->dst, a->u.g) : NULL;
    return (sub || !a->u.g) && ts_node_set_g(n, a->name, sub);
  }
  }
  return false;
}

/* Graph::createClone: outputs with their types and names, attributes,
 * source location, inputs, then the nested blocks. Not yet linked. */
static ts_node *ts_clone_node(ts_clone *c, const ts_node *n) {
  ts_graph *g = c->dst;
  ts_node *r = n->kind == TS_K_OTHER ? ts_node_new_named(g, n->kind_name, strlen(n->kind_name), 0)
                                     : ts_node_new(g, n->kind, 0);
  if (!r) {
    c->failed = true;
    return NULL;
  }
  if (c->exact)
    r->id = n->id;
  for (uint32_t i = 0; i < n->noutputs && !c->failed; i++) {
    ts_value *o = ts_node_add_output(r, ts_clone_type(c, n->outputs[i]->type));
    if (!o) {
      c->failed = true;
      break;
    }
    ts_clone_set_name(c, o, n->outputs[i]);
    ts_clone_map(c, n->outputs[i], o);
  }
  for (const ts_attr *a = n->attrs; a && !c->failed; a = a->next)
    if (!ts_clone_attr(c, r, a))
      c->failed = true;
  r->loc = n->loc;
  if (n->loc.file && c->cross) {
    if (n->loc.file != c->file_src) {
      c->file_src = n->loc.file;
      c->file_dst = ts_arena_strdup(&g->arena, n->loc.file);
    }
    r->loc.file = c->file_dst;
    if (!r->loc.file)
      c->failed = true;
  }
  for (uint32_t i = 0; i < n->ninputs && !c->failed; i++) {
    ts_value *in = ts_clone_lookup(c, n->inputs[i]);
    if (!in || !ts_node_add_input(r, in))
      c->failed = true;
  }
  for (uint32_t i = 0; i < n->nblocks && !c->failed; i++) {
    ts_block *b = ts_node_add_block(r);
    if (!b || !ts_clone_block_into(c, n->blocks[i], b))
      c->failed = true;
  }
  return c->failed ? NULL : r;
}

/* Block::cloneFrom into the empty block `to`. */
static bool ts_clone_block_into(ts_clone *c, const ts_block *from, ts_block *to) {
  if (c->exact) {
    to->param->id = from->param->id;
    to->ret->id = from->ret->id;
  }
  for (uint32_t i = 0; i < ts_block_ninputs(from) && !c->failed; i++) {
    const ts_value *in = ts_block_input(from, i);
    ts_value *v = ts_block_add_input(to, ts_clone_type(c, in->type));
    if (!v) {
      c->failed = true;
      break;
    }
    ts_clone_set_name(c, v, in);
    ts_clone_map(c, in, v);
  }
  for (const ts_node *n = ts_block_first(from); n != from->ret && !c->failed; n = n->next) {
    ts_node *r = ts_clone_node(c, n);
    if (r)
      ts_block_append_node(to, r);
  }
  for (uint32_t i = 0; i < ts_block_noutputs(from) && !c->failed; i++) {
    ts_value *out = ts_clone_lookup(c, ts_block_output(from, i));
    if (!out || !ts_block_add_output(to, out))
      c->failed = true;
  }
  return !c->failed;
}

/* Copies everything of `g` into the empty graph `dst`, ids included. */
static bool ts_clone_graph_into(ts_graph *dst, const ts_graph *g) {
  ts_clone c;
  if (!ts_clone_init(&c, dst, g, true))
    return false;
  bool ok = ts_clone_block_into(&c, g->block, dst->block);
  if (dst->next_value_id < g->next_value_id)
    dst->next_value_id = g->next_value_id;
  if (dst->next_node_id < g->next_node_id)
    dst->next_node_id = g->next_node_id;
  ts_clone_fini(&c);
  return ok && ts_graph_ok(dst);
}

static ts_graph *ts_clone_subgraph(ts_graph *parent, const ts_graph *g) {
  ts_graph *sub = ts_graph_new_subgraph(parent);
  if (!sub)
    return NULL;
  /* a failed copy stays owned by parent and goes with it */
  return ts_clone_graph_into(sub, g) ? sub : NULL;
}

bool ts_block_clone_before(const ts_block *from, ts_node *pos, ts_value *const *inputs, ts_value **outputs) {
  ts_graph *dst = pos->graph;
  ts_clone c;
  if (!ts_clone_init(&c, dst, from->graph, false)) {
    dst->oom = true;
    return false;
  }
  for (uint32_t i = 0; i < ts_block_ninputs(from); i++)
    ts_clone_map(&c, ts_block_input(from, i), inputs[i]);
  /* Take the node list first: when `pos` lies inside `from`, the copies
   * land in the list being walked. */
  size_t count = 0;
  for (const ts_node *n = ts_block_first(from); n != from->ret; n = n->next)
    count++;
  const ts_node **nodes = malloc((count ? count : 1) * sizeof *nodes);
  if (!nodes)
    c.failed = true;
  else {
    size_t k = 0;
    for (const ts_node *n = ts_block_first(from); n != from->ret; n = n->next)
      nodes[k++] = n;
  }
  for (size_t k = 0; k < count && !c.failed; k++) {
    ts_node *r = ts_clone_node(&c, nodes[k]);
    if (r)
      ts_node_insert_before(r, pos);
  }
  for (uint32_t i = 0; i < ts_block_noutputs(from) && !c.failed; i++)
    outputs[i] = ts_clone_lookup(&c, ts_block_output(from, i));
  free(nodes);
  bool ok = !c.failed;
  ts_clone_fini(&c);
  if (!ok)
    dst->oom = true;
  return ok && ts_graph_ok(dst);
}

ts_graph *ts_graph_copy(const ts_graph *g) {
  ts_graph *dst = ts_graph_new(g->arena.limit);
  if (!dst)
    return NULL;
  if (!ts_clone_graph_into(dst, g)) {
    ts_graph_free(dst);
    return NULL;
  }
  return dst;
}
