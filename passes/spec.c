/* passes/spec.c: input specs, the types that specialise a graph to its
 * inputs ("f32[1,3,224,224]", "i64[]", "f32[N,3]", "f32[?,3]").
 *
 * PyTorch takes the same information from example inputs
 * (torch.jit._script's example_inputs, or the complete tensor types a
 * traced graph carries); a spec is that information as text, so tools can
 * specialise without an example array.
 *
 * A named size ("N") is a symbol: the same name gives the same symbol in
 * every spec, whichever call parses it, because the symbol is computed from
 * the name (a size <= -2; ts_pass_shape_prop renumbers the symbols of its
 * inputs to -2, -3, ... in order of first appearance). "?" is a size that
 * is unknown and shared with nothing (-1).
 *
 * An argument that is not one array (include/tsaot.h's slots: an
 * Optional, a tuple, a list of tensors) is specialised to the form its
 * example has: ts_pass_spec_leaves makes the graph take the example's
 * leaves (each tensor, number, str) as inputs of their own, so that shape
 * propagation sees each element's spec, None is a constant, and a list's
 * length is known; the entry guard (runtime/hosted/aot.c) checks the form. */
#include "passes.h"

#include <stdlib.h>
#include <string.h>

enum {
  TS_SPEC_MAX_RANK = 64,
  /* names of up to 10 characters of [A-Za-z0-9_] fit in 60 bits, one per 6 */
  TS_SPEC_MAX_NAME = 10,
};

typedef struct ts_spec_dt {
  const char *name;
  ts_dtype dt;
} ts_spec_dt;

static const ts_spec_dt ts_spec_dtypes[] = {
    {"bool", TS_DT_BOOL},   {"u8", TS_DT_UINT8},    {"i8", TS_DT_INT8},       {"i16", TS_DT_INT16},
    {"i32", TS_DT_INT32},   {"i64", TS_DT_INT64},   {"f16", TS_DT_FLOAT16},   {"bf16", TS_DT_BFLOAT16},
    {"f32", TS_DT_FLOAT32}, {"f64", TS_DT_FLOAT64},
};

static bool ts_spec_is_ident(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
}

/* 1..63 for an identifier character: digits, letters, '_' */
static int64_t ts_spec_char_code(char c) {
  if (c >= '0' && c <= '9')
    return 1 + (c - '0');
  if (c >= 'A' && c <= 'Z')
    return 11 + (c - 'A');
  if (c >= 'a' && c <= 'z')
    return 37 + (c - 'a');
  return 63;
}

/* The symbol of a size name: distinct names give distinct symbols (no
 * character code is 0, so the base-64 number is unique). */
static int64_t ts_spec_symbol(const char *s, size_t n) {
  int64_t code = 0;
  for (size_t i = n; i-- > 0;)
    code = code * 64 + ts_spec_char_code(s[i]);
  return -2 - code;
}

typedef struct ts_spec_p {
  const char *s;
  size_t len, pos;
  ts_diag *d;
} ts_spec_p;

static void ts_spec_skip(ts_spec_p *p) {
  while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t'))
    p->pos++;
}

static const ts_type *ts_spec_fail(ts_spec_p *p, size_t at, const char *what) {
  ts_diag_error(p->d, "input spec '%.*s': %s at column %zu (expected e.g. f32[1,3,224,224], i64[], f32[N,3], f32[?,3])",
                (int)p->len, p->s, what, at + 1);
  return NULL;
}

/* spec = DTYPE "[" (dim ("," dim)*)? "]"    dim = INT | "?" | NAME */
const ts_type *ts_pass_spec_parse(ts_arena *a, const char *text, size_t len, ts_diag *d) {
  ts_spec_p p = {.s = text ? text : "", .len = text ? len : 0, .d = d};
  ts_spec_skip(&p);
  size_t at = p.pos;
  while (p.pos < p.len && ts_spec_is_ident(p.s[p.pos], false))
    p.pos++;
  ts_dtype dt = TS_DT_NONE;
  for (size_t i = 0; i < sizeof ts_spec_dtypes / sizeof *ts_spec_dtypes; i++)
    if (strlen(ts_spec_dtypes[i].name) == p.pos - at && memcmp(ts_spec_dtypes[i].name, p.s + at, p.pos - at) == 0)
      dt = ts_spec_dtypes[i].dt;
  if (dt == TS_DT_NONE)
    return ts_spec_fail(&p, at,
                        p.pos == at ? "expected a dtype (bool, u8, i8, i16, i32, i64, f16, bf16, f32, f64)"
                                    : "unknown dtype (bool, u8, i8, i16, i32, i64, f16, bf16, f32, f64)");
  ts_spec_skip(&p);
  if (p.pos >= p.len || p.s[p.pos] != '[')
    return ts_spec_fail(&p, p.pos, "expected '['");
  p.pos++;
  int64_t sizes[TS_SPEC_MAX_RANK];
  int32_t rank = 0;
  ts_spec_skip(&p);
  bool close = p.pos < p.len && p.s[p.pos] == ']';
  while (!close) {
    ts_spec_skip(&p);
    at = p.pos;
    if (rank == TS_SPEC_MAX_RANK)
      return ts_spec_fail(&p, at, "more than 64 dimensions");
    char c = p.pos < p.len ? p.s[p.pos] : 0;
    if (c >= '0' && c <= '9') {
      int64_t v = 0;
      while (p.pos < p.len && p.s[p.pos] >= '0' && p.s[p.pos] <= '9') {
        if (v > (INT64_MAX / 4 - 9) / 10)
          return ts_spec_fail(&p, at, "size too large");
        v = v * 10 + (p.s[p.pos++] - '0');
      }
      sizes[rank++] = v;
    } else if (c == '?') {
      p.pos++;
      sizes[rank++] = -1;
    } else if (ts_spec_is_ident(c, true)) {
      while (p.pos < p.len && ts_spec_is_ident(p.s[p.pos], false))
        p.pos++;
      if (p.pos - at > TS_SPEC_MAX_NAME)
        return ts_spec_fail(&p, at, "size name longer than 10 characters");
      sizes[rank++] = ts_spec_symbol(p.s + at, p.pos - at);
    } else if (c == '-') {
      return ts_spec_fail(&p, at, "negative size");
    } else {
      return ts_spec_fail(&p, at, "expected a size (an integer, a name or '?')");
    }
    ts_spec_skip(&p);
    if (p.pos < p.len && p.s[p.pos] == ',') {
      p.pos++;
      continue;
    }
    if (p.pos < p.len && p.s[p.pos] == ']')
      break;
    return ts_spec_fail(&p, p.pos, "expected ',' or ']'");
  }
  p.pos++;
  ts_spec_skip(&p);
  if (p.pos != p.len)
    return ts_spec_fail(&p, p.pos, "unexpected text after ']'");
  int64_t strides[TS_SPEC_MAX_RANK];
  bool concrete = true;
  int64_t numel = 1;
  for (int32_t i = 0; i < rank; i++) {
    concrete = concrete && sizes[i] >= 0;
    if (sizes[i] > 1 && numel > INT64_MAX / sizes[i])
      return ts_spec_fail(&p, 0, "more elements than an int64 counts");
    if (sizes[i] > 1)
      numel *= sizes[i];
  }
  if (concrete)
    ts_rt_strides_contiguous(rank, sizes, strides);
  ts_tensor_info ti = {.dtype = (int8_t)dt,
                       .requires_grad = 0,
                       .undefined = -1,
                       .device = {TS_DEV_CPU, -1},
                       .rank = rank,
                       .sizes = sizes,
                       .strides = concrete ? strides : NULL};
  const ts_type *t = ts_type_tensor(a, &ti);
  if (!t)
    ts_diag_error(d, "input spec '%.*s': out of memory", (int)p.len, p.s);
  return t;
}

const ts_type *ts_pass_spec_of_tensor(ts_arena *a, const ts_rt_tensor *t) {
  if (!t || t->ndim < 0 || t->ndim > TS_SPEC_MAX_RANK)
    return NULL;
  int64_t strides[TS_SPEC_MAX_RANK];
  ts_rt_strides_contiguous(t->ndim, t->sizes, strides);
  ts_tensor_info ti = {.dtype = t->dtype,
                       .requires_grad = 0,
                       .undefined = -1,
                       .device = {TS_DEV_CPU, -1},
                       .rank = t->ndim,
                       .sizes = t->sizes,
                       .strides = strides};
  return ts_type_tensor(a, &ti);
}

/* ------------------------------------------------------------- leaves */

typedef struct ts_spec_lv {
  ts_graph *g;
  ts_node *pos; /* the nodes built go before it */
  ts_diag *d;
  const char *arg;
} ts_spec_lv;

static ts_value *ts_spec_lv_fail(ts_spec_lv *s, const char *what) {
  ts_diag_error(s->d, "argument '%s': %s", s->arg, what);
  return NULL;
}

/* The value standing for an argument (or element) of type ty in form f:
 * a new graph input for a leaf, a None constant, or a tuple or list built
 * from its elements' values. */
static ts_value *ts_spec_lv_value(ts_spec_lv *s, const ts_pass_form *f, const ts_type *ty, int depth) {
  if (depth > TS_RT_IO_MAX_DEPTH)
    return ts_spec_lv_fail(s, "nested too deeply");
  bool opt = ty->kind == TS_TY_OPTIONAL;
  const ts_type *u = ty;
  while (u->kind == TS_TY_OPTIONAL)
    u = u->elems[0];
  if (f->kind == TS_PASS_FORM_NONE) {
    if (!opt)
      return ts_spec_lv_fail(s, "None for a value that is not Optional");
    ts_iv none = ts_iv_none();
    ts_value *c = ts_pass_const_insert_iv(s->pos, &none, NULL, false);
    return c ? c : ts_spec_lv_fail(s, "out of memory");
  }
  if (f->kind == TS_PASS_FORM_LEAF) {
    if (!ts_rt_io_leaf(u))
      return ts_spec_lv_fail(s, "one array for a value of several");
    ts_value *v = ts_block_add_input(s->g->block, u);
    return v ? v : ts_spec_lv_fail(s, "out of memory");
  }
  bool tuple = f->kind == TS_PASS_FORM_TUPLE;
  if ((tuple && (u->kind != TS_TY_TUPLE || u->n != f->n)) || (!tuple && (u->kind != TS_TY_LIST || ts_rt_io_leaf(u))))
    return ts_spec_lv_fail(s, tuple ? "a tuple's form for another type, or another element count"
                                    : "a list's form for another type");
  ts_node *n = ts_node_new(s->g, tuple ? TS_K_prim_TupleConstruct : TS_K_prim_ListConstruct, 0);
  if (!n)
    return ts_spec_lv_fail(s, "out of memory");
  for (uint32_t i = 0; i < f->n; i++) {
    ts_value *e = ts_spec_lv_value(s, &f->elems[i], tuple ? u->elems[i] : u->elems[0], depth + 1);
    if (!e)
      return NULL;
    if (!ts_node_add_input(n, e))
      return ts_spec_lv_fail(s, "out of memory");
  }
  ts_value *out = ts_node_add_output(n, u);
  if (!out)
    return ts_spec_lv_fail(s, "out of memory");
  ts_node_insert_before(n, s->pos);
  return out;
}

bool ts_pass_spec_leaves(ts_graph *g, uint32_t first, const ts_pass_form *const *forms, uint32_t nforms, ts_diag *d) {
  ts_block *top = g->block;
  uint32_t nin = ts_block_ninputs(top);
  if (first > nin || nforms != nin - first) {
    ts_diag_error(d, "%u argument forms for %u arguments", nforms, first <= nin ? nin - first : 0);
    return false;
  }
  /* every argument's leaves, in order, after the inputs there are now;
   * then the old inputs go */
  ts_spec_lv s = {.g = g, .pos = ts_block_first(top), .d = d};
  ts_value **single = calloc(nforms + 1, sizeof *single);
  const char **names = calloc(nforms + 1, sizeof *names);
  bool ok = single && names;
  if (!ok)
    ts_diag_error(d, "out of memory");
  for (uint32_t k = 0; k < nforms && ok; k++) {
    ts_value *old = ts_block_input(top, first + k);
    s.arg = old->name ? old->name : "?";
    ts_value *v = ts_spec_lv_value(&s, forms[k], old->type, 0);
    ok = v != NULL;
    if (!ok)
      break;
    ts_value_replace_all_uses(old, v);
    if (forms[k]->kind == TS_PASS_FORM_LEAF) {
      single[k] = v;
      names[k] = old->name; /* in the graph's arena: it outlives the input */
    }
  }
  for (uint32_t k = nforms; ok && k-- > 0;)
    ts_node_remove_output(top->param, first + k);
  /* an argument that is one leaf keeps its name */
  for (uint32_t k = 0; ok && k < nforms; k++)
    if (single[k] && names[k])
      ok = ts_value_set_name(single[k], names[k]);
  free(single);
  free(names);
  return ok && ts_graph_ok(g);
}
