/* frontend/parser.c: recursive descent over the tokens of ts_fe_lex, for
 * the Python subset PyTorch's printer writes under code/ (see ast.h).
 *
 * Keywords are NAME tokens; the parser decides by position. Recursion is
 * bounded: nested expressions (brackets, unary operators, "**", "if/else")
 * and nested blocks are each limited to TS_P_MAX_DEPTH levels, and so is
 * the height of every tree built (a left-associative chain "a+b+...+z" is as
 * deep as it is long), so later recursive passes cannot overflow the stack
 * either. Every error is reported once, at the offending token, and makes
 * the parse return NULL. */
#include "ast.h"

#include <stdio.h>
#include <string.h>

#define TS_P_MAX_DEPTH 200

/* A node with the heights the limits are checked on: `height` over the
 * expression children (a, b, c, list, list2, kw, decorators), `sheight` over
 * nested statements (body, orelse). `ast` comes first: a ts_ast * of a
 * parser-made node points at one of these. */
typedef struct ts_p_tnode {
  ts_ast ast;
  int32_t height, sheight;
} ts_p_tnode;

typedef struct ts_p {
  ts_arena *arena;
  const ts_fe_source *src;
  ts_diag *d;
  const ts_tok *t;
  uint32_t n, i;
  int depth;  /* nested expressions being parsed */
  int bdepth; /* nested blocks being parsed */
  bool failed;
} ts_p;

/* A list under construction (its arrays live in the arena). */
typedef struct ts_p_vec {
  ts_ast **v;
  uint32_t n, cap;
} ts_p_vec;

static ts_ast *ts_p_test(ts_p *p);
static ts_ast *ts_p_bin(ts_p *p, int level);
static ts_ast *ts_p_unary(ts_p *p);
static bool ts_p_stmt(ts_p *p, ts_p_vec *out);

/* ------------------------------------------------------------ tokens */

static const char *const ts_p_keywords[] = {
    "False", "None",   "True",  "and",   "as",       "assert", "async",  "await",  "break",
    "class", "continue", "def", "del",   "elif",     "else",   "except", "finally", "for",
    "from",  "global", "if",    "import", "in",      "is",     "lambda", "nonlocal", "not",
    "or",    "pass",   "raise", "return", "try",     "while",  "with",   "yield",
};

static bool ts_p_is_keyword(const char *s) {
  for (size_t k = 0; k < sizeof ts_p_keywords / sizeof ts_p_keywords[0]; k++)
    if (strcmp(s, ts_p_keywords[k]) == 0)
      return true;
  return false;
}

static const ts_tok *ts_p_cur(const ts_p *p) { return &p->t[p->i]; }

static const ts_tok *ts_p_peek(const ts_p *p, uint32_t k) {
  uint32_t j = p->i + k;
  return &p->t[j < p->n ? j : p->n - 1];
}

/* Takes the current token; the final EOF is never passed. */
static const ts_tok *ts_p_next(ts_p *p) {
  const ts_tok *t = &p->t[p->i];
  if (p->i + 1 < p->n)
    p->i++;
  return t;
}

static bool ts_p_tok_op(const ts_tok *t, const char *op) { return t->kind == TS_TOK_OP && strcmp(t->str, op) == 0; }
static bool ts_p_tok_kw(const ts_tok *t, const char *kw) { return t->kind == TS_TOK_NAME && strcmp(t->str, kw) == 0; }
static bool ts_p_is_op(const ts_p *p, const char *op) { return ts_p_tok_op(ts_p_cur(p), op); }
static bool ts_p_is_kw(const ts_p *p, const char *kw) { return ts_p_tok_kw(ts_p_cur(p), kw); }
static bool ts_p_is(const ts_p *p, ts_tok_kind k) { return ts_p_cur(p)->kind == k; }

static bool ts_p_accept_op(ts_p *p, const char *op) {
  if (!ts_p_is_op(p, op))
    return false;
  ts_p_next(p);
  return true;
}

static bool ts_p_accept_kw(ts_p *p, const char *kw) {
  if (!ts_p_is_kw(p, kw))
    return false;
  ts_p_next(p);
  return true;
}

/* The end of the last token taken that is not a NEWLINE, INDENT or DEDENT:
 * where a construct read so far ends. */
static uint32_t ts_p_prev_end(const ts_p *p) {
  for (uint32_t j = p->i; j > 0; j--) {
    const ts_tok *t = &p->t[j - 1];
    if (t->kind != TS_TOK_NEWLINE && t->kind != TS_TOK_INDENT && t->kind != TS_TOK_DEDENT)
      return t->range.end;
  }
  return 0;
}

/* "name 'x'", "keyword 'if'", "number '1.5'", "'('", "end of line" ... */
static void ts_p_describe(const ts_tok *t, char *buf, size_t size) {
  const char *text = t->range.src && t->range.src->text ? t->range.src->text + t->range.start : "";
  int len = (int)(t->range.end - t->range.start);
  if (len > 32)
    len = 32;
  switch (t->kind) {
  case TS_TOK_EOF: snprintf(buf, size, "end of file"); break;
  case TS_TOK_NEWLINE: snprintf(buf, size, "end of line"); break;
  case TS_TOK_INDENT: snprintf(buf, size, "an indent"); break;
  case TS_TOK_DEDENT: snprintf(buf, size, "an unindent"); break;
  case TS_TOK_NAME:
    snprintf(buf, size, "%s '%.*s'", ts_p_is_keyword(t->str) ? "keyword" : "name", len, t->str);
    break;
  case TS_TOK_INT:
  case TS_TOK_FLOAT: snprintf(buf, size, "number '%.*s'", len, text); break;
  case TS_TOK_STR: snprintf(buf, size, "a string"); break;
  case TS_TOK_OP: snprintf(buf, size, "'%s'", t->str); break;
  }
}

/* ------------------------------------------------------------ errors */

/* Reports the first error only (later ones are consequences); returns
 * NULL for `return ts_p_error(...)`. */
static void *ts_p_error(ts_p *p, ts_srange r, const char *fmt, ...) TS_PRINTF(3, 4);
static void *ts_p_error(ts_p *p, ts_srange r, const char *fmt, ...) {
  if (p->failed)
    return NULL;
  p->failed = true;
  char msg[320];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ts_fe_error_at(p->d, r, "%s", msg);
  return NULL;
}

/* "expected WHAT, got <the current token>" at the current token. */
static void *ts_p_expected(ts_p *p, const char *what) {
  char got[80];
  ts_p_describe(ts_p_cur(p), got, sizeof got);
  return ts_p_error(p, ts_p_cur(p)->range, "expected %s, got %s", what, got);
}

static bool ts_p_expect_op(ts_p *p, const char *op) {
  if (ts_p_accept_op(p, op))
    return true;
  char what[16];
  snprintf(what, sizeof what, "'%s'", op);
  ts_p_expected(p, what);
  return false;
}

/* The closing bracket of `open`. */
static bool ts_p_expect_close(ts_p *p, const char *close, const ts_tok *open) {
  if (ts_p_accept_op(p, close))
    return true;
  ts_p_error(p, ts_p_cur(p)->range, "expected '%s' to close '%s' at %d:%d", close, open->str, open->range.line,
             open->range.col);
  return false;
}

/* ------------------------------------------------------------ nodes */

static ts_ast *ts_p_node(ts_p *p, ts_ast_kind k, ts_srange start) {
  ts_p_tnode *n = ts_arena_alloc(p->arena, sizeof *n);
  if (!n)
    return ts_p_error(p, start, "out of memory");
  n->ast.kind = k;
  n->ast.range = start;
  return &n->ast;
}

static int32_t ts_p_height(const ts_ast *x) { return x ? ((const ts_p_tnode *)x)->height : 0; }
static int32_t ts_p_sheight(const ts_ast *x) { return x ? ((const ts_p_tnode *)x)->sheight : 0; }

static int32_t ts_p_list_height(const ts_ast_list *l, bool stmt) {
  int32_t h = 0;
  for (uint32_t k = 0; k < l->n; k++) {
    int32_t e = stmt ? ts_p_sheight(l->v[k]) : ts_p_height(l->v[k]);
    if (e > h)
      h = e;
  }
  return h;
}

static int32_t ts_p_max(int32_t a, int32_t b) { return a > b ? a : b; }

/* Finishes a node whose tokens have all been taken: its range ends at the
 * last of them; its heights are checked against the limits. */
static ts_ast *ts_p_done(ts_p *p, ts_ast *n) {
  if (!n || p->failed)
    return NULL;
  uint32_t end = ts_p_prev_end(p);
  if (end > n->range.start)
    n->range.end = end;
  ts_p_tnode *pn = (ts_p_tnode *)n;
  int32_t h = ts_p_max(ts_p_height(n->a), ts_p_max(ts_p_height(n->b), ts_p_height(n->c)));
  h = ts_p_max(h, ts_p_list_height(&n->list, false));
  h = ts_p_max(h, ts_p_list_height(&n->list2, false));
  h = ts_p_max(h, ts_p_list_height(&n->kw, false));
  h = ts_p_max(h, ts_p_list_height(&n->decorators, false));
  pn->height = h + 1;
  pn->sheight = ts_p_max(ts_p_list_height(&n->body, true), ts_p_list_height(&n->orelse, true)) + 1;
  if (pn->height > TS_P_MAX_DEPTH)
    return ts_p_error(p, n->range, "expression nested too deeply (limit %d)", TS_P_MAX_DEPTH);
  if (pn->sheight > TS_P_MAX_DEPTH)
    return ts_p_error(p, n->range, "statements nested too deeply (limit %d)", TS_P_MAX_DEPTH);
  return n;
}

static bool ts_p_push(ts_p *p, ts_p_vec *v, ts_ast *x) {
  if (!x)
    return false;
  if (v->n == v->cap) {
    uint32_t ncap = v->cap ? v->cap * 2 : 4;
    ts_ast **nv = ncap > v->cap ? ts_arena_grow(p->arena, v->v, v->n, ncap, sizeof *nv) : NULL;
    if (!nv) {
      ts_p_error(p, x->range, "out of memory");
      return false;
    }
    v->v = nv;
    v->cap = ncap;
  }
  v->v[v->n++] = x;
  return true;
}

static ts_ast_list ts_p_list(const ts_p_vec *v) {
  ts_ast_list l = {v->v, v->n};
  return l;
}

/* Enters one more level of expression nesting; false past the limit. */
static bool ts_p_enter(ts_p *p) {
  if (++p->depth > TS_P_MAX_DEPTH) {
    ts_p_error(p, ts_p_cur(p)->range, "expression nested too deeply (limit %d)", TS_P_MAX_DEPTH);
    return false;
  }
  return true;
}

/* ------------------------------------------------------------ expressions */

/* Whether `t` can begin an expression (used after a trailing comma and for
 * optional operands: "return", "raise", "x[1:]"). */
static bool ts_p_starts_expr(const ts_tok *t) {
  switch (t->kind) {
  case TS_TOK_INT:
  case TS_TOK_FLOAT:
  case TS_TOK_STR: return true;
  case TS_TOK_NAME:
    return !ts_p_is_keyword(t->str) || strcmp(t->str, "None") == 0 || strcmp(t->str, "True") == 0 ||
           strcmp(t->str, "False") == 0 || strcmp(t->str, "not") == 0 || strcmp(t->str, "lambda") == 0;
  case TS_TOK_OP:
    return ts_p_tok_op(t, "(") || ts_p_tok_op(t, "[") || ts_p_tok_op(t, "{") || ts_p_tok_op(t, "-") ||
           ts_p_tok_op(t, "+") || ts_p_tok_op(t, "~") || ts_p_tok_op(t, "*");
  default: return false;
  }
}

/* An identifier that is not a keyword, as a NAME node; `what` names it in
 * the error ("a parameter name"). */
static ts_ast *ts_p_ident(ts_p *p, const char *what) {
  const ts_tok *t = ts_p_cur(p);
  if (t->kind != TS_TOK_NAME || ts_p_is_keyword(t->str))
    return ts_p_expected(p, what);
  ts_p_next(p);
  ts_ast *n = ts_p_node(p, TS_AST_NAME, t->range);
  if (!n)
    return NULL;
  n->str = t->str;
  n->len = t->len;
  return ts_p_done(p, n);
}

/* star_expr = "*" bitor */
static ts_ast *ts_p_star(ts_p *p) {
  const ts_tok *t = ts_p_next(p);
  if (!ts_p_enter(p))
    return NULL;
  ts_ast *e = ts_p_bin(p, 0);
  p->depth--;
  if (!e)
    return NULL;
  ts_ast *n = ts_p_node(p, TS_AST_STARRED, t->range);
  if (!n)
    return NULL;
  n->a = e;
  return ts_p_done(p, n);
}

/* test_or_star = star_expr | test */
static ts_ast *ts_p_test_or_star(ts_p *p) { return ts_p_is_op(p, "*") ? ts_p_star(p) : ts_p_test(p); }

/* target = star_expr | bitor   (no comparisons: "for x in y" stops at "in") */
static ts_ast *ts_p_target(ts_p *p) { return ts_p_is_op(p, "*") ? ts_p_star(p) : ts_p_bin(p, 0); }

/* testlist = elem ("," elem)* [","]: a TUPLE without parentheses when there
 * is a comma. `targets`: elements are targets, else test_or_star. */
static ts_ast *ts_p_testlist(ts_p *p, bool targets) {
  ts_srange start = ts_p_cur(p)->range;
  ts_ast *first = targets ? ts_p_target(p) : ts_p_test_or_star(p);
  if (!first || !ts_p_is_op(p, ","))
    return first;
  ts_p_vec v = {0};
  if (!ts_p_push(p, &v, first))
    return NULL;
  while (ts_p_accept_op(p, ",")) {
    if (!ts_p_starts_expr(ts_p_cur(p)))
      break;
    if (!ts_p_push(p, &v, targets ? ts_p_target(p) : ts_p_test_or_star(p)))
      return NULL;
  }
  ts_ast *n = ts_p_node(p, TS_AST_TUPLE, start);
  if (!n)
    return NULL;
  n->list = ts_p_list(&v);
  return ts_p_done(p, n);
}

/* STRING+: adjacent literals joined into one STR. */
static ts_ast *ts_p_strings(ts_p *p) {
  const ts_tok *first = ts_p_cur(p);
  size_t total = 0;
  uint32_t k = p->i;
  while (k < p->n && p->t[k].kind == TS_TOK_STR)
    total += p->t[k++].len;
  char *buf = ts_arena_alloc(p->arena, total + 1);
  if (!buf)
    return ts_p_error(p, first->range, "out of memory");
  size_t o = 0;
  while (ts_p_is(p, TS_TOK_STR)) {
    const ts_tok *t = ts_p_next(p);
    memcpy(buf + o, t->str, t->len);
    o += t->len;
  }
  buf[o] = 0;
  ts_ast *n = ts_p_node(p, TS_AST_STR, first->range);
  if (!n)
    return NULL;
  n->str = buf;
  n->len = o;
  return ts_p_done(p, n);
}

/* atom = "(" [test_or_star ("," test_or_star)* [","]] ")" | "[" ... "]"
 *      | "{" [test ":" test ("," test ":" test)* [","]] "}"
 *      | NAME | INT | FLOAT | STRING+ | None | True | False */
static ts_ast *ts_p_atom(ts_p *p) {
  const ts_tok *t = ts_p_cur(p);
  switch (t->kind) {
  case TS_TOK_INT: {
    if (t->i == INT64_MIN)
      return ts_p_error(p, t->range, "integer literal too large");
    ts_p_next(p);
    ts_ast *n = ts_p_node(p, TS_AST_INT, t->range);
    if (!n)
      return NULL;
    n->i = t->i;
    return ts_p_done(p, n);
  }
  case TS_TOK_FLOAT: {
    ts_p_next(p);
    ts_ast *n = ts_p_node(p, TS_AST_FLOAT, t->range);
    if (!n)
      return NULL;
    n->f = t->f;
    return ts_p_done(p, n);
  }
  case TS_TOK_STR: return ts_p_strings(p);
  case TS_TOK_NAME: {
    ts_ast_kind k = TS_AST_NAME;
    if (strcmp(t->str, "None") == 0)
      k = TS_AST_NONE;
    else if (strcmp(t->str, "True") == 0)
      k = TS_AST_TRUE;
    else if (strcmp(t->str, "False") == 0)
      k = TS_AST_FALSE;
    else if (strcmp(t->str, "lambda") == 0)
      return ts_p_error(p, t->range, "lambda expressions are not supported");
    else if (strcmp(t->str, "yield") == 0 || strcmp(t->str, "await") == 0)
      return ts_p_error(p, t->range, "'%s' expressions are not supported", t->str);
    else if (ts_p_is_keyword(t->str))
      return ts_p_expected(p, "an expression");
    ts_p_next(p);
    ts_ast *n = ts_p_node(p, k, t->range);
    if (!n)
      return NULL;
    if (k == TS_AST_NAME) {
      n->str = t->str;
      n->len = t->len;
    }
    return ts_p_done(p, n);
  }
  case TS_TOK_OP: break;
  default: return ts_p_expected(p, "an expression");
  }
  if (ts_p_tok_op(t, "(")) {
    ts_p_next(p);
    ts_ast *n;
    if (ts_p_is_op(p, ")")) {
      ts_p_next(p);
      n = ts_p_node(p, TS_AST_TUPLE, t->range);
      return ts_p_done(p, n);
    }
    ts_ast *first = ts_p_test_or_star(p);
    if (!first)
      return NULL;
    if (ts_p_is_op(p, ")")) {
      ts_p_next(p);
      if (first->kind == TS_AST_STARRED)
        return ts_p_error(p, first->range, "cannot use a starred expression here");
      return first; /* a parenthesised expression is its content */
    }
    if (!ts_p_is_op(p, ",")) {
      ts_p_expect_close(p, ")", t);
      return NULL;
    }
    ts_p_vec v = {0};
    if (!ts_p_push(p, &v, first))
      return NULL;
    while (ts_p_accept_op(p, ",")) {
      if (ts_p_is_op(p, ")"))
        break;
      if (!ts_p_push(p, &v, ts_p_test_or_star(p)))
        return NULL;
    }
    if (!ts_p_expect_close(p, ")", t))
      return NULL;
    n = ts_p_node(p, TS_AST_TUPLE, t->range);
    if (!n)
      return NULL;
    n->list = ts_p_list(&v);
    return ts_p_done(p, n);
  }
  if (ts_p_tok_op(t, "[")) {
    ts_p_next(p);
    ts_p_vec v = {0};
    while (!ts_p_is_op(p, "]")) {
      if (!ts_p_push(p, &v, ts_p_test_or_star(p)))
        return NULL;
      if (!ts_p_accept_op(p, ","))
        break;
    }
    if (!ts_p_expect_close(p, "]", t))
      return NULL;
    ts_ast *n = ts_p_node(p, TS_AST_LIST, t->range);
    if (!n)
      return NULL;
    n->list = ts_p_list(&v);
    return ts_p_done(p, n);
  }
  if (ts_p_tok_op(t, "{")) {
    ts_p_next(p);
    ts_p_vec keys = {0}, vals = {0};
    while (!ts_p_is_op(p, "}")) {
      if (ts_p_is_op(p, "**"))
        return ts_p_error(p, ts_p_cur(p)->range, "'**' dictionary unpacking is not supported");
      if (!ts_p_push(p, &keys, ts_p_test(p)))
        return NULL;
      if (!ts_p_is_op(p, ":"))
        return ts_p_expected(p, "':' after a dictionary key");
      ts_p_next(p);
      if (!ts_p_push(p, &vals, ts_p_test(p)))
        return NULL;
      if (!ts_p_accept_op(p, ","))
        break;
    }
    if (!ts_p_expect_close(p, "}", t))
      return NULL;
    ts_ast *n = ts_p_node(p, TS_AST_DICT, t->range);
    if (!n)
      return NULL;
    n->list = ts_p_list(&keys);
    n->list2 = ts_p_list(&vals);
    return ts_p_done(p, n);
  }
  if (ts_p_tok_op(t, "..."))
    return ts_p_error(p, t->range, "'...' is not supported");
  return ts_p_expected(p, "an expression");
}

/* call = primary "(" [arg ("," arg)* [","]] ")"
 * arg = NAME "=" test | "*" test | test */
static ts_ast *ts_p_call(ts_p *p, ts_ast *callee, ts_srange start) {
  const ts_tok *open = ts_p_next(p);
  ts_p_vec args = {0}, kws = {0};
  while (!ts_p_is_op(p, ")")) {
    const ts_tok *t = ts_p_cur(p);
    if (ts_p_tok_op(t, "*")) {
      ts_p_next(p);
      ts_ast *e = ts_p_test(p);
      ts_ast *s = e ? ts_p_node(p, TS_AST_STARRED, t->range) : NULL;
      if (!s)
        return NULL;
      s->a = e;
      if (!ts_p_push(p, &args, ts_p_done(p, s)))
        return NULL;
    } else if (ts_p_tok_op(t, "**")) {
      return ts_p_error(p, t->range, "'**' argument unpacking is not supported");
    } else if (t->kind == TS_TOK_NAME && ts_p_tok_op(ts_p_peek(p, 1), "=")) {
      /* any NAME, keywords included: schemas have arguments like "from" */
      ts_p_next(p);
      ts_p_next(p);
      ts_ast *e = ts_p_test(p);
      ts_ast *k = e ? ts_p_node(p, TS_AST_KWARG, t->range) : NULL;
      if (!k)
        return NULL;
      k->str = t->str;
      k->len = t->len;
      k->a = e;
      if (!ts_p_push(p, &kws, ts_p_done(p, k)))
        return NULL;
    } else {
      ts_ast *e = ts_p_test(p);
      if (!e)
        return NULL;
      if (kws.n)
        return ts_p_error(p, e->range, "positional argument follows keyword argument");
      if (!ts_p_push(p, &args, e))
        return NULL;
    }
    if (!ts_p_accept_op(p, ","))
      break;
  }
  if (!ts_p_expect_close(p, ")", open))
    return NULL;
  ts_ast *n = ts_p_node(p, TS_AST_CALL, start);
  if (!n)
    return NULL;
  n->a = callee;
  n->list = ts_p_list(&args);
  n->kw = ts_p_list(&kws);
  return ts_p_done(p, n);
}

/* subscript_item = test | [test] ":" [test] [":" [test]] */
static ts_ast *ts_p_subscript_item(ts_p *p) {
  ts_srange start = ts_p_cur(p)->range;
  ts_ast *lo = NULL, *hi = NULL, *step = NULL;
  if (!ts_p_is_op(p, ":")) {
    lo = ts_p_test(p);
    if (!lo || !ts_p_is_op(p, ":"))
      return lo;
  }
  ts_p_next(p);
  if (!ts_p_is_op(p, ":") && !ts_p_is_op(p, ",") && !ts_p_is_op(p, "]")) {
    if (!(hi = ts_p_test(p)))
      return NULL;
  }
  if (ts_p_accept_op(p, ":") && !ts_p_is_op(p, ",") && !ts_p_is_op(p, "]")) {
    if (!(step = ts_p_test(p)))
      return NULL;
  }
  ts_ast *n = ts_p_node(p, TS_AST_SLICE, start);
  if (!n)
    return NULL;
  n->a = lo;
  n->b = hi;
  n->c = step;
  return ts_p_done(p, n);
}

/* subscript = primary "[" subscript_item ("," subscript_item)* [","] "]" */
static ts_ast *ts_p_subscript(ts_p *p, ts_ast *value, ts_srange start) {
  const ts_tok *open = ts_p_next(p);
  ts_p_vec items = {0};
  do {
    if (!ts_p_push(p, &items, ts_p_subscript_item(p)))
      return NULL;
  } while (ts_p_accept_op(p, ",") && !ts_p_is_op(p, "]"));
  if (!ts_p_expect_close(p, "]", open))
    return NULL;
  ts_ast *n = ts_p_node(p, TS_AST_SUBSCRIPT, start);
  if (!n)
    return NULL;
  n->a = value;
  n->list = ts_p_list(&items);
  return ts_p_done(p, n);
}

/* primary = atom ("." NAME | call | subscript)*
 * A trailer's range starts at the atom's first token, the "(" of "(self).f"
 * included. */
static ts_ast *ts_p_primary(ts_p *p) {
  ts_srange start = ts_p_cur(p)->range;
  ts_ast *a = ts_p_atom(p);
  while (a) {
    if (ts_p_is_op(p, ".")) {
      ts_p_next(p);
      const ts_tok *name = ts_p_cur(p);
      /* keywords too: operator names are not checked against Python's */
      if (name->kind != TS_TOK_NAME)
        return ts_p_expected(p, "an attribute name after '.'");
      ts_p_next(p);
      ts_ast *n = ts_p_node(p, TS_AST_ATTR, start);
      if (!n)
        return NULL;
      n->a = a;
      n->str = name->str;
      n->len = name->len;
      a = ts_p_done(p, n);
    } else if (ts_p_is_op(p, "(")) {
      a = ts_p_call(p, a, start);
    } else if (ts_p_is_op(p, "[")) {
      a = ts_p_subscript(p, a, start);
    } else {
      break;
    }
  }
  return a;
}

static ts_ast *ts_p_binop(ts_p *p, const char *op, ts_ast *a, ts_ast *b, ts_ast_kind k) {
  if (!a || !b)
    return NULL;
  ts_ast *n = ts_p_node(p, k, a->range);
  if (!n)
    return NULL;
  n->op = op;
  n->a = a;
  n->b = b;
  return ts_p_done(p, n);
}

/* power = primary ["**" unary] */
static ts_ast *ts_p_power(ts_p *p) {
  ts_ast *a = ts_p_primary(p);
  if (!a || !ts_p_is_op(p, "**"))
    return a;
  const ts_tok *op = ts_p_next(p);
  if (!ts_p_enter(p))
    return NULL;
  ts_ast *b = ts_p_unary(p);
  p->depth--;
  return ts_p_binop(p, op->str, a, b, TS_AST_BINOP);
}

/* unary = ("-" | "+" | "~") unary | power */
static ts_ast *ts_p_unary(ts_p *p) {
  const ts_tok *t = ts_p_cur(p);
  if (!ts_p_tok_op(t, "-") && !ts_p_tok_op(t, "+") && !ts_p_tok_op(t, "~"))
    return ts_p_power(p);
  const ts_tok *lit = ts_p_peek(p, 1);
  if (ts_p_tok_op(t, "-") && lit->kind == TS_TOK_INT && lit->i == INT64_MIN && !ts_p_tok_op(ts_p_peek(p, 2), "**") &&
      !ts_p_tok_op(ts_p_peek(p, 2), ".") && !ts_p_tok_op(ts_p_peek(p, 2), "(") && !ts_p_tok_op(ts_p_peek(p, 2), "[")) {
    /* -9223372036854775808: the one literal whose magnitude is not an int64 */
    ts_p_next(p);
    ts_p_next(p);
    ts_ast *n = ts_p_node(p, TS_AST_INT, t->range);
    if (!n)
      return NULL;
    n->i = INT64_MIN;
    return ts_p_done(p, n);
  }
  ts_p_next(p);
  if (!ts_p_enter(p))
    return NULL;
  ts_ast *e = ts_p_unary(p);
  p->depth--;
  if (!e)
    return NULL;
  ts_ast *n = ts_p_node(p, TS_AST_UNOP, t->range);
  if (!n)
    return NULL;
  n->op = t->str;
  n->a = e;
  return ts_p_done(p, n);
}

/* Binary operators by precedence, loosest first: | ^ & shifts arith term. */
static const char *const ts_p_binops[6][5] = {
    {"|"}, {"^"}, {"&"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "//", "%", "@"},
};

/* bin(level) = bin(level+1) (OP bin(level+1))*   (level 5: operands are unary) */
static ts_ast *ts_p_bin(ts_p *p, int level) {
  ts_ast *a = level == 5 ? ts_p_unary(p) : ts_p_bin(p, level + 1);
  while (a) {
    const ts_tok *t = ts_p_cur(p);
    const char *op = NULL;
    for (int k = 0; k < 5 && ts_p_binops[level][k]; k++)
      if (ts_p_tok_op(t, ts_p_binops[level][k]))
        op = ts_p_binops[level][k];
    if (!op)
      break;
    ts_p_next(p);
    ts_ast *b = level == 5 ? ts_p_unary(p) : ts_p_bin(p, level + 1);
    a = ts_p_binop(p, op, a, b, TS_AST_BINOP);
  }
  return a;
}

/* The comparison operator at the current token and how many tokens it
 * takes ("is not", "not in": two), or NULL. */
static const char *ts_p_cmp_op(const ts_p *p, uint32_t *ntok) {
  const ts_tok *t = ts_p_cur(p);
  static const char *const ops[] = {"<", ">", "==", ">=", "<=", "!="};
  *ntok = 1;
  if (t->kind == TS_TOK_OP) {
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
      if (strcmp(t->str, ops[k]) == 0)
        return ops[k];
    return NULL;
  }
  if (ts_p_tok_kw(t, "in"))
    return "in";
  if (ts_p_tok_kw(t, "is")) {
    if (ts_p_tok_kw(ts_p_peek(p, 1), "not")) {
      *ntok = 2;
      return "is not";
    }
    return "is";
  }
  if (ts_p_tok_kw(t, "not") && ts_p_tok_kw(ts_p_peek(p, 1), "in")) {
    *ntok = 2;
    return "not in";
  }
  return NULL;
}

/* comparison = bitor (cmp_op bitor)*
 * "a < b < c" becomes (a < b) and (b < c), the two sharing b. */
static ts_ast *ts_p_comparison(ts_p *p) {
  ts_ast *left = ts_p_bin(p, 0);
  ts_ast *result = left;
  bool chained = false;
  const char *op;
  uint32_t ntok;
  while (left && (op = ts_p_cmp_op(p, &ntok))) {
    for (uint32_t k = 0; k < ntok; k++)
      ts_p_next(p);
    ts_ast *right = ts_p_bin(p, 0);
    ts_ast *cmp = ts_p_binop(p, op, left, right, TS_AST_COMPARE);
    result = chained ? ts_p_binop(p, "and", result, cmp, TS_AST_BOOLOP) : cmp;
    chained = true;
    left = result ? right : NULL;
  }
  return left ? result : NULL;
}

/* not_test = "not" not_test | comparison */
static ts_ast *ts_p_not(ts_p *p) {
  if (!ts_p_is_kw(p, "not"))
    return ts_p_comparison(p);
  const ts_tok *t = ts_p_next(p);
  if (!ts_p_enter(p))
    return NULL;
  ts_ast *e = ts_p_not(p);
  p->depth--;
  if (!e)
    return NULL;
  ts_ast *n = ts_p_node(p, TS_AST_UNOP, t->range);
  if (!n)
    return NULL;
  n->op = "not";
  n->a = e;
  return ts_p_done(p, n);
}

/* and_test = not_test ("and" not_test)* */
static ts_ast *ts_p_and(ts_p *p) {
  ts_ast *a = ts_p_not(p);
  while (a && ts_p_accept_kw(p, "and"))
    a = ts_p_binop(p, "and", a, ts_p_not(p), TS_AST_BOOLOP);
  return a;
}

/* or_test = and_test ("or" and_test)* */
static ts_ast *ts_p_or(ts_p *p) {
  ts_ast *a = ts_p_and(p);
  while (a && ts_p_accept_kw(p, "or"))
    a = ts_p_binop(p, "or", a, ts_p_and(p), TS_AST_BOOLOP);
  return a;
}

/* test = or_test ["if" or_test "else" test] */
static ts_ast *ts_p_test(ts_p *p) {
  if (!ts_p_enter(p))
    return NULL;
  ts_ast *a = ts_p_or(p), *r = a;
  if (a && ts_p_is_kw(p, "if")) {
    ts_p_next(p);
    ts_ast *c = ts_p_or(p), *b = NULL;
    if (c && !ts_p_accept_kw(p, "else"))
      ts_p_expected(p, "'else' in a conditional expression");
    else if (c)
      b = ts_p_test(p);
    r = b ? ts_p_node(p, TS_AST_IFEXP, a->range) : NULL;
    if (r) {
      r->a = a;
      r->b = b;
      r->c = c;
      r = ts_p_done(p, r);
    }
  }
  p->depth--;
  return r;
}

/* ------------------------------------------------------------ statements */

static const char *ts_p_target_desc(const ts_ast *e) {
  switch (e->kind) {
  case TS_AST_CALL: return "a function call";
  case TS_AST_INT:
  case TS_AST_FLOAT:
  case TS_AST_STR: return "a literal";
  case TS_AST_NONE: return "None";
  case TS_AST_TRUE: return "True";
  case TS_AST_FALSE: return "False";
  case TS_AST_COMPARE: return "a comparison";
  case TS_AST_IFEXP: return "a conditional expression";
  default: return "an expression";
  }
}

/* Whether `e` may be assigned to (or deleted, `verb`): names, attributes,
 * subscripts, and tuples/lists of targets. Heights are bounded, so the
 * recursion is too. */
static bool ts_p_check_target(ts_p *p, const ts_ast *e, const char *verb) {
  switch (e->kind) {
  case TS_AST_NAME:
  case TS_AST_ATTR:
  case TS_AST_SUBSCRIPT: return true;
  case TS_AST_STARRED: return ts_p_check_target(p, e->a, verb);
  case TS_AST_TUPLE:
  case TS_AST_LIST:
    for (uint32_t k = 0; k < e->list.n; k++)
      if (!ts_p_check_target(p, e->list.v[k], verb))
        return false;
    return true;
  default: ts_p_error(p, e->range, "cannot %s %s", verb, ts_p_target_desc(e)); return false;
  }
}

static bool ts_p_single_target(const ts_ast *e) {
  return e->kind == TS_AST_NAME || e->kind == TS_AST_ATTR || e->kind == TS_AST_SUBSCRIPT;
}

static const char *const ts_p_augops[] = {"+=", "-=",  "*=", "/=", "//=", "%=", "**=",
                                          "@=", "&=", "|=", "^=", "<<=", ">>="};

/* expr_stmt = testlist [":" test] ["=" testlist]    annotated
 *           | testlist AUGOP testlist
 *           | testlist ("=" testlist)*                            */
static ts_ast *ts_p_expr_stmt(ts_p *p) {
  ts_srange start = ts_p_cur(p)->range;
  ts_ast *lhs = ts_p_testlist(p, false);
  if (!lhs)
    return NULL;
  const ts_tok *t = ts_p_cur(p);
  if (ts_p_tok_op(t, ":")) {
    if (!ts_p_single_target(lhs)) {
      if (lhs->kind == TS_AST_TUPLE)
        return ts_p_error(p, lhs->range, "only a single target (not a tuple) can be annotated");
      return ts_p_error(p, lhs->range, "cannot annotate %s", ts_p_target_desc(lhs));
    }
    ts_p_next(p);
    ts_ast *ann = ts_p_test(p), *val = NULL;
    if (!ann)
      return NULL;
    if (ts_p_accept_op(p, "=") && !(val = ts_p_testlist(p, false)))
      return NULL;
    ts_ast *n = ts_p_node(p, TS_AST_ASSIGN, start);
    ts_p_vec targets = {0};
    if (!n || !ts_p_push(p, &targets, lhs))
      return NULL;
    n->list = ts_p_list(&targets);
    n->a = val;
    n->b = ann;
    return ts_p_done(p, n);
  }
  if (t->kind == TS_TOK_OP) {
    for (size_t k = 0; k < sizeof ts_p_augops / sizeof ts_p_augops[0]; k++) {
      if (strcmp(t->str, ts_p_augops[k]) != 0)
        continue;
      if (!ts_p_single_target(lhs))
        return ts_p_error(p, lhs->range, "cannot use %s as the target of '%s'", ts_p_target_desc(lhs), t->str);
      ts_p_next(p);
      ts_ast *rhs = ts_p_testlist(p, false);
      if (!rhs)
        return NULL;
      ts_ast *n = ts_p_node(p, TS_AST_AUGASSIGN, start);
      if (!n)
        return NULL;
      n->op = ts_p_augops[k];
      n->a = lhs;
      n->b = rhs;
      return ts_p_done(p, n);
    }
  }
  if (!ts_p_tok_op(t, "=")) {
    ts_ast *n = ts_p_node(p, TS_AST_EXPR_STMT, start);
    if (!n)
      return NULL;
    n->a = lhs;
    return ts_p_done(p, n);
  }
  ts_p_vec targets = {0};
  ts_ast *val = lhs;
  while (ts_p_accept_op(p, "=")) {
    if (!ts_p_check_target(p, val, "assign to") || !ts_p_push(p, &targets, val))
      return NULL;
    if (!(val = ts_p_testlist(p, false)))
      return NULL;
  }
  ts_ast *n = ts_p_node(p, TS_AST_ASSIGN, start);
  if (!n)
    return NULL;
  n->list = ts_p_list(&targets);
  n->a = val;
  return ts_p_done(p, n);
}

/* The rest of an "import"/"from" statement, kept as text. */
static ts_ast *ts_p_import(ts_p *p) {
  const ts_tok *first = ts_p_next(p);
  while (!ts_p_is(p, TS_TOK_NEWLINE) && !ts_p_is(p, TS_TOK_EOF) && !ts_p_is_op(p, ";"))
    ts_p_next(p);
  ts_ast *n = ts_p_node(p, TS_AST_IMPORT, first->range);
  if (!n)
    return NULL;
  uint32_t end = ts_p_prev_end(p);
  n->len = end - first->range.start;
  n->str = ts_arena_strndup(p->arena, p->src->text + first->range.start, n->len);
  if (!n->str)
    return ts_p_error(p, first->range, "out of memory");
  return ts_p_done(p, n);
}

/* small_stmt = pass | break | continue | return [testlist] | raise [test]
 *            | assert test ["," test] | del targets | global NAME ("," NAME)*
 *            | import ... | expr_stmt */
static ts_ast *ts_p_small_stmt(ts_p *p) {
  const ts_tok *t = ts_p_cur(p);
  ts_ast_kind k;
  if (t->kind != TS_TOK_NAME)
    return ts_p_expr_stmt(p);
  const char *s = t->str;
  if (strcmp(s, "pass") == 0 || strcmp(s, "break") == 0 || strcmp(s, "continue") == 0) {
    k = s[0] == 'p' ? TS_AST_PASS : s[0] == 'b' ? TS_AST_BREAK : TS_AST_CONTINUE;
    ts_p_next(p);
    return ts_p_done(p, ts_p_node(p, k, t->range));
  }
  if (strcmp(s, "return") == 0 || strcmp(s, "raise") == 0 || strcmp(s, "assert") == 0) {
    k = s[0] == 'r' && s[2] == 't' ? TS_AST_RETURN : s[0] == 'r' ? TS_AST_RAISE : TS_AST_ASSERT;
    ts_p_next(p);
    ts_ast *n = ts_p_node(p, k, t->range);
    if (!n)
      return NULL;
    if (k == TS_AST_ASSERT || ts_p_starts_expr(ts_p_cur(p))) {
      n->a = k == TS_AST_RETURN ? ts_p_testlist(p, false) : ts_p_test(p);
      if (!n->a)
        return NULL;
    }
    if (k == TS_AST_RAISE && ts_p_is_kw(p, "from"))
      return ts_p_error(p, ts_p_cur(p)->range, "'raise ... from' is not supported");
    if (k == TS_AST_ASSERT && ts_p_accept_op(p, ",") && !(n->b = ts_p_test(p)))
      return NULL;
    return ts_p_done(p, n);
  }
  if (strcmp(s, "del") == 0 || strcmp(s, "global") == 0) {
    bool del = s[0] == 'd';
    ts_p_next(p);
    ts_p_vec v = {0};
    do {
      if (del && !ts_p_starts_expr(ts_p_cur(p)) && v.n)
        break; /* trailing comma */
      ts_ast *e = del ? ts_p_target(p) : ts_p_ident(p, "a name");
      if (!e || (del && !ts_p_check_target(p, e, "delete")) || !ts_p_push(p, &v, e))
        return NULL;
    } while (ts_p_accept_op(p, ","));
    ts_ast *n = ts_p_node(p, del ? TS_AST_DEL : TS_AST_GLOBAL, t->range);
    if (!n)
      return NULL;
    n->list = ts_p_list(&v);
    return ts_p_done(p, n);
  }
  if (strcmp(s, "import") == 0 || strcmp(s, "from") == 0)
    return ts_p_import(p);
  if (strcmp(s, "nonlocal") == 0)
    return ts_p_error(p, t->range, "'nonlocal' is not supported");
  return ts_p_expr_stmt(p);
}

/* simple_stmts = small_stmt (";" small_stmt)* [";"] NEWLINE */
static bool ts_p_simple_stmts(ts_p *p, ts_p_vec *out) {
  for (;;) {
    if (!ts_p_push(p, out, ts_p_small_stmt(p)))
      return false;
    if (!ts_p_accept_op(p, ";"))
      break;
    if (ts_p_is(p, TS_TOK_NEWLINE) || ts_p_is(p, TS_TOK_EOF))
      break;
  }
  if (ts_p_is(p, TS_TOK_EOF))
    return true;
  if (!ts_p_is(p, TS_TOK_NEWLINE)) {
    ts_p_expected(p, "end of line after the statement");
    return false;
  }
  ts_p_next(p);
  return true;
}

/* block = simple_stmts | NEWLINE INDENT stmt+ DEDENT   (after the ":") */
static bool ts_p_block(ts_p *p, ts_ast_list *body, const ts_tok *header) {
  ts_p_vec v = {0};
  if (!ts_p_is(p, TS_TOK_NEWLINE)) {
    if (!ts_p_simple_stmts(p, &v))
      return false;
    *body = ts_p_list(&v);
    return true;
  }
  ts_p_next(p);
  if (!ts_p_is(p, TS_TOK_INDENT)) {
    ts_p_error(p, ts_p_cur(p)->range, "expected an indented block after '%s' at %d:%d", header->str,
               header->range.line, header->range.col);
    return false;
  }
  ts_p_next(p);
  if (++p->bdepth > TS_P_MAX_DEPTH) {
    ts_p_error(p, ts_p_cur(p)->range, "statements nested too deeply (limit %d)", TS_P_MAX_DEPTH);
    return false;
  }
  while (!ts_p_is(p, TS_TOK_DEDENT) && !ts_p_is(p, TS_TOK_EOF)) {
    if (!ts_p_stmt(p, &v))
      return false;
  }
  ts_p_next(p);
  p->bdepth--;
  *body = ts_p_list(&v);
  return true;
}

/* ":" block */
static bool ts_p_colon_block(ts_p *p, ts_ast_list *body, const ts_tok *header) {
  return ts_p_expect_op(p, ":") && ts_p_block(p, body, header);
}

static bool ts_p_no_loop_else(ts_p *p) {
  if (ts_p_is_kw(p, "else")) {
    ts_p_error(p, ts_p_cur(p)->range, "'else' after a loop is not supported");
    return false;
  }
  return true;
}

/* if = "if" test ":" block ("elif" test ":" block)* ["else" ":" block]
 * Read in a loop; each "elif" is an IF alone in the orelse of the one before. */
static ts_ast *ts_p_if(ts_p *p) {
  ts_p_vec chain = {0};
  ts_ast *last = NULL;
  do {
    const ts_tok *kw = ts_p_next(p);
    ts_ast *n = ts_p_node(p, TS_AST_IF, kw->range);
    if (!n || !(n->c = ts_p_test(p)) || !ts_p_colon_block(p, &n->body, kw))
      return NULL;
    if (last) {
      ts_ast **one = ts_arena_alloc(p->arena, sizeof *one);
      if (!one)
        return ts_p_error(p, kw->range, "out of memory");
      one[0] = n;
      last->orelse.v = one;
      last->orelse.n = 1;
    }
    if (!ts_p_push(p, &chain, n))
      return NULL;
    last = n;
  } while (ts_p_is_kw(p, "elif"));
  if (ts_p_is_kw(p, "else")) {
    const ts_tok *kw = ts_p_next(p);
    if (!ts_p_colon_block(p, &last->orelse, kw))
      return NULL;
  }
  /* innermost first, for the heights */
  for (uint32_t k = chain.n; k > 0; k--)
    if (!ts_p_done(p, chain.v[k - 1]))
      return NULL;
  return chain.v[0];
}

/* while = "while" test ":" block */
static ts_ast *ts_p_while(ts_p *p) {
  const ts_tok *kw = ts_p_next(p);
  ts_ast *n = ts_p_node(p, TS_AST_WHILE, kw->range);
  if (!n || !(n->c = ts_p_test(p)) || !ts_p_colon_block(p, &n->body, kw) || !ts_p_no_loop_else(p))
    return NULL;
  return ts_p_done(p, n);
}

/* for = "for" targets "in" testlist ":" block */
static ts_ast *ts_p_for(ts_p *p) {
  const ts_tok *kw = ts_p_next(p);
  ts_ast *n = ts_p_node(p, TS_AST_FOR, kw->range);
  if (!n || !(n->a = ts_p_testlist(p, true)) || !ts_p_check_target(p, n->a, "assign to"))
    return NULL;
  if (!ts_p_accept_kw(p, "in"))
    return ts_p_expected(p, "'in' after the loop variable");
  if (!(n->b = ts_p_testlist(p, false)) || !ts_p_colon_block(p, &n->body, kw) || !ts_p_no_loop_else(p))
    return NULL;
  return ts_p_done(p, n);
}

/* with = "with" with_item ("," with_item)* ":" block
 * with_item = test ["as" target] */
static ts_ast *ts_p_with(ts_p *p) {
  const ts_tok *kw = ts_p_next(p);
  ts_ast *n = ts_p_node(p, TS_AST_WITH, kw->range);
  if (!n)
    return NULL;
  ts_p_vec items = {0};
  do {
    ts_srange start = ts_p_cur(p)->range;
    ts_ast *e = ts_p_test(p), *target = NULL;
    if (!e)
      return NULL;
    if (ts_p_accept_kw(p, "as") && (!(target = ts_p_target(p)) || !ts_p_check_target(p, target, "assign to")))
      return NULL;
    ts_ast *item = ts_p_node(p, TS_AST_WITH_ITEM, start);
    if (!item)
      return NULL;
    item->a = e;
    item->b = target;
    if (!ts_p_push(p, &items, ts_p_done(p, item)))
      return NULL;
  } while (ts_p_accept_op(p, ","));
  n->list = ts_p_list(&items);
  if (!ts_p_colon_block(p, &n->body, kw))
    return NULL;
  return ts_p_done(p, n);
}

/* params = [param ("," param)* [","]]
 * param = NAME [":" test] ["=" test] | "*" [NAME [":" test]] */
static bool ts_p_params(ts_p *p, ts_p_vec *out) {
  bool kwonly = false, seen_default = false;
  const ts_tok *bare_star = NULL, *star = NULL;
  while (!ts_p_is_op(p, ")")) {
    const ts_tok *t = ts_p_cur(p);
    unsigned flags = kwonly ? TS_AST_F_KWONLY : 0;
    if (ts_p_tok_op(t, "*")) {
      if (star) {
        ts_p_error(p, t->range, "only one '*' is allowed among the parameters");
        return false;
      }
      star = ts_p_next(p);
      kwonly = true;
      if (ts_p_is_op(p, ",") || ts_p_is_op(p, ")")) {
        bare_star = star;
        if (!ts_p_accept_op(p, ","))
          break;
        continue;
      }
      flags = TS_AST_F_VARARGS;
    } else if (ts_p_tok_op(t, "**")) {
      ts_p_error(p, t->range, "'**' parameters are not supported");
      return false;
    } else if (ts_p_tok_op(t, "/")) {
      ts_p_error(p, t->range, "positional-only parameters ('/') are not supported");
      return false;
    }
    const ts_tok *name = ts_p_cur(p);
    ts_ast *id = ts_p_ident(p, "a parameter name");
    if (!id)
      return false;
    bare_star = NULL;
    ts_ast *n = ts_p_node(p, TS_AST_PARAM, t->range);
    if (!n)
      return false;
    n->str = name->str;
    n->len = name->len;
    n->flags = flags;
    if (ts_p_accept_op(p, ":") && !(n->a = ts_p_test(p)))
      return false;
    if (ts_p_is_op(p, "=")) {
      if (flags & TS_AST_F_VARARGS) {
        ts_p_error(p, ts_p_cur(p)->range, "a '*%s' parameter cannot have a default", name->str);
        return false;
      }
      ts_p_next(p);
      if (!(n->b = ts_p_test(p)))
        return false;
      if (!kwonly)
        seen_default = true;
    } else if (seen_default && !kwonly) {
      ts_p_error(p, name->range, "non-default parameter '%s' follows a parameter with a default", name->str);
      return false;
    }
    if (!ts_p_push(p, out, ts_p_done(p, n)))
      return false;
    if (!ts_p_accept_op(p, ","))
      break;
  }
  if (bare_star) {
    ts_p_error(p, bare_star->range, "named parameters must follow a bare '*'");
    return false;
  }
  return true;
}

/* def = decorators "def" NAME "(" params ")" ["->" test] ":" block */
static ts_ast *ts_p_def(ts_p *p, ts_ast_list decorators) {
  const ts_tok *kw = ts_p_next(p);
  ts_ast *n = ts_p_node(p, TS_AST_DEF, kw->range);
  const ts_tok *name = ts_p_cur(p);
  if (!n || !ts_p_ident(p, "a function name after 'def'"))
    return NULL;
  n->str = name->str;
  n->len = name->len;
  n->decorators = decorators;
  const ts_tok *open = ts_p_cur(p);
  if (!ts_p_expect_op(p, "("))
    return NULL;
  ts_p_vec params = {0};
  if (!ts_p_params(p, &params) || !ts_p_expect_close(p, ")", open))
    return NULL;
  n->list = ts_p_list(&params);
  if (ts_p_accept_op(p, "->") && !(n->a = ts_p_test(p)))
    return NULL;
  if (!ts_p_colon_block(p, &n->body, kw))
    return NULL;
  return ts_p_done(p, n);
}

/* class = decorators "class" NAME ["(" [test ("," test)* [","]] ")"] ":" block */
static ts_ast *ts_p_class(ts_p *p, ts_ast_list decorators) {
  const ts_tok *kw = ts_p_next(p);
  ts_ast *n = ts_p_node(p, TS_AST_CLASS, kw->range);
  const ts_tok *name = ts_p_cur(p);
  if (!n || !ts_p_ident(p, "a class name after 'class'"))
    return NULL;
  n->str = name->str;
  n->len = name->len;
  n->decorators = decorators;
  if (ts_p_is_op(p, "(")) {
    const ts_tok *open = ts_p_next(p);
    ts_p_vec bases = {0};
    while (!ts_p_is_op(p, ")")) {
      if (ts_p_cur(p)->kind == TS_TOK_NAME && ts_p_tok_op(ts_p_peek(p, 1), "="))
        return ts_p_error(p, ts_p_cur(p)->range, "class keyword arguments are not supported");
      if (!ts_p_push(p, &bases, ts_p_test(p)))
        return NULL;
      if (!ts_p_accept_op(p, ","))
        break;
    }
    if (!ts_p_expect_close(p, ")", open))
      return NULL;
    n->list = ts_p_list(&bases);
  }
  if (!ts_p_colon_block(p, &n->body, kw))
    return NULL;
  return ts_p_done(p, n);
}

/* decorated = ("@" test NEWLINE)+ (def | class) */
static ts_ast *ts_p_decorated(ts_p *p) {
  ts_p_vec decos = {0};
  while (ts_p_accept_op(p, "@")) {
    if (!ts_p_push(p, &decos, ts_p_test(p)))
      return NULL;
    if (!ts_p_is(p, TS_TOK_NEWLINE))
      return ts_p_expected(p, "end of line after the decorator");
    ts_p_next(p);
  }
  if (ts_p_is_kw(p, "def"))
    return ts_p_def(p, ts_p_list(&decos));
  if (ts_p_is_kw(p, "class"))
    return ts_p_class(p, ts_p_list(&decos));
  return ts_p_expected(p, "'def' or 'class' after a decorator");
}

/* stmt = if | while | for | with | def | class | decorated | simple_stmts */
static bool ts_p_stmt(ts_p *p, ts_p_vec *out) {
  const ts_tok *t = ts_p_cur(p);
  ts_ast_list none = {NULL, 0};
  switch (t->kind) {
  case TS_TOK_INDENT: ts_p_error(p, t->range, "unexpected indent"); return false;
  case TS_TOK_DEDENT: ts_p_error(p, t->range, "unexpected unindent"); return false;
  case TS_TOK_NEWLINE: ts_p_expected(p, "a statement"); return false;
  case TS_TOK_OP:
    if (ts_p_tok_op(t, "@"))
      return ts_p_push(p, out, ts_p_decorated(p));
    return ts_p_simple_stmts(p, out);
  case TS_TOK_NAME: break;
  default: return ts_p_simple_stmts(p, out);
  }
  const char *s = t->str;
  if (strcmp(s, "if") == 0)
    return ts_p_push(p, out, ts_p_if(p));
  if (strcmp(s, "while") == 0)
    return ts_p_push(p, out, ts_p_while(p));
  if (strcmp(s, "for") == 0)
    return ts_p_push(p, out, ts_p_for(p));
  if (strcmp(s, "with") == 0)
    return ts_p_push(p, out, ts_p_with(p));
  if (strcmp(s, "def") == 0)
    return ts_p_push(p, out, ts_p_def(p, none));
  if (strcmp(s, "class") == 0)
    return ts_p_push(p, out, ts_p_class(p, none));
  if (strcmp(s, "elif") == 0 || strcmp(s, "else") == 0) {
    ts_p_error(p, t->range, "'%s' without a matching 'if'", s);
    return false;
  }
  if (strcmp(s, "try") == 0 || strcmp(s, "except") == 0 || strcmp(s, "finally") == 0 || strcmp(s, "async") == 0) {
    ts_p_error(p, t->range, "'%s' statements are not supported", s);
    return false;
  }
  return ts_p_simple_stmts(p, out);
}

/* ------------------------------------------------------------ entry points */

static bool ts_p_init(ts_p *p, ts_arena *arena, const ts_fe_source *src, ts_diag *d) {
  memset(p, 0, sizeof *p);
  p->arena = arena;
  p->src = src;
  p->d = d;
  p->t = ts_fe_lex(arena, src, &p->n, d);
  return p->t != NULL && p->n > 0;
}

/* file = stmt* EOF */
ts_ast *ts_fe_parse(ts_arena *arena, const ts_fe_source *src, ts_diag *d) {
  ts_p p;
  if (!ts_p_init(&p, arena, src, d))
    return NULL;
  ts_srange r = {src, 0, 0, 1, 1};
  ts_ast *m = ts_p_node(&p, TS_AST_MODULE, r);
  if (!m)
    return NULL;
  ts_p_vec body = {0};
  while (!ts_p_is(&p, TS_TOK_EOF)) {
    if (!ts_p_stmt(&p, &body))
      return NULL;
  }
  m->body = ts_p_list(&body);
  if (!ts_p_done(&p, m))
    return NULL;
  m->range.start = 0;
  m->range.end = (uint32_t)src->len;
  return p.failed ? NULL : m;
}

/* expr = test, alone on its line */
ts_ast *ts_fe_parse_expr(ts_arena *arena, const ts_fe_source *src, ts_diag *d) {
  ts_p p;
  if (!ts_p_init(&p, arena, src, d))
    return NULL;
  while (ts_p_is(&p, TS_TOK_INDENT))
    ts_p_next(&p);
  ts_ast *e = ts_p_test(&p);
  if (!e)
    return NULL;
  while (ts_p_is(&p, TS_TOK_NEWLINE) || ts_p_is(&p, TS_TOK_DEDENT))
    ts_p_next(&p);
  if (!ts_p_is(&p, TS_TOK_EOF))
    return ts_p_expected(&p, "end of the expression");
  return p.failed ? NULL : e;
}
