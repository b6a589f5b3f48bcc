/* passes/shape_rules_pointwise.c: shape rules of the elementwise ops.
 *
 * The result's sizes are the broadcast of every tensor argument's (as
 * TensorIterator does); its dtype is PyTorch's result_type over the
 * operands (ir/promote.c's ts_result_type, which the runtime's kernels use
 * too): dimensioned tensors rank above 0-d tensors, which rank above Python
 * numbers ("wrapped numbers"; a float number counts as the default dtype,
 * float32), each category only winning over a lower one when it is of a
 * higher kind (bool < integral < floating). Ops that compute in floating point turn an
 * integral result type into float32; comparisons give bool; some ops keep
 * self's dtype. An operand whose rank or number kind is not known is tried
 * both ways, and the dtype is kept only when both agree.
 *
 * Strides: the result of an allocating op is contiguous when every tensor
 * argument is (TensorIterator then keeps the default order); otherwise
 * strides are left unknown, where PyTorch would follow the inputs' layout.
 * In-place ops return self, whose type they keep. */
#include "shape_rules.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef enum sr_pw_dt {
  SR_PW_SAME,  /* result_type */
  SR_PW_FLOAT, /* result_type, integral -> float32 */
  SR_PW_BOOL,  /* bool */
  SR_PW_SELF,  /* self's dtype */
  SR_PW_DOUBLE, /* float64 (float_power) */
} sr_pw_dt;

enum { SR_PW_MAX_OPERANDS = 8 };

/* One operand of result_type. kind: 0 tensor, 1 int number, 2 float number,
 * 3 bool number, 4 a number of unknown kind (Scalar). */
typedef struct sr_operand {
  int kind;
  int8_t dtype;
  int32_t rank;
} sr_operand;

/* result_type for one choice of the unknowns (bit k of `choice` picks the
 * k-th unknown's alternative: a dimensioned tensor, a float number). */
static ts_dtype sr_result_once(const sr_operand *ops, int n, unsigned choice) {
  ts_result_state st = TS_RESULT_STATE_INIT;
  bool zero_unknown = false;
  int u = 0;
  for (int k = 0; k < n; k++) {
    const sr_operand *o = &ops[k];
    if (o->kind == 0) {
      bool dimmed = o->rank > 0;
      if (o->rank < 0)
        dimmed = (choice >> u++) & 1;
      if (dimmed && o->dtype == TS_DT_NONE)
        return TS_DT_NONE;
      if (dimmed)
        ts_result_add(&st, (ts_dtype)o->dtype, TS_RESULT_DIM);
      else if (o->dtype == TS_DT_NONE)
        zero_unknown = true;
      else
        ts_result_add(&st, (ts_dtype)o->dtype, TS_RESULT_ZERO_DIM);
    } else {
      int kind = o->kind;
      if (kind == 4)
        kind = (choice >> u++) & 1 ? 2 : 1;
      ts_dtype dt = kind == 1 ? TS_DT_INT64 : kind == 2 ? TS_DT_FLOAT64 : TS_DT_BOOL;
      ts_result_add(&st, dt, TS_RESULT_WRAPPED);
    }
  }
  /* a 0-d tensor of unknown dtype matters unless a floating dimensioned
   * tensor decides */
  if (zero_unknown && !ts_dtype_is_float((ts_dtype)st.dim))
    return TS_DT_NONE;
  ts_dtype r = ts_result_type(&st);
  return r == TS_DT_NONE ? TS_DT_FLOAT32 : r;
}

/* result_type over the operands, TS_DT_NONE when it depends on what is not
 * known. */
static ts_dtype sr_result_type(const sr_operand *ops, int n) {
  int unknowns = 0;
  for (int k = 0; k < n; k++)
    if ((ops[k].kind == 0 && ops[k].rank < 0) || ops[k].kind == 4)
      unknowns++;
  if (unknowns > 6)
    return TS_DT_NONE;
  ts_dtype r = sr_result_once(ops, n, 0);
  for (unsigned choice = 1; r != TS_DT_NONE && choice < (1u << unknowns); choice++)
    if (sr_result_once(ops, n, choice) != r)
      return TS_DT_NONE;
  return r;
}

static bool sr_is_tensor_arg(const ts_type *t) {
  return t->kind == TS_TY_TENSOR || (t->kind == TS_TY_OPTIONAL && t->elems[0]->kind == TS_TY_TENSOR);
}

static bool sr_is_number_arg(const ts_type *t) {
  return t->kind == TS_TY_NUMBER || (t->kind == TS_TY_OPTIONAL && t->elems[0]->kind == TS_TY_NUMBER);
}

/* Whether a Scalar argument takes part in result_type (the operands; not
 * alpha, limits, slopes or fill values). */
static bool sr_number_is_operand(const char *name) {
  static const char *const names[] = {"self", "other", "exponent", "min", "max"};
  for (size_t k = 0; k < sizeof names / sizeof *names; k++)
    if (strcmp(name, names[k]) == 0)
      return true;
  return false;
}

/* The generic elementwise rule. */
static void sr_pointwise(ts_sr_call *c, sr_pw_dt how) {
  const ts_schema *s = c->schema;
  sr_operand ops[SR_PW_MAX_OPERANDS];
  int nops = 0;
  ts_sr_shape out, t;
  const ts_sr_shape *metas[SR_PW_MAX_OPERANDS];
  ts_sr_shape metabuf[SR_PW_MAX_OPERANDS];
  uint32_t nmeta = 0;
  bool first = true, contiguous = true;
  int8_t self_dt = TS_DT_NONE;
  ts_sr_unknown(&out);
  out.rank = 0;
  for (uint32_t i = 0; i < s->nargs && i < c->node->ninputs; i++) {
    const ts_arg *a = &s->args[i];
    if (a->alias && a->alias->is_write)
      continue; /* an out= argument */
    if (sr_is_tensor_arg(a->type)) {
      if (ts_sr_is_none(c, i))
        continue;
      if (!ts_sr_tensor(c, i, &t))
        return;
      if (!ts_sr_broadcast(&out, &t))
        return; /* fails at run time, with PyTorch's message */
      contiguous = contiguous && ts_sr_is_contiguous(&t) && t.rank >= 0;
      if (first)
        self_dt = t.dtype;
      first = false;
      if (nmeta < SR_PW_MAX_OPERANDS) {
        metabuf[nmeta] = t;
        metas[nmeta] = &metabuf[nmeta];
        nmeta++;
      }
      if (strcmp(a->name, "condition") != 0 && strcmp(a->name, "mask") != 0 && nops < SR_PW_MAX_OPERANDS)
        ops[nops++] = (sr_operand){0, t.dtype, t.rank};
    } else if (sr_is_number_arg(a->type) && sr_number_is_operand(a->name)) {
      if (ts_sr_is_none(c, i))
        continue;
      ts_type_kind vk = ts_sr_number_kind(c, i);
      int kind = vk == TS_TY_INT ? 1 : vk == TS_TY_FLOAT ? 2 : vk == TS_TY_BOOL ? 3 : 4;
      if (nops < SR_PW_MAX_OPERANDS)
        ops[nops++] = (sr_operand){kind, TS_DT_NONE, 0};
    }
  }
  if (first)
    return; /* no tensor argument */
  switch (how) {
  case SR_PW_SAME: out.dtype = (int8_t)sr_result_type(ops, nops); break;
  case SR_PW_FLOAT: {
    ts_dtype r = sr_result_type(ops, nops);
    out.dtype = (int8_t)(r == TS_DT_NONE || ts_dtype_is_float(r) || ts_dtype_is_complex(r) ? r : TS_DT_FLOAT32);
    break;
  }
  case SR_PW_BOOL: out.dtype = TS_DT_BOOL; break;
  case SR_PW_DOUBLE: {
    ts_dtype r = sr_result_type(ops, nops);
    out.dtype = (int8_t)(ts_dtype_is_complex(r) ? TS_DT_COMPLEX128 : TS_DT_FLOAT64);
    break;
  }
  case SR_PW_SELF: out.dtype = self_dt; break;
  }
  /* abs of a complex tensor is real (runtime/kernels/complex.c) */
  if (c->node->kind == TS_K_aten_abs && ts_dtype_is_complex((ts_dtype)out.dtype))
    out.dtype = (int8_t)(out.dtype == TS_DT_COMPLEX128 ? TS_DT_FLOAT64 : TS_DT_FLOAT32);
  ts_sr_meta_from(&out, metas, nmeta);
  if (contiguous)
    ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

static void sr_same(ts_sr_call *c) { sr_pointwise(c, SR_PW_SAME); }
static void sr_float(ts_sr_call *c) { sr_pointwise(c, SR_PW_FLOAT); }
static void sr_bool(ts_sr_call *c) { sr_pointwise(c, SR_PW_BOOL); }
static void sr_double(ts_sr_call *c) { sr_pointwise(c, SR_PW_DOUBLE); }
static void sr_self(ts_sr_call *c) { sr_pointwise(c, SR_PW_SELF); }

/* square is pow(x, 2): a bool tensor gives int64 */
static void sr_square(ts_sr_call *c) {
  sr_pointwise(c, SR_PW_SAME);
  ts_value *o = c->node->outputs[0];
  if (o->type->kind == TS_TY_TENSOR && o->type->tensor && o->type->tensor->dtype == TS_DT_BOOL) {
    ts_tensor_info ti = *o->type->tensor;
    ti.dtype = TS_DT_INT64;
    const ts_type *t = ts_type_tensor(&c->node->graph->arena, &ti);
    if (!t)
      c->oom = true;
    else
      ts_value_set_type(o, t);
  }
}

/* div with rounding_mode: None is true division, a string keeps the
 * result type. */
static void sr_div_mode(ts_sr_call *c) {
  uint32_t mode = c->schema->nargs - 1;
  const ts_value *m = mode < c->node->ninputs ? c->node->inputs[mode] : NULL;
  if (ts_sr_is_none(c, mode))
    sr_pointwise(c, SR_PW_FLOAT);
  else if (m && m->type->kind == TS_TY_STR)
    sr_pointwise(c, SR_PW_SAME);
  else {
    /* unknown mode: the dtype holds only when both agree, i.e. a float */
    sr_pointwise(c, SR_PW_SAME);
    ts_value *o = c->node->outputs[0];
    if (o->type->kind == TS_TY_TENSOR && o->type->tensor && !ts_dtype_is_float((ts_dtype)o->type->tensor->dtype)) {
      ts_tensor_info ti = *o->type->tensor;
      ti.dtype = TS_DT_NONE;
      const ts_type *t = ts_type_tensor(&c->node->graph->arena, &ti);
      if (!t)
        c->oom = true;
      else
        ts_value_set_type(o, t);
    }
  }
}

/* In-place ops return self. */
static void sr_inplace(ts_sr_call *c) {
  if (c->node->ninputs > 0 && c->node->inputs[0]->type->kind == TS_TY_TENSOR)
    ts_sr_set_type(c, 0, c->node->inputs[0]->type);
}

/* Rules of ops that are not pointwise rows. */
static const ts_sr_def sr_other_rules[] = {
    {"prim::abs", sr_same},
    {"aten::max.other", sr_same},
    {"aten::min.other", sr_same},
    {"aten::fill_.Scalar", sr_inplace},
    {"aten::fill_.Tensor", sr_inplace},
    {"aten::zero_", sr_inplace},
    {"aten::copy_", sr_inplace},
    {"aten::copy_.Tensor", sr_inplace},
    {"aten::copy_.int", sr_inplace},
    {"aten::copy_.float", sr_inplace},
    {"aten::dropout_", sr_inplace},
};

/* Whether schema s has an argument named `name`. */
static bool sr_has_arg(const ts_schema *s, const char *name) {
  for (uint32_t i = 0; i < s->nargs; i++)
    if (strcmp(s->args[i].name, name) == 0)
      return true;
  return false;
}

/* The rule of a row's schema, from its layout and dtype rule (in-place:
 * self), or NULL (numbers, out= overloads). */
static ts_sr_fn sr_row_rule(const ts_pw_def *d, const ts_schema *s, bool inplace) {
  if (s->vararg || s->varret || s->nrets != 1 || s->rets[0].type->kind != TS_TY_TENSOR || s->nargs == 0)
    return NULL;
  if (inplace)
    return ts_op_is_inplace(s) && s->args[0].type->kind == TS_TY_TENSOR ? sr_inplace : NULL;
  bool tensor = false;
  for (uint32_t i = 0; i < s->nargs; i++)
    tensor |= s->args[i].type->kind == TS_TY_TENSOR;
  if (!tensor || ts_op_is_out(s))
    return NULL;
  if (d->layout == TS_PWL_DIV && sr_has_arg(s, "rounding_mode"))
    return sr_div_mode;
  if (d->layout == TS_PWL_MASKED_FILL || (d->rule & TS_PWR_SELF))
    return sr_self;
  if (d->rule & TS_PWR_BOOLOUT)
    return sr_bool;
  if (d->rule & TS_PWR_DOUBLE)
    return sr_double;
  if (d->rule & TS_PWR_PROMOTE)
    return sr_float;
  if (d->rule & TS_PWR_BOOL_INT64)
    return sr_square;
  return sr_same;
}

/* Visits the rule of every pointwise row's schema (type_as's is aten::to's,
 * in shape_rules_shape.c). */
static void sr_rows_each(void (*fn)(void *arg, const ts_schema *s, ts_sr_fn rule), void *arg) {
  for (int op = 0; op < TS_PW_COUNT; op++) {
    const ts_pw_def *d = ts_pw_get((ts_pw_op)op);
    if (d->kind == TS_K_OTHER || d->layout == TS_PWL_TYPE_AS)
      continue;
    for (int ip = 0; ip < 2; ip++) {
      ts_kind k = ip ? ts_op_inplace_kind(d->kind) : d->kind;
      uint32_t n = 0;
      const ts_schema *const *ss = k == TS_K_OTHER ? NULL : ts_op_schemas(k, &n);
      for (uint32_t i = 0; i < n; i++) {
        ts_sr_fn rule = sr_row_rule(d, ss[i], ip);
        if (rule)
          fn(arg, ss[i], rule);
      }
    }
  }
}

typedef struct sr_table_fill {
  ts_sr_def *defs;
  char *names;
  uint32_t n;
  size_t bytes;
} sr_table_fill;

static void sr_table_count(void *arg, const ts_schema *s, ts_sr_fn rule) {
  (void)rule;
  sr_table_fill *f = arg;
  f->n++;
  f->bytes += strlen(s->name) + 1 + strlen(s->overload) + 1;
}

static void sr_table_put(void *arg, const ts_schema *s, ts_sr_fn rule) {
  sr_table_fill *f = arg;
  char *name = f->names;
  size_t len = strlen(s->name), olen = strlen(s->overload);
  memcpy(name, s->name, len);
  if (olen) {
    name[len++] = '.';
    memcpy(name + len, s->overload, olen);
    len += olen;
  }
  name[len] = '\0';
  f->names += len + 1;
  f->defs[f->n].schema = name;
  f->defs[f->n].fn = rule;
  f->n++;
}

static pthread_once_t sr_table_once = PTHREAD_ONCE_INIT;
static ts_sr_def *sr_table; /* made once, never freed */

static void sr_table_build(void) {
  sr_table_fill f = {NULL, NULL, 0, 0};
  sr_rows_each(sr_table_count, &f);
  size_t nother = sizeof sr_other_rules / sizeof sr_other_rules[0];
  size_t ndefs = f.n + nother + 1;
  char *mem = malloc(ndefs * sizeof(ts_sr_def) + f.bytes);
  if (!mem)
    return;
  f.defs = (ts_sr_def *)(void *)mem;
  f.names = mem + ndefs * sizeof(ts_sr_def);
  f.n = 0;
  sr_rows_each(sr_table_put, &f);
  for (size_t i = 0; i < nother; i++)
    f.defs[f.n++] = sr_other_rules[i];
  f.defs[f.n].schema = NULL;
  f.defs[f.n].fn = NULL;
  sr_table = f.defs;
}

const ts_sr_def *ts_sr_rules_pointwise(void) {
  pthread_once(&sr_table_once, sr_table_build);
  return sr_table;
}
