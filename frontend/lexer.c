/* frontend/lexer.c: splits the Python source PyTorch's printer writes under
 * code/ into tokens, with Python's rules for lines and indentation.
 *
 * Indentation: a stack of levels; a deeper line pushes a level (INDENT), a
 * shallower one pops levels (one DEDENT each) and must land on a level on
 * the stack. A tab advances to the next multiple of 8; as in CPython, the
 * levels are also measured with a tab as one column, and a line whose order
 * against the top level differs between the two measures is an error (tabs
 * and spaces mixed inconsistently). Inside (), [] and {} and after a
 * backslash at the end of a line, newlines are plain whitespace. Lines with
 * only blanks or a comment yield nothing. "\r\n" is a newline; a lone "\r"
 * is whitespace. Brackets must pair up: a closer that matches no opener, or
 * an opener still open at the end of the file, is an error here (the
 * parser reports a missing closer inside the file).
 *
 * Every token takes at least one byte of the source except NEWLINE (one per
 * line), INDENT (one per line), DEDENT (at most one per INDENT) and EOF, so
 * the token count is bounded by about three times the source length. */
#include "ast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TS_L_MAX_BRACKETS 200
#define TS_L_MAX_INDENT 200
#define TS_L_MAX_NUMBER 400

typedef struct ts_l {
  ts_arena *arena;
  const ts_fe_source *src;
  const char *s;
  uint32_t n;
  uint32_t pos;
  int32_t line;        /* line of `pos` */
  uint32_t line_start; /* offset of the first byte of that line */
  ts_diag *d;
  ts_tok *toks;
  uint32_t ntoks, cap;
  int depth; /* open brackets */
  uint32_t open[TS_L_MAX_BRACKETS]; /* their tokens' indices */
  int nindent;
  int indent[TS_L_MAX_INDENT + 1];    /* tab = to the next multiple of 8 */
  int altindent[TS_L_MAX_INDENT + 1]; /* tab = 1 */
  bool line_has_tok;                  /* a token since the last NEWLINE */
  bool failed;
} ts_l;

/* Operators, longest first so the first match is the longest. */
static const char *const ts_l_ops[] = {
    "**=", "//=", ">>=", "<<=", "...", "->", "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "+=", "-=",
    "*=",  "/=",  "%=",  "&=",  "|=",  "^=", "@=", ":=", "+",  "-",  "*",  "/",  "%",  "@",  "&",  "|",
    "^",   "~",   "<",   ">",   "(",   ")",  "[",  "]",  "{",  "}",  ",",  ":",  ".",  ";",  "=",
};

/* A range of bytes [start, end) that starts on the current line. */
static ts_srange ts_l_range(const ts_l *l, uint32_t start, uint32_t end) {
  ts_srange r;
  r.src = l->src;
  r.start = start;
  r.end = end;
  r.line = l->line;
  r.col = (int32_t)(start - l->line_start) + 1;
  return r;
}

/* The range of byte `off` at or after the current line start (for errors
 * inside tokens that span lines). */
static ts_srange ts_l_range_at(const ts_l *l, uint32_t off) {
  ts_srange r = ts_l_range(l, off, off < l->n ? off + 1 : off);
  uint32_t ls = l->line_start;
  for (uint32_t i = l->line_start; i < off && i < l->n; i++) {
    if (l->s[i] == '\n') {
      r.line++;
      ls = i + 1;
    }
  }
  r.col = (int32_t)(off - ls) + 1;
  return r;
}

static void ts_l_error(ts_l *l, ts_srange r, const char *fmt, ...) TS_PRINTF(3, 4);
static void ts_l_error(ts_l *l, ts_srange r, const char *fmt, ...) {
  if (l->failed)
    return;
  l->failed = true;
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ts_fe_error_at(l->d, r, "%s", msg);
}

static ts_tok *ts_l_push(ts_l *l, ts_tok_kind kind, ts_srange r) {
  if (l->failed)
    return NULL;
  if (l->ntoks == l->cap) {
    uint32_t ncap = l->cap ? l->cap * 2 : 256;
    if (ncap < l->cap) {
      ts_l_error(l, r, "too many tokens");
      return NULL;
    }
    ts_tok *t = ts_arena_grow(l->arena, l->toks, l->ntoks, ncap, sizeof *t);
    if (!t) {
      ts_l_error(l, r, "out of memory");
      return NULL;
    }
    l->toks = t;
    l->cap = ncap;
  }
  ts_tok *t = &l->toks[l->ntoks++];
  memset(t, 0, sizeof *t);
  t->kind = kind;
  t->range = r;
  if (kind != TS_TOK_NEWLINE && kind != TS_TOK_INDENT && kind != TS_TOK_DEDENT && kind != TS_TOK_EOF)
    l->line_has_tok = true;
  return t;
}

static bool ts_l_is_id_start(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool ts_l_is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static bool ts_l_is_id(unsigned char c) { return ts_l_is_id_start(c) || ts_l_is_digit(c); }

static int ts_l_hexval(unsigned char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Length of the newline at `i`: 1 for "\n", 2 for "\r\n", 0 for none. */
static uint32_t ts_l_newline_at(const ts_l *l, uint32_t i) {
  if (i < l->n && l->s[i] == '\n')
    return 1;
  if (i + 1 < l->n && l->s[i] == '\r' && l->s[i + 1] == '\n')
    return 2;
  return 0;
}

/* Moves past a newline of `nl` bytes at pos. */
static void ts_l_take_newline(ts_l *l, uint32_t nl) {
  l->pos += nl;
  l->line++;
  l->line_start = l->pos;
}

/* Where tokens at the end of the input point: the end of the last line
 * (so the quoted source line is not an empty one). */
static ts_srange ts_l_eof_range(const ts_l *l) {
  uint32_t off = l->n;
  if (off > 0 && l->s[off - 1] == '\n') {
    off--;
    if (off > 0 && l->s[off - 1] == '\r')
      off--;
    /* the lexer has moved past that last newline: point at the line it ends */
    uint32_t ls = off;
    while (ls > 0 && l->s[ls - 1] != '\n')
      ls--;
    ts_srange r;
    r.src = l->src;
    r.start = r.end = off;
    r.line = l->line - 1;
    r.col = (int32_t)(off - ls) + 1;
    return r;
  }
  return ts_l_range(l, off, off);
}

/* Reads the leading whitespace of a line outside brackets and emits
 * INDENT/DEDENT. Returns false at the end of the input; skips blank and
 * comment-only lines. */
static bool ts_l_indentation(ts_l *l) {
  for (;;) {
    int col = 0, alt = 0;
    uint32_t p = l->pos;
    for (; p < l->n; p++) {
      char c = l->s[p];
      if (c == ' ') {
        col++;
        alt++;
      } else if (c == '\t') {
        col = (col / 8 + 1) * 8;
        alt++;
      } else if (c == '\f') {
        col = alt = 0;
      } else if (c == '\r' && !ts_l_newline_at(l, p)) {
        /* a lone CR is a blank of no width */
      } else {
        break;
      }
      if (col > 100000) /* keeps the arithmetic in range on hostile input */
        col = alt = 100000;
    }
    if (p >= l->n) {
      l->pos = p;
      return false;
    }
    char c = l->s[p];
    uint32_t nl = ts_l_newline_at(l, p);
    if (c == '#' || nl) {
      /* a blank or comment line: skip it whole */
      while (p < l->n && l->s[p] != '\n')
        p++;
      if (p >= l->n) {
        l->pos = p;
        return false;
      }
      l->pos = p;
      ts_l_take_newline(l, 1);
      continue;
    }
    l->pos = p;
    int top = l->indent[l->nindent - 1], alttop = l->altindent[l->nindent - 1];
    if (col > top) {
      if (alt <= alttop) {
        ts_l_error(l, ts_l_range(l, p, p + 1), "inconsistent use of tabs and spaces in indentation");
        return false;
      }
      if (l->nindent > TS_L_MAX_INDENT) {
        ts_l_error(l, ts_l_range(l, p, p + 1), "too many levels of indentation (limit %d)", TS_L_MAX_INDENT);
        return false;
      }
      l->indent[l->nindent] = col;
      l->altindent[l->nindent] = alt;
      l->nindent++;
      ts_l_push(l, TS_TOK_INDENT, ts_l_range(l, l->line_start, p));
    } else {
      while (l->nindent > 1 && col < l->indent[l->nindent - 1]) {
        l->nindent--;
        ts_l_push(l, TS_TOK_DEDENT, ts_l_range(l, p, p));
      }
      if (col != l->indent[l->nindent - 1]) {
        ts_l_error(l, ts_l_range(l, p, p + 1), "unindent does not match any outer indentation level");
        return false;
      }
      if (alt != l->altindent[l->nindent - 1]) {
        ts_l_error(l, ts_l_range(l, p, p + 1), "inconsistent use of tabs and spaces in indentation");
        return false;
      }
    }
    return true;
  }
}

/* Appends the UTF-8 encoding of code point `cp` (at most 0x10FFFF). */
static uint32_t ts_l_put_utf8(char *out, uint32_t cp) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* STRING: one literal, '...' or "..." (or tripled), with Python's escapes:
 * \\ \' \" \a \b \f \n \r \t \v, \<newline>, octal \o \oo \ooo (a byte, at
 * most \377, as PyTorch's printQuotedString writes them), \xNN (a byte),
 * \uNNNN and \UNNNNNNNN (UTF-8). Any other byte stands for itself. */
static void ts_l_string(ts_l *l) {
  uint32_t start = l->pos;
  char q = l->s[start];
  bool triple = start + 2 < l->n && l->s[start + 1] == q && l->s[start + 2] == q;
  uint32_t qlen = triple ? 3 : 1;
  ts_srange r = ts_l_range(l, start, start + qlen);
  /* first pass: find the closing quote */
  uint32_t i = start + qlen, body_end = 0;
  bool closed = false;
  while (i < l->n) {
    char c = l->s[i];
    if (c == '\\') {
      /* the escaped byte is skipped, a "\r\n" continuation whole */
      i += i + 2 < l->n && l->s[i + 1] == '\r' && l->s[i + 2] == '\n' ? 3 : i + 1 < l->n ? 2 : 1;
      continue;
    }
    if (c == q && (!triple || (i + 2 < l->n && l->s[i + 1] == q && l->s[i + 2] == q))) {
      body_end = i;
      closed = true;
      break;
    }
    if (c == '\n' && !triple)
      break;
    i++;
  }
  if (!closed) {
    ts_l_error(l, r, triple ? "unterminated triple-quoted string" : "unterminated string");
    return;
  }
  uint32_t end = body_end + qlen;
  char *out = ts_arena_alloc(l->arena, (size_t)(body_end - start) + 1);
  if (!out) {
    ts_l_error(l, r, "out of memory");
    return;
  }
  uint32_t o = 0;
  for (i = start + qlen; i < body_end;) {
    char c = l->s[i];
    if (c == '\r' && i + 1 < body_end && l->s[i + 1] == '\n') {
      out[o++] = '\n'; /* universal newlines in triple-quoted strings */
      i += 2;
      continue;
    }
    if (c != '\\') {
      out[o++] = c;
      i++;
      continue;
    }
    uint32_t esc = i;
    char e = l->s[i + 1]; /* the first pass made sure a byte follows */
    i += 2;
    switch (e) {
    case '\n': break;
    case '\r':
      if (i < body_end && l->s[i] == '\n')
        i++;
      break;
    case '\\': out[o++] = '\\'; break;
    case '\'': out[o++] = '\''; break;
    case '"': out[o++] = '"'; break;
    case 'a': out[o++] = '\a'; break;
    case 'b': out[o++] = '\b'; break;
    case 'f': out[o++] = '\f'; break;
    case 'n': out[o++] = '\n'; break;
    case 'r': out[o++] = '\r'; break;
    case 't': out[o++] = '\t'; break;
    case 'v': out[o++] = '\v'; break;
    case 'x':
    case 'u':
    case 'U': {
      int nd = e == 'x' ? 2 : e == 'u' ? 4 : 8;
      uint32_t v = 0;
      for (int k = 0; k < nd; k++) {
        int h = i < body_end ? ts_l_hexval((unsigned char)l->s[i]) : -1;
        if (h < 0) {
          ts_l_error(l, ts_l_range_at(l, esc), "truncated \\%c escape: expected %d hex digits", e, nd);
          return;
        }
        v = v * 16 + (uint32_t)h;
        i++;
      }
      if (e == 'x') {
        out[o++] = (char)v;
      } else {
        if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
          ts_l_error(l, ts_l_range_at(l, esc), "\\%c escape is not a valid Unicode character", e);
          return;
        }
        o += ts_l_put_utf8(out + o, v);
      }
      break;
    }
    default:
      if (e >= '0' && e <= '7') {
        uint32_t v = (uint32_t)(e - '0');
        for (int k = 0; k < 2 && i < body_end && l->s[i] >= '0' && l->s[i] <= '7'; k++)
          v = v * 8 + (uint32_t)(l->s[i++] - '0');
        if (v > 0377) {
          ts_l_error(l, ts_l_range_at(l, esc), "octal escape out of range (over \\377)");
          return;
        }
        out[o++] = (char)v;
        break;
      }
      if ((unsigned char)e >= 0x20 && (unsigned char)e < 0x7f)
        ts_l_error(l, ts_l_range_at(l, esc), "invalid escape sequence '\\%c'", e);
      else
        ts_l_error(l, ts_l_range_at(l, esc), "invalid escape sequence (backslash before byte 0x%02x)",
                   (unsigned char)e);
      return;
    }
  }
  out[o] = 0;
  r.end = end;
  ts_tok *t = ts_l_push(l, TS_TOK_STR, r);
  if (!t)
    return;
  t->str = out;
  t->len = o;
  /* account for the lines the literal spans */
  for (i = start; i < end; i++) {
    if (l->s[i] == '\n') {
      l->line++;
      l->line_start = i + 1;
    }
  }
  l->pos = end;
}

/* NUMBER: decimal, 0x/0o/0b integers; floats "1.", ".5", "1e-05", "2.5e+10". */
static void ts_l_number(ts_l *l) {
  uint32_t start = l->pos, i = start;
  const char *s = l->s;
  bool is_float = false;
  int base = 10;
  if (s[i] == '0' && i + 1 < l->n && s[i + 1] && strchr("xXoObB", s[i + 1])) {
    char b = s[i + 1];
    base = (b == 'x' || b == 'X') ? 16 : (b == 'o' || b == 'O') ? 8 : 2;
    i += 2;
    uint32_t ds = i;
    while (i < l->n && ts_l_is_id((unsigned char)s[i]))
      i++;
    uint64_t v = 0;
    bool over = false;
    for (uint32_t k = ds; k < i; k++) {
      int h = ts_l_hexval((unsigned char)s[k]);
      if (h < 0 || h >= base) {
        ts_l_error(l, ts_l_range(l, k, k + 1), "invalid digit '%c' in %s literal", s[k],
                   base == 16 ? "hexadecimal" : base == 8 ? "octal" : "binary");
        return;
      }
      if (v > (UINT64_MAX - (uint64_t)h) / (uint64_t)base)
        over = true;
      v = v * (uint64_t)base + (uint64_t)h;
    }
    if (ds == i) {
      ts_l_error(l, ts_l_range(l, start, i), "expected digits after '0%c'", b);
      return;
    }
    if (over || v > (uint64_t)INT64_MAX) {
      ts_l_error(l, ts_l_range(l, start, i), "integer literal too large");
      return;
    }
    ts_tok *t = ts_l_push(l, TS_TOK_INT, ts_l_range(l, start, i));
    if (t) {
      t->i = (int64_t)v;
      t->f = (double)v;
    }
    l->pos = i;
    return;
  }
  while (i < l->n && ts_l_is_digit((unsigned char)s[i]))
    i++;
  if (i < l->n && s[i] == '.') {
    is_float = true;
    i++;
    while (i < l->n && ts_l_is_digit((unsigned char)s[i]))
      i++;
  }
  if (i < l->n && (s[i] == 'e' || s[i] == 'E')) {
    uint32_t k = i + 1;
    if (k < l->n && (s[k] == '+' || s[k] == '-'))
      k++;
    if (k < l->n && ts_l_is_digit((unsigned char)s[k])) {
      is_float = true;
      i = k;
      while (i < l->n && ts_l_is_digit((unsigned char)s[i]))
        i++;
    }
  }
  if (i < l->n && ts_l_is_id((unsigned char)s[i])) {
    if (s[i] == 'j' || s[i] == 'J')
      ts_l_error(l, ts_l_range(l, start, i + 1), "complex literals are not supported");
    else
      ts_l_error(l, ts_l_range(l, start, i + 1), "invalid decimal literal");
    return;
  }
  uint32_t len = i - start;
  if (len > TS_L_MAX_NUMBER) {
    ts_l_error(l, ts_l_range(l, start, i), "number literal too long");
    return;
  }
  if (is_float) {
    char buf[TS_L_MAX_NUMBER + 1];
    memcpy(buf, s + start, len);
    buf[len] = 0;
    ts_tok *t = ts_l_push(l, TS_TOK_FLOAT, ts_l_range(l, start, i));
    if (t)
      t->f = strtod(buf, NULL);
    l->pos = i;
    return;
  }
  if (len > 1 && s[start] == '0') {
    for (uint32_t k = start; k < i; k++) {
      if (s[k] != '0') {
        ts_l_error(l, ts_l_range(l, start, i), "leading zeros in decimal integer literals are not permitted");
        return;
      }
    }
  }
  uint64_t v = 0;
  bool over = false;
  for (uint32_t k = start; k < i; k++) {
    uint64_t dg = (uint64_t)(s[k] - '0');
    if (v > (UINT64_MAX - dg) / 10)
      over = true;
    v = v * 10 + dg;
  }
  /* 9223372036854775808 is allowed through for the parser: it is valid
   * only right after a unary minus (INT64_MIN as PyTorch prints it). */
  if (over || v > (uint64_t)INT64_MAX + 1) {
    ts_l_error(l, ts_l_range(l, start, i), "integer literal too large");
    return;
  }
  ts_tok *t = ts_l_push(l, TS_TOK_INT, ts_l_range(l, start, i));
  if (t) {
    t->i = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : (int64_t)v;
    t->f = (double)v;
  }
  l->pos = i;
}

ts_tok *ts_fe_lex(ts_arena *arena, const ts_fe_source *src, uint32_t *ntoks, ts_diag *d) {
  ts_l l;
  memset(&l, 0, sizeof l);
  l.arena = arena;
  l.src = src;
  l.s = src->text;
  l.d = d;
  l.line = 1;
  l.nindent = 1;
  if (ntoks)
    *ntoks = 0;
  if (src->len >= UINT32_MAX - 1 || (!src->text && src->len)) {
    ts_srange r = {src, 0, 0, 1, 1};
    ts_fe_error_at(d, r, "source too large (4 GiB limit)");
    return NULL;
  }
  l.n = (uint32_t)src->len;
  if (!l.s)
    l.s = "";

  bool at_line_start = true;
  while (!l.failed) {
    if (at_line_start && l.depth == 0) {
      at_line_start = false;
      if (!ts_l_indentation(&l))
        break;
      if (l.failed)
        break;
    }
    if (l.pos >= l.n)
      break;
    unsigned char c = (unsigned char)l.s[l.pos];
    if (c == ' ' || c == '\t' || c == '\f' || (c == '\r' && !ts_l_newline_at(&l, l.pos))) {
      l.pos++;
      continue;
    }
    if (c == '#') {
      while (l.pos < l.n && l.s[l.pos] != '\n' && !ts_l_newline_at(&l, l.pos))
        l.pos++;
      continue;
    }
    uint32_t nl = ts_l_newline_at(&l, l.pos);
    if (nl) {
      if (l.depth == 0) {
        if (l.line_has_tok) {
          ts_l_push(&l, TS_TOK_NEWLINE, ts_l_range(&l, l.pos, l.pos + nl));
          l.line_has_tok = false;
        }
        at_line_start = true;
      }
      ts_l_take_newline(&l, nl);
      continue;
    }
    if (c == '\\') {
      uint32_t nl2 = ts_l_newline_at(&l, l.pos + 1);
      if (nl2) {
        l.pos++;
        ts_l_take_newline(&l, nl2);
        continue;
      }
      if (l.pos + 1 >= l.n)
        ts_l_error(&l, ts_l_range(&l, l.pos, l.pos + 1), "unexpected end of file after line continuation character");
      else
        ts_l_error(&l, ts_l_range(&l, l.pos, l.pos + 1), "unexpected character after line continuation character");
      break;
    }
    if (ts_l_is_id_start(c)) {
      uint32_t start = l.pos;
      while (l.pos < l.n && ts_l_is_id((unsigned char)l.s[l.pos]))
        l.pos++;
      /* a string prefix (r"", b"", f"") is not part of the subset */
      if (l.pos < l.n && (l.s[l.pos] == '"' || l.s[l.pos] == '\'') && l.pos - start <= 2 &&
          strspn(l.s + start, "rRbBfFuU") >= l.pos - start) {
        ts_l_error(&l, ts_l_range(&l, start, l.pos + 1), "string prefixes ('%.*s') are not supported",
                   (int)(l.pos - start), l.s + start);
        break;
      }
      ts_tok *t = ts_l_push(&l, TS_TOK_NAME, ts_l_range(&l, start, l.pos));
      if (t) {
        char *str = ts_arena_strndup(arena, l.s + start, l.pos - start);
        if (!str) {
          ts_l_error(&l, t->range, "out of memory");
          break;
        }
        t->str = str;
        t->len = l.pos - start;
      }
      continue;
    }
    if (ts_l_is_digit(c) || (c == '.' && l.pos + 1 < l.n && ts_l_is_digit((unsigned char)l.s[l.pos + 1]))) {
      ts_l_number(&l);
      continue;
    }
    if (c == '"' || c == '\'') {
      ts_l_string(&l);
      continue;
    }
    const char *op = NULL;
    size_t oplen = 0;
    for (size_t k = 0; k < sizeof ts_l_ops / sizeof ts_l_ops[0]; k++) {
      size_t ol = strlen(ts_l_ops[k]);
      if (l.pos + ol <= l.n && memcmp(l.s + l.pos, ts_l_ops[k], ol) == 0) {
        op = ts_l_ops[k];
        oplen = ol;
        break;
      }
    }
    if (!op) {
      if (c >= 0x20 && c < 0x7f)
        ts_l_error(&l, ts_l_range(&l, l.pos, l.pos + 1), "invalid character '%c'", c);
      else
        ts_l_error(&l, ts_l_range(&l, l.pos, l.pos + 1), "invalid byte 0x%02x outside a string", c);
      break;
    }
    ts_srange r = ts_l_range(&l, l.pos, l.pos + (uint32_t)oplen);
    if (op[0] == '(' || op[0] == '[' || op[0] == '{') {
      if (l.depth >= TS_L_MAX_BRACKETS) {
        ts_l_error(&l, r, "too many nested parentheses (limit %d)", TS_L_MAX_BRACKETS);
        break;
      }
      l.open[l.depth++] = l.ntoks;
    } else if (op[0] == ')' || op[0] == ']' || op[0] == '}') {
      if (l.depth == 0) {
        ts_l_error(&l, r, "unmatched '%s'", op);
        break;
      }
      const ts_tok *o = &l.toks[l.open[l.depth - 1]];
      char want = o->str[0] == '(' ? ')' : o->str[0] == '[' ? ']' : '}';
      if (op[0] != want) {
        ts_l_error(&l, r, "closing '%s' does not match '%s' at %d:%d", op, o->str, o->range.line, o->range.col);
        break;
      }
      l.depth--;
    }
    ts_tok *t = ts_l_push(&l, TS_TOK_OP, r);
    if (t) {
      t->str = op;
      t->len = oplen;
    }
    l.pos += (uint32_t)oplen;
  }
  if (l.failed)
    return NULL;
  ts_srange er = ts_l_eof_range(&l);
  if (l.depth > 0) {
    const ts_tok *o = &l.toks[l.open[l.depth - 1]];
    char want = o->str[0] == '(' ? ')' : o->str[0] == '[' ? ']' : '}';
    ts_l_error(&l, er, "expected '%c' to close '%s' at %d:%d", want, o->str, o->range.line, o->range.col);
    return NULL;
  }
  if (l.line_has_tok)
    ts_l_push(&l, TS_TOK_NEWLINE, er);
  while (l.nindent > 1) {
    l.nindent--;
    ts_l_push(&l, TS_TOK_DEDENT, er);
  }
  ts_l_push(&l, TS_TOK_EOF, er);
  if (l.failed)
    return NULL;
  if (ntoks)
    *ntoks = l.ntoks;
  return l.toks;
}
