/* runtime/kernels/scalar.c: numbers as TorchScript computes them
 * (register_prim_ops.cpp): arithmetic, comparisons, bit operations and math
 * functions on int/float/Scalar, the int()/float()/bool() conversions
 * (from numbers, strings and one-element tensors), the implicit
 * tensor-to-number conversions, range() helpers and identity tests.
 *
 * Overload families share one implementation: ".int" reads ints, ".float",
 * ".int_float" and ".float_int" read floats, the Scalar overload decides by
 * the values' tags (int with int stays int, as PyTorch's
 * DEFINE_SCALAR_BINARY_OP). Ints wrap as C++ int64 on x86 (computed
 * unsigned to avoid undefined behaviour). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "runtime.h"
#include "tensor_ops.h"

typedef enum sc_op {
  SC_ADD, SC_SUB, SC_MUL, SC_DIV, SC_FLOORDIV, SC_REM, SC_POW, SC_POW_UNCHECKED, SC_POW_INT, SC_FMOD, SC_ATAN2,
  SC_LOG2, SC_MIN, SC_MAX, SC_EQ, SC_NE, SC_LT, SC_LE, SC_GT, SC_GE, SC_GCD, SC_AND, SC_OR, SC_XOR, SC_SHL, SC_SHR,
  SC_RTZDIV,
} sc_op;

typedef enum sc_mode { SC_M_INT, SC_M_FLOAT, SC_M_SCALAR } sc_mode;

/* One number argument: ints and bools as ints. */
typedef struct sc_num {
  bool is_int;
  int64_t i;
  double d;
} sc_num;

static bool sc_num_arg(ts_rt_ctx *c, const ts_rt_call *call, uint32_t k, sc_num *n) {
  if (!ts_rt_arg_check(c, call, k)) return false;
  ts_iv v = call->in[k];
  n->is_int = true;
  n->d = 0;
  if (v.tag == TS_IV_INT) n->i = v.u.i;
  else if (v.tag == TS_IV_BOOL) n->i = v.u.b;
  else if (v.tag == TS_IV_DOUBLE) {
    n->is_int = false;
    n->d = v.u.d;
    n->i = 0;
  } else
    return ts_rt_arg_bad(c, call, k, "number");
  if (n->is_int) n->d = (double)n->i;
  return true;
}

/* static_cast<int64_t>(double) as x86 does it: NaN and out-of-range values
 * give INT64_MIN (cvttsd2si's "integer indefinite"). */
static int64_t sc_f2i(double d) {
  if (isnan(d) || d >= 9223372036854775808.0 || d < -9223372036854775808.0) return INT64_MIN;
  return (int64_t)d;
}

/* PyTorch's checkDoubleInRange (floor/ceil to int). */
static bool sc_check_range(ts_rt_ctx *c, double d) {
  if (isnan(d) || isinf(d) || d > 9223372036854775807.0 || d < -9223372036854775808.0) {
    if (isnan(d) || isinf(d))
      return ts_rt_fail(c, "Cannot convert float %s to integer", isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
    return ts_rt_fail(c, "Cannot convert float %f to integer", d); /* c10::to_string: std::to_string's %f */
  }
  return true;
}

static int64_t sc_wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t sc_wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t sc_wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* Python's floor division (PyTorch's floordiv): rounds toward -inf. */
static bool sc_floordiv(ts_rt_ctx *c, int64_t a, int64_t b, int64_t *out) {
  if (b == 0) return ts_rt_fail(c, "division by 0");
  if (b == -1) { /* INT64_MIN / -1 traps in C; wrap as the other cases do */
    *out = sc_wrap_sub(0, a);
    return true;
  }
  int64_t q = a / b, r = a % b;
  if (r != 0 && ((a < 0) != (b < 0))) q--;
  *out = q;
  return true;
}

/* Python's modulo as PyTorch writes it: (b + a % b) % b. */
static bool sc_remainder(ts_rt_ctx *c, int64_t a, int64_t b, int64_t *out) {
  if (b == 0) return ts_rt_fail(c, "ZeroDivisionError: integer division or modulo by zero");
  if (b == -1) {
    *out = 0;
    return true;
  }
  int64_t r = sc_wrap_add(b, a % b);
  *out = r % b;
  return true;
}

static int64_t sc_gcd(int64_t a, int64_t b) {
  uint64_t x = a < 0 ? 0 - (uint64_t)a : (uint64_t)a, y = b < 0 ? 0 - (uint64_t)b : (uint64_t)b;
  while (y != 0) {
    uint64_t r = x % y;
    x = y;
    y = r;
  }
  return (int64_t)x;
}

/* int ** int with an int result (pow.int_to_int): exact, wrapping. */
static bool sc_pow_int(ts_rt_ctx *c, int64_t a, int64_t b, int64_t *out) {
  if (a == 0 && b < 0) return ts_rt_fail(c, "0.0 cannot be raised to a negative power");
  if (b < 0) {
    *out = a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
    return true;
  }
  uint64_t r = 1, base = (uint64_t)a, e = (uint64_t)b;
  while (e) {
    if (e & 1) r *= base;
    base *= base;
    e >>= 1;
  }
  *out = (int64_t)r;
  return true;
}

static bool sc_cmp(sc_op op, double a, double b) {
  switch (op) {
  case SC_EQ: return a == b;
  case SC_NE: return a != b;
  case SC_LT: return a < b;
  case SC_LE: return a <= b;
  case SC_GT: return a > b;
  default: return a >= b;
  }
}

static bool sc_cmp_int(sc_op op, int64_t a, int64_t b) {
  switch (op) {
  case SC_EQ: return a == b;
  case SC_NE: return a != b;
  case SC_LT: return a < b;
  case SC_LE: return a <= b;
  case SC_GT: return a > b;
  default: return a >= b;
  }
}

/* The int-int form of op. */
static bool sc_int_op(ts_rt_ctx *c, sc_op op, int64_t a, int64_t b, ts_iv *out) {
  int64_t r = 0;
  switch (op) {
  case SC_ADD: r = sc_wrap_add(a, b); break;
  case SC_SUB: r = sc_wrap_sub(a, b); break;
  case SC_MUL: r = sc_wrap_mul(a, b); break;
  case SC_DIV: *out = ts_iv_double((double)a / (double)b); return true;
  case SC_FLOORDIV: if (!sc_floordiv(c, a, b, &r)) return false; break;
  case SC_REM: if (!sc_remainder(c, a, b, &r)) return false; break;
  case SC_POW:
    if (a == 0 && b < 0) return ts_rt_fail(c, "0.0 cannot be raised to a negative power");
    *out = ts_iv_double(pow((double)a, (double)b));
    return true;
  case SC_POW_UNCHECKED: *out = ts_iv_double(pow((double)a, (double)b)); return true;
  case SC_POW_INT: if (!sc_pow_int(c, a, b, &r)) return false; break;
  case SC_FMOD: *out = ts_iv_double(fmod((double)a, (double)b)); return true;
  case SC_ATAN2: *out = ts_iv_double(atan2((double)a, (double)b)); return true;
  case SC_LOG2: *out = ts_iv_double(log((double)a) / log((double)b)); return true;
  case SC_MIN: r = a < b ? a : b; break;
  case SC_MAX: r = a > b ? a : b; break;
  case SC_EQ: case SC_NE: case SC_LT: case SC_LE: case SC_GT: case SC_GE:
    *out = ts_iv_bool(sc_cmp_int(op, a, b));
    return true;
  case SC_GCD: r = sc_gcd(a, b); break;
  case SC_AND: r = a & b; break;
  case SC_OR: r = a | b; break;
  case SC_XOR: r = a ^ b; break;
  /* x86 masks the shift count to 6 bits; shifts are done unsigned (left)
   * and arithmetic (right) as the hardware does. */
  case SC_SHL: r = (int64_t)((uint64_t)a << ((uint64_t)b & 63)); break;
  case SC_SHR: {
    unsigned s = (unsigned)((uint64_t)b & 63);
    r = a >= 0 ? a >> s : (int64_t)~(~(uint64_t)a >> s);
    break;
  }
  case SC_RTZDIV:
    if (b == 0) return ts_rt_fail(c, "ZeroDivisionError: integer division or modulo by zero");
    r = b == -1 ? sc_wrap_sub(0, a) : a / b;
    break;
  }
  *out = ts_iv_int(r);
  return true;
}

/* The float form of op (either operand may have been an int). */
static bool sc_float_op(ts_rt_ctx *c, sc_op op, double a, double b, ts_iv *out) {
  double r = 0;
  switch (op) {
  case SC_ADD: r = a + b; break;
  case SC_SUB: r = a - b; break;
  case SC_MUL: r = a * b; break;
  case SC_DIV: r = a / b; break;
  case SC_FLOORDIV: r = floor(a / b); break;
  case SC_REM: r = fmod(b + fmod(a, b), b); break;
  case SC_POW:
    if (a == 0.0 && b < 0.0) return ts_rt_fail(c, "0.0 cannot be raised to a negative power");
    r = pow(a, b);
    break;
  case SC_POW_UNCHECKED: case SC_POW_INT: r = pow(a, b); break;
  case SC_FMOD: r = fmod(a, b); break;
  case SC_ATAN2: r = atan2(a, b); break;
  case SC_LOG2: r = log(a) / log(b); break;
  case SC_MIN: r = a < b ? a : b; break;
  case SC_MAX: r = a > b ? a : b; break;
  case SC_EQ: case SC_NE: case SC_LT: case SC_LE: case SC_GT: case SC_GE:
    *out = ts_iv_bool(sc_cmp(op, a, b));
    return true;
  default: return ts_rt_fail(c, "integer operation applied to a float");
  }
  *out = ts_iv_double(r);
  return true;
}

/* Binary number ops: both arguments, the overload's mode, one result. */
static bool sc_binary(ts_rt_ctx *c, ts_rt_call *call, sc_op op, sc_mode mode) {
  sc_num a = {0}, b = {0};
  if (!sc_num_arg(c, call, 0, &a) || !sc_num_arg(c, call, 1, &b)) return false;
  bool as_int = mode == SC_M_INT || (mode == SC_M_SCALAR && a.is_int && b.is_int);
  if (as_int) return sc_int_op(c, op, a.i, b.i, &call->out[0]);
  return sc_float_op(c, op, a.d, b.d, &call->out[0]);
}

/* bool-bool __and__/__or__/__xor__ and eq/ne of bools. */
static bool sc_bool_binary(ts_rt_ctx *c, ts_rt_call *call, sc_op op) {
  bool a = false, b = false, r;
  if (!ts_rt_arg_bool(c, call, 0, &a) || !ts_rt_arg_bool(c, call, 1, &b)) return false;
  switch (op) {
  case SC_AND: r = a && b; break;
  case SC_OR: r = a || b; break;
  case SC_XOR: case SC_NE: r = a != b; break;
  default: r = a == b; break;
  }
  call->out[0] = ts_iv_bool(r);
  return true;
}

#define SC_BIN(fn, op, mode) \
  static bool fn(ts_rt_ctx *c, ts_rt_call *call) { return sc_binary(c, call, op, mode); }
#define SC_BIN3(name, op)                 \
  SC_BIN(sc_##name##_i, op, SC_M_INT)     \
  SC_BIN(sc_##name##_f, op, SC_M_FLOAT)   \
  SC_BIN(sc_##name##_s, op, SC_M_SCALAR)

SC_BIN3(add, SC_ADD)
SC_BIN3(sub, SC_SUB)
SC_BIN3(mul, SC_MUL)
SC_BIN3(div, SC_DIV)
SC_BIN3(floordiv, SC_FLOORDIV)
SC_BIN3(rem, SC_REM)
SC_BIN(sc_pow_i, SC_POW, SC_M_INT)
SC_BIN(sc_pow_f, SC_POW, SC_M_FLOAT)
SC_BIN(sc_pow_s, SC_POW_UNCHECKED, SC_M_SCALAR)
SC_BIN(sc_pow_ii, SC_POW_INT, SC_M_INT)
SC_BIN3(fmod, SC_FMOD)
SC_BIN3(atan2, SC_ATAN2)
SC_BIN3(log2, SC_LOG2)
SC_BIN3(min, SC_MIN)
SC_BIN3(max, SC_MAX)
SC_BIN3(eq, SC_EQ)
SC_BIN3(ne, SC_NE)
SC_BIN3(lt, SC_LT)
SC_BIN3(le, SC_LE)
SC_BIN3(gt, SC_GT)
SC_BIN3(ge, SC_GE)
SC_BIN(sc_gcd_i, SC_GCD, SC_M_INT)
SC_BIN(sc_and_i, SC_AND, SC_M_INT)
SC_BIN(sc_or_i, SC_OR, SC_M_INT)
SC_BIN(sc_xor_i, SC_XOR, SC_M_INT)
SC_BIN(sc_shl_i, SC_SHL, SC_M_INT)
SC_BIN(sc_shr_i, SC_SHR, SC_M_INT)
SC_BIN(sc_rtzdiv_i, SC_RTZDIV, SC_M_INT)

static bool sc_and_b(ts_rt_ctx *c, ts_rt_call *call) { return sc_bool_binary(c, call, SC_AND); }
static bool sc_or_b(ts_rt_ctx *c, ts_rt_call *call) { return sc_bool_binary(c, call, SC_OR); }
static bool sc_xor_b(ts_rt_ctx *c, ts_rt_call *call) { return sc_bool_binary(c, call, SC_XOR); }
static bool sc_eq_b(ts_rt_ctx *c, ts_rt_call *call) { return sc_bool_binary(c, call, SC_EQ); }
static bool sc_ne_b(ts_rt_ctx *c, ts_rt_call *call) { return sc_bool_binary(c, call, SC_NE); }

/* ------------------------------------------------------------------ unary */

typedef enum sc_uop {
  SC_U_NEG, SC_U_ABS, SC_U_FABS, SC_U_SQRT, SC_U_EXP, SC_U_EXPM1, SC_U_LOG, SC_U_LOG10, SC_U_LOG1P, SC_U_SIN, SC_U_COS,
  SC_U_TAN, SC_U_ASIN, SC_U_ACOS, SC_U_ATAN, SC_U_SINH, SC_U_COSH, SC_U_TANH, SC_U_ERF, SC_U_ROUND, SC_U_FLOOR,
  SC_U_CEIL, SC_U_ISNAN, SC_U_ISINF, SC_U_ISFINITE, SC_U_ACOSH, SC_U_ASINH, SC_U_ATANH, SC_U_ERFC, SC_U_LGAMMA,
} sc_uop;

static double sc_umath(sc_uop op, double a) {
  switch (op) {
  case SC_U_NEG: return -a;
  case SC_U_ABS: case SC_U_FABS: return fabs(a);
  case SC_U_SQRT: return sqrt(a);
  case SC_U_EXP: return exp(a);
  case SC_U_EXPM1: return expm1(a);
  case SC_U_LOG: return log(a);
  case SC_U_LOG10: return log10(a);
  case SC_U_LOG1P: return log1p(a);
  case SC_U_SIN: return sin(a);
  case SC_U_COS: return cos(a);
  case SC_U_TAN: return tan(a);
  case SC_U_ASIN: return asin(a);
  case SC_U_ACOS: return acos(a);
  case SC_U_ATAN: return atan(a);
  case SC_U_SINH: return sinh(a);
  case SC_U_COSH: return cosh(a);
  case SC_U_TANH: return tanh(a);
  case SC_U_ERF: return erf(a);
  case SC_U_ACOSH: return acosh(a);
  case SC_U_ASINH: return asinh(a);
  case SC_U_ATANH: return atanh(a);
  case SC_U_ERFC: return erfc(a);
  case SC_U_LGAMMA: return lgamma(a);
  case SC_U_ROUND: return nearbyint(a); /* half to even, as c10's round_to_even */
  case SC_U_FLOOR: return floor(a);
  case SC_U_CEIL: return ceil(a);
  default: return a;
  }
}

/* Unary ops. `mode` picks the overload: .int, .float or .Scalar. The
 * Scalar overload casts its result through C++ `float` (32-bit) or `int`
 * (32-bit) as PyTorch's DEFINE_UNARY_OP does. */
static bool sc_unary(ts_rt_ctx *c, ts_rt_call *call, sc_uop op, sc_mode mode) {
  sc_num a = {0};
  if (!sc_num_arg(c, call, 0, &a)) return false;
  bool as_int = mode == SC_M_INT || (mode == SC_M_SCALAR && a.is_int);
  ts_iv *out = &call->out[0];
  if (op == SC_U_ISNAN || op == SC_U_ISINF || op == SC_U_ISFINITE) {
    double d = a.is_int ? (double)a.i : a.d;
    *out = ts_iv_bool(op == SC_U_ISNAN ? isnan(d) : op == SC_U_ISINF ? isinf(d) : isfinite(d));
    return true;
  }
  bool int_result = op == SC_U_NEG || op == SC_U_ABS || op == SC_U_FLOOR || op == SC_U_CEIL;
  if (as_int) {
    int64_t x = a.is_int ? a.i : sc_f2i(a.d);
    if (int_result) {
      int64_t r = op == SC_U_NEG ? sc_wrap_sub(0, x) : op == SC_U_ABS ? (x < 0 ? sc_wrap_sub(0, x) : x) : x;
      *out = ts_iv_int(mode == SC_M_SCALAR ? (int64_t)(int32_t)(uint32_t)(uint64_t)r : r);
    } else {
      double r = sc_umath(op, (double)x);
      *out = ts_iv_double(mode == SC_M_SCALAR ? (double)(float)r : r);
    }
    return true;
  }
  double x = a.is_int ? (double)a.i : a.d;
  double r = sc_umath(op, x);
  if (op == SC_U_FLOOR || op == SC_U_CEIL) {
    if (!sc_check_range(c, r)) return false;
    int64_t i = (int64_t)r;
    *out = ts_iv_int(mode == SC_M_SCALAR ? (int64_t)(int32_t)(uint32_t)(uint64_t)i : i);
    return true;
  }
  *out = ts_iv_double(mode == SC_M_SCALAR ? (double)(float)r : r);
  return true;
}

#define SC_UN(fn, op, mode) \
  static bool fn(ts_rt_ctx *c, ts_rt_call *call) { return sc_unary(c, call, op, mode); }
#define SC_UN3(name, op)               \
  SC_UN(sc_##name##_i, op, SC_M_INT)   \
  SC_UN(sc_##name##_f, op, SC_M_FLOAT) \
  SC_UN(sc_##name##_s, op, SC_M_SCALAR)

SC_UN3(neg, SC_U_NEG)
SC_UN3(abs, SC_U_ABS)
SC_UN3(fabs, SC_U_FABS)
SC_UN3(sqrt, SC_U_SQRT)
SC_UN3(exp, SC_U_EXP)
SC_UN3(expm1, SC_U_EXPM1)
SC_UN3(log, SC_U_LOG)
SC_UN3(log10, SC_U_LOG10)
SC_UN3(log1p, SC_U_LOG1P)
SC_UN3(sin, SC_U_SIN)
SC_UN3(cos, SC_U_COS)
SC_UN3(tan, SC_U_TAN)
SC_UN3(asin, SC_U_ASIN)
SC_UN3(acos, SC_U_ACOS)
SC_UN3(atan, SC_U_ATAN)
SC_UN3(sinh, SC_U_SINH)
SC_UN3(cosh, SC_U_COSH)
SC_UN3(tanh, SC_U_TANH)
SC_UN3(erf, SC_U_ERF)
SC_UN3(acosh, SC_U_ACOSH)
SC_UN3(asinh, SC_U_ASINH)
SC_UN3(atanh, SC_U_ATANH)
SC_UN3(erfc, SC_U_ERFC)
SC_UN3(lgamma, SC_U_LGAMMA)
SC_UN3(round, SC_U_ROUND)
SC_UN3(floor, SC_U_FLOOR)
SC_UN3(ceil, SC_U_CEIL)
SC_UN(sc_isnan_f, SC_U_ISNAN, SC_M_FLOAT)
SC_UN(sc_isinf_f, SC_U_ISINF, SC_M_FLOAT)
SC_UN(sc_isfinite_f, SC_U_ISFINITE, SC_M_FLOAT)

/* prim::abs(Tensor): the tensor overload of the builtin abs(). */
static bool sc_abs_tensor(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &t)) return false;
  ts_rt_tensor *r = ts_rt_unary_op(c, TS_PW_abs, t);
  if (!r) return false;
  call->out[0] = ts_iv_tensor(r);
  return true;
}

/* ------------------------------------------------------------ conversions */

/* Tensor.item(): the one element as an int, float or bool IValue. */
static bool sc_item(ts_rt_ctx *c, const ts_rt_tensor *t, ts_iv *out) {
  int64_t n = ts_rt_tensor_numel(t);
  if (n != 1) return ts_rt_fail(c, "a Tensor with %lld elements cannot be converted to Scalar", (long long)n);
  const void *p = ts_rt_tensor_data(t);
  ts_dtype dt = (ts_dtype)t->dtype;
  if (dt == TS_DT_BOOL) *out = ts_iv_bool(ts_rt_load_i64(p, dt) != 0);
  else if (ts_rt_dtype_is_float(dt)) *out = ts_iv_double(ts_rt_load_f64(p, dt));
  else *out = ts_iv_int(ts_rt_load_i64(p, dt));
  return true;
}

/* c10's checked conversion of a float to int64 (item<int64_t>()). */
static bool sc_checked_i64(ts_rt_ctx *c, ts_iv v, int64_t *out) {
  if (v.tag == TS_IV_DOUBLE) {
    double d = v.u.d;
    if (isnan(d) || d > 9223372036854775807.0 || d < -9223372036854775808.0)
      return ts_rt_fail(c, "value cannot be converted to type int64_t without overflow");
    *out = sc_f2i(d);
  } else
    *out = v.tag == TS_IV_BOOL ? v.u.b : v.u.i;
  return true;
}

static bool sc_int_tensor(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t = NULL;
  ts_iv v = ts_iv_none();
  int64_t i = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &t) || !sc_item(c, t, &v) || !sc_checked_i64(c, v, &i)) return false;
  call->out[0] = ts_iv_int(i);
  return true;
}

static bool sc_float_tensor(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t = NULL;
  ts_iv v = ts_iv_none();
  if (!ts_rt_arg_tensor(c, call, 0, &t) || !sc_item(c, t, &v)) return false;
  call->out[0] = ts_iv_double(v.tag == TS_IV_DOUBLE ? v.u.d : v.tag == TS_IV_BOOL ? (double)v.u.b : (double)v.u.i);
  return true;
}

/* bool(tensor): Tensor.is_nonzero(). */
static bool sc_bool_tensor(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &t)) return false;
  int64_t n = ts_rt_tensor_numel(t);
  if (n == 0) return ts_rt_fail(c, "Boolean value of Tensor with no values is ambiguous");
  if (n > 1) return ts_rt_fail(c, "Boolean value of Tensor with more than one value is ambiguous");
  ts_iv v = ts_iv_none();
  if (!sc_item(c, t, &v)) return false;
  call->out[0] = ts_iv_bool(v.tag == TS_IV_DOUBLE ? v.u.d != 0 : v.tag == TS_IV_BOOL ? v.u.b : v.u.i != 0);
  return true;
}

/* PyTorch's checkImplicitTensorToNum. */
static bool sc_implicit(ts_rt_ctx *c, ts_rt_call *call, bool to_int, ts_iv *v) {
  ts_rt_tensor *t = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &t)) return false;
  if (t->requires_grad) return ts_rt_fail(c, "Cannot input a tensor that requires grad as a scalar argument");
  if (t->ndim != 0) return ts_rt_fail(c, "Cannot input a tensor of dimension other than 0 as a scalar argument");
  if (to_int && !ts_rt_dtype_is_integral((ts_dtype)t->dtype, false))
    return ts_rt_fail(c, "Cannot input a tensor of type %s as an integral argument", ts_rt_dtype_name((ts_dtype)t->dtype));
  return sc_item(c, t, v);
}

static bool sc_int_implicit(ts_rt_ctx *c, ts_rt_call *call) {
  ts_iv v = ts_iv_none();
  int64_t i = 0;
  if (!sc_implicit(c, call, true, &v) || !sc_checked_i64(c, v, &i)) return false;
  call->out[0] = ts_iv_int(i);
  return true;
}

static bool sc_float_implicit(ts_rt_ctx *c, ts_rt_call *call) {
  ts_iv v = ts_iv_none();
  if (!sc_implicit(c, call, false, &v)) return false;
  call->out[0] = ts_iv_double(v.tag == TS_IV_DOUBLE ? v.u.d : v.tag == TS_IV_BOOL ? (double)v.u.b : (double)v.u.i);
  return true;
}

static bool sc_scalar_implicit(ts_rt_ctx *c, ts_rt_call *call) {
  ts_iv v = ts_iv_none();
  if (!sc_implicit(c, call, false, &v)) return false;
  call->out[0] = v;
  return true;
}

/* int(x) for bool, float and Scalar. Int.Scalar of a float goes through
 * c10::Scalar::toInt, a checked conversion to 32-bit int. */
static bool sc_int_num(ts_rt_ctx *c, ts_rt_call *call) {
  sc_num a = {0};
  if (!sc_num_arg(c, call, 0, &a)) return false;
  call->out[0] = ts_iv_int(a.is_int ? a.i : sc_f2i(a.d));
  return true;
}

static bool sc_int_scalar(ts_rt_ctx *c, ts_rt_call *call) {
  sc_num a = {0};
  if (!sc_num_arg(c, call, 0, &a)) return false;
  if (!a.is_int) {
    if (isnan(a.d) || a.d > 2147483647.0 || a.d < -2147483648.0)
      return ts_rt_fail(c, "value cannot be converted to type int without overflow");
    a.i = (int64_t)a.d;
  }
  call->out[0] = ts_iv_int(a.i);
  return true;
}

static bool sc_float_scalar(ts_rt_ctx *c, ts_rt_call *call) {
  sc_num a = {0};
  if (!sc_num_arg(c, call, 0, &a)) return false;
  call->out[0] = ts_iv_double(a.d);
  return true;
}

static bool sc_bool_num(ts_rt_ctx *c, ts_rt_call *call) {
  sc_num a = {0};
  if (!sc_num_arg(c, call, 0, &a)) return false;
  call->out[0] = ts_iv_bool(a.is_int ? a.i != 0 : a.d != 0);
  return true;
}

/* int(str): std::stoll (leading whitespace and a sign allowed) that must
 * consume the whole string. */
static bool sc_int_str(ts_rt_ctx *c, ts_rt_call *call) {
  const ts_rt_str *s = NULL;
  if (!ts_rt_arg_str(c, call, 0, &s)) return false;
  char *end = NULL;
  errno = 0;
  long long v = strtoll(s->data, &end, 10);
  if (end == s->data || errno == ERANGE) return ts_rt_fail(c, "stoll");
  if ((size_t)(end - s->data) != s->len)
    return ts_rt_fail(c, "invalid literal for int() with base 10: '%s'", s->data);
  call->out[0] = ts_iv_int((int64_t)v);
  return true;
}

/* float(str): std::stod, which must consume the whole string. */
static bool sc_float_str(ts_rt_ctx *c, ts_rt_call *call) {
  const ts_rt_str *s = NULL;
  if (!ts_rt_arg_str(c, call, 0, &s)) return false;
  char *end = NULL;
  errno = 0;
  double v = strtod(s->data, &end);
  if (end == s->data || errno == ERANGE) return ts_rt_fail(c, "stod");
  if ((size_t)(end - s->data) != s->len) return ts_rt_fail(c, "could not convert string to float: '%s'", s->data);
  call->out[0] = ts_iv_double(v);
  return true;
}

/* ------------------------------------------------------------------ misc */

static bool sc_not(ts_rt_ctx *c, ts_rt_call *call) {
  bool b = false;
  if (!ts_rt_arg_bool(c, call, 0, &b)) return false;
  call->out[0] = ts_iv_bool(!b);
  return true;
}

/* IValue::isSameIdentity: value equality for None, bool, int, float and
 * str; identity for other references. */
static bool sc_same_identity(ts_iv a, ts_iv b) {
  if (a.tag == TS_IV_NONE && b.tag == TS_IV_NONE) return true;
  if (a.tag != b.tag) return false;
  switch (a.tag) {
  case TS_IV_BOOL: return a.u.b == b.u.b;
  case TS_IV_INT: return a.u.i == b.u.i;
  case TS_IV_DOUBLE: return a.u.d == b.u.d;
  case TS_IV_STR: return a.u.s->len == b.u.s->len && memcmp(a.u.s->data, b.u.s->data, a.u.s->len) == 0;
  default: return ts_iv_is_ref(a) && a.u.o == b.u.o;
  }
}

static bool sc_is(ts_rt_ctx *c, ts_rt_call *call) {
  if (!ts_rt_arg_check(c, call, 1)) return false;
  call->out[0] = ts_iv_bool(sc_same_identity(call->in[0], call->in[1]));
  return true;
}

static bool sc_isnot(ts_rt_ctx *c, ts_rt_call *call) {
  if (!ts_rt_arg_check(c, call, 1)) return false;
  call->out[0] = ts_iv_bool(!sc_same_identity(call->in[0], call->in[1]));
  return true;
}

/* The number of iterations of range(lo, hi, step). */
static bool sc_range_length(ts_rt_ctx *c, ts_rt_call *call) {
  int64_t lo = 0, hi = 0, step = 0;
  if (!ts_rt_arg_int(c, call, 0, &lo) || !ts_rt_arg_int(c, call, 1, &hi) || !ts_rt_arg_int(c, call, 2, &step))
    return false;
  if (step == 0) return ts_rt_fail(c, "range() arg 3 must not be zero");
  int64_t n = 0;
  /* distances computed unsigned: hi - lo may not fit an int64 */
  if (step > 0 && lo < hi) n = (int64_t)(1 + ((uint64_t)hi - 1 - (uint64_t)lo) / (uint64_t)step);
  else if (step < 0 && lo > hi) n = (int64_t)(1 + ((uint64_t)lo - 1 - (uint64_t)hi) / (0 - (uint64_t)step));
  call->out[0] = ts_iv_int(n);
  return true;
}

static bool sc_derive_index(ts_rt_ctx *c, ts_rt_call *call) {
  int64_t index = 0, start = 0, step = 0;
  if (!ts_rt_arg_int(c, call, 0, &index) || !ts_rt_arg_int(c, call, 1, &start) || !ts_rt_arg_int(c, call, 2, &step))
    return false;
  call->out[0] = ts_iv_int(sc_wrap_add(start, sc_wrap_mul(index, step)));
  return true;
}

/* str(x): the value as PyTorch prints an IValue. */
static bool sc_str(ts_rt_ctx *c, ts_rt_call *call) {
  if (!ts_rt_arg_check(c, call, 0)) return false;
  ts_buf b = {0};
  ts_iv_str(&b, call->in[0]);
  if (b.failed) {
    ts_buf_free(&b);
    return ts_rt_oom(c);
  }
  ts_rt_str *s = ts_rt_str_new(c, b.data ? b.data : "", b.len);
  ts_buf_free(&b);
  if (!s) return false;
  call->out[0] = (ts_iv){.u.s = s, .tag = TS_IV_STR};
  return true;
}

const ts_rt_kernel_def ts_rt_kernels_scalar[] = {
    {"aten::add.int", sc_add_i}, {"aten::add.float", sc_add_f}, {"aten::add.int_float", sc_add_f},
    {"aten::add.float_int", sc_add_f}, {"aten::add", sc_add_s},
    {"aten::sub.int", sc_sub_i}, {"aten::sub.float", sc_sub_f}, {"aten::sub.int_float", sc_sub_f},
    {"aten::sub.float_int", sc_sub_f}, {"aten::sub", sc_sub_s},
    {"aten::mul.int", sc_mul_i}, {"aten::mul.float", sc_mul_f}, {"aten::mul.int_float", sc_mul_f},
    {"aten::mul.float_int", sc_mul_f}, {"aten::mul", sc_mul_s},
    {"aten::div.int", sc_div_i}, {"aten::div.float", sc_div_f}, {"aten::div", sc_div_s},
    {"aten::floordiv.int", sc_floordiv_i}, {"aten::floordiv.float", sc_floordiv_f},
    {"aten::floordiv.int_float", sc_floordiv_f}, {"aten::floordiv.float_int", sc_floordiv_f},
    {"aten::floordiv", sc_floordiv_s},
    {"aten::remainder.int", sc_rem_i}, {"aten::remainder.float", sc_rem_f}, {"aten::remainder.int_float", sc_rem_f},
    {"aten::remainder.float_int", sc_rem_f}, {"aten::remainder", sc_rem_s},
    {"aten::pow.int", sc_pow_i}, {"aten::pow.float", sc_pow_f}, {"aten::pow.int_float", sc_pow_f},
    {"aten::pow.float_int", sc_pow_f}, {"aten::pow.Scalar_Scalar", sc_pow_s}, {"aten::pow.int_to_int", sc_pow_ii},
    {"aten::fmod.int", sc_fmod_i}, {"aten::fmod.float", sc_fmod_f}, {"aten::fmod.int_float", sc_fmod_f},
    {"aten::fmod.float_int", sc_fmod_f}, {"aten::fmod", sc_fmod_s},
    {"aten::atan2.int", sc_atan2_i}, {"aten::atan2.float", sc_atan2_f}, {"aten::atan2.int_float", sc_atan2_f},
    {"aten::atan2.float_int", sc_atan2_f}, {"aten::atan2.Scalar_Scalar", sc_atan2_s},
    {"aten::log.int_int", sc_log2_i}, {"aten::log.float_float", sc_log2_f}, {"aten::log.int_float", sc_log2_f},
    {"aten::log.float_int", sc_log2_f}, {"aten::log.Scalar_Scalar", sc_log2_s},
    {"prim::min.int", sc_min_i}, {"prim::min.float", sc_min_f}, {"prim::min.int_float", sc_min_f},
    {"prim::min.float_int", sc_min_f}, {"prim::min", sc_min_s},
    {"prim::max.int", sc_max_i}, {"prim::max.float", sc_max_f}, {"prim::max.int_float", sc_max_f},
    {"prim::max.float_int", sc_max_f}, {"prim::max", sc_max_s},
    {"aten::eq.int", sc_eq_i}, {"aten::eq.float", sc_eq_f}, {"aten::eq.int_float", sc_eq_f},
    {"aten::eq.float_int", sc_eq_f}, {"aten::eq", sc_eq_s}, {"aten::eq.bool", sc_eq_b},
    {"aten::ne.int", sc_ne_i}, {"aten::ne.float", sc_ne_f}, {"aten::ne.int_float", sc_ne_f},
    {"aten::ne.float_int", sc_ne_f}, {"aten::ne", sc_ne_s}, {"aten::ne.bool", sc_ne_b},
    {"aten::lt.int", sc_lt_i}, {"aten::lt.float", sc_lt_f}, {"aten::lt.int_float", sc_lt_f},
    {"aten::lt.float_int", sc_lt_f}, {"aten::lt", sc_lt_s},
    {"aten::le.int", sc_le_i}, {"aten::le.float", sc_le_f}, {"aten::le.int_float", sc_le_f},
    {"aten::le.float_int", sc_le_f}, {"aten::le", sc_le_s},
    {"aten::gt.int", sc_gt_i}, {"aten::gt.float", sc_gt_f}, {"aten::gt.int_float", sc_gt_f},
    {"aten::gt.float_int", sc_gt_f}, {"aten::gt", sc_gt_s},
    {"aten::ge.int", sc_ge_i}, {"aten::ge.float", sc_ge_f}, {"aten::ge.int_float", sc_ge_f},
    {"aten::ge.float_int", sc_ge_f}, {"aten::ge", sc_ge_s},
    {"aten::gcd.int", sc_gcd_i},
    {"aten::__and__.int", sc_and_i}, {"aten::__and__.bool", sc_and_b},
    {"aten::__or__.int", sc_or_i}, {"aten::__or__.bool", sc_or_b},
    {"aten::__xor__.int", sc_xor_i}, {"aten::__xor__.bool", sc_xor_b},
    {"aten::__lshift__.int", sc_shl_i}, {"aten::__rshift__.int", sc_shr_i},
    {"aten::__round_to_zero_floordiv.int", sc_rtzdiv_i},
    {"aten::neg.int", sc_neg_i}, {"aten::neg.float", sc_neg_f}, {"aten::neg.Scalar", sc_neg_s},
    {"prim::abs.int", sc_abs_i}, {"prim::abs.float", sc_abs_f}, {"prim::abs.Scalar", sc_abs_s},
    {"prim::abs", sc_abs_tensor},
    {"aten::fabs.int", sc_fabs_i}, {"aten::fabs.float", sc_fabs_f}, {"aten::fabs.Scalar", sc_fabs_s},
    {"aten::sqrt.int", sc_sqrt_i}, {"aten::sqrt.float", sc_sqrt_f}, {"aten::sqrt.Scalar", sc_sqrt_s},
    {"aten::exp.int", sc_exp_i}, {"aten::exp.float", sc_exp_f}, {"aten::exp.Scalar", sc_exp_s},
    {"aten::expm1.int", sc_expm1_i}, {"aten::expm1.float", sc_expm1_f}, {"aten::expm1.Scalar", sc_expm1_s},
    {"aten::log.int", sc_log_i}, {"aten::log.float", sc_log_f}, {"aten::log.Scalar", sc_log_s},
    {"aten::log10.int", sc_log10_i}, {"aten::log10.float", sc_log10_f}, {"aten::log10.Scalar", sc_log10_s},
    {"aten::log1p.int", sc_log1p_i}, {"aten::log1p.float", sc_log1p_f}, {"aten::log1p.Scalar", sc_log1p_s},
    {"aten::sin.int", sc_sin_i}, {"aten::sin.float", sc_sin_f}, {"aten::sin.Scalar", sc_sin_s},
    {"aten::cos.int", sc_cos_i}, {"aten::cos.float", sc_cos_f}, {"aten::cos.Scalar", sc_cos_s},
    {"aten::tan.int", sc_tan_i}, {"aten::tan.float", sc_tan_f}, {"aten::tan.Scalar", sc_tan_s},
    {"aten::asin.int", sc_asin_i}, {"aten::asin.float", sc_asin_f}, {"aten::asin.Scalar", sc_asin_s},
    {"aten::acos.int", sc_acos_i}, {"aten::acos.float", sc_acos_f}, {"aten::acos.Scalar", sc_acos_s},
    {"aten::atan.int", sc_atan_i}, {"aten::atan.float", sc_atan_f}, {"aten::atan.Scalar", sc_atan_s},
    {"aten::sinh.int", sc_sinh_i}, {"aten::sinh.float", sc_sinh_f}, {"aten::sinh.Scalar", sc_sinh_s},
    {"aten::cosh.int", sc_cosh_i}, {"aten::cosh.float", sc_cosh_f}, {"aten::cosh.Scalar", sc_cosh_s},
    {"aten::tanh.int", sc_tanh_i}, {"aten::tanh.float", sc_tanh_f}, {"aten::tanh.Scalar", sc_tanh_s},
    {"aten::erf.int", sc_erf_i}, {"aten::erf.float", sc_erf_f}, {"aten::erf.Scalar", sc_erf_s},
    {"aten::acosh.int", sc_acosh_i}, {"aten::acosh.float", sc_acosh_f}, {"aten::acosh.Scalar", sc_acosh_s},
    {"aten::asinh.int", sc_asinh_i}, {"aten::asinh.float", sc_asinh_f}, {"aten::asinh.Scalar", sc_asinh_s},
    {"aten::atanh.int", sc_atanh_i}, {"aten::atanh.float", sc_atanh_f}, {"aten::atanh.Scalar", sc_atanh_s},
    {"aten::erfc.int", sc_erfc_i}, {"aten::erfc.float", sc_erfc_f}, {"aten::erfc.Scalar", sc_erfc_s},
    {"aten::lgamma.int", sc_lgamma_i}, {"aten::lgamma.float", sc_lgamma_f}, {"aten::lgamma.Scalar", sc_lgamma_s},
    {"aten::round.int", sc_round_i}, {"aten::round.float", sc_round_f}, {"aten::round.Scalar", sc_round_s},
    {"aten::floor.int", sc_floor_i}, {"aten::floor.float", sc_floor_f}, {"aten::floor.Scalar", sc_floor_s},
    {"aten::ceil.int", sc_ceil_i}, {"aten::ceil.float", sc_ceil_f}, {"aten::ceil.Scalar", sc_ceil_s},
    {"aten::isnan.float", sc_isnan_f}, {"aten::isinf.float", sc_isinf_f}, {"aten::isfinite.float", sc_isfinite_f},
    {"aten::Int.Tensor", sc_int_tensor}, {"aten::Int.bool", sc_int_num}, {"aten::Int.float", sc_int_num},
    {"aten::Int.Scalar", sc_int_scalar}, {"aten::Int.str", sc_int_str},
    {"aten::Float.Tensor", sc_float_tensor}, {"aten::Float.Scalar", sc_float_scalar},
    {"aten::Float.int", sc_float_scalar}, {"aten::Float.bool", sc_float_scalar}, {"aten::Float.str", sc_float_str},
    {"aten::Bool.Tensor", sc_bool_tensor}, {"aten::Bool.int", sc_bool_num}, {"aten::Bool.float", sc_bool_num},
    {"aten::IntImplicit", sc_int_implicit}, {"aten::FloatImplicit", sc_float_implicit},
    {"aten::ScalarImplicit", sc_scalar_implicit},
    {"aten::__not__", sc_not}, {"aten::__is__", sc_is}, {"aten::__isnot__", sc_isnot},
    {"aten::__range_length", sc_range_length}, {"aten::__derive_index", sc_derive_index},
    {"aten::str", sc_str},
    {NULL, NULL},
};
