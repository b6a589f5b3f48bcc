/* passes/shape_rules.c: the shape rule registry and the helpers rules share.
 *
 * The rules themselves live in shape_rules_pointwise.c (elementwise ops,
 * with broadcasting and PyTorch's result_type), shape_rules_shape.c (views,
 * factories, joins and splits, indexing), shape_rules_nn.c (reductions,
 * matrix products, convolution, pooling, normalisation, recurrent cells)
 * and shape_rules_tensor.c (writes through indices, gathers, scans,
 * layouts: index_put, take, meshgrid, tril, repeat_interleave, ...) and
 * shape_rules_vision.c (torchvision's nms, roi_align, roi_pool) and
 * shape_rules_fft.c (complex tensors' own ops, the fft family, windows).
 * Each file exports one table whose entries name exactly one schema of
 * ir/ops.def, as the kernel tables do; ts_sr_init binds them once and
 * refuses unknown names and schemas with two rules. In-place and out=
 * overloads without an entry take the rule of the out-of-place overload
 * they are a form of (ts_sr_variant_rule, below), as the runtime adapts its
 * kernel (runtime/adapt.c).
 *
 * PyTorch keeps the same knowledge in shape_analysis.cpp (the rules of
 * PropagateInputShapes) and in the TorchScript shape functions of
 * symbolic_shape_registry; these rules follow what the runtime's kernels
 * compute, which follow ATen. */
#include "shape_rules.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ registry */

static const ts_sr_def *ts_sr_tables[] = {NULL /* pointwise */, ts_sr_rules_shape, ts_sr_rules_nn, ts_sr_rules_tensor,
                                          ts_sr_rules_vision, ts_sr_rules_fft,
                                          ts_sr_rules_random,
                                          ts_sr_rules_loss,
                                          ts_sr_rules_stats,
                                          ts_sr_rules_special,
                                          ts_sr_rules_linalg, ts_sr_rules_histogram,
                                          ts_sr_rules_views,
                                          ts_sr_rules_packed};
static const ts_sr_def ts_sr_none[] = {{NULL, NULL}};

static pthread_once_t ts_sr_once = PTHREAD_ONCE_INIT;
static bool ts_sr_ok;
static ts_buf ts_sr_errors;
/* per kind, one slot per overload (in ts_op_schemas order) */
static ts_sr_fn *ts_sr_by_kind[TS_K_COUNT];
static const ts_sr_def **ts_sr_list;
static uint32_t ts_sr_nlist;

static const ts_schema *ts_sr_resolve(const char *name, ts_kind *kind, uint32_t *index) {
  const char *colons = strstr(name, "::");
  const char *dot = strchr(colons ? colons + 2 : name, '.');
  size_t len = dot ? (size_t)(dot - name) : strlen(name);
  ts_kind k = ts_kind_lookup(name, len);
  if (k == TS_K_OTHER)
    return NULL;
  const ts_schema *s = ts_op_find_overload(k, dot ? dot + 1 : "");
  uint32_t n = 0;
  const ts_schema *const *all = ts_op_schemas(k, &n);
  for (uint32_t i = 0; s && i < n; i++)
    if (all[i] == s) {
      *kind = k;
      *index = i;
      return s;
    }
  return NULL;
}

static void ts_sr_init_once(void) {
  ts_diag od = {0};
  ts_sr_ok = ts_ops_init(&od);
  if (!ts_sr_ok)
    ts_buf_printf(&ts_sr_errors, "the op table does not parse: %s\n", od.text.data ? od.text.data : "");
  ts_diag_free(&od);
  ts_sr_tables[0] = ts_sr_rules_pointwise();
  if (!ts_sr_tables[0]) {
    ts_sr_tables[0] = ts_sr_none;
    ts_sr_ok = false;
    ts_buf_puts(&ts_sr_errors, "out of memory making the pointwise shape rules\n");
  }
  uint32_t total = 0;
  for (size_t t = 0; t < sizeof ts_sr_tables / sizeof *ts_sr_tables; t++)
    for (const ts_sr_def *e = ts_sr_tables[t]; e->schema; e++)
      total++;
  ts_sr_list = calloc(total ? total : 1, sizeof *ts_sr_list);
  if (!ts_sr_list) {
    ts_sr_ok = false;
    ts_buf_puts(&ts_sr_errors, "out of memory\n");
    return;
  }
  for (size_t t = 0; t < sizeof ts_sr_tables / sizeof *ts_sr_tables; t++) {
    for (const ts_sr_def *e = ts_sr_tables[t]; e->schema; e++) {
      ts_kind k = TS_K_OTHER;
      uint32_t idx = 0;
      if (!ts_sr_resolve(e->schema, &k, &idx) || !e->fn) {
        ts_buf_printf(&ts_sr_errors, "shape rule for '%s': no such schema in the op table\n", e->schema);
        ts_sr_ok = false;
        continue;
      }
      if (!ts_sr_by_kind[k]) {
        uint32_t n = 0;
        ts_op_schemas(k, &n);
        if (!(ts_sr_by_kind[k] = calloc(n, sizeof **ts_sr_by_kind))) {
          ts_sr_ok = false;
          ts_buf_puts(&ts_sr_errors, "out of memory\n");
          return;
        }
      }
      if (ts_sr_by_kind[k][idx]) {
        ts_buf_printf(&ts_sr_errors, "two shape rules for '%s'\n", e->schema);
        ts_sr_ok = false;
        continue;
      }
      ts_sr_by_kind[k][idx] = e->fn;
      ts_sr_list[ts_sr_nlist++] = e;
    }
  }
}

bool ts_sr_init(ts_diag *d) {
  pthread_once(&ts_sr_once, ts_sr_init_once);
  for (const char *p = ts_sr_errors.data; p && *p;) {
    size_t len = strcspn(p, "\n");
    ts_diag_error(d, "%.*s", (int)len, p);
    p += len + (p[len] == '\n');
  }
  return ts_sr_ok;
}

static void ts_sr_variant_rule(ts_sr_call *c);

/* The rule of a table entry for s, or NULL. */
static ts_sr_fn ts_sr_own_rule(const ts_schema *s) {
  if (!s)
    return NULL;
  pthread_once(&ts_sr_once, ts_sr_init_once);
  ts_kind k = ts_kind_lookup(s->name, strlen(s->name));
  if (k == TS_K_OTHER || !ts_sr_by_kind[k])
    return NULL;
  uint32_t n = 0;
  const ts_schema *const *all = ts_op_schemas(k, &n);
  for (uint32_t i = 0; i < n; i++)
    if (all[i] == s)
      return ts_sr_by_kind[k][i];
  return NULL;
}

ts_sr_fn ts_sr_rule_for(const ts_schema *s) {
  ts_sr_fn f = ts_sr_own_rule(s);
  if (f || !s)
    return f;
  ts_variant v = ts_schema_variant(s);
  return v.kind != TS_VARIANT_NONE && ts_sr_own_rule(v.base) ? ts_sr_variant_rule : NULL;
}

const ts_sr_def *const *ts_sr_all(uint32_t *n) {
  pthread_once(&ts_sr_once, ts_sr_init_once);
  *n = ts_sr_nlist;
  return ts_sr_list;
}

/* ------------------------------------------------------------- helpers */

void ts_sr_unknown(ts_sr_shape *s) {
  s->dtype = TS_DT_NONE;
  s->requires_grad = -1;
  s->device.type = TS_DEV_NONE;
  s->device.index = -1;
  s->rank = -1;
  s->has_strides = false;
}

static const ts_value *ts_sr_in(const ts_sr_call *c, uint32_t i) {
  return i < c->node->ninputs ? c->node->inputs[i] : NULL;
}

/* The schema's default of an argument the node leaves out (nodes made by
 * passes may stop at the last argument they set), or NULL. */
static const ts_default *ts_sr_default(const ts_sr_call *c, uint32_t i) {
  if (i < c->node->ninputs || i >= c->schema->nargs || !c->schema->args[i].has_default)
    return NULL;
  return &c->schema->args[i].def;
}

/* A ts_sr_shape from a Tensor type. */
static void ts_sr_from_type(const ts_type *t, ts_sr_shape *out) {
  ts_sr_unknown(out);
  const ts_tensor_info *ti = t->tensor;
  if (!ti)
    return;
  out->dtype = ti->dtype;
  out->requires_grad = ti->requires_grad;
  out->device = ti->device;
  if (ti->rank >= 0 && ti->rank <= TS_SR_MAX_RANK) {
    out->rank = ti->rank;
    for (int32_t k = 0; k < ti->rank; k++)
      out->sizes[k] = ti->sizes[k];
    if (ti->strides && ti->rank > 0) {
      out->has_strides = true;
      for (int32_t k = 0; k < ti->rank; k++)
        out->strides[k] = ti->strides[k];
    }
    if (ti->rank == 0)
      out->has_strides = true;
  }
}

bool ts_sr_tensor(const ts_sr_call *c, uint32_t i, ts_sr_shape *out) {
  const ts_value *v = ts_sr_in(c, i);
  if (!v || v->type->kind != TS_TY_TENSOR)
    return false;
  ts_sr_from_type(v->type, out);
  return true;
}

bool ts_sr_is_none(const ts_sr_call *c, uint32_t i) {
  const ts_value *v = ts_sr_in(c, i);
  if (!v) {
    const ts_default *df = ts_sr_default(c, i);
    return df && df->kind == TS_DEF_NONE_VALUE;
  }
  if (v->type->kind == TS_TY_NONE)
    return true;
  ts_cval cv;
  return ts_pass_const_get(v, &cv) && cv.kind == TS_CV_NONE;
}

bool ts_sr_int(const ts_sr_call *c, uint32_t i, int64_t *out) {
  const ts_value *v = ts_sr_in(c, i);
  const ts_default *df = ts_sr_default(c, i);
  if (df && (df->kind == TS_DEF_INT || df->kind == TS_DEF_ENUM)) {
    if (df->kind == TS_DEF_ENUM)
      return false; /* contiguous_format and the like: not read as ints here */
    *out = df->u.i;
    return true;
  }
  return v && ts_sp_int_exact(c->sp, v, out);
}

bool ts_sr_bool(const ts_sr_call *c, uint32_t i, bool *out) {
  const ts_value *v = ts_sr_in(c, i);
  const ts_default *df = ts_sr_default(c, i);
  if (df && df->kind == TS_DEF_BOOL) {
    *out = df->u.b;
    return true;
  }
  return v && ts_pass_const_bool(v, out);
}

bool ts_sr_double(const ts_sr_call *c, uint32_t i, double *out) {
  const ts_value *v = ts_sr_in(c, i);
  ts_cval cv;
  if (!v || !ts_pass_const_get(v, &cv))
    return false;
  if (cv.kind == TS_CV_FLOAT)
    *out = cv.f;
  else if (cv.kind == TS_CV_INT)
    *out = (double)cv.i;
  else
    return false;
  return true;
}

ts_type_kind ts_sr_number_kind(const ts_sr_call *c, uint32_t i) {
  const ts_value *v = ts_sr_in(c, i);
  if (!v)
    return TS_TY_NUMBER;
  ts_type_kind k = v->type->kind;
  if (k != TS_TY_NUMBER)
    return k;
  /* a Scalar taken from a tensor: its dtype says which number it is */
  const ts_node *n = v->node;
  if ((ts_node_is(n, TS_K_aten_ScalarImplicit) || ts_node_is(n, TS_K_aten_item)) && n->ninputs == 1 &&
      n->inputs[0]->type->kind == TS_TY_TENSOR && n->inputs[0]->type->tensor) {
    int8_t dt = n->inputs[0]->type->tensor->dtype;
    if (dt == TS_DT_BOOL)
      return TS_TY_BOOL;
    if (ts_dtype_is_float((ts_dtype)dt))
      return TS_TY_FLOAT;
    if (dt != TS_DT_NONE && ts_dtype_size((ts_dtype)dt) > 0)
      return TS_TY_INT;
  }
  return TS_TY_NUMBER;
}

bool ts_sr_size(const ts_sr_call *c, uint32_t i, int64_t *out) {
  const ts_value *v = ts_sr_in(c, i);
  return v && ts_sp_int_value(c->sp, v, out);
}

/* An int[] prim::Constant's elements. */
static const ts_attr *ts_sr_const_ints(const ts_value *v) {
  if (!ts_node_is(v->node, TS_K_prim_Constant))
    return NULL;
  const ts_attr *a = ts_node_attr(v->node, "value");
  return a && a->kind == TS_ATTR_INTS ? a : NULL;
}

/* An int[] argument left out: its default ("=[0, 1]", "=1" for int[N]). */
static bool ts_sr_default_ints(const ts_sr_call *c, uint32_t i, int64_t *out, int32_t *n, int32_t max) {
  const ts_default *df = ts_sr_default(c, i);
  if (!df || df->kind != TS_DEF_INTS || df->len > (size_t)max)
    return false;
  for (size_t k = 0; k < df->len; k++)
    out[k] = df->u.is[k];
  *n = (int32_t)df->len;
  return true;
}

bool ts_sr_int_list(const ts_sr_call *c, uint32_t i, int64_t *out, int32_t *n, int32_t max) {
  const ts_value *v = ts_sr_in(c, i);
  if (!v)
    return ts_sr_default_ints(c, i, out, n, max);
  const ts_attr *a = ts_sr_const_ints(v);
  if (a) {
    if (a->len > (size_t)max)
      return false;
    for (size_t k = 0; k < a->len; k++)
      out[k] = a->u.is[k];
    *n = (int32_t)a->len;
    return true;
  }
  uint32_t cnt = 0;
  ts_value *const *items = ts_sp_list_items(v, &cnt);
  if (!items || cnt > (uint32_t)max)
    return false;
  for (uint32_t k = 0; k < cnt; k++)
    if (!ts_sp_int_exact(c->sp, items[k], &out[k]))
      return false;
  *n = (int32_t)cnt;
  return true;
}

bool ts_sr_size_list(const ts_sr_call *c, uint32_t i, int64_t *out, int32_t *n, int32_t max) {
  const ts_value *v = ts_sr_in(c, i);
  if (!v)
    return ts_sr_default_ints(c, i, out, n, max);
  const ts_attr *a = ts_sr_const_ints(v);
  if (a) {
    if (a->len > (size_t)max)
      return false;
    for (size_t k = 0; k < a->len; k++)
      out[k] = a->u.is[k];
    *n = (int32_t)a->len;
    return true;
  }
  /* x.size() itself */
  if (ts_node_is(v->node, TS_K_aten_size) && v->node->ninputs == 1 && v->node->inputs[0]->type->kind == TS_TY_TENSOR) {
    const ts_tensor_info *ti = v->node->inputs[0]->type->tensor;
    if (!ti || ti->rank < 0 || ti->rank > max)
      return false;
    for (int32_t k = 0; k < ti->rank; k++)
      out[k] = ti->sizes[k] == -1 ? TS_SR_UNKNOWN : ti->sizes[k];
    *n = ti->rank;
    return true;
  }
  uint32_t cnt = 0;
  ts_value *const *items = ts_sp_list_items(v, &cnt);
  if (!items || cnt > (uint32_t)max)
    return false;
  for (uint32_t k = 0; k < cnt; k++) {
    int64_t x;
    if (ts_pass_const_int(items[k], &x))
      out[k] = x;
    else if (ts_sp_int_value(c->sp, items[k], &x))
      out[k] = x;
    else
      out[k] = TS_SR_UNKNOWN;
  }
  *n = (int32_t)cnt;
  return true;
}

bool ts_sr_dtype_arg(const ts_sr_call *c, uint32_t i, int8_t *dt) {
  if (ts_sr_is_none(c, i)) {
    *dt = TS_DT_NONE;
    return true;
  }
  int64_t x;
  if (!ts_sr_int(c, i, &x) || x < 0 || x >= TS_DT_COUNT)
    return false;
  *dt = (int8_t)x;
  return true;
}

bool ts_sr_tensor_list(const ts_sr_call *c, uint32_t i, ts_sr_shape *out, uint32_t *n, uint32_t max) {
  const ts_value *v = ts_sr_in(c, i);
  uint32_t cnt = 0;
  ts_value *const *items = v ? ts_sp_list_items(v, &cnt) : NULL;
  if (!items || cnt > max)
    return false;
  for (uint32_t k = 0; k < cnt; k++) {
    if (items[k]->type->kind != TS_TY_TENSOR)
      return false;
    ts_sr_from_type(items[k]->type, &out[k]);
  }
  *n = cnt;
  return true;
}

bool ts_sr_wrap_dim(int64_t dim, int32_t rank, int64_t *out) {
  int64_t r = rank > 0 ? rank : 1;
  if (dim < -r || dim >= r)
    return false;
  *out = dim < 0 ? dim + r : dim;
  return true;
}

/* The output's declared type with tensor refinements removed, or NULL. */
static ts_value *ts_sr_out(ts_sr_call *c, uint32_t i) {
  return i < c->node->noutputs ? c->node->outputs[i] : NULL;
}

static const ts_type *ts_sr_make_type(ts_sr_call *c, const ts_sr_shape *s) {
  ts_tensor_info ti = {.dtype = s->dtype,
                       .requires_grad = s->requires_grad,
                       .undefined = -1,
                       .device = s->device,
                       .rank = s->rank,
                       .sizes = s->rank > 0 ? s->sizes : NULL,
                       .strides = s->rank > 0 && s->has_strides ? s->strides : NULL};
  if (ti.dtype == TS_DT_NONE && ti.rank < 0 && ti.requires_grad < 0 && ti.device.type == TS_DEV_NONE)
    return ts_type_leaf(TS_TY_TENSOR);
  const ts_type *t = ts_type_tensor(&c->node->graph->arena, &ti);
  if (!t)
    c->oom = true;
  return t;
}

void ts_sr_set(ts_sr_call *c, uint32_t i, const ts_sr_shape *s) {
  ts_value *v = ts_sr_out(c, i);
  if (!v || v->type->kind != TS_TY_TENSOR)
    return;
  const ts_type *t = ts_sr_make_type(c, s);
  if (t)
    ts_value_set_type(v, t);
}

void ts_sr_set_type(ts_sr_call *c, uint32_t i, const ts_type *t) {
  ts_value *v = ts_sr_out(c, i);
  if (!v || !t)
    return;
  const ts_type *u = ts_type_unshaped(&c->node->graph->arena, t);
  const ts_type *cur = ts_type_unshaped(&c->node->graph->arena, v->type);
  if (!u || !cur) {
    c->oom = true;
    return;
  }
  if (ts_type_equal(u, cur))
    ts_value_set_type(v, t);
}

/* What two shapes have in common (TensorType::merge). */
static void ts_sr_merge(ts_sr_shape *a, const ts_sr_shape *b) {
  if (a->dtype != b->dtype)
    a->dtype = TS_DT_NONE;
  if (a->requires_grad != b->requires_grad)
    a->requires_grad = -1;
  if (a->device.type != b->device.type || a->device.index != b->device.index)
    a->device.type = TS_DEV_NONE, a->device.index = -1;
  if (a->rank != b->rank) {
    a->rank = -1;
    a->has_strides = false;
    return;
  }
  for (int32_t k = 0; k < a->rank; k++)
    if (a->sizes[k] != b->sizes[k])
      a->sizes[k] = -1;
  if (a->has_strides && (!b->has_strides || memcmp(a->strides, b->strides, (size_t)a->rank * sizeof *a->strides)))
    a->has_strides = false;
}

void ts_sr_set_list(ts_sr_call *c, uint32_t i, const ts_sr_shape *elems, uint32_t n) {
  ts_value *v = ts_sr_out(c, i);
  if (!v || v->type->kind != TS_TY_LIST || v->type->elems[0]->kind != TS_TY_TENSOR || !ts_sp_list_read_only(v))
    return;
  ts_arena *a = &c->node->graph->arena;
  const ts_type **ts = n ? ts_arena_alloc(a, n * sizeof *ts) : NULL;
  if (n && !ts) {
    c->oom = true;
    return;
  }
  ts_sr_shape m;
  if (n)
    m = elems[0];
  else
    ts_sr_unknown(&m);
  for (uint32_t k = 0; k < n; k++) {
    if (k)
      ts_sr_merge(&m, &elems[k]);
    if (!(ts[k] = ts_sr_make_type(c, &elems[k])))
      return;
  }
  const ts_type *et = ts_sr_make_type(c, &m);
  const ts_type *lt = et ? ts_type_list(a, et) : NULL;
  if (!lt) {
    c->oom = true;
    return;
  }
  ts_value_set_type(v, lt);
  if (!ts_sp_record_list(c->sp, v, ts, n))
    c->oom = true;
}

bool ts_sr_add(int64_t a, int64_t b, int64_t *out) {
  if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
    return false;
  *out = a + b;
  return true;
}

bool ts_sr_mul(int64_t a, int64_t b, int64_t *out) {
  if (a == 0 || b == 0) {
    *out = 0;
    return true;
  }
  if (a < 0 || b < 0 || a > INT64_MAX / b)
    return false; /* sizes and strides: only non-negative products */
  *out = a * b;
  return true;
}

void ts_sr_contiguous(ts_sr_shape *s) {
  s->has_strides = false;
  if (s->rank < 0)
    return;
  int64_t n = 1;
  for (int32_t k = 0; k < s->rank; k++)
    if (s->sizes[k] < 0 || !ts_sr_mul(n, s->sizes[k] ? s->sizes[k] : 1, &n))
      return;
  ts_rt_strides_contiguous(s->rank, s->sizes, s->strides);
  s->has_strides = true;
}

bool ts_sr_is_contiguous(const ts_sr_shape *s) {
  if (s->rank < 0 || !s->has_strides)
    return false;
  int64_t expect = 1;
  for (int32_t k = s->rank; k-- > 0;) {
    if (s->sizes[k] < 0)
      return false;
    if (s->sizes[k] != 1 && s->strides[k] != expect)
      return false;
    if (!ts_sr_mul(expect, s->sizes[k], &expect))
      return false;
  }
  return true;
}

void ts_sr_meta_from(ts_sr_shape *out, const ts_sr_shape *const *in, uint32_t n) {
  bool cpu = n > 0, nograd = n > 0;
  for (uint32_t k = 0; k < n; k++) {
    cpu = cpu && in[k]->device.type == TS_DEV_CPU;
    nograd = nograd && in[k]->requires_grad == 0;
  }
  out->device.type = cpu ? TS_DEV_CPU : TS_DEV_NONE;
  out->device.index = -1;
  out->requires_grad = nograd ? 0 : -1;
}

bool ts_sr_broadcast_size(int64_t a, int64_t b, int64_t *out) {
  if (a == b) {
    *out = a;
    return true;
  }
  if (a == 1 || b == 1) {
    *out = a == 1 ? b : a;
    return true;
  }
  if (a >= 0 && b >= 0)
    return false;
  /* a known size other than 1 is the result whatever the unknown one is
   * (were it neither 1 nor that size, the op would fail at run time) */
  if (a >= 0 || b >= 0) {
    *out = a >= 0 ? a : b;
    return true;
  }
  *out = -1;
  return true;
}

bool ts_sr_broadcast(ts_sr_shape *a, const ts_sr_shape *b) {
  if (a->rank < 0 || b->rank < 0) {
    a->rank = -1;
    a->has_strides = false;
    return true;
  }
  int32_t r = a->rank > b->rank ? a->rank : b->rank;
  int64_t res[TS_SR_MAX_RANK];
  for (int32_t k = 0; k < r; k++) {
    int32_t ia = a->rank - r + k, ib = b->rank - r + k;
    int64_t sa = ia >= 0 ? a->sizes[ia] : 1, sb = ib >= 0 ? b->sizes[ib] : 1;
    if (!ts_sr_broadcast_size(sa, sb, &res[k]))
      return false;
  }
  a->rank = r;
  memcpy(a->sizes, res, (size_t)r * sizeof *res);
  a->has_strides = false;
  return true;
}

/* ------------------------------------------- in-place and out= forms */

/* Whether two shapes have the same rank and sizes, all known (or the same
 * symbols). */
static bool ts_sr_same_sizes(const ts_sr_shape *a, const ts_sr_shape *b) {
  if (a->rank < 0 || a->rank != b->rank)
    return false;
  for (int32_t k = 0; k < a->rank; k++)
    if (a->sizes[k] == -1 || a->sizes[k] != b->sizes[k])
      return false;
  return true;
}

/* The rule of an in-place or out= overload without one of its own, from the
 * rule of the out-of-place overload it is a form of (ts_schema_variant), as
 * runtime/adapt.c runs it:
 *   in place       self's type (the result is written into self);
 *   in-place view  the view's type, as the base's rule gives it (self
 *                  changes too: shape_prop.c unshapes what may alias it);
 *   out=           each out's type when the base's sizes are the ones it
 *                  has; else the base's sizes in the out's dtype, strides
 *                  unknown (the out is resized). */
static void ts_sr_variant_rule(ts_sr_call *c) {
  ts_variant v = ts_schema_variant(c->schema);
  ts_sr_fn base = v.kind == TS_VARIANT_NONE ? NULL : ts_sr_own_rule(v.base);
  if (!base)
    return;
  ts_node *n = c->node;
  if (v.kind == TS_VARIANT_INPLACE) {
    if (n->ninputs > 0 && n->inputs[0]->type->kind == TS_TY_TENSOR)
      ts_sr_set_type(c, 0, n->inputs[0]->type);
    return;
  }
  ts_sr_call b = *c;
  b.schema = v.base;
  base(&b);
  if (b.oom) {
    c->oom = true;
    return;
  }
  if (v.kind != TS_VARIANT_OUT || n->ninputs < v.nouts)
    return;
  uint32_t first = n->ninputs - v.nouts;
  for (uint32_t r = 0; r < v.nouts && r < n->noutputs; r++) {
    const ts_value *out = n->inputs[first + r];
    if (out->type->kind != TS_TY_TENSOR || n->outputs[r]->type->kind != TS_TY_TENSOR)
      continue;
    ts_sr_shape res, have;
    ts_sr_from_type(n->outputs[r]->type, &res);
    ts_sr_from_type(out->type, &have);
    if (ts_sr_same_sizes(&res, &have)) {
      ts_sr_set_type(c, r, out->type);
      continue;
    }
    res.dtype = have.dtype;
    res.device = have.device;
    res.requires_grad = have.requires_grad;
    res.has_strides = false;
    ts_sr_set(c, r, &res);
  }
}

ts_sr_shape *ts_sr_shapes_new(ts_sr_call *c, uint32_t n) {
  ts_sr_shape *s = malloc((size_t)(n ? n : 1) * sizeof *s);
  if (!s)
    c->oom = true;
  return s;
}
