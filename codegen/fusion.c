/* codegen/fusion.c: a prim::FusionGroup (passes/fuse.c) as one native
 * kernel, `void NAME(const ts_cg_kargs *a, int64_t begin, int64_t end)`.
 *
 * Each node of the group's Subgraph is planned first (its op, the dtype it
 * computes in, its parameters), with the checks of the runtime's kernel for
 * it (runtime/kernels/pointwise.c); a group with anything the table lacks,
 * or that the interpreter would refuse with an error, is not compiled and
 * the caller runs it in the interpreter. Then the loop body is emitted,
 * node by node, as the runtime computes: operands are cast to the op's
 * compute dtype (PyTorch's result_type over the IR types: tensor ranks
 * decide dim/zero-dim, scalars are "wrapped numbers"), computed in float
 * for float32, double for float64 and int64 for the integer dtypes and
 * bool, and the result is cast to the op's output dtype before the next
 * node reads it, so narrow integers wrap where the interpreter's do.
 * Dtypes: float32, float64, int64, int32, int16, int8, uint8 and bool.
 * float32 transcendentals come from codegen/math.c (a few ulp, vectorised);
 * tan, asin, acos, atan, sinh, cosh and atan2 call the C library (exact, not
 * vectorised); the special functions (ops.def's PW_SP: digamma, erfinv,
 * the Bessel family, ...) call runtime/kernels/special.c's by name, in
 * double (the runtime is linked into every generated object; on NVPTX the
 * group runs in the interpreter).
 *
 * Two loops: with kargs->contig every tensor operand is contiguous with the
 * output's shape and [begin, end) counts elements; otherwise it counts rows
 * and each row's operand offsets come from the row index and the strides,
 * the inner loop versioned on every varying operand having stride 1 (the
 * vectoriser's case; operands broadcast along the last dimension, known
 * from the types, are loaded once per row). The loops carry
 * llvm.loop.parallel_accesses: an iteration reads its operands and then
 * writes its outputs at its own index only, even when the memory plan gives
 * an output the buffer of a same-shape input, so LLVM needs no runtime
 * overlap checks (which would fail, and fall back to scalar code, for
 * exactly that in-place case).
 *
 * The GPU form (ts_cg_fusion_kernel_gpu, for nvptx.c) shares the planning
 * and the element lowering; only the signature (one parameter per operand,
 * scalars by value), the operands' prologue and the loop differ: a
 * grid-stride loop over the output's elements, each tensor contiguous in
 * its own sizes, broadcast operands indexed through the output's sizes.
 *
 * Less than the interpreter (the group then runs there): float16, bfloat16
 * and complex dtypes; integer division, remainder and fmod (their
 * ZeroDivisionError); integer pow with a non-constant exponent; integer
 * masks of masked_fill; non-constant op parameters (alpha, slopes, ...);
 * aten::cat and prim::ConstantChunk inside a group; outputs of different
 * sizes. Where PyTorch's CPU kernels differ from a literal formula, they are
 * followed: pow by a constant 2, 3, -2, 0.5, -0.5 or -1 is x*x, x*x*x,
 * 1/(x*x), sqrt, rsqrt and 1/x as in PowKernel.cpp (the interpreter calls
 * pow). gelu is math.c's (in float, within 4 ulp of the exact value):
 * PyTorch's float formula
 * x * 0.5 * (1 + erf(x / sqrt(2))) cancels below x = -2, where the two
 * differ by up to ~1e-7 absolutely (the kernel is the accurate one). */
#include "codegen.h"
#include "shape_rules.h"
#include "passes.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/DebugInfo.h>
#include <llvm-c/IRReader.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most dimensions a kernel handles (the runtime's TS_RT_MAX_DIMS). */
#define FZ_MAXDIM 64

/* ------------------------------------------------------------------ ops */

/* The ops are ir/ops.def's pointwise rows (ts_pw_of_kind, ts_pw_get): a
 * node's kind gives its row, the row its layout (how the node's inputs are
 * read), its dtype rule and its formula, which fz_emit_formula expands
 * into LLVM. */
static unsigned fz_rule(ts_pw_op op) { return ts_pw_get(op)->rule; }

/* --------------------------------------------------------------- values */

enum { FZ_V_OTHER, FZ_V_TENSOR, FZ_V_SCALAR, FZ_V_NONE, FZ_V_STR };

/* What planning knows about a value of the subgraph. */
typedef struct fz_vi {
  uint8_t cls;  /* FZ_V_* */
  int8_t dt;    /* tensors: their dtype; scalars: int64, float64 or bool */
  int32_t rank; /* tensors */
  bool cst;     /* a prim::Constant: c holds it */
  ts_cval c;
} fz_vi;

static bool fz_dt_float(ts_dtype dt) { return dt == TS_DT_FLOAT32 || dt == TS_DT_FLOAT64; }

/* The dtypes kernels compute on (no float16, bfloat16, complex). */
static bool fz_dt_ok(ts_dtype dt) {
  switch (dt) {
  case TS_DT_FLOAT32: case TS_DT_FLOAT64: case TS_DT_INT64: case TS_DT_INT32: case TS_DT_INT16:
  case TS_DT_INT8: case TS_DT_UINT8: case TS_DT_BOOL:
    return true;
  default:
    return false;
  }
}

static bool fz_dt_unsigned(ts_dtype dt) { return dt == TS_DT_UINT8 || dt == TS_DT_BOOL; }

static const char *fz_dt_name(ts_dtype dt) {
  const char *s = ts_dtype_name(dt);
  return s ? s : "Undefined";
}

/* A tensor type with dtype and every size known. */
static bool fz_tensor_complete(const ts_type *t) {
  if (!t || t->kind != TS_TY_TENSOR || !t->tensor)
    return false;
  const ts_tensor_info *ti = t->tensor;
  if (ti->dtype == TS_DT_NONE || ti->rank < 0 || ti->rank > FZ_MAXDIM || (ti->rank > 0 && !ti->sizes))
    return false;
  for (int32_t i = 0; i < ti->rank; i++)
    if (ti->sizes[i] < 0)
      return false;
  return true;
}

static fz_vi fz_info(const ts_value *v) {
  fz_vi r;
  memset(&r, 0, sizeof r);
  r.cls = FZ_V_OTHER;
  r.dt = TS_DT_NONE;
  const ts_type *t = v->type;
  if (ts_pass_const_get(v, &r.c)) {
    r.cst = true;
    switch (r.c.kind) {
    case TS_CV_NONE: r.cls = FZ_V_NONE; break;
    case TS_CV_STR: r.cls = FZ_V_STR; break;
    case TS_CV_BOOL: r.cls = FZ_V_SCALAR, r.dt = TS_DT_BOOL; break;
    case TS_CV_INT: r.cls = FZ_V_SCALAR, r.dt = TS_DT_INT64; break;
    case TS_CV_FLOAT: r.cls = FZ_V_SCALAR, r.dt = TS_DT_FLOAT64; break;
    default: r.cst = false; break;
    }
    return r;
  }
  if (!t)
    return r;
  if (t->kind == TS_TY_TENSOR) {
    if (fz_tensor_complete(t)) {
      r.cls = FZ_V_TENSOR;
      r.dt = t->tensor->dtype;
      r.rank = t->tensor->rank;
    }
  } else if (t->kind == TS_TY_INT) {
    r.cls = FZ_V_SCALAR, r.dt = TS_DT_INT64;
  } else if (t->kind == TS_TY_FLOAT) {
    r.cls = FZ_V_SCALAR, r.dt = TS_DT_FLOAT64;
  } else if (t->kind == TS_TY_BOOL) {
    r.cls = FZ_V_SCALAR, r.dt = TS_DT_BOOL;
  }
  return r;
}

/* A constant scalar as the runtime's kernels read a Scalar parameter. */
static bool fz_cst_double(const fz_vi *v, double *out) {
  if (!v->cst || v->cls != FZ_V_SCALAR)
    return false;
  *out = v->c.kind == TS_CV_FLOAT ? v->c.f : (double)v->c.i;
  return true;
}

/* float -> int64 as x86's conversion does out of range (pointwise.c's pw_d2i). */
static int64_t fz_d2i(double v) {
  if (!(v > -9223372036854775808.0 && v < 9223372036854775808.0))
    return INT64_MIN;
  return (int64_t)v;
}

/* ------------------------------------------------------------ result type */

/* PyTorch's result_type (ir/promote.c): tensor ranks decide dimensioned or
 * zero-dim, scalars are wrapped numbers. */
static ts_dtype fz_result_type(const fz_vi *const *ops, int n) {
  ts_result_state st = TS_RESULT_STATE_INIT;
  for (int k = 0; k < n; k++) {
    const fz_vi *v = ops[k];
    if (v->cls == FZ_V_TENSOR)
      ts_result_add(&st, (ts_dtype)v->dt, v->rank > 0 ? TS_RESULT_DIM : TS_RESULT_ZERO_DIM);
    else if (v->cls == FZ_V_SCALAR)
      ts_result_add(&st, (ts_dtype)v->dt, TS_RESULT_WRAPPED);
  }
  ts_dtype r = ts_result_type(&st);
  return r == TS_DT_NONE ? TS_DT_FLOAT32 : r;
}

/* ---------------------------------------------------------------- plans */

/* where: masked_fill's form (its value cast to self's dtype as a copy). */
enum { FZ_WHERE_FILL = 1 };

/* pow by a constant exponent (PowKernel.cpp's specialisations). */
enum { FZ_POW_ANY, FZ_POW_0, FZ_POW_1, FZ_POW_2, FZ_POW_3, FZ_POW_M2, FZ_POW_HALF, FZ_POW_MHALF, FZ_POW_M1 };

/* One node, decided: what the emitter needs and nothing it must check. */
typedef struct fz_plan {
  uint8_t op;      /* ts_pw_op */
  uint8_t variant; /* pow: FZ_POW_*; where: FZ_WHERE_FILL or 0 */
  int8_t cdt;      /* compute dtype (type_as: the source's) */
  int8_t odt;      /* output dtype */
  uint8_t nops;
  const ts_value *ops[3];
  double pd[3];   /* parameters as doubles (cast to a float compute dtype) */
  int64_t pi[3];  /* the same for integer compute dtypes */
} fz_plan;

/* Planning state: the node and where reasons go. */
typedef struct fz_pl {
  const ts_node *n;
  ts_diag *d;
} fz_pl;

/* Not lowered: "aten::op: " then msg, a and b (either may be NULL). */
static bool fz_refuse(fz_pl *P, const char *msg, const char *a, const char *b) {
  ts_diag_error(P->d, "%s: %s%s%s", P->n->kind_name ? P->n->kind_name : "?", msg, a ? a : "", b ? b : "");
  return false;
}

/* The dtype check of op's rule on dtype dt (pointwise.c's pw_check_dtype);
 * a refusal there is an error at run time, which the interpreter raises. */
static bool fz_check_dtype(fz_pl *P, ts_pw_op op, ts_dtype dt) {
  unsigned f = fz_rule(op);
  bool bad = ((f & TS_PWR_NOINT) && !fz_dt_float(dt)) || ((f & TS_PWR_NOBOOL) && dt == TS_DT_BOOL) ||
             ((f & TS_PWR_INTONLY) && fz_dt_float(dt));
  if (bad) {
    ts_diag_error(P->d, "%s: \"%s\" not implemented for '%s' (left to the interpreter, which raises it)",
                  P->n->kind_name, ts_pw_get(op)->kname, fz_dt_name(dt));
    return false;
  }
  if ((f & TS_PWR_NOFUSE_INT) && !fz_dt_float(dt)) {
    ts_diag_error(P->d, "%s: no lowering for integer %s (ZeroDivisionError is the interpreter's)", P->n->kind_name,
                  ts_pw_get(op)->kname);
    return false;
  }
  if (f & TS_PWR_NOFUSE)
    return fz_refuse(P, "no lowering for ", P->n->kind_name, NULL);
  return true;
}

/* pw_run: the compute dtype (given, or the operands' result type), its
 * checks, promotion, the output dtype. */
static bool fz_finish(fz_pl *P, fz_plan *p, ts_pw_op op, ts_dtype cdt, const fz_vi *const *vi) {
  if (cdt == TS_DT_NONE)
    cdt = fz_result_type(vi, p->nops);
  if (!fz_dt_ok(cdt))
    return fz_refuse(P, "no lowering for dtype ", fz_dt_name(cdt), NULL);
  ts_dtype kdt = cdt;
  unsigned f = fz_rule(op);
  if ((f & TS_PWR_PROMOTE) && !fz_dt_float(cdt))
    cdt = TS_DT_FLOAT32;
  if (f & TS_PWR_DOUBLE)
    cdt = TS_DT_FLOAT64;
  if (!fz_check_dtype(P, op, kdt))
    return false;
  p->op = (uint8_t)op;
  p->cdt = (int8_t)cdt;
  p->odt = (int8_t)((f & TS_PWR_BOOLOUT) ? TS_DT_BOOL : cdt);
  return true;
}

static void fz_par3(fz_plan *p, double a, double b, double c) {
  p->pd[0] = a, p->pd[1] = b, p->pd[2] = c;
  for (int k = 0; k < 3; k++)
    p->pi[k] = fz_d2i(p->pd[k]);
}

/* Layouts UNARY, GELU, ROUND. */
static bool fz_plan_unary(fz_pl *P, fz_plan *p, ts_pw_op op, const fz_vi *vin) {
  const ts_node *n = P->n;
  const ts_schema *s = ts_node_schema(n);
  ts_pw_layout layout = (ts_pw_layout)ts_pw_get(op)->layout;
  if (vin[0].cls != FZ_V_TENSOR)
    return fz_refuse(P, "no lowering for this overload", NULL, NULL);
  bool dec = layout == TS_PWL_ROUND && s && strcmp(s->overload, "decimals") == 0;
  if (s && s->overload[0] && !dec)
    return fz_refuse(P, "no lowering for overload ", s->overload, NULL);
  p->nops = 1;
  p->ops[0] = n->inputs[0];
  double par[3] = {0, 0, 0};
  if (layout == TS_PWL_GELU) {
    if (n->ninputs < 2 || vin[1].cls != FZ_V_STR)
      return fz_refuse(P, "approximate is not a constant string", NULL, NULL);
    if (vin[1].c.len == 4 && memcmp(vin[1].c.s, "tanh", 4) == 0)
      op = TS_PW_gelu_tanh;
    else if (!(vin[1].c.len == 4 && memcmp(vin[1].c.s, "none", 4) == 0))
      return fz_refuse(P, "approximate argument must be either none or tanh", NULL, NULL);
  } else if (dec) {
    op = TS_PW_round_decimals;
    if (n->ninputs < 2 || !vin[1].cst || vin[1].cls != FZ_V_SCALAR || vin[1].dt == TS_DT_FLOAT64)
      return fz_refuse(P, "decimals is not a constant int", NULL, NULL);
    int64_t d = vin[1].c.i;
    /* p0 = 10^|decimals| (rounded to the compute dtype), p1 its sign */
    par[0] = pow(10.0, (double)(d < 0 ? -d : d));
    par[1] = d < 0 ? -1 : 1;
  } else {
    for (uint32_t k = 1; k < n->ninputs && k < 4; k++) {
      if (vin[k].cls == FZ_V_NONE) /* an optional parameter not given: NaN, as pointwise.c's */
        par[k - 1] = NAN;
      else if (!fz_cst_double(&vin[k], &par[k - 1]))
        return fz_refuse(P, "no lowering for a non-constant parameter", NULL, NULL);
    }
  }
  if (op == TS_PW_mvlgamma && (par[0] < 1 || vin[0].dt == TS_DT_BOOL || par[0] > TS_PW_MVLGAMMA_MAX_P))
    return fz_refuse(P, "mvlgamma's checks fail (left to the interpreter)", NULL, NULL);
  fz_par3(p, par[0], par[1], par[2]);
  unsigned f = fz_rule(op);
  ts_dtype dt = (ts_dtype)vin[0].dt, cdt = TS_DT_NONE;
  if (op == TS_PW_neg && dt == TS_DT_BOOL)
    return fz_refuse(P, "negation of a bool tensor is an error (left to the interpreter)", NULL, NULL);
  if (op == TS_PW_round_decimals && !fz_dt_float(dt))
    return fz_refuse(P, "round with decimals on an integer dtype is an error (left to the interpreter)", NULL, NULL);
  if ((f & TS_PWR_BOOL_INT64) && dt == TS_DT_BOOL)
    cdt = TS_DT_INT64;
  if (f & TS_PWR_SELF) {
    if (!fz_check_dtype(P, op, dt))
      return false;
    if (op == TS_PW_hardtanh && dt == TS_DT_UINT8 && (p->pi[0] < 0 || p->pi[1] < 0))
      return fz_refuse(P, "hardtanh on an unsigned type with negative limits is an error", NULL, NULL);
    cdt = dt;
  }
  const fz_vi *ops[1] = {&vin[0]};
  return fz_finish(P, p, op, cdt, ops);
}

/* The exponent's specialisation, when it is a constant number. */
static uint8_t fz_pow_variant(const fz_vi *e) {
  double x;
  if (!fz_cst_double(e, &x))
    return FZ_POW_ANY;
  if (x == 0) return FZ_POW_0;
  if (x == 1) return FZ_POW_1;
  if (x == 2) return FZ_POW_2;
  if (x == 3) return FZ_POW_3;
  if (x == -2) return FZ_POW_M2;
  if (x == 0.5) return FZ_POW_HALF;
  if (x == -0.5) return FZ_POW_MHALF;
  if (x == -1) return FZ_POW_M1;
  return FZ_POW_ANY;
}

/* Layouts BINARY, ALPHA, DIV. */
static bool fz_plan_binary(fz_pl *P, fz_plan *p, ts_pw_op op, const fz_vi *vin) {
  const ts_node *n = P->n;
  const ts_schema *s = ts_node_schema(n);
  ts_pw_layout layout = (ts_pw_layout)ts_pw_get(op)->layout;
  if (!s || n->ninputs < 2)
    return fz_refuse(P, "no lowering for this overload", NULL, NULL);
  const fz_vi *a = &vin[0], *b = &vin[1];
  if ((a->cls != FZ_V_TENSOR && a->cls != FZ_V_SCALAR) || (b->cls != FZ_V_TENSOR && b->cls != FZ_V_SCALAR) ||
      (a->cls != FZ_V_TENSOR && b->cls != FZ_V_TENSOR))
    return fz_refuse(P, "no lowering for overload ", s->overload[0] ? s->overload : "(default)", NULL);
  if (strstr(s->overload, "out"))
    return fz_refuse(P, "no lowering for overload ", s->overload, NULL);
  const fz_vi *alpha = layout == TS_PWL_ALPHA && n->ninputs > 2 ? &vin[2] : NULL;
  if (layout == TS_PWL_DIV && n->ninputs > 2) {
    const fz_vi *m = &vin[2];
    if (m->cls == FZ_V_STR && m->c.len == 5 && memcmp(m->c.s, "trunc", 5) == 0)
      op = TS_PW_div_trunc;
    else if (m->cls == FZ_V_STR && m->c.len == 5 && memcmp(m->c.s, "floor", 5) == 0)
      op = TS_PW_floor_divide;
    else if (m->cls != FZ_V_NONE)
      return fz_refuse(P, "rounding_mode is not None, 'trunc' or 'floor'", NULL, NULL);
  }
  if (op == TS_PW_heaviside && a->dt != b->dt)
    return fz_refuse(P, "heaviside of different dtypes is an error (left to the interpreter)", NULL, NULL);
  p->nops = 2;
  p->ops[0] = n->inputs[0];
  p->ops[1] = n->inputs[1];
  const fz_vi *ops[2] = {&vin[0], &vin[1]};
  ts_dtype cdt = fz_result_type(ops, 2);
  fz_par3(p, 1, 0, 0);
  if (layout == TS_PWL_ALPHA) {
    if ((op == TS_PW_sub || op == TS_PW_rsub) && (ops[0]->dt == TS_DT_BOOL || ops[1]->dt == TS_DT_BOOL))
      return fz_refuse(P, "subtraction with a bool operand is an error (left to the interpreter)", NULL, NULL);
    if (alpha && alpha->cls != FZ_V_NONE) {
      double al;
      if (!fz_cst_double(alpha, &al))
        return fz_refuse(P, "no lowering for a non-constant alpha", NULL, NULL);
      if (alpha->dt == TS_DT_BOOL && cdt != TS_DT_BOOL)
        return fz_refuse(P, "Boolean alpha only supported for Boolean results", NULL, NULL);
      if (!fz_dt_float(cdt) && alpha->dt == TS_DT_FLOAT64)
        return fz_refuse(P, "a float alpha with integral inputs is an error", NULL, NULL);
      fz_par3(p, al, 0, 0);
      if (alpha->dt == TS_DT_INT64)
        p->pi[0] = alpha->c.i;
    }
  }
  if (op == TS_PW_pow) {
    p->variant = ops[0]->cls == FZ_V_TENSOR ? fz_pow_variant(ops[1]) : FZ_POW_ANY;
    if (!fz_dt_float(cdt) && cdt != TS_DT_BOOL) {
      /* integer pow: by a constant, non-negative exponent only (the
       * interpreter raises for a negative number and loops otherwise) */
      if (!ops[1]->cst || ops[1]->dt == TS_DT_FLOAT64 || ops[0]->cls != FZ_V_TENSOR)
        return fz_refuse(P, "no lowering for integer pow by a non-constant exponent", NULL, NULL);
      if (ops[1]->c.i < 0)
        return fz_refuse(P, "Integers to negative integer powers are not allowed", NULL, NULL);
    }
  }
  return fz_finish(P, p, op, cdt, ops);
}

/* Layout CLAMP: clamp (both bounds, either may be None), clamp_min,
 * clamp_max. */
static bool fz_plan_clamp(fz_pl *P, fz_plan *p, ts_pw_op kop, const fz_vi *vin) {
  const ts_node *n = P->n;
  const ts_schema *s = ts_node_schema(n);
  int which = kop == TS_PW_clamp_min ? 1 : kop == TS_PW_clamp_max ? 2 : 0;
  if (!s || strstr(s->overload, "out") || n->ninputs < (which == 0 ? 3u : 2u) || vin[0].cls != FZ_V_TENSOR)
    return fz_refuse(P, "no lowering for this overload", NULL, NULL);
  bool has_min, has_max;
  if (which == 0) {
    has_min = vin[1].cls != FZ_V_NONE;
    has_max = vin[2].cls != FZ_V_NONE;
    if (!has_min && !has_max)
      return fz_refuse(P, "clamp without min and max is an error (left to the interpreter)", NULL, NULL);
  } else {
    has_min = which == 1;
    has_max = which == 2;
  }
  const fz_vi *ops[3] = {&vin[0], NULL, NULL};
  p->ops[0] = n->inputs[0];
  int k = 1;
  if (has_min)
    p->ops[k] = n->inputs[1], ops[k++] = &vin[1];
  if (has_max) {
    uint32_t i = which == 0 ? 2 : 1;
    p->ops[k] = n->inputs[i], ops[k++] = &vin[i];
  }
  for (int j = 1; j < k; j++)
    if (ops[j]->cls != FZ_V_TENSOR && ops[j]->cls != FZ_V_SCALAR)
      return fz_refuse(P, "no lowering for this bound", NULL, NULL);
  p->nops = (uint8_t)k;
  ts_pw_op op = has_min && has_max ? TS_PW_clamp : has_min ? TS_PW_clamp_min : TS_PW_clamp_max;
  ts_dtype cdt = fz_result_type(ops, k);
  if (cdt == TS_DT_BOOL && (ops[1]->cls == FZ_V_SCALAR || op == TS_PW_clamp))
    return fz_refuse(P, "clamp on bool is an error (left to the interpreter)", NULL, NULL);
  fz_par3(p, 0, 0, 0);
  return fz_finish(P, p, op, cdt, ops);
}

static bool fz_plan_node_vi(const ts_node *n, const fz_vi *vin, fz_plan *p, ts_diag *d) {
  fz_pl P = {n, d};
  memset(p, 0, sizeof *p);
  const ts_pw_def *row = n->kind == TS_K_OTHER ? NULL : ts_pw_of_kind(n->kind);
  if (!row || row->kind != n->kind)
    return fz_refuse(&P, "no lowering for ", n->kind_name ? n->kind_name : "this op", NULL);
  if (n->noutputs != 1 || n->nblocks || n->ninputs == 0)
    return fz_refuse(&P, "no lowering for this node's form", NULL, NULL);
  fz_vi out = fz_info(n->outputs[0]);
  if (out.cls != FZ_V_TENSOR)
    return fz_refuse(&P, "its output has no complete tensor type (dtype and sizes)", NULL, NULL);
  for (uint32_t i = 0; i < n->ninputs; i++)
    if (vin[i].cls == FZ_V_OTHER)
      return fz_refuse(&P, "an input has no complete type, or is not a tensor, number, None or string", NULL, NULL);
  bool ok = false;
  switch ((ts_pw_layout)row->layout) {
  case TS_PWL_UNARY:
  case TS_PWL_GELU:
  case TS_PWL_ROUND:
    ok = fz_plan_unary(&P, p, row->op, vin);
    break;
  case TS_PWL_BINARY:
  case TS_PWL_ALPHA:
  case TS_PWL_DIV:
    ok = fz_plan_binary(&P, p, row->op, vin);
    break;
  case TS_PWL_INT_SELF: /* polygamma(n, self): n a constant, not negative (else the interpreter's error) */
    if (n->ninputs < 2 || !vin[0].cst || vin[0].cls != FZ_V_SCALAR || vin[0].c.kind == TS_CV_FLOAT || vin[0].c.i < 0)
      return fz_refuse(&P, "n is not a constant int >= 0", NULL, NULL);
    ok = fz_plan_binary(&P, p, row->op, vin);
    break;
  case TS_PWL_CLAMP:
    ok = fz_plan_clamp(&P, p, row->op, vin);
    break;
  case TS_PWL_WHERE: {
    if (n->ninputs != 3 || vin[0].cls != FZ_V_TENSOR)
      return fz_refuse(&P, "no lowering for this overload", NULL, NULL);
    if (vin[0].dt != TS_DT_BOOL && vin[0].dt != TS_DT_UINT8)
      return fz_refuse(&P, "where expected condition to be a boolean tensor", NULL, NULL);
    for (int i = 1; i < 3; i++)
      if (vin[i].cls != FZ_V_TENSOR && vin[i].cls != FZ_V_SCALAR)
        return fz_refuse(&P, "no lowering for this overload", NULL, NULL);
    const fz_vi *ops[2] = {&vin[1], &vin[2]};
    p->nops = 3;
    for (int i = 0; i < 3; i++)
      p->ops[i] = n->inputs[i];
    ok = fz_finish(&P, p, row->op, fz_result_type(ops, 2), ops);
    break;
  }
  case TS_PWL_MASKED_FILL: {
    if (n->ninputs != 3 || vin[0].cls != FZ_V_TENSOR || vin[1].cls != FZ_V_TENSOR)
      return fz_refuse(&P, "no lowering for this overload", NULL, NULL);
    if (vin[1].dt != TS_DT_BOOL)
      return fz_refuse(&P, "no lowering for a mask that is not bool", NULL, NULL);
    if (!(vin[2].cls == FZ_V_SCALAR || (vin[2].cls == FZ_V_TENSOR && vin[2].rank == 0)))
      return fz_refuse(&P, "masked_fill's value must be a number or a 0-dimensional tensor", NULL, NULL);
    /* where(mask, value cast to self's dtype, self) */
    p->nops = 3;
    p->ops[0] = n->inputs[1];
    p->ops[1] = n->inputs[2];
    p->ops[2] = n->inputs[0];
    p->variant = FZ_WHERE_FILL;
    const fz_vi *ops[1] = {&vin[0]};
    ok = fz_finish(&P, p, row->op, (ts_dtype)vin[0].dt, ops);
    break;
  }
  case TS_PWL_LERP: {
    if (n->ninputs != 3 || vin[0].cls != FZ_V_TENSOR || vin[1].cls != FZ_V_TENSOR ||
        (vin[2].cls != FZ_V_TENSOR && vin[2].cls != FZ_V_SCALAR))
      return fz_refuse(&P, "no lowering for this overload", NULL, NULL);
    ts_dtype dt = (ts_dtype)vin[0].dt;
    if (vin[1].dt != dt || (vin[2].cls == FZ_V_TENSOR && vin[2].dt != dt))
      return fz_refuse(&P, "lerp's operands differ in dtype (an error, left to the interpreter)", NULL, NULL);
    p->nops = 3;
    for (int i = 0; i < 3; i++)
      p->ops[i] = n->inputs[i];
    const fz_vi *ops[1] = {&vin[0]};
    ok = fz_finish(&P, p, row->op, dt, ops);
    break;
  }
  case TS_PWL_ADDC: {
    double value;
    if (n->ninputs != 4 || vin[0].cls != FZ_V_TENSOR || vin[1].cls != FZ_V_TENSOR || vin[2].cls != FZ_V_TENSOR)
      return fz_refuse(&P, "no lowering for this overload", NULL, NULL);
    if (!fz_cst_double(&vin[3], &value))
      return fz_refuse(&P, "no lowering for a non-constant value", NULL, NULL);
    if (row->op == TS_PW_addcdiv && !fz_dt_float((ts_dtype)vin[1].dt) && !fz_dt_float((ts_dtype)vin[2].dt))
      return fz_refuse(&P, "integer division with addcdiv is an error (left to the interpreter)", NULL, NULL);
    p->nops = 3;
    for (int i = 0; i < 3; i++)
      p->ops[i] = n->inputs[i];
    fz_par3(p, value, 0, 0);
    const fz_vi *ops[3] = {&vin[0], &vin[1], &vin[2]};
    ok = fz_finish(&P, p, row->op, TS_DT_NONE, ops);
    break;
  }
  case TS_PWL_TYPE_AS:
    if (n->ninputs != 2 || vin[0].cls != FZ_V_TENSOR || vin[1].cls != FZ_V_TENSOR)
      return fz_refuse(&P, "no lowering for this overload", NULL, NULL);
    p->op = (uint8_t)row->op;
    p->nops = 1;
    p->ops[0] = n->inputs[0];
    p->cdt = vin[0].dt;
    p->odt = vin[1].dt;
    ok = fz_dt_ok((ts_dtype)p->cdt) && fz_dt_ok((ts_dtype)p->odt);
    if (!ok)
      return fz_refuse(&P, "no lowering for dtype ", fz_dt_name((ts_dtype)(fz_dt_ok((ts_dtype)p->cdt) ? p->odt
                                                                                                     : p->cdt)),
                       NULL);
    break;
  }
  if (!ok)
    return false;
  for (int i = 0; i < p->nops; i++) {
    if (!p->ops[i])
      return fz_refuse(&P, "missing an operand", NULL, NULL);
  }
  if (!fz_dt_ok((ts_dtype)p->odt) || !fz_dt_ok((ts_dtype)p->cdt))
    return fz_refuse(&P, "no lowering for dtype ", fz_dt_name((ts_dtype)p->cdt), NULL);
  if (out.dt != p->odt) {
    ts_diag_error(d, "%s: its output is typed %s but computes %s", n->kind_name, fz_dt_name((ts_dtype)out.dt),
                  fz_dt_name((ts_dtype)p->odt));
    return false;
  }
  return true;
}

/* Plans node n from the infos of its inputs. */
static bool fz_plan_node(const ts_node *n, fz_plan *p, ts_diag *d) {
  fz_vi vin[8];
  if (n->ninputs > 8) {
    ts_diag_error(d, "%s: no lowering for %u inputs", n->kind_name, (unsigned)n->ninputs);
    return false;
  }
  for (uint32_t i = 0; i < n->ninputs; i++)
    vin[i] = fz_info(n->inputs[i]);
  return fz_plan_node_vi(n, vin, p, d);
}

bool ts_cg_fusion_supports(const ts_node *n, ts_diag *d) {
  if (ts_node_is(n, TS_K_prim_Constant)) {
    fz_vi v = fz_info(n->outputs[0]);
    if (n->noutputs == 1 && v.cst)
      return true;
    ts_diag_error(d, "prim::Constant: no lowering for a constant that is not a number, bool, None or string");
    return false;
  }
  fz_plan p;
  return fz_plan_node(n, &p, d);
}

/* ------------------------------------------------------------- emission */

/* One kernel being emitted. */
typedef struct fz_fn {
  ts_cg_module *m;
  LLVMBuilderRef b;
  LLVMValueRef fn;
  ts_diag *d;
  const ts_block *body; /* the subgraph's block */
  const fz_vi *vi;      /* by value id */
  const fz_plan *plans; /* by node, in order */
  LLVMValueRef *vals;   /* by value id: the current iteration's values */
  LLVMMetadataRef group; /* the access group of the loops' memory accesses (NULL: none) */
  unsigned md_group, md_loop;
  bool heavy; /* the body calls a math.c function: see fz_loop_md */
  bool failed;
  ts_dtype dom; /* the domain of the node being emitted (fz_kc's constants) */
} fz_fn;

/* The LLVM type a value of dtype dt is held in (bool: i1). */
static LLVMTypeRef fz_ty(const fz_fn *F, ts_dtype dt) {
  const ts_cg_module *m = F->m;
  switch (dt) {
  case TS_DT_FLOAT32: return m->t_f32;
  case TS_DT_FLOAT64: return m->t_f64;
  case TS_DT_INT64: return m->t_i64;
  case TS_DT_INT32: return m->t_i32;
  case TS_DT_INT16: return m->t_i16;
  case TS_DT_INT8: case TS_DT_UINT8: return m->t_i8;
  default: return m->t_i1;
  }
}

/* ... and in memory (bool: one byte). */
static LLVMTypeRef fz_mem_ty(const fz_fn *F, ts_dtype dt) { return dt == TS_DT_BOOL ? F->m->t_i8 : fz_ty(F, dt); }

static unsigned fz_bits(ts_dtype dt) { return dt == TS_DT_BOOL ? 1u : (unsigned)ts_dtype_size(dt) * 8u; }

static LLVMValueRef fz_cf(const fz_fn *F, ts_dtype dt, double v) { return LLVMConstReal(fz_ty(F, dt), v); }
static LLVMValueRef fz_ci(const fz_fn *F, int64_t v) { return LLVMConstInt(F->m->t_i64, (unsigned long long)v, 1); }

/* A float to an integer dtype as the runtime converts: x86's cvtt gives
 * INT_MIN where C leaves it undefined. `narrow32`: through int32 for the
 * narrower dtypes (a tensor copy, ts_rt_store_f64), else through int64 (a
 * pointwise op's store). */
static LLVMValueRef fz_f2i(fz_fn *F, LLVMValueRef v, ts_dtype from, ts_dtype to, bool narrow32) {
  LLVMBuilderRef b = F->b;
  if (from == TS_DT_FLOAT32)
    v = LLVMBuildFPExt(b, v, F->m->t_f64, "");
  bool via32 = narrow32 && to != TS_DT_INT64;
  LLVMTypeRef it = via32 ? F->m->t_i32 : F->m->t_i64;
  double lo = via32 ? -2147483649.0 : -9223372036854775808.0, hi = via32 ? 2147483648.0 : 9223372036854775808.0;
  LLVMValueRef in = LLVMBuildAnd(b, LLVMBuildFCmp(b, LLVMRealOGT, v, LLVMConstReal(F->m->t_f64, lo), ""),
                                 LLVMBuildFCmp(b, LLVMRealOLT, v, LLVMConstReal(F->m->t_f64, hi), ""), "");
  /* fptosi is poison out of range; select only passes the chosen operand on */
  LLVMValueRef i = LLVMBuildFPToSI(b, v, it, "");
  LLVMValueRef min = LLVMConstInt(it, via32 ? 0x80000000ull : 0x8000000000000000ull, 0);
  i = LLVMBuildSelect(b, in, i, min, "");
  LLVMTypeRef tt = fz_ty(F, to);
  if (LLVMGetIntTypeWidth(tt) < LLVMGetIntTypeWidth(it))
    i = LLVMBuildTrunc(b, i, tt, "");
  return i;
}

/* Converts v (held as dtype `from`) to dtype `to`, as the runtime does:
 * integers wrap, floats round to nearest, nonzero (and NaN) is true. */
static LLVMValueRef fz_cvt(fz_fn *F, LLVMValueRef v, ts_dtype from, ts_dtype to, bool copy) {
  if (from == to)
    return v;
  LLVMBuilderRef b = F->b;
  LLVMTypeRef tt = fz_ty(F, to);
  bool ff = fz_dt_float(from), tf = fz_dt_float(to);
  if (to == TS_DT_BOOL)
    return ff ? LLVMBuildFCmp(b, LLVMRealUNE, v, LLVMConstNull(LLVMTypeOf(v)), "")
              : LLVMBuildICmp(b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
  if (ff && tf)
    return to == TS_DT_FLOAT64 ? LLVMBuildFPExt(b, v, tt, "") : LLVMBuildFPTrunc(b, v, tt, "");
  if (!ff && tf)
    return fz_dt_unsigned(from) ? LLVMBuildUIToFP(b, v, tt, "") : LLVMBuildSIToFP(b, v, tt, "");
  if (ff)
    return fz_f2i(F, v, from, to, copy);
  unsigned wf = fz_bits(from), wt = fz_bits(to);
  if (wf < wt)
    return fz_dt_unsigned(from) ? LLVMBuildZExt(b, v, tt, "") : LLVMBuildSExt(b, v, tt, "");
  if (wf > wt)
    return LLVMBuildTrunc(b, v, tt, "");
  return v; /* int8 <-> uint8: the same bits */
}

/* The domain a compute dtype's op works in: itself for floats, int64 for
 * the integer dtypes and bool (as pointwise.c's buffers). */
static ts_dtype fz_dom(ts_dtype cdt) { return fz_dt_float(cdt) ? cdt : TS_DT_INT64; }

/* Operand v as the op computing in cdt reads it: cast to cdt (an int64
 * number wraps to an int32 op's type), then widened to the domain. */
static LLVMValueRef fz_in(fz_fn *F, const ts_value *v, ts_dtype cdt) {
  LLVMValueRef x = F->vals[v->id];
  x = fz_cvt(F, x, (ts_dtype)F->vi[v->id].dt, cdt, false);
  return fz_cvt(F, x, cdt, fz_dom(cdt), false);
}

/* A parameter in the domain of cdt. */
static LLVMValueRef fz_par(const fz_fn *F, const fz_plan *p, int k) {
  ts_dtype cdt = (ts_dtype)p->cdt;
  return fz_dt_float(cdt) ? fz_cf(F, cdt, p->pd[k]) : fz_ci(F, p->pi[k]);
}

static bool fz_fail(fz_fn *F) {
  F->failed = true;
  return false;
}

/* A call of an LLVM intrinsic overloaded on x's type. */
static LLVMValueRef fz_intr(fz_fn *F, const char *name, LLVMValueRef x, LLVMValueRef y) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMTypeRef t = LLVMTypeOf(x);
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(F->m->mod, id, &t, 1);
  LLVMTypeRef fty = LLVMIntrinsicGetType(F->m->ctx, id, &t, 1);
  LLVMValueRef args[2] = {x, y};
  return LLVMBuildCall2(F->b, fty, fn, args, y ? 2 : 1, "");
}

/* codegen/math.c's function fn of x (and y). */
static LLVMValueRef fz_math(fz_fn *F, ts_cg_math_fn fn, LLVMValueRef x, LLVMValueRef y) {
  F->heavy = true;
  LLVMValueRef r = ts_cg_math_call(F->m, F->b, fn, x, y, F->d);
  if (!r) {
    fz_fail(F);
    return LLVMGetUndef(LLVMTypeOf(x));
  }
  return r;
}

/* A C library function: "tanf" for float, "tan" for double. */
static LLVMValueRef fz_libm(fz_fn *F, const char *name, LLVMValueRef x, LLVMValueRef y) {
  LLVMTypeRef t = LLVMTypeOf(x);
  char nm[16];
  size_t n = strlen(name);
  memcpy(nm, name, n);
  if (t == F->m->t_f32)
    nm[n++] = 'f';
  nm[n] = '\0';
  LLVMTypeRef params[2] = {t, t};
  LLVMTypeRef fty = LLVMFunctionType(t, params, y ? 2 : 1, 0);
  LLVMValueRef fn = ts_cg_module_extern(F->m, nm, fty);
  if (!fn) {
    ts_diag_error(F->d, "cannot declare %s", nm);
    fz_fail(F);
    return LLVMGetUndef(t);
  }
  LLVMValueRef args[2] = {x, y};
  return LLVMBuildCall2(F->b, fty, fn, args, y ? 2 : 1, "");
}

static LLVMValueRef fz_fcmp(fz_fn *F, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFCmp(F->b, p, a, b, "");
}

static LLVMValueRef fz_icmp(fz_fn *F, LLVMIntPredicate p, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildICmp(F->b, p, a, b, "");
}

static LLVMValueRef fz_sel(fz_fn *F, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(F->b, c, a, b, "");
}

/* maximum/minimum as pointwise.c: NaN from either side wins, else a > b ? a : b. */
static LLVMValueRef fz_fmax(fz_fn *F, LLVMValueRef a, LLVMValueRef b, bool max) {
  /* b a constant, not NaN: b > a ? b : a is all of it when b is not zero
   * (NaN a fails the comparison; a == b only where they are the same
   * value), x86's maxps(b, a) exactly, one instruction for four; for b = +-0
   * (clamp_min(x, 0)) a > b or unordered ? a : b keeps -0 vs 0 as above */
  if (LLVMIsAConstantFP(b)) {
    LLVMBool lossy;
    double v = LLVMConstRealGetDouble(b, &lossy);
    if (!isnan(v) && v != 0)
      return fz_sel(F, fz_fcmp(F, max ? LLVMRealOGT : LLVMRealOLT, b, a), b, a);
    if (v == 0)
      return fz_sel(F, fz_fcmp(F, max ? LLVMRealUGT : LLVMRealULT, a, b), a, b);
  }
  /* a NaN b fails the comparison and is chosen already */
  LLVMValueRef r = fz_sel(F, fz_fcmp(F, max ? LLVMRealOGT : LLVMRealOLT, a, b), a, b);
  return fz_sel(F, fz_fcmp(F, LLVMRealUNO, a, a), a, r);
}

/* Python's floor division in floats (c10's div_floor_floating). */
static LLVMValueRef fz_divfloor(fz_fn *F, LLVMValueRef a, LLVMValueRef b, ts_dtype dt) {
  LLVMBuilderRef B = F->b;
  LLVMValueRef zero = fz_cf(F, dt, 0), one = fz_cf(F, dt, 1);
  LLVMValueRef q = LLVMBuildFDiv(B, a, b, "");
  LLVMValueRef mod = LLVMBuildFRem(B, a, b, "");
  LLVMValueRef div = LLVMBuildFDiv(B, LLVMBuildFSub(B, a, mod, ""), b, "");
  LLVMValueRef adj = LLVMBuildAnd(B, fz_fcmp(F, LLVMRealUNE, mod, zero),
                                  LLVMBuildXor(B, fz_fcmp(F, LLVMRealOLT, b, zero),
                                               fz_fcmp(F, LLVMRealOLT, mod, zero), ""), "");
  div = fz_sel(F, adj, LLVMBuildFSub(B, div, one, ""), div);
  LLVMValueRef fl = fz_intr(F, "llvm.floor", div, NULL);
  LLVMValueRef up = fz_fcmp(F, LLVMRealOGT, LLVMBuildFSub(B, div, fl, ""), fz_cf(F, dt, 0.5));
  fl = fz_sel(F, up, LLVMBuildFAdd(B, fl, one, ""), fl);
  LLVMValueRef r = fz_sel(F, fz_fcmp(F, LLVMRealOEQ, div, zero), fz_intr(F, "llvm.copysign", zero, q), fl);
  return fz_sel(F, fz_fcmp(F, LLVMRealOEQ, b, zero), q, r);
}

/* Python's % in floats: the sign of the divisor. */
static LLVMValueRef fz_frem_py(fz_fn *F, LLVMValueRef a, LLVMValueRef b, ts_dtype dt) {
  LLVMBuilderRef B = F->b;
  LLVMValueRef zero = fz_cf(F, dt, 0);
  LLVMValueRef mod = LLVMBuildFRem(B, a, b, "");
  LLVMValueRef adj = LLVMBuildAnd(B, fz_fcmp(F, LLVMRealUNE, mod, zero),
                                  LLVMBuildXor(B, fz_fcmp(F, LLVMRealOLT, b, zero),
                                               fz_fcmp(F, LLVMRealOLT, mod, zero), ""), "");
  return fz_sel(F, adj, LLVMBuildFAdd(B, mod, b, ""), mod);
}

/* ------------------------------------------------ the formula language */

/* ir/ops.def's formulas as LLVM: each primitive works on the domain's
 * values (float or double for the floating compute dtypes, i64 for the
 * integer ones and bool, as pointwise.c's buffers), picked by the operand's
 * LLVM type; comparisons and logic give i1. Division forms that raise
 * ZeroDivisionError on integers, and gcd, have no integer lowering (their
 * rows say so and planning refuses them first). */

static bool fz_isf(LLVMValueRef x) {
  LLVMTypeKind k = LLVMGetTypeKind(LLVMTypeOf(x));
  return k == LLVMFloatTypeKind || k == LLVMDoubleTypeKind;
}

/* A primitive used outside its domain (never, when the rows are right). */
static LLVMValueRef fz_p_bad(fz_fn *F, const char *what, LLVMValueRef like) {
  ts_diag_error(F->d, "fusion: %s has no lowering in this domain", what);
  fz_fail(F);
  return LLVMGetUndef(LLVMTypeOf(like));
}

/* A constant of the current domain. */
static LLVMValueRef fz_kc(const fz_fn *F, double v) {
  return fz_dt_float(F->dom) ? fz_cf(F, F->dom, v) : fz_ci(F, (int64_t)v);
}

static bool fz_is_one(LLVMValueRef x) {
  LLVMBool lossy;
  if (LLVMIsAConstantFP(x))
    return LLVMConstRealGetDouble(x, &lossy) == 1.0;
  return LLVMIsAConstantInt(x) && LLVMConstIntGetSExtValue(x) == 1;
}

static LLVMValueRef fz_p_add(fz_fn *F, LLVMValueRef x, LLVMValueRef y) {
  return fz_isf(x) ? LLVMBuildFAdd(F->b, x, y, "") : LLVMBuildAdd(F->b, x, y, "");
}
static LLVMValueRef fz_p_sub(fz_fn *F, LLVMValueRef x, LLVMValueRef y) {
  return fz_isf(x) ? LLVMBuildFSub(F->b, x, y, "") : LLVMBuildSub(F->b, x, y, "");
}
/* a factor 1 (alpha, value) multiplies exactly: left out */
static LLVMValueRef fz_p_mul(fz_fn *F, LLVMValueRef x, LLVMValueRef y) {
  if (fz_is_one(x))
    return y;
  if (fz_is_one(y))
    return x;
  return fz_isf(x) ? LLVMBuildFMul(F->b, x, y, "") : LLVMBuildMul(F->b, x, y, "");
}
static LLVMValueRef fz_p_div(fz_fn *F, LLVMValueRef x, LLVMValueRef y) {
  return fz_isf(x) ? LLVMBuildFDiv(F->b, x, y, "") : fz_p_bad(F, "division", x);
}
static LLVMValueRef fz_p_neg(fz_fn *F, LLVMValueRef x) {
  return fz_isf(x) ? LLVMBuildFNeg(F->b, x, "") : LLVMBuildSub(F->b, LLVMConstNull(LLVMTypeOf(x)), x, "");
}
static LLVMValueRef fz_p_abs(fz_fn *F, LLVMValueRef x) {
  if (fz_isf(x))
    return fz_intr(F, "llvm.fabs", x, NULL);
  LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(x));
  return fz_sel(F, fz_icmp(F, LLVMIntSLT, x, zero), LLVMBuildSub(F->b, zero, x, ""), x);
}
/* Comparisons as C's operators on the domain's values (NaN: only != holds). */
static LLVMValueRef fz_p_cmp(fz_fn *F, LLVMRealPredicate fp, LLVMIntPredicate ip, LLVMValueRef x, LLVMValueRef y) {
  return fz_isf(x) ? fz_fcmp(F, fp, x, y) : fz_icmp(F, ip, x, y);
}
static LLVMValueRef fz_p_nz(fz_fn *F, LLVMValueRef x) {
  return fz_p_cmp(F, LLVMRealUNE, LLVMIntNE, x, LLVMConstNull(LLVMTypeOf(x)));
}
static LLVMValueRef fz_p_lo(fz_fn *F, LLVMValueRef x, LLVMValueRef lo) {
  return fz_sel(F, fz_p_cmp(F, LLVMRealOLT, LLVMIntSLT, x, lo), lo, x);
}
static LLVMValueRef fz_p_hi(fz_fn *F, LLVMValueRef x, LLVMValueRef hi) {
  return fz_sel(F, fz_p_cmp(F, LLVMRealOGT, LLVMIntSGT, x, hi), hi, x);
}
static LLVMValueRef fz_p_max(fz_fn *F, LLVMValueRef x, LLVMValueRef y, bool max) {
  if (fz_isf(x))
    return fz_fmax(F, x, y, max);
  return fz_sel(F, fz_icmp(F, max ? LLVMIntSGT : LLVMIntSLT, x, y), x, y);
}
/* floor, ceil, trunc, nearbyint: the identity on integers */
static LLVMValueRef fz_p_round(fz_fn *F, const char *intr, LLVMValueRef x) {
  return fz_isf(x) ? fz_intr(F, intr, x, NULL) : x;
}
static LLVMValueRef fz_p_sign(fz_fn *F, LLVMValueRef x) {
  LLVMBuilderRef B = F->b;
  if (fz_isf(x)) {
    LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(x));
    return fz_sel(F, fz_fcmp(F, LLVMRealOGT, x, zero), LLVMConstReal(LLVMTypeOf(x), 1),
                  fz_sel(F, fz_fcmp(F, LLVMRealOLT, x, zero), LLVMConstReal(LLVMTypeOf(x), -1), zero));
  }
  LLVMValueRef zero = fz_ci(F, 0);
  return LLVMBuildSub(B, LLVMBuildZExt(B, fz_icmp(F, LLVMIntSGT, x, zero), F->m->t_i64, ""),
                      LLVMBuildZExt(B, fz_icmp(F, LLVMIntSLT, x, zero), F->m->t_i64, ""), "");
}
/* isnan, isinf, isfinite: false, false, true on integers */
static LLVMValueRef fz_p_class(fz_fn *F, int which, LLVMValueRef x) {
  if (!fz_isf(x))
    return LLVMConstInt(F->m->t_i1, which == 2, 0);
  if (which == 0)
    return fz_fcmp(F, LLVMRealUNO, x, x);
  LLVMValueRef inf = LLVMConstReal(LLVMTypeOf(x), INFINITY);
  return fz_fcmp(F, which == 1 ? LLVMRealOEQ : LLVMRealOLT, fz_intr(F, "llvm.fabs", x, NULL), inf);
}
/* math.c's function (a few ulp, vectorised), floating only */
static LLVMValueRef fz_p_math(fz_fn *F, ts_cg_math_fn fn, LLVMValueRef x, LLVMValueRef y) {
  return fz_isf(x) ? fz_math(F, fn, x, y) : fz_p_bad(F, ts_cg_math_name(fn), x);
}
/* the C library's (exact, not vectorised), floating only */
static LLVMValueRef fz_p_libm(fz_fn *F, const char *name, LLVMValueRef x, LLVMValueRef y) {
  return fz_isf(x) ? fz_libm(F, name, x, y) : fz_p_bad(F, name, x);
}
static LLVMValueRef fz_p_sqrt(fz_fn *F, LLVMValueRef x) {
  return fz_isf(x) ? fz_intr(F, "llvm.sqrt", x, NULL) : fz_p_bad(F, "sqrt", x);
}
/* pow: PowKernel.cpp's forms for a constant exponent (the plan's variant),
 * math.c's powf otherwise; integers: square and multiply by the constant
 * exponent, unrolled */
static LLVMValueRef fz_p_pow(fz_fn *F, const fz_plan *p, LLVMValueRef x, LLVMValueRef y) {
  LLVMBuilderRef B = F->b;
  if (!fz_isf(x)) {
    if (!LLVMIsAConstantInt(y))
      return fz_p_bad(F, "pow by a non-constant integer", x);
    int64_t e = LLVMConstIntGetSExtValue(y);
    LLVMValueRef r = fz_ci(F, 1), v = x;
    while (e > 0) {
      if (e & 1)
        r = LLVMBuildMul(B, r, v, "");
      e >>= 1;
      if (e)
        v = LLVMBuildMul(B, v, v, "");
    }
    return r;
  }
  LLVMValueRef one = LLVMConstReal(LLVMTypeOf(x), 1);
  switch (p->variant) {
  case FZ_POW_0: return one;
  case FZ_POW_1: return x;
  case FZ_POW_2: return LLVMBuildFMul(B, x, x, "");
  case FZ_POW_3: return LLVMBuildFMul(B, LLVMBuildFMul(B, x, x, ""), x, "");
  case FZ_POW_M2: return LLVMBuildFDiv(B, one, LLVMBuildFMul(B, x, x, ""), "");
  case FZ_POW_HALF: return fz_intr(F, "llvm.sqrt", x, NULL);
  case FZ_POW_MHALF: return LLVMBuildFDiv(B, one, fz_intr(F, "llvm.sqrt", x, NULL), "");
  case FZ_POW_M1: return LLVMBuildFDiv(B, one, x, "");
  default: return fz_math(F, TS_CG_POW, x, y);
  }
}
static LLVMValueRef fz_p_divtrunc(fz_fn *F, LLVMValueRef x, LLVMValueRef y) {
  return fz_isf(x) ? fz_intr(F, "llvm.trunc", LLVMBuildFDiv(F->b, x, y, ""), NULL) : fz_p_bad(F, "div_trunc", x);
}
static LLVMValueRef fz_p_divfloor(fz_fn *F, LLVMValueRef x, LLVMValueRef y) {
  return fz_isf(x) ? fz_divfloor(F, x, y, F->dom) : fz_p_bad(F, "floor_divide", x);
}
static LLVMValueRef fz_p_rem(fz_fn *F, LLVMValueRef x, LLVMValueRef y) {
  return fz_isf(x) ? fz_frem_py(F, x, y, F->dom) : fz_p_bad(F, "remainder", x);
}
static LLVMValueRef fz_p_fmod(fz_fn *F, LLVMValueRef x, LLVMValueRef y) {
  return fz_isf(x) ? LLVMBuildFRem(F->b, x, y, "") : fz_p_bad(F, "fmod", x);
}
static LLVMValueRef fz_p_bits(fz_fn *F, int op, LLVMValueRef x, LLVMValueRef y) {
  if (fz_isf(x))
    return fz_p_bad(F, "a bitwise op", x);
  return op == 0 ? LLVMBuildAnd(F->b, x, y, "") : op == 1 ? LLVMBuildOr(F->b, x, y, "") : LLVMBuildXor(F->b, x, y, "");
}
static LLVMValueRef fz_p_bnot(fz_fn *F, const fz_plan *p, LLVMValueRef x) {
  if (fz_isf(x))
    return fz_p_bad(F, "bitwise_not", x);
  if (p->cdt == TS_DT_BOOL)
    return LLVMBuildZExt(F->b, fz_icmp(F, LLVMIntEQ, x, fz_ci(F, 0)), F->m->t_i64, "");
  return LLVMBuildNot(F->b, x, "");
}
/* pointwise.c's pw_shl and pw_shr: a shift out of [0, 64) is 0 or the sign */
static LLVMValueRef fz_p_shift(fz_fn *F, bool left, LLVMValueRef x, LLVMValueRef y) {
  if (fz_isf(x))
    return fz_p_bad(F, "a shift", x);
  LLVMBuilderRef B = F->b;
  LLVMValueRef in = fz_icmp(F, LLVMIntULT, y, fz_ci(F, 64)); /* unsigned: negative counts are out too */
  LLVMValueRef amt = fz_sel(F, in, y, fz_ci(F, 63));
  if (left)
    return fz_sel(F, in, LLVMBuildShl(B, x, amt, ""), fz_ci(F, 0));
  return LLVMBuildAShr(B, x, amt, "");
}

static bool fz_nvptx(const ts_cg_module *m);

/* fmax/fmin: the number when the other is NaN (llvm.maxnum is C's fmax) */
static LLVMValueRef fz_p_fmax(fz_fn *F, LLVMValueRef x, LLVMValueRef y, bool max) {
  if (fz_isf(x))
    return fz_intr(F, max ? "llvm.maxnum" : "llvm.minnum", x, y);
  return fz_p_max(F, x, y, max);
}
static LLVMValueRef fz_p_copysign(fz_fn *F, LLVMValueRef x, LLVMValueRef y) {
  return fz_isf(x) ? fz_intr(F, "llvm.copysign", x, y) : fz_p_bad(F, "copysign", x);
}
/* the sign bit (set for -0.0 and a negative NaN); integers: x < 0 */
static LLVMValueRef fz_p_signbit(fz_fn *F, LLVMValueRef x) {
  if (!fz_isf(x))
    return fz_icmp(F, LLVMIntSLT, x, fz_ci(F, 0));
  bool f32 = LLVMTypeOf(x) == F->m->t_f32;
  LLVMTypeRef it = f32 ? F->m->t_i32 : F->m->t_i64;
  return fz_icmp(F, LLVMIntSLT, LLVMBuildBitCast(F->b, x, it, ""), LLVMConstInt(it, 0, 0));
}
/* the largest finite value of the domain (nan_to_num) */
static LLVMValueRef fz_p_big(fz_fn *F) {
  if (!fz_dt_float(F->dom))
    return fz_ci(F, INT64_MAX);
  return fz_kc(F, F->dom == TS_DT_FLOAT32 ? (double)FLT_MAX : DBL_MAX);
}
static LLVMValueRef fz_p_inf(fz_fn *F) {
  return fz_dt_float(F->dom) ? fz_kc(F, INFINITY) : fz_ci(F, INT64_MAX);
}
/* A special function of runtime/kernels/special.c (double -> double),
 * called by name: the runtime ships inside every generated object, and
 * these series and iterations would not vectorise anyway. Not on NVPTX
 * (the group then runs in the interpreter). */
static LLVMValueRef fz_p_rt(fz_fn *F, const char *name, LLVMValueRef x, LLVMValueRef y) {
  if (!fz_isf(x) || fz_nvptx(F->m))
    return fz_p_bad(F, name, x);
  LLVMBuilderRef B = F->b;
  LLVMTypeRef t = LLVMTypeOf(x), d = F->m->t_f64;
  LLVMValueRef args[2] = {t == d ? x : LLVMBuildFPExt(B, x, d, ""), NULL};
  if (y)
    args[1] = t == d ? y : LLVMBuildFPExt(B, y, d, "");
  LLVMTypeRef params[2] = {d, d};
  LLVMTypeRef fty = LLVMFunctionType(d, params, y ? 2 : 1, 0);
  LLVMValueRef fn = ts_cg_module_extern(F->m, name, fty);
  if (!fn) {
    ts_diag_error(F->d, "cannot declare %s", name);
    fz_fail(F);
    return LLVMGetUndef(t);
  }
  LLVMValueRef r = LLVMBuildCall2(B, fty, fn, args, y ? 2 : 1, "");
  return t == d ? r : LLVMBuildFPTrunc(B, r, t, "");
}

#define PW_ZERO fz_kc(F, 0)
#define PW_ONE fz_kc(F, 1)
#define PW_K(v) fz_kc(F, v)
#define PW_ADD(x, y) fz_p_add(F, x, y)
#define PW_SUB(x, y) fz_p_sub(F, x, y)
#define PW_MUL(x, y) fz_p_mul(F, x, y)
#define PW_DIV(x, y) fz_p_div(F, x, y)
#define PW_NEG(x) fz_p_neg(F, x)
#define PW_ABS(x) fz_p_abs(F, x)
#define PW_EQ(x, y) fz_p_cmp(F, LLVMRealOEQ, LLVMIntEQ, x, y)
#define PW_NE(x, y) fz_p_cmp(F, LLVMRealUNE, LLVMIntNE, x, y)
#define PW_LT(x, y) fz_p_cmp(F, LLVMRealOLT, LLVMIntSLT, x, y)
#define PW_LE(x, y) fz_p_cmp(F, LLVMRealOLE, LLVMIntSLE, x, y)
#define PW_GT(x, y) fz_p_cmp(F, LLVMRealOGT, LLVMIntSGT, x, y)
#define PW_GE(x, y) fz_p_cmp(F, LLVMRealOGE, LLVMIntSGE, x, y)
#define PW_NZ(x) fz_p_nz(F, x)
#define PW_AND(x, y) LLVMBuildAnd(F->b, x, y, "")
#define PW_OR(x, y) LLVMBuildOr(F->b, x, y, "")
#define PW_XOR(x, y) LLVMBuildXor(F->b, x, y, "")
#define PW_SEL(c, x, y) fz_sel(F, c, x, y)
#define PW_LO(x, lo) fz_p_lo(F, x, lo)
#define PW_HI(x, hi) fz_p_hi(F, x, hi)
#define PW_MAX(x, y) fz_p_max(F, x, y, true)
#define PW_MIN(x, y) fz_p_max(F, x, y, false)
#define PW_FLOOR(x) fz_p_round(F, "llvm.floor", x)
#define PW_CEIL(x) fz_p_round(F, "llvm.ceil", x)
#define PW_TRUNC(x) fz_p_round(F, "llvm.trunc", x)
#define PW_RINT(x) fz_p_round(F, "llvm.nearbyint", x)
#define PW_SIGN(x) fz_p_sign(F, x)
#define PW_ISNAN(x) fz_p_class(F, 0, x)
#define PW_ISINF(x) fz_p_class(F, 1, x)
#define PW_ISFINITE(x) fz_p_class(F, 2, x)
#define PW_EXP(x) fz_p_math(F, TS_CG_EXP, x, NULL)
#define PW_EXP2(x) fz_p_libm(F, "exp2", x, NULL)
#define PW_EXPM1(x) fz_p_math(F, TS_CG_EXPM1, x, NULL)
#define PW_LOG(x) fz_p_math(F, TS_CG_LOG, x, NULL)
#define PW_LOG2(x) fz_p_math(F, TS_CG_LOG2, x, NULL)
#define PW_LOG10(x) fz_p_math(F, TS_CG_LOG10, x, NULL)
#define PW_LOG1P(x) fz_p_math(F, TS_CG_LOG1P, x, NULL)
#define PW_SQRT(x) fz_p_sqrt(F, x)
#define PW_SIN(x) fz_p_math(F, TS_CG_SIN, x, NULL)
#define PW_COS(x) fz_p_math(F, TS_CG_COS, x, NULL)
#define PW_TAN(x) fz_p_libm(F, "tan", x, NULL)
#define PW_ASIN(x) fz_p_libm(F, "asin", x, NULL)
#define PW_ACOS(x) fz_p_libm(F, "acos", x, NULL)
#define PW_ATAN(x) fz_p_libm(F, "atan", x, NULL)
#define PW_SINH(x) fz_p_libm(F, "sinh", x, NULL)
#define PW_COSH(x) fz_p_libm(F, "cosh", x, NULL)
#define PW_TANH(x) fz_p_math(F, TS_CG_TANH, x, NULL)
#define PW_ERF(x) fz_p_math(F, TS_CG_ERF, x, NULL)
#define PW_SIGMOID(x) fz_p_math(F, TS_CG_SIGMOID, x, NULL)
#define PW_GELU(x) fz_p_math(F, TS_CG_GELU_ERF, x, NULL)
#define PW_GELU_TANH(x) fz_p_math(F, TS_CG_GELU_TANH, x, NULL)
#define PW_ATAN2(x, y) fz_p_libm(F, "atan2", x, y)
#define PW_HYPOT(x, y) fz_p_libm(F, "hypot", x, y)
#define PW_POW(x, y) fz_p_pow(F, p, x, y)
#define PW_DIVTRUNC(x, y) fz_p_divtrunc(F, x, y)
#define PW_DIVFLOOR(x, y) fz_p_divfloor(F, x, y)
#define PW_REM(x, y) fz_p_rem(F, x, y)
#define PW_FMOD(x, y) fz_p_fmod(F, x, y)
#define PW_BAND(x, y) fz_p_bits(F, 0, x, y)
#define PW_BOR(x, y) fz_p_bits(F, 1, x, y)
#define PW_BXOR(x, y) fz_p_bits(F, 2, x, y)
#define PW_BNOT(x) fz_p_bnot(F, p, x)
#define PW_SHL(x, y) fz_p_shift(F, true, x, y)
#define PW_SHR(x, y) fz_p_shift(F, false, x, y)
#define PW_GCD(x, y) fz_p_bad(F, "gcd", x)
#define PW_ACOSH(x) fz_p_libm(F, "acosh", x, NULL)
#define PW_ASINH(x) fz_p_libm(F, "asinh", x, NULL)
#define PW_ATANH(x) fz_p_libm(F, "atanh", x, NULL)
#define PW_ERFC(x) fz_p_libm(F, "erfc", x, NULL)
#define PW_LGAMMA(x) fz_p_libm(F, "lgamma", x, NULL)
#define PW_COPYSIGN(x, y) fz_p_copysign(F, x, y)
#define PW_FMAX(x, y) fz_p_fmax(F, x, y, true)
#define PW_FMIN(x, y) fz_p_fmax(F, x, y, false)
#define PW_NEXTAFTER(x, y) fz_p_libm(F, "nextafter", x, y)
#define PW_SIGNBIT(x) fz_p_signbit(F, x)
#define PW_BIG fz_p_big(F)
#define PW_INF fz_p_inf(F)
#define PW_SP(fn, x) fz_p_rt(F, "ts_rt_sp_" #fn, x, NULL)
#define PW_SP2(fn, x, y) fz_p_rt(F, "ts_rt_sp_" #fn, x, y)

/* The row's formula over the operands a, b, w (already in the domain). */
static LLVMValueRef fz_emit_formula(fz_fn *F, const fz_plan *p, LLVMValueRef a, LLVMValueRef b, LLVMValueRef w) {
  LLVMValueRef p0 = fz_par(F, p, 0), p1 = fz_par(F, p, 1), p2 = fz_par(F, p, 2);
  switch ((ts_pw_op)p->op) {
#define TS_OP(...)
#define TS_PW(ns, name, ip, layout, nin, rule, kname, formula, ...)                                              \
  case TS_PW_##name:                                                                                             \
    return formula;
#define TS_PWF(name, layout, nin, rule, kname, formula)                                                          \
  case TS_PW_##name:                                                                                             \
    return formula;
#include "ops.def"
#undef TS_OP
#undef TS_PW
#undef TS_PWF
  default:
    break;
  }
  ts_diag_error(F->d, "fusion: no lowering for op %d", (int)p->op);
  fz_fail(F);
  return LLVMGetUndef(LLVMTypeOf(a));
}

/* One planned node: its output value, held in its dtype's LLVM type. */
static LLVMValueRef fz_emit_node(fz_fn *F, const fz_plan *p) {
  ts_dtype cdt = (ts_dtype)p->cdt, odt = (ts_dtype)p->odt;
  if (p->op == TS_PW_type_as) /* a tensor copy's conversion */
    return fz_cvt(F, F->vals[p->ops[0]->id], cdt, odt, true);
  if (p->op == TS_PW_where || p->op == TS_PW_masked_fill) {
    /* the condition is tested as it is; masked_fill's value is first cast
     * to self's dtype as a tensor copy would (ts_rt_tensor_to_dtype) */
    const ts_value *c = p->ops[0];
    LLVMValueRef cv = F->vals[c->id];
    LLVMValueRef cond = fz_cvt(F, cv, (ts_dtype)F->vi[c->id].dt, TS_DT_BOOL, false);
    const ts_value *v = p->ops[1];
    LLVMValueRef val = F->vals[v->id];
    ts_dtype vdt = (ts_dtype)F->vi[v->id].dt;
    LLVMValueRef b = fz_in(F, p->ops[2], cdt);
    LLVMValueRef a = p->variant == FZ_WHERE_FILL ? fz_cvt(F, fz_cvt(F, val, vdt, cdt, true), cdt, fz_dom(cdt), false)
                                                 : fz_in(F, v, cdt);
    return fz_cvt(F, fz_sel(F, cond, a, b), fz_dom(cdt), odt, false);
  }
  LLVMValueRef x[3] = {NULL, NULL, NULL};
  for (int k = 0; k < p->nops; k++)
    x[k] = fz_in(F, p->ops[k], cdt);
  F->dom = fz_dom(cdt);
  LLVMValueRef r = fz_emit_formula(F, p, x[0], x[1], x[2]);
  if (fz_rule((ts_pw_op)p->op) & TS_PWR_BOOLOUT)
    return r; /* i1 */
  return fz_cvt(F, r, fz_dom(cdt), odt, false);
}

/* ---------------------------------------------------------------- loops */

/* A distinct, empty metadata node: an access group. The C API makes only
 * uniqued nodes, so it comes from parsing "distinct !{}" into a scratch
 * module of the same context (metadata belongs to the context and outlives
 * the module). NULL if that fails: the loops then go unannotated, correct
 * and vectorised behind LLVM's runtime overlap checks. */
static LLVMMetadataRef fz_access_group(LLVMContextRef ctx) {
  static const char ir[] = "!fz = !{!0}\n!0 = distinct !{}\n";
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, sizeof ir - 1, "fz");
  if (!buf)
    return NULL;
  LLVMModuleRef tmp = NULL;
  char *msg = NULL;
  if (LLVMParseIRInContext(ctx, buf, &tmp, &msg)) { /* takes buf */
    LLVMDisposeMessage(msg);
    return NULL;
  }
  LLVMMetadataRef md = NULL;
  if (LLVMGetNamedMetadataNumOperands(tmp, "fz") == 1) {
    LLVMValueRef op = NULL;
    LLVMGetNamedMetadataOperands(tmp, "fz", &op);
    if (op)
      md = LLVMValueAsMetadata(op);
  }
  LLVMDisposeModule(tmp);
  return md;
}

/* A loop id, `distinct !{!self, !{"llvm.loop.parallel_accesses", group}}`:
 * a node made with a temporary in its first operand becomes distinct when
 * the temporary is replaced by the node itself. A body with math.c calls
 * (each a chain of ~20 dependent operations) is bound by latency, not
 * throughput, and the vectoriser's cost model keeps it at one vector per
 * iteration: it gets `llvm.loop.interleave.count` 4, four independent
 * chains (elementwise_chain: 2.14 -> 1.53 ms; 2 gave 1.79, 8 1.73). */
static LLVMValueRef fz_loop_md(fz_fn *F) {
  LLVMContextRef c = F->m->ctx;
  LLVMMetadataRef tmp = LLVMTemporaryMDNode(c, NULL, 0);
  LLVMMetadataRef pa[2] = {LLVMMDStringInContext2(c, "llvm.loop.parallel_accesses", 27), F->group};
  LLVMMetadataRef ic[2] = {LLVMMDStringInContext2(c, "llvm.loop.interleave.count", 26),
                           LLVMValueAsMetadata(LLVMConstInt(F->m->t_i32, 4, 0))};
  LLVMMetadataRef ops[3] = {tmp, LLVMMDNodeInContext2(c, pa, 2), LLVMMDNodeInContext2(c, ic, 2)};
  LLVMMetadataRef id = LLVMMDNodeInContext2(c, ops, F->heavy ? 3 : 2);
  LLVMMetadataReplaceAllUsesWith(tmp, id);
  return LLVMMetadataAsValue(c, id);
}

static void fz_mark(fz_fn *F, LLVMValueRef inst) {
  if (F->group)
    LLVMSetMetadata(inst, F->md_group, LLVMMetadataAsValue(F->m->ctx, F->group));
}

/* An element of dtype dt at addr, held in its LLVM type (bool: i1). */
static LLVMValueRef fz_load(fz_fn *F, ts_dtype dt, LLVMValueRef addr, bool mark) {
  LLVMValueRef v = LLVMBuildLoad2(F->b, fz_mem_ty(F, dt), addr, "");
  if (mark)
    fz_mark(F, v);
  if (dt == TS_DT_BOOL)
    v = LLVMBuildICmp(F->b, LLVMIntNE, v, LLVMConstInt(F->m->t_i8, 0, 0), "");
  return v;
}

static void fz_store(fz_fn *F, ts_dtype dt, LLVMValueRef v, LLVMValueRef addr) {
  if (dt == TS_DT_BOOL)
    v = LLVMBuildZExt(F->b, v, F->m->t_i8, "");
  fz_mark(F, LLVMBuildStore(F->b, v, addr));
}

static LLVMValueRef fz_gep(fz_fn *F, ts_dtype dt, LLVMValueRef base, LLVMValueRef idx) {
  return LLVMBuildInBoundsGEP2(F->b, fz_mem_ty(F, dt), base, &idx, 1, "");
}

/* A group operand (input or output) of the kernel. */
typedef struct fz_io {
  const ts_value *v; /* the subgraph's input or output value */
  ts_dtype dt;
  bool used;         /* read by the subgraph (inputs), or an output */
  bool tensor;       /* else a scalar input */
  bool bcast_last;   /* a tensor input constant along the output's last dimension */
  int32_t rank;      /* a tensor input's */
  const int64_t *isz; /* its sizes */
  LLVMValueRef ptr;  /* ptrs[k] */
  LLVMValueRef scalar; /* a scalar input's value */
  LLVMValueRef base;   /* strided loop: this row's first element */
  LLVMValueRef row;    /* strided loop: the value of a bcast_last input for this row */
  LLVMValueRef inner;  /* strided loop: the stride along the last dimension */
} fz_io;

/* The kernel's shape and operands. */
typedef struct fz_k {
  int32_t nd;
  const int64_t *sizes;
  uint32_t nin, nout;
  fz_io *io; /* nin + nout */
} fz_k;

/* Emits the subgraph's nodes for one element (the inputs' values are set),
 * then stores the outputs at element index `idx` of each output (`bases`
 * per output, or the output pointers). */
static void fz_emit_element(fz_fn *F, const fz_k *K, LLVMValueRef const *obase, LLVMValueRef idx) {
  size_t i = 0;
  for (const ts_node *n = ts_block_first(F->body); n != F->body->ret; n = n->next, i++) {
    const ts_value *o = n->outputs[0];
    if (ts_node_is(n, TS_K_prim_Constant)) {
      const fz_vi *c = &F->vi[o->id];
      LLVMValueRef v = NULL;
      if (c->cls == FZ_V_SCALAR)
        v = c->dt == TS_DT_FLOAT64 ? LLVMConstReal(F->m->t_f64, c->c.f)
            : c->dt == TS_DT_BOOL  ? LLVMConstInt(F->m->t_i1, c->c.i != 0, 0)
                                   : fz_ci(F, c->c.i);
      F->vals[o->id] = v;
      continue;
    }
    F->vals[o->id] = fz_emit_node(F, &F->plans[i]);
  }
  for (uint32_t j = 0; j < K->nout; j++) {
    const fz_io *q = &K->io[K->nin + j];
    fz_store(F, q->dt, F->vals[q->v->id], fz_gep(F, q->dt, obase ? obase[j] : q->ptr, idx));
  }
}

/* The loop's induction variable i (a phi from `from` at `start`) and the
 * back edge to body while i + 1 < limit, carrying `md` (may be NULL). */
static void fz_latch(fz_fn *F, LLVMValueRef phi, LLVMBasicBlockRef body, LLVMBasicBlockRef out, LLVMValueRef limit,
                     LLVMValueRef md) {
  LLVMValueRef next = LLVMBuildAdd(F->b, phi, fz_ci(F, 1), "");
  LLVMValueRef br = LLVMBuildCondBr(F->b, LLVMBuildICmp(F->b, LLVMIntSLT, next, limit, ""), body, out);
  if (md)
    LLVMSetMetadata(br, F->md_loop, md);
  LLVMBasicBlockRef cur = LLVMGetInsertBlock(F->b);
  LLVMAddIncoming(phi, &next, &cur, 1);
}

/* Sets the inputs' values for one element: contiguous (idx), strided with
 * unit stride (unit) or with each input's stride, or the row's value of
 * inputs constant along the last dimension. */
static void fz_load_inputs(fz_fn *F, const fz_k *K, LLVMValueRef idx, int mode) {
  for (uint32_t k = 0; k < K->nin; k++) {
    const fz_io *q = &K->io[k];
    if (!q->used)
      continue;
    LLVMValueRef v;
    if (!q->tensor)
      v = q->scalar;
    else if (mode == 0)
      v = fz_load(F, q->dt, fz_gep(F, q->dt, q->ptr, idx), true);
    else if (q->bcast_last)
      v = q->row;
    else if (mode == 1)
      v = fz_load(F, q->dt, fz_gep(F, q->dt, q->base, idx), true);
    else
      v = fz_load(F, q->dt, fz_gep(F, q->dt, q->base, LLVMBuildMul(F->b, idx, q->inner, "")), true);
    F->vals[q->v->id] = v;
  }
}

/* The contiguous loop: elements [begin, end). */
static void fz_emit_contig(fz_fn *F, const fz_k *K, LLVMValueRef begin, LLVMValueRef end, LLVMBasicBlockRef exit) {
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(F->m->ctx, F->fn, "contig");
  LLVMBuildCondBr(F->b, LLVMBuildICmp(F->b, LLVMIntSLT, begin, end, ""), body, exit);
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(F->b);
  LLVMPositionBuilderAtEnd(F->b, body);
  LLVMValueRef i = LLVMBuildPhi(F->b, F->m->t_i64, "i");
  LLVMAddIncoming(i, &begin, &pre, 1);
  fz_load_inputs(F, K, i, 0);
  fz_emit_element(F, K, NULL, i);
  fz_latch(F, i, body, exit, end, F->group ? fz_loop_md(F) : NULL);
}

/* The strided loop: rows [begin, end), each an inner loop over the last
 * dimension, versioned on unit strides. */
static void fz_emit_strided(fz_fn *F, const fz_k *K, LLVMValueRef kargs_strides, LLVMValueRef begin,
                            LLVMValueRef end, LLVMBasicBlockRef exit) {
  LLVMBuilderRef B = F->b;
  int32_t nd = K->nd;
  int64_t last = nd > 0 ? K->sizes[nd - 1] : 1;
  /* strides[k * nd + d] of the tensor inputs that vary along d */
  LLVMValueRef *st = calloc((size_t)K->nin * (size_t)(nd > 0 ? nd : 1), sizeof *st);
  if (!st) {
    ts_diag_error(F->d, "out of memory");
    fz_fail(F);
    LLVMBuildBr(B, exit);
    return;
  }
  bool need_unit = false;
  for (uint32_t k = 0; k < K->nin; k++) {
    fz_io *q = &K->io[k];
    if (!q->used || !q->tensor)
      continue;
    int32_t lead = nd - q->rank;
    for (int32_t d = 0; d < nd; d++) {
      /* dimensions the input is broadcast along (known from the sizes)
       * have stride 0 */
      if (K->sizes[d] == 1 || d < lead || q->isz[d - lead] == 1)
        continue;
      LLVMValueRef ix = fz_ci(F, (int64_t)k * nd + d);
      st[(size_t)k * (size_t)nd + (size_t)d] =
          LLVMBuildLoad2(B, F->m->t_i64, LLVMBuildInBoundsGEP2(B, F->m->t_i64, kargs_strides, &ix, 1, ""), "");
    }
    if (nd > 0 && !q->bcast_last) {
      q->inner = st[(size_t)k * (size_t)nd + (size_t)(nd - 1)];
      need_unit = need_unit || last > 1;
    }
  }
  LLVMBasicBlockRef rows = LLVMAppendBasicBlockInContext(F->m->ctx, F->fn, "row");
  LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntSLT, begin, end, ""), rows, exit);
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(B);
  LLVMPositionBuilderAtEnd(B, rows);
  LLVMValueRef r = LLVMBuildPhi(B, F->m->t_i64, "r");
  LLVMAddIncoming(r, &begin, &pre, 1);
  /* the row's index along each outer dimension */
  LLVMValueRef idx[FZ_MAXDIM];
  LLVMValueRef rem = r;
  for (int32_t d = nd - 2; d >= 0; d--) {
    idx[d] = NULL;
    if (K->sizes[d] == 1)
      continue;
    LLVMValueRef sz = fz_ci(F, K->sizes[d]);
    idx[d] = d == 0 ? rem : LLVMBuildURem(B, rem, sz, "");
    if (d > 0)
      rem = LLVMBuildUDiv(B, rem, sz, "");
  }
  LLVMValueRef *obase = calloc(K->nout, sizeof *obase);
  if (!obase) {
    free(st);
    ts_diag_error(F->d, "out of memory");
    fz_fail(F);
    LLVMBuildBr(B, exit);
    return;
  }
  for (uint32_t k = 0; k < K->nin; k++) {
    fz_io *q = &K->io[k];
    if (!q->used || !q->tensor)
      continue;
    LLVMValueRef off = NULL;
    for (int32_t d = 0; d < nd - 1; d++) {
      LLVMValueRef s = st[(size_t)k * (size_t)nd + (size_t)d];
      if (!idx[d] || !s)
        continue;
      LLVMValueRef t = LLVMBuildMul(B, idx[d], s, "");
      off = off ? LLVMBuildAdd(B, off, t, "") : t;
    }
    q->base = off ? fz_gep(F, q->dt, q->ptr, off) : q->ptr;
    if (q->bcast_last)
      q->row = fz_load(F, q->dt, q->base, false);
  }
  LLVMValueRef ooff = last == 1 ? r : LLVMBuildMul(B, r, fz_ci(F, last), "");
  for (uint32_t j = 0; j < K->nout; j++) {
    const fz_io *q = &K->io[K->nin + j];
    obase[j] = fz_gep(F, q->dt, q->ptr, ooff);
  }
  LLVMBasicBlockRef latch = LLVMAppendBasicBlockInContext(F->m->ctx, F->fn, "row.next");
  LLVMBasicBlockRef general = LLVMAppendBasicBlockInContext(F->m->ctx, F->fn, "inner");
  LLVMValueRef zero = fz_ci(F, 0), lim = fz_ci(F, last);
  if (need_unit) {
    LLVMValueRef unit = NULL;
    for (uint32_t k = 0; k < K->nin; k++) {
      const fz_io *q = &K->io[k];
      if (!q->used || !q->tensor || q->bcast_last || !q->inner)
        continue;
      LLVMValueRef c = LLVMBuildICmp(B, LLVMIntEQ, q->inner, fz_ci(F, 1), "");
      unit = unit ? LLVMBuildAnd(B, unit, c, "") : c;
    }
    LLVMBasicBlockRef ub = LLVMAppendBasicBlockInContext(F->m->ctx, F->fn, "inner.unit");
    LLVMBuildCondBr(B, unit, ub, general);
    LLVMBasicBlockRef from = LLVMGetInsertBlock(B);
    LLVMPositionBuilderAtEnd(B, ub);
    LLVMValueRef j = LLVMBuildPhi(B, F->m->t_i64, "j");
    LLVMAddIncoming(j, &zero, &from, 1);
    fz_load_inputs(F, K, j, 1);
    fz_emit_element(F, K, obase, j);
    fz_latch(F, j, ub, latch, lim, F->group ? fz_loop_md(F) : NULL);
    LLVMPositionBuilderAtEnd(B, general);
    LLVMValueRef jg = LLVMBuildPhi(B, F->m->t_i64, "j");
    LLVMAddIncoming(jg, &zero, &from, 1);
    fz_load_inputs(F, K, jg, 2);
    fz_emit_element(F, K, obase, jg);
    fz_latch(F, jg, general, latch, lim, F->group ? fz_loop_md(F) : NULL);
  } else {
    LLVMBuildBr(B, general);
    LLVMBasicBlockRef from = LLVMGetInsertBlock(B);
    LLVMPositionBuilderAtEnd(B, general);
    LLVMValueRef jg = LLVMBuildPhi(B, F->m->t_i64, "j");
    LLVMAddIncoming(jg, &zero, &from, 1);
    fz_load_inputs(F, K, jg, 2);
    fz_emit_element(F, K, obase, jg);
    fz_latch(F, jg, general, latch, lim, F->group && last > 1 ? fz_loop_md(F) : NULL);
  }
  LLVMPositionBuilderAtEnd(B, latch);
  fz_latch(F, r, rows, exit, end, NULL);
  free(obase);
  free(st);
}

/* --------------------------------------------------------------- GPU loop */

/* Whether the module is for NVPTX; else GPU kernels are built for the
 * host, for the unit tests to run them (tests/unit/test_cg_nvptx.c). */
static bool fz_nvptx(const ts_cg_module *m) { return strncmp(LLVMGetTarget(m->mod), "nvptx", 5) == 0; }

/* An NVPTX special register's x (reg: "tid", "ntid", "ctaid", "nctaid"),
 * an i32. On the host: element 0..3 (tid, ntid, ctaid, nctaid) of the
 * module's [4 x i32] TS_CG_GPU_EMU_SREG when it has one (nvptx.c's
 * emulated kernels, whose wrapper sets it), else a call of the external
 * `i32 tsaot_gpu_tid_x()` ... */
static LLVMValueRef fz_sreg(fz_fn *F, const char *reg) {
  char name[48];
  LLVMTypeRef fty;
  LLVMValueRef fn;
  LLVMValueRef emu = fz_nvptx(F->m) ? NULL : LLVMGetNamedGlobal(F->m->mod, TS_CG_GPU_EMU_SREG);
  if (emu) {
    static const char *const regs[4] = {"tid", "ntid", "ctaid", "nctaid"};
    unsigned r = 0;
    while (r < 3 && strcmp(regs[r], reg))
      r++;
    LLVMValueRef idx[2] = {LLVMConstInt(F->m->t_i32, 0, 0), LLVMConstInt(F->m->t_i32, r, 0)};
    LLVMTypeRef aty = LLVMArrayType(F->m->t_i32, 4);
    return LLVMBuildLoad2(F->b, F->m->t_i32, LLVMBuildInBoundsGEP2(F->b, aty, emu, idx, 2, ""), reg);
  }
  if (fz_nvptx(F->m)) {
    snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s.x", reg);
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    fn = LLVMGetIntrinsicDeclaration(F->m->mod, id, NULL, 0);
    fty = LLVMIntrinsicGetType(F->m->ctx, id, NULL, 0);
  } else {
    snprintf(name, sizeof name, "tsaot_gpu_%s_x", reg);
    fty = LLVMFunctionType(F->m->t_i32, NULL, 0, 0);
    fn = ts_cg_module_extern(F->m, name, fty);
  }
  return LLVMBuildCall2(F->b, fty, fn, NULL, 0, "");
}

/* Where tensor input q's element for output element i lies: q is
 * contiguous in its own sizes, broadcast to the output's (right-aligned);
 * i split by the output's sizes (constant divisors), dimensions where
 * either side is 1 skipped. i itself when the sizes are the output's. */
static LLVMValueRef fz_gpu_offset(fz_fn *F, const fz_k *K, const fz_io *q, LLVMValueRef i, LLVMTypeRef it) {
  LLVMBuilderRef B = F->b;
  int32_t lead = K->nd - q->rank;
  bool same = lead == 0;
  for (int32_t d = 0; same && d < K->nd; d++)
    same = q->isz[d] == K->sizes[d];
  if (same)
    return i;
  LLVMValueRef off = NULL, rem = i;
  int64_t stride = 1; /* q's stride along dimension d */
  for (int32_t d = K->nd - 1; d >= lead && d >= 0; d--) {
    int64_t isz = q->isz[d - lead], osz = K->sizes[d];
    if (osz == 1)
      continue;
    LLVMValueRef sz = LLVMConstInt(it, (unsigned long long)osz, 0);
    if (isz != 1) {
      LLVMValueRef idx = d == 0 ? rem : LLVMBuildURem(B, rem, sz, "");
      LLVMValueRef t = stride == 1 ? idx : LLVMBuildMul(B, idx, LLVMConstInt(it, (unsigned long long)stride, 0), "");
      off = off ? LLVMBuildAdd(B, off, t, "") : t;
    }
    if (d > lead)
      rem = LLVMBuildUDiv(B, rem, sz, "");
    stride *= isz;
  }
  return off ? off : LLVMConstInt(it, 0, 0);
}

/* The GPU kernel's loop: a grid-stride loop over the output's n elements,
 * i = ctaid.x * ntid.x + tid.x, then by nctaid.x * ntid.x while i < n, in
 * i64 or (index64 false: the caller checked that n plus one stride fits)
 * i32. */
static void fz_emit_gpu(fz_fn *F, const fz_k *K, int64_t n, bool index64, LLVMBasicBlockRef exit) {
  LLVMBuilderRef B = F->b;
  LLVMTypeRef it = index64 ? F->m->t_i64 : F->m->t_i32;
  LLVMValueRef tid = fz_sreg(F, "tid");
  LLVMValueRef ntid = fz_sreg(F, "ntid");
  LLVMValueRef ctaid = fz_sreg(F, "ctaid");
  LLVMValueRef nctaid = fz_sreg(F, "nctaid");
  if (index64) {
    tid = LLVMBuildZExt(B, tid, it, "");
    ntid = LLVMBuildZExt(B, ntid, it, "");
    ctaid = LLVMBuildZExt(B, ctaid, it, "");
    nctaid = LLVMBuildZExt(B, nctaid, it, "");
  }
  LLVMValueRef i0 = LLVMBuildNUWAdd(B, LLVMBuildNUWMul(B, ctaid, ntid, ""), tid, "");
  LLVMValueRef step = LLVMBuildNUWMul(B, ntid, nctaid, "");
  LLVMValueRef lim = LLVMConstInt(it, (unsigned long long)n, 0);
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(F->m->ctx, F->fn, "grid");
  LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntULT, i0, lim, ""), body, exit);
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(B);
  LLVMPositionBuilderAtEnd(B, body);
  LLVMValueRef i = LLVMBuildPhi(B, it, "i");
  LLVMAddIncoming(i, &i0, &pre, 1);
  for (uint32_t k = 0; k < K->nin; k++) {
    const fz_io *q = &K->io[k];
    if (!q->used)
      continue;
    F->vals[q->v->id] = q->tensor ? fz_load(F, q->dt, fz_gep(F, q->dt, q->ptr, fz_gpu_offset(F, K, q, i, it)), false)
                                  : q->scalar;
  }
  fz_emit_element(F, K, NULL, i);
  LLVMValueRef next = LLVMBuildNUWAdd(B, i, step, "");
  LLVMBuildCondBr(B, LLVMBuildICmp(B, LLVMIntULT, next, lim, ""), body, exit);
  LLVMBasicBlockRef cur = LLVMGetInsertBlock(B);
  LLVMAddIncoming(i, &next, &cur, 1);
}

/* ------------------------------------------------------------- the kernel */

/* The group's subgraph when its signature matches the node's. */
static ts_graph *fz_subgraph(const ts_node *g, ts_diag *d) {
  if (!ts_node_is(g, TS_K_prim_FusionGroup)) {
    ts_diag_error(d, "%s is not a prim::FusionGroup", g->kind_name ? g->kind_name : "node");
    return NULL;
  }
  const ts_attr *a = ts_node_attr(g, "Subgraph");
  if (!a || a->kind != TS_ATTR_GRAPH || !a->u.g || ts_block_ninputs(a->u.g->block) != g->ninputs ||
      ts_block_noutputs(a->u.g->block) != g->noutputs || g->nblocks) {
    ts_diag_error(d, "prim::FusionGroup: malformed Subgraph");
    return NULL;
  }
  if (g->noutputs == 0) {
    ts_diag_error(d, "prim::FusionGroup: no outputs");
    return NULL;
  }
  return a->u.g;
}

/* Whether a tensor of `rank` dims `sz` broadcasts to the output's shape. */
static bool fz_broadcasts(int32_t rank, const int64_t *sz, int32_t nd, const int64_t *out) {
  if (rank > nd)
    return false;
  for (int32_t i = 0; i < rank; i++) {
    int64_t s = sz[i], o = out[nd - rank + i];
    if (s != o && s != 1)
      return false;
  }
  return true;
}

/* Checks and plans the whole subgraph: infos by value id, plans by node;
 * the nodes first, so that an op the table lacks is the reason given. */
static bool fz_plan_group(const ts_node *group, ts_graph *sub, fz_k *K, fz_vi *vi, fz_plan *plans, ts_diag *d) {
  const ts_block *blk = sub->block;
  for (uint32_t i = 0; i < ts_block_ninputs(blk); i++) {
    const ts_value *v = ts_block_input(blk, i);
    vi[v->id] = fz_info(v);
  }
  size_t i = 0;
  for (const ts_node *n = ts_block_first(blk); n != blk->ret; n = n->next, i++) {
    for (uint32_t k = 0; k < n->noutputs; k++)
      vi[n->outputs[k]->id] = fz_info(n->outputs[k]);
    if (ts_node_is(n, TS_K_prim_Constant)) {
      if (n->noutputs != 1 || !vi[n->outputs[0]->id].cst) {
        ts_diag_error(d, "prim::Constant: no lowering for a constant that is not a number, bool, None or string");
        return false;
      }
      continue;
    }
    if (!fz_plan_node(n, &plans[i], d))
      return false;
  }
  /* the output shape */
  const ts_value *o0 = ts_block_output(blk, 0);
  if (!fz_tensor_complete(o0->type)) {
    ts_diag_error(d, "prim::FusionGroup: output 0 has no complete tensor type (dtype and sizes)");
    return false;
  }
  K->nd = o0->type->tensor->rank;
  K->sizes = o0->type->tensor->sizes;
  K->nin = group->ninputs;
  K->nout = group->noutputs;
  for (uint32_t j = 0; j < K->nout; j++) {
    const ts_value *o = ts_block_output(blk, j);
    const ts_tensor_info *ti = fz_tensor_complete(o->type) ? o->type->tensor : NULL;
    if (!ti || ti->rank != K->nd || (K->nd > 0 && memcmp(ti->sizes, K->sizes, (size_t)K->nd * sizeof *K->sizes))) {
      ts_diag_error(d, "prim::FusionGroup: output %u has no complete type or other sizes than output 0", j);
      return false;
    }
    if (!fz_dt_ok((ts_dtype)ti->dtype)) {
      ts_diag_error(d, "prim::FusionGroup: no lowering for dtype %s", fz_dt_name((ts_dtype)ti->dtype));
      return false;
    }
  }
  for (uint32_t k = 0; k < K->nin; k++) {
    const ts_value *v = ts_block_input(blk, k);
    const fz_vi *x = &vi[v->id];
    if (!v->nuses)
      continue;
    if (x->cls == FZ_V_TENSOR) {
      const ts_tensor_info *ti = v->type->tensor;
      if (!fz_dt_ok((ts_dtype)ti->dtype)) {
        ts_diag_error(d, "prim::FusionGroup: no lowering for dtype %s", fz_dt_name((ts_dtype)ti->dtype));
        return false;
      }
      if (!fz_broadcasts(ti->rank, ti->sizes, K->nd, K->sizes)) {
        ts_diag_error(d, "prim::FusionGroup: input %u does not broadcast to the output's shape", k);
        return false;
      }
    } else if (x->cls != FZ_V_SCALAR) {
      ts_diag_error(d, "prim::FusionGroup: input %u is not a tensor of complete type, an int, a float or a bool", k);
      return false;
    }
  }
  return true;
}

/* The GPU kernel's function: `void NAME(...)`, one parameter per group
 * input then output: a tensor's global pointer, an int as i64, a float as
 * double, a bool as i8; an unused input a pointer (NULL). External, for
 * nvptx.c to mark as a kernel; kinds[k] says which (TS_RT_CUDA_PARAM_*). */
static LLVMValueRef fz_gpu_function(ts_cg_module *m, const ts_block *blk, const fz_vi *vi, const fz_k *K,
                                    const char *name, uint8_t *kinds) {
  uint32_t np = K->nin + K->nout;
  LLVMTypeRef *pt = calloc(np ? np : 1, sizeof *pt);
  if (!pt)
    return NULL;
  LLVMTypeRef gptr = fz_nvptx(m) ? LLVMPointerTypeInContext(m->ctx, 1) : m->t_ptr; /* global memory */
  for (uint32_t k = 0; k < np; k++) {
    const ts_value *v = k < K->nin ? ts_block_input(blk, k) : ts_block_output(blk, k - K->nin);
    const fz_vi *x = &vi[v->id];
    uint8_t kind = TS_RT_CUDA_PARAM_TENSOR;
    if (k < K->nin && !v->nuses)
      kind = TS_RT_CUDA_PARAM_UNUSED;
    else if (x->cls == FZ_V_SCALAR)
      kind = x->dt == TS_DT_FLOAT64 ? TS_RT_CUDA_PARAM_F64 : x->dt == TS_DT_BOOL ? TS_RT_CUDA_PARAM_BOOL
                                                                              : TS_RT_CUDA_PARAM_I64;
    pt[k] = kind == TS_RT_CUDA_PARAM_F64 ? m->t_f64 : kind == TS_RT_CUDA_PARAM_BOOL ? m->t_i8
            : kind == TS_RT_CUDA_PARAM_I64 ? m->t_i64 : gptr;
    if (kinds)
      kinds[k] = kind;
  }
  LLVMValueRef fn = LLVMAddFunction(m->mod, name, LLVMFunctionType(m->t_void, pt, np, 0));
  free(pt);
  return fn;
}

/* The kernel for the CPU (gpu NULL) or the GPU (ts_cg_fusion_kernel_gpu):
 * one planning and one element lowering; the signature, the operands'
 * prologue and the loops differ. */
static LLVMValueRef fz_build(ts_cg_module *m, const ts_node *group, const char *name, const ts_cg_gpu_kernel *gpu,
                             uint8_t *kinds, ts_diag *d) {
  ts_graph *sub = fz_subgraph(group, d);
  if (!sub)
    return NULL;
  if (LLVMGetNamedFunction(m->mod, name)) {
    ts_diag_error(d, "prim::FusionGroup: a function named %s exists already", name);
    return NULL;
  }
  const ts_block *blk = sub->block;
  size_t nnodes = 0;
  for (const ts_node *n = ts_block_first(blk); n != blk->ret; n = n->next)
    nnodes++;
  fz_vi *vi = calloc(sub->next_value_id ? sub->next_value_id : 1, sizeof *vi);
  fz_plan *plans = calloc(nnodes ? nnodes : 1, sizeof *plans);
  LLVMValueRef *vals = calloc(sub->next_value_id ? sub->next_value_id : 1, sizeof *vals);
  fz_io *io = calloc((size_t)group->ninputs + group->noutputs, sizeof *io);
  fz_k K = {0, NULL, 0, 0, io};
  LLVMValueRef fn = NULL;
  if (!vi || !plans || !vals || !io) {
    ts_diag_error(d, "out of memory");
    goto done;
  }
  if (!fz_plan_group(group, sub, &K, vi, plans, d))
    goto done;

  if (gpu) {
    fn = fz_gpu_function(m, blk, vi, &K, name, kinds);
    if (!fn) {
      ts_diag_error(d, "out of memory");
      goto done;
    }
  } else {
    /* void NAME(const ts_cg_kargs *a, int64_t begin, int64_t end) */
    LLVMTypeRef params[3] = {m->t_ptr, m->t_i64, m->t_i64};
    LLVMTypeRef fty = LLVMFunctionType(m->t_void, params, 3, 0);
    fn = LLVMAddFunction(m->mod, name, fty);
    LLVMSetLinkage(fn, LLVMPrivateLinkage);
  }
  unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(m->ctx, nounwind, 0));
  LLVMBuilderRef b = LLVMCreateBuilderInContext(m->ctx);
  fz_fn F = {.m = m, .b = b, .fn = fn, .d = d, .body = blk, .vi = vi, .plans = plans, .vals = vals};
  F.group = gpu ? NULL : fz_access_group(m->ctx);
  F.md_group = LLVMGetMDKindIDInContext(m->ctx, "llvm.access.group", 17);
  F.md_loop = LLVMGetMDKindIDInContext(m->ctx, "llvm.loop", 9);

  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(m->ctx, fn, "entry");
  LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(m->ctx, fn, "exit");
  LLVMPositionBuilderAtEnd(b, entry);
  LLVMValueRef ptrs = NULL, strides = NULL, contig = NULL, begin = NULL, end = NULL;
  if (!gpu) {
    LLVMValueRef kargs = LLVMGetParam(fn, 0);
    begin = LLVMGetParam(fn, 1);
    end = LLVMGetParam(fn, 2);
    LLVMTypeRef kfields[3] = {m->t_ptr, m->t_ptr, m->t_i64};
    LLVMTypeRef kty = LLVMStructTypeInContext(m->ctx, kfields, 3, 0);
    ptrs = LLVMBuildLoad2(b, m->t_ptr, LLVMBuildStructGEP2(b, kty, kargs, 0, ""), "ptrs");
    strides = LLVMBuildLoad2(b, m->t_ptr, LLVMBuildStructGEP2(b, kty, kargs, 1, ""), "strides");
    contig = LLVMBuildLoad2(b, m->t_i64, LLVMBuildStructGEP2(b, kty, kargs, 2, ""), "contig");
  }
  bool empty = false;
  for (int32_t i = 0; i < K.nd; i++)
    empty = empty || K.sizes[i] == 0;
  for (uint32_t k = 0; k < K.nin + K.nout; k++) {
    fz_io *q = &io[k];
    q->v = k < K.nin ? ts_block_input(blk, k) : ts_block_output(blk, k - K.nin);
    const fz_vi *x = &vi[q->v->id];
    q->used = k >= K.nin || q->v->nuses > 0;
    if (!q->used)
      continue;
    q->dt = (ts_dtype)x->dt;
    q->tensor = x->cls == FZ_V_TENSOR;
    if (gpu) {
      /* tensors by pointer, scalars by value */
      q->ptr = q->tensor ? LLVMGetParam(fn, k) : NULL;
      q->scalar = q->tensor ? NULL : LLVMGetParam(fn, k);
    } else {
      LLVMValueRef ix = fz_ci(&F, k);
      q->ptr = LLVMBuildLoad2(b, m->t_ptr, LLVMBuildInBoundsGEP2(b, m->t_ptr, ptrs, &ix, 1, ""), "");
    }
    if (!q->tensor) {
      /* int64_t, double, or bool as one byte */
      LLVMTypeRef st = x->dt == TS_DT_FLOAT64 ? m->t_f64 : x->dt == TS_DT_BOOL ? m->t_i8 : m->t_i64;
      if (!gpu)
        q->scalar = LLVMBuildLoad2(b, st, q->ptr, "");
      if (x->dt == TS_DT_BOOL)
        q->scalar = LLVMBuildICmp(b, LLVMIntNE, q->scalar, LLVMConstInt(m->t_i8, 0, 0), "");
    } else if (k < K.nin) {
      q->rank = x->rank;
      q->isz = q->v->type->tensor->sizes;
      q->bcast_last = K.nd == 0 || q->rank == 0 || q->isz[q->rank - 1] == 1;
    }
  }
  if (empty) {
    LLVMBuildBr(b, exit);
  } else if (gpu) {
    fz_emit_gpu(&F, &K, gpu->nelems, gpu->index64, exit);
  } else {
    LLVMBasicBlockRef cb = LLVMAppendBasicBlockInContext(m->ctx, fn, "contig.pre");
    LLVMBasicBlockRef sb = LLVMAppendBasicBlockInContext(m->ctx, fn, "strided.pre");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, contig, fz_ci(&F, 0), ""), cb, sb);
    LLVMPositionBuilderAtEnd(b, cb);
    fz_emit_contig(&F, &K, begin, end, exit);
    LLVMPositionBuilderAtEnd(b, sb);
    fz_emit_strided(&F, &K, strides, begin, end, exit);
  }
  LLVMPositionBuilderAtEnd(b, exit);
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  if (!F.failed && LLVMVerifyFunction(fn, LLVMReturnStatusAction)) {
    ts_diag_error(d, "prim::FusionGroup: the kernel %s does not verify (a code generator bug)", name);
    F.failed = true;
  }
  if (F.failed) {
    LLVMDeleteFunction(fn);
    fn = NULL;
  }
done:
  free(io);
  free(vals);
  free(plans);
  free(vi);
  return fn;
}

LLVMValueRef ts_cg_fusion_kernel(ts_cg_module *m, const ts_node *group, const char *name, ts_diag *d) {
  return fz_build(m, group, name, NULL, NULL, d);
}

uint32_t ts_cg_fusion_kernels(ts_cg_module *m, const ts_node *group, const char *name, LLVMValueRef *out,
                              ts_diag *d) {
  if (m->nlevels <= 1) {
    out[0] = fz_build(m, group, name, NULL, NULL, d);
    return out[0] ? 1 : 0;
  }
  /* lowered again per copy (no function cloning in the C API); the
   * always-inline math functions inline into each (their callers' features
   * are a superset of the module's) */
  for (uint32_t i = 0; i < m->nlevels; i++) {
    const char *cpu = ts_cg_module_level_cpu(m, i), *v = strrchr(cpu, '-'); /* x86-64-v3: .v3 */
    char nm[160];
    snprintf(nm, sizeof nm, "%s.%s", name, v ? v + 1 : cpu);
    out[i] = fz_build(m, group, nm, NULL, NULL, d);
    if (!out[i]) {
      while (i--)
        LLVMDeleteFunction(out[i]);
      return 0;
    }
    ts_cg_module_set_level(m, out[i], i);
  }
  return m->nlevels;
}

LLVMValueRef ts_cg_fusion_kernel_gpu(ts_cg_module *m, const ts_node *group, const char *name,
                                     const ts_cg_gpu_kernel *k, uint8_t *param_kinds, ts_diag *d) {
  return fz_build(m, group, name, k, param_kinds, d);
}
