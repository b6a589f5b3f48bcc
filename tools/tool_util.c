/* tools/tool_util.c: see tool_util.h. */
#include "tool_util.h"

#include "archive.h"
#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TSAOT_VERSION
#error "CMake defines TSAOT_VERSION (the project's version) for this file"
#endif

const char *ts_tool_version(void) { return TSAOT_VERSION; }
const char *ts_tool_llvm_version(void) { return TSAOT_LLVM_VERSION; }

void ts_tool_print_version(const char *prog) {
  if (strcmp(prog, "tsaot") == 0)
    printf("tsaot %s (LLVM %s)\n", TSAOT_VERSION, TSAOT_LLVM_VERSION);
  else
    printf("%s (tsaot) %s (LLVM %s)\n", prog, TSAOT_VERSION, TSAOT_LLVM_VERSION);
}

void ts_tool_diag_print(const char *prog, const char *text, const char *fallback) {
  if (!text || !*text) {
    fprintf(stderr, "%s: error: %s\n", prog, fallback);
    return;
  }
  while (*text) {
    const char *nl = strchr(text, '\n');
    size_t len = nl ? (size_t)(nl - text) : strlen(text);
    bool bare = !strncmp(text, "error: ", 7) || !strncmp(text, "warning: ", 9) || !strncmp(text, "note: ", 6);
    fprintf(stderr, "%s%s%.*s\n", bare ? prog : "", bare ? ": " : "", (int)len, text);
    text += len + (nl != NULL);
  }
}

/* What a pickle starting at p[0..n) holds at its top, in words: the class
 * of its first GLOBAL ("collections.OrderedDict"), into out[cap]. */
static void ts_tool_pickle_top(const uint8_t *p, size_t n, char *out, size_t cap) {
  snprintf(out, cap, "a pickle");
  size_t at = n >= 2 && p[0] == 0x80 ? 2 : 0; /* PROTO */
  if (at >= n || p[at] != 'c')                 /* GLOBAL "module\nname\n" */
    return;
  const uint8_t *mod = p + at + 1, *end = p + n;
  const uint8_t *nl = memchr(mod, '\n', (size_t)(end - mod));
  const uint8_t *name = nl ? nl + 1 : NULL;
  const uint8_t *nl2 = name && name < end ? memchr(name, '\n', (size_t)(end - name)) : NULL;
  if (!nl2 || nl - mod > 200 || nl2 - name > 200)
    return;
  for (const uint8_t *q = mod; q < nl2; q++)
    if (*q != '\n' && (*q < 0x20 || *q > 0x7e))
      return;
  snprintf(out, cap, "a pickled %.*s.%.*s", (int)(nl - mod), (const char *)mod, (int)(nl2 - name),
           (const char *)name);
}

bool ts_tool_explain_not_torchscript(const char *prog, const char *path) {
  char what[512];
  ts_diag d = {0};
  ts_fe_archive *a = ts_fe_archive_open(path, NULL, &d);
  ts_diag_free(&d);
  if (a) {
    bool code = ts_fe_archive_has(a, "constants.pkl");
    for (uint32_t i = 0, n = ts_fe_archive_count(a); !code && i < n; i++)
      code = strncmp(ts_fe_archive_name(a, i), "code/", 5) == 0;
    size_t len = 0;
    ts_diag d2 = {0};
    const uint8_t *pkl = code || !ts_fe_archive_has(a, "data.pkl") ? NULL : ts_fe_archive_read(a, "data.pkl", &len, &d2);
    ts_diag_free(&d2);
    if (pkl)
      ts_tool_pickle_top(pkl, len, what, sizeof what);
    ts_fe_archive_close(a);
    if (!pkl)
      return false;
  } else {
    /* torch.save's legacy format: a bare pickle (PROTO 2, then the magic
     * number as a LONG1) */
    uint8_t head[2] = {0};
    FILE *f = strcmp(path, "-") == 0 ? NULL : fopen(path, "rb");
    size_t n = f ? fread(head, 1, 2, f) : 0;
    if (f)
      fclose(f);
    if (n != 2 || head[0] != 0x80 || head[1] < 2 || head[1] > 5)
      return false;
    snprintf(what, sizeof what, "a pickle in torch.save's legacy format");
  }
  if (strstr(what, "collections.OrderedDict"))
    snprintf(what, sizeof what, "a state_dict (a pickled collections.OrderedDict)");
  fprintf(stderr, "%s: error: %s: not TorchScript: torch.save wrote %s; make the model TorchScript with "
          "torch.jit.script(model) or torch.jit.trace(model, example) and save that with torch.jit.save\n",
          prog, path, what);
  return true;
}

/* ------------------------------------------------------------ summary */

typedef struct ts_tool_opcount {
  const char *op;
  uint32_t n;
} ts_tool_opcount;

typedef struct ts_tool_opcounts {
  ts_tool_opcount *v;
  uint32_t n, cap;
  bool oom;
} ts_tool_opcounts;

/* Bookkeeping kinds, not operators a model calls. */
static bool ts_tool_op_counted(const ts_node *x) {
  static const char *const skip[] = {"prim::Constant", "prim::Param", "prim::Return", "prim::ListConstruct",
                                     "prim::TupleConstruct", "prim::TupleUnpack", "prim::ListUnpack",
                                     "prim::GetAttr", "prim::FusionGroup"};
  if (!x->kind_name)
    return false;
  for (size_t i = 0; i < sizeof skip / sizeof *skip; i++)
    if (strcmp(x->kind_name, skip[i]) == 0)
      return false;
  return true;
}

static void ts_tool_count_ops(ts_tool_opcounts *c, const ts_block *b) {
  for (ts_node *x = ts_block_first(b); x != b->ret && !c->oom; x = x->next) {
    if (ts_tool_op_counted(x)) {
      uint32_t i = 0;
      while (i < c->n && strcmp(c->v[i].op, x->kind_name) != 0)
        i++;
      if (i == c->n) {
        if (c->n == c->cap) {
          uint32_t cap = c->cap ? c->cap * 2 : 32;
          ts_tool_opcount *v = realloc(c->v, cap * sizeof *v);
          if (!v) {
            c->oom = true;
            return;
          }
          c->v = v;
          c->cap = cap;
        }
        c->v[c->n++] = (ts_tool_opcount){x->kind_name, 0};
      }
      c->v[i].n++;
    }
    for (uint32_t i = 0; i < x->nblocks; i++)
      ts_tool_count_ops(c, x->blocks[i]);
    for (const ts_attr *a = x->attrs; a; a = a->next)
      if (a->kind == TS_ATTR_GRAPH && a->u.g)
        ts_tool_count_ops(c, a->u.g->block);
  }
}

static int ts_tool_opcount_cmp(const void *pa, const void *pb) {
  const ts_tool_opcount *a = pa, *b = pb;
  if (a->n != b->n)
    return a->n > b->n ? -1 : 1;
  return strcmp(a->op, b->op);
}

bool ts_tool_summary_ops(ts_buf *b, const ts_graph *g, const char *(*source)(void *, const char *, size_t *),
                         void *source_ctx) {
  ts_tool_opcounts c = {0};
  ts_tool_count_ops(&c, g->block);
  if (c.oom) {
    free(c.v);
    return false;
  }
  if (c.n > 1)
    qsort(c.v, c.n, sizeof *c.v, ts_tool_opcount_cmp);
  uint32_t total = 0;
  for (uint32_t i = 0; i < c.n; i++)
    total += c.v[i].n;
  ts_buf_printf(b, "ops: %u kind%s, %u node%s\n", c.n, c.n == 1 ? "" : "s", total, total == 1 ? "" : "s");
  for (uint32_t i = 0; i < c.n; i++)
    ts_buf_printf(b, "  %s %u\n", c.v[i].op, c.v[i].n);
  free(c.v);
  ts_pass_missing_set s = {0};
  ts_pass_missing_collect(&s, g, 0);
  bool ok = !s.oom;
  if (ok && !s.n)
    ts_buf_puts(b, "unsupported: none\n");
  else if (ok) {
    ts_buf m = {0};
    uint32_t nops = ts_pass_missing_print(&m, &s, source, source_ctx, NULL, 0);
    ts_buf_printf(b, "unsupported: %u op%s tsaot has no kernel for, at %u place%s (a run that reaches one fails "
                  "there)\n%s", nops, nops == 1 ? "" : "s", s.n, s.n == 1 ? "" : "s", m.data ? m.data : "");
    ok = !m.failed;
    ts_buf_free(&m);
  }
  ts_pass_missing_free(&s);
  return ok && !b->failed;
}

char *ts_tool_read_file(const char *prog, const char *path, size_t max, size_t *len) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: error: cannot open '%s': %s\n", prog, path, strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap) {
      if (ferror(f)) {
        fprintf(stderr, "%s: error: cannot read '%s': %s\n", prog, path, strerror(errno));
        free(buf);
        buf = NULL;
      }
      break;
    }
    if (cap >= max) {
      fprintf(stderr, "%s: error: '%s' is larger than %zu bytes\n", prog, path, max);
      free(buf);
      buf = NULL;
      break;
    }
    char *b2 = realloc(buf, cap * 2 + 1);
    if (!b2) {
      fprintf(stderr, "%s: error: out of memory reading '%s'\n", prog, path);
      free(buf);
      buf = NULL;
      break;
    }
    buf = b2;
    cap *= 2;
  }
  if (f != stdin)
    fclose(f);
  if (buf)
    buf[n] = 0;
  *len = n;
  return buf;
}

static bool ts_tool_is_npy(const char *s) {
  size_t n = strlen(s);
  return n > 4 && strcmp(s + n - 4, ".npy") == 0;
}

const ts_type **ts_tool_input_types(ts_graph *g, const char *const *specs, uint32_t nspecs, ts_diag *d) {
  uint32_t nin = ts_block_ninputs(g->block);
  uint32_t first = nin && ts_block_input(g->block, 0)->type->kind == TS_TY_CLASS ? 1 : 0;
  if (nspecs > nin - first) {
    ts_diag_error(d, "%u input specs given for %u input%s", (unsigned)nspecs, (unsigned)(nin - first),
                  nin - first == 1 ? "" : "s");
    return NULL;
  }
  const ts_type **types = calloc(nin ? nin : 1, sizeof *types);
  if (!types) {
    ts_diag_error(d, "out of memory");
    return NULL;
  }
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  bool ok = true;
  for (uint32_t k = 0; ok && k < nspecs; k++) {
    const ts_value *in = ts_block_input(g->block, first + k);
    const char *s = specs[k];
    if (strncmp(s, "str:", 4) == 0)
      continue; /* a str: no spec */
    if (!ts_tool_is_npy(s)) {
      types[first + k] = ts_pass_spec_parse(ts_graph_arena(g), s, strlen(s), d);
      ok = types[first + k] != NULL;
      continue;
    }
    ts_rt_tensor *t = ts_rt_npy_read(&ctx, s);
    if (!t) {
      ts_diag_error(d, "%s", ctx.err.data ? ctx.err.data : s);
      ok = false;
      break;
    }
    ts_type_kind pk = in->type->kind;
    bool number = (t->ndim == 0 && (pk == TS_TY_INT || pk == TS_TY_FLOAT || pk == TS_TY_BOOL || pk == TS_TY_NUMBER)) ||
                  pk == TS_TY_STR || (pk == TS_TY_LIST && ts_rt_io_leaf(in->type));
    if (!number) {
      types[first + k] = ts_pass_spec_of_tensor(ts_graph_arena(g), t);
      if (!types[first + k]) {
        ts_diag_error(d, "%s: cannot make an input spec of it", s);
        ok = false;
      }
    }
    ts_rt_tensor_release(t);
  }
  ts_rt_ctx_free(&ctx);
  if (!ok) {
    free(types);
    return NULL;
  }
  return types;
}

/* ------------------------------------------------------------ arguments */

enum { TS_TOOL_ARG_DEPTH = 32 };

bool ts_tool_arg_syntax(const char *w) {
  return !strcmp(w, "none") || !strncmp(w, "str:", 4) || !strcmp(w, "[") || !strcmp(w, "]") || !strcmp(w, "(") ||
         !strcmp(w, ")");
}

void ts_tool_args_free(ts_tool_arg *args, uint32_t nargs) {
  for (uint32_t i = 0; args && i < nargs; i++)
    ts_tool_args_free(args[i].elems, args[i].n);
  free(args);
}

/* args = arg* up to `close` (a word) or the end; *at the next word. */
static bool ts_tool_args_read(const char *const *w, uint32_t nw, uint32_t *at, const char *close, int depth,
                              ts_tool_arg **out, uint32_t *n, char *why, size_t cap) {
  uint32_t start = *at;
  *out = NULL;
  *n = 0;
  if (depth > TS_TOOL_ARG_DEPTH) {
    snprintf(why, cap, "brackets nested more than %d deep", TS_TOOL_ARG_DEPTH);
    return false;
  }
  /* at most one argument per word left */
  ts_tool_arg *v = calloc(nw - *at + 1, sizeof *v);
  if (!v) {
    snprintf(why, cap, "out of memory");
    return false;
  }
  while (*at < nw) {
    const char *x = w[*at];
    if (close && !strcmp(x, close)) {
      (*at)++;
      *out = v;
      return true;
    }
    if (!strcmp(x, "]") || !strcmp(x, ")")) {
      snprintf(why, cap, "'%s' without its '%s'", x, x[0] == ']' ? "[" : "(");
      ts_tool_args_free(v, *n);
      return false;
    }
    ts_tool_arg *a = &v[(*n)++];
    a->word = x;
    (*at)++;
    if (!strcmp(x, "[") || !strcmp(x, "(")) {
      a->kind = x[0] == '[' ? TS_TOOL_ARG_LIST : TS_TOOL_ARG_TUPLE;
      if (!ts_tool_args_read(w, nw, at, x[0] == '[' ? "]" : ")", depth + 1, &a->elems, &a->n, why, cap)) {
        ts_tool_args_free(v, *n);
        return false;
      }
    } else {
      a->kind = !strcmp(x, "none") ? TS_TOOL_ARG_NONE : !strncmp(x, "str:", 4) ? TS_TOOL_ARG_STR : TS_TOOL_ARG_WORD;
    }
  }
  if (close) {
    snprintf(why, cap, "'%s' (word %u) without its '%s'", close[0] == ']' ? "[" : "(", start, close);
    ts_tool_args_free(v, *n);
    return false;
  }
  *out = v;
  return true;
}

bool ts_tool_args_parse(const char *const *words, uint32_t nwords, ts_tool_arg **args, uint32_t *nargs, char *why,
                        size_t cap) {
  uint32_t at = 0;
  return ts_tool_args_read(words, nwords, &at, NULL, 0, args, nargs, why, cap);
}

/* Checking arguments against their parameters' types. */
typedef struct ts_tool_ck {
  ts_arena *a;
  const char **leaves;
  uint32_t *nleaves;
  ts_buf *why;
  const char *name;
  uint32_t arg;
  uint32_t idx[TS_TOOL_ARG_DEPTH + 2];
  uint32_t depth;
} ts_tool_ck;

static bool ts_tool_ck_fail(ts_tool_ck *k, const ts_type *ty, const char *what) {
  char path[160];
  ts_rt_io_path(path, sizeof path, k->name, k->arg, k->idx, k->depth);
  ts_buf_printf(k->why, "argument %u (%s): %s for a parameter of type ", k->arg + 1, path, what);
  ts_type_print(k->why, ty);
  if (ty->kind == TS_TY_OPTIONAL)
    ty = ty->elems[0];
  if (ty->kind == TS_TY_TUPLE)
    ts_buf_printf(k->why, " (a tuple is written ( ... ), %u elements)", ty->n);
  else if (ty->kind == TS_TY_LIST && !ts_rt_io_leaf(ty))
    ts_buf_puts(k->why, " (a list is written [ ... ])");
  else if (ty->kind == TS_TY_LIST)
    ts_buf_puts(k->why, " (a list of numbers is one 1-d .npy)");
  else if (ty->kind == TS_TY_STR)
    ts_buf_puts(k->why, " (a str is str:TEXT or a 1-d uint8 .npy)");
  return false;
}

/* The form of one argument (or element) of type ty, into *f (f NULL: only
 * checked). */
static bool ts_tool_ck_arg(ts_tool_ck *k, const ts_tool_arg *x, const ts_type *ty, ts_pass_form *f) {
  const ts_type *u = ty;
  while (u->kind == TS_TY_OPTIONAL)
    u = u->elems[0];
  if (k->depth > TS_TOOL_ARG_DEPTH)
    return ts_tool_ck_fail(k, ty, "nested too deeply");
  switch (x->kind) {
  case TS_TOOL_ARG_NONE:
    if (ty->kind != TS_TY_OPTIONAL)
      return ts_tool_ck_fail(k, ty, "none");
    if (f)
      f->kind = TS_PASS_FORM_NONE;
    return true;
  case TS_TOOL_ARG_WORD:
  case TS_TOOL_ARG_STR:
    if (!ts_rt_io_leaf(u))
      return ts_tool_ck_fail(k, ty, x->kind == TS_TOOL_ARG_STR ? "a str" : "one array");
    if (x->kind == TS_TOOL_ARG_STR && u->kind != TS_TY_STR)
      return ts_tool_ck_fail(k, ty, "a str");
    if (f) {
      f->kind = TS_PASS_FORM_LEAF;
      k->leaves[(*k->nleaves)++] = x->word;
    }
    return true;
  case TS_TOOL_ARG_LIST:
  case TS_TOOL_ARG_TUPLE: {
    bool list = x->kind == TS_TOOL_ARG_LIST;
    if (list ? u->kind != TS_TY_LIST || ts_rt_io_leaf(u) : u->kind != TS_TY_TUPLE)
      return ts_tool_ck_fail(k, ty, list ? "a list [ ... ]" : "a tuple ( ... )");
    if (!list && x->n != u->n)
      return ts_tool_ck_fail(k, ty, x->n < u->n ? "a tuple of fewer elements" : "a tuple of more elements");
    ts_pass_form *el = NULL;
    if (f) {
      f->kind = list ? TS_PASS_FORM_LIST : TS_PASS_FORM_TUPLE;
      f->n = x->n;
      if (x->n && !(el = ts_arena_alloc(k->a, x->n * sizeof *el))) {
        ts_buf_puts(k->why, "out of memory");
        return false;
      }
      if (el)
        memset(el, 0, x->n * sizeof *el);
      f->elems = el;
    }
    uint32_t d = k->depth++;
    for (uint32_t i = 0; i < x->n; i++) {
      k->idx[d] = i;
      if (!ts_tool_ck_arg(k, &x->elems[i], list ? u->elems[0] : u->elems[i], el ? &el[i] : NULL))
        return false;
    }
    k->depth = d;
    return true;
  }
  }
  return false;
}

bool ts_tool_args_check(const ts_tool_arg *args, uint32_t nargs, const ts_type *const *types,
                        const char *const *names, ts_arena *a, const ts_pass_form **forms, const char **leaves,
                        uint32_t *nleaves, ts_buf *why) {
  ts_tool_ck k = {.a = a, .leaves = leaves, .nleaves = nleaves, .why = why};
  for (uint32_t i = 0; i < nargs; i++) {
    k.name = names ? names[i] : NULL;
    k.arg = i;
    k.depth = 0;
    ts_pass_form *f = NULL;
    if (forms && !(f = ts_arena_alloc(a, sizeof *f))) {
      ts_buf_puts(why, "out of memory");
      return false;
    }
    if (f)
      memset(f, 0, sizeof *f);
    if (!ts_tool_ck_arg(&k, &args[i], types[i], f))
      return false;
    if (forms)
      forms[i] = f;
  }
  return true;
}

void ts_tool_slots_free(ts_tool_slots *s) {
  for (uint32_t i = 0; s->t && i < s->n; i++)
    if (s->t[i])
      ts_rt_tensor_release(s->t[i]);
  free(s->t);
  free(s->word);
  memset(s, 0, sizeof *s);
}

static uint32_t ts_tool_count_slots(const ts_tool_arg *args, uint32_t n) {
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; i++)
    k += args[i].kind == TS_TOOL_ARG_TUPLE  ? ts_tool_count_slots(args[i].elems, args[i].n)
         : args[i].kind == TS_TOOL_ARG_LIST ? 1 + ts_tool_count_slots(args[i].elems, args[i].n)
                                            : 1;
  return k;
}

static bool ts_tool_slots_fill(ts_rt_ctx *c, const ts_tool_arg *args, uint32_t n, ts_tool_slots *s) {
  for (uint32_t i = 0; i < n; i++) {
    const ts_tool_arg *x = &args[i];
    uint32_t at = s->n++;
    s->word[at] = x->word;
    switch (x->kind) {
    case TS_TOOL_ARG_NONE:
      break;
    case TS_TOOL_ARG_WORD:
      if (!(s->t[at] = ts_rt_npy_read(c, x->word)))
        return false;
      break;
    case TS_TOOL_ARG_STR: {
      int64_t len = (int64_t)strlen(x->word + 4);
      if (!(s->t[at] = ts_rt_tensor_new(c, TS_DT_UINT8, 1, &len, false)))
        return false;
      memcpy(ts_rt_tensor_data(s->t[at]), x->word + 4, (size_t)len);
      break;
    }
    case TS_TOOL_ARG_LIST:
      if (!(s->t[at] = ts_rt_tensor_scalar(c, TS_DT_INT64, 0, x->n)))
        return false;
      if (!ts_tool_slots_fill(c, x->elems, x->n, s))
        return false;
      break;
    case TS_TOOL_ARG_TUPLE:
      s->n--; /* a tuple has no slot of its own */
      if (!ts_tool_slots_fill(c, x->elems, x->n, s))
        return false;
      break;
    }
  }
  return true;
}

bool ts_tool_slots_make(ts_rt_ctx *c, const ts_tool_arg *args, uint32_t nargs, ts_tool_slots *s) {
  memset(s, 0, sizeof *s);
  uint32_t n = ts_tool_count_slots(args, nargs);
  s->t = calloc(n + 1, sizeof *s->t);
  s->word = calloc(n + 1, sizeof *s->word);
  if (!s->t || !s->word) {
    ts_tool_slots_free(s);
    return ts_rt_oom(c);
  }
  if (!ts_tool_slots_fill(c, args, nargs, s)) {
    ts_tool_slots_free(s);
    return false;
  }
  return true;
}

static ts_rt_tensor *ts_tool_slot(void *arg, ts_rt_ctx *c, uint32_t i, const ts_type *as, bool *none) {
  (void)c;
  (void)as;
  const ts_tool_slots *s = arg;
  if (!s->t[i]) {
    *none = true;
    return NULL;
  }
  if (!as)
    return NULL;
  ts_rt_tensor_retain(s->t[i]);
  return s->t[i];
}

bool ts_tool_slots_values(ts_rt_ctx *c, const ts_tool_slots *s, const ts_type *const *types,
                          const char *const *names, uint32_t nargs, ts_iv *out, ts_buf *why) {
  ts_rt_io_where w = {0};
  if (ts_rt_io_args(c, types, nargs, s->n, ts_tool_slot, (void *)s, out, &w))
    return true;
  const char *msg = c->err.data && c->err.len ? c->err.data : "out of memory";
  if (w.arg >= nargs) {
    ts_buf_printf(why, "%s", msg);
    return false;
  }
  char path[160];
  ts_rt_io_path(path, sizeof path, names ? names[w.arg] : NULL, w.arg, w.idx, w.depth);
  const char *word = w.slot < s->n ? s->word[w.slot] : "(the end)";
  if (w.slot < s->n && s->word[w.slot][0] == '[')
    word = "[ (a list's length)";
  ts_buf_printf(why, "%s (argument %u '%s'): %s", word, w.arg + 1, path, msg);
  return false;
}
