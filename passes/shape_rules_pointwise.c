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

#include <string.h>

typedef enum sr_pw_dt {
  SR_PW_SAME,  /* result_type */
  SR_PW_FLOAT, /* result_type, integral -> float32 */
  SR_PW_BOOL,  /* bool */
  SR_PW_SELF,  /* self's dtype */
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
    out.dtype = (int8_t)(r == TS_DT_NONE || ts_dtype_is_float(r) ? r : TS_DT_FLOAT32);
    break;
  }
  case SR_PW_BOOL: out.dtype = TS_DT_BOOL; break;
  case SR_PW_SELF: out.dtype = self_dt; break;
  }
  ts_sr_meta_from(&out, metas, nmeta);
  if (contiguous)
    ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

static void sr_same(ts_sr_call *c) { sr_pointwise(c, SR_PW_SAME); }
static void sr_float(ts_sr_call *c) { sr_pointwise(c, SR_PW_FLOAT); }
static void sr_bool(ts_sr_call *c) { sr_pointwise(c, SR_PW_BOOL); }
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

const ts_sr_def ts_sr_rules_pointwise[] = {
    /* unary, dtype kept */
    {"aten::abs", sr_same},
    {"prim::abs", sr_same},
    {"aten::neg", sr_same},
    {"aten::relu", sr_same},
    {"aten::relu6", sr_same},
    {"aten::gelu", sr_same},
    {"aten::silu", sr_same},
    {"aten::mish", sr_same},
    {"aten::hardswish", sr_same},
    {"aten::hardsigmoid", sr_same},
    {"aten::elu", sr_same},
    {"aten::selu", sr_same},
    {"aten::leaky_relu", sr_same},
    {"aten::softplus", sr_same},
    {"aten::floor", sr_same},
    {"aten::ceil", sr_same},
    {"aten::round", sr_same},
    {"aten::round.decimals", sr_same},
    {"aten::trunc", sr_same},
    {"aten::frac", sr_same},
    {"aten::sign", sr_same},
    {"aten::bitwise_not", sr_same},
    {"aten::square", sr_square},
    {"aten::hardtanh", sr_self},
    {"aten::threshold", sr_self},
    /* unary, computed in floating point */
    {"aten::exp", sr_float},
    {"aten::log", sr_float},
    {"aten::log2", sr_float},
    {"aten::log10", sr_float},
    {"aten::log1p", sr_float},
    {"aten::expm1", sr_float},
    {"aten::sqrt", sr_float},
    {"aten::rsqrt", sr_float},
    {"aten::sin", sr_float},
    {"aten::cos", sr_float},
    {"aten::tan", sr_float},
    {"aten::asin", sr_float},
    {"aten::acos", sr_float},
    {"aten::atan", sr_float},
    {"aten::sinh", sr_float},
    {"aten::cosh", sr_float},
    {"aten::tanh", sr_float},
    {"aten::sigmoid", sr_float},
    {"aten::erf", sr_float},
    {"aten::reciprocal", sr_float},
    /* unary, bool results */
    {"aten::logical_not", sr_bool},
    {"aten::isnan", sr_bool},
    {"aten::isinf", sr_bool},
    {"aten::isfinite", sr_bool},
    /* binary and more */
    {"aten::add.Tensor", sr_same},
    {"aten::add.Scalar", sr_same},
    {"aten::sub.Tensor", sr_same},
    {"aten::sub.Scalar", sr_same},
    {"aten::rsub.Tensor", sr_same},
    {"aten::rsub.Scalar", sr_same},
    {"aten::mul.Tensor", sr_same},
    {"aten::mul.Scalar", sr_same},
    {"aten::div.Tensor", sr_float},
    {"aten::div.Scalar", sr_float},
    {"aten::div.Tensor_mode", sr_div_mode},
    {"aten::div.Scalar_mode", sr_div_mode},
    {"aten::true_divide.Tensor", sr_float},
    {"aten::true_divide.Scalar", sr_float},
    {"aten::floor_divide", sr_same},
    {"aten::floor_divide.Scalar", sr_same},
    {"aten::remainder.Tensor", sr_same},
    {"aten::remainder.Scalar", sr_same},
    {"aten::remainder.Scalar_Tensor", sr_same},
    {"aten::fmod.Tensor", sr_same},
    {"aten::fmod.Scalar", sr_same},
    {"aten::pow.Tensor_Tensor", sr_same},
    {"aten::pow.Tensor_Scalar", sr_same},
    {"aten::pow.Scalar", sr_same},
    {"aten::atan2", sr_float},
    {"aten::maximum", sr_same},
    {"aten::minimum", sr_same},
    {"aten::max.other", sr_same},
    {"aten::min.other", sr_same},
    {"aten::gcd", sr_same},
    {"aten::bitwise_and.Tensor", sr_same},
    {"aten::bitwise_and.Scalar", sr_same},
    {"aten::bitwise_and.Scalar_Tensor", sr_same},
    {"aten::bitwise_or.Tensor", sr_same},
    {"aten::bitwise_or.Scalar", sr_same},
    {"aten::bitwise_or.Scalar_Tensor", sr_same},
    {"aten::bitwise_xor.Tensor", sr_same},
    {"aten::bitwise_xor.Scalar", sr_same},
    {"aten::bitwise_xor.Scalar_Tensor", sr_same},
    {"aten::__and__.Tensor", sr_same},
    {"aten::__and__.Scalar", sr_same},
    {"aten::__or__.Tensor", sr_same},
    {"aten::__or__.Scalar", sr_same},
    {"aten::__xor__.Tensor", sr_same},
    {"aten::__xor__.Scalar", sr_same},
    {"aten::__lshift__.Tensor", sr_same},
    {"aten::__lshift__.Scalar", sr_same},
    {"aten::__rshift__.Tensor", sr_same},
    {"aten::__rshift__.Scalar", sr_same},
    {"aten::logical_and", sr_bool},
    {"aten::logical_or", sr_bool},
    {"aten::logical_xor", sr_bool},
    {"aten::eq.Tensor", sr_bool},
    {"aten::eq.Scalar", sr_bool},
    {"aten::ne.Tensor", sr_bool},
    {"aten::ne.Scalar", sr_bool},
    {"aten::lt.Tensor", sr_bool},
    {"aten::lt.Scalar", sr_bool},
    {"aten::le.Tensor", sr_bool},
    {"aten::le.Scalar", sr_bool},
    {"aten::gt.Tensor", sr_bool},
    {"aten::gt.Scalar", sr_bool},
    {"aten::ge.Tensor", sr_bool},
    {"aten::ge.Scalar", sr_bool},
    {"aten::clamp", sr_same},
    {"aten::clamp.Tensor", sr_same},
    {"aten::clamp_min", sr_same},
    {"aten::clamp_min.Tensor", sr_same},
    {"aten::clamp_max", sr_same},
    {"aten::clamp_max.Tensor", sr_same},
    {"aten::where.self", sr_same},
    {"aten::where.ScalarOther", sr_same},
    {"aten::where.ScalarSelf", sr_same},
    {"aten::where.Scalar", sr_same},
    {"aten::masked_fill.Scalar", sr_self},
    {"aten::masked_fill.Tensor", sr_self},
    {"aten::lerp.Scalar", sr_same},
    {"aten::lerp.Tensor", sr_same},
    {"aten::addcmul", sr_same},
    {"aten::addcdiv", sr_same},
    /* in place: self */
    {"aten::abs_", sr_inplace},
    {"aten::neg_", sr_inplace},
    {"aten::exp_", sr_inplace},
    {"aten::log_", sr_inplace},
    {"aten::sqrt_", sr_inplace},
    {"aten::tanh_", sr_inplace},
    {"aten::sigmoid_", sr_inplace},
    {"aten::relu_", sr_inplace},
    {"aten::silu_", sr_inplace},
    {"aten::hardswish_", sr_inplace},
    {"aten::hardsigmoid_", sr_inplace},
    {"aten::hardtanh_", sr_inplace},
    {"aten::elu_", sr_inplace},
    {"aten::leaky_relu_", sr_inplace},
    {"aten::threshold_", sr_inplace},
    {"aten::clamp_", sr_inplace},
    {"aten::clamp_.Tensor", sr_inplace},
    {"aten::add_.Tensor", sr_inplace},
    {"aten::add_.Scalar", sr_inplace},
    {"aten::sub_.Tensor", sr_inplace},
    {"aten::sub_.Scalar", sr_inplace},
    {"aten::mul_.Tensor", sr_inplace},
    {"aten::mul_.Scalar", sr_inplace},
    {"aten::div_.Tensor", sr_inplace},
    {"aten::div_.Scalar", sr_inplace},
    {"aten::div_.Tensor_mode", sr_inplace},
    {"aten::div_.Scalar_mode", sr_inplace},
    {"aten::masked_fill_.Scalar", sr_inplace},
    {"aten::masked_fill_.Tensor", sr_inplace},
    {"aten::fill_.Scalar", sr_inplace},
    {"aten::fill_.Tensor", sr_inplace},
    {"aten::zero_", sr_inplace},
    {"aten::copy_", sr_inplace},
    {"aten::copy_.Tensor", sr_inplace},
    {"aten::copy_.int", sr_inplace},
    {"aten::copy_.float", sr_inplace},
    {"aten::dropout_", sr_inplace},
    {NULL, NULL},
};
