/* passes/shape_rules_special.c: shape rules of the math ops that are not
 * one pointwise row (their kernels: runtime/kernels/special.c). */
#include "shape_rules.h"

/* frexp: self's shape twice, contiguous: the mantissa in self's dtype, the
 * exponent int32. */
static void sr_frexp(ts_sr_call *c) {
  ts_sr_shape x;
  if (!ts_sr_tensor(c, 0, &x))
    return;
  ts_sr_contiguous(&x);
  x.requires_grad = 0;
  ts_sr_shape e = x;
  e.dtype = TS_DT_INT32;
  ts_sr_set(c, 0, &x);
  ts_sr_set(c, 1, &e);
}

/* positive: self itself */
static void sr_positive(ts_sr_call *c) {
  if (c->node->ninputs > 0 && c->node->inputs[0]->type->kind == TS_TY_TENSOR)
    ts_sr_set_type(c, 0, c->node->inputs[0]->type);
}

const ts_sr_def ts_sr_rules_special[] = {
    {"aten::frexp.Tensor", sr_frexp},
    {"aten::positive", sr_positive},
    {NULL, NULL},
};
