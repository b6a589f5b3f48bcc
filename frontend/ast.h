/* frontend/ast.h: the TorchScript source that torch.jit.save writes under
 * code/ (Python syntax, the subset PyTorch's Python printer emits), its
 * lexer and parser.
 *
 * Types are parsed as expressions ("Tuple[Tensor, Optional[int]]" is a
 * SUBSCRIPT of NAME Tuple): the emitter turns them into ts_type. Every node
 * carries the source range it was read from. */
#ifndef TSAOT_FRONTEND_AST_H
#define TSAOT_FRONTEND_AST_H

#include "ir.h"

/* One source file: `file` is the archive entry ("code/__torch__/m.py"),
 * `text` its bytes (NUL-terminated, `len` without the NUL). */
typedef struct ts_fe_source {
  const char *file;
  const char *text;
  size_t len;
} ts_fe_source;

/* A range of one source: bytes [start, end), and the 1-based line and column
 * of `start` (columns count bytes). */
typedef struct ts_srange {
  const ts_fe_source *src;
  uint32_t start, end;
  int32_t line, col;
} ts_srange;

/* Reports an error at `r` in the compiler form (file:line:col: error: msg,
 * the source line, a caret). */
void ts_fe_error_at(ts_diag *d, ts_srange r, const char *fmt, ...) TS_PRINTF(3, 4);

typedef enum ts_ast_kind {
  /* ---- expressions */
  TS_AST_NAME,      /* str: identifier */
  TS_AST_INT,       /* i (a literal beyond int64 is a parse error) */
  TS_AST_FLOAT,     /* f: "1.", "0.5", "1e-05", "inf"-free: the printer writes float("inf") */
  TS_AST_STR,       /* str/len: the value, escapes decoded, adjacent literals joined */
  TS_AST_NONE,
  TS_AST_TRUE,
  TS_AST_FALSE,
  TS_AST_ATTR,      /* a.str          a: value, str: attribute name */
  TS_AST_SUBSCRIPT, /* a[list]        a: value, list: one or more index exprs (x[i, j]) */
  TS_AST_SLICE,     /* a:b:c          inside a SUBSCRIPT; each of a, b, c may be NULL */
  TS_AST_CALL,      /* a(list, kw)    a: callee, list: positional args, kw: KWARG nodes */
  TS_AST_KWARG,     /* str=a          str: name, a: value */
  TS_AST_STARRED,   /* *a             in calls and targets */
  TS_AST_TUPLE,     /* (list)         "()" and "(x,)" included */
  TS_AST_LIST,      /* [list] */
  TS_AST_DICT,      /* {list: list2}  list: keys, list2: values */
  TS_AST_UNOP,      /* op a           op: "-", "+", "~", "not" */
  TS_AST_BINOP,     /* a op b         op: "+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<", ">>" */
  TS_AST_BOOLOP,    /* a op b         op: "and", "or" (left-associative chain) */
  TS_AST_COMPARE,   /* a op b         op: "<", "<=", ">", ">=", "==", "!=", "is", "is not", "in", "not in";
                       a chain "a < b < c" is parsed as BOOLOP and of two COMPAREs sharing b */
  TS_AST_IFEXP,     /* a if c else b  c: condition, a: true value, b: false value */
  TS_AST_LAMBDA,    /* not emitted by the printer: parse error */
  /* ---- statements */
  TS_AST_EXPR_STMT, /* a */
  TS_AST_ASSIGN,    /* list: targets (x = y = v has two), a: value (NULL for a bare
                       annotation "x : T"), b: annotation type or NULL */
  TS_AST_AUGASSIGN, /* a op= b        op: "+=", "-=", ... ; a: target, b: value */
  TS_AST_IF,        /* if c: body else: orelse; "elif" is an orelse holding one IF */
  TS_AST_WHILE,     /* while c: body */
  TS_AST_FOR,       /* for a in b: body   a: target (NAME, TUPLE of targets), b: iterable */
  TS_AST_RETURN,    /* a or NULL */
  TS_AST_BREAK,
  TS_AST_CONTINUE,
  TS_AST_PASS,
  TS_AST_RAISE,     /* a or NULL */
  TS_AST_ASSERT,    /* a: test, b: message or NULL */
  TS_AST_DEL,       /* list: targets */
  TS_AST_WITH,      /* with list: body   list: WITH_ITEM */
  TS_AST_WITH_ITEM, /* a as b            b: target or NULL */
  TS_AST_GLOBAL,    /* global names: list of NAME (parsed, rejected by the emitter) */
  TS_AST_IMPORT,    /* "import x" / "from x import y": str holds the whole line; the printer writes none in code/ */
  /* ---- definitions */
  TS_AST_DEF,       /* def str(list) -> a: body    list: PARAM, a: return type or NULL,
                       decorators: NAME/ATTR/CALL expressions after "@" */
  TS_AST_PARAM,     /* str: name, a: type or NULL, b: default or NULL; flags: TS_AST_F_KWONLY after "*",
                       TS_AST_F_VARARGS for "*args" */
  TS_AST_CLASS,     /* class str(list): body    list: base expressions */
  TS_AST_MODULE,    /* body: the file's top-level statements */
  TS_AST_KIND_COUNT
} ts_ast_kind;

enum {
  TS_AST_F_KWONLY = 1 << 0,
  TS_AST_F_VARARGS = 1 << 1,
};

typedef struct ts_ast ts_ast;

typedef struct ts_ast_list {
  ts_ast **v;
  uint32_t n;
} ts_ast_list;

struct ts_ast {
  ts_ast_kind kind;
  ts_srange range; /* the whole construct; for a call, from callee start to ")" */
  const char *str; /* NUL-terminated (NAME, ATTR name, STR value, KWARG, DEF, PARAM, CLASS names) */
  size_t len;      /* bytes of str */
  const char *op;  /* static spelling of an operator (UNOP, BINOP, BOOLOP, COMPARE, AUGASSIGN) */
  int64_t i;
  double f;
  unsigned flags;
  ts_ast *a, *b, *c;
  ts_ast_list list, list2, kw, decorators;
  ts_ast_list body, orelse;
};

const char *ts_ast_kind_name(ts_ast_kind k);

/* ---- lexer.c */

typedef enum ts_tok_kind {
  TS_TOK_EOF,
  TS_TOK_NEWLINE,
  TS_TOK_INDENT,
  TS_TOK_DEDENT,
  TS_TOK_NAME,   /* identifiers and keywords: the parser tells them apart */
  TS_TOK_INT,
  TS_TOK_FLOAT,
  TS_TOK_STR,    /* one literal; value decoded into str/len */
  TS_TOK_OP,     /* punctuation and operators; spelling in str */
} ts_tok_kind;

typedef struct ts_tok {
  ts_tok_kind kind;
  ts_srange range;
  const char *str; /* NAME/OP spelling, STR decoded value (NUL-terminated) */
  size_t len;
  int64_t i;
  double f;
} ts_tok;

/* Splits `src` into tokens with Python's rules: INDENT/DEDENT from leading
 * whitespace, no NEWLINE inside brackets or after a backslash, comments
 * dropped, blank lines ignored. Tokens and strings live in `arena`. NULL
 * and an error at the offending byte on failure (bad indentation,
 * unterminated string, bad escape, stray character, nesting over 200). */
ts_tok *ts_fe_lex(ts_arena *arena, const ts_fe_source *src, uint32_t *ntoks, ts_diag *d);

/* ---- parser.c */

/* Parses a whole file into a TS_AST_MODULE. NULL and an error ("expected
 * ')'") with line, column and caret on failure; nesting of expressions and
 * blocks over 200 levels is an error. */
ts_ast *ts_fe_parse(ts_arena *arena, const ts_fe_source *src, ts_diag *d);

/* Parses one expression (a type string from a schema or a pickle type tag,
 * "Dict[str, List[int]]"). */
ts_ast *ts_fe_parse_expr(ts_arena *arena, const ts_fe_source *src, ts_diag *d);

/* Writes the tree as an S-expression, one node per line with its kind,
 * spelling and line:col, for tests ("(CALL 3:8 (ATTR 3:8 ..."). */
void ts_ast_dump(ts_buf *b, const ts_ast *n, int indent);

#endif
