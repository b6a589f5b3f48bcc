/* frontend/ast.c: names of AST kinds, the tree dump the tests compare, and
 * the frontend's error helper. */
#include "ast.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ts_ast_kind_names[TS_AST_KIND_COUNT] = {
    [TS_AST_NAME] = "NAME",
    [TS_AST_INT] = "INT",
    [TS_AST_FLOAT] = "FLOAT",
    [TS_AST_STR] = "STR",
    [TS_AST_NONE] = "NONE",
    [TS_AST_TRUE] = "TRUE",
    [TS_AST_FALSE] = "FALSE",
    [TS_AST_ATTR] = "ATTR",
    [TS_AST_SUBSCRIPT] = "SUBSCRIPT",
    [TS_AST_SLICE] = "SLICE",
    [TS_AST_CALL] = "CALL",
    [TS_AST_KWARG] = "KWARG",
    [TS_AST_STARRED] = "STARRED",
    [TS_AST_TUPLE] = "TUPLE",
    [TS_AST_LIST] = "LIST",
    [TS_AST_DICT] = "DICT",
    [TS_AST_UNOP] = "UNOP",
    [TS_AST_BINOP] = "BINOP",
    [TS_AST_BOOLOP] = "BOOLOP",
    [TS_AST_COMPARE] = "COMPARE",
    [TS_AST_IFEXP] = "IFEXP",
    [TS_AST_LAMBDA] = "LAMBDA",
    [TS_AST_EXPR_STMT] = "EXPR_STMT",
    [TS_AST_ASSIGN] = "ASSIGN",
    [TS_AST_AUGASSIGN] = "AUGASSIGN",
    [TS_AST_IF] = "IF",
    [TS_AST_WHILE] = "WHILE",
    [TS_AST_FOR] = "FOR",
    [TS_AST_RETURN] = "RETURN",
    [TS_AST_BREAK] = "BREAK",
    [TS_AST_CONTINUE] = "CONTINUE",
    [TS_AST_PASS] = "PASS",
    [TS_AST_RAISE] = "RAISE",
    [TS_AST_ASSERT] = "ASSERT",
    [TS_AST_DEL] = "DEL",
    [TS_AST_WITH] = "WITH",
    [TS_AST_WITH_ITEM] = "WITH_ITEM",
    [TS_AST_GLOBAL] = "GLOBAL",
    [TS_AST_IMPORT] = "IMPORT",
    [TS_AST_DEF] = "DEF",
    [TS_AST_PARAM] = "PARAM",
    [TS_AST_CLASS] = "CLASS",
    [TS_AST_MODULE] = "MODULE",
};

const char *ts_ast_kind_name(ts_ast_kind k) {
  if ((int)k < 0 || k >= TS_AST_KIND_COUNT || !ts_ast_kind_names[k])
    return "?";
  return ts_ast_kind_names[k];
}

void ts_fe_error_at(ts_diag *d, ts_srange r, const char *fmt, ...) {
  if (!d)
    return;
  ts_buf msg = {0};
  va_list ap;
  va_start(ap, fmt);
  ts_buf_vprintf(&msg, fmt, ap);
  va_end(ap);
  const ts_fe_source *s = r.src;
  ts_diag_error_at(d, s ? s->file : NULL, s ? s->text : NULL, s ? s->len : 0, r.line, r.col, "%s",
                   msg.data ? msg.data : "out of memory");
  ts_buf_free(&msg);
}

/* The shortest "%.Ng" that reads back as `v`, with ".0" added when it
 * would otherwise look like an int (as Python's repr). */
static void ts_ast_put_float(ts_buf *b, double v) {
  char tmp[64];
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(tmp, sizeof tmp, "%.*g", prec, v);
    if (strtod(tmp, NULL) == v || isnan(v))
      break;
  }
  ts_buf_puts(b, tmp);
  if (!strpbrk(tmp, ".eni"))
    ts_buf_puts(b, ".0");
}

static void ts_ast_dump_node(ts_buf *b, const ts_ast *n, int indent, const char *label);

static void ts_ast_dump_list(ts_buf *b, const ts_ast_list *l, int indent, const char *label) {
  if (!l->n)
    return;
  ts_buf_printf(b, "\n%*s%s: [", indent, "", label);
  for (uint32_t i = 0; i < l->n; i++) {
    ts_buf_putc(b, '\n');
    ts_ast_dump_node(b, l->v[i], indent + 2, NULL);
  }
  ts_buf_putc(b, ']');
}

static void ts_ast_dump_child(ts_buf *b, const ts_ast *c, int indent, const char *label) {
  if (!c)
    return;
  ts_buf_putc(b, '\n');
  ts_ast_dump_node(b, c, indent, label);
}

/* (KIND line:col spelling
 *   a: (...)
 *   list: [
 *     (...)]) */
static void ts_ast_dump_node(ts_buf *b, const ts_ast *n, int indent, const char *label) {
  ts_buf_printf(b, "%*s", indent, "");
  if (label)
    ts_buf_printf(b, "%s: ", label);
  if (!n) {
    ts_buf_puts(b, "(null)");
    return;
  }
  ts_buf_printf(b, "(%s %d:%d", ts_ast_kind_name(n->kind), n->range.line, n->range.col);
  switch (n->kind) {
  case TS_AST_INT: ts_buf_printf(b, " %lld", (long long)n->i); break;
  case TS_AST_FLOAT:
    ts_buf_putc(b, ' ');
    ts_ast_put_float(b, n->f);
    break;
  case TS_AST_STR:
  case TS_AST_IMPORT:
    ts_buf_putc(b, ' ');
    ts_buf_put_quoted(b, n->str ? n->str : "", n->str ? n->len : 0);
    break;
  default:
    if (n->op)
      ts_buf_printf(b, " %s", n->op);
    if (n->str)
      ts_buf_printf(b, " %s", n->str);
    break;
  }
  if (n->flags & TS_AST_F_KWONLY)
    ts_buf_puts(b, " kwonly");
  if (n->flags & TS_AST_F_VARARGS)
    ts_buf_puts(b, " varargs");
  ts_ast_dump_child(b, n->a, indent + 2, "a");
  ts_ast_dump_child(b, n->b, indent + 2, "b");
  ts_ast_dump_child(b, n->c, indent + 2, "c");
  ts_ast_dump_list(b, &n->list, indent + 2, "list");
  ts_ast_dump_list(b, &n->list2, indent + 2, "list2");
  ts_ast_dump_list(b, &n->kw, indent + 2, "kw");
  ts_ast_dump_list(b, &n->decorators, indent + 2, "decorators");
  ts_ast_dump_list(b, &n->body, indent + 2, "body");
  ts_ast_dump_list(b, &n->orelse, indent + 2, "orelse");
  ts_buf_putc(b, ')');
}

void ts_ast_dump(ts_buf *b, const ts_ast *n, int indent) {
  ts_ast_dump_node(b, n, indent < 0 ? 0 : indent, NULL);
  ts_buf_putc(b, '\n');
}
