/* tests/unit/test_parser.c: the TorchScript source lexer and parser
 * (frontend/lexer.c, frontend/parser.c): every construct PyTorch's printer
 * writes, source ranges, every error with its position, indentation rules,
 * CRLF, nesting limits, real printed files (tests/fixtures/source/) and a
 * round of random mutations of one that must never crash. */
#include "ast.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

/* A compact one-line form of a tree, for the checks:
 *   leaves: NAME as itself, INT, FLOAT (with ".0" when integral), STR quoted,
 *   None/True/False;
 *   others: (KIND op str flags a b c [list] {list2} <kw> @[decorators]
 *            body[...] else[...]), a missing a/b/c before a present one as _ */
static void sx(ts_buf *b, const ts_ast *n);

static void sx_list(ts_buf *b, const char *open, const ts_ast_list *l, const char *close) {
  if (!l->n)
    return;
  ts_buf_printf(b, " %s", open);
  for (uint32_t i = 0; i < l->n; i++) {
    if (i)
      ts_buf_putc(b, ' ');
    sx(b, l->v[i]);
  }
  ts_buf_puts(b, close);
}

static void sx(ts_buf *b, const ts_ast *n) {
  if (!n) {
    ts_buf_putc(b, '_');
    return;
  }
  switch (n->kind) {
  case TS_AST_NAME: ts_buf_puts(b, n->str); return;
  case TS_AST_INT: ts_buf_printf(b, "%lld", (long long)n->i); return;
  case TS_AST_FLOAT: {
    char tmp[64];
    for (int prec = 15; prec <= 17; prec++) {
      snprintf(tmp, sizeof tmp, "%.*g", prec, n->f);
      if (strtod(tmp, NULL) == n->f)
        break;
    }
    ts_buf_puts(b, tmp);
    if (!strpbrk(tmp, ".eni"))
      ts_buf_puts(b, ".0");
    return;
  }
  case TS_AST_STR: ts_buf_put_quoted(b, n->str, n->len); return;
  case TS_AST_NONE: ts_buf_puts(b, "None"); return;
  case TS_AST_TRUE: ts_buf_puts(b, "True"); return;
  case TS_AST_FALSE: ts_buf_puts(b, "False"); return;
  default: break;
  }
  ts_buf_printf(b, "(%s", ts_ast_kind_name(n->kind));
  if (n->op)
    ts_buf_printf(b, " %s", n->op);
  if (n->str)
    ts_buf_printf(b, " %s", n->str);
  if (n->flags & TS_AST_F_KWONLY)
    ts_buf_puts(b, " kwonly");
  if (n->flags & TS_AST_F_VARARGS)
    ts_buf_puts(b, " varargs");
  const ts_ast *abc[3] = {n->a, n->b, n->c};
  int last = -1;
  for (int i = 0; i < 3; i++)
    if (abc[i])
      last = i;
  for (int i = 0; i <= last; i++) {
    ts_buf_putc(b, ' ');
    sx(b, abc[i]);
  }
  sx_list(b, "[", &n->list, "]");
  sx_list(b, "{", &n->list2, "}");
  sx_list(b, "<", &n->kw, ">");
  sx_list(b, "@[", &n->decorators, "]");
  sx_list(b, "body[", &n->body, "]");
  sx_list(b, "else[", &n->orelse, "]");
  ts_buf_putc(b, ')');
}

static ts_fe_source *mksrc(ts_arena *a, const char *file, const char *text, size_t len) {
  ts_fe_source *s = ts_arena_alloc(a, sizeof *s);
  s->file = file;
  s->text = text;
  s->len = len;
  return s;
}

/* One expression through ts_fe_parse_expr, compared in the compact form
 * (or "ERROR <first diagnostic line>"). */
#define CHECK_EXPR(src, want) check_expr(__LINE__, (src), (want))
static void check_expr(int line, const char *src, const char *want) {
  ts_arena a;
  ts_arena_init(&a, 0);
  ts_diag d = {0};
  ts_ast *e = ts_fe_parse_expr(&a, mksrc(&a, "e.py", src, strlen(src)), &d);
  ts_buf b = {0};
  if (e) {
    sx(&b, e);
  } else {
    const char *t = d.text.data ? d.text.data : "";
    const char *nl = strchr(t, '\n');
    ts_buf_printf(&b, "ERROR %.*s", (int)(nl ? nl - t : (long)strlen(t)), t);
  }
  if (!TS_CHECK_STREQ(b.data, want))
    fprintf(stderr, "  (test line %d, source: %s)\n", line, src);
  ts_buf_free(&b);
  ts_diag_free(&d);
  ts_arena_release(&a);
}

/* A whole file through ts_fe_parse; its statements in the compact form,
 * one per line. */
#define CHECK_STMTS(src, want) check_stmts(__LINE__, (src), (want))
static void check_stmts(int line, const char *src, const char *want) {
  ts_arena a;
  ts_arena_init(&a, 0);
  ts_diag d = {0};
  ts_ast *m = ts_fe_parse(&a, mksrc(&a, "t.py", src, strlen(src)), &d);
  ts_buf b = {0};
  if (m) {
    TS_CHECK(m->kind == TS_AST_MODULE);
    for (uint32_t i = 0; i < m->body.n; i++) {
      if (i)
        ts_buf_putc(&b, '\n');
      sx(&b, m->body.v[i]);
    }
  } else {
    ts_buf_printf(&b, "ERROR %s", d.text.data ? d.text.data : "");
  }
  if (!TS_CHECK_STREQ(b.data ? b.data : "", want))
    fprintf(stderr, "  (test line %d)\n", line);
  ts_buf_free(&b);
  ts_diag_free(&d);
  ts_arena_release(&a);
}

/* A file that must fail with exactly one diagnostic whose first line is
 * `want` ("t.py:L:C: error: message"). */
#define CHECK_ERR(src, want) check_err(__LINE__, (src), strlen(src), (want), false)
#define CHECK_ERRN(src, n, want) check_err(__LINE__, (src), (n), (want), false)
#define CHECK_EXPR_ERR(src, want) check_err(__LINE__, (src), strlen(src), (want), true)
static void check_err(int line, const char *src, size_t len, const char *want, bool expr) {
  ts_arena a;
  ts_arena_init(&a, 0);
  ts_diag d = {0};
  ts_fe_source *s = mksrc(&a, "t.py", src, len);
  ts_ast *r = expr ? ts_fe_parse_expr(&a, s, &d) : ts_fe_parse(&a, s, &d);
  bool ok = TS_CHECK(r == NULL);
  ok &= TS_CHECK_INTEQ(d.errors, 1);
  const char *t = d.text.data ? d.text.data : "";
  const char *nl = strchr(t, '\n');
  char first[512];
  snprintf(first, sizeof first, "%.*s", (int)(nl ? nl - t : (long)strlen(t)), t);
  ok &= TS_CHECK_STREQ(first, want);
  if (!ok)
    fprintf(stderr, "  (test line %d)\n", line);
  ts_diag_free(&d);
  ts_arena_release(&a);
}

static char *repeat(const char *prefix, const char *unit, int n, const char *suffix) {
  size_t lp = strlen(prefix), lu = strlen(unit), ls = strlen(suffix);
  char *s = malloc(lp + lu * (size_t)n + ls + 1);
  memcpy(s, prefix, lp);
  for (int i = 0; i < n; i++)
    memcpy(s + lp + lu * (size_t)i, unit, lu);
  memcpy(s + lp + lu * (size_t)n, suffix, ls + 1);
  return s;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  size_t r = fread(buf, 1, (size_t)n, f);
  buf[r] = 0;
  fclose(f);
  *len = r;
  return buf;
}

/* ------------------------------------------------------------ lexer */

static void test_tokens(void) {
  ts_arena a;
  ts_arena_init(&a, 0);
  const char *src = "if a:\n  x = (1,\n 2)  # c\n\n  y[0] **= -3\n";
  uint32_t n = 0;
  ts_tok *t = ts_fe_lex(&a, mksrc(&a, "t.py", src, strlen(src)), &n, NULL);
  static const ts_tok_kind want[] = {
      TS_TOK_NAME, TS_TOK_NAME, TS_TOK_OP, TS_TOK_NEWLINE, TS_TOK_INDENT, TS_TOK_NAME,    TS_TOK_OP,
      TS_TOK_OP,   TS_TOK_INT,  TS_TOK_OP, TS_TOK_INT,     TS_TOK_OP,     TS_TOK_NEWLINE, TS_TOK_NAME,
      TS_TOK_OP,   TS_TOK_INT,  TS_TOK_OP, TS_TOK_OP,      TS_TOK_OP,     TS_TOK_INT,     TS_TOK_NEWLINE,
      TS_TOK_DEDENT, TS_TOK_EOF};
  if (TS_CHECK(t != NULL) && TS_CHECK_INTEQ(n, sizeof want / sizeof want[0])) {
    for (uint32_t i = 0; i < n; i++)
      TS_CHECK_INTEQ(t[i].kind, want[i]);
    TS_CHECK_STREQ(t[0].str, "if");
    TS_CHECK_INTEQ(t[3].range.start, 5); /* NEWLINE at the '\n' */
    TS_CHECK_INTEQ(t[3].range.line, 1);
    TS_CHECK_INTEQ(t[3].range.col, 6);
    TS_CHECK_INTEQ(t[4].range.line, 2); /* INDENT covers the leading blanks */
    TS_CHECK_INTEQ(t[4].range.col, 1);
    TS_CHECK_INTEQ(t[4].range.end - t[4].range.start, 2);
    TS_CHECK_INTEQ(t[10].range.line, 3); /* "2" inside the parentheses */
    TS_CHECK_INTEQ(t[10].range.col, 2);
    TS_CHECK_INTEQ(t[10].i, 2);
    TS_CHECK_STREQ(t[17].str, "**=");
    TS_CHECK_INTEQ(t[13].range.line, 5); /* the blank line is skipped */
    TS_CHECK_INTEQ(t[13].range.col, 3);
  }
  ts_arena_release(&a);

  /* string values: every escape, adjacent bytes kept, NUL bytes counted */
  ts_arena_init(&a, 0);
  const char *s2 = "'\\0\\x00a' \"\\n\\t\\\\\\'\\\"\\a\\b\\f\\v\\r\" "
                   "'\\101\\7\\u00e9\\U0001F600' 'x\\\ny' \"\xff\x01\"";
  t = ts_fe_lex(&a, mksrc(&a, "t.py", s2, strlen(s2)), &n, NULL);
  if (TS_CHECK(t != NULL) && TS_CHECK_INTEQ(n, 7)) {
    TS_CHECK_INTEQ(t[0].len, 3);
    TS_CHECK(memcmp(t[0].str, "\0\0a", 3) == 0);
    TS_CHECK_INTEQ(t[1].len, 10);
    TS_CHECK(memcmp(t[1].str, "\n\t\\'\"\a\b\f\v\r", 10) == 0);
    TS_CHECK_STREQ(t[2].str, "A\a\xc3\xa9\xf0\x9f\x98\x80");
    TS_CHECK_STREQ(t[3].str, "xy"); /* backslash-newline inside a string */
    TS_CHECK_STREQ(t[4].str, "\xff\x01"); /* raw bytes stand for themselves */
    TS_CHECK_INTEQ(t[3].range.line, 1);
    TS_CHECK_INTEQ(t[4].range.line, 2);
  }
  ts_arena_release(&a);

  /* numbers */
  ts_arena_init(&a, 0);
  const char *s3 =
      "0 7 0x1F 0o17 0b101 9223372036854775807 9223372036854775808 0. 1e-05 2.5e+10 .5 1E5 0.10000000000000001";
  t = ts_fe_lex(&a, mksrc(&a, "t.py", s3, strlen(s3)), &n, NULL);
  if (TS_CHECK(t != NULL) && TS_CHECK_INTEQ(n, 15)) {
    TS_CHECK_INTEQ(t[0].i, 0);
    TS_CHECK_INTEQ(t[1].i, 7);
    TS_CHECK_INTEQ(t[2].i, 31);
    TS_CHECK_INTEQ(t[3].i, 15);
    TS_CHECK_INTEQ(t[4].i, 5);
    TS_CHECK_INTEQ(t[5].i, INT64_MAX);
    TS_CHECK(t[6].kind == TS_TOK_INT && t[6].i == INT64_MIN); /* only valid after "-" */
    TS_CHECK(t[7].kind == TS_TOK_FLOAT && t[7].f == 0.0);
    TS_CHECK(t[8].kind == TS_TOK_FLOAT && t[8].f == 1e-05);
    TS_CHECK(t[9].f == 2.5e10);
    TS_CHECK(t[10].f == 0.5);
    TS_CHECK(t[11].kind == TS_TOK_FLOAT && t[11].f == 1e5);
    TS_CHECK(t[12].f == 0.1);
    TS_CHECK(t[13].kind == TS_TOK_NEWLINE && t[14].kind == TS_TOK_EOF);
    TS_CHECK_INTEQ(t[13].range.col, (int)strlen(s3) + 1); /* a last line without '\n' */
  }
  ts_arena_release(&a);
}

/* ------------------------------------------------------------ expressions */

static void test_literals(void) {
  CHECK_EXPR("x", "x");
  CHECK_EXPR("42", "42");
  CHECK_EXPR("0x1F", "31");
  CHECK_EXPR("00", "0");
  CHECK_EXPR("0.", "0.0");
  CHECK_EXPR("1e-05", "1e-05");
  CHECK_EXPR("1.0000000000000001e-05", "1e-05");
  CHECK_EXPR("2.5e+10", "25000000000.0");
  CHECK_EXPR(".5", "0.5");
  CHECK_EXPR("0.10000000000000001", "0.1");
  CHECK_EXPR("-9223372036854775808", "-9223372036854775808");
  CHECK_EXPR("-9223372036854775807", "(UNOP - 9223372036854775807)");
  CHECK_EXPR("None", "None");
  CHECK_EXPR("True", "True");
  CHECK_EXPR("False", "False");
  CHECK_EXPR("inf", "inf"); /* the printer's float('inf') is a name the emitter resolves */
  CHECK_EXPR("\"abc\"", "\"abc\"");
  CHECK_EXPR("'a\\'b\"c'", "\"a\\'b\\\"c\"");
  CHECK_EXPR("\"a\" 'b'  \"c\"", "\"abc\"");
  CHECK_EXPR("\"\\n\\t\\\\\\101\\u00e9\\U0001F600\\0\\x7f\"",
             "\"\\n\\t\\\\A\\303\\251\\360\\237\\230\\200\\000\\177\"");
  CHECK_EXPR("\"\"\"a\nb'\"c\"\"\"", "\"a\\nb\\'\\\"c\"");
  CHECK_EXPR("'''x\r\ny'''", "\"x\\ny\"");
  CHECK_EXPR("''", "\"\"");
  CHECK_EXPR("\"\\\"\"", "\"\\\"\"");
}

static void test_expressions(void) {
  CHECK_EXPR("a.b.c", "(ATTR c (ATTR b a))");
  CHECK_EXPR("(self).f(x, )", "(CALL (ATTR f self) [x])");
  CHECK_EXPR("torch.zeros([2, n, 32], dtype=_2, layout=None, device=_3)",
             "(CALL (ATTR zeros torch) [(LIST [2 n 32])] <(KWARG dtype _2) (KWARG layout None) (KWARG device _3)>)");
  CHECK_EXPR("f()", "(CALL f)");
  CHECK_EXPR("f(*a, b)", "(CALL f [(STARRED a) b])");
  CHECK_EXPR("f(from=1, if=2)", "(CALL f <(KWARG from 1) (KWARG if 2)>)");
  CHECK_EXPR("f(a,\n    b,\n)", "(CALL f [a b])");
  CHECK_EXPR("f(x)(y)[0].z", "(ATTR z (SUBSCRIPT (CALL (CALL f [x]) [y]) [0]))");
  CHECK_EXPR("x[1:]", "(SUBSCRIPT x [(SLICE 1)])");
  CHECK_EXPR("x[:, 0]", "(SUBSCRIPT x [(SLICE) 0])");
  CHECK_EXPR("x[::2]", "(SUBSCRIPT x [(SLICE _ _ 2)])");
  CHECK_EXPR("x[a:b:c]", "(SUBSCRIPT x [(SLICE a b c)])");
  CHECK_EXPR("x[:-1]", "(SUBSCRIPT x [(SLICE _ (UNOP - 1))])");
  CHECK_EXPR("x[1:2, ::]", "(SUBSCRIPT x [(SLICE 1 2) (SLICE)])");
  CHECK_EXPR("x[i, j]", "(SUBSCRIPT x [i j])");
  CHECK_EXPR("x[i,]", "(SUBSCRIPT x [i])");
  CHECK_EXPR("(hx1)[0]", "(SUBSCRIPT hx1 [0])");
  CHECK_EXPR("annotate(List[int], [])", "(CALL annotate [(SUBSCRIPT List [int]) (LIST)])");
  CHECK_EXPR("annotate(Dict[str, int], {})", "(CALL annotate [(SUBSCRIPT Dict [str int]) (DICT)])");
  CHECK_EXPR("unchecked_cast(Tuple[Tensor, Tensor], hx)",
             "(CALL unchecked_cast [(SUBSCRIPT Tuple [Tensor Tensor]) hx])");
  CHECK_EXPR("uninitialized(Tensor)", "(CALL uninitialized [Tensor])");
  CHECK_EXPR("CONSTANTS.c0", "(ATTR c0 CONSTANTS)");
  CHECK_EXPR("ops.prim.RaiseException(msg, \"builtins.RuntimeError\")",
             "(CALL (ATTR RaiseException (ATTR prim ops)) [msg \"builtins.RuntimeError\"])");
  CHECK_EXPR("__torch__.a.b.fn(x, )", "(CALL (ATTR fn (ATTR b (ATTR a __torch__))) [x])");
  CHECK_EXPR("isinstance(x, (int, float))", "(CALL isinstance [x (TUPLE [int float])])");
  CHECK_EXPR("getattr(self, \"0\")", "(CALL getattr [self \"0\"])");
  CHECK_EXPR("__torch__.M.__new__(__torch__.M)", "(CALL (ATTR __new__ (ATTR M __torch__)) [(ATTR M __torch__)])");
  CHECK_EXPR("(c).value", "(ATTR value c)");
  CHECK_EXPR("fork(__forked_function)", "(CALL fork [__forked_function])");

  /* boolean operators, comparisons, chains */
  CHECK_EXPR("not a", "(UNOP not a)");
  CHECK_EXPR("not not a", "(UNOP not (UNOP not a))");
  CHECK_EXPR("a and b or c", "(BOOLOP or (BOOLOP and a b) c)");
  CHECK_EXPR("a or b and c", "(BOOLOP or a (BOOLOP and b c))");
  CHECK_EXPR("a and b and c", "(BOOLOP and (BOOLOP and a b) c)");
  CHECK_EXPR("not a and b", "(BOOLOP and (UNOP not a) b)");
  CHECK_EXPR("a is None", "(COMPARE is a None)");
  CHECK_EXPR("a is not None", "(COMPARE is not a None)");
  CHECK_EXPR("a in b", "(COMPARE in a b)");
  CHECK_EXPR("a not in b", "(COMPARE not in a b)");
  CHECK_EXPR("not a == b", "(UNOP not (COMPARE == a b))");
  CHECK_EXPR("a < b < c", "(BOOLOP and (COMPARE < a b) (COMPARE < b c))");
  CHECK_EXPR("a == b != c >= d",
             "(BOOLOP and (BOOLOP and (COMPARE == a b) (COMPARE != b c)) (COMPARE >= c d))");
  CHECK_EXPR("a <= b > c", "(BOOLOP and (COMPARE <= a b) (COMPARE > b c))");
  CHECK_EXPR("a | b == c", "(COMPARE == (BINOP | a b) c)");

  /* arithmetic */
  CHECK_EXPR("-1", "(UNOP - 1)");
  CHECK_EXPR("- -a", "(UNOP - (UNOP - a))");
  CHECK_EXPR("~a", "(UNOP ~ a)");
  CHECK_EXPR("+a", "(UNOP + a)");
  CHECK_EXPR("-x ** 2", "(UNOP - (BINOP ** x 2))");
  CHECK_EXPR("2 ** -1", "(BINOP ** 2 (UNOP - 1))");
  CHECK_EXPR("2 ** 3 ** 2", "(BINOP ** 2 (BINOP ** 3 2))");
  CHECK_EXPR("a + b * c", "(BINOP + a (BINOP * b c))");
  CHECK_EXPR("a - b - c", "(BINOP - (BINOP - a b) c)");
  CHECK_EXPR("(a + b) * c", "(BINOP * (BINOP + a b) c)");
  CHECK_EXPR("a | b ^ c & d << e + f * g",
             "(BINOP | a (BINOP ^ b (BINOP & c (BINOP << d (BINOP + e (BINOP * f g))))))");
  CHECK_EXPR("a // b % c @ d / e", "(BINOP / (BINOP @ (BINOP % (BINOP // a b) c) d) e)");
  CHECK_EXPR("a >> b", "(BINOP >> a b)");
  CHECK_EXPR("-a * b", "(BINOP * (UNOP - a) b)");

  /* conditional expressions */
  CHECK_EXPR("x if c else y", "(IFEXP x y c)");
  CHECK_EXPR("a if b else c if d else e", "(IFEXP a (IFEXP c e d) b)");
  CHECK_EXPR("a or b if c and d else e", "(IFEXP (BOOLOP or a b) e (BOOLOP and c d))");

  /* displays */
  CHECK_EXPR("()", "(TUPLE)");
  CHECK_EXPR("(x,)", "(TUPLE [x])");
  CHECK_EXPR("(x, y)", "(TUPLE [x y])");
  CHECK_EXPR("(x, y, )", "(TUPLE [x y])");
  CHECK_EXPR("(x)", "x");
  CHECK_EXPR("((x))", "x");
  CHECK_EXPR("(*a, b)", "(TUPLE [(STARRED a) b])");
  CHECK_EXPR("[]", "(LIST)");
  CHECK_EXPR("[1, 2, ]", "(LIST [1 2])");
  CHECK_EXPR("[[1], [2]]", "(LIST [(LIST [1]) (LIST [2])])");
  CHECK_EXPR("{}", "(DICT)");
  CHECK_EXPR("{\"a\": 1, \"b\": x}", "(DICT [\"a\" \"b\"] {1 x})");
  CHECK_EXPR("{1: 2,}", "(DICT [1] {2})");

  /* types */
  CHECK_EXPR("Dict[str, List[int]]", "(SUBSCRIPT Dict [str (SUBSCRIPT List [int])])");
  CHECK_EXPR("Tuple[()]", "(SUBSCRIPT Tuple [(TUPLE)])");
  CHECK_EXPR("Optional[Tuple[Tensor, Tensor]]", "(SUBSCRIPT Optional [(SUBSCRIPT Tuple [Tensor Tensor])])");
  CHECK_EXPR("  List[int]  \n", "(SUBSCRIPT List [int])");
  CHECK_EXPR("__torch__.torch.nn.utils.rnn.PackedSequence",
             "(ATTR PackedSequence (ATTR rnn (ATTR utils (ATTR nn (ATTR torch __torch__)))))");
}

/* ------------------------------------------------------------ statements */

static void test_classes(void) {
  CHECK_STMTS("class LSTM(Module):\n"
              "  __parameters__ = [\"w\", \"b\", ]\n"
              "  __buffers__ = []\n"
              "  training : bool\n"
              "  dropout : Final[float] = 0.\n"
              "  mode : Final[str] = \"LSTM\"\n"
              "  __annotations__[\"0\"] = __torch__.M\n"
              "  def forward(self: __torch__.LSTM,\n"
              "    x: Tensor,\n"
              "    hx: Optional[Tensor]=None) -> Tuple[Tensor, Tensor]:\n"
              "    y, _0, = (self).f(x, None, )\n"
              "    return (y, _0)\n",
              "(CLASS LSTM [Module] body[(ASSIGN (LIST [\"w\" \"b\"]) [__parameters__]) (ASSIGN (LIST) [__buffers__]) "
              "(ASSIGN _ bool [training]) (ASSIGN 0.0 (SUBSCRIPT Final [float]) [dropout]) "
              "(ASSIGN \"LSTM\" (SUBSCRIPT Final [str]) [mode]) "
              "(ASSIGN (ATTR M __torch__) [(SUBSCRIPT __annotations__ [\"0\"])]) "
              "(DEF forward (SUBSCRIPT Tuple [Tensor Tensor]) [(PARAM self (ATTR LSTM __torch__)) (PARAM x Tensor) "
              "(PARAM hx (SUBSCRIPT Optional [Tensor]) None)] body[(ASSIGN (CALL (ATTR f self) [x None]) "
              "[(TUPLE [y _0])]) (RETURN (TUPLE [y _0]))])])");
  CHECK_STMTS("class PackedSequence(NamedTuple):\n"
              "  data : Tensor\n"
              "  sorted_indices : Optional[Tensor]\n",
              "(CLASS PackedSequence [NamedTuple] body[(ASSIGN _ Tensor [data]) "
              "(ASSIGN _ (SUBSCRIPT Optional [Tensor]) [sorted_indices])])");
  CHECK_STMTS("class Color(Enum):\n  RED = 1\n  GREEN = \"g\"\n",
              "(CLASS Color [Enum] body[(ASSIGN 1 [RED]) (ASSIGN \"g\" [GREEN])])");
  CHECK_STMTS("class I(Interface):\n"
              "  def f(self, x: Tensor) -> Tensor:\n"
              "    pass\n"
              "  def g(self) -> None: pass\n",
              "(CLASS I [Interface] body[(DEF f Tensor [(PARAM self) (PARAM x Tensor)] body[(PASS)]) "
              "(DEF g None [(PARAM self)] body[(PASS)])])");
  CHECK_STMTS("class C:\n  x : int\nclass D():\n  pass\n",
              "(CLASS C body[(ASSIGN _ int [x])])\n(CLASS D body[(PASS)])");
  CHECK_STMTS("def _apply(tensor: Tensor,\n"
              "    dim: int=1) -> Tensor:\n"
              "  _52 = torch.index_select(tensor, dim)\n"
              "  return _52\n",
              "(DEF _apply Tensor [(PARAM tensor Tensor) (PARAM dim int 1)] body[(ASSIGN (CALL (ATTR index_select "
              "torch) [tensor dim]) [_52]) (RETURN _52)])");
  CHECK_STMTS("@torch.jit.export\n@staticmethod\ndef f(x):\n  pass\n@foo(1)\nclass C:\n  pass\n",
              "(DEF f [(PARAM x)] @[(ATTR export (ATTR jit torch)) staticmethod] body[(PASS)])\n"
              "(CLASS C @[(CALL foo [1])] body[(PASS)])");
  CHECK_STMTS("def f(a, *args: int, b: int=1, c):\n  pass\ndef g(self, *, x: int, ):\n  pass\n",
              "(DEF f [(PARAM a) (PARAM args varargs int) (PARAM b kwonly int 1) (PARAM c kwonly)] body[(PASS)])\n"
              "(DEF g [(PARAM self) (PARAM x kwonly int)] body[(PASS)])");
  CHECK_STMTS("def forward(self):\n"
              "  def __forked_function():\n"
              "    return 1\n"
              "  fut = fork(__forked_function)\n"
              "  return torch.wait(fut)\n",
              "(DEF forward [(PARAM self)] body[(DEF __forked_function body[(RETURN 1)]) "
              "(ASSIGN (CALL fork [__forked_function]) [fut]) (RETURN (CALL (ATTR wait torch) [fut]))])");
}

static void test_statements(void) {
  CHECK_STMTS("if a:\n  x = 1\nelif b:\n  x = 2\nelif c:\n  pass\nelse:\n  x = 3\n",
              "(IF _ _ a body[(ASSIGN 1 [x])] else[(IF _ _ b body[(ASSIGN 2 [x])] else[(IF _ _ c body[(PASS)] "
              "else[(ASSIGN 3 [x])])])])");
  CHECK_STMTS("if a:\n  if b:\n    pass\n  else:\n    pass\nelse:\n  pass\n",
              "(IF _ _ a body[(IF _ _ b body[(PASS)] else[(PASS)])] else[(PASS)])");
  CHECK_STMTS("while _3:\n  _3 = False\n", "(WHILE _ _ _3 body[(ASSIGN False [_3])])");
  CHECK_STMTS("for i in range(n):\n  acc0 = acc1\n", "(FOR i (CALL range [n]) body[(ASSIGN acc1 [acc0])])");
  CHECK_STMTS("for a, b in zip(x, y):\n  break\n", "(FOR (TUPLE [a b]) (CALL zip [x y]) body[(BREAK)])");
  CHECK_STMTS("for a, in x:\n  continue\n", "(FOR (TUPLE [a]) x body[(CONTINUE)])");
  CHECK_STMTS("for x in a, b:\n  pass\n", "(FOR x (TUPLE [a b]) body[(PASS)])");
  CHECK_STMTS("return\nreturn x\nreturn a, b\nreturn (a, b)\n",
              "(RETURN)\n(RETURN x)\n(RETURN (TUPLE [a b]))\n(RETURN (TUPLE [a b]))");
  CHECK_STMTS("raise\nraise Exception(\"x\")\n", "(RAISE)\n(RAISE (CALL Exception [\"x\"]))");
  CHECK_STMTS("assert x\nassert x, \"msg\"\n", "(ASSERT x)\n(ASSERT x \"msg\")");
  CHECK_STMTS("del a, b[0]\ndel x,\ndel self.y\n",
              "(DEL [a (SUBSCRIPT b [0])])\n(DEL [x])\n(DEL [(ATTR y self)])");
  CHECK_STMTS("with ops.prim.X(a) as b, c:\n  pass\nwith scope:\n  pass\n",
              "(WITH [(WITH_ITEM (CALL (ATTR X (ATTR prim ops)) [a]) b) (WITH_ITEM c)] body[(PASS)])\n"
              "(WITH [(WITH_ITEM scope)] body[(PASS)])");
  CHECK_STMTS("global a, b\n", "(GLOBAL [a b])");
  CHECK_STMTS("import torch\nfrom a.b import  c as d; x = 1\n",
              "(IMPORT import torch)\n(IMPORT from a.b import  c as d)\n(ASSIGN 1 [x])");
  CHECK_STMTS("a = b = f()\n", "(ASSIGN (CALL f) [a b])");
  CHECK_STMTS("hidden0, output = hidden1, output0\n", "(ASSIGN (TUPLE [hidden1 output0]) [(TUPLE [hidden0 output])])");
  CHECK_STMTS("_5, _6, _7, = True, True, acc0,\n", "(ASSIGN (TUPLE [True True acc0]) [(TUPLE [_5 _6 _7])])");
  CHECK_STMTS("a, = x\n[a, b] = x\n(a, (b, c)) = x\n*a, b = x\n",
              "(ASSIGN x [(TUPLE [a])])\n(ASSIGN x [(LIST [a b])])\n(ASSIGN x [(TUPLE [a (TUPLE [b c])])])\n"
              "(ASSIGN x [(TUPLE [(STARRED a) b])])");
  CHECK_STMTS("self.total = start\nx[0] = 1\n", "(ASSIGN start [(ATTR total self)])\n(ASSIGN 1 [(SUBSCRIPT x [0])])");
  CHECK_STMTS("x += 1\nself.n -= 2\nx[i] **= 2\na //= b\na >>= 1\na <<= 1\na @= b\na |= b\na &= b\na ^= b\n"
              "a %= b\na /= b\na *= b, c\n",
              "(AUGASSIGN += x 1)\n(AUGASSIGN -= (ATTR n self) 2)\n(AUGASSIGN **= (SUBSCRIPT x [i]) 2)\n"
              "(AUGASSIGN //= a b)\n(AUGASSIGN >>= a 1)\n(AUGASSIGN <<= a 1)\n(AUGASSIGN @= a b)\n"
              "(AUGASSIGN |= a b)\n(AUGASSIGN &= a b)\n(AUGASSIGN ^= a b)\n(AUGASSIGN %= a b)\n(AUGASSIGN /= a b)\n"
              "(AUGASSIGN *= a (TUPLE [b c]))");
  CHECK_STMTS("step : __torch__.U = steps[key]\n",
              "(ASSIGN (SUBSCRIPT steps [key]) (ATTR U __torch__) [step])");
  CHECK_STMTS("torch._set_item(counts, key, _17)\n",
              "(EXPR_STMT (CALL (ATTR _set_item torch) [counts key _17]))");
  CHECK_STMTS("x = 1; y = 2;\nz = 3\n", "(ASSIGN 1 [x])\n(ASSIGN 2 [y])\n(ASSIGN 3 [z])");
  CHECK_STMTS("if x: pass\nif y: a = 1; b = 2\nwhile z: break\n",
              "(IF _ _ x body[(PASS)])\n(IF _ _ y body[(ASSIGN 1 [a]) (ASSIGN 2 [b])])\n(WHILE _ _ z body[(BREAK)])");
  CHECK_STMTS("x = -9223372036854775808\n", "(ASSIGN -9223372036854775808 [x])");
  CHECK_STMTS("pass", "(PASS)");
  CHECK_STMTS("", "");
  CHECK_STMTS("# only a comment\n   # and another\n\n", "");
}

/* ------------------------------------------------------------ indentation */

static void test_indentation(void) {
  /* comments and blank lines at any indentation inside a block */
  CHECK_STMTS("def f(x):\n  y = 1\n      # deep comment\n# col0 comment\n  \n\n  return y\n",
              "(DEF f [(PARAM x)] body[(ASSIGN 1 [y]) (RETURN y)])");
  /* several levels closed at once */
  CHECK_STMTS("class A:\n  def f(self):\n    if x:\n      pass\ny = 1\n",
              "(CLASS A body[(DEF f [(PARAM self)] body[(IF _ _ x body[(PASS)])])])\n(ASSIGN 1 [y])");
  /* a last line without newline, inside blocks */
  CHECK_STMTS("class A:\n  def f(self):\n    return 1", "(CLASS A body[(DEF f [(PARAM self)] body[(RETURN 1)])])");
  CHECK_STMTS("x = 1\n# end", "(ASSIGN 1 [x])");
  CHECK_STMTS("x = 1  # c", "(ASSIGN 1 [x])");
  CHECK_STMTS("if a:\n  x = 1\n  ", "(IF _ _ a body[(ASSIGN 1 [x])])");
  /* backslash continuation, also with CRLF */
  CHECK_STMTS("x = 1 + \\\n    2\n", "(ASSIGN (BINOP + 1 2) [x])");
  CHECK_STMTS("x = 1 + \\\r\n 2\r\n", "(ASSIGN (BINOP + 1 2) [x])");
  CHECK_STMTS("if a:\n  x = \\\n1\n  y = 2\n", "(IF _ _ a body[(ASSIGN 1 [x]) (ASSIGN 2 [y])])");
  /* no NEWLINE/INDENT inside brackets, whatever the indentation */
  CHECK_STMTS("x = f(a,\nb,\n        c)\ny = [\n  1,\n]\n", "(ASSIGN (CALL f [a b c]) [x])\n(ASSIGN (LIST [1]) [y])");
  CHECK_STMTS("if a:\n  x = (1,\n# comment inside\n2)\n  y = 3\n",
              "(IF _ _ a body[(ASSIGN (TUPLE [1 2]) [x]) (ASSIGN 3 [y])])");
  /* tabs advance to the next multiple of 8 */
  CHECK_STMTS("if a:\n\tx = 1\n\tif b:\n\t\ty = 2\n\tz = 3\n",
              "(IF _ _ a body[(ASSIGN 1 [x]) (IF _ _ b body[(ASSIGN 2 [y])]) (ASSIGN 3 [z])])");
  CHECK_STMTS("if a:\n  \tx = 1\n  \ty = 2\n", "(IF _ _ a body[(ASSIGN 1 [x]) (ASSIGN 2 [y])])");
  /* CRLF and blank lines with blanks; a lone CR is a blank */
  CHECK_STMTS("\r\n  \r\nif a:\r\n  x = 1\r\n\r\n  y = 2 \r\r\n", "(IF _ _ a body[(ASSIGN 1 [x]) (ASSIGN 2 [y])])");
  CHECK_STMTS("if a:\n  x = 1\n   \r \n  y = 2\n", "(IF _ _ a body[(ASSIGN 1 [x]) (ASSIGN 2 [y])])");
  /* a deep but legal indentation */
  char *deep = NULL;
  {
    ts_buf b = {0};
    for (int i = 0; i < 150; i++)
      ts_buf_printf(&b, "%*sif a:\n", i, "");
    ts_buf_printf(&b, "%*spass\n", 150, "");
    deep = b.data;
    b.data = NULL;
    ts_buf_free(&b);
  }
  ts_arena a;
  ts_arena_init(&a, 0);
  ts_diag d = {0};
  ts_ast *m = ts_fe_parse(&a, mksrc(&a, "t.py", deep, strlen(deep)), &d);
  TS_CHECK(m != NULL && m->body.n == 1);
  ts_diag_free(&d);
  ts_arena_release(&a);
  free(deep);
}

/* The same file with "\n" and "\r\n": the same tree, the same lines and
 * columns. */
static void test_crlf(void) {
  const char *lf = "class LSTMNet(Module):\n"
                   "  __parameters__ = []\n"
                   "  training : bool\n"
                   "  def forward(self: __torch__.LSTMNet,\n"
                   "    x: Tensor) -> Tuple[Tensor, Tensor]:\n"
                   "    # comment\n"
                   "\n"
                   "    y, _0, = (lstm).forward__0(x, None, )\n"
                   "    if torch.__is__(hx, None):\n"
                   "      s = \"a\\nb\"\n"
                   "    else:\n"
                   "      s = \"\"\"x\n"
                   "y\"\"\"\n"
                   "    return (_1, h)\n";
  ts_buf crlf = {0};
  for (const char *p = lf; *p; p++) {
    if (*p == '\n')
      ts_buf_putc(&crlf, '\r');
    ts_buf_putc(&crlf, *p);
  }
  ts_arena a;
  ts_arena_init(&a, 0);
  ts_diag d = {0};
  ts_ast *m1 = ts_fe_parse(&a, mksrc(&a, "t.py", lf, strlen(lf)), &d);
  ts_ast *m2 = ts_fe_parse(&a, mksrc(&a, "t.py", crlf.data, crlf.len), &d);
  TS_CHECK_INTEQ(d.errors, 0);
  if (TS_CHECK(m1 && m2)) {
    ts_buf b1 = {0}, b2 = {0};
    ts_ast_dump(&b1, m1, 0);
    ts_ast_dump(&b2, m2, 0);
    TS_CHECK_STREQ(b1.data, b2.data);
    ts_buf_free(&b1);
    ts_buf_free(&b2);
    const ts_ast *ret = m2->body.v[0]->body.v[2]->body.v[2];
    TS_CHECK(ret->kind == TS_AST_RETURN);
    TS_CHECK_INTEQ(ret->range.line, 14);
    TS_CHECK_INTEQ(ret->range.col, 5);
    TS_CHECK_INTEQ(ret->range.start, strstr(crlf.data, "return") - crlf.data);
  }
  ts_diag_free(&d);
  ts_arena_release(&a);
  ts_buf_free(&crlf);
}

/* ------------------------------------------------------------ ranges */

static void check_range(const ts_ast *n, const char *src, const char *text, int line, int col, int tline) {
  if (!TS_CHECK(n != NULL))
    return;
  const char *at = strstr(src, text);
  bool ok = TS_CHECK(at != NULL);
  if (ok) {
    ok &= TS_CHECK_INTEQ(n->range.start, at - src);
    ok &= TS_CHECK_INTEQ(n->range.end, at - src + (long)strlen(text));
  }
  ok &= TS_CHECK_INTEQ(n->range.line, line);
  ok &= TS_CHECK_INTEQ(n->range.col, col);
  if (!ok)
    fprintf(stderr, "  (range of \"%s\", test line %d)\n", text, tline);
}
#define CHECK_RANGE(n, text, line, col) check_range((n), src, (text), (line), (col), __LINE__)

static void test_ranges(void) {
  const char *src = "x = foo.bar(a + b,\n"
                    "            c)\n"
                    "@deco\n"
                    "def f(self,\n"
                    "    k: int=1) -> int:\n"
                    "  y, _0, = (self).g(\"s\" 'é', )\n"
                    "  if k:\n"
                    "    return (k, -k)\n"
                    "  z = x[1:, ::2] if not y else \"t\"\n";
  ts_arena a;
  ts_arena_init(&a, 0);
  ts_diag d = {0};
  ts_ast *m = ts_fe_parse(&a, mksrc(&a, "t.py", src, strlen(src)), &d);
  if (!TS_CHECK(m != NULL)) {
    fprintf(stderr, "%s", d.text.data);
    goto out;
  }
  TS_CHECK_INTEQ(m->range.start, 0);
  TS_CHECK_INTEQ(m->range.end, strlen(src));
  const ts_ast *as = m->body.v[0];
  CHECK_RANGE(as, "x = foo.bar(a + b,\n            c)", 1, 1);
  CHECK_RANGE(as->list.v[0], "x", 1, 1);
  const ts_ast *call = as->a;
  CHECK_RANGE(call, "foo.bar(a + b,\n            c)", 1, 5); /* callee start to ')' */
  CHECK_RANGE(call->a, "foo.bar", 1, 5);
  CHECK_RANGE(call->list.v[0], "a + b", 1, 13); /* both operands */
  CHECK_RANGE(call->list.v[1], "c", 2, 13);

  const ts_ast *def = m->body.v[1];
  TS_CHECK(def->kind == TS_AST_DEF);
  TS_CHECK_INTEQ(def->range.line, 4); /* at "def", after its decorators */
  TS_CHECK_INTEQ(def->range.col, 1);
  TS_CHECK_INTEQ(def->range.end, strlen(src) - 1); /* not the last newline */
  CHECK_RANGE(def->decorators.v[0], "deco", 3, 2);
  CHECK_RANGE(def->list.v[1], "k: int=1", 5, 5);
  TS_CHECK_INTEQ(def->a->range.line, 5); /* the return type */
  TS_CHECK_INTEQ(def->a->range.col, 18);
  TS_CHECK_INTEQ(def->a->range.end - def->a->range.start, 3);
  const ts_ast *tup = def->body.v[0];
  CHECK_RANGE(tup, "y, _0, = (self).g(\"s\" 'é', )", 6, 3);
  CHECK_RANGE(tup->list.v[0], "y, _0,", 6, 3); /* the trailing comma included */
  CHECK_RANGE(tup->a, "(self).g(\"s\" 'é', )", 6, 12); /* from the '(' of "(self)" */
  TS_CHECK_INTEQ(tup->a->a->a->range.col, 13); /* "self" inside the parentheses */
  TS_CHECK_INTEQ(tup->a->a->a->range.end - tup->a->a->a->range.start, 4);
  CHECK_RANGE(tup->a->list.v[0], "\"s\" 'é'", 6, 21); /* adjacent literals joined */
  TS_CHECK_STREQ(tup->a->list.v[0]->str, "s\xc3\xa9");
  const ts_ast *iff = def->body.v[1];
  CHECK_RANGE(iff, "if k:\n    return (k, -k)", 7, 3); /* ends before the newline and unindent */
  CHECK_RANGE(iff->body.v[0]->a, "(k, -k)", 8, 12); /* a parenthesised tuple includes its parentheses */
  CHECK_RANGE(iff->body.v[0]->a->list.v[1], "-k", 8, 16);
  const ts_ast *z = def->body.v[2];
  CHECK_RANGE(z->a, "x[1:, ::2] if not y else \"t\"", 9, 7);
  CHECK_RANGE(z->a->a, "x[1:, ::2]", 9, 7);
  CHECK_RANGE(z->a->a->list.v[0], "1:", 9, 9);
  CHECK_RANGE(z->a->a->list.v[1], "::2", 9, 13);
  CHECK_RANGE(z->a->c, "not y", 9, 21);
out:
  ts_diag_free(&d);
  ts_arena_release(&a);
}

/* Columns count bytes; a multi-line string moves the lines after it. */
static void test_ranges_lines(void) {
  const char *src = "s = \"é\"; t = 1\nu = \"\"\"a\nb\"\"\"; v = 2\nw = (\n  3)\n";
  ts_arena a;
  ts_arena_init(&a, 0);
  ts_ast *m = ts_fe_parse(&a, mksrc(&a, "t.py", src, strlen(src)), NULL);
  if (TS_CHECK(m != NULL) && TS_CHECK_INTEQ(m->body.n, 5)) {
    CHECK_RANGE(m->body.v[1], "t = 1", 1, 11);
    CHECK_RANGE(m->body.v[2]->a, "\"\"\"a\nb\"\"\"", 2, 5);
    CHECK_RANGE(m->body.v[3], "v = 2", 3, 7);
    CHECK_RANGE(m->body.v[4]->a, "3", 5, 3);
  }
  ts_arena_release(&a);
}

/* ------------------------------------------------------------ dump */

static void test_dump(void) {
  const char *src = "x = f(a, b=1)\n"
                    "def g(*, k: float=1e-05, s: str=\"a\\n\") -> bool:\n"
                    "  return not k[1:]\n";
  ts_arena a;
  ts_arena_init(&a, 0);
  ts_ast *m = ts_fe_parse(&a, mksrc(&a, "t.py", src, strlen(src)), NULL);
  if (TS_CHECK(m != NULL)) {
    ts_buf b = {0};
    ts_ast_dump(&b, m, 0);
    TS_CHECK_STREQ(b.data, "(MODULE 1:1\n"
                           "  body: [\n"
                           "    (ASSIGN 1:1\n"
                           "      a: (CALL 1:5\n"
                           "        a: (NAME 1:5 f)\n"
                           "        list: [\n"
                           "          (NAME 1:7 a)]\n"
                           "        kw: [\n"
                           "          (KWARG 1:10 b\n"
                           "            a: (INT 1:12 1))])\n"
                           "      list: [\n"
                           "        (NAME 1:1 x)])\n"
                           "    (DEF 2:1 g\n"
                           "      a: (NAME 2:43 bool)\n"
                           "      list: [\n"
                           "        (PARAM 2:10 k kwonly\n"
                           "          a: (NAME 2:13 float)\n"
                           "          b: (FLOAT 2:19 1e-05))\n"
                           "        (PARAM 2:26 s kwonly\n"
                           "          a: (NAME 2:29 str)\n"
                           "          b: (STR 2:33 \"a\\n\"))]\n"
                           "      body: [\n"
                           "        (RETURN 3:3\n"
                           "          a: (UNOP 3:10 not\n"
                           "            a: (SUBSCRIPT 3:14\n"
                           "              a: (NAME 3:14 k)\n"
                           "              list: [\n"
                           "                (SLICE 3:16\n"
                           "                  a: (INT 3:16 1))])))])])\n");
    ts_buf_free(&b);
    /* a subtree at an indentation */
    ts_ast_dump(&b, m->body.v[0]->list.v[0], 4);
    TS_CHECK_STREQ(b.data, "    (NAME 1:1 x)\n");
    ts_buf_free(&b);
  }
  ts_arena_release(&a);
  for (int k = 0; k < TS_AST_KIND_COUNT; k++)
    TS_CHECK(strcmp(ts_ast_kind_name((ts_ast_kind)k), "?") != 0);
  TS_CHECK_STREQ(ts_ast_kind_name(TS_AST_KIND_COUNT), "?");
}

/* ------------------------------------------------------------ errors */

static void test_lex_errors(void) {
  CHECK_ERR("x = \"abc\n", "t.py:1:5: error: unterminated string");
  CHECK_ERR("x = 'abc", "t.py:1:5: error: unterminated string");
  CHECK_ERR("x = \"abc\\\"", "t.py:1:5: error: unterminated string");
  CHECK_ERR("x = '''abc\n\n", "t.py:1:5: error: unterminated triple-quoted string");
  CHECK_ERR("x = \"a\\qb\"\n", "t.py:1:7: error: invalid escape sequence '\\q'");
  CHECK_ERR("x = \"a\\\x01\"\n", "t.py:1:7: error: invalid escape sequence (backslash before byte 0x01)");
  CHECK_ERR("x = \"\\x4\"\n", "t.py:1:6: error: truncated \\x escape: expected 2 hex digits");
  CHECK_ERR("x = \"\\u12\"\n", "t.py:1:6: error: truncated \\u escape: expected 4 hex digits");
  CHECK_ERR("x = \"\\777\"\n", "t.py:1:6: error: octal escape out of range (over \\377)");
  CHECK_ERR("x = \"\\U00110000\"\n", "t.py:1:6: error: \\U escape is not a valid Unicode character");
  CHECK_ERR("x = \"\\ud800\"\n", "t.py:1:6: error: \\u escape is not a valid Unicode character");
  CHECK_ERR("x = \"\"\"ab\n  \\q\"\"\"\n", "t.py:2:3: error: invalid escape sequence '\\q'");
  CHECK_ERR("x = $\n", "t.py:1:5: error: invalid character '$'");
  CHECK_ERR("x = a ! b\n", "t.py:1:7: error: invalid character '!'");
  CHECK_ERR("x = \x80\n", "t.py:1:5: error: invalid byte 0x80 outside a string");
  CHECK_ERRN("x = \0\n", 6, "t.py:1:5: error: invalid byte 0x00 outside a string");
  CHECK_ERR("x = 1 \\ y\n", "t.py:1:7: error: unexpected character after line continuation character");
  CHECK_ERR("x = 1 \\", "t.py:1:7: error: unexpected end of file after line continuation character");
  CHECK_ERR("x = 99999999999999999999\n", "t.py:1:5: error: integer literal too large");
  CHECK_ERR("x = 0x8000000000000000\n", "t.py:1:5: error: integer literal too large");
  CHECK_ERR("x = 012\n", "t.py:1:5: error: leading zeros in decimal integer literals are not permitted");
  CHECK_ERR("x = 1abc\n", "t.py:1:5: error: invalid decimal literal");
  CHECK_ERR("x = 2j\n", "t.py:1:5: error: complex literals are not supported");
  CHECK_ERR("x = 0xZ1\n", "t.py:1:7: error: invalid digit 'Z' in hexadecimal literal");
  CHECK_ERR("x = 0b2\n", "t.py:1:7: error: invalid digit '2' in binary literal");
  CHECK_ERR("x = 0x\n", "t.py:1:5: error: expected digits after '0x'");
  CHECK_ERR("x = r\"a\"\n", "t.py:1:5: error: string prefixes ('r') are not supported");
  CHECK_ERR("x = (1, 2]\n", "t.py:1:10: error: closing ']' does not match '(' at 1:5");
  CHECK_ERR("x = 1)\n", "t.py:1:6: error: unmatched ')'");
  CHECK_ERR("x = f(a,\n  b\n", "t.py:2:4: error: expected ')' to close '(' at 1:6");
  CHECK_ERR("x = [f(a)", "t.py:1:10: error: expected ']' to close '[' at 1:5");
  CHECK_ERR("x = {\r\n", "t.py:1:6: error: expected '}' to close '{' at 1:5");
  char *num = repeat("x = ", "1", 500, ".0\n");
  CHECK_ERR(num, "t.py:1:5: error: number literal too long");
  free(num);
}

static void test_indent_errors(void) {
  CHECK_ERR("if a:\n    x\n  y\n", "t.py:3:3: error: unindent does not match any outer indentation level");
  CHECK_ERR("if a:\n\tx = 1\n        y = 2\n", "t.py:3:9: error: inconsistent use of tabs and spaces in indentation");
  CHECK_ERR("if a:\n        x = 1\n\ty = 2\n", "t.py:3:2: error: inconsistent use of tabs and spaces in indentation");
  CHECK_ERR("if a:\n  if b:\n\tx = 1\n", "t.py:3:2: error: inconsistent use of tabs and spaces in indentation");
  CHECK_ERR("  x = 1\n", "t.py:1:1: error: unexpected indent");
  CHECK_ERR("if a:\n  x = 1\n    y = 2\n", "t.py:3:1: error: unexpected indent");
  CHECK_ERR("if a:\nx = 1\n", "t.py:2:1: error: expected an indented block after 'if' at 1:1");
  CHECK_ERR("def f():\n", "t.py:1:9: error: expected an indented block after 'def' at 1:1");
  CHECK_ERR("class A:\n  def f(self):\n  x = 1\n", "t.py:3:3: error: expected an indented block after 'def' at 2:3");
  /* 201 levels of indentation */
  ts_buf b = {0};
  for (int i = 0; i < 250; i++)
    ts_buf_printf(&b, "%*sif a:\n", i, "");
  ts_buf_printf(&b, "%*spass\n", 250, "");
  CHECK_ERR(b.data, "t.py:202:202: error: too many levels of indentation (limit 200)");
  ts_buf_free(&b);
}

static void test_parse_errors(void) {
  CHECK_ERR("x = f(a b)\n", "t.py:1:9: error: expected ')' to close '(' at 1:6");
  CHECK_ERR("x = (a b)\n", "t.py:1:8: error: expected ')' to close '(' at 1:5");
  CHECK_ERR("x = (a, b c)\n", "t.py:1:11: error: expected ')' to close '(' at 1:5");
  CHECK_ERR("x = [a b]\n", "t.py:1:8: error: expected ']' to close '[' at 1:5");
  CHECK_ERR("x = [i for i in y]\n", "t.py:1:8: error: expected ']' to close '[' at 1:5");
  CHECK_ERR("x = {1: 2 3}\n", "t.py:1:11: error: expected '}' to close '{' at 1:5");
  CHECK_ERR("x = y[1 2]\n", "t.py:1:9: error: expected ']' to close '[' at 1:6");
  CHECK_ERR("def f(a b):\n  pass\n", "t.py:1:9: error: expected ')' to close '(' at 1:6");
  CHECK_ERR("class A(B C):\n  pass\n", "t.py:1:11: error: expected ')' to close '(' at 1:8");
  CHECK_ERR("x = \n", "t.py:1:5: error: expected an expression, got end of line");
  CHECK_ERR("x = ,\n", "t.py:1:5: error: expected an expression, got ','");
  CHECK_ERR("x = if\n", "t.py:1:5: error: expected an expression, got keyword 'if'");
  CHECK_ERR("x = y[]\n", "t.py:1:7: error: expected an expression, got ']'");
  CHECK_ERR("x = 1 +", "t.py:1:8: error: expected an expression, got end of line");
  CHECK_ERR("if a\n  x = 1\n", "t.py:1:5: error: expected ':', got end of line");
  CHECK_ERR("def f() -> int\n  pass\n", "t.py:1:15: error: expected ':', got end of line");
  CHECK_ERR("def f:\n  pass\n", "t.py:1:6: error: expected '(', got ':'");
  CHECK_ERR("def 1():\n  pass\n", "t.py:1:5: error: expected a function name after 'def', got number '1'");
  CHECK_ERR("class (A):\n  pass\n", "t.py:1:7: error: expected a class name after 'class', got '('");
  CHECK_ERR("else:\n  pass\n", "t.py:1:1: error: 'else' without a matching 'if'");
  CHECK_ERR("if a:\n  pass\nx = 1\nelif b:\n  pass\n", "t.py:4:1: error: 'elif' without a matching 'if'");
  CHECK_ERR("x = a if b\n", "t.py:1:11: error: expected 'else' in a conditional expression, got end of line");
  CHECK_ERR("for x y:\n  pass\n", "t.py:1:7: error: expected 'in' after the loop variable, got name 'y'");
  CHECK_ERR("f(a=1, b)\n", "t.py:1:8: error: positional argument follows keyword argument");
  CHECK_ERR("1 = x\n", "t.py:1:1: error: cannot assign to a literal");
  CHECK_ERR("f() = x\n", "t.py:1:1: error: cannot assign to a function call");
  CHECK_ERR("a, 1 = x\n", "t.py:1:4: error: cannot assign to a literal");
  CHECK_ERR("x = 1 = y\n", "t.py:1:5: error: cannot assign to a literal");
  CHECK_ERR("None = 1\n", "t.py:1:1: error: cannot assign to None");
  CHECK_ERR("a + b = 1\n", "t.py:1:1: error: cannot assign to an expression");
  CHECK_ERR("for 1 in x:\n  pass\n", "t.py:1:5: error: cannot assign to a literal");
  CHECK_ERR("with a as 1:\n  pass\n", "t.py:1:11: error: cannot assign to a literal");
  CHECK_ERR("del f()\n", "t.py:1:5: error: cannot delete a function call");
  CHECK_ERR("a, b : int\n", "t.py:1:1: error: only a single target (not a tuple) can be annotated");
  CHECK_ERR("f() : int\n", "t.py:1:1: error: cannot annotate a function call");
  CHECK_ERR("(a, b) += 1\n", "t.py:1:1: error: cannot use an expression as the target of '+='");
  CHECK_ERR("def f(a=1, b):\n  pass\n",
            "t.py:1:12: error: non-default parameter 'b' follows a parameter with a default");
  CHECK_ERR("def f(a, *):\n  pass\n", "t.py:1:10: error: named parameters must follow a bare '*'");
  CHECK_ERR("def f(*a, *b):\n  pass\n", "t.py:1:11: error: only one '*' is allowed among the parameters");
  CHECK_ERR("def f(**kw):\n  pass\n", "t.py:1:7: error: '**' parameters are not supported");
  CHECK_ERR("def f(a, /):\n  pass\n", "t.py:1:10: error: positional-only parameters ('/') are not supported");
  CHECK_ERR("def f(*a=1):\n  pass\n", "t.py:1:9: error: a '*a' parameter cannot have a default");
  CHECK_ERR("def f(if):\n  pass\n", "t.py:1:7: error: expected a parameter name, got keyword 'if'");
  CHECK_ERR("x = lambda: 1\n", "t.py:1:5: error: lambda expressions are not supported");
  CHECK_ERR("x = yield\n", "t.py:1:5: error: 'yield' expressions are not supported");
  CHECK_ERR("x = ...\n", "t.py:1:5: error: '...' is not supported");
  CHECK_ERR("try:\n  pass\n", "t.py:1:1: error: 'try' statements are not supported");
  CHECK_ERR("while a:\n  pass\nelse:\n  pass\n", "t.py:3:1: error: 'else' after a loop is not supported");
  CHECK_ERR("for a in b:\n  pass\nelse:\n  pass\n", "t.py:3:1: error: 'else' after a loop is not supported");
  CHECK_ERR("raise a from b\n", "t.py:1:9: error: 'raise ... from' is not supported");
  CHECK_ERR("nonlocal x\n", "t.py:1:1: error: 'nonlocal' is not supported");
  CHECK_ERR("global 1\n", "t.py:1:8: error: expected a name, got number '1'");
  CHECK_ERR("class C(metaclass=M):\n  pass\n", "t.py:1:9: error: class keyword arguments are not supported");
  CHECK_ERR("x = {**a}\n", "t.py:1:6: error: '**' dictionary unpacking is not supported");
  CHECK_ERR("x = {1, 2}\n", "t.py:1:7: error: expected ':' after a dictionary key, got ','");
  CHECK_ERR("f(**a)\n", "t.py:1:3: error: '**' argument unpacking is not supported");
  CHECK_ERR("@dec\nx = 1\n", "t.py:2:1: error: expected 'def' or 'class' after a decorator, got name 'x'");
  CHECK_ERR("@dec x\ndef f():\n  pass\n", "t.py:1:6: error: expected end of line after the decorator, got name 'x'");
  CHECK_ERR("x = 1 2\n", "t.py:1:7: error: expected end of line after the statement, got number '2'");
  CHECK_ERR("x = \"a\" b\n", "t.py:1:9: error: expected end of line after the statement, got name 'b'");
  CHECK_ERR("x = (*a)\n", "t.py:1:6: error: cannot use a starred expression here");
  CHECK_ERR("x = a.(b)\n", "t.py:1:7: error: expected an attribute name after '.', got '('");
  CHECK_ERR("x = 9223372036854775808\n", "t.py:1:5: error: integer literal too large");
  CHECK_ERR("x = -9223372036854775808 ** 2\n", "t.py:1:6: error: integer literal too large");
  CHECK_ERR("a :\n", "t.py:1:4: error: expected an expression, got end of line");
  CHECK_ERR("x = a :\n", "t.py:1:7: error: expected end of line after the statement, got ':'");
  CHECK_ERR("x = a := 1\n", "t.py:1:7: error: expected end of line after the statement, got ':='");

  CHECK_EXPR_ERR("List[int] x", "t.py:1:11: error: expected end of the expression, got name 'x'");
  CHECK_EXPR_ERR("", "t.py:1:1: error: expected an expression, got end of file");
  CHECK_EXPR_ERR("Dict[str,", "t.py:1:10: error: expected ']' to close '[' at 1:5");

  /* the whole diagnostic: position, source line, caret */
  ts_arena a;
  ts_arena_init(&a, 0);
  ts_diag d = {0};
  const char *src = "class A:\n  def f(self):\n    return g(a b)\n";
  TS_CHECK(ts_fe_parse(&a, mksrc(&a, "code/__torch__/m.py", src, strlen(src)), &d) == NULL);
  TS_CHECK_STREQ(d.text.data, "code/__torch__/m.py:3:16: error: expected ')' to close '(' at 3:13\n"
                              "    return g(a b)\n"
                              "               ^\n");
  ts_diag_free(&d);
  /* a NULL diagnostic sink is fine */
  TS_CHECK(ts_fe_parse(&a, mksrc(&a, "t.py", src, strlen(src)), NULL) == NULL);
  TS_CHECK(ts_fe_lex(&a, mksrc(&a, "t.py", "'", 1), NULL, NULL) == NULL);
  ts_arena_release(&a);
}

/* ------------------------------------------------------------ limits */

static void test_limits(void) {
  /* 10000 open brackets of each kind: a clean error at the 201st */
  char *s = repeat("", "(", 10000, "");
  CHECK_ERR(s, "t.py:1:201: error: too many nested parentheses (limit 200)");
  CHECK_EXPR_ERR(s, "t.py:1:201: error: too many nested parentheses (limit 200)");
  free(s);
  s = repeat("x = ", "[", 10000, "");
  CHECK_ERR(s, "t.py:1:205: error: too many nested parentheses (limit 200)");
  free(s);
  s = repeat("x = ", "{1:", 10000, "");
  CHECK_ERR(s, "t.py:1:605: error: too many nested parentheses (limit 200)");
  free(s);
  /* 150 levels of parentheses are fine */
  s = repeat("x = ", "(", 150, "y");
  {
    size_t n = strlen(s);
    char *t = malloc(n + 151);
    memcpy(t, s, n);
    memset(t + n, ')', 150);
    t[n + 150] = 0;
    CHECK_STMTS(t, "(ASSIGN y [x])");
    free(t);
  }
  free(s);
  /* deep expressions without brackets */
  s = repeat("x = ", "-", 10000, "1\n");
  CHECK_ERR(s, "t.py:1:205: error: expression nested too deeply (limit 200)");
  free(s);
  s = repeat("x = ", "not ", 10000, "a\n");
  CHECK_ERR(s, "t.py:1:805: error: expression nested too deeply (limit 200)");
  free(s);
  s = repeat("x = 2", " ** 2", 10000, "\n");
  CHECK_ERR(s, "t.py:1:1005: error: expression nested too deeply (limit 200)");
  free(s);
  s = repeat("x = a", " + a", 10000, "\n");
  CHECK_ERR(s, "t.py:1:5: error: expression nested too deeply (limit 200)");
  free(s);
  s = repeat("x = a", ".b", 10000, "\n");
  CHECK_ERR(s, "t.py:1:5: error: expression nested too deeply (limit 200)");
  free(s);
  s = repeat("x = a", "[0]", 10000, "\n");
  CHECK_ERR(s, "t.py:1:5: error: expression nested too deeply (limit 200)");
  free(s);
  s = repeat("x = a", " if b else a", 10000, "\n");
  CHECK_ERR(s, "t.py:1:2405: error: expression nested too deeply (limit 200)");
  free(s);
  s = repeat("x = a", " < a", 10000, "\n");
  CHECK_ERR(s, "t.py:1:5: error: expression nested too deeply (limit 200)");
  free(s);
  /* a long flat list is not deep */
  s = repeat("x = [", "1, ", 10000, "]\n");
  CHECK_STMTS("x = [1, 2]\n", "(ASSIGN (LIST [1 2]) [x])");
  {
    ts_arena a;
    ts_arena_init(&a, 0);
    ts_ast *m = ts_fe_parse(&a, mksrc(&a, "t.py", s, strlen(s)), NULL);
    TS_CHECK(m != NULL && m->body.v[0]->a->list.n == 10000);
    ts_arena_release(&a);
  }
  free(s);
  /* an elif chain nests IFs: bounded too */
  s = repeat("if a:\n  pass\n", "elif a:\n  pass\n", 10000, "");
  CHECK_ERR(s, "t.py:19603:1: error: statements nested too deeply (limit 200)");
  free(s);
  /* an arena too small to hold the tokens: an error, not a crash */
  ts_arena a;
  ts_arena_init(&a, 4096);
  ts_diag d = {0};
  s = repeat("", "x = 1\n", 2000, "");
  TS_CHECK(ts_fe_parse(&a, mksrc(&a, "t.py", s, strlen(s)), &d) == NULL);
  TS_CHECK_INTEQ(d.errors, 1);
  TS_CHECK(d.text.data && strstr(d.text.data, "out of memory"));
  ts_diag_free(&d);
  ts_arena_release(&a);
  free(s);
}

/* ------------------------------------------------------------ real files */

static const ts_ast *find_def(const ts_ast *cls, const char *name) {
  for (uint32_t i = 0; i < cls->body.n; i++)
    if (cls->body.v[i]->kind == TS_AST_DEF && strcmp(cls->body.v[i]->str, name) == 0)
      return cls->body.v[i];
  return NULL;
}

static void test_fixture_files(void) {
  size_t len;
  char *text = read_file("tests/fixtures/source/lstm_rnn.py", &len);
  if (!TS_CHECK(text != NULL))
    return;
  ts_arena a;
  ts_arena_init(&a, 0);
  ts_diag d = {0};
  ts_ast *m = ts_fe_parse(&a, mksrc(&a, "code/__torch__/torch/nn/modules/rnn.py", text, len), &d);
  if (TS_CHECK(m != NULL) && TS_CHECK_INTEQ(m->body.n, 2)) {
    const ts_ast *cls = m->body.v[0];
    TS_CHECK_STREQ(cls->str, "LSTM");
    TS_CHECK_INTEQ(cls->body.n, 32); /* 24 attributes and constants, 8 methods */
    int ndefs = 0;
    for (uint32_t i = 0; i < cls->body.n; i++)
      ndefs += cls->body.v[i]->kind == TS_AST_DEF;
    TS_CHECK_INTEQ(ndefs, 8);
    const ts_ast *fwd = find_def(cls, "forward__0");
    if (TS_CHECK(fwd != NULL)) {
      TS_CHECK_INTEQ(fwd->list.n, 3);
      TS_CHECK_STREQ(fwd->list.v[2]->str, "hx");
      TS_CHECK(fwd->list.v[2]->b && fwd->list.v[2]->b->kind == TS_AST_NONE);
      TS_CHECK_INTEQ(fwd->list.v[2]->range.line, 28);
      ts_buf b = {0};
      sx(&b, fwd->a);
      TS_CHECK_STREQ(b.data, "(SUBSCRIPT Tuple [Tensor (SUBSCRIPT Tuple [Tensor Tensor])])");
      ts_buf_free(&b);
    }
    const ts_ast *chk = find_def(cls, "check_hidden_size");
    if (TS_CHECK(chk != NULL)) {
      const ts_ast *msg = chk->list.v[3];
      TS_CHECK_STREQ(msg->b->str, "Expected hidden size {}, got {}");
    }
    TS_CHECK_STREQ(m->body.v[1]->str, "_apply_permutation");
  } else {
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
  }
  ts_diag_free(&d);
  ts_arena_release(&a);
  free(text);

  text = read_file("tests/fixtures/source/fe_classes.py", &len);
  if (!TS_CHECK(text != NULL))
    return;
  ts_arena_init(&a, 0);
  m = ts_fe_parse(&a, mksrc(&a, "code/__torch__/fixture_models.py", text, len), &d);
  if (TS_CHECK(m != NULL)) {
    ts_buf b = {0};
    for (uint32_t i = 0; i < m->body.n; i++) {
      const ts_ast *s = m->body.v[i];
      ts_buf_printf(&b, "%s %s(", ts_ast_kind_name(s->kind), s->str);
      for (uint32_t k = 0; k < s->list.n && s->kind == TS_AST_CLASS; k++)
        sx(&b, s->list.v[k]);
      ts_buf_puts(&b, ") ");
    }
    TS_CHECK_STREQ(b.data, "CLASS FeClasses(Module) CLASS FeDouble(Module) CLASS FeShift(Module) "
                           "CLASS FeUnary(ModuleInterface) DEF fe_color_code() CLASS FeColor(Enum) CLASS FeCounter() "
                           "CLASS FeScope() ");
    ts_buf_free(&b);
    const ts_ast *fwd = find_def(m->body.v[0], "forward");
    int withs = 0, annotated = 0;
    for (uint32_t i = 0; fwd && i < fwd->body.n; i++) {
      const ts_ast *s = fwd->body.v[i];
      if (s->kind == TS_AST_WITH) {
        withs++;
        TS_CHECK_INTEQ(s->list.n, 1);
      }
    }
    /* "step : __torch__.fixture_models.FeUnary = steps[key]" inside the last for */
    for (uint32_t i = 0; fwd && i < fwd->body.n; i++) {
      const ts_ast *s = fwd->body.v[i];
      for (uint32_t k = 0; s->kind == TS_AST_FOR && k < s->body.n; k++)
        annotated += s->body.v[k]->kind == TS_AST_ASSIGN && s->body.v[k]->b && s->body.v[k]->a;
    }
    TS_CHECK_INTEQ(withs, 3);
    TS_CHECK_INTEQ(annotated, 1);
  } else {
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
  }
  ts_diag_free(&d);
  ts_arena_release(&a);
  free(text);

  text = read_file("tests/fixtures/source/control_flow.py", &len);
  if (!TS_CHECK(text != NULL))
    return;
  ts_arena_init(&a, 0);
  m = ts_fe_parse(&a, mksrc(&a, "code/__torch__.py", text, len), &d);
  TS_CHECK(m != NULL && m->body.n == 1);
  ts_diag_free(&d);
  ts_arena_release(&a);
  free(text);
}

/* ------------------------------------------------------------ mutations */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 16);
}

/* A few thousand random edits of a real printed file: the parser returns a
 * tree or NULL with exactly one diagnostic, and never crashes (ASan/UBSan
 * watch the rest). */
static void test_mutations(void) {
  size_t len;
  char *orig = read_file("tests/fixtures/source/lstm_rnn.py", &len);
  if (!TS_CHECK(orig != NULL))
    return;
  static const char interesting[] = "()[]{}:,.=\"'\\\n\r\t #-*@0123456789abcxyz_";
  static const char *const words[] = {"if ", "else:", "elif ", "def ", "class ", "(", ")", "\n  ", "\n", "\"\"\"",
                                      "\\\n", "**", "not ", " in ", "lambda", "1e", "0x", "\\x", "\\u", "\t"};
  char *buf = malloc(len + 64);
  int parsed = 0, failed = 0, bad = 0;
  for (int iter = 0; iter < 3000; iter++) {
    size_t n = len;
    memcpy(buf, orig, len);
    int edits = 1 + (int)(rng() % 4);
    for (int e = 0; e < edits; e++) {
      size_t pos = n ? rng() % n : 0;
      switch (rng() % 6) {
      case 0: /* delete a span */ {
        size_t k = 1 + rng() % 8;
        if (pos + k > n)
          k = n - pos;
        memmove(buf + pos, buf + pos + k, n - pos - k);
        n -= k;
        break;
      }
      case 1: /* insert an interesting byte */
        if (n < len + 48) {
          memmove(buf + pos + 1, buf + pos, n - pos);
          buf[pos] = interesting[rng() % (sizeof interesting - 1)];
          n++;
        }
        break;
      case 2: /* overwrite with any byte */
        if (n)
          buf[pos] = (char)(rng() & 0xff);
        break;
      case 3: /* insert a word */ {
        const char *w = words[rng() % (sizeof words / sizeof words[0])];
        size_t wl = strlen(w);
        if (n + wl <= len + 48) {
          memmove(buf + pos + wl, buf + pos, n - pos);
          memcpy(buf + pos, w, wl);
          n += wl;
        }
        break;
      }
      case 4: /* truncate */ n = pos; break;
      default: /* swap two bytes */
        if (n) {
          size_t q = rng() % n;
          char c = buf[pos];
          buf[pos] = buf[q];
          buf[q] = c;
        }
        break;
      }
    }
    buf[n] = 0;
    ts_arena a;
    ts_arena_init(&a, 0);
    ts_diag d = {0};
    ts_ast *m = ts_fe_parse(&a, mksrc(&a, "m.py", buf, n), &d);
    if (m) {
      parsed++;
      ts_buf b = {0};
      ts_ast_dump(&b, m, 0);
      bad += b.failed || d.errors != 0;
      ts_buf_free(&b);
    } else {
      failed++;
      bad += d.errors != 1 || !d.text.data || !strstr(d.text.data, "m.py:");
    }
    ts_diag_free(&d);
    ts_arena_release(&a);
  }
  TS_CHECK_INTEQ(bad, 0);
  TS_CHECK(parsed > 0 && failed > 0);
  printf("mutations: %d parsed, %d rejected\n", parsed, failed);
  free(buf);
  free(orig);
}

int main(void) {
  test_tokens();
  test_literals();
  test_expressions();
  test_classes();
  test_statements();
  test_indentation();
  test_crlf();
  test_ranges();
  test_ranges_lines();
  test_dump();
  test_lex_errors();
  test_indent_errors();
  test_parse_errors();
  test_limits();
  test_fixture_files();
  test_mutations();
  return ts_test_finish();
}
