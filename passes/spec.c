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
 * is unknown and shared with nothing (-1). */
#include "passes.h"

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
