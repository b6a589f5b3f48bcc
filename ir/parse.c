/* ir/parse.c: reads graphs in PyTorch's text format (what Graph::print
 * writes and torch._C.parse_ir reads), plus what parse_ir refuses but
 * printed graphs contain: nodes with no outputs ("= aten::_set_item(...)"),
 * "# file:line:col" source comments, "{2}" scalar tensors and
 * "with prim::FusionGroup_0 = graph(...)" subgraph sections, and value names
 * PyTorch prints as they are ("%block1-0.1", UTF-8; parse_ir reads only
 * identifier characters and '.') or our printer quotes ("%\"a b\"").
 *
 * Layout is free: the grammar needs no newlines, so the reader skips all
 * white space; a "#" comment is only allowed after a node and ends at the
 * end of its line. Numeric value names ("%12") are kept as they are written,
 * so printing what was read gives the same text. */
#include "ir.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TS_PARSE_MAX_DEPTH = 200 };

typedef struct ts_parser {
  const char *file;
  const char *src;
  size_t len, pos;
  ts_diag *d;
  bool failed;
  int depth;
  /* nodes whose kind ends in "_N": maybe "with" groups */
  ts_node **groups;
  size_t ngroups, cap_groups;
} ts_parser;

/* Reports at byte offset `at`; only the first error of a parse is kept. */
static void ts_p_error_at(ts_parser *p, size_t at, const char *fmt, ...) TS_PRINTF(3, 4);
static void ts_p_error_at(ts_parser *p, size_t at, const char *fmt, ...) {
  if (p->failed)
    return;
  p->failed = true;
  int line = 1;
  size_t ls = 0;
  if (at > p->len)
    at = p->len;
  for (size_t i = 0; i < at; i++)
    if (p->src[i] == '\n')
      line++, ls = i + 1;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ts_diag_error_at(p->d, p->file, p->src, p->len, line, (int)(at - ls) + 1, "%s", msg);
}

#define ts_p_error(p, ...) ts_p_error_at((p), (p)->pos, __VA_ARGS__)

static int ts_p_peek(ts_parser *p) { return p->pos < p->len ? (unsigned char)p->src[p->pos] : -1; }

static void ts_p_skip_ws(ts_parser *p) {
  while (p->pos < p->len) {
    char c = p->src[p->pos];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
      p->pos++;
    else
      break;
  }
}

static bool ts_is_ident_start(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool ts_is_digit(int c) { return c >= '0' && c <= '9'; }
static bool ts_is_ident(int c) { return ts_is_ident_start(c) || ts_is_digit(c); }

/* Consumes `s` after white space if it is next. */
static bool ts_p_accept(ts_parser *p, const char *s) {
  ts_p_skip_ws(p);
  size_t n = strlen(s);
  if (p->len - p->pos >= n && memcmp(p->src + p->pos, s, n) == 0) {
    p->pos += n;
    return true;
  }
  return false;
}

/* A keyword: `s` not followed by an identifier character. */
static bool ts_p_accept_word(ts_parser *p, const char *s) {
  ts_p_skip_ws(p);
  size_t n = strlen(s), at = p->pos;
  if (p->len - at >= n && memcmp(p->src + at, s, n) == 0 && (at + n == p->len || !ts_is_ident(p->src[at + n]))) {
    p->pos += n;
    return true;
  }
  return false;
}

static bool ts_p_expect(ts_parser *p, const char *s) {
  if (ts_p_accept(p, s))
    return true;
  ts_p_skip_ws(p);
  ts_p_error(p, "expected '%s'", s);
  return false;
}

/* ident = [A-Za-z_][A-Za-z0-9_]* */
static bool ts_p_ident(ts_parser *p, const char **s, size_t *n) {
  ts_p_skip_ws(p);
  size_t at = p->pos;
  if (!ts_is_ident_start(ts_p_peek(p))) {
    ts_p_error(p, "expected an identifier");
    return false;
  }
  while (p->pos < p->len && ts_is_ident(p->src[p->pos]))
    p->pos++;
  *s = p->src + at;
  *n = p->pos - at;
  return true;
}

static bool ts_p_enter(ts_parser *p) {
  if (++p->depth > TS_PARSE_MAX_DEPTH) {
    ts_p_error(p, "nesting deeper than %d levels", TS_PARSE_MAX_DEPTH);
    return false;
  }
  return true;
}

/* int = "-"? [0-9]+  (fits in int64) */
static bool ts_p_int(ts_parser *p, int64_t *out) {
  ts_p_skip_ws(p);
  size_t at = p->pos;
  bool neg = ts_p_peek(p) == '-';
  if (neg)
    p->pos++;
  if (!ts_is_digit(ts_p_peek(p))) {
    ts_p_error_at(p, at, "expected an integer");
    return false;
  }
  uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  while (ts_is_digit(ts_p_peek(p))) {
    unsigned dgt = (unsigned)(p->src[p->pos++] - '0');
    if (v > (lim - dgt) / 10) {
      ts_p_error_at(p, at, "integer out of range");
      return false;
    }
    v = v * 10 + dgt;
  }
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return true;
}

/* ------------------------------------------------------------------ types */

static const ts_type *ts_p_type(ts_parser *p, ts_arena *a);

/* dims = dim ("," dim)* ("," kw)*    dim = int | "*" | "SS(" int ")"
 * kw   = "strides=[" ints "]" | "requires_grad=" int | "device=" name
 * Fills `ti`; `sizes`/`strides` point into the arena. */
static bool ts_p_tensor_args(ts_parser *p, ts_tensor_info *ti, bool rank_known, int64_t dims[64],
                             int64_t strides[64]) {
  int32_t rank = 0, nstrides = -1;
  bool first = true;
  while (!ts_p_accept(p, ")")) {
    if (!first && !ts_p_expect(p, ","))
      return false;
    first = false;
    ts_p_skip_ws(p);
    if (ts_p_accept(p, "strides=")) {
      if (!ts_p_expect(p, "["))
        return false;
      nstrides = 0;
      while (!ts_p_accept(p, "]")) {
        if (nstrides && !ts_p_expect(p, ","))
          return false;
        if (nstrides >= 64) {
          ts_p_error(p, "too many strides");
          return false;
        }
        if (!ts_p_int(p, &strides[nstrides++]))
          return false;
      }
    } else if (ts_p_accept(p, "requires_grad=")) {
      int64_t v;
      if (!ts_p_int(p, &v))
        return false;
      if (v != 0 && v != 1) {
        ts_p_error(p, "requires_grad must be 0 or 1");
        return false;
      }
      ti->requires_grad = (int8_t)v;
    } else if (ts_p_accept(p, "device=")) {
      ts_p_skip_ws(p);
      size_t at = p->pos;
      while (p->pos < p->len && (ts_is_ident(p->src[p->pos]) || p->src[p->pos] == ':'))
        p->pos++;
      if (!ts_device_parse(p->src + at, p->pos - at, &ti->device)) {
        ts_p_error_at(p, at, "unknown device '%.*s'", (int)(p->pos - at), p->src + at);
        return false;
      }
    } else {
      if (!rank_known || nstrides >= 0 || ti->requires_grad >= 0 || ti->device.type != TS_DEV_NONE) {
        ts_p_error(p, "expected a tensor property (strides=, requires_grad=, device=)");
        return false;
      }
      if (rank >= 64) {
        ts_p_error(p, "tensor rank above 64");
        return false;
      }
      if (ts_p_accept(p, "*"))
        dims[rank++] = -1;
      else if (ts_p_accept(p, "SS(")) {
        size_t at = p->pos;
        if (!ts_p_int(p, &dims[rank]) || !ts_p_expect(p, ")"))
          return false;
        if (dims[rank++] > -2) {
          ts_p_error_at(p, at, "a symbolic size is at most -2");
          return false;
        }
      } else if (ts_is_digit(ts_p_peek(p))) {
        if (!ts_p_int(p, &dims[rank++]))
          return false;
      } else {
        ts_p_error(p, "expected a size, '*', 'SS(-N)' or a tensor property");
        return false;
      }
    }
  }
  if (rank_known)
    ti->rank = rank;
  if (nstrides >= 0 && nstrides != rank) {
    ts_p_error(p, "%d strides for a tensor of rank %d", nstrides, rank);
    return false;
  }
  ti->sizes = dims;
  ti->strides = nstrides > 0 ? strides : NULL;
  return true;
}

/* tensor = (DTYPE "Tensor"? | "Tensor") ("(" tensor_args ")")? "[Undefined]"? */
static const ts_type *ts_p_tensor_type(ts_parser *p, ts_arena *a, ts_dtype dt, bool rank_known) {
  ts_tensor_info ti = {.dtype = (int8_t)dt, .requires_grad = -1, .undefined = -1,
                       .device = {TS_DEV_NONE, -1}, .rank = -1};
  int64_t dims[64], strides[64]; /* ts_type_tensor copies them into the arena */
  bool has_args = ts_p_accept(p, "(");
  if (has_args && !ts_p_tensor_args(p, &ti, rank_known, dims, strides))
    return NULL;
  if (!has_args && rank_known)
    ti.rank = -1; /* a bare dtype name is not a type PyTorch prints */
  if (ts_p_accept(p, "[Undefined]"))
    ti.undefined = 1;
  if (ti.dtype == TS_DT_NONE && ti.rank < 0 && ti.requires_grad < 0 && ti.device.type == TS_DEV_NONE &&
      ti.undefined < 0)
    return ts_type_leaf(TS_TY_TENSOR);
  return ts_type_tensor(a, &ti);
}

/* type = base ("[]" | "?")*
 * base = "(" (type ("," type)*)? ")" | "Dict(" type "," type ")"
 *      | ("Future" | "RRef") "(" type ")" | "Union(" type ("," type)* ")"
 *      | "NamedTuple(" NAME ":" type ("," NAME ":" type)* ")"
 *      | tensor | LEAF | QUALIFIED_NAME */
static const ts_type *ts_p_type(ts_parser *p, ts_arena *a) {
  if (!ts_p_enter(p))
    return NULL;
  const ts_type *t = NULL;
  ts_p_skip_ws(p);
  size_t at = p->pos;
  if (ts_p_accept(p, "(")) {
    const ts_type *elems[256];
    uint32_t n = 0;
    while (!ts_p_accept(p, ")")) {
      if (n && !ts_p_expect(p, ","))
        goto out;
      if (n == 256) {
        ts_p_error(p, "tuple with more than 256 elements");
        goto out;
      }
      if (!(elems[n++] = ts_p_type(p, a)))
        goto out;
    }
    t = ts_type_tuple(a, n, elems);
  } else {
    const char *s;
    size_t n;
    if (!ts_p_ident(p, &s, &n))
      goto out;
    /* qualified class names: a.b.C */
    while (ts_p_peek(p) == '.' && p->pos + 1 < p->len && ts_is_ident_start(p->src[p->pos + 1])) {
      p->pos++;
      const char *s2;
      size_t n2;
      if (!ts_p_ident(p, &s2, &n2))
        goto out;
      n = (size_t)(s2 + n2 - s);
    }
    ts_dtype dt;
    if (memchr(s, '.', n)) {
      t = ts_type_class(a, s, n);
    } else if (n == 6 && memcmp(s, "Tensor", 6) == 0) {
      t = ts_p_tensor_type(p, a, TS_DT_NONE, true);
    } else if ((dt = ts_dtype_from_name(s, n)) != TS_DT_NONE) {
      t = ts_p_tensor_type(p, a, dt, true);
    } else if (n > 6 && memcmp(s + n - 6, "Tensor", 6) == 0 && (dt = ts_dtype_from_name(s, n - 6)) != TS_DT_NONE) {
      t = ts_p_tensor_type(p, a, dt, false);
    } else if ((n == 4 && memcmp(s, "Dict", 4) == 0) || (n == 6 && memcmp(s, "Future", 6) == 0) ||
               (n == 4 && memcmp(s, "RRef", 4) == 0) || (n == 5 && memcmp(s, "Union", 5) == 0)) {
      const ts_type *elems[256];
      uint32_t k = 0;
      if (!ts_p_expect(p, "("))
        goto out;
      while (!ts_p_accept(p, ")")) {
        if (k && !ts_p_expect(p, ","))
          goto out;
        if (k == 256) {
          ts_p_error(p, "too many type arguments");
          goto out;
        }
        if (!(elems[k++] = ts_p_type(p, a)))
          goto out;
      }
      if (s[0] == 'U')
        t = ts_type_union(a, k, elems);
      else if (s[0] == 'D' ? k != 2 : k != 1)
        ts_p_error_at(p, at, "'%.*s' takes %d type argument%s", (int)n, s, s[0] == 'D' ? 2 : 1, s[0] == 'D' ? "s" : "");
      else if (s[0] == 'D')
        t = ts_type_dict(a, elems[0], elems[1]);
      else if (s[0] == 'F')
        t = ts_type_future(a, elems[0]);
      else
        t = ts_type_rref(a, elems[0]);
    } else if (n == 10 && memcmp(s, "NamedTuple", 10) == 0) {
      const ts_type *elems[256];
      const char *fields[256];
      uint32_t k = 0;
      if (!ts_p_expect(p, "("))
        goto out;
      while (!ts_p_accept(p, ")")) {
        const char *f;
        size_t fn;
        if (k && !ts_p_expect(p, ","))
          goto out;
        if (k == 256) {
          ts_p_error(p, "too many fields");
          goto out;
        }
        if (!ts_p_ident(p, &f, &fn) || !ts_p_expect(p, ":") || !(elems[k] = ts_p_type(p, a)))
          goto out;
        if (!(fields[k++] = ts_arena_strndup(a, f, fn)))
          goto out;
      }
      ts_type *nt = (ts_type *)ts_type_tuple(a, k, elems);
      const char **fs = ts_arena_alloc(a, (k ? k : 1) * sizeof *fs);
      if (nt && fs) {
        memcpy(fs, fields, k * sizeof *fs);
        nt->fields = fs;
        t = nt;
      }
    } else {
      for (int k = 0; k < TS_TY_LEAF_COUNT; k++)
        if (strlen(ts_type_leaf_name((ts_type_kind)k)) == n && memcmp(ts_type_leaf_name((ts_type_kind)k), s, n) == 0)
          t = ts_type_leaf((ts_type_kind)k);
      if (!t) {
        ts_p_error_at(p, at, "unknown type '%.*s'", (int)n, s);
        goto out;
      }
    }
  }
  /* postfix: T[] and T? */
  while (t && !p->failed) {
    if (ts_p_peek(p) == '[' && p->pos + 1 < p->len && p->src[p->pos + 1] == ']') {
      p->pos += 2;
      t = ts_type_list(a, t);
    } else if (ts_p_peek(p) == '?') {
      p->pos++;
      t = ts_type_optional(a, t);
    } else {
      break;
    }
  }
out:
  p->depth--;
  if (!t && !p->failed)
    ts_p_error_at(p, at, "out of memory");
  return p->failed ? NULL : t;
}

const ts_type *ts_type_parse(ts_arena *a, const char *src, size_t len, ts_diag *d) {
  ts_parser p = {.file = "<type>", .src = src, .len = len, .d = d};
  const ts_type *t = ts_p_type(&p, a);
  ts_p_skip_ws(&p);
  if (t && p.pos != p.len)
    ts_p_error(&p, "unexpected text after the type");
  return p.failed ? NULL : t;
}

/* ------------------------------------------------------------- attributes */

/* string = '"' (char | escape)* '"'  with C escapes and \ooo octal; the
 * decoded bytes go into the graph arena. */
static bool ts_p_string(ts_parser *p, ts_arena *a, char **out, size_t *out_len) {
  ts_p_skip_ws(p);
  size_t at = p->pos;
  int q = ts_p_peek(p);
  if (q != '"' && q != '\'') {
    ts_p_error(p, "expected a string");
    return false;
  }
  p->pos++;
  /* the decoded string is never longer than its text: size it by the text,
   * not by the rest of the input (one string each would make it quadratic) */
  size_t end = p->pos;
  while (end < p->len && p->src[end] != q && p->src[end] != '\n')
    end += p->src[end] == '\\' && end + 1 < p->len ? 2 : 1;
  char *s = ts_arena_alloc(a, end - p->pos + 1);
  if (!s) {
    ts_p_error(p, "out of memory");
    return false;
  }
  size_t n = 0;
  for (;;) {
    if (p->pos >= p->len || p->src[p->pos] == '\n') {
      ts_p_error_at(p, at, "unterminated string");
      return false;
    }
    char c = p->src[p->pos++];
    if (c == q)
      break;
    if (c != '\\') {
      s[n++] = c;
      continue;
    }
    if (p->pos >= p->len) {
      ts_p_error_at(p, at, "unterminated string");
      return false;
    }
    c = p->src[p->pos++];
    switch (c) {
    case 'n': s[n++] = '\n'; break;
    case 't': s[n++] = '\t'; break;
    case 'r': s[n++] = '\r'; break;
    case 'a': s[n++] = '\a'; break;
    case 'b': s[n++] = '\b'; break;
    case 'f': s[n++] = '\f'; break;
    case 'v': s[n++] = '\v'; break;
    case '\\': case '\'': case '"': s[n++] = c; break;
    default:
      if (c >= '0' && c <= '7') {
        int v = c - '0';
        for (int k = 0; k < 2 && p->pos < p->len && p->src[p->pos] >= '0' && p->src[p->pos] <= '7'; k++)
          v = v * 8 + (p->src[p->pos++] - '0');
        if (v > 255) {
          ts_p_error_at(p, p->pos - 4, "octal escape above \\377");
          return false;
        }
        s[n++] = (char)v;
      } else {
        ts_p_error_at(p, p->pos - 2, "unknown escape '\\%c'", c);
        return false;
      }
    }
  }
  s[n] = 0;
  *out = s;
  *out_len = n;
  return true;
}

typedef struct ts_number {
  bool is_float;
  int64_t i;
  double f;
} ts_number;

/* number = "-"? (digits ("." digits?)? (("e"|"E") ("+"|"-")? digits)? | "inf" | "nan") */
static bool ts_p_number(ts_parser *p, ts_number *out) {
  ts_p_skip_ws(p);
  size_t at = p->pos;
  size_t i = at;
  if (i < p->len && p->src[i] == '-')
    i++;
  if (p->len - i >= 3 && (memcmp(p->src + i, "inf", 3) == 0 || memcmp(p->src + i, "nan", 3) == 0)) {
    bool nan = p->src[i] == 'n';
    p->pos = i + 3;
    out->is_float = true;
    out->f = nan ? NAN : (p->src[at] == '-' ? -INFINITY : INFINITY);
    return true;
  }
  size_t digits = i;
  while (i < p->len && ts_is_digit(p->src[i]))
    i++;
  if (i == digits) {
    ts_p_error(p, "expected a number");
    return false;
  }
  bool is_float = false;
  if (i < p->len && p->src[i] == '.') {
    is_float = true;
    i++;
    while (i < p->len && ts_is_digit(p->src[i]))
      i++;
  }
  if (i < p->len && (p->src[i] == 'e' || p->src[i] == 'E')) {
    size_t e = i + 1;
    if (e < p->len && (p->src[e] == '+' || p->src[e] == '-'))
      e++;
    if (e < p->len && ts_is_digit(p->src[e])) {
      is_float = true;
      i = e;
      while (i < p->len && ts_is_digit(p->src[i]))
        i++;
    }
  }
  out->is_float = is_float;
  if (!is_float)
    return ts_p_int(p, &out->i);
  char tmp[64];
  if (i - at >= sizeof tmp) {
    ts_p_error(p, "number too long");
    return false;
  }
  memcpy(tmp, p->src + at, i - at);
  tmp[i - at] = 0;
  out->f = strtod(tmp, NULL);
  p->pos = i;
  return true;
}

/* The tensor a "<Tensor>" or "{v}" attribute stands for takes its dtype and
 * sizes from the node's first output when that type is refined. */
static bool ts_p_tensor_attr(ts_parser *p, ts_node *n, const char *name) {
  ts_graph *g = n->graph;
  ts_tconst t = {.dtype = TS_DT_NONE, .rank = 0};
  const ts_type *ty = n->noutputs ? n->outputs[0]->type : NULL;
  if (ts_p_accept(p, "<Tensor>")) {
    if (ty && ty->kind == TS_TY_TENSOR && ty->tensor) {
      t.dtype = ty->tensor->dtype;
      if (ty->tensor->rank >= 0) {
        t.rank = ty->tensor->rank;
        t.sizes = ty->tensor->sizes;
        t.strides = ty->tensor->strides;
      }
    }
  } else {
    ts_number num;
    if (!ts_p_expect(p, "{") || !ts_p_number(p, &num) || !ts_p_expect(p, "}"))
      return false;
    void *data = ts_arena_alloc(&g->arena, 8);
    if (!data)
      return false;
    if (num.is_float) {
      t.dtype = TS_DT_FLOAT64;
      memcpy(data, &num.f, 8);
    } else {
      t.dtype = TS_DT_INT64;
      memcpy(data, &num.i, 8);
    }
    t.data = data;
  }
  return ts_node_set_t(n, name, &t);
}

/* ATen's print of a small tensor: everything up to "[ CPU<Dtype>Type{d0,d1} ]"
 * on the same line, with no quotes or brackets before that trailer. Returns
 * its length from p->pos, 0 if the text there is not one. */
static size_t ts_p_tensor_repr_len(ts_parser *p, ts_tconst *t, int64_t sizes[64]) {
  size_t i = p->pos;
  for (; i < p->len; i++) {
    char c = p->src[i];
    if (c == '\n' || c == '"' || c == '\'' || c == ']' || c == ',')
      return 0;
    if (c == '[')
      break;
  }
  /* "[ " BACKEND DTYPE "Type{" dims "} ]" */
  if (i + 2 >= p->len || p->src[i + 1] != ' ')
    return 0;
  size_t j = i + 2, id = j;
  while (j < p->len && ts_is_ident(p->src[j]))
    j++;
  static const char *const backends[] = {"CPU", "CUDA", "Meta"};
  size_t idn = j - id;
  if (idn < 4 + 4 || memcmp(p->src + j - 4, "Type", 4) != 0 || j >= p->len || p->src[j] != '{')
    return 0;
  ts_dtype dt = TS_DT_NONE;
  for (int k = 0; k < 3 && dt == TS_DT_NONE; k++) {
    size_t bl = strlen(backends[k]);
    if (idn > bl + 4 && memcmp(p->src + id, backends[k], bl) == 0)
      dt = ts_dtype_from_name(p->src + id + bl, idn - bl - 4);
  }
  if (dt == TS_DT_NONE)
    return 0;
  j++;
  int32_t rank = 0;
  while (j < p->len && p->src[j] != '}') {
    if (rank == 64 || !ts_is_digit(p->src[j]))
      return 0;
    int64_t v = 0;
    while (j < p->len && ts_is_digit(p->src[j]) && v < (INT64_MAX - 9) / 10)
      v = v * 10 + (p->src[j++] - '0');
    sizes[rank++] = v;
    if (j < p->len && p->src[j] == ',')
      j++;
  }
  if (p->len - j < 3 || memcmp(p->src + j, "} ]", 3) != 0)
    return 0;
  t->dtype = (int8_t)dt;
  t->rank = rank;
  t->sizes = sizes;
  return j + 3 - p->pos;
}

/* list = "[" (item ("," item)*)? "]" with items all ints, all numbers (then
 * floats) or all strings; "[]" is an empty int list. */
static bool ts_p_list_attr(ts_parser *p, ts_node *n, const char *name) {
  ts_arena *a = &n->graph->arena;
  size_t cap = 8, len = 0;
  int64_t *is = malloc(cap * sizeof *is);
  double *fs = malloc(cap * sizeof *fs);
  const char **ss = malloc(cap * sizeof *ss);
  bool ok = false, any_float = false, strings = false;
  if (!is || !fs || !ss) {
    ts_p_error(p, "out of memory");
    goto out;
  }
  while (!ts_p_accept(p, "]")) {
    if (len && !ts_p_expect(p, ","))
      goto out;
    if (len == cap) {
      cap *= 2;
      int64_t *i2 = realloc(is, cap * sizeof *is);
      if (i2)
        is = i2;
      double *f2 = realloc(fs, cap * sizeof *fs);
      if (f2)
        fs = f2;
      const char **s2 = realloc(ss, cap * sizeof *ss);
      if (s2)
        ss = s2;
      if (!i2 || !f2 || !s2) {
        ts_p_error(p, "out of memory");
        goto out;
      }
    }
    ts_p_skip_ws(p);
    int c = ts_p_peek(p);
    if (c == '"' || c == '\'') {
      if (len && !strings) {
        ts_p_error(p, "a list attribute mixes strings and numbers");
        goto out;
      }
      strings = true;
      char *s;
      size_t sn;
      if (!ts_p_string(p, a, &s, &sn))
        goto out;
      ss[len++] = s;
    } else {
      if (strings) {
        ts_p_error(p, "a list attribute mixes strings and numbers");
        goto out;
      }
      ts_number num;
      if (!ts_p_number(p, &num))
        goto out;
      any_float |= num.is_float;
      is[len] = num.is_float ? 0 : num.i;
      fs[len++] = num.is_float ? num.f : (double)num.i;
    }
  }
  if (strings)
    ok = ts_node_set_ss(n, name, ss, len);
  else if (any_float)
    ok = ts_node_set_fs(n, name, fs, len);
  else
    ok = ts_node_set_is(n, name, is, len);
  if (!ok)
    ts_p_error(p, "out of memory");
out:
  free(is);
  free(fs);
  free(ss);
  return ok && !p->failed;
}

/* types = "[" type ("," type)* "]" (prim::isinstance's types=[Tensor]); after
 * the "[". Several are kept as one Union. */
static bool ts_p_types_attr(ts_parser *p, ts_node *n, const char *name) {
  ts_arena *a = &n->graph->arena;
  const ts_type *elems[16];
  uint32_t k = 0;
  while (!ts_p_accept(p, "]")) {
    if (k && !ts_p_expect(p, ","))
      return false;
    if (k == 16) {
      ts_p_error(p, "more than 16 types in a list attribute");
      return false;
    }
    if (!(elems[k++] = ts_p_type(p, a)))
      return false;
  }
  const ts_type *t = k == 1 ? elems[0] : k ? ts_type_union(a, k, elems) : NULL;
  if (!k) {
    ts_p_error(p, "an empty list of types");
    return false;
  }
  if (!t || !ts_node_set_ty(n, name, t)) {
    ts_p_error(p, "out of memory");
    return false;
  }
  return true;
}

/* attrs = "[" attr ("," attr)* "]"    attr = NAME "=" value
 * value = number | string | list | types | "<Tensor>" | "{" number "}" */
static bool ts_p_attrs(ts_parser *p, ts_node *n) {
  bool first = true;
  while (!ts_p_accept(p, "]")) {
    if (!first && !ts_p_expect(p, ","))
      return false;
    first = false;
    const char *s;
    size_t sn;
    if (!ts_p_ident(p, &s, &sn) || !ts_p_expect(p, "="))
      return false;
    char name[128];
    if (sn >= sizeof name) {
      ts_p_error(p, "attribute name too long");
      return false;
    }
    memcpy(name, s, sn);
    name[sn] = 0;
    if (ts_node_attr(n, name)) {
      ts_p_error_at(p, (size_t)(s - p->src), "attribute '%s' given twice", name);
      return false;
    }
    ts_tconst tc = {.dtype = TS_DT_NONE};
    int64_t tsizes[64];
    size_t rl = ts_p_tensor_repr_len(p, &tc, tsizes);
    if (rl) {
      if (!(tc.repr = ts_arena_strndup(&n->graph->arena, p->src + p->pos, rl)) || !ts_node_set_t(n, name, &tc)) {
        ts_p_error(p, "out of memory");
        return false;
      }
      p->pos += rl;
      continue;
    }
    ts_p_skip_ws(p);
    int c = ts_p_peek(p);
    bool ok;
    if (c == '"' || c == '\'') {
      char *str;
      size_t len;
      ok = ts_p_string(p, &n->graph->arena, &str, &len) && ts_node_set_s(n, name, str, len);
    } else if (ts_p_accept(p, "[<Tensors>]")) {
      ok = ts_node_set_ts(n, name, NULL, 0);
    } else if (c == '[' && isalpha((unsigned char)(p->pos + 1 < p->len ? p->src[p->pos + 1] : 0))) {
      p->pos++;
      ok = ts_p_types_attr(p, n, name);
    } else if (c == '[') {
      p->pos++;
      ok = ts_p_list_attr(p, n, name);
    } else if (c == '<' || c == '{') {
      ok = ts_p_tensor_attr(p, n, name);
    } else {
      ts_number num;
      ok = ts_p_number(p, &num) && (num.is_float ? ts_node_set_f(n, name, num.f) : ts_node_set_i(n, name, num.i));
    }
    if (!ok) {
      ts_p_error(p, "bad value for attribute '%s'", name);
      return false;
    }
  }
  return true;
}

/* ----------------------------------------------------------------- graphs */

/* name = "%" (BARE+ | STRING), BARE a byte of ts_name_byte_bare: PyTorch
 * prints debug names as they are ("%block1-0.1", "%self.s.0.weight", UTF-8),
 * our printer quotes the rest ("%\"a b\""). A quoted name is copied into
 * the graph's arena. */
static bool ts_p_value_name(ts_parser *p, ts_graph *g, const char **s, size_t *n) {
  ts_p_skip_ws(p);
  if (ts_p_peek(p) != '%') {
    ts_p_error(p, "expected a value name ('%%name')");
    return false;
  }
  size_t at = ++p->pos;
  if (ts_p_peek(p) == '"') {
    char *q;
    size_t qn;
    if (!ts_p_string(p, &g->arena, &q, &qn))
      return false;
    if (!qn || memchr(q, 0, qn)) {
      ts_p_error_at(p, at - 1, qn ? "a value name cannot hold a NUL byte" : "expected a value name after '%%'");
      return false;
    }
    *s = q;
    *n = qn;
    return true;
  }
  while (p->pos < p->len && ts_name_byte_bare((unsigned char)p->src[p->pos]))
    p->pos++;
  if (p->pos == at) {
    ts_p_error(p, "expected a value name after '%%'");
    return false;
  }
  *s = p->src + at;
  *n = p->pos - at;
  return true;
}

/* Reports "<before>'%name'<after>" at byte `at`, the name written as the
 * printer writes it (quoted names come from the arena, not the text). */
static void ts_p_name_error(ts_parser *p, size_t at, const char *s, size_t n, const char *before, const char *after) {
  ts_buf b = {0};
  ts_name_print(&b, s, n);
  ts_p_error_at(p, at, "%s'%s'%s", before, b.failed ? "%?" : b.data, after);
  ts_buf_free(&b);
}

/* def = name ":" type: a new output of `owner` (a block's prim::Param) */
static bool ts_p_def(ts_parser *p, ts_graph *g, ts_node *owner) {
  const char *s;
  size_t n;
  ts_p_skip_ws(p);
  size_t at = p->pos;
  if (!ts_p_value_name(p, g, &s, &n) || !ts_p_expect(p, ":"))
    return false;
  const ts_type *t = ts_p_type(p, &g->arena);
  if (!t)
    return false;
  ts_value *v = ts_node_add_output(owner, t);
  if (!v) {
    ts_p_error(p, "out of memory");
    return false;
  }
  if (ts_graph_find_value(g, s, n)) {
    ts_p_name_error(p, at, s, n, "value ", " is defined twice");
    return false;
  }
  if (!ts_value_set_name_exact(v, s, n)) {
    ts_p_error(p, "out of memory");
    return false;
  }
  return true;
}

/* params = "(" (def ("," def)*)? ")": a graph's or a block's inputs */
static bool ts_p_params(ts_parser *p, ts_graph *g, ts_node *param) {
  if (!ts_p_expect(p, "("))
    return false;
  for (bool first = true; !ts_p_accept(p, ")"); first = false)
    if ((!first && !ts_p_expect(p, ",")) || !ts_p_def(p, g, param))
      return false;
  return true;
}

/* uses = "(" (name ("," name)*)? ")": appends each named value as an input */
static bool ts_p_uses(ts_parser *p, ts_graph *g, ts_node *n) {
  if (!ts_p_expect(p, "("))
    return false;
  bool first = true;
  while (!ts_p_accept(p, ")")) {
    if (!first && !ts_p_expect(p, ","))
      return false;
    first = false;
    const char *s;
    size_t sn;
    ts_p_skip_ws(p);
    size_t at = p->pos;
    if (!ts_p_value_name(p, g, &s, &sn))
      return false;
    ts_value *v = ts_graph_find_value(g, s, sn);
    if (!v) {
      ts_p_name_error(p, at, s, sn, "use of undefined value ", "");
      return false;
    }
    if (!ts_node_add_input(n, v)) {
      ts_p_error(p, "out of memory");
      return false;
    }
  }
  return true;
}

/* srcloc = "#" FILE ":" LINE ":" COL  (to the end of the line) */
static bool ts_p_srcloc(ts_parser *p, ts_node *n) {
  /* the comment must sit on the node's own line */
  size_t i = p->pos;
  while (i < p->len && (p->src[i] == ' ' || p->src[i] == '\t'))
    i++;
  if (i >= p->len || p->src[i] != '#')
    return true;
  size_t at = i;
  i++;
  if (i < p->len && p->src[i] == ' ')
    i++;
  size_t start = i;
  while (i < p->len && p->src[i] != '\n' && p->src[i] != '\r')
    i++;
  size_t end = i;
  p->pos = end;
  /* split at the last two colons: file names may hold colons */
  size_t c2 = end, c1;
  while (c2 > start && p->src[c2 - 1] != ':')
    c2--;
  c1 = c2 ? c2 - 1 : 0;
  while (c1 > start && p->src[c1 - 1] != ':')
    c1--;
  if (c2 <= start || c1 <= start) {
    ts_p_error_at(p, at, "expected '# file:line:col' after a node");
    return false;
  }
  long vals[2];
  size_t ranges[2][2] = {{c1, c2 - 1}, {c2, end}};
  for (int k = 0; k < 2; k++) {
    size_t a0 = ranges[k][0], a1 = ranges[k][1];
    if (a0 == a1 || a1 - a0 > 9) {
      ts_p_error_at(p, a0, "expected a line and column number in '# file:line:col'");
      return false;
    }
    vals[k] = 0;
    for (size_t j = a0; j < a1; j++) {
      if (!ts_is_digit(p->src[j])) {
        ts_p_error_at(p, j, "expected a line and column number in '# file:line:col'");
        return false;
      }
      vals[k] = vals[k] * 10 + (p->src[j] - '0');
    }
  }
  n->loc.file = ts_arena_strndup(&n->graph->arena, p->src + start, c1 - 1 - start);
  n->loc.line = (int32_t)vals[0];
  n->loc.col = (int32_t)vals[1];
  return n->loc.file != NULL;
}

static bool ts_p_body(ts_parser *p, ts_graph *g, ts_block *b);

static bool ts_p_remember_group(ts_parser *p, ts_node *n) {
  const char *k = n->kind_name;
  size_t len = strlen(k), i = len;
  while (i > 0 && ts_is_digit(k[i - 1]))
    i--;
  if (i == len || i == 0 || k[i - 1] != '_')
    return true;
  if (p->ngroups == p->cap_groups) {
    size_t cap = p->cap_groups ? p->cap_groups * 2 : 8;
    ts_node **gs = realloc(p->groups, cap * sizeof *gs);
    if (!gs) {
      ts_p_error(p, "out of memory");
      return false;
    }
    p->groups = gs;
    p->cap_groups = cap;
  }
  p->groups[p->ngroups++] = n;
  return true;
}

/* node   = (def ("," def)*)? "=" KIND attrs? uses srcloc? blocks
 * blocks = ("block" N "(" (def ("," def)*)? ")" ":" body "->" "(" names ")")* */
static bool ts_p_node(ts_parser *p, ts_graph *g, ts_block *b) {
  const ts_type *types[1024];
  const char *names[1024];
  size_t name_lens[1024];
  size_t name_at[1024];
  uint32_t nout = 0;
  ts_p_skip_ws(p);
  /* Outputs are read before the node exists: keep names and types. */
  if (ts_p_peek(p) == '%') {
    do {
      if (nout == 1024) {
        ts_p_error(p, "more than 1024 outputs");
        return false;
      }
      ts_p_skip_ws(p);
      name_at[nout] = p->pos;
      if (!ts_p_value_name(p, g, &names[nout], &name_lens[nout]) || !ts_p_expect(p, ":") ||
          !(types[nout] = ts_p_type(p, &g->arena)))
        return false;
      nout++;
    } while (ts_p_accept(p, ","));
  }
  if (!ts_p_expect(p, "="))
    return false;
  ts_p_skip_ws(p);
  const char *ns, *nm;
  size_t nsn, nmn;
  if (!ts_p_ident(p, &ns, &nsn))
    return false;
  if (!ts_p_accept(p, "::")) {
    ts_p_error(p, "expected '::' in the node kind (as in 'aten::add')");
    return false;
  }
  if (!ts_p_ident(p, &nm, &nmn))
    return false;
  ts_node *n = ts_node_new_named(g, ns, (size_t)(nm + nmn - ns), 0);
  if (!n) {
    ts_p_error(p, "out of memory");
    return false;
  }
  for (uint32_t i = 0; i < nout; i++) {
    ts_value *v = ts_node_add_output(n, types[i]);
    if (!v) {
      ts_p_error(p, "out of memory");
      return false;
    }
    if (ts_graph_find_value(g, names[i], name_lens[i])) {
      ts_p_name_error(p, name_at[i], names[i], name_lens[i], "value ", " is defined twice");
      return false;
    }
    if (!ts_value_set_name_exact(v, names[i], name_lens[i])) {
      ts_p_error(p, "out of memory");
      return false;
    }
  }
  if (ts_p_peek(p) == '[' && !ts_p_attrs(p, (p->pos++, n)))
    return false;
  if (!ts_p_uses(p, g, n) || !ts_p_srcloc(p, n))
    return false;
  if (n->kind == TS_K_OTHER && !ts_p_remember_group(p, n))
    return false;
  ts_block_append_node(b, n);
  for (uint32_t i = 0;; i++) {
    ts_p_skip_ws(p);
    size_t at = p->pos;
    if (!(p->len - at > 5 && memcmp(p->src + at, "block", 5) == 0 && ts_is_digit(p->src[at + 5])))
      break;
    p->pos += 5;
    int64_t idx;
    if (!ts_p_int(p, &idx))
      return false;
    if (idx != (int64_t)i) {
      ts_p_error_at(p, at, "expected block%u here", i);
      return false;
    }
    if (!ts_p_enter(p))
      return false;
    ts_block *blk = ts_node_add_block(n);
    if (!blk) {
      ts_p_error(p, "out of memory");
      return false;
    }
    if (!ts_p_params(p, g, blk->param) || !ts_p_expect(p, ":") || !ts_p_body(p, g, blk))
      return false;
    if (!ts_p_expect(p, "->") || !ts_p_uses(p, g, blk->ret))
      return false;
    p->depth--;
  }
  return true;
}

/* body = node* (up to "->" or "return") */
static bool ts_p_body(ts_parser *p, ts_graph *g, ts_block *b) {
  for (;;) {
    ts_p_skip_ws(p);
    if (p->pos >= p->len) {
      ts_p_error(p, "unexpected end of input: expected a node, '->' or 'return'");
      return false;
    }
    size_t at = p->pos;
    if (ts_p_accept(p, "->") || ts_p_accept_word(p, "return")) {
      p->pos = at;
      return true;
    }
    int c = ts_p_peek(p);
    if (c != '%' && c != '=') {
      ts_p_error(p, "expected a node ('%%x : T = ns::op(...)'), '->' or 'return'");
      return false;
    }
    if (!ts_p_node(p, g, b))
      return false;
  }
}

static ts_node *ts_p_find_group(ts_parser *p, ts_graph *g, const char *s, size_t n) {
  for (size_t i = 0; i < p->ngroups; i++) {
    ts_node *m = p->groups[i];
    if (m && m->graph == g && strlen(m->kind_name) == n && memcmp(m->kind_name, s, n) == 0) {
      p->groups[i] = NULL;
      return m;
    }
  }
  return NULL;
}

/* graph  = "graph" "(" (def ("," def)*)? ")" ":" body "return" "(" names ")" ";"? group*
 * group  = "with" KIND_N "=" graph   (a node of this graph named KIND_N) */
static bool ts_p_graph(ts_parser *p, ts_graph *g) {
  if (!ts_p_enter(p))
    return false;
  if (!ts_p_accept_word(p, "graph")) {
    ts_p_skip_ws(p);
    ts_p_error(p, "expected 'graph('");
    return false;
  }
  if (!ts_p_params(p, g, g->block->param) || !ts_p_expect(p, ":") || !ts_p_body(p, g, g->block))
    return false;
  if (!ts_p_accept_word(p, "return")) {
    ts_p_error(p, "expected 'return'");
    return false;
  }
  if (!ts_p_uses(p, g, g->block->ret))
    return false;
  ts_p_accept(p, ";"); /* older printers ended the graph with ';' */
  for (;;) {
    ts_p_skip_ws(p);
    size_t at = p->pos;
    if (!ts_p_accept_word(p, "with"))
      break;
    const char *ns, *nm;
    size_t nsn, nmn;
    if (!ts_p_ident(p, &ns, &nsn) || !ts_p_expect(p, "::") || !ts_p_ident(p, &nm, &nmn))
      return false;
    size_t kn = (size_t)(nm + nmn - ns);
    ts_node *n = ts_p_find_group(p, g, ns, kn);
    if (!n) {
      if (g->parent) { /* a group of an enclosing graph: let it take this one */
        p->pos = at;
        break;
      }
      ts_p_error_at(p, (size_t)(ns - p->src), "no node '%.*s' in the graph for this subgraph", (int)kn, ns);
      return false;
    }
    if (!ts_p_expect(p, "="))
      return false;
    ts_graph *sub = ts_graph_new_subgraph(g);
    if (!sub) {
      ts_p_error(p, "out of memory");
      return false;
    }
    if (!ts_p_graph(p, sub))
      return false;
    /* "prim::FusionGroup_0" is a prim::FusionGroup with a Subgraph */
    size_t base = kn;
    while (ts_is_digit(ns[base - 1]))
      base--;
    base--;
    ts_kind k = ts_kind_lookup(ns, base);
    const char *kname = k != TS_K_OTHER ? ts_kind_name(k) : ts_arena_strndup(&g->arena, ns, base);
    if (!kname || !ts_node_set_g(n, "Subgraph", sub)) {
      ts_p_error(p, "out of memory");
      return false;
    }
    n->kind = k;
    n->kind_name = kname;
    n->op = k != TS_K_OTHER ? ts_op_get(k) : NULL;
    /* PyTorch prints the Subgraph first among the attributes it keeps */
    ts_attr **pp = &n->attrs;
    while (*pp && (*pp)->next)
      pp = &(*pp)->next;
    if (*pp != n->attrs) {
      ts_attr *sg = *pp;
      *pp = NULL;
      sg->next = n->attrs;
      n->attrs = sg;
    }
  }
  p->depth--;
  return true;
}

ts_graph *ts_graph_parse(const char *file, const char *src, size_t len, ts_diag *d) {
  ts_parser p = {.file = file ? file : "<input>", .src = src, .len = len, .d = d};
  if (!ts_ops_init(NULL)) {
    ts_diag_error(d, "the op table failed to initialise");
    return NULL;
  }
  ts_graph *g = ts_graph_new(0);
  if (!g) {
    ts_diag_error(d, "out of memory");
    return NULL;
  }
  if (memchr(src, 0, len))
    ts_p_error_at(&p, (size_t)((const char *)memchr(src, 0, len) - src), "NUL byte in the input");
  else if (ts_p_graph(&p, g)) {
    ts_p_skip_ws(&p);
    if (p.pos != p.len)
      ts_p_error(&p, "unexpected text after the graph");
  }
  if (!p.failed && !ts_graph_ok(g))
    ts_p_error(&p, "out of memory");
  free(p.groups);
  if (p.failed) {
    ts_graph_free(g);
    return NULL;
  }
  return g;
}
