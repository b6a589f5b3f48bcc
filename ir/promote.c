/* ir/promote.c: PyTorch's dtype rules, once for the whole code base (the
 * runtime's kernels, the shape rules and the fusion lowering all ask here):
 * c10::promoteTypes, c10::canCast and ATen's result_type (ResultTypeState:
 * dimensioned tensors, then zero-dim tensors, then wrapped numbers, each
 * category only winning over a lower one when it is of a higher kind). */
#include "ir.h"

bool ts_dtype_is_float(ts_dtype dt) {
  return dt == TS_DT_FLOAT16 || dt == TS_DT_FLOAT32 || dt == TS_DT_FLOAT64 || dt == TS_DT_BFLOAT16;
}

bool ts_dtype_is_complex(ts_dtype dt) {
  return dt == TS_DT_COMPLEX32 || dt == TS_DT_COMPLEX64 || dt == TS_DT_COMPLEX128;
}

bool ts_dtype_is_integral(ts_dtype dt, bool include_bool) {
  switch (dt) {
  case TS_DT_UINT8: case TS_DT_INT8: case TS_DT_INT16: case TS_DT_INT32: case TS_DT_INT64:
    return true;
  case TS_DT_BOOL:
    return include_bool;
  default:
    return false;
  }
}

/* c10's _promoteTypesLookup, rows and columns in this order (the quantized
 * types promote with nothing): u8 i8 i16 i32 i64 f16 f32 f64 c32 c64 c128
 * bool bf16. Checked against torch.promote_types of PyTorch 1.13. */
static const signed char ts_promote_index[TS_DT_COUNT] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -1, -1, -1, 12};
static const signed char ts_promote_table[13][13] = {
    {0, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 15},          /* u8 */
    {2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 15},          /* i8 */
    {2, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 2, 15},          /* i16 */
    {3, 3, 3, 3, 4, 5, 6, 7, 8, 9, 10, 3, 15},          /* i32 */
    {4, 4, 4, 4, 4, 5, 6, 7, 8, 9, 10, 4, 15},          /* i64 */
    {5, 5, 5, 5, 5, 5, 6, 7, 8, 9, 10, 5, 6},           /* f16 */
    {6, 6, 6, 6, 6, 6, 6, 7, 9, 9, 10, 6, 6},           /* f32 */
    {7, 7, 7, 7, 7, 7, 7, 7, 10, 10, 10, 7, 7},         /* f64 */
    {8, 8, 8, 8, 8, 8, 9, 10, 8, 9, 10, 8, 9},          /* c32 */
    {9, 9, 9, 9, 9, 9, 9, 10, 9, 9, 10, 9, 9},          /* c64 */
    {10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10}, /* c128 */
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15},         /* bool */
    {15, 15, 15, 15, 15, 6, 6, 7, 9, 9, 10, 15, 15},    /* bf16 */
};

ts_dtype ts_type_promote(ts_dtype a, ts_dtype b) {
  if ((unsigned)a >= TS_DT_COUNT || (unsigned)b >= TS_DT_COUNT)
    return TS_DT_NONE;
  int ia = ts_promote_index[a], ib = ts_promote_index[b];
  if (ia < 0 || ib < 0)
    return a == b ? a : TS_DT_NONE;
  return (ts_dtype)ts_promote_table[ia][ib];
}

bool ts_type_can_cast(ts_dtype from, ts_dtype to) {
  if (ts_dtype_is_complex(from) && !ts_dtype_is_complex(to))
    return false;
  if (ts_dtype_is_float(from) && ts_dtype_is_integral(to, true))
    return false;
  return from == TS_DT_BOOL || to != TS_DT_BOOL;
}

/* promoteTypes where TS_DT_NONE is "nothing yet" (promote_skip_undefined). */
static ts_dtype ts_rs_promote(ts_dtype a, ts_dtype b) {
  if (a == TS_DT_NONE)
    return b;
  if (b == TS_DT_NONE)
    return a;
  return ts_type_promote(a, b);
}

static ts_dtype ts_rs_to_complex(ts_dtype dt) {
  switch (dt) {
  case TS_DT_FLOAT16: return TS_DT_COMPLEX32;
  case TS_DT_FLOAT32: return TS_DT_COMPLEX64;
  case TS_DT_FLOAT64: return TS_DT_COMPLEX128;
  default: return TS_DT_NONE; /* c10 has no complex bfloat16 */
  }
}

/* ATen's combine_categories: `higher` wins within its category or above. */
static ts_dtype ts_rs_combine(ts_dtype higher, ts_dtype lower) {
  if (ts_dtype_is_complex(higher))
    return higher;
  if (ts_dtype_is_complex(lower))
    return ts_dtype_is_float(higher) ? ts_rs_to_complex(higher) : lower;
  if (ts_dtype_is_float(higher))
    return higher;
  if (higher == TS_DT_BOOL || ts_dtype_is_float(lower))
    return ts_rs_promote(higher, lower);
  return higher != TS_DT_NONE ? higher : lower;
}

void ts_result_add(ts_result_state *s, ts_dtype dt, ts_result_kind kind) {
  switch (kind) {
  case TS_RESULT_DIM: s->dim = (int8_t)ts_rs_promote((ts_dtype)s->dim, dt); break;
  case TS_RESULT_ZERO_DIM: s->zero = (int8_t)ts_rs_promote((ts_dtype)s->zero, dt); break;
  case TS_RESULT_WRAPPED:
    /* a number counts as the default dtype of its kind */
    if (ts_dtype_is_complex(dt))
      dt = TS_DT_COMPLEX64;
    else if (ts_dtype_is_float(dt))
      dt = TS_DT_FLOAT32;
    s->wrapped = (int8_t)ts_rs_promote((ts_dtype)s->wrapped, dt);
    break;
  }
}

ts_dtype ts_result_type(const ts_result_state *s) {
  return ts_rs_combine((ts_dtype)s->dim, ts_rs_combine((ts_dtype)s->zero, (ts_dtype)s->wrapped));
}
