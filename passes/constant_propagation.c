/* passes/constant_propagation.c: torch::jit::ConstantPropagation and
 * ConstantPropagationImmutableTypes (passes/constant_propagation.cpp, the
 * ConstantPropagator with and without an alias database).
 *
 * ConstantPropagation (ts_pass_constant_prop) walks the graph as described
 * below for ImmutableTypes, with PyTorch's supportedNode for the alias-db
 * variant: any node whose inputs are all prim::Constants, outside the skip
 * list (If, Loop, Constant, Uninitialized, Guard, AutogradZero,
 * unchecked_unwrap_optional, unknown kinds), without blocks, side effects
 * (TS_OPF_SIDE_EFFECT, a "!" argument) or randomness (rand*, bernoulli,
 * normal, ..., a Generator argument, dropout unless train is a constant
 * False; also empty*, whose bytes are garbage), and none of whose inputs
 * and outputs has a writer (ts_alias_has_writers; the db is built on first
 * need and again after an If or a loop is removed; this pass's own
 * constants have none), with at least one output in use, is evaluated:
 *   - nodes of immutable scalars by the evaluator below, whose rules on
 *     what not to fold (raising, undefined behaviour) hold here too;
 *   - prim::ListConstruct / prim::ListUnpack as the interpreter does them;
 *   - anything else by the runtime kernel of its schema (vararg schemas
 *     are skipped, as PyTorch does), on copies of the constants' values,
 *     in a private ts_rt_ctx with one thread. A kernel that fails or
 *     warns leaves the node: the run reports it.
 * Each output then becomes a new prim::Constant before the node
 * (ts_pass_const_insert_iv, bytes copied into the graph's arena): tensors
 * with their refined type, lists with the output's declared type, None
 * with the output's type. Outputs stay when the value cannot be a constant
 * (tuples, dicts, objects: PyTorch makes tuple constants, tsaot cannot), is
 * a tensor requiring grad, does not fit the output's type (an int for a
 * declared float is converted), or is a tensor (or list of them) of more
 * than 1024 elements and more elements than the node's constant tensor
 * inputs hold together: frozen-parameter arithmetic (t(w), w * scale)
 * folds whatever its size, zeros([1000, 1000]) or an expand of a small
 * constant does not (PyTorch folds those too, and keeps the bytes). So
 * that a hostile graph cannot make the compiler allocate without bound,
 * the kernel does not even run when an int list input (a size) multiplies
 * out beyond that limit, nor for tensors made from scalars alone except
 * by zeros, ones, full, tensor and NumToTensor (arange, eye stay).
 *
 * ConstantPropagationImmutableTypes (ts_pass_constant_prop_immutable)
 * walks every block in order:
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
 * PyTorch evaluates the node with its interpreter; here the evaluator
 * below knows the scalar ops that fold in practice, with PyTorch's kernels'
 * semantics (register_prim_ops.cpp), and ImmutableTypes leaves anything
 * else as it is (ConstantPropagation runs the kernel):
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
 * (and TupleIndex/TupleUnpack of a tuple constant) are not folded, in
 * either pass (lower-simple-tuples reads through TupleConstructs). */
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
  bool unknown;   /* ts_cprop_eval met an op it has no evaluator for */
  /* ConstantPropagation (not ImmutableTypes): kernels and the alias db */
  bool full;
  bool kernels; /* ts_rt_kernels_init succeeded */
  ts_rt_ctx ctx;
  ts_alias_db *db;        /* built on first need; NULL: not built */
  bool db_failed;         /* the db could not be built: mutable values count as written */
  uint32_t db_watermark;  /* values with ids from here on are newer than the db */
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
  default: c->unknown = true; return false;
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

/* ---- ConstantPropagation: any op with a kernel ---- */

/* Tensor results of at most this many elements are always kept as
 * constants; larger ones only when the node's constant tensor inputs hold
 * at least as many elements (frozen-parameter arithmetic such as t(weight)
 * or weight * scale), so that folding never turns a small graph into a
 * large one (zeros([1000, 1000]), expand of a scalar). */
enum { TS_CPROP_SMALL_TENSOR = 1024 };

/* Node::isNondeterministic, and ops whose result is uninitialised memory:
 * random ops (TS_OPF_RANDOM, or named when the table lacks them), dropout
 * unless train is a constant False, empty*. */
static bool ts_cprop_nondeterministic(const ts_node *n) {
  static const char *const names[] = {
      "aten::rand",        "aten::rand_like", "aten::randn",    "aten::randn_like",   "aten::randint",
      "aten::randint_like", "aten::randperm", "aten::bernoulli", "aten::multinomial", "aten::normal",
      "aten::poisson",     "aten::binomial",  "aten::rrelu",    "aten::rrelu_with_noise", "aten::_standard_gamma",
      "aten::native_dropout", "aten::_fused_dropout", "aten::empty", "aten::empty_like", "aten::empty_strided",
      "aten::new_empty",   "aten::new_empty_strided",
  };
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strcmp(n->kind_name, names[i]) == 0)
      return true;
  if (strstr(n->kind_name, "dropout")) {
    /* dropout(input, p, train): deterministic only when train is False */
    bool train = true;
    return !(n->ninputs == 3 && ts_pass_const_bool(n->inputs[2], &train) && !train);
  }
  /* ops.def's random kinds, and every kind with a Generator argument */
  return n->op && (n->op->flags & TS_OPF_RANDOM);
}

/* A schema argument the op writes to ("Tensor(a!)"). */
static bool ts_cprop_schema_writes(const ts_schema *s) {
  for (uint32_t i = 0; s && i < s->nargs; i++)
    if (s->args[i].alias && s->args[i].alias->is_write)
      return true;
  return false;
}

/* AliasDb::hasWriters for one value. Immutable values have none; values
 * made after the db was built are this pass's constants, which replaced
 * outputs that had none. */
static bool ts_cprop_written(ts_cprop *c, const ts_value *v) {
  if (!ts_pass_type_mutable(v->type))
    return false;
  if (c->db_failed)
    return true;
  if (!c->db) {
    ts_diag d = {0}; /* a db that cannot be built means "may be written" */
    c->db_watermark = c->g->next_value_id;
    c->db = ts_alias_db_new(c->g, &d);
    ts_diag_free(&d);
    if (!c->db) {
      c->db_failed = true;
      return true;
    }
  }
  if (v->id >= c->db_watermark)
    return false;
  return ts_alias_has_writers(c->db, v);
}

/* The db describes the graph as it was; after If inlining or loop removal
 * it is built again when next needed. */
static void ts_cprop_db_invalidate(ts_cprop *c) {
  if (c->db)
    ts_alias_db_free(c->db);
  c->db = NULL;
}

/* ConstantPropagator::supportedNode with an alias db: the skip list, no
 * blocks, no side effects, deterministic, and nothing writes to its inputs
 * or outputs. */
static bool ts_cprop_supported_full(ts_cprop *c, const ts_node *n) {
  switch (n->kind) {
  case TS_K_prim_If:
  case TS_K_prim_Loop:
  case TS_K_prim_Constant:
  case TS_K_prim_Uninitialized:
  case TS_K_prim_Guard:
  case TS_K_prim_AutogradZero:
  case TS_K_prim_unchecked_unwrap_optional:
  case TS_K_OTHER: return false;
  default: break;
  }
  if (n->nblocks || (n->op && (n->op->flags & TS_OPF_SIDE_EFFECT)))
    return false;
  bool used = false;
  for (uint32_t i = 0; i < n->noutputs; i++)
    used = used || n->outputs[i]->nuses;
  if (!used)
    return false; /* dead code elimination removes it */
  const ts_schema *s = ts_node_schema(n);
  if (ts_cprop_schema_writes(s) || ts_cprop_nondeterministic(n))
    return false;
  for (uint32_t i = 0; i < n->ninputs; i++)
    if (ts_cprop_written(c, n->inputs[i]))
      return false;
  for (uint32_t i = 0; i < n->noutputs; i++)
    if (ts_cprop_written(c, n->outputs[i]))
      return false;
  return true;
}

/* Elements of the tensors in v (a tensor or a list of them). */
static int64_t ts_cprop_tensor_numel(ts_iv v) {
  if (v.tag == TS_IV_TENSOR)
    return ts_rt_tensor_numel(v.u.t);
  int64_t n = 0;
  if (v.tag == TS_IV_LIST)
    for (uint32_t i = 0; i < v.u.l->n; i++)
      if (v.u.l->items[i].tag == TS_IV_TENSOR)
        n += ts_rt_tensor_numel(v.u.l->items[i].u.t);
  return n;
}

/* Whether a result may become a constant: no gradient-requiring tensor,
 * tensors within the size rule above. */
static bool ts_cprop_keep_result(ts_iv v, int64_t input_numel) {
  if (v.tag == TS_IV_TENSOR && v.u.t->requires_grad)
    return false;
  if (v.tag == TS_IV_LIST)
    for (uint32_t i = 0; i < v.u.l->n; i++)
      if (v.u.l->items[i].tag == TS_IV_TENSOR && v.u.l->items[i].u.t->requires_grad)
        return false;
  int64_t numel = ts_cprop_tensor_numel(v);
  return numel <= TS_CPROP_SMALL_TENSOR || numel <= input_numel;
}

/* Whether running n on `in` allocates at most about what the size rule
 * keeps, judged before the kernel runs (a hostile graph must not make the
 * compiler allocate zeros([100000, 100000])): every int list among the
 * inputs (sizes, mostly) has a product of its positive entries within
 * max(1024, input_numel), and a tensor made from no tensor comes from an
 * op whose size is such a list (zeros, ones, full, tensor, NumToTensor;
 * not arange or eye, sized by scalars). */
static bool ts_cprop_bounded(const ts_node *n, const ts_iv *in, int64_t input_numel) {
  int64_t limit = input_numel > TS_CPROP_SMALL_TENSOR ? input_numel : TS_CPROP_SMALL_TENSOR;
  bool tensor_in = false;
  for (uint32_t i = 0; i < n->ninputs; i++) {
    if (in[i].tag == TS_IV_TENSOR)
      tensor_in = true;
    if (in[i].tag != TS_IV_LIST)
      continue;
    int64_t prod = 1;
    for (uint32_t k = 0; k < in[i].u.l->n; k++) {
      ts_iv e = in[i].u.l->items[k];
      tensor_in = tensor_in || e.tag == TS_IV_TENSOR;
      if (e.tag != TS_IV_INT || e.u.i <= 0)
        continue;
      if (e.u.i > limit / prod)
        return false;
      prod *= e.u.i;
    }
  }
  if (tensor_in)
    return true;
  bool tensor_out = false;
  for (uint32_t i = 0; i < n->noutputs; i++)
    tensor_out = tensor_out || n->outputs[i]->type->kind == TS_TY_TENSOR;
  switch (n->kind) {
  case TS_K_aten_zeros:
  case TS_K_aten_ones:
  case TS_K_aten_full:
  case TS_K_aten_tensor:
  case TS_K_prim_NumToTensor: return true;
  default: return !tensor_out;
  }
}

/* The node's outputs, computed from `in` (the inputs' values): by the
 * interpreter's own rule for ListConstruct/ListUnpack, else the kernel of
 * the node's schema. False (nothing in out) when the op cannot be run here
 * or fails: the node stays and fails at run time with the right message. */
static bool ts_cprop_run(ts_cprop *c, ts_node *n, const ts_iv *in, ts_iv *out) {
  ts_rt_ctx *ctx = &c->ctx;
  if (ts_node_is(n, TS_K_prim_ListConstruct)) {
    const ts_type *t = n->noutputs == 1 ? n->outputs[0]->type : NULL;
    if (!t || t->kind != TS_TY_LIST)
      return false;
    ts_rt_list *l = ts_rt_list_new(ctx, t->elems[0], n->ninputs);
    if (!l)
      return false;
    for (uint32_t k = 0; k < n->ninputs; k++) {
      ts_iv_retain(in[k]);
      if (!ts_rt_list_append(ctx, l, in[k])) {
        ts_iv_release((ts_iv){.u.l = l, .tag = TS_IV_LIST});
        return false;
      }
    }
    out[0] = (ts_iv){.u.l = l, .tag = TS_IV_LIST};
    return true;
  }
  if (ts_node_is(n, TS_K_prim_ListUnpack)) {
    if (n->ninputs != 1 || in[0].tag != TS_IV_LIST || in[0].u.l->n != n->noutputs)
      return false;
    for (uint32_t k = 0; k < n->noutputs; k++) {
      out[k] = in[0].u.l->items[k];
      ts_iv_retain(out[k]);
    }
    return true;
  }
  if (!c->kernels)
    return false;
  const ts_schema *s = ts_node_schema(n);
  /* vararg schemas are skipped, as PyTorch does */
  ts_rt_kernel_fn fn = s && !s->vararg && !s->varret ? ts_rt_kernel_for(s) : NULL;
  if (!fn)
    return false;
  size_t printed = ctx->out.len;
  ts_rt_call call = {.in = in, .nin = n->ninputs, .out = out, .nout = n->noutputs, .node = n};
  if (!fn(ctx, &call)) {
    ts_rt_clear_error(ctx);
    return false;
  }
  if (ctx->out.len != printed) {
    /* the kernel warned: that belongs to the run, not to the compiler */
    for (uint32_t k = 0; k < n->noutputs; k++)
      ts_iv_clear(&out[k]);
    ctx->out.len = printed;
    ctx->out.data[printed] = 0;
    return false;
  }
  return true;
}

/* Whether a result can stand for a value of type t: kernels of Scalar-
 * returning ops give whichever number they computed, and a constant of
 * another type than the value's would select other overloads downstream.
 * An int where a float is declared is converted; other mismatches are not
 * folded. */
static bool ts_cprop_fits(ts_iv *v, const ts_type *t) {
  if (t->kind == TS_TY_OPTIONAL) {
    if (v->tag == TS_IV_NONE)
      return true;
    t = t->elems[0];
  }
  switch (t->kind) {
  case TS_TY_FLOAT:
    if (v->tag == TS_IV_INT)
      *v = ts_iv_double((double)v->u.i);
    return v->tag == TS_IV_DOUBLE;
  case TS_TY_INT: return v->tag == TS_IV_INT;
  case TS_TY_BOOL: return v->tag == TS_IV_BOOL;
  case TS_TY_STR: return v->tag == TS_IV_STR;
  case TS_TY_DEVICE: return v->tag == TS_IV_DEVICE;
  case TS_TY_TENSOR: return v->tag == TS_IV_TENSOR;
  case TS_TY_LIST: return v->tag == TS_IV_LIST;
  case TS_TY_NONE: return v->tag == TS_IV_NONE;
  default: return true; /* Scalar, Any, unions: the value's own type */
  }
}

enum { TS_CPROP_MAX_IO = 32 };

/* propagateNode: runs n on its constant inputs and replaces each output
 * that can be a constant by one. */
static void ts_cprop_fold_full(ts_cprop *c, ts_node *n) {
  ts_iv in[TS_CPROP_MAX_IO], out[TS_CPROP_MAX_IO];
  if (n->ninputs > TS_CPROP_MAX_IO || n->noutputs > TS_CPROP_MAX_IO)
    return;
  uint32_t got = 0;
  int64_t input_numel = 0;
  for (; got < n->ninputs; got++) {
    /* the same value twice is one object (aten::__is__ compares them) */
    uint32_t j = 0;
    while (j < got && n->inputs[j] != n->inputs[got])
      j++;
    if (j < got) {
      in[got] = in[j];
      ts_iv_retain(in[got]);
      continue;
    }
    if (!ts_pass_const_to_iv(&c->ctx, n->inputs[got], &in[got]))
      break;
    input_numel += ts_cprop_tensor_numel(in[got]);
  }
  bool ran = got == n->ninputs && ts_cprop_bounded(n, in, input_numel) && ts_cprop_run(c, n, in, out);
  for (uint32_t i = 0; i < got; i++)
    ts_iv_release(in[i]);
  ts_rt_clear_error(&c->ctx);
  if (!ran)
    return;
  for (uint32_t i = 0; i < n->noutputs; i++) {
    ts_value *o = n->outputs[i];
    if (!c->oom && o->nuses && ts_cprop_fits(&out[i], o->type) && ts_cprop_keep_result(out[i], input_numel)) {
      /* lists keep their declared type (an empty list's element type is
       * not in its value); None keeps the output's type, as PyTorch does */
      const ts_type *ty = out[i].tag == TS_IV_NONE || (out[i].tag == TS_IV_LIST && o->type->kind == TS_TY_LIST)
                              ? o->type
                              : NULL;
      ts_value *k = ts_pass_const_insert_iv(n, &out[i], ty, false);
      if (k) {
        ts_value_replace_all_uses(o, k);
        c->changed = true;
      } else if (!ts_graph_ok(c->g)) {
        c->oom = true;
      }
      /* otherwise not a constant here (a tuple, a dict): the output stays */
    }
    ts_iv_release(out[i]);
  }
}

/* Immutable scalars first with the evaluator above (its rules on what not
 * to fold hold here too), then anything else with a kernel. */
static void ts_cprop_fold(ts_cprop *c, ts_node *n) {
  bool scalar = true;
  for (uint32_t i = 0; i < n->ninputs; i++)
    scalar = scalar && !ts_pass_type_mutable(n->inputs[i]->type);
  for (uint32_t i = 0; i < n->noutputs; i++)
    scalar = scalar && !ts_pass_type_mutable(n->outputs[i]->type);
  if (scalar && n->noutputs == 1) {
    c->unknown = false;
    bool before = c->changed;
    c->changed = false;
    ts_cprop_node_fold(c, n);
    bool folded = c->changed;
    c->changed = before || folded;
    if (folded || !c->unknown || c->oom)
      return;
  }
  ts_cprop_fold_full(c, n);
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
  ts_cprop_db_invalidate(c);
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
      ts_cprop_db_invalidate(c);
    } else {
      ts_cprop_blocks(c, n);
      ts_cprop_loop_outputs(c, n);
    }
  } else if (c->full) {
    if (constant_inputs && ts_cprop_supported_full(c, n))
      ts_cprop_fold(c, n);
    else
      ts_cprop_blocks(c, n);
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

bool ts_pass_constant_prop(ts_graph *g, ts_diag *d) {
  ts_cprop c = {.g = g, .full = true};
  c.kernels = ts_rt_kernels_init(NULL);
  /* ts_rt_ctx_init would also set OpenBLAS's thread count for the whole
   * process; a pass must not change what later runs get */
  c.ctx.nthreads = 1;
  ts_cprop_block(&c, g->block);
  ts_buf_free(&c.scratch);
  ts_cprop_db_invalidate(&c);
  ts_rt_ctx_free(&c.ctx);
  if (c.oom || !ts_graph_ok(g)) {
    ts_diag_error(d, "constprop: out of memory");
    return false;
  }
  return c.changed ? ts_pass_dce(g, d) : true;
}
