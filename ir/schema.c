/* ir/schema.c: FunctionSchema strings ("aten::add.Tensor(Tensor self,
 * Tensor other, *, Scalar alpha=1) -> Tensor") read into ts_schema and
 * written back the way PyTorch prints them.
 *
 * The grammar and its meaning follow PyTorch's schema parser: lowercase
 * names that are not built-in types are type variables, "[]" and "?" are
 * postfix, a sized list "int[N]" is only allowed at argument level, and a
 * single value given as default of an "int[N]" argument stands for N copies.
 * The printer reproduces PyTorch's spelling (floats with 17 significant
 * digits, "1." for integral floats, an int list whose elements are all equal
 * as one value) so that print(parse(s)) == s for every schema PyTorch prints.
 *
 * Errors stop the parse at the first problem: one diagnostic naming what was
 * expected, with a caret under the offending column. Everything lives in the
 * caller's arena, so the parser unwinds with longjmp and frees nothing. */
#include "ir.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bounds that keep hostile input cheap: nesting depth of types, and the
 * elements of a list default (an "int[N]" default expands to N values). */
enum { TS_SCHEMA_MAX_DEPTH = 32, TS_SCHEMA_MAX_LIST = 1024 };

typedef struct ts_sparser {
  ts_arena *arena;
  ts_diag *diag;
  const char *src; /* the whole schema text */
  size_t len;
  size_t pos; /* cursor: index into src */
  int depth;
  jmp_buf fail;
} ts_sparser;

/* Reports `fmt` at byte offset `at` and abandons the parse. */
static _Noreturn void ts_s_fail_at(ts_sparser *p, size_t at, const char *fmt, ...) TS_PRINTF(3, 4);

static _Noreturn void ts_s_fail_at(ts_sparser *p, size_t at, const char *fmt, ...) {
  if (p->diag) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int line = 1;
    size_t bol = 0;
    for (size_t i = 0; i < at && i < p->len; i++)
      if (p->src[i] == '\n') {
        line++;
        bol = i + 1;
      }
    ts_diag_error_at(p->diag, "<schema>", p->src, p->len, line, (int)(at - bol) + 1, "%s", msg);
  }
  longjmp(p->fail, 1);
}

static _Noreturn void ts_s_oom(ts_sparser *p) { ts_s_fail_at(p, p->pos, "out of memory"); }

static void *ts_s_alloc(ts_sparser *p, size_t size) {
  void *m = ts_arena_alloc(p->arena, size ? size : 1);
  if (!m)
    ts_s_oom(p);
  return m;
}

static const char *ts_s_strndup(ts_sparser *p, const char *s, size_t n) {
  char *c = ts_s_alloc(p, n + 1);
  memcpy(c, s, n);
  return c;
}

/* Checks a type constructor's result: NULL means the arena is exhausted. */
static const ts_type *ts_s_ty(ts_sparser *p, const ts_type *t) {
  if (!t)
    ts_s_oom(p);
  return t;
}

/* ------------------------------------------------------------------ lexing */

static bool ts_s_is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool ts_s_is_digit(char c) { return c >= '0' && c <= '9'; }
static bool ts_s_is_ident_char(char c) { return ts_s_is_ident_start(c) || ts_s_is_digit(c); }

static int ts_s_hex_digit(char c) {
  if (ts_s_is_digit(c))
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

static void ts_s_skip_ws(ts_sparser *p) {
  while (p->pos < p->len && (p->src[p->pos] == ' ' || p->src[p->pos] == '\t' || p->src[p->pos] == '\n' ||
                             p->src[p->pos] == '\r'))
    p->pos++;
}

/* The next significant character, 0 at the end. */
static char ts_s_peek(ts_sparser *p) {
  ts_s_skip_ws(p);
  return p->pos < p->len ? p->src[p->pos] : 0;
}

/* The character after the next significant one, past blanks (for "[" "]"). */
static char ts_s_peek2(ts_sparser *p) {
  ts_s_skip_ws(p);
  size_t i = p->pos + 1;
  while (i < p->len && (p->src[i] == ' ' || p->src[i] == '\t' || p->src[i] == '\n' || p->src[i] == '\r'))
    i++;
  return i < p->len ? p->src[i] : 0;
}

/* Consumes punctuation `tok` ("(", "->", "...") if it comes next. */
static bool ts_s_accept(ts_sparser *p, const char *tok) {
  ts_s_skip_ws(p);
  size_t n = strlen(tok);
  if (p->len - p->pos < n || memcmp(p->src + p->pos, tok, n) != 0)
    return false;
  /* "-" must not swallow the "-" of "->" */
  if (n == 1 && tok[0] == '-' && p->pos + 1 < p->len && p->src[p->pos + 1] == '>')
    return false;
  p->pos += n;
  return true;
}

/* Describes what is at the cursor, for "expected X, found Y" messages. */
static const char *ts_s_found(ts_sparser *p, char *buf, size_t size) {
  ts_s_skip_ws(p);
  if (p->pos >= p->len)
    return "end of schema";
  size_t n = 1;
  if (ts_s_is_ident_char(p->src[p->pos]))
    while (p->pos + n < p->len && n < 32 && ts_s_is_ident_char(p->src[p->pos + n]))
      n++;
  unsigned char c = (unsigned char)p->src[p->pos];
  if (n == 1 && (c < 0x20 || c >= 0x7f))
    snprintf(buf, size, "byte 0x%02x", c);
  else
    snprintf(buf, size, "'%.*s'", (int)n, p->src + p->pos);
  return buf;
}

static _Noreturn void ts_s_expected(ts_sparser *p, const char *what) {
  char buf[48];
  const char *found = ts_s_found(p, buf, sizeof buf);
  ts_s_fail_at(p, p->pos, "expected %s, found %s", what, found);
}

static void ts_s_expect(ts_sparser *p, const char *tok, const char *what) {
  if (!ts_s_accept(p, tok))
    ts_s_expected(p, what);
}

/* An identifier if one comes next: its start and length. */
static bool ts_s_ident(ts_sparser *p, const char **s, size_t *n) {
  ts_s_skip_ws(p);
  if (p->pos >= p->len || !ts_s_is_ident_start(p->src[p->pos]))
    return false;
  size_t b = p->pos;
  while (p->pos < p->len && ts_s_is_ident_char(p->src[p->pos]))
    p->pos++;
  *s = p->src + b;
  *n = p->pos - b;
  return true;
}

static void ts_s_expect_ident(ts_sparser *p, const char **s, size_t *n, const char *what) {
  if (!ts_s_ident(p, s, n))
    ts_s_expected(p, what);
}

static bool ts_s_eq(const char *s, size_t n, const char *word) { return strlen(word) == n && memcmp(s, word, n) == 0; }

/* Is the identifier `word` next (whole word)? Does not consume it. */
static bool ts_s_at_word(ts_sparser *p, const char *word) {
  ts_s_skip_ws(p);
  size_t n = strlen(word);
  return p->len - p->pos >= n && memcmp(p->src + p->pos, word, n) == 0 &&
         (p->pos + n == p->len || !ts_s_is_ident_char(p->src[p->pos + n]));
}

/* --------------------------------------------------------- growable arrays */

/* Arrays built while parsing live in the arena; growing abandons the old
 * block (a schema has few elements, so the waste is small). */
static void *ts_s_push(ts_sparser *p, void *arr, uint32_t *n, uint32_t *cap, size_t elem) {
  if (*n == *cap) {
    uint32_t c = *cap ? *cap * 2 : 4;
    arr = ts_arena_grow(p->arena, arr, *n, c, elem);
    if (!arr)
      ts_s_oom(p);
    *cap = c;
  }
  (*n)++;
  return arr;
}

/* -------------------------------------------------------------------- types */


typedef struct ts_sname {
  const char *name;
  ts_type_kind kind;
} ts_sname;

/* Built-in type names of schemas. "Dimname" is a str to the JIT. */
static const ts_sname ts_s_base_types[] = {
    {"Tensor", TS_TY_TENSOR},
    {"int", TS_TY_INT},
    {"float", TS_TY_FLOAT},
    {"complex", TS_TY_COMPLEX},
    {"bool", TS_TY_BOOL},
    {"str", TS_TY_STR},
    {"Dimname", TS_TY_STR},
    {"Scalar", TS_TY_NUMBER},
    {"ScalarType", TS_TY_SCALARTYPE},
    {"Layout", TS_TY_LAYOUT},
    {"MemoryFormat", TS_TY_MEMORYFORMAT},
    {"Device", TS_TY_DEVICE},
    {"Generator", TS_TY_GENERATOR},
    {"Storage", TS_TY_STORAGE},
    {"Stream", TS_TY_STREAM},
    {"QScheme", TS_TY_QSCHEME},
    {"Capsule", TS_TY_CAPSULE},
    {"Any", TS_TY_ANY},
    {"AnyClassType", TS_TY_ANYCLASS},
    {"AnyEnumType", TS_TY_ANYENUM},
    {"SymInt", TS_TY_SYMINT},
    {"AnyList", TS_TY_ANYLIST},
    {"AnyTuple", TS_TY_ANYTUPLE},
    {"None", TS_TY_NONE},
    {"NoneType", TS_TY_NONE},
};

static const ts_type *ts_s_type(ts_sparser *p, const ts_alias **alias);

static const char *const ts_s_wildcard = "*";

typedef struct ts_nameset {
  const char **v;
  uint32_t n, cap;
} ts_nameset;

static bool ts_s_has_wildcard(const ts_nameset *s) {
  for (uint32_t i = 0; i < s->n; i++)
    if (s->v[i] == ts_s_wildcard)
      return true;
  return false;
}

/* Adds a set name unless present: sets are sets, "(a|a)" is "(a)". Once the
 * wildcard is in, later names add nothing (as in PyTorch). */
static void ts_s_set_add(ts_sparser *p, ts_nameset *s, const char *name, size_t n) {
  if (ts_s_has_wildcard(s))
    return;
  for (uint32_t i = 0; i < s->n; i++)
    if (s->v[i] != ts_s_wildcard && ts_s_eq(name, n, s->v[i]))
      return;
  s->v = ts_s_push(p, s->v, &s->n, &s->cap, sizeof *s->v);
  s->v[s->n - 1] = name == ts_s_wildcard ? ts_s_wildcard : ts_s_strndup(p, name, n);
}

/* sets = ("*" | ident) ("|" ("*" | ident))* */
static void ts_s_alias_sets(ts_sparser *p, ts_nameset *s) {
  do {
    const char *name;
    size_t n;
    if (ts_s_accept(p, "*"))
      ts_s_set_add(p, s, ts_s_wildcard, 1);
    else if (ts_s_ident(p, &name, &n))
      ts_s_set_add(p, s, name, n);
    else
      ts_s_expected(p, "an alias set name or '*'");
  } while (ts_s_accept(p, "|"));
}

static bool ts_s_sets_equal(const ts_nameset *a, const ts_nameset *b) {
  if (a->n != b->n)
    return false;
  for (uint32_t i = 0; i < a->n; i++) {
    bool found = false;
    for (uint32_t j = 0; j < b->n && !found; j++)
      found = a->v[i] == b->v[j] ||
              (a->v[i] != ts_s_wildcard && b->v[j] != ts_s_wildcard && strcmp(a->v[i], b->v[j]) == 0);
    if (!found)
      return false;
  }
  return true;
}

/* alias = "(" sets "!"? ("->" sets)? ")" */
static const ts_alias *ts_s_alias(ts_sparser *p) {
  if (ts_s_peek(p) != '(')
    return NULL;
  ts_s_accept(p, "(");
  ts_nameset before = {0}, after = {0};
  ts_alias *a = ts_s_alloc(p, sizeof *a);
  ts_s_alias_sets(p, &before);
  a->is_write = ts_s_accept(p, "!");
  if (ts_s_accept(p, "->"))
    ts_s_alias_sets(p, &after);
  else
    after = before;
  ts_s_expect(p, ")", "')' to close the alias annotation");
  a->sets = before.v;
  a->nsets = before.n;
  /* after sets equal to the before sets share the array: printing shows
   * " -> ..." only when they differ */
  if (ts_s_sets_equal(&before, &after))
    after = before;
  a->after_sets = after.v;
  a->nafter = after.n;
  return a;
}

/* The alias of a list: its own annotation, holding the elements' one. An
 * element alias with no annotation on the list makes an empty container that
 * only carries the element's write flag, as PyTorch does for "Tensor(a!)[]". */
static const ts_alias *ts_s_list_alias(ts_sparser *p, const ts_alias *elem) {
  const ts_alias *own = ts_s_alias(p);
  if (!elem)
    return own;
  ts_alias *c = ts_s_alloc(p, sizeof *c);
  if (own)
    *c = *own;
  else
    c->is_write = elem->is_write;
  c->contained = elem;
  return c;
}

/* types = type ("," type)*   (inside the parentheses of a tuple or Union) */
static const ts_type *const *ts_s_type_list(ts_sparser *p, uint32_t *n, const char *close_what) {
  const ts_type **v = NULL;
  uint32_t cap = 0;
  *n = 0;
  if (ts_s_peek(p) != ')') {
    do {
      const ts_alias *ignored;
      const ts_type *t = ts_s_type(p, &ignored); /* PyTorch drops element aliases here */
      v = ts_s_push(p, v, n, &cap, sizeof *v);
      v[*n - 1] = t;
    } while (ts_s_accept(p, ","));
  }
  ts_s_expect(p, ")", close_what);
  return v;
}

/* base = "(" types? ")" | "Future" "(" type ")" | "RRef" "(" type ")"
 *      | "Dict" "(" type "," type ")" alias? | "Union" "(" types ")"
 *      | "__torch__" ("." ident)+ | ident alias? */
static const ts_type *ts_s_base_type(ts_sparser *p, const ts_alias **alias) {
  const ts_alias *ignored;
  *alias = NULL;
  if (ts_s_accept(p, "(")) {
    uint32_t n;
    const ts_type *const *elems = ts_s_type_list(p, &n, "')' to close the tuple type");
    return ts_s_ty(p, ts_type_tuple(p->arena, n, elems));
  }
  size_t at = (ts_s_skip_ws(p), p->pos);
  const char *s;
  size_t n;
  ts_s_expect_ident(p, &s, &n, "a type");
  if (ts_s_eq(s, n, "Future") || ts_s_eq(s, n, "RRef")) {
    ts_s_expect(p, "(", "'(' after Future/RRef");
    const ts_type *e = ts_s_type(p, &ignored);
    ts_s_expect(p, ")", "')' to close the type");
    return ts_s_ty(p, s[0] == 'F' ? ts_type_future(p->arena, e) : ts_type_rref(p->arena, e));
  }
  if (ts_s_eq(s, n, "Dict")) {
    ts_s_expect(p, "(", "'(' after Dict");
    const ts_type *k = ts_s_type(p, &ignored);
    ts_s_expect(p, ",", "',' between the key and value types of Dict");
    const ts_type *v = ts_s_type(p, &ignored);
    ts_s_expect(p, ")", "')' to close Dict");
    *alias = ts_s_alias(p);
    return ts_s_ty(p, ts_type_dict(p->arena, k, v));
  }
  if (ts_s_eq(s, n, "Union")) {
    ts_s_expect(p, "(", "'(' after Union");
    uint32_t ne;
    const ts_type *const *elems = ts_s_type_list(p, &ne, "')' to close Union");
    if (ne == 0)
      ts_s_fail_at(p, at, "Union needs at least one type");
    return ts_s_ty(p, ts_type_union(p->arena, ne, elems));
  }
  if (ts_s_eq(s, n, "__torch__")) {
    /* a class: "__torch__.torch.classes.ns.Name" */
    if (p->pos >= p->len || p->src[p->pos] != '.')
      ts_s_expected(p, "'.' after __torch__");
    while (p->pos < p->len && p->src[p->pos] == '.') {
      p->pos++;
      if (p->pos >= p->len || !ts_s_is_ident_start(p->src[p->pos]))
        ts_s_expected(p, "a name after '.' in a class type");
      const char *part;
      size_t pn;
      ts_s_ident(p, &part, &pn);
    }
    return ts_s_ty(p, ts_type_class(p->arena, p->src + at, p->pos - at));
  }
  const ts_type *t = NULL;
  for (size_t i = 0; !t && i < sizeof ts_s_base_types / sizeof *ts_s_base_types; i++)
    if (ts_s_eq(s, n, ts_s_base_types[i].name))
      t = ts_type_leaf(ts_s_base_types[i].kind);
  if (!t) {
    /* lowercase names that are no built-in type are type variables */
    if (s[0] < 'a' || s[0] > 'z')
      ts_s_fail_at(p, at, "unknown type '%.*s'", (int)(n > 40 ? 40 : n), s);
    t = ts_s_ty(p, ts_type_var(p->arena, s, n));
  }
  *alias = ts_s_alias(p);
  return t;
}

/* type = base ("[" "]" alias? | "?")* */
static const ts_type *ts_s_type(ts_sparser *p, const ts_alias **alias) {
  if (++p->depth > TS_SCHEMA_MAX_DEPTH)
    ts_s_fail_at(p, p->pos, "type nested too deeply");
  const ts_type *t = ts_s_base_type(p, alias);
  for (;;) {
    if (ts_s_peek(p) == '[' && ts_s_peek2(p) == ']') {
      ts_s_accept(p, "[");
      ts_s_accept(p, "]");
      t = ts_s_ty(p, ts_type_list(p->arena, t));
      *alias = ts_s_list_alias(p, *alias);
    } else if (ts_s_accept(p, "?")) {
      t = ts_s_ty(p, ts_type_optional(p->arena, t));
    } else {
      break;
    }
  }
  p->depth--;
  return t;
}

/* ----------------------------------------------------------------- defaults */

/* The kind a default is read as: ScalarType, Layout, MemoryFormat and Storage
 * are ints to the JIT ("ScalarType? dtype=4"). */
static ts_type_kind ts_s_value_kind(const ts_type *t) {
  switch (t->kind) {
  case TS_TY_SCALARTYPE:
  case TS_TY_LAYOUT:
  case TS_TY_MEMORYFORMAT:
  case TS_TY_STORAGE:
  case TS_TY_SYMINT:
    return TS_TY_INT;
  default:
    return t->kind;
  }
}

/* Reads a string literal ('...' or "...") with C escapes into `def`. */
static void ts_s_string(ts_sparser *p, ts_default *def) {
  size_t start = p->pos;
  char q = p->src[p->pos++];
  /* find the end first: the text is never shorter than what it decodes to */
  size_t end = p->pos;
  while (end < p->len && p->src[end] != q)
    end += p->src[end] == '\\' ? 2 : 1;
  if (end >= p->len)
    ts_s_fail_at(p, start, "unterminated string literal");
  char *out = ts_s_alloc(p, end - p->pos + 1);
  size_t n = 0;
  for (;;) {
    char c = p->src[p->pos++];
    if (c == q)
      break;
    if (c != '\\') {
      out[n++] = c;
      continue;
    }
    size_t esc = p->pos - 1;
    c = p->src[p->pos++];
    switch (c) {
    case 'a': out[n++] = '\a'; break;
    case 'b': out[n++] = '\b'; break;
    case 'f': out[n++] = '\f'; break;
    case 'n': out[n++] = '\n'; break;
    case 'r': out[n++] = '\r'; break;
    case 't': out[n++] = '\t'; break;
    case 'v': out[n++] = '\v'; break;
    case '\\': case '\'': case '"': out[n++] = c; break;
    case 'x': {
      int v = 0, k = 0;
      for (; k < 2 && p->pos < p->len; k++, p->pos++) {
        int d = ts_s_hex_digit(p->src[p->pos]);
        if (d < 0)
          break;
        v = v * 16 + d;
      }
      if (k == 0)
        ts_s_fail_at(p, esc, "expected hex digits after '\\x'");
      out[n++] = (char)v;
      break;
    }
    default:
      if (c >= '0' && c <= '7') {
        int v = c - '0';
        for (int k = 1; k < 3 && p->pos < p->len && p->src[p->pos] >= '0' && p->src[p->pos] <= '7'; k++)
          v = v * 8 + (p->src[p->pos++] - '0');
        if (v > 255)
          ts_s_fail_at(p, esc, "octal escape out of range");
        out[n++] = (char)v;
        break;
      }
      ts_s_fail_at(p, esc, "unknown escape sequence in string literal");
    }
  }
  def->kind = TS_DEF_STR;
  def->len = n;
  def->u.s = out;
}

/* Reads a number, "-" already consumed when `neg`. Floats when `kind` is
 * float or the text has a '.' or an exponent, else a 64-bit int. */
static void ts_s_number(ts_sparser *p, ts_type_kind kind, bool neg, size_t start, ts_default *def) {
  ts_s_skip_ws(p);
  size_t b = p->pos;
  bool is_float = false;
  while (p->pos < p->len && ts_s_is_digit(p->src[p->pos]))
    p->pos++;
  if (p->pos == b)
    ts_s_expected(p, "a default value");
  if (p->pos < p->len && p->src[p->pos] == '.') {
    is_float = true;
    p->pos++;
    while (p->pos < p->len && ts_s_is_digit(p->src[p->pos]))
      p->pos++;
  }
  if (p->pos < p->len && (p->src[p->pos] == 'e' || p->src[p->pos] == 'E')) {
    size_t e = p->pos + 1;
    if (e < p->len && (p->src[e] == '+' || p->src[e] == '-'))
      e++;
    if (e < p->len && ts_s_is_digit(p->src[e])) {
      is_float = true;
      p->pos = e;
      while (p->pos < p->len && ts_s_is_digit(p->src[p->pos]))
        p->pos++;
    }
  }
  if (p->pos < p->len && (ts_s_is_ident_char(p->src[p->pos]) || p->src[p->pos] == '.'))
    ts_s_fail_at(p, start, "malformed number");
  char buf[72];
  size_t n = p->pos - b;
  if (n + 2 > sizeof buf)
    ts_s_fail_at(p, start, "number too long");
  buf[0] = '-';
  memcpy(buf + 1, p->src + b, n);
  buf[n + 1] = 0;
  const char *text = neg ? buf : buf + 1;
  errno = 0;
  if (is_float || kind == TS_TY_FLOAT) {
    def->kind = TS_DEF_FLOAT;
    def->u.f = strtod(text, NULL);
  } else {
    def->kind = TS_DEF_INT;
    long long v = strtoll(text, NULL, 10);
    if (errno == ERANGE)
      ts_s_fail_at(p, start, "integer default out of range");
    def->u.i = v;
  }
}

/* const = "None" | "True" | "False" | string | "-"? (number | "inf" | "nan") | ident */
static ts_default ts_s_const(ts_sparser *p, ts_type_kind kind) {
  ts_default def = {.kind = TS_DEF_NONE_VALUE};
  char c = ts_s_peek(p);
  size_t start = p->pos;
  if (c == '"' || c == '\'') {
    ts_s_string(p, &def);
    return def;
  }
  bool neg = ts_s_accept(p, "-");
  const char *s;
  size_t n;
  if (ts_s_ident(p, &s, &n)) {
    if (ts_s_eq(s, n, "inf") || ts_s_eq(s, n, "nan")) {
      def.kind = TS_DEF_FLOAT;
      def.u.f = s[0] == 'i' ? HUGE_VAL : NAN;
      if (neg)
        def.u.f = -def.u.f;
    } else if (neg) {
      ts_s_fail_at(p, start, "expected a number after '-'");
    } else if (ts_s_eq(s, n, "None")) {
      def.kind = TS_DEF_NONE_VALUE;
    } else if (ts_s_eq(s, n, "True") || ts_s_eq(s, n, "False")) {
      def.kind = TS_DEF_BOOL;
      def.u.b = s[0] == 'T';
    } else {
      /* contiguous_format, Mean, long, strided: enum names kept as text */
      def.kind = TS_DEF_ENUM;
      def.len = n;
      def.u.s = ts_s_strndup(p, s, n);
    }
    return def;
  }
  ts_s_number(p, kind, neg, start, &def);
  return def;
}

/* Makes a list default of `n` values of list element kind `ek` from the
 * single constants in `v` (ints widen to floats in a float list). */
static void ts_s_make_list(ts_sparser *p, ts_type_kind ek, const ts_default *v, uint32_t n, size_t at,
                           ts_default *def) {
  def->len = n;
  if (ek == TS_TY_FLOAT) {
    double *fs = ts_s_alloc(p, n * sizeof *fs);
    for (uint32_t i = 0; i < n; i++) {
      if (v[i].kind != TS_DEF_FLOAT && v[i].kind != TS_DEF_INT)
        ts_s_fail_at(p, at, "expected numbers in a float list default");
      fs[i] = v[i].kind == TS_DEF_FLOAT ? v[i].u.f : (double)v[i].u.i;
    }
    def->kind = TS_DEF_FLOATS;
    def->u.fs = fs;
  } else if (ek == TS_TY_BOOL) {
    bool *bs = ts_s_alloc(p, n * sizeof *bs);
    for (uint32_t i = 0; i < n; i++) {
      if (v[i].kind != TS_DEF_BOOL)
        ts_s_fail_at(p, at, "expected True or False in a bool list default");
      bs[i] = v[i].u.b;
    }
    def->kind = TS_DEF_BOOLS;
    def->u.bs = bs;
  } else if (ek == TS_TY_INT || n == 0) {
    /* an empty list of any element type reads as an empty int list */
    int64_t *is = ts_s_alloc(p, n * sizeof *is);
    for (uint32_t i = 0; i < n; i++) {
      if (v[i].kind != TS_DEF_INT)
        ts_s_fail_at(p, at, "expected integers in an int list default");
      is[i] = v[i].u.i;
    }
    def->kind = TS_DEF_INTS;
    def->u.is = is;
  } else {
    ts_s_fail_at(p, at, "list defaults are only supported for int, float and bool lists");
  }
}

/* list = "[" (const ("," const)*)? "]" */
static void ts_s_const_list(ts_sparser *p, ts_type_kind ek, ts_default *def) {
  size_t at = p->pos;
  ts_s_expect(p, "[", "'[' to start a list default");
  ts_default *v = NULL;
  uint32_t n = 0, cap = 0;
  if (ts_s_peek(p) != ']') {
    do {
      if (n == TS_SCHEMA_MAX_LIST)
        ts_s_fail_at(p, p->pos, "list default too long");
      ts_default c = ts_s_const(p, ek);
      v = ts_s_push(p, v, &n, &cap, sizeof *v);
      v[n - 1] = c;
    } while (ts_s_accept(p, ","));
  }
  ts_s_expect(p, "]", "']' to close the list default");
  ts_s_make_list(p, ek, v, n, at, def);
}

/* default = const | list   (which ones an argument takes depends on its type) */
static void ts_s_default(ts_sparser *p, ts_arg *arg) {
  const ts_type *t = arg->type;
  ts_type_kind k = ts_s_value_kind(t);
  size_t at = (ts_s_skip_ws(p), p->pos);
  ts_default *def = &arg->def;
  arg->has_default = true;
  if (ts_s_at_word(p, "None")) {
    ts_s_const(p, k);
    def->kind = TS_DEF_NONE_VALUE;
    return;
  }
  switch (k) {
  case TS_TY_TENSOR:
  case TS_TY_GENERATOR:
    ts_s_expected(p, "None (the only default of this type)");
  case TS_TY_LIST: {
    ts_type_kind ek = ts_s_value_kind(t->elems[0]);
    if (ts_s_peek(p) == '[') {
      ts_s_const_list(p, ek, def);
    } else if (arg->list_len >= 0) {
      /* "int[2] stride=1" means [1, 1] */
      ts_default one = ts_s_const(p, ek);
      ts_default *v = ts_s_alloc(p, (size_t)arg->list_len * sizeof *v);
      for (int32_t i = 0; i < arg->list_len; i++)
        v[i] = one;
      ts_s_make_list(p, ek, v, (uint32_t)arg->list_len, at, def);
    } else {
      ts_s_expected(p, "'[' to start a list default");
    }
    return;
  }
  case TS_TY_OPTIONAL:
    if (ts_s_peek(p) == '[' && t->elems[0]->kind == TS_TY_LIST) {
      ts_s_const_list(p, ts_s_value_kind(t->elems[0]->elems[0]), def);
      return;
    }
    *def = ts_s_const(p, k);
    return;
  case TS_TY_DEVICE:
    if (ts_s_peek(p) != '"' && ts_s_peek(p) != '\'')
      ts_s_expected(p, "a string literal naming a device");
    ts_s_string(p, def);
    return;
  case TS_TY_STR:
  case TS_TY_NUMBER:
  case TS_TY_INT:
  case TS_TY_FLOAT:
  case TS_TY_COMPLEX:
  case TS_TY_BOOL:
    *def = ts_s_const(p, k);
    return;
  default:
    ts_s_fail_at(p, at, "arguments of this type cannot have a default value");
  }
}

/* ---------------------------------------------------------------- arguments */

/* arg = type ("[" number "]" alias? "?"?)? ident ("=" default)?   (arguments)
 * ret = type ("[" number "]" alias? "?"?)? ident?                 (returns) */
static void ts_s_arg(ts_sparser *p, ts_arg *arg, bool is_return, bool kwarg_only) {
  const ts_alias *alias;
  const ts_type *t = ts_s_type(p, &alias);
  arg->list_len = -1;
  if (ts_s_accept(p, "[")) {
    ts_s_skip_ws(p);
    size_t b = p->pos;
    int64_t len = 0;
    while (p->pos < p->len && ts_s_is_digit(p->src[p->pos])) {
      len = len * 10 + (p->src[p->pos++] - '0');
      if (len > TS_SCHEMA_MAX_LIST)
        ts_s_fail_at(p, b, "list size too large (at most %d)", TS_SCHEMA_MAX_LIST);
    }
    if (p->pos == b)
      ts_s_expected(p, "a list size or ']'");
    ts_s_expect(p, "]", "']' after the list size");
    arg->list_len = (int32_t)len;
    t = ts_s_ty(p, ts_type_list(p->arena, t));
    alias = ts_s_list_alias(p, alias);
    if (ts_s_accept(p, "?"))
      t = ts_s_ty(p, ts_type_optional(p->arena, t));
  }
  arg->type = t;
  arg->alias = alias;
  arg->kwarg_only = kwarg_only;
  const char *s;
  size_t n;
  if (is_return) {
    arg->name = ts_s_ident(p, &s, &n) ? ts_s_strndup(p, s, n) : "";
    return;
  }
  ts_s_expect_ident(p, &s, &n, "an argument name");
  arg->name = ts_s_strndup(p, s, n);
  if (ts_s_accept(p, "="))
    ts_s_default(p, arg);
}

typedef struct ts_argvec {
  ts_arg *v;
  uint32_t n, cap;
} ts_argvec;

static ts_arg *ts_s_new_arg(ts_sparser *p, ts_argvec *a) {
  a->v = ts_s_push(p, a->v, &a->n, &a->cap, sizeof *a->v);
  ts_arg *arg = &a->v[a->n - 1];
  memset(arg, 0, sizeof *arg);
  return arg;
}

/* params = "(" (param ("," param)*)? ")"     param = "*" | "..." | arg */
static void ts_s_params(ts_sparser *p, ts_schema *s, ts_argvec *args) {
  ts_s_expect(p, "(", "'(' to start the argument list");
  bool kwarg_only = false;
  if (ts_s_peek(p) != ')') {
    do {
      if (s->vararg)
        ts_s_fail_at(p, p->pos, "'...' must be the last element of the argument list");
      if (ts_s_accept(p, "..."))
        s->vararg = true;
      else if (ts_s_accept(p, "*"))
        kwarg_only = true;
      else
        ts_s_arg(p, ts_s_new_arg(p, args), false, kwarg_only);
    } while (ts_s_accept(p, ","));
  }
  ts_s_expect(p, ")", "')' or ',' in the argument list");
}

/* returns = "..." | "(" (("..." | ret) ("," ("..." | ret))*)? ")" | ret */
static void ts_s_returns(ts_sparser *p, ts_schema *s, ts_argvec *rets) {
  if (ts_s_accept(p, "...")) {
    s->varret = true;
    return;
  }
  if (!ts_s_accept(p, "(")) {
    ts_s_arg(p, ts_s_new_arg(p, rets), true, false);
    return;
  }
  if (ts_s_peek(p) != ')') {
    do {
      if (s->varret)
        ts_s_fail_at(p, p->pos, "'...' must be the last element of the return list");
      if (ts_s_accept(p, "..."))
        s->varret = true;
      else
        ts_s_arg(p, ts_s_new_arg(p, rets), true, false);
    } while (ts_s_accept(p, ","));
  }
  ts_s_expect(p, ")", "')' or ',' in the return list");
}

/* schema = ident ("::" ident)? ("." ident)? params "->" returns */
static const ts_schema *ts_s_schema(ts_sparser *p) {
  ts_schema *s = ts_s_alloc(p, sizeof *s);
  s->text = ts_s_strndup(p, p->src, p->len);
  const char *id;
  size_t n;
  size_t b = (ts_s_skip_ws(p), p->pos);
  ts_s_expect_ident(p, &id, &n, "an operator name");
  if (p->pos + 1 < p->len && p->src[p->pos] == ':' && p->src[p->pos + 1] == ':') {
    p->pos += 2;
    if (p->pos >= p->len || !ts_s_is_ident_start(p->src[p->pos]))
      ts_s_expected(p, "a name after '::'");
    ts_s_ident(p, &id, &n);
  }
  s->name = ts_s_strndup(p, p->src + b, p->pos - b);
  s->overload = "";
  if (p->pos < p->len && p->src[p->pos] == '.') {
    p->pos++;
    if (p->pos >= p->len || !ts_s_is_ident_start(p->src[p->pos]))
      ts_s_expected(p, "an overload name after '.'");
    ts_s_ident(p, &id, &n);
    s->overload = ts_s_strndup(p, id, n);
  }
  ts_argvec args = {0}, rets = {0};
  ts_s_params(p, s, &args);
  ts_s_expect(p, "->", "'->' before the returns");
  ts_s_returns(p, s, &rets);
  if (ts_s_peek(p) != 0)
    ts_s_expected(p, "the end of the schema");
  s->args = args.v;
  s->nargs = args.n;
  s->rets = rets.v;
  s->nrets = rets.n;
  return s;
}

const ts_schema *ts_schema_parse(ts_arena *a, const char *text, ts_diag *d) {
  if (!text) {
    if (d)
      ts_diag_error(d, "no schema text");
    return NULL;
  }
  ts_sparser p = {.arena = a, .diag = d, .src = text, .len = strlen(text)};
  if (setjmp(p.fail))
    return NULL;
  return ts_s_schema(&p);
}

/* ----------------------------------------------------------------- printing */

static void ts_alias_sets_print(ts_buf *b, const char *const *sets, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    if (i)
      ts_buf_putc(b, '|');
    ts_buf_puts(b, sets[i]);
  }
}

/* "(a)", "(a!)", "(a -> *)": after sets only when they differ. */
static void ts_alias_print(ts_buf *b, const ts_alias *a) {
  ts_buf_putc(b, '(');
  ts_alias_sets_print(b, a->sets, a->nsets);
  if (a->is_write)
    ts_buf_putc(b, '!');
  if (a->after_sets != a->sets || a->nafter != a->nsets) {
    ts_buf_puts(b, " -> ");
    ts_alias_sets_print(b, a->after_sets, a->nafter);
  }
  ts_buf_putc(b, ')');
}

static void ts_default_print(ts_buf *b, const ts_arg *arg) {
  const ts_default *d = &arg->def;
  switch (d->kind) {
  case TS_DEF_NONE_VALUE:
    ts_buf_puts(b, "None");
    return;
  case TS_DEF_BOOL:
    ts_buf_puts(b, d->u.b ? "True" : "False");
    return;
  case TS_DEF_INT:
    ts_buf_printf(b, "%lld", (long long)d->u.i);
    return;
  case TS_DEF_FLOAT:
    ts_buf_put_double(b, d->u.f);
    return;
  case TS_DEF_STR:
    ts_buf_put_quoted(b, d->u.s, d->len);
    return;
  case TS_DEF_ENUM:
    ts_buf_putn(b, d->u.s, d->len);
    return;
  case TS_DEF_INTS: {
    /* PyTorch writes an int list whose values are all equal as one value,
     * as native_functions.yaml spells "int[2] stride=1". It does so for any
     * length; we only do it where reading it back gives the same list (the
     * size is N of int[N]), which changes no schema PyTorch registers. */
    bool same = d->len > 1 && (int64_t)d->len == arg->list_len && arg->type->kind == TS_TY_LIST &&
                ts_s_value_kind(arg->type->elems[0]) == TS_TY_INT;
    for (size_t i = 1; same && i < d->len; i++)
      same = d->u.is[i] == d->u.is[0];
    if (same) {
      ts_buf_printf(b, "%lld", (long long)d->u.is[0]);
      return;
    }
    ts_buf_putc(b, '[');
    for (size_t i = 0; i < d->len; i++)
      ts_buf_printf(b, "%s%lld", i ? ", " : "", (long long)d->u.is[i]);
    ts_buf_putc(b, ']');
    return;
  }
  case TS_DEF_FLOATS:
    ts_buf_putc(b, '[');
    for (size_t i = 0; i < d->len; i++) {
      if (i)
        ts_buf_puts(b, ", ");
      ts_buf_put_double(b, d->u.fs[i]);
    }
    ts_buf_putc(b, ']');
    return;
  case TS_DEF_BOOLS:
    ts_buf_putc(b, '[');
    for (size_t i = 0; i < d->len; i++)
      ts_buf_printf(b, "%s%s", i ? ", " : "", d->u.bs[i] ? "True" : "False");
    ts_buf_putc(b, ']');
    return;
  }
}

/* One argument or return: the type with its alias annotation (a list's
 * element alias sits before "[]"; "?" always comes last), the name, the
 * default. */
static void ts_arg_print(ts_buf *b, const ts_arg *arg) {
  const ts_type *t = arg->type;
  bool opt = t->kind == TS_TY_OPTIONAL;
  const ts_type *u = opt ? t->elems[0] : t;
  if (u->kind == TS_TY_LIST) {
    ts_type_print(b, u->elems[0]);
    if (arg->alias && arg->alias->contained)
      ts_alias_print(b, arg->alias->contained);
    if (arg->list_len >= 0)
      ts_buf_printf(b, "[%d]", arg->list_len);
    else
      ts_buf_puts(b, "[]");
  } else {
    ts_type_print(b, u);
  }
  if (arg->alias && arg->alias->nsets)
    ts_alias_print(b, arg->alias);
  if (opt)
    ts_buf_putc(b, '?');
  if (arg->name && arg->name[0]) {
    ts_buf_putc(b, ' ');
    ts_buf_puts(b, arg->name);
  }
  if (arg->has_default) {
    ts_buf_putc(b, '=');
    ts_default_print(b, arg);
  }
}

void ts_schema_print(ts_buf *b, const ts_schema *s) {
  ts_buf_puts(b, s->name);
  if (s->overload && s->overload[0]) {
    ts_buf_putc(b, '.');
    ts_buf_puts(b, s->overload);
  }
  ts_buf_putc(b, '(');
  bool seen_kwarg_only = false;
  for (uint32_t i = 0; i < s->nargs; i++) {
    if (i)
      ts_buf_puts(b, ", ");
    if (s->args[i].kwarg_only && !seen_kwarg_only) {
      ts_buf_puts(b, "*, ");
      seen_kwarg_only = true;
    }
    ts_arg_print(b, &s->args[i]);
  }
  if (s->vararg)
    ts_buf_puts(b, s->nargs ? ", ..." : "...");
  ts_buf_puts(b, ") -> ");
  /* No parentheses around one plain return or a bare "...". A single
   * return whose spelling starts with "(" (a tuple, a list of tuples) gets
   * them anyway, or it would read back as a return list. */
  bool paren = !((s->nrets == 1 && !s->varret) || (s->nrets == 0 && s->varret));
  if (s->nrets == 1 && !paren) {
    const ts_type *t = s->rets[0].type;
    while (t->kind == TS_TY_OPTIONAL || t->kind == TS_TY_LIST)
      t = t->elems[0];
    paren = t->kind == TS_TY_TUPLE;
  }
  if (paren)
    ts_buf_putc(b, '(');
  for (uint32_t i = 0; i < s->nrets; i++) {
    if (i)
      ts_buf_puts(b, ", ");
    ts_arg_print(b, &s->rets[i]);
  }
  if (s->varret)
    ts_buf_puts(b, s->nrets ? ", ..." : "...");
  if (paren)
    ts_buf_putc(b, ')');
}
