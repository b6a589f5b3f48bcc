/* passes/constant_propagation.c: torch::jit::ConstantPropagationImmutableTypes
 * (passes/constant_propagation.cpp, the ConstantPropagator without an alias
 * database).
 *
 * Walks every block in order:
 * - prim::If on a prim::Constant condition: the taken block is propagated,
 *   its nodes move before the If, the If's outputs become the block's and
 *   the If goes (with the other block, side effects and all). On another
 *   condition both blocks are propagated, then outputs that are the same
 *   value in both blocks, or equal constants in both, are replaced by that
 *   value (a new constant before the If) and dropped from the If.
 * - prim::Loop whose constant trip count is <= 0 or constant start
 *   condition is false: removed, its outputs replaced by the initial
 *   carried values. Otherwise the body is propagated and carried values the
 *   body returns unchanged are replaced by their initial value and dropped.
 * - any other node whose inputs are all prim::Constants, whose inputs and
 *   outputs are all of immutable types (no Tensor, list, dict, class, ...),
 *   that has no side effects and no blocks, and is not prim::Constant,
 *   prim::Uninitialized, prim::Guard or prim::unchecked_unwrap_optional:
 *   evaluated, and each output's uses moved to a new prim::Constant of the
 *   result (inserted before the node, no source location, no debug name;
 *   a None result keeps the output's type, e.g. int?).
 * If anything changed, EliminateDeadCode runs on the graph afterwards.
 *
 * PyTorch evaluates the node with its interpreter; tsaot has none yet, so
 * the evaluator below knows the scalar ops that fold in practice, with
 * PyTorch's kernels' semantics (register_prim_ops.cpp). Anything else is
 * left as it is:
 *   aten::add/sub/mul        int, float, mixed (float result); add of str
 *   aten::div                true division, float result
 *   aten::floordiv           int: rounds toward -inf (Python's //);
 *                            float: floor(a / b)
 *   aten::remainder          int: sign of the divisor (Python's %), as
 *                            PyTorch's (b + a % b) % b; float:
 *                            fmod(b + fmod(a, b), b)
 *   aten::neg, aten::pow     pow with a float result (pow.int gives float);
 *                            pow.int_to_int is not folded
 *   aten::eq/ne/lt/le/gt/ge  int, float, mixed, str (bytewise); eq/ne also
 *                            bool and Device
 *   aten::__not__, __and__, __or__, __xor__   bool; int (bitwise)
 *   aten::__is__, __isnot__  IValue::is: None is None; None vs anything
 *                            else; int/bool/float/Device by value and tag;
 *                            two strs are compared by identity in PyTorch
 *                            and are not folded
 *   aten::Int, Float, Bool   from int, float, bool, str (Int.str: whole
 *                            string a base-10 integer; Float.str: strtod
 *                            over the whole string); Float(int) only where
 *                            a C float holds the int exactly (Float.int
 *                            goes through one, Float.Scalar does not)
 *   aten::str                IValue printing: 1 -> "1", 1.5 -> "1.5",
 *                            2.0 -> "2.", 0.1 -> "0.10000000000000001",
 *                            True/False/None, a str as itself, a Device
 *   aten::len.str            bytes, as PyTorch counts them
 *   aten::floor, aten::ceil  to int
 *   prim::min, prim::max     a < b ? a : b, int or float
 *   aten::__range_length, aten::__derive_index, prim::unchecked_cast
 * Never folded: anything that would raise (division or modulo by zero, also
 * for floats where the kernel would give inf; 0 to a negative power;
 * int("x")), anything whose C++ kernel has undefined behaviour (int64
 * overflow in add/sub/mul/neg/abs, INT64_MIN // -1, a float out of int64
 * range converted to int). PyTorch folds int64 overflow with whatever the
 * C++ wraps to; here the node stays and the runtime computes it.
 * aten::format is vararg, which PyTorch's constant propagation skips too.
 * Tuples: PyTorch folds a TupleConstruct of constants into a tuple
 * constant; tsaot's prim::Constant cannot hold a tuple, so TupleConstruct
 * (and TupleIndex/TupleUnpack of a tuple constant) are not folded. */
#include "passes.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct ts_cprop {
  ts_graph *g;
  bool changed;
  bool oom;
  ts_buf scratch; /* bytes of a str result */
} ts_cprop;

/* ---- int64 arithmetic without undefined behaviour ---- */

static bool ts_cprop_add(int64_t a, int64_t b, int64_t *r) {
  if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
    return false;
  *r = a + b;
  return true;
}

static bool ts_cprop_sub(int64_t a, int64_t b, int64_t *r) {
  if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b))
    return false;
  *r = a - b;
  return true;
}

static bool ts_cprop_mul(int64_t a, int64_t b, int64_t *r) {
  if (a && b) {
    if (a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a) : (b > 0 ? a < INT64_MIN / b : b < INT64_MAX / a))
      return false;
  }
  *r = a * b;
  return true;
}

/* A double that converts to int64 without undefined behaviour. */
static bool ts_cprop_to_int(double d, int64_t *r) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
    return false;
  *r = (int64_t)d;
  return true;
}

static bool ts_cprop_is_num(const ts_cval *v) { return v->kind == TS_CV_INT || v->kind == TS_CV_FLOAT; }

static double ts_cprop_num(const ts_cval *v) { return v->kind == TS_CV_INT ? (double)v->i : v->f; }

static void ts_cprop_set_int(ts_cval *r, int64_t i) {
  r->kind = TS_CV_INT;
  r->i = i;
}

static void ts_cprop_set_float(ts_cval *r, double f) {
  r->kind = TS_CV_FLOAT;
  r->f = f;
}

static void ts_cprop_set_bool(ts_cval *r, bool b) {
  r->kind = TS_CV_BOOL;
  r->i = b;
}

static int ts_cprop_strcmp(const ts_cval *a, const ts_cval *b) {
  size_t n = a->len < b->len ? a->len : b->len;
  int c = n ? memcmp(a->s, b->s, n) : 0;
  if (c)
    return c;
  return a->len < b->len ? -1 : a->len > b->len;
}

/* add, sub, mul over numbers and, for add, strs */
static bool ts_cprop_arith(ts_cprop *c, ts_kind k, const ts_cval *a, const ts_cval *b, ts_cval *r) {
  if (k == TS_K_aten_add && a->kind == TS_CV_STR && b->kind == TS_CV_STR) {
    c->scratch.len = 0;
    ts_buf_putn(&c->scratch, a->s ? a->s : "", a->len);
    ts_buf_putn(&c->scratch, b->s ? b->s : "", b->len);
    if (c->scratch.failed) {
      c->oom = true;
      return false;
    }
    r->kind = TS_CV_STR;
    r->s = c->scratch.data;
    r->len = c->scratch.len;
    return true;
  }
  if (!ts_cprop_is_num(a) || !ts_cprop_is_num(b))
    return false;
  if (a->kind == TS_CV_INT && b->kind == TS_CV_INT) {
    int64_t v;
    bool ok = k == TS_K_aten_add ? ts_cprop_add(a->i, b->i, &v)
              : k == TS_K_aten_sub ? ts_cprop_sub(a->i, b->i, &v)
                                   : ts_cprop_mul(a->i, b->i, &v);
    if (ok)
      ts_cprop_set_int(r, v);
    return ok;
  }
  double x = ts_cprop_num(a), y = ts_cprop_num(b);
  ts_cprop_set_float(r, k == TS_K_aten_add ? x + y : k == TS_K_aten_sub ? x - y : x * y);
  return true;
}

/* Python's // on ints (PyTorch's floordiv in register_ops_utils.h) */
static bool ts_cprop_floordiv_int(int64_t a, int64_t b, int64_t *r) {
  if (b == 0 || (a == INT64_MIN && b == -1))
    return false;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    q--;
  *r = q;
  return true;
}

/* (b + a % b) % b, refused where the sum would overflow */
static bool ts_cprop_remainder_int(int64_t a, int64_t b, int64_t *r) {
  if (b == 0)
    return false;
  int64_t m = b == -1 ? 0 : a % b, s;
  if (!ts_cprop_add(b, m, &s))
    return false;
  *r = b == -1 ? 0 : s % b;
  return true;
}

static bool ts_cprop_division(ts_kind k, const ts_cval *a, const ts_cval *b, ts_cval *r) {
  if (!ts_cprop_is_num(a) || !ts_cprop_is_num(b))
    return false;
  if (a->kind == TS_CV_INT && b->kind == TS_CV_INT && k != TS_K_aten_div) {
    int64_t v;
    bool ok = k == TS_K_aten_floordiv ? ts_cprop_floordiv_int(a->i, b->i, &v) : ts_cprop_remainder_int(a->i, b->i, &v);
    if (ok)
      ts_cprop_set_int(r, v);
    return ok;
  }
  double x = ts_cprop_num(a), y = ts_cprop_num(b);
  if (y == 0)
    return false; /* Python raises ZeroDivisionError; leave it to run time */
  if (k == TS_K_aten_div)
    ts_cprop_set_float(r, x / y);
  else if (k == TS_K_aten_floordiv)
    ts_cprop_set_float(r, floor(x / y));
  else
    ts_cprop_set_float(r, fmod(y + fmod(x, y), y));
  return true;
}

static bool ts_cprop_compare(ts_kind k, const ts_cval *a, const ts_cval *b, ts_cval *r) {
  int c;
  if (ts_cprop_is_num(a) && ts_cprop_is_num(b)) {
    if (a->kind == TS_CV_INT && b->kind == TS_CV_INT)
      c = a->i < b->i ? -1 : a->i > b->i;
    else {
      double x = ts_cprop_num(a), y = ts_cprop_num(b);
      /* each operator on its own: with nan every ordered comparison is false */
      bool v = k == TS_K_aten_eq   ? x == y
               : k == TS_K_aten_ne ? x != y
               : k == TS_K_aten_lt ? x < y
               : k == TS_K_aten_le ? x <= y
               : k == TS_K_aten_gt ? x > y
                                   : x >= y;
      ts_cprop_set_bool(r, v);
      return true;
    }
  } else if (a->kind == TS_CV_STR && b->kind == TS_CV_STR) {
    c = ts_cprop_strcmp(a, b);
  } else if (a->kind == b->kind && (a->kind == TS_CV_BOOL || a->kind == TS_CV_DEVICE) &&
             (k == TS_K_aten_eq || k == TS_K_aten_ne)) {
    bool same = a->kind == TS_CV_BOOL ? a->i == b->i : a->dev.type == b->dev.type && a->dev.index == b->dev.index;
    c = same ? 0 : 1;
  } else {
    return false;
  }
  bool v = k == TS_K_aten_eq   ? c == 0
           : k == TS_K_aten_ne ? c != 0
           : k == TS_K_aten_lt ? c < 0
           : k == TS_K_aten_le ? c <= 0
           : k == TS_K_aten_gt ? c > 0
                               : c >= 0;
  ts_cprop_set_bool(r, v);
  return true;
}

static bool ts_cprop_logic(ts_kind k, const ts_cval *a, const ts_cval *b, ts_cval *r) {
  if (a->kind != b->kind || (a->kind != TS_CV_BOOL && a->kind != TS_CV_INT))
    return false;
  uint64_t x = (uint64_t)a->i, y = (uint64_t)b->i;
  uint64_t v = k == TS_K_aten___and__ ? x & y : k == TS_K_aten___or__ ? x | y : x ^ y;
  if (a->kind == TS_CV_BOOL)
    ts_cprop_set_bool(r, v != 0);
  else
    ts_cprop_set_int(r, (int64_t)v);
  return true;
}

/* IValue::is for the scalars; false where PyTorch compares identities. */
static bool ts_cprop_is(const ts_cval *a, const ts_cval *b, bool *same) {
  if (a->kind == TS_CV_STR && b->kind == TS_CV_STR)
    return false;
  if (a->kind != b->kind) {
    *same = false;
    return true;
  }
  switch (a->kind) {
  case TS_CV_NONE: *same = true; break;
  case TS_CV_BOOL:
  case TS_CV_INT: *same = a->i == b->i; break;
  case TS_CV_FLOAT: *same = a->f == b->f; break;
  case TS_CV_DEVICE: *same = a->dev.type == b->dev.type && a->dev.index == b->dev.index; break;
  case TS_CV_STR: return false;
  }
  return true;
}

/* A str constant as a C string in buf; false when it is empty, holds a NUL
 * or does not fit (then it is no number the parsers below would accept). */
static bool ts_cprop_cstr(const ts_cval *s, char *buf, size_t cap) {
  if (!s->len || memchr(s->s, 0, s->len) || s->len >= cap)
    return false;
  memcpy(buf, s->s, s->len);
  buf[s->len] = 0;
  return true;
}

/* c10::stoll with the whole string consumed: optional white space and
 * sign, then base-10 digits. */
static bool ts_cprop_parse_int(const ts_cval *s, int64_t *r) {
  char buf[64];
  if (!ts_cprop_cstr(s, buf, sizeof buf))
    return false;
  char *end;
  errno = 0;
  long long v = strtoll(buf, &end, 10);
  if (errno || end == buf || *end)
    return false;
  *r = v;
  return true;
}

/* c10::stod with the whole string consumed */
static bool ts_cprop_parse_float(const ts_cval *s, double *r) {
  char buf[512];
  if (!ts_cprop_cstr(s, buf, sizeof buf))
    return false;
  char *end;
  errno = 0;
  double v = strtod(buf, &end);
  if (errno == ERANGE || end == buf || *end)
    return false;
  *r = v;
  return true;
}

/* ss << IValue, as aten::str does */
static bool ts_cprop_str(ts_cprop *c, const ts_cval *a, ts_cval *r) {
  ts_buf *b = &c->scratch;
  b->len = 0;
  switch (a->kind) {
  case TS_CV_NONE: ts_buf_puts(b, "None"); break;
  case TS_CV_BOOL: ts_buf_puts(b, a->i ? "True" : "False"); break;
  case TS_CV_INT: ts_buf_printf(b, "%lld", (long long)a->i); break;
  case TS_CV_FLOAT: ts_buf_put_double(b, a->f); break;
  case TS_CV_STR: ts_buf_putn(b, a->s ? a->s : "", a->len); break;
  case TS_CV_DEVICE: ts_device_print(b, a->dev); break;
  }
  if (b->failed) {
    c->oom = true;
    return false;
  }
  r->kind = TS_CV_STR;
  r->s = b->data ? b->data : "";
  r->len = b->len;
  return true;
}

static bool ts_cprop_convert(ts_kind k, const ts_cval *a, ts_cval *r) {
  switch (k) {
  case TS_K_aten_Int:
    if (a->kind == TS_CV_INT || a->kind == TS_CV_BOOL) {
      ts_cprop_set_int(r, a->i);
      return true;
    }
    if (a->kind == TS_CV_FLOAT) {
      int64_t v;
      if (!ts_cprop_to_int(a->f, &v))
        return false;
      ts_cprop_set_int(r, v);
      return true;
    }
    if (a->kind == TS_CV_STR) {
      int64_t v;
      if (!ts_cprop_parse_int(a, &v))
        return false;
      ts_cprop_set_int(r, v);
      return true;
    }
    return false;
  case TS_K_aten_Float:
    if (a->kind == TS_CV_INT || a->kind == TS_CV_BOOL) {
      /* Float.int pushes (float)i, Float.Scalar (double)i: fold only
       * where the two agree */
      if ((double)(float)a->i != (double)a->i)
        return false;
      ts_cprop_set_float(r, (double)a->i);
      return true;
    }
    if (a->kind == TS_CV_FLOAT) {
      ts_cprop_set_float(r, a->f);
      return true;
    }
    if (a->kind == TS_CV_STR) {
      double v;
      if (!ts_cprop_parse_float(a, &v))
        return false;
      ts_cprop_set_float(r, v);
      return true;
    }
    return false;
  case TS_K_aten_Bool:
    if (a->kind == TS_CV_INT || a->kind == TS_CV_BOOL) {
      ts_cprop_set_bool(r, a->i != 0);
      return true;
    }
    if (a->kind == TS_CV_FLOAT) {
      ts_cprop_set_bool(r, a->f != 0);
      return true;
    }
    return false;
  default: return false;
  }
}

static bool ts_cprop_round(ts_kind k, const ts_cval *a, ts_cval *r) {
  if (!ts_cprop_is_num(a))
    return false;
  double x = ts_cprop_num(a);
  int64_t v;
  if (!ts_cprop_to_int(k == TS_K_aten_floor ? floor(x) : ceil(x), &v))
    return false;
  ts_cprop_set_int(r, v);
  return true;
}

static bool ts_cprop_minmax(ts_kind k, const ts_cval *a, const ts_cval *b, ts_cval *r) {
  if (!ts_cprop_is_num(a) || !ts_cprop_is_num(b))
    return false;
  if (a->kind == TS_CV_INT && b->kind == TS_CV_INT) {
    ts_cprop_set_int(r, k == TS_K_prim_min ? (a->i < b->i ? a->i : b->i) : (a->i > b->i ? a->i : b->i));
    return true;
  }
  double x = ts_cprop_num(a), y = ts_cprop_num(b);
  ts_cprop_set_float(r, k == TS_K_prim_min ? (x < y ? x : y) : (x > y ? x : y));
  return true;
}

/* __range_length(lo, hi, step): the trip count of range(lo, hi, step) */
static bool ts_cprop_range_length(int64_t lo, int64_t hi, int64_t step, int64_t *r) {
  if (step == 0)
    return false;
  uint64_t span, s;
  if (step > 0 && lo < hi) {
    span = (uint64_t)hi - (uint64_t)lo - 1;
    s = (uint64_t)step;
  } else if (step < 0 && lo > hi) {
    if (step == INT64_MIN)
      return false;
    span = (uint64_t)lo - (uint64_t)hi - 1;
    s = (uint64_t)-step;
  } else {
    *r = 0;
    return true;
  }
  uint64_t q = span / s;
  if (q >= (uint64_t)INT64_MAX)
    return false;
  *r = (int64_t)q + 1;
  return true;
}

/* Evaluates `n` on constant inputs `in` into `out` (one output). False when
 * the op is not known here or would raise. */
static bool ts_cprop_eval(ts_cprop *c, const ts_node *n, const ts_cval *in, ts_cval *out) {
  uint32_t ni = n->ninputs;
  if (n->noutputs != 1)
    return false;
  const ts_type *ot = n->outputs[0]->type;
  switch (n->kind) {
  case TS_K_aten_add:
  case TS_K_aten_sub:
  case TS_K_aten_mul: return ni == 2 && ts_cprop_arith(c, n->kind, &in[0], &in[1], out);
  case TS_K_aten_div:
  case TS_K_aten_floordiv:
  case TS_K_aten_remainder: return ni == 2 && ts_cprop_division(n->kind, &in[0], &in[1], out);
  case TS_K_aten_neg:
    if (ni != 1 || !ts_cprop_is_num(&in[0]))
      return false;
    if (in[0].kind == TS_CV_INT) {
      if (in[0].i == INT64_MIN)
        return false;
      ts_cprop_set_int(out, -in[0].i);
    } else {
      ts_cprop_set_float(out, -in[0].f);
    }
    return true;
  case TS_K_aten_pow: {
    /* pow.int_to_int (an int result) is not folded */
    if (ni != 2 || !ts_cprop_is_num(&in[0]) || !ts_cprop_is_num(&in[1]) || ot->kind == TS_TY_INT)
      return false;
    double x = ts_cprop_num(&in[0]), y = ts_cprop_num(&in[1]);
    if (x == 0 && y < 0)
      return false; /* "0.0 cannot be raised to a negative power" */
    ts_cprop_set_float(out, pow(x, y));
    return true;
  }
  case TS_K_aten_eq:
  case TS_K_aten_ne:
  case TS_K_aten_lt:
  case TS_K_aten_le:
  case TS_K_aten_gt:
  case TS_K_aten_ge: return ni == 2 && ts_cprop_compare(n->kind, &in[0], &in[1], out);
  case TS_K_aten___not__:
    if (ni != 1 || in[0].kind != TS_CV_BOOL)
      return false;
    ts_cprop_set_bool(out, !in[0].i);
    return true;
  case TS_K_aten___and__:
  case TS_K_aten___or__:
  case TS_K_aten___xor__: return ni == 2 && ts_cprop_logic(n->kind, &in[0], &in[1], out);
  case TS_K_aten___is__:
  case TS_K_aten___isnot__: {
    bool same = false;
    if (ni != 2 || !ts_cprop_is(&in[0], &in[1], &same))
      return false;
    ts_cprop_set_bool(out, n->kind == TS_K_aten___is__ ? same : !same);
    return true;
  }
  case TS_K_aten_Int:
  case TS_K_aten_Float:
  case TS_K_aten_Bool: return ni == 1 && ts_cprop_convert(n->kind, &in[0], out);
  case TS_K_aten_str: return ni == 1 && ts_cprop_str(c, &in[0], out);
  case TS_K_aten_len:
    if (ni != 1 || in[0].kind != TS_CV_STR || in[0].len > (size_t)INT64_MAX)
      return false;
    ts_cprop_set_int(out, (int64_t)in[0].len);
    return true;
  case TS_K_aten_floor:
  case TS_K_aten_ceil: return ni == 1 && ts_cprop_round(n->kind, &in[0], out);
  case TS_K_prim_min:
  case TS_K_prim_max: return ni == 2 && ts_cprop_minmax(n->kind, &in[0], &in[1], out);
  case TS_K_aten___range_length: {
    int64_t v;
    if (ni != 3 || in[0].kind != TS_CV_INT || in[1].kind != TS_CV_INT || in[2].kind != TS_CV_INT ||
        !ts_cprop_range_length(in[0].i, in[1].i, in[2].i, &v))
      return false;
    ts_cprop_set_int(out, v);
    return true;
  }
  case TS_K_aten___derive_index: {
    int64_t p, v;
    if (ni != 3 || in[0].kind != TS_CV_INT || in[1].kind != TS_CV_INT || in[2].kind != TS_CV_INT ||
        !ts_cprop_mul(in[0].i, in[2].i, &p) || !ts_cprop_add(in[1].i, p, &v))
      return false;
    ts_cprop_set_int(out, v);
    return true;
  }
  case TS_K_prim_unchecked_cast:
    if (ni != 1)
      return false;
    *out = in[0];
    return true;
  default: return false;
  }
}

/* ConstantPropagator::supportedNode, without an alias database */
static bool ts_cprop_supported(const ts_node *n) {
  switch (n->kind) {
  case TS_K_prim_If:
  case TS_K_prim_Loop:
  case TS_K_prim_Constant:
  case TS_K_prim_Uninitialized:
  case TS_K_prim_Guard:
  case TS_K_prim_unchecked_unwrap_optional:
  case TS_K_OTHER: return false;
  default: break;
  }
  if (n->nblocks || (n->op && (n->op->flags & TS_OPF_SIDE_EFFECT)))
    return false;
  for (uint32_t i = 0; i < n->ninputs; i++)
    if (ts_pass_type_mutable(n->inputs[i]->type))
      return false;
  for (uint32_t i = 0; i < n->noutputs; i++)
    if (ts_pass_type_mutable(n->outputs[i]->type))
      return false;
  return true;
}

static void ts_cprop_node_fold(ts_cprop *c, ts_node *n) {
  enum { MAX_IN = 8 };
  ts_cval in[MAX_IN], out;
  if (n->ninputs > MAX_IN)
    return;
  for (uint32_t i = 0; i < n->ninputs; i++)
    if (!ts_pass_const_get(n->inputs[i], &in[i]))
      return;
  memset(&out, 0, sizeof out);
  if (!ts_cprop_eval(c, n, in, &out))
    return;
  ts_value *v = ts_pass_const_insert(n, &out);
  if (!v) {
    c->oom = true;
    return;
  }
  if (out.kind == TS_CV_NONE)
    ts_value_set_type(v, n->outputs[0]->type);
  ts_value_replace_all_uses(n->outputs[0], v);
  c->changed = true;
}

static void ts_cprop_block(ts_cprop *c, ts_block *b);

static void ts_cprop_blocks(ts_cprop *c, ts_node *n) {
  for (uint32_t i = 0; i < n->nblocks; i++)
    ts_cprop_block(c, n->blocks[i]);
}

/* inlineIf: the taken block's nodes replace the If */
static void ts_cprop_inline_if(ts_cprop *c, ts_node *n, bool cond) {
  ts_block *body = n->blocks[cond ? 0 : 1];
  ts_cprop_block(c, body);
  while (ts_block_first(body) != body->ret)
    ts_node_move_before(ts_block_first(body), n);
  for (uint32_t i = 0; i < n->noutputs; i++)
    ts_value_replace_all_uses(n->outputs[i], ts_block_output(body, i));
  ts_node_destroy(n);
  c->changed = true;
}

/* A copy of constant `k` before `pos` (for list constants, which
 * ts_pass_const_insert does not make). */
static ts_value *ts_cprop_copy_const(ts_node *pos, const ts_node *k) {
  ts_node *r = ts_node_new(pos->graph, TS_K_prim_Constant, 1);
  if (!r)
    return NULL;
  ts_value_set_type(r->outputs[0], k->outputs[0]->type);
  for (const ts_attr *a = k->attrs; a; a = a->next) {
    bool ok;
    switch (a->kind) {
    case TS_ATTR_INT: ok = ts_node_set_i(r, a->name, a->u.i); break;
    case TS_ATTR_FLOAT: ok = ts_node_set_f(r, a->name, a->u.f); break;
    case TS_ATTR_STR: ok = ts_node_set_s(r, a->name, a->u.s, a->len); break;
    case TS_ATTR_INTS: ok = ts_node_set_is(r, a->name, a->u.is, a->len); break;
    case TS_ATTR_FLOATS: ok = ts_node_set_fs(r, a->name, a->u.fs, a->len); break;
    case TS_ATTR_STRS: ok = ts_node_set_ss(r, a->name, a->u.ss, a->len); break;
    case TS_ATTR_TYPE: ok = ts_node_set_ty(r, a->name, a->u.ty); break;
    default: return NULL; /* never equal: not reached */
    }
    if (!ok)
      return NULL;
  }
  ts_node_insert_before(r, pos);
  return r->outputs[0];
}

static void ts_cprop_drop_if_output(ts_node *n, uint32_t i, ts_value *v) {
  ts_value_replace_all_uses(n->outputs[i], v);
  ts_node_remove_output(n, i);
  ts_node_remove_input(n->blocks[0]->ret, i);
  ts_node_remove_input(n->blocks[1]->ret, i);
}

/* removeExtraIfOutputs */
static void ts_cprop_if_outputs(ts_cprop *c, ts_node *n) {
  if (n->nblocks != 2)
    return;
  for (uint32_t i = 0; i < n->noutputs && !c->oom;) {
    ts_value *t = ts_block_output(n->blocks[0], i), *f = ts_block_output(n->blocks[1], i);
    if (t == f) {
      ts_cprop_drop_if_output(n, i, t);
      c->changed = true;
      continue;
    }
    if (ts_node_is(t->node, TS_K_prim_Constant) && ts_node_is(f->node, TS_K_prim_Constant) &&
        t->type->kind != TS_TY_FUNCTION && ts_pass_const_nodes_equal(t->node, f->node)) {
      ts_cval cv;
      ts_value *k = ts_pass_const_get(t, &cv) ? ts_pass_const_insert(n, &cv) : ts_cprop_copy_const(n, t->node);
      if (!k) {
        c->oom = true;
        return;
      }
      ts_cprop_drop_if_output(n, i, k);
      c->changed = true;
      continue;
    }
    i++;
  }
}

/* removeExtraLoopOutputs: carried values the body passes through */
static void ts_cprop_loop_outputs(ts_cprop *c, ts_node *n) {
  ts_block *body = n->blocks[0];
  for (uint32_t i = n->noutputs; i-- > 0;) {
    ts_value *in = ts_block_input(body, i + 1);
    if (in != ts_block_output(body, i + 1))
      continue;
    ts_value *init = n->inputs[i + 2];
    ts_value_replace_all_uses(n->outputs[i], init);
    ts_value_replace_all_uses(in, init);
    ts_node_remove_output(n, i);
    ts_node_remove_input(n, i + 2);
    ts_node_remove_input(body->ret, i + 1);
    ts_node_remove_output(body->param, i + 1);
    c->changed = true;
  }
}

static bool ts_cprop_loop_will_not_run(const ts_node *n) {
  int64_t trips = 1;
  bool cond = true;
  ts_pass_const_int(n->inputs[0], &trips);
  ts_pass_const_bool(n->inputs[1], &cond);
  return !(cond && trips > 0);
}

/* The Loop and If shapes the rewrites rely on (a verified graph has them). */
static bool ts_cprop_loop_ok(const ts_node *n) {
  if (!ts_node_is(n, TS_K_prim_Loop) || n->nblocks != 1 || n->ninputs != n->noutputs + 2)
    return false;
  const ts_block *b = n->blocks[0];
  return ts_block_ninputs(b) == n->noutputs + 1 && ts_block_noutputs(b) == n->noutputs + 1;
}

static bool ts_cprop_if_ok(const ts_node *n) {
  return ts_node_is(n, TS_K_prim_If) && n->nblocks == 2 && n->ninputs == 1 &&
         ts_block_noutputs(n->blocks[0]) == n->noutputs && ts_block_noutputs(n->blocks[1]) == n->noutputs &&
         ts_block_ninputs(n->blocks[0]) == 0 && ts_block_ninputs(n->blocks[1]) == 0;
}

static void ts_cprop_node(ts_cprop *c, ts_node *n) {
  bool constant_inputs = true;
  for (uint32_t i = 0; i < n->ninputs; i++)
    constant_inputs &= ts_node_is(n->inputs[i]->node, TS_K_prim_Constant);
  bool cond;
  if (ts_cprop_if_ok(n)) {
    if (constant_inputs && ts_pass_const_bool(n->inputs[0], &cond)) {
      ts_cprop_inline_if(c, n, cond);
    } else {
      ts_cprop_blocks(c, n);
      ts_cprop_if_outputs(c, n);
    }
  } else if (ts_cprop_loop_ok(n)) {
    if (ts_cprop_loop_will_not_run(n)) {
      for (uint32_t i = 0; i < n->noutputs; i++)
        ts_value_replace_all_uses(n->outputs[i], n->inputs[i + 2]);
      ts_node_destroy(n);
      c->changed = true;
    } else {
      ts_cprop_blocks(c, n);
      ts_cprop_loop_outputs(c, n);
    }
  } else if (constant_inputs && ts_cprop_supported(n)) {
    ts_cprop_node_fold(c, n);
  } else {
    ts_cprop_blocks(c, n);
  }
}

static void ts_cprop_block(ts_cprop *c, ts_block *b) {
  for (ts_node *n = ts_block_first(b); n != b->ret && !c->oom;) {
    ts_node *next = n->next; /* n may be destroyed */
    ts_cprop_node(c, n);
    n = next;
  }
}

bool ts_pass_constant_prop_immutable(ts_graph *g, ts_diag *d) {
  ts_cprop c = {.g = g};
  ts_cprop_block(&c, g->block);
  ts_buf_free(&c.scratch);
  if (c.oom || !ts_graph_ok(g)) {
    ts_diag_error(d, "constant-prop-immutable: out of memory");
    return false;
  }
  return c.changed ? ts_pass_dce(g, d) : true;
}
