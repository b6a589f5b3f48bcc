/* ir/print.c: graphs as text, the way PyTorch's Graph::print writes them;
 * only value names that PyTorch would print unreadably (white space, commas,
 * parentheses, colons: a ModuleDict key can hold them) are quoted. */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

typedef struct ts_groups {
  const ts_node **items;
  size_t n, cap;
  bool failed;
} ts_groups;

static void ts_groups_push(ts_groups *g, const ts_node *n) {
  if (g->n == g->cap) {
    size_t cap = g->cap ? g->cap * 2 : 8;
    const ts_node **p = realloc(g->items, cap * sizeof *p);
    if (!p) {
      g->failed = true;
      return;
    }
    g->items = p;
    g->cap = cap;
  }
  g->items[g->n++] = n;
}

static void ts_indent(ts_buf *b, int level) {
  for (int i = 0; i < level; i++)
    ts_buf_puts(b, "  ");
}

void ts_name_print(ts_buf *b, const char *name, size_t n) {
  ts_buf_putc(b, '%');
  for (size_t i = 0; i < n; i++)
    if (!ts_name_byte_bare((unsigned char)name[i])) {
      ts_buf_put_quoted(b, name, n);
      return;
    }
  ts_buf_putn(b, name, n);
}

void ts_value_print_name(ts_buf *b, const ts_value *v) {
  if (v->name)
    ts_name_print(b, v->name, strlen(v->name));
  else
    ts_buf_printf(b, "%%%u", v->id);
}

static void ts_values_print(ts_buf *b, ts_value *const *vs, uint32_t n, const char *sep, bool types) {
  for (uint32_t i = 0; i < n; i++) {
    if (i)
      ts_buf_puts(b, sep);
    ts_value_print_name(b, vs[i]);
    if (types) {
      ts_buf_puts(b, " : ");
      ts_type_print(b, vs[i]->type);
    }
  }
}

/* A one-element tensor prints as its value in braces, as PyTorch boxes
 * scalars ("{2}", "{0.5}"); anything else as "<Tensor>". */
static void ts_tconst_print(ts_buf *b, const ts_tconst *t) {
  if (t->repr && !t->data) {
    ts_buf_puts(b, t->repr);
    return;
  }
  if (!t->data || ts_tconst_numel(t) != 1) {
    ts_buf_puts(b, "<Tensor>");
    return;
  }
  const void *p = t->data;
  double d = 0;
  long long i = 0;
  bool is_float = true;
  switch (t->dtype) {
  case TS_DT_FLOAT32: d = *(const float *)p; break;
  case TS_DT_FLOAT64: d = *(const double *)p; break;
  case TS_DT_INT64: i = *(const int64_t *)p, is_float = false; break;
  case TS_DT_INT32: i = *(const int32_t *)p, is_float = false; break;
  case TS_DT_INT16: i = *(const int16_t *)p, is_float = false; break;
  case TS_DT_INT8: i = *(const int8_t *)p, is_float = false; break;
  case TS_DT_UINT8: i = *(const uint8_t *)p, is_float = false; break;
  case TS_DT_BOOL: i = *(const uint8_t *)p != 0, is_float = false; break;
  default: ts_buf_puts(b, "<Tensor>"); return;
  }
  if (is_float)
    ts_buf_printf(b, "{%g}", d);
  else
    ts_buf_printf(b, "{%lld}", i);
}

void ts_attr_print_value(ts_buf *b, const ts_attr *a) {
  switch (a->kind) {
  case TS_ATTR_INT: ts_buf_printf(b, "%lld", (long long)a->u.i); break;
  case TS_ATTR_FLOAT: ts_buf_put_double(b, a->u.f); break;
  case TS_ATTR_STR: ts_buf_put_quoted(b, a->u.s, a->len); break;
  case TS_ATTR_TENSOR: ts_tconst_print(b, a->u.t); break;
  case TS_ATTR_GRAPH: ts_buf_puts(b, "<Graph>"); break;
  case TS_ATTR_TYPE: /* PyTorch's list of types: "[Tensor]", "[int, float]" */
    ts_buf_putc(b, '[');
    if (a->u.ty->kind == TS_TY_UNION) {
      for (uint32_t i = 0; i < a->u.ty->n; i++) {
        if (i)
          ts_buf_puts(b, ", ");
        ts_type_print(b, a->u.ty->elems[i]);
      }
    } else {
      ts_type_print(b, a->u.ty);
    }
    ts_buf_putc(b, ']');
    break;
  case TS_ATTR_TENSORS: ts_buf_puts(b, "[<Tensors>]"); break;
  case TS_ATTR_INTS:
  case TS_ATTR_FLOATS:
  case TS_ATTR_STRS:
    ts_buf_putc(b, '[');
    for (size_t i = 0; i < a->len; i++) {
      if (i)
        ts_buf_puts(b, ", ");
      if (a->kind == TS_ATTR_INTS)
        ts_buf_printf(b, "%lld", (long long)a->u.is[i]);
      else if (a->kind == TS_ATTR_FLOATS)
        ts_buf_put_double(b, a->u.fs[i]);
      else
        ts_buf_put_quoted(b, a->u.ss[i], strlen(a->u.ss[i]));
    }
    ts_buf_putc(b, ']');
    break;
  }
}

static void ts_attrs_print(ts_buf *b, const ts_node *n, bool skip_subgraph) {
  ts_buf_putc(b, '[');
  bool first = true;
  for (const ts_attr *a = n->attrs; a; a = a->next) {
    if (skip_subgraph && strcmp(a->name, "Subgraph") == 0)
      continue;
    if (!first)
      ts_buf_puts(b, ", ");
    first = false;
    ts_buf_printf(b, "%s=", a->name);
    ts_attr_print_value(b, a);
  }
  ts_buf_putc(b, ']');
}

static const ts_attr *ts_node_subgraph(const ts_node *n) {
  const ts_attr *a = ts_node_attr(n, "Subgraph");
  return a && a->kind == TS_ATTR_GRAPH ? a : NULL;
}

/* Node::print: outputs, kind (or "kind_N" for a node with a Subgraph, whose
 * body is printed after the graph), attributes, inputs, source location,
 * then nested blocks two levels deeper. */
static void ts_node_print_in(ts_buf *b, const ts_node *n, int level, ts_groups *groups) {
  ts_indent(b, level);
  ts_values_print(b, n->outputs, n->noutputs, ", ", true);
  ts_buf_puts(b, " = ");
  if (groups && ts_node_subgraph(n)) {
    ts_buf_printf(b, "%s_%zu", n->kind_name, groups->n);
    if (ts_node_attr_count(n) > 1 && n->kind != TS_K_prim_DifferentiableGraph)
      ts_attrs_print(b, n, true);
    ts_groups_push(groups, n);
  } else {
    ts_buf_puts(b, n->kind_name);
    if (n->attrs)
      ts_attrs_print(b, n, false);
  }
  ts_buf_putc(b, '(');
  ts_values_print(b, n->inputs, n->ninputs, ", ", false);
  ts_buf_putc(b, ')');
  if (n->loc.file)
    ts_buf_printf(b, " # %s:%d:%d", n->loc.file, n->loc.line, n->loc.col);
  ts_buf_putc(b, '\n');
  for (uint32_t i = 0; i < n->nblocks; i++) {
    const ts_block *blk = n->blocks[i];
    ts_indent(b, level + 1);
    ts_buf_printf(b, "block%u(", i);
    ts_values_print(b, blk->param->outputs, blk->param->noutputs, ", ", true);
    ts_buf_puts(b, "):\n");
    for (const ts_node *m = ts_block_first(blk); m != blk->ret; m = m->next)
      ts_node_print_in(b, m, level + 2, groups);
    ts_indent(b, level + 2);
    ts_buf_puts(b, "-> (");
    ts_values_print(b, blk->ret->inputs, blk->ret->ninputs, ", ", false);
    ts_buf_puts(b, ")\n");
  }
}

void ts_node_print(ts_buf *b, const ts_node *n, int level) { ts_node_print_in(b, n, level, NULL); }

void ts_graph_print(ts_buf *b, const ts_graph *g) {
  const ts_block *top = g->block;
  ts_groups groups = {0};
  ts_buf_puts(b, "graph(");
  ts_values_print(b, top->param->outputs, top->param->noutputs, ",\n      ", true);
  ts_buf_puts(b, "):\n");
  for (const ts_node *n = ts_block_first(top); n != top->ret; n = n->next)
    ts_node_print_in(b, n, 1, &groups);
  ts_buf_puts(b, "  return (");
  ts_values_print(b, top->ret->inputs, top->ret->ninputs, ", ", false);
  ts_buf_puts(b, ")\n");
  for (size_t i = 0; i < groups.n; i++) {
    const ts_node *n = groups.items[i];
    ts_buf_printf(b, "with %s_%zu = ", n->kind_name, i);
    ts_graph_print(b, ts_node_subgraph(n)->u.g);
  }
  if (groups.failed)
    b->failed = true;
  free(groups.items);
}
