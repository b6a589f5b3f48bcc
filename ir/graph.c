/* ir/graph.c: building and editing graphs: nodes, values, uses, blocks,
 * attributes and debug names. */
#include "ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a string-keyed open-addressing map in the graph's arena ---- */

typedef struct ts_strmap {
  const char **keys; /* NULL: empty */
  uintptr_t *vals;   /* 0 with a key: deleted */
  uint32_t cap, used;
} ts_strmap;

struct ts_name_table {
  ts_strmap names;    /* name -> ts_value* */
  ts_strmap suffixes; /* base -> next ".N" suffix to try (PyTorch's name_base_suffix_) */
};

static uint64_t ts_hash(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

static bool ts_key_eq(const char *k, const char *s, size_t n) { return strlen(k) == n && memcmp(k, s, n) == 0; }

static uintptr_t *ts_strmap_find(const ts_strmap *m, const char *s, size_t n) {
  if (!m->cap)
    return NULL;
  uint32_t mask = m->cap - 1;
  for (uint32_t i = (uint32_t)ts_hash(s, n) & mask;; i = (i + 1) & mask) {
    if (!m->keys[i])
      return NULL;
    if (ts_key_eq(m->keys[i], s, n))
      return &m->vals[i];
  }
}

static bool ts_strmap_put(ts_arena *a, ts_strmap *m, const char *key, uintptr_t val);

static bool ts_strmap_rehash(ts_arena *a, ts_strmap *m) {
  ts_strmap old = *m;
  uint32_t cap = old.cap ? old.cap * 2 : 64;
  m->keys = ts_arena_alloc(a, cap * sizeof *m->keys);
  m->vals = ts_arena_alloc(a, cap * sizeof *m->vals);
  if (!m->keys || !m->vals) {
    *m = old;
    return false;
  }
  m->cap = cap;
  m->used = 0;
  for (uint32_t i = 0; i < old.cap; i++)
    if (old.keys[i] && old.vals[i])
      ts_strmap_put(a, m, old.keys[i], old.vals[i]);
  return true;
}

/* `key` must already live in the arena. */
static bool ts_strmap_put(ts_arena *a, ts_strmap *m, const char *key, uintptr_t val) {
  size_t n = strlen(key);
  uintptr_t *slot = ts_strmap_find(m, key, n);
  if (slot) {
    *slot = val;
    return true;
  }
  if ((m->used + 1) * 4 > m->cap * 3 && !ts_strmap_rehash(a, m))
    return false;
  uint32_t mask = m->cap - 1;
  uint32_t i = (uint32_t)ts_hash(key, n) & mask;
  while (m->keys[i])
    i = (i + 1) & mask;
  m->keys[i] = key;
  m->vals[i] = val;
  m->used++;
  return true;
}

/* ---- graphs ---- */

static ts_block *ts_block_new(ts_graph *g, ts_node *owner);

ts_graph *ts_graph_new(size_t arena_limit) {
  ts_graph *g = calloc(1, sizeof *g);
  if (!g)
    return NULL;
  ts_arena_init(&g->arena, arena_limit);
  g->names = ts_arena_alloc(&g->arena, sizeof *g->names);
  g->block = g->names ? ts_block_new(g, NULL) : NULL;
  if (!g->block) {
    ts_graph_free(g);
    return NULL;
  }
  return g;
}

ts_graph *ts_graph_new_subgraph(ts_graph *parent) {
  ts_graph *g = ts_graph_new(parent->arena.limit);
  if (!g) {
    parent->oom = true;
    return NULL;
  }
  g->parent = parent;
  g->next_sibling = parent->children;
  parent->children = g;
  return g;
}

void ts_graph_free(ts_graph *g) {
  if (!g)
    return;
  ts_graph *c = g->children;
  while (c) {
    ts_graph *next = c->next_sibling;
    c->parent = NULL;
    ts_graph_free(c);
    c = next;
  }
  ts_arena_release(&g->arena);
  free(g);
}

bool ts_graph_ok(const ts_graph *g) { return g && !g->oom && !g->arena.failed; }

ts_arena *ts_graph_arena(ts_graph *g) { return &g->arena; }

/* ---- nodes ---- */

static ts_value *ts_value_new(ts_node *n, uint32_t offset, const ts_type *type) {
  ts_graph *g = n->graph;
  ts_value *v = ts_arena_alloc(&g->arena, sizeof *v);
  if (!v)
    return NULL;
  v->node = n;
  v->offset = offset;
  v->id = g->next_value_id++;
  v->type = type ? type : ts_type_leaf(TS_TY_TENSOR);
  return v;
}

static ts_node *ts_node_alloc(ts_graph *g, ts_kind kind, const char *name, uint32_t noutputs) {
  ts_node *n = ts_arena_alloc(&g->arena, sizeof *n);
  if (!n)
    return NULL;
  n->kind = kind;
  n->kind_name = name;
  n->op = kind < TS_K_COUNT ? ts_op_get(kind) : NULL;
  n->graph = g;
  n->id = g->next_node_id++;
  for (uint32_t i = 0; i < noutputs; i++)
    if (!ts_node_add_output(n, NULL))
      return NULL;
  return n;
}

ts_node *ts_node_new(ts_graph *g, ts_kind kind, uint32_t noutputs) {
  if (kind >= TS_K_COUNT)
    return NULL;
  return ts_node_alloc(g, kind, ts_kind_name(kind), noutputs);
}

ts_node *ts_node_new_named(ts_graph *g, const char *qualname, size_t len, uint32_t noutputs) {
  ts_kind k = ts_kind_lookup(qualname, len);
  if (k != TS_K_OTHER)
    return ts_node_new(g, k, noutputs);
  const char *name = ts_arena_strndup(&g->arena, qualname, len);
  return name ? ts_node_alloc(g, TS_K_OTHER, name, noutputs) : NULL;
}

ts_graph *ts_node_graph(const ts_node *n) { return n->graph; }

static uint32_t ts_g_count_block(const ts_block *b, int kind, bool any) {
  uint32_t n = 0;
  for (ts_node *x = ts_block_first(b); x != b->ret; x = x->next) {
    if (any || x->kind == (ts_kind)kind)
      n++;
    for (uint32_t i = 0; i < x->nblocks; i++)
      n += ts_g_count_block(x->blocks[i], kind, any);
    for (const ts_attr *a = x->attrs; a; a = a->next)
      if (a->kind == TS_ATTR_GRAPH && a->u.g)
        n += ts_g_count_block(a->u.g->block, kind, any);
  }
  return n;
}

uint32_t ts_graph_count_nodes(const ts_graph *g) { return ts_g_count_block(g->block, 0, true); }
uint32_t ts_graph_count_kind(const ts_graph *g, ts_kind k) { return ts_g_count_block(g->block, (int)k, false); }

bool ts_node_is(const ts_node *n, ts_kind k) { return n->kind == k; }

bool ts_node_same_kind(const ts_node *a, const ts_node *b) {
  if (a->kind != b->kind)
    return false;
  return a->kind != TS_K_OTHER || strcmp(a->kind_name, b->kind_name) == 0;
}

static ts_block *ts_block_new(ts_graph *g, ts_node *owner) {
  ts_block *b = ts_arena_alloc(&g->arena, sizeof *b);
  if (!b)
    return NULL;
  b->graph = g;
  b->owner_node = owner;
  b->param = ts_node_new(g, TS_K_prim_Param, 0);
  b->ret = ts_node_new(g, TS_K_prim_Return, 0);
  if (!b->param || !b->ret)
    return NULL;
  b->param->owner = b;
  b->ret->owner = b;
  b->ret->next = b->ret->prev = b->ret;
  return b;
}

void ts_node_insert_before(ts_node *n, ts_node *pos) {
  n->owner = pos->owner;
  n->prev = pos->prev;
  n->next = pos;
  pos->prev->next = n;
  pos->prev = n;
}

void ts_node_insert_after(ts_node *n, ts_node *pos) { ts_node_insert_before(n, pos->next); }

void ts_block_append_node(ts_block *b, ts_node *n) { ts_node_insert_before(n, b->ret); }

static void ts_node_unlink(ts_node *n) {
  if (!n->prev)
    return;
  n->prev->next = n->next;
  n->next->prev = n->prev;
  n->prev = n->next = NULL;
  n->owner = NULL;
}

void ts_node_move_before(ts_node *n, ts_node *pos) {
  ts_node_unlink(n);
  ts_node_insert_before(n, pos);
}

/* ---- uses ---- */

static bool ts_value_add_use(ts_value *v, ts_node *user, uint32_t index) {
  if (v->nuses == v->cap_uses) {
    uint32_t cap = v->cap_uses ? v->cap_uses * 2 : 4;
    ts_use *u = ts_arena_grow(&v->node->graph->arena, v->uses, v->nuses, cap, sizeof *u);
    if (!u)
      return false;
    v->uses = u;
    v->cap_uses = cap;
  }
  v->uses[v->nuses++] = (ts_use){user, index};
  return true;
}

static ts_use *ts_value_find_use(ts_value *v, const ts_node *user, uint32_t index) {
  for (uint32_t i = 0; i < v->nuses; i++)
    if (v->uses[i].user == user && v->uses[i].index == index)
      return &v->uses[i];
  return NULL;
}

/* Keeps the order of the remaining uses, as PyTorch does. */
static void ts_value_drop_use(ts_value *v, const ts_node *user, uint32_t index) {
  ts_use *u = ts_value_find_use(v, user, index);
  if (!u)
    return;
  size_t rest = (size_t)(v->uses + v->nuses - (u + 1));
  memmove(u, u + 1, rest * sizeof *u);
  v->nuses--;
}

bool ts_node_add_input(ts_node *n, ts_value *v) {
  if (!v)
    return false;
  if (n->ninputs == n->cap_inputs) {
    uint32_t cap = n->cap_inputs ? n->cap_inputs * 2 : 4;
    ts_value **in = ts_arena_grow(&n->graph->arena, n->inputs, n->ninputs, cap, sizeof *in);
    if (!in)
      return false;
    n->inputs = in;
    n->cap_inputs = cap;
  }
  if (!ts_value_add_use(v, n, n->ninputs))
    return false;
  n->inputs[n->ninputs++] = v;
  return true;
}

void ts_node_replace_input(ts_node *n, uint32_t i, ts_value *v) {
  if (i >= n->ninputs || !v || n->inputs[i] == v)
    return;
  ts_value_drop_use(n->inputs[i], n, i);
  n->inputs[i] = v;
  if (!ts_value_add_use(v, n, i))
    n->graph->oom = true;
}

void ts_node_remove_input(ts_node *n, uint32_t i) {
  if (i >= n->ninputs)
    return;
  ts_value_drop_use(n->inputs[i], n, i);
  for (uint32_t j = i + 1; j < n->ninputs; j++) {
    ts_use *u = ts_value_find_use(n->inputs[j], n, j);
    if (u)
      u->index = j - 1;
    n->inputs[j - 1] = n->inputs[j];
  }
  n->ninputs--;
}

void ts_node_remove_all_inputs(ts_node *n) {
  for (uint32_t i = 0; i < n->ninputs; i++)
    ts_value_drop_use(n->inputs[i], n, i);
  n->ninputs = 0;
}

ts_value *ts_node_add_output(ts_node *n, const ts_type *type) {
  if (n->noutputs == n->cap_outputs) {
    uint32_t cap = n->cap_outputs ? n->cap_outputs * 2 : 2;
    ts_value **out = ts_arena_grow(&n->graph->arena, n->outputs, n->noutputs, cap, sizeof *out);
    if (!out)
      return NULL;
    n->outputs = out;
    n->cap_outputs = cap;
  }
  ts_value *v = ts_value_new(n, n->noutputs, type);
  if (!v)
    return NULL;
  n->outputs[n->noutputs++] = v;
  return v;
}

void ts_node_remove_output(ts_node *n, uint32_t i) {
  if (i >= n->noutputs)
    return;
  ts_value_set_name(n->outputs[i], NULL);
  for (uint32_t j = i + 1; j < n->noutputs; j++) {
    n->outputs[j - 1] = n->outputs[j];
    n->outputs[j - 1]->offset = j - 1;
  }
  n->noutputs--;
}

ts_block *ts_node_add_block(ts_node *n) {
  if (n->nblocks == n->cap_blocks) {
    uint32_t cap = n->cap_blocks ? n->cap_blocks * 2 : 2;
    ts_block **bs = ts_arena_grow(&n->graph->arena, n->blocks, n->nblocks, cap, sizeof *bs);
    if (!bs)
      return NULL;
    n->blocks = bs;
    n->cap_blocks = cap;
  }
  ts_block *b = ts_block_new(n->graph, n);
  if (!b)
    return NULL;
  n->blocks[n->nblocks++] = b;
  return b;
}

/* Destroys nested blocks' nodes too, so the values they used from outside
 * forget those uses. */
void ts_node_destroy(ts_node *n) {
  for (uint32_t bi = 0; bi < n->nblocks; bi++) {
    ts_block *b = n->blocks[bi];
    ts_node_remove_all_inputs(b->ret);
    while (b->ret->prev != b->ret)
      ts_node_destroy(b->ret->prev);
  }
  ts_node_remove_all_inputs(n);
  for (uint32_t i = 0; i < n->noutputs; i++)
    ts_value_set_name(n->outputs[i], NULL);
  ts_node_unlink(n);
}

ts_value *ts_block_add_input(ts_block *b, const ts_type *type) { return ts_node_add_output(b->param, type); }

bool ts_block_add_output(ts_block *b, ts_value *v) { return ts_node_add_input(b->ret, v); }

void ts_value_replace_all_uses(ts_value *from, ts_value *to) {
  if (from == to)
    return;
  for (uint32_t i = 0; i < from->nuses; i++) {
    ts_use u = from->uses[i];
    u.user->inputs[u.index] = to;
    if (!ts_value_add_use(to, u.user, u.index))
      to->node->graph->oom = true;
  }
  from->nuses = 0;
}

void ts_value_set_type(ts_value *v, const ts_type *t) { v->type = t; }

/* ---- attributes ---- */

static ts_attr *ts_node_attr_slot(ts_node *n, const char *name, ts_attr_kind kind) {
  ts_attr **p = &n->attrs;
  for (; *p; p = &(*p)->next)
    if (strcmp((*p)->name, name) == 0) {
      (*p)->kind = kind;
      return *p;
    }
  ts_attr *a = ts_arena_alloc(&n->graph->arena, sizeof *a);
  if (!a || !(a->name = ts_arena_strdup(&n->graph->arena, name)))
    return NULL;
  a->kind = kind;
  *p = a;
  return a;
}

bool ts_node_set_i(ts_node *n, const char *name, int64_t v) {
  ts_attr *a = ts_node_attr_slot(n, name, TS_ATTR_INT);
  return a && (a->u.i = v, true);
}

bool ts_node_set_f(ts_node *n, const char *name, double v) {
  ts_attr *a = ts_node_attr_slot(n, name, TS_ATTR_FLOAT);
  return a && (a->u.f = v, true);
}

bool ts_node_set_s(ts_node *n, const char *name, const char *s, size_t len) {
  ts_attr *a = ts_node_attr_slot(n, name, TS_ATTR_STR);
  return a && (a->u.s = ts_arena_strndup(&n->graph->arena, s, len)) && (a->len = len, true);
}

bool ts_node_set_t(ts_node *n, const char *name, const ts_tconst *t) {
  ts_attr *a = ts_node_attr_slot(n, name, TS_ATTR_TENSOR);
  return a && (a->u.t = ts_tconst_clone(n->graph, t)) != NULL;
}

bool ts_node_set_g(ts_node *n, const char *name, ts_graph *sub) {
  ts_attr *a = ts_node_attr_slot(n, name, TS_ATTR_GRAPH);
  return a && (a->u.g = sub, true);
}

bool ts_node_set_ty(ts_node *n, const char *name, const ts_type *t) {
  ts_attr *a = ts_node_attr_slot(n, name, TS_ATTR_TYPE);
  return a && (a->u.ty = ts_type_clone(&n->graph->arena, t)) != NULL;
}

bool ts_node_set_is(ts_node *n, const char *name, const int64_t *v, size_t len) {
  ts_attr *a = ts_node_attr_slot(n, name, TS_ATTR_INTS);
  int64_t *c = a ? ts_arena_grow(&n->graph->arena, NULL, 0, len, sizeof *c) : NULL;
  if (!c && len)
    return false;
  if (!a)
    return false;
  if (len)
    memcpy(c, v, len * sizeof *c);
  a->u.is = c;
  a->len = len;
  return true;
}

bool ts_node_set_fs(ts_node *n, const char *name, const double *v, size_t len) {
  ts_attr *a = ts_node_attr_slot(n, name, TS_ATTR_FLOATS);
  double *c = a ? ts_arena_grow(&n->graph->arena, NULL, 0, len, sizeof *c) : NULL;
  if (!a || (!c && len))
    return false;
  if (len)
    memcpy(c, v, len * sizeof *c);
  a->u.fs = c;
  a->len = len;
  return true;
}

bool ts_node_set_ss(ts_node *n, const char *name, const char *const *v, size_t len) {
  ts_attr *a = ts_node_attr_slot(n, name, TS_ATTR_STRS);
  const char **c = a ? ts_arena_grow(&n->graph->arena, NULL, 0, len, sizeof *c) : NULL;
  if (!a || (!c && len))
    return false;
  for (size_t i = 0; i < len; i++)
    if (!(c[i] = ts_arena_strdup(&n->graph->arena, v[i])))
      return false;
  a->u.ss = c;
  a->len = len;
  return true;
}

bool ts_node_set_ts(ts_node *n, const char *name, const ts_tconst *const *v, size_t len) {
  ts_attr *a = ts_node_attr_slot(n, name, TS_ATTR_TENSORS);
  const ts_tconst **c = a ? ts_arena_grow(&n->graph->arena, NULL, 0, len, sizeof *c) : NULL;
  if (!a || (!c && len))
    return false;
  for (size_t i = 0; i < len; i++)
    if (!(c[i] = ts_tconst_clone(n->graph, v[i])))
      return false;
  a->u.ts = c;
  a->len = len;
  return true;
}

const ts_attr *ts_node_attr(const ts_node *n, const char *name) {
  for (const ts_attr *a = n->attrs; a; a = a->next)
    if (strcmp(a->name, name) == 0)
      return a;
  return NULL;
}

uint32_t ts_node_attr_count(const ts_node *n) {
  uint32_t c = 0;
  for (const ts_attr *a = n->attrs; a; a = a->next)
    c++;
  return c;
}

int64_t ts_tconst_numel(const ts_tconst *t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->rank; i++) {
    if (t->sizes[i] < 0 || (t->sizes[i] && n > INT64_MAX / t->sizes[i]))
      return -1;
    n *= t->sizes[i];
  }
  return n;
}

const ts_tconst *ts_tconst_clone(ts_graph *g, const ts_tconst *t) {
  ts_tconst *c = ts_arena_alloc(&g->arena, sizeof *c);
  if (!c || t->rank < 0)
    return NULL;
  *c = *t;
  if (t->rank > 0) {
    int64_t *sz = ts_arena_grow(&g->arena, NULL, 0, (size_t)t->rank, sizeof *sz);
    int64_t *st = t->strides ? ts_arena_grow(&g->arena, NULL, 0, (size_t)t->rank, sizeof *st) : NULL;
    if (!sz || (t->strides && !st))
      return NULL;
    memcpy(sz, t->sizes, (size_t)t->rank * sizeof *sz);
    if (st)
      memcpy(st, t->strides, (size_t)t->rank * sizeof *st);
    c->sizes = sz;
    c->strides = st;
  }
  if (t->repr && !(c->repr = ts_arena_strdup(&g->arena, t->repr)))
    return NULL;
  return c;
}

/* ---- debug names ---- */

bool ts_name_is_number(const char *s, size_t n) {
  if (!n)
    return false;
  for (size_t i = 0; i < n; i++)
    if (s[i] < '0' || s[i] > '9')
      return false;
  return true;
}

ts_value *ts_graph_find_value(const ts_graph *g, const char *name, size_t len) {
  uintptr_t *slot = ts_strmap_find(&g->names->names, name, len);
  return slot ? (ts_value *)*slot : NULL;
}

static void ts_value_forget_name(ts_value *v) {
  if (!v->name)
    return;
  uintptr_t *slot = ts_strmap_find(&v->node->graph->names->names, v->name, strlen(v->name));
  if (slot && *slot == (uintptr_t)v)
    *slot = 0;
  v->name = NULL;
}

bool ts_value_set_name_exact(ts_value *v, const char *name, size_t len) {
  ts_graph *g = v->node->graph;
  ts_value *holder = ts_graph_find_value(g, name, len);
  if (holder && holder != v)
    return false;
  ts_value_forget_name(v);
  char *s = ts_arena_strndup(&g->arena, name, len);
  if (!s || !ts_strmap_put(&g->arena, &g->names->names, s, (uintptr_t)v))
    return false;
  v->name = s;
  /* Keep printed ids of unnamed values clear of numeric names. */
  if (ts_name_is_number(name, len) && len < 10) {
    uint32_t num = (uint32_t)strtoul(s, NULL, 10);
    if (num >= g->next_value_id)
      g->next_value_id = num + 1;
  }
  return true;
}

/* PyTorch's Value::setDebugName: if another value holds `name`, that value
 * is renamed to "base.N" with the first free suffix, counting on from the
 * suffix last handed out for that base. */
bool ts_value_set_name(ts_value *v, const char *name) {
  size_t len = name ? strlen(name) : 0;
  if (!len) {
    ts_value_forget_name(v);
    return true;
  }
  if (ts_name_is_number(name, len))
    return false;
  ts_graph *g = v->node->graph;
  ts_value *holder = ts_graph_find_value(g, name, len);
  if (holder == v)
    return true;
  if (holder) {
    size_t base_len = len;
    unsigned long long suffix = 1;
    const char *dot = strrchr(name, '.');
    if (dot && dot[1] && ts_name_is_number(dot + 1, strlen(dot + 1)) && strlen(dot + 1) < 18) {
      suffix = strtoull(dot + 1, NULL, 10);
      base_len = (size_t)(dot - name);
    }
    char *base = ts_arena_strndup(&g->arena, name, base_len);
    if (!base)
      return false;
    uintptr_t *last = ts_strmap_find(&g->names->suffixes, base, base_len);
    /* PyTorch stores one past the last suffix used and starts one past that:
     * this is why its graphs name values x.1, x.3, x.5. */
    if (last && *last + 1 > suffix)
      suffix = *last + 1;
    ts_buf b = {0};
    for (;;) {
      b.len = 0;
      ts_buf_printf(&b, "%s.%llu", base, suffix++);
      if (b.failed || !ts_graph_find_value(g, b.data, b.len))
        break;
    }
    bool ok = !b.failed && ts_strmap_put(&g->arena, &g->names->suffixes, base, (uintptr_t)suffix) &&
              ts_value_set_name_exact(holder, b.data, b.len);
    ts_buf_free(&b);
    if (!ok)
      return false;
  }
  return ts_value_set_name_exact(v, name, len);
}
